/* fx-pyrepro.c: the minifier's repro.py parts: Repro.__init__ attributes and load_args(reader) input specs. */
#include "fx-pyparse-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Skips `def name(...) [-> T]` up to and including the ':' (the tokenizer guarantees balanced brackets). */
static fx_status
skip_def_header (fx_pyparser *p)
{
  fx_py_next (p); /* def */
  fx_py_next (p); /* name */
  fx_status st = fx_py_expect_op (p, OP_LPAR, "after the function name");
  if (st != FX_OK)
    return st;
  int depth = 1;
  while (depth > 0)
    {
      const fx_tok *t = fx_py_next (p);
      if (t->kind == TK_EOF)
        return fx_py_error (p, t, "the file ends inside a parameter list");
      if (fx_py_is_op (t, OP_LPAR) || fx_py_is_op (t, OP_LSQB) || fx_py_is_op (t, OP_LBRACE))
        depth++;
      else if (fx_py_is_op (t, OP_RPAR) || fx_py_is_op (t, OP_RSQB) || fx_py_is_op (t, OP_RBRACE))
        depth--;
    }
  if (fx_py_is_op (fx_py_peek (p), OP_ARROW))
    {
      fx_py_next (p);
      fx_expr *ann;
      if ((st = fx_py_parse_test (p, &ann)) != FX_OK)
        return st;
      p->depth = 0;
    }
  return fx_py_expect_op (p, OP_COLON, "after the function signature");
}

static bool
is_self_attr (const fx_expr *e)
{
  return e->kind == E_ATTR && fx_expr_is_name (e->a, "self");
}

static const fx_expr *
kwarg (const fx_expr *call, const char *name)
{
  for (size_t i = 0; i < call->n_kw; i++)
    if (strcmp (call->kw_names[i], name) == 0)
      return call->kw_values[i];
  return NULL;
}

/* Row-major strides; a symbolic size makes the strides before it symbolic ("256*s77"). */
static void
contiguous_strides (fx_val *val, fx_arena *arena)
{
  int n = val->tensor.ndim;
  val->tensor.strides = fx_arena_alloc (arena, (size_t) (n + 1) * sizeof (fx_dim));
  int64_t s = 1;
  const char *sym = NULL;
  for (int i = n - 1; i >= 0; i--)
    {
      val->tensor.strides[i] = sym ? (fx_dim) { -1, fx_arena_printf (arena, "%lld*%s", (long long) s, sym) }
                                   : (fx_dim) { s, NULL };
      const fx_dim *d = &val->tensor.sizes[i];
      if (d->sym != NULL)
        sym = sym ? fx_arena_printf (arena, "%s*(%s)", sym, d->sym) : fx_arena_printf (arena, "(%s)", d->sym);
      else if (d->value > 1 && s <= INT64_MAX / d->value)
        s *= d->value;
    }
}

/* A list/tuple of ints as sizes; false when it is not one. */
static bool
dims_from_arg (const fx_arg *a, fx_arena *arena, fx_dim **dims, int *ndim)
{
  if (a->kind != FX_ARG_LIST && a->kind != FX_ARG_TUPLE)
    return false;
  size_t n = a->u.seq.n;
  if (n > 64)
    return false;
  fx_dim *d = fx_arena_alloc (arena, (n + 1) * sizeof *d);
  for (size_t i = 0; i < n; i++)
    {
      if (a->u.seq.items[i].kind != FX_ARG_INT)
        return false;
      d[i] = (fx_dim) { a->u.seq.items[i].u.i, NULL };
    }
  *dims = d;
  *ndim = (int) n;
  return true;
}

/* A size as load_args writes it: an int, or a symbolic expression over shape symbols (1024*s77) kept as text. */
static bool
sym_dim (fx_pyparser *p, const fx_expr *e, fx_dim *out)
{
  switch ((int) e->kind)
    {
    case E_INT:
      *out = (fx_dim) { e->i, NULL };
      return true;
    case E_UNARY:
      if (e->op == OP_MINUS && e->a->kind == E_INT)
        {
          *out = (fx_dim) { -e->a->i, NULL };
          return true;
        }
      /* fall through */
    case E_NAME:
    case E_BINOP:
      {
        /* only names, ints and arithmetic */
        const fx_expr *stack[64];
        int n = 0;
        stack[n++] = e;
        while (n > 0)
          {
            const fx_expr *x = stack[--n];
            if (x->kind == E_BINOP || x->kind == E_UNARY)
              {
                if (n + 2 > 64)
                  return false;
                stack[n++] = x->a;
                if (x->kind == E_BINOP)
                  stack[n++] = x->b;
              }
            else if (x->kind != E_NAME && x->kind != E_INT)
              return false;
          }
        *out = (fx_dim) { -1, fx_py_expr_text (p, e, p->arena) };
        return true;
      }
    default:
      return false;
    }
}

