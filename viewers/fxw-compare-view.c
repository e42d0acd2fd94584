/* fxw-compare-view.c: the Compare view. Each run's median time is set against the first run's (the baseline):
 * a speedup above 1 is faster. A run with an error or a failed accuracy check says so in its verdict. The runs
 * shown are those of a compile: `fxwb compare WORKSPACE:COMPILE` runs one stage of it (aot_inference first). */
#define G_LOG_DOMAIN "fxw-compare-view"

#include "fx-config.h"

#include <math.h>
#include <adwaita.h>
#include <glib/gi18n.h>

#include "fxw-compare-view.h"
#include "fxw-viewers.h"

typedef enum
{
  COL_STAGE, COL_BACKEND, COL_MODE, COL_DEVICE, COL_OPTIONS, COL_COMPILE, COL_MEDIAN, COL_MIN, COL_MAX,
  COL_SPEEDUP, COL_ACCURACY, COL_KERNELS, COL_PEAK, COL_VERDICT, COL_ERROR, N_COLS
} Column;

struct _FxwCompareView
{
  FxwView parent_instance;

  GListModel *runs;
  GtkStack *stack;
  GtkLabel *summary_label;
  GtkGrid *grid;
};

G_DEFINE_FINAL_TYPE (FxwCompareView, fxw_compare_view, FXW_TYPE_VIEW)

static char *
format_ms (double ms)
{
  /* A unit that fits the number: micro-graphs run in microseconds, where "0.001" ms said nothing. */
  if (isnan (ms))
    return g_strdup (C_("time", "—"));
  if (ms >= 100.0)
    return g_strdup_printf ("%.1f ms", ms);
  if (ms >= 1.0)
    return g_strdup_printf ("%.3f ms", ms);
  if (ms >= 1e-3)
    return g_strdup_printf ("%.1f µs", ms * 1e3);
  return g_strdup_printf ("%.0f ns", ms * 1e6);
}

/* The stored verdict says whether the outputs matched the reference (PyTorch's same()); an accuracy failure is
   stored with its report in the error text, so the verdict comes first. */
static gboolean
is_inaccurate (FxwRun *run)
{
  return g_strcmp0 (fxw_run_get_verdict (run), "fail") == 0;
}

static gboolean
is_failed (FxwRun *run)
{
  return !is_inaccurate (run) && (*fxw_run_get_error (run) || g_strcmp0 (fxw_run_get_verdict (run), "error") == 0);
}

static double
speedup_of (FxwCompareView *self, FxwRun *run)
{
  g_autoptr(FxwRun) first = NULL;
  double base, mine;

  if (self->runs == NULL || g_list_model_get_n_items (self->runs) == 0)
    return NAN;
  first = g_list_model_get_item (self->runs, 0);
  base = fxw_run_get_median_ms (first);
  mine = fxw_run_get_median_ms (run);
  if (isnan (base) || isnan (mine) || mine <= 0 || is_failed (run) || is_failed (first))
    return NAN;
  return base / mine;
}

static char *
verdict_of (FxwCompareView *self, FxwRun *run, gboolean is_first)
{
  double speedup = speedup_of (self, run);

  if (is_inaccurate (run))
    return g_strdup (_("inaccurate"));
  if (is_failed (run))
    return g_strdup (_("failed"));
  if (is_first)
    return g_strdup (_("baseline"));
  if (isnan (speedup))
    return g_strdup (_("not timed"));
  if (speedup > 1.05)
    return g_strdup (_("faster"));
  if (speedup < 1 / 1.05)
    return g_strdup (_("slower"));
  return g_strdup (_("same speed"));
}

/* The columns that show one of the run's fields as it is, and those that show one of its times. */
static const char *(*const field_of[N_COLS]) (FxwRun *run) = {
  [COL_STAGE] = fxw_run_get_stage, [COL_BACKEND] = fxw_run_get_backend, [COL_MODE] = fxw_run_get_mode,
  [COL_DEVICE] = fxw_run_get_device, [COL_OPTIONS] = fxw_run_get_options, [COL_ERROR] = fxw_run_get_error,
};
static double (*const time_of[N_COLS]) (FxwRun *run) = {
  [COL_COMPILE] = fxw_run_get_compile_ms, [COL_MEDIAN] = fxw_run_get_median_ms, [COL_MIN] = fxw_run_get_min_ms,
  [COL_MAX] = fxw_run_get_max_ms,
};

