/* fx-eager.c: eager and aot_eager. eager interprets the graph it was given; aot_eager first does what AOTAutograd's
   forward does to a Dynamo graph (torch-level → ATen, decompositions, functionalization, DCE) and interprets the
   result, keeping the lowered graph as an artifact so users see what ran. */
#include "fx-eager.h"
#include "registry/fx-registry.h"

#include <stdlib.h>
#include <string.h>

#include "fx/passes.h"

typedef struct eager_impl
{
  fx_graph *graph;          /* owned copy (the request's graph may go away) */
  fx_generator gen;
} eager_impl;


static const fx_option_decl aot_eager_options[] = {
  { "decompose", FX_OPTION_BOOL, "True", "run the decompositions (softmax, layer norm, ... into simpler ops)" },
  { "functionalize", FX_OPTION_BOOL, "True", "rewrite in-place ops into functional ones" },
  { "cse", FX_OPTION_BOOL, "False", "merge common subexpressions (AOTAutograd's partitioner does)" },
};

static const fx_option_decl eager_options[] = {
  { "seed", FX_OPTION_INT, "0", "seed of the generator random ops draw from" },
};

/* One entry per op node: the interpreter calls one reference kernel per node. */
static void
add_node_kernels (fx_compiled *out, const fx_graph *g)
{
  fx_buf name;
  fx_buf_init (&name);
  fx_graph_foreach_node (g, n)
  {
    if (n->op != FX_OP_CALL_FUNCTION && n->op != FX_OP_CALL_METHOD && n->op != FX_OP_CALL_MODULE)
      continue;
    fx_buf_reset (&name);
    fx_buf_puts (&name, "eager:");
    fx_target_format (&n->target, &name);
    fx_kernel_info *k = fx_compiled_add_kernel (out, name.data, "interpreter", NULL, NULL);
    fx_kernel_add_node (out, k, n->name);
  }
  fx_buf_free (&name);
}

static fx_status
eager_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  eager_impl *impl = calloc (1, sizeof *impl);
  impl->graph = fx_graph_copy (req->graph);
  if (impl->graph == NULL)
    {
      free (impl);
      return fx_diag_set (diag, FX_ERR_NOMEM, "cannot copy the graph");
    }
  fx_graph_resolve_ops (impl->graph);
  fx_generator_seed (&impl->gen, (uint64_t) fx_options_get_int (req->options, "seed", 0));
  out->impl = impl;
  add_node_kernels (out, impl->graph);
  return FX_OK;
}

static fx_status
aot_eager_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  fx_graph *g = NULL;
  fx_status st;
  if (fx_graph_is_torch_level (req->graph))
    {
      st = fx_lower_to_aten (req->graph, &g, diag);
      if (st != FX_OK)
        return st;
      fx_buf_puts (&out->notes, "aot_eager: lowered the torch-level graph to ATen\n");
    }
  else
    {
      g = fx_graph_copy (req->graph);
      if (g == NULL)
        return fx_diag_set (diag, FX_ERR_NOMEM, "cannot copy the graph");
      fx_graph_resolve_ops (g);
    }
  const char *passes[4];
  size_t n_passes = 0;
  if (fx_options_get_bool (req->options, "functionalize", true))
    passes[n_passes++] = "functionalize";
  if (fx_options_get_bool (req->options, "decompose", true))
    passes[n_passes++] = "decompose";
  if (fx_options_get_bool (req->options, "cse", false))
    passes[n_passes++] = "cse";
  passes[n_passes++] = "dce";
  fx_buf dump;
  fx_buf_init (&dump);
  st = fx_pass_pipeline (g, passes, n_passes, &dump, diag);
  if (st != FX_OK)
    {
      fx_buf_free (&dump);
      fx_graph_free (g);
      return st;
    }
  fx_compiled_add_artifact (out, "aot_passes.txt", "text", dump.data ? dump.data : "", dump.len);
  fx_buf_free (&dump);
  fx_buf code;
  fx_buf_init (&code);
  fx_readable_opts ro;
  memset (&ro, 0, sizeof ro);
  fx_graph_print_readable (g, &ro, &code);
  fx_compiled_add_artifact (out, "fx_graph_readable.py", "code", code.data ? code.data : "", code.len);
  fx_buf_free (&code);
  eager_impl *impl = calloc (1, sizeof *impl);
  impl->graph = g;
  fx_generator_seed (&impl->gen, 0);
  out->impl = impl;
  add_node_kernels (out, g);
  return FX_OK;
}

static fx_status
eager_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
           size_t *n_outputs, fx_diag *diag)
{
  eager_impl *impl = c->impl;
  fx_interp_opts io;
  memset (&io, 0, sizeof io);
  io.gen = &impl->gen;
  return fx_interp_run (impl->graph, inputs, n_inputs, &io, arena, outputs, n_outputs, diag);
}

static void
eager_release (fx_compiled *c)
{
  eager_impl *impl = c->impl;
  fx_graph_free (impl->graph);
  free (impl);
}

/* eager and aot_eager differ in what they do to the graph before interpreting it; they run and release alike, and
   accept torch.compile's mode (passed to every backend) and ignore it. */
#define EAGER_BACKEND(NAME, DESCRIPTION, OPTIONS, COMPILE)             \
  {                                                                    \
    .name = NAME,                                                      \
    .description = DESCRIPTION,                                        \
    .options = OPTIONS,                                                \
    .n_options = sizeof OPTIONS / sizeof OPTIONS[0],                   \
    .modes = fx_plain_modes,                                           \
    .n_modes = sizeof fx_plain_modes / sizeof fx_plain_modes[0],       \
    .compile = COMPILE,                                                \
    .run = eager_run,                                                  \
    .release = eager_release,                                          \
  }

const fx_backend fx_eager_backend
  = EAGER_BACKEND ("eager", "runs the graph as given on the engine's reference kernels (the interpreter)",
                   eager_options, eager_compile);

const fx_backend fx_aot_eager_backend
  = EAGER_BACKEND ("aot_eager", "lowers to ATen, decomposes and functionalizes as AOTAutograd does, then interprets",
                   aot_eager_options, aot_eager_compile);
