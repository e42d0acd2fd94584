/* fx-diff-runs.c: run outputs: keeping them with a stored run, and diffing two runs' outputs (max abs, RMSE,
   same()), inputs, end-to-end and per-kernel times. */
#include "fx/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fx/accuracy.h"
#include "fx-diff-impl.h"

/* ------------------------------------------------------------------ values */

/* Outputs in order, tuples and lists flattened. */
static size_t
flatten (const fx_value *v, size_t n, const fx_value **out, size_t cap, size_t k)
{
  for (size_t i = 0; i < n; i++)
    {
      if (v[i].kind == FX_VALUE_TUPLE || v[i].kind == FX_VALUE_LIST)
        k = flatten (v[i].u.seq.items, v[i].u.seq.n, out, cap, k);
      else
        {
          if (out && k < cap)
            out[k] = &v[i];
          k++;
        }
    }
  return k;
}

static const fx_value **
flatten_all (const fx_value *v, size_t n, fx_arena *arena, size_t *count)
{
  *count = v ? flatten (v, n, NULL, 0, 0) : 0;
  const fx_value **out = fx_arena_alloc (arena, (*count + 1) * sizeof *out);
  if (v)
    flatten (v, n, out, *count, 0);
  return out;
}

static double
rmse (const fx_tensor *a, const fx_tensor *b)
{
  int64_t n = fx_tensor_numel (a);
  double sum = 0;

  if (n == 0 || n != fx_tensor_numel (b))
    return NAN;
  for (int64_t i = 0; i < n; i++)
    {
      double d = fx_tensor_get_f64 (a, i) - fx_tensor_get_f64 (b, i);
      sum += d * d;
    }
  return sqrt (sum / (double) n);
}

/* "float32[8, 4]" */
static const char *
describe_shape (fx_arena *arena, const char *dtype, const char *shape)
{
  return fx_arena_printf (arena, "%s[%s]", dtype ? dtype : "?", shape ? shape : "");
}

static const char *
value_kind_name (fx_value_kind k)
{
  /* The kinds a graph returns as numbers; the rest (strings, dtypes, devices) are "other". */
  return k == FX_VALUE_TENSOR ? "tensor" : k == FX_VALUE_INT ? "int" : k == FX_VALUE_FLOAT ? "float"
         : k == FX_VALUE_BOOL ? "bool" : k == FX_VALUE_NONE ? "none" : "other";
}

/* One output pair: shape/dtype mismatches named, else max abs, RMSE and same()'s verdict. */
static void
diff_one_output (fx_diff *diff, const char *scope, const char *name, const fx_value *va, const fx_value *vb,
                 const fx_value *v64)
{
  if (va->kind == FX_VALUE_TENSOR && vb->kind == FX_VALUE_TENSOR && va->u.t && vb->u.t)
    {
      const fx_tensor *ta = va->u.t, *tb = vb->u.t;
      bool same_shape = ta->ndim == tb->ndim && memcmp (ta->sizes, tb->sizes, sizeof (int64_t) * ta->ndim) == 0;
      if (!same_shape || ta->dtype != tb->dtype)
        {
          fx_buf sa, sb;
          fx_buf_init (&sa);
          fx_buf_init (&sb);
          fx_buf_put_ints (&sa, ta->sizes, ta->ndim);
          fx_buf_put_ints (&sb, tb->sizes, tb->ndim);
          fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "output", name, name,
                       !same_shape ? "shape" : "dtype",
                       describe_shape (diff->arena, fx_dtype_name (ta->dtype), sa.data ? sa.data : ""),
                       describe_shape (diff->arena, fx_dtype_name (tb->dtype), sb.data ? sb.data : ""));
          fx_buf_free (&sa);
          fx_buf_free (&sb);
          return;
        }
    }
  else if (va->kind != vb->kind)
    {
      fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "output", name, name, "kind",
                   value_kind_name (va->kind), value_kind_name (vb->kind));
      return;
    }
  fx_same_opts opts;
  fx_same_opts_init (&opts);
  fx_same_report rep;
  memset (&rep, 0, sizeof rep);
  rep.max_abs_err = NAN;
  /* A tensor pair directly: same()'s report then carries no "output 0:" of a one-item list. */
  bool pass = va->kind == FX_VALUE_TENSOR && va->u.t && vb->u.t
                ? fx_same_tensor (va->u.t, vb->u.t, v64 && v64->kind == FX_VALUE_TENSOR ? v64->u.t : NULL, &opts, &rep)
                : fx_same_values (va, vb, v64, 1, &opts, &rep);
  double err = NAN;
  if (va->kind == FX_VALUE_TENSOR && va->u.t && vb->u.t)
    err = rmse (va->u.t, vb->u.t);
  else if (va->kind == FX_VALUE_INT || va->kind == FX_VALUE_FLOAT)
    {
      double x = va->kind == FX_VALUE_INT ? (double) va->u.i : va->u.f;
      double y = vb->kind == FX_VALUE_INT ? (double) vb->u.i : vb->u.f;
      err = rep.max_abs_err = fabs (x - y);
    }
  const char *nums = fx_arena_printf (diff->arena, "max abs %.3g, rmse %.3g", rep.max_abs_err, err);
  const char *verdict = pass ? "pass" : (rep.message[0] ? rep.message : "fail");
  fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "output", name, name, "same()",
                                  nums, verdict);
  e->max_abs = rep.max_abs_err;
  e->rmse = err;
  /* Within same()'s tolerance: shown, not a difference. */
  e->informational = pass;
}

