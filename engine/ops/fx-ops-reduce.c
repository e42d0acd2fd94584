/* fx-ops-reduce.c: reductions (sum, mean, amax, var_mean, argmax, ...), cumsum, softmax, layer/batch norm, nll_loss. */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "fx-ops-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Which dims a reduction call reduces, and how. */
typedef struct
{
  bool reduce[FX_TENSOR_MAX_DIMS];
  bool keepdim;
  fx_dtype out_dt;
  double correction;
  double ord;           /* linalg_vector_norm's ord */
  bool all;             /* argmax/argmin with dim=None: over the flattened tensor */
} red_plan;

static fx_status
dims_from_list (fx_op_call *call, const fx_value *v, int ndim, red_plan *plan)
{
  int64_t dims[FX_TENSOR_MAX_DIMS];
  int n = v->kind == FX_VALUE_NONE ? 0 : fx_value_as_int_list (v, dims, FX_TENSOR_MAX_DIMS);
  if (n < 0 || n > FX_TENSOR_MAX_DIMS)
    return fx_op_error (call, FX_ERR_INVALID, "bad dim list");
  if (n == 0)
    {
      for (int d = 0; d < ndim; d++)
        plan->reduce[d] = true;
      return FX_OK;
    }
  for (int i = 0; i < n; i++)
    {
      if (!fx_norm_dim (call, &dims[i], ndim))
        return FX_ERR_INVALID;
      if (ndim == 0)
        continue;
      if (plan->reduce[dims[i]])
        return fx_op_error (call, FX_ERR_INVALID, "dim %lld appears multiple times in the list of dims",
                            (long long) dims[i]);
      plan->reduce[dims[i]] = true;
    }
  return FX_OK;
}

static fx_status
plan_reduction (fx_op_call *call, const fx_tensor *x, red_plan *plan)
{
  memset (plan, 0, sizeof *plan);
  plan->correction = 1.0;
  fx_op_id id = call->op->id;
  fx_dtype dt = x->dtype;
  fx_status st = FX_OK;
  int64_t d;
  switch (id)
    {
    case FX_OP_SUM: case FX_OP_MEAN: case FX_OP_PROD: case FX_OP_MAX: case FX_OP_MIN: case FX_OP_ANY: case FX_OP_ALL:
      for (int i = 0; i < x->ndim; i++)
        plan->reduce[i] = true;
      break;
    case FX_OP_SUM_DIM_INTLIST: case FX_OP_MEAN_DIM: case FX_OP_AMAX: case FX_OP_AMIN: case FX_OP_LOGSUMEXP:
      st = dims_from_list (call, &call->args[1], x->ndim, plan);
      plan->keepdim = call->args[2].u.b;
      break;
    case FX_OP_ARGMAX: case FX_OP_ARGMIN:
      if (call->args[1].kind == FX_VALUE_NONE)
        {
          plan->all = true;
          for (int i = 0; i < x->ndim; i++)
            plan->reduce[i] = true;
          plan->keepdim = call->args[2].u.b;
          break;
        }
      /* argmax over one dim: as the ops below */
      /* fall through */
    case FX_OP_PROD_DIM_INT: case FX_OP_MAX_DIM: case FX_OP_MIN_DIM: case FX_OP_ANY_DIM:
      d = call->args[1].u.i;
      if (!fx_norm_dim (call, &d, x->ndim))
        return FX_ERR_INVALID;
      if (x->ndim > 0)
        plan->reduce[d] = true;
      plan->keepdim = call->args[2].u.b;
      break;
    case FX_OP_LINALG_VECTOR_NORM:
      /* linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None) */
      plan->ord = call->args[1].kind == FX_VALUE_NONE ? 2.0 : fx_value_as_f64 (&call->args[1]);
      st = dims_from_list (call, &call->args[2], x->ndim, plan);
      plan->keepdim = call->args[3].u.b;
      if (!fx_dtype_is_floating (x->dtype))
        return fx_op_error (call, FX_ERR_INVALID, "linalg.vector_norm: Expected a floating point or complex tensor "
                                                  "as input. Got %s", fx_dtype_c10_name (x->dtype));
      dt = fx_arg_dtype_or (call, 4, dt);
      break;
    case FX_OP_VAR_CORRECTION: case FX_OP_VAR_MEAN_CORRECTION: case FX_OP_STD_MEAN_CORRECTION:
      st = dims_from_list (call, &call->args[1], x->ndim, plan);
      if (call->args[2].kind != FX_VALUE_NONE)
        plan->correction = fx_value_as_f64 (&call->args[2]);
      plan->keepdim = call->args[3].u.b;
      break;
    default:
      break;
    }
  if (st != FX_OK)
    return st;
  switch (id)
    {
    case FX_OP_SUM: case FX_OP_SUM_DIM_INTLIST: case FX_OP_PROD: case FX_OP_PROD_DIM_INT:
      {
        int di = id == FX_OP_SUM || id == FX_OP_PROD ? 1 : 3;
        if (fx_dtype_is_integral (dt, true))
          dt = FX_DTYPE_I64;
        dt = fx_arg_dtype_or (call, di, dt);
        break;
      }
    case FX_OP_MEAN: case FX_OP_MEAN_DIM:
      {
        int di = id == FX_OP_MEAN ? 1 : 3;
        dt = fx_arg_dtype_or (call, di, dt);
        if (fx_dtype_is_integral (dt, true))
          return fx_op_error (call, FX_ERR_INVALID,
                              "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: %s",
                              fx_dtype_c10_name (dt));
        break;
      }
    case FX_OP_ANY: case FX_OP_ANY_DIM: case FX_OP_ALL:
      dt = x->dtype == FX_DTYPE_U8 ? FX_DTYPE_U8 : FX_DTYPE_BOOL;
      break;
    case FX_OP_ARGMAX: case FX_OP_ARGMIN:
      dt = FX_DTYPE_I64;
      break;
    case FX_OP_VAR_CORRECTION: case FX_OP_VAR_MEAN_CORRECTION: case FX_OP_STD_MEAN_CORRECTION: case FX_OP_LOGSUMEXP:
      if (fx_dtype_is_integral (dt, true))
        dt = FX_DTYPE_F32;
      break;
    default:
      break;
    }
  plan->out_dt = dt;
  if ((id == FX_OP_MAX || id == FX_OP_MIN || id == FX_OP_ARGMAX || id == FX_OP_ARGMIN || id == FX_OP_AMAX
       || id == FX_OP_AMIN || id == FX_OP_MAX_DIM || id == FX_OP_MIN_DIM)
      && fx_tensor_numel (x) == 0)
    {
      bool empty_reduced = false;
      for (int i = 0; i < x->ndim; i++)
        if (plan->reduce[i] && x->sizes[i] == 0)
          empty_reduced = true;
      if (empty_reduced || x->ndim == 0)
        return fx_op_error (call, FX_ERR_INVALID,
                            "Expected reduction dim to have non-zero size (the reduction has no identity).");
    }
  return FX_OK;
}

