/* fx-derivatives.c: derivatives.yaml's backward formulas, each emitted as core ATen table ops into the joint graph. */

/* Switches over op ids name the handled cases; `default` is the unsupported-derivative error on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "fx-autograd-impl.h"

#include <math.h>
#include <string.h>

#define N(x) fx_arg_node (x)
#define I(v) fx_arg_int (v)
#define F(v) fx_arg_float (v)
#define B(v) fx_arg_bool (v)

/* ---------------------------------------------------------------- argument helpers */

static double
arg_num (const fx_node *n, size_t i, const char *kw, double dflt)
{
  const fx_arg *a = fx_ag_arg (n, i, kw);
  if (a && a->kind == FX_ARG_INT)
    return (double) a->u.i;
  if (a && a->kind == FX_ARG_FLOAT)
    return a->u.f;
  return dflt;
}

static int64_t
arg_int (const fx_node *n, size_t i, const char *kw, int64_t dflt)
{
  const fx_arg *a = fx_ag_arg (n, i, kw);
  return a && a->kind == FX_ARG_INT ? a->u.i : dflt;
}

/* A list argument, or NULL when the argument is absent or not a list. */
static const fx_arg *
arg_list (const fx_node *n, size_t i, const char *kw)
{
  const fx_arg *a = fx_ag_arg (n, i, kw);
  return a && (a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE) ? a : NULL;
}

static int64_t
norm_dim (int64_t d, int ndim)
{
  return d < 0 ? d + (ndim > 0 ? ndim : 1) : d;
}

static fx_arg
sizes_of (fx_grad_ctx *c, const fx_tensor_meta *m)
{
  int64_t v[FX_AG_MAX_DIMS];
  for (int i = 0; i < m->ndim && i < FX_AG_MAX_DIMS; i++)
    v[i] = m->sizes[i].value;
  return fx_arg_int_list (c->g->arena, v, m->ndim);
}

/* Marks the reduced dims of a reduction's dim argument (None or [] reduce all); returns how many. */
static int
reduced_dims (const fx_node *n, size_t i, const char *kw, int ndim, bool *reduced)
{
  const fx_arg *a = fx_ag_arg (n, i, kw);
  memset (reduced, 0, sizeof (bool) * FX_AG_MAX_DIMS);
  int cnt = 0;
  if (a && a->kind == FX_ARG_INT)
    {
      reduced[norm_dim (a->u.i, ndim)] = true;
      return 1;
    }
  if (a && (a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE) && a->u.seq.n > 0)
    {
      for (size_t k = 0; k < a->u.seq.n; k++)
        if (a->u.seq.items[k].kind == FX_ARG_INT)
          {
            int64_t d = norm_dim (a->u.seq.items[k].u.i, ndim);
            if (d >= 0 && d < ndim && !reduced[d])
              cnt++, reduced[d] = true;
          }
      return cnt;
    }
  for (int d = 0; d < ndim; d++)
    reduced[d] = true;
  return ndim;
}

static fx_node *
scalar_zero (fx_grad_ctx *c, const fx_tensor_meta *like)
{
  fx_kwarg kw[3] = { { "dtype", fx_arg_dtype (like->dtype) }, { "layout", fx_arg_layout (FX_LAYOUT_STRIDED) },
                     { "device", fx_arg_device (like->has_device ? like->device : fx_device_cpu ()) } };
  return fx_ag_call (c, FX_OP_SCALAR_TENSOR, FX_AG_ARGS (I (0)), kw, 3);
}

static fx_node *
zeros_of (fx_grad_ctx *c, const fx_tensor_meta *like)
{
  fx_kwarg kw[3] = { { "dtype", fx_arg_dtype (like->dtype) }, { "layout", fx_arg_layout (FX_LAYOUT_STRIDED) },
                     { "device", fx_arg_device (like->has_device ? like->device : fx_device_cpu ()) } };
  return fx_ag_call (c, FX_OP_FULL, FX_AG_ARGS (sizes_of (c, like), I (0)), kw, 3);
}

static fx_node *
to_dtype (fx_grad_ctx *c, fx_node *x, fx_dtype dtype)
{
  fx_kwarg kw[1] = { { "dtype", fx_arg_dtype (dtype) } };
  return fx_ag_call (c, FX_OP_TO_COPY, FX_AG_ARGS (N (x)), kw, 1);
}

/* sum_to_size: reduces a gradient of shape gm to the input's shape xm (broadcasting's backward). */
static fx_node *
sum_to (fx_grad_ctx *c, fx_node *g, const fx_tensor_meta *gm, const fx_tensor_meta *xm)
{
  if (g == NULL || gm == NULL || xm == NULL)
    return g;
  int off = gm->ndim - xm->ndim;
  int64_t dims[FX_AG_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < gm->ndim && i < FX_AG_MAX_DIMS; i++)
    if (i < off || (xm->sizes[i - off].value == 1 && gm->sizes[i].value != 1))
      dims[nd++] = i;
  if (nd == 0)
    return g;
  fx_node *s = FX_AG (c, SUM_DIM_INTLIST, N (g), fx_arg_int_list (c->g->arena, dims, nd), B (true));
  if (off != 0)
    s = FX_AG (c, VIEW, N (s), sizes_of (c, xm));
  return s;
}

/* Accumulates g (shaped like c->from's output) into input x, reduced to x's shape. */
static void
acc_to (fx_grad_ctx *c, fx_node *x, fx_node *g)
{
  fx_ag_accumulate (c, x, sum_to (c, g, fx_ag_meta (c->from), fx_ag_meta (x)));
}

/* A reduction's gradient (or result) brought back to keepdim form: unsqueezed at every reduced dim. */
static fx_node *
unsqueeze_reduced (fx_grad_ctx *c, fx_node *g, const bool *reduced, int ndim, bool keepdim)
{
  if (keepdim)
    return g;
  for (int d = 0; d < ndim; d++)
    if (reduced[d])
      g = FX_AG (c, UNSQUEEZE, N (g), I (d));
  return g;
}

static fx_node *
expand_back (fx_grad_ctx *c, fx_node *g, const bool *reduced, const fx_tensor_meta *xm, bool keepdim)
{
  const fx_tensor_meta *gm = fx_ag_meta (c->from);
  if (!(gm && gm->ndim == 0))
    g = unsqueeze_reduced (c, g, reduced, xm->ndim, keepdim);
  return FX_AG (c, EXPAND, N (g), sizes_of (c, xm));
}

static double
reduced_numel (const bool *reduced, const fx_tensor_meta *xm)
{
  double n = 1;
  for (int d = 0; d < xm->ndim; d++)
    if (reduced[d])
      n *= (double) xm->sizes[d].value;
  return n;
}

/* ---------------------------------------------------------------- pointwise */

static fx_status
bw_add_sub (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  const fx_node *f = c->from;
  double alpha = arg_num (f, 2, "alpha", 1);
  bool rsub = op == FX_OP_RSUB_TENSOR || op == FX_OP_RSUB_SCALAR;
  double fa = rsub ? -alpha : 1, fb = op == FX_OP_SUB_TENSOR ? -alpha : rsub ? 1 : alpha;
  fx_node *a = fx_ag_arg_node (f, 0, "self"), *b = fx_ag_arg_node (f, 1, "other");
  fx_node *ga = fa == 1 ? g : fa == -1 ? FX_AG (c, NEG, N (g)) : FX_AG (c, MUL_TENSOR, N (g), F (fa));
  acc_to (c, a, ga);
  if (b != NULL && c->rg[b->id])
    acc_to (c, b, fb == 1 ? g : fb == -1 ? FX_AG (c, NEG, N (g)) : FX_AG (c, MUL_TENSOR, N (g), F (fb)));
  return FX_OK;
}

