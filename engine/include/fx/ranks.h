/* fx/ranks.h: the ranks of a distributed run imported into one workspace (one TORCH_TRACE per rank) and where they
   diverge: compiles only some ranks made, graphs, guards or cache results that differ for the same compile id, and
   collectives issued in another order. */
#pragma once

#include "fx/common.h"
#include "fx/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rank in a TORCH_TRACE file name: "dedicated_log_torch_trace_rank_3_0is17lk1.log" → 3; -1 when none. Only
   the last path component is read. */
int fx_rank_from_path (const char *path);

typedef struct fx_rank_input
{
  int rank;
  int64_t input_id;
  const char *path;
} fx_rank_input;

/* The inputs whose file names carry a rank, by rank (then input id). None: *n 0. */
fx_status fx_ranks_list (fx_store *store, fx_arena *arena, fx_rank_input **out, size_t *n, fx_diag *diag);

typedef enum fx_rank_div_kind
{
  FX_RANK_DIV_COMPILES,     /* a compile id some ranks made and others did not */
  FX_RANK_DIV_GRAPH,        /* a graph (by stage) whose text differs */
  FX_RANK_DIV_GUARDS,       /* the guards differ */
  FX_RANK_DIV_CACHE,        /* cache hit/miss/bypass differ */
  FX_RANK_DIV_COLLECTIVES,  /* the collectives of a graph are another sequence */
  FX_RANK_DIV_RUNTIME,      /* Inductor's runtime estimates (inductor_runtime_and_tensor_meta) differ: one rank has
                               none, or their totals differ by more than FX_RANK_RUNTIME_TOLERANCE */
  FX_RANK_DIV_COUNT
} fx_rank_div_kind;

/* The relative difference of two ranks' estimated runtimes of one compile past which they diverge: estimates are
   computed, not measured, but a collective's may come from a benchmark. */
#define FX_RANK_RUNTIME_TOLERANCE 0.05

/* "compiles", "graph", "guards", "cache", "collectives", "runtime". */
const char *fx_rank_div_kind_name (fx_rank_div_kind kind);

typedef struct fx_rank_divergence
{
  fx_rank_div_kind kind;
  const char *compile_id;   /* "1/1" */
  const char *ranks;        /* the ranks that differ from the lowest rank's (or that lack / alone have the compile):
                               "1, 3" */
  int ref_rank;             /* the rank compared against */
  int64_t ref_compile_row;  /* its compile row (0: it lacks the compile) */
  int other_rank;           /* the first rank in ranks */
  int64_t other_compile_row;/* its compile row (0: it lacks the compile) */
  const char *detail;       /* one line: "rank 1 has it, ranks 0, 2, 3 do not", "stages aot_inference differ" */
} fx_rank_divergence;

/* Compares the ranks compile id by compile id (in the lowest rank's order, then the others'). Fewer than two ranks:
   *n 0. Results are allocated from arena. */
fx_status fx_ranks_diverge (fx_store *store, fx_arena *arena, fx_rank_divergence **out, size_t *n, fx_diag *diag);
/* The same over RANKS from fx_ranks_list, for a caller that has listed them already. */
fx_status fx_ranks_diverge_from (fx_store *store, fx_arena *arena, const fx_rank_input *ranks, size_t nr,
                                 fx_rank_divergence **out, size_t *n, fx_diag *diag);

#ifdef __cplusplus
}
#endif
