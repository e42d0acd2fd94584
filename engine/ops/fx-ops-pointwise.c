/* fx-ops-pointwise.c: meta functions and reference kernels of the pointwise ops (binary, unary, where, clamp,

   masked_fill, conversions and copies). */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"
#include "fx-ops-impl.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- operands */

/* The operand at position i: a tensor, or a Python number as a wrapped 0-dim tensor of its default dtype. */
static fx_tensor *
operand (fx_op_call *call, int i, bool *wrapped)
{
  fx_value *v = &call->args[i];
  *wrapped = false;
  if (v->kind == FX_VALUE_TENSOR)
    return fx_tensor_ref (v->u.t);
  fx_dtype dt = v->kind == FX_VALUE_FLOAT ? FX_DTYPE_F64 : v->kind == FX_VALUE_BOOL ? FX_DTYPE_BOOL : FX_DTYPE_I64;
  fx_tensor *t = fx_tensor_new (call->alloc, dt, 0, NULL);
  if (v->kind == FX_VALUE_FLOAT)
    fx_tensor_set_f64 (t, 0, v->u.f);
  else
    fx_tensor_set_i64 (t, 0, fx_value_as_i64 (v));
  *wrapped = true;
  return t;
}

static void
promo_add (fx_type_promo *p, const fx_value *v)
{
  switch (v->kind)
    {
    case FX_VALUE_TENSOR: fx_type_promo_add_tensor (p, v->u.t); break;
    case FX_VALUE_FLOAT: fx_type_promo_add_scalar_float (p); break;
    case FX_VALUE_BOOL: fx_type_promo_add_scalar_bool (p); break;
    case FX_VALUE_INT: fx_type_promo_add_scalar_int (p); break;
    default: break;
    }
}

static void
value_shape (const fx_value *v, int *nd, const int64_t **sizes)
{
  static const int64_t none[1] = { 1 };
  if (v->kind == FX_VALUE_TENSOR)
    {
      *nd = v->u.t->ndim;
      *sizes = v->u.t->sizes;
    }
  else
    {
      *nd = 0;
      *sizes = none;
    }
}

static bool
broadcast_values (fx_op_call *call, const int *idx, int n, int *nd, int64_t *shape)
{
  *nd = 0;
  for (int k = 0; k < n; k++)
    {
      int vn;
      const int64_t *vs;
      if (call->args[idx[k]].kind == FX_VALUE_NONE)
        continue;
      value_shape (&call->args[idx[k]], &vn, &vs);
      int64_t tmp[FX_TENSOR_MAX_DIMS];
      int tn;
      fx_diag d;
      fx_diag_clear (&d);
      if (!fx_broadcast_shapes (*nd, shape, vn, vs, &tn, tmp, &d))
        {
          fx_op_error (call, FX_ERR_INVALID, "%s", d.message);
          return false;
        }
      memcpy (shape, tmp, sizeof (int64_t) * tn);
      *nd = tn;
    }
  return true;
}

/* ---------------------------------------------------------------- binary */

static bool
is_compare (fx_op_id id)
{
  switch (id)
    {
    case FX_OP_EQ_TENSOR: case FX_OP_EQ_SCALAR: case FX_OP_NE_TENSOR: case FX_OP_NE_SCALAR:
    case FX_OP_LT_TENSOR: case FX_OP_LT_SCALAR: case FX_OP_LE_TENSOR: case FX_OP_LE_SCALAR:
    case FX_OP_GT_TENSOR: case FX_OP_GT_SCALAR: case FX_OP_GE_TENSOR: case FX_OP_GE_SCALAR:
    case FX_OP_LOGICAL_AND: case FX_OP_LOGICAL_OR: case FX_OP_LOGICAL_XOR:
      return true;
    default:
      return false;
    }
}

typedef struct
{
  fx_op_id op;
  fx_dtype compute;    /* dtype the math happens in (promoted inputs) */
  fx_dtype a_dt, b_dt, out_dt;
  double alpha;
  int64_t ialpha;
  int mode;            /* div: 0 true, 1 trunc, 2 floor */
} binary_ctx;

static fx_dtype
binary_result (fx_op_call *call, fx_dtype *compute)
{
  fx_type_promo p;
  fx_type_promo_init (&p);
  promo_add (&p, &call->args[0]);
  promo_add (&p, &call->args[1]);
  fx_dtype r = fx_type_promo_result (&p);
  *compute = r;
  fx_op_id id = call->op->id;
  if (is_compare (id))
    return FX_DTYPE_BOOL;
  bool div_true = (id == FX_OP_DIV_TENSOR || id == FX_OP_DIV_SCALAR
                   || ((id == FX_OP_DIV_TENSOR_MODE || id == FX_OP_DIV_SCALAR_MODE) && call->args[2].kind == FX_VALUE_NONE));
  if ((div_true || id == FX_OP_ATAN2) && fx_dtype_is_integral (r, true))
    {
      *compute = FX_DTYPE_F32;
      return FX_DTYPE_F32;
    }
  return r;
}

fx_status
fx_meta_binary (fx_op_call *call)
{
  int idx[2] = { 0, 1 };
  int nd;
  int64_t shape[FX_TENSOR_MAX_DIMS];
  if (!broadcast_values (call, idx, 2, &nd, shape))
    return FX_ERR_INVALID;
  fx_dtype compute;
  fx_dtype out = binary_result (call, &compute);
  fx_op_id id = call->op->id;
  if ((id == FX_OP_BITWISE_AND_TENSOR || id == FX_OP_BITWISE_OR_TENSOR || id == FX_OP_BITWISE_XOR_TENSOR)
      && !fx_dtype_is_integral (compute, true))
    return fx_op_error (call, FX_ERR_INVALID, "\"bitwise\" not implemented for '%s'", fx_dtype_c10_name (compute));
  fx_out_meta (call, 0, out, nd, shape);
  return FX_OK;
}

