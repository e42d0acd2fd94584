/* test-graph.c: the IR core: naming, users, editing, DCE, verification, copying, annotations, stack traces. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "fx/ir.h"

static fx_node *
add_op (fx_graph *g, const char *op, fx_node *a, fx_node *b)
{
  fx_arg args[2] = { fx_arg_node (a), b ? fx_arg_node (b) : fx_arg_int (1) };
  return fx_graph_call_function (g, fx_target_op (op), args, 2, NULL, 0);
}

static void
test_names (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "L_x_");
  g_assert_cmpstr (x->name, ==, "l_x_");
  g_assert_cmpstr (x->target.name, ==, "L_x_");

  fx_node *a0 = add_op (g, "aten.add.Tensor", x, x);
  fx_node *a1 = add_op (g, "aten.add.Tensor", a0, x);
  fx_node *s0 = add_op (g, "aten.sum.dim_IntList", a1, NULL);
  fx_node *s1 = add_op (g, "aten.sum.dim_IntList", s0, NULL);
  fx_node *m = add_op (g, "aten.max.dim", s1, NULL);
  g_assert_cmpstr (a0->name, ==, "add");
  g_assert_cmpstr (a1->name, ==, "add_1");
  /* builtins are never shadowed */
  g_assert_cmpstr (s0->name, ==, "sum_1");
  g_assert_cmpstr (s1->name, ==, "sum_2");
  g_assert_cmpstr (m->name, ==, "max_1");

  g_assert_cmpstr (fx_graph_unique_name (g, "add_1"), ==, "add_2");
  g_assert_cmpstr (fx_graph_unique_name (g, "getitem"), ==, "getitem");
  g_assert_cmpstr (fx_graph_unique_name (g, "getitem"), ==, "getitem_1");
  g_assert_cmpstr (fx_graph_unique_name (g, "sub.fc"), ==, "sub_fc");
  g_assert_cmpstr (fx_graph_unique_name (g, "a..b"), ==, "a_b");
  g_assert_cmpstr (fx_graph_unique_name (g, "1x"), ==, "_1x");
  g_assert_cmpstr (fx_graph_unique_name (g, ""), ==, "_unnamed");
  g_assert_cmpstr (fx_graph_unique_name (g, "class"), ==, "class_1");
  g_assert_cmpstr (fx_graph_unique_name (g, "torch"), ==, "torch_1");
  /* a given number is kept as written while free (FX 2.x _name_regex) */
  g_assert_cmpstr (fx_graph_unique_name (g, "mul_01"), ==, "mul_01");
  g_assert_cmpstr (fx_graph_unique_name (g, "mul_01"), ==, "mul_1"); /* _base_count is read by the candidate, not the base */
  g_assert_cmpstr (fx_graph_unique_name (g, "x_0"), ==, "x_0");
  g_assert_cmpstr (fx_graph_unique_name (g, "_2"), ==, "_2");
  g_assert_cmpstr (fx_graph_unique_name (g, "a__7"), ==, "a__7");
  g_assert_cmpstr (fx_graph_unique_name (g, "a__7"), ==, "a__1");

  fx_target t = fx_target_function ("torch._C._nn.gelu");
  g_assert_cmpstr (fx_target_base_name (&t, g->arena), ==, "gelu");
  t = fx_target_str ("__add__");
  g_assert_cmpstr (fx_target_base_name (&t, g->arena), ==, "add");
  t = fx_target_str ("layerNorm");
  g_assert_cmpstr (fx_target_base_name (&t, g->arena), ==, "layer_norm");
  fx_graph_free (g);
}

static fx_graph *
build_chain (fx_node **out_x, fx_node **out_add, fx_node **out_mul)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_node *add = add_op (g, "aten.add.Tensor", x, x);
  fx_node *mul = add_op (g, "aten.mul.Tensor", add, x);
  fx_arg outs[1] = { fx_arg_node (mul) };
  fx_graph_output (g, fx_arg_tuple (outs, 1));
  if (out_x)
    *out_x = x;
  if (out_add)
    *out_add = add;
  if (out_mul)
    *out_mul = mul;
  return g;
}

