/* fx-run.c: a timed run of one backend configuration: parse the backend spec ("inductor", "torch:inductor",
   "inductor|eager"), compile, warm up, time N calls (median/min/max), measure peak memory, and check the outputs
   against the reference with same(). Errors never escape as return values: they land in the result. */
#include "registry/fx-registry.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Composed backends made from "a|b" specs live for the process (compiled objects point at them). */
static pthread_mutex_t composed_lock = PTHREAD_MUTEX_INITIALIZER;
static fx_backend *composed[32];
static size_t n_composed;

static const fx_backend *
composed_backend (const char *spec, fx_diag *diag)
{
  pthread_mutex_lock (&composed_lock);
  for (size_t i = 0; i < n_composed; i++)
    if (strcmp (composed[i]->name, spec) == 0)
      {
        pthread_mutex_unlock (&composed_lock);
        return composed[i];
      }
  char *copy = strdup (spec);
  const char *chain[16];
  size_t n = 0;
  char *save = NULL;
  for (char *p = strtok_r (copy, "|", &save); p && n < 16; p = strtok_r (NULL, "|", &save))
    chain[n++] = p;
  fx_backend *b = NULL;
  for (size_t i = 0; i < n; i++)
    if (fx_backend_lookup (chain[i], diag) == NULL)
      goto out;
  if (n_composed == sizeof composed / sizeof composed[0])
    {
      fx_diag_set (diag, FX_ERR_INVALID, "too many composed backends");
      goto out;
    }
  b = fx_backend_new_fallback (spec, chain, n, false);
  composed[n_composed++] = b;
out:
  free (copy);
  pthread_mutex_unlock (&composed_lock);
  return b;
}

fx_status
fx_backend_parse_spec (const char *spec, fx_arena *arena, const fx_backend **backend, const char **sub_backend,
                       fx_diag *diag)
{
  *backend = NULL;
  *sub_backend = NULL;
  if (spec == NULL || *spec == '\0')
    return fx_diag_set (diag, FX_ERR_INVALID, "no backend given");
  if (strchr (spec, '|'))
    {
      *backend = composed_backend (spec, diag);
      return *backend ? FX_OK : diag->code;
    }
  const char *colon = strchr (spec, ':');
  if (colon)
    {
      char *name = fx_arena_strndup (arena, spec, (size_t) (colon - spec));
      *backend = fx_backend_lookup (name, diag);
      if (*backend == NULL)
        return diag->code;
      if (colon[1] == '\0')
        return fx_diag_set (diag, FX_ERR_INVALID, "backend spec '%s': nothing after ':'", spec);
      bool takes_sub = false;
      for (size_t i = 0; i < (*backend)->n_options; i++)
        if (strcmp ((*backend)->options[i].name, "backend") == 0)
          takes_sub = true;
      if (!takes_sub)
        return fx_diag_set (diag, FX_ERR_INVALID, "backend '%s' runs no other backend ('%s' has a ':' part)",
                            name, spec);
      *sub_backend = fx_arena_strdup (arena, colon + 1);
      return FX_OK;
    }
  *backend = fx_backend_lookup (spec, diag);
  return *backend ? FX_OK : diag->code;
}

static void
set_error (fx_run_result *r, fx_status st, const fx_diag *diag)
{
  r->status = st == FX_OK ? FX_ERR_BACKEND : st;
  char prefix[160];
  snprintf (prefix, sizeof prefix, "node '%s'", diag->node);
  if (diag->node[0] && strstr (diag->message, prefix) == NULL)
    snprintf (r->error, sizeof r->error, "node '%s': %s", diag->node, diag->message);
  else
    snprintf (r->error, sizeof r->error, "%s", diag->message[0] ? diag->message : fx_status_name (r->status));
  r->verdict = FX_VERDICT_ERROR;
}

static void
clear_values (fx_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fx_value_clear (&v[i]);
}

/* The options a result shows: those the user set (a mode's settings are shown by the mode's name), read from the
   set the compile resolved. skip: an option set by the spec ("torch:inductor" sets `backend`), not by the user. */