static bool
sym_dims (fx_pyparser *p, const fx_expr *e, fx_dim **dims, int *ndim)
{
  if (e->kind != E_TUPLE && e->kind != E_LIST)
    return false;
  if (e->n > 64)
    return false;
  fx_dim *d = fx_arena_alloc (p->arena, (e->n + 1) * sizeof *d);
  for (size_t i = 0; i < e->n; i++)
    if (!sym_dim (p, e->items[i], &d[i]))
      return false;
  *dims = d;
  *ndim = (int) e->n;
  return true;
}

/* Shape of nested lists (torch.tensor data); dtype from the leaves. */
static bool
data_shape (const fx_arg *a, fx_dim *dims, int *ndim, int level, fx_dtype *dtype)
{
  if (a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE)
    {
      if (level >= 16)
        return false;
      if (level >= *ndim)
        {
          *ndim = level + 1;
          dims[level] = (fx_dim) { (int64_t) a->u.seq.n, NULL };
        }
      for (size_t i = 0; i < a->u.seq.n; i++)
        if (!data_shape (&a->u.seq.items[i], dims, ndim, level + 1, dtype))
          return false;
      return true;
    }
  if (a->kind == FX_ARG_FLOAT)
    *dtype = FX_DTYPE_F32;
  else if (a->kind == FX_ARG_INT && *dtype != FX_DTYPE_F32)
    *dtype = FX_DTYPE_I64;
  else if (a->kind == FX_ARG_BOOL && *dtype == FX_DTYPE_UNKNOWN)
    *dtype = FX_DTYPE_BOOL;
  else if (a->kind != FX_ARG_INT && a->kind != FX_ARG_BOOL)
    return false;
  return true;
}

