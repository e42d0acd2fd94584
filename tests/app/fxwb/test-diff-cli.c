/* test-diff-cli.c: `fxwb diff` as a user runs it: a recompile of the fixture trace names the failed guard and the
   graph/code changes, a workspace against itself is the same, two graph files differ by exactly the edits made,
   JSON parses, and the exit codes follow diff(1). argv[1] (after the test options) is the fxwb program. */
#include <glib.h>

#include "fxwb-test-run.h"
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/wait.h>

static const char *fxwb_path;
static char *tmp_dir;
static char *workspace;

typedef fxwb_run_result run_result;
#define run_result_clear fxwb_run_result_clear

static run_result
run_fxwb (const char *const *args)
{
  return fxwb_test_run (fxwb_path, args);
}


static char *
fixture_path (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  return g_build_filename (dir ? dir : "tests/fixtures", rel, NULL);
}

static const char *
ws_compile (const char *id)
{
  static char buf[2][4096];
  static int k;
  k ^= 1;
  g_snprintf (buf[k], sizeof buf[k], "%s:%s", workspace, id);
  return buf[k];
}

static void
test_recompile (void)
{
  run_result r = run_fxwb ((const char *[]) { "diff", ws_compile ("0/0"), ws_compile ("0/1"), NULL });
  g_assert_cmpint (r.status, ==, 1);
  /* the guard that failed, with its reason, and the guard as 0/0 had it */
  g_assert_nonnull (strstr (r.out, "! TENSOR_MATCH L['x'] failed: 0/0: tensor 'x' size mismatch at index 0. "
                                   "expected 32, actual 64\n"));
  g_assert_nonnull (strstr (r.out, "guard in a: check_tensor(L['x']"));
  /* the graph change (x became dynamic) and the code change */
  g_assert_nonnull (strstr (r.out, "== graph: [0/0] -> [0/1] dynamo\n"));
  g_assert_nonnull (strstr (r.out, "-l_x_: \"f32[32, 256][256, 1]cuda:0\" = placeholder('L_x_')\n"));
  g_assert_nonnull (strstr (r.out, "~ node l_x_: meta.shape: [32, 256] -> [s"));
  g_assert_nonnull (strstr (r.out, "== code: [0/0] -> [0/1] inductor_output_code\n"));
  g_assert_nonnull (strstr (r.out, "-# AOT ID: ['0_inference']\n+# AOT ID: ['1_inference']\n"));
  g_assert_null (strstr (r.out, "\033[")); /* not a terminal: no colour */
  run_result_clear (&r);

  /* narrowed to guards */
  r = run_fxwb ((const char *[]) { "diff", "--guards", ws_compile ("0/0"), ws_compile ("0/1"), NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, "TENSOR_MATCH L['x'] failed"));
  g_assert_null (strstr (r.out, "== graph"));
  g_assert_null (strstr (r.out, "== code"));
  run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "diff", "--color=always", "--graph", ws_compile ("0/0"), ws_compile ("0/1"),
                                   NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, "\033[31m-l_x_"));
  run_result_clear (&r);
}

static void
test_json (void)
{
  run_result r = run_fxwb ((const char *[]) { "diff", "--json", ws_compile ("0/0"), ws_compile ("0/1"), NULL });
  g_assert_cmpint (r.status, ==, 1);
  json_object *root = json_tokener_parse (r.out);
  g_assert_nonnull (root);
  json_object *same = NULL, *entries = NULL, *pairs = NULL, *count = NULL;
  g_assert_true (json_object_object_get_ex (root, "same", &same));
  g_assert_false (json_object_get_boolean (same));
  g_assert_true (json_object_object_get_ex (root, "differences", &count));
  g_assert_true (json_object_object_get_ex (root, "entries", &entries));
  g_assert_true (json_object_object_get_ex (root, "pairs", &pairs));
  g_assert_cmpint (json_object_array_length (pairs), >, 20);
  size_t failures = 0, counted = 0;
  for (size_t i = 0; i < json_object_array_length (entries); i++)
    {
      json_object *e = json_object_array_get_idx (entries, i), *kind = NULL, *info = NULL, *name = NULL;
      g_assert_true (json_object_object_get_ex (e, "kind", &kind));
      g_assert_true (json_object_object_get_ex (e, "informational", &info));
      counted += !json_object_get_boolean (info);
      if (strcmp (json_object_get_string (kind), "failure") == 0)
        {
          failures++;
          g_assert_true (json_object_object_get_ex (e, "name_a", &name));
          g_assert_cmpstr (json_object_get_string (name), ==, "TENSOR_MATCH L['x']");
        }
    }
  g_assert_cmpuint (failures, ==, 1);
  g_assert_cmpint (json_object_get_int64 (count), ==, (int64_t) counted);
  json_object_put (root);
  run_result_clear (&r);
}

