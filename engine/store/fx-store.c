/* fx-store.c: the sqlite workspace store (schema, migrations, transactional writes, plain-struct reads). */
#include "fx/store.h"
#include "fx/ranks.h"
#include "fx-store-vfs.h"

#include <ctype.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Prepared statements are kept for reuse: an import runs the same few INSERTs hundreds of thousands of times, and
   preparing each one again cost about a sixth of the import. Keyed by the SQL text (a copy, so SQL built in a
   local buffer is safe); release() resets a kept statement instead of finalizing it. */
#define STMT_CACHE 64

typedef struct
{
  char *sql;
  uint64_t hash;
  sqlite3_stmt *stmt;
} cached_stmt;

struct fx_store
{
  sqlite3 *db;
  int64_t workspace_id;
  char path[512];
  cached_stmt cache[STMT_CACHE];
  int n_cache;
  /* The file's schema version: a read-only open does not migrate, and the readers of schema-4 data fall back to
     what an older file holds. */
  int schema;
  /* The current wait for another process's lock (busy_wait). */
  double wait_start, next_report, waited_s;
  bool busy;               /* the last failure was another process's lock */
  bool scratch;            /* fx_store_set_scratch: its journal mode is left alone */
  bool bulk;               /* fx_store_begin_bulk switched to the rollback journal: WAL again at commit/rollback */
};

/* Version 1 of the schema. Later versions append steps to migrations[] instead of editing this text, so an old
   file is brought up step by step. */
static const char schema_v1[] =
  "CREATE TABLE workspaces (id INTEGER PRIMARY KEY, name TEXT NOT NULL, created REAL NOT NULL);\n"
  "CREATE TABLE inputs (id INTEGER PRIMARY KEY, workspace INTEGER NOT NULL REFERENCES workspaces(id)"
  " ON DELETE CASCADE, path TEXT NOT NULL, kind TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, size INTEGER,"
  " imported REAL NOT NULL);\n"
  "CREATE TABLE frames (id INTEGER PRIMARY KEY, input INTEGER NOT NULL REFERENCES inputs(id) ON DELETE CASCADE,"
  " frame_id INTEGER NOT NULL, ca_id INTEGER NOT NULL, UNIQUE (input, ca_id, frame_id));\n"
  "CREATE TABLE compiles (id INTEGER PRIMARY KEY, frame INTEGER NOT NULL REFERENCES frames(id) ON DELETE CASCADE,"
  " compile_id TEXT NOT NULL, frame_compile_id INTEGER NOT NULL, attempt INTEGER NOT NULL,"
  " function TEXT, file TEXT, line INTEGER, user_stack TEXT, has_graph_break INTEGER NOT NULL DEFAULT 0,"
  " has_recompile INTEGER NOT NULL DEFAULT 0, has_metrics INTEGER NOT NULL DEFAULT 0, fail_type TEXT,"
  " fail_reason TEXT, start_time REAL, entire_frame_compile_s REAL, backend_compile_s REAL,"
  " inductor_compile_s REAL, graph_op_count INTEGER, guard_count INTEGER,"
  " UNIQUE (frame, frame_compile_id, attempt));\n"
  "CREATE TABLE graphs (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, stage TEXT NOT NULL, n_nodes INTEGER NOT NULL, json TEXT, text TEXT);\n"
  "CREATE TABLE guards (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, kind TEXT NOT NULL, source TEXT, code TEXT NOT NULL, user_line TEXT);\n"
  "CREATE TABLE guard_failures (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, failed_compile TEXT, reason TEXT NOT NULL, user_stack TEXT);\n"
  "CREATE TABLE graph_breaks (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, reason TEXT NOT NULL, explanation TEXT, user_stack TEXT, text TEXT);\n"
  "CREATE TABLE kernels (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, ordinal INTEGER NOT NULL, call_order INTEGER, name TEXT NOT NULL, kind TEXT NOT NULL,"
  " device TEXT, code TEXT, nodes TEXT, aten TEXT);\n"
  "CREATE TABLE fusion_groups (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, name TEXT NOT NULL, nodes TEXT, text TEXT);\n"
  "CREATE TABLE artifacts (id INTEGER PRIMARY KEY, input INTEGER NOT NULL REFERENCES inputs(id)"
  " ON DELETE CASCADE, compile INTEGER REFERENCES compiles(id) ON DELETE CASCADE, name TEXT NOT NULL,"
  " kind TEXT NOT NULL, text TEXT);\n"
  "CREATE TABLE metrics (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, key TEXT NOT NULL, value TEXT);\n"
  "CREATE TABLE events (id INTEGER PRIMARY KEY, input INTEGER NOT NULL REFERENCES inputs(id) ON DELETE CASCADE,"
  " compile INTEGER REFERENCES compiles(id) ON DELETE CASCADE, name TEXT, phase TEXT, ts_us REAL, json TEXT);\n"
  "CREATE TABLE runs (id INTEGER PRIMARY KEY, graph INTEGER REFERENCES graphs(id) ON DELETE CASCADE,"
  " backend TEXT NOT NULL, mode TEXT, options TEXT, device TEXT, compile_ms REAL, run_ms_median REAL,"
  " run_ms_min REAL, run_ms_max REAL, peak_bytes INTEGER, accuracy REAL, error TEXT, created REAL);\n"
  "CREATE INDEX graphs_compile ON graphs(compile);\n"
  "CREATE INDEX guards_compile ON guards(compile);\n"
  "CREATE INDEX kernels_compile ON kernels(compile);\n"
  "CREATE INDEX artifacts_compile ON artifacts(compile);\n"
  "CREATE INDEX metrics_compile ON metrics(compile);\n"
  "CREATE INDEX events_input ON events(input);\n";

/* Version 2: indexes for the per-compile counts fxwb ls shows. */
static const char schema_v2[] =
  "CREATE INDEX guard_failures_compile ON guard_failures(compile);\n"
  "CREATE INDEX graph_breaks_compile ON graph_breaks(compile);\n"
  "CREATE INDEX fusion_groups_compile ON fusion_groups(compile);\n"
  "CREATE INDEX compiles_frame ON compiles(frame);\n"
  "CREATE INDEX frames_input ON frames(input);\n";

/* Version 3: what a run found (accuracy verdict, timed calls, kernel count) and the engine compile that holds the
   kernels a run's backend generated. */
static const char schema_v3[] =
  "ALTER TABLE runs ADD COLUMN verdict TEXT;\n"
  "ALTER TABLE runs ADD COLUMN repeat INTEGER;\n"
  "ALTER TABLE runs ADD COLUMN n_kernels INTEGER;\n"
  "ALTER TABLE runs ADD COLUMN engine_compile INTEGER REFERENCES compiles(id) ON DELETE SET NULL;\n"
  "CREATE INDEX runs_graph ON runs(graph);\n";

/* Version 4: what the TORCH_COMPILE_DEBUG files and the remaining trace records hold beyond raw text: the scheduler
   nodes of ir_pre_fusion.txt / ir_post_fusion.txt, the kernel -> post-grad -> pre-grad node mappings, symbolic-shape
   specializations and guards, and the link between a debug folder's compile and the trace compile that printed
   the same output code (output_codes keeps each compile's output-code md5 and kernel names to find it). */
static const char schema_v4[] =
  "CREATE TABLE ir_nodes (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, stage TEXT NOT NULL, ordinal INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,"
  " ir_type TEXT, fused_into TEXT, members TEXT, device TEXT, iteration TEXT, sizes TEXT, writes TEXT,"
  " reads TEXT, unmet TEXT, buffers TEXT, extern_kernel TEXT, text TEXT, kernel TEXT, handle INTEGER);\n"
  "CREATE INDEX ir_nodes_compile ON ir_nodes(compile);\n"
  "CREATE TABLE provenance (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, kernel TEXT NOT NULL, handle INTEGER, post_nodes TEXT, pre_nodes TEXT);\n"
  "CREATE INDEX provenance_compile ON provenance(compile, kernel);\n"
  "CREATE TABLE shape_events (id INTEGER PRIMARY KEY, compile INTEGER REFERENCES compiles(id) ON DELETE CASCADE,"
  " input INTEGER NOT NULL REFERENCES inputs(id) ON DELETE CASCADE, kind TEXT NOT NULL, symbol TEXT,"
  " sources TEXT, value TEXT, expr TEXT, reason TEXT, user_stack TEXT, stack TEXT);\n"
  "CREATE INDEX shape_events_compile ON shape_events(compile);\n"
  "CREATE TABLE output_codes (compile INTEGER PRIMARY KEY REFERENCES compiles(id) ON DELETE CASCADE,"
  " input INTEGER NOT NULL REFERENCES inputs(id) ON DELETE CASCADE, md5 TEXT NOT NULL, kernels TEXT);\n"
  "CREATE INDEX output_codes_md5 ON output_codes(md5);\n"
  "CREATE INDEX output_codes_kernels ON output_codes(kernels);\n"
  "CREATE TABLE compile_links (id INTEGER PRIMARY KEY, compile INTEGER NOT NULL REFERENCES compiles(id)"
  " ON DELETE CASCADE, debug_compile INTEGER NOT NULL REFERENCES compiles(id) ON DELETE CASCADE, how TEXT,"
  " UNIQUE (compile, debug_compile));\n"
  "CREATE INDEX compile_links_debug ON compile_links(debug_compile);\n";

/* Version 5: a run is written "started" before it runs and set "done" after, so one that was killed (a crashed
   backend, ^C) shows as incomplete instead of passing for a finished run with empty columns. NULL: written
   before version 5, when runs were only stored finished. */
static const char schema_v5[] =
  "ALTER TABLE runs ADD COLUMN status TEXT;\n";

/* Version 6: a run's outputs, so two stored runs can be diffed number by number, and the inputs it ran on (a
   description and a hash of their values: runs of one compare share them, runs of other graphs may not).
   n_outputs NULL: outputs not kept (a run stored before version 6). An output's data is its contiguous bytes; NULL
   data with numel > 0: over the run's size cap, only shape, dtype and the summary (min, max, mean) kept. */
static const char schema_v6[] =
  "ALTER TABLE runs ADD COLUMN inputs TEXT;\n"
  "ALTER TABLE runs ADD COLUMN inputs_hash TEXT;\n"
  "ALTER TABLE runs ADD COLUMN n_outputs INTEGER;\n"
  "CREATE TABLE run_outputs (id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
  " ordinal INTEGER NOT NULL, kind TEXT NOT NULL, dtype TEXT, shape TEXT, strides TEXT, device TEXT, numel INTEGER,"
  " min REAL, max REAL, mean REAL, value TEXT, data BLOB, UNIQUE (run, ordinal));\n";

/* Version 7: the part of a training compile a kernel belongs to: "backward" for the kernels of its backward
   Inductor compile (FX_BACKWARD_SUFFIX), NULL for the forward's and for any other compile's. */
static const char schema_v7[] =
  "ALTER TABLE kernels ADD COLUMN part TEXT;\n";

/* migrations[v] brings a file from user_version v to v + 1. */
static const char *const migrations[] = { schema_v1, schema_v2, schema_v3, schema_v4, schema_v5, schema_v6,
                                          schema_v7 };
_Static_assert (sizeof migrations / sizeof migrations[0] == FX_STORE_SCHEMA_VERSION,
                "one migration per schema version");

/* ------------------------------------------------------------------ waiting for the lock */

