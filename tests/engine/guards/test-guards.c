/* test-guards.c: TensorCheck order and reason texts, guard code strings, strip_local_scope and recompile messages. */
#include <glib.h>

#include "fx/guards.h"

static fx_tensor_check
make (fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides)
{
  fx_tensor_check c = { 0 };
  c.type_name = "Tensor";
  c.dtype = dtype;
  c.device.type = FX_DEVICE_CPU;
  c.device.index = -1;
  c.ndim = ndim;
  for (int i = 0; i < ndim; i++)
    {
      c.sizes[i] = sizes[i];
      c.strides[i] = strides[i];
    }
  return c;
}

static void
check_reason (const fx_tensor_check *e, const fx_tensor_check *a, const char *want)
{
  fx_buf b;
  fx_buf_init (&b);
  bool ok = fx_tensor_check_verbose (e, a, "x", &b);
  if (!want)
    g_assert_true (ok);
  else
    {
      g_assert_false (ok);
      g_assert_cmpstr (b.data, ==, want);
    }
  fx_buf_free (&b);
}

static void
test_tensor_reasons (void)
{
  int64_t s10[] = { 10 }, s16[] = { 16 }, st1[] = { 1 }, s83[] = { 8, 3 }, st31[] = { 3, 1 }, st11[] = { 1, 1 };
  fx_tensor_check e = make (FX_DTYPE_F32, 1, s10, st1);
  fx_tensor_check a = make (FX_DTYPE_F32, 1, s16, st1);
  check_reason (&e, &e, NULL);
  check_reason (&e, &a, "tensor 'x' size mismatch at index 0. expected 10, actual 16");
  a = make (FX_DTYPE_F32, 2, s83, st31);
  check_reason (&e, &a, "tensor 'x' rank mismatch. expected 1, actual 2");
  /* dtype is checked before the rank */
  a = make (FX_DTYPE_F64, 2, s83, st31);
  check_reason (&e, &a, "tensor 'x' dtype mismatch. expected Float, actual Double");
  a = make (FX_DTYPE_F32, 1, s10, st1);
  a.requires_grad = true;
  check_reason (&e, &a, "tensor 'x' requires_grad mismatch. expected requires_grad=0");
  fx_tensor_check e2 = make (FX_DTYPE_F32, 2, s83, st31);
  a = make (FX_DTYPE_F32, 2, s83, st11);
  check_reason (&e2, &a, "tensor 'x' stride mismatch at index 0. expected 3, actual 1");
  /* a dynamic dim (-1) accepts any size */
  e.sizes[0] = -1;
  a = make (FX_DTYPE_F32, 1, s16, st1);
  check_reason (&e, &a, NULL);
  a.device.type = FX_DEVICE_CUDA;
  a.device.index = 0;
  check_reason (&e, &a, "tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, "
                "ADInplaceOrView, AutogradCPU), actual DispatchKeySet(CUDA, BackendSelect, ADInplaceOrView, AutogradCUDA)");
}

static void
test_code (void)
{
  int64_t s[] = { -1, 3 }, st[] = { 3, 1 };
  fx_tensor_check c = make (FX_DTYPE_F32, 2, s, st);
  fx_buf b;
  fx_buf_init (&b);
  fx_tensor_check_code (&c, "L['x']", &b);
  g_assert_cmpstr (b.data, ==, "check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, "
                   "AutogradCPU), torch.float32, device=None, requires_grad=False, size=[None, 3], stride=[3, 1])");
  fx_buf_reset (&b);
  fx_guard_strip_local_scope ("L['x'] == L[ \"y\" ] and G['z'] L[x]", &b);
  g_assert_cmpstr (b.data, ==, "x == y and G['z'] L[x]");
  fx_buf_free (&b);
}

