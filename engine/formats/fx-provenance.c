/* fx-provenance.c: Inductor's provenance mappings (inductor_provenance_tracking_node_mappings: kernel -> post-grad
   nodes -> pre-grad nodes) into provenance rows, so a kernel lists the user-level nodes it computes. */
#include "fx/importers.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* Appends item to a ", "-separated list unless it is there already. */
static void
add_unique (fx_buf *list, const char *item)
{
  size_t n = strlen (item);
  for (const char *p = list->len ? list->data : NULL; p;)
    {
      const char *e = strstr (p, ", ");
      size_t len = e ? (size_t) (e - p) : strlen (p);
      if (len == n && memcmp (p, item, n) == 0)
        return;
      p = e ? e + 2 : NULL;
    }
  if (list->len)
    fx_buf_puts (list, ", ");
  fx_buf_puts (list, item);
}

static json_object *
object_member (json_object *obj, const char *key)
{
  json_object *v = NULL;
  if (!json_object_object_get_ex (obj, key, &v) || !v || json_object_get_type (v) != json_type_object)
    return NULL;
  return v;
}

fx_status
fx_import_provenance (fx_store *store, int64_t compile_row, const char *json, size_t len, int64_t *n_rows,
                      fx_diag *diag)
{
  if (n_rows)
    *n_rows = 0;
  json_tokener *tok = json_tokener_new ();
  json_object *root = json_tokener_parse_ex (tok, json, (int) (len > 0x7fffffff ? 0x7fffffff : len));
  enum json_tokener_error jerr = json_tokener_get_error (tok);
  json_tokener_free (tok);
  if (!root || jerr != json_tokener_success || json_object_get_type (root) != json_type_object)
    {
      json_object_put (root);
      return fx_diag_set (diag, FX_ERR_PARSE, "provenance mappings: not a JSON object (%s)",
                          jerr != json_tokener_success ? json_tokener_error_desc (jerr) : "wrong type");
    }
  json_object *code_to_post = object_member (root, "cppCodeToPost");
  json_object *post_to_pre = object_member (root, "postToPre");
  json_object *version = NULL, *member = NULL;
  bool versioned = json_object_object_get_ex (root, "version", &version) && version
                   && (json_object_get_type (version) == json_type_double
                       || json_object_get_type (version) == json_type_int);
  if (!code_to_post && (!versioned || json_object_object_get_ex (root, "cppCodeToPost", &member)))
    {
      json_object_put (root);
      return fx_diag_set (diag, FX_ERR_PARSE, member ? "provenance mappings: cppCodeToPost is not an object"
                                              : "provenance mappings: no cppCodeToPost object");
    }
  if (!code_to_post)
    {
      /* {"version": 2.0} alone: a graph without kernels to map */
      json_object_put (root);
      return FX_OK;
    }
  fx_status st = FX_OK;
  fx_buf post, pre;
  fx_buf_init (&post);
  fx_buf_init (&pre);
  json_object_object_foreach (code_to_post, key, nodes)
    {
      if (st != FX_OK)
        break;
      if (!nodes || json_object_get_type (nodes) != json_type_array)
        continue;
      /* "triton_poi_fused_addmm_gelu_1:3": the kernel and its debug handle (one per launch). */
      char *name = strdup (key);
      int handle = -1;
      char *colon = strrchr (name, ':');
      if (colon && colon[1] && strspn (colon + 1, "0123456789") == strlen (colon + 1) && strlen (colon + 1) < 9)
        {
          handle = atoi (colon + 1);
          *colon = 0;
        }
      fx_buf_reset (&post);
      fx_buf_reset (&pre);
      for (size_t i = 0; i < json_object_array_length (nodes); i++)
        {
          json_object *item = json_object_array_get_idx (nodes, i);
          if (!item || json_object_get_type (item) != json_type_string)
            continue;
          const char *node = json_object_get_string (item);
          add_unique (&post, node);
          json_object *pres = NULL;
          if (post_to_pre && json_object_object_get_ex (post_to_pre, node, &pres) && pres
              && json_object_get_type (pres) == json_type_array)
            for (size_t k = 0; k < json_object_array_length (pres); k++)
              {
                json_object *p = json_object_array_get_idx (pres, k);
                if (p && json_object_get_type (p) == json_type_string)
                  add_unique (&pre, json_object_get_string (p));
              }
        }
      if (store)
        st = fx_store_add_provenance (store, compile_row, name, handle, post.len ? post.data : NULL,
                                      pre.len ? pre.data : NULL, diag);
      if (st == FX_OK && n_rows)
        (*n_rows)++;
      free (name);
    }
  fx_buf_free (&post);
  fx_buf_free (&pre);
  json_object_put (root);
  return st;
}
