/* fx/importers.h: importing real PyTorch artifacts (TORCH_TRACE, TORCH_COMPILE_DEBUG, .pt2, FX code, TORCH_LOGS) into a workspace store. */
#pragma once

#include "fx/common.h"
#include "fx/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fx_import_kind
{
  FX_IMPORT_UNKNOWN,
  FX_IMPORT_TORCH_TRACE,   /* dedicated_log_torch_trace_*.log, or a folder of them */
  FX_IMPORT_DEBUG_DIR,     /* a TORCH_COMPILE_DEBUG run folder (run_*) or its parent torch_compile_debug/ */
  FX_IMPORT_RUN_DIR,       /* a fixture-style folder holding torch_trace/, torch_compile_debug/, torch_logs.txt */
  FX_IMPORT_PT2,           /* torch.export.save archive */
  FX_IMPORT_FX_CODE,       /* GraphModule code, print_readable, repro.py */
  FX_IMPORT_TORCH_LOGS,    /* TORCH_LOGS text (guards, recompiles, graph breaks) */
  FX_IMPORT_KIND_COUNT
} fx_import_kind;

const char *fx_import_kind_name (fx_import_kind kind);  /* "torch_trace", "debug_dir", "run_dir", "pt2", "fx_code", "torch_logs", "unknown" */
/* Looks at the path (folder layout, zip magic, first lines). */
fx_import_kind fx_import_detect (const char *path);

typedef enum fx_import_warning
{
  FX_IMPORT_WARN_BAD_LINE,        /* a line that is neither a record nor a payload line (garbage, binary) */
  FX_IMPORT_WARN_BAD_JSON,        /* an envelope or JSON payload that does not parse */
  FX_IMPORT_WARN_MD5_MISMATCH,    /* has_payload differs from the payload's md5 (kept anyway) */
  FX_IMPORT_WARN_ORPHAN_PAYLOAD,  /* payload lines with no envelope before them */
  FX_IMPORT_WARN_UNKNOWN_STRING,  /* a string-table id never defined */
  FX_IMPORT_WARN_UNKNOWN_KIND,    /* an envelope kind this importer does not know (stored raw) */
  FX_IMPORT_WARN_UNPARSED_GRAPH,  /* graph text the FX parser rejected (text kept) */
  FX_IMPORT_WARN_TRUNCATED,       /* the input ends in the middle of a record */
  FX_IMPORT_WARN_BAD_ARCHIVE,     /* a zip that is not a .pt2, a missing/invalid member */
  FX_IMPORT_WARN_IO,              /* a file that could not be read */
  FX_IMPORT_WARN_COUNT
} fx_import_warning;

const char *fx_import_warning_name (fx_import_warning warning);

#define FX_IMPORT_EXAMPLES 3

typedef struct fx_import_warning_stats
{
  size_t count;
  size_t n_examples;
  char examples[FX_IMPORT_EXAMPLES][320];   /* "file:line: what" */
} fx_import_warning_stats;

typedef struct fx_import_report
{
  size_t inputs[FX_IMPORT_KIND_COUNT];   /* inputs imported, per kind */
  size_t inputs_skipped;                 /* already in the store (same content hash) */
  size_t bytes;
  size_t lines;
  size_t records;                        /* envelopes / files read */
  size_t frames, compiles, graphs, graphs_unparsed, kernels, guards, guard_failures,
         graph_breaks, fusion_groups, artifacts, metrics, events;
  size_t unknown_kinds;
  fx_import_warning_stats warnings[FX_IMPORT_WARN_COUNT];
} fx_import_report;

void fx_import_report_init (fx_import_report *report);
/* Adds a warning (count + first examples). file may be NULL, line 0 when unknown. */
void fx_import_report_warn (fx_import_report *report, fx_import_warning warning,
                            const char *file, int line, const char *fmt, ...) FX_PRINTF (5, 6);
size_t fx_import_report_warning_total (const fx_import_report *report);

/* Called now and then with a fraction in [0, 1] of the current input. */
typedef void (*fx_import_progress_fn) (void *user_data, const char *path, double fraction);

/* Imports one input (detects its kind) into store, in transactions: on SIGKILL the store keeps what was committed.
   cancel (may be NULL) is polled; when it becomes non-zero the import stops with FX_ERR_CANCELLED after rolling back
   the current input. Returns FX_OK when something was read (warnings go to report), an error when nothing could be. */
fx_status fx_import_path (fx_store *store, const char *path,
                          fx_import_progress_fn progress, void *user_data,
                          const volatile int *cancel,
                          fx_import_report *report, fx_diag *diag);

/* Imports an in-memory input of a known kind (TORCH_TRACE, PT2, FX_CODE, TORCH_LOGS); name is used for locations and
   the source row. For fuzzing and for text dropped on the app. */
fx_status fx_import_buffer (fx_store *store, fx_import_kind kind, const char *name,
                            const char *data, size_t len,
                            const volatile int *cancel,
                            fx_import_report *report, fx_diag *diag);

#ifdef __cplusplus
}
#endif
