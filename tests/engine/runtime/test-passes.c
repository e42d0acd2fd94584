/* test-passes.c: the passes (CSE, DCE, decomposition, functionalization, shape propagation, the dumping pipeline)
   and the torch-level lowering on small graphs, the inputs (inputs.json, load_args, saved tensors), located errors
   of the interpreter, and same(). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "fx/accuracy.h"
#include "fx/passes.h"
#include "fx/pyparse.h"
#include "fx/runtime.h"

static fx_graph *
parse (const char *code)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_code (code, strlen (code), "test.py", &g, &diag) != FX_OK)
    g_error ("parse: %s", diag.message);
  fx_graph_resolve_ops (g);
  return g;
}

static int
count_target (const fx_graph *g, const char *target)
{
  int n = 0;
  fx_graph_foreach_node (g, node)
  {
    if (node->op == FX_OP_CALL_FUNCTION && node->target.name && strcmp (node->target.name, target) == 0)
      n++;
  }
  return n;
}

/* Inputs for g (seeded), run, outputs into *outs (allocated in arena). */
static size_t
run (const fx_graph *g, fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outs)
{
  size_t n = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_interp_run (g, inputs, n_inputs, NULL, arena, outs, &n, &diag) != FX_OK)
    g_error ("run: %s", diag.message);
  return n;
}

static void
clear_values (fx_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fx_value_clear (&v[i]);
}

static bool
values_equal (const fx_value *a, const fx_value *b, size_t n)
{
  fx_same_opts so;
  fx_same_opts_init (&so);
  so.tol = 1e-6;
  fx_same_report r;
  return fx_same_values (a, b, NULL, n, &so, &r);
}

/* Deep copies of tensor inputs (in-place graphs mutate them). */
static fx_value *
copy_inputs (const fx_value *in, size_t n, fx_arena *arena)
{
  fx_value *c = fx_arena_alloc (arena, sizeof (fx_value) * (n ? n : 1));
  for (size_t i = 0; i < n; i++)
    c[i] = in[i].kind == FX_VALUE_TENSOR ? fx_value_tensor (fx_tensor_contiguous_copy (NULL, in[i].u.t))
                                         : fx_value_dup (&in[i], arena);
  return c;
}

/* ---------------------------------------------------------------- CSE */

static const char cse_code[] =
  "class G(torch.nn.Module):\n"
  "    def forward(self, x: \"f32[4, 8]\", y: \"f32[4, 8]\"):\n"
  "        add = torch.ops.aten.add.Tensor(x, y)\n"
  "        add_1 = torch.ops.aten.add.Tensor(x, y)\n"
  "        mul = torch.ops.aten.mul.Tensor(add, add_1)\n"
  "        add_2 = torch.ops.aten.add.Tensor(x, y, alpha = 2)\n"
  "        rand = torch.ops.aten.rand.default([4, 8])\n"
  "        rand_1 = torch.ops.aten.rand.default([4, 8])\n"
  "        sub = torch.ops.aten.sub.Tensor(rand, rand_1)\n"
  "        return (mul, add_2, sub)\n";

static void
test_cse (void)
{
  fx_graph *g = parse (cse_code);
  fx_arena *arena = fx_arena_new ();
  fx_value *in, *before, *after;
  size_t n_in;
  fx_diag diag;
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 1, NULL, arena, &in, &n_in, &diag), ==, FX_OK);
  size_t nb = run (g, in, n_in, arena, &before);
  size_t changed = 99;
  g_assert_cmpint (fx_pass_cse (g, &changed, &diag), ==, FX_OK);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);
  /* the duplicate add merges; add with another alpha and the random draws stay */
  g_assert_cmpuint (changed, ==, 1);
  g_assert_null (fx_graph_find_node (g, "add_1"));
  fx_node *mul = fx_graph_find_node (g, "mul");
  g_assert_true (mul->args[0].u.node == mul->args[1].u.node);
  g_assert_cmpstr (mul->args[0].u.node->name, ==, "add");
  g_assert_nonnull (fx_graph_find_node (g, "add_2"));
  g_assert_nonnull (fx_graph_find_node (g, "rand_1"));
  g_assert_cmpint (count_target (g, "aten.rand.default"), ==, 2);
  size_t na = run (g, in, n_in, arena, &after);
  g_assert_cmpuint (na, ==, nb);
  /* same values (the random output is drawn from a fresh seed-0 generator each run) */
  g_assert_true (values_equal (before, after, 3));
  /* a second CSE finds nothing */
  g_assert_cmpint (fx_pass_cse (g, &changed, &diag), ==, FX_OK);
  g_assert_cmpuint (changed, ==, 0);
  clear_values (before, nb);
  clear_values (after, na);
  clear_values (in, n_in);
  fx_arena_free (arena);
  fx_graph_free (g);

  /* a long graph: 3000 identical adds feeding a chain of muls merge into one add */
  g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_node *acc = x;
  for (int k = 0; k < 3000; k++)
    {
      fx_arg a1[2] = { fx_arg_node (x), fx_arg_int (1) };
      fx_node *e = fx_graph_call_function (g, fx_target_op ("aten.add.Tensor"), a1, 2, NULL, 0);
      fx_arg a2[2] = { fx_arg_node (acc), fx_arg_node (e) };
      acc = fx_graph_call_function (g, fx_target_op ("aten.mul.Tensor"), a2, 2, NULL, 0);
    }
  fx_arg out1[1] = { fx_arg_node (acc) };
  fx_graph_output (g, fx_arg_tuple (out1, 1));
  fx_graph_resolve_ops (g);
  g_assert_cmpint (fx_pass_cse (g, &changed, &diag), ==, FX_OK);
  g_assert_cmpuint (changed, ==, 2999);
  g_assert_cmpint (count_target (g, "aten.add.Tensor"), ==, 1);
  g_assert_cmpint (count_target (g, "aten.mul.Tensor"), ==, 3000);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);
  fx_graph_free (g);

  /* a mutation in between: the second add reads the mutated x and must stay */
  g = parse ("class G(torch.nn.Module):\n"
             "    def forward(self, x: \"f32[4]\", y: \"f32[4]\"):\n"
             "        add = torch.ops.aten.add.Tensor(x, y)\n"
             "        add_ = torch.ops.aten.add_.Tensor(x, 1)\n"
             "        add_1 = torch.ops.aten.add.Tensor(x, y)\n"
             "        sub = torch.ops.aten.sub.Tensor(add_1, add)\n"
             "        return (sub,)\n");
  g_assert_cmpint (fx_pass_cse (g, &changed, &diag), ==, FX_OK);
  g_assert_cmpuint (changed, ==, 0);
  g_assert_nonnull (fx_graph_find_node (g, "add_1"));
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- DCE */