static fx_status
bw_mul_div (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  const fx_node *f = c->from;
  fx_node *a = fx_ag_arg_node (f, 0, "self"), *b = fx_ag_arg_node (f, 1, "other");
  fx_arg other = *fx_ag_arg (f, 1, "other");
  bool div = op == FX_OP_DIV_TENSOR || op == FX_OP_DIV_SCALAR;
  if (a != NULL && c->rg[a->id])
    acc_to (c, a, div ? FX_AG (c, DIV_TENSOR, N (g), other) : FX_AG (c, MUL_TENSOR, N (g), other));
  if (b == NULL || !c->rg[b->id])
    return FX_OK;
  if (!div)
    {
      acc_to (c, b, FX_AG (c, MUL_TENSOR, N (g), *fx_ag_arg (f, 0, "self")));
      return FX_OK;
    }
  /* -grad * self / (other * other) */
  fx_node *neg = FX_AG (c, NEG, N (g));
  fx_node *num = FX_AG (c, MUL_TENSOR, N (neg), *fx_ag_arg (f, 0, "self"));
  fx_node *den = FX_AG (c, MUL_TENSOR, N (b), N (b));
  acc_to (c, b, FX_AG (c, DIV_TENSOR, N (num), N (den)));
  return FX_OK;
}

static fx_status
bw_pow (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  const fx_node *f = c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self"), *e = fx_ag_arg_node (f, 1, "exponent");
  if (op == FX_OP_POW_TENSOR_SCALAR)
    {
      double ev = arg_num (f, 1, "exponent", 1);
      if (ev == 0)
        {
          fx_ag_accumulate (c, x, FX_AG (c, MUL_TENSOR, N (g), F (0)));
          return FX_OK;
        }
      fx_node *p = FX_AG (c, POW_TENSOR_SCALAR, N (x), F (ev - 1));
      fx_node *m = FX_AG (c, MUL_TENSOR, N (p), F (ev));
      fx_ag_accumulate (c, x, FX_AG (c, MUL_TENSOR, N (g), N (m)));
      return FX_OK;
    }
  if (op != FX_OP_POW_TENSOR_TENSOR)
    return fx_node_error (c->diag, f, "autograd", FX_ERR_UNSUPPORTED, "no derivative formula for %s", f->target.name);
  if (x && c->rg[x->id])
    {
      fx_node *em1 = FX_AG (c, SUB_TENSOR, N (e), F (1));
      fx_node *p = FX_AG (c, POW_TENSOR_TENSOR, N (x), N (em1));
      fx_node *m = FX_AG (c, MUL_TENSOR, N (e), N (p));
      acc_to (c, x, FX_AG (c, MUL_TENSOR, N (g), N (m)));
    }
  if (e && c->rg[e->id])
    {
      /* where(self == 0 & exponent >= 0, 0, result * log(self)) */
      fx_node *z = FX_AG (c, EQ_SCALAR, N (x), I (0));
      fx_node *nn = FX_AG (c, GE_SCALAR, N (e), I (0));
      fx_node *mask = FX_AG (c, LOGICAL_AND, N (z), N (nn));
      fx_node *lg = FX_AG (c, LOG, N (x));
      fx_node *rl = FX_AG (c, MUL_TENSOR, N ((fx_node *) f), N (lg));
      fx_node *w = FX_AG (c, WHERE_SELF, N (mask), N (scalar_zero (c, fx_ag_meta (f))), N (rl));
      acc_to (c, e, FX_AG (c, MUL_TENSOR, N (g), N (w)));
    }
  return FX_OK;
}

static fx_node *
gelu_grad (fx_grad_ctx *c, fx_node *g, fx_node *x, bool tanh_approx)
{
  if (tanh_approx)
    {
      const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
      fx_node *x_sq = FX_AG (c, MUL_TENSOR, N (x), N (x));
      fx_node *x_cube = FX_AG (c, MUL_TENSOR, N (x_sq), N (x));
      fx_node *inner0 = FX_AG (c, MUL_TENSOR, N (x_cube), F (kappa));
      fx_node *inner1 = FX_AG (c, ADD_TENSOR, N (x), N (inner0));
      fx_node *inner = FX_AG (c, MUL_TENSOR, N (inner1), F (beta));
      fx_node *t = FX_AG (c, TANH, N (inner));
      fx_node *left = FX_AG (c, MUL_TENSOR, N (x), F (0.5));
      fx_node *right = FX_AG (c, ADD_TENSOR, N (t), F (1));
      fx_node *left_d = FX_AG (c, MUL_TENSOR, N (right), F (0.5));
      fx_node *t_sq = FX_AG (c, MUL_TENSOR, N (t), N (t));
      fx_node *one_m = FX_AG (c, RSUB_SCALAR, N (t_sq), I (1));
      fx_node *rd0 = FX_AG (c, MUL_TENSOR, N (left), N (one_m));
      fx_node *xs3 = FX_AG (c, MUL_TENSOR, N (x_sq), F (3 * kappa));
      fx_node *xs3p = FX_AG (c, ADD_TENSOR, N (xs3), F (1));
      fx_node *inner_d = FX_AG (c, MUL_TENSOR, N (xs3p), F (beta));
      fx_node *right_d = FX_AG (c, MUL_TENSOR, N (rd0), N (inner_d));
      fx_node *sum = FX_AG (c, ADD_TENSOR, N (left_d), N (right_d));
      return FX_AG (c, MUL_TENSOR, N (g), N (sum));
    }
  const double kAlpha = M_SQRT1_2, kBeta = M_2_SQRTPI * M_SQRT1_2 * 0.5;
  fx_node *m1 = FX_AG (c, MUL_TENSOR, N (x), F (kAlpha));
  fx_node *erf = FX_AG (c, ERF, N (m1));
  fx_node *a1 = FX_AG (c, ADD_TENSOR, N (erf), F (1));
  fx_node *cdf = FX_AG (c, MUL_TENSOR, N (a1), F (0.5));
  fx_node *sq = FX_AG (c, MUL_TENSOR, N (x), N (x));
  fx_node *m2 = FX_AG (c, MUL_TENSOR, N (sq), F (-0.5));
  fx_node *ex = FX_AG (c, EXP, N (m2));
  fx_node *pdf = FX_AG (c, MUL_TENSOR, N (ex), F (kBeta));
  fx_node *xp = FX_AG (c, MUL_TENSOR, N (x), N (pdf));
  fx_node *s = FX_AG (c, ADD_TENSOR, N (cdf), N (xp));
  return FX_AG (c, MUL_TENSOR, N (g), N (s));
}

/* where(mask, g, 0) (or where(mask, 0, g) when zero_where_true). */
static fx_node *
masked_grad (fx_grad_ctx *c, fx_node *mask, fx_node *g, bool zero_where_true)
{
  fx_node *z = scalar_zero (c, fx_ag_meta (c->from));
  return zero_where_true ? FX_AG (c, WHERE_SELF, N (mask), N (z), N (g)) : FX_AG (c, WHERE_SELF, N (mask), N (g), N (z));
}

