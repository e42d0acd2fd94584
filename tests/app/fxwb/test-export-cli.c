/* test-export-cli.c: a torch.export trace (the export_data_dependent-cpu fixture: .item() and torch._check) imports
   with no warning and `fxwb ls` lists the guards export added with the user line each came from, and its unbacked
   symbol. argv[1] (after the test options) is the fxwb program. */
#include <glib.h>

#include "fxwb-test-run.h"
#include <glib/gstdio.h>
#include <string.h>

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
  g_unlink (ws);
  g_autofree char *wal = g_strconcat (ws, "-wal", NULL), *shm = g_strconcat (ws, "-shm", NULL);
  g_unlink (wal);
  g_unlink (shm);
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
  g_test_add_func ("/export/guards", test_guards);
  return g_test_run ();
}
