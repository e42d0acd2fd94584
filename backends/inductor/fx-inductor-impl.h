/* fx-inductor-impl.h: the inductor backend's device-independent loop IR, scheduler groups and the C generator's
   entry points (internal to backends/inductor). */
#pragma once

#include "fx/backend.h"
#include "fx/passes.h"

#define IND_MAXD FX_TENSOR_MAX_DIMS
#define IND_MAX_OPERANDS 4
#define IND_MAX_FUSION 64
#define IND_MAX_SYMS 3     /* symbols of a symbolic kernel (fx-inductor-sym.c) */

typedef struct ind_syms ind_syms;

/* A buffer: graph input, computed by a loop node, or written by an extern/fallback kernel. */
typedef enum ind_buf_kind
{
  IND_BUF_INPUT,
  IND_BUF_COMPUTED,
  IND_BUF_EXTERN,
} ind_buf_kind;

typedef struct ind_buffer
{
  ind_buf_kind kind;
  fx_dtype dtype;
  int ndim;
  int64_t sizes[IND_MAXD];
  int64_t strides[IND_MAXD];
  int input_index;          /* IND_BUF_INPUT: placeholder position */
  int producer;             /* node index writing it (-1 for inputs) */
  int last_use;             /* last group index reading it (after scheduling) */
  bool is_output;           /* a graph output views it: never reused, always stored */
  bool stored;              /* computed buffers: the kernel must write it (after fusion) */
  int slot;                 /* memory slot (reuse), -1 when own allocation */
  int n_readers;
} ind_buffer;

/* A strided view over a buffer: what every FX value lowers to (views are index rewrites, no copies). */
typedef struct ind_view
{
  int buf;
  int ndim;
  int64_t sizes[IND_MAXD];
  int64_t strides[IND_MAXD];
  int64_t offset;
} ind_view;

/* An operand of a node body: a load through an affine index over the node's iteration variables, or a constant. */
typedef enum ind_operand_kind
{
  IND_OPND_LOAD,
  IND_OPND_CONST,
} ind_operand_kind;

typedef struct ind_operand
{
  ind_operand_kind kind;
  int buf;
  int64_t offset;
  int64_t coef[IND_MAXD];   /* per node iteration variable */
  double c;                 /* constant (as the compute dtype) */
  fx_dtype cast;            /* converted to this before the body */
  int local;                /* scheduler: node whose in-register value this load reads, or -1 (memory) */
  bool recompute;           /* local is an r-loop node of an earlier segment: re-evaluate its body here */
  /* An indirect load (embedding, gather, index_select; C target only): the element at
     offset + coef . vars + idx_stride * i, where i is the value of operand idx_opnd of the same node (an earlier
     one), an integer in [0, idx_bound): checked by index check idx_check (ind_index_check), before any kernel runs
     where the indices are a graph input, else where the kernel computes them. buf is a graph input: nothing in
     the program writes it. */
  bool indirect;
  int idx_opnd;
  int idx_check;
  int64_t idx_stride, idx_bound;
} ind_operand;

typedef enum ind_node_kind
{
  IND_NODE_POINTWISE,
  IND_NODE_REDUCTION,
  IND_NODE_EXTERN,          /* mm / addmm / bmm on the engine's GEMM kernels */
  IND_NODE_FALLBACK,        /* any op without a lowering: the engine's reference kernel */
} ind_node_kind;

typedef enum ind_red
{
  IND_RED_NONE,
  IND_RED_SUM,
  IND_RED_PROD,
  IND_RED_MAX,
  IND_RED_MIN,
  IND_RED_MEAN,
  IND_RED_ANY,
  IND_RED_ALL,
  IND_RED_WELFORD_VAR,      /* variance with correction, Welford's update */
  IND_RED_ARGMAX,           /* the flat index (over the reduced dims) of the first max; a NaN wins, its first */
  IND_RED_ARGMIN,           /* the same for the min (C generator only: lowered for IND_TARGET_C) */
} ind_red;

