/* test-inductor-reduce.c: the C generator's row reductions in lanes (sum, sum of squares, max, min, max.dim /
   min.dim values and indices, argmax, argmin, softmax) against the interpreter, on row lengths around the lane
   count (1, 7, 33, 63 .. 129, 1000, 4099: no lanes, lanes with and without a tail), with ties (PyTorch's first
   index), NaN (NaN wins, its first index), -inf and constant rows, in f32, f64 and int32. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "fx-inductor.h"
#include "fx-inductor-impl.h"
#include "fx/pyparse.h"

static const int64_t row_lengths[] = { 1, 7, 33, 63, 64, 65, 127, 128, 129, 200, 1000, 4099 };

/* Floats: allclose with rtol = atol = 1e-4 (NaN equals NaN, infinities must match); indices and ints: equal. */
static gboolean
same_outputs (const fx_value *a, const fx_value *b, size_t n, GString *why)
{
  for (size_t i = 0; i < n; i++)
    {
      if (a[i].kind != FX_VALUE_TENSOR || b[i].kind != FX_VALUE_TENSOR)
        {
          g_string_append_printf (why, "output %zu is no tensor", i);
          return FALSE;
        }
      const fx_tensor *x = a[i].u.t, *y = b[i].u.t;
      if (x->dtype != y->dtype || x->ndim != y->ndim || fx_tensor_numel (x) != fx_tensor_numel (y))
        {
          g_string_append_printf (why, "output %zu: dtype or shape differs", i);
          return FALSE;
        }
      for (int64_t k = 0; k < fx_tensor_numel (x); k++)
        {
          double u = fx_tensor_get_f64 (x, k), v = fx_tensor_get_f64 (y, k);
          bool ok = fx_dtype_is_floating (x->dtype)
                    ? (isnan (u) && isnan (v)) || u == v || (isfinite (v) && fabs (u - v) <= 1e-4 + 1e-4 * fabs (v))
                    : u == v;
          if (!ok)
            {
              g_string_append_printf (why, "output %zu element %lld: inductor %.9g vs interpreter %.9g", i,
                                      (long long) k, u, v);
              return FALSE;
            }
        }
    }
  return TRUE;
}

/* Row r of a [rows, len] input: 0 seeded random; 1 few distinct values (many ties of the max and the min, one
   of each in the tail too); 2 NaN (where: variant); 3 constant; 4 -inf everywhere but one +inf late; 5 all -inf. */
static void
fill_rows (fx_tensor *t, int64_t rows, int64_t len, int variant)
{
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < len; j++)
      {
        int64_t k = r * len + j;
        double v = fx_tensor_get_f64 (t, k);
        switch (r)
          {
          case 1: v = (double) ((j * 7 + variant) % 5); break;
          case 2: v = (j == (variant ? len - 1 : len / 3) || j == len - 1 - len / 5) ? NAN : v; break;
          case 3: v = 2.5; break;
          case 4: v = j == len - 1 - len / 4 ? INFINITY : -INFINITY; break;
          case 5: v = -INFINITY; break;
          default: break;
          }
        fx_tensor_set_f64 (t, k, v);
      }
  if (rows > 1 && variant == 1 && len > 1)
    {
      /* the largest value twice: first element and last (the tail) */
      fx_tensor_set_f64 (t, len, 9.0);
      fx_tensor_set_f64 (t, 2 * len - 1, 9.0);
    }
}

