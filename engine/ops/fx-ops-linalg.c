/* fx-ops-linalg.c: GEMM (mm, addmm, bmm, baddbmm) and convolution on OpenBLAS, and 2-D pooling. */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "fx-ops-impl.h"

#include <cblas.h>
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* OpenBLAS's own description of itself, where the cblas is OpenBLAS (weak: another cblas has none of these) */
extern char *openblas_get_config (void) __attribute__ ((weak));
extern char *openblas_get_corename (void) __attribute__ ((weak));
extern int openblas_get_num_threads (void) __attribute__ ((weak));

/* OpenBLAS's core selection (exported by its DYNAMIC_ARCH builds) and thread server (its pthread builds); weak:
   absent elsewhere */
extern void gotoblas_dynamic_init (void) __attribute__ ((weak));
extern void gotoblas_dynamic_quit (void) __attribute__ ((weak));
extern void openblas_read_env (void) __attribute__ ((weak));
extern int openblas_thread_timeout (void) __attribute__ ((weak));
extern int blas_thread_init (void) __attribute__ ((weak));
extern int blas_thread_shutdown_ (void) __attribute__ ((weak));
extern void openblas_set_num_threads (int n) __attribute__ ((weak));

/* OpenBLAS 0.3.21 (Debian 12) does not know newer CPUs such as Sapphire Rapids (family 6, model 143) and runs them
   on its generic "Prescott" SSE3 kernels: on a 16-core Sapphire Rapids host an [8192,1024]x[1024,4096] sgemm took
   ~320 ms, against ~60 ms with the SkylakeX kernels. Where the core reads Prescott, the user did not pick one
   (OPENBLAS_CORETYPE) and the CPU has AVX-512 (or AVX2 and FMA), select SkylakeX (or Haswell) through OpenBLAS's own
   initializer, as OPENBLAS_CORETYPE would at load. This runs as a constructor: after OpenBLAS's own (a dependency's
   constructors run first) and before any thread of ours exists, so the setenv is safe. Returns the core picked, or
   NULL where it left OpenBLAS as it was. */
const char *
fx_blas_select_core (void)
{
#if defined(__x86_64__) && defined(__GNUC__)
  if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit || !openblas_get_corename || getenv ("OPENBLAS_CORETYPE"))
    return NULL;
  const char *core = openblas_get_corename ();
  if (core == NULL || strcmp (core, "Prescott") != 0)
    return NULL;
  __builtin_cpu_init ();
  const char *pick = NULL;
  if (__builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512vl") && __builtin_cpu_supports ("avx512bw")
      && __builtin_cpu_supports ("avx512dq") && __builtin_cpu_supports ("avx512cd"))
    pick = "SkylakeX";
  else if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
    pick = "Haswell";
  if (pick == NULL)
    return NULL;
  setenv ("OPENBLAS_CORETYPE", pick, 1);
  gotoblas_dynamic_quit ();
  gotoblas_dynamic_init ();
  /* child processes (the torch worker, a user's compiler) see the environment as it was */
  unsetenv ("OPENBLAS_CORETYPE");
  return pick;
#else
  return NULL;
#endif
}

/* OpenBLAS's pthread workers busy-wait (with sched_yield) for 2^28 cycles, about 0.1 s, after each threaded call, so
   the OpenMP kernel that follows a GEMM shared every core with them: on 16 cores mlp_block's gelu took 21.8 ms after
   its addmm, and 6.0 ms with OPENBLAS_THREAD_TIMEOUT=4. Unless the user set it, the workers wait 2^16 cycles (tens of
   microseconds) and then sleep: OpenBLAS reads the variable when its server starts, so the server restarts here, at
   load, before any GEMM and any thread of ours. Returns the timeout exponent in effect, 0 where unchanged. */
int
fx_blas_tune_threads (void)
{
  if (!openblas_read_env || !openblas_thread_timeout || !blas_thread_init || !blas_thread_shutdown_
      || getenv ("OPENBLAS_THREAD_TIMEOUT"))
    return 0;
  setenv ("OPENBLAS_THREAD_TIMEOUT", "16", 1);
  openblas_read_env ();
  unsetenv ("OPENBLAS_THREAD_TIMEOUT");
  blas_thread_shutdown_ ();
  blas_thread_init ();
  return openblas_thread_timeout ();
}

__attribute__ ((constructor)) static void
blas_select_core_at_load (void)
{
  fx_blas_select_core ();
  fx_blas_tune_threads ();
}

void
fx_blas_describe (char *out, size_t size)
{
  if (openblas_get_config && openblas_get_corename && openblas_get_num_threads)
    snprintf (out, size, "%s, core %s, %d threads", openblas_get_config (), openblas_get_corename (),
              openblas_get_num_threads ());
  else
    snprintf (out, size, "a cblas other than OpenBLAS");
}

/* ---------------------------------------------------------------- GEMM */

