/* fxw-document.c: loads a document in a worker thread; the sidebar tree and graph models are built on the main thread.
 *
 * A folder (a TORCH_COMPILE_DEBUG run, a fixture folder) is scanned for FX code files: one frame per folder holding
 * graphs, one compile per graph folder (model__N_inference_N.M), one stage per file. Files that do not parse are
 * reported together as one partial-load error; the rest stays usable.
 *
 * A workspace file (.fxwb, sqlite) is read through fx/store.h: one frame per traced frame, its compiles with the
 * status the importer stored, one stage per stored graph that parsed, the compile's kernels and each graph's runs.
 * A workspace without write permission is opened read-only (nothing is written to it).
 *
 * A TORCH_TRACE log (or a folder of them), a TORCH_COMPILE_DEBUG folder or a .pt2 archive is first imported by the
 * engine's importers (fx/importers.h, as `fxwb import` does) into a workspace in the user's cache folder, which is
 * then read as above; the importer's warnings make it a partial load. */
#define G_LOG_DOMAIN "fxw-document"

#include "fx-config.h"

#include <glib/gi18n.h>

#include "fxw-document.h"
#include "fxw-engine.h"
#include "fxw-properties.h"

#include <stdio.h>
#include <string.h>

#include <errno.h>
#include <math.h>
#include <glib/gstdio.h>
#include <sys/stat.h>

#include "fx/export.h"
#include <unistd.h>

#include "fx/importers.h"
#include "fx/ranks.h"
#include "fx/store.h"

struct _FxwDocument
{
  GObject parent_instance;
  GFile *file;
  char *title;
  gboolean busy;
  double progress;
  GError *error;
  GListStore *frames;
  gboolean read_only;
  char *workspace_path;   /* the .fxwb read: the file itself, or where an import went */
  char *notice;           /* read-only, import warnings: shown with (not as) errors */
};

enum { PROP_0, PROP_BUSY, PROP_PROGRESS, PROP_ERROR, PROP_TITLE, N_PROPS };
static GParamSpec *properties[N_PROPS];
static const FxwPropertyAccess property_access[N_PROPS] = {
  [PROP_BUSY] = FXW_PROPERTY (fxw_document_get_busy, NULL),
  [PROP_PROGRESS] = FXW_PROPERTY (fxw_document_get_progress, NULL),
  [PROP_ERROR] = FXW_PROPERTY (fxw_document_get_error, NULL),
  [PROP_TITLE] = FXW_PROPERTY (fxw_document_get_title, NULL),
};

G_DEFINE_FINAL_TYPE (FxwDocument, fxw_document, G_TYPE_OBJECT)

/* One graph the worker read, with the sidebar rows of its frame and compile, filled by the worker; populate()
   puts a row in the tree where a new frame or compile starts, else the graph goes under the one before. The store
   loader shares a compile's rows among its graphs; a folder's graphs each have their own (they group by title). */
typedef struct
{
  FxwSidebarItem *frame;    /* a folder's: the folder that holds the compile folders, relative to the root */
  FxwSidebarItem *compile;  /* a folder's: the folder of the graph files */
  char *stage;              /* file name */
  fx_graph *graph;
  gboolean new_frame, new_compile;
  GPtrArray *bw_kernels;    /* those of a training compile's backward Inductor compile, its *_backward stages' */
} LoadedGraph;

typedef struct
{
  char *path;
  GPtrArray *graphs;     /* LoadedGraph */
  GString *errors;
  guint n_failed;
  guint n_graphs;        /* entries of graphs that hold a graph (the others are compiles without one) */
  FxwDocument *document; /* for progress, only touched on the main thread */
  gboolean read_only;
  char *workspace_path;
  GString *notice;
} LoadJob;

static void
loaded_graph_free (LoadedGraph *lg)
{
  g_clear_object (&lg->frame);
  g_clear_object (&lg->compile);
  g_free (lg->stage);
  g_clear_pointer (&lg->bw_kernels, g_ptr_array_unref);
  g_clear_pointer (&lg->graph, fx_graph_free);
  g_free (lg);
}

static void
load_job_free (LoadJob *job)
{
  g_free (job->path);
  g_ptr_array_unref (job->graphs);
  g_string_free (job->errors, TRUE);
  g_string_free (job->notice, TRUE);
  g_free (job->workspace_path);
  g_clear_object (&job->document);
  g_free (job);
}

/* Stage order inside a compile: the order the graphs are made in. */
static int
stage_rank (const char *name)
{
  static const char *order[] = { "fx_graph_readable.py", "fx_graph_runnable.py", "fx_graph_transformed.py" };

  for (guint i = 0; i < G_N_ELEMENTS (order); i++)
    if (g_str_equal (name, order[i]))
      return (int) i;
  return 10;
}

static int
compare_loaded (gconstpointer a, gconstpointer b)
{
  const LoadedGraph *x = *(LoadedGraph * const *) a;
  const LoadedGraph *y = *(LoadedGraph * const *) b;
  int c;

  if ((c = g_strcmp0 (x->frame->title, y->frame->title)) != 0)
    return c;
  if ((c = g_utf8_collate (x->compile->title, y->compile->title)) != 0)
    return c;
  if ((c = stage_rank (x->stage) - stage_rank (y->stage)) != 0)
    return c;
  return g_strcmp0 (x->stage, y->stage);
}

typedef struct
{
  GWeakRef document;
  double progress;
} ProgressUpdate;

static gboolean
progress_idle (gpointer data)
{
  ProgressUpdate *update = data;
  g_autoptr(FxwDocument) self = g_weak_ref_get (&update->document);

  if (self != NULL && self->busy)
    {
      self->progress = update->progress;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROGRESS]);
    }
  g_weak_ref_clear (&update->document);
  g_free (update);
  return G_SOURCE_REMOVE;
}

static void
post_progress (LoadJob *job, double progress)
{
  ProgressUpdate *update = g_new0 (ProgressUpdate, 1);

  g_weak_ref_init (&update->document, job->document);
  update->progress = progress;
  g_idle_add (progress_idle, update);
}