static inline double
div_floor (double a, double b)
{
  if (b == 0)
    return a / b;
  double mod = fmod (a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0)))
    div -= 1.0;
  double floordiv;
  if (div != 0)
    {
      floordiv = floor (div);
      if (div - floordiv > 0.5)
        floordiv += 1.0;
    }
  else
    floordiv = copysign (0.0, a / b);
  return floordiv;
}

/* Comparisons and logical ops on the operands a and b, the same cases in the double and the int64 evaluator. */
#define COMPARE_CASES                                                 \
  case FX_OP_EQ_TENSOR: case FX_OP_EQ_SCALAR: return a == b;          \
  case FX_OP_NE_TENSOR: case FX_OP_NE_SCALAR: return a != b;          \
  case FX_OP_LT_TENSOR: case FX_OP_LT_SCALAR: return a < b;           \
  case FX_OP_LE_TENSOR: case FX_OP_LE_SCALAR: return a <= b;          \
  case FX_OP_GT_TENSOR: case FX_OP_GT_SCALAR: return a > b;           \
  case FX_OP_GE_TENSOR: case FX_OP_GE_SCALAR: return a >= b;          \
  case FX_OP_LOGICAL_AND: return (a != 0) && (b != 0);                \
  case FX_OP_LOGICAL_OR: return (a != 0) || (b != 0);                 \
  case FX_OP_LOGICAL_XOR: return (a != 0) != (b != 0);

static inline double
binary_f64 (const binary_ctx *c, double a, double b)
{
  switch (c->op)
    {
    case FX_OP_ADD_TENSOR: case FX_OP_ADD_SCALAR: return a + c->alpha * b;
    case FX_OP_SUB_TENSOR: case FX_OP_SUB_SCALAR: return a - c->alpha * b;
    case FX_OP_RSUB_TENSOR: case FX_OP_RSUB_SCALAR: return b - c->alpha * a;
    case FX_OP_MUL_TENSOR: case FX_OP_MUL_SCALAR: return a * b;
    case FX_OP_DIV_TENSOR: case FX_OP_DIV_SCALAR: case FX_OP_DIV_TENSOR_MODE: case FX_OP_DIV_SCALAR_MODE:
      if (c->mode == 1)
        return trunc (a / b);
      if (c->mode == 2)
        return div_floor (a, b);
      return a / b;
    case FX_OP_POW_TENSOR_SCALAR: case FX_OP_POW_TENSOR_TENSOR: case FX_OP_POW_SCALAR:
      if (b == 2.0)
        return a * a;
      if (b == 0.5)
        return sqrt (a);
      return pow (a, b);
    case FX_OP_MAXIMUM: return isnan (a) || isnan (b) ? NAN : (a > b ? a : b);
    case FX_OP_MINIMUM: return isnan (a) || isnan (b) ? NAN : (a < b ? a : b);
    case FX_OP_REMAINDER_TENSOR: case FX_OP_REMAINDER_SCALAR:
      {
        double m = fmod (a, b);
        if (m != 0 && ((b < 0) != (m < 0)))
          m += b;
        return m;
      }
    case FX_OP_FMOD_TENSOR: case FX_OP_FMOD_SCALAR: return fmod (a, b);
    case FX_OP_ATAN2: return atan2 (a, b);
    COMPARE_CASES
    default: return NAN;
    }
}

static inline int64_t
ipow (int64_t base, int64_t exp)
{
  if (exp < 0)
    return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
  int64_t r = 1;
  while (exp)
    {
      if (exp & 1)
        r *= base;
      base *= base;
      exp >>= 1;
    }
  return r;
}

static inline int64_t
binary_i64 (const binary_ctx *c, int64_t a, int64_t b)
{
  switch (c->op)
    {
    case FX_OP_ADD_TENSOR: case FX_OP_ADD_SCALAR: return (int64_t) ((uint64_t) a + (uint64_t) (c->ialpha * b));
    case FX_OP_SUB_TENSOR: case FX_OP_SUB_SCALAR: return (int64_t) ((uint64_t) a - (uint64_t) (c->ialpha * b));
    case FX_OP_RSUB_TENSOR: case FX_OP_RSUB_SCALAR: return (int64_t) ((uint64_t) b - (uint64_t) (c->ialpha * a));
    case FX_OP_MUL_TENSOR: case FX_OP_MUL_SCALAR: return (int64_t) ((uint64_t) a * (uint64_t) b);
    case FX_OP_DIV_TENSOR_MODE: case FX_OP_DIV_SCALAR_MODE:
      if (b == 0)
        return 0;
      if (c->mode == 2)
        {
          int64_t q = a / b;
          if ((a % b != 0) && ((a < 0) != (b < 0)))
            q--;
          return q;
        }
      return a / b;
    case FX_OP_POW_TENSOR_SCALAR: case FX_OP_POW_TENSOR_TENSOR: case FX_OP_POW_SCALAR: return ipow (a, b);
    case FX_OP_MAXIMUM: return a > b ? a : b;
    case FX_OP_MINIMUM: return a < b ? a : b;
    case FX_OP_REMAINDER_TENSOR: case FX_OP_REMAINDER_SCALAR:
      {
        if (b == 0)
          return 0;
        int64_t m = a % b;
        if (m != 0 && ((m < 0) != (b < 0)))
          m += b;
        return m;
      }
    case FX_OP_FMOD_TENSOR: case FX_OP_FMOD_SCALAR: return b == 0 ? 0 : a % b;
    COMPARE_CASES
    case FX_OP_BITWISE_AND_TENSOR: return a & b;
    case FX_OP_BITWISE_OR_TENSOR: return a | b;
    case FX_OP_BITWISE_XOR_TENSOR: return a ^ b;
    default: return 0;
    }
}

