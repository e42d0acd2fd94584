/* registry/fx-wrap.h: for a backend whose compiled object wraps another backend's (a fallback chain, a delegating
   plugin) and lists the inner object's kernels as its own. Header-only: a plugin links against nothing, so the
   engine's entry point is passed in (fx_compiled_profile in the tree, api->profile in a plugin). */
#pragma once

#include "fx/backend.h"

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
