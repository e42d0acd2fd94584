/* fuzz-json.c: libFuzzer target for the canonical graph JSON reader (engine/ir/fx-json.c): what it accepts must
   verify, print, propagate shapes (hostile sizes are errors) and round-trip through fx_graph_to_json. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx/passes.h"
#include "fx/pyparse.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fx_graph *g = NULL;
  fx_diag diag;
  char text[4096];

  /* Anything goes in: a located error or a graph, never a crash, a hang or a stack overflow. */
  fx_diag_clear (&diag);
  if (fx_graph_from_json ((const char *) data, size, &g, &diag) != FX_OK)
    {
      if (g != NULL)
        abort ();
      fx_diag_format (&diag, text, sizeof text);
      return 0;
    }
  if (g == NULL)
    abort ();
  fx_buf first, second;
  fx_buf_init (&first);
  fx_buf_init (&second);
  fx_readable_opts opts = { true, true, false };
  fx_graph_print_readable (g, &opts, &first);
  fx_graph_print_tabular (g, &first);
  fx_buf_reset (&first);
  /* what the writer writes, the reader reads back to the same text */
  fx_graph_to_json (g, &first);
  fx_graph *again = NULL;
  if (fx_graph_from_json (first.data, first.len, &again, &diag) != FX_OK)
    {
      fprintf (stderr, "fx_graph_to_json's output does not read back: %s\n%s\n", diag.message, first.data);
      abort ();
    }
  fx_graph_to_json (again, &second);
  if (strcmp (first.data, second.data) != 0)
    {
      fprintf (stderr, "from_json(to_json(g)) writes differently:\n%s\n---\n%s\n", first.data, second.data);
      abort ();
    }
  fx_graph_free (again);
  fx_buf_free (&first);
  fx_buf_free (&second);
  /* shapes from the file's annotations through every op's meta function: sizes like 2^63-1 are errors */
  if (fx_graph_verify (g, NULL) == FX_OK)
    {
      size_t changed = 0;
      fx_graph_resolve_ops (g);
      fx_pass_shape_prop (g, &changed, &diag);
    }
  fx_graph_free (g);
  return 0;
}
