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
#include "sym-graph.h"

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
          if ((isnan (u) && isnan (v)) || u == v)
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
  /* kernels list the user's nodes (decomposed ones map back through from_node) */
  for (size_t k = 0; k < c->n_kernels; k++)
    {
      g_assert_cmpuint (c->kernels[k].n_nodes, >, 0);
      for (size_t i = 0; i < c->kernels[k].n_nodes; i++)
        if (fx_graph_find_node (graph, c->kernels[k].nodes[i]) == NULL)
          g_error ("%s: kernel %s lists '%s', not a node of the graph", fc->name, c->kernels[k].name,
                   c->kernels[k].nodes[i]);
    }
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

/* ---------------------------------------------------------------- random graphs */

typedef struct rg_val
{
  fx_node *node;
  int ndim;
  int64_t sizes[3];
} rg_val;

static fx_node *
rg_call (fx_graph *g, const char *target, const fx_arg *args, size_t n, const fx_kwarg *kw, size_t nk)
{
  return fx_graph_call_function (g, fx_target_op (target), args, n, kw, nk);
}

/* items: caller storage that outlives the node creation (the graph deep-copies it) */
static fx_arg
int_list (fx_arg *items, const int64_t *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    items[i] = fx_arg_int (v[i]);
  return fx_arg_list (items, n);
}

/* A chain of pointwise, reduction, view and broadcast ops over 2-D inputs with random sizes. */
static fx_graph *
random_graph (GRand *rng, fx_value **inputs, size_t *n_inputs, fx_arena *arena)
{
  fx_graph *g = fx_graph_new ();
  int64_t A = g_rand_int_range (rng, 1, 40), B = g_rand_int_range (rng, 1, 70);
  if (g_rand_int_range (rng, 0, 4) == 0)
    B = g_rand_int_range (rng, 200, 700);
  rg_val vals[64];
  int nv = 0;
  const char *names[] = { "arg0_1", "arg1_1", "arg2_1" };
  *n_inputs = 3;
  *inputs = fx_arena_alloc (arena, sizeof (fx_value) * 3);
  fx_generator gen;
  fx_generator_seed (&gen, g_rand_int (rng));
  for (int i = 0; i < 3; i++)
    {
      fx_node *ph = fx_graph_placeholder (g, names[i]);
      int64_t sz[2] = { A, B };
      int nd = i == 2 ? 1 : 2;
      const int64_t *s = i == 2 ? &sz[1] : sz;
      fx_tensor *t;
      if (i == 1 && g_rand_boolean (rng))
        {
          /* a transposed (non-contiguous) input */
          int64_t st[2] = { 1, A };
          t = fx_tensor_new_strided (NULL, FX_DTYPE_F32, 2, sz, st);
        }
      else
        t = fx_tensor_new (NULL, FX_DTYPE_F32, nd, s);
      fx_tensor_fill_normal (t, &gen, 0, 1);
      (*inputs)[i] = fx_value_tensor (t);
      vals[nv].node = ph;
      vals[nv].ndim = nd;
      memcpy (vals[nv].sizes, s, sizeof (int64_t) * (size_t) nd);
      nv++;
    }
  static const char *unary[] = { "aten.tanh.default", "aten.sigmoid.default", "aten.neg.default", "aten.relu.default",
                                 "aten.abs.default", "aten.sin.default", "aten.cos.default", "aten.erf.default",
                                 "aten.gelu.default" };
  static const char *binary[] = { "aten.add.Tensor", "aten.mul.Tensor", "aten.sub.Tensor", "aten.maximum.default" };
  int steps = g_rand_int_range (rng, 3, 12);
  for (int s = 0; s < steps && nv < 60; s++)
    {
      rg_val *a = &vals[g_rand_int_range (rng, 0, nv)];
      if (g_rand_int_range (rng, 0, 3) == 0)
        a = &vals[nv - 1];
      rg_val r = *a;
      int kind = g_rand_int_range (rng, 0, 14);
      fx_arg args[4];
      fx_arg li[4];
      if (kind <= 1)
        {
          args[0] = fx_arg_node (a->node);
          r.node = rg_call (g, unary[g_rand_int_range (rng, 0, G_N_ELEMENTS (unary))], args, 1, NULL, 0);
        }
      else if (kind <= 3)
        {
          /* a partner that broadcasts against a */
          rg_val *b = NULL;
          for (int tries = 0; tries < 8 && !b; tries++)
            {
              rg_val *c = &vals[g_rand_int_range (rng, 0, nv)];
              int64_t out[3];
              int no;
              if (fx_broadcast_shapes (a->ndim, a->sizes, c->ndim, c->sizes, &no, out, NULL) && no == a->ndim
                  && memcmp (out, a->sizes, sizeof (int64_t) * (size_t) no) == 0)
                b = c;
            }
          args[0] = fx_arg_node (a->node);
          if (b)
            args[1] = fx_arg_node (b->node);
          else
            args[1] = fx_arg_float (g_rand_double_range (rng, -2, 2));
          r.node = rg_call (g, binary[g_rand_int_range (rng, 0, G_N_ELEMENTS (binary))], args, 2, NULL, 0);
        }
      else if (kind == 4 && a->ndim == 2)
        {
          static const char *red[] = { "aten.sum.dim_IntList", "aten.amax.default", "aten.mean.dim" };
          int64_t dim = g_rand_boolean (rng) ? -1 : 0;
          args[0] = fx_arg_node (a->node);
          args[1] = int_list (li, &dim, 1);
          args[2] = fx_arg_bool (true);
          r.node = rg_call (g, red[g_rand_int_range (rng, 0, 3)], args, 3, NULL, 0);
          r.sizes[dim == -1 ? 1 : 0] = 1;
        }
      else if (kind == 5 && a->ndim == 2)
        {
          int64_t perm[2] = { 1, 0 };
          args[0] = fx_arg_node (a->node);
          args[1] = int_list (li, perm, 2);
          r.node = rg_call (g, "aten.permute.default", args, 2, NULL, 0);
          r.sizes[0] = a->sizes[1];
          r.sizes[1] = a->sizes[0];
        }
      else if (kind == 6 && a->ndim == 2)
        {
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_int (-1);
          args[2] = fx_arg_bool (false);
          r.node = rg_call (g, "aten._softmax.default", args, 3, NULL, 0);
        }
      else if (kind == 7 && a->ndim == 2 && a->sizes[1] == 1)
        {
          int64_t to[2] = { a->sizes[0], B };
          args[0] = fx_arg_node (a->node);
          args[1] = int_list (li, to, 2);
          r.node = rg_call (g, "aten.expand.default", args, 2, NULL, 0);
          r.sizes[1] = B;
        }
      else if (kind == 8 && a->ndim == 2)
        {
          int64_t dim = -1;
          args[0] = fx_arg_node (a->node);
          args[1] = int_list (li, &dim, 1);
          fx_kwarg kw[2] = { { "correction", fx_arg_int (1) }, { "keepdim", fx_arg_bool (true) } };
          r.node = rg_call (g, "aten.var.correction", args, 2, kw, 2);
          r.sizes[1] = 1;
        }
      else if (kind == 9)
        {
          /* to float64 and back later through promotion with float32 values */
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_dtype (g_rand_boolean (rng) ? FX_DTYPE_F64 : FX_DTYPE_F32);
          r.node = rg_call (g, "prims.convert_element_type.default", args, 2, NULL, 0);
        }
      else if (kind == 10)
        {
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_float (0.0);
          fx_node *cond = rg_call (g, "aten.gt.Scalar", args, 2, NULL, 0);
          fx_arg wargs[3] = { fx_arg_node (cond), fx_arg_node (a->node), fx_arg_float (-1.5) };
          fx_node *neg = rg_call (g, "aten.mul.Tensor", wargs + 1, 2, NULL, 0);
          wargs[2] = fx_arg_node (neg);
          r.node = rg_call (g, "aten.where.self", wargs, 3, NULL, 0);
        }
      else if (kind == 11 && a->ndim == 2 && a->sizes[1] > 2)
        {
          /* slice: an offset and a narrower row */
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_int (1);
          args[2] = fx_arg_int (1);
          args[3] = fx_arg_int (a->sizes[1] - 1);
          r.node = rg_call (g, "aten.slice.Tensor", args, 4, NULL, 0);
          r.sizes[1] = a->sizes[1] - 2;
        }
      else if (kind == 12 && a->ndim == 2)
        {
          /* reshape to 1-D and back: a view when a is contiguous, a copy when it is permuted */
          int64_t flat = a->sizes[0] * a->sizes[1];
          args[0] = fx_arg_node (a->node);
          args[1] = int_list (li, &flat, 1);
          fx_node *f = rg_call (g, "aten.reshape.default", args, 2, NULL, 0);
          fx_arg li2[2];
          args[0] = fx_arg_node (f);
          args[1] = int_list (li2, a->sizes, 2);
          r.node = rg_call (g, "aten.reshape.default", args, 2, NULL, 0);
        }
      else if (kind == 13 && a->ndim == 2)
        {
          /* unsqueeze then squeeze */
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_int (1);
          fx_node *u = rg_call (g, "aten.unsqueeze.default", args, 2, NULL, 0);
          args[0] = fx_arg_node (u);
          args[1] = fx_arg_int (1);
          r.node = rg_call (g, "aten.squeeze.dim", args, 2, NULL, 0);
        }
      else
        {
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_float (0.5);
          r.node = rg_call (g, "aten.mul.Tensor", args, 2, NULL, 0);
        }
      vals[nv++] = r;
    }
  fx_arg outs[2] = { fx_arg_node (vals[nv - 1].node), fx_arg_node (vals[g_rand_int_range (rng, 3, nv)].node) };
  fx_graph_output (g, fx_arg_tuple (outs, 2));
  fx_graph_resolve_ops (g);
  return g;
}

