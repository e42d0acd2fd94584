/* fxwb-cmd-compile.c: `fxwb compile FILE --backend inductor`: compile an FX graph with any registered backend
   (built in or a plugin) through the backend contract, list its kernels (and the graph nodes each covers), print
   its source, write its debug artifacts into --debug-dir, and with --run time it and check it against the
   interpreter on the path `fxwb run` takes. With --train, print the training graphs instead: the forward and backward
   of the joint graph's partition and the values saved for backward. */
#include "fxwb-train.h"

#include <errno.h>
#include <string.h>

#include "fx/pyparse.h"

static gboolean
split_options (char **given, fx_option_kv **out, size_t *n_out)
{
  size_t n = given ? g_strv_length (given) : 0;
  *out = g_new0 (fx_option_kv, n + 1);
  *n_out = n;
  for (size_t i = 0; i < n; i++)
    {
      char *eq = strchr (given[i], '=');
      if (eq == NULL || eq == given[i])
        {
          fprintf (stderr, "fxwb compile: --option expects KEY=VALUE, got '%s'\n", given[i]);
          return FALSE;
        }
      *eq = '\0';
      (*out)[i].key = given[i];
      (*out)[i].value = eq + 1;
    }
  return TRUE;
}

static void
print_kernel_table (const fx_compiled *c)
{
  for (size_t k = 0; k < c->n_kernels; k++)
    {
      const fx_kernel_info *ki = &c->kernels[k];
      printf ("  %-48s %-9s [", ki->name, ki->kind);
      for (size_t i = 0; i < ki->n_nodes; i++)
        printf ("%s%s", i ? ", " : "", ki->nodes[i]);
      printf ("]\n");
    }
}

static void
print_source (const fx_compiled *c)
{
  fx_buf src;
  fx_buf_init (&src);
  if (fx_compiled_format_source (c, &src))
    fputs (src.data, stdout);
  else
    fprintf (stderr, "fxwb compile: backend '%s' generates no source (it runs the graph as given)\n",
             c->backend->name);
  fx_buf_free (&src);
}

static int
write_artifacts (const fx_compiled *c, const char *dir)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      fprintf (stderr, "fxwb compile: cannot create %s: %s\n", dir, g_strerror (errno));
      return FXWB_EXIT_IO;
    }
  fx_status st = fx_compiled_write_artifacts (c, dir, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return FXWB_EXIT_IO;
    }
  printf ("artifacts written to %s\n", dir);
  return FXWB_EXIT_OK;
}

/* A backend that is not available here (no CUDA device, no PyTorch) but generates its code without building it:
   --source prints and --debug-dir writes that code before the failure is reported. Returns the exit status: 4
   unless the generation or a write failed. */
static int
generate_instead (const fx_backend *be, const fx_graph *graph, const fx_value *inputs, size_t n_inputs,
                  const char *mode, const fx_option_kv *kv, size_t n_kv, gboolean show_source,
                  const char *debug_dir, const fx_diag *unavailable)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_compiled *c = NULL;
  fx_status st = fx_backend_generate (be, graph, inputs, n_inputs, mode, kv, n_kv, &c, &diag);
  if (st == FX_ERR_UNSUPPORTED)
    {
      fxwb_print_diag (unavailable);
      return fxwb_exit_for_status (unavailable->code);
    }
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return fxwb_exit_for_status (st);
    }
  int rc = FXWB_EXIT_UNAVAILABLE;
  printf ("generated with %s, not built (not available here): %zu kernels\n", be->name, c->n_kernels);
  print_kernel_table (c);
  if (c->notes.len)
    fputs (c->notes.data, stdout);
  if (show_source)
    print_source (c);
  if (debug_dir && write_artifacts (c, debug_dir) != FXWB_EXIT_OK)
    rc = FXWB_EXIT_IO;
  fflush (stdout);
  fxwb_print_diag (unavailable);
  fprintf (stderr, "fxwb compile: the source was generated but cannot be built or run here\n");
  fx_compiled_free (c);
  return rc;
}

