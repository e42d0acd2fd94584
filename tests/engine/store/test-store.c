/* test-store.c: the sqlite workspace store: schema, transactional writes, reads, WAL reader+writer, SIGKILL safety. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fx/diff.h"
#include "fx/pyparse.h"
#include "fx/store.h"
#include "fx/tensor.h"

static char *
tmp_workspace (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("fxstore-XXXXXX", &error);
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
open_ok (const char *path)
{
  fx_store *store = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = fx_store_open (path, true, &store, &diag);
  if (st != FX_OK)
    g_error ("fx_store_open: %s", diag.message);
  return store;
}

static void
test_compile_id (void)
{
  fx_compile_id cid;
  char buf[48];
  g_assert_cmpint (fx_compile_id_parse ("0/1", &cid, NULL), ==, FX_OK);
  g_assert_cmpint (cid.frame_id, ==, 0);
  g_assert_cmpint (cid.frame_compile_id, ==, 1);
  g_assert_cmpint (cid.attempt, ==, 0);
  g_assert_cmpint (cid.compiled_autograd_id, ==, -1);
  g_assert_cmpint (fx_compile_id_parse ("[2/3_1]", &cid, NULL), ==, FX_OK);
  fx_compile_id_format (&cid, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "2/3_1");
  g_assert_cmpint (fx_compile_id_parse ("!0/-/-", &cid, NULL), ==, FX_OK);
  fx_compile_id_format (&cid, buf, sizeof buf);
  g_assert_cmpstr (buf, ==, "!0/-/-");
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_compile_id_parse ("0/", &cid, &diag), ==, FX_ERR_PARSE);
  g_assert_nonnull (strstr (diag.message, "not a compile id"));
  g_assert_cmpint (fx_compile_id_parse ("x", &cid, NULL), ==, FX_ERR_PARSE);
  g_assert_cmpint (fx_compile_id_parse ("0/1/2/3", &cid, NULL), ==, FX_ERR_PARSE);
  g_assert_cmpint (fx_compile_id_parse ("0/99999999999", &cid, NULL), ==, FX_ERR_PARSE);
}

/* Writes one compile with a graph, guards, a failure, a break and a kernel. */
static void
write_sample (fx_store *store, const char *hash, int frame)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  int64_t input = 0, existing = 0, c = 0, g = 0;
  g_assert_cmpint (fx_store_begin (store, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_find_input (store, hash, &existing, &diag), ==, FX_OK);
  g_assert_cmpint (existing, ==, 0);
  g_assert_cmpint (fx_store_add_input (store, "/x/trace.log", "torch_trace", hash, 10, &input, &diag), ==, FX_OK);
  fx_compile_id cid = { -1, frame, 1, 0 };
  g_assert_cmpint (fx_store_ensure_compile (store, input, &cid, &c, &diag), ==, FX_OK);
  int64_t again = 0;
  g_assert_cmpint (fx_store_ensure_compile (store, input, &cid, &again, &diag), ==, FX_OK);
  g_assert_cmpint (again, ==, c);
  fx_store_compile_update u;
  fx_store_compile_update_init (&u);
  u.function = "toy_example";
  u.file = "prog.py";
  u.line = 5;
  u.has_recompile = 1;
  g_assert_cmpint (fx_store_update_compile (store, c, &u, &diag), ==, FX_OK);

  const char *code = "def forward(self, x):\n    add = x + 1;  x = None\n    return (add,)\n";
  fx_graph *graph = NULL;
  g_assert_cmpint (fx_parse_fx_code (code, strlen (code), "t", &graph, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_graph (store, c, "dynamo", graph, code, &g, &diag), ==, FX_OK);
  fx_graph_free (graph);
  /* Values with quotes and SQL text go in as data. */
  g_assert_cmpint (fx_store_add_guard (store, c, "TENSOR_MATCH", "L['x']", "x'); DROP TABLE guards; --", NULL,
                                       &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_guard_failure (store, c, "0/0", "tensor 'a' size mismatch", NULL, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_graph_break (store, c, "Data-dependent branching", "why", "stack", NULL, &diag),
                   ==, FX_OK);
  g_assert_cmpint (fx_store_add_kernel (store, c, 0, 1, "triton_poi_fused_add_0", "triton", "cuda", "def k(): pass",
                                        "add", "aten.add", &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_metric (store, c, "guard_count", "11", &diag), ==, FX_OK);
  fx_store_run run = { .backend = "interp", .compile_ms = 1.5, .run_ms_median = 0.25 };
  int64_t run_id = 0;
  g_assert_cmpint (fx_store_add_run (store, g, &run, &run_id, &diag), ==, FX_OK);
  g_assert_cmpint (run_id, >, 0);
  g_assert_cmpint (fx_store_commit (store, &diag), ==, FX_OK);
}

static void
test_roundtrip (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  g_assert_cmpint (fx_store_schema_version (store), ==, FX_STORE_SCHEMA_VERSION);
  write_sample (store, "h1", 0);
  fx_store_close (store);

  /* Reopening migrates nothing and reads back what was written. */
  store = open_ok (path);
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (cs[0].compile_id, ==, "0/1");
  g_assert_cmpstr (cs[0].function, ==, "toy_example");
  g_assert_cmpint (cs[0].line, ==, 5);
  g_assert_cmpstr (cs[0].status, ==, "graph break");
  g_assert_cmpint (cs[0].n_graphs, ==, 1);
  g_assert_cmpint (cs[0].n_kernels, ==, 1);
  int64_t row = 0;
  g_assert_cmpint (fx_store_find_compile (store, "[0/1]", &row, NULL), ==, FX_OK);
  g_assert_cmpint (row, ==, cs[0].id);
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_find_compile (store, "7/0", &row, &diag), ==, FX_ERR_NOT_FOUND);

  fx_store_guard *guards;
  g_assert_cmpint (fx_store_list_guards (store, cs[0].id, arena, &guards, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (guards[0].code, ==, "x'); DROP TABLE guards; --");
  g_assert_cmpstr (guards[0].source, ==, "L['x']");
  g_assert_null (guards[0].user_line);

  fx_store_graph_info *gi;
  g_assert_cmpint (fx_store_list_graphs (store, cs[0].id, arena, &gi, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_true (gi[0].parsed);
  g_assert_cmpstr (gi[0].stage, ==, "dynamo");
  fx_graph *graph = NULL;
  char *text = NULL;
  g_assert_cmpint (fx_store_get_graph (store, gi[0].id, &graph, &text, NULL), ==, FX_OK);
  g_assert_nonnull (graph);
  fx_buf out;
  fx_buf_init (&out);
  fx_graph_print_code (graph, &out);
  g_assert_nonnull (strstr (out.data, "add = x + 1"));
  g_assert_nonnull (strstr (text, "return (add,)"));
  fx_buf_free (&out);
  fx_graph_free (graph);
  free (text);

  fx_store_guard_failure *gf;
  g_assert_cmpint (fx_store_list_guard_failures (store, cs[0].id, arena, &gf, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (gf[0].reason, ==, "tensor 'a' size mismatch");
  fx_store_kernel *ks;
  g_assert_cmpint (fx_store_list_kernels (store, cs[0].id, arena, &ks, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (ks[0].name, ==, "triton_poi_fused_add_0");
  int64_t count = 0;
  g_assert_cmpint (fx_store_count (store, "runs", &count, NULL), ==, FX_OK);
  g_assert_cmpint (count, ==, 1);
  g_assert_cmpint (fx_store_count (store, "sqlite_master; --", &count, NULL), ==, FX_ERR_NOT_FOUND);
  /* Same hash: found, so an importer adds nothing. */
  int64_t existing = 0;
  g_assert_cmpint (fx_store_find_input (store, "h1", &existing, NULL), ==, FX_OK);
  g_assert_cmpint (existing, >, 0);
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (path);
}

static void
test_bad_files (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_store *store = NULL;
  /* Missing without create. */
  g_assert_cmpint (fx_store_open (path, false, &store, &diag), ==, FX_ERR_IO);
  g_assert_null (store);
  /* Not a database. */
  g_assert_true (g_file_set_contents (path, "this is not sqlite, just some text that is long enough......", -1,
                                      NULL));
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (path, true, &store, &diag), !=, FX_OK);
  g_assert_null (store);
  g_assert_nonnull (strstr (diag.message, path));
  g_unlink (path);

  /* Another program's sqlite file is refused and left alone. */
  sqlite3 *other = NULL;
  g_assert_cmpint (sqlite3_open (path, &other), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (other, "CREATE TABLE sources (id INTEGER PRIMARY KEY); PRAGMA user_version = 1",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (other);
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (path, true, &store, &diag), ==, FX_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (diag.message, "not an FX Workbench workspace"));
  g_unlink (path);
  g_assert_cmpint (sqlite3_open (path, &other), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (other, "CREATE TABLE t (x)", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (other);
  g_assert_cmpint (fx_store_open (path, true, &store, &diag), ==, FX_ERR_UNSUPPORTED);
  g_unlink (path);

  /* A newer schema is refused. */
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "PRAGMA user_version = 99; PRAGMA application_id = 1180194626", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (path, true, &store, &diag), ==, FX_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (diag.message, "newer"));
  remove_workspace (path);
}

/* A version-1 file (before the v2 indexes, the v3 run columns and the v4 IR/provenance/shape/link tables) is
   migrated on open, keeping its rows. */
static void
test_migration (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  write_sample (store, "h1", 0);
  fx_store_close (store);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "DROP INDEX guard_failures_compile; DROP INDEX graph_breaks_compile;"
                                 " DROP INDEX fusion_groups_compile; DROP INDEX compiles_frame; DROP INDEX frames_input;"
                                 " DROP INDEX runs_graph; DROP TABLE runs; DROP TABLE ir_nodes;"
                                 " DROP TABLE provenance; DROP TABLE shape_events; DROP TABLE output_codes;"
                                 " DROP TABLE compile_links; DROP TABLE run_outputs;"
                                 " CREATE TABLE runs (id INTEGER PRIMARY KEY, graph INTEGER REFERENCES graphs(id)"
                                 " ON DELETE CASCADE, backend TEXT NOT NULL, mode TEXT, options TEXT, device TEXT,"
                                 " compile_ms REAL, run_ms_median REAL, run_ms_min REAL, run_ms_max REAL,"
                                 " peak_bytes INTEGER, accuracy REAL, error TEXT, created REAL);"
                                 " ALTER TABLE kernels DROP COLUMN part; PRAGMA user_version = 1", NULL, NULL, NULL),
                   ==, SQLITE_OK);
  sqlite3_close (db);
  store = open_ok (path);
  g_assert_cmpint (fx_store_schema_version (store), ==, 7);
  g_assert_cmpint (FX_STORE_SCHEMA_VERSION, ==, 7);
  /* The v4 tables are back and usable on the migrated file. */
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs = NULL;
  size_t nc = 0;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &nc, NULL), ==, FX_OK);
  g_assert_cmpuint (nc, ==, 1);
  g_assert_null (cs[0].linked);
  fx_store_ir_node node = { .stage = "post_fusion", .name = "op0", .kind = "SchedulerNode", .writes = "buf0" };
  g_assert_cmpint (fx_store_begin (store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_ir_node (store, cs[0].id, &node, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_provenance (store, cs[0].id, "k0", 1, "add", "linear", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_commit (store, NULL), ==, FX_OK);
  fx_store_ir_node *nodes = NULL;
  g_assert_cmpint (fx_store_list_ir_nodes (store, cs[0].id, NULL, arena, &nodes, &nc, NULL), ==, FX_OK);
  g_assert_cmpuint (nc, ==, 1);
  g_assert_cmpstr (nodes[0].writes, ==, "buf0");
  fx_arena_free (arena);
  fx_store_run run = { .backend = "eager", .verdict = "pass", .repeat = 5, .n_kernels = 2 };
  g_assert_cmpint (fx_store_begin (store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_run (store, 0, &run, NULL, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_commit (store, NULL), ==, FX_OK);
  int64_t count = 0;
  g_assert_cmpint (fx_store_count (store, "compiles", &count, NULL), ==, FX_OK);
  g_assert_cmpint (count, ==, 1);
  fx_store_close (store);
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name ="
                                       " 'graph_breaks_compile'", -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (stmt, 0), ==, 1);
  sqlite3_finalize (stmt);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT verdict, repeat, n_kernels FROM runs", -1, &stmt, NULL), ==,
                   SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpstr ((const char *) sqlite3_column_text (stmt, 0), ==, "pass");
  g_assert_cmpint (sqlite3_column_int (stmt, 1), ==, 5);
  g_assert_cmpint (sqlite3_column_int (stmt, 2), ==, 2);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  remove_workspace (path);
}

/* A reader sees the last committed state while a writer holds an open transaction (WAL). */
static void
test_reader_writer (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *writer = open_ok (path);
  write_sample (writer, "h1", 0);
  fx_store *reader = open_ok (path);
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_begin (writer, &diag), ==, FX_OK);
  int64_t input = 0, c = 0;
  g_assert_cmpint (fx_store_add_input (writer, "/y", "torch_trace", "h2", 1, &input, &diag), ==, FX_OK);
  fx_compile_id cid = { -1, 5, 0, 0 };
  g_assert_cmpint (fx_store_ensure_compile (writer, input, &cid, &c, &diag), ==, FX_OK);

  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (reader, arena, &cs, &n, &diag), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (fx_store_commit (writer, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_list_compiles (reader, arena, &cs, &n, &diag), ==, FX_OK);
  g_assert_cmpuint (n, ==, 2);
  fx_arena_free (arena);
  fx_store_close (reader);
  fx_store_close (writer);
  remove_workspace (path);
}

/* A child writes committed transactions then is SIGKILLed inside an open one: the file stays valid and holds
   exactly the committed ones. */
/* The file passes sqlite's integrity check. */
static void
assert_integrity (const char *path)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "PRAGMA integrity_check", -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpstr ((const char *) sqlite3_column_text (stmt, 0), ==, "ok");
  sqlite3_finalize (stmt);
  sqlite3_close (db);
}

static void
test_sigkill (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  fx_store_close (store);
  int pipefd[2];
  g_assert_cmpint (pipe (pipefd), ==, 0);
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      close (pipefd[0]);
      fx_store *s = NULL;
      if (fx_store_open (path, true, &s, NULL) != FX_OK)
        _exit (1);
      for (int i = 0; i < 3; i++)
        {
          char hash[16];
          snprintf (hash, sizeof hash, "c%d", i);
          write_sample (s, hash, i);
        }
      fx_store_begin (s, NULL);
      int64_t input = 0, c = 0;
      fx_store_add_input (s, "/z", "torch_trace", "uncommitted", 1, &input, NULL);
      for (int i = 0; i < 2000; i++)
        {
          fx_compile_id cid = { -1, 100 + i, 0, 0 };
          fx_store_ensure_compile (s, input, &cid, &c, NULL);
        }
      if (write (pipefd[1], "x", 1) != 1)
        _exit (1);
      for (;;)
        {
          fx_compile_id cid = { -1, 5000, 0, 0 };
          fx_store_ensure_compile (s, input, &cid, &c, NULL);
          fx_store_add_artifact (s, input, c, "spin", "string", "payload", NULL);
        }
    }
  close (pipefd[1]);
  char ch;
  g_assert_cmpint (read (pipefd[0], &ch, 1), ==, 1);
  close (pipefd[0]);
  g_usleep (20000);
  kill (pid, SIGKILL);
  int status = 0;
  waitpid (pid, &status, 0);
  g_assert_true (WIFSIGNALED (status));

  store = open_ok (path);
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 3);
  int64_t count = 0;
  g_assert_cmpint (fx_store_count (store, "inputs", &count, NULL), ==, FX_OK);
  g_assert_cmpint (count, ==, 3);
  g_assert_cmpint (fx_store_count (store, "artifacts", &count, NULL), ==, FX_OK);
  g_assert_cmpint (count, ==, 0);
  fx_arena_free (arena);
  assert_integrity (path);
  fx_store_close (store);
  remove_workspace (path);
}


/* Linking a debug-folder compile to a trace compile: by output-code md5 first, else by kernel names, each trace
   compile taken once, in row order; the linked compile's fusion groups and provenance show through the trace
   compile unless it has its own. */
static void
test_links (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  int64_t trace = 0, debug = 0, t[3], d[3];
  g_assert_cmpint (fx_store_begin (store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_input (store, "/t.log", "torch_trace", "ht", 1, &trace, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_input (store, "/dbg", "torch_compile_debug", "hd", 0, &debug, NULL), ==, FX_OK);
  for (int i = 0; i < 3; i++)
    {
      fx_compile_id tc = { -1, 0, i, 0 }, dc = { -1, -1, i, 0 };
      g_assert_cmpint (fx_store_ensure_compile (store, trace, &tc, &t[i], NULL), ==, FX_OK);
      g_assert_cmpint (fx_store_ensure_compile (store, debug, &dc, &d[i], NULL), ==, FX_OK);
    }
  /* t0 and t2 print the same kernels; d0 matches t1 by md5; d1 and d2 match by kernel names only. */
  g_assert_cmpint (fx_store_add_output_code (store, trace, t[0], "aaaa", "k0 k1", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_output_code (store, trace, t[1], "bbbb", "k9", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_output_code (store, trace, t[2], "cccc", "k0 k1", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_output_code (store, debug, d[0], "bbbb", "k9", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_output_code (store, debug, d[1], "xxxx", "k0 k1", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_output_code (store, debug, d[2], "yyyy", "k0 k1", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_fusion_group (store, d[0], "op0_op1", "op0, op1", "op0_op1: ...", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_provenance (store, d[0], "k9", 1, "add", "linear", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_provenance (store, t[1], "k9", 1, "add", "linear", NULL), ==, FX_OK);
  int64_t linked = 0;
  g_assert_cmpint (fx_store_link_debug_compiles (store, &linked, NULL), ==, FX_OK);
  g_assert_cmpint (linked, ==, 3);
  /* Again: nothing new. */
  g_assert_cmpint (fx_store_link_debug_compiles (store, &linked, NULL), ==, FX_OK);
  g_assert_cmpint (linked, ==, 0);
  g_assert_cmpint (fx_store_commit (store, NULL), ==, FX_OK);
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 6);
  /* Rows by input then frame order: 0/0, 0/1, 0/2, -/0, -/1, -/2. */
  g_assert_cmpstr (cs[0].linked, ==, NULL);
  g_assert_cmpstr (cs[3].compile_id, ==, "-/0");
  g_assert_cmpstr (cs[3].linked, ==, "0/1");
  g_assert_cmpstr (cs[4].linked, ==, "0/0");
  g_assert_cmpstr (cs[5].linked, ==, "0/2");
  fx_store_fusion_group *g;
  g_assert_cmpint (fx_store_list_fusion_groups (store, t[1], arena, &g, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (g[0].nodes, ==, "op0, op1");
  g_assert_cmpint (fx_store_list_fusion_groups (store, t[0], arena, &g, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 0);
  fx_store_provenance *p;
  g_assert_cmpint (fx_store_list_provenance (store, t[1], arena, &p, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (fx_store_count (store, "compile_links", (int64_t *) &linked, NULL), ==, FX_OK);
  g_assert_cmpint (linked, ==, 3);
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (path);
}


/* A schema-3 file opened read-only (not migrated): the readers of schema-4 data answer from what it holds. */
static void
test_readonly_v3 (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  write_sample (store, "h1", 0);
  fx_store_close (store);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "DROP TABLE ir_nodes; DROP TABLE provenance; DROP TABLE shape_events;"
                                 " DROP TABLE output_codes; DROP TABLE compile_links;"
                                 " ALTER TABLE kernels DROP COLUMN part; PRAGMA user_version = 3",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open_readonly (path, &store, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_schema_version (store), ==, 3);
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs;
  size_t n;
  g_assert_cmpint (fx_store_list_compiles (store, arena, &cs, &n, &diag), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_null (cs[0].linked);
  fx_store_kernel *ks;
  g_assert_cmpint (fx_store_list_kernels (store, cs[0].id, arena, &ks, &n, &diag), ==, FX_OK);
  fx_store_fusion_group *g;
  g_assert_cmpint (fx_store_list_fusion_groups (store, cs[0].id, arena, &g, &n, &diag), ==, FX_OK);
  fx_store_kv *a;
  g_assert_cmpint (fx_store_list_artifacts (store, cs[0].id, arena, &a, &n, &diag), ==, FX_OK);
  fx_store_ir_node *nodes;
  g_assert_cmpint (fx_store_list_ir_nodes (store, cs[0].id, NULL, arena, &nodes, &n, &diag), ==, FX_OK);
  g_assert_cmpuint (n, ==, 0);
  fx_store_provenance *p;
  g_assert_cmpint (fx_store_list_provenance (store, cs[0].id, arena, &p, &n, &diag), ==, FX_OK);
  g_assert_cmpuint (n, ==, 0);
  fx_store_shape_event *ev;
  g_assert_cmpint (fx_store_list_shape_events (store, cs[0].id, arena, &ev, &n, &diag), ==, FX_OK);
  g_assert_cmpuint (n, ==, 0);
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (path);
}

/* N processes creating the same new workspace at the same moment all succeed, and the file holds one workspace
   row: the schema is created inside the lock (before, 18 of 20 pairs failed with "table workspaces already
   exists"). */
static void
test_concurrent_create (void)
{
  enum { N = 8 };
  for (int round = 0; round < 3; round++)
    {
      g_autofree char *path = tmp_workspace ();
      int go[2];
      g_assert_cmpint (pipe (go), ==, 0);
      pid_t pids[N];
      for (int i = 0; i < N; i++)
        {
          pids[i] = fork ();
          g_assert_cmpint (pids[i], >=, 0);
          if (pids[i] == 0)
            {
              close (go[1]);
              char ch;
              /* All start together: each blocks until the parent closes the pipe. */
              if (read (go[0], &ch, 1) != 0)
                _exit (3);
              fx_store *s = NULL;
              fx_diag diag;
              fx_diag_clear (&diag);
              if (fx_store_open (path, true, &s, &diag) != FX_OK)
                {
                  fprintf (stderr, "child %d: %s\n", i, diag.message);
                  _exit (1);
                }
              fx_store_close (s);
              _exit (0);
            }
        }
      close (go[0]);
      close (go[1]);
      int failed = 0;
      for (int i = 0; i < N; i++)
        {
          int status = 0;
          waitpid (pids[i], &status, 0);
          failed += !(WIFEXITED (status) && WEXITSTATUS (status) == 0);
        }
      g_assert_cmpint (failed, ==, 0);
      fx_store *store = open_ok (path);
      int64_t count = 0;
      g_assert_cmpint (fx_store_count (store, "workspaces", &count, NULL), ==, FX_OK);
      g_assert_cmpint (count, ==, 1);
      g_assert_cmpint (fx_store_schema_version (store), ==, FX_STORE_SCHEMA_VERSION);
      fx_store_close (store);
      remove_workspace (path);
    }
}

static void
count_wait (const char *path, double waited_s, void *user_data)
{
  (void) path;
  (void) waited_s;
  g_atomic_int_inc ((int *) user_data);
}

/* A child holds the write lock for a while; a second writer waits for it (and hears about the wait) instead of
   failing with "database is locked". The wait is scaled down: the lock is held 1.5 s, reports start after 0.2 s;
   with a limit shorter than the hold the same writer fails with a message saying why. */
static void
test_lock_wait (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  fx_store_close (store);
  for (int limited = 0; limited < 2; limited++)
    {
      int ready[2];
      g_assert_cmpint (pipe (ready), ==, 0);
      pid_t pid = fork ();
      g_assert_cmpint (pid, >=, 0);
      if (pid == 0)
        {
          close (ready[0]);
          fx_store *s = NULL;
          if (fx_store_open (path, false, &s, NULL) != FX_OK || fx_store_begin (s, NULL) != FX_OK)
            _exit (1);
          int64_t input = 0;
          char hash[16];
          snprintf (hash, sizeof hash, "held%d", limited);
          fx_store_add_input (s, "/held", "torch_trace", hash, 1, &input, NULL);
          if (write (ready[1], "x", 1) != 1)
            _exit (1);
          g_usleep (1500000);
          _exit (fx_store_commit (s, NULL) == FX_OK ? 0 : 2);
        }
      close (ready[1]);
      char ch;
      g_assert_cmpint (read (ready[0], &ch, 1), ==, 1);
      close (ready[0]);
      int reports = 0;
      fx_store_set_lock_wait (limited ? 0.4 : 0, 0.2, count_wait, &reports);
      fx_store *s = NULL;
      fx_diag diag;
      fx_diag_clear (&diag);
      g_assert_cmpint (fx_store_open (path, false, &s, &diag), ==, FX_OK);
      fx_status st = fx_store_begin (s, &diag);
      if (!limited)
        {
          g_assert_cmpint (st, ==, FX_OK);
          int64_t input = 0;
          g_assert_cmpint (fx_store_add_input (s, "/second", "torch_trace", "second", 1, &input, NULL), ==, FX_OK);
          g_assert_cmpint (fx_store_commit (s, &diag), ==, FX_OK);
        }
      else
        {
          g_assert_cmpint (st, ==, FX_ERR_IO);
          g_assert_nonnull (strstr (diag.message, "locked by another process"));
        }
      g_assert_cmpint (reports, >=, 1);
      fx_store_close (s);
      fx_store_set_lock_wait (0, 0, NULL, NULL);
      int status = 0;
      waitpid (pid, &status, 0);
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, 0);
    }
  store = open_ok (path);
  int64_t count = 0;
  g_assert_cmpint (fx_store_count (store, "inputs", &count, NULL), ==, FX_OK);
  g_assert_cmpint (count, ==, 3);
  fx_store_close (store);
  remove_workspace (path);
}

/* An existing empty file (or any file) that is not a workspace is refused by an open without create and keeps its
   bytes; only a create turns an empty file into a workspace. */
static void
test_empty_file (void)
{
  g_autofree char *path = tmp_workspace ();
  g_assert_true (g_file_set_contents (path, "", 0, NULL));
  fx_store *store = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (path, false, &store, &diag), ==, FX_ERR_UNSUPPORTED);
  g_assert_null (store);
  g_assert_nonnull (strstr (diag.message, "not an FX Workbench workspace"));
  GStatBuf sb;
  g_assert_cmpint (g_stat (path, &sb), ==, 0);
  g_assert_cmpint (sb.st_size, ==, 0);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
  store = open_ok (path);
  g_assert_cmpint (fx_store_schema_version (store), ==, FX_STORE_SCHEMA_VERSION);
  fx_store_close (store);
  remove_workspace (path);
}

/* A scratch store (fxwb report's temporary workspace) keeps no WAL file, still rolls back, and what it committed
   reads back after reopening it as a normal workspace. */
static void
test_scratch (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_set_scratch (store, &diag), ==, FX_OK);
  int64_t id = 0, found = -1;
  g_assert_cmpint (fx_store_begin (store, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_input (store, "a.log", "torch_trace", "0123456789abcdef0123456789abcdef", 5, &id,
                                       &diag), ==, FX_OK);
  fx_store_rollback (store);
  g_assert_cmpint (fx_store_find_input (store, "0123456789abcdef0123456789abcdef", &found, &diag), ==, FX_OK);
  g_assert_cmpint (found, ==, 0);
  g_assert_cmpint (fx_store_begin (store, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_input (store, "b.log", "torch_trace", "fedcba9876543210fedcba9876543210", 5, &id,
                                       &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_commit (store, &diag), ==, FX_OK);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
  fx_store_close (store);
  store = open_ok (path);
  g_assert_cmpint (fx_store_find_input (store, "fedcba9876543210fedcba9876543210", &found, &diag), ==, FX_OK);
  g_assert_cmpint (found, ==, id);
  fx_store_close (store);
  remove_workspace (path);
}

/* A run started and never finished (its process killed) reads back incomplete; a finished one and one added in one
   step do not. */
static void
test_incomplete_run (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  fx_store_run start = { .backend = "inductor", .mode = "max-autotune", .device = "cpu" };
  int64_t killed = 0, finished = 0;
  g_assert_cmpint (fx_store_begin (store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_start_run (store, 0, &start, &killed, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_start_run (store, 0, &start, &finished, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_commit (store, NULL), ==, FX_OK);
  fx_store_run done = { .backend = "inductor", .mode = "max-autotune", .device = "cpu", .verdict = "pass",
                        .repeat = 3, .n_kernels = 2, .run_ms_median = 1.5 };
  g_assert_cmpint (fx_store_begin (store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_finish_run (store, finished, &done, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_run (store, 0, &done, NULL, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_finish_run (store, 999, &done, NULL), ==, FX_ERR_NOT_FOUND);
  g_assert_cmpint (fx_store_commit (store, NULL), ==, FX_OK);
  fx_store_close (store);
  g_assert_cmpint (fx_store_open_readonly (path, &store, NULL), ==, FX_OK);
  fx_arena *arena = fx_arena_new ();
  sqlite3 *db = NULL;
  /* Runs without a graph: read through a graph id of 0 is not possible, so attach them to one. */
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "PRAGMA foreign_keys = OFF; UPDATE runs SET graph = 7", NULL, NULL, NULL), ==,
                   SQLITE_OK);
  sqlite3_close (db);
  fx_store_run_row *rows = NULL;
  size_t n = 0;
  g_assert_cmpint (fx_store_list_runs (store, 7, arena, &rows, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 3);
  g_assert_true (rows[0].incomplete);
  g_assert_true (isnan (rows[0].run_ms_median));
  g_assert_false (rows[1].incomplete);
  g_assert_cmpstr (rows[1].verdict, ==, "pass");
  g_assert_cmpfloat (rows[1].run_ms_median, ==, 1.5);
  g_assert_false (rows[2].incomplete);
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (path);
}


/* A finished run with outputs: a 2x3 float tensor given transposed (strides kept, data stored contiguous), an int,
   and a second tensor; cap: the bytes of data kept. */
static int64_t
add_run_with_outputs (fx_store *store, const char *backend, float bump, size_t cap, const char *inputs_hash)
{
  int64_t sizes[2] = { 3, 2 };
  fx_tensor *base = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sizes);
  for (int64_t i = 0; i < 6; i++)
    fx_tensor_set_f64 (base, i, (double) i);
  int64_t tsizes[2] = { 2, 3 }, tstrides[2] = { 1, 2 };
  fx_tensor *t = fx_tensor_as_strided (base, 2, tsizes, tstrides, 0);
  int64_t vsizes[1] = { 4 };
  fx_tensor *v = fx_tensor_new (NULL, FX_DTYPE_F32, 1, vsizes);
  for (int64_t i = 0; i < 4; i++)
    fx_tensor_set_f64 (v, i, 1.0 + (i == 2 ? bump : 0));
  fx_value items[2] = { fx_value_tensor (t), fx_value_int (7) };
  fx_value outs[2];
  outs[0].kind = FX_VALUE_TUPLE;
  outs[0].u.seq.items = items;
  outs[0].u.seq.n = 2;
  outs[1] = fx_value_tensor (v);
  fx_store_run run = { .backend = backend, .mode = "default", .verdict = "pass", .repeat = 1, .n_kernels = -1,
                       .run_ms_median = 2.0 };
  int64_t id = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_begin (store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_run (store, 0, &run, &id, NULL), ==, FX_OK);
  g_assert_cmpint (fx_run_outputs_store (store, id, outs, 2, cap, "spec, seed 0", inputs_hash, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_commit (store, NULL), ==, FX_OK);
  fx_value_clear (&items[0]);
  fx_value_clear (&outs[1]);
  fx_tensor_unref (base);
  return id;
}

/* What a run returned reads back: tuple flattened, shape, dtype, strides as returned, contiguous data, summaries;
   over the cap only the summary. Two runs diff per output: equal runs pass, a changed element fails same() with its
   max abs, different inputs are named, a run without kept data says "too large to keep". */
static void
test_run_outputs (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  int64_t a = add_run_with_outputs (store, "inductor", 0, FX_RUN_OUTPUTS_CAP, "h0");
  int64_t b = add_run_with_outputs (store, "inductor", 0.5f, FX_RUN_OUTPUTS_CAP, "h0");
  int64_t c = add_run_with_outputs (store, "inductor", 0, 24, "h1"); /* room for the first tensor only */
  int64_t a2 = add_run_with_outputs (store, "inductor", 0, FX_RUN_OUTPUTS_CAP, "h0");
  fx_arena *arena = fx_arena_new ();
  fx_store_run_output *o = NULL;
  size_t n = 0;
  g_assert_cmpint (fx_store_list_run_outputs (store, a, arena, &o, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpstr (o[0].kind, ==, "tensor");
  g_assert_cmpstr (o[0].dtype, ==, "float32");
  g_assert_cmpstr (o[0].shape, ==, "2, 3");
  g_assert_cmpstr (o[0].strides, ==, "1, 2");
  g_assert_cmpint (o[0].numel, ==, 6);
  g_assert_cmpuint (o[0].nbytes, ==, 24);
  /* transposed [[0,1],[2,3],[4,5]] read row by row: 0 2 4 1 3 5 */
  const float *d = o[0].data;
  g_assert_cmpfloat (d[1], ==, 2.0f);
  g_assert_cmpfloat (d[3], ==, 1.0f);
  g_assert_cmpfloat (o[0].max, ==, 5.0);
  g_assert_cmpfloat (o[0].mean, ==, 2.5);
  g_assert_cmpstr (o[1].kind, ==, "int");
  g_assert_cmpstr (o[1].value, ==, "7");
  g_assert_cmpstr (o[2].shape, ==, "4");
  fx_store_run_row row;
  g_assert_cmpint (fx_store_get_run (store, a, arena, &row, NULL), ==, FX_OK);
  g_assert_cmpint (row.n_outputs, ==, 3);
  g_assert_cmpstr (row.inputs, ==, "spec, seed 0");
  g_assert_cmpstr (row.inputs_hash, ==, "h0");
  g_assert_cmpint (fx_store_get_run (store, 999, arena, &row, NULL), ==, FX_ERR_NOT_FOUND);
  g_assert_cmpint (fx_store_list_run_outputs (store, c, arena, &o, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 3);
  g_assert_nonnull (o[0].data);
  g_assert_null (o[2].data);
  g_assert_cmpfloat (o[2].max, ==, 1.0);
  fx_store_run_row *all = NULL;
  g_assert_cmpint (fx_store_list_all_runs (store, arena, &all, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 4);

  /* the same outputs: same, every output listed as passing */
  fx_diff *diff = fx_diff_new ("a", "a2");
  g_assert_cmpint (fx_diff_stored_runs (diff, store, a, store, a2, NULL, NULL), ==, FX_OK);
  g_assert_cmpuint (fx_diff_count (diff), ==, 0);
  size_t outputs = 0;
  for (size_t i = 0; i < diff->n_entries; i++)
    if (strcmp (diff->entries[i].item, "output") == 0)
      {
        outputs++;
        g_assert_cmpstr (diff->entries[i].new_text, ==, "pass");
        g_assert_cmpfloat (diff->entries[i].max_abs, ==, 0);
      }
  g_assert_cmpuint (outputs, ==, 3);
  fx_diff_free (diff);

  /* one element of output #2 moved by 0.5: that output fails, with its numbers */
  diff = fx_diff_new ("a", "b");
  g_assert_cmpint (fx_diff_stored_runs (diff, store, a, store, b, NULL, NULL), ==, FX_OK);
  g_assert_cmpuint (fx_diff_count (diff), ==, 1);
  const fx_diff_entry *bad = NULL;
  for (size_t i = 0; i < diff->n_entries; i++)
    if (!diff->entries[i].informational)
      bad = &diff->entries[i];
  g_assert_nonnull (bad);
  g_assert_cmpstr (bad->name_a, ==, "#2");
  g_assert_cmpfloat_with_epsilon (bad->max_abs, 0.5, 1e-6);
  g_assert_cmpfloat_with_epsilon (bad->rmse, 0.25, 1e-6);
  g_assert_nonnull (strstr (bad->new_text, "Accuracy failed"));
  fx_diff_free (diff);

  /* other inputs: named as a difference; output #2 kept on one side only: "too large to keep", not a number */
  diff = fx_diff_new ("a", "c");
  g_assert_cmpint (fx_diff_stored_runs (diff, store, a, store, c, NULL, NULL), ==, FX_OK);
  fx_buf text;
  fx_buf_init (&text);
  fx_diff_print_text (diff, false, &text);
  g_assert_nonnull (strstr (text.data, "inputs (different values"));
  g_assert_nonnull (strstr (text.data, "~ output #2: outputs too large to keep: float32[4] min 1 max 1 mean 1"));
  g_assert_cmpuint (fx_diff_count (diff), ==, 1);
  fx_buf_free (&text);
  fx_diff_free (diff);
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (path);
}

/* Makes path a workspace with the sample (write_sample), then runs sql on it: what an older build wrote. */
static void
make_older (const char *path, const char *sql)
{
  fx_store *store = open_ok (path);
  write_sample (store, "h1", 0);
  fx_store_close (store);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
}

/* Makes path a schema-5 workspace with one run, as a build before run outputs wrote it. */
static void
make_v5 (const char *path)
{
  make_older (path, "DROP TABLE run_outputs; ALTER TABLE runs DROP COLUMN inputs;"
              " ALTER TABLE runs DROP COLUMN inputs_hash; ALTER TABLE runs DROP COLUMN n_outputs;"
              " ALTER TABLE kernels DROP COLUMN part; PRAGMA user_version = 5");
}

/* A schema-5 workspace opens read-only as it is (its runs have no outputs), and a writable open migrates it: its
   run reads back without outputs, new runs keep theirs. A migration that fails halfway (here: a table in the way of
   the step's CREATE TABLE) is rolled back whole: the file stays a valid schema-5 workspace with its rows, and opens
   once the obstacle is gone; one killed before its COMMIT leaves schema 5 too. */
static void
test_migration_v6 (void)
{
  g_autofree char *path = tmp_workspace ();
  make_v5 (path);
  fx_store *ro = NULL;
  g_assert_cmpint (fx_store_open_readonly (path, &ro, NULL), ==, FX_OK);
  fx_arena *arena = fx_arena_new ();
  fx_store_run_row *runs = NULL;
  size_t n = 0;
  g_assert_cmpint (fx_store_list_all_runs (ro, arena, &runs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (runs[0].n_outputs, ==, -1);
  fx_store_run_output *o = NULL;
  g_assert_cmpint (fx_store_list_run_outputs (ro, runs[0].id, arena, &o, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 0);
  fx_store_close (ro);

  /* the failed migration */
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "CREATE TABLE run_outputs (x)", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  fx_store *store = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (path, false, &store, &diag), !=, FX_OK);
  g_assert_null (store);
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT (SELECT user_version FROM pragma_user_version),"
                                       " (SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'inputs'),"
                                       " (SELECT count(*) FROM runs), (SELECT count(*) FROM compiles)", -1, &stmt,
                                       NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (stmt, 0), ==, 5);
  g_assert_cmpint (sqlite3_column_int (stmt, 1), ==, 0); /* the step's ALTERs were undone with it */
  g_assert_cmpint (sqlite3_column_int (stmt, 2), ==, 1);
  g_assert_cmpint (sqlite3_column_int (stmt, 3), ==, 1);
  sqlite3_finalize (stmt);
  g_assert_cmpint (sqlite3_exec (db, "DROP TABLE run_outputs", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  /* A process killed halfway through the step (its ALTERs done, the table made, no COMMIT yet) leaves schema 5:
     the WAL's uncommitted frames are discarded on the next open. */
  int pipefd[2];
  g_assert_cmpint (pipe (pipefd), ==, 0);
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      close (pipefd[0]);
      sqlite3 *child = NULL;
      if (sqlite3_open (path, &child) != SQLITE_OK
          || sqlite3_exec (child, "PRAGMA journal_mode = WAL; BEGIN IMMEDIATE; ALTER TABLE runs ADD COLUMN inputs TEXT;"
                           " CREATE TABLE run_outputs (id INTEGER PRIMARY KEY); PRAGMA user_version = 6",
                           NULL, NULL, NULL) != SQLITE_OK
          || write (pipefd[1], "x", 1) != 1)
        _exit (1);
      for (;;)
        pause ();
    }
  close (pipefd[1]);
  char ch;
  g_assert_cmpint (read (pipefd[0], &ch, 1), ==, 1);
  close (pipefd[0]);
  kill (pid, SIGKILL);
  int status = 0;
  waitpid (pid, &status, 0);
  g_assert_true (WIFSIGNALED (status));
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT (SELECT user_version FROM pragma_user_version),"
                                       " (SELECT count(*) FROM sqlite_master WHERE name = 'run_outputs'),"
                                       " (SELECT count(*) FROM runs)", -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (stmt, 0), ==, 5);
  g_assert_cmpint (sqlite3_column_int (stmt, 1), ==, 0);
  g_assert_cmpint (sqlite3_column_int (stmt, 2), ==, 1);
  sqlite3_finalize (stmt);
  sqlite3_close (db);

  store = open_ok (path);
  g_assert_cmpint (fx_store_schema_version (store), ==, FX_STORE_SCHEMA_VERSION);
  g_assert_cmpint (fx_store_list_all_runs (store, arena, &runs, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (runs[0].n_outputs, ==, -1);
  g_assert_null (runs[0].inputs_hash);
  int64_t fresh = add_run_with_outputs (store, "eager", 0, FX_RUN_OUTPUTS_CAP, "h0");
  g_assert_cmpint (fx_store_list_run_outputs (store, fresh, arena, &o, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 3);
  /* the old run against the new: outputs not kept on one side, said so, not a difference */
  fx_diff *diff = fx_diff_new ("old", "new");
  g_assert_cmpint (fx_diff_stored_runs (diff, store, runs[0].id, store, fresh, NULL, NULL), ==, FX_OK);
  bool said = false;
  for (size_t i = 0; i < diff->n_entries; i++)
    said |= diff->entries[i].field && strcmp (diff->entries[i].field, "outputs") == 0
            && strcmp (diff->entries[i].old_text, "not kept") == 0 && diff->entries[i].informational;
  g_assert_true (said);
  fx_diff_free (diff);
  fx_arena_free (arena);
  fx_store_close (store);
  remove_workspace (path);
}

/* A schema-6 workspace (kernels without their part) lists its kernels read-only, none of a part; a writable open
   migrates it to 7, and a backward's kernels are marked. */
static void
test_kernel_part_v6 (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = NULL;
  make_older (path, "ALTER TABLE kernels DROP COLUMN part; PRAGMA user_version = 6");
  fx_arena *arena = fx_arena_new ();
  fx_store_kernel *k = NULL;
  size_t n = 0;
  int64_t c = 0;
  g_assert_cmpint (fx_store_open_readonly (path, &store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_schema_version (store), ==, 6);
  g_assert_cmpint (fx_store_find_compile (store, "0/1", &c, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_list_kernels (store, c, arena, &k, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 1);
  g_assert_null (k[0].part);
  fx_store_close (store);
  store = open_ok (path);
  g_assert_cmpint (fx_store_schema_version (store), ==, 7);
  g_assert_cmpint (fx_store_add_kernel (store, c, 1, 0, "triton_per_fused_sum_0", "triton", "cuda", "def k(): pass",
                                        "sum_1", "aten.sum", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_set_kernels_part (store, c, 1, "backward", NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_list_kernels (store, c, arena, &k, &n, NULL), ==, FX_OK);
  g_assert_cmpuint (n, ==, 2);
  g_assert_null (k[0].part);
  g_assert_cmpstr (k[1].part, ==, "backward");
  fx_store_close (store);
  fx_arena_free (arena);
  remove_workspace (path);
}

/* A bulk import's pages go to the file from a writer thread (engine/store/fx-store-vfs.c). With 20 MB written into a
   2 MB page cache, sqlite evicts pages and reads them back while their writes may still be queued: every artifact
   must read back as written, inside the transaction and after the commit, and the file must pass its check. */
static char *
bulk_text (int i, size_t len)
{
  char *t = g_malloc (len + 1);
  for (size_t k = 0; k < len; k++)
    t[k] = (char) ('a' + (int) ((k * 7 + (size_t) i * 13) % 26));
  snprintf (t, len + 1 < 16 ? len + 1 : 16, "#%d#", i);
  t[strlen (t)] = 'x';
  t[len] = 0;
  return t;
}

static void
check_bulk_artifacts (fx_store *store, int64_t compile, int n, size_t len)
{
  fx_arena *arena = fx_arena_new ();
  fx_store_kv *kv = NULL;
  size_t got = 0;
  g_assert_cmpint (fx_store_list_artifacts (store, compile, arena, &kv, &got, NULL), ==, FX_OK);
  g_assert_cmpuint (got, ==, (size_t) n);
  for (int i = 0; i < n; i++)
    {
      g_autofree char *want = bulk_text (i, len);
      g_assert_cmpstr (kv[i].value, ==, want);
    }
  fx_arena_free (arena);
}

static void
test_bulk_queued_writes (void)
{
  enum { N = 1000 };
  const size_t len = 20000;
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  int64_t input = 0, c = 0;
  g_assert_cmpint (fx_store_begin_bulk (store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_input (store, "/bulk", "torch_trace", "bulk", 1, &input, NULL), ==, FX_OK);
  fx_compile_id cid = { -1, 0, 0, 0 };
  g_assert_cmpint (fx_store_ensure_compile (store, input, &cid, &c, NULL), ==, FX_OK);
  for (int i = 0; i < N; i++)
    {
      g_autofree char *t = bulk_text (i, len);
      g_assert_cmpint (fx_store_add_artifact (store, input, c, "part", "string", t, NULL), ==, FX_OK);
      if (i == N / 2)
        check_bulk_artifacts (store, c, i + 1, len);
    }
  check_bulk_artifacts (store, c, N, len);
  g_assert_cmpint (fx_store_commit (store, NULL), ==, FX_OK);
  fx_store_close (store);

  assert_integrity (path);
  store = open_ok (path);
  check_bulk_artifacts (store, c, N, len);
  fx_store_close (store);
  remove_workspace (path);
}

/* A write that fails on the writer thread (here: past the file size limit, as on a full disk) fails the import with
   an error, the rollback leaves a sound workspace without the input, and the file can be imported into again. */
static void
test_bulk_write_error (void)
{
  g_autofree char *path = tmp_workspace ();
  fx_store *store = open_ok (path);
  fx_store_close (store);
  struct stat st0;
  g_assert_cmpint (stat (path, &st0), ==, 0);

  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      signal (SIGXFSZ, SIG_IGN);
      struct rlimit lim = { (rlim_t) st0.st_size + (4 << 20), (rlim_t) st0.st_size + (4 << 20) };
      setrlimit (RLIMIT_FSIZE, &lim);
      fx_store *s = NULL;
      if (fx_store_open (path, false, &s, NULL) != FX_OK || fx_store_begin_bulk (s, NULL) != FX_OK)
        _exit (2);
      int64_t in = 0, cc = 0;
      fx_compile_id id = { -1, 0, 0, 0 };
      fx_store_add_input (s, "/big", "torch_trace", "big", 1, &in, NULL);
      fx_store_ensure_compile (s, in, &id, &cc, NULL);
      fx_diag diag;
      fx_diag_clear (&diag);
      fx_status failed = FX_OK;
      for (int i = 0; i < 2000 && failed == FX_OK; i++)
        {
          char *t = bulk_text (i, 20000);
          failed = fx_store_add_artifact (s, in, cc, "part", "string", t, &diag);
          g_free (t);
        }
      if (failed == FX_OK)
        failed = fx_store_commit (s, &diag);
      if (failed == FX_OK)
        _exit (3); /* 40 MB went into a file limited to 4 MB more */
      fx_store_rollback (s);
      fx_store_close (s);
      _exit (diag.message[0] != 0 ? 0 : 4);
    }
  int status = 0;
  waitpid (pid, &status, 0);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);

  assert_integrity (path);
  store = open_ok (path);
  int64_t count = -1;
  g_assert_cmpint (fx_store_count (store, "inputs", &count, NULL), ==, FX_OK);
  g_assert_cmpint (count, ==, 0);
  g_assert_cmpint (fx_store_count (store, "artifacts", &count, NULL), ==, FX_OK);
  g_assert_cmpint (count, ==, 0);
  /* and it takes an import again */
  int64_t input = 0, c = 0;
  g_assert_cmpint (fx_store_begin_bulk (store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_input (store, "/small", "torch_trace", "small", 1, &input, NULL), ==, FX_OK);
  fx_compile_id cid = { -1, 0, 0, 0 };
  g_assert_cmpint (fx_store_ensure_compile (store, input, &cid, &c, NULL), ==, FX_OK);
  for (int i = 0; i < 50; i++)
    {
      g_autofree char *t = bulk_text (i, 20000);
      g_assert_cmpint (fx_store_add_artifact (store, input, c, "part", "string", t, NULL), ==, FX_OK);
    }
  g_assert_cmpint (fx_store_commit (store, NULL), ==, FX_OK);
  check_bulk_artifacts (store, c, 50, 20000);
  fx_store_close (store);
  assert_integrity (path);
  remove_workspace (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/compile-id", test_compile_id);
  g_test_add_func ("/store/roundtrip", test_roundtrip);
  g_test_add_func ("/store/bad-files", test_bad_files);
  g_test_add_func ("/store/reader-writer", test_reader_writer);
  g_test_add_func ("/store/migration", test_migration);
  g_test_add_func ("/store/links", test_links);
  g_test_add_func ("/store/readonly-v3", test_readonly_v3);
  g_test_add_func ("/store/sigkill", test_sigkill);
  g_test_add_func ("/store/concurrent-create", test_concurrent_create);
  g_test_add_func ("/store/lock-wait", test_lock_wait);
  g_test_add_func ("/store/empty-file", test_empty_file);
  g_test_add_func ("/store/incomplete-run", test_incomplete_run);
  g_test_add_func ("/store/run-outputs", test_run_outputs);
  g_test_add_func ("/store/migration-v6", test_migration_v6);
  g_test_add_func ("/store/kernel-part-v6", test_kernel_part_v6);
  g_test_add_func ("/store/scratch", test_scratch);
  g_test_add_func ("/store/bulk-queued-writes", test_bulk_queued_writes);
  g_test_add_func ("/store/bulk-write-error", test_bulk_write_error);
  return g_test_run ();
}
