/* fxwb-train.c: `fxwb compile --train` (forward/backward graphs of the min-cut or save-all partition, saved values
   with their reasons) and `fxwb compare --train` (forward, backward and an optimizer step per backend, timed
   separately, gradients checked against the interpreter's joint graph). */
#include "fxwb-train.h"

#include <math.h>
#include <string.h>

#include "fx/accuracy.h"

int
fxwb_train_prepare (const char *cmd, const fx_graph *graph, fx_partition_kind kind, fxwb_train *t)
{
  memset (t, 0, sizeof *t);
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_graph *aten = NULL;
  fx_status st = FX_OK;
  fx_joint_shape js;
  size_t changed = 0;
  if (fx_joint_shape_of (graph, &js, NULL) == FX_OK && js.n_tangents > 0)
    {
      /* already a joint graph (an imported aot_joint_graph): partition it as it is */
      t->joint = fx_graph_copy (graph);
      fx_graph_resolve_ops (t->joint);
      st = fx_pass_shape_prop (t->joint, &changed, &diag);
    }
  else if (fx_graph_is_torch_level (graph))
    st = fx_lower_to_aten (graph, &aten, &diag);
  if (st == FX_OK && t->joint == NULL)
    st = fx_autograd_joint (aten ? aten : graph, NULL, 0, &t->joint, &diag);
  if (st == FX_OK)
    st = fx_autograd_partition (t->joint, kind, &t->part, &diag);
  fx_graph_free (aten);
  if (st != FX_OK)
    {
      fprintf (stderr, "%s: --train: ", cmd);
      fxwb_print_diag (&diag);
      fxwb_train_clear (t);
      return fxwb_exit_for_status (st);
    }
  return FXWB_EXIT_OK;
}

void
fxwb_train_clear (fxwb_train *t)
{
  fx_graph_free (t->joint);
  fx_partition_clear (&t->part);
  memset (t, 0, sizeof *t);
}

static void
print_graph (const char *title, const fx_graph *g)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_readable_opts ro = { .include_stride = false, .include_device = false };
  fx_graph_print_readable (g, &ro, &b);
  printf ("# %s\n%s\n", title, b.data ? b.data : "");
  fx_buf_free (&b);
}

void
fxwb_train_print (const fxwb_train *t, gboolean joint)
{
  if (joint)
    print_graph ("aot_joint_graph", t->joint);
  print_graph ("aot_forward_graph", t->part.forward);
  print_graph ("aot_backward_graph", t->part.backward);
  size_t bytes = 0;
  for (size_t i = 0; i < t->part.n_saved; i++)
    bytes += t->part.saved[i].bytes;
  printf ("# saved for backward: %zu values, %.1f KiB\n", t->part.n_saved, (double) bytes / 1024.0);
  for (size_t i = 0; i < t->part.n_saved; i++)
    {
      g_autofree char *name = fxwb_escape_controls (t->part.saved[i].name);
      printf ("  %-24s %10zu B  %s\n", name, t->part.saved[i].bytes, t->part.saved[i].reason);
    }
}

/* ---------------------------------------------------------------- training steps */

/* One column's state: compiled halves, its parameters, optimizer moments, timings. */
typedef struct
{
  fx_compiled *fw, *bw;
  fx_value *params;         /* the primals, updated in place by the optimizer (owned copies) */
  fx_tensor **m, **v;       /* Adam moments per primal (NULL: none) */
  double *fw_ms, *bw_ms;
  double max_err;             /* largest absolute error of a grad */
  double max_rel;             /* largest error of a grad relative to that grad's largest magnitude */
  int diverged;             /* the step whose reference grads were not finite (0: none) */
  int steps_run;            /* the steps timed (fw_ms, bw_ms entries) */
  gboolean failed;
  char error[1024];
} train_col;

static fx_value
dup_tensor (const fx_value *v)
{
  if (v->kind != FX_VALUE_TENSOR)
    return *v;
  return fx_value_tensor (fx_tensor_contiguous_copy (NULL, v->u.t));
}

static gboolean
is_param (const fx_value *v)
{
  return v->kind == FX_VALUE_TENSOR && fx_dtype_is_floating (v->u.t->dtype);
}

