/* fxw-summary-view.c: the Summary view. What tlparse's index shows, for the app: how many compiles, breaks,
 * restarts, recompiles and failures; per frame its compiles in the order they happened with, between two of them,
 * the guard that failed (the recompile reason) or the graph break that restarted it; each graph break with the user
 * line that caused it (a click opens it); compile failures; and a table of all compiles. Clicking a compile id
 * emits compile-activated, which the window answers by selecting that compile. The workspace is read in a thread. */
#define G_LOG_DOMAIN "fxw-summary-view"

#include "fx-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <string.h>

#include "fx/export.h"
#include "fx/store.h"
#include "fxw-summary-view.h"
#include "fxw-viewers.h"

/* The table lists this many compiles at most (the sidebar has them all). */
#define MAX_TABLE_ROWS 2000

typedef struct
{
  const char *reason;  /* the first line */
  const char *file;    /* the user line: the innermost frame outside torch; NULL when none */
  int line;
} Break;

typedef struct
{
  char compile_id[48];
  fx_compile_id cid;
  const char *function, *file, *status, *fail_type, *fail_reason;
  int line;
  double start_time, frame_s, backend_s, inductor_s;
  int n_graphs, n_kernels;
  GPtrArray *reasons;  /* char *: "2/0: G['USE_RELU'] == True" (the guard that failed, the compile it failed on) */
  GArray *breaks;      /* Break */
} Entry;

/* A torch.export trace's own record: a guard export added, an unbacked symbol, a draft_export failure. */
typedef struct
{
  const char *kind, *what, *fix;
  const char *file;    /* the user line's file; NULL when none */
  int line;
} ExportRow;

typedef struct
{
  GArray *entries;     /* Entry, in compile order */
  GArray *exports;     /* ExportRow, in file order */
} Summary;             /* the strings of both are in the read's arena, as the store's reads returned them */

struct _FxwSummaryView
{
  FxwWorkspacePage parent_instance;
};

G_DEFINE_FINAL_TYPE (FxwSummaryView, fxw_summary_view, FXW_TYPE_WORKSPACE_PAGE)

