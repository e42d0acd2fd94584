/* fx-capture-store.c: writes a capture record (fxcapture's JSON: frames, compiles, graphs, guards, guard failures,
   graph breaks, backend runs) into the workspace store, as the importers record theirs. */
#include "fx/capture.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

static const char *
jstr (json_object *o, const char *key)
{
  json_object *v;
  if (!json_object_object_get_ex (o, key, &v) || json_object_get_type (v) != json_type_string)
    return NULL;
  return json_object_get_string (v);
}

static int
jint (json_object *o, const char *key, int dflt)
{
  json_object *v;
  if (!json_object_object_get_ex (o, key, &v) || json_object_get_type (v) != json_type_int)
    return dflt;
  return json_object_get_int (v);
}

/* FNV-1a over the record text: re-importing the same record is a no-op. */
static void
hash_hex (const char *text, size_t len, char out[17])
{
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < len; i++)
    {
      h ^= (unsigned char) text[i];
      h *= 1099511628211ULL;
    }
  snprintf (out, 17, "%016llx", (unsigned long long) h);
}

static fx_status
put_compile (fx_store *store, fx_id source, json_object *r, fx_compile_status status, fx_id *out, fx_diag *diag)
{
  fx_store_frame fr = { 0 };
  fr.frame = jint (r, "frame_id", 0);
  fr.function = jstr (r, "name");
  fr.file = jstr (r, "filename");
  fr.line = jint (r, "firstlineno", 0);
  fx_id frame_id;
  fx_status st = fx_store_put_frame (store, source, &fr, &frame_id, diag);
  if (st != FX_OK)
    return st;
  fx_store_compile c = { 0 };
  c.source = source;
  c.frame = frame_id;
  c.cid = FX_COMPILE_ID_NONE;
  c.cid.frame = fr.frame;
  c.cid.frame_compile = jint (r, "compile_id", 0);
  c.cid.attempt = 0;
  c.function = fr.function;
  c.file = fr.file;
  c.line = fr.line;
  c.status = status;
  c.compile_time_s = -1;
  if (status == FX_COMPILE_FAILED)
    {
      c.fail_type = "skipped frame";
      c.fail_reason = jstr (r, "reason");
    }
  return fx_store_put_compile (store, &c, out, diag);
}

