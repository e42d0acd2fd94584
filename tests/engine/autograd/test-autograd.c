/* test-autograd.c: joint graphs against torch 1.13 autograd: every op with a derivative formula in a small graph,
   the fixture graphs (mlp_block, layernorm_gelu) and the training programs' forward graphs; provenance on backward
   nodes; located errors for ops without a formula. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "fx/accuracy.h"
#include "fx/autograd.h"
#include "fx/pyparse.h"
#include "fx/runtime.h"

#define FIXTURE_DIVISOR 64

static char *tmp_dir;
static bool have_torch;

/* One forward graph: our joint graph's grads and torch autograd's. */
typedef struct
{
  char *name;
  fx_graph *forward;
  fx_graph *joint;
  char *code_path;      /* the forward's print_readable text, which torch runs */
  char *out_prefix;
  fx_arena *arena;
  fx_value *inputs;     /* primals then tangents */
  size_t n_primals, n_tangents;
  char *error;          /* joint graph or run failure */
  bool *requires_grad;  /* per primal; NULL: every floating one */
  size_t n_requires_grad;
} grad_case;

static GPtrArray *cases;

static const char *
env_or (const char *name, const char *dflt)
{
  const char *d = g_getenv (name);
  return d ? d : dflt;
}

static void
free_case (gpointer p)
{
  grad_case *c = p;
  for (size_t i = 0; c->inputs && i < c->n_primals + c->n_tangents; i++)
    fx_value_clear (&c->inputs[i]);
  fx_graph_free (c->forward);
  fx_graph_free (c->joint);
  fx_arena_free (c->arena);
  g_free (c->name);
  g_free (c->code_path);
  g_free (c->out_prefix);
  g_free (c->error);
  g_free (c->requires_grad);
  g_free (c);
}

/* Random tangents for the joint's tangent placeholders, after the primals. */
static void
make_inputs (grad_case *c)
{
  fx_diag diag;
  fx_value *prim = NULL;
  size_t np = 0;
  if (fx_inputs_make (c->forward, FX_INPUTS_SPEC, NULL, 7, NULL, c->arena, &prim, &np, &diag) != FX_OK)
    g_error ("%s: inputs: %s", c->name, diag.message);
  fx_joint_shape js;
  g_assert_cmpint (fx_joint_shape_of (c->joint, &js, &diag), ==, FX_OK);
  g_assert_cmpuint (js.n_primals, ==, np);
  c->n_primals = np;
  c->n_tangents = js.n_tangents;
  c->inputs = fx_arena_alloc (c->arena, sizeof (fx_value) * (np + js.n_tangents + 1));
  memcpy (c->inputs, prim, sizeof (fx_value) * np);
  fx_generator gen;
  fx_generator_seed (&gen, 99);
  size_t k = np;
  fx_graph_foreach_node (c->joint, n)
  {
    if (n->op != FX_OP_PLACEHOLDER || strncmp (n->name, "tangents_", 9) != 0)
      continue;
    fx_input_spec s = fx_input_spec_of_placeholder (n);
    g_assert_cmpint (fx_input_from_spec (&s, &gen, NULL, &c->inputs[k++], &diag), ==, FX_OK);
  }
}

static grad_case *
add_case (const char *name, fx_graph *forward, bool *requires_grad, size_t n_requires_grad)
{
  grad_case *c = g_new0 (grad_case, 1);
  c->name = g_strdup (name);
  c->forward = forward;
  c->requires_grad = requires_grad;
  c->n_requires_grad = n_requires_grad;
  c->arena = fx_arena_new ();
  c->out_prefix = g_strdup_printf ("%s/out%u", tmp_dir, cases->len);
  c->code_path = g_strdup_printf ("%s.py", c->out_prefix);
  fx_buf code;
  fx_buf_init (&code);
  fx_readable_opts ro = { .include_stride = false, .include_device = false };
  fx_graph_print_readable (forward, &ro, &code);
  fx_diag diag;
  g_assert_cmpint (fx_file_write (c->code_path, code.data, code.len, &diag), ==, FX_OK);
  fx_buf_free (&code);
  g_ptr_array_add (cases, c);
  if (fx_autograd_joint (forward, requires_grad, n_requires_grad, &c->joint, &diag) != FX_OK)
    c->error = g_strdup (diag.message);
  else
    make_inputs (c);
  return c;
}

static fx_graph *
parse_graph (const char *name, const char *text)
{
  fx_graph *g = NULL;
  fx_diag diag;
  if (fx_parse_fx_code (text, strlen (text), name, &g, &diag) != FX_OK)
    g_error ("%s: %s\n%s", name, diag.message, text);
  return g;
}

/* Runs c's joint graph on its primals and tangents (outputs in arena; the caller clears them). */
static void
run_joint (const grad_case *c, fx_arena *arena, fx_value **outs, size_t *n_outs)
{
  fx_diag diag;
  if (fx_interp_run (c->joint, c->inputs, c->n_primals + c->n_tangents, NULL, arena, outs, n_outs, &diag) != FX_OK)
    g_error ("%s: running the joint graph: %s", c->name, diag.message);
}

/* A small graph: print_readable text around the given signature and body. */
static void
add_op_case (const char *name, const char *sig, const char *body)
{
  char *text = g_strdup_printf ("class G(torch.nn.Module):\n    def forward(self, %s):\n%s", sig, body);
  fx_graph *g = parse_graph (name, text);
  g_free (text);
  char *cname = g_strdup_printf ("op/%s", name);
  add_case (cname, g, NULL, 0);
  g_free (cname);
}

#define X45 "x: \"f32[4, 5]\""
#define XY45 "x: \"f32[4, 5]\", y: \"f32[4, 5]\""
#define L(s) "        " s "\n"
#define RET(v) "        return (" v ",)\n"
/* a positive operand: |x| + 0.5 */
#define POS(v, src) L (v "_a = torch.ops.aten.abs.default(" src ")") L (v " = torch.ops.aten.add.Tensor(" v "_a, 0.5)")

typedef struct
{
  const char *name, *sig, *body;
} op_case;