/* One pass over n contiguous outputs: a and b as LOAD_A and LOAD_B give them for element i, o[i] = EXPR. */
#define F32_SPAN(LOAD_A, LOAD_B, EXPR)                                                  \
  do                                                                                    \
    for (int64_t i = 0; i < n; i++)                                                     \
      {                                                                                 \
        float a = (LOAD_A), b = (LOAD_B);                                               \
        o[i] = (EXPR);                                                                  \
      }                                                                                 \
  while (0)

#define F32_LOOP(EXPR)                                                                  \
  do                                                                                    \
    {                                                                                   \
      float *o = (float *) p[0];                                                        \
      const float *A = (const float *) p[1], *B = (const float *) p[2];                 \
      if (s[0] == 4 && s[1] == 4 && s[2] == 4)                                          \
        F32_SPAN (A[i], B[i], EXPR);                                                    \
      else if (s[0] == 4 && s[1] == 4 && s[2] == 0)                                     \
        {                                                                               \
          const float b0 = B[0];                                                        \
          F32_SPAN (A[i], b0, EXPR);                                                    \
        }                                                                               \
      else if (s[0] == 4 && s[1] == 0 && s[2] == 4)                                     \
        {                                                                               \
          const float a0 = A[0];                                                        \
          F32_SPAN (a0, B[i], EXPR);                                                    \
        }                                                                               \
      else                                                                              \
        for (int64_t i = 0; i < n; i++)                                                 \
          {                                                                             \
            float a = *(const float *) ((const char *) A + i * s[1]);                   \
            float b = *(const float *) ((const char *) B + i * s[2]);                   \
            *(float *) ((char *) o + i * s[0]) = (EXPR);                                \
          }                                                                             \
    }                                                                                   \
  while (0)

/* add and sub (with alpha), mul and div inline, the other ops through binary_f64: LOOP is F32_LOOP or F64_LOOP over
   a and b, T their type, alpha and c in scope */
#define BINARY_ARITH(LOOP, T)                                                           \
  switch (c->op)                                                                        \
    {                                                                                   \
    case FX_OP_ADD_TENSOR: case FX_OP_ADD_SCALAR:                                       \
      if (alpha == (T) 1)                                                               \
        LOOP (a + b);                                                                   \
      else                                                                              \
        LOOP (a + alpha * b);                                                           \
      return;                                                                           \
    case FX_OP_SUB_TENSOR: case FX_OP_SUB_SCALAR:                                       \
      if (alpha == (T) 1)                                                               \
        LOOP (a - b);                                                                   \
      else                                                                              \
        LOOP (a - alpha * b);                                                           \
      return;                                                                           \
    case FX_OP_MUL_TENSOR: case FX_OP_MUL_SCALAR: LOOP (a * b); return;                 \
    case FX_OP_DIV_TENSOR: case FX_OP_DIV_SCALAR: LOOP (a / b); return;                 \
    default: LOOP ((T) binary_f64 (c, a, b)); return;                                   \
    }

static void
binary_loop_f32 (char **p, const int64_t *s, int64_t n, void *vctx)
{
  const binary_ctx *c = vctx;
  float alpha = (float) c->alpha;
  if (s[0] == 4 && (s[1] == 4 || s[1] == 0) && (s[2] == 4 || s[2] == 0)
      && fx_simd_binary_f32 (c->op, alpha, (float *) p[0], (const float *) p[1], (const float *) p[2], s[1] / 4,
                             s[2] / 4, n))
    return;
  BINARY_ARITH (F32_LOOP, float);
}

#define F64_LOOP(EXPR)                                                                  \
  do                                                                                    \
    for (int64_t i = 0; i < n; i++)                                                     \
      {                                                                                 \
        double a = *(const double *) (p[1] + i * s[1]);                                 \
        double b = *(const double *) (p[2] + i * s[2]);                                 \
        *(double *) (p[0] + i * s[0]) = (EXPR);                                         \
      }                                                                                 \
  while (0)

/* All three float64 (the fp64 reference runs every graph so): the generic loop's per-element loads and stores
   through the dtype switch were a quarter of a compare's start-up on a 32M-element graph. */
static void
binary_loop_f64 (char **p, const int64_t *s, int64_t n, void *vctx)
{
  const binary_ctx *c = vctx;
  double alpha = c->alpha;
  BINARY_ARITH (F64_LOOP, double);
}