static void
collect_files (const char *dir, const char *root, GPtrArray *out, int depth)
{
  g_autoptr(GDir) d = NULL;
  const char *name;

  if (depth > 8 || (d = g_dir_open (dir, 0, NULL)) == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      if (name[0] == '.')
        continue;
      if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        collect_files (path, root, out, depth + 1);
      else if (g_str_has_suffix (name, ".py") && !g_str_equal (name, "program.py")
               && !g_str_equal (name, "output_code.py"))
        g_ptr_array_add (out, g_steal_pointer (&path));
    }
}

/* Whether path is an sqlite file, by its header rather than its name. *user_version: the schema version in the header
   (offset 60, big-endian); 0 for an sqlite file that is no workspace, which must not be opened through the store:
   fx_store_open would add the workspace tables to it. */
static gboolean
is_sqlite_file (const char *path, guint32 *user_version)
{
  static const char magic[16] = "SQLite format 3";
  guchar head[64] = { 0 };
  FILE *f = fopen (path, "rb");
  gboolean yes;

  *user_version = 0;
  if (f == NULL)
    return FALSE;
  yes = fread (head, 1, sizeof head, f) >= 16 && memcmp (head, magic, sizeof magic) == 0;
  fclose (f);
  if (yes)
    *user_version = (guint32) head[60] << 24 | (guint32) head[61] << 16 | (guint32) head[62] << 8 | head[63];
  return yes;
}

static GError *
store_error (const fx_diag *diag)
{
  char text[2048];

  fx_diag_format (diag, text, sizeof text);
  return g_error_new (FXW_ENGINE_ERROR, FXW_ENGINE_ERROR_PARSE, "%s", text);
}

/* A model of the worker's objects, for a row made before any view sees it. */
static GListStore *
store_from_array (GPtrArray *items, GType type)
{
  GListStore *store = g_list_store_new (type);

  for (guint i = 0; items != NULL && i < items->len; i++)
    g_list_store_append (store, g_ptr_array_index (items, i));
  return store;
}

/* The sidebar status names of the store's compile statuses. */
static const char *
sidebar_status (const char *status)
{
  if (status == NULL)
    return "";
  if (g_str_equal (status, "graph break"))
    return "graph-break";
  return status;
}

/* What a compile is called where its trace names no function: graphs logged without a compile id are
   torch.export's and AOTInductor's (aoti_compile_and_package), as fxwb ls says. */
static const char *
function_name (const fx_store_compile *c)
{
  if (c->function != NULL)
    return c->function;
  if (c->cid.frame_id < 0 && strcmp (c->compile_id, "-/-") == 0)
    return _("(export/AOTInductor: no compile id)");
  return _("(unknown function)");
}

/* The Guards view's text of one compile: why it was (re)compiled, where the graph broke, what it guards on. */
static char *
compile_guards_text (fx_store *store, const fx_store_compile *c, fx_arena *arena, fx_diag *diag)
{
  GString *out = g_string_new (NULL);
  fx_store_guard_failure *failures = NULL;
  fx_store_graph_break *breaks = NULL;
  fx_store_guard *guards = NULL;
  size_t n_failures = 0, n_breaks = 0, n_guards = 0;

  /* What the trace does not say is left out, not shown as "?" or ":-1". */
  g_string_append_printf (out, "[%s] %s", c->compile_id, function_name (c));
  if (c->file != NULL && c->line > 0)
    g_string_append_printf (out, "  %s:%d", c->file, c->line);
  else if (c->file != NULL)
    g_string_append_printf (out, "  %s", c->file);
  if (c->status != NULL && *c->status)
    g_string_append_printf (out, "  (%s)", c->status);
  g_string_append_c (out, '\n');
  if (c->fail_type != NULL || c->fail_reason != NULL)
    g_string_append_printf (out, _("Failed: %s: %s\n"), c->fail_type ? c->fail_type : "",
                            c->fail_reason ? c->fail_reason : "");
  if (fx_store_list_guard_failures (store, c->id, arena, &failures, &n_failures, diag) == FX_OK && n_failures > 0)
    {
      g_string_append_printf (out, _("\nRecompile reasons (%zu)\n"), n_failures);
      for (size_t i = 0; i < n_failures; i++)
        g_string_append_printf (out, "  %s%s%s\n", failures[i].failed_compile ? failures[i].failed_compile : "",
                                failures[i].failed_compile ? ": " : "", failures[i].reason ? failures[i].reason : "");
    }
  if (fx_store_list_graph_breaks (store, c->id, arena, &breaks, &n_breaks, diag) == FX_OK && n_breaks > 0)
    {
      g_string_append_printf (out, _("\nGraph breaks (%zu)\n"), n_breaks);
      for (size_t i = 0; i < n_breaks; i++)
        {
          /* PyTorch's own text when the trace has it: "Graph break in user code at FILE:LINE", the reason, the
             explanation and hints; the user stack after it. */
          if (breaks[i].text != NULL && *breaks[i].text)
            {
              g_auto(GStrv) lines = g_strsplit (breaks[i].text, "\n", -1);

              for (guint k = 0; lines[k] != NULL; k++)
                g_string_append_printf (out, "  %s\n", lines[k]);
            }
          else
            {
              g_string_append_printf (out, "  %s\n", breaks[i].reason ? breaks[i].reason : "");
              if (breaks[i].explanation != NULL && *breaks[i].explanation)
                g_string_append_printf (out, "  %s\n", breaks[i].explanation);
            }
          if (breaks[i].user_stack != NULL && *breaks[i].user_stack)
            {
              g_auto(GStrv) lines = g_strsplit (breaks[i].user_stack, "\n", -1);

              for (guint k = 0; lines[k] != NULL; k++)
                if (*lines[k])
                  g_string_append_printf (out, "    %s\n", lines[k]);
            }
        }
    }
  if (fx_store_list_guards (store, c->id, arena, &guards, &n_guards, diag) == FX_OK)
    {
      g_string_append_printf (out, _("\nGuards (%zu)\n"), n_guards);
      for (size_t i = 0; i < n_guards; i++)
        {
          g_string_append_printf (out, "  %-14s %s\n", guards[i].kind ? guards[i].kind : "",
                                  guards[i].code ? guards[i].code : (guards[i].source ? guards[i].source : ""));
          if (guards[i].user_line != NULL && *guards[i].user_line)
            g_string_append_printf (out, "  %-14s   %s\n", "", guards[i].user_line);
        }
    }
  fx_diag_clear (diag);
  return g_string_free (out, FALSE);
}