static const op_case op_cases[] = {
  { "add_broadcast", "x: \"f32[4, 5]\", y: \"f32[5]\"", L ("r = torch.ops.aten.add.Tensor(x, y, alpha = 2)") RET ("r") },
  { "sub_broadcast", "x: \"f32[4, 5]\", y: \"f32[4, 1]\"", L ("r = torch.ops.aten.sub.Tensor(x, y)") RET ("r") },
  { "rsub", XY45, L ("r = torch.ops.aten.rsub.Tensor(x, y, alpha = 3)") RET ("r") },
  { "rsub_scalar", X45, L ("r = torch.ops.aten.rsub.Scalar(x, 2)") RET ("r") },
  { "mul", "x: \"f32[4, 5]\", y: \"f32[1, 5]\"", L ("r = torch.ops.aten.mul.Tensor(x, y)") RET ("r") },
  { "mul_scalar", X45, L ("r = torch.ops.aten.mul.Tensor(x, 3.0)") RET ("r") },
  { "div", XY45, POS ("p", "y") L ("r = torch.ops.aten.div.Tensor(x, p)") RET ("r") },
  { "div_scalar", X45, L ("r = torch.ops.aten.div.Tensor(x, 4.0)") RET ("r") },
  { "pow_scalar", X45, L ("r = torch.ops.aten.pow.Tensor_Scalar(x, 3)") RET ("r") },
  { "pow_tensor", XY45, POS ("p", "x") L ("r = torch.ops.aten.pow.Tensor_Tensor(p, y)") RET ("r") },
  { "neg", X45, L ("r = torch.ops.aten.neg.default(x)") RET ("r") },
  { "exp", X45, L ("r = torch.ops.aten.exp.default(x)") RET ("r") },
  { "expm1", X45, L ("r = torch.ops.aten.expm1.default(x)") RET ("r") },
  { "log", X45, POS ("p", "x") L ("r = torch.ops.aten.log.default(p)") RET ("r") },
  { "log1p", X45, POS ("p", "x") L ("r = torch.ops.aten.log1p.default(p)") RET ("r") },
  { "sin", X45, L ("r = torch.ops.aten.sin.default(x)") RET ("r") },
  { "cos", X45, L ("r = torch.ops.aten.cos.default(x)") RET ("r") },
  { "tanh", X45, L ("r = torch.ops.aten.tanh.default(x)") RET ("r") },
  { "sigmoid", X45, L ("r = torch.ops.aten.sigmoid.default(x)") RET ("r") },
  { "relu", X45, L ("r = torch.ops.aten.relu.default(x)") RET ("r") },
  { "leaky_relu", X45, L ("r = torch.ops.aten.leaky_relu.default(x, 0.2)") RET ("r") },
  { "gelu", X45, L ("r = torch.ops.aten.gelu.default(x)") RET ("r") },
  { "gelu_tanh", X45, L ("r = torch.ops.aten.gelu.default(x, approximate = 'tanh')") RET ("r") },
  { "silu", X45, L ("r = torch.ops.aten.silu.default(x)") RET ("r") },
  { "sqrt", X45, POS ("p", "x") L ("r = torch.ops.aten.sqrt.default(p)") RET ("r") },
  { "rsqrt", X45, POS ("p", "x") L ("r = torch.ops.aten.rsqrt.default(p)") RET ("r") },
  { "reciprocal", X45, POS ("p", "x") L ("r = torch.ops.aten.reciprocal.default(p)") RET ("r") },
  { "tan", X45, L ("h = torch.ops.aten.mul.Tensor(x, 0.5)") L ("r = torch.ops.aten.tan.default(h)") RET ("r") },
  { "sinh", X45, L ("r = torch.ops.aten.sinh.default(x)") RET ("r") },
  { "cosh", X45, L ("r = torch.ops.aten.cosh.default(x)") RET ("r") },
  { "asin", X45, L ("t = torch.ops.aten.tanh.default(x)") L ("h = torch.ops.aten.mul.Tensor(t, 0.9)") L ("r = torch.ops.aten.asin.default(h)") RET ("r") },
  { "acos", X45, L ("t = torch.ops.aten.tanh.default(x)") L ("h = torch.ops.aten.mul.Tensor(t, 0.9)") L ("r = torch.ops.aten.acos.default(h)") RET ("r") },
  { "atan", X45, L ("r = torch.ops.aten.atan.default(x)") RET ("r") },
  { "exp2", X45, L ("r = torch.ops.aten.exp2.default(x)") RET ("r") },
  { "log2", X45, POS ("p", "x") L ("r = torch.ops.aten.log2.default(p)") RET ("r") },
  { "log10", X45, POS ("p", "x") L ("r = torch.ops.aten.log10.default(p)") RET ("r") },
  { "erfc", X45, L ("r = torch.ops.aten.erfc.default(x)") RET ("r") },
  { "hardsigmoid", X45, L ("m = torch.ops.aten.mul.Tensor(x, 4.0)") L ("r = torch.ops.aten.hardsigmoid.default(m)") RET ("r") },
  { "hardswish", X45, L ("m = torch.ops.aten.mul.Tensor(x, 4.0)") L ("r = torch.ops.aten.hardswish.default(m)") RET ("r") },
  { "maximum", XY45, L ("r = torch.ops.aten.maximum.default(x, y)") RET ("r") },
  { "minimum", "x: \"f32[4, 5]\", y: \"f32[5]\"", L ("r = torch.ops.aten.minimum.default(x, y)") RET ("r") },
  { "flip", X45, L ("r = torch.ops.aten.flip.default(x, [0, 1])") L ("q = torch.ops.aten.sin.default(r)") RET ("q") },
  { "erf", X45, L ("r = torch.ops.aten.erf.default(x)") RET ("r") },
  { "clamp", X45, L ("r = torch.ops.aten.clamp.default(x, -0.5, 0.5)") RET ("r") },
  { "clamp_min", X45, L ("r = torch.ops.aten.clamp_min.default(x, 0.1)") RET ("r") },
  { "hardtanh", X45, L ("r = torch.ops.aten.hardtanh.default(x, -0.5, 0.5)") RET ("r") },
  { "where", XY45, L ("c = torch.ops.aten.gt.Scalar(x, 0)") L ("r = torch.ops.aten.where.self(c, x, y)") RET ("r") },
  { "masked_fill", X45, L ("c = torch.ops.aten.gt.Scalar(x, 0)") L ("r = torch.ops.aten.masked_fill.Scalar(x, c, 2.0)") RET ("r") },
  { "to_copy", X45, L ("d = torch.ops.aten._to_copy.default(x, dtype = torch.float64)") L ("r = torch.ops.aten.mul.Tensor(d, d)") RET ("r") },
  { "view", X45, L ("r = torch.ops.aten.view.default(x, [2, 10])") L ("s = torch.ops.aten.mul.Tensor(r, r)") RET ("s") },
  { "permute", "x: \"f32[2, 3, 4]\"", L ("r = torch.ops.aten.permute.default(x, [2, 0, 1])") L ("s = torch.ops.aten.mul.Tensor(r, r)") RET ("s") },
  { "transpose", "x: \"f32[2, 3, 4]\"", L ("r = torch.ops.aten.transpose.int(x, 0, 2)") L ("s = torch.ops.aten.mul.Tensor(r, r)") RET ("s") },
  { "t", X45, L ("r = torch.ops.aten.t.default(x)") L ("s = torch.ops.aten.mul.Tensor(r, r)") RET ("s") },
  { "expand", "x: \"f32[4, 1]\"", L ("r = torch.ops.aten.expand.default(x, [3, 4, 5])") L ("s = torch.ops.aten.sin.default(r)") RET ("s") },
  { "unsqueeze", X45, L ("r = torch.ops.aten.unsqueeze.default(x, 1)") L ("s = torch.ops.aten.sin.default(r)") RET ("s") },
  { "squeeze", "x: \"f32[4, 1, 5]\"", L ("r = torch.ops.aten.squeeze.dim(x, 1)") L ("s = torch.ops.aten.sin.default(r)") RET ("s") },
  { "slice", X45, L ("r = torch.ops.aten.slice.Tensor(x, 1, 1, 4)") L ("s = torch.ops.aten.sin.default(r)") RET ("s") },
  { "select", X45, L ("r = torch.ops.aten.select.int(x, 0, 2)") L ("s = torch.ops.aten.sin.default(r)") RET ("s") },
  { "split", "x: \"f32[6, 5]\"", L ("sp = torch.ops.aten.split.Tensor(x, 2)") L ("a = operator.getitem(sp, 0)")
      L ("b = operator.getitem(sp, 2)") L ("r = torch.ops.aten.mul.Tensor(a, b)") RET ("r") },
  { "cat", XY45, L ("s = torch.ops.aten.sin.default(y)") L ("r = torch.ops.aten.cat.default([x, s], 1)")
      L ("q = torch.ops.aten.mul.Tensor(r, r)") RET ("q") },
  { "stack", XY45, L ("r = torch.ops.aten.stack.default([x, y], 1)") L ("q = torch.ops.aten.sin.default(r)") RET ("q") },
  { "constant_pad_nd", X45, L ("r = torch.ops.aten.constant_pad_nd.default(x, [1, 2, 0, 1])") L ("q = torch.ops.aten.sin.default(r)") RET ("q") },
  { "sum", X45, L ("s = torch.ops.aten.sin.default(x)") L ("r = torch.ops.aten.sum.default(s)") RET ("r") },
  { "sum_dim", "x: \"f32[3, 4, 5]\"", L ("s = torch.ops.aten.sin.default(x)") L ("r = torch.ops.aten.sum.dim_IntList(s, [0, 2])") RET ("r") },
  { "sum_keepdim", X45, L ("r = torch.ops.aten.sum.dim_IntList(x, [1], True)") L ("q = torch.ops.aten.sin.default(r)") RET ("q") },
  { "mean", X45, L ("s = torch.ops.aten.sin.default(x)") L ("r = torch.ops.aten.mean.default(s)") RET ("r") },
  { "mean_dim", X45, L ("r = torch.ops.aten.mean.dim(x, [-1])") L ("q = torch.ops.aten.sin.default(r)") RET ("q") },
  { "amax", X45, L ("r = torch.ops.aten.amax.default(x, [1])") L ("q = torch.ops.aten.sin.default(r)") RET ("q") },
  { "amin", X45, L ("r = torch.ops.aten.amin.default(x, [0], True)") RET ("r") },
  { "var_mean", X45, L ("vm = torch.ops.aten.var_mean.correction(x, [1], correction = 0, keepdim = True)")
      L ("v = operator.getitem(vm, 0)") L ("m = operator.getitem(vm, 1)") L ("s = torch.ops.aten.sin.default(m)")
      L ("r = torch.ops.aten.add.Tensor(v, s)") RET ("r") },
  { "var", X45, L ("r = torch.ops.aten.var.correction(x, [0], correction = 1)") RET ("r") },
  { "logsumexp", X45, L ("r = torch.ops.aten.logsumexp.default(x, [1])") RET ("r") },
  { "cumsum", X45, L ("r = torch.ops.aten.cumsum.default(x, 1)") L ("q = torch.ops.aten.sin.default(r)") RET ("q") },
  { "mm", "x: \"f32[4, 5]\", w: \"f32[5, 3]\"", L ("r = torch.ops.aten.mm.default(x, w)") RET ("r") },
  { "addmm", "b: \"f32[3]\", x: \"f32[4, 5]\", w: \"f32[5, 3]\"", L ("r = torch.ops.aten.addmm.default(b, x, w, beta = 2, alpha = 0.5)") RET ("r") },
  { "bmm", "x: \"f32[2, 4, 5]\", w: \"f32[2, 5, 3]\"", L ("r = torch.ops.aten.bmm.default(x, w)") RET ("r") },
  { "linear", "x: \"f32[2, 4, 5]\", w: \"f32[3, 5]\", b: \"f32[3]\"", L ("r = torch.ops.aten.linear.default(x, w, b)") RET ("r") },
  { "linear_transposed", "x: \"f32[2, 4, 5]\", w: \"f32[3, 5]\"", L ("r = torch.ops.aten.linear.default(x, w)")
      L ("p = torch.ops.aten.permute.default(r, [2, 0, 1])") L ("q = torch.ops.aten.sin.default(p)") RET ("q") },
  { "view_of_permute", "x: \"f32[2, 3, 4]\"", L ("p = torch.ops.aten.permute.default(x, [2, 0, 1])")
      L ("v = torch.ops.aten.view.default(p, [4, 6])") L ("e = torch.ops.aten.expand.default(v, [2, 4, 6])")
      L ("q = torch.ops.aten.sin.default(e)") RET ("q") },
  { "softmax", X45, L ("r = torch.ops.aten._softmax.default(x, 1, False)") RET ("r") },
  { "log_softmax", X45, L ("r = torch.ops.aten._log_softmax.default(x, -1, False)") RET ("r") },
  { "layer_norm", "x: \"f32[3, 4, 5]\", w: \"f32[5]\", b: \"f32[5]\"",
      L ("ln = torch.ops.aten.native_layer_norm.default(x, [5], w, b, 1e-05)") L ("r = operator.getitem(ln, 0)") RET ("r") },
  { "cross_entropy", "x: \"f32[4, 16]\", t: \"i64[4]\"", L ("ls = torch.ops.aten._log_softmax.default(x, 1, False)")
      L ("nl = torch.ops.aten.nll_loss_forward.default(ls, t, None, 1, -100)") L ("r = operator.getitem(nl, 0)") RET ("r") },
  { "nll_loss_sum", "x: \"f32[4, 16]\", t: \"i64[4]\"", L ("nl = torch.ops.aten.nll_loss_forward.default(x, t, None, 2, 3)")
      L ("r = operator.getitem(nl, 0)") RET ("r") },
  { "embedding", "w: \"f32[16, 4]\", i: \"i64[3, 5]\"", L ("r = torch.ops.aten.embedding.default(w, i)") RET ("r") },
  { "gather", "x: \"f32[4, 16]\", i: \"i64[4, 2]\"", L ("r = torch.ops.aten.gather.default(x, 1, i)") RET ("r") },
  /* the mask is drawn inside the graph: only p = 0 (every element kept) is the same draw for torch and us */
  { "dropout_p0", X45, L ("dr = torch.ops.aten.native_dropout.default(x, 0.0, True)") L ("r = operator.getitem(dr, 0)")
      L ("q = torch.ops.aten.sin.default(r)") RET ("q") },
  { "detach_zeros_like", X45, L ("z = torch.ops.aten.zeros_like.default(x)") L ("d = torch.ops.aten.detach.default(x)")
      L ("a = torch.ops.aten.add.Tensor(z, d)") L ("r = torch.ops.aten.mul.Tensor(a, x)") RET ("r") },
  { "two_outputs", XY45, L ("a = torch.ops.aten.mul.Tensor(x, y)") L ("b = torch.ops.aten.exp.default(a)") "        return (a, b)\n" },
};

