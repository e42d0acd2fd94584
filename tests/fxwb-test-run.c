/* fxwb-test-run.c: running fxwb from the CLI tests (see fxwb-test-run.h). */
#include "fxwb-test-run.h"

#include <glib/gstdio.h>
#include <sys/wait.h>

fxwb_run_result
fxwb_test_spawn (const char *cwd, const char *const *argv, char **envp)
{
  fxwb_run_result r = { 0 };
  g_autoptr (GError) error = NULL;
  int wait_status = 0;

  if (!g_spawn_sync (cwd, (char **) argv, envp, G_SPAWN_SEARCH_PATH, NULL, NULL, &r.out, &r.err, &wait_status,
                     &error))
    g_error ("cannot run %s: %s", argv[0], error->message);
  r.status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128;
  r.signal = WIFSIGNALED (wait_status) ? WTERMSIG (wait_status) : 0;
  return r;
}

fxwb_run_result
fxwb_test_run (const char *program, const char *const *args)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();

  g_ptr_array_add (argv, (char *) program);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add (argv, (char *) *a);
  g_ptr_array_add (argv, NULL);
  return fxwb_test_spawn (NULL, (const char *const *) argv->pdata, NULL);
}

void
fxwb_run_result_clear (fxwb_run_result *r)
{
  g_clear_pointer (&r->out, g_free);
  g_clear_pointer (&r->err, g_free);
}

void
fxwb_test_rm_rf (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    {
      g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name (d)))
        {
          g_autofree char *full = g_build_filename (path, name, NULL);
          fxwb_test_rm_rf (full);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}
