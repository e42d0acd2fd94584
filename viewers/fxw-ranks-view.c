/* fxw-ranks-view.c: the Ranks view. The ranks of a distributed run (one TORCH_TRACE per rank) and where they diverge,
 * from fx_ranks_diverge as `fxwb diff WORKSPACE --ranks` prints it: compiles some ranks made and others did not,
 * graphs, guards, cache results or collectives that differ for the same compile id. A divergence between two ranks'
 * compiles has a Compare button per rank it names (compare-compiles: the window diffs them in the Diff view); a
 * compile some ranks alone made has a Show button per rank (compile-activated: the window selects it). The
 * workspace is read in a thread. */
#define G_LOG_DOMAIN "fxw-ranks-view"

#include "fx-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

#include "fx/ranks.h"
#include "fx/store.h"
#include "fxw-ranks-view.h"
#include "fxw-viewers.h"

typedef struct
{
  int rank;
  gint64 row;          /* the rank's compile of this id (0: it has none) */
} Target;

typedef struct
{
  fx_rank_div_kind kind;
  const char *compile_id, *ranks, *detail;
  int ref_rank;
  gint64 ref_row;
  GArray *targets;     /* Target: the ranks named, with their compiles */
} Div;

typedef struct
{
  int rank;
  const char *path;
  guint n_compiles;
} Rank;

typedef struct
{
  GArray *ranks;       /* Rank */
  GArray *divs;        /* Div */
} RanksData;           /* the strings of both are in the read's arena, as the store's reads returned them */

struct _FxwRanksView
{
  FxwWorkspacePage parent_instance;

  guint n_ranks, n_divs;     /* its links: each divergence's first button, by the divergence's index ("0") */
};

G_DEFINE_FINAL_TYPE (FxwRanksView, fxw_ranks_view, FXW_TYPE_WORKSPACE_PAGE)

