/* fxw-kernels-view.c: the Kernels view. A kernel's source node names become links that select the node; a node
 * selected elsewhere marks the kernels that compute it ("which kernel did my node end up in"). */
#define G_LOG_DOMAIN "fxw-kernels-view"

#include "fx-config.h"

#include <math.h>
#include <adwaita.h>
#include <glib/gi18n.h>
#include <gtksourceview/gtksource.h>

#include "fxw-kernels-view.h"
#include "fxw-viewers.h"

struct _FxwKernelsView
{
  FxwView parent_instance;

  gboolean by_name;
  const char *language;

  GtkStack *stack;
  GtkLabel *node_label;
  GtkColumnView *column_view;
  GtkSingleSelection *selection_model;
  GtkSortListModel *sorted;       /* the kernels (it holds them) in the order of the column the user sorts by */
  GtkLabel *title_label;
  GtkLabel *aten_label;
  GtkLabel *nodes_label;
  GtkSourceView *source_view;
  GtkExpander *autotune_expander;
  GtkLabel *autotune_label;
  gboolean has_autotune;
};

enum { OPEN_NODE, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (FxwKernelsView, fxw_kernels_view, FXW_TYPE_VIEW)

typedef char *(*CellText) (FxwKernel *kernel);

static char *
cell_name (FxwKernel *kernel)
{
  return g_strdup (fxw_kernel_get_name (kernel));
}

static char *
cell_kind (FxwKernel *kernel)
{
  return g_strdup (fxw_kernel_get_kind (kernel));
}

static char *
cell_device (FxwKernel *kernel)
{
  return g_strdup (fxw_kernel_get_device (kernel));
}

static char *
cell_nodes (FxwKernel *kernel)
{
  return g_strdup_printf ("%u", fxw_kernel_get_n_nodes (kernel));
}

static char *
cell_time (FxwKernel *kernel)
{
  double ms = fxw_kernel_get_time_ms (kernel);

  /* translators: a kernel time that was not measured */
  return isnan (ms) ? g_strdup (C_("time", "—")) : g_strdup_printf ("%.3f ms", ms);
}

static void
cell_setup_cb (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_set_hexpand (label, TRUE);
  if (data == cell_name)
    {
      /* The mark of a kernel that computes the selected node. */
      GtkWidget *mark = gtk_image_new_from_icon_name ("media-record-symbolic");

      gtk_widget_add_css_class (mark, "accent");
      gtk_widget_set_tooltip_text (mark, _("Computes the selected node"));
      gtk_box_append (GTK_BOX (box), mark);
    }
  else if (data == cell_nodes || data == cell_time)
    {
      gtk_label_set_xalign (GTK_LABEL (label), 1);
      gtk_widget_add_css_class (label, "numeric");
    }
  gtk_box_append (GTK_BOX (box), label);
  gtk_list_item_set_child (item, box);
}

static void
cell_bind_cb (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  CellText text_fn = (CellText) data;
  FxwKernel *kernel = gtk_list_item_get_item (item);
  GtkWidget *box = gtk_list_item_get_child (item);
  GtkWidget *label = gtk_widget_get_last_child (box);
  g_autofree char *text = text_fn (kernel);

  gtk_label_set_label (GTK_LABEL (label), text);
  if (text_fn == cell_name)
    {
      GBinding *binding = g_object_bind_property (kernel, "marked", gtk_widget_get_first_child (box), "visible",
                                                  G_BINDING_SYNC_CREATE);

      g_object_set_data (G_OBJECT (item), "fxw-binding", binding);
    }
}

static void
cell_unbind_cb (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GBinding *binding = g_object_get_data (G_OBJECT (item), "fxw-binding");

  if (binding != NULL)
    g_binding_unbind (binding);
  g_object_set_data (G_OBJECT (item), "fxw-binding", NULL);
}

/* Column sorters: text columns by their text, numbers by value; an unmeasured time sorts after every measured one. */
static int
compare_kernels (gconstpointer a, gconstpointer b, gpointer data)
{
  FxwKernel *ka = (FxwKernel *) a, *kb = (FxwKernel *) b;
  CellText text_fn = (CellText) data;

  if (text_fn == cell_nodes)
    return (int) fxw_kernel_get_n_nodes (ka) - (int) fxw_kernel_get_n_nodes (kb);
  if (text_fn == cell_time)
    {
      double ta = fxw_kernel_get_time_ms (ka), tb = fxw_kernel_get_time_ms (kb);

      if (isnan (ta) || isnan (tb))
        return isnan (ta) - isnan (tb);
      return ta < tb ? -1 : ta > tb;
    }
  {
    g_autofree char *sa = text_fn (ka);
    g_autofree char *sb = text_fn (kb);
    int c = g_utf8_collate (sa, sb);

    return c != 0 ? c : fxw_kernel_get_ordinal (ka) - fxw_kernel_get_ordinal (kb);
  }
}

static void
add_column (FxwKernelsView *self, const char *title, CellText text_fn, gboolean expand)
{
  g_autoptr(GtkSorter) sorter = GTK_SORTER (gtk_custom_sorter_new (compare_kernels, text_fn, NULL));
  g_autoptr(GtkListItemFactory) factory = gtk_signal_list_item_factory_new ();
  g_autoptr(GtkColumnViewColumn) column = NULL;

  g_signal_connect (factory, "setup", G_CALLBACK (cell_setup_cb), text_fn);
  g_signal_connect (factory, "bind", G_CALLBACK (cell_bind_cb), text_fn);
  g_signal_connect (factory, "unbind", G_CALLBACK (cell_unbind_cb), text_fn);
  column = gtk_column_view_column_new (title, g_object_ref (factory));
  gtk_column_view_column_set_expand (column, expand);
  gtk_column_view_column_set_resizable (column, TRUE);
  gtk_column_view_column_set_sorter (column, sorter);
  gtk_column_view_append_column (self->column_view, column);
}

static FxwGraph *
current_graph (FxwKernelsView *self)
{
  FxwSelection *selection = fxw_view_get_selection (FXW_VIEW (self));

  return selection != NULL ? fxw_selection_get_graph (selection) : NULL;
}

static void
show_kernel (FxwKernelsView *self, FxwKernel *kernel)
{
  FxwSelection *selection = fxw_view_get_selection (FXW_VIEW (self));
  GtkSourceBuffer *buffer = GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->source_view)));
  GtkSourceLanguageManager *languages = gtk_source_language_manager_get_default ();
  g_auto(GStrv) covered = NULL;
  g_autoptr(GString) links = g_string_new (NULL);
  const char * const *nodes;

  if (kernel == NULL)
    {
      gtk_label_set_label (self->title_label, _("Select a kernel to see its source and the nodes it covers."));
      gtk_label_set_label (self->aten_label, "");
      gtk_label_set_label (self->nodes_label, "");
      gtk_text_buffer_set_text (GTK_TEXT_BUFFER (buffer), "", 0);
      self->language = NULL;
      if (selection != NULL)
        fxw_selection_set_highlight (selection, NULL);
      return;
    }

  gtk_label_set_label (self->title_label, fxw_kernel_get_name (kernel));
  {
    /* translators: the kernel's kind, device and the ATen operators it computes */
    g_autofree char *aten = g_strdup_printf (_("%s kernel on %s · ATen: %s"), fxw_kernel_get_kind (kernel),
                                             *fxw_kernel_get_device (kernel) ? fxw_kernel_get_device (kernel) : "?",
                                             *fxw_kernel_get_aten (kernel) ? fxw_kernel_get_aten (kernel) : "—");
    gtk_label_set_label (self->aten_label, aten);
  }

  /* The links' targets are indices into the kernel's node list: names come from a file and stay out of URIs. */
  nodes = fxw_kernel_get_nodes (kernel);
  g_string_append (links, _("Covers:"));
  for (guint i = 0; nodes[i] != NULL; i++)
    {
      g_autofree char *esc = g_markup_escape_text (nodes[i], -1);

      g_string_append_printf (links, " <a href=\"%u\">%s</a>", i, esc);
    }
  if (nodes[0] == NULL)
    g_string_append_printf (links, " <i>%s</i>", _("no source node named"));
  gtk_label_set_markup (self->nodes_label, links->str);

  if (g_str_equal (fxw_kernel_get_kind (kernel), "cpp"))
    self->language = "cpp";
  else
    self->language = "python3";   /* Triton kernels and extern calls are Python source */
  gtk_source_buffer_set_language (buffer, gtk_source_language_manager_get_language (languages, self->language));
  gtk_text_buffer_set_text (GTK_TEXT_BUFFER (buffer), fxw_kernel_get_code (kernel), -1);

  covered = fxw_kernel_dup_covered (kernel, current_graph (self), self->by_name);
  if (selection != NULL)
    fxw_selection_set_highlight (selection, (const char * const *) covered);
}