enum { SIGNAL_COMPILE_ACTIVATED, SIGNAL_OPEN_LOCATION, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
entry_clear (gpointer data)
{
  Entry *e = data;

  g_clear_pointer (&e->reasons, g_ptr_array_unref);
  g_clear_pointer (&e->breaks, g_array_unref);
}

static void
summary_free (Summary *s)
{
  g_array_unref (s->entries);
  g_array_unref (s->exports);
  g_free (s);
}

static char *
first_line (const char *s)
{
  const char *nl;

  if (s == NULL)
    return NULL;
  while (*s == ' ' || *s == '\n')
    s++;
  nl = strchr (s, '\n');
  return g_strstrip (nl ? g_strndup (s, nl - s) : g_strdup (s));
}

/* The guard of a failure row, without the comment PyTorch prints after it ("# if USE_RELU:  # file:14"). */
static char *
guard_text (const char *reason)
{
  g_autofree char *line = first_line (reason);
  char *hash = line != NULL ? strstr (line, "  #") : NULL;

  if (hash != NULL)
    *hash = '\0';
  return line != NULL ? g_strdup (g_strstrip (line)) : NULL;
}

/* The page's read (FxwWorkspacePageClass.read): a Summary. */
static gpointer
summary_read (const char *path, fx_arena *arena, GCancellable *cancellable, GError **error)
{
  fx_store *store = NULL;
  fx_store_compile *compiles = NULL;
  size_t n = 0;
  fx_diag diag;
  Summary *s;

  fx_diag_clear (&diag);
  if (fx_store_open_readonly (path, &store, &diag) != FX_OK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", diag.message);
      return NULL;
    }
  s = g_new0 (Summary, 1);
  s->entries = g_array_new (FALSE, TRUE, sizeof (Entry));
  g_array_set_clear_func (s->entries, entry_clear);
  s->exports = g_array_new (FALSE, TRUE, sizeof (ExportRow));
  {
    fx_export_entry *es = NULL;
    size_t ne = 0;
    fx_diag ed;

    fx_diag_clear (&ed);
    if (fx_export_entries (store, arena, &es, &ne, &ed) == FX_OK)
      for (size_t i = 0; i < ne && i < MAX_TABLE_ROWS; i++)
        {
          ExportRow r = { es[i].kind, es[i].what, es[i].fix, es[i].user_file, es[i].user_lineno };

          g_array_append_val (s->exports, r);
        }
  }
  if (fx_store_list_compiles (store, arena, &compiles, &n, &diag) != FX_OK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", diag.message);
      n = 0;
    }
  for (size_t i = 0; i < n && !g_cancellable_is_cancelled (cancellable); i++)
    {
      const fx_store_compile *c = &compiles[i];
      fx_store_guard_failure *failures = NULL;
      fx_store_graph_break *breaks = NULL;
      size_t n_failures = 0, n_breaks = 0;
      fx_arena *scratch = fx_arena_new ();
      Entry e = { 0 };

      g_strlcpy (e.compile_id, c->compile_id, sizeof e.compile_id);
      e.cid = c->cid;
      e.function = c->function;
      e.file = c->file;
      e.line = c->line;
      /* a restart of the attempt before it: the same function, which its records often do not repeat */
      if (e.function == NULL && e.cid.attempt > 0 && s->entries->len > 0)
        {
          const Entry *before = &g_array_index (s->entries, Entry, s->entries->len - 1);

          if (before->cid.frame_id == e.cid.frame_id && before->cid.frame_compile_id == e.cid.frame_compile_id)
            {
              e.function = before->function;
              e.file = before->file;
              e.line = before->line;
            }
        }
      e.status = c->status != NULL ? c->status : "";
      e.fail_type = c->fail_type;
      e.fail_reason = c->fail_reason;
      e.start_time = c->start_time;
      e.frame_s = c->entire_frame_compile_s;
      e.backend_s = c->backend_compile_s;
      e.inductor_s = c->inductor_compile_s;
      e.n_graphs = c->n_graphs;
      e.n_kernels = c->n_kernels;
      e.reasons = g_ptr_array_new ();
      e.breaks = g_array_new (FALSE, TRUE, sizeof (Break));
      if (c->n_failures > 0
          && fx_store_list_guard_failures (store, c->id, scratch, &failures, &n_failures, &diag) == FX_OK)
        for (size_t k = 0; k < n_failures; k++)
          if (failures[k].failed_compile != NULL && *failures[k].failed_compile)
            {
              g_autofree char *guard = guard_text (failures[k].reason);

              g_ptr_array_add (e.reasons, fx_arena_printf (arena, "%s: %s", failures[k].failed_compile,
                                                           guard != NULL ? guard : ""));
            }
      if (c->n_breaks > 0 && fx_store_list_graph_breaks (store, c->id, scratch, &breaks, &n_breaks, &diag) == FX_OK)
        for (size_t k = 0; k < n_breaks; k++)
          {
            g_autofree char *reason = first_line (breaks[k].reason);
            Break b = { .reason = fx_arena_strdup (arena, reason) };
            fx_stack_frame frame;

            if (fx_stack_user_frame (breaks[k].user_stack, scratch, &frame))
              {
                b.file = fx_arena_strdup (arena, frame.file);
                b.line = frame.line;
              }
            g_array_append_val (e.breaks, b);
          }
      fx_arena_free (scratch);
      g_array_append_val (s->entries, e);
    }
  fx_store_close (store);
  return s;
}

/* ---------------------------------------------------------------- building the page */

static void
compile_clicked_cb (GtkButton *button, FxwSummaryView *self)
{
  g_signal_emit (self, signals[SIGNAL_COMPILE_ACTIVATED], 0, g_object_get_data (G_OBJECT (button), "compile-id"));
}

static GtkWidget *
compile_button (FxwSummaryView *self, const Entry *e)
{
  g_autofree char *label = g_strdup_printf ("[%s]", e->compile_id);
  GtkWidget *button = gtk_button_new_with_label (label);

  gtk_widget_add_css_class (button, "flat");
  gtk_widget_add_css_class (button, "monospace");
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  /* translators: the tooltip of a compile id in the Summary view */
  gtk_widget_set_tooltip_text (button, _("Show this compile"));
  g_object_set_data_full (G_OBJECT (button), "compile-id", g_strdup (e->compile_id), g_free);
  g_signal_connect (button, "clicked", G_CALLBACK (compile_clicked_cb), self);
  fxw_view_add_link (FXW_VIEW (self), e->compile_id, button);
  return button;
}

/* What a status means, in words (the store says "ok", "graph break", "recompiled", "failed"). */
static const char *
status_words (const char *status, const char **css)
{
  *css = NULL;
  if (g_strcmp0 (status, "ok") == 0)
    {
      *css = "success";
      return _("compiled");
    }
  if (g_strcmp0 (status, "graph break") == 0)
    {
      *css = "warning";
      return _("graph break");
    }
  if (g_strcmp0 (status, "recompiled") == 0)
    {
      *css = "accent";
      return _("recompiled");
    }
  if (g_strcmp0 (status, "failed") == 0)
    {
      *css = "error";
      return _("failed");
    }
  return status != NULL && *status ? status : _("unknown");
}

static char *
format_seconds (double s)
{
  if (s <= 0)
    return g_strdup (C_("time", "—"));
  if (s >= 10)
    return g_strdup_printf ("%.1f s", s);
  if (s >= 0.01)
    return g_strdup_printf ("%.2f s", s);
  return g_strdup_printf ("%.1f ms", s * 1e3);
}

static const char *
basename_of (const char *path)
{
  const char *slash = path != NULL ? strrchr (path, '/') : NULL;

  return slash != NULL ? slash + 1 : path;
}

static void
location_clicked_cb (GtkButton *button, FxwSummaryView *self)
{
  g_signal_emit (self, signals[SIGNAL_OPEN_LOCATION], 0, g_object_get_data (G_OBJECT (button), "file"),
                 GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "line")));
}