static void
test_random_graphs (void)
{
  GRand *rng = g_rand_new_with_seed (20261121);
  for (int i = 0; i < 60; i++)
    {
      fx_arena *arena = fx_arena_new ();
      fx_value *inputs;
      size_t n_inputs;
      fx_graph *g = random_graph (rng, &inputs, &n_inputs, arena);
      char label[64];
      g_snprintf (label, sizeof label, "random graph %d", i);
      fx_compiled *c = check_graph (g, inputs, n_inputs, NULL, 0, label);
      g_assert_cmpuint (count_kind (c, "fallback"), ==, 0);
      fx_inductor_free (c);
      clear_values (inputs, n_inputs);
      fx_graph_free (g);
      fx_arena_free (arena);
    }
  g_rand_free (rng);
}

/* ---------------------------------------------------------------- small hand-made graphs */

static fx_graph *
softmax_graph (fx_value *inputs, int64_t rows, int64_t cols)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "arg0_1");
  fx_arg args[3] = { fx_arg_node (x), fx_arg_int (-1), fx_arg_bool (false) };
  fx_node *s = rg_call (g, "aten._softmax.default", args, 3, NULL, 0);
  fx_arg out = fx_arg_node (s);
  fx_graph_output (g, fx_arg_tuple (&out, 1));
  fx_graph_resolve_ops (g);
  int64_t sz[2] = { rows, cols };
  fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
  fx_generator gen;
  fx_generator_seed (&gen, 7);
  fx_tensor_fill_normal (t, &gen, 0, 1);
  inputs[0] = fx_value_tensor (t);
  return g;
}

static void
test_cache (void)
{
  fx_value in[1];
  fx_graph *g = softmax_graph (in, 9, 31);
  ind_have_openmp ();
  size_t before = fx_inductor_compiler_invocations ();
  fx_compiled *c = check_graph (g, in, 1, NULL, 0, "cache cold");
  size_t after_cold = fx_inductor_compiler_invocations ();
  g_assert_cmpuint (after_cold, ==, before + 1);
  g_assert_nonnull (strstr (c->notes.data, "compiled"));
  fx_inductor_free (c);
  c = check_graph (g, in, 1, NULL, 0, "cache warm");
  g_assert_cmpuint (fx_inductor_compiler_invocations (), ==, after_cold);
  g_assert_nonnull (strstr (c->notes.data, "cache hit"));
  g_assert_cmpfloat (c->compile_ms, <, 1000.0);
  fx_inductor_free (c);
  /* another option set changes the source (num_threads) and so the key */
  fx_option_kv kv = { "cpp.simdlen", "4" };
  c = check_graph (g, in, 1, &kv, 1, "cache other options");
  g_assert_cmpuint (fx_inductor_compiler_invocations (), ==, after_cold + 1);
  fx_inductor_free (c);
  fx_value_clear (&in[0]);
  fx_graph_free (g);
}

static const char *
artifact (const fx_compiled *c, const char *name)
{
  for (size_t i = 0; i < c->n_artifacts; i++)
    if (strcmp (c->artifacts[i].name, name) == 0)
      return c->artifacts[i].text;
  return NULL;
}

static void
test_hostile_names (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_create_node (g, FX_OP_PLACEHOLDER, fx_target_str ("x"), NULL, 0, NULL, 0,
                                     "x*/ int evil(void){return system(\"id\");} /*");
  fx_arg a1[1] = { fx_arg_node (x) };
  fx_node *e = fx_graph_create_node (g, FX_OP_CALL_FUNCTION, fx_target_op ("aten.exp.default"), a1, 1, NULL, 0,
                                     "a\"b\n#include <stdlib.h>\n");
  fx_arg a2[2] = { fx_arg_node (e), fx_arg_node (x) };
  fx_node *m = fx_graph_create_node (g, FX_OP_CALL_FUNCTION, fx_target_op ("aten.mul.Tensor"), a2, 2, NULL, 0,
                                     "buf0; system(\"rm -rf ~\")");
  fx_arg out = fx_arg_node (m);
  fx_graph_output (g, fx_arg_tuple (&out, 1));
  fx_graph_resolve_ops (g);
  int64_t sz[2] = { 5, 7 };
  fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
  fx_generator gen;
  fx_generator_seed (&gen, 3);
  fx_tensor_fill_normal (t, &gen, 0, 1);
  fx_value in = fx_value_tensor (t);
  fx_compiled *c = check_graph (g, &in, 1, NULL, 0, "hostile names");
  const char *src = artifact (c, "output_code.c");
  g_assert_nonnull (src);
  /* names reach the source only as sanitized comments ([A-Za-z0-9_.], others '?') */
  g_assert_null (strstr (src, "system("));
  g_assert_null (strstr (src, "*/ int"));
  g_assert_null (strstr (src, "#include <stdlib"));
  g_assert_null (strstr (src, "rm -rf"));
  g_assert_null (strstr (src, "\"id\""));
  /* the kernel still lists the graph's node names for the UI */
  g_assert_cmpuint (c->n_kernels, ==, 1);
  g_assert_cmpuint (c->kernels[0].n_nodes, ==, 2);
  g_assert_cmpstr (c->kernels[0].name, ==, "cpp_fused_exp_mul_0");
  fx_inductor_free (c);
  fx_value_clear (&in);
  fx_graph_free (g);
}

