/* fxwb-cmd-print.c: `fxwb print FILE`: parse an FX graph (PyTorch's Python forms or the canonical JSON) and print
   it as print_tabular, GraphModule.code, print_readable, Graph.__str__, JSON or Graphviz dot. */
#include "fxwb.h"

#include <string.h>

#include "fx/ir.h"
#include "fx/pyparse.h"

typedef enum
{
  FORMAT_READABLE,
  FORMAT_TABULAR,
  FORMAT_CODE,
  FORMAT_GRAPH,
  FORMAT_JSON,
  FORMAT_DOT,
} print_format;

int
fxwb_cmd_print (int argc, char **argv)
{
  gboolean tabular = FALSE, code = FALSE, readable = FALSE, graph_str = FALSE, json = FALSE, dot = FALSE;
  gboolean stride = FALSE, device = FALSE;
  GOptionEntry entries[] = {
    { "tabular", 't', 0, G_OPTION_ARG_NONE, &tabular, "Graph.print_tabular() (python-tabulate \"simple\")", NULL },
    { "code", 'c', 0, G_OPTION_ARG_NONE, &code, "GraphModule.code", NULL },
    { "readable", 'r', 0, G_OPTION_ARG_NONE, &readable, "GraphModule.print_readable() (the default)", NULL },
    { "graph", 'g', 0, G_OPTION_ARG_NONE, &graph_str, "Graph.__str__ (format_node per node)", NULL },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "The canonical JSON form (versioned; reads back with fxwb print)", NULL },
    { "dot", 'd', 0, G_OPTION_ARG_NONE, &dot, "Graphviz dot, clustered by nn_module_stack", NULL },
    { "stride", 0, 0, G_OPTION_ARG_NONE, &stride, "With --readable: include strides in annotations", NULL },
    { "device", 0, 0, G_OPTION_ARG_NONE, &device, "With --readable: include devices in annotations", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb print", "FILE - print an FX graph", entries,
                               "FILE is FX Python code in any form PyTorch writes (GraphModule.code, print_readable,\n"
                               "fx_graph_*.py, repro.py) or a canonical graph JSON file (*.json). Nothing is executed.",
                               "Exit status:\n"
                               "  0  printed\n"
                               "  1  FILE is malformed (the error shows file:line:col and a caret)\n"
                               "  2  wrong command line\n"
                               "  3  FILE cannot be read, or the output cannot be written\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;

  int n_formats = tabular + code + readable + graph_str + json + dot;
  if (n_formats > 1)
    {
      fprintf (stderr, "fxwb print: choose one of --tabular, --code, --readable, --graph, --json, --dot\n");
      return FXWB_EXIT_USAGE;
    }
  if (argc != 2)
    return fxwb_usage_error (context, argc < 2 ? "missing FILE" : "more than one FILE");
  print_format format = tabular ? FORMAT_TABULAR : code ? FORMAT_CODE : graph_str ? FORMAT_GRAPH
                        : json ? FORMAT_JSON : dot ? FORMAT_DOT : FORMAT_READABLE;
  if ((stride || device) && format != FORMAT_READABLE)
    {
      fprintf (stderr, "fxwb print: --stride and --device apply to --readable only\n");
      return FXWB_EXIT_USAGE;
    }

  const char *path = argv[1];
  fx_diag diag;
  fx_graph *graph = NULL;
  fx_status status;

  fx_diag_clear (&diag);
  status = fxwb_load_graph_file (path, &graph, NULL, &diag);
  if (status != FX_OK)
    {
      fxwb_print_diag (&diag);
      return fxwb_exit_for_status (status);
    }

  fx_buf out;
  fx_buf_init (&out);
  switch (format)
    {
    case FORMAT_TABULAR:
      fx_graph_print_tabular (graph, &out);
      break;
    case FORMAT_CODE:
      /* print(gm.code) */
      fx_graph_print_code (graph, &out);
      fx_buf_putc (&out, '\n');
      break;
    case FORMAT_GRAPH:
      /* print(gm.graph) */
      fx_graph_print_str (graph, &out);
      fx_buf_putc (&out, '\n');
      break;
    case FORMAT_JSON:
      fx_graph_to_json (graph, &out);
      break;
    case FORMAT_DOT:
      fx_graph_dump_dot (graph, &out);
      break;
    case FORMAT_READABLE:
    default:
      {
        /* the text print_readable() returns, as PyTorch writes it to fx_graph_readable.py */
        fx_readable_opts opts = { stride, device, false };
        fx_graph_print_readable (graph, &opts, &out);
        break;
      }
    }
  fx_graph_free (graph);

  /* The canonical JSON is a file format whose writer escapes what it must: it goes out unfiltered. */
  FILE *dest = format == FORMAT_JSON ? fxwb_real_stdout () : stdout;
  size_t written = fwrite (out.data, 1, out.len, dest);
  gboolean complete = written == out.len;
  fx_buf_free (&out);
  if (!complete || fflush (dest) != 0)
    {
      fprintf (stderr, "fxwb print: cannot write the output\n");
      return FXWB_EXIT_IO;
    }
  return FXWB_EXIT_OK;
}