fx_status
fx_meta_matmul (fx_op_call *call)
{
  fx_op_id id = call->op->id;
  bool has_bias = id == FX_OP_ADDMM || id == FX_OP_BADDBMM;
  bool batched = id == FX_OP_BMM || id == FX_OP_BADDBMM;
  fx_tensor *a = fx_arg_tensor (call, has_bias ? 1 : 0);
  fx_tensor *b = fx_arg_tensor (call, has_bias ? 2 : 1);
  int want = batched ? 3 : 2;
  if (a->ndim != want || b->ndim != want)
    return fx_op_error (call, FX_ERR_INVALID, "%s must be a %dD tensor (got %dD and %dD)",
                        batched ? "batch1/batch2" : "mat1/mat2", want, a->ndim, b->ndim);
  int o = batched ? 1 : 0;
  if (a->sizes[o + 1] != b->sizes[o] || (batched && a->sizes[0] != b->sizes[0]))
    {
      if (batched)
        return fx_op_error (call, FX_ERR_INVALID,
                            "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, %lld].",
                            (long long) a->sizes[0], (long long) a->sizes[2], (long long) b->sizes[0],
                            (long long) b->sizes[1]);
      return fx_op_error (call, FX_ERR_INVALID, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                          (long long) a->sizes[0], (long long) a->sizes[1], (long long) b->sizes[0],
                          (long long) b->sizes[1]);
    }
  if (a->dtype != b->dtype)
    return fx_op_error (call, FX_ERR_INVALID, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                        fx_dtype_name (a->dtype), fx_dtype_name (b->dtype));
  int64_t sizes[3];
  if (batched)
    {
      sizes[0] = a->sizes[0];
      sizes[1] = a->sizes[1];
      sizes[2] = b->sizes[2];
    }
  else
    {
      sizes[0] = a->sizes[0];
      sizes[1] = b->sizes[1];
    }
  if (has_bias)
    {
      fx_tensor *c = fx_arg_tensor (call, 0);
      int nd;
      int64_t sh[FX_TENSOR_MAX_DIMS];
      fx_diag d;
      fx_diag_clear (&d);
      if (!fx_broadcast_shapes (c->ndim, c->sizes, want, sizes, &nd, sh, &d) || nd != want
          || memcmp (sh, sizes, sizeof (int64_t) * want) != 0)
        return fx_op_error (call, FX_ERR_INVALID, "self (bias) of %d dims cannot broadcast to the product's shape",
                            c->ndim);
    }
  fx_out_meta (call, 0, a->dtype, want, sizes);
  return FX_OK;
}

/* addmm/baddbmm's bias broadcast into the output before the GEMM (beta * C): a bias of the output's dtype whose last
   dim is contiguous or broadcast, into an output with contiguous rows, row by row on the engine's threads.
   fx_tensor_copy_into's general strided walk did this on one thread: 50 ms of a 110 ms [8192,1024]x[1024,4096]
   addmm on 16 cores. Returns false where the layouts are other (the caller copies). */
typedef struct
{
  const char *src;
  char *dst;
  int64_t n, m, src_b, src_r, src_c, dst_b, dst_r;
  size_t isz;
} bias_job;

static void
bias_rows_chunk (int64_t begin, int64_t end, void *ctx)
{
  const bias_job *j = ctx;
  for (int64_t row = begin; row < end; row++)
    {
      int64_t bi = row / j->n, i = row % j->n;
      const char *s = j->src + (bi * j->src_b + i * j->src_r) * (int64_t) j->isz;
      char *d = j->dst + (bi * j->dst_b + i * j->dst_r) * (int64_t) j->isz;
      if (j->src_c == 1)
        memcpy (d, s, (size_t) j->m * j->isz);
      else if (j->isz == 4)
        {
          float v;
          memcpy (&v, s, 4);
          for (int64_t c = 0; c < j->m; c++)
            ((float *) (void *) d)[c] = v;
        }
      else
        for (int64_t c = 0; c < j->m; c++)
          memcpy (d + c * (int64_t) j->isz, s, j->isz);
    }
}

static bool
bias_rows_fill (const fx_tensor *bias, fx_tensor *o, int64_t nb, int64_t n, int64_t m)
{
  int want = o->ndim;
  if (bias->dtype != o->dtype || bias->ndim > want || (want == 3 && o->strides[0] < 0) || m < 1 || n < 1 || nb < 1)
    return false;
  if (o->strides[want - 1] != 1 && m > 1)
    return false;
  /* the bias's strides against the output's dims (right-aligned; a missing or size-1 dim broadcasts) */
  int64_t st[3] = { 0, 0, 0 };
  for (int i = 0; i < bias->ndim; i++)
    {
      int od = want - bias->ndim + i;
      st[od] = bias->sizes[i] == 1 ? 0 : bias->strides[i];
    }
  if (st[want - 1] != 0 && st[want - 1] != 1)
    return false;
  bias_job j = { (const char *) fx_tensor_data ((fx_tensor *) bias), (char *) fx_tensor_data (o), n, m,
                 want == 3 ? st[0] : 0, st[want - 2], st[want - 1], want == 3 ? o->strides[0] : 0, o->strides[want - 2],
                 fx_dtype_size (o->dtype) };
  /* rows of about 16 KB or more per chunk */
  int64_t grain = (int64_t) (16384 / ((size_t) m * j.isz + 1)) + 1;
  fx_parallel_for (nb * n, grain, bias_rows_chunk, &j);
  return true;
}

/* OpenBLAS's thread count (fx_runtime_set_threads); nothing where the cblas is not OpenBLAS. */
void
fx_blas_set_threads (int n)
{
  if (openblas_set_num_threads && n >= 1)
    openblas_set_num_threads (n);
}

/* OpenBLAS on one thread while batch-parallel GEMMs run (entered and left in pairs; nested or concurrent ones share
   one saved count, so the count in effect before the first comes back after the last). */
