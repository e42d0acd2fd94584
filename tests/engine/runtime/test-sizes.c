/* test-sizes.c: hostile sizes (2^63-1 elements, 2^32 strides, negative sizes, overflowing shape arguments) are
   located errors naming the node, never a heap overflow or a silent numel of 0. Runs clean under ASan+UBSan. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fx/pyparse.h"
#include "fx/runtime.h"

static fx_graph *
parse (const char *code)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_code (code, strlen (code), "sizes.py", &g, &diag) != FX_OK)
    g_error ("parse: %s", diag.message);
  return g;
}

/* Makes the graph's inputs from its annotations and runs it; returns the status, the diag tells why. */
static fx_status
make_and_run (const char *code, fx_diag *diag)
{
  fx_graph *g = parse (code);
  fx_arena *arena = fx_arena_new ();
  fx_value *inputs = NULL, *outs = NULL;
  size_t n_inputs = 0, n_outs = 0;
  fx_diag_clear (diag);
  fx_status st = fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 0, NULL, arena, &inputs, &n_inputs, diag);
  if (st == FX_OK)
    {
      st = fx_interp_run (g, inputs, n_inputs, NULL, arena, &outs, &n_outs, diag);
      for (size_t i = 0; i < n_outs; i++)
        fx_value_clear (&outs[i]);
      for (size_t i = 0; i < n_inputs; i++)
        fx_value_clear (&inputs[i]);
    }
  fx_arena_free (arena);
  fx_graph_free (g);
  return st;
}

static void
assert_node_error (const char *code, const char *node, const char *words)
{
  fx_diag diag;
  fx_status st = make_and_run (code, &diag);
  if (st == FX_OK)
    g_error ("expected an error at node '%s', the graph ran:\n%s", node, code);
  g_test_message ("%s: %s", node, diag.message);
  g_assert_cmpstr (diag.node, ==, node);
  char *quoted = g_strdup_printf ("'%s'", node);
  g_assert_nonnull (strstr (diag.message, quoted));
  g_free (quoted);
  g_assert_nonnull (strstr (diag.message, words));
}

/* ---------------------------------------------------------------- the layout check itself */

static void
test_layout_check (void)
{
  fx_diag diag;
  size_t nbytes = 0;
  int64_t s1[] = { INT64_MAX };
  g_assert_cmpint (fx_layout_check (FX_DTYPE_F32, 1, s1, NULL, 0, &nbytes, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "overflows"));
  /* 2^62 x 4 elements: the numel wraps to 0 without a check */
  int64_t s2[] = { (int64_t) 1 << 62, 4 };
  g_assert_cmpint (fx_layout_check (FX_DTYPE_F32, 2, s2, NULL, 0, &nbytes, &diag), ==, FX_ERR_INVALID);
  /* a small numel over a huge stride: the extent, not the numel, overflows */
  int64_t s3[] = { 4, 4 }, st3[] = { (int64_t) 1 << 62, 1 };
  g_assert_cmpint (fx_layout_check (FX_DTYPE_F32, 2, s3, st3, 0, &nbytes, &diag), ==, FX_ERR_INVALID);
  int64_t s4[] = { -5, 4 };
  g_assert_cmpint (fx_layout_check (FX_DTYPE_F32, 2, s4, NULL, 0, &nbytes, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "negative size -5"));
  /* 2^32 strides are representable: 3 * 2^32 + 3 + 1 elements of 4 bytes */
  int64_t st5[] = { (int64_t) 1 << 32, 1 };
  g_assert_cmpint (fx_layout_check (FX_DTYPE_F32, 2, s3, st5, 0, &nbytes, &diag), ==, FX_OK);
  g_assert_cmpuint (nbytes, ==, (3 * ((size_t) 1 << 32) + 4) * 4);
  /* an empty tensor needs no storage whatever its strides */
  int64_t s6[] = { 0, 7 };
  g_assert_cmpint (fx_layout_check (FX_DTYPE_F32, 2, s6, NULL, 0, &nbytes, &diag), ==, FX_OK);
  g_assert_cmpuint (nbytes, ==, 0);
  int64_t a = 0;
  g_assert_false (fx_size_mul (INT64_MAX, 2, &a));
  g_assert_false (fx_size_add (INT64_MAX, 1, &a));
  g_assert_true (fx_size_mul ((int64_t) 1 << 31, (int64_t) 1 << 31, &a));
  g_assert_cmpint (a, ==, (int64_t) 1 << 62);
}

