/* fxw-engine.h: the GLib glue for the engine: an error domain for fx_status/fx_diag and _async/_finish wrappers. */
#pragma once

#include <gio/gio.h>

#include "fx/pyparse.h"
#include "fxw-autocleanups.h"

G_BEGIN_DECLS

#define FXW_ENGINE_ERROR (fxw_engine_error_quark ())

/* Codes are the engine's fx_status values. */
typedef enum
{
  FXW_ENGINE_ERROR_PARSE = FX_ERR_PARSE,
  FXW_ENGINE_ERROR_IO = FX_ERR_IO,
  FXW_ENGINE_ERROR_INVALID = FX_ERR_INVALID,
  FXW_ENGINE_ERROR_UNSUPPORTED = FX_ERR_UNSUPPORTED,
  FXW_ENGINE_ERROR_NOT_FOUND = FX_ERR_NOT_FOUND,
  FXW_ENGINE_ERROR_NOMEM = FX_ERR_NOMEM,
  FXW_ENGINE_ERROR_BACKEND = FX_ERR_BACKEND,
  FXW_ENGINE_ERROR_CANCELLED = FX_ERR_CANCELLED,
  FXW_ENGINE_ERROR_NO_DEVICE = FX_ERR_NO_DEVICE,
} FxwEngineError;

GQuark    fxw_engine_error_quark        (void);
/* The diagnostic as one GError: "file:line:col: message" plus the line and a caret. */
GError   *fxw_engine_error_new_from_diag (const fx_diag       *diag);

/* fx_parse_fx_file in a worker thread. */
void      fxw_parse_fx_file_async       (const char          *path,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data);
fx_graph *fxw_parse_fx_file_finish      (GAsyncResult        *result,
                                         GError             **error);

/* The fxwb program the app runs in child processes (Run & Compare, Minify, Follow): $FXWB_PROGRAM, beside this
   program (installed), the build tree's app/fxwb/fxwb, or on PATH; NULL when none. */
char     *fxw_find_fxwb                 (void);

G_END_DECLS
