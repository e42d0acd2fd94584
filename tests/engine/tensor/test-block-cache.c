/* test-block-cache.c: the tensor allocator's cache of freed large blocks keeps the blocks a loop reuses while blocks
   left from an earlier phase go first (least recently freed), and hands back a block's memory as it was left (a
   fresh block from the kernel reads zero: the marker tells a reused block from a new one). */
#include <glib.h>
#include <string.h>

#include "fx/tensor.h"

enum { STALE = 64, HOT = 8, ROUNDS = 4 };

static fx_tensor *
block (int64_t floats, float marker)
{
  fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 1, &floats);
  g_assert_nonnull (t);
  float *d = fx_tensor_data (t);
  d[0] = marker;
  d[floats - 1] = marker;
  return t;
}

static void
test_reuse (void)
{
#if defined(__SANITIZE_ADDRESS__)
  /* under ASan every block goes back to malloc (a use after free stays visible): only the data path runs */
  fx_tensor *t = block (1 << 17, 1.0f);
  fx_tensor_unref (t);
  return;
#endif
  /* an earlier phase's blocks, of a size the loop never asks for, fill every slot */
  fx_tensor *stale[STALE];
  for (int i = 0; i < STALE; i++)
    stale[i] = block (256 << 8, -1.0f);   /* 256 KiB */
  for (int i = 0; i < STALE; i++)
    fx_tensor_unref (stale[i]);
  /* the loop: HOT blocks of 512 KiB allocated and freed each round; from the second round on, each comes back with
     the marker its last user left (a block from the kernel would read 0) */
  int reused = 0;
  for (int r = 0; r < ROUNDS; r++)
    {
      fx_tensor *hot[HOT];
      for (int i = 0; i < HOT; i++)
        {
          hot[i] = fx_tensor_new (NULL, FX_DTYPE_F32, 1, (int64_t[]) { 512 << 8 });
          const float *d = fx_tensor_data (hot[i]);
          if (r > 0 && d[0] == 42.0f && d[(512 << 8) - 1] == 42.0f)
            reused++;
          ((float *) fx_tensor_data (hot[i]))[0] = 42.0f;
          ((float *) fx_tensor_data (hot[i]))[(512 << 8) - 1] = 42.0f;
        }
      for (int i = 0; i < HOT; i++)
        fx_tensor_unref (hot[i]);
    }
  g_assert_cmpint (reused, ==, HOT * (ROUNDS - 1));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tensor/block-cache/reuse", test_reuse);
  return g_test_run ();
}
