/* test-registry.c: the backend registry (list, lookup, duplicates), options and modes with PyTorch's messages,
   composed fallbacks, plugins (one good, three broken: the rest keeps working), and timed runs with accuracy. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "registry/fx-registry.h"
#include "fx/pyparse.h"

static char *plugin_dir;

static const char small_graph[] =
  "class <lambda>(torch.nn.Module):\n"
  "    def forward(self, arg0_1: \"f32[4, 8][8, 1]cpu\", arg1_1: \"f32[8][1]cpu\"):\n"
  "        add: \"f32[4, 8][8, 1]cpu\" = torch.ops.aten.add.Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None\n"
  "        relu: \"f32[4, 8][8, 1]cpu\" = torch.ops.aten.relu.default(add);  add = None\n"
  "        sum_1: \"f32[4][1]cpu\" = torch.ops.aten.sum.dim_IntList(relu, [1]);  relu = None\n"
  "        return (sum_1,)\n";

static fx_graph *
parse (const char *text)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_parse_fx_code (text, strlen (text), "test.py", &g, &diag), ==, FX_OK);
  fx_graph_resolve_ops (g);
  return g;
}

static void
make_inputs (const fx_graph *g, fx_arena *arena, fx_value **in, size_t *n)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 7, NULL, arena, in, n, &diag), ==, FX_OK);
}

static void
clear_values (fx_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fx_value_clear (&v[i]);
}

/* ---------------------------------------------------------------- registry */

static gboolean looked_up_before_init;

static void
test_explicit_init (void)
{
  g_assert_false (looked_up_before_init);
  size_t before = fx_backend_registered_count ();
  /* idempotent: a second call registers nothing more */
  fx_backends_init ();
  fx_backends_register_builtins ();
  g_assert_cmpuint (fx_backend_registered_count (), ==, before);
  g_assert_nonnull (fx_backend_lookup ("inductor", NULL));
}

/* The entry point's init shortens libgomp's spin (kernels' OpenMP threads must not hold the cores an extern BLAS
   call needs), unless the user set a policy: main() ran it before this test. */
static void
test_omp_spin (void)
{
  if (g_getenv ("FXWB_TEST_USER_SPIN") != NULL)
    g_assert_cmpstr (g_getenv ("GOMP_SPINCOUNT"), ==, g_getenv ("FXWB_TEST_USER_SPIN"));
  else
    g_assert_cmpstr (g_getenv ("GOMP_SPINCOUNT"), ==, "20000");
  g_setenv ("GOMP_SPINCOUNT", "7", TRUE);
  fx_backends_init ();
  g_assert_cmpstr (g_getenv ("GOMP_SPINCOUNT"), ==, "7");   /* a setting is never overwritten */
}

