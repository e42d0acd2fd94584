/* fxw-diff-view.c: the Diff view. The graph section of an fx_diff is drawn by FxwDiffCanvas (pairs on one row);
 * the other sections (the guard that failed, guards, kernels, code hunks, metrics, runs) are its text form beside,
 * coloured as a unified diff, and the stored runs it paired a table under it (per output max abs, RMSE, same();
 * per kernel and end to end the time ratio). Selecting a row lists that pair's changed fields under the graphs. */
#define G_LOG_DOMAIN "fxw-diff-view"

#include "fx-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "fxw-diff-view.h"
#include "fxw-viewers.h"

struct _FxwDiffView
{
  FxwView parent_instance;

  fx_diff *diff;
  GObject *keep_a, *keep_b;
  GtkStack *stack;
  GtkSpinner *spinner;
  GtkLabel *busy_label;
  AdwStatusPage *error_page;
  GtkLabel *summary_label;
  GtkLabel *label_a, *label_b;
  FxwDiffCanvas *canvas;
  GtkLabel *detail_label;
  GtkTextView *side_text;
  GtkWidget *runs_box;
  GtkGrid *runs_grid;
};

G_DEFINE_FINAL_TYPE (FxwDiffView, fxw_diff_view, FXW_TYPE_VIEW)

static void fill_runs_table (FxwDiffView *self);

static void
clear_diff (FxwDiffView *self)
{
  fxw_diff_canvas_set_diff (self->canvas, NULL);
  g_clear_pointer (&self->diff, fx_diff_free);
  g_clear_object (&self->keep_a);
  g_clear_object (&self->keep_b);
  if (self->runs_grid != NULL)   /* not in a second dispose, after the template's */
    fill_runs_table (self);
}

/* The text of every section but the graph's (the canvas draws it, the detail line lists a pair's changes), with
   its colours as text tags. */
static void
fill_side_text (FxwDiffView *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->side_text);
  fx_diff side = *self->diff;
  fx_buf out;
  GtkTextIter iter;
  const char *p;

  side.entries = g_new (fx_diff_entry, self->diff->n_entries + 1);
  side.n_entries = 0;
  for (size_t i = 0; i < self->diff->n_entries; i++)
    if (self->diff->entries[i].section != FX_DIFF_SECTION_GRAPH)
      side.entries[side.n_entries++] = self->diff->entries[i];
  fx_buf_init (&out);
  fx_diff_print_text (&side, FALSE, &out);
  g_free (side.entries);

  gtk_text_buffer_set_text (buffer, "", -1);
  gtk_text_buffer_get_end_iter (buffer, &iter);
  if (side.n_entries == 0)
    {
      gtk_text_buffer_insert (buffer, &iter,
                              self->diff->pairs_scope == NULL && self->diff->n_pairs
                                ? _("Only graphs were compared: their differences are drawn on the left.")
                                : _("No differences in guards, kernels, code, metrics or runs."), -1);
      fx_buf_free (&out);
      return;
    }
  /* The last line counts these sections only; the summary above counts them all. */
  if (out.len > 1)
    {
      char *last = out.data + out.len - 1;

      while (last > out.data && last[-1] != '\n')
        last--;
      *last = '\0';
    }
  /* Skip the ---/+++ header: the labels above the graphs say it. */
  p = out.data ? out.data : "";
  for (int skip = 0; skip < 2 && *p; skip++)
    p = strchr (p, '\n') ? strchr (p, '\n') + 1 : p + strlen (p);
  while (*p)
    {
      const char *nl = strchr (p, '\n');
      size_t len = nl ? (size_t) (nl - p) + 1 : strlen (p);
      const char *tag = *p == '+' ? "added" : *p == '-' ? "removed" : *p == '!' ? "failure"
                        : *p == '~' ? "changed" : (*p == '=' || *p == '@') ? "header" : NULL;

      if (tag)
        gtk_text_buffer_insert_with_tags_by_name (buffer, &iter, p, (int) len, tag, NULL);
      else
        gtk_text_buffer_insert (buffer, &iter, p, (int) len);
      p += len;
    }
  fx_buf_free (&out);
}

