/* fx/importers.h: importers of real PyTorch artifacts (TORCH_TRACE logs, ...) into a workspace store. */
#pragma once

#include "fx/common.h"
#include "fx/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What can go wrong in an input without stopping the import: counted, with the first examples kept. */
typedef enum fx_import_warning
{
  FX_IMPORT_WARN_BAD_LINE,        /* a line that is not a glog record nor a payload line */
  FX_IMPORT_WARN_BAD_JSON,        /* a record whose metadata is not a JSON object */
  FX_IMPORT_WARN_ORPHAN_PAYLOAD,  /* payload lines with no record before them */
  FX_IMPORT_WARN_UNKNOWN_STRING,  /* a stack frame naming a string-table id never defined */
  FX_IMPORT_WARN_MD5_MISMATCH,    /* has_payload differs from the payload's md5 (kept) */
  FX_IMPORT_WARN_UNKNOWN_KIND,    /* a record kind this importer does not know (kept raw as an artifact) */
  FX_IMPORT_WARN_GRAPH_PARSE,     /* a graph payload the FX parser rejected (its text is kept) */
  FX_IMPORT_WARN_BAD_RECORD,      /* a known record whose content is not what PyTorch writes (skipped) */
  FX_IMPORT_WARN_IR_DUMP,         /* lines of an ir_*_fusion.txt that are no scheduler node (skipped) */
  FX_IMPORT_WARN_LONG_LINE,       /* a line longer than fx_import_set_max_line's limit (skipped, with its record) */
  FX_IMPORT_WARN_SKIPPED_FILE,    /* a folder entry that is no regular file inside the folder (a symlink out of it,
                                     a device, a FIFO): not read */
  FX_IMPORT_WARN_COUNT
} fx_import_warning;

const char *fx_import_warning_name (fx_import_warning w);

#define FX_IMPORT_EXAMPLES 3

typedef struct fx_import_example
{
  int64_t line;
  char text[160];
} fx_import_example;

typedef struct fx_import_stats
{
  bool already_imported;          /* the same content was imported before: nothing was added */
  int64_t lines, records;
  int64_t frames, compiles, graphs, kernels, guards, artifacts, events;
  int64_t ir_nodes, provenance, links;   /* scheduler nodes, kernel mappings, debug folders linked to compiles */
  int64_t warnings[FX_IMPORT_WARN_COUNT];
  fx_import_example examples[FX_IMPORT_WARN_COUNT][FX_IMPORT_EXAMPLES];
} fx_import_stats;

typedef void (*fx_import_progress_fn) (double fraction, void *user_data);

/* The longest line (bytes) the text importers read; a longer one is skipped with FX_IMPORT_WARN_LONG_LINE and its
   file:line. 0 restores the default, 64 MiB. Process-wide; set it before importing. */
void fx_import_set_max_line (size_t bytes);

/* Imports one TORCH_TRACE log into store in one transaction. Bad lines are skipped and counted in stats; the
   import fails (nothing written) only when the file cannot be read, holds no record at all, or the store fails. */
fx_status fx_import_torch_trace (fx_store *store, const char *path, fx_import_progress_fn progress,
                                 void *user_data, fx_import_stats *stats, fx_diag *diag);
/* The same from memory; name is used for diagnostics and as the input's path. */
fx_status fx_import_torch_trace_data (fx_store *store, const char *name, const char *data, size_t len,
                                      fx_import_progress_fn progress, void *user_data, fx_import_stats *stats,
                                      fx_diag *diag);

/* Following a TORCH_TRACE log that a running process is still writing (fxwb serve --follow): one input row made
   at the start, then each feed imports the complete records of data (the bytes from the caller's offset on) in one
   transaction and says how many bytes it used; the caller keeps the rest (a partial last line, and the last record,
   whose payload lines may still be coming, unless final) and hands it back with what is appended next. Bad lines
   are counted in the stats with their line numbers in the whole file. */
typedef struct fx_trace_follow fx_trace_follow;

/* size: the input's size as recorded (0 when unknown, e.g. a log still growing). */
fx_status fx_trace_follow_new (fx_store *store, const char *name, int64_t size, fx_trace_follow **out,
                               fx_diag *diag);
fx_status fx_trace_follow_feed (fx_trace_follow *f, const char *data, size_t len, bool final, size_t *consumed,
                                fx_diag *diag);
const fx_import_stats *fx_trace_follow_stats (const fx_trace_follow *f);
int64_t fx_trace_follow_input (const fx_trace_follow *f);
void fx_trace_follow_free (fx_trace_follow *f);

/* Splits Inductor output code (output_code.py or an inductor_output_code payload) into kernels. */
typedef struct fx_kernel_def
{
  const char *name, *kind, *device;     /* kind: "triton", "cpp", "extern"; device "cuda"/"cpu"/NULL */
  const char *code;                     /* the kernel's source text (the string passed to async_compile) */
  const char *nodes, *aten;             /* from "# Topologically Sorted Source Nodes: [..], Original ATen: [..]" */
  int call_order;                       /* position of its first launch in call(); -1 when not launched */
} fx_kernel_def;

/* Results are allocated from arena. */
fx_status fx_split_output_code (const char *text, size_t len, fx_arena *arena, fx_kernel_def **out, size_t *n,
                                fx_diag *diag);

/* A kernel launch in the wrapper's call(): the kernel ("triton_poi_fused_add_0", "extern_kernels.mm"), its debug
   handle from the "# [Provenance debug handles] NAME:N" comment above it (-1: none), the text after "(". */
typedef struct fx_kernel_launch
{
  const char *kernel;
  int handle;
  const char *args;
} fx_kernel_launch;