static void
kernel_selected_cb (FxwKernelsView *self)
{
  show_kernel (self, gtk_single_selection_get_selected_item (self->selection_model));
}

static gboolean
node_link_cb (FxwKernelsView *self, const char *uri)
{
  FxwKernel *kernel = fxw_kernels_view_get_selected (self);
  guint64 index;

  if (kernel == NULL || !g_ascii_string_to_unsigned (uri, 10, 0, G_MAXUINT, &index, NULL)
      || index >= fxw_kernel_get_n_nodes (kernel))
    return TRUE;
  fxw_kernels_view_activate_node (self, fxw_kernel_get_nodes (kernel)[index]);
  return TRUE;
}

/* Marks the kernels computing the selected node and says which they are. */
static void
node_changed (FxwView *view)
{
  FxwKernelsView *self = FXW_KERNELS_VIEW (view);
  FxwSelection *selection = fxw_view_get_selection (view);
  FxwNode *node = selection != NULL ? fxw_selection_get_node (selection) : NULL;
  GListModel *shown = G_LIST_MODEL (self->sorted);
  guint n = g_list_model_get_n_items (shown);
  g_autoptr(GString) names = g_string_new (NULL);
  guint n_marked = 0, first = G_MAXUINT;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(FxwKernel) kernel = g_list_model_get_item (shown, i);
      gboolean covers = node != NULL && fxw_kernel_covers (kernel, node, self->by_name);

      fxw_kernel_set_marked (kernel, covers);
      if (covers)
        {
          g_string_append_printf (names, "%s%s", n_marked ? ", " : "", fxw_kernel_get_name (kernel));
          if (first == G_MAXUINT)
            first = i;
          n_marked++;
        }
    }
  if (node == NULL)
    gtk_label_set_label (self->node_label, _("Select a node to see which kernel computes it."));
  else if (n_marked == 0)
    {
      g_autofree char *text = g_strdup_printf (_("Node %s is in no kernel of this compile."),
                                               fxw_node_get_name (node));
      gtk_label_set_label (self->node_label, text);
    }
  else
    {
      /* translators: the selected node, then the kernel names */
      g_autofree char *text = g_strdup_printf (ngettext ("Node %s is computed by %s", "Node %s is computed by %s",
                                                         n_marked),
                                               fxw_node_get_name (node), names->str);
      gtk_label_set_label (self->node_label, text);
      gtk_widget_activate_action (GTK_WIDGET (self->column_view), "list.scroll-to-item", "u", first);
    }
}