/* Reads a workspace: every compile in the store's order, every stage of it whose graph parsed. Graphs that did not
   parse (only their text is stored) are counted as a partial load. */
/* The kernels of a compile as FxwKernel (*out NULL when it has none), with the times a run measured: metrics
   "kernel_ms.ORDINAL.NAME" of the compile holding them ("kernel_ms.NAME" in workspaces written before, where two
   kernels of one name shared the last one's time). bw_out (may be NULL: they stay in *out): the kernels of a
   training compile's backward Inductor compile (*bw_out NULL when none). FALSE with diag set when the store
   fails. */
static gboolean
load_kernels (fx_store *store, int64_t compile_row, fx_arena *arena, GPtrArray **out, GPtrArray **bw_out,
              fx_diag *diag)
{
  g_autoptr(GHashTable) kernel_ms = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) kernel_ms_by_ordinal = g_hash_table_new (g_direct_hash, g_direct_equal);
  fx_store_kernel *stored = NULL;
  fx_store_kv *metrics = NULL;
  size_t n_stored = 0, n_metrics = 0;

  *out = NULL;
  if (bw_out != NULL)
    *bw_out = NULL;
  if (fx_store_list_kernels (store, compile_row, arena, &stored, &n_stored, diag) != FX_OK)
    return FALSE;
  if (n_stored > 0 && fx_store_list_metrics (store, compile_row, arena, &metrics, &n_metrics, diag) != FX_OK)
    return FALSE;
  for (size_t m = 0; m < n_metrics; m++)
    if (metrics[m].key != NULL && metrics[m].value != NULL && g_str_has_prefix (metrics[m].key, "kernel_ms."))
      {
        const char *rest = metrics[m].key + strlen ("kernel_ms.");
        const char *dot = rest;

        while (g_ascii_isdigit (*dot))
          dot++;
        if (dot > rest && *dot == '.')
          g_hash_table_insert (kernel_ms_by_ordinal, GINT_TO_POINTER (atoi (rest) + 1), (char *) metrics[m].value);
        else
          g_hash_table_insert (kernel_ms, (char *) rest, (char *) metrics[m].value);
      }
  if (n_stored == 0)
    return TRUE;
  *out = g_ptr_array_new_with_free_func (g_object_unref);
  for (size_t k = 0; k < n_stored; k++)
    {
      const char *ms = g_hash_table_lookup (kernel_ms_by_ordinal, GINT_TO_POINTER (stored[k].ordinal + 1));
      char *end = NULL;
      double time_ms;

      if (ms == NULL && stored[k].name != NULL)
        ms = g_hash_table_lookup (kernel_ms, stored[k].name);
      time_ms = ms ? g_ascii_strtod (ms, &end) : NAN;
      if (ms != NULL && (end == ms || *end != '\0' || !isfinite (time_ms) || time_ms < 0))
        time_ms = NAN;
      GPtrArray **to = out;

      if (bw_out != NULL && stored[k].part != NULL)
        {
          if (*bw_out == NULL)
            *bw_out = g_ptr_array_new_with_free_func (g_object_unref);
          to = bw_out;
        }
      g_ptr_array_add (*to, fxw_kernel_new (stored[k].ordinal, stored[k].name, stored[k].kind, stored[k].device,
                                            stored[k].code, stored[k].nodes, stored[k].aten, time_ms));
    }
  return TRUE;
}


/* Whether the workspace holds a torch.export trace's own records (guards export added, unbacked symbols,
   draft_export failures) outside any compile. */
static gboolean
has_export_records (fx_store *store, fx_arena *arena)
{
  fx_export_entry *es = NULL;
  size_t n = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  return fx_export_entries (store, arena, &es, &n, &diag) == FX_OK && n > 0;
}