/* p -= lr * g (SGD), or Adam (betas 0.9, 0.999, eps 1e-8) with bias correction at step (1-based). */
static void
optim_step (const fxwb_train_opts *o, fx_tensor *p, const fx_tensor *g, fx_tensor **m, fx_tensor **v, int step)
{
  int64_t n = fx_tensor_numel (p);
  if (o->optim == FXWB_OPTIM_SGD)
    {
      for (int64_t i = 0; i < n; i++)
        fx_tensor_set_f64 (p, i, fx_tensor_get_f64 (p, i) - o->lr * fx_tensor_get_f64 (g, i));
      return;
    }
  if (*m == NULL)
    {
      *m = fx_tensor_new (NULL, FX_DTYPE_F64, p->ndim, p->sizes);
      *v = fx_tensor_new (NULL, FX_DTYPE_F64, p->ndim, p->sizes);
      memset (fx_tensor_data (*m), 0, fx_tensor_nbytes (*m));
      memset (fx_tensor_data (*v), 0, fx_tensor_nbytes (*v));
    }
  double b1 = 0.9, b2 = 0.999, c1 = 1 - pow (b1, step), c2 = 1 - pow (b2, step);
  for (int64_t i = 0; i < n; i++)
    {
      double gi = fx_tensor_get_f64 (g, i);
      double mi = b1 * fx_tensor_get_f64 (*m, i) + (1 - b1) * gi;
      double vi = b2 * fx_tensor_get_f64 (*v, i) + (1 - b2) * gi * gi;
      fx_tensor_set_f64 (*m, i, mi);
      fx_tensor_set_f64 (*v, i, vi);
      fx_tensor_set_f64 (p, i, fx_tensor_get_f64 (p, i) - o->lr * (mi / c1) / (sqrt (vi / c2) + 1e-8));
    }
}

/* Applies the grads (the last n_params values of grads) to params. */
static void
apply_grads (const fxwb_train_opts *o, train_col *c, const fx_value *grads, size_t n_params, int step)
{
  for (size_t i = 0; i < n_params; i++)
    if (is_param (&c->params[i]) && grads[i].kind == FX_VALUE_TENSOR)
      optim_step (o, c->params[i].u.t, grads[i].u.t, &c->m[i], &c->v[i], step);
}

static fx_value *
make_tangents (const fx_graph *joint, size_t *n)
{
  fx_joint_shape js;
  fx_joint_shape_of (joint, &js, NULL);
  fx_value *t = g_new0 (fx_value, js.n_tangents + 1);
  *n = 0;
  fx_graph_foreach_node (joint, node)
  {
    if (node->op != FX_OP_PLACEHOLDER || strncmp (node->name, "tangents_", 9) != 0)
      continue;
    const fx_tensor_meta *m = &node->meta.val.tensor;
    int64_t sizes[FX_TENSOR_MAX_DIMS];
    for (int d = 0; d < m->ndim && d < FX_TENSOR_MAX_DIMS; d++)
      sizes[d] = m->sizes[d].value;
    fx_tensor *x = fx_tensor_new (NULL, m->dtype, m->ndim, sizes);
    for (int64_t i = 0; i < fx_tensor_numel (x); i++)
      fx_tensor_set_f64 (x, i, 1.0);  /* loss.backward() of a sum: every tangent is ones */
    t[(*n)++] = fx_value_tensor (x);
  }
  return t;
}

static void
clear_values (fx_value *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    fx_value_clear (&v[i]);
}

static double
elapsed_ms (gint64 t0)
{
  return (double) (g_get_monotonic_time () - t0) / 1000.0;
}