static void
blas_single_threaded (bool enter)
{
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static int depth, saved;
  pthread_mutex_lock (&lock);
  if (enter && depth++ == 0)
    {
      saved = openblas_get_num_threads ();
      openblas_set_num_threads (1);
    }
  else if (!enter && --depth == 0)
    openblas_set_num_threads (saved);
  pthread_mutex_unlock (&lock);
}

/* Batches [begin, end) of a GEMM whose operands BLAS takes as they are (the layouts blas_layout found). */
typedef struct
{
  const fx_tensor *a, *b;
  fx_tensor *o;
  bool batched, ta, tb;
  int64_t lda, ldb, n, m, k;
  double alpha, beta;
} gemm_job;

static void
gemm_chunk (int64_t begin, int64_t end, void *ctx)
{
  const gemm_job *j = ctx;
  size_t isz = fx_dtype_size (j->o->dtype);
  int64_t ldo = j->o->strides[j->batched ? 1 : 0];
  for (int64_t bi = begin; bi < end; bi++)
    {
      const char *ap = (const char *) fx_tensor_data ((fx_tensor *) j->a) + (j->batched ? bi * j->a->strides[0] : 0)
                                                                              * (int64_t) isz;
      const char *bp = (const char *) fx_tensor_data ((fx_tensor *) j->b) + (j->batched ? bi * j->b->strides[0] : 0)
                                                                              * (int64_t) isz;
      char *op = (char *) fx_tensor_data (j->o) + (j->batched ? bi * j->o->strides[0] : 0) * (int64_t) isz;
      enum CBLAS_TRANSPOSE ta = j->ta ? CblasTrans : CblasNoTrans, tb = j->tb ? CblasTrans : CblasNoTrans;
      if (j->o->dtype == FX_DTYPE_F32)
        cblas_sgemm (CblasRowMajor, ta, tb, (int) j->n, (int) j->m, (int) j->k, (float) j->alpha, (const float *) ap,
                     (int) j->lda, (const float *) bp, (int) j->ldb, (float) j->beta, (float *) op, (int) ldo);
      else
        cblas_dgemm (CblasRowMajor, ta, tb, (int) j->n, (int) j->m, (int) j->k, j->alpha, (const double *) ap,
                     (int) j->lda, (const double *) bp, (int) j->ldb, j->beta, (double *) op, (int) ldo);
    }
}

/* How a 2-D view can be handed to BLAS without a copy. */
static bool
blas_layout (const fx_tensor *t, int o, bool *trans, int64_t *ld)
{
  int64_t r = t->sizes[o], c = t->sizes[o + 1];
  int64_t sr = t->strides[o], sc = t->strides[o + 1];
  if ((sc == 1 || c == 1) && sr >= (c > 1 ? c : 1))
    {
      *trans = false;
      *ld = sr > 0 ? sr : 1;
      if (*ld < c)
        *ld = c;
      return true;
    }
  if ((sr == 1 || r == 1) && sc >= (r > 1 ? r : 1))
    {
      *trans = true;
      *ld = sc > 0 ? sc : 1;
      if (*ld < r)
        *ld = r;
      return true;
    }
  return false;
}

static void
gemm_generic (const fx_tensor *a, const fx_tensor *b, fx_tensor *o, int64_t bi, bool batched, double alpha,
              double beta_keep)
{
  int off = batched ? 1 : 0;
  int64_t n = a->sizes[off], k = a->sizes[off + 1], m = b->sizes[off + 1];
  size_t as = fx_dtype_size (a->dtype), os = fx_dtype_size (o->dtype);
  const char *ad = (const char *) a->storage->data, *bd = (const char *) b->storage->data;
  char *od = (char *) o->storage->data;
  bool integral = fx_dtype_is_integral (o->dtype, true);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++)
      {
        double acc = 0;
        int64_t iacc = 0;
        for (int64_t p = 0; p < k; p++)
          {
            int64_t ao = a->offset + (batched ? bi * a->strides[0] : 0) + i * a->strides[off] + p * a->strides[off + 1];
            int64_t bo = b->offset + (batched ? bi * b->strides[0] : 0) + p * b->strides[off] + j * b->strides[off + 1];
            if (integral)
              iacc += fx_load_i64 (ad + ao * (int64_t) as, a->dtype) * fx_load_i64 (bd + bo * (int64_t) as, b->dtype);
            else
              acc += fx_load_f64 (ad + ao * (int64_t) as, a->dtype) * fx_load_f64 (bd + bo * (int64_t) as, b->dtype);
          }
        int64_t oo = o->offset + (batched ? bi * o->strides[0] : 0) + i * o->strides[off] + j * o->strides[off + 1];
        char *op = od + oo * (int64_t) os;
        if (integral)
          fx_store_i64 (op, o->dtype, (int64_t) (beta_keep * (double) fx_load_i64 (op, o->dtype)) + (int64_t) alpha * iacc);
        else
          fx_store_f64 (op, o->dtype, beta_keep * fx_load_f64 (op, o->dtype) + alpha * acc);
      }
}

