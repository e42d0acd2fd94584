/* test-trace.c: the TORCH_TRACE importer against real PyTorch 2.11 traces (toy_graph_break-cuda, mlp_module-cuda)
   and malformed input. */
#include "fx-test-lines.h"
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fx/importers.h"
#include "fx/provenance.h"
#include "fx/runtime.h"
#include "fx/pyparse.h"
#include "fx/store.h"

#include <sqlite3.h>

static char *
fixture_path (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  g_assert_nonnull (dir);
  return g_build_filename (dir, rel, NULL);
}

static char *
tmp_workspace (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("fxtrace-XXXXXX", &error);
  g_assert_no_error (error);
  char *path = g_build_filename (dir, "w.fxwb", NULL);
  g_free (dir);
  return path;
}

static void
remove_workspace (const char *path)
{
  const char *suffixes[] = { "", "-wal", "-shm" };
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *p = g_strconcat (path, suffixes[i], NULL);
      g_unlink (p);
    }
  g_autofree char *dir = g_path_get_dirname (path);
  g_rmdir (dir);
}

static fx_store *
import_fixture (const char *path, const char *rel, fx_import_stats *stats)
{
  fx_store *store = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (path, true, &store, &diag), ==, FX_OK);
  g_autofree char *trace = fixture_path (rel);
  fx_status st = fx_import_path (store, trace, NULL, NULL, stats, &diag);
  if (st != FX_OK)
    g_error ("import %s: %s", trace, diag.message);
  return store;
}

/* The compiles in the order the trace first mentions them (row order). */
static int
by_row (const void *a, const void *b)
{
  const fx_store_compile *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static void
test_toy_compiles (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/toy_graph_break-cuda/torch_trace", &stats);
  g_assert_false (stats.already_imported);
  g_assert_cmpint (stats.frames, ==, 3);
  g_assert_cmpint (stats.compiles, ==, 9);
  /* Every graph of this trace parses; nothing malformed. */
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_GRAPH_PARSE], ==, 0);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_LINE], ==, 0);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_JSON], ==, 0);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_RECORD], ==, 0);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_UNKNOWN_STRING], ==, 0);

  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 9);
  static const struct
  {
    const char *id, *function, *status;
    int line;
  } want[] = {
    { "0/0", "toy_example", "graph break", 5 },
    { "0/1", "toy_example", "graph break", 5 },
    { "0/2", "toy_example", "graph break", 5 },
    { "0/3", "toy_example", "graph break", 5 },
    { "1/0", "torch_dynamo_resume_in_toy_example_at_7", "ok", 7 },
    { "2/0", "torch_dynamo_resume_in_toy_example_at_7", "ok", 7 },
    { "2/1", "torch_dynamo_resume_in_toy_example_at_7", "recompiled", 7 },
    { "2/2", "torch_dynamo_resume_in_toy_example_at_7", "recompiled", 7 },
    { "2/3", "torch_dynamo_resume_in_toy_example_at_7", "recompiled", 7 },
  };
  for (size_t i = 0; i < n; i++)
    {
      g_assert_cmpstr (cs[i].compile_id, ==, want[i].id);
      g_assert_cmpstr (cs[i].function, ==, want[i].function);
      g_assert_cmpstr (cs[i].status, ==, want[i].status);
      g_assert_cmpint (cs[i].line, ==, want[i].line);
      g_assert_true (g_str_has_suffix (cs[i].file, "toy_graph_break-cuda/program.py"));
      g_assert_cmpint (cs[i].guard_count, >, 0);
      g_assert_cmpfloat (cs[i].entire_frame_compile_s, >, 0);
      g_assert_null (cs[i].fail_type);
    }
  g_assert_cmpint (cs[0].n_breaks, ==, 1);
  g_assert_nonnull (strstr (cs[6].user_stack, "size change -> recompile"));
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}

/* Lines "[C] [__recompiles_verbose]     - F: reason" of torch_logs.txt, as "C|F: reason". */
static GPtrArray *
logged_recompiles (void)
{
  g_autofree char *path = fixture_path ("traces/toy_graph_break-cuda/torch_logs.txt");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GRegex) re = g_regex_new ("\\] \\[([0-9/_]+)\\] \\[__recompiles_verbose\\]     - (.*)$",
                                       G_REGEX_MULTILINE, 0, NULL);
  g_autoptr (GMatchInfo) mi = NULL;
  g_regex_match (re, text, 0, &mi);
  while (g_match_info_matches (mi))
    {
      g_autofree char *c = g_match_info_fetch (mi, 1);
      g_autofree char *r = g_match_info_fetch (mi, 2);
      g_ptr_array_add (out, g_strdup_printf ("%s|%s", c, r));
      g_match_info_next (mi, NULL);
    }
  return out;
}

/* Every compile: kinds and code of its guards equal its GUARDS tree in torch_logs.txt, leaf by leaf (managers,
   such as a dict's KeyValueManager, are no guards). */
static void
check_guards_vs_logs (fx_store *store, const char *logs_rel, size_t n_compiles)
{
  g_autofree char *logs_path = fixture_path (logs_rel);
  g_autofree char *logs = NULL;
  g_assert_true (g_file_get_contents (logs_path, &logs, NULL, NULL));
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *all;
  size_t nall;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &all, &nall, NULL), ==, FX_OK);
  g_assert_cmpuint (nall, ==, n_compiles);
  for (size_t c = 0; c < nall; c++)
    {
      g_autofree char *pat = g_strdup_printf ("\\] \\[%s\\] \\[__guards\\] [| ]*\\+- ([A-Z_]+)(: (.*?))?$",
                                              all[c].compile_id);
      g_autoptr (GRegex) cre = g_regex_new (pat, G_REGEX_MULTILINE, 0, NULL);
      g_autoptr (GMatchInfo) cmi = NULL;
      fx_store_guard *cg;
      size_t ncg;
      g_assert_cmpint (fx_store_list_guards (store, all[c].id, arena, &cg, &ncg, NULL), ==, FX_OK);
      size_t k = 0;
      for (g_regex_match (cre, logs, 0, &cmi); g_match_info_matches (cmi); g_match_info_next (cmi, NULL), k++)
        {
          g_assert_cmpuint (k, <, ncg);
          g_autofree char *kind = g_match_info_fetch (cmi, 1);
          g_autofree char *rest = g_match_info_fetch (cmi, 3);
          char *hash = rest ? strstr (rest, "  # ") : NULL;
          if (hash)
            *hash = 0;
          g_strchomp (rest);
          g_assert_cmpstr (cg[k].kind, ==, kind);
          g_assert_cmpstr (cg[k].code, ==, rest ? rest : "");
        }
      g_assert_cmpuint (k, ==, ncg);
      g_assert_cmpuint (k, >, 5);
    }
  fx_arena_free (arena);
}

