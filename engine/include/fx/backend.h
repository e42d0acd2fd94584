/* fx/backend.h: the backend contract (compile a graph for example inputs, mode and options → a runnable compiled
   object listing its kernels and artifacts), declared options and modes, and the plugin ABI. What a backend
   implements; the registry, timed runs, fallback chains and the plugin loader that use it are in
   backends/registry/fx-registry.h. */
#pragma once

#include "fx/runtime.h"
#include "fx/accuracy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- options and modes */

typedef enum fx_option_type
{
  FX_OPTION_BOOL,
  FX_OPTION_INT,
  FX_OPTION_FLOAT,
  FX_OPTION_STRING,
  FX_OPTION_TYPE_COUNT
} fx_option_type;

const char *fx_option_type_name (fx_option_type type);   /* "bool", "int", "float", "str" */

/* One option a backend accepts, as `list_options()` shows it. */
typedef struct fx_option_decl
{
  const char *name;          /* "max_autotune", "triton.cudagraphs", "scheduler" */
  fx_option_type type;
  const char *default_text;  /* "False", "0", "'auto'" (Python literal) */
  const char *doc;           /* one line */
} fx_option_decl;

typedef struct fx_option_value
{
  const char *name;
  fx_option_type type;
  bool b;
  int64_t i;
  double f;
  const char *s;
} fx_option_value;

/* A resolved option set: every declared option of the backend, in declaration order, with its effective value. */
typedef struct fx_options
{
  fx_option_value *items;
  size_t n;
  /* Which items the user (or the mode) set explicitly. */
  bool *explicit_set;
} fx_options;

const fx_option_value *fx_options_get (const fx_options *opts, const char *name);
bool fx_options_get_bool (const fx_options *opts, const char *name, bool fallback);
int64_t fx_options_get_int (const fx_options *opts, const char *name, int64_t fallback);
double fx_options_get_float (const fx_options *opts, const char *name, double fallback);
const char *fx_options_get_str (const fx_options *opts, const char *name, const char *fallback);
/* "{'max_autotune': True, 'triton.cudagraphs': True}" (only explicit ones when explicit_only). */
void fx_options_format (const fx_options *opts, bool explicit_only, fx_buf *out);

/* A mode expands to option settings ("name=value" texts). */
typedef struct fx_mode_decl
{
  const char *mode;             /* "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs" */
  const char *const *settings;  /* NULL-terminated: "triton.cudagraphs=True" */
} fx_mode_decl;

/* A user-given option before validation: "--option k=v" or options={...}. */
typedef struct fx_option_kv
{
  const char *key;
  const char *value;   /* text: "True", "3", "0.5", "'auto'" or auto */
} fx_option_kv;

/* ---------------------------------------------------------------- compiled objects */

typedef struct fx_kernel_info
{
  const char *name;          /* "cpp_fused_add_mul_0", "extern_mm", "eager:add" */
  const char *kind;          /* "pointwise", "reduction", "extern", "template", "interpreter", "python" */
  fx_device device;
  const char *language;      /* "c", "cuda", "python", NULL */
  const char *source;        /* generated code or NULL */
  const char **nodes;        /* names of the graph nodes it covers */
  size_t n_nodes;
  double time_ms;            /* measured per call, < 0 when unknown */
} fx_kernel_info;

typedef struct fx_artifact
{
  const char *name;          /* "ir_pre_fusion.txt", "output_code.py", "fx_graph_readable.py", "program.py" */
  const char *kind;          /* "text", "code", "log" */
  const char *text;
  size_t len;
} fx_artifact;

typedef struct fx_backend fx_backend;
typedef struct fx_compiled fx_compiled;

/* What compile receives. */
typedef struct fx_compile_request
{
  const fx_graph *graph;           /* not modified; a backend copies it when it rewrites */
  const fx_value *example_inputs;  /* one per placeholder */
  size_t n_inputs;
  const char *mode;                /* "default" when none was given */
  const fx_options *options;       /* resolved: defaults + mode + user options */
  fx_device device;
  fx_generator *gen;               /* for random ops */
} fx_compile_request;

