/* fx-json.c: the canonical, versioned JSON form of a graph (written by hand, read with json-c); it round-trips
   every argument kind, target and metadata field, children, attributes and input specs. */
#include "fx-print-impl.h"

#include <errno.h>
#include <json-c/json.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The form (version 1):
     { "format": "fxwb-graph", "version": 1, "class_name": s, "source_file": s, "pytree_args": s, "pytree_out": b,
       "nodes": [ { "name": s, "op": "call_function", "target": { "kind": "op", "name": "aten.add.Tensor", "repr": s },
                    "args": [arg...], "kwargs": [[name, arg]...], "type": s, "default": arg,
                    "meta": { "val": val, "stack_trace": s, "nn_module_stack": [{ "key", "path", "type" }...],
                              "source_fn_stack": [{ "name", "target" }...], "original_aten": s,
                              "from_node": [{ "name", "target", "graph_id", "pass_name", "action", "from_node" }...],
                              "seq_nr": n, "extra": [[key, text]...] } } ... ],
       "children": [{ "attr": s, "graph": graph }...], "attrs": [{ "name", "kind", "val", "text" }...],
       "inputs": [{ "name", "kind", "val", "storage", "is_leaf", "requires_grad" }...] }
   arg: null, true/false, an integer, a string, or one tagged member: {"node": name}, {"float": "1e-05"|"inf"|"nan"},
   {"dtype": "float32"}, {"device": "cuda:0"}, {"layout": "strided"}, {"memory_format": "contiguous_format"},
   {"list": [...]}, {"tuple": [...]}, {"slice": [start, stop, step]}, {"dict": [[key, value]...]},
   {"ellipsis": true}, {"sym": "s77"}, {"global": "torch.ops.aten.add.Tensor"}.
   val: { "kind": "tensor", "dtype", "sizes": [dim...], "strides", "storage_offset", "device", "requires_grad",
   "subclass" } with dim an integer or { "sym": "s77", "hint": n }; or symint/int { "sym", "value" }, symfloat/float,
   symbool/bool, tuple { "items" }, other { "text" }. Members that hold their default are left out. */
#define FORMAT_NAME "fxwb-graph"

/* ---------------------------------------------------------------- writing */

/* "key": at the start of a member; first tracks the comma */
static void
put_key (fx_buf *out, bool *first, const char *key)
{
  if (!*first)
    fx_buf_puts (out, ", ");
  *first = false;
  fx_buf_put_json_str (out, key);
  fx_buf_puts (out, ": ");
}

static void
put_str_member (fx_buf *out, bool *first, const char *key, const char *value)
{
  if (value == NULL)
    return;
  put_key (out, first, key);
  fx_buf_put_json_str (out, value);
}

static void
put_float (fx_buf *out, double f)
{
  fx_buf tmp;
  fx_buf_init (&tmp);
  fx_py_float_repr (f, &tmp);
  fx_buf_put_json_str (out, tmp.data);
  fx_buf_free (&tmp);
}

static void
put_arg (fx_buf *out, const fx_arg *arg)
{
  switch (arg->kind)
    {
    case FX_ARG_NONE:
      fx_buf_puts (out, "null");
      break;
    case FX_ARG_BOOL:
      fx_buf_puts (out, arg->u.b ? "true" : "false");
      break;
    case FX_ARG_INT:
      fx_buf_put_int (out, arg->u.i);
      break;
    case FX_ARG_STR:
      fx_buf_put_json_str (out, arg->u.s);
      break;
    case FX_ARG_NODE:
      fx_buf_puts (out, "{\"node\": ");
      fx_buf_put_json_str (out, arg->u.node ? arg->u.node->name : "");
      fx_buf_putc (out, '}');
      break;
    case FX_ARG_FLOAT:
      fx_buf_puts (out, "{\"float\": ");
      put_float (out, arg->u.f);
      fx_buf_putc (out, '}');
      break;
    case FX_ARG_DTYPE:
      fx_buf_printf (out, "{\"dtype\": \"%s\"}", fx_dtype_name (arg->u.dtype));
      break;
    case FX_ARG_DEVICE:
      {
        fx_buf_puts (out, "{\"device\": \"");
        fx_device_format (arg->u.device, out);
        fx_buf_puts (out, "\"}");
        break;
      }
    case FX_ARG_LAYOUT:
      fx_buf_printf (out, "{\"layout\": \"%s\"}", fx_layout_name (arg->u.layout));
      break;
    case FX_ARG_MEMFMT:
      fx_buf_printf (out, "{\"memory_format\": \"%s\"}", fx_memfmt_name (arg->u.memfmt));
      break;
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
    case FX_ARG_SLICE:
      fx_buf_printf (out, "{\"%s\": [",
                     arg->kind == FX_ARG_LIST ? "list" : arg->kind == FX_ARG_TUPLE ? "tuple" : "slice");
      for (size_t i = 0; i < arg->u.seq.n; i++)
        {
          if (i > 0)
            fx_buf_puts (out, ", ");
          put_arg (out, &arg->u.seq.items[i]);
        }
      fx_buf_puts (out, "]}");
      break;
    case FX_ARG_DICT:
      fx_buf_puts (out, "{\"dict\": [");
      for (size_t i = 0; i < arg->u.dict.n; i++)
        {
          if (i > 0)
            fx_buf_puts (out, ", ");
          fx_buf_putc (out, '[');
          put_arg (out, &arg->u.dict.items[i].key);
          fx_buf_puts (out, ", ");
          put_arg (out, &arg->u.dict.items[i].value);
          fx_buf_putc (out, ']');
        }
      fx_buf_puts (out, "]}");
      break;
    case FX_ARG_ELLIPSIS:
      fx_buf_puts (out, "{\"ellipsis\": true}");
      break;
    case FX_ARG_SYM:
      fx_buf_puts (out, "{\"sym\": ");
      fx_buf_put_json_str (out, arg->u.s);
      fx_buf_putc (out, '}');
      break;
    case FX_ARG_GLOBAL:
      fx_buf_puts (out, "{\"global\": ");
      fx_buf_put_json_str (out, arg->u.s);
      fx_buf_putc (out, '}');
      break;
    case FX_ARG_KIND_COUNT:
    default:
      fx_buf_puts (out, "null");
      break;
    }
}

static void
put_dim (fx_buf *out, const fx_dim *d)
{
  if (d->sym == NULL)
    fx_buf_put_int (out, d->value);
  else
    {
      fx_buf_puts (out, "{\"sym\": ");
      fx_buf_put_json_str (out, d->sym);
      fx_buf_printf (out, ", \"hint\": %lld}", (long long) d->value);
    }
}

