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

/* The compile row of a record, with what the record says about it. */
static fx_status
put_compile (fx_store *store, int64_t input, json_object *r, int64_t *row, fx_diag *diag)
{
  fx_compile_id cid = { -1, jint (r, "frame_id", 0), jint (r, "compile_id", 0), 0 };
  fx_status st = fx_store_ensure_compile (store, input, &cid, row, diag);
  if (st != FX_OK)
    return st;
  fx_store_compile_update u;
  fx_store_compile_update_init (&u);
  u.function = jstr (r, "name");
  u.file = jstr (r, "filename");
  if (jint (r, "firstlineno", -1) >= 0)
    u.line = jint (r, "firstlineno", -1);
  return fx_store_update_compile (store, *row, &u, diag);
}

static fx_status
update_compile (fx_store *store, int64_t row, const fx_store_compile_update *u, fx_diag *diag)
{
  return fx_store_update_compile (store, row, u, diag);
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
  /* the record text's FNV-1a: re-importing the same record is a no-op */
  char hash[17];
  snprintf (hash, sizeof hash, "%016llx", (unsigned long long) fx_hash_bytes (json_text, len, 0));
  int64_t existing = 0, input = 0;
  st = fx_store_find_input (store, hash, &existing, diag);
  if (st == FX_OK && !existing)
    st = fx_store_add_input (store, program, "capture", hash, (int64_t) len, &input, diag);
  size_t n = json_object_array_length (records);
  for (size_t i = 0; st == FX_OK && !existing && i < n; i++)
    {
      json_object *r = json_object_array_get_idx (records, i);
      const char *kind = jstr (r, "kind");
      int64_t row = 0;
      if (!kind || (strcmp (kind, "compile") && strcmp (kind, "skip") && strcmp (kind, "frame")
                    && strcmp (kind, "recompile") && strcmp (kind, "graph_break")))
        continue;
      st = put_compile (store, input, r, &row, diag);
      if (st != FX_OK)
        break;
      fx_store_compile_update u;
      fx_store_compile_update_init (&u);
      if (strcmp (kind, "compile") == 0)
        {
          json_object *gb;
          u.has_graph_break = json_object_object_get_ex (r, "graph_break", &gb) && gb
                              && json_object_get_type (gb) == json_type_object;
          u.graph_op_count = jint (r, "n_ops", -1);
          const char *gjson = jstr (r, "graph_json");
          fx_graph *g = NULL;
          fx_diag gd;
          fx_diag_clear (&gd);
          if (gjson && fx_graph_from_json (gjson, strlen (gjson), &g, &gd) != FX_OK)
            g = NULL;
          int64_t gid = 0;
          st = fx_store_add_graph (store, row, "dynamo", g, jstr (r, "graph_readable"), &gid, diag);
          if (g)
            fx_graph_free (g);
          json_object *guards;
          int n_guards = 0;
          if (st == FX_OK && json_object_object_get_ex (r, "guard_list", &guards)
              && json_object_get_type (guards) == json_type_array)
            for (size_t k = 0; st == FX_OK && k < json_object_array_length (guards); k++, n_guards++)
              {
                json_object *gr = json_object_array_get_idx (guards, k);
                st = fx_store_add_guard (store, row, jstr (gr, "kind"), jstr (gr, "source"), jstr (gr, "code"), NULL,
                                         diag);
              }
          u.guard_count = n_guards;
          if (st == FX_OK)
            {
              /* the backend call that compiled this graph */
              fx_store_run run = { 0 };
              run.backend = jstr (r, "backend");
              run.compile_ms = run.run_ms_median = run.run_ms_min = run.run_ms_max = -1;
              run.accuracy = -1;
              run.peak_bytes = -1;
              run.n_kernels = -1;
              /* An engine backend that could not compile the graph ran it eagerly: say why. */
              run.error = jstr (r, "backend_error");
              json_object *kernels;
              if (json_object_object_get_ex (r, "kernels", &kernels) && json_object_get_type (kernels) == json_type_array)
                run.n_kernels = (int) json_object_array_length (kernels);
              st = fx_store_add_run (store, gid, &run, NULL, diag);
              /* The kernels the engine's backend generated for this graph, as imported Inductor kernels are. */
              for (size_t k = 0; st == FX_OK && run.n_kernels > 0 && k < (size_t) run.n_kernels; k++)
                {
                  json_object *kr = json_object_array_get_idx (kernels, k);
                  if (json_object_get_type (kr) != json_type_array || json_object_array_length (kr) < 3)
                    continue;
                  const char *kname = json_object_get_string (json_object_array_get_idx (kr, 0));
                  const char *kkind = json_object_get_string (json_object_array_get_idx (kr, 1));
                  json_object *knodes = json_object_array_get_idx (kr, 2);
                  fx_buf nodes;
                  fx_buf_init (&nodes);
                  for (size_t j = 0; json_object_get_type (knodes) == json_type_array
                                     && j < json_object_array_length (knodes); j++)
                    fx_buf_printf (&nodes, "%s%s", j ? ", " : "",
                                   json_object_get_string (json_object_array_get_idx (knodes, j)));
                  if (strcmp (kkind ? kkind : "", "interpreter") != 0)
                    {
                      st = fx_store_add_kernel (store, row, (int) k, (int) k, kname ? kname : "?", kkind ? kkind : "?",
                                                "cpu", NULL, nodes.data ? nodes.data : "", NULL, diag);
                      if (st == FX_OK && strcmp (kkind ? kkind : "", "extern") != 0)
                        st = fx_store_add_fusion_group (store, row, kname ? kname : "?", nodes.data ? nodes.data : "",
                                                        NULL, diag);
                    }
                  fx_buf_free (&nodes);
                }
            }
        }
      else if (strcmp (kind, "skip") == 0)
        {
          u.fail_type = "skipped frame";
          u.fail_reason = jstr (r, "reason");
        }
      else if (strcmp (kind, "recompile") == 0)
        {
          u.has_recompile = 1;
          json_object *reasons;
          if (json_object_object_get_ex (r, "reasons", &reasons) && json_object_get_type (reasons) == json_type_array)
            for (size_t k = 0; st == FX_OK && k < json_object_array_length (reasons); k++)
              {
                const char *reason = json_object_get_string (json_object_array_get_idx (reasons, k));
                char failed[32] = "";
                const char *colon = reason ? strchr (reason, ':') : NULL;
                if (colon && colon - reason < (long) sizeof failed)
                  memcpy (failed, reason, colon - reason);
                /* the store keeps the failed compile id apart: "0/0: reason" -> "0/0", "reason" */
                st = fx_store_add_guard_failure (store, row, failed, colon ? colon + 2 : reason, NULL, diag);
              }
        }
      else if (strcmp (kind, "graph_break") == 0)
        {
          u.has_graph_break = 1;
          const char *reason = jstr (r, "reason");
          char first[512] = "";
          if (reason)
            {
              size_t l = strcspn (reason, "\n");
              snprintf (first, sizeof first, "%.*s", (int) (l < sizeof first - 1 ? l : sizeof first - 1), reason);
            }
          st = fx_store_add_graph_break (store, row, first, reason, jstr (r, "user_stack"), reason, diag);
        }
      if (st == FX_OK)
        st = update_compile (store, row, &u, diag);
    }
  if (st == FX_OK)
    st = fx_store_commit (store, diag);
  else
    fx_store_rollback (store);
  json_object_put (root);
  return st;
}