void
fx_diff_outputs (fx_diff *diff, const char *scope, const fx_value *a, size_t na, const fx_value *b, size_t nb,
                 const fx_value *a64, size_t n64)
{
  fx_arena *arena = fx_arena_new ();
  size_t ca = 0, cb = 0, c64 = 0;
  const fx_value **fa = flatten_all (a, na, arena, &ca);
  const fx_value **fb = flatten_all (b, nb, arena, &cb);
  const fx_value **f64 = flatten_all (a64, n64, arena, &c64);
  if (ca != cb)
    fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "outputs", "outputs", "outputs", "count",
                 fx_arena_printf (arena, "%zu", ca), fx_arena_printf (arena, "%zu", cb));
  for (size_t i = 0; i < ca && i < cb; i++)
    diff_one_output (diff, scope, fx_arena_printf (arena, "#%zu", i), fa[i], fb[i], c64 == ca ? f64[i] : NULL);
  fx_arena_free (arena);
}

/* ------------------------------------------------------------------ keeping outputs */

/* Fills o from tensor t: shape, strides, device, summary over the finite elements, and the data (a contiguous copy,
   returned for the caller to unref) while *kept + its bytes stays within cap. */
static fx_tensor *
keep_tensor (const fx_tensor *t, fx_store_run_output *o, fx_buf *shape, fx_buf *strides, fx_buf *dev, size_t cap,
             size_t *kept)
{
  o->dtype = fx_dtype_name (t->dtype);
  fx_buf_put_ints (shape, t->sizes, t->ndim);
  fx_buf_put_ints (strides, t->strides, t->ndim);
  o->shape = shape->data ? shape->data : "";
  o->strides = strides->data ? strides->data : "";
  fx_device_format (t->device, dev);
  o->device = dev->data;
  o->numel = fx_tensor_numel (t);
  /* Only host memory is read; a device tensor keeps its shape alone. */
  if (!t->storage || t->device.type != FX_DEVICE_CPU)
    return NULL;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t finite = 0;
  for (int64_t k = 0; k < o->numel; k++)
    {
      double x = fx_tensor_get_f64 (t, k);
      if (!isfinite (x))
        continue;
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
      sum += x;
      finite++;
    }
  if (finite)
    {
      o->min = lo;
      o->max = hi;
      o->mean = sum / (double) finite;
    }
  size_t nbytes = fx_tensor_nbytes (t);
  if (*kept + nbytes > cap)
    return NULL;
  fx_tensor *copy = fx_tensor_contiguous_copy (NULL, t);
  if (!copy)
    return NULL;
  o->data = fx_tensor_data (copy);
  o->nbytes = nbytes;
  *kept += nbytes;
  return copy;
}

