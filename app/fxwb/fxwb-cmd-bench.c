/* fxwb-cmd-bench.c: `fxwb bench NAME`, benchmarks of the engine itself, each a named entry in one table. */
#include "fxwb.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fx/accuracy.h"
#include "fx/pyparse.h"
#include "fx/runtime.h"

typedef struct
{
  const char *name;
  const char *summary;
  int (*run) (int argc, char **argv); /* argv[0] is the benchmark name */
} bench_entry;

static int bench_parse (int argc, char **argv);
static int bench_interp (int argc, char **argv);
static int bench_scale (int argc, char **argv);

/* Add a benchmark here: a name, one line of help, and a function that parses its own options. */
static const bench_entry benches[] = {
  { "parse", "Parse + print_tabular of a generated FX graph (print_readable text, --nodes N)", bench_parse },
  { "interp", "The interpreter against torch eager on the fixture graphs, side by side (--scale N, --repeat N)",
    bench_interp },
  { "scale", "Size: 10k/100k-node graphs (print, inductor compile) and 100 MB/1 GB traces (import): times, rates, "
             "peak RSS", bench_scale },
  { "inductor-cpu", "fxwb's CPU inductor against torch eager and torch.compile on the fixture and op-coverage graphs "
                    "at full size: ratio table and geomeans", fxwb_bench_inductor_cpu },
  { "inductor-cuda", "The same on the GPU: inputs resident, CUDA-event medians, against torch eager and torch.compile",
    fxwb_bench_inductor_cuda },
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

/* Parses a benchmark's options (it takes no arguments); on a wrong command line prints why and returns FALSE. */
static gboolean
parse_bench_options (const char *name, const char *parameter_string, const GOptionEntry *entries,
                     const char *summary, int argc, char **argv)
{
  g_autoptr (GOptionContext) context = fxwb_option_context_new (NULL, parameter_string, entries, summary, NULL);

  if (!fxwb_parse_options (context, &argc, &argv))
    return FALSE;
  if (argc > 1)
    {
      fprintf (stderr, "fxwb bench %s: unexpected argument '%s'\n", name, argv[1]);
      return FALSE;
    }
  return TRUE;
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
  if (!parse_bench_options ("parse", "- time the FX code parser", entries,
                            "Builds a print_readable text by repeating a block of the rmsnorm_residual fixture\n"
                            "with renamed nodes, then times fx_parse_fx_code and print_tabular on it.",
                            argc, argv))
    return FXWB_EXIT_USAGE;
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

/* ---------------------------------------------------------------- interp */

/* The torch side, started once. One JSON request per line on stdin, one JSON answer per line: "load" a graph's code
   and saved inputs, "time" n calls (time.perf_counter around each), "save" the last call's outputs. */
static const char interp_torch_script[] =
  "import json, re, sys, time\n"
  "import torch\n"
  "torch.set_num_threads(int(sys.argv[1]))\n"
  "DT = {'float32': torch.float32, 'float64': torch.float64, 'float16': torch.float16,\n"
  "      'bfloat16': torch.bfloat16, 'int64': torch.int64, 'int32': torch.int32, 'int16': torch.int16,\n"
  "      'int8': torch.int8, 'uint8': torch.uint8, 'bool': torch.bool}\n"
  "NAMES = {v: k for k, v in DT.items()}\n"
  "def load(path):\n"
  "    data = open(path, 'rb').read()\n"
  "    nl = data.index(b'\\n')\n"
  "    head = json.loads(data[:nl])\n"
  "    body = bytearray(data[nl + 1:])\n"
  "    dt = DT[head['dtype']]\n"
  "    if not body:\n"
  "        return torch.empty(head['shape'], dtype=dt)\n"
  "    raw = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.bool: torch.uint8}.get(dt, dt)\n"
  "    t = torch.frombuffer(body, dtype=raw).clone()\n"
  "    if raw is not dt:\n"
  "        t = t.view(dt) if dt is not torch.bool else t.to(torch.bool)\n"
  "    return t.reshape(head['shape'])\n"
  "def save(t, path):\n"
  "    t = t.contiguous()\n"
  "    raw = t.to(torch.uint8) if t.dtype is torch.bool else t.view(torch.int16) if t.dtype in (torch.float16, torch.bfloat16) else t\n"
  "    with open(path, 'wb') as f:\n"
  "        f.write(json.dumps({'dtype': NAMES[t.dtype], 'shape': list(t.shape)}).encode() + b'\\n')\n"
  "        f.write(raw.numpy().tobytes() if raw.numel() else b'')\n"
  "def module_source(text):\n"
  "    lines = text.splitlines()\n"
  "    start = next(i for i, l in enumerate(lines) if re.match(r'class \\S+\\(torch\\.nn\\.Module\\):', l))\n"
  "    out = ['class G(torch.nn.Module):']\n"
  "    for l in lines[start + 1:]:\n"
  "        if l and not l[0].isspace():\n"
  "            break\n"
  "        out.append(l)\n"
  "    return '\\n'.join(out) + '\\n'\n"
  "def flat(o):\n"
  "    return [y for x in o for y in flat(x)] if isinstance(o, (tuple, list)) else [o]\n"
  "print(json.dumps({'torch': torch.__version__, 'threads': torch.get_num_threads()}), flush=True)\n"
  "mod = args = out = None\n"
  "for line in sys.stdin:\n"
  "    job = json.loads(line)\n"
  "    try:\n"
  "        if job['op'] == 'load':\n"
  "            g = {'torch': torch, 'inf': float('inf'), 'nan': float('nan'), 'device': lambda *a, **k: torch.device('cpu')}\n"
  "            exec(compile(module_source(open(job['code']).read()), job['code'], 'exec'), g)\n"
  "            mod = g['G']()\n"
  "            args = [load(a) if isinstance(a, str) else a for a in job['inputs']]\n"
  "            print(json.dumps({'ok': True}), flush=True)\n"
  "        elif job['op'] == 'time':\n"
  "            ms = []\n"
  "            with torch.no_grad():\n"
  "                for _ in range(job['n']):\n"
  "                    t0 = time.perf_counter()\n"
  "                    out = mod(*args)\n"
  "                    ms.append((time.perf_counter() - t0) * 1000.0)\n"
  "            print(json.dumps({'ms': ms}), flush=True)\n"
  "        elif job['op'] == 'save':\n"
  "            outs = flat(out)\n"
  "            for i, o in enumerate(outs):\n"
  "                if isinstance(o, torch.Tensor):\n"
  "                    save(o, '%s.%d' % (job['out'], i))\n"
  "            mod = args = out = None\n"
  "            print(json.dumps({'outputs': len(outs)}), flush=True)\n"
  "    except Exception as e:\n"
  "        print(json.dumps({'error': '%s: %s' % (type(e).__name__, e)}), flush=True)\n";

/* The torch subprocess: its pipes and the script's temp file. */
typedef struct
{
  GPid pid;
  FILE *in, *out;
  char *script;
  char version[64];
  int threads;
} torch_proc;

static json_object *
torch_read_line (torch_proc *tp)
{
  char line[8192];
  if (fgets (line, sizeof line, tp->out) == NULL)
    return NULL;
  return json_tokener_parse (line);
}

/* Sends one request; returns the answer (NULL when the process ended) and fills err on an "error" answer. */
static json_object *
torch_request (torch_proc *tp, json_object *req, char *err, size_t err_size)
{
  fprintf (tp->in, "%s\n", json_object_to_json_string_ext (req, JSON_C_TO_STRING_PLAIN));
  fflush (tp->in);
  json_object_put (req);
  json_object *res = torch_read_line (tp), *v;
  if (res == NULL)
    g_snprintf (err, err_size, "the torch process ended");
  else if (json_object_object_get_ex (res, "error", &v))
    {
      g_snprintf (err, err_size, "%s", json_object_get_string (v));
      json_object_put (res);
      res = NULL;
    }
  return res;
}

static gboolean
torch_start (torch_proc *tp, const char *python, int threads, GError **error)
{
  memset (tp, 0, sizeof *tp);
  int fd = g_file_open_tmp ("fxwb-bench-XXXXXX.py", &tp->script, error);
  if (fd < 0)
    return FALSE;
  close (fd);
  if (!g_file_set_contents (tp->script, interp_torch_script, -1, error))
    return FALSE;
  char tbuf[16];
  g_snprintf (tbuf, sizeof tbuf, "%d", threads);
  const char *argv[] = { python, tp->script, tbuf, NULL };
  int fin, fout;
  if (!g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &tp->pid, &fin,
                                 &fout, NULL, error))
    return FALSE;
  tp->in = fdopen (fin, "w");
  tp->out = fdopen (fout, "r");
  json_object *hello = torch_read_line (tp);
  json_object *v;
  if (hello == NULL || !json_object_object_get_ex (hello, "torch", &v))
    {
      json_object_put (hello);
      g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "%s could not import torch", python);
      return FALSE;
    }
  g_snprintf (tp->version, sizeof tp->version, "%s", json_object_get_string (v));
  if (json_object_object_get_ex (hello, "threads", &v))
    tp->threads = json_object_get_int (v);
  json_object_put (hello);
  return TRUE;
}

