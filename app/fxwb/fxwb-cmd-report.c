/* fxwb-cmd-report.c: `fxwb report WORKSPACE|TRACE... -o DIR`: a static, self-contained HTML report (an index like
   tlparse's and one page per compile) or, with --json, the same content as one JSON document. */
#include "fxwb.h"
#include "fxwb-report.h"

#include "fx-config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "fx/importers.h"

static int
cmp_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
progress_cb (double fraction, void *user_data)
{
  fxwb_progress (user_data, fraction);
}

/* A TORCH_TRACE log: its first line is a glog prefix and a JSON object ("...:LINE] {"). */
static gboolean
looks_like_trace (const char *path)
{
  char head[4096] = "";
  FILE *f = fopen (path, "rb");
  if (!f)
    return FALSE;
  size_t got = fread (head, 1, sizeof head - 1, f);
  fclose (f);
  head[got] = 0;
  char *nl = strchr (head, '\n');
  if (nl)
    *nl = 0;
  return strstr (head, "] {\"") != NULL;
}

#define STREAM_CHUNK (16 * 1024 * 1024)

/* Imports a TORCH_TRACE log through the follow importer, chunk by chunk, so memory stays bounded by the chunk (and
   the largest record) whatever the log's size. A truncated last line gets a newline so it is reported, located, as
   the whole-file importer reports it. */
static fx_status
stream_trace (fx_store *store, const char *path, const char *label, fx_import_stats *stats, fx_diag *diag)
{
  memset (stats, 0, sizeof *stats);
  FILE *f = fopen (path, "rb");
  if (!f)
    return fx_diag_set (diag, FX_ERR_IO, "%s: cannot read: %s", path, g_strerror (errno));
  GStatBuf sb;
  gint64 size = g_stat (path, &sb) == 0 ? sb.st_size : 0, done = 0;
  fx_trace_follow *fol = NULL;
  fx_status st = fx_trace_follow_new (store, path, size, &fol, diag);
  size_t cap = STREAM_CHUNK, have = 0;
  char *buf = g_malloc (cap + 1);
  gboolean eof = FALSE;
  while (st == FX_OK)
    {
      if (!eof && have < cap)
        {
          size_t n = fread (buf + have, 1, cap - have, f);
          have += n;
          eof = n == 0 && (feof (f) || ferror (f));
          if (eof && have && buf[have - 1] != '\n')
            buf[have++] = '\n';
        }
      size_t used = 0;
      if ((st = fx_trace_follow_feed (fol, buf, have, eof, &used, diag)) != FX_OK)
        break;
      memmove (buf, buf + used, have - used);
      have -= used;
      done += (gint64) used;
      if (label && size > 0)
        fxwb_progress (label, (double) done / (double) size);
      if (eof && (used == 0 || have == 0))
        break;
      if (used == 0 && have == cap)
        {
          /* One record larger than the chunk. */
          cap *= 2;
          buf = g_realloc (buf, cap + 1);
        }
    }
  if (ferror (f) && st == FX_OK)
    st = fx_diag_set (diag, FX_ERR_IO, "%s: read error", path);
  fclose (f);
  g_free (buf);
  if (fol)
    {
      *stats = *fx_trace_follow_stats (fol);
      fx_trace_follow_free (fol);
    }
  if (st == FX_OK && stats->records == 0)
    {
      st = fx_diag_set (diag, FX_ERR_PARSE, "no TORCH_TRACE record in %s", path);
      for (int w = 0; w < FX_IMPORT_WARN_COUNT; w++)
        if (stats->warnings[w])
          {
            const fx_import_example *ex = &stats->examples[w][0];
            fx_diag_locate (diag, path, (int) ex->line, 1, ex->text, strlen (ex->text));
            break;
          }
    }
  return st;
}

