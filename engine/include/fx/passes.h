/* fx/passes.h: graph passes (shape propagation, DCE, CSE, decomposition, functionalization, torch-level → ATen
   lowering), each dumpable as text, and the pipeline that runs them with the verifier in between. */
#pragma once

#include "fx/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every pass rewrites graph in place, records provenance (from_node with its pass name) on the nodes it makes, and
   returns FX_OK or a located error (diag->node, diag->pass). *changed (may be NULL) counts the nodes it touched. */
typedef fx_status (*fx_pass_fn) (fx_graph *graph, size_t *changed, fx_diag *diag);

/* Fills meta.val of every node from its inputs' metas (placeholders: their meta.val, or the graph's input specs). */
fx_status fx_pass_shape_prop (fx_graph *graph, size_t *changed, fx_diag *diag);
/* Graph.eliminate_dead_code. */
fx_status fx_pass_dce (fx_graph *graph, size_t *changed, fx_diag *diag);
/* Common subexpression elimination over pure call_function nodes (same target, same args/kwargs). */
fx_status fx_pass_cse (fx_graph *graph, size_t *changed, fx_diag *diag);
/* Replaces ops that have a decomposition (softmax, layer norm, ...) by simpler table ops, to a fixed point. */
fx_status fx_pass_decompose (fx_graph *graph, size_t *changed, fx_diag *diag);
/* gather(f(a, b), d, idx) -> f(gather(a, d, idx), b) for pointwise f with b broadcast along d (a log_softmax
   feeding nll_loss is then computed at the targets only); shapes come from a propagated copy. */
fx_status fx_pass_sink_gather (fx_graph *graph, size_t *changed, fx_diag *diag);
/* Rewrites in-place ops (add_, relu_, copy_) to functional ones; mutated graph inputs get a copy_ back at the end. */
fx_status fx_pass_functionalize (fx_graph *graph, size_t *changed, fx_diag *diag);
/* Torch-level graph (Dynamo output: torch.abs, operator.add, call_method sum, torch._C._nn.gelu,
   F.linear, call_module of standard modules) → an ATen graph like AOTAutograd's forward: placeholders
   become arg0_1..argN_1 (parameters first, as get_attr reads become inputs), each new node keeps the torch
   node's stack_trace, nn_module_stack and a from_node entry, and original_aten. Returns a new graph. */
fx_status fx_lower_to_aten (const fx_graph *graph, fx_graph **out, fx_diag *diag);
/* True when the graph has targets that are not table ops (torch.*, operator.*, call_method, call_module). */
bool fx_graph_is_torch_level (const fx_graph *graph);

typedef struct fx_pass_info
{
  const char *name;      /* "shape_prop", "dce", "cse", "decompose", "functionalize" */
  fx_pass_fn fn;
  const char *doc;
} fx_pass_info;

/* The passes by name (NULL-terminated table). */
const fx_pass_info *fx_pass_table (void);
const fx_pass_info *fx_pass_find (const char *name);

/* Runs the named passes in order, verifying the graph after each; when dump is non-NULL appends, per pass,
   "# after <pass>: N changed\n" and the graph in print_readable form. */
fx_status fx_pass_pipeline (fx_graph *graph, const char *const *names, size_t n_names, fx_buf *dump, fx_diag *diag);

#ifdef __cplusplus
}
#endif
