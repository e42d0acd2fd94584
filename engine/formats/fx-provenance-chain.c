/* fx-provenance-chain.c: the provenance mappings a compile keeps (the raw inductor_provenance_tracking_node_mappings
   artifact: preToPost, postToPre, cppCodeToPost, postToCppCode) read as a chain from a pre-grad node, a post-grad
   node or a kernel, with the lines of the stored wrapper and kernel code where each kernel is launched and defined,
   as tlparse's provenance highlighter links them. */
#include "fx/provenance.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAPPINGS "inductor_provenance_tracking_node_mappings"

const char *
fx_prov_side_name (fx_prov_side side)
{
  switch (side)
    {
    case FX_PROV_PRE_GRAD:
      return "pre_grad";
    case FX_PROV_POST_GRAD:
      return "post_grad";
    case FX_PROV_KERNEL:
      return "kernel";
    default:
      return "?";
    }
}

/* A list of distinct strings from the arena, grown by doubling. */
typedef struct
{
  const char **items;
  size_t n, cap;
} str_list;

static void
list_add (str_list *l, fx_arena *arena, const char *s)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcmp (l->items[i], s) == 0)
      return;
  if (l->n == l->cap)
    {
      size_t cap = l->cap ? l->cap * 2 : 8;
      const char **items = fx_arena_alloc (arena, cap * sizeof *items);
      if (l->n)
        memcpy (items, l->items, l->n * sizeof *items);
      l->items = items, l->cap = cap;
    }
  l->items[l->n++] = fx_arena_strdup (arena, s);
}

/* Adds the strings of obj[key] (an array of strings) to l; whether obj has key. */
static bool
add_members (json_object *obj, const char *key, str_list *l, fx_arena *arena)
{
  json_object *arr = NULL;
  if (!obj || !json_object_object_get_ex (obj, key, &arr) || !arr || json_object_get_type (arr) != json_type_array)
    return false;
  for (size_t i = 0; i < json_object_array_length (arr); i++)
    {
      json_object *v = json_object_array_get_idx (arr, i);
      if (v && json_object_get_type (v) == json_type_string)
        list_add (l, arena, json_object_get_string (v));
    }
  return true;
}

/* The keys of obj, in order. */
static str_list
keys_of (json_object *obj, fx_arena *arena)
{
  str_list l = { 0 };
  if (!obj)
    return l;
  struct json_object_iterator it = json_object_iter_begin (obj), end = json_object_iter_end (obj);
  for (; !json_object_iter_equal (&it, &end); json_object_iter_next (&it))
    list_add (&l, arena, json_object_iter_peek_name (&it));
  return l;
}

static json_object *
member (json_object *obj, const char *key)
{
  json_object *v = NULL;
  if (!obj || !json_object_object_get_ex (obj, key, &v) || !v || json_object_get_type (v) != json_type_object)
    return NULL;
  return v;
}

/* The artifacts of the compile, and among them its mappings (the last one stored). */
static fx_status
load (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_kv **arts, size_t *n, const char **mappings,
      fx_diag *diag)
{
  fx_status st = fx_store_list_artifacts (store, compile_row, arena, arts, n, diag);
  *mappings = NULL;
  for (size_t i = 0; i < *n && st == FX_OK; i++)
    if (strcmp ((*arts)[i].key, MAPPINGS) == 0 && (*arts)[i].value)
      *mappings = (*arts)[i].value;
  return st;
}

fx_status
fx_provenance_has (fx_store *store, int64_t compile_row, bool *has, fx_diag *diag)
{
  fx_arena *arena = fx_arena_new ();
  fx_store_kv *arts = NULL;
  size_t n = 0;
  const char *mappings = NULL;
  fx_status st = load (store, compile_row, arena, &arts, &n, &mappings, diag);
  *has = st == FX_OK && mappings != NULL;
  fx_arena_free (arena);
  return st;
}

/* The name of a stored code and its text: inductor_output_code as stored; a graph_dump record is its header line
   ({"name": "inductor_aot_wrapper_code", ...}) then the code. NULL name when the artifact is no code. */
