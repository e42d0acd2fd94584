/* test-ir.c: the IR API, every argument kind in its three renderings, CPython float/str repr, and each text printer
   (tabular, Graph.__str__, GraphModule.code, print_readable, JSON, dot) against PyTorch's exact output. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx/ir.h"

/* ---------------------------------------------------------------- helpers */

static char *
repr_of (const fx_arg *arg, fx_repr_style style)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_arg_repr (arg, style, &b);
  return fx_buf_steal (&b);
}

static void
check_repr (fx_arg arg, const char *code, const char *format, const char *py)
{
  char *c = repr_of (&arg, FX_REPR_CODE);
  char *f = repr_of (&arg, FX_REPR_FORMAT);
  char *p = repr_of (&arg, FX_REPR_PY);
  g_assert_cmpstr (c, ==, code);
  g_assert_cmpstr (f, ==, format);
  g_assert_cmpstr (p, ==, py);
  free (c);
  free (f);
  free (p);
}

static void
check_float (double v, const char *expected)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_py_float_repr (v, &b);
  g_assert_cmpstr (b.data, ==, expected);
  fx_buf_free (&b);
}

static void
check_str (const char *s, const char *expected)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_py_str_repr (s, &b);
  g_assert_cmpstr (b.data, ==, expected);
  fx_buf_free (&b);
}

static char *
read_fixture (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  g_autofree char *path = g_build_filename (dir ? dir : "tests/fixtures", rel, NULL);
  char *text = NULL;
  g_autoptr (GError) error = NULL;
  if (!g_file_get_contents (path, &text, NULL, &error))
    g_error ("fixture %s: %s", path, error->message);
  return text;
}

static void
set_val (fx_node *node, const char *annotation)
{
  g_assert_true (fx_val_parse_annotation (annotation, node->graph->arena, &node->meta.val));
}

static fx_node *
call (fx_graph *g, const char *op, const fx_arg *args, size_t n)
{
  return fx_graph_call_function (g, fx_target_op (op), args, n, NULL, 0);
}

static char *
print_with (fx_graph *g, void (*fn) (const fx_graph *, fx_buf *))
{
  fx_buf b;
  fx_buf_init (&b);
  fn (g, &b);
  return fx_buf_steal (&b);
}

static char *
readable (fx_graph *g, bool stride, bool device)
{
  fx_readable_opts opts = { stride, device, false };
  fx_buf b;
  fx_buf_init (&b);
  fx_graph_print_readable (g, &opts, &b);
  return fx_buf_steal (&b);
}

/* ---------------------------------------------------------------- CPython repr */

static void
test_float_repr (void)
{
  check_float (1.0, "1.0");
  check_float (-1.0, "-1.0");
  check_float (0.0, "0.0");
  check_float (-0.0, "-0.0");
  check_float (1e-05, "1e-05");
  check_float (0.0001, "0.0001");
  check_float (0.00012, "0.00012");
  check_float (1.5e-07, "1.5e-07");
  check_float (0.1, "0.1");
  check_float (0.7071067811865476, "0.7071067811865476");
  check_float (1.0 / 3.0, "0.3333333333333333");
  check_float (2.0 / 3.0, "0.6666666666666666");
  check_float (123456789.0, "123456789.0");
  check_float (1e15, "1000000000000000.0");
  check_float (1e16, "1e+16");
  check_float (1.5e16, "1.5e+16");
  check_float (12345678901234567.0, "1.2345678901234568e+16");
  check_float (1e100, "1e+100");
  check_float (5e-324, "5e-324");
  check_float (1.7976931348623157e308, "1.7976931348623157e+308");
  check_float (-3.14, "-3.14");
  check_float (0.5, "0.5");
  check_float (100.0, "100.0");
  check_float (1e22, "1e+22");
  check_float (INFINITY, "inf");
  check_float (-INFINITY, "-inf");
  check_float (NAN, "nan");
  check_float (-NAN, "nan");
  check_float (3.4028234663852886e+38, "3.4028234663852886e+38");
  check_float (-3.4028234663852886e+38, "-3.4028234663852886e+38");
  check_float (1.1754943508222875e-38, "1.1754943508222875e-38");
  check_float (0.30000000000000004, "0.30000000000000004");
  check_float (2.2250738585072014e-308, "2.2250738585072014e-308");
  check_float (2.225073858507201e-308, "2.225073858507201e-308");

  /* Random bit patterns: the text reads back to the same double and has as few digits as the shortest
     correctly rounded %e that does (the reference search over every precision). */
  for (int i = 0; i < 20000; i++)
    {
      uint64_t bits = ((uint64_t) g_test_rand_int () << 32) | (uint32_t) g_test_rand_int ();
      double v;
      memcpy (&v, &bits, sizeof v);
      if (!isfinite (v) || v == 0.0)
        continue;
      fx_buf b;
      fx_buf_init (&b);
      fx_py_float_repr (v, &b);
      g_assert_true (strtod (b.data, NULL) == v);
      /* significant digits: the mantissa's digits without leading and trailing zeros */
      char digits[64];
      int nd = 0;
      for (const char *p = b.data; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && (nd > 0 || *p != '0'))
          digits[nd++] = *p;
      while (nd > 0 && digits[nd - 1] == '0')
        nd--;
      char ref[64];
      int prec;
      for (prec = 1; prec <= 17; prec++)
        {
          snprintf (ref, sizeof ref, "%.*e", prec - 1, v);
          if (strtod (ref, NULL) == v)
            break;
        }
      if (nd != prec)
        g_error ("%s has %d digits, the shortest has %d (%s)", b.data, nd, prec, ref);
      fx_buf_free (&b);
    }
}

static void
test_str_repr (void)
{
  check_str ("abc", "'abc'");
  check_str ("", "''");
  check_str ("it's", "\"it's\"");
  check_str ("say \"hi\"", "'say \"hi\"'");
  check_str ("both ' and \"", "'both \\' and \"'");
  check_str ("a\\b", "'a\\\\b'");
  check_str ("tab\tnl\ncr\r", "'tab\\tnl\\ncr\\r'");
  check_str ("\x01\x1f\x7f", "'\\x01\\x1f\\x7f'");
  check_str ("none", "'none'");
  check_str ("caf\xc3\xa9", "'caf\xc3\xa9'");          /* é is printable */
  check_str ("\xc2\xa0", "'\\xa0'");                    /* NBSP is not */
  check_str ("\xc2\x85", "'\\x85'");
  check_str ("\xe2\x80\x8b", "'\\u200b'");
  check_str ("\xe2\x80\xa8", "'\\u2028'");
  check_str ("\xef\xbb\xbf", "'\\ufeff'");
  check_str ("\xf0\x9f\x98\x80", "'\xf0\x9f\x98\x80'");  /* emoji printable */
  check_str ("\xf3\xb0\x80\x80", "'\\U000f0000'");       /* private use */
  check_str ("\xff", "'\\udcff'");
}

/* fx_buf_put_json_str, fx_buf_put_ints, fx_hash_bytes, fx_arg_int_list and fx_device_cpu: the shared writers and
   builders that replaced per-module copies. */