static void
test_dce (void)
{
  fx_graph *g = parse ("class G(torch.nn.Module):\n"
                       "    def forward(self, x: \"f32[4, 8]\", unused: \"f32[2]\"):\n"
                       "        add = torch.ops.aten.add.Tensor(x, 1)\n"
                       "        dead = torch.ops.aten.mul.Tensor(x, 2)\n"
                       "        dead_exp = torch.ops.aten.exp.default(dead)\n"
                       "        mutate = torch.ops.aten.add_.Tensor(x, 3)\n"
                       "        return (add,)\n");
  size_t before = g->n_nodes, changed = 0;
  fx_diag diag;
  g_assert_cmpint (fx_pass_dce (g, &changed, &diag), ==, FX_OK);
  g_assert_cmpuint (changed, ==, 2);
  g_assert_cmpuint (g->n_nodes, ==, before - 2);
  g_assert_null (fx_graph_find_node (g, "dead"));
  g_assert_null (fx_graph_find_node (g, "dead_exp"));
  /* in-place ops are impure, unused placeholders stay */
  g_assert_nonnull (fx_graph_find_node (g, "mutate"));
  g_assert_nonnull (fx_graph_find_node (g, "unused"));
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- decomposition */

static void
check_decomposed (const char *code, const char *composite, const char *const *expect, size_t n_expect)
{
  fx_graph *g = parse (code);
  fx_arena *arena = fx_arena_new ();
  fx_value *in, *before, *after;
  size_t n_in;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 5, NULL, arena, &in, &n_in, &diag), ==, FX_OK);
  size_t nb = run (g, in, n_in, arena, &before);
  size_t changed = 0, composites = 0;
  fx_graph_foreach_node (g, n)
  {
    if (n->op == FX_OP_CALL_FUNCTION && n->target.op_id >= 0 && fx_op_get ((fx_op_id) n->target.op_id)->decomp)
      composites++;
  }
  if (fx_pass_decompose (g, &changed, &diag) != FX_OK)
    g_error ("decompose: %s", diag.message);
  g_assert_cmpuint (changed, ==, composites);
  g_assert_cmpuint (composites, >=, 1);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);
  g_assert_cmpint (count_target (g, composite), ==, 0);
  for (size_t i = 0; i < n_expect; i++)
    if (count_target (g, expect[i]) == 0)
      g_error ("decomposed graph has no %s", expect[i]);
  /* provenance: every new call names the pass and the node it came from */
  fx_graph_foreach_node (g, n)
  {
    if (n->op != FX_OP_CALL_FUNCTION || n->target.kind != FX_TARGET_OP)
      continue;
    g_assert_cmpuint (n->meta.n_from_node, >=, 1);
    g_assert_cmpstr (n->meta.from_node[0].pass_name, ==, "decompose");
    g_assert_nonnull (n->meta.stack_trace);
  }
  size_t na = run (g, in, n_in, arena, &after);
  g_assert_cmpuint (na, ==, nb);
  fx_same_opts so;
  fx_same_opts_init (&so);
  so.tol = 1e-5;
  fx_same_report r;
  if (!fx_same_values (before, after, NULL, nb, &so, &r))
    g_error ("decomposition changed the result: %s", r.message);
  clear_values (before, nb);
  clear_values (after, na);
  clear_values (in, n_in);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* Outputs equal to the bit (tensors compared as bytes). */
static void
assert_bitwise (const fx_value *a, const fx_value *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      g_assert_cmpint (a[i].kind, ==, FX_VALUE_TENSOR);
      g_assert_cmpint (b[i].kind, ==, FX_VALUE_TENSOR);
      fx_tensor *ca = fx_tensor_contiguous_copy (NULL, a[i].u.t), *cb = fx_tensor_contiguous_copy (NULL, b[i].u.t);
      g_assert_cmpint (fx_tensor_numel (ca), ==, fx_tensor_numel (cb));
      g_assert_cmpint (memcmp (fx_tensor_data (ca), fx_tensor_data (cb),
                               (size_t) fx_tensor_numel (ca) * fx_dtype_size (ca->dtype)), ==, 0);
      fx_tensor_unref (ca);
      fx_tensor_unref (cb);
    }
}

/* Decomposed, then sink_gather; returns how many gathers it moved. The outputs after are the decomposed graph's
   to the bit. */
static size_t
check_sunk (const char *code, const char *first_gathered)
{
  fx_graph *g = parse (code);
  fx_arena *arena = fx_arena_new ();
  fx_value *in, *before, *after;
  size_t n_in, changed = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 7, NULL, arena, &in, &n_in, &diag), ==, FX_OK);
  g_assert_cmpint (fx_pass_decompose (g, NULL, &diag), ==, FX_OK);
  size_t nb = run (g, in, n_in, arena, &before);
  g_assert_cmpint (fx_pass_sink_gather (g, &changed, &diag), ==, FX_OK);
  g_assert_cmpint (fx_pass_dce (g, NULL, &diag), ==, FX_OK);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);
  /* every gather left reads first_gathered */
  fx_graph_foreach_node (g, n)
  {
    if (n->op == FX_OP_CALL_FUNCTION && n->target.name && strcmp (n->target.name, "aten.gather.default") == 0)
      {
        g_assert_cmpint (n->args[0].kind, ==, FX_ARG_NODE);
        g_assert_cmpstr (n->args[0].u.node->name, ==, first_gathered);
        if (changed)
          g_assert_cmpstr (n->meta.from_node[0].pass_name, ==, "sink_gather");
      }
  }
  size_t na = run (g, in, n_in, arena, &after);
  g_assert_cmpuint (na, ==, nb);
  assert_bitwise (before, after, nb);
  clear_values (before, nb);
  clear_values (after, na);
  clear_values (in, n_in);
  fx_arena_free (arena);
  fx_graph_free (g);
  return changed;
}

static void
test_sink_gather (void)
{
  /* cross entropy: gather(log_softmax(x)) is x's gathered element less the row max and the log of the row sum */
  g_assert_cmpuint (check_sunk ("class G(torch.nn.Module):\n"
                                "    def forward(self, x: \"f32[64, 16]\", t: \"i64[64]\"):\n"
                                "        _log_softmax = torch.ops.aten._log_softmax.default(x, 1, False)\n"
                                "        nll = torch.ops.aten.nll_loss_forward.default(_log_softmax, t, None, 1, 3)\n"
                                "        getitem = nll[0]\n"
                                "        return (getitem,)\n",
                                "x"),
                    ==, 2);
  /* several picks per row, a scalar operand and a unary op on the way; the row statistic of another shape */
  g_assert_cmpuint (check_sunk ("class G(torch.nn.Module):\n"
                                "    def forward(self, x: \"f32[8, 12]\", r: \"f32[8, 1]\", i: \"i64[8, 3]\"):\n"
                                "        mul = torch.ops.aten.mul.Tensor(x, 2.5)\n"
                                "        sub = torch.ops.aten.sub.Tensor(mul, r)\n"
                                "        exp = torch.ops.aten.exp.default(sub)\n"
                                "        clamp = torch.ops.aten.clamp.default(i, 0, 11)\n"
                                "        gather = torch.ops.aten.gather.default(exp, 1, clamp)\n"
                                "        return (gather, sub)\n",
                                "x"),
                    ==, 3);
  /* not moved: an operand that varies along the gathered dim with another shape ([12] against [8, 12]), a gather
     along dim 0 of a per-row statistic, and an index with fewer rows than self */
  g_assert_cmpuint (check_sunk ("class G(torch.nn.Module):\n"
                                "    def forward(self, x: \"f32[8, 12]\", c: \"f32[12]\", i: \"i64[8, 2]\"):\n"
                                "        add = torch.ops.aten.add.Tensor(x, c)\n"
                                "        clamp = torch.ops.aten.clamp.default(i, 0, 11)\n"
                                "        gather = torch.ops.aten.gather.default(add, 1, clamp)\n"
                                "        return (gather,)\n",
                                "add"),
                    ==, 0);
  g_assert_cmpuint (check_sunk ("class G(torch.nn.Module):\n"
                                "    def forward(self, x: \"f32[8, 12]\", r: \"f32[8, 1]\", i: \"i64[3, 12]\"):\n"
                                "        add = torch.ops.aten.add.Tensor(x, r)\n"
                                "        clamp = torch.ops.aten.clamp.default(i, 0, 7)\n"
                                "        gather = torch.ops.aten.gather.default(add, 0, clamp)\n"
                                "        return (gather,)\n",
                                "add"),
                    ==, 0);
  g_assert_cmpuint (check_sunk ("class G(torch.nn.Module):\n"
                                "    def forward(self, x: \"f32[8, 12]\", r: \"f32[8, 1]\", i: \"i64[5, 2]\"):\n"
                                "        add = torch.ops.aten.add.Tensor(x, r)\n"
                                "        clamp = torch.ops.aten.clamp.default(i, 0, 11)\n"
                                "        gather = torch.ops.aten.gather.default(add, 1, clamp)\n"
                                "        return (gather,)\n",
                                "add"),
                    ==, 0);
}

