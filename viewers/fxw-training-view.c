/* fxw-training-view.c: the Forward/Backward view. A training compile's aot_forward and aot_backward graphs in two
 * tables side by side, each with its own selection; the values the forward saves for the backward
 * (fx_aot_saved_values) are the highlight set of both; selecting a backward node selects the forward node it came
 * from (fx_aot_forward_sources: the one it recomputes, else by seq_nr where the graphs keep it, else by the user
 * line) and says which, with the user line, under the tables. */
#define G_LOG_DOMAIN "fxw-training-view"

#include "fx-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "fx/aot-graphs.h"
#include "fxw-table-view.h"
#include "fxw-training-view.h"
#include "fxw-viewers.h"

struct _FxwTrainingView
{
  FxwView parent_instance;

  GtkStack *stack;
  GtkLabel *saved_label;
  GtkLabel *provenance_label;
  FxwTableView *forward_table;
  FxwTableView *backward_table;   /* its selection is the view's own: a node there says where it came from */

  guint n_saved;
};

G_DEFINE_FINAL_TYPE (FxwTrainingView, fxw_training_view, FXW_TYPE_VIEW)

GtkWidget *
fxw_training_view_new (void)
{
  return g_object_new (FXW_TYPE_TRAINING_VIEW, NULL);
}

/* "file:line: code" of a node's innermost user frame (NULL when it has none). */
static char *
dup_user_line (const fx_node *node, fx_arena *arena)
{
  fx_stack_frame frame = { 0 };

  if (!fx_stack_trace_innermost (node->meta.stack_trace, arena, &frame) || frame.file == NULL)
    return NULL;
  return g_strdup_printf ("%s:%d: %s", frame.file, frame.line, frame.code ? frame.code : "");
}

/* The selected backward node: its forward node(s) selected on the left, and said under the tables. */
static void
backward_node_changed (FxwView *view)
{
  FxwTrainingView *self = FXW_TRAINING_VIEW (view);
  FxwSelection *forward = fxw_training_view_get_forward_selection (self);
  FxwNode *node = fxw_selection_get_node (fxw_view_get_selection (view));
  FxwGraph *fw = fxw_selection_get_graph (forward);
  g_autoptr(GString) text = g_string_new (NULL);
  fx_arena *arena;
  const fx_node *n, **sources = NULL, *first = NULL;
  size_t n_sources = 0;

  if (node == NULL || fw == NULL)
    {
      gtk_label_set_text (self->provenance_label, "");
      return;
    }
  arena = fx_arena_new ();
  n = fxw_node_get_node (node);
  if (n->op == FX_OP_PLACEHOLDER && !fx_aot_is_tangent (n))
    first = fx_graph_find_node (fxw_graph_get_graph (fw), n->name);
  else
    fx_aot_forward_sources (fxw_graph_get_graph (fw), n, arena, &sources, &n_sources);
  if (first != NULL)
    g_string_printf (text, _("%s: saved for backward by the forward node %s"), n->name, first->name);
  else if (n_sources > 0)
    {
      g_autoptr(GString) names = g_string_new (NULL);

      for (size_t i = 0; i < n_sources; i++)
        g_string_append_printf (names, "%s%s", i ? ", " : "", sources[i]->name);
      if (fx_aot_is_recomputed (fxw_graph_get_graph (fw), n))
        g_string_printf (text, _("%s recomputes the forward node %s"), n->name, names->str);
      else
        g_string_printf (text, n->meta.seq_nr >= 0 ? _("%s comes from the forward node(s) %s (same seq_nr)")
                                                   : _("%s comes from the forward node(s) %s (same user line)"),
                         n->name, names->str);
      first = sources[0];
    }
  else if (fx_aot_is_tangent (n))
    g_string_printf (text, _("%s: the gradient flowing into the backward"), n->name);
  else
    g_string_printf (text, _("%s: no forward node found"), n->name);
  if (first != NULL)
    {
      g_autofree char *line = dup_user_line (first, arena);

      if (line != NULL)
        g_string_append_printf (text, "\n%s", line);
      fxw_selection_set_node (forward, fxw_graph_lookup_node (fw, first));
    }
  gtk_label_set_text (self->provenance_label, text->str);
  fx_arena_free (arena);
}