static void
test_list_lookup (void)
{
  const fx_backend *list[128];
  size_t n = fx_backend_list (false, list, 128);
  GString *names = g_string_new (NULL);
  for (size_t i = 0; i < n; i++)
    g_string_append_printf (names, "%s ", list[i]->name);
  /* sorted, built-ins present, debug-tagged plugin hidden */
  g_assert_nonnull (strstr (names->str, "aot_eager eager "));
  g_assert_nonnull (strstr (names->str, "inductor "));
  g_assert_null (strstr (names->str, "debug_print"));
  for (size_t i = 1; i < n; i++)
    g_assert_cmpint (strcmp (list[i - 1]->name, list[i]->name), <, 0);
  size_t n_all = fx_backend_list (true, list, 128);
  g_assert_cmpuint (n_all, >, n);
  gboolean found = FALSE;
  for (size_t i = 0; i < n_all; i++)
    found |= strcmp (list[i]->name, "debug_print") == 0;
  g_assert_true (found);
  g_string_free (names, TRUE);

  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_null (fx_backend_lookup ("indutcor", &diag));
  g_assert_cmpint (diag.code, ==, FX_ERR_NOT_FOUND);
  g_assert_true (g_str_has_prefix (diag.message, "Invalid backend: 'indutcor', see `fxwb backends`"));
  g_assert_nonnull (strstr (diag.message, "inductor"));
  g_assert_nonnull (fx_backend_lookup ("aot_eager", NULL));

  fx_diag_clear (&diag);
  g_assert_cmpint (fx_backend_register (fx_backend_lookup ("eager", NULL), &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.message, ==, "duplicate name: eager");
  fx_backend bad = *fx_backend_lookup ("eager", NULL);
  bad.name = "bad name; rm -rf";
  g_assert_cmpint (fx_backend_register (&bad, NULL), ==, FX_ERR_INVALID);
}

/* ---------------------------------------------------------------- options and modes */

static fx_status
resolve (const char *backend, const char *mode, const char *const *kv_text, fx_arena *arena, fx_options *out,
         fx_diag *diag)
{
  fx_option_kv kv[8];
  size_t n = 0;
  for (; kv_text && kv_text[n]; n++)
    {
      const char *eq = strchr (kv_text[n], '=');
      kv[n].key = fx_arena_strndup (arena, kv_text[n], (size_t) (eq - kv_text[n]));
      kv[n].value = eq + 1;
    }
  fx_diag_clear (diag);
  return fx_backend_resolve_options (fx_backend_lookup (backend, NULL), mode, kv, n, arena, out, diag);
}

static void
test_options (void)
{
  fx_arena *arena = fx_arena_new ();
  fx_options o;
  fx_diag diag;

  /* defaults */
  g_assert_cmpint (resolve ("inductor", NULL, NULL, arena, &o, &diag), ==, FX_OK);
  g_assert_false (fx_options_get_bool (&o, "max_autotune", true));
  g_assert_true (fx_options_get_bool (&o, "epilogue_fusion", false));
  g_assert_cmpint (fx_options_get_int (&o, "max_fusion_size", 0), ==, 64);

  /* user options, "-" in keys as torch.compile accepts them */
  const char *const given[] = { "cpp.threads=3", "epilogue-fusion=False", NULL };
  g_assert_cmpint (resolve ("inductor", NULL, given, arena, &o, &diag), ==, FX_OK);
  g_assert_cmpint (fx_options_get_int (&o, "cpp.threads", 0), ==, 3);
  g_assert_false (fx_options_get_bool (&o, "epilogue_fusion", true));
  fx_buf b;
  fx_buf_init (&b);
  fx_options_format (&o, true, &b);
  g_assert_cmpstr (b.data, ==, "{'epilogue_fusion': False, 'cpp.threads': 3}");
  fx_buf_free (&b);

  /* unknown, with the closest known name */
  const char *const typo[] = { "max_autotun=True", NULL };
  g_assert_cmpint (resolve ("inductor", NULL, typo, arena, &o, &diag), ==, FX_ERR_INVALID);
  g_assert_true (g_str_has_prefix (diag.message, "Unexpected optimization option max_autotun for backend 'inductor', "
                                                 "did you mean 'max_autotune'? known options are ['max_autotune', "));
  const char *const far[] = { "zzzzzzzzzzzz=1", NULL };
  g_assert_cmpint (resolve ("inductor", NULL, far, arena, &o, &diag), ==, FX_ERR_INVALID);
  g_assert_null (strstr (diag.message, "did you mean"));
  /* options reach every backend: eager declares its own and refuses inductor's */
  const char *const eager_opt[] = { "cpp.threads=2", NULL };
  g_assert_cmpint (resolve ("eager", NULL, eager_opt, arena, &o, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "for backend 'eager'"));

  /* wrong types */
  const char *const wrong[] = { "cpp.threads=four", NULL };
  g_assert_cmpint (resolve ("inductor", NULL, wrong, arena, &o, &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.message, ==, "Unexpected type of attr cpp.threads, got str should be int");
  const char *const wrong_bool[] = { "max_autotune=2.5", NULL };
  g_assert_cmpint (resolve ("inductor", NULL, wrong_bool, arena, &o, &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.message, ==, "Unexpected type of attr max_autotune, got float should be bool");

  /* modes */
  g_assert_cmpint (resolve ("inductor", "max-autotune", NULL, arena, &o, &diag), ==, FX_OK);
  g_assert_true (fx_options_get_bool (&o, "max_autotune", false));
  g_assert_true (fx_options_get_bool (&o, "triton.cudagraphs", false));
  g_assert_cmpint (resolve ("inductor", "max-autotune", given, arena, &o, &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.message, ==,
                   "Either mode or options can be specified, but both can't be specified at the same time.");
  /* device is where the graph runs, not a compile option: a mode goes with it (compare adds it on a CUDA graph) */
  const char *const on_device[] = { "device='cpu'", NULL };
  g_assert_cmpint (resolve ("inductor", "max-autotune", on_device, arena, &o, &diag), ==, FX_OK);
  g_assert_true (fx_options_get_bool (&o, "max_autotune", false));
  g_assert_cmpint (resolve ("inductor", "turbo", NULL, arena, &o, &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.message, ==, "Unrecognized mode=turbo, should be one of: default, reduce-overhead, "
                                     "max-autotune-no-cudagraphs, max-autotune");
  /* eager accepts the modes and ignores them, as torch's debug backends do */
  g_assert_cmpint (resolve ("eager", "reduce-overhead", NULL, arena, &o, &diag), ==, FX_OK);

  fx_buf_init (&b);
  g_assert_cmpint (fx_backend_list_mode_options (fx_backend_lookup ("inductor", NULL), "max-autotune", &b, &diag), ==,
                   FX_OK);
  g_assert_cmpstr (b.data, ==, "{'max_autotune': True, 'triton.cudagraphs': True, 'coordinate_descent_tuning': True}");
  fx_buf_reset (&b);
  fx_backend_list_mode_options (fx_backend_lookup ("inductor", NULL), "reduce-overhead", &b, &diag);
  g_assert_cmpstr (b.data, ==, "{'triton.cudagraphs': True}");
  fx_buf_reset (&b);
  fx_backend_list_options (fx_backend_lookup ("inductor", NULL), &b);
  g_assert_nonnull (strstr (b.data, "cpp.threads"));
  g_assert_nonnull (strstr (b.data, "int"));
  fx_buf_free (&b);
  fx_arena_free (arena);
}

/* ---------------------------------------------------------------- runs */

static void
test_run_eager_and_aot (void)
{
  fx_graph *g = parse (small_graph);
  fx_arena *arena = fx_arena_new ();
  fx_value *in = NULL;
  size_t n_in = 0;
  make_inputs (g, arena, &in, &n_in);
  fx_value *ref = NULL;
  size_t n_ref = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_interp_run (g, in, n_in, NULL, arena, &ref, &n_ref, &diag), ==, FX_OK);

  const char *const backends[] = { "eager", "aot_eager", "inductor", "inductor|eager" };
  for (size_t i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      fx_run_config cfg = { .backend = backends[i], .warmup = 1, .repeat = 5 };
      fx_run_result r;
      fx_compiled *c = NULL;
      fx_run_backend (g, in, n_in, &cfg, ref, NULL, n_ref, arena, NULL, NULL, &c, &r);
      g_test_message ("%s: %s %s", backends[i], fx_status_name (r.status), r.error);
      g_assert_cmpint (r.status, ==, FX_OK);
      g_assert_cmpint (r.verdict, ==, FX_VERDICT_PASS);
      g_assert_cmpint (r.repeat, ==, 5);
      g_assert_true (r.min_ms <= r.median_ms && r.median_ms <= r.max_ms);
      g_assert_true (r.compile_ms >= 0);
      g_assert_nonnull (c);
      g_assert_cmpuint (r.n_kernels, ==, c->n_kernels);
      if (strcmp (backends[i], "eager") == 0)
        g_assert_cmpuint (c->n_kernels, ==, 3);   /* one per op node */
      if (strcmp (backends[i], "inductor|eager") == 0)
        g_assert_nonnull (strstr (c->notes.data, "using 'inductor'"));
      /* released (compare does it after each column): the description stays, running is refused, not a crash */
      size_t n_kernels = c->n_kernels;
      fx_compiled_release_runtime (c);
      fx_compiled_release_runtime (c);
      g_assert_true (c->released);
      g_assert_cmpuint (c->n_kernels, ==, n_kernels);
      fx_value *after = NULL;
      size_t n_after = 0;
      fx_diag_clear (&diag);
      g_assert_cmpint (fx_compiled_run (c, in, n_in, arena, &after, &n_after, &diag), ==, FX_ERR_INVALID);
      g_assert_nonnull (strstr (diag.message, "after its runtime was released"));
      g_assert_cmpint (fx_compiled_profile (c, in, n_in, 1, &diag), ==, FX_ERR_INVALID);
      fx_run_result rr;
      fx_run_compiled (c, in, n_in, &cfg, ref, NULL, n_ref, arena, NULL, NULL, &rr);
      g_assert_cmpint (rr.status, ==, FX_ERR_INVALID);
      fx_compiled_free (c);
      fx_buf js;
      fx_buf_init (&js);
      fx_run_result_to_json (&r, &js);
      g_assert_nonnull (strstr (js.data, "\"accuracy\": \"pass\""));
      fx_buf_free (&js);
    }

  /* a wrong reference is caught */
  fx_value *bad_ref = fx_arena_alloc (arena, sizeof (fx_value));
  fx_tensor *t = fx_tensor_contiguous_copy (NULL, ref[0].u.t);
  float *p = fx_tensor_data (t);
  p[2] += 1.0f;
  bad_ref[0] = fx_value_tensor (t);
  fx_run_config cfg = { .backend = "eager", .repeat = 2 };
  fx_run_result r;
  fx_run_backend (g, in, n_in, &cfg, bad_ref, NULL, 1, arena, NULL, NULL, NULL, &r);
  g_assert_cmpint (r.status, ==, FX_OK);
  g_assert_cmpint (r.verdict, ==, FX_VERDICT_FAIL);
  g_assert_cmpfloat (fabs (r.max_abs_err - 1.0), <, 1e-5);
  fx_value_clear (&bad_ref[0]);

  /* unknown backend, bad option: errors in the result, nothing thrown */
  fx_run_config unk = { .backend = "nope", .repeat = 1 };
  fx_run_backend (g, in, n_in, &unk, ref, NULL, n_ref, arena, NULL, NULL, NULL, &r);
  g_assert_cmpint (r.status, ==, FX_ERR_NOT_FOUND);
  g_assert_nonnull (strstr (r.error, "Invalid backend: 'nope'"));
  fx_option_kv kv = { "cpp.threads", "x" };
  fx_run_config badopt = { .backend = "inductor", .options = &kv, .n_options = 1, .repeat = 1 };
  fx_run_backend (g, in, n_in, &badopt, ref, NULL, n_ref, arena, NULL, NULL, NULL, &r);
  g_assert_cmpint (r.status, ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (r.error, "Unexpected type of attr cpp.threads"));
  /* "eager:x": eager runs no other backend */
  fx_run_config sub = { .backend = "eager:inductor", .repeat = 1 };
  fx_run_backend (g, in, n_in, &sub, ref, NULL, n_ref, arena, NULL, NULL, NULL, &r);
  g_assert_cmpint (r.status, ==, FX_ERR_INVALID);

  clear_values (in, n_in);
  clear_values (ref, n_ref);
  fx_arena_free (arena);
  fx_graph_free (g);
}

static void
test_run_errors_located (void)
{
  /* an op the engine does not know: the error names the op and the node */
  const char *unknown =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4][1]cpu\"):\n"
    "        frob: \"f32[4][1]cpu\" = torch.ops.aten.frobnicate.default(arg0_1);  arg0_1 = None\n"
    "        return (frob,)\n";
  fx_graph *g = parse (unknown);
  fx_arena *arena = fx_arena_new ();
  fx_value *in = NULL;
  size_t n_in = 0;
  make_inputs (g, arena, &in, &n_in);
  fx_run_config cfg = { .backend = "eager", .repeat = 1 };
  fx_run_result r;
  fx_run_backend (g, in, n_in, &cfg, NULL, NULL, 0, arena, NULL, NULL, NULL, &r);
  g_test_message ("%s", r.error);
  g_assert_cmpint (r.status, !=, FX_OK);
  g_assert_nonnull (strstr (r.error, "frob"));
  g_assert_nonnull (strstr (r.error, "frobnicate"));
  clear_values (in, n_in);
  fx_graph_free (g);

  /* a shape mismatch at run time: located at the node */
  const char *mm =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[4, 3][3, 1]cpu\", arg1_1: \"f32[5, 2][2, 1]cpu\"):\n"
    "        mm: \"f32[4, 2][2, 1]cpu\" = torch.ops.aten.mm.default(arg0_1, arg1_1);  arg0_1 = arg1_1 = None\n"
    "        return (mm,)\n";
  g = parse (mm);
  make_inputs (g, arena, &in, &n_in);
  fx_run_backend (g, in, n_in, &cfg, NULL, NULL, 0, arena, NULL, NULL, NULL, &r);
  g_test_message ("%s", r.error);
  g_assert_cmpint (r.status, !=, FX_OK);
  g_assert_true (g_str_has_prefix (r.error, "node 'mm'"));
  clear_values (in, n_in);
  fx_graph_free (g);
  fx_arena_free (arena);
}

/* ---------------------------------------------------------------- composition */

static fx_status
failing_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  (void) req;
  (void) out;
  return fx_diag_set (diag, FX_ERR_BACKEND, "boom: this backend always fails");
}

static fx_status
failing_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
             size_t *n_outputs, fx_diag *diag)
{
  return fx_diag_set (diag, FX_ERR_BACKEND, "unreachable");
}

static const fx_backend failing_backend = {
  .name = "test_failing",
  .description = "always fails to compile",
  .compile = failing_compile,
  .run = failing_run,
};

static void
test_fallback (void)
{
  g_assert_cmpint (fx_backend_register (&failing_backend, NULL), ==, FX_OK);
  const char *const chain[] = { "test_failing", "aot_eager" };
  fx_backend *fb = fx_backend_new_fallback ("failing_then_aot", chain, 2, true);
  fx_graph *g = parse (small_graph);
  fx_arena *arena = fx_arena_new ();
  fx_value *in = NULL, *out = NULL;
  size_t n_in = 0, n_out = 0;
  make_inputs (g, arena, &in, &n_in);
  fx_compiled *c = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_backend_compile (fb, g, in, n_in, NULL, NULL, 0, &c, &diag), ==, FX_OK);
  g_assert_nonnull (strstr (c->notes.data, "'test_failing' failed: backend='test_failing' raised:\nboom"));
  g_assert_nonnull (strstr (c->notes.data, "using 'aot_eager'"));
  g_assert_cmpint (fx_compiled_run (c, in, n_in, arena, &out, &n_out, &diag), ==, FX_OK);
  g_assert_cmpuint (n_out, ==, 1);
  clear_values (out, n_out);
  fx_compiled_free (c);

  const char *const all_fail[] = { "test_failing" };
  fx_backend *fb2 = fx_backend_new_fallback ("only_failing", all_fail, 1, false);
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_backend_compile (fb2, g, in, n_in, NULL, NULL, 0, &c, &diag), ==, FX_ERR_BACKEND);
  g_assert_null (c);
  g_assert_nonnull (strstr (diag.message, "boom"));
  fx_backend_free_fallback (fb2);
  fx_backend_free_fallback (fb);
  clear_values (in, n_in);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- the accuracy policy on a GPU */