static void
test_decompose (void)
{
  static const char *const softmax_ops[] = { "aten.amax.default", "aten.sub.Tensor", "aten.exp.default",
                                             "aten.sum.dim_IntList", "aten.div.Tensor" };
  check_decomposed ("class G(torch.nn.Module):\n"
                    "    def forward(self, x: \"f32[6, 10]\"):\n"
                    "        # File: /m.py:3 in forward, code: return x.softmax(-1)\n"
                    "        _softmax = torch.ops.aten._softmax.default(x, -1, False)\n"
                    "        return (_softmax,)\n",
                    "aten._softmax.default", softmax_ops, G_N_ELEMENTS (softmax_ops));
  /* nll_loss_forward as torch._decomp's: targets are 0..15 here, and 3 is the ignore_index (about 4 of 64 ignored) */
  static const char *const nll_ops[] = { "aten.gather.default", "aten.neg.default", "aten.masked_fill.Scalar",
                                         "aten.sum.default" };
  check_decomposed ("class G(torch.nn.Module):\n"
                    "    def forward(self, x: \"f32[64, 16]\", t: \"i64[64]\"):\n"
                    "        # File: /m.py:3 in forward, code: return F.nll_loss(x, t)\n"
                    "        nll_loss_forward = torch.ops.aten.nll_loss_forward.default(x, t, None, 1, 3)\n"
                    "        getitem = nll_loss_forward[0]\n"
                    "        getitem_1 = nll_loss_forward[1]\n"
                    "        return (getitem, getitem_1)\n",
                    "aten.nll_loss_forward.default", nll_ops, G_N_ELEMENTS (nll_ops));
  /* 'sum' of an intermediate self (no shapes yet when decompose runs), total_weight unread */
  check_decomposed ("class G(torch.nn.Module):\n"
                    "    def forward(self, x: \"f32[64, 16]\", t: \"i64[64]\"):\n"
                    "        # File: /m.py:2 in forward, code: x = x.log_softmax(1)\n"
                    "        _log_softmax = torch.ops.aten._log_softmax.default(x, 1, False)\n"
                    "        # File: /m.py:3 in forward, code: return F.nll_loss(x, t)\n"
                    "        nll_loss_forward = torch.ops.aten.nll_loss_forward.default(_log_softmax, t, None, 2, -100)\n"
                    "        getitem = nll_loss_forward[0]\n"
                    "        getitem_1 = nll_loss_forward[1]\n"
                    "        return (getitem,)\n",
                    "aten.nll_loss_forward.default", nll_ops, G_N_ELEMENTS (nll_ops));
  /* 'none' in float64: per-sample losses, total_weight a float64 zero */
  static const char *const nll_none_ops[] = { "aten.gather.default", "aten.scalar_tensor.default" };
  check_decomposed ("class G(torch.nn.Module):\n"
                    "    def forward(self, x: \"f64[64, 16]\", t: \"i64[64]\"):\n"
                    "        # File: /m.py:3 in forward, code: return F.nll_loss(x, t)\n"
                    "        nll_loss_forward = torch.ops.aten.nll_loss_forward.default(x, t, None, 0, 3)\n"
                    "        getitem = nll_loss_forward[0]\n"
                    "        getitem_1 = nll_loss_forward[1]\n"
                    "        return (getitem, getitem_1)\n",
                    "aten.nll_loss_forward.default", nll_none_ops, G_N_ELEMENTS (nll_none_ops));
  static const char *const log_softmax_ops[] = { "aten.log.default", "aten.sub.Tensor" };
  check_decomposed ("class G(torch.nn.Module):\n"
                    "    def forward(self, x: \"f32[6, 10]\"):\n"
                    "        # File: /m.py:3 in forward, code: return x.log_softmax(0)\n"
                    "        _log_softmax = torch.ops.aten._log_softmax.default(x, 0, False)\n"
                    "        return (_log_softmax,)\n",
                    "aten._log_softmax.default", log_softmax_ops, G_N_ELEMENTS (log_softmax_ops));
  static const char *const ln_ops[] = { "aten.var_mean.correction", "aten.rsqrt.default", "aten.mul.Tensor" };
  check_decomposed ("class G(torch.nn.Module):\n"
                    "    def forward(self, w: \"f32[16]\", b: \"f32[16]\", x: \"f32[5, 16]\"):\n"
                    "        # File: /m.py:3 in forward, code: return self.ln(x)\n"
                    "        native_layer_norm = torch.ops.aten.native_layer_norm.default(x, [16], w, b, 1e-05)\n"
                    "        getitem = native_layer_norm[0]\n"
                    "        return (getitem,)\n",
                    "aten.native_layer_norm.default", ln_ops, G_N_ELEMENTS (ln_ops));
  /* several composites in a chain, each decomposed once */
  static const char *const chain_ops[] = { "aten.exp.default", "aten.var_mean.correction", "aten.log.default" };
  check_decomposed ("class G(torch.nn.Module):\n"
                    "    def forward(self, x: \"f32[5, 16]\"):\n"
                    "        # File: /m.py:3 in forward, code: return ...\n"
                    "        _softmax = torch.ops.aten._softmax.default(x, -1, False)\n"
                    "        native_layer_norm = torch.ops.aten.native_layer_norm.default(_softmax, [16], None, None, 1e-05)\n"
                    "        getitem = native_layer_norm[0]\n"
                    "        _log_softmax = torch.ops.aten._log_softmax.default(getitem, 0, False)\n"
                    "        _softmax_1 = torch.ops.aten._softmax.default(_log_softmax, 1, False)\n"
                    "        return (_softmax_1, getitem)\n",
                    "aten._softmax.default", chain_ops, G_N_ELEMENTS (chain_ops));
}

/* ---------------------------------------------------------------- functionalization */

