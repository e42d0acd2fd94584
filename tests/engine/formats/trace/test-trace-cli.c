/* test-trace-cli.c: `fxwb import`, `fxwb ls`, `fxwb show` and `fxwb explain` as a user runs them on the
   toy_graph_break-cuda trace, and their exit codes on bad input. argv[1] (after the test options) is fxwb. */
#include "fx-test-lines.h"
#include <glib.h>

#include "fxwb-test-run.h"
#include <glib/gstdio.h>
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
  run_result r = fxwb_test_run (fxwb_path, args);
  if (r.signal != 0)
    g_test_message ("fxwb %s killed by signal %d; stderr:\n%s", args[0], r.signal,
                    r.err ? r.err + (strlen (r.err) > 4000 ? strlen (r.err) - 4000 : 0) : "");
  return r;
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
  g_auto (GStrv) lines = fx_test_split_lines (r.out);
  g_assert_cmpuint (g_strv_length (lines), ==, 12);  /* input, header, 9 compiles, "" */
  g_assert_true (g_str_has_prefix (lines[0], "== input 1: "));
  g_assert_true (g_str_has_suffix (lines[0], ".log (torch_trace, 4.6 MB)"));
  g_assert_true (g_str_has_prefix (lines[1], "COMPILE "));
  g_assert_null (strstr (lines[1], "LINKED"));
  g_assert_true (g_str_has_prefix (lines[2], "[0/0]      toy_example "));
  g_assert_nonnull (strstr (lines[2], "program.py:5 graph break"));
  g_assert_true (g_str_has_prefix (lines[6], "[1/0]      torch_dynamo_resume_in_toy_example_at_7"));
  g_assert_nonnull (strstr (lines[8], " recompiled "));
  run_result_clear (&r);
  const char *jargs[] = { "ls", "--json", workspace, NULL };
  r = run_fxwb (jargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\"compile_id\": \"2/3\", \"frame_id\": 2, \"frame_compile_id\": 3"));
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
  /* str(Guard) per guard; the shape guards of a compile as one SHAPE_ENV guard (0/1 on has dynamic sizes). */
  g_assert_nonnull (strstr (r.out, "Out Guards:\n  Guard 1:\n    Name: ''\n    Source: global\n"
                                   "    Create Function: LAMBDA_GUARD\n    Guard Types: ['LAMBDA_GUARD']\n"
                                   "    Code List: ['torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids =="
                                   " None']\n    Object Weakref: None\n    Guarded Class Weakref: None\n  Guard 2:\n"));
  g_assert_nonnull (strstr (r.out, "    Name: \"L['a']\"\n    Source: local\n    Create Function: TENSOR_MATCH\n"
                                   "    Guard Types: ['TENSOR_MATCH']\n    Code List: [\"check_tensor(L['a'], Tensor,"));
  g_assert_nonnull (strstr (r.out, "    Name: ''\n    Source: shape_env\n    Create Function: SHAPE_ENV\n"
                                   "    Guard Types: None\n    Code List: None\n"));
  /* compile_times(): a tabulate table of every dynamo_timed key, durations in the order they ran. */
  const char *ct = strstr (r.out, "Compile Times: TorchDynamo compilation metrics:\nFunction ");
  g_assert_nonnull (ct);
  g_assert_nonnull (strstr (ct, "\n----------"));
  g_autoptr (GRegex) row = g_regex_new ("^entire_frame_compile +([0-9]+\\.[0-9]{4})(, [0-9]+\\.[0-9]{4}){8}$",
                                        G_REGEX_MULTILINE, 0, NULL);
  g_assert_true (g_regex_match (row, ct, 0, NULL));
  g_assert_true (g_str_has_suffix (r.out, "\n"));
  g_assert_false (g_str_has_suffix (r.out, " \n"));
  run_result_clear (&r);
}

/* A TORCH_COMPILE_DEBUG folder beside the trace: ls names each input and the linked compiles, show --fusion on a
   trace compile lists its folder's fusion groups with buffers and layouts. */
