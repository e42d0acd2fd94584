/* fx/store.h: the workspace store, one sqlite file (.fxwb) per workspace; written by importers, capture and runs, read by the app and fxwb. */
#pragma once

#include "fx/common.h"
#include "fx/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped with every schema change; fx_store_open migrates older files forward. */
#define FX_STORE_SCHEMA_VERSION 1

typedef struct fx_store fx_store;
typedef int64_t fx_id;   /* a row id; 0 means none */

typedef enum fx_store_mode
{
  FX_STORE_READ,     /* existing file, read-only (the app while fxwb writes) */
  FX_STORE_WRITE,    /* existing file, read-write */
  FX_STORE_CREATE,   /* read-write, created when missing */
} fx_store_mode;

/* Opens (WAL, foreign keys, busy timeout) and migrates. Not a workspace / unreadable: FX_ERR_IO or FX_ERR_PARSE with diag. */
fx_status fx_store_open (const char *path, fx_store_mode mode, fx_store **out, fx_diag *diag);
void fx_store_close (fx_store *store);
const char *fx_store_path (const fx_store *store);
int fx_store_schema_version (fx_store *store);

/* Transactions nest by counting: only the outermost commit reaches disk. A rollback aborts the outermost. */
fx_status fx_store_begin (fx_store *store, fx_diag *diag);
fx_status fx_store_commit (fx_store *store, fx_diag *diag);
void fx_store_rollback (fx_store *store);

/* ---------------------------------------------------------------- compile ids */

/* tlparse's CompileId; -1 means missing. */
typedef struct fx_compile_id
{
  int ca;             /* compiled_autograd_id */
  int frame;
  int frame_compile;
  int attempt;
} fx_compile_id;

#define FX_COMPILE_ID_NONE ((fx_compile_id) { -1, -1, -1, -1 })
/* "0/1", "0/1_2" (attempt shown when != 0), "!0/0/1", "!0/-/-". */
void fx_compile_id_format (const fx_compile_id *cid, char *out, size_t out_size);
/* Accepts the forms above, with or without the brackets. */
bool fx_compile_id_parse (const char *text, fx_compile_id *out);

/* ---------------------------------------------------------------- rows */

/* An imported input (a file or folder). Its content hash makes imports idempotent. */
typedef struct fx_store_source
{
  fx_id id;
  const char *path;
  const char *kind;      /* fx_import_kind_name () */
  const char *hash;      /* hex content hash */
  int64_t size;
  double imported_at;    /* unix seconds */
} fx_store_source;

typedef struct fx_store_frame
{
  fx_id id;
  int frame;             /* Dynamo's frame_id */
  const char *function;  /* co_name of the first compile */
  const char *file;
  int line;
  int n_compiles;        /* read API only */
} fx_store_frame;

typedef enum fx_compile_status
{
  FX_COMPILE_OK,
  FX_COMPILE_GRAPH_BREAK,  /* compiled, with a graph break (a resume function follows) */
  FX_COMPILE_RECOMPILED,   /* a later compile of the same frame replaced it (guard failure) */
  FX_COMPILE_FAILED,       /* fail_type set, or no output */
  FX_COMPILE_UNKNOWN,
  FX_COMPILE_STATUS_COUNT
} fx_compile_status;

const char *fx_compile_status_name (fx_compile_status status);   /* "ok", "graph break", "recompiled", "failed", "unknown" */

typedef struct fx_store_compile
{
  fx_id id;
  fx_id source;
  fx_id frame;             /* fx_store_frame.id (write API: filled by the store from cid.frame) */
  fx_compile_id cid;
  const char *function;    /* co_name */
  const char *file;        /* co_filename */
  int line;                /* co_firstlineno */
  fx_compile_status status;
  const char *fail_type;
  const char *fail_reason;
  const char *user_stack;  /* dynamo_start's stack as text: 'File "f", line N, in fn' lines, outermost first */
  double start_time;       /* unix seconds; 0 unknown */
  double compile_time_s;   /* entire_frame_compile_time_s; <0 unknown */
  /* read API only: */
  int n_graphs;
  int n_kernels;
  int n_guards;
  int n_breaks;
  int n_recompile_reasons;
} fx_store_compile;

typedef enum fx_graph_stage
{
  FX_STAGE_DYNAMO,
  FX_STAGE_AOT_FORWARD,
  FX_STAGE_AOT_BACKWARD,
  FX_STAGE_AOT_INFERENCE,
  FX_STAGE_AOT_JOINT,
  FX_STAGE_PRE_GRAD,         /* inductor_pre_grad_graph / after_pre_grad_graph */
  FX_STAGE_POST_GRAD,        /* inductor_post_grad_graph */
  FX_STAGE_INDUCTOR,         /* inductor-transformed (our own pipeline) */
  FX_STAGE_USER,             /* FX code / repro.py / .pt2 imported directly, captured graphs */
  FX_STAGE_MINIFIED,
  FX_STAGE_OTHER,            /* other graph artifacts (before_pre_grad_graph, fx_graph_runnable, ...) */
  FX_STAGE_COUNT
} fx_graph_stage;

