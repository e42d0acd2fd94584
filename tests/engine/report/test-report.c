/* test-report.c: trace reports on the real PyTorch fixture traces (pages validated by python3's html.parser through
   check-report.py, content checked against the trace), a crafted hostile trace (every string escaped, bad lines
   listed with their line numbers), the JSON document against its schema, and the follow importer fed in pieces. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "fx/importers.h"
#include "fx/report.h"
#include "fx/store.h"

static int svg_calls;

static char *
fake_svg (const char *dot, size_t len, void *user_data)
{
  (void) user_data;
  svg_calls++;
  g_assert_true (len > 0 && g_str_has_prefix (dot, "digraph"));
  return g_strdup ("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"></svg>");
}

static char *
fixture_path (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  return g_build_filename (dir ? dir : "tests/fixtures", rel, NULL);
}

static char *
make_tmp (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("fxreport-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
rm_rf (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name (d)))
        {
          g_autofree char *full = g_build_filename (path, name, NULL);
          rm_rf (full);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

static fx_store *
open_store (const char *dir)
{
  g_autofree char *ws = g_build_filename (dir, "w.fxwb", NULL);
  fx_store *store = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (ws, true, &store, &diag), ==, FX_OK);
  return store;
}

/* Runs check-report.py; returns its stdout (the pages' decoded text) and asserts it found the report valid. */
static char *
check_report (const char *mode, const char *a, const char *b)
{
  const char *python = g_getenv ("FX_PYTHON");
  const char *script = g_getenv ("FX_REPORT_CHECK");
  g_assert_nonnull (script);
  const char *argv[] = { python ? python : "python3", script, mode, a, b, NULL };
  char *out = NULL, *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status,
                               &error));
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("check-report.py %s %s: %s", mode, a, err);
  g_free (err);
  return out;
}

/* The text of one page from check-report.py's output ("== NAME\n" blocks). */
static char *
page_text (const char *all, const char *name)
{
  g_autofree char *head = g_strdup_printf ("== %s\n", name);
  const char *p = strstr (all, head);
  g_assert_nonnull (p);
  p += strlen (head);
  const char *e = strstr (p, "\n== ");
  return g_strndup (p, e ? (size_t) (e - p) : strlen (p));
}

static void
write_report (fx_store *store, const char *dir, const fx_report_opts *opts, fx_report_stats *stats)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = fx_report_write_dir (store, dir, opts, stats, &diag);
  if (st != FX_OK)
    g_error ("report: %s", diag.message);
}

/* Every compile id, recompile reason and graph-break user line of the store shows on the index as PyTorch
   logged it, each compile has its page, and the page shows its graphs' readable code. */
static void
check_fixture (const char *rel, const char *const *literal)
{
  g_autofree char *tmp = make_tmp ();
  fx_store *store = open_store (tmp);
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_autofree char *trace = fixture_path (rel);
  g_assert_cmpint (fx_import_path (store, trace, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_autofree char *out = g_build_filename (tmp, "report", NULL);
  fx_report_opts opts = { .svg = fake_svg };
  fx_report_stats rs;
  svg_calls = 0;
  write_report (store, out, &opts, &rs);
  g_autofree char *text = check_report ("html", out, NULL);
  g_autofree char *index = page_text (text, "index.html");

  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs = NULL;
  size_t n = 0;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, &diag), ==, FX_OK);
  g_assert_cmpuint (n, >, 0);
  g_assert_cmpint (rs.compiles, ==, (gint64) n);
  g_assert_cmpint (rs.pages, ==, (gint64) n + 1);
  g_assert_cmpint (rs.graphs_drawn, >, 0);
  g_assert_cmpint (svg_calls, ==, rs.svg_files);
  for (size_t i = 0; i < n; i++)
    {
      g_autofree char *cid = g_strdup_printf ("[%s]", cs[i].compile_id);
      g_assert_nonnull (strstr (index, cid));
      g_autofree char *name = g_strdup_printf ("compile-%lld.html", (long long) cs[i].id);
      g_autofree char *page = page_text (text, name);
      g_assert_nonnull (strstr (page, cid));
      fx_store_guard_failure *f = NULL;
      size_t nf = 0;
      g_assert_cmpint (fx_store_list_guard_failures (store, cs[i].id, arena, &f, &nf, &diag), ==, FX_OK);
      for (size_t k = 0; k < nf; k++)
        {
          g_assert_nonnull (strstr (index, f[k].reason));
          g_assert_nonnull (strstr (page, f[k].reason));
        }
      fx_store_graph_break *b = NULL;
      size_t nb = 0;
      g_assert_cmpint (fx_store_list_graph_breaks (store, cs[i].id, arena, &b, &nb, &diag), ==, FX_OK);
      for (size_t k = 0; k < nb; k++)
        {
          g_assert_nonnull (strstr (index, b[k].reason));
          g_auto (GStrv) lines = g_strsplit (b[k].user_stack ? b[k].user_stack : "", "\n", -1);
          for (int l = 0; lines[l]; l++)
            g_assert_nonnull (strstr (index, lines[l]));
        }
      if (cs[i].n_graphs)
        g_assert_nonnull (strstr (page, "class GraphModule"));
    }
  /* Texts copied from the trace file itself. */
  for (int i = 0; literal[i]; i++)
    g_assert_nonnull (strstr (index, literal[i]));
  fx_arena_free (arena);
  fx_store_close (store);
  rm_rf (tmp);
}