static void
test_shared_helpers (void)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_buf_put_json_str (&b, "q\"b\\t\tn\nr\r\x01\x7f\xc3\xa9");
  g_assert_cmpstr (b.data, ==, "\"q\\\"b\\\\t\\tn\\nr\\r\\u0001\\u007f\xc3\xa9\"");
  fx_buf_reset (&b);
  fx_buf_put_json_str (&b, NULL);
  g_assert_cmpstr (b.data, ==, "\"\"");
  fx_buf_reset (&b);
  int64_t dims[] = { 2, -1, 4096 };
  fx_buf_put_ints (&b, dims, 3);
  g_assert_cmpstr (b.data, ==, "2, -1, 4096");
  /* fx_buf_put_int writes what "%lld" writes, at the ends of the range too */
  static const int64_t ints[] = { 0, 7, -7, 10, -10, 1234567890123LL, INT64_MAX, INT64_MIN, INT64_MIN + 1 };
  for (size_t i = 0; i < G_N_ELEMENTS (ints); i++)
    {
      char want[32];
      snprintf (want, sizeof want, "%lld", (long long) ints[i]);
      fx_buf_reset (&b);
      fx_buf_put_int (&b, ints[i]);
      g_assert_cmpstr (b.data, ==, want);
    }
  fx_buf_free (&b);

  /* the engine's values (its offset basis has always been 1469598103934665603, not FNV's 14695981039346656037:
     stored nowhere, only buckets keys); a hash continued from a prefix's equals the whole's */
  g_assert_cmpuint (fx_hash_bytes ("", 0, 0), ==, 1469598103934665603ULL);
  g_assert_cmpuint (fx_hash_bytes ("a", 1, 0), ==, (1469598103934665603ULL ^ 'a') * 1099511628211ULL);
  g_assert_cmpuint (fx_hash_bytes ("bc", 2, fx_hash_bytes ("a", 1, 0)), ==, fx_hash_bytes ("abc", 3, 0));

  fx_arena *arena = fx_arena_new ();
  fx_arg l = fx_arg_int_list (arena, dims, 3);
  g_assert_cmpint (l.kind, ==, FX_ARG_LIST);
  g_assert_cmpuint (l.u.seq.n, ==, 3);
  g_assert_cmpint (l.u.seq.items[1].kind, ==, FX_ARG_INT);
  g_assert_cmpint (l.u.seq.items[1].u.i, ==, -1);
  g_assert_cmpuint (fx_arg_int_list (arena, NULL, 0).u.seq.n, ==, 0);
  fx_arena_free (arena);

  fx_device cpu = fx_device_cpu ();
  g_assert_cmpint (cpu.type, ==, FX_DEVICE_CPU);
  g_assert_cmpint (cpu.index, ==, -1);
}

/* ---------------------------------------------------------------- arguments */

static void
test_arg_kinds (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_node *y = fx_graph_placeholder (g, "y");

  check_repr (fx_arg_none (), "None", "None", "None");
  check_repr (fx_arg_node (x), "x", "%x", "x");
  check_repr (fx_arg_bool (true), "True", "True", "True");
  check_repr (fx_arg_bool (false), "False", "False", "False");
  check_repr (fx_arg_int (-1), "-1", "-1", "-1");
  check_repr (fx_arg_int (INT64_MIN), "-9223372036854775808", "-9223372036854775808", "-9223372036854775808");
  check_repr (fx_arg_float (1e-05), "1e-05", "1e-05", "1e-05");
  check_repr (fx_arg_float (INFINITY), "inf", "inf", "inf");
  check_repr (fx_arg_float (-INFINITY), "-inf", "-inf", "-inf");
  check_repr (fx_arg_float (NAN), "nan", "nan", "nan");
  check_repr (fx_arg_str ("none"), "'none'", "none", "'none'");
  check_repr (fx_arg_dtype (FX_DTYPE_F32), "torch.float32", "torch.float32", "torch.float32");
  check_repr (fx_arg_dtype (FX_DTYPE_BOOL), "torch.bool", "torch.bool", "torch.bool");
  check_repr (fx_arg_device ((fx_device) { FX_DEVICE_CUDA, 0 }), "device(type='cuda', index=0)", "cuda:0",
              "device(type='cuda', index=0)");
  check_repr (fx_arg_device ((fx_device) { FX_DEVICE_CPU, -1 }), "device(type='cpu')", "cpu", "device(type='cpu')");
  check_repr (fx_arg_layout (FX_LAYOUT_STRIDED), "torch.strided", "torch.strided", "torch.strided");
  check_repr (fx_arg_memfmt (FX_MEMFMT_CHANNELS_LAST), "torch.channels_last", "torch.channels_last",
              "torch.channels_last");
  check_repr (fx_arg_sym ("s77"), "s77", "s77", "s77");
  check_repr (fx_arg_global ("torch.ops.aten.add.Tensor"), "torch.ops.aten.add.Tensor", "aten.add.Tensor",
              "<OpOverload(op='aten.add', overload='Tensor')>");

  fx_arg one[1] = { fx_arg_node (x) };
  check_repr (fx_arg_tuple (one, 1), "(x,)", "(%x,)", "(x,)");
  check_repr (fx_arg_tuple (NULL, 0), "()", "()", "()");
  check_repr (fx_arg_list (NULL, 0), "[]", "[]", "[]");
  fx_arg two[2] = { fx_arg_node (x), fx_arg_node (y) };
  check_repr (fx_arg_list (two, 2), "[x, y]", "[%x, %y]", "[x, y]");
  fx_arg nested[3] = { fx_arg_list (two, 2), fx_arg_int (-1), fx_arg_str ("a'b") };
  check_repr (fx_arg_tuple (nested, 3), "([x, y], -1, \"a'b\")", "([%x, %y], -1, a'b)", "([x, y], -1, \"a'b\")");

  fx_dict_entry entries[2] = {
    { fx_arg_str ("dim"), fx_arg_int (-1) },
    { fx_arg_str ("device"), fx_arg_device ((fx_device) { FX_DEVICE_CPU, -1 }) },
  };
  check_repr (fx_arg_dict (entries, 2), "{'dim': -1, 'device': device(type='cpu')}", "{dim: -1, device: cpu}",
              "{'dim': -1, 'device': device(type='cpu')}");

  fx_arg sl_items[3] = { fx_arg_none (), fx_arg_node (y), fx_arg_int (2) };
  fx_arg sl = { .kind = FX_ARG_SLICE, .u.seq = { sl_items, 3 } };
  check_repr (sl, "slice(None, y, 2)", "slice(None, y, 2)", "slice(None, y, 2)");
  fx_arg ell = { .kind = FX_ARG_ELLIPSIS };
  fx_arg idx[2] = { ell, sl };
  check_repr (fx_arg_tuple (idx, 2), "(Ellipsis, slice(None, y, 2))", "(Ellipsis, slice(None, y, 2))",
              "(Ellipsis, slice(None, y, 2))");

  /* copies are deep and compare equal; floats compare bitwise */
  fx_arg t = fx_arg_tuple (nested, 3);
  fx_arg c = fx_arg_copy (g->arena, &t);
  g_assert_true (fx_arg_equal (&t, &c));
  fx_arg n1 = fx_arg_float (NAN), n2 = fx_arg_float (NAN);
  g_assert_true (fx_arg_equal (&n1, &n2));
  fx_graph_free (g);
}

