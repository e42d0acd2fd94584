/* fxw-table-view.c: the Table view; sorting and filtering are models declared in the .ui. */
#define G_LOG_DOMAIN "fxw-table-view"

#include "fx-config.h"

#include <glib/gi18n.h>

#include "fxw-table-view.h"
#include "fxw-viewers.h"

struct _FxwTableView
{
  FxwView parent_instance;

  gboolean syncing;

  GtkSearchEntry *text_entry;
  GtkDropDown *op_dropdown;
  GtkSearchEntry *module_entry;
  GtkLabel *count_label;
  GtkColumnView *column_view;
  GtkSingleSelection *selection_model;
  GtkSortListModel *sort_model;
  GtkFilterListModel *filter_model;
  GtkCustomFilter *filter;
  GtkCheckButton *highlight_only;
};

G_DEFINE_FINAL_TYPE (FxwTableView, fxw_table_view, FXW_TYPE_VIEW)

static gboolean
contains_casefold (const char *haystack, const char *needle_folded)
{
  g_autofree char *folded = NULL;

  if (haystack == NULL)
    return FALSE;
  folded = g_utf8_casefold (haystack, -1);
  return strstr (folded, needle_folded) != NULL;
}

static gboolean
filter_func (gpointer item, gpointer user_data)
{
  FxwTableView *self = user_data;
  FxwSelection *selection = fxw_view_get_selection (FXW_VIEW (self));
  FxwNode *node = item;
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->text_entry));
  const char *module = gtk_editable_get_text (GTK_EDITABLE (self->module_entry));
  guint op = gtk_drop_down_get_selected (self->op_dropdown);

  if (op != GTK_INVALID_LIST_POSITION && op > 0
      && (guint) fxw_node_get_node (node)->op != op - 1)
    return FALSE;
  if (selection != NULL && fxw_selection_get_n_highlighted (selection) > 0
      && gtk_check_button_get_active (self->highlight_only)
      && !fxw_selection_is_highlighted (selection, fxw_node_get_name (node)))
    return FALSE;
  if (*module)
    {
      g_autofree char *m = g_utf8_casefold (module, -1);
      const fx_meta *meta = &fxw_node_get_node (node)->meta;
      gboolean found = FALSE;

      for (size_t i = 0; i < meta->n_nn_module_stack && !found; i++)
        found = contains_casefold (meta->nn_module_stack[i].path, m)
                || contains_casefold (meta->nn_module_stack[i].type, m);
      if (!found)
        return FALSE;
    }
  if (*text)
    {
      g_autofree char *t = g_utf8_casefold (text, -1);

      if (!contains_casefold (fxw_node_get_name (node), t)
          && !contains_casefold (fxw_node_get_target (node), t)
          && !contains_casefold (fxw_node_get_args (node), t)
          && !contains_casefold (fxw_node_get_shape (node), t))
        return FALSE;
    }
  return TRUE;
}

static void
update_count (FxwTableView *self)
{
  g_autofree char *text = NULL;
  FxwSelection *selection = fxw_view_get_selection (FXW_VIEW (self));
  FxwGraph *graph = selection ? fxw_selection_get_graph (selection) : NULL;
  guint total = graph ? fxw_graph_get_n_nodes (graph) : 0;
  guint shown = g_list_model_get_n_items (G_LIST_MODEL (self->filter_model));

  /* translators: "12 of 40 nodes" in the Table view's filter bar */
  text = g_strdup_printf (ngettext ("%u of %u node", "%u of %u nodes", total), shown, total);
  gtk_label_set_label (self->count_label, text);
}

static void
filter_changed_cb (FxwTableView *self)
{
  gtk_filter_changed (GTK_FILTER (self->filter), GTK_FILTER_CHANGE_DIFFERENT);
  update_count (self);
}

static GtkWidget *
find_list_view (GtkWidget *widget)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found;

      if (GTK_IS_LIST_VIEW (child))
        return child;
      if ((found = find_list_view (child)))
        return found;
    }
  return NULL;
}

static void
node_changed (FxwView *view)
{
  FxwTableView *self = FXW_TABLE_VIEW (view);
  FxwNode *node = fxw_selection_get_node (fxw_view_get_selection (view));
  GListModel *model = G_LIST_MODEL (self->sort_model);
  guint n = g_list_model_get_n_items (model);
  guint pos = GTK_INVALID_LIST_POSITION;

  for (guint i = 0; node != NULL && i < n; i++)
    {
      g_autoptr(FxwNode) item = g_list_model_get_item (model, i);

      if (item == node)
        {
          pos = i;
          break;
        }
    }
  self->syncing = TRUE;
  gtk_single_selection_set_selected (self->selection_model, pos);
  self->syncing = FALSE;
  if (pos != GTK_INVALID_LIST_POSITION)
    {
      GtkWidget *list = find_list_view (GTK_WIDGET (self->column_view));

      /* GTK 4.8 has no gtk_column_view_scroll_to(); its inner list view has the action. */
      if (list != NULL)
        gtk_widget_activate_action (list, "list.scroll-to-item", "u", pos);
    }
}