enum { SIGNAL_COMPARE_COMPILES, SIGNAL_COMPILE_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
div_clear (gpointer data)
{
  g_clear_pointer (&((Div *) data)->targets, g_array_unref);
}

static void
ranks_data_free (RanksData *data)
{
  g_array_unref (data->ranks);
  g_array_unref (data->divs);
  g_free (data);
}

/* ---------------------------------------------------------------- reading (worker thread) */

/* The page's read (FxwWorkspacePageClass.read). */
static gpointer
ranks_read (const char *path, fx_arena *arena, GCancellable *cancellable, GError **error)
{
  fx_store *store = NULL;
  fx_rank_input *ranks = NULL;
  fx_rank_divergence *ds = NULL;
  fx_store_compile *cs = NULL;
  size_t nr = 0, nd = 0, nc = 0;
  fx_diag diag;
  RanksData *data = NULL;

  fx_diag_clear (&diag);
  if (fx_store_open_readonly (path, &store, &diag) != FX_OK)
    goto fail;
  if (fx_ranks_list (store, arena, &ranks, &nr, &diag) != FX_OK
      || fx_ranks_diverge (store, arena, &ds, &nd, &diag) != FX_OK
      || fx_store_list_compiles (store, arena, &cs, &nc, &diag) != FX_OK)
    goto fail;
  data = g_new0 (RanksData, 1);
  data->ranks = g_array_new (FALSE, TRUE, sizeof (Rank));
  data->divs = g_array_new (FALSE, TRUE, sizeof (Div));
  g_array_set_clear_func (data->divs, div_clear);
  for (size_t r = 0; r < nr; r++)
    {
      g_autofree char *base = g_path_get_basename (ranks[r].path ? ranks[r].path : "");
      Rank rk = { .rank = ranks[r].rank, .path = fx_arena_strdup (arena, base) };

      for (size_t c = 0; c < nc; c++)
        rk.n_compiles += cs[c].input_id == ranks[r].input_id;
      g_array_append_val (data->ranks, rk);
    }
  for (size_t i = 0; i < nd; i++)
    {
      Div d = { .kind = ds[i].kind, .compile_id = ds[i].compile_id, .ranks = ds[i].ranks,
                .detail = ds[i].detail, .ref_rank = ds[i].ref_rank, .ref_row = ds[i].ref_compile_row };
      /* ds[i].ranks: "rank 3" or "ranks 1, 3" */
      const char *list = strchr (ds[i].ranks, ' ');
      g_auto(GStrv) parts = g_strsplit (list != NULL ? list + 1 : "", ", ", -1);

      d.targets = g_array_new (FALSE, TRUE, sizeof (Target));
      for (int k = 0; parts[k] != NULL; k++)
        {
          Target t = { .rank = atoi (parts[k]), .row = 0 };

          for (size_t r = 0; r < nr && t.row == 0; r++)
            if (ranks[r].rank == t.rank)
              for (size_t c = 0; c < nc && t.row == 0; c++)
                if (cs[c].input_id == ranks[r].input_id && strcmp (cs[c].compile_id, ds[i].compile_id) == 0)
                  t.row = cs[c].id;
          g_array_append_val (d.targets, t);
        }
      g_array_append_val (data->divs, d);
    }
  fx_store_close (store);
  return data;

fail:
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", diag.message);
  if (store != NULL)
    fx_store_close (store);
  return NULL;
}

/* ---------------------------------------------------------------- building the page */

static void
clear_page (FxwWorkspacePage *page)
{
  FxwRanksView *self = FXW_RANKS_VIEW (page);

  self->n_ranks = self->n_divs = 0;
}

/* The title of each kind of divergence. */
static const char *const kind_titles[] = {
  /* translators: a kind of divergence between ranks: a compile only some ranks made */
  [FX_RANK_DIV_COMPILES] = N_("Compiles"),
  /* translators: a kind of divergence between ranks: the graphs of a compile differ */
  [FX_RANK_DIV_GRAPH] = N_("Graph"),
  [FX_RANK_DIV_GUARDS] = N_("Guards"),
  /* translators: a kind of divergence between ranks: cache hit on one, miss on another */
  [FX_RANK_DIV_CACHE] = N_("Cache"),
  /* translators: a kind of divergence between ranks: collectives issued in another order */
  [FX_RANK_DIV_COLLECTIVES] = N_("Collectives"),
  /* translators: a kind of divergence between ranks: Inductor's runtime estimates differ */
  [FX_RANK_DIV_RUNTIME] = N_("Runtime Estimates"),
};
G_STATIC_ASSERT (G_N_ELEMENTS (kind_titles) == FX_RANK_DIV_COUNT);

static void
compare_clicked_cb (GtkButton *button, FxwRanksView *self)
{
  gint64 *rows = g_object_get_data (G_OBJECT (button), "rows");

  g_signal_emit (self, signals[SIGNAL_COMPARE_COMPILES], 0, rows[0], rows[1],
                 g_object_get_data (G_OBJECT (button), "label-a"), g_object_get_data (G_OBJECT (button), "label-b"));
}

static void
show_clicked_cb (GtkButton *button, FxwRanksView *self)
{
  gint64 *rows = g_object_get_data (G_OBJECT (button), "rows");

  g_signal_emit (self, signals[SIGNAL_COMPILE_ACTIVATED], 0, rows[0]);
}

static GtkWidget *
add_button (GtkBox *box, const char *label, const char *tooltip)
{
  GtkWidget *button = gtk_button_new_with_label (label);

  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (button, tooltip);
  gtk_box_append (box, button);
  return button;
}

static void
add_divergence (FxwRanksView *self, GtkListBox *list, const Div *d, guint index)
{
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *words = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *head = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  g_autofree char *id = g_strdup_printf ("[%s]", d->compile_id);
  GtkWidget *first = NULL;

  gtk_widget_set_margin_start (row, 12);
  gtk_widget_set_margin_end (row, 6);
  gtk_widget_set_margin_top (row, 6);
  gtk_widget_set_margin_bottom (row, 6);
  gtk_widget_set_hexpand (words, TRUE);
  gtk_widget_add_css_class (fxw_viewers_add_label (GTK_BOX (head), id, "heading"), "monospace");
  fxw_viewers_add_label (GTK_BOX (head), d->kind < FX_RANK_DIV_COUNT ? _(kind_titles[d->kind]) : "", "heading");
  fxw_viewers_add_label (GTK_BOX (head), d->ranks, "accent");
  gtk_box_append (GTK_BOX (words), head);
  gtk_widget_add_css_class (fxw_viewers_add_label (GTK_BOX (words), d->detail, "dim-label"), "caption");
  gtk_box_append (GTK_BOX (row), words);
  gtk_box_append (GTK_BOX (row), buttons);
  fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), NULL, "%-8s %-12s %-14s %s", id,
                             fx_rank_div_kind_name (d->kind), d->ranks, d->detail);

  for (guint k = 0; k < d->targets->len; k++)
    {
      const Target *t = &g_array_index (d->targets, Target, k);
      g_autofree char *label = NULL, *tip = NULL;
      GtkWidget *button;
      gint64 *rows;

      if (t->row == 0)
        continue;
      if (d->kind != FX_RANK_DIV_COMPILES && d->ref_row != 0)
        {
          /* translators: a button of the Ranks view: "Compare 0 ↔ 3" diffs rank 0's compile with rank 3's */
          label = g_strdup_printf (_("Compare %d ↔ %d"), d->ref_rank, t->rank);
          /* translators: the tooltip of a Compare button of the Ranks view */
          tip = g_strdup_printf (_("Diff rank %d's compile %s with rank %d's: guards, graph, kernels and code"),
                                 d->ref_rank, id, t->rank);
          button = add_button (GTK_BOX (buttons), label, tip);
          rows = g_new (gint64, 2);
          rows[0] = d->ref_row;
          rows[1] = t->row;
          g_object_set_data_full (G_OBJECT (button), "label-a",
                                  g_strdup_printf (_("rank %d %s"), d->ref_rank, id), g_free);
          g_object_set_data_full (G_OBJECT (button), "label-b", g_strdup_printf (_("rank %d %s"), t->rank, id),
                                  g_free);
          g_signal_connect (button, "clicked", G_CALLBACK (compare_clicked_cb), self);
        }
      else
        {
          /* translators: a button of the Ranks view: shows the compile on rank 1 in the sidebar */
          label = g_strdup_printf (_("Show on Rank %d"), t->rank);
          tip = g_strdup_printf (_("Select rank %d's compile %s"), t->rank, id);
          button = add_button (GTK_BOX (buttons), label, tip);
          rows = g_new (gint64, 1);
          rows[0] = t->row;
          g_signal_connect (button, "clicked", G_CALLBACK (show_clicked_cb), self);
        }
      g_object_set_data_full (G_OBJECT (button), "rows", rows, g_free);
      if (first == NULL)
        first = button;
    }
  /* A compile the named ranks lack: the reference rank has it. */
  if (first == NULL && d->kind == FX_RANK_DIV_COMPILES && d->ref_row != 0)
    {
      g_autofree char *label = g_strdup_printf (_("Show on Rank %d"), d->ref_rank);
      g_autofree char *tip = g_strdup_printf (_("Select rank %d's compile %s"), d->ref_rank, id);
      gint64 *rows = g_new (gint64, 1);

      first = add_button (GTK_BOX (buttons), label, tip);
      rows[0] = d->ref_row;
      g_object_set_data_full (G_OBJECT (first), "rows", rows, g_free);
      g_signal_connect (first, "clicked", G_CALLBACK (show_clicked_cb), self);
    }
  if (first != NULL)
    {
      g_autofree char *key = g_strdup_printf ("%u", index);

      fxw_view_add_link (FXW_VIEW (self), key, first);
    }
  gtk_list_box_append (list, row);
}