static void
put_dims (fx_buf *out, const fx_dim *dims, int n)
{
  fx_buf_putc (out, '[');
  for (int i = 0; i < n; i++)
    {
      if (i > 0)
        fx_buf_puts (out, ", ");
      put_dim (out, &dims[i]);
    }
  fx_buf_putc (out, ']');
}

static const char *val_kind_names[FX_VAL_KIND_COUNT] = {
  [FX_VAL_NONE] = "none", [FX_VAL_TENSOR] = "tensor", [FX_VAL_SYMINT] = "symint", [FX_VAL_SYMFLOAT] = "symfloat",
  [FX_VAL_SYMBOOL] = "symbool", [FX_VAL_INT] = "int", [FX_VAL_FLOAT] = "float", [FX_VAL_BOOL] = "bool",
  [FX_VAL_TUPLE] = "tuple", [FX_VAL_OTHER] = "other",
};

static void
put_val (fx_buf *out, const fx_val *v)
{
  bool first = true;
  fx_val_kind kind = (unsigned) v->kind < FX_VAL_KIND_COUNT ? v->kind : FX_VAL_NONE;

  fx_buf_putc (out, '{');
  put_str_member (out, &first, "kind", val_kind_names[kind]);
  switch (kind)
    {
    case FX_VAL_TENSOR:
      {
        const fx_tensor_meta *t = &v->tensor;
        put_str_member (out, &first, "dtype", fx_dtype_name (t->dtype));
        put_key (out, &first, "sizes");
        put_dims (out, t->sizes, t->ndim);
        if (t->strides != NULL)
          {
            put_key (out, &first, "strides");
            put_dims (out, t->strides, t->ndim);
          }
        if (t->storage_offset.value != 0 || t->storage_offset.sym != NULL)
          {
            put_key (out, &first, "storage_offset");
            put_dim (out, &t->storage_offset);
          }
        if (t->has_device)
          {
            put_key (out, &first, "device");
            fx_buf_putc (out, '"');
            fx_device_format (t->device, out);
            fx_buf_putc (out, '"');
          }
        if (t->requires_grad)
          {
            put_key (out, &first, "requires_grad");
            fx_buf_puts (out, "true");
          }
        put_str_member (out, &first, "subclass", t->subclass);
        break;
      }
    case FX_VAL_SYMINT:
    case FX_VAL_INT:
      put_str_member (out, &first, "sym", v->sym);
      put_key (out, &first, "value");
      fx_buf_put_int (out, v->i);
      break;
    case FX_VAL_SYMFLOAT:
    case FX_VAL_FLOAT:
      put_str_member (out, &first, "sym", v->sym);
      put_key (out, &first, "value");
      put_float (out, v->f);
      break;
    case FX_VAL_SYMBOOL:
    case FX_VAL_BOOL:
      put_str_member (out, &first, "sym", v->sym);
      put_key (out, &first, "value");
      fx_buf_puts (out, v->b ? "true" : "false");
      break;
    case FX_VAL_TUPLE:
      put_key (out, &first, "items");
      fx_buf_putc (out, '[');
      for (size_t i = 0; i < v->n_items; i++)
        {
          if (i > 0)
            fx_buf_puts (out, ", ");
          put_val (out, &v->items[i]);
        }
      fx_buf_putc (out, ']');
      break;
    case FX_VAL_OTHER:
      put_str_member (out, &first, "text", v->text ? v->text : "");
      break;
    case FX_VAL_NONE:
    case FX_VAL_KIND_COUNT:
    default:
      break;
    }
  fx_buf_putc (out, '}');
}

static void
put_sources (fx_buf *out, const fx_node_source *src, size_t n)
{
  fx_buf_putc (out, '[');
  for (size_t i = 0; i < n; i++)
    {
      bool first = true;
      if (i > 0)
        fx_buf_puts (out, ", ");
      fx_buf_putc (out, '{');
      put_str_member (out, &first, "name", src[i].name);
      put_str_member (out, &first, "target", src[i].target);
      put_key (out, &first, "graph_id");
      fx_buf_printf (out, "%lld", (long long) src[i].graph_id);
      put_str_member (out, &first, "pass_name", src[i].pass_name);
      put_str_member (out, &first, "action", src[i].action);
      if (src[i].n_from > 0)
        {
          put_key (out, &first, "from_node");
          put_sources (out, src[i].from_node, src[i].n_from);
        }
      fx_buf_putc (out, '}');
    }
  fx_buf_putc (out, ']');
}

static void
put_meta (fx_buf *out, const fx_meta *m)
{
  bool first = true;

  fx_buf_putc (out, '{');
  if (m->val.kind != FX_VAL_NONE)
    {
      put_key (out, &first, "val");
      put_val (out, &m->val);
    }
  put_str_member (out, &first, "stack_trace", m->stack_trace);
  if (m->n_nn_module_stack > 0)
    {
      put_key (out, &first, "nn_module_stack");
      fx_buf_putc (out, '[');
      for (size_t i = 0; i < m->n_nn_module_stack; i++)
        {
          bool f = true;
          if (i > 0)
            fx_buf_puts (out, ", ");
          fx_buf_putc (out, '{');
          put_str_member (out, &f, "key", m->nn_module_stack[i].key);
          put_str_member (out, &f, "path", m->nn_module_stack[i].path);
          put_str_member (out, &f, "type", m->nn_module_stack[i].type);
          fx_buf_putc (out, '}');
        }
      fx_buf_putc (out, ']');
    }
  if (m->n_source_fn_stack > 0)
    {
      put_key (out, &first, "source_fn_stack");
      fx_buf_putc (out, '[');
      for (size_t i = 0; i < m->n_source_fn_stack; i++)
        {
          bool f = true;
          if (i > 0)
            fx_buf_puts (out, ", ");
          fx_buf_putc (out, '{');
          put_str_member (out, &f, "name", m->source_fn_stack[i].name);
          put_str_member (out, &f, "target", m->source_fn_stack[i].target);
          fx_buf_putc (out, '}');
        }
      fx_buf_putc (out, ']');
    }
  put_str_member (out, &first, "original_aten", m->original_aten);
  if (m->n_from_node > 0)
    {
      put_key (out, &first, "from_node");
      put_sources (out, m->from_node, m->n_from_node);
    }
  if (m->seq_nr != -1)
    {
      put_key (out, &first, "seq_nr");
      fx_buf_printf (out, "%lld", (long long) m->seq_nr);
    }
  if (m->n_extra > 0)
    {
      put_key (out, &first, "extra");
      fx_buf_putc (out, '[');
      for (size_t i = 0; i < m->n_extra; i++)
        {
          if (i > 0)
            fx_buf_puts (out, ", ");
          fx_buf_putc (out, '[');
          fx_buf_put_json_str (out, m->extra[i].key);
          fx_buf_puts (out, ", ");
          fx_buf_put_json_str (out, m->extra[i].text);
          fx_buf_putc (out, ']');
        }
      fx_buf_putc (out, ']');
    }
  fx_buf_putc (out, '}');
}

