/* fx-pyparse.c: FX Python code (GraphModule.code, print_readable, Dynamo/AOT graphs, repro.py) to an fx_graph. */
#include "fx-pyparse-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the function being lowered */

typedef struct
{
  const fx_tok *tok;       /* the parameter's name */
  const char *target;      /* "x", "*args" */
  const char *raw;         /* target without stars: the name the body refers to */
  fx_expr *annot;
  fx_expr *defval;
  const char *rename;      /* from `name = target` at the top of the body */
  const fx_tok *desc;      /* expanded_def's `# PlainAOTInput(idx=0)` after the parameter */
} param;

typedef struct
{
  fx_node *node;           /* NULL while a parameter is not materialized */
  int param;               /* index into params, or -1 */
} binding;

/* An in-place statement (`a += b`, `a[i] = v`) waits for the `;  name = a` that names its node. */
typedef struct
{
  bool active;
  const fx_tok *tok;
  const char *op;          /* operator name: "iadd", "setitem" */
  fx_arg args[3];
  size_t n_args;
  fx_expr *receiver;       /* the expression the naming statement must repeat */
} pending_inplace;

typedef struct
{
  fx_pyparser *p;
  fx_graph *g;
  fx_py_map env;
  param *params;
  size_t n_params;
  size_t params_cap;       /* 0: params is exactly n_params long (the signature's array) */
  size_t n_sig_params;     /* the signature's parameters (the first of params), once leaves were added after them */
  /* After a pytree prologue, the placeholders are its targets in its order (AOT joint graphs flatten
     `primals, tangents` into primals_1, ..., tangents_1); NULL: every parameter in signature order. */
  size_t *leaf_order;
  size_t n_leaf_order;
  const fx_tok *first_leaf; /* the first leaf declared by an annotation line, until a prologue binds it */
  bool materialized;
  bool returned;
  const fx_tok *return_tok;
  const char *trace;       /* the stack trace of the nodes that follow, in the graph arena; NULL: none */
  fx_meta_extra *comment_extra; /* custom/recompute keys from the last provenance comment */
  size_t n_comment_extra;
  fx_expr *ret_annot;
  pending_inplace pending;
  size_t n_nodes_made;
} fn_ctx;

static fx_status lower_assign (fn_ctx *c, const fx_tok *name_tok, fx_expr *annot, fx_expr *value);

static const char *
tok_str (fx_pyparser *p, const fx_tok *t)
{
  return fx_arena_strndup (p->arena, p->lx.text + t->off, t->len);
}

static binding *
env_lookup (fn_ctx *c, const char *s, size_t n)
{
  fx_py_slot *slot = fx_py_map_find (&c->env, s, n);
  return slot ? slot->value : NULL;
}

static fx_status
env_define (fn_ctx *c, const fx_tok *name_tok, const char *s, size_t n, fx_node *node, int param_index)
{
  bool fresh;
  fx_py_slot *slot = fx_py_map_insert (&c->env, s, n, &fresh);
  if (!fresh)
    {
      const fx_tok *prev = &c->p->lx.toks[slot->tok];
      return fx_py_error (c->p, name_tok, "duplicate name '%.*s' (already defined on line %u)", (int) n, s, prev->line);
    }
  binding *b = fx_arena_alloc (c->p->arena, sizeof *b);
  b->node = node;
  b->param = param_index;
  slot->value = b;
  slot->tok = (uint32_t) (name_tok - c->p->lx.toks);
  return FX_OK;
}

/* ---------------------------------------------------------------- argument values */

/* Roots of dotted names that are Python objects FX prints by name (torch.float32, operator.add, an Enum member). */
static bool
is_global_root (const char *dotted)
{
  static const char *const roots[] = { "torch", "operator", "_operator", "builtins", "math", "typing", "pytree",
                                       "fx_pytree", "sympy", "torch_", "numpy", "np" };
  const char *dot = strchr (dotted, '.');
  size_t n = dot ? (size_t) (dot - dotted) : strlen (dotted);
  for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
    if (strlen (roots[i]) == n && strncmp (roots[i], dotted, n) == 0)
      return true;
  /* Enum classes (Cls.NAME) are capitalized */
  return dotted[0] >= 'A' && dotted[0] <= 'Z';
}

static fx_status eval_arg (fx_pyparser *p, fn_ctx *c, const fx_expr *e, fx_arg *out);

static fx_status
eval_seq (fx_pyparser *p, fn_ctx *c, fx_expr **items, size_t n, fx_arg **out)
{
  fx_arg *args = n ? fx_arena_alloc (p->arena, n * sizeof *args) : NULL;
  for (size_t i = 0; i < n; i++)
    {
      if (items[i] == NULL)
        {
          args[i] = fx_arg_none ();
          continue;
        }
      fx_status st = eval_arg (p, c, items[i], &args[i]);
      if (st != FX_OK)
        return st;
    }
  *out = args;
  return FX_OK;
}

static const fx_tok *
expr_tok (fx_pyparser *p, const fx_expr *e)
{
  return &p->lx.toks[e->tok_first];
}

/* device(type='cuda', index=0), device('cuda:0'), device('cuda', 0) */
static fx_status
eval_device (fx_pyparser *p, fn_ctx *c, const fx_expr *e, fx_arg *out)
{
  fx_arg type = fx_arg_none (), index = fx_arg_none ();
  fx_status st;
  if (e->n > 2)
    return fx_py_error (p, expr_tok (p, e), "device() takes at most 2 positional arguments");
  if (e->n >= 1 && (st = eval_arg (p, c, e->items[0], &type)) != FX_OK)
    return st;
  if (e->n >= 2 && (st = eval_arg (p, c, e->items[1], &index)) != FX_OK)
    return st;
  for (size_t i = 0; i < e->n_kw; i++)
    {
      fx_arg *dst = strcmp (e->kw_names[i], "type") == 0 ? &type : strcmp (e->kw_names[i], "index") == 0 ? &index : NULL;
      if (dst == NULL)
        return fx_py_error (p, expr_tok (p, e->kw_values[i]), "device() has no argument '%s'", e->kw_names[i]);
      if ((st = eval_arg (p, c, e->kw_values[i], dst)) != FX_OK)
        return st;
    }
  if (type.kind != FX_ARG_STR)
    return fx_py_error (p, expr_tok (p, e), "device() needs a device type string");
  if (index.kind != FX_ARG_NONE && index.kind != FX_ARG_INT)
    return fx_py_error (p, expr_tok (p, e), "device() index must be an int or None");
  char text[96];
  if (index.kind == FX_ARG_INT)
    snprintf (text, sizeof text, "%.40s:%lld", type.u.s, (long long) index.u.i);
  else
    snprintf (text, sizeof text, "%.80s", type.u.s);
  fx_device dev;
  if (!fx_device_parse (text, &dev))
    return fx_py_error (p, expr_tok (p, e), "unknown device '%s'", text);
  *out = fx_arg_device (dev);
  return FX_OK;
}

static fx_status
eval_call (fx_pyparser *p, fn_ctx *c, const fx_expr *e, fx_arg *out)
{
  char *callee = fx_py_dotted_name (p, e->a, p->arena);
  if (callee != NULL && (strcmp (callee, "device") == 0 || strcmp (callee, "torch.device") == 0))
    return eval_device (p, c, e, out);
  if (callee != NULL && strcmp (callee, "slice") == 0)
    {
      if (e->n < 1 || e->n > 3 || e->n_kw > 0)
        return fx_py_error (p, expr_tok (p, e), "slice() takes 1 to 3 positional arguments");
      fx_arg *parts;
      fx_status st = eval_seq (p, c, e->items, e->n, &parts);
      if (st != FX_OK)
        return st;
      fx_arg *items = fx_arena_alloc (p->arena, 3 * sizeof *items);
      items[0] = items[1] = items[2] = fx_arg_none ();
      if (e->n == 1)
        items[1] = parts[0];
      else
        for (size_t i = 0; i < e->n; i++)
          items[i] = parts[i];
      *out = (fx_arg) { .kind = FX_ARG_SLICE, .u.seq = { items, 3 } };
      return FX_OK;
    }
  if (callee != NULL && (strcmp (callee, "torch.Tensor") == 0 || strcmp (callee, "torch.Size") == 0))
    {
      /* A tensor constant as _get_repr writes it (torch.Tensor(size=[2, 3], dtype=float32)): kept as text. */
      *out = fx_arg_global (fx_py_expr_text (p, e, p->arena));
      return FX_OK;
    }
  return fx_py_error (p, expr_tok (p, e),
                      "a call inside an argument is not FX code (FX writes every call as its own node)");
}