/* tests/fixtures/graphs/NAME.py with its inputs.json, every size >= 16 divided by FIXTURE_DIVISOR. */
static void
add_fixture_case (const char *name)
{
  const char *fx = env_or ("FX_FIXTURES", "tests/fixtures");
  char *py = g_strdup_printf ("%s/graphs/%s.py", fx, name);
  char *js = g_strdup_printf ("%s/graphs/%s.inputs.json", fx, name);
  fx_graph *g = NULL;
  fx_diag diag;
  if (fx_parse_fx_file (py, &g, &diag) != FX_OK)
    g_error ("%s: %s", py, diag.message);
  g_assert_cmpint (fx_graph_load_input_specs (g, js, &diag), ==, FX_OK);
  fx_graph_scale_inputs (g, FIXTURE_DIVISOR, 16);
  size_t changed;
  if (fx_pass_shape_prop (g, &changed, &diag) != FX_OK)
    g_error ("%s: %s", name, diag.message);
  char *cname = g_strdup_printf ("fixture/%s", name);
  add_case (cname, g, NULL, 0);
  g_free (cname);
  g_free (py);
  g_free (js);
}

/* Keeps the first n outputs of graph (a partitioned forward's user outputs) and drops what only the rest used. */
void test_keep_outputs (fx_graph *g, size_t n);
void
test_keep_outputs (fx_graph *g, size_t n)
{
  fx_node *out = fx_graph_output_node (g);
  g_assert_nonnull (out);
  fx_arg a = out->args[0];
  g_assert_true (a.kind == FX_ARG_TUPLE || a.kind == FX_ARG_LIST);
  g_assert_cmpuint (a.u.seq.n, >=, n);
  fx_arg t = fx_arg_tuple (a.u.seq.items, n);
  fx_node_set_args (out, &t, 1);
  fx_graph_eliminate_dead_code (g);
}

