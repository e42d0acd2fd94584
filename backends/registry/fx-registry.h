/* registry/fx-registry.h: the backend registry (register, look up, list, built-ins), options and modes resolved
   for a backend, compiling and running through the contract of fx/backend.h, timed runs, composed fallback
   chains and the plugin loader. Included as "registry/fx-registry.h" by anything that links the backends. */
#pragma once

#include "fx/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- registry */

/* Registers (duplicate name: FX_ERR_INVALID "duplicate name: x"). The struct must outlive the registry. */
fx_status fx_backend_register (const fx_backend *backend, fx_diag *diag);
/* Registers the built-in backends (eager, aot_eager, inductor, torch); idempotent. Defined with the list of
   built-ins in backends/fx-backends-builtin.c. */
void fx_backends_register_builtins (void);
/* What an entry point (the CLI's main, the capture bridge, a test) calls once before using the registry: the
   built-ins, then the plugins (idempotent). Nothing registers lazily: a lookup before this finds nothing. */
void fx_backends_init (void);
/* Unknown name: FX_ERR_NOT_FOUND "Invalid backend: 'x', see `fxwb backends` for available backends (known: a, b, ...)." */
const fx_backend *fx_backend_lookup (const char *name, fx_diag *diag);
/* Sorted names; hidden tags (debug, experimental) excluded unless include_hidden. Returns the count (fills up to max). */
size_t fx_backend_list (bool include_hidden, const fx_backend **out, size_t max);

/* torch.compile's four modes with no settings of their own: for backends that accept and ignore mode (eager,
   aot_eager: PR #132892) or hand the mode on as text (torch, fallback chains). */
extern const fx_mode_decl fx_plain_modes[4];

/* list_mode_options(mode): the settings of a mode for a backend; NULL mode lists every mode. */
fx_status fx_backend_list_mode_options (const fx_backend *backend, const char *mode, fx_buf *out, fx_diag *diag);
/* list_options(): every declared option with type, default and doc. */
void fx_backend_list_options (const fx_backend *backend, fx_buf *out);

/* Resolves mode + user options into a full option set (arena-owned). Both mode and options given:
   "Either mode or options can be specified, but both can't be specified at the same time.";
   unknown option: "Unexpected optimization option k for backend 'b', did you mean 'x'? known options are [...]";
   a value of the wrong type: "Unexpected type of attr k, got str should be bool". */
fx_status fx_backend_resolve_options (const fx_backend *backend, const char *mode,
                                      const fx_option_kv *given, size_t n_given,
                                      fx_arena *arena, fx_options *out, fx_diag *diag);

/* Resolve options, compile, time the compile. On failure *out is NULL. */
fx_status fx_backend_compile (const fx_backend *backend, const fx_graph *graph,
                              const fx_value *example_inputs, size_t n_inputs,
                              const char *mode, const fx_option_kv *options, size_t n_options,
                              fx_compiled **out, fx_diag *diag);
fx_status fx_compiled_run (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                           fx_value **outputs, size_t *n_outputs, fx_diag *diag);
void fx_compiled_free (fx_compiled *compiled);
/* Lets go of what running COMPILED holds (a worker process, device memory, loaded code) and keeps what describes
   it (kernels, artifacts, notes), so that a compare's finished column does not compete with the next one for cores
   or memory. Run, bench, profile and write_artifacts refuse it afterwards. */
void fx_compiled_release_runtime (fx_compiled *compiled);

/* The backend's optional members, through the contract (what the CLI and the app use instead of naming a
   backend). A backend without the member: FX_ERR_UNSUPPORTED "backend 'x' ...". */
/* As fx_backend_compile, but generate only: the kernels and source, nothing built (*out is source_only). */
fx_status fx_backend_generate (const fx_backend *backend, const fx_graph *graph,
                               const fx_value *example_inputs, size_t n_inputs,
                               const char *mode, const fx_option_kv *options, size_t n_options,
                               fx_compiled **out, fx_diag *diag);