/* A backend whose one kernel is a GEMM on the device its user_data names, returning preset outputs. */
static fx_value gpu_policy_res;

static fx_status
gemm_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  fx_kernel_info *k = fx_compiled_add_kernel (out, "extern_kernels.mm", "extern", NULL, NULL);
  k->device = (fx_device) { self->user_data ? FX_DEVICE_CUDA : FX_DEVICE_CPU, self->user_data ? 0 : -1 };
  return FX_OK;
}

static fx_status
gemm_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
          size_t *n_outputs, fx_diag *diag)
{
  *outputs = fx_arena_alloc (arena, sizeof (fx_value));
  (*outputs)[0] = fx_value_dup (&gpu_policy_res, arena);
  *n_outputs = 1;
  return FX_OK;
}

static const fx_backend gemm_gpu_backend = {
  .name = "test_gemm_gpu", .compile = gemm_compile, .run = gemm_run, .user_data = (void *) 1,
};
static const fx_backend gemm_cpu_backend = {
  .name = "test_gemm_cpu", .compile = gemm_compile, .run = gemm_run,
};

/* PyTorch's reference is eager on the run's device; ours is the CPU interpreter, whose BLAS is closer to fp64 than
   cuBLAS. A GPU result of a graph with a GEMM is judged with same()'s largest multiplier: an RMSE 5x the
   reference's passes there, and fails on the CPU or without a GEMM (same()'s own multiplier). */