/* --run: the timed calls and same() against the interpreter (and its fp64 run) that `fxwb run` makes. */
static int
run_and_check (fx_compiled *c, const char *label, const fxwb_source *src, fxwb_inputs *in, const char *mode,
               int repeat)
{
  fxwb_inputs_add_reference (src, in);
  if (in->ref == NULL)
    fprintf (stderr, "fxwb compile: warning: no reference, the interpreter failed: %s\n", in->ref_error);
  fx_run_config cfg = { .backend = label, .mode = mode, .warmup = 1, .repeat = repeat };
  fx_run_result r;
  fx_arena *arena = fx_arena_new ();
  fx_run_compiled (c, in->inputs, in->n_inputs, &cfg, in->ref, in->ref64, in->n_ref, arena, NULL, NULL, &r);
  fx_arena_free (arena);
  if (r.status != FX_OK)
    {
      fprintf (stderr, "fxwb compile: the run failed (%s): %s\n", fx_status_name (r.status), r.error);
      return FXWB_EXIT_FAILURE;
    }
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = fx_compiled_profile (c, in->inputs, in->n_inputs, repeat, &diag);
  if (st == FX_OK)
    for (size_t k = 0; k < c->n_kernels; k++)
      if (c->kernels[k].time_ms >= 0)
        printf ("  %-48s %10.3f ms\n", c->kernels[k].name, c->kernels[k].time_ms);
  if (st != FX_OK && st != FX_ERR_UNSUPPORTED)
    fprintf (stderr, "fxwb compile: per-kernel timing failed: %s\n", diag.message);
  if (r.verdict == FX_VERDICT_NOT_CHECKED)
    printf ("accuracy vs interpreter: not checked (%s)\n", in->ref_error);
  else
    printf ("accuracy vs interpreter: %s\n  max abs error %.3g, max rel error %.3g%s%s\n",
            r.verdict == FX_VERDICT_PASS ? "pass" : "FAIL", r.max_abs_err, r.max_rel_err,
            r.accuracy_report[0] ? "\n  " : "", r.accuracy_report);
  printf ("time: %s median %.3f ms, min %.3f ms, max %.3f ms (%d calls after %d warm-up); peak %.2f MiB\n", label,
          r.median_ms, r.min_ms, r.max_ms, r.repeat, r.warmup, (double) r.peak_bytes / (1024.0 * 1024.0));
  return r.verdict == FX_VERDICT_FAIL ? FXWB_EXIT_FAILURE : FXWB_EXIT_OK;
}

/* --train: the joint graph's partition, printed. */
static int
compile_train (const char *file, fx_partition_kind kind, gboolean joint)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  g_auto (fxwb_source) src = { 0 };
  fx_status st = fxwb_load_graph_file (file, &src.graph, NULL, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return fxwb_exit_for_status (st);
    }
  fx_graph_resolve_ops (src.graph);
  fxwb_train t;
  int rc = fxwb_train_prepare ("fxwb compile", src.graph, kind, &t);
  if (rc != FXWB_EXIT_OK)
    return rc;
  printf ("training graphs of %s (%s partition)\n\n", file, fx_partition_kind_name (kind));
  fxwb_train_print (&t, joint);
  fxwb_train_clear (&t);
  return FXWB_EXIT_OK;
}