/* The search of the pages (report.js over search-index.js), run by node outside a browser: a recompile reason
   finds the compiles that recompiled for it, a kernel name the compiles that made it. */
static void
test_search (void)
{
  const char *node = g_getenv ("FX_NODE");
  const char *script = g_getenv ("FX_REPORT_SEARCH");
  if (!node || !*node || !script)
    {
      g_test_skip ("no node to run the report's script");
      return;
    }
  g_autofree char *tmp = make_tmp ();
  fx_store *store = open_store (tmp);
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_autofree char *trace = fixture_path ("traces/toy_graph_break-cuda/torch_trace");
  g_assert_cmpint (fx_import_path (store, trace, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_autofree char *out = g_build_filename (tmp, "report", NULL);
  fx_report_opts opts = { 0 };
  write_report (store, out, &opts, NULL);
  const char *queries[][4] = {
    { "dtype mismatch", "0/3", "2/3", NULL },
    { "rank mismatch expected 1", "0/2", "2/2", NULL },
    { "triton_poi_fused_mul", "1/0", "2/3", NULL },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (queries); i++)
    {
      const char *argv[] = { node, script, out, queries[i][0], queries[i][1], queries[i][2], NULL };
      int status = 0;
      g_autofree char *err = NULL;
      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                                   &status, NULL));
      if (!g_spawn_check_wait_status (status, NULL))
        g_error ("check-search.js: %s", err);
    }
  fx_store_close (store);
  rm_rf (tmp);
}

static void
test_toy (void)
{
  const char *const literal[] = {
    "[0/0]", "[2/3]",
    "0/0: tensor 'a' size mismatch at index 0. expected 10, actual 16",
    "2/0: tensor 'b' size mismatch at index 0. expected 10, actual 16",
    "Data-dependent branching",
    "File \"/home/user/traces/toy_graph_break-cuda/program.py\", line 7, in toy_example",
    "if b.sum() < 0:",
    "Recompiling function toy_example in /home/user/traces/toy_graph_break-cuda/program.py:5",
    NULL,
  };
  check_fixture ("traces/toy_graph_break-cuda/torch_trace", literal);
}

static void
test_mlp (void)
{
  const char *const literal[] = { "[0/0]", "[0/1]", NULL };
  check_fixture ("traces/mlp_module-cuda/torch_trace", literal);
}