static void
add_cell (FxwDiffView *self, int column, int row, const char *text, const char *tooltip, gboolean dim)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), column >= 1 && column <= 2 ? 1.0f : 0.0f);
  if (column == 0 && row > 0)
    {
      /* kernel names are long ("0.cpp_fused_abs_add_cos_mul_neg_relu_sin_0"): cut in the middle, whole in a tooltip */
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
      gtk_label_set_max_width_chars (GTK_LABEL (label), 18);
      gtk_label_set_width_chars (GTK_LABEL (label), 6);
      if (!tooltip)
        gtk_widget_set_tooltip_text (label, text);
    }
  if (column == 3 && row > 0)
    {
      /* a shape mismatch is long ("shape: float32[8, 4] → float32[4, 8]"): wrapped, not cut */
      gtk_label_set_wrap (GTK_LABEL (label), TRUE);
      gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
      gtk_label_set_max_width_chars (GTK_LABEL (label), 24);
    }
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  if (tooltip)
    gtk_widget_set_tooltip_text (label, tooltip);
  gtk_widget_add_css_class (label, row == 0 ? "heading" : "monospace");
  if (dim)
    gtk_widget_add_css_class (label, "dim-label");
  gtk_grid_attach (self->runs_grid, label, column, row, 1, 1);
  g_string_append_printf (out, "%s%s", column ? " | " : "", text);
  if (column == 3)
    g_string_append_c (out, '\n');
}

/* A row naming the run pair the rows below belong to ("[0/0] -> [0/1] aot_inference inductor@default"): long, so it
   spans the table rather than taking a column of the narrow side pane. */
static void
add_scope_row (FxwDiffView *self, int row, const char *scope)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));
  GtkWidget *label = gtk_label_new (scope);

  gtk_label_set_xalign (GTK_LABEL (label), 0.0f);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_max_width_chars (GTK_LABEL (label), 24);
  gtk_widget_add_css_class (label, "dim-label");
  gtk_widget_set_margin_top (label, 4);
  gtk_grid_attach (self->runs_grid, label, 0, row, 4, 1);
  g_string_append_printf (out, "== %s\n", scope);
}

static char *
format_number (double v)
{
  return isnan (v) ? g_strdup ("—") : g_strdup_printf ("%.3g", v);
}

/* The runs the diff paired, as a table: per output max abs, RMSE and same()'s verdict; per kernel and end to end
   the time ratio b / a. Hidden when the diff has no run outputs or timings. */
static void
fill_runs_table (FxwDiffView *self)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));
  const char *scope = NULL;
  int row = 1;

  /* The cells are selectable: the focus leaves the table before they go. */
  fxw_viewers_remove_children (GTK_WIDGET (self->runs_grid), GTK_WIDGET (self->runs_grid));
  g_string_truncate (out, 0);
  gtk_widget_set_visible (self->runs_box, FALSE);
  if (self->diff == NULL)
    return;
  for (size_t i = 0; i < self->diff->n_entries; i++)
    {
      const fx_diff_entry *e = &self->diff->entries[i];
      const char *name = e->name_a ? e->name_a : e->name_b;
      g_autofree char *max_abs = NULL, *rmse = NULL, *verdict = NULL, *times = NULL;
      const char *tooltip = NULL;

      if (e->section != FX_DIFF_SECTION_RUNS || e->kind == FX_DIFF_HUNK || !e->item)
        continue;
      if (g_str_equal (e->item, "output"))
        {
          max_abs = format_number (e->max_abs);
          rmse = format_number (e->rmse);
          if (g_strcmp0 (e->field, "same()") == 0)
            verdict = g_strdup (e->informational ? "pass" : "fail");
          else if (g_strcmp0 (e->field, "outputs too large to keep") == 0)
            verdict = g_strdup (_("outputs too large to keep"));
          else
            verdict = g_strdup_printf ("%s: %s → %s", e->field, e->old_text ? e->old_text : "—",
                                       e->new_text ? e->new_text : "—");
          tooltip = e->informational ? NULL : e->new_text;
        }
      else if ((g_str_equal (e->item, "kernel") || (g_str_equal (e->item, "run")
                                                    && g_strcmp0 (e->field, "run_ms_median") == 0))
               && !isnan (e->ratio))
        {
          if (g_str_equal (e->item, "run"))
            name = _("end to end");
          max_abs = g_strdup ("");
          rmse = g_strdup ("");
          /* the times themselves in the tooltip: the column shows the ratio */
          verdict = g_strdup_printf ("×%.2f", e->ratio);
          times = g_strdup_printf ("%s → %s", e->old_text ? e->old_text : "—", e->new_text ? e->new_text : "—");
          tooltip = times;
        }
      else
        continue;
      if (row == 1)
        {
          add_cell (self, 0, 0, _("Output"), _("An output, a kernel (its time), or the whole run (end to end)"), FALSE);
          add_cell (self, 1, 0, _("Max abs"), NULL, FALSE);
          add_cell (self, 2, 0, _("RMSE"), NULL, FALSE);
          add_cell (self, 3, 0, _("Verdict"), _("same() of b against a, or a time ratio b / a"), FALSE);
        }
      if (g_strcmp0 (e->scope, scope) != 0)
        {
          scope = e->scope;
          add_scope_row (self, row++, scope ? scope : "");
        }
      add_cell (self, 0, row, name ? name : "", NULL, FALSE);
      add_cell (self, 1, row, max_abs, NULL, FALSE);
      add_cell (self, 2, row, rmse, NULL, FALSE);
      add_cell (self, 3, row, verdict, tooltip, e->informational && !times);
      row++;
    }
  gtk_widget_set_visible (self->runs_box, row > 1);
}

