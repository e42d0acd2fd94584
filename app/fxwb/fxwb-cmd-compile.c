/* fxwb-cmd-compile.c: `fxwb compile FILE --backend inductor`: compile an FX graph with the engine's own Inductor-style
   backend, list its kernels (and the graph nodes each covers), optionally run and check it against the interpreter,
   and write TORCH_COMPILE_DEBUG-like artifacts into --debug-dir. */
#include "fxwb.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "fx/pyparse.h"
#include "fx/runtime.h"
#include "registry/fx-registry.h"
#include "inductor/fx-inductor.h"

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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

static gboolean
write_text (const char *dir, const char *name, const fx_buf *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_file_set_contents (path, text->data ? text->data : "", (gssize) text->len, &error))
    {
      fprintf (stderr, "fxwb compile: %s\n", error->message);
      return FALSE;
    }
  return TRUE;
}

/* A CUDA compile on a machine without a device: the source, the kernel table and the wrapper need no device (the
   heuristic kernel choices), so --source prints them and --debug-dir writes them before the failure is reported.
   Returns the exit status: 4 (the device is missing) unless the generation or a write failed. */
static int
cuda_without_device (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, gboolean show_source,
                     const char *debug_dir, const fx_diag *no_device)
{
  fx_buf src, listing, wrapper;
  fx_buf_init (&src);
  fx_buf_init (&listing);
  fx_buf_init (&wrapper);
  fx_diag diag;
  fx_diag_clear (&diag);
  int rc = FXWB_EXIT_UNAVAILABLE;
  fx_status st = fx_inductor_cuda_generate (graph, inputs, n_inputs, &src, &listing, &wrapper, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      rc = fxwb_exit_for_status (st);
      goto out;
    }
  printf ("generated CUDA without a device (heuristic kernel choices):\n");
  for (const char *l = listing.data; l && *l;)
    {
      const char *eol = strchr (l, '\n');
      int len = eol ? (int) (eol - l) : (int) strlen (l);
      printf ("  %.*s\n", len, l);
      l += len + (eol ? 1 : 0);
    }
  if (show_source)
    {
      fputs (src.data, stdout);
      printf ("\n# ---- cuda_wrapper.txt\n");
      fputs (wrapper.data ? wrapper.data : "", stdout);
    }
  if (debug_dir)
    {
      if (g_mkdir_with_parents (debug_dir, 0755) != 0 || !write_text (debug_dir, "output_code.cu", &src)
          || !write_text (debug_dir, "cuda_kernels.txt", &listing)
          || !write_text (debug_dir, "cuda_wrapper.txt", &wrapper))
        {
          fprintf (stderr, "fxwb compile: cannot write the artifacts into %s\n", debug_dir);
          rc = FXWB_EXIT_IO;
          goto out;
        }
      printf ("artifacts written to %s (output_code.cu, cuda_kernels.txt, cuda_wrapper.txt)\n", debug_dir);
    }
  fflush (stdout);
  fxwb_print_diag (no_device);
  fprintf (stderr, "fxwb compile: the CUDA source was generated but cannot be built or run here\n");
out:
  fx_buf_free (&src);
  fx_buf_free (&listing);
  fx_buf_free (&wrapper);
  return rc;
}

