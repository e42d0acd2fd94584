/* fxw-tool-window.c: the windows that run fxwb in a child process share its lifetime (one run at a time, killed
   when the window goes) and their layout (a header bar over a column of controls). */
#define G_LOG_DOMAIN "fxw-tool-window"

#include "fx-config.h"

#include <glib/gi18n.h>

#include "fxw-tool-window.h"
#include "fxw-engine.h"

typedef struct
{
  AdwHeaderBar *header_bar;
  GtkBox *body;
  GSubprocess *proc;
  GCancellable *cancellable;
} FxwToolWindowPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (FxwToolWindow, fxw_tool_window, ADW_TYPE_WINDOW)

static void
fxw_tool_window_dispose (GObject *object)
{
  FxwToolWindowPrivate *priv = fxw_tool_window_get_instance_private (FXW_TOOL_WINDOW (object));

  if (priv->proc != NULL)
    g_subprocess_force_exit (priv->proc);
  g_cancellable_cancel (priv->cancellable);
  g_clear_object (&priv->cancellable);
  g_clear_object (&priv->proc);
  G_OBJECT_CLASS (fxw_tool_window_parent_class)->dispose (object);
}

static void
fxw_tool_window_class_init (FxwToolWindowClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = fxw_tool_window_dispose;
}

static void
fxw_tool_window_init (FxwToolWindow *self)
{
  FxwToolWindowPrivate *priv = fxw_tool_window_get_instance_private (self);
  GtkWidget *content = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);

  priv->header_bar = ADW_HEADER_BAR (adw_header_bar_new ());
  priv->body = GTK_BOX (gtk_box_new (GTK_ORIENTATION_VERTICAL, 12));
  gtk_widget_set_margin_start (GTK_WIDGET (priv->body), 18);
  gtk_widget_set_margin_end (GTK_WIDGET (priv->body), 18);
  gtk_widget_set_margin_top (GTK_WIDGET (priv->body), 12);
  gtk_widget_set_margin_bottom (GTK_WIDGET (priv->body), 18);
  gtk_widget_set_vexpand (GTK_WIDGET (priv->body), TRUE);
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (priv->header_bar));
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (priv->body));
  adw_window_set_content (ADW_WINDOW (self), content);
}

GtkBox *
fxw_tool_window_get_body (FxwToolWindow *self)
{
  FxwToolWindowPrivate *priv = fxw_tool_window_get_instance_private (self);

  return priv->body;
}

void
fxw_tool_window_pack_header (FxwToolWindow *self, GtkWidget *widget)
{
  FxwToolWindowPrivate *priv = fxw_tool_window_get_instance_private (self);

  adw_header_bar_pack_end (priv->header_bar, widget);
}

GSubprocess *
fxw_tool_window_spawn (FxwToolWindow *self, GSubprocessLauncher *launcher, const char *const *args, GError **error)
{
  FxwToolWindowPrivate *priv = fxw_tool_window_get_instance_private (self);
  g_autoptr(GStrvBuilder) argv = g_strv_builder_new ();
  g_autofree char *fxwb = fxw_find_fxwb ();
  g_auto(GStrv) strv = NULL;

  g_return_val_if_fail (FXW_IS_TOOL_WINDOW (self), NULL);
  if (fxwb == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   _("The fxwb program was not found (set FXWB_PROGRAM, or install fxwb beside fx-workbench)."));
      return NULL;
    }
  g_strv_builder_add (argv, fxwb);
  g_strv_builder_addv (argv, (const char **) args);
  strv = g_strv_builder_end (argv);
  /* an earlier run's reads and process are left to finish on their own */
  g_cancellable_cancel (priv->cancellable);
  g_clear_object (&priv->cancellable);
  g_clear_object (&priv->proc);
  priv->proc = g_subprocess_launcher_spawnv (launcher, (const char *const *) strv, error);
  if (priv->proc == NULL)
    return NULL;
  priv->cancellable = g_cancellable_new ();
  return priv->proc;
}

GSubprocess *
fxw_tool_window_get_process (FxwToolWindow *self)
{
  FxwToolWindowPrivate *priv = fxw_tool_window_get_instance_private (self);

  return priv->proc;
}

GCancellable *
fxw_tool_window_get_cancellable (FxwToolWindow *self)
{
  FxwToolWindowPrivate *priv = fxw_tool_window_get_instance_private (self);

  return priv->cancellable;
}

void
fxw_tool_window_process_done (FxwToolWindow *self)
{
  FxwToolWindowPrivate *priv = fxw_tool_window_get_instance_private (self);

  g_clear_object (&priv->proc);
}