static void
load_store (GTask *task, LoadJob *job)
{
  fx_store *store = NULL;
  fx_arena *arena = NULL;
  fx_store_compile *compiles = NULL;
  size_t n_compiles = 0;
  fx_diag diag;
  int64_t last_input = -1;
  int last_ca = -2, last_frame = -2;
  GError *error = NULL;
  fx_store_input *inputs = NULL;
  size_t n_inputs = 0;
  g_autoptr(GHashTable) debug_inputs = g_hash_table_new (g_int64_hash, g_int64_equal);

  fx_diag_clear (&diag);
  if ((job->read_only ? fx_store_open_readonly (job->path, &store, &diag)
                      : fx_store_open (job->path, false, &store, &diag)) != FX_OK)
    {
      g_task_return_error (task, store_error (&diag));
      return;
    }
  g_free (job->workspace_path);
  job->workspace_path = g_strdup (job->path);
  arena = fx_arena_new ();
  if (fx_store_list_compiles (store, arena, &compiles, &n_compiles, &diag) != FX_OK)
    {
      error = store_error (&diag);
      goto out;
    }
  /* A TORCH_COMPILE_DEBUG compile linked to a trace compile is shown through that compile (its IR dumps, fusion
     groups and files are read with it): listing it again would show every graph twice. */
  if (fx_store_list_inputs (store, arena, &inputs, &n_inputs, &diag) != FX_OK)
    {
      error = store_error (&diag);
      goto out;
    }
  for (size_t i = 0; i < n_inputs; i++)
    if (g_strcmp0 (inputs[i].kind, "torch_compile_debug") == 0)
      g_hash_table_add (debug_inputs, &inputs[i].id);
  for (size_t i = 0; i < n_compiles; i++)
    {
      fx_store_compile restart;
      const fx_store_compile *c = &compiles[i];
      fx_store_graph_info *graphs = NULL;
      size_t n_graphs = 0;
      gboolean first_stage = TRUE;
      g_autofree char *where = NULL;
      g_autofree char *guards_text = NULL;
      g_autoptr(GPtrArray) kernels = NULL;
      g_autoptr(GPtrArray) bw_kernels = NULL;
      g_autoptr(GPtrArray) runs = NULL;
      g_autoptr(GPtrArray) groups = NULL;
      g_autoptr(FxwSidebarItem) frame_item = NULL;
      g_autoptr(FxwSidebarItem) compile_item = NULL;
      fx_store_ir_node *ir_nodes = NULL;
      size_t n_ir_nodes = 0;

      if (g_task_return_error_if_cancelled (task))
        goto out_quiet;
      /* A restart ([0/0_1]: Dynamo analysed the frame again after a graph break) is the same function as the
         attempt before it; its records often do not repeat the name. */
      for (size_t j = i; c->function == NULL && c->cid.attempt > 0 && j-- > 0;)
        {
          const fx_store_compile *before = &compiles[j];

          if (before->input_id != c->input_id || before->cid.frame_id != c->cid.frame_id
              || before->cid.frame_compile_id != c->cid.frame_compile_id
              || before->cid.compiled_autograd_id != c->cid.compiled_autograd_id)
            break;
          if (before->function != NULL)
            {
              restart = *c;
              restart.function = before->function;
              restart.file = before->file;
              restart.line = before->line;
              c = &restart;
            }
        }
      if (c->linked != NULL && g_hash_table_contains (debug_inputs, &c->input_id))
        continue;
      if (fx_store_list_graphs (store, c->id, arena, &graphs, &n_graphs, &diag) != FX_OK)
        {
          error = store_error (&diag);
          goto out;
        }
      /* The base name: the sidebar is narrow and the traced machine's folders mean little here. */
      if (c->file != NULL)
        {
          g_autofree char *base = g_path_get_basename (c->file);

          where = c->line >= 0 ? g_strdup_printf ("%s:%d", base, c->line) : g_steal_pointer (&base);
        }
      else
        where = g_strdup ("");
      guards_text = compile_guards_text (store, c, arena, &diag);
      if (!load_kernels (store, c->id, arena, &kernels, &bw_kernels, &diag))
        {
          error = store_error (&diag);
          goto out;
        }
      /* Fusion groups: the top-level scheduler nodes of ir_post_fusion.txt, the compile's own or its linked
         TORCH_COMPILE_DEBUG folder's (the store returns those for a trace compile). */
      if (fx_store_list_ir_nodes (store, c->id, "post_fusion", arena, &ir_nodes, &n_ir_nodes, &diag) != FX_OK)
        {
          error = store_error (&diag);
          goto out;
        }
      for (size_t k = 0; k < n_ir_nodes; k++)
        {
          const fx_store_ir_node *ir = &ir_nodes[k];

          if (ir->fused_into != NULL || ir->name == NULL)
            continue;
          if (groups == NULL)
            groups = g_ptr_array_new_with_free_func (g_object_unref);
          g_ptr_array_add (groups, fxw_fusion_group_new (ir->name, ir->kind, ir->members, ir->kernel,
                                                         ir->post_nodes, ir->pre_nodes));
        }
      /* The runs of every graph of the compile: `fxwb compare WORKSPACE:COMPILE` runs one stage of it. */
      for (size_t k = 0; k < n_graphs; k++)
        {
          fx_store_run_row *rows = NULL;
          size_t n_rows = 0;

          if (fx_store_list_runs (store, graphs[k].id, arena, &rows, &n_rows, &diag) != FX_OK)
            {
              error = store_error (&diag);
              goto out;
            }
          if (n_rows > 0 && runs == NULL)
            runs = g_ptr_array_new_with_free_func (g_object_unref);
          for (size_t r = 0; r < n_rows; r++)
            {
              FxwRun *run = fxw_run_new (rows[r].backend, rows[r].mode, rows[r].options_json, rows[r].device,
                                         rows[r].compile_ms, rows[r].run_ms_median, rows[r].run_ms_min,
                                         rows[r].run_ms_max, rows[r].accuracy, rows[r].peak_bytes, rows[r].error);

              /* A run killed before it finished (schema 5) says so where the verdict goes. */
              fxw_run_set_details (run, graphs[k].stage, rows[r].incomplete ? "incomplete" : rows[r].verdict,
                                   rows[r].n_kernels);
              /* The kernels the run generated, with the times it measured (the Compare view aligns them). */
              if (rows[r].engine_compile > 0)
                {
                  g_autoptr(GPtrArray) run_kernels = NULL;

                  if (!load_kernels (store, rows[r].engine_compile, arena, &run_kernels, NULL, &diag))
                    {
                      g_object_unref (run);
                      error = store_error (&diag);
                      goto out;
                    }
                  if (run_kernels != NULL)
                    {
                      g_autoptr(GListStore) model = g_list_store_new (FXW_TYPE_KERNEL);

                      g_list_store_splice (model, 0, 0, run_kernels->pdata, run_kernels->len);
                      fxw_run_set_kernels (run, G_LIST_MODEL (model));
                    }
                  /* max-autotune's candidate table, when the run's compile autotuned */
                  fx_store_kv *arts = NULL;
                  size_t n_arts = 0;
                  if (fx_store_list_artifacts (store, rows[r].engine_compile, arena, &arts, &n_arts, &diag) != FX_OK)
                    {
                      g_object_unref (run);
                      error = store_error (&diag);
                      goto out;
                    }
                  for (size_t a = 0; a < n_arts; a++)
                    if (strcmp (arts[a].key, "autotune.txt") == 0)
                      fxw_run_set_autotune (run, arts[a].value);
                }
              g_ptr_array_add (runs, run);
            }
        }
      for (size_t k = 0; k <= n_graphs; k++)
        {
          fx_graph *graph = NULL;
          LoadedGraph *lg;

          /* After the graphs: a compile that has none to show (it stopped at a graph break before any op, or
             failed, or none of its graphs parsed) is listed all the same, with its status and its reasons. */
          if (k == n_graphs && !first_stage)
            break;
          if (k < n_graphs && !graphs[k].parsed)
            {
              g_string_append_printf (job->errors, _("[%s] %s: only the text of this graph is stored\n"),
                                      c->compile_id, graphs[k].stage);
              job->n_failed++;
              continue;
            }
          if (k < n_graphs && (fx_store_get_graph (store, graphs[k].id, &graph, NULL, &diag) != FX_OK || graph == NULL))
            {
              char text[2048];

              fx_diag_format (&diag, text, sizeof text);
              g_string_append_printf (job->errors, "[%s] %s: %s\n", c->compile_id, graphs[k].stage, text);
              job->n_failed++;
              fx_diag_clear (&diag);
              continue;
            }
          lg = g_new0 (LoadedGraph, 1);
          lg->graph = graph;
          lg->stage = k < n_graphs ? g_strdup (graphs[k].stage) : NULL;
          lg->bw_kernels = bw_kernels != NULL ? g_ptr_array_ref (bw_kernels) : NULL;
          if (first_stage)
            {
              g_autofree char *subtitle = g_strdup_printf ("%s  %s", function_name (c), where);
              g_autofree char *compile = g_strdup_printf ("[%s]", c->compile_id);
              g_autofree char *compile_subtitle = NULL;
              g_autofree char *frame = NULL;
              int rank = -1;

              if (lg->stage == NULL)
                /* translators: the subtitle of a compile that has no graph to show */
                compile_subtitle = g_strdup_printf ("%s  %s", subtitle, g_strcmp0 (c->status, "graph break") == 0
                                                                        ? _("(no graph: broke before any op)")
                                                                        : _("(no graph)"));
              if (c->cid.frame_id < 0 && strcmp (c->compile_id, "-/-") == 0)
                frame = g_strdup (_("torch.export / AOTInductor"));
              else if (c->cid.frame_id < 0)
                frame = g_strdup (_("debug folder (no frame id)"));
              else if (c->cid.compiled_autograd_id >= 0)
                frame = g_strdup_printf (_("frame %d (compiled autograd %d)"), c->cid.frame_id,
                                         c->cid.compiled_autograd_id);
              else
                frame = g_strdup_printf (_("frame %d"), c->cid.frame_id);
              /* One trace per rank of a distributed run: the rank heads its frames, from the trace's file name. */
              for (size_t ik = 0; ik < n_inputs; ik++)
                if (inputs[ik].id == c->input_id && fx_rank_from_path (inputs[ik].path) >= 0)
                  {
                    /* translators: a frame of one rank's trace in the sidebar: "rank 3 · frame 1" */
                    g_autofree char *ranked = g_strdup_printf (_("rank %d · %s"), fx_rank_from_path (inputs[ik].path),
                                                               frame);

                    g_free (frame);
                    frame = g_steal_pointer (&ranked);
                    rank = fx_rank_from_path (inputs[ik].path);
                  }
              frame_item = fxw_sidebar_item_new (FXW_SIDEBAR_ITEM_FRAME, frame, subtitle, NULL);
              frame_item->rank = rank;
              compile_item = fxw_sidebar_item_new (FXW_SIDEBAR_ITEM_COMPILE, compile,
                                                   compile_subtitle != NULL ? compile_subtitle : subtitle,
                                                   sidebar_status (c->status));
              compile_item->compile_row = c->id;
              compile_item->rank = rank;
              compile_item->guards = g_strdup (guards_text);
              if (kernels != NULL)
                compile_item->kernels = G_LIST_MODEL (store_from_array (kernels, FXW_TYPE_KERNEL));
              if (runs != NULL)
                compile_item->runs = G_LIST_MODEL (store_from_array (runs, FXW_TYPE_RUN));
              if (groups != NULL)
                compile_item->fusion_groups = G_LIST_MODEL (store_from_array (groups, FXW_TYPE_FUSION_GROUP));
            }
          lg->frame = g_object_ref (frame_item);
          lg->compile = g_object_ref (compile_item);
          lg->new_frame = c->input_id != last_input || c->cid.compiled_autograd_id != last_ca
                          || c->cid.frame_id != last_frame;
          lg->new_compile = first_stage;
          last_input = c->input_id;
          last_ca = c->cid.compiled_autograd_id;
          last_frame = c->cid.frame_id;
          first_stage = FALSE;
          if (graph != NULL)
            job->n_graphs++;
          g_ptr_array_add (job->graphs, lg);
        }
      post_progress (job, (i + 1.0) / n_compiles);
    }
  if (job->n_graphs == 0 && job->graphs->len == 0 && job->errors->len == 0 && has_export_records (store, arena))
    ; /* a torch.export trace's workspace: no compile, its guards and draft_export failures show in the Summary */
  else if (job->n_graphs == 0 && (job->graphs->len == 0 || job->errors->len > 0))
    {
      if (job->errors->len > 0)
        error = g_error_new (FXW_ENGINE_ERROR, FXW_ENGINE_ERROR_PARSE, "%s", job->errors->str);
      else
        error = g_error_new (FXW_ENGINE_ERROR, FXW_ENGINE_ERROR_NOT_FOUND, _("%s holds no FX graph"), job->path);
    }
out:
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
out_quiet:
  fx_arena_free (arena);
  fx_store_close (store);
}