static void
test_targets (void)
{
  struct { fx_target t; const char *pretty; } cases[] = {
    { fx_target_op ("aten.add.Tensor"), "torch.ops.aten.add.Tensor" },
    { fx_target_operator ("add"), "operator.add" },
    { fx_target_builtin ("getattr"), "builtins.getattr" },
    { fx_target_function ("torch.abs"), "torch.abs" },
    { fx_target_function ("torch._C._nn.gelu"), "torch._C._nn.gelu" },
    { fx_target_str ("sub.fc"), "sub.fc" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      fx_buf b;
      fx_buf_init (&b);
      fx_target_format (&cases[i].t, &b);
      g_assert_cmpstr (b.data, ==, cases[i].pretty);
      fx_buf_free (&b);
    }
}

/* ---------------------------------------------------------------- IR API */

static void
test_ir_api (void)
{
  fx_graph *g = fx_graph_new ();
  fx_diag diag;
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_arg a[2] = { fx_arg_node (x), fx_arg_node (x) };
  fx_node *add = call (g, "aten.add.Tensor", a, 2);
  fx_node *add1 = call (g, "aten.add.Tensor", a, 2);
  fx_arg s[1] = { fx_arg_node (add) };
  fx_node *sum = call (g, "aten.sum.default", s, 1);
  fx_node *sum1 = call (g, "aten.sum.default", s, 1);
  fx_arg o[2] = { fx_arg_node (sum), fx_arg_node (sum1) };
  fx_node *out = fx_graph_output (g, fx_arg_tuple (o, 2));

  g_assert_cmpstr (add->name, ==, "add");
  g_assert_cmpstr (add1->name, ==, "add_1");
  g_assert_cmpstr (sum->name, ==, "sum_1");
  g_assert_cmpstr (sum1->name, ==, "sum_2");
  g_assert_cmpuint (x->n_users, ==, 2);        /* x + x counts once per user */
  g_assert_cmpuint (add->n_users, ==, 2);
  g_assert_true (fx_graph_is_topological (g, &diag));
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);

  /* add_1 is dead: DCE removes it */
  g_assert_cmpuint (fx_graph_eliminate_dead_code (g), ==, 1);
  g_assert_null (fx_graph_find_node (g, "add_1"));

  /* erase refuses a node with users */
  g_assert_cmpint (fx_graph_erase_node (g, add, &diag), ==, FX_ERR_INVALID);

  /* insert before sum_1, replace all uses, then erase */
  fx_graph_set_insert_point (g, sum);
  fx_arg m[2] = { fx_arg_node (x), fx_arg_int (2) };
  fx_node *mul = call (g, "aten.mul.Tensor", m, 2);
  fx_graph_set_insert_point (g, NULL);
  g_assert_true (mul->next == sum);
  g_assert_cmpuint (fx_node_replace_all_uses_with (add, mul), ==, 2);
  g_assert_cmpuint (add->n_users, ==, 0);
  g_assert_cmpint (fx_graph_erase_node (g, add, &diag), ==, FX_OK);
  g_assert_cmpint (fx_graph_verify (g, &diag), ==, FX_OK);

  /* a non-topological order is caught */
  fx_graph_move_before (g, sum, mul);
  g_assert_false (fx_graph_is_topological (g, &diag));
  fx_graph_move_before (g, mul, sum);
  g_assert_true (fx_graph_is_topological (g, &diag));

  /* copies print identically */
  fx_graph *c = fx_graph_copy (g);
  char *p1 = print_with (g, fx_graph_print_str);
  char *p2 = print_with (c, fx_graph_print_str);
  g_assert_cmpstr (p1, ==, p2);
  g_assert_cmpstr (p1, ==,
                   "graph():\n"
                   "    %x : [num_users=1] = placeholder[target=x]\n"
                   "    %mul : [num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%x, 2), kwargs = {})\n"
                   "    %sum_1 : [num_users=1] = call_function[target=torch.ops.aten.sum.default](args = (%mul,), kwargs = {})\n"
                   "    %sum_2 : [num_users=1] = call_function[target=torch.ops.aten.sum.default](args = (%mul,), kwargs = {})\n"
                   "    return (sum_1, sum_2)");
  free (p1);
  free (p2);
  (void) out;
  fx_graph_free (c);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- printers on real PyTorch output */

#define LNG_TRACE "  File \"/home/user/bench/gen_graphs_bench.py\", line 18, in forward\n    return F.gelu(self.ln(x))\n"

/* layernorm_gelu.core_aten.0: the graph behind the fixture, built by hand */
static fx_graph *
build_layernorm_gelu (void)
{
  fx_graph *g = fx_graph_new ();
  g->class_name = "<lambda>";
  fx_node *a0 = fx_graph_placeholder (g, "arg0_1");
  fx_node *a1 = fx_graph_placeholder (g, "arg1_1");
  fx_node *a2 = fx_graph_placeholder (g, "arg2_1");
  set_val (a0, "f32[4096][1]cuda:0");
  set_val (a1, "f32[4096][1]cuda:0");
  set_val (a2, "f32[8192, 4096][4096, 1]cuda:0");

  fx_arg shape[1] = { fx_arg_int (4096) };
  fx_arg ln_args[5] = { fx_arg_node (a2), fx_arg_list (shape, 1), fx_arg_node (a0), fx_arg_node (a1),
                        fx_arg_float (1e-05) };
  fx_node *ln = call (g, "aten.native_layer_norm.default", ln_args, 5);
  ln->meta.val.kind = FX_VAL_TUPLE;
  ln->meta.stack_trace = LNG_TRACE;

  fx_arg gi_args[2] = { fx_arg_node (ln), fx_arg_int (0) };
  fx_node *gi = fx_graph_call_function (g, fx_target_operator ("getitem"), gi_args, 2, NULL, 0);
  set_val (gi, "f32[8192, 4096][4096, 1]cuda:0");
  gi->meta.stack_trace = LNG_TRACE;

  fx_arg ge_args[1] = { fx_arg_node (gi) };
  fx_node *ge = call (g, "aten.gelu.default", ge_args, 1);
  set_val (ge, "f32[8192, 4096][4096, 1]cuda:0");
  ge->meta.stack_trace = LNG_TRACE;

  fx_arg o[1] = { fx_arg_node (ge) };
  fx_graph_output (g, fx_arg_tuple (o, 1));
  return g;
}

static void
test_fixture_layernorm_gelu (void)
{
  fx_graph *g = build_layernorm_gelu ();
  g_autofree char *want_py = read_fixture ("graphs/layernorm_gelu.core_aten.0.py");
  g_autofree char *want_tab = read_fixture ("graphs/layernorm_gelu.core_aten.0.tabular.txt");

  char *got = readable (g, true, true);
  g_assert_cmpstr (got, ==, want_py);
  free (got);
  got = print_with (g, fx_graph_print_tabular);
  g_assert_cmpstr (got, ==, want_tab);
  free (got);

  got = print_with (g, fx_graph_print_code);
  g_assert_cmpstr (got, ==,
                   "\n\n\ndef forward(self, arg0_1, arg1_1, arg2_1):\n"
                   "    native_layer_norm = torch.ops.aten.native_layer_norm.default(arg2_1, [4096], arg0_1, arg1_1, 1e-05);  arg2_1 = arg0_1 = arg1_1 = None\n"
                   "    getitem = native_layer_norm[0];  native_layer_norm = None\n"
                   "    gelu = torch.ops.aten.gelu.default(getitem);  getitem = None\n"
                   "    return (gelu,)\n"
                   "    ");
  free (got);

  /* without stride and device, as fx_graph_readable.py has it */
  got = readable (g, false, false);
  g_assert_nonnull (strstr (got, "def forward(self, arg0_1: \"f32[4096]\", arg1_1: \"f32[4096]\", arg2_1: \"f32[8192, 4096]\"):\n"));
  g_assert_nonnull (strstr (got, "        getitem: \"f32[8192, 4096]\" = native_layer_norm[0];"));
  free (got);

  got = print_with (g, fx_graph_print_str);
  g_assert_cmpstr (got, ==,
                   "graph():\n"
                   "    %arg0_1 : [num_users=1] = placeholder[target=arg0_1]\n"
                   "    %arg1_1 : [num_users=1] = placeholder[target=arg1_1]\n"
                   "    %arg2_1 : [num_users=1] = placeholder[target=arg2_1]\n"
                   "    %native_layer_norm : [num_users=1] = call_function[target=torch.ops.aten.native_layer_norm.default](args = (%arg2_1, [4096], %arg0_1, %arg1_1, 1e-05), kwargs = {})\n"
                   "    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%native_layer_norm, 0), kwargs = {})\n"
                   "    %gelu : [num_users=1] = call_function[target=torch.ops.aten.gelu.default](args = (%getitem,), kwargs = {})\n"
                   "    return (gelu,)");
  free (got);
  fx_graph_free (g);
}

/* pytorch-formats.md §1.3: GraphModule.code of a make_fx graph */
static void
test_code_spec_example (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *a = fx_graph_placeholder (g, "a_1");
  fx_arg shape[2] = { fx_arg_int (2), fx_arg_int (3) };
  fx_arg full_args[2] = { fx_arg_list (shape, 2), fx_arg_float (1.5) };
  fx_kwarg full_kw[3] = {
    { "dtype", fx_arg_dtype (FX_DTYPE_F64) },
    { "device", fx_arg_device ((fx_device) { FX_DEVICE_CPU, -1 }) },
    { "pin_memory", fx_arg_bool (false) },
  };
  fx_node *full = fx_graph_call_function (g, fx_target_op ("aten.full.default"), full_args, 2, full_kw, 3);
  fx_arg c_args[1] = { fx_arg_node (a) };
  fx_kwarg c_kw[1] = { { "dtype", fx_arg_dtype (FX_DTYPE_F64) } };
  fx_node *cp = fx_graph_call_function (g, fx_target_op ("aten._to_copy.default"), c_args, 1, c_kw, 1);
  fx_arg add_args[2] = { fx_arg_node (full), fx_arg_node (cp) };
  fx_node *add = call (g, "aten.add.Tensor", add_args, 2);
  fx_arg nz_args[2] = { fx_arg_node (a), fx_arg_list (shape, 2) };
  fx_kwarg nz_kw[1] = { { "pin_memory", fx_arg_bool (false) } };
  fx_node *nz = fx_graph_call_function (g, fx_target_op ("aten.new_zeros.default"), nz_args, 2, nz_kw, 1);
  fx_arg ai_args[2] = { fx_arg_node (nz), fx_arg_int (1) };
  fx_node *add_ = call (g, "aten.add_.Tensor", ai_args, 2);
  fx_arg o[2] = { fx_arg_node (add), fx_arg_node (add_) };
  fx_graph_output (g, fx_arg_tuple (o, 2));

  g_assert_cmpstr (add_->name, ==, "add_");
  char *got = print_with (g, fx_graph_print_code);
  g_assert_cmpstr (got, ==,
                   "\n\n\ndef forward(self, a_1):\n"
                   "    full = torch.ops.aten.full.default([2, 3], 1.5, dtype = torch.float64, device = device(type='cpu'), pin_memory = False)\n"
                   "    _to_copy = torch.ops.aten._to_copy.default(a_1, dtype = torch.float64)\n"
                   "    add = torch.ops.aten.add.Tensor(full, _to_copy);  full = _to_copy = None\n"
                   "    new_zeros = torch.ops.aten.new_zeros.default(a_1, [2, 3], pin_memory = False);  a_1 = None\n"
                   "    add_ = torch.ops.aten.add_.Tensor(new_zeros, 1);  new_zeros = None\n"
                   "    return (add, add_)\n"
                   "    ");
  free (got);

  got = print_with (g, fx_graph_print_tabular);
  g_assert_cmpstr (got, ==,
                   "opcode         name       target                  args              kwargs\n"
                   "-------------  ---------  ----------------------  ----------------  ---------------------------------------------------------------------------\n"
                   "placeholder    a_1        a_1                     ()                {}\n"
                   "call_function  full       aten.full.default       ([2, 3], 1.5)     {'dtype': torch.float64, 'device': device(type='cpu'), 'pin_memory': False}\n"
                   "call_function  _to_copy   aten._to_copy.default   (a_1,)            {'dtype': torch.float64}\n"
                   "call_function  add        aten.add.Tensor         (full, _to_copy)  {}\n"
                   "call_function  new_zeros  aten.new_zeros.default  (a_1, [2, 3])     {'pin_memory': False}\n"
                   "call_function  add_       aten.add_.Tensor        (new_zeros, 1)    {}\n"
                   "output         output     output                  ((add, add_),)    {}\n");
  free (got);
  fx_graph_free (g);
}

/* A Dynamo graph: L_x_ placeholders renamed, infix operators, methods, modules, torch functions. */
static void
test_dynamo_code (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "L_x_");
  x->type_expr = "torch.Tensor";
  set_val (x, "f32[32, 256][256, 1]cuda:0");
  fx_node *w = fx_graph_placeholder (g, "L_self_modules_fc_parameters_weight_");
  w->type_expr = "torch.Tensor";
  set_val (w, "f32[10, 256][256, 1]cuda:0");
  g_assert_cmpstr (x->name, ==, "l_x_");

  const char *tr1 = "  File \"/p/program.py\", line 13, in forward\n    return x + self.fc2(x)\n";
  const char *tr2 = "  File \"/p/program.py\", line 20, in forward\n    y = torch.softmax(self.head(x), dim=-1)\n";
  fx_arg lin_args[2] = { fx_arg_node (x), fx_arg_node (w) };
  fx_node *lin = fx_graph_call_function (g, fx_target_function ("torch._C._nn.linear"), lin_args, 2, NULL, 0);
  lin->meta.stack_trace = tr1;
  set_val (lin, "f32[32, 10][10, 1]cuda:0");
  fx_kwarg gk[1] = { { "approximate", fx_arg_str ("none") } };
  fx_arg gelu_args[1] = { fx_arg_node (lin) };
  fx_node *gelu = fx_graph_call_function (g, fx_target_function ("torch._C._nn.gelu"), gelu_args, 1, gk, 1);
  gelu->meta.stack_trace = tr1;
  set_val (gelu, "f32[32, 10][10, 1]cuda:0");
  fx_arg add_args[2] = { fx_arg_node (x), fx_arg_node (gelu) };
  fx_node *add = fx_graph_call_function (g, fx_target_operator ("add"), add_args, 2, NULL, 0);
  add->meta.stack_trace = tr1;
  fx_arg neg_args[1] = { fx_arg_node (add) };
  fx_node *neg = fx_graph_call_function (g, fx_target_operator ("neg"), neg_args, 1, NULL, 0);
  neg->meta.stack_trace = tr2;
  fx_kwarg sk[2] = { { "dim", fx_arg_int (-1) }, { "keepdim", fx_arg_bool (true) } };
  fx_arg sum_args[1] = { fx_arg_node (neg) };
  fx_node *sum = fx_graph_create_node (g, FX_OP_CALL_METHOD, fx_target_str ("sum"), sum_args, 1, sk, 2, NULL);
  fx_arg mod_args[1] = { fx_arg_node (sum) };
  fx_node *head = fx_graph_create_node (g, FX_OP_CALL_MODULE, fx_target_str ("blocks.0.head"), mod_args, 1, NULL, 0,
                                        NULL);
  fx_node *attr = fx_graph_create_node (g, FX_OP_GET_ATTR, fx_target_str ("_tensor_constant0"), NULL, 0, NULL, 0,
                                        NULL);
  fx_arg ga_args[2] = { fx_arg_node (head), fx_arg_str ("shape") };
  fx_node *shape = fx_graph_call_function (g, fx_target_builtin ("getattr"), ga_args, 2, NULL, 0);
  fx_arg o[3] = { fx_arg_node (head), fx_arg_node (attr), fx_arg_node (shape) };
  fx_graph_output (g, fx_arg_tuple (o, 3));

  g_assert_cmpstr (sum->name, ==, "sum_1");
  g_assert_cmpstr (head->name, ==, "blocks_0_head");
  char *got = print_with (g, fx_graph_print_code);
  g_assert_cmpstr (got, ==,
                   "\n\n\ndef forward(self, L_x_ : torch.Tensor, L_self_modules_fc_parameters_weight_ : torch.Tensor):\n"
                   "    l_x_ = L_x_\n"
                   "    l_self_modules_fc_parameters_weight_ = L_self_modules_fc_parameters_weight_\n"
                   "    linear = torch._C._nn.linear(l_x_, l_self_modules_fc_parameters_weight_);  l_self_modules_fc_parameters_weight_ = None\n"
                   "    gelu = torch._C._nn.gelu(linear, approximate = 'none');  linear = None\n"
                   "    add = l_x_ + gelu;  l_x_ = gelu = None\n"
                   "    neg = -add;  add = None\n"
                   "    sum_1 = neg.sum(dim = -1, keepdim = True);  neg = None\n"
                   "    blocks_0_head = getattr(self.blocks, \"0\").head(sum_1);  sum_1 = None\n"
                   "    _tensor_constant0 = self._tensor_constant0\n"
                   "    getattr_1 = blocks_0_head.shape\n"
                   "    return (blocks_0_head, _tensor_constant0, getattr_1)\n"
                   "    ");
  free (got);

  got = readable (g, true, true);
  g_assert_cmpstr (got, ==,
                   "class GraphModule(torch.nn.Module):\n"
                   "    def forward(self, L_x_: \"f32[32, 256][256, 1]cuda:0\", L_self_modules_fc_parameters_weight_: \"f32[10, 256][256, 1]cuda:0\"):\n"
                   "        l_x_ = L_x_\n"
                   "        l_self_modules_fc_parameters_weight_ = L_self_modules_fc_parameters_weight_\n"
                   "\n"
                   "        # File: /p/program.py:13 in forward, code: return x + self.fc2(x)\n"
                   "        linear: \"f32[32, 10][10, 1]cuda:0\" = torch._C._nn.linear(l_x_, l_self_modules_fc_parameters_weight_);  l_self_modules_fc_parameters_weight_ = None\n"
                   "        gelu: \"f32[32, 10][10, 1]cuda:0\" = torch._C._nn.gelu(linear, approximate = 'none');  linear = None\n"
                   "        add = l_x_ + gelu;  l_x_ = gelu = None\n"
                   "\n"
                   "        # File: /p/program.py:20 in forward, code: y = torch.softmax(self.head(x), dim=-1)\n"
                   "        neg = -add;  add = None\n"
                   "\n"
                   "        # No stacktrace found for following nodes\n"
                   "        sum_1 = neg.sum(dim = -1, keepdim = True);  neg = None\n"
                   "        blocks_0_head = getattr(self.blocks, \"0\").head(sum_1);  sum_1 = None\n"
                   "        _tensor_constant0 = self._tensor_constant0\n"
                   "        getattr_1 = blocks_0_head.shape\n"
                   "        return (blocks_0_head, _tensor_constant0, getattr_1)\n");
  free (got);

  got = print_with (g, fx_graph_print_str);
  g_assert_nonnull (strstr (got, "    %l_x_ : torch.Tensor [num_users=2] = placeholder[target=L_x_]\n"));
  g_assert_nonnull (strstr (got, "    %gelu : [num_users=1] = call_function[target=torch._C._nn.gelu](args = (%linear,), kwargs = {approximate: none})\n"));
  g_assert_nonnull (strstr (got, "    %add : [num_users=1] = call_function[target=operator.add](args = (%l_x_, %gelu), kwargs = {})\n"));
  g_assert_nonnull (strstr (got, "    %sum_1 : [num_users=1] = call_method[target=sum](args = (%neg,), kwargs = {dim: -1, keepdim: True})\n"));
  g_assert_nonnull (strstr (got, "    %blocks_0_head : [num_users=2] = call_module[target=blocks.0.head](args = (%sum_1,), kwargs = {})\n"));
  g_assert_nonnull (strstr (got, "    %_tensor_constant0 : [num_users=1] = get_attr[target=_tensor_constant0]\n"));
  g_assert_nonnull (strstr (got, "    %getattr_1 : [num_users=1] = call_function[target=builtins.getattr](args = (%blocks_0_head, shape), kwargs = {})\n"));
  free (got);

  got = print_with (g, fx_graph_print_tabular);
  g_assert_nonnull (strstr (got, "  <built-in function add>  "));
  g_assert_nonnull (strstr (got, "{'approximate': 'none'}"));
  g_assert_nonnull (strstr (got, "{'dim': -1, 'keepdim': True}"));
  free (got);
  fx_graph_free (g);
}

