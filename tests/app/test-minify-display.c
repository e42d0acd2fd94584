/* test-minify-display.c: the Minify window under a display: a 48-node graph with inductor's injected relu bug is
   minified live (chart points, status), the kept nodes are highlighted on the original beside the minimized graph,
   repro.py is saved; a run is cancelled and resumed; a graph that does not fail says so. Screenshots go to
   $FXW_SCREENSHOT_DIR. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "display-util.h"
#include "fx/pyparse.h"
#include "fxw-minify-window.h"
#include "fxw-engine.h"

static fx_graph *
load_chain (void)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  g_autofree char *path = g_build_filename (dir ? dir : "tests/fixtures", "minify", "chain44.py", NULL);
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_file (path, &g, &diag) != FX_OK)
    g_error ("%s: %s", path, diag.message);
  return g;
}

static gboolean
not_running (gpointer data)
{
  return fxw_minify_window_get_state (data) != FXW_MINIFY_RUNNING;
}

static gboolean
shrunk_once (gpointer data)
{
  return fxw_minify_window_get_n_points (data) >= 2 || not_running (data);
}

static size_t
count_calls (const fx_graph *g)
{
  size_t n = 0;
  fx_graph_foreach_node (g, node)
    if (node->op == FX_OP_CALL_FUNCTION)
      n++;
  return n;
}

static void
test_minify_accuracy (void)
{
  fx_graph *g = load_chain ();
  FxwMinifyWindow *win = fxw_minify_window_new (NULL, g, "chain44.py");
  gtk_window_present (GTK_WINDOW (win));
  const char *opts[] = { "cpp.inject_relu_bug_TESTING_ONLY=accuracy", NULL };
  fxw_minify_window_configure (win, "inductor", opts, "accuracy", 60);
  fxw_minify_window_start (win);
  g_assert_cmpint (fxw_minify_window_get_state (win), ==, FXW_MINIFY_RUNNING);
  g_assert_true (fxw_test_wait (not_running, win, 300));
  if (fxw_minify_window_get_state (win) != FXW_MINIFY_DONE)
    g_error ("minify did not finish: %s", fxw_minify_window_get_status (win));
  const fx_graph *r = fxw_minify_window_get_result (win);
  g_assert_nonnull (r);
  g_assert_cmpuint (count_calls (r), <=, 3);
  g_assert_cmpuint (fxw_minify_window_get_n_points (win), >=, 3);
  /* the relu (and at most two more) highlighted on the original */
  g_assert_cmpuint (fxw_minify_window_get_n_kept (win), >=, 1);
  g_assert_cmpuint (fxw_minify_window_get_n_kept (win), <=, 3);
  g_assert_nonnull (strstr (fxw_minify_window_get_status (win), "accuracy"));
  fxw_test_pump (1500);
  g_autofree char *shot = fxw_test_screenshot (GTK_WIDGET (win), "minify-done");
  g_assert_true (g_file_test (shot, G_FILE_TEST_EXISTS));

  g_autofree char *dir = g_dir_make_tmp ("fxw-minify-save-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "repro.py", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (fxw_minify_window_save_repro (win, path, &error));
  fx_graph *back = NULL;
  g_assert_cmpint (fx_parse_fx_file (path, &back, NULL), ==, FX_OK);
  g_assert_cmpstr (back->class_name, ==, "Repro");
  fx_graph_free (back);
  g_unlink (path);
  g_rmdir (dir);
  gtk_window_destroy (GTK_WINDOW (win));
  fx_graph_free (g);
}

static void
test_cancel_resume (void)
{
  /* a cold compiler cache keeps each candidate slow enough to cancel halfway */
  g_autofree char *cache = g_dir_make_tmp ("fxw-minify-cache-XXXXXX", NULL);
  g_setenv ("FXWB_INDUCTOR_CACHE", cache, TRUE);
  fx_graph *g = load_chain ();
  FxwMinifyWindow *win = fxw_minify_window_new (NULL, g, "chain44.py");
  gtk_window_present (GTK_WINDOW (win));
  const char *opts[] = { "cpp.inject_relu_bug_TESTING_ONLY=runtime_error", NULL };
  fxw_minify_window_configure (win, "inductor", opts, "runtime-error", 60);
  fxw_minify_window_start (win);
  g_assert_true (fxw_test_wait (shrunk_once, win, 300));
  g_assert_cmpint (fxw_minify_window_get_state (win), ==, FXW_MINIFY_RUNNING);
  fxw_minify_window_cancel (win);
  g_assert_true (fxw_test_wait (not_running, win, 300));
  if (fxw_minify_window_get_state (win) != FXW_MINIFY_CANCELLED)
    g_error ("not cancelled: %s", fxw_minify_window_get_status (win));
  g_assert_null (fxw_minify_window_get_result (win));
  fxw_test_pump (300);
  g_autofree char *shot = fxw_test_screenshot (GTK_WIDGET (win), "minify-cancelled");
  g_assert_true (g_file_test (shot, G_FILE_TEST_EXISTS));
  fxw_minify_window_resume (win);
  g_assert_true (fxw_test_wait (not_running, win, 300));
  if (fxw_minify_window_get_state (win) != FXW_MINIFY_DONE)
    g_error ("resume did not finish: %s", fxw_minify_window_get_status (win));
  g_assert_cmpuint (count_calls (fxw_minify_window_get_result (win)), <=, 3);
  gtk_window_destroy (GTK_WINDOW (win));
  fx_graph_free (g);
  g_unsetenv ("FXWB_INDUCTOR_CACHE");
}

static void
test_not_failing (void)
{
  fx_graph *g = load_chain ();
  FxwMinifyWindow *win = fxw_minify_window_new (NULL, g, "chain44.py");
  gtk_window_present (GTK_WINDOW (win));
  fxw_minify_window_configure (win, "inductor", NULL, "accuracy", 60);
  fxw_minify_window_start (win);
  g_assert_true (fxw_test_wait (not_running, win, 300));
  g_assert_cmpint (fxw_minify_window_get_state (win), ==, FXW_MINIFY_NOT_FAILING);
  g_assert_nonnull (strstr (fxw_minify_window_get_status (win), "does not fail"));
  g_assert_null (fxw_minify_window_get_result (win));
  gtk_window_destroy (GTK_WINDOW (win));
  fx_graph_free (g);
}

int
main (int argc, char *argv[])
{
  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_print ("1..0 # SKIP no display\n");
      return 77;
    }
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_autofree char *fxwb = fxw_find_fxwb ();
  if (fxwb == NULL)
    {
      g_print ("1..0 # SKIP no fxwb\n");
      return 77;
    }
  g_test_add_func ("/FxwMinifyWindow/accuracy", test_minify_accuracy);
  g_test_add_func ("/FxwMinifyWindow/cancel-resume", test_cancel_resume);
  g_test_add_func ("/FxwMinifyWindow/not-failing", test_not_failing);
  return g_test_run ();
}