fx_status
fx_kernel_matmul (fx_op_call *call)
{
  fx_op_id id = call->op->id;
  bool has_bias = id == FX_OP_ADDMM || id == FX_OP_BADDBMM;
  bool batched = id == FX_OP_BMM || id == FX_OP_BADDBMM;
  fx_tensor *a = fx_arg_tensor (call, has_bias ? 1 : 0);
  fx_tensor *b = fx_arg_tensor (call, has_bias ? 2 : 1);
  fx_tensor *o = call->outs[0].u.t;
  double beta = has_bias ? fx_value_as_f64 (&call->args[3]) : 0.0;
  double alpha = has_bias ? fx_value_as_f64 (&call->args[4]) : 1.0;
  int off = batched ? 1 : 0;
  int64_t nb = batched ? a->sizes[0] : 1;
  int64_t n = a->sizes[off], k = a->sizes[off + 1], m = b->sizes[off + 1];
  bool blas = (o->dtype == FX_DTYPE_F32 || o->dtype == FX_DTYPE_F64) && k > 0;
  if (has_bias && beta != 0.0)
    {
      fx_tensor *bias = fx_arg_tensor (call, 0);
      if (!bias_rows_fill (bias, o, nb, n, m))
        {
          fx_status st = fx_tensor_copy_into (o, bias, call->diag);
          if (st != FX_OK)
            return st;
        }
    }
  else if (!blas)
    fx_tensor_fill_f64 (o, 0.0);   /* BLAS with beta 0 writes every element itself (NaN or not) */
  if (fx_tensor_numel (o) == 0)
    return FX_OK;
  fx_tensor *ac = NULL, *bc = NULL;
  bool ta = false, tb = false;
  int64_t lda = 0, ldb = 0;
  if (blas)
    {
      if (!blas_layout (a, off, &ta, &lda))
        {
          ac = fx_tensor_contiguous_copy (call->alloc, a);
          a = ac;
          blas_layout (a, off, &ta, &lda);
        }
      if (!blas_layout (b, off, &tb, &ldb))
        {
          bc = fx_tensor_contiguous_copy (call->alloc, b);
          b = bc;
          blas_layout (b, off, &tb, &ldb);
        }
    }
  if (!blas)
    for (int64_t bi = 0; bi < nb; bi++)
      gemm_generic (a, b, o, bi, batched, alpha, has_bias ? beta : 0.0);
  else
    {
      gemm_job j = { a, b, o, batched, ta, tb, lda, ldb, n, m, k, alpha, has_bias && beta != 0.0 ? beta : 0.0 };
      /* Many batches (bmm of attention heads: 64 of [512,64]x[64,512]): one GEMM per thread of ours, each on one
         OpenBLAS thread. OpenBLAS's threads split each small GEMM instead, with a barrier per batch: on 2 cores the
         64 GEMMs ran at 51 GFLOP/s against 180 for one [4096,512]x[512,512]. The thread count is global to
         OpenBLAS and comes back after. */
      int nt = fx_parallel_threads ();
      if (batched && nt > 1 && nb >= nt && openblas_set_num_threads && openblas_get_num_threads)
        {
          blas_single_threaded (true);
          fx_parallel_for (nb, 1, gemm_chunk, &j);
          blas_single_threaded (false);
        }
      else
        gemm_chunk (0, nb, &j);
    }
  fx_tensor_unref (ac);
  fx_tensor_unref (bc);
  return FX_OK;
}

/* ---------------------------------------------------------------- convolution */

/* Largest spatial size, stride, padding or dilation: their products in the output-size formulas stay in int64. */
#define GEO_MAX ((int64_t) 1 << 30)

/* A size argument of a 2-D op (stride, padding, ...) as two values: one int serves both dims, none gives DFLT. */
static void
pair_arg (const fx_op_call *call, int i, int64_t dflt0, int64_t dflt1, int64_t out[2])
{
  int64_t v[4];
  int n = fx_value_as_int_list (&call->args[i], v, 4);
  out[0] = n > 0 ? v[0] : dflt0;
  out[1] = n > 1 ? v[1] : (n == 1 ? v[0] : dflt1);
}

typedef struct
{
  int nsp;                 /* spatial dims: 1 or 2 (3 unsupported) */
  int64_t stride[2], pad[2], dil[2];
  int64_t groups;
  int64_t n, cin, cout, in[2], k[2], out[2];
} conv_geo;

