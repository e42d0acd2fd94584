/* fxwb-cmd-compare.c: `fxwb compare FILE|WORKSPACE:COMPILE --backend A --backend B ...`: the same graph and inputs
   through several backend/mode/option columns, side by side: compile ms, median ms, speedup against the first
   column, accuracy verdict and max error, kernel count; per-kernel times with --kernels; --json. With --train:
   training steps (forward, backward, optimizer update) per column, forward and backward timed apart. */
#include "fxwb-train.h"

#include <math.h>
#include <string.h>

static void
print_table (const fxwb_source *src, const fxwb_inputs *in, const fxwb_column_run *runs, size_t n,
             const fxwb_run_opts *o)
{
  printf ("graph: %s (%zu nodes, %zu inputs, seed %" G_GINT64_FORMAT "), %d timed calls after %d warm-up\n",
          src->label, src->graph->n_nodes, in->n_inputs, o->seed, o->repeat, o->warmup);
  if (!in->ref)
    printf ("reference: none, the interpreter cannot run this graph (%s)\n", in->ref_error);
  int w = 7;
  for (size_t i = 0; i < n; i++)
    if ((int) strlen (runs[i].result.backend) > w)
      w = (int) strlen (runs[i].result.backend);
  printf ("%-*s  %-26s  %11s  %10s  %8s  %-11s  %9s  %7s\n", w, "backend", "mode / options", "compile ms", "median ms",
          "speedup", "accuracy", "max error", "kernels");
  double base = runs[0].result.status == FX_OK ? runs[0].result.median_ms : NAN;
  for (size_t i = 0; i < n; i++)
    {
      const fx_run_result *r = &runs[i].result;
      g_autofree char *mo = NULL;
      if (strcmp (r->mode, "default") != 0)
        mo = g_strdup (r->mode);
      else
        mo = g_strdup (r->options[0] && strcmp (r->options, "{}") != 0 ? r->options : "default");
      if (strlen (mo) > 26)
        strcpy (mo + 23, "...");
      if (r->status != FX_OK)
        {
          printf ("%-*s  %-26s  %11s  %10s  %8s  %-11s  %9s  %7s\n", w, r->backend, mo, "-", "-", "-", "error", "-",
                  "-");
          continue;
        }
      char speed[32] = "-", err[32] = "-";
      if (isfinite (base) && r->median_ms > 0)
        g_snprintf (speed, sizeof speed, "%.2fx", base / r->median_ms);
      if (r->verdict == FX_VERDICT_PASS || r->verdict == FX_VERDICT_FAIL)
        g_snprintf (err, sizeof err, "%.2g", r->max_abs_err);
      printf ("%-*s  %-26s  %11.2f  %10.4f  %8s  %-11s  %9s  %7zu\n", w, r->backend, mo, r->compile_ms, r->median_ms,
              speed, fx_verdict_name (r->verdict), err, r->n_kernels);
    }
  /* what each median is the median of: on a GPU, CUDA events around the call with the inputs already there */
  printf ("\n");
  for (size_t i = 0; i < n; i++)
    if (runs[i].result.status == FX_OK && runs[i].result.timing[0])
      printf ("timed: %-*s  %s\n", w, runs[i].result.backend, runs[i].result.timing);
  for (size_t i = 0; i < n; i++)
    {
      const fx_run_result *r = &runs[i].result;
      if (r->status != FX_OK)
        printf ("\n%s failed (%s):\n%s\n", r->backend, fx_status_name (r->status), r->error);
      else if (r->verdict == FX_VERDICT_FAIL)
        printf ("\n%s does not match the interpreter: %s\n", r->backend, r->accuracy_report);
    }
  if (o->kernels)
    for (size_t i = 0; i < n; i++)
      if (runs[i].compiled && runs[i].compiled->n_kernels)
        {
          printf ("\nkernels of %s:\n", runs[i].result.backend);
          fxwb_print_kernels (runs[i].compiled);
        }
}