static gboolean
show_ranks (FxwWorkspacePage *page, gpointer p)
{
  FxwRanksView *self = FXW_RANKS_VIEW (page);
  const RanksData *data = p;
  GtkWidget *list;
  g_autofree char *title = NULL;

  self->n_ranks = data->ranks->len;
  self->n_divs = data->divs->len;
  if (data->ranks->len < 2)
    return FALSE;
  /* translators: the heading of the Ranks view */
  title = g_strdup_printf (ngettext ("%u Rank", "%u Ranks", data->ranks->len), data->ranks->len);
  fxw_workspace_page_add_line (page, title, "title-2");
  for (guint r = 0; r < data->ranks->len; r++)
    {
      const Rank *rk = &g_array_index (data->ranks, Rank, r);
      /* translators: a line of the Ranks view: "rank 0: 2 compiles  dedicated_log_torch_trace_rank_0_x.log" */
      g_autofree char *line = g_strdup_printf (ngettext ("rank %d: %u compile  %s", "rank %d: %u compiles  %s",
                                                         rk->n_compiles), rk->rank, rk->n_compiles, rk->path);

      fxw_workspace_page_add_line (page, line, NULL);
    }
  if (data->divs->len == 0)
    {
      const char *agree = _("The ranks agree: the same compiles, graphs, guards, cache results, collectives and "
                            "runtime estimates.");

      fxw_workspace_page_add_heading (page, agree);
      return TRUE;
    }
  /* translators: the heading of the list of divergences in the Ranks view */
  fxw_workspace_page_add_heading (page, _("Where the Ranks Diverge"));
  list = gtk_list_box_new ();
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
  gtk_widget_add_css_class (list, "boxed-list");
  for (guint i = 0; i < data->divs->len; i++)
    add_divergence (self, GTK_LIST_BOX (list), &g_array_index (data->divs, Div, i), i);
  fxw_workspace_page_append (page, list, NULL);
  return TRUE;
}

