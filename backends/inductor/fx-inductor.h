/* fx-inductor.h: the inductor backend (loop IR → fused C or CUDA kernels → shared object or cubin) as a registry
   backend, plus direct entry points for its tests. The CLI and the app reach it only through the backend contract
   (registry/fx-registry.h: fx_backend_compile, fx_backend_generate, fx_compiled_profile, ...). */
#pragma once

#include "fx/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fx_backend fx_inductor_backend;

/* Resolves options (kv texts against the declared options; mode may be NULL) and compiles. *out is freed with
   fx_inductor_free. */
fx_status fx_inductor_compile (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, const char *mode,
                               const fx_option_kv *options, size_t n_options, fx_compiled **out, fx_diag *diag);
/* Runs once. On a CUDA device under reduce-overhead (triton.cudagraphs) the outputs of device inputs are the CUDA
   graph's static buffers, as PyTorch's cudagraph trees hand them out: the next run of the same compiled object
   overwrites them, and fx-cuda refuses a stale one ("Error: accessing tensor output of CUDAGraphs that has been
   overwritten by a subsequent run. ..."); copy what must outlive the next run. */
fx_status fx_inductor_run (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                           fx_value **outputs, size_t *n_outputs, fx_diag *diag);
void fx_inductor_free (fx_compiled *compiled);
/* Runs repeat times with per-kernel timing; fills every kernel's time_ms (mean per call). = fx_compiled_profile. */
fx_status fx_inductor_profile (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, int repeat,
                               fx_diag *diag);
/* How many times this process started the C compiler (the cache test reads it). */
size_t fx_inductor_compiler_invocations (void);
/* Writes every artifact of a compiled object into dir (created). = fx_compiled_write_artifacts. */
fx_status fx_inductor_write_artifacts (const fx_compiled *compiled, const char *dir, fx_diag *diag);

/* The CUDA C the GPU path would build for graph and inputs (meta tensors suffice), with the heuristic kernel
   choices, generated without a device (the pipeline without its build; the backend's generate member gives the same
   through the contract); listing (may be NULL) gets "<kernel> <kind> <config>" per kernel; wrapper
   (may be NULL) the device buffers, launches and outputs as text (the artifact cuda_wrapper.txt). Inputs with
   symbolic sizes ("f32[s0, 64]") give the symbolic source a build makes: the sizes as __constant__ fx_ks<i>, the
   wrapper at these inputs' sizes. */
fx_status fx_inductor_cuda_generate (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, fx_buf *source,
                                     fx_buf *listing, fx_buf *wrapper, fx_diag *diag);
/* The symbolic CUDA source made at inputs' sizes, and the wrapper of a run at run_inputs' sizes on that source, as
   a device run at other sizes makes them (the graph lowered again there, its source checked against the template):
   FX_ERR_UNSUPPORTED when there are no symbols, when the source does not follow them, or when the run's kernels are
   not the template's (a device run builds its own there). */
fx_status fx_inductor_cuda_generate_at (const fx_graph *graph, const fx_value *inputs, size_t n_inputs,
                                        const fx_value *run_inputs, size_t n_run, fx_buf *source, fx_buf *wrapper,
                                        fx_diag *diag);
/* The same with every reduction kernel of one kind where its group allows it: kind "persistent", "looped" or "split"
   (split: whatever the shape), NULL for the heuristic; tests reach each kind at small shapes. */
fx_status fx_inductor_cuda_generate_kind (const fx_graph *graph, const fx_value *inputs, size_t n_inputs,
                                          const char *kind, fx_buf *source, fx_buf *listing, fx_buf *wrapper,
                                          fx_diag *diag);

#ifdef __cplusplus
}
#endif
