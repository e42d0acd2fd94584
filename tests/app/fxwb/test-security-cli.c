/* test-security-cli.c: opening, printing, importing and running files never executes anything from them: graphs,
   repro.py files, TORCH_TRACE payloads and debug folders that try to run `touch DIR/pwned`, through fxwb as a user
   runs it (the torch backends refuse such graphs, naming the node). argv[1] (after the test options) is fxwb. */
#include <glib.h>

#include "fxwb-test-run.h"
#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

static const char *fxwb_path;
static char *tmp_dir;

typedef struct
{
  int status;
  char *out;   /* stdout and stderr together */
} run_result;

/* Runs fxwb with args (NULL-terminated) in tmp_dir; python: $FXWB_PYTHON for it (NULL: inherited). */
static run_result
run_fxwb (const char *python, const char *const *args)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) fxwb_path);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add (argv, (char *) *a);
  g_ptr_array_add (argv, NULL);
  char **envp = g_get_environ ();
  if (python != NULL)
    envp = g_environ_setenv (envp, "FXWB_PYTHON", python, TRUE);
  run_result r = { 0 };
  fxwb_run_result got = fxwb_test_spawn (tmp_dir, (const char *const *) argv->pdata, envp);
  r.status = got.status;
  r.out = g_strconcat (got.out, got.err, NULL);
  fxwb_run_result_clear (&got);
  g_strfreev (envp);
  g_ptr_array_free (argv, TRUE);
  return r;
}

