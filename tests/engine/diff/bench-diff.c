/* bench-diff.c: graph diff on 100,000-node graphs (`meson test -C build --benchmark --suite diff-bench`): the time to
   match and compare a graph against a copy with a few edits, and against a copy with every node renamed. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "fx/diff.h"

static fx_graph *
chain (int n, const char *prefix)
{
  static const char *const ops[] = { "aten.sin.default", "aten.cos.default", "aten.exp.default", "aten.relu.default" };
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_node *prev = x;
  char name[64];
  for (int i = 0; i < n; i++)
    {
      fx_arg args[2] = { fx_arg_node (prev), fx_arg_node (x) };
      g_snprintf (name, sizeof name, "%s%d", prefix, i);
      prev = fx_graph_create_node (g, FX_OP_CALL_FUNCTION,
                                   fx_target_op (i % 5 == 4 ? "aten.add.Tensor" : ops[i % 4]), args,
                                   i % 5 == 4 ? 2 : 1, NULL, 0, name);
    }
  fx_graph_output (g, fx_arg_node (prev));
  return g;
}

static double
time_diff (const fx_graph *a, const fx_graph *b, size_t *count)
{
  gint64 t0 = g_get_monotonic_time ();
  fx_diff *d = fx_diff_new ("a", "b");
  fx_diff_graphs (d, a, b, NULL, NULL, NULL);
  *count = fx_diff_count (d);
  fx_diff_free (d);
  return (g_get_monotonic_time () - t0) / 1000.0;
}

int
main (void)
{
  enum { N = 100000 };
  fx_graph *a = chain (N, "n");
  fx_graph *b = fx_graph_copy (a);
  int edits = 0;
  fx_graph_foreach_node (b, node)
    if (node->op == FX_OP_CALL_FUNCTION && node->id % 9973 == 0)
      {
        node->target = fx_target_op ("aten.tanh.default");
        edits++;
      }
  fx_graph *renamed = chain (N, "m");
  size_t count = 0;
  double ms = time_diff (a, b, &count);
  printf ("graph diff, %d nodes, %d edits: %.1f ms (%zu differences)\n", N, edits, ms, count);
  fx_diff_graph_opts opts;
  fx_diff_graph_opts_init (&opts);
  gint64 t0 = g_get_monotonic_time ();
  fx_diff *d = fx_diff_new ("a", "renamed");
  opts.ignore_names = true;
  fx_diff_graphs (d, a, renamed, NULL, &opts, NULL);
  printf ("graph diff, %d nodes, every node renamed (matched by target and position): %.1f ms (%zu differences)\n", N,
          (g_get_monotonic_time () - t0) / 1000.0, fx_diff_count (d));
  fx_diff_free (d);
  fx_graph_free (a);
  fx_graph_free (b);
  fx_graph_free (renamed);
  return 0;
}
