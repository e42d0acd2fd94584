/* fxwb-runs.h: what `fxwb run` and `fxwb compare` share: the graph source (FX file or WORKSPACE:COMPILE), inputs,
   the interpreter's reference, column specs ("inductor@max-autotune,cpp.threads=2") and storing runs. */
#pragma once

#include "fxwb.h"

#include "registry/fx-registry.h"
#include "fx/store.h"

typedef struct
{
  fx_graph *graph;         /* owned */
  char *label;             /* "model.py", "run.fxwb:[0/1] aot_inference" */
  char *text;              /* the graph's original text (for storing a file's graph) */
  char *file;              /* the FX file, or NULL for a workspace source */
  fx_store *store;         /* open when results are stored */
  char *store_path;
  int64_t graph_id;        /* the stored graph runs attach to (0: none yet) */
  int64_t compile_row;
} fxwb_source;

/* Common options of run and compare. */
typedef struct
{
  char *stage;
  char *upto;                /* --upto NODE: run the graph up to that node */
  char *inputs;            /* "spec", "repro", a .json file or a folder of saved tensors */
  char *workspace;         /* store runs there (a workspace source stores into itself unless --no-store) */
  gboolean no_store;
  gboolean json;
  gboolean kernels;        /* per-kernel times */
  gint64 seed;
  int scale;
  int repeat;
  int warmup;
  char *mode;
  char **options;          /* KEY=VALUE */
  int keep_outputs_mib;    /* per-run cap on the output bytes stored with a run (0: shapes and summaries only) */
} fxwb_run_opts;

void fxwb_run_opts_init (fxwb_run_opts *o);
void fxwb_run_opts_clear (fxwb_run_opts *o);
/* The option context of a command that runs graphs (fxwb_option_context_new's): its own entries, then the shared
   ones into o, and the shared description (graphs, backend specs, exit status). */
GOptionContext *fxwb_run_opts_context_new (const char *prgname, const char *parameter_string,
                                           const GOptionEntry *entries, const char *summary, fxwb_run_opts *o);
/* Parses the command line of a command that runs one graph FILE with the options in o; FXWB_EXIT_OK, or the usage
   status after saying what is wrong (too_many: the message for more than one FILE). */
int fxwb_run_opts_parse (GOptionContext *context, int *argc, char ***argv, const fxwb_run_opts *o,
                         const char *too_many);

/* Loads FILE or WORKSPACE:COMPILE ("w.fxwb:0/1", "w.fxwb:[0/1]"); opens the store when one is to be written. */
int fxwb_source_load (const char *cmd, const char *arg, const fxwb_run_opts *o, fxwb_source *src);
void fxwb_source_clear (fxwb_source *src);

typedef enum
{
  FXWB_OPEN_READONLY,
  FXWB_OPEN_WRITE,
  FXWB_OPEN_CREATE,        /* writable, made when missing */
} fxwb_open_mode;

/* The parts of fxwb_source_load that `fxwb diff` shares. Opens the workspace at path into src->store and
   src->store_path; else prints "CMD: cannot open workspace PATH: why" and returns the exit code for it. */
int fxwb_source_open_workspace (const char *cmd, const char *path, fxwb_open_mode mode, fxwb_source *src);
/* Finds compile_id in src's open workspace (src->compile_row); else prints "CMD: PATH: no compile ID: why (see
   `fxwb ls PATH`)" and returns FXWB_EXIT_FAILURE. */
int fxwb_source_find_compile (const char *cmd, const char *compile_id, fxwb_source *src);

/* One column: backend spec, mode, options. */
typedef struct
{
  char *spec;              /* "inductor", "torch:inductor", "inductor|eager" */
  char *mode;
  fx_option_kv *kv;
  size_t n_kv;
  char *label;             /* as given on the command line */
} fxwb_column;

/* Parses "BACKEND[@MODE][,KEY=VALUE...]" and adds the shared --mode / --option. */
gboolean fxwb_column_parse (const char *cmd, const char *text, const fxwb_run_opts *o, fxwb_column *col);
void fxwb_column_clear (fxwb_column *col);
/* Checks the backend, mode and options before anything runs (prints the error; FALSE = a usage error). */
gboolean fxwb_column_validate (const char *cmd, const fxwb_column *col);

/* Inputs and the interpreter's reference outputs (ref NULL when the interpreter cannot run the graph; the reason
   goes to stderr). */
typedef struct
{
  fx_arena *arena;
  fx_value *inputs;
  size_t n_inputs;
  fx_value *ref;
  size_t n_ref;
  fx_value *ref64;         /* the same graph on the inputs upcast to float64 (same()'s RMSE check); may be NULL */
  char ref_error[1024];
} fxwb_inputs;

int fxwb_inputs_make (const char *cmd, const fxwb_source *src, const fxwb_run_opts *o, fxwb_inputs *in);
/* The two halves of fxwb_inputs_make: the inputs (scaled graph, --inputs, --seed), then the interpreter's
   reference and its fp64 run (a failure lands in ref_error). */
int fxwb_inputs_make_only (const char *cmd, const fxwb_source *src, const fxwb_run_opts *o, fxwb_inputs *in);
void fxwb_inputs_add_reference (const fxwb_source *src, fxwb_inputs *in);
void fxwb_inputs_clear (fxwb_inputs *in);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (fxwb_run_opts, fxwb_run_opts_clear)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (fxwb_source, fxwb_source_clear)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (fxwb_column, fxwb_column_clear)

/* One column run: result, and the compiled object (for kernels) when the run compiled. */
typedef struct
{
  fx_run_result result;
  fx_compiled *compiled;
  /* The last call's outputs, when the run is stored (kept with it for `fxwb diff`). */
  fx_arena *arena;
  fx_value *outputs;
  size_t n_outputs;
} fxwb_column_run;

void fxwb_column_run_exec (const fxwb_source *src, const fxwb_inputs *in, const fxwb_column *col,
                           const fxwb_run_opts *o, fxwb_column_run *out);
void fxwb_column_run_clear (fxwb_column_run *run);
/* Frees a run's outputs once stored (a compare of many columns holds one set at a time). */
void fxwb_column_run_drop_outputs (fxwb_column_run *run);

/* Writes the column's run as "started" before it executes (its own transaction), so a run killed on the way
   stays in the workspace marked incomplete. *run_id: 0 when nothing is stored. */
int fxwb_store_run_start (const char *cmd, fxwb_source *src, const fxwb_column *col, int64_t *run_id);
/* Stores a run's results (and, when its backend generated kernels, an engine compile holding them), its outputs
   (up to o->keep_outputs_mib) and the inputs it ran on into src->store: finishing the started run run_id, or as a
   new run when run_id is 0. */
int fxwb_store_run (const char *cmd, fxwb_source *src, const fxwb_inputs *in, const fxwb_run_opts *o,
                    const fxwb_column_run *run, int64_t run_id);
/* A run result as --json prints it. */
json_object *fxwb_run_result_json (const fx_run_result *r);

/* Prints a compiled object's kernels with their nodes and per-call times. */
void fxwb_print_kernels (const fx_compiled *c);

/* Whether a CUDA device is there (probed once). */
gboolean fxwb_cuda_present (void);