static void
test_debug_link_cli (void)
{
  g_autofree char *dbg = fixture_path ("traces/toy_graph_break-cuda/torch_compile_debug");
  g_autofree char *ws = g_build_filename (tmp_dir, "d.fxwb", NULL);
  g_autofree char *trace = fixture_path ("traces/toy_graph_break-cuda/torch_trace");
  const char *iargs[] = { "import", trace, dbg, "-o", ws, NULL };
  run_result r = run_fxwb (iargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "  9 TORCH_COMPILE_DEBUG compiles linked to trace compiles (same output code)\n"));
  run_result_clear (&r);
  const char *largs[] = { "ls", ws, NULL };
  r = run_fxwb (largs);
  g_assert_cmpint (r.status, ==, 0);
  g_auto (GStrv) lines = fx_test_split_lines (r.out);
  g_assert_true (g_str_has_prefix (lines[0], "== input 1: "));
  g_assert_true (g_str_has_suffix (lines[1], "  LINKED"));
  g_assert_true (g_str_has_suffix (lines[2], "  model__0_inference_0.0"));
  g_assert_cmpstr (lines[11], ==, "");
  g_autofree char *want = g_strdup_printf ("== input 2: %s (torch_compile_debug)", dbg);
  g_assert_cmpstr (lines[12], ==, want);
  g_assert_true (g_str_has_prefix (lines[17], "[-/3]      model__3_inference_3.3 "));
  g_assert_true (g_str_has_suffix (lines[17], "  0/1"));
  run_result_clear (&r);
  const char *jargs[] = { "ls", "--json", ws, NULL };
  r = run_fxwb (jargs);
  g_assert_nonnull (strstr (r.out, "\"input\": 2, \"input_path\": "));
  g_assert_nonnull (strstr (r.out, "\"input_kind\": \"torch_compile_debug\""));
  g_assert_nonnull (strstr (r.out, "\"linked\": \"model__8_inference_8.8\""));
  run_result_clear (&r);
  const char *fargs[] = { "show", ws, "0/0", "--fusion", NULL };
  r = run_fxwb (fargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==,
                   "op0_op2                          [op0, op2]\n"
                   "    FusedSchedulerNode(SchedulerNode,SchedulerNode)\n"
                   "    writes: [buf0, buf2]  reads: [arg1_1]\n"
                   "    kernel: triton_per_fused_lt_sum_0:1  origins: [sum_1, lt]  pre-grad: [sum_1, lt]\n"
                   "    buf0: ComputedBuffer FixedLayout('cuda:0', torch.float32, size=[], stride=[])\n"
                   "    buf2: ComputedBuffer FixedLayout('cuda:0', torch.bool, size=[], stride=[])\n"
                   "    - op0: SchedulerNode  iteration (1, 10)  writes [buf0]  reads [arg1_1]\n"
                   "    - op2: SchedulerNode  iteration (1, 1)  writes [buf2]  reads [buf0]\n"
                   "op1                              [op1]\n"
                   "    SchedulerNode(ComputedBuffer)\n"
                   "    writes: [buf1]  reads: [arg0_1]\n"
                   "    kernel: triton_poi_fused_abs_add_div_1:2  origins: [div, add, abs_1]  pre-grad: [x, add, abs_1]\n"
                   "    buf1: ComputedBuffer FixedLayout('cuda:0', torch.float32, size=[10], stride=[1])\n");
  run_result_clear (&r);
  /* The folder's raw files too: ir_post_fusion.txt of model__0 through 0/0. */
  const char *aargs[] = { "show", ws, "0/0", "--artifact", "ir_post_fusion.txt", NULL };
  r = run_fxwb (aargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (g_str_has_prefix (r.out, "op0_op2: FusedSchedulerNode(SchedulerNode,SchedulerNode)\n"));
  run_result_clear (&r);
  const char *kargs[] = { "show", ws, "0/0", "--kernels", NULL };
  r = run_fxwb (kargs);
  g_assert_nonnull (strstr (r.out, "    pre-grad nodes: [x, add, abs_1]  (post-grad: [div, add, abs_1])\n"));
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


#define PFX "V1121 16:41:15.747000 1273 torch/fx/experimental/symbolic_shapes.py:276] "

/* show --shapes: a specialization with its sources and user stack; a dynamo_error marks the compile failed. */
static void
test_shapes_cli (void)
{
  const char *text =
    PFX "{\"str\": [\"/p/prog.py\", 1]}\n"
    PFX "{\"dynamo_start\": {\"stack\": [{\"line\": 5, \"name\": \"f\", \"filename\": 1}]}, \"frame_id\": 0, "
    "\"frame_compile_id\": 0, \"attempt\": 0}\n"
    PFX "{\"symbolic_shape_specialization\": {\"symbol\": \"s0\", \"sources\": [\"L['x'].size()[0]\"], \"value\": \"4\","
    " \"reason\": \"Eq(s0, 4)\", \"stack\": [], \"user_stack\": [{\"line\": 7, \"name\": \"f\", \"filename\": 1, "
    "\"loc\": \"return x.view(4)\"}]}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n"
    PFX "{\"artifact\": {\"name\": \"dynamo_error\", \"encoding\": \"string\"}, \"frame_id\": 0, "
    "\"frame_compile_id\": 0, \"attempt\": 0}\n"
    "\tTraceback (most recent call last):\n\t  File \"/p/prog.py\", line 7, in f\n\tRuntimeError: boom\n";
  g_autofree char *log = g_build_filename (tmp_dir, "shapes.log", NULL);
  g_assert_true (g_file_set_contents (log, text, -1, NULL));
  g_autofree char *ws = g_build_filename (tmp_dir, "s.fxwb", NULL);
  const char *iargs[] = { "import", log, "-o", ws, NULL };
  run_result r = run_fxwb (iargs);
  g_assert_cmpint (r.status, ==, 0);
  run_result_clear (&r);
  const char *sargs[] = { "show", ws, "0/0", "--shapes", NULL };
  r = run_fxwb (sargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "specialization: s0 (L['x'].size()[0]) = 4: Eq(s0, 4)\n"
                              "  File \"/p/prog.py\", line 7, in f\n    return x.view(4)\n");
  run_result_clear (&r);
  const char *largs[] = { "ls", ws, NULL };
  r = run_fxwb (largs);
  g_assert_nonnull (strstr (r.out, " failed "));
  run_result_clear (&r);
}


/* compile_times() of one compile, where every dynamo_timed key ran once: tabulate's numeric column (%g, aligned
   on the decimal point). compile-times-0_0.txt is tabulate 0.8.9's output for the same durations. */
static void
test_compile_times_numeric (void)
{
  g_autofree char *dir = fixture_path ("traces/toy_graph_break-cuda/torch_trace");
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autofree char *log = g_build_filename (dir, g_dir_read_name (d), NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (log, &text, NULL, NULL));
  /* The chromium events of compile 0/0 with their payload lines. */
  g_auto (GStrv) lines = fx_test_split_lines (text);
  GString *one = g_string_new ("");
  gboolean keep = FALSE;
  for (int i = 0; lines[i]; i++)
    {
      if (lines[i][0] != '\t')
        keep = strstr (lines[i], "\"chromium_event\"") && strstr (lines[i], "\"frame_id\": 0, \"frame_compile_id\": 0,");
      if (keep)
        g_string_append_printf (one, "%s\n", lines[i]);
    }
  g_autofree char *path = g_build_filename (tmp_dir, "one.log", NULL);
  g_assert_true (g_file_set_contents (path, one->str, (gssize) one->len, NULL));
  g_string_free (one, TRUE);
  g_autofree char *ws = g_build_filename (tmp_dir, "one.fxwb", NULL);
  const char *iargs[] = { "import", path, "-o", ws, NULL };
  run_result r = run_fxwb (iargs);
  g_assert_cmpint (r.status, ==, 0);
  run_result_clear (&r);
  const char *eargs[] = { "explain", ws, NULL };
  r = run_fxwb (eargs);
  g_assert_cmpint (r.status, ==, 0);
  g_autofree char *want_path = g_build_filename (g_getenv ("FX_SOURCE_ROOT"), "tests", "engine", "formats", "trace",
                                                 "compile-times-0_0.txt", NULL);
  g_autofree char *want = NULL;
  g_assert_true (g_file_get_contents (want_path, &want, NULL, NULL));
  const char *ct = strstr (r.out, "Compile Times: ");
  g_assert_nonnull (ct);
  g_assert_cmpstr (ct + strlen ("Compile Times: "), ==, want);
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
  g_test_add_func ("/trace-cli/debug-link", test_debug_link_cli);
  g_test_add_func ("/trace-cli/shapes", test_shapes_cli);
  g_test_add_func ("/trace-cli/compile-times-numeric", test_compile_times_numeric);
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
