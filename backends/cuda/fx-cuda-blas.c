/* fx-cuda-blas.c: cuBLAS GEMM for the extern kernels mm, bmm and addmm: row-major (and transposed-view) strided
   matrices mapped onto cuBLAS's column-major calls, one strided-batched call for every dtype. */
#include "fx-cuda-impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define CB (fx_cuda_libs_cublas ()->cublas)


struct fx_cuda_blas
{
  fx_cuda *cuda;
  fx_cublasHandle handle;
  fx_cuda_ptr workspace;
  bool allow_tf32;
};

fx_status
fx_cublas_check (fx_cublasStatus status, const char *(*describe) (fx_cublasStatus), const char *what, fx_diag *diag)
{
  if (status == 0)
    return FX_OK;
  const char *text = describe ? describe (status) : NULL;
  return fx_diag_set (diag, status == 3 ? FX_ERR_NOMEM : FX_ERR_BACKEND, "%s: cuBLAS status %d (%s)", what,
                      (int) status, text ? text : "no description");
}

static fx_status
blas_check (fx_cublasStatus status, const char *what, fx_diag *diag)
{
  return fx_cublas_check (status, CB.cublasGetStatusString, what, diag);
}

bool
fx_cuda_blas_allow_tf32 (const fx_cuda_blas *blas)
{
  return blas->allow_tf32;
}

fx_status
fx_cuda_get_blas (fx_cuda *cuda, fx_cuda_blas **out, fx_diag *diag)
{
  const fx_cuda_libs *l = fx_cuda_libs_cublas ();
  fx_cuda_blas *blas;
  fx_status st;

  *out = NULL;
  if (cuda->blas)
    {
      *out = cuda->blas;
      return FX_OK;
    }
  if (!l->cublas_loaded)
    return fx_diag_set (diag, FX_ERR_NO_DEVICE, "%s", l->cublas_error);
  if ((blas = fx_cuda_enter_alloc (cuda, sizeof *blas, &st, diag)) == NULL)
    return st;
  blas->cuda = cuda;
  if ((st = blas_check (CB.cublasCreate (&blas->handle), "cublasCreate", diag)) != FX_OK)
    {
      free (blas);
      return st;
    }
  if (CB.cublasSetWorkspace)
    {
      if ((st = fx_cuda_malloc (cuda, FX_CUDA_BLAS_WORKSPACE_BYTES, NULL, &blas->workspace, diag)) != FX_OK
          || (st = blas_check (CB.cublasSetWorkspace (blas->handle, (void *) (uintptr_t) blas->workspace,
                                                      FX_CUDA_BLAS_WORKSPACE_BYTES), "cublasSetWorkspace", diag)) != FX_OK)
        {
          fx_cuda_free (cuda, blas->workspace);
          CB.cublasDestroy (blas->handle);
          free (blas);
          return st;
        }
    }
  cuda->blas = blas;
  *out = blas;
  return FX_OK;
}

/* Called by fx_cuda_close, before the allocator goes. */
void
fx_cuda_blas_destroy (fx_cuda *cuda)
{
  fx_cuda_blas *blas = cuda->blas;

  if (!blas)
    return;
  if (fx_cuda_enter (cuda, NULL) == FX_OK)
    CB.cublasDestroy (blas->handle);
  fx_cuda_free (cuda, blas->workspace);
  free (blas);
  cuda->blas = NULL;
}

void
fx_cuda_blas_set_allow_tf32 (fx_cuda_blas *blas, bool allow)
{
  blas->allow_tf32 = allow;
}

fx_cuda_matrix
fx_cuda_matrix_rowmajor (fx_cuda_ptr data, int64_t rows, int64_t cols)
{
  fx_cuda_matrix m = { data, rows, cols, cols, 1, rows * cols };
  return m;
}

static int64_t
max3 (int64_t a, int64_t b, int64_t c)
{
  int64_t m = a > b ? a : b;
  return m > c ? m : c;
}

/* Leading dimension of a matrix whose N-long dimension has unit stride and whose M-long one has stride LD, else -1.
   A size-1 dimension's stride does not matter. */