static void
graph_changed (FxwView *view)
{
  /* The selection drops its highlight with the graph; the kernel's covered nodes are those of the new graph. */
  kernel_selected_cb (FXW_KERNELS_VIEW (view));
  node_changed (view);
}

static void
fxw_kernels_view_class_init (FxwKernelsViewClass *klass)
{
  FxwViewClass *view_class = FXW_VIEW_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  view_class->graph_changed = graph_changed;
  view_class->node_changed = node_changed;

  /**
   * FxwKernelsView::open-node:
   * @name: a source node name of the selected kernel
   *
   * A covered node's link was followed while the graph on show is not the one the kernel's names refer to.
   */
  signals[OPEN_NODE] = g_signal_new ("open-node", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                     NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  fxw_viewers_class_set_template (widget_class, "fxw-kernels-view.ui");
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, stack);
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, node_label);
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, autotune_expander);
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, autotune_label);
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, column_view);
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, selection_model);
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, title_label);
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, aten_label);
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, nodes_label);
  gtk_widget_class_bind_template_child (widget_class, FxwKernelsView, source_view);
  gtk_widget_class_bind_template_callback (widget_class, kernel_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, node_link_cb);
}

static void
fxw_kernels_view_init (FxwKernelsView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  add_column (self, _("Kernel"), cell_name, TRUE);
  add_column (self, _("Kind"), cell_kind, FALSE);
  add_column (self, _("Device"), cell_device, FALSE);
  add_column (self, _("Nodes"), cell_nodes, FALSE);
  add_column (self, _("Time"), cell_time, FALSE);
  /* The selection model owns the sort model; its sorter follows the clicked column header. */
  self->sorted = gtk_sort_list_model_new (NULL, g_object_ref (gtk_column_view_get_sorter (self->column_view)));
  gtk_single_selection_set_model (self->selection_model, G_LIST_MODEL (self->sorted));
  g_object_unref (self->sorted);
  gtk_stack_set_visible_child_name (self->stack, "empty");
  show_kernel (self, NULL);
  node_changed (FXW_VIEW (self));
}

/* The list when there are kernels or an autotune table to show, else the empty page. */
static void
show_page (FxwKernelsView *self)
{
  gboolean any = g_list_model_get_n_items (G_LIST_MODEL (self->sorted)) > 0;

  gtk_stack_set_visible_child_name (self->stack, any || self->has_autotune ? "kernels" : "empty");
}

void
fxw_kernels_view_set_kernels (FxwKernelsView *self, GListModel *kernels, gboolean by_name)
{
  g_return_if_fail (FXW_IS_KERNELS_VIEW (self));

  self->by_name = by_name;
  /* Another stage of the same compile keeps the kernel selected: its covered nodes are looked up anew. */
  if (gtk_sort_list_model_get_model (self->sorted) != kernels)
    {
      gtk_sort_list_model_set_model (self->sorted, kernels);
      gtk_single_selection_set_selected (self->selection_model, GTK_INVALID_LIST_POSITION);
    }
  show_page (self);
  kernel_selected_cb (self);
  node_changed (FXW_VIEW (self));
}