/* Tensor metadata of a constructor such as torch.randn([4, 4], dtype=torch.float32).cuda(), when recognizable. */
static bool
tensor_ctor_val (fx_pyparser *p, const fx_expr *e, fx_arena *arena, fx_val *val, bool *is_param)
{
  fx_device dev = fx_device_cpu ();
  bool has_dev = false;

  *is_param = false;
  memset (val, 0, sizeof *val);
  for (int guard = 0; guard < 8 && e->kind == E_CALL; guard++)
    {
      const fx_expr *f = e->a;
      if (f->kind == E_ATTR && f->slen == 4 && memcmp (f->s, "cuda", 4) == 0)
        {
          dev = (fx_device) { FX_DEVICE_CUDA, -1 };
          if (e->n == 1 && e->items[0]->kind == E_INT)
            dev.index = (int) e->items[0]->i;
          has_dev = true;
          e = f->a;
          continue;
        }
      char *callee = fx_py_dotted_name (p, f, p->arena);
      if (callee != NULL && (strcmp (callee, "torch.nn.Parameter") == 0 || strcmp (callee, "Parameter") == 0
                             || strcmp (callee, "torch.nn.parameter.Parameter") == 0)
          && e->n >= 1)
        {
          *is_param = true;
          e = e->items[0];
          continue;
        }
      break;
    }
  if (e->kind != E_CALL)
    return false;
  char *callee = fx_py_dotted_name (p, e->a, p->arena);
  if (callee == NULL || strncmp (callee, "torch.", 6) != 0)
    return false;
  const char *fn = callee + 6;
  fx_dtype dtype = FX_DTYPE_F32;
  fx_arg shape = fx_arg_none ();
  const fx_expr *size_kw = kwarg (e, "size");
  fx_dim dims[17];
  int ndim = 0;

  if (strcmp (fn, "tensor") == 0)
    {
      fx_arg data;
      fx_dtype inferred = FX_DTYPE_UNKNOWN;
      if (e->n < 1 || fx_py_eval_const (p, e->items[0], &data) != FX_OK)
        return false;
      if (!data_shape (&data, dims, &ndim, 0, &inferred))
        return false;
      dtype = inferred == FX_DTYPE_UNKNOWN ? FX_DTYPE_F32 : inferred;
    }
  else
    {
      bool randint = strcmp (fn, "randint") == 0;
      if (!randint && strcmp (fn, "randn") != 0 && strcmp (fn, "rand") != 0 && strcmp (fn, "empty") != 0
          && strcmp (fn, "zeros") != 0 && strcmp (fn, "ones") != 0 && strcmp (fn, "full") != 0)
        return false;
      if (randint)
        dtype = FX_DTYPE_I64;
      if (size_kw != NULL)
        {
          if (fx_py_eval_const (p, size_kw, &shape) != FX_OK)
            return false;
        }
      else
        {
          for (size_t i = 0; i < e->n; i++)
            if (e->items[i]->kind == E_LIST || e->items[i]->kind == E_TUPLE)
              {
                if (fx_py_eval_const (p, e->items[i], &shape) != FX_OK)
                  return false;
                break;
              }
          if (shape.kind == FX_ARG_NONE && !randint && strcmp (fn, "full") != 0)
            {
              /* torch.randn(2, 3) */
              fx_arg *items = fx_arena_alloc (p->arena, (e->n + 1) * sizeof *items);
              for (size_t i = 0; i < e->n; i++)
                if (fx_py_eval_const (p, e->items[i], &items[i]) != FX_OK)
                  return false;
              shape = fx_arg_tuple (items, e->n);
            }
        }
      fx_dim *d;
      if (!dims_from_arg (&shape, p->arena, &d, &ndim) || ndim > 16)
        return false;
      memcpy (dims, d, (size_t) ndim * sizeof *d);
    }
  const fx_expr *dt = kwarg (e, "dtype");
  if (dt != NULL)
    {
      fx_arg v;
      if (fx_py_eval_const (p, dt, &v) != FX_OK || v.kind != FX_ARG_DTYPE)
        return false;
      dtype = v.u.dtype;
    }
  const fx_expr *dv = kwarg (e, "device");
  if (dv != NULL && !has_dev)
    {
      fx_arg v;
      if (fx_py_eval_const (p, dv, &v) == FX_OK && v.kind == FX_ARG_DEVICE)
        {
          dev = v.u.device;
          has_dev = true;
        }
      else if (v.kind == FX_ARG_STR && fx_device_parse (v.u.s, &dev))
        has_dev = true;
    }
  val->kind = FX_VAL_TENSOR;
  val->tensor.dtype = dtype;
  val->tensor.ndim = ndim;
  val->tensor.sizes = fx_arena_alloc (arena, (size_t) (ndim + 1) * sizeof (fx_dim));
  memcpy (val->tensor.sizes, dims, (size_t) ndim * sizeof (fx_dim));
  contiguous_strides (val, arena);
  val->tensor.device = dev;
  val->tensor.has_device = has_dev;
  val->tensor.requires_grad = *is_param;
  return true;
}

static void
add_attr (fx_attr_vec *v, fx_arena *arena, const char *name, fx_attr_kind kind, const fx_val *val, const char *text)
{
  if (v->n == v->cap)
    v->items = fx_arena_grow (arena, v->items, &v->cap, sizeof *v->items, 8);
  fx_attr *a = &v->items[v->n++];
  memset (a, 0, sizeof *a);
  a->name = fx_arena_strdup (arena, name);
  a->kind = kind;
  if (val != NULL)
    a->val = *val;
  a->text = fx_arena_strdup (arena, text);
}

typedef struct
{
  fx_graph *g;
  fx_attr_vec *attrs;
} init_ctx;

