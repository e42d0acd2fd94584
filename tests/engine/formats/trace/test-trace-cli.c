/* test-trace-cli.c: `fxwb import`, `fxwb ls`, `fxwb show` and `fxwb explain` as a user runs them on the
   toy_graph_break-cuda trace, and their exit codes on bad input. argv[1] (after the test options) is fxwb. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

static const char *fxwb_path;
static char *tmp_dir;
static char *workspace;

typedef struct
{
  int status;
  char *out;
  char *err;
} run_result;

static run_result
run_fxwb (const char *const *args)
{
  const char *argv[16] = { fxwb_path };
  int i = 0;
  for (; args[i] && i < 14; i++)
    argv[i + 1] = args[i];
  argv[i + 1] = NULL;
  run_result r = { 0 };
  g_autoptr (GError) error = NULL;
  int wait_status = 0;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &r.out, &r.err, &wait_status, &error))
    g_error ("cannot run %s: %s", fxwb_path, error->message);
  r.status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128;
  if (!WIFEXITED (wait_status))
    g_test_message ("fxwb %s killed by signal %d; stderr:\n%s", args[0], WTERMSIG (wait_status),
                    r.err ? r.err + (strlen (r.err) > 4000 ? strlen (r.err) - 4000 : 0) : "");
  return r;
}

static void
run_result_clear (run_result *r)
{
  g_free (r->out);
  g_free (r->err);
}

static char *
fixture_path (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  return g_build_filename (dir ? dir : "tests/fixtures", rel, NULL);
}

static void
test_import (void)
{
  g_autofree char *trace = fixture_path ("traces/toy_graph_break-cuda/torch_trace");
  const char *args[] = { "import", trace, "-o", workspace, NULL };
  run_result r = run_fxwb (args);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "3 frames, 9 compiles, 81 graphs, 13 kernels"));
  run_result_clear (&r);
  /* Again: nothing added. */
  r = run_fxwb (args);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "already imported"));
  run_result_clear (&r);
  const char *json_args[] = { "import", "--json", trace, "-o", workspace, NULL };
  r = run_fxwb (json_args);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\"already_imported\": true"));
  run_result_clear (&r);
}

static void
test_ls (void)
{
  const char *args[] = { "ls", workspace, NULL };
  run_result r = run_fxwb (args);
  g_assert_cmpint (r.status, ==, 0);
  g_auto (GStrv) lines = g_strsplit (r.out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 11);  /* header, 9 compiles, "" */
  g_assert_true (g_str_has_prefix (lines[1], "[0/0]      toy_example "));
  g_assert_nonnull (strstr (lines[1], "program.py:5 graph break"));
  g_assert_true (g_str_has_prefix (lines[5], "[1/0]      torch_dynamo_resume_in_toy_example_at_7"));
  g_assert_nonnull (strstr (lines[7], " recompiled "));
  run_result_clear (&r);
  const char *jargs[] = { "ls", "--json", workspace, NULL };
  r = run_fxwb (jargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "{\"compile_id\": \"2/3\", \"frame_id\": 2, \"frame_compile_id\": 3"));
  g_assert_nonnull (strstr (r.out, "\"status\": \"recompiled\""));
  run_result_clear (&r);
}

