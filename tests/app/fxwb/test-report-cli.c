/* test-report-cli.c: `fxwb report` and `fxwb serve` as a user runs them: a report folder and a JSON document from the
   toy trace, the server's token (403 without it, 200 with it, on 127.0.0.1), its JSON API, and --follow importing
   the lines appended to a trace while it is served. argv[1] (after the test options) is the fxwb program. */
#include <gio/gio.h>
#include <glib.h>

#include "fxwb-test-run.h"
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *fxwb_path;
static char *tmp_dir;
static char *workspace;

typedef fxwb_run_result run_result;
#define run_result_clear fxwb_run_result_clear

static run_result
run_fxwb (const char *const *args)
{
  return fxwb_test_run (fxwb_path, args);
}


static char *
fixture_log (const char *trace)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  g_autofree char *d = g_build_filename (dir ? dir : "tests/fixtures", "traces", trace, "torch_trace", NULL);
  g_autoptr (GDir) gd = g_dir_open (d, 0, NULL);
  g_assert_nonnull (gd);
  return g_build_filename (d, g_dir_read_name (gd), NULL);
}

static void
test_report (void)
{
  g_autofree char *log = fixture_log ("toy_graph_break-cuda");
  g_autofree char *out = g_build_filename (tmp_dir, "report", NULL);
  const char *args[] = { "report", log, "-o", out, NULL };
  run_result r = run_fxwb (args);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "10 pages (9 compiles)"));
  run_result_clear (&r);
  g_autofree char *index_path = g_build_filename (out, "index.html", NULL);
  g_autofree char *index = NULL;
  g_assert_true (g_file_get_contents (index_path, &index, NULL, NULL));
  g_assert_nonnull (strstr (index, "0/0: tensor &#39;a&#39; size mismatch at index 0. expected 10, actual 16"));
  g_assert_nonnull (strstr (index, "<td class=\"num\">4.6 MB</td>"));   /* the streamed log's size */
  const char *need[] = { "report.css", "report.js", "search-index.js" };
  for (size_t i = 0; i < G_N_ELEMENTS (need); i++)
    {
      g_autofree char *p = g_build_filename (out, need[i], NULL);
      g_assert_true (g_file_test (p, G_FILE_TEST_IS_REGULAR));
    }

  /* The same from a workspace, and as one JSON document. */
  const char *iargs[] = { "import", "-q", log, "-o", workspace, NULL };
  r = run_fxwb (iargs);
  g_assert_cmpint (r.status, ==, 0);
  run_result_clear (&r);
  g_autofree char *json = g_build_filename (tmp_dir, "report.json", NULL);
  const char *jargs[] = { "report", "--json", workspace, "-o", json, NULL };
  r = run_fxwb (jargs);
  g_assert_cmpint (r.status, ==, 0);
  run_result_clear (&r);
  g_autofree char *doc = NULL;
  g_assert_true (g_file_get_contents (json, &doc, NULL, NULL));
  g_assert_true (g_str_has_prefix (doc, "{\"schema\": \"fxwb-report\", \"version\": 1"));
  g_assert_nonnull (strstr (doc, "\"compile_id\": \"2/3\""));

  /* A damaged trace: a line that is no record and a truncated last line are skipped and listed, located. */
  g_autofree char *log_text = NULL;
  gsize log_len = 0;
  g_assert_true (g_file_get_contents (log, &log_text, &log_len, NULL));
  const char *second = strchr (log_text, '\n') + 1;
  GString *bad = g_string_new (NULL);
  g_string_append_len (bad, log_text, second - log_text);
  g_string_append (bad, "garbage <b>not a record</b>\n");
  g_string_append_len (bad, second, (log_text + log_len) - second);
  g_string_append (bad, "V1124 10:00:00.000000 100 torch/_dynamo/x.py:1] {\"artifact\": {\"na");
  int lines = 0;
  for (const char *p = bad->str; *p; p++)
    lines += *p == '\n';
  g_autofree char *bad_path = g_build_filename (tmp_dir, "damaged.log", NULL);
  g_assert_true (g_file_set_contents (bad_path, bad->str, bad->len, NULL));
  g_string_free (bad, TRUE);
  g_autofree char *bad_out = g_build_filename (tmp_dir, "damaged-report", NULL);
  const char *bargs[] = { "report", bad_path, "-o", bad_out, NULL };
  r = run_fxwb (bargs);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "10 pages (9 compiles)"));
  run_result_clear (&r);
  g_autofree char *bad_index_path = g_build_filename (bad_out, "index.html", NULL);
  g_autofree char *bad_index = NULL;
  g_assert_true (g_file_get_contents (bad_index_path, &bad_index, NULL, NULL));
  g_assert_nonnull (strstr (bad_index, "damaged.log:2</code>"));
  g_assert_nonnull (strstr (bad_index, "garbage &lt;b&gt;not a record&lt;/b&gt;"));
  g_autofree char *last = g_strdup_printf ("damaged.log:%d</code>", lines + 1);
  g_assert_nonnull (strstr (bad_index, last));

  /* Wrong command lines and missing inputs. */
  const char *no_out[] = { "report", log, NULL };
  r = run_fxwb (no_out);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "missing -o DIR"));
  run_result_clear (&r);
  const char *missing[] = { "report", "/nonexistent/trace.log", "-o", out, NULL };
  r = run_fxwb (missing);
  g_assert_cmpint (r.status, ==, 3);
  run_result_clear (&r);
}

