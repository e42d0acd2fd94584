/* fxw-graph-view.c: the Graph view; its actions forward to the canvas so the overlay buttons reach it. */
#define G_LOG_DOMAIN "fxw-graph-view"

#include "fx-config.h"

#include "fxw-graph-view.h"
#include "fxw-viewers.h"

struct _FxwGraphView
{
  GtkWidget parent_instance;
  FxwGraphCanvas *canvas;
  GtkToggleButton *fusion_toggle;
  gboolean has_kernels, has_groups;
};

G_DEFINE_FINAL_TYPE (FxwGraphView, fxw_graph_view, GTK_TYPE_WIDGET)

static void
forward_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwGraphView *self = FXW_GRAPH_VIEW (widget);
  g_autofree char *target = g_strconcat ("canvas.", strchr (name, '.') + 1, NULL);

  gtk_widget_activate_action (GTK_WIDGET (self->canvas), target, NULL);
}

static void
fusion_toggled_cb (FxwGraphView *self)
{
  fxw_graph_canvas_set_show_fusion (self->canvas, gtk_toggle_button_get_active (self->fusion_toggle));
}

static void
fxw_graph_view_dispose (GObject *object)
{
  fxw_viewers_dispose_template (GTK_WIDGET (object), FXW_TYPE_GRAPH_VIEW);
  G_OBJECT_CLASS (fxw_graph_view_parent_class)->dispose (object);
}

static void
fxw_graph_view_class_init (FxwGraphViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = fxw_graph_view_dispose;
  g_type_ensure (FXW_TYPE_GRAPH_CANVAS);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (widget_class, "/org/fxworkbench/viewers/fxw-graph-view.ui");
  gtk_widget_class_bind_template_child (widget_class, FxwGraphView, canvas);
  gtk_widget_class_bind_template_child (widget_class, FxwGraphView, fusion_toggle);
  gtk_widget_class_bind_template_callback (widget_class, fusion_toggled_cb);
  gtk_widget_class_install_action (widget_class, "graph.zoom-in", NULL, forward_action);
  gtk_widget_class_install_action (widget_class, "graph.zoom-out", NULL, forward_action);
  gtk_widget_class_install_action (widget_class, "graph.fit", NULL, forward_action);
  gtk_widget_class_install_action (widget_class, "graph.expand-all", NULL, forward_action);
  gtk_widget_class_install_action (widget_class, "graph.collapse-all", NULL, forward_action);
}

static void
fxw_graph_view_init (FxwGraphView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
fxw_graph_view_new (void)
{
  return g_object_new (FXW_TYPE_GRAPH_VIEW, NULL);
}

FxwGraphCanvas *
fxw_graph_view_get_canvas (FxwGraphView *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH_VIEW (self), NULL);
  return self->canvas;
}

void
fxw_graph_view_set_selection (FxwGraphView *self, FxwSelection *selection)
{
  g_return_if_fail (FXW_IS_GRAPH_VIEW (self));
  fxw_graph_canvas_set_selection (self->canvas, selection);
}

void
fxw_graph_view_set_kernels (FxwGraphView *self, GListModel *kernels, gboolean by_name)
{
  g_return_if_fail (FXW_IS_GRAPH_VIEW (self));
  fxw_graph_canvas_set_kernels (self->canvas, kernels, by_name);
  self->has_kernels = kernels != NULL && g_list_model_get_n_items (kernels) > 0;
  gtk_widget_set_sensitive (GTK_WIDGET (self->fusion_toggle), self->has_kernels || self->has_groups);
}

void
fxw_graph_view_set_fusion_groups (FxwGraphView *self, GListModel *groups, gboolean on_this_graph)
{
  g_return_if_fail (FXW_IS_GRAPH_VIEW (self));
  fxw_graph_canvas_set_fusion_groups (self->canvas, groups, on_this_graph);
  self->has_groups = groups != NULL && g_list_model_get_n_items (groups) > 0;
  gtk_widget_set_sensitive (GTK_WIDGET (self->fusion_toggle), self->has_kernels || self->has_groups);
}

void
fxw_graph_view_set_fusion_overlay (FxwGraphView *self, gboolean show)
{
  g_return_if_fail (FXW_IS_GRAPH_VIEW (self));
  gtk_toggle_button_set_active (self->fusion_toggle, show);
}

gboolean
fxw_graph_view_get_fusion_overlay (FxwGraphView *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH_VIEW (self), FALSE);
  return gtk_toggle_button_get_active (self->fusion_toggle);
}