/* Process-wide: how long a writer waits for another process's lock, and who hears about the wait. */
static struct
{
  double limit_s;            /* 0: as long as it takes */
  double report_s;           /* first report after this long, then every 5 s */
  fx_store_wait_fn fn;
  void *user_data;
} lock_wait = { 0, 1.0, NULL, NULL };

void
fx_store_set_lock_wait (double limit_s, double report_after_s, fx_store_wait_fn fn, void *user_data)
{
  lock_wait.limit_s = limit_s > 0 ? limit_s : 0;
  lock_wait.report_s = report_after_s > 0 ? report_after_s : 1.0;
  lock_wait.fn = fn;
  lock_wait.user_data = user_data;
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* The wait before retry `count` of a locked workspace: short, growing sleeps (a lock held for a moment costs a
   millisecond, one held for minutes a wakeup every 100 ms). */
static void
lock_backoff (int count)
{
  static const int sleeps_us[] = { 1000, 2000, 5000, 10000, 20000, 50000, 100000 };
  int n = (int) (sizeof sleeps_us / sizeof sleeps_us[0]);
  usleep ((useconds_t) sleeps_us[count < n ? count : n - 1]);
}

/* sqlite's busy handler: count is 0 at the first retry of a statement. Waits (lock_backoff) until the limit;
   returns 0 to give up. */
static int
busy_wait (void *arg, int count)
{
  fx_store *store = arg;
  double t = now_s ();
  if (count == 0)
    {
      store->wait_start = t;
      store->next_report = t + lock_wait.report_s;
    }
  double waited = t - store->wait_start;
  store->waited_s = waited;
  if (lock_wait.limit_s > 0 && waited >= lock_wait.limit_s)
    return 0;
  if (lock_wait.fn && t >= store->next_report)
    {
      lock_wait.fn (store->path, waited, lock_wait.user_data);
      store->next_report = t + 5.0;
    }
  lock_backoff (count);
  return 1;
}

static fx_status
busy_error (fx_store *store, fx_diag *diag)
{
  store->busy = true;
  return fx_diag_set (diag, FX_ERR_IO, "%s: the workspace is locked by another process (gave up after %.1f s)",
                      store->path, store->waited_s);
}

static fx_status
db_error (fx_store *store, fx_diag *diag, const char *what)
{
  if ((sqlite3_errcode (store->db) & 0xff) == SQLITE_BUSY)
    return busy_error (store, diag);
  return fx_diag_set (diag, FX_ERR_IO, "%s: %s: %s", store->path, what, sqlite3_errmsg (store->db));
}

static fx_status
exec (fx_store *store, const char *sql, fx_diag *diag)
{
  char *err = NULL;
  int rc = sqlite3_exec (store->db, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK)
    {
      fx_status st = (rc & 0xff) == SQLITE_BUSY ? busy_error (store, diag)
                     : fx_diag_set (diag, FX_ERR_IO, "%s: %s", store->path, err ? err : "sqlite error");
      sqlite3_free (err);
      return st;
    }
  return FX_OK;
}

static uint64_t
sql_hash (const char *sql)
{
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *) sql; *p; p++)
    h = (h ^ *p) * 1099511628211ull;
  return h;
}

/* A statement ready to bind: a kept one (reset, bindings cleared) or a new one, kept while there is room. A caller
   steps it and hands it to release(); no two uses of the same SQL are ever open at once. */
static sqlite3_stmt *
prepare (fx_store *store, const char *sql, fx_diag *diag)
{
  uint64_t h = sql_hash (sql);
  for (int i = 0; i < store->n_cache; i++)
    if (store->cache[i].hash == h && strcmp (store->cache[i].sql, sql) == 0)
      {
        sqlite3_stmt *stmt = store->cache[i].stmt;
        sqlite3_reset (stmt);
        sqlite3_clear_bindings (stmt);
        return stmt;
      }
  sqlite3_stmt *stmt = NULL;
  bool keep = store->n_cache < STMT_CACHE;
  if (sqlite3_prepare_v3 (store->db, sql, -1, keep ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, NULL) != SQLITE_OK)
    {
      db_error (store, diag, "prepare");
      sqlite3_finalize (stmt);
      return NULL;
    }
  if (keep)
    {
      char *copy = strdup (sql);
      if (copy)
        store->cache[store->n_cache++] = (cached_stmt) { copy, h, stmt };
    }
  return stmt;
}

/* Done with a statement from prepare(): a kept one is reset (releasing its locks and row), another finalized. */
static void
release (fx_store *store, sqlite3_stmt *stmt)
{
  if (!stmt)
    return;
  for (int i = 0; i < store->n_cache; i++)
    if (store->cache[i].stmt == stmt)
      {
        sqlite3_reset (stmt);
        sqlite3_clear_bindings (stmt);
        return;
      }
  sqlite3_finalize (stmt);
}

static void
bind_text (sqlite3_stmt *stmt, int i, const char *s)
{
  if (s)
    sqlite3_bind_text (stmt, i, s, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (stmt, i);
}

/* Binds a statement's parameters left to right (?1, ?2, ...), so a writer lists its values in column order
   instead of numbering each bind call. NULL strings, absent ids (0) and unknown numbers bind SQL NULL. */
typedef struct binder
{
  sqlite3_stmt *stmt;
  int i;
} binder;

static binder
binder_of (sqlite3_stmt *stmt)
{
  return (binder) { stmt, 0 };
}

static void
b_text (binder *b, const char *s)
{
  bind_text (b->stmt, ++b->i, s);
}

/* A large text bound without sqlite's copy: only for a statement stepped and released (its bindings cleared)
   before the writer returns, while s is still the caller's. */
static void
b_text_nocopy (binder *b, const char *s)
{
  if (s)
    sqlite3_bind_text (b->stmt, ++b->i, s, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null (b->stmt, ++b->i);
}

static void
b_int (binder *b, int64_t v)
{
  sqlite3_bind_int64 (b->stmt, ++b->i, v);
}

static void
b_real (binder *b, double v)
{
  sqlite3_bind_double (b->stmt, ++b->i, v);
}

/* present false: NULL (the parameter is left unbound, which sqlite reads as NULL). */
static void
b_int_if (binder *b, int64_t v, bool present)
{
  ++b->i;
  if (present)
    sqlite3_bind_int64 (b->stmt, b->i, v);
}

static void
b_real_if (binder *b, double v, bool present)
{
  ++b->i;
  if (present)
    sqlite3_bind_double (b->stmt, b->i, v);
}

/* A row id; 0 (none) is NULL. */
static void
b_id (binder *b, int64_t id)
{
  b_int_if (b, id, id != 0);
}

/* Runs a prepared statement that returns no rows and finalizes it. */
static fx_status
step_done (fx_store *store, sqlite3_stmt *stmt, fx_diag *diag)
{
  int rc = sqlite3_step (stmt);
  fx_status st = FX_OK;
  if (rc != SQLITE_DONE)
    st = db_error (store, diag, "write");
  release (store, stmt);
  return st;
}

static int
user_version (fx_store *store)
{
  sqlite3_stmt *stmt = prepare (store, "PRAGMA user_version", NULL);
  int v = -1;
  if (stmt && sqlite3_step (stmt) == SQLITE_ROW)
    v = sqlite3_column_int (stmt, 0);
  release (store, stmt);
  return v;
}

/* "FXWB": marks the sqlite files this store writes (PRAGMA application_id). */
#define FX_STORE_APPLICATION_ID 0x46585742 /* = 1180194626, written by the first migration */

static int64_t
pragma_int (fx_store *store, const char *sql)
{
  sqlite3_stmt *stmt = prepare (store, sql, NULL);
  int64_t v = -1;
  if (stmt && sqlite3_step (stmt) == SQLITE_ROW)
    v = sqlite3_column_int64 (stmt, 0);
  release (store, stmt);
  return v;
}

/* What the file is: *v its schema version (0: an empty or fresh file). Refuses another program's sqlite file and
   a newer schema; only reads. */
static fx_status check_file_now (fx_store *store, int *v, fx_diag *diag);

/* The reads below must see one state of the file: between two autocommit reads another process may commit the
   workspace it is creating (version 0 read, then its tables counted: "not a workspace"). Outside a transaction they
   run in a read transaction of their own. */
static fx_status
check_file (fx_store *store, int *v, fx_diag *diag)
{
  if (!sqlite3_get_autocommit (store->db))
    return check_file_now (store, v, diag);
  fx_status st = exec (store, "BEGIN", diag);
  if (st != FX_OK)
    return st;
  st = check_file_now (store, v, diag);
  fx_status end = exec (store, st == FX_OK ? "COMMIT" : "ROLLBACK", st == FX_OK ? diag : NULL);
  return st != FX_OK ? st : end;
}

static fx_status
check_file_now (fx_store *store, int *v, fx_diag *diag)
{
  *v = user_version (store);
  int target = (int) (sizeof migrations / sizeof migrations[0]);
  if (*v < 0)
    return db_error (store, diag, "reading the schema version");
  /* Another program's sqlite file is refused rather than altered. */
  int64_t app = pragma_int (store, "PRAGMA application_id");
  int64_t ours = pragma_int (store, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
                                    " ('workspaces', 'inputs', 'frames', 'compiles')");
  int64_t tables = pragma_int (store, "SELECT count(*) FROM sqlite_master WHERE type = 'table'");
  if ((*v == 0 && tables > 0) || (*v > 0 && app != FX_STORE_APPLICATION_ID && (app != 0 || ours != 4)))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "%s: an sqlite file, but not an FX Workbench workspace",
                        store->path);
  if (*v > target)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "%s: schema version %d is newer than this build's %d",
                        store->path, *v, target);
  return FX_OK;
}

static int64_t
first_workspace (fx_store *store)
{
  int64_t id = pragma_int (store, "SELECT id FROM workspaces ORDER BY id LIMIT 1");
  return id > 0 ? id : 0;
}

/* Creates or migrates the schema and the workspace row. Everything happens inside one BEGIN IMMEDIATE
   transaction, and the version is read again once the lock is held: two processes creating the same workspace at
   once see it either empty or complete, never half-made ("table workspaces already exists"). */
static fx_status
migrate (fx_store *store, fx_diag *diag)
{
  int target = (int) (sizeof migrations / sizeof migrations[0]);
  int v = 0;
  fx_status st = exec (store, "BEGIN IMMEDIATE", diag);
  if (st != FX_OK)
    return st;
  if ((st = check_file (store, &v, diag)) != FX_OK)
    goto fail;
  if (v == 0 && (st = exec (store, "PRAGMA application_id = 1180194626", diag)) != FX_OK)
    goto fail;
  for (; v < target; v++)
    {
      char pragma[64];
      snprintf (pragma, sizeof pragma, "PRAGMA user_version = %d", v + 1);
      if ((st = exec (store, migrations[v], diag)) != FX_OK || (st = exec (store, pragma, diag)) != FX_OK)
        goto fail;
    }
  store->workspace_id = first_workspace (store);
  if (store->workspace_id == 0)
    {
      sqlite3_stmt *stmt = prepare (store, "INSERT INTO workspaces (name, created) VALUES (?, julianday('now'))",
                                    diag);
      if (!stmt)
        {
          st = FX_ERR_IO;
          goto fail;
        }
      const char *base = strrchr (store->path, '/');
      binder b = binder_of (stmt);
      b_text (&b, base ? base + 1 : store->path);
      if ((st = step_done (store, stmt, diag)) != FX_OK)
        goto fail;
      store->workspace_id = sqlite3_last_insert_rowid (store->db);
    }
  return exec (store, "COMMIT", diag);

fail:
  exec (store, "ROLLBACK", NULL);
  return st;
}