static fx_status
conv_geometry (fx_op_call *call, conv_geo *g)
{
  fx_tensor *x = fx_arg_tensor (call, 0), *w = fx_arg_tensor (call, 1);
  memset (g, 0, sizeof *g);
  if (call->args[6].u.b)
    return fx_op_error (call, FX_ERR_UNSUPPORTED, "transposed convolution is not supported by the reference kernels");
  if (x->ndim != w->ndim || x->ndim < 3 || x->ndim > 4)
    return fx_op_error (call, FX_ERR_UNSUPPORTED,
                        "convolution: expected 3-D or 4-D input and weight of the same rank (got %dD input, %dD weight)",
                        x->ndim, w->ndim);
  g->nsp = x->ndim - 2;
  pair_arg (call, 3, 1, 1, g->stride);
  pair_arg (call, 4, 0, 0, g->pad);
  pair_arg (call, 5, 1, 1, g->dil);
  g->groups = call->args[8].u.i;
  g->n = x->sizes[0];
  g->cin = x->sizes[1];
  g->cout = w->sizes[0];
  if (g->groups < 1 || g->cin % g->groups != 0 || g->cout % g->groups != 0 || w->sizes[1] * g->groups != g->cin)
    return fx_op_error (call, FX_ERR_INVALID,
                        "Given groups=%lld, weight of size [%lld, %lld, ...], expected input[%lld, %lld, ...] to have %lld channels, but got %lld channels instead",
                        (long long) g->groups, (long long) w->sizes[0], (long long) w->sizes[1], (long long) g->n,
                        (long long) g->cin, (long long) (w->sizes[1] * g->groups), (long long) g->cin);
  for (int i = 0; i < g->nsp; i++)
    {
      g->in[i] = x->sizes[2 + i];
      g->k[i] = w->sizes[2 + i];
      if (g->stride[i] < 1 || g->dil[i] < 1 || g->pad[i] < 0)
        return fx_op_error (call, FX_ERR_INVALID, "non-positive stride/dilation or negative padding");
      /* bounded so that the output-size arithmetic below cannot overflow */
      if (g->stride[i] > GEO_MAX || g->dil[i] > GEO_MAX || g->pad[i] > GEO_MAX || g->in[i] > GEO_MAX
          || g->k[i] > GEO_MAX)
        return fx_op_error (call, FX_ERR_INVALID, "stride, padding, dilation or size of dim %d is too large", 2 + i);
      g->out[i] = (g->in[i] + 2 * g->pad[i] - g->dil[i] * (g->k[i] - 1) - 1) / g->stride[i] + 1;
      if (g->out[i] < 1)
        return fx_op_error (call, FX_ERR_INVALID, "Kernel size can't be greater than actual input size");
    }
  if (g->nsp == 1)
    {
      g->in[1] = g->k[1] = g->out[1] = 1;
      g->stride[1] = g->dil[1] = 1;
      g->pad[1] = 0;
    }
  fx_tensor *b = fx_arg_tensor (call, 2);
  if (b != NULL && fx_tensor_numel (b) != g->cout)
    return fx_op_error (call, FX_ERR_INVALID, "bias has %lld elements, expected %lld", (long long) fx_tensor_numel (b),
                        (long long) g->cout);
  return FX_OK;
}

fx_status
fx_meta_convolution (fx_op_call *call)
{
  conv_geo g;
  fx_status st = conv_geometry (call, &g);
  if (st != FX_OK)
    return st;
  fx_tensor *x = fx_arg_tensor (call, 0);
  int64_t sizes[4] = { g.n, g.cout, g.out[0], g.out[1] };
  fx_out_meta (call, 0, x->dtype, 2 + g.nsp, sizes);
  return FX_OK;
}

fx_status
fx_kernel_convolution (fx_op_call *call)
{
  conv_geo g;
  fx_status st = conv_geometry (call, &g);
  if (st != FX_OK)
    return st;
  fx_tensor *x = fx_tensor_contiguous_copy (call->alloc, fx_arg_tensor (call, 0));
  fx_tensor *w = fx_tensor_to_dtype (call->alloc, fx_arg_tensor (call, 1), FX_DTYPE_F32);
  fx_tensor *xf = fx_tensor_to_dtype (call->alloc, x, FX_DTYPE_F32);
  fx_tensor *b = fx_arg_tensor (call, 2);
  fx_tensor *o = call->outs[0].u.t;
  int64_t cg = g.cin / g.groups, og = g.cout / g.groups;
  int64_t kk = cg * g.k[0] * g.k[1];
  int64_t spatial = g.out[0] * g.out[1];
  float *col = malloc (sizeof (float) * (size_t) ((kk * spatial) != 0 ? kk * spatial : 1));
  float *res = malloc (sizeof (float) * (size_t) ((g.cout * spatial) != 0 ? g.cout * spatial : 1));
  const float *xd = fx_tensor_data (xf), *wd = fx_tensor_data (w);
  for (int64_t ni = 0; ni < g.n; ni++)
    {
      for (int64_t gi = 0; gi < g.groups; gi++)
        {
          /* im2col for this group */
          for (int64_t c = 0; c < cg; c++)
            for (int64_t ky = 0; ky < g.k[0]; ky++)
              for (int64_t kx = 0; kx < g.k[1]; kx++)
                {
                  int64_t row = (c * g.k[0] + ky) * g.k[1] + kx;
                  const float *plane = xd + ((ni * g.cin + gi * cg + c) * g.in[0]) * g.in[1];
                  for (int64_t oy = 0; oy < g.out[0]; oy++)
                    {
                      int64_t iy = oy * g.stride[0] - g.pad[0] + ky * g.dil[0];
                      for (int64_t ox = 0; ox < g.out[1]; ox++)
                        {
                          int64_t ix = ox * g.stride[1] - g.pad[1] + kx * g.dil[1];
                          float v = 0;
                          if (iy >= 0 && iy < g.in[0] && ix >= 0 && ix < g.in[1])
                            v = plane[iy * g.in[1] + ix];
                          col[row * spatial + oy * g.out[1] + ox] = v;
                        }
                    }
                }
          cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) og, (int) spatial, (int) kk, 1.0f,
                       wd + gi * og * kk, (int) kk, col, (int) spatial, 0.0f, res + gi * og * spatial, (int) spatial);
        }
      for (int64_t co = 0; co < g.cout; co++)
        {
          double bias = b ? fx_tensor_get_f64 (b, co) : 0.0;
          for (int64_t s = 0; s < spatial; s++)
            fx_tensor_set_f64 (o, (ni * g.cout + co) * spatial + s, res[co * spatial + s] + bias);
        }
    }
  free (col);
  free (res);
  fx_tensor_unref (x);
  fx_tensor_unref (xf);
  fx_tensor_unref (w);
  return FX_OK;
}