static void
test_self (void)
{
  run_result r = run_fxwb ((const char *[]) { "diff", workspace, workspace, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "no differences\n"));
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", "--json", ws_compile ("0/1"), ws_compile ("0/1"), NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\"same\": true"));
  run_result_clear (&r);
}

static char *
write_tmp (const char *name, const char *text)
{
  char *path = g_build_filename (tmp_dir, name, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_file_set_contents (path, text, -1, &error))
    g_error ("%s", error->message);
  return path;
}

/* A graph file against a copy with one node's op changed and one (dead) node removed: exactly those two. */
static void
test_graph_files (void)
{
  g_autofree char *src = fixture_path ("graphs/pointwise_chain.aten.0.py");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (src, &text, NULL, NULL));
  const char *dead = "        neg: \"f32[67108864][1]cuda:0\" = torch.ops.aten.neg.default(arg0_1)\n";
  const char *anchor = "        cos: ";
  char *at = strstr (text, anchor);
  g_assert_nonnull (at);
  g_autofree char *with_dead = g_strdup_printf ("%.*s%s%s", (int) (at - text), text, dead, at);
  g_autofree char *a = write_tmp ("a.py", with_dead);
  char *op = strstr (text, "torch.ops.aten.cos.default");
  g_assert_nonnull (op);
  g_autofree char *changed = g_strdup_printf ("%.*storch.ops.aten.tan.default%s", (int) (op - text), text,
                                              op + strlen ("torch.ops.aten.cos.default"));
  g_autofree char *b = write_tmp ("b.py", changed);

  run_result r = run_fxwb ((const char *[]) { "diff", a, b, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, "~ node cos: target: torch.ops.aten.cos.default -> torch.ops.aten.tan.default\n"));
  g_assert_nonnull (strstr (r.out, "- node neg: \"f32[67108864][1]cuda:0\" = torch.ops.aten.neg.default(arg0_1)\n"));
  g_assert_nonnull (strstr (r.out, "2 differences (graph 2)\n"));
  run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "diff", src, src, NULL });
  g_assert_cmpint (r.status, ==, 0);
  run_result_clear (&r);
}

/* A graph file against the compile it came from: the stage that matches is found. */
static void
test_file_against_compile (void)
{
  g_autofree char *py = fixture_path ("traces/mlp_module-cuda/torch_compile_debug/run_2026_11_21_16_43_10_989637-"
                                      "pid_1700/torchinductor/model__0_inference_0.0/fx_graph_runnable.py");
  run_result r = run_fxwb ((const char *[]) { "diff", py, ws_compile ("0/0"), NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "no differences"));
  run_result_clear (&r);
  /* ... and differs from the recompile's */
  r = run_fxwb ((const char *[]) { "diff", py, ws_compile ("0/1"), NULL });
  g_assert_cmpint (r.status, ==, 1);
  run_result_clear (&r);
}

static char *
replace_all (const char *text, const char *from, const char *to)
{
  g_auto (GStrv) parts = g_strsplit (text, from, -1);
  return g_strjoinv (to, parts);
}

/* --outputs runs both graphs on the same inputs: an op changed shows as a failed same() with its error figures. */
static void
test_outputs (void)
{
  g_autofree char *src = fixture_path ("graphs/pointwise_chain.aten.0.py");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (src, &text, NULL, NULL));
  g_autofree char *small = replace_all (text, "67108864", "4096");
  g_autofree char *changed = replace_all (small, "torch.ops.aten.cos.default", "torch.ops.aten.sin.default");
  g_autofree char *other = replace_all (text, "67108864", "2048");
  g_autofree char *a = write_tmp ("o1.py", small);
  g_autofree char *b = write_tmp ("o2.py", changed);
  g_autofree char *c = write_tmp ("o3.py", other);

  run_result r = run_fxwb ((const char *[]) { "diff", "--outputs", a, b, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, "~ output #0: same(): max abs "));
  g_assert_nonnull (strstr (r.out, "RMSE (res-fp64)"));
  run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "diff", "--outputs", a, a, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "no differences"));
  run_result_clear (&r);

  /* with a backend: per-kernel entries, kernels paired by name */
  r = run_fxwb ((const char *[]) { "diff", "--outputs", "-b", "inductor", "--repeat", "2", a, b, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, "- kernel cpp_fused_add_cos_mul_sigmoid_sin_0"));
  g_assert_nonnull (strstr (r.out, "+ kernel cpp_fused_add_mul_sigmoid_sin_0"));
  run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "diff", "--outputs", a, c, NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "input 0 differs"));
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", "-b", "inductor", a, c, NULL });
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
}