void
fxw_kernels_view_set_autotune (FxwKernelsView *self, const char *table)
{
  g_return_if_fail (FXW_IS_KERNELS_VIEW (self));

  self->has_autotune = table != NULL && *table != '\0';
  gtk_label_set_label (self->autotune_label, self->has_autotune ? table : "");
  gtk_widget_set_visible (GTK_WIDGET (self->autotune_expander), self->has_autotune);
  show_page (self);
}

const char *
fxw_kernels_view_get_autotune (FxwKernelsView *self)
{
  g_return_val_if_fail (FXW_IS_KERNELS_VIEW (self), NULL);
  return self->has_autotune ? gtk_label_get_label (self->autotune_label) : NULL;
}

guint
fxw_kernels_view_get_n_kernels (FxwKernelsView *self)
{
  g_return_val_if_fail (FXW_IS_KERNELS_VIEW (self), 0);
  return g_list_model_get_n_items (G_LIST_MODEL (self->sorted));
}

void
fxw_kernels_view_select (FxwKernelsView *self, guint position)
{
  g_return_if_fail (FXW_IS_KERNELS_VIEW (self));
  gtk_single_selection_set_selected (self->selection_model,
                                     position == G_MAXUINT ? GTK_INVALID_LIST_POSITION : position);
}

FxwKernel *
fxw_kernels_view_get_selected (FxwKernelsView *self)
{
  g_return_val_if_fail (FXW_IS_KERNELS_VIEW (self), NULL);
  return gtk_single_selection_get_selected_item (self->selection_model);
}

char *
fxw_kernels_view_dup_source (FxwKernelsView *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->source_view));
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

const char *
fxw_kernels_view_get_language (FxwKernelsView *self)
{
  return self->language;
}

gboolean
fxw_kernels_view_activate_node (FxwKernelsView *self, const char *name)
{
  FxwKernel *kernel = fxw_kernels_view_get_selected (self);
  FxwGraph *graph = current_graph (self);
  const char * const *nodes;
  gboolean known = FALSE;

  g_return_val_if_fail (FXW_IS_KERNELS_VIEW (self), FALSE);
  if (kernel == NULL || name == NULL)
    return FALSE;
  nodes = fxw_kernel_get_nodes (kernel);
  for (guint i = 0; nodes[i] != NULL && !known; i++)
    known = g_str_equal (nodes[i], name);
  if (!known)
    return FALSE;

  if (graph != NULL && self->by_name && fxw_graph_lookup (graph, name) != NULL)
    {
      fxw_selection_set_node (fxw_view_get_selection (FXW_VIEW (self)), fxw_graph_lookup (graph, name));
      return TRUE;
    }
  /* A later stage: the first node whose from_node chain leads to name. */
  if (graph != NULL && !self->by_name)
    {
      g_autoptr(FxwKernel) probe = fxw_kernel_new (0, "", "", "", "", name, "", NAN);

      for (guint i = 0; i < fxw_graph_get_n_nodes (graph); i++)
        if (fxw_kernel_covers (probe, fxw_graph_get_node (graph, i), FALSE))
          {
            fxw_selection_set_node (fxw_view_get_selection (FXW_VIEW (self)), fxw_graph_get_node (graph, i));
            return TRUE;
          }
    }
  g_signal_emit (self, signals[OPEN_NODE], 0, name);
  return TRUE;
}

guint
fxw_kernels_view_get_n_marked (FxwKernelsView *self)
{
  guint n = 0;

  g_return_val_if_fail (FXW_IS_KERNELS_VIEW (self), 0);
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->sorted)); i++)
    {
      g_autoptr(FxwKernel) kernel = g_list_model_get_item (G_LIST_MODEL (self->sorted), i);

      n += fxw_kernel_get_marked (kernel);
    }
  return n;
}

void
fxw_kernels_view_sort_by (FxwKernelsView *self, guint column, GtkSortType order)
{
  g_autoptr(GtkColumnViewColumn) col = NULL;

  g_return_if_fail (FXW_IS_KERNELS_VIEW (self));
  if (column != G_MAXUINT)
    {
      col = g_list_model_get_item (gtk_column_view_get_columns (self->column_view), column);
      g_return_if_fail (col != NULL);
    }
  gtk_column_view_sort_by_column (self->column_view, col, order);
}

FxwKernel *
fxw_kernels_view_get_shown (FxwKernelsView *self, guint position)
{
  g_return_val_if_fail (FXW_IS_KERNELS_VIEW (self), NULL);
  return fxw_viewers_peek_item (G_LIST_MODEL (self->sorted), position);   /* the sort model holds it */
}
