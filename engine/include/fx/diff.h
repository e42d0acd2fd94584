/* fx/diff.h: what changed between two graphs, two compiles or two runs: one result type (a list of entries),
   printed as a unified-diff-like text or as JSON. */
#pragma once

#include "fx/common.h"
#include "fx/ir.h"
#include "fx/store.h"
#include "fx/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where an entry belongs; the text form prints sections in this order. X(ENUM, name) */
#define FX_DIFF_SECTION_LIST(X)                                                         \
  X (COMPILES, "compiles") /* workspace against workspace: compiles only on one side */ \
  X (GUARDS, "guards") /* guards and the guard failure that caused the recompile */     \
  X (GRAPH, "graph") /* nodes */                                                        \
  X (KERNELS, "kernels") /* kernels and fusion groups */                                \
  X (CODE, "code") /* generated code hunks */                                           \
  X (METRICS, "metrics") /* compile times and compilation_metrics */                    \
  X (RUNS, "runs") /* stored runs: timings, accuracy, verdict */

typedef enum fx_diff_section
{
#define FX_X(e, name) FX_DIFF_SECTION_##e,
  FX_DIFF_SECTION_LIST (FX_X)
#undef FX_X
  FX_DIFF_SECTION_COUNT
} fx_diff_section;

/* What an entry says. X(ENUM, name) */
#define FX_DIFF_KIND_LIST(X)                                                                                    \
  X (ADDED, "added") /* only in b */                                                                            \
  X (REMOVED, "removed") /* only in a */                                                                        \
  X (CHANGED, "changed") /* in both, field differs: old -> new */                                               \
  X (FAILURE, "failure") /* a guard failure that made b recompile (name_a: the guard of a, new_text: reason) */ \
  X (HUNK, "hunk") /* a code hunk: new_text holds "@@ -l,n +l,n @@" and its -/+/space lines */

typedef enum fx_diff_kind
{
#define FX_X(e, name) FX_DIFF_##e,
  FX_DIFF_KIND_LIST (FX_X)
#undef FX_X
  FX_DIFF_KIND_COUNT
} fx_diff_kind;

/* One difference. Strings live in the diff's arena; NULL where they do not apply. */
typedef struct fx_diff_entry
{
  fx_diff_section section;
  fx_diff_kind kind;
  const char *scope;          /* compile pair "0/0 -> 0/1", graph stage, artifact name: what the entry is part of */
  const char *item;           /* "node", "guard", "kernel", "fusion group", "metric", "run", "compile" */
  const char *name_a;         /* node/guard/kernel name in a */
  const char *name_b;         /* ... in b */
  const char *field;          /* CHANGED: "target", "args", "kwargs", "op", "name", "meta.dtype", "meta.shape",
                                 "meta.stride", "meta.device", "meta.val", "code", ... */
  const char *old_text;
  const char *new_text;
  bool informational;         /* shown, but does not make the inputs differ (compile times, run timings) */
  /* Runs: the numbers behind the text, NAN where they do not apply: an output's worst element difference and RMSE
     (item "output"), a time's ratio b / a (item "run" field "run_ms_median", item "kernel"). */
  double max_abs, rmse, ratio;
} fx_diff_entry;

/* A node pairing of a graph diff in merged order (b's order with a's removed nodes where they stood).
   a or b is NULL for a removed or an added node. The nodes belong to the graphs passed to fx_diff_graphs. */
typedef struct fx_diff_pair
{
  const fx_node *a;
  const fx_node *b;
  bool changed;
} fx_diff_pair;

/* Counts of the graph matching phases (why a pair was made), for tests and --stats. */
typedef struct fx_diff_match_stats
{
  size_t by_placeholder, by_provenance, by_name, by_target, by_structure;
} fx_diff_match_stats;

typedef struct fx_diff
{
  fx_arena *arena;
  char *label_a, *label_b;    /* "ws.fxwb:0/0", "model.py" */
  fx_diff_entry *entries;
  size_t n_entries, cap;
  /* The node pairing of the first graph diffed (what the app's split view draws), its graphs and their stage. */
  fx_diff_pair *pairs;
  size_t n_pairs;
  const fx_graph *graph_a, *graph_b;
  const char *pairs_scope;
  fx_diff_match_stats stats;
  /* Graphs read from workspaces by fx_diff_compiles, freed with the diff (pairs point into them). */
  fx_graph **owned;
  size_t n_owned;
} fx_diff;

fx_diff *fx_diff_new (const char *label_a, const char *label_b);
void fx_diff_free (fx_diff *diff);
/* Adds an entry; strings are copied into the diff's arena. */
fx_diff_entry *fx_diff_add (fx_diff *diff, fx_diff_section section, fx_diff_kind kind, const char *scope,
                            const char *item, const char *name_a, const char *name_b, const char *field,
                            const char *old_text, const char *new_text);
/* Entries that are not informational; 0: the inputs are the same. */
size_t fx_diff_count (const fx_diff *diff);

/* ------------------------------------------------------------------ graphs */

typedef struct fx_diff_graph_opts
{
  bool ignore_names;          /* do not report renamed nodes */
  bool ignore_meta;           /* do not compare meta['val'] */
  int context;                /* context lines of the text form (default 3) */
} fx_diff_graph_opts;

void fx_diff_graph_opts_init (fx_diff_graph_opts *opts);

