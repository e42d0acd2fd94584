/* fxwb-cmd-bench.c: `fxwb bench NAME`, benchmarks of the engine itself, each a named entry in one table. */
#include "fxwb.h"

#include <stdlib.h>
#include <string.h>

#include "fx/pyparse.h"

typedef struct
{
  const char *name;
  const char *summary;
  int (*run) (int argc, char **argv); /* argv[0] is the benchmark name */
} bench_entry;

static int bench_parse (int argc, char **argv);

/* Add a benchmark here: a name, one line of help, and a function that parses its own options. */
static const bench_entry benches[] = {
  { "parse", "Parse + print_tabular of a generated FX graph (print_readable text, --nodes N)", bench_parse },
};

/* ---------------------------------------------------------------- timing helpers */

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
now_ms (void)
{
  return (double) g_get_monotonic_time () / 1000.0;
}

/* ---------------------------------------------------------------- parse */

/* One block of tests/fixtures/graphs/rmsnorm_residual.core_aten.0.py (7 nodes) with its nodes renamed by block:
   %1$s is the block's input, %2$d the block number. Blocks chain, so the graph is one long dependency path. */
#define PARSE_BLOCK \
  "\n" \
  "        # File: /home/user/bench/gen_graphs_bench.py:25 in forward, code: return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w, h\n" \
  "        add_b%2$d: \"f32[8192, 4096][4096, 1]cuda:0\" = torch.ops.aten.add.Tensor(%1$s, arg1_1);  %1$s = None\n" \
  "        pow_b%2$d: \"f32[8192, 4096][4096, 1]cuda:0\" = torch.ops.aten.pow.Tensor_Scalar(add_b%2$d, 2)\n" \
  "        mean_b%2$d: \"f32[8192, 1][1, 1]cuda:0\" = torch.ops.aten.mean.dim(pow_b%2$d, [-1], True);  pow_b%2$d = None\n" \
  "        eps_b%2$d: \"f32[8192, 1][1, 1]cuda:0\" = torch.ops.aten.add.Tensor(mean_b%2$d, 1e-06);  mean_b%2$d = None\n" \
  "        rsqrt_b%2$d: \"f32[8192, 1][1, 1]cuda:0\" = torch.ops.aten.rsqrt.default(eps_b%2$d);  eps_b%2$d = None\n" \
  "        mul_b%2$d: \"f32[8192, 4096][4096, 1]cuda:0\" = torch.ops.aten.mul.Tensor(add_b%2$d, rsqrt_b%2$d);  add_b%2$d = rsqrt_b%2$d = None\n" \
  "        out_b%2$d: \"f32[8192, 4096][4096, 1]cuda:0\" = torch.ops.aten.mul.Tensor(mul_b%2$d, arg2_1);  mul_b%2$d = None\n"

enum { PARSE_BLOCK_NODES = 7, PARSE_FIXED_NODES = 4 /* 3 placeholders and the output */ };

static char *
make_parse_text (int blocks, size_t *len)
{
  GString *s = g_string_new ("class <lambda>(torch.nn.Module):\n"
                             "    def forward(self, arg0_1: \"f32[8192, 4096][4096, 1]cuda:0\", "
                             "arg1_1: \"f32[8192, 4096][4096, 1]cuda:0\", arg2_1: \"f32[4096][1]cuda:0\"):");
  char input[32] = "arg0_1";
  for (int b = 0; b < blocks; b++)
    {
      g_string_append_printf (s, PARSE_BLOCK, input, b);
      g_snprintf (input, sizeof input, "out_b%d", b);
    }
  g_string_append_printf (s, "        return (%s,)\n", input);
  *len = s->len;
  return g_string_free (s, FALSE);
}