static void
test_toy_recompiles_and_guards (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/toy_graph_break-cuda/torch_trace", &stats);
  g_autoptr (GPtrArray) logged = logged_recompiles ();
  g_assert_cmpuint (logged->len, ==, 12);

  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
  guint matched = 0;
  for (size_t i = 0; i < n; i++)
    {
      fx_store_guard_failure *f;
      size_t nf;
      g_assert_cmpint (fx_store_list_guard_failures (store, cs[i].id, arena, &f, &nf, NULL), ==, FX_OK);
      for (size_t k = 0; k < nf; k++)
        {
          g_autofree char *key = g_strdup_printf ("%s|%s: %s", cs[i].compile_id, f[k].failed_compile, f[k].reason);
          gboolean found = FALSE;
          for (guint j = 0; j < logged->len; j++)
            found |= strcmp (key, logged->pdata[j]) == 0;
          if (!found)
            g_error ("recompile reason not in torch_logs.txt: %s", key);
          matched++;
        }
    }
  g_assert_cmpuint (matched, ==, logged->len);
  int64_t row = 0;
  g_assert_cmpint (fx_store_find_compile (store, "0/1", &row, NULL), ==, FX_OK);
  fx_store_guard_failure *f;
  g_assert_cmpint (fx_store_list_guard_failures (store, row, arena, &f, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (f[0].failed_compile, ==, "0/0");
  g_assert_cmpstr (f[0].reason, ==, "tensor 'a' size mismatch at index 0. expected 10, actual 16");

  /* The guards of 0/0: the guard kinds of the [0/0] GUARDS tree of torch_logs.txt, in order. */
  g_autofree char *logs_path = fixture_path ("traces/toy_graph_break-cuda/torch_logs.txt");
  g_autofree char *logs = NULL;
  g_assert_true (g_file_get_contents (logs_path, &logs, NULL, NULL));
  g_autoptr (GRegex) re = g_regex_new ("\\] \\[0/0\\] \\[__guards\\] [| ]*\\+- ([A-Z_]+)(:|$)", G_REGEX_MULTILINE,
                                       0, NULL);
  g_autoptr (GMatchInfo) mi = NULL;
  g_autoptr (GPtrArray) kinds = g_ptr_array_new_with_free_func (g_free);
  g_regex_match (re, logs, 0, &mi);
  while (g_match_info_matches (mi))
    {
      g_ptr_array_add (kinds, g_match_info_fetch (mi, 1));
      g_match_info_next (mi, NULL);
    }
  g_assert_cmpint (fx_store_find_compile (store, "0/0", &row, NULL), ==, FX_OK);
  fx_store_guard *g;
  g_assert_cmpint (fx_store_list_guards (store, row, arena, &g, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, kinds->len);
  g_assert_cmpuint (n, >, 5);
  for (size_t i = 0; i < n; i++)
    g_assert_cmpstr (g[i].kind, ==, kinds->pdata[i]);
  gboolean saw_tensor_match = FALSE;
  for (size_t i = 0; i < n; i++)
    if (strcmp (g[i].kind, "TENSOR_MATCH") == 0 && strcmp (g[i].source, "L['a']") == 0)
      {
        saw_tensor_match = TRUE;
        g_assert_true (g_str_has_prefix (g[i].code, "check_tensor(L['a'], Tensor,"));
        g_assert_true (g_str_has_prefix (g[i].user_line, "x = a / (torch.abs(a) + 1)"));
      }
  g_assert_true (saw_tensor_match);

  check_guards_vs_logs (store, "traces/toy_graph_break-cuda/torch_logs.txt", 9);

  /* The graph break of 0/0. */
  fx_store_graph_break *b;
  g_assert_cmpint (fx_store_list_graph_breaks (store, row, arena, &b, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (b[0].reason, ==, "Data-dependent branching");
  g_assert_true (g_str_has_prefix (b[0].explanation, "Detected data-dependent branching"));
  g_assert_nonnull (strstr (b[0].user_stack, "line 7, in toy_example"));
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}

/* Each stored graph prints the same tabular as the parser + printer give for its original text. */
static void
check_graphs (fx_store *store, int min_graphs)
{
  fx_arena *arena = fx_arena_new ();
  fx_store_graph_info *gi;
  size_t n;
  g_assert_cmpint (fx_store_list_graphs (store, 0, arena, &gi, &n, NULL), ==, FX_OK);
  g_assert_cmpint ((int) n, >=, min_graphs);
  int dynamo = 0;
  for (size_t i = 0; i < n; i++)
    {
      fx_graph *stored = NULL, *parsed = NULL;
      char *text = NULL;
      g_assert_cmpint (fx_store_get_graph (store, gi[i].id, &stored, &text, NULL), ==, FX_OK);
      g_assert_nonnull (stored);
      g_assert_cmpint (fx_parse_fx_code (text, strlen (text), "t", &parsed, NULL), ==, FX_OK);
      fx_buf a, b;
      fx_buf_init (&a);
      fx_buf_init (&b);
      fx_graph_print_tabular (stored, &a);
      fx_graph_print_tabular (parsed, &b);
      g_assert_cmpstr (a.data, ==, b.data);
      g_assert_cmpuint (stored->n_nodes, ==, (size_t) gi[i].n_nodes);
      if (strcmp (gi[i].stage, "dynamo") == 0)
        {
          dynamo++;
          g_assert_nonnull (strstr (a.data, "placeholder"));
        }
      fx_buf_free (&a);
      fx_buf_free (&b);
      fx_graph_free (stored);
      fx_graph_free (parsed);
      free (text);
    }
  g_assert_cmpint (dynamo, >, 0);
  fx_arena_free (arena);
}

/* Kernel names per compile equal the `NAME = async_compile.` definitions of that compile's output_code.py in the
   TORCH_COMPILE_DEBUG folder (model__K is the K-th compile in time order). */
static void
check_kernels (fx_store *store, const char *debug_rel, size_t n_compiles)
{
  g_autofree char *debug = fixture_path (debug_rel);
  g_autoptr (GDir) dir = g_dir_open (debug, 0, NULL);
  g_assert_nonnull (dir);
  const char *run = g_dir_read_name (dir);
  g_assert_nonnull (run);
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, n_compiles);
  qsort (cs, n, sizeof *cs, by_row);
  g_autoptr (GRegex) re = g_regex_new ("^(\\w+) = async_compile\\.", G_REGEX_MULTILINE, 0, NULL);
  int total = 0;
  for (size_t k = 0; k < n; k++)
    {
      g_autofree char *name = g_strdup_printf ("model__%zu_inference_%zu.%zu", k, k, k);
      g_autofree char *path = g_build_filename (debug, run, "torchinductor", name, "output_code.py", NULL);
      g_autofree char *code = NULL;
      g_assert_true (g_file_get_contents (path, &code, NULL, NULL));
      g_autoptr (GMatchInfo) mi = NULL;
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      g_regex_match (re, code, 0, &mi);
      while (g_match_info_matches (mi))
        {
          g_ptr_array_add (names, g_match_info_fetch (mi, 1));
          g_match_info_next (mi, NULL);
        }
      fx_store_kernel *ks;
      size_t nk;
      g_assert_cmpint (fx_store_list_kernels (store, cs[k].id, arena, &ks, &nk, NULL), ==, FX_OK);
      g_assert_cmpuint (nk, ==, names->len);
      for (size_t i = 0; i < nk; i++)
        {
          g_assert_cmpstr (ks[i].name, ==, names->pdata[i]);
          g_assert_cmpstr (ks[i].kind, ==, "triton");
          g_assert_cmpstr (ks[i].device, ==, "cuda");
          g_assert_nonnull (ks[i].nodes);
          g_assert_nonnull (ks[i].aten);
          g_assert_nonnull (strstr (ks[i].code, "@triton.jit"));
          g_assert_cmpint (ks[i].call_order, >=, 0);
        }
      total += (int) nk;
    }
  g_assert_cmpint (total, >, 0);
  fx_arena_free (arena);
}

static void
test_toy_graphs_kernels (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/toy_graph_break-cuda/torch_trace", &stats);
  check_graphs (store, 9);
  check_kernels (store, "traces/toy_graph_break-cuda/torch_compile_debug", 9);
  /* 0/0's first kernel covers sum_1 and lt. */
  fx_arena *arena = fx_arena_new ();
  int64_t row;
  g_assert_cmpint (fx_store_find_compile (store, "0/0", &row, NULL), ==, FX_OK);
  fx_store_kernel *ks;
  size_t n;
  g_assert_cmpint (fx_store_list_kernels (store, row, arena, &ks, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (ks[0].name, ==, "triton_per_fused_lt_sum_0");
  g_assert_cmpstr (ks[0].nodes, ==, "sum_1, lt");
  g_assert_cmpstr (ks[0].aten, ==, "aten.sum, aten.lt");
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}

static void
test_idempotent (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/toy_graph_break-cuda/torch_trace", &stats);
  int64_t graphs = 0, compiles = 0, after = 0;
  g_assert_cmpint (fx_store_count (store, "graphs", &graphs, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_count (store, "compiles", &compiles, NULL), ==, FX_OK);
  g_autofree char *trace = fixture_path ("traces/toy_graph_break-cuda/torch_trace");
  g_assert_cmpint (fx_import_path (store, trace, NULL, NULL, &stats, NULL), ==, FX_OK);
  g_assert_true (stats.already_imported);
  g_assert_cmpint (fx_store_count (store, "graphs", &after, NULL), ==, FX_OK);
  g_assert_cmpint (after, ==, graphs);
  g_assert_cmpint (fx_store_count (store, "compiles", &after, NULL), ==, FX_OK);
  g_assert_cmpint (after, ==, compiles);
  /* A second input goes into the same workspace. */
  g_autofree char *mlp = fixture_path ("traces/mlp_module-cuda/torch_trace");
  g_assert_cmpint (fx_import_path (store, mlp, NULL, NULL, &stats, NULL), ==, FX_OK);
  g_assert_false (stats.already_imported);
  g_assert_cmpint (fx_store_count (store, "inputs", &after, NULL), ==, FX_OK);
  g_assert_cmpint (after, ==, 2);
  fx_store_close (store);
  remove_workspace (ws);
}

static void
test_mlp (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/mlp_module-cuda/torch_trace", &stats);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_GRAPH_PARSE], ==, 0);
  g_assert_cmpint (stats.kernels, >, 0);
  check_graphs (store, 2);
  /* Its guard trees hold dict managers (KeyValueManager, KeyManager, ValueManager) between the guards. */
  check_guards_vs_logs (store, "traces/mlp_module-cuda/torch_logs.txt", 2);
  int64_t ncomp = 0;
  g_assert_cmpint (fx_store_count (store, "compiles", &ncomp, NULL), ==, FX_OK);
  check_kernels (store, "traces/mlp_module-cuda/torch_compile_debug", (size_t) ncomp);
  /* The Dynamo graph keeps the module hierarchy in its parameter names and File: lines. */
  fx_arena *arena = fx_arena_new ();
  fx_store_graph_info *gi;
  size_t n;
  g_assert_cmpint (fx_store_list_graphs (store, 0, arena, &gi, &n, NULL), ==, FX_OK);
  fx_graph *g = NULL;
  g_assert_cmpint (fx_store_get_graph (store, gi[0].id, &g, NULL, NULL), ==, FX_OK);
  g_assert_cmpstr (gi[0].stage, ==, "dynamo");
  int with_stack = 0;
  fx_graph_foreach_node (g, node)
    if (node->meta.stack_trace && strstr (node->meta.stack_trace, "mlp_module-cuda/program.py"))
      with_stack++;
  g_assert_cmpint (with_stack, >, 0);
  fx_graph_free (g);
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}

static fx_status
import_text (const char *text, fx_import_stats *stats, int64_t *records_stored, fx_diag *diag)
{
  g_autofree char *ws = tmp_workspace ();
  fx_store *store = NULL;
  g_assert_cmpint (fx_store_open (ws, true, &store, NULL), ==, FX_OK);
  fx_status st = fx_import_torch_trace_data (store, "bad.log", text, strlen (text), NULL, NULL, stats, diag);
  fx_store_count (store, "inputs", records_stored, NULL);
  fx_store_close (store);
  remove_workspace (ws);
  return st;
}

#define PFX "V1121 16:41:15.747000 1273 torch/_dynamo/convert_frame.py:276] "

static void
test_bad_lines (void)
{
  const char *text =
    PFX "{\"str\": [\"/p/prog.py\", 1]}\n"
    "garbage line here\n"
    "\tpayload of the garbage line (skipped with it)\n"
    PFX "{\"dynamo_start\": {\"stack\": [{\"line\": 5, \"name\": \"f\", \"filename\": 1}]}, \"frame_id\": 0, "
    "\"frame_compile_id\": 0, \"attempt\": 0}\n"
    PFX "{\"dynamo_start\": {\"stack\": [{\"line\": 5, \"name\": \"g\", \"filename\": 77}]}, \"frame_id\": 1, "
    "\"frame_compile_id\": 0, \"attempt\": 0}\n"
    PFX "{\"dynamo_output_graph\": {}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, "
    "\"has_payload\": \"00000000000000000000000000000000\"}\n"
    "\tdef forward(self, x):\n"
    "\t    add = x + 1;  x = None\n"
    "\t    return (add,)\n"
    "\t\n"
    PFX "{\"dynamo_output_graph\": {, \"frame_id\": 0}\n"
    "\tdef forward(self, x):\n"
    PFX "{\"aot_inference_graph\": {}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n"
    "\tdef forward(self, x):\n"
    "\t    return (x +,)\n"
    PFX "{\"brand_new_kind\": {\"a\": 1}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n"
    "\n"
    "\torphan payload line\n"
    PFX "{\"artifact\": {\"name\": \"recompile_reasons\", \"encoding\": \"json\"}, \"frame_id\": 0, "
    "\"frame_compile_id\": 0, \"attempt\": 0}\n"
    "\t0/0: tensor 'a' size mismatch\n";
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  int64_t inputs = 0;
  g_assert_cmpint (import_text (text, &stats, &inputs, &diag), ==, FX_OK);
  g_assert_cmpint (inputs, ==, 1);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_LINE], ==, 1);
  g_assert_cmpint (stats.examples[FX_IMPORT_WARN_BAD_LINE][0].line, ==, 2);
  g_assert_cmpstr (stats.examples[FX_IMPORT_WARN_BAD_LINE][0].text, ==, "garbage line here");
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_UNKNOWN_STRING], ==, 1);
  g_assert_cmpint (stats.examples[FX_IMPORT_WARN_UNKNOWN_STRING][0].line, ==, 5);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_MD5_MISMATCH], ==, 1);
  g_assert_cmpint (stats.examples[FX_IMPORT_WARN_MD5_MISMATCH][0].line, ==, 6);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_JSON], ==, 1);
  g_assert_cmpint (stats.examples[FX_IMPORT_WARN_BAD_JSON][0].line, ==, 11);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_GRAPH_PARSE], ==, 1);
  g_assert_cmpint (stats.examples[FX_IMPORT_WARN_GRAPH_PARSE][0].line, ==, 13);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_UNKNOWN_KIND], ==, 1);
  g_assert_cmpstr (stats.examples[FX_IMPORT_WARN_UNKNOWN_KIND][0].text, ==, "brand_new_kind");
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_ORPHAN_PAYLOAD], ==, 1);
  g_assert_cmpint (stats.examples[FX_IMPORT_WARN_ORPHAN_PAYLOAD][0].line, ==, 18);
  /* Both graphs stored (the bad one as text only), the unknown kind kept as an artifact. */
  g_assert_cmpint (stats.graphs, ==, 2);
  g_assert_cmpint (stats.compiles, ==, 2);
  g_assert_cmpint (stats.artifacts, ==, 1);
}

static void
test_nothing_readable (void)
{
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  int64_t inputs = -1;
  g_assert_cmpint (import_text ("hello\nworld\n", &stats, &inputs, &diag), ==, FX_ERR_PARSE);
  g_assert_cmpint (inputs, ==, 0);
  g_assert_cmpstr (diag.file, ==, "bad.log");
  g_assert_cmpint (diag.line, ==, 1);
  g_assert_nonnull (strstr (diag.message, "no TORCH_TRACE record"));
  fx_diag_clear (&diag);
  g_assert_cmpint (import_text ("", &stats, &inputs, &diag), ==, FX_ERR_PARSE);
  fx_diag_clear (&diag);
  g_assert_cmpint (import_text (PFX "{not json\n", &stats, &inputs, &diag), ==, FX_ERR_PARSE);
  g_assert_cmpint (diag.line, ==, 1);
  /* Binary noise, truncated records, huge ids: no crash. */
  char noise[4096];
  for (size_t i = 0; i < sizeof noise - 1; i++)
    noise[i] = (char) (1 + (i * 7919) % 255);
  noise[sizeof noise - 1] = 0;
  g_assert_cmpint (import_text (noise, &stats, &inputs, NULL), ==, FX_ERR_PARSE);
  g_assert_cmpint (import_text (PFX "{\"str\": [\"x\", 99999999999]}\n" PFX "{\"frame_id\": 5}\n", &stats, &inputs,
                                NULL), ==, FX_ERR_PARSE);
  /* A missing file is an I/O error. */
  g_autofree char *ws = tmp_workspace ();
  fx_store *store = NULL;
  g_assert_cmpint (fx_store_open (ws, true, &store, NULL), ==, FX_OK);
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_import_path (store, "/nonexistent/trace.log", NULL, NULL, &stats, &diag), ==, FX_ERR_IO);
  fx_store_close (store);
  remove_workspace (ws);
}