static int64_t
leading_dim (int64_t n, int64_t unit_stride, int64_t m, int64_t ld)
{
  if (!(n == 1 || unit_stride == 1))
    return -1;
  if (m == 1)
    return max3 (1, n, 0);
  return ld >= n && ld >= 1 ? ld : -1;
}

/* Leading dimension when x's memory is a row-major matrix (unit column stride), else -1. */
int64_t
fx_cuda_matrix_rowmajor_ld (const fx_cuda_matrix *x)
{
  return leading_dim (x->cols, x->col_stride, x->rows, x->row_stride);
}

/* Leading dimension when x's memory is a column-major matrix (unit row stride), else -1. */
int64_t
fx_cuda_matrix_colmajor_ld (const fx_cuda_matrix *x)
{
  return leading_dim (x->rows, x->row_stride, x->cols, x->col_stride);
}

/* cuBLAS operand from x: `want_transpose` false means cuBLAS must see x itself (column-major), true means x^T. */
bool
fx_cuda_blas_operand (const fx_cuda_matrix *x, bool want_transpose, int *op, int64_t *ld)
{
  int64_t as_col = fx_cuda_matrix_colmajor_ld (x), as_row = fx_cuda_matrix_rowmajor_ld (x);

  /* x in column-major memory is x; in row-major memory it is x^T. */
  if (!want_transpose)
    {
      if (as_col >= 0)
        *op = FX_CUBLAS_OP_N, *ld = as_col;
      else if (as_row >= 0)
        *op = FX_CUBLAS_OP_T, *ld = as_row;
      else
        return false;
    }
  else
    {
      if (as_row >= 0)
        *op = FX_CUBLAS_OP_N, *ld = as_row;
      else if (as_col >= 0)
        *op = FX_CUBLAS_OP_T, *ld = as_col;
      else
        return false;
    }
  return true;
}

