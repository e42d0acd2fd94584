/* fxw-viewers.c: registers the viewers' resources and types; linking a static library keeps only what is referenced. */
#define G_LOG_DOMAIN "fxw-viewers"

#include "fx-config.h"

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
      g_once_init_leave (&once, 1);
    }
}

void
fxw_viewers_class_set_template (GtkWidgetClass *widget_class, const char *ui_file)
{
  g_autofree char *path = g_strconcat ("/org/fxworkbench/viewers/", ui_file, NULL);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource (widget_class, path);
}

void
fxw_viewers_dispose_template (GtkWidget *widget, GType widget_type)
{
  GtkWidget *child;

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

/* ---------------------------------------------------------------- reading a workspace for a view */

typedef struct
{
  char *path;
  FxwWorkspaceRead *r;
} ReadTask;

static void
read_task_free (gpointer p)
{
  ReadTask *t = p;

  g_free (t->path);
  g_free (t);
}

static void
workspace_read_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ReadTask *t = task_data;
  GError *error = NULL;
  gpointer data = t->r->hooks->read (t->path, cancellable, &error);

  if (data == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, data, t->r->hooks->free);
}

static void
workspace_read_clear (FxwWorkspaceRead *r, gpointer view)
{
  fxw_viewers_remove_children (GTK_WIDGET (r->column), view);
  g_string_truncate (r->text, 0);
  if (r->hooks->clear != NULL)
    r->hooks->clear (view);
}

static void
workspace_read_show (FxwWorkspaceRead *r, gpointer view, gpointer data)
{
  gboolean any;

  workspace_read_clear (r, view);
  any = data != NULL && r->hooks->show (view, data);
  gtk_stack_set_visible_child_name (r->stack, any ? r->hooks->what : "empty");
}

static void
workspace_read_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  ReadTask *t = g_task_get_task_data (G_TASK (result));
  FxwWorkspaceRead *r = t->r;
  g_autoptr(GError) error = NULL;
  gpointer data = g_task_propagate_pointer (G_TASK (result), &error);

  if (data == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_debug ("%s: %s", r->hooks->what, error->message);
          workspace_read_show (r, source, NULL);
          r->loaded = TRUE;
        }
      return;
    }
  if (g_task_get_cancellable (G_TASK (result)) == r->cancellable)
    {
      workspace_read_show (r, source, data);
      r->loaded = TRUE;
    }
  r->hooks->free (data);
}

void
fxw_workspace_read_class_set_template (GtkWidgetClass *widget_class, const char *ui_file, gsize read_offset)
{
  fxw_viewers_class_set_template (widget_class, ui_file);
  gtk_widget_class_bind_template_child_full (widget_class, "stack", FALSE,
                                             read_offset + G_STRUCT_OFFSET (FxwWorkspaceRead, stack));
  gtk_widget_class_bind_template_child_full (widget_class, "column", FALSE,
                                             read_offset + G_STRUCT_OFFSET (FxwWorkspaceRead, column));
}

void
fxw_workspace_read_init (FxwWorkspaceRead *r, const FxwWorkspaceReadHooks *hooks)
{
  r->hooks = hooks;
  r->text = g_string_new (NULL);
}

void
fxw_workspace_read_start (FxwWorkspaceRead *r, gpointer view, const char *path)
{
  g_autoptr(GTask) task = NULL;
  ReadTask *t;

  fxw_workspace_read_cancel (r);
  workspace_read_show (r, view, NULL);
  r->loaded = path == NULL;
  if (path == NULL)
    return;
  r->cancellable = g_cancellable_new ();
  t = g_new0 (ReadTask, 1);
  t->path = g_strdup (path);
  t->r = r;
  task = g_task_new (view, r->cancellable, workspace_read_done, NULL);
  g_task_set_task_data (task, t, read_task_free);
  g_task_set_check_cancellable (task, TRUE);
  g_task_run_in_thread (task, workspace_read_thread);
}

void
fxw_workspace_read_cancel (FxwWorkspaceRead *r)
{
  g_cancellable_cancel (r->cancellable);
  g_clear_object (&r->cancellable);
}

char *
fxw_workspace_read_dup_text (FxwWorkspaceRead *r)
{
  return r->loaded && r->text->len > 0 ? g_strdup (r->text->str) : NULL;
}

void
fxw_workspace_read_finalize (FxwWorkspaceRead *r)
{
  g_string_free (r->text, TRUE);
}
