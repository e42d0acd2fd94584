/* fx-accuracy.c: PyTorch's same(): allclose first, else RMSE against an fp64 reference within a multiplier, and a
   report of the worst element. */
#include "fx/accuracy.h"
#include "fx/runtime.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void
fx_same_opts_init (fx_same_opts *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->tol = 1e-3;
  opts->equal_nan = true;
}

bool
fx_allclose (const fx_tensor *a, const fx_tensor *b, double rtol, double atol, bool equal_nan)
{
  int nd;
  int64_t shape[FX_TENSOR_MAX_DIMS];
  if (!fx_broadcast_shapes (a->ndim, a->sizes, b->ndim, b->sizes, &nd, shape, NULL))
    return false;
  int64_t n = 1;
  for (int d = 0; d < nd; d++)
    n *= shape[d];
  fx_tensor va = *a, vb = *b;
  va.ndim = vb.ndim = nd;
  fx_broadcast_strides (a, nd, shape, va.strides);
  fx_broadcast_strides (b, nd, shape, vb.strides);
  memcpy (va.sizes, shape, sizeof (int64_t) * nd);
  memcpy (vb.sizes, shape, sizeof (int64_t) * nd);
  for (int64_t i = 0; i < n; i++)
    {
      double x = fx_tensor_get_f64 (&va, i), y = fx_tensor_get_f64 (&vb, i);
      if (isnan (x) || isnan (y))
        {
          if (!(equal_nan && isnan (x) && isnan (y)))
            return false;
          continue;
        }
      if (x == y)
        continue;
      if (isinf (x) || isinf (y) || fabs (x - y) > atol + rtol * fabs (y))
        return false;
    }
  return true;
}

static double
rmse (const fx_tensor *a, const fx_tensor *b)
{
  int64_t n = fx_tensor_numel (a);
  double s = 0;
  for (int64_t i = 0; i < n; i++)
    {
      double d = fx_tensor_get_f64 (a, i) - fx_tensor_get_f64 (b, i);
      s += d * d;
    }
  return n ? sqrt (s / (double) n) : 0.0;
}

static void
worst_element (const fx_tensor *ref, const fx_tensor *res, fx_same_report *r)
{
  int64_t n = fx_tensor_numel (ref);
  r->max_abs_err = 0;
  r->max_rel_err = 0;
  r->worst_index = -1;
  if (fx_tensor_numel (res) != n)
    return;
  for (int64_t i = 0; i < n; i++)
    {
      double x = fx_tensor_get_f64 (ref, i), y = fx_tensor_get_f64 (res, i);
      double e;
      if (isnan (x) && isnan (y))
        continue;
      if (x == y)
        continue;
      e = isnan (x) || isnan (y) ? INFINITY : fabs (x - y);
      if (e > r->max_abs_err || r->worst_index < 0)
        {
          r->max_abs_err = e;
          r->worst_index = i;
          r->worst_ref = x;
          r->worst_res = y;
        }
      double rel = x != 0 ? e / fabs (x) : e;
      if (rel > r->max_rel_err)
        r->max_rel_err = rel;
    }
}

bool
fx_same_tensor (const fx_tensor *ref, const fx_tensor *res, const fx_tensor *fp64_ref, const fx_same_opts *opts,
                fx_same_report *r)
{
  memset (r, 0, sizeof *r);
  r->worst_index = -1;
  if (ref->ndim != res->ndim || memcmp (ref->sizes, res->sizes, sizeof (int64_t) * ref->ndim) != 0)
    {
      snprintf (r->message, sizeof r->message, "Accuracy failed: shape mismatch");
      return r->pass = false;
    }
  if (ref->dtype != res->dtype)
    {
      snprintf (r->message, sizeof r->message, "Accuracy failed: dtype mismatch %s vs %s", fx_dtype_name (ref->dtype),
                fx_dtype_name (res->dtype));
      return r->pass = false;
    }
  worst_element (ref, res, r);
  if (!fx_dtype_is_floating (ref->dtype))
    {
      if (opts->ignore_non_fp)
        return r->pass = true;
      r->pass = r->worst_index < 0;
      if (!r->pass)
        snprintf (r->message, sizeof r->message, "Accuracy failed: integer values differ");
      return r->pass;
    }
  if (fx_allclose (ref, res, opts->tol, opts->tol, opts->equal_nan))
    return r->pass = true;
  if (fp64_ref == NULL)
    {
      snprintf (r->message, sizeof r->message, "Accuracy failed: allclose not within tol=%g", opts->tol);
      return r->pass = false;
    }
  r->used_rmse = true;
  r->ref_error = rmse (fp64_ref, ref);
  r->res_error = rmse (fp64_ref, res);
  double mult = 2.0;
  int64_t numel = fx_tensor_numel (res);
  if (res->dtype == FX_DTYPE_F16 || res->dtype == FX_DTYPE_BF16 || numel < 1000
      || (res->ndim == 4 && res->sizes[2] == 1 && res->sizes[3] == 1) || opts->tol >= 2e-2)
    mult = 3.0;
  if (opts->force_max_multiplier)
    mult = 10.0;
  r->multiplier = mult;
  r->pass = r->res_error <= mult * r->ref_error + opts->tol / 10.0;
  if (!r->pass)
    {
      fx_buf sh;
      fx_buf_init (&sh);
      fx_buf_puts (&sh, "torch.Size([");
      fx_buf_put_ints (&sh, res->sizes, res->ndim);
      fx_buf_puts (&sh, "])");
      snprintf (r->message, sizeof r->message,
                "RMSE (res-fp64): %.5f, (ref-fp64): %.5f and shape=%s. res.dtype: torch.%s, multiplier: %f, tol: %f",
                r->res_error, r->ref_error, sh.data, fx_dtype_name (res->dtype), mult, opts->tol);
      fx_buf_free (&sh);
    }
  return r->pass;
}

