/* bench-graph-canvas.c: Graph view figures on a synthetic 10,000-node graph: time to first paint, the longest
 * main-loop stall while the layout runs, frame time while panning, resident memory. Not a test: prints figures. */
#include "fx-config.h"

#include <adwaita.h>
#include <stdio.h>

#include "display-util.h"
#include "fxw-viewers.h"
#include "synthetic-graph.h"

static gint64 last_paint;
static guint n_paints;
static gint64 last_tick;
static gint64 max_gap;

static void
after_paint_cb (GdkFrameClock *clock, gpointer data)
{
  last_paint = g_get_monotonic_time ();
  n_paints++;
}

/* Runs on every main-loop turn: the largest gap between turns is how long the UI was unresponsive. */
static gboolean
idle_probe (gpointer data)
{
  gint64 now = g_get_monotonic_time ();

  if (last_tick != 0 && now - last_tick > max_gap)
    max_gap = now - last_tick;
  last_tick = now;
  return G_SOURCE_CONTINUE;
}

static gboolean
ready (gpointer data)
{
  return !fxw_graph_canvas_get_busy (data) && fxw_graph_canvas_get_n_boxes (data) > 0;
}

static gboolean
painted_after (gpointer data)
{
  return last_paint > *(gint64 *) data;
}

/* Pans n frames at the current zoom; the mean and longest frame in ms. */
static void
pan_frames (FxwGraphCanvas *canvas, int n, double *mean, double *max)
{
  double total = 0;

  *max = 0;
  for (int i = 0; i < n; i++)
    {
      gint64 start = g_get_monotonic_time ();
      double dt;

      fxw_graph_canvas_pan (canvas, (i % 20 < 10) ? -40 : 40, -25);
      fxw_test_wait (painted_after, &start, 5);
      dt = (last_paint - start) / 1e3;
      total += dt;
      *max = MAX (*max, dt);
    }
  *mean = total / n;
}

static long
rss_kb (void)
{
  g_autofree char *status = NULL;
  const char *p;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL) || (p = strstr (status, "VmRSS:")) == NULL)
    return -1;
  return strtol (p + 6, NULL, 10);
}

