/* test-trace-scan.c: the importer's JSON scanner (engine/formats/fx-trace-scan.c) against json-c: on every envelope
   line and chromium event payload of every fixture trace it must read what json-c reads, and on crafted input
   either read the same or decline (the importer then asks json-c). */
#include "fx-test-lines.h"
#include <glib.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "fx-trace-scan.h"

/* What the importer's json_int() reads. */
static int
jc_int (json_object *obj, const char *key, int dflt)
{
  json_object *v;
  if (!json_object_object_get_ex (obj, key, &v) || !v || json_object_get_type (v) != json_type_int)
    return dflt;
  int64_t x = json_object_get_int64 (v);
  return x < 0 || x > 1000000000 ? dflt : (int) x;
}

static const char *
jc_str (json_object *obj, const char *key)
{
  json_object *v;
  if (!obj || !json_object_object_get_ex (obj, key, &v) || !v || json_object_get_type (v) != json_type_string)
    return NULL;
  return json_object_get_string (v);
}

static char *
span_dup (fx_json_span s)
{
  return g_strndup (s.p, s.len);
}

/* json-c's reading of a value's text, printed back. */
static char *
jc_canon (const char *text, size_t len)
{
  json_tokener *tok = json_tokener_new ();
  /* one more byte: json-c ends a number at the end of its input only when told what follows */
  g_autofree char *copy = g_strndup (text, len);
  json_object *o = json_tokener_parse_ex (tok, copy, (int) len + 1);
  g_assert_cmpint (json_tokener_get_error (tok), ==, json_tokener_success);
  char *out = g_strdup (o ? json_object_to_json_string_ext (o, JSON_C_TO_STRING_PLAIN) : "null");
  json_object_put (o);
  json_tokener_free (tok);
  return out;
}

/* One envelope's JSON (js, len bytes): when the scanner reads it, json-c must read the same. Returns whether the
   scanner read it. */
static gboolean
check_envelope (const char *js, size_t len)
{
  fx_trace_envelope e;
  if (!fx_trace_scan_envelope (js, js + len, &e))
    return FALSE;
  json_tokener *tok = json_tokener_new ();
  json_object *env = json_tokener_parse_ex (tok, js, (int) len);
  g_assert_cmpint (json_tokener_get_error (tok), ==, json_tokener_success);
  g_assert_nonnull (env);
  g_assert_cmpint (json_object_get_type (env), ==, json_type_object);
  /* as the importer checks: only spaces after what json-c used */
  for (size_t i = json_tokener_get_parse_end (tok); i < len; i++)
    g_assert_cmpint (js[i], ==, ' ');
  json_tokener_free (tok);

  const char *kind = NULL;
  json_object *meta = NULL;
  json_object_object_foreach (env, key, val)
    if (!fx_trace_is_context_key (key, strlen (key)))
      {
        kind = key;
        meta = val;
        break;
      }
  g_autofree char *skind = span_dup (e.kind);
  g_assert_cmpstr (skind, ==, kind);
  g_autofree char *jmeta = g_strdup (meta ? json_object_to_json_string_ext (meta, JSON_C_TO_STRING_PLAIN) : "null");
  g_autofree char *smeta = jc_canon (e.meta.p, e.meta.len);
  g_assert_cmpstr (smeta, ==, jmeta);
  g_assert_cmpint (e.compiled_autograd_id, ==, jc_int (env, "compiled_autograd_id", -1));
  g_assert_cmpint (e.frame_id, ==, jc_int (env, "frame_id", -1));
  g_assert_cmpint (e.frame_compile_id, ==, jc_int (env, "frame_compile_id", -1));
  g_assert_cmpint (e.attempt, ==, jc_int (env, "attempt", 0));
  g_autofree char *want = e.has_want ? span_dup (e.want) : NULL;
  g_assert_cmpstr (want, ==, jc_str (env, "has_payload"));

  /* an artifact's name and encoding, as the importer reads them */
  fx_json_field f[2] = { { "name" }, { "encoding" } };
  const char *end;
  if (strcmp (kind, "artifact") == 0 && e.meta_type == '{'
      && fx_json_scan_fields (e.meta.p, e.meta.p + e.meta.len, f, 2, &end))
    {
      g_assert_true (end == e.meta.p + e.meta.len);
      g_autofree char *name = f[0].type == 's' ? span_dup (f[0].value) : NULL;
      g_autofree char *enc = f[1].type == 's' ? span_dup (f[1].value) : NULL;
      g_assert_cmpstr (name, ==, jc_str (meta, "name"));
      g_assert_cmpstr (enc, ==, jc_str (meta, "encoding"));
    }
  json_object_put (env);
  return TRUE;
}