static void
torch_stop (torch_proc *tp)
{
  if (tp->in)
    fclose (tp->in);
  if (tp->out)
    fclose (tp->out);
  if (tp->pid)
    {
      int status;
      waitpid (tp->pid, &status, 0);
      g_spawn_close_pid (tp->pid);
    }
  if (tp->script)
    {
      g_unlink (tp->script);
      g_free (tp->script);
    }
}

/* One fixture graph set up for both sides. */
typedef struct
{
  char *name;
  fx_graph *graph;
  fx_arena *arena;
  fx_value *inputs;
  size_t n_inputs;
} interp_graph;

static fx_status
interp_graph_load (const char *dir, const char *name, int scale, const char *tmp, interp_graph *ig, char **code_path,
                   fx_diag *diag)
{
  memset (ig, 0, sizeof *ig);
  ig->name = g_strdup (name);
  g_autofree char *py = g_strdup_printf ("%s/%s.py", dir, name);
  g_autofree char *js = g_strdup_printf ("%s/%s.inputs.json", dir, name);
  fx_status st = fx_parse_fx_file (py, &ig->graph, diag);
  if (st != FX_OK)
    return st;
  ig->arena = fx_arena_new ();
  if (g_file_test (js, G_FILE_TEST_EXISTS))
    {
      char *text;
      size_t len;
      fx_input_spec *specs;
      size_t n;
      if ((st = fx_file_read (js, &text, &len, diag)) != FX_OK)
        return st;
      st = fx_inputs_parse_json (text, len, js, ig->graph->arena, &specs, &n, diag);
      free (text);
      if (st != FX_OK)
        return st;
      for (size_t i = 0; i < n; i++)
        {
          fx_input_spec *s = fx_graph_add_input_spec (ig->graph, specs[i].name, specs[i].kind);
          s->val = specs[i].val;
        }
    }
  if (scale > 1)
    fx_graph_scale_inputs (ig->graph, scale, 16);
  if ((st = fx_inputs_make (ig->graph, FX_INPUTS_SPEC, NULL, 0, NULL, ig->arena, &ig->inputs, &ig->n_inputs, diag))
      != FX_OK)
    return st;
  /* torch runs the scaled graph's own text, so literal sizes in views and norms match the inputs */
  fx_buf code;
  fx_buf_init (&code);
  fx_readable_opts ro = { .include_stride = true };
  fx_graph_print_readable (ig->graph, &ro, &code);
  *code_path = g_strdup_printf ("%s/%s.py", tmp, name);
  st = fx_file_write (*code_path, code.data, code.len, diag);
  fx_buf_free (&code);
  return st;
}

