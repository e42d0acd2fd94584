/* test-torch-backend.c: the torch backend against the interpreter on fixture graphs (eager through the worker), its
   bench hook, exact layouts and dtypes both ways, torch.compile on a torch without it, a fake torch.compile for the
   output-code plumbing, crashing/hanging/missing workers, exceptions in the graph, and graphs it refuses to run. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx-torch-backend.h"
#include "fx-torch-impl.h"
#include "fx/ops.h"
#include "fx/pyparse.h"

/* ---------------------------------------------------------------- registry shims
   fx_compiled_add_kernel & co. belong to the backend registry (backends/registry). Where the registry is linked,
   its definitions win over these weak ones. */

__attribute__ ((weak)) fx_kernel_info *
fx_compiled_add_kernel (fx_compiled *c, const char *name, const char *kind, const char *language,
                        const char *source)
{
  fx_kernel_info *k = fx_arena_alloc (c->arena, sizeof (fx_kernel_info) * (c->n_kernels + 1));
  if (c->n_kernels)
    memcpy (k, c->kernels, sizeof (fx_kernel_info) * c->n_kernels);
  c->kernels = k;
  fx_kernel_info *ki = &k[c->n_kernels++];
  memset (ki, 0, sizeof *ki);
  ki->name = fx_arena_strdup (c->arena, name);
  ki->kind = fx_arena_strdup (c->arena, kind);
  ki->language = fx_arena_strdup (c->arena, language);
  ki->source = fx_arena_strdup (c->arena, source);
  ki->time_ms = -1;
  return ki;
}

__attribute__ ((weak)) void
fx_kernel_add_node (fx_compiled *c, fx_kernel_info *k, const char *node_name)
{
  const char **nodes = fx_arena_alloc (c->arena, sizeof (char *) * (k->n_nodes + 1));
  if (k->n_nodes)
    memcpy (nodes, k->nodes, sizeof (char *) * k->n_nodes);
  nodes[k->n_nodes++] = fx_arena_strdup (c->arena, node_name);
  k->nodes = nodes;
}

__attribute__ ((weak)) void
fx_compiled_add_artifact (fx_compiled *c, const char *name, const char *kind, const char *text, size_t len)
{
  fx_artifact *a = fx_arena_alloc (c->arena, sizeof (fx_artifact) * (c->n_artifacts + 1));
  if (c->n_artifacts)
    memcpy (a, c->artifacts, sizeof (fx_artifact) * c->n_artifacts);
  c->artifacts = a;
  fx_artifact *ai = &a[c->n_artifacts++];
  ai->name = fx_arena_strdup (c->arena, name);
  ai->kind = fx_arena_strdup (c->arena, kind);
  ai->text = fx_arena_strndup (c->arena, text ? text : "", len);
  ai->len = len;
}

/* ---------------------------------------------------------------- helpers */

static const char *
fixtures_dir (void)
{
  const char *d = g_getenv ("FX_FIXTURES");
  return d ? d : "tests/fixtures";
}

/* A resolved option set as the registry would give it: the declared defaults, then "k=v" overrides (explicit). */
static fx_options *
make_options (fx_arena *arena, const char *const *overrides)
{
  const fx_backend *b = &fx_torch_backend;
  fx_options *o = fx_arena_alloc (arena, sizeof *o);
  o->n = b->n_options;
  o->items = fx_arena_alloc (arena, sizeof (fx_option_value) * o->n);
  o->explicit_set = fx_arena_alloc (arena, sizeof (bool) * o->n);
  for (size_t i = 0; i < o->n; i++)
    {
      const fx_option_decl *d = &b->options[i];
      fx_option_value *v = &o->items[i];
      v->name = d->name;
      v->type = d->type;
      const char *text = d->default_text;
      for (const char *const *ov = overrides; ov && *ov; ov++)
        {
          size_t n = strlen (d->name);
          if (strncmp (*ov, d->name, n) == 0 && (*ov)[n] == '=')
            {
              text = *ov + n + 1;
              o->explicit_set[i] = TRUE;
            }
        }
      switch (d->type)
        {
        case FX_OPTION_BOOL:
          v->b = strcmp (text, "True") == 0;
          break;
        case FX_OPTION_INT:
          v->i = g_ascii_strtoll (text, NULL, 10);
          break;
        case FX_OPTION_FLOAT:
          v->f = g_ascii_strtod (text, NULL);
          break;
        case FX_OPTION_STRING:
          {
            size_t n = strlen (text);
            if (n >= 2 && (text[0] == '\'' || text[0] == '"') && text[n - 1] == text[0])
              v->s = fx_arena_strndup (arena, text + 1, n - 2);
            else
              v->s = fx_arena_strdup (arena, text);
            break;
          }
        case FX_OPTION_TYPE_COUNT:
        default:
          g_assert_not_reached ();
        }
    }
  return o;
}

static void
compiled_free (fx_compiled *c)
{
  if (c == NULL)
    return;
  if (c->backend->release && c->impl)   /* as fx_compiled_free: release only frees an impl */
    c->backend->release (c);
  fx_buf_free (&c->notes);
  fx_arena_free (c->arena);
  g_free (c);
}

/* Compiles with the torch backend; NULL on failure (diag filled). */
static fx_compiled *
torch_compile (const fx_graph *g, const fx_value *inputs, size_t n, const char *mode, const char *const *overrides,
               fx_status *status, fx_diag *diag)
{
  fx_compiled *c = g_new0 (fx_compiled, 1);
  c->backend = &fx_torch_backend;
  c->arena = fx_arena_new ();
  fx_buf_init (&c->notes);
  fx_compile_request req;
  memset (&req, 0, sizeof req);
  req.graph = g;
  req.example_inputs = inputs;
  req.n_inputs = n;
  req.mode = mode ? mode : "default";
  req.options = make_options (c->arena, overrides);
  req.device.type = FX_DEVICE_CPU;
  req.device.index = -1;
  fx_diag_clear (diag);
  *status = fx_torch_backend.compile (&fx_torch_backend, &req, c, diag);
  if (*status != FX_OK)
    {
      compiled_free (c);
      return NULL;
    }
  return c;
}

static fx_graph *
parse_code (const char *code)
{
  fx_graph *g = NULL;
  fx_diag diag;
  if (fx_parse_fx_code (code, strlen (code), "test.py", &g, &diag) != FX_OK)
    g_error ("parse: %s", diag.message);
  fx_graph_resolve_ops (g);
  return g;
}

static void
clear_values (fx_value *v, size_t n)
{
  for (size_t i = 0; i < n && v; i++)
    fx_value_clear (&v[i]);
}

static gboolean have_torch = FALSE;

static gboolean
need_torch (void)
{
  if (!have_torch)
    g_test_skip ("no python with torch (set FXWB_PYTHON)");
  return have_torch;
}

static const fx_artifact *
find_artifact (const fx_compiled *c, const char *name)
{
  for (size_t i = 0; i < c->n_artifacts; i++)
    if (strcmp (c->artifacts[i].name, name) == 0)
      return &c->artifacts[i];
  return NULL;
}

/* ---------------------------------------------------------------- eager on fixture graphs */

static void
test_eager_fixture (gconstpointer data)
{
  const char *name = data;
  if (!need_torch ())
    return;
  /* a fixture graph (scaled), or a path under the fixtures (at its own sizes) */
  gboolean is_path = strchr (name, '/') != NULL;
  char *path = is_path ? g_strdup_printf ("%s/%s", fixtures_dir (), name)
                       : g_strdup_printf ("%s/graphs/%s.py", fixtures_dir (), name);
  fx_graph *graph = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_file (path, &graph, &diag) != FX_OK)
    g_error ("%s: %s", path, diag.message);
  fx_graph_resolve_ops (graph);
  if (!is_path)
    fx_graph_scale_inputs (graph, 64, 64);
  fx_arena *arena = fx_arena_new ();
  fx_value *inputs = NULL, *ref = NULL, *res = NULL;
  size_t n_inputs = 0, n_ref = 0, n_res = 0;
  if (fx_inputs_make (graph, FX_INPUTS_SPEC, NULL, 7, NULL, arena, &inputs, &n_inputs, &diag) != FX_OK)
    g_error ("%s: inputs: %s", name, diag.message);
  if (fx_interp_run (graph, inputs, n_inputs, NULL, arena, &ref, &n_ref, &diag) != FX_OK)
    g_error ("%s: interpreter: %s", name, diag.message);

  fx_status st;
  fx_compiled *c = torch_compile (graph, inputs, n_inputs, NULL, NULL, &st, &diag);
  if (c == NULL)
    g_error ("%s: compile: %s", name, diag.message);
  if (c->backend->run (c, inputs, n_inputs, arena, &res, &n_res, &diag) != FX_OK)
    g_error ("%s: run: %s", name, diag.message);
  g_assert_cmpuint (n_res, ==, n_ref);
  fx_same_opts opts;
  fx_same_opts_init (&opts);
  fx_same_report report;
  if (!fx_same_values (ref, res, NULL, n_ref, &opts, &report))
    g_error ("%s: torch eager differs from the interpreter: %s (max abs err %g)", name, report.message,
             report.max_abs_err);
  for (size_t i = 0; i < n_res; i++)
    if (res[i].kind == FX_VALUE_TENSOR && ref[i].kind == FX_VALUE_TENSOR)
      {
        g_assert_cmpint (res[i].u.t->dtype, ==, ref[i].u.t->dtype);
        g_assert_cmpint (res[i].u.t->ndim, ==, ref[i].u.t->ndim);
        for (int d = 0; d < res[i].u.t->ndim; d++)
          g_assert_cmpint (res[i].u.t->sizes[d], ==, ref[i].u.t->sizes[d]);
      }

  /* one python kernel per call_function node, with its code line and node */
  size_t calls = fx_graph_count_op (graph, FX_OP_CALL_FUNCTION);
  g_assert_cmpuint (c->n_kernels, ==, calls);
  for (size_t k = 0; k < c->n_kernels; k++)
    {
      const fx_kernel_info *ki = &c->kernels[k];
      g_assert_cmpstr (ki->kind, ==, "python");
      g_assert_cmpuint (ki->n_nodes, ==, 1);
      g_assert_nonnull (fx_graph_find_node (graph, ki->nodes[0]));
      g_assert_nonnull (ki->source);
      g_assert_true (g_str_has_prefix (ki->source, ki->nodes[0]));
    }
  g_assert_nonnull (find_artifact (c, "fx_graph_code.py"));
  g_assert_nonnull (strstr (c->notes.data, "torch 1.") ? c->notes.data : strstr (c->notes.data, "torch "));

  clear_values (res, n_res);
  clear_values (ref, n_ref);
  clear_values (inputs, n_inputs);
  compiled_free (c);
  fx_arena_free (arena);
  fx_graph_free (graph);
  g_free (path);
}

