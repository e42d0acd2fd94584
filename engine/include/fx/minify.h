/* fx/minify.h: the minifier (torch/_functorch/fx_minifier.py's strategies over a failing graph, every candidate
   checked in a child process with a time limit), its failure predicates, checkpoints and the repro.py writer. */
#pragma once

#include "fx/runtime.h"
#include "fx/accuracy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- failures */

/* How a candidate failed, as PyTorch's minifier names the cases (after_aot.py: compile error, runtime error,
   segfault, timeout, accuracy). */
typedef enum fx_failure_kind
{
  FX_FAILURE_NONE = 0,      /* compiled, ran and (when checked) matched the reference */
  FX_FAILURE_COMPILE_ERROR, /* the backend's compile returned an error */
  FX_FAILURE_RUNTIME_ERROR, /* the compiled graph's run returned an error */
  FX_FAILURE_CRASH,         /* the check died by a signal (or exited without reporting) */
  FX_FAILURE_HANG,          /* the check ran past the time limit and was killed */
  FX_FAILURE_ACCURACY,      /* outputs differ from the eager reference by same() with the fp64 RMSE rule */
  FX_FAILURE_INVALID,       /* the candidate cannot be judged (no inputs, the reference interpreter failed) */
  FX_FAILURE_KIND_COUNT
} fx_failure_kind;

#define FX_FAIL_ON(kind) (1u << (kind))
#define FX_FAIL_ON_ANY                                                                                    \
  (FX_FAIL_ON (FX_FAILURE_COMPILE_ERROR) | FX_FAIL_ON (FX_FAILURE_RUNTIME_ERROR) | FX_FAIL_ON (FX_FAILURE_CRASH) \
   | FX_FAIL_ON (FX_FAILURE_HANG) | FX_FAIL_ON (FX_FAILURE_ACCURACY))

/* "none", "compile-error", "runtime-error", "crash", "hang", "accuracy", "invalid" */
const char *fx_failure_kind_name (fx_failure_kind kind);
/* Parses a kind name ("compile_error" is accepted for "compile-error"); "any" gives FX_FAIL_ON_ANY. Returns the
   mask, 0 when unknown. */
unsigned fx_failure_mask_from_name (const char *name);

typedef struct fx_failure
{
  fx_failure_kind kind;
  char message[1024];
} fx_failure;

/* "The same failure": the same kind and, for compile and run-time errors and crashes, the same first message line
   once paths, hex hashes and addresses are blanked out (a compiler error names a per-source temporary file). */
bool fx_failure_same (const fx_failure *a, const fx_failure *b);
/* The normalized first line that fx_failure_same compares. */
void fx_failure_signature (const fx_failure *f, fx_buf *out);

/* ---------------------------------------------------------------- checking a candidate */

/* The backend under test, supplied by the caller (the engine does not know backends): compile graph for inputs and
   run it once. On failure set *failed_at to FX_MINIFY_AT_COMPILE or FX_MINIFY_AT_RUN and fill diag. Outputs are
   allocated in arena; the engine clears them. Runs in the child process when the check is isolated. */
typedef enum fx_minify_stage
{
  FX_MINIFY_AT_COMPILE,
  FX_MINIFY_AT_RUN,
} fx_minify_stage;

typedef fx_status (*fx_minify_run_fn) (const fx_graph *graph, const fx_value *inputs, size_t n_inputs,
                                       fx_arena *arena, fx_value **outputs, size_t *n_outputs,
                                       fx_minify_stage *failed_at, fx_diag *diag, void *user_data);

/* Progress, reported after every candidate and every accepted shrink. */
typedef enum fx_minify_event
{
  FX_MINIFY_EVENT_START,     /* the original graph's failure is known (failure filled) */
  FX_MINIFY_EVENT_CANDIDATE, /* a candidate was checked (outcome filled, accepted when it shrank the graph) */
  FX_MINIFY_EVENT_SHRUNK,    /* the graph shrank (graph is the new current graph) */
  FX_MINIFY_EVENT_DONE,
} fx_minify_event;

typedef struct fx_minify_progress
{
  fx_minify_event event;
  const char *strategy;      /* "Remove suffix", "Delta Debugging", ... (PyTorch's names) or NULL */
  int granularity;
  size_t nodes;              /* nodes of the current graph (placeholders and output included, as PyTorch counts) */
  size_t call_nodes;         /* of which call_function / call_method / call_module */
  size_t start_nodes;
  size_t candidates;         /* candidates checked so far (across resumes) */
  double elapsed_s;          /* across resumes */
  const fx_failure *outcome; /* CANDIDATE: how it did; START: the original failure */
  bool accepted;
  const fx_graph *graph;     /* SHRUNK and DONE: the current graph */
} fx_minify_progress;

/* Returns false to cancel the minification (it then stops after the current candidate, keeping what it has). */
typedef bool (*fx_minify_progress_fn) (const fx_minify_progress *progress, void *user_data);

