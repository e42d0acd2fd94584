/* test-export-cli.c: a torch.export trace (the export_data_dependent-cpu fixture: .item() and torch._check) imports
   with no warning and `fxwb ls` lists the guards export added with the user line each came from, and its unbacked
   symbol; and the import options tlparse users expect: --strict fails on what was not understood (the AOTInductor
   fixture's compilation_metrics without a compile id), --latest picks the newest log of a folder. argv[1] (after the
   test options) is the fxwb program. */
#include <glib.h>

#include "fxwb-test-run.h"
#include <glib/gstdio.h>
#include <string.h>
#include <utime.h>

static const char *fxwb_path;

static void
test_guards (void)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  g_autofree char *trace = g_build_filename (dir ? dir : "tests/fixtures", "traces", "export_data_dependent-cpu",
                                             "torch_trace", NULL);
  g_autofree char *tmp = g_dir_make_tmp ("fxwb-export-XXXXXX", NULL);
  g_autofree char *ws = g_build_filename (tmp, "export.fxwb", NULL);
  fxwb_run_result r = fxwb_test_run (fxwb_path, (const char *[]) { "import", "-q", trace, "-o", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_null (strstr (r.out, "warning"));
  fxwb_run_result_clear (&r);

  r = fxwb_test_run (fxwb_path, (const char *[]) { "ls", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "torch.export (outside any compile): 3 guards and symbols\n"));
  g_assert_nonnull (strstr (r.out, "\nunbacked_symbol    u0 [-int_oo, int_oo] "));
  g_assert_nonnull (strstr (r.out, "\nguard_added_fast   u0 >= 0                            "
                                   "export_prog.py:12 in forward: torch._check(n >= 0)\n"));
  g_assert_nonnull (strstr (r.out, "\nguard_added_fast   u0 <= 6                            "
                                   "export_prog.py:13 in forward: torch._check(n <= x.shape[0])\n"));
  fxwb_run_result_clear (&r);

  r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "export", "--guards", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "[export] guard_added_fast           -                        u0 <= 6  # "
                                   "export_prog.py:13 in forward: torch._check(n <= x.shape[0])\n"));
  fxwb_run_result_clear (&r);

  /* The report's index has the same table. */
  g_autofree char *report = g_build_filename (tmp, "report", NULL);
  r = fxwb_test_run (fxwb_path, (const char *[]) { "report", "-q", "--no-graphs", ws, "-o", report, NULL });
  g_assert_cmpint (r.status, ==, 0);
  fxwb_run_result_clear (&r);
  g_autofree char *index = g_build_filename (report, "index.html", NULL);
  g_autofree char *html = NULL;
  g_assert_true (g_file_get_contents (index, &html, NULL, NULL));
  g_assert_nonnull (strstr (html, "<h2 id=\"export\">torch.export</h2>"));
  g_assert_nonnull (strstr (html, "<td>guard_added_fast</td><td><code>u0 &gt;= 0</code></td><td><code>export_prog.py:12 "
                                  "in forward: torch._check(n &gt;= 0)</code></td>"));
  g_autoptr (GDir) rd = g_dir_open (report, 0, NULL);
  const char *rname;
  while (rd && (rname = g_dir_read_name (rd)))
    {
      g_autofree char *f = g_build_filename (report, rname, NULL);
      g_unlink (f);
    }
  g_rmdir (report);
  g_unlink (ws);
  g_autofree char *wal = g_strconcat (ws, "-wal", NULL), *shm = g_strconcat (ws, "-shm", NULL);
  g_unlink (wal);
  g_unlink (shm);
  g_rmdir (tmp);
}

static char *
fixture_trace (const char *name)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  return g_build_filename (dir ? dir : "tests/fixtures", "traces", name, "torch_trace", NULL);
}