/* A compiled graph: run it, list its kernels and artifacts. Created by a backend's compile, freed with fx_compiled_free. */
struct fx_compiled
{
  const fx_backend *backend;
  fx_arena *arena;                 /* owns kernels, artifacts, notes */
  void *impl;                      /* the backend's state */
  fx_kernel_info *kernels;
  size_t n_kernels;
  fx_artifact *artifacts;
  size_t n_artifacts;
  fx_buf notes;                    /* human-readable log: passes run, fallbacks taken and why */
  double compile_ms;               /* filled by fx_backend_compile */
  /* The options, resolved once by fx_backend_compile (defaults + mode + user options, in the arena): what the
     backend compiled with; compile reads them from the request, nothing looks them up again per call. */
  const fx_options *options;
  const char *mode;                /* "default" when none was given (arena) */
  /* Made by fx_backend_generate: kernels and source only, nothing built; fx_compiled_run refuses it. */
  bool source_only;
  /* What a bench of it timed (static text, set by the backend's bench); NULL: the wall clock of run(). */
  const char *timing;
  /* Set by fx_compiled_release_runtime: its processes and device memory are gone, its description (kernels,
     artifacts, notes) stays; run, bench and profile refuse it. */
  bool released;
};

/* A backend: a static const vtable with designated initializers. NULL members mean "not supported". */
struct fx_backend
{
  const char *name;                /* "eager", "aot_eager", "torch", "inductor" */
  const char *description;         /* one line */
  const char *const *tags;         /* NULL-terminated or NULL: "debug", "experimental" */
  const fx_option_decl *options;
  size_t n_options;
  const fx_mode_decl *modes;       /* NULL: only "default" (with no settings) */
  size_t n_modes;

  fx_status (*compile) (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag);
  /* Runs once. outputs: values allocated in arena (tensor refs owned by the caller: fx_value_clear them). */
  fx_status (*run) (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                    fx_value **outputs, size_t *n_outputs, fx_diag *diag);
  /* Frees impl; called once, only when impl is set (the caller clears it after). NULL when nothing to free. */
  void (*release) (fx_compiled *compiled);
  /* Optional: times its own calls, for backends whose calls cannot be timed from outside (a subprocess: the
     pipe and process overhead is not the graph's time). Runs warmup untimed calls, then repeat timed ones into
     times_ms[0..repeat); the last call's outputs go to *outputs (arena, as run); *peak_bytes gets the peak memory
     of the calls (0 when unknown). NULL: fx_run_backend times run() itself. */
  fx_status (*bench) (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, int warmup, int repeat,
                      fx_arena *arena, double *times_ms, fx_value **outputs, size_t *n_outputs, size_t *peak_bytes,
                      fx_diag *diag);

  void *user_data;                 /* for composed backends and plugins */

  /* Versioning: sizeof (fx_backend) as the backend was built, i.e. `.size = sizeof (fx_backend)`. The members below
     are read only when they lie within size, so a backend built against an older header (smaller size) still
     registers and loads, its missing members reading as NULL; 0 means the layout up to user_data. New members go
     at the end, after the last one here. */
  size_t size;

  /* Optional: the code compile would build, generated without building or running it (no device needed, e.g.
     the CUDA source on a machine without a GPU). Fills out's kernels and artifacts as compile does; out stays
     source_only. */
  fx_status (*generate) (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag);
  /* Optional: runs repeat times timing each kernel; fills every kernel's time_ms (mean per call). */
  fx_status (*profile) (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, int repeat, fx_diag *diag);
  /* Optional: writes the debug artifacts into dir (created). NULL: every artifact becomes a file of its name
     (fx_compiled_write_artifacts), the TORCH_COMPILE_DEBUG layout. */
  fx_status (*write_artifacts) (const fx_compiled *compiled, const char *dir, fx_diag *diag);
};

