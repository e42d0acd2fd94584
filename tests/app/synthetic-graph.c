/* synthetic-graph.c: a synthetic graph shaped like a stack of transformer blocks, built through the IR API. */
#include "fx-config.h"

#include <stdio.h>

#include "synthetic-graph.h"

static void
set_meta (fx_graph *graph, fx_node *node, unsigned module)
{
  fx_meta *meta = &node->meta;
  fx_dim *sizes = fx_arena_alloc (graph->arena, 2 * sizeof (fx_dim));

  sizes[0].value = 64;
  sizes[1].value = 256;
  meta->val.kind = FX_VAL_TENSOR;
  meta->val.tensor.dtype = FX_DTYPE_F32;
  meta->val.tensor.ndim = 2;
  meta->val.tensor.sizes = sizes;
  if (module != (unsigned) -1)
    {
      meta->nn_module_stack = fx_arena_alloc (graph->arena, sizeof (fx_module_entry));
      meta->nn_module_stack[0].key = fx_arena_printf (graph->arena, "L['self'].layers[%u]", module);
      meta->nn_module_stack[0].path = fx_arena_printf (graph->arena, "layers.%u", module);
      meta->nn_module_stack[0].type = "model.Block";
      meta->n_nn_module_stack = 1;
      meta->stack_trace = fx_arena_printf (graph->arena,
                                           "  File \"/nonexistent/model.py\", line %u, in forward\n    x = self.layers[%u](x)\n",
                                           10 + module, module);
    }
}

fx_graph *
fxw_test_synthetic_graph (unsigned n_modules, unsigned per_module)
{
  static const char *ops[] = { "aten.mm.default", "aten.add.Tensor", "aten.relu.default", "aten.mul.Tensor" };
  fx_graph *graph = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (graph, "x");
  fx_node *w = fx_graph_placeholder (graph, "w");

  set_meta (graph, x, (unsigned) -1);
  set_meta (graph, w, (unsigned) -1);
  for (unsigned m = 0; m < n_modules; m++)
    {
      fx_node *block_in = x;

      for (unsigned k = 0; k < per_module; k++)
        {
          const char *op = ops[k % 4];
          fx_arg args[2];
          size_t n_args = 1;
          fx_node *node;

          args[0] = fx_arg_node (x);
          if (k % 4 == 0)
            args[n_args++] = fx_arg_node (w);
          else if (k % 4 == 1)
            args[n_args++] = fx_arg_node (block_in);
          else if (k % 4 == 3)
            args[n_args++] = fx_arg_float (0.5);
          node = fx_graph_call_function (graph, fx_target_op (op), args, n_args, NULL, 0);
          set_meta (graph, node, m);
          x = node;
        }
    }
  fx_graph_output (graph, fx_arg_node (x));
  return graph;
}
