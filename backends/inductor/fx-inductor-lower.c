/* fx-inductor-lower.c: lowering of an ATen graph to the inductor loop IR: one loop node per pointwise or reduction
   op (bodies over affine loads), views as index rewrites, extern GEMMs and reference-kernel fallbacks. */
#include "fx-inductor-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- tables */

const char *
ind_ctype (fx_dtype dtype)
{
  switch ((int) dtype)
    {
    case FX_DTYPE_F32: return "float";
    case FX_DTYPE_F64: return "double";
    case FX_DTYPE_I64: return "int64_t";
    case FX_DTYPE_I32: return "int32_t";
    case FX_DTYPE_I16: return "int16_t";
    case FX_DTYPE_I8: return "int8_t";
    case FX_DTYPE_U8: return "uint8_t";
    case FX_DTYPE_BOOL: return "bool";
    default: return NULL;
    }
}

static bool
dtype_ok (fx_dtype dtype)
{
  return ind_ctype (dtype) != NULL;
}

/* The compute dtypes a template serves (others: no lowering, the op falls back). */
typedef enum
{
  EXPR_ANY,
  EXPR_FLOAT,    /* floating only */
  EXPR_INT,      /* integral and bool only */
} expr_dtypes;

/* Body templates: $0..$3 are operands (already cast to their dtype), $T the compute type. */
typedef struct ind_expr_def
{
  int op;
  const char *tmpl;
  int n_tensor;             /* leading tensor/scalar operands taken from the call args */
  bool out_bool;
  expr_dtypes dtypes;
} ind_expr_def;

static const ind_expr_def expr_defs[] = {
  { FX_OP_MUL_TENSOR, "$0 * $1", 2, false },
  { FX_OP_MUL_SCALAR, "$0 * $1", 2, false },
  { FX_OP_DIV_TENSOR, "$0 / $1", 2, false, EXPR_FLOAT },
  { FX_OP_DIV_SCALAR, "$0 / $1", 2, false, EXPR_FLOAT },
  { FX_OP_POW_TENSOR_TENSOR, "pow($0, $1)", 2, false, EXPR_FLOAT },
  { FX_OP_POW_SCALAR, "pow($0, $1)", 2, false, EXPR_FLOAT },
  { FX_OP_REMAINDER_TENSOR, "($0 - floor($0 / $1) * $1)", 2, false, EXPR_FLOAT },
  { FX_OP_REMAINDER_SCALAR, "($0 - floor($0 / $1) * $1)", 2, false, EXPR_FLOAT },
  { FX_OP_FMOD_TENSOR, "fmod($0, $1)", 2, false, EXPR_FLOAT },
  { FX_OP_FMOD_SCALAR, "fmod($0, $1)", 2, false, EXPR_FLOAT },
  { FX_OP_BITWISE_AND_TENSOR, "$0 & $1", 2, false, EXPR_INT },
  { FX_OP_BITWISE_OR_TENSOR, "$0 | $1", 2, false, EXPR_INT },
  { FX_OP_BITWISE_XOR_TENSOR, "$0 ^ $1", 2, false, EXPR_INT },
  { FX_OP_LEAKY_RELU, "($0 > 0 ? $0 : $0 * $1)", 2, false },
  { FX_OP_MASKED_FILL_SCALAR, "IND_SEL ($1, $2, $0)", 3, false },
  { FX_OP_MAXIMUM, "(($0 > $1 || $0 != $0) ? $0 : $1)", 2, false },
  { FX_OP_MINIMUM, "(($0 < $1 || $0 != $0) ? $0 : $1)", 2, false },
  { FX_OP_ATAN2, "atan2($0, $1)", 2, false },
  { FX_OP_EQ_TENSOR, "$0 == $1", 2, true },
  { FX_OP_EQ_SCALAR, "$0 == $1", 2, true },
  { FX_OP_NE_TENSOR, "$0 != $1", 2, true },
  { FX_OP_NE_SCALAR, "$0 != $1", 2, true },
  { FX_OP_LT_TENSOR, "$0 < $1", 2, true },
  { FX_OP_LT_SCALAR, "$0 < $1", 2, true },
  { FX_OP_LE_TENSOR, "$0 <= $1", 2, true },
  { FX_OP_LE_SCALAR, "$0 <= $1", 2, true },
  { FX_OP_GT_TENSOR, "$0 > $1", 2, true },
  { FX_OP_GT_SCALAR, "$0 > $1", 2, true },
  { FX_OP_GE_TENSOR, "$0 >= $1", 2, true },
  { FX_OP_GE_SCALAR, "$0 >= $1", 2, true },
  { FX_OP_LOGICAL_AND, "($0 != 0) && ($1 != 0)", 2, true },
  { FX_OP_LOGICAL_OR, "($0 != 0) || ($1 != 0)", 2, true },
  { FX_OP_LOGICAL_XOR, "($0 != 0) != ($1 != 0)", 2, true },
  { FX_OP_NEG, "-$0", 1, false },
  { FX_OP_EXP, "exp($0)", 1, false },
  { FX_OP_EXP2, "exp2($0)", 1, false },
  { FX_OP_EXPM1, "expm1($0)", 1, false },
  { FX_OP_LOG, "log($0)", 1, false },
  { FX_OP_LOG2, "log2($0)", 1, false },
  { FX_OP_LOG10, "log10($0)", 1, false },
  { FX_OP_LOG1P, "log1p($0)", 1, false },
  { FX_OP_SIN, "sin($0)", 1, false },
  { FX_OP_COS, "cos($0)", 1, false },
  { FX_OP_TAN, "tan($0)", 1, false },
  { FX_OP_TANH, "tanh($0)", 1, false },
  { FX_OP_ASIN, "asin($0)", 1, false },
  { FX_OP_ACOS, "acos($0)", 1, false },
  { FX_OP_ATAN, "atan($0)", 1, false },
  { FX_OP_SINH, "sinh($0)", 1, false },
  { FX_OP_COSH, "cosh($0)", 1, false },
  { FX_OP_SIGMOID, "(($T) 1) / (($T) 1 + exp(-$0))", 1, false },
  { FX_OP_ERF, "erf($0)", 1, false },
  { FX_OP_ERFC, "erfc($0)", 1, false },
  { FX_OP_RSQRT, "(($T) 1) / sqrt($0)", 1, false },
  { FX_OP_SQRT, "sqrt($0)", 1, false },
  { FX_OP_RECIPROCAL, "(($T) 1) / $0", 1, false },
  { FX_OP_RELU, "($0 < 0 ? ($T) 0 : $0)", 1, false },
  { FX_OP_SILU, "$0 / (($T) 1 + exp(-$0))", 1, false },
  { FX_OP_HARDSIGMOID, "($0 + 3 < 0 ? ($T) 0 : ($0 + 3 > 6 ? ($T) 1 : ($0 + 3) / ($T) 6))", 1, false },
  { FX_OP_HARDSWISH, "($0 * ($0 + 3 < 0 ? ($T) 0 : ($0 + 3 > 6 ? ($T) 6 : $0 + 3)) / ($T) 6)", 1, false },
  { FX_OP_FLOOR, "floor($0)", 1, false },
  { FX_OP_CEIL, "ceil($0)", 1, false },
  { FX_OP_ROUND, "nearbyint($0)", 1, false },
  { FX_OP_TRUNC, "trunc($0)", 1, false },
  { FX_OP_SIGN, "($T) (($0 > 0) - ($0 < 0))", 1, false },
  { FX_OP_LOGICAL_NOT, "!($0)", 1, true },
  { FX_OP_ISNAN, "$0 != $0", 1, true },
  { FX_OP_ISINF, "isinf($0)", 1, true },
  { FX_OP_TO_COPY, "$0", 1, false },
  { FX_OP_CONVERT_ELEMENT_TYPE, "$0", 1, false },
  { FX_OP_TO_DTYPE, "$0", 1, false },
  { FX_OP_CLONE, "$0", 1, false },
  { FX_OP_LIFT_FRESH_COPY, "$0", 1, false },
};