bool
fx_same_values (const fx_value *ref, const fx_value *res, const fx_value *fp64_ref, size_t n, const fx_same_opts *opts,
                fx_same_report *report)
{
  memset (report, 0, sizeof *report);
  report->pass = true;
  report->worst_index = -1;
  for (size_t i = 0; i < n; i++)
    {
      fx_same_report r;
      memset (&r, 0, sizeof r);
      r.pass = true;
      if (ref[i].kind != res[i].kind)
        {
          r.pass = false;
          snprintf (r.message, sizeof r.message, "Accuracy failed: output %zu has a different kind", i);
        }
      else if (ref[i].kind == FX_VALUE_TENSOR)
        fx_same_tensor (ref[i].u.t, res[i].u.t,
                        fp64_ref && fp64_ref[i].kind == FX_VALUE_TENSOR ? fp64_ref[i].u.t : NULL, opts, &r);
      else if (ref[i].kind == FX_VALUE_TUPLE || ref[i].kind == FX_VALUE_LIST)
        {
          if (ref[i].u.seq.n != res[i].u.seq.n)
            r.pass = false;
          else
            fx_same_values (ref[i].u.seq.items, res[i].u.seq.items,
                            fp64_ref && fp64_ref[i].kind == ref[i].kind ? fp64_ref[i].u.seq.items : NULL,
                            ref[i].u.seq.n, opts, &r);
        }
      else if (ref[i].kind == FX_VALUE_FLOAT)
        r.pass = fabs (ref[i].u.f - res[i].u.f) <= opts->tol * (1 + fabs (ref[i].u.f));
      else if (ref[i].kind == FX_VALUE_INT)
        r.pass = ref[i].u.i == res[i].u.i;
      else if (ref[i].kind == FX_VALUE_BOOL)
        r.pass = ref[i].u.b == res[i].u.b;
      if (!r.pass && r.message[0] == '\0')
        snprintf (r.message, sizeof r.message, "Accuracy failed: output %zu differs", i);
      bool worse = (!r.pass && report->pass) || r.max_abs_err > report->max_abs_err;
      if (worse)
        {
          bool pass = report->pass && r.pass;
          *report = r;
          report->pass = pass;
          if (!r.pass && report->message[0])
            {
              char tmp[600];
              snprintf (tmp, sizeof tmp, "output %zu: %.480s", i, r.message);
              snprintf (report->message, sizeof report->message, "%.500s", tmp);
            }
        }
      else if (!r.pass)
        report->pass = false;
      if (r.max_rel_err > report->max_rel_err)
        report->max_rel_err = r.max_rel_err;
    }
  return report->pass;
}

const char *
fx_verdict_name (fx_verdict v)
{
  switch (v)
    {
    case FX_VERDICT_PASS: return "pass";
    case FX_VERDICT_FAIL: return "fail";
    case FX_VERDICT_ERROR: return "error";
    case FX_VERDICT_NOT_CHECKED:
    default: return "not checked";
    }
}

static void
json_num (fx_buf *out, double v)
{
  if (isnan (v) || isinf (v))
    fx_buf_puts (out, "null");
  else
    fx_buf_printf (out, "%.6g", v);
}

/* ", "key": value" members after the first. */
static void
member_str (fx_buf *out, const char *key, const char *v)
{
  fx_buf_printf (out, ", \"%s\": ", key);
  fx_buf_put_json_str (out, v);
}

static void
member_num (fx_buf *out, const char *key, double v)
{
  fx_buf_printf (out, ", \"%s\": ", key);
  json_num (out, v);
}

void
fx_run_result_to_json (const fx_run_result *r, fx_buf *out)
{
  fx_buf_puts (out, "{\"backend\": ");
  fx_buf_put_json_str (out, r->backend);
  member_str (out, "mode", r->mode);
  member_str (out, "options", r->options);
  member_str (out, "device", r->device);
  fx_buf_printf (out, ", \"status\": \"%s\"", r->status == FX_OK ? "ok" : fx_status_name (r->status));
  if (r->status == FX_OK)
    fx_buf_puts (out, ", \"error\": null");
  else
    member_str (out, "error", r->error);
  member_num (out, "compile_ms", r->compile_ms);
  member_num (out, "median_ms", r->median_ms);
  member_num (out, "min_ms", r->min_ms);
  member_num (out, "max_ms", r->max_ms);
  fx_buf_printf (out, ", \"repeat\": %d, \"warmup\": %d, \"peak_bytes\": %zu", r->repeat, r->warmup, r->peak_bytes);
  fx_buf_printf (out, ", \"accuracy\": \"%s\"", fx_verdict_name (r->verdict));
  member_num (out, "max_abs_err", r->max_abs_err);
  member_num (out, "max_rel_err", r->max_rel_err);
  member_str (out, "accuracy_report", r->accuracy_report);
  fx_buf_printf (out, ", \"kernels\": %zu}", r->n_kernels);
}