/* In-place operators, setitem, unused values, defaults, empty graphs, children. */
static void
test_code_corners (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_node *y = fx_graph_placeholder (g, "y");
  fx_arg dflt = fx_arg_float (0.5);
  y->default_value = &dflt;
  fx_arg ia[2] = { fx_arg_node (x), fx_arg_node (y) };
  fx_node *iadd = fx_graph_call_function (g, fx_target_operator ("iadd"), ia, 2, NULL, 0);
  fx_arg sl_items[3] = { fx_arg_none (), fx_arg_int (2), fx_arg_none () };
  fx_arg sl = { .kind = FX_ARG_SLICE, .u.seq = { sl_items, 3 } };
  fx_arg si[3] = { fx_arg_node (iadd), sl, fx_arg_float (0.0) };
  fx_graph_call_function (g, fx_target_operator ("setitem"), si, 3, NULL, 0);
  fx_arg gi[2] = { fx_arg_node (iadd), sl };
  fx_node *item = fx_graph_call_function (g, fx_target_operator ("getitem"), gi, 2, NULL, 0);
  fx_arg n1[1] = { fx_arg_node (item) };
  fx_graph_call_function (g, fx_target_operator ("not_"), n1, 1, NULL, 0);
  fx_arg o[1] = { fx_arg_node (iadd) };
  fx_graph_output (g, fx_arg_list (o, 1));

  char *got = print_with (g, fx_graph_print_code);
  g_assert_cmpstr (got, ==,
                   "\n\n\ndef forward(self, x, y = 0.5):\n"
                   "    x += y;  iadd = x;  x = y = None\n"
                   "    iadd[slice(None, 2, None)] = 0.0;  setitem = iadd;  setitem = None\n"
                   "    getitem = iadd[slice(None, 2, None)]\n"
                   "    not_ = _operator_not_(getitem);  getitem = not_ = None\n"
                   "    return [iadd]\n"
                   "    ");
  free (got);
  got = print_with (g, fx_graph_print_str);
  g_assert_nonnull (strstr (got, "%y : [num_users=1] = placeholder[target=y](default=0.5)\n"));
  g_assert_nonnull (strstr (got, "args = (%iadd, slice(None, 2, None), 0.0)"));
  g_assert_true (g_str_has_suffix (got, "\n    return [iadd]"));
  free (got);
  fx_graph_free (g);

  /* empty graph */
  g = fx_graph_new ();
  got = print_with (g, fx_graph_print_code);
  g_assert_cmpstr (got, ==, "\n\n\ndef forward(self):\n    pass\n    ");
  free (got);
  got = readable (g, false, false);
  g_assert_cmpstr (got, ==, "class GraphModule(torch.nn.Module):\n    def forward(self):\n        pass\n");
  free (got);
  got = print_with (g, fx_graph_print_tabular);
  g_assert_cmpstr (got, ==, "opcode    name    target    args    kwargs\n--------  ------  --------  ------  --------\n");
  free (got);
  got = print_with (g, fx_graph_print_str);
  g_assert_cmpstr (got, ==, "graph():");
  free (got);
  fx_graph_free (g);
}

