/* bench-torch.c: the engine's interpreter against torch eager through the torch backend's worker on the fixture
   graphs (scaled): the worker's own per-call times (bench hook), and the wall time of run() from fxwb, which adds
   the tensor files and the pipe round trip. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx-torch-backend.h"
#include "fx/pyparse.h"

/* The registry's helpers, for builds without it (its definitions win where it is linked). */
__attribute__ ((weak)) fx_kernel_info *
fx_compiled_add_kernel (fx_compiled *c, const char *name, const char *kind, const char *language,
                        const char *source)
{
  (void) name;
  (void) kind;
  (void) language;
  (void) source;
  static fx_kernel_info scratch;
  memset (&scratch, 0, sizeof scratch);
  (void) c;
  return &scratch;
}

__attribute__ ((weak)) void
fx_kernel_add_node (fx_compiled *c, fx_kernel_info *k, const char *node_name)
{
  (void) c;
  (void) k;
  (void) node_name;
}

__attribute__ ((weak)) void
fx_compiled_add_artifact (fx_compiled *c, const char *name, const char *kind, const char *text, size_t len)
{
  (void) c;
  (void) name;
  (void) kind;
  (void) text;
  (void) len;
}

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

static fx_options *
default_options (fx_arena *arena)
{
  const fx_backend *b = &fx_torch_backend;
  fx_options *o = fx_arena_alloc (arena, sizeof *o);
  o->n = b->n_options;
  o->items = fx_arena_alloc (arena, sizeof (fx_option_value) * o->n);
  o->explicit_set = fx_arena_alloc (arena, sizeof (bool) * o->n);
  for (size_t i = 0; i < o->n; i++)
    {
      const fx_option_decl *d = &b->options[i];
      o->items[i].name = d->name;
      o->items[i].type = d->type;
      o->items[i].b = strcmp (d->default_text, "True") == 0;
      o->items[i].f = g_ascii_strtod (d->default_text, NULL);
      if (d->type == FX_OPTION_STRING)
        o->items[i].s = strcmp (d->default_text, "'eager'") == 0 ? "eager" : "";
      if (strcmp (d->name, "profile") == 0)
        o->items[i].b = false;   /* per-node timing adds calls; not what is measured here */
    }
  return o;
}

int
main (int argc, char **argv)
{
  const char *fixtures = g_getenv ("FX_FIXTURES") ? g_getenv ("FX_FIXTURES") : "tests/fixtures";
  int repeat = argc > 1 ? atoi (argv[1]) : 20;
  static const char *const graphs[] = {
    "pointwise_chain.aten.0", "softmax_rows.aten.0", "layernorm_gelu.aten.0", "rmsnorm_residual.aten.0",
    "mlp_block.aten.0",
  };
  printf ("%-26s %12s %14s %14s %10s\n", "graph (sizes / 64)", "interp ms", "torch eager ms", "run() wall ms",
          "interp/torch");
  for (size_t gi = 0; gi < G_N_ELEMENTS (graphs); gi++)
    {
      char *path = g_strdup_printf ("%s/graphs/%s.py", fixtures, graphs[gi]);
      fx_graph *graph = NULL;
      fx_diag diag;
      fx_diag_clear (&diag);
      if (fx_parse_fx_file (path, &graph, &diag) != FX_OK)
        g_error ("%s: %s", path, diag.message);
      fx_graph_resolve_ops (graph);
      fx_graph_scale_inputs (graph, 64, 64);
      fx_arena *arena = fx_arena_new ();
      fx_value *inputs = NULL, *out = NULL;
      size_t n_inputs = 0, n_out = 0;
      if (fx_inputs_make (graph, FX_INPUTS_SPEC, NULL, 1, NULL, arena, &inputs, &n_inputs, &diag) != FX_OK)
        g_error ("%s: %s", graphs[gi], diag.message);

      double *t_interp = g_new (double, repeat), *t_wall = g_new (double, repeat), *t_torch = g_new (double, repeat);
      for (int r = -1; r < repeat; r++)
        {
          gint64 t0 = g_get_monotonic_time ();
          if (fx_interp_run (graph, inputs, n_inputs, NULL, arena, &out, &n_out, &diag) != FX_OK)
            g_error ("%s: interpreter: %s", graphs[gi], diag.message);
          if (r >= 0)
            t_interp[r] = (double) (g_get_monotonic_time () - t0) / 1e3;
          for (size_t i = 0; i < n_out; i++)
            fx_value_clear (&out[i]);
        }

      fx_compiled *c = g_new0 (fx_compiled, 1);
      c->backend = &fx_torch_backend;
      c->arena = fx_arena_new ();
      fx_buf_init (&c->notes);
      fx_compile_request req;
      memset (&req, 0, sizeof req);
      req.graph = graph;
      req.example_inputs = inputs;
      req.n_inputs = n_inputs;
      req.mode = "default";
      req.options = default_options (c->arena);
      if (fx_torch_backend.compile (&fx_torch_backend, &req, c, &diag) != FX_OK)
        g_error ("%s: torch: %s", graphs[gi], diag.message);
      size_t peak = 0;
      if (fx_torch_backend.bench (c, inputs, n_inputs, 2, repeat, arena, t_torch, &out, &n_out, &peak, &diag) != FX_OK)
        g_error ("%s: torch bench: %s", graphs[gi], diag.message);
      for (size_t i = 0; i < n_out; i++)
        fx_value_clear (&out[i]);
      for (int r = 0; r < repeat; r++)
        {
          gint64 t0 = g_get_monotonic_time ();
          if (fx_torch_backend.run (c, inputs, n_inputs, arena, &out, &n_out, &diag) != FX_OK)
            g_error ("%s: torch run: %s", graphs[gi], diag.message);
          t_wall[r] = (double) (g_get_monotonic_time () - t0) / 1e3;
          for (size_t i = 0; i < n_out; i++)
            fx_value_clear (&out[i]);
        }
      double mi = median (t_interp, repeat), mt = median (t_torch, repeat), mw = median (t_wall, repeat);
      printf ("%-26s %12.3f %14.3f %14.3f %10.2f\n", graphs[gi], mi, mt, mw, mi / mt);
      fx_torch_backend.release (c);
      fx_buf_free (&c->notes);
      fx_arena_free (c->arena);
      g_free (c);
      for (size_t i = 0; i < n_inputs; i++)
        fx_value_clear (&inputs[i]);
      g_free (t_interp);
      g_free (t_wall);
      g_free (t_torch);
      fx_arena_free (arena);
      fx_graph_free (graph);
      g_free (path);
    }
  return 0;
}