/* The launches of output code's call(), in order (allocated from arena). */
fx_status fx_output_code_launches (const char *text, size_t len, fx_arena *arena, fx_kernel_launch **out, size_t *n,
                                   fx_diag *diag);
/* The launch that computes a scheduler node writing writes ("buf0, buf3"): the first one naming one of those
   buffers among its arguments; -1 when none does. */
int fx_launch_writing (const fx_kernel_launch *launches, size_t n, const char *writes);

/* A scheduler node of ir_post_fusion.txt at top level: a FusedSchedulerNode with its members, or a single node. */
typedef struct fx_fusion_group
{
  const char *name;       /* "op0_op1_op3" */
  const char *kind;       /* "FusedSchedulerNode", "SchedulerNode", "ExternKernelSchedulerNode" */
  const char *nodes;      /* member scheduler nodes, comma-separated ("op0, op1, op3"); the name for a single node */
  const char *text;       /* its whole block */
} fx_fusion_group;

fx_status fx_split_post_fusion (const char *text, size_t len, fx_arena *arena, fx_fusion_group **out, size_t *n,
                                fx_diag *diag);

/* What fx_parse_ir_dump skipped: non-blank lines before the first scheduler node. */
typedef struct fx_ir_dump_issues
{
  int64_t skipped_lines;
  int first_line;
  char first_text[128];
} fx_ir_dump_issues;

/* Parses ir_pre_fusion.txt / ir_post_fusion.txt (stage "pre_fusion" / "post_fusion", copied into each node) into
   scheduler nodes in dump order: a FusedSchedulerNode is followed by its members (fused_into set). Never fails on
   content: what is not a node is skipped (issues may be NULL). Results are allocated from arena. */
fx_status fx_parse_ir_dump (const char *text, size_t len, const char *stage, fx_arena *arena, fx_store_ir_node **out,
                            size_t *n, fx_ir_dump_issues *issues, fx_diag *diag);

/* Parses inductor_provenance_tracking_node_mappings (JSON: preToPost, postToPre, cppCodeToPost) and stores one
   provenance row per cppCodeToPost entry with the pre-grad nodes of its post-grad nodes. Bad JSON: FX_ERR_PARSE with
   nothing stored. Version 2 mappings leave out the maps a graph has no entries for (a backward compile's is just
   {"version": 2.0}): no rows. store NULL: only checks. *n_rows (may be NULL): rows stored (or found). */
fx_status fx_import_provenance (fx_store *store, int64_t compile_row, const char *json, size_t len, int64_t *n_rows,
                                fx_diag *diag);

/* True when path is a TORCH_COMPILE_DEBUG folder: torch_compile_debug/, a run_* folder, or its torchinductor/. */
bool fx_is_debug_dir (const char *path);
/* Imports each torchinductor/model__N_* folder as compile "-/N" (N: Inductor's graph counter): fx_graph_readable.py
   (stage aot_inference), fx_graph_transformed.py (inductor_transformed), fx_graph_runnable.py (runnable),
   output_code.py kernels, ir_pre_fusion.txt / ir_post_fusion.txt scheduler nodes (post-fusion ones matched to the
   call() launch computing them) and fusion groups, the provenance mappings, and the files raw as artifacts. Then
   links each folder to the compile of another input (a TORCH_TRACE) that printed the same output code
   (fx_store_link_debug_compiles). One transaction; the same content twice adds nothing. Damaged files are counted
   (FX_IMPORT_WARN_IR_DUMP, _BAD_RECORD, _GRAPH_PARSE), never fatal. */
fx_status fx_import_debug_dir (fx_store *store, const char *path, fx_import_progress_fn progress, void *user_data,
                               fx_import_stats *stats, fx_diag *diag);

/* Imports a torch.export .pt2 archive: each models/<name>.json becomes compile "-/N" with an "export" graph (args,
   getitem nodes for multi-output ops, meta val from tensor_values, stack_trace, nn_module_stack, torch_fn) and a
   graph_signature artifact; the weights/constants configs are kept raw, the weights are not loaded. */
fx_status fx_import_pt2 (fx_store *store, const char *path, fx_import_stats *stats, fx_diag *diag);
/* A file of FX Python code (*.py: repro.py, print_readable, GraphModule.code): one compile with its graph, stage
   "minified" for a minifier's Repro, "user" otherwise. Parse errors are located; nothing is executed. */
fx_status fx_import_fx_code (fx_store *store, const char *path, fx_import_stats *stats, fx_diag *diag);
/* The same from memory (data must stay valid during the call). */
fx_status fx_import_pt2_data (fx_store *store, const char *name, const void *data, size_t len, fx_import_stats *stats,
                              fx_diag *diag);

/* Imports TORCH_LOGS text (torch_logs.txt: glog lines tagged "[0/1] [__guards]"): guards (the GUARDS tree),
   recompile reasons, graph breaks, graphs (graph_code, aot_graphs, post_grad_graphs), output code kernels; other
   artifacts kept raw. Each input is its own set of compiles. */
fx_status fx_import_torch_logs (fx_store *store, const char *path, fx_import_stats *stats, fx_diag *diag);
fx_status fx_import_torch_logs_data (fx_store *store, const char *name, const char *data, size_t len,
                                     fx_import_stats *stats, fx_diag *diag);

/* Imports a path, choosing the importer from its content: a TORCH_COMPILE_DEBUG folder, a .pt2 archive (zip), TORCH_LOGS
   text, or a TORCH_TRACE log (a file or a folder of *.log). */
fx_status fx_import_path (fx_store *store, const char *path, fx_import_progress_fn progress, void *user_data,
                          fx_import_stats *stats, fx_diag *diag);

#ifdef __cplusplus
}
#endif