/* The TORCH_COMPILE_DEBUG folder of the same run next to the trace: fusion groups on the linked pages. */
static void
test_mlp_with_debug_dir (void)
{
  g_autofree char *tmp = make_tmp ();
  fx_store *store = open_store (tmp);
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_autofree char *trace = fixture_path ("traces/mlp_module-cuda/torch_trace");
  g_autofree char *debug = fixture_path ("traces/mlp_module-cuda/torch_compile_debug");
  g_assert_cmpint (fx_import_path (store, trace, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_assert_cmpint (fx_import_path (store, debug, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_autofree char *out = g_build_filename (tmp, "report", NULL);
  fx_report_opts opts = { .svg = fake_svg, .inline_limit = 4096 };
  fx_report_stats rs;
  write_report (store, out, &opts, &rs);
  /* A 4 KiB inline limit sends the long artifacts to files of their own, which the checker finds linked. */
  g_assert_cmpint (rs.artifact_files, >, 0);
  g_autofree char *text = check_report ("html", out, NULL);
  g_assert_nonnull (strstr (text, "Fusion groups"));
  g_assert_nonnull (strstr (text, "model__0_inference_0.0"));
  fx_store_close (store);
  rm_rf (tmp);
}

/* ------------------------------------------------------------------ a hostile trace */

static const char hostile_trace[] =
  "V1124 10:00:00.000000 100 torch/_logging/structured.py:22] {\"str\": [\"/tmp/<script>alert(1)</script>.py\", 0]}\n"
  "V1124 10:00:00.000001 100 torch/_dynamo/convert_frame.py:1] {\"dynamo_start\": {\"stack\": [{\"line\": 3, "
  "\"name\": \"f<img src=x onerror=alert(2)>\", \"filename\": 0}]}, \"frame_id\": 0, \"frame_compile_id\": 0, "
  "\"attempt\": 0}\n"
  "V1124 10:00:00.000002 100 torch/_dynamo/x.py:1] {\"artifact\": {\"name\": \"dynamo_graph_break_reason\", "
  "\"encoding\": \"string\"}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"0\"}\n"
  "\tGraph break in user code at /tmp/x.py:7\n"
  "\tGraph Break Reason: </td></tr></table><script>alert(3)</script>\n"
  "\tUser code traceback:\n"
  "\t  File \"/tmp/<b>x</b>.py\", line 7, in f\n"
  "\t    if x.sum() < 0: # </pre><script>alert(4)</script>\n"
  "this line is not a record\n"
  "V1124 10:00:00.000003 100 torch/_dynamo/x.py:1] {\"artifact\": {\"name\": \"</summary><script>alert(5)</script>\", "
  "\"encoding\": \"string\"}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"0\"}\n"
  "\t</pre><script>alert(6)</script>\n"
  "V1124 10:00:00.000004 100 torch/_dynamo/x.py:1] {\"artifact\": {\"name\": \"recompile_reasons\", "
  "\"encoding\": \"json\"}, \"frame_id\": 0, \"frame_compile_id\": 1, \"attempt\": 0, \"has_payload\": \"0\"}\n"
  "\t[\n"
  "\t\"0/0: tensor 'x' size mismatch <script>alert(7)</script> \\u2028 \\\\\"\n"
  "\t]\n"
  "V1124 10:00:00.000005 100 torch/_dynamo/x.py:1] {\"artifact\": {\"name\": \"x\", \"enc";

static void
test_hostile (void)
{
  g_autofree char *tmp = make_tmp ();
  fx_store *store = open_store (tmp);
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_import_torch_trace_data (store, "hostile<i>.log", hostile_trace, strlen (hostile_trace), NULL,
                                               NULL, &stats, &diag), ==, FX_OK);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_LINE], ==, 1);
  g_assert_cmpint (stats.warnings[FX_IMPORT_WARN_BAD_JSON], ==, 1);
  fx_arena *arena = fx_arena_new ();
  fx_report_warning *w = NULL;
  size_t nw = 0;
  fx_report_warnings_from_stats ("hostile<i>.log", &stats, arena, &w, &nw);
  g_assert_cmpuint (nw, >=, 2);
  g_autofree char *out = g_build_filename (tmp, "report", NULL);
  fx_report_opts opts = { .svg = fake_svg, .warnings = w, .n_warnings = nw, .title = "<script>alert(8)</script>" };
  fx_report_stats rs;
  write_report (store, out, &opts, &rs);
  g_assert_cmpint (rs.compiles, ==, 2);

  /* No page holds a tag that came from the trace. */
  g_autoptr (GDir) d = g_dir_open (out, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (out, name, NULL);
      g_autofree char *src = NULL;
      g_assert_true (g_file_get_contents (path, &src, NULL, NULL));
      g_assert_null (strstr (src, "<script>alert"));
      g_assert_null (strstr (src, "<img src=x"));
      g_assert_null (strstr (src, "<b>x</b>"));
      g_assert_null (strstr (src, "</summary><script>"));
    }
  /* The strings are still shown, as text. */
  g_autofree char *text = check_report ("html", out, NULL);
  g_autofree char *index = page_text (text, "index.html");
  g_assert_nonnull (strstr (index, "<script>alert(8)</script>"));
  g_assert_nonnull (strstr (index, "/tmp/<script>alert(1)</script>.py"));
  g_assert_nonnull (strstr (index, "</td></tr></table><script>alert(3)</script>"));
  g_assert_nonnull (strstr (index, "tensor 'x' size mismatch <script>alert(7)</script>"));
  /* The bad line and the truncated last record, located. */
  g_assert_nonnull (strstr (index, "hostile<i>.log:9"));
  g_assert_nonnull (strstr (index, "this line is not a record"));
  g_assert_nonnull (strstr (index, "hostile<i>.log:16"));
  g_autofree char *page1 = page_text (text, "compile-1.html");
  g_assert_nonnull (strstr (page1, "</summary><script>alert(5)</script>"));
  g_assert_nonnull (strstr (page1, "</pre><script>alert(6)</script>"));
  g_assert_nonnull (strstr (page1, "f<img src=x onerror=alert(2)>"));

  /* The JSON document escapes them too and parses back to the same strings. */
  char *doc = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&doc, &len);
  g_assert_cmpint (fx_report_write_json (store, mem, &opts, &diag), ==, FX_OK);
  fclose (mem);
  g_assert_null (strstr (doc, "<script"));
  json_object *root = json_tokener_parse (doc);
  g_assert_nonnull (root);
  json_object *compiles = json_object_object_get (root, "compiles");
  g_assert_cmpint (json_object_array_length (compiles), ==, 2);
  json_object *c1 = json_object_array_get_idx (compiles, 1);
  json_object *gf = json_object_array_get_idx (json_object_object_get (c1, "guard_failures"), 0);
  g_assert_cmpstr (json_object_get_string (json_object_object_get (gf, "reason")), ==,
                   "tensor 'x' size mismatch <script>alert(7)</script> \xe2\x80\xa8 \\");
  json_object_put (root);
  free (doc);
  fx_arena_free (arena);
  fx_store_close (store);
  rm_rf (tmp);
}

