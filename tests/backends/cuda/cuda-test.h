/* cuda-test.h: a tiny TAP-printing harness for the CUDA tests, in plain C so that they build on a GPU host that has
   a compiler and no GLib; exit 77 means "skipped" to meson. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx/common.h"

static int cuda_test_failures;
static int cuda_test_count;
static const char *cuda_test_current;

#define CHECK(cond, ...)                                                              \
  do                                                                                  \
    {                                                                                 \
      if (!(cond))                                                                    \
        {                                                                             \
          printf ("# %s:%d: %s: check failed: %s: ", __FILE__, __LINE__,              \
                  cuda_test_current, #cond);                                          \
          printf (__VA_ARGS__);                                                       \
          printf ("\n");                                                              \
          cuda_test_failures++;                                                       \
          return;                                                                     \
        }                                                                             \
    }                                                                                 \
  while (0)

/* An fx_status call that must succeed; on failure prints the diagnostic. */
#define CHECK_OK(call, diag)                                                          \
  do                                                                                  \
    {                                                                                 \
      fx_status check_st_ = (call);                                                   \
      CHECK (check_st_ == FX_OK, "%s: %s", fx_status_name (check_st_), (diag)->message); \
    }                                                                                 \
  while (0)

static inline void
cuda_test_run (const char *name, void (*fn) (void))
{
  int before = cuda_test_failures;
  cuda_test_current = name;
  cuda_test_count++;
  fn ();
  printf ("%s %d %s\n", cuda_test_failures == before ? "ok" : "not ok", cuda_test_count, name);
  fflush (stdout);
}

static inline int
cuda_test_finish (void)
{
  printf ("1..%d\n", cuda_test_count);
  return cuda_test_failures ? 1 : 0;
}
