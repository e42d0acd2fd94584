/* fx-pt2-import.c: the .pt2 (torch.export.save) importer: the zip layout, models/<name>.json (the serialized
   ExportedProgram) rebuilt as an FX graph with its signature and node metadata; weights are referenced, not loaded. */
#include "fx/importers.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "fx-import-util.h"
#include "fx-md5.h"

typedef struct
{
  fx_graph *graph;
  fx_diag *diag;
  const char *entry;
  fx_status st;
  json_object *tensor_values;
} builder;

static json_object *
get (json_object *obj, const char *key)
{
  json_object *v = NULL;
  if (!obj || json_object_get_type (obj) != json_type_object || !json_object_object_get_ex (obj, key, &v))
    return NULL;
  return v;
}

static fx_status fail (builder *b, const char *fmt, ...) FX_PRINTF (2, 3);

/* Records the first error, prefixed with the archive entry. */
static fx_status
fail (builder *b, const char *fmt, ...)
{
  if (b->st != FX_OK)
    return b->st;
  char msg[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  b->st = fx_diag_set (b->diag, FX_ERR_PARSE, "%s: %s", b->entry, msg);
  return b->st;
}

static fx_node *
node_ref (builder *b, json_object *tensor)
{
  json_object *name = get (tensor, "name");
  const char *s = name && json_object_get_type (name) == json_type_string ? json_object_get_string (name) : NULL;
  fx_node *n = s ? fx_graph_find_node (b->graph, s) : NULL;
  if (!n)
    fail (b, "a node input names '%s', which no earlier node defines", s ? s : "?");
  return n;
}

/* One serialized Argument ({"as_tensor": ...}, {"as_int": 1}, ...) as an fx_arg; sequences from the graph arena. */
static fx_arg
convert_arg (builder *b, json_object *arg)
{
  if (!arg || json_object_get_type (arg) != json_type_object)
    {
      fail (b, "an argument is not an object");
      return fx_arg_none ();
    }
  json_object_object_foreach (arg, kind, v)
    {
      fx_arena *arena = b->graph->arena;
      if (strcmp (kind, "as_none") == 0)
        return fx_arg_none ();
      if (strcmp (kind, "as_tensor") == 0)
        {
          fx_node *n = node_ref (b, v);
          return n ? fx_arg_node (n) : fx_arg_none ();
        }
      if (strcmp (kind, "as_int") == 0)
        return fx_arg_int (json_object_get_int64 (v));
      if (strcmp (kind, "as_float") == 0)
        return fx_arg_float (json_object_get_double (v));
      if (strcmp (kind, "as_bool") == 0)
        return fx_arg_bool (json_object_get_boolean (v));
      if (strcmp (kind, "as_string") == 0)
        return fx_arg_str (fx_arena_strdup (arena, json_object_get_string (v)));
      if (strcmp (kind, "as_scalar_type") == 0)
        return fx_arg_dtype (fx_dtype_from_export_id ((int) json_object_get_int (v)));
      if (strcmp (kind, "as_sym_int") == 0 || strcmp (kind, "as_sym_float") == 0 || strcmp (kind, "as_sym_bool") == 0)
        {
          json_object *name = get (v, "as_name");
          if (name)
            {
              fx_node *n = fx_graph_find_node (b->graph, json_object_get_string (name));
              return n ? fx_arg_node (n) : fx_arg_sym (fx_arena_strdup (arena, json_object_get_string (name)));
            }
          json_object *c = get (v, "as_int");
          return c ? fx_arg_int (json_object_get_int64 (c)) : fx_arg_sym (fx_arena_strdup (arena, "?"));
        }
      if (json_object_get_type (v) == json_type_array
          && (strcmp (kind, "as_ints") == 0 || strcmp (kind, "as_floats") == 0 || strcmp (kind, "as_bools") == 0
              || strcmp (kind, "as_strings") == 0 || strcmp (kind, "as_tensors") == 0
              || strcmp (kind, "as_sym_ints") == 0 || strcmp (kind, "as_optional_tensors") == 0))
        {
          size_t n = json_object_array_length (v);
          fx_arg *items = fx_arena_alloc (b->graph->arena, (n ? n : 1) * sizeof *items);
          for (size_t i = 0; i < n; i++)
            {
              json_object *item = json_object_array_get_idx (v, i);
              if (strcmp (kind, "as_ints") == 0)
                items[i] = fx_arg_int (json_object_get_int64 (item));
              else if (strcmp (kind, "as_floats") == 0)
                items[i] = fx_arg_float (json_object_get_double (item));
              else if (strcmp (kind, "as_bools") == 0)
                items[i] = fx_arg_bool (json_object_get_boolean (item));
              else if (strcmp (kind, "as_strings") == 0)
                items[i] = fx_arg_str (fx_arena_strdup (arena, json_object_get_string (item)));
              else if (strcmp (kind, "as_tensors") == 0)
                {
                  fx_node *nd = node_ref (b, item);
                  items[i] = nd ? fx_arg_node (nd) : fx_arg_none ();
                }
              else
                items[i] = convert_arg (b, item);
            }
          return fx_arg_list (items, n);
        }
      if (strcmp (kind, "as_device") == 0)
        {
          const char *type = json_object_get_string (get (v, "type"));
          json_object *index = get (v, "index");
          fx_device dev = { 0 };
          dev.type = type && strcmp (type, "cuda") == 0 ? FX_DEVICE_CUDA
                     : type && strcmp (type, "meta") == 0 ? FX_DEVICE_META : FX_DEVICE_CPU;
          dev.index = index && json_object_get_type (index) == json_type_int ? json_object_get_int (index) : -1;
          return fx_arg_device (dev);
        }
      fail (b, "argument kind '%s' is not supported", kind);
      return fx_arg_none ();
    }
  fail (b, "an empty argument");
  return fx_arg_none ();
}

/* tensor_values[name] -> meta.val through its print_readable annotation ("f32[8, 16][16, 1]cpu"). */
static void
set_val (builder *b, fx_node *node)
{
  json_object *tv = get (b->tensor_values, node->name);
  if (!tv)
    return;
  fx_buf ann;
  fx_buf_init (&ann);
  json_object *dt = get (tv, "dtype");
  fx_buf_puts (&ann, fx_dtype_abbr (fx_dtype_from_export_id (dt ? json_object_get_int (dt) : 0)));
  const char *keys[2] = { "sizes", "strides" };
  for (int k = 0; k < 2; k++)
    {
      json_object *dims = get (tv, keys[k]);
      fx_buf_putc (&ann, '[');
      for (size_t i = 0; dims && i < json_object_array_length (dims); i++)
        {
          json_object *d = json_object_array_get_idx (dims, i);
          json_object *c = get (d, "as_int");
          json_object *e = get (d, "as_expr");
          json_object *ex = e ? get (e, "expr_str") : NULL;
          if (i)
            fx_buf_puts (&ann, ", ");
          if (c)
            fx_buf_printf (&ann, "%lld", (long long) json_object_get_int64 (c));
          else
            fx_buf_puts (&ann, ex ? json_object_get_string (ex) : "?");
        }
      fx_buf_putc (&ann, ']');
    }
  json_object *dev = get (tv, "device");
  const char *type = dev ? json_object_get_string (get (dev, "type")) : NULL;
  json_object *index = dev ? get (dev, "index") : NULL;
  if (type)
    {
      fx_buf_puts (&ann, type);
      if (index && json_object_get_type (index) == json_type_int)
        fx_buf_printf (&ann, ":%d", json_object_get_int (index));
    }
  /* Only a fully parsed annotation is kept (a failed parse may leave the value half-filled). */
  fx_val val;
  memset (&val, 0, sizeof val);
  if (fx_val_parse_annotation (ann.data, b->graph->arena, &val))
    node->meta.val = val;
  fx_buf_free (&ann);
}

/* "key,path,type;key,path,type" (torch/_export/serde/serialize.py serialize_nn_module_stack) */
static void
set_meta (builder *b, fx_node *node, json_object *md)
{
  fx_arena *arena = b->graph->arena;
  const char *st = json_object_get_string (get (md, "stack_trace"));
  if (st)
    node->meta.stack_trace = fx_arena_strdup (arena, st);
  const char *nms = json_object_get_string (get (md, "nn_module_stack"));
  if (nms && *nms)
    {
      size_t n = 1;
      for (const char *p = nms; *p; p++)
        n += *p == ';';
      node->meta.nn_module_stack = fx_arena_alloc (arena, n * sizeof *node->meta.nn_module_stack);
      size_t k = 0;
      for (const char *p = nms; *p && k < n;)
        {
          const char *end = strchr (p, ';');
          size_t len = end ? (size_t) (end - p) : strlen (p);
          char *item = fx_arena_strndup (arena, p, len);
          char *c1 = strchr (item, ',');
          char *c2 = c1 ? strrchr (c1 + 1, ',') : NULL;
          if (c1 && c2)
            {
              *c1 = *c2 = 0;
              node->meta.nn_module_stack[k++] = (fx_module_entry) { item, c1 + 1, c2 + 1 };
            }
          p += len + (end ? 1 : 0);
        }
      node->meta.n_nn_module_stack = k;
    }
  const char *tf = json_object_get_string (get (md, "torch_fn"));
  if (tf)
    fx_meta_set_extra (b->graph, &node->meta, "torch_fn", tf);
}

static fx_status
build_graph (builder *b, json_object *gm)
{
  json_object *g = get (gm, "graph");
  json_object *inputs = get (g, "inputs"), *nodes = get (g, "nodes"), *outputs = get (g, "outputs");
  b->tensor_values = get (g, "tensor_values");
  if (!inputs || !nodes || !outputs || json_object_get_type (nodes) != json_type_array
      || json_object_get_type (inputs) != json_type_array || json_object_get_type (outputs) != json_type_array)
    return fail (b, "no graph with inputs, nodes and outputs");
  for (size_t i = 0; i < json_object_array_length (inputs) && b->st == FX_OK; i++)
    {
      json_object *in = json_object_array_get_idx (inputs, i);
      json_object *t = get (in, "as_tensor");
      json_object *sym = get (in, "as_sym_int");
      const char *name = json_object_get_string (get (t ? t : sym ? sym : in, t ? "name" : "as_name"));
      if (!name)
        {
          /* Constant inputs have no node. */
          continue;
        }
      fx_node *p = fx_graph_placeholder (b->graph, name);
      if (strcmp (p->name, name) != 0)
        return fail (b, "input name '%s' is not a usable FX name", name);
      set_val (b, p);
    }
  fx_arena *arena = b->graph->arena;
  for (size_t i = 0; i < json_object_array_length (nodes) && b->st == FX_OK; i++)
    {
      json_object *nd = json_object_array_get_idx (nodes, i);
      const char *target = json_object_get_string (get (nd, "target"));
      const char *name = json_object_get_string (get (nd, "name"));
      json_object *args = get (nd, "inputs");
      if (!target || !args || json_object_get_type (args) != json_type_array)
        return fail (b, "node %s has no target or inputs", name ? name : "?");
      size_t na = json_object_array_length (args);
      fx_arg *pos = fx_arena_alloc (arena, (na ? na : 1) * sizeof *pos);
      fx_kwarg *kw = fx_arena_alloc (arena, (na ? na : 1) * sizeof *kw);
      size_t np = 0, nk = 0;
      for (size_t a = 0; a < na && b->st == FX_OK; a++)
        {
          json_object *in = json_object_array_get_idx (args, a);
          json_object *kind = get (in, "kind");
          fx_arg v = convert_arg (b, get (in, "arg"));
          /* ArgumentKind: 1 positional, 2 keyword (0 unknown: positional, as older files wrote). */
          if (kind && json_object_get_int (kind) == 2)
            kw[nk++] = (fx_kwarg) { fx_arena_strdup (arena, json_object_get_string (get (in, "name"))), v };
          else
            pos[np++] = v;
        }
      if (b->st != FX_OK)
        break;
      fx_target t = strncmp (target, "torch.ops.", 10) == 0 ? fx_target_op (fx_arena_strdup (arena, target + 10))
                    : strncmp (target, "_operator.", 10) == 0 ? fx_target_operator (fx_arena_strdup (arena, target + 10))
                    : fx_target_function (fx_arena_strdup (arena, target));
      json_object *outs = get (nd, "outputs");
      size_t nouts = outs && json_object_get_type (outs) == json_type_array ? json_object_array_length (outs) : 0;
      json_object *single = nouts == 1 ? get (json_object_array_get_idx (outs, 0), "as_tensor") : NULL;
      const char *node_name = single ? json_object_get_string (get (single, "name")) : name;
      fx_node *n = fx_graph_create_node (b->graph, FX_OP_CALL_FUNCTION, t, pos, np, kw, nk, node_name);
      set_meta (b, n, get (nd, "metadata"));
      if (single)
        {
          set_val (b, n);
          continue;
        }
      /* Several outputs: getitem nodes named as the serialized outputs, as torch.export's deserializer does. */
      for (size_t o = 0; o < nouts; o++)
        {
          json_object *ot = get (json_object_array_get_idx (outs, o), "as_tensor");
          if (!ot)
            continue;
          fx_arg gargs[2] = { fx_arg_node (n), fx_arg_int ((int64_t) o) };
          fx_node *gi = fx_graph_create_node (b->graph, FX_OP_CALL_FUNCTION, fx_target_operator ("getitem"), gargs, 2,
                                              NULL, 0, json_object_get_string (get (ot, "name")));
          gi->meta.stack_trace = n->meta.stack_trace;
          gi->meta.nn_module_stack = n->meta.nn_module_stack;
          gi->meta.n_nn_module_stack = n->meta.n_nn_module_stack;
          set_val (b, gi);
        }
    }
  if (b->st != FX_OK)
    return b->st;
  size_t no = json_object_array_length (outputs);
  fx_arg *items = fx_arena_alloc (arena, (no ? no : 1) * sizeof *items);
  for (size_t i = 0; i < no && b->st == FX_OK; i++)
    items[i] = convert_arg (b, json_object_array_get_idx (outputs, i));
  if (b->st == FX_OK)
    fx_graph_output (b->graph, fx_arg_tuple (items, no));
  return b->st;
}

/* A short text of the graph signature, one input or output per line, as ExportedProgram prints it. */
static char *
signature_text (json_object *sig)
{
  fx_buf out;
  fx_buf_init (&out);
  fx_buf_puts (&out, "# inputs\n");
  json_object *ins = get (sig, "input_specs"), *outs = get (sig, "output_specs");
  for (int pass = 0; pass < 2; pass++)
    {
      json_object *list = pass ? outs : ins;
      if (pass)
        fx_buf_puts (&out, "\n# outputs\n");
      for (size_t i = 0; list && json_object_get_type (list) == json_type_array && i < json_object_array_length (list);
           i++)
        {
          json_object *spec = json_object_array_get_idx (list, i);
          if (!spec || json_object_get_type (spec) != json_type_object)
            continue;
          json_object_object_foreach (spec, kind, v)
            {
              json_object *arg = get (v, "arg");
              json_object *t = get (arg, "as_tensor");
              const char *name = json_object_get_string (get (t ? t : arg, "name"));
              char upper[64];
              size_t k = 0;
              for (; kind[k] && k < sizeof upper - 1; k++)
                upper[k] = (char) (kind[k] >= 'a' && kind[k] <= 'z' ? kind[k] - 32 : kind[k]);
              upper[k] = 0;
              fx_buf_printf (&out, "%s: %s", name ? name : "?", upper);
              const char *target = json_object_get_string (get (v, "parameter_name"));
              if (!target)
                target = json_object_get_string (get (v, "buffer_name"));
              if (!target)
                target = json_object_get_string (get (v, "tensor_constant_name"));
              if (target)
                fx_buf_printf (&out, " target='%s'", target);
              json_object *pers = get (v, "persistent");
              if (pers)
                fx_buf_printf (&out, " persistent=%s", json_object_get_boolean (pers) ? "True" : "False");
              fx_buf_putc (&out, '\n');
              break;
            }
        }
    }
  return fx_buf_steal (&out);
}

static char *
read_entry (zip_t *za, zip_int64_t i, size_t *len)
{
  zip_stat_t sb;
  if (zip_stat_index (za, (zip_uint64_t) i, 0, &sb) != 0 || !(sb.valid & ZIP_STAT_SIZE) || sb.size > (1u << 30))
    return NULL;
  zip_file_t *zf = zip_fopen_index (za, (zip_uint64_t) i, 0);
  if (!zf)
    return NULL;
  char *data = malloc (sb.size + 1);
  zip_int64_t got = zip_fread (zf, data, sb.size);
  zip_fclose (zf);
  if (got < 0 || (zip_uint64_t) got != sb.size)
    {
      free (data);
      return NULL;
    }
  data[sb.size] = 0;
  *len = sb.size;
  return data;
}

static fx_status import_archive (fx_store *store, const char *path, zip_t *za, fx_import_stats *stats,
                                 fx_diag *diag);

fx_status
fx_import_pt2 (fx_store *store, const char *path, fx_import_stats *stats, fx_diag *diag)
{
  memset (stats, 0, sizeof *stats);
  fx_status rst = fx_import_check_regular (path, diag);
  if (rst != FX_OK)
    return rst;
  int zerr = 0;
  zip_t *za = zip_open (path, ZIP_RDONLY, &zerr);
  if (!za)
    return fx_diag_set (diag, zerr == ZIP_ER_NOENT || zerr == ZIP_ER_OPEN || zerr == ZIP_ER_READ ? FX_ERR_IO
                        : FX_ERR_PARSE, "%s: not a readable .pt2 (zip) archive (libzip error %d)", path, zerr);
  return import_archive (store, path, za, stats, diag);
}

fx_status
fx_import_pt2_data (fx_store *store, const char *name, const void *data, size_t len, fx_import_stats *stats,
                    fx_diag *diag)
{
  memset (stats, 0, sizeof *stats);
  zip_error_t zerr;
  zip_error_init (&zerr);
  zip_source_t *src = zip_source_buffer_create (data, len, 0, &zerr);
  zip_t *za = src ? zip_open_from_source (src, ZIP_RDONLY, &zerr) : NULL;
  if (!za)
    {
      fx_status st = fx_diag_set (diag, FX_ERR_PARSE, "%s: not a readable .pt2 (zip) archive: %s", name,
                                  zip_error_strerror (&zerr));
      zip_source_free (src);
      zip_error_fini (&zerr);
      return st;
    }
  zip_error_fini (&zerr);
  return import_archive (store, name, za, stats, diag);
}

/* Takes za (discarded at the end). */
static fx_status
import_archive (fx_store *store, const char *path, zip_t *za, fx_import_stats *stats, fx_diag *diag)
{
  zip_int64_t n = zip_get_num_entries (za, 0);
  fx_md5 md5;
  fx_md5_init (&md5);
  fx_status st = FX_OK;
  int64_t input = 0;
  int models = 0;
  /* The hash covers every entry's name and content. */
  for (zip_int64_t i = 0; i < n; i++)
    {
      size_t len = 0;
      const char *name = zip_get_name (za, (zip_uint64_t) i, 0);
      char *data = name ? read_entry (za, i, &len) : NULL;
      if (name)
        fx_md5_update (&md5, name, strlen (name) + 1);
      if (data)
        fx_md5_update (&md5, data, len);
      free (data);
    }
  char hash[33];
  fx_md5_final_hex (&md5, hash);
  if (!fx_import_begin_input (store, hash, stats, &st, diag))
    goto out;
  if ((st = fx_store_add_input (store, path, "pt2", hash, 0, &input, diag)) != FX_OK)
    goto fail;
  for (zip_int64_t i = 0; i < n && st == FX_OK; i++)
    {
      const char *name = zip_get_name (za, (zip_uint64_t) i, 0);
      const char *models_dir = name ? strstr (name, "/models/") : NULL;
      size_t nl = name ? strlen (name) : 0;
      bool is_json = nl > 5 && strcmp (name + nl - 5, ".json") == 0;
      if (!is_json)
        continue;
      size_t len = 0;
      char *data = read_entry (za, i, &len);
      if (!data)
        {
          st = fx_diag_set (diag, FX_ERR_PARSE, "%s: cannot read %s from the archive", path, name);
          break;
        }
      if (!models_dir)
        {
          /* weights/constants configs: kept raw (the weights themselves are only referenced). */
          st = fx_store_add_artifact (store, input, 0, name, "json", data, diag);
          stats->artifacts += st == FX_OK;
          free (data);
          continue;
        }
      json_tokener *tok = json_tokener_new ();
      json_object *ep = json_tokener_parse_ex (tok, data, (int) len);
      bool ok = ep && json_tokener_get_error (tok) == json_tokener_success;
      json_tokener_free (tok);
      json_object *gm = ok ? get (ep, "graph_module") : NULL;
      if (!gm)
        {
          st = fx_diag_set (diag, FX_ERR_PARSE, "%s: %s is not a serialized ExportedProgram (no graph_module)", path,
                            name);
          json_object_put (ep);
          free (data);
          break;
        }
      fx_compile_id cid = { -1, -1, models, 0 };
      int64_t crow = 0;
      if ((st = fx_store_ensure_compile (store, input, &cid, &crow, diag)) == FX_OK)
        {
          fx_store_compile_update u;
          fx_store_compile_update_init (&u);
          u.function = name;
          u.file = path;
          st = fx_store_update_compile (store, crow, &u, diag);
        }
      builder b = { .graph = fx_graph_new (), .diag = diag, .entry = name };
      if (st == FX_OK && build_graph (&b, gm) != FX_OK)
        st = b.st;
      if (st == FX_OK)
        st = fx_store_add_graph (store, crow, "export", b.graph, data, NULL, diag);
      if (st == FX_OK)
        {
          char *sig = signature_text (get (gm, "signature"));
          st = fx_store_add_artifact (store, input, crow, "graph_signature", "string", sig, diag);
          free (sig);
        }
      fx_graph_free (b.graph);
      json_object_put (ep);
      free (data);
      if (st == FX_OK)
        {
          models++;
          stats->compiles++;
          stats->graphs++;
        }
    }
  if (st == FX_OK && models == 0)
    st = fx_diag_set (diag, FX_ERR_PARSE, "%s: no models/*.json in this archive (not a torch.export .pt2)", path);
  if (st == FX_OK)
    st = fx_store_commit (store, diag);
  if (st == FX_OK)
    {
      stats->frames = 1;
      goto out;
    }
fail:
  fx_store_rollback (store);
out:
  zip_discard (za);
  return st;
}