static void
record_attr (fx_pyparser *p, init_ctx *ic, const char *name, fx_attr_kind forced, const fx_expr *value)
{
  fx_val val;
  bool is_param = false;
  bool known = tensor_ctor_val (p, value, ic->g->arena, &val, &is_param);
  fx_attr_kind kind = forced;
  if (kind == FX_ATTR_OTHER)
    {
      if (is_param)
        kind = FX_ATTR_PARAMETER;
      else if (known)
        kind = FX_ATTR_CONSTANT;
      else
        {
          /* Linear(in_features=4, ...) or torch.nn.Linear(...).cuda(): a submodule */
          const fx_expr *e = value;
          while (e->kind == E_CALL && e->a->kind == E_ATTR && e->a->slen == 4 && memcmp (e->a->s, "cuda", 4) == 0)
            e = e->a->a;
          const fx_expr *f = e->kind == E_CALL ? e->a : NULL;
          if (f != NULL && (f->kind == E_NAME || f->kind == E_ATTR) && f->slen > 0 && f->s[0] >= 'A' && f->s[0] <= 'Z')
            kind = FX_ATTR_MODULE;
          else if (e->kind == E_CALL)
            kind = FX_ATTR_CONSTANT;
        }
    }
  if (kind == FX_ATTR_PARAMETER && known)
    val.tensor.requires_grad = true;
  add_attr (ic->attrs, ic->g->arena, name, kind, known ? &val : NULL, fx_py_expr_text (p, value, p->arena));
}

static fx_status
init_statement (fx_pyparser *p, void *data)
{
  init_ctx *ic = data;
  const fx_tok *t = fx_py_peek (p);
  size_t start = p->pos;
  fx_expr *lhs, *value = NULL;
  fx_status st;

  if (t->kind == TK_COMMENT)
    {
      fx_py_next (p);
      return FX_OK;
    }
  p->depth = 0;
  if (!fx_py_is_name (p, t, "self"))
    return fx_py_skip_statement (p);
  /* Anything this reader does not model is skipped, not rejected: __init__ may hold arbitrary Python. */
  st = fx_py_parse_testlist (p, &lhs);
  if (st == FX_OK && fx_py_is_op (fx_py_peek (p), OP_EQUAL))
    {
      fx_py_next (p);
      st = fx_py_parse_testlist (p, &value);
    }
  if (st == FX_OK)
    st = fx_py_end_statement (p, NULL);
  if (st != FX_OK)
    {
      fx_diag_clear (p->diag);
      p->pos = start;
      p->depth = 0;
      /* `self.true_graph_0 = <lambda>()`: a child GraphModule's repr is not Python, but it names a submodule. */
      const fx_tok *attr = fx_py_peek_at (p, 2);
      const fx_tok *eq = fx_py_peek_at (p, 3);
      if (fx_py_is_op (fx_py_peek_at (p, 1), OP_DOT) && attr->kind == TK_NAME && fx_py_is_op (eq, OP_EQUAL))
        {
          size_t i = p->pos + 4, last = i;
          while (i < p->lx.n_toks && p->lx.toks[i].kind != TK_NEWLINE && p->lx.toks[i].kind != TK_COMMENT
                 && p->lx.toks[i].kind != TK_EOF && p->lx.toks[i].kind != TK_DEDENT)
            last = i++;
          if (last > p->pos + 3)
            {
              const fx_tok *a = &p->lx.toks[p->pos + 4], *b = &p->lx.toks[last];
              char *text = fx_arena_strndup (p->arena, p->lx.text + a->off, (size_t) (b->off + b->len - a->off));
              char *name = fx_arena_strndup (p->arena, p->lx.text + attr->off, attr->len);
              add_attr (ic->attrs, ic->g->arena, name, text[0] == '<' ? FX_ATTR_MODULE : FX_ATTR_OTHER, NULL, text);
            }
        }
      return fx_py_skip_statement (p);
    }
  if (value != NULL && is_self_attr (lhs))
    {
      char *name = fx_arena_strndup (p->arena, lhs->s, lhs->slen);
      record_attr (p, ic, name, FX_ATTR_OTHER, value);
    }
  else if (value == NULL && lhs->kind == E_CALL && is_self_attr (lhs->a) && lhs->n >= 2
           && lhs->items[0]->kind == E_STR)
    {
      const fx_expr *f = lhs->a;
      bool buffer = f->slen == 15 && memcmp (f->s, "register_buffer", 15) == 0;
      bool parameter = f->slen == 18 && memcmp (f->s, "register_parameter", 18) == 0;
      if (buffer || parameter)
        record_attr (p, ic, lhs->items[0]->s, buffer ? FX_ATTR_BUFFER : FX_ATTR_PARAMETER, lhs->items[1]);
    }
  return FX_OK;
}