/* A chromium event payload (NUL-terminated): name, ph and ts as json-c reads them. Returns whether the scanner
   read it. */
static gboolean
check_event (const char *payload)
{
  fx_json_field f[3] = { { "name" }, { "ph" }, { "ts" } };
  const char *end;
  if (!fx_json_scan_fields (payload, payload + strlen (payload), f, 3, &end))
    return FALSE;
  json_object *ev = json_tokener_parse (payload);
  g_assert_nonnull (ev);
  g_assert_cmpint (json_object_get_type (ev), ==, json_type_object);
  g_autofree char *name = f[0].type == 's' ? span_dup (f[0].value) : NULL;
  g_autofree char *ph = f[1].type == 's' ? span_dup (f[1].value) : NULL;
  g_assert_cmpstr (name, ==, jc_str (ev, "name"));
  g_assert_cmpstr (ph, ==, jc_str (ev, "ph"));
  json_object *ts;
  if (json_object_object_get_ex (ev, "ts", &ts) && ts
      && (json_object_get_type (ts) == json_type_double || json_object_get_type (ts) == json_type_int))
    {
      g_assert_true (f[2].type == 'i' || f[2].type == 'd' || f[2].type == 'I');
      /* read as the importer reads it */
      double v = f[2].type == 'i' ? (double) g_ascii_strtoll (f[2].value.p, NULL, 10) : g_ascii_strtod (f[2].value.p, NULL);
      if (f[2].type != 'I')
        {
          g_assert_cmpfloat (v, ==, json_object_get_double (ts));
          g_assert_cmpint (signbit (v), ==, signbit (json_object_get_double (ts)));
        }
    }
  else
    g_assert_false (f[2].type == 'i' || f[2].type == 'd' || f[2].type == 'I');
  json_object_put (ev);
  return TRUE;
}

static void
collect_logs (const char *dir, GPtrArray *out)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        collect_logs (path, out);
      else if (g_str_has_suffix (name, ".log"))
        g_ptr_array_add (out, g_steal_pointer (&path));
    }
}

static void
test_fixtures (void)
{
  const char *fixtures = g_getenv ("FX_FIXTURES");
  g_autofree char *root = g_build_filename (fixtures ? fixtures : "tests/fixtures", "traces", NULL);
  g_autoptr (GPtrArray) logs = g_ptr_array_new_with_free_func (g_free);
  collect_logs (root, logs);
  g_assert_cmpuint (logs->len, >=, 5);
  size_t envelopes = 0, scanned = 0, events = 0, events_scanned = 0;
  for (guint i = 0; i < logs->len; i++)
    {
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (logs->pdata[i], &text, NULL, NULL));
      g_auto (GStrv) lines = fx_test_split_lines (text);
      g_autoptr (GString) payload = g_string_new (NULL);
      gboolean in_event = FALSE, any = FALSE;
      for (size_t k = 0;; k++)
        {
          const char *line = lines[k];
          if (line && line[0] == '\t')
            {
              if (in_event)
                {
                  if (any)
                    g_string_append_c (payload, '\n');
                  g_string_append (payload, line + 1);
                  any = TRUE;
                }
              continue;
            }
          if (in_event && any)
            {
              events++;
              events_scanned += check_event (payload->str);
            }
          in_event = FALSE;
          if (!line)
            break;
          const char *js = strstr (line, "] {");
          if (!js)
            continue;
          js += 2;
          envelopes++;
          if (check_envelope (js, strlen (js)))
            {
              scanned++;
              in_event = g_str_has_prefix (js, "{\"chromium_event\"");
              g_string_truncate (payload, 0);
              any = FALSE;
            }
        }
    }
  g_test_message ("%zu envelopes (%zu read by the scanner), %zu chromium events (%zu)", envelopes, scanned, events,
                  events_scanned);
  /* the fixtures are what PyTorch writes: the scanner must read nearly all of them, or it saves nothing */
  g_assert_cmpuint (scanned * 100, >=, envelopes * 99);
  g_assert_cmpuint (events_scanned, ==, events);
  g_assert_cmpuint (events, >, 1000);
}