static fx_status
eval_name (fx_pyparser *p, fn_ctx *c, const fx_expr *e, fx_arg *out)
{
  if (fx_expr_is_name (e, "None"))
    *out = fx_arg_none ();
  else if (fx_expr_is_name (e, "True"))
    *out = fx_arg_bool (true);
  else if (fx_expr_is_name (e, "False"))
    *out = fx_arg_bool (false);
  else if (fx_expr_is_name (e, "inf"))
    *out = fx_arg_float (INFINITY);
  else if (fx_expr_is_name (e, "nan"))
    *out = fx_arg_float (NAN);
  else if (fx_expr_is_name (e, "Ellipsis"))
    *out = (fx_arg) { .kind = FX_ARG_ELLIPSIS };
  else
    {
      binding *b = c ? env_lookup (c, e->s, e->slen) : NULL;
      if (b == NULL || b->node == NULL)
        return fx_py_error (p, expr_tok (p, e), "name '%.*s' is not defined", (int) e->slen, e->s);
      *out = fx_arg_node (b->node);
    }
  return FX_OK;
}

static fx_status
eval_attr (fx_pyparser *p, fn_ctx *c, const fx_expr *e, fx_arg *out)
{
  char *dotted = fx_py_dotted_name (p, e, p->arena);
  if (dotted == NULL)
    return fx_py_error (p, expr_tok (p, e), "unsupported attribute access in an argument");
  const fx_expr *root = e;
  while (root->kind == E_ATTR)
    root = root->a;
  if (c != NULL && env_lookup (c, root->s, root->slen) != NULL)
    return fx_py_error (p, expr_tok (p, e),
                        "attribute of a node inside an argument (FX writes this as its own getattr node)");
  if (strncmp (dotted, "torch.", 6) == 0 && strchr (dotted + 6, '.') == NULL)
    {
      fx_dtype dt = fx_dtype_from_name (dotted + 6);
      fx_layout layout;
      fx_memfmt fmt;
      /* Only torch's own spellings: fx_dtype_from_name also knows abbreviations such as f32. */
      if (dt != FX_DTYPE_UNKNOWN && strcmp (dotted + 6, fx_dtype_abbr (dt)) != 0
          && strcmp (dotted + 6, fx_dtype_c10_name (dt)) != 0)
        {
          *out = fx_arg_dtype (dt);
          return FX_OK;
        }
      if (fx_layout_from_name (dotted + 6, &layout))
        {
          *out = fx_arg_layout (layout);
          return FX_OK;
        }
      if (fx_memfmt_from_name (dotted + 6, &fmt))
        {
          *out = fx_arg_memfmt (fmt);
          return FX_OK;
        }
    }
  if (!is_global_root (dotted))
    return fx_py_error (p, expr_tok (p, e), "name '%.*s' is not defined", (int) root->slen, root->s);
  *out = fx_arg_global (dotted);
  return FX_OK;
}

static fx_status
eval_unary (fx_pyparser *p, fn_ctx *c, const fx_expr *e, fx_arg *out)
{
  const fx_expr *a = e->a;
  if (e->op == OP_MINUS && a->kind == E_BIGINT && strcmp (a->s, "9223372036854775808") == 0)
    {
      *out = fx_arg_int (INT64_MIN);
      return FX_OK;
    }
  if (a->kind == E_BIGINT && (e->op == OP_MINUS || e->op == OP_PLUS))
    {
      *out = fx_arg_sym (e->op == OP_MINUS ? fx_arena_printf (p->arena, "-%s", a->s) : a->s);
      return FX_OK;
    }
  fx_arg v;
  fx_status st = eval_arg (p, c, a, &v);
  if (st != FX_OK)
    return st;
  if (v.kind == FX_ARG_INT && e->op != OP_TILDE)
    *out = fx_arg_int (e->op == OP_MINUS ? (int64_t) (0 - (uint64_t) v.u.i) : v.u.i);
  else if (v.kind == FX_ARG_INT)
    *out = fx_arg_int (~v.u.i);
  else if (v.kind == FX_ARG_FLOAT && e->op != OP_TILDE)
    *out = fx_arg_float (e->op == OP_MINUS ? -v.u.f : v.u.f);
  else if (v.kind == FX_ARG_BOOL && e->op != OP_TILDE)
    *out = fx_arg_int (e->op == OP_MINUS ? -(int64_t) v.u.b : (int64_t) v.u.b);
  else if (v.kind == FX_ARG_NODE)
    return fx_py_error (p, expr_tok (p, e), "an operator on a node inside an argument (FX writes it as its own node)");
  else
    return fx_py_error (p, expr_tok (p, e), "unsupported unary '%s' on this value", fx_py_op_text (e->op));
  return FX_OK;
}

static fx_status
eval_arg (fx_pyparser *p, fn_ctx *c, const fx_expr *e, fx_arg *out)
{
  fx_status st;
  switch (e->kind)
    {
    case E_NAME:
      return eval_name (p, c, e, out);
    case E_INT:
      *out = fx_arg_int (e->i);
      return FX_OK;
    case E_BIGINT:
      *out = fx_arg_sym (e->s);
      return FX_OK;
    case E_FLOAT:
      *out = fx_arg_float (e->f);
      return FX_OK;
    case E_STR:
      if (memchr (e->s, '\0', e->slen) != NULL)
        return fx_py_error (p, expr_tok (p, e), "NUL characters in strings are not supported");
      *out = fx_arg_str (e->s);
      return FX_OK;
    case E_ELLIPSIS:
      *out = (fx_arg) { .kind = FX_ARG_ELLIPSIS };
      return FX_OK;
    case E_TUPLE:
    case E_LIST:
      {
        fx_arg *items;
        for (size_t i = 0; i < e->n; i++)
          if (e->items[i]->kind == E_STARRED)
            return fx_py_error (p, expr_tok (p, e->items[i]), "starred items are not supported in FX arguments");
        if ((st = eval_seq (p, c, e->items, e->n, &items)) != FX_OK)
          return st;
        *out = e->kind == E_TUPLE ? fx_arg_tuple (items, e->n) : fx_arg_list (items, e->n);
        return FX_OK;
      }
    case E_DICT:
      {
        fx_dict_entry *items = e->n ? fx_arena_alloc (p->arena, e->n * sizeof *items) : NULL;
        for (size_t i = 0; i < e->n; i++)
          {
            if ((st = eval_arg (p, c, e->items[2 * i], &items[i].key)) != FX_OK)
              return st;
            if ((st = eval_arg (p, c, e->items[2 * i + 1], &items[i].value)) != FX_OK)
              return st;
          }
        *out = fx_arg_dict (items, e->n);
        return FX_OK;
      }
    case E_SLICE:
      {
        fx_arg *items;
        if ((st = eval_seq (p, c, e->items, 3, &items)) != FX_OK)
          return st;
        *out = (fx_arg) { .kind = FX_ARG_SLICE, .u.seq = { items, 3 } };
        return FX_OK;
      }
    case E_ATTR:
      return eval_attr (p, c, e, out);
    case E_CALL:
      return eval_call (p, c, e, out);
    case E_UNARY:
      return eval_unary (p, c, e, out);
    case E_BINOP:
    case E_COMPARE:
      return fx_py_error (p, expr_tok (p, e),
                          "an operator inside an argument is not FX code (FX writes each operation as its own node)");
    case E_SUBSCRIPT:
      return fx_py_error (p, expr_tok (p, e),
                          "a subscript inside an argument is not FX code (FX writes it as its own getitem node)");
    case E_STARRED:
    default:
      return fx_py_error (p, expr_tok (p, e), "unsupported argument");
    }
}

fx_status
fx_py_eval_const (fx_pyparser *p, const fx_expr *e, fx_arg *out)
{
  return eval_arg (p, NULL, e, out);
}

/* ---------------------------------------------------------------- targets */

static const char *const python_builtins[] = {
  "abs", "all", "any", "bool", "callable", "chr", "dict", "divmod", "enumerate", "float", "getattr", "hasattr",
  "hash", "id", "int", "isinstance", "issubclass", "iter", "len", "list", "max", "min", "next", "ord", "pow",
  "print", "range", "repr", "reversed", "round", "setattr", "sorted", "str", "sum", "tuple", "type", "zip",
};

static bool
is_python_builtin (const char *name)
{
  for (size_t i = 0; i < sizeof python_builtins / sizeof python_builtins[0]; i++)
    if (strcmp (python_builtins[i], name) == 0)
      return true;
  return false;
}

/* self.a.b, getattr(self.layers, "0"): the module path ("a.b", "layers.0"); "" for self itself; NULL otherwise. */
static char *
self_path (fx_pyparser *p, const fx_expr *e)
{
  if (e->kind == E_NAME)
    return fx_expr_is_name (e, "self") ? fx_arena_strdup (p->arena, "") : NULL;
  const char *part = NULL;
  size_t part_len = 0;
  const fx_expr *base = NULL;
  if (e->kind == E_ATTR)
    {
      base = e->a;
      part = e->s;
      part_len = e->slen;
    }
  else if (e->kind == E_CALL && fx_expr_is_name (e->a, "getattr") && e->n == 2 && e->n_kw == 0
           && e->items[1]->kind == E_STR)
    {
      base = e->items[0];
      part = e->items[1]->s;
      part_len = e->items[1]->slen;
    }
  else
    return NULL;
  char *prefix = self_path (p, base);
  if (prefix == NULL)
    return NULL;
  if (prefix[0] == '\0')
    return fx_arena_strndup (p->arena, part, part_len);
  return fx_arena_printf (p->arena, "%s.%.*s", prefix, (int) part_len, part);
}