/* The bench hook: repeat timings measured in the worker, the last outputs, per-node times for eager kernels. */
static void
test_eager_bench (void)
{
  if (!need_torch ())
    return;
  char *path = g_strdup_printf ("%s/graphs/pointwise_chain.aten.0.py", fixtures_dir ());
  fx_graph *graph = NULL;
  fx_diag diag;
  if (fx_parse_fx_file (path, &graph, &diag) != FX_OK)
    g_error ("%s", diag.message);
  fx_graph_resolve_ops (graph);
  fx_graph_scale_inputs (graph, 256, 64);
  fx_arena *arena = fx_arena_new ();
  fx_value *inputs = NULL, *ref = NULL, *res = NULL;
  size_t n_inputs = 0, n_ref = 0, n_res = 0;
  g_assert_cmpint (fx_inputs_make (graph, FX_INPUTS_SPEC, NULL, 3, NULL, arena, &inputs, &n_inputs, &diag), ==, FX_OK);
  g_assert_cmpint (fx_interp_run (graph, inputs, n_inputs, NULL, arena, &ref, &n_ref, &diag), ==, FX_OK);
  fx_status st;
  fx_compiled *c = torch_compile (graph, inputs, n_inputs, NULL, NULL, &st, &diag);
  if (c == NULL)
    g_error ("compile: %s", diag.message);
  g_assert_nonnull (c->backend->bench);
  double times[5] = { -1, -1, -1, -1, -1 };
  size_t peak = 123;
  if (c->backend->bench (c, inputs, n_inputs, 1, 5, arena, times, &res, &n_res, &peak, &diag) != FX_OK)
    g_error ("bench: %s", diag.message);
  for (int i = 0; i < 5; i++)
    g_assert_cmpfloat (times[i], >, 0.0);
  g_assert_cmpuint (peak, ==, 0);   /* CPU: unknown */
  fx_same_opts opts;
  fx_same_opts_init (&opts);
  fx_same_report report;
  g_assert_true (fx_same_values (ref, res, NULL, n_ref, &opts, &report));
  size_t timed = 0;
  for (size_t k = 0; k < c->n_kernels; k++)
    timed += c->kernels[k].time_ms > 0;
  g_assert_cmpuint (timed, ==, c->n_kernels);
  clear_values (res, n_res);
  /* repeat 0 is refused, and the worker still answers after it */
  g_assert_cmpint (c->backend->bench (c, inputs, n_inputs, 0, 0, arena, times, &res, &n_res, &peak, &diag), ==,
                   FX_ERR_INVALID);
  clear_values (ref, n_ref);
  clear_values (inputs, n_inputs);
  compiled_free (c);
  fx_arena_free (arena);
  fx_graph_free (graph);
  g_free (path);
}

/* Strides and dtypes travel exactly: a transposed view in, its transpose out (strides kept), bf16/f16 bits,
   bools, int64 beyond 2^53, an expanded (stride 0) input and a zero-size tensor. */
static void
test_layout_dtypes (void)
{
  if (!need_torch ())
    return;
  fx_graph *g = parse_code ("def forward(self, a, b, c, d, e, f, z):\n"
                            "    t = torch.ops.aten.t.default(a)\n"
                            "    neg = torch.ops.aten.neg.default(b)\n"
                            "    logical_not = torch.ops.aten.logical_not.default(c)\n"
                            "    add = torch.ops.aten.add.Tensor(d, 1)\n"
                            "    clone = torch.ops.aten.clone.default(e)\n"
                            "    mul = torch.ops.aten.mul.Tensor(f, 2)\n"
                            "    return (t, neg, logical_not, add, clone, mul, z, b)\n");
  int64_t s23[2] = { 2, 3 }, s32[2] = { 3, 2 }, s4[1] = { 4 }, s05[2] = { 0, 5 };
  fx_tensor *base = fx_tensor_new (NULL, FX_DTYPE_F32, 2, s32);
  for (int i = 0; i < 6; i++)
    fx_tensor_set_f64 (base, i, i + 0.5);
  int64_t tstr[2] = { 1, 2 };
  fx_tensor *a = fx_tensor_as_strided (base, 2, s23, tstr, 0);   /* a[i][j] = base[j][i] */
  fx_tensor *b = fx_tensor_new (NULL, FX_DTYPE_BF16, 1, s4);
  fx_tensor *h = fx_tensor_new (NULL, FX_DTYPE_F16, 1, s4);
  fx_tensor *c = fx_tensor_new (NULL, FX_DTYPE_BOOL, 1, s4);
  fx_tensor *d = fx_tensor_new (NULL, FX_DTYPE_I64, 1, s4);
  for (int i = 0; i < 4; i++)
    {
      ((uint16_t *) fx_tensor_data (b))[i] = (uint16_t) (0x3f81 + i);   /* not representable in fewer bits */
      ((uint16_t *) fx_tensor_data (h))[i] = (uint16_t) (0x3c01 + i);
      ((uint8_t *) fx_tensor_data (c))[i] = (uint8_t) (i & 1);
      ((int64_t *) fx_tensor_data (d))[i] = ((int64_t) 1 << 60) + i;
    }
  int64_t ex_sizes[2] = { 3, 4 }, ex_strides[2] = { 0, 1 };
  fx_tensor *row = fx_tensor_new (NULL, FX_DTYPE_F64, 1, s4);
  for (int i = 0; i < 4; i++)
    fx_tensor_set_f64 (row, i, i * 1.25);
  fx_tensor *f = fx_tensor_as_strided (row, 2, ex_sizes, ex_strides, 0);
  fx_tensor *empty = fx_tensor_new (NULL, FX_DTYPE_F32, 2, s05);
  fx_value inputs[7] = { fx_value_tensor (a), fx_value_tensor (b), fx_value_tensor (c), fx_value_tensor (d),
                         fx_value_tensor (h), fx_value_tensor (f), fx_value_tensor (empty) };
  fx_diag diag;
  fx_status st;
  fx_compiled *comp = torch_compile (g, inputs, 7, NULL, NULL, &st, &diag);
  if (comp == NULL)
    g_error ("compile: %s", diag.message);
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  if (comp->backend->run (comp, inputs, 7, arena, &res, &n_res, &diag) != FX_OK)
    g_error ("run: %s", diag.message);
  g_assert_cmpuint (n_res, ==, 8);
  /* t(a) is base viewed contiguously again: torch returns strides (3, 1)... of a's transpose, i.e. base's layout */
  const fx_tensor *t = res[0].u.t;
  g_assert_cmpint (t->ndim, ==, 2);
  g_assert_cmpint (t->sizes[0], ==, 3);
  g_assert_cmpint (t->sizes[1], ==, 2);
  g_assert_cmpint (t->strides[0], ==, 2);
  g_assert_cmpint (t->strides[1], ==, 1);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (fx_tensor_get_f64 (t, i), ==, i + 0.5);
  /* bf16: neg flips the sign bit only; the last output is b itself, bit for bit */
  g_assert_cmpint (res[1].u.t->dtype, ==, FX_DTYPE_BF16);
  g_assert_cmpint (res[7].u.t->dtype, ==, FX_DTYPE_BF16);
  for (int i = 0; i < 4; i++)
    {
      g_assert_cmpuint (((uint16_t *) fx_tensor_data (res[1].u.t))[i], ==, (uint16_t) (0xbf81 + i));
      g_assert_cmpuint (((uint16_t *) fx_tensor_data (res[7].u.t))[i], ==, (uint16_t) (0x3f81 + i));
      g_assert_cmpuint (((uint16_t *) fx_tensor_data (res[4].u.t))[i], ==, (uint16_t) (0x3c01 + i));
      g_assert_cmpuint (((uint8_t *) fx_tensor_data (res[2].u.t))[i], ==, (uint8_t) !(i & 1));
      g_assert_cmpint (((int64_t *) fx_tensor_data (res[3].u.t))[i], ==, ((int64_t) 1 << 60) + i + 1);
    }
  g_assert_cmpint (res[2].u.t->dtype, ==, FX_DTYPE_BOOL);
  g_assert_cmpint (res[4].u.t->dtype, ==, FX_DTYPE_F16);
  /* f: the expanded input arrived expanded (mul keeps the values) */
  g_assert_cmpint (res[5].u.t->dtype, ==, FX_DTYPE_F64);
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < 4; i++)
      g_assert_cmpfloat (fx_tensor_get_f64 (res[5].u.t, r * 4 + i), ==, i * 2.5);
  g_assert_cmpint (res[6].u.t->ndim, ==, 2);
  g_assert_cmpint (fx_tensor_numel (res[6].u.t), ==, 0);
  g_assert_cmpint (res[6].u.t->sizes[1], ==, 5);
  clear_values (res, n_res);
  clear_values (inputs, 7);
  fx_tensor_unref (base);
  fx_tensor_unref (row);
  compiled_free (comp);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* Scalars in and out (an int, inf as a float), a 0-d tensor, an int computed by torch. */