typedef struct ind_node
{
  ind_node_kind kind;
  int op_id;                /* fx_op_id of the op it computes (pointwise body / reduction / extern) */
  const char *op_name;      /* "add", "sum", "_softmax": for kernel names (from the op table, never the input) */
  const char *tmpl;         /* the body: C with $0.. operands and $T the compute type (fx-inductor-lower.c) */
  fx_dtype out_dtype;
  fx_dtype compute_dtype;
  int ndim;                 /* iteration: kept dims first, reduced dims last */
  int64_t sizes[IND_MAXD];
  int nred;
  ind_red red;
  double red_param;         /* welford: correction */
  ind_operand opnd[IND_MAX_OPERANDS];
  int n_opnd;
  int out_buf;
  /* extern / fallback: the bound call, its tensor arguments as views */
  fx_op_call *call;
  int *arg_views;           /* per call arg: index into the lowering's view table or -1 */
  int **arg_list_views;     /* per call arg: views of a Tensor[] argument's items, or NULL */
  int *out_bufs;            /* per call out */
  int n_outs;
  const char **origins;     /* FX node names (for listings; never in generated code) */
  size_t n_origins;
  int group;
  bool xlevel;              /* placed at x level (not inside an r loop) in its group */
  int segment;
} ind_node;

/* One scheduled kernel: a fused group of loop nodes over outer dims X and reduction dims R, or one extern node. */
typedef enum ind_seg_kind
{
  IND_SEG_X,
  IND_SEG_R,
} ind_seg_kind;

typedef struct ind_group
{
  bool is_extern;
  int kx, kr;
  int64_t xs[IND_MAXD], rs[IND_MAXD];
  int *nodes;
  int n_nodes, cap_nodes;
  ind_seg_kind seg_kind[IND_MAX_FUSION];
  int n_segs;
  const char *name;
  size_t src_begin, src_end; /* its function in the generated source */
} ind_group;

/* The inductor options, resolved once when a compile starts (ind_options_read): nothing in the backend looks an
   option up by name after that. */
typedef struct ind_options
{
  bool max_autotune;
  bool coordinate_descent_tuning;
  bool epilogue_fusion;
  int threads;              /* cpp.threads, -1: the OpenMP default */
  int simdlen;              /* cpp.simdlen, -1: the compiler's choice */
  int max_fusion;           /* max_fusion_size, clamped to 1..IND_MAX_FUSION */
  bool trace;               /* trace.enabled */
  bool graph_diagram;       /* trace.graph_diagram */
  bool debug;
  bool cudagraphs;          /* triton.cudagraphs */
  bool cuda_looped;         /* CUDA: no persistent reductions (symbolic kernels whose lengths follow a symbol) */
  const char *device;       /* NULL: where the inputs are; "cpu", "cuda", "cuda:N" */
} ind_options;

/* Reads a resolved option set (NULL: the defaults); an unknown device is an error. */
fx_status ind_options_read (const fx_options *opts, ind_options *out, fx_diag *diag);

/* The indices an indirect load reads must lie in [0, bound), else the run fails naming the node, with the engine
   kernel's text for op_id. Indices that are a graph input (view >= 0, over an input buffer) are checked when a run
   starts; computed ones (view -1) where the kernel reads them (the C generator's fx_ind_index, reported after the
   call). */
typedef struct ind_index_check
{
  int view;
  int64_t bound;
  int op_id;                /* FX_OP_EMBEDDING, FX_OP_GATHER or FX_OP_INDEX_SELECT */
  int64_t dim;              /* the indexed dim of the source */
  const char *node;         /* the FX node (arena copy; messages only) */
} ind_index_check;

