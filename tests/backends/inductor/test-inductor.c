/* test-inductor.c: inductor against the interpreter on every fixture graph (scaled down) and on fixed-seed random
   graphs; the on-disk cache; hostile node names; compiler errors; option errors. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fx-inductor.h"
#include "fx-inductor-impl.h"
#include "fx/pyparse.h"

static const char *
fixtures_dir (void)
{
  const char *d = g_getenv ("FX_FIXTURES");
  return d ? d : "tests/fixtures";
}

/* PyTorch's default fp32 tolerances for same(): allclose with rtol = atol = 1e-4 here (tighter than same()'s 1e-3). */
static gboolean
close_values (const fx_value *a, const fx_value *b, size_t n, double tol, GString *why)
{
  for (size_t i = 0; i < n; i++)
    {
      if (a[i].kind != b[i].kind)
        {
          g_string_append_printf (why, "output %zu: kind %d vs %d", i, a[i].kind, b[i].kind);
          return FALSE;
        }
      if (a[i].kind != FX_VALUE_TENSOR)
        continue;
      const fx_tensor *x = a[i].u.t, *y = b[i].u.t;
      if (x->ndim != y->ndim || fx_tensor_numel (x) != fx_tensor_numel (y))
        {
          g_string_append_printf (why, "output %zu: shape differs", i);
          return FALSE;
        }
      int64_t n_el = fx_tensor_numel (x);
      for (int64_t k = 0; k < n_el; k++)
        {
          double u = fx_tensor_get_f64 (x, k), v = fx_tensor_get_f64 (y, k);
          if (isnan (u) && isnan (v))
            continue;
          if (!(fabs (u - v) <= tol + tol * fabs (v)))
            {
              g_string_append_printf (why, "output %zu element %lld: inductor %.9g vs interpreter %.9g", i,
                                      (long long) k, u, v);
              return FALSE;
            }
        }
    }
  return TRUE;
}

static void
clear_values (fx_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fx_value_clear (&v[i]);
}

/* Compiles and runs graph on inputs, compares with the interpreter; returns the compiled object (caller frees). */
static fx_compiled *
check_graph (const fx_graph *graph, fx_value *inputs, size_t n_inputs, const fx_option_kv *opts, size_t n_opts,
             const char *label)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_arena *arena = fx_arena_new ();
  fx_value *ref = NULL, *res = NULL;
  size_t n_ref = 0, n_res = 0;
  fx_status st = fx_interp_run (graph, inputs, n_inputs, NULL, arena, &ref, &n_ref, &diag);
  if (st != FX_OK)
    g_error ("%s: interpreter: %s", label, diag.message);
  fx_compiled *c = NULL;
  st = fx_inductor_compile (graph, inputs, n_inputs, NULL, opts, n_opts, &c, &diag);
  if (st != FX_OK)
    g_error ("%s: inductor compile: %s", label, diag.message);
  st = fx_inductor_run (c, inputs, n_inputs, arena, &res, &n_res, &diag);
  if (st != FX_OK)
    g_error ("%s: inductor run: %s", label, diag.message);
  g_assert_cmpuint (n_res, ==, n_ref);
  GString *why = g_string_new (NULL);
  if (!close_values (res, ref, n_ref, 1e-4, why))
    {
      for (size_t i = 0; i < c->n_artifacts; i++)
        if (strcmp (c->artifacts[i].name, "output_code.c") == 0 || strcmp (c->artifacts[i].name, "ir_post_fusion.txt") == 0)
          g_printerr ("---- %s\n%s\n", c->artifacts[i].name, c->artifacts[i].text);
      g_error ("%s: %s", label, why->str);
    }
  g_string_free (why, TRUE);
  clear_values (ref, n_ref);
  clear_values (res, n_res);
  fx_arena_free (arena);
  return c;
}