/* Compiles CODE (its input sizes given), fills the inputs, runs inductor and the interpreter; no op may fall back. */
static void
check_code (const char *code, int variant, const char *label)
{
  fx_graph *graph = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_code (code, strlen (code), label, &graph, &diag) != FX_OK)
    g_error ("%s: %s", label, diag.message);
  fx_graph_resolve_ops (graph);
  fx_arena *arena = fx_arena_new ();
  fx_value *inputs = NULL;
  size_t n_inputs = 0;
  if (fx_inputs_make (graph, FX_INPUTS_SPEC, NULL, 7 + variant, NULL, arena, &inputs, &n_inputs, &diag) != FX_OK)
    g_error ("%s: inputs: %s", label, diag.message);
  for (size_t i = 0; i < n_inputs; i++)
    {
      fx_tensor *t = inputs[i].u.t;
      if (t->ndim == 2)
        fill_rows (t, t->sizes[0], t->sizes[1], variant);
      else if (!fx_dtype_is_floating (t->dtype))
        for (int64_t k = 0; k < fx_tensor_numel (t); k++)
          fx_tensor_set_f64 (t, k, (double) ((k * 5 + variant) % 9) - 4);
      else if (variant == 1)
        fx_tensor_set_f64 (t, fx_tensor_numel (t) / 2, NAN);
    }
  fx_value *ref = NULL, *res = NULL;
  size_t n_ref = 0, n_res = 0;
  if (fx_interp_run (graph, inputs, n_inputs, NULL, arena, &ref, &n_ref, &diag) != FX_OK)
    g_error ("%s: interpreter: %s", label, diag.message);
  fx_compiled *c = NULL;
  if (fx_inductor_compile (graph, inputs, n_inputs, NULL, NULL, 0, &c, &diag) != FX_OK)
    g_error ("%s: inductor compile: %s", label, diag.message);
  for (size_t i = 0; i < c->n_kernels; i++)
    if (strcmp (c->kernels[i].kind, "fallback") == 0)
      g_error ("%s: %s fell back", label, c->kernels[i].name);
  if (fx_inductor_run (c, inputs, n_inputs, arena, &res, &n_res, &diag) != FX_OK)
    g_error ("%s: inductor run: %s", label, diag.message);
  g_assert_cmpuint (n_res, ==, n_ref);
  GString *why = g_string_new (NULL);
  if (!same_outputs (res, ref, n_ref, why))
    {
      for (size_t i = 0; i < c->n_artifacts; i++)
        if (strcmp (c->artifacts[i].name, "output_code.c") == 0)
          g_printerr ("---- %s\n%s\n", c->artifacts[i].name, c->artifacts[i].text);
      g_error ("%s: %s", label, why->str);
    }
  g_string_free (why, TRUE);
  for (size_t i = 0; i < n_ref; i++)
    fx_value_clear (&ref[i]);
  for (size_t i = 0; i < n_res; i++)
    fx_value_clear (&res[i]);
  for (size_t i = 0; i < n_inputs; i++)
    fx_value_clear (&inputs[i]);
  fx_inductor_free (c);
  fx_arena_free (arena);
  fx_graph_free (graph);
}

/* Every row reduction over [6, len] (kernels over rows) and argmax / amax of a [len] vector (one whole reduction),
   argmin over all of [6, len] (a flat index over two reduced dims). */
static void
test_float_rows (gconstpointer data)
{
  const char *dtype = data;
  for (size_t i = 0; i < G_N_ELEMENTS (row_lengths); i++)
    for (int variant = 0; variant < 2; variant++)
      {
        int64_t len = row_lengths[i];
        char *code = g_strdup_printf (
          "class M(torch.nn.Module):\n"
          "    def forward(self, arg0_1: \"%s[6, %lld][%lld, 1]cpu\", arg1_1: \"%s[%lld][1]cpu\"):\n"
          "        linalg_vector_norm = torch.ops.aten.linalg_vector_norm.default(arg0_1, 2, [-1], True)\n"
          "        sum_1 = torch.ops.aten.sum.dim_IntList(arg0_1, [-1])\n"
          "        amax = torch.ops.aten.amax.default(arg0_1, [-1])\n"
          "        max_1 = torch.ops.aten.max.dim(arg0_1, -1)\n"
          "        getitem = max_1[0]\n"
          "        getitem_1 = max_1[1]\n"
          "        min_1 = torch.ops.aten.min.dim(arg0_1, 1, True)\n"
          "        getitem_2 = min_1[0]\n"
          "        getitem_3 = min_1[1]\n"
          "        argmax = torch.ops.aten.argmax.default(arg0_1, 1)\n"
          "        argmin = torch.ops.aten.argmin.default(arg0_1)\n"
          "        _softmax = torch.ops.aten._softmax.default(arg0_1, -1, False)\n"
          "        argmax_1 = torch.ops.aten.argmax.default(arg1_1)\n"
          "        amax_1 = torch.ops.aten.amax.default(arg1_1)\n"
          "        return (linalg_vector_norm, sum_1, amax, getitem, getitem_1, getitem_2, getitem_3, argmax, argmin, "
          "_softmax, argmax_1, amax_1)\n",
          dtype, (long long) len, (long long) len, dtype, (long long) len);
        char *label = g_strdup_printf ("%s rows of %lld, variant %d", dtype, (long long) len, variant);
        check_code (code, variant, label);
        g_free (label);
        g_free (code);
      }
}