static void
test_gpu_gemm_accuracy (void)
{
  g_assert_cmpint (fx_backend_register (&gemm_gpu_backend, NULL), ==, FX_OK);
  g_assert_cmpint (fx_backend_register (&gemm_cpu_backend, NULL), ==, FX_OK);
  static const char mm_graph[] =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[16, 16][16, 1]cuda:0\", arg1_1: \"f32[16, 16][16, 1]cuda:0\"):\n"
    "        mm: \"f32[16, 16][16, 1]cuda:0\" = torch.ops.aten.mm.default(arg0_1, arg1_1)\n"
    "        return (mm,)\n";
  static const char relu_graph[] =
    "class <lambda>(torch.nn.Module):\n"
    "    def forward(self, arg0_1: \"f32[16, 16][16, 1]cuda:0\", arg1_1: \"f32[16, 16][16, 1]cuda:0\"):\n"
    "        relu: \"f32[16, 16][16, 1]cuda:0\" = torch.ops.aten.relu.default(arg0_1)\n"
    "        return (relu,)\n";
  int64_t sz[2] = { 16, 16 };
  fx_tensor *exact = fx_tensor_new (NULL, FX_DTYPE_F64, 2, sz);
  fx_tensor *ref = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
  fx_tensor *res = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
  for (int i = 0; i < 256; i++)
    {
      double v = 0.5 + (i % 7) * 0.25, sign = i % 2 ? 1 : -1;
      ((double *) fx_tensor_data (exact))[i] = v;
      ((float *) fx_tensor_data (ref))[i] = (float) (v + 1e-3 * sign);    /* RMSE 1e-3 */
      ((float *) fx_tensor_data (res))[i] = (float) (v + 5e-3 * sign);    /* RMSE 5e-3: not allclose at 1e-3 */
    }
  fx_value refv = fx_value_tensor (ref), exactv = fx_value_tensor (exact);
  gpu_policy_res = fx_value_tensor (res);
  static const struct
  {
    const char *graph, *backend;
    fx_verdict want;
  } cases[] = {
    { mm_graph, "test_gemm_gpu", FX_VERDICT_PASS },
    { mm_graph, "test_gemm_cpu", FX_VERDICT_FAIL },
    { relu_graph, "test_gemm_gpu", FX_VERDICT_FAIL },
  };
  for (size_t c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      fx_graph *g = parse (cases[c].graph);
      fx_arena *arena = fx_arena_new ();
      fx_value *in = NULL;
      size_t n_in = 0;
      make_inputs (g, arena, &in, &n_in);
      fx_run_config cfg = { .backend = cases[c].backend, .repeat = 1 };
      fx_run_result r;
      fx_run_backend (g, in, n_in, &cfg, &refv, &exactv, 1, arena, NULL, NULL, NULL, &r);
      g_assert_cmpint (r.status, ==, FX_OK);
      g_assert_cmpint (r.verdict, ==, cases[c].want);
      if (cases[c].want == FX_VERDICT_FAIL)
        g_assert_nonnull (strstr (r.accuracy_report, "multiplier: 3.0"));   /* same()'s for < 1000 elements */
      clear_values (in, n_in);
      fx_arena_free (arena);
      fx_graph_free (g);
    }
  fx_value_clear (&refv);
  fx_value_clear (&exactv);
  fx_value_clear (&gpu_policy_res);
}

