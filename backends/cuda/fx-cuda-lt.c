/* fx-cuda-lt.c: GEMM plans over cuBLASLt: matmul descriptors for row-major and transposed-view operands, the BIAS
   epilogue for addmm's 1-D bias, an out-of-place beta * c (d = a @ b + bias + c), the heuristic's algorithms for
   max-autotune, and cuBLAS as the fallback where cuBLASLt is missing or has nothing for the case. */
#include "fx-cuda-impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LT (fx_cuda_libs_cublaslt ()->lt)

struct fx_cuda_lt
{
  fx_cublasLtHandle handle;
  fx_cuda_ptr workspace;
  size_t workspace_bytes;
};

typedef struct plan_algo
{
  fx_cublasLtMatmulAlgo algo;
  size_t workspace_bytes;
  float waves;
} plan_algo;

struct fx_cuda_gemm_plan
{
  fx_cuda *cuda;
  fx_cuda_gemm_desc desc;
  bool lt;
  char why_not_lt[320];
  /* cuBLASLt: D^T = B^T A^T when d is row-major (swap), else D = A B; both column-major as cuBLAS sees them */
  bool swap;
  int data_type;
  fx_cublasLtMatmulDesc op;
  fx_cublasLtMatrixLayout layout_first, layout_second, layout_d;
  plan_algo algos[FX_CUDA_GEMM_MAX_ALGOS];
  int n_algos;
  int chosen;
};

static fx_status
lt_check (fx_cublasStatus status, const char *what, fx_diag *diag)
{
  return fx_cublas_check (status, LT.cublasLtGetStatusString, what, diag);
}

/* The device's cuBLASLt handle and workspace, made on first use (before any capture: both allocate). */
static fx_status
get_lt (fx_cuda *cuda, fx_cuda_lt **out, fx_diag *diag)
{
  const fx_cuda_libs *l = fx_cuda_libs_cublaslt ();
  fx_cuda_lt *lt;
  fx_status st;

  *out = cuda->lt;
  if (cuda->lt)
    return FX_OK;
  if (!l->cublaslt_loaded)
    return fx_diag_set (diag, FX_ERR_NO_DEVICE, "%s", l->cublaslt_error);
  if ((lt = fx_cuda_enter_alloc (cuda, sizeof *lt, &st, diag)) == NULL)
    return st;
  if ((st = lt_check (LT.cublasLtCreate (&lt->handle), "cublasLtCreate", diag)) != FX_OK)
    {
      free (lt);
      return st;
    }
  lt->workspace_bytes = FX_CUDA_BLAS_WORKSPACE_BYTES;
  if ((st = fx_cuda_malloc (cuda, lt->workspace_bytes, NULL, &lt->workspace, diag)) != FX_OK)
    {
      LT.cublasLtDestroy (lt->handle);
      free (lt);
      return st;
    }
  cuda->lt = lt;
  *out = lt;
  return FX_OK;
}

/* Called by fx_cuda_close, before the allocator goes. */
void
fx_cuda_lt_destroy (fx_cuda *cuda)
{
  fx_cuda_lt *lt = cuda->lt;

  if (!lt)
    return;
  if (fx_cuda_enter (cuda, NULL) == FX_OK)
    LT.cublasLtDestroy (lt->handle);
  fx_cuda_free (cuda, lt->workspace);
  free (lt);
  cuda->lt = NULL;
}

static void
destroy_descriptors (fx_cuda_gemm_plan *p)
{
  if (p->op)
    LT.cublasLtMatmulDescDestroy (p->op);
  if (p->layout_first)
    LT.cublasLtMatrixLayoutDestroy (p->layout_first);
  if (p->layout_second)
    LT.cublasLtMatrixLayoutDestroy (p->layout_second);
  if (p->layout_d)
    LT.cublasLtMatrixLayoutDestroy (p->layout_d);
  p->op = NULL;
  p->layout_first = p->layout_second = p->layout_d = NULL;
}

void
fx_cuda_gemm_plan_free (fx_cuda_gemm_plan *plan)
{
  if (!plan)
    return;
  destroy_descriptors (plan);
  free (plan);
}

