/* fx/store.h: the workspace store, one sqlite file (.fxwb) per workspace holding imported compiles, graphs,
   guards, kernels and runs. WAL mode: one writer and any number of readers may work at once, each with its own
   fx_store (an fx_store keeps prepared statements: use it from one thread at a time). */
#pragma once

#include "fx/common.h"
#include "fx/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the schema changes; fx_store_open migrates older files up to it. */
#define FX_STORE_SCHEMA_VERSION 7

typedef struct fx_store fx_store;

/* Opens (create: creates when missing) a workspace file, enables WAL and foreign keys and migrates the schema.
   A file written by a newer schema than this build knows is refused with FX_ERR_UNSUPPORTED, and so is an existing
   file that is not a workspace: another program's sqlite file, or (without create) an empty file; nothing is
   written to a refused file. Creating and migrating happen in one locked transaction, so processes opening the
   same new file at once all succeed. */
fx_status fx_store_open (const char *path, bool create, fx_store **out, fx_diag *diag);

/* Marks a freshly created workspace as a throwaway (fxwb report's temporary one): no fsync and the rollback journal
   in memory (it holds only the pages a transaction changes; a streamed import commits chunk by chunk). Rollback
   still works; a crash may leave the file unreadable, which is fine only because nobody opens it again. Never for
   a workspace the user keeps: a killed import must leave a valid file. */
fx_status fx_store_set_scratch (fx_store *store, fx_diag *diag);

/* Told while a store call waits for another process's lock on the workspace: path, seconds waited so far. */
typedef void (*fx_store_wait_fn) (const char *path, double waited_s, void *user_data);
/* How every store of this process waits for a lock another process holds (a long import, a run being stored):
   up to limit_s seconds (0: as long as it takes; the default), calling fn (may be NULL) first after report_after_s
   (default 1) and then every 5 s. A wait past the limit fails with FX_ERR_IO, "locked by another process".
   The engine prints nothing itself: the CLI's fn writes the message. */
void fx_store_set_lock_wait (double limit_s, double report_after_s, fx_store_wait_fn fn, void *user_data);
void fx_store_close (fx_store *store);
int fx_store_schema_version (fx_store *store);
/* The workspace row (created on open), for inputs. */
int64_t fx_store_workspace_id (fx_store *store);

/* ------------------------------------------------------------------ writing (inside a transaction) */

/* Writes are grouped: begin, add..., commit. A process killed before commit leaves the file as it was. */
fx_status fx_store_begin (fx_store *store, fx_diag *diag);
fx_status fx_store_commit (fx_store *store, fx_diag *diag);
/* fx_store_begin for one large import: in a workspace with no input yet, and that no other connection has open,
   the transaction runs on sqlite's rollback journal instead of WAL (each page written once; readers that open the
   file meanwhile wait for the commit); back to WAL at commit or rollback. Otherwise the same as fx_store_begin. */
fx_status fx_store_begin_bulk (fx_store *store, fx_diag *diag);
void fx_store_rollback (fx_store *store);

/* An input already imported (same content hash) returns FX_OK with *existing set to its id, else *existing = 0. */
fx_status fx_store_find_input (fx_store *store, const char *hash, int64_t *existing, fx_diag *diag);
fx_status fx_store_add_input (fx_store *store, const char *path, const char *kind, const char *hash,
                              int64_t size, int64_t *id, fx_diag *diag);
/* An input of this size in bytes (or of an unknown size), if any: *existing its id, else 0. An importer that finds
   none knows its file is new before hashing it, and can hash while it reads. */
fx_status fx_store_find_input_size (fx_store *store, int64_t size, int64_t *existing, fx_diag *diag);
/* Sets the content hash of an input added before its hash was known (inside the same transaction). */
fx_status fx_store_set_input_hash (fx_store *store, int64_t input_id, const char *hash, fx_diag *diag);

/* A compile id as PyTorch writes it: [frame/frame_compile_id] plus attempt; -1 = missing. */
typedef struct fx_compile_id
{
  int compiled_autograd_id;
  int frame_id;
  int frame_compile_id;
  int attempt;
} fx_compile_id;