static const char *
op_packet_name (int op_id, fx_arena *arena)
{
  const fx_op_info *info = fx_op_get ((fx_op_id) op_id);
  const char *t = info->target;   /* "aten.add.Tensor" */
  if (strncmp (t, "aten.", 5) == 0)
    t += 5;
  else if (strncmp (t, "prims.", 6) == 0)
    t += 6;
  const char *dot = strchr (t, '.');
  return fx_arena_strndup (arena, t, dot ? (size_t) (dot - t) : strlen (t));
}

/* ---------------------------------------------------------------- program building */

int
ind_add_buffer (ind_program *p, ind_buf_kind kind, fx_dtype dtype, int ndim, const int64_t *sizes,
                const int64_t *strides)
{
  p->bufs = ind_grow (p->bufs, p->n_bufs, &p->cap_bufs, sizeof *p->bufs, 32);
  ind_buffer *b = &p->bufs[p->n_bufs];
  memset (b, 0, sizeof *b);
  b->kind = kind;
  b->dtype = dtype;
  b->ndim = ndim;
  b->producer = -1;
  b->slot = -1;
  b->input_index = -1;
  b->last_use = -1;
  for (int i = 0; i < ndim; i++)
    b->sizes[i] = sizes[i];
  if (strides)
    for (int i = 0; i < ndim; i++)
      b->strides[i] = strides[i];
  else
    fx_contiguous_strides (ndim, b->sizes, b->strides);
  return p->n_bufs++;
}

static int
add_view (ind_program *p, int buf, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
  p->views = ind_grow (p->views, p->n_views, &p->cap_views, sizeof *p->views, 64);
  ind_view *v = &p->views[p->n_views];
  memset (v, 0, sizeof *v);
  v->buf = buf;
  v->ndim = ndim;
  for (int i = 0; i < ndim; i++)
    {
      v->sizes[i] = sizes[i];
      v->strides[i] = strides[i];
    }
  v->offset = offset;
  return p->n_views++;
}

static ind_node *
add_node (ind_program *p, ind_node_kind kind, int op_id)
{
  p->nodes = ind_grow (p->nodes, p->n_nodes, &p->cap_nodes, sizeof *p->nodes, 32);
  ind_node *n = &p->nodes[p->n_nodes++];
  memset (n, 0, sizeof *n);
  n->kind = kind;
  n->op_id = op_id;
  n->op_name = op_id >= 0 ? op_packet_name (op_id, p->arena) : "copy";
  n->out_buf = -1;
  n->group = -1;
  return n;
}

static void
node_add_origin (ind_program *p, ind_node *n, const char *name)
{
  n->origins = fx_arena_strv_append (p->arena, n->origins, &n->n_origins, name);
}

/* A load of view v broadcast to an iteration of `ndim` dims (right-aligned, numpy rules). */
static void
operand_load (const ind_program *p, int view, int ndim, ind_operand *o)
{
  const ind_view *v = &p->views[view];
  memset (o, 0, sizeof *o);
  o->kind = IND_OPND_LOAD;
  o->buf = v->buf;
  o->offset = v->offset;
  for (int i = 0; i < v->ndim; i++)
    {
      int d = ndim - v->ndim + i;
      if (d >= 0 && v->sizes[i] != 1)
        o->coef[d] = v->strides[i];
    }
}

static void
operand_const (ind_operand *o, double c)
{
  memset (o, 0, sizeof *o);
  o->kind = IND_OPND_CONST;
  o->c = c;
}

/* ---------------------------------------------------------------- lowering state */

typedef struct lower_state
{
  ind_program *p;
  fx_value *env;            /* meta values per node id (from the engine's shape propagation) */
  size_t n_env;
  int *node_view;           /* per node id: view index of a tensor value, or -1 */
  int **node_items;         /* per node id: view indices of a tuple value's items */
  size_t *node_n_items;
  /* tensor pointer (meta values) -> view */
  const fx_tensor **tp;
  int *tv;
  size_t n_tp, cap_tp;
  fx_arena *scratch;
} lower_state;

static void
map_tensor (lower_state *s, const fx_tensor *t, int view)
{
  if (s->n_tp == s->cap_tp)
    {
      s->cap_tp = s->cap_tp ? s->cap_tp * 2 : 64;
      s->tp = realloc (s->tp, sizeof (*s->tp) * s->cap_tp);
      s->tv = realloc (s->tv, sizeof (*s->tv) * s->cap_tp);
    }
  s->tp[s->n_tp] = t;
  s->tv[s->n_tp++] = view;
}

/* The user's node a lowered node comes from: decomposition, functionalization and sink_gather made new nodes in the
   compile's copy of the graph; their provenance names the node the user wrote. */
static const char *
origin_name (const fx_node *n)
{
  const char *name = n->name;
  const fx_node_source *src = n->meta.n_from_node ? &n->meta.from_node[0] : NULL;
  while (src && src->name && src->pass_name
         && (strcmp (src->pass_name, "decompose") == 0 || strcmp (src->pass_name, "functionalize") == 0
             || strcmp (src->pass_name, "sink_gather") == 0))
    {
      name = src->name;
      src = src->n_from ? &src->from_node[0] : NULL;
    }
  return name;
}

static int
lookup_tensor (const lower_state *s, const fx_tensor *t)
{
  for (size_t i = s->n_tp; i-- > 0;)
    if (s->tp[i] == t)
      return s->tv[i];
  return -1;
}

static void
record_node (const fx_node *node, const fx_value *value, void *data)
{
  lower_state *s = data;
  if (node->id < s->n_env)
    s->env[node->id] = fx_value_dup (value, s->scratch);
}

/* A meta tensor describing view v (for the engine's view meta functions). */
static fx_tensor *
view_meta (const ind_program *p, int view)
{
  const ind_view *v = &p->views[view];
  fx_tensor *t = fx_tensor_new_meta (p->bufs[v->buf].dtype, v->ndim, v->sizes, v->strides);
  if (t)
    t->offset = v->offset;
  return t;
}

static bool
view_is_contiguous (const ind_view *v)
{
  int64_t expect = 1;
  for (int i = v->ndim - 1; i >= 0; i--)
    {
      if (v->sizes[i] != 1 && v->strides[i] != expect)
        return false;
      expect *= v->sizes[i];
    }
  return true;
}

/* Realizes view v into a fresh contiguous buffer (a pointwise copy node); returns the new view. */
static int
realize_contiguous (lower_state *s, int view, const char *origin)
{
  ind_program *p = s->p;
  ind_view v = p->views[view];
  ind_node *n = add_node (p, IND_NODE_POINTWISE, FX_OP_CLONE);
  n->op_name = "clone";
  n->ndim = v.ndim;
  memcpy (n->sizes, v.sizes, sizeof n->sizes);
  n->out_dtype = n->compute_dtype = p->bufs[v.buf].dtype;
  n->n_opnd = 1;
  operand_load (p, view, v.ndim, &n->opnd[0]);
  n->tmpl = "$0";
  n->opnd[0].cast = n->compute_dtype;
  n->out_buf = ind_add_buffer (p, IND_BUF_COMPUTED, n->out_dtype, v.ndim, v.sizes, NULL);
  p->bufs[n->out_buf].producer = p->n_nodes - 1;
  node_add_origin (p, n, origin);
  return add_view (p, n->out_buf, v.ndim, v.sizes, p->bufs[n->out_buf].strides, 0);
}

static const ind_expr_def *
find_expr (int op)
{
  for (size_t i = 0; i < sizeof expr_defs / sizeof expr_defs[0]; i++)
    if (expr_defs[i].op == op)
      return &expr_defs[i];
  return NULL;
}