/* Crafted envelopes: the scanner declines or agrees with json-c (check_envelope asserts the agreement). */
static void
test_crafted (void)
{
  static const struct
  {
    const char *js;
    gboolean read; /* whether the scanner must read it */
  } cases[] = {
    { "{\"artifact\": {\"name\": \"x\", \"encoding\": \"string\"}, \"frame_id\": 3, \"attempt\": 0}", TRUE },
    { "{\"frame_id\": 3, \"chromium_event\": {}, \"has_payload\": \"0123456789abcdef0123456789abcdef\"}", TRUE },
    { "{\"str\": [\"a\\\"b\", 4]}", TRUE },
    { "{\"x\": 1}   ", TRUE },
    { "{\"x\": 1}\t", TRUE },
    { "{\"x\": null, \"frame_id\": -0}", TRUE },
    { "{\"x\": 1, \"frame_id\": -5, \"frame_compile_id\": 1000000001, \"attempt\": 1.0}", TRUE },
    { "{\"x\": 1, \"frame_id\": 123456789012345678901234}", TRUE },
    { "{\"x\": 1, \"frame_id\": \"3\", \"has_payload\": 5}", TRUE },
    { "{\"x\": [1, 2.5e3, -0.0, true, false, null, {\"a\": [[]]}, \"\\u00e9\"]}", TRUE },
    { "{\"x\": 1} y", FALSE },
    { "{\"x\": 1, \"x\": 2}", FALSE },
    { "{\"frame_id\": 1, \"frame_id\": 2, \"x\": 0}", FALSE },
    { "{\"x\\u0041\": 1}", FALSE },
    { "{\"x\": 1, \"has_payload\": \"a\\nb\"}", FALSE },
    { "{\"x\": 01}", FALSE },
    { "{\"x\": 1,}", FALSE },
    { "{'x': 1}", FALSE },
    { "{\"x\": NaN}", FALSE },
    { "{\"x\": \"tab\there\"}", FALSE },
    { "{\"x\": \"\\ud83d\\ude00\"}", FALSE },
    { "{\"x\": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", FALSE },
    { "{\"frame_id\": 1}", FALSE },
    { "{}", FALSE },
    { "[1]", FALSE },
    { "{\"x\": 1", FALSE },
    { "{\"x\": \"1}", FALSE },
    { "{\"x\": 1e9999}", FALSE },
    { "{\"x\": -}", FALSE },
    { "{\"x\": 1.}", FALSE },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s", cases[i].js);
      g_assert_cmpint (check_envelope (cases[i].js, strlen (cases[i].js)), ==, cases[i].read);
    }
  static const char *const events[] = {
    "{\"name\": \"a\", \"ph\": \"B\", \"ts\": 12.5}",
    "{\"name\": \"a\", \"ts\": -0}",
    "{\"name\": \"a\", \"ts\": 1795279277403060429}",
    "{\"name\": \"a\", \"ts\": 17952792774030604290}",
    "{\"name\": 5, \"ph\": null, \"ts\": \"1\"}",
    "\n{\n\"ts\": 1e3,\n\"args\": {\"k\": [1, {\"v\": \"\\\"\"}]}\n}\n",
  };
  for (size_t i = 0; i < G_N_ELEMENTS (events); i++)
    g_assert_true (check_event (events[i]));
  g_assert_false (check_event ("{\"name\": \"a\\u0041\"}"));
  g_assert_false (check_event ("{\"name\": \"a\", \"name\": \"b\"}"));
}

/* fx_json_scan_members on an object's text: when it reads it, every member is json-c's, in json-c's order, strings
   unescaped to json-c's characters and other values to json-c's text. Returns whether it read the object. */