static const char *target_kind_names[FX_TARGET_KIND_COUNT] = {
  [FX_TARGET_STR] = "str", [FX_TARGET_OP] = "op", [FX_TARGET_OPERATOR] = "operator",
  [FX_TARGET_BUILTIN] = "builtin", [FX_TARGET_FUNCTION] = "function",
};
static const char *attr_kind_names[] = { "parameter", "buffer", "constant", "module", "other" };
static const char *input_kind_names[] = { "tensor", "symint", "other" };

static void
put_graph (fx_buf *out, const fx_graph *g, int indent)
{
  char pad[80];
  int np = indent < 70 ? indent : 70;
  memset (pad, ' ', (size_t) np);
  pad[np] = '\0';
  bool first = true;

  fx_buf_putc (out, '{');
  if (indent == 0)
    {
      fx_buf_printf (out, "\n  \"format\": \"%s\",\n  \"version\": %d", FORMAT_NAME, FX_GRAPH_JSON_VERSION);
      first = false;
    }
  if (g->class_name != NULL)
    {
      fx_buf_puts (out, first ? "\n" : ",\n");
      first = false;
      fx_buf_printf (out, "%s  \"class_name\": ", pad);
      fx_buf_put_json_str (out, g->class_name);
    }
  if (g->source_file != NULL)
    {
      fx_buf_puts (out, first ? "\n" : ",\n");
      first = false;
      fx_buf_printf (out, "%s  \"source_file\": ", pad);
      fx_buf_put_json_str (out, g->source_file);
    }
  if (g->pytree_args != NULL)
    {
      fx_buf_puts (out, first ? "\n" : ",\n");
      first = false;
      fx_buf_printf (out, "%s  \"pytree_args\": ", pad);
      fx_buf_put_json_str (out, g->pytree_args);
    }
  if (g->pytree_out)
    {
      fx_buf_puts (out, first ? "\n" : ",\n");
      first = false;
      fx_buf_printf (out, "%s  \"pytree_out\": true", pad);
    }
  fx_buf_puts (out, first ? "\n" : ",\n");
  fx_buf_printf (out, "%s  \"nodes\": [", pad);
  bool first_node = true;
  fx_graph_foreach_node (g, n)
    {
      bool f = true;
      fx_buf_printf (out, "%s\n%s    {", first_node ? "" : ",", pad);
      first_node = false;
      put_str_member (out, &f, "name", n->name);
      put_str_member (out, &f, "op", fx_opcode_name (n->op));
      put_key (out, &f, "target");
      {
        bool ft = true;
        fx_buf_putc (out, '{');
        put_str_member (out, &ft, "kind",
                        (unsigned) n->target.kind < FX_TARGET_KIND_COUNT ? target_kind_names[n->target.kind] : "str");
        put_str_member (out, &ft, "name", n->target.name ? n->target.name : "");
        put_str_member (out, &ft, "repr", n->target.repr);
        fx_buf_putc (out, '}');
      }
      if (n->n_args > 0)
        {
          put_key (out, &f, "args");
          fx_buf_putc (out, '[');
          for (size_t i = 0; i < n->n_args; i++)
            {
              if (i > 0)
                fx_buf_puts (out, ", ");
              put_arg (out, &n->args[i]);
            }
          fx_buf_putc (out, ']');
        }
      if (n->n_kwargs > 0)
        {
          put_key (out, &f, "kwargs");
          fx_buf_putc (out, '[');
          for (size_t i = 0; i < n->n_kwargs; i++)
            {
              if (i > 0)
                fx_buf_puts (out, ", ");
              fx_buf_putc (out, '[');
              fx_buf_put_json_str (out, n->kwargs[i].name);
              fx_buf_puts (out, ", ");
              put_arg (out, &n->kwargs[i].value);
              fx_buf_putc (out, ']');
            }
          fx_buf_putc (out, ']');
        }
      put_str_member (out, &f, "type", n->type_expr);
      if (n->default_value != NULL)
        {
          put_key (out, &f, "default");
          put_arg (out, n->default_value);
        }
      fx_buf tmp;
      fx_buf_init (&tmp);
      put_meta (&tmp, &n->meta);
      if (tmp.len > 2)
        {
          put_key (out, &f, "meta");
          fx_buf_append (out, tmp.data, tmp.len);
        }
      fx_buf_free (&tmp);
      fx_buf_putc (out, '}');
    }
  if (first_node)
    fx_buf_putc (out, ']');
  else
    fx_buf_printf (out, "\n%s  ]", pad);

  if (g->n_children > 0)
    {
      fx_buf_printf (out, ",\n%s  \"children\": [", pad);
      for (size_t i = 0; i < g->n_children; i++)
        {
          fx_buf_printf (out, "%s\n%s    {\"attr\": ", i ? "," : "", pad);
          fx_buf_put_json_str (out, g->children[i].attr);
          fx_buf_puts (out, ", \"graph\": ");
          if (g->children[i].graph != NULL)
            put_graph (out, g->children[i].graph, indent + 4);
          else
            fx_buf_puts (out, "null");
          fx_buf_putc (out, '}');
        }
      fx_buf_printf (out, "\n%s  ]", pad);
    }
  if (g->n_attrs > 0)
    {
      fx_buf_printf (out, ",\n%s  \"attrs\": [", pad);
      for (size_t i = 0; i < g->n_attrs; i++)
        {
          const fx_attr *a = &g->attrs[i];
          bool f = true;
          fx_buf_printf (out, "%s\n%s    {", i ? "," : "", pad);
          put_str_member (out, &f, "name", a->name);
          put_str_member (out, &f, "kind", (unsigned) a->kind <= FX_ATTR_OTHER ? attr_kind_names[a->kind] : "other");
          if (a->val.kind != FX_VAL_NONE)
            {
              put_key (out, &f, "val");
              put_val (out, &a->val);
            }
          put_str_member (out, &f, "text", a->text);
          fx_buf_putc (out, '}');
        }
      fx_buf_printf (out, "\n%s  ]", pad);
    }
  if (g->n_inputs > 0)
    {
      fx_buf_printf (out, ",\n%s  \"inputs\": [", pad);
      for (size_t i = 0; i < g->n_inputs; i++)
        {
          const fx_input_spec *s = &g->inputs[i];
          bool f = true;
          fx_buf_printf (out, "%s\n%s    {", i ? "," : "", pad);
          put_str_member (out, &f, "name", s->name);
          put_str_member (out, &f, "kind",
                          (unsigned) s->kind <= FX_INPUT_OTHER ? input_kind_names[s->kind] : "other");
          if (s->val.kind != FX_VAL_NONE)
            {
              put_key (out, &f, "val");
              put_val (out, &s->val);
            }
          put_str_member (out, &f, "storage", s->storage);
          if (s->is_leaf)
            {
              put_key (out, &f, "is_leaf");
              fx_buf_puts (out, "true");
            }
          if (s->requires_grad)
            {
              put_key (out, &f, "requires_grad");
              fx_buf_puts (out, "true");
            }
          fx_buf_putc (out, '}');
        }
      fx_buf_printf (out, "\n%s  ]", pad);
    }
  fx_buf_printf (out, "\n%s}", pad);
}

