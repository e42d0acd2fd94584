/* fxw-graph-view.c: the Graph view; its actions forward to the canvas so the overlay buttons reach it. */
#define G_LOG_DOMAIN "fxw-graph-view"

#include "fx-config.h"

#include <glib/gi18n.h>
#include <adwaita.h>

#include "fxw-graph-view.h"
#include "fxw-viewers.h"

struct _FxwGraphView
{
  FxwView parent_instance;
  FxwGraphCanvas *canvas;
  GtkToggleButton *fusion_toggle;
  GtkToggleButton *heat_toggle;
  AdwToastOverlay *toasts;
  GtkSearchBar *search_bar;
  GtkSearchEntry *search_entry;
  GtkFileChooserNative *chooser;
  gboolean has_kernels, has_groups;
};

G_DEFINE_FINAL_TYPE (FxwGraphView, fxw_graph_view, FXW_TYPE_VIEW)

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
heat_toggled_cb (FxwGraphView *self)
{
  fxw_graph_canvas_set_show_heat (self->canvas, gtk_toggle_button_get_active (self->heat_toggle));
}

static void
search (FxwGraphView *self, gboolean next)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  gboolean found = fxw_graph_canvas_search (self->canvas, text, next);

  if (found || *text == '\0')
    gtk_widget_remove_css_class (GTK_WIDGET (self->search_entry), "error");
  else
    gtk_widget_add_css_class (GTK_WIDGET (self->search_entry), "error");
}

static void
search_changed_cb (FxwGraphView *self)
{
  search (self, FALSE);
}

static void
search_next_cb (FxwGraphView *self)
{
  search (self, TRUE);
}

static void
search_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwGraphView *self = FXW_GRAPH_VIEW (widget);

  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
export_response_cb (GtkNativeDialog *dialog, int response, FxwGraphView *self)
{
  g_autoptr(GFile) file = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;

  if (response == GTK_RESPONSE_ACCEPT)
    file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
  g_clear_object (&self->chooser);
  if (file == NULL || (path = g_file_get_path (file)) == NULL)
    return;
  fxw_graph_view_export (self, path, &error);
}

static void
export_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwGraphView *self = FXW_GRAPH_VIEW (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  g_autoptr(GtkFileFilter) svg = gtk_file_filter_new ();
  g_autoptr(GtkFileFilter) png = gtk_file_filter_new ();

  if (self->chooser != NULL)
    return;
  self->chooser = gtk_file_chooser_native_new (_("Export Graph as SVG/PNG"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                               GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), NULL);
  gtk_file_filter_set_name (svg, _("SVG image"));
  gtk_file_filter_add_suffix (svg, "svg");
  gtk_file_filter_set_name (png, _("PNG image"));
  gtk_file_filter_add_suffix (png, "png");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), svg);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), png);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->chooser), "graph.svg");
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (self->chooser), TRUE);
  g_signal_connect (self->chooser, "response", G_CALLBACK (export_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
fxw_graph_view_dispose (GObject *object)
{
  FxwGraphView *self = FXW_GRAPH_VIEW (object);

  if (self->chooser != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->chooser, self);
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
      g_clear_object (&self->chooser);
    }
  G_OBJECT_CLASS (fxw_graph_view_parent_class)->dispose (object);
}

/* The canvas draws the selection and follows it itself. */
static void
selection_changed (FxwView *view)
{
  fxw_graph_canvas_set_selection (FXW_GRAPH_VIEW (view)->canvas, fxw_view_get_selection (view));
}

static void
fxw_graph_view_class_init (FxwGraphViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = fxw_graph_view_dispose;
  FXW_VIEW_CLASS (klass)->selection_changed = selection_changed;
  fxw_viewers_class_set_template (widget_class, "fxw-graph-view.ui");
  gtk_widget_class_bind_template_child (widget_class, FxwGraphView, canvas);
  gtk_widget_class_bind_template_child (widget_class, FxwGraphView, fusion_toggle);
  gtk_widget_class_bind_template_child (widget_class, FxwGraphView, toasts);
  gtk_widget_class_bind_template_child (widget_class, FxwGraphView, search_bar);
  gtk_widget_class_bind_template_child (widget_class, FxwGraphView, search_entry);
  gtk_widget_class_bind_template_callback (widget_class, fusion_toggled_cb);
  gtk_widget_class_bind_template_child (widget_class, FxwGraphView, heat_toggle);
  gtk_widget_class_bind_template_callback (widget_class, heat_toggled_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, search_next_cb);
  gtk_widget_class_install_action (widget_class, "graph.search", NULL, search_action);
  gtk_widget_class_install_action (widget_class, "graph.export", NULL, export_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_f, GDK_CONTROL_MASK, "graph.search", NULL);
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
  gtk_search_bar_connect_entry (self->search_bar, GTK_EDITABLE (self->search_entry));
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
fxw_graph_view_set_kernels (FxwGraphView *self, GListModel *kernels, gboolean by_name)
{
  g_return_if_fail (FXW_IS_GRAPH_VIEW (self));
  fxw_graph_canvas_set_kernels (self->canvas, kernels, by_name);
  self->has_kernels = kernels != NULL && g_list_model_get_n_items (kernels) > 0;
  gtk_widget_set_sensitive (GTK_WIDGET (self->heat_toggle), self->has_kernels);
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

gboolean
fxw_graph_view_search (FxwGraphView *self, const char *text)
{
  g_return_val_if_fail (FXW_IS_GRAPH_VIEW (self), FALSE);
  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  gtk_editable_set_text (GTK_EDITABLE (self->search_entry), text);
  return fxw_graph_canvas_search (self->canvas, text, FALSE);
}

gboolean
fxw_graph_view_get_search_mode (FxwGraphView *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH_VIEW (self), FALSE);
  return gtk_search_bar_get_search_mode (self->search_bar);
}

gboolean
fxw_graph_view_export (FxwGraphView *self, const char *path, GError **error)
{
  g_autofree char *message = NULL;
  g_autoptr(GError) local = NULL;
  gboolean ok;

  g_return_val_if_fail (FXW_IS_GRAPH_VIEW (self), FALSE);
  ok = fxw_graph_canvas_export (self->canvas, path, &local);
  /* translators: a toast after File → Export Graph; %s is the file */
  message = ok ? g_strdup_printf (_("Graph exported to %s"), path) : g_strdup (local->message);
  adw_toast_overlay_add_toast (self->toasts, adw_toast_new (message));
  if (!ok)
    g_propagate_error (error, g_steal_pointer (&local));
  return ok;
}

void
fxw_graph_view_set_heat_overlay (FxwGraphView *self, gboolean show)
{
  g_return_if_fail (FXW_IS_GRAPH_VIEW (self));
  gtk_toggle_button_set_active (self->heat_toggle, show);
}