static void
test_scalars (void)
{
  if (!need_torch ())
    return;
  fx_graph *g = parse_code ("def forward(self, x, n, s, y):\n"
                            "    mul = torch.ops.aten.mul.Tensor(x, s)\n"
                            "    sym_size = torch.ops.aten.sym_size(x, 0)\n"
                            "    add = torch.ops.aten.add.Tensor(y, n)\n"
                            "    return (mul, sym_size, n, s, add, None)\n");
  int64_t sz[1] = { 3 };
  fx_tensor *x = fx_tensor_new (NULL, FX_DTYPE_F32, 1, sz);
  fx_tensor *y = fx_tensor_new (NULL, FX_DTYPE_F64, 0, sz);
  fx_tensor_fill_f64 (x, 1.5);
  fx_tensor_set_f64 (y, 0, 0.25);
  fx_value inputs[4] = { fx_value_tensor (x), fx_value_int (-7), fx_value_float (INFINITY), fx_value_tensor (y) };
  fx_diag diag;
  fx_status st;
  fx_compiled *c = torch_compile (g, inputs, 4, NULL, NULL, &st, &diag);
  if (c == NULL)
    g_error ("compile: %s", diag.message);
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  if (c->backend->run (c, inputs, 4, arena, &res, &n_res, &diag) != FX_OK)
    g_error ("run: %s", diag.message);
  g_assert_cmpuint (n_res, ==, 6);
  g_assert_cmpint (res[0].kind, ==, FX_VALUE_TENSOR);
  for (int i = 0; i < 3; i++)
    g_assert_true (isinf (fx_tensor_get_f64 (res[0].u.t, i)));
  g_assert_cmpint (res[1].kind, ==, FX_VALUE_INT);
  g_assert_cmpint (res[1].u.i, ==, 3);
  g_assert_cmpint (res[2].kind, ==, FX_VALUE_INT);
  g_assert_cmpint (res[2].u.i, ==, -7);
  g_assert_cmpint (res[3].kind, ==, FX_VALUE_FLOAT);
  g_assert_true (isinf (res[3].u.f) && res[3].u.f > 0);
  g_assert_cmpint (res[4].u.t->ndim, ==, 0);
  g_assert_cmpint (res[4].u.t->dtype, ==, FX_DTYPE_F64);
  g_assert_cmpfloat (fx_tensor_get_f64 (res[4].u.t, 0), ==, -6.75);
  g_assert_cmpint (res[5].kind, ==, FX_VALUE_NONE);
  clear_values (res, n_res);
  clear_values (inputs, 4);
  compiled_free (c);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- errors */

static fx_graph *
small_graph (void)
{
  return parse_code ("def forward(self, x):\n"
                     "    sin = torch.ops.aten.sin.default(x)\n"
                     "    return (sin,)\n");
}

static fx_value
small_input (void)
{
  int64_t sz[1] = { 4 };
  fx_tensor *x = fx_tensor_new (NULL, FX_DTYPE_F32, 1, sz);
  fx_tensor_fill_f64 (x, 0.5);
  return fx_value_tensor (x);
}

/* torch.compile on a torch without it: the clear error, nothing left running. */
static void
test_no_torch_compile (void)
{
  if (!need_torch ())
    return;
  fx_graph *g = small_graph ();
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;
  const char *const inductor[] = { "backend='inductor'", NULL };
  fx_compiled *c = torch_compile (g, &in, 1, NULL, inductor, &st, &diag);
  if (c != NULL)
    {
      /* a torch >= 2.0 compiled it: nothing to check here */
      g_test_message ("%s", c->notes.data);
      compiled_free (c);
      g_test_skip ("this torch has torch.compile");
    }
  else
    {
      g_test_message ("%s", diag.message);
      g_assert_cmpint (st, ==, FX_ERR_UNSUPPORTED);
      g_assert_nonnull (strstr (diag.message, "has no torch.compile (needs PyTorch >= 2.0); use backend='eager'"));
      g_assert_true (g_str_has_prefix (diag.message, "torch 1."));
      g_assert_nonnull (strstr (diag.message, " at /"));
    }
  /* a torch.compile mode with plain eager */
  c = torch_compile (g, &in, 1, "max-autotune", NULL, &st, &diag);
  g_assert_null (c);
  g_assert_cmpint (st, ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "mode 'max-autotune'"));
  fx_value_clear (&in);
  fx_graph_free (g);
}

typedef struct crash_case
{
  const char *crash;        /* _crash_for_test */
  const char *fails_in;     /* "compile", "run", "bench" */
  const char *expect;       /* in the message */
} crash_case;

static const crash_case crash_cases[] = {
  { "exit-load", "compile", "exited with status 3 during compile" },
  { "segv-bench", "bench", "killed by signal 11 (Segmentation fault) during bench" },
  { "hang-run", "run", "did not answer run within 1.5 s" },
};

/* A worker that dies, raises or hangs: a failed compile/run/bench with its stderr, never a dead or hung test. */
static void
test_crash (gconstpointer data)
{
  const crash_case *cc = data;
  if (!need_torch ())
    return;
  fx_graph *g = small_graph ();
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;
  char *crash = g_strdup_printf ("_crash_for_test='%s'", cc->crash);
  const char *const opts[] = { crash, "timeout=1.5", NULL };
  gint64 t0 = g_get_monotonic_time ();
  fx_compiled *c = torch_compile (g, &in, 1, NULL, opts, &st, &diag);
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  if (strcmp (cc->fails_in, "compile") == 0)
    g_assert_null (c);
  else
    {
      if (c == NULL)
        g_error ("compile: %s", diag.message);
      if (strcmp (cc->fails_in, "run") == 0)
        st = c->backend->run (c, &in, 1, arena, &res, &n_res, &diag);
      else
        {
          double times[3];
          size_t peak;
          st = c->backend->bench (c, &in, 1, 1, 3, arena, times, &res, &n_res, &peak, &diag);
        }
      g_assert_null (res);
    }
  double secs = (double) (g_get_monotonic_time () - t0) / 1e6;
  g_test_message ("%s (%.1f s)", diag.message, secs);
  g_assert_cmpint (st, ==, FX_ERR_BACKEND);
  if (strstr (diag.message, cc->expect) == NULL)
    g_error ("'%s' not in: %s", cc->expect, diag.message);
  /* the worker's stderr is in the message (the runner wrote this line before dying); a Python exception brings its
     traceback instead */
  if (strncmp (cc->crash, "raise", 5) == 0)
    g_assert_nonnull (strstr (diag.message, "_crash"));
  else
    g_assert_nonnull (strstr (diag.message, "fxwb test: crashing the worker"));
  g_assert_cmpfloat (secs, <, 30.0);
  if (c != NULL && strncmp (cc->crash, "raise", 5) != 0)
    {
      /* the dead worker is not called again */
      g_assert_cmpint (c->backend->run (c, &in, 1, arena, &res, &n_res, &diag), ==, FX_ERR_BACKEND);
      g_assert_nonnull (strstr (diag.message, "no longer running"));
    }
  else if (c != NULL)
    {
      /* an exception leaves the worker alive: the next call fails the same way and it still answers */
      g_assert_cmpint (c->backend->run (c, &in, 1, arena, &res, &n_res, &diag), ==, FX_ERR_BACKEND);
      g_assert_nonnull (strstr (diag.message, "RuntimeError"));
    }
  compiled_free (c);
  fx_arena_free (arena);
  fx_value_clear (&in);
  fx_graph_free (g);
  g_free (crash);
}

/* The worker dies between two requests: the next request is written into a pipe nobody reads (SIGPIPE, which
   must not kill this process) and fails with the worker's exit status. */
static void
test_dead_pipe (void)
{
  if (!need_torch ())
    return;
  fx_graph *g = small_graph ();
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;
  const char *const opts[] = { "_crash_for_test='exit-reply'", NULL };
  fx_compiled *c = torch_compile (g, &in, 1, NULL, opts, &st, &diag);
  if (c == NULL)
    g_error ("compile: %s", diag.message);
  g_usleep (G_USEC_PER_SEC / 2);   /* let it exit */
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  st = c->backend->run (c, &in, 1, arena, &res, &n_res, &diag);
  g_test_message ("%s", diag.message);
  g_assert_cmpint (st, ==, FX_ERR_BACKEND);
  g_assert_nonnull (strstr (diag.message, "exited with status 3 during run"));
  g_assert_nonnull (strstr (diag.message, "crashing the worker (exit) after a reply"));
  compiled_free (c);
  fx_arena_free (arena);
  fx_value_clear (&in);
  fx_graph_free (g);
}