/* The training programs' forward (tests/fixtures/training/graphs/NAME.min_cut.fw.py, user outputs only). */
static void
add_training_case (const char *name, size_t n_outputs)
{
  const char *fx = env_or ("FX_FIXTURES", "tests/fixtures");
  char *py = g_strdup_printf ("%s/training/graphs/%s.min_cut.fw.py", fx, name);
  fx_graph *g = NULL;
  fx_diag diag;
  if (fx_parse_fx_file (py, &g, &diag) != FX_OK)
    g_error ("%s: %s", py, diag.message);
  test_keep_outputs (g, n_outputs);
  /* which inputs require grad: the ones torch's joint graph returns a grad for */
  char *jpy = g_strdup_printf ("%s/training/graphs/%s.min_cut.joint.py", fx, name);
  fx_graph *jg = NULL;
  if (fx_parse_fx_file (jpy, &jg, &diag) != FX_OK)
    g_error ("%s: %s", jpy, diag.message);
  fx_joint_shape js;
  g_assert_cmpint (fx_joint_shape_of (jg, &js, &diag), ==, FX_OK);
  bool *rg = g_new0 (bool, js.n_primals);
  const fx_arg *jo = fx_graph_output_node (jg)->args[0].u.seq.items;
  for (size_t i = 0; i < js.n_primals; i++)
    rg[i] = jo[js.n_fwd_outputs + i].kind == FX_ARG_NODE;
  fx_graph_free (jg);
  g_free (jpy);
  char *cname = g_strdup_printf ("training/%s", name);
  add_case (cname, g, rg, js.n_primals);
  g_free (cname);
  g_free (py);
}

/* ---------------------------------------------------------------- torch */