guint
fxw_ranks_view_get_n_ranks (FxwRanksView *self)
{
  g_return_val_if_fail (FXW_IS_RANKS_VIEW (self), 0);
  return self->n_ranks;
}

guint
fxw_ranks_view_get_n_divergences (FxwRanksView *self)
{
  g_return_val_if_fail (FXW_IS_RANKS_VIEW (self), 0);
  return self->n_divs;
}

gboolean
fxw_ranks_view_activate (FxwRanksView *self, guint index)
{
  g_autofree char *key = g_strdup_printf ("%u", index);

  g_return_val_if_fail (FXW_IS_RANKS_VIEW (self), FALSE);
  return fxw_view_activate_link (FXW_VIEW (self), key);
}

static void
fxw_ranks_view_class_init (FxwRanksViewClass *klass)
{
  FxwWorkspacePageClass *page_class = FXW_WORKSPACE_PAGE_CLASS (klass);

  page_class->what = "ranks";
  page_class->read = ranks_read;
  page_class->show = show_ranks;
  page_class->clear = clear_page;
  page_class->free = (GDestroyNotify) ranks_data_free;

  /**
   * FxwRanksView::compare-compiles:
   * @row_a: the reference rank's compile row
   * @row_b: the other rank's compile row
   * @label_a: "rank 0 [1/0]"
   * @label_b: "rank 1 [1/0]"
   */
  signals[SIGNAL_COMPARE_COMPILES] =
    g_signal_new ("compare-compiles", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 4, G_TYPE_INT64, G_TYPE_INT64, G_TYPE_STRING, G_TYPE_STRING);
  /**
   * FxwRanksView::compile-activated:
   * @row: the compile's row in the workspace
   */
  signals[SIGNAL_COMPILE_ACTIVATED] =
    g_signal_new ("compile-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_INT64);

  fxw_workspace_page_class_set_template (GTK_WIDGET_CLASS (klass), "fxw-ranks-view.ui");
}

static void
fxw_ranks_view_init (FxwRanksView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
