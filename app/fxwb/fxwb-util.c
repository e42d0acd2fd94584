/* fxwb-util.c: diagnostics, option parsing and progress output shared by the fxwb commands. */
#include "fxwb.h"

#include <glib/gstdio.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx/importers.h"
#include "fx/ops.h"
#include "fx/pyparse.h"
#include "fx/store.h"

static FILE *term_stderr (void);

void
fxwb_print_diag (const fx_diag *diag)
{
  char text[4096];

  fx_diag_format (diag, text, sizeof text);
  /* The message quotes the offending line of someone else's file (escaped here too: capture runs unfiltered). */
  g_autofree char *safe = fxwb_escape_controls (text);
  fputs (safe, stderr);
}

GOptionContext *
fxwb_option_context_new (const char *prgname, const char *parameter_string, const GOptionEntry *entries,
                         const char *summary, const char *description)
{
  GOptionContext *context = g_option_context_new (parameter_string);

  if (prgname)
    g_set_prgname (prgname);
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_summary (context, summary);
  if (description)
    g_option_context_set_description (context, description);
  return context;
}

int
fxwb_usage_error (GOptionContext *context, const char *message)
{
  g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);

  fprintf (stderr, "%s: %s\n\n%s", g_get_prgname (), message, help);
  return FXWB_EXIT_USAGE;
}

gboolean
fxwb_parse_options (GOptionContext *context, int *argc, char ***argv)
{
  g_autoptr (GError) error = NULL;

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);
      fprintf (stderr, "fxwb: %s\n\n%s", error->message, help);
      return FALSE;
    }
  return TRUE;
}

int
fxwb_exit_for_status (fx_status status)
{
  switch (status)
    {
    case FX_OK:
      return FXWB_EXIT_OK;
    case FX_ERR_IO:
      return FXWB_EXIT_IO;
    case FX_ERR_NO_DEVICE:
      return FXWB_EXIT_UNAVAILABLE;
    case FX_ERR_PARSE:
    case FX_ERR_INVALID:
    case FX_ERR_UNSUPPORTED:
    case FX_ERR_NOT_FOUND:
    case FX_ERR_NOMEM:
    case FX_ERR_BACKEND:
    case FX_ERR_CANCELLED:
    case FX_STATUS_COUNT:
    default:
      return FXWB_EXIT_FAILURE;
    }
}

int
fxwb_open_workspace (const char *path, gboolean create, fx_store **store)
{
  fx_diag diag;

  fx_diag_clear (&diag);
  fx_status st = fx_store_open (path, create, store, &diag);
  if (st != FX_OK)
    fxwb_print_diag (&diag);
  return fxwb_exit_for_status (st);
}

int
fxwb_session_open (fxwb_session *s, const char *path)
{
  memset (s, 0, sizeof *s);
  int rc = fxwb_open_workspace (path, FALSE, &s->store);
  if (rc != FXWB_EXIT_OK)
    return rc;
  fx_diag_clear (&s->diag);
  s->arena = fx_arena_new ();
  return FXWB_EXIT_OK;
}

int
fxwb_session_open_argument (GOptionContext *context, int *argc, char ***argv, fxwb_session *s)
{
  if (!fxwb_parse_options (context, argc, argv))
    return FXWB_EXIT_USAGE;
  if (*argc != 2)
    return fxwb_usage_error (context, *argc < 2 ? "missing FILE.fxwb" : "more than one FILE");
  return fxwb_session_open (s, (*argv)[1]);
}

int
fxwb_session_close (fxwb_session *s, fx_status st)
{
  if (st != FX_OK)
    fxwb_print_diag (&s->diag);
  fx_arena_free (s->arena);
  fx_store_close (s->store);
  memset (s, 0, sizeof *s);
  return fxwb_exit_for_status (st);
}

gboolean
fxwb_stderr_is_tty (void)
{
  return isatty (STDERR_FILENO);
}

