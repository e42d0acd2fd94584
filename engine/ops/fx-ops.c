/* fx-ops.c: the op table built from fx/ops.def, lookup by target name, schema parsing, argument binding and
   execution (meta → allocate → kernel). */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"
#include "fx-ops-impl.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const fx_op_info op_table[] = {
#define FX_OP(ident, tgt, k, sch, m, kern, dec) \
  { .id = FX_OP_##ident, .target = tgt, .kind = FX_OP_KIND_##k, .schema_text = sch, .meta = m, .kernel = kern, .decomp = dec },
#include "fx/ops.def"
#undef FX_OP
};
_Static_assert (sizeof op_table / sizeof op_table[0] == FX_OP_COUNT, "op table out of sync with ops.def");

static const char *const kind_names[] = {
  "pointwise", "reduction", "scan", "view", "extern", "indexing", "factory", "random", "composite", "other",
};
_Static_assert (sizeof kind_names / sizeof kind_names[0] == FX_OP_KIND_COUNT, "kind names out of sync");

const char *
fx_op_kind_name (fx_op_kind kind)
{
  return (unsigned) kind < FX_OP_KIND_COUNT ? kind_names[kind] : "?";
}

const fx_op_info *
fx_op_get (fx_op_id id)
{
  return (unsigned) id < FX_OP_COUNT ? &op_table[id] : NULL;
}

/* ---------------------------------------------------------------- schemas */

static fx_op_schema schemas[FX_OP_COUNT];
static fx_arena *schema_arena;
static pthread_once_t schema_once = PTHREAD_ONCE_INIT;

static void
skip_ws (const char **p)
{
  while (**p == ' ')
    (*p)++;
}

static bool
parse_type (const char **pp, fx_schema_arg *a)
{
  const char *p = *pp;
  static const struct
  {
    const char *name;
    fx_schema_type type;
  } types[] = {
    { "Tensor", FX_SCHEMA_TENSOR }, { "Scalar", FX_SCHEMA_SCALAR }, { "SymInt", FX_SCHEMA_INT },
    { "int", FX_SCHEMA_INT }, { "float", FX_SCHEMA_FLOAT }, { "bool", FX_SCHEMA_BOOL }, { "str", FX_SCHEMA_STR },
    { "ScalarType", FX_SCHEMA_DTYPE }, { "Layout", FX_SCHEMA_LAYOUT }, { "Device", FX_SCHEMA_DEVICE },
    { "MemoryFormat", FX_SCHEMA_MEMFMT }, { "Generator", FX_SCHEMA_GENERATOR },
  };
  size_t len = 0;
  while (isalnum ((unsigned char) p[len]) || p[len] == '_')
    len++;
  bool found = false;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strlen (types[i].name) == len && strncmp (types[i].name, p, len) == 0)
      {
        a->type = types[i].type;
        found = true;
      }
  if (!found)
    return false;
  p += len;
  /* alias annotation: (a), (a!), (a -> *) */
  if (*p == '(')
    {
      while (*p && *p != ')')
        p++;
      if (*p == ')')
        p++;
    }
  if (*p == '?')
    {
      a->optional = true;
      p++;
    }
  if (*p == '[')
    {
      p++;
      int n = 0;
      while (isdigit ((unsigned char) *p))
        n = n * 10 + (*p++ - '0');
      if (*p != ']')
        return false;
      p++;
      a->list_len = n;
      if (a->type == FX_SCHEMA_TENSOR)
        a->type = a->optional ? FX_SCHEMA_OPT_TENSOR_LIST : FX_SCHEMA_TENSOR_LIST;
      else if (a->type == FX_SCHEMA_INT)
        a->type = FX_SCHEMA_INT_LIST;
      else
        return false;
      a->optional = false;
      if (*p == '?')
        {
          a->optional = true;
          p++;
        }
    }
  *pp = p;
  return true;
}