static GtkWidget *
location_button (FxwSummaryView *self, const char *file, int line)
{
  g_autofree char *text = g_strdup_printf ("%s:%d", basename_of (file), line);
  GtkWidget *button = gtk_button_new_with_label (text);

  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  g_object_set_data_full (G_OBJECT (button), "file", g_strdup (file), g_free);
  g_object_set_data (G_OBJECT (button), "line", GINT_TO_POINTER (line));
  if (g_file_test (file, G_FILE_TEST_IS_REGULAR))
    {
      g_autofree char *tip = g_strdup_printf (_("Open %s at line %d"), file, line);

      gtk_widget_set_tooltip_text (button, tip);
      g_signal_connect (button, "clicked", G_CALLBACK (location_clicked_cb), self);
    }
  else
    {
      g_autofree char *tip = g_strdup_printf (_("%s:%d (the file is not on this machine)"), file, line);

      gtk_widget_set_tooltip_text (button, tip);
      gtk_widget_set_sensitive (button, FALSE);
    }
  return button;
}

static char *
indent_lines (const char *s)
{
  g_auto (GStrv) lines = g_strsplit (s, "\n", -1);

  return g_strjoinv ("\n    ", lines);
}

static GtkBox *
hbox (int spacing)
{
  return GTK_BOX (gtk_box_new (GTK_ORIENTATION_HORIZONTAL, spacing));
}

