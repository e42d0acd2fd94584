/* fx-debug-import.c: the TORCH_COMPILE_DEBUG importer: each torchinductor/model__N_* folder's graphs
   (fx_graph_readable.py, fx_graph_transformed.py, fx_graph_runnable.py), kernels (output_code.py), scheduler nodes
   and fusion groups (ir_pre_fusion.txt, ir_post_fusion.txt), provenance mappings and raw files, as compile "-/N" of
   the input, linked to the trace compile that printed the same output code. */
#include "fx/importers.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fx-import-util.h"
#include "fx-md5.h"
#include "fx/pyparse.h"

static bool
is_dir (const char *path)
{
  struct stat sb;
  return stat (path, &sb) == 0 && S_ISDIR (sb.st_mode);
}

static char *
join (const char *a, const char *b)
{
  size_t n = strlen (a) + strlen (b) + 2;
  char *s = malloc (n);
  snprintf (s, n, "%s/%s", a, b);
  return s;
}

/* Sorted names of the entries of dir starting with prefix. */
static char **
list_dir (const char *dir, const char *prefix, size_t *n)
{
  *n = 0;
  DIR *d = opendir (dir);
  if (!d)
    return NULL;
  char **names = NULL;
  struct dirent *de;
  while ((de = readdir (d)))
    if (strncmp (de->d_name, prefix, strlen (prefix)) == 0 && de->d_name[0] != '.')
      {
        names = realloc (names, (*n + 1) * sizeof *names);
        names[(*n)++] = strdup (de->d_name);
      }
  closedir (d);
  for (size_t i = 1; i < *n; i++)
    for (size_t j = i; j > 0 && strcmp (names[j - 1], names[j]) > 0; j--)
      {
        char *t = names[j];
        names[j] = names[j - 1];
        names[j - 1] = t;
      }
  return names;
}

static void
free_names (char **names, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
}

/* The torchinductor folder under path: path itself, path/torchinductor, or path/run_N/torchinductor. */
static char *
find_inductor_dir (const char *path)
{
  size_t n;
  char **models = list_dir (path, "model__", &n);
  free_names (models, n);
  if (n)
    return strdup (path);
  char *ti = join (path, "torchinductor");
  if (is_dir (ti))
    return ti;
  free (ti);
  char **runs = list_dir (path, "run_", &n);
  char *found = NULL;
  for (size_t i = n; i-- > 0 && !found;)
    {
      char *run = join (path, runs[i]);
      char *t = join (run, "torchinductor");
      if (is_dir (t))
        found = t;
      else
        free (t);
      free (run);
    }
  free_names (runs, n);
  return found;
}

bool
fx_is_debug_dir (const char *path)
{
  char *ti = find_inductor_dir (path);
  bool ok = ti != NULL;
  free (ti);
  return ok;
}

/* Adds one file's text to the input hash; NULL when the file is absent. A file that is not a regular file inside
   the imported folder root (a symlink out of it, to /dev/zero, a FIFO) is not read: noted in stats instead. */
static char *
read_part (const char *root, const char *dir, const char *name, fx_md5 *md5, size_t *len, fx_import_stats *stats)
{
  char *path = join (dir, name);
  char *data = NULL;
  *len = 0;
  struct stat lsb;
  if (lstat (path, &lsb) != 0)
    {
      free (path);
      return NULL;
    }
  char *real = fx_import_resolve_inside (root, path);
  if (!real)
    {
      int64_t k = stats->warnings[FX_IMPORT_WARN_SKIPPED_FILE]++;
      if (k < FX_IMPORT_EXAMPLES)
        {
          const char *model = strrchr (dir, '/');
          snprintf (stats->examples[FX_IMPORT_WARN_SKIPPED_FILE][k].text, sizeof stats->examples[0][0].text,
                    "%.60s/%.40s: not a regular file inside the folder", model ? model + 1 : dir, name);
        }
      free (path);
      return NULL;
    }
  if (fx_import_read_regular (real, 0, &data, len, NULL) != FX_OK)
    data = NULL;
  free (real);
  free (path);
  if (data)
    {
      fx_md5_update (md5, name, strlen (name) + 1);
      fx_md5_update (md5, data, *len);
    }
  return data;
}

