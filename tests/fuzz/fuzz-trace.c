/* fuzz-trace.c: libFuzzer target for the TORCH_TRACE and TORCH_LOGS importers (into an in-memory workspace), the
   output-code kernel splitter and the ir_post_fusion.txt splitter. */
#include <stdint.h>
#include <stdlib.h>

#include "fx/importers.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static fx_store *store, *logs_store;
static int imports;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fx_diag diag;
  fx_import_stats stats;

  /* A fresh in-memory workspace now and then, so the fuzzer's memory stays flat. */
  if (!store || ++imports % 500 == 0)
    {
      fx_store_close (store);
      fx_store_close (logs_store);
      store = logs_store = NULL;
      if (fx_store_open (":memory:", true, &store, NULL) != FX_OK
          || fx_store_open (":memory:", true, &logs_store, NULL) != FX_OK)
        abort ();
    }
  /* Anything goes in: an import (possibly with warnings) or a located error, never a crash or a hang. */
  fx_diag_clear (&diag);
  fx_status st = fx_import_torch_trace_data (store, "fuzz.log", (const char *) data, size, NULL, NULL, &stats, &diag);
  if (st != FX_OK && st != FX_ERR_PARSE)
    abort ();
  if (st == FX_OK && !stats.already_imported && stats.records == 0)
    abort ();
  /* The same bytes as TORCH_LOGS text (its own workspace, so the content hash does not skip it). */
  fx_diag_clear (&diag);
  st = fx_import_torch_logs_data (logs_store, "fuzz.txt", (const char *) data, size, &stats, &diag);
  if (st != FX_OK && st != FX_ERR_PARSE)
    abort ();

  fx_arena *arena = fx_arena_new ();
  fx_kernel_def *defs;
  fx_fusion_group *groups;
  size_t n;
  if (fx_split_output_code ((const char *) data, size, arena, &defs, &n, NULL) != FX_OK)
    abort ();
  for (size_t i = 0; i < n; i++)
    if (!defs[i].name || !defs[i].kind)
      abort ();
  if (fx_split_post_fusion ((const char *) data, size, arena, &groups, &n, NULL) != FX_OK)
    abort ();
  fx_arena_free (arena);
  return 0;
}