static int
out_shape (const fx_tensor *x, const red_plan *plan, int64_t *sizes)
{
  int n = 0;
  for (int d = 0; d < x->ndim; d++)
    {
      if (!plan->reduce[d])
        sizes[n++] = x->sizes[d];
      else if (plan->keepdim)
        sizes[n++] = 1;
    }
  return n;
}

fx_status
fx_meta_reduce (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  red_plan plan;
  fx_status st = plan_reduction (call, x, &plan);
  if (st != FX_OK)
    return st;
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  int n = out_shape (x, &plan, sizes);
  fx_op_id id = call->op->id;
  if (id == FX_OP_VAR_MEAN_CORRECTION || id == FX_OP_STD_MEAN_CORRECTION)
    {
      fx_out_meta (call, 0, plan.out_dt, n, sizes);
      fx_out_meta (call, 1, plan.out_dt, n, sizes);
    }
  else if (id == FX_OP_MAX_DIM || id == FX_OP_MIN_DIM)
    {
      fx_out_meta (call, 0, plan.out_dt, n, sizes);
      fx_out_meta (call, 1, FX_DTYPE_I64, n, sizes);
    }
  else
    fx_out_meta (call, 0, plan.out_dt, n, sizes);
  return FX_OK;
}

typedef struct
{
  fx_op_call *call;
  const fx_tensor *x;
  red_plan plan;
  int nk, nr;
  int64_t ksize[FX_TENSOR_MAX_DIMS], kstride[FX_TENSOR_MAX_DIMS];
  int64_t rsize[FX_TENSOR_MAX_DIMS], rstride[FX_TENSOR_MAX_DIMS];
  int64_t rcount;
  fx_tensor *out0, *out1;
  bool contiguous_inner;   /* one reduced run of stride 1 */
} red_job;

static bool
is_min_max (fx_op_id id)
{
  return id == FX_OP_AMAX || id == FX_OP_MAX || id == FX_OP_MAX_DIM || id == FX_OP_ARGMAX || id == FX_OP_AMIN
         || id == FX_OP_MIN || id == FX_OP_MIN_DIM || id == FX_OP_ARGMIN;
}