/* Matches the nodes of a and b (placeholders by target, then provenance, then name, then target and position,
   then structure: linear in the node count with hash maps) and adds an entry per added, removed and changed node.
   scope names the entries (a stage, or NULL). The first graph diff keeps its pairing in diff->pairs (a and b must
   outlive it). */
fx_status fx_diff_graphs (fx_diff *diff, const fx_graph *a, const fx_graph *b, const char *scope,
                          const fx_diff_graph_opts *opts, fx_diag *diag);

/* One node as a line of the graph text: `name: "f32[8, 4][4, 1]cuda:0" = torch.ops.aten.add.Tensor(x, y)`. */
void fx_diff_node_line (const fx_node *node, fx_buf *out);

/* ------------------------------------------------------------------ text */

/* Line diff (Myers' O((N+M)D) algorithm) of two texts as unified-diff hunks with `context` lines around changes;
   adds one FX_DIFF_HUNK entry per hunk. Returns the number of hunks. */
size_t fx_diff_text (fx_diff *diff, fx_diff_section section, const char *scope, const char *a, const char *b,
                     int context);

/* Shortest edit script over two sequences of line hashes: fills ops (caller-allocated, n_a + n_b entries) with
   '=', '-', '+' and returns their count; -1 when more than max_d edits would be needed (max_d <= 0: no limit). */
long fx_diff_myers (const uint64_t *a, size_t n_a, const uint64_t *b, size_t n_b, long max_d, char *ops);

/* ------------------------------------------------------------------ compiles and runs (from workspaces) */

typedef enum fx_diff_what
{
  FX_DIFF_WHAT_GUARDS = 1 << 0,
  FX_DIFF_WHAT_GRAPH = 1 << 1,
  FX_DIFF_WHAT_KERNELS = 1 << 2,
  FX_DIFF_WHAT_CODE = 1 << 3,
  FX_DIFF_WHAT_METRICS = 1 << 4,
  FX_DIFF_WHAT_RUNS = 1 << 5,
  FX_DIFF_WHAT_ALL = 0x3f
} fx_diff_what;

typedef struct fx_diff_compile_opts
{
  unsigned what;              /* fx_diff_what bits */
  const char *stage;          /* graph stage to diff; NULL: "dynamo" (else the first stage both have); "all": every
                                 stage both compiles have */
  fx_diff_graph_opts graph;
} fx_diff_compile_opts;

void fx_diff_compile_opts_init (fx_diff_compile_opts *opts);

/* Diffs compile row ca of store sa against row cb of sb (the stores may be the same): guards (with the failure of
   ca that made cb recompile), graphs, kernels and fusion groups, generated code, metrics and stored runs. */
fx_status fx_diff_compiles (fx_diff *diff, fx_store *sa, int64_t ca, fx_store *sb, int64_t cb,
                            const fx_diff_compile_opts *opts, fx_diag *diag);

/* Pairs the compiles of two workspaces by frame and compile id (compiled-autograd id and attempt included) and
   diffs each pair; compiles on one side only are added/removed entries. */
fx_status fx_diff_workspaces (fx_diff *diff, fx_store *sa, fx_store *sb, const fx_diff_compile_opts *opts,
                              fx_diag *diag);

/* ------------------------------------------------------------------ run outputs */

/* Per output (tuples flattened) of b against a: worst element difference, RMSE and PyTorch's same() verdict (a as
   the reference, a64 its fp64 run when known, else allclose alone at tol 1e-3); a count, kind, shape or dtype
   mismatch is named. An output within same()'s tolerance is informational. */
void fx_diff_outputs (fx_diff *diff, const char *scope, const fx_value *a, size_t na, const fx_value *b, size_t nb,
                      const fx_value *a64, size_t n64);

/* The default per-run cap on the output bytes fx_run_outputs_store keeps (64 MiB). */
#define FX_RUN_OUTPUTS_CAP ((size_t) 64 << 20)

/* Stores a run's outputs (flattened) as run_outputs rows: each tensor's shape, dtype, strides and summary, and its
   data while the run's total stays within cap_bytes (later ones keep the summary only); then the run's inputs
   description and hash. Inside a transaction. */
fx_status fx_run_outputs_store (fx_store *store, int64_t run_id, const fx_value *outputs, size_t n, size_t cap_bytes,
                                const char *inputs, const char *inputs_hash, fx_diag *diag);

/* Diffs two stored runs (the stores may be the same): verdict, end-to-end and compile time with their ratio, the
   inputs they saw, per output max abs / RMSE / same() from the kept outputs ("outputs too large to keep" where
   only a summary was kept), per kernel the time ratio (kernels keyed "<ordinal>.<name>" as stored in the run's
   kernel_ms metrics). scope NULL: "run/A -> run/B". */
fx_status fx_diff_stored_runs (fx_diff *diff, fx_store *sa, int64_t run_a, fx_store *sb, int64_t run_b,
                               const char *scope, fx_diag *diag);

/* ------------------------------------------------------------------ output */

/* Unified-diff-like text, sections in a fixed order, entries in the order they were found. color: ANSI colours. */
void fx_diff_print_text (const fx_diff *diff, bool color, fx_buf *out);
/* {"a": .., "b": .., "same": bool, "differences": n, "entries": [{section, kind, scope, item, name_a, ...}],
   "pairs": [[a, b, changed], ...]} */
void fx_diff_print_json (const fx_diff *diff, fx_buf *out);

const char *fx_diff_section_name (fx_diff_section section); /* "guards" */
const char *fx_diff_kind_name (fx_diff_kind kind);          /* "added" */

#ifdef __cplusplus
}
#endif