static fx_status
import_graph_file (fx_store *store, int64_t crow, const char *stage, const char *text, size_t len,
                   const char *file, fx_import_stats *stats, fx_diag *diag)
{
  fx_graph *graph = NULL;
  fx_diag pd;
  fx_diag_clear (&pd);
  if (fx_parse_fx_code (text, len, file, &graph, &pd) != FX_OK)
    {
      int64_t k = stats->warnings[FX_IMPORT_WARN_GRAPH_PARSE]++;
      if (k < FX_IMPORT_EXAMPLES)
        {
          stats->examples[FX_IMPORT_WARN_GRAPH_PARSE][k].line = pd.line;
          snprintf (stats->examples[FX_IMPORT_WARN_GRAPH_PARSE][k].text, 160, "%.60s: %.90s", file, pd.message);
        }
    }
  fx_status st = fx_store_add_graph (store, crow, stage, graph, text, NULL, diag);
  fx_graph_free (graph);
  if (st == FX_OK)
    stats->graphs++;
  return st;
}

/* launches: the output code's kernel launches (post-fusion nodes are matched to the one computing them). */
static fx_status
import_ir_dump (fx_store *store, int64_t crow, const char *stage, const char *text, size_t len, const char *file,
                const fx_kernel_launch *launches, size_t n_launches, fx_import_stats *stats, fx_diag *diag)
{
  fx_arena *arena = fx_arena_new ();
  fx_store_ir_node *nodes;
  size_t n = 0;
  fx_ir_dump_issues issues;
  fx_status st = fx_parse_ir_dump (text, len, stage, arena, &nodes, &n, &issues, diag);
  if (st == FX_OK && issues.skipped_lines)
    {
      int64_t k = stats->warnings[FX_IMPORT_WARN_IR_DUMP];
      stats->warnings[FX_IMPORT_WARN_IR_DUMP] += issues.skipped_lines;
      if (k < FX_IMPORT_EXAMPLES)
        {
          stats->examples[FX_IMPORT_WARN_IR_DUMP][k].line = issues.first_line;
          snprintf (stats->examples[FX_IMPORT_WARN_IR_DUMP][k].text, 160, "%s: %.130s", file, issues.first_text);
        }
    }
  bool post = strcmp (stage, "post_fusion") == 0;
  int top_launch = -1;
  for (size_t i = 0; i < n && st == FX_OK; i++)
    {
      if (post && n_launches)
        {
          /* A fused node's members run in its kernel. */
          int l = nodes[i].fused_into ? top_launch : fx_launch_writing (launches, n_launches, nodes[i].writes);
          if (!nodes[i].fused_into)
            top_launch = l;
          if (l >= 0)
            {
              nodes[i].kernel = launches[l].kernel;
              nodes[i].handle = launches[l].handle;
            }
        }
      st = fx_store_add_ir_node (store, crow, &nodes[i], diag);
      if (st == FX_OK)
        stats->ir_nodes++;
      /* The top-level nodes after fusion are what Inductor generates one kernel (or extern call) for. */
      if (st == FX_OK && post && !nodes[i].fused_into)
        st = fx_store_add_fusion_group (store, crow, nodes[i].name, nodes[i].members ? nodes[i].members
                                        : nodes[i].name, nodes[i].text, diag);
    }
  fx_arena_free (arena);
  return st;
}