/* A column-major layout of the stored matrix behind op(x) (rows x cols after op), batched. */
static fx_status
make_layout (fx_cuda_gemm_plan *p, int op, int64_t rows, int64_t cols, int64_t ld, int64_t batch_stride,
             fx_cublasLtMatrixLayout *out, fx_diag *diag)
{
  int64_t stored_rows = op == FX_CUBLAS_OP_N ? rows : cols, stored_cols = op == FX_CUBLAS_OP_N ? cols : rows;
  fx_status st;

  if ((st = lt_check (LT.cublasLtMatrixLayoutCreate (out, p->data_type, (uint64_t) stored_rows,
                                                     (uint64_t) stored_cols, ld), "cublasLtMatrixLayoutCreate",
                      diag)) != FX_OK)
    return st;
  if (p->desc.batch > 1)
    {
      int32_t count = (int32_t) p->desc.batch;
      int64_t stride = batch_stride;
      if ((st = lt_check (LT.cublasLtMatrixLayoutSetAttribute (*out, FX_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                               sizeof count), "cublasLtMatrixLayoutSetAttribute",
                          diag)) != FX_OK
          || (st = lt_check (LT.cublasLtMatrixLayoutSetAttribute (*out,
                                                                  FX_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                                  &stride, sizeof stride),
                             "cublasLtMatrixLayoutSetAttribute", diag)) != FX_OK)
        return st;
    }
  return FX_OK;
}

static bool
same_layout (const fx_cuda_matrix *x, const fx_cuda_matrix *y, int64_t batch)
{
  return x->rows == y->rows && x->cols == y->cols && (x->rows == 1 || x->row_stride == y->row_stride)
         && (x->cols == 1 || x->col_stride == y->col_stride) && (batch == 1 || x->batch_stride == y->batch_stride);
}

/* Descriptors and the heuristic's algorithms. FX_OK with p->lt false (and why_not_lt) where cuBLASLt cannot do it
   but cuBLAS can; an error only for what the device or library reported. */