/* Per-kernel times (kernel time_ms) over repeat calls. */
fx_status fx_compiled_profile (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, int repeat,
                               fx_diag *diag);
/* The debug artifacts into dir: the backend's writer, else each artifact as a file of its name (never outside
   dir: names with '/' or a leading '.' are skipped). */
fx_status fx_compiled_write_artifacts (const fx_compiled *compiled, const char *dir, fx_diag *diag);
/* The generated source of a compiled object: the artifacts output_code.c, output_code.cu, output_code.py (what a
   backend that generates code names it), in that order, separated by "# ---- NAME" lines; false when none. */
bool fx_compiled_format_source (const fx_compiled *compiled, fx_buf *out);

/* ---------------------------------------------------------------- timed runs */

/* A backend spec as the CLI takes it: "inductor"; "torch:inductor" (a backend with a `backend` option, the part
   after ':' going to it); "inductor|eager" (a composed fallback: the first that compiles). *sub_backend is NULL or
   arena-owned. */
fx_status fx_backend_parse_spec (const char *spec, fx_arena *arena, const fx_backend **backend,
                                 const char **sub_backend, fx_diag *diag);

typedef struct fx_run_config
{
  const char *backend;             /* registry name */
  const char *mode;                /* NULL: default */
  const fx_option_kv *options;
  size_t n_options;
  int warmup;                      /* calls before timing (default 1) */
  int repeat;                      /* timed calls (default 10) */
} fx_run_config;

/* Compile + warm-up + repeat timed calls; compares the first call's outputs (the call whose random draws match a
   reference run from the same seed; the last call's for a backend that benches itself) against ref (and fp64_ref,
   may be NULL) with same(). Never fails as a function: errors land in result->status / result->error. Outputs of the last call are
   returned in *outputs (arena) when outputs is non-NULL; compiled, when non-NULL, receives the compiled object
   (caller frees) for listing kernels. */
void fx_run_backend (const fx_graph *graph, const fx_value *inputs, size_t n_inputs,
                     const fx_run_config *config, const fx_value *ref, const fx_value *fp64_ref, size_t n_ref,
                     fx_arena *arena, fx_value **outputs, size_t *n_outputs, fx_compiled **compiled,
                     fx_run_result *result);
/* The run + accuracy part of fx_run_backend on an object already compiled (fxwb compile --run): warm-up, timed
   calls, same() against ref / fp64_ref. config->backend and mode only label the result; its options come from
   compiled->options. */
void fx_run_compiled (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, const fx_run_config *config,
                      const fx_value *ref, const fx_value *fp64_ref, size_t n_ref, fx_arena *arena,
                      fx_value **outputs, size_t *n_outputs, fx_run_result *result);

/* ---------------------------------------------------------------- composition */

/* A backend that tries each of `chain` in order and keeps the first that compiles (and, when verify is set,
   runs the example inputs and matches the interpreter); every failure is recorded in the compiled notes. */
fx_backend *fx_backend_new_fallback (const char *name, const char *const *chain, size_t n_chain, bool verify);
/* Frees a backend made by fx_backend_new_fallback (not while registered or compiled objects of it live). */
void fx_backend_free_fallback (fx_backend *backend);

/* ---------------------------------------------------------------- the plugin loader */

/* A plugin that failed: its path and why. */
typedef struct fx_plugin_error
{
  char path[512];
  char message[512];
} fx_plugin_error;

/* For the plugin loader: how many backends are registered, and dropping those registered after a count (what a
   plugin registered before its init failed). */
size_t fx_backend_registered_count (void);
void fx_backend_unregister_from (size_t count);

/* Scans the plugin folders (once; again when rescan) and returns the failures seen so far (static storage). */
size_t fx_backend_load_plugins (bool rescan, const fx_plugin_error **errors);
/* Loads one shared object. */
fx_status fx_backend_load_plugin (const char *path, fx_diag *diag);

#ifdef __cplusplus
}
#endif