fx_status
fx_py_parse_init (fx_pyparser *p, fx_graph *g, fx_attr_vec *attrs)
{
  init_ctx ic = { g, attrs };
  fx_status st = skip_def_header (p);
  if (st != FX_OK)
    return st;
  return fx_py_parse_block (p, init_statement, &ic);
}

/* ---------------------------------------------------------------- load_args */

typedef struct
{
  const char *hash;        /* NULL when the repro saved no data */
  int64_t nbytes;
  fx_device device;
  fx_dtype dtype_hint;
} storage_info;

typedef struct
{
  fx_py_map storages;
} load_ctx;

static fx_status
const_arg (fx_pyparser *p, const fx_expr *e, fx_arg *out)
{
  p->depth = 0;
  return fx_py_eval_const (p, e, out);
}

static fx_input_spec *
new_input (fx_pyparser *p, const fx_tok *comment, fx_input_kind kind)
{
  if (p->n_inputs == p->cap_inputs)
    {
      size_t cap = p->cap_inputs ? p->cap_inputs * 2 : 16;
      fx_input_spec *items = fx_arena_alloc (p->arena, cap * sizeof *items);
      if (p->n_inputs)
        memcpy (items, p->inputs, p->n_inputs * sizeof *items);
      p->inputs = items;
      p->cap_inputs = cap;
    }
  fx_input_spec *s = &p->inputs[p->n_inputs];
  memset (s, 0, sizeof *s);
  s->kind = kind;
  /* The writer names each input in a trailing comment: "# arg0_1", "# L_x_, filtered out during compilation". */
  if (comment != NULL)
    {
      const char *c = p->lx.text + comment->off + 1;
      const char *end = p->lx.text + comment->off + comment->len;
      while (c < end && *c == ' ')
        c++;
      const char *e = c;
      while (e < end && *e != ',' && *e != ' ' && *e != '\t')
        e++;
      if (e > c)
        s->name = fx_arena_strndup (p->arena, c, (size_t) (e - c));
    }
  if (s->name == NULL)
    s->name = fx_arena_printf (p->arena, "input%zu", p->n_inputs);
  p->n_inputs++;
  return s;
}

static fx_status
reader_storage (fx_pyparser *p, load_ctx *lc, const fx_expr *target, const fx_expr *call)
{
  fx_status st;
  storage_info *si = fx_arena_alloc (p->arena, sizeof *si);
  si->device = fx_device_cpu ();
  si->dtype_hint = FX_DTYPE_UNKNOWN;
  if (call->n < 2)
    return fx_py_error (p, &p->lx.toks[call->tok_first], "reader.storage() needs a hash and a byte count");
  fx_arg h;
  if ((st = const_arg (p, call->items[0], &h)) != FX_OK)
    return st;
  if (h.kind == FX_ARG_STR)
    si->hash = h.u.s;
  else if (h.kind != FX_ARG_NONE)
    return fx_py_error (p, &p->lx.toks[call->items[0]->tok_first], "the storage hash must be a string or None");
  fx_dim nbytes;
  if (!sym_dim (p, call->items[1], &nbytes))
    return fx_py_error (p, &p->lx.toks[call->items[1]->tok_first], "the storage size must be an int or a size expression");
  si->nbytes = nbytes.value;
  for (size_t i = 0; i < call->n_kw; i++)
    {
      fx_arg v;
      if ((st = const_arg (p, call->kw_values[i], &v)) != FX_OK)
        return st;
      if (strcmp (call->kw_names[i], "device") == 0)
        {
          if (v.kind == FX_ARG_DEVICE)
            si->device = v.u.device;
          else if (!(v.kind == FX_ARG_STR && fx_device_parse (v.u.s, &si->device)))
            return fx_py_error (p, &p->lx.toks[call->kw_values[i]->tok_first], "unknown storage device");
        }
      else if (strcmp (call->kw_names[i], "dtype_hint") == 0 && v.kind == FX_ARG_DTYPE)
        si->dtype_hint = v.u.dtype;
    }
  bool fresh;
  fx_py_slot *slot = fx_py_map_insert (&lc->storages, target->s, target->slen, &fresh);
  slot->value = si;
  return FX_OK;
}

