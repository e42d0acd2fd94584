/* bench-ls.c: `fxwb ls` on a workspace of 1,000 compiles (each with graphs, kernels, guards, a recompile reason),
   wall time of the whole command, median of 7 runs. A meson benchmark, not a test. argv[1]: the fxwb program. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "fx/store.h"

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    g_error ("usage: bench-ls FXWB [COMPILES]");
  int n_compiles = argc > 2 ? atoi (argv[2]) : 1000;
  g_autofree char *tmp = g_dir_make_tmp ("fxbenchls-XXXXXX", NULL);
  g_autofree char *ws = g_build_filename (tmp, "ls.fxwb", NULL);
  fx_store *store = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_store_open (ws, true, &store, &diag) != FX_OK || fx_store_begin (store, &diag) != FX_OK)
    g_error ("%s", diag.message);
  int64_t input = 0;
  fx_store_add_input (store, "generated", "torch_trace", "bench", 0, &input, &diag);
  for (int i = 0; i < n_compiles; i++)
    {
      fx_compile_id cid = { -1, i / 10, i % 10, 0 };
      int64_t c = 0;
      fx_store_ensure_compile (store, input, &cid, &c, &diag);
      fx_store_compile_update u;
      fx_store_compile_update_init (&u);
      u.function = "forward";
      u.file = "/home/user/model.py";
      u.line = 10 + i % 50;
      u.entire_frame_compile_s = 1.5;
      fx_store_update_compile (store, c, &u, &diag);
      for (int g = 0; g < 8; g++)
        fx_store_add_graph (store, c, "dynamo", NULL, "def forward(self, x):\n    return (x,)\n", NULL, &diag);
      for (int k = 0; k < 3; k++)
        fx_store_add_kernel (store, c, k, k, "triton_poi_fused_add_0", "triton", "cuda", "@triton.jit", "add",
                             "aten.add", &diag);
      for (int k = 0; k < 10; k++)
        fx_store_add_guard (store, c, "TENSOR_MATCH", "L['x']", "check_tensor(L['x'])", NULL, &diag);
      if (i % 10)
        fx_store_add_guard_failure (store, c, "0/0", "tensor 'x' size mismatch", NULL, &diag);
    }
  if (fx_store_commit (store, &diag) != FX_OK)
    g_error ("%s", diag.message);
  fx_store_close (store);

  double times[7];
  for (int r = 0; r < 7; r++)
    {
      const char *args[] = { argv[1], "ls", ws, NULL };
      g_autofree char *out = NULL;
      int status = 0;
      gint64 t0 = g_get_monotonic_time ();
      if (!g_spawn_sync (NULL, (char **) args, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status,
                         NULL) || !g_spawn_check_wait_status (status, NULL))
        g_error ("fxwb ls failed");
      times[r] = (double) (g_get_monotonic_time () - t0) / 1000.0;
    }
  qsort (times, 7, sizeof times[0], cmp_double);
  printf ("fxwb ls, %d compiles: median %.1f ms (min %.1f, max %.1f)\n", n_compiles, times[3], times[0], times[6]);
  const char *suffixes[] = { "", "-wal", "-shm" };
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *f = g_strconcat (ws, suffixes[i], NULL);
      g_unlink (f);
    }
  g_rmdir (tmp);
  return 0;
}