fx_status
fx_capture_record_to_store (const char *json_text, size_t len, const char *program, fx_store *store,
                            fx_diag *diag)
{
  json_tokener *tok = json_tokener_new ();
  json_object *root = json_tokener_parse_ex (tok, json_text, (int) len);
  enum json_tokener_error jerr = json_tokener_get_error (tok);
  json_tokener_free (tok);
  json_object *records;
  if (!root || jerr != json_tokener_success || !json_object_object_get_ex (root, "records", &records)
      || json_object_get_type (records) != json_type_array)
    {
      if (root)
        json_object_put (root);
      return fx_diag_set (diag, FX_ERR_PARSE, "not a capture record (expected {\"records\": [...]})");
    }
  fx_status st = fx_store_begin (store, diag);
  if (st != FX_OK)
    {
      json_object_put (root);
      return st;
    }
  char hash[17];
  hash_hex (json_text, len, hash);
  fx_store_source src = { 0 };
  src.path = program;
  src.kind = "capture";
  src.hash = hash;
  src.size = (int64_t) len;
  fx_id source;
  bool exists = false;
  st = fx_store_add_source (store, &src, &source, &exists, diag);
  size_t n = json_object_array_length (records);
  for (size_t i = 0; st == FX_OK && !exists && i < n; i++)
    {
      json_object *r = json_object_array_get_idx (records, i);
      const char *kind = jstr (r, "kind");
      if (!kind)
        continue;
      fx_id compile = 0;
      if (strcmp (kind, "compile") == 0)
        {
          json_object *gb;
          bool has_break = json_object_object_get_ex (r, "graph_break", &gb) && gb
                           && json_object_get_type (gb) == json_type_object;
          st = put_compile (store, source, r, has_break ? FX_COMPILE_GRAPH_BREAK : FX_COMPILE_OK, &compile, diag);
          if (st != FX_OK)
            break;
          const char *gjson = jstr (r, "graph_json");
          fx_graph *g = NULL;
          fx_diag gd;
          fx_diag_clear (&gd);
          if (gjson && fx_graph_from_json (gjson, strlen (gjson), &g, &gd) != FX_OK)
            g = NULL;
          fx_store_graph row = { 0 };
          row.compile = compile;
          row.stage = FX_STAGE_DYNAMO;
          row.name = "dynamo_output_graph";
          row.text = jstr (r, "graph_readable");
          row.json = g ? gjson : NULL;
          row.parse_error = g ? NULL : gd.message;
          row.n_nodes = g ? (int) g->n_nodes : -1;
          st = fx_store_add_graph (store, &row, g, NULL, diag);
          if (g)
            fx_graph_free (g);
          json_object *guards;
          if (st == FX_OK && json_object_object_get_ex (r, "guard_list", &guards)
              && json_object_get_type (guards) == json_type_array)
            for (size_t k = 0; st == FX_OK && k < json_object_array_length (guards); k++)
              {
                json_object *gr = json_object_array_get_idx (guards, k);
                fx_store_guard grow = { 0 };
                grow.compile = compile;
                grow.kind = jstr (gr, "kind");
                grow.source = jstr (gr, "source");
                grow.code = jstr (gr, "code");
                grow.depth = grow.source ? 2 : 1;
                st = fx_store_add_guard (store, &grow, diag);
              }
          if (st == FX_OK)
            {
              fx_store_run run = { 0 };
              run.compile = compile;
              run.backend = jstr (r, "backend");
              run.device = NULL;
              run.compile_ms = -1;
              run.run_ms_median = run.run_ms_min = run.run_ms_max = -1;
              st = fx_store_add_run (store, &run, NULL, diag);
            }
        }
      else if (strcmp (kind, "skip") == 0)
        st = put_compile (store, source, r, FX_COMPILE_FAILED, &compile, diag);
      else if (strcmp (kind, "frame") == 0)
        st = put_compile (store, source, r, FX_COMPILE_OK, &compile, diag);
      else if (strcmp (kind, "recompile") == 0)
        {
          st = put_compile (store, source, r, FX_COMPILE_UNKNOWN, &compile, diag);
          json_object *reasons;
          if (st == FX_OK && json_object_object_get_ex (r, "reasons", &reasons)
              && json_object_get_type (reasons) == json_type_array)
            for (size_t k = 0; st == FX_OK && k < json_object_array_length (reasons); k++)
              {
                const char *reason = json_object_get_string (json_object_array_get_idx (reasons, k));
                char failed[32] = "";
                const char *colon = reason ? strchr (reason, ':') : NULL;
                if (colon && colon - reason < (long) sizeof failed)
                  memcpy (failed, reason, colon - reason);
                fx_store_guard_failure gf = { 0 };
                gf.compile = compile;
                gf.failed = failed;
                gf.reason = reason;
                st = fx_store_add_guard_failure (store, &gf, diag);
              }
        }
      else if (strcmp (kind, "graph_break") == 0)
        {
          st = put_compile (store, source, r, FX_COMPILE_GRAPH_BREAK, &compile, diag);
          if (st == FX_OK)
            {
              const char *reason = jstr (r, "reason");
              char first[512] = "";
              if (reason)
                {
                  size_t l = strcspn (reason, "\n");
                  snprintf (first, sizeof first, "%.*s", (int) (l < sizeof first - 1 ? l : sizeof first - 1), reason);
                }
              fx_store_graph_break b = { 0 };
              b.compile = compile;
              b.reason = first;
              b.explanation = reason;
              b.user_stack = jstr (r, "user_stack");
              b.file = jstr (r, "filename");
              b.line = jint (r, "lineno", 0);
              st = fx_store_add_graph_break (store, &b, diag);
            }
        }
    }
  if (st == FX_OK)
    st = fx_store_update_statuses (store, diag);
  if (st == FX_OK)
    st = fx_store_commit (store, diag);
  else
    fx_store_rollback (store);
  json_object_put (root);
  return st;
}
