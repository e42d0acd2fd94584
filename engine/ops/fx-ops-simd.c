/* fx-ops-simd.c: AVX2 fast paths of the hot f32 kernels (pointwise math through glibc's libmvec, softmax and layer
   norm rows), chosen at run time when the CPU has AVX2 and FMA; callers keep their portable loops for the rest. */
/* Switches over op ids name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"
#include "fx-ops-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__GLIBC__) \
  && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define FX_SIMD_AVX2 1
#endif

#ifdef FX_SIMD_AVX2
#include <immintrin.h>

#define AVX2 __attribute__ ((target ("avx2,fma")))

/* libmvec's AVX2 variants (8 floats, at most 4 ulp from the correctly rounded result). Declared with the target
   attribute: clang refuses __m256 arguments to a function it believes has no AVX (an ABI change). */
#define MVEC(name) extern AVX2 __m256 _ZGVdN8v_##name (__m256);
MVEC (expf) MVEC (logf) MVEC (sinf) MVEC (cosf) MVEC (tanf) MVEC (tanhf) MVEC (erff) MVEC (erfcf) MVEC (expm1f)
MVEC (log1pf) MVEC (log2f) MVEC (log10f) MVEC (exp2f) MVEC (asinf) MVEC (acosf) MVEC (atanf) MVEC (sinhf)
MVEC (coshf)
#undef MVEC

typedef __m256 (*vec_fn) (__m256);

AVX2 static __m256
v_sigmoid (__m256 x)
{
  __m256 one = _mm256_set1_ps (1.0f);
  __m256 e = _ZGVdN8v_expf (_mm256_sub_ps (_mm256_setzero_ps (), x));
  return _mm256_div_ps (one, _mm256_add_ps (one, e));
}

AVX2 static __m256
v_silu (__m256 x)
{
  __m256 one = _mm256_set1_ps (1.0f);
  __m256 e = _ZGVdN8v_expf (_mm256_sub_ps (_mm256_setzero_ps (), x));
  return _mm256_div_ps (x, _mm256_add_ps (one, e));
}

AVX2 static __m256
v_gelu (__m256 x)
{
  __m256 e = _ZGVdN8v_erff (_mm256_mul_ps (x, _mm256_set1_ps (0.70710678118654752f)));
  return _mm256_mul_ps (_mm256_mul_ps (_mm256_set1_ps (0.5f), x), _mm256_add_ps (_mm256_set1_ps (1.0f), e));
}

AVX2 static __m256
v_gelu_tanh (__m256 x)
{
  __m256 x3 = _mm256_mul_ps (_mm256_mul_ps (_mm256_set1_ps (0.044715f), x), _mm256_mul_ps (x, x));
  __m256 t = _ZGVdN8v_tanhf (_mm256_mul_ps (_mm256_set1_ps (0.7978845608028654f), _mm256_add_ps (x, x3)));
  return _mm256_mul_ps (_mm256_mul_ps (_mm256_set1_ps (0.5f), x), _mm256_add_ps (_mm256_set1_ps (1.0f), t));
}

AVX2 static __m256
v_rsqrt (__m256 x)
{
  return _mm256_div_ps (_mm256_set1_ps (1.0f), _mm256_sqrt_ps (x));
}

AVX2 static __m256
v_sqrt (__m256 x)
{
  return _mm256_sqrt_ps (x);
}

AVX2 static __m256
v_reciprocal (__m256 x)
{
  return _mm256_div_ps (_mm256_set1_ps (1.0f), x);
}

AVX2 static __m256
v_relu (__m256 x)
{
  /* max(0, x) returns x when x is NaN, as the scalar kernel does */
  return _mm256_max_ps (_mm256_setzero_ps (), x);
}