/* Reduces one output element: the reduced elements start at base (an element offset into the storage). */
static void
reduce_one (const red_job *j, int64_t base, int64_t oi)
{
  const fx_tensor *x = j->x;
  fx_op_id id = j->call->op->id;
  const char *data = (const char *) x->storage->data;
  size_t isz = fx_dtype_size (x->dtype);
  bool integral = fx_dtype_is_integral (x->dtype, true);
  double acc = 0, acc2 = 0, best = 0;
  int64_t iacc = 0, best_idx = 0;
  bool any = false, all = true, have = false;
  if (id == FX_OP_PROD || id == FX_OP_PROD_DIM_INT)
    {
      acc = 1;
      iacc = 1;
    }
  int64_t idx[FX_TENSOR_MAX_DIMS] = { 0 };
  int64_t off = base;
  /* var needs the mean first: two passes */
  int passes = (id == FX_OP_VAR_CORRECTION || id == FX_OP_VAR_MEAN_CORRECTION || id == FX_OP_STD_MEAN_CORRECTION
                || id == FX_OP_LOGSUMEXP) ? 2 : 1;
  double mean = 0, mx = -INFINITY;
  for (int pass = 0; pass < passes; pass++)
    {
      memset (idx, 0, sizeof idx);
      off = base;
      if (j->contiguous_inner && x->dtype == FX_DTYPE_F32 && j->rcount > 0 && is_min_max (id))
        {
          /* max/min (with the index) over a contiguous f32 run: a max pass the compiler vectorizes (NaN noted
             beside it), then the first index holding the result, as ATen returns it */
          const float *p = (const float *) (data + off * (int64_t) isz);
          int64_t n = j->rcount;
          bool is_max = id == FX_OP_AMAX || id == FX_OP_MAX || id == FX_OP_MAX_DIM || id == FX_OP_ARGMAX;
          float m = p[0];
          int nan = 0;
          if (is_max)
            for (int64_t i = 0; i < n; i++)
              {
                nan |= p[i] != p[i];
                m = p[i] > m ? p[i] : m;
              }
          else
            for (int64_t i = 0; i < n; i++)
              {
                nan |= p[i] != p[i];
                m = p[i] < m ? p[i] : m;
              }
          int64_t at = 0;
          while (at < n && (nan ? p[at] == p[at] : p[at] != m))
            at++;
          best = nan ? (double) p[at] : (double) m;
          best_idx = at;
          have = true;
          continue;
        }
      if (j->contiguous_inner && x->dtype == FX_DTYPE_F32 && (id == FX_OP_SUM || id == FX_OP_SUM_DIM_INTLIST
                                                              || id == FX_OP_MEAN || id == FX_OP_MEAN_DIM
                                                              || passes == 2))
        {
          const float *p = (const float *) (data + off * (int64_t) isz);
          int64_t n = j->rcount;
          if (passes == 2 && pass == 1)
            {
              double s = 0;
              if (id == FX_OP_LOGSUMEXP)
                for (int64_t i = 0; i < n; i++)
                  s += exp ((double) p[i] - mx);
              else
                for (int64_t i = 0; i < n; i++)
                  {
                    double dlt = (double) p[i] - mean;
                    s += dlt * dlt;
                  }
              acc2 = s;
            }
          else if (id == FX_OP_LOGSUMEXP)
            {
              for (int64_t i = 0; i < n; i++)
                if (p[i] > mx || isnan (p[i]))
                  mx = p[i];
            }
          else
            {
              /* four partial sums keep the f32 loop vectorisable while accumulating in double */
              double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
              int64_t i = 0;
              for (; i + 4 <= n; i += 4)
                {
                  s0 += p[i];
                  s1 += p[i + 1];
                  s2 += p[i + 2];
                  s3 += p[i + 3];
                }
              for (; i < n; i++)
                s0 += p[i];
              acc = (s0 + s1) + (s2 + s3);
            }
          if (passes == 2 && pass == 0)
            mean = acc / (double) (n ? n : 1);
          continue;
        }
      for (int64_t r = 0; r < j->rcount; r++)
        {
          const char *p = data + off * (int64_t) isz;
          if (pass == 1)
            {
              double v = fx_load_f64 (p, x->dtype);
              if (id == FX_OP_LOGSUMEXP)
                acc2 += exp (v - mx);
              else
                acc2 += (v - mean) * (v - mean);
            }
          else
            switch (id)
              {
              case FX_OP_SUM: case FX_OP_SUM_DIM_INTLIST: case FX_OP_MEAN: case FX_OP_MEAN_DIM:
              case FX_OP_VAR_CORRECTION: case FX_OP_VAR_MEAN_CORRECTION: case FX_OP_STD_MEAN_CORRECTION:
                if (integral && (id == FX_OP_SUM || id == FX_OP_SUM_DIM_INTLIST)
                    && fx_dtype_is_integral (j->plan.out_dt, true))
                  iacc += fx_load_i64 (p, x->dtype);
                else
                  acc += fx_load_f64 (p, x->dtype);
                break;
              case FX_OP_PROD: case FX_OP_PROD_DIM_INT:
                if (integral && fx_dtype_is_integral (j->plan.out_dt, true))
                  iacc *= fx_load_i64 (p, x->dtype);
                else
                  acc *= fx_load_f64 (p, x->dtype);
                break;
              case FX_OP_LOGSUMEXP:
                {
                  double v = fx_load_f64 (p, x->dtype);
                  if (v > mx || isnan (v))
                    mx = v;
                  break;
                }
              case FX_OP_LINALG_VECTOR_NORM:
                {
                  double a = fabs (fx_load_f64 (p, x->dtype)), o = j->plan.ord;
                  if (isnan (a))
                    acc = NAN;
                  else if (isinf (o))
                    {
                      if (!have || (o > 0 ? a > best : a < best))
                        best = a;
                      have = true;
                    }
                  else if (o == 0)
                    acc += a != 0;
                  else if (o == 1)
                    acc += a;
                  else if (o == 2)
                    acc += a * a;
                  else
                    acc += pow (a, o);
                  break;
                }
              case FX_OP_ANY: case FX_OP_ANY_DIM:
                any |= fx_load_f64 (p, x->dtype) != 0;
                break;
              case FX_OP_ALL:
                all &= fx_load_f64 (p, x->dtype) != 0;
                break;
              case FX_OP_AMAX: case FX_OP_MAX: case FX_OP_MAX_DIM: case FX_OP_ARGMAX:
              case FX_OP_AMIN: case FX_OP_MIN: case FX_OP_MIN_DIM: case FX_OP_ARGMIN:
                {
                  double v = fx_load_f64 (p, x->dtype);
                  bool is_max = id == FX_OP_AMAX || id == FX_OP_MAX || id == FX_OP_MAX_DIM || id == FX_OP_ARGMAX;
                  if (!have)
                    {
                      best = v;
                      best_idx = r;
                      have = true;
                    }
                  else if (!isnan (best) && (isnan (v) || (is_max ? v > best : v < best)))
                    {
                      best = v;
                      best_idx = r;
                    }
                  break;
                }
              default:
                break;
              }
          /* advance the odometer over the reduced dims */
          for (int d = j->nr - 1; d >= 0; d--)
            {
              idx[d]++;
              off += j->rstride[d];
              if (idx[d] < j->rsize[d])
                break;
              off -= idx[d] * j->rstride[d];
              idx[d] = 0;
            }
        }
      if (passes == 2 && pass == 0)
        mean = acc / (double) (j->rcount ? j->rcount : 1);
    }
  fx_tensor *o = j->out0;
  double n = (double) j->rcount;
  switch (id)
    {
    case FX_OP_SUM: case FX_OP_SUM_DIM_INTLIST: case FX_OP_PROD: case FX_OP_PROD_DIM_INT:
      if (integral && fx_dtype_is_integral (j->plan.out_dt, true))
        fx_tensor_set_i64 (o, oi, iacc);
      else
        fx_tensor_set_f64 (o, oi, acc);
      break;
    case FX_OP_MEAN: case FX_OP_MEAN_DIM:
      fx_tensor_set_f64 (o, oi, acc / n);
      break;
    case FX_OP_VAR_CORRECTION: case FX_OP_VAR_MEAN_CORRECTION: case FX_OP_STD_MEAN_CORRECTION:
      {
        double denom = n - j->plan.correction;
        double var = denom <= 0 ? (denom == 0 && acc2 == 0 ? NAN : acc2 / (denom > 0 ? denom : 0)) : acc2 / denom;
        if (denom <= 0)
          var = NAN;
        if (n == 0)
          var = NAN;
        fx_tensor_set_f64 (o, oi, id == FX_OP_STD_MEAN_CORRECTION ? sqrt (var) : var);
        if (j->out1)
          fx_tensor_set_f64 (j->out1, oi, n == 0 ? NAN : mean);
        break;
      }
    case FX_OP_LOGSUMEXP:
      fx_tensor_set_f64 (o, oi, isinf (mx) ? mx : mx + log (acc2));
      break;
    case FX_OP_LINALG_VECTOR_NORM:
      {
        double ord = j->plan.ord;
        double v = isnan (acc) ? NAN
                   : isinf (ord) ? (have ? best : (ord > 0 ? 0.0 : INFINITY))
                   : ord == 0 || ord == 1 ? acc
                   : ord == 2 ? sqrt (acc)
                   : pow (acc, 1.0 / ord);
        fx_tensor_set_f64 (o, oi, v);
        break;
      }
    case FX_OP_ANY: case FX_OP_ANY_DIM:
      fx_tensor_set_i64 (o, oi, any);
      break;
    case FX_OP_ALL:
      fx_tensor_set_i64 (o, oi, all);
      break;
    case FX_OP_AMAX: case FX_OP_MAX: case FX_OP_AMIN: case FX_OP_MIN:
      fx_tensor_set_f64 (o, oi, best);
      break;
    case FX_OP_MAX_DIM: case FX_OP_MIN_DIM:
      fx_tensor_set_f64 (o, oi, best);
      fx_tensor_set_i64 (j->out1, oi, best_idx);
      break;
    case FX_OP_ARGMAX: case FX_OP_ARGMIN:
      fx_tensor_set_i64 (o, oi, best_idx);
      break;
    default:
      break;
    }
}