static fx_status
plan_lt (fx_cuda_gemm_plan *p, int max_algos, fx_diag *diag)
{
  const fx_cuda_gemm_desc *g = &p->desc;
  int64_t m = g->a.rows, k = g->a.cols, n = g->b.cols, cm, cn, ld_a, ld_b, ld_d;
  int op_a, op_b, compute_type, scale_type;
  const fx_cuda_matrix *first, *second;
  fx_cublasLtMatmulPreference pref = NULL;
  fx_cublasLtMatmulHeuristicResult results[FX_CUDA_GEMM_MAX_ALGOS];
  fx_cuda_blas *blas;
  fx_cuda_lt *lt;
  uint32_t align;
  uint64_t ws;
  int returned = 0;
  fx_status st;

  {
    fx_diag why;
    fx_diag_clear (&why);
    if (get_lt (p->cuda, &lt, &why) != FX_OK)
      {
        snprintf (p->why_not_lt, sizeof p->why_not_lt, "%.300s", why.message);
        return FX_OK;
      }
  }
  if (k == 0)
    {
      /* nothing to multiply: cuBLAS scales C (or the broadcast bias) alone */
      snprintf (p->why_not_lt, sizeof p->why_not_lt, "an empty inner dimension (k = 0)");
      return FX_OK;
    }
  if ((ld_d = fx_cuda_matrix_rowmajor_ld (&g->d)) >= 0)
    {
      p->swap = true;
      first = &g->b, second = &g->a, cm = n, cn = m;
      if (!fx_cuda_blas_operand (&g->b, true, &op_a, &ld_a) || !fx_cuda_blas_operand (&g->a, true, &op_b, &ld_b))
        goto no_lt;
    }
  else if ((ld_d = fx_cuda_matrix_colmajor_ld (&g->d)) >= 0 && !g->has_bias)
    {
      /* the epilogue's bias runs along d's column-major rows: a column-major d would need it along columns */
      first = &g->a, second = &g->b, cm = m, cn = n;
      if (!fx_cuda_blas_operand (&g->a, false, &op_a, &ld_a) || !fx_cuda_blas_operand (&g->b, false, &op_b, &ld_b))
        goto no_lt;
    }
  else
    goto no_lt;
  if (g->has_c && !same_layout (&g->c, &g->d, g->batch))
    goto no_lt;

  if (g->dtype == FX_DTYPE_F32)
    p->data_type = FX_CUDA_R_32F, compute_type = FX_CUBLAS_COMPUTE_32F, scale_type = FX_CUDA_R_32F;
  else if (g->dtype == FX_DTYPE_F64)
    p->data_type = FX_CUDA_R_64F, compute_type = FX_CUBLAS_COMPUTE_64F, scale_type = FX_CUDA_R_64F;
  else if (g->dtype == FX_DTYPE_F16)
    p->data_type = FX_CUDA_R_16F, compute_type = FX_CUBLAS_COMPUTE_32F, scale_type = FX_CUDA_R_32F;
  else
    p->data_type = FX_CUDA_R_16BF, compute_type = FX_CUBLAS_COMPUTE_32F, scale_type = FX_CUDA_R_32F;
  /* torch.backends.cuda.matmul.allow_tf32 is False by default: full fp32 products unless it was allowed */
  if (g->dtype == FX_DTYPE_F32 && fx_cuda_get_blas (p->cuda, &blas, NULL) == FX_OK && fx_cuda_blas_allow_tf32 (blas))
    compute_type = FX_CUBLAS_COMPUTE_32F_FAST_TF32;

  if ((st = lt_check (LT.cublasLtMatmulDescCreate (&p->op, compute_type, scale_type), "cublasLtMatmulDescCreate",
                      diag)) != FX_OK)
    return st;
  {
    int32_t ta = op_a, tb = op_b;
    uint32_t epilogue = g->has_bias ? FX_CUBLASLT_EPILOGUE_BIAS : FX_CUBLASLT_EPILOGUE_DEFAULT;
    int32_t bias_type = p->data_type;
    if ((st = lt_check (LT.cublasLtMatmulDescSetAttribute (p->op, FX_CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
                        "cublasLtMatmulDescSetAttribute (TRANSA)", diag)) != FX_OK
        || (st = lt_check (LT.cublasLtMatmulDescSetAttribute (p->op, FX_CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
                           "cublasLtMatmulDescSetAttribute (TRANSB)", diag)) != FX_OK
        || (st = lt_check (LT.cublasLtMatmulDescSetAttribute (p->op, FX_CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                              sizeof epilogue),
                           "cublasLtMatmulDescSetAttribute (EPILOGUE)", diag)) != FX_OK)
      return st;
    if (g->has_bias
        && (st = lt_check (LT.cublasLtMatmulDescSetAttribute (p->op, FX_CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                              &bias_type, sizeof bias_type),
                           "cublasLtMatmulDescSetAttribute (BIAS_DATA_TYPE)", diag)) != FX_OK)
      return st;
  }
  /* op(first) is cm x k, op(second) k x cn, d cm x cn */
  if ((st = make_layout (p, op_a, cm, k, ld_a, first->batch_stride, &p->layout_first, diag)) != FX_OK
      || (st = make_layout (p, op_b, k, cn, ld_b, second->batch_stride, &p->layout_second, diag)) != FX_OK
      || (st = make_layout (p, FX_CUBLAS_OP_N, cm, cn, ld_d, g->d.batch_stride, &p->layout_d, diag)) != FX_OK)
    return st;

  if ((st = lt_check (LT.cublasLtMatmulPreferenceCreate (&pref), "cublasLtMatmulPreferenceCreate", diag)) != FX_OK)
    return st;
  ws = lt->workspace_bytes;
  align = (uint32_t) (g->alignment ? g->alignment : 16);
  st = lt_check (LT.cublasLtMatmulPreferenceSetAttribute (pref, FX_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                          sizeof ws), "cublasLtMatmulPreferenceSetAttribute", diag);
  for (int attr = FX_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES;
       st == FX_OK && attr <= FX_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES; attr++)
    st = lt_check (LT.cublasLtMatmulPreferenceSetAttribute (pref, attr, &align, sizeof align),
                   "cublasLtMatmulPreferenceSetAttribute", diag);
  if (st == FX_OK)
    {
      fx_cublasStatus hs;
      memset (results, 0, sizeof results);
      hs = LT.cublasLtMatmulAlgoGetHeuristic (lt->handle, p->op, p->layout_first, p->layout_second, p->layout_d,
                                              p->layout_d, pref, max_algos, results, &returned);
      if (hs != 0)
        {
          fx_diag d;
          fx_diag_clear (&d);
          lt_check (hs, "cublasLtMatmulAlgoGetHeuristic", &d);
          snprintf (p->why_not_lt, sizeof p->why_not_lt, "%.300s", d.message);
          returned = 0;
        }
    }
  LT.cublasLtMatmulPreferenceDestroy (pref);
  if (st != FX_OK)
    return st;
  for (int i = 0; i < returned && i < max_algos; i++)
    if (results[i].state == 0 && results[i].workspaceSize <= lt->workspace_bytes)
      {
        p->algos[p->n_algos].algo = results[i].algo;
        p->algos[p->n_algos].workspace_bytes = results[i].workspaceSize;
        p->algos[p->n_algos].waves = results[i].wavesCount;
        p->n_algos++;
      }
  if (p->n_algos == 0)
    {
      if (!p->why_not_lt[0])
        snprintf (p->why_not_lt, sizeof p->why_not_lt, "cublasLtMatmulAlgoGetHeuristic found no algorithm");
      destroy_descriptors (p);
      return FX_OK;
    }
  p->lt = true;
  return FX_OK;

no_lt:
  snprintf (p->why_not_lt, sizeof p->why_not_lt, "cuBLASLt takes no such layout (a %lldx%lld (%lld, %lld), b "
            "%lldx%lld (%lld, %lld), d %lldx%lld (%lld, %lld))%s",
            (long long) g->a.rows, (long long) g->a.cols, (long long) g->a.row_stride, (long long) g->a.col_stride,
            (long long) g->b.rows, (long long) g->b.cols, (long long) g->b.row_stride, (long long) g->b.col_stride,
            (long long) g->d.rows, (long long) g->d.cols, (long long) g->d.row_stride, (long long) g->d.col_stride,
            g->has_c ? " or c's layout differs from d's" : "");
  return FX_OK;
}

fx_status
fx_cuda_gemm_plan_new (fx_cuda *cuda, const fx_cuda_gemm_desc *desc, int max_algos, fx_cuda_gemm_plan **out,
                       fx_diag *diag)
{
  const fx_cuda_gemm_desc *g = desc;
  int64_t m = g->a.rows, k = g->a.cols, n = g->b.cols;
  fx_cuda_gemm_plan *p;
  fx_status st;

  *out = NULL;
  if (g->b.rows != k || g->d.rows != m || g->d.cols != n)
    return fx_diag_set (diag, FX_ERR_INVALID, "gemm shapes do not agree: [%lld, %lld] @ [%lld, %lld] -> [%lld, %lld]",
                        (long long) m, (long long) k, (long long) g->b.rows, (long long) n, (long long) g->d.rows,
                        (long long) g->d.cols);
  if (g->has_c && (g->c.rows != m || g->c.cols != n))
    return fx_diag_set (diag, FX_ERR_INVALID, "gemm c is [%lld, %lld], d [%lld, %lld]", (long long) g->c.rows,
                        (long long) g->c.cols, (long long) m, (long long) n);
  if (g->batch < 1 || m < 0 || n < 0 || k < 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "gemm with batch %lld and negative sizes", (long long) g->batch);
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || g->batch > INT_MAX)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "gemm sizes beyond 32-bit cuBLAS calls");
  if (g->dtype != FX_DTYPE_F32 && g->dtype != FX_DTYPE_F64 && g->dtype != FX_DTYPE_F16 && g->dtype != FX_DTYPE_BF16)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "cuBLAS gemm on %s", fx_dtype_name (g->dtype));
  if (g->alignment & (g->alignment - 1))
    return fx_diag_set (diag, FX_ERR_INVALID, "gemm alignment %zu is not a power of two", g->alignment);
  if (max_algos < 1)
    max_algos = 1;
  if (max_algos > FX_CUDA_GEMM_MAX_ALGOS)
    max_algos = FX_CUDA_GEMM_MAX_ALGOS;
  p = calloc (1, sizeof *p);
  if (!p)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  p->cuda = cuda;
  p->desc = *desc;
  if (m > 0 && n > 0 && (st = plan_lt (p, max_algos, diag)) != FX_OK)
    {
      fx_cuda_gemm_plan_free (p);
      return st;
    }
  if (!p->lt && m > 0 && n > 0)
    {
      /* cuBLAS needs the bias and c broadcast into d first: one of them, one matrix */
      if (g->has_bias && g->has_c)
        st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "gemm with a bias and c needs cuBLASLt (%s)", p->why_not_lt);
      else if ((g->has_bias || g->has_c) && g->batch > 1)
        st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "batched gemm with a bias or c needs cuBLASLt (%s)",
                          p->why_not_lt);
      else
        {
          fx_cuda_blas *blas;
          st = fx_cuda_get_blas (cuda, &blas, diag);
        }
      if (st != FX_OK)
        {
          fx_cuda_gemm_plan_free (p);
          return st;
        }
    }
  *out = p;
  return FX_OK;
}