static vec_fn
unary_fn (fx_op_id op, bool tanh_gelu)
{
  switch (op)
    {
    case FX_OP_EXP: return _ZGVdN8v_expf;
    case FX_OP_LOG: return _ZGVdN8v_logf;
    case FX_OP_SIN: return _ZGVdN8v_sinf;
    case FX_OP_COS: return _ZGVdN8v_cosf;
    case FX_OP_TAN: return _ZGVdN8v_tanf;
    case FX_OP_TANH: return _ZGVdN8v_tanhf;
    case FX_OP_ERF: return _ZGVdN8v_erff;
    case FX_OP_ERFC: return _ZGVdN8v_erfcf;
    case FX_OP_EXPM1: return _ZGVdN8v_expm1f;
    case FX_OP_LOG1P: return _ZGVdN8v_log1pf;
    case FX_OP_LOG2: return _ZGVdN8v_log2f;
    case FX_OP_LOG10: return _ZGVdN8v_log10f;
    case FX_OP_EXP2: return _ZGVdN8v_exp2f;
    case FX_OP_ASIN: return _ZGVdN8v_asinf;
    case FX_OP_ACOS: return _ZGVdN8v_acosf;
    case FX_OP_ATAN: return _ZGVdN8v_atanf;
    case FX_OP_SINH: return _ZGVdN8v_sinhf;
    case FX_OP_COSH: return _ZGVdN8v_coshf;
    case FX_OP_SIGMOID: return v_sigmoid;
    case FX_OP_SILU: return v_silu;
    case FX_OP_GELU: return tanh_gelu ? v_gelu_tanh : v_gelu;
    case FX_OP_RSQRT: return v_rsqrt;
    case FX_OP_SQRT: return v_sqrt;
    case FX_OP_RECIPROCAL: return v_reciprocal;
    case FX_OP_RELU: return v_relu;
    default: return NULL;
    }
}

AVX2 static void
unary_avx2 (vec_fn f, float *o, const float *x, int64_t n)
{
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps (o + i, f (_mm256_loadu_ps (x + i)));
  if (i < n)
    {
      /* the tail through a zero-padded block */
      float buf[8] = { 0 };
      memcpy (buf, x + i, sizeof (float) * (size_t) (n - i));
      _mm256_storeu_ps (buf, f (_mm256_loadu_ps (buf)));
      memcpy (o + i, buf, sizeof (float) * (size_t) (n - i));
    }
}

AVX2 static void
binary_avx2 (fx_op_id op, float alpha, float *o, const float *a, const float *b, int64_t sa, int64_t sb, int64_t n)
{
  /* sa/sb: 1 contiguous, 0 broadcast scalar */
  __m256 va = _mm256_set1_ps (a[0]), vb = _mm256_set1_ps (b[0]), val = _mm256_set1_ps (alpha);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    {
      __m256 x = sa ? _mm256_loadu_ps (a + i) : va;
      __m256 y = sb ? _mm256_loadu_ps (b + i) : vb;
      __m256 r;
      switch (op)
        {
        case FX_OP_ADD_TENSOR: case FX_OP_ADD_SCALAR: r = _mm256_add_ps (x, _mm256_mul_ps (val, y)); break;
        case FX_OP_SUB_TENSOR: case FX_OP_SUB_SCALAR: r = _mm256_sub_ps (x, _mm256_mul_ps (val, y)); break;
        case FX_OP_MUL_TENSOR: case FX_OP_MUL_SCALAR: r = _mm256_mul_ps (x, y); break;
        case FX_OP_DIV_TENSOR: case FX_OP_DIV_SCALAR: r = _mm256_div_ps (x, y); break;
        default: r = _mm256_mul_ps (x, x); break;   /* pow(x, 2) */
        }
      _mm256_storeu_ps (o + i, r);
    }
  for (; i < n; i++)
    {
      float x = a[sa ? i : 0], y = b[sb ? i : 0];
      switch (op)
        {
        case FX_OP_ADD_TENSOR: case FX_OP_ADD_SCALAR: o[i] = x + alpha * y; break;
        case FX_OP_SUB_TENSOR: case FX_OP_SUB_SCALAR: o[i] = x - alpha * y; break;
        case FX_OP_MUL_TENSOR: case FX_OP_MUL_SCALAR: o[i] = x * y; break;
        case FX_OP_DIV_TENSOR: case FX_OP_DIV_SCALAR: o[i] = x / y; break;
        default: o[i] = x * x; break;
        }
    }
}