static void
code_of (const fx_store_kv *art, fx_arena *arena, const char **name, const char **text)
{
  *name = *text = NULL;
  if (!art->value)
    return;
  if (strcmp (art->key, "inductor_output_code") == 0)
    {
      *name = art->key;
      *text = art->value;
      return;
    }
  if (strcmp (art->key, "graph_dump") != 0)
    return;
  const char *nl = strchr (art->value, '\n');
  if (!nl)
    return;
  json_object *meta = json_tokener_parse (fx_arena_strndup (arena, art->value, (size_t) (nl - art->value)));
  json_object *v = NULL;
  if (meta && json_object_get_type (meta) == json_type_object && json_object_object_get_ex (meta, "name", &v) && v
      && json_object_get_type (v) == json_type_string)
    {
      *name = fx_arena_strdup (arena, json_object_get_string (v));
      *text = nl + 1;
    }
  json_object_put (meta);
}

fx_status
fx_provenance_code (fx_store *store, int64_t compile_row, const char *code, fx_arena *arena, const char **text,
                    fx_diag *diag)
{
  fx_store_kv *arts = NULL;
  size_t n = 0;
  const char *mappings = NULL;
  *text = NULL;
  fx_status st = load (store, compile_row, arena, &arts, &n, &mappings, diag);
  for (size_t i = 0; i < n && st == FX_OK && !*text; i++)
    {
      const char *name, *t;
      code_of (&arts[i], arena, &name, &t);
      if (name && strcmp (name, code) == 0)
        *text = t;
    }
  if (st == FX_OK && !*text)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "no code '%s' is stored for this compile", code);
  return st;
}

/* Whether line (up to eol) holds word as a whole identifier right before one of the characters in after. */
static bool
has_ident (const char *line, const char *eol, const char *word, const char *after)
{
  size_t n = strlen (word);
  for (const char *p = line; p + n <= eol; p++)
    {
      if (memcmp (p, word, n) != 0)
        continue;
      bool start = p == line || !(p[-1] == '_' || (p[-1] >= '0' && p[-1] <= '9') || ((p[-1] | 32) >= 'a'
                                                                                    && (p[-1] | 32) <= 'z'));
      if (start && p + n < eol && strchr (after, p[n]))
        return true;
    }
  return false;
}

/* A definition of kernel on this line: `def NAME(`, `void NAME(`, `NAME = async_compile.`. */
static bool
defines (const char *line, const char *eol, const char *name)
{
  size_t n = strlen (name);
  const char *p = line;
  while (p < eol && (*p == ' ' || *p == '\t'))
    p++;
  if ((size_t) (eol - p) > n + 4 && memcmp (p, name, n) == 0 && strncmp (p + n, " = async_compile", 16) == 0)
    return true;
  for (const char *q = p; q + n < eol; q++)
    {
      if (memcmp (q, name, n) != 0 || q[n] != '(')
        continue;
      /* `extern "C"  void  NAME(`: the word before the name, over any blanks */
      const char *w = q;
      while (w > p && (w[-1] == ' ' || w[-1] == '\t'))
        w--;
      if (w == q)
        continue;
      if ((w - p >= 3 && memcmp (w - 3, "def", 3) == 0) || (w - p >= 4 && memcmp (w - 4, "void", 4) == 0))
        return true;
    }
  return false;
}

/* The line (1-based) that defines name in text; 0: none. */
static int
find_def (const char *text, const char *name)
{
  int line = 1;
  for (const char *p = text; *p; line++)
    {
      const char *eol = strchr (p, '\n');
      if (!eol)
        eol = p + strlen (p);
      if (defines (p, eol, name))
        return line;
      p = *eol ? eol + 1 : eol;
    }
  return 0;
}

/* Whether the line calls name (`name(`, `name.run(`, AOTInductor's `call_name(`) rather than defining or declaring
   it. */
static bool
calls (const char *line, const char *eol, const char *name)
{
  char wrapped[512];
  snprintf (wrapped, sizeof wrapped, "call_%s", name);
  if (!has_ident (line, eol, name, "(.") && !has_ident (line, eol, wrapped, "("))
    return false;
  return !defines (line, eol, name) && !defines (line, eol, wrapped)
         && !memmem (line, (size_t) (eol - line), "async_compile", 13);
}

/* The line (1-based) that launches k in text: the call after its "[Provenance debug handles] name:handle" marker
   (a few declarations may come between; the marker itself when no call follows), else the first call; 0: none. */
