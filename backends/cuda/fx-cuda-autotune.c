/* fx-cuda-autotune.c: timing with CUDA events (median of repetitions, the L2 flushed in between) and max-autotune's
   choice among kernel configurations, with the AUTOTUNE table PyTorch prints. */
#include "fx-cuda-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CU (fx_cuda_libs_driver ()->cu)

static int
cmp_float (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return x < y ? -1 : x > y;
}

fx_status
fx_cuda_bench (fx_cuda *cuda, fx_cuda_stream *stream, fx_cuda_bench_fn fn, void *ctx,
               const fx_cuda_bench_options *options, float *median_ms, fx_diag *diag)
{
  fx_cuda_stream *s = stream ? stream : cuda->default_stream;
  int warmup = options && options->warmup > 0 ? options->warmup : 3;
  int reps = options && options->reps > 0 ? options->reps : 20;
  bool flush = !(options && options->keep_l2);
  size_t flush_bytes = (size_t) (cuda->info.l2_bytes > 0 ? cuda->info.l2_bytes : 1 << 20) * 2;
  fx_cuda_ptr flush_buf = 0;
  fx_CUevent *events = NULL;
  float *ms = NULL;
  int n_events = 0;
  fx_status st;

  *median_ms = INFINITY;
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return st;
  events = calloc ((size_t) reps * 2, sizeof *events);
  ms = calloc ((size_t) reps, sizeof *ms);
  if (!events || !ms)
    {
      st = fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
      goto out;
    }
  for (; n_events < reps * 2; n_events++)
    if ((st = fx_cuda_check (CU.cuEventCreate (&events[n_events], FX_CU_EVENT_DEFAULT), "cuEventCreate", diag))
        != FX_OK)
      goto out;
  if (flush && (st = fx_cuda_malloc (cuda, flush_bytes, s, &flush_buf, diag)) != FX_OK)
    goto out;
  for (int i = 0; i < warmup; i++)
    if ((st = fn (ctx, s, diag)) != FX_OK)
      goto out;
  for (int i = 0; i < reps; i++)
    {
      if (flush && (st = fx_cuda_memset (cuda, s, flush_buf, (unsigned char) i, flush_bytes, diag)) != FX_OK)
        goto out;
      if ((st = fx_cuda_check (CU.cuEventRecord (events[2 * i], s->stream), "cuEventRecord", diag)) != FX_OK
          || (st = fn (ctx, s, diag)) != FX_OK
          || (st = fx_cuda_check (CU.cuEventRecord (events[2 * i + 1], s->stream), "cuEventRecord", diag)) != FX_OK)
        goto out;
    }
  for (int i = 0; i < reps; i++)
    {
      if ((st = fx_cuda_check (CU.cuEventSynchronize (events[2 * i + 1]), "cuEventSynchronize", diag)) != FX_OK
          || (st = fx_cuda_check (CU.cuEventElapsedTime (&ms[i], events[2 * i], events[2 * i + 1]),
                                  "cuEventElapsedTime", diag)) != FX_OK)
        goto out;
    }
  qsort (ms, (size_t) reps, sizeof *ms, cmp_float);
  *median_ms = reps % 2 ? ms[reps / 2] : 0.5f * (ms[reps / 2 - 1] + ms[reps / 2]);

out:
  /* A failed call may have left work queued: let it finish before the events and the buffer go. */
  CU.cuStreamSynchronize (s->stream);
  for (int i = 0; i < n_events; i++)
    CU.cuEventDestroy (events[i]);
  fx_cuda_free (cuda, flush_buf);
  free (events);
  free (ms);
  return st;
}