void
fx_graph_to_json (const fx_graph *graph, fx_buf *out)
{
  put_graph (out, graph, 0);
  fx_buf_putc (out, '\n');
}

/* ---------------------------------------------------------------- reading */

typedef struct
{
  fx_diag *diag;
  fx_arena *arena;
  char path[512];
  bool failed;
} reader;

/* Errors name the JSON path of the offending value: "nodes[3].args[1]". */
static bool
fail (reader *r, const char *fmt, ...) FX_PRINTF (2, 3);

static bool
fail (reader *r, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  if (r->failed)
    return false;
  r->failed = true;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  fx_diag_set (r->diag, FX_ERR_PARSE, "graph JSON: %s%s%s", r->path, r->path[0] ? ": " : "", msg);
  return false;
}

/* Appends a path segment; returns the old length for path_pop. */
static size_t
path_push (reader *r, const char *fmt, ...) FX_PRINTF (2, 3);

static size_t
path_push (reader *r, const char *fmt, ...)
{
  size_t old = strlen (r->path);
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (r->path + old, sizeof r->path - old, fmt, ap);
  va_end (ap);
  return old;
}

static void
path_pop (reader *r, size_t old)
{
  r->path[old] = '\0';
}

static json_object *
member (json_object *obj, const char *key)
{
  json_object *v = NULL;
  if (obj != NULL && json_object_is_type (obj, json_type_object) && json_object_object_get_ex (obj, key, &v))
    return v;
  return NULL;
}

static bool
is_null (json_object *o)
{
  return o == NULL || json_object_is_type (o, json_type_null);
}

/* Optional string member: NULL when absent or null; an error when of another type. */
static bool
get_str (reader *r, json_object *obj, const char *key, bool required, const char **out)
{
  json_object *v = member (obj, key);
  *out = NULL;
  if (is_null (v))
    return required ? fail (r, "missing string \"%s\"", key) : true;
  if (!json_object_is_type (v, json_type_string))
    return fail (r, "\"%s\" must be a string", key);
  *out = fx_arena_strndup (r->arena, json_object_get_string (v), (size_t) json_object_get_string_len (v));
  return true;
}

static bool
as_int (reader *r, json_object *v, const char *what, int64_t *out)
{
  if (v == NULL || !json_object_is_type (v, json_type_int))
    return fail (r, "%s must be an integer", what);
  errno = 0;
  *out = json_object_get_int64 (v);
  if (errno != 0)
    return fail (r, "%s is out of range", what);
  return true;
}

static bool
get_int (reader *r, json_object *obj, const char *key, int64_t dflt, int64_t *out)
{
  json_object *v = member (obj, key);
  *out = dflt;
  if (is_null (v))
    return true;
  return as_int (r, v, key, out);
}

static bool
get_bool (reader *r, json_object *obj, const char *key, bool *out)
{
  json_object *v = member (obj, key);
  *out = false;
  if (is_null (v))
    return true;
  if (!json_object_is_type (v, json_type_boolean))
    return fail (r, "\"%s\" must be true or false", key);
  *out = json_object_get_boolean (v);
  return true;
}

/* Locale-independent strtod for "1.5", "1e-05", "inf", "-inf", "nan". */
static bool
parse_float_text (const char *s, double *out)
{
  char buf[128];
  size_t n = strlen (s);
  const char *point = localeconv ()->decimal_point;
  char *end;

  if (n == 0 || n >= sizeof buf)
    return false;
  memcpy (buf, s, n + 1);
  if (point != NULL && point[0] != '.' && point[0] != '\0' && point[1] == '\0')
    for (char *p = buf; *p; p++)
      if (*p == '.')
        *p = point[0];
  errno = 0;
  *out = strtod (buf, &end);
  return *end == '\0' && end != buf;
}

static bool
as_float (reader *r, json_object *v, const char *what, double *out)
{
  if (v != NULL && json_object_is_type (v, json_type_string)
      && parse_float_text (json_object_get_string (v), out))
    return true;
  if (v != NULL && (json_object_is_type (v, json_type_double) || json_object_is_type (v, json_type_int)))
    {
      *out = json_object_get_double (v);
      return true;
    }
  return fail (r, "%s must be a float (a number or a string such as \"1e-05\", \"inf\", \"nan\")", what);
}

static bool
as_array (reader *r, json_object *v, const char *what)
{
  if (v == NULL || !json_object_is_type (v, json_type_array))
    return fail (r, "%s must be an array", what);
  return true;
}

static bool read_arg (reader *r, fx_graph *g, json_object *v, fx_arg *out, int depth);

static bool
read_seq (reader *r, fx_graph *g, json_object *arr, fx_arg *out, int depth)
{
  if (!as_array (r, arr, "a sequence"))
    return false;
  size_t n = json_object_array_length (arr);
  out->u.seq.n = n;
  out->u.seq.items = n ? fx_arena_alloc (r->arena, n * sizeof (fx_arg)) : NULL;
  for (size_t i = 0; i < n; i++)
    {
      size_t old = path_push (r, "[%zu]", i);
      if (!read_arg (r, g, json_object_array_get_idx (arr, i), &out->u.seq.items[i], depth + 1))
        return false;
      path_pop (r, old);
    }
  return true;
}