/* "dynamo", "aot_forward", "aot_backward", "aot_inference", "aot_joint", "pre_grad", "post_grad", "inductor", "user", "minified", "other" */
const char *fx_graph_stage_name (fx_graph_stage stage);
bool fx_graph_stage_parse (const char *name, fx_graph_stage *out);

typedef struct fx_store_graph
{
  fx_id id;
  fx_id compile;           /* 0 for graphs outside a compile (.pt2, FX code) */
  fx_graph_stage stage;
  const char *name;        /* the envelope/artifact name: "dynamo_output_graph", "fx_graph_runnable", file name */
  const char *text;        /* the original text, always kept */
  const char *json;        /* fx_graph_to_json, NULL when the text did not parse */
  const char *parse_error; /* the parser's diagnostic when json is NULL */
  int n_nodes;             /* -1 unparsed */
} fx_store_graph;

typedef struct fx_store_guard
{
  fx_id id;
  fx_id compile;
  const char *kind;        /* TENSOR_MATCH, TYPE_MATCH, ID_MATCH, SHAPE_ENV, ... */
  const char *source;      /* L['x'] ... ; NULL for global guards */
  const char *code;        /* the guard line as PyTorch prints it (GUARDS tree line, without the "+- ") */
  int depth;               /* tree depth in the GUARDS listing */
  const char *user_file;   /* the user line that installed it, when known */
  int user_line;
} fx_store_guard;

typedef struct fx_store_guard_failure
{
  fx_id id;
  fx_id compile;           /* the compile this failure caused (the recompile) */
  const char *failed;      /* the compile id whose guard failed, "0/0" */
  const char *reason;      /* exactly as recompile_reasons gives it: "0/0: tensor 'a' size mismatch ..." */
  const char *user_stack;
} fx_store_guard_failure;

typedef struct fx_store_graph_break
{
  fx_id id;
  fx_id compile;
  const char *reason;      /* first line */
  const char *explanation; /* the full text */
  const char *user_stack;
  const char *file;
  int line;
} fx_store_graph_break;

typedef struct fx_store_kernel
{
  fx_id id;
  fx_id compile;
  const char *name;        /* triton_poi_fused_add_0, cpp_fused_..., extern_kernels.mm */
  const char *kind;        /* "triton", "cpp", "extern", "cuda", "other" */
  const char *device;      /* "cuda", "cpu" */
  const char *code;        /* the kernel's source text */
  const char *source_nodes;/* newline-separated graph node names (# Topologically Sorted Source Nodes:) */
  const char *aten_ops;    /* newline-separated (# Original ATen:) */
  int call_order;          /* position in the wrapper's call(); -1 not called */
} fx_store_kernel;

typedef struct fx_store_fusion_group
{
  fx_id id;
  fx_id compile;
  const char *stage;       /* "pre_fusion", "post_fusion" */
  const char *name;        /* op0, op1_op2 (FusedSchedulerNode), ... */
  const char *node_type;   /* SchedulerNode, FusedSchedulerNode, ExternKernelSchedulerNode, NopKernelSchedulerNode */
  const char *members;     /* newline-separated member scheduler nodes (itself for a plain node) */
  const char *writes;      /* the dump's writes = [...] text */
  const char *reads;
  const char *layout;      /* the buffer layout line(s) */
  const char *origins;     /* newline-separated FX node names */
  const char *text;        /* the raw block */
} fx_store_fusion_group;

typedef struct fx_store_artifact
{
  fx_id id;
  fx_id compile;           /* 0 when outside a compile */
  const char *name;
  const char *encoding;    /* "string", "json" */
  const char *text;
} fx_store_artifact;

typedef struct fx_store_metric
{
  fx_id id;
  fx_id compile;
  const char *key;
  const char *text;        /* the JSON value as text */
  double value;            /* numeric value, NAN when not a number */
} fx_store_metric;

typedef struct fx_store_event
{
  fx_id id;
  fx_id compile;           /* 0 when not attributable */
  const char *name;
  const char *phase;       /* B, E, i, X */
  const char *cat;
  double ts_us;
  const char *args;        /* JSON */
} fx_store_event;

typedef struct fx_store_run
{
  fx_id id;
  fx_id compile;           /* may be 0 */
  fx_id graph;             /* may be 0 */
  const char *backend;
  const char *mode;
  const char *options;     /* JSON */
  const char *device;
  double compile_ms;
  double run_ms_median, run_ms_min, run_ms_max;
  int64_t peak_memory_bytes;
  const char *accuracy;    /* JSON or text */
  double created_at;
} fx_store_run;

/* ---------------------------------------------------------------- write API (inside fx_store_begin/commit for speed) */