static const char *
operator_name (int op)
{
  switch (op)
    {
    case OP_PLUS: return "add";
    case OP_MINUS: return "sub";
    case OP_STAR: return "mul";
    case OP_SLASH: return "truediv";
    case OP_DSLASH: return "floordiv";
    case OP_PERCENT: return "mod";
    case OP_DSTAR: return "pow";
    case OP_LSHIFT: return "lshift";
    case OP_RSHIFT: return "rshift";
    case OP_AMPER: return "and_";
    case OP_VBAR: return "or_";
    case OP_CIRCUMFLEX: return "xor";
    case OP_AT: return "matmul";
    case OP_EQEQUAL: return "eq";
    case OP_NOTEQUAL: return "ne";
    case OP_LESS: return "lt";
    case OP_GREATER: return "gt";
    case OP_LESSEQUAL: return "le";
    case OP_GREATEREQUAL: return "ge";
    case OP_PLUSEQ: return "iadd";
    case OP_MINUSEQ: return "isub";
    case OP_STAREQ: return "imul";
    case OP_SLASHEQ: return "itruediv";
    case OP_DSLASHEQ: return "ifloordiv";
    case OP_PERCENTEQ: return "imod";
    case OP_DSTAREQ: return "ipow";
    case OP_ATEQ: return "imatmul";
    case OP_AMPEREQ: return "iand";
    case OP_VBAREQ: return "ior";
    case OP_CIRCUMFLEXEQ: return "ixor";
    case OP_LSHIFTEQ: return "ilshift";
    case OP_RSHIFTEQ: return "irshift";
    default: return NULL;
    }
}

/* ---------------------------------------------------------------- provenance comments */

/* "# File: /p.py:31 in forward, code: return x" (optionally after " Annotation: {...}" and " # recompute: X"), or
   "# No stacktrace found for following nodes". Other comments are ignored. */
static void
handle_comment (fn_ctx *c, const fx_tok *t)
{
  fx_pyparser *p = c->p;
  const char *s = p->lx.text + t->off + 1;
  size_t n = t->len - 1;
  static const char no_trace[] = " No stacktrace found for following nodes";
  const char *summary = NULL;
  size_t prefix_len = 0;
  bool none = false;

  for (size_t i = 0; i + 7 <= n; i++)
    if (memcmp (s + i, " File: ", 7) == 0)
      {
        summary = s + i + 7;
        prefix_len = i;
        break;
      }
  if (summary == NULL)
    {
      size_t k = sizeof no_trace - 1;
      if (n >= k && memcmp (s + n - k, no_trace, k) == 0)
        {
          none = true;
          prefix_len = n - k;
        }
      else
        return;
    }

  /* The prefix: " Annotation: <custom>" then " # recompute: NAME" / " # ac_graph_id: ID[ - NAME]". */
  const char *pre = s;
  size_t pre_n = prefix_len;
  static const char annotation[] = " Annotation: ";
  size_t n_extra = 0;
  fx_meta_extra extra[3];
  if (pre_n > 0)
    {
      const char *custom_end = pre + pre_n;
      const char *rc = NULL;
      for (size_t i = 0; i + 3 <= pre_n; i++)
        if (memcmp (pre + i, " # ", 3) == 0
            && (pre_n - i >= 14 && (memcmp (pre + i, " # recompute: ", 14) == 0
                                    || (pre_n - i >= 16 && memcmp (pre + i, " # ac_graph_id: ", 16) == 0))))
          rc = pre + i;
      if (rc != NULL)
        custom_end = rc;
      if (pre_n >= sizeof annotation - 1 && memcmp (pre, annotation, sizeof annotation - 1) == 0)
        {
          const char *a = pre + sizeof annotation - 1;
          extra[n_extra++] = (fx_meta_extra) { "custom", fx_arena_strndup (c->g->arena, a, (size_t) (custom_end - a)) };
        }
      else if (custom_end != pre)
        return; /* not a provenance comment after all */
      if (rc != NULL)
        {
          const char *end = pre + pre_n;
          if (memcmp (rc, " # recompute: ", 14) == 0)
            extra[n_extra++] = (fx_meta_extra) { "recompute", fx_arena_strndup (c->g->arena, rc + 14,
                                                                                  (size_t) (end - rc - 14)) };
          else
            {
              const char *id = rc + 16;
              const char *dash = NULL;
              for (const char *q = id; q + 3 <= end; q++)
                if (memcmp (q, " - ", 3) == 0)
                  {
                    dash = q;
                    break;
                  }
              extra[n_extra++] = (fx_meta_extra) { "ac_graph_id",
                                                   fx_arena_strndup (c->g->arena, id, (size_t) ((dash ? dash : end) - id)) };
              if (dash != NULL)
                extra[n_extra++] = (fx_meta_extra) { "recompute", fx_arena_strndup (c->g->arena, dash + 3,
                                                                                      (size_t) (end - dash - 3)) };
            }
        }
    }

  if (none)
    c->trace = NULL;
  else
    {
      /* {file}:{lineno} in {name}, code: {code} */
      const char *end = s + n;
      const char *code_sep = NULL;
      for (const char *q = summary; q + 7 <= end; q++)
        if (memcmp (q, ", code:", 7) == 0)
          {
            code_sep = q;
            break;
          }
      if (code_sep == NULL)
        return;
      const char *in_sep = NULL;
      for (const char *q = summary; q + 4 <= code_sep; q++)
        if (memcmp (q, " in ", 4) == 0)
          in_sep = q;
      if (in_sep == NULL)
        return;
      const char *colon = NULL;
      for (const char *q = summary; q < in_sep; q++)
        if (*q == ':')
          colon = q;
      if (colon == NULL || colon + 1 >= in_sep)
        return;
      for (const char *q = colon + 1; q < in_sep; q++)
        if (*q < '0' || *q > '9')
          return;
      const char *code = code_sep + 7;
      if (code < end && *code == ' ')
        code++;
      c->trace = fx_arena_printf (c->g->arena, "  File \"%.*s\", line %.*s, in %.*s\n    %.*s\n",
                                  (int) (colon - summary), summary, (int) (in_sep - colon - 1), colon + 1,
                                  (int) (code_sep - in_sep - 4), in_sep + 4, (int) (end - code), code);
    }
  c->n_comment_extra = n_extra;
  c->comment_extra = NULL;
  if (n_extra > 0)
    {
      c->comment_extra = fx_arena_alloc (c->g->arena, n_extra * sizeof *c->comment_extra);
      memcpy (c->comment_extra, extra, n_extra * sizeof *extra);
    }
}

/* ---------------------------------------------------------------- nodes */

static fx_status
set_annotation (fn_ctx *c, fx_node *node, fx_expr *annot)
{
  if (annot == NULL)
    return FX_OK;
  if (annot->kind == E_STR)
    {
      fx_val val;
      if (fx_val_parse_annotation (annot->s, c->g->arena, &val))
        node->meta.val = val;
      else
        {
          /* An annotation this engine does not model (a DTensor spec, ...): kept as text. */
          memset (&node->meta.val, 0, sizeof node->meta.val);
          node->meta.val.kind = FX_VAL_OTHER;
          node->meta.val.text = fx_arena_strdup (c->g->arena, annot->s);
        }
    }
  else
    node->type_expr = fx_py_expr_text (c->p, annot, c->g->arena);
  return FX_OK;
}

static fx_status
make_node (fn_ctx *c, const fx_tok *name_tok, fx_opcode op, fx_target target, const fx_arg *args, size_t n_args,
           const fx_kwarg *kwargs, size_t n_kwargs, fx_expr *annot, fx_node **out)
{
  fx_pyparser *p = c->p;
  const char *name = name_tok ? tok_str (p, name_tok) : NULL;
  if (name_tok != NULL && env_lookup (c, name, name_tok->len) != NULL)
    {
      fx_py_slot *slot = fx_py_map_find (&c->env, name, name_tok->len);
      return fx_py_error (p, name_tok, "duplicate name '%s' (already defined on line %u)", name,
                          p->lx.toks[slot->tok].line);
    }
  fx_node *node = fx_graph_create_node (c->g, op, target, args, n_args, kwargs, n_kwargs, name);
  if (name_tok != NULL)
    {
      fx_status st = env_define (c, name_tok, p->lx.text + name_tok->off, name_tok->len, node, -1);
      if (st != FX_OK)
        return st;
    }
  if (op != FX_OP_PLACEHOLDER && op != FX_OP_OUTPUT)
    {
      node->meta.stack_trace = c->trace;
      for (size_t i = 0; i < c->n_comment_extra; i++)
        fx_meta_set_extra (c->g, &node->meta, c->comment_extra[i].key, c->comment_extra[i].text);
    }
  c->n_nodes_made++;
  *out = node;
  return set_annotation (c, node, annot);
}

/* A comment's text without the '#' and the spaces around it. */
static const char *
comment_text (fx_pyparser *p, const fx_tok *t)
{
  const char *s = p->lx.text + t->off + 1;
  const char *e = p->lx.text + t->off + t->len;
  while (s < e && (*s == ' ' || *s == '\t'))
    s++;
  while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
    e--;
  return fx_arena_strndup (p->arena, s, (size_t) (e - s));
}