static void
test_split_output_code (void)
{
  const char *code =
    "# kernel path: /tmp/a.py\n"
    "# Topologically Sorted Source Nodes: [add], Original ATen: [aten.add]\n"
    "triton_poi_fused_add_0 = async_compile.triton('triton_poi_fused_add_0', '''\n"
    "@triton.jit\n"
    "def triton_poi_fused_add_0(in_ptr0, out_ptr0):\n"
    "    pass\n"
    "''', device_str='cuda')\n"
    "cpp_fused_mul_1 = async_compile.cpp_pybinding(['float*'], '''\n"
    "extern \"C\" void kernel(float* x) {}\n"
    "''')\n"
    "def call(args):\n"
    "    cpp_fused_mul_1(buf0)\n"
    "    triton_poi_fused_add_0.run(arg0_1, buf0, 10, stream=stream0)\n";
  fx_arena *arena = fx_arena_new ();
  fx_kernel_def *defs;
  size_t n;
  g_assert_cmpint (fx_split_output_code (code, strlen (code), arena, &defs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (defs[0].name, ==, "triton_poi_fused_add_0");
  g_assert_cmpstr (defs[0].device, ==, "cuda");
  g_assert_cmpstr (defs[0].nodes, ==, "add");
  g_assert_cmpint (defs[0].call_order, ==, 1);
  g_assert_cmpstr (defs[0].code, ==, "@triton.jit\ndef triton_poi_fused_add_0(in_ptr0, out_ptr0):\n    pass\n");
  g_assert_cmpstr (defs[1].name, ==, "cpp_fused_mul_1");
  g_assert_cmpstr (defs[1].kind, ==, "cpp");
  g_assert_cmpstr (defs[1].device, ==, "cpu");
  g_assert_null (defs[1].nodes);
  g_assert_cmpint (defs[1].call_order, ==, 0);
  /* Unterminated kernel string: no crash, no overrun. */
  const char *cut = "k = async_compile.triton('k', '''\n@triton.jit\n";
  g_assert_cmpint (fx_split_output_code (cut, strlen (cut), arena, &defs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  fx_arena_free (arena);
}

/* TORCH_COMPILE_DEBUG: each model__N folder is compile -/N with its kernels and the fused groups of
   ir_post_fusion.txt (the FusedSchedulerNode lines and their snodes). */
static void
test_debug_dir (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/mlp_module-cuda/torch_compile_debug", &stats);
  g_assert_false (stats.already_imported);
  g_assert_cmpint (stats.compiles, ==, 2);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_GRAPH_PARSE], ==, 0);
  check_kernels (store, "traces/mlp_module-cuda/torch_compile_debug", 2);
  g_autofree char *dpath = fixture_path ("traces/mlp_module-cuda/torch_compile_debug");
  g_assert_cmpint (fx_import_path (store, dpath, NULL, NULL, &stats, NULL), ==, FX_OK);
  g_assert_true (stats.already_imported);

  fx_arena *arena = fx_arena_new ();
  int64_t row = 0;
  g_assert_cmpint (fx_store_find_compile (store, "-/0", &row, NULL), ==, FX_OK);
  fx_store_fusion_group *groups;
  size_t n;
  g_assert_cmpint (fx_store_list_fusion_groups (store, row, arena, &groups, &n, NULL), ==, FX_OK);
  /* The fixture's first run folder, model__0: count top-level nodes and fused ones with a regex. */
  g_autoptr (GDir) dir = g_dir_open (dpath, 0, NULL);
  const char *run = g_dir_read_name (dir);
  g_autofree char *ir = g_build_filename (dpath, run, "torchinductor", "model__0_inference_0.0", "ir_post_fusion.txt",
                                          NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (ir, &text, NULL, NULL));
  g_autoptr (GRegex) fused = g_regex_new ("^(\\w+): FusedSchedulerNode\\(", G_REGEX_MULTILINE, 0, NULL);
  g_autoptr (GRegex) all = g_regex_new ("^\\w+: \\w*SchedulerNode\\(", G_REGEX_MULTILINE, 0, NULL);
  g_autoptr (GRegex) members = g_regex_new ("\\.snodes\\[\\d+\\] =$", G_REGEX_MULTILINE, 0, NULL);
  int n_fused = 0, n_all = 0, n_members = 0;
  g_autoptr (GMatchInfo) mi = NULL;
  for (g_regex_match (fused, text, 0, &mi); g_match_info_matches (mi); g_match_info_next (mi, NULL))
    n_fused++;
  g_clear_pointer (&mi, g_match_info_unref);
  for (g_regex_match (all, text, 0, &mi); g_match_info_matches (mi); g_match_info_next (mi, NULL))
    n_all++;
  g_clear_pointer (&mi, g_match_info_unref);
  for (g_regex_match (members, text, 0, &mi); g_match_info_matches (mi); g_match_info_next (mi, NULL))
    n_members++;
  g_assert_cmpint (n_fused, >, 0);
  g_assert_cmpuint (n, ==, (size_t) (n_all - n_members));
  int seen_fused = 0;
  for (size_t i = 0; i < n; i++)
    if (strchr (groups[i].nodes, ','))
      {
        seen_fused++;
        g_assert_true (g_str_has_prefix (groups[i].text, groups[i].name));
      }
  g_assert_cmpint (seen_fused, ==, n_fused);
  g_assert_cmpstr (groups[0].name, ==, "op0_op1_op3");
  g_assert_cmpstr (groups[0].nodes, ==, "op0, op1, op3");
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}

/* A torch.export .pt2: the graph prints as the fixture's `print(ExportedProgram)` (small_module.export.txt; the
   archive was written from another checkout path), nn_module_stack and the signature are kept. */
static void
test_pt2 (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "export/small_module.pt2", &stats);
  g_assert_cmpint (stats.compiles, ==, 1);
  g_assert_cmpint (stats.graphs, ==, 1);
  fx_arena *arena = fx_arena_new ();
  fx_store_graph_info *gi;
  size_t n;
  g_assert_cmpint (fx_store_list_graphs (store, 0, arena, &gi, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (gi[0].stage, ==, "export");
  fx_graph *g = NULL;
  g_assert_cmpint (fx_store_get_graph (store, gi[0].id, &g, NULL, NULL), ==, FX_OK);
  fx_readable_opts opts = { 0 };
  fx_buf out;
  fx_buf_init (&out);
  fx_graph_print_readable (g, &opts, &out);

  g_autofree char *txt_path = fixture_path ("export/small_module.export.txt");
  g_autofree char *txt = NULL;
  g_assert_true (g_file_get_contents (txt_path, &txt, NULL, NULL));
  const char *start = strstr (txt, "    class GraphModule");
  const char *end = strstr (txt, "Graph signature:");
  g_assert_nonnull (start);
  g_assert_nonnull (end);
  g_autofree char *block = g_strndup (start, (gsize) (end - start));
  g_auto (GStrv) lines = fx_test_split_lines (block);
  GString *want = g_string_new ("");
  for (int i = 0; lines[i] && lines[i + 1]; i++)
    {
      const char *l = lines[i];
      g_string_append (want, strlen (l) >= 4 ? l + 4 : "");
      g_string_append_c (want, '\n');
    }
  /* The export.txt ends its graph with a blank line before "Graph signature". */
  while (want->len >= 2 && want->str[want->len - 1] == '\n' && want->str[want->len - 2] == '\n')
    g_string_truncate (want, want->len - 1);
  g_autofree char *got = g_strdup (out.data);
  g_autoptr (GRegex) path_re = g_regex_new ("/work/steering/anchors/gen_export.py", 0, 0, NULL);
  g_autofree char *got_fixed = g_regex_replace_literal (path_re, got, -1, 0, "/home/user/bench/gen_export.py", 0,
                                                        NULL);
  g_assert_cmpstr (got_fixed, ==, want->str);
  g_string_free (want, TRUE);
  fx_buf_free (&out);

  fx_node *linear = fx_graph_find_node (g, "linear");
  g_assert_nonnull (linear);
  g_assert_cmpuint (linear->meta.n_nn_module_stack, ==, 3);
  g_assert_cmpstr (linear->meta.nn_module_stack[2].path, ==, "sub.fc");
  g_assert_cmpstr (linear->meta.nn_module_stack[2].type, ==, "torch.nn.modules.linear.Linear");
  g_assert_cmpstr (fx_meta_get_extra (&linear->meta, "torch_fn"), ==, "linear_1;builtin_function_or_method.linear");
  fx_graph_free (g);

  fx_store_kv *arts;
  g_assert_cmpint (fx_store_list_artifacts (store, gi[0].compile_row, arena, &arts, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (arts[0].key, ==, "graph_signature");
  g_assert_nonnull (strstr (arts[0].value, "p_sub_fc_weight: PARAMETER target='sub.fc.weight'\n"));
  g_assert_nonnull (strstr (arts[0].value, "b_sub_scale: BUFFER target='sub.scale' persistent=True\n"));
  g_assert_nonnull (strstr (arts[0].value, "x: USER_INPUT\n"));
  g_assert_nonnull (strstr (arts[0].value, "softmax: USER_OUTPUT\n"));
  fx_arena_free (arena);

  /* Again: nothing added. A zip that is not an export, and a truncated archive: clear errors. */
  g_autofree char *pt2 = fixture_path ("export/small_module.pt2");
  g_assert_cmpint (fx_import_path (store, pt2, NULL, NULL, &stats, NULL), ==, FX_OK);
  g_assert_true (stats.already_imported);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (pt2, &data, &len, NULL));
  g_autofree char *cut = g_build_filename (g_get_tmp_dir (), "fxtest-cut.pt2", NULL);
  g_assert_true (g_file_set_contents (cut, data, (gssize) (len / 2), NULL));
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_import_path (store, cut, NULL, NULL, &stats, &diag), !=, FX_OK);
  g_assert_nonnull (strstr (diag.message, "fxtest-cut.pt2"));
  g_unlink (cut);
  fx_store_close (store);
  remove_workspace (ws);
}


/* The run folder of a TORCH_COMPILE_DEBUG fixture (its only run_* entry). */
static char *
debug_model_file (const char *debug_rel, const char *model, const char *file)
{
  g_autofree char *debug = fixture_path (debug_rel);
  g_autoptr (GDir) dir = g_dir_open (debug, 0, NULL);
  g_assert_nonnull (dir);
  const char *run = g_dir_read_name (dir);
  g_assert_nonnull (run);
  return g_build_filename (debug, run, "torchinductor", model, file, NULL);
}

static int
count_matches (const char *pattern, const char *text)
{
  g_autoptr (GRegex) re = g_regex_new (pattern, G_REGEX_MULTILINE, 0, NULL);
  g_autoptr (GMatchInfo) mi = NULL;
  int n = 0;
  for (g_regex_match (re, text, 0, &mi); g_match_info_matches (mi); g_match_info_next (mi, NULL))
    n++;
  return n;
}

/* ir_post_fusion.txt / ir_pre_fusion.txt of mlp_module-cuda model__0: every scheduler node in order, fused groups
   with their members, writes/reads from the dependency lists, output buffers with their layout lines. */
static void
test_ir_dump (void)
{
  g_autofree char *post_path = debug_model_file ("traces/mlp_module-cuda/torch_compile_debug",
                                                 "model__0_inference_0.0", "ir_post_fusion.txt");
  g_autofree char *post = NULL;
  g_assert_true (g_file_get_contents (post_path, &post, NULL, NULL));
  fx_arena *arena = fx_arena_new ();
  fx_store_ir_node *nodes;
  size_t n = 0;
  fx_ir_dump_issues issues;
  g_assert_cmpint (fx_parse_ir_dump (post, strlen (post), "post_fusion", arena, &nodes, &n, &issues, NULL), ==, FX_OK);
  g_assert_cmpint (issues.skipped_lines, ==, 0);
  /* One node per "NAME: ...SchedulerNode(...)" header line, in file order. */
  g_autoptr (GRegex) hdr = g_regex_new ("^(\\w+): (\\w*SchedulerNode)\\((.*)\\)$", G_REGEX_MULTILINE, 0, NULL);
  g_autoptr (GMatchInfo) mi = NULL;
  size_t i = 0;
  for (g_regex_match (hdr, post, 0, &mi); g_match_info_matches (mi); g_match_info_next (mi, NULL), i++)
    {
      g_assert_cmpuint (i, <, n);
      g_autofree char *name = g_match_info_fetch (mi, 1);
      g_autofree char *kind = g_match_info_fetch (mi, 2);
      g_autofree char *ir = g_match_info_fetch (mi, 3);
      g_assert_cmpstr (nodes[i].name, ==, name);
      g_assert_cmpstr (nodes[i].kind, ==, kind);
      g_assert_cmpstr (nodes[i].ir_type, ==, ir);
      g_assert_cmpstr (nodes[i].stage, ==, "post_fusion");
      g_assert_true (g_str_has_prefix (nodes[i].text, name));
      /* Each node's writes are exactly the buffers named by its "NAME.writes = ..." value. */
      g_autofree char *wpat = g_strdup_printf ("^%s\\.writes = ", name);
      g_assert_cmpint (count_matches (wpat, post), ==, 1);
      g_assert_nonnull (nodes[i].writes);
      if (strcmp (kind, "FusedSchedulerNode") == 0)
        g_assert_nonnull (nodes[i].members);
    }
  g_assert_cmpuint (i, ==, n);
  g_assert_cmpint ((int) n, ==, count_matches ("^\\w+: \\w*SchedulerNode\\(", post));
  g_assert_cmpstr (nodes[0].name, ==, "op0_op1_op3");
  g_assert_cmpstr (nodes[0].members, ==, "op0, op1, op3");
  g_assert_null (nodes[0].fused_into);
  g_assert_cmpstr (nodes[0].writes, ==, "buf0, buf1, buf3");
  g_assert_cmpstr (nodes[0].reads, ==, "arg0_1, arg1_1, arg2_1");
  g_assert_null (nodes[0].unmet);
  g_assert_cmpstr (nodes[0].buffers, ==,
                   "buf0: ComputedBuffer FixedLayout('cuda:0', torch.float32, size=[32, 1], stride=[1, 32])\n"
                   "buf1: ComputedBuffer FixedLayout('cuda:0', torch.float32, size=[32, 1], stride=[1, 32])\n"
                   "buf3: ComputedBuffer FixedLayout('cuda:0', torch.float32, size=[32, 256], stride=[256, 1])");
  g_assert_cmpstr (nodes[1].name, ==, "op0");
  g_assert_cmpstr (nodes[1].fused_into, ==, "op0_op1_op3");
  g_assert_cmpstr (nodes[1].device, ==, "cuda:0");
  g_assert_cmpstr (nodes[1].iteration, ==, "(32, 256)");
  g_assert_cmpstr (nodes[1].sizes, ==, "((32,), (256,))");
  g_assert_cmpstr (nodes[3].name, ==, "op3");
  g_assert_cmpstr (nodes[3].unmet, ==, "buf0, buf1");
  g_assert_cmpstr (nodes[3].reads, ==, "buf0, buf1, arg0_1, arg1_1, arg2_1");
  g_assert_true (g_str_has_suffix (nodes[3].text, "        return store"));
  g_assert_cmpstr (nodes[4].name, ==, "op4");
  g_assert_cmpstr (nodes[4].kind, ==, "ExternKernelSchedulerNode");
  g_assert_cmpstr (nodes[4].extern_kernel, ==, "extern_kernels.mm");
  g_assert_cmpstr (nodes[4].writes, ==, "buf4");
  g_assert_cmpstr (nodes[4].reads, ==, "buf3, arg3_1");
  /* The fused node's text holds its members; a member's text stops before the next "X.snodes[i] =". */
  g_assert_nonnull (strstr (nodes[0].text, "\nop3: SchedulerNode(ComputedBuffer)\n"));
  g_assert_null (strstr (nodes[1].text, "snodes[1]"));

  /* Pre-fusion: the same nodes unfused, one per header. */
  g_autofree char *pre_path = debug_model_file ("traces/mlp_module-cuda/torch_compile_debug",
                                                "model__0_inference_0.0", "ir_pre_fusion.txt");
  g_autofree char *pre = NULL;
  g_assert_true (g_file_get_contents (pre_path, &pre, NULL, NULL));
  g_assert_cmpint (fx_parse_ir_dump (pre, strlen (pre), "pre_fusion", arena, &nodes, &n, &issues, NULL), ==, FX_OK);
  g_assert_cmpint ((int) n, ==, count_matches ("^\\w+: \\w*SchedulerNode\\(", pre));
  for (size_t k = 0; k < n; k++)
    {
      g_assert_null (nodes[k].fused_into);
      g_assert_cmpstr (nodes[k].kind, !=, "FusedSchedulerNode");
    }

  /* Damaged input: text before the first node is counted with its line; a cut file keeps the nodes before the
     cut; garbage and binary bytes parse to nothing, without a crash. */
  g_autofree char *bad = g_strconcat ("garbage first\n\nmore garbage\n", post, NULL);
  g_assert_cmpint (fx_parse_ir_dump (bad, strlen (bad), "post_fusion", arena, &nodes, &n, &issues, NULL), ==, FX_OK);
  g_assert_cmpint (issues.skipped_lines, ==, 2);
  g_assert_cmpint (issues.first_line, ==, 1);
  g_assert_cmpstr (issues.first_text, ==, "garbage first");
  g_assert_cmpstr (nodes[0].name, ==, "op0_op1_op3");
  size_t cut = strlen (post) / 2;
  g_assert_cmpint (fx_parse_ir_dump (post, cut, "post_fusion", arena, &nodes, &n, &issues, NULL), ==, FX_OK);
  g_assert_cmpuint (n, >, 0);
  g_assert_cmpint ((int) n, <=, count_matches ("^\\w+: \\w*SchedulerNode\\(", post));
  char noise[2048];
  for (size_t k = 0; k < sizeof noise; k++)
    noise[k] = (char) (k * 131 % 256);
  g_assert_cmpint (fx_parse_ir_dump (noise, sizeof noise, "post_fusion", arena, &nodes, &n, &issues, NULL), ==, FX_OK);
  /* Trailing blanks trimmed by an editor: "X.writes =" still takes its value from the next lines. */
  g_autoptr (GRegex) trail = g_regex_new (" +$", G_REGEX_MULTILINE, 0, NULL);
  g_autofree char *trimmed = g_regex_replace_literal (trail, post, -1, 0, "", 0, NULL);
  g_assert_cmpint (fx_parse_ir_dump (trimmed, strlen (trimmed), "post_fusion", arena, &nodes, &n, &issues, NULL), ==,
                   FX_OK);
  g_assert_cmpstr (nodes[0].writes, ==, "buf0, buf1, buf3");
  g_assert_cmpstr (nodes[0].reads, ==, "arg0_1, arg1_1, arg2_1");
  g_assert_cmpstr (nodes[0].members, ==, "op0, op1, op3");
  const char *odd = "x: SchedulerNode(\nx.writes = [MemoryDep('unterminated\nop9: SchedulerNode(A)\nop9.outputs = [\n";
  g_assert_cmpint (fx_parse_ir_dump (odd, strlen (odd), "post_fusion", arena, &nodes, &n, &issues, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (nodes[0].name, ==, "op9");
  fx_arena_free (arena);
}

/* The trace compile whose inductor_output_code equals the folder's output_code.py (byte for byte, as the fixture's
   files are) for each model__N folder. */
static void
check_links (fx_store *store, const char *debug_rel, size_t n_models)
{
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
  size_t linked = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (cs[i].cid.frame_id >= 0)
        continue;
      g_autofree char *code_path = debug_model_file (debug_rel, cs[i].function, "output_code.py");
      g_autofree char *code = NULL;
      g_assert_true (g_file_get_contents (code_path, &code, NULL, NULL));
      g_assert_nonnull (cs[i].linked);
      int64_t trow = 0;
      g_assert_cmpint (fx_store_find_compile (store, cs[i].linked, &trow, NULL), ==, FX_OK);
      fx_store_kv *arts;
      size_t na;
      g_assert_cmpint (fx_store_list_artifacts (store, trow, arena, &arts, &na, NULL), ==, FX_OK);
      gboolean same = FALSE;
      for (size_t k = 0; k < na; k++)
        if (strcmp (arts[k].key, "inductor_output_code") == 0)
          same = strcmp (arts[k].value, code) == 0;
      g_assert_true (same);
      /* ... and the trace compile names the folder back. */
      for (size_t k = 0; k < n; k++)
        if (cs[k].id == trow)
          g_assert_cmpstr (cs[k].linked, ==, cs[i].function);
      /* The trace compile shows the folder's fusion groups and scheduler nodes. */
      fx_store_fusion_group *g1, *g2;
      size_t n1, n2;
      g_assert_cmpint (fx_store_list_fusion_groups (store, trow, arena, &g1, &n1, NULL), ==, FX_OK);
      g_assert_cmpint (fx_store_list_fusion_groups (store, cs[i].id, arena, &g2, &n2, NULL), ==, FX_OK);
      g_assert_cmpuint (n1, ==, n2);
      g_assert_cmpuint (n1, >, 0);
      for (size_t k = 0; k < n1; k++)
        g_assert_cmpstr (g1[k].name, ==, g2[k].name);
      fx_store_ir_node *nodes;
      g_assert_cmpint (fx_store_list_ir_nodes (store, trow, "pre_fusion", arena, &nodes, &n1, NULL), ==, FX_OK);
      g_assert_cmpuint (n1, >, 0);
      linked++;
    }
  g_assert_cmpuint (linked, ==, n_models);
  fx_arena_free (arena);
}

/* A TORCH_COMPILE_DEBUG folder imported beside its TORCH_TRACE is linked compile by compile, in either order. */
static void
test_link_debug_trace (void)
{
  static const char *const order[2][2] = {
    { "traces/toy_graph_break-cuda/torch_trace", "traces/toy_graph_break-cuda/torch_compile_debug" },
    { "traces/toy_graph_break-cuda/torch_compile_debug", "traces/toy_graph_break-cuda/torch_trace" },
  };
  for (int o = 0; o < 2; o++)
    {
      g_autofree char *ws = tmp_workspace ();
      fx_import_stats stats;
      fx_store *store = import_fixture (ws, order[o][0], &stats);
      g_assert_cmpint (stats.links, ==, 0);
      g_autofree char *second = fixture_path (order[o][1]);
      g_assert_cmpint (fx_import_path (store, second, NULL, NULL, &stats, NULL), ==, FX_OK);
      g_assert_cmpint (stats.links, ==, 9);
      int64_t links = 0;
      g_assert_cmpint (fx_store_count (store, "compile_links", &links, NULL), ==, FX_OK);
      g_assert_cmpint (links, ==, 9);
      check_links (store, "traces/toy_graph_break-cuda/torch_compile_debug", 9);
      /* model__3 is the second compile of frame 0 (compiles run 0/0, 1/0, 2/0, 0/1, ...). */
      int64_t row = 0;
      g_assert_cmpint (fx_store_find_compile (store, "-/3", &row, NULL), ==, FX_OK);
      fx_arena *arena = fx_arena_new ();
      fx_store_compile *cs;
      size_t n;
      g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
      for (size_t i = 0; i < n; i++)
        if (cs[i].id == row)
          g_assert_cmpstr (cs[i].linked, ==, "0/1");
      fx_arena_free (arena);
      fx_store_close (store);
      remove_workspace (ws);
    }
}

/* mlp_module-cuda: the provenance mappings of the trace give each kernel its post-grad and pre-grad nodes; the
   debug folder's copy, linked, is not listed twice. */
static void
test_provenance (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/mlp_module-cuda/torch_trace", &stats);
  g_autofree char *dbg = fixture_path ("traces/mlp_module-cuda/torch_compile_debug");
  fx_import_stats dstats;
  g_assert_cmpint (fx_import_path (store, dbg, NULL, NULL, &dstats, NULL), ==, FX_OK);
  g_assert_cmpint (dstats.links, ==, 2);
  g_assert_cmpint (dstats.provenance, >, 0);
  g_autofree char *json_path = debug_model_file ("traces/mlp_module-cuda/torch_compile_debug",
                                                 "model__0_inference_0.0",
                                                 "inductor_provenance_tracking_node_mappings.json");
  g_autofree char *json = NULL;
  g_assert_true (g_file_get_contents (json_path, &json, NULL, NULL));
  const char *c2p = strstr (json, "\"cppCodeToPost\": {");
  g_assert_nonnull (c2p);
  g_autofree char *c2p_obj = g_strndup (c2p, (gsize) (strchr (c2p, '}') - c2p));
  int entries = count_matches ("\"[\\w.]+:\\d+\": \\[", c2p_obj);
  g_assert_cmpint (entries, >, 5);

  fx_arena *arena = fx_arena_new ();
  int64_t row = 0;
  g_assert_cmpint (fx_store_find_compile (store, "0/0", &row, NULL), ==, FX_OK);
  fx_store_provenance *p;
  size_t n;
  g_assert_cmpint (fx_store_list_provenance (store, row, arena, &p, &n, NULL), ==, FX_OK);
  g_assert_cmpint ((int) n, ==, entries);
  g_assert_cmpstr (p[0].kernel, ==, "triton_per_fused_native_layer_norm_0");
  g_assert_cmpint (p[0].handle, ==, 1);
  g_assert_cmpstr (p[0].post_nodes, ==, "var_mean, add_1, mul_1, mul, sub, rsqrt, add");
  g_assert_cmpstr (p[0].pre_nodes, ==, "layer_norm");
  g_assert_cmpstr (p[1].kernel, ==, "extern_kernels.mm");
  g_assert_cmpint (p[1].handle, ==, 2);
  g_assert_cmpstr (p[1].post_nodes, ==, "mm_default_3");
  g_assert_cmpstr (p[1].pre_nodes, ==, "linear");
  /* The debug compile holds the same mapping from its .json file. */
  int64_t drow = 0;
  fx_store_provenance *dp;
  size_t dn;
  g_assert_cmpint (fx_store_find_compile (store, "-/0", &drow, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_list_provenance (store, drow, arena, &dp, &dn, NULL), ==, FX_OK);
  g_assert_cmpuint (dn, ==, n);
  for (size_t i = 0; i < n; i++)
    {
      g_assert_cmpstr (dp[i].kernel, ==, p[i].kernel);
      g_assert_cmpstr (dp[i].pre_nodes, ==, p[i].pre_nodes);
    }
  /* Each fusion group after fusion maps to the call() launch that computes it, in launch order, each launch once,
     with its origins (post-grad nodes) and pre-grad nodes from the provenance of that launch. */
  fx_store_ir_node *nodes;
  g_assert_cmpint (fx_store_list_ir_nodes (store, row, "post_fusion", arena, &nodes, &n, NULL), ==, FX_OK);
  g_autofree char *code_path = debug_model_file ("traces/mlp_module-cuda/torch_compile_debug",
                                                 "model__0_inference_0.0", "output_code.py");
  g_autofree char *code = NULL;
  g_assert_true (g_file_get_contents (code_path, &code, NULL, NULL));
  fx_kernel_launch *launches;
  size_t nl;
  g_assert_cmpint (fx_output_code_launches (code, strlen (code), arena, &launches, &nl, NULL), ==, FX_OK);
  g_assert_cmpint ((int) nl, ==, count_matches ("^ +(\\w+\\.run|extern_kernels\\.\\w+)\\(", code));
  size_t top = 0;
  for (size_t i = 0; i < n; i++)
    {
      g_assert_nonnull (nodes[i].kernel);
      if (nodes[i].fused_into)
        continue;
      g_assert_cmpuint (top, <, nl);
      g_assert_cmpstr (nodes[i].kernel, ==, launches[top].kernel);
      g_assert_cmpint (nodes[i].handle, ==, launches[top].handle);
      g_assert_cmpint (nodes[i].handle, >, 0);
      g_assert_nonnull (nodes[i].post_nodes);
      g_assert_nonnull (nodes[i].pre_nodes);
      top++;
    }
  g_assert_cmpuint (top, ==, nl);
  g_assert_cmpstr (nodes[0].name, ==, "op0_op1_op3");
  g_assert_cmpstr (nodes[0].kernel, ==, "triton_per_fused_native_layer_norm_0");
  g_assert_cmpstr (nodes[0].post_nodes, ==, "var_mean, add_1, mul_1, mul, sub, rsqrt, add");
  g_assert_cmpstr (nodes[0].pre_nodes, ==, "layer_norm");
  g_assert_cmpstr (nodes[1].kernel, ==, "triton_per_fused_native_layer_norm_0");

  /* A kernel launched twice lists the pre-grad nodes of both launches once. */
  fx_store_kernel *ks;
  g_assert_cmpint (fx_store_list_kernels (store, row, arena, &ks, &n, NULL), ==, FX_OK);
  gboolean saw = FALSE;
  for (size_t i = 0; i < n; i++)
    if (strcmp (ks[i].name, "triton_poi_fused_addmm_gelu_1") == 0)
      {
        saw = TRUE;
        g_assert_cmpstr (ks[i].pre_nodes, ==, "gelu, linear, gelu_1, linear_2");
      }
    else if (strcmp (ks[i].name, "triton_per_fused_native_layer_norm_0") == 0)
      g_assert_cmpstr (ks[i].pre_nodes, ==, "layer_norm");
  g_assert_true (saw);
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}

#define CID "\"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0"

/* Records the fixtures do not hold, as PyTorch writes them: symbolic_shape_specialization, guard_added(_fast),
   dynamo_error, fx_graph_runnable, a damaged provenance mapping. */
static void
test_shape_error_runnable_records (void)
{
  g_autofree char *runnable_path = fixture_path ("traces/mlp_module-cuda/torch_compile_debug");
  g_autofree char *rpath = debug_model_file ("traces/mlp_module-cuda/torch_compile_debug", "model__0_inference_0.0",
                                             "fx_graph_runnable.py");
  g_autofree char *runnable = NULL;
  g_assert_true (g_file_get_contents (rpath, &runnable, NULL, NULL));
  GString *text = g_string_new (PFX "{\"str\": [\"/p/prog.py\", 1]}\n");
  g_string_append (text, PFX "{\"dynamo_start\": {\"stack\": [{\"line\": 5, \"name\": \"f\", \"filename\": 1}]}, " CID "}\n");
  g_string_append (text, PFX "{\"symbolic_shape_specialization\": {\"symbol\": \"s0\", \"sources\": [\"L['x'].size()[0]\","
                   " \"L['y'].size()[0]\"], \"value\": \"4\", \"reason\": \"Eq(s0, 4)\", \"stack\": [{\"line\": 9, "
                   "\"name\": \"g\", \"filename\": 1, \"loc\": \"y = x.view(4)\"}], \"user_stack\": [{\"line\": 7, "
                   "\"name\": \"f\", \"filename\": 1, \"loc\": \"return x.view(4)\"}]}, " CID "}\n");
  g_string_append (text, PFX "{\"guard_added\": {\"expr\": \"Eq(s0, 4)\", \"stack\": [], \"user_stack\": [{\"line\": 7,"
                   " \"name\": \"f\", \"filename\": 1}]}, " CID "}\n");
  g_string_append (text, PFX "{\"guard_added_fast\": {\"expr\": \"s52 <= 2147483647\", \"user_stack\": [], \"stack\": []}}\n");
  g_string_append (text, PFX "{\"guard_added\": {\"stack\": []}, " CID "}\n");
  g_string_append (text, PFX "{\"artifact\": {\"name\": \"dynamo_error\", \"encoding\": \"string\"}, " CID "}\n"
                   "\tTraceback (most recent call last):\n"
                   "\t  File \"/p/prog.py\", line 7, in f\n"
                   "\t    return x.item()\n"
                   "\ttorch._dynamo.exc.Unsupported: Tensor.item\n"
                   "\t  Explanation: capture_scalar_outputs is off\n");
  g_string_append (text, PFX "{\"artifact\": {\"name\": \"fx_graph_runnable\", \"encoding\": \"string\"}, " CID "}\n");
  g_auto (GStrv) lines = fx_test_split_lines (runnable);
  for (int i = 0; lines[i]; i++)
    g_string_append_printf (text, "\t%s\n", lines[i]);
  g_string_append (text, PFX "{\"artifact\": {\"name\": \"inductor_provenance_tracking_node_mappings\", \"encoding\": "
                   "\"json\"}, " CID "}\n\t{\"cppCodeToPost\": [\n");

  g_autofree char *ws = tmp_workspace ();
  fx_store *store = NULL;
  g_assert_cmpint (fx_store_open (ws, true, &store, NULL), ==, FX_OK);
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_import_torch_trace_data (store, "shapes.log", text->str, text->len, NULL, NULL, &stats, &diag),
                   ==, FX_OK);
  g_string_free (text, TRUE);
  /* The guard_added without expr and the damaged mapping are counted with their lines, nothing else. */
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_RECORD], ==, 2);
  g_assert_cmpint (stats.examples[FX_IMPORT_WARN_BAD_RECORD][0].line, ==, 6);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_UNKNOWN_KIND], ==, 0);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_GRAPH_PARSE], ==, 0);

  fx_arena *arena = fx_arena_new ();
  int64_t row = 0;
  g_assert_cmpint (fx_store_find_compile (store, "0/0", &row, NULL), ==, FX_OK);
  fx_store_shape_event *ev;
  size_t n;
  g_assert_cmpint (fx_store_list_shape_events (store, row, arena, &ev, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpstr (ev[0].kind, ==, "specialization");
  g_assert_cmpstr (ev[0].symbol, ==, "s0");
  g_assert_cmpstr (ev[0].sources, ==, "L['x'].size()[0], L['y'].size()[0]");
  g_assert_cmpstr (ev[0].value, ==, "4");
  g_assert_cmpstr (ev[0].reason, ==, "Eq(s0, 4)");
  g_assert_cmpstr (ev[0].user_stack, ==, "  File \"/p/prog.py\", line 7, in f\n    return x.view(4)\n");
  g_assert_cmpstr (ev[0].stack, ==, "  File \"/p/prog.py\", line 9, in g\n    y = x.view(4)\n");
  g_assert_cmpstr (ev[1].kind, ==, "guard_added");
  g_assert_cmpstr (ev[1].expr, ==, "Eq(s0, 4)");
  g_assert_cmpstr (ev[1].user_stack, ==, "  File \"/p/prog.py\", line 7, in f\n");
  g_assert_null (ev[1].stack);
  /* guard_added_fast outside a compile belongs to the input. */
  g_assert_cmpint (fx_store_list_shape_events (store, 0, arena, &ev, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (ev[0].kind, ==, "guard_added_fast");
  g_assert_cmpstr (ev[0].expr, ==, "s52 <= 2147483647");

  /* dynamo_error fails the compile with the exception's class and message. */
  fx_store_compile *cs;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (cs[0].status, ==, "failed");
  g_assert_cmpstr (cs[0].fail_type, ==, "Unsupported");
  g_assert_cmpstr (cs[0].fail_reason, ==, "Tensor.item\n  Explanation: capture_scalar_outputs is off");

  /* fx_graph_runnable: the "runnable" stage, parsed like fxwb print parses the file. */
  fx_store_graph_info *gi;
  g_assert_cmpint (fx_store_list_graphs (store, row, arena, &gi, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (gi[0].stage, ==, "runnable");
  g_assert_true (gi[0].parsed);
  fx_graph *stored = NULL, *direct = NULL;
  g_assert_cmpint (fx_store_get_graph (store, gi[0].id, &stored, NULL, NULL), ==, FX_OK);
  g_assert_cmpint (fx_parse_fx_file (rpath, &direct, NULL), ==, FX_OK);
  g_assert_cmpuint (stored->n_nodes, ==, direct->n_nodes);
  g_assert_cmpuint (stored->n_nodes, >, 10);
  fx_graph_free (stored);
  fx_graph_free (direct);
  /* The damaged mapping is kept raw. */
  fx_store_kv *arts;
  g_assert_cmpint (fx_store_list_artifacts (store, row, arena, &arts, &n, NULL), ==, FX_OK);
  gboolean kept = FALSE;
  for (size_t i = 0; i < n; i++)
    kept |= strcmp (arts[i].key, "inductor_provenance_tracking_node_mappings") == 0
            && strcmp (arts[i].value, "{\"cppCodeToPost\": [") == 0;
  g_assert_true (kept);
  (void) runnable_path;
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}


/* TORCH_LOGS text of the same run as the toy trace: the same guards, recompile reasons and graph breaks per compile
   as the trace gives. */
static void
test_torch_logs_codes (void)
{
  g_autofree char *ws1 = tmp_workspace ();
  g_autofree char *ws2 = tmp_workspace ();
  fx_import_stats stats;
  fx_store *trace = import_fixture (ws1, "traces/toy_graph_break-cuda/torch_trace", &stats);
  fx_store *logs = import_fixture (ws2, "traces/toy_graph_break-cuda/torch_logs.txt", &stats);
  g_assert_cmpint (stats.compiles, ==, 9);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_LINE], ==, 0);
  fx_arena *arena = fx_arena_new ();
  fx_store_input *in;
  size_t n;
  g_assert_cmpint (fx_store_list_inputs (logs, arena, &in, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (in[0].kind, ==, "torch_logs");
  fx_store_compile *cs;
  g_assert_cmpint (fx_store_list_compiles (trace, arena, &cs, &n, NULL), ==, FX_OK);
  int total_guards = 0, total_failures = 0, total_breaks = 0;
  for (size_t i = 0; i < n; i++)
    {
      int64_t row = 0;
      g_assert_cmpint (fx_store_find_compile (logs, cs[i].compile_id, &row, NULL), ==, FX_OK);
      fx_store_guard *g1, *g2;
      size_t n1, n2;
      g_assert_cmpint (fx_store_list_guards (trace, cs[i].id, arena, &g1, &n1, NULL), ==, FX_OK);
      g_assert_cmpint (fx_store_list_guards (logs, row, arena, &g2, &n2, NULL), ==, FX_OK);
      g_assert_cmpuint (n1, ==, n2);
      total_guards += (int) n2;
      for (size_t k = 0; k < n1; k++)
        {
          g_assert_cmpstr (g1[k].kind, ==, g2[k].kind);
          g_assert_cmpstr (g1[k].source, ==, g2[k].source);
          g_assert_cmpstr (g1[k].code, ==, g2[k].code);
        }
      fx_store_guard_failure *f1, *f2;
      g_assert_cmpint (fx_store_list_guard_failures (trace, cs[i].id, arena, &f1, &n1, NULL), ==, FX_OK);
      g_assert_cmpint (fx_store_list_guard_failures (logs, row, arena, &f2, &n2, NULL), ==, FX_OK);
      g_assert_cmpuint (n1, ==, n2);
      for (size_t k = 0; k < n1; k++)
        {
          g_assert_cmpstr (f1[k].failed_compile, ==, f2[k].failed_compile);
          g_assert_cmpstr (f1[k].reason, ==, f2[k].reason);
        }
      fx_store_graph_break *b1, *b2;
      size_t nb1, nb2;
      g_assert_cmpint (fx_store_list_graph_breaks (trace, cs[i].id, arena, &b1, &nb1, NULL), ==, FX_OK);
      g_assert_cmpint (fx_store_list_graph_breaks (logs, row, arena, &b2, &nb2, NULL), ==, FX_OK);
      g_assert_cmpuint (nb1, ==, nb2);
      for (size_t k = 0; k < nb1; k++)
        {
          g_assert_cmpstr (b1[k].reason, ==, b2[k].reason);
          g_assert_cmpstr (b1[k].explanation, ==, b2[k].explanation);
        }
      total_failures += (int) n1;
      total_breaks += (int) nb1;
    }
  g_assert_cmpint (total_guards, >, 100);
  g_assert_cmpint (total_failures, ==, 12);
  g_assert_cmpint (total_breaks, ==, 4);
  fx_arena_free (arena);
  fx_store_close (trace);
  fx_store_close (logs);
  remove_workspace (ws1);
  remove_workspace (ws2);

  /* print() lines between log lines are counted with their line numbers; no log line at all is an error. */
  const char *mixed = "hello from print\n" PFX "[0/0] [__graph_breaks] Graph break in user code at /p.py:3\n"
                      PFX "[0/0] [__graph_breaks] Graph Break Reason: Data-dependent branching\n"
                      "tensor([1., 2.])\n" PFX "[__output_code] Output code written to: /tmp/x.py\n";
  g_autofree char *ws3 = tmp_workspace ();
  fx_store *store = NULL;
  g_assert_cmpint (fx_store_open (ws3, true, &store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_import_torch_logs_data (store, "mixed.txt", mixed, strlen (mixed), &stats, NULL), ==, FX_OK);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_LINE], ==, 2);
  g_assert_cmpint (stats.examples[FX_IMPORT_WARN_BAD_LINE][1].line, ==, 4);
  g_assert_cmpint (stats.records, ==, 1);
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_import_torch_logs_data (store, "none.txt", "a\nb\n", 4, &stats, &diag), ==, FX_ERR_PARSE);
  g_assert_cmpint (diag.line, ==, 1);
  int64_t inputs = 0;
  g_assert_cmpint (fx_store_count (store, "inputs", &inputs, NULL), ==, FX_OK);
  g_assert_cmpint (inputs, ==, 1);
  fx_store_close (store);
  remove_workspace (ws3);
}


/* A damaged TORCH_COMPILE_DEBUG folder beside an imported trace: garbage and binary IR dumps, cut output code, bad
   provenance JSON and a graph that does not parse are counted; the trace's rows stay; the intact folder links. */
static void
test_debug_dir_bad (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/toy_graph_break-cuda/torch_trace", &stats);
  int64_t graphs = 0, guards = 0, after = 0;
  g_assert_cmpint (fx_store_count (store, "graphs", &graphs, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_count (store, "guards", &guards, NULL), ==, FX_OK);

  g_autofree char *root = g_dir_make_tmp ("fxdebug-XXXXXX", NULL);
  g_autofree char *m0 = g_build_filename (root, "torchinductor", "model__0_inference_0.0", NULL);
  g_autofree char *m1 = g_build_filename (root, "torchinductor", "model__1_inference_1.1", NULL);
  g_assert_cmpint (g_mkdir_with_parents (m0, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (m1, 0700), ==, 0);
  g_autofree char *code0_path = debug_model_file ("traces/toy_graph_break-cuda/torch_compile_debug",
                                                  "model__0_inference_0.0", "output_code.py");
  g_autofree char *code0 = NULL;
  gsize code0_len = 0;
  g_assert_true (g_file_get_contents (code0_path, &code0, &code0_len, NULL));
  char binary[512];
  for (size_t i = 0; i < sizeof binary; i++)
    binary[i] = (char) (i * 37 % 256);
  struct
  {
    const char *dir, *name, *text;
    gssize len;
  } files[] = {
    { m0, "ir_post_fusion.txt", "garbage\n\x01\x02 more\nop0: SchedulerNode(ComputedBuffer)\nop0.writes = "
                                "[MemoryDep('buf0', c0, {c0: 4})]\n", -1 },
    { m0, "ir_pre_fusion.txt", binary, sizeof binary },
    { m0, "output_code.py", code0, (gssize) code0_len / 3 },
    { m0, "inductor_provenance_tracking_node_mappings.json", "{not json", -1 },
    { m0, "fx_graph_readable.py", "def forward(self, x):\n    return (x +,)\n", -1 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *f = g_build_filename (files[i].dir, files[i].name, NULL);
      g_assert_true (g_file_set_contents (f, files[i].text, files[i].len, NULL));
    }
  static const char *const intact[] = { "output_code.py", "ir_post_fusion.txt", "ir_pre_fusion.txt",
                                        "fx_graph_readable.py" };
  for (size_t i = 0; i < G_N_ELEMENTS (intact); i++)
    {
      g_autofree char *src = debug_model_file ("traces/toy_graph_break-cuda/torch_compile_debug",
                                               "model__1_inference_1.1", intact[i]);
      g_autofree char *data = NULL;
      gsize len = 0;
      g_assert_true (g_file_get_contents (src, &data, &len, NULL));
      g_autofree char *dst = g_build_filename (m1, intact[i], NULL);
      g_assert_true (g_file_set_contents (dst, data, (gssize) len, NULL));
    }
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_import_path (store, root, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_assert_cmpint (stats.compiles, ==, 2);
  /* 2 garbage lines of the post-fusion dump, and every non-blank line of the binary pre-fusion one. */
  int binary_lines = 0;
  for (size_t i = 0, start = 0; i <= sizeof binary; i++)
    if (i == sizeof binary || binary[i] == '\n')
      {
        gboolean blank = TRUE;
        for (size_t k = start; k < i; k++)
          blank &= binary[k] == ' ' || binary[k] == '\t' || binary[k] == '\r';
        binary_lines += !blank;
        start = i + 1;
      }
  g_assert_cmpint (binary_lines, >, 0);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_IR_DUMP], ==, 2 + binary_lines);
  /* The pre-fusion dump is read first: its first skipped line is the example, control bytes shown as '?'. */
  g_assert_cmpint (stats.examples[FX_IMPORT_WARN_IR_DUMP][0].line, ==, 1);
  g_assert_true (g_str_has_prefix (stats.examples[FX_IMPORT_WARN_IR_DUMP][0].text, "ir_pre_fusion.txt: ?%J"));
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_RECORD], ==, 1);
  g_assert_nonnull (strstr (stats.examples[FX_IMPORT_WARN_BAD_RECORD][0].text, "provenance"));
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_GRAPH_PARSE], ==, 1);
  /* The intact folder is linked to 1/0; the cut one matches nothing. */
  g_assert_cmpint (stats.links, ==, 1);
  int64_t row = 0;
  g_assert_cmpint (fx_store_find_compile (store, "1/0", &row, NULL), ==, FX_OK);
  fx_arena *arena = fx_arena_new ();
  fx_store_fusion_group *g;
  size_t n;
  g_assert_cmpint (fx_store_list_fusion_groups (store, row, arena, &g, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, >, 0);
  /* What the damaged folder still had: the one node after the garbage, with its write. */
  g_assert_cmpint (fx_store_find_compile (store, "-/0", &row, NULL), ==, FX_OK);
  fx_store_ir_node *nodes;
  g_assert_cmpint (fx_store_list_ir_nodes (store, row, "post_fusion", arena, &nodes, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (nodes[0].writes, ==, "buf0");
  fx_arena_free (arena);
  /* Nothing of the trace was lost. */
  g_assert_cmpint (fx_store_count (store, "guards", &after, NULL), ==, FX_OK);
  g_assert_cmpint (after, ==, guards);
  g_assert_cmpint (fx_store_count (store, "graphs", &after, NULL), ==, FX_OK);
  g_assert_cmpint (after, >=, graphs);
  fx_store_close (store);
  remove_workspace (ws);
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", root);
  g_assert_cmpint (system (cmd), ==, 0);
}

/* TORCH_LOGS text of the same run gives the same recompile reasons, guards and kernels per compile as the trace. */
static void
test_torch_logs (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/toy_graph_break-cuda/torch_logs.txt", &stats);
  g_assert_cmpint (stats.compiles, ==, 9);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_LINE], ==, 0);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_GRAPH_PARSE], ==, 0);
  g_autofree char *trace = fixture_path ("traces/toy_graph_break-cuda/torch_trace");
  fx_import_stats tstats;
  g_assert_cmpint (fx_import_path (store, trace, NULL, NULL, &tstats, NULL), ==, FX_OK);
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 18);
  /* The first input's 9 compiles, then the trace's, in the same id order. */
  for (size_t i = 0; i < 9; i++)
    {
      const fx_store_compile *l = &cs[i], *t = &cs[i + 9];
      g_assert_cmpstr (l->compile_id, ==, t->compile_id);
      g_assert_cmpstr (l->status, ==, t->status);
      g_assert_cmpint (l->n_guards, ==, t->n_guards);
      g_assert_cmpint (l->n_kernels, ==, t->n_kernels);
      g_assert_cmpint (l->n_breaks, ==, t->n_breaks);
      g_assert_cmpint (l->n_failures, ==, t->n_failures);
      if (t->n_failures)
        {
          g_assert_cmpstr (l->function, ==, t->function);
          g_assert_cmpint (l->line, ==, t->line);
        }
      fx_store_guard_failure *lf, *tf;
      size_t nl, nt;
      g_assert_cmpint (fx_store_list_guard_failures (store, l->id, arena, &lf, &nl, NULL), ==, FX_OK);
      g_assert_cmpint (fx_store_list_guard_failures (store, t->id, arena, &tf, &nt, NULL), ==, FX_OK);
      g_assert_cmpuint (nl, ==, nt);
      for (size_t k = 0; k < nl; k++)
        {
          g_assert_cmpstr (lf[k].failed_compile, ==, tf[k].failed_compile);
          g_assert_cmpstr (lf[k].reason, ==, tf[k].reason);
        }
      fx_store_guard *lg, *tg;
      g_assert_cmpint (fx_store_list_guards (store, l->id, arena, &lg, &nl, NULL), ==, FX_OK);
      g_assert_cmpint (fx_store_list_guards (store, t->id, arena, &tg, &nt, NULL), ==, FX_OK);
      for (size_t k = 0; k < nl; k++)
        {
          g_assert_cmpstr (lg[k].kind, ==, tg[k].kind);
          g_assert_cmpstr (lg[k].source, ==, tg[k].source);
        }
    }
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}