fx_status
fx_run_outputs_store (fx_store *store, int64_t run_id, const fx_value *outputs, size_t n, size_t cap_bytes,
                      const char *inputs, const char *inputs_hash, fx_diag *diag)
{
  fx_arena *arena = fx_arena_new ();
  size_t count = 0;
  const fx_value **flat = flatten_all (outputs, n, arena, &count);
  size_t kept = 0;
  fx_status st = FX_OK;
  for (size_t i = 0; i < count && st == FX_OK; i++)
    {
      const fx_value *v = flat[i];
      fx_store_run_output o = { .ordinal = (int) i, .kind = value_kind_name (v->kind), .numel = -1,
                                .min = NAN, .max = NAN, .mean = NAN };
      fx_tensor *copy = NULL;
      fx_buf shape, strides, dev;
      fx_buf_init (&shape);
      fx_buf_init (&strides);
      fx_buf_init (&dev);
      if (v->kind == FX_VALUE_TENSOR && v->u.t)
        copy = keep_tensor (v->u.t, &o, &shape, &strides, &dev, cap_bytes, &kept);
      else if (v->kind == FX_VALUE_TENSOR)
        o.kind = "none";
      else if (v->kind == FX_VALUE_INT)
        o.value = fx_arena_printf (arena, "%lld", (long long) v->u.i);
      else if (v->kind == FX_VALUE_FLOAT)
        o.value = fx_arena_printf (arena, "%.17g", v->u.f);
      else if (v->kind == FX_VALUE_BOOL)
        o.value = v->u.b ? "True" : "False";
      st = fx_store_add_run_output (store, run_id, &o, diag);
      if (copy)
        fx_tensor_unref (copy);
      fx_buf_free (&shape);
      fx_buf_free (&strides);
      fx_buf_free (&dev);
    }
  if (st == FX_OK)
    st = fx_store_set_run_inputs (store, run_id, inputs, inputs_hash, (int) count, diag);
  fx_arena_free (arena);
  return st;
}

/* A kept output as a value; false when its data was not kept (or does not fit its shape). */
static bool
output_value (const fx_store_run_output *o, fx_value *out)
{
  *out = fx_value_none ();
  if (strcmp (o->kind, "tensor") == 0)
    {
      if (!o->data || !o->dtype)
        return false;
      fx_dtype dtype = fx_dtype_from_name (o->dtype);
      int64_t sizes[FX_TENSOR_MAX_DIMS];
      int ndim = 0;
      for (const char *p = o->shape ? o->shape : ""; *p;)
        {
          char *end = NULL;
          long long x = strtoll (p, &end, 10);
          if (end == p || ndim == FX_TENSOR_MAX_DIMS || x < 0)
            return false;
          sizes[ndim++] = x;
          p = end;
          while (*p == ',' || *p == ' ')
            p++;
        }
      if (dtype == FX_DTYPE_UNKNOWN || !fx_dtype_is_supported (dtype))
        return false;
      fx_tensor *t = fx_tensor_new (NULL, dtype, ndim, sizes);
      if (!t)
        return false;
      if (fx_tensor_nbytes (t) != o->nbytes)
        {
          fx_tensor_unref (t);
          return false;
        }
      if (o->nbytes)
        memcpy (fx_tensor_data (t), o->data, o->nbytes);
      *out = fx_value_tensor (t);
      return true;
    }
  if (strcmp (o->kind, "int") == 0 && o->value)
    *out = fx_value_int (strtoll (o->value, NULL, 10));
  else if (strcmp (o->kind, "float") == 0 && o->value)
    *out = fx_value_float (strtod (o->value, NULL));
  else if (strcmp (o->kind, "bool") == 0 && o->value)
    *out = fx_value_bool (strcmp (o->value, "True") == 0);
  else if (strcmp (o->kind, "none") != 0)
    return false;
  return true;
}

static const char *
summary (fx_arena *arena, const fx_store_run_output *o)
{
  if (isnan (o->min))
    return fx_arena_printf (arena, "%s", describe_shape (arena, o->dtype, o->shape));
  return fx_arena_printf (arena, "%s min %.4g max %.4g mean %.4g", describe_shape (arena, o->dtype, o->shape), o->min,
                          o->max, o->mean);
}