static void
reduce_range (int64_t begin, int64_t end, void *data)
{
  const red_job *j = data;
  for (int64_t oi = begin; oi < end; oi++)
    {
      int64_t base = j->x->offset;
      int64_t rem = oi;
      for (int d = j->nk - 1; d >= 0; d--)
        {
          base += (rem % j->ksize[d]) * j->kstride[d];
          rem /= j->ksize[d];
        }
      reduce_one (j, base, oi);
    }
}

fx_status
fx_kernel_reduce (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  red_job j;
  memset (&j, 0, sizeof j);
  j.call = call;
  j.x = x;
  fx_status st = plan_reduction (call, x, &j.plan);
  if (st != FX_OK)
    return st;
  j.out0 = call->outs[0].u.t;
  j.out1 = call->n_outs > 1 ? call->outs[1].u.t : NULL;
  j.rcount = 1;
  for (int d = 0; d < x->ndim; d++)
    {
      if (j.plan.reduce[d])
        {
          if (x->sizes[d] == 1)
            continue;
          /* merge with the previous reduced dim when contiguous */
          if (j.nr > 0 && j.rstride[j.nr - 1] == x->strides[d] * x->sizes[d] && d > 0 && j.plan.reduce[d - 1])
            {
              j.rsize[j.nr - 1] *= x->sizes[d];
              j.rstride[j.nr - 1] = x->strides[d];
            }
          else
            {
              j.rsize[j.nr] = x->sizes[d];
              j.rstride[j.nr] = x->strides[d];
              j.nr++;
            }
          j.rcount *= x->sizes[d];
        }
      else
        {
          j.ksize[j.nk] = x->sizes[d];
          j.kstride[j.nk] = x->strides[d];
          j.nk++;
        }
    }
  for (int d = 0; d < x->ndim; d++)
    if (j.plan.reduce[d] && x->sizes[d] == 0)
      j.rcount = 0;
  if (j.nr == 0)
    {
      j.nr = 1;
      j.rsize[0] = 1;
      j.rstride[0] = 0;
    }
  j.contiguous_inner = j.nr == 1 && j.rstride[0] == 1;
  int64_t nout = fx_tensor_numel (j.out0);
  if (nout == 0)
    return FX_OK;
  int64_t grain = j.rcount >= 16384 ? 1 : 16384 / (j.rcount ? j.rcount : 1);
  fx_parallel_for (nout, grain, reduce_range, &j);
  return FX_OK;
}

/* x along dim d: its length, the elements after d (inner stride), and the rows (len-long lines) there are. */
static void
dim_geometry (const fx_tensor *x, int64_t d, int64_t *len, int64_t *inner, int64_t *rows)
{
  *len = x->ndim ? x->sizes[d] : 1;
  *inner = 1;
  for (int k = (int) d + 1; k < x->ndim; k++)
    *inner *= x->sizes[k];
  int64_t n = fx_tensor_numel (x);
  *rows = (*len * *inner) != 0 ? n / *len : 0;
}

