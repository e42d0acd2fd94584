/* bench-inductor-cuda.c: the inductor backend's CUDA path on the GPU host, side by side with real torch.compile
   (Inductor) on the same graphs, shapes and GPU: every fixture graph at full shape (cold compile time, kernel time
   from CUDA events, wall time per call, achieved GB/s against the copy bandwidth of the fixtures README), and a
   launch-bound chain of 20 pointwise ops on 4096 elements under reduce-overhead against default; mlp_block's GEMMs
   with the residual epilogue, without it, and under max-autotune.
   usage: bench-inductor-cuda [bench-torch-cuda.py]; fixtures from $FX_FIXTURES; env BENCH_REPEAT (50), BENCH_PYTHON
   (python3; set BENCH_TORCH=0 to skip torch), BENCH_COPY_GBS (3000, the H100 figure of the README). */
#include "../cuda/cuda-test.h"
#include "inductor-cuda-common.h"
#include "cuda/fx-cuda.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static fx_cuda *cuda;

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* torch's figures: median ms and cold compile seconds, or -1. path/mode come from our tables (no input text). */
static bool
torch_run (const char *script, const char *path, const char *mode, int repeat, double *ms, double *compile_s)
{
  *ms = *compile_s = -1;
  if (!script || (getenv ("BENCH_TORCH") && strcmp (getenv ("BENCH_TORCH"), "0") == 0))
    return false;
  const char *python = getenv ("BENCH_PYTHON") ? getenv ("BENCH_PYTHON") : "python3";
  char cmd[4096];
  snprintf (cmd, sizeof cmd, "'%s' '%s' '%s' '%s' %d 2>/dev/null", python, script, path, mode, repeat);
  for (const char *c = python; *c; c++)
    if (*c == '\'')
      return false;
  FILE *f = popen (cmd, "r");
  if (!f)
    return false;
  char line[256] = "";
  bool ok = fgets (line, sizeof line, f) != NULL && sscanf (line, "%lf %lf", ms, compile_s) == 2;
  pclose (f);
  return ok;
}

static size_t
value_bytes (const fx_value *v)
{
  if (v->kind != FX_VALUE_TENSOR)
    return 0;
  return (size_t) fx_tensor_numel (v->u.t) * fx_dtype_size (v->u.t->dtype);
}

static fx_value *
to_device (const fx_value *in, size_t n)
{
  fx_value *d = calloc (n + 1, sizeof *d);
  for (size_t i = 0; i < n; i++)
    {
      fx_tensor *t = NULL;
      if (in[i].kind == FX_VALUE_TENSOR && fx_cuda_tensor_to_device (cuda, NULL, in[i].u.t, &t, NULL) == FX_OK)
        d[i] = fx_value_tensor (t);
      else
        d[i] = in[i];
    }
  return d;
}

/* Median wall ms per call (each call ends synchronized). */
static double
wall_ms (fx_compiled *c, const fx_value *in, size_t n, int repeat)
{
  double *t = calloc ((size_t) repeat + 1, sizeof (double));
  fx_diag diag;
  for (int r = -3; r < repeat; r++)
    {
      fx_arena *arena = fx_arena_new ();
      fx_value *res = NULL;
      size_t n_res = 0;
      double t0 = fx_now_ms ();
      fx_status st = fx_inductor_run (c, in, n, arena, &res, &n_res, &diag);
      double dt = fx_now_ms () - t0;
      for (size_t i = 0; i < n_res; i++)
        fx_value_clear (&res[i]);
      fx_arena_free (arena);
      if (st != FX_OK)
        {
          printf ("# run: %s\n", diag.message);
          free (t);
          return -1;
        }
      if (r >= 0)
        t[r] = dt;
    }
  qsort (t, (size_t) repeat, sizeof (double), cmp);
  double m = t[repeat / 2];
  free (t);
  return m;
}

