/* fuzz-scan.c: libFuzzer target for the importer's JSON scanner (engine/formats/fx-trace-scan.c) against json-c:
   whatever the scanner reads (an object's members, an array's items, json-c's PLAIN text of a value), json-c must
   read the same. The scanner may decline anything; it may never disagree. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx-trace-scan.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
disagree (const char *what, const char *mine, const char *theirs)
{
  fprintf (stderr, "%s: scanner '%s', json-c '%s'\n", what, mine, theirs);
  abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char *text = malloc (size + 1);
  if (!text)
    return 0;
  memcpy (text, data, size);
  text[size] = 0;
  const char *end = text + strlen (text); /* json-c stops at a NUL too */

  fx_buf plain;
  fx_buf_init (&plain);
  bool wrote = fx_json_write_plain ((fx_json_span) { text, (size_t) (end - text) }, &plain);
  json_tokener *tok = json_tokener_new ();
  json_object *obj = json_tokener_parse_ex (tok, text, (int) (end - text) + 1);
  bool parsed = json_tokener_get_error (tok) == json_tokener_success;
  if (wrote)
    {
      if (!parsed)
        disagree ("write_plain", plain.data, "(refused)");
      const char *theirs = obj ? json_object_to_json_string_ext (obj, JSON_C_TO_STRING_PLAIN) : "null";
      /* json-c parses a prefix and stops; write_plain needs the whole text: compare only when json-c used it all */
      if ((size_t) json_tokener_get_parse_end (tok) >= (size_t) (end - text) && strcmp (plain.data, theirs) != 0)
        disagree ("write_plain", plain.data, theirs);
    }

  fx_json_member m[64];
  size_t n = 0;
  const char *obj_end = NULL;
  if (fx_json_scan_members (text, end, m, 64, &n, &obj_end) && parsed && obj
      && json_object_get_type (obj) == json_type_object && (size_t) json_tokener_get_parse_end (tok) == (size_t) (obj_end - text))
    {
      if ((size_t) json_object_object_length (obj) != n)
        disagree ("members", "count", "count");
      size_t i = 0;
      json_object_object_foreach (obj, key, val)
        {
          if (m[i].key.len != strlen (key) || memcmp (m[i].key.p, key, m[i].key.len) != 0)
            disagree ("member key", "", key);
          if (m[i].type == 's')
            {
              fx_buf s;
              fx_buf_init (&s);
              fx_json_unescape (m[i].value, &s);
              if (!val || json_object_get_type (val) != json_type_string
                  || (size_t) json_object_get_string_len (val) != s.len
                  || (s.len && memcmp (s.data, json_object_get_string (val), s.len) != 0))
                disagree ("member string", s.data ? s.data : "", val ? json_object_get_string (val) : "null");
              fx_buf_free (&s);
            }
          i++;
        }
    }
  json_object_put (obj);
  json_tokener_free (tok);
  fx_buf_free (&plain);
  free (text);
  return 0;
}