/* ---------------------------------------------------------------- cumsum */

fx_status
fx_meta_cumsum (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  if (!fx_norm_dim (call, &call->args[1].u.i, x->ndim))
    return FX_ERR_INVALID;
  fx_dtype dt = fx_dtype_is_integral (x->dtype, true) ? FX_DTYPE_I64 : x->dtype;
  fx_out_meta (call, 0, fx_arg_dtype_or (call, 2, dt), x->ndim, x->sizes);
  return FX_OK;
}

fx_status
fx_kernel_cumsum (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *o = call->outs[0].u.t;
  int64_t d = call->args[1].u.i; /* normalised by fx_meta_cumsum */
  int64_t n = fx_tensor_numel (x);
  if (n == 0)
    return FX_OK;
  int64_t len, inner, rows;
  dim_geometry (x, d, &len, &inner, &rows);
  int64_t outer = rows / inner;
  bool integral = fx_dtype_is_integral (o->dtype, true);
  for (int64_t a = 0; a < outer; a++)
    for (int64_t b = 0; b < inner; b++)
      {
        double acc = 0;
        int64_t iacc = 0;
        for (int64_t i = 0; i < len; i++)
          {
            int64_t flat = (a * len + i) * inner + b;
            if (integral)
              {
                iacc += fx_tensor_get_i64 (x, flat);
                fx_tensor_set_i64 (o, flat, iacc);
              }
            else
              {
                acc += fx_tensor_get_f64 (x, flat);
                fx_tensor_set_f64 (o, flat, acc);
              }
          }
      }
  return FX_OK;
}

/* ---------------------------------------------------------------- softmax */

fx_status
fx_meta_softmax (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  if (!fx_norm_dim (call, &call->args[1].u.i, x->ndim))
    return FX_ERR_INVALID;
  if (!fx_dtype_is_floating (x->dtype))
    return fx_op_error (call, FX_ERR_INVALID, "\"softmax_lastdim_kernel_impl\" not implemented for '%s'",
                        fx_dtype_c10_name (x->dtype));
  fx_dtype dt = x->dtype;
  fx_op_id id = call->op->id;
  if (id == FX_OP_SOFTMAX_INT || id == FX_OP_LOG_SOFTMAX_INT)
    dt = fx_arg_dtype_or (call, 2, dt);   /* softmax.int (export's pre-dispatch IR): dtype=None keeps the input's */
  else if (call->args[2].u.b)
    {
      if (dt != FX_DTYPE_F16)
        return fx_op_error (call, FX_ERR_INVALID, "conversion is supported for Half type only");
      dt = FX_DTYPE_F32;
    }
  fx_out_meta (call, 0, dt, x->ndim, x->sizes);
  return FX_OK;
}

typedef struct
{
  const fx_tensor *x;
  fx_tensor *o;
  int64_t len, inner;
  bool log;
  int mode;    /* 0 softmax / log_softmax, 1 prepare_softmax_online */
  fx_tensor *o2;
} smax_job;

static void
softmax_range (int64_t begin, int64_t end, void *data)
{
  const smax_job *j = data;
  bool fast = j->x->dtype == FX_DTYPE_F32 && j->inner == 1 && fx_tensor_is_contiguous (j->x)
              && (j->o == NULL || (j->o->dtype == FX_DTYPE_F32 && fx_tensor_is_contiguous (j->o)));
  for (int64_t r = begin; r < end; r++)
    {
      int64_t a = r / j->inner, b = r % j->inner;
      if (fast)
        {
          const float *p = (const float *) fx_tensor_data (j->x) + a * j->len;
          double vsum;
          float vmax;
          if (j->mode == 1 && fx_simd_softmax_row_f32 (NULL, p, j->len, false, &vsum, &vmax))
            {
              ((float *) fx_tensor_data (j->o))[a] = vmax;
              fx_tensor_set_f64 (j->o2, a, vsum);
              continue;
            }
          if (j->mode == 0
              && fx_simd_softmax_row_f32 ((float *) fx_tensor_data (j->o) + a * j->len, p, j->len, j->log, &vsum,
                                          &vmax))
            continue;
          float mx = -INFINITY;
          for (int64_t i = 0; i < j->len; i++)
            mx = p[i] > mx || isnan (p[i]) ? p[i] : mx;
          double sum = 0;
          if (j->mode == 1)
            {
              for (int64_t i = 0; i < j->len; i++)
                sum += expf (p[i] - mx);
              ((float *) fx_tensor_data (j->o))[a] = mx;
              fx_tensor_set_f64 (j->o2, a, sum);
              continue;
            }
          float *q = (float *) fx_tensor_data (j->o) + a * j->len;
          for (int64_t i = 0; i < j->len; i++)
            {
              float e = expf (p[i] - mx);
              if (!j->log)
                q[i] = e;
              sum += e;
            }
          if (j->log)
            {
              float ls = (float) log (sum);
              for (int64_t i = 0; i < j->len; i++)
                q[i] = p[i] - mx - ls;
            }
          else
            {
              float inv = (float) (1.0 / sum);
              for (int64_t i = 0; i < j->len; i++)
                q[i] *= inv;
            }
          continue;
        }
      double mx = -INFINITY;
      for (int64_t i = 0; i < j->len; i++)
        {
          double v = fx_tensor_get_f64 (j->x, (a * j->len + i) * j->inner + b);
          if (v > mx || isnan (v))
            mx = v;
        }
      double sum = 0;
      for (int64_t i = 0; i < j->len; i++)
        sum += exp (fx_tensor_get_f64 (j->x, (a * j->len + i) * j->inner + b) - mx);
      if (j->mode == 1)
        {
          fx_tensor_set_f64 (j->o, r, mx);
          fx_tensor_set_f64 (j->o2, r, sum);
          continue;
        }
      for (int64_t i = 0; i < j->len; i++)
        {
          int64_t flat = (a * j->len + i) * j->inner + b;
          double v = fx_tensor_get_f64 (j->x, flat) - mx;
          fx_tensor_set_f64 (j->o, flat, j->log ? v - log (sum) : exp (v) / sum);
        }
    }
}