static gboolean
check_members (const char *js)
{
  enum { CAP = 512 };
  fx_json_member *m = g_new (fx_json_member, CAP);
  size_t n = 0;
  const char *end = NULL;
  gboolean read = fx_json_scan_members (js, js + strlen (js), m, CAP, &n, &end);
  if (read)
    {
      json_object *obj = json_tokener_parse (js);
      g_assert_nonnull (obj);
      g_assert_cmpint (json_object_get_type (obj), ==, json_type_object);
      g_assert_cmpint (json_object_object_length (obj), ==, (int) n);
      size_t i = 0;
      json_object_object_foreach (obj, key, val)
        {
          g_autofree char *k = span_dup (m[i].key);
          g_assert_cmpstr (k, ==, key);
          if (m[i].type == 's')
            {
              g_assert_cmpint (json_object_get_type (val), ==, json_type_string);
              fx_buf b;
              fx_buf_init (&b);
              fx_json_unescape (m[i].value, &b);
              g_assert_cmpuint (b.len, ==, (size_t) json_object_get_string_len (val));
              g_assert_true (b.len == 0 || memcmp (b.data, json_object_get_string (val), b.len) == 0);
              g_assert_true (m[i].escaped == (memchr (m[i].value.p, '\\', m[i].value.len) != NULL));
              fx_buf_free (&b);
            }
          else
            {
              g_autofree char *mine = jc_canon (m[i].value.p, m[i].value.len);
              g_assert_cmpstr (mine, ==, val ? json_object_to_json_string_ext (val, JSON_C_TO_STRING_PLAIN) : "null");
            }
          i++;
        }
      json_object_put (obj);
    }
  g_free (m);
  return read;
}

/* compilation_metrics objects of the fixtures (about a hundred members each) and crafted ones. */
static void
test_members (void)
{
  const char *fixtures = g_getenv ("FX_FIXTURES");
  g_autofree char *root = g_build_filename (fixtures ? fixtures : "tests/fixtures", "traces", NULL);
  g_autoptr (GPtrArray) logs = g_ptr_array_new_with_free_func (g_free);
  collect_logs (root, logs);
  size_t objects = 0, read = 0;
  for (guint i = 0; i < logs->len; i++)
    {
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (logs->pdata[i], &text, NULL, NULL));
      g_auto (GStrv) lines = fx_test_split_lines (text);
      for (size_t k = 0; lines[k]; k++)
        {
          const char *js = strstr (lines[k], "] {\"compilation_metrics\": {");
          if (!js)
            continue;
          json_object *env = json_tokener_parse (js + 2), *metrics = NULL;
          if (env && json_object_object_get_ex (env, "compilation_metrics", &metrics) && metrics)
            {
              const char *mt = json_object_to_json_string_ext (metrics, JSON_C_TO_STRING_SPACED);
              objects++;
              read += check_members (mt);
              /* and the text as PyTorch wrote it: the member's span within the envelope line */
              const char *start = js + 2 + strlen ("{\"compilation_metrics\": ");
              fx_json_member one[512];
              size_t n1 = 0;
              const char *obj_end = NULL;
              if (fx_json_scan_members (start, start + strlen (start), one, 512, &n1, &obj_end))
                {
                  g_autofree char *obj_text = g_strndup (start, (gsize) (obj_end - start));
                  g_assert_true (check_members (obj_text));
                }
            }
          json_object_put (env);
        }
    }
  g_test_message ("%zu compilation_metrics objects, %zu read by the scanner", objects, read);
  g_assert_cmpuint (objects, >=, 5);
  g_assert_cmpuint (read, ==, objects);

  static const struct
  {
    const char *js;
    gboolean read;
  } cases[] = {
    { "{\"a\": \"q\\\"u\\\\b\\/s\\n\\t\\b\\f\\r\\u00e9\\u4e2d\\u0041\"}", TRUE },
    { "{\"i\": -0, \"j\": 1.50, \"k\": 1E+2, \"l\": 123456789012345678901, \"m\": -0.0}", TRUE },
    { "{\"a\": [1, \"x/y\", {\"k\": [true, null]}], \"o\": {\"b\": 2}, \"t\": true, \"f\": false, \"n\": null}", TRUE },
    { "{\"e\": \"\", \"z\": \"\\u0000after\"}", TRUE },
    { "{}", TRUE },
    { "{\"x\": 2, \"x\": 3}", FALSE },
    { "{\"s\": \"\\ud83d\\ude00\"}", FALSE },
    { "{\"k\\u0041\": 1}", FALSE },
    { "{\"x\": 1,}", FALSE },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s", cases[i].js);
      g_assert_cmpint (check_members (cases[i].js), ==, cases[i].read);
    }
}

