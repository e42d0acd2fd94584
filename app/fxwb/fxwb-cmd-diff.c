/* fxwb-cmd-diff.c: `fxwb diff A B`: what changed between two compiles (WORKSPACE:ID), two graph files, a graph file
   and a compile, or two workspaces (compiles paired by frame and compile id). Exits like diff(1). */
#include "fxwb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx/accuracy.h"
#include "fx/diff.h"
#include "fx/pyparse.h"
#include "fx/ranks.h"
#include "fx/runtime.h"
#include "fx/store.h"
#include "fxwb-runs.h"

/* diff(1)'s exit codes. */
enum
{
  DIFF_SAME = 0,
  DIFF_DIFFERS = 1,
  DIFF_ERROR = 2,
};

typedef enum
{
  SIDE_FILE,
  SIDE_COMPILE,
  SIDE_WORKSPACE,
  SIDE_RUN,
} side_kind;

typedef struct
{
  side_kind kind;
  char *arg;
  fxwb_source src;     /* SIDE_FILE: file and graph; the others: the workspace (store, store_path) */
  char *compile_id;    /* SIDE_COMPILE, with src.compile_row */
  int64_t run_id;      /* SIDE_RUN */
} side;

/* The file a side names: its graph file or its workspace. */
static const char *
side_path (const side *s)
{
  return s->kind == SIDE_FILE ? s->src.file : s->src.store_path;
}

static gboolean
is_regular_file (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISREG (st.st_mode);
}

/* Prints a diff as text or JSON past fxwb's terminal filter: the colours are ours, and the diff text already shows
   input controls as '?'; JSON escapes them itself. */
static void
print_diff (const fx_diff *diff, gboolean json, gboolean use_color)
{
  fx_buf out;
  fx_buf_init (&out);
  if (json)
    fx_diff_print_json (diff, &out);
  else
    fx_diff_print_text (diff, use_color, &out);
  fputs (out.data ? out.data : "", fxwb_real_stdout ());
  fx_buf_free (&out);
}

/* A workspace file is named *.fxwb or starts with sqlite's magic. */
static gboolean
is_workspace (const char *path)
{
  return g_str_has_suffix (path, ".fxwb") || fxwb_is_workspace_file (path);
}

static int
open_workspace (const char *path, fxwb_source *src)
{
  return fxwb_source_open_workspace ("fxwb diff", path, FXWB_OPEN_READONLY, src) == FXWB_EXIT_OK ? DIFF_SAME
                                                                                                 : DIFF_ERROR;
}

static int
side_load (const char *arg, side *s)
{
  memset (s, 0, sizeof *s);
  s->arg = g_strdup (arg);
  fx_diag diag;
  fx_diag_clear (&diag);
  if (!is_regular_file (arg))
    {
      /* WORKSPACE:ID: the part before the last ':' is the workspace file. */
      const char *colon = strrchr (arg, ':');
      g_autofree char *path = colon ? g_strndup (arg, (gsize) (colon - arg)) : NULL;
      if (!path || !is_regular_file (path))
        {
          fprintf (stderr, "fxwb diff: %s: %s\n", arg,
                   access (arg, F_OK) == 0 ? "not a regular file" : "no such file (or WORKSPACE:COMPILE_ID)");
          return DIFF_ERROR;
        }
      s->kind = SIDE_COMPILE;
      if (open_workspace (path, &s->src) != DIFF_SAME)
        return DIFF_ERROR;
      /* WORKSPACE:run/ID: a stored run (ids as `fxwb ls WORKSPACE --runs` lists them). */
      if (g_str_has_prefix (colon + 1, "run/"))
        {
          char *end = NULL;
          gint64 id = g_ascii_strtoll (colon + 5, &end, 10);
          fx_arena *arena = fx_arena_new ();
          fx_store_run_row row;
          fx_status st = end && *end == '\0' && id > 0 ? fx_store_get_run (s->src.store, id, arena, &row, &diag)
                                                        : FX_ERR_PARSE;
          fx_arena_free (arena);
          if (st != FX_OK)
            {
              if (st == FX_ERR_PARSE)
                fprintf (stderr, "fxwb diff: %s: '%s' is not a run id (run/ID, see `fxwb ls %s --runs`)\n", path,
                         colon + 1, path);
              else
                fprintf (stderr, "fxwb diff: %s (see `fxwb ls %s --runs`)\n", diag.message, path);
              return DIFF_ERROR;
            }
          s->kind = SIDE_RUN;
          s->run_id = id;
          return DIFF_SAME;
        }
      if (fxwb_source_find_compile ("fxwb diff", colon + 1, &s->src) != FXWB_EXIT_OK)
        return DIFF_ERROR;
      s->compile_id = g_strdup (colon + 1);
      return DIFF_SAME;
    }
  if (is_workspace (arg))
    {
      s->kind = SIDE_WORKSPACE;
      return open_workspace (arg, &s->src);
    }
  s->kind = SIDE_FILE;
  s->src.file = g_strdup (arg);
  char *text = NULL;
  size_t len = 0;
  fx_status st = fx_file_read (arg, &text, &len, &diag);
  if (st == FX_OK)
    st = fxwb_looks_like_json (arg, text, len) ? fx_graph_from_json (text, len, &s->src.graph, &diag)
                                     : fx_parse_fx_code (text, len, arg, &s->src.graph, &diag);
  free (text);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return DIFF_ERROR;
    }
  return DIFF_SAME;
}