/* clamp, clamp_min, clamp_max, hardtanh: the gradient passes where min <= x <= max. */
static fx_node *
clamp_grad (fx_grad_ctx *c, fx_node *g, fx_node *x, fx_op_id op)
{
  const fx_node *f = c->from;
  const fx_arg *lo = NULL, *hi = NULL;
  fx_arg dlo = F (-1), dhi = F (1);
  if (op == FX_OP_CLAMP || op == FX_OP_CLAMP_TENSOR)
    lo = fx_ag_arg (f, 1, "min"), hi = fx_ag_arg (f, 2, "max");
  else if (op == FX_OP_CLAMP_MIN)
    lo = fx_ag_arg (f, 1, "min");
  else if (op == FX_OP_CLAMP_MAX)
    hi = fx_ag_arg (f, 1, "max");
  else
    {
      lo = fx_ag_arg (f, 1, "min_val"), hi = fx_ag_arg (f, 2, "max_val");
      lo = lo ? lo : &dlo;
      hi = hi ? hi : &dhi;
    }
  bool tensor = op == FX_OP_CLAMP_TENSOR;
  fx_node *mask = NULL;
  if (lo && lo->kind != FX_ARG_NONE)
    mask = tensor ? FX_AG (c, GE_TENSOR, N (x), *lo) : FX_AG (c, GE_SCALAR, N (x), *lo);
  if (hi && hi->kind != FX_ARG_NONE)
    {
      fx_node *m = tensor ? FX_AG (c, LE_TENSOR, N (x), *hi) : FX_AG (c, LE_SCALAR, N (x), *hi);
      mask = mask ? FX_AG (c, LOGICAL_AND, N (mask), N (m)) : m;
    }
  return mask ? masked_grad (c, mask, g, false) : g;
}

/* Activations (relu, gelu, silu, hard*, clamps): the gradient of the input, or NULL when op is not one. */
static fx_node *
activation_grad (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  fx_node *f = (fx_node *) c->from, *x = fx_ag_arg_node (f, 0, "self");
  switch (op)
    {
    case FX_OP_RELU:
      return masked_grad (c, FX_AG (c, LE_SCALAR, N (f), I (0)), g, true);
    case FX_OP_LEAKY_RELU:
      {
        fx_node *pos = FX_AG (c, GT_SCALAR, N (x), I (0));
        fx_node *neg = FX_AG (c, MUL_TENSOR, N (g), F (arg_num (f, 1, "negative_slope", 0.01)));
        return FX_AG (c, WHERE_SELF, N (pos), N (g), N (neg));
      }
    case FX_OP_GELU:
      {
        const fx_arg *ap = fx_ag_arg (f, 1, "approximate");
        return gelu_grad (c, g, x, ap && ap->kind == FX_ARG_STR && strcmp (ap->u.s, "tanh") == 0);
      }
    case FX_OP_SILU:
      {
        fx_node *s = FX_AG (c, SIGMOID, N (x));
        fx_node *om = FX_AG (c, RSUB_SCALAR, N (s), I (1));
        fx_node *xm = FX_AG (c, MUL_TENSOR, N (x), N (om));
        fx_node *a1 = FX_AG (c, ADD_TENSOR, N (xm), F (1));
        return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, MUL_TENSOR, N (s), N (a1))));
      }
    case FX_OP_HARDSIGMOID:
      {
        /* grad / 6 where -3 < x < 3 */
        fx_node *in = FX_AG (c, LOGICAL_AND, N (FX_AG (c, GT_SCALAR, N (x), I (-3))), N (FX_AG (c, LT_SCALAR, N (x), I (3))));
        return masked_grad (c, in, FX_AG (c, DIV_TENSOR, N (g), F (6)), false);
      }
    case FX_OP_HARDSWISH:
      {
        /* x < -3: 0; x <= 3: grad * (x / 3 + 0.5); else grad */
        fx_node *mid = FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, ADD_TENSOR, N (FX_AG (c, DIV_TENSOR, N (x), F (3))), F (0.5))));
        fx_node *hi = FX_AG (c, WHERE_SELF, N (FX_AG (c, LE_SCALAR, N (x), I (3))), N (mid), N (g));
        return masked_grad (c, FX_AG (c, LT_SCALAR, N (x), I (-3)), hi, true);
      }
    case FX_OP_ERF:
      {
        fx_node *sq = FX_AG (c, MUL_TENSOR, N (x), N (x));
        fx_node *ex = FX_AG (c, EXP, N (FX_AG (c, NEG, N (sq))));
        return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, MUL_TENSOR, N (ex), F (M_2_SQRTPI))));
      }
    case FX_OP_CLAMP:
    case FX_OP_CLAMP_TENSOR:
    case FX_OP_CLAMP_MIN:
    case FX_OP_CLAMP_MAX:
    case FX_OP_HARDTANH:
      return clamp_grad (c, g, x, op);
    default:
      return NULL;
    }
}

/* Other unary pointwise ops (exp, log, trigonometry, copies): the gradient of the input, or NULL when op is not
   one. */
static fx_node *
unary_grad (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  fx_node *f = (fx_node *) c->from, *x = fx_ag_arg_node (f, 0, "self");
  switch (op)
    {
    case FX_OP_NEG:
      return FX_AG (c, NEG, N (g));
    case FX_OP_EXP:
      return FX_AG (c, MUL_TENSOR, N (g), N (f));
    case FX_OP_EXPM1:
      return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, ADD_TENSOR, N (f), F (1))));
    case FX_OP_LOG:
      return FX_AG (c, DIV_TENSOR, N (g), N (x));
    case FX_OP_LOG1P:
      return FX_AG (c, DIV_TENSOR, N (g), N (FX_AG (c, ADD_TENSOR, N (x), F (1))));
    case FX_OP_SIN:
      return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, COS, N (x))));
    case FX_OP_COS:
      return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, NEG, N (FX_AG (c, SIN, N (x))))));
    case FX_OP_TANH:
      {
        fx_node *yy = FX_AG (c, MUL_TENSOR, N (f), N (f));
        return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, RSUB_SCALAR, N (yy), I (1))));
      }
    case FX_OP_SIGMOID:
      {
        fx_node *om = FX_AG (c, RSUB_SCALAR, N (f), I (1));
        return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, MUL_TENSOR, N (f), N (om))));
      }
    case FX_OP_SQRT:
      return FX_AG (c, DIV_TENSOR, N (g), N (FX_AG (c, MUL_TENSOR, N (f), F (2))));
    case FX_OP_RSQRT:
      {
        fx_node *p = FX_AG (c, POW_TENSOR_SCALAR, N (f), I (3));
        return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, MUL_TENSOR, N (p), F (-0.5))));
      }
    case FX_OP_RECIPROCAL:
      {
        fx_node *yy = FX_AG (c, MUL_TENSOR, N (f), N (f));
        return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, NEG, N (yy))));
      }
    case FX_OP_ABS:
      return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, SIGN, N (x))));
    case FX_OP_TAN:
      {
        fx_node *yy = FX_AG (c, MUL_TENSOR, N (f), N (f));
        return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, ADD_TENSOR, N (yy), F (1))));
      }
    case FX_OP_SINH:
      return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, COSH, N (x))));
    case FX_OP_COSH:
      return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, SINH, N (x))));
    case FX_OP_ASIN:
    case FX_OP_ACOS:
      {
        /* +-grad / sqrt(1 - x^2) */
        fx_node *xx = FX_AG (c, MUL_TENSOR, N (x), N (x));
        fx_node *r = FX_AG (c, RSQRT, N (FX_AG (c, RSUB_SCALAR, N (xx), I (1))));
        fx_node *gr = FX_AG (c, MUL_TENSOR, N (g), N (r));
        return op == FX_OP_ACOS ? FX_AG (c, NEG, N (gr)) : gr;
      }
    case FX_OP_ATAN:
      {
        fx_node *xx = FX_AG (c, MUL_TENSOR, N (x), N (x));
        return FX_AG (c, DIV_TENSOR, N (g), N (FX_AG (c, ADD_TENSOR, N (xx), F (1))));
      }
    case FX_OP_EXP2:
      return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, MUL_TENSOR, N (f), F (M_LN2))));
    case FX_OP_LOG2:
    case FX_OP_LOG10:
      return FX_AG (c, DIV_TENSOR, N (g), N (FX_AG (c, MUL_TENSOR, N (x), F (op == FX_OP_LOG2 ? M_LN2 : M_LN10))));
    case FX_OP_ERFC:
      {
        fx_node *sq = FX_AG (c, MUL_TENSOR, N (x), N (x));
        fx_node *ex = FX_AG (c, EXP, N (FX_AG (c, NEG, N (sq))));
        return FX_AG (c, MUL_TENSOR, N (g), N (FX_AG (c, MUL_TENSOR, N (ex), F (-M_2_SQRTPI))));
      }
    case FX_OP_CLONE:
    case FX_OP_ALIAS:
    case FX_OP_LIFT_FRESH_COPY:
      return g;
    case FX_OP_TO_COPY:
    case FX_OP_CONVERT_ELEMENT_TYPE:
    case FX_OP_TO_DTYPE:
      {
        const fx_tensor_meta *xm = fx_ag_meta (x), *ym = fx_ag_meta (f);
        return xm && ym && xm->dtype != ym->dtype ? to_dtype (c, g, xm->dtype) : g;
      }
    default:
      return activation_grad (c, g, op);
    }
}