/* "0/1", "0/1_2" (attempt shown when not 0), "!0/0/1" with a compiled-autograd id, "-" for missing parts. */
void fx_compile_id_format (const fx_compile_id *cid, char *out, size_t size);
/* Parses the forms above, with or without the surrounding [ ]. */
fx_status fx_compile_id_parse (const char *text, fx_compile_id *cid, fx_diag *diag);

/* Finds or creates the frame and compile rows of cid within an input. */
fx_status fx_store_ensure_compile (fx_store *store, int64_t input_id, const fx_compile_id *cid,
                                   int64_t *compile_row, fx_diag *diag);

/* What an importer learns about a compile; NULL strings / negative numbers leave the stored value. */
typedef struct fx_store_compile_update
{
  const char *function;
  const char *file;
  int line;                  /* -1: unknown */
  const char *user_stack;    /* the stack that triggered the compile, "file:line in fn" per line */
  int has_graph_break;       /* -1 unknown, 0/1 */
  int has_recompile;
  const char *fail_type;
  const char *fail_reason;
  double start_time;         /* seconds since the epoch; < 0 unknown */
  double entire_frame_compile_s;
  double backend_compile_s;
  double inductor_compile_s;
  int graph_op_count;
  int guard_count;
  int has_metrics;           /* 1 once compilation_metrics was seen */
} fx_store_compile_update;

void fx_store_compile_update_init (fx_store_compile_update *u);
fx_status fx_store_update_compile (fx_store *store, int64_t compile_row, const fx_store_compile_update *u,
                                   fx_diag *diag);

/* Graph stages: "dynamo", "aot_forward", "aot_backward", "aot_inference", "aot_joint", "pre_grad", "post_grad",
   "inductor_transformed", "user", "minified", or a raw artifact name (e.g. "before_post_grad_graph").
   graph may be NULL (text did not parse); text is the original text.
   A training compile (one with an "aot_backward" graph) is compiled twice by Inductor: the stages and artifacts of
   its backward compile carry FX_BACKWARD_SUFFIX ("post_grad_backward", "runnable_backward",
   "inductor_output_code_backward"); its backward kernels follow the forward's (ordinals after theirs). */
#define FX_BACKWARD_SUFFIX "_backward"
fx_status fx_store_add_graph (fx_store *store, int64_t compile_row, const char *stage, const fx_graph *graph,
                              const char *text, int64_t *id, fx_diag *diag);
fx_status fx_store_add_guard (fx_store *store, int64_t compile_row, const char *kind, const char *source,
                              const char *code, const char *user_line, fx_diag *diag);
fx_status fx_store_add_guard_failure (fx_store *store, int64_t compile_row, const char *failed_compile,
                                      const char *reason, const char *user_stack, fx_diag *diag);
fx_status fx_store_add_graph_break (fx_store *store, int64_t compile_row, const char *reason,
                                    const char *explanation, const char *user_stack, const char *text,
                                    fx_diag *diag);
/* nodes / aten: the comma-separated lists from "# Topologically Sorted Source Nodes: [..], Original ATen: [..]". */
/* ordinal: definition order; call_order: position of its first launch in the wrapper's call() (-1: none). */
fx_status fx_store_add_kernel (fx_store *store, int64_t compile_row, int ordinal, int call_order, const char *name,
                               const char *kind, const char *device, const char *code, const char *nodes,
                               const char *aten, fx_diag *diag);
fx_status fx_store_add_fusion_group (fx_store *store, int64_t compile_row, const char *name, const char *nodes,
                                     const char *text, fx_diag *diag);
/* compile_row 0: an artifact of the input rather than of one compile. */
fx_status fx_store_add_artifact (fx_store *store, int64_t input_id, int64_t compile_row, const char *name,
                                 const char *kind, const char *text, fx_diag *diag);
fx_status fx_store_add_metric (fx_store *store, int64_t compile_row, const char *key, const char *value,
                               fx_diag *diag);