/* ---------------------------------------------------------------- pooling */

typedef struct
{
  int64_t k[2], s[2], p[2], d[2];
  bool ceil_mode, count_include_pad;
  int64_t divisor;
  int64_t in[2], out[2];
  bool adaptive;
} pool_geo;

static int64_t
pool_out (int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode)
{
  int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t o = num / s + 1;
  if (ceil_mode && (o - 1) * s >= in + p)
    o--;
  return o;
}

static fx_status
pool_geometry (fx_op_call *call, pool_geo *g)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  memset (g, 0, sizeof *g);
  if (x->ndim != 3 && x->ndim != 4)
    return fx_op_error (call, FX_ERR_INVALID, "expected 3D or 4D (batch mode) tensor for input, got %dD", x->ndim);
  g->in[0] = x->sizes[x->ndim - 2];
  g->in[1] = x->sizes[x->ndim - 1];
  fx_op_id id = call->op->id;
  if (id == FX_OP_ADAPTIVE_AVG_POOL2D || id == FX_OP_ADAPTIVE_AVG_POOL2D_PUBLIC)
    {
      pair_arg (call, 1, 0, 0, g->out);
      g->adaptive = true;
      g->d[0] = g->d[1] = 1;
      if (g->out[0] < 0 || g->out[1] < 0)
        return fx_op_error (call, FX_ERR_INVALID, "output_size must be non-negative");
      return FX_OK;
    }
  pair_arg (call, 1, 0, 0, g->k);
  pair_arg (call, 2, g->k[0], g->k[1], g->s);   /* stride: the kernel size when not given */
  pair_arg (call, 3, 0, 0, g->p);
  g->d[0] = g->d[1] = 1;
  if (id == FX_OP_MAX_POOL2D_WITH_INDICES)
    {
      pair_arg (call, 4, 1, 1, g->d);
      g->ceil_mode = call->args[5].u.b;
    }
  else
    {
      g->ceil_mode = call->args[4].u.b;
      g->count_include_pad = call->args[5].u.b;
      g->divisor = call->args[6].kind == FX_VALUE_INT ? call->args[6].u.i : 0;
    }
  for (int i = 0; i < 2; i++)
    {
      if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1)
        return fx_op_error (call, FX_ERR_INVALID, "kernel size, stride and dilation must be positive");
      if (g->k[i] > GEO_MAX || g->s[i] > GEO_MAX || g->d[i] > GEO_MAX || g->p[i] > GEO_MAX || g->p[i] < 0
          || g->in[i] > GEO_MAX)
        return fx_op_error (call, FX_ERR_INVALID, "kernel size, stride, padding, dilation or size is too large or "
                            "negative");
      if (g->p[i] * 2 > g->k[i])
        return fx_op_error (call, FX_ERR_INVALID, "pad should be at most half of effective kernel size");
      g->out[i] = pool_out (g->in[i], g->k[i], g->s[i], g->p[i], g->d[i], g->ceil_mode);
      if (g->out[i] < 1)
        return fx_op_error (call, FX_ERR_INVALID, "Output size is too small");
    }
  return FX_OK;
}

fx_status
fx_meta_pool2d (fx_op_call *call)
{
  pool_geo g;
  fx_status st = pool_geometry (call, &g);
  if (st != FX_OK)
    return st;
  fx_tensor *x = fx_arg_tensor (call, 0);
  int64_t sizes[4];
  memcpy (sizes, x->sizes, sizeof (int64_t) * x->ndim);
  sizes[x->ndim - 2] = g.out[0];
  sizes[x->ndim - 1] = g.out[1];
  fx_out_meta (call, 0, x->dtype, x->ndim, sizes);
  if (call->op->id == FX_OP_MAX_POOL2D_WITH_INDICES)
    fx_out_meta (call, 1, FX_DTYPE_I64, x->ndim, sizes);
  return FX_OK;
}