static void
binary_loop_generic (char **p, const int64_t *s, int64_t n, void *vctx)
{
  const binary_ctx *c = vctx;
  bool integral = fx_dtype_is_integral (c->compute, true);
  for (int64_t i = 0; i < n; i++)
    {
      const char *pa = p[1] + i * s[1], *pb = p[2] + i * s[2];
      char *po = p[0] + i * s[0];
      if (integral)
        fx_store_i64 (po, c->out_dt, binary_i64 (c, fx_load_i64 (pa, c->a_dt), fx_load_i64 (pb, c->b_dt)));
      else
        {
          double a = fx_load_f64 (pa, c->a_dt), b = fx_load_f64 (pb, c->b_dt);
          /* low-precision floats compute as their rounded values, like PyTorch's upcast-compute-round */
          if (c->compute == FX_DTYPE_F16 || c->compute == FX_DTYPE_BF16 || c->compute == FX_DTYPE_F32)
            {
              a = (float) a;
              b = (float) b;
              if (c->compute == FX_DTYPE_F16)
                {
                  a = fx_f16_to_f32 (fx_f32_to_f16 ((float) a));
                  b = fx_f16_to_f32 (fx_f32_to_f16 ((float) b));
                }
              else if (c->compute == FX_DTYPE_BF16)
                {
                  a = fx_bf16_to_f32 (fx_f32_to_bf16 ((float) a));
                  b = fx_bf16_to_f32 (fx_f32_to_bf16 ((float) b));
                }
            }
          double r = binary_f64 (c, a, b);
          if (c->out_dt == FX_DTYPE_BOOL)
            fx_store_i64 (po, c->out_dt, r != 0);
          else
            fx_store_f64 (po, c->out_dt, r);
        }
    }
}

fx_status
fx_kernel_binary (fx_op_call *call)
{
  fx_tensor *out = call->outs[0].u.t;
  bool wa, wb;
  fx_tensor *a = operand (call, 0, &wa);
  fx_tensor *b = operand (call, 1, &wb);
  binary_ctx c;
  memset (&c, 0, sizeof c);
  c.op = call->op->id;
  binary_result (call, &c.compute);
  c.a_dt = a->dtype;
  c.b_dt = b->dtype;
  c.out_dt = out->dtype;
  c.alpha = 1.0;
  c.ialpha = 1;
  switch (c.op)
    {
    case FX_OP_ADD_TENSOR: case FX_OP_ADD_SCALAR: case FX_OP_SUB_TENSOR: case FX_OP_SUB_SCALAR:
    case FX_OP_RSUB_TENSOR: case FX_OP_RSUB_SCALAR:
      c.alpha = fx_value_as_f64 (&call->args[2]);
      c.ialpha = fx_value_as_i64 (&call->args[2]);
      if (fx_dtype_is_integral (c.compute, true) && call->args[2].kind == FX_VALUE_FLOAT)
        {
          fx_tensor_unref (a);
          fx_tensor_unref (b);
          return fx_op_error (call, FX_ERR_INVALID, "For integral input tensors, argument alpha must not be a floating point number.");
        }
      break;
    case FX_OP_DIV_TENSOR_MODE: case FX_OP_DIV_SCALAR_MODE:
      if (call->args[2].kind == FX_VALUE_STR)
        {
          if (strcmp (call->args[2].u.s, "trunc") == 0)
            c.mode = 1;
          else if (strcmp (call->args[2].u.s, "floor") == 0)
            c.mode = 2;
          else
            {
              fx_tensor_unref (a);
              fx_tensor_unref (b);
              return fx_op_error (call, FX_ERR_INVALID,
                                  "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'",
                                  call->args[2].u.s);
            }
        }
      break;
    default:
      break;
    }
  if (c.op == FX_OP_POW_SCALAR || c.op == FX_OP_POW_TENSOR_SCALAR || c.op == FX_OP_POW_TENSOR_TENSOR)
    if (fx_dtype_is_integral (c.compute, false))
      {
        /* integers to negative integer powers are an error in PyTorch */
        fx_tensor *e = c.op == FX_OP_POW_SCALAR ? b : b;
        int64_t ne = fx_tensor_numel (e);
        for (int64_t i = 0; i < ne; i++)
          if (fx_tensor_get_i64 (e, i) < 0)
            {
              fx_tensor_unref (a);
              fx_tensor_unref (b);
              return fx_op_error (call, FX_ERR_INVALID, "Integers to negative integer powers are not allowed.");
            }
      }
  fx_tensor *ops[3] = { out, a, b };
  fx_iter it;
  fx_iter_init (&it, ops, 3);
  if (out->dtype == FX_DTYPE_F32 && a->dtype == FX_DTYPE_F32 && b->dtype == FX_DTYPE_F32)
    fx_iter_run (&it, binary_loop_f32, &c);
  else if (out->dtype == FX_DTYPE_F32 && c.compute == FX_DTYPE_F32 && (wa || wb)
           && (a->dtype == FX_DTYPE_F32 || b->dtype == FX_DTYPE_F32))
    {
      /* tensor op python-number: round the number to f32 once, then the fast loop */
      fx_tensor *w = wa ? a : b;
      fx_tensor *wf = fx_tensor_to_dtype (call->alloc, w, FX_DTYPE_F32);
      ops[wa ? 1 : 2] = wf;
      fx_iter_init (&it, ops, 3);
      fx_iter_run (&it, binary_loop_f32, &c);
      fx_tensor_unref (wf);
    }
  else if (out->dtype == FX_DTYPE_F64 && a->dtype == FX_DTYPE_F64 && b->dtype == FX_DTYPE_F64
           && c.compute == FX_DTYPE_F64)
    fx_iter_run (&it, binary_loop_f64, &c);
  else
    fx_iter_run (&it, binary_loop_generic, &c);
  fx_tensor_unref (a);
  fx_tensor_unref (b);
  return FX_OK;
}

/* ---------------------------------------------------------------- unary */