/* --train: the partition of the (scaled) graph, then the training steps of every column. */
static int
compare_train (const fxwb_source *src, const fxwb_run_opts *o, const fxwb_column *cols, size_t n,
               const fxwb_train_opts *to, fx_partition_kind kind)
{
  fxwb_inputs in;
  if (o->workspace || src->store)
    fprintf (stderr, "fxwb compare: note: training runs are not stored in a workspace (yet)\n");
  int rc = fxwb_inputs_make_only ("fxwb compare", src, o, &in);
  fxwb_train t;
  if (rc == FXWB_EXIT_OK)
    rc = fxwb_train_prepare ("fxwb compare", src->graph, kind, &t);
  if (rc == FXWB_EXIT_OK)
    {
      if (!o->json)
        printf ("graph: %s (%zu nodes, %zu inputs, seed %" G_GINT64_FORMAT "), %s partition\n", src->label,
                src->graph->n_nodes, in.n_inputs, o->seed, fx_partition_kind_name (kind));
      rc = fxwb_train_compare ("fxwb compare", &t, &in, cols, n, to);
      fxwb_train_clear (&t);
    }
  fxwb_inputs_clear (&in);
  return rc;
}

int
fxwb_cmd_compare (int argc, char **argv)
{
  g_auto (fxwb_run_opts) o;
  fxwb_run_opts_init (&o);
  g_auto (GStrv) backends = NULL;
  gboolean train = FALSE;
  g_autofree char *partition = NULL, *optimizer = NULL;
  fxwb_train_opts to = { .steps = 3, .optim = FXWB_OPTIM_SGD, .lr = 0.001 };
  GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING_ARRAY, &backends,
      "A column (repeatable; default: eager, aot_eager, inductor)", "SPEC" },
    { "train", 't', 0, G_OPTION_ARG_NONE, &train,
      "Training steps instead of inference: each column compiles the forward and backward graphs of the joint "
      "graph's partition and runs forward, backward (tangents of ones) and an optimizer update; forward and "
      "backward are timed apart and every step's gradients are checked against the interpreter", NULL },
    { "steps", 0, 0, G_OPTION_ARG_INT, &to.steps, "With --train: training steps (default 3)", "N" },
    { "optimizer", 0, 0, G_OPTION_ARG_STRING, &optimizer, "With --train: sgd (default) or adam", "NAME" },
    { "lr", 0, 0, G_OPTION_ARG_DOUBLE, &to.lr, "With --train: the learning rate (default 0.001; larger steps let fp32 rounding differences between backends grow past the gradient check's tolerance after a few steps)", "LR" },
    { "partition", 0, 0, G_OPTION_ARG_STRING, &partition, "With --train: min-cut (default) or save-all", "KIND" },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_run_opts_context_new ("fxwb compare",
                                 "FILE|WORKSPACE:COMPILE - compare backends side by side", entries,
                                 "Runs the graph on the same inputs with every --backend column and prints them side\n"
                                 "by side; the first column is the baseline of the speedups. --mode and --option\n"
                                 "apply to every column; a column's own @MODE and ,KEY=VALUE to it alone.\n"
                                 "Example: fxwb compare g.py -b eager -b aot_eager -b inductor -b inductor@max-autotune\n"
                                 "Training: fxwb compare g.py --train -b eager -b inductor --steps 5 --optimizer adam",
                                 &o);
  int parse_rc = fxwb_run_opts_parse (context, &argc, &argv, &o, "one graph at a time");
  if (parse_rc != FXWB_EXIT_OK)
    return parse_rc;
  fx_partition_kind pkind = FX_PARTITION_MIN_CUT;
  if (!train && (partition || optimizer))
    return fxwb_usage_error (context, "--partition and --optimizer need --train");
  if (partition && !fx_partition_kind_from_name (partition, &pkind))
    return fxwb_usage_error (context, "--partition takes min-cut or save-all");
  if (optimizer && strcmp (optimizer, "sgd") != 0 && strcmp (optimizer, "adam") != 0)
    return fxwb_usage_error (context, "--optimizer takes sgd or adam");
  if (train && to.steps < 1)
    return fxwb_usage_error (context, "--steps must be >= 1");
  to.optim = optimizer && strcmp (optimizer, "adam") == 0 ? FXWB_OPTIM_ADAM : FXWB_OPTIM_SGD;
  to.json = o.json;
  static const char *const default_columns[] = { "eager", "aot_eager", "inductor", NULL };
  const char *const *specs = backends ? (const char *const *) backends : default_columns;
  size_t n = 0;
  while (specs[n])
    n++;
  fxwb_column *cols = g_new0 (fxwb_column, n);
  int rc = FXWB_EXIT_OK;
  size_t n_parsed = 0;
  for (; n_parsed < n && rc == FXWB_EXIT_OK; n_parsed++)
    if (!fxwb_column_parse ("fxwb compare", specs[n_parsed], &o, &cols[n_parsed])
        || !fxwb_column_validate ("fxwb compare", &cols[n_parsed]))
      rc = FXWB_EXIT_USAGE;
  g_auto (fxwb_source) src = { 0 };
  fxwb_inputs in;
  memset (&in, 0, sizeof in);
  fxwb_column_run *runs = g_new0 (fxwb_column_run, n);
  if (rc == FXWB_EXIT_OK)
    rc = fxwb_source_load ("fxwb compare", argv[1], &o, &src);
  if (rc == FXWB_EXIT_OK && train)
    {
      rc = compare_train (&src, &o, cols, n, &to, pkind);
      for (size_t i = 0; i < n_parsed; i++)
        fxwb_column_clear (&cols[i]);
      g_free (cols);
      g_free (runs);
      return rc;
    }
  if (rc == FXWB_EXIT_OK)
    rc = fxwb_inputs_make ("fxwb compare", &src, &o, &in);
  gboolean any_failed = FALSE;
  for (size_t i = 0; rc == FXWB_EXIT_OK && i < n; i++)
    {
      if (fxwb_stderr_is_tty () && !o.json)
        {
          g_autofree char *label = g_strdup_printf ("%s (%zu/%zu)", cols[i].label, i + 1, n);
          fxwb_progress (label, (double) i / (double) n);
        }
      /* Stored as started first: a compare killed in a slow column leaves that column marked incomplete. */
      int64_t run_id = 0;
      if (!o.no_store && (rc = fxwb_store_run_start ("fxwb compare", &src, &cols[i], &run_id)) != FXWB_EXIT_OK)
        break;
      fxwb_column_run_exec (&src, &in, &cols[i], &o, &runs[i]);
      if (runs[i].result.status != FX_OK || runs[i].result.verdict == FX_VERDICT_FAIL)
        any_failed = TRUE;
      if (!o.no_store)
        rc = fxwb_store_run ("fxwb compare", &src, &in, &o, &runs[i], run_id);
      fxwb_column_run_drop_outputs (&runs[i]);
      /* its worker process, device memory and loaded code go now (the kernel list stays for the table): the next
         column is timed with no earlier column's processes or threads alive beside it */
      fx_compiled_release_runtime (runs[i].compiled);
    }
  if (fxwb_stderr_is_tty () && !o.json)
    fxwb_progress_done ();
  if (rc == FXWB_EXIT_OK)
    {
      if (o.json)
        {
          json_object *list = json_object_new_array ();
          for (size_t i = 0; i < n; i++)
            json_object_array_add (list, fxwb_run_result_json (&runs[i].result));
          fxwb_json_print (list);
        }
      else
        {
          print_table (&src, &in, runs, n, &o);
          if (src.store)
            printf ("\nstored %zu runs in %s\n", n, src.store_path);
        }
      if (any_failed)
        rc = FXWB_EXIT_FAILURE;
    }
  for (size_t i = 0; i < n; i++)
    fxwb_column_run_clear (&runs[i]);
  g_free (runs);
  for (size_t i = 0; i < n_parsed; i++)
    fxwb_column_clear (&cols[i]);
  g_free (cols);
  fxwb_inputs_clear (&in);
  return rc;
}