fx_status
fx_op_schema_parse (const char *text, fx_arena *arena, fx_op_schema *out, fx_diag *diag)
{
  memset (out, 0, sizeof *out);
  out->text = text;
  const char *p = text;
  const char *open = strchr (p, '(');
  const char *arrow = strstr (p, ") -> ");
  if (open == NULL || arrow == NULL)
    return fx_diag_set (diag, FX_ERR_PARSE, "schema '%s': expected 'name(args) -> returns'", text);
  const char *dot = memchr (p, '.', (size_t) (open - p));
  out->name = fx_arena_strndup (arena, p, (size_t) ((dot ? dot : open) - p));
  out->overload = dot ? fx_arena_strndup (arena, dot + 1, (size_t) (open - dot - 1)) : "";
  p = open + 1;
  bool kwarg_only = false;
  while (p < arrow)
    {
      skip_ws (&p);
      if (*p == ',')
        {
          p++;
          continue;
        }
      if (*p == '*')
        {
          kwarg_only = true;
          p++;
          continue;
        }
      if (out->n_args >= FX_OP_MAX_ARGS)
        return fx_diag_set (diag, FX_ERR_PARSE, "schema '%s': too many arguments", text);
      fx_schema_arg *a = &out->args[out->n_args];
      if (!parse_type (&p, a))
        return fx_diag_set (diag, FX_ERR_PARSE, "schema '%s': unknown type at '%.20s'", text, p);
      skip_ws (&p);
      const char *name = p;
      while (isalnum ((unsigned char) *p) || *p == '_')
        p++;
      a->name = fx_arena_strndup (arena, name, (size_t) (p - name));
      a->kwarg_only = kwarg_only;
      if (*p == '=')
        {
          p++;
          const char *d = p;
          int depth = 0;
          while (p < arrow && (depth > 0 || *p != ','))
            {
              if (*p == '[')
                depth++;
              if (*p == ']')
                depth--;
              p++;
            }
          a->has_default = true;
          a->default_text = fx_arena_strndup (arena, d, (size_t) (p - d));
        }
      out->n_args++;
    }
  p = arrow + 5;
  if (*p == '(')
    p++;
  while (*p && *p != ')')
    {
      skip_ws (&p);
      if (*p == ',')
        {
          p++;
          continue;
        }
      fx_schema_arg r;
      memset (&r, 0, sizeof r);
      if (!parse_type (&p, &r))
        return fx_diag_set (diag, FX_ERR_PARSE, "schema '%s': bad return type at '%.20s'", text, p);
      if (r.type == FX_SCHEMA_TENSOR_LIST)
        out->returns_list = true;
      if (out->n_returns < FX_OP_MAX_OUTS)
        out->returns[out->n_returns++] = r.type;
      skip_ws (&p);
      while (isalnum ((unsigned char) *p) || *p == '_')
        p++;
    }
  return FX_OK;
}

static void
parse_all_schemas (void)
{
  schema_arena = fx_arena_new ();
  for (int i = 0; i < FX_OP_COUNT; i++)
    {
      fx_diag d;
      fx_diag_clear (&d);
      if (fx_op_schema_parse (op_table[i].schema_text, schema_arena, &schemas[i], &d) != FX_OK)
        {
          /* the table is ours: a bad schema is a programming error */
          fprintf (stderr, "fx: %s\n", d.message);
          abort ();
        }
    }
}

const fx_op_schema *
fx_op_get_schema (fx_op_id id)
{
  if ((unsigned) id >= FX_OP_COUNT)
    return NULL;
  pthread_once (&schema_once, parse_all_schemas);
  return &schemas[id];
}

/* ---------------------------------------------------------------- lookup */

static const char *
strip_prefix (const char *name)
{
  if (strncmp (name, "torch.ops.", 10) == 0)
    return name + 10;
  return name;
}

int
fx_op_lookup (const char *target)
{
  if (target == NULL)
    return -1;
  const char *name = strip_prefix (target);
  for (int i = 0; i < FX_OP_COUNT; i++)
    if (strcmp (op_table[i].target, name) == 0)
      return i;
  /* an OpOverloadPacket ("aten.abs"): its default overload */
  size_t len = strlen (name);
  int dots = 0;
  for (size_t i = 0; i < len; i++)
    dots += name[i] == '.';
  if (dots == 1)
    {
      char buf[256];
      snprintf (buf, sizeof buf, "%s.default", name);
      for (int i = 0; i < FX_OP_COUNT; i++)
        if (strcmp (op_table[i].target, buf) == 0)
          return i;
    }
  return -1;
}