int
fxwb_cmd_compile (int argc, char **argv)
{
  g_autofree char *backend = NULL, *mode = NULL, *debug_dir = NULL, *inputs_path = NULL;
  g_auto (GStrv) options = NULL;
  gint64 seed = 0;
  int scale = 1, repeat = 10;
  gboolean run = FALSE, show_source = FALSE;
  GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend, "Backend to compile with (default: inductor; any of `fxwb backends`)", "NAME" },
    { "mode", 'm', 0, G_OPTION_ARG_STRING, &mode,
      "default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs", "MODE" },
    { "option", 'o', 0, G_OPTION_ARG_STRING_ARRAY, &options,
      "A backend option, e.g. epilogue_fusion=False, cpp.threads=2 (repeatable)", "KEY=VALUE" },
    { "debug-dir", 'd', 0, G_OPTION_ARG_FILENAME, &debug_dir,
      "Write fx_graph_readable.py, fx_graph_transformed.py, ir_pre_fusion.txt, ir_post_fusion.txt, output_code.c, "
      "fusion_log.txt, graph_diagram.dot into DIR", "DIR" },
    { "inputs", 'i', 0, G_OPTION_ARG_FILENAME, &inputs_path, "An inputs.json file (default: the graph's annotations)",
      "FILE" },
    { "scale", 0, 0, G_OPTION_ARG_INT, &scale, "Divide every input size >= 64 by N (machine-sized runs)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Seed of the random inputs (default 0)", "S" },
    { "run", 'r', 0, G_OPTION_ARG_NONE, &run, "Run it, check it against the interpreter and time both", NULL },
    { "repeat", 0, 0, G_OPTION_ARG_INT, &repeat, "Timed calls with --run (default 10)", "N" },
    { "source", 's', 0, G_OPTION_ARG_NONE, &show_source, "Print the generated code (C, CUDA, or PyTorch's output code)", NULL },
    { NULL },
  };
  g_set_prgname ("fxwb compile");
  g_autoptr (GOptionContext) context = g_option_context_new ("FILE - compile an FX graph into fused C kernels");
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_summary (context,
                                "FILE is an FX graph (print_readable, GraphModule.code, repro.py, canonical JSON).\n"
                                "The inductor backend lowers it to loop IR, fuses, generates C, builds it with the\n"
                                "system compiler (cached under ~/.cache/fx-workbench/inductor or $FXWB_INDUCTOR_CACHE).");
  g_option_context_set_description (context,
                                    "Exit status:\n"
                                    "  0  compiled (and, with --run, matched the interpreter)\n"
                                    "  1  FILE is malformed, the compile failed (compiler output shown) or the\n"
                                    "     result does not match the interpreter\n"
                                    "  2  wrong command line\n"
                                    "  3  a file could not be read or written\n"
                                    "  4  the backend is not available here (no CUDA device, no PyTorch); with --source or\n"
                                    "     --debug-dir a CUDA compile still prints or writes its generated source first\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  if (argc != 2)
    {
      g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);
      fprintf (stderr, "fxwb compile: %s\n\n%s", argc < 2 ? "missing FILE" : "more than one FILE", help);
      return FXWB_EXIT_USAGE;
    }
  fx_diag bdiag;
  fx_diag_clear (&bdiag);
  const fx_backend *be = fx_backend_lookup (backend ? backend : "inductor", &bdiag);
  if (be == NULL)
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

  fx_diag diag;
  fx_diag_clear (&diag);
  fx_graph *graph = NULL;
  fx_status st = fx_parse_fx_file (argv[1], &graph, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return fxwb_exit_for_status (st);
    }
  fx_graph_resolve_ops (graph);
  if (scale > 1)
    fx_graph_scale_inputs (graph, scale, 64);
  fx_arena *arena = fx_arena_new ();
  fx_value *inputs = NULL;
  size_t n_inputs = 0;
  st = fx_inputs_make (graph, inputs_path ? FX_INPUTS_JSON : FX_INPUTS_SPEC, inputs_path, (uint64_t) seed, NULL,
                       arena, &inputs, &n_inputs, &diag);
  fx_compiled *c = NULL;
  int rc = FXWB_EXIT_OK;
  if (st == FX_OK)
    st = fx_backend_compile (be, graph, inputs, n_inputs, mode, kv, n_kv, &c, &diag);
  if (st == FX_ERR_NO_DEVICE && be == &fx_inductor_backend && (show_source || debug_dir))
    {
      rc = cuda_without_device (graph, inputs, n_inputs, show_source, debug_dir, &diag);
      goto out;
    }
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      rc = fxwb_exit_for_status (st);
      goto out;
    }
  printf ("compiled %s with %s in %.1f ms: %zu kernels\n", argv[1], be->name, c->compile_ms, c->n_kernels);
  for (size_t k = 0; k < c->n_kernels; k++)
    {
      const fx_kernel_info *ki = &c->kernels[k];
      printf ("  %-48s %-9s [", ki->name, ki->kind);
      for (size_t i = 0; i < ki->n_nodes; i++)
        printf ("%s%s", i ? ", " : "", ki->nodes[i]);
      printf ("]\n");
    }
  if (c->notes.len)
    fputs (c->notes.data, stdout);
  if (show_source)
    {
      /* The generated code: C for the CPU, CUDA for a GPU compile, PyTorch's output code for the torch backend. */
      static const char *const names[] = { "output_code.c", "output_code.cu", "output_code.py" };
      size_t shown = 0;
      for (size_t i = 0; i < c->n_artifacts; i++)
        for (size_t j = 0; j < G_N_ELEMENTS (names); j++)
          if (strcmp (c->artifacts[i].name, names[j]) == 0)
            {
              if (shown++)
                printf ("\n# ---- %s\n", names[j]);
              fputs (c->artifacts[i].text, stdout);
            }
      if (shown == 0)
        fprintf (stderr, "fxwb compile: backend '%s' generates no source (it runs the graph as given)\n", be->name);
    }
  if (debug_dir)
    {
      st = fx_inductor_write_artifacts (c, debug_dir, &diag);
      if (st != FX_OK)
        {
          fxwb_print_diag (&diag);
          rc = FXWB_EXIT_IO;
          goto out;
        }
      printf ("artifacts written to %s\n", debug_dir);
    }
  if (run)
    {
      fx_value *ref = NULL, *res = NULL;
      size_t n_ref = 0, n_res = 0;
      double t0 = now_ms ();
      st = fx_interp_run (graph, inputs, n_inputs, NULL, arena, &ref, &n_ref, &diag);
      double interp_ms = now_ms () - t0;
      if (st == FX_OK)
        st = fx_compiled_run (c, inputs, n_inputs, arena, &res, &n_res, &diag);
      if (st != FX_OK)
        {
          fxwb_print_diag (&diag);
          rc = fxwb_exit_for_status (st);
          goto out;
        }
      fx_same_opts so;
      fx_same_opts_init (&so);
      gboolean ok = n_res == n_ref;
      for (size_t i = 0; ok && i < n_ref; i++)
        if (ref[i].kind == FX_VALUE_TENSOR && res[i].kind == FX_VALUE_TENSOR)
          {
            fx_same_report rep;
            memset (&rep, 0, sizeof rep);
            ok = fx_same_tensor (ref[i].u.t, res[i].u.t, NULL, &so, &rep);
          }
      for (size_t i = 0; i < n_res; i++)
        fx_value_clear (&res[i]);
      double best = INFINITY;
      for (int r = 0; r < repeat; r++)
        {
          double t1 = now_ms ();
          st = fx_compiled_run (c, inputs, n_inputs, arena, &res, &n_res, &diag);
          double dt = now_ms () - t1;
          for (size_t i = 0; i < n_res; i++)
            fx_value_clear (&res[i]);
          if (st != FX_OK)
            break;
          if (dt < best)
            best = dt;
        }
      for (size_t i = 0; i < n_ref; i++)
        fx_value_clear (&ref[i]);
      if (st == FX_OK && be == &fx_inductor_backend && fx_inductor_profile (c, inputs, n_inputs, repeat, &diag) == FX_OK)
        for (size_t k = 0; k < c->n_kernels; k++)
          printf ("  %-48s %10.3f ms\n", c->kernels[k].name, c->kernels[k].time_ms);
      printf ("accuracy vs interpreter: %s\n", ok ? "pass" : "FAIL");
      printf ("time: %s %.3f ms (best of %d), interpreter %.3f ms (one call)\n", be->name, best, repeat, interp_ms);
      if (!ok)
        rc = FXWB_EXIT_FAILURE;
    }
out:
  if (c)
    fx_compiled_free (c);
  for (size_t i = 0; i < n_inputs; i++)
    fx_value_clear (&inputs[i]);
  fx_arena_free (arena);
  fx_graph_free (graph);
  return rc;
}