/* Per output of two stored runs. */
static fx_status
diff_stored_outputs (fx_diff *diff, fx_store *sa, const fx_store_run_row *x, fx_store *sb, const fx_store_run_row *y,
                     const char *scope, const char *name, fx_arena *arena, fx_diag *diag)
{
  if (x->n_outputs < 0 && y->n_outputs < 0)
    return FX_OK; /* runs stored before outputs were kept, or failed runs: nothing to compare or to say */
  if (x->n_outputs < 0 || y->n_outputs < 0)
    {
      fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "run", name, name,
                                      "outputs", x->n_outputs < 0 ? "not kept" : "kept",
                                      y->n_outputs < 0 ? "not kept" : "kept");
      e->informational = true; /* a run stored before outputs were kept, or one that failed */
      return FX_OK;
    }
  fx_store_run_output *oa = NULL, *ob = NULL;
  size_t na = 0, nb = 0;
  fx_status st = fx_store_list_run_outputs (sa, x->id, arena, &oa, &na, diag);
  if (st == FX_OK)
    st = fx_store_list_run_outputs (sb, y->id, arena, &ob, &nb, diag);
  if (st != FX_OK)
    return st;
  if (na != nb)
    fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "outputs", "outputs", "outputs", "count",
                 fx_arena_printf (arena, "%zu", na), fx_arena_printf (arena, "%zu", nb));
  for (size_t i = 0; i < na && i < nb; i++)
    {
      const char *oname = fx_arena_printf (arena, "#%zu", i);
      const fx_store_run_output *p = &oa[i], *q = &ob[i];
      bool tensors = strcmp (p->kind, "tensor") == 0 && strcmp (q->kind, "tensor") == 0;
      if (tensors && (!p->dtype || !q->dtype || strcmp (p->dtype, q->dtype) != 0 || !p->shape || !q->shape
                      || strcmp (p->shape, q->shape) != 0))
        {
          bool shape = !p->shape || !q->shape || strcmp (p->shape, q->shape) != 0;
          fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "output", oname, oname,
                       shape ? "shape" : "dtype", describe_shape (arena, p->dtype, p->shape),
                       describe_shape (arena, q->dtype, q->shape));
          continue;
        }
      fx_value va, vb;
      bool ka = output_value (p, &va), kb = output_value (q, &vb);
      if (ka && kb)
        diff_one_output (diff, scope, oname, &va, &vb, NULL);
      else if (tensors && ((!p->data && p->numel > 0) || (!q->data && q->numel > 0)))
        {
          /* Over the size cap (or in device memory, which is not read): the summaries are shown, not compared as
             if they were the numbers. */
          bool device = (p->device && strcmp (p->device, "cpu") != 0) || (q->device && strcmp (q->device, "cpu") != 0);
          fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "output", oname, oname,
                                          device ? "not kept (device memory)" : "outputs too large to keep",
                                          summary (arena, p), summary (arena, q));
          e->informational = true;
        }
      else
        {
          fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "output", oname, oname,
                                          "not compared", p->kind, q->kind);
          e->informational = strcmp (p->kind, q->kind) == 0;
        }
      fx_value_clear (&va);
      fx_value_clear (&vb);
    }
  return FX_OK;
}

/* ------------------------------------------------------------------ kernel times */

typedef struct
{
  const char **keys;
  double *ms;
  size_t n;
} kernel_times;

#define KERNEL_MS "kernel_ms."

static fx_status
read_kernel_times (fx_store *s, int64_t engine_compile, fx_arena *arena, kernel_times *kt, fx_diag *diag)
{
  memset (kt, 0, sizeof *kt);
  if (engine_compile <= 0)
    return FX_OK;
  fx_store_kv *kv = NULL;
  size_t n = 0;
  fx_status st = fx_store_list_metrics (s, engine_compile, arena, &kv, &n, diag);
  if (st != FX_OK)
    return st;
  kt->keys = fx_arena_alloc (arena, (n + 1) * sizeof *kt->keys);
  kt->ms = fx_arena_alloc (arena, (n + 1) * sizeof *kt->ms);
  for (size_t i = 0; i < n; i++)
    if (kv[i].key && strncmp (kv[i].key, KERNEL_MS, strlen (KERNEL_MS)) == 0 && kv[i].value)
      {
        kt->keys[kt->n] = kv[i].key + strlen (KERNEL_MS);
        kt->ms[kt->n++] = strtod (kv[i].value, NULL);
      }
  return FX_OK;
}

