/* fuzz-fxcode.c: libFuzzer target for the FX Python code parser and the printers that read what it builds. */
#include <stdint.h>
#include <stdlib.h>

#include "fx/pyparse.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
print_all (const fx_graph *g)
{
  fx_buf b;
  fx_readable_opts opts = { true, true, false };

  fx_buf_init (&b);
  fx_graph_print_readable (g, &opts, &b);
  fx_graph_print_tabular (g, &b);
  fx_graph_print_code (g, &b);
  fx_graph_print_str (g, &b);
  fx_buf_free (&b);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fx_graph *g = NULL;
  fx_diag diag;
  char text[4096];

  /* Anything goes in: a located error or a graph that verifies and prints, never a crash or a hang. */
  if (fx_parse_fx_code ((const char *) data, size, "fuzz.py", &g, &diag) == FX_OK)
    {
      if (g == NULL || fx_graph_verify (g, NULL) != FX_OK)
        abort ();
      print_all (g);
      fx_graph_free (g);
    }
  else
    {
      if (g != NULL || diag.line < 0)
        abort ();
      fx_diag_format (&diag, text, sizeof text);
    }
  return 0;
}