fx_status
fxwb_report_source_open (fxwb_report_source *src, char **paths, int n_paths, gboolean writable, gboolean quiet,
                         fx_diag *diag)
{
  memset (src, 0, sizeof *src);
  src->arena = fx_arena_new ();
  if (n_paths == 1 && fxwb_is_workspace_file (paths[0]))
    {
      src->workspace = g_strdup (paths[0]);
      return writable ? fx_store_open (paths[0], false, &src->store, diag)
                      : fx_store_open_readonly (paths[0], &src->store, diag);
    }
  g_autoptr (GError) error = NULL;
  src->tmp_dir = g_dir_make_tmp ("fxwb-report-XXXXXX", &error);
  if (!src->tmp_dir)
    return fx_diag_set (diag, FX_ERR_IO, "cannot make a temporary folder: %s", error->message);
  src->workspace = g_build_filename (src->tmp_dir, "report.fxwb", NULL);
  fx_status st = fx_store_open (src->workspace, true, &src->store, diag);
  if (st == FX_OK)
    st = fx_store_set_scratch (src->store, diag);
  gint64 t0 = g_get_monotonic_time ();
  for (int i = 0; i < n_paths && st == FX_OK; i++)
    {
      if (fxwb_is_workspace_file (paths[i]))
        return fx_diag_set (diag, FX_ERR_INVALID, "%s is a workspace: give it alone, not with other inputs",
                            paths[i]);
      /* A TORCH_TRACE folder is imported log by log, so each warning names the log its line number is in. */
      g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
      GStatBuf sb;
      if (g_file_test (paths[i], G_FILE_TEST_IS_DIR) && !fx_is_debug_dir (paths[i]))
        {
          g_autoptr (GDir) d = g_dir_open (paths[i], 0, NULL);
          const char *name;
          while (d && (name = g_dir_read_name (d)))
            if (g_str_has_suffix (name, ".log"))
              g_ptr_array_add (files, g_build_filename (paths[i], name, NULL));
          g_ptr_array_sort (files, cmp_paths);
        }
      if (files->len == 0)
        g_ptr_array_add (files, g_strdup (paths[i]));
      for (guint k = 0; k < files->len && st == FX_OK; k++)
        {
          const char *path = g_ptr_array_index (files, k);
          fx_import_stats stats;
          g_autofree char *label = g_path_get_basename (path);
          if (looks_like_trace (path))
            st = stream_trace (src->store, path, quiet ? NULL : label, &stats, diag);
          else
            st = fx_import_path (src->store, path, quiet ? NULL : progress_cb, label, &stats, diag);
          if (!quiet)
            fxwb_progress_done ();
          if (st != FX_OK)
            break;
          fx_report_warnings_from_stats (path, &stats, src->arena, &src->warnings, &src->n_warnings);
          if (g_stat (path, &sb) == 0 && S_ISREG (sb.st_mode))
            src->input_bytes += sb.st_size;
        }
    }
  /* The streamed logs skipped the whole-file importer's last step: linking TORCH_COMPILE_DEBUG folders. */
  if (st == FX_OK && (st = fx_store_begin (src->store, diag)) == FX_OK)
    {
      if ((st = fx_store_link_debug_compiles (src->store, NULL, diag)) == FX_OK)
        st = fx_store_commit (src->store, diag);
      else
        fx_store_rollback (src->store);
    }
  src->import_s = (double) (g_get_monotonic_time () - t0) / 1e6;
  return st;
}

void
fxwb_report_source_clear (fxwb_report_source *src)
{
  if (src->store)
    fx_store_close (src->store);
  src->store = NULL;
  if (src->tmp_dir)
    {
      const char *suffixes[] = { "", "-wal", "-shm", "-journal" };
      for (size_t i = 0; i < G_N_ELEMENTS (suffixes); i++)
        {
          g_autofree char *f = g_strconcat (src->workspace, suffixes[i], NULL);
          g_unlink (f);
        }
      g_rmdir (src->tmp_dir);
    }
  g_clear_pointer (&src->tmp_dir, g_free);
  g_clear_pointer (&src->workspace, g_free);
  g_clear_pointer (&src->arena, fx_arena_free);
}