typedef struct ind_program
{
  fx_arena *arena;
  fx_arena *scratch;        /* bound-call values that fallback nodes reference */
  ind_buffer *bufs;
  int n_bufs, cap_bufs;
  ind_node *nodes;
  int n_nodes, cap_nodes;
  ind_view *views;
  int n_views, cap_views;
  ind_group *groups;
  int n_groups;
  int n_inputs;
  int *outputs;             /* views of the graph outputs */
  int n_outputs;
  int n_fallbacks;
  int n_slots;
  int64_t *slot_bytes;
  fx_buf fusion_log;        /* "cannot fuse buf1 with buf3: ..." */
  fx_buf fallback_log;
  ind_options opt;           /* what the compile was asked for */
  /* Writes into graph inputs (AOTAutograd's copy_ epilogue, copy_(arg, new_value)): compiled as extra outputs after
     the graph's own n_own_outputs, written into the inputs after each call (pass_input_writes) */
  int n_input_writes, n_own_outputs;
  int *input_writes;         /* placeholder position of each (malloc'd) */
  /* the code generator's parameters: from opt, varied by max_autotune */
  int threads;
  int simdlen;
  bool epilogue_fusion;
  int max_fusion;
  bool use_mvec;            /* glibc's vector math (libmvec) is available: declare simd clones */
  /* cpp./triton.inject_relu_bug_TESTING_ONLY (PyTorch's fault injection for testing the minifier): every relu is
     generated broken this way ("compile_error", "runtime_error", "accuracy"), NULL when off */
  const char *relu_bug;
  bool relu_bug_gpu;        /* the bug is the GPU generator's (triton.*): its runtime error traps on the device */
  bool arg_reductions;      /* lower max.dim / min.dim / argmax / argmin (IND_RED_ARGMAX/ARGMIN): the C generator
                               has them, the CUDA one not (there they stay fallbacks) */
  bool symbolic;            /* generated for symbolic kernels (fx-inductor-sym.c): parallel loops decide at run time
                               (an OpenMP if clause over the work, a literal that follows the sizes) */
  bool indirect_loads;      /* lower embedding / gather / index_select of graph inputs to indirect loads (C only; the
                               CUDA path keeps its device indexed copy) */
  ind_index_check *index_checks;  /* malloc'd */
  int n_index_checks, cap_index_checks;
} ind_program;

/* fx-inductor-lower.c */
fx_status ind_lower (ind_program *p, const fx_graph *graph, const fx_value *inputs, size_t n_inputs, fx_diag *diag);
int ind_add_buffer (ind_program *p, ind_buf_kind kind, fx_dtype dtype, int ndim, const int64_t *sizes,
                    const int64_t *strides);
const char *ind_ctype (fx_dtype dtype);
void ind_node_expr (const ind_program *p, const ind_node *n, const char *const *opnd_text, fx_buf *out);

/* fx-inductor-sched.c */
fx_status ind_schedule (ind_program *p, fx_diag *diag);
void ind_dump_ir (const ind_program *p, bool post_fusion, fx_buf *out);

/* fx-inductor-codegen.c */
void ind_codegen (ind_program *p, fx_buf *out);

/* fx-inductor-build.c */
typedef struct ind_library
{
  void *handle;
  char so_path[1024];
  bool cache_hit;
  char cache_note[512];     /* why the configured cache directory or a cached library was refused; empty if not */
} ind_library;
fx_status ind_build (const char *source, size_t len, const char *cache_dir, bool *compiler_invoked,
                     ind_library *lib, fx_buf *compiler_output, fx_diag *diag);
/* The kernel cache: $FXWB_INDUCTOR_CACHE, $XDG_CACHE_HOME/fx-workbench/inductor, ~/.cache/fx-workbench/inductor or
   /tmp/fx-workbench-inductor-<uid>, created 0700 and used only when private to this user (else a mkdtemp directory;
   ind_cache_refused says why). */
const char *ind_cache_dir (void);
const char *ind_cache_refused (void);
bool ind_have_openmp (void);
bool ind_have_mvec (void);
int ind_run_tool (char *const *argv, const char *log_path);

/* ---------------------------------------------------------------- CUDA (fx-inductor-cuda.c, fx-inductor-gpu.c)
   The CUDA generator reads the same scheduled program (groups, segments, register reuse) as the C generator and
   changes nothing in it; these types only describe how each group becomes GPU kernels. */