fx_status
fx_store_open (const char *path, bool create, fx_store **out, fx_diag *diag)
{
  *out = NULL;
  fx_store *store = calloc (1, sizeof *store);
  if (!store)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  snprintf (store->path, sizeof store->path, "%s", path);
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2 (path, &store->db, flags, fx_store_vfs_name ()) != SQLITE_OK)
    {
      fx_status st = fx_diag_set (diag, FX_ERR_IO, "%s: cannot open workspace: %s", path,
                                  store->db ? sqlite3_errmsg (store->db) : "out of memory");
      fx_store_close (store);
      return st;
    }
  /* Another process's lock is waited for (fx_store_set_lock_wait), not an error. */
  sqlite3_busy_handler (store->db, busy_wait, store);
  /* Before anything is written: an existing file that is not a workspace is refused and left as it was. Only a
     create opens an empty file as a new workspace (an empty file is what mktemp makes; one that `fxwb ls` was
     pointed at by mistake must stay empty). A file that is not sqlite fails here with "file is not a database". */
  /* sqlite answers some lock conflicts at once, without asking the busy handler (switching a new file to WAL
     while another connection does, a read lock that cannot be upgraded): those are retried here, with the same
     growing waits and the same limit as the handler's. */
  fx_status st = FX_OK;
  double start = now_s ();
  for (int attempt = 0;; attempt++)
    {
      int v = 0;
      store->busy = false;
      st = check_file (store, &v, diag);
      if (st == FX_OK && v == 0 && !create && strcmp (path, ":memory:") != 0)
        st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "%s: not an FX Workbench workspace (an empty file); "
                          "workspaces are created by `fxwb import -o`", path);
      /* A new file gets 64 KiB pages before its first write (WAL fixes the size): a workspace is mostly graphs,
         artifacts and events of a few KiB each, and an import writes a quarter of the pages (and of the page-sized
         writes) of 4 KiB ones; older files keep theirs. */
      if (st == FX_OK && v == 0 && create)
        st = exec (store, "PRAGMA page_size = 16384", diag);
      if (st == FX_OK)
        st = exec (store, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL", diag);
      if (st == FX_OK)
        {
          store->workspace_id = v > 0 ? first_workspace (store) : 0;
          /* An up-to-date file with its workspace row is not written at all (a reader never waits on a writer). */
          if (v < FX_STORE_SCHEMA_VERSION || store->workspace_id == 0)
            st = migrate (store, diag);
        }
      if (st == FX_OK || !store->busy || (lock_wait.limit_s > 0 && now_s () - start >= lock_wait.limit_s))
        break;
      lock_backoff (attempt);
      if (diag)
        fx_diag_clear (diag);
    }
  if (st != FX_OK)
    {
      fx_store_close (store);
      return st;
    }
  store->schema = FX_STORE_SCHEMA_VERSION;
  *out = store;
  return FX_OK;
}

/* Whether the file has the schema-4 tables (IR nodes, provenance, shape events, links). */
static bool
has_v4 (fx_store *store)
{
  return store->schema >= 4;
}

/* Whether kernels have their part column (schema 7). */
static bool
has_v7 (fx_store *store)
{
  return store->schema >= 7;
}

void
fx_store_close (fx_store *store)
{
  if (!store)
    return;
  for (int i = 0; i < store->n_cache; i++)
    {
      sqlite3_finalize (store->cache[i].stmt);
      free (store->cache[i].sql);
    }
  sqlite3_close (store->db);
  free (store);
}

int
fx_store_schema_version (fx_store *store)
{
  return user_version (store);
}

int64_t
fx_store_workspace_id (fx_store *store)
{
  return store->workspace_id;
}

fx_status
fx_store_begin (fx_store *store, fx_diag *diag)
{
  return exec (store, "BEGIN IMMEDIATE", diag);
}

static void end_bulk (fx_store *store);

/* WAL writes every page twice (into the log, then the checkpoint copies it into the file) and reads it back in
   between: on a 100 MB trace a third of the import's CPU time. The rollback journal keeps only the old content of
   the pages a transaction changes, and pages past the file's end have none: a bulk import into a new file writes
   each page once. It is as safe (synchronous = FULL: the journal reaches the disk before the file is written; a
   killed import leaves a hot journal that the next open rolls back), but while it holds the write lock readers
   wait instead of seeing the last commit, so it is taken only for a workspace with no input yet (nobody has
   anything in it to look at) and only when no other connection has the file open (leaving WAL needs that; the
   pragma is tried once, without waiting). */
