/* fxwb-cmd-capture.c: `fxwb capture PROGRAM.py [ARGS...] -o FILE.fxwb`: run a program under the engine's
   torch.compile and record every frame, compile, graph, guard, guard failure and graph break. */
#include "fxwb.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "fx-config.h"

#if FX_HAVE_PYTHON
#include "fx/capture.h"
#include <json-c/json.h>

/* One line on stderr after the program: what capture saw, from the record's kinds. */
static void
print_summary (const char *record, const char *output)
{
  json_object *root = json_object_from_file (record), *records = NULL;
  if (!root || !json_object_object_get_ex (root, "records", &records)
      || json_object_get_type (records) != json_type_array)
    {
      json_object_put (root);
      return;
    }
  int compiles = 0, breaks = 0, recompiles = 0, skips = 0;
  g_autoptr (GHashTable) frames = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (size_t i = 0; i < json_object_array_length (records); i++)
    {
      json_object *r = json_object_array_get_idx (records, i), *k = NULL, *fid = NULL;
      const char *kind = json_object_object_get_ex (r, "kind", &k) ? json_object_get_string (k) : "";
      if (strcmp (kind, "compile") == 0)
        {
          compiles++;
          if (json_object_object_get_ex (r, "frame_id", &fid))
            g_hash_table_add (frames, GINT_TO_POINTER (json_object_get_int (fid) + 1));
        }
      breaks += strcmp (kind, "graph_break") == 0;
      recompiles += strcmp (kind, "recompile") == 0;
      skips += strcmp (kind, "skip") == 0;
    }
  fprintf (stderr, "fxwb capture: %u frame%s, %d compile%s (%d recompile%s), %d graph break%s, %d skipped frame%s%s%s\n",
           g_hash_table_size (frames), g_hash_table_size (frames) == 1 ? "" : "s", compiles, compiles == 1 ? "" : "s",
           recompiles, recompiles == 1 ? "" : "s", breaks, breaks == 1 ? "" : "s", skips, skips == 1 ? "" : "s",
           output ? "; recorded in " : "", output ? output : "");
  json_object_put (root);
}
#endif

int
fxwb_cmd_capture (int argc, char **argv)
{
  g_autofree char *output = NULL, *json_out = NULL, *backend = NULL;
  gboolean replace = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Record into this workspace (.fxwb, created when missing)", "FILE" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_out, "Also write the capture record as JSON", "FILE" },
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend, "Backend for torch.compile calls that name none", "NAME" },
    { "replace-compile", 0, 0, G_OPTION_ARG_NONE, &replace, "Replace torch.compile even when torch has one", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb capture", "PROGRAM.py [ARGS...] - run a program under capture", entries,
                               "Runs PROGRAM.py in an embedded CPython 3.11 (Debian's python3 with torch) with the\n"
                               "engine's torch.compile, torch._dynamo and torch.compiler installed. ARGS go to the\n"
                               "program (after `--` when they look like fxwb options).",
                               "Exit status:\n"
                               "  0  the program ran and exited with status 0; the record was written\n"
                               "  1  the program raised or exited non-zero (its traceback is on stderr)\n"
                               "  2  wrong command line\n"
                               "  3  the workspace or JSON file cannot be written\n"
                               "  4  this build has no Python capture\n");
  g_option_context_set_ignore_unknown_options (context, TRUE);
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  int first = 1;
  if (first < argc && strcmp (argv[first], "--") == 0)
    first++;
  if (first >= argc)
    return fxwb_usage_error (context, "missing PROGRAM.py");
  if (!output && !json_out)
    {
      fprintf (stderr, "fxwb capture: give -o FILE.fxwb and/or --json FILE\n");
      return FXWB_EXIT_USAGE;
    }
  if (!g_file_test (argv[first], G_FILE_TEST_IS_REGULAR))
    {
      fprintf (stderr, "fxwb capture: %s: no such program file\n", argv[first]);
      return FXWB_EXIT_IO;
    }
#if FX_HAVE_PYTHON
  /* The record always goes through JSON: the program's exceptions cannot leave a half-written workspace. */
  g_autofree char *tmp_json = NULL;
  const char *record = json_out;
  if (!record)
    {
      int fd = g_file_open_tmp ("fxwb-capture-XXXXXX.json", &tmp_json, NULL);
      if (fd < 0)
        {
          fprintf (stderr, "fxwb capture: cannot create a temporary file\n");
          return FXWB_EXIT_IO;
        }
      close (fd);
      record = tmp_json;
    }
  /* program args: everything after PROGRAM.py except a leading "--" */
  char **pargv = argv + first + 1;
  int pargc = argc - first - 1;
  if (pargc > 0 && strcmp (pargv[0], "--") == 0)
    {
      pargv++;
      pargc--;
    }
  fx_capture_opts opts = { .program = argv[first], .argv = pargv, .argc = pargc, .json_out = record,
                           .backend = backend, .replace_compile = replace };
  int exit_code = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = fx_capture_run_program (&opts, &exit_code, &diag);
  int rc = FXWB_EXIT_OK;
  if (st != FX_OK)
    {
      fprintf (stderr, "fxwb capture: %s\n", diag.message);
      rc = FXWB_EXIT_FAILURE;
    }
  if (output)
    {
      char *text = NULL;
      size_t len = 0;
      fx_store *store = NULL;
      fx_diag d2;
      fx_diag_clear (&d2);
      fx_status s2 = fx_file_read (record, &text, &len, &d2);
      if (s2 == FX_OK)
        s2 = fx_store_open (output, true, &store, &d2);
      if (s2 == FX_OK)
        s2 = fx_capture_record_to_store (text, len, argv[first], store, &d2);
      if (store)
        fx_store_close (store);
      free (text);
      if (s2 != FX_OK)
        {
          fxwb_print_diag (&d2);
          rc = rc ? rc : FXWB_EXIT_IO;
        }
    }
  if (rc != FXWB_EXIT_IO)
    print_summary (record, output);
  if (tmp_json)
    g_unlink (tmp_json);
  return rc;
#else
  fprintf (stderr, "fxwb capture: this build has no Python capture (libpython was not found)\n");
  return FXWB_EXIT_UNAVAILABLE;
#endif
}