/* ------------------------------------------------------------------ the server */

typedef struct
{
  GPid pid;
  char *host;
  int port;
  char *token;
} server;

static void
server_start (server *s, const char *const *args)
{
  g_autofree char *url_file = g_build_filename (tmp_dir, "url.txt", NULL);
  g_unlink (url_file);
  const char *argv[16] = { fxwb_path, "serve", "--port", "0", "--quiet", "--url-file", url_file };
  int i = 7;
  for (int k = 0; args[k] && i < 15; k++)
    argv[i++] = args[k];
  argv[i] = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &s->pid, &error));
  /* Bounded wait for the URL. */
  g_autofree char *url = NULL;
  for (int tries = 0; tries < 200 && !url; tries++)
    {
      g_usleep (50000);
      char *text = NULL;
      if (g_file_get_contents (url_file, &text, NULL, NULL) && strchr (text, '\n'))
        url = text;
      else
        g_free (text);
    }
  g_assert_nonnull (url);
  /* http://127.0.0.1:PORT/?token=HEX */
  g_assert_true (g_str_has_prefix (url, "http://127.0.0.1:"));
  s->host = g_strdup ("127.0.0.1");
  s->port = atoi (url + strlen ("http://127.0.0.1:"));
  const char *t = strstr (url, "?token=");
  g_assert_nonnull (t);
  s->token = g_strstrip (g_strdup (t + 7));
  g_assert_cmpuint (strlen (s->token), ==, 32);
}

static void
server_stop (server *s)
{
  kill (s->pid, SIGTERM);
  int status = 0;
  waitpid (s->pid, &status, 0);
  g_spawn_close_pid (s->pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_free (s->host);
  g_free (s->token);
}

/* One HTTP/1.1 request with Connection: close; returns the status, *body the body. */
static int
http (const server *s, const char *method, const char *path, const char *header, char **body)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, s->host, (guint16) s->port, NULL,
                                                                       &error);
  g_assert_no_error (error);
  g_autofree char *req = g_strdup_printf ("%s %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n%s%s\r\n", method,
                                          path, s->host, s->port, header ? header : "", header ? "\r\n" : "");
  GOutputStream *os = g_io_stream_get_output_stream (G_IO_STREAM (conn));
  g_assert_true (g_output_stream_write_all (os, req, strlen (req), NULL, NULL, &error));
  GInputStream *is = g_io_stream_get_input_stream (G_IO_STREAM (conn));
  GString *resp = g_string_new (NULL);
  char buf[65536];
  gssize got;
  while ((got = g_input_stream_read (is, buf, sizeof buf, NULL, &error)) > 0)
    g_string_append_len (resp, buf, got);
  g_assert_no_error (error);
  int status = 0;
  g_assert_true (sscanf (resp->str, "HTTP/1.%*d %d", &status) == 1);
  const char *b = strstr (resp->str, "\r\n\r\n");
  if (body)
    *body = g_strdup (b ? b + 4 : "");
  g_string_free (resp, TRUE);
  return status;
}