fx_status fx_store_add_event (fx_store *store, int64_t input_id, int64_t compile_row, const char *name,
                              const char *phase, double ts_us, const char *json, fx_diag *diag);

typedef struct fx_store_run
{
  const char *backend, *mode, *options_json, *device, *error;
  double compile_ms, run_ms_median, run_ms_min, run_ms_max, accuracy;
  int64_t peak_bytes;
  /* Schema 3. verdict: "pass", "fail", "error", "not checked" (NULL: unknown); repeat: timed calls (0: unknown);
     n_kernels: -1 unknown; engine_compile: the compile row holding the kernels this run generated (0: none). */
  const char *verdict;
  int repeat;
  int n_kernels;
  int64_t engine_compile;
} fx_store_run;

fx_status fx_store_add_run (fx_store *store, int64_t graph_id, const fx_store_run *run, int64_t *id,
                            fx_diag *diag);
/* Schema 5: a run stored in two steps, so a process killed while the run executes leaves a run marked incomplete
   rather than nothing or an empty row that reads as finished. start writes backend, mode, options and device with
   status "started"; finish writes the results and status "done". */
fx_status fx_store_start_run (fx_store *store, int64_t graph_id, const fx_store_run *run, int64_t *id,
                              fx_diag *diag);
fx_status fx_store_finish_run (fx_store *store, int64_t run_id, const fx_store_run *run, fx_diag *diag);

/* ------------------------------------------------------------------ schema 4: IR dumps, provenance, shapes, links
   (TORCH_COMPILE_DEBUG folders and the trace records beyond raw text; readers allocate from the caller's arena).
   The readers taking a compile_row also return the rows of the debug-folder compile linked to it (see
   fx_store_link_debug_compiles), so a trace compile shows its folder's IR dumps and mappings. */

/* A scheduler node of ir_pre_fusion.txt / ir_post_fusion.txt. Lists are ", "-separated. */
typedef struct fx_store_ir_node
{
  const char *stage;          /* "pre_fusion" or "post_fusion" */
  int ordinal;                /* position in the dump, members included */
  const char *name;           /* "op0", "op0_op1_op3" */
  const char *kind;           /* "SchedulerNode", "FusedSchedulerNode", "ExternKernelSchedulerNode", ... */
  const char *ir_type;        /* what is in the parentheses: "ComputedBuffer", "SchedulerNode,SchedulerNode" */
  const char *fused_into;     /* the fused node this one is a member of (snodes[i]); NULL at top level */
  const char *members;        /* a fused node's members "op0, op1, op3"; NULL otherwise */
  const char *device;         /* group.device: "cuda:0" */
  const char *iteration;      /* group.iteration: "(32, 256)" */
  const char *sizes;          /* "((32,), (256,))" */
  const char *writes;         /* buffers written: "buf0, buf1" */
  const char *reads;          /* buffers read (met and unmet dependencies): "arg2_1, buf0" */
  const char *unmet;          /* the reads produced by other nodes (unmet dependencies) */
  const char *buffers;        /* one line per output: "buf0: ComputedBuffer FixedLayout('cuda:0', ...)" */
  const char *extern_kernel;  /* node.kernel: "extern_kernels.mm" */
  const char *text;           /* the node's block */
  /* The launch in output code's call() that computes the node (post-fusion nodes; a member shares its fused
     node's): kernel name and provenance debug handle (-1: none); NULL when output code was not there. */
  const char *kernel;
  int handle;
  /* Read only: the node's origins, the post-grad nodes its launch computes and their pre-grad nodes (from the
     provenance mappings of its compile or of the linked trace compile); NULL when unknown. */
  const char *post_nodes, *pre_nodes;
} fx_store_ir_node;

fx_status fx_store_add_ir_node (fx_store *store, int64_t compile_row, const fx_store_ir_node *node, fx_diag *diag);
/* stage NULL: both dumps. Ordered by stage (pre_fusion first), then ordinal. */
fx_status fx_store_list_ir_nodes (fx_store *store, int64_t compile_row, const char *stage, fx_arena *arena,
                                  fx_store_ir_node **out, size_t *n, fx_diag *diag);