/* Whether backend was built with member (within its size) and sets it. */
#define FX_BACKEND_HAS(backend, member)                                                                  \
  ((backend)->size >= offsetof (fx_backend, member) + sizeof ((backend)->member) && (backend)->member != NULL)

bool fx_backend_has_tag (const fx_backend *backend, const char *tag);

/* ---------------------------------------------------------------- filling a compiled object */

/* For backends: add a kernel / artifact to a compiled object (strings copied into its arena). */
fx_kernel_info *fx_compiled_add_kernel (fx_compiled *compiled, const char *name, const char *kind,
                                        const char *language, const char *source);
void fx_kernel_add_node (fx_compiled *compiled, fx_kernel_info *kernel, const char *node_name);
void fx_compiled_add_artifact (fx_compiled *compiled, const char *name, const char *kind,
                               const char *text, size_t len);
/* Copies src's kernels (nodes, devices, times), artifacts and notes into dst: how a composed or delegating
   backend shows the backend it ran as its own. */
void fx_compiled_copy_listing (fx_compiled *dst, const fx_compiled *src);

/* ---------------------------------------------------------------- the plugin ABI */

/* The one C entry point a plugin exports (the analogue of the torch_dynamo_backends entry-point group):
     int fx_backend_plugin_init (const fx_plugin_api *api);
   It registers its backends through api->register_backend and returns 0, or non-zero on failure.
   Plugins are found as *.so in every folder of $FXWB_BACKEND_PATH (':'-separated) and in
   ~/.local/share/fx-workbench/backends (the loader: backends/registry/fx-registry.h). */
#define FX_BACKEND_PLUGIN_ENTRY "fx_backend_plugin_init"
/* 2: fx_backend grew `size` (and the members after it). The version changes only when existing members move;
   members added at the end are found through fx_backend.size and fx_plugin_api.size. */
#define FX_PLUGIN_ABI_VERSION 2

typedef fx_status (*fx_diag_set_fn) (fx_diag *diag, fx_status code, const char *fmt, ...) FX_PRINTF (3, 4);

typedef struct fx_plugin_api
{
  uint32_t abi_version;            /* FX_PLUGIN_ABI_VERSION */
  size_t size;                     /* sizeof (fx_plugin_api), for growth */
  fx_status (*register_backend) (const fx_backend *backend, fx_diag *diag);
  const fx_backend *(*lookup_backend) (const char *name, fx_diag *diag);
  void (*graph_print_tabular) (const fx_graph *graph, fx_buf *out);
  void (*buf_free) (fx_buf *buf);
  /* Compile and run with another backend (how a plugin delegates, e.g. to eager). */
  fx_status (*compile) (const fx_backend *backend, const fx_graph *graph,
                        const fx_value *example_inputs, size_t n_inputs,
                        const char *mode, const fx_option_kv *options, size_t n_options,
                        fx_compiled **out, fx_diag *diag);
  fx_status (*run) (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                    fx_value **outputs, size_t *n_outputs, fx_diag *diag);
  void (*compiled_free) (fx_compiled *compiled);
  fx_diag_set_fn diag_set;
  /* Since ABI 2: what a delegating plugin needs to show the kernels, source and timings of the backend it
     delegates to as its own. */
  fx_status (*generate) (const fx_backend *backend, const fx_graph *graph,
                         const fx_value *example_inputs, size_t n_inputs,
                         const char *mode, const fx_option_kv *options, size_t n_options,
                         fx_compiled **out, fx_diag *diag);
  fx_status (*profile) (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, int repeat, fx_diag *diag);
  fx_status (*write_artifacts) (const fx_compiled *compiled, const char *dir, fx_diag *diag);
  /* Copies src's kernels (with their nodes, devices and times), artifacts and notes into dst. */
  void (*compiled_copy_listing) (fx_compiled *dst, const fx_compiled *src);
  void (*buf_printf) (fx_buf *buf, const char *fmt, ...) FX_PRINTF (2, 3);
} fx_plugin_api;

typedef int (*fx_backend_plugin_init_fn) (const fx_plugin_api *api);

#ifdef __cplusplus
}
#endif