/* The template of a pointwise op given its bound call (NULL: no lowering). Fills operands. */
static const char *
pointwise_template (lower_state *s, const fx_op_call *call, const fx_tensor *out, ind_node *n, fx_buf *tmp)
{
  int op = call->op->id;
  const fx_value *a = call->args;
  int nd = out->ndim;
  ind_program *p = s->p;
  n->n_opnd = 0;
#define OPND(i) \
  do { \
      if (a[i].kind == FX_VALUE_TENSOR) \
        { \
          int vw = lookup_tensor (s, a[i].u.t); \
          if (vw < 0) \
            return NULL; \
          operand_load (p, vw, nd, &n->opnd[n->n_opnd++]); \
        } \
      else if (a[i].kind == FX_VALUE_INT || a[i].kind == FX_VALUE_FLOAT || a[i].kind == FX_VALUE_BOOL) \
        operand_const (&n->opnd[n->n_opnd++], fx_value_as_f64 (&a[i])); \
      else \
        return NULL; \
  } while (0)
  switch ((int) op)
    {
    case FX_OP_ADD_TENSOR: case FX_OP_ADD_SCALAR: case FX_OP_SUB_TENSOR: case FX_OP_SUB_SCALAR:
    case FX_OP_RSUB_TENSOR: case FX_OP_RSUB_SCALAR:
      {
        OPND (0);
        OPND (1);
        double alpha = fx_value_as_f64 (&a[2]);
        const char *sign = (op == FX_OP_ADD_TENSOR || op == FX_OP_ADD_SCALAR) ? "+" : "-";
        bool rsub = op == FX_OP_RSUB_TENSOR || op == FX_OP_RSUB_SCALAR;
        if (alpha == 1.0)
          return rsub ? "$1 - $0" : (sign[0] == '+' ? "$0 + $1" : "$0 - $1");
        operand_const (&n->opnd[n->n_opnd++], alpha);
        return rsub ? "$1 - $2 * $0" : (sign[0] == '+' ? "$0 + $2 * $1" : "$0 - $2 * $1");
      }
    case FX_OP_POW_TENSOR_SCALAR:
      {
        OPND (0);
        double e = fx_value_as_f64 (&a[1]);
        if (!fx_dtype_is_floating (n->compute_dtype))
          return NULL;
        if (e == 2.0)
          return "$0 * $0";
        if (e == 3.0)
          return "$0 * $0 * $0";
        if (e == 1.0)
          return "$0";
        if (e == 0.5)
          return "sqrt($0)";
        if (e == -1.0)
          return "(($T) 1) / $0";
        if (e == -0.5)
          return "(($T) 1) / sqrt($0)";
        OPND (1);
        return "pow($0, $1)";
      }
    case FX_OP_DIV_TENSOR_MODE: case FX_OP_DIV_SCALAR_MODE:
      {
        if (!fx_dtype_is_floating (n->compute_dtype))
          return NULL;
        OPND (0);
        OPND (1);
        if (a[2].kind != FX_VALUE_STR)
          return "$0 / $1";
        if (strcmp (a[2].u.s, "trunc") == 0)
          return "trunc($0 / $1)";
        if (strcmp (a[2].u.s, "floor") == 0)
          return "floor($0 / $1)";
        return NULL;
      }
    case FX_OP_ABS:
      OPND (0);
      return fx_dtype_is_floating (n->compute_dtype) ? "fabs($0)" : "($0 < 0 ? -$0 : $0)";
    case FX_OP_BITWISE_NOT:
      OPND (0);
      return n->compute_dtype == FX_DTYPE_BOOL ? "!$0" : "~$0";
    case FX_OP_GELU:
      {
        OPND (0);
        if (a[1].kind == FX_VALUE_STR && strcmp (a[1].u.s, "tanh") == 0)
          return "(($T) 0.5) * $0 * (($T) 1 + tanh((($T) 0.7978845608028654) * ($0 + (($T) 0.044715) * $0 * $0 * $0)))";
        return "(($T) 0.5) * $0 * (($T) 1 + erf($0 * (($T) 0.7071067811865476)))";
      }
    case FX_OP_HARDTANH:
    case FX_OP_CLAMP: case FX_OP_CLAMP_MIN: case FX_OP_CLAMP_MAX:
      {
        OPND (0);
        bool has_lo = op != FX_OP_CLAMP_MAX && !fx_value_is_none (&a[1]);
        bool has_hi = op == FX_OP_CLAMP_MAX ? true : (op == FX_OP_CLAMP_MIN ? false : !fx_value_is_none (&a[2]));
        if (op == FX_OP_CLAMP_MAX)
          {
            OPND (1);
            return "($0 > $1 ? $1 : $0)";
          }
        fx_buf_reset (tmp);
        fx_buf_puts (tmp, "$0");
        if (has_lo)
          {
            OPND (1);
            fx_buf_reset (tmp);
            fx_buf_puts (tmp, "($0 < $1 ? $1 : $0)");
          }
        if (has_hi)
          {
            int hi = n->n_opnd;
            OPND (op == FX_OP_CLAMP_MIN ? 1 : 2);
            char t[256];
            snprintf (t, sizeof t, "(%s > $%d ? $%d : %s)", has_lo ? "($0 < $1 ? $1 : $0)" : "$0", hi, hi,
                      has_lo ? "($0 < $1 ? $1 : $0)" : "$0");
            fx_buf_reset (tmp);
            fx_buf_puts (tmp, t);
          }
        return tmp->data;
      }
    case FX_OP_WHERE_SELF:
      OPND (0);
      n->opnd[0].c = 0;
      OPND (1);
      OPND (2);
      return "IND_SEL ($0, $1, $2)";
    case FX_OP_COPY:
      OPND (1);
      return "$0";
    default:
      break;
    }
  const ind_expr_def *d = find_expr (op);
  bool fl = fx_dtype_is_floating (n->compute_dtype);
  if (d == NULL || (d->dtypes == EXPR_FLOAT && !fl) || (d->dtypes == EXPR_INT && fl))
    return NULL;
  for (int i = 0; i < d->n_tensor; i++)
    OPND (i);
#undef OPND
  return d->tmpl;
}

/* Operand dtype: what each operand is converted to before the body runs. */
static fx_dtype
operand_cast (const ind_node *n, int i)
{
  if ((n->op_id == FX_OP_WHERE_SELF && i == 0) || (n->op_id == FX_OP_MASKED_FILL_SCALAR && i == 1))
    return FX_DTYPE_BOOL;
  return n->compute_dtype;
}

static void
put_const (double c, fx_dtype dtype, fx_buf *out)
{
  const char *ct = ind_ctype (dtype);
  if (isnan (c))
    fx_buf_printf (out, "((%s) NAN)", ct);
  else if (isinf (c))
    fx_buf_printf (out, "((%s) %sINFINITY)", ct, c < 0 ? "-" : "");
  else if (fx_dtype_is_floating (dtype))
    fx_buf_printf (out, "((%s) %.17g)", ct, c);
  else
    fx_buf_printf (out, "((%s) %lld)", ct, (long long) c);
}

/* "(float) (<body>)" with operands substituted: opnd_text[i] for loads (already typed as the buffer's C type),
   constants written as literals of the operand's dtype. */
void
ind_node_expr (const ind_program *p, const ind_node *n, const char *const *opnd_text, fx_buf *out)
{
  (void) p;
  const char *ct = ind_ctype (n->compute_dtype);
  fx_buf_printf (out, "(%s) (", ind_ctype (n->out_dtype));
  for (const char *c = n->tmpl; *c; c++)
    {
      if (c[0] == '$' && c[1] == 'T')
        {
          fx_buf_puts (out, ct);
          c++;
        }
      else if (c[0] == '$' && c[1] >= '0' && c[1] <= '9')
        {
          int i = c[1] - '0';
          const ind_operand *o = &n->opnd[i];
          if (o->kind == IND_OPND_CONST)
            put_const (o->c, o->cast, out);
          else
            fx_buf_printf (out, "((%s) %s)", ind_ctype (o->cast), opnd_text[i]);
          c++;
        }
      else
        fx_buf_putc (out, *c);
    }
  fx_buf_putc (out, ')');
}