fx_status
fx_store_begin_bulk (fx_store *store, fx_diag *diag)
{
  if (!store->scratch && !store->bulk && sqlite3_get_autocommit (store->db)
      && strcmp (store->path, ":memory:") != 0 && pragma_int (store, "SELECT count(*) FROM inputs") == 0)
    {
      sqlite3_stmt *stmt = NULL;
      bool rollback_journal = false;
      sqlite3_busy_handler (store->db, NULL, NULL);
      if (sqlite3_prepare_v2 (store->db, "PRAGMA journal_mode = DELETE", -1, &stmt, NULL) == SQLITE_OK
          && sqlite3_step (stmt) == SQLITE_ROW)
        rollback_journal = sqlite3_column_text (stmt, 0)
                           && strcmp ((const char *) sqlite3_column_text (stmt, 0), "delete") == 0;
      sqlite3_finalize (stmt);
      sqlite3_busy_handler (store->db, busy_wait, store);
      if (rollback_journal)
        {
          store->bulk = true;
          /* The importer writes only ids it was given by the store: checking each foreign key is a lookup per
             row for nothing (sqlite takes this pragma outside a transaction only: here, and back in end_bulk). */
          if (exec (store, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = OFF", NULL) != FX_OK)
            end_bulk (store);
          else
            {
              /* The pages go to the file from a writer thread (fx-store-vfs.c); if it cannot start they are written
                 in place, as before. */
              int on = 1;
              sqlite3_file_control (store->db, "main", FX_STORE_FCNTL_QUEUE_WRITES, &on);
            }
        }
    }
  return fx_store_begin (store, diag);
}

/* Back to WAL after a bulk transaction. A failure (another process reading at this moment, past the lock wait)
   leaves the rollback journal, which is as safe; the next fx_store_open switches the file to WAL again. */
static void
end_bulk (fx_store *store)
{
  if (!store->bulk)
    return;
  store->bulk = false;
  int off = 0;
  sqlite3_file_control (store->db, "main", FX_STORE_FCNTL_QUEUE_WRITES, &off);
  exec (store, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", NULL);
}

fx_status
fx_store_commit (fx_store *store, fx_diag *diag)
{
  fx_status st = exec (store, "COMMIT", diag);
  if (st == FX_OK)
    end_bulk (store);
  return st;
}

void
fx_store_rollback (fx_store *store)
{
  if (!sqlite3_get_autocommit (store->db))
    exec (store, "ROLLBACK", NULL);
  end_bulk (store);
}

/* ------------------------------------------------------------------ compile ids */

static void
put_part (char *out, size_t size, int v)
{
  if (v < 0)
    snprintf (out, size, "-");
  else
    snprintf (out, size, "%d", v);
}

void
fx_compile_id_format (const fx_compile_id *cid, char *out, size_t size)
{
  char f[16], c[16], a[16];
  put_part (f, sizeof f, cid->frame_id);
  put_part (c, sizeof c, cid->frame_compile_id);
  if (cid->compiled_autograd_id >= 0)
    {
      char ca[16];
      put_part (ca, sizeof ca, cid->compiled_autograd_id);
      snprintf (out, size, "!%s/%s/%s", ca, f, c);
    }
  else
    snprintf (out, size, "%s/%s", f, c);
  if (cid->attempt > 0)
    {
      put_part (a, sizeof a, cid->attempt);
      size_t len = strlen (out);
      snprintf (out + len, size - len, "_%s", a);
    }
}

static const char *
parse_part (const char *p, int *v)
{
  if (*p == '-')
    {
      *v = -1;
      return p + 1;
    }
  if (*p < '0' || *p > '9')
    return NULL;
  long x = 0;
  while (*p >= '0' && *p <= '9')
    {
      x = x * 10 + (*p++ - '0');
      if (x > 1000000000)
        return NULL;
    }
  *v = (int) x;
  return p;
}

fx_status
fx_compile_id_parse (const char *text, fx_compile_id *cid, fx_diag *diag)
{
  const char *p = text;
  cid->compiled_autograd_id = -1;
  cid->attempt = 0;
  if (*p == '[')
    p++;
  int parts[3];
  int n = 0;
  bool ca = false;
  if (*p == '!')
    {
      ca = true;
      p++;
    }
  while (p && n < 3)
    {
      p = parse_part (p, &parts[n++]);
      if (!p || *p != '/')
        break;
      p++;
    }
  if (p && *p == '_')
    p = parse_part (p + 1, &cid->attempt);
  if (p && *p == ']' && text[0] == '[')
    p++;
  if (!p || *p || n != (ca ? 3 : 2))
    return fx_diag_set (diag, FX_ERR_PARSE, "'%s' is not a compile id (expected e.g. 0/1, 0/1_1 or !0/0/1)", text);
  if (ca)
    {
      cid->compiled_autograd_id = parts[0];
      cid->frame_id = parts[1];
      cid->frame_compile_id = parts[2];
    }
  else
    {
      cid->frame_id = parts[0];
      cid->frame_compile_id = parts[1];
    }
  return FX_OK;
}

/* ------------------------------------------------------------------ writing */

fx_status
fx_store_find_input (fx_store *store, const char *hash, int64_t *existing, fx_diag *diag)
{
  *existing = 0;
  sqlite3_stmt *stmt = prepare (store, "SELECT id FROM inputs WHERE hash = ?", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_text (&b, hash);
  int rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *existing = sqlite3_column_int64 (stmt, 0);
  release (store, stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return db_error (store, diag, "looking up the input");
  return FX_OK;
}

static fx_status
insert (fx_store *store, sqlite3_stmt *stmt, int64_t *id, fx_diag *diag)
{
  fx_status st = step_done (store, stmt, diag);
  if (id)
    *id = st == FX_OK ? sqlite3_last_insert_rowid (store->db) : 0;
  return st;
}

fx_status
fx_store_add_input (fx_store *store, const char *path, const char *kind, const char *hash, int64_t size,
                    int64_t *id, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO inputs (workspace, path, kind, hash, size, imported)"
                                " VALUES (?, ?, ?, ?, ?, julianday('now'))", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, store->workspace_id);
  b_text (&b, path);
  b_text (&b, kind);
  b_text (&b, hash);
  b_int (&b, size);
  return insert (store, stmt, id, diag);
}

/* Runs a bound query for one id: the first row's first column into *id (left as it is when there is no row); the
   statement is released. */
static fx_status
step_first_id (fx_store *store, sqlite3_stmt *stmt, int64_t *id, const char *what, fx_diag *diag)
{
  int rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *id = sqlite3_column_int64 (stmt, 0);
  release (store, stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return db_error (store, diag, what);
  return FX_OK;
}

fx_status
fx_store_find_input_size (fx_store *store, int64_t size, int64_t *existing, fx_diag *diag)
{
  *existing = 0;
  sqlite3_stmt *stmt = prepare (store, "SELECT id FROM inputs WHERE size = ? OR size IS NULL LIMIT 1", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, size);
  return step_first_id (store, stmt, existing, "looking up the input", diag);
}

fx_status
fx_store_set_input_hash (fx_store *store, int64_t input_id, const char *hash, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "UPDATE inputs SET hash = ? WHERE id = ?", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_text (&b, hash);
  b_int (&b, input_id);
  return step_done (store, stmt, diag);
}

/* Finds a row by a query whose parameters are all integers; 0 when absent. */
static fx_status
find_row (fx_store *store, const char *sql, const int64_t *args, int nargs, int64_t *id, fx_diag *diag)
{
  *id = 0;
  sqlite3_stmt *stmt = prepare (store, sql, diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  for (int i = 0; i < nargs; i++)
    b_int (&b, args[i]);
  int rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *id = sqlite3_column_int64 (stmt, 0);
  release (store, stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return db_error (store, diag, "lookup");
  return FX_OK;
}

fx_status
fx_store_ensure_compile (fx_store *store, int64_t input_id, const fx_compile_id *cid, int64_t *compile_row,
                         fx_diag *diag)
{
  int64_t frame = 0;
  int64_t fargs[3] = { input_id, cid->compiled_autograd_id, cid->frame_id };
  fx_status st = find_row (store, "SELECT id FROM frames WHERE input = ? AND ca_id = ? AND frame_id = ?",
                           fargs, 3, &frame, diag);
  if (st != FX_OK)
    return st;
  if (!frame)
    {
      sqlite3_stmt *stmt = prepare (store, "INSERT INTO frames (input, ca_id, frame_id) VALUES (?, ?, ?)", diag);
      if (!stmt)
        return FX_ERR_IO;
      binder b = binder_of (stmt);
      for (int i = 0; i < 3; i++)
        b_int (&b, fargs[i]);
      if ((st = insert (store, stmt, &frame, diag)) != FX_OK)
        return st;
    }
  int64_t cargs[3] = { frame, cid->frame_compile_id, cid->attempt };
  st = find_row (store, "SELECT id FROM compiles WHERE frame = ? AND frame_compile_id = ? AND attempt = ?",
                 cargs, 3, compile_row, diag);
  if (st != FX_OK || *compile_row)
    return st;
  char text[48];
  fx_compile_id_format (cid, text, sizeof text);
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO compiles (frame, compile_id, frame_compile_id, attempt)"
                                " VALUES (?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, frame);
  b_text (&b, text);
  b_int (&b, cid->frame_compile_id);
  b_int (&b, cid->attempt);
  return insert (store, stmt, compile_row, diag);
}

void
fx_store_compile_update_init (fx_store_compile_update *u)
{
  memset (u, 0, sizeof *u);
  u->line = -1;
  u->has_graph_break = -1;
  u->has_recompile = -1;
  u->start_time = u->entire_frame_compile_s = u->backend_compile_s = u->inductor_compile_s = -1;
  u->graph_op_count = u->guard_count = -1;
  u->has_metrics = -1;
}

fx_status
fx_store_update_compile (fx_store *store, int64_t compile_row, const fx_store_compile_update *u, fx_diag *diag)
{
  /* COALESCE keeps the stored value where the update has none (NULL). */
  sqlite3_stmt *stmt = prepare (store,
    "UPDATE compiles SET function = COALESCE(?1, function), file = COALESCE(?2, file), line = COALESCE(?3, line),"
    " user_stack = COALESCE(?4, user_stack), has_graph_break = COALESCE(?5, has_graph_break),"
    " has_recompile = COALESCE(?6, has_recompile), fail_type = COALESCE(?7, fail_type),"
    " fail_reason = COALESCE(?8, fail_reason), start_time = COALESCE(?9, start_time),"
    " entire_frame_compile_s = COALESCE(?10, entire_frame_compile_s),"
    " backend_compile_s = COALESCE(?11, backend_compile_s), inductor_compile_s = COALESCE(?12, inductor_compile_s),"
    " graph_op_count = COALESCE(?13, graph_op_count), guard_count = COALESCE(?14, guard_count),"
    " has_metrics = COALESCE(?15, has_metrics) WHERE id = ?16", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_text (&b, u->function);
  b_text (&b, u->file);
  b_int_if (&b, u->line, u->line >= 0);
  b_text (&b, u->user_stack);
  b_int_if (&b, u->has_graph_break, u->has_graph_break >= 0);
  b_int_if (&b, u->has_recompile, u->has_recompile >= 0);
  b_text (&b, u->fail_type);
  b_text (&b, u->fail_reason);
  double reals[4] = { u->start_time, u->entire_frame_compile_s, u->backend_compile_s, u->inductor_compile_s };
  for (int i = 0; i < 4; i++)
    b_real_if (&b, reals[i], reals[i] >= 0);
  b_int_if (&b, u->graph_op_count, u->graph_op_count >= 0);
  b_int_if (&b, u->guard_count, u->guard_count >= 0);
  b_int_if (&b, u->has_metrics, u->has_metrics >= 0);
  b_int (&b, compile_row);
  return step_done (store, stmt, diag);
}

fx_status
fx_store_add_graph (fx_store *store, int64_t compile_row, const char *stage, const fx_graph *graph,
                    const char *text, int64_t *id, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO graphs (compile, stage, n_nodes, json, text)"
                                " VALUES (?, ?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_text (&b, stage);
  b_int (&b, graph ? (int64_t) graph->n_nodes : 0);
  fx_buf json;
  fx_buf_init (&json);
  if (graph)
    fx_graph_to_json (graph, &json);
  b_text (&b, graph ? json.data : NULL);
  b_text (&b, text);
  fx_status st = insert (store, stmt, id, diag);
  fx_buf_free (&json);
  return st;
}

fx_status
fx_store_add_guard (fx_store *store, int64_t compile_row, const char *kind, const char *source, const char *code,
                    const char *user_line, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO guards (compile, kind, source, code, user_line)"
                                " VALUES (?, ?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_text (&b, kind);
  b_text (&b, source);
  b_text (&b, code);
  b_text (&b, user_line);
  return insert (store, stmt, NULL, diag);
}

fx_status
fx_store_add_guard_failure (fx_store *store, int64_t compile_row, const char *failed_compile, const char *reason,
                            const char *user_stack, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO guard_failures (compile, failed_compile, reason, user_stack)"
                                " VALUES (?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_text (&b, failed_compile);
  b_text (&b, reason);
  b_text (&b, user_stack);
  return insert (store, stmt, NULL, diag);
}

fx_status
fx_store_add_graph_break (fx_store *store, int64_t compile_row, const char *reason, const char *explanation,
                          const char *user_stack, const char *text, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO graph_breaks (compile, reason, explanation, user_stack, text)"
                                " VALUES (?, ?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_text (&b, reason);
  b_text (&b, explanation);
  b_text (&b, user_stack);
  b_text (&b, text);
  return insert (store, stmt, NULL, diag);
}

fx_status
fx_store_add_kernel (fx_store *store, int64_t compile_row, int ordinal, int call_order, const char *name,
                     const char *kind, const char *device, const char *code, const char *nodes, const char *aten,
                     fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO kernels (compile, ordinal, name, kind, device, code, nodes, aten,"
                                " call_order) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_int (&b, ordinal);
  b_text (&b, name);
  b_text (&b, kind);
  b_text (&b, device);
  b_text (&b, code);
  b_text (&b, nodes);
  b_text (&b, aten);
  b_int_if (&b, call_order, call_order >= 0);
  return insert (store, stmt, NULL, diag);
}

fx_status
fx_store_set_kernels_part (fx_store *store, int64_t compile_row, int first_ordinal, const char *part, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "UPDATE kernels SET part = ? WHERE compile = ? AND ordinal >= ?", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_text (&b, part);
  b_int (&b, compile_row);
  b_int (&b, first_ordinal);
  return step_done (store, stmt, diag);
}

fx_status
fx_store_add_fusion_group (fx_store *store, int64_t compile_row, const char *name, const char *nodes,
                           const char *text, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO fusion_groups (compile, name, nodes, text) VALUES (?, ?, ?, ?)",
                                diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_text (&b, name);
  b_text (&b, nodes);
  b_text (&b, text);
  return insert (store, stmt, NULL, diag);
}

fx_status
fx_store_add_artifact (fx_store *store, int64_t input_id, int64_t compile_row, const char *name, const char *kind,
                       const char *text, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO artifacts (input, compile, name, kind, text) VALUES (?, ?, ?, ?, ?)",
                                diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, input_id);
  b_id (&b, compile_row);
  b_text (&b, name);
  b_text (&b, kind);
  b_text_nocopy (&b, text);
  return insert (store, stmt, NULL, diag);
}

fx_status
fx_store_add_metric (fx_store *store, int64_t compile_row, const char *key, const char *value, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO metrics (compile, key, value) VALUES (?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_text (&b, key);
  b_text (&b, value);
  return insert (store, stmt, NULL, diag);
}

fx_status
fx_store_add_event (fx_store *store, int64_t input_id, int64_t compile_row, const char *name, const char *phase,
                    double ts_us, const char *json, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO events (input, compile, name, phase, ts_us, json)"
                                " VALUES (?, ?, ?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, input_id);
  b_id (&b, compile_row);
  b_text (&b, name);
  b_text (&b, phase);
  b_real (&b, ts_us);
  b_text_nocopy (&b, json);
  return insert (store, stmt, NULL, diag);
}

/* Binds a run's configuration (backend, mode, options, device) and, with results, what it measured and found, in
   the column order of the INSERT of fx_store_add_run and the UPDATE of fx_store_finish_run. */
static void
bind_run (binder *b, const fx_store_run *run, bool results)
{
  b_text (b, run->backend ? run->backend : "");
  b_text (b, run->mode);
  b_text (b, run->options_json);
  b_text (b, run->device);
  if (!results)
    return;
  b_real (b, run->compile_ms);
  b_real (b, run->run_ms_median);
  b_real (b, run->run_ms_min);
  b_real (b, run->run_ms_max);
  b_int (b, run->peak_bytes);
  b_real (b, run->accuracy);
  b_text (b, run->error);
  b_text (b, run->verdict);
  b_int_if (b, run->repeat, run->repeat > 0);
  b_int_if (b, run->n_kernels, run->n_kernels >= 0);
  b_int_if (b, run->engine_compile, run->engine_compile > 0);
}

fx_status
fx_store_add_run (fx_store *store, int64_t graph_id, const fx_store_run *run, int64_t *id, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store,
    "INSERT INTO runs (graph, backend, mode, options, device, compile_ms, run_ms_median, run_ms_min, run_ms_max,"
    " peak_bytes, accuracy, error, created, verdict, repeat, n_kernels, engine_compile, status)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, julianday('now'), ?, ?, ?, ?, 'done')", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_id (&b, graph_id);
  bind_run (&b, run, true);
  return insert (store, stmt, id, diag);
}

fx_status
fx_store_start_run (fx_store *store, int64_t graph_id, const fx_store_run *run, int64_t *id, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store,
    "INSERT INTO runs (graph, backend, mode, options, device, created, status)"
    " VALUES (?, ?, ?, ?, ?, julianday('now'), 'started')", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_id (&b, graph_id);
  bind_run (&b, run, false);
  return insert (store, stmt, id, diag);
}

fx_status
fx_store_finish_run (fx_store *store, int64_t run_id, const fx_store_run *run, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store,
    "UPDATE runs SET backend = ?, mode = ?, options = ?, device = ?, compile_ms = ?, run_ms_median = ?,"
    " run_ms_min = ?, run_ms_max = ?, peak_bytes = ?, accuracy = ?, error = ?, verdict = ?, repeat = ?,"
    " n_kernels = ?, engine_compile = ?, status = 'done' WHERE id = ?", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  bind_run (&b, run, true);
  b_int (&b, run_id);
  fx_status st = step_done (store, stmt, diag);
  if (st == FX_OK && sqlite3_changes (store->db) != 1)
    st = fx_diag_set (diag, FX_ERR_NOT_FOUND, "%s: no run %lld to finish", store->path, (long long) run_id);
  return st;
}

/* ------------------------------------------------------------------ reading */

static const char *
col_str (fx_arena *arena, sqlite3_stmt *stmt, int i)
{
  const unsigned char *s = sqlite3_column_text (stmt, i);
  return s ? fx_arena_strdup (arena, (const char *) s) : NULL;
}

/* An integer column that may be NULL (a value not known, or a column a later schema added): null_value then. */
static int64_t
col_int_or (sqlite3_stmt *stmt, int i, int64_t null_value)
{
  return sqlite3_column_type (stmt, i) == SQLITE_NULL ? null_value : sqlite3_column_int64 (stmt, i);
}

/* Runs a query with one optional integer parameter; calls row() for each row into a growing array. */
typedef void (*row_fn) (fx_arena *arena, sqlite3_stmt *stmt, void *item);

/* text_param: a second parameter (?2) when has_text. */
static fx_status
query_list_ex (fx_store *store, const char *sql, int64_t param, bool has_param, const char *text_param,
               bool has_text, fx_arena *arena, size_t item_size, row_fn row, void **out, size_t *n, fx_diag *diag)
{
  *out = NULL;
  *n = 0;
  sqlite3_stmt *stmt = prepare (store, sql, diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  if (has_param)
    b_int (&b, param);
  if (has_text)
    b_text (&b, text_param);
  size_t cap = 0;
  char *items = NULL;
  int rc;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      if (*n == cap)
        {
          size_t ncap = cap ? cap * 2 : 16;
          char *grown = fx_arena_alloc (arena, ncap * item_size);
          if (items)
            memcpy (grown, items, cap * item_size);
          items = grown;
          cap = ncap;
        }
      row (arena, stmt, items + *n * item_size);
      (*n)++;
    }
  release (store, stmt);
  if (rc != SQLITE_DONE)
    return db_error (store, diag, "read");
  *out = items;
  return FX_OK;
}

static fx_status
query_list (fx_store *store, const char *sql, int64_t param, bool has_param, fx_arena *arena, size_t item_size,
            row_fn row, void **out, size_t *n, fx_diag *diag)
{
  return query_list_ex (store, sql, param, has_param, NULL, false, arena, item_size, row, out, n, diag);
}

/* ------------------------------------------------------------------ schema 4: IR dumps, provenance, shapes, links */

/* " = the compile whose rows of table are read for compile ?1": ?1 itself when it has rows there, else the
   debug-folder compile linked to it (a trace compile shows its folder's IR dumps; a table both inputs fill, such as
   provenance, is not listed twice). */
#define OWN_OR_LINKED(table) " = (SELECT c FROM (SELECT ?1 AS c, 0 AS o UNION ALL SELECT debug_compile, 1"          \
  " FROM compile_links WHERE compile = ?1) WHERE EXISTS (SELECT 1 FROM " table " x WHERE x.compile = c)"          \
  " ORDER BY o LIMIT 1)"

/* The provenance column col of an IR node's launch: from its own compile's mappings, else the linked trace
   compile's. */
#define PROVENANCE_OF_NODE(col)                                                                                  \
  "COALESCE((SELECT p." col " FROM provenance p WHERE p.compile = n.compile AND p.kernel = n.kernel"             \
  " AND p.handle IS n.handle LIMIT 1), (SELECT p." col " FROM provenance p JOIN compile_links l"                  \
  " ON p.compile = l.compile WHERE l.debug_compile = n.compile AND p.kernel = n.kernel AND p.handle IS n.handle"  \
  " LIMIT 1))"

fx_status
fx_store_add_ir_node (fx_store *store, int64_t compile_row, const fx_store_ir_node *node, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO ir_nodes (compile, stage, ordinal, name, kind, ir_type,"
                                " fused_into, members, device, iteration, sizes, writes, reads, unmet, buffers,"
                                " extern_kernel, text, kernel, handle)"
                                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_text (&b, node->stage);
  b_int (&b, node->ordinal);
  b_text (&b, node->name);
  b_text (&b, node->kind);
  b_text (&b, node->ir_type);
  b_text (&b, node->fused_into);
  b_text (&b, node->members);
  b_text (&b, node->device);
  b_text (&b, node->iteration);
  b_text (&b, node->sizes);
  b_text (&b, node->writes);
  b_text (&b, node->reads);
  b_text (&b, node->unmet);
  b_text (&b, node->buffers);
  b_text (&b, node->extern_kernel);
  b_text (&b, node->text);
  b_text (&b, node->kernel);
  b_int_if (&b, node->handle, node->kernel && node->handle >= 0);
  return insert (store, stmt, NULL, diag);
}

static void
ir_node_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_ir_node *r = item;
  r->stage = col_str (arena, s, 0);
  r->ordinal = sqlite3_column_int (s, 1);
  const char **cols[] = { &r->name, &r->kind, &r->ir_type, &r->fused_into, &r->members, &r->device, &r->iteration,
                          &r->sizes, &r->writes, &r->reads, &r->unmet, &r->buffers, &r->extern_kernel, &r->text };
  for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
    *cols[i] = col_str (arena, s, (int) i + 2);
  r->kernel = col_str (arena, s, 16);
  r->handle = col_int_or (s, 17, -1);
  r->post_nodes = col_str (arena, s, 18);
  r->pre_nodes = col_str (arena, s, 19);
}

fx_status
fx_store_list_ir_nodes (fx_store *store, int64_t compile_row, const char *stage, fx_arena *arena,
                        fx_store_ir_node **out, size_t *n, fx_diag *diag)
{
  if (!has_v4 (store))
    {
      /* An older file, opened read-only: none recorded. */
      *out = NULL;
      *n = 0;
      return FX_OK;
    }
  return query_list_ex (store, "SELECT stage, ordinal, name, kind, ir_type, fused_into, members, device, iteration,"
                        " sizes, writes, reads, unmet, buffers, extern_kernel, text, kernel, handle,"
                        " " PROVENANCE_OF_NODE ("post_nodes") ", " PROVENANCE_OF_NODE ("pre_nodes")
                        " FROM ir_nodes n WHERE compile"
                        OWN_OR_LINKED ("ir_nodes") " AND (?2 IS NULL OR stage = ?2)"
                        " ORDER BY stage = 'post_fusion', compile, ordinal", compile_row, true, stage, true, arena, sizeof (fx_store_ir_node), ir_node_row,
                        (void **) out, n, diag);
}

fx_status
fx_store_add_provenance (fx_store *store, int64_t compile_row, const char *kernel, int handle,
                         const char *post_nodes, const char *pre_nodes, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO provenance (compile, kernel, handle, post_nodes, pre_nodes)"
                                " VALUES (?, ?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_text (&b, kernel);
  b_int_if (&b, handle, handle >= 0);
  b_text (&b, post_nodes);
  b_text (&b, pre_nodes);
  return insert (store, stmt, NULL, diag);
}

static void
provenance_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_provenance *p = item;
  p->kernel = col_str (arena, s, 0);
  p->handle = col_int_or (s, 1, -1);
  p->post_nodes = col_str (arena, s, 2);
  p->pre_nodes = col_str (arena, s, 3);
}

fx_status
fx_store_list_provenance (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_provenance **out,
                          size_t *n, fx_diag *diag)
{
  if (!has_v4 (store))
    {
      /* An older file, opened read-only: none recorded. */
      *out = NULL;
      *n = 0;
      return FX_OK;
    }
  return query_list (store, "SELECT kernel, handle, post_nodes, pre_nodes FROM provenance WHERE compile"
                     OWN_OR_LINKED ("provenance")
                     " ORDER BY compile, id", compile_row, true, arena, sizeof (fx_store_provenance), provenance_row,
                     (void **) out, n, diag);
}

fx_status
fx_store_add_shape_event (fx_store *store, int64_t input_id, int64_t compile_row, const fx_store_shape_event *ev,
                          fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO shape_events (compile, input, kind, symbol, sources, value, expr,"
                                " reason, user_stack, stack) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_id (&b, compile_row);
  b_int (&b, input_id);
  b_text (&b, ev->kind);
  b_text (&b, ev->symbol);
  b_text (&b, ev->sources);
  b_text (&b, ev->value);
  b_text (&b, ev->expr);
  b_text (&b, ev->reason);
  b_text (&b, ev->user_stack);
  b_text (&b, ev->stack);
  return insert (store, stmt, NULL, diag);
}

static void
shape_event_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_shape_event *e = item;
  const char **cols[] = { &e->kind, &e->symbol, &e->sources, &e->value, &e->expr, &e->reason, &e->user_stack,
                          &e->stack };
  for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
    *cols[i] = col_str (arena, s, (int) i);
}

fx_status
fx_store_list_shape_events (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_shape_event **out,
                            size_t *n, fx_diag *diag)
{
  if (!has_v4 (store))
    {
      /* An older file, opened read-only: none recorded. */
      *out = NULL;
      *n = 0;
      return FX_OK;
    }
  if (compile_row)
    return query_list_ex (store, "SELECT kind, symbol, sources, value, expr, reason, user_stack, stack FROM"
                          " shape_events WHERE compile = ? ORDER BY id", compile_row, true, NULL, false, arena,
                          sizeof (fx_store_shape_event), shape_event_row, (void **) out, n, diag);
  return query_list (store, "SELECT kind, symbol, sources, value, expr, reason, user_stack, stack FROM shape_events"
                     " WHERE compile IS NULL ORDER BY id", 0, false, arena, sizeof (fx_store_shape_event),
                     shape_event_row, (void **) out, n, diag);
}

fx_status
fx_store_add_output_code (fx_store *store, int64_t input_id, int64_t compile_row, const char *md5,
                          const char *kernel_names, fx_diag *diag)
{
  /* A compile printing its code twice keeps the last. */
  sqlite3_stmt *stmt = prepare (store, "INSERT OR REPLACE INTO output_codes (compile, input, md5, kernels)"
                                " VALUES (?, ?, ?, ?)", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, compile_row);
  b_int (&b, input_id);
  b_text (&b, md5);
  b_text (&b, kernel_names);
  return insert (store, stmt, NULL, diag);
}

/* The first row of a one-text-parameter query (a compile to link to); 0 when none. */
static fx_status
find_link_target (fx_store *store, const char *sql, const char *value, int64_t *row, fx_diag *diag)
{
  *row = 0;
  sqlite3_stmt *stmt = prepare (store, sql, diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_text (&b, value);
  return step_first_id (store, stmt, row, "linking compiles", diag);
}

fx_status
fx_store_link_debug_compiles (fx_store *store, int64_t *linked, fx_diag *diag)
{
  if (linked)
    *linked = 0;
  /* The debug compiles still unlinked, in folder order (model__N: N is the compile order of the run). */
  sqlite3_stmt *stmt = prepare (store, "SELECT o.compile, o.md5, o.kernels FROM output_codes o JOIN inputs i"
                                " ON i.id = o.input JOIN compiles c ON c.id = o.compile"
                                " WHERE i.kind = 'torch_compile_debug' AND NOT EXISTS (SELECT 1 FROM compile_links l"
                                " WHERE l.debug_compile = o.compile) ORDER BY o.input, c.frame_compile_id", diag);
  if (!stmt)
    return FX_ERR_IO;
  struct pending
  {
    int64_t row;
    char *md5, *kernels;
  } *todo = NULL;
  size_t n = 0, cap = 0;
  int rc;
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      if (n == cap)
        {
          cap = cap ? cap * 2 : 16;
          todo = realloc (todo, cap * sizeof *todo);
        }
      const unsigned char *k = sqlite3_column_text (stmt, 2);
      todo[n].row = sqlite3_column_int64 (stmt, 0);
      todo[n].md5 = strdup ((const char *) sqlite3_column_text (stmt, 1));
      todo[n].kernels = k && *k ? strdup ((const char *) k) : NULL;
      n++;
    }
  release (store, stmt);
  fx_status st = rc == SQLITE_DONE ? FX_OK : db_error (store, diag, "linking compiles");
  static const char by_md5[] =
    "SELECT o.compile FROM output_codes o JOIN inputs i ON i.id = o.input WHERE o.md5 = ?"
    " AND i.kind != 'torch_compile_debug' AND NOT EXISTS (SELECT 1 FROM compile_links l WHERE l.compile = o.compile)"
    " ORDER BY o.compile LIMIT 1";
  static const char by_kernels[] =
    "SELECT o.compile FROM output_codes o JOIN inputs i ON i.id = o.input WHERE o.kernels = ?"
    " AND i.kind != 'torch_compile_debug' AND NOT EXISTS (SELECT 1 FROM compile_links l WHERE l.compile = o.compile)"
    " ORDER BY o.compile LIMIT 1";
  for (size_t i = 0; i < n && st == FX_OK; i++)
    {
      int64_t target = 0;
      const char *how = "output code";
      st = find_link_target (store, by_md5, todo[i].md5, &target, diag);
      if (st == FX_OK && !target && todo[i].kernels)
        {
          how = "kernel names";
          st = find_link_target (store, by_kernels, todo[i].kernels, &target, diag);
        }
      if (st != FX_OK || !target)
        continue;
      sqlite3_stmt *ins = prepare (store, "INSERT INTO compile_links (compile, debug_compile, how) VALUES (?, ?, ?)",
                                   diag);
      if (!ins)
        {
          st = FX_ERR_IO;
          break;
        }
      binder b = binder_of (ins);
      b_int (&b, target);
      b_int (&b, todo[i].row);
      b_text (&b, how);
      st = insert (store, ins, NULL, diag);
      if (st == FX_OK && linked)
        (*linked)++;
    }
  for (size_t i = 0; i < n; i++)
    {
      free (todo[i].md5);
      free (todo[i].kernels);
    }
  free (todo);
  return st;
}

static void
input_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_input *in = item;
  in->id = sqlite3_column_int64 (s, 0);
  in->path = col_str (arena, s, 1);
  in->kind = col_str (arena, s, 2);
  in->hash = col_str (arena, s, 3);
  in->size = sqlite3_column_int64 (s, 4);
}

fx_status
fx_store_list_inputs (fx_store *store, fx_arena *arena, fx_store_input **out, size_t *n, fx_diag *diag)
{
  return query_list (store, "SELECT id, path, kind, hash, size FROM inputs ORDER BY id", 0, false, arena,
                     sizeof (fx_store_input), input_row, (void **) out, n, diag);
}

static void
event_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_event *e = item;
  e->input_id = sqlite3_column_int64 (s, 0);
  e->compile_row = sqlite3_column_int64 (s, 1);
  e->name = col_str (arena, s, 2);
  e->phase = col_str (arena, s, 3);
  e->ts_us = sqlite3_column_double (s, 4);
  e->json = col_str (arena, s, 5);
}

fx_status
fx_store_list_events (fx_store *store, int64_t input_id, fx_arena *arena, fx_store_event **out, size_t *n,
                      fx_diag *diag)
{
  return query_list (store, "SELECT input, compile, name, phase, ts_us, json FROM events WHERE ?1 = 0 OR input = ?1"
                     " ORDER BY id", input_id, true, arena, sizeof (fx_store_event), event_row, (void **) out, n,
                     diag);
}

/* ------------------------------------------------------------------ reading: compiles, graphs, guards, kernels */

static void
compile_from_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_compile *c = item;
  c->id = sqlite3_column_int64 (s, 0);
  c->input_id = sqlite3_column_int64 (s, 1);
  c->cid.compiled_autograd_id = sqlite3_column_int (s, 2);
  c->cid.frame_id = sqlite3_column_int (s, 3);
  c->cid.frame_compile_id = sqlite3_column_int (s, 4);
  c->cid.attempt = sqlite3_column_int (s, 5);
  fx_compile_id_format (&c->cid, c->compile_id, sizeof c->compile_id);
  c->function = col_str (arena, s, 6);
  c->file = col_str (arena, s, 7);
  c->line = col_int_or (s, 8, -1);
  c->user_stack = col_str (arena, s, 9);
  int gb = sqlite3_column_int (s, 10), rc = sqlite3_column_int (s, 11);
  c->fail_type = col_str (arena, s, 12);
  c->fail_reason = col_str (arena, s, 13);
  c->start_time = sqlite3_column_double (s, 14);
  c->entire_frame_compile_s = sqlite3_column_double (s, 15);
  c->backend_compile_s = sqlite3_column_double (s, 16);
  c->inductor_compile_s = sqlite3_column_double (s, 17);
  c->graph_op_count = col_int_or (s, 18, -1);
  c->guard_count = col_int_or (s, 19, -1);
  c->n_graphs = sqlite3_column_int (s, 20);
  c->n_kernels = sqlite3_column_int (s, 21);
  c->n_guards = sqlite3_column_int (s, 22);
  c->n_breaks = sqlite3_column_int (s, 23);
  c->n_failures = sqlite3_column_int (s, 24);
  c->training = sqlite3_column_int (s, 25) != 0;
  c->linked = col_str (arena, s, 26);
  /* The status tlparse colours a compile by: a failure wins, then a graph break, then being a recompile. */
  c->status = c->fail_type ? "failed" : (gb || c->n_breaks) ? "graph break"
              : (rc || c->n_failures || (c->cid.frame_id >= 0 && c->cid.frame_compile_id > 0)) ? "recompiled" : "ok";
}

fx_status
fx_store_list_compiles (fx_store *store, fx_arena *arena, fx_store_compile **out, size_t *n, fx_diag *diag)
{
#define COMPILE_COLUMNS(linked)                                                                                   \
    "SELECT c.id, f.input, f.ca_id, f.frame_id, c.frame_compile_id, c.attempt, c.function, c.file, c.line,"     \
    " c.user_stack, c.has_graph_break, c.has_recompile, c.fail_type, c.fail_reason, c.start_time,"             \
    " c.entire_frame_compile_s, c.backend_compile_s, c.inductor_compile_s, c.graph_op_count, c.guard_count,"   \
    " (SELECT count(*) FROM graphs g WHERE g.compile = c.id),"                                                  \
    " (SELECT count(*) FROM kernels k WHERE k.compile = c.id),"                                                 \
    " (SELECT count(*) FROM guards k WHERE k.compile = c.id),"                                                  \
    " (SELECT count(*) FROM graph_breaks k WHERE k.compile = c.id),"                                            \
    " (SELECT count(*) FROM guard_failures k WHERE k.compile = c.id),"                                          \
    " EXISTS (SELECT 1 FROM graphs g WHERE g.compile = c.id AND g.stage = 'aot_backward'), " linked             \
    " FROM compiles c JOIN frames f ON c.frame = f.id"                                                          \
    " ORDER BY f.input, f.ca_id, f.frame_id, c.frame_compile_id, c.attempt"
  if (!has_v4 (store))
    return query_list (store, COMPILE_COLUMNS ("NULL"), 0, false, arena, sizeof (fx_store_compile), compile_from_row,
                       (void **) out, n, diag);
  /* linked: the folder name of a trace compile's debug compile, or the compile id of a debug compile's trace
     compile. */
  return query_list (store,
    COMPILE_COLUMNS ("COALESCE((SELECT d.function FROM compile_links l JOIN compiles d ON d.id = l.debug_compile"
                     " WHERE l.compile = c.id LIMIT 1), (SELECT t.compile_id FROM compile_links l JOIN compiles t"
                     " ON t.id = l.compile WHERE l.debug_compile = c.id LIMIT 1))"),
    0, false, arena, sizeof (fx_store_compile), compile_from_row, (void **) out, n, diag);
#undef COMPILE_COLUMNS
}

fx_status
fx_store_find_compile (fx_store *store, const char *compile_id, int64_t *row, fx_diag *diag)
{
  fx_compile_id cid;
  *row = 0;
  /* "rank3/1/1", "rank3:1/1": the compile 1/1 of rank 3's trace (a multi-rank workspace names the same ids once per
     rank). */
  long rank = -1;
  const char *id = compile_id;
  if (strncmp (id, "rank", 4) == 0 && isdigit ((unsigned char) id[4]))
    {
      char *end = NULL;
      long r = strtol (id + 4, &end, 10);
      if ((*end == '/' || *end == ':') && r >= 0 && r < 1000000)
        rank = r, id = end + 1;
    }
  fx_status st = fx_compile_id_parse (id, &cid, diag);
  if (st != FX_OK)
    return st;
  int64_t args[4] = { cid.compiled_autograd_id, cid.frame_id, cid.frame_compile_id, cid.attempt };
  if (rank >= 0)
    {
      sqlite3_stmt *stmt = prepare (store, "SELECT c.id, i.path FROM compiles c JOIN frames f ON c.frame = f.id"
                                    " JOIN inputs i ON f.input = i.id WHERE f.ca_id = ? AND f.frame_id = ?"
                                    " AND c.frame_compile_id = ? AND c.attempt = ? ORDER BY f.input", diag);
      if (!stmt)
        return FX_ERR_IO;
      binder b = binder_of (stmt);
      for (int i = 0; i < 4; i++)
        b_int (&b, args[i]);
      int rc;
      while (!*row && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
        if (fx_rank_from_path ((const char *) sqlite3_column_text (stmt, 1)) == rank)
          *row = sqlite3_column_int64 (stmt, 0);
      release (store, stmt);
      if (!*row && rc != SQLITE_DONE)
        return db_error (store, diag, "lookup");
      if (!*row)
        return fx_diag_set (diag, FX_ERR_NOT_FOUND, "no compile %s of rank %ld in %s", id, rank, store->path);
      return FX_OK;
    }
  st = find_row (store, "SELECT c.id FROM compiles c JOIN frames f ON c.frame = f.id WHERE f.ca_id = ?"
                 " AND f.frame_id = ? AND c.frame_compile_id = ? AND c.attempt = ? ORDER BY f.input LIMIT 1",
                 args, 4, row, diag);
  if (st == FX_OK && !*row)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "no compile %s in %s", compile_id, store->path);
  return st;
}

static void
graph_info_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_graph_info *g = item;
  g->id = sqlite3_column_int64 (s, 0);
  g->compile_row = sqlite3_column_int64 (s, 1);
  g->stage = col_str (arena, s, 2);
  g->n_nodes = sqlite3_column_int (s, 3);
  g->parsed = sqlite3_column_int (s, 4) != 0;
}

fx_status
fx_store_list_graphs (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_graph_info **out, size_t *n,
                      fx_diag *diag)
{
  if (compile_row)
    return query_list (store, "SELECT id, compile, stage, n_nodes, json IS NOT NULL FROM graphs WHERE compile = ?"
                       " ORDER BY id", compile_row, true, arena, sizeof (fx_store_graph_info), graph_info_row,
                       (void **) out, n, diag);
  return query_list (store, "SELECT id, compile, stage, n_nodes, json IS NOT NULL FROM graphs ORDER BY id", 0, false,
                     arena, sizeof (fx_store_graph_info), graph_info_row, (void **) out, n, diag);
}

fx_status
fx_store_get_graph (fx_store *store, int64_t graph_id, fx_graph **graph, char **text, fx_diag *diag)
{
  if (graph)
    *graph = NULL;
  if (text)
    *text = NULL;
  sqlite3_stmt *stmt = prepare (store, "SELECT json, text FROM graphs WHERE id = ?", diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, graph_id);
  int rc = sqlite3_step (stmt);
  fx_status st = FX_OK;
  if (rc == SQLITE_ROW)
    {
      const char *json = (const char *) sqlite3_column_text (stmt, 0);
      if (graph && json)
        st = fx_graph_from_json (json, (size_t) sqlite3_column_bytes (stmt, 0), graph, diag);
      const char *t = (const char *) sqlite3_column_text (stmt, 1);
      if (text && t)
        *text = strdup (t);
    }
  else if (rc == SQLITE_DONE)
    st = fx_diag_set (diag, FX_ERR_NOT_FOUND, "no graph %lld", (long long) graph_id);
  else
    st = db_error (store, diag, "read");
  release (store, stmt);
  return st;
}

static void
guard_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_guard *g = item;
  g->kind = col_str (arena, s, 0);
  g->source = col_str (arena, s, 1);
  g->code = col_str (arena, s, 2);
  g->user_line = col_str (arena, s, 3);
}

fx_status
fx_store_list_guards (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_guard **out, size_t *n,
                      fx_diag *diag)
{
  return query_list (store, "SELECT kind, source, code, user_line FROM guards WHERE compile = ? ORDER BY id",
                     compile_row, true, arena, sizeof (fx_store_guard), guard_row, (void **) out, n, diag);
}

static void
failure_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_guard_failure *g = item;
  g->failed_compile = col_str (arena, s, 0);
  g->reason = col_str (arena, s, 1);
  g->user_stack = col_str (arena, s, 2);
}

fx_status
fx_store_list_guard_failures (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_guard_failure **out,
                              size_t *n, fx_diag *diag)
{
  return query_list (store, "SELECT failed_compile, reason, user_stack FROM guard_failures WHERE compile = ?"
                     " ORDER BY id", compile_row, true, arena, sizeof (fx_store_guard_failure), failure_row,
                     (void **) out, n, diag);
}

static void
break_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_graph_break *g = item;
  g->reason = col_str (arena, s, 0);
  g->explanation = col_str (arena, s, 1);
  g->user_stack = col_str (arena, s, 2);
  g->text = col_str (arena, s, 3);
}

fx_status
fx_store_list_graph_breaks (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_graph_break **out,
                            size_t *n, fx_diag *diag)
{
  return query_list (store, "SELECT reason, explanation, user_stack, text FROM graph_breaks WHERE compile = ?"
                     " ORDER BY id", compile_row, true, arena, sizeof (fx_store_graph_break), break_row,
                     (void **) out, n, diag);
}

/* "a, b, a, c" -> "a, b, c" (a kernel launched twice lists its nodes once); NULL stays NULL. */
static const char *
unique_items (fx_arena *arena, const char *list)
{
  if (!list)
    return NULL;
  size_t len = strlen (list);
  char *out = fx_arena_alloc (arena, len + 1);
  size_t o = 0;
  out[0] = 0;
  const char *p = list;
  while (*p)
    {
      const char *e = strstr (p, ", ");
      size_t n = e ? (size_t) (e - p) : strlen (p);
      bool dup = n == 0;
      for (const char *q = out; !dup && q < out + o;)
        {
          const char *qe = strstr (q, ", ");
          size_t qn = qe ? (size_t) (qe - q) : strlen (q);
          dup = qn == n && memcmp (q, p, n) == 0;
          q += qn + 2;
        }
      if (!dup)
        {
          if (o)
            out[o++] = ',', out[o++] = ' ';
          memcpy (out + o, p, n);
          o += n;
          out[o] = 0;
        }
      p += n + (e ? 2 : 0);
    }
  out[o] = 0;
  return out;
}

static void
kernel_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_kernel *k = item;
  k->ordinal = sqlite3_column_int (s, 0);
  k->name = col_str (arena, s, 1);
  k->kind = col_str (arena, s, 2);
  k->device = col_str (arena, s, 3);
  k->code = col_str (arena, s, 4);
  k->nodes = col_str (arena, s, 5);
  k->aten = col_str (arena, s, 6);
  k->call_order = col_int_or (s, 7, -1);
  k->post_nodes = unique_items (arena, (const char *) sqlite3_column_text (s, 8));
  k->pre_nodes = unique_items (arena, (const char *) sqlite3_column_text (s, 9));
  k->part = col_str (arena, s, 10);
}