/* ---------------------------------------------------------------- the contract's optional members */

static int generate_calls;

static fx_status
gen_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  /* the options arrive resolved, and the compiled object keeps the same set */
  g_assert_true (req->options == out->options);
  return FX_OK;
}

static fx_status
gen_generate (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  generate_calls++;
  fx_compiled_add_kernel (out, "k0", "pointwise", "c", "void k0 (void) {}");
  fx_compiled_add_artifact (out, "output_code.c", "code", "void k0 (void) {}\n", 18);
  fx_compiled_add_artifact (out, "../escape.txt", "text", "x", 1);
  fx_compiled_add_artifact (out, ".hidden", "text", "x", 1);
  return FX_OK;
}

static fx_status
gen_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
         size_t *n_outputs, fx_diag *diag)
{
  return FX_OK;
}

static int writer_calls;

static fx_status
gen_write (const fx_compiled *c, const char *dir, fx_diag *diag)
{
  writer_calls++;
  return FX_OK;
}

static const fx_backend gen_backend = {
  .name = "test_generates",
  .compile = gen_compile,
  .run = gen_run,
  .size = sizeof (fx_backend),
  .generate = gen_generate,
};

/* Built against a header that ended at `size`: whatever lies past it is not read (here: a generate member that an
   older plugin's struct would not have). */