/* ---------------------------------------------------------------- importing */

typedef enum
{
  INPUT_FX,           /* FX code files: parsed directly */
  INPUT_IMPORT,       /* a TORCH_TRACE log or folder of them, a TORCH_COMPILE_DEBUG folder, a .pt2 archive */
  INPUT_TORCH_LOGS,   /* TORCH_LOGS text: imported too (guards, recompiles, breaks, graphs, kernels) */
} InputKind;

/* A glog record prefix, "V1121 16:43:11.182000 1700 file.py:12] ": returns what follows it, or NULL. */
static const char *
glog_payload (const char *line)
{
  const char *close;

  /* strchr() finds the terminating NUL too: an empty line must not pass the first test. */
  if (strlen (line) < 6 || strchr ("VIWEFD", line[0]) == NULL || !g_ascii_isdigit (line[1])
      || !g_ascii_isdigit (line[4]) || line[5] != ' ' || (close = strstr (line, "] ")) == NULL || close - line > 200)
    return NULL;
  return close + 2;
}

/* By content, not by name: a zip is a .pt2 archive; glog lines whose payload is JSON are a TORCH_TRACE log, glog
   lines of text are TORCH_LOGS output. Anything else is left to the FX parser. */
static InputKind
classify_file (const char *path)
{
  g_autofree char *head = NULL;
  gsize len = 0;
  FILE *f = fopen (path, "rb");
  g_auto(GStrv) lines = NULL;
  guint n_glog = 0, n_json = 0;

  if (f == NULL)
    return INPUT_FX;
  head = g_malloc0 (16385);
  len = fread (head, 1, 16384, f);
  fclose (f);
  if (len >= 4 && memcmp (head, "PK\3\4", 4) == 0)
    return INPUT_IMPORT;
  lines = g_strsplit (head, "\n", 64);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *payload = glog_payload (lines[i]);

      if (payload == NULL)
        continue;
      n_glog++;
      n_json += payload[0] == '{';
    }
  if (n_json > 0)
    return INPUT_IMPORT;
  return n_glog > 0 ? INPUT_TORCH_LOGS : INPUT_FX;
}