typedef enum ind_cuda_kind
{
  IND_CUDA_POINTWISE,       /* cuda_poi_: elements over threads, vec per thread */
  IND_CUDA_PERSISTENT,      /* cuda_per_: a row per block (or warp), its loads kept in registers */
  IND_CUDA_LOOPED,          /* cuda_red_: a row per block (or warp), each segment loops over the row */
  IND_CUDA_SPLIT,           /* cuda_red_ partials over (row, part) blocks, then cuda_per_ combines them */
} ind_cuda_kind;

typedef struct ind_cuda_config
{
  ind_cuda_kind kind;
  int threads;              /* per block (pointwise) or per row (reductions: 32 = a warp per row) */
  int rows;                 /* rows per block (warp rows), 1 otherwise */
  int vec;                  /* elements per thread and iteration: 4 (float4) or 1 */
  int split;                /* split: parts per row */
} ind_cuda_config;

#define IND_CUDA_MAX_MID 6  /* split reductions: at most this many reduction steps after the first */
typedef struct ind_cuda_kernel
{
  int group;
  ind_cuda_config cfg;
  const char *name;         /* NULL for extern groups */
  const char *name2;        /* split: the combining kernel (the last) */
  int n_mid;                /* split over several reduction steps (softmax): kernels launched between name and name2, */
  const char *mid_names[IND_CUDA_MAX_MID]; /* on name's grid and block with the same arguments */
  int *params;              /* buffers passed in order (then the workspace for split) */
  int n_params;
  unsigned grid[3], block[3];
  unsigned grid2[3], block2[3];
  int64_t ws_bytes;         /* split: partials */
  int64_t *ws_offset;       /* split: per group node, its partials' byte offset (-1: not a reduction) */
  size_t src_begin, src_mid, src_end;
} ind_cuda_kernel;

typedef struct ind_cuda_plan
{
  ind_cuda_kernel *kernels; /* per group */
  bool index32;
} ind_cuda_plan;

int ind_cuda_configs (const ind_program *p, int g, ind_cuda_config *out, int max);
const char *ind_cuda_kind_name (ind_cuda_kind kind);
void ind_cuda_config_describe (const ind_cuda_config *c, fx_buf *out);
bool ind_cuda_index32 (const ind_program *p);
void ind_cuda_plan_kernel (const ind_program *p, int g, const ind_cuda_config *cfg, int *counter,
                           ind_cuda_kernel *ck);
void ind_cuda_codegen (const ind_program *p, ind_cuda_plan *plan, fx_buf *out);
/* Device buffers of a planned program: graph inputs, graph outputs, temporaries (one per reuse slot), then one
   workspace per split reduction, numbered in that order (the fx_cuda_program adds them in the same order). */
enum { IND_PB_INPUT, IND_PB_OUTPUT, IND_PB_TEMP };
typedef struct ind_cuda_layout
{
  struct ind_cuda_pbuf
  {
    int role;               /* IND_PB_* */
    size_t bytes;
    int ir_buf;             /* the IR buffer (the first of a slot), -1 for a workspace */
  } *pb;
  int n_pbufs;
  int *pbuf;                /* per IR buffer: its device buffer or -1 (never stored) */
  int *ws;                  /* per group: its workspace buffer or -1 */
} ind_cuda_layout;
void ind_cuda_layout_make (const ind_program *p, const ind_cuda_plan *plan, ind_cuda_layout *l);
void ind_cuda_layout_free (ind_cuda_layout *l);
void ind_cuda_wrapper_text (const ind_program *p, const ind_cuda_plan *plan, const ind_cuda_layout *l, fx_buf *out);
/* Plans every group with its heuristic configuration (no device needed). */
void ind_cuda_plan_default (const ind_program *p, ind_cuda_plan *plan);
/* kind >= 0: each group takes its first configuration of that ind_cuda_kind where it has one (split: wherever the
   group can be split, whatever its shape), the heuristic one otherwise. */
void ind_cuda_plan_kind (const ind_program *p, ind_cuda_plan *plan, int kind);