static fx_status
unary_meta (fx_op_call *call, int mode)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_dtype dt = x->dtype;
  if (mode == 1 && fx_dtype_is_integral (dt, true))
    dt = FX_DTYPE_F32;
  if (mode == 2)
    dt = FX_DTYPE_BOOL;
  fx_op_id id = call->op->id;
  if (id == FX_OP_NEG && dt == FX_DTYPE_BOOL)
    return fx_op_error (call, FX_ERR_INVALID,
                        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  if ((id == FX_OP_BITWISE_NOT) && !fx_dtype_is_integral (dt, true))
    return fx_op_error (call, FX_ERR_INVALID, "\"bitwise_not_cpu\" not implemented for '%s'", fx_dtype_c10_name (dt));
  fx_out_meta (call, 0, dt, x->ndim, x->sizes);
  return FX_OK;
}

fx_status
fx_meta_unary (fx_op_call *call)
{
  return unary_meta (call, 0);
}

fx_status
fx_meta_unary_float (fx_op_call *call)
{
  return unary_meta (call, 1);
}

fx_status
fx_meta_unary_bool (fx_op_call *call)
{
  return unary_meta (call, 2);
}

typedef struct
{
  fx_op_id op;
  fx_dtype in_dt, out_dt;
  double p0, p1;          /* hardtanh min/max, leaky slope */
  bool tanh_gelu;
  int64_t diag;
} unary_ctx;

static inline double
unary_f64 (const unary_ctx *c, double x)
{
  switch (c->op)
    {
    case FX_OP_NEG: return -x;
    case FX_OP_ABS: return fabs (x);
    case FX_OP_EXP: return exp (x);
    case FX_OP_EXP2: return exp2 (x);
    case FX_OP_EXPM1: return expm1 (x);
    case FX_OP_LOG: return log (x);
    case FX_OP_LOG2: return log2 (x);
    case FX_OP_LOG10: return log10 (x);
    case FX_OP_LOG1P: return log1p (x);
    case FX_OP_SIN: return sin (x);
    case FX_OP_COS: return cos (x);
    case FX_OP_TAN: return tan (x);
    case FX_OP_TANH: return tanh (x);
    case FX_OP_ASIN: return asin (x);
    case FX_OP_ACOS: return acos (x);
    case FX_OP_ATAN: return atan (x);
    case FX_OP_SINH: return sinh (x);
    case FX_OP_COSH: return cosh (x);
    case FX_OP_SIGMOID: return 1.0 / (1.0 + exp (-x));
    case FX_OP_ERF: return erf (x);
    case FX_OP_ERFC: return erfc (x);
    case FX_OP_RSQRT: return 1.0 / sqrt (x);
    case FX_OP_SQRT: return sqrt (x);
    case FX_OP_RECIPROCAL: return 1.0 / x;
    case FX_OP_RELU: return isnan (x) ? x : (x > 0 ? x : 0.0);
    case FX_OP_SILU: return x / (1.0 + exp (-x));
    case FX_OP_GELU:
      if (c->tanh_gelu)
        return 0.5 * x * (1.0 + tanh (0.7978845608028654 * (x + 0.044715 * x * x * x)));
      return 0.5 * x * (1.0 + erf (x * 0.7071067811865476));
    case FX_OP_HARDSIGMOID: return x <= -3 ? 0 : x >= 3 ? 1 : x / 6.0 + 0.5;
    case FX_OP_HARDSWISH: return x <= -3 ? 0 : x >= 3 ? x : x * (x + 3.0) / 6.0;
    case FX_OP_HARDTANH: return isnan (x) ? x : x < c->p0 ? c->p0 : x > c->p1 ? c->p1 : x;
    case FX_OP_LEAKY_RELU: return x > 0 ? x : x * c->p0;
    case FX_OP_FLOOR: return floor (x);
    case FX_OP_CEIL: return ceil (x);
    case FX_OP_ROUND: return nearbyint (x);
    case FX_OP_TRUNC: return trunc (x);
    case FX_OP_SIGN: return isnan (x) ? 0.0 : (x > 0) - (x < 0);
    case FX_OP_LOGICAL_NOT: return x == 0;
    case FX_OP_ISNAN: return isnan (x);
    case FX_OP_ISINF: return isinf (x);
    default: return NAN;
    }
}

static inline int64_t
unary_i64 (const unary_ctx *c, int64_t x)
{
  switch (c->op)
    {
    case FX_OP_NEG: return (int64_t) (0 - (uint64_t) x);
    case FX_OP_ABS: return x < 0 ? (int64_t) (0 - (uint64_t) x) : x;
    case FX_OP_RELU: return x > 0 ? x : 0;
    case FX_OP_FLOOR: case FX_OP_CEIL: case FX_OP_ROUND: case FX_OP_TRUNC: return x;
    case FX_OP_SIGN: return (x > 0) - (x < 0);
    case FX_OP_LOGICAL_NOT: return x == 0;
    case FX_OP_BITWISE_NOT: return c->in_dt == FX_DTYPE_BOOL ? !x : ~x;
    case FX_OP_ISNAN: case FX_OP_ISINF: return 0;
    case FX_OP_HARDTANH: return x < c->p0 ? (int64_t) c->p0 : x > c->p1 ? (int64_t) c->p1 : x;
    case FX_OP_LEAKY_RELU: return x > 0 ? x : (int64_t) (x * c->p0);
    default: return 0;
    }
}