/* The streamed file import and the in-memory import read the same records; a line over fx_import_set_max_line is
   skipped with its line number (and its record), the rest imported, in both. */
static void
test_stream_and_long_lines (void)
{
  g_autofree char *trace = fixture_path ("traces/mlp_module-cuda/torch_trace/dedicated_log_torch_trace_f93v9gvu.log");
  g_autofree char *text = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (trace, &text, &len, NULL));
  fx_store *a = NULL, *b = NULL;
  g_assert_cmpint (fx_store_open (":memory:", true, &a, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_open (":memory:", true, &b, NULL), ==, FX_OK);
  fx_import_stats sf, sm;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_import_torch_trace (a, trace, NULL, NULL, &sf, &diag), ==, FX_OK);
  g_assert_cmpint (fx_import_torch_trace_data (b, trace, text, len, NULL, NULL, &sm, &diag), ==, FX_OK);
  g_assert_cmpint (sf.lines, ==, sm.lines);
  g_assert_cmpint (sf.records, ==, sm.records);
  g_assert_cmpint (sf.compiles, ==, sm.compiles);
  g_assert_cmpint (sf.graphs, ==, sm.graphs);
  g_assert_cmpint (sf.artifacts, ==, sm.artifacts);
  g_assert_cmpint (sf.records, >, 100);
  /* Importing the file again: same content, nothing added. */
  fx_import_stats again;
  g_assert_cmpint (fx_import_torch_trace (b, trace, NULL, NULL, &again, &diag), ==, FX_OK);
  g_assert_true (again.already_imported);
  fx_store_close (a);
  fx_store_close (b);

  /* A record inserted whose envelope is 1000 bytes over a limit just above the fixture's longest line: that line
     and its payload skipped, located at its line; every other record read. */
  size_t longest = 0;
  for (const char *p = text; *p;)
    {
      const char *e = strchr (p, '\n');
      size_t n = e ? (size_t) (e - p) : strlen (p);
      longest = MAX (longest, n);
      p += n + (e ? 1 : 0);
    }
  size_t limit = longest + 1;
  /* Before the second record's envelope (the first one's payload lines come first). */
  char *nl = strstr (text, "\nV");
  g_assert_nonnull (nl);
  int at_line = 2;
  for (const char *p = text; p < nl; p++)
    at_line += *p == '\n';
  GString *s = g_string_new_len (text, nl - text + 1);
  g_string_append (s, "V1121 16:43:02.000000 1700 torch/_logging/structured.py:28] {\"junk\": \"");
  for (size_t i = 0; i < limit + 1000; i++)
    g_string_append_c (s, 'x');
  g_string_append (s, "\"}\n\tpayload of the long record\n");
  g_string_append (s, nl + 1);
  g_autofree char *ws = tmp_workspace ();
  g_autofree char *dir = g_path_get_dirname (ws);
  g_autofree char *path = g_build_filename (dir, "long.log", NULL);
  g_assert_true (g_file_set_contents (path, s->str, (gssize) s->len, NULL));
  fx_import_set_max_line (limit);
  for (int mode = 0; mode < 2; mode++)
    {
      fx_store *st = NULL;
      g_assert_cmpint (fx_store_open (":memory:", true, &st, NULL), ==, FX_OK);
      fx_import_stats ls;
      fx_status rc = mode == 0 ? fx_import_torch_trace (st, path, NULL, NULL, &ls, &diag)
                               : fx_import_torch_trace_data (st, path, s->str, s->len, NULL, NULL, &ls, &diag);
      g_assert_cmpint (rc, ==, FX_OK);
      g_assert_cmpint (ls.warnings[FX_IMPORT_WARN_LONG_LINE], ==, 1);
      g_assert_cmpint (ls.examples[FX_IMPORT_WARN_LONG_LINE][0].line, ==, at_line);
      g_autofree char *said = g_strdup_printf ("over the limit of %zu", limit);
      g_assert_nonnull (strstr (ls.examples[FX_IMPORT_WARN_LONG_LINE][0].text, said));
      /* The payload line after it belonged to the skipped record: not an orphan. */
      g_assert_cmpint (ls.warnings[FX_IMPORT_WARN_ORPHAN_PAYLOAD], ==, sf.warnings[FX_IMPORT_WARN_ORPHAN_PAYLOAD]);
      g_assert_cmpint (ls.records, ==, sf.records);
      g_assert_cmpint (ls.lines, ==, sf.lines + 2);
      fx_store_close (st);
    }
  /* A payload line over the limit spoils its record: that one record is dropped, the next ones read. */
  GString *p2 = g_string_new_len (text, nl - text + 1);
  g_string_append (p2, "V1121 16:43:02.000000 1700 torch/_logging/structured.py:28] {\"artifact\": {\"name\": \"x\","
                       " \"encoding\": \"string\"}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n\t");
  for (size_t i = 0; i < limit + 1000; i++)
    g_string_append_c (p2, 'y');
  g_string_append (p2, "\n\tmore payload\n");
  g_string_append (p2, nl + 1);
  fx_store *st = NULL;
  g_assert_cmpint (fx_store_open (":memory:", true, &st, NULL), ==, FX_OK);
  fx_import_stats ps;
  g_assert_cmpint (fx_import_torch_trace_data (st, path, p2->str, p2->len, NULL, NULL, &ps, &diag), ==, FX_OK);
  g_assert_cmpint (ps.warnings[FX_IMPORT_WARN_LONG_LINE], ==, 1);
  g_assert_cmpint (ps.examples[FX_IMPORT_WARN_LONG_LINE][0].line, ==, at_line + 1);
  g_assert_nonnull (strstr (ps.examples[FX_IMPORT_WARN_LONG_LINE][0].text, "with its record"));
  g_assert_cmpint (ps.records, ==, sf.records);
  g_assert_cmpint (ps.artifacts, ==, sf.artifacts);
  fx_store_close (st);
  g_string_free (p2, TRUE);
  fx_import_set_max_line (0);
  g_string_free (s, TRUE);
  g_unlink (path);
  remove_workspace (ws);
}