/* Interpreters that are missing, not Python, or Python without torch: clear errors naming them. */
static void
test_bad_python (void)
{
  fx_graph *g = small_graph ();
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;

  const char *const missing[] = { "python='/nonexistent/bin/python3'", NULL };
  g_assert_null (torch_compile (g, &in, 1, NULL, missing, &st, &diag));
  g_test_message ("%s", diag.message);
  g_assert_cmpint (st, ==, FX_ERR_NOT_FOUND);
  g_assert_nonnull (strstr (diag.message, "python interpreter '/nonexistent/bin/python3' not found"));

  /* $FXWB_PYTHON when the option is not given */
  char *old_env = g_strdup (g_getenv ("FXWB_PYTHON"));
  g_setenv ("FXWB_PYTHON", "/nonexistent/fxwb-env-python", TRUE);
  g_assert_null (torch_compile (g, &in, 1, NULL, NULL, &st, &diag));
  if (old_env)
    g_setenv ("FXWB_PYTHON", old_env, TRUE);
  else
    g_unsetenv ("FXWB_PYTHON");
  g_free (old_env);
  g_assert_cmpint (st, ==, FX_ERR_NOT_FOUND);
  g_assert_nonnull (strstr (diag.message, "'/nonexistent/fxwb-env-python' not found"));

  const char *const on_path[] = { "python='no-such-python-fxwb'", NULL };
  g_assert_null (torch_compile (g, &in, 1, NULL, on_path, &st, &diag));
  g_assert_cmpint (st, ==, FX_ERR_NOT_FOUND);
  g_assert_nonnull (strstr (diag.message, "'no-such-python-fxwb' not found"));

  const char *const directory[] = { "python='/tmp'", NULL };
  g_assert_null (torch_compile (g, &in, 1, NULL, directory, &st, &diag));
  g_assert_cmpint (st, ==, FX_ERR_NOT_FOUND);
  g_assert_nonnull (strstr (diag.message, "is not executable"));

  if (g_file_test ("/bin/false", G_FILE_TEST_IS_EXECUTABLE))
    {
      const char *const fals[] = { "python='/bin/false'", NULL };
      g_assert_null (torch_compile (g, &in, 1, NULL, fals, &st, &diag));
      g_test_message ("%s", diag.message);
      g_assert_cmpint (st, ==, FX_ERR_BACKEND);
      g_assert_nonnull (strstr (diag.message, "torch worker (/bin/false) exited with status 1"));
    }

  /* a Python whose torch does not import (a torch.py that raises shadows the real one) */
  if (have_torch)
    {
      char *dir = g_dir_make_tmp ("fxwb-notorch-XXXXXX", NULL);
      char *mod = g_build_filename (dir, "torch.py", NULL);
      g_assert_true (g_file_set_contents (mod, "raise ImportError('this torch is broken on purpose')\n", -1, NULL));
      char *old = g_strdup (g_getenv ("PYTHONPATH"));
      g_setenv ("PYTHONPATH", dir, TRUE);
      g_assert_null (torch_compile (g, &in, 1, NULL, NULL, &st, &diag));
      if (old)
        g_setenv ("PYTHONPATH", old, TRUE);
      else
        g_unsetenv ("PYTHONPATH");
      g_test_message ("%s", diag.message);
      g_assert_cmpint (st, ==, FX_ERR_NOT_FOUND);
      g_assert_nonnull (strstr (diag.message, "has no usable torch"));
      g_assert_nonnull (strstr (diag.message, "this torch is broken on purpose"));
      g_unlink (mod);
      g_rmdir (dir);
      g_free (mod);
      g_free (dir);
      g_free (old);
    }
  fx_value_clear (&in);
  fx_graph_free (g);
}