static inline float
unary_f32 (const unary_ctx *c, float x)
{
  switch (c->op)
    {
    case FX_OP_NEG: return -x;
    case FX_OP_ABS: return fabsf (x);
    case FX_OP_EXP: return expf (x);
    case FX_OP_LOG: return logf (x);
    case FX_OP_SIN: return sinf (x);
    case FX_OP_COS: return cosf (x);
    case FX_OP_TANH: return tanhf (x);
    case FX_OP_SIGMOID: return 1.0f / (1.0f + expf (-x));
    case FX_OP_ERF: return erff (x);
    case FX_OP_RSQRT: return 1.0f / sqrtf (x);
    case FX_OP_SQRT: return sqrtf (x);
    case FX_OP_RELU: return x > 0 ? x : (isnan (x) ? x : 0.0f);
    case FX_OP_SILU: return x / (1.0f + expf (-x));
    case FX_OP_GELU:
      if (c->tanh_gelu)
        return 0.5f * x * (1.0f + tanhf (0.7978845608028654f * (x + 0.044715f * x * x * x)));
      return 0.5f * x * (1.0f + erff (x * 0.70710678118654752f));
    default: return (float) unary_f64 (c, x);
    }
}

static void
unary_loop (char **p, const int64_t *s, int64_t n, void *vctx)
{
  const unary_ctx *c = vctx;
  if (c->in_dt == FX_DTYPE_F32 && c->out_dt == FX_DTYPE_F32)
    {
      if (s[0] == 4 && s[1] == 4)
        {
          float *o = (float *) p[0];
          const float *x = (const float *) p[1];
          if (fx_simd_unary_f32 (c->op, c->tanh_gelu, o, x, n))
            return;
          switch (c->op)
            {
            case FX_OP_ABS: for (int64_t i = 0; i < n; i++) o[i] = fabsf (x[i]); return;
            case FX_OP_NEG: for (int64_t i = 0; i < n; i++) o[i] = -x[i]; return;
            case FX_OP_RSQRT: for (int64_t i = 0; i < n; i++) o[i] = 1.0f / sqrtf (x[i]); return;
            case FX_OP_EXP: for (int64_t i = 0; i < n; i++) o[i] = expf (x[i]); return;
            default: for (int64_t i = 0; i < n; i++) o[i] = unary_f32 (c, x[i]); return;
            }
        }
      for (int64_t i = 0; i < n; i++)
        *(float *) (p[0] + i * s[0]) = unary_f32 (c, *(const float *) (p[1] + i * s[1]));
      return;
    }
  bool integral = fx_dtype_is_integral (c->in_dt, true) && fx_dtype_is_integral (c->out_dt, true);
  for (int64_t i = 0; i < n; i++)
    {
      const char *px = p[1] + i * s[1];
      char *po = p[0] + i * s[0];
      if (integral)
        fx_store_i64 (po, c->out_dt, unary_i64 (c, fx_load_i64 (px, c->in_dt)));
      else
        {
          double x = fx_load_f64 (px, c->in_dt);
          double r;
          if (c->in_dt == FX_DTYPE_F64)
            r = unary_f64 (c, x);
          else
            r = unary_f32 (c, (float) x);
          fx_store_f64 (po, c->out_dt, r);
        }
    }
}

fx_status
fx_kernel_unary (fx_op_call *call)
{
  fx_tensor *out = call->outs[0].u.t;
  fx_tensor *x = fx_arg_tensor (call, 0);
  unary_ctx c;
  memset (&c, 0, sizeof c);
  c.op = call->op->id;
  c.in_dt = x->dtype;
  c.out_dt = out->dtype;
  if (c.op == FX_OP_GELU && call->args[1].kind == FX_VALUE_STR)
    {
      if (strcmp (call->args[1].u.s, "tanh") == 0)
        c.tanh_gelu = true;
      else if (strcmp (call->args[1].u.s, "none") != 0)
        return fx_op_error (call, FX_ERR_INVALID, "approximate argument must be either none or tanh.");
    }
  if (c.op == FX_OP_HARDTANH)
    {
      c.p0 = fx_value_as_f64 (&call->args[1]);
      c.p1 = fx_value_as_f64 (&call->args[2]);
    }
  if (c.op == FX_OP_LEAKY_RELU)
    c.p0 = fx_value_as_f64 (&call->args[1]);
  if (fx_dtype_is_integral (c.in_dt, true) && !fx_dtype_is_integral (c.out_dt, true))
    {
      /* int input of a float op: compute from the f32 value */
    }
  fx_tensor *ops[2] = { out, x };
  fx_iter it;
  fx_iter_init (&it, ops, 2);
  fx_iter_run (&it, unary_loop, &c);
  return FX_OK;
}

/* ---------------------------------------------------------------- where, clamp, masked_fill */

fx_status
fx_meta_where (fx_op_call *call)
{
  int idx[3] = { 0, 1, 2 };
  int nd;
  int64_t shape[FX_TENSOR_MAX_DIMS];
  if (!broadcast_values (call, idx, 3, &nd, shape))
    return FX_ERR_INVALID;
  fx_type_promo p;
  fx_type_promo_init (&p);
  promo_add (&p, &call->args[1]);
  promo_add (&p, &call->args[2]);
  fx_out_meta (call, 0, fx_type_promo_result (&p), nd, shape);
  return FX_OK;
}

typedef struct
{
  fx_dtype dt[4];
  int kind; /* 0 where, 1 clamp, 2 masked_fill */
  bool has_lo, has_hi;
  double fill;
} tern_ctx;