static fx_status
diff_kernel_times (fx_diff *diff, fx_store *sa, const fx_store_run_row *x, fx_store *sb, const fx_store_run_row *y,
                   const char *scope, const char *name, fx_arena *arena, fx_diag *diag)
{
  kernel_times ta, tb;
  fx_status st = read_kernel_times (sa, x->engine_compile, arena, &ta, diag);
  if (st == FX_OK)
    st = read_kernel_times (sb, y->engine_compile, arena, &tb, diag);
  if (st != FX_OK || (ta.n == 0 && tb.n == 0))
    return st;
  if (ta.n == 0 || tb.n == 0)
    {
      /* Per-kernel times are taken only by fxwb run/compare -k: nothing to pair them with. */
      fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "run", name, name,
                                      "kernel times", ta.n ? "timed" : "not timed (run without -k)",
                                      tb.n ? "timed" : "not timed (run without -k)");
      e->informational = true;
      return FX_OK;
    }
  long *pa = fx_arena_alloc (arena, (ta.n + 1) * sizeof *pa), *pb = fx_arena_alloc (arena, (tb.n + 1) * sizeof *pb);
  for (size_t i = 0; i < ta.n; i++)
    pa[i] = -1;
  for (size_t j = 0; j < tb.n; j++)
    pb[j] = -1;
  fx_diff_match_keys (ta.keys, ta.n, tb.keys, tb.n, pa, pb);
  /* Timings vary from run to run: every kernel entry is informational (which kernels exist is the kernels
     section's business). */
  for (size_t i = 0; i < ta.n; i++)
    {
      fx_diff_entry *e;
      if (pa[i] < 0)
        e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_REMOVED, scope, "kernel", ta.keys[i], NULL, NULL,
                         fx_arena_printf (arena, "%.4g ms", ta.ms[i]), NULL);
      else
        {
          double a = ta.ms[i], b = tb.ms[pa[i]];
          double ratio = a > 0 ? b / a : NAN;
          e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "kernel", ta.keys[i], tb.keys[pa[i]],
                           "time", fx_arena_printf (arena, "%.4g ms", a),
                           isnan (ratio) ? fx_arena_printf (arena, "%.4g ms", b)
                                         : fx_arena_printf (arena, "%.4g ms (x%.2f)", b, ratio));
          e->ratio = ratio;
        }
      e->informational = true;
    }
  for (size_t j = 0; j < tb.n; j++)
    if (pb[j] < 0)
      {
        fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_ADDED, scope, "kernel", NULL, tb.keys[j],
                                        NULL, NULL, fx_arena_printf (arena, "%.4g ms", tb.ms[j]));
        e->informational = true;
      }
  return FX_OK;
}

/* ------------------------------------------------------------------ a pair of runs */

static void
run_number (fx_diff *diff, const char *scope, const char *name, const char *field, double va, double vb,
            const char *unit, fx_arena *arena)
{
  if ((isnan (va) && isnan (vb)) || va == vb)
    return;
  /* A ratio of times; an error figure's ratio says nothing (1e-6 -> 1.5 is "x1e6"). */
  bool time = strcmp (unit, " ms") == 0;
  double ratio = time && !isnan (va) && !isnan (vb) && va != 0 ? vb / va : NAN;
  const char *ta = isnan (va) ? "-" : fx_arena_printf (arena, "%.4g%s", va, unit);
  const char *tb = isnan (vb) ? "-"
                   : !isnan (ratio) ? fx_arena_printf (arena, "%.4g%s (x%.2f)", vb, unit, ratio)
                                    : fx_arena_printf (arena, "%.4g%s", vb, unit);
  fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "run", name, name, field, ta, tb);
  e->ratio = ratio;
  e->informational = true; /* timings vary from run to run */
}

static const char *
short_hash (fx_arena *arena, const char *h)
{
  return fx_arena_printf (arena, "%.12s", h);
}