/* maximum/minimum: the gradient goes to the larger (smaller) operand, split in half where they are equal. */
static fx_status
bw_maximum (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  fx_node *a = fx_ag_arg_node (c->from, 0, "self"), *b = fx_ag_arg_node (c->from, 1, "other");
  fx_node *half = FX_AG (c, MUL_TENSOR, N (g), F (0.5));
  fx_node *eq = FX_AG (c, EQ_TENSOR, N (a), N (b));
  fx_node *a_wins = op == FX_OP_MAXIMUM ? FX_AG (c, GT_TENSOR, N (a), N (b)) : FX_AG (c, LT_TENSOR, N (a), N (b));
  fx_node *z = scalar_zero (c, fx_ag_meta (c->from));
  if (a && c->rg[a->id])
    acc_to (c, a, FX_AG (c, WHERE_SELF, N (eq), N (half), N (FX_AG (c, WHERE_SELF, N (a_wins), N (g), N (z)))));
  if (b && c->rg[b->id])
    acc_to (c, b, FX_AG (c, WHERE_SELF, N (eq), N (half), N (FX_AG (c, WHERE_SELF, N (a_wins), N (z), N (g)))));
  return FX_OK;
}

static fx_status
bw_where (fx_grad_ctx *c, fx_node *g)
{
  fx_node *cond = fx_ag_arg_node (c->from, 0, "condition");
  fx_node *a = fx_ag_arg_node (c->from, 1, "self"), *b = fx_ag_arg_node (c->from, 2, "other");
  if (a && c->rg[a->id])
    acc_to (c, a, masked_grad (c, cond, g, false));
  if (b && c->rg[b->id])
    acc_to (c, b, masked_grad (c, cond, g, true));
  return FX_OK;
}

/* ---------------------------------------------------------------- views and data movement */

/* constant_pad_nd's pad list placing g at [lo, size - hi) along dim of a tensor of ndim dims. */
static fx_node *
pad_dim (fx_grad_ctx *c, fx_node *g, int ndim, int64_t dim, int64_t lo, int64_t hi)
{
  int64_t pad[2 * FX_AG_MAX_DIMS] = { 0 };
  int np = (int) (2 * (ndim - dim));
  pad[np - 2] = lo;
  pad[np - 1] = hi;
  return FX_AG (c, CONSTANT_PAD_ND, N (g), fx_arg_int_list (c->g->arena, pad, np), I (0));
}

static fx_status
bw_slice_select (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  const fx_node *f = c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self");
  const fx_tensor_meta *xm = fx_ag_meta (x);
  int64_t dim = norm_dim (arg_int (f, 1, "dim", 0), xm->ndim), size = xm->sizes[dim].value;
  if (op == FX_OP_SELECT_INT)
    {
      int64_t idx = arg_int (f, 2, "index", 0);
      idx = idx < 0 ? idx + size : idx;
      fx_node *u = FX_AG (c, UNSQUEEZE, N (g), I (dim));
      fx_ag_accumulate (c, x, pad_dim (c, u, xm->ndim, dim, idx, size - idx - 1));
      return FX_OK;
    }
  if (arg_int (f, 4, "step", 1) != 1)
    return fx_node_error (c->diag, f, "autograd", FX_ERR_UNSUPPORTED,
                          "no derivative formula for %s with a step other than 1", f->target.name);
  int64_t start = arg_int (f, 2, "start", 0), end = arg_int (f, 3, "end", size);
  start = start < 0 ? start + size : start;
  end = end < 0 ? end + size : end;
  start = start < 0 ? 0 : start > size ? size : start;
  end = end < start ? start : end > size ? size : end;
  fx_ag_accumulate (c, x, pad_dim (c, g, xm->ndim, dim, start, size - end));
  return FX_OK;
}

static fx_status
bw_permute (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  const fx_node *f = c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self");
  int nd = fx_ag_meta (x)->ndim;
  int64_t perm[FX_AG_MAX_DIMS], inv[FX_AG_MAX_DIMS];
  for (int i = 0; i < nd; i++)
    perm[i] = i;
  if (op == FX_OP_PERMUTE)
    {
      const fx_arg *d = arg_list (f, 1, "dims");
      for (int i = 0; d && i < nd && (size_t) i < d->u.seq.n; i++)
        if (d->u.seq.items[i].kind == FX_ARG_INT)
          perm[i] = norm_dim (d->u.seq.items[i].u.i, nd);
    }
  else if (nd >= 2)
    {
      int64_t d0 = op == FX_OP_T ? 0 : norm_dim (arg_int (f, 1, "dim0", 0), nd);
      int64_t d1 = op == FX_OP_T ? 1 : norm_dim (arg_int (f, 2, "dim1", 1), nd);
      perm[d0] = d1;
      perm[d1] = d0;
    }
  for (int i = 0; i < nd; i++)
    {
      if (perm[i] < 0 || perm[i] >= nd)
        return fx_node_error (c->diag, f, "autograd", FX_ERR_INVALID, "dimension %lld out of range for %d dims",
                              (long long) perm[i], nd);
      inv[perm[i]] = i;
    }
  fx_ag_accumulate (c, x, nd < 2 ? g : FX_AG (c, PERMUTE, N (g), fx_arg_int_list (c->g->arena, inv, nd)));
  return FX_OK;
}

/* split, split_with_sizes, chunk, unbind: the pieces' gradients (zeros where none) put back together. */
static fx_status
bw_split (fx_grad_ctx *c, fx_op_id op)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self");
  int nd = fx_ag_meta (x)->ndim;
  int64_t dim = norm_dim (arg_int (f, op == FX_OP_UNBIND_INT ? 1 : 2, "dim", 0), nd);
  size_t n = f->meta.val.n_items;
  fx_arg *items = fx_arena_alloc (c->g->arena, sizeof (fx_arg) * (n ? n : 1));
  for (size_t k = 0; k < n; k++)
    {
      fx_node *gk = fx_ag_output_grad (c, f, (int64_t) k);
      if (gk == NULL)
        gk = zeros_of (c, &f->meta.val.items[k].tensor);
      items[k] = N (gk);
    }
  fx_op_id join = op == FX_OP_UNBIND_INT ? FX_OP_STACK : FX_OP_CAT;
  fx_ag_accumulate (c, x, fx_ag_call (c, join, FX_AG_ARGS (fx_arg_list (items, n), I (dim)), NULL, 0));
  return FX_OK;
}

