/* test-training-cli.c: `fxwb import`, `fxwb ls` and `fxwb show` on a training trace (mlp_block-cuda, torch 2.11):
   the forward/backward/joint graphs, the values saved for backward, the training mark. argv[1] is fxwb. */
#include <glib.h>
#include <string.h>

#include "fxwb-test-run.h"

static const char *fxwb_path;
static char *tmp_dir;
static char *workspace;

/* fxwb CMD FILE ARGS... (NULL-terminated); fails the test unless it exits with status. */
static fxwb_run_result
run_on (const char *file, int status, const char *cmd, ...)
{
  GPtrArray *args = g_ptr_array_new ();
  g_ptr_array_add (args, (char *) cmd);
  g_ptr_array_add (args, (char *) file);
  va_list ap;
  va_start (ap, cmd);
  for (const char *a; (a = va_arg (ap, const char *));)
    g_ptr_array_add (args, (char *) a);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  fxwb_run_result r = fxwb_test_run (fxwb_path, (const char *const *) args->pdata);
  g_ptr_array_free (args, TRUE);
  if (r.status != status)
    g_error ("fxwb %s: exit %d, expected %d\nstdout:\n%s\nstderr:\n%s", cmd, r.status, status, r.out, r.err);
  return r;
}

#define run_ws(status, ...) run_on (workspace, status, __VA_ARGS__)

static char *
trace_text (const char *record, const char *file)
{
  /* The payload lines of the first record of that kind in the trace, without their tab, and without the empty last
     line print() adds after print_readable's text. */
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (file, &text, NULL, NULL));
  const char *p = strstr (text, record);
  g_assert_nonnull (p);
  p = strchr (p, '\n') + 1;
  GString *s = g_string_new (NULL);
  while (*p == '\t')
    {
      const char *eol = strchr (p, '\n');
      g_string_append_len (s, p + 1, eol ? eol + 1 - (p + 1) : (gssize) strlen (p + 1));
      p = eol ? eol + 1 : p + strlen (p);
    }
  while (s->len > 1 && s->str[s->len - 1] == '\n' && s->str[s->len - 2] == '\n')
    g_string_truncate (s, s->len - 1);
  return g_string_free (s, FALSE);
}

static char *trace_file;

static void
test_import_ls (void)
{
  fxwb_run_result r = run_on (trace_file, 0, "import", "-q", "-o", workspace, NULL);
  /* the backward's {"version": 2.0} provenance mapping is not malformed */
  g_assert_null (strstr (r.out, "warning"));
  fxwb_run_result_clear (&r);
  r = run_ws (0, "ls", NULL);
  g_assert_nonnull (strstr (r.out, "[0/0]"));
  g_assert_nonnull (strstr (r.out, " ok, training "));
  fxwb_run_result_clear (&r);
  r = run_ws (0, "ls", "--json", NULL);
  g_assert_nonnull (strstr (r.out, "\"training\": true"));
  fxwb_run_result_clear (&r);
}

static void
test_stages_saved (void)
{
  fxwb_run_result r = run_ws (0, "show", "0/0", NULL);
  /* forward and backward Inductor compiles told apart */
  g_assert_nonnull (strstr (r.out, "\npost_grad "));
  g_assert_nonnull (strstr (r.out, "\npost_grad_backward "));
  g_assert_nonnull (strstr (r.out, "\nrunnable_backward "));
  g_assert_nonnull (strstr (r.out, "saved for backward: 3\n"));
  g_assert_nonnull (strstr (r.out, "relu = torch.ops.aten.relu.default(addmm)  # /home/user/train/programs.py:13"));
  fxwb_run_result_clear (&r);
  r = run_ws (0, "show", "0/0", "--saved", NULL);
  g_auto (GStrv) lines = g_strsplit (r.out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 5);
  g_assert_true (g_str_has_prefix (lines[1], "  primals_3        f32[64, 256][256, 1]cuda:0         out 1   forward input "
                                             "PlainAOTInput(idx=2)"));
  fxwb_run_result_clear (&r);
  r = run_ws (0, "show", "0/0", "--saved", "--json", NULL);
  g_assert_nonnull (strstr (r.out, "\"name\": \"relu\", \"type\": \"f32[64, 1024][1024, 1]cuda:0\", "
                                   "\"forward_output\": 3"));
  fxwb_run_result_clear (&r);
  /* the backward artifacts */
  r = run_ws (0, "show", "0/0", "--artifacts", NULL);
  g_assert_nonnull (strstr (r.out, "inductor_output_code_backward "));
  fxwb_run_result_clear (&r);
}