/* A kernel launch of inductor_provenance_tracking_node_mappings (cppCodeToPost "name:handle") with the post-grad
   nodes it computes and their pre-grad nodes (through postToPre). handle -1: none in the key. */
typedef struct fx_store_provenance
{
  const char *kernel;
  int handle;
  const char *post_nodes, *pre_nodes;
} fx_store_provenance;

fx_status fx_store_add_provenance (fx_store *store, int64_t compile_row, const char *kernel, int handle,
                                   const char *post_nodes, const char *pre_nodes, fx_diag *diag);
fx_status fx_store_list_provenance (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_provenance **out,
                                    size_t *n, fx_diag *diag);

/* symbolic_shape_specialization, guard_added, guard_added_fast records. compile_row 0: outside a compile. */
typedef struct fx_store_shape_event
{
  const char *kind;           /* "specialization", "guard_added", "guard_added_fast" */
  const char *symbol;         /* specialization: "s0" */
  const char *sources;        /* specialization: "L['x'].size()[0]" (", "-separated) */
  const char *value;          /* specialization: "4" */
  const char *expr;           /* guard: "Eq(s0, 4)" */
  const char *reason;         /* specialization: why */
  const char *user_stack;     /* '  File "f.py", line 3, in fn\n    code\n' per frame; NULL: none */
  const char *stack;          /* the framework stack, same form */
} fx_store_shape_event;

fx_status fx_store_add_shape_event (fx_store *store, int64_t input_id, int64_t compile_row,
                                    const fx_store_shape_event *ev, fx_diag *diag);
/* compile_row 0: the events outside any compile. */
fx_status fx_store_list_shape_events (fx_store *store, int64_t compile_row, fx_arena *arena,
                                      fx_store_shape_event **out, size_t *n, fx_diag *diag);

/* The md5 of a compile's output code and its kernel names in definition order ("k0 k1"), written by the importers;
   used to link a TORCH_COMPILE_DEBUG folder to the trace compile that printed the same code. */
fx_status fx_store_add_output_code (fx_store *store, int64_t input_id, int64_t compile_row, const char *md5,
                                    const char *kernel_names, fx_diag *diag);
/* Links every not yet linked compile of a torch_compile_debug input to a compile of another input: the first
   unlinked one (in row order) with the same output-code md5, else with the same kernel names. *linked (may be NULL):
   links added. Call inside the import's transaction after either input is written. */
fx_status fx_store_link_debug_compiles (fx_store *store, int64_t *linked, fx_diag *diag);

typedef struct fx_store_input
{
  int64_t id;
  const char *path, *kind, *hash;
  int64_t size;
} fx_store_input;

fx_status fx_store_list_inputs (fx_store *store, fx_arena *arena, fx_store_input **out, size_t *n, fx_diag *diag);

/* Timeline events (chromium_event records) in file order; input_id 0: of every input. json: the whole event. */
typedef struct fx_store_event
{
  int64_t input_id, compile_row;
  const char *name, *phase, *json;
  double ts_us;
} fx_store_event;

fx_status fx_store_list_events (fx_store *store, int64_t input_id, fx_arena *arena, fx_store_event **out, size_t *n,
                                fx_diag *diag);

/* ------------------------------------------------------------------ reading
   Results are plain structs allocated from the caller's arena (free the arena to free them). */

typedef struct fx_store_compile
{
  int64_t id;
  int64_t input_id;
  char compile_id[48];       /* "0/1" */
  fx_compile_id cid;
  const char *function, *file, *user_stack, *status;  /* status: "ok", "graph break", "recompiled", "failed" */
  int line;
  const char *fail_type, *fail_reason;
  double start_time, entire_frame_compile_s, backend_compile_s, inductor_compile_s;
  int graph_op_count, guard_count;
  int n_graphs, n_kernels, n_guards, n_breaks, n_failures;
  bool training;             /* it has an aot_backward graph (see FX_BACKWARD_SUFFIX) */
  /* Schema 4: the compile linked to this one, by its compile id ("0/1") for a debug-folder compile, by its folder
     name ("model__3_inference_3.3") for a trace compile; NULL when none. */
  const char *linked;
} fx_store_compile;