/* fx_json_write_plain against json-c's own PLAIN writing of what it read: every envelope and its record's metadata
   in the fixtures (create_symbol, guards, describe_*, ...), and crafted values. Returns whether it wrote. */
static gboolean
check_plain (const char *js, size_t len)
{
  fx_buf b;
  fx_buf_init (&b);
  gboolean wrote = fx_json_write_plain ((fx_json_span) { js, len }, &b);
  if (wrote)
    {
      g_autofree char *want = jc_canon (js, len);
      g_assert_cmpstr (b.data, ==, want);
    }
  else
    g_assert_cmpuint (b.len, ==, 0);
  fx_buf_free (&b);
  return wrote;
}

static void
test_plain (void)
{
  const char *fixtures = g_getenv ("FX_FIXTURES");
  g_autofree char *root = g_build_filename (fixtures ? fixtures : "tests/fixtures", "traces", NULL);
  g_autoptr (GPtrArray) logs = g_ptr_array_new_with_free_func (g_free);
  collect_logs (root, logs);
  size_t metas = 0, written = 0, envelopes = 0;
  for (guint i = 0; i < logs->len; i++)
    {
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (logs->pdata[i], &text, NULL, NULL));
      g_auto (GStrv) lines = fx_test_split_lines (text);
      for (size_t k = 0; lines[k]; k++)
        {
          const char *js = strstr (lines[k], "] {");
          fx_trace_envelope e;
          if (!js || !fx_trace_scan_envelope (js + 2, js + 2 + strlen (js + 2), &e))
            continue;
          envelopes += check_plain (js + 2, strlen (js + 2));
          metas++;
          written += check_plain (e.meta.p, e.meta.len);
          /* every array element too (stack frames, sizes) */
          fx_json_member items[256];
          size_t n = 0;
          if (e.meta_type == '[' && fx_json_scan_array (e.meta.p, e.meta.p + e.meta.len, items, 256, &n))
            {
              g_autofree char *copy = g_strndup (e.meta.p, e.meta.len);
              json_object *arr = json_tokener_parse (copy);
              g_assert_cmpint (json_object_array_length (arr), ==, (int) n);
              json_object_put (arr);
            }
        }
    }
  g_test_message ("%zu envelopes and their metadata, %zu and %zu written", metas, envelopes, written);
  g_assert_cmpuint (metas, >, 1000);
  g_assert_cmpuint (envelopes * 100, >=, metas * 99);
  g_assert_cmpuint (written * 100, >=, metas * 99);

  static const struct
  {
    const char *js;
    gboolean wrote;
  } cases[] = {
    { " {\"a/b\": \"x/y\\u0001\\u001f\\b\\f\\n\\r\\t\\\"\\\\\\u00e9\", \"c\": [ ], \"d\": { }} ", TRUE },
    { "[1, -0, 2.50, 1E+2, -0.0, true, false, null, [[]], {\"k\": {\"j\": [1]}}]", TRUE },
    { "\"\\u0000x\"", TRUE },
    { "-12", TRUE },
    { "{\"a\": {\"b\": 1, \"b\": 2}}", FALSE },
    { "[123456789012345678901]", FALSE },
    { "[\"\\ud83d\\ude00\"]", FALSE },
    { "[1,]", FALSE },
    { "{\"a\": 1} x", FALSE },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s", cases[i].js);
      g_assert_cmpint (check_plain (cases[i].js, strlen (cases[i].js)), ==, cases[i].wrote);
    }
  fx_json_member items[4];
  size_t n = 0;
  static const char arr[] = "[1, \"a\\nb\", {\"x\": 2}]";
  g_assert_true (fx_json_scan_array (arr, arr + strlen (arr), items, 4, &n));
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpint (items[0].type, ==, 'i');
  g_assert_cmpint (items[1].type, ==, 's');
  g_assert_true (items[1].escaped);
  g_assert_cmpint (items[2].type, ==, '{');
  g_assert_false (fx_json_scan_array (arr, arr + strlen (arr), items, 2, &n));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace-scan/fixtures", test_fixtures);
  g_test_add_func ("/trace-scan/crafted", test_crafted);
  g_test_add_func ("/trace-scan/members", test_members);
  g_test_add_func ("/trace-scan/plain", test_plain);
  return g_test_run ();
}