static void
side_clear (side *s)
{
  fxwb_source_clear (&s->src);
  g_free (s->arg);
  g_free (s->compile_id);
}

/* A graph file against a compile: the compile's graph of --stage, else the stage that differs least from the file
   (a repro.py is an AOT graph, fx_graph_readable.py a Dynamo graph). The chosen graph is diffed into diff. */
static int
diff_file_against_compile (fx_diff *diff, const side *file, const side *comp, gboolean file_is_a, const char *stage,
                           const fx_diff_graph_opts *gopts, char **chosen)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_arena *arena = fx_arena_new ();
  fx_store_graph_info *gi = NULL;
  size_t n = 0;
  int rc = DIFF_ERROR;
  if (fx_store_list_graphs (comp->src.store, comp->src.compile_row, arena, &gi, &n, &diag) != FX_OK)
    {
      fxwb_print_diag (&diag);
      goto out;
    }
  int64_t best_id = 0;
  size_t best_count = (size_t) -1;
  const char *best_stage = NULL;
  for (size_t i = 0; i < n; i++)
    {
      if (!gi[i].parsed || (stage && strcmp (gi[i].stage, stage) != 0))
        continue;
      fx_graph *g = NULL;
      if (fx_store_get_graph (comp->src.store, gi[i].id, &g, NULL, &diag) != FX_OK || !g)
        continue;
      fx_diff *trial = fx_diff_new (NULL, NULL);
      fx_diff_graphs (trial, file_is_a ? file->src.graph : g, file_is_a ? g : file->src.graph, gi[i].stage, gopts,
                      &diag);
      size_t c = fx_diff_count (trial);
      fx_diff_free (trial);
      fx_graph_free (g);
      if (c < best_count)
        {
          best_count = c;
          best_id = gi[i].id;
          best_stage = gi[i].stage;
        }
    }
  if (!best_id)
    {
      fprintf (stderr, "fxwb diff: compile %s of %s has no %s graph that parsed\n", comp->compile_id,
               side_path (comp), stage ? stage : "");
      goto out;
    }
  fx_graph *g = NULL;
  if (fx_store_get_graph (comp->src.store, best_id, &g, NULL, &diag) != FX_OK || !g)
    {
      fxwb_print_diag (&diag);
      goto out;
    }
  diff->owned = realloc (diff->owned, (diff->n_owned + 1) * sizeof *diff->owned);
  diff->owned[diff->n_owned++] = g;
  if (fx_diff_graphs (diff, file_is_a ? file->src.graph : g, file_is_a ? g : file->src.graph, best_stage, gopts,
                      &diag) != FX_OK)
    {
      fxwb_print_diag (&diag);
      goto out;
    }
  *chosen = g_strdup (best_stage);
  rc = DIFF_SAME;