static void
format_user_options (const fx_compiled *c, const char *skip, fx_buf *out)
{
  const fx_options *o = c->options;
  bool by_mode = c->mode && strcmp (c->mode, "default") != 0;
  fx_buf_putc (out, '{');
  size_t shown = 0;
  for (size_t i = 0; o && !by_mode && i < o->n; i++)
    {
      if (!o->explicit_set || !o->explicit_set[i] || (skip && strcmp (o->items[i].name, skip) == 0))
        continue;
      fx_options one = { .items = &o->items[i], .n = 1, .explicit_set = NULL };
      fx_buf item;
      fx_buf_init (&item);
      fx_options_format (&one, false, &item);
      /* "{'k': v}" → "'k': v" */
      if (item.len >= 2)
        fx_buf_printf (out, "%s%.*s", shown++ ? ", " : "", (int) item.len - 2, item.data + 1);
      fx_buf_free (&item);
    }
  fx_buf_putc (out, '}');
}

static void
init_result (const fx_value *inputs, size_t n_inputs, const fx_run_config *config, fx_run_result *result)
{
  memset (result, 0, sizeof *result);
  result->compile_ms = result->median_ms = result->min_ms = result->max_ms = NAN;
  result->max_abs_err = result->max_rel_err = NAN;
  result->warmup = config->warmup < 0 ? 1 : config->warmup;
  result->repeat = config->repeat <= 0 ? 10 : config->repeat;
  snprintf (result->backend, sizeof result->backend, "%s", config->backend ? config->backend : "");
  snprintf (result->mode, sizeof result->mode, "%s", config->mode ? config->mode : "default");
  snprintf (result->device, sizeof result->device, "cpu");
  for (size_t i = 0; i < n_inputs; i++)
    if (inputs[i].kind == FX_VALUE_TENSOR && inputs[i].u.t)
      {
        fx_buf d;
        fx_buf_init (&d);
        fx_device_format (inputs[i].u.t->device, &d);
        snprintf (result->device, sizeof result->device, "%s", d.data ? d.data : "cpu");
        fx_buf_free (&d);
        break;
      }
}

/* same() of one call's outputs against the reference (and the fp64 run); no reference: not checked. */
/* The run's accuracy policy, PyTorch's: same() against the fp64 run with the TF32 state of the run (off: neither
   our GEMMs nor torch's default allow TF32). PyTorch's reference is eager on the run's own device, so its fp32 GEMMs
   err as much as the result's; ours is the interpreter on the CPU, whose BLAS is about 2.4x closer to fp64 than
   cuBLAS on fp32 GEMMs (mlp_block at full shape, torch 2.11 on the H200: RMSE 0.001491 on the GPU, 0.000631 on the
   CPU). A GPU result of a graph with a GEMM is therefore judged with same()'s largest multiplier (10), which
   torch's own GPU result needs as well; everything else with the multipliers same() picks. */
typedef struct accuracy_policy
{
  bool gpu_gemm;
} accuracy_policy;

static bool
graph_has_gemm (const fx_graph *g)
{
  for (const fx_node *n = g ? g->first : NULL; n; n = n->next)
    {
      if (n->erased || n->op != FX_OP_CALL_FUNCTION)
        continue;
      /* a graph as loaded may not have its ops resolved yet */
      int id = n->target.op_id >= 0 ? n->target.op_id : n->target.name ? fx_op_lookup (n->target.name) : -1;
      if (id == FX_OP_MM || id == FX_OP_ADDMM || id == FX_OP_BMM || id == FX_OP_BADDBMM || id == FX_OP_LINEAR
          || id == FX_OP_CONVOLUTION)
        return true;
    }
  return false;
}

static bool
runs_on_cuda (const fx_compiled *c, const fx_run_config *config, const fx_value *inputs, size_t n_inputs)
{
  for (size_t i = 0; i < n_inputs; i++)
    if (inputs[i].kind == FX_VALUE_TENSOR && inputs[i].u.t && inputs[i].u.t->device.type == FX_DEVICE_CUDA)
      return true;
  for (size_t k = 0; c && k < c->n_kernels; k++)
    if (c->kernels[k].device.type == FX_DEVICE_CUDA)
      return true;
  for (size_t i = 0; config && i < config->n_options; i++)
    if (strcmp (config->options[i].key, "device") == 0 && config->options[i].value
        && strstr (config->options[i].value, "cuda"))
      return true;
  return false;
}