static void
test_fallback (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "arg0_1");
  fx_arg a1[2] = { fx_arg_node (x), fx_arg_int (1) };
  fx_node *cs = rg_call (g, "aten.cumsum.default", a1, 2, NULL, 0);
  fx_arg a2[2] = { fx_arg_node (cs), fx_arg_node (x) };
  fx_node *ad = rg_call (g, "aten.add.Tensor", a2, 2, NULL, 0);
  fx_arg a3[1] = { fx_arg_node (ad) };
  fx_node *th = rg_call (g, "aten.tanh.default", a3, 1, NULL, 0);
  /* integer floor division has no lowering: a fallback whose string argument must outlive the compile */
  fx_arg a4[2] = { fx_arg_node (ad), fx_arg_float (10.0) };
  fx_node *sc = rg_call (g, "aten.mul.Tensor", a4, 2, NULL, 0);
  fx_arg a5[2] = { fx_arg_node (sc), fx_arg_dtype (FX_DTYPE_I64) };
  fx_node *iv = rg_call (g, "prims.convert_element_type.default", a5, 2, NULL, 0);
  fx_arg a6[2] = { fx_arg_node (iv), fx_arg_int (3) };
  fx_kwarg kw[1] = { { "rounding_mode", fx_arg_str ("floor") } };
  fx_node *fd = rg_call (g, "aten.div.Scalar_mode", a6, 2, kw, 1);
  /* and float floor division has one */
  fx_arg a7[2] = { fx_arg_node (th), fx_arg_float (0.3) };
  fx_node *ff = rg_call (g, "aten.div.Scalar_mode", a7, 2, kw, 1);
  fx_arg outs[3] = { fx_arg_node (th), fx_arg_node (fd), fx_arg_node (ff) };
  fx_graph_output (g, fx_arg_tuple (outs, 3));
  fx_graph_resolve_ops (g);
  int64_t sz[2] = { 6, 50 };
  fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
  fx_generator gen;
  fx_generator_seed (&gen, 5);
  fx_tensor_fill_normal (t, &gen, 0, 1);
  fx_value in = fx_value_tensor (t);
  fx_compiled *c = check_graph (g, &in, 1, NULL, 0, "fallback");
  fx_value *res = NULL;
  size_t n_res = 0;
  fx_arena *arena = fx_arena_new ();
  fx_diag diag;
  /* a second run: the fallback's bound arguments are still valid */
  g_assert_cmpint (fx_inductor_run (c, &in, 1, arena, &res, &n_res, &diag), ==, FX_OK);
  clear_values (res, n_res);
  fx_arena_free (arena);
  g_assert_cmpuint (count_kind (c, "fallback"), ==, 2);
  g_assert_nonnull (strstr (c->notes.data, "fallback: cumsum"));
  g_assert_nonnull (strstr (artifact (c, "fusion_log.txt"), "cannot fuse"));
  fx_inductor_free (c);
  fx_value_clear (&in);
  fx_graph_free (g);
}

/* Two fallbacks split the graph into four kernels; the first stored intermediate is dead before the third is made,
   so its memory is reused. */
static void
test_buffer_reuse (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "arg0_1");
  fx_arg a[2] = { fx_arg_node (x) };
  fx_node *e = rg_call (g, "aten.exp.default", a, 1, NULL, 0);
  a[0] = fx_arg_node (e);
  a[1] = fx_arg_int (1);
  fx_node *c1 = rg_call (g, "aten.cumsum.default", a, 2, NULL, 0);
  a[0] = fx_arg_node (c1);
  fx_node *t = rg_call (g, "aten.tanh.default", a, 1, NULL, 0);
  a[0] = fx_arg_node (t);
  a[1] = fx_arg_int (0);
  fx_node *c2 = rg_call (g, "aten.cumsum.default", a, 2, NULL, 0);
  a[0] = fx_arg_node (c2);
  a[1] = fx_arg_float (1.0);
  fx_node *o1 = rg_call (g, "aten.add.Tensor", a, 2, NULL, 0);
  /* t's last reader, at the index it writes: written in place over t */
  a[0] = fx_arg_node (t);
  a[1] = fx_arg_node (o1);
  fx_node *m = rg_call (g, "aten.mul.Tensor", a, 2, NULL, 0);
  a[0] = fx_arg_node (m);
  a[1] = fx_arg_int (1);
  fx_node *o = rg_call (g, "aten.cumsum.default", a, 2, NULL, 0);
  fx_arg out = fx_arg_node (o);
  fx_graph_output (g, fx_arg_tuple (&out, 1));
  fx_graph_resolve_ops (g);
  int64_t sz[2] = { 7, 9 };
  fx_tensor *in = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
  fx_generator gen;
  fx_generator_seed (&gen, 11);
  fx_tensor_fill_normal (in, &gen, 0, 0.5);
  fx_value v = fx_value_tensor (in);
  fx_compiled *c = check_graph (g, &v, 1, NULL, 0, "buffer reuse");
  g_assert_cmpuint (count_kind (c, "fallback"), ==, 3);
  g_assert_nonnull (strstr (artifact (c, "fusion_log.txt"), "reuse: buf"));
  g_assert_nonnull (strstr (artifact (c, "fusion_log.txt"), "inplace: buf"));
  fx_inductor_free (c);
  fx_value_clear (&v);
  fx_graph_free (g);
}

/* A full reduction of a large tensor runs the reduction loop itself in parallel (per-thread accumulators). */
/* ---------------------------------------------------------------- graphs from text, with chosen input values */

/* Parses FX code, makes seeded inputs from its annotations, lets set_values overwrite some, and checks inductor
   against the interpreter; returns the compiled object. */
static fx_compiled *
check_text (const char *code, void (*set_values) (fx_value *inputs, size_t n), const char *label)
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
  if (fx_inputs_make (graph, FX_INPUTS_SPEC, NULL, 99, NULL, arena, &inputs, &n_inputs, &diag) != FX_OK)
    g_error ("%s: inputs: %s", label, diag.message);
  if (set_values)
    set_values (inputs, n_inputs);
  fx_compiled *c = check_graph (graph, inputs, n_inputs, NULL, 0, label);
  clear_values (inputs, n_inputs);
  fx_arena_free (arena);
  fx_graph_free (graph);
  return c;
}

/* Column sums and var_mean over dim 0 (the reduced dim strided, the kept one contiguous): tiled over the kept
   dimension, vectorized across it, and still equal to the interpreter, with a width that is no tile multiple
   left to the plain loop. */