static fx_graph *
build_branch (const char *op)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "arg0_1");
  set_val (x, "f32[4]");
  fx_arg a[1] = { fx_arg_node (x) };
  fx_node *r = call (g, op, a, 1);
  set_val (r, "f32[4]");
  fx_arg o[1] = { fx_arg_node (r) };
  fx_graph_output (g, fx_arg_tuple (o, 1));
  return g;
}

static void
test_readable_children (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *p = fx_graph_placeholder (g, "arg0_1");
  set_val (p, "b8[]");
  fx_node *x = fx_graph_placeholder (g, "arg1_1");
  set_val (x, "f32[4]");
  fx_node *t = fx_graph_create_node (g, FX_OP_GET_ATTR, fx_target_str ("true_graph_0"), NULL, 0, NULL, 0, NULL);
  fx_node *f = fx_graph_create_node (g, FX_OP_GET_ATTR, fx_target_str ("false_graph_0"), NULL, 0, NULL, 0, NULL);
  fx_arg ops[1] = { fx_arg_node (x) };
  fx_arg ca[4] = { fx_arg_node (p), fx_arg_node (t), fx_arg_node (f), fx_arg_tuple (ops, 1) };
  fx_node *cond = call (g, "higher_order.cond", ca, 4);
  fx_arg gi[2] = { fx_arg_node (cond), fx_arg_int (0) };
  fx_node *item = fx_graph_call_function (g, fx_target_operator ("getitem"), gi, 2, NULL, 0);
  set_val (item, "f32[4]");
  fx_arg o[1] = { fx_arg_node (item) };
  fx_graph_output (g, fx_arg_tuple (o, 1));
  fx_graph_add_child (g, "true_graph_0", build_branch ("aten.sin.default"));
  fx_graph_add_child (g, "false_graph_0", build_branch ("aten.cos.default"));

  char *got = readable (g, false, false);
  g_assert_cmpstr (got, ==,
                   "class GraphModule(torch.nn.Module):\n"
                   "    def forward(self, arg0_1: \"b8[]\", arg1_1: \"f32[4]\"):\n"
                   "        # No stacktrace found for following nodes\n"
                   "        true_graph_0 = self.true_graph_0\n"
                   "        false_graph_0 = self.false_graph_0\n"
                   "        cond = torch.ops.higher_order.cond(arg0_1, true_graph_0, false_graph_0, (arg1_1,));  arg0_1 = true_graph_0 = false_graph_0 = arg1_1 = None\n"
                   "        getitem: \"f32[4]\" = cond[0];  cond = None\n"
                   "        return (getitem,)\n"
                   "\n"
                   "    class true_graph_0(torch.nn.Module):\n"
                   "        def forward(self, arg0_1: \"f32[4]\"):\n"
                   "            # No stacktrace found for following nodes\n"
                   "            sin: \"f32[4]\" = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None\n"
                   "            return (sin,)\n"
                   "\n"
                   "    class false_graph_0(torch.nn.Module):\n"
                   "        def forward(self, arg0_1: \"f32[4]\"):\n"
                   "            # No stacktrace found for following nodes\n"
                   "            cos: \"f32[4]\" = torch.ops.aten.cos.default(arg0_1);  arg0_1 = None\n"
                   "            return (cos,)\n");
  free (got);
  got = print_with (g, fx_graph_print_tabular);
  g_assert_nonnull (strstr (got, "call_function  cond           cond  "));
  free (got);
  fx_graph_free (g);
}