const fx_cuda_gemm_desc *
fx_cuda_gemm_plan_desc (const fx_cuda_gemm_plan *plan)
{
  return &plan->desc;
}

bool
fx_cuda_gemm_plan_uses_lt (const fx_cuda_gemm_plan *plan, const char **why)
{
  if (why)
    *why = plan->lt ? "" : plan->why_not_lt;
  return plan->lt;
}

int
fx_cuda_gemm_plan_n_algos (const fx_cuda_gemm_plan *plan)
{
  return plan->n_algos;
}

int
fx_cuda_gemm_plan_chosen (const fx_cuda_gemm_plan *plan)
{
  return plan->chosen;
}

void
fx_cuda_gemm_plan_choose (fx_cuda_gemm_plan *plan, int algo)
{
  if (algo >= 0 && algo < plan->n_algos)
    plan->chosen = algo;
}

typedef struct algo_config
{
  int32_t id, splitk;
  uint32_t tile, stages, reduction, swizzle;
} algo_config;

static void
read_config (const plan_algo *a, algo_config *c)
{
  size_t written;

  memset (c, 0, sizeof *c);
  if (!fx_cuda_libs_cublaslt ()->cublaslt_loaded)
    return;
  LT.cublasLtMatmulAlgoConfigGetAttribute (&a->algo, FX_CUBLASLT_ALGO_CONFIG_ID, &c->id, sizeof c->id, &written);
  LT.cublasLtMatmulAlgoConfigGetAttribute (&a->algo, FX_CUBLASLT_ALGO_CONFIG_TILE_ID, &c->tile, sizeof c->tile,
                                           &written);
  LT.cublasLtMatmulAlgoConfigGetAttribute (&a->algo, FX_CUBLASLT_ALGO_CONFIG_STAGES_ID, &c->stages,
                                           sizeof c->stages, &written);
  LT.cublasLtMatmulAlgoConfigGetAttribute (&a->algo, FX_CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c->splitk,
                                           sizeof c->splitk, &written);
  LT.cublasLtMatmulAlgoConfigGetAttribute (&a->algo, FX_CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c->reduction,
                                           sizeof c->reduction, &written);
  LT.cublasLtMatmulAlgoConfigGetAttribute (&a->algo, FX_CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c->swizzle,
                                           sizeof c->swizzle, &written);
}