static void
test_strict_latest (void)
{
  g_autofree char *aoti = fixture_trace ("aoti_provenance-cpu");
  g_autofree char *export = fixture_trace ("export_data_dependent-cpu");
  g_autofree char *tmp = g_dir_make_tmp ("fxwb-strict-XXXXXX", NULL);
  g_autofree char *ws = g_build_filename (tmp, "a.fxwb", NULL);
  /* Both real fixtures are understood in full (AOTInductor's compilation_metrics with "compile_id": null included);
     the export log with a record kind from the future appended is not. */
  fxwb_run_result r = fxwb_test_run (fxwb_path, (const char *[]) { "import", "-q", "--strict", aoti, "-o", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_null (strstr (r.out, "warning"));
  fxwb_run_result_clear (&r);
  r = fxwb_test_run (fxwb_path, (const char *[]) { "ls", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\n[-/-]      (export/AOTInductor: no compile id) "));
  fxwb_run_result_clear (&r);
  r = fxwb_test_run (fxwb_path, (const char *[]) { "import", "-q", "--strict", export, "-o", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  fxwb_run_result_clear (&r);
  {
    g_autoptr (GDir) d = g_dir_open (export, 0, NULL);
    const char *name = d ? g_dir_read_name (d) : NULL;
    g_assert_nonnull (name);
    g_autofree char *src = g_build_filename (export, name, NULL), *dst = g_build_filename (tmp, "future.log", NULL);
    g_autofree char *text = NULL;
    g_assert_true (g_file_get_contents (src, &text, NULL, NULL));
    g_autofree char *more = g_strconcat (text, "V1124 15:51:18.600000 852 torch/x.py:1] {\"record_from_the_future\": {}}\n",
                                         NULL);
    g_assert_true (g_file_set_contents (dst, more, -1, NULL));
    g_autofree char *ws_f = g_build_filename (tmp, "future.fxwb", NULL);
    r = fxwb_test_run (fxwb_path, (const char *[]) { "import", "-q", "--strict", dst, "-o", ws_f, NULL });
    g_assert_cmpint (r.status, ==, 1);
    g_assert_nonnull (strstr (r.err, "--strict: "));
    fxwb_run_result_clear (&r);
    r = fxwb_test_run (fxwb_path, (const char *[]) { "import", "-q", dst, "-o", ws_f, NULL });
    g_assert_cmpint (r.status, ==, 0);   /* already there; and without --strict never an error */
    fxwb_run_result_clear (&r);
  }

  /* Two logs, the older one's time set back: --latest takes the other. */
  g_autofree char *dir = g_build_filename (tmp, "traces", NULL);
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  const char *names[2] = { "dedicated_log_torch_trace_old.log", "dedicated_log_torch_trace_new.log" };
  const char *srcs[2] = { aoti, export };
  for (int i = 0; i < 2; i++)
    {
      g_autoptr (GDir) d = g_dir_open (srcs[i], 0, NULL);
      const char *name = d ? g_dir_read_name (d) : NULL;
      g_assert_nonnull (name);
      g_autofree char *src = g_build_filename (srcs[i], name, NULL), *dst = g_build_filename (dir, names[i], NULL);
      g_autofree char *text = NULL;
      gsize len = 0;
      g_assert_true (g_file_get_contents (src, &text, &len, NULL));
      g_assert_true (g_file_set_contents (dst, text, (gssize) len, NULL));
      if (i == 0)
        {
          struct utimbuf old = { 1000000000, 1000000000 };
          g_assert_cmpint (g_utime (dst, &old), ==, 0);
        }
    }
  g_autofree char *ws2 = g_build_filename (tmp, "latest.fxwb", NULL);
  r = fxwb_test_run (fxwb_path, (const char *[]) { "import", "-q", "--latest", dir, "-o", ws2, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "dedicated_log_torch_trace_new.log: 0 frames, 0 compiles"));
  g_assert_null (strstr (r.out, "_old.log"));
  fxwb_run_result_clear (&r);
  /* Without a folder: $TORCH_TRACE. */
  g_autofree char *ws3 = g_build_filename (tmp, "latest-env.fxwb", NULL);
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "TORCH_TRACE", dir, TRUE);
  r = fxwb_test_spawn (NULL, (const char *[]) { fxwb_path, "import", "-q", "--latest", "-o", ws3, NULL }, env);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "newest log in "));
  g_assert_nonnull (strstr (r.out, "_new.log"));
  fxwb_run_result_clear (&r);

  const char *rm[] = { "traces/dedicated_log_torch_trace_old.log", "traces/dedicated_log_torch_trace_new.log", "traces",
                       "a.fxwb", "a.fxwb-wal", "a.fxwb-shm", "latest.fxwb", "latest.fxwb-wal", "latest.fxwb-shm",
                       "latest-env.fxwb", "latest-env.fxwb-wal", "latest-env.fxwb-shm", "future.log", "future.fxwb",
                       "future.fxwb-wal", "future.fxwb-shm" };
  for (size_t i = 0; i < G_N_ELEMENTS (rm); i++)
    {
      g_autofree char *p = g_build_filename (tmp, rm[i], NULL);
      if (g_remove (p) != 0)
        g_rmdir (p);
    }
  g_rmdir (tmp);
}

/* draft_export's failures as PyTorch logs them (propagate_real_tensors_provenance, missing_fake_kernel,
   mismatched_fake_kernel; the fields draft_export's report reads): each is a row with its user line and the fix its
   report asks for, in ls, show --guards (--json) and the report. */
static void
test_draft_failures (void)
{
  static const char log[] =
    "V1124 15:51:18.000001 852 torch/_logging/structured.py:28] {\"str\": [\"/home/user/draft_prog.py\", 0]}\n"
    "V1124 15:51:18.000002 852 torch/_logging/structured.py:28] {\"str\": [\"/opt/torch/lib/python3.12/site-packages/"
    "torch/export/_trace.py\", 1]}\n"
    "V1124 15:51:18.000003 852 torch/fx/experimental/symbolic_shapes.py:7200] {\"propagate_real_tensors_provenance\": "
    "{\"expr\": \"Eq(u0, 3)\", \"result\": \"True\", \"expr_node_id\": 5, \"user_stack\": [{\"line\": 10, \"name\": "
    "\"forward\", \"filename\": 0, \"loc\": \"if n == 3:\"}], \"stack\": [{\"line\": 2686, \"name\": \"_trace_inner\", "
    "\"filename\": 1, \"loc\": \"t = dispatch_trace(\"}], \"symbol_to_sources\": {}, \"frame_locals\": null}}\n"
    "V1124 15:51:18.000035 852 torch/fx/experimental/sym_node.py:500] {\"expression_created\": {\"method\": "
    "\"eq\", \"result\": \"Eq(u0, 3)\", \"result_id\": 5, \"arguments\": [\"u0\", \"3\"], \"argument_ids\": [4, 6], "
    "\"user_stack\": [{\"line\": 10, \"name\": \"forward\", \"filename\": 0, \"loc\": \"if n == 3:\"}], "
    "\"stack\": []}}\n"
    "V1124 15:51:18.000004 852 torch/_subclasses/fake_tensor.py:2500] {\"missing_fake_kernel\": {\"op\": "
    "\"mylib.foo.default\"}}\n"
    "V1124 15:51:18.000005 852 torch/_subclasses/fake_tensor.py:2600] {\"mismatched_fake_kernel\": {\"op\": "
    "\"mylib.bar.default\", \"reason\": \"Shapes torch.Size([3]) and torch.Size([4]) are not equal\"}}\n";
  g_autofree char *tmp = g_dir_make_tmp ("fxwb-draft-XXXXXX", NULL);
  g_autofree char *trace = g_build_filename (tmp, "dedicated_log_torch_trace_draft.log", NULL);
  g_assert_true (g_file_set_contents (trace, log, -1, NULL));
  g_autofree char *ws = g_build_filename (tmp, "draft.fxwb", NULL);
  fxwb_run_result r = fxwb_test_run (fxwb_path, (const char *[]) { "import", "--strict", trace, "-o", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_null (strstr (r.out, "warning"));
  fxwb_run_result_clear (&r);

  r = fxwb_test_run (fxwb_path, (const char *[]) { "ls", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\ndata_dependent          Eq(u0, 3) -> True                  "
                                   "draft_prog.py:10 in forward: if n == 3:\n"));
  g_assert_nonnull (strstr (r.out, "fix: export could not decide Eq(u0, 3) and specialized it to True"));
  g_assert_nonnull (strstr (r.out, "\nmissing_fake_kernel     mylib.foo.default "));
  g_assert_nonnull (strstr (r.out, "\nexpression              Eq(u0, 3) = eq(u0, 3) "));
  g_assert_nonnull (strstr (r.out, "torch.ops.mylib.foo.default has no fake kernel"));
  g_assert_nonnull (strstr (r.out, "(Shapes torch.Size([3]) and torch.Size([4]) are not equal)"));
  fxwb_run_result_clear (&r);

  r = fxwb_test_run (fxwb_path, (const char *[]) { "show", ws, "export", "--guards", "--json", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\"kind\": \"data_dependent\""));
  g_assert_nonnull (strstr (r.out, "\"fix\": \"export could not decide Eq(u0, 3)"));
  fxwb_run_result_clear (&r);

  g_autofree char *report = g_build_filename (tmp, "report", NULL);
  r = fxwb_test_run (fxwb_path, (const char *[]) { "report", "-q", "--no-graphs", ws, "-o", report, NULL });
  g_assert_cmpint (r.status, ==, 0);
  fxwb_run_result_clear (&r);
  g_autofree char *index = g_build_filename (report, "index.html", NULL);
  g_autofree char *html = NULL;
  g_assert_true (g_file_get_contents (index, &html, NULL, NULL));
  g_assert_nonnull (strstr (html, "fix: torch.ops.mylib.foo.default has no fake kernel"));
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
  g_test_add_func ("/export/guards", test_guards);
  g_test_add_func ("/export/strict-latest", test_strict_latest);
  g_test_add_func ("/export/draft-failures", test_draft_failures);
  return g_test_run ();
}
