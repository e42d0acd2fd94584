/* fxw-viewers.c: registers the viewers' resources and types; linking a static library keeps only what is referenced. */
#define G_LOG_DOMAIN "fxw-viewers"

#include "fx-config.h"

#include <adwaita.h>
#include <gtksourceview/gtksource.h>

#include "fxw-viewers.h"
#include "fxw-viewers-resources.h"

void
fxw_viewers_init (void)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      g_resources_register (fxw_viewers_get_resource ());
      g_type_ensure (FXW_TYPE_GRAPH);
      g_type_ensure (FXW_TYPE_NODE);
      g_type_ensure (FXW_TYPE_SELECTION);
      g_type_ensure (FXW_TYPE_TABLE_VIEW);
      g_type_ensure (FXW_TYPE_TRAINING_VIEW);
      g_type_ensure (FXW_TYPE_CODE_VIEW);
      g_type_ensure (FXW_TYPE_GRAPH_CANVAS);
      g_type_ensure (FXW_TYPE_GRAPH_VIEW);
      g_type_ensure (FXW_TYPE_PROVENANCE_PANE);
      g_type_ensure (FXW_TYPE_KERNEL);
      g_type_ensure (FXW_TYPE_RUN);
      g_type_ensure (FXW_TYPE_KERNELS_VIEW);
      g_type_ensure (FXW_TYPE_COMPARE_VIEW);
      g_type_ensure (FXW_TYPE_DIFF_CANVAS);
      g_type_ensure (FXW_TYPE_DIFF_VIEW);
      g_type_ensure (FXW_TYPE_SUMMARY_VIEW);
      g_type_ensure (FXW_TYPE_RANKS_VIEW);
      /* and what the views' templates name besides them */
      g_type_ensure (GTK_SOURCE_TYPE_VIEW);
      g_type_ensure (ADW_TYPE_STATUS_PAGE);
      g_once_init_leave (&once, 1);
    }
}

/* Marks the types whose class has a template: GTK 4.8 has no call that says so. */
static G_DEFINE_QUARK (fxw-viewers-template, template)

void
fxw_viewers_class_set_template (GtkWidgetClass *widget_class, const char *ui_file)
{
  g_autofree char *path = g_strconcat ("/org/fxworkbench/viewers/", ui_file, NULL);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (widget_class, path);
  g_type_set_qdata (G_TYPE_FROM_CLASS (widget_class), template_quark (), GINT_TO_POINTER (TRUE));
}

void
fxw_viewers_dispose_template (GtkWidget *widget, GType widget_type)
{
  GtkWidget *child;

  if (g_type_get_qdata (widget_type, template_quark ()) == NULL)
    return;
  gtk_widget_dispose_template (widget, widget_type);
  while ((child = gtk_widget_get_first_child (widget)) != NULL)
    gtk_widget_unparent (child);
}

void
fxw_viewers_remove_children (GtkWidget *container, GtkWidget *scope)
{
  GtkRoot *root = gtk_widget_get_root (container);
  GtkWidget *focus = root != NULL ? gtk_root_get_focus (root) : NULL;
  GtkWidget *child;

  if (focus != NULL && gtk_widget_is_ancestor (focus, scope))
    gtk_root_set_focus (root, NULL);
  while ((child = gtk_widget_get_first_child (container)) != NULL)
    gtk_widget_unparent (child);
}

GtkWidget *
fxw_viewers_add_label (GtkBox *box, const char *text, const char *css_class)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (label), css_class == NULL || g_str_equal (css_class, "monospace"));
  if (css_class != NULL)
    gtk_widget_add_css_class (label, css_class);
  gtk_box_append (box, label);
  return label;
}

void
fxw_viewers_rounded_rect (cairo_t *cr, double x, double y, double w, double h, double r)
{
  cairo_new_sub_path (cr);
  cairo_arc (cr, x + w - r, y + r, r, -G_PI / 2, 0);
  cairo_arc (cr, x + w - r, y + h - r, r, 0, G_PI / 2);
  cairo_arc (cr, x + r, y + h - r, r, G_PI / 2, G_PI);
  cairo_arc (cr, x + r, y + r, r, G_PI, 3 * G_PI / 2);
  cairo_close_path (cr);
}

gpointer
fxw_viewers_peek_item (GListModel *model, guint position)
{
  g_autoptr(GObject) item = g_list_model_get_item (model, position);

  return item;
}

gboolean
fxw_viewers_click (GtkWidget *button)
{
  if (button == NULL)
    return FALSE;
  g_signal_emit_by_name (button, "clicked");
  return TRUE;
}