/* ---------------------------------------------------------------- JSON and dot */

/* Every metadata field, every argument kind, children, attributes and input specs. */
static fx_graph *
build_everything (void)
{
  fx_graph *g = build_layernorm_gelu ();
  fx_node *ln = fx_graph_find_node (g, "native_layer_norm");
  fx_node *gi = fx_graph_find_node (g, "getitem");
  fx_node *x = fx_graph_find_node (g, "arg2_1");
  fx_node *out = fx_graph_output_node (g);

  fx_arena *a = g->arena;
  ln->meta.nn_module_stack = fx_arena_alloc (a, 2 * sizeof (fx_module_entry));
  ln->meta.nn_module_stack[0] = (fx_module_entry) { "L__self__", "", "__main__.M" };
  ln->meta.nn_module_stack[1] = (fx_module_entry) { "L__self___ln", "L['self'].ln", "torch.nn.modules.normalization.LayerNorm" };
  ln->meta.n_nn_module_stack = 2;
  ln->meta.source_fn_stack = fx_arena_alloc (a, sizeof (fx_source_fn));
  ln->meta.source_fn_stack[0] = (fx_source_fn) { "layer_norm", "<built-in function layer_norm>" };
  ln->meta.n_source_fn_stack = 1;
  ln->meta.original_aten = "aten.native_layer_norm.default";
  ln->meta.seq_nr = 20;
  fx_node_source *inner = fx_arena_alloc (a, sizeof *inner);
  *inner = (fx_node_source) { "layer_norm", "aten.layer_norm.default", 7, "decompose", "replace", NULL, 0 };
  ln->meta.from_node = fx_arena_alloc (a, sizeof (fx_node_source));
  ln->meta.from_node[0] = (fx_node_source) { "layer_norm_1", "torch.nn.functional.layer_norm", 3, "dynamo", "create", inner, 1 };
  ln->meta.n_from_node = 1;
  fx_meta_set_extra (g, &ln->meta, "partitioner_tag", "is_forward");
  fx_meta_set_extra (g, &ln->meta, "custom", "{'a': \"b\\n\"}");
  ln->meta.val.kind = FX_VAL_TUPLE;
  ln->meta.val.n_items = 3;
  ln->meta.val.items = fx_arena_alloc (a, 3 * sizeof (fx_val));
  g_assert_true (fx_val_parse_annotation ("f32[s77, 4096][4096, 1]cuda:0", a, &ln->meta.val.items[0]));
  ln->meta.val.items[0].tensor.sizes[0].value = 8192;
  ln->meta.val.items[0].tensor.requires_grad = true;
  ln->meta.val.items[0].tensor.storage_offset = (fx_dim) { 16, NULL };
  ln->meta.val.items[1] = (fx_val) { .kind = FX_VAL_SYMINT, .sym = "s77", .i = 8192 };
  ln->meta.val.items[2] = (fx_val) { .kind = FX_VAL_OTHER, .text = "None" };
  x->meta.val.tensor.subclass = "FunctionalTensor";

  /* a node carrying every argument kind */
  fx_arg sl_items[3] = { fx_arg_none (), fx_arg_int (-2), fx_arg_none () };
  fx_arg sl = { .kind = FX_ARG_SLICE, .u.seq = { sl_items, 3 } };
  fx_arg ell = { .kind = FX_ARG_ELLIPSIS };
  fx_dict_entry d[2] = { { fx_arg_str ("k\"ey"), fx_arg_float (-0.0) }, { fx_arg_int (3), fx_arg_node (gi) } };
  fx_arg inner_items[2] = { fx_arg_float (NAN), fx_arg_float (-INFINITY) };
  fx_arg all[16] = {
    fx_arg_node (gi), fx_arg_none (), fx_arg_bool (true), fx_arg_int (INT64_MIN), fx_arg_float (1e-05),
    fx_arg_str ("tab\there \\ 'q' \"dq\" \xc3\xa9"), fx_arg_dtype (FX_DTYPE_BF16),
    fx_arg_device ((fx_device) { FX_DEVICE_CUDA, 1 }), fx_arg_layout (FX_LAYOUT_SPARSE_CSR),
    fx_arg_memfmt (FX_MEMFMT_PRESERVE), fx_arg_list (inner_items, 2), fx_arg_tuple (NULL, 0), fx_arg_dict (d, 2),
    sl, ell, fx_arg_sym ("s77 + 1"),
  };
  fx_kwarg kw[1] = { { "fn", fx_arg_global ("torch.ops.aten.add.Tensor") } };
  fx_graph_set_insert_point (g, out);
  fx_graph_call_function (g, fx_target_function ("torch.ops.higher_order.auto_functionalized"), all, 16, kw, 1);
  fx_graph_set_insert_point (g, NULL);

  fx_node *p = fx_graph_create_node (g, FX_OP_PLACEHOLDER, fx_target_str ("*args"), NULL, 0, NULL, 0, "args_1");
  p->type_expr = "torch.Tensor";
  fx_graph_move_before (g, p, ln);
  fx_arg *dflt = fx_arena_alloc (a, sizeof (fx_arg));
  *dflt = fx_arg_str ("x");
  p->default_value = dflt;

  fx_attr *at = fx_graph_add_attr (g, "_tensor_constant0", FX_ATTR_CONSTANT);
  at->text = "torch.tensor([1.0])";
  g_assert_true (fx_val_parse_annotation ("f32[1]", a, &at->val));
  fx_input_spec *in = fx_graph_add_input_spec (g, "arg0_1", FX_INPUT_TENSOR);
  g_assert_true (fx_val_parse_annotation ("f32[4096][1]cuda:0", a, &in->val));
  in->storage = "abc123";
  in->is_leaf = true;
  fx_input_spec *sym = fx_graph_add_input_spec (g, "s77", FX_INPUT_SYMINT);
  sym->val = (fx_val) { .kind = FX_VAL_SYMINT, .sym = "s77", .i = 8192 };
  fx_graph_add_child (g, "true_graph_0", build_branch ("aten.sin.default"));
  g->source_file = "/tmp/x.py";
  return g;
}