static void
test_escape (void)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_report_html_escape (&b, "<a href=\"x\">'&'</a>");
  g_assert_cmpstr (b.data, ==, "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  fx_buf_reset (&b);
  /* Invalid UTF-8 (a lone continuation byte, a truncated sequence) becomes U+FFFD; valid text stays. */
  fx_report_json_string (&b, "\x80" "a\xc3" "</script>\t\x01\xc3\xa9");
  g_assert_cmpstr (b.data, ==, "\"\\ufffda\\ufffd\\u003c/script\\u003e\\t\\u0001\xc3\xa9\"");
  fx_buf_reset (&b);
  fx_report_json_string (&b, NULL);
  g_assert_cmpstr (b.data, ==, "null");
  fx_buf_free (&b);
}

/* The whole document of a fixture satisfies engine/report/report-schema.json and counts what the store holds. */
static void
test_json_schema (void)
{
  g_autofree char *tmp = make_tmp ();
  fx_store *store = open_store (tmp);
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_autofree char *trace = fixture_path ("traces/toy_graph_break-cuda/torch_trace");
  g_assert_cmpint (fx_import_path (store, trace, NULL, NULL, &stats, &diag), ==, FX_OK);
  g_autofree char *json_path = g_build_filename (tmp, "report.json", NULL);
  FILE *f = fopen (json_path, "w");
  g_assert_nonnull (f);
  g_assert_cmpint (fx_report_write_json (store, f, NULL, &diag), ==, FX_OK);
  fclose (f);
  const char *schema = g_getenv ("FX_REPORT_SCHEMA");
  g_assert_nonnull (schema);
  g_free (check_report ("json", json_path, schema));
  json_object *root = json_object_from_file (json_path);
  g_assert_nonnull (root);
  g_assert_cmpint (json_object_get_int (json_object_object_get (root, "version")), ==, FX_REPORT_SCHEMA_VERSION);
  json_object *compiles = json_object_object_get (root, "compiles");
  g_assert_cmpint (json_object_array_length (compiles), ==, stats.compiles);
  int64_t graphs = 0, kernels = 0, guards = 0;
  for (size_t i = 0; i < json_object_array_length (compiles); i++)
    {
      json_object *c = json_object_array_get_idx (compiles, i);
      graphs += (int64_t) json_object_array_length (json_object_object_get (c, "graphs"));
      kernels += (int64_t) json_object_array_length (json_object_object_get (c, "kernels"));
      guards += (int64_t) json_object_array_length (json_object_object_get (c, "guards"));
    }
  g_assert_cmpint (graphs, ==, stats.graphs);
  g_assert_cmpint (kernels, ==, stats.kernels);
  g_assert_cmpint (guards, ==, stats.guards);
  json_object_put (root);
  fx_store_close (store);
  rm_rf (tmp);
}