static void
test_serve (void)
{
  g_assert_true (g_file_test (workspace, G_FILE_TEST_EXISTS));   /* made by /report-cli/report */
  server s;
  const char *args[] = { workspace, NULL };
  server_start (&s, args);
  char *body = NULL;
  g_assert_cmpint (http (&s, "GET", "/api/compiles", NULL, &body), ==, 403);
  g_assert_null (strstr (body, "compile_id"));
  g_free (body);
  g_assert_cmpint (http (&s, "GET", "/", NULL, NULL), ==, 403);
  g_assert_cmpint (http (&s, "GET", "/api/compiles?token=0123456789abcdef0123456789abcdef", NULL, NULL), ==, 403);
  g_autofree char *q = g_strdup_printf ("/api/compiles?token=%s", s.token);
  g_assert_cmpint (http (&s, "GET", q, NULL, &body), ==, 200);
  g_assert_nonnull (strstr (body, "\"compile_id\": \"0/0\""));
  g_assert_nonnull (strstr (body, "\"compile_id\": \"2/3\""));
  g_free (body);
  g_autofree char *bearer = g_strdup_printf ("Authorization: Bearer %s", s.token);
  g_assert_cmpint (http (&s, "GET", "/api/compiles/0/1", bearer, &body), ==, 200);
  g_assert_nonnull (strstr (body, "tensor 'a' size mismatch at index 0. expected 10, actual 16"));
  g_free (body);
  g_autofree char *index = g_strdup_printf ("/?token=%s", s.token);
  g_assert_cmpint (http (&s, "GET", index, NULL, &body), ==, 200);
  g_assert_true (g_str_has_prefix (body, "<!DOCTYPE html>"));
  /* Links carry the token so the pages work from the URL alone. */
  g_autofree char *linked = g_strdup_printf ("compile-1.html?token=%s", s.token);
  g_assert_nonnull (strstr (body, linked));
  g_free (body);
  g_autofree char *graph = g_strdup_printf ("/api/graphs/1?token=%s", s.token);
  g_assert_cmpint (http (&s, "GET", graph, NULL, &body), ==, 200);
  g_assert_nonnull (strstr (body, "\"stage\": \"dynamo\""));
  g_free (body);
  g_autofree char *missing = g_strdup_printf ("/api/compiles/9/9?token=%s", s.token);
  g_assert_cmpint (http (&s, "GET", missing, NULL, NULL), ==, 404);
  g_assert_cmpint (http (&s, "POST", q, NULL, NULL), ==, 405);
  server_stop (&s);
}

/* Reads from an open /api/events stream until want shows up (the socket times out after 10 s). */
static gboolean
events_wait (GSocketConnection *conn, GString *seen, const char *want)
{
  GInputStream *is = g_io_stream_get_input_stream (G_IO_STREAM (conn));
  char buf[4096];
  while (!strstr (seen->str, want))
    {
      gssize got = g_input_stream_read (is, buf, sizeof buf, NULL, NULL);
      if (got <= 0)
        return FALSE;
      g_string_append_len (seen, buf, got);
    }
  return TRUE;
}

static GSocketConnection *
events_open (const server *s)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_socket_client_set_timeout (client, 10);
  GSocketConnection *conn = g_socket_client_connect_to_host (client, s->host, (guint16) s->port, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *req = g_strdup_printf ("GET /api/events?token=%s HTTP/1.1\r\nHost: %s:%d\r\n"
                                          "Accept: text/event-stream\r\n\r\n", s->token, s->host, s->port);
  g_assert_true (g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), req, strlen (req),
                                            NULL, NULL, &error));
  return conn;
}