static fx_status
bw_cat_stack (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  const fx_node *f = c->from;
  const fx_arg *list = arg_list (f, 0, "tensors");
  const fx_tensor_meta *ym = fx_ag_meta (f);
  int64_t dim = norm_dim (arg_int (f, 1, "dim", 0), ym->ndim), off = 0;
  for (size_t i = 0; list && i < list->u.seq.n; i++)
    {
      fx_node *xi = list->u.seq.items[i].kind == FX_ARG_NODE ? list->u.seq.items[i].u.node : NULL;
      const fx_tensor_meta *xm = fx_ag_meta (xi);
      int64_t len = op == FX_OP_STACK ? 1 : xm ? xm->sizes[dim].value : 0;
      if (xi && c->rg[xi->id])
        fx_ag_accumulate (c, xi, op == FX_OP_STACK ? FX_AG (c, SELECT_INT, N (g), I (dim), I (off))
                                                   : FX_AG (c, SLICE_TENSOR, N (g), I (dim), I (off), I (off + len)));
      off += len;
    }
  return FX_OK;
}

/* A gradient that may not be contiguous: a view other than view itself (permute, expand, slice, a tangent). */
static bool
maybe_strided (const fx_node *g)
{
  if (g->op == FX_OP_PLACEHOLDER)
    return true;
  if (g->target.kind != FX_TARGET_OP || g->target.op_id < 0)
    return false;
  fx_op_id op = (fx_op_id) g->target.op_id;
  return fx_op_get (op)->kind == FX_OP_KIND_VIEW && op != FX_OP_VIEW && op != FX_OP_UNSAFE_VIEW;
}

/* grad.reshape(sizes): a view, or for a gradient that may be strided a contiguous copy and the view (PyTorch's
   clone + _unsafe_view). */
static fx_node *
reshape_grad (fx_grad_ctx *c, fx_node *g, fx_arg sizes)
{
  if (!maybe_strided (g))
    return FX_AG (c, VIEW, N (g), sizes);
  fx_kwarg kw[1] = { { "memory_format", fx_arg_memfmt (FX_MEMFMT_CONTIGUOUS) } };
  fx_node *cl = fx_ag_call (c, FX_OP_CLONE, FX_AG_ARGS (N (g)), kw, 1);
  return FX_AG (c, UNSAFE_VIEW, N (cl), sizes);
}

/* View-like ops whose backward is a view back to the input's shape (or a reduction for expand). */
static fx_status
bw_view (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  fx_node *x = fx_ag_arg_node (c->from, 0, "self");
  const fx_tensor_meta *xm = fx_ag_meta (x);
  if (op == FX_OP_EXPAND)
    acc_to (c, x, g);
  else if (op == FX_OP_UNSQUEEZE)
    fx_ag_accumulate (c, x, FX_AG (c, SQUEEZE_DIM, N (g), I (norm_dim (arg_int (c->from, 1, "dim", 0), xm->ndim + 1))));
  else
    fx_ag_accumulate (c, x, reshape_grad (c, g, sizes_of (c, xm)));
  return FX_OK;
}

/* ---------------------------------------------------------------- reductions */

static fx_status
bw_sum_mean (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  const fx_node *f = c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self");
  const fx_tensor_meta *xm = fx_ag_meta (x);
  bool reduced[FX_AG_MAX_DIMS];
  bool all = op == FX_OP_SUM || op == FX_OP_MEAN;
  if (all)
    for (int d = 0; d < FX_AG_MAX_DIMS; d++)
      reduced[d] = d < xm->ndim;
  else
    reduced_dims (f, 1, "dim", xm->ndim, reduced);
  bool keepdim = !all && arg_int (f, 2, "keepdim", 0);
  const fx_arg *kd = fx_ag_arg (f, 2, "keepdim");
  keepdim = keepdim || (!all && kd && kd->kind == FX_ARG_BOOL && kd->u.b);
  fx_node *e = expand_back (c, g, reduced, xm, keepdim);
  if (op == FX_OP_MEAN || op == FX_OP_MEAN_DIM)
    e = FX_AG (c, DIV_TENSOR, N (e), F (reduced_numel (reduced, xm)));
  fx_ag_accumulate (c, x, e);
  return FX_OK;
}

static bool
arg_keepdim (const fx_node *f, size_t i)
{
  const fx_arg *kd = fx_ag_arg (f, i, "keepdim");
  return kd && ((kd->kind == FX_ARG_BOOL && kd->u.b) || (kd->kind == FX_ARG_INT && kd->u.i));
}

/* amax, amin, max, min: the gradient is shared equally by the elements equal to the result. */
static fx_status
bw_amax (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self");
  const fx_tensor_meta *xm = fx_ag_meta (x);
  bool reduced[FX_AG_MAX_DIMS];
  bool all = op == FX_OP_MAX || op == FX_OP_MIN;
  if (all)
    for (int d = 0; d < FX_AG_MAX_DIMS; d++)
      reduced[d] = d < xm->ndim;
  else
    reduced_dims (f, 1, "dim", xm->ndim, reduced);
  bool keepdim = !all && arg_keepdim (f, 2);
  int64_t dims[FX_AG_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < xm->ndim; d++)
    if (reduced[d])
      dims[nd++] = d;
  fx_node *y = f, *gk = g;
  if (!(all && xm->ndim > 0))
    y = unsqueeze_reduced (c, y, reduced, xm->ndim, keepdim), gk = unsqueeze_reduced (c, g, reduced, xm->ndim, keepdim);
  fx_node *eq = FX_AG (c, EQ_TENSOR, N (x), N (y));
  fx_node *mask = to_dtype (c, eq, xm->dtype);
  fx_node *cnt = FX_AG (c, SUM_DIM_INTLIST, N (mask), fx_arg_int_list (c->g->arena, dims, nd), B (true));
  fx_node *share = FX_AG (c, DIV_TENSOR, N (mask), N (cnt));
  fx_ag_accumulate (c, x, FX_AG (c, MUL_TENSOR, N (share), N (gk)));
  return FX_OK;
}

/* var.correction and var_mean.correction: d var = g * 2 (x - mean) / (N - correction); d mean = g / N. */
static fx_status
bw_var (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self");
  const fx_tensor_meta *xm = fx_ag_meta (x);
  bool reduced[FX_AG_MAX_DIMS];
  reduced_dims (f, 1, "dim", xm->ndim, reduced);
  int64_t dims[FX_AG_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < xm->ndim; d++)
    if (reduced[d])
      dims[nd++] = d;
  bool keepdim = arg_keepdim (f, 3);
  double corr = arg_num (f, 2, "correction", 1), n = reduced_numel (reduced, xm);
  fx_node *gvar = op == FX_OP_VAR_MEAN_CORRECTION ? fx_ag_output_grad (c, f, 0) : g;
  fx_node *gmean = op == FX_OP_VAR_MEAN_CORRECTION ? fx_ag_output_grad (c, f, 1) : NULL;
  if (gvar != NULL)
    {
      fx_node *mean = FX_AG (c, MEAN_DIM, N (x), fx_arg_int_list (c->g->arena, dims, nd), B (true));
      fx_node *diff = FX_AG (c, SUB_TENSOR, N (x), N (mean));
      fx_node *gk = unsqueeze_reduced (c, gvar, reduced, xm->ndim, keepdim);
      fx_node *s = FX_AG (c, MUL_TENSOR, N (gk), F (2.0 / (n - corr)));
      fx_ag_accumulate (c, x, FX_AG (c, MUL_TENSOR, N (s), N (diff)));
    }
  if (gmean != NULL)
    {
      fx_node *gk = unsqueeze_reduced (c, gmean, reduced, xm->ndim, keepdim);
      fx_node *e = FX_AG (c, EXPAND, N (gk), sizes_of (c, xm));
      fx_ag_accumulate (c, x, FX_AG (c, DIV_TENSOR, N (e), F (n)));
    }
  return FX_OK;
}