static void
test_messages (void)
{
  const char *reasons[] = { "0/1: n == 3", "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8" };
  fx_buf b;
  fx_buf_init (&b);
  fx_guard_recompile_message ("f", "/p/dyn3.py", 3, reasons, 2, &b);
  g_assert_cmpstr (b.data, ==, "Recompiling function f in /p/dyn3.py:3\n"
                   "    triggered by the following guard failure(s):\n"
                   "    - 0/1: n == 3\n"
                   "    - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8");
  fx_buf_reset (&b);
  fx_guard_recompile_message_verbose ("f", "/p/dyn3.py", 3, reasons, 2, &b);
  g_assert_cmpstr (b.data, ==, "Recompiling function f in /p/dyn3.py:3\n"
                   "    triggered by the following guard failure(s):\n"
                   "    guard 0 failures:\n"
                   "    - 0/1: n == 3\n"
                   "\n"
                   "    guard 1 failures:\n"
                   "    - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8");
  fx_buf_reset (&b);
  /* a value guard with its user stack (Dynamo 2.11's form, as tests/fixtures/traces/breaks_recompiles-cpu logs it):
     the reason has the stack under "User stack trace:", and every line of it gets its dash */
  fx_guard_set set;
  fx_guard_set_init (&set);
  fx_guard *g = fx_guard_set_add (&set, FX_GUARD_EQUALS_MATCH, "L['n']", "L['n'] == 2", "return x * n + n  # p.py:20 in int_arg");
  fx_guard_set_user_stack (g, "  File \"/w/p.py\", line 20, in int_arg\n    return x * n + n");
  fx_buf r;
  fx_buf_init (&r);
  fx_buf_puts (&r, "3/0: ");
  fx_guard_fail_reason (g, &r);
  g_assert_nonnull (strstr (r.data, "3/0: n == 2 "));
  g_assert_nonnull (strstr (r.data, "# return x * n + n  # p.py:20 in int_arg\nUser stack trace:\n"
                                    "  File \"/w/p.py\", line 20, in int_arg\n    return x * n + n"));
  const char *one[] = { r.data };
  fx_guard_recompile_message ("int_arg", "/w/p.py", 19, one, 1, &b);
  g_assert_nonnull (strstr (b.data, "\n    - User stack trace:\n    -   File \"/w/p.py\", line 20, in int_arg\n"
                                    "    -     return x * n + n"));
  g_assert_null (strstr (b.data, "\nUser"));
  fx_buf_free (&r);
  fx_guard_set_clear (&set);
  fx_buf_reset (&b);
  fx_guard_recompile_limit_message (2, "g", "/p/dyn3.py", 22, "2/1: tensor 'k' dtype mismatch. expected Double, actual Half", &b);
  g_assert_cmpstr (b.data, ==, "torch._dynamo hit config.recompile_limit (2)\n"
                   "   function: 'g' (/p/dyn3.py:22)\n"
                   "   last reason: 2/1: tensor 'k' dtype mismatch. expected Double, actual Half\n"
                   "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
                   "To diagnose recompilation issues, see "
                   "https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html");
  fx_buf_free (&b);
}

static void
test_tree (void)
{
  fx_guard_set set;
  fx_guard_set_init (&set);
  fx_guard_set_add (&set, FX_GUARD_EQUALS_MATCH, "L['n']", "L['n'] == 3", "return x * n  # p.py:4 in f");
  fx_guard_set_add (&set, FX_GUARD_TENSOR_MATCH, "L['x']", "check_tensor(L['x'])", NULL);
  fx_buf b;
  fx_buf_init (&b);
  fx_guard_set_print_tree (&set, &b);
  g_assert_cmpstr (b.data, ==, "TREE_GUARD_MANAGER:\n+- RootGuardManager\n"
                   "| +- GuardManager: source=L['n']\n"
                   "| | +- EQUALS_MATCH: L['n'] == 3                                                   # return x * n  # p.py:4 in f\n"
                   "| +- GuardManager: source=L['x']\n"
                   "| | +- TENSOR_MATCH: check_tensor(L['x'])\n");
  fx_buf_reset (&b);
  fx_guard_fail_reason (&set.guards[0], &b);
  /* padded as L['n'] == 3, then stripped: the spec's "n == 3" + 51 spaces */
  g_assert_cmpstr (b.data, ==, "n == 3                                                   # return x * n  # p.py:4 in f");
  fx_buf_free (&b);
  fx_guard_set_clear (&set);
}

/* Shape-env guards hang off the tree after the root's managers, unpadded (guards.py's LAMBDA_GUARD lines). */
static void
test_tree_shape_env (void)
{
  fx_guard_set set;
  fx_guard_set_init (&set);
  fx_guard_set_add (&set, FX_GUARD_SHAPE_ENV, NULL, "2 <= L['a'].size()[0]", "x = a / 2  # p.py:6 in f");
  fx_guard_set_add (&set, FX_GUARD_TENSOR_MATCH, "L['a']", "check_tensor(L['a'])", NULL);
  fx_guard_set_add (&set, FX_GUARD_SHAPE_ENV, NULL, "L['a'].stride()[0] == L['a'].size()[1]",
                    "(unknown source L['a'].stride()[0], please file a bug)");
  fx_buf b;
  fx_buf_init (&b);
  fx_guard_set_print_tree (&set, &b);
  g_assert_cmpstr (b.data, ==, "TREE_GUARD_MANAGER:\n+- RootGuardManager\n"
                   "| +- GuardManager: source=L['a']\n"
                   "| | +- TENSOR_MATCH: check_tensor(L['a'])\n"
                   "+- LAMBDA_GUARD: 2 <= L['a'].size()[0]  # x = a / 2  # p.py:6 in f\n"
                   "+- LAMBDA_GUARD: L['a'].stride()[0] == L['a'].size()[1]  # (unknown source L['a'].stride()[0], "
                   "please file a bug)\n");
  g_assert_cmpstr (fx_guard_kind_name (FX_GUARD_SHAPE_ENV), ==, "LAMBDA_GUARD");
  fx_buf_free (&b);
  fx_guard_set_clear (&set);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/guards/tensor-reasons", test_tensor_reasons);
  g_test_add_func ("/guards/code", test_code);
  g_test_add_func ("/guards/messages", test_messages);
  g_test_add_func ("/guards/tree", test_tree);
  g_test_add_func ("/guards/tree-shape-env", test_tree_shape_env);
  return g_test_run ();
}