/* The line-th line (1-based) of text (free it). */
static char *
text_line (const char *text, int line)
{
  g_auto (GStrv) lines = fx_test_split_lines (text);
  g_assert_cmpint (line, >, 0);
  g_assert_cmpuint ((guint) line, <=, g_strv_length (lines));
  return g_strdup (lines[line - 1]);
}

/* fx_provenance_chain on a torch.compile trace (mlp_module-cuda: Triton kernels in inductor_output_code) and on
   AOTInductor's (aoti_provenance-cpu: C++ kernels in the graph_dump kernel code, launched from the wrapper; its
   records carry no compile id and belong to [-/-]). */
static void
test_provenance_chain (void)
{
  g_autofree char *ws = tmp_workspace ();
  fx_import_stats stats;
  fx_store *store = import_fixture (ws, "traces/mlp_module-cuda/torch_trace", &stats);
  fx_arena *arena = fx_arena_new ();
  int64_t row = 0;
  fx_provenance p;
  fx_diag diag;
  const char *code = NULL;

  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_find_compile (store, "0/0", &row, NULL), ==, FX_OK);
  g_assert_cmpint (fx_provenance_chain (store, row, "layer_norm", arena, &p, &diag), ==, FX_OK);
  g_assert_cmpint (p.side, ==, FX_PROV_PRE_GRAD);
  g_assert_cmpuint (p.n_pre, ==, 1);
  g_assert_cmpuint (p.n_post, >=, 7);
  g_assert_cmpuint (p.n_kernels, >=, 1);
  g_assert_cmpstr (p.kernels[0].name, ==, "triton_per_fused_native_layer_norm_0");
  g_assert_cmpint (p.kernels[0].handle, ==, 1);
  g_assert_cmpstr (p.kernels[0].launch_code, ==, "inductor_output_code");
  g_assert_cmpstr (p.kernels[0].def_code, ==, "inductor_output_code");
  g_assert_cmpint (fx_provenance_code (store, row, "inductor_output_code", arena, &code, &diag), ==, FX_OK);
  {
    g_autofree char *launch = text_line (code, p.kernels[0].launch_line);
    g_autofree char *def = text_line (code, p.kernels[0].def_line);

    g_assert_nonnull (strstr (launch, "triton_per_fused_native_layer_norm_0.run("));
    g_assert_true (g_str_has_prefix (def, "triton_per_fused_native_layer_norm_0 = async_compile.triton("));
  }
  /* the other ends: a post-grad node, a kernel by name and handle */
  g_assert_cmpint (fx_provenance_chain (store, row, "post_grad:var_mean", arena, &p, &diag), ==, FX_OK);
  g_assert_cmpstr (p.pre[0], ==, "layer_norm");
  g_assert_cmpint (fx_provenance_chain (store, row, "kernel:extern_kernels.mm:2", arena, &p, &diag), ==, FX_OK);
  g_assert_cmpuint (p.n_kernels, ==, 1);
  g_assert_cmpstr (p.post[0], ==, "mm_default_3");
  g_assert_cmpstr (p.pre[0], ==, "linear");
  g_assert_cmpint (fx_provenance_chain (store, row, "pre_grad:var_mean", arena, &p, &diag), ==, FX_ERR_NOT_FOUND);
  g_assert_nonnull (strstr (diag.message, "no pre-grad node 'var_mean'"));
  fx_store_close (store);
  remove_workspace (ws);

  g_free (ws);
  ws = tmp_workspace ();
  store = import_fixture (ws, "traces/aoti_provenance-cpu/torch_trace", &stats);
  g_assert_cmpint (stats.provenance, ==, 4);
  g_assert_cmpint (fx_store_find_compile (store, "-/-", &row, NULL), ==, FX_OK);
  {
    fx_provenance_map *map = NULL;

    g_assert_cmpint (fx_provenance_load (store, row, arena, &map, &diag), ==, FX_OK);
    g_assert_nonnull (map);
    g_assert_cmpint (fx_provenance_map_chain (map, "sum_1", arena, &p, &diag), ==, FX_OK);
    g_assert_cmpuint (p.n_kernels, ==, 1);
    g_assert_cmpstr (p.kernels[0].name, ==, "cpp_fused_mul_relu_sum_1");
    g_assert_cmpstr (p.kernels[0].def_code, ==, "inductor_aot_kernel_code");
    g_assert_cmpstr (p.kernels[0].launch_code, ==, "inductor_aot_wrapper_code");
    {
      g_autofree char *def = text_line (fx_provenance_map_code (map, "inductor_aot_kernel_code"), p.kernels[0].def_line);
      g_autofree char *launch = text_line (fx_provenance_map_code (map, "inductor_aot_wrapper_code"),
                                           p.kernels[0].launch_line);

      g_assert_true (g_str_has_prefix (def, "extern \"C\"  void  cpp_fused_mul_relu_sum_1("));
      g_assert_true (g_str_has_prefix (g_strstrip (launch), "cpp_fused_mul_relu_sum_1((float*)"));
    }
    g_assert_null (fx_provenance_map_code (map, "inductor_output_code"));
  }
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}