int
fxwb_cmd_compile (int argc, char **argv)
{
  g_autofree char *backend = NULL, *mode = NULL, *debug_dir = NULL, *inputs_path = NULL;
  g_auto (GStrv) options = NULL;
  gint64 seed = 0;
  int scale = 1, repeat = 10;
  gboolean run = FALSE, show_source = FALSE, train = FALSE, joint = FALSE;
  g_autofree char *partition = NULL;
  GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend, "Backend to compile with (default: inductor; any of `fxwb backends`)", "NAME" },
    { "mode", 'm', 0, G_OPTION_ARG_STRING, &mode,
      "default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs", "MODE" },
    { "option", 'o', 0, G_OPTION_ARG_STRING_ARRAY, &options,
      "A backend option, e.g. epilogue_fusion=False, cpp.threads=2 (repeatable)", "KEY=VALUE" },
    { "debug-dir", 'd', 0, G_OPTION_ARG_FILENAME, &debug_dir,
      "Write the backend's artifacts into DIR (inductor: fx_graph_readable.py, fx_graph_transformed.py, "
      "ir_pre_fusion.txt, ir_post_fusion.txt, output_code.c or .cu, fusion_log.txt, graph_diagram.dot)", "DIR" },
    { "inputs", 'i', 0, G_OPTION_ARG_FILENAME, &inputs_path,
      "spec (the graph's annotations, default), repro (a repro.py's load_args), an inputs.json file or a folder of "
      "saved tensors", "INPUTS" },
    { "scale", 0, 0, G_OPTION_ARG_INT, &scale, "Divide every input size >= 64 by N (machine-sized runs)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Seed of the random inputs (default 0)", "S" },
    { "run", 'r', 0, G_OPTION_ARG_NONE, &run, "Run it as `fxwb run` does: time it and check every output with same() against the interpreter (and its fp64 run)", NULL },
    { "repeat", 0, 0, G_OPTION_ARG_INT, &repeat, "Timed calls with --run (default 10)", "N" },
    { "source", 's', 0, G_OPTION_ARG_NONE, &show_source, "Print the generated code (C, CUDA and its launches, or PyTorch's output code)", NULL },
    { "train", 't', 0, G_OPTION_ARG_NONE, &train,
      "Training: build the joint forward+backward graph (every floating input requires grad), partition it and "
      "print the forward and backward graphs as aot_forward_graph / aot_backward_graph and the saved values with "
      "why each is saved", NULL },
    { "joint", 0, 0, G_OPTION_ARG_NONE, &joint, "With --train: print the joint graph (aot_joint_graph) first", NULL },
    { "partition", 0, 0, G_OPTION_ARG_STRING, &partition,
      "With --train: min-cut (PyTorch's min_cut_rematerialization_partition, default) or save-all "
      "(default_partition)", "KIND" },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb compile",
                               "FILE - compile an FX graph with a backend and show its kernels", entries,
                               "FILE is an FX graph (print_readable, GraphModule.code, repro.py, canonical JSON).\n"
                               "Any backend of `fxwb backends --all`, plugins included, shows its kernels, source and\n"
                               "artifacts the same way. The inductor backend lowers the graph to loop IR, fuses, generates\n"
                               "C, builds it with the system compiler (cached under ~/.cache/fx-workbench/inductor or\n"
                               "$FXWB_INDUCTOR_CACHE).",
                               "Exit status:\n"
                               "  0  compiled (and, with --run, matched the interpreter)\n"
                               "  1  FILE is malformed, the compile failed (compiler output shown) or the\n"
                               "     result does not match the interpreter\n"
                               "  2  wrong command line\n"
                               "  3  a file could not be read or written\n"
                               "  4  the backend is not available here (no CUDA device, no PyTorch); with --source or\n"
                               "     --debug-dir a backend that generates code without building it (inductor's CUDA)\n"
                               "     still prints or writes that source first\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  if (argc != 2)
    return fxwb_usage_error (context, argc < 2 ? "missing FILE" : "more than one FILE");
  fx_partition_kind pkind = FX_PARTITION_MIN_CUT;
  if ((partition || joint) && !train)
    return fxwb_usage_error (context, "--partition and --joint need --train");
  if (partition && !fx_partition_kind_from_name (partition, &pkind))
    return fxwb_usage_error (context, "--partition takes min-cut or save-all");
  if (train)
    {
      if (backend || run || show_source || debug_dir)
        fprintf (stderr, "fxwb compile: note: --train prints the training graphs and what they save; to compile, run "
                         "and time them with a backend: fxwb compare %s --train -b %s\n", argv[1],
                 backend ? backend : "inductor");
      return compile_train (argv[1], pkind, joint);
    }
  /* the backend specs of `fxwb run`: "inductor", "torch:inductor", "delegate:eager", "inductor|eager" */
  fx_diag bdiag;
  fx_diag_clear (&bdiag);
  const char *spec = backend ? backend : "inductor";
  const fx_backend *be = NULL;
  const char *sub = NULL;
  fx_arena *spec_arena = fx_arena_new ();
  fx_status bst = fx_backend_parse_spec (spec, spec_arena, &be, &sub, &bdiag);
  g_autofree char *sub_value = sub ? g_strdup (sub) : NULL;
  fx_arena_free (spec_arena);
  if (bst != FX_OK)
    {
      fprintf (stderr, "fxwb compile: %s\n", bdiag.message);
      return FXWB_EXIT_USAGE;
    }
  if (scale < 1 || repeat < 1)
    {
      fprintf (stderr, "fxwb compile: --scale and --repeat must be >= 1\n");
      return FXWB_EXIT_USAGE;
    }
  g_autofree fx_option_kv *kv = NULL;
  size_t n_kv = 0;
  if (!split_options (options, &kv, &n_kv))
    return FXWB_EXIT_USAGE;
  if (sub_value)
    {
      /* the part after ':' is the backend's `backend` option, in front of the user's */
      fx_option_kv *all = g_new0 (fx_option_kv, n_kv + 2);
      all[0].key = "backend";
      all[0].value = sub_value;
      memcpy (all + 1, kv, sizeof (fx_option_kv) * n_kv);
      g_free (kv);
      kv = all;
      n_kv++;
    }

  fx_diag diag;
  fx_diag_clear (&diag);
  fxwb_source src;
  memset (&src, 0, sizeof src);
  /* FX code, the canonical JSON of `fxwb print -j`, or a .pt2 archive */
  fx_status st = fxwb_load_graph_file (argv[1], &src.graph, NULL, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return fxwb_exit_for_status (st);
    }
  fx_graph_resolve_ops (src.graph);
  src.label = g_strdup (argv[1]);
  fxwb_run_opts o;
  fxwb_run_opts_init (&o);
  o.inputs = g_strdup (inputs_path);
  o.seed = seed;
  o.scale = scale;
  fxwb_inputs in;
  memset (&in, 0, sizeof in);
  int rc = fxwb_inputs_make_only ("fxwb compile", &src, &o, &in);
  fx_compiled *c = NULL;
  if (rc != FXWB_EXIT_OK)
    goto out;
  st = fx_backend_compile (be, src.graph, in.inputs, in.n_inputs, mode, kv, n_kv, &c, &diag);
  if (st == FX_ERR_NO_DEVICE && (show_source || debug_dir))
    {
      rc = generate_instead (be, src.graph, in.inputs, in.n_inputs, mode, kv, n_kv, show_source, debug_dir, &diag);
      goto out;
    }
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      rc = fxwb_exit_for_status (st);
      goto out;
    }
  printf ("compiled %s with %s in %.1f ms: %zu kernels\n", argv[1], spec, c->compile_ms, c->n_kernels);
  print_kernel_table (c);
  if (c->notes.len)
    fputs (c->notes.data, stdout);
  /* max-autotune on the GPU: every candidate of every kernel and GEMM with its time, and the one kept */
  for (size_t i = 0; i < c->n_artifacts; i++)
    if (strcmp (c->artifacts[i].name, "autotune.txt") == 0 && c->artifacts[i].text && *c->artifacts[i].text)
      printf ("autotune candidates (autotune.txt):\n%s", c->artifacts[i].text);
  if (show_source)
    print_source (c);
  if (debug_dir && (rc = write_artifacts (c, debug_dir)) != FXWB_EXIT_OK)
    goto out;
  if (run)
    rc = run_and_check (c, spec, &src, &in, mode, repeat);
out:
  fx_compiled_free (c);
  fxwb_inputs_clear (&in);
  fxwb_run_opts_clear (&o);
  fxwb_source_clear (&src);
  return rc;
}
