/* fx/provenance.h: Inductor's provenance tracking (inductor_provenance_tracking_node_mappings) read as a chain:
   a pre-grad node, the post-grad nodes made from it, the generated kernels computing those, and the lines of the
   stored code where each kernel is launched and defined. Navigable from any of the three ends. */
#pragma once

#include "fx/common.h"
#include "fx/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fx_prov_side
{
  FX_PROV_PRE_GRAD,   /* a node of the pre-grad graph (preToPost) */
  FX_PROV_POST_GRAD,  /* a node of the post-grad graph (postToPre, postToCppCode) */
  FX_PROV_KERNEL,     /* a generated kernel or extern call (cppCodeToPost "name:handle") */
} fx_prov_side;

/* "pre_grad", "post_grad", "kernel". */
const char *fx_prov_side_name (fx_prov_side side);

typedef struct fx_prov_kernel
{
  const char *name;       /* "cpp_fused_relu_0", "aoti_torch_cpu_addmm_out" */
  int handle;             /* the provenance debug handle (2 of "cpp_fused_relu_0:2"); -1: none */
  /* Where the wrapper launches it: the code (see fx_provenance_code) and its 1-based line; NULL/0 when not found. */
  const char *launch_code;
  int launch_line;
  /* Where it is defined (`def NAME(`, `void NAME(`, `NAME = async_compile...`); NULL/0 for an extern call. */
  const char *def_code;
  int def_line;
} fx_prov_kernel;

typedef struct fx_provenance
{
  fx_prov_side side;      /* what the node asked for is */
  const char *node;       /* its name ("relu"; a kernel's "name:handle") */
  const char **pre;       /* the pre-grad nodes of the chain, in the mapping's order */
  size_t n_pre;
  const char **post;      /* the post-grad nodes */
  size_t n_post;
  fx_prov_kernel *kernels;
  size_t n_kernels;
} fx_provenance;

/* A compile's mappings and stored codes, loaded once to answer many chains without the store (the app's provenance
   pane on every node selection). Allocated from the arena given to fx_provenance_load. */
typedef struct fx_provenance_map fx_provenance_map;

/* *out NULL when the compile has no mappings. */
fx_status fx_provenance_load (fx_store *store, int64_t compile_row, fx_arena *arena, fx_provenance_map **out,
                              fx_diag *diag);
/* As fx_provenance_chain, over a loaded map. */
fx_status fx_provenance_map_chain (const fx_provenance_map *map, const char *node, fx_arena *arena,
                                   fx_provenance *out, fx_diag *diag);
/* The text of a code the map holds (see fx_provenance_code); NULL when none. */
const char *fx_provenance_map_code (const fx_provenance_map *map, const char *code);

/* Whether the compile has provenance mappings (its own or its linked debug folder's). */
fx_status fx_provenance_has (fx_store *store, int64_t compile_row, bool *has, fx_diag *diag);

/* The chain of node in the compile's provenance mappings. node: "pre_grad:NAME", "post_grad:NAME", "kernel:NAME"
   (NAME or NAME:HANDLE), or a bare name, looked up as a pre-grad node, then a post-grad node, then a kernel.
   No mappings, or no such node: FX_ERR_NOT_FOUND, naming what there is. Results come from arena. */
fx_status fx_provenance_chain (fx_store *store, int64_t compile_row, const char *node, fx_arena *arena,
                               fx_provenance *out, fx_diag *diag);

/* The text of a stored code of the compile that fx_prov_kernel names ("inductor_output_code",
   "inductor_aot_wrapper_code", "inductor_aot_kernel_code"; a graph_dump's payload without its header line).
   None: FX_ERR_NOT_FOUND. */
fx_status fx_provenance_code (fx_store *store, int64_t compile_row, const char *code, fx_arena *arena,
                              const char **text, fx_diag *diag);

#ifdef __cplusplus
}
#endif