/* Stored runs: a compare of inductor against inductor with its injected relu accuracy bug keeps both runs' outputs;
   `fxwb ls --runs` names them, `fxwb diff WS:run/1 WS:run/2` names the output the bug changed with a failed same(),
   a run against itself (and two runs of the same configuration) is the same, exit 0; --json carries the numbers;
   a run id that is not there, or a run against a compile, is an error (2). */
static void
test_stored_runs (void)
{
  g_autofree char *graph = fixture_path ("minify/chain44.py");
  g_autofree char *ws = g_build_filename (tmp_dir, "runs.fxwb", NULL);
  run_result r = run_fxwb ((const char *[]) { "compare", graph, "-b", "inductor", "-b",
                                              "inductor,cpp.inject_relu_bug_TESTING_ONLY=accuracy", "-n", "1", "-k",
                                              "-w", ws, NULL });
  g_assert_cmpint (r.status, ==, 1); /* the bug's column fails against the interpreter */
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "run", graph, "-b", "inductor", "-n", "1", "-w", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "ls", ws, "--runs", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "run/1 "));
  g_assert_nonnull (strstr (r.out, "run/3 "));
  g_assert_nonnull (strstr (r.out, "spec, seed 0"));
  run_result_clear (&r);

  g_autofree char *r1 = g_strdup_printf ("%s:run/1", ws);
  g_autofree char *r2 = g_strdup_printf ("%s:run/2", ws);
  g_autofree char *r3 = g_strdup_printf ("%s:run/3", ws);
  g_autofree char *r9 = g_strdup_printf ("%s:run/9", ws);
  g_autofree char *c0 = g_strdup_printf ("%s:0/0", ws);
  r = run_fxwb ((const char *[]) { "diff", r1, r2, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, "inputs: spec, seed 0 -> the same values"));
  /* chain44 returns the relu's branch as its second output: that one fails, the first passes */
  g_assert_nonnull (strstr (r.out, "~ output #0: same(): max abs "));
  g_assert_nonnull (strstr (r.out, "~ output #1: same(): max abs "));
  g_assert_nonnull (strstr (r.out, "-> Accuracy failed: allclose not within tol=0.001"));
  g_assert_nonnull (strstr (r.out, "verdict: pass -> fail"));
  g_assert_nonnull (strstr (r.out, "~ kernel 0.cpp_fused_"));
  run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "diff", "--json", r1, r2, NULL });
  g_assert_cmpint (r.status, ==, 1);
  json_object *root = json_tokener_parse (r.out);
  g_assert_nonnull (root);
  json_object *entries = NULL;
  g_assert_true (json_object_object_get_ex (root, "entries", &entries));
  gboolean failed_output = FALSE, kernel_ratio = FALSE;
  for (size_t i = 0; i < json_object_array_length (entries); i++)
    {
      json_object *e = json_object_array_get_idx (entries, i), *item, *info, *num;
      json_object_object_get_ex (e, "item", &item);
      json_object_object_get_ex (e, "informational", &info);
      if (strcmp (json_object_get_string (item), "output") == 0 && !json_object_get_boolean (info))
        {
          g_assert_true (json_object_object_get_ex (e, "max_abs", &num));
          g_assert_cmpfloat (json_object_get_double (num), >, 0.01);
          g_assert_true (json_object_object_get_ex (e, "rmse", &num));
          failed_output = TRUE;
        }
      if (strcmp (json_object_get_string (item), "kernel") == 0)
        kernel_ratio |= json_object_object_get_ex (e, "ratio", &num);
    }
  g_assert_true (failed_output);
  g_assert_true (kernel_ratio);
  json_object_put (root);
  run_result_clear (&r);

  /* the same configuration, run again on the same inputs: the same numbers */
  r = run_fxwb ((const char *[]) { "diff", r1, r3, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "~ output #1: same(): max abs 0, rmse 0 -> pass"));
  g_assert_nonnull (strstr (r.out, "no differences"));
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", r2, r2, NULL });
  g_assert_cmpint (r.status, ==, 0);
  run_result_clear (&r);

  /* --runs on a compile against itself pairs the latest run of each configuration: the same */
  r = run_fxwb ((const char *[]) { "diff", "--runs", c0, c0, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "~ output #1: same(): max abs 0"));
  run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "diff", r1, r9, NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "no run 9"));
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", r1, c0, NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "is a stored run"));
  run_result_clear (&r);
  const char *suffixes[] = { "", "-wal", "-shm" };
  for (size_t i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *p = g_strconcat (ws, suffixes[i], NULL);
      g_unlink (p);
    }
}