/* Runs job j over the rows along the call's dim (args[1]). */
static fx_status
softmax_run (fx_op_call *call, smax_job *j)
{
  int64_t d = call->args[1].u.i; /* normalised by fx_meta_softmax / fx_meta_prepare_softmax */
  int64_t rows;
  dim_geometry (j->x, d, &j->len, &j->inner, &rows);
  fx_parallel_for (rows, j->len >= 8192 ? 1 : 8192 / (j->len ? j->len : 1), softmax_range, j);
  return FX_OK;
}

fx_status
fx_kernel_softmax (fx_op_call *call)
{
  smax_job j = { .x = fx_arg_tensor (call, 0), .o = call->outs[0].u.t, .log = call->op->id == FX_OP_LOG_SOFTMAX
                                                                              || call->op->id == FX_OP_LOG_SOFTMAX_INT };
  return softmax_run (call, &j);
}

fx_status
fx_meta_prepare_softmax (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  if (!fx_norm_dim (call, &call->args[1].u.i, x->ndim))
    return FX_ERR_INVALID;
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  memcpy (sizes, x->sizes, sizeof sizes);
  if (x->ndim)
    sizes[call->args[1].u.i] = 1;
  fx_out_meta (call, 0, x->dtype, x->ndim, sizes);
  fx_out_meta (call, 1, x->dtype, x->ndim, sizes);
  return FX_OK;
}

fx_status
fx_kernel_prepare_softmax (fx_op_call *call)
{
  smax_job j = { .x = fx_arg_tensor (call, 0), .o = call->outs[0].u.t, .o2 = call->outs[1].u.t, .mode = 1 };
  return softmax_run (call, &j);
}

/* ---------------------------------------------------------------- layer norm */

fx_status
fx_meta_layer_norm (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  int64_t ns[FX_TENSOR_MAX_DIMS];
  int nn = fx_value_as_int_list (&call->args[1], ns, FX_TENSOR_MAX_DIMS);
  if (nn < 1 || nn > x->ndim)
    return fx_op_error (call, FX_ERR_INVALID, "Expected normalized_shape to be at least 1-dimensional and at most the input's rank");
  for (int i = 0; i < nn; i++)
    if (x->sizes[x->ndim - nn + i] != ns[i])
      return fx_op_error (call, FX_ERR_INVALID,
                          "Given normalized_shape=[..., %lld], expected input with shape [*, %lld] at dim %d, but got input of size %lld",
                          (long long) ns[i], (long long) ns[i], x->ndim - nn + i,
                          (long long) x->sizes[x->ndim - nn + i]);
  for (int k = 2; k <= 3; k++)
    {
      fx_tensor *w = fx_arg_tensor (call, k);
      if (w != NULL)
        {
          int64_t cnt = 1;
          for (int i = 0; i < nn; i++)
            cnt *= ns[i];
          if (fx_tensor_numel (w) != cnt)
            return fx_op_error (call, FX_ERR_INVALID, "%s has %lld elements, normalized_shape has %lld",
                                k == 2 ? "weight" : "bias", (long long) fx_tensor_numel (w), (long long) cnt);
        }
    }
  fx_out_meta (call, 0, x->dtype, x->ndim, x->sizes);
  if (call->op->id == FX_OP_LAYER_NORM)
    return FX_OK;   /* layer_norm: the normalized input alone */
  int64_t st[FX_TENSOR_MAX_DIMS];
  memcpy (st, x->sizes, sizeof st);
  for (int i = x->ndim - nn; i < x->ndim; i++)
    st[i] = 1;
  fx_dtype acc = x->dtype == FX_DTYPE_F16 || x->dtype == FX_DTYPE_BF16 ? FX_DTYPE_F32 : x->dtype;
  fx_out_meta (call, 1, acc, x->ndim, st);
  fx_out_meta (call, 2, acc, x->ndim, st);
  return FX_OK;
}

typedef struct
{
  const fx_tensor *x, *w, *b;
  fx_tensor *o, *mean, *rstd;
  int64_t n;
  double eps;
} ln_job;

/* native_layer_norm's mean and rstd outputs (layer_norm has none). */
static void
set_stats (const ln_job *j, int64_t r, double mean, double rstd)
{
  if (j->mean)
    fx_tensor_set_f64 (j->mean, r, mean);
  if (j->rstd)
    fx_tensor_set_f64 (j->rstd, r, rstd);
}