static char *
cell_text (FxwCompareView *self, FxwRun *run, Column column, gboolean is_first)
{
  if (field_of[column] != NULL)
    return g_strdup (field_of[column] (run));
  if (time_of[column] != NULL)
    return format_ms (time_of[column] (run));
  switch (column)
    {
    case COL_SPEEDUP:
      {
        double s = speedup_of (self, run);

        return isnan (s) ? g_strdup (C_("speedup", "—")) : g_strdup_printf ("%.2f×", s);
      }
    case COL_ACCURACY:
      {
        double a = fxw_run_get_accuracy (run);
        const char *verdict = fxw_run_get_verdict (run);
        g_autofree char *number = isnan (a) ? NULL : g_strdup_printf ("%.3g", a);

        /* translators: the accuracy verdict, then the largest absolute error */
        if (g_strcmp0 (verdict, "pass") == 0)
          return number ? g_strdup_printf (_("pass (max error %s)"), number) : g_strdup (_("pass"));
        if (g_strcmp0 (verdict, "fail") == 0)
          return number ? g_strdup_printf (_("fail (max error %s)"), number) : g_strdup (_("fail"));
        if (g_strcmp0 (verdict, "not checked") == 0)
          return g_strdup (_("not checked"));
        return number ? g_steal_pointer (&number) : g_strdup (C_("accuracy", "—"));
      }
    case COL_KERNELS:
      return fxw_run_get_n_kernels (run) < 0 ? g_strdup (C_("kernels", "—"))
                                             : g_strdup_printf ("%d", fxw_run_get_n_kernels (run));
    case COL_PEAK:
      return fxw_run_get_peak_bytes (run) < 0 ? g_strdup (C_("memory", "—"))
                                              : g_format_size_full ((guint64) fxw_run_get_peak_bytes (run),
                                                                    G_FORMAT_SIZE_IEC_UNITS);
    case COL_VERDICT:
      return verdict_of (self, run, is_first);
    case COL_STAGE:   /* field_of and time_of's */
    case COL_BACKEND:
    case COL_MODE:
    case COL_DEVICE:
    case COL_OPTIONS:
    case COL_ERROR:
    case COL_COMPILE:
    case COL_MEDIAN:
    case COL_MIN:
    case COL_MAX:
    case N_COLS:
    default:
      return g_strdup ("");
    }
}

/* translators: the row titles of the Compare view; times are in milliseconds */
static const char *const row_titles[N_COLS] = {
  N_("Graph"), N_("Backend"), N_("Mode"), N_("Device"), N_("Options"), N_("Compile"), N_("Median"),
  N_("Min"), N_("Max"), N_("Speedup"), N_("Accuracy"), N_("Kernels"), N_("Peak Memory"), N_("Verdict"),
  N_("Error"),
};

/* ---------------------------------------------------------------- kernels aligned by the nodes they cover */

typedef struct
{
  guint run;
  FxwKernel *kernel;   /* borrowed from the run's model (the runs outlive the grid rebuild) */
  guint parent;        /* union-find */
} KernelRef;

static guint
find_root (GArray *refs, guint i)
{
  while (g_array_index (refs, KernelRef, i).parent != i)
    {
      KernelRef *r = &g_array_index (refs, KernelRef, i);

      r->parent = g_array_index (refs, KernelRef, r->parent).parent;
      i = r->parent;
    }
  return i;
}

/* Rows of kernels that cover the same nodes: kernels of any run that share a node are one row (inductor's fused
   kernel beside the finer kernels of another mode or option), so each row compares the same work. The rows are in
   the order their first kernel appears, run by run. Appended below the measures, from grid row `top`. */
