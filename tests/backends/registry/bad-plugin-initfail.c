/* bad-plugin-initfail.c: registers a backend, then fails its init: the loader must take the backend back (it points
   into a library that gets closed) and report the return code. */
#include "fx/backend.h"

#include <string.h>

static fx_status
leaky_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  (void) req;
  (void) out;
  (void) diag;
  return FX_OK;
}

static fx_status
leaky_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
           size_t *n_outputs, fx_diag *diag)
{
  (void) c;
  (void) inputs;
  (void) n_inputs;
  (void) arena;
  (void) diag;
  *outputs = NULL;
  *n_outputs = 0;
  return FX_OK;
}

static const fx_backend leaky_backend = {
  .name = "leaky",
  .description = "registered by a plugin whose init then fails",
  .compile = leaky_compile,
  .run = leaky_run,
};

int fx_backend_plugin_init (const fx_plugin_api *api);

int
fx_backend_plugin_init (const fx_plugin_api *api)
{
  fx_diag diag;
  memset (&diag, 0, sizeof diag);
  api->register_backend (&leaky_backend, &diag);
  return 3;
}