/* Creates the placeholder nodes, in signature order, with the names the `name = target` lines gave them. */
static fx_status
materialize (fn_ctx *c)
{
  if (c->materialized)
    return FX_OK;
  /* A leaf declared by an annotation line must be bound by a pytree prologue before the first node. */
  if (c->first_leaf != NULL && c->leaf_order == NULL)
    return fx_py_error (c->p, c->first_leaf,
                        "an annotation without a value must name a parameter (before the first node)");
  c->materialized = true;
  if (c->leaf_order != NULL)
    {
      /* _PyTreeCodeGen: the signature's own parameters, which the prologue flattens */
      fx_buf args;
      fx_buf_init (&args);
      for (size_t k = 0; k < (c->params_cap ? c->n_sig_params : c->n_params); k++)
        fx_buf_printf (&args, "%s%s", k ? ", " : "", c->params[k].target);
      c->g->pytree_args = fx_arena_strdup (c->g->arena, args.len ? args.data : "");
      fx_buf_free (&args);
    }
  for (size_t k = 0; k < (c->leaf_order ? c->n_leaf_order : c->n_params); k++)
    {
      param *pa = &c->params[c->leaf_order ? c->leaf_order[k] : k];
      const char *name = pa->rename ? pa->rename : pa->raw;
      fx_node *node = fx_graph_create_node (c->g, FX_OP_PLACEHOLDER, fx_target_str (pa->target), NULL, 0, NULL, 0,
                                            name);
      binding *b = env_lookup (c, pa->raw, strlen (pa->raw));
      if (b != NULL)
        b->node = node;
      if (pa->rename != NULL)
        {
          binding *r = env_lookup (c, pa->rename, strlen (pa->rename));
          if (r != NULL)
            r->node = node;
        }
      if (pa->defval != NULL)
        {
          fx_arg v;
          fx_status st = eval_arg (c->p, c, pa->defval, &v);
          if (st != FX_OK)
            return st;
          node->default_value = fx_arena_alloc (c->g->arena, sizeof *node->default_value);
          *node->default_value = fx_arg_copy (c->g->arena, &v);
        }
      set_annotation (c, node, pa->annot);
      if (pa->desc != NULL)
        fx_meta_set_extra (c->g, &node->meta, "desc", comment_text (c->p, pa->desc));
    }
  return FX_OK;
}

static fx_status
eval_call_args (fn_ctx *c, const fx_expr *call, fx_arg *first, fx_arg **args, size_t *n_args, fx_kwarg **kwargs)
{
  fx_pyparser *p = c->p;
  size_t off = first ? 1 : 0;
  fx_arg *a = fx_arena_alloc (p->arena, (call->n + off + 1) * sizeof *a);
  if (first)
    a[0] = *first;
  for (size_t i = 0; i < call->n; i++)
    {
      if (call->items[i]->kind == E_STARRED)
        return fx_py_error (p, expr_tok (p, call->items[i]), "starred arguments are not supported in FX code");
      fx_status st = eval_arg (p, c, call->items[i], &a[off + i]);
      if (st != FX_OK)
        return st;
    }
  fx_kwarg *kw = fx_arena_alloc (p->arena, (call->n_kw + 1) * sizeof *kw);
  for (size_t i = 0; i < call->n_kw; i++)
    {
      kw[i].name = call->kw_names[i];
      fx_status st = eval_arg (p, c, call->kw_values[i], &kw[i].value);
      if (st != FX_OK)
        return st;
    }
  *args = a;
  *n_args = call->n + off;
  *kwargs = kw;
  return FX_OK;
}

/* The right-hand side of `name = value` as a node. */
static fx_status
lower_value (fn_ctx *c, const fx_tok *name_tok, fx_expr *annot, fx_expr *value)
{
  fx_pyparser *p = c->p;
  fx_node *node;
  fx_status st;
  fx_arg args[2];

  switch (value->kind)
    {
    case E_CALL:
      {
        fx_expr *callee = value->a;
        fx_arg *a;
        size_t n;
        fx_kwarg *kw;
        /* self.sub.fc(x), getattr(self.layers, "0")(x) */
        char *path = self_path (p, callee);
        if (path != NULL && path[0] == '\0')
          return fx_py_error (p, expr_tok (p, callee), "calling the module itself is not FX code");
        if (path != NULL)
          {
            if ((st = eval_call_args (c, value, NULL, &a, &n, &kw)) != FX_OK)
              return st;
            return make_node (c, name_tok, FX_OP_CALL_MODULE, fx_target_str (path), a, n, kw, value->n_kw, annot,
                              &node);
          }
        if (callee->kind == E_ATTR && callee->a->kind == E_NAME)
          {
            binding *b = env_lookup (c, callee->a->s, callee->a->slen);
            if (b != NULL && b->node != NULL)
              {
                fx_arg recv = fx_arg_node (b->node);
                if ((st = eval_call_args (c, value, &recv, &a, &n, &kw)) != FX_OK)
                  return st;
                const char *meth = fx_arena_strndup (p->arena, callee->s, callee->slen);
                return make_node (c, name_tok, FX_OP_CALL_METHOD, fx_target_str (meth), a, n, kw, value->n_kw,
                                  annot, &node);
              }
          }
        if (callee->kind == E_ATTR && callee->a->kind != E_NAME && callee->a->kind != E_ATTR)
          return fx_py_error (p, expr_tok (p, callee),
                              "a method call on an expression is not FX code (the receiver must be a node name)");
        char *dotted = fx_py_dotted_name (p, callee, p->arena);
        if (dotted == NULL)
          return fx_py_error (p, expr_tok (p, callee), "unsupported callee: expected a function or method name");
        if (callee->kind == E_NAME)
          {
            binding *b = env_lookup (c, callee->s, callee->slen);
            if (b != NULL)
              return fx_py_error (p, expr_tok (p, callee), "'%s' is a node, not a function", dotted);
          }
        else
          {
            const fx_expr *root = callee;
            while (root->kind == E_ATTR)
              root = root->a;
            if (env_lookup (c, root->s, root->slen) != NULL)
              return fx_py_error (p, expr_tok (p, callee),
                                  "a method of an attribute of a node is not FX code (FX writes a getattr node first)");
          }
        fx_target target;
        if (strncmp (dotted, "torch.ops.", 10) == 0 && strchr (dotted + 10, '.') != NULL)
          target = fx_target_op (dotted + 10);
        else if (strncmp (dotted, "operator.", 9) == 0 && strchr (dotted + 9, '.') == NULL)
          target = fx_target_operator (dotted + 9);
        else if (strncmp (dotted, "_operator.", 10) == 0 && strchr (dotted + 10, '.') == NULL)
          target = fx_target_operator (dotted + 10);
        else if (strncmp (dotted, "builtins.", 9) == 0 && strchr (dotted + 9, '.') == NULL)
          target = fx_target_builtin (dotted + 9);
        else if (strchr (dotted, '.') == NULL && is_python_builtin (dotted))
          target = fx_target_builtin (dotted);
        else
          target = fx_target_function (dotted);
        if ((st = eval_call_args (c, value, NULL, &a, &n, &kw)) != FX_OK)
          return st;
        return make_node (c, name_tok, FX_OP_CALL_FUNCTION, target, a, n, kw, value->n_kw, annot, &node);
      }
    case E_BINOP:
    case E_COMPARE:
      if ((st = eval_arg (p, c, value->a, &args[0])) != FX_OK || (st = eval_arg (p, c, value->b, &args[1])) != FX_OK)
        return st;
      return make_node (c, name_tok, FX_OP_CALL_FUNCTION, fx_target_operator (operator_name (value->op)), args, 2,
                        NULL, 0, annot, &node);
    case E_UNARY:
      {
        /* -x on a node is operator.neg; -1 is a constant, which FX never assigns to a name */
        if ((st = eval_arg (p, c, value->a, &args[0])) != FX_OK)
          return st;
        if (args[0].kind != FX_ARG_NODE)
          return fx_py_error (p, expr_tok (p, value), "assigning a constant to a name is not FX code");
        const char *op = value->op == OP_MINUS ? "neg" : value->op == OP_PLUS ? "pos" : "invert";
        return make_node (c, name_tok, FX_OP_CALL_FUNCTION, fx_target_operator (op), args, 1, NULL, 0, annot, &node);
      }
    case E_SUBSCRIPT:
      if ((st = eval_arg (p, c, value->a, &args[0])) != FX_OK || (st = eval_arg (p, c, value->b, &args[1])) != FX_OK)
        return st;
      return make_node (c, name_tok, FX_OP_CALL_FUNCTION, fx_target_operator ("getitem"), args, 2, NULL, 0, annot,
                        &node);
    case E_ATTR:
      {
        char *path = self_path (p, value);
        if (path != NULL)
          return make_node (c, name_tok, FX_OP_GET_ATTR, fx_target_str (path), NULL, 0, NULL, 0, annot, &node);
        if (value->a->kind == E_NAME)
          {
            binding *b = env_lookup (c, value->a->s, value->a->slen);
            if (b != NULL && b->node != NULL)
              {
                /* x.shape: builtins.getattr(x, "shape") */
                args[0] = fx_arg_node (b->node);
                args[1] = fx_arg_str (fx_arena_strndup (p->arena, value->s, value->slen));
                return make_node (c, name_tok, FX_OP_CALL_FUNCTION, fx_target_builtin ("getattr"), args, 2, NULL, 0,
                                  annot, &node);
              }
          }
        return fx_py_error (p, expr_tok (p, value),
                            "unsupported attribute: expected self.<attribute> or <node>.<attribute>");
      }
    case E_NAME:
      {
        binding *b = env_lookup (c, value->s, value->slen);
        if (b == NULL)
          return fx_py_error (p, expr_tok (p, value), "name '%.*s' is not defined", (int) value->slen, value->s);
        return fx_py_error (p, expr_tok (p, value),
                            "'%.*s' is already a node: copying a value to another name is not FX code",
                            (int) value->slen, value->s);
      }
    case E_INT: case E_BIGINT: case E_FLOAT: case E_STR: case E_ELLIPSIS: case E_TUPLE: case E_LIST: case E_DICT:
    case E_SLICE: case E_STARRED:
    default:
      return fx_py_error (p, expr_tok (p, value), "assigning a constant to a name is not FX code");
    }
}