void
fxwb_progress (const char *label, double fraction)
{
  enum { WIDTH = 30 };
  char bar[WIDTH + 1];
  int filled;

  if (!fxwb_stderr_is_tty ())
    return;
  fraction = CLAMP (fraction, 0.0, 1.0);
  filled = (int) (fraction * WIDTH);
  for (int i = 0; i < WIDTH; i++)
    bar[i] = i < filled ? '#' : '.';
  bar[WIDTH] = '\0';
  fprintf (term_stderr (), "\r%s [%s] %3d%%", label, bar, (int) (fraction * 100));
  fflush (term_stderr ());
}

void
fxwb_progress_done (void)
{
  if (fxwb_stderr_is_tty ())
    fputs ("\r\033[K", term_stderr ());
}

void
fxwb_print_rank_divergences (const fx_rank_divergence *ds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      g_autofree char *id = g_strdup_printf ("[%s]", ds[i].compile_id);
      printf ("  %-10s %-12s %-14s %s\n", id, fx_rank_div_kind_name (ds[i].kind), ds[i].ranks, ds[i].detail);
    }
}

void
fxwb_report_lock_wait (const char *path, double waited_s, void *user_data)
{
  (void) user_data;
  fprintf (stderr, "fxwb: waiting for the workspace lock held by another fxwb (%s, %.0f s)...\n", path, waited_s);
}

/* ---------------------------------------------------------------- text from input files on a terminal */

/* Text printed by fxwb comes from traces, folders and archives other people made: an ESC in a function name or an
   artifact would drive the terminal (rewrite the screen, set the title, worse). The human-readable printers all
   write to stdout and the messages to stderr, which fxwb_guard_stdout turns into filters: C0 controls but '\n'
   and '\t', DEL, C1 controls (U+0080..U+009F) and bytes that are no valid UTF-8 come out as visible escapes
   ("\x1b", "\u009b"). The --json printers write to the real stdout (json-c escapes controls itself), the
   progress bar to the real stderr. */

typedef struct
{
  FILE *out;
  unsigned char pending[4];
  int n_pending, need;
} tty_filter;

static FILE *real_stdout, *real_stderr;
static tty_filter *the_filter, *the_err_filter;

static void
put_escaped_byte (FILE *out, unsigned char c)
{
  fprintf (out, "\\x%02x", c);
}

static void
flush_pending_escaped (tty_filter *f)
{
  for (int i = 0; i < f->n_pending; i++)
    put_escaped_byte (f->out, f->pending[i]);
  f->n_pending = 0;
  f->need = 0;
}

static void
filter_byte (tty_filter *f, unsigned char c)
{
  if (f->need)
    {
      if ((c & 0xc0) == 0x80)
        {
          f->pending[f->n_pending++] = c;
          if (--f->need == 0)
            {
              /* A C1 control written as UTF-8. */
              if (f->n_pending == 2 && f->pending[0] == 0xc2 && f->pending[1] < 0xa0)
                fprintf (f->out, "\\u%04x", f->pending[1]);
              else
                fwrite (f->pending, 1, (size_t) f->n_pending, f->out);
              f->n_pending = 0;
            }
          return;
        }
      flush_pending_escaped (f);
    }
  if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f))
    putc (c, f->out);
  else if (c >= 0xc2 && c <= 0xf4)
    {
      f->pending[0] = c;
      f->n_pending = 1;
      f->need = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
    }
  else
    put_escaped_byte (f->out, c);
}

static ssize_t
filter_write (void *cookie, const char *buf, size_t size)
{
  tty_filter *f = cookie;
  /* Escaped into memory first: one write to the real stream per call, not one per byte (stderr is unbuffered). */
  FILE *real = f->out;
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&text, &len);
  if (mem)
    f->out = mem;
  for (size_t i = 0; i < size; i++)
    filter_byte (f, (unsigned char) buf[i]);
  if (mem)
    {
      fclose (mem);
      f->out = real;
      fwrite (text, 1, len, real);
      free (text);
    }
  /* The filter's own buffer already batches the writes: what fflush (stdout) or a full buffer passes on goes out
     now, so a reader of a pipe (tee, a log) sees each line a long command prints when it prints it. */
  fflush (real);
  return (ssize_t) size;
}