static int
schema_arg (const fx_op_call *call, const char *name)
{
  const fx_op_schema *s = fx_op_get_schema (call->op->id);
  for (int i = 0; i < s->n_args; i++)
    if (strcmp (s->args[i].name, name) == 0)
      return i;
  return -1;
}

static fx_dtype
promoted_operands (const fx_op_call *call)
{
  fx_type_promo pr;
  fx_type_promo_init (&pr);
  for (int i = 0; i < call->n_args; i++)
    {
      const fx_value *v = &call->args[i];
      if (v->kind == FX_VALUE_TENSOR)
        fx_type_promo_add_tensor (&pr, v->u.t);
      else if (v->kind == FX_VALUE_FLOAT)
        fx_type_promo_add_scalar_float (&pr);
      else if (v->kind == FX_VALUE_INT)
        fx_type_promo_add_scalar_int (&pr);
      else if (v->kind == FX_VALUE_BOOL)
        fx_type_promo_add_scalar_bool (&pr);
    }
  return fx_type_promo_result (&pr);
}

/* PyTorch's injected relu bugs (torch/_inductor/codegen/cpp.py and triton.py, CppOverrides.relu): a body that
   does not compile, one that reports an error when it runs, or x + 1. */
static const char *
relu_bug_template (const ind_program *p)
{
  if (strcmp (p->relu_bug, "compile_error") == 0)
    return "compile error!";
  if (strcmp (p->relu_bug, "runtime_error") == 0)
    return p->relu_bug_gpu ? "(__trap (), $0)" : "(fx_inductor_raise (\"injected relu runtime error\"), $0)";
  return "($0 + ($T) 1)";
}

/* Adds pointwise node n (built on the stack) computing FX node `node`'s value out into a fresh contiguous buffer;
   returns the value's view. */
static int
add_pointwise (ind_program *p, const ind_node *n, const fx_node *node, const fx_tensor *out)
{
  ind_node *dst = add_node (p, IND_NODE_POINTWISE, n->op_id);
  const char *name = dst->op_name;
  *dst = *n;
  dst->op_name = name;
  dst->group = -1;
  dst->out_buf = ind_add_buffer (p, IND_BUF_COMPUTED, out->dtype, out->ndim, out->sizes, NULL);
  p->bufs[dst->out_buf].producer = p->n_nodes - 1;
  node_add_origin (p, dst, origin_name (node));
  return add_view (p, dst->out_buf, out->ndim, out->sizes, p->bufs[dst->out_buf].strides, 0);
}

static bool
lower_pointwise (lower_state *s, const fx_node *node, const fx_op_call *call, const fx_tensor *out, int *view_out)
{
  ind_program *p = s->p;
  if (!dtype_ok (out->dtype) || out->ndim > IND_MAXD)
    return false;
  for (int i = 0; i < call->n_args; i++)
    if (call->args[i].kind == FX_VALUE_TENSOR && !dtype_ok (call->args[i].u.t->dtype))
      return false;
  ind_node n;
  memset (&n, 0, sizeof n);
  n.kind = IND_NODE_POINTWISE;
  n.op_id = call->op->id;
  n.out_dtype = out->dtype;
  const ind_expr_def *d = find_expr (call->op->id);
  bool out_bool = d && d->out_bool;
  n.compute_dtype = out_bool ? promoted_operands (call) : out->dtype;
  if (!dtype_ok (n.compute_dtype))
    return false;
  n.ndim = out->ndim;
  memcpy (n.sizes, out->sizes, sizeof (int64_t) * (size_t) out->ndim);
  fx_buf tmp;
  fx_buf_init (&tmp);
  const char *t = pointwise_template (s, call, out, &n, &tmp);
  if (t == NULL)
    {
      fx_buf_free (&tmp);
      return false;
    }
  if (n.op_id == FX_OP_RELU && p->relu_bug)
    t = relu_bug_template (p);
  /* x / c with c = +-2^k is x * (1/c) exactly (the same real value, rounded once; 1/c is exact in f32 for |k| <= 100):
     attention's scores / 8 divided every element three times per softmax pass */
  if ((n.op_id == FX_OP_DIV_TENSOR || n.op_id == FX_OP_DIV_SCALAR) && n.n_opnd == 2 && strcmp (t, "$0 / $1") == 0
      && n.opnd[1].kind == IND_OPND_CONST && (n.compute_dtype == FX_DTYPE_F32 || n.compute_dtype == FX_DTYPE_F64))
    {
      int e = 0;
      double m = frexp (fabs (n.opnd[1].c), &e);
      if (m == 0.5 && e - 1 >= -100 && e - 1 <= 100)
        {
          t = "$0 * $1";
          n.opnd[1].c = 1.0 / n.opnd[1].c;
        }
    }
  n.tmpl = fx_arena_strdup (p->arena, t);
  fx_buf_free (&tmp);
  for (int i = 0; i < n.n_opnd; i++)
    n.opnd[i].cast = operand_cast (&n, i);
  *view_out = add_pointwise (p, &n, node, out);
  return true;
}

/* embedding(w, idx), gather(x, dim, idx) and index_select(x, dim, idx) of graph inputs as a pointwise node over the
   output: operand 0 loads the index, operand 1 reads the source at its other coordinates plus the index times the
   indexed dim's stride (Inductor's indirect_indexing). The node fuses like any pointwise one, so an embedding bag's
   sum reads rows of the table without writing the [N, bag, D] gather, and cross entropy's target logits are read in
   the kernel that needs them. Every index is checked: a graph input's when a run starts (ind_check_indices), a
   computed one where the kernel reads it. false: a fallback (a computed source, other dtypes, the CUDA target). */
static bool
lower_indexing (lower_state *s, const fx_node *node, const fx_op_call *call, const fx_tensor *out, int *view_out)
{
  ind_program *p = s->p;
  int id = call->op->id;
  if (!p->indirect_loads || (id != FX_OP_EMBEDDING && id != FX_OP_GATHER && id != FX_OP_INDEX_SELECT))
    return false;
  int src_arg = 0, idx_arg = id == FX_OP_EMBEDDING ? 1 : 2;
  if (call->args[src_arg].kind != FX_VALUE_TENSOR || call->args[idx_arg].kind != FX_VALUE_TENSOR)
    return false;
  int sv = lookup_tensor (s, call->args[src_arg].u.t), iv = lookup_tensor (s, call->args[idx_arg].u.t);
  if (sv < 0 || iv < 0)
    return false;
  ind_view src = p->views[sv], idx = p->views[iv];
  const ind_buffer *sb = &p->bufs[src.buf], *ib = &p->bufs[idx.buf];
  if (sb->kind != IND_BUF_INPUT || !dtype_ok (sb->dtype) || sb->dtype != out->dtype
      || (ib->dtype != FX_DTYPE_I64 && ib->dtype != FX_DTYPE_I32) || src.ndim < 1 || out->ndim > IND_MAXD)
    return false;
  int64_t dim = 0;
  if (id == FX_OP_EMBEDDING)
    {
      if (src.ndim != 2 || out->ndim != idx.ndim + 1)
        return false;
    }
  else
    {
      dim = call->args[1].u.i;
      if (dim < 0)
        dim += src.ndim;
      if (dim < 0 || dim >= src.ndim || out->ndim != src.ndim)
        return false;
      if (id == FX_OP_GATHER && idx.ndim != src.ndim)
        return false;
      if (id == FX_OP_INDEX_SELECT && idx.ndim > 1)
        return false;
    }
  ind_node n;
  memset (&n, 0, sizeof n);
  n.kind = IND_NODE_POINTWISE;
  n.op_id = id;
  n.out_dtype = n.compute_dtype = out->dtype;
  n.ndim = out->ndim;
  memcpy (n.sizes, out->sizes, sizeof (int64_t) * (size_t) out->ndim);
  n.n_opnd = 2;
  n.tmpl = "$1";
  ind_operand *io = &n.opnd[0], *so = &n.opnd[1];
  io->kind = so->kind = IND_OPND_LOAD;
  io->buf = idx.buf;
  io->offset = idx.offset;
  io->cast = FX_DTYPE_I64;
  io->local = so->local = -1;
  so->buf = src.buf;
  so->offset = src.offset;
  so->cast = n.compute_dtype;
  so->indirect = true;
  so->idx_opnd = 0;
  if (id == FX_OP_EMBEDDING)
    {
      /* out[i..., j] = w[idx[i...], j] */
      for (int d = 0; d < idx.ndim; d++)
        io->coef[d] = idx.sizes[d] == 1 ? 0 : idx.strides[d];
      so->coef[out->ndim - 1] = src.sizes[1] == 1 ? 0 : src.strides[1];
      so->idx_stride = src.strides[0];
      so->idx_bound = src.sizes[0];
    }
  else
    {
      for (int d = 0; d < out->ndim; d++)
        {
          if (d != dim && out->sizes[d] != 1)
            so->coef[d] = src.strides[d];
          if (id == FX_OP_GATHER && idx.sizes[d] != 1)
            io->coef[d] = idx.strides[d];
        }
      /* index_select: out[..., i, ...] = x[..., idx[i], ...] */
      if (id == FX_OP_INDEX_SELECT && idx.ndim == 1 && idx.sizes[0] != 1)
        io->coef[dim] = idx.strides[0];
      so->idx_stride = src.strides[dim];
      so->idx_bound = src.sizes[dim];
    }
  /* indices from a graph input are checked before the kernels run, computed ones in the kernel */
  p->index_checks = ind_grow (p->index_checks, p->n_index_checks, &p->cap_index_checks, sizeof *p->index_checks, 4);
  so->idx_check = p->n_index_checks;
  p->index_checks[p->n_index_checks++] = (ind_index_check) { ib->kind == IND_BUF_INPUT ? iv : -1, so->idx_bound, id,
                                                             dim, fx_arena_strdup (p->arena, origin_name (node)) };
  *view_out = add_pointwise (p, &n, node, out);
  return true;
}

