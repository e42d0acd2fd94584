/* main.c: fx-workbench entry point: i18n setup, then the application runs. */
#include "fx-config.h"

#include <locale.h>
#include <glib/gi18n.h>

#include "fxw-application.h"
#include "fx/common.h"

int
main (int argc, char *argv[])
{
  g_autoptr(FxwApplication) app = NULL;

  fx_malloc_tune ();
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, FX_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  g_set_application_name (_("FX Workbench"));

  app = fxw_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
