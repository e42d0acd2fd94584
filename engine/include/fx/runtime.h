/* fx/runtime.h: the interpreter (runs any ATen or torch-level graph on the reference kernels), graph inputs
   (inputs.json specs, repro load_args, saved tensors) and timed runs. */
#pragma once

#include "fx/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- interpreter */

typedef struct fx_interp_opts
{
  fx_allocator *alloc;        /* NULL: the default allocator */
  fx_generator *gen;          /* random ops; NULL: a generator seeded with 0 */
  /* Called after each node with its value (for ConcreteProp-style recording); may be NULL. */
  void (*on_node) (const fx_node *node, const fx_value *value, void *data);
  void *on_node_data;
  bool meta_only;             /* shape propagation: tensors carry no data */
} fx_interp_opts;

/* Runs graph on inputs (one per placeholder, in order; placeholders with default values may be omitted).
   Outputs: the output node's value flattened one level (a tuple's items), allocated in arena; the caller
   fx_value_clear()s them. Errors name the node ("node 'add_3' (aten.add.Tensor): ..."), with diag->node set. */
fx_status fx_interp_run (const fx_graph *graph, const fx_value *inputs, size_t n_inputs,
                         const fx_interp_opts *opts, fx_arena *arena,
                         fx_value **outputs, size_t *n_outputs, fx_diag *diag);

/* The runs PyTorch's same() compares a result with (torch._dynamo.utils.same): graph on inputs in the interpreter,
   its random ops drawing from a generator seeded with 0, into *ref; then again on float64 copies of the floating
   inputs into *ref64, for the RMSE rule. *ref64 stays NULL (*n_ref64 0) where the graph cannot run so or returns
   another count; only the first run's failure fails (diag set). The caller fx_value_clear()s the values. */
fx_status fx_interp_run_reference (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                                   fx_value **ref, size_t *n_ref, fx_value **ref64, size_t *n_ref64, fx_diag *diag);

/* An argument as a value: node references read from env by node id (borrowed: no reference taken), lists and
   tuples allocated from arena, dtype names and inf as globals. FX_ERR_UNSUPPORTED, with *bad the argument (an item
   of a list, maybe) no value can hold (a symbolic size, another Python global), for the caller to name. */
fx_status fx_arg_to_value (const fx_arg *a, const fx_value *env, fx_arena *arena, fx_value *out, const fx_arg **bad);

/* ---------------------------------------------------------------- inputs */

/* Where inputs come from. */
typedef enum fx_inputs_source
{
  FX_INPUTS_SPEC,     /* the graph's fx_input_spec list (repro load_args) or placeholder meta vals, seeded random */
  FX_INPUTS_JSON,     /* an inputs.json file: [{"shape":[..],"stride":[..],"dtype":"torch.float32","device":..}, ...] */
  FX_INPUTS_SAVED,    /* a folder of fx_tensor_save files named <placeholder>.fxt or <index>.fxt */
} fx_inputs_source;

/* Random inputs for graph: floats ~ N(0,1), ints in [0, 16) (or [0, high) from a spec), bools 50/50;
   strides honoured. Scale (when > 0 and < 1) shrinks every size > 16 by that factor for quick runs
   (shape errors then become the caller's problem). */
fx_status fx_inputs_make (const fx_graph *graph, fx_inputs_source source, const char *path, uint64_t seed,
                          fx_allocator *alloc, fx_arena *arena, fx_value **inputs, size_t *n_inputs,
                          fx_diag *diag);
/* Parses an inputs.json text into input specs (allocated from arena). */
fx_status fx_inputs_parse_json (const char *text, size_t len, const char *filename, fx_arena *arena,
                                fx_input_spec **specs, size_t *n_specs, fx_diag *diag);
/* The inputs of one run of graph: a private copy (same layout) of each CPU tensor the graph writes into (a copy_
   back into a placeholder, or another in-place op on one), the others shared. Every backend and the reference then
   start from the same values, as PyTorch's benchmarks clone inputs; a run's calls still see their own writes.
   NULL when the graph writes none: use inputs as they are. Free with fx_inputs_for_run_free. */
fx_value *fx_inputs_for_run (const fx_graph *graph, const fx_value *inputs, size_t n_inputs);
void fx_inputs_for_run_free (fx_value *values, size_t n_inputs);

/* Reads an inputs.json file and appends its specs to graph's input specs (which fx_inputs_make and
   fx_graph_scale_inputs then use). */
fx_status fx_graph_load_input_specs (fx_graph *graph, const char *path, fx_diag *diag);
/* The spec a placeholder's own annotation gives: a tensor input named after it with its meta val. */
fx_input_spec fx_input_spec_of_placeholder (const fx_node *placeholder);
/* One random tensor for a spec. */
fx_status fx_input_from_spec (const fx_input_spec *spec, fx_generator *gen, fx_allocator *alloc,
                              fx_value *out, fx_diag *diag);
/* Replaces every size s of the graph's input specs and placeholder vals by max(1, s / divisor) when s >= min_size
   (for running fixture graphs at machine-sized shapes); graph views/reshapes with literal sizes must be
   scaled by the caller. */
void fx_graph_scale_inputs (fx_graph *graph, int64_t divisor, int64_t min_size);

/* ---------------------------------------------------------------- runs */

typedef enum fx_verdict
{
  FX_VERDICT_NOT_CHECKED,
  FX_VERDICT_PASS,
  FX_VERDICT_FAIL,
  FX_VERDICT_ERROR,
} fx_verdict;

const char *fx_verdict_name (fx_verdict v);   /* "not checked", "pass", "fail", "error" */

/* One run of one backend configuration: compile + warm-up + N timed calls. */
typedef struct fx_run_result
{
  char backend[64];
  char mode[64];
  char options[512];        /* the explicit options as a Python dict */
  char device[32];
  fx_status status;         /* FX_OK, or why the run failed */
  char error[2048];         /* the diag formatted; a subprocess's stderr tail */
  double compile_ms;
  double median_ms, min_ms, max_ms;
  int repeat;
  int warmup;
  size_t peak_bytes;        /* allocator peak during the timed calls */
  fx_verdict verdict;
  double max_abs_err;       /* worst element vs the reference */
  double max_rel_err;
  char accuracy_report[512];
  size_t n_kernels;
  char timing[128];         /* what the times cover ("wall clock of each call", "CUDA events ...") */
} fx_run_result;

void fx_run_result_to_json (const fx_run_result *r, fx_buf *out);

/* ---------------------------------------------------------------- threads (added with the interpreter benchmark) */

/* Threads the kernels use: parallel loops and, when the BLAS is OpenBLAS, its GEMMs. n < 1: the FX_NUM_THREADS
   environment variable or the CPU count. */
void fx_runtime_set_threads (int n);

#ifdef __cplusplus
}
#endif