static void
bench_fixtures (const char *script, int repeat, double copy_gbs)
{
  printf ("\n%-30s %10s %10s %10s %8s %8s %10s %10s %9s\n", "graph", "kernels", "wall", "torch", "GB/s", "of copy",
          "compile s", "torch cs", "speedup");
  for (size_t i = 0; i < ICUDA_N_FIXTURES; i += 2)
    {
      const char *name = icuda_fixture_names[i];
      fx_diag diag;
      fx_diag_clear (&diag);
      fx_graph *g = icuda_load_fixture (name, &diag);
      if (!g)
        {
          printf ("%-30s %s\n", name, diag.message);
          continue;
        }
      fx_arena *arena = fx_arena_new ();
      fx_value *in = NULL;
      size_t n = 0;
      if (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 42, NULL, arena, &in, &n, &diag) != FX_OK)
        {
          printf ("%-30s inputs: %s\n", name, diag.message);
          fx_graph_free (g);
          fx_arena_free (arena);
          continue;
        }
      fx_value *din = to_device (in, n);
      for (size_t k = 0; k < n; k++)
        fx_value_clear (&in[k]);
      /* cold: a fresh NVRTC cache for this graph */
      char cache[256];
      snprintf (cache, sizeof cache, "/tmp/fx-bench-cuda-cache-XXXXXX");
      if (mkdtemp (cache))
        setenv ("FX_CUDA_CACHE_DIR", cache, 1);
      fx_compiled *c = NULL;
      double t0 = fx_now_ms ();
      fx_status st = fx_inductor_compile (g, din, n, NULL, NULL, 0, &c, &diag);
      double compile_s = (fx_now_ms () - t0) / 1e3;
      if (st != FX_OK)
        {
          printf ("%-30s compile: %s\n", name, diag.message);
          fx_graph_free (g);
          fx_arena_free (arena);
          continue;
        }
      double wall = wall_ms (c, din, n, repeat);
      double kern = -1;
      if (fx_inductor_profile (c, din, n, repeat, &diag) == FX_OK)
        {
          kern = 0;
          for (size_t k = 0; k < c->n_kernels; k++)
            kern += c->kernels[k].time_ms;
        }
      /* bytes a fused program cannot avoid: every input read once, every output written once */
      size_t bytes = 0;
      for (size_t k = 0; k < n; k++)
        bytes += value_bytes (&din[k]);
      {
        fx_value *res = NULL;
        size_t n_res = 0;
        if (fx_inductor_run (c, din, n, arena, &res, &n_res, &diag) == FX_OK)
          for (size_t k = 0; k < n_res; k++)
            {
              bytes += value_bytes (&res[k]);
              fx_value_clear (&res[k]);
            }
      }
      double gbs = kern > 0 ? bytes / (kern * 1e6) : -1;
      char path[2048];
      snprintf (path, sizeof path, "%s/graphs/%s.py", icuda_fixtures_dir (), name);
      double tms, tcs;
      torch_run (script, path, "default", repeat, &tms, &tcs);
      printf ("%-30s %10.4f %10.4f %10.4f %8.0f %7.0f%% %10.3f %10.3f %8.2fx\n", name, kern, wall, tms, gbs,
              gbs > 0 ? 100 * gbs / copy_gbs : -1.0, compile_s, tcs, tms > 0 && kern > 0 ? tms / kern : -1.0);
      for (size_t k = 0; k < c->n_kernels; k++)
        printf ("    %-50s %-10s %9.4f ms\n", c->kernels[k].name, c->kernels[k].kind, c->kernels[k].time_ms);
      fflush (stdout);
      fx_inductor_free (c);
      for (size_t k = 0; k < n; k++)
        fx_value_clear (&din[k]);
      free (din);
      fx_arena_free (arena);
      fx_graph_free (g);
    }
  printf ("kernels: sum of per-kernel CUDA-event times per call (ms); wall: one fx_inductor_run incl. launches, output\n"
          "allocation and the final synchronize (ms); torch: torch.compile default, events around one call (ms);\n"
          "GB/s: (inputs + outputs bytes) / kernels; of copy: against %.0f GB/s; speedup: torch / kernels.\n", copy_gbs);
}

