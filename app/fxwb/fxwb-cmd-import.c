/* fxwb-cmd-import.c: `fxwb import PATH... -o FILE.fxwb`: import PyTorch artifacts (TORCH_TRACE logs, TORCH_COMPILE_DEBUG
   folders, .pt2 archives, TORCH_LOGS text) into a workspace file. */
#include "fxwb.h"

#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

#include "fx/importers.h"
#include "fx/store.h"

static void
progress_cb (double fraction, void *user_data)
{
  fxwb_progress (user_data, fraction);
}

static void
print_summary (const char *path, const fx_import_stats *s, gboolean json)
{
  if (json)
    {
      json_object *o = json_object_new_object ();
      fxwb_json_add_str (o, "input", path);
      fxwb_json_add_bool (o, "already_imported", s->already_imported);
      const char *keys[] = { "lines", "records", "frames", "compiles", "graphs", "kernels", "guards", "artifacts",
                             "events", "ir_nodes", "provenance", "links" };
      const int64_t vals[] = { s->lines, s->records, s->frames, s->compiles, s->graphs, s->kernels, s->guards,
                               s->artifacts, s->events, s->ir_nodes, s->provenance, s->links };
      for (size_t k = 0; k < G_N_ELEMENTS (keys); k++)
        fxwb_json_add_int (o, keys[k], vals[k]);
      json_object *warnings = json_object_new_object ();
      for (int w = 0; w < FX_IMPORT_WARN_COUNT; w++)
        if (s->warnings[w])
          fxwb_json_add_int (warnings, fx_import_warning_name (w), s->warnings[w]);
      json_object_object_add (o, "warnings", warnings);
      fxwb_json_print (o);
      return;
    }
  if (s->already_imported)
    {
      printf ("%s: already imported (same content), nothing added\n", path);
      return;
    }
  printf ("%s: %" G_GINT64_FORMAT " frames, %" G_GINT64_FORMAT " compiles, %" G_GINT64_FORMAT " graphs, %"
          G_GINT64_FORMAT " kernels, %" G_GINT64_FORMAT " guards, %" G_GINT64_FORMAT " artifacts, %" G_GINT64_FORMAT
          " events (%" G_GINT64_FORMAT " records, %" G_GINT64_FORMAT " lines)\n",
          path, s->frames, s->compiles, s->graphs, s->kernels, s->guards, s->artifacts, s->events, s->records,
          s->lines);
  if (s->ir_nodes || s->provenance)
    printf ("  %" G_GINT64_FORMAT " scheduler nodes, %" G_GINT64_FORMAT " kernel provenance mappings\n", s->ir_nodes,
            s->provenance);
  if (s->links)
    printf ("  %" G_GINT64_FORMAT " TORCH_COMPILE_DEBUG compiles linked to trace compiles (same output code)\n",
            s->links);
  for (int w = 0; w < FX_IMPORT_WARN_COUNT; w++)
    {
      if (!s->warnings[w])
        continue;
      printf ("  warning: %" G_GINT64_FORMAT " x %s\n", s->warnings[w], fx_import_warning_name (w));
      for (int k = 0; k < FX_IMPORT_EXAMPLES && k < s->warnings[w]; k++)
        {
          if (s->examples[w][k].line > 0)
            printf ("    %s:%" G_GINT64_FORMAT ": %s\n", path, s->examples[w][k].line, s->examples[w][k].text);
          else
            printf ("    %s: %s\n", path, s->examples[w][k].text);
        }
    }
}

/* --latest: the most recently modified *.log file in dir (a regular file), as tlparse --latest picks its input. */
static char *
newest_log (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  if (!d)
    return NULL;
  char *best = NULL;
  gint64 best_mtime = G_MININT64;
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      if (!g_str_has_suffix (name, ".log"))
        continue;
      g_autofree char *full = g_build_filename (dir, name, NULL);
      GStatBuf sb;
      if (g_lstat (full, &sb) != 0 || !S_ISREG (sb.st_mode))
        continue;
      if ((gint64) sb.st_mtime > best_mtime || (best && (gint64) sb.st_mtime == best_mtime && strcmp (full, best) > 0))
        {
          g_free (best);
          best = g_steal_pointer (&full);
          best_mtime = (gint64) sb.st_mtime;
        }
    }
  return best;
}

/* --strict: the warnings that mean a line or record was not understood (kept raw or skipped). */
static int64_t
not_understood (const fx_import_stats *s)
{
  return s->warnings[FX_IMPORT_WARN_BAD_LINE] + s->warnings[FX_IMPORT_WARN_BAD_JSON]
         + s->warnings[FX_IMPORT_WARN_ORPHAN_PAYLOAD] + s->warnings[FX_IMPORT_WARN_UNKNOWN_KIND]
         + s->warnings[FX_IMPORT_WARN_GRAPH_PARSE] + s->warnings[FX_IMPORT_WARN_BAD_RECORD]
         + s->warnings[FX_IMPORT_WARN_UNKNOWN_STRING];
}