fx_status
fx_kernel_pool2d (fx_op_call *call)
{
  pool_geo g;
  fx_status st = pool_geometry (call, &g);
  if (st != FX_OK)
    return st;
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *o = call->outs[0].u.t;
  fx_tensor *oi = call->n_outs > 1 ? call->outs[1].u.t : NULL;
  int64_t planes = fx_tensor_numel (x) / ((g.in[0] * g.in[1]) != 0 ? g.in[0] * g.in[1] : 1);
  if (g.in[0] * g.in[1] == 0)
    planes = fx_tensor_numel (o) / ((g.out[0] * g.out[1]) != 0 ? g.out[0] * g.out[1] : 1);
  bool is_max = call->op->id == FX_OP_MAX_POOL2D_WITH_INDICES;
  for (int64_t pl = 0; pl < planes; pl++)
    for (int64_t oy = 0; oy < g.out[0]; oy++)
      for (int64_t ox = 0; ox < g.out[1]; ox++)
        {
          int64_t y0, y1, x0, x1;
          if (g.adaptive)
            {
              y0 = (oy * g.in[0]) / g.out[0];
              y1 = ((oy + 1) * g.in[0] + g.out[0] - 1) / g.out[0];
              x0 = (ox * g.in[1]) / g.out[1];
              x1 = ((ox + 1) * g.in[1] + g.out[1] - 1) / g.out[1];
            }
          else
            {
              y0 = oy * g.s[0] - g.p[0];
              x0 = ox * g.s[1] - g.p[1];
              y1 = y0 + (g.k[0] - 1) * g.d[0] + 1;
              x1 = x0 + (g.k[1] - 1) * g.d[1] + 1;
            }
          double best = -INFINITY, sum = 0;
          int64_t best_i = -1, cnt = 0;
          for (int64_t iy = y0; iy < y1; iy += g.d[0])
            for (int64_t ix = x0; ix < x1; ix += g.d[1])
              {
                if (iy < 0 || iy >= g.in[0] || ix < 0 || ix >= g.in[1])
                  continue;
                int64_t idx = iy * g.in[1] + ix;
                double v = fx_tensor_get_f64 (x, pl * g.in[0] * g.in[1] + idx);
                if (best_i < 0 || v > best || isnan (v))
                  {
                    if (!(best_i >= 0 && isnan (best)))
                      {
                        best = v;
                        best_i = idx;
                      }
                  }
                sum += v;
                cnt++;
              }
          int64_t flat = (pl * g.out[0] + oy) * g.out[1] + ox;
          if (is_max)
            {
              fx_tensor_set_f64 (o, flat, best);
              fx_tensor_set_i64 (oi, flat, best_i);
            }
          else
            {
              double div;
              if (g.adaptive)
                div = (double) ((y1 - y0) * (x1 - x0));
              else if (g.divisor)
                div = (double) g.divisor;
              else if (g.count_include_pad)
                {
                  int64_t hy = y0 + g.k[0] < g.in[0] + g.p[0] ? y0 + g.k[0] : g.in[0] + g.p[0];
                  int64_t hx = x0 + g.k[1] < g.in[1] + g.p[1] ? x0 + g.k[1] : g.in[1] + g.p[1];
                  div = (double) ((hy - y0) * (hx - x0));
                }
              else
                div = (double) cnt;
              fx_tensor_set_f64 (o, flat, sum / div);
            }
        }
  return FX_OK;
}

/* ---------------------------------------------------------------- linear (torch.export's pre-dispatch IR) */

/* linear(input [*, K], weight [N, K], bias [N]?) -> [*, N], as export leaves it undecomposed. */
fx_status
fx_meta_linear (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0), *w = fx_arg_tensor (call, 1), *b = fx_arg_tensor (call, 2);
  if (x == NULL || w == NULL || x->ndim < 1 || w->ndim != 2)
    return fx_op_error (call, FX_ERR_INVALID, "linear expects an input of at least 1 dim and a 2-D weight");
  int64_t k = x->sizes[x->ndim - 1];
  if (w->sizes[1] != k)
    return fx_op_error (call, FX_ERR_INVALID, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                        (long long) (fx_tensor_numel (x) / (k ? k : 1)), (long long) k, (long long) w->sizes[1],
                        (long long) w->sizes[0]);
  if (b != NULL && fx_tensor_numel (b) != w->sizes[0])
    return fx_op_error (call, FX_ERR_INVALID, "bias has %lld elements, the weight %lld rows",
                        (long long) fx_tensor_numel (b), (long long) w->sizes[0]);
  if (x->dtype != w->dtype || !fx_dtype_is_floating (x->dtype))
    return fx_op_error (call, FX_ERR_INVALID, "expected input and weight of one floating dtype, got %s and %s",
                        fx_dtype_c10_name (x->dtype), fx_dtype_c10_name (w->dtype));
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  memcpy (sizes, x->sizes, sizeof sizes);
  sizes[x->ndim - 1] = w->sizes[0];
  fx_out_meta (call, 0, x->dtype, x->ndim, sizes);
  return FX_OK;
}

fx_status
fx_kernel_linear (fx_op_call *call)
{
  fx_tensor *xc = fx_tensor_contiguous_copy (call->alloc, fx_arg_tensor (call, 0));
  fx_tensor *wc = fx_tensor_contiguous_copy (call->alloc, fx_arg_tensor (call, 1));
  fx_tensor *b = fx_arg_tensor (call, 2), *o = call->outs[0].u.t;
  int64_t k = wc->sizes[1], n = wc->sizes[0], m = k ? fx_tensor_numel (xc) / k : 0;
  if (o->dtype == FX_DTYPE_F32 && fx_tensor_is_contiguous (o) && m > 0 && n > 0 && k > 0)
    cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) m, (int) n, (int) k, 1.0f,
                 (const float *) fx_tensor_data (xc), (int) k, (const float *) fx_tensor_data (wc), (int) k, 0.0f,
                 (float *) fx_tensor_data (o), (int) n);
  else if (o->dtype == FX_DTYPE_F64 && fx_tensor_is_contiguous (o) && m > 0 && n > 0 && k > 0)
    cblas_dgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) m, (int) n, (int) k, 1.0,
                 (const double *) fx_tensor_data (xc), (int) k, (const double *) fx_tensor_data (wc), (int) k, 0.0,
                 (double *) fx_tensor_data (o), (int) n);
  else
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++)
        {
          double acc = 0;
          for (int64_t q = 0; q < k; q++)
            acc += fx_tensor_get_f64 (xc, i * k + q) * fx_tensor_get_f64 (wc, j * k + q);
          fx_tensor_set_f64 (o, i * n + j, acc);
        }
  if (b != NULL)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++)
        fx_tensor_set_f64 (o, i * n + j, fx_tensor_get_f64 (o, i * n + j) + fx_tensor_get_f64 (b, j));
  fx_tensor_unref (xc);
  fx_tensor_unref (wc);
  return FX_OK;
}

