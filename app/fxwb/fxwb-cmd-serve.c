/* fxwb-cmd-serve.c: `fxwb serve WORKSPACE [--port N] [--follow TRACE_DIR]`: the report's pages and a JSON API over
   libsoup 3, bound to 127.0.0.1 unless --bind says otherwise, every request checked against a random token; with
   --follow, the TORCH_TRACE logs a running process writes are imported as they grow and open pages are told over
   server-sent events. Opening a workspace runs nothing in it: it is only read through sqlite. */
#include "fxwb.h"
#include "fxwb-report.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx/importers.h"

#define FOLLOW_TICK_MS 200
/* A record held back (its payload may still grow) is imported once the file has not grown for this many ticks. */
#define FOLLOW_QUIET_TICKS 2
#define FOLLOW_MAX_READ (64 * 1024 * 1024)

typedef struct
{
  char *path;
  fx_trace_follow *follow;
  gint64 offset;          /* bytes imported */
  gint64 seen_size;       /* size at the last tick */
  int quiet_ticks;
} followed_file;

typedef struct
{
  SoupServer *server;
  fxwb_report_source src;
  char token[33];
  char *link_query;       /* "?token=..." */
  char *title;
  gboolean live;
  /* --follow */
  char *follow_path;
  GPtrArray *files;       /* followed_file* */
  GPtrArray *streams;     /* SoupServerMessage* of open /api/events */
  gint64 n_compiles;
  gboolean quiet;
} serve_state;

/* ------------------------------------------------------------------ helpers */