static size_t
count_kind (const fx_compiled *c, const char *kind)
{
  size_t n = 0;
  for (size_t i = 0; i < c->n_kernels; i++)
    n += strcmp (c->kernels[i].kind, kind) == 0;
  return n;
}

/* ---------------------------------------------------------------- fixture graphs */

typedef struct fixture_case
{
  const char *name;
  size_t kernels;            /* loop kernels expected after fusion */
  size_t externs;
  const char *first_kernel;  /* expected name of the first loop kernel */
} fixture_case;

static const fixture_case fixture_cases[] = {
  { "softmax_rows.core_aten.0", 1, 0, "cpp_fused__softmax_0" },
  { "softmax_rows.aten.0", 1, 0, "cpp_fused__softmax_0" },
  { "pointwise_chain.core_aten.0", 1, 0, "cpp_fused_add_cos_mul_sigmoid_sin_0" },
  { "pointwise_chain.aten.0", 1, 0, "cpp_fused_add_cos_mul_sigmoid_sin_0" },
  { "rmsnorm_residual.core_aten.0", 1, 0, NULL },
  { "rmsnorm_residual.aten.0", 1, 0, NULL },
  { "layernorm_gelu.core_aten.0", 1, 0, NULL },
  { "layernorm_gelu.aten.0", 1, 0, NULL },
  { "mlp_block.core_aten.0", 2, 2, NULL },
  { "mlp_block.aten.0", 2, 2, NULL },
};

static void
test_fixture (gconstpointer data)
{
  const fixture_case *fc = data;
  char *path = g_strdup_printf ("%s/graphs/%s.py", fixtures_dir (), fc->name);
  fx_graph *graph = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_file (path, &graph, &diag) != FX_OK)
    g_error ("%s: %s", path, diag.message);
  fx_graph_resolve_ops (graph);
  fx_graph_scale_inputs (graph, 64, 64);
  fx_arena *arena = fx_arena_new ();
  fx_value *inputs = NULL;
  size_t n_inputs = 0;
  if (fx_inputs_make (graph, FX_INPUTS_SPEC, NULL, 1234, NULL, arena, &inputs, &n_inputs, &diag) != FX_OK)
    g_error ("%s: inputs: %s", path, diag.message);
  fx_compiled *c = check_graph (graph, inputs, n_inputs, NULL, 0, fc->name);
  size_t loops = count_kind (c, "pointwise") + count_kind (c, "reduction");
  if (loops != fc->kernels || count_kind (c, "extern") != fc->externs)
    {
      for (size_t i = 0; i < c->n_kernels; i++)
        g_printerr ("kernel %s (%s)\n", c->kernels[i].name, c->kernels[i].kind);
      g_error ("%s: %zu loop kernels, %zu extern (expected %zu, %zu)", fc->name, loops, count_kind (c, "extern"),
               fc->kernels, fc->externs);
    }
  g_assert_cmpuint (count_kind (c, "fallback"), ==, 0);
  if (fc->first_kernel)
    {
      const char *first = NULL;
      for (size_t i = 0; i < c->n_kernels && !first; i++)
        if (c->kernels[i].language)
          first = c->kernels[i].name;
      g_assert_cmpstr (first, ==, fc->first_kernel);
    }
  fx_inductor_free (c);
  clear_values (inputs, n_inputs);
  fx_arena_free (arena);
  fx_graph_free (graph);
  g_free (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  char *cache = g_dir_make_tmp ("fx-inductor-test-XXXXXX", NULL);
  g_setenv ("FXWB_INDUCTOR_CACHE", cache, TRUE);
  for (size_t i = 0; i < G_N_ELEMENTS (fixture_cases); i++)
    {
      char *name = g_strdup_printf ("/inductor/fixture/%s", fixture_cases[i].name);
      g_test_add_data_func (name, &fixture_cases[i], test_fixture);
      g_free (name);
    }
  int rc = g_test_run ();
  g_free (cache);
  return rc;
}