/* One step of a column: forward, backward (both timed); returns the grads in *grads (arena). */
static fx_status
column_step (train_col *c, const fxwb_train *t, const fx_value *tangents, size_t n_tangents, size_t n_params,
             int step, fx_arena *arena, fx_value **grads, fx_diag *diag)
{
  fx_value *fo = NULL;
  size_t nfo = 0, nbo = 0;
  gint64 t0 = g_get_monotonic_time ();
  fx_status st = fx_compiled_run (c->fw, c->params, n_params, arena, &fo, &nfo, diag);
  c->fw_ms[step] = elapsed_ms (t0);
  if (st != FX_OK)
    return st;
  size_t ns = t->part.n_saved;
  fx_value *bin = g_new0 (fx_value, ns + n_tangents + 1);
  memcpy (bin, fo + t->part.n_fwd_outputs, sizeof (fx_value) * ns);
  memcpy (bin + ns, tangents, sizeof (fx_value) * n_tangents);
  t0 = g_get_monotonic_time ();
  st = fx_compiled_run (c->bw, bin, ns + n_tangents, arena, grads, &nbo, diag);
  c->bw_ms[step] = elapsed_ms (t0);
  g_free (bin);
  clear_values (fo, nfo);
  if (st == FX_OK && nbo != n_params)
    st = fx_diag_set (diag, FX_ERR_BACKEND, "the backward returned %zu values for %zu inputs", nbo, n_params);
  return st;
}

/* Worst error of grads against ref; FALSE when one does not match: neither allclose (rtol 1e-3, atol 1e-4 of the
   largest magnitude) nor, with the fp64 reference ref64 (may be NULL), same()'s RMSE test. */