static void
test_allocation_limit (void)
{
  g_setenv ("FX_MAX_TENSOR_BYTES", "1M", TRUE);
  g_assert_cmpuint (fx_tensor_max_bytes (), ==, (size_t) 1 << 20);
  fx_tensor *t = NULL;
  fx_diag diag;
  int64_t sizes[] = { 1024, 1024 };
  g_assert_cmpint (fx_tensor_new_checked (NULL, FX_DTYPE_F32, 2, sizes, NULL, &t, &diag), ==, FX_ERR_NOMEM);
  g_assert_null (t);
  g_assert_nonnull (strstr (diag.message, "FX_MAX_TENSOR_BYTES"));
  g_assert_null (fx_tensor_new (NULL, FX_DTYPE_F32, 2, sizes));
  sizes[0] = 16;
  g_assert_cmpint (fx_tensor_new_checked (NULL, FX_DTYPE_F32, 2, sizes, NULL, &t, &diag), ==, FX_OK);
  g_assert_cmpuint (t->storage->nbytes, ==, 16 * 1024 * 4);
  fx_tensor_unref (t);
  g_unsetenv ("FX_MAX_TENSOR_BYTES");
  g_assert_cmpuint (fx_tensor_max_bytes (), >, (size_t) 1 << 20);
}

/* ---------------------------------------------------------------- example inputs */

static void
test_input_numel_overflow (void)
{
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, big_input: \"f32[9223372036854775807]\"):\n"
                     "        relu: \"f32[9223372036854775807]\" = torch.ops.aten.relu.default(big_input)\n"
                     "        return (relu,)\n",
                     "big_input", "overflows");
}

static void
test_input_huge_strides (void)
{
  /* 4 x 4 elements over strides of 2^32: 48 GiB of storage, over the (test's) limit */
  g_setenv ("FX_MAX_TENSOR_BYTES", "64M", TRUE);
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, strided_in: \"f32[4, 4][4294967296, 4294967296]\"):\n"
                     "        relu: \"f32[4, 4]\" = torch.ops.aten.relu.default(strided_in)\n"
                     "        return (relu,)\n",
                     "strided_in", "FX_MAX_TENSOR_BYTES");
  /* strides of 2^62: the extent overflows whatever the limit */
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, strided_in: \"f32[4, 4][4611686018427387904, 1]\"):\n"
                     "        relu: \"f32[4, 4]\" = torch.ops.aten.relu.default(strided_in)\n"
                     "        return (relu,)\n",
                     "strided_in", "overflows");
  g_unsetenv ("FX_MAX_TENSOR_BYTES");
}

static void
test_input_negative_size (void)
{
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, neg_in: \"f32[-5, 4]\"):\n"
                     "        relu: \"f32[-5, 4]\" = torch.ops.aten.relu.default(neg_in)\n"
                     "        return (relu,)\n",
                     "neg_in", "negative size -5");
}

static void
test_inputs_total_limit (void)
{
  /* each input fits the 1 MiB limit, the two together do not: the second is refused */
  g_setenv ("FX_MAX_TENSOR_BYTES", "1M", TRUE);
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, first: \"f32[65536, 3]\", second: \"f32[65536, 3]\"):\n"
                     "        add: \"f32[65536, 3]\" = torch.ops.aten.add.Tensor(first, second)\n"
                     "        return (add,)\n",
                     "second", "in all");
  g_unsetenv ("FX_MAX_TENSOR_BYTES");
}

/* ---------------------------------------------------------------- op shapes */

static void
test_full_overflow (void)
{
  /* numel 2^64 wrapped to 0 and the graph passed its accuracy check */
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, x: \"f32[4]\"):\n"
                     "        full: \"f32[4611686018427387904, 4]\" = torch.ops.aten.full.default("
                     "[4611686018427387904, 4], 1.0, dtype = torch.float32, device = device(type='cpu'), "
                     "pin_memory = False)\n"
                     "        sum_1: \"f32[]\" = torch.ops.aten.sum.default(full)\n"
                     "        add: \"f32[4]\" = torch.ops.aten.add.Tensor(x, sum_1)\n"
                     "        return (add,)\n",
                     "full", "overflows");
}

