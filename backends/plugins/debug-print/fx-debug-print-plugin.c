/* fx-debug-print-plugin.c: an example backend plugin, built from the tree: `debug_print` prints the graph as
   print_tabular and runs it eagerly, the custom backend PyTorch's documentation shows
   (`def my_compiler(gm, example_inputs): gm.graph.print_tabular(); return gm.forward`).
   A plugin reaches the engine only through the fx_plugin_api table it is given: it links against nothing. */
#include "fx/backend.h"
#include "registry/fx-backend-kit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const fx_plugin_api *api;

static const fx_option_decl debug_print_options[] = {
  { "stream", FX_OPTION_STRING, "'stdout'", "where the table goes: 'stdout' or 'stderr'" },
};

static fx_status
debug_print_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  const char *stream = "stdout";
  for (size_t i = 0; req->options && i < req->options->n; i++)
    if (strcmp (req->options->items[i].name, "stream") == 0 && req->options->items[i].s)
      stream = req->options->items[i].s;
  FILE *f;
  if (strcmp (stream, "stdout") == 0)
    f = stdout;
  else if (strcmp (stream, "stderr") == 0)
    f = stderr;
  else
    return api->diag_set (diag, FX_ERR_INVALID, "debug_print: stream must be 'stdout' or 'stderr', got '%s'", stream);
  fx_buf table = { 0 };
  api->graph_print_tabular (req->graph, &table);
  fprintf (f, "%s", table.data ? table.data : "");
  fflush (f);
  api->buf_free (&table);
  const fx_backend *eager = api->lookup_backend ("eager", diag);
  if (eager == NULL)
    return diag->code;
  fx_compiled *inner = NULL;
  fx_status st = api->compile (eager, req->graph, req->example_inputs, req->n_inputs, NULL, NULL, 0, &inner, diag);
  if (st != FX_OK)
    return st;
  out->impl = inner;
  return FX_OK;
}

static fx_status
debug_print_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
                 size_t *n_outputs, fx_diag *diag)
{
  return api->run (c->impl, inputs, n_inputs, arena, outputs, n_outputs, diag);
}

static void
debug_print_release (fx_compiled *c)
{
  api->compiled_free (c->impl);
}

static const char *const debug_print_tags[] = { "debug", NULL };

static const fx_backend debug_print_backend = {
  .name = "debug_print",
  .description = "prints the graph as print_tabular, then runs it eagerly (example plugin)",
  .tags = debug_print_tags,
  .options = debug_print_options,
  .n_options = sizeof debug_print_options / sizeof debug_print_options[0],
  .compile = debug_print_compile,
  .run = debug_print_run,
  .release = debug_print_release,
  .size = sizeof (fx_backend),
};

int fx_backend_plugin_init (const fx_plugin_api *plugin_api);

int
fx_backend_plugin_init (const fx_plugin_api *plugin_api)
{
  return fx_plugin_register (plugin_api, sizeof (fx_plugin_api), &api, &debug_print_backend);
}