bool
fx_op_name_is_inplace (const char *target)
{
  if (target == NULL)
    return false;
  const char *name = strip_prefix (target);
  const char *dot1 = strchr (name, '.');
  if (dot1 == NULL)
    return false;
  const char *dot2 = strchr (dot1 + 1, '.');
  const char *end = dot2 ? dot2 : name + strlen (name);
  return end - dot1 >= 3 && end[-1] == '_' && end[-2] != '_';
}

int
fx_op_lookup_inplace (const char *target)
{
  if (target == NULL)
    return -1;
  if (!fx_op_name_is_inplace (target))
    return -1;
  const char *name = strip_prefix (target);
  /* "aten.add_.Tensor" -> "aten.add.Tensor"; "aten.copy_.default" -> "aten.copy.default" */
  const char *dot1 = strchr (name, '.');
  const char *dot2 = strchr (dot1 + 1, '.');
  const char *end = dot2 ? dot2 : name + strlen (name);
  char buf[256];
  snprintf (buf, sizeof buf, "%.*s%s", (int) (end - 1 - name), name, end);
  return fx_op_lookup (buf);
}

size_t
fx_graph_resolve_ops (fx_graph *graph)
{
  size_t unknown = 0;
  fx_graph_foreach_node (graph, n)
  {
    if (n->op != FX_OP_CALL_FUNCTION || n->target.kind != FX_TARGET_OP)
      continue;
    n->target.op_id = fx_op_lookup (n->target.name);
    if (n->target.op_id < 0 && fx_op_lookup_inplace (n->target.name) < 0)
      unknown++;
  }
  for (size_t i = 0; i < graph->n_children; i++)
    unknown += fx_graph_resolve_ops (graph->children[i].graph);
  return unknown;
}

/* ---------------------------------------------------------------- binding */

fx_status
fx_op_error (fx_op_call *call, fx_status code, const char *fmt, ...)
{
  char msg[900];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  if (call->node_name != NULL)
    {
      fx_diag_set (call->diag, code, "node '%s' (%s): %s", call->node_name, call->op->target, msg);
      if (call->diag)
        snprintf (call->diag->node, sizeof call->diag->node, "%s", call->node_name);
    }
  else
    fx_diag_set (call->diag, code, "%s: %s", call->op->target, msg);
  return code;
}

static fx_value
parse_default (const fx_schema_arg *a, fx_arena *arena)
{
  const char *t = a->default_text;
  if (strcmp (t, "None") == 0)
    return fx_value_none ();
  if (strcmp (t, "True") == 0)
    return fx_value_bool (true);
  if (strcmp (t, "False") == 0)
    return fx_value_bool (false);
  if (t[0] == '\'' || t[0] == '"')
    {
      fx_value v = fx_value_none ();
      v.kind = FX_VALUE_STR;
      v.u.s = fx_arena_strndup (arena, t + 1, strlen (t) - 2);
      return v;
    }
  if (t[0] == '[')
    {
      fx_value v = fx_value_none ();
      v.kind = FX_VALUE_LIST;
      int64_t tmp[FX_TENSOR_MAX_DIMS];
      size_t n = 0;
      const char *p = t + 1;
      while (*p && *p != ']' && n < FX_TENSOR_MAX_DIMS)
        {
          char *end;
          tmp[n++] = strtoll (p, &end, 10);
          p = end;
          while (*p == ',' || *p == ' ')
            p++;
        }
      v.u.seq.items = fx_arena_alloc (arena, sizeof (fx_value) * (n ? n : 1));
      v.u.seq.n = n;
      for (size_t i = 0; i < n; i++)
        v.u.seq.items[i] = fx_value_int (tmp[i]);
      return v;
    }
  if (strchr (t, '.') || strchr (t, 'e'))
    return fx_value_float (strtod (t, NULL));
  return fx_value_int (strtoll (t, NULL, 10));
}