static const fx_backend old_backend = {
  .name = "test_old_layout",
  .compile = gen_compile,
  .run = gen_run,
  .size = offsetof (fx_backend, size) + sizeof (size_t),
  .generate = gen_generate,
};

static void
test_contract (void)
{
  fx_graph *g = parse (small_graph);
  fx_arena *arena = fx_arena_new ();
  fx_value *in = NULL;
  size_t n_in = 0;
  make_inputs (g, arena, &in, &n_in);
  fx_diag diag;
  fx_diag_clear (&diag);

  /* generate: kernels and source, nothing built; run refuses it */
  fx_compiled *c = NULL;
  g_assert_cmpint (fx_backend_generate (&gen_backend, g, in, n_in, NULL, NULL, 0, &c, &diag), ==, FX_OK);
  g_assert_cmpint (generate_calls, ==, 1);
  g_assert_true (c->source_only);
  g_assert_cmpuint (c->n_kernels, ==, 1);
  fx_buf src;
  fx_buf_init (&src);
  g_assert_true (fx_compiled_format_source (c, &src));
  g_assert_cmpstr (src.data, ==, "void k0 (void) {}\n");
  fx_buf_free (&src);
  fx_value *out = NULL;
  size_t n_out = 0;
  g_assert_cmpint (fx_compiled_run (c, in, n_in, arena, &out, &n_out, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "only generated"));
  /* no profile member: unsupported, named */
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_compiled_profile (c, in, n_in, 1, &diag), ==, FX_ERR_INVALID);
  /* the default artifact writer: every artifact a file in dir, never a path out of it */
  g_autofree char *dir = g_dir_make_tmp ("fxwb-artifacts-XXXXXX", NULL);
  g_autofree char *sub = g_build_filename (dir, "debug", NULL);
  g_assert_cmpint (fx_compiled_write_artifacts (c, sub, &diag), ==, FX_OK);
  g_autofree char *code = g_build_filename (sub, "output_code.c", NULL);
  g_autofree char *escape = g_build_filename (dir, "escape.txt", NULL);
  g_autofree char *hidden = g_build_filename (sub, ".hidden", NULL);
  g_assert_true (g_file_test (code, G_FILE_TEST_IS_REGULAR));
  g_assert_false (g_file_test (escape, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (hidden, G_FILE_TEST_EXISTS));
  g_remove (code);
  g_rmdir (sub);
  /* a backend's own writer replaces the default one */
  fx_backend own = gen_backend;
  own.name = "test_writes";
  own.write_artifacts = gen_write;
  c->backend = &own;
  g_assert_cmpint (fx_compiled_write_artifacts (c, sub, &diag), ==, FX_OK);
  g_assert_cmpint (writer_calls, ==, 1);
  g_assert_false (g_file_test (sub, G_FILE_TEST_EXISTS));
  c->backend = &gen_backend;
  g_rmdir (dir);
  fx_compiled_free (c);

  /* a compiled object keeps the options it was resolved with */
  const fx_backend *ind = fx_backend_lookup ("inductor", NULL);
  fx_option_kv kv = { "cpp.threads", "1" };
  g_assert_cmpint (fx_backend_compile (ind, g, in, n_in, NULL, &kv, 1, &c, &diag), ==, FX_OK);
  g_assert_cmpint (fx_options_get_int (c->options, "cpp.threads", -7), ==, 1);
  g_assert_cmpstr (c->mode, ==, "default");
  /* inductor's profile member fills every generated kernel's time */
  g_assert_cmpint (fx_compiled_profile (c, in, n_in, 2, &diag), ==, FX_OK);
  for (size_t k = 0; k < c->n_kernels; k++)
    g_assert_cmpfloat (c->kernels[k].time_ms, >=, 0);
  fx_run_config cfg = { .backend = "inductor", .repeat = 2 };
  fx_run_result r;
  fx_value *ref = NULL;
  size_t n_ref = 0;
  g_assert_cmpint (fx_interp_run (g, in, n_in, NULL, arena, &ref, &n_ref, &diag), ==, FX_OK);
  fx_run_compiled (c, in, n_in, &cfg, ref, NULL, n_ref, arena, NULL, NULL, &r);
  g_assert_cmpint (r.status, ==, FX_OK);
  g_assert_cmpint (r.verdict, ==, FX_VERDICT_PASS);
  g_assert_cmpstr (r.options, ==, "{'cpp.threads': 1}");
  fx_compiled_free (c);

  /* an older layout: the member past its size is not there */
  g_assert_cmpint (fx_backend_register (&old_backend, &diag), ==, FX_OK);
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_backend_generate (&old_backend, g, in, n_in, NULL, NULL, 0, &c, &diag), ==,
                   FX_ERR_UNSUPPORTED);
  g_assert_null (c);
  g_assert_cmpint (generate_calls, ==, 1);
  /* a size that cannot be a layout of the struct */
  fx_backend tiny = gen_backend;
  tiny.name = "test_tiny";
  tiny.size = 8;
  g_assert_cmpint (fx_backend_register (&tiny, &diag), ==, FX_ERR_INVALID);

  clear_values (in, n_in);
  clear_values (ref, n_ref);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- plugins */