static void
test_functionalize (void)
{
  fx_graph *g = parse ("class G(torch.nn.Module):\n"
                       "    def forward(self, x: \"f32[4, 8]\", y: \"f32[4, 8]\"):\n"
                       "        add_ = torch.ops.aten.add_.Tensor(x, y)\n"
                       "        mul = torch.ops.aten.mul.Tensor(add_, 2)\n"
                       "        relu_ = torch.ops.aten.relu_.default(mul)\n"
                       "        sub = torch.ops.aten.sub.Tensor(x, relu_)\n"
                       "        return (sub,)\n");
  fx_arena *arena = fx_arena_new ();
  fx_value *in, *before, *after;
  size_t n_in;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 3, NULL, arena, &in, &n_in, &diag), ==, FX_OK);
  fx_value *in1 = copy_inputs (in, n_in, arena), *in2 = copy_inputs (in, n_in, arena);
  size_t nb = run (g, in1, n_in, arena, &before);
  size_t changed = 0;
  if (fx_pass_functionalize (g, &changed, &diag) != FX_OK)
    g_error ("functionalize: %s", diag.message);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);
  g_assert_cmpuint (changed, ==, 2);
  g_assert_cmpint (count_target (g, "aten.add_.Tensor"), ==, 0);
  g_assert_cmpint (count_target (g, "aten.relu_.default"), ==, 0);
  g_assert_cmpint (count_target (g, "aten.add.Tensor"), ==, 1);
  g_assert_cmpint (count_target (g, "aten.relu.default"), ==, 1);
  /* the mutated input x gets one copy_ back, as the last node before the output */
  g_assert_cmpint (count_target (g, "aten.copy_.default"), ==, 1);
  fx_node *out = fx_graph_output_node (g);
  fx_node *copy = out->prev;
  g_assert_cmpstr (copy->target.name, ==, "aten.copy_.default");
  g_assert_cmpstr (copy->args[0].u.node->name, ==, "x");
  g_assert_cmpstr (copy->args[1].u.node->target.name, ==, "aten.add.Tensor");
  /* later readers of x read the functional result */
  fx_node *sub = fx_graph_find_node (g, "sub");
  g_assert_cmpstr (sub->args[0].u.node->target.name, ==, "aten.add.Tensor");
  fx_node *add = copy->args[1].u.node;
  g_assert_cmpuint (add->meta.n_from_node, ==, 1);
  g_assert_cmpstr (add->meta.from_node[0].pass_name, ==, "functionalize");
  g_assert_cmpstr (add->meta.from_node[0].name, ==, "add_");
  /* same outputs, and x ends up mutated the same way */
  size_t na = run (g, in2, n_in, arena, &after);
  g_assert_true (values_equal (before, after, nb));
  g_assert_true (values_equal (in1, in2, n_in));
  g_assert_false (values_equal (in, in1, 1));
  /* idempotent */
  g_assert_cmpint (fx_pass_functionalize (g, &changed, &diag), ==, FX_OK);
  g_assert_cmpuint (changed, ==, 0);
  clear_values (before, nb);
  clear_values (after, na);
  clear_values (in, n_in);
  clear_values (in1, n_in);
  clear_values (in2, n_in);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- shape propagation */

typedef struct
{
  fx_graph *g;
  int checked;
} shape_check;

static void
check_meta (const fx_node *node, const fx_value *v, void *data)
{
  shape_check *c = data;
  if (node->op == FX_OP_OUTPUT || node->op == FX_OP_PLACEHOLDER || v->kind != FX_VALUE_TENSOR)
    return;
  const fx_val *m = &node->meta.val;
  if (m->kind != FX_VAL_TENSOR)
    g_error ("node %s: shape_prop left no tensor meta", node->name);
  g_assert_cmpint (m->tensor.dtype, ==, v->u.t->dtype);
  g_assert_cmpint (m->tensor.ndim, ==, v->u.t->ndim);
  for (int d = 0; d < v->u.t->ndim; d++)
    {
      g_assert_cmpint (m->tensor.sizes[d].value, ==, v->u.t->sizes[d]);
      if (v->u.t->sizes[d] > 1)
        g_assert_cmpint (m->tensor.strides[d].value, ==, v->u.t->strides[d]);
    }
  c->checked++;
}

static void
test_shape_prop (void)
{
  fx_graph *g = parse ("class G(torch.nn.Module):\n"
                       "    def forward(self, x: \"f32[4, 8]\", w: \"f32[8, 3]\", i: \"i64[5]\"):\n"
                       "        mm = torch.ops.aten.mm.default(x, w)\n"
                       "        t = torch.ops.aten.t.default(mm)\n"
                       "        sum_1 = torch.ops.aten.sum.dim_IntList(t, [1], True)\n"
                       "        var_mean = torch.ops.aten.var_mean.correction(x, [1], correction = 0, keepdim = True)\n"
                       "        getitem = var_mean[0]\n"
                       "        index = torch.ops.aten.index_select.default(w, 0, i)\n"
                       "        lt = torch.ops.aten.lt.Scalar(index, 0)\n"
                       "        return (sum_1, t, getitem, lt)\n");
  size_t changed = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_pass_shape_prop (g, &changed, &diag) != FX_OK)
    g_error ("shape_prop: %s", diag.message);
  g_assert_cmpuint (changed, >=, 7);
  fx_node *t = fx_graph_find_node (g, "t");
  g_assert_cmpint (t->meta.val.kind, ==, FX_VAL_TENSOR);
  g_assert_cmpint (t->meta.val.tensor.sizes[0].value, ==, 3);
  g_assert_cmpint (t->meta.val.tensor.sizes[1].value, ==, 4);
  g_assert_cmpint (t->meta.val.tensor.strides[0].value, ==, 1);
  g_assert_cmpint (t->meta.val.tensor.strides[1].value, ==, 3);
  fx_node *lt = fx_graph_find_node (g, "lt");
  g_assert_cmpint (lt->meta.val.tensor.dtype, ==, FX_DTYPE_BOOL);
  fx_node *vm = fx_graph_find_node (g, "var_mean");
  g_assert_cmpint (vm->meta.val.kind, ==, FX_VAL_TUPLE);
  g_assert_cmpuint (vm->meta.val.n_items, ==, 2);
  /* the annotation print_readable shows now */
  fx_buf b;
  fx_buf_init (&b);
  g_assert_true (fx_val_annotation (&fx_graph_find_node (g, "sum_1")->meta.val, true, false, &b));
  g_assert_cmpstr (b.data, ==, "f32[3, 1][1, 1]");
  fx_buf_free (&b);
  /* every meta matches what the interpreter computes */
  fx_arena *arena = fx_arena_new ();
  fx_value *in, *outs;
  size_t n_in, n_out;
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 2, NULL, arena, &in, &n_in, &diag), ==, FX_OK);
  shape_check c = { g, 0 };
  fx_interp_opts opts = { .on_node = check_meta, .on_node_data = &c };
  g_assert_cmpint (fx_interp_run (g, in, n_in, &opts, arena, &outs, &n_out, &diag), ==, FX_OK);
  g_assert_cmpint (c.checked, >=, 6);
  clear_values (outs, n_out);
  clear_values (in, n_in);
  fx_arena_free (arena);
  fx_graph_free (g);

  /* a torch-level graph: the metas land on the torch nodes */
  g = parse ("class GraphModule(torch.nn.Module):\n"
             "    def forward(self, L_x_: \"f32[3, 4]\", L_w_: \"f32[5, 4]\"):\n"
             "        l_x_ = L_x_\n"
             "        l_w_ = L_w_\n"
             "        linear = torch._C._nn.linear(l_x_, l_w_)\n"
             "        sum_1 = linear.sum(1)\n"
             "        return (sum_1,)\n");
  fx_diag_clear (&diag);
  if (fx_pass_shape_prop (g, &changed, &diag) != FX_OK)
    g_error ("shape_prop (torch-level): %s", diag.message);
  g_assert_cmpuint (changed, ==, 2);
  fx_node *lin = fx_graph_find_node (g, "linear");
  g_assert_cmpint (lin->meta.val.kind, ==, FX_VAL_TENSOR);
  g_assert_cmpint (lin->meta.val.tensor.sizes[0].value, ==, 3);
  g_assert_cmpint (lin->meta.val.tensor.sizes[1].value, ==, 5);
  fx_node *s1 = fx_graph_find_node (g, "sum_1");
  g_assert_cmpint (s1->meta.val.tensor.ndim, ==, 1);
  g_assert_cmpint (s1->meta.val.tensor.sizes[0].value, ==, 3);
  fx_graph_free (g);

  /* a placeholder with no shape: a located error */
  g = parse ("class G(torch.nn.Module):\n"
             "    def forward(self, x):\n"
             "        neg = torch.ops.aten.neg.default(x)\n"
             "        return (neg,)\n");
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_pass_shape_prop (g, &changed, &diag), !=, FX_OK);
  g_assert_cmpstr (diag.node, ==, "x");
  g_assert_cmpstr (diag.pass, ==, "shape_prop");
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- the pipeline and its dump */