static fx_status
bw_logsumexp (fx_grad_ctx *c, fx_node *g)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self");
  const fx_tensor_meta *xm = fx_ag_meta (x);
  bool reduced[FX_AG_MAX_DIMS];
  reduced_dims (f, 1, "dim", xm->ndim, reduced);
  bool keepdim = arg_keepdim (f, 2);
  fx_node *y = unsqueeze_reduced (c, f, reduced, xm->ndim, keepdim);
  fx_node *gk = unsqueeze_reduced (c, g, reduced, xm->ndim, keepdim);
  fx_node *ex = FX_AG (c, EXP, N (FX_AG (c, SUB_TENSOR, N (x), N (y))));
  fx_ag_accumulate (c, x, FX_AG (c, MUL_TENSOR, N (gk), N (ex)));
  return FX_OK;
}

static fx_status
bw_cumsum (fx_grad_ctx *c, fx_node *g)
{
  fx_node *x = fx_ag_arg_node (c->from, 0, "self");
  int64_t d = norm_dim (arg_int (c->from, 1, "dim", 0), fx_ag_meta (x)->ndim);
  fx_node *fl = FX_AG (c, FLIP, N (g), fx_arg_int_list (c->g->arena, &d, 1));
  fx_node *cs = FX_AG (c, CUMSUM, N (fl), I (d));
  fx_ag_accumulate (c, x, FX_AG (c, FLIP, N (cs), fx_arg_int_list (c->g->arena, &d, 1)));
  return FX_OK;
}

/* ---------------------------------------------------------------- matmuls */

static fx_node *
mT (fx_grad_ctx *c, fx_node *x)
{
  int nd = fx_ag_meta (x) ? fx_ag_meta (x)->ndim : 2;
  int64_t p3[3] = { 0, 2, 1 }, p2[2] = { 1, 0 };
  return FX_AG (c, PERMUTE, N (x), fx_arg_int_list (c->g->arena, nd == 3 ? p3 : p2, nd == 3 ? 3 : 2));
}

static fx_status
bw_matmul (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  const fx_node *f = c->from;
  bool addmm = op == FX_OP_ADDMM;
  fx_node *a = fx_ag_arg_node (f, addmm ? 1 : 0, addmm ? "mat1" : "self");
  fx_node *b = fx_ag_arg_node (f, addmm ? 2 : 1, "mat2");
  fx_op_id mm = op == FX_OP_BMM ? FX_OP_BMM : FX_OP_MM;
  double alpha = addmm ? arg_num (f, 4, "alpha", 1) : 1, beta = addmm ? arg_num (f, 3, "beta", 1) : 1;
  fx_node *ga = alpha == 1 ? g : FX_AG (c, MUL_TENSOR, N (g), F (alpha));
  if (addmm)
    acc_to (c, fx_ag_arg_node (f, 0, "self"), beta == 1 ? g : FX_AG (c, MUL_TENSOR, N (g), F (beta)));
  if (a && c->rg[a->id])
    fx_ag_accumulate (c, a, fx_ag_call (c, mm, FX_AG_ARGS (N (ga), N (mT (c, b))), NULL, 0));
  if (b && c->rg[b->id])
    fx_ag_accumulate (c, b, fx_ag_call (c, mm, FX_AG_ARGS (N (mT (c, a)), N (ga)), NULL, 0));
  return FX_OK;
}

/* x viewed as rows [-1, last]. */
static fx_node *
rows (fx_grad_ctx *c, fx_node *x, const fx_tensor_meta *m)
{
  if (m->ndim == 2)
    return x;
  int64_t s[2] = { -1, m->sizes[m->ndim - 1].value };
  return reshape_grad (c, x, fx_arg_int_list (c->g->arena, s, 2));
}

static fx_status
bw_linear (fx_grad_ctx *c, fx_node *g)
{
  const fx_node *f = c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "input"), *w = fx_ag_arg_node (f, 1, "weight");
  fx_node *bias = fx_ag_arg_node (f, 2, "bias");
  const fx_tensor_meta *xm = fx_ag_meta (x), *ym = fx_ag_meta (f);
  fx_node *g2 = rows (c, g, ym);
  if (x && c->rg[x->id])
    {
      fx_node *gx = FX_AG (c, MM, N (g2), N (w));
      fx_ag_accumulate (c, x, xm->ndim == 2 ? gx : FX_AG (c, VIEW, N (gx), sizes_of (c, xm)));
    }
  if (w && c->rg[w->id])
    fx_ag_accumulate (c, w, FX_AG (c, MM, N (mT (c, g2)), N (rows (c, x, xm))));
  if (bias && c->rg[bias->id])
    acc_to (c, bias, g);
  return FX_OK;
}

/* ---------------------------------------------------------------- softmax, norms, losses, indexing */

static fx_status
bw_softmax (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self");
  int64_t d = norm_dim (arg_int (f, 1, "dim", -1), fx_ag_meta (x)->ndim);
  if (op == FX_OP_LOG_SOFTMAX || op == FX_OP_LOG_SOFTMAX_INT)
    {
      /* grad - exp(y) * sum(grad, dim) */
      fx_node *ex = FX_AG (c, EXP, N (f));
      fx_node *s = FX_AG (c, SUM_DIM_INTLIST, N (g), fx_arg_int_list (c->g->arena, &d, 1), B (true));
      fx_node *m = FX_AG (c, MUL_TENSOR, N (ex), N (s));
      fx_ag_accumulate (c, x, FX_AG (c, SUB_TENSOR, N (g), N (m)));
      return FX_OK;
    }
  /* y * grad - y * sum(y * grad, dim) */
  fx_node *yg = FX_AG (c, MUL_TENSOR, N (g), N (f));
  fx_node *s = FX_AG (c, SUM_DIM_INTLIST, N (yg), fx_arg_int_list (c->g->arena, &d, 1), B (true));
  fx_node *m = FX_AG (c, MUL_TENSOR, N (f), N (s));
  fx_ag_accumulate (c, x, FX_AG (c, SUB_TENSOR, N (yg), N (m)));
  return FX_OK;
}