static char *
journal_mode (const char *ws)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_open_v2 (ws, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "PRAGMA journal_mode", -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  char *mode = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return mode;
}

static const char *
input_hash (fx_store *store, fx_arena *arena, size_t i)
{
  fx_store_input *inputs = NULL;
  size_t n = 0;
  g_assert_cmpint (fx_store_list_inputs (store, arena, &inputs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (i, <, n);
  return inputs[i].hash;
}

/* An input's identity is the md5 of its file, whether hashed before the import (an input of the same size is
   stored) or while it is read (none is): same-size files of other content are imported, a copy of one is not.
   A new workspace is imported on the rollback journal and left in WAL, after a failed import too. */
static void
test_identity (void)
{
  g_autofree char *ws = tmp_workspace ();
  g_autofree char *dir = g_path_get_dirname (ws);
  g_autofree char *src = fixture_path ("traces/toy_graph_break-cuda/torch_trace/dedicated_log_torch_trace_2txnzdhg.log");
  g_autofree char *text = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (src, &text, &len, NULL));
  g_autofree char *a = g_build_filename (dir, "a.log", NULL), *b = g_build_filename (dir, "b.log", NULL);
  g_autofree char *a2 = g_build_filename (dir, "a2.log", NULL), *c = g_build_filename (dir, "c.log", NULL);
  g_autofree char *bad = g_build_filename (dir, "bad.log", NULL);
  g_assert_true (g_file_set_contents (a, text, (gssize) len, NULL));
  g_assert_true (g_file_set_contents (a2, text, (gssize) len, NULL));
  /* b: as long as a, one payload character changed */
  g_autofree char *text_b = g_strdup (text);
  char *at = strstr (text_b, "toy_example");
  g_assert_nonnull (at);
  at[10] = 'a';
  g_assert_true (g_file_set_contents (b, text_b, (gssize) len, NULL));
  g_autofree char *text_c = g_strconcat (text, "\n", NULL);
  g_assert_true (g_file_set_contents (c, text_c, (gssize) len + 1, NULL));
  g_assert_true (g_file_set_contents (bad, "not a trace\n", -1, NULL));
  g_autofree char *md5_a = g_compute_checksum_for_data (G_CHECKSUM_MD5, (const guchar *) text, len);
  g_autofree char *md5_b = g_compute_checksum_for_data (G_CHECKSUM_MD5, (const guchar *) text_b, len);
  g_autofree char *md5_c = g_compute_checksum_for_data (G_CHECKSUM_MD5, (const guchar *) text_c, len + 1);

  fx_store *store = NULL;
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (ws, true, &store, &diag), ==, FX_OK);
  /* a failed import into the new workspace: an error, the file still a workspace in WAL, nothing left behind */
  g_assert_cmpint (fx_import_path (store, bad, NULL, NULL, &stats, &diag), ==, FX_ERR_PARSE);
  g_autofree char *mode = journal_mode (ws);
  g_assert_cmpstr (mode, ==, "wal");
  g_autofree char *journal = g_strconcat (ws, "-journal", NULL);
  g_assert_false (g_file_test (journal, G_FILE_TEST_EXISTS));

  fx_arena *arena = fx_arena_new ();
  g_assert_cmpint (fx_import_path (store, a, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_assert_false (stats.already_imported);
  g_assert_cmpstr (input_hash (store, arena, 0), ==, md5_a);
  g_free (mode);
  mode = journal_mode (ws);
  g_assert_cmpstr (mode, ==, "wal");
  g_assert_false (g_file_test (journal, G_FILE_TEST_EXISTS));
  /* same size, other content: hashed first, imported */
  g_assert_cmpint (fx_import_path (store, b, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_assert_false (stats.already_imported);
  g_assert_cmpstr (input_hash (store, arena, 1), ==, md5_b);
  /* a copy of a under another name: already imported */
  g_assert_cmpint (fx_import_path (store, a2, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_assert_true (stats.already_imported);
  /* another size: hashed while read */
  g_assert_cmpint (fx_import_path (store, c, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_assert_false (stats.already_imported);
  g_assert_cmpstr (input_hash (store, arena, 2), ==, md5_c);
  g_assert_cmpint (fx_import_path (store, c, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_assert_true (stats.already_imported);
  /* the same bytes from memory have the same identity */
  g_assert_cmpint (fx_import_torch_trace_data (store, "mem", text, len, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_assert_true (stats.already_imported);
  int64_t n = 0;
  g_assert_cmpint (fx_store_count (store, "inputs", &n, NULL), ==, FX_OK);
  g_assert_cmpint (n, ==, 3);
  fx_arena_free (arena);
  fx_store_close (store);
  const char *files[] = { a, a2, b, c, bad };
  for (size_t i = 0; i < G_N_ELEMENTS (files); i++)
    g_unlink (files[i]);
  remove_workspace (ws);
}

/* An exported_program record (torch.export's str(ExportedProgram), a payload as PyTorch writes it: md5 of the
   text, one tab-indented line each) gives the [-/-] compile an "export" graph that prints as the program's
   GraphModule block (the same as the .pt2 of that program), and keeps the whole text as an artifact. */
static void
test_exported_program (void)
{
  g_autofree char *txt_path = fixture_path ("export/small_module.export.txt");
  g_autofree char *txt = NULL;
  g_assert_true (g_file_get_contents (txt_path, &txt, NULL, NULL));
  g_autofree char *body = g_strdup (txt);
  g_strchomp (body);
  g_autofree char *md5 = g_compute_checksum_for_string (G_CHECKSUM_MD5, body, -1);
  GString *log = g_string_new ("V1124 15:51:18.400000 852 torch/export/_trace.py:1200] {\"exported_program\": {}, "
                               "\"has_payload\": \"");
  g_string_append_printf (log, "%s\"}\n", md5);
  g_auto (GStrv) lines = fx_test_split_lines (body);
  for (int i = 0; lines[i]; i++)
    g_string_append_printf (log, "\t%s\n", lines[i]);

  g_autofree char *ws = tmp_workspace ();
  fx_store *store = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (ws, true, &store, &diag), ==, FX_OK);
  fx_import_stats stats;
  g_assert_cmpint (fx_import_torch_trace_data (store, "export.log", log->str, log->len, NULL, NULL, &stats, &diag),
                   ==, FX_OK);
  g_string_free (log, TRUE);
  g_assert_cmpint (stats.graphs, ==, 1);
  for (int w = 0; w < FX_IMPORT_WARN_COUNT; w++)
    g_assert_cmpint (stats.warnings[w], ==, 0);   /* the md5 matches, the graph parses */
  int64_t row = 0;
  g_assert_cmpint (fx_store_find_compile (store, "-/-", &row, NULL), ==, FX_OK);
  fx_arena *arena = fx_arena_new ();
  fx_store_graph_info *gi;
  size_t n;
  g_assert_cmpint (fx_store_list_graphs (store, row, arena, &gi, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (gi[0].stage, ==, "export");
  fx_graph *g = NULL;
  g_assert_cmpint (fx_store_get_graph (store, gi[0].id, &g, NULL, NULL), ==, FX_OK);
  g_assert_nonnull (fx_graph_find_node (g, "linear"));
  g_assert_nonnull (fx_graph_find_node (g, "layer_norm"));
  fx_node *linear = fx_graph_find_node (g, "linear");
  g_assert_cmpuint (linear->meta.n_nn_module_stack, ==, 0);
  g_assert_nonnull (linear->meta.stack_trace);
  /* runnable: export's pre-dispatch ops (linear, layer_norm, softmax.int) are in the op table */
  fx_graph_resolve_ops (g);
  fx_value *inputs = NULL, *outs = NULL;
  size_t n_inputs = 0, n_outs = 0;
  g_assert_cmpint (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 7, NULL, arena, &inputs, &n_inputs, &diag), ==, FX_OK);
  if (fx_interp_run (g, inputs, n_inputs, NULL, arena, &outs, &n_outs, &diag) != FX_OK)
    g_error ("export graph: %s", diag.message);
  g_assert_cmpuint (n_outs, ==, 2);   /* softmax, sum */
  g_assert_cmpint (outs[0].kind, ==, FX_VALUE_TENSOR);
  g_assert_cmpint (outs[0].u.t->sizes[0], ==, 8);
  g_assert_cmpint (outs[0].u.t->sizes[1], ==, 4);
  double row_sum = 0;
  for (int j = 0; j < 4; j++)
    row_sum += fx_tensor_get_f64 (outs[0].u.t, j);   /* the program ends in a softmax over dim 1 */
  g_assert_cmpfloat (fabs (row_sum - 1.0), <, 1e-5);
  for (size_t i = 0; i < n_outs; i++)
    fx_value_clear (&outs[i]);
  for (size_t i = 0; i < n_inputs; i++)
    fx_value_clear (&inputs[i]);
  fx_graph_free (g);
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (ws);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace/toy/compiles", test_toy_compiles);
  g_test_add_func ("/trace/toy/recompiles-guards-breaks", test_toy_recompiles_and_guards);
  g_test_add_func ("/trace/toy/graphs-kernels", test_toy_graphs_kernels);
  g_test_add_func ("/trace/idempotent", test_idempotent);
  g_test_add_func ("/trace/identity", test_identity);
  g_test_add_func ("/trace/exported-program", test_exported_program);
  g_test_add_func ("/trace/mlp", test_mlp);
  g_test_add_func ("/trace/bad-lines", test_bad_lines);
  g_test_add_func ("/trace/nothing-readable", test_nothing_readable);
  g_test_add_func ("/trace/split-output-code", test_split_output_code);
  g_test_add_func ("/trace/debug-dir", test_debug_dir);
  g_test_add_func ("/trace/pt2", test_pt2);
  g_test_add_func ("/trace/ir-dump", test_ir_dump);
  g_test_add_func ("/trace/debug-dir-bad", test_debug_dir_bad);
  g_test_add_func ("/trace/torch-logs", test_torch_logs);
  g_test_add_func ("/trace/torch-logs-codes", test_torch_logs_codes);
  g_test_add_func ("/trace/link-debug-trace", test_link_debug_trace);
  g_test_add_func ("/trace/provenance", test_provenance);
  g_test_add_func ("/trace/provenance-chain", test_provenance_chain);
  g_test_add_func ("/trace/shape-error-runnable", test_shape_error_runnable_records);
  g_test_add_func ("/trace/stream-long-lines", test_stream_and_long_lines);
  return g_test_run ();
}