static char *
to_json (const fx_graph *g)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_graph_to_json (g, &b);
  return fx_buf_steal (&b);
}

static void
check_round_trip (fx_graph *g)
{
  fx_diag diag;
  fx_graph *back = NULL;
  char *j1 = to_json (g);
  fx_status st = fx_graph_from_json (j1, strlen (j1), &back, &diag);
  if (st != FX_OK)
    g_error ("%s", diag.message);
  char *j2 = to_json (back);
  g_assert_cmpstr (j1, ==, j2);

  void (*printers[]) (const fx_graph *, fx_buf *) = { fx_graph_print_tabular, fx_graph_print_str,
                                                      fx_graph_print_code, fx_graph_dump_dot };
  for (size_t i = 0; i < G_N_ELEMENTS (printers); i++)
    {
      char *a = print_with (g, printers[i]);
      char *b = print_with (back, printers[i]);
      g_assert_cmpstr (a, ==, b);
      free (a);
      free (b);
    }
  char *ra = readable (g, true, true), *rb = readable (back, true, true);
  g_assert_cmpstr (ra, ==, rb);
  g_assert_cmpint (fx_graph_verify (back, &diag), ==, fx_graph_verify (g, &diag));
  free (ra);
  free (rb);
  free (j1);
  free (j2);
  fx_graph_free (back);
}

static void
test_json_round_trip (void)
{
  fx_graph *g = build_everything ();
  check_round_trip (g);
  char *j = to_json (g);
  g_assert_true (g_str_has_prefix (j, "{\n  \"format\": \"fxwb-graph\",\n  \"version\": 1,\n"));
  g_assert_nonnull (strstr (j, "{\"float\": \"nan\"}, {\"float\": \"-inf\"}"));
  g_assert_nonnull (strstr (j, "{\"sym\": \"s77\", \"hint\": 8192}"));
  free (j);
  fx_graph_free (g);

  g = build_layernorm_gelu ();
  check_round_trip (g);
  fx_graph_free (g);
  g = fx_graph_new ();
  check_round_trip (g);
  fx_graph_free (g);
}

static void
expect_json_error (const char *text, int line, int col, const char *fragment)
{
  fx_diag diag;
  fx_graph *g = (fx_graph *) 1;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_graph_from_json (text, strlen (text), &g, &diag), ==, FX_ERR_PARSE);
  g_assert_null (g);
  if (line > 0)
    {
      g_assert_cmpint (diag.line, ==, line);
      g_assert_cmpint (diag.col, ==, col);
    }
  if (fragment != NULL && strstr (diag.message, fragment) == NULL)
    g_error ("message '%s' lacks '%s'", diag.message, fragment);
}

#define HDR "{\"format\": \"fxwb-graph\", \"version\": 1, "