static void
test_users_and_edit (void)
{
  fx_node *x, *add, *mul;
  fx_graph *g = build_chain (&x, &add, &mul);
  fx_diag diag;

  g_assert_cmpuint (x->n_users, ==, 2);
  g_assert_true (x->users[0] == add);
  g_assert_true (x->users[1] == mul);
  g_assert_cmpuint (add->n_users, ==, 1);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);

  /* erasing a used node fails and changes nothing */
  g_assert_cmpint (fx_graph_erase_node (g, add, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "still has 1 user"));
  g_assert_cmpuint (g->n_nodes, ==, 4);

  g_assert_cmpuint (fx_node_replace_all_uses_with (add, x), ==, 1);
  g_assert_true (mul->args[0].u.node == x);
  g_assert_cmpuint (add->n_users, ==, 0);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);

  g_assert_cmpuint (fx_graph_eliminate_dead_code (g), ==, 1);
  g_assert_cmpuint (g->n_nodes, ==, 3);
  g_assert_null (fx_graph_find_node (g, "add"));
  g_assert_true (fx_graph_name_taken (g, "add"));
  g_assert_cmpuint (x->n_users, ==, 1);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);

  /* inserting before the output */
  fx_graph_set_insert_point (g, fx_graph_output_node (g));
  fx_node *neg = fx_graph_call_function (g, fx_target_op ("aten.neg.default"), (fx_arg[]) { fx_arg_node (mul) }, 1, NULL, 0);
  fx_graph_set_insert_point (g, NULL);
  g_assert_true (neg->next == fx_graph_output_node (g));
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);
  fx_graph_free (g);
}

static void
test_users_kwargs (void)
{
  fx_node *x, *add, *mul;
  fx_graph *g = build_chain (&x, &add, &mul);
  fx_diag diag;

  /* re-setting add's kwargs must not list add twice among x's users (x's last user is mul) */
  fx_kwarg kw[1] = { { "alpha", fx_arg_node (x) } };
  fx_node_set_kwargs (add, kw, 1);
  g_assert_cmpuint (x->n_users, ==, 2);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);
  fx_node_set_kwargs (add, NULL, 0);
  fx_node_set_args (add, (fx_arg[]) { fx_arg_node (x), fx_arg_node (x), fx_arg_node (x) }, 3);
  g_assert_cmpuint (x->n_users, ==, 2);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);

  /* a corrupted users list is caught, both ways */
  x->n_users--;
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "missing from the users"));
  x->n_users++;
  fx_node *saved = x->users[0];
  x->users[0] = fx_graph_output_node (g);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_ERR_INVALID);
  x->users[0] = saved;
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);
  fx_graph_free (g);
}

static void
test_hub_is_linear (void)
{
  /* 200k users of one node: quadratic bookkeeping would take minutes */
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_node *prev = x;
  for (int i = 0; i < 200000; i++)
    prev = add_op (g, "aten.add.Tensor", prev, x);
  fx_graph_output (g, fx_arg_node (prev));
  g_assert_cmpuint (x->n_users, ==, 200000);
  g_assert_cmpint (fx_graph_verify (g, NULL), ==, FX_OK);
  fx_graph_free (g);
}

static void
test_verify_order (void)
{
  fx_node *x, *add, *mul;
  fx_graph *g = build_chain (&x, &add, &mul);
  fx_diag diag;

  fx_graph_move_before (g, mul, add);
  g_assert_false (fx_graph_is_topological (g, &diag));
  g_assert_nonnull (strstr (diag.message, "before it is defined"));
  g_assert_cmpstr (diag.node, ==, "mul");
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_ERR_INVALID);
  fx_graph_move_before (g, add, mul);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);

  /* output not last */
  fx_node *out = fx_graph_output_node (g);
  fx_graph_move_before (g, out, mul);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_ERR_INVALID);
  fx_graph_free (g);
}

static void
test_dce_keeps_impure (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_node *unused = fx_graph_placeholder (g, "y");
  add_op (g, "aten.add_.Tensor", x, x);       /* in-place: kept */
  add_op (g, "aten.add.Tensor", x, x);        /* dead */
  fx_node *as = fx_graph_call_function (g, fx_target_op ("aten._assert_tensor_metadata.default"),
                                        (fx_arg[]) { fx_arg_node (x) }, 1, NULL, 0);
  fx_graph_output (g, fx_arg_none ());
  g_assert_cmpuint (fx_graph_eliminate_dead_code (g), ==, 1);
  g_assert_false (as->erased);
  g_assert_false (unused->erased);
  g_assert_nonnull (fx_graph_find_node (g, "add_"));
  fx_graph_free (g);
}

