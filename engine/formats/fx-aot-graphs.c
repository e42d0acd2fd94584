/* fx-aot-graphs.c: a training compile's AOT forward and backward graphs read together: the values the forward
   saves for the backward, and the forward nodes a backward node came from. */
#include "fx/aot-graphs.h"

#include <string.h>

bool
fx_aot_is_tangent (const fx_node *placeholder)
{
  return placeholder->op == FX_OP_PLACEHOLDER && strncmp (placeholder->name, "tangents_", 9) == 0;
}

/* The index of node among the values the graph returns (a tuple or list, or one value); -1 when not there. */
static int
output_index (const fx_graph *g, const fx_node *node)
{
  const fx_node *out = fx_graph_output_node (g);
  if (out == NULL || out->n_args == 0)
    return -1;
  const fx_arg *ret = &out->args[0];
  if (ret->kind == FX_ARG_NODE)
    return ret->u.node == node ? 0 : -1;
  if (ret->kind != FX_ARG_TUPLE && ret->kind != FX_ARG_LIST)
    return -1;
  for (size_t i = 0; i < ret->u.seq.n; i++)
    if (ret->u.seq.items[i].kind == FX_ARG_NODE && ret->u.seq.items[i].u.node == node)
      return (int) i;
  return -1;
}

fx_status
fx_aot_saved_values (const fx_graph *fw, const fx_graph *bw, fx_arena *arena, fx_saved_value **out, size_t *n,
                     fx_diag *diag)
{
  *out = NULL;
  *n = 0;
  size_t cap = 0;
  fx_graph_foreach_node (bw, node)
    if (node->op == FX_OP_PLACEHOLDER && !fx_aot_is_tangent (node))
      cap++;
  if (cap == 0)
    return FX_OK;
  fx_saved_value *v = fx_arena_alloc (arena, cap * sizeof *v);
  fx_graph_foreach_node (bw, node)
    {
      if (node->op != FX_OP_PLACEHOLDER || fx_aot_is_tangent (node))
        continue;
      const fx_node *f = fx_graph_find_node (fw, node->name);
      if (f == NULL)
        return fx_diag_set (diag, FX_ERR_INVALID, "backward input '%s' is no node of the forward graph", node->name);
      int k = output_index (fw, f);
      if (k < 0)
        return fx_diag_set (diag, FX_ERR_INVALID, "backward input '%s' is not returned by the forward graph",
                            node->name);
      v[(*n)++] = (fx_saved_value) { .bw_placeholder = node, .fw_node = f, .fw_output = k };
    }
  *out = v;
  return FX_OK;
}

static bool
computes (const fx_node *n)
{
  return n->op == FX_OP_CALL_FUNCTION || n->op == FX_OP_CALL_METHOD || n->op == FX_OP_CALL_MODULE;
}

void
fx_aot_forward_sources (const fx_graph *fw, const fx_node *bw_node, fx_arena *arena, const fx_node ***out,
                        size_t *n)
{
  *out = NULL;
  *n = 0;
  if (!computes (bw_node))
    return;
  bool by_seq = bw_node->meta.seq_nr >= 0;
  fx_stack_frame frame = { 0 };
  bool by_line = !by_seq && fx_stack_trace_innermost (bw_node->meta.stack_trace, arena, &frame) && frame.file;
  if (!by_seq && !by_line)
    return;
  size_t cap = 0;
  fx_graph_foreach_node (fw, f)
    cap++;
  const fx_node **v = fx_arena_alloc (arena, (cap ? cap : 1) * sizeof *v);
  fx_graph_foreach_node (fw, f)
    {
      if (!computes (f))
        continue;
      fx_stack_frame ff = { 0 };
      bool match = by_seq ? f->meta.seq_nr == bw_node->meta.seq_nr
                          : fx_stack_trace_innermost (f->meta.stack_trace, arena, &ff) && ff.file
                              && ff.line == frame.line && strcmp (ff.file, frame.file) == 0;
      if (match)
        v[(*n)++] = f;
    }
  *out = v;
}