/* fx-inductor-gpu.c: the program on a CUDA device */
typedef struct ind_gpu ind_gpu;
/* The example inputs are CUDA tensors or the `device` option names cuda (ordinal: which device). */
bool ind_gpu_wanted (const fx_value *inputs, size_t n_inputs, const ind_options *opt, int *ordinal);
/* Generates, builds (NVRTC), autotunes (max_autotune) and plans the run; adds kernels and artifacts to out. Without
   a device: FX_ERR_NO_DEVICE "no CUDA device: ...". *gpu is set even on failure (free it with ind_gpu_free).
   With symbols (*syms, fx-inductor-sym.c) the module is built from the source generalized over them (vals NULL:
   the compile at the example sizes) or from their template (vals: a program lowered at other sizes whose source is
   the template's there), the values written into the module; *syms is cleared where the symbolic source cannot be
   made or built (sym_why says why) and the concrete source is built. syms NULL: concrete. */
fx_status ind_gpu_compile (ind_program *p, const fx_compile_request *req, int ordinal, fx_compiled *out,
                           ind_gpu **gpu, ind_syms **syms, const int64_t *vals, fx_buf *sym_why, fx_diag *diag);
fx_status ind_gpu_run (ind_gpu *gpu, const ind_program *p, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                       fx_value **outputs, size_t *n_outputs, fx_diag *diag);
fx_status ind_gpu_profile (ind_gpu *gpu, const ind_program *p, fx_compiled *c, const fx_value *inputs,
                           size_t n_inputs, int repeat, fx_diag *diag);
const char *ind_gpu_skip_message (const ind_gpu *gpu);
/* embedding, index_select and gather as one indexed copy over [outer, m, inner] (fx_cuda_take's desc, its
   pointers unset; element strides of the output buffer and of the src and index views, whose view numbers are
   returned): false when the layouts do not collapse to that or the op is another. */
struct fx_cuda_take_desc;
struct fx_cuda_argreduce_desc;
/* max.dim / min.dim / argmax / argmin of an f32 or f64 tensor over one dim whose other dims collapse to [outer, r,
   inner]: the device's arg-reduction (fx_cuda_argreduce's desc; the source view, the values' buffer or -1, the
   indices' buffer); false when the node runs on the host. */
bool ind_gpu_argreduce_plan (const ind_program *p, const ind_node *n, struct fx_cuda_argreduce_desc *t,
                             int *src_view, int *val_buf, int *idx_buf);
bool ind_gpu_take_plan (const ind_program *p, const ind_node *n, struct fx_cuda_take_desc *t, int *src_view,
                        int *idx_view);
/* The backend's bench on the GPU: inputs made resident once, warm-up, each call timed with CUDA events. */
fx_status ind_gpu_bench (ind_gpu *gpu, const ind_program *p, const fx_value *inputs, size_t n_inputs, int warmup,
                         int repeat, fx_arena *arena, double *times_ms, fx_value **outputs, size_t *n_outputs,
                         size_t *peak_bytes, fx_diag *diag);
/* Runs extern or fallback node `node` on the host (the engine's reference kernel) over bt, the host tensors per
   buffer (its inputs' buffers set); its output buffers' tensors are replaced by the results in their planned
   layout. The GPU path's per-node fallback. */
fx_status ind_run_node_host (const ind_program *p, int node, fx_generator *gen, fx_tensor **bt, fx_arena *arena,
                             fx_diag *diag);
void ind_gpu_free (ind_gpu *gpu);
/* GPU-path peephole (fx-inductor-gpu.c; needs no device): group g is an extern mm/addmm whose result feeds only
   group g + 1, a lone `a + b` (add.Tensor, alpha 1) of it and a matrix X read in the output's row-major layout;
   the GEMM can write the add's output D itself with X as cuBLASLt's C (D = A·B + bias + X). pbuf: per IR buffer,
   its device buffer (ind_cuda_layout), to refuse a D that reuses memory the GEMM reads. */
typedef struct ind_gpu_residual
{
  int consumer;             /* the add's group (g + 1) */
  int x_buf;                /* X's IR buffer and element offset */
  int64_t x_offset;
  int d_buf;                /* the add's output buffer */
} ind_gpu_residual;
bool ind_gpu_residual_match (const ind_program *p, const int *pbuf, int g, ind_gpu_residual *out);