fx_status
fx_import_debug_dir (fx_store *store, const char *path, fx_import_progress_fn progress, void *user_data,
                     fx_import_stats *stats, fx_diag *diag)
{
  memset (stats, 0, sizeof *stats);
  char *ti = find_inductor_dir (path);
  if (!ti)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "%s: not a TORCH_COMPILE_DEBUG folder (no torchinductor/model__*)",
                        path);
  size_t nm = 0;
  char **models = list_dir (ti, "model__", &nm);
  /* model__N_...: sort by N, the graph counter, which is the compile order. */
  for (size_t i = 1; i < nm; i++)
    for (size_t j = i; j > 0 && atoi (models[j - 1] + 7) > atoi (models[j] + 7); j--)
      {
        char *t = models[j];
        models[j] = models[j - 1];
        models[j - 1] = t;
      }
  static const char *const files[] = { "fx_graph_readable.py", "fx_graph_transformed.py", "output_code.py",
                                       "ir_post_fusion.txt", "ir_pre_fusion.txt", "fx_graph_runnable.py",
                                       "inductor_provenance_tracking_node_mappings.json" };
  enum { N_FILES = sizeof files / sizeof files[0] };
  char **texts = calloc (nm * N_FILES + 1, sizeof *texts);
  size_t *lens = calloc (nm * N_FILES + 1, sizeof *lens);
  fx_md5 md5;
  fx_md5_init (&md5);
  for (size_t m = 0; m < nm; m++)
    {
      char *mdir = join (ti, models[m]);
      fx_md5_update (&md5, models[m], strlen (models[m]) + 1);
      for (size_t f = 0; f < N_FILES; f++)
        texts[m * N_FILES + f] = read_part (path, mdir, files[f], &md5, &lens[m * N_FILES + f], stats);
      free (mdir);
    }
  char hash[33];
  fx_md5_final_hex (&md5, hash);
  int64_t input = 0, existing = 0;
  fx_status st = fx_store_begin (store, diag);
  if (st == FX_OK)
    st = fx_store_find_input (store, hash, &existing, diag);
  if (st == FX_OK && existing)
    {
      stats->already_imported = true;
      fx_store_rollback (store);
      goto done;
    }
  if (st == FX_OK)
    st = fx_store_add_input (store, path, "torch_compile_debug", hash, 0, &input, diag);
  for (size_t m = 0; m < nm && st == FX_OK; m++)
    {
      char **t = texts + m * N_FILES;
      size_t *l = lens + m * N_FILES;
      fx_compile_id cid = { -1, -1, atoi (models[m] + 7), 0 };
      int64_t crow = 0;
      if ((st = fx_store_ensure_compile (store, input, &cid, &crow, diag)) != FX_OK)
        break;
      stats->compiles++;
      fx_store_compile_update u;
      fx_store_compile_update_init (&u);
      u.function = models[m];
      if ((st = fx_store_update_compile (store, crow, &u, diag)) != FX_OK)
        break;
      if (t[0] && (st = import_graph_file (store, crow, "aot_inference", t[0], l[0], files[0], stats, diag)) != FX_OK)
        break;
      if (t[1] && (st = import_graph_file (store, crow, "inductor_transformed", t[1], l[1], files[1], stats,
                                           diag)) != FX_OK)
        break;
      if (t[5] && st == FX_OK)
        st = import_graph_file (store, crow, "runnable", t[5], l[5], files[5], stats, diag);
      if (t[2] && st == FX_OK)
        {
          int64_t nk = 0;
          st = fx_store_output_code_kernels (store, input, crow, t[2], l[2], 0, NULL, &nk, diag);
          stats->kernels += nk;
        }
      /* ir_pre_fusion.txt then ir_post_fusion.txt: scheduler nodes; the post-fusion top-level nodes are the fusion
         groups. */
      fx_arena *la = fx_arena_new ();
      fx_kernel_launch *launches = NULL;
      size_t n_launches = 0;
      if (t[2] && st == FX_OK)
        st = fx_output_code_launches (t[2], l[2], la, &launches, &n_launches, diag);
      for (size_t f = 4; f >= 3 && st == FX_OK; f--)
        if (t[f])
          st = import_ir_dump (store, crow, f == 4 ? "pre_fusion" : "post_fusion", t[f], l[f], files[f], launches,
                               n_launches, stats, diag);
      fx_arena_free (la);
      if (t[6] && st == FX_OK)
        {
          int64_t rows = 0;
          fx_diag pd;
          fx_diag_clear (&pd);
          fx_status ps = fx_import_provenance (store, crow, t[6], l[6], &rows, &pd);
          if (ps == FX_ERR_PARSE)
            {
              /* Kept raw below; the mapping is only lost for this compile. */
              int64_t k = stats->warnings[FX_IMPORT_WARN_BAD_RECORD]++;
              if (k < FX_IMPORT_EXAMPLES)
                {
                  stats->examples[FX_IMPORT_WARN_BAD_RECORD][k].line = 1;
                  snprintf (stats->examples[FX_IMPORT_WARN_BAD_RECORD][k].text, 160, "%.40s/%.48s: %.60s",
                            models[m], files[6], pd.message);
                }
            }
          else if (ps != FX_OK)
            {
              fx_diag_set (diag, ps, "%s", pd.message);
              st = ps;
            }
          stats->provenance += rows;
        }
      for (size_t f = 2; f < N_FILES && st == FX_OK; f++)
        if (t[f])
          {
            st = fx_store_add_artifact (store, input, crow, files[f], "file", t[f], diag);
            stats->artifacts += st == FX_OK;
          }
      if (progress)
        progress ((double) (m + 1) / (double) nm, user_data);
    }
  if (st == FX_OK)
    st = fx_store_link_debug_compiles (store, &stats->links, diag);
  if (st == FX_OK && !existing)
    st = fx_store_commit (store, diag);
  if (st != FX_OK)
    fx_store_rollback (store);
  if (st == FX_OK && nm)
    stats->frames = 1;

done:
  for (size_t i = 0; i < nm * N_FILES; i++)
    free (texts[i]);
  free (texts);
  free (lens);
  free_names (models, nm);
  free (ti);
  return st;
}