static char *
pwn_path (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

static void
assert_no_files (const char *const *names, const char *what)
{
  for (const char *const *n = names; *n; n++)
    {
      g_autofree char *p = pwn_path (*n);
      if (g_file_test (p, G_FILE_TEST_EXISTS))
        g_error ("%s: %s was created: something from the input ran", what, p);
    }
}

/* The text with every "@DIR@" replaced by tmp_dir. */
static char *
subst (const char *text)
{
  g_auto (GStrv) parts = g_strsplit (text, "@DIR@", -1);
  return g_strjoinv (tmp_dir, parts);
}

static void
write_file (const char *name, const char *text)
{
  g_autofree char *path = pwn_path (name);
  g_autofree char *body = subst (text);
  g_autoptr (GError) error = NULL;
  if (!g_file_set_contents (path, body, -1, &error))
    g_error ("%s", error->message);
}

/* Runs one command; asserts its status, that out holds expect (when not NULL), and that no pwned file appeared. */
static void
expect_run (const char *python, const char *const *args, int status, const char *expect, const char *const *files)
{
  g_autofree char *cmd = g_strjoinv (" ", (char **) args);
  run_result r = run_fxwb (python, args);
  g_test_message ("fxwb %s -> %d\n%s", cmd, r.status, r.out);
  if (r.status != status)
    g_error ("fxwb %s: exit status %d, expected %d:\n%s", cmd, r.status, status, r.out);
  if (expect != NULL && strstr (r.out, expect) == NULL)
    g_error ("fxwb %s: '%s' not in:\n%s", cmd, expect, r.out);
  assert_no_files (files, cmd);
  g_free (r.out);
}

/* ---- an FX graph file whose node calls torch.os.system */

static const char evil_graph[] =
  "def forward(self, x: \"f32[4]\"):\n"
  "    system = torch.os.system('touch @DIR@/pwned-graph')\n"
  "    sin = torch.ops.aten.sin.default(x);  x = None\n"
  "    return (sin,)\n";

static void
test_graph_file (void)
{
  static const char *const files[] = { "pwned-graph", NULL };
  write_file ("g.py", evil_graph);
  const char *refused = "node 'system': the torch backend refuses to call 'torch.os.system'";
  /* FXWB_PYTHON that does not exist: the refusal comes before any interpreter is looked for */
  const char *const run_eager[] = { "run", "g.py", "-b", "torch:eager", NULL };
  expect_run ("/nonexistent/python3", run_eager, 1, refused, files);
  expect_run (NULL, run_eager, 1, refused, files);
  const char *const run_inductor[] = { "run", "g.py", "-b", "torch:inductor", NULL };
  expect_run ("/nonexistent/python3", run_inductor, 1, refused, files);
  const char *const compare[] = { "compare", "g.py", "-b", "torch", "-b", "torch:aot_eager", NULL };
  expect_run ("/nonexistent/python3", compare, 1, refused, files);
  /* printing in every form, and the engine's own backends, run nothing */
  static const char *const forms[] = { "--tabular", "--code", "--readable", "--graph", "--json", "--dot" };
  for (size_t i = 0; i < G_N_ELEMENTS (forms); i++)
    {
      const char *const print[] = { "print", forms[i], "g.py", NULL };
      expect_run (NULL, print, 0, "system", files);
    }
  const char *const run_engine[] = { "run", "g.py", NULL };
  expect_run (NULL, run_engine, 1, "node 'system'", files);
}

/* ---- a repro.py that runs os.system at top level, in __init__, in load_args and under __main__ */

static const char evil_repro[] =
  "import os\n"
  "os.system('touch @DIR@/pwned-top')\n"
  "import torch\n"
  "from torch import tensor, device\n"
  "import torch.fx as fx\n"
  "from torch._dynamo.testing import rand_strided\n"
  "from math import inf\n"
  "__import__('os').system('touch @DIR@/pwned-import')\n"
  "\n"
  "class Repro(torch.nn.Module):\n"
  "    def __init__(self) -> None:\n"
  "        super().__init__()\n"
  "        os.system('touch @DIR@/pwned-init')\n"
  "\n"
  "    def forward(self, arg0_1: \"f32[4]\"):\n"
  "        system = torch.os.system('touch @DIR@/pwned-node')\n"
  "        sin = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None\n"
  "        return (sin,)\n"
  "\n"
  "def load_args(reader):\n"
  "    os.system('touch @DIR@/pwned-load-args')\n"
  "    buf0 = reader.storage(None, 16)\n"
  "    reader.tensor(buf0, (4,), is_leaf=True)  # arg0_1\n"
  "load_args._version = 0\n"
  "mod = Repro()\n"
  "if __name__ == '__main__':\n"
  "    os.system('touch @DIR@/pwned-main')\n"
  "    from torch._dynamo.repro.after_aot import run_repro\n"
  "    with torch.no_grad():\n"
  "        run_repro(mod, load_args, accuracy=False, command='run', save_dir=None, tracing_mode='real')\n";

static void
test_repro (void)
{
  static const char *const files[] = { "pwned-top", "pwned-import", "pwned-init", "pwned-node", "pwned-load-args",
                                       "pwned-main", NULL };
  write_file ("repro.py", evil_repro);
  const char *const print[] = { "print", "repro.py", NULL };
  expect_run (NULL, print, 0, "system = torch.os.system(", files);
  const char *const tabular[] = { "print", "--tabular", "repro.py", NULL };
  expect_run (NULL, tabular, 0, NULL, files);
  /* import takes traces and debug folders, not a lone repro.py: it says so, and runs nothing */
  const char *const import[] = { "import", "repro.py", "-o", "repro.fxwb", NULL };
  run_result r = run_fxwb (NULL, import);
  g_test_message ("import repro.py -> %d\n%s", r.status, r.out);
  g_free (r.out);
  assert_no_files (files, "import repro.py");
  const char *const run_repro[] = { "run", "repro.py", "-i", "repro", "-b", "torch:eager", NULL };
  expect_run ("/nonexistent/python3", run_repro, 1, "node 'system': the torch backend refuses", files);
  expect_run (NULL, run_repro, 1, "node 'system': the torch backend refuses", files);
  const char *const compile[] = { "compile", "repro.py", "--backend", "inductor", NULL };
  r = run_fxwb (NULL, compile);
  g_free (r.out);
  assert_no_files (files, "compile repro.py");
}

/* ---- a TORCH_TRACE whose dynamo_output_graph payload holds the node: imported, then run from the workspace */

static void
test_trace_import (void)
{
  static const char *const files[] = { "pwned-trace", NULL };
  const char *payload = "class GraphModule(torch.nn.Module):\n"
                        "    def forward(self, L_a_: \"f32[10][1]cpu\"):\n"
                        "        l_a_ = L_a_\n"
                        "        system = torch.os.system('touch @DIR@/pwned-trace')\n"
                        "        abs_1: \"f32[10][1]cpu\" = torch.abs(l_a_);  l_a_ = None\n"
                        "        return (abs_1,)\n";
  g_autofree char *body = subst (payload);
  g_autofree char *md5 = g_compute_checksum_for_string (G_CHECKSUM_MD5, body, -1);
  GString *log = g_string_new (NULL);
  g_string_append_printf (log,
                          "V1121 16:41:15.927000 1273 torch/_dynamo/output_graph.py:2423] {\"dynamo_output_graph\": "
                          "{\"sizes\": {\"l_a_\": [10], \"abs_1\": [10]}}, \"frame_id\": 0, \"frame_compile_id\": 0, "
                          "\"attempt\": 0, \"has_payload\": \"%s\"}\n", md5);
  g_auto (GStrv) lines = g_strsplit (body, "\n", -1);
  for (char **l = lines; *l && **l; l++)
    g_string_append_printf (log, "\t%s\n", *l);
  g_autofree char *log_path = pwn_path ("dedicated_log_torch_trace_evil.log");
  g_assert_true (g_file_set_contents (log_path, log->str, -1, NULL));
  g_string_free (log, TRUE);

  const char *const import[] = { "import", "dedicated_log_torch_trace_evil.log", "-o", "trace.fxwb", "-q", NULL };
  expect_run (NULL, import, 0, "1 graphs", files);
  const char *const ls[] = { "ls", "trace.fxwb", NULL };
  expect_run (NULL, ls, 0, "[0/0]", files);
  const char *const show[] = { "show", "trace.fxwb", "0/0", "--code", NULL };
  expect_run (NULL, show, 0, "torch.os.system", files);
  const char *const run[] = { "run", "trace.fxwb:0/0", "-b", "torch:eager", NULL };
  expect_run ("/nonexistent/python3", run, 1, "node 'system': the torch backend refuses to call 'torch.os.system'",
              files);
  expect_run (NULL, run, 1, "node 'system': the torch backend refuses to call 'torch.os.system'", files);
  const char *const compare[] = { "compare", "trace.fxwb:0/0", "-b", "torch:inductor", "-b", "eager", NULL };
  expect_run ("/nonexistent/python3", compare, 1, "node 'system'", files);
}

/* ---- a TORCH_COMPILE_DEBUG folder whose Python files call os.system at top level */

static void
test_debug_folder (void)
{
  static const char *const files[] = { "pwned-runnable", "pwned-output-code", "pwned-readable", NULL };
  g_autofree char *model = g_build_filename (tmp_dir, "torch_compile_debug", "run_2026_01_01_00_00_00_000000-pid_1",
                                             "torchinductor", "model__0_inference_0.0", NULL);
  g_assert_cmpint (g_mkdir_with_parents (model, 0700), ==, 0);
  write_file ("torch_compile_debug/run_2026_01_01_00_00_00_000000-pid_1/torchinductor/model__0_inference_0.0/"
              "fx_graph_runnable.py",
              "import os\nos.system('touch @DIR@/pwned-runnable')\nimport torch\n\n"
              "class Repro(torch.nn.Module):\n"
              "    def __init__(self) -> None:\n        super().__init__()\n\n"
              "    def forward(self, arg0_1: \"f32[4]\"):\n"
              "        sin = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None\n"
              "        return (sin,)\n");
  write_file ("torch_compile_debug/run_2026_01_01_00_00_00_000000-pid_1/torchinductor/model__0_inference_0.0/"
              "fx_graph_readable.py",
              "class <lambda>(torch.nn.Module):\n"
              "    def forward(self, arg0_1: \"f32[4]\"):\n"
              "        system = torch.os.system('touch @DIR@/pwned-readable')\n"
              "        sin = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None\n"
              "        return (sin,)\n");
  write_file ("torch_compile_debug/run_2026_01_01_00_00_00_000000-pid_1/torchinductor/model__0_inference_0.0/"
              "output_code.py",
              "import os\nos.system('touch @DIR@/pwned-output-code')\n"
              "def call(args):\n    os.system('touch @DIR@/pwned-output-code')\n");
  const char *const import[] = { "import", "torch_compile_debug", "-o", "debug.fxwb", "-q", NULL };
  run_result r = run_fxwb (NULL, import);
  g_test_message ("import debug folder -> %d\n%s", r.status, r.out);
  g_free (r.out);
  assert_no_files (files, "import debug folder");
  const char *const ls[] = { "ls", "debug.fxwb", NULL };
  r = run_fxwb (NULL, ls);
  g_test_message ("%s", r.out);
  g_free (r.out);
  /* the graph run is the readable one with the node: refused */
  const char *const run[] = { "run", "debug.fxwb:-/0", "-b", "torch:eager", NULL };
  expect_run ("/nonexistent/python3", run, 1, "node 'system': the torch backend refuses", files);
}

static void
remove_tree (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    {
      GDir *d = g_dir_open (path, 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name (d)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          remove_tree (child);
        }
      if (d)
        g_dir_close (d);
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 2)
    {
      g_printerr ("usage: %s [test options] FXWB\n", argv[0]);
      return 2;
    }
  fxwb_path = argv[1];
  tmp_dir = g_dir_make_tmp ("fxwb-security-XXXXXX", NULL);
  g_test_add_func ("/fxwb/security/graph-file", test_graph_file);
  g_test_add_func ("/fxwb/security/repro", test_repro);
  g_test_add_func ("/fxwb/security/trace-import", test_trace_import);
  g_test_add_func ("/fxwb/security/debug-folder", test_debug_folder);
  int rc = g_test_run ();
  remove_tree (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