fx_status
fx_store_list_kernels (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_kernel **out, size_t *n,
                       fx_diag *diag)
{
  if (!has_v4 (store))
    return query_list (store, "SELECT ordinal, name, kind, device, code, nodes, aten, call_order, NULL, NULL, NULL"
                       " FROM kernels k WHERE k.compile = ?1 ORDER BY ordinal, id", compile_row, true, arena,
                       sizeof (fx_store_kernel), kernel_row, (void **) out, n, diag);
  /* The provenance rows are the forward's (a backward's kernels restart the names and handles). */
#define KERNEL_COLUMNS(part, is_forward)                                                                            \
    "SELECT ordinal, name, kind, device, code, nodes, aten, call_order,"                                        \
    " (SELECT group_concat(p.post_nodes, ', ') FROM provenance p WHERE p.compile"                               \
    OWN_OR_LINKED ("provenance")                                                                                \
    " AND p.kernel = k.name AND " is_forward "),"                                                               \
    " (SELECT group_concat(p.pre_nodes, ', ') FROM provenance p WHERE p.compile"                                \
    OWN_OR_LINKED ("provenance")                                                                                \
    " AND p.kernel = k.name AND " is_forward "), " part                                                         \
    " FROM kernels k WHERE k.compile = ?1 ORDER BY ordinal, id"
  return query_list (store,
                     has_v7 (store) ? KERNEL_COLUMNS ("k.part", "k.part IS NULL") : KERNEL_COLUMNS ("NULL", "1"),
                     compile_row, true, arena, sizeof (fx_store_kernel), kernel_row, (void **) out, n, diag);
#undef KERNEL_COLUMNS
}