/* The configuration of the plan's ALGO; false (and FALLBACK written to OUT) for the cuBLAS path, ALGO out of range. */
static bool
plan_config (const fx_cuda_gemm_plan *plan, int algo, algo_config *c, const char *fallback, char *out,
             size_t out_size)
{
  if (algo < 0 || algo >= plan->n_algos)
    {
      snprintf (out, out_size, "%s", fallback);
      return false;
    }
  read_config (&plan->algos[algo], c);
  return true;
}

void
fx_cuda_gemm_plan_algo_name (const fx_cuda_gemm_plan *plan, int algo, char *out, size_t out_size)
{
  algo_config c;

  if (!plan_config (plan, algo, &c, "cublas_gemm", out, out_size))
    return;
  /* the heuristic's rank keeps names unique where two results share these fields */
  snprintf (out, out_size, "cublaslt_%d_algo%d_tile%u_stages%u", algo, (int) c.id, (unsigned) c.tile,
            (unsigned) c.stages);
}

void
fx_cuda_gemm_plan_algo_describe (const fx_cuda_gemm_plan *plan, int algo, char *out, size_t out_size)
{
  algo_config c;

  if (!plan_config (plan, algo, &c, "cublasGemmStridedBatchedEx", out, out_size))
    return;
  snprintf (out, out_size, "algo=%d, tile=%u, stages=%u, splitK=%d, reduction=%u, swizzle=%u, workspace=%zu, "
            "waves=%.2f", (int) c.id, (unsigned) c.tile, (unsigned) c.stages, (int) c.splitk, (unsigned) c.reduction,
            (unsigned) c.swizzle, plan->algos[algo].workspace_bytes, (double) plan->algos[algo].waves);
}

static fx_cuda_matrix
at (const fx_cuda_matrix *m, fx_cuda_ptr data)
{
  fx_cuda_matrix r = *m;
  r.data = data;
  return r;
}