void
fxw_training_view_set_graphs (FxwTrainingView *self, FxwGraph *forward, FxwGraph *backward)
{
  FxwSelection *forward_selection, *backward_selection;
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  fx_saved_value *saved = NULL;
  size_t n = 0;
  fx_arena *arena;
  fx_diag diag;

  g_return_if_fail (FXW_IS_TRAINING_VIEW (self));
  if (forward == NULL || backward == NULL)
    forward = backward = NULL;
  forward_selection = fxw_training_view_get_forward_selection (self);
  backward_selection = fxw_training_view_get_backward_selection (self);
  fxw_selection_set_graph (forward_selection, forward);
  fxw_selection_set_graph (backward_selection, backward);
  self->n_saved = 0;
  gtk_label_set_text (self->provenance_label, "");
  gtk_stack_set_visible_child_name (self->stack, forward != NULL ? "split" : "empty");
  if (forward == NULL)
    return;
  arena = fx_arena_new ();
  fx_diag_clear (&diag);
  if (fx_aot_saved_values (fxw_graph_get_graph (forward), fxw_graph_get_graph (backward), arena, &saved, &n, &diag)
      == FX_OK)
    {
      g_autofree char *text = NULL;

      for (size_t i = 0; i < n; i++)
        g_ptr_array_add (names, (gpointer) saved[i].bw_placeholder->name);
      g_ptr_array_add (names, NULL);
      /* the same names on both sides: PyTorch names a saved value after the forward node computing it */
      fxw_selection_set_highlight (forward_selection, (const char *const *) names->pdata);
      fxw_selection_set_highlight (backward_selection, (const char *const *) names->pdata);
      self->n_saved = (guint) n;
      text = g_strdup_printf (ngettext ("%u value saved for backward, marked in both graphs",
                                        "%u values saved for backward, marked in both graphs", (gulong) n),
                              (guint) n);
      gtk_label_set_text (self->saved_label, text);
    }
  else
    {
      g_autofree char *text = g_strdup_printf (_("The forward and backward graphs do not match: %s"), diag.message);

      gtk_label_set_text (self->saved_label, text);
    }
  fx_arena_free (arena);
  /* all rows, the saved ones marked */
  fxw_table_view_set_highlighted_only (self->forward_table, FALSE);
  fxw_table_view_set_highlighted_only (self->backward_table, FALSE);
}

FxwSelection *
fxw_training_view_get_forward_selection (FxwTrainingView *self)
{
  g_return_val_if_fail (FXW_IS_TRAINING_VIEW (self), NULL);
  return fxw_table_view_get_selection (self->forward_table);
}

FxwSelection *
fxw_training_view_get_backward_selection (FxwTrainingView *self)
{
  return fxw_view_get_selection (FXW_VIEW (self));
}

guint
fxw_training_view_get_n_saved (FxwTrainingView *self)
{
  g_return_val_if_fail (FXW_IS_TRAINING_VIEW (self), 0);
  return self->n_saved;
}

const char *
fxw_training_view_get_provenance (FxwTrainingView *self)
{
  g_return_val_if_fail (FXW_IS_TRAINING_VIEW (self), NULL);
  return gtk_label_get_text (self->provenance_label);
}

static void
fxw_training_view_class_init (FxwTrainingViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  FXW_VIEW_CLASS (klass)->node_changed = backward_node_changed;
  fxw_viewers_class_set_template (widget_class, "fxw-training-view.ui");
  gtk_widget_class_bind_template_child (widget_class, FxwTrainingView, stack);
  gtk_widget_class_bind_template_child (widget_class, FxwTrainingView, saved_label);
  gtk_widget_class_bind_template_child (widget_class, FxwTrainingView, provenance_label);
  gtk_widget_class_bind_template_child (widget_class, FxwTrainingView, forward_table);
  gtk_widget_class_bind_template_child (widget_class, FxwTrainingView, backward_table);
}

static void
fxw_training_view_init (FxwTrainingView *self)
{
  g_autoptr(FxwSelection) forward = fxw_selection_new ();
  g_autoptr(FxwSelection) backward = fxw_selection_new ();

  gtk_widget_init_template (GTK_WIDGET (self));
  fxw_table_view_set_selection (self->forward_table, forward);
  fxw_table_view_set_selection (self->backward_table, backward);
  /* their highlight set is the saved values, not a kernel's nodes */
  fxw_table_view_set_highlighted_label (self->forward_table, _("Saved values only"));
  fxw_table_view_set_highlighted_label (self->backward_table, _("Saved values only"));
  fxw_view_set_selection (FXW_VIEW (self), backward);
  gtk_stack_set_visible_child_name (self->stack, "empty");
}