/* A folder the importers read: a TORCH_COMPILE_DEBUG folder, or a folder of TORCH_TRACE logs with no FX file. */
static gboolean
is_import_dir (const char *path)
{
  g_autoptr(GDir) d = NULL;
  const char *name;
  gboolean logs = FALSE;

  if (fx_is_debug_dir (path))
    return TRUE;
  if ((d = g_dir_open (path, 0, NULL)) == NULL)
    return FALSE;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      if (g_str_has_suffix (name, ".py"))
        return FALSE;
      if (g_str_has_suffix (name, ".log"))
        {
          g_autofree char *file = g_build_filename (path, name, NULL);

          logs = logs || classify_file (file) == INPUT_IMPORT;
        }
    }
  return logs;
}

static void
import_progress_cb (double fraction, void *user_data)
{
  /* The import is most of the work; reading the workspace back is the rest. */
  post_progress (user_data, fraction * 0.9);
}

static void
remove_workspace_files (const char *path)
{
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);

  g_unlink (path);
  g_unlink (wal);
  g_unlink (shm);
}

/* The importer's warnings, as `fxwb import` prints them. */
static void
append_import_warnings (GString *out, const char *path, const fx_import_stats *stats)
{
  for (int w = 0; w < FX_IMPORT_WARN_COUNT; w++)
    {
      if (stats->warnings[w] == 0)
        continue;
      g_autofree char *count = g_strdup_printf ("%" G_GINT64_FORMAT, stats->warnings[w]);

      /* translators: a warning count and the warning's name, e.g. "3 × bad line" */
      g_string_append_printf (out, _("  %s × %s\n"), count, fx_import_warning_name (w));
      for (int k = 0; k < FX_IMPORT_EXAMPLES && k < stats->warnings[w]; k++)
        g_string_append_printf (out, "    %s:%" G_GINT64_FORMAT ": %s\n", path, stats->examples[w][k].line,
                                stats->examples[w][k].text);
    }
}

/* Imports job->path into a fresh workspace in the cache folder and points job->path at it. The engine's import
   cannot be interrupted: a cancel returns at once (the task returns on cancel) and the finished import is thrown
   away here. */
static gboolean
import_input (GTask *task, LoadJob *job, GCancellable *cancellable)
{
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "fx-workbench", "imports", NULL);
  g_autofree char *absolute = g_canonicalize_filename (job->path, NULL);
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, absolute, -1);
  g_autofree char *base = g_path_get_basename (job->path);
  g_autofree char *name = NULL;
  g_autofree char *out = NULL;
  fx_store *store = NULL;
  fx_import_stats stats;
  fx_diag diag;
  fx_status st;
  gboolean warnings = FALSE;

  for (char *p = base; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '.' && *p != '-' && *p != '_')
      *p = '_';
  hash[12] = '\0';
  name = g_strdup_printf ("%s-%s.fxwb", base, hash);
  out = g_build_filename (dir, name, NULL);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;

      g_task_return_new_error (task, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot create %s: %s"), dir,
                               g_strerror (saved));
      return FALSE;
    }
  /* A fresh file: a changed input would otherwise be added next to its earlier version. */
  remove_workspace_files (out);
  fx_diag_clear (&diag);
  if ((st = fx_store_open (out, true, &store, &diag)) != FX_OK)
    {
      g_task_return_error (task, store_error (&diag));
      return FALSE;
    }
  if (!g_task_set_return_on_cancel (task, TRUE))
    {
      fx_store_close (store);
      remove_workspace_files (out);
      return FALSE;   /* cancelled already; the task has returned */
    }
  st = fx_import_path (store, job->path, import_progress_cb, job, &stats, &diag);
  fx_store_close (store);
  /* Cancelled meanwhile: the task returned then (FALSE here), or returns now. */
  if (!g_task_set_return_on_cancel (task, FALSE) || g_task_return_error_if_cancelled (task))
    {
      remove_workspace_files (out);
      return FALSE;
    }
  if (st != FX_OK)
    {
      remove_workspace_files (out);
      g_task_return_error (task, store_error (&diag));
      return FALSE;
    }
  for (int w = 0; w < FX_IMPORT_WARN_COUNT; w++)
    warnings = warnings || stats.warnings[w] > 0;
  if (warnings)
    {
      /* translators: the import of a file finished with warnings; their counts and examples follow */
      g_string_append_printf (job->notice, _("Imported %s with warnings (the rest is shown):\n"), base);
      append_import_warnings (job->notice, job->path, &stats);
    }
  g_free (job->path);
  job->path = g_steal_pointer (&out);
  return TRUE;
}