static fx_status
flush_pending (fn_ctx *c, const fx_tok *name_tok, fx_expr *annot)
{
  if (!c->pending.active)
    return FX_OK;
  c->pending.active = false;
  fx_node *node;
  return make_node (c, name_tok, FX_OP_CALL_FUNCTION, fx_target_operator (c->pending.op), c->pending.args,
                    c->pending.n_args, NULL, 0, annot, &node);
}

static bool
same_expr_text (fx_pyparser *p, const fx_expr *a, const fx_expr *b)
{
  const char *ta = fx_py_expr_text (p, a, p->arena);
  const char *tb = fx_py_expr_text (p, b, p->arena);
  return strcmp (ta, tb) == 0;
}

/* `name [: annot] = value`, the statement FX code consists of. */
static fx_status
lower_assign (fn_ctx *c, const fx_tok *name_tok, fx_expr *annot, fx_expr *value)
{
  fx_pyparser *p = c->p;

  /* The `;  name = a` that names a pending in-place node. */
  if (c->pending.active)
    {
      if (same_expr_text (p, value, c->pending.receiver))
        return flush_pending (c, name_tok, annot);
      fx_status st = flush_pending (c, NULL, NULL);
      if (st != FX_OK)
        return st;
    }

  /* `l_x_ = L_x_`: a placeholder's node name differs from its target. */
  if (!c->materialized && value->kind == E_NAME && annot == NULL)
    {
      binding *b = env_lookup (c, value->s, value->slen);
      if (b != NULL && b->param >= 0 && b->node == NULL)
        {
          param *pa = &c->params[b->param];
          if (pa->rename != NULL)
            return fx_py_error (p, name_tok, "placeholder '%s' is renamed twice", pa->raw);
          const char *name = tok_str (p, name_tok);
          if (strcmp (name, pa->raw) != 0)
            {
              fx_status st = env_define (c, name_tok, p->lx.text + name_tok->off, name_tok->len, NULL, b->param);
              if (st != FX_OK)
                return st;
              pa->rename = name;
            }
          return FX_OK;
        }
    }
  fx_status st = materialize (c);
  if (st != FX_OK)
    return st;
  return lower_value (c, name_tok, annot, value);
}

/* ;  a = b = None: the names must exist. */
static fx_status
check_dead_values (fn_ctx *c, fx_expr **targets, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      binding *b = env_lookup (c, targets[i]->s, targets[i]->slen);
      if (b == NULL)
        return fx_py_error (c->p, expr_tok (c->p, targets[i]), "name '%.*s' is not defined (in a dead-value list)",
                            (int) targets[i]->slen, targets[i]->s);
    }
  return FX_OK;
}

/* _PyTreeCodeGen's prologue `x, y, = fx_pytree.tree_flatten_spec(([x, y], {}), self._in_spec)`. */
static bool
is_pytree_flatten (fx_pyparser *p, const fx_expr *value)
{
  if (value->kind != E_CALL)
    return false;
  char *callee = fx_py_dotted_name (p, value->a, p->arena);
  return callee != NULL && (strcmp (callee, "fx_pytree.tree_flatten_spec") == 0
                            || strcmp (callee, "pytree.tree_leaves") == 0);
}

/* A placeholder that the signature does not name: a leaf of a pytree parameter (AOT's `primals_1: "f32[8]"` under
   `forward(self, primals, tangents)`, AOTInductor's `arg2_1` bound by the prologue). */
static fx_status
add_leaf_param (fn_ctx *c, const fx_expr *name, fx_expr *annot, int *index)
{
  fx_pyparser *p = c->p;
  const fx_tok *t = expr_tok (p, name);

  if (c->params_cap == 0)
    c->n_sig_params = c->n_params;
  if (c->n_params + 1 > c->params_cap)
    {
      size_t cap = (c->n_params + 1) * 2;
      param *grown = fx_arena_alloc (p->arena, cap * sizeof *grown);
      if (c->n_params)
        memcpy (grown, c->params, c->n_params * sizeof *grown);
      c->params = grown;
      c->params_cap = cap;
    }
  param pa = { .tok = t, .annot = annot };
  pa.raw = fx_arena_strndup (p->arena, name->s, name->slen);
  pa.target = pa.raw;
  pa.desc = fx_py_bracket_comment (&p->lx, t->line, t->off);
  c->params[c->n_params] = pa;
  fx_status st = env_define (c, t, pa.raw, strlen (pa.raw), NULL, (int) c->n_params);
  if (st != FX_OK)
    return st;
  *index = (int) c->n_params++;
  return FX_OK;
}

/* The flattened names become the placeholders, in the prologue's order: the parameters themselves (Dynamo's
   `x, y, = fx_pytree.tree_flatten_spec([x, y], ...)`), or leaves of pytree parameters, declared by an annotation
   line before it or by the prologue itself. */
static fx_status
check_flatten_targets (fn_ctx *c, const fx_expr *targets)
{
  size_t *order = fx_arena_alloc (c->p->arena, (targets->n + 1) * sizeof *order);

  if (c->materialized)
    return fx_py_error (c->p, expr_tok (c->p, targets), "the pytree prologue must come before the first node");
  for (size_t i = 0; i < targets->n; i++)
    {
      const fx_expr *t = targets->items[i];
      binding *b = t->kind == E_NAME ? env_lookup (c, t->s, t->slen) : NULL;
      int index = b != NULL ? b->param : -1;

      if (t->kind != E_NAME || (b != NULL && b->param < 0))
        return fx_py_error (c->p, expr_tok (c->p, t), "the pytree prologue binds '%s', which is not a parameter",
                            fx_py_expr_text (c->p, t, c->p->arena));
      if (b == NULL)
        {
          fx_status st = add_leaf_param (c, t, NULL, &index);
          if (st != FX_OK)
            return st;
        }
      for (size_t k = 0; k < i; k++)
        if (order[k] == (size_t) index)
          return fx_py_error (c->p, expr_tok (c->p, t), "the pytree prologue binds '%s' twice",
                              fx_py_expr_text (c->p, t, c->p->arena));
      order[i] = (size_t) index;
    }
  c->leaf_order = order;
  c->n_leaf_order = targets->n;
  return FX_OK;
}

/* _PyTreeCodeGen's `x: "f32[2]"; y: "f32[3]"; `: a parameter's annotation on its own, or a pytree leaf's
   declaration before the prologue that binds it. */
static fx_status
annotate_param (fn_ctx *c, const fx_expr *target, fx_expr *annot)
{
  binding *b = target->kind == E_NAME ? env_lookup (c, target->s, target->slen) : NULL;
  int index;

  if (target->kind == E_NAME && b == NULL && !c->materialized && c->leaf_order == NULL)
    {
      if (c->first_leaf == NULL)
        c->first_leaf = expr_tok (c->p, target);
      fx_status st = add_leaf_param (c, target, annot, &index);
      /* expanded_def: `primals_1: "f32[8]"  # PlainAOTInput(idx=0)`, the leaf's descriptor ends the line */
      for (size_t i = target->tok_first; st == FX_OK && i < c->p->lx.n_toks; i++)
        {
          const fx_tok *t = &c->p->lx.toks[i];
          if (t->line != expr_tok (c->p, target)->line || t->kind == TK_NEWLINE)
            break;
          if (t->kind == TK_COMMENT)
            c->params[index].desc = t;
        }
      return st;
    }
  if (b == NULL || b->param < 0 || c->materialized)
    return fx_py_error (c->p, expr_tok (c->p, target),
                        "an annotation without a value must name a parameter (before the first node)");
  c->params[b->param].annot = annot;
  return FX_OK;
}

static bool
starts_compound_kw (const fx_pyparser *p, const fx_tok *t)
{
  static const char *const kws[] = { "if", "elif", "else", "for", "while", "with", "try", "except", "finally",
                                     "def", "class", "async" };
  for (size_t i = 0; i < sizeof kws / sizeof kws[0]; i++)
    if (fx_py_is_name (p, t, kws[i]))
      return true;
  return false;
}