/* The buffers a fused kernel takes as parameters (loads not read from a register, stored outputs), in first-use
   order; shared by the C and the CUDA generators. */
typedef struct ind_kernel_params
{
  int *buf_param;     /* per buffer: param index or -1 */
  bool *buf_written;
  int n_params;
  int *params;        /* buffer of each param */
} ind_kernel_params;

void ind_kernel_params_collect (const ind_program *p, const ind_group *G, ind_kernel_params *kp);
void ind_kernel_params_free (ind_kernel_params *kp);

/* ---------------------------------------------------------------- the pipeline (fx-inductor-pipeline.c) */

typedef enum ind_target
{
  IND_TARGET_C,             /* C with OpenMP loops, built by the system C compiler */
  IND_TARGET_CUDA,          /* CUDA C, built by NVRTC on a device */
} ind_target;

/* One compile through the passes, in the order ind_pipeline_run lists them. The caller fills the inputs; the
   results stay in it until taken (ind_pipeline_clear frees what is left). */
typedef struct ind_pipeline
{
  const fx_graph *graph;
  const fx_value *inputs;   /* example inputs (meta tensors suffice without build) */
  size_t n_inputs;
  const fx_compile_request *req;  /* the compile's request (CUDA build); NULL otherwise */
  ind_target target;
  int ordinal;              /* CUDA device */
  bool build;               /* false: stop once the code is generated (no compiler, no device) */
  int cuda_kind;            /* CUDA without build: every reduction of this ind_cuda_kind where it can be, -1: heuristic */
  fx_compiled *out;         /* gets the artifacts, kernels (CUDA) and notes; NULL: nothing recorded */
  /* results */
  ind_program prog;
  fx_buf source;            /* the generated C or CUDA */
  ind_cuda_plan plan;       /* CUDA without build: each group's kernel choice */
  ind_library lib;          /* C build */
  ind_gpu *gpu;             /* CUDA build (set even on failure) */
  /* symbolic kernels: the C generated is generalized over these symbols before it is built (NULL: concrete);
     cleared when that fails, the reason in sym_why */
  ind_syms *syms;
  fx_buf sym_why;
} ind_pipeline;

/* ---------------------------------------------------------------- symbolic kernels (fx-inductor-sym.c) */

/* The symbols of a graph's inputs (placeholders with plain symbolic sizes, "f32[s0, 64]", "Sym(s0)") at the example
   inputs' values, with a copy of the graph; NULL when there are none, or when why says what keeps them from symbolic
   kernels (a size of 0 or 1, an expression, a non-contiguous input, more than IND_MAX_SYMS). */
ind_syms *ind_syms_find (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, const ind_options *opt,
                         fx_buf *why);
void ind_syms_free (ind_syms *s);
int ind_syms_count (const ind_syms *s);
const char *ind_syms_name (const ind_syms *s, int i);
/* How many literals of the template follow the sizes (after ind_syms_generalize). */
int ind_syms_fitted (const ind_syms *s);
/* The symbols' values in a run's inputs; an error when inputs disagree or do not fit the graph. */
fx_status ind_syms_values (const ind_syms *s, const fx_value *inputs, size_t n_inputs, int64_t *vals, fx_diag *diag);
/* The values at the example inputs: those the compiled program was lowered at. */
const int64_t *ind_syms_base (const ind_syms *s);
/* base_source is the C generated at the example sizes: fits its literals over the symbols (lowering again at other
   sizes) and writes the symbolic source (fx_ks<i>, fx_inductor_set_sizes); FX_ERR_UNSUPPORTED with why when the
   source does not follow the sizes that way. */
fx_status ind_syms_generalize (ind_syms *s, const fx_value *inputs, size_t n_inputs, const fx_buf *base_source,
                               fx_buf *sym_source, fx_buf *why);
