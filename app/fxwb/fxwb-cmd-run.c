/* fxwb-cmd-run.c: `fxwb run FILE|WORKSPACE:COMPILE --backend B [--mode M] [--option k=v]...`: compile the graph
   with one backend, time it, check it against the interpreter and (optionally) store the run. */
#include "fxwb-runs.h"

#include <math.h>
#include <string.h>

static void
print_result (const fxwb_source *src, const fxwb_inputs *in, const fxwb_column_run *run, const fxwb_run_opts *o)
{
  const fx_run_result *r = &run->result;
  printf ("graph      %s (%zu nodes, %zu inputs)\n", src->label, src->graph->n_nodes, in->n_inputs);
  printf ("backend    %s   mode %s   options %s   device %s\n", r->backend, r->mode, r->options[0] ? r->options : "{}",
          r->device);
  if (r->status != FX_OK)
    {
      printf ("status     failed (%s)\n%s\n", fx_status_name (r->status), r->error);
      return;
    }
  printf ("compile    %.2f ms\n", r->compile_ms);
  printf ("run        median %.4f ms   min %.4f ms   max %.4f ms   (%d calls after %d warm-up)\n", r->median_ms,
          r->min_ms, r->max_ms, r->repeat, r->warmup);
  if (r->timing[0])
    printf ("timed      %s\n", r->timing);
  printf ("memory     peak %.2f MiB beyond the inputs\n", (double) r->peak_bytes / (1024.0 * 1024.0));
  if (r->verdict == FX_VERDICT_NOT_CHECKED)
    printf ("accuracy   not checked: the interpreter cannot run this graph (%s)\n", in->ref_error);
  else
    printf ("accuracy   %s   max abs error %.3g   max rel error %.3g%s%s\n", fx_verdict_name (r->verdict),
            r->max_abs_err, r->max_rel_err, r->accuracy_report[0] ? "\n           " : "", r->accuracy_report);
  printf ("kernels    %zu\n", r->n_kernels);
  if (run->compiled && (o->kernels || run->compiled->n_kernels <= 12))
    fxwb_print_kernels (run->compiled);
  if (run->compiled && run->compiled->notes.len)
    printf ("notes\n%s", run->compiled->notes.data);
}

int
fxwb_cmd_run (int argc, char **argv)
{
  g_auto (fxwb_run_opts) o;
  fxwb_run_opts_init (&o);
  g_autofree char *backend = NULL;
  GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend, "The backend (default: eager; see below)", "SPEC" },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_run_opts_context_new ("fxwb run", "FILE|WORKSPACE:COMPILE - run a graph with a backend", entries,
                                 "Compiles the graph with the backend, runs it --warmup times untimed and\n"
                                 "--repeat times timed, and checks the outputs against the interpreter.",
                                 &o);
  int rc = fxwb_run_opts_parse (context, &argc, &argv, &o,
                                 "more than one graph (use fxwb compare for several backends)");
  if (rc != FXWB_EXIT_OK)
    return rc;
  g_auto (fxwb_column) col = { 0 };
  if (!fxwb_column_parse ("fxwb run", backend ? backend : "eager", &o, &col)
      || !fxwb_column_validate ("fxwb run", &col))
    return FXWB_EXIT_USAGE;
  g_auto (fxwb_source) src = { 0 };
  fxwb_inputs in;
  memset (&in, 0, sizeof in);
  fxwb_column_run run;
  memset (&run, 0, sizeof run);
  rc = fxwb_source_load ("fxwb run", argv[1], &o, &src);
  if (rc == FXWB_EXIT_OK)
    rc = fxwb_inputs_make ("fxwb run", &src, &o, &in);
  if (rc == FXWB_EXIT_OK)
    {
      if (!in.ref && !o.json)
        fprintf (stderr, "fxwb run: warning: no reference, the interpreter failed: %s\n", in.ref_error);
      int64_t run_id = 0;
      if (!o.no_store)
        rc = fxwb_store_run_start ("fxwb run", &src, &col, &run_id);
      if (rc == FXWB_EXIT_OK)
        fxwb_column_run_exec (&src, &in, &col, &o, &run);
      if (rc != FXWB_EXIT_OK)
        ;
      else if (o.json)
        fxwb_json_print (fxwb_run_result_json (&run.result));
      else
        print_result (&src, &in, &run, &o);
      if (rc == FXWB_EXIT_OK && !o.no_store)
        rc = fxwb_store_run ("fxwb run", &src, &in, &o, &run, run_id);
      if (rc == FXWB_EXIT_OK && src.store && !o.json)
        printf ("stored in %s\n", src.store_path);
      if (rc == FXWB_EXIT_OK && (run.result.status != FX_OK || run.result.verdict == FX_VERDICT_FAIL))
        rc = FXWB_EXIT_FAILURE;
    }
  fxwb_column_run_clear (&run);
  fxwb_inputs_clear (&in);
  return rc;
}