int
fxwb_cmd_report (int argc, char **argv)
{
  g_autofree char *output = NULL, *title = NULL;
  gboolean json = FALSE, quiet = FALSE, no_graphs = FALSE;
  int max_nodes = 0;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "The report folder to write (HTML), or the JSON file (--json; '-' or none: standard output)", "DIR" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "One JSON document (schema fxwb-report, engine/report/report-schema.json) instead of HTML pages", NULL },
    { "title", 't', 0, G_OPTION_ARG_STRING, &title, "The report's title", "TEXT" },
    { "no-graphs", 0, 0, G_OPTION_ARG_NONE, &no_graphs, "Do not draw graphs (no Graphviz SVG)", NULL },
    { "max-drawn-nodes", 0, 0, G_OPTION_ARG_INT, &max_nodes, "Draw graphs up to this many nodes (default 400)",
      "N" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress bar and no summary line", NULL },
    { NULL },
  };
  /* The command line as given, for the report's header (shell-quoted; the page escapes it). */
  g_autoptr (GString) command = g_string_new ("fxwb");
  for (int i = 0; i < argc; i++)
    {
      gboolean plain = argv[i][0] != 0;
      for (const char *c = argv[i]; *c && plain; c++)
        plain = g_ascii_isalnum (*c) || strchr ("_./:=,@+-", *c) != NULL;
      g_autofree char *q = plain ? g_strdup (argv[i]) : g_shell_quote (argv[i]);
      g_string_append_printf (command, " %s", q);
    }
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb report",
                               "WORKSPACE.fxwb | TRACE... - write a trace report (HTML pages or JSON)", entries,
                               "Writes DIR/index.html (inputs, warnings, every compile [frame/compile] with its status,\n"
                               "compile time and recompile reason, the recompiles, graph breaks with their user lines,\n"
                               "failures) and DIR/compile-N.html per compile (graphs as print_tabular, readable code\n"
                               "and Graphviz drawings with module clusters; provenance node -> user line, module,\n"
                               "kernels; guards with the ones that failed later marked; kernels with their source;\n"
                               "fusion groups; runs; metrics; every artifact PyTorch wrote). Search works across all\n"
                               "pages from the file system: no server, no network.\n"
                               "TRACE is anything fxwb import takes (TORCH_TRACE logs or folders, TORCH_COMPILE_DEBUG\n"
                               "folders, .pt2, TORCH_LOGS text): imported into a temporary workspace first.",
                               "Exit status:\n"
                               "  0  written (bad lines of a trace are skipped and listed as warnings)\n"
                               "  1  an input held nothing readable\n"
                               "  2  wrong command line\n"
                               "  3  an input cannot be read or the report cannot be written\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  if (argc < 2 || (!json && !output))
    return fxwb_usage_error (context, argc < 2 ? "missing WORKSPACE or TRACE" : "missing -o DIR");
  if (max_nodes < 0)
    {
      fprintf (stderr, "fxwb report: --max-drawn-nodes must be positive\n");
      return FXWB_EXIT_USAGE;
    }
  fx_diag diag;
  fx_diag_clear (&diag);
  fxwb_report_source src;
  gint64 t0 = g_get_monotonic_time ();
  fx_status st = fxwb_report_source_open (&src, argv + 1, argc - 1, FALSE, quiet || json, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      fxwb_report_source_clear (&src);
      return fxwb_exit_for_status (st);
    }
  gint64 t1 = g_get_monotonic_time ();
  fx_report_opts opts = {
    .title = title,
    .svg = no_graphs ? NULL : fxwb_report_svg,
    .max_drawn_nodes = (size_t) max_nodes,
    .warnings = src.warnings,
    .n_warnings = src.n_warnings,
    .made_by = "fxwb " FX_PACKAGE_VERSION,
    .command = command->str,
  };
  fx_report_stats stats = { 0 };
  if (json)
    {
      gboolean to_stdout = !output || strcmp (output, "-") == 0;
      FILE *out = to_stdout ? stdout : fopen (output, "wb");
      if (!out)
        st = fx_diag_set (&diag, FX_ERR_IO, "%s: cannot write: %s", output, g_strerror (errno));
      else
        {
          st = fx_report_write_json (src.store, out, &opts, &diag);
          if (!to_stdout && fclose (out) != 0 && st == FX_OK)
            st = fx_diag_set (&diag, FX_ERR_IO, "%s: cannot write: %s", output, g_strerror (errno));
          if (to_stdout)
            fflush (stdout);
        }
    }
  else
    st = fx_report_write_dir (src.store, output, &opts, &stats, &diag);
  gint64 t2 = g_get_monotonic_time ();
  if (st != FX_OK)
    fxwb_print_diag (&diag);
  else if (!quiet && !json)
    {
      double total_s = (double) (t2 - t0) / 1e6;
      printf ("%s/index.html: %" G_GINT64_FORMAT " pages (%" G_GINT64_FORMAT " compiles), %" G_GINT64_FORMAT
              " graph drawings (%" G_GINT64_FORMAT " distinct SVG files), %" G_GINT64_FORMAT " artifact files, %.1f MB"
              " written",
              output, stats.pages, stats.compiles, stats.graphs_drawn, stats.svg_files, stats.artifact_files,
              (double) stats.bytes_written / 1e6);
      if (src.input_bytes > 0)
        printf ("; %.1f MB of input: import %.2f s, pages %.2f s, %.1f MB/s overall",
                (double) src.input_bytes / 1e6, (double) (t1 - t0) / 1e6, (double) (t2 - t1) / 1e6,
                (double) src.input_bytes / 1e6 / (total_s > 0 ? total_s : 1e-9));
      printf ("\n");
      if (src.n_warnings)
        printf ("  %zu located warnings listed on the index page\n", src.n_warnings);
    }
  fxwb_report_source_clear (&src);
  return fxwb_exit_for_status (st);
}