static void
test_pipeline_dump (void)
{
  fx_graph *g = parse (cse_code);
  const char *names[] = { "cse", "dce", "decompose", "functionalize", "shape_prop" };
  fx_buf dump;
  fx_buf_init (&dump);
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_pass_pipeline (g, names, G_N_ELEMENTS (names), &dump, &diag) != FX_OK)
    g_error ("pipeline: %s", diag.message);
  g_assert_nonnull (strstr (dump.data, "# after cse: 1 changed\n"));
  g_assert_nonnull (strstr (dump.data, "# after dce: 0 changed\n"));
  g_assert_nonnull (strstr (dump.data, "# after decompose: 0 changed\n"));
  g_assert_nonnull (strstr (dump.data, "# after functionalize: 0 changed\n"));
  g_assert_nonnull (strstr (dump.data, "# after shape_prop: "));
  /* each section is followed by the graph as print_readable shows it */
  const char *cse = strstr (dump.data, "# after cse");
  const char *dce = strstr (dump.data, "# after dce");
  g_assert_true (cse == dump.data && dce > cse);
  char *sect = g_strndup (cse, (size_t) (dce - cse));
  g_assert_nonnull (strstr (sect, "def forward(self, x: \"f32[4, 8]\", y: \"f32[4, 8]\")"));
  g_assert_null (strstr (sect, "add_1 ="));
  g_assert_nonnull (strstr (sect, "mul = torch.ops.aten.mul.Tensor(add, add)"));
  g_free (sect);
  /* after shape_prop the intermediate nodes carry annotations */
  g_assert_nonnull (strstr (strstr (dump.data, "# after shape_prop"), "mul: \"f32[4, 8][8, 1]"));
  fx_buf_free (&dump);

  /* an unknown pass names the known ones */
  const char *bad[] = { "cse", "constant_fold" };
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_pass_pipeline (g, bad, 2, NULL, &diag), ==, FX_ERR_NOT_FOUND);
  g_assert_nonnull (strstr (diag.message, "unknown pass 'constant_fold'"));
  g_assert_nonnull (strstr (diag.message, "functionalize"));
  g_assert_nonnull (fx_pass_find ("decompose"));
  g_assert_null (fx_pass_find ("nope"));
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- lowering */

static const char toy_dynamo[] =
  "class GraphModule(torch.nn.Module):\n"
  "    def forward(self, L_a_: \"f32[10][1]cuda:0\", L_b_: \"f32[10][1]cuda:0\"):\n"
  "        l_a_ = L_a_\n"
  "        l_b_ = L_b_\n"
  "\n"
  "        # File: /home/user/traces/toy_graph_break-cuda/program.py:6 in toy_example, code: x = a / (torch.abs(a) + 1)\n"
  "        abs_1: \"f32[10][1]cuda:0\" = torch.abs(l_a_)\n"
  "        add: \"f32[10][1]cuda:0\" = abs_1 + 1;  abs_1 = None\n"
  "        x: \"f32[10][1]cuda:0\" = l_a_ / add;  l_a_ = add = None\n"
  "\n"
  "        # File: /home/user/traces/toy_graph_break-cuda/program.py:7 in toy_example, code: if b.sum() < 0:\n"
  "        sum_1: \"f32[][]cuda:0\" = l_b_.sum();  l_b_ = None\n"
  "        lt: \"b8[][]cuda:0\" = sum_1 < 0;  sum_1 = None\n"
  "        return (lt, x)\n";

static void
test_lower_provenance (void)
{
  fx_graph *g = parse (toy_dynamo);
  g_assert_true (fx_graph_is_torch_level (g));
  fx_graph *l = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_lower_to_aten (g, &l, &diag) != FX_OK)
    g_error ("lower: %s", diag.message);
  g_assert_false (fx_graph_is_torch_level (l));
  g_assert_cmpint (fx_graph_verify (l, &diag), ==, FX_OK);
  /* the ATen ops AOTAutograd makes of this frame (its fx_graph_runnable.py: abs, add.Tensor, div.Tensor, sum,
     lt.Scalar) */
  static const char *const want[] = { "aten.abs.default", "aten.add.Tensor", "aten.div.Tensor", "aten.sum.default",
                                      "aten.lt.Scalar" };
  size_t k = 0;
  fx_graph_foreach_node (l, n)
  {
    if (n->op != FX_OP_CALL_FUNCTION)
      continue;
    g_assert_cmpuint (k, <, G_N_ELEMENTS (want));
    g_assert_cmpstr (n->target.name, ==, want[k]);
    k++;
    /* provenance: the torch node it came from, its stack trace, the ATen op */
    g_assert_cmpuint (n->meta.n_from_node, ==, 1);
    g_assert_cmpstr (n->meta.from_node[0].pass_name, ==, "lower_to_aten");
    g_assert_nonnull (n->meta.stack_trace);
    g_assert_nonnull (strstr (n->meta.stack_trace, "program.py"));
    g_assert_cmpstr (n->meta.original_aten, ==, n->target.name);
  }
  g_assert_cmpuint (k, ==, G_N_ELEMENTS (want));
  fx_node *abs = NULL;
  fx_graph_foreach_node (l, n)
  {
    if (n->target.name && strcmp (n->target.name, "aten.abs.default") == 0)
      abs = n;
  }
  g_assert_cmpstr (abs->meta.from_node[0].name, ==, "abs_1");
  g_assert_cmpstr (abs->meta.from_node[0].target, ==, "torch.abs");
  g_assert_nonnull (strstr (abs->meta.stack_trace, "line 6, in toy_example"));
  /* placeholders are AOT's arg0_1, arg1_1 with the Dynamo metadata */
  fx_node *p0 = l->first;
  g_assert_cmpint (p0->op, ==, FX_OP_PLACEHOLDER);
  g_assert_cmpstr (p0->name, ==, "arg0_1");
  g_assert_cmpint (p0->meta.val.kind, ==, FX_VAL_TENSOR);
  g_assert_cmpstr (p0->next->name, ==, "arg1_1");
  /* the interpreter runs the torch-level graph through the same lowering */
  fx_arena *arena = fx_arena_new ();
  fx_value *in, *o1, *o2;
  size_t n_in;
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 4, NULL, arena, &in, &n_in, &diag), ==, FX_OK);
  size_t n1 = run (g, in, n_in, arena, &o1), n2 = run (l, in, n_in, arena, &o2);
  g_assert_cmpuint (n1, ==, 2);
  g_assert_cmpuint (n2, ==, 2);
  g_assert_true (values_equal (o1, o2, 2));
  g_assert_cmpint (o1[0].u.t->dtype, ==, FX_DTYPE_BOOL);
  g_assert_cmpint (o1[0].u.t->ndim, ==, 0);
  clear_values (o1, n1);
  clear_values (o2, n2);
  clear_values (in, n_in);
  fx_arena_free (arena);
  fx_graph_free (l);
  fx_graph_free (g);

  /* a torch function without a lowering: located error */
  g = parse ("class GraphModule(torch.nn.Module):\n"
             "    def forward(self, L_x_: \"f32[4]\"):\n"
             "        l_x_ = L_x_\n"
             "        fft = torch.fft.fft(l_x_);  l_x_ = None\n"
             "        return (fft,)\n");
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_lower_to_aten (g, &l, &diag), ==, FX_ERR_UNSUPPORTED);
  g_assert_null (l);
  g_assert_cmpstr (diag.node, ==, "fft");
  g_assert_nonnull (strstr (diag.message, "torch.fft.fft"));
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- inputs */

static char *
write_tmp (const char *dir, const char *name, const char *text)
{
  char *p = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (p, text, -1, NULL));
  return p;
}