static void
add_counts (FxwSummaryView *self, const Summary *s)
{
  guint frames = 0, breaks = 0, restarts = 0, recompiles = 0, failures = 0;
  double frame_s = 0, backend_s = 0, inductor_s = 0;
  g_autoptr(GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autofree char *line1 = NULL, *line2 = NULL, *f = NULL, *b = NULL, *i = NULL;

  for (guint k = 0; k < s->entries->len; k++)
    {
      const Entry *e = &g_array_index (s->entries, Entry, k);

      if (!g_hash_table_contains (seen, GINT_TO_POINTER (e->cid.frame_id)))
        {
          g_hash_table_add (seen, GINT_TO_POINTER (e->cid.frame_id));
          frames++;
        }
      breaks += e->breaks->len;
      restarts += e->cid.attempt > 0;
      recompiles += e->cid.frame_compile_id > 0 && e->cid.attempt == 0;
      failures += e->fail_type != NULL && *e->fail_type;
      frame_s += MAX (e->frame_s, 0);
      backend_s += MAX (e->backend_s, 0);
      inductor_s += MAX (e->inductor_s, 0);
    }
  /* translators: the Summary view's counts; %u are numbers */
  line1 = g_strdup_printf (_("%u compiles of %u frames · %u graph breaks · %u restarts · %u recompiles · %u failures"),
                           s->entries->len, frames, breaks, restarts, recompiles, failures);
  fxw_workspace_page_add_line (FXW_WORKSPACE_PAGE (self), line1, "heading");
  f = format_seconds (frame_s);
  b = format_seconds (backend_s);
  i = format_seconds (inductor_s);
  /* translators: the compile times of all compiles: Dynamo's whole frame, then the backends, then Inductor */
  line2 = g_strdup_printf (_("Compile time: %s in all (entire frame), %s in backends, %s in Inductor"), f, b, i);
  fxw_workspace_page_add_line (FXW_WORKSPACE_PAGE (self), line2, "dim-label");
}

/* One frame's compiles in order, as a timeline: each compile with its status, when it started (from the frame's
   first compile) and how long it took, and between two the reason for the second: the guard that failed on an
   earlier compile, or the graph break that restarted the analysis. */
static void
add_frame_timeline (FxwSummaryView *self, const Summary *s, guint from, guint to)
{
  const Entry *first = &g_array_index (s->entries, Entry, from);
  GtkBox *frame_box = GTK_BOX (gtk_box_new (GTK_ORIENTATION_VERTICAL, 2));
  GtkBox *title = hbox (6);
  g_autofree char *head = g_strdup_printf (_("frame %d"), first->cid.frame_id);
  GtkWidget *w;

  gtk_widget_add_css_class (GTK_WIDGET (frame_box), "card");
  gtk_widget_set_margin_top (GTK_WIDGET (frame_box), 6);
  w = gtk_label_new (head);
  gtk_widget_add_css_class (w, "heading");
  gtk_box_append (title, w);
  w = gtk_label_new (first->function != NULL ? first->function : "");
  gtk_widget_add_css_class (w, "monospace");
  gtk_box_append (title, w);
  if (first->file != NULL && first->line > 0)
    gtk_box_append (title, location_button (self, first->file, first->line));
  gtk_widget_set_margin_start (GTK_WIDGET (title), 12);
  gtk_widget_set_margin_top (GTK_WIDGET (title), 6);
  gtk_box_append (frame_box, GTK_WIDGET (title));
  fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), NULL, "%s %s %s:%d", head,
                             first->function != NULL ? first->function : "", first->file != NULL ? first->file : "?",
                             first->line);
  for (guint k = from; k < to; k++)
    {
      const Entry *e = &g_array_index (s->entries, Entry, k);
      GtkBox *row = hbox (8);
      const char *css;
      const char *words = status_words (e->status, &css);
      g_autofree char *took = format_seconds (e->frame_s);
      g_autofree char *when = NULL;

      if (k > from)
        {
          /* why this compile happened */
          GString *why = g_string_new (NULL);

          if (e->cid.attempt > 0)
            /* translators: a compile that restarted the analysis after a graph break */
            g_string_append (why, _("↓ restarted after the graph break above"));
          for (guint r = 0; r < e->reasons->len; r++)
            g_string_append_printf (why, "%s%s %s", why->len ? "\n" : "",
                                    /* translators: the guard of an earlier compile that failed, before it */
                                    _("↓ guard failed:"), (char *) g_ptr_array_index (e->reasons, r));
          if (why->len == 0)
            g_string_append (why, _("↓ recompiled (the trace gives no reason)"));
          w = fxw_viewers_add_label (frame_box, why->str, "monospace");
          gtk_widget_set_margin_start (w, 40);
          gtk_widget_add_css_class (w, "dim-label");
          {
            g_autofree char *indented = indent_lines (why->str);

            fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), NULL, "    %s", indented);
          }
          g_string_free (why, TRUE);
        }
      gtk_box_append (row, compile_button (self, e));
      w = gtk_label_new (words);
      if (css != NULL)
        gtk_widget_add_css_class (w, css);
      gtk_box_append (row, w);
      /* A compile that stopped before any op has no compilation metrics: no time to show. */
      if (e->start_time > 0 && first->start_time > 0 && e->frame_s > 0)
        /* translators: when a compile started, after the frame's first compile, and how long it took */
        when = g_strdup_printf (_("at +%.2f s, took %s"), e->start_time - first->start_time, took);
      else if (e->frame_s > 0)
        when = g_strdup_printf (_("took %s"), took);
      else
        when = g_strdup ("");
      w = gtk_label_new (when);
      gtk_widget_add_css_class (w, "dim-label");
      gtk_box_append (row, w);
      gtk_widget_set_margin_start (GTK_WIDGET (row), 18);
      gtk_box_append (frame_box, GTK_WIDGET (row));
      fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), NULL, "  [%s] %s %s", e->compile_id, words, when);
    }
  gtk_widget_set_margin_bottom (GTK_WIDGET (frame_box), 6);
  fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), GTK_WIDGET (frame_box), NULL);
}