static fx_status
parse_small_statement (fn_ctx *c)
{
  fx_pyparser *p = c->p;
  const fx_tok *t = fx_py_peek (p);
  fx_status st;

  p->depth = 0;
  if (c->returned)
    return fx_py_error (p, t, "statement after return");
  if (fx_py_is_name (p, t, "return"))
    {
      if ((st = flush_pending (c, NULL, NULL)) != FX_OK || (st = materialize (c)) != FX_OK)
        return st;
      c->return_tok = t;
      fx_py_next (p);
      const fx_tok *n = fx_py_peek (p);
      fx_arg value = fx_arg_none ();
      fx_expr *ret_expr = NULL;
      if (n->kind != TK_NEWLINE && n->kind != TK_COMMENT && n->kind != TK_EOF && !fx_py_is_op (n, OP_SEMI))
        {
          fx_expr *e;
          if ((st = fx_py_parse_testlist (p, &e)) != FX_OK)
            return st;
          /* _PyTreeCodeGen: return pytree.tree_unflatten((add,), self._out_spec) */
          char *callee = e->kind == E_CALL ? fx_py_dotted_name (p, e->a, p->arena) : NULL;
          if (callee != NULL && strcmp (callee, "pytree.tree_unflatten") == 0 && e->n == 2 && e->n_kw == 0)
            {
              e = e->items[0];
              c->g->pytree_out = true;
            }
          ret_expr = e;
          if ((st = eval_arg (p, c, e, &value)) != FX_OK)
            return st;
        }
      fx_node *out = fx_graph_output (c->g, value);
      if (ret_expr != NULL && (ret_expr->kind == E_TUPLE || ret_expr->kind == E_LIST) && ret_expr->n > 0)
        {
          /* expanded_def: one `# PlainAOTOutput(idx=0)` per returned value; meta['desc'] is their list */
          fx_buf descs;
          fx_buf_init (&descs);
          fx_buf_putc (&descs, '[');
          bool all = true;
          for (size_t i = 0; i < ret_expr->n && all; i++)
            {
              const fx_tok *first = &p->lx.toks[ret_expr->items[i]->tok_first];
              const fx_tok *d = fx_py_bracket_comment (&p->lx, first->line, first->off);
              if (d == NULL)
                all = false;
              else
                fx_buf_printf (&descs, "%s%s", i ? ", " : "", comment_text (p, d));
            }
          fx_buf_putc (&descs, ']');
          if (all)
            fx_meta_set_extra (c->g, &out->meta, "desc", descs.data);
          fx_buf_free (&descs);
        }
      if (c->ret_annot != NULL)
        out->type_expr = fx_py_expr_text (p, c->ret_annot, c->g->arena);
      c->returned = true;
      return FX_OK;
    }
  if (fx_py_is_name (p, t, "pass"))
    {
      fx_py_next (p);
      return FX_OK;
    }
  if (t->kind == TK_NAME && (fx_py_is_name (p, t, "import") || fx_py_is_name (p, t, "from")
                             || fx_py_is_name (p, t, "del") || fx_py_is_name (p, t, "assert")
                             || fx_py_is_name (p, t, "raise") || fx_py_is_name (p, t, "global")
                             || fx_py_is_name (p, t, "nonlocal") || starts_compound_kw (p, t)))
    return fx_py_error (p, t, "'%.*s' statements are not supported inside forward()", (int) t->len,
                        p->lx.text + t->off);

  fx_expr *lhs;
  if ((st = fx_py_parse_testlist (p, &lhs)) != FX_OK)
    return st;
  const fx_tok *op = fx_py_peek (p);
  /* FX_GRAPH_SHOW_META=1 writes each node's meta as a string statement: not part of the graph. */
  if (lhs->kind == E_STR && (op->kind == TK_NEWLINE || op->kind == TK_COMMENT || op->kind == TK_EOF
                             || fx_py_is_op (op, OP_SEMI)))
    return FX_OK;

  if (fx_py_is_op (op, OP_COLON) || fx_py_is_op (op, OP_EQUAL))
    {
      fx_expr *annot = NULL;
      fx_expr *targets[64];
      size_t n_targets = 1;
      fx_expr *value;
      targets[0] = lhs;
      if (fx_py_is_op (op, OP_COLON))
        {
          fx_py_next (p);
          if ((st = fx_py_parse_test (p, &annot)) != FX_OK)
            return st;
          if (!fx_py_is_op (fx_py_peek (p), OP_EQUAL))
            return annotate_param (c, lhs, annot);
          fx_py_next (p);
          if ((st = fx_py_parse_testlist (p, &value)) != FX_OK)
            return st;
        }
      else
        {
          fx_py_next (p);
          if ((st = fx_py_parse_testlist (p, &value)) != FX_OK)
            return st;
          while (fx_py_is_op (fx_py_peek (p), OP_EQUAL))
            {
              if (n_targets == 64)
                return fx_py_error (p, fx_py_peek (p), "too many chained assignments");
              targets[n_targets++] = value;
              fx_py_next (p);
              if ((st = fx_py_parse_testlist (p, &value)) != FX_OK)
                return st;
            }
        }
      if (n_targets == 1 && annot == NULL && lhs->kind == E_TUPLE && is_pytree_flatten (p, value))
        return check_flatten_targets (c, lhs);
      for (size_t i = 0; i < n_targets; i++)
        if (targets[i]->kind != E_NAME && !(n_targets == 1 && targets[i]->kind == E_SUBSCRIPT && annot == NULL))
          return fx_py_error (p, expr_tok (p, targets[i]), "the target of an assignment must be a name in FX code");
      if (fx_expr_is_name (value, "None") && annot == NULL && targets[0]->kind == E_NAME)
        {
          if ((st = flush_pending (c, NULL, NULL)) != FX_OK)
            return st;
          return check_dead_values (c, targets, n_targets);
        }
      if (n_targets > 1)
        return fx_py_error (p, expr_tok (p, targets[1]), "chained assignment of a value is not FX code");
      if (lhs->kind == E_SUBSCRIPT)
        {
          /* x[i] = v;  setitem = x */
          if ((st = flush_pending (c, NULL, NULL)) != FX_OK || (st = materialize (c)) != FX_OK)
            return st;
          pending_inplace *pd = &c->pending;
          if ((st = eval_arg (p, c, lhs->a, &pd->args[0])) != FX_OK || (st = eval_arg (p, c, lhs->b, &pd->args[1])) != FX_OK
              || (st = eval_arg (p, c, value, &pd->args[2])) != FX_OK)
            return st;
          pd->n_args = 3;
          pd->op = "setitem";
          pd->tok = op;
          pd->receiver = lhs->a;
          pd->active = true;
          return FX_OK;
        }
      return lower_assign (c, &p->lx.toks[lhs->tok_first], annot, value);
    }
  const char *inplace = op->kind == TK_OP ? operator_name (op->op) : NULL;
  if (inplace != NULL && inplace[0] == 'i' && strcmp (inplace, "invert") != 0)
    {
      fx_py_next (p);
      fx_expr *value;
      if ((st = fx_py_parse_testlist (p, &value)) != FX_OK)
        return st;
      if ((st = flush_pending (c, NULL, NULL)) != FX_OK || (st = materialize (c)) != FX_OK)
        return st;
      pending_inplace *pd = &c->pending;
      if ((st = eval_arg (p, c, lhs, &pd->args[0])) != FX_OK || (st = eval_arg (p, c, value, &pd->args[1])) != FX_OK)
        return st;
      pd->n_args = 2;
      pd->op = inplace;
      pd->tok = op;
      pd->receiver = lhs;
      pd->active = true;
      return FX_OK;
    }
  char buf[64];
  int n = op->len > 40 ? 40 : (int) op->len;
  snprintf (buf, sizeof buf, "'%.*s'", n, p->lx.text + op->off);
  return fx_py_error (p, op, "expected '=' (FX code is a sequence of assignments), found %s",
                      op->kind == TK_NEWLINE ? "end of line" : op->kind == TK_EOF ? "end of file" : buf);
}

static fx_status
body_statement (fx_pyparser *p, void *data)
{
  fn_ctx *c = data;
  const fx_tok *t = fx_py_peek (p);
  fx_status st;

  if (t->kind == TK_COMMENT)
    {
      handle_comment (c, t);
      fx_py_next (p);
      return FX_OK;
    }
  for (;;)
    {
      if ((st = parse_small_statement (c)) != FX_OK)
        return st;
      if (!fx_py_is_op (fx_py_peek (p), OP_SEMI))
        break;
      fx_py_next (p);
      t = fx_py_peek (p);
      if (t->kind == TK_NEWLINE || t->kind == TK_COMMENT || t->kind == TK_EOF)
        break;
    }
  if ((st = flush_pending (c, NULL, NULL)) != FX_OK)
    return st;
  return fx_py_end_statement (p, NULL);
}