/* int32: max / min with indices and sums over rows with many ties (no NaN). */
static void
test_int_rows (void)
{
  for (size_t i = 0; i < G_N_ELEMENTS (row_lengths); i++)
    for (int variant = 0; variant < 2; variant++)
      {
        int64_t len = row_lengths[i];
        char *code = g_strdup_printf (
          "class M(torch.nn.Module):\n"
          "    def forward(self, arg0_1: \"i32[3, %lld][%lld, 1]cpu\", arg1_1: \"i32[%lld][1]cpu\"):\n"
          "        max_1 = torch.ops.aten.max.dim(arg0_1, -1)\n"
          "        getitem = max_1[0]\n"
          "        getitem_1 = max_1[1]\n"
          "        argmin = torch.ops.aten.argmin.default(arg0_1, -1, True)\n"
          "        sum_1 = torch.ops.aten.sum.dim_IntList(arg0_1, [-1])\n"
          "        argmax = torch.ops.aten.argmax.default(arg1_1, 0)\n"
          "        return (getitem, getitem_1, argmin, sum_1, argmax)\n",
          (long long) len, (long long) len, (long long) len);
        char *label = g_strdup_printf ("int32 rows of %lld, variant %d", (long long) len, variant);
        check_code (code, variant, label);
        g_free (label);
        g_free (code);
      }
}

/* The artifact NAME (output_code.c, ir_post_fusion.txt) of CODE compiled with inputs from its annotations, and the
   number of kernels. */
static char *
compiled_artifact (const char *code, const char *name, size_t *n_kernels)
{
  fx_graph *graph = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_code (code, strlen (code), "source", &graph, &diag) != FX_OK)
    g_error ("%s", diag.message);
  fx_graph_resolve_ops (graph);
  fx_arena *arena = fx_arena_new ();
  fx_value *inputs = NULL;
  size_t n_inputs = 0;
  if (fx_inputs_make (graph, FX_INPUTS_SPEC, NULL, 1, NULL, arena, &inputs, &n_inputs, &diag) != FX_OK)
    g_error ("%s", diag.message);
  fx_compiled *c = NULL;
  if (fx_inductor_compile (graph, inputs, n_inputs, NULL, NULL, 0, &c, &diag) != FX_OK)
    g_error ("%s", diag.message);
  char *text = NULL;
  for (size_t i = 0; i < c->n_artifacts; i++)
    if (strcmp (c->artifacts[i].name, name) == 0)
      text = g_strdup (c->artifacts[i].text);
  g_assert_nonnull (text);
  if (n_kernels)
    *n_kernels = c->n_kernels;
  fx_inductor_free (c);
  for (size_t i = 0; i < n_inputs; i++)
    fx_value_clear (&inputs[i]);
  fx_arena_free (arena);
  fx_graph_free (graph);
  return text;
}

/* The generated row loop for max.dim: lanes, no fallback, and the index reduction named in the IR. */
static void
test_lanes_generated (void)
{
  const char *code =
    "class M(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4, 1000][1000, 1]cpu\"):\n"
    "        max_1 = torch.ops.aten.max.dim(arg0_1, -1)\n"
    "        getitem = max_1[0]\n"
    "        getitem_1 = max_1[1]\n"
    "        return (getitem, getitem_1)\n";
  size_t n_kernels = 0;
  char *src = compiled_artifact (code, "output_code.c", &n_kernels);
  char *ir = compiled_artifact (code, "ir_post_fusion.txt", NULL);
  g_assert_nonnull (strstr (src, "rb += 64"));
  g_assert_nonnull (strstr (src, "_il[rl] = b ? rb : "));
  g_assert_nonnull (strstr (ir, "'argmax'"));
  g_assert_cmpuint (n_kernels, ==, 1);
  g_free (src);
  g_free (ir);
}