static fx_status
reader_tensor (fx_pyparser *p, load_ctx *lc, const fx_expr *call, const fx_tok *comment)
{
  fx_status st;
  const fx_tok *where = &p->lx.toks[call->tok_first];
  if (call->n < 2)
    return fx_py_error (p, where, "reader.tensor() needs a storage and a shape");
  const fx_expr *buf = call->items[0];
  if (buf->kind != E_NAME)
    return fx_py_error (p, &p->lx.toks[buf->tok_first], "reader.tensor() expects a storage variable");
  fx_py_slot *slot = fx_py_map_find (&lc->storages, buf->s, buf->slen);
  if (slot == NULL)
    return fx_py_error (p, &p->lx.toks[buf->tok_first], "storage '%.*s' is not defined", (int) buf->slen, buf->s);
  storage_info *si = slot->value;

  fx_input_spec *spec = new_input (p, comment, FX_INPUT_TENSOR);
  fx_val *v = &spec->val;
  if (!sym_dims (p, call->items[1], &v->tensor.sizes, &v->tensor.ndim))
    return fx_py_error (p, &p->lx.toks[call->items[1]->tok_first], "the tensor shape must be a tuple of sizes");
  v->kind = FX_VAL_TENSOR;
  v->tensor.dtype = FX_DTYPE_F32;
  v->tensor.device = si->device;
  v->tensor.has_device = true;
  spec->storage = si->hash;

  const fx_expr *stride = call->n >= 3 ? call->items[2] : kwarg (call, "stride");
  if (stride != NULL && !(stride->kind == E_NAME && stride->slen == 4 && memcmp (stride->s, "None", 4) == 0))
    {
      int n;
      if (!sym_dims (p, stride, &v->tensor.strides, &n) || n != v->tensor.ndim)
        return fx_py_error (p, &p->lx.toks[stride->tok_first], "the strides must be a tuple of %d sizes",
                            v->tensor.ndim);
    }
  if (v->tensor.strides == NULL)
    contiguous_strides (v, p->arena);
  for (size_t i = 0; i < call->n_kw; i++)
    {
      const char *k = call->kw_names[i];
      fx_arg a;
      if (strcmp (k, "stride") == 0)
        continue;
      if ((st = const_arg (p, call->kw_values[i], &a)) != FX_OK)
        return st;
      if (strcmp (k, "dtype") == 0)
        {
          if (a.kind != FX_ARG_DTYPE)
            return fx_py_error (p, &p->lx.toks[call->kw_values[i]->tok_first], "dtype must be a torch dtype");
          v->tensor.dtype = a.u.dtype;
        }
      else if (strcmp (k, "storage_offset") == 0)
        {
          if (a.kind != FX_ARG_INT)
            return fx_py_error (p, &p->lx.toks[call->kw_values[i]->tok_first], "storage_offset must be an int");
          v->tensor.storage_offset = (fx_dim) { a.u.i, NULL };
        }
      else if (strcmp (k, "requires_grad") == 0 && a.kind == FX_ARG_BOOL)
        spec->requires_grad = v->tensor.requires_grad = a.u.b;
      else if (strcmp (k, "is_leaf") == 0 && a.kind == FX_ARG_BOOL)
        spec->is_leaf = a.u.b;
    }
  return FX_OK;
}

