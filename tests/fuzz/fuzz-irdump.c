/* fuzz-irdump.c: libFuzzer target for the Inductor IR-dump parser (ir_pre_fusion.txt / ir_post_fusion.txt), its
   fusion-group view, the output-code launch reader and the provenance-mapping reader, storing what they return into
   an in-memory workspace. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fx/importers.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static fx_store *store;
static int64_t compile_row;
static int runs;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* A fresh in-memory workspace now and then, so the fuzzer's memory stays flat. */
  if (!store || ++runs % 500 == 0)
    {
      fx_store_close (store);
      store = NULL;
      int64_t input = 0;
      fx_compile_id cid = { -1, -1, 0, 0 };
      if (fx_store_open (":memory:", true, &store, NULL) != FX_OK
          || fx_store_add_input (store, "fuzz", "torch_compile_debug", "h", 0, &input, NULL) != FX_OK
          || fx_store_ensure_compile (store, input, &cid, &compile_row, NULL) != FX_OK)
        abort ();
    }
  /* The exact bytes, without a NUL after them: the parsers must stay inside len. */
  char *text = malloc (size ? size : 1);
  memcpy (text, data, size);
  fx_arena *arena = fx_arena_new ();
  fx_store_ir_node *nodes;
  fx_fusion_group *groups;
  fx_ir_dump_issues issues;
  size_t n = 0, ng = 0;
  if (fx_parse_ir_dump (text, size, "post_fusion", arena, &nodes, &n, &issues, NULL) != FX_OK)
    abort ();
  /* Every node has a name, kind and text; a member names a fused node listed before it. */
  for (size_t i = 0; i < n; i++)
    {
      if (!nodes[i].name || !nodes[i].kind || !nodes[i].text || nodes[i].ordinal != (int) i)
        abort ();
      if (nodes[i].fused_into)
        {
          bool found = false;
          for (size_t k = 0; k < i && !found; k++)
            found = !nodes[k].fused_into && strcmp (nodes[k].name, nodes[i].fused_into) == 0;
          if (!found)
            abort ();
        }
      if (fx_store_add_ir_node (store, compile_row, &nodes[i], NULL) != FX_OK)
        abort ();
    }
  if (fx_split_post_fusion (text, size, arena, &groups, &ng, NULL) != FX_OK || ng > n)
    abort ();
  /* The same bytes as output code: its launches, and the launch writing each node's buffers. */
  fx_kernel_launch *launches;
  size_t nl = 0;
  if (fx_output_code_launches (text, size, arena, &launches, &nl, NULL) != FX_OK)
    abort ();
  for (size_t i = 0; i < n; i++)
    {
      int l = fx_launch_writing (launches, nl, nodes[i].writes);
      if (l < -1 || l >= (int) nl)
        abort ();
    }
  fx_status st = fx_import_provenance (store, compile_row, text, size, NULL, NULL);
  if (st != FX_OK && st != FX_ERR_PARSE)
    abort ();
  fx_arena_free (arena);
  free (text);
  return 0;
}