static fx_status
bw_layer_norm (fx_grad_ctx *c)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "input"), *w = fx_ag_arg_node (f, 2, "weight");
  fx_node *b = fx_ag_arg_node (f, 3, "bias");
  const fx_tensor_meta *xm = fx_ag_meta (x);
  const fx_arg *ns = arg_list (f, 1, "normalized_shape");
  int k = ns ? (int) ns->u.seq.n : 1, axis = xm->ndim - k;
  if (axis < 0)
    return fx_node_error (c->diag, f, "autograd", FX_ERR_INVALID, "normalized_shape has more dims than the input");
  int64_t inner[FX_AG_MAX_DIMS], outer[FX_AG_MAX_DIMS];
  double n = 1;
  for (int d = 0; d < xm->ndim; d++)
    {
      if (d >= axis)
        inner[d - axis] = d, n *= (double) xm->sizes[d].value;
      else
        outer[d] = d;
    }
  fx_node *g = fx_ag_output_grad (c, f, 0);
  if (g == NULL)
    return FX_OK;
  fx_node *mean = fx_ag_output (c, f, 1), *rstd = fx_ag_output (c, f, 2);
  fx_node *xc = FX_AG (c, SUB_TENSOR, N (x), N (mean));
  fx_node *x_hat = FX_AG (c, MUL_TENSOR, N (xc), N (rstd));
  if (x && c->rg[x->id])
    {
      fx_node *gxh = w ? FX_AG (c, MUL_TENSOR, N (g), N (w)) : g;
      fx_node *a = FX_AG (c, MUL_TENSOR, N (gxh), F (n));
      fx_node *bsum = FX_AG (c, SUM_DIM_INTLIST, N (gxh), fx_arg_int_list (c->g->arena, inner, k), B (true));
      fx_node *c1 = FX_AG (c, MUL_TENSOR, N (x_hat), N (gxh));
      fx_node *c2 = FX_AG (c, SUM_DIM_INTLIST, N (c1), fx_arg_int_list (c->g->arena, inner, k), B (true));
      fx_node *c3 = FX_AG (c, MUL_TENSOR, N (x_hat), N (c2));
      fx_node *in1 = FX_AG (c, SUB_TENSOR, N (FX_AG (c, SUB_TENSOR, N (a), N (bsum))), N (c3));
      fx_node *scale = FX_AG (c, DIV_TENSOR, N (rstd), F (n));
      fx_ag_accumulate (c, x, FX_AG (c, MUL_TENSOR, N (scale), N (in1)));
    }
  if (w && c->rg[w->id])
    {
      fx_node *gw = FX_AG (c, MUL_TENSOR, N (g), N (x_hat));
      fx_ag_accumulate (c, w, axis ? FX_AG (c, SUM_DIM_INTLIST, N (gw), fx_arg_int_list (c->g->arena, outer, axis),
                                            B (false))
                                   : gw);
    }
  if (b && c->rg[b->id])
    fx_ag_accumulate (c, b, axis ? FX_AG (c, SUM_DIM_INTLIST, N (g), fx_arg_int_list (c->g->arena, outer, axis),
                                          B (false))
                                 : g);
  return FX_OK;
}

/* A one-hot mask (as x's dtype) of index values along a new dim `dim` of size n: eq(unsqueeze(idx, dim), iota). */
static fx_node *
one_hot (fx_grad_ctx *c, fx_node *idx, int64_t dim, int64_t n, const fx_tensor_meta *like)
{
  const fx_tensor_meta *im = fx_ag_meta (idx);
  fx_kwarg kw[3] = { { "dtype", fx_arg_dtype (im->dtype) }, { "layout", fx_arg_layout (FX_LAYOUT_STRIDED) },
                     { "device", fx_arg_device (like->has_device ? like->device : fx_device_cpu ()) } };
  fx_node *ar = fx_ag_call (c, FX_OP_ARANGE, FX_AG_ARGS (I (n)), kw, 3);
  int64_t shape[FX_AG_MAX_DIMS];
  int nd = im->ndim + 1;
  for (int d = 0; d < nd; d++)
    shape[d] = d == dim ? n : 1;
  if (nd > 1)
    ar = FX_AG (c, VIEW, N (ar), fx_arg_int_list (c->g->arena, shape, nd));
  fx_node *eq = FX_AG (c, EQ_TENSOR, N (FX_AG (c, UNSQUEEZE, N (idx), I (dim))), N (ar));
  return to_dtype (c, eq, like->dtype);
}

static fx_status
bw_nll_loss (fx_grad_ctx *c)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self"), *t = fx_ag_arg_node (f, 1, "target");
  fx_node *w = fx_ag_arg_node (f, 2, "weight");
  int64_t reduction = arg_int (f, 3, "reduction", 1), ignore = arg_int (f, 4, "ignore_index", -100);
  const fx_tensor_meta *xm = fx_ag_meta (x);
  fx_node *g = fx_ag_output_grad (c, f, 0);
  if (g == NULL || !c->rg[x->id])
    return FX_OK;
  int64_t cdim = xm->ndim >= 2 ? 1 : 0;
  fx_node *oh = one_hot (c, t, cdim, xm->sizes[cdim].value, xm);
  fx_node *valid = FX_AG (c, NE_SCALAR, N (t), I (ignore));
  if (xm->ndim >= 2)
    valid = FX_AG (c, UNSQUEEZE, N (valid), I (1));
  fx_node *m = FX_AG (c, MUL_TENSOR, N (oh), N (to_dtype (c, valid, xm->dtype)));
  if (w)
    m = FX_AG (c, MUL_TENSOR, N (m), N (w));
  fx_node *gk = g;
  if (reduction == 0 && xm->ndim >= 2)
    gk = FX_AG (c, UNSQUEEZE, N (g), I (1));
  else if (reduction == 1)
    gk = FX_AG (c, DIV_TENSOR, N (g), N (fx_ag_output (c, f, 1)));
  fx_node *neg = FX_AG (c, NEG, N (m));
  fx_ag_accumulate (c, x, FX_AG (c, MUL_TENSOR, N (neg), N (gk)));
  return FX_OK;
}

/* gather(x, dim, idx) with idx matching x outside dim: sum over idx's dim of g * one_hot(idx). */
static fx_status
bw_gather (fx_grad_ctx *c, fx_node *g)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self"), *idx = fx_ag_arg_node (f, 2, "index");
  const fx_tensor_meta *xm = fx_ag_meta (x), *im = fx_ag_meta (idx);
  int64_t d = norm_dim (arg_int (f, 1, "dim", 0), xm->ndim);
  for (int k = 0; k < xm->ndim; k++)
    if (k != d && im->sizes[k].value != xm->sizes[k].value)
      return fx_node_error (c->diag, f, "autograd", FX_ERR_UNSUPPORTED,
                            "no derivative formula for %s with an index smaller than the input outside dim %lld",
                            f->target.name, (long long) d);
  fx_node *oh = one_hot (c, idx, d + 1, xm->sizes[d].value, xm);
  fx_node *m = FX_AG (c, MUL_TENSOR, N (oh), N (FX_AG (c, UNSQUEEZE, N (g), I (d + 1))));
  fx_ag_accumulate (c, x, FX_AG (c, SUM_DIM_INTLIST, N (m), fx_arg_int_list (c->g->arena, &d, 1)));
  return FX_OK;
}

/* embedding's dense backward: one_hot(indices)^T @ grad rows. */
static fx_status
bw_embedding (fx_grad_ctx *c, fx_node *g)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *w = fx_ag_arg_node (f, 0, "weight"), *idx = fx_ag_arg_node (f, 1, "indices");
  const fx_tensor_meta *wm = fx_ag_meta (w), *im = fx_ag_meta (idx);
  int64_t pad = arg_int (f, 2, "padding_idx", -1);
  fx_node *oh = one_hot (c, idx, im->ndim, wm->sizes[0].value, wm);
  if (pad >= 0)
    oh = FX_AG (c, MUL_TENSOR, N (oh),
                N (to_dtype (c, FX_AG (c, UNSQUEEZE, N (FX_AG (c, NE_SCALAR, N (idx), I (pad))), I (im->ndim)),
                             wm->dtype)));
  int64_t r1[2] = { -1, wm->sizes[0].value }, r2[2] = { -1, wm->sizes[1].value };
  fx_node *oh2 = FX_AG (c, VIEW, N (oh), fx_arg_int_list (c->g->arena, r1, 2));
  fx_node *g2 = reshape_grad (c, g, fx_arg_int_list (c->g->arena, r2, 2));
  fx_ag_accumulate (c, w, FX_AG (c, MM, N (mT (c, oh2)), N (g2)));
  return FX_OK;
}