static bool
read_arg (reader *r, fx_graph *g, json_object *v, fx_arg *out, int depth)
{
  memset (out, 0, sizeof *out);
  if (depth > 200)
    return fail (r, "arguments nest too deeply");
  if (is_null (v))
    {
      out->kind = FX_ARG_NONE;
      return true;
    }
  switch (json_object_get_type (v))
    {
    case json_type_boolean:
      out->kind = FX_ARG_BOOL;
      out->u.b = json_object_get_boolean (v);
      return true;
    case json_type_int:
      out->kind = FX_ARG_INT;
      return as_int (r, v, "an integer argument", &out->u.i);
    case json_type_string:
      out->kind = FX_ARG_STR;
      out->u.s = fx_arena_strndup (r->arena, json_object_get_string (v), (size_t) json_object_get_string_len (v));
      return true;
    case json_type_object:
      break;
    case json_type_double:
    case json_type_array:
    case json_type_null:
    default:
      return fail (r, "an argument must be null, a boolean, an integer, a string or a tagged object");
    }
  if (json_object_object_length (v) != 1)
    return fail (r, "a tagged argument has exactly one member");
  json_object_object_foreach (v, tag, x)
    {
      if (strcmp (tag, "node") == 0)
        {
          if (x == NULL || !json_object_is_type (x, json_type_string))
            return fail (r, "\"node\" must name a node");
          out->kind = FX_ARG_NODE;
          out->u.node = fx_graph_find_node (g, json_object_get_string (x));
          if (out->u.node == NULL)
            return fail (r, "no node named '%s'", json_object_get_string (x));
          return true;
        }
      if (strcmp (tag, "float") == 0)
        {
          out->kind = FX_ARG_FLOAT;
          return as_float (r, x, "\"float\"", &out->u.f);
        }
      if (strcmp (tag, "list") == 0 || strcmp (tag, "tuple") == 0 || strcmp (tag, "slice") == 0)
        {
          out->kind = tag[0] == 'l' ? FX_ARG_LIST : tag[0] == 't' ? FX_ARG_TUPLE : FX_ARG_SLICE;
          if (!read_seq (r, g, x, out, depth))
            return false;
          if (out->kind == FX_ARG_SLICE && out->u.seq.n != 3)
            return fail (r, "a slice has exactly three items (start, stop, step)");
          return true;
        }
      if (strcmp (tag, "dict") == 0)
        {
          if (!as_array (r, x, "\"dict\""))
            return false;
          size_t n = json_object_array_length (x);
          out->kind = FX_ARG_DICT;
          out->u.dict.n = n;
          out->u.dict.items = n ? fx_arena_alloc (r->arena, n * sizeof (fx_dict_entry)) : NULL;
          for (size_t i = 0; i < n; i++)
            {
              json_object *pair = json_object_array_get_idx (x, i);
              size_t old = path_push (r, ".dict[%zu]", i);
              if (pair == NULL || !json_object_is_type (pair, json_type_array) || json_object_array_length (pair) != 2)
                return fail (r, "a dict entry is a [key, value] pair");
              if (!read_arg (r, g, json_object_array_get_idx (pair, 0), &out->u.dict.items[i].key, depth + 1)
                  || !read_arg (r, g, json_object_array_get_idx (pair, 1), &out->u.dict.items[i].value, depth + 1))
                return false;
              path_pop (r, old);
            }
          return true;
        }
      const char *text = x != NULL && json_object_is_type (x, json_type_string) ? json_object_get_string (x) : NULL;
      if (strcmp (tag, "ellipsis") == 0)
        {
          out->kind = FX_ARG_ELLIPSIS;
          return true;
        }
      if (text == NULL)
        return fail (r, "\"%s\" must be a string", tag);
      if (strcmp (tag, "dtype") == 0)
        {
          out->kind = FX_ARG_DTYPE;
          out->u.dtype = fx_dtype_from_name (text);
          return out->u.dtype != FX_DTYPE_UNKNOWN || fail (r, "unknown dtype '%s'", text);
        }
      if (strcmp (tag, "device") == 0)
        {
          out->kind = FX_ARG_DEVICE;
          return fx_device_parse (text, &out->u.device) || fail (r, "unknown device '%s'", text);
        }
      if (strcmp (tag, "layout") == 0)
        {
          out->kind = FX_ARG_LAYOUT;
          return fx_layout_from_name (text, &out->u.layout) || fail (r, "unknown layout '%s'", text);
        }
      if (strcmp (tag, "memory_format") == 0)
        {
          out->kind = FX_ARG_MEMFMT;
          return fx_memfmt_from_name (text, &out->u.memfmt) || fail (r, "unknown memory format '%s'", text);
        }
      if (strcmp (tag, "sym") == 0 || strcmp (tag, "global") == 0)
        {
          out->kind = tag[0] == 's' ? FX_ARG_SYM : FX_ARG_GLOBAL;
          out->u.s = fx_arena_strdup (r->arena, text);
          return true;
        }
      return fail (r, "unknown argument tag \"%s\"", tag);
    }
  return fail (r, "empty argument object");
}

static bool
read_dim (reader *r, json_object *v, fx_dim *d)
{
  d->sym = NULL;
  if (v != NULL && json_object_is_type (v, json_type_object))
    return get_str (r, v, "sym", true, &d->sym) && get_int (r, v, "hint", -1, &d->value);
  return as_int (r, v, "a dimension", &d->value);
}

static bool
read_dims (reader *r, json_object *arr, fx_dim **dims, int *ndim)
{
  if (!as_array (r, arr, "a shape"))
    return false;
  size_t n = json_object_array_length (arr);
  if (n > 4096)
    return fail (r, "a shape has too many dimensions");
  /* keep "known, empty" (0-d) distinct from "unknown" (NULL) */
  *dims = fx_arena_alloc (r->arena, (n ? n : 1) * sizeof (fx_dim));
  for (size_t i = 0; i < n; i++)
    if (!read_dim (r, json_object_array_get_idx (arr, i), &(*dims)[i]))
      return false;
  *ndim = (int) n;
  return true;
}

