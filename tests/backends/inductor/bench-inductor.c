/* bench-inductor.c: the fixture graphs at scaled shapes: inductor (cold and warm compile, run) against the
   interpreter and torch 1.13 eager (/usr/bin/python3, when it imports torch), side by side in one run.
   usage: bench-inductor [bench-torch-eager.py]; fixtures from $FX_FIXTURES; env BENCH_SCALE (default 8), BENCH_REPEAT (50),
   BENCH_PYTHON (default /usr/bin/python3), BENCH_TORCH_COMPILE=1 (the torch column is torch.compile's Inductor).
   Reports the minimum of the timed calls of each (the machine may be shared). */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fx-inductor.h"
#include "fx/pyparse.h"

static void
clear_values (fx_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fx_value_clear (&v[i]);
}

static double
eager_ms (const char *script, const char *path, int scale, int repeat)
{
  char s_scale[32], s_rep[32], s_thr[32];
  g_snprintf (s_scale, sizeof s_scale, "%d", scale);
  g_snprintf (s_rep, sizeof s_rep, "%d", repeat);
  g_snprintf (s_thr, sizeof s_thr, "%d", (int) g_get_num_processors ());
  const char *python = g_getenv ("BENCH_PYTHON") ? g_getenv ("BENCH_PYTHON") : "/usr/bin/python3";
  const char *argv[] = { python, script, path, s_scale, s_rep, s_thr, NULL };
  char *out = NULL, *err = NULL;
  int status = 0;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL)
      || !g_spawn_check_wait_status (status, NULL))
    {
      g_free (out);
      g_free (err);
      return -1;
    }
  double med = -1, mn = -1;
  if (sscanf (out, "%lf %lf", &med, &mn) != 2)
    mn = -1;
  g_free (out);
  g_free (err);
  return mn;
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  /* OpenMP workers that spin after a kernel steal the 2 cores from OpenBLAS's own threads in the extern GEMMs (and
     the other way round): unless the caller chose a policy, run (and let torch run) with passive waiting. libgomp
     reads the policy when it loads, so the benchmark re-executes itself once. */
  if (g_getenv ("OMP_WAIT_POLICY") == NULL)
    {
      g_setenv ("OMP_WAIT_POLICY", "PASSIVE", TRUE);
      execv ("/proc/self/exe", argv);
    }
  const char *dir = g_getenv ("FX_FIXTURES");
  if (dir == NULL)
    dir = "tests/fixtures";
  int scale = g_getenv ("BENCH_SCALE") ? atoi (g_getenv ("BENCH_SCALE")) : 8;
  int repeat = g_getenv ("BENCH_REPEAT") ? atoi (g_getenv ("BENCH_REPEAT")) : 50;
  char *script = g_strdup (argc > 1 ? argv[1] : "tests/backends/inductor/bench-torch-eager.py");
  static const char *graphs[] = { "softmax_rows", "pointwise_chain", "rmsnorm_residual", "layernorm_gelu",
                                  "mlp_block" };
  printf ("scale 1/%d, %d threads, OMP_WAIT_POLICY=%s, min of %d calls (ms)\n", scale, (int) g_get_num_processors (),
          g_getenv ("OMP_WAIT_POLICY"), repeat);
  printf ("%-18s %8s %8s %10s %10s %10s %10s %8s %8s\n", "graph", "kernels", "cold_ms", "warm_ms", "inductor",
          "interp", g_strcmp0 (g_getenv ("BENCH_TORCH_COMPILE"), "1") == 0 ? "t.compile" : "eager", "vs_int",
          g_strcmp0 (g_getenv ("BENCH_TORCH_COMPILE"), "1") == 0 ? "vs_tcomp" : "vs_eager");
  double log_sum = 0;
  int n_eager = 0;
  for (size_t gi = 0; gi < G_N_ELEMENTS (graphs); gi++)
    {
      char *path = g_strdup_printf ("%s/graphs/%s.core_aten.0.py", dir, graphs[gi]);
      fx_graph *g = NULL;
      fx_diag diag;
      fx_diag_clear (&diag);
      if (fx_parse_fx_file (path, &g, &diag) != FX_OK)
        {
          fprintf (stderr, "%s: %s\n", path, diag.message);
          return 1;
        }
      fx_graph_resolve_ops (g);
      fx_graph_scale_inputs (g, scale, 64);
      fx_arena *arena = fx_arena_new ();
      fx_value *in = NULL;
      size_t n_in = 0;
      if (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 1, NULL, arena, &in, &n_in, &diag) != FX_OK)
        {
          fprintf (stderr, "%s: %s\n", path, diag.message);
          return 1;
        }
      char *cache = g_dir_make_tmp ("fx-inductor-bench-XXXXXX", NULL);
      g_setenv ("FXWB_INDUCTOR_CACHE", cache, TRUE);
      fx_compiled *c = NULL;
      double t0 = fx_now_ms ();
      if (fx_inductor_compile (g, in, n_in, NULL, NULL, 0, &c, &diag) != FX_OK)
        {
          fprintf (stderr, "%s: %s\n", path, diag.message);
          return 1;
        }
      double cold = fx_now_ms () - t0;
      size_t n_kernels = c->n_kernels;
      fx_inductor_free (c);
      t0 = fx_now_ms ();
      fx_inductor_compile (g, in, n_in, NULL, NULL, 0, &c, &diag);
      double warm = fx_now_ms () - t0;
      double *ti = g_new (double, repeat), *tr = g_new (double, repeat);
      for (int r = -2; r < repeat; r++)
        {
          fx_value *out = NULL;
          size_t n_out = 0;
          double t1 = fx_now_ms ();
          fx_inductor_run (c, in, n_in, arena, &out, &n_out, &diag);
          if (r >= 0)
            ti[r] = fx_now_ms () - t1;
          clear_values (out, n_out);
        }
      int reps_interp = repeat < 5 ? repeat : 5;
      for (int r = 0; r < reps_interp; r++)
        {
          fx_value *out = NULL;
          size_t n_out = 0;
          double t1 = fx_now_ms ();
          fx_interp_run (g, in, n_in, NULL, arena, &out, &n_out, &diag);
          tr[r] = fx_now_ms () - t1;
          clear_values (out, n_out);
        }
      qsort (ti, (size_t) repeat, sizeof (double), cmp);
      qsort (tr, (size_t) reps_interp, sizeof (double), cmp);
      /* min of the calls: the machine is shared, the minimum is the least disturbed figure */
      double ind = ti[0], interp = tr[0];
      double eager = eager_ms (script, path, scale, repeat);
      printf ("%-18s %8zu %8.1f %10.2f %10.3f %10.3f %10.3f %8.2f %8.2f\n", graphs[gi], n_kernels, cold, warm, ind,
              interp, eager, interp / ind, eager > 0 ? eager / ind : NAN);
      if (eager > 0)
        {
          log_sum += log (eager / ind);
          n_eager++;
        }
      fx_inductor_free (c);
      clear_values (in, n_in);
      fx_arena_free (arena);
      fx_graph_free (g);
      g_free (ti);
      g_free (tr);
      g_free (cache);
      g_free (path);
    }
  if (n_eager)
    printf ("geomean speedup vs torch %s: %.2fx over %d graphs\n",
            g_strcmp0 (g_getenv ("BENCH_TORCH_COMPILE"), "1") == 0 ? "torch.compile (Inductor)" : "eager",
            exp (log_sum / n_eager), n_eager);
  g_free (script);
  return 0;
}