static bool
run_torch (void)
{
  fx_buf j;
  fx_buf_init (&j);
  fx_buf_puts (&j, "[\n");
  bool first = true;
  for (guint k = 0; k < cases->len; k++)
    {
      grad_case *c = cases->pdata[k];
      if (c->error)
        continue;
      fx_buf_printf (&j, "%s{\"code\": \"%s\", \"out\": \"%s\", \"grad\": [", first ? "" : ",", c->code_path,
                     c->out_prefix);
      first = false;
      bool f1 = true;
      for (size_t i = 0; i < c->n_primals; i++)
        if (c->inputs[i].kind == FX_VALUE_TENSOR && fx_dtype_is_floating (c->inputs[i].u.t->dtype)
            && (c->requires_grad == NULL || (i < c->n_requires_grad && c->requires_grad[i])))
          fx_buf_printf (&j, "%s%zu", f1 ? "" : ", ", i), f1 = false;
      fx_buf_puts (&j, "], \"inputs\": [");
      for (size_t i = 0; i < c->n_primals + c->n_tangents; i++)
        {
          char *p = g_strdup_printf ("%s.in%zu.fxt", c->out_prefix, i);
          fx_diag diag;
          g_assert_cmpint (fx_tensor_save (c->inputs[i].u.t, p, &diag), ==, FX_OK);
          if (i == c->n_primals)
            fx_buf_puts (&j, "], \"tangents\": [");
          if (i < c->n_primals)
            fx_buf_printf (&j, "%s{\"t\": \"%s\"}", i ? ", " : "", p);
          else
            fx_buf_printf (&j, "%s\"%s\"", i > c->n_primals ? ", " : "", p);
          g_free (p);
        }
      fx_buf_puts (&j, c->n_tangents ? "]}\n" : "], \"tangents\": []}\n");
    }
  fx_buf_puts (&j, "]\n");
  char *jobs = g_strdup_printf ("%s/jobs.json", tmp_dir);
  g_assert_cmpint (fx_file_write (jobs, j.data, j.len, NULL), ==, FX_OK);
  fx_buf_free (&j);
  char *script = g_strdup_printf ("%s/tests/engine/runtime/torch_graph.py", env_or ("FX_SOURCE_ROOT", "."));
  char *argv[] = { (char *) "/usr/bin/python3", script, jobs, NULL };
  int status = 0;
  bool ok = g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, NULL);
  if (ok && WIFEXITED (status) && WEXITSTATUS (status) == 77)
    ok = false;
  else if (ok && !g_spawn_check_wait_status (status, NULL))
    g_error ("torch_graph.py failed (status %d)", status);
  g_free (script);
  g_free (jobs);
  return ok;
}

/* ---------------------------------------------------------------- tests */

static double
max_abs (const fx_tensor *t)
{
  double m = 1;
  for (int64_t i = 0; i < fx_tensor_numel (t); i++)
    m = fmax (m, fabs (fx_tensor_get_f64 (t, i)));
  return m;
}

static void
test_grad_case (gconstpointer data)
{
  const grad_case *c = data;
  if (c->error)
    g_error ("%s: joint graph: %s", c->name, c->error);
  if (!have_torch)
    {
      g_test_skip ("/usr/bin/python3 with torch is not available");
      return;
    }
  char *errp = g_strdup_printf ("%s.err", c->out_prefix), *terr = NULL;
  if (g_file_get_contents (errp, &terr, NULL, NULL))
    g_error ("%s: torch failed: %s", c->name, terr);
  g_free (errp);
  fx_arena *arena = fx_arena_new ();
  fx_value *outs = NULL;
  size_t n_outs = 0;
  fx_diag diag;
  run_joint (c, arena, &outs, &n_outs);
  g_assert_cmpuint (n_outs, >=, c->n_primals);
  size_t first_grad = n_outs - c->n_primals, compared = 0;
  for (size_t i = 0; i < c->n_primals; i++)
    {
      char *p = g_strdup_printf ("%s.grad.%zu", c->out_prefix, i);
      fx_tensor *ref = NULL;
      bool have_ref = fx_tensor_load (p, NULL, &ref, &diag) == FX_OK;
      const fx_value *ours = &outs[first_grad + i];
      if (!have_ref)
        g_assert_true (ours->kind == FX_VALUE_NONE);
      else
        {
          if (ours->kind != FX_VALUE_TENSOR)
            g_error ("%s: torch has a grad for input %zu, the joint graph none", c->name, i);
          /* fp32 sums over large gradients: the absolute tolerance scales with the gradient's magnitude */
          if (!fx_allclose (ref, ours->u.t, 1e-3, 1e-4 * max_abs (ref), false))
            {
              fx_same_report rep;
              fx_same_opts so;
              fx_same_opts_init (&so);
              fx_same_tensor (ref, ours->u.t, NULL, &so, &rep);
              g_test_fail_printf ("%s: grad of input %zu differs from torch: max abs err %g (torch %g, ours %g at %lld)",
                                  c->name, i, rep.max_abs_err, rep.worst_ref, rep.worst_res,
                                  (long long) rep.worst_index);
            }
          fx_tensor_unref (ref);
          compared++;
        }
      g_free (p);
    }
  g_assert_cmpuint (compared, >, 0);
  for (size_t i = 0; i < n_outs; i++)
    fx_value_clear (&outs[i]);
  fx_arena_free (arena);
}

/* ---------------------------------------------------------------- fp64 finite differences */

/* L(x) = sum over forward outputs of sum(out * tangent), the forward run in fp64 (floating inputs upcast, input
   `which` moved by eps * v). */
static double
fd_objective (const grad_case *c, size_t which, const fx_tensor *v, double eps)
{
  fx_value *in = g_new0 (fx_value, c->n_primals + 1);
  for (size_t i = 0; i < c->n_primals; i++)
    {
      const fx_tensor *t = c->inputs[i].u.t;
      if (!fx_dtype_is_floating (t->dtype))
        {
          in[i] = fx_value_tensor (fx_tensor_ref ((fx_tensor *) t));
          continue;
        }
      fx_tensor *d = fx_tensor_to_dtype (NULL, t, FX_DTYPE_F64);
      for (int64_t k = 0; i == which && k < fx_tensor_numel (d); k++)
        fx_tensor_set_f64 (d, k, fx_tensor_get_f64 (d, k) + eps * fx_tensor_get_f64 (v, k));
      in[i] = fx_value_tensor (d);
    }
  fx_arena *a = fx_arena_new ();
  fx_value *out = NULL;
  size_t n_out = 0;
  fx_diag diag;
  if (fx_interp_run (c->forward, in, c->n_primals, NULL, a, &out, &n_out, &diag) != FX_OK)
    g_error ("%s: fp64 forward: %s", c->name, diag.message);
  double l = 0;
  size_t t = c->n_primals;
  for (size_t o = 0; o < n_out && t < c->n_primals + c->n_tangents; o++)
    {
      if (out[o].kind != FX_VALUE_TENSOR || !fx_dtype_is_floating (out[o].u.t->dtype))
        continue;
      const fx_tensor *tg = c->inputs[t++].u.t;
      for (int64_t k = 0; k < fx_tensor_numel (tg); k++)
        l += fx_tensor_get_f64 (out[o].u.t, k) * fx_tensor_get_f64 (tg, k);
    }
  for (size_t i = 0; i < n_out; i++)
    fx_value_clear (&out[i]);
  for (size_t i = 0; i < c->n_primals; i++)
    fx_value_clear (&in[i]);
  g_free (in);
  fx_arena_free (a);
  return l;
}