fx_status fx_store_list_compiles (fx_store *store, fx_arena *arena, fx_store_compile **out, size_t *n,
                                  fx_diag *diag);
/* Finds a compile by its id text ("0/1", "[0/1]"); the first input holding it. "rank3/0/1" (or "rank3:0/1"): the
   one of rank 3's trace in a multi-rank workspace. */
fx_status fx_store_find_compile (fx_store *store, const char *compile_id, int64_t *compile_row, fx_diag *diag);

typedef struct fx_store_graph_info
{
  int64_t id;
  int64_t compile_row;
  const char *stage;
  int n_nodes;
  bool parsed;               /* false: only the original text is stored */
} fx_store_graph_info;

fx_status fx_store_list_graphs (fx_store *store, int64_t compile_row, fx_arena *arena,
                                fx_store_graph_info **out, size_t *n, fx_diag *diag);
/* The graph from its canonical JSON (*graph NULL when it did not parse) and/or its original text (malloc'd). */
fx_status fx_store_get_graph (fx_store *store, int64_t graph_id, fx_graph **graph, char **text, fx_diag *diag);

typedef struct fx_store_guard
{
  const char *kind, *source, *code, *user_line;
} fx_store_guard;
fx_status fx_store_list_guards (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_guard **out,
                                size_t *n, fx_diag *diag);

typedef struct fx_store_guard_failure
{
  const char *failed_compile, *reason, *user_stack;
} fx_store_guard_failure;
fx_status fx_store_list_guard_failures (fx_store *store, int64_t compile_row, fx_arena *arena,
                                        fx_store_guard_failure **out, size_t *n, fx_diag *diag);

typedef struct fx_store_graph_break
{
  const char *reason, *explanation, *user_stack, *text;
} fx_store_graph_break;
fx_status fx_store_list_graph_breaks (fx_store *store, int64_t compile_row, fx_arena *arena,
                                      fx_store_graph_break **out, size_t *n, fx_diag *diag);

typedef struct fx_store_kernel
{
  int ordinal, call_order;
  const char *name, *kind, *device, *code, *nodes, *aten;
  /* Schema 4: from the provenance mappings (over all launches, duplicates removed); NULL when none. */
  const char *post_nodes, *pre_nodes;
  /* Schema 7: "backward" for a kernel of a training compile's backward Inductor compile; NULL otherwise. */
  const char *part;
} fx_store_kernel;
fx_status fx_store_list_kernels (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_kernel **out,
                                 size_t *n, fx_diag *diag);
/* Marks the compile's kernels from first_ordinal on as of part ("backward"). */
fx_status fx_store_set_kernels_part (fx_store *store, int64_t compile_row, int first_ordinal, const char *part,
                                     fx_diag *diag);

typedef struct fx_store_fusion_group
{
  const char *name, *nodes, *text;
} fx_store_fusion_group;
fx_status fx_store_list_fusion_groups (fx_store *store, int64_t compile_row, fx_arena *arena,
                                       fx_store_fusion_group **out, size_t *n, fx_diag *diag);

typedef struct fx_store_kv
{
  const char *key, *value;
} fx_store_kv;
fx_status fx_store_list_metrics (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_kv **out,
                                 size_t *n, fx_diag *diag);
/* Artifacts: key = name, value = text; a trace compile's own, then those of its linked debug folder (schema 4).
   compile_row 0: those outside any compile. */
fx_status fx_store_list_artifacts (fx_store *store, int64_t compile_row, fx_arena *arena, fx_store_kv **out,
                                   size_t *n, fx_diag *diag);

/* Row counts for summaries: table is one of the schema's table names (checked against a fixed list). */
fx_status fx_store_count (fx_store *store, const char *table, int64_t *count, fx_diag *diag);

/* ------------------------------------------------------------------ app-kernels additions (issue 4)
   Readers the desktop app needs: the runs of a graph (fxwb compare --workspace writes them) and a read-only open. */