/* At `def`: the function's parameters and body, lowered into g. */
static fx_status
parse_function (fx_pyparser *p, fx_graph *g)
{
  fn_ctx c;
  fx_status st;
  const fx_tok *def = fx_py_next (p);
  memset (&c, 0, sizeof c);
  c.p = p;
  c.g = g;

  const fx_tok *name = fx_py_next (p);
  if (name->kind != TK_NAME)
    return fx_py_error (p, name, "expected a function name after 'def'");
  if ((st = fx_py_expect_op (p, OP_LPAR, "after the function name")) != FX_OK)
    goto out;

  size_t cap = 0;
  bool first = true;
  while (!fx_py_is_op (fx_py_peek (p), OP_RPAR))
    {
      const fx_tok *t = fx_py_peek (p);
      const char *stars = "";
      if (fx_py_is_op (t, OP_STAR) || fx_py_is_op (t, OP_DSTAR))
        {
          stars = t->op == OP_STAR ? "*" : "**";
          fx_py_next (p);
          t = fx_py_peek (p);
          if (stars[1] == '\0' && (fx_py_is_op (t, OP_COMMA) || fx_py_is_op (t, OP_RPAR)))
            goto next_param; /* a bare '*': keyword-only marker */
        }
      else if (fx_py_is_op (t, OP_SLASH))
        {
          fx_py_next (p);
          goto next_param;
        }
      if (t->kind != TK_NAME)
        {
          st = fx_py_error (p, t, "expected a parameter name");
          goto out;
        }
      /* Python refuses `def forward(pass)`; taken, it printed a graph whose code does not parse (fuzz-fxcode) */
      if (t->op != 0)
        {
          st = fx_py_error (p, t, "a keyword cannot be a parameter name");
          goto out;
        }
      fx_py_next (p);
      param pa = { .tok = t };
      pa.desc = fx_py_bracket_comment (&p->lx, t->line, t->off);
      pa.raw = tok_str (p, t);
      pa.target = fx_arena_printf (p->arena, "%s%s", stars, pa.raw);
      if (fx_py_is_op (fx_py_peek (p), OP_COLON))
        {
          fx_py_next (p);
          if ((st = fx_py_parse_test (p, &pa.annot)) != FX_OK)
            goto out;
        }
      if (fx_py_is_op (fx_py_peek (p), OP_EQUAL))
        {
          fx_py_next (p);
          if ((st = fx_py_parse_test (p, &pa.defval)) != FX_OK)
            goto out;
        }
      p->depth = 0;
      if (first && strcmp (pa.raw, "self") == 0 && stars[0] == '\0')
        {
          first = false;
          goto next_param;
        }
      first = false;
      if (c.n_params == cap)
        c.params = fx_arena_grow (p->arena, c.params, &cap, sizeof *c.params, 8);
      c.params[c.n_params] = pa;
      if ((st = env_define (&c, t, pa.raw, strlen (pa.raw), NULL, (int) c.n_params)) != FX_OK)
        goto out;
      c.n_params++;
    next_param:
      t = fx_py_peek (p);
      if (fx_py_is_op (t, OP_COMMA))
        {
          fx_py_next (p);
          continue;
        }
      if (!fx_py_is_op (t, OP_RPAR))
        {
          st = fx_py_error (p, t, "expected ',' or ')' in the parameter list");
          goto out;
        }
    }
  fx_py_next (p);
  if (fx_py_is_op (fx_py_peek (p), OP_ARROW))
    {
      fx_py_next (p);
      if ((st = fx_py_parse_test (p, &c.ret_annot)) != FX_OK)
        goto out;
    }
  if ((st = fx_py_expect_op (p, OP_COLON, "after the function signature")) != FX_OK)
    goto out;
  if ((st = fx_py_parse_block (p, body_statement, &c)) != FX_OK)
    goto out;
  if ((st = materialize (&c)) != FX_OK)
    goto out;
  if (!c.returned && c.n_nodes_made > 0)
    {
      st = fx_py_error (p, def, "forward() has no return statement (is the file truncated?)");
      goto out;
    }
  st = FX_OK;
out:
  fx_py_map_free (&c.env);
  return st;
}

/* ---------------------------------------------------------------- classes and the module */

typedef struct
{
  fx_graph_child *items;
  size_t n, cap;
} child_vec;

typedef struct
{
  fx_graph *g;
  bool is_root_candidate;
  bool found_forward;
  const fx_tok *forward_tok;
  fx_attr_vec attrs;
  child_vec children;
} class_ctx;

static fx_status parse_class (fx_pyparser *p, class_ctx *cc, const char **name_out);

static void
free_children (child_vec *v)
{
  for (size_t i = 0; i < v->n; i++)
    fx_graph_free (v->items[i].graph);
  free (v->items);
  memset (v, 0, sizeof *v);
}

static fx_status
class_statement (fx_pyparser *p, void *data)
{
  class_ctx *cc = data;
  const fx_tok *t = fx_py_peek (p);
  fx_status st;

  if (t->kind == TK_COMMENT)
    {
      fx_py_next (p);
      return FX_OK;
    }
  if (fx_py_is_name (p, t, "def"))
    {
      const fx_tok *name = fx_py_peek_at (p, 1);
      if (fx_py_is_name (p, name, "forward"))
        {
          if (cc->found_forward)
            return fx_py_error (p, name, "a second forward() in the same class (the first is on line %u)",
                                cc->forward_tok->line);
          cc->found_forward = true;
          cc->forward_tok = name;
          return parse_function (p, cc->g);
        }
      if (fx_py_is_name (p, name, "__init__"))
        return fx_py_parse_init (p, cc->g, &cc->attrs);
      return fx_py_skip_statement (p);
    }
  if (fx_py_is_name (p, t, "class"))
    {
      class_ctx child = { 0 };
      const char *name;
      child.g = fx_graph_new ();
      st = parse_class (p, &child, &name);
      if (st == FX_OK && child.found_forward)
        {
          child.g->class_name = fx_arena_strdup (child.g->arena, name);
          if (cc->children.n == cc->children.cap)
            {
              size_t ncap = cc->children.cap ? cc->children.cap * 2 : 4;
              fx_graph_child *items = realloc (cc->children.items, ncap * sizeof *items);
              if (items == NULL)
                abort ();
              cc->children.items = items;
              cc->children.cap = ncap;
            }
          /* attr names live in the parent's arena once attached; keep a scratch copy until then */
          cc->children.items[cc->children.n].attr = fx_arena_strdup (p->arena, name);
          cc->children.items[cc->children.n].graph = child.g;
          cc->children.n++;
        }
      else
        fx_graph_free (child.g);
      return st;
    }
  return fx_py_skip_statement (p);
}

static void
attach_class (class_ctx *cc)
{
  fx_graph *g = cc->g;
  if (cc->children.n > 0)
    {
      g->children = fx_arena_alloc (g->arena, cc->children.n * sizeof *g->children);
      for (size_t i = 0; i < cc->children.n; i++)
        {
          g->children[i].attr = fx_arena_strdup (g->arena, cc->children.items[i].attr);
          g->children[i].graph = cc->children.items[i].graph;
        }
      g->n_children = cc->children.n;
    }
  free (cc->children.items);
  memset (&cc->children, 0, sizeof cc->children);
  if (cc->attrs.n > 0)
    {
      g->attrs = cc->attrs.items;
      g->n_attrs = cc->attrs.n;
    }
}

/* At `class`: the class name, then its body (forward, __init__, child graph modules). */
static fx_status
parse_class (fx_pyparser *p, class_ctx *cc, const char **name_out)
{
  if (++p->n_graphs > FX_PY_MAX_GRAPHS)
    return fx_py_error (p, fx_py_peek (p), "too many classes in one file (more than %d)", FX_PY_MAX_GRAPHS);
  fx_py_next (p);
  const fx_tok *first = fx_py_peek (p);
  const fx_tok *last = first;
  fx_status st;

  /* The name: an identifier, or print_readable's `<lambda>` */
  while (fx_py_peek (p)->kind == TK_NAME || fx_py_is_op (fx_py_peek (p), OP_LESS)
         || fx_py_is_op (fx_py_peek (p), OP_GREATER))
    last = fx_py_next (p);
  if (last == first && first->kind != TK_NAME)
    return fx_py_error (p, first, "expected a class name");
  size_t end = (size_t) last->off + last->len;
  if (end - first->off > 200)
    return fx_py_error (p, first, "class name too long");
  *name_out = fx_arena_strndup (p->arena, p->lx.text + first->off, end - first->off);
  if (fx_py_is_op (fx_py_peek (p), OP_LPAR))
    {
      /* Base classes: skipped, but still well-formed expressions. */
      fx_py_next (p);
      while (!fx_py_is_op (fx_py_peek (p), OP_RPAR))
        {
          fx_expr *base;
          if ((st = fx_py_parse_test (p, &base)) != FX_OK)
            return st;
          p->depth = 0;
          if (fx_py_is_op (fx_py_peek (p), OP_COMMA))
            fx_py_next (p);
          else if (!fx_py_is_op (fx_py_peek (p), OP_RPAR))
            return fx_py_error (p, fx_py_peek (p), "expected ',' or ')' after a base class");
        }
      fx_py_next (p);
    }
  if ((st = fx_py_expect_op (p, OP_COLON, "after the class header")) != FX_OK)
    return st;
  st = fx_py_parse_block (p, class_statement, cc);
  if (st != FX_OK)
    {
      free_children (&cc->children);
      return st;
    }
  attach_class (cc);
  return FX_OK;
}