/* Whether a workspace must be opened read-only: no write permission, or a file marked read-only (a write bit is
   what a user removes to protect a file, and root's access() ignores it). */
static gboolean
is_read_only (const char *path)
{
  GStatBuf st;

  if (g_access (path, W_OK) != 0)
    return TRUE;
  return g_stat (path, &st) == 0 && (st.st_mode & 0222) == 0;
}

static void
load_worker (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  LoadJob *job = task_data;
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  gboolean is_dir = g_file_test (job->path, G_FILE_TEST_IS_DIR);
  guint32 user_version;
  InputKind kind = INPUT_FX;

  if (!is_dir && is_sqlite_file (job->path, &user_version))
    {
      if (user_version == 0)
        g_task_return_new_error (task, FXW_ENGINE_ERROR, FXW_ENGINE_ERROR_UNSUPPORTED,
                                 _("%s: an sqlite file that is not an FX Workbench workspace"), job->path);
      else
        {
          job->read_only = is_read_only (job->path);
          if (job->read_only)
            {
              g_autofree char *base = g_path_get_basename (job->path);

              /* translators: the workspace file has no write permission */
              g_string_append_printf (job->notice, _("%s is read-only: it is opened for reading and nothing is "
                                                     "written to it.\n"), base);
            }
          load_store (task, job);
        }
      return;
    }
  if (is_dir)
    kind = is_import_dir (job->path) ? INPUT_IMPORT : INPUT_FX;
  else if (g_file_test (job->path, G_FILE_TEST_IS_REGULAR) && !g_str_has_suffix (job->path, ".py"))
    kind = classify_file (job->path);
  if (kind == INPUT_IMPORT || kind == INPUT_TORCH_LOGS)
    {
      if (import_input (task, job, cancellable))
        load_store (task, job);
      return;
    }
  if (is_dir)
    collect_files (job->path, job->path, files, 0);
  else
    g_ptr_array_add (files, g_strdup (job->path));

  for (guint i = 0; i < files->len; i++)
    {
      const char *path = g_ptr_array_index (files, i);
      fx_graph *graph = NULL;
      fx_diag diag;

      if (g_task_return_error_if_cancelled (task))
        return;
      fx_diag_clear (&diag);
      if (fx_parse_fx_file (path, &graph, &diag) == FX_OK)
        {
          LoadedGraph *lg = g_new0 (LoadedGraph, 1);
          g_autofree char *dir = g_path_get_dirname (path);
          g_autofree char *parent = g_path_get_dirname (dir);

          g_autofree char *frame = NULL, *compile = NULL;

          lg->stage = g_path_get_basename (path);
          if (is_dir)
            {
              compile = g_path_get_basename (dir);
              frame = g_str_has_prefix (parent, job->path) && strlen (parent) > strlen (job->path)
                      ? g_strdup (parent + strlen (job->path) + 1)
                      : g_path_get_basename (job->path);
            }
          else
            {
              compile = g_strdup (lg->stage);
              frame = g_path_get_basename (dir);
            }
          lg->frame = fxw_sidebar_item_new (FXW_SIDEBAR_ITEM_FRAME, frame, NULL, NULL);
          lg->compile = fxw_sidebar_item_new (FXW_SIDEBAR_ITEM_COMPILE, compile, NULL, "ok");
          lg->graph = graph;
          job->n_graphs++;
          g_ptr_array_add (job->graphs, lg);
        }
      else
        {
          char text[2048];
          g_autofree char *valid = NULL;

          fx_diag_format (&diag, text, sizeof text);
          /* A binary file's line is not UTF-8; the banner needs UTF-8. */
          valid = g_utf8_make_valid (text, -1);
          g_string_append (job->errors, valid);
          job->n_failed++;
        }
      post_progress (job, (i + 1.0) / files->len);
    }

  if (job->n_graphs == 0 && (job->graphs->len == 0 || job->errors->len > 0))
    {
      if (job->errors->len > 0)
        g_task_return_new_error (task, FXW_ENGINE_ERROR, FXW_ENGINE_ERROR_PARSE, "%s", job->errors->str);
      else
        g_task_return_new_error (task, FXW_ENGINE_ERROR, FXW_ENGINE_ERROR_NOT_FOUND,
                                 _("%s holds no FX graph"), job->path);
      return;
    }
  g_ptr_array_sort (job->graphs, compare_loaded);
  g_task_return_boolean (task, TRUE);
}

static void
set_busy (FxwDocument *self, gboolean busy)
{
  if (self->busy == busy)
    return;
  self->busy = busy;
  self->progress = 0;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROGRESS]);
}

static void
set_error (FxwDocument *self, GError *error)
{
  g_clear_error (&self->error);
  self->error = error;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR]);
}