static void
test_errors (void)
{
  run_result r = run_fxwb ((const char *[]) { "diff", "no-such-file.py", ws_compile ("0/0"), NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "no-such-file.py"));
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", ws_compile ("0/0"), ws_compile ("7/7"), NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "no compile 7/7"));
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", workspace, ws_compile ("0/0"), NULL });
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", "--bogus", workspace, workspace, NULL });
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", workspace, NULL });
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
  g_autofree char *bad = write_tmp ("bad.py", "def forward(self, x):\n    y = torch.ops.aten.sin.default(x\n");
  r = run_fxwb ((const char *[]) { "diff", bad, bad, NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "bad.py:"));
  run_result_clear (&r);
}

/* compare --upto: the graph cut after a node runs on the same inputs and checks against the interpreter; runs of a
   workspace compile attach to a stage of their own ("upto NODE"); a node that is not there, or where a graph cannot
   end, is a usage error naming it. */
static void
test_compare_upto (void)
{
  g_autofree char *graph = fixture_path ("graphs/pointwise_chain.aten.0.py");
  run_result r = run_fxwb ((const char *[]) { "compare", graph, "--upto", "add", "-b", "eager", "-b", "inductor", "-n",
                                               "2", "--scale", "16", NULL });

  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "up to add ("));
  g_assert_nonnull (strstr (r.out, "6 nodes"));
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "compare", graph, "--upto", "no_such", "-b", "eager", NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "no node 'no_such'"));
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "compare", graph, "--upto", "arg0_1", "-b", "eager", NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "a graph cannot end there"));
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "compare", ws_compile ("0/0"), "--stage", "dynamo", "--upto", "layer_norm",
                                   "-b", "eager", "-n", "1", NULL });
  g_test_message ("%s%s", r.out, r.err);
  g_assert_cmpint (r.status, ==, 0);
  run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "ls", workspace, "--runs", NULL });
  g_assert_nonnull (strstr (r.out, "upto layer_norm"));
  run_result_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 2)
    g_error ("usage: test-diff-cli [--tap] FXWB");
  fxwb_path = argv[1];
  tmp_dir = g_dir_make_tmp ("fxwb-diff-XXXXXX", NULL);
  workspace = g_build_filename (tmp_dir, "ws.fxwb", NULL);
  g_autofree char *trace = fixture_path ("traces/mlp_module-cuda/torch_trace");
  run_result r = run_fxwb ((const char *[]) { "import", "-q", trace, "-o", workspace, NULL });
  if (r.status != 0)
    g_error ("import failed: %s", r.err);
  run_result_clear (&r);

  g_test_add_func ("/DiffCli/recompile", test_recompile);
  g_test_add_func ("/DiffCli/json", test_json);
  g_test_add_func ("/DiffCli/self", test_self);
  g_test_add_func ("/DiffCli/graph-files", test_graph_files);
  g_test_add_func ("/DiffCli/file-against-compile", test_file_against_compile);
  g_test_add_func ("/DiffCli/outputs", test_outputs);
  g_test_add_func ("/DiffCli/stored-runs", test_stored_runs);
  g_test_add_func ("/DiffCli/errors", test_errors);
  g_test_add_func ("/DiffCli/compare-upto", test_compare_upto);
  int rc = g_test_run ();
  const char *names[] = { "ws.fxwb", "ws.fxwb-wal", "ws.fxwb-shm", "a.py", "b.py", "bad.py", "o1.py", "o2.py", "o3.py" };
  for (size_t i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *p = g_build_filename (tmp_dir, names[i], NULL);
      g_unlink (p);
    }
  g_rmdir (tmp_dir);
  return rc;
}
