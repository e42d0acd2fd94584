/* registry/fx-backend-kit.h: what backend plugins share, and what a backend whose compiled object wraps another
   backend's shares with them (a fallback chain, a delegating plugin). Header-only: a plugin links against nothing,
   so engine entry points are passed in (fx_compiled_profile in the tree, api->profile in a plugin). */
#pragma once

#include <string.h>

#include "fx/backend.h"

/* The body of a plugin's fx_backend_plugin_init: checks that PLUGIN_API has this ABI version and at least NEED bytes
   (up to the last member the plugin calls), keeps it in *API and registers BACKEND. Returns 0, 1 when the API does
   not fit, 2 when the registry refuses the backend. */
static inline int
fx_plugin_register (const fx_plugin_api *plugin_api, size_t need, const fx_plugin_api **api,
                    const fx_backend *backend)
{
  if (plugin_api == NULL || plugin_api->abi_version != FX_PLUGIN_ABI_VERSION || plugin_api->size < need)
    return 1;
  *api = plugin_api;
  fx_diag diag;
  memset (&diag, 0, sizeof diag);
  return plugin_api->register_backend (backend, &diag) == FX_OK ? 0 : 2;
}

typedef fx_status (*fx_wrap_profile_fn) (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, int repeat,
                                         fx_diag *diag);

/* Profiles INNER with PROFILE and copies its per-kernel times onto C's kernels (the same list, copied at compile). */
static inline fx_status
fx_wrap_profile (fx_compiled *c, fx_compiled *inner, fx_wrap_profile_fn profile, const fx_value *inputs,
                 size_t n_inputs, int repeat, fx_diag *diag)
{
  fx_status st = profile (inner, inputs, n_inputs, repeat, diag);
  for (size_t k = 0; st == FX_OK && k < c->n_kernels && k < inner->n_kernels; k++)
    c->kernels[k].time_ms = inner->kernels[k].time_ms;
  return st;
}