static void
layer_norm_range (int64_t begin, int64_t end, void *data)
{
  const ln_job *j = data;
  bool fast = j->x->dtype == FX_DTYPE_F32 && fx_tensor_is_contiguous (j->x) && fx_tensor_is_contiguous (j->o)
              && (!j->w || (j->w->dtype == FX_DTYPE_F32 && fx_tensor_is_contiguous (j->w)))
              && (!j->b || (j->b->dtype == FX_DTYPE_F32 && fx_tensor_is_contiguous (j->b)));
  for (int64_t r = begin; r < end; r++)
    {
      double sum = 0, sq = 0;
      if (fast)
        {
          const float *p = (const float *) fx_tensor_data (j->x) + r * j->n;
          double vmean, vrstd;
          if (fx_simd_layer_norm_row_f32 ((float *) fx_tensor_data (j->o) + r * j->n, p,
                                          j->w ? fx_tensor_data (j->w) : NULL, j->b ? fx_tensor_data (j->b) : NULL,
                                          j->n, j->eps, &vmean, &vrstd))
            {
              set_stats (j, r, vmean, vrstd);
              continue;
            }
          for (int64_t i = 0; i < j->n; i++)
            sum += p[i];
          double mean = sum / (double) j->n;
          for (int64_t i = 0; i < j->n; i++)
            {
              double dlt = p[i] - mean;
              sq += dlt * dlt;
            }
          double rstd = 1.0 / sqrt (sq / (double) j->n + j->eps);
          float *q = (float *) fx_tensor_data (j->o) + r * j->n;
          const float *w = j->w ? fx_tensor_data (j->w) : NULL;
          const float *b = j->b ? fx_tensor_data (j->b) : NULL;
          float fm = (float) mean, fr = (float) rstd;
          fx_layer_norm_apply_f32 (q, p, w, b, 0, j->n, fm, fr);
          set_stats (j, r, mean, rstd);
          continue;
        }
      for (int64_t i = 0; i < j->n; i++)
        sum += fx_tensor_get_f64 (j->x, r * j->n + i);
      double mean = sum / (double) j->n;
      for (int64_t i = 0; i < j->n; i++)
        {
          double dlt = fx_tensor_get_f64 (j->x, r * j->n + i) - mean;
          sq += dlt * dlt;
        }
      double rstd = 1.0 / sqrt (sq / (double) j->n + j->eps);
      for (int64_t i = 0; i < j->n; i++)
        {
          double v = (fx_tensor_get_f64 (j->x, r * j->n + i) - mean) * rstd;
          if (j->w)
            v *= fx_tensor_get_f64 (j->w, i);
          if (j->b)
            v += fx_tensor_get_f64 (j->b, i);
          fx_tensor_set_f64 (j->o, r * j->n + i, v);
        }
      set_stats (j, r, mean, rstd);
    }
}

fx_status
fx_kernel_layer_norm (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  int64_t ns[FX_TENSOR_MAX_DIMS];
  int nn = fx_value_as_int_list (&call->args[1], ns, FX_TENSOR_MAX_DIMS);
  ln_job j = { .x = x, .w = fx_arg_tensor (call, 2), .b = fx_arg_tensor (call, 3), .o = call->outs[0].u.t,
               .mean = call->n_outs > 1 ? call->outs[1].u.t : NULL, .rstd = call->n_outs > 2 ? call->outs[2].u.t : NULL,
               .eps = fx_value_as_f64 (&call->args[4]) };
  j.n = 1;
  for (int i = 0; i < nn; i++)
    j.n *= ns[i];
  int64_t rows = j.n ? fx_tensor_numel (x) / j.n : 0;
  if (j.n == 0)
    return FX_OK;
  fx_parallel_for (rows, j.n >= 8192 ? 1 : 8192 / j.n, layer_norm_range, &j);
  return FX_OK;
}

/* ---------------------------------------------------------------- batch norm (inference) */

fx_status
fx_meta_batch_norm (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  if (x->ndim < 2)
    return fx_op_error (call, FX_ERR_INVALID, "batch norm expects an input with at least 2 dims");
  int64_t c = x->sizes[1];
  for (int k = 1; k <= 4; k++)
    {
      fx_tensor *t = fx_arg_tensor (call, k);
      if (t != NULL && fx_tensor_numel (t) != c)
        return fx_op_error (call, FX_ERR_INVALID, "running stats/weight must have %lld elements", (long long) c);
    }
  fx_out_meta (call, 0, x->dtype, x->ndim, x->sizes);
  int64_t zero = 0;
  fx_out_meta (call, 1, x->dtype, 1, &zero);
  fx_out_meta (call, 2, x->dtype, 1, &zero);
  return FX_OK;
}

