/* test-provenance-cli.c: Inductor's provenance tracking as a chain in `fxwb show --provenance` on the AOTInductor
   fixtures (aoti_provenance-cpu and -cuda, torch 2.11 with provenance_tracking_level = 1): a pre-grad node, its
   post-grad nodes and the kernels computing them, with the lines of the stored wrapper and kernel code launching and
   defining each; from a post-grad node and from a kernel too; and the code by the name it was dumped under. argv[1]
   (after the test options) is the fxwb program. */
#include "fx-test-lines.h"
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxwb-test-run.h"

static const char *fxwb_path;

static char *
import_fixture (const char *name, const char *tmp)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  g_autofree char *trace = g_build_filename (dir ? dir : "tests/fixtures", "traces", name, "torch_trace", NULL);
  g_autofree char *file = g_strconcat (name, ".fxwb", NULL);
  char *ws = g_build_filename (tmp, file, NULL);
  fxwb_run_result r = fxwb_test_run (fxwb_path, (const char *[]) { "import", "-q", "--strict", trace, "-o", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  fxwb_run_result_clear (&r);
  return ws;
}

/* The line-th line (1-based) of text, without its newline. */
static char *
nth_line (const char *text, int line)
{
  g_auto (GStrv) lines = fx_test_split_lines (text);
  g_assert_cmpint (line, >, 0);
  g_assert_cmpuint ((guint) line, <=, g_strv_length (lines));
  return g_strdup (lines[line - 1]);
}

/* The code NAME of the compile, as --artifact prints it. */
static char *
code (const char *ws, const char *name)
{
  fxwb_run_result r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "[-/-]", "--artifact", name, NULL });
  g_assert_cmpint (r.status, ==, 0);
  char *text = g_strdup (r.out);
  fxwb_run_result_clear (&r);
  return text;
}

static void
remove_ws (const char *ws)
{
  g_autofree char *wal = g_strconcat (ws, "-wal", NULL), *shm = g_strconcat (ws, "-shm", NULL);
  g_unlink (ws);
  g_unlink (wal);
  g_unlink (shm);
}

static void
test_cpu (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("fxwb-prov-XXXXXX", NULL);
  g_autofree char *ws = import_fixture ("aoti_provenance-cpu", tmp);
  g_autofree char *wrapper = code (ws, "inductor_aot_wrapper_code");
  g_autofree char *kernels = code (ws, "inductor_aot_kernel_code");

  /* pre-grad relu: post-grad relu, computed by two fused kernels (the second recomputes it) */
  fxwb_run_result r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "[-/-]", "--provenance", "relu", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_test_message ("%s", r.out);
  g_assert_nonnull (strstr (r.out, "provenance of pre_grad relu\n  pre_grad   relu\n  post_grad  relu\n"));
  g_assert_nonnull (strstr (r.out, "  kernel     cpp_fused_relu_0:2  launched at inductor_aot_wrapper_code:"));
  g_assert_nonnull (strstr (r.out, "  kernel     cpp_fused_mul_relu_sum_1:4  launched at inductor_aot_wrapper_code:"));
  fxwb_run_result_clear (&r);

  /* the lines are those of the launch and the definition */
  r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "[-/-]", "--provenance", "cpp_fused_relu_0", "--json",
                                                   NULL });
  g_assert_cmpint (r.status, ==, 0);
  {
    g_autoptr (GRegex) re = g_regex_new ("\"launch_line\": (\\d+), \"def_code\": \"inductor_aot_kernel_code\", "
                                         "\"def_line\": (\\d+)", 0, 0, NULL);
    g_autoptr (GMatchInfo) m = NULL;
    g_assert_true (g_regex_match (re, r.out, 0, &m));
    g_autofree char *ls = g_match_info_fetch (m, 1), *ds = g_match_info_fetch (m, 2);
    g_autofree char *launch = nth_line (wrapper, atoi (ls)), *def = nth_line (kernels, atoi (ds));
    g_assert_true (g_str_has_prefix (g_strstrip (launch), "cpp_fused_relu_0((const float*)"));
    g_assert_cmpstr (def, ==, "extern \"C\"  void  cpp_fused_relu_0(const float* in_ptr0,");
  }
  g_assert_nonnull (strstr (r.out, "\"side\": \"kernel\""));
  g_assert_nonnull (strstr (r.out, "\"post_grad\": [ \"relu\", \"l2_bias\" ]"));
  g_assert_nonnull (strstr (r.out, "\"pre_grad\": [ \"relu\" ]"));
  fxwb_run_result_clear (&r);

  /* pre-grad linear: permute and addmm after decomposition, addmm an extern call (launched, defined nowhere) */
  r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "[-/-]", "--provenance", "linear", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "  post_grad  permute, addmm\n  kernel     aoti_torch_cpu_addmm_out:1  launched at "
                                   "inductor_aot_wrapper_code:"));
  g_assert_null (strstr (r.out, "defined at"));
  fxwb_run_result_clear (&r);

  /* from the post-grad side: addmm_1 belongs to pre-grad linear_1 */
  r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "--provenance", "post_grad:addmm_1", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "provenance of post_grad addmm_1\n  pre_grad   linear_1\n  post_grad  addmm_1\n"
                                   "  kernel     aoti_torch_cpu_addmm_out:3"));
  fxwb_run_result_clear (&r);

  /* a name the mappings lack: an error naming the pre-grad nodes there are */
  r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "[-/-]", "--provenance", "conv", NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "no node or kernel 'conv' in the provenance mappings (pre-grad nodes: linear, relu, "
                                   "sum_1, linear_1, mul)"));
  fxwb_run_result_clear (&r);
  remove_ws (ws);
  g_rmdir (tmp);
}