/* Builds the tree from the worker's rows: on the main thread, because views bind to these models. */
static void
populate (FxwDocument *self, LoadJob *job)
{
  FxwSidebarItem *frame = NULL, *compile = NULL;
  gboolean first_stage = FALSE;

  g_list_store_remove_all (self->frames);
  for (guint i = 0; i < job->graphs->len; i++)
    {
      LoadedGraph *lg = g_ptr_array_index (job->graphs, i);
      g_autoptr(FxwSidebarItem) stage = NULL;
      g_autoptr(FxwGraph) graph = NULL;
      g_autofree char *title = g_strdup_printf ("%s / %s", lg->compile->title, lg->stage);
      g_autofree char *nodes = NULL;

      if (frame == NULL || lg->new_frame || !g_str_equal (frame->title, lg->frame->title))
        {
          frame = lg->frame;
          g_list_store_append (self->frames, frame);
          compile = NULL;
        }
      if (compile == NULL || lg->new_compile || !g_str_equal (compile->title, lg->compile->title))
        {
          compile = lg->compile;
          fxw_sidebar_item_append (frame, compile);
          first_stage = TRUE;
        }
      if (lg->graph == NULL)
        continue;   /* a compile without a graph: the compile row alone, with its reasons */
      graph = fxw_graph_new (g_steal_pointer (&lg->graph), title);
      /* translators: the subtitle of a graph stage in the sidebar */
      nodes = g_strdup_printf (ngettext ("%u node", "%u nodes", fxw_graph_get_n_nodes (graph)),
                               fxw_graph_get_n_nodes (graph));
      stage = fxw_sidebar_item_new_stage (compile, lg->stage, nodes, graph);
      /* Inductor names a kernel's nodes as Dynamo named them: the compile's first stage is Dynamo's graph. A
         training compile's backward stages have the backward's kernels, named as its graphs name their nodes. */
      if (lg->bw_kernels != NULL && g_str_has_suffix (lg->stage, FX_BACKWARD_SUFFIX))
        {
          g_clear_object (&stage->kernels);
          stage->kernels = G_LIST_MODEL (store_from_array (lg->bw_kernels, FXW_TYPE_KERNEL));
          stage->kernels_by_name = TRUE;
        }
      else
        stage->kernels_by_name = first_stage;
      first_stage = FALSE;
      fxw_sidebar_item_append (compile, stage);
    }
}

static void
load_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) outer = user_data;
  FxwDocument *self = g_task_get_source_object (outer);
  LoadJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;

  set_busy (self, FALSE);
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      set_error (self, g_error_copy (error));
      g_task_return_error (outer, g_steal_pointer (&error));
      return;
    }
  populate (self, job);
  self->read_only = job->read_only;
  g_free (self->workspace_path);
  self->workspace_path = g_strdup (job->workspace_path);
  g_free (self->notice);
  self->notice = job->notice->len > 0 ? g_strdup (job->notice->str) : NULL;
  if (job->n_failed > 0)
    set_error (self, g_error_new (FXW_ENGINE_ERROR, FXW_ENGINE_ERROR_PARSE,
                                  /* translators: a partial load; the details follow on the next lines */
                                  ngettext ("%u file could not be read:\n%s", "%u files could not be read:\n%s",
                                            job->n_failed),
                                  job->n_failed, job->errors->str));
  else
    set_error (self, NULL);
  g_task_return_boolean (outer, TRUE);
}

void
fxw_document_load_async (FxwDocument *self, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr(GTask) outer = NULL;
  g_autoptr(GTask) inner = NULL;
  LoadJob *job;

  g_return_if_fail (FXW_IS_DOCUMENT (self));

  outer = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (outer, fxw_document_load_async);

  job = g_new0 (LoadJob, 1);
  job->path = g_file_get_path (self->file);
  job->graphs = g_ptr_array_new_with_free_func ((GDestroyNotify) loaded_graph_free);
  job->errors = g_string_new (NULL);
  job->notice = g_string_new (NULL);
  job->document = g_object_ref (self);
  if (job->path == NULL)
    {
      load_job_free (job);
      g_task_return_new_error (outer, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "%s", _("Only local files can be opened"));
      return;
    }
  set_busy (self, TRUE);
  inner = g_task_new (NULL, cancellable, load_done, g_steal_pointer (&outer));
  g_task_set_task_data (inner, job, (GDestroyNotify) load_job_free);
  g_task_run_in_thread (inner, load_worker);
}

gboolean
fxw_document_load_finish (FxwDocument *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
fxw_document_finalize (GObject *object)
{
  FxwDocument *self = FXW_DOCUMENT (object);

  g_clear_object (&self->file);
  g_clear_object (&self->frames);
  g_clear_pointer (&self->title, g_free);
  g_clear_pointer (&self->workspace_path, g_free);
  g_clear_pointer (&self->notice, g_free);
  g_clear_error (&self->error);
  G_OBJECT_CLASS (fxw_document_parent_class)->finalize (object);
}

static void
fxw_document_class_init (FxwDocumentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = fxw_document_finalize;

  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_PROGRESS] = g_param_spec_double ("progress", NULL, NULL, 0, 1, 0,
                                                   G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ERROR] = g_param_spec_boxed ("error", NULL, NULL, G_TYPE_ERROR,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  fxw_object_class_install_properties (object_class, N_PROPS, properties, property_access);
}

static void
fxw_document_init (FxwDocument *self)
{
  self->frames = g_list_store_new (FXW_TYPE_SIDEBAR_ITEM);
}

FxwDocument *
fxw_document_new (GFile *file)
{
  FxwDocument *self;

  g_return_val_if_fail (G_IS_FILE (file), NULL);

  self = g_object_new (FXW_TYPE_DOCUMENT, NULL);
  self->file = g_object_ref (file);
  self->title = g_file_get_basename (file);
  return self;
}

GFile *
fxw_document_get_file (FxwDocument *self)
{
  return self->file;
}

const char *
fxw_document_get_title (FxwDocument *self)
{
  return self->title;
}

gboolean
fxw_document_get_busy (FxwDocument *self)
{
  return self->busy;
}

double
fxw_document_get_progress (FxwDocument *self)
{
  return self->progress;
}

const GError *
fxw_document_get_error (FxwDocument *self)
{
  return self->error;
}

GListModel *
fxw_document_get_frames (FxwDocument *self)
{
  return G_LIST_MODEL (self->frames);
}

gboolean
fxw_document_get_read_only (FxwDocument *self)
{
  return self->read_only;
}

const char *
fxw_document_get_workspace_path (FxwDocument *self)
{
  return self->workspace_path;
}

const char *
fxw_document_get_notice (FxwDocument *self)
{
  return self->notice;
}