static int
add_kernel_rows (FxwCompareView *self, guint n_runs, int top)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));
  g_autoptr(GArray) refs = g_array_new (FALSE, FALSE, sizeof (KernelRef));
  g_autoptr(GHashTable) owner = g_hash_table_new (g_str_hash, g_str_equal);  /* node -> first ref covering it */
  g_autoptr(GPtrArray) order = g_ptr_array_new ();                             /* roots, first-seen order */
  g_autoptr(GHashTable) row_of = g_hash_table_new (g_direct_hash, g_direct_equal);
  gboolean any_times = FALSE;
  GtkWidget *title;
  int row;

  for (guint r = 0; r < n_runs; r++)
    {
      g_autoptr(FxwRun) run = g_list_model_get_item (self->runs, r);
      GListModel *kernels = fxw_run_get_kernels (run);

      for (guint k = 0; kernels != NULL && k < g_list_model_get_n_items (kernels); k++)
        {
          g_autoptr(FxwKernel) kernel = g_list_model_get_item (kernels, k);
          KernelRef ref = { r, kernel, refs->len };

          g_array_append_val (refs, ref);
          any_times |= !isnan (fxw_kernel_get_time_ms (kernel));
        }
    }
  if (refs->len == 0)
    return top;
  for (guint i = 0; i < refs->len; i++)
    {
      FxwKernel *kernel = g_array_index (refs, KernelRef, i).kernel;
      const char *const *nodes = fxw_kernel_get_nodes (kernel);

      for (guint j = 0; nodes != NULL && j < fxw_kernel_get_n_nodes (kernel); j++)
        {
          gpointer other;

          if (g_hash_table_lookup_extended (owner, nodes[j], NULL, &other))
            {
              guint a = find_root (refs, i), b = find_root (refs, GPOINTER_TO_UINT (other));

              if (a != b)
                g_array_index (refs, KernelRef, MAX (a, b)).parent = MIN (a, b);
            }
          else
            g_hash_table_insert (owner, (gpointer) nodes[j], GUINT_TO_POINTER (i));
        }
    }
  /* translators: the heading of the Compare view's kernel rows */
  title = gtk_label_new (any_times ? _("Kernels, by the nodes they cover (time per call)")
                                   : _("Kernels, by the nodes they cover (run with kernel timing to see times)"));
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_widget_add_css_class (title, "title-4");
  gtk_widget_set_margin_top (title, 12);
  gtk_grid_attach (self->grid, title, 0, top, (int) n_runs + 1, 1);
  row = top + 1;
  for (guint i = 0; i < refs->len; i++)
    {
      guint root = find_root (refs, i);

      if (!g_hash_table_contains (row_of, GUINT_TO_POINTER (root)))
        {
          g_hash_table_insert (row_of, GUINT_TO_POINTER (root), GINT_TO_POINTER (row++));
          g_ptr_array_add (order, GUINT_TO_POINTER (root));
        }
    }
  for (guint o = 0; o < order->len; o++)
    {
      guint root = GPOINTER_TO_UINT (order->pdata[o]);
      int grid_row = GPOINTER_TO_INT (g_hash_table_lookup (row_of, GUINT_TO_POINTER (root)));
      g_autoptr(GString) covered = g_string_new (NULL);
      g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
      GString **cells = g_new0 (GString *, n_runs);
      GtkWidget *label;

      for (guint i = 0; i < refs->len; i++)
        {
          KernelRef *ref = &g_array_index (refs, KernelRef, i);
          const char *const *nodes = fxw_kernel_get_nodes (ref->kernel);
          g_autofree char *ms = NULL;

          if (find_root (refs, i) != root)
            continue;
          for (guint j = 0; nodes != NULL && j < fxw_kernel_get_n_nodes (ref->kernel); j++)
            if (g_hash_table_add (seen, (gpointer) nodes[j]))
              g_string_append_printf (covered, "%s%s", covered->len ? ", " : "", nodes[j]);
          if (cells[ref->run] == NULL)
            cells[ref->run] = g_string_new (NULL);
          ms = format_ms (fxw_kernel_get_time_ms (ref->kernel));
          g_string_append_printf (cells[ref->run], "%s%s  %s", cells[ref->run]->len ? "\n" : "",
                                  fxw_kernel_get_name (ref->kernel), isnan (fxw_kernel_get_time_ms (ref->kernel))
                                  ? "" : ms);
        }
      label = gtk_label_new (covered->len ? covered->str : _("(no nodes named)"));
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_label_set_yalign (GTK_LABEL (label), 0);
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
      gtk_label_set_max_width_chars (GTK_LABEL (label), 28);
      gtk_widget_set_tooltip_text (label, covered->str);
      gtk_widget_add_css_class (label, "monospace");
      gtk_grid_attach (self->grid, label, 0, grid_row, 1, 1);
      g_string_append (out, covered->str);
      for (guint r = 0; r < n_runs; r++)
        {
          GtkWidget *cell = gtk_label_new (cells[r] != NULL ? cells[r]->str : C_("kernels", "—"));

          gtk_label_set_xalign (GTK_LABEL (cell), 0);
          gtk_label_set_yalign (GTK_LABEL (cell), 0);
          gtk_label_set_selectable (GTK_LABEL (cell), TRUE);
          gtk_widget_add_css_class (cell, "monospace");
          if (cells[r] == NULL)
            {
              gtk_widget_add_css_class (cell, "dim-label");
              /* translators: a Compare cell of a run with no kernel for these nodes */
              gtk_widget_set_tooltip_text (cell, _("No kernel of this run covers these nodes (an eager run "
                                                   "interprets node by node)"));
            }
          gtk_grid_attach (self->grid, cell, (int) r + 1, grid_row, 1, 1);
          g_string_append_printf (out, "\t%s", gtk_label_get_label (GTK_LABEL (cell)));
          if (cells[r] != NULL)
            g_string_free (cells[r], TRUE);
        }
      g_free (cells);
      g_string_append_c (out, '\n');
    }
  return row;
}