static void
test_cuda (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("fxwb-prov-XXXXXX", NULL);
  g_autofree char *ws = import_fixture ("aoti_provenance-cuda", tmp);
  g_autofree char *wrapper = code (ws, "inductor_aot_wrapper_code");

  /* pre-grad linear: an mm and the bias add fused into the reduction's Triton kernel */
  fxwb_run_result r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "[-/-]", "--provenance", "linear",
                                                                   "--json", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_test_message ("%s", r.out);
  g_assert_nonnull (strstr (r.out, "\"post_grad\": [ \"permute\", \"mm_default_1\", \"add_tensor_1\" ]"));
  g_assert_nonnull (strstr (r.out, "\"name\": \"aoti_torch_cuda_mm_out\", \"handle\": 1"));
  {
    /* Triton kernels are embedded in the wrapper: launched by call_NAME, defined by def NAME */
    g_autoptr (GRegex) re = g_regex_new ("\"name\": \"triton_per_fused_addmm_relu_sum_0\", \"handle\": 2, "
                                         "\"launch_code\": \"inductor_aot_wrapper_code\", \"launch_line\": (\\d+), "
                                         "\"def_code\": \"inductor_aot_wrapper_code\", \"def_line\": (\\d+)", 0, 0, NULL);
    g_autoptr (GMatchInfo) m = NULL;
    g_assert_true (g_regex_match (re, r.out, 0, &m));
    g_autofree char *ls = g_match_info_fetch (m, 1), *ds = g_match_info_fetch (m, 2);
    g_autofree char *launch = nth_line (wrapper, atoi (ls)), *def = nth_line (wrapper, atoi (ds));
    g_assert_true (g_str_has_prefix (g_strstrip (launch), "call_triton_per_fused_addmm_relu_sum_0(buf1, l1_bias"));
    g_assert_true (g_str_has_prefix (g_strstrip (def), "def triton_per_fused_addmm_relu_sum_0(in_out_ptr0"));
  }
  fxwb_run_result_clear (&r);

  /* from the kernel: the post-grad nodes it computes and their pre-grad nodes */
  r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "[-/-]", "--provenance", "triton_poi_fused_addmm_mul_1",
                                                   NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "provenance of kernel triton_poi_fused_addmm_mul_1\n  pre_grad   mul, linear_1\n"
                                   "  post_grad  mul, add_tensor, l2_bias\n"));
  fxwb_run_result_clear (&r);
  remove_ws (ws);
  g_rmdir (tmp);
}

/* A trace without provenance mappings says how to make one. */
static void
test_none (void)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  g_autofree char *trace = g_build_filename (dir ? dir : "tests/fixtures", "traces", "export_data_dependent-cpu",
                                             "torch_trace", NULL);
  g_autofree char *tmp = g_dir_make_tmp ("fxwb-prov-XXXXXX", NULL);
  g_autofree char *ws = g_build_filename (tmp, "none.fxwb", NULL);
  fxwb_run_result r = fxwb_test_run (fxwb_path, (const char *[]) { "import", "-q", trace, "-o", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  fxwb_run_result_clear (&r);
  r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "--provenance", "relu", NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "provenance_tracking_level = 1"));
  fxwb_run_result_clear (&r);
  remove_ws (ws);
  g_rmdir (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 2)
    {
      g_printerr ("usage: %s FXWB\n", argv[0]);
      return 2;
    }
  fxwb_path = argv[1];
  g_test_add_func ("/provenance/cpu", test_cpu);
  g_test_add_func ("/provenance/cuda", test_cuda);
  g_test_add_func ("/provenance/none", test_none);
  return g_test_run ();
}