static void
test_json_errors (void)
{
  expect_json_error ("", 1, 1, NULL);
  expect_json_error ("{\n  \"format\": \"fxwb-graph\",\n  \"version\": 1,\n  \"nodes\": [}\n", 4, 13, NULL);
  expect_json_error ("[1, 2]", 0, 0, "must be an object");
  expect_json_error ("{\"format\": \"other\"}", 0, 0, "expected 'fxwb-graph'");
  expect_json_error ("{\"format\": \"fxwb-graph\", \"version\": 99}", 0, 0, "unsupported version 99");
  expect_json_error (HDR "\"nodes\": [{\"name\": \"x\", \"op\": \"jump\", \"target\": {\"kind\": \"str\", \"name\": \"x\"}}]}",
                     0, 0, "nodes[0]: unknown op 'jump'");
  expect_json_error (HDR "\"nodes\": [{\"name\": \"y\", \"op\": \"output\", \"target\": {\"kind\": \"str\", \"name\": \"output\"},"
                     " \"args\": [{\"node\": \"nope\"}]}]}", 0, 0, "nodes[0].args[0]: no node named 'nope'");
  expect_json_error (HDR "\"nodes\": [{\"name\": \"x\", \"op\": \"placeholder\", \"target\": {\"kind\": \"str\", \"name\": \"x\"}},"
                     "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": {\"kind\": \"str\", \"name\": \"x\"}}]}",
                     0, 0, "duplicate node name 'x'");
  expect_json_error (HDR "\"nodes\": [{\"name\": \"a b\", \"op\": \"placeholder\", \"target\": {\"kind\": \"str\", \"name\": \"x\"}}]}",
                     0, 0, "not a valid FX node name");
  expect_json_error (HDR "\"nodes\": [{\"name\": \"x\", \"op\": \"placeholder\", \"target\": {\"kind\": \"str\", \"name\": \"x\"},"
                     " \"args\": [{\"slice\": [1]}]}]}", 0, 0, "exactly three");
  expect_json_error (HDR "\"nodes\": [{\"name\": \"x\", \"op\": \"placeholder\", \"target\": {\"kind\": \"str\", \"name\": \"x\"},"
                     " \"meta\": {\"val\": {\"kind\": \"tensor\", \"dtype\": \"f99\", \"sizes\": []}}}]}", 0, 0, "unknown dtype");
  expect_json_error (HDR "\"nodes\": 3}", 0, 0, "must be an array");
  expect_json_error (HDR "\"nodes\": []} trailing", 1, 53, "after the document");

  /* every prefix of a valid document fails cleanly */
  fx_graph *g = build_everything ();
  char *j = to_json (g);
  size_t n = strlen (j);
  for (size_t len = 0; len + 2 < n; len += 7)
    {
      fx_diag diag;
      fx_graph *back = NULL;
      g_assert_cmpint (fx_graph_from_json (j, len, &back, &diag), ==, FX_ERR_PARSE);
      g_assert_null (back);
    }
  free (j);
  fx_graph_free (g);
}

/* Byte mutations of a valid document: never a crash; whatever still parses round-trips. */
static void
test_json_mutations (void)
{
  fx_graph *g = build_everything ();
  char *j = to_json (g);
  size_t n = strlen (j);
  static const char bytes[] = "{}[]\",:0123456789-eE.tfnul \\ax";
  for (int i = 0; i < 3000; i++)
    {
      char *m = g_strdup (j);
      int edits = 1 + g_test_rand_int_range (0, 3);
      for (int e = 0; e < edits; e++)
        m[g_test_rand_int_range (0, (gint32) n)] = bytes[g_test_rand_int_range (0, (gint32) sizeof bytes - 1)];
      fx_diag diag;
      fx_graph *back = NULL;
      if (fx_graph_from_json (m, n, &back, &diag) == FX_OK)
        {
          char *j1 = to_json (back);
          fx_graph *again = NULL;
          g_assert_cmpint (fx_graph_from_json (j1, strlen (j1), &again, &diag), ==, FX_OK);
          char *j2 = to_json (again);
          g_assert_cmpstr (j1, ==, j2);
          /* printers cope with whatever was accepted */
          char *t = print_with (back, fx_graph_print_tabular);
          char *r = readable (back, true, true);
          free (t);
          free (r);
          free (j1);
          free (j2);
          fx_graph_free (again);
          fx_graph_free (back);
        }
      else
        g_assert_null (back);
      g_free (m);
    }
  free (j);
  fx_graph_free (g);
}

/* Checks that every quoted string in the dot text is closed on its line. */
static void
assert_dot_balanced (const char *dot)
{
  bool in = false;
  int braces = 0;
  for (const char *p = dot; *p; p++)
    {
      if (in)
        {
          if (*p == '\\')
            {
              g_assert_true (p[1] != '\0' && p[1] != '\n');
              p++;
            }
          else if (*p == '"')
            in = false;
          else
            g_assert_true (*p != '\n');
        }
      else if (*p == '"')
        in = true;
      else if (*p == '{')
        braces++;
      else if (*p == '}')
        braces--;
    }
  g_assert_false (in);
  g_assert_cmpint (braces, ==, 0);
}

static void
test_dot (void)
{
  fx_graph *g = build_everything ();
  fx_node *ln = fx_graph_find_node (g, "native_layer_norm");
  ln->meta.nn_module_stack[1].type = "evil\"}; digraph x {\\";
  g->class_name = "<lambda> \"q\"";
  char *dot = print_with (g, fx_graph_dump_dot);
  assert_dot_balanced (dot);
  g_assert_true (g_str_has_prefix (dot, "digraph \"<lambda> \\\"q\\\"\" {\n"));
  g_assert_nonnull (strstr (dot, "subgraph cluster_0 {\n    label=\"L__self__: M\";"));
  g_assert_nonnull (strstr (dot, "    subgraph cluster_1 {\n      label=\"L['self'].ln: evil\\\"}; digraph x {\\\\\";"));
  g_assert_nonnull (strstr (dot, "[label=\"native_layer_norm\\ntorch.ops.aten.native_layer_norm.default\"]"));
  g_assert_nonnull (strstr (dot, "[label=\"gelu\\ntorch.ops.aten.gelu.default\\nf32[8192, 4096]\"]"));
  g_assert_nonnull (strstr (dot, " [label=\"f32[8192, 4096]\"];\n"));
  free (dot);
  fx_graph_free (g);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/repr/float", test_float_repr);
  g_test_add_func ("/ir/repr/str", test_str_repr);
  g_test_add_func ("/ir/repr/arg-kinds", test_arg_kinds);
  g_test_add_func ("/ir/shared-helpers", test_shared_helpers);
  g_test_add_func ("/ir/repr/targets", test_targets);
  g_test_add_func ("/ir/api", test_ir_api);
  g_test_add_func ("/ir/print/fixture-layernorm-gelu", test_fixture_layernorm_gelu);
  g_test_add_func ("/ir/print/code-spec-example", test_code_spec_example);
  g_test_add_func ("/ir/print/dynamo", test_dynamo_code);
  g_test_add_func ("/ir/print/code-corners", test_code_corners);
  g_test_add_func ("/ir/print/readable-children", test_readable_children);
  g_test_add_func ("/ir/json/round-trip", test_json_round_trip);
  g_test_add_func ("/ir/json/errors", test_json_errors);
  g_test_add_func ("/ir/json/mutations", test_json_mutations);
  g_test_add_func ("/ir/dot", test_dot);
  return g_test_run ();
}