static fx_val
val_copy (fx_arena *a, const fx_val *v)
{
  fx_val out = *v;
  if (v->kind == FX_VAL_TENSOR)
    {
      int n = v->tensor.ndim;
      out.tensor.sizes = fx_arena_alloc (a, (size_t) (n + 1) * sizeof (fx_dim));
      if (n)
        memcpy (out.tensor.sizes, v->tensor.sizes, (size_t) n * sizeof (fx_dim));
      for (int i = 0; i < n; i++)
        out.tensor.sizes[i].sym = fx_arena_strdup (a, v->tensor.sizes[i].sym);
      if (v->tensor.strides != NULL)
        {
          out.tensor.strides = fx_arena_alloc (a, (size_t) (n + 1) * sizeof (fx_dim));
          if (n)
            memcpy (out.tensor.strides, v->tensor.strides, (size_t) n * sizeof (fx_dim));
          for (int i = 0; i < n; i++)
            out.tensor.strides[i].sym = fx_arena_strdup (a, v->tensor.strides[i].sym);
        }
      out.tensor.storage_offset.sym = fx_arena_strdup (a, v->tensor.storage_offset.sym);
      out.tensor.subclass = fx_arena_strdup (a, v->tensor.subclass);
    }
  out.sym = fx_arena_strdup (a, v->sym);
  out.text = fx_arena_strdup (a, v->text);
  out.items = NULL;
  out.n_items = 0;
  return out;
}

static fx_status
parse_module (fx_pyparser *p)
{
  for (;;)
    {
      const fx_tok *t = fx_py_peek (p);
      fx_status st;
      p->depth = 0;
      switch ((fx_tok_kind) t->kind)
        {
        case TK_EOF:
          return FX_OK;
        case TK_COMMENT:
        case TK_NEWLINE:
          fx_py_next (p);
          continue;
        case TK_INDENT:
          return fx_py_error (p, t, "unexpected indent");
        case TK_DEDENT:
          fx_py_next (p);
          continue;
        case TK_NAME: case TK_INT: case TK_FLOAT: case TK_STRING: case TK_OP:
        default:
          break;
        }
      if (fx_py_is_name (p, t, "class"))
        {
          class_ctx cc = { 0 };
          const char *name;
          cc.g = fx_graph_new ();
          st = parse_class (p, &cc, &name);
          if (st != FX_OK)
            {
              fx_graph_free (cc.g);
              return st;
            }
          if (cc.found_forward && !p->have_graph)
            {
              fx_graph_free (p->root);
              p->root = cc.g;
              p->root->class_name = fx_arena_strdup (p->root->arena, name);
              p->have_graph = true;
            }
          else
            fx_graph_free (cc.g);
          continue;
        }
      if (fx_py_is_name (p, t, "def"))
        {
          const fx_tok *name = fx_py_peek_at (p, 1);
          if (fx_py_is_name (p, name, "forward"))
            {
              if (p->have_graph)
                return fx_py_error (p, name, "a second forward() in the file");
              if ((st = parse_function (p, p->root)) != FX_OK)
                return st;
              p->have_graph = true;
              continue;
            }
          if (fx_py_is_name (p, name, "load_args"))
            {
              if ((st = fx_py_parse_load_args (p)) != FX_OK)
                return st;
              continue;
            }
        }
      if (fx_py_is_name (p, t, "args") && fx_py_is_op (fx_py_peek_at (p, 1), OP_EQUAL))
        {
          if ((st = fx_py_parse_args_list (p)) != FX_OK)
            return st;
          continue;
        }
      if ((st = fx_py_skip_statement (p)) != FX_OK)
        return st;
    }
}

/* "V1121 16:41:15.923000 1273 torch/...": glog's record prefix, as every TORCH_LOGS/TORCH_TRACE line has. */
static bool
looks_like_glog (const char *t, size_t n)
{
  static const char shape[] = "X0000 00:00:00";
  if (t == NULL || n < sizeof shape - 1 || strchr ("VIWEF", t[0]) == NULL || t[0] == '\0')
    return false;
  for (size_t i = 1; i < sizeof shape - 1; i++)
    if (shape[i] == '0' ? (t[i] < '0' || t[i] > '9') : t[i] != shape[i])
      return false;
  return true;
}

fx_status
fx_parse_fx_code (const char *text, size_t len, const char *filename, fx_graph **out, fx_diag *diag)
{
  fx_pyparser p;
  fx_status st;
  fx_diag local;

  if (diag == NULL)
    diag = &local;
  *out = NULL;
  fx_diag_clear (diag);
  memset (&p, 0, sizeof p);
  p.diag = diag;
  if (text == NULL)
    len = 0;
  if (looks_like_glog (text, len))
    {
      /* A TORCH_LOGS or TORCH_TRACE file: the graphs are inside its records, which the trace importer reads. */
      fx_diag_set (diag, FX_ERR_PARSE, "this is a PyTorch log (TORCH_LOGS/TORCH_TRACE), not FX code: "
                                       "import it with `fxwb import`");
      const char *eol = memchr (text, '\n', len);
      fx_diag_locate (diag, filename ? filename : "<string>", 1, 1, text, eol ? (size_t) (eol - text) : len);
      return FX_ERR_PARSE;
    }
  st = fx_py_tokenize (&p.lx, text ? text : "", len, filename, diag);
  if (st != FX_OK)
    {
      fx_py_lexed_free (&p.lx);
      return st;
    }
  p.arena = fx_arena_new ();
  p.root = fx_graph_new ();
  st = parse_module (&p);
  if (st == FX_OK && !p.have_graph)
    st = fx_py_error (&p, &p.lx.toks[0], "no forward() found: this is not FX graph code");
  if (st == FX_OK)
    {
      fx_graph *g = p.root;
      if (p.n_inputs > 0 && p.inputs_unnamed && p.n_inputs == fx_graph_count_op (g, FX_OP_PLACEHOLDER))
        {
          /* an `args = [...]` list is positional: its inputs are the placeholders, in order */
          size_t i = 0;
          fx_graph_foreach_node (g, n)
            if (n->op == FX_OP_PLACEHOLDER)
              p.inputs[i++].name = n->name;
        }
      if (p.n_inputs > 0)
        {
          g->inputs = fx_arena_alloc (g->arena, p.n_inputs * sizeof *g->inputs);
          for (size_t i = 0; i < p.n_inputs; i++)
            {
              g->inputs[i] = p.inputs[i];
              g->inputs[i].name = fx_arena_strdup (g->arena, p.inputs[i].name);
              g->inputs[i].storage = fx_arena_strdup (g->arena, p.inputs[i].storage);
              g->inputs[i].val = val_copy (g->arena, &p.inputs[i].val);
            }
          g->n_inputs = p.n_inputs;
        }
      g->source_file = fx_arena_strdup (g->arena, filename);
      fx_diag verify;
      fx_diag_clear (&verify);
      st = fx_graph_verify (g, &verify);
      if (st != FX_OK)
        {
          /* A graph that parses but breaks an invariant: report it at the top of the file. */
          fx_diag_set (diag, st, "the parsed graph is invalid: %s", verify.message);
          snprintf (diag->node, sizeof diag->node, "%s", verify.node);
          fx_py_locate (&p.lx, &p.lx.toks[0], diag);
        }
    }
  if (st == FX_OK)
    {
      *out = p.root;
      p.root = NULL;
    }
  fx_graph_free (p.root);
  fx_arena_free (p.arena);
  fx_py_lexed_free (&p.lx);
  return st;
}

fx_status
fx_parse_fx_file (const char *path, fx_graph **out, fx_diag *diag)
{
  char *data = NULL;
  size_t len = 0;
  fx_diag local;

  if (diag == NULL)
    diag = &local;
  *out = NULL;
  fx_diag_clear (diag);
  fx_status st = fx_file_read (path, &data, &len, diag);
  if (st != FX_OK)
    return st;
  st = fx_parse_fx_code (data, len, path, out, diag);
  free (data);
  return st;
}

static void
readable_opts (const fx_graph *graph, fx_readable_opts *opts, int depth)
{
  fx_graph_foreach_node (graph, n)
    {
      if (n->meta.val.kind == FX_VAL_TENSOR)
        {
          opts->include_stride = opts->include_stride || n->meta.val.tensor.strides != NULL;
          opts->include_device = opts->include_device || n->meta.val.tensor.has_device;
        }
      if ((n->op == FX_OP_PLACEHOLDER || n->op == FX_OP_OUTPUT) && fx_meta_get_extra (&n->meta, "desc"))
        opts->expanded_def = true;
    }
  if (depth < 64)
    for (size_t i = 0; i < graph->n_children; i++)
      readable_opts (graph->children[i].graph, opts, depth + 1);
}

void
fx_parse_readable_opts (const fx_graph *graph, fx_readable_opts *opts)
{
  opts->include_stride = false;
  opts->include_device = false;
  opts->expanded_def = false;
  readable_opts (graph, opts, 0);
}