static void
kv_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_kv *kv = item;
  kv->key = col_str (arena, s, 0);
  kv->value = col_str (arena, s, 1);
}

fx_status
fx_store_list_metrics (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_kv **out, size_t *n,
                       fx_diag *diag)
{
  return query_list (store, "SELECT key, value FROM metrics WHERE compile = ? ORDER BY id", compile_row, true,
                     arena, sizeof (fx_store_kv), kv_row, (void **) out, n, diag);
}

fx_status
fx_store_list_artifacts (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_kv **out, size_t *n,
                         fx_diag *diag)
{
  /* compile_row 0: the artifacts of inputs outside any compile (a torch.export trace's records). */
  if (compile_row == 0)
    return query_list (store, "SELECT name, text FROM artifacts WHERE compile IS NULL ORDER BY id", 0, false, arena,
                       sizeof (fx_store_kv), kv_row, (void **) out, n, diag);
  if (!has_v4 (store))
    return query_list (store, "SELECT name, text FROM artifacts WHERE compile = ? ORDER BY id", compile_row, true,
                       arena, sizeof (fx_store_kv), kv_row, (void **) out, n, diag);
  /* A trace compile also lists the files of its linked TORCH_COMPILE_DEBUG folder (ir_post_fusion.txt, ...),
     after its own. */
  return query_list (store, "SELECT name, text FROM artifacts WHERE compile = ?1 OR compile IN (SELECT debug_compile"
                     " FROM compile_links WHERE compile = ?1) ORDER BY compile != ?1, id", compile_row, true,
                     arena, sizeof (fx_store_kv), kv_row, (void **) out, n, diag);
}

