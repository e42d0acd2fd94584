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

/* The forward node the partitioner recomputed as bw_node: its name, target and arguments (by name) are the same. */
static const fx_node *
recomputed_from (const fx_graph *fw, const fx_node *bw_node)
{
  const fx_node *f = fx_graph_find_node (fw, bw_node->name);
  if (f == NULL || !computes (f) || !fx_target_equal (&f->target, &bw_node->target) || f->n_args != bw_node->n_args
      || f->n_kwargs != bw_node->n_kwargs)
    return NULL;
  fx_buf a, b;
  fx_buf_init (&a);
  fx_buf_init (&b);
  for (size_t i = 0; i < f->n_args; i++)
    {
      fx_arg_repr (&f->args[i], FX_REPR_CODE, &a);
      fx_arg_repr (&bw_node->args[i], FX_REPR_CODE, &b);
      fx_buf_putc (&a, ',');
      fx_buf_putc (&b, ',');
    }
  for (size_t i = 0; i < f->n_kwargs; i++)
    {
      fx_buf_printf (&a, "%s=", f->kwargs[i].name);
      fx_buf_printf (&b, "%s=", bw_node->kwargs[i].name);
      fx_arg_repr (&f->kwargs[i].value, FX_REPR_CODE, &a);
      fx_arg_repr (&bw_node->kwargs[i].value, FX_REPR_CODE, &b);
    }
  bool same = a.len == b.len && (a.len == 0 || memcmp (a.data, b.data, a.len) == 0);
  fx_buf_free (&a);
  fx_buf_free (&b);
  return same ? f : NULL;
}

bool
fx_aot_is_recomputed (const fx_graph *fw, const fx_node *bw_node)
{
  return computes (bw_node) && recomputed_from (fw, bw_node) != NULL;
}

void
fx_aot_forward_sources (const fx_graph *fw, const fx_node *bw_node, fx_arena *arena, const fx_node ***out,
                        size_t *n)
{
  *out = NULL;
  *n = 0;
  if (!computes (bw_node))
    return;
  const fx_node *same = recomputed_from (fw, bw_node);
  if (same != NULL)
    {
      const fx_node **v = fx_arena_alloc (arena, sizeof *v);
      v[0] = same;
      *out = v;
      *n = 1;
      return;
    }
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