static gboolean
check_grads (const fx_value *ref, const fx_value *ref64, const fx_value *got, size_t n, double *max_err,
             double *max_rel, char *why, size_t why_len)
{
  fx_same_opts so;
  fx_same_opts_init (&so);
  for (size_t i = 0; i < n; i++)
    {
      if (ref[i].kind != FX_VALUE_TENSOR)
        continue;
      fx_same_report rep;
      if (got[i].kind != FX_VALUE_TENSOR)
        {
          g_snprintf (why, why_len, "no grad for input %zu", i);
          return FALSE;
        }
      const fx_tensor *r64 = ref64 && ref64[i].kind == FX_VALUE_TENSOR ? ref64[i].u.t : NULL;
      bool same = fx_same_tensor (ref[i].u.t, got[i].u.t, r64, &so, &rep);
      double mag = 0;
      for (int64_t k = 0; k < fx_tensor_numel (ref[i].u.t); k++)
        mag = fmax (mag, fabs (fx_tensor_get_f64 (ref[i].u.t, k)));
      *max_err = fmax (*max_err, rep.max_abs_err);
      /* grads grow step by step (tangents of ones): an absolute error says little, relative to the grad's size it
         compares across steps and graphs */
      *max_rel = fmax (*max_rel, rep.max_abs_err / fmax (mag, 1e-30));
      if (same && r64 != NULL)
        continue;
      /* fp32 gradients sum many terms: the absolute tolerance scales with the largest gradient (rtol 1e-3,
         atol 1e-4 of the largest magnitude) */
      double scale = fmax (1, mag);
      if (!fx_allclose (ref[i].u.t, got[i].u.t, 1e-3, 1e-4 * scale, false))
        {
          g_snprintf (why, why_len, "grad of input %zu: max abs error %.3g (reference %.6g, got %.6g at %lld)%s%s", i,
                      rep.max_abs_err, rep.worst_ref, rep.worst_res, (long long) rep.worst_index,
                      rep.message[0] ? "; " : "", rep.message);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
column_compile (const fxwb_column *col, const fxwb_train *t, const fxwb_inputs *in, train_col *c)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_arena *a = fx_arena_new ();
  const fx_backend *be = NULL;
  const char *sub = NULL;
  fx_status st = fx_backend_parse_spec (col->spec, a, &be, &sub, &diag);
  if (st == FX_OK && sub != NULL)
    st = fx_diag_set (&diag, FX_ERR_UNSUPPORTED, "'%s': a backend with a sub-backend is not supported with --train",
                      col->spec);
  fx_arena_free (a);
  if (st == FX_OK)
    st = fx_backend_compile (be, t->part.forward, in->inputs, in->n_inputs, col->mode, col->kv, col->n_kv, &c->fw,
                             &diag);
  /* the backward's example inputs: random ones from its placeholders' shapes (saved values, then tangents) */
  fx_arena *ba = fx_arena_new ();
  fx_value *bin = NULL;
  size_t nbin = 0;
  if (st == FX_OK)
    st = fx_inputs_make (t->part.backward, FX_INPUTS_SPEC, NULL, 0, NULL, ba, &bin, &nbin, &diag);
  if (st == FX_OK)
    st = fx_backend_compile (be, t->part.backward, bin, nbin, col->mode, col->kv, col->n_kv, &c->bw, &diag);
  clear_values (bin, nbin);
  fx_arena_free (ba);
  if (st != FX_OK)
    {
      g_strlcpy (c->error, diag.message, sizeof c->error);
      c->failed = TRUE;
    }
  return st == FX_OK;
}

static void
column_init (train_col *c, const fxwb_inputs *in, int steps)
{
  memset (c, 0, sizeof *c);
  c->params = g_new0 (fx_value, in->n_inputs + 1);
  for (size_t i = 0; i < in->n_inputs; i++)
    c->params[i] = dup_tensor (&in->inputs[i]);
  c->m = g_new0 (fx_tensor *, in->n_inputs + 1);
  c->v = g_new0 (fx_tensor *, in->n_inputs + 1);
  c->fw_ms = g_new0 (double, steps);
  c->bw_ms = g_new0 (double, steps);
}

static void
column_clear (train_col *c, size_t n_params)
{
  clear_values (c->params, n_params);
  for (size_t i = 0; i < n_params; i++)
    {
      if (c->m[i])
        fx_tensor_unref (c->m[i]);
      if (c->v[i])
        fx_tensor_unref (c->v[i]);
    }
  g_free (c->params);
  g_free (c->m);
  g_free (c->v);
  g_free (c->fw_ms);
  g_free (c->bw_ms);
  fx_compiled_free (c->fw);
  fx_compiled_free (c->bw);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (const double *v, int n)
{
  double *s = g_memdup2 (v, sizeof (double) * (size_t) n);
  qsort (s, (size_t) n, sizeof (double), cmp_double);
  double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  g_free (s);
  return m;
}

/* Progress on a terminal (not with --json): what runs (step 0: the compile), and how far the whole compare is. */
static void
progress (const fxwb_train_opts *o, const char *what, int step, double fraction)
{
  if (!fxwb_stderr_is_tty () || o->json)
    return;
  g_autofree char *label = step > 0 ? g_strdup_printf ("%s, step %d/%d", what, step, o->steps)
                                     : g_strdup_printf ("%s, compiling forward and backward", what);
  fxwb_progress (label, fraction);
}

static gboolean
all_finite (const fx_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    for (int64_t k = 0; v[i].kind == FX_VALUE_TENSOR && k < fx_tensor_numel (v[i].u.t); k++)
      if (!isfinite (fx_tensor_get_f64 (v[i].u.t, k)))
        return FALSE;
  return TRUE;
}

/* The joint graph's grads (n values, arena) on params and tangents, each floating one upcast to fp64 when upcast. */
static fx_status
joint_grads (const fxwb_train *t, const fx_value *params, size_t n, const fx_value *tangents, size_t n_tangents,
             gboolean upcast, fx_arena *arena, fx_value **grads, fx_diag *diag)
{
  fx_value *jin = g_new0 (fx_value, n + n_tangents + 1);
  for (size_t i = 0; i < n + n_tangents; i++)
    {
      const fx_value *v = i < n ? &params[i] : &tangents[i - n];
      jin[i] = upcast && is_param (v) ? fx_value_tensor (fx_tensor_to_dtype (NULL, v->u.t, FX_DTYPE_F64))
                                      : fx_value_dup (v, arena);
    }
  fx_value *out = NULL;
  size_t nout = 0;
  fx_status st = fx_interp_run (t->joint, jin, n + n_tangents, NULL, arena, &out, &nout, diag);
  clear_values (jin, n + n_tangents);
  g_free (jin);
  if (st != FX_OK)
    return st;
  *grads = out + nout - n;
  clear_values (out, nout - n);
  return FX_OK;
}

/* The reference for one step: the interpreter runs the joint graph on the column's current parameters (and on them
   upcast to fp64, same()'s reference; *ref64 NULL when that run fails). */
static fx_status
reference_step (const fxwb_train *t, const fx_value *params, size_t n, const fx_value *tangents, size_t n_tangents,
                fx_arena *arena, fx_value **ref, fx_value **ref64, fx_diag *diag)
{
  fx_status st = joint_grads (t, params, n, tangents, n_tangents, FALSE, arena, ref, diag);
  fx_diag d64;
  fx_diag_clear (&d64);
  if (st == FX_OK && joint_grads (t, params, n, tangents, n_tangents, TRUE, arena, ref64, &d64) != FX_OK)
    *ref64 = NULL;
  return st;
}

/* The column's steps. Each step's grads are checked against the reference on the same parameters, so rounding
   differences that the optimizer carries into later steps are not counted as wrong gradients; a step whose
   reference grads are not finite (the training diverged) ends the column unchecked from there. */
static void
run_column (const fxwb_train *t, const fxwb_inputs *in, const fx_value *tangents, size_t n_tangents,
            const fxwb_train_opts *o, train_col *c, const char *label, double done, double share)
{
  size_t n = in->n_inputs;
  for (int s = 0; s < o->steps && !c->failed && !c->diverged; s++)
    {
      progress (o, label, s + 1, done + share * s / o->steps);
      fx_arena *a = fx_arena_new ();
      fx_value *grads = NULL, *ref = NULL, *ref64 = NULL;
      fx_diag diag;
      fx_diag_clear (&diag);
      char why[1024];
      if (reference_step (t, c->params, n, tangents, n_tangents, a, &ref, &ref64, &diag) != FX_OK)
        ref = NULL, g_snprintf (why, sizeof why, "the interpreter failed on the joint graph: %s", diag.message);
      if (ref != NULL && all_finite (ref, n))
        c->steps_run = s + 1;
      if (ref == NULL || column_step (c, t, tangents, n_tangents, n, s, a, &grads, &diag) != FX_OK)
        {
          g_strlcpy (c->error, ref ? diag.message : why, sizeof c->error);
          c->failed = TRUE;
        }
      else if (!all_finite (ref, n))
        c->diverged = s + 1;
      else if (!check_grads (ref, ref64, grads, n, &c->max_err, &c->max_rel, why, sizeof why))
        {
          g_snprintf (c->error, sizeof c->error, "step %d: %s", s + 1, why);
          c->failed = TRUE;
        }
      else
        apply_grads (o, c, grads, n, s + 1);
      clear_values (grads, grads ? n : 0);
      clear_values (ref, ref ? n : 0);
      clear_values (ref64, ref64 ? n : 0);
      fx_arena_free (a);
    }
}

static void
print_train_table (const fxwb_column *cols, const train_col *c, size_t n_cols, const fxwb_train_opts *o,
                   const fxwb_train *t)
{
  printf ("training: %d steps, %s (lr %g), %zu values saved for backward\n", o->steps,
          o->optim == FXWB_OPTIM_ADAM ? "adam" : "sgd", o->lr, t->part.n_saved);
  printf ("%-14s  %12s  %12s  %12s  %-8s  %9s\n", "backend", "forward ms", "backward ms", "total ms", "grads",
          "rel error");
  for (size_t i = 0; i < n_cols; i++)
    {
      if (c[i].fw == NULL || c[i].bw == NULL || c[i].steps_run == 0)
        {
          printf ("%-14s  %12s  %12s  %12s  %-8s  %9s\n", cols[i].label, "-", "-", "-", "error", "-");
          continue;
        }
      double f = median (c[i].fw_ms, c[i].steps_run), b = median (c[i].bw_ms, c[i].steps_run);
      printf ("%-14s  %12.4f  %12.4f  %12.4f  %-8s  %9.2g\n", cols[i].label, f, b, f + b,
              c[i].failed ? "FAIL" : "pass", c[i].max_rel);
    }
  for (size_t i = 0; i < n_cols; i++)
    if (c[i].failed)
      printf ("\n%s: %s\n", cols[i].label, c[i].error);
    else if (c[i].diverged)
      printf ("\n%s: the training diverged: the reference's gradients are not finite at step %d; that step and the "
              "later ones are not checked (a smaller --lr keeps them finite)\n", cols[i].label, c[i].diverged);
}

static void
print_train_json (const fxwb_column *cols, const train_col *c, size_t n_cols, const fxwb_train_opts *o,
                  const fxwb_train *t)
{
  json_object *doc = json_object_new_object ();
  fxwb_json_add_int (doc, "steps", o->steps);
  fxwb_json_add_str (doc, "optimizer", o->optim == FXWB_OPTIM_ADAM ? "adam" : "sgd");
  fxwb_json_add_num (doc, "lr", o->lr);
  json_object *saved = json_object_new_array ();
  for (size_t i = 0; i < t->part.n_saved; i++)
    {
      json_object *sv = json_object_new_object ();
      fxwb_json_add_str (sv, "name", t->part.saved[i].name);
      fxwb_json_add_int (sv, "bytes", (int64_t) t->part.saved[i].bytes);
      fxwb_json_add_str (sv, "reason", t->part.saved[i].reason);
      json_object_array_add (saved, sv);
    }
  json_object_object_add (doc, "saved", saved);
  json_object *list = json_object_new_array ();
  for (size_t i = 0; i < n_cols; i++)
    {
      json_object *r = json_object_new_object ();
      gboolean ran = c[i].fw != NULL && c[i].bw != NULL && c[i].steps_run > 0;
      fxwb_json_add_str (r, "backend", cols[i].label);
      fxwb_json_add_num (r, "forward_median_ms", ran ? median (c[i].fw_ms, c[i].steps_run) : NAN);
      fxwb_json_add_num (r, "backward_median_ms", ran ? median (c[i].bw_ms, c[i].steps_run) : NAN);
      fxwb_json_add_str (r, "grads", !ran ? "error" : c[i].failed ? "fail" : "pass");
      fxwb_json_add_num (r, "max_abs_err", c[i].max_err);
      fxwb_json_add_num (r, "max_rel_err", c[i].max_rel);
      fxwb_json_add_int (r, "diverged_at_step", c[i].diverged);
      fxwb_json_add_str (r, "error", c[i].failed ? c[i].error : NULL);
      json_object_array_add (list, r);
    }
  json_object_object_add (doc, "runs", list);
  fxwb_json_print (doc);
}

int
fxwb_train_compare (const char *cmd, const fxwb_train *t, const fxwb_inputs *all_inputs, const fxwb_column *cols,
                    size_t n_cols, const fxwb_train_opts *o)
{
  /* the primals: a joint graph given as the source has inputs for its tangents too, which the steps make anew */
  fxwb_inputs primals = *all_inputs;
  primals.n_inputs = MIN (all_inputs->n_inputs, fx_graph_count_op (t->part.forward, FX_OP_PLACEHOLDER));
  const fxwb_inputs *in = &primals;
  size_t n_tangents = 0;
  fx_value *tangents = make_tangents (t->joint, &n_tangents);
  train_col *c = g_new0 (train_col, n_cols);
  gboolean any_failed = FALSE;
  for (size_t i = 0; i < n_cols; i++)
    {
      g_autofree char *label = g_strdup_printf ("%s (%zu/%zu)", cols[i].label, i + 1, n_cols);
      progress (o, label, 0, (double) i / (double) n_cols);
      column_init (&c[i], in, o->steps);
      if (column_compile (&cols[i], t, in, &c[i]))
        run_column (t, in, tangents, n_tangents, o, &c[i], label, (double) i / (double) n_cols,
                    1.0 / (double) n_cols);
      any_failed = any_failed || c[i].failed;
    }
  if (fxwb_stderr_is_tty () && !o->json)
    fxwb_progress_done ();
  if (o->json)
    print_train_json (cols, c, n_cols, o, t);
  else
    print_train_table (cols, c, n_cols, o, t);
  for (size_t i = 0; i < n_cols; i++)
    column_clear (&c[i], in->n_inputs);
  g_free (c);
  clear_values (tangents, n_tangents);
  g_free (tangents);
  return any_failed ? FXWB_EXIT_FAILURE : FXWB_EXIT_OK;
}