static void
test_show (void)
{
  const char *rargs[] = { "show", workspace, "0/1", "--recompiles", NULL };
  run_result r = run_fxwb (rargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "    - 0/0: tensor 'a' size mismatch at index 0. expected 10, actual 16\n"));
  run_result_clear (&r);

  /* The tabular equals `fxwb print --tabular` of the same graph text (fxwb show --text). */
  const char *targs[] = { "show", workspace, "[2/0]", "--tabular", NULL };
  r = run_fxwb (targs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (g_str_has_prefix (r.out, "opcode "));
  const char *xargs[] = { "show", workspace, "2/0", "--text", NULL };
  run_result t = run_fxwb (xargs);
  g_assert_cmpint (t.status, ==, 0);
  g_autofree char *gpath = g_build_filename (tmp_dir, "g.py", NULL);
  g_assert_true (g_file_set_contents (gpath, t.out, -1, NULL));
  const char *pargs[] = { "print", "--tabular", gpath, NULL };
  run_result p = run_fxwb (pargs);
  g_assert_cmpint (p.status, ==, 0);
  g_assert_cmpstr (r.out, ==, p.out);
  run_result_clear (&p);
  run_result_clear (&t);
  run_result_clear (&r);

  const char *kargs[] = { "show", workspace, "0/0", "--kernels", "--json", NULL };
  r = run_fxwb (kargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\"name\": \"triton_per_fused_lt_sum_0\""));
  g_assert_nonnull (strstr (r.out, "\"name\": \"triton_poi_fused_abs_add_div_1\""));
  run_result_clear (&r);

  const char *sargs[] = { "show", workspace, "0/0", "--stage", "post_grad", "--code", NULL };
  r = run_fxwb (sargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "torch.ops.aten."));
  run_result_clear (&r);

  const char *iargs[] = { "show", workspace, "0/2", "--inputs", NULL };
  r = run_fxwb (iargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "L['a']: torch.float32[8,3] stride=[3,1] device(type='cuda', index=0)\n"
                              "L['b']: torch.float32[8,3] stride=[3,1] device(type='cuda', index=0)\n");
  run_result_clear (&r);

  const char *aargs[] = { "show", workspace, "1/0", "--artifact", "inductor_output_code", NULL };
  r = run_fxwb (aargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "triton_poi_fused_mul_0 = async_compile.triton('triton_poi_fused_mul_0', '" "''"));
  run_result_clear (&r);

  /* Errors: unknown compile, unknown stage, bad compile id, missing file, two views. */
  const char *e1[] = { "show", workspace, "7/7", "--guards", NULL };
  r = run_fxwb (e1);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "no compile 7/7"));
  run_result_clear (&r);
  const char *e2[] = { "show", workspace, "0/0", "--stage", "nope", "--tabular", NULL };
  r = run_fxwb (e2);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "no 'nope' graph"));
  run_result_clear (&r);
  const char *e3[] = { "show", workspace, "zero", "--guards", NULL };
  r = run_fxwb (e3);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "not a compile id"));
  run_result_clear (&r);
  const char *e4[] = { "show", "/nonexistent/w.fxwb", NULL };
  r = run_fxwb (e4);
  g_assert_cmpint (r.status, ==, 3);
  run_result_clear (&r);
  const char *e5[] = { "show", workspace, "0/0", "--guards", "--kernels", NULL };
  r = run_fxwb (e5);
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
}

static void
test_explain (void)
{
  const char *args[] = { "explain", workspace, NULL };
  run_result r = run_fxwb (args);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (g_str_has_prefix (r.out, "Graph Count: 9\nGraph Break Count: 4\nOp Count: 25\nBreak Reasons:\n"
                                          "  Break Reason 1:\n    Reason: Data-dependent branching\n"));
  g_assert_nonnull (strstr (r.out, "      <FrameSummary file "));
  g_assert_nonnull (strstr (r.out, "program.py, line 7 in toy_example>\n"));
  g_assert_nonnull (strstr (r.out, "Ops per Graph:\n  Ops 1:\n    <built-in method abs of type object at 0x7f0000000000>\n"
                                   "    <built-in function add>\n    <built-in function truediv>\n"
                                   "    <built-in function lt>\n  Ops 2:\n"));
  g_assert_nonnull (strstr (r.out, "Out Guards:\n  Guard 1:\n"));
  run_result_clear (&r);
}

static void
test_import_errors (void)
{
  g_autofree char *bad = g_build_filename (tmp_dir, "bad.log", NULL);
  g_assert_true (g_file_set_contents (bad, "not a trace\n", -1, NULL));
  g_autofree char *ws = g_build_filename (tmp_dir, "e.fxwb", NULL);
  const char *args[] = { "import", bad, "-o", ws, NULL };
  run_result r = run_fxwb (args);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "bad.log:1:1: error: no TORCH_TRACE record"));
  run_result_clear (&r);
  const char *a2[] = { "import", "/nonexistent.log", "-o", ws, NULL };
  r = run_fxwb (a2);
  g_assert_cmpint (r.status, ==, 3);
  run_result_clear (&r);
  const char *a3[] = { "import", bad, NULL };
  r = run_fxwb (a3);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "missing -o"));
  run_result_clear (&r);
  /* A workspace that is not sqlite. */
  const char *a4[] = { "ls", bad, NULL };
  r = run_fxwb (a4);
  g_assert_cmpint (r.status, ==, 3);
  run_result_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 2)
    g_error ("usage: test-trace-cli [test options] FXWB");
  fxwb_path = argv[1];
  tmp_dir = g_dir_make_tmp ("fxtracecli-XXXXXX", NULL);
  workspace = g_build_filename (tmp_dir, "w.fxwb", NULL);
  g_test_add_func ("/trace-cli/import", test_import);
  g_test_add_func ("/trace-cli/ls", test_ls);
  g_test_add_func ("/trace-cli/show", test_show);
  g_test_add_func ("/trace-cli/explain", test_explain);
  g_test_add_func ("/trace-cli/import-errors", test_import_errors);
  int rc = g_test_run ();
  GDir *dir = g_dir_open (tmp_dir, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *path = g_build_filename (tmp_dir, name, NULL);
      g_unlink (path);
    }
  if (dir)
    g_dir_close (dir);
  g_rmdir (tmp_dir);
  return rc;
}