static void
test_full_over_limit (void)
{
  /* representable but far over the memory limit: refused when the kernel would allocate it */
  g_setenv ("FX_MAX_TENSOR_BYTES", "16M", TRUE);
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, x: \"f32[4]\"):\n"
                     "        zeros: \"f32[1099511627776, 4]\" = torch.ops.aten.zeros.default("
                     "[1099511627776, 4], dtype = torch.float32, device = device(type='cpu'), pin_memory = False)\n"
                     "        sum_1: \"f32[]\" = torch.ops.aten.sum.default(zeros)\n"
                     "        add: \"f32[4]\" = torch.ops.aten.add.Tensor(x, sum_1)\n"
                     "        return (add,)\n",
                     "zeros", "FX_MAX_TENSOR_BYTES");
  g_unsetenv ("FX_MAX_TENSOR_BYTES");
}

static void
test_expand_overflow (void)
{
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, x: \"f32[1]\"):\n"
                     "        expand: \"f32[9223372036854775807]\" = torch.ops.aten.expand.default(x, "
                     "[9223372036854775807])\n"
                     "        relu: \"f32[9223372036854775807]\" = torch.ops.aten.relu.default(expand)\n"
                     "        return (relu,)\n",
                     "expand", "overflows");
  /* more sizes than dims the engine has: no write past the shape arrays */
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, x: \"f32[1]\"):\n"
                     "        expand: \"f32[1]\" = torch.ops.aten.expand.default(x, "
                     "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])\n"
                     "        return (expand,)\n",
                     "expand", "expand");
}

static void
test_view_overflow (void)
{
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, x: \"f32[4]\"):\n"
                     "        view: \"f32[4]\" = torch.ops.aten.view.default(x, [4611686018427387904, 4, -1])\n"
                     "        return (view,)\n",
                     "view", "overflow");
}

static void
test_pad_overflow (void)
{
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, x: \"f32[4, 4]\"):\n"
                     "        constant_pad_nd: \"f32[4, 4]\" = torch.ops.aten.constant_pad_nd.default(x, "
                     "[9223372036854775807, 1])\n"
                     "        return (constant_pad_nd,)\n",
                     "constant_pad_nd", "overflow");
}

static void
test_cat_overflow (void)
{
  /* each operand is fine (stride 0), their concatenation is not */
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, x: \"f32[1]\"):\n"
                     "        expand: \"f32[1152921504606846976]\" = torch.ops.aten.expand.default(x, "
                     "[1152921504606846976])\n"
                     "        cat: \"f32[4611686018427387904]\" = torch.ops.aten.cat.default("
                     "[expand, expand, expand, expand, expand, expand, expand, expand, expand])\n"
                     "        return (cat,)\n",
                     "cat", "overflow");
}

static void
test_arange_inf (void)
{
  assert_node_error ("class GraphModule(torch.nn.Module):\n"
                     "    def forward(self, x: \"f32[4]\"):\n"
                     "        arange: \"f32[4]\" = torch.ops.aten.arange.start_step(0, 1e300, 1e-300, "
                     "dtype = torch.float32, device = device(type='cpu'), pin_memory = False)\n"
                     "        return (arange,)\n",
                     "arange", "arange");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_unsetenv ("FX_MAX_TENSOR_BYTES");
  g_test_add_func ("/sizes/layout-check", test_layout_check);
  g_test_add_func ("/sizes/allocation-limit", test_allocation_limit);
  g_test_add_func ("/sizes/input-numel-overflow", test_input_numel_overflow);
  g_test_add_func ("/sizes/input-huge-strides", test_input_huge_strides);
  g_test_add_func ("/sizes/input-negative-size", test_input_negative_size);
  g_test_add_func ("/sizes/inputs-total-limit", test_inputs_total_limit);
  g_test_add_func ("/sizes/full-overflow", test_full_overflow);
  g_test_add_func ("/sizes/full-over-limit", test_full_over_limit);
  g_test_add_func ("/sizes/expand-overflow", test_expand_overflow);
  g_test_add_func ("/sizes/view-overflow", test_view_overflow);
  g_test_add_func ("/sizes/pad-overflow", test_pad_overflow);
  g_test_add_func ("/sizes/cat-overflow", test_cat_overflow);
  g_test_add_func ("/sizes/arange-inf", test_arange_inf);
  return g_test_run ();
}