/* --forward/--backward print as PyTorch logged them (--readable), tabular by default. */
static void
test_graphs (void)
{
  static const struct
  {
    const char *opt, *record;
  } parts[] = { { "--forward", "{\"aot_forward_graph\"" }, { "--backward", "{\"aot_backward_graph\"" },
                { "--joint", "{\"aot_joint_graph\"" } };
  for (size_t i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      g_autofree char *logged = trace_text (parts[i].record, trace_file);
      fxwb_run_result r = run_ws (0, "show", "0/0", parts[i].opt, "--readable", NULL);
      g_assert_cmpstr (r.out, ==, logged);
      fxwb_run_result_clear (&r);
      r = run_ws (0, "show", "0/0", parts[i].opt, NULL);
      g_assert_true (g_str_has_prefix (r.out, "opcode "));
      fxwb_run_result_clear (&r);
    }
  fxwb_run_result r = run_ws (0, "show", "0/0", "--backward", NULL);
  g_assert_nonnull (strstr (r.out, "\nplaceholder    tangents_1 "));
  fxwb_run_result_clear (&r);
  /* GraphModule.code of the joint graph: _PyTreeCodeGen's signature and prologue */
  r = run_ws (0, "show", "0/0", "--joint", "--code", NULL);
  g_assert_nonnull (strstr (r.out, "def forward(self, primals, tangents):\n    primals_1, primals_2, primals_3, "
                                   "primals_4, primals_5, tangents_1, = fx_pytree.tree_flatten_spec([primals, "
                                   "tangents], self._in_spec)\n"));
  g_assert_nonnull (strstr (r.out, "return pytree.tree_unflatten([add, permute_8, view_1, None, permute_5, view], "
                                   "self._out_spec)"));
  fxwb_run_result_clear (&r);
}

static void
test_errors (void)
{
  fxwb_run_result r = run_ws (2, "show", "0/0", "--forward", "--backward", NULL);
  g_assert_nonnull (strstr (r.err, "choose one of --forward, --backward, --joint, --stage"));
  fxwb_run_result_clear (&r);
  r = run_ws (2, "show", "0/0", "--backward", "--guards", NULL);
  fxwb_run_result_clear (&r);
  r = run_ws (1, "show", "9/9", "--saved", NULL);
  fxwb_run_result_clear (&r);
}

/* An inference compile has no backward to show. */
static void
test_not_training (void)
{
  g_autofree char *ws = g_build_filename (tmp_dir, "inference.fxwb", NULL);
  g_autofree char *trace = g_build_filename (g_getenv ("FX_FIXTURES"), "traces", "mlp_module-cuda", "torch_trace",
                                             NULL);
  fxwb_run_result r = run_on (trace, 0, "import", "-q", "-o", ws, NULL);
  fxwb_run_result_clear (&r);
  r = run_on (ws, 1, "show", "0/0", "--saved", NULL);
  g_assert_nonnull (strstr (r.err, "compile 0/0 is not a training compile (no aot_backward graph)"));
  fxwb_run_result_clear (&r);
  r = run_on (ws, 1, "show", "0/0", "--backward", NULL);
  g_assert_nonnull (strstr (r.err, "has no 'aot_backward' graph"));
  fxwb_run_result_clear (&r);
}

/* A trace whose backward reads a value its forward does not return: the stage listing says so and stands, --saved
   is an error naming the value. */
static void
test_mismatch (void)
{
#define REC(kind) "V1127 02:50:34.147000 1195 torch/_functorch/x.py:1] {\"" kind "\": {}, \"frame_id\": 0, " \
                  "\"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"00000000000000000000000000000000\"}\n"
  const char *text = REC ("aot_forward_graph")
    "\tclass GraphModule(torch.nn.Module):\n"
    "\t    def forward(self, primals_1: \"f32[4]\"):\n"
    "\t        relu: \"f32[4]\" = torch.ops.aten.relu.default(primals_1);  primals_1 = None\n"
    "\t        return (relu,)\n"
    REC ("aot_backward_graph")
    "\tclass GraphModule(torch.nn.Module):\n"
    "\t    def forward(self, sig: \"f32[4]\", tangents_1: \"f32[4]\"):\n"
    "\t        mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(tangents_1, sig);  tangents_1 = sig = None\n"
    "\t        return (mul,)\n";
#undef REC
  g_autofree char *log = g_build_filename (tmp_dir, "mismatch.log", NULL);
  g_autofree char *ws = g_build_filename (tmp_dir, "mismatch.fxwb", NULL);
  g_assert_true (g_file_set_contents (log, text, -1, NULL));
  fxwb_run_result r = run_on (log, 0, "import", "-q", "-o", ws, NULL);
  fxwb_run_result_clear (&r);
  r = run_on (ws, 0, "show", "0/0", NULL);
  g_assert_nonnull (strstr (r.out, "aot_backward "));
  g_assert_nonnull (strstr (r.out, "saved for backward: ? (backward input 'sig' is no node of the forward graph)"));
  fxwb_run_result_clear (&r);
  r = run_on (ws, 1, "show", "0/0", "--saved", NULL);
  g_assert_nonnull (strstr (r.err, "backward input 'sig' is no node of the forward graph"));
  fxwb_run_result_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 2)
    g_error ("usage: test-training-cli [test options] FXWB");
  fxwb_path = argv[1];
  tmp_dir = g_dir_make_tmp ("fxtraincli-XXXXXX", NULL);
  workspace = g_build_filename (tmp_dir, "w.fxwb", NULL);
  trace_file = g_build_filename (g_getenv ("FX_FIXTURES"), "training", "traces", "mlp_block-cuda", "torch_trace.log",
                                 NULL);
  g_test_add_func ("/training-cli/import-ls", test_import_ls);
  g_test_add_func ("/training-cli/stages-saved", test_stages_saved);
  g_test_add_func ("/training-cli/graphs", test_graphs);
  g_test_add_func ("/training-cli/errors", test_errors);
  g_test_add_func ("/training-cli/not-training", test_not_training);
  g_test_add_func ("/training-cli/mismatch", test_mismatch);
  int rc = g_test_run ();
  fxwb_test_rm_rf (tmp_dir);
  return rc;
}