/* x = sin(x), x = x + 0.5, ... 20 ops on 4096 floats */
static fx_graph *
chain_graph (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "arg0_1");
  for (int i = 0; i < 20; i++)
    {
      fx_arg a[2] = { fx_arg_node (x), fx_arg_float (0.5) };
      x = fx_graph_call_function (g, fx_target_op (i % 2 == 0 ? "aten.sin.default" : "aten.add.Tensor"), a,
                                  i % 2 == 0 ? 1 : 2, NULL, 0);
    }
  fx_arg out = fx_arg_node (x);
  fx_graph_output (g, fx_arg_tuple (&out, 1));
  fx_graph_resolve_ops (g);
  return g;
}

static void
bench_chain (const char *script, int repeat)
{
  fx_graph *g = chain_graph ();
  int64_t sz[1] = { 4096 };
  fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 1, sz);
  fx_generator gen;
  fx_generator_seed (&gen, 9);
  fx_tensor_fill_normal (t, &gen, 0, 1);
  fx_value in = fx_value_tensor (t);
  fx_value *din = to_device (&in, 1);
  printf ("\nlaunch-bound chain: 20 pointwise ops on 4096 floats, wall ms per call (median of %d)\n", repeat * 4);
  static const struct
  {
    const char *label;
    const char *mode;
    const char *fusion;
  } cases[] = {
    { "fused (1 kernel), default", NULL, NULL },
    { "fused (1 kernel), reduce-overhead", "reduce-overhead", NULL },
    { "unfused (20 kernels), default", NULL, "1" },
    { "unfused (20 kernels), reduce-overhead", "reduce-overhead", "1" },
  };
  double ms[4];
  for (int k = 0; k < 4; k++)
    {
      fx_option_kv opt = { "max_fusion_size", cases[k].fusion };
      fx_compiled *c = NULL;
      fx_diag diag;
      ms[k] = -1;
      /* a mode and options cannot be given together: reduce-overhead's setting is spelled out */
      fx_option_kv opts[2] = { opt, { "triton.cudagraphs", "True" } };
      size_t n_opts = 0;
      const fx_option_kv *o = NULL;
      if (cases[k].fusion && cases[k].mode)
        {
          o = opts;
          n_opts = 2;
        }
      else if (cases[k].fusion)
        {
          o = opts;
          n_opts = 1;
        }
      if (fx_inductor_compile (g, din, 1, n_opts ? NULL : cases[k].mode, o, n_opts, &c, &diag) != FX_OK)
        {
          printf ("  %-40s compile: %s\n", cases[k].label, diag.message);
          continue;
        }
      ms[k] = wall_ms (c, din, 1, repeat * 4);
      printf ("  %-40s %8.4f ms  (%zu kernels)\n", cases[k].label, ms[k], c->n_kernels);
      fx_inductor_free (c);
    }
  if (ms[0] > 0 && ms[1] > 0)
    printf ("  reduce-overhead speedup, fused:   %.2fx\n", ms[0] / ms[1]);
  if (ms[2] > 0 && ms[3] > 0)
    printf ("  reduce-overhead speedup, unfused: %.2fx\n", ms[2] / ms[3]);
  double tdef, tro, cs;
  if (torch_run (script, "chain", "default", repeat * 4, &tdef, &cs)
      && torch_run (script, "chain", "reduce-overhead", repeat * 4, &tro, &cs))
    printf ("  torch.compile: default %.4f ms, reduce-overhead %.4f ms (%.2fx; events around one call)\n", tdef, tro,
            tdef / tro);
  fx_value_clear (&din[0]);
  free (din);
  fx_value_clear (&in);
  fx_graph_free (g);
}