static void
tern_loop (char **p, const int64_t *s, int64_t n, void *vctx)
{
  const tern_ctx *c = vctx;
  bool integral = fx_dtype_is_integral (c->dt[0], true);
  for (int64_t i = 0; i < n; i++)
    {
      char *po = p[0] + i * s[0];
      const char *p1 = p[1] + i * s[1];
      if (c->kind == 0)
        {
          bool cond = fx_load_i64 (p1, c->dt[1]) != 0;
          const char *src = cond ? p[2] + i * s[2] : p[3] + i * s[3];
          fx_dtype sd = cond ? c->dt[2] : c->dt[3];
          if (integral)
            fx_store_i64 (po, c->dt[0], fx_load_i64 (src, sd));
          else
            fx_store_f64 (po, c->dt[0], fx_load_f64 (src, sd));
        }
      else if (c->kind == 1)
        {
          if (integral)
            {
              int64_t x = fx_load_i64 (p1, c->dt[1]);
              if (c->has_lo)
                {
                  int64_t lo = fx_load_i64 (p[2] + i * s[2], c->dt[2]);
                  x = x < lo ? lo : x;
                }
              if (c->has_hi)
                {
                  int64_t hi = fx_load_i64 (p[3] + i * s[3], c->dt[3]);
                  x = x > hi ? hi : x;
                }
              fx_store_i64 (po, c->dt[0], x);
            }
          else
            {
              double x = fx_load_f64 (p1, c->dt[1]);
              if (c->has_lo)
                {
                  double lo = fx_load_f64 (p[2] + i * s[2], c->dt[2]);
                  x = isnan (lo) ? lo : (isnan (x) ? x : (x < lo ? lo : x));
                }
              if (c->has_hi)
                {
                  double hi = fx_load_f64 (p[3] + i * s[3], c->dt[3]);
                  x = isnan (hi) ? hi : (isnan (x) ? x : (x > hi ? hi : x));
                }
              fx_store_f64 (po, c->dt[0], x);
            }
        }
      else
        {
          bool m = fx_load_i64 (p[2] + i * s[2], c->dt[2]) != 0;
          if (integral)
            fx_store_i64 (po, c->dt[0], m ? (int64_t) c->fill : fx_load_i64 (p1, c->dt[1]));
          else
            fx_store_f64 (po, c->dt[0], m ? c->fill : fx_load_f64 (p1, c->dt[1]));
        }
    }
}

fx_status
fx_kernel_where (fx_op_call *call)
{
  fx_tensor *out = call->outs[0].u.t;
  bool w;
  fx_tensor *ops[4] = { out, operand (call, 0, &w), operand (call, 1, &w), operand (call, 2, &w) };
  tern_ctx c = { .kind = 0 };
  for (int k = 0; k < 4; k++)
    c.dt[k] = ops[k]->dtype;
  fx_iter it;
  fx_iter_init (&it, ops, 4);
  fx_iter_run (&it, tern_loop, &c);
  for (int k = 1; k < 4; k++)
    fx_tensor_unref (ops[k]);
  return FX_OK;
}

fx_status
fx_meta_clamp (fx_op_call *call)
{
  fx_op_id id = call->op->id;
  int idx[3] = { 0, 1, 2 };
  int nd;
  int64_t shape[FX_TENSOR_MAX_DIMS];
  int n = id == FX_OP_CLAMP_TENSOR ? 3 : 1;
  if (!broadcast_values (call, idx, n, &nd, shape))
    return FX_ERR_INVALID;
  if ((id == FX_OP_CLAMP || id == FX_OP_CLAMP_TENSOR) && call->args[1].kind == FX_VALUE_NONE
      && call->args[2].kind == FX_VALUE_NONE)
    return fx_op_error (call, FX_ERR_INVALID, "torch.clamp: At least one of 'min' or 'max' must not be None");
  fx_type_promo p;
  fx_type_promo_init (&p);
  promo_add (&p, &call->args[0]);
  promo_add (&p, &call->args[1]);
  if (id == FX_OP_CLAMP || id == FX_OP_CLAMP_TENSOR)
    promo_add (&p, &call->args[2]);
  fx_out_meta (call, 0, fx_type_promo_result (&p), nd, shape);
  return FX_OK;
}

fx_status
fx_kernel_clamp (fx_op_call *call)
{
  fx_op_id id = call->op->id;
  fx_tensor *out = call->outs[0].u.t;
  bool w;
  tern_ctx c = { .kind = 1 };
  int lo_i = 1, hi_i = id == FX_OP_CLAMP_MAX ? 1 : 2;
  c.has_lo = id != FX_OP_CLAMP_MAX && call->args[lo_i].kind != FX_VALUE_NONE;
  c.has_hi = id != FX_OP_CLAMP_MIN && call->args[hi_i].kind != FX_VALUE_NONE;
  fx_tensor *x = operand (call, 0, &w);
  fx_tensor *lo = c.has_lo ? operand (call, lo_i, &w) : fx_tensor_ref (x);
  fx_tensor *hi = c.has_hi ? operand (call, hi_i, &w) : fx_tensor_ref (x);
  fx_tensor *ops[4] = { out, x, lo, hi };
  for (int k = 0; k < 4; k++)
    c.dt[k] = ops[k]->dtype;
  fx_iter it;
  fx_iter_init (&it, ops, 4);
  fx_iter_run (&it, tern_loop, &c);
  fx_tensor_unref (x);
  fx_tensor_unref (lo);
  fx_tensor_unref (hi);
  return FX_OK;
}