static int
filter_close (void *cookie)
{
  tty_filter *f = cookie;
  flush_pending_escaped (f);
  fflush (f->out);
  g_free (f);
  return 0;
}

/* Replaces *stream by a filter writing to it; the filter is never closed (see fxwb_unguard_stdout). */
static FILE *
guard (FILE **stream, int fd, int mode, tty_filter **filter_out)
{
  tty_filter *f = g_new0 (tty_filter, 1);
  f->out = *stream;
  cookie_io_functions_t io = { .write = filter_write, .close = filter_close };
  FILE *filtered = fopencookie (f, "w", io);
  if (!filtered)
    {
      g_free (f);
      return NULL;
    }
  if (mode >= 0)
    setvbuf (filtered, NULL, mode, 0);
  (void) fd;
  FILE *real = *stream;
  *filter_out = f;
  *stream = filtered;
  return real;
}

void
fxwb_guard_stdout (void)
{
  if (real_stdout)
    return;
  /* stdout: line by line on a terminal, as a terminal's stdout is (a capture's program output and ours interleave
     as before); stderr: unbuffered, as stderr is. */
  real_stdout = guard (&stdout, STDOUT_FILENO, isatty (STDOUT_FILENO) ? _IOLBF : -1, &the_filter);
  real_stderr = guard (&stderr, STDERR_FILENO, _IONBF, &the_err_filter);
  /* Whatever path leaves the program, what the filter holds is written out. */
  atexit (fxwb_unguard_stdout);
}

FILE *
fxwb_real_stdout (void)
{
  if (real_stdout)
    fflush (stdout);
  return real_stdout ? real_stdout : stdout;
}

static FILE *
term_stderr (void)
{
  return real_stderr ? real_stderr : stderr;
}

void
fxwb_unguard_stdout (void)
{
  /* The filter streams are flushed but never closed: a library loaded meanwhile (libstdc++'s std::cout under
     capture) may hold one as its stdout and flush it at exit. */
  if (real_stdout)
    {
      fflush (stdout);
      /* An incomplete UTF-8 sequence at the very end. */
      flush_pending_escaped (the_filter);
      stdout = real_stdout;
      real_stdout = NULL;
      fflush (stdout);
    }
  if (real_stderr)
    {
      fflush (stderr);
      flush_pending_escaped (the_err_filter);
      stderr = real_stderr;
      real_stderr = NULL;
    }
}

char *
fxwb_escape_controls (const char *text)
{
  char *out = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&out, &len);
  if (!mem)
    return g_strdup (text);
  tty_filter f = { .out = mem };
  for (const char *p = text; *p; p++)
    filter_byte (&f, (unsigned char) *p);
  flush_pending_escaped (&f);
  fclose (mem);
  char *copy = g_strdup (out);
  free (out);
  return copy;
}

/* ---------------------------------------------------------------- --json output */

json_object *
fxwb_json_str (const char *s)
{
  if (!s)
    return NULL;
  /* JSON is UTF-8: a name that is not (a Latin-1 folder name) keeps every valid part, U+FFFD for the rest. */
  if (g_utf8_validate (s, -1, NULL))
    return json_object_new_string (s);
  g_autofree char *valid = g_utf8_make_valid (s, -1);
  return json_object_new_string (valid);
}

json_object *
fxwb_json_num (double v)
{
  if (!isfinite (v))
    return NULL;
  /* Ten significant digits: json-c's default %.17g writes 0.1 as 0.10000000000000001. */
  char text[32];
  g_ascii_formatd (text, sizeof text, "%.10g", v);
  return json_object_new_double_s (v, text);
}

void
fxwb_json_add_str (json_object *obj, const char *key, const char *s)
{
  json_object_object_add (obj, key, fxwb_json_str (s));
}

void
fxwb_json_add_int (json_object *obj, const char *key, int64_t v)
{
  json_object_object_add (obj, key, json_object_new_int64 (v));
}

