/* test-blas-core.c: fx_blas_select_core moves an OpenBLAS that fell back to its generic Prescott core onto the AVX-512
   or AVX2 kernels, leaves a user's OPENBLAS_CORETYPE alone, restores the environment and keeps GEMM results.
   Runs with OPENBLAS_CORETYPE=Prescott in its environment (meson), which OpenBLAS reads when it loads. */
#include <glib.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fx/ops.h"

extern char *openblas_get_corename (void) __attribute__ ((weak));
extern void gotoblas_dynamic_init (void) __attribute__ ((weak));
extern int openblas_thread_timeout (void) __attribute__ ((weak));
extern int blas_thread_init (void) __attribute__ ((weak));

enum { M = 67, K = 131, N = 45 };

static void
gemm (const float *a, const float *b, float *c)
{
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
}

static void
test_select (void)
{
  if (!openblas_get_corename || !gotoblas_dynamic_init)
    {
      g_test_skip ("the cblas is not a DYNAMIC_ARCH OpenBLAS");
      return;
    }
  g_assert_cmpstr (g_getenv ("OPENBLAS_CORETYPE"), ==, "Prescott");
  g_assert_cmpstr (openblas_get_corename (), ==, "Prescott");
  /* the user's pick wins: nothing changes while OPENBLAS_CORETYPE is set */
  g_assert_null (fx_blas_select_core ());
  g_assert_cmpstr (openblas_get_corename (), ==, "Prescott");

  float *a = g_new (float, M * K), *b = g_new (float, K * N), *c0 = g_new (float, M * N), *c1 = g_new (float, M * N);
  GRand *r = g_rand_new_with_seed (7);
  for (int i = 0; i < M * K; i++)
    a[i] = (float) g_rand_double_range (r, -1, 1);
  for (int i = 0; i < K * N; i++)
    b[i] = (float) g_rand_double_range (r, -1, 1);
  gemm (a, b, c0);

  g_unsetenv ("OPENBLAS_CORETYPE");
  __builtin_cpu_init ();
  bool avx512 = __builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512vl")
                && __builtin_cpu_supports ("avx512bw") && __builtin_cpu_supports ("avx512dq")
                && __builtin_cpu_supports ("avx512cd");
  bool avx2 = __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
  const char *pick = fx_blas_select_core ();
  if (avx512)
    g_assert_cmpstr (pick, ==, "SkylakeX");
  else if (avx2)
    g_assert_cmpstr (pick, ==, "Haswell");
  else
    g_assert_null (pick);
  if (pick)
    g_assert_cmpstr (openblas_get_corename (), ==, pick);
  g_assert_null (g_getenv ("OPENBLAS_CORETYPE"));
  char desc[512];
  fx_blas_describe (desc, sizeof desc);
  g_assert_nonnull (strstr (desc, pick ? pick : "Prescott"));
  /* a second call finds a known core and leaves it */
  g_assert_null (fx_blas_select_core ());

  gemm (a, b, c1);
  for (int i = 0; i < M * N; i++)
    g_assert_cmpfloat_with_epsilon (c0[i], c1[i], 1e-4);
  g_rand_free (r);
  g_free (a);
  g_free (b);
  g_free (c0);
  g_free (c1);
}

/* The workers were restarted at load with a 2^16-cycle wait (the environment names none), the variable is gone again,
   and threaded GEMMs still compute what a single-threaded one does. */
static void
test_thread_timeout (void)
{
  if (!openblas_thread_timeout || !blas_thread_init)
    {
      g_test_skip ("the cblas is not OpenBLAS's pthread build");
      return;
    }
  g_assert_cmpint (openblas_thread_timeout (), ==, 16);
  g_assert_null (g_getenv ("OPENBLAS_THREAD_TIMEOUT"));
  /* a user's own setting is left alone */
  g_setenv ("OPENBLAS_THREAD_TIMEOUT", "20", TRUE);
  g_assert_cmpint (fx_blas_tune_threads (), ==, 0);
  g_unsetenv ("OPENBLAS_THREAD_TIMEOUT");
  enum { S = 384 };
  float *a = g_new (float, S * S), *c = g_new (float, S * S);
  for (int i = 0; i < S * S; i++)
    a[i] = (float) ((i * 37) % 11) - 5.0f;
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, S, S, S, 1.0f, a, S, a, S, 0.0f, c, S);
  for (int r = 0; r < S; r += 53)
    for (int col = 0; col < S; col += 47)
      {
        double want = 0;
        for (int k = 0; k < S; k++)
          want += (double) a[r * S + k] * a[k * S + col];
        g_assert_cmpfloat (c[r * S + col], ==, (float) want);
      }
  g_free (a);
  g_free (c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/blas/select-core", test_select);
  g_test_add_func ("/blas/thread-timeout", test_thread_timeout);
  return g_test_run ();
}