fx_status
fx_meta_masked_fill (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *m = fx_arg_tensor (call, 1);
  if (m->dtype != FX_DTYPE_BOOL)
    return fx_op_error (call, FX_ERR_INVALID, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                        fx_dtype_name (m->dtype));
  int idx[2] = { 0, 1 };
  int nd;
  int64_t shape[FX_TENSOR_MAX_DIMS];
  if (!broadcast_values (call, idx, 2, &nd, shape))
    return FX_ERR_INVALID;
  if (nd != x->ndim || memcmp (shape, x->sizes, sizeof (int64_t) * nd) != 0)
    return fx_op_error (call, FX_ERR_INVALID, "the mask must broadcast to self's shape");
  fx_out_meta (call, 0, x->dtype, x->ndim, x->sizes);
  return FX_OK;
}

fx_status
fx_kernel_masked_fill (fx_op_call *call)
{
  fx_tensor *out = call->outs[0].u.t;
  tern_ctx c = { .kind = 2, .fill = fx_value_as_f64 (&call->args[2]) };
  fx_tensor *ops[4] = { out, fx_arg_tensor (call, 0), fx_arg_tensor (call, 1), fx_arg_tensor (call, 0) };
  for (int k = 0; k < 4; k++)
    c.dt[k] = ops[k]->dtype;
  fx_iter it;
  fx_iter_init (&it, ops, 4);
  fx_iter_run (&it, tern_loop, &c);
  return FX_OK;
}

/* ---------------------------------------------------------------- conversions and copies */

/* PyTorch's preserve_format: a dense non-overlapping input keeps its stride order, anything else is contiguous. */
static void
preserve_strides (const fx_tensor *x, int64_t *strides)
{
  int nd = x->ndim;
  int perm[FX_TENSOR_MAX_DIMS];
  for (int i = 0; i < nd; i++)
    perm[i] = i;
  /* sort dims by stride descending (stable) */
  for (int i = 1; i < nd; i++)
    for (int j = i; j > 0 && x->strides[perm[j - 1]] < x->strides[perm[j]]; j--)
      {
        int t = perm[j];
        perm[j] = perm[j - 1];
        perm[j - 1] = t;
      }
  int64_t expect = 1;
  bool dense = true;
  for (int i = nd - 1; i >= 0; i--)
    {
      int d = perm[i];
      if (x->sizes[d] == 1)
        continue;
      if (x->strides[d] != expect)
        dense = false;
      expect *= x->sizes[d];
    }
  if (!dense)
    {
      fx_contiguous_strides (nd, x->sizes, strides);
      return;
    }
  int64_t acc = 1;
  for (int i = nd - 1; i >= 0; i--)
    {
      int d = perm[i];
      strides[d] = acc;
      acc *= x->sizes[d] > 1 ? x->sizes[d] : 1;
    }
}

fx_status
fx_meta_convert (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_op_id id = call->op->id;
  fx_dtype dt = x->dtype;
  fx_memfmt fmt = FX_MEMFMT_PRESERVE;
  if (id == FX_OP_TO_COPY)
    {
      dt = fx_arg_dtype_or (call, 1, x->dtype);
      if (call->args[2].kind == FX_VALUE_LAYOUT && call->args[2].u.layout != FX_LAYOUT_STRIDED)
        return fx_op_error (call, FX_ERR_UNSUPPORTED, "only strided layouts are supported");
      if (call->args[5].kind == FX_VALUE_MEMFMT)
        fmt = call->args[5].u.memfmt;
    }
  else if (id == FX_OP_CONVERT_ELEMENT_TYPE || id == FX_OP_TO_DTYPE)
    dt = call->args[1].u.dtype;
  else if (id == FX_OP_CLONE && call->args[1].kind == FX_VALUE_MEMFMT)
    fmt = call->args[1].u.memfmt;
  if (!fx_dtype_is_supported (dt))
    return fx_op_error (call, FX_ERR_UNSUPPORTED, "dtype %s is not supported by the reference kernels",
                        fx_dtype_name (dt));
  if (id == FX_OP_TO_DTYPE && dt == x->dtype && !call->args[3].u.b)
    {
      /* to() without a change returns self */
      call->outs[0] = fx_value_tensor (fx_tensor_ref (x));
      call->n_outs = 1;
      return FX_OK;
    }
  int64_t strides[FX_TENSOR_MAX_DIMS];
  if (fmt == FX_MEMFMT_PRESERVE)
    preserve_strides (x, strides);
  else
    fx_contiguous_strides (x->ndim, x->sizes, strides);
  if (id == FX_OP_COPY)
    {
      fx_tensor *src = fx_arg_tensor (call, 1);
      int nd;
      int64_t shape[FX_TENSOR_MAX_DIMS];
      fx_diag d;
      fx_diag_clear (&d);
      if (!fx_broadcast_shapes (x->ndim, x->sizes, src->ndim, src->sizes, &nd, shape, &d) || nd != x->ndim
          || memcmp (shape, x->sizes, sizeof (int64_t) * nd) != 0)
        return fx_op_error (call, FX_ERR_INVALID, "src cannot be broadcast to self's shape");
    }
  fx_tensor *t = fx_tensor_new_meta (dt, x->ndim, x->sizes, strides);
  call->outs[0] = fx_value_tensor (t);
  call->n_outs = 1;
  return FX_OK;
}

fx_status
fx_kernel_copy (fx_op_call *call)
{
  fx_tensor *out = call->outs[0].u.t;
  fx_tensor *src = call->op->id == FX_OP_COPY ? fx_arg_tensor (call, 1) : fx_arg_tensor (call, 0);
  if (out == src)
    return FX_OK;
  return fx_tensor_copy_into (out, src, call->diag);
}