static void
row_selected_cb (FxwDiffView *self, guint row)
{
  const fx_diff_pair *p = fxw_diff_canvas_get_pair (self->canvas, row);
  GString *text;

  if (p == NULL || self->diff == NULL)
    {
      gtk_label_set_label (self->detail_label, "");
      return;
    }
  text = g_string_new (NULL);
  if (p->a && p->b)
    g_string_append_printf (text, "%s ↔ %s", p->a->name, p->b->name);
  else if (p->a)
    /* translators: a node only the left graph has */
    g_string_append_printf (text, _("%s: only in a (removed)"), p->a->name);
  else
    g_string_append_printf (text, _("%s: only in b (added)"), p->b->name);
  for (size_t i = 0; p->a && p->b && i < self->diff->n_entries; i++)
    {
      const fx_diff_entry *e = &self->diff->entries[i];

      if (e->section == FX_DIFF_SECTION_GRAPH && e->kind == FX_DIFF_CHANGED
          && g_strcmp0 (e->name_a, p->a->name) == 0 && g_strcmp0 (e->name_b, p->b->name) == 0
          && g_strcmp0 (e->scope, self->diff->pairs_scope) == 0)
        g_string_append_printf (text, "\n  %s: %s → %s", e->field, e->old_text ? e->old_text : "—",
                                e->new_text ? e->new_text : "—");
    }
  if (p->a && p->b && !p->changed)
    g_string_append_printf (text, "\n  %s", _("unchanged"));
  gtk_label_set_label (self->detail_label, text->str);
  g_string_free (text, TRUE);
}

static void
next_change_cb (FxwDiffView *self)
{
  fxw_diff_canvas_select_change (self->canvas, +1);
}

static void
previous_change_cb (FxwDiffView *self)
{
  fxw_diff_canvas_select_change (self->canvas, -1);
}

void
fxw_diff_view_set_diff (FxwDiffView *self, fx_diff *diff, GObject *keep_a, GObject *keep_b)
{
  g_autofree char *summary = NULL;
  size_t counts[FX_DIFF_SECTION_COUNT] = { 0 };
  GString *by_section;

  g_return_if_fail (FXW_IS_DIFF_VIEW (self));

  clear_diff (self);
  gtk_spinner_set_spinning (self->spinner, FALSE);
  if (diff == NULL)
    {
      gtk_stack_set_visible_child_name (self->stack, "empty");
      return;
    }
  self->diff = diff;
  self->keep_a = keep_a ? g_object_ref (keep_a) : NULL;
  self->keep_b = keep_b ? g_object_ref (keep_b) : NULL;
  for (size_t i = 0; i < diff->n_entries; i++)
    if (!diff->entries[i].informational)
      counts[diff->entries[i].section]++;
  by_section = g_string_new (NULL);
  for (int s = 0; s < FX_DIFF_SECTION_COUNT; s++)
    if (counts[s])
      g_string_append_printf (by_section, "%s%s %zu", by_section->len ? ", " : "", fx_diff_section_name (s), counts[s]);
  if (fx_diff_count (diff) == 0)
    summary = g_strdup_printf (_("%s and %s: no differences"), diff->label_a, diff->label_b);
  else
    /* translators: "a.fxwb:[0/0] and a.fxwb:[0/1]: 12 differences (guards 3, graph 9)" */
    summary = g_strdup_printf (ngettext ("%s and %s: %zu difference (%s)", "%s and %s: %zu differences (%s)",
                                         fx_diff_count (diff)),
                               diff->label_a, diff->label_b, fx_diff_count (diff), by_section->str);
  g_string_free (by_section, TRUE);
  gtk_label_set_label (self->summary_label, summary);
  {
    /* The scope of a compile diff's graph is "[0/0] -> [0/1] dynamo": its last word is the stage. */
    const char *stage = diff->pairs_scope ? strrchr (diff->pairs_scope, ' ') : NULL;
    g_autofree char *la = g_strdup_printf ("a: %s%s%s", diff->label_a, stage ? " ·" : "", stage ? stage : "");
    g_autofree char *lb = g_strdup_printf ("b: %s%s%s", diff->label_b, stage ? " ·" : "", stage ? stage : "");

    gtk_label_set_label (self->label_a, la);
    gtk_label_set_label (self->label_b, lb);
  }
  gtk_label_set_label (self->detail_label, diff->n_pairs ? _("Click a node to select it and its partner; n and p "
                                                           "step through the changes.")
                                                         : _("No graph was diffed."));
  fxw_diff_canvas_set_diff (self->canvas, diff);
  fill_side_text (self);
  fill_runs_table (self);
  gtk_stack_set_visible_child_name (self->stack, "diff");
}