static void
interp_graph_clear (interp_graph *ig)
{
  for (size_t i = 0; i < ig->n_inputs; i++)
    fx_value_clear (&ig->inputs[i]);
  if (ig->graph)
    fx_graph_free (ig->graph);
  if (ig->arena)
    fx_arena_free (ig->arena);
  g_free (ig->name);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static int
bench_interp (int argc, char **argv)
{
  int scale = 4, repeat = 10, warmup = 2, threads = 2;
  g_autofree char *dir = NULL;
  g_autofree char *python = NULL;
  g_autofree char *only = NULL;
  GOptionEntry entries[] = {
    { "scale", 's', 0, G_OPTION_ARG_INT, &scale, "Divide every input size >= 16 by N (default 4)", "N" },
    { "repeat", 'r', 0, G_OPTION_ARG_INT, &repeat, "Timed calls per graph and side; the median is reported (default 10)",
      "N" },
    { "warmup", 'w', 0, G_OPTION_ARG_INT, &warmup, "Untimed calls first (default 2)", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Threads for both sides: the kernels and OpenBLAS, and "
      "torch.set_num_threads (default 2)", "N" },
    { "dir", 'd', 0, G_OPTION_ARG_FILENAME, &dir, "Folder of fixture graphs NAME.py with NAME.inputs.json "
      "(default $FX_FIXTURES/graphs, else tests/fixtures/graphs)", "DIR" },
    { "graph", 'g', 0, G_OPTION_ARG_STRING, &only, "Only graphs whose name contains TEXT", "TEXT" },
    { "python", 0, 0, G_OPTION_ARG_FILENAME, &python, "Python with torch (default /usr/bin/python3)", "PATH" },
    { NULL },
  };
  if (!parse_bench_options ("interp", "- the interpreter against torch eager", entries,
                            "Runs every fixture graph with the interpreter and with torch eager (one Python\n"
                            "subprocess, started once) on the same inputs, and prints the median times side by\n"
                            "side, their ratio, whether the outputs agree (same()), and the geometric mean ratio.",
                            argc, argv))
    return FXWB_EXIT_USAGE;
  if (scale < 1 || scale > 65536 || repeat < 1 || repeat > 10000 || warmup < 0 || warmup > 100 || threads < 1
      || threads > 32)
    {
      fprintf (stderr, "fxwb bench interp: --scale must be 1..65536, --repeat 1..10000, --warmup 0..100, "
                       "--threads 1..32\n");
      return FXWB_EXIT_USAGE;
    }
  if (dir == NULL)
    dir = g_getenv ("FX_FIXTURES") ? g_build_filename (g_getenv ("FX_FIXTURES"), "graphs", NULL)
                                   : g_strdup ("tests/fixtures/graphs");
  if (python == NULL)
    python = g_strdup ("/usr/bin/python3");

  GDir *d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    {
      fprintf (stderr, "fxwb bench interp: cannot open the graph folder '%s' (--dir)\n", dir);
      return FXWB_EXIT_IO;
    }
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *e;
  while ((e = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (e, ".inputs.json"))
      {
        char *name = g_strndup (e, strlen (e) - strlen (".inputs.json"));
        if (only == NULL || strstr (name, only) != NULL)
          g_ptr_array_add (names, name);
        else
          g_free (name);
      }
  g_dir_close (d);
  qsort (names->pdata, names->len, sizeof (char *), cmp_str);
  if (names->len == 0)
    {
      fprintf (stderr, "fxwb bench interp: no NAME.inputs.json graphs in '%s'\n", dir);
      g_ptr_array_unref (names);
      return FXWB_EXIT_IO;
    }

  fx_runtime_set_threads (threads);
  g_autoptr (GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("fxwb-bench-interp-XXXXXX", &error);
  torch_proc tp;
  if (tmp == NULL || !torch_start (&tp, python, threads, &error))
    {
      fprintf (stderr, "fxwb bench interp: %s\n", error ? error->message : "cannot start torch");
      if (tmp == NULL)
        memset (&tp, 0, sizeof tp);
      torch_stop (&tp);
      if (tmp != NULL)
        fxwb_remove_tree (tmp);
      g_ptr_array_unref (names);
      return FXWB_EXIT_UNAVAILABLE;
    }

  printf ("bench interp: %u fixture graphs from %s, sizes >= 16 divided by %d\n", names->len, dir, scale);
  printf ("  median of %d calls after %d warm-up, %d threads on each side (kernels + OpenBLAS; torch %s with "
          "torch.set_num_threads(%d))\n\n", repeat, warmup, threads, tp.version, tp.threads);
  printf ("%-30s %6s %12s %12s %8s  %s\n", "graph", "nodes", "interp ms", "torch ms", "ratio", "same()");
  double log_sum = 0;
  int n_ratio = 0, status = FXWB_EXIT_OK;
  double *times = g_new (double, repeat);
  double *torch_times = g_new (double, repeat);
  for (guint gi = 0; gi < names->len; gi++)
    {
      const char *name = names->pdata[gi];
      interp_graph ig;
      fx_diag diag;
      fx_diag_clear (&diag);
      char *code_path = NULL;
      fx_status st = interp_graph_load (dir, name, scale, tmp, &ig, &code_path, &diag);
      if (st != FX_OK)
        {
          printf ("%-30s error: %s\n", name, diag.message);
          status = FXWB_EXIT_FAILURE;
          interp_graph_clear (&ig);
          g_free (code_path);
          continue;
        }
      /* torch gets the same input values through saved files */
      json_object *job = json_object_new_object ();
      json_object *jin = json_object_new_array ();
      for (size_t i = 0; i < ig.n_inputs; i++)
        {
          if (ig.inputs[i].kind == FX_VALUE_TENSOR)
            {
              g_autofree char *p = g_strdup_printf ("%s/%s.in%zu.fxt", tmp, name, i);
              fx_tensor_save (ig.inputs[i].u.t, p, &diag);
              json_object_array_add (jin, json_object_new_string (p));
            }
          else if (ig.inputs[i].kind == FX_VALUE_INT)
            json_object_array_add (jin, json_object_new_int64 (ig.inputs[i].u.i));
          else
            json_object_array_add (jin, NULL);
        }
      g_autofree char *out_prefix = g_strdup_printf ("%s/%s.out", tmp, name);
      json_object_object_add (job, "op", json_object_new_string ("load"));
      json_object_object_add (job, "code", json_object_new_string (code_path));
      json_object_object_add (job, "inputs", jin);
      char torch_err[512] = "";
      json_object_put (torch_request (&tp, job, torch_err, sizeof torch_err));

      /* torch's calls (warm-up, then timed), then the interpreter's: back to back, so both see the same machine
         load, and neither runs while the other's worker threads still spin */
      if (torch_err[0] == '\0')
        {
          json_object *req = json_object_new_object ();
          json_object_object_add (req, "op", json_object_new_string ("time"));
          json_object_object_add (req, "n", json_object_new_int (warmup + repeat));
          json_object *res = torch_request (&tp, req, torch_err, sizeof torch_err), *v;
          if (res != NULL && json_object_object_get_ex (res, "ms", &v)
              && (int) json_object_array_length (v) == warmup + repeat)
            for (int r = 0; r < repeat; r++)
              torch_times[r] = json_object_get_double (json_object_array_get_idx (v, (size_t) (warmup + r)));
          else if (torch_err[0] == '\0')
            g_snprintf (torch_err, sizeof torch_err, "no timings from torch");
          json_object_put (res);
        }
      fx_value *outs = NULL;
      size_t n_outs = 0;
      for (int r = -warmup; r < repeat && st == FX_OK; r++)
        {
          fx_arena *arena = fx_arena_new ();
          double t0 = now_ms ();
          st = fx_interp_run (ig.graph, ig.inputs, ig.n_inputs, NULL, arena, &outs, &n_outs, &diag);
          double t1 = now_ms ();
          if (r >= 0)
            times[r] = t1 - t0;
          /* the last call's outputs are checked against torch's: move them out of the arena */
          fx_value *kept = g_new0 (fx_value, n_outs ? n_outs : 1);
          for (size_t i = 0; i < n_outs; i++)
            kept[i] = outs[i];
          outs = kept;
          fx_arena_free (arena);
          if (r < repeat - 1 || st != FX_OK)
            {
              for (size_t i = 0; i < n_outs; i++)
                fx_value_clear (&outs[i]);
              g_free (outs);
              outs = NULL;
              n_outs = 0;
            }
        }
      if (torch_err[0] == '\0')
        {
          json_object *req = json_object_new_object ();
          json_object_object_add (req, "op", json_object_new_string ("save"));
          json_object_object_add (req, "out", json_object_new_string (out_prefix));
          json_object_put (torch_request (&tp, req, torch_err, sizeof torch_err));
        }
      double torch_ms = torch_err[0] == '\0' ? median (torch_times, repeat) : NAN;
      if (st != FX_OK)
        {
          printf ("%-30s %6zu interpreter error: %s\n", name, ig.graph->n_nodes, diag.message);
          status = FXWB_EXIT_FAILURE;
        }
      else
        {
          double interp_ms = median (times, repeat);
          const char *verdict = "-";
          if (torch_err[0] == '\0')
            {
              fx_value *ref = g_new0 (fx_value, n_outs ? n_outs : 1);
              bool loaded = true;
              for (size_t i = 0; i < n_outs; i++)
                {
                  g_autofree char *p = g_strdup_printf ("%s.%zu", out_prefix, i);
                  fx_tensor *t = NULL;
                  if (fx_tensor_load (p, NULL, &t, &diag) == FX_OK)
                    ref[i] = fx_value_tensor (t);
                  else
                    loaded = false;
                }
              fx_same_opts so;
              fx_same_opts_init (&so);
              fx_same_report rep;
              verdict = loaded && fx_same_values (ref, outs, NULL, n_outs, &so, &rep) ? "pass" : "FAIL";
              if (strcmp (verdict, "FAIL") == 0)
                status = FXWB_EXIT_FAILURE;
              for (size_t i = 0; i < n_outs; i++)
                fx_value_clear (&ref[i]);
              g_free (ref);
            }
          if (torch_err[0] != '\0')
            {
              printf ("%-30s %6zu %12.3f %12s %8s  torch error: %s\n", name, ig.graph->n_nodes, interp_ms, "-", "-",
                      torch_err);
              status = FXWB_EXIT_FAILURE;
            }
          else
            {
              double ratio = interp_ms / torch_ms;
              printf ("%-30s %6zu %12.3f %12.3f %8.2f  %s\n", name, ig.graph->n_nodes, interp_ms, torch_ms, ratio,
                      verdict);
              if (ratio > 0 && isfinite (ratio))
                {
                  log_sum += log (ratio);
                  n_ratio++;
                }
            }
          fflush (stdout);
        }
      for (size_t i = 0; i < n_outs; i++)
        fx_value_clear (&outs[i]);
      g_free (outs);
      interp_graph_clear (&ig);
      g_free (code_path);
    }
  if (n_ratio > 0)
    printf ("\ngeomean ratio (interp / torch) over %d graphs: %.2f\n", n_ratio, exp (log_sum / n_ratio));
  g_free (times);
  g_free (torch_times);
  torch_stop (&tp);
  fxwb_remove_tree (tmp);
  g_ptr_array_unref (names);
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

/* ---------------------------------------------------------------- scale */

/* Each measurement is this fxwb run as a child process on generated files, so its wall time and peak RSS are its
   own (wait4's ru_maxrss), as a user would see them. */
typedef struct
{
  double wall_s;
  double cpu_s;   /* user + system, all threads: on a shared box a steadier figure than wall time */
  long peak_kb;
  int status;
} scale_result;

static gboolean
scale_run (char **argv, const char *cache_dir, scale_result *r)
{
  double t0 = now_ms ();
  pid_t pid = fork ();
  struct rusage ru;
  int st = 0;

  if (pid < 0)
    return FALSE;
  if (pid == 0)
    {
      int devnull = open ("/dev/null", O_WRONLY);

      if (devnull >= 0)
        dup2 (devnull, STDOUT_FILENO);
      if (cache_dir != NULL)
        setenv ("FXWB_INDUCTOR_CACHE", cache_dir, 1);
      execv ("/proc/self/exe", argv);
      _exit (127);
    }
  if (wait4 (pid, &st, 0, &ru) < 0)
    return FALSE;
  r->wall_s = (now_ms () - t0) / 1000.0;
  r->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  r->peak_kb = ru.ru_maxrss;
  r->status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + (WIFSIGNALED (st) ? WTERMSIG (st) : 0);
  return TRUE;
}

/* A pointwise chain of the four ops Inductor fuses most (add, mul, sin, relu) over a 1024-element tensor, written
   as print_readable text. */
static gboolean
scale_write_graph (const char *path, int nodes, GError **error)
{
  static const char *const ops[][2] = { { "torch.ops.aten.add.Tensor(", ", 1.0)" },
                                        { "torch.ops.aten.mul.Tensor(", ", 0.5)" },
                                        { "torch.ops.aten.sin.default(", ")" },
                                        { "torch.ops.aten.relu.default(", ")" } };
  g_autoptr (GString) s = g_string_new ("class GraphModule(torch.nn.Module):\n"
                                        "    def forward(self, x: \"f32[1024][1]cpu\"):\n");
  char prev[32] = "x";

  for (int i = 0; i < nodes; i++)
    {
      g_string_append_printf (s, "        n%d: \"f32[1024][1]cpu\" = ", i);
      g_string_append_printf (s, "%s%s%s\n", ops[i % 4][0], prev, ops[i % 4][1]);
      g_snprintf (prev, sizeof prev, "n%d", i);
    }
  g_string_append_printf (s, "        return (%s,)\n", prev);
  return g_file_set_contents (path, s->str, (gssize) s->len, error);
}

/* The trace: a fixture TORCH_TRACE repeated with "frame_id": N shifted by a copy number, so every copy is new
   frames and compiles (not the same ones again), streamed to the file. */
static gboolean
scale_write_trace (const char *source, const char *path, double mb, GError **error)
{
  g_autofree char *base = NULL;
  gsize base_len = 0;
  static const char key[] = "\"frame_id\": ";
  int max_frame = 0;
  FILE *f;

  if (!g_file_get_contents (source, &base, &base_len, error))
    return FALSE;
  for (const char *p = base; (p = strstr (p, key)) != NULL; p += sizeof key - 1)
    max_frame = MAX (max_frame, atoi (p + sizeof key - 1));
  f = fopen (path, "wb");
  if (f == NULL)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", path, g_strerror (errno));
      return FALSE;
    }
  for (long copy = 0; (double) ftell (f) < mb * 1024 * 1024; copy++)
    {
      const char *p = base, *end = base + base_len, *hit;

      while (p < end && (hit = g_strstr_len (p, end - p, key)) != NULL)
        {
          char *num_end = NULL;
          long v;

          hit += sizeof key - 1;
          fwrite (p, 1, hit - p, f);
          v = strtol (hit, &num_end, 10);
          fprintf (f, "%ld", v + copy * (max_frame + 1));
          p = num_end;
        }
      fwrite (p, 1, end - p, f);
    }
  if (fclose (f) != 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", path, g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

static int scale_failures;

static void
scale_row (const char *what, const char *size, const scale_result *r, const char *rate)
{
  scale_failures += r->status != 0;
  if (r->status != 0)
    printf ("  %-30s %-14s failed (exit %d)\n", what, size, r->status);
  else
    printf ("  %-30s %-14s %8.2f s  %-12s %8.1f MB  %8.2f s\n", what, size, r->wall_s, rate ? rate : "",
            r->peak_kb / 1024.0, r->cpu_s);
  fflush (stdout);
}

/* The median of n runs (each field on its own: the median wall and the median CPU may come from different runs);
   the highest peak RSS; failed when any run failed. */
static scale_result
scale_median (const scale_result *runs, int n)
{
  double wall[n], cpu[n];
  scale_result m = { 0 };
  for (int i = 0; i < n; i++)
    {
      wall[i] = runs[i].wall_s;
      cpu[i] = runs[i].cpu_s;
      m.peak_kb = MAX (m.peak_kb, runs[i].peak_kb);
      if (runs[i].status != 0)
        m.status = runs[i].status;
    }
  m.wall_s = median (wall, n);
  m.cpu_s = median (cpu, n);
  return m;
}

static int
bench_scale (int argc, char **argv)
{
  g_autofree char *nodes_opt = NULL, *mb_opt = NULL, *trace = NULL, *keep = NULL;
  int repeat = 1;
  GOptionEntry entries[] = {
    { "nodes", 'n', 0, G_OPTION_ARG_STRING, &nodes_opt, "Graph sizes, comma-separated (default 10000,100000; "
      "\"\" for none)", "N,N" },
    { "trace-mb", 't', 0, G_OPTION_ARG_STRING, &mb_opt, "Trace sizes in MB, comma-separated (default 100,1000; "
      "\"\" for none)", "MB,MB" },
    { "trace", 0, 0, G_OPTION_ARG_FILENAME, &trace, "The TORCH_TRACE log to replicate (default: the toy_graph_break "
      "fixture under $FX_FIXTURES or tests/fixtures)", "LOG" },
    { "keep", 0, 0, G_OPTION_ARG_FILENAME, &keep, "Write the generated files into DIR and keep them (default: a "
      "temporary folder, removed)", "DIR" },
    { "repeat", 'r', 0, G_OPTION_ARG_INT, &repeat, "Import each trace N times into a new workspace and print the "
      "medians (default 1)", "N" },
    { NULL },
  };
  g_autofree char *dir = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) sizes = NULL, mbs = NULL;
  int status = FXWB_EXIT_OK;

  if (!parse_bench_options ("scale", "- time fxwb on large graphs and traces", entries,
                            "Generates pointwise-chain graphs (print_readable text) and TORCH_TRACE logs (a fixture "
                            "trace repeated with\nnew frame ids), then runs fxwb print --tabular, fxwb compile -b "
                            "inductor (a cold kernel cache)\nand fxwb import on them, each as a child process: "
                            "wall time, rate, peak RSS and CPU time\n(user + system, all threads).",
                            argc, argv))
    return FXWB_EXIT_USAGE;
  if (repeat < 1 || repeat > 100)
    {
      fprintf (stderr, "fxwb bench scale: --repeat takes 1 to 100, not %d\n", repeat);
      return FXWB_EXIT_USAGE;
    }
  sizes = g_strsplit (nodes_opt ? nodes_opt : "10000,100000", ",", -1);
  mbs = g_strsplit (mb_opt ? mb_opt : "100,1000", ",", -1);
  for (int i = 0; sizes[i]; i++)
    if (*sizes[i] && (atoi (sizes[i]) < 1 || atoi (sizes[i]) > 10000000))
      {
        fprintf (stderr, "fxwb bench scale: --nodes takes sizes from 1 to 10000000, not '%s'\n", sizes[i]);
        return FXWB_EXIT_USAGE;
      }
  for (int i = 0; mbs[i]; i++)
    if (*mbs[i] && (g_ascii_strtod (mbs[i], NULL) <= 0 || g_ascii_strtod (mbs[i], NULL) > 100000))
      {
        fprintf (stderr, "fxwb bench scale: --trace-mb takes sizes above 0 and up to 100000, not '%s'\n", mbs[i]);
        return FXWB_EXIT_USAGE;
      }
  if (trace == NULL && mbs[0] != NULL && *mbs[0])
    {
      const char *fixtures = g_getenv ("FX_FIXTURES");
      g_autofree char *folder = g_build_filename (fixtures ? fixtures : "tests/fixtures", "traces",
                                                  "toy_graph_break-cuda", "torch_trace", NULL);
      g_autoptr (GDir) d = g_dir_open (folder, 0, NULL);
      const char *name = d ? g_dir_read_name (d) : NULL;

      if (name == NULL)
        {
          fprintf (stderr, "fxwb bench scale: no trace to replicate in %s: name one with --trace LOG (or set "
                           "FX_FIXTURES), or --trace-mb \"\" to leave traces out\n", folder);
          return FXWB_EXIT_USAGE;
        }
      trace = g_build_filename (folder, name, NULL);
    }
  dir = keep ? g_strdup (keep) : g_dir_make_tmp ("fxwb-bench-scale-XXXXXX", &error);
  if (dir == NULL || g_mkdir_with_parents (dir, 0700) != 0)
    {
      fprintf (stderr, "fxwb bench scale: %s\n", error ? error->message : g_strerror (errno));
      return FXWB_EXIT_IO;
    }
  printf ("fxwb bench scale: files in %s%s\n", dir, keep ? "" : " (removed at the end)");
  printf ("  %-30s %-14s %10s  %-12s %11s  %10s\n", "what", "size", "wall", "rate", "peak RSS", "CPU");
  for (int i = 0; sizes[i] && status == FXWB_EXIT_OK; i++)
    {
      int n = atoi (sizes[i]);
      g_autofree char *graph = g_strdup_printf ("%s/chain%d.py", dir, n);
      g_autofree char *cache = g_strdup_printf ("%s/cache%d", dir, n);
      g_autofree char *size = g_strdup_printf ("%d nodes", n);
      char *print_argv[] = { (char *) "fxwb", (char *) "print", graph, (char *) "--tabular", NULL };
      char *compile_argv[] = { (char *) "fxwb", (char *) "compile", graph, (char *) "-b", (char *) "inductor", NULL };
      scale_result r;

      if (!*sizes[i])
        continue;
      if (!scale_write_graph (graph, n, &error))
        {
          fprintf (stderr, "fxwb bench scale: %s\n", error->message);
          status = FXWB_EXIT_IO;
          break;
        }
      g_mkdir_with_parents (cache, 0700);
      if (!scale_run (print_argv, NULL, &r))
        status = FXWB_EXIT_FAILURE;
      else
        scale_row ("print --tabular (parse+print)", size, &r, NULL);
      if (status == FXWB_EXIT_OK && scale_run (compile_argv, cache, &r))
        scale_row ("compile -b inductor (cold)", size, &r, NULL);
      if (status == FXWB_EXIT_OK && scale_run (compile_argv, cache, &r))
        scale_row ("compile -b inductor (cached)", size, &r, NULL);
      if (!keep)
        {
          fxwb_remove_tree (cache);
          g_unlink (graph);
        }
    }
  for (int i = 0; mbs[i] && status == FXWB_EXIT_OK; i++)
    {
      double mb = g_ascii_strtod (mbs[i], NULL);
      g_autofree char *log = g_strdup_printf ("%s/trace%s.log", dir, mbs[i]);
      g_autofree char *ws = g_strdup_printf ("%s/trace%s.fxwb", dir, mbs[i]);
      g_autofree char *size = NULL, *rate = NULL, *wal = NULL, *shm = NULL;
      char *import_argv[] = { (char *) "fxwb", (char *) "import", (char *) "--quiet", log, (char *) "-o", ws, NULL };
      GStatBuf st;
      scale_result r;

      if (!*mbs[i])
        continue;
      if (!scale_write_trace (trace, log, mb, &error))
        {
          fprintf (stderr, "fxwb bench scale: %s\n", error->message);
          status = FXWB_EXIT_IO;
          break;
        }
      g_stat (log, &st);
      size = g_strdup_printf ("%.0f MB", st.st_size / 1048576.0);
      wal = g_strdup_printf ("%s-wal", ws);
      shm = g_strdup_printf ("%s-shm", ws);
      g_autofree scale_result *runs = g_new0 (scale_result, repeat);
      for (int k = 0; k < repeat && status == FXWB_EXIT_OK; k++)
        {
          /* each run imports into a new workspace, as the first one does */
          g_unlink (ws);
          g_unlink (wal);
          g_unlink (shm);
          if (!scale_run (import_argv, NULL, &runs[k]))
            status = FXWB_EXIT_FAILURE;
        }
      if (status == FXWB_EXIT_OK)
        {
          r = scale_median (runs, repeat);
          rate = g_strdup_printf ("%.0f MB/s", st.st_size / 1048576.0 / MAX (r.wall_s, 1e-9));
          scale_row (repeat > 1 ? "import TORCH_TRACE (median)" : "import TORCH_TRACE", size, &r, rate);
        }
      if (!keep)
        {
          g_unlink (log);
          g_unlink (ws);
          g_unlink (wal);
          g_unlink (shm);
        }
    }
  if (!keep)
    g_rmdir (dir);
  return status == FXWB_EXIT_OK && scale_failures > 0 ? FXWB_EXIT_FAILURE : status;
}