out:
  fx_arena_free (arena);
  return rc;
}

static char *
side_label (const side *s, const char *stage)
{
  if (s->kind == SIDE_COMPILE)
    return g_strdup_printf ("%s:[%s]%s%s", side_path (s), s->compile_id, stage ? " " : "", stage ? stage : "");
  return g_strdup (side_path (s));
}


/* ---------------------------------------------------------------- --outputs: a run diff */

static int
run_diff (fx_diff *diff, const char *arg_a, const char *arg_b, const char *stage, const char *backend, int repeat)
{
  fxwb_run_opts o;
  fxwb_run_opts_init (&o);
  o.no_store = TRUE;
  o.stage = g_strdup (stage);
  o.repeat = repeat;
  o.kernels = backend != NULL;
  fxwb_source a, b;
  fxwb_inputs ia, ib;
  memset (&ia, 0, sizeof ia);
  memset (&ib, 0, sizeof ib);
  memset (&b, 0, sizeof b);
  int rc = DIFF_ERROR;
  if (fxwb_source_load ("fxwb diff", arg_a, &o, &a) != FXWB_EXIT_OK)
    goto out_a;
  if (fxwb_source_load ("fxwb diff", arg_b, &o, &b) != FXWB_EXIT_OK)
    goto out;
  /* The same seed for both: equal input specs give equal values. */
  if (fxwb_inputs_make ("fxwb diff", &a, &o, &ia) != FXWB_EXIT_OK
      || fxwb_inputs_make ("fxwb diff", &b, &o, &ib) != FXWB_EXIT_OK)
    goto out;
  if (ia.n_inputs != ib.n_inputs)
    {
      fprintf (stderr, "fxwb diff: %s takes %zu inputs and %s %zu: no common inputs to run them on\n", a.label,
               ia.n_inputs, b.label, ib.n_inputs);
      goto out;
    }
  for (size_t i = 0; i < ia.n_inputs; i++)
    {
      const fx_value *x = &ia.inputs[i], *y = &ib.inputs[i];
      bool same = x->kind == y->kind;
      if (same && x->kind == FX_VALUE_TENSOR)
        {
          same = x->u.t->dtype == y->u.t->dtype && x->u.t->ndim == y->u.t->ndim;
          for (int d = 0; same && d < x->u.t->ndim; d++)
            same = x->u.t->sizes[d] == y->u.t->sizes[d];
        }
      if (!same)
        {
          fprintf (stderr, "fxwb diff: input %zu differs in kind, dtype or shape between %s and %s\n", i, a.label,
                   b.label);
          goto out;
        }
    }
  if (!backend)
    {
      if (!ia.ref || !ib.ref)
        {
          fprintf (stderr, "fxwb diff: the interpreter cannot run %s: %s\n", !ia.ref ? a.label : b.label,
                   !ia.ref ? ia.ref_error : ib.ref_error);
          goto out;
        }
      fx_diff_outputs (diff, "eager", ia.ref, ia.n_ref, ib.ref, ib.n_ref, ia.ref64, ia.n_ref);
      rc = DIFF_SAME;
      goto out;
    }
  fxwb_column col;
  if (!fxwb_column_parse ("fxwb diff", backend, &o, &col))
    goto out;
  if (!fxwb_column_validate ("fxwb diff", &col))
    {
      fxwb_column_clear (&col);
      goto out;
    }
  fx_run_config cfg = { .backend = col.spec, .mode = col.mode, .options = col.kv, .n_options = col.n_kv,
                        .warmup = 1, .repeat = repeat };
  fx_arena *arena = fx_arena_new ();
  fx_value *oa = NULL, *ob = NULL;
  size_t noa = 0, nob = 0;
  fx_compiled *ca = NULL, *cb = NULL;
  fx_run_result ra, rb;
  fx_run_backend (a.graph, ia.inputs, ia.n_inputs, &cfg, ia.ref, ia.ref64, ia.n_ref, arena, &oa, &noa, &ca, &ra);
  fx_run_backend (b.graph, ia.inputs, ia.n_inputs, &cfg, ib.ref, ib.ref64, ib.n_ref, arena, &ob, &nob, &cb, &rb);
  if (ra.status != FX_OK || rb.status != FX_OK)
    fprintf (stderr, "fxwb diff: %s failed on %s: %s\n", backend, ra.status != FX_OK ? a.label : b.label,
             ra.status != FX_OK ? ra.error : rb.error);
  else
    {
      g_autofree char *scope = g_strdup_printf ("%s", backend);
      fx_diff_outputs (diff, scope, oa, noa, ob, nob, ia.ref64, ia.n_ref);
      g_autofree char *ma = g_strdup_printf ("%.4g ms", ra.median_ms);
      g_autofree char *mb = g_strdup_printf ("%.4g ms (x%.2f)", rb.median_ms, ra.median_ms > 0 ? rb.median_ms / ra.median_ms : NAN);
      fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "run", backend, backend,
                                      "median", ma, mb);
      e->informational = true;
      /* Per kernel: the time ratio, kernels paired by name. */
      /* any backend that times its kernels (the contract's optional profile member), both sides the same one */
      if (ca && cb && ca->backend == cb->backend && FX_BACKEND_HAS (ca->backend, profile))
        {
          fx_diag diag;
          fx_diag_clear (&diag);
          if (fx_compiled_profile (ca, ia.inputs, ia.n_inputs, repeat, &diag) == FX_OK
              && fx_compiled_profile (cb, ia.inputs, ia.n_inputs, repeat, &diag) == FX_OK)
            {
              g_autoptr (GHashTable) by_name = g_hash_table_new (g_str_hash, g_str_equal);
              for (size_t k = 0; k < cb->n_kernels; k++)
                g_hash_table_insert (by_name, (gpointer) cb->kernels[k].name, &cb->kernels[k]);
              for (size_t k = 0; k < ca->n_kernels; k++)
                {
                  const fx_kernel_info *x = &ca->kernels[k];
                  const fx_kernel_info *y = g_hash_table_lookup (by_name, x->name);
                  if (!y)
                    {
                      fx_diff_add (diff, FX_DIFF_SECTION_KERNELS, FX_DIFF_REMOVED, scope, "kernel", x->name, NULL,
                                   NULL, NULL, NULL);
                      continue;
                    }
                  g_hash_table_remove (by_name, x->name);
                  if (x->time_ms < 0 || y->time_ms < 0)
                    continue;
                  g_autofree char *ta = g_strdup_printf ("%.4g ms", x->time_ms);
                  g_autofree char *tb = g_strdup_printf ("%.4g ms (x%.2f)", y->time_ms,
                                                         x->time_ms > 0 ? y->time_ms / x->time_ms : NAN);
                  e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "kernel", x->name, y->name,
                                   "time", ta, tb);
                  e->informational = true;
                }
              for (size_t k = 0; k < cb->n_kernels; k++)
                if (g_hash_table_contains (by_name, cb->kernels[k].name))
                  fx_diff_add (diff, FX_DIFF_SECTION_KERNELS, FX_DIFF_ADDED, scope, "kernel", NULL,
                               cb->kernels[k].name, NULL, NULL, NULL);
            }
          else
            fprintf (stderr, "fxwb diff: per-kernel timing failed: %s\n", diag.message);
        }
      rc = DIFF_SAME;
    }
  for (size_t i = 0; i < noa; i++)
    fx_value_clear (&oa[i]);
  for (size_t i = 0; i < nob; i++)
    fx_value_clear (&ob[i]);
  fx_compiled_free (ca);
  fx_compiled_free (cb);
  fx_arena_free (arena);
  fxwb_column_clear (&col);
