/* fxwb-main.c: command dispatch, --help and --version for fxwb. */
#include "fx-config.h"
#include "fxwb.h"

#include <stdlib.h>
#include <string.h>

#include "fx/store.h"
#include "registry/fx-registry.h"

static const fxwb_command commands[] = {
  { "print", "Print an FX graph file (tabular, code, readable, graph, JSON, dot)", fxwb_cmd_print },
  { "import", "Import PyTorch artifacts (TORCH_TRACE, TORCH_COMPILE_DEBUG, .pt2, FX code) into a workspace", fxwb_cmd_import },
  { "ls", "List the frames and compiles of a workspace", fxwb_cmd_ls },
  { "show", "Show one compile: graphs, guards, recompiles, breaks, kernels, fusion, metrics", fxwb_cmd_show },
  { "explain", "Summarize a workspace as torch._dynamo.explain does", fxwb_cmd_explain },
  { "run", "Run a graph with a backend, mode and options", fxwb_cmd_run },
  { "compile", "Compile a graph with a backend and write its debug artifacts (kernels, IR dumps, fusion diagram)", fxwb_cmd_compile },
  { "diff", "What changed between two compiles, graphs or workspaces (guards, nodes, kernels, code, runs)", fxwb_cmd_diff },
  { "compare", "Run a graph with several backends side by side", fxwb_cmd_compare },
  { "bench", "Benchmarks of the engine itself", fxwb_cmd_bench },
  { "minify", "Shrink a graph that fails under a backend to the smallest repro.py that still fails", fxwb_cmd_minify },
  { "backends", "List the registered backends, their options and modes", fxwb_cmd_backends },
  { "capture", "Run a Python program under capture and record every compile", fxwb_cmd_capture },
  { "report", "Write a trace report: static HTML pages (index + one per compile) or one JSON document", fxwb_cmd_report },
  { "serve", "Serve a workspace's report pages and a JSON API on 127.0.0.1; --follow a live TORCH_TRACE", fxwb_cmd_serve },
};

static void
print_help (FILE *out)
{
  fprintf (out,
           "Usage: fxwb COMMAND [OPTIONS...] [ARGS...]\n"
           "\n"
           "FX Workbench: inspect, run and compare the graphs of torch.compile.\n"
           "\n"
           "Commands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf (out,
           "\n"
           "Options:\n"
           "  -h, --help     Show this help (COMMAND --help for a command's options)\n"
           "  --version      Print the version\n"
           "\n"
           "Exit status:\n"
           "  0  success\n"
           "  1  the work failed (malformed input, failed run or accuracy check)\n"
           "  2  wrong command line (unknown command or option)\n"
           "  3  a file could not be read or written\n"
           "  4  a feature or device this machine lacks (no CUDA device, no Python)\n"
           "\n"
           "A command that writes a workspace another fxwb is writing waits for it (saying so on stderr);\n"
           "FXWB_LOCK_TIMEOUT=SECONDS in the environment gives up after that long instead.\n");
}

int
fxwb_main (int argc, char **argv)
{
  if (argc < 2)
    {
      print_help (stderr);
      return FXWB_EXIT_USAGE;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 || strcmp (argv[1], "help") == 0)
    {
      print_help (stdout);
      return FXWB_EXIT_OK;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("fxwb %s\n", FX_PACKAGE_VERSION);
      return FXWB_EXIT_OK;
    }
  const char *limit = g_getenv ("FXWB_LOCK_TIMEOUT");
  fx_store_set_lock_wait (limit ? g_ascii_strtod (limit, NULL) : 0, 1.0, fxwb_report_lock_wait, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      {
        /* The one place the CLI registers backends: the built-ins, then the plugins of $FXWB_BACKEND_PATH. */
        fx_backends_init ();
        /* Not under capture: the embedded CPython takes its sys.stdout/sys.stderr from fileno(stdout/stderr),
           which a filter stream does not have (the program's prints and tracebacks would be lost). */
        if (commands[i].run != fxwb_cmd_capture)
          fxwb_guard_stdout ();
        int rc = commands[i].run (argc - 1, argv + 1);
        fxwb_unguard_stdout ();
        return rc;
      }

  fprintf (stderr, "fxwb: unknown command '%s'\n\n", argv[1]);
  print_help (stderr);
  return FXWB_EXIT_USAGE;
}