static bool
read_val (reader *r, json_object *v, fx_val *out, int depth)
{
  const char *kind;

  memset (out, 0, sizeof *out);
  if (is_null (v))
    return true;
  if (!json_object_is_type (v, json_type_object))
    return fail (r, "a value must be an object");
  if (depth > 64)
    return fail (r, "values nest too deeply");
  if (!get_str (r, v, "kind", true, &kind))
    return false;
  int k = -1;
  for (int i = 0; i < FX_VAL_KIND_COUNT; i++)
    if (strcmp (kind, val_kind_names[i]) == 0)
      k = i;
  if (k < 0)
    return fail (r, "unknown value kind '%s'", kind);
  out->kind = (fx_val_kind) k;
  switch (out->kind)
    {
    case FX_VAL_TENSOR:
      {
        fx_tensor_meta *t = &out->tensor;
        const char *dtype, *device;
        int nstride = 0;
        if (!get_str (r, v, "dtype", true, &dtype))
          return false;
        t->dtype = fx_dtype_from_name (dtype);
        if (t->dtype == FX_DTYPE_UNKNOWN)
          return fail (r, "unknown dtype '%s'", dtype);
        if (!read_dims (r, member (v, "sizes"), &t->sizes, &t->ndim))
          return false;
        if (!is_null (member (v, "strides")))
          {
            if (!read_dims (r, member (v, "strides"), &t->strides, &nstride))
              return false;
            if (nstride != t->ndim)
              return fail (r, "strides and sizes differ in length");
          }
        if (!is_null (member (v, "storage_offset")) && !read_dim (r, member (v, "storage_offset"), &t->storage_offset))
          return false;
        if (!get_str (r, v, "device", false, &device))
          return false;
        if (device != NULL)
          {
            if (!fx_device_parse (device, &t->device))
              return fail (r, "unknown device '%s'", device);
            t->has_device = true;
          }
        return get_bool (r, v, "requires_grad", &t->requires_grad) && get_str (r, v, "subclass", false, &t->subclass);
      }
    case FX_VAL_SYMINT:
    case FX_VAL_INT:
      return get_str (r, v, "sym", false, &out->sym) && get_int (r, v, "value", 0, &out->i);
    case FX_VAL_SYMFLOAT:
    case FX_VAL_FLOAT:
      if (!get_str (r, v, "sym", false, &out->sym))
        return false;
      return is_null (member (v, "value")) || as_float (r, member (v, "value"), "\"value\"", &out->f);
    case FX_VAL_SYMBOOL:
    case FX_VAL_BOOL:
      return get_str (r, v, "sym", false, &out->sym) && get_bool (r, v, "value", &out->b);
    case FX_VAL_TUPLE:
      {
        json_object *items = member (v, "items");
        if (!as_array (r, items, "\"items\""))
          return false;
        out->n_items = json_object_array_length (items);
        out->items = out->n_items ? fx_arena_alloc (r->arena, out->n_items * sizeof (fx_val)) : NULL;
        for (size_t i = 0; i < out->n_items; i++)
          if (!read_val (r, json_object_array_get_idx (items, i), &out->items[i], depth + 1))
            return false;
        return true;
      }
    case FX_VAL_OTHER:
      if (!get_str (r, v, "text", false, &out->text))
        return false;
      if (out->text == NULL)
        out->text = "";
      return true;
    case FX_VAL_NONE:
    case FX_VAL_KIND_COUNT:
    default:
      return true;
    }
}

static bool
read_sources (reader *r, json_object *arr, fx_node_source **out, size_t *n_out, int depth)
{
  if (!as_array (r, arr, "\"from_node\""))
    return false;
  if (depth > 64)
    return fail (r, "from_node nests too deeply");
  size_t n = json_object_array_length (arr);
  fx_node_source *s = n ? fx_arena_alloc (r->arena, n * sizeof *s) : NULL;
  for (size_t i = 0; i < n; i++)
    {
      json_object *o = json_object_array_get_idx (arr, i);
      if (o == NULL || !json_object_is_type (o, json_type_object))
        return fail (r, "a from_node entry must be an object");
      if (!get_str (r, o, "name", false, &s[i].name) || !get_str (r, o, "target", false, &s[i].target)
          || !get_int (r, o, "graph_id", 0, &s[i].graph_id) || !get_str (r, o, "pass_name", false, &s[i].pass_name)
          || !get_str (r, o, "action", false, &s[i].action))
        return false;
      if (!is_null (member (o, "from_node"))
          && !read_sources (r, member (o, "from_node"), &s[i].from_node, &s[i].n_from, depth + 1))
        return false;
    }
  *out = s;
  *n_out = n;
  return true;
}

static bool
read_meta (reader *r, fx_graph *g, json_object *m, fx_meta *meta)
{
  json_object *v;

  meta->seq_nr = -1;
  if (is_null (m))
    return true;
  if (!json_object_is_type (m, json_type_object))
    return fail (r, "\"meta\" must be an object");
  if (!read_val (r, member (m, "val"), &meta->val, 0) || !get_str (r, m, "stack_trace", false, &meta->stack_trace)
      || !get_str (r, m, "original_aten", false, &meta->original_aten) || !get_int (r, m, "seq_nr", -1, &meta->seq_nr))
    return false;
  if (!is_null (v = member (m, "nn_module_stack")))
    {
      if (!as_array (r, v, "\"nn_module_stack\""))
        return false;
      meta->n_nn_module_stack = json_object_array_length (v);
      meta->nn_module_stack = fx_arena_alloc (r->arena, (meta->n_nn_module_stack + 1) * sizeof (fx_module_entry));
      for (size_t i = 0; i < meta->n_nn_module_stack; i++)
        {
          json_object *e = json_object_array_get_idx (v, i);
          fx_module_entry *me = &meta->nn_module_stack[i];
          if (!get_str (r, e, "key", false, &me->key) || !get_str (r, e, "path", false, &me->path)
              || !get_str (r, e, "type", false, &me->type))
            return false;
        }
    }
  if (!is_null (v = member (m, "source_fn_stack")))
    {
      if (!as_array (r, v, "\"source_fn_stack\""))
        return false;
      meta->n_source_fn_stack = json_object_array_length (v);
      meta->source_fn_stack = fx_arena_alloc (r->arena, (meta->n_source_fn_stack + 1) * sizeof (fx_source_fn));
      for (size_t i = 0; i < meta->n_source_fn_stack; i++)
        {
          json_object *e = json_object_array_get_idx (v, i);
          if (!get_str (r, e, "name", false, &meta->source_fn_stack[i].name)
              || !get_str (r, e, "target", false, &meta->source_fn_stack[i].target))
            return false;
        }
    }
  if (!is_null (v = member (m, "from_node")) && !read_sources (r, v, &meta->from_node, &meta->n_from_node, 0))
    return false;
  if (!is_null (v = member (m, "extra")))
    {
      if (!as_array (r, v, "\"extra\""))
        return false;
      for (size_t i = 0; i < json_object_array_length (v); i++)
        {
          json_object *pair = json_object_array_get_idx (v, i);
          json_object *k = pair && json_object_is_type (pair, json_type_array) && json_object_array_length (pair) == 2
                             ? json_object_array_get_idx (pair, 0) : NULL;
          json_object *t = k ? json_object_array_get_idx (pair, 1) : NULL;
          if (k == NULL || !json_object_is_type (k, json_type_string) || t == NULL
              || !json_object_is_type (t, json_type_string))
            return fail (r, "an \"extra\" entry is a [key, text] pair of strings");
          fx_meta_set_extra (g, meta, json_object_get_string (k), json_object_get_string (t));
        }
    }
  return true;
}

