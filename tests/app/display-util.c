/* display-util.c: main-loop pumping with a deadline and widget screenshots (GtkSnapshot -> GskRenderer -> PNG). */
#include "fx-config.h"

#include "display-util.h"

gboolean
fxw_test_wait (gboolean (*cond) (gpointer data), gpointer data, double timeout_s)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);

  while (!cond (data))
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  return TRUE;
}

void
fxw_test_pump (guint ms)
{
  gint64 deadline = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < deadline)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
}

char *
fxw_test_screenshot (GtkWidget *widget, const char *name)
{
  const char *dir = g_getenv ("FXW_SCREENSHOT_DIR");
  g_autofree char *fallback = g_build_filename (g_get_tmp_dir (), "fxw-screenshots", NULL);
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (widget));
  char *path;

  if (dir == NULL || *dir == '\0')
    dir = fallback;
  g_mkdir_with_parents (dir, 0755);
  path = g_strdup_printf ("%s/%s.png", dir, name);

  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL || renderer == NULL)
    return path;
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (!gdk_texture_save_to_png (texture, path))
    g_warning ("could not write %s", path);
  return path;
}