static bool
value_fits (const fx_schema_arg *a, const fx_value *v)
{
  if ((int) a->type == FX_SCHEMA_TYPE_COUNT + 1)
    /* a Python number where a pointwise op takes a Tensor: a wrapped number (add.Tensor(x, 1e-06)) */
    return v->kind == FX_VALUE_TENSOR || v->kind == FX_VALUE_INT || v->kind == FX_VALUE_FLOAT
           || v->kind == FX_VALUE_BOOL;
  if (v->kind == FX_VALUE_NONE)
    return a->optional || a->type == FX_SCHEMA_GENERATOR;
  switch (a->type)
    {
    case FX_SCHEMA_TENSOR:
      return v->kind == FX_VALUE_TENSOR;

    case FX_SCHEMA_TENSOR_LIST:
    case FX_SCHEMA_OPT_TENSOR_LIST:
      return v->kind == FX_VALUE_LIST || v->kind == FX_VALUE_TUPLE;
    case FX_SCHEMA_SCALAR:
      return v->kind == FX_VALUE_INT || v->kind == FX_VALUE_FLOAT || v->kind == FX_VALUE_BOOL
             || (v->kind == FX_VALUE_TENSOR && v->u.t->ndim == 0);
    case FX_SCHEMA_INT:
      return v->kind == FX_VALUE_INT || v->kind == FX_VALUE_BOOL;
    case FX_SCHEMA_INT_LIST:
      return v->kind == FX_VALUE_LIST || v->kind == FX_VALUE_TUPLE || (a->list_len > 0 && v->kind == FX_VALUE_INT);
    case FX_SCHEMA_FLOAT:
      return v->kind == FX_VALUE_FLOAT || v->kind == FX_VALUE_INT;
    case FX_SCHEMA_BOOL:
      return v->kind == FX_VALUE_BOOL || v->kind == FX_VALUE_INT;
    case FX_SCHEMA_STR:
      return v->kind == FX_VALUE_STR;
    case FX_SCHEMA_DTYPE:
      return v->kind == FX_VALUE_DTYPE;
    case FX_SCHEMA_LAYOUT:
      return v->kind == FX_VALUE_LAYOUT;
    case FX_SCHEMA_DEVICE:
      return v->kind == FX_VALUE_DEVICE || v->kind == FX_VALUE_STR;
    case FX_SCHEMA_MEMFMT:
      return v->kind == FX_VALUE_MEMFMT;
    case FX_SCHEMA_GENERATOR:
      return true;
    case FX_SCHEMA_TYPE_COUNT:
    default:
      return false;
    }
}

static const char *
value_kind_text (const fx_value *v)
{
  static const char *const names[] = { "None", "Tensor", "int", "float", "bool", "str", "dtype", "device",
                                       "layout", "memory_format", "list", "tuple" };
  return (unsigned) v->kind < FX_VALUE_KIND_COUNT ? names[v->kind] : "?";
}