static int
name_index (const char *const *names, int n, const char *name)
{
  for (int i = 0; i < n; i++)
    if (names[i] != NULL && strcmp (names[i], name) == 0)
      return i;
  return -1;
}

static fx_graph *read_graph (reader *r, json_object *o, int depth);

static bool
read_nodes (reader *r, fx_graph *g, json_object *nodes)
{
  size_t n = json_object_array_length (nodes);
  fx_node **made = calloc (n + 1, sizeof *made);
  if (made == NULL)
    abort ();

  /* First pass: every node with its name, so arguments may refer to any of them. */
  for (size_t i = 0; i < n && !r->failed; i++)
    {
      json_object *o = json_object_array_get_idx (nodes, i);
      size_t old = path_push (r, "nodes[%zu]", i);
      const char *name, *op, *tkind, *tname, *trepr;
      fx_opcode opcode;
      json_object *t = member (o, "target");
      if (o == NULL || !json_object_is_type (o, json_type_object))
        fail (r, "a node must be an object");
      else if (get_str (r, o, "name", true, &name) && get_str (r, o, "op", true, &op))
        {
          if (!fx_opcode_from_name (op, &opcode))
            fail (r, "unknown op '%s'", op);
          else if (t == NULL || !json_object_is_type (t, json_type_object))
            fail (r, "missing \"target\" object");
          else if (get_str (r, t, "kind", true, &tkind) && get_str (r, t, "name", true, &tname)
                   && get_str (r, t, "repr", false, &trepr))
            {
              int k = name_index (target_kind_names, FX_TARGET_KIND_COUNT, tkind);
              if (k < 0)
                fail (r, "unknown target kind '%s'", tkind);
              else if (fx_graph_name_taken (g, name))
                fail (r, "duplicate node name '%s'", name);
              else
                {
                  fx_target target = { (fx_target_kind) k, tname, trepr, -1 };
                  made[i] = fx_graph_create_node (g, opcode, target, NULL, 0, NULL, 0, name);
                  if (strcmp (made[i]->name, name) != 0)
                    fail (r, "'%s' is not a valid FX node name (FX would call it '%s')", name, made[i]->name);
                }
            }
        }
      if (!r->failed)
        path_pop (r, old);
    }

  /* Second pass: arguments, type, default, metadata. */
  for (size_t i = 0; i < n && !r->failed; i++)
    {
      json_object *o = json_object_array_get_idx (nodes, i);
      fx_node *node = made[i];
      size_t old = path_push (r, "nodes[%zu]", i);
      json_object *args = member (o, "args"), *kwargs = member (o, "kwargs"), *dflt = member (o, "default");

      if (!is_null (args))
        {
          if (!as_array (r, args, "\"args\""))
            break;
          size_t na = json_object_array_length (args);
          fx_arg *a = fx_arena_alloc (r->arena, (na + 1) * sizeof *a);
          for (size_t j = 0; j < na && !r->failed; j++)
            {
              size_t o2 = path_push (r, ".args[%zu]", j);
              if (read_arg (r, g, json_object_array_get_idx (args, j), &a[j], 0))
                path_pop (r, o2);
            }
          if (r->failed)
            break;
          fx_node_set_args (node, a, na);
        }
      if (!is_null (kwargs))
        {
          if (!as_array (r, kwargs, "\"kwargs\""))
            break;
          size_t nk = json_object_array_length (kwargs);
          fx_kwarg *kw = fx_arena_alloc (r->arena, (nk + 1) * sizeof *kw);
          for (size_t j = 0; j < nk && !r->failed; j++)
            {
              json_object *pair = json_object_array_get_idx (kwargs, j);
              size_t o2 = path_push (r, ".kwargs[%zu]", j);
              json_object *key = pair && json_object_is_type (pair, json_type_array) && json_object_array_length (pair) == 2
                                   ? json_object_array_get_idx (pair, 0) : NULL;
              if (key == NULL || !json_object_is_type (key, json_type_string))
                fail (r, "a keyword argument is a [name, value] pair");
              else if (read_arg (r, g, json_object_array_get_idx (pair, 1), &kw[j].value, 0))
                {
                  kw[j].name = fx_arena_strdup (r->arena, json_object_get_string (key));
                  path_pop (r, o2);
                }
            }
          if (r->failed)
            break;
          fx_node_set_kwargs (node, kw, nk);
        }
      if (!get_str (r, o, "type", false, &node->type_expr))
        break;
      if (!is_null (dflt))
        {
          fx_arg d;
          size_t o2 = path_push (r, ".default");
          if (!read_arg (r, g, dflt, &d, 0))
            break;
          path_pop (r, o2);
          node->default_value = fx_arena_alloc (g->arena, sizeof (fx_arg));
          *node->default_value = fx_arg_copy (g->arena, &d);
        }
      size_t o2 = path_push (r, ".meta");
      if (!read_meta (r, g, member (o, "meta"), &node->meta))
        break;
      path_pop (r, o2);
      path_pop (r, old);
    }
  free (made);
  return !r->failed;
}