/* Sum of 8 lanes in double (the scalar kernels accumulate in double). */
AVX2 static double
hsum_pd (__m256d a, __m256d b)
{
  __m256d s = _mm256_add_pd (a, b);
  double t[4];
  _mm256_storeu_pd (t, s);
  return (t[0] + t[1]) + (t[2] + t[3]);
}

AVX2 static bool
softmax_row_avx2 (float *q, const float *p, int64_t n, bool log_softmax, double *sum_out, float *max_out)
{
  __m256 vmax = _mm256_set1_ps (-INFINITY), vnan = _mm256_setzero_ps ();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    {
      __m256 x = _mm256_loadu_ps (p + i);
      vnan = _mm256_or_ps (vnan, _mm256_cmp_ps (x, x, _CMP_UNORD_Q));
      vmax = _mm256_max_ps (vmax, x);
    }
  if (_mm256_movemask_ps (vnan) != 0)
    return false;
  float lanes[8];
  _mm256_storeu_ps (lanes, vmax);
  float mx = -INFINITY;
  for (int k = 0; k < 8; k++)
    mx = lanes[k] > mx ? lanes[k] : mx;
  for (; i < n; i++)
    {
      if (isnan (p[i]))
        return false;
      mx = p[i] > mx ? p[i] : mx;
    }
  __m256 vm = _mm256_set1_ps (mx);
  __m256d s0 = _mm256_setzero_pd (), s1 = _mm256_setzero_pd ();
  double sum = 0;
  i = 0;
  for (; i + 8 <= n; i += 8)
    {
      __m256 e = _ZGVdN8v_expf (_mm256_sub_ps (_mm256_loadu_ps (p + i), vm));
      if (q != NULL && !log_softmax)
        _mm256_storeu_ps (q + i, e);
      s0 = _mm256_add_pd (s0, _mm256_cvtps_pd (_mm256_castps256_ps128 (e)));
      s1 = _mm256_add_pd (s1, _mm256_cvtps_pd (_mm256_extractf128_ps (e, 1)));
    }
  for (; i < n; i++)
    {
      float e = expf (p[i] - mx);
      if (q != NULL && !log_softmax)
        q[i] = e;
      sum += e;
    }
  sum += hsum_pd (s0, s1);
  *sum_out = sum;
  *max_out = mx;
  if (q == NULL)
    return true;
  if (log_softmax)
    {
      float ls = (float) log (sum);
      __m256 vls = _mm256_set1_ps (ls);
      for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps (q + i, _mm256_sub_ps (_mm256_sub_ps (_mm256_loadu_ps (p + i), vm), vls));
      for (; i < n; i++)
        q[i] = p[i] - mx - ls;
    }
  else
    {
      float inv = (float) (1.0 / sum);
      __m256 vi = _mm256_set1_ps (inv);
      for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps (q + i, _mm256_mul_ps (_mm256_loadu_ps (q + i), vi));
      for (; i < n; i++)
        q[i] *= inv;
    }
  return true;
}

AVX2 static void
layer_norm_row_avx2 (float *q, const float *p, const float *w, const float *b, int64_t n, double eps, double *mean_out,
                     double *rstd_out)
{
  __m256d s0 = _mm256_setzero_pd (), s1 = _mm256_setzero_pd ();
  int64_t i = 0;
  double sum = 0, sq = 0;
  for (; i + 8 <= n; i += 8)
    {
      __m256 x = _mm256_loadu_ps (p + i);
      s0 = _mm256_add_pd (s0, _mm256_cvtps_pd (_mm256_castps256_ps128 (x)));
      s1 = _mm256_add_pd (s1, _mm256_cvtps_pd (_mm256_extractf128_ps (x, 1)));
    }
  for (; i < n; i++)
    sum += p[i];
  sum += hsum_pd (s0, s1);
  double mean = sum / (double) n;
  __m256d vmean = _mm256_set1_pd (mean);
  s0 = _mm256_setzero_pd ();
  s1 = _mm256_setzero_pd ();
  for (i = 0; i + 8 <= n; i += 8)
    {
      __m256 x = _mm256_loadu_ps (p + i);
      __m256d d0 = _mm256_sub_pd (_mm256_cvtps_pd (_mm256_castps256_ps128 (x)), vmean);
      __m256d d1 = _mm256_sub_pd (_mm256_cvtps_pd (_mm256_extractf128_ps (x, 1)), vmean);
      s0 = _mm256_fmadd_pd (d0, d0, s0);
      s1 = _mm256_fmadd_pd (d1, d1, s1);
    }
  for (; i < n; i++)
    {
      double d = p[i] - mean;
      sq += d * d;
    }
  sq += hsum_pd (s0, s1);
  double rstd = 1.0 / sqrt (sq / (double) n + eps);
  float fm = (float) mean, fr = (float) rstd;
  __m256 vfm = _mm256_set1_ps (fm), vfr = _mm256_set1_ps (fr);
  for (i = 0; i + 8 <= n; i += 8)
    {
      __m256 v = _mm256_mul_ps (_mm256_sub_ps (_mm256_loadu_ps (p + i), vfm), vfr);
      if (w)
        v = _mm256_mul_ps (v, _mm256_loadu_ps (w + i));
      if (b)
        v = _mm256_add_ps (v, _mm256_loadu_ps (b + i));
      _mm256_storeu_ps (q + i, v);
    }
  fx_layer_norm_apply_f32 (q, p, w, b, i, n, fm, fr);
  *mean_out = mean;
  *rstd_out = rstd;
}