/* The directional derivative <grad, v> of each differentiated input against (L(x + eps v) - L(x - eps v)) / 2 eps:
   the check that needs no torch. */
static void
test_fd_case (gconstpointer data)
{
  const grad_case *c = data;
  if (c->error)
    g_error ("%s: joint graph: %s", c->name, c->error);
  fx_arena *arena = fx_arena_new ();
  fx_value *outs = NULL;
  size_t n_outs = 0;
  run_joint (c, arena, &outs, &n_outs);
  fx_generator gen;
  fx_generator_seed (&gen, 5);
  const double eps = 1e-6;
  for (size_t i = 0; i < c->n_primals; i++)
    {
      const fx_value *g = &outs[n_outs - c->n_primals + i];
      if (g->kind != FX_VALUE_TENSOR)
        continue;
      fx_tensor *v = fx_tensor_new (NULL, FX_DTYPE_F64, g->u.t->ndim, g->u.t->sizes);
      fx_tensor_fill_normal (v, &gen, 0, 1);
      double dot = 0, mag = 0;
      for (int64_t k = 0; k < fx_tensor_numel (v); k++)
        {
          double term = fx_tensor_get_f64 (g->u.t, k) * fx_tensor_get_f64 (v, k);
          dot += term;
          mag += fabs (term);
        }
      double fd = (fd_objective (c, i, v, eps) - fd_objective (c, i, v, -eps)) / (2 * eps);
      /* fp32 grads against an fp64 difference quotient: relative to the terms' magnitude */
      if (fabs (dot - fd) > 1e-3 * fmax (1, mag))
        g_test_fail_printf ("%s: input %zu: <grad, v> = %.9g, finite difference %.9g", c->name, i, dot, fd);
      fx_tensor_unref (v);
    }
  for (size_t i = 0; i < n_outs; i++)
    fx_value_clear (&outs[i]);
  fx_arena_free (arena);
}

/* Backward nodes name the forward node they came from and keep its stack trace and seq_nr. */
static void
test_provenance (void)
{
  const char *path = g_getenv ("FX_FIXTURES");
  char *py = g_strdup_printf ("%s/training/graphs/mlp_block.min_cut.fw.py", path ? path : "tests/fixtures");
  fx_graph *g = NULL, *j = NULL;
  fx_diag diag;
  g_assert_cmpint (fx_parse_fx_file (py, &g, &diag), ==, FX_OK);
  test_keep_outputs (g, 1);
  g_assert_cmpint (fx_autograd_joint (g, NULL, 0, &j, &diag), ==, FX_OK);
  size_t n_bw = 0;
  fx_graph_foreach_node (j, n)
  {
    const char *tag = fx_meta_get_extra (&n->meta, "partitioner_tag");
    if (tag == NULL)
      continue;
    n_bw++;
    g_assert_cmpuint (n->meta.n_from_node, ==, 1);
    g_assert_cmpstr (n->meta.from_node[0].pass_name, ==, "autograd");
    const fx_node *f = fx_graph_find_node (j, n->meta.from_node[0].name);
    g_assert_nonnull (f);
    g_assert_cmpint (n->meta.seq_nr, ==, f->meta.seq_nr);
    g_assert_nonnull (n->meta.stack_trace);
    g_assert_nonnull (strstr (n->meta.stack_trace, "programs.py"));
  }
  g_assert_cmpuint (n_bw, >, 5);
  /* the primals and tangents as aot_joint_graph names them */
  g_assert_nonnull (fx_graph_find_node (j, "primals_5"));
  g_assert_nonnull (fx_graph_find_node (j, "tangents_1"));
  /* the store's JSON form keeps it, and so does the partition's backward graph */
  fx_buf js;
  fx_buf_init (&js);
  fx_graph_to_json (j, &js);
  fx_graph *back = NULL;
  g_assert_cmpint (fx_graph_from_json (js.data, js.len, &back, &diag), ==, FX_OK);
  fx_buf_free (&js);
  fx_partition p;
  g_assert_cmpint (fx_autograd_partition (j, FX_PARTITION_MIN_CUT, &p, &diag), ==, FX_OK);
  const fx_graph *kept[2] = { back, p.backward };
  for (int k = 0; k < 2; k++)
    {
      const fx_node *mm = fx_graph_find_node (kept[k], "mm");
      g_assert_nonnull (mm);
      g_assert_cmpstr (fx_meta_get_extra (&mm->meta, "partitioner_tag"), ==, "is_backward");
      g_assert_cmpuint (mm->meta.n_from_node, ==, 1);
      g_assert_cmpstr (mm->meta.from_node[0].pass_name, ==, "autograd");
      g_assert_cmpint (mm->meta.seq_nr, >=, 0);
      g_assert_nonnull (mm->meta.stack_trace);
    }
  fx_partition_clear (&p);
  fx_graph_free (back);
  fx_graph_free (j);
  fx_graph_free (g);
  g_free (py);
}