fx_status
fx_diff_run_pair (fx_diff *diff, fx_store *sa, const fx_store_run_row *x, fx_store *sb, const fx_store_run_row *y,
                  const char *scope, const char *name, const char *detail_scope, fx_arena *arena, fx_diag *diag)
{
  const char *va = x->error && !(x->verdict && strcmp (x->verdict, "fail") == 0) ? "error" : x->verdict;
  const char *vb = y->error && !(y->verdict && strcmp (y->verdict, "fail") == 0) ? "error" : y->verdict;
  if (x->incomplete)
    va = "incomplete";
  if (y->incomplete)
    vb = "incomplete";
  if (!((va == NULL && vb == NULL) || (va && vb && strcmp (va, vb) == 0)))
    fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "run", name, name, "verdict", va ? va : "-",
                 vb ? vb : "-");
  run_number (diff, scope, name, "run_ms_median", x->run_ms_median, y->run_ms_median, " ms", arena);
  run_number (diff, scope, name, "compile_ms", x->compile_ms, y->compile_ms, " ms", arena);
  run_number (diff, scope, name, "accuracy", x->accuracy, y->accuracy, "", arena);
  if (x->n_kernels >= 0 && y->n_kernels >= 0 && x->n_kernels != y->n_kernels)
    fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, scope, "run", name, name, "kernels",
                 fx_arena_printf (arena, "%d", x->n_kernels), fx_arena_printf (arena, "%d", y->n_kernels));
  /* Which inputs the two saw: the same values (runs of one compare), other values (another seed, another graph's
     inputs: the output numbers then say little), or unknown (a run stored before inputs were recorded). */
  if (x->n_outputs >= 0 || y->n_outputs >= 0)
    {
      fx_diff_entry *e;
      if (!x->inputs_hash || !y->inputs_hash)
        {
          e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, detail_scope, "run", name, name, "inputs",
                           x->inputs ? x->inputs : "unknown", y->inputs ? y->inputs : "unknown");
          e->informational = true;
        }
      else if (strcmp (x->inputs_hash, y->inputs_hash) == 0)
        {
          e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, detail_scope, "run", name, name, "inputs",
                           x->inputs ? x->inputs : "-", "the same values");
          e->informational = true;
        }
      else
        fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_CHANGED, detail_scope, "run", name, name,
                     "inputs (different values: the outputs were computed from different inputs)",
                     fx_arena_printf (arena, "%s (%s)", x->inputs ? x->inputs : "-", short_hash (arena, x->inputs_hash)),
                     fx_arena_printf (arena, "%s (%s)", y->inputs ? y->inputs : "-", short_hash (arena, y->inputs_hash)));
    }
  fx_status st = diff_stored_outputs (diff, sa, x, sb, y, detail_scope, name, arena, diag);
  if (st == FX_OK)
    st = diff_kernel_times (diff, sa, x, sb, y, detail_scope, name, arena, diag);
  return st;
}

/* "inductor", "inductor@max-autotune", "inductor {'k': v}" (a column given as "inductor,k=v" is stored under that
   label already). */
static const char *
run_label (fx_arena *arena, const fx_store_run_row *r)
{
  const char *b = r->backend ? r->backend : "?";
  bool mode = r->mode && strcmp (r->mode, "default") != 0;
  bool options = r->options_json && strcmp (r->options_json, "{}") != 0 && !strchr (b, ',');
  return fx_arena_printf (arena, "%s%s%s%s%s", b, mode ? "@" : "", mode ? r->mode : "", options ? " " : "",
                          options ? r->options_json : "");
}

fx_status
fx_diff_stored_runs (fx_diff *diff, fx_store *sa, int64_t run_a, fx_store *sb, int64_t run_b, const char *scope,
                     fx_diag *diag)
{
  fx_arena *arena = fx_arena_new ();
  fx_store_run_row x, y;
  fx_status st = fx_store_get_run (sa, run_a, arena, &x, diag);
  if (st == FX_OK)
    st = fx_store_get_run (sb, run_b, arena, &y, diag);
  if (st == FX_OK)
    {
      const char *la = run_label (arena, &x), *lb = run_label (arena, &y);
      const char *name = strcmp (la, lb) == 0 ? la : fx_arena_printf (arena, "%s vs %s", la, lb);
      if (!scope)
        scope = fx_arena_printf (arena, "run/%lld -> run/%lld", (long long) run_a, (long long) run_b);
      st = fx_diff_run_pair (diff, sa, &x, sb, &y, scope, name, scope, arena, diag);
    }
  fx_arena_free (arena);
  return st;
}
