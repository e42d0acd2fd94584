/* fxw-application.c: the application: action table, accelerators, opening files from the command line. */
#define G_LOG_DOMAIN "fxw-application"

#include "fx-config.h"

#include <glib/gi18n.h>

#include "fxw-application.h"
#include "fxw-window.h"
#include "registry/fx-registry.h"

struct _FxwApplication
{
  AdwApplication parent_instance;
};

G_DEFINE_FINAL_TYPE (FxwApplication, fxw_application, ADW_TYPE_APPLICATION)

GFile *
fxw_application_demo_file (void)
{
  const char *env = g_getenv ("FXW_DEMO");
  /* The demo workspace (data/demo.fxwb, imported from the fixtures' TORCH_TRACE logs and TORCH_COMPILE_DEBUG
     folders) comes first; the fixture folders are the fallback when it was not built. */
  g_autofree char *installed_fxwb = g_build_filename (FX_PKGDATADIR, "demo.fxwb", NULL);
  g_autofree char *built_fxwb = g_build_filename (FX_BUILD_ROOT, "data", "demo.fxwb", NULL);
  g_autofree char *installed = g_build_filename (FX_PKGDATADIR, "demo", NULL);
  g_autofree char *built = g_build_filename (FX_BUILD_ROOT, "data", "demo", NULL);
  g_autofree char *source = g_build_filename (FX_SOURCE_ROOT, "tests", "fixtures", "traces", NULL);

  if (env != NULL && *env)
    return g_file_new_for_path (env);
  if (g_file_test (built_fxwb, G_FILE_TEST_IS_REGULAR))
    return g_file_new_for_path (built_fxwb);
  if (g_file_test (installed_fxwb, G_FILE_TEST_IS_REGULAR))
    return g_file_new_for_path (installed_fxwb);
  if (g_file_test (built, G_FILE_TEST_EXISTS))
    return g_file_new_for_path (built);
  if (g_file_test (installed, G_FILE_TEST_EXISTS))
    return g_file_new_for_path (installed);
  return g_file_new_for_path (source);
}

static FxwWindow *
new_window (FxwApplication *self)
{
  FxwWindow *window = fxw_window_new (GTK_APPLICATION (self));

  gtk_window_present (GTK_WINDOW (window));
  return window;
}

static void
fxw_application_activate (GApplication *app)
{
  g_autoptr(GFile) demo = fxw_application_demo_file ();
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));

  if (window != NULL)
    {
      gtk_window_present (window);
      return;
    }
  fxw_window_open (new_window (FXW_APPLICATION (app)), demo);
}

static void
fxw_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  for (int i = 0; i < n_files; i++)
    fxw_window_open (new_window (FXW_APPLICATION (app)), files[i]);
}

static void
fxw_application_startup (GApplication *app)
{
  static const struct { const char *action; const char *accels[3]; } accels[] = {
    { "app.quit", { "<Control>q", NULL } },
    { "win.open", { "<Control>o", NULL } },
    { "win.run-compare", { "<Control>r", NULL } },
    { "win.focus-search", { "<Control>f", NULL } },
    { "win.next-compile", { "<Alt>Down", "<Control>Page_Down", NULL } },
    { "win.previous-compile", { "<Alt>Up", "<Control>Page_Up", NULL } },
    { "win.view::table", { "<Alt>1", NULL } },
    { "win.view::graph", { "<Alt>2", NULL } },
    { "win.view::code", { "<Alt>3", NULL } },
    { "win.view::guards", { "<Alt>4", NULL } },
    { "win.view::kernels", { "<Alt>5", NULL } },
    { "win.view::compare", { "<Alt>6", NULL } },
    { "win.view::diff", { "<Alt>7", NULL } },
    { "win.view::summary", { "<Alt>8", NULL } },
    { "pane.show-provenance", { "F9", NULL } },
    { "window.close", { "<Control>w", NULL } },
  };
  G_APPLICATION_CLASS (fxw_application_parent_class)->startup (app);
  /* The app's one registration of backends (built-ins, then plugins), for Run & Compare's columns. */
  fx_backends_init ();

  for (guint i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (app), accels[i].action, accels[i].accels);

  /* Dark style follows the system. */
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), ADW_COLOR_SCHEME_DEFAULT);
}

static void
quit_action (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  g_application_quit (G_APPLICATION (user_data));
}

static void
open_demo_action (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  g_autoptr(GFile) demo = fxw_application_demo_file ();

  fxw_window_open (new_window (user_data), demo);
}

static void
about_action (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (user_data));
  const char *developers[] = { _("The FX Workbench authors"), NULL };

  adw_show_about_window (parent,
                         "application-name", _("FX Workbench"),
                         "application-icon", FX_APP_ID,
                         "version", FX_PACKAGE_VERSION,
                         "license-type", GTK_LICENSE_GPL_3_0,
                         "developers", developers,
                         "comments", _("Inspect the graphs, guards, recompiles and kernels of torch.compile"),
                         NULL);
}

static const GActionEntry app_actions[] = {
  { .name = "quit", .activate = quit_action },
  { .name = "about", .activate = about_action },
  { .name = "open-demo", .activate = open_demo_action },
};

static void
fxw_application_class_init (FxwApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  app_class->activate = fxw_application_activate;
  app_class->open = fxw_application_open;
  app_class->startup = fxw_application_startup;
}

static void
fxw_application_init (FxwApplication *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self), app_actions, G_N_ELEMENTS (app_actions), self);
}

FxwApplication *
fxw_application_new (void)
{
  return g_object_new (FXW_TYPE_APPLICATION,
                       "application-id", FX_APP_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE,
                       "resource-base-path", "/org/fxworkbench/FxWorkbench",
                       NULL);
}
