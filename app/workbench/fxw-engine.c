/* fxw-engine.c: converts engine diagnostics to GError at the boundary and runs long engine calls off the main thread. */
#define G_LOG_DOMAIN "fxw-engine"

#include "fx-config.h"

#include "fxw-engine.h"

G_DEFINE_QUARK (fxw-engine-error-quark, fxw_engine_error)

GError *
fxw_engine_error_new_from_diag (const fx_diag *diag)
{
  char text[2048];
  g_autofree char *valid = NULL;

  g_return_val_if_fail (diag != NULL, NULL);

  fx_diag_format (diag, text, sizeof text);
  g_strchomp (text);
  /* The offending line of a binary file is not UTF-8; GTK only takes UTF-8. */
  valid = g_utf8_make_valid (text, -1);
  return g_error_new_literal (FXW_ENGINE_ERROR,
                              diag->code != FX_OK ? (int) diag->code : FXW_ENGINE_ERROR_INVALID,
                              valid);
}

static void
parse_worker (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  const char *path = task_data;
  fx_graph *graph = NULL;
  fx_diag diag;

  fx_diag_clear (&diag);
  if (fx_parse_fx_file (path, &graph, &diag) != FX_OK)
    {
      g_task_return_error (task, fxw_engine_error_new_from_diag (&diag));
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    {
      fx_graph_free (graph);
      return;
    }
  g_task_return_pointer (task, graph, (GDestroyNotify) fx_graph_free);
}

void
fxw_parse_fx_file_async (const char *path, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (path != NULL);

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, fxw_parse_fx_file_async);
  g_task_set_task_data (task, g_strdup (path), g_free);
  g_task_run_in_thread (task, parse_worker);
}

/* Returns: (transfer full): the graph; free with fx_graph_free() */
fx_graph *
fxw_parse_fx_file_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* A program file (a folder named fxwb, as tests/app/fxwb beside a test binary in a build tree, is not). */
static gboolean
is_program (const char *path)
{
  return path != NULL && g_file_test (path, G_FILE_TEST_IS_REGULAR) && g_file_test (path, G_FILE_TEST_IS_EXECUTABLE);
}

char *
fxw_find_fxwb (void)
{
  const char *env = g_getenv ("FXWB_PROGRAM");
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *dir = self != NULL ? g_path_get_dirname (self) : NULL;
  g_autofree char *beside = dir != NULL ? g_build_filename (dir, "fxwb", NULL) : NULL;
  g_autofree char *built = g_build_filename (FX_BUILD_ROOT, "app", "fxwb", "fxwb", NULL);

  if (env != NULL && *env)
    return g_strdup (env);
  if (is_program (beside))
    return g_steal_pointer (&beside);
  if (is_program (built))
    return g_steal_pointer (&built);
  return g_find_program_in_path ("fxwb");
}