static int
find_launch (const char *text, const fx_prov_kernel *k)
{
  char marker[512];
  int line = 1, marked = 0, first_call = 0;
  if (k->handle >= 0)
    snprintf (marker, sizeof marker, "[Provenance debug handles] %s:%d", k->name, k->handle);
  else
    marker[0] = '\0';
  for (const char *p = text; *p; line++)
    {
      const char *eol = strchr (p, '\n');
      if (!eol)
        eol = p + strlen (p);
      if (marker[0] && !marked && memmem (p, (size_t) (eol - p), marker, strlen (marker)))
        marked = line;
      else if (marked && line - marked > 8)
        return marked;
      else if (calls (p, eol, k->name))
        {
          if (marked)
            return line;
          if (!first_call)
            first_call = line;
        }
      p = *eol ? eol + 1 : eol;
    }
  return marked ? marked : first_call;
}

/* Fills the launch and definition lines of k from the stored codes: launches in the wrapper codes first, definitions
   in the kernel codes first. */
static void
find_lines (fx_prov_kernel *k, const char **names, const char **texts, size_t n_codes)
{
  for (int pass = 0; pass < 2; pass++)
    for (size_t c = 0; c < n_codes; c++)
      {
        bool kernel_code = strstr (names[c], "kernel") != NULL;
        int line;
        if (!k->launch_line && kernel_code == (pass == 1) && (line = find_launch (texts[c], k)) > 0)
          k->launch_code = names[c], k->launch_line = line;
        if (!k->def_line && kernel_code == (pass == 0) && (line = find_def (texts[c], k->name)) > 0)
          k->def_code = names[c], k->def_line = line;
      }
}

static fx_prov_kernel
parse_kernel_key (const char *key, fx_arena *arena)
{
  fx_prov_kernel k = { .handle = -1 };
  const char *colon = strrchr (key, ':');
  char *end = NULL;
  long h = colon ? strtol (colon + 1, &end, 10) : -1;
  if (colon && end != colon + 1 && *end == '\0' && h >= 0 && h < 1000000000)
    {
      k.name = fx_arena_strndup (arena, key, (size_t) (colon - key));
      k.handle = (int) h;
    }
  else
    k.name = fx_arena_strdup (arena, key);
  return k;
}

/* Whether key ("name:handle") is what the user asked for: "name:handle" exactly, or "name" with any handle. */
static bool
kernel_matches (const char *key, const char *want)
{
  if (strcmp (key, want) == 0)
    return true;
  size_t n = strlen (want);
  return strncmp (key, want, n) == 0 && key[n] == ':' && !strchr (want, ':');
}

struct fx_provenance_map
{
  const char *mappings;   /* the JSON text */
  const char **names, **texts;
  size_t n_codes;
};

fx_status
fx_provenance_load (fx_store *store, int64_t compile_row, fx_arena *arena, fx_provenance_map **out, fx_diag *diag)
{
  fx_store_kv *arts = NULL;
  size_t n_arts = 0;
  const char *mappings = NULL;
  *out = NULL;
  fx_status st = load (store, compile_row, arena, &arts, &n_arts, &mappings, diag);
  if (st != FX_OK || !mappings)
    return st;
  fx_provenance_map *map = fx_arena_alloc (arena, sizeof *map);
  map->mappings = mappings;
  map->names = fx_arena_alloc (arena, (n_arts + 1) * sizeof *map->names);
  map->texts = fx_arena_alloc (arena, (n_arts + 1) * sizeof *map->texts);
  for (size_t i = 0; i < n_arts; i++)
    {
      code_of (&arts[i], arena, &map->names[map->n_codes], &map->texts[map->n_codes]);
      map->n_codes += map->names[map->n_codes] != NULL;
    }
  *out = map;
  return FX_OK;
}

const char *
fx_provenance_map_code (const fx_provenance_map *map, const char *code)
{
  for (size_t i = 0; map && i < map->n_codes; i++)
    if (strcmp (map->names[i], code) == 0)
      return map->texts[i];
  return NULL;
}

fx_status
fx_provenance_chain (fx_store *store, int64_t compile_row, const char *node, fx_arena *arena, fx_provenance *out,
                     fx_diag *diag)
{
  fx_provenance_map *map = NULL;
  memset (out, 0, sizeof *out);
  fx_status st = fx_provenance_load (store, compile_row, arena, &map, diag);
  if (st != FX_OK)
    return st;
  if (!map)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "this compile has no provenance mappings (" MAPPINGS "): the trace "
                        "was made without torch._inductor.config.trace.provenance_tracking_level = 1");
  return fx_provenance_map_chain (map, node, arena, out, diag);
}