int
main (int argc, char *argv[])
{
  GtkWidget *window;
  GtkWidget *view;
  FxwGraphCanvas *canvas;
  g_autoptr(FxwSelection) selection = NULL;
  g_autoptr(FxwGraph) graph = NULL;
  gint64 t0, t_layout, t_paint;
  guint idle_id;
  int n_modules = argc > 1 ? atoi (argv[1]) : 100;
  int per_module = argc > 2 ? atoi (argv[2]) : 100;
  double pan_total = 0, pan_max = 0;
  const int n_pans = 60;

  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_print ("no display: skipped\n");
      return 77;
    }
  gtk_init ();
  adw_init ();
  fxw_viewers_init ();

  window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  view = fxw_graph_view_new ();
  gtk_window_set_child (GTK_WINDOW (window), view);
  canvas = fxw_graph_view_get_canvas (FXW_GRAPH_VIEW (view));
  selection = fxw_selection_new ();
  fxw_graph_view_set_selection (FXW_GRAPH_VIEW (view), selection);
  gtk_window_present (GTK_WINDOW (window));
  fxw_test_pump (300);
  g_signal_connect (gtk_widget_get_frame_clock (view), "after-paint", G_CALLBACK (after_paint_cb), NULL);

  graph = fxw_graph_new (fxw_test_synthetic_graph (n_modules, per_module), "synthetic");
  g_print ("graph: %u nodes (%d modules x %d), RSS %ld MB\n", fxw_graph_get_n_nodes (graph), n_modules, per_module,
           rss_kb () / 1024);

  idle_id = g_idle_add (idle_probe, NULL);
  t0 = g_get_monotonic_time ();
  fxw_selection_set_graph (selection, graph);
  if (!fxw_test_wait (ready, canvas, 120))
    {
      g_print ("layout did not finish in 120 s\n");
      return 1;
    }
  t_layout = g_get_monotonic_time ();
  fxw_test_wait (painted_after, &t_layout, 10);
  t_paint = last_paint;
  g_source_remove (idle_id);
  g_print ("first paint of the Graph view (collapsed at module level: %u boxes): %.3f s "
           "(layout in worker %.3f s); longest main-loop stall meanwhile %.1f ms\n",
           fxw_graph_canvas_get_n_boxes (canvas), (t_paint - t0) / 1e6,
           fxw_graph_canvas_get_layout_seconds (canvas), max_gap / 1e3);
  {
    /* what the user sees first ($FXW_SCREENSHOT_DIR, else a temporary folder) */
    g_autofree char *name = g_strdup_printf ("bench-%u-nodes-first-paint", fxw_graph_get_n_nodes (graph));
    g_autofree char *shot = fxw_test_screenshot (window, name);
    g_print ("screenshot: %s\n", shot);
  }

  /* Zoom to a legible scale, then pan: each pan is one frame. */
  fxw_graph_canvas_zoom (canvas, 1.0 / MAX (fxw_graph_canvas_get_zoom (canvas), 0.01));
  fxw_test_pump (100);
  pan_frames (canvas, n_pans, &pan_total, &pan_max);
  g_print ("panning (zoom 1.0): mean frame %.1f ms, max %.1f ms over %d frames\n", pan_total, pan_max, n_pans);

  /* Everything expanded: every node laid out (beyond DOT_MAX_BOXES by the canvas's own layered layout). */
  t0 = g_get_monotonic_time ();
  last_tick = 0;
  max_gap = 0;
  idle_id = g_idle_add (idle_probe, NULL);
  fxw_graph_canvas_expand_all (canvas);
  if (fxw_test_wait (ready, canvas, 300))
    {
      t_layout = g_get_monotonic_time ();
      fxw_test_wait (painted_after, &t_layout, 10);
      g_print ("expand all (%u boxes, %u edges): first paint %.3f s (layout %.3f s); longest stall %.1f ms\n",
               fxw_graph_canvas_get_n_boxes (canvas), fxw_graph_canvas_get_n_edges (canvas),
               (last_paint - t0) / 1e6, fxw_graph_canvas_get_layout_seconds (canvas), max_gap / 1e3);
      g_autofree char *name = g_strdup_printf ("bench-%u-nodes-expanded", fxw_graph_get_n_nodes (graph));
      g_autofree char *shot = fxw_test_screenshot (window, name);
      g_print ("screenshot: %s\n", shot);
    }
  else
    g_print ("expand all: layout still running after 300 s\n");
  g_source_remove (idle_id);

  /* Panning the expanded graph, then with a highlight set (a kernel's nodes: one module's 100) dimming the rest. */
  fxw_graph_canvas_zoom (canvas, 1.0 / MAX (fxw_graph_canvas_get_zoom (canvas), 0.01));
  fxw_test_pump (100);
  pan_frames (canvas, n_pans, &pan_total, &pan_max);
  g_print ("panning expanded (zoom 1.0): mean frame %.1f ms, max %.1f ms over %d frames\n", pan_total, pan_max,
           n_pans);
  {
    g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
    g_auto(GStrv) strv = NULL;

    for (guint i = 0; i < MIN (100, fxw_graph_get_n_nodes (graph)); i++)
      g_strv_builder_add (names, fxw_node_get_name (fxw_graph_get_node (graph, i + 1)));
    strv = g_strv_builder_end (names);
    fxw_selection_set_highlight (selection, (const char * const *) strv);
    pan_frames (canvas, n_pans, &pan_total, &pan_max);
    g_print ("panning expanded with %u nodes highlighted: mean frame %.1f ms, max %.1f ms over %d frames\n",
             fxw_selection_get_n_highlighted (selection), pan_total, pan_max, n_pans);
    fxw_selection_set_highlight (selection, NULL);
  }
  g_print ("resident memory: %ld MB\n", rss_kb () / 1024);
  gtk_window_destroy (GTK_WINDOW (window));
  return 0;
}