static void
check_outputs (const fx_value *ref, const fx_value *fp64_ref, size_t n_ref, const fx_value *res, size_t n_res,
               const accuracy_policy *policy, fx_run_result *result)
{
  if (ref == NULL || n_ref == 0)
    {
      result->verdict = FX_VERDICT_NOT_CHECKED;
      return;
    }
  fx_same_opts so;
  fx_same_opts_init (&so);
  so.force_max_multiplier = policy && policy->gpu_gemm;
  fx_same_report rep;
  memset (&rep, 0, sizeof rep);
  if (n_res != n_ref)
    {
      result->verdict = FX_VERDICT_FAIL;
      snprintf (result->accuracy_report, sizeof result->accuracy_report, "returned %zu outputs, the reference has %zu",
                n_res, n_ref);
      return;
    }
  bool ok = fx_same_values (ref, res, fp64_ref, n_ref, &so, &rep);
  result->verdict = ok ? FX_VERDICT_PASS : FX_VERDICT_FAIL;
  result->max_abs_err = rep.max_abs_err;
  result->max_rel_err = rep.max_rel_err;
  snprintf (result->accuracy_report, sizeof result->accuracy_report, "%.440s%s", rep.message,
            ok || !so.force_max_multiplier ? "" : " (a GEMM on the GPU: same()'s largest multiplier; TF32 off)");
}

/* Timed calls and the accuracy check of a compiled object; result already initialized. */
static void
run_compiled (fx_compiled *c, const fx_value *inputs, size_t n_inputs, const fx_value *ref, const fx_value *fp64_ref,
              size_t n_ref, const char *skip_option, const accuracy_policy *policy, fx_arena *arena,
              fx_value **outputs, size_t *n_outputs, fx_run_result *result)
{
  int warmup = result->warmup, repeat = result->repeat;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_value *res = NULL;
  size_t n_res = 0;
  double *times = NULL;
  fx_status st = FX_OK;
  result->compile_ms = c->compile_ms;
  result->n_kernels = c->n_kernels;
  {
    fx_buf ob;
    fx_buf_init (&ob);
    format_user_options (c, skip_option, &ob);
    snprintf (result->options, sizeof result->options, "%s", ob.data ? ob.data : "{}");
    fx_buf_free (&ob);
  }

  times = calloc ((size_t) repeat, sizeof (double));
  fx_allocator *alloc = fx_allocator_default ();
  bool timed = false;
  if (c->backend->bench && !c->released)
    {
      size_t peak = 0;
      fx_diag bd;
      fx_diag_clear (&bd);
      st = c->backend->bench (c, inputs, n_inputs, warmup, repeat, arena, times, &res, &n_res, &peak, &bd);
      if (st == FX_OK)
        {
          timed = true;
          result->peak_bytes = peak;
          snprintf (result->timing, sizeof result->timing, "%s",
                    c->timing ? c->timing : "timed by the backend");
        }
      else if (st != FX_ERR_UNSUPPORTED)
        {
          diag = bd;
          goto fail;
        }
      st = FX_OK;
    }
  result->verdict = FX_VERDICT_NOT_CHECKED;
  if (!timed)
    {
      snprintf (result->timing, sizeof result->timing, "wall clock of each call");
      for (int i = 0; i < warmup + repeat; i++)
        {
          clear_values (res, n_res);
          res = NULL;
          n_res = 0;
          if (i == warmup)
            fx_allocator_reset_peak (alloc);
          size_t live_before = alloc->live_bytes;
          double t0 = fx_now_ms ();
          st = fx_compiled_run (c, inputs, n_inputs, arena, &res, &n_res, &diag);
          double t1 = fx_now_ms ();
          if (st != FX_OK)
            goto fail;
          /* The first call is the one the reference matches: random ops draw from a generator both start from the
             same seed. Checked at once: a CUDA graph's next replay overwrites these outputs. */
          if (i == 0)
            check_outputs (ref, fp64_ref, n_ref, res, n_res, policy, result);
          if (i >= warmup)
            {
              times[i - warmup] = t1 - t0;
              size_t extra = alloc->peak_bytes > live_before ? alloc->peak_bytes - live_before : 0;
              if (extra > result->peak_bytes)
                result->peak_bytes = extra;
            }
        }
    }
  else
    check_outputs (ref, fp64_ref, n_ref, res, n_res, policy, result);
  qsort (times, (size_t) repeat, sizeof (double), cmp_double);
  result->min_ms = times[0];
  result->max_ms = times[repeat - 1];
  result->median_ms = repeat % 2 ? times[repeat / 2] : (times[repeat / 2 - 1] + times[repeat / 2]) / 2;
  result->status = FX_OK;
  goto done;

fail:
  set_error (result, st, &diag);
done:
  if (outputs && result->status == FX_OK)
    {
      *outputs = res;
      *n_outputs = n_res;
    }
  else
    clear_values (res, n_res);
  free (times);
}

