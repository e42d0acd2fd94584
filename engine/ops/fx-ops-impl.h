/* fx-ops-impl.h: internals shared by the op table's meta functions, reference kernels and decompositions. */
#pragma once

#include "fx/ops.h"
#include "fx/passes.h"

#define FX_OP(id, target, kind, schema, meta, kernel, decomp) \
  fx_status meta (fx_op_call *call);
#include "fx/ops.def"
#undef FX_OP

fx_status fx_kernel_binary (fx_op_call *call);
fx_status fx_kernel_unary (fx_op_call *call);
fx_status fx_kernel_where (fx_op_call *call);
fx_status fx_kernel_clamp (fx_op_call *call);
fx_status fx_kernel_masked_fill (fx_op_call *call);
fx_status fx_kernel_copy (fx_op_call *call);
fx_status fx_kernel_reduce (fx_op_call *call);
fx_status fx_kernel_cumsum (fx_op_call *call);
fx_status fx_kernel_softmax (fx_op_call *call);
fx_status fx_kernel_prepare_softmax (fx_op_call *call);
fx_status fx_kernel_layer_norm (fx_op_call *call);
fx_status fx_kernel_batch_norm (fx_op_call *call);
fx_status fx_kernel_nll_loss (fx_op_call *call);
fx_status fx_kernel_matmul (fx_op_call *call);
fx_status fx_meta_linear (fx_op_call *call);
fx_status fx_kernel_linear (fx_op_call *call);
fx_status fx_kernel_convolution (fx_op_call *call);
fx_status fx_kernel_pool2d (fx_op_call *call);
fx_status fx_kernel_indexing (fx_op_call *call);
/* The coordinates of row-major position flat in a tensor of these sizes. */
static inline void
fx_unravel (const int64_t *sizes, int ndim, int64_t flat, int64_t *coord)
{
  for (int k = ndim - 1; k >= 0; k--)
    {
      coord[k] = flat % sizes[k];
      flat /= sizes[k];
    }
}

fx_status fx_meta_scatter (fx_op_call *call);
fx_status fx_kernel_scatter (fx_op_call *call);
fx_status fx_kernel_index_tensor (fx_op_call *call);
fx_status fx_kernel_index_put (fx_op_call *call);
fx_status fx_kernel_view_scatter (fx_op_call *call);
fx_status fx_kernel_topk (fx_op_call *call);
fx_status fx_kernel_upsample2d (fx_op_call *call);
fx_status fx_kernel_cat (fx_op_call *call);
fx_status fx_kernel_pad (fx_op_call *call);
fx_status fx_kernel_flip (fx_op_call *call);
fx_status fx_kernel_tri (fx_op_call *call);
fx_status fx_kernel_factory (fx_op_call *call);
fx_status fx_kernel_random (fx_op_call *call);
fx_status fx_kernel_dropout (fx_op_call *call);

fx_status fx_decomp_softmax (fx_graph *graph, fx_node *node, fx_diag *diag);
fx_status fx_decomp_prepare_softmax (fx_graph *graph, fx_node *node, fx_diag *diag);
fx_status fx_decomp_layer_norm (fx_graph *graph, fx_node *node, fx_diag *diag);
fx_status fx_decomp_logsumexp (fx_graph *graph, fx_node *node, fx_diag *diag);
fx_status fx_decomp_vector_norm (fx_graph *graph, fx_node *node, fx_diag *diag);
fx_status fx_decomp_nll_loss_forward (fx_graph *graph, fx_node *node, fx_diag *diag);

/* Error helper: "node 'x' (aten.op): message". */
fx_status fx_op_error (fx_op_call *call, fx_status code, const char *fmt, ...) FX_PRINTF (3, 4);

/* Argument accessors (positions follow the schema). */
static inline fx_tensor *
fx_arg_tensor (fx_op_call *call, int i)
{
  return call->args[i].kind == FX_VALUE_TENSOR ? call->args[i].u.t : NULL;
}

/* A fresh meta output (contiguous). */
fx_tensor *fx_out_meta (fx_op_call *call, int slot, fx_dtype dtype, int ndim, const int64_t *sizes);
/* Normalises a dim index against ndim (negative counts from the end); false when out of range. */
bool fx_norm_dim (fx_op_call *call, int64_t *dim, int ndim);
/* Dtype argument (ScalarType?) or fallback. */
fx_dtype fx_arg_dtype_or (fx_op_call *call, int i, fx_dtype fallback);

/* Strided iteration over up to 4 operands of one shape (byte strides), dims coalesced. */
typedef struct fx_iter
{
  int ndim;
  int nops;
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  int64_t strides[4][FX_TENSOR_MAX_DIMS]; /* bytes */
  char *base[4];
} fx_iter;

/* ops[0] is the output (its shape is the iteration shape); inputs are broadcast to it. */
void fx_iter_init (fx_iter *it, fx_tensor *const *ops, int nops);
typedef void (*fx_iter_loop) (char **ptrs, const int64_t *strides, int64_t n, void *ctx);
void fx_iter_run (const fx_iter *it, fx_iter_loop loop, void *ctx);

/* Parallel-for over [0, n) in chunks (threads when the work is large). */
void fx_parallel_for (int64_t n, int64_t grain, void (*fn) (int64_t begin, int64_t end, void *ctx), void *ctx);
/* AVX2 fast paths (fx-ops-simd.c) of contiguous f32 loops; false when the CPU or the op has none (then the caller's
   portable loop runs). Binary: sa/sb are 1 (contiguous) or 0 (a broadcast scalar). */
bool fx_simd_unary_f32 (fx_op_id op, bool tanh_gelu, float *o, const float *x, int64_t n);
bool fx_simd_binary_f32 (fx_op_id op, float alpha, float *o, const float *a, const float *b, int64_t sa, int64_t sb,
                         int64_t n);
/* One softmax row: q = softmax(p) (or log_softmax; q NULL: only the max and the sum of exp(p - max)). False when the
   row holds a NaN (the scalar loop handles it). */
bool fx_simd_softmax_row_f32 (float *q, const float *p, int64_t n, bool log_softmax, double *sum, float *max);
bool fx_simd_layer_norm_row_f32 (float *q, const float *p, const float *w, const float *b, int64_t n, double eps,
                                 double *mean, double *rstd);

/* The scalar layer-norm output q[i] = (p[i] - fm) * fr * w[i] + b[i] for i in [from, n) (w, b may be NULL): the
   whole row of the reference loop and the tail of the SIMD one, which must round alike. */
static inline void
fx_layer_norm_apply_f32 (float *q, const float *p, const float *w, const float *b, int64_t from, int64_t n, float fm,
                         float fr)
{
  for (int64_t i = from; i < n; i++)
    {
      float v = (p[i] - fm) * fr;
      if (w)
        v *= w[i];
      if (b)
        v += b[i];
      q[i] = v;
    }
}

/* Threads fx_parallel_for uses (n < 1: FX_NUM_THREADS or the CPU count, read again). */
void fx_parallel_set_threads (int n);
/* How many threads fx_parallel_for would use at most. */
int fx_parallel_threads (void);
/* OpenBLAS's thread count, where the cblas is OpenBLAS. */
void fx_blas_set_threads (int n);

/* Graph-building helpers for decompositions: a call_function node of a table op inserted before `before`, copying
   before's provenance (stack trace, module stack, from_node with the pass "decompose"). */
fx_node *fx_decomp_call (fx_graph *graph, fx_node *before, fx_op_id op, const fx_arg *args, size_t n_args,
                         const fx_kwarg *kwargs, size_t n_kwargs);