static void
test_inputs_json (void)
{
  char *dir = g_dir_make_tmp ("fx-inputs-XXXXXX", NULL);
  fx_graph *g = parse ("class G(torch.nn.Module):\n"
                       "    def forward(self, x, i, n):\n"
                       "        t = torch.ops.aten.t.default(x)\n"
                       "        return (t, i)\n");
  char *js = write_tmp (dir, "in.json",
                        "[{\"shape\": [4, 3], \"stride\": [1, 4], \"dtype\": \"torch.float32\", \"device\": \"cuda:0\"},\n"
                        " {\"shape\": [5], \"dtype\": \"torch.int64\"},\n"
                        " 7]\n");
  fx_arena *arena = fx_arena_new ();
  fx_value *in;
  size_t n;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_inputs_make (g, FX_INPUTS_JSON, js, 9, NULL, arena, &in, &n, &diag) != FX_OK)
    g_error ("inputs: %s", diag.message);
  g_assert_cmpuint (n, ==, 3);
  fx_tensor *x = in[0].u.t;
  g_assert_cmpint (x->dtype, ==, FX_DTYPE_F32);
  g_assert_cmpint (x->sizes[0], ==, 4);
  g_assert_cmpint (x->sizes[1], ==, 3);
  g_assert_cmpint (x->strides[0], ==, 1);
  g_assert_cmpint (x->strides[1], ==, 4);
  g_assert_false (fx_tensor_is_contiguous (x));
  fx_tensor *i = in[1].u.t;
  g_assert_cmpint (i->dtype, ==, FX_DTYPE_I64);
  for (int k = 0; k < 5; k++)
    {
      int64_t v = fx_tensor_get_i64 (i, k);
      g_assert_true (v >= 0 && v < 16);
    }
  g_assert_cmpint (in[2].kind, ==, FX_VALUE_INT);
  g_assert_cmpint (in[2].u.i, ==, 7);
  /* seeded: the same seed gives the same values, another seed others */
  fx_value *again, *other;
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_JSON, js, 9, NULL, arena, &again, &n, &diag), ==, FX_OK);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_JSON, js, 10, NULL, arena, &other, &n, &diag), ==, FX_OK);
  g_assert_true (values_equal (in, again, 2));
  g_assert_false (values_equal (in, other, 1));
  clear_values (in, 3);
  clear_values (again, 3);
  clear_values (other, 3);

  /* wrong count, bad JSON (located), bad dtype */
  char *js2 = write_tmp (dir, "two.json", "[{\"shape\": [2]}, {\"shape\": [3]}]");
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_JSON, js2, 0, NULL, arena, &in, &n, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "describes 2 inputs but the graph has 3 placeholders"));
  char *js3 = write_tmp (dir, "bad.json", "[{\"shape\": [2]},\n {\"shape\": [3}]");
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_JSON, js3, 0, NULL, arena, &in, &n, &diag), ==, FX_ERR_PARSE);
  g_assert_cmpint (diag.line, ==, 2);
  g_assert_cmpstr (diag.file, ==, js3);
  char *js4 = write_tmp (dir, "dt.json", "[{\"shape\": [2], \"dtype\": \"torch.float7\"}, 1, 2]");
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_JSON, js4, 0, NULL, arena, &in, &n, &diag), ==, FX_ERR_PARSE);
  g_assert_nonnull (strstr (diag.message, "torch.float7"));
  g_remove (js);
  g_remove (js2);
  g_remove (js3);
  g_remove (js4);
  g_rmdir (dir);
  g_free (js);
  g_free (js2);
  g_free (js3);
  g_free (js4);
  g_free (dir);
  fx_arena_free (arena);
  fx_graph_free (g);
}

static void
test_inputs_saved (void)
{
  char *dir = g_dir_make_tmp ("fx-saved-XXXXXX", NULL);
  fx_graph *g = parse ("class G(torch.nn.Module):\n"
                       "    def forward(self, x: \"f32[3, 5]\", y: \"i32[5]\"):\n"
                       "        add = torch.ops.aten.add.Tensor(x, y)\n"
                       "        return (add,)\n");
  fx_arena *arena = fx_arena_new ();
  fx_value *made, *loaded;
  size_t n;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 21, NULL, arena, &made, &n, &diag), ==, FX_OK);
  /* by placeholder name, and by position */
  char *p0 = g_build_filename (dir, "x.fxt", NULL), *p1 = g_build_filename (dir, "1.fxt", NULL);
  g_assert_cmpint (fx_tensor_save (made[0].u.t, p0, &diag), ==, FX_OK);
  g_assert_cmpint (fx_tensor_save (made[1].u.t, p1, &diag), ==, FX_OK);
  if (fx_inputs_make (g, FX_INPUTS_SAVED, dir, 0, NULL, arena, &loaded, &n, &diag) != FX_OK)
    g_error ("saved: %s", diag.message);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpint (loaded[1].u.t->dtype, ==, FX_DTYPE_I32);
  g_assert_true (values_equal (made, loaded, 2));
  fx_value *o1, *o2;
  size_t n1 = run (g, made, 2, arena, &o1), n2 = run (g, loaded, 2, arena, &o2);
  g_assert_true (values_equal (o1, o2, 1));
  clear_values (o1, n1);
  clear_values (o2, n2);
  clear_values (loaded, 2);
  /* a missing file: an error naming the placeholder */
  g_remove (p1);
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SAVED, dir, 0, NULL, arena, &loaded, &n, &diag), !=, FX_OK);
  g_assert_cmpstr (diag.node, ==, "y");
  clear_values (made, 2);
  g_remove (p0);
  g_rmdir (dir);
  g_free (p0);
  g_free (p1);
  g_free (dir);
  fx_arena_free (arena);
  fx_graph_free (g);
}

