/* display-util.h: helpers of the display suite: bounded main-loop pumping and PNG screenshots of widgets. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Iterates the main context until cond(data) holds or timeout_s passes; returns whether it holds. */
gboolean fxw_test_wait (gboolean (*cond) (gpointer data), gpointer data, double timeout_s);
/* Iterates the main context for roughly ms milliseconds. */
void     fxw_test_pump (guint ms);
/* Renders widget with its window's renderer and writes dir/name.png; returns the path. */
char    *fxw_test_screenshot (GtkWidget *widget, const char *name);

G_END_DECLS