static void
test_outer_reduction (void)
{
  fx_compiled *c = check_text (
    "class M(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[300, 96][96, 1]cpu\"):\n"
    "        sum_1 = torch.ops.aten.sum.dim_IntList(arg0_1, [0])\n"
    "        var_mean = torch.ops.aten.var_mean.correction(arg0_1, [0], correction = 1)\n"
    "        getitem = var_mean[0]\n"
    "        getitem_1 = var_mean[1]\n"
    "        return (sum_1, getitem, getitem_1)\n",
    NULL, "outer-reduction");
  const char *src = artifact (c, "output_code.c");
  g_assert_nonnull (strstr (src, "const int64_t xb = xt * "));
  g_assert_nonnull (strstr (src, "acc"));
  fx_inductor_free (c);
  c = check_text ("class M(torch.nn.Module):\n"
                  "    def forward(self, arg0_1: \"f32[300, 13][13, 1]cpu\"):\n"
                  "        sum_1 = torch.ops.aten.sum.dim_IntList(arg0_1, [0])\n"
                  "        return (sum_1,)\n",
                  NULL, "outer-reduction-narrow");
  g_assert_null (strstr (artifact (c, "output_code.c"), "const int64_t xb = xt * "));
  fx_inductor_free (c);
}

/* ---------------------------------------------------------------- indirect loads */

/* Every integer input gets indices (i * 7 + 3) mod bound: spread over the table, all in range. */
static int64_t index_bound;

static void
set_indices (fx_value *inputs, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      fx_tensor *t = inputs[i].u.t;
      if (inputs[i].kind != FX_VALUE_TENSOR || (t->dtype != FX_DTYPE_I64 && t->dtype != FX_DTYPE_I32))
        continue;
      for (int64_t k = 0; k < fx_tensor_numel (t); k++)
        fx_tensor_set_i64 (t, k, (k * 7 + 3) % index_bound);
    }
}

/* Runs compiled c on the graph's seeded inputs with index element `at` of input `which` set to `bad`: the run must
   fail naming node `node` with `text`. */
static void
check_bad_index (fx_compiled *c, const char *code, int which, int64_t at, int64_t bad, const char *node,
                 const char *text)
{
  fx_graph *graph = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_parse_fx_code (code, strlen (code), "bad-index", &graph, &diag), ==, FX_OK);
  fx_graph_resolve_ops (graph);
  fx_arena *arena = fx_arena_new ();
  fx_value *inputs = NULL, *res = NULL;
  size_t n_inputs = 0, n_res = 0;
  g_assert_cmpint (fx_inputs_make (graph, FX_INPUTS_SPEC, NULL, 99, NULL, arena, &inputs, &n_inputs, &diag), ==,
                   FX_OK);
  set_indices (inputs, n_inputs);
  fx_tensor_set_i64 (inputs[which].u.t, at, bad);
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inductor_run (c, inputs, n_inputs, arena, &res, &n_res, &diag), ==, FX_ERR_INVALID);
  g_test_message ("%s", diag.message);
  char *quoted = g_strdup_printf ("'%s'", node);
  g_assert_nonnull (strstr (diag.message, quoted));
  g_assert_nonnull (strstr (diag.message, text));
  g_free (quoted);
  /* the same compiled object still runs good indices */
  set_indices (inputs, n_inputs);
  g_assert_cmpint (fx_inductor_run (c, inputs, n_inputs, arena, &res, &n_res, &diag), ==, FX_OK);
  clear_values (res, n_res);
  clear_values (inputs, n_inputs);
  fx_arena_free (arena);
  fx_graph_free (graph);
}

static const char embedding_bag_code[] =
  "class M(torch.nn.Module):\n"
  "    def forward(self, arg0_1: \"f32[50, 24][24, 1]cpu\", arg1_1: \"i64[7, 5][5, 1]cpu\"):\n"
  "        embedding = torch.ops.aten.embedding.default(arg0_1, arg1_1)\n"
  "        sum_1 = torch.ops.aten.sum.dim_IntList(embedding, [1])\n"
  "        return (sum_1,)\n";

/* cross entropy as AOT writes it: the target is masked (ignore_index) before the gather, so the index is computed */
static const char nll_code[] =
  "class M(torch.nn.Module):\n"
  "    def forward(self, arg0_1: \"f32[37, 11][11, 1]cpu\", arg1_1: \"i64[37][1]cpu\"):\n"
  "        _log_softmax = torch.ops.aten._log_softmax.default(arg0_1, 1, False)\n"
  "        nll_loss_forward = torch.ops.aten.nll_loss_forward.default(_log_softmax, arg1_1, None, 1, -100)\n"
  "        getitem = nll_loss_forward[0]\n"
  "        return (getitem,)\n";

/* index_select of a transposed input with int32 indices, a gather along dim 0, and an embedding whose rows are
   scaled after the lookup */
static const char select_code[] =
  "class M(torch.nn.Module):\n"
  "    def forward(self, arg0_1: \"f32[9, 6][6, 1]cpu\", arg1_1: \"i32[4][1]cpu\", arg2_1: \"i64[3, 6][6, 1]cpu\"):\n"
  "        t = torch.ops.aten.t.default(arg0_1)\n"
  "        index_select = torch.ops.aten.index_select.default(t, 1, arg1_1)\n"
  "        gather = torch.ops.aten.gather.default(arg0_1, 0, arg2_1)\n"
  "        mul = torch.ops.aten.mul.Tensor(gather, 2.0)\n"
  "        embedding = torch.ops.aten.embedding.default(arg0_1, arg2_1)\n"
  "        relu = torch.ops.aten.relu.default(embedding)\n"
  "        return (index_select, mul, relu)\n";

/* embedding, gather and index_select of graph inputs are indirect loads inside the fused kernels (no fallback, no
   written gather), equal to the interpreter; an index out of range, from an input (checked before the kernels) or
   computed in the kernel, is a run error naming the node, and the next good run works. */
static void
test_indirect_loads (void)
{
  index_bound = 50;
  fx_compiled *c = check_text (embedding_bag_code, set_indices, "embedding-bag");
  g_assert_cmpuint (c->n_kernels, ==, 1);
  g_assert_cmpuint (count_kind (c, "fallback"), ==, 0);
  const char *src = artifact (c, "output_code.c");
  /* the table row through the index, read in the bag's tiled column sum */
  g_assert_nonnull (strstr (src, " + 24LL * (in_ptr"));
  g_assert_nonnull (strstr (src, "const int64_t xb = xt * "));
  g_assert_nonnull (strstr (artifact (c, "ir_pre_fusion.txt"), "ops.indirect_indexing(opnd0, 50)"));
  check_bad_index (c, embedding_bag_code, 1, 12, 50, "embedding", "index out of range in self");
  check_bad_index (c, embedding_bag_code, 1, 0, -1, "embedding", "index out of range in self");
  fx_inductor_free (c);

  index_bound = 11;
  c = check_text (nll_code, set_indices, "nll-loss");
  g_assert_cmpuint (count_kind (c, "fallback"), ==, 0);
  src = artifact (c, "output_code.c");
  /* the masked target is computed in the kernel: checked there */
  g_assert_nonnull (strstr (src, "fx_ind_index ("));
  /* the target logit is read in the log_softmax kernel, beside the row's max and sum */
  g_assert_nonnull (strstr (c->kernels[0].name, "gather"));
  check_bad_index (c, nll_code, 1, 5, 11, "nll_loss_forward", "index 11 is out of bounds for dimension 1 with size 11");
  fx_inductor_free (c);

  index_bound = 6;
  c = check_text (select_code, set_indices, "select");
  g_assert_cmpuint (count_kind (c, "fallback"), ==, 0);
  check_bad_index (c, select_code, 1, 3, 9, "index_select", "index out of range in self (index 9, dimension 1 of size 9)");
  check_bad_index (c, select_code, 2, 4, 9, "gather", "index 9 is out of bounds for dimension 0 with size 9");
  fx_inductor_free (c);
}