fx_status
fx_kernel_batch_norm (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *w = fx_arg_tensor (call, 1), *b = fx_arg_tensor (call, 2);
  fx_tensor *rm = fx_arg_tensor (call, 3), *rv = fx_arg_tensor (call, 4);
  double eps = fx_value_as_f64 (&call->args[6]);
  fx_tensor *o = call->outs[0].u.t;
  int64_t n = fx_tensor_numel (x), c = x->sizes[1];
  int64_t inner = 1;
  for (int k = 2; k < x->ndim; k++)
    inner *= x->sizes[k];
  for (int64_t i = 0; i < n; i++)
    {
      int64_t ch = (i / inner) % c;
      double v = (fx_tensor_get_f64 (x, i) - fx_tensor_get_f64 (rm, ch)) / sqrt (fx_tensor_get_f64 (rv, ch) + eps);
      if (w)
        v *= fx_tensor_get_f64 (w, ch);
      if (b)
        v += fx_tensor_get_f64 (b, ch);
      fx_tensor_set_f64 (o, i, v);
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- nll_loss */

fx_status
fx_meta_nll_loss (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0), *t = fx_arg_tensor (call, 1);
  if (x->ndim < 1 || x->ndim > 2)
    return fx_op_error (call, FX_ERR_INVALID, "input tensor should be 1D or 2D");
  if (!fx_dtype_is_integral (t->dtype, false))
    return fx_op_error (call, FX_ERR_INVALID, "expected scalar type Long but found %s", fx_dtype_c10_name (t->dtype));
  int64_t batch = x->ndim == 2 ? x->sizes[0] : 1;
  if ((x->ndim == 2 && (t->ndim != 1 || t->sizes[0] != batch)) || (x->ndim == 1 && t->ndim > 1))
    return fx_op_error (call, FX_ERR_INVALID, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                        (long long) batch, (long long) (t->ndim ? t->sizes[0] : 1));
  int64_t red = call->args[3].u.i;
  if (red == 0 && x->ndim == 2)
    fx_out_meta (call, 0, x->dtype, 1, &batch);
  else
    fx_out_meta (call, 0, x->dtype, 0, NULL);
  fx_out_meta (call, 1, x->dtype, 0, NULL);
  return FX_OK;
}

fx_status
fx_kernel_nll_loss (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0), *t = fx_arg_tensor (call, 1), *w = fx_arg_tensor (call, 2);
  int64_t red = call->args[3].u.i, ignore = call->args[4].u.i;
  int64_t batch = x->ndim == 2 ? x->sizes[0] : 1, nc = x->sizes[x->ndim - 1];
  double total = 0, wsum = 0;
  for (int64_t i = 0; i < batch; i++)
    {
      int64_t cls = fx_tensor_get_i64 (t, i);
      double loss = 0, wt = 0;
      if (cls != ignore)
        {
          if (cls < 0 || cls >= nc)
            return fx_op_error (call, FX_ERR_INVALID, "Target %lld is out of bounds.", (long long) cls);
          wt = w ? fx_tensor_get_f64 (w, cls) : 1.0;
          loss = -fx_tensor_get_f64 (x, i * nc + cls) * wt;
        }
      if (red == 0 && x->ndim == 2)
        fx_tensor_set_f64 (call->outs[0].u.t, i, loss);
      total += loss;
      wsum += wt;
    }
  if (!(red == 0 && x->ndim == 2))
    fx_tensor_set_f64 (call->outs[0].u.t, 0, red == 1 ? total / wsum : total);
  fx_tensor_set_f64 (call->outs[1].u.t, 0, red == 0 ? 0.0 : wsum);
  return FX_OK;
}

/* ---------------------------------------------------------------- topk */

fx_status
fx_meta_topk (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  if (!fx_norm_dim (call, &call->args[2].u.i, x->ndim))
    return FX_ERR_INVALID;
  int64_t k = call->args[1].u.i, d = call->args[2].u.i;
  int64_t len = x->ndim ? x->sizes[d] : 1;
  if (k < 0 || k > len)
    return fx_op_error (call, FX_ERR_INVALID, "selected index k out of range");
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  memcpy (sizes, x->sizes, sizeof (int64_t) * (size_t) x->ndim);
  if (x->ndim)
    sizes[d] = k;
  fx_out_meta (call, 0, x->dtype, x->ndim, sizes);
  fx_out_meta (call, 1, FX_DTYPE_I64, x->ndim, sizes);
  return FX_OK;
}

typedef struct
{
  double v;
  int64_t i;
} topk_item;

/* NaN is larger than every number, as PyTorch orders it; ties keep the lower index first */
static int
topk_cmp_desc (const void *pa, const void *pb)
{
  const topk_item *a = pa, *b = pb;
  bool an = isnan (a->v), bn = isnan (b->v);
  if (an != bn)
    return an ? -1 : 1;
  if (!an && a->v != b->v)
    return a->v > b->v ? -1 : 1;
  return a->i < b->i ? -1 : a->i > b->i;
}

static int
topk_cmp_asc (const void *pa, const void *pb)
{
  const topk_item *a = pa, *b = pb;
  bool an = isnan (a->v), bn = isnan (b->v);
  if (an != bn)
    return an ? 1 : -1;
  if (!an && a->v != b->v)
    return a->v < b->v ? -1 : 1;
  return a->i < b->i ? -1 : a->i > b->i;
}

/* topk: the k largest (smallest) along dim, sorted; sorted=False gives them sorted as well, one of the orders
   PyTorch allows. */
fx_status
fx_kernel_topk (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *vo = call->outs[0].u.t, *io = call->outs[1].u.t;
  int64_t k = call->args[1].u.i, d = call->args[2].u.i; /* d normalised by fx_meta_topk */
  bool largest = call->args[3].u.b;
  int64_t len = x->ndim ? x->sizes[d] : 1;
  int64_t rows = len ? fx_tensor_numel (x) / len : 0;
  int64_t inner = 1;
  for (int q = (int) d + 1; q < x->ndim; q++)
    inner *= x->sizes[q];
  topk_item *buf = malloc (sizeof (topk_item) * (size_t) (len ? len : 1));
  bool same = x->dtype == vo->dtype;
  for (int64_t r = 0; r < rows; r++)
    {
      /* row r: outer index r / inner, inner index r % inner; element j of it at flat (outer * len + j) * inner + in */
      int64_t outer = r / inner, in = r % inner;
      for (int64_t j = 0; j < len; j++)
        {
          buf[j].v = fx_tensor_get_f64 (x, (outer * len + j) * inner + in);
          buf[j].i = j;
        }
      qsort (buf, (size_t) len, sizeof *buf, largest ? topk_cmp_desc : topk_cmp_asc);
      for (int64_t j = 0; j < k; j++)
        {
          int64_t of = (outer * k + j) * inner + in;
          if (same && fx_dtype_is_integral (x->dtype, true))
            memcpy (fx_tensor_elem_ptr (vo, of), fx_tensor_elem_ptr (x, (outer * len + buf[j].i) * inner + in),
                    fx_dtype_size (x->dtype));
          else
            fx_tensor_set_f64 (vo, of, buf[j].v);
          fx_tensor_set_i64 (io, of, buf[j].i);
        }
    }
  free (buf);
  return FX_OK;
}
