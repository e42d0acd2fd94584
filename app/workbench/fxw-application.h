/* fxw-application.h: the application: actions, accelerators, one window per opened document. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define FXW_TYPE_APPLICATION (fxw_application_get_type ())

G_DECLARE_FINAL_TYPE (FxwApplication, fxw_application, FXW, APPLICATION, AdwApplication)

FxwApplication *fxw_application_new       (void);
/* The bundled demo: the installed one, or the source tree's when run uninstalled. */
GFile          *fxw_application_demo_file (void);

G_END_DECLS