/* The dims a reduction reduces (sorted, deduplicated); false when the dim argument is not usable. */
static bool
reduction_dims (const fx_op_call *call, int ndim, bool *reduced)
{
  for (int i = 0; i < ndim; i++)
    reduced[i] = false;
  int ai = schema_arg (call, "dim");
  if (ai < 0 || fx_value_is_none (&call->args[ai]))
    {
      for (int i = 0; i < ndim; i++)
        reduced[i] = true;
      return true;
    }
  int64_t dims[IND_MAXD];
  int nd;
  if (call->args[ai].kind == FX_VALUE_INT)
    {
      dims[0] = call->args[ai].u.i;
      nd = 1;
    }
  else
    nd = fx_value_as_int_list (&call->args[ai], dims, IND_MAXD);
  if (nd < 0)
    return false;
  if (nd == 0)
    {
      for (int i = 0; i < ndim; i++)
        reduced[i] = true;
      return true;
    }
  for (int k = 0; k < nd; k++)
    {
      int64_t d = dims[k] < 0 ? dims[k] + ndim : dims[k];
      if (d < 0 || d >= ndim)
        return false;
      reduced[d] = true;
    }
  return true;
}

static int
add_reduction (lower_state *s, const fx_node *node, const fx_op_call *call, int in_view, const bool *reduced,
               ind_red red, double param, const fx_tensor *out)
{
  ind_program *p = s->p;
  const ind_view *v = &p->views[in_view];
  ind_node *n = add_node (p, IND_NODE_REDUCTION, call->op->id);
  n->tmpl = "$0";
  n->red = red;
  n->red_param = param;
  n->out_dtype = out->dtype;
  n->compute_dtype = (red == IND_RED_ANY || red == IND_RED_ALL) ? FX_DTYPE_BOOL : out->dtype;
  if (red == IND_RED_ARGMAX || red == IND_RED_ARGMIN)
    n->compute_dtype = p->bufs[v->buf].dtype;   /* compares the input's values, stores an int64 index */
  if (red == IND_RED_MEAN || red == IND_RED_WELFORD_VAR)
    n->op_name = red == IND_RED_MEAN ? "mean" : "var";
  int k = 0;
  n->opnd[0].kind = IND_OPND_LOAD;
  n->opnd[0].buf = v->buf;
  n->opnd[0].offset = v->offset;
  n->opnd[0].cast = n->compute_dtype;
  n->n_opnd = 1;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < v->ndim; i++)
      if (reduced[i] == (pass == 1))
        {
          n->sizes[k] = v->sizes[i];
          n->opnd[0].coef[k] = v->sizes[i] == 1 ? 0 : v->strides[i];
          k++;
          if (pass == 1)
            n->nred++;
        }
  n->ndim = k;
  n->out_buf = ind_add_buffer (p, IND_BUF_COMPUTED, out->dtype, out->ndim, out->sizes, NULL);
  p->bufs[n->out_buf].producer = p->n_nodes - 1;
  node_add_origin (p, n, origin_name (node));
  return add_view (p, n->out_buf, out->ndim, out->sizes, p->bufs[n->out_buf].strides, 0);
}

/* A reduction node with two outputs (var_mean, max.dim and its index): both views, as the node's items. */
static void
map_pair (lower_state *s, const fx_node *node, const fx_tensor *out0, int v0, const fx_tensor *out1, int v1)
{
  s->node_items[node->id] = fx_arena_alloc (s->p->arena, sizeof (int) * 2);
  s->node_items[node->id][0] = v0;
  s->node_items[node->id][1] = v1;
  s->node_n_items[node->id] = 2;
  map_tensor (s, out0, v0);
  map_tensor (s, out1, v1);
}

/* A reduction over dims that are not the last, of a pointwise node's value that nothing else reads (an embedding bag's
   sum over the bag, x.sum(0) of a computed x): the producer is re-laid out to iterate the reduction's order (kept
   dims, then reduced), its buffer contiguous in that order, as Inductor's reductions inline their pointwise input.
   The reduction then reads the producer's store index and fuses it (before: "numel/rnumel mismatch", a written
   [N, bag, D] buffer). Only for a buffer whose one view is the value itself, in the producer's own dim order. */
static void
reorder_producer (lower_state *s, const fx_node *node, int vw, const bool *reduced)
{
  ind_program *p = s->p;
  if (node->n_args < 1 || node->args[0].kind != FX_ARG_NODE)
    return;
  const fx_node *x = node->args[0].u.node;
  if (x->n_users != 1 || x->id >= s->n_env || s->node_view[x->id] != vw)
    return;
  ind_view *v = &p->views[vw];
  ind_buffer *b = &p->bufs[v->buf];
  if (b->kind != IND_BUF_COMPUTED || b->producer < 0 || v->offset != 0 || v->ndim != b->ndim)
    return;
  ind_node *pn = &p->nodes[b->producer];
  if (pn->kind != IND_NODE_POINTWISE || pn->ndim != v->ndim)
    return;
  int64_t contig[IND_MAXD];
  fx_contiguous_strides (b->ndim, b->sizes, contig);
  for (int i = 0; i < v->ndim; i++)
    if (pn->sizes[i] != v->sizes[i] || b->sizes[i] != v->sizes[i]
        || (v->sizes[i] != 1 && (v->strides[i] != contig[i] || b->strides[i] != contig[i])))
      return;
  int perm[IND_MAXD], k = 0;
  bool moved = false;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < v->ndim; i++)
      if (reduced[i] == (pass == 1))
        {
          moved |= i != k;
          perm[k++] = i;
        }
  if (!moved)
    return;
  int64_t sizes[IND_MAXD], coef[IND_MAXD], strides[IND_MAXD], st = 1;
  for (int j = v->ndim - 1; j >= 0; j--)
    {
      strides[perm[j]] = v->sizes[perm[j]] == 1 ? contig[perm[j]] : st;
      st *= v->sizes[perm[j]];
    }
  for (int j = 0; j < v->ndim; j++)
    sizes[j] = pn->sizes[perm[j]];
  memcpy (pn->sizes, sizes, sizeof (int64_t) * (size_t) v->ndim);
  for (int o = 0; o < pn->n_opnd; o++)
    {
      for (int j = 0; j < v->ndim; j++)
        coef[j] = pn->opnd[o].coef[perm[j]];
      memcpy (pn->opnd[o].coef, coef, sizeof (int64_t) * (size_t) v->ndim);
    }
  memcpy (b->strides, strides, sizeof (int64_t) * (size_t) v->ndim);
  memcpy (v->strides, strides, sizeof (int64_t) * (size_t) v->ndim);
}