/* mlp_block's GEMMs at full shape: the residual add fused into the second GEMM (default), kept as its own kernel
   (epilogue_fusion=False), and max-autotune's choice among cuBLASLt's algorithms (set FX_CUBLASLT_LIBRARY=none for
   the cuBLAS path) */
static void
bench_gemm (int repeat)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_graph *g = icuda_load_fixture ("mlp_block.aten.0", &diag);
  if (!g)
    {
      printf ("mlp_block: %s\n", diag.message);
      return;
    }
  fx_arena *arena = fx_arena_new ();
  fx_value *in = NULL;
  size_t n = 0;
  if (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 42, NULL, arena, &in, &n, &diag) != FX_OK)
    {
      printf ("mlp_block inputs: %s\n", diag.message);
      fx_graph_free (g);
      fx_arena_free (arena);
      return;
    }
  fx_value *din = to_device (in, n);
  static const struct
  {
    const char *label, *mode, *key, *value;
  } cases[] = {
    { "residual add fused into the GEMM", NULL, NULL, NULL },
    { "epilogue_fusion=False", NULL, "epilogue_fusion", "False" },
    { "max-autotune-no-cudagraphs", "max-autotune-no-cudagraphs", NULL, NULL },
  };
  printf ("\nmlp_block GEMMs (full shape), kernels ms (CUDA events) and wall ms per call, median of %d\n", repeat);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    {
      fx_option_kv opt = { cases[k].key, cases[k].value };
      fx_compiled *c = NULL;
      if (fx_inductor_compile (g, din, n, cases[k].mode, cases[k].key ? &opt : NULL, cases[k].key ? 1 : 0, &c, &diag)
          != FX_OK)
        {
          printf ("  %-36s compile: %s\n", cases[k].label, diag.message);
          continue;
        }
      double wall = wall_ms (c, din, n, repeat), kern = -1;
      if (fx_inductor_profile (c, din, n, repeat, &diag) == FX_OK)
        {
          kern = 0;
          for (size_t j = 0; j < c->n_kernels; j++)
            kern += c->kernels[j].time_ms;
        }
      printf ("  %-36s kernels %8.4f ms  wall %8.4f ms  (%zu kernels)\n", cases[k].label, kern, wall, c->n_kernels);
      for (size_t j = 0; j < c->n_artifacts; j++)
        if (strcmp (c->artifacts[j].name, "cuda_kernels.txt") == 0)
          printf ("%s", c->artifacts[j].text);
      fx_inductor_free (c);
    }
  for (size_t k = 0; k < n; k++)
    {
      fx_value_clear (&din[k]);
      fx_value_clear (&in[k]);
    }
  free (din);
  fx_arena_free (arena);
  fx_graph_free (g);
}

int
main (int argc, char **argv)
{
  fx_cuda_runtime_info info;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_cuda_probe (&info, &diag) != FX_OK || fx_cuda_open (0, &cuda, &diag) != FX_OK)
    {
      printf ("no GPU benchmark: %s\n", diag.message);
      return 77;
    }
  const char *script = argc > 1 ? argv[1] : NULL;
  int repeat = getenv ("BENCH_REPEAT") ? atoi (getenv ("BENCH_REPEAT")) : 50;
  if (repeat < 1)
    repeat = 1;
  double copy_gbs = getenv ("BENCH_COPY_GBS") ? atof (getenv ("BENCH_COPY_GBS")) : 3000;
  printf ("device: %s (sm_%d%d, %d SMs)\n", fx_cuda_get_info (cuda)->name, fx_cuda_get_info (cuda)->cc_major,
          fx_cuda_get_info (cuda)->cc_minor, fx_cuda_get_info (cuda)->sm_count);
  bench_fixtures (script, repeat, copy_gbs);
  bench_chain (script, repeat);
  bench_gemm (repeat);
  fx_cuda_close (cuda);
  return 0;
}