static int
bench_parse (int argc, char **argv)
{
  int nodes = 10000;
  int runs = 9;
  GOptionEntry entries[] = {
    { "nodes", 'n', 0, G_OPTION_ARG_INT, &nodes, "Nodes in the generated graph (default 10000)", "N" },
    { "runs", 'r', 0, G_OPTION_ARG_INT, &runs, "Timed runs; the median is reported (default 9)", "R" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("- time the FX code parser");
  g_option_context_set_summary (context,
                                "Builds a print_readable text by repeating a block of the rmsnorm_residual fixture\n"
                                "with renamed nodes, then times fx_parse_fx_code and print_tabular on it.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  if (argc > 1)
    {
      fprintf (stderr, "fxwb bench parse: unexpected argument '%s'\n", argv[1]);
      return FXWB_EXIT_USAGE;
    }
  if (nodes < PARSE_FIXED_NODES + PARSE_BLOCK_NODES || nodes > 10000000 || runs < 1 || runs > 1000)
    {
      fprintf (stderr, "fxwb bench parse: --nodes must be 11..10000000 and --runs 1..1000\n");
      return FXWB_EXIT_USAGE;
    }

  int blocks = (nodes - PARSE_FIXED_NODES + PARSE_BLOCK_NODES - 1) / PARSE_BLOCK_NODES;
  size_t len;
  g_autofree char *text = make_parse_text (blocks, &len);
  double *parse_ms = g_new (double, runs);
  double *tab_ms = g_new (double, runs);
  double *total_ms = g_new (double, runs);
  size_t n_nodes = 0, tab_len = 0;
  int status = FXWB_EXIT_OK;

  /* One untimed run warms the allocator and page cache. */
  for (int r = -1; r < runs; r++)
    {
      fx_graph *g = NULL;
      fx_diag diag;
      fx_buf tab;
      double t0 = now_ms ();
      fx_status st = fx_parse_fx_code (text, len, "bench.py", &g, &diag);
      double t1 = now_ms ();
      if (st != FX_OK)
        {
          fxwb_print_diag (&diag);
          status = fxwb_exit_for_status (st);
          break;
        }
      fx_buf_init (&tab);
      fx_graph_print_tabular (g, &tab);
      double t2 = now_ms ();
      n_nodes = g->n_nodes;
      tab_len = tab.len;
      fx_buf_free (&tab);
      fx_graph_free (g);
      if (r >= 0)
        {
          parse_ms[r] = t1 - t0;
          tab_ms[r] = t2 - t1;
          total_ms[r] = t2 - t0;
        }
    }
  if (status == FXWB_EXIT_OK)
    {
      double best = total_ms[0];
      for (int r = 1; r < runs; r++)
        best = MIN (best, total_ms[r]);
      printf ("bench parse: %zu nodes, %zu bytes of print_readable text, %d runs\n", n_nodes, len, runs);
      printf ("  parse          %8.2f ms (median)\n", median (parse_ms, runs));
      printf ("  print_tabular  %8.2f ms (median, %zu bytes)\n", median (tab_ms, runs), tab_len);
      printf ("  total          %8.2f ms (median), %.2f ms (best)\n", median (total_ms, runs), best);
      printf ("  throughput     %8.1f MB/s parsed\n", (double) len / 1e6 / (median (parse_ms, runs) / 1000.0));
    }
  g_free (parse_ms);
  g_free (tab_ms);
  g_free (total_ms);
  return status;
}

/* ---------------------------------------------------------------- dispatch */

static void
print_list (FILE *out)
{
  for (size_t i = 0; i < G_N_ELEMENTS (benches); i++)
    fprintf (out, "  %-10s %s\n", benches[i].name, benches[i].summary);
}

int
fxwb_cmd_bench (int argc, char **argv)
{
  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      FILE *out = argc < 2 ? stderr : stdout;
      fprintf (out, "Usage: fxwb bench NAME [OPTIONS...]\n"
                    "       fxwb bench --list\n"
                    "\n"
                    "Benchmarks of the engine itself (NAME --help for a benchmark's options):\n");
      print_list (out);
      fprintf (out, "\nExit status: 0 success, 1 the benchmark failed, 2 wrong command line.\n");
      return argc < 2 ? FXWB_EXIT_USAGE : FXWB_EXIT_OK;
    }
  if (strcmp (argv[1], "--list") == 0)
    {
      for (size_t i = 0; i < G_N_ELEMENTS (benches); i++)
        printf ("%s\n", benches[i].name);
      return FXWB_EXIT_OK;
    }
  for (size_t i = 0; i < G_N_ELEMENTS (benches); i++)
    if (strcmp (argv[1], benches[i].name) == 0)
      return benches[i].run (argc - 1, argv + 1);
  fprintf (stderr, "fxwb bench: unknown benchmark '%s'; known:\n", argv[1]);
  print_list (stderr);
  return FXWB_EXIT_USAGE;
}