typedef struct fx_minify_config
{
  fx_minify_run_fn run;         /* required */
  void *run_data;
  unsigned fail_on;             /* FX_FAIL_ON (...) mask; 0: FX_FAIL_ON_ANY */
  double timeout_s;             /* per candidate; <= 0: no limit */
  bool in_process;              /* check candidates in this process (no crash or hang protection; for tests) */
  uint64_t seed;                /* random inputs, as `fxwb run --seed` makes them */
  const char *saved_inputs;     /* a folder of <placeholder>.fxt tensors used where a placeholder has one, or NULL */
  int max_granularity;          /* <= 0: no limit */
  const char *checkpoint;       /* written after every shrink, or NULL */
  fx_minify_progress_fn progress;
  void *progress_data;
  /* When non-NULL and set (a signal handler's flag): the candidate in flight is killed and the run stops. */
  const volatile int *cancel;
  /* Resuming: the failure to keep (the checkpoint's), and the work done before. */
  const fx_failure *expect;
  size_t candidates_before;
  double elapsed_before;
} fx_minify_config;

void fx_minify_config_init (fx_minify_config *config);
/* The graph up to node_name, whose value becomes its only output (a tuple of one where the graph returned a
   tuple); the nodes after it are dropped. FX_ERR_NOT_FOUND without such a node, FX_ERR_INVALID where a graph cannot
   end (a placeholder, the output, a node of several values). */
fx_status fx_graph_cut_after (const fx_graph *graph, const char *node_name, fx_graph **out, fx_diag *diag);

/* Makes the inputs of a candidate (seeded random from the placeholders' tensor metas, saved tensors where given). */
fx_status fx_minify_make_inputs (const fx_graph *graph, const fx_minify_config *config, fx_arena *arena,
                                 fx_value **inputs, size_t *n_inputs, fx_diag *diag);

/* Checks one graph as the minifier checks a candidate (in a child process unless config->in_process). */
void fx_minify_check (const fx_graph *graph, const fx_minify_config *config, fx_failure *out);

/* Prepares a graph for minification: placeholder metas from the graph's input specs (repro load_args), shapes
   propagated to every node, get_attr tensors lifted to placeholders. Returns a new graph. */
fx_status fx_minify_prepare (const fx_graph *graph, fx_graph **out, fx_diag *diag);

typedef struct fx_minify_result
{
  fx_graph *graph;              /* the minimized graph (caller frees); NULL when the original did not fail */
  fx_failure failure;           /* the original graph's outcome */
  bool reproduced;              /* the original failed with a kind in fail_on */
  bool cancelled;
  size_t candidates;
  double elapsed_s;
  size_t start_nodes, end_nodes;
} fx_minify_result;

/* Shrinks graph while it keeps failing the same way, with PyTorch's strategies (remove outputs, eliminate dead
   code, remove unused inputs, consolidate inputs, remove suffix, delta debugging) and its granularity schedule,
   until no strategy makes progress. Fails (status) only for bad configuration or a checkpoint that cannot be
   written; a graph that does not fail is result->reproduced == false with result->failure saying what it did. */
fx_status fx_minify (const fx_graph *graph, const fx_minify_config *config, fx_minify_result *result, fx_diag *diag);
void fx_minify_result_clear (fx_minify_result *result);

/* ---------------------------------------------------------------- checkpoints */

typedef struct fx_minify_checkpoint
{
  fx_graph *graph;              /* the current (smallest failing) graph; caller frees */
  fx_failure failure;
  unsigned fail_on;
  size_t candidates;
  double elapsed_s;
  size_t start_nodes;
  bool done;
} fx_minify_checkpoint;

/* One JSON file: {"version": 1, "failure": {...}, "candidates": N, "elapsed_s": S, "graph": <canonical JSON>}.
   Written to PATH.tmp and renamed, so a kill never leaves half a checkpoint. */
fx_status fx_minify_checkpoint_write (const char *path, const fx_minify_checkpoint *cp, fx_diag *diag);
fx_status fx_minify_checkpoint_read (const char *path, fx_minify_checkpoint *cp, fx_diag *diag);

/* ---------------------------------------------------------------- repro.py */

/* A backend setting the repro writes as `torch._inductor.config.<key> = <value>` (value BOOL, INT, FLOAT, STR or
   NONE; keys other than [A-Za-z0-9_.] are left out). */
typedef struct fx_repro_setting
{
  const char *key;
  fx_arg value;
} fx_repro_setting;

typedef struct fx_repro_opts
{
  const char *backend;          /* torch.compile's backend ("inductor", "eager", "aot_eager"; others run eagerly) */
  const char *mode;             /* NULL: default */
  const fx_repro_setting *settings;
  size_t n_settings;
  fx_failure_kind kind;         /* ACCURACY makes __main__ compare against the fp64 reference */
  const char *failure_text;     /* a comment line, or NULL */
  uint64_t seed;
} fx_repro_opts;

/* repro.py in PyTorch's minifier form: a Repro(torch.nn.Module) whose forward is the graph, `args` with each
   input's (shape, stride, dtype, device) rebuilt by rand_strided, and a __main__ that runs it through
   torch.compile where the installed torch has it (eagerly, saying so, where it does not: torch 1.13).
   Fails (FX_ERR_UNSUPPORTED) on placeholders without tensor or int metadata. */
fx_status fx_repro_write (const fx_graph *graph, const fx_repro_opts *opts, fx_buf *out, fx_diag *diag);

#ifdef __cplusplus
}
#endif