/* max-autotune's candidates, one cell per run that autotuned (its autotune.txt: every configuration with its time,
   the one kept), below the kernel rows from grid row `top`. */
static void
add_autotune_rows (FxwCompareView *self, guint n_runs, int top)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));
  gboolean any = FALSE;

  for (guint r = 0; r < n_runs; r++)
    {
      g_autoptr(FxwRun) run = g_list_model_get_item (self->runs, r);

      any |= fxw_run_get_autotune (run) != NULL;
    }
  if (!any)
    return;
  /* translators: the heading of the Compare view's autotune row (mode max-autotune) */
  GtkWidget *title = gtk_label_new (_("Autotune candidates (max-autotune; the fastest kept)"));
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_widget_add_css_class (title, "title-4");
  gtk_widget_set_margin_top (title, 12);
  gtk_grid_attach (self->grid, title, 0, top, (int) n_runs + 1, 1);
  g_string_append (out, "autotune");
  for (guint r = 0; r < n_runs; r++)
    {
      g_autoptr(FxwRun) run = g_list_model_get_item (self->runs, r);
      const char *table = fxw_run_get_autotune (run);
      GtkWidget *cell = gtk_label_new (table != NULL ? table : C_("kernels", "—"));

      gtk_label_set_xalign (GTK_LABEL (cell), 0);
      gtk_label_set_yalign (GTK_LABEL (cell), 0);
      gtk_label_set_selectable (GTK_LABEL (cell), TRUE);
      gtk_widget_add_css_class (cell, "monospace");
      if (table == NULL)
        gtk_widget_add_css_class (cell, "dim-label");
      /* a table's lines are long: scrolled sideways in its cell, not squeezing the other runs' columns */
      GtkWidget *scroll = gtk_scrolled_window_new ();
      gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroll), GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER);
      gtk_scrolled_window_set_propagate_natural_width (GTK_SCROLLED_WINDOW (scroll), TRUE);
      gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scroll), TRUE);
      gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroll), cell);
      gtk_grid_attach (self->grid, scroll, (int) r + 1, top + 1, 1, 1);
      g_string_append_printf (out, "\t%s", table != NULL ? table : "");
    }
  g_string_append_c (out, '\n');
}

/* Runs side by side: one column per run, one row per measure, the first run (the baseline) leftmost. */
static void
rebuild_grid (FxwCompareView *self)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));
  GtkWidget *child;
  guint n = self->runs != NULL ? g_list_model_get_n_items (self->runs) : 0;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->grid))) != NULL)
    gtk_grid_remove (self->grid, child);
  g_string_truncate (out, 0);
  for (Column c = 0; c < N_COLS; c++)
    {
      GtkWidget *title = gtk_label_new (_(row_titles[c]));

      gtk_label_set_xalign (GTK_LABEL (title), 0);
      gtk_label_set_yalign (GTK_LABEL (title), 0);
      gtk_widget_add_css_class (title, "heading");
      gtk_grid_attach (self->grid, title, 0, (int) c + 1, 1, 1);
    }
  for (guint r = 0; r < n; r++)
    {
      g_autoptr(FxwRun) run = g_list_model_get_item (self->runs, r);
      /* translators: the title of a run's column in the Compare view */
      g_autofree char *head = g_strdup_printf (_("Run %u"), r + 1);
      GtkWidget *header = gtk_label_new (head);
      double speedup = speedup_of (self, run);

      gtk_label_set_xalign (GTK_LABEL (header), 0);
      gtk_widget_add_css_class (header, "dim-label");
      gtk_grid_attach (self->grid, header, (int) r + 1, 0, 1, 1);
      for (Column c = 0; c < N_COLS; c++)
        {
          g_autofree char *text = cell_text (self, run, c, r == 0);
          GtkWidget *cell = gtk_label_new (text);

          gtk_label_set_xalign (GTK_LABEL (cell), 0);
          gtk_label_set_yalign (GTK_LABEL (cell), 0);
          gtk_label_set_selectable (GTK_LABEL (cell), TRUE);
          gtk_label_set_wrap (GTK_LABEL (cell), TRUE);
          gtk_label_set_wrap_mode (GTK_LABEL (cell), PANGO_WRAP_WORD_CHAR);
          gtk_label_set_max_width_chars (GTK_LABEL (cell), 36);
          if (c >= COL_COMPILE && c <= COL_PEAK && c != COL_ACCURACY)
            gtk_widget_add_css_class (cell, "numeric");
          if (c == COL_OPTIONS || c == COL_ERROR)
            gtk_widget_add_css_class (cell, "monospace");
          if (c == COL_ERROR && *text)
            gtk_widget_add_css_class (cell, "error");
          if (c == COL_VERDICT)
            {
              if (is_failed (run) || is_inaccurate (run))
                gtk_widget_add_css_class (cell, "error");
              else if (!isnan (speedup) && speedup > 1.05)
                gtk_widget_add_css_class (cell, "success");
              else if (!isnan (speedup) && speedup < 1 / 1.05)
                gtk_widget_add_css_class (cell, "warning");
              gtk_widget_add_css_class (cell, "heading");
            }
          gtk_grid_attach (self->grid, cell, (int) r + 1, (int) c + 1, 1, 1);
        }
    }
  add_autotune_rows (self, n, add_kernel_rows (self, n, N_COLS + 1));
}