/* A stored run; numbers that were not measured (NULL in the file) read as NAN, peak_bytes as -1. */
typedef struct fx_store_run_row
{
  int64_t id;
  int64_t graph_id;
  const char *backend, *mode, *options_json, *device, *error;
  double compile_ms, run_ms_median, run_ms_min, run_ms_max, accuracy;
  int64_t peak_bytes;
  double created;            /* julian day; NAN when unknown */
  /* Read when the file's schema has them (fxwb run/compare write them), else NULL / 0 / -1 / 0: verdict "pass",
     "fail", "error", "not checked"; repeat: timed calls; n_kernels; engine_compile: the compile row of the kernels
     the run generated. */
  const char *verdict;
  int repeat;
  int n_kernels;
  int64_t engine_compile;
  /* Schema 5: started but never finished (the process was killed or crashed while the run executed). */
  bool incomplete;
  /* Schema 6: the inputs the run saw ("spec, seed 0") and a hash of their values (NULL: unknown), and how many
     outputs were kept (-1: none, a run stored before schema 6 or without outputs). */
  const char *inputs, *inputs_hash;
  int n_outputs;
  /* The graph the run belongs to: its stage, compile row and compile id text ("0/1"); NULL / 0 without a graph. */
  const char *stage;
  int64_t compile_row;
  const char *compile_id;
} fx_store_run_row;

/* The runs of one graph in the order they were stored. */
fx_status fx_store_list_runs (fx_store *store, int64_t graph_id, fx_arena *arena, fx_store_run_row **out, size_t *n,
                              fx_diag *diag);

/* ------------------------------------------------------------------ schema 6: run outputs
   What a run returned, kept so two stored runs can be diffed number by number (fx/diff.h: fx_diff_stored_runs). */

/* Every run of the workspace in the order stored. */
fx_status fx_store_list_all_runs (fx_store *store, fx_arena *arena, fx_store_run_row **out, size_t *n, fx_diag *diag);
/* One run by its id (FX_ERR_NOT_FOUND when absent). */
fx_status fx_store_get_run (fx_store *store, int64_t run_id, fx_arena *arena, fx_store_run_row *out, fx_diag *diag);

/* One output of a run (tuples flattened, in order). */
typedef struct fx_store_run_output
{
  int ordinal;
  const char *kind;           /* "tensor", "int", "float", "bool", "none", "other" */
  const char *dtype;          /* a tensor's: "float32" */
  const char *shape;          /* "8, 4" (empty for a 0-d tensor) */
  const char *strides;        /* "4, 1": the strides the run returned (data is kept contiguous) */
  const char *device;         /* "cpu" */
  int64_t numel;              /* -1: not a tensor */
  double min, max, mean;      /* a tensor's summary over finite elements; NAN when unknown */
  const char *value;          /* a scalar's value as text */
  const void *data;           /* the tensor's elements, contiguous, little endian; NULL: not kept (over the cap) */
  size_t nbytes;
} fx_store_run_output;

/* The inputs a run saw and how many outputs were written for it (-1: none kept); inside a transaction. */
fx_status fx_store_set_run_inputs (fx_store *store, int64_t run_id, const char *inputs, const char *inputs_hash,
                                   int n_outputs, fx_diag *diag);
fx_status fx_store_add_run_output (fx_store *store, int64_t run_id, const fx_store_run_output *output, fx_diag *diag);
/* In ordinal order; none on a file older than schema 6. */
fx_status fx_store_list_run_outputs (fx_store *store, int64_t run_id, fx_arena *arena, fx_store_run_output **out,
                                     size_t *n, fx_diag *diag);

/* Opens an existing workspace for reading only: no migration, no WAL switch, no workspace row, nothing written.
   A file whose folder does not allow the WAL's shared-memory file is opened as immutable. Files of another program,
   of schema 0 or of a newer schema are refused as fx_store_open refuses them. Writes through this handle fail. */
fx_status fx_store_open_readonly (const char *path, fx_store **out, fx_diag *diag);

#ifdef __cplusplus
}
#endif