out:
  fxwb_inputs_clear (&ia);
  fxwb_inputs_clear (&ib);
  fxwb_source_clear (&b);
  fxwb_source_clear (&a);
out_a:
  fxwb_run_opts_clear (&o);
  return rc;
}

/* fxwb diff WS --ranks: where the ranks of a multi-rank workspace diverge, then for each compile id whose graph or
   guards differ, the compile diff of the lowest rank's compile against the first rank that differs. */
static int
ranks_diff (const char *path, const fx_diff_compile_opts *opts, gboolean json, gboolean use_color)
{
  fxwb_source ws;
  memset (&ws, 0, sizeof ws);
  if (open_workspace (path, &ws) != DIFF_SAME)
    return DIFF_ERROR;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_arena *arena = fx_arena_new ();
  fx_rank_input *ranks = NULL;
  fx_rank_divergence *ds = NULL;
  size_t nr = 0, nd = 0;
  int rc = DIFF_SAME;
  g_autoptr (GHashTable) shown = NULL;
  if (fx_ranks_list (ws.store, arena, &ranks, &nr, &diag) != FX_OK
      || fx_ranks_diverge (ws.store, arena, &ds, &nd, &diag) != FX_OK)
    {
      fxwb_print_diag (&diag);
      rc = DIFF_ERROR;
      goto out;
    }
  if (nr < 2)
    {
      fprintf (stderr, "fxwb diff: %s holds %zu ranked input%s: --ranks needs the traces of two ranks or more "
                       "(dedicated_log_torch_trace_rank_N_*.log)\n", path, nr, nr == 1 ? "" : "s");
      rc = DIFF_ERROR;
      goto out;
    }
  if (json)
    {
      json_object *list = json_object_new_array ();
      for (size_t i = 0; i < nd; i++)
        {
          json_object *o = json_object_new_object ();
          fxwb_json_add_str (o, "compile_id", ds[i].compile_id);
          fxwb_json_add_str (o, "kind", fx_rank_div_kind_name (ds[i].kind));
          fxwb_json_add_str (o, "ranks", ds[i].ranks);
          fxwb_json_add_int (o, "ref_rank", ds[i].ref_rank);
          fxwb_json_add_int (o, "other_rank", ds[i].other_rank);
          fxwb_json_add_str (o, "detail", ds[i].detail);
          json_object_array_add (list, o);
        }
      fxwb_json_print (list);
      rc = nd ? DIFF_DIFFERS : DIFF_SAME;
      goto out;
    }
  if (nd == 0)
    {
      printf ("%zu ranks agree: the same compiles, graphs, guards, cache results, collectives and runtime estimates\n", nr);
      goto out;
    }
  printf ("ranks diverge: (%zu ranks)\n", nr);
  fxwb_print_rank_divergences (ds, nd);
  /* Each rank named by a graph or guards divergence against the reference rank, once per compile id and rank. */
  fx_store_compile *cs = NULL;
  size_t nc = 0;
  if (fx_store_list_compiles (ws.store, arena, &cs, &nc, &diag) != FX_OK)
    {
      fxwb_print_diag (&diag);
      rc = DIFF_ERROR;
      goto out;
    }
  shown = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (size_t i = 0; i < nd; i++)
    {
      if ((ds[i].kind != FX_RANK_DIV_GRAPH && ds[i].kind != FX_RANK_DIV_GUARDS) || !ds[i].ref_compile_row)
        continue;
      /* ds[i].ranks: "rank 3" or "ranks 1, 3". */
      const char *list = strchr (ds[i].ranks, ' ');
      g_auto (GStrv) parts = g_strsplit (list ? list + 1 : "", ", ", -1);
      for (int k = 0; parts[k]; k++)
        {
          int rank = atoi (parts[k]);
          g_autofree char *key = g_strdup_printf ("%s %d", ds[i].compile_id, rank);
          if (g_hash_table_contains (shown, key))
            continue;
          int64_t row = 0;
          for (size_t r = 0; r < nr && !row; r++)
            if (ranks[r].rank == rank)
              for (size_t c = 0; c < nc && !row; c++)
                if (cs[c].input_id == ranks[r].input_id && strcmp (cs[c].compile_id, ds[i].compile_id) == 0)
                  row = cs[c].id;
          if (!row)
            continue;
          g_hash_table_add (shown, g_steal_pointer (&key));
          g_autofree char *la = g_strdup_printf ("%s:rank%d:%s", path, ds[i].ref_rank, ds[i].compile_id);
          g_autofree char *lb = g_strdup_printf ("%s:rank%d:%s", path, rank, ds[i].compile_id);
          fx_diff *diff = fx_diff_new (la, lb);
          fx_diag_clear (&diag);
          if (fx_diff_compiles (diff, ws.store, ds[i].ref_compile_row, ws.store, row, opts, &diag) != FX_OK)
            fxwb_print_diag (&diag);
          else
            {
              putchar ('\n');
              fflush (stdout);
              print_diff (diff, FALSE, use_color);
              fflush (fxwb_real_stdout ());
            }
          fx_diff_free (diff);
        }
    }
  rc = DIFF_DIFFERS;
out:
  fx_arena_free (arena);
  fxwb_source_clear (&ws);
  return rc;
}