/* An op without a formula is a located error naming the op and the node. */
static void
test_unsupported (void)
{
  const char *text = "class G(torch.nn.Module):\n    def forward(self, x: \"f32[4]\", y: \"f32[4]\"):\n"
                     "        at = torch.ops.aten.atan2.default(x, y)\n        return (at,)\n";
  fx_graph *g = parse_graph ("t.py", text), *j = NULL;
  fx_diag diag;
  g_assert_cmpint (fx_autograd_joint (g, NULL, 0, &j, &diag), ==, FX_ERR_UNSUPPORTED);
  g_assert_null (j);
  g_assert_cmpstr (diag.node, ==, "at");
  g_assert_nonnull (strstr (diag.message, "aten.atan2.default"));
  g_assert_nonnull (strstr (diag.message, "no derivative formula"));
  /* nothing requires grad: no tangents, every grad None, no error */
  bool none[2] = { false, false };
  g_assert_cmpint (fx_autograd_joint (g, none, 2, &j, &diag), ==, FX_OK);
  fx_joint_shape js;
  g_assert_cmpint (fx_joint_shape_of (j, &js, &diag), ==, FX_OK);
  g_assert_cmpuint (js.n_tangents, ==, 0);
  g_assert_cmpuint (js.n_fwd_outputs, ==, 1);
  fx_graph_free (j);
  fx_graph_free (g);
}


/* ---------------------------------------------------------------- partitions */

/* How many values torch 2.11's partitioner saved for KEY ("mlp_block.min_cut") in saved_counts.json. */
static int
torch_saved_count (const char *key)
{
  char *path = g_strdup_printf ("%s/training/graphs/saved_counts.json", env_or ("FX_FIXTURES", "tests/fixtures"));
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  char *k = g_strdup_printf ("\"%s\"", key);
  const char *at = strstr (text, k);
  g_assert_nonnull (at);
  const char *list = strstr (at, "\"saved\": [");
  g_assert_nonnull (list);
  int quotes = 0;
  for (const char *q = list + strlen ("\"saved\": ["); *q && *q != ']'; q++)
    quotes += *q == '"';
  g_free (k);
  g_free (text);
  g_free (path);
  return quotes / 2;
}

/* Runs forward then backward of a partition and checks the grads against the joint graph's. */
static void
check_partition_runs (const grad_case *c, const fx_partition *p)
{
  fx_arena *arena = fx_arena_new ();
  fx_diag diag;
  fx_value *jo = NULL, *fo = NULL, *bo = NULL;
  size_t njo = 0, nfo = 0, nbo = 0;
  run_joint (c, arena, &jo, &njo);
  if (fx_interp_run (p->forward, c->inputs, c->n_primals, NULL, arena, &fo, &nfo, &diag) != FX_OK)
    g_error ("%s: forward: %s", c->name, diag.message);
  g_assert_cmpuint (nfo, ==, p->n_fwd_outputs + p->n_saved);
  fx_value *bin = g_new0 (fx_value, p->n_saved + c->n_tangents + 1);
  memcpy (bin, fo + p->n_fwd_outputs, sizeof (fx_value) * p->n_saved);
  memcpy (bin + p->n_saved, c->inputs + c->n_primals, sizeof (fx_value) * c->n_tangents);
  if (fx_interp_run (p->backward, bin, p->n_saved + c->n_tangents, NULL, arena, &bo, &nbo, &diag) != FX_OK)
    g_error ("%s: backward: %s", c->name, diag.message);
  g_assert_cmpuint (nbo, ==, c->n_primals);
  for (size_t i = 0; i < nbo; i++)
    {
      const fx_value *want = &jo[njo - c->n_primals + i];
      g_assert_cmpint (bo[i].kind, ==, want->kind);
      if (want->kind == FX_VALUE_TENSOR && !fx_allclose (want->u.t, bo[i].u.t, 1e-5, 1e-6, false))
        g_test_fail_printf ("%s: partitioned grad %zu differs from the joint graph's", c->name, i);
    }
  for (size_t i = 0; i < njo; i++)
    fx_value_clear (&jo[i]);
  for (size_t i = 0; i < nfo; i++)
    fx_value_clear (&fo[i]);
  for (size_t i = 0; i < nbo; i++)
    fx_value_clear (&bo[i]);
  g_free (bin);
  fx_arena_free (arena);
}

/* The training programs: the min cut saves no more than torch 2.11's does; both partitions compute the joint's
   grads. */
static void
test_partition_case (gconstpointer data)
{
  const grad_case *c = data;
  if (c->error)
    g_error ("%s: joint graph: %s", c->name, c->error);
  for (int k = 0; k < FX_PARTITION_KIND_COUNT; k++)
    {
      fx_partition p;
      fx_diag diag;
      if (fx_autograd_partition (c->joint, (fx_partition_kind) k, &p, &diag) != FX_OK)
        g_error ("%s: partition: %s", c->name, diag.message);
      for (size_t i = 0; i < p.n_saved; i++)
        {
          g_assert_nonnull (p.saved[i].reason);
          g_test_message ("%s %s: saves %s: %s", c->name, fx_partition_kind_name ((fx_partition_kind) k),
                          p.saved[i].name, p.saved[i].reason);
        }
      if (k == FX_PARTITION_MIN_CUT)
        {
          char *key = g_strdup_printf ("%s.min_cut", c->name + strlen ("training/"));
          int torch_n = torch_saved_count (key);
          g_test_message ("%s: saved %zu, torch 2.11 %d", key, p.n_saved, torch_n);
          if ((int) p.n_saved > torch_n)
            g_test_fail_printf ("%s: saves %zu values, torch 2.11's partitioner %d", key, p.n_saved, torch_n);
          g_free (key);
        }
      check_partition_runs (c, &p);
      fx_partition_clear (&p);
    }
  /* torch 2.11's own joint graph, imported, partitioned by ours */
  const char *name = c->name + strlen ("training/");
  char *jpy = g_strdup_printf ("%s/training/graphs/%s.min_cut.joint.py", env_or ("FX_FIXTURES", "tests/fixtures"), name);
  fx_graph *tj = NULL;
  fx_diag diag;
  size_t changed;
  if (fx_parse_fx_file (jpy, &tj, &diag) != FX_OK)
    g_error ("%s: %s", jpy, diag.message);
  fx_graph_resolve_ops (tj);
  if (fx_pass_shape_prop (tj, &changed, &diag) != FX_OK)
    {
      /* torch's backward uses ops the engine's table lacks (scatter for nll_loss): nothing to partition */
      g_test_message ("%s: torch's joint graph is not runnable here: %s", name, diag.message);
      fx_graph_free (tj);
      g_free (jpy);
      return;
    }
  fx_partition p;
  if (fx_autograd_partition (tj, FX_PARTITION_MIN_CUT, &p, &diag) != FX_OK)
    g_error ("%s: partition of torch's joint graph: %s", name, diag.message);
  char *key = g_strdup_printf ("%s.min_cut", name);
  int torch_n = torch_saved_count (key);
  g_test_message ("%s: torch's joint graph: saved %zu, torch 2.11 %d", key, p.n_saved, torch_n);
  if ((int) p.n_saved > torch_n)
    g_test_fail_printf ("%s: of torch's joint graph saves %zu values, torch 2.11's partitioner %d", key, p.n_saved,
                        torch_n);
  g_free (key);
  fx_partition_clear (&p);
  fx_graph_free (tj);
  g_free (jpy);
}