/* An offset into base_source as an offset into the symbolic source. */
size_t ind_syms_map_offset (const ind_syms *s, size_t off);
/* The pipeline over the graph copy with every symbol at vals (NULL: inputs as they are), built or not. */
struct ind_pipeline;
fx_status ind_syms_lower (const ind_syms *s, const fx_value *inputs, size_t n_inputs, const int64_t *vals,
                          bool build, struct ind_pipeline *pl, fx_diag *diag);
/* Is source (generated at vals) the template at vals? Then the symbolic library runs its program. */
bool ind_syms_matches (const ind_syms *s, const fx_buf *source, const int64_t *vals);
/* What the template is generated for (C by default): CUDA declares the symbols __constant__ (int with 32-bit index
   math, else long long) for the runner to write into each loaded module. Set before ind_syms_generalize. */
void ind_syms_set_target (ind_syms *s, ind_target target, bool int32);
/* Lowerings at other sizes get opt.cuda_looped (ind_cuda_symbolic_source's second try). */
void ind_syms_set_cuda_looped (ind_syms *s);
/* The CUDA source over syms: generated with plan, generalized (text, the symbolic source); where that fails and a
   reduction is persistent, the plan is made again with looped reductions only (p->opt.cuda_looped: a persistent
   block follows the reduction's length, which may be symbolic) and tried once more. false with why. src gets the
   concrete source of the plan in the end. */
bool ind_cuda_symbolic_source (ind_program *p, ind_cuda_plan *plan, ind_syms *syms, const fx_value *inputs,
                               size_t n_inputs, fx_buf *src, fx_buf *text, fx_buf *why);
/* The graph the symbols were found in (the copy variants are lowered from). */
const fx_graph *ind_syms_graph (const ind_syms *s);
/* The symbolic source ind_syms_generalize wrote (NULL before). */
const char *ind_syms_text (const ind_syms *s, size_t *len);

/* Defaults: target C, build, cuda_kind -1, opt from the defaults. */
void ind_pipeline_init (ind_pipeline *pl, const fx_graph *graph, const fx_value *inputs, size_t n_inputs);
/* decompose → lower to loop IR → schedule (fuse) → codegen C or CUDA → build. */
fx_status ind_pipeline_run (ind_pipeline *pl, fx_diag *diag);
void ind_pipeline_clear (ind_pipeline *pl);
void ind_program_free (ind_program *p);
/* The kernels of a scheduled program as the compiled object lists them: C kernels with their span of source
   (what ind_codegen wrote into source), or the CUDA kernels of a plan (source: the CUDA text); nodes from the
   groups' origins. */
void ind_list_c_kernels (const ind_program *p, const fx_buf *source, fx_compiled *out);
void ind_list_cuda_kernels (const ind_program *p, const ind_cuda_plan *plan, const fx_buf *source, fx_compiled *out);
/* The FX node names a group covers, deduplicated, onto a kernel (and a fused group's after them). */
void ind_kernel_add_origins (const ind_program *p, const ind_group *G, fx_compiled *out, fx_kernel_info *ki);

/* ---------------------------------------------------------------- shared by the generators (fx-inductor-emit.c) */

void ind_indent (int depth, fx_buf *out);
/* One line (or a few) of generated code at DEPTH levels of indentation: ind_indent, then fx_buf_printf. */
void ind_printf (int depth, fx_buf *out, const char *fmt, ...) FX_PRINTF (3, 4);
/* The lowest (or highest) value of dtype D in generated source, the start of a max (min) reduction: +-INFINITY for
   floats, the integer limits (C: <stdint.h>'s names; CUDA: literals), else "0" ("1"). */
const char *ind_dtype_limit (fx_dtype d, bool highest, bool cuda);
/* Room for items[n] in a realloc'd array of *cap items of ITEM bytes (doubling, FIRST at first); returns the array. */
void *ind_grow (void *items, int n, int *cap, size_t item, int first);
/* The product of nd sizes: a group's x rows are ind_numel (G->xs, G->kx), its r elements per row ind_numel (G->rs,
   G->kr). */