static fx_graph *
read_graph (reader *r, json_object *o, int depth)
{
  json_object *v;
  fx_graph *g;

  if (o == NULL || !json_object_is_type (o, json_type_object))
    {
      fail (r, "a graph must be an object");
      return NULL;
    }
  if (depth > 32)
    {
      fail (r, "child graphs nest too deeply");
      return NULL;
    }
  g = fx_graph_new ();
  fx_arena *saved = r->arena;
  r->arena = g->arena;
  const char *class_name = NULL;
  if (!get_str (r, o, "class_name", false, &class_name) || !get_str (r, o, "source_file", false, &g->source_file)
      || !get_str (r, o, "pytree_args", false, &g->pytree_args) || !get_bool (r, o, "pytree_out", &g->pytree_out))
    goto error;
  g->class_name = class_name;
  v = member (o, "nodes");
  if (!is_null (v) && (!as_array (r, v, "\"nodes\"") || !read_nodes (r, g, v)))
    goto error;

  if (!is_null (v = member (o, "children")))
    {
      if (!as_array (r, v, "\"children\""))
        goto error;
      for (size_t i = 0; i < json_object_array_length (v); i++)
        {
          json_object *c = json_object_array_get_idx (v, i);
          const char *attr;
          size_t old = path_push (r, "children[%zu].", i);
          if (!get_str (r, c, "attr", true, &attr))
            goto error;
          fx_graph *child = read_graph (r, member (c, "graph"), depth + 1);
          r->arena = g->arena;
          if (child == NULL)
            goto error;
          fx_graph_add_child (g, attr, child);
          path_pop (r, old);
        }
    }
  if (!is_null (v = member (o, "attrs")))
    {
      if (!as_array (r, v, "\"attrs\""))
        goto error;
      for (size_t i = 0; i < json_object_array_length (v); i++)
        {
          json_object *a = json_object_array_get_idx (v, i);
          const char *name, *kind, *text;
          size_t old = path_push (r, "attrs[%zu]", i);
          if (!get_str (r, a, "name", true, &name) || !get_str (r, a, "kind", true, &kind)
              || !get_str (r, a, "text", false, &text))
            goto error;
          int k = name_index (attr_kind_names, FX_ATTR_OTHER + 1, kind);
          if (k < 0)
            {
              fail (r, "unknown attribute kind '%s'", kind);
              goto error;
            }
          fx_attr *attr = fx_graph_add_attr (g, name, (fx_attr_kind) k);
          attr->text = text;
          if (!read_val (r, member (a, "val"), &attr->val, 0))
            goto error;
          path_pop (r, old);
        }
    }
  if (!is_null (v = member (o, "inputs")))
    {
      if (!as_array (r, v, "\"inputs\""))
        goto error;
      for (size_t i = 0; i < json_object_array_length (v); i++)
        {
          json_object *a = json_object_array_get_idx (v, i);
          const char *name, *kind;
          size_t old = path_push (r, "inputs[%zu]", i);
          if (!get_str (r, a, "name", true, &name) || !get_str (r, a, "kind", true, &kind))
            goto error;
          int k = name_index (input_kind_names, FX_INPUT_OTHER + 1, kind);
          if (k < 0)
            {
              fail (r, "unknown input kind '%s'", kind);
              goto error;
            }
          fx_input_spec *s = fx_graph_add_input_spec (g, name, (fx_input_kind) k);
          if (!read_val (r, member (a, "val"), &s->val, 0) || !get_str (r, a, "storage", false, &s->storage)
              || !get_bool (r, a, "is_leaf", &s->is_leaf) || !get_bool (r, a, "requires_grad", &s->requires_grad))
            goto error;
          path_pop (r, old);
        }
    }
  r->arena = saved;
  return g;

error:
  r->arena = saved;
  fx_graph_free (g);
  return NULL;
}

/* Line and column (1-based) of a byte offset, and the text of that line. */
static void
locate_offset (fx_diag *diag, const char *text, size_t len, size_t offset)
{
  int line = 1;
  size_t line_start = 0;
  if (offset > len)
    offset = len;
  for (size_t i = 0; i < offset; i++)
    if (text[i] == '\n')
      {
        line++;
        line_start = i + 1;
      }
  size_t line_end = line_start;
  while (line_end < len && text[line_end] != '\n')
    line_end++;
  fx_diag_locate (diag, NULL, line, (int) (offset - line_start) + 1, text + line_start, line_end - line_start);
}

fx_status
fx_graph_from_json (const char *text, size_t len, fx_graph **out, fx_diag *diag)
{
  reader r = { .diag = diag };
  json_tokener *tok;
  json_object *root;

  *out = NULL;
  if (len > (size_t) INT32_MAX)
    return fx_diag_set (diag, FX_ERR_PARSE, "graph JSON: the text is too large");
  tok = json_tokener_new_ex (256);
  if (tok == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "graph JSON: out of memory");
  root = json_tokener_parse_ex (tok, text, (int) len);
  enum json_tokener_error jerr = json_tokener_get_error (tok);
  size_t end = json_tokener_get_parse_end (tok);
  if (root == NULL || jerr != json_tokener_success)
    {
      if (jerr == json_tokener_continue)
        jerr = json_tokener_error_parse_eof;
      fx_diag_set (diag, FX_ERR_PARSE, "graph JSON: %s", json_tokener_error_desc (jerr));
      locate_offset (diag, text, len, end);
      json_object_put (root);
      json_tokener_free (tok);
      return FX_ERR_PARSE;
    }
  /* only whitespace may follow the document */
  for (size_t i = end; i < len; i++)
    if (!fx_print_is_space ((unsigned char) text[i]) && text[i] != '\0')
      {
        fx_diag_set (diag, FX_ERR_PARSE, "graph JSON: unexpected text after the document");
        locate_offset (diag, text, len, i);
        json_object_put (root);
        json_tokener_free (tok);
        return FX_ERR_PARSE;
      }
  json_tokener_free (tok);

  const char *format = NULL;
  int64_t version = 0;
  r.arena = NULL;
  fx_arena *scratch = fx_arena_new ();
  r.arena = scratch;
  if (!json_object_is_type (root, json_type_object))
    fail (&r, "the document must be an object");
  else if (get_str (&r, root, "format", true, &format) && strcmp (format, FORMAT_NAME) != 0)
    fail (&r, "\"format\" is '%s', expected '%s'", format, FORMAT_NAME);
  else if (!r.failed && get_int (&r, root, "version", 0, &version) && version != FX_GRAPH_JSON_VERSION)
    fail (&r, "unsupported version %lld (this build reads version %d)", (long long) version, FX_GRAPH_JSON_VERSION);
  fx_arena_free (scratch);
  if (!r.failed)
    *out = read_graph (&r, root, 0);
  json_object_put (root);
  if (*out == NULL)
    {
      if (!r.failed)
        fail (&r, "invalid graph");
      return FX_ERR_PARSE;
    }
  return FX_OK;
}
