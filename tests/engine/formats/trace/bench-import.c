/* bench-import.c: TORCH_TRACE import throughput (MB/s) on a generated trace of at least 200 MB: the toy_graph_break
   trace repeated with shifted frame ids, so every copy adds new frames and compiles. A meson benchmark, not a test. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "fx/importers.h"

int
main (int argc, char **argv)
{
  double target_mb = argc > 1 ? g_ascii_strtod (argv[1], NULL) : 200;
  const char *dir = g_getenv ("FX_FIXTURES");
  g_autofree char *path = g_build_filename (dir ? dir : "tests/fixtures", "traces", "toy_graph_break-cuda",
                                            "torch_trace", NULL);
  g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
  g_assert_nonnull (d);
  g_autofree char *log = g_build_filename (path, g_dir_read_name (d), NULL);
  g_autofree char *base = NULL;
  gsize base_len = 0;
  g_assert_true (g_file_get_contents (log, &base, &base_len, NULL));

  GString *trace = g_string_sized_new ((gsize) (target_mb * 1024 * 1024) + base_len);
  for (int copy = 0; trace->len < target_mb * 1024 * 1024; copy++)
    {
      /* "frame_id": N -> N + 3 * copy */
      const char *p = base, *end = base + base_len;
      static const char key[] = "\"frame_id\": ";
      while (p < end)
        {
          const char *hit = g_strstr_len (p, end - p, key);
          if (!hit)
            {
              g_string_append_len (trace, p, end - p);
              break;
            }
          hit += strlen (key);
          g_string_append_len (trace, p, hit - p);
          char *num_end = NULL;
          long v = strtol (hit, &num_end, 10);
          if (num_end == hit)
            {
              p = hit;
              continue;
            }
          g_string_append_printf (trace, "%ld", v + 3L * copy);
          p = num_end;
        }
    }
  g_autofree char *tmp = g_dir_make_tmp ("fxbench-XXXXXX", NULL);
  g_autofree char *ws = g_build_filename (tmp, "bench.fxwb", NULL);
  fx_store *store = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (ws, true, &store, &diag), ==, FX_OK);
  fx_import_stats stats;
  gint64 t0 = g_get_monotonic_time ();
  fx_status st = fx_import_torch_trace_data (store, "generated.log", trace->str, trace->len, NULL, NULL, &stats,
                                             &diag);
  gint64 t1 = g_get_monotonic_time ();
  if (st != FX_OK)
    g_error ("import: %s", diag.message);
  double mb = (double) trace->len / (1024.0 * 1024.0), s = (double) (t1 - t0) / 1e6;
  printf ("import %.1f MB (%" G_GINT64_FORMAT " lines, %" G_GINT64_FORMAT " records, %" G_GINT64_FORMAT
          " compiles, %" G_GINT64_FORMAT " graphs, %" G_GINT64_FORMAT " kernels) in %.2f s: %.1f MB/s\n",
          mb, stats.lines, stats.records, stats.compiles, stats.graphs, stats.kernels, s, mb / s);
  fx_store_close (store);
  g_string_free (trace, TRUE);
  const char *suffixes[] = { "", "-wal", "-shm" };
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *f = g_strconcat (ws, suffixes[i], NULL);
      g_unlink (f);
    }
  g_rmdir (tmp);
  return 0;
}