void
fx_run_compiled (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, const fx_run_config *config,
                 const fx_value *ref, const fx_value *fp64_ref, size_t n_ref, fx_arena *arena, fx_value **outputs,
                 size_t *n_outputs, fx_run_result *result)
{
  init_result (inputs, n_inputs, config, result);
  if (outputs)
    {
      *outputs = NULL;
      *n_outputs = 0;
    }
  if (compiled == NULL)
    {
      fx_diag diag;
      fx_diag_clear (&diag);
      fx_diag_set (&diag, FX_ERR_INVALID, "run of a graph that did not compile");
      set_error (result, FX_ERR_INVALID, &diag);
      return;
    }
  /* no graph here: a GEMM on the GPU is seen in the kernel list (extern_kernels.mm, .addmm, .bmm on a CUDA device) */
  accuracy_policy policy = { false };
  for (size_t k = 0; k < compiled->n_kernels; k++)
    policy.gpu_gemm |= compiled->kernels[k].device.type == FX_DEVICE_CUDA
                       && strcmp (compiled->kernels[k].kind, "extern") == 0 && strstr (compiled->kernels[k].name, "mm");
  run_compiled (compiled, inputs, n_inputs, ref, fp64_ref, n_ref, NULL, &policy, arena, outputs, n_outputs, result);
}

void
fx_run_backend (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, const fx_run_config *config,
                const fx_value *ref, const fx_value *fp64_ref, size_t n_ref, fx_arena *arena, fx_value **outputs,
                size_t *n_outputs, fx_compiled **compiled, fx_run_result *result)
{
  init_result (inputs, n_inputs, config, result);
  if (outputs)
    {
      *outputs = NULL;
      *n_outputs = 0;
    }
  if (compiled)
    *compiled = NULL;

  fx_diag diag;
  fx_diag_clear (&diag);
  fx_arena *scratch = fx_arena_new ();
  const fx_backend *backend = NULL;
  const char *sub = NULL;
  fx_compiled *c = NULL;
  /* a graph that writes into its inputs runs on its own copy of them: the next column starts from the same values */
  fx_value *own = fx_inputs_for_run (graph, inputs, n_inputs);
  if (own)
    inputs = own;
  fx_status st = fx_backend_parse_spec (config->backend, scratch, &backend, &sub, &diag);
  if (st == FX_OK)
    {
      /* "torch:inductor" is the torch backend with backend='inductor' in front of the user's options. */
      size_t n_kv = config->n_options + (sub ? 1 : 0);
      fx_option_kv *kv = fx_arena_alloc (scratch, sizeof (fx_option_kv) * (n_kv + 1));
      size_t k = 0;
      if (sub)
        {
          kv[k].key = "backend";
          kv[k].value = sub;
          k++;
        }
      for (size_t i = 0; i < config->n_options; i++)
        kv[k++] = config->options[i];
      st = fx_backend_compile (backend, graph, inputs, n_inputs, config->mode, kv, n_kv, &c, &diag);
    }
  if (st != FX_OK)
    set_error (result, st, &diag);
  else
    {
      accuracy_policy policy = { runs_on_cuda (c, config, inputs, n_inputs) && graph_has_gemm (graph) };
      if (runs_on_cuda (c, config, inputs, n_inputs))
        snprintf (result->device, sizeof result->device, "cuda");
      run_compiled (c, inputs, n_inputs, ref, fp64_ref, n_ref, sub ? "backend" : NULL, &policy, arena, outputs,
                    n_outputs, result);
    }
  if (compiled)
    *compiled = c;
  else
    fx_compiled_free (c);
  fx_inputs_for_run_free (own, n_inputs);
  fx_arena_free (scratch);
}
