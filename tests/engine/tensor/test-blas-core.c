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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/blas/select-core", test_select);
  return g_test_run ();
}