static void
add_breaks (FxwSummaryView *self, const Summary *s)
{
  gboolean any = FALSE;

  for (guint k = 0; k < s->entries->len; k++)
    {
      const Entry *e = &g_array_index (s->entries, Entry, k);

      for (guint b = 0; b < e->breaks->len; b++)
        {
          const Break *br = &g_array_index (e->breaks, Break, b);
          GtkBox *row = hbox (8);
          GtkWidget *w;

          if (!any)
            fxw_workspace_page_add_heading (FXW_WORKSPACE_PAGE (self), _("Graph breaks"));
          any = TRUE;
          gtk_box_append (row, compile_button (self, e));
          if (br->file != NULL)
            gtk_box_append (row, location_button (self, br->file, br->line));
          w = gtk_label_new (br->reason != NULL ? br->reason : "");
          gtk_label_set_xalign (GTK_LABEL (w), 0);
          gtk_label_set_wrap (GTK_LABEL (w), TRUE);
          gtk_label_set_selectable (GTK_LABEL (w), TRUE);
          gtk_widget_set_hexpand (w, TRUE);
          gtk_box_append (row, w);
          fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), GTK_WIDGET (row), "[%s] %s:%d %s", e->compile_id,
                                     br->file ? br->file : "?", br->line, br->reason ? br->reason : "");
        }
    }
}

static void
add_failures (FxwSummaryView *self, const Summary *s)
{
  gboolean any = FALSE;

  for (guint k = 0; k < s->entries->len; k++)
    {
      const Entry *e = &g_array_index (s->entries, Entry, k);
      g_autofree char *reason = NULL, *text = NULL;
      GtkBox *row;
      GtkWidget *w;

      if (e->fail_type == NULL || !*e->fail_type)
        continue;
      if (!any)
        fxw_workspace_page_add_heading (FXW_WORKSPACE_PAGE (self), _("Failures"));
      any = TRUE;
      row = hbox (8);
      reason = first_line (e->fail_reason);
      text = g_strdup_printf ("%s: %s", e->fail_type, reason != NULL ? reason : "");
      gtk_box_append (row, compile_button (self, e));
      w = gtk_label_new (text);
      gtk_label_set_xalign (GTK_LABEL (w), 0);
      gtk_label_set_wrap (GTK_LABEL (w), TRUE);
      gtk_label_set_selectable (GTK_LABEL (w), TRUE);
      gtk_widget_add_css_class (w, "error");
      gtk_box_append (row, w);
      fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), GTK_WIDGET (row), "[%s] %s", e->compile_id, text);
    }
}