/* An exception inside the graph: the run fails with torch's message and the traceback's graph line. */
static void
test_graph_exception (void)
{
  if (!need_torch ())
    return;
  fx_graph *g = parse_code ("def forward(self, x, y):\n"
                            "    add = torch.ops.aten.add.Tensor(x, y)\n"
                            "    return (add,)\n");
  int64_t s3[1] = { 3 }, s4[1] = { 4 };
  fx_value in[2] = { fx_value_tensor (fx_tensor_new (NULL, FX_DTYPE_F32, 1, s3)),
                     fx_value_tensor (fx_tensor_new (NULL, FX_DTYPE_F32, 1, s3)) };
  fx_diag diag;
  fx_status st;
  fx_compiled *c = torch_compile (g, in, 2, NULL, NULL, &st, &diag);
  if (c == NULL)
    g_error ("compile: %s", diag.message);
  fx_value_clear (&in[1]);
  in[1] = fx_value_tensor (fx_tensor_new (NULL, FX_DTYPE_F32, 1, s4));
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  st = c->backend->run (c, in, 2, arena, &res, &n_res, &diag);
  g_test_message ("%s", diag.message);
  g_assert_cmpint (st, ==, FX_ERR_BACKEND);
  g_assert_nonnull (strstr (diag.message, "RuntimeError: The size of tensor a (3) must match"));
  g_assert_nonnull (strstr (diag.message, "<fxwb graph>"));
  /* the worker survives an exception: the right inputs run again */
  fx_value_clear (&in[1]);
  in[1] = fx_value_tensor (fx_tensor_new (NULL, FX_DTYPE_F32, 1, s3));
  g_assert_cmpint (c->backend->run (c, in, 2, arena, &res, &n_res, &diag), ==, FX_OK);
  g_assert_cmpuint (n_res, ==, 1);
  clear_values (res, n_res);
  clear_values (in, 2);
  compiled_free (c);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* A torch-level graph as Dynamo writes it: call_method, operator calls printed inline, torch functions,
   torch.nn.functional, a non-inline operator through its namespace name, getitem. */
static void
test_torch_level (void)
{
  if (!need_torch ())
    return;
  fx_graph *g = parse_code ("def forward(self, L_x_ : torch.Tensor):\n"
                            "    l_x_ = L_x_\n"
                            "    sum_1 = l_x_.sum(dim = 1)\n"
                            "    add = sum_1 + 1\n"
                            "    relu = torch.nn.functional.relu(add, inplace = False)\n"
                            "    abs_1 = torch.abs(relu)\n"
                            "    getitem = abs_1[0]\n"
                            "    size = l_x_.size(1)\n"
                            "    floordiv = size // 2\n"
                            "    return (getitem, floordiv)\n");
  int64_t sz[2] = { 2, 5 };
  fx_value in = fx_value_tensor (fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz));
  fx_tensor_fill_f64 (in.u.t, -1.0);
  fx_diag diag;
  fx_status st;
  fx_compiled *c = torch_compile (g, &in, 1, NULL, NULL, &st, &diag);
  if (c == NULL)
    g_error ("compile: %s", diag.message);
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  if (c->backend->run (c, &in, 1, arena, &res, &n_res, &diag) != FX_OK)
    g_error ("run: %s", diag.message);
  g_assert_cmpuint (n_res, ==, 2);
  g_assert_cmpint (res[0].u.t->ndim, ==, 0);
  g_assert_cmpfloat (fx_tensor_get_f64 (res[0].u.t, 0), ==, 0.0);   /* relu(-5 + 1) */
  g_assert_cmpint (res[1].kind, ==, FX_VALUE_INT);
  g_assert_cmpint (res[1].u.i, ==, 2);
  /* kernels for call_method nodes too */
  gboolean has_sum = FALSE;
  for (size_t k = 0; k < c->n_kernels; k++)
    has_sum |= strcmp (c->kernels[k].name, "eager:sum_1") == 0
               && strstr (c->kernels[k].source, "l_x_.sum(dim = 1)") != NULL;
  g_assert_true (has_sum);
  clear_values (res, n_res);
  compiled_free (c);

  /* module attributes are not stored with a graph: a clear error naming the attribute */
  fx_graph *ga = parse_code ("def forward(self, x):\n"
                             "    _tensor_constant0 = self._tensor_constant0\n"
                             "    add = torch.ops.aten.add.Tensor(x, _tensor_constant0)\n"
                             "    return (add,)\n");
  g_assert_null (torch_compile (ga, &in, 1, NULL, NULL, &st, &diag));
  g_test_message ("%s", diag.message);
  g_assert_cmpint (st, ==, FX_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (diag.message, "module attribute '_tensor_constant0'"));
  g_assert_cmpstr (diag.node, ==, "_tensor_constant0");
  fx_graph_free (ga);
  fx_value_clear (&in);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* option device: the graph runs there (inputs moved, outputs back on the CPU); a torch without CUDA says so. */
static void
test_device_option (void)
{
  if (!need_torch ())
    return;
  fx_graph *g = small_graph ();
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;
  const char *const opts[] = { "device='cuda'", NULL };
  fx_compiled *c = torch_compile (g, &in, 1, NULL, opts, &st, &diag);
  if (c == NULL)
    {
      g_test_message ("%s", diag.message);
      g_assert_cmpint (st, ==, FX_ERR_NO_DEVICE);
      g_assert_nonnull (strstr (diag.message, "cannot use CUDA (torch.cuda.is_available() is False)"));
    }
  else
    {
      fx_arena *arena = fx_arena_new ();
      fx_value *res = NULL;
      size_t n_res = 0;
      g_assert_cmpint (c->backend->run (c, &in, 1, arena, &res, &n_res, &diag), ==, FX_OK);
      g_assert_cmpint (res[0].u.t->storage->device.type, ==, FX_DEVICE_CPU);
      g_assert_cmpfloat (fabs (fx_tensor_get_f64 (res[0].u.t, 0) - sin (0.5)), <, 1e-6);
      clear_values (res, n_res);
      fx_arena_free (arena);
      compiled_free (c);
    }
  fx_value_clear (&in);
  fx_graph_free (g);
}

/* Child graph modules (print_readable's nested classes) are built as submodules and called. */
static void
test_child_module (void)
{
  if (!need_torch ())
    return;
  fx_graph *g = parse_code ("class GraphModule(torch.nn.Module):\n"
                            "    def forward(self, x: \"f32[4]\"):\n"
                            "        sub = self.sub(x);  x = None\n"
                            "        return (sub,)\n"
                            "\n"
                            "    class sub(torch.nn.Module):\n"
                            "        def forward(self, x: \"f32[4]\"):\n"
                            "            sin: \"f32[4]\" = torch.ops.aten.sin.default(x);  x = None\n"
                            "            return sin\n");
  g_assert_cmpuint (g->n_children, ==, 1);
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;
  fx_compiled *c = torch_compile (g, &in, 1, NULL, NULL, &st, &diag);
  if (c == NULL)
    g_error ("compile: %s", diag.message);
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  if (c->backend->run (c, &in, 1, arena, &res, &n_res, &diag) != FX_OK)
    g_error ("run: %s", diag.message);
  g_assert_cmpuint (n_res, ==, 1);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (fabs (fx_tensor_get_f64 (res[0].u.t, i) - sin (0.5)), <, 1e-6);
  clear_values (res, n_res);
  compiled_free (c);
  fx_arena_free (arena);
  fx_value_clear (&in);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- security: nothing from a graph runs as code

   Every case is an attempt to run `touch DIR/pwned` (or to reach something that could). The C check must refuse it
   before any process starts (python='/nonexistent' proves none did: a started worker fails with FX_ERR_NOT_FOUND);
   the worker, handed the same graph as JSON directly, must refuse it too; and the file must never appear. */

static char *pwn_dir;

static char *
pwn_file (void)
{
  return g_build_filename (pwn_dir, "pwned", NULL);
}

/* "%P" in a case's text stands for the command that would create the file. */
static char *
with_payload (const char *text)
{
  char *cmd = g_strdup_printf ("touch %s/pwned", pwn_dir);
  GString *s = g_string_new (NULL);
  for (const char *p = text; *p; p++)
    if (p[0] == '%' && p[1] == 'P')
      {
        g_string_append (s, cmd);
        p++;
      }
    else
      g_string_append_c (s, *p);
  g_free (cmd);
  return g_string_free (s, FALSE);
}

static void
assert_not_pwned (const char *what)
{
  char *f = pwn_file ();
  if (g_file_test (f, G_FILE_TEST_EXISTS))
    g_error ("%s: %s was created: the graph ran code", what, f);
  g_free (f);
}

typedef struct
{
  const char *code;     /* FX code; %P: the command */
  const char *node;     /* the node the refusal names */
  const char *expect;   /* in the message */
} refused_code_case;

static const refused_code_case refused_code_cases[] = {
  { "    system = torch.os.system('%P')\n", "system", "refuses to call 'torch.os.system'" },
  { "    ev = torch.__builtins__.eval(\"__import__('os').system('%P')\")\n", "ev", "refuses to call 'torch.__builtins__" },
  { "    g = getattr(x, '__class__')\n", "g", "refuses to call the builtin 'getattr'" },
  { "    e = eval(\"__import__('os').system('%P')\")\n", "e", "refuses to call" },
  { "    ex = exec(\"import os; os.system('%P')\")\n", "ex", "refuses to call" },
  { "    imp = __import__('os')\n", "imp", "refuses to call" },
  { "    op = builtins.open('%P', 'w')\n", "op", "refuses to call the builtin 'open'" },
  { "    c = x.__class__()\n", "c", "refuses to call the method '__class__'" },
  { "    r = x.__reduce__()\n", "r", "refuses to call the method '__reduce__'" },
  { "    s = x.system('%P')\n", "s", "refuses to call the method 'system'" },
  { "    t = x.type('os.system')\n", "t", "refuses to call the method 'type'" },
  { "    ap = x.apply_(x)\n", "ap", "refuses to call the method 'apply_'" },
  { "    ag = operator.attrgetter('__class__')\n", "ag", "refuses to call operator.attrgetter" },
  { "    mc = operator.methodcaller('system', '%P')\n", "mc", "refuses to call operator.methodcaller" },
  { "    mc = _operator.methodcaller('system', '%P')\n", "mc", "refuses to call operator.methodcaller" },
  { "    cl = operator.call(x)\n", "cl", "refuses to call operator.call" },
  { "    ts = torch._C._get_tracing_state()\n", "ts", "refuses to call 'torch._C._get_tracing_state'" },
  { "    jit = torch._C._jit_pass_inline(x)\n", "jit", "refuses to call 'torch._C._jit_pass_inline'" },
  { "    ll = torch.ops.load_library('/tmp/evil.so')\n", "ll", "refuses to call 'torch.ops.load_library'" },
  { "    hub = torch.hub.load('evil/repo', 'model')\n", "hub", "refuses to call 'torch.hub.load'" },
  { "    ld = torch.load('/tmp/evil.pt')\n", "ld", "refuses to call 'torch.load'" },
  { "    sub = torch.Tensor.__subclasses__()\n", "sub", "refuses to call 'torch.Tensor.__subclasses__'" },
  { "    o = torch.ops.os.system('%P')\n", "o", "refuses to call torch.ops.os.system" },
  { "    o = torch.ops.aten.__class__(x)\n", "o", "refuses to call torch.ops.aten.__class__" },
  { "    o = torch.ops.aten.add.Tensor.__call__(x, x)\n", "o", "refuses to call torch.ops.aten.add.Tensor.__call__" },
  { "    o = torch.ops.aten.not_an_op.default(x)\n", "o", "only aten and prims ops that are in the engine's op table" },
  { "    d = self.__dict__\n", "d", "refuses the attribute path '__dict__'" },
  { "    m = self.__class__(x)\n", "m", "refuses the attribute path '__class__'" },
  { "    w = self.weight\n", "w", "module attribute 'weight' (get_attr)" },
};

static fx_graph *
refused_code_graph (const refused_code_case *rc)
{
  char *body = with_payload (rc->code);
  char *code = g_strdup_printf ("def forward(self, x):\n%s    sin = torch.ops.aten.sin.default(x)\n    return (sin,)\n",
                                body);
  fx_graph *g = NULL;
  fx_diag diag;
  if (fx_parse_fx_code (code, strlen (code), "evil.py", &g, &diag) != FX_OK)
    g_error ("parse %s: %s", code, diag.message);
  fx_graph_resolve_ops (g);
  g_free (code);
  g_free (body);
  return g;
}

/* A graph built through the API, for names and strings no FX code parses to. */
typedef enum
{
  EVIL_TARGET,          /* a function target that is code */
  EVIL_KWARG,           /* a keyword name that is code */
  EVIL_NODE_NAME,       /* a node name that is code */
  EVIL_PLACEHOLDER,     /* a placeholder target that is code */
  EVIL_GLOBAL,          /* an argument naming os.system */
  EVIL_GLOBAL_TORCH_OS, /* an argument naming torch.os */
  EVIL_SYM,             /* a symbolic expression that is code */
  EVIL_METHOD_ON_STR,   /* an allowed method called on a string constant */
  EVIL_COUNT
} evil_kind;

static const char *const evil_expect[EVIL_COUNT] = {
  "refuses to call 'torch.abs(x)); __import__",
  "keyword 'x=__import__('os').system(",
  "the name is not a plain Python identifier",
  "is not a plain Python identifier",
  "refuses to pass the Python object 'os.system'",
  "refuses to pass the Python object 'torch.os'",
  "the symbolic expression '__import__",
  "has no node to call it on",
};

static fx_graph *
evil_graph (evil_kind kind, const char **node_name)
{
  char *cmd = with_payload ("__import__('os').system('%P')");
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, kind == EVIL_PLACEHOLDER ? fx_arena_printf (g->arena, "x=%s", cmd) : "x");
  fx_arg a[2] = { fx_arg_node (x), fx_arg_none () };
  fx_node *call = NULL;
  switch (kind)
    {
    case EVIL_TARGET:
      call = fx_graph_call_function (g, fx_target_function (fx_arena_printf (g->arena, "torch.abs(x)); %s; (x", cmd)),
                                     a, 1, NULL, 0);
      break;
    case EVIL_KWARG:
      {
        fx_kwarg kw = { fx_arena_printf (g->arena, "x=%s,y", cmd), fx_arg_int (1) };
        call = fx_graph_call_function (g, fx_target_function ("torch.abs"), a, 1, &kw, 1);
        break;
      }
    case EVIL_NODE_NAME:
      /* (fx_graph_create_node makes a name of it; a graph read from elsewhere may still carry one) */
      call = fx_graph_call_function (g, fx_target_function ("torch.abs"), a, 1, NULL, 0);
      call->name = fx_arena_printf (g->arena, "a = %s", cmd);
      break;
    case EVIL_PLACEHOLDER:
      call = fx_graph_call_function (g, fx_target_function ("torch.abs"), a, 1, NULL, 0);
      break;
    case EVIL_GLOBAL:
      a[1] = fx_arg_global ("os.system");
      call = fx_graph_call_function (g, fx_target_function ("torch.add"), a, 2, NULL, 0);
      break;
    case EVIL_GLOBAL_TORCH_OS:
      a[1] = fx_arg_global ("torch.os");
      call = fx_graph_call_function (g, fx_target_function ("torch.add"), a, 2, NULL, 0);
      break;
    case EVIL_SYM:
      a[1] = fx_arg_sym (cmd);
      call = fx_graph_call_function (g, fx_target_op ("aten.view.default"), a, 2, NULL, 0);
      break;
    case EVIL_METHOD_ON_STR:
      a[0] = fx_arg_str (cmd);
      call = fx_graph_create_node (g, FX_OP_CALL_METHOD, fx_target_str ("split"), a, 1, NULL, 0, "sp");
      break;
    case EVIL_COUNT:
    default:
      g_assert_not_reached ();
    }
  fx_graph_output (g, fx_arg_node (call));
  *node_name = kind == EVIL_PLACEHOLDER ? x->name : call->name;
  g_free (cmd);
  return g;
}

static void
check_refusal (const char *what, fx_compiled *c, fx_status st, const fx_diag *diag, const char *node,
               const char *expect)
{
  g_test_message ("%s -> %s", what, diag->message);
  g_assert_null (c);
  if (st != FX_ERR_INVALID && st != FX_ERR_UNSUPPORTED)
    g_error ("%s: status %d (%s), not a refusal", what, st, diag->message);
  if (strstr (diag->message, expect) == NULL)
    g_error ("%s: '%s' not in: %s", what, expect, diag->message);
  g_assert_cmpstr (diag->node, ==, node);
  char *named = g_strdup_printf ("node '%s'", node);
  g_assert_true (g_str_has_prefix (diag->message, named));
  g_free (named);
  assert_not_pwned (what);
}

/* The C check: refused before any worker starts, the message naming the node. */
static void
test_security_c_check (void)
{
  /* the payload works when it does run: these tests can see it */
  {
    char *cmd = with_payload ("%P");
    char *f = pwn_file ();
    g_assert_true (g_spawn_command_line_sync (cmd, NULL, NULL, NULL, NULL));
    g_assert_true (g_file_test (f, G_FILE_TEST_EXISTS));
    g_unlink (f);
    g_free (f);
    g_free (cmd);
  }
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;
  const char *const no_python[] = { "python='/nonexistent'", NULL };
  for (size_t i = 0; i < G_N_ELEMENTS (refused_code_cases); i++)
    {
      fx_graph *g = refused_code_graph (&refused_code_cases[i]);
      fx_compiled *c = torch_compile (g, &in, 1, NULL, no_python, &st, &diag);
      check_refusal (refused_code_cases[i].code, c, st, &diag, refused_code_cases[i].node,
                     refused_code_cases[i].expect);
      /* torch.compile backends take the same path */
      const char *const inductor[] = { "python='/nonexistent'", "backend='inductor'", NULL };
      c = torch_compile (g, &in, 1, NULL, inductor, &st, &diag);
      check_refusal (refused_code_cases[i].code, c, st, &diag, refused_code_cases[i].node,
                     refused_code_cases[i].expect);
      fx_graph_free (g);
    }
  for (int k = 0; k < EVIL_COUNT; k++)
    {
      const char *node = NULL;
      fx_graph *g = evil_graph ((evil_kind) k, &node);
      fx_compiled *c = torch_compile (g, &in, 1, NULL, no_python, &st, &diag);
      check_refusal (evil_expect[k], c, st, &diag, node, evil_expect[k]);
      fx_graph_free (g);
    }
  /* the same kind of graph with allowed targets passes the check and reaches the (missing) interpreter */
  {
    fx_graph *g = parse_code ("def forward(self, x):\n"
                              "    abs_1 = torch.abs(x)\n"
                              "    view = abs_1.view(-1)\n"
                              "    relu = torch.nn.functional.relu(view, inplace = False)\n"
                              "    linear = torch._C._nn.linear(relu, relu)\n"
                              "    add = operator.add(relu, 1)\n"
                              "    add_ = torch.ops.aten.add_.Tensor(add, add)\n"
                              "    sym_size = torch.ops.aten.sym_size(x, 0)\n"
                              "    full = torch.ops.aten.full.default([2], math.inf, dtype = torch.float32)\n"
                              "    return (add_, linear, sym_size, full)\n");
    g_assert_null (torch_compile (g, &in, 1, NULL, no_python, &st, &diag));
    g_test_message ("allowed graph -> %s", diag.message);
    g_assert_cmpint (st, ==, FX_ERR_NOT_FOUND);
    fx_graph_free (g);
  }
  fx_value_clear (&in);
}

/* The allowlist's pieces on their own: what the op table rule admits. */
static void
test_security_op_rule (void)
{
  g_assert_true (fx_torch_op_allowed ("aten.add.Tensor"));
  g_assert_true (fx_torch_op_allowed ("torch.ops.aten.add.Tensor"));
  g_assert_true (fx_torch_op_allowed ("aten.add_.Tensor"));     /* in place */
  g_assert_true (fx_torch_op_allowed ("aten.sym_size"));        /* packet with an .int overload in the table */
  g_assert_true (fx_torch_op_allowed ("aten.abs"));
  g_assert_true (fx_torch_op_allowed ("prims.convert_element_type.default"));
  g_assert_false (fx_torch_op_allowed ("aten.add.NoSuchOverload"));
  g_assert_false (fx_torch_op_allowed ("aten.add__.Tensor"));
  g_assert_false (fx_torch_op_allowed ("aten.__getattr__.default"));
  g_assert_false (fx_torch_op_allowed ("aten.add.Tensor.__call__"));
  g_assert_false (fx_torch_op_allowed ("aten"));
  g_assert_false (fx_torch_op_allowed ("os.system"));
  g_assert_false (fx_torch_op_allowed ("higher_order.cond"));
  g_assert_false (fx_torch_op_allowed ("aten.add.Tensor)); import os; (x"));
  g_assert_true (fx_torch_function_allowed ("torch.nn.functional.relu"));
  g_assert_false (fx_torch_function_allowed ("torch.nn.functional"));
  g_assert_false (fx_torch_function_allowed ("torch.os.system"));
  g_assert_false (fx_torch_function_allowed ("torch.nn.functional.relu.__globals__"));
  g_assert_true (fx_torch_operator_allowed ("getitem"));
  g_assert_false (fx_torch_operator_allowed ("attrgetter"));
  g_assert_true (fx_torch_method_allowed ("view"));
  g_assert_false (fx_torch_method_allowed ("__class__"));
  g_assert_false (fx_torch_method_allowed ("type"));
  /* no entry of the lists is a dunder name or has a dunder part */
  for (int k = 0; k < FX_TORCH_ALLOW_KIND_COUNT; k++)
    {
      const char *list[512];
      size_t n = fx_torch_allow_names ((fx_torch_allow_kind) k, list, G_N_ELEMENTS (list));
      g_assert_cmpuint (n, <=, G_N_ELEMENTS (list));
      g_assert_cmpuint (n, >, 0);
      for (size_t i = 0; i < n; i++)
        {
          g_assert_null (strstr (list[i], "__"));
          g_assert_null (strstr (list[i], "builtins"));
        }
    }
}

static void check_allowlist_same (fx_torch_worker *w);

/* ---- the worker on its own: handed malicious JSON directly (no C check in front), it refuses too */

static fx_torch_worker *
start_worker (void)
{
  fx_torch_worker *w = NULL;
  fx_diag diag;
  if (fx_torch_worker_start (fx_torch_pick_python (""), 120.0, &w, &diag) != FX_OK)
    g_error ("worker: %s", diag.message);
  return w;
}

/* {"op": "load"} of a graph whose nodes are x (placeholder), NODE, output (NODE_NAME,) */
static fx_status
load_json_graph (fx_torch_worker *w, const char *node_json, const char *out_name, fx_diag *diag)
{
  char *graph = g_strdup_printf ("{\"format\": \"fxwb-graph\", \"version\": 1, \"nodes\": ["
                                 "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": {\"kind\": \"str\", "
                                 "\"name\": \"x\"}}, %s, "
                                 "{\"name\": \"output\", \"op\": \"output\", \"target\": {\"kind\": \"str\", "
                                 "\"name\": \"output\"}, \"args\": [{\"tuple\": [{\"node\": \"%s\"}]}]}]}",
                                 node_json, out_name);
  json_object *gj = json_tokener_parse (graph);
  if (gj == NULL)
    g_error ("bad test JSON: %s", graph);
  fx_value in = small_input ();
  json_object *v = NULL;
  w->file_seq = 0;
  g_assert_cmpint (fx_torch_value_to_json (w, &in, &v, diag), ==, FX_OK);
  fx_value_clear (&in);
  json_object *inputs = json_object_new_array ();
  json_object_array_add (inputs, v);
  json_object *req = json_object_new_object ();
  json_object_object_add (req, "op", json_object_new_string ("load"));
  json_object_object_add (req, "graph", gj);
  json_object_object_add (req, "inputs", inputs);
  json_object_object_add (req, "backend", json_object_new_string ("eager"));
  json_object_object_add (req, "device", json_object_new_string (""));
  json_object *reply = NULL;
  fx_status st = fx_torch_worker_call (w, req, "compile", &reply, diag);
  json_object_put (req);
  if (reply)
    json_object_put (reply);
  g_free (graph);
  return st;
}

typedef struct
{
  const char *node_json;  /* %P: the command */
  const char *node;
  const char *expect;
} worker_case;

#define CALL(name, kind, target, args) \
  "{\"name\": \"" name "\", \"op\": \"call_function\", \"target\": {\"kind\": \"" kind "\", \"name\": \"" target \
  "\"}, \"args\": [" args "]}"
#define METHOD(name, target, args) \
  "{\"name\": \"" name "\", \"op\": \"call_method\", \"target\": {\"kind\": \"str\", \"name\": \"" target \
  "\"}, \"args\": [" args "]}"

static const worker_case worker_cases[] = {
  { CALL ("system", "function", "torch.os.system", "\"%P\""), "system", "refuses to call 'torch.os.system'" },
  { CALL ("system", "function", "os.system", "\"%P\""), "system", "refuses to call 'os.system'" },
  { CALL ("ev", "function", "torch.__builtins__.eval", "\"__import__('os').system('%P')\""), "ev", "refuses" },
  { CALL ("g", "builtin", "getattr", "{\"node\": \"x\"}, \"__class__\""), "g", "refuses to call the builtin 'getattr'" },
  { CALL ("e", "builtin", "eval", "\"__import__('os').system('%P')\""), "e", "refuses to call the builtin 'eval'" },
  { CALL ("ex", "builtin", "exec", "\"import os; os.system('%P')\""), "ex", "refuses to call the builtin 'exec'" },
  { CALL ("imp", "builtin", "__import__", "\"os\""), "imp", "refuses to call the builtin '__import__'" },
  { CALL ("ag", "operator", "attrgetter", "\"__class__\""), "ag", "refuses to call operator.attrgetter" },
  { CALL ("mc", "function", "_operator.methodcaller", "\"system\", \"%P\""), "mc", "refuses to call operator.methodcaller" },
  { CALL ("o", "op", "os.system", "\"%P\""), "o", "refuses to call torch.ops.os.system" },
  { CALL ("o", "op", "aten.__class__", "{\"node\": \"x\"}"), "o", "refuses to call torch.ops.aten.__class__" },
  { CALL ("o", "op", "aten.add.Tensor.__call__", "{\"node\": \"x\"}, {\"node\": \"x\"}"), "o", "refuses" },
  { CALL ("ts", "function", "torch._C._get_tracing_state", ""), "ts", "refuses to call 'torch._C._get_tracing_state'" },
  { METHOD ("c", "__class__", "{\"node\": \"x\"}"), "c", "refuses to call the method '__class__'" },
  { METHOD ("r", "__reduce__", "{\"node\": \"x\"}"), "r", "refuses to call the method '__reduce__'" },
  { METHOD ("s", "system", "{\"node\": \"x\"}, \"%P\""), "s", "refuses to call the method 'system'" },
  { METHOD ("t", "type", "{\"node\": \"x\"}, \"os.system\""), "t", "refuses to call the method 'type'" },
  { METHOD ("sp", "split", "\"%P\""), "sp", "has no node to call it on" },
  { "{\"name\": \"d\", \"op\": \"get_attr\", \"target\": {\"kind\": \"str\", \"name\": \"__dict__\"}}", "d",
    "refuses the attribute path '__dict__'" },
  { "{\"name\": \"m\", \"op\": \"call_module\", \"target\": {\"kind\": \"str\", \"name\": \"__class__.__init__\"}, "
    "\"args\": [{\"node\": \"x\"}]}", "m", "refuses the attribute path '__class__.__init__'" },
  { "{\"name\": \"w\", \"op\": \"get_attr\", \"target\": {\"kind\": \"str\", \"name\": \"weight\"}}", "w",
    "module attribute 'weight'" },
  { "{\"name\": \"k\", \"op\": \"call_function\", \"target\": {\"kind\": \"function\", \"name\": \"torch.abs\"}, "
    "\"args\": [{\"node\": \"x\"}], \"kwargs\": [[\"x=__import__('os').system('%P'),y\", 1]]}", "k",
    "is not a plain Python identifier" },
  { CALL ("a = __import__('os').system('%P')", "function", "torch.abs", "{\"node\": \"x\"}"),
    "a = __import__('os').system('%P')", "the name is not a plain Python identifier" },
  { CALL ("gl", "function", "torch.add", "{\"node\": \"x\"}, {\"global\": \"os.system\"}"), "gl",
    "refuses to pass the Python object 'os.system'" },
  { CALL ("dt", "op", "aten.full.default", "{\"list\": [2]}, {\"float\": \"1.0\"}, {\"dtype\": \"os\"}"), "dt", "'os' is not a torch dtype" },
  { CALL ("dt", "op", "aten.full.default", "{\"list\": [2]}, {\"float\": \"1.0\"}, {\"dtype\": \"__builtins__\"}"), "dt",
    "'__builtins__' is not a torch dtype" },
  { CALL ("ly", "op", "aten.full.default", "{\"list\": [2]}, {\"float\": \"1.0\"}, {\"layout\": \"_C\"}"), "ly", "'_C' is not a torch layout" },
  { CALL ("sy", "op", "aten.view.default", "{\"node\": \"x\"}, {\"sym\": \"__import__('os').system('%P')\"}"), "sy",
    "the symbolic expression" },
  { CALL ("fl", "op", "aten.mul.Tensor", "{\"node\": \"x\"}, {\"float\": \"__import__('os').system('%P')\"}"), "fl",
    "is not a number" },
  { CALL ("nr", "op", "aten.sin.default", "{\"node\": \"__class__\"}"), "nr", "which is no earlier node" },
  { "{\"name\": \"p\", \"op\": \"placeholder\", \"target\": {\"kind\": \"str\", \"name\": "
    "\"x=__import__('os').system('%P')\"}}", "p", "is not a plain Python identifier" },
  { "{\"name\": \"p\", \"op\": \"placeholder\", \"target\": {\"kind\": \"str\", \"name\": \"p\"}, "
    "\"default\": {\"global\": \"os.system\"}}", "p", "refuses to pass the Python object 'os.system'" },
};

static void
test_security_worker (void)
{
  if (!need_torch ())
    return;
  fx_torch_worker *w = start_worker ();
  fx_diag diag;
  for (size_t i = 0; i < G_N_ELEMENTS (worker_cases); i++)
    {
      char *node_json = with_payload (worker_cases[i].node_json);
      char *node = with_payload (worker_cases[i].node);
      char *out_name = g_strdup (node);
      if (strchr (out_name, '\'') != NULL || strchr (out_name, ' ') != NULL)
        {
          /* the output refers to x: the bad name must be refused on its own */
          g_free (out_name);
          out_name = g_strdup ("x");
        }
      /* JSON string escapes: the test payloads hold no quotes or backslashes beyond those written above */
      fx_status st = load_json_graph (w, node_json, out_name, &diag);
      g_test_message ("%s -> %s", node_json, diag.message);
      g_assert_cmpint (st, ==, FX_ERR_BACKEND);
      char *named = g_strdup_printf ("node '%s'", node);
      if (strstr (diag.message, named) == NULL)
        g_error ("'%s' not in: %s", named, diag.message);
      if (strstr (diag.message, worker_cases[i].expect) == NULL)
        g_error ("'%s' not in: %s", worker_cases[i].expect, diag.message);
      assert_not_pwned (node_json);
      g_assert_true (fx_torch_worker_alive (w));
      g_free (named);
      g_free (out_name);
      g_free (node);
      g_free (node_json);
    }
  /* the same request with an allowed node loads and runs: the refusals above are the check, not a broken request */
  g_assert_cmpint (load_json_graph (w, CALL ("sin", "op", "aten.sin.default", "{\"node\": \"x\"}"), "sin", &diag), ==,
                   FX_OK);
  g_assert_cmpint (load_json_graph (w, METHOD ("v", "view", "{\"node\": \"x\"}, -1"), "v", &diag), ==, FX_OK);
  /* and its allowlist is the C one (one worker for both: starting one imports torch, seconds) */
  check_allowlist_same (w);
  fx_torch_worker_stop (w);
}

/* Strings are only ever values: a string argument written to break out of generated code reaches torch as a
   string (here an invalid rounding_mode: torch's own error), and nothing runs. */
static void
test_security_string_args (void)
{
  if (!need_torch ())
    return;
  char *code = with_payload ("def forward(self, x):\n"
                             "    div = torch.ops.aten.div.Tensor_mode(x, x, rounding_mode = \"'); "
                             "__import__('os').system('%P'); ('\")\n"
                             "    return (div,)\n");
  fx_graph *g = parse_code (code);
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;
  fx_compiled *c = torch_compile (g, &in, 1, NULL, NULL, &st, &diag);
  g_test_message ("%s", c ? "compiled" : diag.message);
  g_assert_null (c);
  g_assert_cmpint (st, ==, FX_ERR_BACKEND);
  g_assert_nonnull (strstr (diag.message, "rounding_mode"));
  assert_not_pwned ("string argument");
  fx_value_clear (&in);
  fx_graph_free (g);
  g_free (code);
}

/* The worker's copy of the allowlist (filled in by embed-runner.py) is the C one: the same lists, and the op table's
   targets. */
static void
check_allowlist_same (fx_torch_worker *w)
{
  fx_diag diag;
  json_object *req = json_object_new_object ();
  json_object_object_add (req, "op", json_object_new_string ("allowlist"));
  json_object *reply = NULL;
  g_assert_cmpint (fx_torch_worker_call (w, req, "allowlist", &reply, &diag), ==, FX_OK);
  json_object_put (req);
  json_object *allow = NULL;
  g_assert_true (json_object_object_get_ex (reply, "allow", &allow));
  static const char *const keys[FX_TORCH_ALLOW_KIND_COUNT] = {
    [FX_TORCH_ALLOW_KIND_FUNCTION] = "functions", [FX_TORCH_ALLOW_KIND_OPERATOR] = "operators",
    [FX_TORCH_ALLOW_KIND_METHOD] = "methods", [FX_TORCH_ALLOW_KIND_CONSTANT] = "constants",
    [FX_TORCH_ALLOW_KIND_NAMESPACE] = "namespaces",
  };
  for (int k = 0; k < FX_TORCH_ALLOW_KIND_COUNT; k++)
    {
      const char *list[512];
      size_t n = fx_torch_allow_names ((fx_torch_allow_kind) k, list, G_N_ELEMENTS (list));
      g_assert_cmpuint (n, <=, G_N_ELEMENTS (list));
      json_object *arr = NULL;
      g_assert_true (json_object_object_get_ex (allow, keys[k], &arr));
      g_assert_cmpuint (json_object_array_length (arr), ==, n);
      for (size_t i = 0; i < n; i++)
        g_assert_cmpstr (json_object_get_string (json_object_array_get_idx (arr, i)), ==, list[i]);
    }
  json_object *ops = NULL;
  g_assert_true (json_object_object_get_ex (allow, "ops", &ops));
  g_assert_cmpuint (json_object_array_length (ops), ==, FX_OP_COUNT);
  for (int i = 0; i < FX_OP_COUNT; i++)
    g_assert_cmpstr (json_object_get_string (json_object_array_get_idx (ops, (size_t) i)), ==,
                     fx_op_get ((fx_op_id) i)->target);
  json_object_put (reply);
}

/* ---------------------------------------------------------------- torch.compile plumbing (a fake torch.compile)

   torch 1.13 has no torch.compile, so this test puts one in through sitecustomize: it records the arguments it
   got and writes a real Inductor output code (a fixture from PyTorch 2.11) into Inductor's code cache, as Inductor
   does. What it checks is fxwb's side: options, mode, dynamic and fullgraph reach torch.compile; the output code
   is found, kept as an artifact and split into kernels with their source nodes. */

static const char fake_compile_py[] =
  "import json, os, shutil, sys, types, torch\n"
  "# the config knobs fxwb sets for Inductor's debug folder (torch._dynamo/_inductor do not exist in 1.13)\n"
  "dynamo = types.ModuleType('torch._dynamo'); dcfg = types.ModuleType('torch._dynamo.config')\n"
  "inductor = types.ModuleType('torch._inductor'); icfg = types.ModuleType('torch._inductor.config')\n"
  "dcfg.debug_dir_root = '/nonexistent'; icfg.trace = types.SimpleNamespace(enabled=False)\n"
  "dynamo.config = dcfg; inductor.config = icfg\n"
  "sys.modules.update({'torch._dynamo': dynamo, 'torch._dynamo.config': dcfg, 'torch._inductor': inductor,\n"
  "                    'torch._inductor.config': icfg})\n"
  "def _fake_compile(model=None, *, fullgraph=False, dynamic=None, backend='inductor', mode=None, options=None,\n"
  "                  disable=False):\n"
  "    with open(os.environ['FXWB_TEST_COMPILE_LOG'], 'w') as f:\n"
  "        json.dump({'backend': backend, 'mode': mode, 'options': options, 'dynamic': dynamic,\n"
  "                   'fullgraph': fullgraph, 'model': type(model).__name__}, f, sort_keys=True)\n"
  "    src = os.environ['FXWB_TEST_DEBUG_MODEL']\n"
  "    if icfg.trace.enabled:\n"
  "        # TORCH_COMPILE_DEBUG's layout: run_*/torchinductor/model__*/\n"
  "        shutil.copytree(src, os.path.join(dcfg.debug_dir_root, 'torch_compile_debug', 'run_fake-pid_1',\n"
  "                                          'torchinductor', os.path.basename(src)))\n"
  "    else:\n"
  "        d = os.path.join(os.environ['TORCHINDUCTOR_CACHE_DIR'], 'zz')\n"
  "        os.makedirs(d, exist_ok=True)\n"
  "        shutil.copy(os.path.join(src, 'output_code.py'), os.path.join(d, 'czzfakeoutputcode.py'))\n"
  "    return model\n"
  "torch.compile = _fake_compile\n";

static void
test_fake_compile (void)
{
  if (!need_torch ())
    return;
  char *dir = g_dir_make_tmp ("fxwb-fakecompile-XXXXXX", NULL);
  char *site = g_build_filename (dir, "sitecustomize.py", NULL);
  char *log = g_build_filename (dir, "compile.json", NULL);
  char *oc = g_strdup_printf ("%s/traces/mlp_module-cuda/torch_compile_debug/"
                              "run_2026_11_21_16_43_10_989637-pid_1700/torchinductor/model__0_inference_0.0",
                              fixtures_dir ());
  g_assert_true (g_file_test (oc, G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_set_contents (site, fake_compile_py, -1, NULL));
  char *old = g_strdup (g_getenv ("PYTHONPATH"));
  g_setenv ("PYTHONPATH", dir, TRUE);
  g_setenv ("FXWB_TEST_COMPILE_LOG", log, TRUE);
  g_setenv ("FXWB_TEST_DEBUG_MODEL", oc, TRUE);

  fx_graph *g = parse_code ("def forward(self, x):\n"
                            "    native_layer_norm = torch.ops.aten.native_layer_norm.default(x, [4], None, None, 1e-05)\n"
                            "    getitem = native_layer_norm[0]\n"
                            "    return (getitem,)\n");
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;
  const char *const opts[] = { "backend='inductor'", "options=\"{'epilogue_fusion': False, 'cpp.threads': 2}\"",
                               "fullgraph=True", "dynamic=False", "trace=False", NULL };
  fx_compiled *c = torch_compile (g, &in, 1, "max-autotune-no-cudagraphs", opts, &st, &diag);
  if (old)
    g_setenv ("PYTHONPATH", old, TRUE);
  else
    g_unsetenv ("PYTHONPATH");
  if (c == NULL)
    g_error ("compile: %s", diag.message);
  g_test_message ("%s", c->notes.data);

  char *got = NULL;
  g_assert_true (g_file_get_contents (log, &got, NULL, NULL));
  g_assert_cmpstr (got, ==, "{\"backend\": \"inductor\", \"dynamic\": false, \"fullgraph\": true, \"mode\": "
                            "\"max-autotune-no-cudagraphs\", \"model\": \"GraphModule\", \"options\": "
                            "{\"cpp.threads\": 2, \"epilogue_fusion\": false}}");
  const fx_artifact *a = find_artifact (c, "output_code.py");
  g_assert_nonnull (a);
  g_assert_nonnull (strstr (a->text, "triton_per_fused_native_layer_norm_0 = async_compile.triton("));
  gboolean found = FALSE;
  for (size_t k = 0; k < c->n_kernels; k++)
    if (strcmp (c->kernels[k].name, "triton_per_fused_native_layer_norm_0") == 0)
      {
        found = TRUE;
        g_assert_cmpstr (c->kernels[k].kind, ==, "reduction");
        g_assert_cmpstr (c->kernels[k].language, ==, "python");
        g_assert_cmpint (c->kernels[k].device.type, ==, FX_DEVICE_CUDA);
        g_assert_nonnull (strstr (c->kernels[k].source, "@triton_heuristics.persistent_reduction"));
      }
  g_assert_true (found);

  /* the compiled object runs and benches (here the fake returned the module: eager underneath) */
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  g_assert_cmpint (c->backend->run (c, &in, 1, arena, &res, &n_res, &diag), ==, FX_OK);
  g_assert_cmpuint (n_res, ==, 1);
  clear_values (res, n_res);
  compiled_free (c);

  /* default mode and no options: torch.compile gets mode=None, options=None, dynamic=None */
  const char *const plain[] = { "backend='aot_eager'", NULL };
  g_setenv ("PYTHONPATH", dir, TRUE);
  c = torch_compile (g, &in, 1, NULL, plain, &st, &diag);
  if (old)
    g_setenv ("PYTHONPATH", old, TRUE);
  else
    g_unsetenv ("PYTHONPATH");
  if (c == NULL)
    g_error ("compile: %s", diag.message);
  g_free (got);
  g_assert_true (g_file_get_contents (log, &got, NULL, NULL));
  g_assert_cmpstr (got, ==, "{\"backend\": \"aot_eager\", \"dynamic\": null, \"fullgraph\": false, \"mode\": null, "
                            "\"model\": \"GraphModule\", \"options\": null}");
  g_assert_cmpuint (c->n_kernels, ==, 0);   /* only Inductor's output code is looked for */
  compiled_free (c);

  /* Inductor with its debug folder (option trace, on by default): output_code.py and the IR dumps as artifacts */
  const char *const traced[] = { "backend='inductor'", NULL };
  g_setenv ("PYTHONPATH", dir, TRUE);
  c = torch_compile (g, &in, 1, NULL, traced, &st, &diag);
  if (old)
    g_setenv ("PYTHONPATH", old, TRUE);
  else
    g_unsetenv ("PYTHONPATH");
  if (c == NULL)
    g_error ("compile: %s", diag.message);
  g_test_message ("%s", c->notes.data);
  static const char *const files[] = { "output_code.py", "ir_post_fusion.txt", "fx_graph_readable.py",
                                       "fx_graph_runnable.py", "fx_graph_transformed.py" };
  for (size_t i = 0; i < G_N_ELEMENTS (files); i++)
    if (find_artifact (c, files[i]) == NULL)
      g_error ("no artifact %s", files[i]);
  g_assert_nonnull (strstr (find_artifact (c, "ir_post_fusion.txt")->text, "FusedSchedulerNode"));
  g_assert_cmpuint (c->n_kernels, ==, 7);
  compiled_free (c);

  g_unsetenv ("FXWB_TEST_COMPILE_LOG");
  g_unsetenv ("FXWB_TEST_DEBUG_MODEL");
  g_unlink (site);
  g_unlink (log);
  g_rmdir (dir);
  g_free (got);
  g_free (old);
  g_free (oc);
  g_free (log);
  g_free (site);
  g_free (dir);
  fx_value_clear (&in);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- main */

static gboolean
probe_torch (void)
{
  fx_graph *g = small_graph ();
  fx_value in = small_input ();
  fx_diag diag;
  fx_status st;
  fx_compiled *c = torch_compile (g, &in, 1, NULL, NULL, &st, &diag);
  if (c == NULL)
    g_printerr ("# no torch for the torch backend: %s\n", diag.message);
  compiled_free (c);
  fx_value_clear (&in);
  fx_graph_free (g);
  return c != NULL;
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  have_torch = probe_torch ();
  pwn_dir = g_dir_make_tmp ("fxwb-pwn-XXXXXX", NULL);
  static const char *const fixtures[] = {
    "pointwise_chain.aten.0", "rmsnorm_residual.aten.0", "softmax_rows.core_aten.0",
    /* a whole MLP block as PyTorch 2.11's AOTAutograd wrote it (var_mean.correction, addmm, erf, 15 inputs) */
    "traces/mlp_module-cuda/torch_compile_debug/run_2026_11_21_16_43_10_989637-pid_1700/torchinductor/"
    "model__0_inference_0.0/fx_graph_readable.py",
  };
  for (size_t i = 0; i < G_N_ELEMENTS (fixtures); i++)
    {
      char *p = g_strdup_printf ("/torch/eager/%s", strchr (fixtures[i], '/') ? "mlp_module-aot-graph" : fixtures[i]);
      g_test_add_data_func (p, fixtures[i], test_eager_fixture);
      g_free (p);
    }
  g_test_add_func ("/torch/eager/bench", test_eager_bench);
  g_test_add_func ("/torch/eager/layout-dtypes", test_layout_dtypes);
  g_test_add_func ("/torch/eager/scalars", test_scalars);
  g_test_add_func ("/torch/eager/torch-level", test_torch_level);
  g_test_add_func ("/torch/eager/child-module", test_child_module);
  g_test_add_func ("/torch/compile/no-torch-compile", test_no_torch_compile);
  g_test_add_func ("/torch/compile/fake-torch-compile", test_fake_compile);
  for (size_t i = 0; i < G_N_ELEMENTS (crash_cases); i++)
    {
      char *p = g_strdup_printf ("/torch/errors/crash/%s", crash_cases[i].crash);
      g_test_add_data_func (p, &crash_cases[i], test_crash);
      g_free (p);
    }
  g_test_add_func ("/torch/errors/dead-pipe", test_dead_pipe);
  g_test_add_func ("/torch/errors/device", test_device_option);
  g_test_add_func ("/torch/errors/bad-python", test_bad_python);
  g_test_add_func ("/torch/errors/graph-exception", test_graph_exception);
  g_test_add_func ("/torch/security/c-check", test_security_c_check);
  g_test_add_func ("/torch/security/op-rule", test_security_op_rule);
  g_test_add_func ("/torch/security/worker", test_security_worker);
  g_test_add_func ("/torch/security/string-args", test_security_string_args);
  int rc = g_test_run ();
  char *f = pwn_file ();
  g_unlink (f);
  g_rmdir (pwn_dir);
  g_free (f);
  g_free (pwn_dir);
  return rc;
}