void
fxwb_json_add_num (json_object *obj, const char *key, double v)
{
  json_object_object_add (obj, key, fxwb_json_num (v));
}

void
fxwb_json_add_bool (json_object *obj, const char *key, gboolean v)
{
  json_object_object_add (obj, key, json_object_new_boolean (v));
}

void
fxwb_json_print (json_object *value)
{
  FILE *out = real_stdout ? real_stdout : stdout;
  /* What the filter holds goes out first, so the order on the terminal is the order of the calls. */
  fflush (stdout);
  fputs (json_object_to_json_string_ext (value, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE), out);
  fputc ('\n', out);
  fflush (out);
  json_object_put (value);
}

/* ---------------------------------------------------------------- graph files */

gboolean
fxwb_looks_like_json (const char *path, const char *text, size_t len)
{
  if (g_str_has_suffix (path, ".json"))
    return TRUE;
  for (size_t i = 0; i < len; i++)
    if (!g_ascii_isspace (text[i]))
      return text[i] == '{';
  return FALSE;
}

/* torch.export keeps CompositeImplicit ops (aten.linear, aten.layer_norm, aten.softmax.int) that
   ExportedProgram.run_decompositions() would lower to core ATen; the engine's op table has the core ops. This does
   the same lowering for those three so a .pt2 runs: linear -> t + addmm (mm without bias, 2-D inputs), layer_norm ->
   native_layer_norm + getitem 0, softmax.int -> _softmax. Other ops are left for the engine to name if unknown. */
static void
lower_export_ops (fx_graph *graph)
{
  fx_node *next = NULL;
  for (fx_node *n = graph->first; n; n = next)
    {
      next = n->next;
      if (n->op != FX_OP_CALL_FUNCTION || !n->target.name)
        continue;
      const char *t = n->target.name;
      if (strcmp (t, "aten.softmax.int") == 0 && n->n_args >= 2
          && (n->n_args < 3 || n->args[2].kind == FX_ARG_NONE))
        {
          fx_arg a[3] = { n->args[0], n->args[1], fx_arg_bool (false) };
          n->target = fx_target_op ("aten._softmax.default");
          fx_node_set_args (n, a, 3);
          continue;
        }
      fx_node *repl = NULL;
      fx_graph_set_insert_point (graph, n);
      if (strcmp (t, "aten.linear.default") == 0 && n->n_args >= 2 && n->args[0].kind == FX_ARG_NODE
          && n->args[0].u.node->meta.val.kind == FX_VAL_TENSOR && n->args[0].u.node->meta.val.tensor.ndim == 2)
        {
          fx_arg ta[1] = { n->args[1] };
          fx_node *wt = fx_graph_call_function (graph, fx_target_op ("aten.t.default"), ta, 1, NULL, 0);
          bool bias = n->n_args >= 3 && n->args[2].kind == FX_ARG_NODE;
          fx_arg ma[3] = { bias ? n->args[2] : n->args[0], n->args[0], fx_arg_node (wt) };
          repl = bias ? fx_graph_call_function (graph, fx_target_op ("aten.addmm.default"), ma, 3, NULL, 0)
                      : fx_graph_call_function (graph, fx_target_op ("aten.mm.default"), ma + 1, 2, NULL, 0);
        }
      else if (strcmp (t, "aten.layer_norm.default") == 0 && n->n_args >= 2)
        {
          fx_arg none = fx_arg_none ();
          fx_arg la[5] = { n->args[0], n->args[1], n->n_args > 2 ? n->args[2] : none, n->n_args > 3 ? n->args[3] : none,
                           n->n_args > 4 ? n->args[4] : fx_arg_float (1e-5) };
          fx_node *ln = fx_graph_call_function (graph, fx_target_op ("aten.native_layer_norm.default"), la, 5,
                                                NULL, 0);
          fx_arg ga[2] = { fx_arg_node (ln), fx_arg_int (0) };
          repl = fx_graph_call_function (graph, fx_target_operator ("getitem"), ga, 2, NULL, 0);
        }
      fx_graph_set_insert_point (graph, NULL);
      if (repl)
        {
          repl->meta = n->meta;
          fx_node_replace_all_uses_with (n, repl);
          fx_graph_erase_node (graph, n, NULL);
        }
    }
  fx_graph_resolve_ops (graph);
}