fx_status
fx_cuda_gemm (fx_cuda *cuda, fx_cuda_stream *stream, fx_dtype dtype, int64_t batch, double alpha,
              const fx_cuda_matrix *a, const fx_cuda_matrix *b, double beta, const fx_cuda_matrix *c, fx_diag *diag)
{
  fx_cuda_stream *s = stream ? stream : cuda->default_stream;
  int64_t m = a->rows, k = a->cols, n = b->cols;
  int data_type, compute_type, op_a, op_b;
  int64_t ld_a, ld_b, ld_c;
  const fx_cuda_matrix *first, *second;
  int64_t cm, cn;
  float alpha_f = (float) alpha, beta_f = (float) beta;
  const void *alpha_p = &alpha_f, *beta_p = &beta_f;
  fx_cuda_blas *blas;
  fx_status st;

  if (b->rows != k || c->rows != m || c->cols != n)
    return fx_diag_set (diag, FX_ERR_INVALID, "gemm shapes do not agree: [%lld, %lld] @ [%lld, %lld] -> [%lld, %lld]",
                        (long long) m, (long long) k, (long long) b->rows, (long long) n, (long long) c->rows,
                        (long long) c->cols);
  if (batch < 1 || m < 0 || n < 0 || k < 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "gemm with batch %lld and negative or empty sizes", (long long) batch);
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || batch > INT_MAX)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "gemm sizes beyond 32-bit cuBLAS calls");
  if (batch > 1 && c->batch_stride == 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "gemm output broadcast over a batch (batch stride 0)");
  if (m == 0 || n == 0)
    return FX_OK;

  if (dtype == FX_DTYPE_F32)
    data_type = FX_CUDA_R_32F, compute_type = FX_CUBLAS_COMPUTE_32F;
  else if (dtype == FX_DTYPE_F64)
    {
      data_type = FX_CUDA_R_64F, compute_type = FX_CUBLAS_COMPUTE_64F;
      alpha_p = &alpha;
      beta_p = &beta;
    }
  else if (dtype == FX_DTYPE_F16)
    data_type = FX_CUDA_R_16F, compute_type = FX_CUBLAS_COMPUTE_32F;
  else if (dtype == FX_DTYPE_BF16)
    data_type = FX_CUDA_R_16BF, compute_type = FX_CUBLAS_COMPUTE_32F;
  else
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "cuBLAS gemm on %s", fx_dtype_name (dtype));

  /* cuBLAS is column-major. A row-major C is C^T in column-major, so compute C^T = B^T A^T; a column-major C is
     computed directly as A B. */
  if ((ld_c = fx_cuda_matrix_rowmajor_ld (c)) >= 0)
    {
      first = b, second = a, cm = n, cn = m;
      if (!fx_cuda_blas_operand (b, true, &op_a, &ld_a) || !fx_cuda_blas_operand (a, true, &op_b, &ld_b))
        goto strides;
    }
  else if ((ld_c = fx_cuda_matrix_colmajor_ld (c)) >= 0)
    {
      first = a, second = b, cm = m, cn = n;
      if (!fx_cuda_blas_operand (a, false, &op_a, &ld_a) || !fx_cuda_blas_operand (b, false, &op_b, &ld_b))
        goto strides;
    }
  else
    goto strides;
  if (ld_a > INT_MAX || ld_b > INT_MAX || ld_c > INT_MAX)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "gemm leading dimension beyond 32 bits");

  if ((st = fx_cuda_get_blas (cuda, &blas, diag)) != FX_OK)
    return st;
  if (dtype == FX_DTYPE_F32 && blas->allow_tf32)
    compute_type = FX_CUBLAS_COMPUTE_32F_FAST_TF32;
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return st;
  if ((st = blas_check (CB.cublasSetStream (blas->handle, s->stream), "cublasSetStream", diag)) != FX_OK)
    return st;
  return blas_check (CB.cublasGemmStridedBatchedEx (blas->handle, op_a, op_b, (int) cm, (int) cn, (int) k, alpha_p,
                                                    (const void *) (uintptr_t) first->data, data_type, (int) ld_a,
                                                    first->batch_stride,
                                                    (const void *) (uintptr_t) second->data, data_type, (int) ld_b,
                                                    second->batch_stride, beta_p,
                                                    (void *) (uintptr_t) c->data, data_type, (int) ld_c,
                                                    c->batch_stride, (int) batch, compute_type,
                                                    FX_CUBLAS_GEMM_DEFAULT),
                     "cublasGemmStridedBatchedEx", diag);

strides:
  return fx_diag_set (diag, FX_ERR_UNSUPPORTED,
                      "gemm operand strides need a contiguous copy (a %lldx%lld (%lld, %lld), b %lldx%lld (%lld, %lld),"
                      " c %lldx%lld (%lld, %lld))",
                      (long long) a->rows, (long long) a->cols, (long long) a->row_stride, (long long) a->col_stride,
                      (long long) b->rows, (long long) b->cols, (long long) b->row_stride, (long long) b->col_stride,
                      (long long) c->rows, (long long) c->cols, (long long) c->row_stride, (long long) c->col_stride);
}

fx_status
fx_cuda_addmm (fx_cuda *cuda, fx_cuda_stream *stream, fx_dtype dtype, const fx_cuda_matrix *bias, double beta,
               const fx_cuda_matrix *a, const fx_cuda_matrix *b, double alpha, const fx_cuda_matrix *c,
               fx_diag *diag)
{
  fx_status st;

  if (c->rows != a->rows || c->cols != b->cols)
    return fx_diag_set (diag, FX_ERR_INVALID, "addmm output [%lld, %lld] for [%lld, %lld] @ [%lld, %lld]",
                        (long long) c->rows, (long long) c->cols, (long long) a->rows, (long long) a->cols,
                        (long long) b->rows, (long long) b->cols);
  /* beta 0 ignores the bias (NaN in it included), as aten.addmm does. */
  if (beta == 0.0)
    return fx_cuda_gemm (cuda, stream, dtype, 1, alpha, a, b, 0.0, c, diag);
  if ((st = fx_cuda_broadcast_scale (cuda, stream, dtype, bias, beta, c, diag)) != FX_OK)
    return st;
  return fx_cuda_gemm (cuda, stream, dtype, 1, alpha, a, b, 1.0, c, diag);
}