/* *exists is true when an input with this hash was imported before (nothing is added then). */
fx_status fx_store_add_source (fx_store *store, const fx_store_source *src, fx_id *out, bool *exists, fx_diag *diag);
/* Finds or creates frame `frame` of source `source`; function/file/line fill in blanks. */
fx_status fx_store_put_frame (fx_store *store, fx_id source, const fx_store_frame *frame, fx_id *out, fx_diag *diag);
/* Finds or creates the compile (source, cid); non-NULL fields and known status/times update it. */
fx_status fx_store_put_compile (fx_store *store, const fx_store_compile *compile, fx_id *out, fx_diag *diag);
/* graph may be NULL (unparsed text). */
fx_status fx_store_add_graph (fx_store *store, const fx_store_graph *row, const fx_graph *graph, fx_id *out, fx_diag *diag);
fx_status fx_store_add_guard (fx_store *store, const fx_store_guard *row, fx_diag *diag);
fx_status fx_store_add_guard_failure (fx_store *store, const fx_store_guard_failure *row, fx_diag *diag);
fx_status fx_store_add_graph_break (fx_store *store, const fx_store_graph_break *row, fx_diag *diag);
fx_status fx_store_add_kernel (fx_store *store, const fx_store_kernel *row, fx_diag *diag);
fx_status fx_store_add_fusion_group (fx_store *store, const fx_store_fusion_group *row, fx_diag *diag);
fx_status fx_store_add_artifact (fx_store *store, const fx_store_artifact *row, fx_diag *diag);
fx_status fx_store_add_metric (fx_store *store, const fx_store_metric *row, fx_diag *diag);
fx_status fx_store_add_event (fx_store *store, const fx_store_event *row, fx_diag *diag);
fx_status fx_store_add_run (fx_store *store, const fx_store_run *row, fx_id *out, fx_diag *diag);
/* Recomputes compile statuses (recompiled / graph break) from the rows; importers call it before commit. */
fx_status fx_store_update_statuses (fx_store *store, fx_diag *diag);

/* ---------------------------------------------------------------- read API
   Every list function allocates its rows and their strings from the caller's arena (free the arena to free them). */

fx_status fx_store_list_sources (fx_store *store, fx_arena *arena, fx_store_source **rows, size_t *n, fx_diag *diag);
fx_status fx_store_list_frames (fx_store *store, fx_arena *arena, fx_store_frame **rows, size_t *n, fx_diag *diag);
/* frame = 0: all compiles, ordered by frame, frame_compile, attempt. */
fx_status fx_store_list_compiles (fx_store *store, fx_id frame, fx_arena *arena, fx_store_compile **rows, size_t *n, fx_diag *diag);
/* Looks up "0/1" (the first source that has it); FX_ERR_NOT_FOUND when absent. */
fx_status fx_store_find_compile (fx_store *store, const char *compile_id, fx_store_compile *row, fx_arena *arena, fx_diag *diag);
fx_status fx_store_get_compile (fx_store *store, fx_id id, fx_store_compile *row, fx_arena *arena, fx_diag *diag);

/* compile = 0: graphs outside compiles. stage = FX_STAGE_COUNT: every stage. */
fx_status fx_store_list_graphs (fx_store *store, fx_id compile, fx_graph_stage stage, fx_arena *arena,
                                fx_store_graph **rows, size_t *n, fx_diag *diag);
/* Builds the fx_graph of a stored graph (from its JSON, else by parsing its text). Free with fx_graph_free. */
fx_status fx_store_load_graph (fx_store *store, fx_id graph, fx_graph **out, fx_diag *diag);

/* In the next functions compile = 0 lists the rows of every compile. */
fx_status fx_store_list_guards (fx_store *store, fx_id compile, fx_arena *arena, fx_store_guard **rows, size_t *n, fx_diag *diag);
fx_status fx_store_list_guard_failures (fx_store *store, fx_id compile, fx_arena *arena, fx_store_guard_failure **rows, size_t *n, fx_diag *diag);
fx_status fx_store_list_graph_breaks (fx_store *store, fx_id compile, fx_arena *arena, fx_store_graph_break **rows, size_t *n, fx_diag *diag);
fx_status fx_store_list_kernels (fx_store *store, fx_id compile, fx_arena *arena, fx_store_kernel **rows, size_t *n, fx_diag *diag);
fx_status fx_store_list_fusion_groups (fx_store *store, fx_id compile, fx_arena *arena, fx_store_fusion_group **rows, size_t *n, fx_diag *diag);
/* name NULL: all artifacts. */
fx_status fx_store_list_artifacts (fx_store *store, fx_id compile, const char *name, fx_arena *arena, fx_store_artifact **rows, size_t *n, fx_diag *diag);
fx_status fx_store_list_metrics (fx_store *store, fx_id compile, fx_arena *arena, fx_store_metric **rows, size_t *n, fx_diag *diag);
fx_status fx_store_list_events (fx_store *store, fx_id compile, fx_arena *arena, fx_store_event **rows, size_t *n, fx_diag *diag);
fx_status fx_store_list_runs (fx_store *store, fx_id compile, fx_arena *arena, fx_store_run **rows, size_t *n, fx_diag *diag);

#ifdef __cplusplus
}
#endif