static void
test_args_copy_equal (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_arg inner[2] = { fx_arg_int (-1), fx_arg_float (INFINITY) };
  fx_arg slice[3] = { fx_arg_none (), fx_arg_int (2), fx_arg_none () };
  fx_dict_entry d[1] = { { fx_arg_str ("k"), fx_arg_dtype (FX_DTYPE_BF16) } };
  fx_arg args[6] = {
    fx_arg_node (x), fx_arg_list (inner, 2), (fx_arg) { .kind = FX_ARG_SLICE, .u.seq = { slice, 3 } },
    fx_arg_dict (d, 1), fx_arg_device ((fx_device) { FX_DEVICE_CUDA, 0 }), fx_arg_float (NAN),
  };
  fx_kwarg kw[2] = { { "dim", fx_arg_int (1) }, { "layout", fx_arg_layout (FX_LAYOUT_STRIDED) } };
  fx_node *n = fx_graph_create_node (g, FX_OP_CALL_FUNCTION, fx_target_operator ("getitem"), args, 6, kw, 2, NULL);
  /* the node owns deep copies */
  inner[0] = fx_arg_int (7);
  g_assert_cmpint (n->args[1].u.seq.items[0].u.i, ==, -1);
  g_assert_true (isinf (n->args[1].u.seq.items[1].u.f));
  g_assert_cmpint (n->args[3].u.dict.items[0].value.u.dtype, ==, FX_DTYPE_BF16);
  g_assert_cmpuint (x->n_users, ==, 1);
  g_assert_nonnull (fx_node_get_kwarg (n, "layout"));
  g_assert_null (fx_node_get_kwarg (n, "nope"));

  fx_graph_output (g, fx_arg_node (n));
  fx_graph *c = fx_graph_copy (g);
  fx_node *cn = fx_graph_find_node (c, n->name);
  g_assert_nonnull (cn);
  g_assert_true (cn != n);
  g_assert_true (cn->args[0].u.node == fx_graph_find_node (c, "x"));
  for (size_t i = 1; i < 6; i++)
    g_assert_true (fx_arg_equal (&cn->args[i], &n->args[i]));
  g_assert_false (fx_arg_equal (&cn->args[1], &n->args[3]));
  g_assert_cmpint (fx_graph_verify (c, NULL), ==, FX_OK);
  g_assert_cmpuint (fx_graph_find_node (c, "x")->n_users, ==, 1);
  fx_graph_free (c);
  fx_graph_free (g);
}

static void
test_annotations (void)
{
  fx_arena *a = fx_arena_new ();
  static const char *const cases[] = {
    "f32[8192, 4096][4096, 1]cuda:0", "f32[][]cpu", "f32[s77, 3][3, 1]cpu", "i64[2]", "b8[4, 4][4, 1]cpu",
    "bf16[2, 3]", "Sym(s77)", "FunctionalTensor(f32[2][1]cpu)",
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      fx_val v;
      fx_buf b;
      fx_buf_init (&b);
      g_assert_true (fx_val_parse_annotation (cases[i], a, &v));
      g_assert_true (fx_val_annotation (&v, true, true, &b));
      g_assert_cmpstr (b.data, ==, cases[i]);
      fx_buf_free (&b);
    }
  fx_val v;
  g_assert_true (fx_val_parse_annotation ("f32[8, 4][4, 1]cuda:0", a, &v));
  fx_buf b;
  fx_buf_init (&b);
  fx_val_annotation (&v, false, false, &b);
  g_assert_cmpstr (b.data, ==, "f32[8, 4]");
  fx_buf_free (&b);
  g_assert_true (v.tensor.has_device);
  g_assert_cmpint (v.tensor.device.type, ==, FX_DEVICE_CUDA);
  g_assert_cmpint (v.tensor.strides[0].value, ==, 4);

  static const char *const bad[] = { "", "f32", "x32[1]", "f32[1", "f32[1][1, 2]", "f32[1]gpu", "Sym(", "f32[1,]" };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_false (fx_val_parse_annotation (bad[i], a, &v));
      g_assert_cmpint (v.kind, ==, FX_VAL_NONE);
    }
  fx_arena_free (a);
}