void
fxw_diff_view_set_busy (FxwDiffView *self, const char *what)
{
  g_return_if_fail (FXW_IS_DIFF_VIEW (self));

  clear_diff (self);
  gtk_label_set_label (self->busy_label, what ? what : "");
  gtk_spinner_set_spinning (self->spinner, TRUE);
  gtk_stack_set_visible_child_name (self->stack, "busy");
}

void
fxw_diff_view_set_error (FxwDiffView *self, const char *message)
{
  g_return_if_fail (FXW_IS_DIFF_VIEW (self));

  clear_diff (self);
  gtk_spinner_set_spinning (self->spinner, FALSE);
  adw_status_page_set_description (self->error_page, message);
  gtk_stack_set_visible_child_name (self->stack, "error");
}

const fx_diff *
fxw_diff_view_get_diff (FxwDiffView *self)
{
  g_return_val_if_fail (FXW_IS_DIFF_VIEW (self), NULL);
  return self->diff;
}

FxwDiffCanvas *
fxw_diff_view_get_canvas (FxwDiffView *self)
{
  g_return_val_if_fail (FXW_IS_DIFF_VIEW (self), NULL);
  return self->canvas;
}

const char *
fxw_diff_view_get_page (FxwDiffView *self)
{
  return gtk_stack_get_visible_child_name (self->stack);
}

const char *
fxw_diff_view_get_summary (FxwDiffView *self)
{
  return gtk_label_get_label (self->summary_label);
}

char *
fxw_diff_view_dup_side_text (FxwDiffView *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->side_text);
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

const char *
fxw_diff_view_get_detail (FxwDiffView *self)
{
  return gtk_label_get_label (self->detail_label);
}

const char *
fxw_diff_view_get_runs_table (FxwDiffView *self)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));

  return gtk_widget_get_visible (self->runs_box) ? out->str : NULL;
}

static void
fxw_diff_view_dispose (GObject *object)
{
  FxwDiffView *self = FXW_DIFF_VIEW (object);

  clear_diff (self);
  G_OBJECT_CLASS (fxw_diff_view_parent_class)->dispose (object);
}

static void
fxw_diff_view_class_init (FxwDiffViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fxw_diff_view_dispose;
  fxw_viewers_class_set_template (widget_class, "fxw-diff-view.ui");
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, stack);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, spinner);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, busy_label);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, error_page);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, summary_label);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, label_a);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, label_b);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, canvas);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, detail_label);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, side_text);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, runs_box);
  gtk_widget_class_bind_template_child (widget_class, FxwDiffView, runs_grid);
  gtk_widget_class_bind_template_callback (widget_class, row_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, next_change_cb);
  gtk_widget_class_bind_template_callback (widget_class, previous_change_cb);
}

static void
fxw_diff_view_init (FxwDiffView *self)
{
  GtkTextBuffer *buffer;

  gtk_widget_init_template (GTK_WIDGET (self));
  buffer = gtk_text_view_get_buffer (self->side_text);
  gtk_text_buffer_create_tag (buffer, "added", "foreground", "#26a269", NULL);
  gtk_text_buffer_create_tag (buffer, "removed", "foreground", "#c01c28", NULL);
  gtk_text_buffer_create_tag (buffer, "changed", "foreground", "#986a44", NULL);
  gtk_text_buffer_create_tag (buffer, "failure", "foreground", "#c01c28", "weight", PANGO_WEIGHT_BOLD, NULL);
  gtk_text_buffer_create_tag (buffer, "header", "foreground", "#1c71d8", "weight", PANGO_WEIGHT_BOLD, NULL);
}