static void
test_inputs_repro (void)
{
  /* load_args with a symbolic size: reader.symint(16) binds s52 */
  fx_graph *g = parse ("import torch\n"
                       "from torch import tensor, device\n"
                       "class Repro(torch.nn.Module):\n"
                       "    def __init__(self) -> None:\n"
                       "        super().__init__()\n"
                       "\n"
                       "    def forward(self, arg0_1, arg1_1, arg2_1):\n"
                       "        mul = torch.ops.aten.mul.Tensor(arg1_1, -1);  arg1_1 = None\n"
                       "        mul_2 = torch.ops.aten.mul.Tensor(arg2_1, mul);  arg2_1 = mul = None\n"
                       "        return (mul_2,)\n"
                       "\n"
                       "def load_args(reader):\n"
                       "    reader.symint(16)  # arg0_1\n"
                       "    buf0 = reader.storage(None, 4*s52, device=device(type='cuda', index=0))\n"
                       "    reader.tensor(buf0, (s52,), is_leaf=True)  # arg1_1\n"
                       "    buf1 = reader.storage(None, 8*s52, device=device(type='cuda', index=0))\n"
                       "    reader.tensor(buf1, (s52, 2), (1, s52), dtype=torch.float64, is_leaf=True)  # arg2_1\n"
                       "load_args._version = 0\n");
  g_assert_cmpuint (g->n_inputs, ==, 3);
  fx_arena *arena = fx_arena_new ();
  fx_value *in;
  size_t n;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 1, NULL, arena, &in, &n, &diag) != FX_OK)
    g_error ("repro inputs: %s", diag.message);
  g_assert_cmpint (in[0].kind, ==, FX_VALUE_INT);
  g_assert_cmpint (in[0].u.i, ==, 16);
  g_assert_cmpint (in[1].u.t->ndim, ==, 1);
  g_assert_cmpint (in[1].u.t->sizes[0], ==, 16);
  g_assert_cmpint (in[1].u.t->dtype, ==, FX_DTYPE_F32);
  g_assert_cmpint (in[2].u.t->dtype, ==, FX_DTYPE_F64);
  g_assert_cmpint (in[2].u.t->sizes[0], ==, 16);
  g_assert_cmpint (in[2].u.t->sizes[1], ==, 2);
  g_assert_cmpint (in[2].u.t->strides[0], ==, 1);
  g_assert_cmpint (in[2].u.t->strides[1], ==, 16);
  clear_values (in, n);
  fx_arena_free (arena);
  fx_graph_free (g);

  /* size expressions over the bound symbols; nonsense ones are errors, not crashes */
  static const struct
  {
    const char *expr;
    int64_t want;   /* -1: an error */
  } exprs[] = {
    { "(s0 + 1)*2", 8 }, { "s0*s0 - 1", 8 }, { "2*(s0//2)", 2 }, { "99999999999999999999*s0", -1 },
    { "s0*9223372036854775807", -1 }, { "s1", -1 }, { "(((s0", -1 }, { "s0 - 7", -1 },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (exprs); k++)
    {
      g = parse ("class G(torch.nn.Module):\n"
                 "    def forward(self, n, x):\n"
                 "        return (x,)\n");
      fx_input_spec *sn = fx_graph_add_input_spec (g, "n", FX_INPUT_SYMINT);
      sn->val.kind = FX_VAL_SYMINT;
      sn->val.i = 3;
      fx_input_spec *sx = fx_graph_add_input_spec (g, "x", FX_INPUT_TENSOR);
      sx->val.kind = FX_VAL_TENSOR;
      sx->val.tensor.dtype = FX_DTYPE_F32;
      sx->val.tensor.ndim = 2;
      sx->val.tensor.sizes = fx_arena_alloc (g->arena, 2 * sizeof (fx_dim));
      sx->val.tensor.sizes[0] = (fx_dim) { -1, "s0" };
      sx->val.tensor.sizes[1] = (fx_dim) { -1, exprs[k].expr };
      arena = fx_arena_new ();
      fx_diag_clear (&diag);
      fx_status st = fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 1, NULL, arena, &in, &n, &diag);
      if (exprs[k].want < 0)
        {
          g_assert_cmpint (st, !=, FX_OK);
          g_assert_cmpstr (diag.node, ==, "x");
        }
      else
        {
          if (st != FX_OK)
            g_error ("%s: %s", exprs[k].expr, diag.message);
          g_assert_cmpint (in[1].u.t->sizes[0], ==, 3);
          g_assert_cmpint (in[1].u.t->sizes[1], ==, exprs[k].want);
          clear_values (in, n);
        }
      fx_arena_free (arena);
      fx_graph_free (g);
    }
}

/* ---------------------------------------------------------------- errors */

static void
test_error_unknown_op (void)
{
  fx_graph *g = parse ("class G(torch.nn.Module):\n"
                       "    def forward(self, x: \"f32[4]\"):\n"
                       "        neg = torch.ops.aten.neg.default(x)\n"
                       "        frob = torch.ops.aten.frobnicate.default(neg, 3)\n"
                       "        return (frob,)\n");
  /* the graph still opens: it prints */
  fx_buf b;
  fx_buf_init (&b);
  fx_graph_print_tabular (g, &b);
  g_assert_nonnull (strstr (b.data, "frobnicate"));
  fx_buf_free (&b);
  fx_arena *arena = fx_arena_new ();
  fx_value *in, *out;
  size_t n, n_out;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 0, NULL, arena, &in, &n, &diag), ==, FX_OK);
  g_assert_cmpint (fx_interp_run (g, in, n, NULL, arena, &out, &n_out, &diag), ==, FX_ERR_UNSUPPORTED);
  g_assert_cmpstr (diag.node, ==, "frob");
  g_assert_nonnull (strstr (diag.message, "node 'frob'"));
  g_assert_nonnull (strstr (diag.message, "aten.frobnicate.default"));
  g_assert_null (out);
  g_assert_cmpuint (n_out, ==, 0);
  /* shape propagation reports it the same way */
  size_t changed;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_pass_shape_prop (g, &changed, &diag), ==, FX_ERR_UNSUPPORTED);
  g_assert_cmpstr (diag.node, ==, "frob");
  clear_values (in, n);
  fx_arena_free (arena);
  fx_graph_free (g);
}

static void
test_error_shape (void)
{
  fx_graph *g = parse ("class G(torch.nn.Module):\n"
                       "    def forward(self, a: \"f32[4, 8]\", b: \"f32[4, 8]\"):\n"
                       "        add = torch.ops.aten.add.Tensor(a, b)\n"
                       "        mm = torch.ops.aten.mm.default(add, b)\n"
                       "        return (mm,)\n");
  fx_arena *arena = fx_arena_new ();
  fx_value *in, *out;
  size_t n, n_out;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 0, NULL, arena, &in, &n, &diag), ==, FX_OK);
  g_assert_cmpint (fx_interp_run (g, in, n, NULL, arena, &out, &n_out, &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.node, ==, "mm");
  g_test_message ("mm error: %s", diag.message);
  g_assert_nonnull (strstr (diag.message, "node 'mm'"));
  g_assert_nonnull (strstr (diag.message, "aten.mm.default"));
  /* the shapes of the operands */
  g_assert_nonnull (strstr (diag.message, "f32[4, 8]"));
  clear_values (in, n);

  /* broadcasting failure at run time: inputs of other shapes than annotated */
  int64_t s1[2] = { 4, 8 }, s2[2] = { 3, 8 };
  fx_value bad[2] = { fx_value_tensor (fx_tensor_new (NULL, FX_DTYPE_F32, 2, s1)),
                      fx_value_tensor (fx_tensor_new (NULL, FX_DTYPE_F32, 2, s2)) };
  fx_tensor_fill_f64 (bad[0].u.t, 1.0);
  fx_tensor_fill_f64 (bad[1].u.t, 1.0);
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_interp_run (g, bad, 2, NULL, arena, &out, &n_out, &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.node, ==, "add");
  g_test_message ("add error: %s", diag.message);
  g_assert_nonnull (strstr (diag.message, "f32[3, 8]"));
  clear_values (bad, 2);
  fx_arena_free (arena);
  fx_graph_free (g);
}

static void
test_error_missing_input (void)
{
  fx_graph *g = parse ("class G(torch.nn.Module):\n"
                       "    def forward(self, a: \"f32[4]\", b: \"f32[4]\"):\n"
                       "        add = torch.ops.aten.add.Tensor(a, b)\n"
                       "        return (add,)\n");
  fx_arena *arena = fx_arena_new ();
  int64_t s[1] = { 4 };
  fx_value one = fx_value_tensor (fx_tensor_new (NULL, FX_DTYPE_F32, 1, s));
  fx_tensor_fill_f64 (one.u.t, 2.0);
  fx_value *out;
  size_t n_out;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_interp_run (g, &one, 1, NULL, arena, &out, &n_out, &diag), ==, FX_ERR_INVALID);
  g_assert_cmpstr (diag.node, ==, "b");
  g_assert_nonnull (strstr (diag.message, "no input given for placeholder"));
  g_assert_nonnull (strstr (diag.message, "1 inputs given"));
  /* a get_attr the graph cannot read */
  fx_value_clear (&one);
  fx_graph_free (g);
  g = parse ("class G(torch.nn.Module):\n"
             "    def forward(self, a: \"f32[4]\"):\n"
             "        _tensor_constant0 = self._tensor_constant0\n"
             "        add = torch.ops.aten.add.Tensor(a, _tensor_constant0)\n"
             "        return (add,)\n");
  fx_value *in;
  size_t n;
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 0, NULL, arena, &in, &n, &diag), ==, FX_OK);
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_interp_run (g, in, n, NULL, arena, &out, &n_out, &diag), ==, FX_ERR_UNSUPPORTED);
  g_assert_cmpstr (diag.node, ==, "_tensor_constant0");
  clear_values (in, n);
  fx_arena_free (arena);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- same() */