static void
respond (SoupServerMessage *msg, guint status, const char *type, char *body, size_t len)
{
  SoupMessageHeaders *h = soup_server_message_get_response_headers (msg);
  soup_message_headers_replace (h, "X-Content-Type-Options", "nosniff");
  soup_message_headers_replace (h, "Cache-Control", "no-store");
  /* The token travels in URLs: never hand it to another site. */
  soup_message_headers_replace (h, "Referrer-Policy", "no-referrer");
  soup_message_headers_replace (h, "Content-Security-Policy",
                                "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                                "connect-src 'self'; frame-ancestors 'none'");
  soup_server_message_set_status (msg, status, NULL);
  soup_server_message_set_response (msg, type, SOUP_MEMORY_TAKE, body, len);
}

static void
respond_text (SoupServerMessage *msg, guint status, const char *text)
{
  char *body = g_strdup_printf ("%s\n", text);
  respond (msg, status, "text/plain; charset=utf-8", body, strlen (body));
}

static void
respond_buf (SoupServerMessage *msg, const char *type, fx_buf *buf)
{
  size_t len = buf->len;
  char *data = fx_buf_steal (buf);
  respond (msg, SOUP_STATUS_OK, type, data ? data : g_strdup (""), len);
}

static void
respond_diag (SoupServerMessage *msg, fx_status st, const fx_diag *diag)
{
  char text[2048];
  fx_diag_format (diag, text, sizeof text);
  respond_text (msg, st == FX_ERR_NOT_FOUND ? SOUP_STATUS_NOT_FOUND : SOUP_STATUS_INTERNAL_SERVER_ERROR, text);
}

static gboolean
token_equal (const char *given, const char *token)
{
  if (!given || strlen (given) != strlen (token))
    return FALSE;
  unsigned char diff = 0;
  for (size_t i = 0; token[i]; i++)
    diff |= (unsigned char) (given[i] ^ token[i]);
  return diff == 0;
}

static gboolean
authorized (serve_state *s, SoupServerMessage *msg, GHashTable *query)
{
  const char *given = query ? g_hash_table_lookup (query, "token") : NULL;
  if (token_equal (given, s->token))
    return TRUE;
  const char *auth = soup_message_headers_get_one (soup_server_message_get_request_headers (msg), "Authorization");
  return auth && g_str_has_prefix (auth, "Bearer ") && token_equal (auth + 7, s->token);
}

/* "123" -> 123; anything else -> -1. */
static gint64
parse_id (const char *text, const char *suffix)
{
  if (!text || !g_ascii_isdigit (*text))
    return -1;
  char *end = NULL;
  gint64 v = g_ascii_strtoll (text, &end, 10);
  if (!end || strcmp (end, suffix) != 0 || v <= 0)
    return -1;
  return v;
}

static char *
graph_href (int64_t graph_id, const fx_graph *graph, void *user_data)
{
  (void) graph;
  (void) user_data;
  return g_strdup_printf ("graph-%" G_GINT64_FORMAT ".svg", (gint64) graph_id);
}

static fx_report_opts
page_opts (serve_state *s)
{
  fx_report_opts o = {
    .title = s->title,
    .graph_href = graph_href,
    .link_query = s->link_query,
    .live = s->live,
    .warnings = s->src.warnings,
    .n_warnings = s->src.n_warnings,
  };
  return o;
}

/* ------------------------------------------------------------------ requests */

static void
events_finished (SoupServerMessage *msg, gpointer user_data)
{
  serve_state *s = user_data;
  g_ptr_array_remove (s->streams, msg);
}

static void
send_event (SoupServerMessage *msg, const char *event, const char *data)
{
  g_autofree char *text = g_strdup_printf ("event: %s\ndata: %s\n\n", event, data);
  soup_message_body_append (soup_server_message_get_response_body (msg), SOUP_MEMORY_COPY, text, strlen (text));
  soup_server_message_unpause (msg);
}

static void
start_events (serve_state *s, SoupServerMessage *msg)
{
  SoupMessageHeaders *h = soup_server_message_get_response_headers (msg);
  soup_message_headers_set_encoding (h, SOUP_ENCODING_CHUNKED);
  soup_message_headers_set_content_type (h, "text/event-stream", NULL);
  soup_message_headers_replace (h, "Cache-Control", "no-store");
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_message_body_set_accumulate (soup_server_message_get_response_body (msg), FALSE);
  g_signal_connect (msg, "finished", G_CALLBACK (events_finished), s);
  g_ptr_array_add (s->streams, msg);
  g_autofree char *data = g_strdup_printf ("{\"compiles\": %" G_GINT64_FORMAT "}", s->n_compiles);
  send_event (msg, "hello", data);
}

static void
handle (SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer user_data)
{
  serve_state *s = user_data;
  (void) server;
  const char *method = soup_server_message_get_method (msg);
  if (strcmp (method, "GET") != 0 && strcmp (method, "HEAD") != 0)
    {
      respond_text (msg, SOUP_STATUS_METHOD_NOT_ALLOWED, "only GET");
      return;
    }
  if (!authorized (s, msg, query))
    {
      respond_text (msg, SOUP_STATUS_FORBIDDEN,
                    "forbidden: open the URL that fxwb serve printed (it carries ?token=...)");
      return;
    }
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_buf buf;
  fx_buf_init (&buf);
  fx_status st = FX_OK;
  fx_report_opts opts = page_opts (s);
  const char *html = "text/html; charset=utf-8", *json = "application/json";
  gint64 id;
  if (strcmp (path, "/") == 0 || strcmp (path, "/index.html") == 0)
    {
      if ((st = fx_report_index_html (s->src.store, &opts, &buf, &diag)) == FX_OK)
        respond_buf (msg, html, &buf);
    }
  else if (g_str_has_prefix (path, "/compile-") && (id = parse_id (path + 9, ".html")) > 0)
    {
      if ((st = fx_report_compile_html (s->src.store, id, &opts, &buf, &diag)) == FX_OK)
        respond_buf (msg, html, &buf);
    }
  else if (strcmp (path, "/report.css") == 0)
    respond (msg, SOUP_STATUS_OK, "text/css", g_strdup (fx_report_css ()), strlen (fx_report_css ()));
  else if (strcmp (path, "/report.js") == 0)
    respond (msg, SOUP_STATUS_OK, "text/javascript", g_strdup (fx_report_js ()), strlen (fx_report_js ()));
  else if (strcmp (path, "/search-index.js") == 0)
    {
      if ((st = fx_report_search_js (s->src.store, &buf, &diag)) == FX_OK)
        respond_buf (msg, "text/javascript", &buf);
    }
  else if (g_str_has_prefix (path, "/graph-text-") && (id = parse_id (path + 12, ".txt")) > 0)
    {
      char *text = NULL;
      if ((st = fx_store_get_graph (s->src.store, id, NULL, &text, &diag)) == FX_OK)
        respond (msg, SOUP_STATUS_OK, "text/plain; charset=utf-8", text ? text : g_strdup (""),
                 text ? strlen (text) : 0);
    }
  else if (g_str_has_prefix (path, "/graph-") && (id = parse_id (path + 7, ".svg")) > 0)
    {
      fx_graph *g = NULL;
      if ((st = fx_store_get_graph (s->src.store, id, &g, NULL, &diag)) == FX_OK)
        {
          char *svg = NULL;
          if (g)
            {
              fx_graph_dump_dot (g, &buf);
              svg = fxwb_report_svg (buf.data, buf.len, NULL);
            }
          if (svg)
            respond (msg, SOUP_STATUS_OK, "image/svg+xml", svg, strlen (svg));
          else
            respond_text (msg, SOUP_STATUS_NOT_FOUND, "this graph cannot be drawn");
          fx_graph_free (g);
        }
    }
  else if (g_str_has_prefix (path, "/artifact-"))
    {
      /* artifact-ROW-K.txt: the K-th artifact of compile ROW */
      gint64 row = -1, k = -1;
      char *end = NULL;
      row = g_ascii_strtoll (path + 10, &end, 10);
      if (end && *end == '-')
        k = parse_id (end + 1, ".txt");
      if (end && *end == '-' && strcmp (end + 1, "0.txt") == 0)
        k = 0;
      fx_arena *arena = fx_arena_new ();
      fx_store_kv *a = NULL;
      size_t n = 0;
      if (row > 0 && k >= 0 && (st = fx_store_list_artifacts (s->src.store, row, arena, &a, &n, &diag)) == FX_OK
          && (size_t) k < n)
        respond (msg, SOUP_STATUS_OK, "text/plain; charset=utf-8", g_strdup (a[k].value ? a[k].value : ""),
                 a[k].value ? strlen (a[k].value) : 0);
      else if (st == FX_OK)
        respond_text (msg, SOUP_STATUS_NOT_FOUND, "no such artifact");
      fx_arena_free (arena);
    }
  else if (strcmp (path, "/api/compiles") == 0)
    {
      if ((st = fx_report_compiles_json (s->src.store, &buf, &diag)) == FX_OK)
        respond_buf (msg, json, &buf);
    }
  else if (g_str_has_prefix (path, "/api/compiles/"))
    {
      /* A row number, or a compile id as fxwb ls shows it ("0/1", "[0/1]"). */
      const char *arg = path + 14;
      int64_t row = parse_id (arg, "");
      if (row < 0)
        st = fx_store_find_compile (s->src.store, arg, &row, &diag);
      if (st == FX_OK && (st = fx_report_compile_json (s->src.store, row, &buf, &diag)) == FX_OK)
        respond_buf (msg, json, &buf);
    }
  else if (g_str_has_prefix (path, "/api/graphs/") && (id = parse_id (path + 12, "")) > 0)
    {
      if ((st = fx_report_graph_json (s->src.store, id, &buf, &diag)) == FX_OK)
        respond_buf (msg, json, &buf);
    }
  else if (strcmp (path, "/api/report") == 0)
    {
      char *data = NULL;
      size_t len = 0;
      FILE *mem = open_memstream (&data, &len);
      st = fx_report_write_json (s->src.store, mem, &opts, &diag);
      fclose (mem);
      if (st == FX_OK)
        respond (msg, SOUP_STATUS_OK, json, g_memdup2 (data, len), len);
      free (data);
    }
  else if (strcmp (path, "/api/events") == 0)
    start_events (s, msg);
  else
    respond_text (msg, SOUP_STATUS_NOT_FOUND, "not found");
  if (st != FX_OK)
    respond_diag (msg, st, &diag);
  fx_buf_free (&buf);
}

/* ------------------------------------------------------------------ --follow */

static void
follow_add_file (serve_state *s, const char *path)
{
  for (guint i = 0; i < s->files->len; i++)
    if (strcmp (((followed_file *) g_ptr_array_index (s->files, i))->path, path) == 0)
      return;
  followed_file *f = g_new0 (followed_file, 1);
  f->path = g_strdup (path);
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_trace_follow_new (s->src.store, path, 0, &f->follow, &diag) != FX_OK)
    {
      fxwb_print_diag (&diag);
      g_free (f->path);
      g_free (f);
      return;
    }
  if (!s->quiet)
    fprintf (stderr, "fxwb serve: following %s\n", path);
  g_ptr_array_add (s->files, f);
}