/* A few long rows: each row's reduction is split over the threads (OpenMP's reduction clause combines the
   partials) and the rows go one after another; the results match the interpreter, NaN and ties included, with
   several reduction segments (softmax) too. 33 rows keep the row-parallel loop, and so does max.dim (no clause). */
static void
test_few_long_rows (void)
{
  for (int variant = 0; variant < 2; variant++)
    {
      check_code ("class M(torch.nn.Module):\n"
                  "    def forward(self, arg0_1: \"f32[3, 262147][262147, 1]cpu\"):\n"
                  "        mean = torch.ops.aten.mean.dim(arg0_1, [-1])\n"
                  "        amax = torch.ops.aten.amax.default(arg0_1, [-1])\n"
                  "        amin = torch.ops.aten.amin.default(arg0_1, [1], True)\n"
                  "        linalg_vector_norm = torch.ops.aten.linalg_vector_norm.default(arg0_1, 2, [-1])\n"
                  "        _softmax = torch.ops.aten._softmax.default(arg0_1, -1, False)\n"
                  "        return (mean, amax, amin, linalg_vector_norm, _softmax)\n",
                  variant, variant ? "f32 3 long rows, variant 1" : "f32 3 long rows");
      check_code ("class M(torch.nn.Module):\n"
                  "    def forward(self, arg0_1: \"i32[2, 300001][300001, 1]cpu\"):\n"
                  "        sum_1 = torch.ops.aten.sum.dim_IntList(arg0_1, [-1])\n"
                  "        amax = torch.ops.aten.amax.default(arg0_1, [-1])\n"
                  "        return (sum_1, amax)\n",
                  variant, variant ? "i32 2 long rows, variant 1" : "i32 2 long rows");
    }
  /* 3 rows split each row over the threads; 33 keep the row loop */
  for (int n_rows = 3; n_rows <= 33; n_rows += 30)
    {
      g_autofree char *code = g_strdup_printf ("class M(torch.nn.Module):\n"
                                               "    def forward(self, arg0_1: \"f32[%d, 262147][262147, 1]cpu\"):\n"
                                               "        sum_1 = torch.ops.aten.sum.dim_IntList(arg0_1, [-1])\n"
                                               "        return (sum_1,)\n", n_rows);
      char *src = compiled_artifact (code, "output_code.c", NULL);
      if (n_rows == 3)
        {
          g_assert_nonnull (strstr (src, "#pragma omp parallel for simd schedule(static) reduction(+:acc"));
          g_assert_null (strstr (src, "collapse"));
        }
      else
        {
          g_assert_nonnull (strstr (src, "#pragma omp parallel for collapse(1)"));
          g_assert_null (strstr (src, "parallel for simd"));
        }
      g_free (src);
    }
  char *arg = compiled_artifact ("class M(torch.nn.Module):\n"
                                "    def forward(self, arg0_1: \"f32[2, 262147][262147, 1]cpu\"):\n"
                                "        argmax = torch.ops.aten.argmax.default(arg0_1, 1)\n"
                                "        return (argmax,)\n", "output_code.c", NULL);
  g_assert_null (strstr (arg, "parallel for simd"));
  g_free (arg);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  char *cache = g_dir_make_tmp ("fx-inductor-reduce-XXXXXX", NULL);
  g_setenv ("FXWB_INDUCTOR_CACHE", cache, TRUE);
  g_test_add_data_func ("/inductor-reduce/rows/f32", "f32", test_float_rows);
  g_test_add_data_func ("/inductor-reduce/rows/f64", "f64", test_float_rows);
  g_test_add_func ("/inductor-reduce/rows/i32", test_int_rows);
  g_test_add_func ("/inductor-reduce/lanes-generated", test_lanes_generated);
  g_test_add_func ("/inductor-reduce/few-long-rows", test_few_long_rows);
  int rc = g_test_run ();
  g_free (cache);
  return rc;
}