static fx_tensor *
vec (fx_dtype dt, const double *v, int n)
{
  int64_t s[1] = { n };
  fx_tensor *t = fx_tensor_new (NULL, dt, 1, s);
  for (int i = 0; i < n; i++)
    fx_tensor_set_f64 (t, i, v[i]);
  return t;
}

static void
test_same (void)
{
  fx_same_opts o;
  fx_same_opts_init (&o);
  g_assert_cmpfloat (o.tol, ==, 1e-3);
  g_assert_true (o.equal_nan);
  fx_same_report r;
  double a[4] = { 1.0, -2.0, 3.5, 0.0 };
  double close[4] = { 1.0005, -2.001, 3.5, 0.0 };
  double far[4] = { 1.0, -2.0, 3.6, 0.0 };
  fx_tensor *ta = vec (FX_DTYPE_F32, a, 4), *tc = vec (FX_DTYPE_F32, close, 4), *tf = vec (FX_DTYPE_F32, far, 4);
  g_assert_true (fx_same_tensor (ta, ta, NULL, &o, &r));
  g_assert_cmpfloat (r.max_abs_err, ==, 0);
  g_assert_true (fx_same_tensor (ta, tc, NULL, &o, &r));
  g_assert_false (r.used_rmse);
  g_assert_false (fx_same_tensor (ta, tf, NULL, &o, &r));
  g_assert_cmpint (r.worst_index, ==, 2);
  g_assert_cmpfloat (fabs (r.max_abs_err - 0.1), <, 1e-5);
  g_assert_nonnull (strstr (r.message, "Accuracy failed"));

  /* allclose fails, the fp64 reference decides: res no worse than multiplier x ref's own error passes */
  double ref64[4] = { 1.0, -2.0, 3.5, 0.25 };
  double ref_lp[4] = { 1.0, -2.0, 3.51, 0.25 };      /* the reference's own error: 0.01 on one element */
  double res_ok[4] = { 1.0, -2.0, 3.485, 0.25 };     /* 0.015: within 2x (3x for < 1000 elements) */
  double res_bad[4] = { 1.0, -2.0, 3.5, 0.5 };       /* 0.25: far outside */
  fx_tensor *t64 = vec (FX_DTYPE_F64, ref64, 4), *tref = vec (FX_DTYPE_F32, ref_lp, 4);
  fx_tensor *tok = vec (FX_DTYPE_F32, res_ok, 4), *tbad = vec (FX_DTYPE_F32, res_bad, 4);
  g_assert_true (fx_same_tensor (tref, tok, t64, &o, &r));
  g_assert_true (r.used_rmse);
  g_assert_cmpfloat (r.multiplier, ==, 3.0);
  g_assert_cmpfloat (fabs (r.ref_error - 0.005), <, 1e-6);   /* sqrt(0.01^2 / 4) */
  g_assert_cmpfloat (fabs (r.res_error - 0.0075), <, 1e-6);
  g_assert_false (fx_same_tensor (tref, tbad, t64, &o, &r));
  g_assert_true (r.used_rmse);
  g_assert_nonnull (strstr (r.message, "RMSE (res-fp64): 0.12500, (ref-fp64): 0.00500 and shape=torch.Size([4])"));
  g_assert_nonnull (strstr (r.message, "multiplier: 3.000000, tol: 0.001000"));
  o.force_max_multiplier = true;
  g_assert_true (fx_same_tensor (tref, tok, t64, &o, &r));
  g_assert_cmpfloat (r.multiplier, ==, 10.0);
  o.force_max_multiplier = false;

  /* NaN: equal NaNs pass with equal_nan, a NaN on one side fails and is the worst element */
  double n1[3] = { 1.0, NAN, 2.0 }, n2[3] = { 1.0, 5.0, 2.0 };
  fx_tensor *tn1 = vec (FX_DTYPE_F32, n1, 3), *tn2 = vec (FX_DTYPE_F32, n2, 3);
  g_assert_true (fx_same_tensor (tn1, tn1, NULL, &o, &r));
  o.equal_nan = false;
  g_assert_false (fx_same_tensor (tn1, tn1, NULL, &o, &r));
  o.equal_nan = true;
  g_assert_false (fx_same_tensor (tn1, tn2, NULL, &o, &r));
  g_assert_cmpint (r.worst_index, ==, 1);
  g_assert_true (isinf (r.max_abs_err));

  /* ints compare exactly unless ignored; dtype and shape must agree */
  double i1[3] = { 1, 2, 3 }, i2[3] = { 1, 2, 4 };
  fx_tensor *ti1 = vec (FX_DTYPE_I64, i1, 3), *ti2 = vec (FX_DTYPE_I64, i2, 3);
  g_assert_false (fx_same_tensor (ti1, ti2, NULL, &o, &r));
  o.ignore_non_fp = true;
  g_assert_true (fx_same_tensor (ti1, ti2, NULL, &o, &r));
  o.ignore_non_fp = false;
  g_assert_false (fx_same_tensor (ti1, tn1, NULL, &o, &r));
  g_assert_nonnull (strstr (r.message, "dtype"));
  g_assert_false (fx_same_tensor (ta, tn1, NULL, &o, &r));
  g_assert_nonnull (strstr (r.message, "shape"));

  /* value lists: the report names the failing output */
  fx_value l1[3] = { fx_value_tensor (fx_tensor_ref (ta)), fx_value_int (3), fx_value_tensor (fx_tensor_ref (ta)) };
  fx_value l2[3] = { fx_value_tensor (fx_tensor_ref (tc)), fx_value_int (3), fx_value_tensor (fx_tensor_ref (tf)) };
  g_assert_false (fx_same_values (l1, l2, NULL, 3, &o, &r));
  g_assert_nonnull (strstr (r.message, "output 2"));
  g_assert_true (fx_same_values (l1, l2, NULL, 2, &o, &r));
  l2[1] = fx_value_int (4);
  g_assert_false (fx_same_values (l1, l2, NULL, 2, &o, &r));
  clear_values (l1, 3);
  clear_values (l2, 3);

  /* allclose broadcasts like torch.allclose */
  double one[1] = { 1.0 }, ones[3] = { 1.0, 1.0, 1.0 };
  fx_tensor *t1 = vec (FX_DTYPE_F32, one, 1), *t3 = vec (FX_DTYPE_F32, ones, 3);
  g_assert_true (fx_allclose (t1, t3, 0, 0, false));
  fx_tensor *all[] = { ta, tc, tf, t64, tref, tok, tbad, tn1, tn2, ti1, ti2, t1, t3 };
  for (size_t i = 0; i < G_N_ELEMENTS (all); i++)
    fx_tensor_unref (all[i]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/passes/cse", test_cse);
  g_test_add_func ("/passes/dce", test_dce);
  g_test_add_func ("/passes/decompose", test_decompose);
  g_test_add_func ("/passes/sink-gather", test_sink_gather);
  g_test_add_func ("/passes/functionalize", test_functionalize);
  g_test_add_func ("/passes/shape_prop", test_shape_prop);
  g_test_add_func ("/passes/pipeline-dump", test_pipeline_dump);
  g_test_add_func ("/passes/lower-provenance", test_lower_provenance);
  g_test_add_func ("/inputs/json", test_inputs_json);
  g_test_add_func ("/inputs/saved", test_inputs_saved);
  g_test_add_func ("/inputs/repro-load-args", test_inputs_repro);
  g_test_add_func ("/errors/unknown-op", test_error_unknown_op);
  g_test_add_func ("/errors/shape", test_error_shape);
  g_test_add_func ("/errors/missing-input", test_error_missing_input);
  g_test_add_func ("/same", test_same);
  return g_test_run ();
}