fx_status
fx_store_count (fx_store *store, const char *table, int64_t *count, fx_diag *diag)
{
  /* Table names cannot be bound, so only names from this fixed list reach the SQL text. */
  static const char *const tables[] = { "workspaces", "inputs", "frames", "compiles", "graphs", "guards",
                                        "guard_failures", "graph_breaks", "kernels", "fusion_groups",
                                        "artifacts", "metrics", "events", "runs", "ir_nodes", "provenance",
                                        "shape_events", "output_codes", "compile_links", "run_outputs" };
  *count = 0;
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
    if (strcmp (table, tables[i]) == 0)
      {
        char sql[64];
        snprintf (sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]);
        return find_row (store, sql, NULL, 0, count, diag);
      }
  return fx_diag_set (diag, FX_ERR_NOT_FOUND, "no table '%s' in a workspace", table);
}

static void
fusion_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_fusion_group *g = item;
  g->name = col_str (arena, s, 0);
  g->nodes = col_str (arena, s, 1);
  g->text = col_str (arena, s, 2);
}

fx_status
fx_store_list_fusion_groups (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_fusion_group **out,
                             size_t *n, fx_diag *diag)
{
  if (!has_v4 (store))
    return query_list (store, "SELECT name, nodes, text FROM fusion_groups WHERE compile = ? ORDER BY id",
                       compile_row, true, arena, sizeof (fx_store_fusion_group), fusion_row, (void **) out, n, diag);
  return query_list (store, "SELECT name, nodes, text FROM fusion_groups WHERE compile"
                     OWN_OR_LINKED ("fusion_groups")
                     " ORDER BY compile, id", compile_row,
                     true, arena, sizeof (fx_store_fusion_group), fusion_row, (void **) out, n, diag);
}

/* ------------------------------------------------------------------ app-kernels additions (issue 4) */

static double
col_double_or_nan (sqlite3_stmt *s, int i)
{
  return sqlite3_column_type (s, i) == SQLITE_NULL ? NAN : sqlite3_column_double (s, i);
}

static void
run_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_run_row *r = item;
  r->id = sqlite3_column_int64 (s, 0);
  r->graph_id = col_int_or (s, 1, 0);
  r->backend = col_str (arena, s, 2);
  r->mode = col_str (arena, s, 3);
  r->options_json = col_str (arena, s, 4);
  r->device = col_str (arena, s, 5);
  r->compile_ms = col_double_or_nan (s, 6);
  r->run_ms_median = col_double_or_nan (s, 7);
  r->run_ms_min = col_double_or_nan (s, 8);
  r->run_ms_max = col_double_or_nan (s, 9);
  r->peak_bytes = col_int_or (s, 10, -1);
  r->accuracy = col_double_or_nan (s, 11);
  r->error = col_str (arena, s, 12);
  r->created = col_double_or_nan (s, 13);
  /* Columns of later schemas read as NULL (see fx_store_list_runs). */
  r->verdict = col_str (arena, s, 14);
  r->repeat = col_int_or (s, 15, 0);
  r->n_kernels = col_int_or (s, 16, -1);
  r->engine_compile = col_int_or (s, 17, 0);
  const unsigned char *status = sqlite3_column_text (s, 18);
  r->incomplete = status && strcmp ((const char *) status, "started") == 0;
  r->inputs = col_str (arena, s, 19);
  r->inputs_hash = col_str (arena, s, 20);
  r->n_outputs = col_int_or (s, 21, -1);
  r->stage = col_str (arena, s, 22);
  r->compile_row = col_int_or (s, 23, 0);
  r->compile_id = col_str (arena, s, 24);
}