static void
test_plugins (void)
{
  const fx_plugin_error *errors = NULL;
  size_t n = fx_backend_load_plugins (false, &errors);
  /* the folder holds the good plugin and three broken ones */
  g_assert_cmpuint (n, ==, 3);
  gboolean noentry = FALSE, initfail = FALSE, garbage = FALSE;
  for (size_t i = 0; i < n; i++)
    {
      g_test_message ("%s: %s", errors[i].path, errors[i].message);
      if (strstr (errors[i].path, "noentry"))
        noentry = strstr (errors[i].message, "has no entry point fx_backend_plugin_init()") != NULL;
      if (strstr (errors[i].path, "initfail"))
        initfail = strstr (errors[i].message, "returned 3") != NULL;
      if (strstr (errors[i].path, "garbage"))
        garbage = strstr (errors[i].message, "cannot load backend plugin") != NULL;
    }
  g_assert_true (noentry && initfail && garbage);
  /* what the failing init registered was taken back */
  g_assert_null (fx_backend_lookup ("leaky", NULL));

  /* the good plugin works: prints the table and runs eagerly */
  const fx_backend *dp = fx_backend_lookup ("debug_print", NULL);
  g_assert_nonnull (dp);
  g_assert_true (fx_backend_has_tag (dp, "debug"));
  fx_graph *g = parse (small_graph);
  fx_arena *arena = fx_arena_new ();
  fx_value *in = NULL, *ref = NULL;
  size_t n_in = 0, n_ref = 0;
  make_inputs (g, arena, &in, &n_in);
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_interp_run (g, in, n_in, NULL, arena, &ref, &n_ref, &diag), ==, FX_OK);
  fx_option_kv kv = { "stream", "'stderr'" };
  fx_run_config cfg = { .backend = "debug_print", .options = &kv, .n_options = 1, .repeat = 2 };
  fx_run_result r;
  fx_run_backend (g, in, n_in, &cfg, ref, NULL, n_ref, arena, NULL, NULL, NULL, &r);
  g_assert_cmpint (r.status, ==, FX_OK);
  g_assert_cmpint (r.verdict, ==, FX_VERDICT_PASS);
  fx_option_kv bad = { "stream", "'printer'" };
  fx_run_config cfg2 = { .backend = "debug_print", .options = &bad, .n_options = 1, .repeat = 1 };
  fx_run_backend (g, in, n_in, &cfg2, ref, NULL, n_ref, arena, NULL, NULL, NULL, &r);
  g_assert_cmpint (r.status, ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (r.error, "stream must be"));

  /* loading one path explicitly: a missing file is a clear error */
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_backend_load_plugin ("/nonexistent/plugin.so", &diag), ==, FX_ERR_BACKEND);
  g_assert_nonnull (strstr (diag.message, "/nonexistent/plugin.so"));
  /* the same good plugin twice: no duplicate registration */
  g_autofree char *good = g_build_filename (plugin_dir, "a-good.so", NULL);
  g_assert_cmpint (fx_backend_load_plugin (good, &diag), ==, FX_OK);
  clear_values (in, n_in);
  clear_values (ref, n_ref);
  fx_arena_free (arena);
  fx_graph_free (g);
}

static void
copy_file (const char *from, const char *to)
{
  char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (from, &data, &len, NULL));
  g_assert_true (g_file_set_contents (to, data, (gssize) len, NULL));
  g_free (data);
}

