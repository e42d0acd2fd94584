/* fx-minify-checkpoint.c: the minifier's checkpoint file, so a killed run resumes where it stopped: one JSON header
   line (failure, counters) followed by the current graph in the canonical JSON form. */
#include "fx/minify.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECKPOINT_FORMAT "fxwb-minify-checkpoint"
#define CHECKPOINT_VERSION 1

fx_status
fx_minify_checkpoint_write (const char *path, const fx_minify_checkpoint *cp, fx_diag *diag)
{
  fx_buf out;
  fx_buf_init (&out);
  fx_buf_printf (&out, "{\"format\": \"%s\", \"version\": %d, \"kind\": ", CHECKPOINT_FORMAT, CHECKPOINT_VERSION);
  fx_buf_put_json_str (&out, fx_failure_kind_name (cp->failure.kind));
  fx_buf_puts (&out, ", \"message\": ");
  fx_buf_put_json_str (&out, cp->failure.message);
  fx_buf_printf (&out, ", \"fail_on\": %u, \"candidates\": %zu, \"elapsed_s\": %.3f, \"start_nodes\": %zu, "
                       "\"done\": %s}\n",
                 cp->fail_on, cp->candidates, cp->elapsed_s, cp->start_nodes, cp->done ? "true" : "false");
  fx_graph_to_json (cp->graph, &out);
  fx_buf_putc (&out, '\n');
  size_t plen = strlen (path);
  char *tmp = malloc (plen + 8);
  snprintf (tmp, plen + 8, "%s.tmp", path);
  fx_status st = fx_file_write (tmp, out.data, out.len, diag);
  if (st == FX_OK && rename (tmp, path) != 0)
    st = fx_diag_set (diag, FX_ERR_IO, "cannot write the checkpoint %s: %s", path, strerror (errno));
  if (st != FX_OK)
    remove (tmp);
  free (tmp);
  fx_buf_free (&out);
  return st;
}

fx_status
fx_minify_checkpoint_read (const char *path, fx_minify_checkpoint *cp, fx_diag *diag)
{
  memset (cp, 0, sizeof *cp);
  char *text = NULL;
  size_t len = 0;
  fx_status st = fx_file_read (path, &text, &len, diag);
  if (st != FX_OK)
    return st;
  char *eol = memchr (text, '\n', len);
  json_object *head = NULL;
  if (eol)
    {
      *eol = '\0';
      head = json_tokener_parse (text);
    }
  json_object *v;
  if (head == NULL || !json_object_is_type (head, json_type_object)
      || !json_object_object_get_ex (head, "format", &v) || strcmp (json_object_get_string (v), CHECKPOINT_FORMAT) != 0)
    {
      if (head)
        json_object_put (head);
      free (text);
      return fx_diag_set (diag, FX_ERR_PARSE, "%s is not a minifier checkpoint", path);
    }
  if (json_object_object_get_ex (head, "version", &v) && json_object_get_int (v) > CHECKPOINT_VERSION)
    {
      json_object_put (head);
      free (text);
      return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "%s: checkpoint version %d is newer than this fxwb reads (%d)",
                          path, json_object_get_int (v), CHECKPOINT_VERSION);
    }
  cp->failure.kind = FX_FAILURE_NONE;
  if (json_object_object_get_ex (head, "kind", &v))
    for (int k = 0; k < FX_FAILURE_KIND_COUNT; k++)
      if (strcmp (json_object_get_string (v), fx_failure_kind_name ((fx_failure_kind) k)) == 0)
        cp->failure.kind = (fx_failure_kind) k;
  if (json_object_object_get_ex (head, "message", &v))
    snprintf (cp->failure.message, sizeof cp->failure.message, "%s", json_object_get_string (v));
  if (json_object_object_get_ex (head, "fail_on", &v))
    cp->fail_on = (unsigned) json_object_get_int64 (v);
  if (json_object_object_get_ex (head, "candidates", &v))
    cp->candidates = (size_t) json_object_get_int64 (v);
  if (json_object_object_get_ex (head, "elapsed_s", &v))
    cp->elapsed_s = json_object_get_double (v);
  if (json_object_object_get_ex (head, "start_nodes", &v))
    cp->start_nodes = (size_t) json_object_get_int64 (v);
  if (json_object_object_get_ex (head, "done", &v))
    cp->done = json_object_get_boolean (v);
  json_object_put (head);
  const char *g = eol + 1;
  st = fx_graph_from_json (g, len - (size_t) (g - text), &cp->graph, diag);
  free (text);
  if (st == FX_OK && cp->failure.kind == FX_FAILURE_NONE)
    {
      fx_graph_free (cp->graph);
      cp->graph = NULL;
      st = fx_diag_set (diag, FX_ERR_PARSE, "%s: the checkpoint names no failure", path);
    }
  return st;
}