/* ---------------------------------------------------------------- symbolic kernels */

static const char sym_code[] = FX_TEST_SYM_GRAPH ("cpu");

/* Inputs for sym_code-like graphs at size n of every symbolic dim (seeded normal values). */
static fx_value *
sym_inputs (int64_t n, const int64_t *const *shapes, const int *ndims, int n_in, fx_arena *arena)
{
  fx_value *v = fx_arena_alloc (arena, sizeof (fx_value) * (size_t) (n_in + 1));
  fx_generator gen;
  fx_generator_seed (&gen, (uint64_t) n);
  v[0] = fx_value_int (n);
  for (int i = 1; i < n_in; i++)
    {
      int64_t sz[4];
      for (int d = 0; d < ndims[i]; d++)
        sz[d] = shapes[i][d] < 0 ? n : shapes[i][d];
      fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, ndims[i], sz);
      fx_tensor_fill_normal (t, &gen, 0, 1);
      v[i] = fx_value_tensor (t);
    }
  return v;
}

static void
sym_check_run (const fx_graph *g, fx_compiled *c, fx_value *in, int n_in, int64_t n)
{
  fx_arena *arena = fx_arena_new ();
  fx_value *ref = NULL, *res = NULL;
  size_t n_ref = 0, n_res = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_interp_run (g, in, (size_t) n_in, NULL, arena, &ref, &n_ref, &diag) != FX_OK)
    g_error ("s0=%lld: interpreter: %s", (long long) n, diag.message);
  if (fx_inductor_run (c, in, (size_t) n_in, arena, &res, &n_res, &diag) != FX_OK)
    g_error ("s0=%lld: inductor: %s", (long long) n, diag.message);
  GString *why = g_string_new (NULL);
  if (!close_values (res, ref, n_ref, 1e-4, why))
    g_error ("s0=%lld: %s", (long long) n, why->str);
  g_string_free (why, TRUE);
  clear_values (ref, n_ref);
  clear_values (res, n_res);
  fx_arena_free (arena);
}

/* Symbolic input sizes give one library for every batch size: compiled at s0 = 8, the graph runs at 13, 600 (past the
   size where its loops turn parallel) and 8 again without calling the C compiler, equal to the interpreter each time;
   a size whose kernels differ (a row long enough to be split over threads) gets a build of its own, and still the
   right values. A source that does not follow its sizes literal by literal (a tile that needs divisibility) is
   compiled for the example sizes, with the reason in the notes. */