static fx_status
load_statement (fx_pyparser *p, void *data)
{
  load_ctx *lc = data;
  const fx_tok *t = fx_py_peek (p);
  fx_expr *lhs, *value = NULL;
  const fx_tok *comment;
  fx_status st;

  if (t->kind == TK_COMMENT)
    {
      fx_py_next (p);
      return FX_OK;
    }
  p->depth = 0;
  if (!(t->kind == TK_NAME && (fx_py_is_op (fx_py_peek_at (p, 1), OP_EQUAL) || fx_py_is_name (p, t, "reader"))))
    return fx_py_skip_statement (p);
  if ((st = fx_py_parse_testlist (p, &lhs)) != FX_OK)
    return st;
  if (fx_py_is_op (fx_py_peek (p), OP_EQUAL))
    {
      fx_py_next (p);
      if ((st = fx_py_parse_testlist (p, &value)) != FX_OK)
        return st;
    }
  if ((st = fx_py_end_statement (p, &comment)) != FX_OK)
    return st;

  const fx_expr *call = value ? value : lhs;
  if (call->kind != E_CALL || call->a->kind != E_ATTR || !fx_expr_is_name (call->a->a, "reader"))
    return FX_OK;
  const fx_expr *f = call->a;
  if (f->slen == 7 && memcmp (f->s, "storage", 7) == 0)
    {
      if (value == NULL || lhs->kind != E_NAME)
        return fx_py_error (p, &p->lx.toks[call->tok_first], "reader.storage() must be assigned to a name");
      return reader_storage (p, lc, lhs, call);
    }
  if (f->slen == 6 && memcmp (f->s, "tensor", 6) == 0)
    return reader_tensor (p, lc, call, comment);
  if (f->slen == 6 && memcmp (f->s, "symint", 6) == 0)
    {
      fx_input_spec *spec = new_input (p, comment, FX_INPUT_SYMINT);
      spec->val.kind = FX_VAL_SYMINT;
      if (call->n >= 1)
        {
          fx_arg a;
          if ((st = const_arg (p, call->items[0], &a)) != FX_OK)
            return st;
          if (a.kind == FX_ARG_INT)
            spec->val.i = a.u.i;
          else
            return fx_py_error (p, &p->lx.toks[call->items[0]->tok_first], "reader.symint() expects an int");
        }
      return FX_OK;
    }
  if (f->slen == 5 && memcmp (f->s, "const", 5) == 0)
    {
      new_input (p, comment, FX_INPUT_OTHER);
      return FX_OK;
    }
  return FX_OK;
}

fx_status
fx_py_parse_load_args (fx_pyparser *p)
{
  load_ctx lc = { { 0 } };
  fx_status st = skip_def_header (p);
  if (st == FX_OK)
    st = fx_py_parse_block (p, load_statement, &lc);
  fx_py_map_free (&lc.storages);
  return st;
}

/* ---------------------------------------------------------------- args = [...] (older repro.py) */

fx_status
fx_py_parse_args_list (fx_pyparser *p)
{
  size_t start = p->pos;
  fx_expr *lhs, *value;
  fx_status st;

  p->depth = 0;
  st = fx_py_parse_testlist (p, &lhs);
  if (st == FX_OK)
    st = fx_py_expect_op (p, OP_EQUAL, NULL);
  if (st == FX_OK)
    st = fx_py_parse_testlist (p, &value);
  if (st == FX_OK)
    st = fx_py_end_statement (p, NULL);
  /* `args = [rand_strided(...) for ...]` and the like: not the list this reads */
  if (st != FX_OK || value->kind != E_LIST)
    {
      fx_diag_clear (p->diag);
      p->pos = start;
      p->depth = 0;
      return fx_py_skip_statement (p);
    }
  for (size_t i = 0; i < value->n; i++)
    {
      const fx_expr *t = value->items[i];
      if (t->kind != E_TUPLE || t->n != 4)
        return FX_OK;
    }
  for (size_t i = 0; i < value->n; i++)
    {
      const fx_expr *t = value->items[i];
      fx_input_spec *spec = new_input (p, NULL, FX_INPUT_TENSOR);
      fx_val *v = &spec->val;
      int n_strides = 0;
      fx_arg dtype, dev;
      if (!sym_dims (p, t->items[0], &v->tensor.sizes, &v->tensor.ndim)
          || !sym_dims (p, t->items[1], &v->tensor.strides, &n_strides) || n_strides != v->tensor.ndim)
        return fx_py_error (p, &p->lx.toks[t->tok_first], "expected (shape, stride, dtype, device) with matching "
                                                         "shape and stride");
      if ((st = const_arg (p, t->items[2], &dtype)) != FX_OK || (st = const_arg (p, t->items[3], &dev)) != FX_OK)
        return st;
      if (dtype.kind != FX_ARG_DTYPE)
        return fx_py_error (p, &p->lx.toks[t->items[2]->tok_first], "expected a torch dtype");
      v->kind = FX_VAL_TENSOR;
      v->tensor.dtype = dtype.u.dtype;
      if (dev.kind == FX_ARG_DEVICE)
        v->tensor.device = dev.u.device, v->tensor.has_device = true;
      else if (dev.kind == FX_ARG_STR && fx_device_parse (dev.u.s, &v->tensor.device))
        v->tensor.has_device = true;
      else
        return fx_py_error (p, &p->lx.toks[t->items[3]->tok_first], "expected a device");
    }
  p->inputs_unnamed = true;
  return FX_OK;
}
