/* test-print-cli.c: `fxwb print` as a user runs it: every format on the fixtures, JSON in and out, and the exit
   codes and located errors for bad input. argv[1] (after the test options) is the fxwb program. */
#include <glib.h>

#include "fxwb-test-run.h"
#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

static const char *fxwb_path;
static char *tmp_dir;

typedef fxwb_run_result run_result;
#define run_result_clear fxwb_run_result_clear

static run_result
run_fxwb (const char *a1, const char *a2, const char *a3, const char *a4)
{
  const char *argv[8] = { fxwb_path, "print", a1, a2, a3, a4, NULL };
  return fxwb_test_spawn (NULL, argv, NULL);
}


static char *
fixture_path (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  return g_build_filename (dir ? dir : "tests/fixtures", rel, NULL);
}

static char *
slurp (const char *path)
{
  char *text = NULL;
  g_autoptr (GError) error = NULL;
  if (!g_file_get_contents (path, &text, NULL, &error))
    g_error ("%s", error->message);
  return text;
}

static void
test_fixtures (void)
{
  static const char *names[] = {
    "layernorm_gelu.aten.0", "layernorm_gelu.core_aten.0", "mlp_block.aten.0", "mlp_block.core_aten.0",
    "pointwise_chain.aten.0", "pointwise_chain.core_aten.0", "rmsnorm_residual.aten.0",
    "rmsnorm_residual.core_aten.0", "softmax_rows.aten.0", "softmax_rows.core_aten.0",
  };
  for (size_t i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *rel = g_strdup_printf ("graphs/%s.py", names[i]);
      g_autofree char *tab_rel = g_strdup_printf ("graphs/%s.tabular.txt", names[i]);
      g_autofree char *py = fixture_path (rel);
      g_autofree char *tab = fixture_path (tab_rel);
      g_autofree char *want_py = slurp (py);
      g_autofree char *want_tab = slurp (tab);

      run_result r = run_fxwb ("--stride", "--device", py, NULL);
      g_assert_cmpint (r.status, ==, 0);
      g_assert_cmpstr (r.out, ==, want_py);
      run_result_clear (&r);

      r = run_fxwb ("--tabular", py, NULL, NULL);
      g_assert_cmpint (r.status, ==, 0);
      g_assert_cmpstr (r.out, ==, want_tab);
      run_result_clear (&r);

      /* through the canonical JSON and back */
      r = run_fxwb ("--json", py, NULL, NULL);
      g_assert_cmpint (r.status, ==, 0);
      g_autofree char *json_path = g_build_filename (tmp_dir, "graph.json", NULL);
      g_assert_true (g_file_set_contents (json_path, r.out, -1, NULL));
      run_result j = run_fxwb ("--json", json_path, NULL, NULL);
      g_assert_cmpstr (j.out, ==, r.out);
      run_result_clear (&j);
      run_result_clear (&r);
      r = run_fxwb ("--stride", "--device", json_path, NULL);
      g_assert_cmpint (r.status, ==, 0);
      g_assert_cmpstr (r.out, ==, want_py);
      run_result_clear (&r);

      r = run_fxwb ("--dot", py, NULL, NULL);
      g_assert_cmpint (r.status, ==, 0);
      g_assert_true (g_str_has_prefix (r.out, "digraph \"<lambda>\" {\n"));
      run_result_clear (&r);
    }
}

static void
test_formats (void)
{
  g_autofree char *py = fixture_path ("graphs/softmax_rows.core_aten.0.py");
  run_result r = run_fxwb ("--code", py, NULL, NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==,
                   "\n\n\ndef forward(self, arg0_1):\n"
                   "    _softmax = torch.ops.aten._softmax.default(arg0_1, -1, False);  arg0_1 = None\n"
                   "    return (_softmax,)\n"
                   "    \n");
  run_result_clear (&r);

  r = run_fxwb ("--graph", py, NULL, NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==,
                   "graph():\n"
                   "    %arg0_1 : [num_users=1] = placeholder[target=arg0_1]\n"
                   "    %_softmax : [num_users=1] = call_function[target=torch.ops.aten._softmax.default](args = (%arg0_1, -1, False), kwargs = {})\n"
                   "    return (_softmax,)\n");
  run_result_clear (&r);

  /* default: print_readable without stride and device */
  r = run_fxwb (py, NULL, NULL, NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "    def forward(self, arg0_1: \"f32[8192, 4096]\"):\n"));
  run_result_clear (&r);
}

static void
test_errors (void)
{
  g_autofree char *bad_py = g_build_filename (tmp_dir, "bad.py", NULL);
  g_autofree char *bad_json = g_build_filename (tmp_dir, "bad.json", NULL);
  g_autofree char *missing = g_build_filename (tmp_dir, "missing.py", NULL);
  g_assert_true (g_file_set_contents (bad_py, "def forward(self, x):\n    y = torch.foo(x, 12abc)\n", -1, NULL));
  g_assert_true (g_file_set_contents (bad_json, "{\n  \"format\": \"fxwb-graph\",\n  \"version\": 1,\n  \"nodes\": [}\n", -1,
                                      NULL));

  run_result r = run_fxwb (bad_py, NULL, NULL, NULL);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "bad.py:2:24: error:"));
  g_assert_nonnull (strstr (r.err, "    2 |     y = torch.foo(x, 12abc)\n      |                        ^\n"));
  g_assert_cmpstr (r.out, ==, "");
  run_result_clear (&r);

  r = run_fxwb (bad_json, NULL, NULL, NULL);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "bad.json:4:13: error: graph JSON:"));
  g_assert_nonnull (strstr (r.err, "      |             ^\n"));
  run_result_clear (&r);

  r = run_fxwb (missing, NULL, NULL, NULL);
  g_assert_cmpint (r.status, ==, 3);
  g_assert_nonnull (strstr (r.err, "missing.py"));
  run_result_clear (&r);

  r = run_fxwb ("--tabular", "--code", bad_py, NULL);
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
  r = run_fxwb ("--json", "--stride", bad_py, NULL);
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
  r = run_fxwb (NULL, NULL, NULL, NULL);
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
  r = run_fxwb ("--no-such-option", bad_py, NULL, NULL);
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
  r = run_fxwb ("--help", NULL, NULL, NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "Exit status:"));
  run_result_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 2)
    g_error ("usage: test-print-cli [--tap] FXWB");
  fxwb_path = argv[1];
  tmp_dir = g_dir_make_tmp ("fxwb-print-XXXXXX", NULL);
  g_test_add_func ("/fxwb/print/fixtures", test_fixtures);
  g_test_add_func ("/fxwb/print/formats", test_formats);
  g_test_add_func ("/fxwb/print/errors", test_errors);
  int rc = g_test_run ();
  const char *names[] = { "graph.json", "bad.py", "bad.json" };
  for (size_t i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *p = g_build_filename (tmp_dir, names[i], NULL);
      g_unlink (p);
    }
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