void
fx_cuda_autotune_result_clear (fx_cuda_autotune_result *result)
{
  if (!result)
    return;
  free (result->ms);
  free (result->table);
  memset (result, 0, sizeof *result);
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Python's format(x, ".1%") */
static void
format_percent (double x, char *out, size_t out_size)
{
  if (isinf (x) || isnan (x))
    snprintf (out, out_size, "%s%%", isnan (x) ? "nan" : (x > 0 ? "inf" : "-inf"));
  else
    snprintf (out, out_size, "%.1f%%", x * 100.0);
}

fx_status
fx_cuda_autotune (fx_cuda *cuda, fx_cuda_stream *stream, const char *title, const char *strides, const char *dtypes,
                  const fx_cuda_autotune_choice *choices, size_t n_choices, const fx_cuda_bench_options *options,
                  double precompile_seconds, fx_cuda_autotune_result *result, fx_diag *diag)
{
  double t0 = now_s ();
  char **errors = NULL;
  size_t *order = NULL;
  fx_buf table;
  fx_diag first_error;
  bool any = false;
  fx_status st = FX_OK;

  memset (result, 0, sizeof *result);
  fx_diag_clear (&first_error);
  if (n_choices == 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "autotune %s without choices", title ? title : "");
  result->ms = calloc (n_choices, sizeof *result->ms);
  errors = calloc (n_choices, sizeof *errors);
  order = calloc (n_choices, sizeof *order);
  if (!result->ms || !errors || !order)
    {
      st = fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
      goto out;
    }
  result->n = n_choices;
  for (size_t i = 0; i < n_choices; i++)
    {
      fx_diag d;
      fx_diag_clear (&d);
      if (fx_cuda_bench (cuda, stream, choices[i].fn, choices[i].ctx, options, &result->ms[i], &d) != FX_OK)
        {
          result->ms[i] = INFINITY;
          errors[i] = strdup (d.message);
          if (first_error.code == FX_OK)
            first_error = d;
          continue;
        }
      if (!any || result->ms[i] < result->ms[result->best])
        result->best = i;
      any = true;
    }
  result->bench_seconds = now_s () - t0;
  if (!any)
    {
      st = fx_diag_set (diag, FX_ERR_BACKEND, "autotune %s: no choice ran (%s)", title ? title : "",
                        first_error.message);
      goto out;
    }

  /* Fastest first; ties keep the choices' order (insertion sort is stable). */
  for (size_t i = 0; i < n_choices; i++)
    {
      size_t j = i;
      order[i] = i;
      while (j > 0 && result->ms[order[j - 1]] > result->ms[order[j]])
        {
          size_t tmp = order[j - 1];
          order[j - 1] = order[j];
          order[j] = tmp;
          j--;
        }
    }
  fx_buf_init (&table);
  fx_buf_printf (&table, "AUTOTUNE %s\n", title ? title : "");
  fx_buf_printf (&table, "strides: %s\n", strides ? strides : "");
  fx_buf_printf (&table, "dtypes: %s\n", dtypes ? dtypes : "");
  for (size_t r = 0; r < n_choices && r < 10; r++)
    {
      size_t i = order[r];
      char pct[32];
      format_percent ((double) result->ms[result->best] / result->ms[i], pct, sizeof pct);
      if (isinf (result->ms[i]))
        fx_buf_printf (&table, "  %s inf ms %s %s\n", choices[i].name, pct, errors[i] ? errors[i] : "");
      else
        fx_buf_printf (&table, "  %s %.4f ms %s %s\n", choices[i].name, result->ms[i], pct,
                       choices[i].description ? choices[i].description : "");
    }
  fx_buf_printf (&table, "SingleProcess AUTOTUNE benchmarking takes %.4f seconds and %.4f seconds precompiling for "
                 "%zu choices\n", result->bench_seconds, precompile_seconds, n_choices);
  result->table = fx_buf_steal (&table);

out:
  if (errors)
    for (size_t i = 0; i < n_choices; i++)
      free (errors[i]);
  free (errors);
  free (order);
  if (st != FX_OK)
    {
      free (result->ms);
      memset (result, 0, sizeof *result);
    }
  return st;
}
