/* bench-report.c: `fxwb report` throughput on a generated TORCH_TRACE of at least 200 MB (the toy_graph_break trace
   repeated with shifted frame ids, written to a temporary folder and removed after): MB/s of wall and of CPU time,
   and the peak memory of the fxwb process. A meson benchmark, not a test. argv: FXWB [MB]. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void
rm_rf (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    {
      g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name (d)))
        {
          g_autofree char *full = g_build_filename (path, name, NULL);
          rm_rf (full);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: bench-report FXWB [MB]\n");
      return 2;
    }
  double target_mb = argc > 2 ? g_ascii_strtod (argv[2], NULL) : 200;
  const char *fixtures = g_getenv ("FX_FIXTURES");
  g_autofree char *dir = g_build_filename (fixtures ? fixtures : "tests/fixtures", "traces", "toy_graph_break-cuda",
                                           "torch_trace", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  g_autofree char *log = g_build_filename (dir, g_dir_read_name (d), NULL);
  g_autofree char *base = NULL;
  gsize base_len = 0;
  g_assert_true (g_file_get_contents (log, &base, &base_len, NULL));

  g_autofree char *tmp = g_dir_make_tmp ("fxbench-report-XXXXXX", NULL);
  g_autofree char *trace = g_build_filename (tmp, "dedicated_log_torch_trace_big.log", NULL);
  FILE *f = fopen (trace, "wb");
  g_assert_nonnull (f);
  gint64 written = 0;
  for (int copy = 0; written < target_mb * 1e6; copy++)
    {
      /* "frame_id": N -> N + 3 * copy, so every copy adds new frames and compiles. */
      GString *part = g_string_sized_new (base_len + 1024);
      const char *p = base, *end = base + base_len;
      static const char key[] = "\"frame_id\": ";
      while (p < end)
        {
          const char *hit = g_strstr_len (p, end - p, key);
          if (!hit)
            {
              g_string_append_len (part, p, end - p);
              break;
            }
          hit += strlen (key);
          g_string_append_len (part, p, hit - p);
          char *num_end = NULL;
          long v = strtol (hit, &num_end, 10);
          if (num_end == hit)
            {
              p = hit;
              continue;
            }
          g_string_append_printf (part, "%ld", v + 3L * copy);
          p = num_end;
        }
      g_assert_cmpuint (fwrite (part->str, 1, part->len, f), ==, part->len);
      written += (gint64) part->len;
      g_string_free (part, TRUE);
    }
  /* Flushed to disk before the clock starts: the kernel writing back the 200 MB this benchmark just wrote is not
     fxwb's time (on a loaded 2-core box it cost up to 2 s of the report's wall time). */
  g_assert_cmpint (fflush (f), ==, 0);
  g_assert_cmpint (fsync (fileno (f)), ==, 0);
  fclose (f);

  g_autofree char *out = g_build_filename (tmp, "report", NULL);
  const char *args[] = { argv[1], "report", "-q", trace, "-o", out, NULL };
  gint64 t0 = g_get_monotonic_time ();
  int status = 0;
  g_autoptr (GError) error = NULL;
  if (!g_spawn_sync (NULL, (char **) args, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, &error))
    g_error ("%s", error->message);
  gint64 t1 = g_get_monotonic_time ();
  struct rusage ru;
  getrusage (RUSAGE_CHILDREN, &ru);
  double wall = (double) (t1 - t0) / 1e6;
  double cpu = (double) ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec
               + ru.ru_stime.tv_usec / 1e6;
  double mb = (double) written / 1e6;
  printf ("fxwb report on %.1f MB of TORCH_TRACE: %.2f s wall (%.1f MB/s), %.2f s CPU (%.1f MB/s), "
          "peak RSS %.0f MB (exit %d)\n", mb, wall, mb / wall, cpu, mb / cpu, ru.ru_maxrss / 1024.0,
          WIFEXITED (status) ? WEXITSTATUS (status) : -1);
  rm_rf (tmp);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : 1;
}