static void
test_stack_trace (void)
{
  fx_arena *a = fx_arena_new ();
  const char *trace =
    "  File \"/home/user/prog.py\", line 12, in main\n"
    "    y = f(x)\n"
    "  File \"/home/user/a \\\"q\\\".py\", line 31, in forward\n"
    "    return x + self.fc2(F.gelu(self.fc1(x)))\n";
  fx_stack_frame *frames;
  g_assert_cmpuint (fx_stack_trace_parse (trace, a, &frames), ==, 2);
  g_assert_cmpstr (frames[0].file, ==, "/home/user/prog.py");
  g_assert_cmpint (frames[0].line, ==, 12);
  g_assert_cmpstr (frames[0].func, ==, "main");
  g_assert_cmpstr (frames[0].code, ==, "y = f(x)");
  fx_stack_frame inner;
  g_assert_true (fx_stack_trace_innermost (trace, a, &inner));
  g_assert_cmpint (inner.line, ==, 31);
  g_assert_cmpstr (inner.func, ==, "forward");
  g_assert_cmpstr (inner.code, ==, "return x + self.fc2(F.gelu(self.fc1(x)))");
  g_assert_false (fx_stack_trace_innermost ("garbage\nmore", a, &inner));
  g_assert_false (fx_stack_trace_innermost ("  File \"x\", line q, in f\n", a, &inner));
  fx_arena_free (a);
}

static void
test_tables (void)
{
  g_assert_cmpint (fx_dtype_from_name ("torch.float32"), ==, FX_DTYPE_F32);
  g_assert_cmpint (fx_dtype_from_name ("torch.half"), ==, FX_DTYPE_F16);
  g_assert_cmpint (fx_dtype_from_name ("b8"), ==, FX_DTYPE_BOOL);
  g_assert_cmpint (fx_dtype_from_name ("Long"), ==, FX_DTYPE_I64);
  g_assert_cmpint (fx_dtype_from_name ("float33"), ==, FX_DTYPE_UNKNOWN);
  g_assert_cmpint (fx_dtype_from_export_id (7), ==, FX_DTYPE_F32);
  g_assert_cmpint (fx_dtype_from_export_id (0), ==, FX_DTYPE_UNKNOWN);
  g_assert_cmpuint (fx_dtype_size (FX_DTYPE_BF16), ==, 2);
  fx_device d;
  g_assert_true (fx_device_parse ("cuda:1", &d));
  g_assert_cmpint (d.index, ==, 1);
  g_assert_true (fx_device_parse ("cpu", &d));
  g_assert_cmpint (d.index, ==, -1);
  g_assert_false (fx_device_parse ("cuda:", &d));
  g_assert_false (fx_device_parse ("cuda:1x", &d));
  g_assert_false (fx_device_parse ("gpu", &d));
  fx_layout l;
  g_assert_true (fx_layout_from_name ("torch.strided", &l));
  fx_memfmt m;
  g_assert_true (fx_memfmt_from_name ("torch.channels_last", &m));
  g_assert_cmpint (m, ==, FX_MEMFMT_CHANNELS_LAST);
  fx_opcode op;
  g_assert_true (fx_opcode_from_name ("call_module", &op));
  g_assert_cmpint (op, ==, FX_OP_CALL_MODULE);
  g_assert_false (fx_opcode_from_name ("call", &op));
}

static void
test_diag_format (void)
{
  fx_diag diag;
  char out[512];
  const char *line = "    add = torch.ops.aten.add.Tensor(x, ";
  fx_diag_clear (&diag);
  fx_diag_set (&diag, FX_ERR_PARSE, "expected ')'");
  fx_diag_locate (&diag, "g.py", 3, 41, line, strlen (line));
  fx_diag_format (&diag, out, sizeof out);
  g_assert_cmpstr (out, ==,
                   "g.py:3:41: error: expected ')'\n"
                   "    3 |     add = torch.ops.aten.add.Tensor(x, \n"
                   "      |                                         ^\n");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/FxGraph/names", test_names);
  g_test_add_func ("/FxGraph/users-and-edit", test_users_and_edit);
  g_test_add_func ("/FxGraph/verify-order", test_verify_order);
  g_test_add_func ("/FxGraph/users-kwargs", test_users_kwargs);
  g_test_add_func ("/FxGraph/hub-is-linear", test_hub_is_linear);
  g_test_add_func ("/FxGraph/dce-keeps-impure", test_dce_keeps_impure);
  g_test_add_func ("/FxGraph/args-copy-equal", test_args_copy_equal);
  g_test_add_func ("/FxGraph/annotations", test_annotations);
  g_test_add_func ("/FxGraph/stack-trace", test_stack_trace);
  g_test_add_func ("/FxGraph/tables", test_tables);
  g_test_add_func ("/FxGraph/diag-format", test_diag_format);
  return g_test_run ();
}