/* A torch.export trace's guards, unbacked symbols and draft_export failures (fx_export_entries), each with its user
   line (a link where the file is here) and the fix draft_export's report asks for. */
static void
add_exports (FxwSummaryView *self, const Summary *s)
{
  if (s->exports->len == 0)
    return;
  /* translators: the heading of a torch.export trace's own records in the Summary view */
  fxw_workspace_page_add_heading (FXW_WORKSPACE_PAGE (self), _("torch.export: Guards, Symbols and Failures"));
  for (guint k = 0; k < s->exports->len; k++)
    {
      const ExportRow *r = &g_array_index (s->exports, ExportRow, k);
      GtkBox *row = hbox (8);
      GtkWidget *w = gtk_label_new (r->kind);

      gtk_widget_add_css_class (w, "dim-label");
      gtk_box_append (row, w);
      w = gtk_label_new (r->what != NULL ? r->what : "-");
      gtk_label_set_xalign (GTK_LABEL (w), 0);
      gtk_label_set_selectable (GTK_LABEL (w), TRUE);
      gtk_widget_add_css_class (w, "monospace");
      gtk_box_append (row, w);
      if (r->file != NULL)
        gtk_box_append (row, location_button (self, r->file, r->line));
      if (r->file != NULL)
        fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), GTK_WIDGET (row), "[export] %s %s %s:%d", r->kind,
                                   r->what != NULL ? r->what : "-", r->file, r->line);
      else
        fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), GTK_WIDGET (row), "[export] %s %s", r->kind,
                                   r->what != NULL ? r->what : "-");
      if (r->fix != NULL)
        {
          /* translators: what to change for a draft_export failure, as its report says (%s) */
          g_autofree char *fix = g_strdup_printf (_("Fix: %s"), r->fix);

          w = gtk_label_new (fix);
          gtk_label_set_xalign (GTK_LABEL (w), 0);
          gtk_label_set_wrap (GTK_LABEL (w), TRUE);
          gtk_label_set_selectable (GTK_LABEL (w), TRUE);
          gtk_widget_set_margin_start (w, 24);
          gtk_widget_add_css_class (w, "warning");
          fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), w, "  %s", fix);
        }
    }
}

static void
add_table (FxwSummaryView *self, const Summary *s)
{
  GtkGrid *grid = GTK_GRID (gtk_grid_new ());
  const char *heads[] = { N_("Compile"), N_("Function"), N_("Status"), N_("Compile time"), N_("Graphs"),
                          N_("Kernels") };
  guint n = MIN (s->entries->len, MAX_TABLE_ROWS);

  fxw_workspace_page_add_heading (FXW_WORKSPACE_PAGE (self), _("All compiles"));
  gtk_grid_set_column_spacing (grid, 16);
  gtk_grid_set_row_spacing (grid, 0);
  for (guint c = 0; c < G_N_ELEMENTS (heads); c++)
    {
      GtkWidget *w = gtk_label_new (_(heads[c]));

      gtk_widget_add_css_class (w, "heading");
      gtk_label_set_xalign (GTK_LABEL (w), c >= 3 ? 1 : 0);
      gtk_grid_attach (grid, w, c, 0, 1, 1);
    }
  for (guint k = 0; k < n; k++)
    {
      const Entry *e = &g_array_index (s->entries, Entry, k);
      const char *css;
      const char *words = status_words (e->status, &css);
      g_autofree char *took = format_seconds (e->frame_s);
      g_autofree char *graphs = g_strdup_printf ("%d", e->n_graphs);
      g_autofree char *kernels = g_strdup_printf ("%d", e->n_kernels);
      const char *cells[] = { NULL, e->function != NULL ? e->function : "—", words, took, graphs, kernels };

      gtk_grid_attach (grid, compile_button (self, e), 0, k + 1, 1, 1);
      for (guint c = 1; c < G_N_ELEMENTS (cells); c++)
        {
          GtkWidget *w = gtk_label_new (cells[c]);

          gtk_label_set_xalign (GTK_LABEL (w), c >= 3 ? 1 : 0);
          gtk_label_set_ellipsize (GTK_LABEL (w), PANGO_ELLIPSIZE_MIDDLE);
          if (c == 1)
            {
              gtk_widget_set_hexpand (w, TRUE);
              gtk_widget_add_css_class (w, "monospace");
            }
          if (c == 2 && css != NULL)
            gtk_widget_add_css_class (w, css);
          if (c >= 3)
            gtk_widget_add_css_class (w, "numeric");
          gtk_grid_attach (grid, w, c, k + 1, 1, 1);
        }
    }
  fxw_workspace_page_append (FXW_WORKSPACE_PAGE (self), GTK_WIDGET (grid), NULL);
  if (n < s->entries->len)
    {
      g_autofree char *more = g_strdup_printf (_("… and %u more compiles (the sidebar lists them all)"),
                                               s->entries->len - n);

      fxw_viewers_add_label (fxw_workspace_page_get_column (FXW_WORKSPACE_PAGE (self)), more, "dim-label");
    }
}