static void
row_selected_cb (FxwTableView *self)
{
  FxwSelection *selection = fxw_view_get_selection (FXW_VIEW (self));
  FxwNode *node;

  if (self->syncing || selection == NULL)
    return;
  node = gtk_single_selection_get_selected_item (self->selection_model);
  if (node != NULL)
    fxw_selection_set_node (selection, node);
}

static void
graph_changed (FxwView *view)
{
  FxwTableView *self = FXW_TABLE_VIEW (view);
  FxwGraph *graph = fxw_selection_get_graph (fxw_view_get_selection (view));

  gtk_filter_list_model_set_model (self->filter_model, G_LIST_MODEL (graph));
  update_count (self);
  node_changed (view);
}

static void
highlight_changed (FxwView *view)
{
  FxwTableView *self = FXW_TABLE_VIEW (view);
  gboolean any = fxw_selection_get_n_highlighted (fxw_view_get_selection (view)) > 0;

  gtk_widget_set_visible (GTK_WIDGET (self->highlight_only), any);
  filter_changed_cb (self);
}

static void
fxw_table_view_class_init (FxwTableViewClass *klass)
{
  FxwViewClass *view_class = FXW_VIEW_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  view_class->graph_changed = graph_changed;
  view_class->node_changed = node_changed;
  view_class->highlight_changed = highlight_changed;
  fxw_viewers_class_set_template (widget_class, "fxw-table-view.ui");
  gtk_widget_class_set_css_name (widget_class, "fxwtableview");
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, text_entry);
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, op_dropdown);
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, module_entry);
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, count_label);
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, column_view);
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, selection_model);
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, sort_model);
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, filter_model);
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, filter);
  gtk_widget_class_bind_template_child (widget_class, FxwTableView, highlight_only);
  gtk_widget_class_bind_template_callback (widget_class, filter_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, row_selected_cb);
}

static void
fxw_table_view_init (FxwTableView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_custom_filter_set_filter_func (self->filter, filter_func, self, NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->highlight_only), FALSE);
  /* Graph order until the user clicks a header (column 0 is the highlight mark, column 1 the index). */
  {
    g_autoptr(GtkColumnViewColumn) first =
      g_list_model_get_item (gtk_column_view_get_columns (self->column_view), 1);
    gtk_column_view_sort_by_column (self->column_view, first, GTK_SORT_ASCENDING);
  }
}

guint
fxw_table_view_get_n_rows (FxwTableView *self)
{
  g_return_val_if_fail (FXW_IS_TABLE_VIEW (self), 0);
  return g_list_model_get_n_items (G_LIST_MODEL (self->sort_model));
}

/* Returns: (transfer none) (nullable) */
FxwNode *
fxw_table_view_get_row (FxwTableView *self, guint position)
{
  g_return_val_if_fail (FXW_IS_TABLE_VIEW (self), NULL);
  return fxw_viewers_peek_item (G_LIST_MODEL (self->sort_model), position);  /* the graph keeps it alive */
}

void
fxw_table_view_set_filter (FxwTableView *self, const char *text, const char *opcode, const char *module)
{
  fx_opcode op;

  g_return_if_fail (FXW_IS_TABLE_VIEW (self));
  gtk_editable_set_text (GTK_EDITABLE (self->text_entry), text ? text : "");
  gtk_editable_set_text (GTK_EDITABLE (self->module_entry), module ? module : "");
  gtk_drop_down_set_selected (self->op_dropdown,
                              opcode && fx_opcode_from_name (opcode, &op) ? (guint) op + 1 : 0);
  filter_changed_cb (self);
}

/* Rows shown with the highlight mark (nodes of the selection's highlight set). */
guint
fxw_table_view_get_n_marked_rows (FxwTableView *self)
{
  GListModel *model;
  guint n = 0;

  g_return_val_if_fail (FXW_IS_TABLE_VIEW (self), 0);
  model = G_LIST_MODEL (self->sort_model);
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(FxwNode) node = g_list_model_get_item (model, i);

      n += fxw_node_get_highlighted (node);
    }
  return n;
}

/* Shows every row or only the highlighted ones (the "Only highlighted" check, on by default). */
void
fxw_table_view_set_highlighted_only (FxwTableView *self, gboolean only)
{
  g_return_if_fail (FXW_IS_TABLE_VIEW (self));
  gtk_check_button_set_active (self->highlight_only, only);
}

/* What the check names the highlighted nodes ("Kernel nodes only" by default). */
void
fxw_table_view_set_highlighted_label (FxwTableView *self, const char *label)
{
  g_return_if_fail (FXW_IS_TABLE_VIEW (self));
  gtk_check_button_set_label (self->highlight_only, label);
}