int
fxwb_cmd_diff (int argc, char **argv)
{
  gboolean guards = FALSE, graph = FALSE, kernels = FALSE, code = FALSE, metrics = FALSE, runs = FALSE;
  gboolean json = FALSE, ignore_names = FALSE, ignore_meta = FALSE, outputs = FALSE, ranks = FALSE;
  int context = 3, repeat = 10;
  g_autofree char *stage = NULL, *color = NULL, *backend = NULL;
  GOptionEntry entries[] = {
    { "guards", 'g', 0, G_OPTION_ARG_NONE, &guards, "Guards added, removed and changed, and the failure that caused "
      "the recompile", NULL },
    { "graph", 0, 0, G_OPTION_ARG_NONE, &graph, "Nodes added, removed and changed (target, args, kwargs, meta)", NULL },
    { "kernels", 'k', 0, G_OPTION_ARG_NONE, &kernels, "Kernels and fusion groups added, removed and changed", NULL },
    { "code", 'c', 0, G_OPTION_ARG_NONE, &code, "The generated code (Inductor's output code), line by line", NULL },
    { "metrics", 'm', 0, G_OPTION_ARG_NONE, &metrics, "Compile times and compilation_metrics", NULL },
    { "runs", 0, 0, G_OPTION_ARG_NONE, &runs, "Stored runs (fxwb run/compare --workspace), the latest of each "
      "configuration paired: verdicts, per output max abs/RMSE/same(), per kernel and end-to-end time ratios", NULL },
    { "outputs", 0, 0, G_OPTION_ARG_NONE, &outputs, "Run both graphs on the same inputs and compare their outputs "
      "per output: max abs difference, RMSE, same() verdict (the interpreter, or --backend)", NULL },
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend, "With --outputs: run both with this backend "
      "(BACKEND[@MODE][,KEY=VALUE...]) and compare per-kernel times by kernel name", "B" },
    { "repeat", 0, 0, G_OPTION_ARG_INT, &repeat, "With --backend: timed calls per graph (default 10)", "N" },
    { "stage", 's', 0, G_OPTION_ARG_STRING, &stage, "Graph stage to diff (default dynamo; 'all': every stage both "
      "compiles have; against a graph file: the stage that differs least)", "S" },
    { "unified", 'U', 0, G_OPTION_ARG_INT, &context, "Lines of context around changes (default 3)", "N" },
    { "ignore-names", 0, 0, G_OPTION_ARG_NONE, &ignore_names, "Do not report renamed nodes", NULL },
    { "ignore-meta", 0, 0, G_OPTION_ARG_NONE, &ignore_meta, "Do not compare shapes, dtypes, strides, devices", NULL },
    { "color", 0, 0, G_OPTION_ARG_STRING, &color, "auto (colour on a terminal, default), always or never", "WHEN" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object: entries and the node pairing", NULL },
    { "ranks", 0, 0, G_OPTION_ARG_NONE, &ranks, "With one multi-rank WORKSPACE: where its ranks diverge, then the "
      "compile diff of each diverging compile id (lowest rank against the first that differs)", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx
    = fxwb_option_context_new ("fxwb diff",
                               "A B - what changed between two compiles, graphs or runs", entries,
                               "A and B are each WORKSPACE.fxwb:COMPILE_ID (0/1 as fxwb ls shows it), an FX graph file\n"
                               "(GraphModule.code, print_readable, fx_graph_*.py, repro.py, canonical *.json), a\n"
                               "whole workspace (both sides: compiles paired by frame and compile id), or a stored run\n"
                               "WORKSPACE.fxwb:run/ID (both sides; ids from fxwb ls --runs): per output max abs, RMSE\n"
                               "and same(), per kernel the time ratio. --runs on compiles or workspaces pairs their\n"
                               "latest runs by stage, backend, mode and options and diffs them the same way.\n"
                               "fxwb diff WORKSPACE --ranks compares the ranks of a multi-rank workspace instead.\n"
                               "Nodes are matched by provenance (stack_trace, nn_module_stack, source_fn), then by\n"
                               "name, target and position, then structure. Without a section option, every section.",
                               "Exit status (as diff):\n"
                               "  0  no differences (timings and compile-time metrics are shown, not counted)\n"
                               "  1  differences\n"
                               "  2  trouble: bad command line, unreadable input, no such compile\n");
  if (!fxwb_parse_options (ctx, &argc, &argv))
    return DIFF_ERROR;
  if (ranks && argc != 2)
    {
      fprintf (stderr, "fxwb diff: --ranks takes one WORKSPACE\n");
      return DIFF_ERROR;
    }
  if (argc != 3 && !ranks)
    {
      fxwb_usage_error (ctx, argc < 3 ? "need two inputs, A and B" : "too many arguments");
      return DIFF_ERROR;
    }
  gboolean use_color;
  if (!color || strcmp (color, "auto") == 0)
    use_color = !json && isatty (STDOUT_FILENO) && !g_getenv ("NO_COLOR");
  else if (strcmp (color, "always") == 0)
    use_color = !json;
  else if (strcmp (color, "never") == 0)
    use_color = FALSE;
  else
    {
      fprintf (stderr, "fxwb diff: --color is auto, always or never, not '%s'\n", color);
      return DIFF_ERROR;
    }

  if (ranks)
    {
      fx_diff_compile_opts ropts;
      fx_diff_compile_opts_init (&ropts);
      unsigned rwhat = (guards ? FX_DIFF_WHAT_GUARDS : 0) | (graph ? FX_DIFF_WHAT_GRAPH : 0);
      ropts.what = rwhat ? rwhat : FX_DIFF_WHAT_GUARDS | FX_DIFF_WHAT_GRAPH;
      ropts.stage = stage;
      ropts.graph.context = context < 0 ? 0 : context;
      ropts.graph.ignore_names = ignore_names;
      ropts.graph.ignore_meta = ignore_meta;
      return ranks_diff (argv[1], &ropts, json, use_color);
    }
  if (backend && !outputs)
    {
      fprintf (stderr, "fxwb diff: --backend goes with --outputs\n");
      return DIFF_ERROR;
    }
  if (outputs)
    {
      /* A run diff: both sides run; the graph diff is not part of it. */
      g_autofree char *la = g_strdup (argv[1]), *lb = g_strdup (argv[2]);
      fx_diff *rdiff = fx_diff_new (la, lb);
      int rrc = run_diff (rdiff, argv[1], argv[2], stage, backend, repeat < 1 ? 1 : repeat);
      if (rrc == DIFF_SAME)
        {
          print_diff (rdiff, json, use_color);
          rrc = fx_diff_count (rdiff) ? DIFF_DIFFERS : DIFF_SAME;
        }
      fx_diff_free (rdiff);
      return rrc;
    }

  fx_diff_compile_opts opts;
  fx_diff_compile_opts_init (&opts);
  unsigned what = (guards ? FX_DIFF_WHAT_GUARDS : 0) | (graph ? FX_DIFF_WHAT_GRAPH : 0)
                  | (kernels ? FX_DIFF_WHAT_KERNELS : 0) | (code ? FX_DIFF_WHAT_CODE : 0)
                  | (metrics ? FX_DIFF_WHAT_METRICS : 0) | (runs ? FX_DIFF_WHAT_RUNS : 0);
  opts.what = what ? what : FX_DIFF_WHAT_ALL;
  opts.stage = stage;
  opts.graph.context = context < 0 ? 0 : context;
  opts.graph.ignore_names = ignore_names;
  opts.graph.ignore_meta = ignore_meta;

  side a, b;
  int rc = side_load (argv[1], &a);
  if (rc == DIFF_SAME)
    rc = side_load (argv[2], &b);
  else
    memset (&b, 0, sizeof b);
  fx_diff *diff = NULL;
  g_autofree char *chosen = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (rc != DIFF_SAME)
    goto out;

  if ((a.kind == SIDE_RUN) != (b.kind == SIDE_RUN))
    {
      fprintf (stderr, "fxwb diff: %s is a stored run: it diffs against another stored run (WORKSPACE:run/ID, see "
                       "fxwb ls --runs), not %s\n", a.kind == SIDE_RUN ? a.arg : b.arg, a.kind == SIDE_RUN ? b.arg : a.arg);
      rc = DIFF_ERROR;
      goto out;
    }
  if ((a.kind == SIDE_WORKSPACE) != (b.kind == SIDE_WORKSPACE))
    {
      fprintf (stderr, "fxwb diff: a whole workspace diffs against another workspace; name a compile "
                       "(%s:0/0, see fxwb ls)\n", a.kind == SIDE_WORKSPACE ? side_path (&a) : side_path (&b));
      rc = DIFF_ERROR;
      goto out;
    }
  if (a.kind == SIDE_FILE || b.kind == SIDE_FILE)
    {
      if (what & ~(unsigned) FX_DIFF_WHAT_GRAPH)
        fprintf (stderr, "fxwb diff: a graph file has only a graph: diffing graphs\n");
      if (a.kind == SIDE_FILE && b.kind == SIDE_FILE)
        {
          diff = fx_diff_new (side_path (&a), side_path (&b));
          if (fx_diff_graphs (diff, a.src.graph, b.src.graph, NULL, &opts.graph, &diag) != FX_OK)
            rc = DIFF_ERROR;
        }
      else
        {
          diff = fx_diff_new (NULL, NULL);
          const side *file = a.kind == SIDE_FILE ? &a : &b, *comp = a.kind == SIDE_FILE ? &b : &a;
          rc = diff_file_against_compile (diff, file, comp, a.kind == SIDE_FILE, stage, &opts.graph, &chosen);
          g_autofree char *la = side_label (&a, a.kind == SIDE_COMPILE ? chosen : NULL);
          g_autofree char *lb = side_label (&b, b.kind == SIDE_COMPILE ? chosen : NULL);
          diff->label_a = fx_arena_strdup (diff->arena, la);
          diff->label_b = fx_arena_strdup (diff->arena, lb);
        }
    }
  else if (a.kind == SIDE_RUN)
    {
      /* Two stored runs: a run diff only (the section options narrow compiles, not runs). */
      diff = fx_diff_new (a.arg, b.arg);
      if (fx_diff_stored_runs (diff, a.src.store, a.run_id, b.src.store, b.run_id, NULL, &diag) != FX_OK)
        rc = DIFF_ERROR;
    }
  else if (a.kind == SIDE_WORKSPACE)
    {
      diff = fx_diff_new (side_path (&a), side_path (&b));
      if (fx_diff_workspaces (diff, a.src.store, b.src.store, &opts, &diag) != FX_OK)
        rc = DIFF_ERROR;
    }
  else
    {
      g_autofree char *la = side_label (&a, NULL), *lb = side_label (&b, NULL);
      diff = fx_diff_new (la, lb);
      if (fx_diff_compiles (diff, a.src.store, a.src.compile_row, b.src.store, b.src.compile_row, &opts, &diag)
          != FX_OK)
        rc = DIFF_ERROR;
    }
  if (rc == DIFF_ERROR && diag.code != FX_OK)
    fxwb_print_diag (&diag);
  if (rc != DIFF_SAME)
    goto out;

  print_diff (diff, json, use_color);
  rc = fx_diff_count (diff) ? DIFF_DIFFERS : DIFF_SAME;
out:
  fx_diff_free (diff);
  side_clear (&a);
  side_clear (&b);
  return rc;
}