int
fxwb_cmd_import (int argc, char **argv)
{
  g_autofree char *output = NULL;
  gboolean json = FALSE, quiet = FALSE, latest = FALSE, strict = FALSE;
  int max_line_mib = 64;
  GOptionEntry entries[] = {
    { "max-line-mib", 0, 0, G_OPTION_ARG_INT, &max_line_mib,
      "Skip lines longer than this many MiB, with a warning naming file:line (default 64)", "N" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The workspace file to create or add to (required)", "FILE.fxwb" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the summary as one JSON object per input", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress bar", NULL },
    { "latest", 0, 0, G_OPTION_ARG_NONE, &latest, "Import the newest *.log of the folder PATH (default: $TORCH_TRACE "
      "when it is a folder, else /tmp/torch_trace), as tlparse --latest", NULL },
    { "strict", 0, 0, G_OPTION_ARG_NONE, &strict, "Exit 1 when an input has lines or records this build does not "
      "understand (unknown record kinds, bad lines, graphs that did not parse), for CI", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb import", "PATH... - import PyTorch artifacts into a workspace", entries,
                               "PATH is a TORCH_TRACE log (dedicated_log_torch_trace_*.log) or a folder of them, a\n"
                               "TORCH_COMPILE_DEBUG folder (torch_compile_debug/, run_*, or its torchinductor/), a\n"
                               "torch.export .pt2 archive, TORCH_LOGS text (torch_logs.txt), or FX code (*.py: a minifier's\n"
                               "repro.py, print_readable). The kind is detected.\n"
                               "Only regular files are read (a FIFO or a device is refused); a symlink in an imported\n"
                               "folder is followed only to a regular file inside that folder (others are skipped and\n"
                               "noted). A TORCH_TRACE is read as a stream: memory stays small whatever its size.\n"
                               "Each input is imported in one transaction; importing the same content twice adds\n"
                               "nothing. Bad lines are skipped and counted (first examples shown with line numbers).\n"
                               "A TORCH_COMPILE_DEBUG folder and the TORCH_TRACE of the same run are linked compile by\n"
                               "compile (same output code), in whichever order they are imported.",
                               "Exit status:\n"
                               "  0  every input was imported (possibly with warnings) or was already there\n"
                               "  1  an input held no readable record (nothing of it was stored)\n"
                               "  2  wrong command line\n"
                               "  3  an input or the workspace cannot be read or written\n"
                               "With --strict, 1 also when an input had lines or records that were not\n"
                               "understood (they are stored or counted all the same).\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  if (max_line_mib < 1 || max_line_mib > 4096)
    {
      fprintf (stderr, "fxwb import: --max-line-mib must be between 1 and 4096\n");
      return FXWB_EXIT_USAGE;
    }
  fx_import_set_max_line ((size_t) max_line_mib << 20);
  g_autofree char *latest_path = NULL;
  if (latest)
    {
      const char *env = g_getenv ("TORCH_TRACE");
      const char *dir = argc >= 2 ? argv[1] : env && g_file_test (env, G_FILE_TEST_IS_DIR) ? env : "/tmp/torch_trace";
      if (argc > 2)
        {
          fprintf (stderr, "fxwb import: --latest takes one folder\n");
          return FXWB_EXIT_USAGE;
        }
      latest_path = newest_log (dir);
      if (!latest_path)
        {
          fprintf (stderr, "fxwb import: --latest: no *.log file in %s\n", dir);
          return FXWB_EXIT_IO;
        }
      if (!json)
        printf ("newest log in %s: %s\n", dir, latest_path);
      argv[1] = latest_path;
      argc = 2;
    }
  if (!output || argc < 2)
    return fxwb_usage_error (context, !output ? "missing -o FILE.fxwb" : "missing PATH");
  fx_store *store = NULL;
  int open_rc = fxwb_open_workspace (output, TRUE, &store);
  if (open_rc != FXWB_EXIT_OK)
    return open_rc;
  fx_diag diag;
  fx_diag_clear (&diag);
  int rc = FXWB_EXIT_OK;
  for (int i = 1; i < argc; i++)
    {
      fx_import_stats stats;
      fx_diag_clear (&diag);
      g_autofree char *label = g_path_get_basename (argv[i]);
      fx_status st = fx_import_path (store, argv[i], quiet ? NULL : progress_cb, label, &stats, &diag);
      if (!quiet)
        fxwb_progress_done ();
      if (st != FX_OK)
        {
          fxwb_print_diag (&diag);
          int code = fxwb_exit_for_status (st);
          rc = MAX (rc, code);
          continue;
        }
      print_summary (argv[i], &stats, json);
      if (strict && not_understood (&stats))
        {
          fprintf (stderr, "fxwb import: --strict: %s has %" G_GINT64_FORMAT " lines or records that were not "
                   "understood (see the warnings)\n", argv[i], not_understood (&stats));
          rc = MAX (rc, FXWB_EXIT_FAILURE);
        }
    }
  fx_store_close (store);
  return rc;
}
