/* fx-inductor-impl.h: the inductor backend's device-independent loop IR, scheduler groups and the C generator's
   entry points (internal to backends/inductor). */
#pragma once

#include "fx/backend.h"
#include "fx/passes.h"

#define IND_MAXD FX_TENSOR_MAX_DIMS
#define IND_MAX_OPERANDS 4
#define IND_MAX_FUSION 64

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
  /* options */
  int threads;
  int simdlen;
  bool epilogue_fusion;
  int max_fusion;
  bool use_mvec;            /* glibc's vector math (libmvec) is available: declare simd clones */
  /* cpp./triton.inject_relu_bug_TESTING_ONLY (PyTorch's fault injection for testing the minifier): every relu is
     generated broken this way ("compile_error", "runtime_error", "accuracy"), NULL when off */
  const char *relu_bug;
  bool relu_bug_gpu;        /* the bug is the GPU generator's (triton.*): its runtime error traps on the device */
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
} ind_library;
fx_status ind_build (const char *source, size_t len, const char *cache_dir, bool *compiler_invoked,
                     ind_library *lib, fx_buf *compiler_output, fx_diag *diag);
const char *ind_cache_dir (void);
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
bool ind_gpu_wanted (const fx_compile_request *req, int *ordinal);
/* Generates, builds (NVRTC), autotunes (max_autotune) and plans the run; adds kernels and artifacts to out. Without
   a device: FX_ERR_NO_DEVICE "no CUDA device: ...". *gpu is set even on failure (free it with ind_gpu_free). */
fx_status ind_gpu_compile (ind_program *p, const fx_compile_request *req, int ordinal, fx_compiled *out,
                           ind_gpu **gpu, fx_diag *diag);
fx_status ind_gpu_run (ind_gpu *gpu, const ind_program *p, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                       fx_value **outputs, size_t *n_outputs, fx_diag *diag);
fx_status ind_gpu_profile (ind_gpu *gpu, const ind_program *p, fx_compiled *c, const fx_value *inputs,
                           size_t n_inputs, int repeat, fx_diag *diag);
const char *ind_gpu_skip_message (const ind_gpu *gpu);
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