static void
fxw_compare_view_dispose (GObject *object)
{
  FxwCompareView *self = FXW_COMPARE_VIEW (object);

  g_clear_object (&self->runs);
  G_OBJECT_CLASS (fxw_compare_view_parent_class)->dispose (object);
}

static void
fxw_compare_view_class_init (FxwCompareViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = fxw_compare_view_dispose;
  fxw_viewers_class_set_template (widget_class, "fxw-compare-view.ui");
  gtk_widget_class_bind_template_child (widget_class, FxwCompareView, stack);
  gtk_widget_class_bind_template_child (widget_class, FxwCompareView, summary_label);
  gtk_widget_class_bind_template_child (widget_class, FxwCompareView, grid);
}

static void
fxw_compare_view_init (FxwCompareView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_stack_set_visible_child_name (self->stack, "empty");
}

void
fxw_compare_view_set_runs (FxwCompareView *self, GListModel *runs)
{
  guint n;

  g_return_if_fail (FXW_IS_COMPARE_VIEW (self));

  g_set_object (&self->runs, runs);
  rebuild_grid (self);
  n = runs != NULL ? g_list_model_get_n_items (runs) : 0;
  gtk_stack_set_visible_child_name (self->stack, n > 0 ? "runs" : "empty");
  if (n > 0)
    {
      g_autoptr(FxwRun) first = g_list_model_get_item (runs, 0);
      /* translators: the baseline run's backend and mode */
      g_autofree char *text = g_strdup_printf (ngettext ("%u run of this compile. Speedups are against the first, %s %s.",
                                                         "%u runs of this compile. Speedups are against the first, %s %s.",
                                                         n),
                                               n, fxw_run_get_backend (first), fxw_run_get_mode (first));
      gtk_label_set_label (self->summary_label, text);
    }
}

guint
fxw_compare_view_get_n_runs (FxwCompareView *self)
{
  g_return_val_if_fail (FXW_IS_COMPARE_VIEW (self), 0);
  return self->runs != NULL ? g_list_model_get_n_items (self->runs) : 0;
}

char *
fxw_compare_view_dup_kernels_text (FxwCompareView *self)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));

  g_return_val_if_fail (FXW_IS_COMPARE_VIEW (self), NULL);
  return out->len > 0 ? g_strdup (out->str) : NULL;
}

char *
fxw_compare_view_dup_row_text (FxwCompareView *self, guint row)
{
  g_autoptr(FxwRun) run = NULL;
  GString *out;

  g_return_val_if_fail (FXW_IS_COMPARE_VIEW (self), NULL);
  if (row >= fxw_compare_view_get_n_runs (self))
    return NULL;
  run = g_list_model_get_item (self->runs, row);
  out = g_string_new (NULL);
  for (Column c = 0; c < N_COLS; c++)
    {
      g_autofree char *cell = cell_text (self, run, c, row == 0);

      g_string_append_printf (out, "%s%s", c ? "\t" : "", cell);
    }
  return g_string_free (out, FALSE);
}

double
fxw_compare_view_get_speedup (FxwCompareView *self, guint row)
{
  g_autoptr(FxwRun) run = NULL;

  g_return_val_if_fail (FXW_IS_COMPARE_VIEW (self), NAN);
  if (row >= fxw_compare_view_get_n_runs (self))
    return NAN;
  run = g_list_model_get_item (self->runs, row);
  return speedup_of (self, run);
}
