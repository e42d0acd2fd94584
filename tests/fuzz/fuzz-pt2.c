/* fuzz-pt2.c: libFuzzer target for the .pt2 reader (zip layout and the serialized ExportedProgram JSON). */
#include <stdint.h>
#include <stdlib.h>

#include "fx/importers.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static fx_store *store;
static int imports;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fx_diag diag;
  fx_import_stats stats;

  if (!store || ++imports % 500 == 0)
    {
      fx_store_close (store);
      store = NULL;
      if (fx_store_open (":memory:", true, &store, NULL) != FX_OK)
        abort ();
    }
  /* A graph, or a clear error (a bad archive or a bad program is FX_ERR_PARSE), never a crash. */
  fx_diag_clear (&diag);
  fx_status st = fx_import_pt2_data (store, "fuzz.pt2", data, size, &stats, &diag);
  if (st != FX_OK && st != FX_ERR_PARSE)
    abort ();
  return 0;
}