static fx_status
bw_pad (fx_grad_ctx *c, fx_node *g)
{
  const fx_node *f = c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "self");
  const fx_tensor_meta *xm = fx_ag_meta (x);
  const fx_arg *pad = arg_list (f, 1, "pad");
  for (size_t i = 0; pad && i + 1 < pad->u.seq.n; i += 2)
    {
      int64_t lo = pad->u.seq.items[i].u.i, hi = pad->u.seq.items[i + 1].u.i;
      int64_t dim = xm->ndim - 1 - (int64_t) (i / 2);
      if (lo < 0 || hi < 0)
        return fx_node_error (c->diag, f, "autograd", FX_ERR_UNSUPPORTED,
                              "no derivative formula for %s with negative padding", f->target.name);
      if (lo || hi)
        g = FX_AG (c, SLICE_TENSOR, N (g), I (dim), I (lo), I (lo + xm->sizes[dim].value));
    }
  fx_ag_accumulate (c, x, g);
  return FX_OK;
}

/* native_dropout_backward: grad * mask * scale, scale 1 / (1 - p) in training (the mask drawn by the forward). */
static fx_status
bw_dropout (fx_grad_ctx *c)
{
  fx_node *f = (fx_node *) c->from;
  fx_node *x = fx_ag_arg_node (f, 0, "input");
  fx_node *g = fx_ag_output_grad (c, f, 0);
  if (g == NULL)
    return FX_OK;
  const fx_arg *train = fx_ag_arg (f, 2, "train");
  double p = arg_num (f, 1, "p", 0.5);
  double scale = train && train->kind == FX_ARG_BOOL && !train->u.b ? 1 : p < 1 ? 1 / (1 - p) : 0;
  fx_node *mask = to_dtype (c, fx_ag_output (c, f, 1), fx_ag_meta (x)->dtype);
  fx_node *m = FX_AG (c, MUL_TENSOR, N (g), N (mask));
  fx_ag_accumulate (c, x, scale == 1 ? m : FX_AG (c, MUL_TENSOR, N (m), F (scale)));
  return FX_OK;
}

/* ---------------------------------------------------------------- dispatch */

static fx_status
bw_table_op (fx_grad_ctx *c, fx_node *g, fx_op_id op)
{
  switch (op)
    {
    case FX_OP_ADD_TENSOR: case FX_OP_ADD_SCALAR: case FX_OP_SUB_TENSOR: case FX_OP_SUB_SCALAR:
    case FX_OP_RSUB_TENSOR: case FX_OP_RSUB_SCALAR:
      return bw_add_sub (c, g, op);
    case FX_OP_MUL_TENSOR: case FX_OP_MUL_SCALAR: case FX_OP_DIV_TENSOR: case FX_OP_DIV_SCALAR:
      return bw_mul_div (c, g, op);
    case FX_OP_POW_TENSOR_SCALAR: case FX_OP_POW_TENSOR_TENSOR:
      return bw_pow (c, g, op);
    case FX_OP_WHERE_SELF:
      return bw_where (c, g);
    case FX_OP_MASKED_FILL_SCALAR:
      fx_ag_accumulate (c, fx_ag_arg_node (c->from, 0, "self"),
                        masked_grad (c, fx_ag_arg_node (c->from, 1, "mask"), g, true));
      return FX_OK;
    case FX_OP_DETACH: case FX_OP_FLOOR: case FX_OP_CEIL: case FX_OP_ROUND: case FX_OP_TRUNC: case FX_OP_SIGN:
      return FX_OK; /* zero gradient */
    case FX_OP_VIEW: case FX_OP_RESHAPE: case FX_OP_UNSAFE_VIEW: case FX_OP_FLATTEN: case FX_OP_SQUEEZE:
    case FX_OP_SQUEEZE_DIM: case FX_OP_SQUEEZE_DIMS: case FX_OP_EXPAND: case FX_OP_UNSQUEEZE:
      return bw_view (c, g, op);
    case FX_OP_PERMUTE: case FX_OP_TRANSPOSE_INT: case FX_OP_T:
      return bw_permute (c, g, op);
    case FX_OP_SLICE_TENSOR: case FX_OP_SELECT_INT:
      return bw_slice_select (c, g, op);
    case FX_OP_SPLIT_TENSOR: case FX_OP_SPLIT_WITH_SIZES: case FX_OP_CHUNK: case FX_OP_UNBIND_INT:
      return bw_split (c, op);
    case FX_OP_CAT: case FX_OP_STACK:
      return bw_cat_stack (c, g, op);
    case FX_OP_CONSTANT_PAD_ND:
      return bw_pad (c, g);
    case FX_OP_SUM: case FX_OP_SUM_DIM_INTLIST: case FX_OP_MEAN: case FX_OP_MEAN_DIM:
      return bw_sum_mean (c, g, op);
    case FX_OP_AMAX: case FX_OP_AMIN: case FX_OP_MAX: case FX_OP_MIN:
      return bw_amax (c, g, op);
    case FX_OP_VAR_CORRECTION: case FX_OP_VAR_MEAN_CORRECTION:
      return bw_var (c, g, op);
    case FX_OP_LOGSUMEXP:
      return bw_logsumexp (c, g);
    case FX_OP_CUMSUM:
      return bw_cumsum (c, g);
    case FX_OP_MAXIMUM: case FX_OP_MINIMUM:
      return bw_maximum (c, g, op);
    case FX_OP_FLIP:
      fx_ag_accumulate (c, fx_ag_arg_node (c->from, 0, "self"), FX_AG (c, FLIP, N (g), *fx_ag_arg (c->from, 1, "dims")));
      return FX_OK;
    case FX_OP_MM: case FX_OP_ADDMM: case FX_OP_BMM:
      return bw_matmul (c, g, op);
    case FX_OP_LINEAR:
      return bw_linear (c, g);
    case FX_OP_SOFTMAX: case FX_OP_LOG_SOFTMAX: case FX_OP_SOFTMAX_INT: case FX_OP_LOG_SOFTMAX_INT:
      return bw_softmax (c, g, op);
    case FX_OP_NATIVE_LAYER_NORM:
      return bw_layer_norm (c);
    case FX_OP_NLL_LOSS_FORWARD:
      return bw_nll_loss (c);
    case FX_OP_GATHER:
      return bw_gather (c, g);
    case FX_OP_EMBEDDING:
      return bw_embedding (c, g);
    case FX_OP_NATIVE_DROPOUT:
      return bw_dropout (c);
    default:
      break;
    }
  fx_node *gi = unary_grad (c, g, op);
  if (gi == NULL)
    return fx_node_error (c->diag, c->from, "autograd", FX_ERR_UNSUPPORTED, "no derivative formula for %s",
                          c->from->target.name);
  fx_ag_accumulate (c, fx_ag_arg_node (c->from, 0, "self"), gi);
  return FX_OK;
}

fx_status
fx_ag_backward (fx_grad_ctx *c, fx_node *g)
{
  const fx_node *f = c->from;
  if (f->target.kind != FX_TARGET_OP || f->target.op_id < 0)
    return fx_node_error (c->diag, f, "autograd", FX_ERR_UNSUPPORTED, "no derivative formula for %s",
                          f->target.name ? f->target.name : "this target");
  return bw_table_op (c, g, (fx_op_id) f->target.op_id);
}