static bool
lower_reduction (lower_state *s, const fx_node *node, const fx_op_call *call, const fx_value *val)
{
  ind_program *p = s->p;
  int op = call->op->id;
  ind_red red;
  switch ((int) op)
    {
    case FX_OP_SUM: case FX_OP_SUM_DIM_INTLIST: red = IND_RED_SUM; break;
    case FX_OP_MEAN: case FX_OP_MEAN_DIM: red = IND_RED_MEAN; break;
    case FX_OP_PROD: case FX_OP_PROD_DIM_INT: red = IND_RED_PROD; break;
    case FX_OP_AMAX: case FX_OP_MAX: red = IND_RED_MAX; break;
    case FX_OP_AMIN: case FX_OP_MIN: red = IND_RED_MIN; break;
    case FX_OP_ANY: case FX_OP_ANY_DIM: red = IND_RED_ANY; break;
    case FX_OP_ALL: red = IND_RED_ALL; break;
    case FX_OP_VAR_CORRECTION: case FX_OP_VAR_MEAN_CORRECTION: red = IND_RED_WELFORD_VAR; break;
    /* (values, indices) and argmax/argmin: a max (min) and an index reduction over the same loop */
    case FX_OP_MAX_DIM: case FX_OP_ARGMAX: red = IND_RED_MAX; break;
    case FX_OP_MIN_DIM: case FX_OP_ARGMIN: red = IND_RED_MIN; break;
    default: return false;
    }
  bool with_index = op == FX_OP_MAX_DIM || op == FX_OP_MIN_DIM || op == FX_OP_ARGMAX || op == FX_OP_ARGMIN;
  if (with_index && !p->arg_reductions)
    return false;
  if (call->args[0].kind != FX_VALUE_TENSOR)
    return false;
  const fx_tensor *in = call->args[0].u.t;
  int vw = lookup_tensor (s, in);
  if (vw < 0 || in->ndim == 0 || !dtype_ok (in->dtype))
    return false;
  const fx_tensor *out0 = val->kind == FX_VALUE_TENSOR ? val->u.t
                          : (val->kind == FX_VALUE_TUPLE && val->u.seq.n >= 1 && val->u.seq.items[0].kind == FX_VALUE_TENSOR)
                            ? val->u.seq.items[0].u.t : NULL;
  if (out0 == NULL || !dtype_ok (out0->dtype))
    return false;
  if ((red == IND_RED_MEAN || red == IND_RED_WELFORD_VAR) && !fx_dtype_is_floating (out0->dtype))
    return false;
  bool reduced[IND_MAXD];
  if (!reduction_dims (call, in->ndim, reduced))
    return false;
  reorder_producer (s, node, vw, reduced);
  if (with_index)
    {
      /* an empty reduction is the reference kernel's error; a bool input has no lowering of its own either */
      if (in->dtype == FX_DTYPE_BOOL)
        return false;
      for (int i = 0; i < in->ndim; i++)
        if (reduced[i] && in->sizes[i] == 0)
          return false;
    }
  if (op == FX_OP_ARGMAX || op == FX_OP_ARGMIN)
    {
      if (out0->dtype != FX_DTYPE_I64)
        return false;
      int vi = add_reduction (s, node, call, vw, reduced, op == FX_OP_ARGMAX ? IND_RED_ARGMAX : IND_RED_ARGMIN, 0,
                              out0);
      s->node_view[node->id] = vi;
      map_tensor (s, out0, vi);
      return true;
    }
  if (op == FX_OP_MAX_DIM || op == FX_OP_MIN_DIM)
    {
      const fx_tensor *out1 = val->kind == FX_VALUE_TUPLE && val->u.seq.n >= 2 && val->u.seq.items[1].kind == FX_VALUE_TENSOR
                              ? val->u.seq.items[1].u.t : NULL;
      if (out1 == NULL || out1->dtype != FX_DTYPE_I64 || out0->dtype != in->dtype)
        return false;
      int v0 = add_reduction (s, node, call, vw, reduced, red, 0, out0);
      int v1 = add_reduction (s, node, call, vw, reduced, op == FX_OP_MAX_DIM ? IND_RED_ARGMAX : IND_RED_ARGMIN, 0,
                              out1);
      map_pair (s, node, out0, v0, out1, v1);
      return true;
    }
  double param = 0;
  if (red == IND_RED_WELFORD_VAR)
    {
      int ci = schema_arg (call, "correction");
      param = (ci < 0 || fx_value_is_none (&call->args[ci])) ? 1.0 : fx_value_as_f64 (&call->args[ci]);
    }
  int v0 = add_reduction (s, node, call, vw, reduced, red, param, out0);
  if (op == FX_OP_VAR_MEAN_CORRECTION)
    {
      const fx_tensor *out1 = val->u.seq.n >= 2 && val->u.seq.items[1].kind == FX_VALUE_TENSOR ? val->u.seq.items[1].u.t : NULL;
      if (out1 == NULL)
        return false;
      int v1 = add_reduction (s, node, call, vw, reduced, IND_RED_MEAN, 0, out1);
      p->nodes[p->n_nodes - 1].op_name = "var_mean";
      p->nodes[p->n_nodes - 2].op_name = "var_mean";
      map_pair (s, node, out0, v0, out1, v1);
      return true;
    }
  s->node_view[node->id] = v0;
  map_tensor (s, out0, v0);
  return true;
}

/* Extern GEMMs and fallbacks: the bound call runs at run time on views of the buffers. */
static fx_status
lower_call (lower_state *s, const fx_node *node, const fx_op_call *call, const fx_value *val, bool is_extern,
            fx_diag *diag)
{
  ind_program *p = s->p;
  ind_node *n = add_node (p, is_extern ? IND_NODE_EXTERN : IND_NODE_FALLBACK, call->op->id);
  int ni = p->n_nodes - 1;
  n->call = fx_arena_alloc (p->arena, sizeof (fx_op_call));
  *n->call = *call;
  n->call->arena = NULL;
  n->call->diag = NULL;
  /* the graph being lowered is a copy freed after the compile; a run-time error of this call names the node */
  n->call->node_name = fx_arena_strdup (p->arena, call->node_name);
  n->call->n_outs = 0;
  memset (n->call->outs, 0, sizeof n->call->outs);
  n->arg_views = fx_arena_alloc (p->arena, sizeof (int) * FX_OP_MAX_ARGS);
  n->arg_list_views = fx_arena_alloc (p->arena, sizeof (int *) * FX_OP_MAX_ARGS);
  for (int i = 0; i < call->n_args; i++)
    {
      const fx_value *a = &call->args[i];
      n->arg_views[i] = -1;
      /* strings point into the graph being lowered, which does not outlive the compile */
      if (a->kind == FX_VALUE_STR)
        n->call->args[i].u.s = fx_arena_strdup (p->arena, a->u.s);
      if (a->kind == FX_VALUE_TENSOR)
        {
          n->arg_views[i] = lookup_tensor (s, a->u.t);
          if (n->arg_views[i] < 0)
            return fx_diag_set (diag, FX_ERR_INVALID, "node '%s': a tensor argument has no buffer", node->name);
        }
      else if (a->kind == FX_VALUE_LIST)
        {
          n->arg_list_views[i] = fx_arena_alloc (p->arena, sizeof (int) * (a->u.seq.n + 1));
          for (size_t k = 0; k < a->u.seq.n; k++)
            {
              const fx_value *it = &a->u.seq.items[k];
              n->arg_list_views[i][k] = it->kind == FX_VALUE_TENSOR ? lookup_tensor (s, it->u.t) : -1;
            }
          /* the list's items are copied so that run-time views do not alias the meta values */
          fx_value *items = fx_arena_alloc (p->arena, sizeof (fx_value) * (a->u.seq.n + 1));
          memcpy (items, a->u.seq.items, sizeof (fx_value) * a->u.seq.n);
          n->call->args[i].u.seq.items = items;
        }
    }
  const fx_value *items = val;
  size_t n_items = 1;
  if (val->kind == FX_VALUE_TUPLE || val->kind == FX_VALUE_LIST)
    {
      items = val->u.seq.items;
      n_items = val->u.seq.n;
    }
  n->n_outs = (int) n_items;
  n->out_bufs = fx_arena_alloc (p->arena, sizeof (int) * (n_items + 1));
  int *views = fx_arena_alloc (p->arena, sizeof (int) * (n_items + 1));
  for (size_t k = 0; k < n_items; k++)
    {
      n = &p->nodes[ni];
      n->out_bufs[k] = -1;
      views[k] = -1;
      if (items[k].kind != FX_VALUE_TENSOR)
        continue;
      const fx_tensor *t = items[k].u.t;
      int b = ind_add_buffer (p, IND_BUF_EXTERN, t->dtype, t->ndim, t->sizes, t->strides);
      p->bufs[b].producer = ni;
      p->nodes[ni].out_bufs[k] = b;
      views[k] = add_view (p, b, t->ndim, t->sizes, t->strides, 0);
      map_tensor (s, t, views[k]);
    }
  n = &p->nodes[ni];
  n->out_buf = n->n_outs > 0 ? n->out_bufs[0] : -1;
  node_add_origin (p, n, origin_name (node));
  if (val->kind == FX_VALUE_TENSOR)
    s->node_view[node->id] = views[0];
  else
    {
      s->node_items[node->id] = views;
      s->node_n_items[node->id] = n_items;
    }
  if (!is_extern)
    {
      p->n_fallbacks++;
      fx_buf_printf (&p->fallback_log, "fallback: %s (%s): no lowering, runs the engine's reference kernel\n",
                     node->name, call->op->target);
    }
  return FX_OK;
}