fx_status
fx_op_bind (fx_op_call *call, const fx_op_info *op, const fx_value *args, size_t n_args,
            const char *const *kw_names, const fx_value *kw_values, size_t n_kwargs, fx_diag *diag)
{
  const fx_op_schema *s = fx_op_get_schema (op->id);
  call->op = op;
  call->diag = diag;
  call->n_args = s->n_args;
  bool set[FX_OP_MAX_ARGS] = { false };
  if (n_args > (size_t) s->n_args)
    return fx_op_error (call, FX_ERR_INVALID, "takes %d arguments but %zu were given", s->n_args, n_args);
  for (size_t i = 0; i < n_args; i++)
    {
      call->args[i] = args[i];
      set[i] = true;
    }
  for (size_t k = 0; k < n_kwargs; k++)
    {
      int idx = -1;
      for (int i = 0; i < s->n_args; i++)
        if (strcmp (s->args[i].name, kw_names[k]) == 0)
          idx = i;
      if (idx < 0)
        return fx_op_error (call, FX_ERR_INVALID, "got an unexpected keyword argument '%s'", kw_names[k]);
      if (set[idx])
        return fx_op_error (call, FX_ERR_INVALID, "got multiple values for argument '%s'", kw_names[k]);
      call->args[idx] = kw_values[k];
      set[idx] = true;
    }
  for (int i = 0; i < s->n_args; i++)
    {
      const fx_schema_arg *a = &s->args[i];
      if (!set[i])
        {
          if (!a->has_default)
            {
              if (a->optional)
                {
                  call->args[i] = fx_value_none ();
                  continue;
                }
              return fx_op_error (call, FX_ERR_INVALID, "missing required argument '%s'", a->name);
            }
          call->args[i] = parse_default (a, call->arena);
        }
      fx_schema_arg relaxed = *a;
      if (a->type == FX_SCHEMA_TENSOR && !a->optional
          && (op->meta == fx_meta_binary || op->meta == fx_meta_where || op->meta == fx_meta_clamp)
          && !(i == 0 && op->meta != fx_meta_where && op->id != FX_OP_POW_SCALAR))
        relaxed.type = (fx_schema_type) (FX_SCHEMA_TYPE_COUNT + 1);
      if (!value_fits (&relaxed, &call->args[i]))
        return fx_op_error (call, FX_ERR_INVALID, "argument '%s' must be %s%s, not %s", a->name,
                            a->type == FX_SCHEMA_TENSOR ? "Tensor" : a->type == FX_SCHEMA_SCALAR ? "Scalar"
                            : a->type == FX_SCHEMA_INT_LIST ? "int[]" : a->type == FX_SCHEMA_INT ? "int"
                            : a->type == FX_SCHEMA_FLOAT ? "float" : a->type == FX_SCHEMA_BOOL ? "bool"
                            : a->type == FX_SCHEMA_DTYPE ? "ScalarType" : "another type",
                            a->optional ? "?" : "", value_kind_text (&call->args[i]));
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- execution */

/* Calls FN on each tensor value in V, nested lists and tuples included; the first failure stops it. */
static fx_status
each_out_tensor (fx_op_call *call, fx_value *v, fx_status (*fn) (fx_op_call *call, fx_value *v))
{
  if (v->kind == FX_VALUE_TENSOR)
    return fn (call, v);
  if (v->kind == FX_VALUE_LIST || v->kind == FX_VALUE_TUPLE)
    for (size_t i = 0; i < v->u.seq.n; i++)
      {
        fx_status st = each_out_tensor (call, &v->u.seq.items[i], fn);
        if (st != FX_OK)
          return st;
      }
  return FX_OK;
}

/* Every output layout a meta function made is checked once here, so no kernel, allocation or backend ever sizes
   memory from an overflowing shape (full([2^62, 4]), expand(x, [2^63-1]), strides of 2^62). */
static fx_status
check_out_layout (fx_op_call *call, fx_value *v)
{
  const fx_tensor *t = v->u.t;
  if (t == NULL)
    return fx_op_error (call, FX_ERR_NOMEM, "cannot make the output tensor (bad shape or out of memory)");
  fx_diag why;
  fx_diag_clear (&why);
  if (fx_layout_check (t->dtype, t->ndim, t->sizes, t->strides, t->offset, NULL, &why) != FX_OK)
    return fx_op_error (call, why.code, "%s", why.message);
  return FX_OK;
}

fx_status
fx_op_infer (fx_op_call *call)
{
  call->n_outs = 0;
  for (int i = 0; i < FX_OP_MAX_OUTS; i++)
    call->outs[i] = fx_value_none ();
  fx_status st = call->op->meta (call);
  for (int i = 0; st == FX_OK && i < call->n_outs; i++)
    st = each_out_tensor (call, &call->outs[i], check_out_layout);
  return st;
}

/* Gives a meta-only output tensor its memory. */
static fx_status
materialise (fx_op_call *call, fx_value *v)
{
  if (v->u.t->storage == NULL)
    {
      fx_tensor *m = v->u.t;
      fx_tensor *t = NULL;
      fx_diag why;
      fx_diag_clear (&why);
      if (fx_tensor_new_checked (call->alloc, m->dtype, m->ndim, m->sizes, m->strides, &t, &why) != FX_OK)
        return fx_op_error (call, why.code, "%s", why.message);
      fx_tensor_unref (m);
      v->u.t = t;
    }
  return FX_OK;
}

fx_status
fx_op_execute (fx_op_call *call)
{
  for (int i = 0; i < call->n_args; i++)
    if (call->args[i].kind == FX_VALUE_TENSOR && call->args[i].u.t->storage == NULL)
      return fx_op_error (call, FX_ERR_INVALID, "argument %d is a meta tensor without data", i);
  fx_status st = fx_op_infer (call);
  if (st != FX_OK)
    return st;
  if (call->op->kernel == NULL)
    return FX_OK; /* views: the meta function made them */
  for (int i = 0; i < call->n_outs; i++)
    if ((st = each_out_tensor (call, &call->outs[i], materialise)) != FX_OK)
      return st;
  return call->op->kernel (call);
}

void
fx_op_call_clear (fx_op_call *call)
{
  for (int i = 0; i < FX_OP_MAX_OUTS; i++)
    fx_value_clear (&call->outs[i]);
  call->n_outs = 0;
}

/* ---------------------------------------------------------------- value helpers */

bool
fx_value_is_none (const fx_value *v)
{
  return v->kind == FX_VALUE_NONE;
}

double
fx_value_as_f64 (const fx_value *v)
{
  switch (v->kind)
    {
    case FX_VALUE_INT: return (double) v->u.i;
    case FX_VALUE_FLOAT: return v->u.f;
    case FX_VALUE_BOOL: return v->u.b;
    case FX_VALUE_TENSOR: return v->u.t->storage ? fx_tensor_get_f64 (v->u.t, 0) : 0.0;
    default: return 0.0;
    }
}

int64_t
fx_value_as_i64 (const fx_value *v)
{
  switch (v->kind)
    {
    case FX_VALUE_INT: return v->u.i;
    case FX_VALUE_FLOAT: return (int64_t) v->u.f;
    case FX_VALUE_BOOL: return v->u.b;
    case FX_VALUE_TENSOR: return v->u.t->storage ? fx_tensor_get_i64 (v->u.t, 0) : 0;
    default: return 0;
    }
}

int
fx_value_as_int_list (const fx_value *v, int64_t *out, int max)
{
  if (v->kind == FX_VALUE_INT)
    {
      if (max > 0)
        out[0] = v->u.i;
      return 1;
    }
  if (v->kind != FX_VALUE_LIST && v->kind != FX_VALUE_TUPLE)
    return -1;
  /* a list longer than the caller's array is an error (-1), never a count the caller would loop to */
  if (v->u.seq.n > (size_t) max)
    return -1;
  int n = (int) v->u.seq.n;
  for (int i = 0; i < n && i < max; i++)
    out[i] = fx_value_as_i64 (&v->u.seq.items[i]);
  return n;
}

fx_tensor *
fx_out_meta (fx_op_call *call, int slot, fx_dtype dtype, int ndim, const int64_t *sizes)
{
  fx_tensor *t = fx_tensor_new_meta (dtype, ndim, sizes, NULL);
  call->outs[slot] = fx_value_tensor (t);
  if (slot + 1 > call->n_outs)
    call->n_outs = slot + 1;
  return t;
}

bool
fx_norm_dim (fx_op_call *call, int64_t *dim, int ndim)
{
  int64_t n = ndim > 0 ? ndim : 1;
  int64_t d = *dim;
  if (d < -n || d >= n)
    {
      fx_op_error (call, FX_ERR_INVALID, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                   (long long) -n, (long long) (n - 1), (long long) d);
      return false;
    }
  *dim = d < 0 ? d + n : d;
  return true;
}

fx_dtype
fx_arg_dtype_or (fx_op_call *call, int i, fx_dtype fallback)
{
  if (i < call->n_args && call->args[i].kind == FX_VALUE_DTYPE)
    return call->args[i].u.dtype;
  return fallback;
}

/* ---------------------------------------------------------------- iteration */

void
fx_iter_init (fx_iter *it, fx_tensor *const *ops, int nops)
{
  const fx_tensor *out = ops[0];
  it->nops = nops;
  int nd = out->ndim;
  int64_t st[4][FX_TENSOR_MAX_DIMS];
  for (int k = 0; k < nops; k++)
    {
      fx_broadcast_strides (ops[k], nd, out->sizes, st[k]);
      it->base[k] = fx_tensor_data (ops[k]);
    }
  /* drop size-1 dims, then merge dims that are contiguous for every operand */
  int m = 0;
  for (int d = 0; d < nd; d++)
    {
      if (out->sizes[d] == 1)
        continue;
      if (m > 0)
        {
          bool merge = true;
          for (int k = 0; k < nops; k++)
            if (it->strides[k][m - 1] != st[k][d] * out->sizes[d])
              merge = false;
          if (merge)
            {
              it->sizes[m - 1] *= out->sizes[d];
              for (int k = 0; k < nops; k++)
                it->strides[k][m - 1] = st[k][d];
              continue;
            }
        }
      it->sizes[m] = out->sizes[d];
      for (int k = 0; k < nops; k++)
        it->strides[k][m] = st[k][d];
      m++;
    }
  if (m == 0)
    {
      it->sizes[0] = fx_tensor_numel (out) == 0 ? 0 : 1;
      for (int k = 0; k < nops; k++)
        it->strides[k][0] = 0;
      m = 1;
    }
  for (int k = 0; k < nops; k++)
    {
      size_t isz = fx_dtype_size (ops[k]->dtype);
      for (int d = 0; d < m; d++)
        it->strides[k][d] *= (int64_t) isz;
    }
  it->ndim = m;
}

typedef struct
{
  const fx_iter *it;
  fx_iter_loop loop;
  void *ctx;
  int64_t outer;   /* product of all but the last dim */
} iter_job;

static void
iter_chunk (int64_t begin, int64_t end, void *data)
{
  iter_job *job = data;
  const fx_iter *it = job->it;
  int last = it->ndim - 1;
  int64_t inner = it->sizes[last];
  int64_t s[4];
  for (int k = 0; k < it->nops; k++)
    s[k] = it->strides[k][last];
  for (int64_t o = begin; o < end; o++)
    {
      char *ptrs[4];
      for (int k = 0; k < it->nops; k++)
        ptrs[k] = it->base[k];
      int64_t rem = o;
      for (int d = last - 1; d >= 0; d--)
        {
          int64_t idx = rem % it->sizes[d];
          rem /= it->sizes[d];
          for (int k = 0; k < it->nops; k++)
            ptrs[k] += idx * it->strides[k][d];
        }
      job->loop (ptrs, s, inner, job->ctx);
    }
}

void
fx_iter_run (const fx_iter *it, fx_iter_loop loop, void *ctx)
{
  int64_t outer = 1;
  for (int d = 0; d < it->ndim - 1; d++)
    outer *= it->sizes[d];
  int64_t inner = it->sizes[it->ndim - 1];
  if (outer == 0 || inner == 0)
    return;
  iter_job job = { it, loop, ctx, outer };
  if (outer == 1 && inner >= 65536)
    {
      /* one long run: split the inner dim itself */
      int last = it->ndim - 1;
      fx_iter sub = *it;
      (void) last;
      int64_t chunk = 32768;
      int64_t nchunks = (inner + chunk - 1) / chunk;
      sub.ndim = 2;
      sub.sizes[0] = nchunks;
      sub.sizes[1] = chunk;
      for (int k = 0; k < it->nops; k++)
        {
          sub.strides[k][1] = it->strides[k][0];
          sub.strides[k][0] = it->strides[k][0] * chunk;
        }
      /* the tail: run the exact remainder separately */
      int64_t full = inner / chunk;
      iter_job sj = { &sub, loop, ctx, full };
      fx_parallel_for (full, 1, iter_chunk, &sj);
      int64_t tail = inner - full * chunk;
      if (tail > 0)
        {
          char *ptrs[4];
          int64_t s[4];
          for (int k = 0; k < it->nops; k++)
            {
              ptrs[k] = it->base[k] + full * chunk * it->strides[k][0];
              s[k] = it->strides[k][0];
            }
          loop (ptrs, s, tail, ctx);
        }
      return;
    }
  /* at least 16K elements per thread: less work than that does not pay for waking one */
  int64_t grain = inner >= 16384 ? 1 : 16384 / (inner ? inner : 1);
  fx_parallel_for (outer, grain, iter_chunk, &job);
}

/* ---------------------------------------------------------------- threads */

static int cached_threads;

/* Set by fx_runtime_set_threads (benchmarks pin both sides to the same count); 0: from the environment. */
void
fx_parallel_set_threads (int n)
{
  cached_threads = n > 32 ? 32 : n > 0 ? n : 0;
}

int
fx_parallel_threads (void)
{
  int cached = cached_threads;
  if (cached == 0)
    {
      const char *env = getenv ("FX_NUM_THREADS");
      long n = env ? strtol (env, NULL, 10) : sysconf (_SC_NPROCESSORS_ONLN);
      if (n < 1)
        n = 1;
      if (n > 32)
        n = 32;
      cached = (int) n;
      cached_threads = cached;
    }
  return cached;
}

/* A pool of worker threads started on first use and kept: starting threads per op cost more than small ops
   themselves. One parallel loop at a time owns the pool; a loop started while it is busy (another thread's) or from
   inside a worker runs serially. The caller works too, so a loop finishes even when no worker could start. */
static struct
{
  pthread_mutex_t lock;
  pthread_cond_t start, done;
  int n_workers;
  unsigned long generation;
  bool busy;
  void (*fn) (int64_t, int64_t, void *);
  void *ctx;
  int64_t n, per;
  int n_chunks, next_chunk, chunks_done;
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, false, NULL, NULL,
           0, 0, 0, 0, 0 };

static __thread bool in_pool_worker;

/* Runs chunks of the current loop until none is left; called with pool.lock held. */
static void
pool_run_chunks (void)
{
  while (pool.next_chunk < pool.n_chunks)
    {
      int c = pool.next_chunk++;
      void (*fn) (int64_t, int64_t, void *) = pool.fn;
      void *ctx = pool.ctx;
      int64_t b = c * pool.per, e = b + pool.per < pool.n ? b + pool.per : pool.n;
      pthread_mutex_unlock (&pool.lock);
      if (b < e)
        fn (b, e, ctx);
      pthread_mutex_lock (&pool.lock);
      if (++pool.chunks_done == pool.n_chunks)
        pthread_cond_broadcast (&pool.done);
    }
}

static void *
pool_worker (void *data)
{
  in_pool_worker = true;
  /* the generation when it was started: the loop that started it comes after, and it joins that one */
  unsigned long seen = (unsigned long) (uintptr_t) data;
  pthread_mutex_lock (&pool.lock);
  for (;;)
    {
      while (pool.generation == seen)
        pthread_cond_wait (&pool.start, &pool.lock);
      seen = pool.generation;
      pool_run_chunks ();
    }
  return NULL;
}

void
fx_parallel_for (int64_t n, int64_t grain, void (*fn) (int64_t, int64_t, void *), void *ctx)
{
  int nt = fx_parallel_threads ();
  if (grain < 1)
    grain = 1;
  if (nt > 1 && n / grain >= nt)
    ;
  else if (nt > 1 && n >= 2 * grain)
    nt = (int) (n / grain);
  else
    nt = 1;
  if (nt <= 1 || n < 2 || in_pool_worker)
    {
      fn (0, n, ctx);
      return;
    }
  pthread_mutex_lock (&pool.lock);
  if (pool.busy)
    {
      pthread_mutex_unlock (&pool.lock);
      fn (0, n, ctx);
      return;
    }
  while (pool.n_workers < nt - 1)
    {
      pthread_t th;
      pthread_attr_t attr;
      pthread_attr_init (&attr);
      pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
      int rc = pthread_create (&th, &attr, pool_worker, (void *) (uintptr_t) pool.generation);
      pthread_attr_destroy (&attr);
      if (rc != 0)
        break;
      pool.n_workers++;
    }
  pool.busy = true;
  pool.fn = fn;
  pool.ctx = ctx;
  pool.n = n;
  pool.per = (n + nt - 1) / nt;
  pool.n_chunks = (int) ((n + pool.per - 1) / pool.per);
  pool.next_chunk = 0;
  pool.chunks_done = 0;
  pool.generation++;
  pthread_cond_broadcast (&pool.start);
  pool_run_chunks ();
  while (pool.chunks_done < pool.n_chunks)
    pthread_cond_wait (&pool.done, &pool.lock);
  pool.busy = false;
  pthread_mutex_unlock (&pool.lock);
}
