/* fx-delegate-plugin.c: an example backend plugin that compiles through another backend (inductor by default) over
   the plugin API and shows that backend's kernels, source, timings and artifacts as its own: what a plugin backend
   wrapping a real compiler does. Built from the tree; it links against nothing. */
#include "fx/backend.h"
#include "registry/fx-backend-kit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const fx_plugin_api *api;

static const fx_option_decl delegate_options[] = {
  { "backend", FX_OPTION_STRING, "'inductor'", "the registered backend it compiles with (delegate:eager works too)" },
  { "device", FX_OPTION_STRING, "None",
    "passed on as the backend's own `device` option (inductor: 'cuda' generates CUDA even for host inputs)" },
  { "inject_error", FX_OPTION_FLOAT, "0.0",
    "add this to the first element of the first float32 host output, to try accuracy checks and minifiers" },
};

/* The delegate passes its mode on: it has the modes of torch.compile, with no settings of its own. */
static const char *const mode_none[] = { NULL };
static const fx_mode_decl delegate_modes[] = {
  { "default", mode_none },
  { "reduce-overhead", mode_none },
  { "max-autotune", mode_none },
  { "max-autotune-no-cudagraphs", mode_none },
};

typedef struct delegate_impl
{
  fx_compiled *inner;
  double inject;
} delegate_impl;

/* The resolved options, read once here (the compiled object keeps them). */
typedef struct delegate_options_values
{
  const char *backend;
  const char *device;       /* NULL: not given */
  double inject;
} delegate_options_values;

static void
read_options (const fx_options *o, delegate_options_values *v)
{
  v->backend = "inductor";
  v->device = NULL;
  v->inject = 0;
  for (size_t i = 0; o && i < o->n; i++)
    {
      if (strcmp (o->items[i].name, "backend") == 0 && o->items[i].s)
        v->backend = o->items[i].s;
      else if (strcmp (o->items[i].name, "device") == 0 && o->items[i].s)
        v->device = o->items[i].s;
      else if (strcmp (o->items[i].name, "inject_error") == 0)
        v->inject = o->items[i].type == FX_OPTION_INT ? (double) o->items[i].i : o->items[i].f;
    }
}

typedef fx_status (*make_fn) (const fx_backend *backend, const fx_graph *graph, const fx_value *example_inputs,
                              size_t n_inputs, const char *mode, const fx_option_kv *options, size_t n_options,
                              fx_compiled **out, fx_diag *diag);

static fx_status
delegate_make (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, make_fn make,
               fx_diag *diag)
{
  delegate_options_values v;
  read_options (req->options, &v);
  if (strcmp (v.backend, self->name) == 0)
    return api->diag_set (diag, FX_ERR_INVALID, "%s: cannot delegate to itself", self->name);
  const fx_backend *to = api->lookup_backend (v.backend, diag);
  if (to == NULL)
    return diag->code;
  fx_option_kv kv = { "device", v.device };
  fx_compiled *inner = NULL;
  fx_status st = make (to, req->graph, req->example_inputs, req->n_inputs, req->mode, v.device ? &kv : NULL,
                       v.device ? 1 : 0, &inner, diag);
  if (st != FX_OK)
    return st;
  delegate_impl *impl = calloc (1, sizeof *impl);
  if (impl == NULL)
    {
      api->compiled_free (inner);
      return api->diag_set (diag, FX_ERR_NOMEM, "%s: out of memory", self->name);
    }
  impl->inner = inner;
  impl->inject = v.inject;
  out->impl = impl;
  /* the inner compile's kernels, source and artifacts are this backend's */
  api->compiled_copy_listing (out, inner);
  api->buf_printf (&out->notes, "%s: %s through '%s' (%.1f ms)\n", self->name,
                   make == api->generate ? "generated" : "compiled", to->name, inner->compile_ms);
  return FX_OK;
}

static fx_status
delegate_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  return delegate_make (self, req, out, api->compile, diag);
}

static fx_status
delegate_generate (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  return delegate_make (self, req, out, api->generate, diag);
}

static fx_status
delegate_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
              size_t *n_outputs, fx_diag *diag)
{
  delegate_impl *impl = c->impl;
  fx_status st = api->run (impl->inner, inputs, n_inputs, arena, outputs, n_outputs, diag);
  if (st != FX_OK || impl->inject == 0)
    return st;
  for (size_t i = 0; i < *n_outputs; i++)
    {
      const fx_value *v = &(*outputs)[i];
      if (v->kind != FX_VALUE_TENSOR || v->u.t == NULL)
        continue;
      fx_tensor *t = v->u.t;
      if (t->dtype == FX_DTYPE_F32 && t->device.type == FX_DEVICE_CPU && t->storage && t->storage->data)
        {
          ((float *) t->storage->data)[t->offset] += (float) impl->inject;
          break;
        }
    }
  return FX_OK;
}

static fx_status
delegate_profile (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int repeat, fx_diag *diag)
{
  delegate_impl *impl = c->impl;
  return fx_wrap_profile (c, impl->inner, api->profile, inputs, n_inputs, repeat, diag);
}

static void
delegate_release (fx_compiled *c)
{
  delegate_impl *impl = c->impl;
  api->compiled_free (impl->inner);
  free (impl);
}

static const char *const delegate_tags[] = { "debug", NULL };

static const fx_backend delegate_backend = {
  .name = "delegate",
  .description = "compiles through another backend over the plugin API (inductor by default; example plugin)",
  .tags = delegate_tags,
  .options = delegate_options,
  .n_options = sizeof delegate_options / sizeof delegate_options[0],
  .modes = delegate_modes,
  .n_modes = sizeof delegate_modes / sizeof delegate_modes[0],
  .compile = delegate_compile,
  .run = delegate_run,
  .release = delegate_release,
  .size = sizeof (fx_backend),
  .generate = delegate_generate,
  .profile = delegate_profile,
};

int fx_backend_plugin_init (const fx_plugin_api *plugin_api);

int
fx_backend_plugin_init (const fx_plugin_api *plugin_api)
{
  /* the members this plugin calls must be in the API it was given */
  return fx_plugin_register (plugin_api, offsetof (fx_plugin_api, buf_printf) + sizeof plugin_api->buf_printf, &api,
                             &delegate_backend);
}