fx_status
fx_provenance_map_chain (const fx_provenance_map *map, const char *node, fx_arena *arena, fx_provenance *out,
                         fx_diag *diag)
{
  memset (out, 0, sizeof *out);
  json_object *root = json_tokener_parse (map->mappings);
  if (!root || json_object_get_type (root) != json_type_object)
    {
      json_object_put (root);
      return fx_diag_set (diag, FX_ERR_PARSE, "provenance mappings: not a JSON object");
    }
  json_object *pre_to_post = member (root, "preToPost"), *post_to_pre = member (root, "postToPre");
  json_object *code_to_post = member (root, "cppCodeToPost"), *post_to_code = member (root, "postToCppCode");

  /* Which end the name is. */
  const char *name = node;
  int side = -1;
  if (strncmp (node, "pre_grad:", 9) == 0)
    side = FX_PROV_PRE_GRAD, name = node + 9;
  else if (strncmp (node, "post_grad:", 10) == 0)
    side = FX_PROV_POST_GRAD, name = node + 10;
  else if (strncmp (node, "kernel:", 7) == 0)
    side = FX_PROV_KERNEL, name = node + 7;
  json_object *dummy = NULL;
  bool in_pre = pre_to_post && json_object_object_get_ex (pre_to_post, name, &dummy);
  bool in_post = (post_to_pre && json_object_object_get_ex (post_to_pre, name, &dummy))
                 || (post_to_code && json_object_object_get_ex (post_to_code, name, &dummy));
  str_list code_keys = keys_of (code_to_post, arena);
  bool in_kernel = false;
  for (size_t i = 0; i < code_keys.n; i++)
    in_kernel |= kernel_matches (code_keys.items[i], name);
  if (side < 0)
    side = in_pre ? FX_PROV_PRE_GRAD : in_post ? FX_PROV_POST_GRAD : in_kernel ? FX_PROV_KERNEL : -1;
  if (side < 0 || (side == FX_PROV_PRE_GRAD && !in_pre) || (side == FX_PROV_POST_GRAD && !in_post)
      || (side == FX_PROV_KERNEL && !in_kernel))
    {
      /* Name what there is, so the next try hits. */
      fx_buf known;
      fx_buf_init (&known);
      str_list pre_keys = keys_of (pre_to_post, arena);
      for (size_t i = 0; i < pre_keys.n; i++)
        fx_buf_printf (&known, "%s%s", known.len ? ", " : "", pre_keys.items[i]);
      fx_status e = fx_diag_set (diag, FX_ERR_NOT_FOUND, "no %s '%s' in the provenance mappings (pre-grad nodes: %s)",
                                 side < 0 ? "node or kernel" : side == FX_PROV_KERNEL ? "kernel"
                                 : side == FX_PROV_PRE_GRAD ? "pre-grad node" : "post-grad node",
                                 name, known.len ? known.data : "none");
      fx_buf_free (&known);
      json_object_put (root);
      return e;
    }

  str_list pre = { 0 }, post = { 0 }, kernels = { 0 };
  out->side = (fx_prov_side) side;
  out->node = fx_arena_strdup (arena, name);
  switch (out->side)
    {
    case FX_PROV_PRE_GRAD:
      list_add (&pre, arena, name);
      add_members (pre_to_post, name, &post, arena);
      for (size_t i = 0; i < post.n; i++)
        add_members (post_to_code, post.items[i], &kernels, arena);
      break;
    case FX_PROV_POST_GRAD:
      list_add (&post, arena, name);
      add_members (post_to_pre, name, &pre, arena);
      add_members (post_to_code, name, &kernels, arena);
      break;
    case FX_PROV_KERNEL:
    default:
      for (size_t i = 0; i < code_keys.n; i++)
        if (kernel_matches (code_keys.items[i], name))
          {
            list_add (&kernels, arena, code_keys.items[i]);
            add_members (code_to_post, code_keys.items[i], &post, arena);
          }
      for (size_t i = 0; i < post.n; i++)
        add_members (post_to_pre, post.items[i], &pre, arena);
      break;
    }
  json_object_put (root);

  out->kernels = fx_arena_alloc (arena, (kernels.n + 1) * sizeof *out->kernels);
  for (size_t i = 0; i < kernels.n; i++)
    {
      out->kernels[i] = parse_kernel_key (kernels.items[i], arena);
      find_lines (&out->kernels[i], map->names, map->texts, map->n_codes);
    }
  out->n_kernels = kernels.n;
  out->pre = pre.items, out->n_pre = pre.n;
  out->post = post.items, out->n_post = post.n;
  return FX_OK;
}