static bool
have_avx2 (void)
{
  static int v = -1;
  if (v < 0)
    {
      const char *env = getenv ("FX_NO_SIMD");
      v = (env == NULL || env[0] == '\0' || env[0] == '0') && __builtin_cpu_supports ("avx2")
          && __builtin_cpu_supports ("fma");
    }
  return v;
}
#endif

bool
fx_simd_unary_f32 (fx_op_id op, bool tanh_gelu, float *o, const float *x, int64_t n)
{
#ifdef FX_SIMD_AVX2
  if (!have_avx2 ())
    return false;
  vec_fn f = unary_fn (op, tanh_gelu);
  if (f == NULL)
    return false;
  unary_avx2 (f, o, x, n);
  return true;
#else
  (void) op, (void) tanh_gelu, (void) o, (void) x, (void) n;
  return false;
#endif
}

bool
fx_simd_binary_f32 (fx_op_id op, float alpha, float *o, const float *a, const float *b, int64_t sa, int64_t sb,
                    int64_t n)
{
#ifdef FX_SIMD_AVX2
  if (!have_avx2 () || (sa != 0 && sa != 1) || (sb != 0 && sb != 1))
    return false;
  switch (op)
    {
    case FX_OP_ADD_TENSOR: case FX_OP_ADD_SCALAR: case FX_OP_SUB_TENSOR: case FX_OP_SUB_SCALAR:
    case FX_OP_MUL_TENSOR: case FX_OP_MUL_SCALAR: case FX_OP_DIV_TENSOR: case FX_OP_DIV_SCALAR:
      break;
    case FX_OP_POW_TENSOR_SCALAR:
      if (sb != 0 || b[0] != 2.0f)
        return false;
      break;
    default:
      return false;
    }
  binary_avx2 (op, alpha, o, a, b, sa, sb, n);
  return true;
#else
  (void) op, (void) alpha, (void) o, (void) a, (void) b, (void) sa, (void) sb, (void) n;
  return false;
#endif
}

bool
fx_simd_softmax_row_f32 (float *q, const float *p, int64_t n, bool log_softmax, double *sum, float *max)
{
#ifdef FX_SIMD_AVX2
  if (!have_avx2 ())
    return false;
  return softmax_row_avx2 (q, p, n, log_softmax, sum, max);
#else
  (void) q, (void) p, (void) n, (void) log_softmax, (void) sum, (void) max;
  return false;
#endif
}

bool
fx_simd_layer_norm_row_f32 (float *q, const float *p, const float *w, const float *b, int64_t n, double eps,
                            double *mean, double *rstd)
{
#ifdef FX_SIMD_AVX2
  if (!have_avx2 () || n < 1)
    return false;
  layer_norm_row_avx2 (q, p, w, b, n, eps, mean, rstd);
  return true;
#else
  (void) q, (void) p, (void) w, (void) b, (void) n, (void) eps, (void) mean, (void) rstd;
  return false;
#endif
}