int64_t ind_numel (const int64_t *sizes, int nd);
/* "1, 2, 3": n integers, comma-separated (sizes, strides, ranges in the dumps). */
void ind_put_ints (fx_buf *out, const int64_t *v, int n);
/* FNV-1a over LEN bytes, continuing from H (IND_FNV_OFFSET to start): the build cache's keys, the kernel dedup. */
#define IND_FNV_OFFSET 14695981039346656037ULL
uint64_t ind_fnv1a (uint64_t h, const void *data, size_t len);
/* Walks a group's nodes of one segment: the index (into p->nodes) of the next one at or after *k that is in segment
   SEG and, unless KIND is negative, of that ind_node kind; *k moves past it. -1 at the end. */
int ind_group_next (const ind_program *p, const ind_group *G, int seg, int kind, int *k);
/* The same over the reductions of segment SEG that are RED (the Welford variances, which both code generators
   finish in a pass of their own). */
int ind_group_next_red (const ind_program *p, const ind_group *G, int seg, ind_red red, int *k);
/* node coefficients (per node variable) → kernel x / r coefficients (the node's non-unit dims in order) */
void ind_split_coef (const ind_node *n, const int64_t *coef, int kx, int64_t *xc, int64_t *rc);
/* A walk over the loads a group's nodes read from a buffer (not from a local), node by node: start it zeroed. */
typedef struct ind_load_walk
{
  int k, o;                            /* where the walk goes on: node k of the group, its operand o */
  const ind_node *n;                   /* the load's node and operand */
  const ind_operand *op;
  int64_t xc[IND_MAXD], rc[IND_MAXD];  /* its coefficients as ind_split_coef splits them */
} ind_load_walk;
/* Moves w to the group's next such load; false at the end. */
bool ind_group_next_load (const ind_program *p, const ind_group *G, ind_load_walk *w);
/* the contiguous coefficients of a node's output over its kept dims */
void ind_node_store_coef (const ind_node *n, int64_t *coef);
/* How an index expression is written: 32-bit constants (CUDA when every index fits), and which x / r variable is
   named by its base ("x0b": the first of a group of vector lanes), -1 for none. NULL: 64-bit, no base. */
typedef struct ind_index_style
{
  bool index32;
  int base_x;
  int base_r;
} ind_index_style;
void ind_put_index (const int64_t *xc, int kx, const int64_t *rc, int kr, int64_t off, const ind_index_style *style,
                    fx_buf *out);
/* "in_ptrN" / "out_ptrN": a buffer as its kernel parameter */
void ind_param_name (const ind_kernel_params *kp, int buf, fx_buf *out);
/* A node's value as an expression: operands in registers as tmpN (re-evaluated where the scheduler asks),
   loads from memory written by the generator's load function; an indirect load gets its index operand's text as
   INDEX (NULL for a plain load). */
typedef void (*ind_load_fn) (void *ctx, const ind_node *n, const ind_operand *op, const char *index, fx_buf *out);
void ind_node_value (const ind_program *p, const ind_node *n, bool recomputing, ind_load_fn load, void *ctx,
                     fx_buf *out);
/* bytes from element 0 to the last element of a buffer's layout; with its reuse slot, the slot's bytes */
int64_t ind_buffer_extent_bytes (const ind_buffer *B);
int64_t ind_buffer_bytes (const ind_program *p, int b);
/* a tensor already in a buffer's compiled layout (size-1 dims may have any stride) */
bool ind_same_layout (const fx_tensor *t, const ind_buffer *b);
/* The index checks of a run (before any kernel): bufs[b] holds input buffer b's data in its compiled layout. */
fx_status ind_check_indices (const ind_program *p, void *const *bufs, fx_diag *diag);
/* The error of index check `check` (an in-kernel one) that read index k. */
fx_status ind_index_error (const ind_program *p, int check, int64_t k, fx_diag *diag);
/* The run's input for an input buffer: a tensor of the compiled shape and dtype, else a located error. */
fx_status ind_check_input (const ind_buffer *B, const fx_value *inputs, size_t n_inputs, fx_tensor **t,
                           fx_diag *diag);