/* ---------------------------------------------------------------- upsampling (F.interpolate) */

fx_status
fx_meta_upsample2d (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  int64_t os[2];
  if (x->ndim != 4)
    return fx_op_error (call, FX_ERR_INVALID, "Expected input of 4 dims (N, C, H, W), got %d", x->ndim);
  if (fx_value_as_int_list (&call->args[1], os, 2) != 2 || os[0] <= 0 || os[1] <= 0)
    return fx_op_error (call, FX_ERR_INVALID, "It is expected output_size equals to 2, and all its elements > 0");
  int64_t sizes[4] = { x->sizes[0], x->sizes[1], os[0], os[1] };
  fx_out_meta (call, 0, x->dtype, 4, sizes);
  return FX_OK;
}

/* v rounded to float when the kernel computes in float (PyTorch's opmath type of a float32 input) */
static inline double
op_round (double v, bool f32)
{
  return f32 ? (double) (float) v : v;
}

/* PyTorch's compute_scales_value / area_pixel_compute_scale in the kernel's type (float for nearest and for a
   float32 input) */
static double
upsample_scale (int64_t in, int64_t out, bool align_corners, const fx_value *scale, bool f32)
{
  if (align_corners)
    return out > 1 ? op_round ((double) (in - 1) / (double) (out - 1), f32) : 0.0;
  if (scale->kind != FX_VALUE_NONE && fx_value_as_f64 (scale) > 0)
    return op_round (1.0 / fx_value_as_f64 (scale), f32);
  return op_round ((double) in / (double) out, f32);
}

static int64_t
nearest_index (int64_t dst, int64_t in, int64_t out, double scale)
{
  if (out == in)
    return dst;
  if (out == 2 * in)
    return dst >> 1;
  int64_t s = (int64_t) floorf ((float) dst * scale);
  return s < in - 1 ? s : in - 1;
}

/* the two source taps and their weights for output position dst (area_pixel_compute_source_index) */
static void
linear_taps (int64_t dst, int64_t in, double scale, bool align_corners, bool f32, int64_t *i0, int64_t *i1,
             double *w0, double *w1)
{
  double src = align_corners ? op_round (scale * (double) dst, f32)
                             : op_round (op_round (scale * op_round ((double) dst + 0.5, f32), f32) - 0.5, f32);
  if (src < 0)
    src = 0;
  *i0 = (int64_t) src;
  *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
  *w1 = op_round (src - (double) *i0, f32);
  *w0 = op_round (1.0 - *w1, f32);
}

/* upsample_nearest2d / upsample_bilinear2d over (N, C, H, W) */
fx_status
fx_kernel_upsample2d (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *o = call->outs[0].u.t;
  bool bilinear = call->op->id == FX_OP_UPSAMPLE_BILINEAR2D;
  bool ac = bilinear && call->args[2].u.b;
  int si = bilinear ? 3 : 2;
  int64_t ih = x->sizes[2], iw = x->sizes[3], oh = o->sizes[2], ow = o->sizes[3];
  int64_t planes = x->sizes[0] * x->sizes[1];
  bool f32 = !bilinear || x->dtype != FX_DTYPE_F64;
  double sh = upsample_scale (ih, oh, ac, &call->args[si], f32), sw = upsample_scale (iw, ow, ac, &call->args[si + 1], f32);
  for (int64_t p = 0; p < planes; p++)
    for (int64_t h = 0; h < oh; h++)
      for (int64_t w = 0; w < ow; w++)
        {
          int64_t of = (p * oh + h) * ow + w;
          if (!bilinear)
            {
              int64_t y = nearest_index (h, ih, oh, sh), xx = nearest_index (w, iw, ow, sw);
              memcpy (fx_tensor_elem_ptr (o, of), fx_tensor_elem_ptr (x, (p * ih + y) * iw + xx),
                      fx_dtype_size (x->dtype));
              continue;
            }
          int64_t h0, h1, w0, w1;
          double lh0, lh1, lw0, lw1;
          linear_taps (h, ih, sh, ac, f32, &h0, &h1, &lh0, &lh1);
          linear_taps (w, iw, sw, ac, f32, &w0, &w1, &lw0, &lw1);
          double v00 = fx_tensor_get_f64 (x, (p * ih + h0) * iw + w0), v01 = fx_tensor_get_f64 (x, (p * ih + h0) * iw + w1);
          double v10 = fx_tensor_get_f64 (x, (p * ih + h1) * iw + w0), v11 = fx_tensor_get_f64 (x, (p * ih + h1) * iw + w1);
          /* as PyTorch's Interpolate<2>: each row along W, then the rows along H, rounded as its type rounds */
          double t0 = op_round (op_round (v00 * lw0, f32) + op_round (v01 * lw1, f32), f32);
          double t1 = op_round (op_round (v10 * lw0, f32) + op_round (v11 * lw1, f32), f32);
          fx_tensor_set_f64 (o, of, op_round (t0 * lh0, f32) + op_round (t1 * lh1, f32));
        }
  return FX_OK;
}