static void
remove_dir (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_remove (p);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

/* A graph that writes into its input (AOTAutograd's copy_ epilogue): every column and the reference start from the
   same input values, as PyTorch's benchmarks clone inputs; the caller's inputs are left as they were. */
static void
test_run_mutating_inputs (void)
{
  fx_graph *g = parse ("class GraphModule(torch.nn.Module):\n"
                       "    def forward(self, x: \"f32[4, 8]\"):\n"
                       "        add: \"f32[4, 8]\" = torch.ops.aten.add.Tensor(x, 1)\n"
                       "        mul: \"f32[4, 8]\" = torch.ops.aten.mul.Tensor(add, 2)\n"
                       "        copy_: \"f32[4, 8]\" = torch.ops.aten.copy_.default(x, add);  x = add = None\n"
                       "        return (mul,)\n");
  fx_arena *arena = fx_arena_new ();
  fx_value *in = NULL;
  size_t n_in = 0;
  make_inputs (g, arena, &in, &n_in);
  fx_tensor *before = fx_tensor_contiguous_copy (NULL, in[0].u.t);
  fx_value *ref = NULL, *ref64 = NULL;
  size_t n_ref = 0, n_ref64 = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_interp_run_reference (g, in, n_in, arena, &ref, &n_ref, &ref64, &n_ref64, &diag), ==, FX_OK);
  const char *const backends[] = { "eager", "aot_eager", "inductor", "eager" };
  for (size_t i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      fx_run_config cfg = { .backend = backends[i], .warmup = 1, .repeat = 3 };
      fx_run_result r;
      fx_run_backend (g, in, n_in, &cfg, ref, ref64, n_ref, arena, NULL, NULL, NULL, &r);
      g_test_message ("%s: %s %s", backends[i], r.error, r.accuracy_report);
      g_assert_cmpint (r.status, ==, FX_OK);
      g_assert_cmpint (r.verdict, ==, FX_VERDICT_PASS);
      g_assert_cmpfloat (r.max_abs_err, ==, 0);
    }
  const float *a = fx_tensor_data (before), *b = fx_tensor_data (in[0].u.t);
  for (int k = 0; k < 32; k++)
    g_assert_cmpfloat (a[k], ==, b[k]);

  /* Each backend's call writes the input, as AOTAutograd's epilogue does: x becomes x + 1 (inductor compiles the
     copy_ as an extra output written back; max_autotune's timing runs write copies, not the example inputs). */
  const char *const writers[] = { "eager", "aot_eager", "inductor", "inductor" };
  for (size_t i = 0; i < G_N_ELEMENTS (writers); i++)
    {
      fx_value *x = fx_inputs_for_run (g, in, n_in);
      g_assert_nonnull (x);
      fx_option_kv tune = { "max_autotune", "True" };
      fx_compiled *c = NULL;
      g_assert_cmpint (fx_backend_compile (fx_backend_lookup (writers[i], NULL), g, x, n_in, NULL, &tune, i == 3,
                                           &c, &diag), ==, FX_OK);
      const float *xv = fx_tensor_data (x[0].u.t);
      for (int k = 0; k < 32; k++)
        g_assert_cmpfloat (xv[k], ==, a[k]);            /* compiling did not write it */
      fx_value *res = NULL;
      size_t n_res = 0;
      g_assert_cmpint (fx_compiled_run (c, x, n_in, arena, &res, &n_res, &diag), ==, FX_OK);
      g_assert_cmpuint (n_res, ==, 1);                  /* the graph's own output only */
      const float *mv = fx_tensor_data (res[0].u.t);
      for (int k = 0; k < 32; k++)
        {
          g_assert_cmpfloat (fabsf (xv[k] - (a[k] + 1)), <, 1e-6f);
          g_assert_cmpfloat (fabsf (mv[k] - (a[k] + 1) * 2), <, 1e-5f);
        }
      clear_values (res, n_res);
      fx_compiled_free (c);
      fx_inputs_for_run_free (x, n_in);
    }
  fx_tensor_unref (before);
  clear_values (ref, n_ref);
  clear_values (ref64, n_ref64);
  clear_values (in, n_in);
  fx_arena_free (arena);
  fx_graph_free (g);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* A plugin folder with the example plugin and broken ones, set before the registry first initializes. */
  plugin_dir = g_dir_make_tmp ("fxwb-plugins-XXXXXX", NULL);
  g_assert_nonnull (plugin_dir);
  const char *good = g_getenv ("FXWB_TEST_PLUGIN_GOOD");
  const char *noentry = g_getenv ("FXWB_TEST_PLUGIN_NOENTRY");
  const char *initfail = g_getenv ("FXWB_TEST_PLUGIN_INITFAIL");
  g_assert_nonnull (good);
  g_autofree char *p1 = g_build_filename (plugin_dir, "a-good.so", NULL);
  g_autofree char *p2 = g_build_filename (plugin_dir, "b-noentry.so", NULL);
  g_autofree char *p3 = g_build_filename (plugin_dir, "c-initfail.so", NULL);
  g_autofree char *p4 = g_build_filename (plugin_dir, "d-garbage.so", NULL);
  copy_file (good, p1);
  copy_file (noentry, p2);
  copy_file (initfail, p3);
  g_assert_true (g_file_set_contents (p4, "this is not an ELF file\n", -1, NULL));
  g_setenv ("FXWB_BACKEND_PATH", plugin_dir, TRUE);
  g_setenv ("XDG_DATA_HOME", plugin_dir, TRUE);   /* no per-user plugins of the machine */
  /* Nothing registers lazily: before the entry point's one call the registry is empty. */
  looked_up_before_init = fx_backend_lookup ("eager", NULL) != NULL || fx_backend_list (true, NULL, 0) != 0;
  fx_backends_init ();

  g_test_add_func ("/registry/explicit-init", test_explicit_init);
  g_test_add_func ("/registry/omp-spin", test_omp_spin);
  g_test_add_func ("/registry/list-lookup", test_list_lookup);
  g_test_add_func ("/registry/options-modes", test_options);
  g_test_add_func ("/registry/run-eager-aot-inductor", test_run_eager_and_aot);
  g_test_add_func ("/registry/run-errors-located", test_run_errors_located);
  g_test_add_func ("/registry/fallback", test_fallback);
  g_test_add_func ("/registry/gpu-gemm-accuracy", test_gpu_gemm_accuracy);
  g_test_add_func ("/registry/contract", test_contract);
  g_test_add_func ("/registry/plugins", test_plugins);
  g_test_add_func ("/registry/run-mutating-inputs", test_run_mutating_inputs);
  int rc = g_test_run ();
  remove_dir (plugin_dir);
  g_free (plugin_dir);
  return rc;
}