static void
test_symbolic_kernels (void)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_parse_fx_code (sym_code, strlen (sym_code), "sym.py", &g, &diag), ==, FX_OK);
  fx_graph_resolve_ops (g);
  static const int64_t sx[2] = { -1, 64 }, sy[1] = { 64 }, sw[2] = { 64, 32 };
  const int64_t *const shapes[4] = { NULL, sx, sy, sw };
  const int ndims[4] = { 0, 2, 1, 2 };
  fx_arena *arena = fx_arena_new ();
  fx_value *in = sym_inputs (8, shapes, ndims, 4, arena);
  fx_compiled *c = NULL;
  g_assert_cmpint (fx_inductor_compile (g, in, 4, NULL, NULL, 0, &c, &diag), ==, FX_OK);
  g_assert_nonnull (strstr (c->notes.data, "symbolic kernels over s0"));
  const char *src = artifact (c, "output_code.c");
  g_assert_nonnull (strstr (src, "x0 < (1LL * fx_ks0)"));
  g_assert_nonnull (strstr (src, "if((64LL * fx_ks0) >= 32768)"));
  /* each kernel's listed source is its function in the symbolic text */
  for (size_t k = 0; k < c->n_kernels; k++)
    if (c->kernels[k].source && strncmp (c->kernels[k].name, "cpp_", 4) == 0)
      g_assert_nonnull (strstr (c->kernels[k].source, c->kernels[k].name));
  sym_check_run (g, c, in, 4, 8);
  clear_values (in, 4);
  size_t builds = fx_inductor_compiler_invocations ();
  static const int64_t sizes[] = { 13, 600, 8, 13 };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    {
      in = sym_inputs (sizes[i], shapes, ndims, 4, arena);
      sym_check_run (g, c, in, 4, sizes[i]);
      clear_values (in, 4);
    }
  g_assert_cmpuint (fx_inductor_compiler_invocations (), ==, builds);
  /* inputs that disagree on s0 are an error, not a read past a buffer */
  in = sym_inputs (9, shapes, ndims, 4, arena);
  in[0] = fx_value_int (10);
  fx_value *res = NULL;
  size_t n_res = 0;
  g_assert_cmpint (fx_inductor_run (c, in, 4, arena, &res, &n_res, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "s0 is"));
  clear_values (in, 4);
  fx_inductor_free (c);
  fx_graph_free (g);

  /* rows of s0 elements: at 300000 the row is split over threads, another kernel: built for that size */
  static const char rows_code[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, s0: \"Sym(s0)\", L_x_: \"f32[4, s0][s0, 1]cpu\"):\n"
    "        sum_1 = torch.ops.aten.sum.dim_IntList(L_x_, [1])\n"
    "        return (sum_1,)\n";
  g_assert_cmpint (fx_parse_fx_code (rows_code, strlen (rows_code), "rows.py", &g, &diag), ==, FX_OK);
  fx_graph_resolve_ops (g);
  static const int64_t sr[2] = { 4, -1 };
  const int64_t *const rshapes[2] = { NULL, sr };
  const int rdims[2] = { 0, 2 };
  in = sym_inputs (1000, rshapes, rdims, 2, arena);
  g_assert_cmpint (fx_inductor_compile (g, in, 2, NULL, NULL, 0, &c, &diag), ==, FX_OK);
  g_assert_nonnull (strstr (c->notes.data, "symbolic kernels over s0"));
  clear_values (in, 2);
  builds = fx_inductor_compiler_invocations ();
  in = sym_inputs (300000, rshapes, rdims, 2, arena);
  sym_check_run (g, c, in, 2, 300000);
  clear_values (in, 2);
  g_test_message ("builds at 300000: %zu", fx_inductor_compiler_invocations () - builds);
  g_assert_cmpuint (fx_inductor_compiler_invocations (), <=, builds + 1);
  in = sym_inputs (1777, rshapes, rdims, 2, arena);
  sym_check_run (g, c, in, 2, 1777);
  clear_values (in, 2);
  fx_inductor_free (c);
  fx_graph_free (g);

  /* a column sum over [64, s0]: its tile width depends on s0's divisors, so the kernels are specialized */
  static const char cols_code[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, s0: \"Sym(s0)\", L_x_: \"f32[64, s0][s0, 1]cpu\"):\n"
    "        sum_1 = torch.ops.aten.sum.dim_IntList(L_x_, [0])\n"
    "        return (sum_1,)\n";
  g_assert_cmpint (fx_parse_fx_code (cols_code, strlen (cols_code), "cols.py", &g, &diag), ==, FX_OK);
  fx_graph_resolve_ops (g);
  static const int64_t sc[2] = { 64, -1 };
  const int64_t *const cshapes[2] = { NULL, sc };
  in = sym_inputs (64, cshapes, rdims, 2, arena);
  g_assert_cmpint (fx_inductor_compile (g, in, 2, NULL, NULL, 0, &c, &diag), ==, FX_OK);
  g_test_message ("%s", c->notes.data);
  g_assert_nonnull (strstr (c->notes.data, "kernels specialized to the example sizes"));
  g_assert_null (strstr (artifact (c, "output_code.c"), "fx_ks0"));
  sym_check_run (g, c, in, 2, 64);
  clear_values (in, 2);
  fx_inductor_free (c);
  fx_graph_free (g);
  fx_arena_free (arena);
}

/* x.t() + y: tiled 16 x 16 over the last two dims (the transposed reads reuse their cache lines), also under a batch
   dim; equal to the interpreter; sizes that are no tile multiple keep the plain loop. */
static void
test_transposed_tiles (void)
{
  static const struct
  {
    const char *code, *label, *tiled;   /* the tile's row index in the source, NULL: not tiled */
  } cases[] = {
    { "class M(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[48, 80][80, 1]cpu\", y: \"f32[80, 48][48, 1]cpu\"):\n"
      "        t = torch.ops.aten.t.default(x)\n"
      "        add = torch.ops.aten.add.Tensor(t, y)\n"
      "        return (add,)\n", "transpose-2d", "const int64_t x0 = xt0 * 16 + xl;" },
    { "class M(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[3, 32, 48][1536, 48, 1]cpu\", y: \"f32[3, 48, 32][1536, 32, 1]cpu\"):\n"
      "        permute = torch.ops.aten.permute.default(x, [0, 2, 1])\n"
      "        mul = torch.ops.aten.mul.Tensor(permute, y)\n"
      "        return (mul,)\n", "transpose-3d", "const int64_t x1 = xt1 * 16 + xl;" },
    { "class M(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[50, 80][80, 1]cpu\", y: \"f32[80, 50][50, 1]cpu\"):\n"
      "        t = torch.ops.aten.t.default(x)\n"
      "        add = torch.ops.aten.add.Tensor(t, y)\n"
      "        return (add,)\n", "transpose-odd", NULL },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      fx_compiled *c = check_text (cases[i].code, NULL, cases[i].label);
      const char *src = artifact (c, "output_code.c");
      if (cases[i].tiled)
        g_assert_nonnull (strstr (src, cases[i].tiled));
      else
        g_assert_null (strstr (src, "+ xl;"));
      fx_inductor_free (c);
    }
}

/* exp's edges through the generated fx_expf: -inf, far below the float range (0), the denormals, the top of the
   range and past it (inf), NaN; softmax of rows with -inf (masked) and with a wide spread. */
static const float exp_edges[] = { -INFINITY, -1000.0f, -200.0f, -104.5f, -103.98f, -103.96f, -103.9f, -100.0f, -90.0f, -87.4f, -80.5f,
                                   -50.0f, -1.0f, -1e-8f, 0.0f, 1e-8f, 1.0f, 50.0f, 88.0f, 88.7f, 88.75f, 89.0f,
                                   200.0f, INFINITY, NAN };

static void
set_exp_edges (fx_value *inputs, size_t n)
{
  g_assert_cmpuint (n, >=, 1);
  for (size_t i = 0; i < G_N_ELEMENTS (exp_edges); i++)
    fx_tensor_set_f64 (inputs[0].u.t, (int64_t) i, exp_edges[i]);
}

static void
test_exp_range (void)
{
  fx_compiled *c = check_text ("class M(torch.nn.Module):\n"
                               "    def forward(self, arg0_1: \"f32[4096][1]cpu\"):\n"
                               "        exp = torch.ops.aten.exp.default(arg0_1)\n"
                               "        return (exp,)\n",
                               set_exp_edges, "exp-range");
  fx_inductor_free (c);
}

/* Row 0 all -inf, row 1 one +inf, row 2 one NaN, the rest spread over +-300 (most exp arguments far below -87). */
static void
set_rows (fx_value *inputs, size_t n)
{
  fx_tensor *t = inputs[0].u.t;
  int64_t cols = t->sizes[1];
  for (int64_t j = 0; j < cols; j++)
    fx_tensor_set_f64 (t, j, -INFINITY);
  fx_tensor_set_f64 (t, cols + 3, INFINITY);
  fx_tensor_set_f64 (t, 2 * cols + 5, NAN);
  for (int64_t k = 3 * cols; k < fx_tensor_numel (t); k++)
    fx_tensor_set_f64 (t, k, fx_tensor_get_f64 (t, k) * 300.0);
  if (n > 1 && inputs[1].kind == FX_VALUE_TENSOR)   /* the mask: row 4 fully masked, every third element else */
    for (int64_t k = 0; k < fx_tensor_numel (inputs[1].u.t); k++)
      fx_tensor_set_i64 (inputs[1].u.t, k, !(k / cols == 4 || k % 3 == 0));
}

static void
test_logsumexp_softmax (void)
{
  /* logsumexp decomposes (amax, exp, sum, log) and fuses: no fallback to the reference kernel */
  fx_compiled *c = check_text ("class M(torch.nn.Module):\n"
                               "    def forward(self, arg0_1: \"f32[16, 333][333, 1]cpu\"):\n"
                               "        logsumexp = torch.ops.aten.logsumexp.default(arg0_1, [1])\n"
                               "        logsumexp_1 = torch.ops.aten.logsumexp.default(arg0_1, [-1], True)\n"
                               "        return (logsumexp, logsumexp_1)\n",
                               set_rows, "logsumexp");
  g_assert_cmpuint (count_kind (c, "fallback"), ==, 0);
  /* the exp pass over a row the max pass read prefetches the next row (333 floats a row) */
  g_assert_nonnull (strstr (artifact (c, "output_code.c"), "__builtin_prefetch (&in_ptr0[x0 * 333LL + r0 + 333LL]);"));
  fx_inductor_free (c);
  /* masked softmax: a bool mask is a uint8_t parameter (gcc vectorizes its loads), fully masked rows give NaN */
  c = check_text ("class M(torch.nn.Module):\n"
                  "    def forward(self, arg0_1: \"f32[16, 333][333, 1]cpu\", arg1_1: \"b8[16, 333][333, 1]cpu\"):\n"
                  "        bitwise_not = torch.ops.aten.bitwise_not.default(arg1_1)\n"
                  "        masked_fill = torch.ops.aten.masked_fill.Scalar(arg0_1, bitwise_not, -inf)\n"
                  "        _softmax = torch.ops.aten._softmax.default(masked_fill, -1, False)\n"
                  "        return (_softmax,)\n",
                  set_rows, "masked-softmax");
  g_assert_nonnull (strstr (artifact (c, "output_code.c"), "const uint8_t *restrict"));
  fx_inductor_free (c);
}

/* linalg_vector_norm: ord 2 and 1 decompose and fuse, ord inf and 3 stay whole (a fallback to the reference
   kernel) instead of failing the compile; all equal the interpreter, rows with inf and NaN included. */
static void
test_vector_norm (void)
{
  fx_compiled *c = check_text (
    "class M(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[16, 333][333, 1]cpu\"):\n"
    "        a = torch.ops.aten.linalg_vector_norm.default(arg0_1, 2, [-1])\n"
    "        b = torch.ops.aten.linalg_vector_norm.default(arg0_1, 1, [1], True)\n"
    "        c = torch.ops.aten.linalg_vector_norm.default(arg0_1, inf, [-1])\n"
    "        d = torch.ops.aten.linalg_vector_norm.default(arg0_1, 3, [0])\n"
    "        return (a, b, c, d)\n",
    set_rows, "vector-norm");
  g_assert_cmpuint (count_kind (c, "fallback"), ==, 2);
  g_assert_nonnull (strstr (artifact (c, "output_code.c"), "sqrt("));
  fx_inductor_free (c);
}

static void
test_full_reduction (void)
{
  static const char *red[] = { "aten.sum.default", "aten.amax.default", "aten.mean.default" };
  for (size_t k = 0; k < G_N_ELEMENTS (red); k++)
    {
      fx_graph *g = fx_graph_new ();
      fx_node *x = fx_graph_placeholder (g, "arg0_1");
      fx_arg a[2] = { fx_arg_node (x) };
      fx_node *e = rg_call (g, "aten.sin.default", a, 1, NULL, 0);
      a[0] = fx_arg_node (e);
      fx_node *s = rg_call (g, red[k], a, 1, NULL, 0);
      fx_arg outs[2] = { fx_arg_node (s), fx_arg_node (e) };
      fx_graph_output (g, fx_arg_tuple (outs, 2));
      fx_graph_resolve_ops (g);
      int64_t n = 300007;
      fx_tensor *in = fx_tensor_new (NULL, FX_DTYPE_F32, 1, &n);
      fx_generator gen;
      fx_generator_seed (&gen, 13);
      fx_tensor_fill_normal (in, &gen, 0, 1);
      fx_value v = fx_value_tensor (in);
      fx_compiled *c = check_graph (g, &v, 1, NULL, 0, red[k]);
      g_assert_cmpuint (c->n_kernels, ==, 1);
      g_assert_nonnull (strstr (artifact (c, "output_code.c"), "#pragma omp parallel for simd"));
      fx_inductor_free (c);
      fx_value_clear (&v);
      fx_graph_free (g);
    }
}

/* Views are index rewrites; a reshape that is not a view of a permuted tensor realizes it contiguously first. */
static void
test_views (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "arg0_1");
  fx_arg a[4], li[2];
  int64_t perm[2] = { 1, 0 }, flat = 6 * 10;
  a[0] = fx_arg_node (x);
  a[1] = int_list (li, perm, 2);
  fx_node *pm = rg_call (g, "aten.permute.default", a, 2, NULL, 0);
  a[0] = fx_arg_node (pm);
  a[1] = int_list (li, &flat, 1);
  fx_node *rs = rg_call (g, "aten.reshape.default", a, 2, NULL, 0);
  a[0] = fx_arg_node (rs);
  a[1] = fx_arg_int (0);
  a[2] = fx_arg_int (5);
  a[3] = fx_arg_int (45);
  fx_node *sl = rg_call (g, "aten.slice.Tensor", a, 4, NULL, 0);
  a[0] = fx_arg_node (sl);
  a[1] = fx_arg_float (1.0);
  fx_node *ad = rg_call (g, "aten.add.Tensor", a, 2, NULL, 0);
  fx_arg outs[2] = { fx_arg_node (ad), fx_arg_node (pm) };
  fx_graph_output (g, fx_arg_tuple (outs, 2));
  fx_graph_resolve_ops (g);
  int64_t sz[2] = { 6, 10 };
  fx_tensor *in = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
  fx_generator gen;
  fx_generator_seed (&gen, 17);
  fx_tensor_fill_normal (in, &gen, 0, 1);
  fx_value v = fx_value_tensor (in);
  fx_compiled *c = check_graph (g, &v, 1, NULL, 0, "views");
  const char *pre = artifact (c, "ir_pre_fusion.txt");
  /* one copy for the reshape, one add; the permute output is a view of the input (no kernel) */
  g_assert_nonnull (strstr (pre, "ops.clone("));
  g_assert_nonnull (strstr (pre, "ops.add("));
  g_assert_null (strstr (pre, "ops.permute("));
  fx_inductor_free (c);
  fx_value_clear (&v);
  fx_graph_free (g);
}