static gboolean
show_summary (FxwWorkspacePage *page, gpointer data)
{
  FxwSummaryView *self = FXW_SUMMARY_VIEW (page);
  const Summary *s = data;
  gboolean any_chain = FALSE;

  if (s->entries->len == 0 && s->exports->len == 0)
    return FALSE;
  fxw_workspace_page_add_line (page, _("Summary"), "title-1");
  if (s->entries->len > 0)
    add_counts (self, s);
  /* Frames with more than one compile: their recompile and restart chains. */
  for (guint k = 0; k < s->entries->len;)
    {
      guint end = k + 1;

      while (end < s->entries->len
             && g_array_index (s->entries, Entry, end).cid.frame_id == g_array_index (s->entries, Entry, k).cid.frame_id
             && g_array_index (s->entries, Entry, end).cid.compiled_autograd_id
                == g_array_index (s->entries, Entry, k).cid.compiled_autograd_id)
        end++;
      if (end - k > 1)
        {
          if (!any_chain)
            fxw_workspace_page_add_heading (FXW_WORKSPACE_PAGE (self), _("Recompiles and restarts"));
          any_chain = TRUE;
          add_frame_timeline (self, s, k, end);
        }
      k = end;
    }
  add_breaks (self, s);
  add_failures (self, s);
  add_exports (self, s);
  if (s->entries->len > 0)
    add_table (self, s);
  return TRUE;
}

gboolean
fxw_summary_view_activate_compile (FxwSummaryView *self, const char *compile_id)
{
  g_return_val_if_fail (FXW_IS_SUMMARY_VIEW (self), FALSE);
  return fxw_view_activate_link (FXW_VIEW (self), compile_id);
}

static void
fxw_summary_view_class_init (FxwSummaryViewClass *klass)
{
  FxwWorkspacePageClass *page_class = FXW_WORKSPACE_PAGE_CLASS (klass);

  page_class->what = "summary";
  page_class->read = summary_read;
  page_class->show = show_summary;
  page_class->free = (GDestroyNotify) summary_free;

  /**
   * FxwSummaryView::compile-activated:
   * @compile_id: "0/1"
   */
  signals[SIGNAL_COMPILE_ACTIVATED] =
    g_signal_new ("compile-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);
  /**
   * FxwSummaryView::open-location:
   * @file: a user source file that exists
   * @line: 1-based
   */
  signals[SIGNAL_OPEN_LOCATION] =
    g_signal_new ("open-location", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_INT);

  fxw_workspace_page_class_set_template (GTK_WIDGET_CLASS (klass), "fxw-summary-view.ui");
}

static void
fxw_summary_view_init (FxwSummaryView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
