/* fxw-workspace-page.c: FxwWorkspacePage: the read in a thread, the stack's pages and the text the Summary and Ranks
 * views share; each says how to read its data and show it. */
#define G_LOG_DOMAIN "fxw-viewers"

#include "fx-config.h"

#include "fxw-viewers.h"
#include "fxw-workspace-page.h"

typedef struct
{
  GtkStack *stack;                   /* template children */
  GtkBox *column;
  GCancellable *cancellable;
  gboolean loaded;                   /* the last start's read has finished (or there was none to make) */
} FxwWorkspacePagePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (FxwWorkspacePage, fxw_workspace_page, FXW_TYPE_VIEW)

/* A read's path and the arena of its data, allocated in that arena: freed with the task, after the data is shown. */
typedef struct
{
  fx_arena *arena;
  const char *path;
} ReadTask;

static void
read_task_free (gpointer task_data)
{
  fx_arena_free (((ReadTask *) task_data)->arena);
}

static void
read_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ReadTask *t = task_data;
  GError *error = NULL;
  gpointer data = FXW_WORKSPACE_PAGE_GET_CLASS (source)->read (t->path, t->arena, cancellable, &error);

  if (data == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, data, FXW_WORKSPACE_PAGE_GET_CLASS (source)->free);
}

static void
show_data (FxwWorkspacePage *self, gpointer data)
{
  FxwWorkspacePagePrivate *priv = fxw_workspace_page_get_instance_private (self);
  FxwWorkspacePageClass *klass = FXW_WORKSPACE_PAGE_GET_CLASS (self);
  gboolean any;

  fxw_viewers_remove_children (GTK_WIDGET (priv->column), GTK_WIDGET (self));
  g_string_truncate (fxw_view_get_text (FXW_VIEW (self)), 0);
  fxw_view_clear_links (FXW_VIEW (self));
  if (klass->clear != NULL)
    klass->clear (self);
  any = data != NULL && klass->show (self, data);
  gtk_stack_set_visible_child_name (priv->stack, any ? klass->what : "empty");
}

static void
read_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FxwWorkspacePage *self = FXW_WORKSPACE_PAGE (source);
  FxwWorkspacePagePrivate *priv = fxw_workspace_page_get_instance_private (self);
  g_autoptr(GError) error = NULL;
  gpointer data = g_task_propagate_pointer (G_TASK (result), &error);

  if (data == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_debug ("%s: %s", FXW_WORKSPACE_PAGE_GET_CLASS (self)->what, error->message);
          show_data (self, NULL);
          priv->loaded = TRUE;
        }
      return;
    }
  if (g_task_get_cancellable (G_TASK (result)) == priv->cancellable)
    {
      show_data (self, data);
      priv->loaded = TRUE;
    }
  FXW_WORKSPACE_PAGE_GET_CLASS (self)->free (data);
}

static void
cancel_read (FxwWorkspacePage *self)
{
  FxwWorkspacePagePrivate *priv = fxw_workspace_page_get_instance_private (self);

  g_cancellable_cancel (priv->cancellable);
  g_clear_object (&priv->cancellable);
}

static void
fxw_workspace_page_dispose (GObject *object)
{
  cancel_read (FXW_WORKSPACE_PAGE (object));
  G_OBJECT_CLASS (fxw_workspace_page_parent_class)->dispose (object);
}

static void
fxw_workspace_page_class_init (FxwWorkspacePageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = fxw_workspace_page_dispose;
}

static void
fxw_workspace_page_init (FxwWorkspacePage *self)
{
}

void
fxw_workspace_page_class_set_template (GtkWidgetClass *widget_class, const char *ui_file)
{
  fxw_viewers_class_set_template (widget_class, ui_file);
  gtk_widget_class_bind_template_child_full (widget_class, "stack", FALSE,
                                             FxwWorkspacePage_private_offset
                                             + G_STRUCT_OFFSET (FxwWorkspacePagePrivate, stack));
  gtk_widget_class_bind_template_child_full (widget_class, "column", FALSE,
                                             FxwWorkspacePage_private_offset
                                             + G_STRUCT_OFFSET (FxwWorkspacePagePrivate, column));
}

void
fxw_workspace_page_set_workspace (FxwWorkspacePage *self, const char *path)
{
  FxwWorkspacePagePrivate *priv = fxw_workspace_page_get_instance_private (self);
  g_autoptr(GTask) task = NULL;
  fx_arena *arena;
  ReadTask *t;

  g_return_if_fail (FXW_IS_WORKSPACE_PAGE (self));

  cancel_read (self);
  show_data (self, NULL);
  priv->loaded = path == NULL;
  if (path == NULL)
    return;
  priv->cancellable = g_cancellable_new ();
  arena = fx_arena_new ();
  t = fx_arena_alloc (arena, sizeof *t);
  t->arena = arena;
  t->path = fx_arena_strdup (arena, path);
  task = g_task_new (self, priv->cancellable, read_done, NULL);
  g_task_set_task_data (task, t, read_task_free);
  g_task_set_check_cancellable (task, TRUE);
  g_task_run_in_thread (task, read_thread);
}

gboolean
fxw_workspace_page_get_loaded (FxwWorkspacePage *self)
{
  FxwWorkspacePagePrivate *priv = fxw_workspace_page_get_instance_private (self);

  g_return_val_if_fail (FXW_IS_WORKSPACE_PAGE (self), FALSE);
  return priv->loaded;
}

char *
fxw_workspace_page_dup_text (FxwWorkspacePage *self)
{
  FxwWorkspacePagePrivate *priv = fxw_workspace_page_get_instance_private (self);
  GString *text = fxw_view_get_text (FXW_VIEW (self));

  g_return_val_if_fail (FXW_IS_WORKSPACE_PAGE (self), NULL);
  return priv->loaded && text->len > 0 ? g_strdup (text->str) : NULL;
}

GtkBox *
fxw_workspace_page_get_column (FxwWorkspacePage *self)
{
  FxwWorkspacePagePrivate *priv = fxw_workspace_page_get_instance_private (self);

  return priv->column;
}

void
fxw_workspace_page_append (FxwWorkspacePage *self, GtkWidget *widget, const char *format, ...)
{
  FxwWorkspacePagePrivate *priv = fxw_workspace_page_get_instance_private (self);
  GString *text = fxw_view_get_text (FXW_VIEW (self));
  va_list args;

  if (widget != NULL)
    gtk_box_append (priv->column, widget);
  if (format == NULL)
    return;
  va_start (args, format);
  g_string_append_vprintf (text, format, args);
  va_end (args);
  g_string_append_c (text, '\n');
}

GtkWidget *
fxw_workspace_page_add_line (FxwWorkspacePage *self, const char *line, const char *css_class)
{
  FxwWorkspacePagePrivate *priv = fxw_workspace_page_get_instance_private (self);

  fxw_workspace_page_append (self, NULL, "%s", line);
  return fxw_viewers_add_label (priv->column, line, css_class);
}

GtkWidget *
fxw_workspace_page_add_heading (FxwWorkspacePage *self, const char *heading)
{
  GtkWidget *label;

  g_string_append_c (fxw_view_get_text (FXW_VIEW (self)), '\n');
  label = fxw_workspace_page_add_line (self, heading, "title-4");
  gtk_widget_set_margin_top (label, 18);
  return label;
}
