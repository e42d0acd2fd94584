/* bench-print.c: time of each text printer and of the JSON round trip on a 10,000-node graph built in memory
   (a chain of the mlp_block block: t, addmm, gelu, add). A benchmark, not a test: it prints figures. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fx/ir.h"

static fx_graph *
build (int n_nodes)
{
  fx_graph *g = fx_graph_new ();
  fx_val val;
  g->class_name = "<lambda>";
  fx_node *x = fx_graph_placeholder (g, "arg0_1");
  fx_node *w = fx_graph_placeholder (g, "arg1_1");
  fx_val_parse_annotation ("f32[8192, 1024][1024, 1]cuda:0", g->arena, &val);
  x->meta.val = val;
  w->meta.val = val;
  const char *trace = "  File \"/home/user/bench/gen_graphs_bench.py\", line 31, in forward\n"
                      "    return x + self.fc2(F.gelu(self.fc1(x)))\n";
  fx_node *prev = x;
  for (int i = 0; g->n_nodes < (size_t) n_nodes - 1; i++)
    {
      fx_arg a1[1] = { fx_arg_node (w) };
      fx_node *t = fx_graph_call_function (g, fx_target_op ("aten.t.default"), a1, 1, NULL, 0);
      fx_arg a2[3] = { fx_arg_node (prev), fx_arg_node (prev), fx_arg_node (t) };
      fx_node *mm = fx_graph_call_function (g, fx_target_op ("aten.addmm.default"), a2, 3, NULL, 0);
      fx_arg a3[1] = { fx_arg_node (mm) };
      fx_kwarg kw[1] = { { "approximate", fx_arg_str ("tanh") } };
      fx_node *ge = fx_graph_call_function (g, fx_target_op ("aten.gelu.default"), a3, 1, kw, 1);
      fx_arg a4[2] = { fx_arg_node (ge), fx_arg_float (0.7071067811865476) };
      fx_node *add = fx_graph_call_function (g, fx_target_op ("aten.add.Tensor"), a4, 2, NULL, 0);
      fx_node *made[4] = { t, mm, ge, add };
      for (int k = 0; k < 4; k++)
        {
          made[k]->meta.val = val;
          made[k]->meta.stack_trace = trace;
        }
      prev = add;
    }
  fx_arg o[1] = { fx_arg_node (prev) };
  fx_graph_output (g, fx_arg_tuple (o, 1));
  return g;
}

int
main (void)
{
  fx_graph *g = build (10000);
  fx_buf b;
  fx_readable_opts opts = { true, true, false };
  double best[7] = { 1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9 };

  fx_buf_init (&b);
  for (int rep = 0; rep < 5; rep++)
    {
      double t[8];
      fx_graph *back = NULL;
      fx_diag diag;
      t[0] = fx_now_ms ();
      fx_buf_reset (&b);
      fx_graph_print_tabular (g, &b);
      t[1] = fx_now_ms ();
      fx_buf_reset (&b);
      fx_graph_print_readable (g, &opts, &b);
      t[2] = fx_now_ms ();
      fx_buf_reset (&b);
      fx_graph_print_code (g, &b);
      t[3] = fx_now_ms ();
      fx_buf_reset (&b);
      fx_graph_print_str (g, &b);
      t[4] = fx_now_ms ();
      fx_buf_reset (&b);
      fx_graph_dump_dot (g, &b);
      t[5] = fx_now_ms ();
      fx_buf_reset (&b);
      fx_graph_to_json (g, &b);
      t[6] = fx_now_ms ();
      if (fx_graph_from_json (b.data, b.len, &back, &diag) != FX_OK)
        {
          fprintf (stderr, "from_json: %s\n", diag.message);
          return 1;
        }
      t[7] = fx_now_ms ();
      fx_graph_free (back);
      for (int k = 0; k < 7; k++)
        if (t[k + 1] - t[k] < best[k])
          best[k] = t[k + 1] - t[k];
    }
  printf ("%zu nodes, best of 5 (ms): print_tabular %.1f  print_readable %.1f  code %.1f  graph %.1f  dot %.1f  "
          "to_json %.1f  from_json %.1f\n", g->n_nodes, best[0], best[1], best[2], best[3], best[4], best[5], best[6]);
  fx_buf_free (&b);
  fx_graph_free (g);
  return 0;
}