/* Fed in odd-sized pieces as a writer would append them, the follow importer stores what the whole-file import
   stores; a partial last line is not used until its newline comes. */
static void
test_follow (void)
{
  g_autofree char *tmp = make_tmp ();
  fx_store *whole = open_store (tmp);
  g_autofree char *dir = fixture_path ("traces/toy_graph_break-cuda/torch_trace");
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autofree char *log = g_build_filename (dir, g_dir_read_name (d), NULL);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (log, &data, &len, NULL));
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_import_torch_trace_data (whole, "whole.log", data, len, NULL, NULL, &stats, &diag), ==, FX_OK);

  g_autofree char *tmp2 = make_tmp ();
  fx_store *fol = open_store (tmp2);
  fx_trace_follow *f = NULL;
  g_assert_cmpint (fx_trace_follow_new (fol, "followed.log", (int64_t) len, &f, &diag), ==, FX_OK);
  /* A first line without its newline is kept back. */
  const char *nl = memchr (data, '\n', len);
  size_t used = 1;
  g_assert_cmpint (fx_trace_follow_feed (f, data, (size_t) (nl - data), false, &used, &diag), ==, FX_OK);
  g_assert_cmpuint (used, ==, 0);
  size_t offset = 0, avail = 0;
  for (size_t piece = 7919; avail < len; piece = piece * 3 / 2 % 200003 + 4099)
    {
      avail = MIN (len, avail + piece);
      g_assert_cmpint (fx_trace_follow_feed (f, data + offset, avail - offset, avail == len, &used, &diag), ==,
                       FX_OK);
      offset += used;
    }
  g_assert_cmpuint (offset, ==, len);
  const fx_import_stats *fs = fx_trace_follow_stats (f);
  g_assert_cmpint (fs->records, ==, stats.records);
  g_assert_cmpint (fs->lines, ==, stats.lines);
  g_assert_cmpint (fs->compiles, ==, stats.compiles);
  g_assert_cmpint (fs->graphs, ==, stats.graphs);
  g_assert_cmpint (fs->guards, ==, stats.guards);
  g_assert_cmpint (fs->kernels, ==, stats.kernels);

  fx_arena *arena = fx_arena_new ();
  fx_store_compile *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  g_assert_cmpint (fx_store_list_compiles (whole, arena, &a, &na, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_list_compiles (fol, arena, &b, &nb, &diag), ==, FX_OK);
  g_assert_cmpuint (na, ==, nb);
  for (size_t i = 0; i < na; i++)
    {
      g_assert_cmpstr (a[i].compile_id, ==, b[i].compile_id);
      g_assert_cmpstr (a[i].status, ==, b[i].status);
      g_assert_cmpint (a[i].n_graphs, ==, b[i].n_graphs);
      g_assert_cmpint (a[i].n_guards, ==, b[i].n_guards);
      g_assert_cmpint (a[i].n_failures, ==, b[i].n_failures);
      g_assert_cmpint (a[i].n_breaks, ==, b[i].n_breaks);
      g_assert_cmpint (a[i].n_kernels, ==, b[i].n_kernels);
    }
  fx_arena_free (arena);
  fx_trace_follow_free (f);
  fx_store_close (whole);
  fx_store_close (fol);
  rm_rf (tmp);
  rm_rf (tmp2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/report/escape", test_escape);
  g_test_add_func ("/report/fixture/toy_graph_break", test_toy);
  g_test_add_func ("/report/fixture/mlp_module", test_mlp);
  g_test_add_func ("/report/fixture/mlp_module-debug-dir", test_mlp_with_debug_dir);
  g_test_add_func ("/report/hostile", test_hostile);
  g_test_add_func ("/report/json-schema", test_json_schema);
  g_test_add_func ("/report/search", test_search);
  g_test_add_func ("/report/follow", test_follow);
  return g_test_run ();
}