/* Rematerialization: of a pointwise chain the min cut saves only the input and recomputes the rest in backward;
   save-all saves the intermediate too. */
static void
test_partition_recomputes (void)
{
  const char *text = "class G(torch.nn.Module):\n    def forward(self, x: \"f32[64, 64]\"):\n"
                     "        sin = torch.ops.aten.sin.default(x)\n        cos = torch.ops.aten.cos.default(sin)\n"
                     "        return (cos,)\n";
  fx_graph *g = parse_graph ("chain.py", text), *j = NULL;
  fx_diag diag;
  g_assert_cmpint (fx_autograd_joint (g, NULL, 0, &j, &diag), ==, FX_OK);
  fx_partition p;
  g_assert_cmpint (fx_autograd_partition (j, FX_PARTITION_MIN_CUT, &p, &diag), ==, FX_OK);
  g_assert_cmpuint (p.n_saved, ==, 1);
  g_assert_cmpstr (p.saved[0].name, ==, "primals_1");
  gboolean recomputed = FALSE;
  fx_graph_foreach_node (p.backward, n)
    recomputed = recomputed || (n->target.name && strcmp (n->target.name, "aten.sin.default") == 0);
  g_assert_true (recomputed);
  fx_partition_clear (&p);
  g_assert_cmpint (fx_autograd_partition (j, FX_PARTITION_SAVE_ALL, &p, &diag), ==, FX_OK);
  g_assert_cmpuint (p.n_saved, ==, 2);
  fx_partition_clear (&p);
  /* not a joint graph: a located error, no crash */
  g_assert_cmpint (fx_autograd_partition (g, FX_PARTITION_MIN_CUT, &p, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "not a joint graph"));
  fx_graph_free (j);
  fx_graph_free (g);
}

/* Without a mask, the inputs a trace or load_args marks requires_grad are the ones differentiated. */
static void
test_requires_grad_from_specs (void)
{
  const char *text = "class G(torch.nn.Module):\n    def forward(self, x: \"f32[4]\", w: \"f32[4]\"):\n"
                     "        mul = torch.ops.aten.mul.Tensor(x, w)\n        return (mul,)\n";
  fx_graph *g = parse_graph ("t.py", text), *j = NULL;
  fx_diag diag;
  fx_graph_add_input_spec (g, "x", FX_INPUT_TENSOR);
  fx_graph_add_input_spec (g, "w", FX_INPUT_TENSOR)->requires_grad = true;
  g_assert_cmpint (fx_autograd_joint (g, NULL, 0, &j, &diag), ==, FX_OK);
  const fx_arg *outs = fx_graph_output_node (j)->args[0].u.seq.items;
  g_assert_cmpint (outs[1].kind, ==, FX_ARG_NONE);   /* x */
  g_assert_cmpint (outs[2].kind, ==, FX_ARG_NODE);   /* w: grad_output * x */
  fx_graph_free (j);
  /* no spec says requires_grad: every floating input is differentiated */
  g->inputs[1].requires_grad = false;
  g_assert_cmpint (fx_autograd_joint (g, NULL, 0, &j, &diag), ==, FX_OK);
  outs = fx_graph_output_node (j)->args[0].u.seq.items;
  g_assert_cmpint (outs[1].kind, ==, FX_ARG_NODE);
  g_assert_cmpint (outs[2].kind, ==, FX_ARG_NODE);
  fx_graph_free (j);
  fx_graph_free (g);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("fx-autograd-XXXXXX", NULL);
  cases = g_ptr_array_new_with_free_func (free_case);
  for (size_t i = 0; i < G_N_ELEMENTS (op_cases); i++)
    add_op_case (op_cases[i].name, op_cases[i].sig, op_cases[i].body);
  add_fixture_case ("mlp_block.core_aten.0");
  add_fixture_case ("layernorm_gelu.core_aten.0");
  add_training_case ("mlp_block", 1);
  add_training_case ("layernorm_gelu", 1);
  add_training_case ("cross_entropy", 1);
  add_training_case ("attention_block", 1);
  add_training_case ("transformer_block", 1);
  have_torch = run_torch ();
  for (guint k = 0; k < cases->len; k++)
    {
      grad_case *c = cases->pdata[k];
      char *path = g_strdup_printf ("/autograd/grad/%s", c->name);
      g_test_add_data_func (path, c, test_grad_case);
      g_free (path);
      /* the op graphs also against fp64 finite differences (the fixtures' sizes make that slow) */
      /* (detach cuts the gradient on purpose, which a difference quotient does not see) */
      if (g_str_has_prefix (c->name, "op/") && !g_str_has_prefix (c->name, "op/detach"))
        {
          path = g_strdup_printf ("/autograd/finite-difference/%s", c->name);
          g_test_add_data_func (path, c, test_fd_case);
          g_free (path);
        }
      if (g_str_has_prefix (c->name, "training/"))
        {
          path = g_strdup_printf ("/autograd/partition/%s", c->name + strlen ("training/"));
          g_test_add_data_func (path, c, test_partition_case);
          g_free (path);
        }
    }
  g_test_add_func ("/autograd/provenance", test_provenance);
  g_test_add_func ("/autograd/unsupported", test_unsupported);
  g_test_add_func ("/autograd/requires-grad-from-specs", test_requires_grad_from_specs);
  g_test_add_func ("/autograd/partition-recomputes", test_partition_recomputes);
  int rc = g_test_run ();
  g_ptr_array_unref (cases);
  char *rm[] = { (char *) "rm", (char *) "-rf", tmp_dir, NULL };
  g_spawn_sync (NULL, rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  g_free (tmp_dir);
  return rc;
}