/* A .pt2's graph: the archive is imported into a workspace in memory and its first model's export graph read back
   (the importer is the one place that knows the archive's schema). */
static fx_status
load_pt2 (const char *path, fx_graph **graph, char **text, fx_diag *diag)
{
  fx_store *store = NULL;
  fx_status st = fx_store_open (":memory:", true, &store, diag);
  fx_import_stats stats;
  if (st == FX_OK)
    st = fx_import_pt2 (store, path, &stats, diag);
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs = NULL;
  size_t n = 0;
  if (st == FX_OK)
    st = fx_store_list_compiles (store, arena, &cs, &n, diag);
  fx_store_graph_info *gi = NULL;
  size_t ng = 0;
  if (st == FX_OK && n == 0)
    st = fx_diag_set (diag, FX_ERR_PARSE, "%s: the archive holds no model", path);
  if (st == FX_OK)
    st = fx_store_list_graphs (store, cs[0].id, arena, &gi, &ng, diag);
  if (st == FX_OK && ng == 0)
    st = fx_diag_set (diag, FX_ERR_PARSE, "%s: the archive's model has no graph", path);
  if (st == FX_OK)
    st = fx_store_get_graph (store, gi[0].id, graph, text, diag);
  if (st == FX_OK && !*graph)
    st = fx_diag_set (diag, FX_ERR_PARSE, "%s: the archive's graph could not be read", path);
  if (st == FX_OK)
    lower_export_ops (*graph);
  if (n > 1 && st == FX_OK)
    fprintf (stderr, "fxwb: %s holds %zu models; using the first (%s)\n", path, n,
             cs[0].function ? cs[0].function : "?");
  fx_arena_free (arena);
  fx_store_close (store);
  return st;
}

gboolean
fxwb_is_workspace_file (const char *path)
{
  char magic[16] = { 0 };
  FILE *f = fopen (path, "rb");
  if (!f)
    return FALSE;
  size_t got = fread (magic, 1, sizeof magic, f);
  fclose (f);
  return got == sizeof magic && memcmp (magic, "SQLite format 3", 16) == 0;
}

fx_status
fxwb_load_graph_file (const char *path, fx_graph **graph, char **text, fx_diag *diag)
{
  *graph = NULL;
  char *data = NULL;
  size_t len = 0;
  /* A FIFO or a device (/dev/zero) would be read forever. */
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return fx_diag_set (diag, FX_ERR_IO, "%s: %s", path, g_file_test (path, G_FILE_TEST_EXISTS)
                        ? "not a regular file (a folder, FIFO or device)" : "no such file");
  fx_status st = fx_file_read (path, &data, &len, diag);
  if (st != FX_OK)
    return st;
  if (len >= 4 && memcmp (data, "PK\3\4", 4) == 0)
    {
      free (data);
      data = NULL;
      st = load_pt2 (path, graph, &data, diag);
    }
  else if (fxwb_looks_like_json (path, data, len))
    {
      st = fx_graph_from_json (data, len, graph, diag);
      if (st != FX_OK && diag->file[0] == '\0')
        g_strlcpy (diag->file, path, sizeof diag->file);
    }
  else
    st = fx_parse_fx_code (data, len, path, graph, diag);
  if (st != FX_OK || !text)
    free (data);
  else
    *text = data;
  return st;
}

void
fxwb_remove_tree (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *e;

  while (d != NULL && (e = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (dir, e, NULL);

      /* not through links: a link is removed, never what it points to */
      if (g_file_test (p, G_FILE_TEST_IS_DIR) && !g_file_test (p, G_FILE_TEST_IS_SYMLINK))
        fxwb_remove_tree (p);
      else
        g_unlink (p);
    }
  if (d != NULL)
    g_dir_close (d);
  g_rmdir (dir);
}