static fx_status
lower_view (lower_state *s, const fx_node *node, fx_op_call *call, fx_diag *diag)
{
  ind_program *p = s->p;
  if (call->args[0].kind != FX_VALUE_TENSOR)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': view of a non-tensor", node->name);
  int vw = lookup_tensor (s, call->args[0].u.t);
  if (vw < 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "node '%s': view input has no buffer", node->name);
  int op = call->op->id;
  bool reshape = op == FX_OP_RESHAPE || op == FX_OP_VIEW || op == FX_OP_UNSAFE_VIEW || op == FX_OP_FLATTEN;
  for (int attempt = 0; attempt < 2; attempt++)
    {
      fx_tensor *m = view_meta (p, vw);
      fx_op_call c = *call;
      c.args[0] = fx_value_tensor (m);
      c.arena = s->scratch;
      c.diag = diag;
      c.n_outs = 0;
      memset (c.outs, 0, sizeof c.outs);
      fx_status st = fx_op_infer (&c);
      if (st != FX_OK && !(reshape && attempt == 0))
        {
          fx_tensor_unref (m);
          return st;
        }
      bool copied = false;
      if (st == FX_OK && reshape && !view_is_contiguous (&p->views[vw]) && c.outs[0].kind == FX_VALUE_TENSOR)
        {
          const fx_tensor *o = c.outs[0].u.t;
          int64_t cs[IND_MAXD];
          fx_contiguous_strides (o->ndim, o->sizes, cs);
          copied = o->offset == 0 && memcmp (cs, o->strides, sizeof (int64_t) * (size_t) o->ndim) == 0;
        }
      if (st != FX_OK || copied)
        {
          /* not expressible as a view: materialize the input contiguously, then view that */
          fx_op_call_clear (&c);
          fx_tensor_unref (m);
          fx_diag_clear (diag);
          vw = realize_contiguous (s, vw, origin_name (node));
          continue;
        }
      int buf = p->views[vw].buf;
      const fx_value *outs = c.outs;
      size_t n_outs = (size_t) c.n_outs;
      if (c.n_outs == 1 && c.outs[0].kind == FX_VALUE_LIST)
        {
          outs = c.outs[0].u.seq.items;
          n_outs = c.outs[0].u.seq.n;
        }
      int *views = fx_arena_alloc (p->arena, sizeof (int) * (n_outs + 1));
      for (size_t k = 0; k < n_outs; k++)
        {
          const fx_tensor *o = outs[k].u.t;
          views[k] = add_view (p, buf, o->ndim, o->sizes, o->strides, o->offset);
        }
      /* map the meta values the graph recorded for this node */
      const fx_value *val = &s->env[node->id];
      if (val->kind == FX_VALUE_TENSOR && n_outs >= 1 && c.outs[0].kind == FX_VALUE_TENSOR)
        {
          s->node_view[node->id] = views[0];
          map_tensor (s, val->u.t, views[0]);
        }
      else if ((val->kind == FX_VALUE_LIST || val->kind == FX_VALUE_TUPLE) && val->u.seq.n == n_outs)
        {
          s->node_items[node->id] = views;
          s->node_n_items[node->id] = n_outs;
          for (size_t k = 0; k < n_outs; k++)
            if (val->u.seq.items[k].kind == FX_VALUE_TENSOR)
              map_tensor (s, val->u.seq.items[k].u.t, views[k]);
        }
      else
        {
          fx_op_call_clear (&c);
          fx_tensor_unref (m);
          return fx_diag_set (diag, FX_ERR_INVALID, "node '%s': view outputs do not match the shape propagation",
                              node->name);
        }
      fx_op_call_clear (&c);
      fx_tensor_unref (m);
      return FX_OK;
    }
  return fx_diag_set (diag, FX_ERR_INVALID, "node '%s': view could not be lowered", node->name);
}

static fx_status
arg_value (lower_state *s, const fx_node *user, const fx_arg *a, fx_value *out, fx_diag *diag)
{
  const fx_arg *bad = NULL;
  if (fx_arg_to_value (a, s->env, s->scratch, out, &bad) != FX_OK)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': an argument the inductor backend cannot use",
                        user->name);
  return FX_OK;
}

static fx_status
lower_node (lower_state *s, const fx_node *node, fx_diag *diag)
{
  int id = node->target.op_id;
  if (id < 0)
    id = fx_op_lookup (node->target.name);
  if (id < 0)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': op '%s' is not in the engine's op table",
                        node->name, node->target.name);
  const fx_op_info *op = fx_op_get ((fx_op_id) id);
  fx_value args[FX_OP_MAX_ARGS], kwv[FX_OP_MAX_ARGS];
  const char *kwn[FX_OP_MAX_ARGS];
  if (node->n_args > FX_OP_MAX_ARGS || node->n_kwargs > FX_OP_MAX_ARGS)
    return fx_diag_set (diag, FX_ERR_INVALID, "node '%s': too many arguments", node->name);
  for (size_t i = 0; i < node->n_args; i++)
    if (arg_value (s, node, &node->args[i], &args[i], diag) != FX_OK)
      return diag->code;
  for (size_t i = 0; i < node->n_kwargs; i++)
    {
      kwn[i] = node->kwargs[i].name;
      if (arg_value (s, node, &node->kwargs[i].value, &kwv[i], diag) != FX_OK)
        return diag->code;
    }
  fx_op_call call;
  memset (&call, 0, sizeof call);
  call.arena = s->scratch;
  call.node_name = node->name;
  fx_status st = fx_op_bind (&call, op, args, node->n_args, kwn, kwv, node->n_kwargs, diag);
  if (st != FX_OK)
    return st;
  const fx_value *val = &s->env[node->id];
  if (op->kind == FX_OP_KIND_VIEW)
    return lower_view (s, node, &call, diag);
  if (op->kind == FX_OP_KIND_POINTWISE && val->kind == FX_VALUE_TENSOR)
    {
      int vw;
      if (lower_pointwise (s, node, &call, val->u.t, &vw))
        {
          s->node_view[node->id] = vw;
          map_tensor (s, val->u.t, vw);
          return FX_OK;
        }
    }
  if (op->kind == FX_OP_KIND_REDUCTION && lower_reduction (s, node, &call, val))
    return FX_OK;
  if (val->kind == FX_VALUE_TENSOR)
    {
      int vw;
      if (lower_indexing (s, node, &call, val->u.t, &vw))
        {
          s->node_view[node->id] = vw;
          map_tensor (s, val->u.t, vw);
          return FX_OK;
        }
    }
  if (val->kind != FX_VALUE_TENSOR && val->kind != FX_VALUE_TUPLE && val->kind != FX_VALUE_LIST)
    return FX_OK;   /* sym_size and friends: their value is already in env */
  bool is_extern = op->kind == FX_OP_KIND_EXTERN;
  return lower_call (s, node, &call, val, is_extern, diag);
}