/* sin(x) + cos(y): two independent producers of one consumer end up in one kernel (the horizontal fusion of nodes
   without shared reads is allowed when they feed a common consumer). */
static void
test_common_consumer (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "arg0_1");
  fx_node *y = fx_graph_placeholder (g, "arg1_1");
  fx_arg a[2];
  a[0] = fx_arg_node (x);
  fx_node *sn = rg_call (g, "aten.sin.default", a, 1, NULL, 0);
  a[0] = fx_arg_node (y);
  fx_node *cs = rg_call (g, "aten.cos.default", a, 1, NULL, 0);
  a[0] = fx_arg_node (sn);
  a[1] = fx_arg_node (cs);
  fx_node *ad = rg_call (g, "aten.add.Tensor", a, 2, NULL, 0);
  fx_graph_output (g, fx_arg_tuple ((fx_arg[]) { fx_arg_node (ad) }, 1));
  fx_graph_resolve_ops (g);
  int64_t sz[2] = { 33, 17 };
  fx_generator gen;
  fx_generator_seed (&gen, 3);
  fx_value v[2];
  for (int i = 0; i < 2; i++)
    {
      fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
      fx_tensor_fill_normal (t, &gen, 0, 1);
      v[i] = fx_value_tensor (t);
    }
  fx_compiled *c = check_graph (g, v, 2, NULL, 0, "common-consumer");
  g_assert_cmpuint (c->n_kernels, ==, 1);
  g_assert_cmpstr (c->kernels[0].name, ==, "cpp_fused_add_cos_sin_0");
  fx_inductor_free (c);
  clear_values (v, 2);
  fx_graph_free (g);
}