/* cuBLAS: the bias or c broadcast into d, then d += a @ b */
static fx_status
run_cublas (fx_cuda_gemm_plan *p, fx_cuda_stream *stream, fx_cuda_ptr a_ptr, fx_cuda_ptr b_ptr, fx_cuda_ptr c_ptr,
            fx_cuda_ptr bias_ptr, fx_cuda_ptr d_ptr, fx_diag *diag)
{
  const fx_cuda_gemm_desc *g = &p->desc;
  fx_cuda_matrix a = at (&g->a, a_ptr), b = at (&g->b, b_ptr), d = at (&g->d, d_ptr);
  double beta = 0.0;
  fx_status st;

  if (g->has_c)
    {
      if (c_ptr == d_ptr)
        beta = g->beta;
      else
        {
          fx_cuda_matrix c = at (&g->c, c_ptr);
          if ((st = fx_cuda_broadcast_scale (p->cuda, stream, g->dtype, &c, g->beta, &d, diag)) != FX_OK)
            return st;
          beta = 1.0;
        }
    }
  else if (g->has_bias)
    {
      fx_cuda_matrix bias = fx_cuda_matrix_rowmajor (bias_ptr, 1, g->d.cols);
      if ((st = fx_cuda_broadcast_scale (p->cuda, stream, g->dtype, &bias, 1.0, &d, diag)) != FX_OK)
        return st;
      beta = 1.0;
    }
  return fx_cuda_gemm (p->cuda, stream, g->dtype, g->batch, g->alpha, &a, &b, beta, &d, diag);
}

fx_status
fx_cuda_gemm_plan_run (fx_cuda_gemm_plan *plan, fx_cuda_stream *stream, int algo, fx_cuda_ptr a, fx_cuda_ptr b,
                       fx_cuda_ptr c, fx_cuda_ptr bias, fx_cuda_ptr d, fx_diag *diag)
{
  fx_cuda_gemm_plan *p = plan;
  const fx_cuda_gemm_desc *g = &p->desc;
  fx_cuda_stream *s = fx_cuda_stream_or_default (p->cuda, stream);
  size_t align = g->alignment ? g->alignment : 16;
  float alpha_f = (float) g->alpha, beta_f = (float) (g->has_c ? g->beta : 0.0);
  double alpha_d = g->alpha, beta_d = g->has_c ? g->beta : 0.0;
  bool f64 = g->dtype == FX_DTYPE_F64;
  fx_cuda_lt *lt;
  fx_status st;

  if (g->a.rows == 0 || g->b.cols == 0)
    return FX_OK;
  if (!a || !b || !d || (g->has_c && !c) || (g->has_bias && !bias))
    return fx_diag_set (diag, FX_ERR_INVALID, "gemm run with a null operand");
  if (!p->lt)
    return run_cublas (p, s, a, b, c, bias, d, diag);
  if (a % align || b % align || d % align || (g->has_c && c % align) || (g->has_bias && bias % align))
    return fx_diag_set (diag, FX_ERR_INVALID, "gemm operands below the planned %zu-byte alignment", align);
  if (algo < 0 || algo >= p->n_algos)
    algo = p->chosen;
  if ((st = get_lt (p->cuda, &lt, diag)) != FX_OK || (st = fx_cuda_enter (p->cuda, diag)) != FX_OK)
    return st;
  if (g->has_bias)
    {
      void *bias_p = (void *) (uintptr_t) bias;
      if ((st = lt_check (LT.cublasLtMatmulDescSetAttribute (p->op, FX_CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_p,
                                                             sizeof bias_p),
                          "cublasLtMatmulDescSetAttribute (BIAS_POINTER)", diag)) != FX_OK)
        return st;
    }
  {
    fx_cuda_ptr first = p->swap ? b : a, second = p->swap ? a : b, cc = g->has_c ? c : d;
    return lt_check (LT.cublasLtMatmul (lt->handle, p->op, f64 ? (const void *) &alpha_d : (const void *) &alpha_f,
                                        (const void *) (uintptr_t) first, p->layout_first,
                                        (const void *) (uintptr_t) second, p->layout_second,
                                        f64 ? (const void *) &beta_d : (const void *) &beta_f,
                                        (const void *) (uintptr_t) cc, p->layout_d, (void *) (uintptr_t) d,
                                        p->layout_d, &p->algos[algo].algo, (void *) (uintptr_t) lt->workspace,
                                        lt->workspace_bytes, s->stream),
                     "cublasLtMatmul", diag);
  }
}