fx_status
ind_lower (ind_program *p, const fx_graph *graph, const fx_value *inputs, size_t n_inputs, fx_diag *diag)
{
  lower_state s;
  memset (&s, 0, sizeof s);
  s.p = p;
  s.scratch = fx_arena_new ();
  uint32_t max_id = 0;
  for (const fx_node *n = graph->first; n; n = n->next)
    if (n->id + 1 > max_id)
      max_id = n->id + 1;
  s.n_env = max_id;
  s.env = calloc (max_id + 1, sizeof (fx_value));
  s.node_view = malloc (sizeof (int) * (max_id + 1));
  s.node_items = calloc (max_id + 1, sizeof (int *));
  s.node_n_items = calloc (max_id + 1, sizeof (size_t));
  for (uint32_t i = 0; i <= max_id; i++)
    s.node_view[i] = -1;
  fx_interp_opts io;
  memset (&io, 0, sizeof io);
  io.meta_only = true;
  io.on_node = record_node;
  io.on_node_data = &s;
  fx_arena *oa = fx_arena_new ();
  fx_value *outs = NULL;
  size_t n_outs = 0;
  fx_status st = fx_interp_run (graph, inputs, n_inputs, &io, oa, &outs, &n_outs, diag);
  for (size_t i = 0; i < n_outs; i++)
    fx_value_clear (&outs[i]);
  fx_arena_free (oa);
  /* every buffer is allocated at run time on this machine: one over the memory limit is the node's error now, not
     a failed allocation in the middle of a run */
  size_t max_bytes = fx_tensor_max_bytes ();
  for (const fx_node *n = graph->first; st == FX_OK && n; n = n->next)
    if (!n->erased && n->op == FX_OP_CALL_FUNCTION && n->id < s.n_env)
      {
        const fx_value *v = &s.env[n->id];
        const fx_value *items = v;
        size_t n_items = 1;
        if (v->kind == FX_VALUE_TUPLE || v->kind == FX_VALUE_LIST)
          {
            items = v->u.seq.items;
            n_items = v->u.seq.n;
          }
        for (size_t k = 0; st == FX_OK && k < n_items; k++)
          {
            size_t bytes = 0;
            const fx_tensor *t = items[k].kind == FX_VALUE_TENSOR ? items[k].u.t : NULL;
            if (t == NULL)
              continue;
            fx_diag why;
            if (fx_layout_check (t->dtype, t->ndim, t->sizes, t->strides, t->offset, &bytes, &why) != FX_OK)
              st = fx_diag_set (diag, FX_ERR_INVALID, "node '%s': %s", n->name, why.message);
            else if (bytes > max_bytes)
              st = fx_diag_set (diag, FX_ERR_NOMEM, "node '%s': its output needs %zu bytes, more than the %zu bytes "
                                "one tensor may take (physical memory, or $FX_MAX_TENSOR_BYTES)", n->name, bytes,
                                max_bytes);
            if (st != FX_OK && diag)
              snprintf (diag->node, sizeof diag->node, "%s", n->name);
          }
      }
  size_t ph = 0;
  for (const fx_node *n = graph->first; st == FX_OK && n; n = n->next)
    {
      if (n->erased)
        continue;
      switch ((int) n->op)
        {
        case FX_OP_PLACEHOLDER:
          {
            if (ph >= n_inputs || inputs[ph].kind != FX_VALUE_TENSOR)
              {
                ph++;
                break;   /* non-tensor inputs are baked into env by the shape propagation */
              }
            const fx_tensor *t = inputs[ph].u.t;
            int b = ind_add_buffer (p, IND_BUF_INPUT, t->dtype, t->ndim, t->sizes, t->strides);
            p->bufs[b].input_index = (int) ph;
            int vw = add_view (p, b, t->ndim, t->sizes, t->strides, 0);
            s.node_view[n->id] = vw;
            if (s.env[n->id].kind == FX_VALUE_TENSOR)
              map_tensor (&s, s.env[n->id].u.t, vw);
            ph++;
            break;
          }
        case FX_OP_CALL_FUNCTION:
          if (n->target.kind == FX_TARGET_OPERATOR && strcmp (n->target.name, "getitem") == 0)
            {
              const fx_node *src = n->args[0].u.node;
              int64_t k = n->args[1].u.i;
              if (k < 0)
                k += (int64_t) s.node_n_items[src->id];
              if (s.node_items[src->id] && k >= 0 && (size_t) k < s.node_n_items[src->id])
                {
                  s.node_view[n->id] = s.node_items[src->id][k];
                  if (s.env[n->id].kind == FX_VALUE_TENSOR && s.node_view[n->id] >= 0)
                    map_tensor (&s, s.env[n->id].u.t, s.node_view[n->id]);
                }
              break;
            }
          if (n->target.kind != FX_TARGET_OP)
            {
              st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': only ATen ops can be compiled by inductor",
                                n->name);
              break;
            }
          {
            int before = p->n_nodes;
            st = lower_node (&s, n, diag);
            /* kernel names use the op the user wrote (original_aten), looked up in the op table so that no
               input text reaches generated code */
            int orig = n->meta.original_aten ? fx_op_lookup (n->meta.original_aten) : -1;
            if (orig >= 0)
              for (int k = before; k < p->n_nodes; k++)
                p->nodes[k].op_name = op_packet_name (orig, p->arena);
            break;
          }
        case FX_OP_OUTPUT:
          {
            const fx_arg *a = &n->args[0];
            const fx_arg *items = a;
            size_t ni = 1;
            if (a->kind == FX_ARG_TUPLE || a->kind == FX_ARG_LIST)
              {
                items = a->u.seq.items;
                ni = a->u.seq.n;
              }
            p->outputs = fx_arena_alloc (p->arena, sizeof (int) * (ni + 1));
            p->n_outputs = (int) ni;
            for (size_t i = 0; i < ni; i++)
              {
                p->outputs[i] = -1;
                if (items[i].kind == FX_ARG_NODE)
                  p->outputs[i] = s.node_view[items[i].u.node->id];
                else if (items[i].kind != FX_ARG_NONE)
                  st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "graph output %zu is not a node", i);
                if (items[i].kind == FX_ARG_NODE && p->outputs[i] < 0)
                  st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "graph output %zu ('%s') is not a tensor", i,
                                    items[i].u.node->name);
                if (p->outputs[i] >= 0)
                  p->bufs[p->views[p->outputs[i]].buf].is_output = true;
              }
            break;
          }
        default:
          st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': %s nodes cannot be compiled by inductor", n->name,
                            fx_opcode_name (n->op));
          break;
        }
    }
  for (size_t i = 0; i < s.n_env; i++)
    fx_value_clear (&s.env[i]);
  free (s.env);
  free (s.node_view);
  free (s.node_items);
  free (s.node_n_items);
  free (s.tp);
  free (s.tv);
  /* the scratch arena holds bound-call lists that fallback nodes still point at: keep it with the program */
  p->scratch = s.scratch;
  return st;
}