static void
followed_file_free (gpointer data)
{
  followed_file *f = data;
  fx_trace_follow_free (f->follow);
  g_free (f->path);
  g_free (f);
}

/* New *.log files of the followed folder (PyTorch opens its log on the first record, so it may appear late). */
static void
follow_scan (serve_state *s)
{
  GStatBuf sb;
  if (g_stat (s->follow_path, &sb) != 0)
    return;
  if (!S_ISDIR (sb.st_mode))
    {
      follow_add_file (s, s->follow_path);
      return;
    }
  g_autoptr (GDir) d = g_dir_open (s->follow_path, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    if (g_str_has_suffix (name, ".log"))
      {
        g_autofree char *full = g_build_filename (s->follow_path, name, NULL);
        follow_add_file (s, full);
      }
}

/* Reads what was appended to f since its offset and imports the complete records. */
static void
follow_file (serve_state *s, followed_file *f)
{
  GStatBuf sb;
  if (g_stat (f->path, &sb) != 0)
    return;
  gint64 size = sb.st_size;
  if (size < f->offset)
    {
      fprintf (stderr, "fxwb serve: %s got shorter (truncated?); following it from its new end\n", f->path);
      f->offset = f->seen_size = size;
      return;
    }
  f->quiet_ticks = size == f->seen_size ? f->quiet_ticks + 1 : 0;
  f->seen_size = size;
  if (size == f->offset)
    return;
  gboolean final = f->quiet_ticks >= FOLLOW_QUIET_TICKS;
  /* A record held back is fed again once the file stays quiet; until then, no new bytes means no new work. */
  if (f->quiet_ticks > 0 && !final)
    return;
  gint64 want = MIN (size - f->offset, FOLLOW_MAX_READ);
  int fd = open (f->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  char *data = g_malloc ((gsize) want);
  ssize_t got = pread (fd, data, (size_t) want, f->offset);
  close (fd);
  if (got > 0)
    {
      fx_diag diag;
      fx_diag_clear (&diag);
      size_t used = 0;
      /* Reading only part of a large backlog: the end of the chunk is no end of the file. */
      gboolean at_eof = f->offset + got >= size;
      fx_status st = fx_trace_follow_feed (f->follow, data, (size_t) got, final && at_eof, &used, &diag);
      if (st != FX_OK)
        fxwb_print_diag (&diag);
      f->offset += (gint64) used;
      if (final)
        f->quiet_ticks = 0;
    }
  g_free (data);
}

static gboolean
follow_tick (gpointer user_data)
{
  serve_state *s = user_data;
  follow_scan (s);
  for (guint i = 0; i < s->files->len; i++)
    follow_file (s, g_ptr_array_index (s->files, i));
  int64_t n = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_store_count (s->src.store, "compiles", &n, &diag) == FX_OK && n != s->n_compiles)
    {
      s->n_compiles = n;
      g_autofree char *data = g_strdup_printf ("{\"compiles\": %" G_GINT64_FORMAT "}", (gint64) n);
      for (guint i = 0; i < s->streams->len; i++)
        send_event (g_ptr_array_index (s->streams, i), "compiles", data);
      if (!s->quiet)
        fprintf (stderr, "fxwb serve: %" G_GINT64_FORMAT " compiles\n", (gint64) n);
    }
  return G_SOURCE_CONTINUE;
}

/* ------------------------------------------------------------------ the command */

static gboolean
quit_on_signal (gpointer user_data)
{
  g_main_loop_quit (user_data);
  return G_SOURCE_REMOVE;
}

int
fxwb_cmd_serve (int argc, char **argv)
{
  int port = 8000;
  g_autofree char *bind = NULL, *follow = NULL, *title = NULL, *url_file = NULL;
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
    { "port", 'p', 0, G_OPTION_ARG_INT, &port, "TCP port (default 8000; 0: any free port)", "N" },
    { "bind", 0, 0, G_OPTION_ARG_STRING, &bind,
      "Listen on this address instead of 127.0.0.1 (e.g. 0.0.0.0: every interface; the token still applies)", "ADDR" },
    { "follow", 'f', 0, G_OPTION_ARG_FILENAME, &follow,
      "A TORCH_TRACE folder (or one log) that a running PyTorch process writes: import records as they arrive", "PATH" },
    { "title", 't', 0, G_OPTION_ARG_STRING, &title, "The pages' title", "TEXT" },
    { "url-file", 0, 0, G_OPTION_ARG_FILENAME, &url_file, "Also write the URL (with its token) to this file", "FILE" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Only print the URL", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb serve",
                               "[WORKSPACE.fxwb | TRACE...] - serve report pages and a JSON API", entries,
                               "Serves the pages of fxwb report and a JSON API: /api/compiles, /api/compiles/ID (a row\n"
                               "or a compile id such as 0/1), /api/graphs/ID, /api/report (the whole document),\n"
                               "/api/events (server-sent events when compiles arrive). Bound to 127.0.0.1 unless\n"
                               "--bind; every request needs the random token of the printed URL (?token=... or an\n"
                               "'Authorization: Bearer' header), else 403.\n"
                               "--follow PATH tails the TORCH_TRACE logs under PATH while a program writes them (a\n"
                               "partial last line waits for its newline) into WORKSPACE, or into a temporary one.\n"
                               "TORCH_TRACE=/tmp/tr python train.py & fxwb serve --follow /tmp/tr",
                               "Exit status:\n"
                               "  0  stopped (Ctrl-C)\n"
                               "  1  an input held nothing readable\n"
                               "  2  wrong command line\n"
                               "  3  a file cannot be read, or the address cannot be listened on\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  if (argc < 2 && !follow)
    return fxwb_usage_error (context, "missing WORKSPACE, TRACE or --follow PATH");
  if (port < 0 || port > 65535)
    {
      fprintf (stderr, "fxwb serve: --port must be between 0 and 65535\n");
      return FXWB_EXIT_USAGE;
    }
  g_autoptr (GInetAddress) addr = g_inet_address_new_from_string (bind ? bind : "127.0.0.1");
  if (!addr)
    {
      fprintf (stderr, "fxwb serve: --bind wants an IP address, not '%s'\n", bind);
      return FXWB_EXIT_USAGE;
    }

  serve_state s = { 0 };
  s.quiet = quiet;
  s.title = title;
  s.live = follow != NULL;
  unsigned char raw[16];
  if (getrandom (raw, sizeof raw, 0) != (ssize_t) sizeof raw)
    {
      fprintf (stderr, "fxwb serve: no random bytes for the access token: %s\n", g_strerror (errno));
      return FXWB_EXIT_IO;
    }
  for (size_t i = 0; i < sizeof raw; i++)
    snprintf (s.token + 2 * i, 3, "%02x", raw[i]);
  s.link_query = g_strdup_printf ("?token=%s", s.token);

  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = fxwb_report_source_open (&s.src, argv + 1, argc - 1, follow != NULL, quiet, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      fxwb_report_source_clear (&s.src);
      g_free (s.link_query);
      return fxwb_exit_for_status (st);
    }
  s.streams = g_ptr_array_new ();
  s.files = g_ptr_array_new_with_free_func (followed_file_free);
  int64_t n = 0;
  if (fx_store_count (s.src.store, "compiles", &n, &diag) == FX_OK)
    s.n_compiles = n;

  s.server = soup_server_new ("server-header", "fxwb ", NULL);
  soup_server_add_handler (s.server, NULL, handle, &s, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocketAddress) sa = g_inet_socket_address_new (addr, (guint16) port);
  int rc = FXWB_EXIT_OK;
  if (!soup_server_listen (s.server, sa, 0, &error))
    {
      fprintf (stderr, "fxwb serve: cannot listen on %s:%d: %s\n", bind ? bind : "127.0.0.1", port, error->message);
      rc = FXWB_EXIT_IO;
    }
  else
    {
      GSList *uris = soup_server_get_uris (s.server);
      int bound = uris ? g_uri_get_port (uris->data) : port;
      g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
      g_autofree char *host = g_inet_address_to_string (addr);
      gboolean v6 = g_inet_address_get_family (addr) == G_SOCKET_FAMILY_IPV6;
      g_autofree char *url = g_strdup_printf ("http://%s%s%s:%d/%s", v6 ? "[" : "", host, v6 ? "]" : "", bound,
                                              s.link_query);
      printf ("Serving %s at %s\n", s.src.workspace && !s.src.tmp_dir ? s.src.workspace : "the report", url);
      fflush (stdout);
      if (url_file)
        {
          g_autofree char *line = g_strdup_printf ("%s\n", url);
          if (!g_file_set_contents (url_file, line, -1, &error))
            fprintf (stderr, "fxwb serve: %s\n", error->message);
        }
      if (bind && !g_inet_address_get_is_loopback (addr))
        fprintf (stderr, "fxwb serve: listening beyond this machine (%s); anyone with the URL can read the "
                         "workspace\n", host);
      GMainLoop *loop = g_main_loop_new (NULL, FALSE);
      g_unix_signal_add (SIGINT, quit_on_signal, loop);
      g_unix_signal_add (SIGTERM, quit_on_signal, loop);
      guint tick = 0;
      if (follow)
        {
          s.follow_path = follow;
          follow_tick (&s);
          tick = g_timeout_add (FOLLOW_TICK_MS, follow_tick, &s);
        }
      g_main_loop_run (loop);
      if (tick)
        g_source_remove (tick);
      g_main_loop_unref (loop);
    }
  soup_server_disconnect (s.server);
  g_object_unref (s.server);
  g_ptr_array_unref (s.files);
  g_ptr_array_unref (s.streams);
  fxwb_report_source_clear (&s.src);
  g_free (s.link_query);
  return rc;
}