/* Whether table runs has column name: files of older schemas lack the run columns later schemas add. */
static bool
runs_has_column (fx_store *store, const char *name)
{
  sqlite3_stmt *stmt = prepare (store, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = ?", NULL);
  bool yes = false;
  if (!stmt)
    return false;
  bind_text (stmt, 1, name);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    yes = sqlite3_column_int (stmt, 0) > 0;
  release (store, stmt);
  return yes;
}

/* The runs matching where (one integer parameter), with the columns the file has. */
static fx_status
select_runs (fx_store *store, const char *where, int64_t param, fx_arena *arena, fx_store_run_row **out, size_t *n,
             fx_diag *diag)
{
  /* Column names come from this fixed list only; a missing one is selected as NULL. */
  static const char *const later[] = { "verdict", "repeat", "n_kernels", "engine_compile", "status", "inputs",
                                       "inputs_hash", "n_outputs" };
  char sql[1024] = "SELECT id, graph, backend, mode, options, device, compile_ms, run_ms_median, run_ms_min,"
                   " run_ms_max, peak_bytes, accuracy, error, created";
  for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
    {
      strcat (sql, ", ");
      strcat (sql, runs_has_column (store, later[i]) ? later[i] : "NULL");
    }
  strcat (sql, ", (SELECT g.stage FROM graphs g WHERE g.id = runs.graph), (SELECT g.compile FROM graphs g"
               " WHERE g.id = runs.graph), (SELECT c.compile_id FROM graphs g JOIN compiles c ON c.id = g.compile"
               " WHERE g.id = runs.graph) FROM runs WHERE ");
  strcat (sql, where);
  strcat (sql, " ORDER BY id");
  return query_list (store, sql, param, true, arena, sizeof (fx_store_run_row), run_row, (void **) out, n, diag);
}

fx_status
fx_store_list_runs (fx_store *store, int64_t graph_id, fx_arena *arena, fx_store_run_row **out, size_t *n,
                    fx_diag *diag)
{
  return select_runs (store, "graph = ?", graph_id, arena, out, n, diag);
}

/* ------------------------------------------------------------------ schema 6: run outputs */

fx_status
fx_store_list_all_runs (fx_store *store, fx_arena *arena, fx_store_run_row **out, size_t *n, fx_diag *diag)
{
  return select_runs (store, "id > ?", 0, arena, out, n, diag);
}

fx_status
fx_store_get_run (fx_store *store, int64_t run_id, fx_arena *arena, fx_store_run_row *out, fx_diag *diag)
{
  fx_store_run_row *rows = NULL;
  size_t n = 0;
  fx_status st = select_runs (store, "id = ?", run_id, arena, &rows, &n, diag);
  if (st != FX_OK)
    return st;
  if (n != 1)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "%s: no run %lld", store->path, (long long) run_id);
  *out = rows[0];
  return FX_OK;
}

fx_status
fx_store_set_run_inputs (fx_store *store, int64_t run_id, const char *inputs, const char *inputs_hash,
                         int n_outputs, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "UPDATE runs SET inputs = ?, inputs_hash = ?, n_outputs = ? WHERE id = ?",
                                diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_text (&b, inputs);
  b_text (&b, inputs_hash);
  b_int_if (&b, n_outputs, n_outputs >= 0);
  b_int (&b, run_id);
  fx_status st = step_done (store, stmt, diag);
  if (st == FX_OK && sqlite3_changes (store->db) != 1)
    st = fx_diag_set (diag, FX_ERR_NOT_FOUND, "%s: no run %lld", store->path, (long long) run_id);
  return st;
}

fx_status
fx_store_add_run_output (fx_store *store, int64_t run_id, const fx_store_run_output *o, fx_diag *diag)
{
  sqlite3_stmt *stmt = prepare (store, "INSERT INTO run_outputs (run, ordinal, kind, dtype, shape, strides, device,"
                                " numel, min, max, mean, value, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                diag);
  if (!stmt)
    return FX_ERR_IO;
  binder b = binder_of (stmt);
  b_int (&b, run_id);
  b_int (&b, o->ordinal);
  b_text (&b, o->kind ? o->kind : "other");
  b_text (&b, o->dtype);
  b_text (&b, o->shape);
  b_text (&b, o->strides);
  b_text (&b, o->device);
  b_int_if (&b, o->numel, o->numel >= 0);
  b_real_if (&b, o->min, !isnan (o->min));
  b_real_if (&b, o->max, !isnan (o->max));
  b_real_if (&b, o->mean, !isnan (o->mean));
  b_text (&b, o->value);
  ++b.i;
  /* An empty tensor's data is an empty blob, not NULL (which reads as "not kept"). */
  if (o->data)
    sqlite3_bind_blob64 (stmt, b.i, o->nbytes ? o->data : "", (sqlite3_uint64) o->nbytes, SQLITE_TRANSIENT);
  return insert (store, stmt, NULL, diag);
}

static void
output_row (fx_arena *arena, sqlite3_stmt *s, void *item)
{
  fx_store_run_output *o = item;
  o->ordinal = sqlite3_column_int (s, 0);
  o->kind = col_str (arena, s, 1);
  o->dtype = col_str (arena, s, 2);
  o->shape = col_str (arena, s, 3);
  o->strides = col_str (arena, s, 4);
  o->device = col_str (arena, s, 5);
  o->numel = col_int_or (s, 6, -1);
  o->min = col_double_or_nan (s, 7);
  o->max = col_double_or_nan (s, 8);
  o->mean = col_double_or_nan (s, 9);
  o->value = col_str (arena, s, 10);
  o->data = NULL;
  o->nbytes = 0;
  if (sqlite3_column_type (s, 11) != SQLITE_NULL)
    {
      int len = sqlite3_column_bytes (s, 11);
      const void *blob = sqlite3_column_blob (s, 11);
      void *copy = fx_arena_alloc (arena, (size_t) len + 1);
      if (len > 0)
        memcpy (copy, blob, (size_t) len);
      o->data = copy;
      o->nbytes = (size_t) len;
    }
}

fx_status
fx_store_list_run_outputs (fx_store *store, int64_t run_id, fx_arena *arena, fx_store_run_output **out, size_t *n,
                           fx_diag *diag)
{
  *out = NULL;
  *n = 0;
  if (store->schema < 6)
    return FX_OK;
  return query_list (store, "SELECT ordinal, kind, dtype, shape, strides, device, numel, min, max, mean, value, data"
                     " FROM run_outputs WHERE run = ? ORDER BY ordinal", run_id, true, arena,
                     sizeof (fx_store_run_output), output_row, (void **) out, n, diag);
}

/* Opens path read-only; immutable: as an sqlite URI with immutable=1 (no locks, no -shm, nothing created). */
static int
open_readonly_db (const char *path, bool immutable, sqlite3 **db)
{
  if (!immutable)
    return sqlite3_open_v2 (path, db, SQLITE_OPEN_READONLY, NULL);
  /* The path goes into a URI: everything but unreserved characters and '/' is percent-encoded. */
  size_t len = strlen (path);
  char *uri = malloc (len * 3 + 32);
  if (!uri)
    return SQLITE_NOMEM;
  char *p = uri + sprintf (uri, "file:");
  for (const unsigned char *c = (const unsigned char *) path; *c; c++)
    {
      if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr ("-._~/", *c))
        *p++ = (char) *c;
      else
        p += sprintf (p, "%%%02X", *c);
    }
  strcpy (p, "?immutable=1");
  int rc = sqlite3_open_v2 (uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
  free (uri);
  return rc;
}

fx_status
fx_store_open_readonly (const char *path, fx_store **out, fx_diag *diag)
{
  *out = NULL;
  for (int attempt = 0; attempt < 2; attempt++)
    {
      fx_store *store = calloc (1, sizeof *store);
      if (!store)
        return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
      snprintf (store->path, sizeof store->path, "%s", path);
      if (open_readonly_db (path, attempt == 1, &store->db) != SQLITE_OK)
        {
          fx_status st = fx_diag_set (diag, FX_ERR_IO, "%s: cannot open workspace: %s", path,
                                      store->db ? sqlite3_errmsg (store->db) : "out of memory");
          fx_store_close (store);
          return st;
        }
      sqlite3_busy_handler (store->db, busy_wait, store);
      /* The first read of a WAL file needs its -shm file; where it cannot be made, the immutable open reads it. */
      sqlite3_stmt *probe = NULL;
      int rc = sqlite3_prepare_v2 (store->db, "SELECT count(*) FROM sqlite_master", -1, &probe, NULL);
      if (rc == SQLITE_OK)
        rc = sqlite3_step (probe);
      sqlite3_finalize (probe);
      if (rc != SQLITE_ROW)
        {
          int code = sqlite3_errcode (store->db) & 0xff;
          if (attempt == 0 && (code == SQLITE_CANTOPEN || code == SQLITE_READONLY))
            {
              fx_store_close (store);
              continue;
            }
          fx_status st = db_error (store, diag, "read");
          fx_store_close (store);
          return st;
        }
      int v = user_version (store);
      int target = (int) (sizeof migrations / sizeof migrations[0]);
      int64_t app = pragma_int (store, "PRAGMA application_id");
      int64_t ours = pragma_int (store, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
                                        " ('workspaces', 'inputs', 'frames', 'compiles')");
      fx_status st = FX_OK;
      if (v <= 0 || (app != FX_STORE_APPLICATION_ID && (app != 0 || ours != 4)))
        st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "%s: an sqlite file, but not an FX Workbench workspace", path);
      else if (v > target)
        st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "%s: schema version %d is newer than this build's %d", path, v,
                          target);
      if (st == FX_OK)
        {
          store->schema = v;
          store->workspace_id = pragma_int (store, "SELECT id FROM workspaces ORDER BY id LIMIT 1");
          if (store->workspace_id < 0)
            store->workspace_id = 0;
          *out = store;
          return FX_OK;
        }
      fx_store_close (store);
      return st;
    }
  return fx_diag_set (diag, FX_ERR_IO, "%s: cannot open workspace", path);
}

fx_status
fx_store_set_scratch (fx_store *store, fx_diag *diag)
{
  store->scratch = true;
  /* WAL writes every page twice (log, then checkpoint) and fsyncs at each checkpoint: a third of fxwb report's time
     on a 200 MB trace. A larger cache_size was tried and was slower (and tripled peak memory). */
  fx_status st = exec (store, "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF", diag);
  /* nobody reads a scratch file while it is written: its pages go from a writer thread too (fx-store-vfs.c) */
  int on = 1;
  if (st == FX_OK)
    sqlite3_file_control (store->db, "main", FX_STORE_FCNTL_QUEUE_WRITES, &on);
  return st;
}