/* mode="max-autotune" maps to max_autotune=True: variants are built and timed, the fastest kept (and still right). */
static void
test_max_autotune (void)
{
  fx_value in[1];
  fx_graph *g = softmax_graph (in, 64, 300);
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_compiled *c = NULL;
  g_assert_cmpint (fx_inductor_compile (g, in, 1, "max-autotune", NULL, 0, &c, &diag), ==, FX_OK);
  g_assert_nonnull (strstr (c->notes.data, "max_autotune: kept"));
  g_assert_nonnull (strstr (c->notes.data, "max_autotune: threads=1"));
  fx_arena *arena = fx_arena_new ();
  fx_value *ref = NULL, *res = NULL;
  size_t n_ref = 0, n_res = 0;
  g_assert_cmpint (fx_interp_run (g, in, 1, NULL, arena, &ref, &n_ref, &diag), ==, FX_OK);
  g_assert_cmpint (fx_inductor_run (c, in, 1, arena, &res, &n_res, &diag), ==, FX_OK);
  GString *why = g_string_new (NULL);
  g_assert_true (close_values (res, ref, n_ref, 1e-4, why));
  g_string_free (why, TRUE);
  /* per-kernel timing fills every kernel's time */
  g_assert_cmpint (fx_inductor_profile (c, in, 1, 3, &diag), ==, FX_OK);
  for (size_t k = 0; k < c->n_kernels; k++)
    g_assert_cmpfloat (c->kernels[k].time_ms, >=, 0.0);
  clear_values (ref, n_ref);
  clear_values (res, n_res);
  fx_arena_free (arena);
  fx_inductor_free (c);
  fx_value_clear (&in[0]);
  fx_graph_free (g);
}

static void
test_compiler_error (void)
{
  ind_library lib;
  fx_buf out;
  fx_buf_init (&out);
  fx_diag diag;
  fx_diag_clear (&diag);
  const char *bad = "this is not C at all;\n";
  bool invoked = false;
  fx_status st = ind_build (bad, strlen (bad), NULL, &invoked, &lib, &out, &diag);
  g_assert_cmpint (st, ==, FX_ERR_BACKEND);
  g_assert_true (invoked);
  g_assert_nonnull (strstr (diag.message, "C compiler failed"));
  g_assert_nonnull (strstr (out.data, "error"));
  fx_buf_free (&out);
}

static void
test_option_errors (void)
{
  fx_value in[1];
  fx_graph *g = softmax_graph (in, 3, 4);
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_compiled *c = NULL;
  fx_option_kv bad = { "max_autotun", "True" };
  g_assert_cmpint (fx_inductor_compile (g, in, 1, NULL, &bad, 1, &c, &diag), ==, FX_ERR_INVALID);
  g_assert_null (c);
  g_assert_true (g_str_has_prefix (diag.message, "Unexpected optimization option max_autotun for backend 'inductor'"));
  fx_option_kv wrong = { "epilogue_fusion", "'yes'" };
  g_assert_cmpint (fx_inductor_compile (g, in, 1, NULL, &wrong, 1, &c, &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.message, ==, "Unexpected type of attr epilogue_fusion, got str should be bool");
  fx_option_kv ok = { "epilogue_fusion", "False" };
  g_assert_cmpint (fx_inductor_compile (g, in, 1, "max-autotune", &ok, 1, &c, &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.message, ==,
                   "Either mode or options can be specified, but both can't be specified at the same time.");
  /* epilogue_fusion=False splits softmax's reductions from its pointwise epilogue */
  c = check_graph (g, in, 1, &ok, 1, "no epilogue fusion");
  g_assert_cmpuint (c->n_kernels, >, 1);
  g_assert_nonnull (strstr (artifact (c, "fusion_log.txt"), "epilogue fusion is disabled"));
  fx_inductor_free (c);
  fx_value_clear (&in[0]);
  fx_graph_free (g);
}

/* A long chain of the same four ops: the fused kernels have the same code but for their name, and each function is
   written once (Inductor's src_to_kernel): later launches call the first kernel of that code, and the results stay
   the interpreter's. */
static void
test_shared_kernels (void)
{
  static const char *ops[] = { "aten.add.Tensor", "aten.mul.Tensor", "aten.sin.default", "aten.relu.default" };
  fx_graph *g = fx_graph_new ();
  fx_node *prev = fx_graph_placeholder (g, "arg0_1");
  for (int i = 0; i < 1000; i++)
    {
      fx_arg a[2] = { fx_arg_node (prev), fx_arg_float (i % 4 == 0 ? 1.0 : 0.5) };
      prev = rg_call (g, ops[i % 4], a, i % 4 < 2 ? 2 : 1, NULL, 0);
    }
  fx_arg out = fx_arg_node (prev);
  fx_graph_output (g, fx_arg_tuple (&out, 1));
  fx_graph_resolve_ops (g);
  int64_t n = 333;
  fx_tensor *in = fx_tensor_new (NULL, FX_DTYPE_F32, 1, &n);
  fx_generator gen;
  fx_generator_seed (&gen, 5);
  fx_tensor_fill_normal (in, &gen, 0, 1.0);
  fx_value v = fx_value_tensor (in);
  fx_compiled *c = check_graph (g, &v, 1, NULL, 0, "shared kernels");
  const char *code = artifact (c, "output_code.c");
  g_assert_nonnull (code);
  size_t defined = 0, shared = 0;
  for (const char *p = code; (p = strstr (p, "\nvoid cpp_fused_")) != NULL; p++)
    defined++;
  for (size_t i = 1; i < c->n_kernels; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp (c->kernels[i].name, c->kernels[j].name) == 0)
        {
          shared++;
          g_assert_cmpstr (c->kernels[i].source, ==, c->kernels[j].source);
          break;
        }
  g_test_message ("%zu kernel launches, %zu functions, %zu shared", c->n_kernels, defined, shared);
  g_assert_cmpuint (c->n_kernels, >=, 10);
  g_assert_cmpuint (shared, >, 0);
  g_assert_cmpuint (defined + shared, ==, c->n_kernels);
  g_assert_cmpuint (defined, <=, 4);
  fx_inductor_free (c);
  fx_value_clear (&v);
  fx_graph_free (g);
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
  g_test_add_func ("/inductor/random-graphs", test_random_graphs);
  g_test_add_func ("/inductor/cache", test_cache);
  g_test_add_func ("/inductor/hostile-names", test_hostile_names);
  g_test_add_func ("/inductor/fallback", test_fallback);
  g_test_add_func ("/inductor/buffer-reuse", test_buffer_reuse);
  g_test_add_func ("/inductor/shared-kernels", test_shared_kernels);
  g_test_add_func ("/inductor/full-reduction", test_full_reduction);
  g_test_add_func ("/inductor/outer-reduction", test_outer_reduction);
  g_test_add_func ("/inductor/indirect-loads", test_indirect_loads);
  g_test_add_func ("/inductor/transposed-tiles", test_transposed_tiles);
  g_test_add_func ("/inductor/symbolic-kernels", test_symbolic_kernels);
  g_test_add_func ("/inductor/exp-range", test_exp_range);
  g_test_add_func ("/inductor/logsumexp-softmax", test_logsumexp_softmax);
  g_test_add_func ("/inductor/vector-norm", test_vector_norm);
  g_test_add_func ("/inductor/views", test_views);
  g_test_add_func ("/inductor/common-consumer", test_common_consumer);
  g_test_add_func ("/inductor/max-autotune", test_max_autotune);
  g_test_add_func ("/inductor/compiler-error", test_compiler_error);
  g_test_add_func ("/inductor/option-errors", test_option_errors);
  int rc = g_test_run ();
  g_free (cache);
  return rc;
}