/* Compiles in an /api/compiles answer. */
static int
count_compiles (const char *body)
{
  int n = 0;
  for (const char *p = body; (p = strstr (p, "\"compile_id\": ")); p++)
    n++;
  return n;
}

static void
test_follow (void)
{
  g_autofree char *log = fixture_log ("toy_graph_break-cuda");
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (log, &data, &len, NULL));
  g_autofree char *dir = g_build_filename (tmp_dir, "live", NULL);
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  server s;
  const char *args[] = { "--follow", dir, NULL };
  server_start (&s, args);
  g_autofree char *q = g_strdup_printf ("/api/compiles?token=%s", s.token);
  char *body = NULL;
  g_assert_cmpint (http (&s, "GET", q, NULL, &body), ==, 200);
  g_assert_cmpint (count_compiles (body), ==, 0);
  g_free (body);

  /* PyTorch creates its log on the first record and appends: the first third, cut inside a line. */
  g_autofree char *path = g_build_filename (dir, "dedicated_log_torch_trace_live.log", NULL);
  FILE *f = fopen (path, "wb");
  g_assert_nonnull (f);
  size_t first = len / 3;
  g_assert_cmpuint (fwrite (data, 1, first, f), ==, first);
  fflush (f);
  int seen = 0;
  for (int tries = 0; tries < 100 && seen == 0; tries++)
    {
      g_usleep (100000);
      g_assert_cmpint (http (&s, "GET", q, NULL, &body), ==, 200);
      seen = count_compiles (body);
      g_free (body);
    }
  g_assert_cmpint (seen, >, 0);
  g_assert_cmpint (seen, <, 9);

  /* An open page's event stream: a hello, then "compiles" when more arrive. */
  g_autoptr (GSocketConnection) events = events_open (&s);
  GString *stream = g_string_new (NULL);
  g_assert_true (events_wait (events, stream, "event: hello"));
  g_assert_nonnull (strstr (stream->str, "text/event-stream"));
  g_string_truncate (stream, 0);

  /* The rest: the last compile [2/3] shows up (bounded wait; the time it took is reported). */
  gint64 t0 = g_get_monotonic_time ();
  g_assert_cmpuint (fwrite (data + first, 1, len - first, f), ==, len - first);
  fclose (f);
  g_assert_true (events_wait (events, stream, "event: compiles"));
  g_string_free (stream, TRUE);
  gboolean found = FALSE;
  for (int tries = 0; tries < 200 && !found; tries++)
    {
      g_usleep (50000);
      g_assert_cmpint (http (&s, "GET", q, NULL, &body), ==, 200);
      found = strstr (body, "\"compile_id\": \"2/3\"") != NULL;
      if (found)
        g_assert_cmpint (count_compiles (body), ==, 9);
      g_free (body);
    }
  g_assert_true (found);
  g_test_message ("appended compiles appeared in /api/compiles after %.2f s",
                  (double) (g_get_monotonic_time () - t0) / 1e6);
  server_stop (&s);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 2)
    {
      g_printerr ("usage: %s [test options] FXWB\n", argv[0]);
      return 1;
    }
  fxwb_path = argv[1];
  g_autoptr (GError) error = NULL;
  tmp_dir = g_dir_make_tmp ("fxwb-report-cli-XXXXXX", &error);
  g_assert_no_error (error);
  workspace = g_build_filename (tmp_dir, "toy.fxwb", NULL);
  g_test_add_func ("/report-cli/report", test_report);
  g_test_add_func ("/report-cli/serve", test_serve);
  g_test_add_func ("/report-cli/follow", test_follow);
  int rc = g_test_run ();
  fxwb_test_rm_rf (tmp_dir);
  return rc;
}
