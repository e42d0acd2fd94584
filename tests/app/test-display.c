/* test-display.c: the display suite: opens fixture graphs in a real window under Xvfb, drives the views, takes screenshots. */
#include "fx-config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "fx/diff.h"
#include "fx/pyparse.h"
#include "fx/store.h"
#include "fxw-autocleanups.h"

#include "display-util.h"
#include "fxw-application.h"
#include "fxw-window.h"
#include "fxw-run-dialog.h"
#include "synthetic-graph.h"

static FxwWindow *window;

static gboolean
has_graph (gpointer data)
{
  FxwWindow *w = data;

  return fxw_window_get_document (w) != NULL && !fxw_document_get_busy (fxw_window_get_document (w))
         && fxw_selection_get_graph (fxw_window_get_selection (w)) != NULL;
}

static gboolean
not_busy (gpointer data)
{
  FxwWindow *w = data;

  return fxw_window_get_document (w) != NULL && !fxw_document_get_busy (fxw_window_get_document (w));
}

static gboolean
canvas_ready (gpointer data)
{
  FxwGraphCanvas *canvas = data;

  return !fxw_graph_canvas_get_busy (canvas) && fxw_graph_canvas_get_n_boxes (canvas) > 0;
}

static char *
fixture (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");

  return g_build_filename (dir ? dir : FX_SOURCE_ROOT "/tests/fixtures", rel, NULL);
}

static void
open_path (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);

  fxw_window_open (window, file);
  g_assert_true (fxw_test_wait (not_busy, window, 20));
  fxw_test_pump (100);
}

static guint
count_compile_dirs (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;

  if (d == NULL)
    return 0;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autofree char *readable = g_build_filename (path, "fx_graph_readable.py", NULL);

      if (g_file_test (readable, G_FILE_TEST_EXISTS))
        n++;
      else if (g_file_test (path, G_FILE_TEST_IS_DIR))
        n += count_compile_dirs (path);
    }
  return n;
}

/* The sidebar lists one compile per graph folder of the fixture traces, and a stage per graph file. */
static void
test_sidebar (void)
{
  g_autofree char *traces = fixture ("traces");
  GListModel *rows;
  guint n_frames = 0, n_compiles = 0, n_stages = 0;

  open_path (traces);
  g_assert_true (has_graph (window));
  g_assert_false (fxw_window_get_banner_visible (window));
  rows = fxw_window_get_sidebar_model (window);
  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      switch (item->kind)
        {
        case FXW_SIDEBAR_ITEM_FRAME:
          n_frames++;
          break;
        case FXW_SIDEBAR_ITEM_COMPILE:
          n_compiles++;
          g_assert_cmpstr (item->status, ==, "ok");
          break;
        case FXW_SIDEBAR_ITEM_STAGE:
          n_stages++;
          g_assert_nonnull (item->graph);
          break;
        default:
          g_assert_not_reached ();
        }
    }
  g_assert_cmpuint (n_frames, ==, 2);   /* mlp_module-cuda and toy_graph_break-cuda */
  g_assert_cmpuint (n_compiles, ==, count_compile_dirs (traces));
  g_assert_cmpuint (n_stages, >=, n_compiles);
  fxw_window_set_view (window, "table");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "01-sidebar-table"));
}

static guint sidebar_n_all;

static gboolean
sidebar_filtered (gpointer data)
{
  return g_list_model_get_n_items (G_LIST_MODEL (data)) < sidebar_n_all;
}

static gboolean
sidebar_unfiltered (gpointer data)
{
  return g_list_model_get_n_items (G_LIST_MODEL (data)) == sidebar_n_all;
}

/* Keyboard navigation walks the compiles; the sidebar search keeps matching rows and their ancestors. */
static void
test_sidebar_navigation (void)
{
  GListModel *rows = fxw_window_get_sidebar_model (window);
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwGraph *first, *second;
  guint n_all = g_list_model_get_n_items (rows);
  GtkWidget *search;

  g_assert_true (has_graph (window));
  first = fxw_selection_get_graph (selection);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.next-compile", NULL));
  fxw_test_pump (50);
  second = fxw_selection_get_graph (selection);
  g_assert_true (second != NULL && second != first);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.previous-compile", NULL));
  fxw_test_pump (50);
  g_assert_true (fxw_selection_get_graph (selection) == first);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.view", "s", "code"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.focus-search", NULL));
  search = gtk_window_get_focus (GTK_WINDOW (window));
  while (search != NULL && !GTK_IS_SEARCH_ENTRY (search))
    search = gtk_widget_get_parent (search);
  g_assert_nonnull (search);
  gtk_editable_set_text (GTK_EDITABLE (search), "model__1_");
  /* search-changed is debounced (a timeout): on a loaded machine it can take longer than any fixed pump */
  sidebar_n_all = n_all;
  g_assert_true (fxw_test_wait (sidebar_filtered, rows, 10));
  g_assert_cmpuint (g_list_model_get_n_items (rows), <, n_all);
  g_assert_cmpuint (g_list_model_get_n_items (rows), >=, 2);
  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      if (item->kind == FXW_SIDEBAR_ITEM_COMPILE)
        g_assert_nonnull (strstr (item->title, "model__1_"));
    }
  gtk_editable_set_text (GTK_EDITABLE (search), "");
  g_assert_true (fxw_test_wait (sidebar_unfiltered, rows, 10));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, n_all);
}

/* The table shows one row per node; a filter narrows it; selecting a row updates code and provenance. */
static void
test_table_selection (void)
{
  g_autofree char *path = fixture ("graphs/mlp_block.aten.0.py");
  FxwTableView *table;
  FxwCodeView *code;
  FxwProvenancePane *pane;
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwGraph *graph;
  FxwNode *node;
  guint n;

  open_path (path);
  g_assert_true (has_graph (window));
  graph = fxw_selection_get_graph (selection);
  table = FXW_TABLE_VIEW (fxw_window_get_view (window, "table"));
  code = FXW_CODE_VIEW (fxw_window_get_view (window, "code"));
  pane = FXW_PROVENANCE_PANE (fxw_window_get_view (window, "provenance"));
  n = fxw_graph_get_n_nodes (graph);
  g_assert_cmpuint (n, >, 5);
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), ==, n);
  g_assert_cmpstr (fxw_node_get_opcode (fxw_table_view_get_row (table, 0)), ==, "placeholder");

  fxw_table_view_set_filter (table, NULL, "placeholder", NULL);
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), ==, fx_graph_count_op (fxw_graph_get_graph (graph), FX_OP_PLACEHOLDER));
  fxw_table_view_set_filter (table, "addmm", NULL, NULL);
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), >=, 1);
  node = fxw_table_view_get_row (table, 0);
  g_assert_nonnull (strstr (fxw_node_get_target (node), "addmm"));

  /* Selecting the node (as a row click does) reaches the provenance pane and the code view. */
  fxw_selection_set_node (selection, node);
  fxw_test_pump (100);
  g_assert_cmpstr (fxw_provenance_pane_get_title (pane), ==, fxw_node_get_name (node));
  g_assert_cmpuint (fxw_code_view_get_cursor_line (code), ==, fxw_code_view_get_node_line (code, node));
  g_assert_cmpuint (fxw_code_view_get_node_line (code, node), >, 0);

  /* And back: a code line selects its node. */
  {
    FxwNode *first = fxw_graph_get_node (graph, n - 2);
    guint line = fxw_code_view_get_node_line (code, first);

    g_assert_cmpuint (line, >, 0);
    fxw_code_view_place_cursor (code, line);
    g_assert_true (fxw_selection_get_node (selection) == first);
  }
  fxw_selection_set_node (selection, node);
  fxw_table_view_set_filter (table, NULL, NULL, NULL);
  fxw_window_set_view (window, "table");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "02-table-selected"));
  fxw_window_set_view (window, "code");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "03-code"));
}

/* The graph canvas lays out off the main thread; clicking a box selects its node; highlights reach the table. */
static void
test_graph_canvas (void)
{
  g_autofree char *path = fixture ("traces/mlp_module-cuda");
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwGraphView *view;
  FxwGraphCanvas *canvas;
  FxwGraph *graph;
  FxwNode *target;
  double x, y;
  const char *names[3];
  FxwTableView *table = FXW_TABLE_VIEW (fxw_window_get_view (window, "table"));

  open_path (path);
  g_assert_true (has_graph (window));
  fxw_window_set_view (window, "graph");
  view = FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph"));
  canvas = fxw_graph_view_get_canvas (view);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 20));
  fxw_test_pump (200);
  graph = fxw_selection_get_graph (selection);
  g_assert_cmpuint (fxw_graph_canvas_get_n_boxes (canvas), ==, fxw_graph_get_n_nodes (graph));
  g_assert_cmpuint (fxw_graph_canvas_get_n_edges (canvas), >, 0);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "04-graph"));

  target = fxw_graph_get_node (graph, fxw_graph_get_n_nodes (graph) / 2);
  g_assert_true (fxw_graph_canvas_get_node_center (canvas, fxw_node_get_name (target), &x, &y));
  fxw_graph_canvas_click (canvas, x, y, 1);
  g_assert_true (fxw_selection_get_node (selection) == target);

  names[0] = fxw_node_get_name (target);
  names[1] = fxw_node_get_name (fxw_graph_get_node (graph, 0));
  names[2] = NULL;
  fxw_selection_set_highlight (selection, names);
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), ==, 2);
  /* Both statements, plus the provenance comments above the call. */
  g_assert_cmpuint (fxw_code_view_get_n_highlighted_lines (FXW_CODE_VIEW (fxw_window_get_view (window, "code"))), >=, 2);
  fxw_graph_canvas_zoom (canvas, 2.0);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "05-graph-selected-zoomed"));
  fxw_selection_set_highlight (selection, NULL);
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), ==, fxw_graph_get_n_nodes (graph));
}

/* A graph above the collapse threshold opens at module level; a click expands a module, a click on its title folds it. */
static void
test_graph_synthetic_modules (void)
{
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwGraphCanvas *canvas = fxw_graph_view_get_canvas (FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph")));
  g_autoptr(FxwGraph) graph = fxw_graph_new (fxw_test_synthetic_graph (20, 20), "synthetic");
  double x, y;

  g_assert_cmpuint (fxw_graph_get_n_nodes (graph), ==, 403);
  fxw_window_set_view (window, "graph");
  fxw_selection_set_graph (selection, graph);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 30));
  /* x, w, output and one box per module */
  g_assert_cmpuint (fxw_graph_canvas_get_n_boxes (canvas), ==, 23);
  g_assert_cmpuint (fxw_graph_canvas_get_n_clusters (canvas), ==, 0);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "06-graph-modules-collapsed"));

  /* The node "mm" (first of layers.0) is drawn as the collapsed module's box; clicking it expands the module. */
  g_assert_true (fxw_graph_canvas_get_node_center (canvas, "mm", &x, &y));
  fxw_graph_canvas_click (canvas, x, y, 1);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 30));
  g_assert_cmpuint (fxw_graph_canvas_get_n_boxes (canvas), ==, 23 - 1 + 20);
  g_assert_cmpuint (fxw_graph_canvas_get_n_clusters (canvas), ==, 1);
  g_assert_true (fxw_graph_canvas_get_node_center (canvas, "mm", &x, &y));
  fxw_graph_canvas_click (canvas, x, y, 1);
  g_assert_cmpstr (fxw_node_get_name (fxw_selection_get_node (selection)), ==, "mm");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "06-graph-module-expanded"));

  fxw_graph_canvas_set_collapsed (canvas, "layers.0", TRUE);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 30));
  g_assert_cmpuint (fxw_graph_canvas_get_n_boxes (canvas), ==, 23);
  fxw_selection_set_graph (selection, NULL);
}

/* A graph too long to show legibly whole: the first view shows its first rank (the inputs), not the layout's
   top-left corner (a chain of modules laid out on a diagonal showed an empty view). */
static void
test_graph_first_view (void)
{
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwGraphCanvas *canvas = fxw_graph_view_get_canvas (FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph")));
  g_autoptr(FxwGraph) graph = fxw_graph_new (fxw_test_synthetic_graph (600, 3), "long");
  double x, y;

  fxw_window_set_view (window, "graph");
  fxw_selection_set_graph (selection, graph);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 60));
  fxw_test_pump (300);
  g_assert_cmpfloat (fxw_graph_canvas_get_zoom (canvas), >=, 0.75);
  g_assert_true (fxw_graph_canvas_get_node_center (canvas, "x", &x, &y));
  g_test_message ("x at %.0f, %.0f in %d x %d", x, y, gtk_widget_get_width (GTK_WIDGET (canvas)),
                  gtk_widget_get_height (GTK_WIDGET (canvas)));
  g_assert_cmpfloat (x, >, 0);
  g_assert_cmpfloat (x, <, gtk_widget_get_width (GTK_WIDGET (canvas)));
  g_assert_cmpfloat (y, >, 0);
  g_assert_cmpfloat (y, <, gtk_widget_get_height (GTK_WIDGET (canvas)));
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "08-graph-long-first-view"));
  fxw_selection_set_graph (selection, NULL);
}

/* Beyond dot's reach (thousands of boxes) the canvas still lays out, quickly, every node with its clusters. */
static void
test_graph_huge_expanded (void)
{
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwGraphCanvas *canvas = fxw_graph_view_get_canvas (FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph")));
  g_autoptr(FxwGraph) graph = fxw_graph_new (fxw_test_synthetic_graph (40, 100), "huge");
  g_autoptr(GTimer) timer = g_timer_new ();
  double x, y;

  fxw_selection_set_graph (selection, graph);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 30));
  fxw_graph_canvas_expand_all (canvas);
  g_timer_start (timer);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 30));
  g_assert_cmpuint (fxw_graph_canvas_get_n_boxes (canvas), >=, fxw_graph_get_n_nodes (graph));
  g_assert_cmpuint (fxw_graph_canvas_get_n_clusters (canvas), ==, 40);
  g_assert_cmpfloat (g_timer_elapsed (timer, NULL), <, 10.0);
  g_assert_true (fxw_graph_canvas_get_node_center (canvas, "relu_40", &x, &y));
  fxw_graph_canvas_click (canvas, x, y, 1);
  g_assert_cmpstr (fxw_node_get_name (fxw_selection_get_node (selection)), ==, "relu_40");
  /* Zoom keeps the selected node where it is on screen. */
  {
    double x2, y2;

    fxw_test_pump (200);   /* the side pane shows the node: the canvas may change width */
    g_assert_true (fxw_graph_canvas_get_node_center (canvas, "relu_40", &x, &y));
    fxw_graph_canvas_zoom (canvas, 1.5);
    g_assert_true (fxw_graph_canvas_get_node_center (canvas, "relu_40", &x2, &y2));
    g_assert_cmpfloat (fabs (x2 - x), <, 1.0);
    g_assert_cmpfloat (fabs (y2 - y), <, 1.0);
    fxw_graph_canvas_zoom (canvas, 1 / 1.5);
  }
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "08-graph-4000-nodes-expanded"));
  /* The graph does not fit: a minimap shows it; a click on its far corner moves the view there. */
  {
    double mx, my, mw, mh, before_x, before_y, after_x, after_y;

    fxw_window_set_view (window, "graph");
    fxw_graph_canvas_zoom (canvas, 1.0 / fxw_graph_canvas_get_zoom (canvas));   /* 1:1, far larger than the view */
    fxw_test_pump (300);
    g_free (fxw_test_screenshot (GTK_WIDGET (window), "08-graph-minimap"));
    g_assert_true (fxw_graph_canvas_get_minimap (canvas, &mx, &my, &mw, &mh));
    g_assert_cmpfloat (mw, >, 10);
    g_assert_cmpfloat (mh, >, 10);
    g_assert_true (fxw_graph_canvas_get_node_center (canvas, "relu_40", &before_x, &before_y));
    fxw_graph_canvas_click (canvas, mx + mw - 2, my + mh - 2, 1);
    g_assert_cmpstr (fxw_node_get_name (fxw_selection_get_node (selection)), ==, "relu_40");   /* not a node click */
    g_assert_true (fxw_graph_canvas_get_node_center (canvas, "relu_40", &after_x, &after_y));
    g_assert_cmpfloat (fabs (after_x - before_x) + fabs (after_y - before_y), >, 100);
    fxw_graph_canvas_fit (canvas);
    fxw_test_pump (100);
    gtk_root_set_focus (GTK_ROOT (window), NULL);
    fxw_window_set_view (window, "table");
  }
  fxw_selection_set_graph (selection, NULL);
}

static void
open_location_cb (FxwProvenancePane *pane, const char *file, int line, gpointer data)
{
  char **out = data;

  *out = g_strdup_printf ("%s:%d", file, line);
}

/* A stack frame whose file exists on this machine opens at its line; one whose file is elsewhere does not. */
static void
test_provenance_open_location (void)
{
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwProvenancePane *pane = FXW_PROVENANCE_PANE (fxw_window_get_view (window, "provenance"));
  fx_graph *g = fxw_test_synthetic_graph (1, 4);
  g_autoptr(FxwGraph) graph = NULL;
  g_autofree char *opened = NULL;
  g_autofree char *expected = NULL;
  fx_node *node = fx_graph_find_node (g, "add");
  const char *here = FX_SOURCE_ROOT "/tests/app/test-display.c";

  node->meta.stack_trace = fx_arena_printf (g->arena,
                                            "  File \"/nonexistent/outer.py\", line 3, in main\n    run()\n"
                                            "  File \"%s\", line 7, in forward\n    x = x + 1\n", here);
  graph = fxw_graph_new (g, "provenance");
  fxw_selection_set_graph (selection, graph);
  fxw_selection_select_name (selection, "add");
  g_assert_cmpuint (fxw_provenance_pane_get_n_frames (pane), ==, 2);
  g_signal_connect (pane, "open-location", G_CALLBACK (open_location_cb), &opened);
  g_assert_true (fxw_provenance_pane_activate_frame (pane, 0));   /* innermost: this file */
  expected = g_strdup_printf ("%s:7", here);
  g_assert_cmpstr (opened, ==, expected);
  g_assert_false (fxw_provenance_pane_activate_frame (pane, 1));  /* not on this machine */
  g_signal_handlers_disconnect_by_func (pane, open_location_cb, &opened);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "09-provenance-open-location"));
  fxw_selection_set_graph (selection, NULL);
}

/* The demo workspace (data/demo.fxwb, imported from the fixtures' TORCH_TRACE logs by the build) is what the demo
   lookup finds; opened, the sidebar shows its frames and compiles with the store's ids and statuses, and a stage's
   graph reaches the table. */
static void
test_demo_workspace (void)
{
  g_autoptr(GFile) demo = NULL;
  g_autofree char *path = NULL;
  GListModel *rows;
  guint n_frames = 0, n_compiles = 0, n_stages = 0, n_break = 0, n_recompiled = 0, n_ok = 0;
  int first_compile = -1, stage_row = -1;
  gboolean saw_resume = FALSE;
  FxwTableView *table;
  FxwGraph *graph;

  g_unsetenv ("FXW_DEMO");
  demo = fxw_application_demo_file ();
  path = g_file_get_path (demo);
  g_assert_true (g_str_has_suffix (path, "demo.fxwb"));
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));

  open_path (path);
  g_assert_true (has_graph (window));
  rows = fxw_window_get_sidebar_model (window);
  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);
      const char *title = item->title;
      const char *status = item->status;

      switch (item->kind)
        {
        case FXW_SIDEBAR_ITEM_FRAME:
          n_frames++;
          g_assert_true (g_str_has_prefix (title, "frame "));
          break;
        case FXW_SIDEBAR_ITEM_COMPILE:
          if (n_compiles++ == 0)
            {
              first_compile = (int) i;
              g_assert_cmpstr (title, ==, "[0/0]");
              /* toy_example breaks the graph at line 7 */
              g_assert_cmpstr (status, ==, "graph-break");
              g_assert_nonnull (strstr (item->subtitle, "toy_example"));
              g_assert_nonnull (strstr (item->subtitle, "program.py:5"));
            }
          g_assert_true (title[0] == '[' && title[strlen (title) - 1] == ']');
          if (strstr (item->subtitle, "torch_dynamo_resume_in_toy_example_at_7"))
            saw_resume = TRUE;
          n_break += g_str_equal (status, "graph-break");
          n_recompiled += g_str_equal (status, "recompiled");
          n_ok += g_str_equal (status, "ok");
          break;
        case FXW_SIDEBAR_ITEM_STAGE:
          n_stages++;
          g_assert_nonnull (item->graph);
          if (stage_row < 0 && g_str_equal (title, "dynamo"))
            stage_row = (int) i;
          break;
        default:
          g_assert_not_reached ();
        }
    }
  /* `fxwb ls` of the same file: toy_graph_break frames 0, 1, 2 and mlp_module frame 0; 11 compiles. */
  g_assert_cmpuint (n_frames, ==, 4);
  g_assert_cmpuint (n_compiles, ==, 11);
  g_assert_cmpint (first_compile, ==, 1);
  g_assert_cmpuint (n_break, ==, 4);
  g_assert_cmpuint (n_recompiled, ==, 4);
  g_assert_cmpuint (n_ok, ==, 3);
  g_assert_true (saw_resume);
  g_assert_cmpuint (n_stages, >=, n_compiles);

  /* Selecting the first compile's Dynamo graph shows its nodes in the table. */
  g_assert_cmpint (stage_row, >, first_compile);
  g_assert_true (fxw_window_select_stage (window, (guint) stage_row));
  fxw_test_pump (100);
  graph = fxw_selection_get_graph (fxw_window_get_selection (window));
  g_assert_nonnull (graph);
  g_assert_nonnull (strstr (fxw_graph_get_title (graph), "[0/0]"));
  table = FXW_TABLE_VIEW (fxw_window_get_view (window, "table"));
  g_assert_cmpuint (fxw_graph_get_n_nodes (graph), >, 2);
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), ==, fxw_graph_get_n_nodes (graph));
  g_assert_cmpstr (fxw_node_get_opcode (fxw_table_view_get_row (table, 0)), ==, "placeholder");
  fxw_window_set_view (window, "table");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "10-demo-workspace"));
}

/* The Guards view of the demo's [0/1]: recompiled because [0/0]'s guard on a's size failed; its guards follow. A
   folder of FX files has no guards: the empty page. */
static void
test_demo_guards (void)
{
  g_autoptr(GFile) demo = fxw_application_demo_file ();
  g_autofree char *path = g_file_get_path (demo);
  g_autofree char *traces = fixture ("traces");
  GListModel *rows;
  int row_01 = -1;

  open_path (path);
  rows = fxw_window_get_sidebar_model (window);
  for (guint i = 0; i < g_list_model_get_n_items (rows) && row_01 < 0; i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      if (item->kind == FXW_SIDEBAR_ITEM_COMPILE
          && g_str_equal (item->title, "[0/1]"))
        row_01 = (int) i;
    }
  g_assert_cmpint (row_01, >, 0);
  g_assert_true (fxw_window_select_stage (window, (guint) row_01));
  fxw_window_set_view (window, "guards");
  fxw_test_pump (300);
  {
    g_autofree char *text = fxw_window_dup_guards_text (window);

    g_assert_nonnull (text);
    g_assert_true (g_str_has_prefix (text, "[0/1] toy_example"));
    g_assert_nonnull (strstr (text, "Recompile reasons (1)"));
    g_assert_nonnull (strstr (text, "0/0: tensor 'a' size mismatch at index 0. expected 10, actual 16"));
    g_assert_nonnull (strstr (text, "Graph breaks (1)"));
    g_assert_nonnull (strstr (text, "Guards ("));
    g_assert_nonnull (strstr (text, "TENSOR_MATCH"));
  }
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "11-demo-guards"));

  open_path (traces);
  g_assert_null (fxw_window_dup_guards_text (window));
  fxw_window_set_view (window, "table");
}

/* A corrupt file and a file that is no graph give a banner, not a crash; the window stays usable. */
static void
test_bad_files (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fxw-test-XXXXXX", NULL);
  g_autofree char *corrupt = g_build_filename (dir, "corrupt.py", NULL);
  g_autofree char *binary = g_build_filename (dir, "picture.png", NULL);
  static const char junk[] = "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4\"):\n        y = (((\n";
  static const unsigned char png[] = { 0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0xff, 0xfe };

  g_assert_true (g_file_set_contents (corrupt, junk, -1, NULL));
  g_assert_true (g_file_set_contents (binary, (const char *) png, sizeof png, NULL));

  open_path (corrupt);
  g_assert_true (fxw_window_get_banner_visible (window));
  g_assert_nonnull (strstr (fxw_window_get_banner_text (window), "corrupt.py:"));
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "07-corrupt-file-banner"));

  open_path (binary);
  g_assert_true (fxw_window_get_banner_visible (window));
  g_assert_null (fxw_selection_get_graph (fxw_window_get_selection (window)));

  /* A workspace file that is cut off after the sqlite header: a banner from the store, no crash. */
  {
    g_autofree char *ws = g_build_filename (dir, "broken.fxwb", NULL);
    char bytes[600] = "SQLite format 3";

    memset (bytes + 16, 0x5a, sizeof bytes - 16);
    g_assert_true (g_file_set_contents (ws, bytes, sizeof bytes, NULL));
    open_path (ws);
    g_assert_true (fxw_window_get_banner_visible (window));
    g_assert_null (fxw_selection_get_graph (fxw_window_get_selection (window)));
    g_test_message ("broken workspace: %s", fxw_window_get_banner_text (window));
    g_unlink (ws);
  }

  /* An sqlite file of something else (user_version 0) is refused without being touched: the store would add its
     tables to it. */
  {
    g_autofree char *db = g_build_filename (dir, "places.sqlite", NULL);
    g_autofree char *back = NULL;
    char bytes[1024] = "SQLite format 3";
    gsize len = 0;

    g_assert_true (g_file_set_contents (db, bytes, sizeof bytes, NULL));
    open_path (db);
    g_assert_true (fxw_window_get_banner_visible (window));
    g_assert_nonnull (strstr (fxw_window_get_banner_text (window), "not an FX Workbench workspace"));
    g_assert_true (g_file_get_contents (db, &back, &len, NULL));
    g_assert_cmpmem (back, len, bytes, sizeof bytes);
    g_unlink (db);
  }

  g_unlink (corrupt);
  g_unlink (binary);
  g_rmdir (dir);
}

/* ---------------------------------------------------------------- kernels, fusion, compare, import, read-only */

/* The sidebar row of stage (NULL: the compile row itself) of the compile titled compile ("[0/0]"), or -1. */
static int
find_row (const char *compile, const char *stage)
{
  GListModel *rows = fxw_window_get_sidebar_model (window);
  gboolean in_compile = FALSE;

  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);
      const char *title = item->title;

      switch (item->kind)
        {
        case FXW_SIDEBAR_ITEM_COMPILE:
          in_compile = g_str_equal (title, compile);
          if (in_compile && stage == NULL)
            return (int) i;
          break;
        case FXW_SIDEBAR_ITEM_STAGE:
          if (in_compile && stage != NULL && g_str_equal (title, stage))
            return (int) i;
          break;
        case FXW_SIDEBAR_ITEM_FRAME:
          in_compile = FALSE;
          break;
        default:
          break;
        }
    }
  return -1;
}

static void
select_row (const char *compile, const char *stage)
{
  int row = find_row (compile, stage);

  g_assert_cmpint (row, >=, 0);
  g_assert_true (fxw_window_select_stage (window, (guint) row));
  fxw_test_pump (50);
}

static void
open_demo (void)
{
  g_autoptr(GFile) demo = fxw_application_demo_file ();
  g_autofree char *path = g_file_get_path (demo);

  open_path (path);
  g_assert_true (has_graph (window));
}

static guint
count_compiles (void)
{
  GListModel *rows = fxw_window_get_sidebar_model (window);
  guint n = 0;

  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      n += item->kind == FXW_SIDEBAR_ITEM_COMPILE;
    }
  return n;
}

/* The demo's [0/0] (toy_example up to its graph break) has two Triton kernels: the sum/lt reduction and the
   abs/add/div pointwise one. Selecting the second shows its source and highlights the nodes it covers. */
static void
test_kernels_view (void)
{
  FxwKernelsView *view = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwTableView *table = FXW_TABLE_VIEW (fxw_window_get_view (window, "table"));
  FxwKernel *kernel;
  g_autofree char *source = NULL;

  open_demo ();
  select_row ("[0/0]", "dynamo");
  fxw_window_set_view (window, "kernels");
  g_assert_cmpuint (fxw_kernels_view_get_n_kernels (view), ==, 2);
  g_assert_null (fxw_kernels_view_get_selected (view));
  g_assert_cmpuint (fxw_selection_get_n_highlighted (selection), ==, 0);

  fxw_kernels_view_select (view, 1);
  kernel = fxw_kernels_view_get_selected (view);
  g_assert_nonnull (kernel);
  g_assert_cmpstr (fxw_kernel_get_name (kernel), ==, "triton_poi_fused_abs_add_div_1");
  g_assert_cmpstr (fxw_kernel_get_kind (kernel), ==, "triton");
  g_assert_cmpstr (fxw_kernel_get_device (kernel), ==, "cuda");
  g_assert_cmpuint (fxw_kernel_get_n_nodes (kernel), ==, 3);
  source = fxw_kernels_view_dup_source (view);
  g_assert_nonnull (strstr (source, "@triton.jit"));
  g_assert_nonnull (strstr (source, "def triton_poi_fused_abs_add_div_1("));
  g_assert_cmpstr (fxw_kernels_view_get_language (view), ==, "python3");

  /* abs_1, add and x of Dynamo's graph: highlighted everywhere; the table keeps only them. */
  g_assert_cmpuint (fxw_selection_get_n_highlighted (selection), ==, 3);
  g_assert_true (fxw_selection_is_highlighted (selection, "abs_1"));
  g_assert_true (fxw_selection_is_highlighted (selection, "add"));
  g_assert_true (fxw_selection_is_highlighted (selection, "x"));
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), ==, 3);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "12-kernels-view"));
}

/* A covered node's link selects the node (table, graph, provenance follow the selection); a node selected elsewhere
   marks the kernel computing it; from a later stage, the link goes back to Dynamo's graph. */
static void
test_kernel_node_links (void)
{
  FxwKernelsView *view = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwProvenancePane *pane = FXW_PROVENANCE_PANE (fxw_window_get_view (window, "provenance"));
  FxwKernel *kernel;

  kernel = fxw_kernels_view_get_selected (view);
  g_assert_nonnull (kernel);
  g_assert_true (fxw_kernels_view_activate_node (view, "add"));
  g_assert_cmpstr (fxw_node_get_name (fxw_selection_get_node (selection)), ==, "add");
  g_assert_cmpstr (fxw_provenance_pane_get_title (pane), ==, "add");
  g_assert_false (fxw_kernels_view_activate_node (view, "sum_1"));   /* not a node of this kernel */

  /* "Which kernel did my node end up in": sum_1 is in the reduction kernel only. */
  g_assert_true (fxw_selection_select_name (selection, "sum_1"));
  g_assert_cmpuint (fxw_kernels_view_get_n_marked (view), ==, 1);
  {
    g_autoptr(GtkTreeListRow) row = g_list_model_get_item (fxw_window_get_sidebar_model (window),
                                                           (guint) find_row ("[0/0]", "dynamo"));
    g_autoptr(FxwSidebarItem) stage = gtk_tree_list_row_get_item (row);
    GListModel *kernels = stage->kernels;
    g_autoptr(FxwKernel) first = g_list_model_get_item (kernels, 0);
    g_autoptr(FxwKernel) second = g_list_model_get_item (kernels, 1);

    g_assert_true (fxw_kernel_get_marked (first));
    g_assert_false (fxw_kernel_get_marked (second));
  }
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "12-kernels-node-marked"));
  /* A placeholder is computed by no kernel. */
  g_assert_true (fxw_selection_select_name (selection, "l_a_"));
  g_assert_cmpuint (fxw_kernels_view_get_n_marked (view), ==, 0);

  /* post_grad reuses Dynamo's names for other nodes: names alone do not match there, the link switches graphs. */
  select_row ("[0/0]", "post_grad");
  g_assert_nonnull (strstr (fxw_graph_get_title (fxw_selection_get_graph (selection)), "post_grad"));
  g_assert_true (fxw_kernels_view_get_selected (view) == kernel);
  g_assert_true (fxw_kernels_view_activate_node (view, "x"));
  g_assert_nonnull (strstr (fxw_graph_get_title (fxw_selection_get_graph (selection)), "dynamo"));
  g_assert_cmpstr (fxw_node_get_name (fxw_selection_get_node (selection)), ==, "x");
  g_assert_cmpuint (fxw_selection_get_n_highlighted (selection), ==, 3);
}

/* The Fusion toggle colours each node by its kernel, with a legend; hovering names the kernel. */
static void
test_fusion_overlay (void)
{
  FxwGraphView *view = FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph"));
  FxwGraphCanvas *canvas = fxw_graph_view_get_canvas (view);
  FxwKernelsView *kernels = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));
  g_autofree char *tip = NULL;

  open_demo ();
  select_row ("[0/0]", "dynamo");
  fxw_window_set_view (window, "graph");
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 20));
  fxw_graph_view_set_fusion_overlay (view, TRUE);
  g_assert_true (fxw_graph_canvas_get_show_fusion (canvas));
  g_assert_cmpuint (fxw_graph_canvas_get_n_fusion_groups (canvas), ==, 2);
  g_assert_cmpint (fxw_graph_canvas_get_node_kernel (canvas, "sum_1"), ==, 0);
  g_assert_cmpint (fxw_graph_canvas_get_node_kernel (canvas, "lt"), ==, 0);
  g_assert_cmpint (fxw_graph_canvas_get_node_kernel (canvas, "add"), ==, 1);
  g_assert_cmpint (fxw_graph_canvas_get_node_kernel (canvas, "l_a_"), ==, -1);
  tip = fxw_graph_canvas_dup_tooltip (canvas, "abs_1");
  g_assert_nonnull (tip);
  g_assert_nonnull (strstr (tip, "triton_poi_fused_abs_add_div_1"));
  g_assert_true (fxw_kernels_view_get_selected (kernels) == NULL);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "13-fusion-overlay-toy"));

  /* The MLP's forward: seven kernels over layer norms, linears, GELU and softmax. */
  select_row ("[0/0]", "dynamo");
  {
    int mlp = -1;
    GListModel *rows = fxw_window_get_sidebar_model (window);

    for (guint i = 0; i < g_list_model_get_n_items (rows) && mlp < 0; i++)
      {
        g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
        g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

        if (item->kind == FXW_SIDEBAR_ITEM_COMPILE
            && strstr (item->subtitle, "forward") != NULL)
          mlp = (int) i + 1;   /* its first stage */
      }
    g_assert_cmpint (mlp, >, 0);
    g_assert_true (fxw_window_select_stage (window, (guint) mlp));
  }
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 20));
  g_assert_cmpuint (fxw_graph_canvas_get_n_fusion_groups (canvas), >=, 5);
  g_assert_cmpint (fxw_graph_canvas_get_node_kernel (canvas, "gelu"), >=, 0);
  fxw_graph_canvas_fit (canvas);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "13-fusion-overlay-mlp"));
  /* Seven kernels make a legend taller than the toolbar row: Fit keeps every node below it. */
  {
    FxwGraph *graph = fxw_selection_get_graph (fxw_window_get_selection (window));
    double legend = fxw_graph_canvas_get_legend_bottom (canvas), x, y;

    g_assert_cmpfloat (legend, >, 74);
    for (guint i = 0; i < fxw_graph_get_n_nodes (graph); i++)
      {
        g_assert_true (fxw_graph_canvas_get_node_center (canvas, fxw_node_get_name (fxw_graph_get_node (graph, i)),
                                                         &x, &y));
        g_assert_cmpfloat (y, >, legend + 8);
      }
  }

  fxw_graph_view_set_fusion_overlay (view, FALSE);
  g_assert_false (fxw_graph_canvas_get_show_fusion (canvas));
}

/* Selecting a kernel highlights all the nodes it covers at once, through the shared selection: the table marks
   their rows (and by default shows only them), the canvas fills and outlines their boxes and dims the rest, the
   code view marks their lines. Dropping the kernel clears it everywhere. */
static void
test_kernel_highlight (void)
{
  FxwKernelsView *kernels = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwTableView *table = FXW_TABLE_VIEW (fxw_window_get_view (window, "table"));
  FxwCodeView *code = FXW_CODE_VIEW (fxw_window_get_view (window, "code"));
  FxwGraphCanvas *canvas = fxw_graph_view_get_canvas (FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph")));
  FxwGraph *graph;
  static const char *covered[] = { "x", "abs_1", "add" };

  open_demo ();
  select_row ("[0/0]", "dynamo");
  graph = fxw_selection_get_graph (selection);
  fxw_window_set_view (window, "kernels");
  fxw_kernels_view_select (kernels, 1);   /* triton_poi_fused_abs_add_div_1 */
  g_assert_cmpstr (fxw_kernel_get_name (fxw_kernels_view_get_selected (kernels)), ==,
                   "triton_poi_fused_abs_add_div_1");
  g_assert_cmpuint (fxw_selection_get_n_highlighted (selection), ==, 3);
  for (guint i = 0; i < G_N_ELEMENTS (covered); i++)
    g_assert_true (fxw_node_get_highlighted (fxw_graph_lookup (graph, covered[i])));
  g_assert_false (fxw_node_get_highlighted (fxw_graph_lookup (graph, "sum_1")));

  /* Table: every row shown, the three marked; then only them. */
  fxw_table_view_set_highlighted_only (table, FALSE);
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), ==, fxw_graph_get_n_nodes (graph));
  g_assert_cmpuint (fxw_table_view_get_n_marked_rows (table), ==, 3);
  fxw_window_set_view (window, "table");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "14-kernel-highlight-table"));
  fxw_table_view_set_highlighted_only (table, TRUE);
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), ==, 3);
  g_assert_cmpuint (fxw_table_view_get_n_marked_rows (table), ==, 3);

  /* Graph: the three boxes. */
  fxw_window_set_view (window, "graph");
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 20));
  g_assert_cmpuint (fxw_graph_canvas_get_n_highlighted_boxes (canvas), ==, 3);
  fxw_graph_canvas_fit (canvas);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "14-kernel-highlight-graph"));

  /* Code: a line per statement at least (x is a placeholder: its parameter line). */
  g_assert_cmpuint (fxw_code_view_get_n_highlighted_lines (code), >=, 3);
  fxw_window_set_view (window, "code");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "14-kernel-highlight-code"));

  /* No kernel: no highlight anywhere. */
  fxw_kernels_view_select (kernels, G_MAXUINT);
  g_assert_null (fxw_kernels_view_get_selected (kernels));
  g_assert_cmpuint (fxw_selection_get_n_highlighted (selection), ==, 0);
  g_assert_false (fxw_node_get_highlighted (fxw_graph_lookup (graph, "abs_1")));
  g_assert_cmpuint (fxw_table_view_get_n_rows (table), ==, fxw_graph_get_n_nodes (graph));
  g_assert_cmpuint (fxw_table_view_get_n_marked_rows (table), ==, 0);
  g_assert_cmpuint (fxw_graph_canvas_get_n_highlighted_boxes (canvas), ==, 0);
  g_assert_cmpuint (fxw_code_view_get_n_highlighted_lines (code), ==, 0);
}

/* The sidebar row of the MLP's compile [0/0] stage (its trace is the demo's second). */
static int
find_mlp_row (const char *stage)
{
  GListModel *rows = fxw_window_get_sidebar_model (window);
  gboolean in_mlp = FALSE;

  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      if (item->kind == FXW_SIDEBAR_ITEM_COMPILE)
        in_mlp = g_str_equal (item->title, "[0/0]")
                 && strstr (item->subtitle, "forward") != NULL;
      else if (item->kind == FXW_SIDEBAR_ITEM_STAGE && in_mlp
               && g_str_equal (item->title, stage))
        return (int) i;
    }
  return -1;
}

/* The MLP's TORCH_COMPILE_DEBUG folder (imported with its trace into the demo, linked to [0/0]) has 13 top-level
   scheduler nodes in ir_post_fusion.txt: drawn as 13 clusters on the post-grad graph, each holding the post-grad
   nodes its launch computes (from inductor_provenance_tracking_node_mappings.json). A node two launches compute
   (add_3 and add_tensor_2: op7_op8_op10 and op14) is drawn in the first. On Dynamo's graph the overlay says where
   the groups are. The debug folder's own compiles are not listed again. */
static void
test_fusion_clusters (void)
{
  FxwGraphView *view = FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph"));
  FxwGraphCanvas *canvas = fxw_graph_view_get_canvas (view);
  static const struct { const char *group; int members; } expected[] = {
    { "op0_op1_op3", 7 }, { "op4", 1 }, { "op5", 6 }, { "op6", 1 }, { "op7_op8_op10", 9 }, { "op11", 1 },
    { "op12", 6 }, { "op13", 1 }, { "op14", 2 }, { "op15", 2 }, { "op16", 2 }, { "op17", 1 },
    { "op18_op19_op20", 5 },
  };
  g_autofree char *tip = NULL;
  int row;

  open_demo ();
  g_assert_cmpint (find_row ("[-/0]", NULL), <, 0);
  row = find_mlp_row ("post_grad");
  g_assert_cmpint (row, >=, 0);
  g_assert_true (fxw_window_select_stage (window, (guint) row));
  fxw_window_set_view (window, "graph");
  fxw_graph_view_set_fusion_overlay (view, TRUE);
  fxw_test_pump (50);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 30));
  g_assert_null (fxw_graph_canvas_get_fusion_note (canvas));
  g_assert_cmpuint (fxw_graph_canvas_get_n_fusion_clusters (canvas), ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_test_message ("%s", expected[i].group);
      g_assert_cmpint (fxw_graph_canvas_get_fusion_cluster_members (canvas, expected[i].group), ==,
                       expected[i].members);
    }
  g_assert_cmpint (fxw_graph_canvas_get_fusion_cluster_members (canvas, "op99"), ==, -1);
  tip = fxw_graph_canvas_dup_tooltip (canvas, "add_3");
  g_assert_nonnull (tip);
  g_assert_nonnull (strstr (tip, "op7_op8_op10"));
  g_assert_nonnull (strstr (tip, "op14"));
  fxw_graph_canvas_fit (canvas);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "15-fusion-clusters-mlp"));
  fxw_graph_canvas_zoom (canvas, 2.5);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "15-fusion-clusters-mlp-zoomed"));

  /* Off: no group clusters. */
  fxw_graph_view_set_fusion_overlay (view, FALSE);
  fxw_test_pump (50);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 30));
  g_assert_cmpuint (fxw_graph_canvas_get_n_fusion_clusters (canvas), ==, 0);

  /* Dynamo's graph: the groups are named by post-grad nodes; the overlay says so. */
  row = find_mlp_row ("dynamo");
  g_assert_cmpint (row, >=, 0);
  g_assert_true (fxw_window_select_stage (window, (guint) row));
  fxw_graph_view_set_fusion_overlay (view, TRUE);
  fxw_test_pump (50);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 30));
  g_assert_cmpuint (fxw_graph_canvas_get_n_fusion_clusters (canvas), ==, 0);
  g_assert_nonnull (fxw_graph_canvas_get_fusion_note (canvas));
  g_assert_nonnull (strstr (fxw_graph_canvas_get_fusion_note (canvas), "post-grad"));
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "15-fusion-note-dynamo"));
  fxw_graph_view_set_fusion_overlay (view, FALSE);

  /* The debug folder opened alone: its first compile (model__0_inference_0.0) holds the same 13 groups, drawn on
     fx_graph_transformed.py, the stage inductor_transformed. */
  {
    g_autofree char *folder = fixture ("traces/mlp_module-cuda/torch_compile_debug");

    open_path (folder);
    row = find_row ("[-/0]", "inductor_transformed");
    g_assert_cmpint (row, >=, 0);
    g_assert_true (fxw_window_select_stage (window, (guint) row));
    fxw_graph_view_set_fusion_overlay (view, TRUE);
    fxw_test_pump (50);
    g_assert_true (fxw_test_wait (canvas_ready, canvas, 30));
    g_assert_null (fxw_graph_canvas_get_fusion_note (canvas));
    g_assert_cmpuint (fxw_graph_canvas_get_n_fusion_clusters (canvas), ==, G_N_ELEMENTS (expected));
    g_assert_cmpint (fxw_graph_canvas_get_fusion_cluster_members (canvas, "op0_op1_op3"), ==, 7);
    fxw_graph_view_set_fusion_overlay (view, FALSE);
  }
}

/* Copies the demo workspace into dir (the original is a build output). */
static char *
copy_demo (const char *dir, const char *name)
{
  g_autoptr(GFile) demo = fxw_application_demo_file ();
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GFile) copy = g_file_new_for_path (path);

  g_assert_true (g_file_copy (demo, copy, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, NULL));
  return g_steal_pointer (&path);
}

/* Runs stored with fx_store_add_run against [0/0]'s Dynamo graph show side by side, timed against the first;
   kernel times stored as metrics reach the Kernels view. */
static void
test_compare_view (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fxw-compare-XXXXXX", NULL);
  g_autofree char *ws = copy_demo (dir, "runs.fxwb");
  FxwCompareView *view = FXW_COMPARE_VIEW (fxw_window_get_view (window, "compare"));
  fx_store *store = NULL;
  fx_diag diag;
  int64_t compile_row = 0;
  g_autoptr(fx_arena) arena = fx_arena_new ();
  fx_store_graph_info *graphs = NULL;
  fx_store_run_row *back = NULL;
  size_t n_graphs = 0, n_back = 0;
  /* accuracy: the largest absolute error against the reference, as fxwb run/compare store it */
  fx_store_run eager = { "eager", "default", "{}", "cpu", NULL, 0.0, 2.0, 1.8, 2.6, 0.0, 1 << 20 };
  fx_store_run inductor = { "inductor", "default", "{\"max_autotune\": false}", "cpu", NULL, 812.5, 1.0, 0.9, 1.3,
                            2.5e-7, 3 << 20 };
  FxwKernelsView *kernels = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));
  fx_store_run broken = { "inductor", "max-autotune", "{\"max_autotune\": true}", "cpu",
                          "RuntimeError: generated code did not compile", -1, -1, -1, -1, -1, -1 };

  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (ws, false, &store, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_find_compile (store, "0/0", &compile_row, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_list_graphs (store, compile_row, arena, &graphs, &n_graphs, &diag), ==, FX_OK);
  g_assert_cmpuint (n_graphs, >, 0);
  g_assert_cmpstr (graphs[0].stage, ==, "dynamo");
  g_assert_cmpint (fx_store_begin (store, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_run (store, graphs[0].id, &eager, NULL, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_run (store, graphs[0].id, &inductor, NULL, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_run (store, graphs[0].id, &broken, NULL, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_add_metric (store, compile_row, "kernel_ms.triton_poi_fused_abs_add_div_1", "0.0123",
                                        &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_commit (store, &diag), ==, FX_OK);
  /* The reader gives back what was written, in order; an unmeasured time reads as stored (-1). */
  g_assert_cmpint (fx_store_list_runs (store, graphs[0].id, arena, &back, &n_back, &diag), ==, FX_OK);
  g_assert_cmpuint (n_back, ==, 3);
  g_assert_cmpstr (back[1].backend, ==, "inductor");
  g_assert_cmpfloat (back[1].compile_ms, ==, 812.5);
  g_assert_cmpint (back[1].peak_bytes, ==, 3 << 20);
  g_assert_cmpstr (back[2].error, ==, "RuntimeError: generated code did not compile");
  g_assert_null (back[2].verdict);   /* a schema without the verdict column reads it as NULL */
  g_assert_cmpint (fx_store_list_runs (store, graphs[1].id, arena, &back, &n_back, &diag), ==, FX_OK);
  g_assert_cmpuint (n_back, ==, 0);
  fx_store_close (store);

  open_path (ws);
  select_row ("[0/0]", "dynamo");
  fxw_window_set_view (window, "compare");
  g_assert_cmpuint (fxw_compare_view_get_n_runs (view), ==, 3);
  g_assert_cmpfloat_with_epsilon (fxw_compare_view_get_speedup (view, 0), 1.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (fxw_compare_view_get_speedup (view, 1), 2.0, 1e-9);
  g_assert_true (isnan (fxw_compare_view_get_speedup (view, 2)));
  {
    g_autofree char *row0 = fxw_compare_view_dup_row_text (view, 0);
    g_autofree char *row1 = fxw_compare_view_dup_row_text (view, 1);
    g_autofree char *row2 = fxw_compare_view_dup_row_text (view, 2);

    g_assert_true (g_str_has_prefix (row0, "dynamo\teager\tdefault\tcpu\t"));
    g_assert_nonnull (strstr (row0, "\tbaseline\t"));
    g_test_message ("row1: %s", row1);
    /* (the kernel count between them is unknown to this schema; schema 3 stores 0 for the zero-filled field) */
    g_assert_nonnull (strstr (row1, "\t812.5 ms\t1.000 ms\t900.0 µs\t1.300 ms\t2.00×\t2.5e-07\t"));
    g_assert_nonnull (strstr (row1, "\t3.0\xc2\xa0MiB\tfaster\t"));
    g_assert_nonnull (strstr (row2, "\tfailed\tRuntimeError: generated code did not compile"));
    g_assert_null (fxw_compare_view_dup_row_text (view, 3));
  }
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "14-compare-runs"));

  /* The runs belong to the compile: another of its stages shows them too; another compile has none, and the empty
     page says how to make some. */
  select_row ("[0/0]", "post_grad");
  g_assert_cmpuint (fxw_compare_view_get_n_runs (view), ==, 3);
  select_row ("[0/0]", "dynamo");
  fxw_kernels_view_select (kernels, 1);
  g_assert_cmpfloat_with_epsilon (fxw_kernel_get_time_ms (fxw_kernels_view_get_selected (kernels)), 0.0123, 1e-9);
  fxw_kernels_view_select (kernels, 0);
  g_assert_true (isnan (fxw_kernel_get_time_ms (fxw_kernels_view_get_selected (kernels))));
  select_row ("[0/1]", "dynamo");
  g_assert_cmpuint (fxw_compare_view_get_n_runs (view), ==, 0);
  fxw_test_pump (200);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "14-compare-empty"));

  /* Two kernels of one name (attention_block's two extern addmm) each show their own time, not the last one's. */
  {
    guint n_before = fxw_kernels_view_get_n_kernels (kernels);
    int64_t row1 = -1;

    fxw_window_set_view (window, "table");
    open_demo ();
    g_assert_cmpint (fx_store_open (ws, false, &store, &diag), ==, FX_OK);
    g_assert_cmpint (fx_store_find_compile (store, "0/1", &row1, &diag), ==, FX_OK);
    g_assert_cmpint (fx_store_begin (store, &diag), ==, FX_OK);
    g_assert_cmpint (fx_store_add_kernel (store, row1, (int) n_before, (int) n_before, "extern_addmm", "extern",
                                          "cpu", NULL, "addmm", NULL, &diag), ==, FX_OK);
    g_assert_cmpint (fx_store_add_kernel (store, row1, (int) n_before + 1, (int) n_before + 1, "extern_addmm",
                                          "extern", "cpu", NULL, "addmm_1", NULL, &diag), ==, FX_OK);
    {
      g_autofree char *k0 = g_strdup_printf ("kernel_ms.%u.extern_addmm", n_before);
      g_autofree char *k1 = g_strdup_printf ("kernel_ms.%u.extern_addmm", n_before + 1);

      g_assert_cmpint (fx_store_add_metric (store, row1, k0, "695.0", &diag), ==, FX_OK);
      g_assert_cmpint (fx_store_add_metric (store, row1, k1, "258.0", &diag), ==, FX_OK);
    }
    g_assert_cmpint (fx_store_commit (store, &diag), ==, FX_OK);
    fx_store_close (store);
    open_path (ws);
    select_row ("[0/1]", "dynamo");
    fxw_window_set_view (window, "kernels");
    g_assert_cmpuint (fxw_kernels_view_get_n_kernels (kernels), ==, n_before + 2);
    fxw_kernels_view_select (kernels, n_before);
    g_assert_cmpfloat_with_epsilon (fxw_kernel_get_time_ms (fxw_kernels_view_get_selected (kernels)), 695.0, 1e-9);
    fxw_kernels_view_select (kernels, n_before + 1);
    g_assert_cmpfloat_with_epsilon (fxw_kernel_get_time_ms (fxw_kernels_view_get_selected (kernels)), 258.0, 1e-9);
  }

  fxw_window_set_view (window, "table");
  open_demo ();
  g_unlink (ws);
  {
    g_autofree char *wal = g_strconcat (ws, "-wal", NULL);
    g_autofree char *shm = g_strconcat (ws, "-shm", NULL);

    g_unlink (wal);
    g_unlink (shm);
  }
  g_rmdir (dir);
}

/* Opening a TORCH_TRACE log imports it off the main thread into a cache workspace, then opens that; the log's
   warnings (md5 mismatches of this PyTorch build) make a partial import shown in the banner. */
static void
test_import_trace (void)
{
  g_autofree char *log = fixture ("traces/toy_graph_break-cuda/torch_trace/dedicated_log_torch_trace_2txnzdhg.log");
  g_autofree char *pt2 = fixture ("export/small_module.pt2");
  g_autofree char *logs_text = fixture ("traces/mlp_module-cuda/torch_logs.txt");
  FxwDocument *document;
  const char *ws;
  FxwKernelsView *kernels = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));

  open_path (log);
  document = fxw_window_get_document (window);
  g_assert_true (has_graph (window));
  ws = fxw_document_get_workspace_path (document);
  g_assert_nonnull (ws);
  g_assert_true (g_str_has_prefix (ws, g_get_user_cache_dir ()));
  g_assert_true (g_str_has_suffix (ws, ".fxwb"));
  g_assert_false (fxw_document_get_read_only (document));
  /* toy_graph_break: frames 0, 1 and 2 with their recompiles */
  g_assert_cmpuint (count_compiles (), ==, 9);
  g_assert_cmpint (find_row ("[0/0]", "dynamo"), >, 0);
  select_row ("[0/0]", "dynamo");
  g_assert_cmpuint (fxw_kernels_view_get_n_kernels (kernels), ==, 2);
  g_assert_true (fxw_window_get_banner_visible (window));
  g_assert_nonnull (strstr (fxw_window_get_banner_text (window), "with warnings"));
  g_assert_nonnull (strstr (fxw_window_get_banner_text (window), "md5"));
  fxw_window_set_view (window, "table");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "15-import-trace"));
  /* Dismiss hides the import warnings, and they stay hidden while the user works in that document. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.dismiss-error", NULL));
  fxw_test_pump (50);
  g_assert_false (fxw_window_get_banner_visible (window));
  select_row ("[0/1]", "dynamo");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.next-compile", NULL));
  fxw_test_pump (50);
  g_assert_false (fxw_window_get_banner_visible (window));

  /* A TORCH_COMPILE_DEBUG run folder: one compile per model__N folder, with the kernels of its output_code.py. */
  {
    g_autofree char *run = fixture ("traces/toy_graph_break-cuda/torch_compile_debug/"
                                    "run_2026_11_21_16_41_15_749790-pid_1273");

    open_path (run);
    g_assert_true (has_graph (window));
    g_assert_nonnull (fxw_document_get_workspace_path (fxw_window_get_document (window)));
    g_assert_cmpuint (count_compiles (), ==, 9);
    select_row ("[-/0]", "aot_inference");
    g_assert_cmpuint (fxw_kernels_view_get_n_kernels (kernels), ==, 2);
  }

  /* A .pt2 archive: its exported graph. */
  open_path (pt2);
  g_assert_true (has_graph (window));
  g_assert_nonnull (fxw_document_get_workspace_path (fxw_window_get_document (window)));
  g_assert_cmpuint (count_compiles (), ==, 1);

  /* TORCH_LOGS text: its compiles, graphs and kernels (mlp_module: one frame, one compile) */
  open_path (logs_text);
  g_assert_true (has_graph (window));
  g_assert_nonnull (fxw_document_get_workspace_path (fxw_window_get_document (window)));
  g_assert_cmpuint (count_compiles (), >=, 1);
  g_assert_cmpint (find_row ("[0/0]", "dynamo"), >, 0);
  select_row ("[0/0]", "dynamo");
  g_assert_cmpuint (fxw_kernels_view_get_n_kernels (kernels), >, 0);
}

/* A real torch 2.11 trace with graph breaks and recompiles: compiles that stopped at a break before any op have no
   graph, and are listed all the same; selecting one shows why (the break's reason and user line) in the Guards
   view; the recompile reasons (`n == 2`, `G['USE_RELU'] == True`) are there for their compiles. */
static void
test_breaks_and_recompiles (void)
{
  g_autofree char *log = fixture ("traces/breaks_recompiles-cpu/torch_trace/dedicated_log_torch_trace_1pjq7k53.log");
  AdwViewStack *stack;

  open_path (log);
  g_assert_true (has_graph (window));
  /* 17 compiles: [0/0], [6/0], [6/1] and [6/2] broke before any op. */
  g_assert_cmpuint (count_compiles (), ==, 17);
  g_assert_cmpint (find_row ("[0/0]", NULL), >=, 0);
  g_assert_cmpint (find_row ("[6/1]", NULL), >=, 0);
  select_row ("[0/0]", NULL);
  stack = ADW_VIEW_STACK (gtk_widget_get_ancestor (fxw_window_get_view (window, "guards"), ADW_TYPE_VIEW_STACK));
  g_assert_cmpstr (adw_view_stack_get_visible_child_name (stack), ==, "guards");
  g_assert_null (fxw_selection_get_graph (fxw_window_get_selection (window)));
  {
    g_autofree char *text = fxw_window_dup_guards_text (window);

    g_assert_nonnull (text);
    g_assert_nonnull (strstr (text, "print"));
    g_test_message ("%s", text);
    g_assert_nonnull (strstr (text, "breaks_recompiles.py:8"));
  }
  fxw_test_pump (200);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "16-graph-break-without-graph"));
  /* A restart is the same function as the attempt before it; what the trace does not say is left out, not "?". */
  select_row ("[0/0_1]", NULL);
  {
    g_autofree char *text = fxw_window_dup_guards_text (window);

    g_assert_nonnull (text);
    g_assert_true (g_str_has_prefix (text, "[0/0_1] starts_with_break  /work/main/.devscratch/breaks_recompiles.py:7"));
    g_assert_null (strstr (text, "?:-1"));
  }
  select_row ("[3/1]", NULL);
  {
    g_autofree char *text = fxw_window_dup_guards_text (window);

    g_assert_nonnull (strstr (text, "n == 2"));
  }
  select_row ("[2/1]", NULL);
  {
    g_autofree char *text = fxw_window_dup_guards_text (window);

    g_assert_nonnull (strstr (text, "G['USE_RELU'] == True"));
  }
  /* Back on a compile with a graph, the graph is shown again. */
  select_row ("[3/1]", "dynamo");
  g_assert_nonnull (fxw_selection_get_graph (fxw_window_get_selection (window)));
  open_demo ();
}

static gboolean
run_done (gpointer data)
{
  return !fxw_run_dialog_get_running (FXW_RUN_DIALOG (data));
}

/* Run & Compare from the window: options are checked as the CLI checks them before anything runs; the chosen
   columns run in fxwb processes with progress; the runs land in the workspace and the window comes back on the same
   compile and stage, in the Compare view, with one row per column; Cancel stops a run. */
static void
test_run_compare (void)
{
  g_autofree char *log = fixture ("traces/breaks_recompiles-cpu/torch_trace/dedicated_log_torch_trace_1pjq7k53.log");
  FxwCompareView *view = FXW_COMPARE_VIEW (fxw_window_get_view (window, "compare"));
  FxwRunDialog *dialog;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) specs = NULL;
  guint n_before;

  open_path (log);
  select_row ("[3/1]", "dynamo");
  n_before = fxw_compare_view_get_n_runs (view);
  dialog = g_object_ref (fxw_window_run_compare (window));
  specs = fxw_run_dialog_dup_specs (dialog);
  g_assert_true (g_strv_contains ((const char * const *) specs, "eager"));
  g_assert_true (g_strv_contains ((const char * const *) specs, "inductor"));
  g_assert_true (fxw_run_dialog_set_column (dialog, "aot_eager", FALSE, NULL, NULL));
  g_assert_true (fxw_run_dialog_set_column (dialog, "inductor", TRUE, NULL, "no_such_option=1"));
  fxw_run_dialog_set_repeat (dialog, 2);
  /* A wrong option is refused with the CLI's (PyTorch's) message, and nothing runs. */
  g_assert_false (fxw_run_dialog_start (dialog, &error));
  g_assert_nonnull (strstr (error->message, "Unexpected optimization option no_such_option"));
  g_assert_false (fxw_run_dialog_get_running (dialog));
  g_clear_error (&error);
  /* Mode and options together: PyTorch's rule. */
  g_assert_true (fxw_run_dialog_set_column (dialog, "inductor", TRUE, "max-autotune", "cpp.threads=1"));
  g_assert_false (fxw_run_dialog_start (dialog, &error));
  g_assert_nonnull (strstr (error->message, "Either mode or options can be specified"));
  g_clear_error (&error);

  g_assert_true (fxw_run_dialog_set_column (dialog, "inductor", TRUE, NULL, "cpp.threads=1, max_autotune=True"));
  g_assert_true (fxw_run_dialog_start (dialog, &error));
  g_assert_no_error (error);
  if (!fxw_run_dialog_get_running (dialog))
    g_error ("Run & Compare stopped at once: %s", fxw_run_dialog_get_log (dialog));
  fxw_test_pump (100);
  g_free (fxw_test_screenshot (GTK_WIDGET (dialog), "17-run-compare-dialog"));
  g_assert_true (fxw_test_wait (run_done, dialog, 120));
  g_test_message ("%s", fxw_run_dialog_get_log (dialog));
  g_assert_nonnull (strstr (fxw_run_dialog_get_log (dialog), "eager: ran, matches the reference"));
  g_assert_nonnull (strstr (fxw_run_dialog_get_log (dialog), "inductor,cpp.threads=1,max_autotune=True: ran, matches the reference"));
  g_assert_cmpfloat (fxw_run_dialog_get_progress (dialog), ==, 1.0);
  /* The window reopened the workspace on [3/1] dynamo, in the Compare view. */
  g_assert_true (fxw_test_wait (not_busy, window, 20));
  fxw_test_pump (200);
  g_assert_cmpuint (fxw_compare_view_get_n_runs (view), ==, n_before + 2);
  {
    g_autofree char *last = fxw_compare_view_dup_row_text (view, n_before + 1);

    g_test_message ("row: %s", last);
    g_assert_true (g_str_has_prefix (last, "dynamo\tinductor,cpp.threads=1,max_autotune=True\t"));
    g_assert_nonnull (strstr (last, "cpp.threads"));
  }
  /* The kernels of the runs, aligned by the nodes they cover: the inductor run's fused kernel with its time; the
     eager run (node by node) has none. */
  {
    g_autofree char *kernels = fxw_compare_view_dup_kernels_text (view);
    g_auto(GStrv) lines = NULL;
    gboolean found = FALSE;

    g_assert_nonnull (kernels);
    g_test_message ("kernels:\n%s", kernels);
    lines = g_strsplit (kernels, "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++)
      {
        g_auto(GStrv) cells = g_strsplit (lines[i], "\t", -1);

        if (g_strv_length (cells) != n_before + 3 || strstr (cells[n_before + 2], "cpp_fused_") == NULL)
          continue;
        found = TRUE;
        g_assert_true (strstr (cells[n_before + 2], " µs") || strstr (cells[n_before + 2], " ns")
                       || strstr (cells[n_before + 2], " ms"));
        g_assert_cmpstr (cells[n_before + 1], ==, "—");
        g_assert_nonnull (strstr (cells[0], "mul"));
      }
    g_assert_true (found);
    /* the max-autotune run's candidate table (its compile's autotune.txt) below the kernels, the kept one marked;
       the runs that did not autotune show a dash */
    const char *at = strstr (kernels, "\nautotune\t");
    g_assert_nonnull (at);
    g_assert_nonnull (strstr (at, "\tAUTOTUNE cpp program"));
    g_assert_nonnull (strstr (at, "(kept)"));
    g_assert_true (g_str_has_prefix (at, "\nautotune\t\t"));
  }
  /* The Kernels view shows the latest max-autotune run's table too (the stage has no kernels of its own here) */
  {
    FxwKernelsView *kv = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));
    const char *table = fxw_kernels_view_get_autotune (kv);

    g_assert_nonnull (table);
    g_assert_true (g_str_has_prefix (table, "AUTOTUNE cpp program"));
    g_assert_nonnull (strstr (table, "(kept)"));
    fxw_window_set_view (window, "kernels");
    fxw_test_pump (300);
    g_free (fxw_test_screenshot (GTK_WIDGET (window), "18b-kernels-autotune"));
    fxw_window_set_view (window, "compare");
    fxw_test_pump (100);
  }
  fxw_test_pump (500);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "18-run-compare-result"));
  /* It all ran: the dialog closed itself, the Compare view shows the rest. */
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (dialog)));
  g_object_unref (dialog);

  /* Cancel: the run stops, and says so. */
  dialog = g_object_ref (fxw_window_run_compare (window));
  fxw_run_dialog_set_column (dialog, "aot_eager", FALSE, NULL, NULL);
  fxw_run_dialog_set_column (dialog, "eager", FALSE, NULL, NULL);
  fxw_run_dialog_set_column (dialog, "inductor", TRUE, "max-autotune", NULL);
  fxw_run_dialog_set_repeat (dialog, 1000);
  g_assert_true (fxw_run_dialog_start (dialog, NULL));
  fxw_run_dialog_cancel (dialog);
  g_assert_true (fxw_test_wait (run_done, dialog, 30));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));   /* cancelled: it stays, and says so */
  g_assert_true (fxw_test_wait (not_busy, window, 20));
  fxw_test_pump (100);
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);
  open_demo ();
}

/* Run & Compare with Training: each column runs training steps through fxwb compare --train (forward and
   backward timed apart, every step's gradients checked); nothing is stored, so the dialog stays with its log. */
static void
test_run_training (void)
{
  g_autofree char *path = fixture ("training/graphs/layernorm_gelu.min_cut.joint.py");
  FxwRunDialog *dialog;
  g_autoptr(GError) error = NULL;
  const char *log;

  open_path (path);
  g_assert_true (has_graph (window));
  dialog = g_object_ref (fxw_window_run_compare (window));
  g_assert_true (fxw_run_dialog_set_column (dialog, "eager", TRUE, NULL, NULL));
  g_assert_true (fxw_run_dialog_set_column (dialog, "aot_eager", FALSE, NULL, NULL));
  g_assert_true (fxw_run_dialog_set_column (dialog, "inductor", TRUE, NULL, NULL));
  fxw_run_dialog_set_repeat (dialog, 1);
  fxw_run_dialog_set_training (dialog, TRUE, 2, "adam");
  g_assert_true (fxw_run_dialog_get_training (dialog));
  g_assert_true (fxw_run_dialog_start (dialog, &error));
  g_assert_no_error (error);
  g_assert_true (fxw_test_wait (run_done, dialog, 180));
  log = fxw_run_dialog_get_log (dialog);
  g_test_message ("%s", log);
  g_assert_nonnull (strstr (log, "training: 2 steps, adam"));
  g_assert_nonnull (strstr (log, "forward ms"));
  g_assert_nonnull (strstr (log, "backward ms"));
  g_assert_nonnull (strstr (log, "inductor: ran, matches the reference"));
  g_assert_null (strstr (log, "FAIL"));
  /* not stored: the dialog stays open on its log */
  fxw_test_pump (200);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
  g_free (fxw_test_screenshot (GTK_WIDGET (dialog), "41-run-training"));
  gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);
  open_demo ();
}

static gboolean
report_written (gpointer data)
{
  const char *text = fxw_window_get_banner_text (window);

  return text != NULL && (strstr (text, "Report written") != NULL || strstr (text, "could not be written") != NULL);
}

/* File → Export report… on an imported trace: the pages, with Graphviz drawings made under the canvas's lock. */
static void
test_export_report (void)
{
  g_autofree char *log = fixture ("traces/toy_graph_break-cuda/torch_trace/dedicated_log_torch_trace_2txnzdhg.log");
  g_autofree char *dir = g_dir_make_tmp ("fxw-export-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "report", NULL);
  g_autoptr(GFile) folder = g_file_new_for_path (out);
  g_autofree char *index_path = g_build_filename (out, "index.html", NULL);
  g_autofree char *index = NULL;
  g_autoptr(GDir) d = NULL;
  const char *name;
  guint svgs = 0;

  open_path (log);
  g_assert_true (has_graph (window));
  fxw_window_export_report (window, folder);
  g_assert_true (fxw_test_wait (report_written, NULL, 60));
  g_assert_nonnull (strstr (fxw_window_get_banner_text (window), "Report written"));
  g_assert_true (g_file_get_contents (index_path, &index, NULL, NULL));
  g_assert_nonnull (strstr (index, ">[0/0]</a>"));
  g_assert_nonnull (strstr (index, "0/0: tensor &#39;a&#39; size mismatch at index 0. expected 10, actual 16"));
  d = g_dir_open (out, 0, NULL);
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (out, name, NULL);
      if (g_str_has_suffix (name, ".svg"))
        {
          g_autofree char *svg = NULL;

          g_assert_true (g_file_get_contents (path, &svg, NULL, NULL));
          g_assert_nonnull (strstr (svg, "<svg"));
          svgs++;
        }
      g_unlink (path);
    }
  g_assert_cmpuint (svgs, >, 0);
  g_rmdir (out);
  g_rmdir (dir);
}

static gboolean
has_compiles (gpointer data)
{
  FxwDocument *document = fxw_window_get_document (window);

  return document != NULL && !fxw_document_get_busy (document) && count_compiles () >= GPOINTER_TO_UINT (data);
}

/* Follow a trace folder: the program's TORCH_TRACE grows in two steps (cut at a record boundary); the sidebar grows
   with it, and the selection stays where the user put it. Opening another file stops following. */
static void
test_follow_trace (void)
{
  g_autofree char *log = fixture ("traces/breaks_recompiles-cpu/torch_trace/dedicated_log_torch_trace_1pjq7k53.log");
  g_autofree char *dir = g_dir_make_tmp ("fxw-follow-XXXXXX", NULL);
  g_autofree char *target = g_build_filename (dir, "dedicated_log_torch_trace_live.log", NULL);
  g_autoptr(GFile) folder = g_file_new_for_path (dir);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  gsize len = 0, cut;
  guint first;
  FILE *f;

  g_assert_true (g_file_get_contents (log, &text, &len, NULL));
  /* the cut: the start of a record (a glog line, not a payload line) near the middle */
  cut = len / 2;
  while (cut < len && !(text[cut - 1] == '\n' && text[cut] != '\t'))
    cut++;
  g_assert_cmpuint (cut, <, len);
  g_assert_true (fxw_window_follow_trace (window, folder, &error));
  g_assert_no_error (error);
  g_assert_nonnull (fxw_window_get_follow_workspace (window));
  f = fopen (target, "wb");
  g_assert_nonnull (f);
  g_assert_cmpuint (fwrite (text, 1, cut, f), ==, cut);
  fclose (f);
  g_assert_true (fxw_test_wait (has_compiles, GUINT_TO_POINTER (1), 60));
  first = count_compiles ();
  g_test_message ("after the first half: %u compiles", first);
  g_assert_cmpuint (first, <, 17);
  select_row ("[0/0]", NULL);
  f = fopen (target, "ab");
  g_assert_true (fwrite (text + cut, 1, len - cut, f) == len - cut);
  fclose (f);
  g_assert_true (fxw_test_wait (has_compiles, GUINT_TO_POINTER (17), 60));
  fxw_test_pump (300);
  g_assert_cmpuint (count_compiles (), ==, 17);
  /* still on the compile the user picked */
  {
    g_autofree char *guards = fxw_window_dup_guards_text (window);

    g_assert_nonnull (guards);
    g_assert_true (g_str_has_prefix (guards, "[0/0] starts_with_break"));
  }
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "19-follow-trace"));
  open_demo ();
  g_assert_null (fxw_window_get_follow_workspace (window));
  g_unlink (target);
  g_rmdir (dir);
}

/* Cancel during an import: the window is free at once, the banner says so, and no graph is half shown. */
static void
test_import_cancel (void)
{
  g_autofree char *log = fixture ("traces/mlp_module-cuda/torch_trace/dedicated_log_torch_trace_f93v9gvu.log");
  g_autoptr(GFile) file = g_file_new_for_path (log);

  fxw_window_open (window, file);
  g_assert_true (fxw_document_get_busy (fxw_window_get_document (window)));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.cancel-load", NULL));
  g_assert_true (fxw_test_wait (not_busy, window, 20));
  fxw_test_pump (100);
  g_assert_true (fxw_window_get_banner_visible (window));
  g_assert_nonnull (strstr (fxw_window_get_banner_text (window), "cancelled"));
  g_assert_null (fxw_selection_get_graph (fxw_window_get_selection (window)));
  /* The worker may still finish its import in the background; wait for it before the next test reuses the file. */
  fxw_test_pump (3000);
}

static char *
file_checksum (const char *path)
{
  g_autofree char *data = NULL;
  gsize len = 0;

  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
}

/* A workspace without write permission opens read-only: the banner says so, the views work, the file is untouched. */
static void
test_read_only_workspace (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fxw-ro-XXXXXX", NULL);
  g_autofree char *ws = copy_demo (dir, "locked.fxwb");
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  FxwKernelsView *kernels = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));

  g_assert_cmpint (g_chmod (ws, 0444), ==, 0);
  before = file_checksum (ws);
  open_path (ws);
  g_assert_true (has_graph (window));
  g_assert_true (fxw_document_get_read_only (fxw_window_get_document (window)));
  g_assert_true (fxw_window_get_banner_visible (window));
  g_assert_nonnull (strstr (fxw_window_get_banner_text (window), "read-only"));
  g_assert_cmpuint (count_compiles (), ==, 11);
  select_row ("[0/0]", "dynamo");
  g_assert_cmpuint (fxw_kernels_view_get_n_kernels (kernels), ==, 2);
  fxw_kernels_view_select (kernels, 0);
  fxw_window_set_view (window, "kernels");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "16-read-only"));
  after = file_checksum (ws);
  g_assert_cmpstr (before, ==, after);

  /* The store's read-only handle reads, and refuses to write. */
  {
    fx_store *store = NULL;
    fx_diag diag;
    int64_t compile_row = 0;

    fx_diag_clear (&diag);
    g_assert_cmpint (fx_store_open_readonly (ws, &store, &diag), ==, FX_OK);
    g_assert_cmpint (fx_store_find_compile (store, "0/1", &compile_row, &diag), ==, FX_OK);
    g_assert_cmpint (compile_row, >, 0);
    if (fx_store_begin (store, &diag) == FX_OK)
      {
        g_assert_cmpint (fx_store_add_metric (store, compile_row, "k", "v", &diag), !=, FX_OK);
        fx_store_rollback (store);
      }
    fx_store_close (store);
    /* Not a workspace: refused like fx_store_open refuses it. */
    g_assert_cmpint (fx_store_open_readonly (FX_SOURCE_ROOT "/meson.build", &store, &diag), !=, FX_OK);
    g_assert_null (store);
  }
  g_free (after);
  after = file_checksum (ws);
  g_assert_cmpstr (before, ==, after);

  /* A writable copy is not read-only. */
  g_assert_cmpint (g_chmod (ws, 0644), ==, 0);
  open_path (ws);
  g_assert_false (fxw_document_get_read_only (fxw_window_get_document (window)));
  g_assert_false (fxw_window_get_banner_visible (window));

  fxw_window_set_view (window, "table");
  open_demo ();
  {
    g_autofree char *wal = g_strconcat (ws, "-wal", NULL);
    g_autofree char *shm = g_strconcat (ws, "-shm", NULL);

    g_unlink (wal);
    g_unlink (shm);
  }
  g_unlink (ws);
  g_rmdir (dir);
}


/* ---------------------------------------------------------------- diff */

static FxwSidebarItem *
item_at (int row)
{
  g_autoptr(GtkTreeListRow) r = g_list_model_get_item (fxw_window_get_sidebar_model (window), (guint) row);

  return gtk_tree_list_row_get_item (r);
}

static gboolean
diff_shown (gpointer data)
{
  FxwDiffView *view = data;

  return g_str_equal (fxw_diff_view_get_page (view), "diff") || g_str_equal (fxw_diff_view_get_page (view), "error");
}

/* A recompile against the compile whose guard failed, one click from the Guards view: the split view names the
   guard, aligns the graphs (clicking a node selects its partner) and diffs kernels and code beside. */
static void
test_diff_recompile (void)
{
  FxwDiffView *view = FXW_DIFF_VIEW (fxw_window_get_view (window, "diff"));
  FxwDiffCanvas *canvas = fxw_diff_view_get_canvas (view);
  g_autofree char *side = NULL;
  int row_00, row_01;
  guint n_rows, target = G_MAXUINT;
  double x, y;

  open_demo ();
  g_assert_cmpstr (fxw_diff_view_get_page (view), ==, "empty");
  row_00 = find_row ("[0/0]", NULL);
  g_assert_cmpint (row_00, >=, 0);
  g_assert_true (fxw_window_select_stage (window, (guint) row_00));
  /* [0/0] is no recompile: nothing to compare it with */
  g_assert_false (fxw_window_compare_previous (window));

  row_01 = find_row ("[0/1]", NULL);
  g_assert_cmpint (row_01, >, row_00);
  g_assert_true (fxw_window_select_stage (window, (guint) row_01));
  fxw_window_set_view (window, "guards");
  fxw_test_pump (100);
  g_assert_true (fxw_window_compare_previous (window));
  g_assert_true (fxw_test_wait (diff_shown, view, 20));
  g_assert_cmpstr (fxw_diff_view_get_page (view), ==, "diff");
  g_assert_cmpstr (adw_view_stack_get_visible_child_name (
                     ADW_VIEW_STACK (gtk_widget_get_ancestor (GTK_WIDGET (view), ADW_TYPE_VIEW_STACK))), ==, "diff");
  g_assert_nonnull (strstr (fxw_diff_view_get_summary (view), "[0/0] and [0/1]"));
  side = fxw_diff_view_dup_side_text (view);
  g_assert_nonnull (strstr (side, "! TENSOR_MATCH L['a'] failed: 0/0: tensor 'a' size mismatch at index 0. expected 10, "
                                  "actual 16"));
  g_assert_nonnull (strstr (side, "== kernels"));
  g_assert_null (strstr (side, "== graph")); /* the graph is drawn, not listed */
  g_assert_null (strstr (side, " differences (")); /* the summary line is above, counting every section */

  /* matched nodes side by side; the input that became dynamic changed */
  n_rows = fxw_diff_canvas_get_n_rows (canvas);
  g_assert_cmpuint (n_rows, >, 3);
  for (guint r = 0; r < n_rows && target == G_MAXUINT; r++)
    {
      const fx_diff_pair *p = fxw_diff_canvas_get_pair (canvas, r);

      if (p->a && p->b && g_str_equal (p->a->name, "l_a_"))
        target = r;
    }
  g_assert_cmpuint (target, !=, G_MAXUINT);
  g_assert_true (fxw_diff_canvas_get_pair (canvas, target)->changed);
  fxw_test_pump (200);
  g_assert_true (fxw_diff_canvas_get_box_center (canvas, target, 0, &x, &y));
  fxw_diff_canvas_click (canvas, x, y);
  g_assert_cmpuint (fxw_diff_canvas_get_selected (canvas), ==, target);
  g_assert_cmpstr (fxw_diff_canvas_get_pair (canvas, target)->b->name, ==, "l_a_");
  g_assert_nonnull (strstr (fxw_diff_view_get_detail (view), "l_a_ ↔ l_a_"));
  g_assert_nonnull (strstr (fxw_diff_view_get_detail (view), "meta.shape: [10] → [s"));
  /* the partner's box on the right selects the same row */
  fxw_diff_canvas_select_row (canvas, G_MAXUINT);
  g_assert_true (fxw_diff_canvas_get_box_center (canvas, target, 1, &x, &y));
  fxw_diff_canvas_click (canvas, x, y);
  g_assert_cmpuint (fxw_diff_canvas_get_selected (canvas), ==, target);
  /* n / p: the changes in turn, wrapping around */
  {
    guint first, last;

    fxw_diff_canvas_select_row (canvas, G_MAXUINT);
    first = fxw_diff_canvas_select_change (canvas, +1);
    g_assert_cmpuint (first, <, n_rows);
    g_assert_true (fxw_diff_canvas_get_pair (canvas, first)->changed);
    for (guint r = 0; r < first; r++)
      g_assert_false (fxw_diff_canvas_get_pair (canvas, r)->changed);
    last = fxw_diff_canvas_select_change (canvas, -1);
    g_assert_cmpuint (last, >, first);  /* wrapped around to the last change */
    for (guint r = last + 1; r < n_rows; r++)
      g_assert_false (fxw_diff_canvas_get_pair (canvas, r)->changed);
    g_assert_cmpuint (fxw_diff_canvas_select_change (canvas, +1), ==, first);
  }
  fxw_diff_canvas_select_row (canvas, target);
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "17-diff-recompile"));
}


/* The right-click gesture of the first sidebar row showing a compile (rows are recycled: whichever is on screen). */
static GtkGesture *
find_compile_row_gesture (GtkWidget *widget, FxwSidebarItem **item_out)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GtkEventController) c = g_list_model_get_item (controllers, i);
      GtkListItem *li = g_object_get_data (G_OBJECT (c), "fxw-list-item");

      if (GTK_IS_GESTURE_CLICK (c) && li != NULL && gtk_list_item_get_item (li) != NULL)
        {
          g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (gtk_list_item_get_item (li));

          if (item->kind == FXW_SIDEBAR_ITEM_COMPILE)
            {
              *item_out = g_object_ref (item);
              return GTK_GESTURE (c);
            }
        }
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkGesture *g = find_compile_row_gesture (child, item_out);

      if (g != NULL)
        return g;
    }
  return NULL;
}

static GtkWidget *
find_popover (GtkWidget *widget)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = GTK_IS_POPOVER_MENU (child) ? child : find_popover (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

/* "Diff with…" from the sidebar: a compile's menu lists the other compiles, a stage's the same stage elsewhere; a
   compile diffed with itself has no differences. */
static void
test_diff_with_menu (void)
{
  FxwDiffView *view = FXW_DIFF_VIEW (fxw_window_get_view (window, "diff"));
  g_autoptr(FxwSidebarItem) compile = NULL;
  g_autoptr(FxwSidebarItem) stage = NULL;
  g_autoptr(GMenuModel) menu = NULL;
  g_autoptr(GMenuModel) section = NULL;
  g_autofree char *label = NULL;
  guint n_compiles;

  open_demo ();
  n_compiles = count_compiles ();
  compile = item_at (find_row ("[0/0]", NULL));
  stage = item_at (find_row ("[0/0]", "dynamo"));

  menu = fxw_window_build_diff_menu (window, compile);
  g_assert_cmpint (g_menu_model_get_n_items (menu), ==, 1);
  section = g_menu_model_get_item_link (menu, 0, G_MENU_LINK_SECTION);
  g_assert_cmpint (g_menu_model_get_n_items (section), ==, (int) n_compiles - 1);
  g_assert_true (g_menu_model_get_item_attribute (section, 0, G_MENU_ATTRIBUTE_LABEL, "s", &label));
  g_assert_true (g_str_has_prefix (label, "Diff with ["));
  g_assert_true (fxw_window_diff_with (window, 0));
  g_assert_true (fxw_test_wait (diff_shown, view, 20));
  g_assert_cmpstr (fxw_diff_view_get_page (view), ==, "diff");
  g_assert_cmpuint (fxw_diff_canvas_get_n_rows (fxw_diff_view_get_canvas (view)), >, 0);

  g_clear_object (&section);
  g_clear_object (&menu);
  menu = fxw_window_build_diff_menu (window, stage);
  section = g_menu_model_get_item_link (menu, 0, G_MENU_LINK_SECTION);
  g_assert_cmpint (g_menu_model_get_n_items (section), >, 0);
  g_assert_cmpint (g_menu_model_get_n_items (section), <, (int) n_compiles);
  g_assert_true (fxw_window_diff_with (window, 0));
  g_assert_true (fxw_test_wait (diff_shown, view, 20));
  g_assert_cmpstr (fxw_diff_view_get_page (view), ==, "diff");
  g_assert_nonnull (strstr (fxw_diff_view_get_summary (view), "dynamo"));
  {
    g_autofree char *side = fxw_diff_view_dup_side_text (view);

    g_assert_nonnull (strstr (side, "Only graphs were compared"));
  }
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "17-diff-stages"));

  g_assert_true (fxw_window_diff_items (window, compile, compile));
  g_assert_true (fxw_test_wait (diff_shown, view, 20));
  g_assert_nonnull (strstr (fxw_diff_view_get_summary (view), "no differences"));
  g_assert_cmpuint (fxw_diff_canvas_select_change (fxw_diff_view_get_canvas (view), +1), ==, G_MAXUINT);

  /* A right click on a compile row pops the menu up; its first entry diffs that compile with the first other one. */
  {
    g_autoptr(FxwSidebarItem) clicked = NULL;
    GtkGesture *gesture = find_compile_row_gesture (GTK_WIDGET (window), &clicked);
    GtkWidget *row, *popover;

    g_assert_nonnull (gesture);
    row = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));
    g_signal_emit_by_name (gesture, "pressed", 1, 4.0, 4.0);
    fxw_test_pump (200);
    popover = find_popover (row);
    g_assert_nonnull (popover);
    g_assert_true (gtk_widget_get_visible (popover));
    g_assert_cmpint (g_menu_model_get_n_items (gtk_popover_menu_get_menu_model (GTK_POPOVER_MENU (popover))), ==, 1);
    g_free (fxw_test_screenshot (GTK_WIDGET (window), "17-diff-with-menu"));
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.diff-with", "u", 0));
    gtk_popover_popdown (GTK_POPOVER (popover));
    g_assert_true (fxw_test_wait (diff_shown, view, 20));
    g_assert_cmpstr (fxw_diff_view_get_page (view), ==, "diff");
    g_assert_true (g_str_has_prefix (fxw_diff_view_get_summary (view), clicked->title));
    fxw_test_pump (300);
    g_assert_false (gtk_widget_get_visible (popover));
  }
  fxw_window_set_view (window, "table");
}

/* ---------------------------------------------------------------- Inductor provenance */

static gboolean
pane_has_inductor (gpointer data)
{
  FxwProvenancePane *pane = FXW_PROVENANCE_PANE (fxw_window_get_view (window, "provenance"));

  return fxw_window_get_provenance_loaded (window) && fxw_provenance_pane_get_inductor (pane) != NULL;
}

/* The toplevel titled title (NULL when none). */
static GtkWindow *
find_toplevel (const char *title)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GtkWindow) w = g_list_model_get_item (toplevels, i);

      if (g_strcmp0 (gtk_window_get_title (w), title) == 0)
        return w;
    }
  return NULL;
}

/* The first text view in widget's tree, or NULL. */
static GtkTextView *
find_text_view (GtkWidget *widget)
{
  if (GTK_IS_TEXT_VIEW (widget))
    return GTK_TEXT_VIEW (widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkTextView *v = find_text_view (c);

      if (v != NULL)
        return v;
    }
  return NULL;
}

/* The line under the cursor of a source window (free it). */
static char *
cursor_line (GtkWindow *w)
{
  GtkTextView *view = find_text_view (GTK_WIDGET (w));
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (view);
  GtkTextIter start, end;

  gtk_text_buffer_get_iter_at_mark (buffer, &start, gtk_text_buffer_get_insert (buffer));
  gtk_text_iter_set_line_offset (&start, 0);
  end = start;
  gtk_text_iter_forward_to_line_end (&end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

static const char *
selected_node_name (void)
{
  FxwNode *node = fxw_selection_get_node (fxw_window_get_selection (window));

  return node != NULL ? fxw_node_get_node (node)->name : NULL;
}

/* An AOTInductor trace with provenance tracking: a pre-grad node of after_pre_grad_graph lists the post-grad nodes
   it became and the kernels computing them; a click jumps to the post-grad node in the post_grad graph, and from
   there a kernel opens the stored kernel code at its definition, or the wrapper at its launch. */
static void
test_provenance_jump (void)
{
  g_autofree char *log = fixture ("traces/aoti_provenance-cpu/torch_trace/dedicated_log_torch_trace_9k2og5hc.log");
  FxwProvenancePane *pane = FXW_PROVENANCE_PANE (fxw_window_get_view (window, "provenance"));
  FxwSelection *selection = fxw_window_get_selection (window);
  const char *text;
  GtkWindow *source;

  open_path (log);
  /* graphs logged without a compile id: torch.export's and AOTInductor's */
  {
    g_autoptr(FxwSidebarItem) frame = item_at (0);
    g_autoptr(FxwSidebarItem) compile = item_at (1);

    g_assert_cmpstr (frame->title, ==, "torch.export / AOTInductor");
    g_assert_true (g_str_has_prefix (compile->subtitle, "(export/AOTInductor: no compile id)"));
  }
  select_row ("[-/-]", "after_pre_grad_graph");
  g_assert_true (fxw_test_wait (pane_has_inductor, NULL, 20));
  g_assert_true (fxw_selection_select_name (selection, "linear"));
  text = fxw_provenance_pane_get_inductor_text (pane);
  g_assert_nonnull (text);
  g_test_message ("%s", text);
  g_assert_true (g_str_has_prefix (text, "post_grad: permute, addmm\nkernel: aoti_torch_cpu_addmm_out:1 launched at "
                                         "inductor_aot_wrapper_code:"));
  fxw_window_set_view (window, "graph");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "22-provenance-pre-grad"));

  /* linear -> addmm: the post_grad graph, addmm selected there, and back to its pre-grad node */
  g_assert_true (fxw_provenance_pane_activate_inductor (pane, "addmm"));
  fxw_test_pump (100);
  g_assert_true (g_str_has_suffix (fxw_graph_get_title (fxw_selection_get_graph (selection)), "/ post_grad"));
  g_assert_cmpstr (selected_node_name (), ==, "addmm");
  text = fxw_provenance_pane_get_inductor_text (pane);
  g_assert_nonnull (text);
  g_assert_true (g_str_has_prefix (text, "pre_grad: linear\nkernel: aoti_torch_cpu_addmm_out:1 "));
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "22-provenance-post-grad"));

  /* relu in post_grad: two fused kernels; the first opens at its definition in the kernel code */
  g_assert_true (fxw_selection_select_name (selection, "relu"));
  text = fxw_provenance_pane_get_inductor_text (pane);
  g_assert_nonnull (strstr (text, "kernel: cpp_fused_relu_0:2 defined at inductor_aot_kernel_code:4, launched at "
                                  "inductor_aot_wrapper_code:"));
  g_assert_true (fxw_provenance_pane_activate_inductor (pane, "cpp_fused_relu_0:2"));
  source = find_toplevel ("cpp_fused_relu_0:2 — inductor_aot_kernel_code:4");
  g_assert_nonnull (source);
  {
    g_autofree char *line = cursor_line (source);

    g_assert_cmpstr (line, ==, "extern \"C\"  void  cpp_fused_relu_0(const float* in_ptr0,");
  }
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (source), "22-provenance-kernel-source"));
  /* the other way: the kernel's window links back to the nodes it computes */
  g_assert_false (fxw_window_activate_source_link (source, "post_grad:mul"));
  select_row ("[-/-]", "aot_inference");
  g_assert_true (fxw_window_activate_source_link (source, "post_grad:l2_bias"));
  fxw_test_pump (50);
  g_assert_true (g_str_has_suffix (fxw_graph_get_title (fxw_selection_get_graph (selection)), "/ post_grad"));
  g_assert_cmpstr (selected_node_name (), ==, "l2_bias");
  g_assert_true (fxw_window_activate_source_link (source, "pre_grad:relu"));
  fxw_test_pump (50);
  g_assert_true (g_str_has_suffix (fxw_graph_get_title (fxw_selection_get_graph (selection)),
                                   "/ after_pre_grad_graph"));
  g_assert_cmpstr (selected_node_name (), ==, "relu");
  gtk_window_destroy (source);
  select_row ("[-/-]", "post_grad");
  g_assert_true (fxw_selection_select_name (selection, "relu"));
  /* ... and at its launch in the wrapper */
  g_assert_true (fxw_provenance_pane_activate_inductor (pane, "launch cpp_fused_relu_0:2"));
  {
    GListModel *toplevels = gtk_window_get_toplevels ();
    GtkWindow *launch = NULL;

    for (guint i = 0; i < g_list_model_get_n_items (toplevels) && launch == NULL; i++)
      {
        g_autoptr(GtkWindow) w = g_list_model_get_item (toplevels, i);

        if (g_str_has_prefix (gtk_window_get_title (w) ? gtk_window_get_title (w) : "",
                              "cpp_fused_relu_0:2 — inductor_aot_wrapper_code:"))
          launch = w;
      }
    g_assert_nonnull (launch);
    {
      g_autofree char *line = cursor_line (launch);

      g_assert_true (g_str_has_prefix (g_strstrip (line), "cpp_fused_relu_0((const float*)(buf0.data_ptr())"));
    }
    gtk_window_destroy (launch);
  }

  /* a parameter the fused kernel reads came from no pre-grad node */
  g_assert_true (fxw_selection_select_name (selection, "l2_bias"));
  text = fxw_provenance_pane_get_inductor_text (pane);
  g_assert_nonnull (text);
  g_assert_true (g_str_has_prefix (text, "pre_grad: -\nkernel: cpp_fused_relu_0:2 defined at "));
  g_assert_true (fxw_selection_select_name (selection, "relu"));

  /* back to the pre-grad graph from a post-grad node */
  g_assert_true (fxw_provenance_pane_activate_inductor (pane, "relu"));
  fxw_test_pump (100);
  g_assert_true (g_str_has_suffix (fxw_graph_get_title (fxw_selection_get_graph (selection)),
                                   "/ after_pre_grad_graph"));
  g_assert_cmpstr (selected_node_name (), ==, "relu");

  /* a graph of another kind (aot_inference) and a workspace without mappings have no Inductor section */
  select_row ("[-/-]", "aot_inference");
  g_assert_true (fxw_selection_select_name (selection, "relu"));
  g_assert_null (fxw_provenance_pane_get_inductor_text (pane));

  /* torch.compile too: the demo's Dynamo graph names the pre-grad nodes; x became div, computed by a Triton kernel
     of the output code */
  open_demo ();
  select_row ("[0/0]", "dynamo");
  g_assert_true (fxw_test_wait (pane_has_inductor, NULL, 20));
  g_assert_true (fxw_selection_select_name (selection, "x"));
  text = fxw_provenance_pane_get_inductor_text (pane);
  g_assert_nonnull (text);
  g_assert_true (g_str_has_prefix (text, "post_grad: div\nkernel: triton_poi_fused_abs_add_div_1:2 defined at "
                                         "inductor_output_code:"));
  g_assert_true (fxw_provenance_pane_activate_inductor (pane, "triton_poi_fused_abs_add_div_1:2"));
  {
    GListModel *toplevels = gtk_window_get_toplevels ();
    GtkWindow *code = NULL;

    for (guint i = 0; i < g_list_model_get_n_items (toplevels) && code == NULL; i++)
      {
        g_autoptr(GtkWindow) w = g_list_model_get_item (toplevels, i);

        if (g_str_has_prefix (gtk_window_get_title (w) ? gtk_window_get_title (w) : "",
                              "triton_poi_fused_abs_add_div_1:2 — inductor_output_code:"))
          code = w;
      }
    g_assert_nonnull (code);
    {
      g_autofree char *line = cursor_line (code);

      g_assert_true (g_str_has_prefix (line, "triton_poi_fused_abs_add_div_1 = async_compile.triton("));
    }
    gtk_window_destroy (code);
  }
  fxw_window_set_view (window, "table");
}

/* ---------------------------------------------------------------- ranks */

static gboolean
ranks_loaded (gpointer data)
{
  return fxw_ranks_view_get_loaded (FXW_RANKS_VIEW (data));
}

/* Whether every row the sidebar lists belongs to rank. */
static gboolean
sidebar_all_rank (int rank)
{
  GListModel *rows = fxw_window_get_sidebar_model (window);

  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      if (item->rank != rank)
        return FALSE;
    }
  return g_list_model_get_n_items (rows) > 0;
}

/* A 4-rank gloo job (rank 1 recompiled on a flag, rank 3 on a dynamic shape): the rank selector lists the sidebar
   one rank at a time, and the Ranks view names where the ranks diverge, each divergence one click from its diff or
   its compile. */
static void
test_ranks (void)
{
  g_autofree char *dir = fixture ("traces/multirank_gloo-cpu/torch_trace");
  FxwRanksView *view = FXW_RANKS_VIEW (fxw_window_get_view (window, "ranks"));
  FxwDiffView *diff = FXW_DIFF_VIEW (fxw_window_get_view (window, "diff"));
  GtkWidget *selector = fxw_window_get_rank_selector (window);
  AdwViewStack *stack = ADW_VIEW_STACK (gtk_widget_get_ancestor (GTK_WIDGET (view), ADW_TYPE_VIEW_STACK));
  g_autofree char *text = NULL;
  FxwGraph *graph;

  open_path (dir);
  g_assert_true (has_graph (window));
  g_assert_true (fxw_test_wait (ranks_loaded, view, 30));
  /* the selector: All Ranks, then ranks 0 to 3 */
  g_assert_true (gtk_widget_get_visible (selector));
  g_assert_true (adw_view_stack_page_get_visible (adw_view_stack_get_page (stack, GTK_WIDGET (view))));
  g_assert_cmpuint (g_list_model_get_n_items (gtk_drop_down_get_model (GTK_DROP_DOWN (selector))), ==, 5);
  g_assert_cmpint (fxw_window_get_rank (window), ==, -1);
  g_assert_cmpuint (count_compiles (), ==, 10);

  /* one rank at a time: rank 3 made [0/0], [1/0] and its dynamic-shape recompile [1/1]; rank 0 no recompile */
  g_assert_true (fxw_window_set_rank (window, 3));
  g_assert_cmpuint (gtk_drop_down_get_selected (GTK_DROP_DOWN (selector)), ==, 4);
  g_assert_cmpint (fxw_window_get_rank (window), ==, 3);
  g_assert_cmpuint (count_compiles (), ==, 3);
  g_assert_true (sidebar_all_rank (3));
  g_assert_cmpint (find_row ("[1/1]", NULL), >=, 0);
  g_assert_true (gtk_drop_down_get_selected (GTK_DROP_DOWN (selector)) == 4);
  graph = fxw_selection_get_graph (fxw_window_get_selection (window));
  g_assert_nonnull (graph);
  /* Run & Compare on it runs rank 3's graph: the same id names a compile per rank */
  select_row ("[1/1]", "dynamo");
  {
    FxwRunDialog *dialog = fxw_window_run_compare (window);

    g_assert_nonnull (dialog);
    g_assert_true (g_str_has_suffix (fxw_run_dialog_get_source (dialog), ":rank3/1/1"));
    gtk_window_destroy (GTK_WINDOW (dialog));
  }
  g_assert_true (fxw_window_set_rank (window, 0));
  g_assert_cmpuint (count_compiles (), ==, 2);
  g_assert_true (sidebar_all_rank (0));
  g_assert_cmpint (find_row ("[1/1]", NULL), ==, -1);
  g_assert_false (fxw_window_set_rank (window, 7));
  g_assert_true (fxw_window_set_rank (window, 1));
  g_assert_cmpuint (count_compiles (), ==, 3);
  select_row ("[1/1]", NULL);
  fxw_window_set_view (window, "guards");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "21-rank-selector"));

  /* the Ranks view: what fxwb diff --ranks prints */
  fxw_window_set_view (window, "ranks");
  g_assert_cmpuint (fxw_ranks_view_get_n_ranks (view), ==, 4);
  g_assert_cmpuint (fxw_ranks_view_get_n_divergences (view), ==, 6);
  text = fxw_ranks_view_dup_text (view);
  g_assert_nonnull (text);
  g_test_message ("%s", text);
  g_assert_nonnull (strstr (text, "4 Ranks\n"));
  g_assert_nonnull (strstr (text, "rank 1: 3 compiles  dedicated_log_torch_trace_rank_1_"));
  g_assert_nonnull (strstr (text, "[1/0]    graph        rank 1"));
  g_assert_nonnull (strstr (text, "[1/0]    guards       rank 1"));
  g_assert_nonnull (strstr (text, "[1/1]    compiles     ranks 1, 3     made on ranks 1, 3, not on ranks 0, 2"));
  g_assert_nonnull (strstr (text, "[1/1]    graph        rank 3"));
  g_assert_nonnull (strstr (text, "[1/1]    cache        rank 3"));
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "21-ranks-view"));

  /* Compare 0 ↔ 1 on [1/0]: rank 1 took the other branch of its flag */
  g_assert_true (fxw_ranks_view_activate (view, 0));
  g_assert_true (fxw_test_wait (diff_shown, diff, 20));
  g_assert_cmpstr (fxw_diff_view_get_page (diff), ==, "diff");
  g_assert_cmpstr (adw_view_stack_get_visible_child_name (stack), ==, "diff");
  g_assert_nonnull (strstr (fxw_diff_view_get_summary (diff), "rank 0 [1/0]"));
  g_assert_nonnull (strstr (fxw_diff_view_get_summary (diff), "rank 1 [1/0]"));
  {
    g_autofree char *side = fxw_diff_view_dup_side_text (diff);

    g_assert_nonnull (strstr (side, "L['flag']"));
  }
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "21-ranks-diff-flag"));

  /* [1/1]'s graph on rank 3 against rank 1: the dynamic shape */
  g_assert_true (fxw_ranks_view_activate (view, 3));
  g_assert_true (fxw_test_wait (diff_shown, diff, 20));
  g_assert_nonnull (strstr (fxw_diff_view_get_summary (diff), "rank 3 [1/1]"));
  {
    g_autofree char *side = fxw_diff_view_dup_side_text (diff);

    g_assert_nonnull (strstr (side, "2 <= L['x'].size()[0]"));
  }

  /* Show on Rank 1 from rank 0's list: the selector turns to rank 1 and its [1/1] is selected, in the Guards view */
  g_assert_true (fxw_window_set_rank (window, 0));
  g_assert_true (fxw_ranks_view_activate (view, 2));
  g_assert_cmpint (fxw_window_get_rank (window), ==, 1);
  g_assert_cmpstr (adw_view_stack_get_visible_child_name (stack), ==, "guards");
  {
    g_autofree char *guards = fxw_window_dup_guards_text (window);

    g_assert_nonnull (guards);
    g_assert_true (g_str_has_prefix (guards, "[1/1]"));
  }

  /* one trace: no selector, no Ranks view */
  open_demo ();
  g_assert_false (gtk_widget_get_visible (selector));
  g_assert_false (adw_view_stack_page_get_visible (adw_view_stack_get_page (stack, GTK_WIDGET (view))));
  g_assert_cmpint (fxw_window_get_rank (window), ==, -1);
  fxw_window_set_view (window, "table");
}

static gboolean
summary_loaded (gpointer data)
{
  return fxw_summary_view_get_loaded (FXW_SUMMARY_VIEW (data));
}

/* The Summary view of a trace with breaks and recompiles: the counts, each frame's recompile chain with the guard
   that failed, the breaks with their user lines; a compile id selects that compile. */
static void
test_summary (void)
{
  g_autofree char *log = fixture ("traces/breaks_recompiles-cpu/torch_trace/dedicated_log_torch_trace_1pjq7k53.log");
  GtkWidget *view;
  g_autofree char *text = NULL;

  open_path (log);
  g_assert_true (has_graph (window));
  fxw_window_set_view (window, "summary");
  view = fxw_window_get_view (window, "summary");
  g_assert_true (FXW_IS_SUMMARY_VIEW (view));
  g_assert_true (fxw_test_wait (summary_loaded, view, 30));
  text = fxw_summary_view_dup_text (FXW_SUMMARY_VIEW (view));
  g_assert_nonnull (text);
  g_test_message ("%s", text);
  g_assert_nonnull (strstr (text, "17 compiles of 8 frames"));
  g_assert_nonnull (strstr (text, " 5 graph breaks"));
  g_assert_nonnull (strstr (text, " 4 restarts"));
  g_assert_nonnull (strstr (text, " 5 recompiles"));
  /* the chain of global_flag: [2/0], then why [2/1] happened */
  g_assert_nonnull (strstr (text, "frame 2 global_flag"));
  g_assert_nonnull (strstr (text, "guard failed: 2/0: G['USE_RELU'] == True\n  [2/1] recompiled"));
  g_assert_nonnull (strstr (text, "guard failed: 3/0: n == 2"));
  /* a restart after a graph break, and the break's user line (not torch's module.py) */
  g_assert_nonnull (strstr (text, "restarted after the graph break above\n  [0/0_1]"));
  g_assert_nonnull (strstr (text, "[0/0] /work/main/.devscratch/breaks_recompiles.py:8 "));
  g_assert_null (strstr (text, "module.py"));
  fxw_test_pump (200);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "20-summary"));
  g_assert_true (fxw_summary_view_activate_compile (FXW_SUMMARY_VIEW (view), "3/1"));
  {
    g_autofree char *guards = fxw_window_dup_guards_text (window);

    g_assert_nonnull (guards);
    g_assert_true (g_str_has_prefix (guards, "[3/1]"));
  }
  g_assert_false (fxw_summary_view_activate_compile (FXW_SUMMARY_VIEW (view), "99/0"));
  /* a folder of FX files has no summary */
  open_demo ();
  g_assert_true (fxw_test_wait (summary_loaded, view, 30));
}

/* A torch.export trace (no compile): the Summary view lists the guards export added and its unbacked symbol, each
   with the user line it came from. */
static void
test_summary_export (void)
{
  g_autofree char *log = fixture ("traces/export_data_dependent-cpu/torch_trace/dedicated_log_torch_trace_u32fuo7j.log");
  GtkWidget *view;
  g_autofree char *text = NULL;

  fxw_window_set_view (window, "table");
  open_path (log);
  /* nothing to list: the window turns to the Summary by itself */
  view = fxw_window_get_view (window, "summary");
  g_assert_cmpstr (adw_view_stack_get_visible_child_name (
                     ADW_VIEW_STACK (gtk_widget_get_ancestor (view, ADW_TYPE_VIEW_STACK))), ==, "summary");
  g_assert_true (fxw_test_wait (summary_loaded, view, 30));
  text = fxw_summary_view_dup_text (FXW_SUMMARY_VIEW (view));
  if (text == NULL)
    g_error ("no summary text; workspace %s, error %s", fxw_document_get_workspace_path (fxw_window_get_document (window)) ?: "(none)", fxw_document_get_error (fxw_window_get_document (window)) ? fxw_document_get_error (fxw_window_get_document (window))->message : "(none)");
  g_test_message ("%s", text);
  g_assert_nonnull (strstr (text, "torch.export: Guards, Symbols and Failures\n"));
  g_assert_nonnull (strstr (text, "[export] unbacked_symbol u0 [-int_oo, int_oo]\n"));
  g_assert_nonnull (strstr (text, "[export] guard_added_fast u0 <= 6 "));
  g_assert_nonnull (strstr (text, "export_prog.py:13\n"));
  g_assert_null (strstr (text, "0 compiles"));   /* no compile counts for a trace without compiles */
  fxw_test_pump (200);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "20-summary-export"));
}

/* A compile of ws holding graph g and one inductor run whose single output is [1, 2, 3, last]. */
static void
add_compile_with_run (fx_store *store, int64_t input, int frame, const fx_graph *g, const char *text, float last)
{
  fx_compile_id cid = { -1, frame, 0, 0 };
  int64_t row = 0, graph_id = 0, run_id = 0;
  int64_t size = 4;
  fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 1, &size);
  fx_store_run run = { .backend = "inductor", .mode = "default", .verdict = "pass", .repeat = 1, .n_kernels = -1,
                       .run_ms_median = 1.0 + frame };
  fx_value out;

  for (int i = 0; i < 4; i++)
    fx_tensor_set_f64 (t, i, i == 3 ? last : i + 1);
  out = fx_value_tensor (t);
  g_assert_cmpint (fx_store_ensure_compile (store, input, &cid, &row, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_graph (store, row, "aot_inference", g, text, &graph_id, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_run (store, graph_id, &run, &run_id, NULL), ==, FX_OK);
  g_assert_cmpint (fx_run_outputs_store (store, run_id, &out, 1, FX_RUN_OUTPUTS_CAP, "spec, seed 0", "h", NULL), ==,
                   FX_OK);
  fx_value_clear (&out);
}

/* Two compiles whose stored runs of one configuration returned different numbers: the Diff view's runs table lists
   the output with its max abs, RMSE and failed same(), and the end-to-end time ratio; a compile against itself
   shows its output passing. */
static void
test_diff_runs (void)
{
  static const char text[] = "def forward(self, x: \"f32[4]\"):\n"
                             "    sin = torch.ops.aten.sin.default(x);  x = None\n"
                             "    return (sin,)\n";
  FxwDiffView *view = FXW_DIFF_VIEW (fxw_window_get_view (window, "diff"));
  g_autofree char *dir = g_dir_make_tmp ("fxw-diff-runs-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "runs.fxwb", NULL);
  g_autoptr(FxwSidebarItem) a = NULL;
  g_autoptr(FxwSidebarItem) b = NULL;
  fx_graph *g = NULL;
  fx_store *store = NULL;
  int64_t input = 0;
  const char *table;

  g_assert_cmpint (fx_parse_fx_code (text, strlen (text), "g.py", &g, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_open (path, TRUE, &store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_begin (store, NULL), ==, FX_OK);
  g_assert_cmpint (fx_store_add_input (store, "g.py", "fx_graph", "runs", 0, &input, NULL), ==, FX_OK);
  add_compile_with_run (store, input, 0, g, text, 4.0f);
  add_compile_with_run (store, input, 1, g, text, 4.5f);
  g_assert_cmpint (fx_store_commit (store, NULL), ==, FX_OK);
  fx_store_close (store);
  fx_graph_free (g);

  open_path (path);
  a = item_at (find_row ("[0/0]", NULL));
  b = item_at (find_row ("[1/0]", NULL));
  g_assert_true (fxw_window_diff_items (window, a, b));
  g_assert_true (fxw_test_wait (diff_shown, view, 20));
  g_assert_cmpstr (fxw_diff_view_get_page (view), ==, "diff");
  table = fxw_diff_view_get_runs_table (view);
  g_assert_nonnull (table);
  g_assert_true (g_str_has_prefix (table, "Output | Max abs | RMSE | Verdict\n"
                                          "== [0/0] -> [1/0]\nend to end |  |  | ×2.00\n"));
  /* one element off by 0.5 of four: RMSE 0.25 */
  g_assert_nonnull (strstr (table, "== [0/0] -> [1/0] aot_inference inductor@default\n#0 | 0.5 | 0.25 | fail\n"));
  g_assert_nonnull (strstr (fxw_diff_view_get_summary (view), "runs 1"));
  fxw_test_pump (200);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "17-diff-runs"));

  g_assert_true (fxw_window_diff_items (window, a, a));
  g_assert_true (fxw_test_wait (diff_shown, view, 20));
  table = fxw_diff_view_get_runs_table (view);
  g_assert_nonnull (table);
  g_assert_nonnull (strstr (table, "\n#0 | 0 | 0 | pass\n"));
  fxw_window_set_view (window, "table");
  {
    const char *suffixes[] = { "", "-wal", "-shm" };

    for (size_t i = 0; i < G_N_ELEMENTS (suffixes); i++)
      {
        g_autofree char *p = g_strconcat (path, suffixes[i], NULL);

        g_unlink (p);
      }
    g_rmdir (dir);
  }
}

/* Fit keeps every node clear of the legend and the top-right toolbar and of the bottom toolbar. */
static void
assert_fit_clear (FxwGraphCanvas *canvas)
{
  FxwGraph *graph = fxw_selection_get_graph (fxw_window_get_selection (window));
  double h, x, y;

  fxw_test_pump (300);   /* the first layout's fit-to-readable lands on the next allocation */
  fxw_graph_canvas_fit (canvas);
  fxw_test_pump (100);
  h = gtk_widget_get_height (GTK_WIDGET (canvas));
  for (guint i = 0; i < fxw_graph_get_n_nodes (graph); i++)
    {
      g_assert_true (fxw_graph_canvas_get_node_center (canvas, fxw_node_get_name (fxw_graph_get_node (graph, i)),
                                                       &x, &y));
      g_assert_cmpfloat (y, >, 8 + 58);       /* below the top-right toolbar and the legend */
      g_assert_cmpfloat (y, <, h - 8 - 56);   /* above the bottom toolbar */
    }
}

/* Ctrl+F opens the canvas search; typing selects the first node whose name holds the text and centres it; Enter
   moves on to the next match; Escape closes the bar. */
static void
test_graph_search (void)
{
  g_autofree char *path = fixture ("traces/mlp_module-cuda");
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwGraphView *view;
  FxwGraphCanvas *canvas;
  FxwGraph *graph;
  FxwNode *target, *first;
  const char *name;
  double x, y;

  open_path (path);
  fxw_window_set_view (window, "graph");
  view = FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph"));
  canvas = fxw_graph_view_get_canvas (view);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 20));
  fxw_test_pump (200);
  graph = fxw_selection_get_graph (selection);
  /* A selected node opens the provenance pane beside the canvas; have it open before measuring the centre. */
  fxw_selection_set_node (selection, fxw_graph_get_node (graph, 0));
  fxw_test_pump (200);
  fxw_graph_canvas_pan (canvas, 5000, 5000);

  /* Ctrl+F is the window's win.focus-search: on the canvas it opens the canvas's search, not the sidebar's. */
  gtk_widget_grab_focus (GTK_WIDGET (canvas));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.focus-search", NULL));
  fxw_test_pump (100);
  g_assert_true (fxw_graph_view_get_search_mode (view));

  target = fxw_graph_get_node (graph, fxw_graph_get_n_nodes (graph) - 2);
  name = fxw_node_get_name (target);
  g_assert_true (fxw_graph_view_search (view, name));
  g_assert_true (fxw_selection_get_node (selection) == target);
  fxw_test_pump (200);
  g_assert_true (fxw_graph_canvas_get_node_center (canvas, name, &x, &y));
  g_assert_cmpfloat (fabs (x - gtk_widget_get_width (GTK_WIDGET (canvas)) / 2.0), <, 2);
  g_assert_cmpfloat (fabs (y - gtk_widget_get_height (GTK_WIDGET (canvas)) / 2.0), <, 2);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "graph-search"));

  /* No match: the selection stays; an empty pattern matches nothing. */
  g_assert_false (fxw_graph_view_search (view, "no-such-node-name"));
  g_assert_true (fxw_selection_get_node (selection) == target);

  /* Case-insensitive, and next moves past the selected match. */
  first = fxw_graph_get_node (graph, 0);
  g_assert_true (fxw_graph_view_search (view, fxw_node_get_name (first)));
  g_assert_true (fxw_graph_canvas_search (canvas, "", TRUE) == FALSE);
  {
    g_autofree char *upper = g_utf8_strup (fxw_node_get_name (target), -1);

    g_assert_true (fxw_graph_canvas_search (canvas, upper, FALSE));
    g_assert_true (fxw_selection_get_node (selection) == target);
  }

  /* Escape in the entry is GtkSearchEntry's stop-search, which the bar answers by closing. */
  g_assert_nonnull (gtk_widget_get_ancestor (gtk_root_get_focus (GTK_ROOT (window)), GTK_TYPE_SEARCH_ENTRY));
  g_signal_emit_by_name (gtk_widget_get_ancestor (gtk_root_get_focus (GTK_ROOT (window)), GTK_TYPE_SEARCH_ENTRY),
                         "stop-search");
  fxw_test_pump (100);
  g_assert_false (fxw_graph_view_get_search_mode (view));
  /* See test_graph_context_menu: leave with no focus on the canvas. */
  gtk_root_set_focus (GTK_ROOT (window), NULL);
  fxw_window_set_view (window, "table");
}

static gboolean
file_has_prefix (const char *path, const char *prefix, gsize len)
{
  g_autofree char *contents = NULL;
  gsize size = 0;

  return g_file_get_contents (path, &contents, &size, NULL) && size > len && memcmp (contents, prefix, len) == 0;
}

/* Export writes the whole graph as the canvas draws it: an SVG with every node's name, a PNG that loads. */
static void
test_graph_export (void)
{
  g_autofree char *path = fixture ("traces/mlp_module-cuda");
  g_autofree char *dir = g_dir_make_tmp ("fxw-export-XXXXXX", NULL);
  g_autofree char *svg = g_build_filename (dir, "graph.svg", NULL);
  g_autofree char *png = g_build_filename (dir, "graph.png", NULL);
  g_autofree char *bad = g_build_filename (dir, "missing", "graph.png", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GFile) png_file = NULL;
  FxwGraphView *view;
  FxwGraphCanvas *canvas;
  double zoom;

  open_path (path);
  fxw_window_set_view (window, "graph");
  view = FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph"));
  canvas = fxw_graph_view_get_canvas (view);
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 20));
  assert_fit_clear (canvas);   /* a tall graph: Fit's zoom is set by the height left between the toolbars */
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "graph-fit"));
  fxw_graph_canvas_zoom (canvas, 1.7);
  zoom = fxw_graph_canvas_get_zoom (canvas);

  g_assert_true (fxw_graph_view_export (view, svg, &error));
  g_assert_no_error (error);
  g_assert_true (file_has_prefix (svg, "<?xml", 5));
  g_assert_true (fxw_graph_view_export (view, png, &error));
  g_assert_no_error (error);
  g_assert_true (file_has_prefix (png, "\x89PNG", 4));
  png_file = g_file_new_for_path (png);
  texture = gdk_texture_new_from_file (png_file, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (texture), >, 100);
  g_assert_cmpint (gdk_texture_get_height (texture), >, 100);
  /* The view the user was looking at is left as it was. */
  g_assert_cmpfloat (fxw_graph_canvas_get_zoom (canvas), ==, zoom);

  g_assert_false (fxw_graph_view_export (view, bad, &error));
  g_assert_nonnull (error);
  fxw_test_pump (200);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "graph-export-error"));
  g_unlink (svg);
  g_unlink (png);
  g_rmdir (dir);
  fxw_window_set_view (window, "table");
}

/* The kernel table sorts by the clicked column; positions (select, the node mark's scroll) follow the shown order. */
static void
test_kernels_sort (void)
{
  FxwKernelsView *view = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));
  guint n;

  open_demo ();
  select_row ("[0/0]", "dynamo");
  fxw_window_set_view (window, "kernels");
  n = fxw_kernels_view_get_n_kernels (view);
  g_assert_cmpuint (n, >=, 2);

  fxw_kernels_view_sort_by (view, 0, GTK_SORT_DESCENDING);
  for (guint i = 1; i < n; i++)
    g_assert_cmpint (g_utf8_collate (fxw_kernel_get_name (fxw_kernels_view_get_shown (view, i - 1)),
                                     fxw_kernel_get_name (fxw_kernels_view_get_shown (view, i))), >, 0);
  fxw_kernels_view_select (view, 0);
  g_assert_true (fxw_kernels_view_get_selected (view) == fxw_kernels_view_get_shown (view, 0));
  fxw_kernels_view_sort_by (view, 0, GTK_SORT_ASCENDING);
  for (guint i = 1; i < n; i++)
    g_assert_cmpint (g_utf8_collate (fxw_kernel_get_name (fxw_kernels_view_get_shown (view, i - 1)),
                                     fxw_kernel_get_name (fxw_kernels_view_get_shown (view, i))), <, 0);

  fxw_kernels_view_sort_by (view, 3, GTK_SORT_DESCENDING);
  for (guint i = 1; i < n; i++)
    g_assert_cmpuint (fxw_kernel_get_n_nodes (fxw_kernels_view_get_shown (view, i - 1)), >=,
                      fxw_kernel_get_n_nodes (fxw_kernels_view_get_shown (view, i)));

  /* Time: measured kernels in order, unmeasured ones after them. */
  fxw_kernels_view_sort_by (view, 4, GTK_SORT_ASCENDING);
  for (guint i = 1; i < n; i++)
    {
      double a = fxw_kernel_get_time_ms (fxw_kernels_view_get_shown (view, i - 1));
      double b = fxw_kernel_get_time_ms (fxw_kernels_view_get_shown (view, i));

      g_assert_true (isnan (b) || (!isnan (a) && a <= b));
    }
  fxw_test_pump (200);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "kernels-sorted"));
  fxw_kernels_view_select (view, G_MAXUINT);
  fxw_kernels_view_sort_by (view, G_MAXUINT, GTK_SORT_ASCENDING);
  g_assert_cmpint (fxw_kernel_get_ordinal (fxw_kernels_view_get_shown (view, 0)), <,
                   fxw_kernel_get_ordinal (fxw_kernels_view_get_shown (view, 1)));
}

static void
clipboard_text_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  *(char **) data = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), result, NULL);
}

static gboolean
has_text (gpointer data)
{
  return *(char **) data != NULL;
}

static gboolean
menu_gone (gpointer data)
{
  return fxw_graph_canvas_get_menu (data) == NULL;
}

/* A right click on a node selects it and opens its menu; Copy Name puts the name on the clipboard, Show Source and
   Show Kernel switch the window's view, Run & Compare opens the dialog; the Menu key opens it on the selected node. */
static void
test_graph_context_menu (void)
{
  FxwSelection *selection = fxw_window_get_selection (window);
  FxwGraphView *view = FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph"));
  FxwGraphCanvas *canvas = fxw_graph_view_get_canvas (view);
  GtkPopover *menu;
  GMenuModel *model;
  g_autofree char *copied = NULL;
  g_autoptr(GPtrArray) actions = g_ptr_array_new_with_free_func (g_free);
  double x, y;

  open_demo ();
  select_row ("[0/0]", "dynamo");
  fxw_window_set_view (window, "graph");
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 20));
  fxw_graph_view_set_fusion_overlay (view, TRUE);
  fxw_test_pump (200);
  g_assert_true (fxw_graph_canvas_get_node_center (canvas, "add", &x, &y));
  g_assert_false (fxw_graph_canvas_popup_menu (canvas, -50, -50));
  g_assert_true (fxw_graph_canvas_popup_menu (canvas, x, y));
  g_assert_cmpstr (fxw_node_get_name (fxw_selection_get_node (selection)), ==, "add");
  menu = fxw_graph_canvas_get_menu (canvas);
  fxw_test_pump (200);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (menu)));
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "graph-context-menu"));

  model = gtk_popover_menu_get_menu_model (GTK_POPOVER_MENU (menu));
  for (int i = 0; i < g_menu_model_get_n_items (model); i++)
    {
      GMenuModel *section = g_menu_model_get_item_link (model, i, G_MENU_LINK_SECTION);
      GMenuModel *items = section ? section : model;

      for (int j = 0; j < g_menu_model_get_n_items (items) && (section || j == i); j++)
        {
          char *action = NULL, *target = NULL;

          g_menu_model_get_item_attribute (items, section ? j : i, G_MENU_ATTRIBUTE_ACTION, "s", &action);
          g_menu_model_get_item_attribute (items, section ? j : i, G_MENU_ATTRIBUTE_TARGET, "s", &target);
          g_ptr_array_add (actions, target ? g_strdup_printf ("%s::%s", action, target) : g_strdup (action));
          g_free (action);
          g_free (target);
          if (!section)
            break;
        }
      g_clear_object (&section);
    }
  g_ptr_array_add (actions, NULL);
  g_assert_true (g_strv_contains ((const char * const *) actions->pdata, "canvas.copy-name"));
  g_assert_true (g_strv_contains ((const char * const *) actions->pdata, "win.view::code"));
  g_assert_true (g_strv_contains ((const char * const *) actions->pdata, "win.view::kernels"));
  g_assert_true (g_strv_contains ((const char * const *) actions->pdata, "win.run-compare"));
  g_assert_true (g_strv_contains ((const char * const *) actions->pdata, "win.run-upto::add"));
  gtk_popover_popdown (menu);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (canvas), "canvas.copy-name", NULL));
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (GTK_WIDGET (canvas)), NULL, clipboard_text_cb, &copied);
  g_assert_true (fxw_test_wait (has_text, &copied, 5));
  g_assert_cmpstr (copied, ==, "add");

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (canvas), "win.view", "s", "code"));
  g_assert_true (gtk_widget_get_mapped (fxw_window_get_view (window, "code")));
  fxw_window_set_view (window, "graph");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (canvas), "win.view", "s", "kernels"));
  g_assert_true (gtk_widget_get_mapped (fxw_window_get_view (window, "kernels")));
  g_assert_cmpuint (fxw_kernels_view_get_n_marked (FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"))), ==, 1);
  fxw_window_set_view (window, "graph");
  fxw_test_pump (100);

  /* The Menu key: the menu of the selected node. */
  gtk_widget_grab_focus (GTK_WIDGET (canvas));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (canvas), "canvas.menu", NULL));
  fxw_test_pump (100);
  menu = fxw_graph_canvas_get_menu (canvas);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (menu)));
  gtk_popover_popdown (menu);
  g_assert_true (fxw_test_wait (menu_gone, canvas, 5));
  fxw_graph_view_set_fusion_overlay (view, FALSE);
  /* With the canvas focused when the view changes, a later sidebar change hits a GTK critical in
     gtk_widget_is_ancestor under libadwaita (not chased: see the report); leave with no focus. */
  gtk_root_set_focus (GTK_ROOT (window), NULL);
  fxw_window_set_view (window, "table");
}

/* The Time overlay heats each node by its kernel's time: the slowest kernel's nodes are the reddest, nodes of no
   kernel stay pale; Fit keeps the legend and the floating toolbars off the nodes. */
static void
test_graph_heat (void)
{
  FxwGraphView *view = FXW_GRAPH_VIEW (fxw_window_get_view (window, "graph"));
  FxwGraphCanvas *canvas = fxw_graph_view_get_canvas (view);
  g_autoptr(GListStore) kernels = g_list_store_new (FXW_TYPE_KERNEL);
  g_autoptr(FxwKernel) fast = fxw_kernel_new (0, "triton_poi_fast", "triton", "cuda", "", "abs_1,add,x", "", 1.0);
  g_autoptr(FxwKernel) slow = fxw_kernel_new (1, "triton_per_slow", "triton", "cuda", "", "sum_1,lt", "", 4.0);
  GdkRGBA f_add, f_x, f_sum, f_in, f_off;

  open_demo ();
  select_row ("[0/0]", "dynamo");
  fxw_window_set_view (window, "graph");
  g_assert_true (fxw_test_wait (canvas_ready, canvas, 20));
  g_list_store_append (kernels, fast);
  g_list_store_append (kernels, slow);
  fxw_graph_view_set_kernels (view, G_LIST_MODEL (kernels), TRUE);
  g_assert_true (fxw_graph_canvas_get_node_fill (canvas, "add", &f_off));
  fxw_graph_view_set_heat_overlay (view, TRUE);
  fxw_test_pump (200);

  g_assert_true (fxw_graph_canvas_get_node_fill (canvas, "add", &f_add));
  g_assert_true (fxw_graph_canvas_get_node_fill (canvas, "x", &f_x));
  g_assert_true (fxw_graph_canvas_get_node_fill (canvas, "sum_1", &f_sum));
  g_assert_true (fxw_graph_canvas_get_node_fill (canvas, "l_a_", &f_in));
  g_assert_true (gdk_rgba_equal (&f_add, &f_x));                /* one kernel, one heat */
  g_assert_false (gdk_rgba_equal (&f_add, &f_off));             /* the overlay changed it */
  g_assert_cmpfloat (f_sum.green, <, f_add.green - 0.2);        /* 4 ms hotter than 1 ms */
  g_assert_cmpfloat (f_sum.red, >, f_sum.green);
  g_assert_cmpfloat (f_in.alpha, <, 1);                         /* no kernel: pale */
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "graph-heat"));

  /* Times change with the run: the heat follows. */
  {
    g_autoptr(GListStore) swapped = g_list_store_new (FXW_TYPE_KERNEL);
    g_autoptr(FxwKernel) fast2 = fxw_kernel_new (0, "triton_poi_fast", "triton", "cuda", "", "abs_1,add,x", "", 8.0);

    g_list_store_append (swapped, fast2);
    g_list_store_append (swapped, slow);
    fxw_graph_view_set_kernels (view, G_LIST_MODEL (swapped), TRUE);
    g_assert_true (fxw_graph_canvas_get_node_fill (canvas, "add", &f_add));
    g_assert_true (fxw_graph_canvas_get_node_fill (canvas, "sum_1", &f_sum));
    g_assert_cmpfloat (f_add.green, <, f_sum.green - 0.2);
  }

  assert_fit_clear (canvas);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "graph-heat-fit"));

  fxw_graph_view_set_heat_overlay (view, FALSE);
  g_assert_true (fxw_graph_canvas_get_node_fill (canvas, "add", &f_add));
  g_assert_true (gdk_rgba_equal (&f_add, &f_off));
  fxw_window_set_view (window, "table");
}

/* The Guards view's user lines are links when the file is on this machine: a copy of a real trace whose program
   path points at a file the test writes; a click opens the file at the stack's line. */
static void
test_guards_user_line (void)
{
  g_autofree char *log = fixture ("traces/breaks_recompiles-cpu/torch_trace/dedicated_log_torch_trace_1pjq7k53.log");
  g_autofree char *dir = g_dir_make_tmp ("fxw-userline-XXXXXX", NULL);
  g_autofree char *program = g_build_filename (dir, "breaks_recompiles.py", NULL);
  g_autofree char *copy = g_build_filename (dir, "dedicated_log_torch_trace_copy.log", NULL);
  g_autofree char *text = NULL, *title = NULL;
  g_autoptr(GString) lines = g_string_new (NULL);
  g_auto(GStrv) parts = NULL;
  g_autofree char *joined = NULL;
  GListModel *toplevels;
  GtkWindow *opened = NULL;

  for (int i = 1; i <= 80; i++)
    g_string_append_printf (lines, "# line %d\n", i);
  g_assert_true (g_file_set_contents (program, lines->str, -1, NULL));
  g_assert_true (g_file_get_contents (log, &text, NULL, NULL));
  parts = g_strsplit (text, "/work/main/.devscratch/breaks_recompiles.py", -1);
  joined = g_strjoinv (program, parts);
  g_assert_true (g_file_set_contents (copy, joined, -1, NULL));
  open_path (copy);
  select_row ("[0/0]", NULL);
  g_assert_false (fxw_window_activate_guards_link (window, "no_such_file.py"));
  g_assert_true (fxw_window_activate_guards_link (window, "breaks_recompiles.py"));
  title = g_strdup_printf ("%s:69", program);
  toplevels = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (toplevels) && opened == NULL; i++)
    {
      g_autoptr(GtkWindow) w = g_list_model_get_item (toplevels, i);

      if (g_strcmp0 (gtk_window_get_title (w), title) == 0)
        opened = w;
    }
  g_assert_nonnull (opened);
  gtk_window_destroy (opened);
  open_demo ();
  g_unlink (copy);
  g_unlink (program);
  g_rmdir (dir);
}

/* Run up to Here: the graph cut after a node runs (fxwb compare --upto); its runs attach to a stage of their own,
   "upto NODE", which the Compare view lists beside the whole graph's. */
static void
test_run_upto (void)
{
  g_autofree char *log = fixture ("traces/breaks_recompiles-cpu/torch_trace/dedicated_log_torch_trace_1pjq7k53.log");
  FxwCompareView *view = FXW_COMPARE_VIEW (fxw_window_get_view (window, "compare"));
  FxwRunDialog *dialog;
  gboolean found = FALSE;

  open_path (log);
  select_row ("[2/0]", "dynamo");
  dialog = g_object_ref (fxw_window_run_compare_upto (window, "y"));
  g_assert_cmpstr (fxw_run_dialog_get_upto (dialog), ==, "y");
  g_assert_true (fxw_run_dialog_set_column (dialog, "aot_eager", FALSE, NULL, NULL));
  g_assert_true (fxw_run_dialog_set_column (dialog, "inductor", FALSE, NULL, NULL));
  fxw_run_dialog_set_repeat (dialog, 2);
  g_assert_true (fxw_run_dialog_start (dialog, NULL));
  g_assert_true (fxw_test_wait (run_done, dialog, 120));
  g_test_message ("%s", fxw_run_dialog_get_log (dialog));
  g_assert_nonnull (strstr (fxw_run_dialog_get_log (dialog), "eager: ran, matches the reference"));
  g_assert_true (fxw_test_wait (not_busy, window, 20));
  fxw_test_pump (200);
  for (guint i = 0; i < fxw_compare_view_get_n_runs (view); i++)
    {
      g_autofree char *row = fxw_compare_view_dup_row_text (view, i);

      found |= g_str_has_prefix (row, "upto y\teager\t");
    }
  g_assert_true (found);
  if (gtk_widget_get_visible (GTK_WIDGET (dialog)))
    gtk_window_destroy (GTK_WINDOW (dialog));
  g_object_unref (dialog);
  open_demo ();
}

/* A training trace (torch 2.11, mlp_block on CUDA): its compile shows the Forward/Backward page, the aot_forward and
   aot_backward tables side by side with the 3 saved values marked in both; a backward node leads to the forward
   node it came from and its user line; the backward stages list the backward's kernels. A compile without a
   backward hides the page. */
static void
test_training_view (void)
{
  g_autofree char *log = fixture ("training/traces/mlp_block-cuda/torch_trace.log");
  FxwTrainingView *view = FXW_TRAINING_VIEW (fxw_window_get_view (window, "training"));
  AdwViewStack *stack = ADW_VIEW_STACK (gtk_widget_get_ancestor (GTK_WIDGET (view), ADW_TYPE_VIEW_STACK));
  FxwSelection *fw = fxw_training_view_get_forward_selection (view);
  FxwSelection *bw = fxw_training_view_get_backward_selection (view);
  FxwNode *node;

  open_path (log);
  select_row ("[0/0]", "aot_backward");
  g_assert_true (adw_view_stack_page_get_visible (adw_view_stack_get_page (stack, GTK_WIDGET (view))));
  g_assert_cmpuint (fxw_training_view_get_n_saved (view), ==, 3);
  g_assert_cmpuint (fxw_graph_get_n_nodes (fxw_selection_get_graph (fw)), ==, 12);
  g_assert_cmpuint (fxw_graph_get_n_nodes (fxw_selection_get_graph (bw)), ==, 19);
  /* saved: primals_3, primals_4, relu, marked on both sides */
  g_assert_true (fxw_selection_is_highlighted (fw, "relu"));
  g_assert_true (fxw_selection_is_highlighted (bw, "relu"));
  g_assert_true (fxw_selection_is_highlighted (bw, "primals_4"));
  g_assert_false (fxw_selection_is_highlighted (bw, "tangents_1"));
  g_assert_false (fxw_selection_is_highlighted (fw, "addmm"));

  /* a saved value leads to the forward node computing it */
  g_assert_true (fxw_selection_select_name (bw, "relu"));
  fxw_test_pump (50);
  g_assert_nonnull (strstr (fxw_training_view_get_provenance (view),
                            "relu: saved for backward by the forward node relu"));
  g_assert_nonnull (strstr (fxw_training_view_get_provenance (view), "programs.py:13: return self.fc2("));
  node = fxw_selection_get_node (fw);
  g_assert_nonnull (node);
  g_assert_cmpstr (fxw_node_get_name (node), ==, "relu");
  /* a gradient node, to the forward nodes of its user line (the trace keeps no seq_nr) */
  g_assert_true (fxw_selection_select_name (bw, "mm_1"));
  fxw_test_pump (50);
  g_assert_nonnull (strstr (fxw_training_view_get_provenance (view), "mm_1 comes from the forward node(s) permute, "));
  g_assert_nonnull (strstr (fxw_training_view_get_provenance (view), "(same user line)"));
  /* a forward op the partitioner recomputed in the backward, to that op */
  g_assert_true (fxw_selection_select_name (bw, "permute_1"));
  fxw_test_pump (50);
  g_assert_nonnull (strstr (fxw_training_view_get_provenance (view), "permute_1 recomputes the forward node permute_1"));
  g_assert_cmpstr (fxw_node_get_name (fxw_selection_get_node (fw)), ==, "permute_1");
  g_assert_true (fxw_selection_select_name (bw, "tangents_1"));
  fxw_test_pump (50);
  g_assert_nonnull (strstr (fxw_training_view_get_provenance (view), "the gradient flowing into the backward"));
  g_assert_true (fxw_selection_select_name (bw, "mm_1"));
  fxw_window_set_view (window, "training");
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "40-training-view"));

  /* the backward's kernels go with the backward stages, the forward's with the others */
  {
    FxwKernelsView *kernels = FXW_KERNELS_VIEW (fxw_window_get_view (window, "kernels"));
    FxwKernel *k;

    select_row ("[0/0]", "post_grad_backward");
    g_assert_cmpuint (fxw_kernels_view_get_n_kernels (kernels), ==, 2);
    fxw_kernels_view_select (kernels, 1);
    k = fxw_kernels_view_get_selected (kernels);
    g_assert_cmpstr (fxw_kernel_get_name (k), ==, "triton_per_fused_sum_threshold_backward_1");
    select_row ("[0/0]", "post_grad");
    g_assert_cmpuint (fxw_kernels_view_get_n_kernels (kernels), ==, 2);
    fxw_kernels_view_select (kernels, 0);
    k = fxw_kernels_view_get_selected (kernels);
    g_assert_cmpstr (fxw_kernel_get_name (k), ==, "triton_poi_fused_addmm_relu_0");
  }

  /* the demo's inference compile: no page */
  open_demo ();
  select_row ("[0/0]", "dynamo");
  g_assert_false (adw_view_stack_page_get_visible (adw_view_stack_get_page (stack, GTK_WIDGET (view))));
  g_assert_cmpuint (fxw_training_view_get_n_saved (view), ==, 0);
}

int
main (int argc, char *argv[])
{
  int ret;

  if (g_getenv ("DISPLAY") == NULL && g_getenv ("WAYLAND_DISPLAY") == NULL)
    {
      g_print ("1..0 # SKIP no display\n");
      return 77;
    }
  gtk_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  adw_init ();

  window = fxw_window_new (NULL);
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_present (GTK_WINDOW (window));

  g_test_add_func ("/FxwWindow/sidebar", test_sidebar);
  g_test_add_func ("/FxwWindow/sidebar-navigation", test_sidebar_navigation);
  g_test_add_func ("/FxwWindow/table-selection", test_table_selection);
  g_test_add_func ("/FxwWindow/graph-canvas", test_graph_canvas);
  g_test_add_func ("/FxwWindow/graph-search", test_graph_search);
  g_test_add_func ("/FxwWindow/graph-synthetic-modules", test_graph_synthetic_modules);
  g_test_add_func ("/FxwWindow/graph-huge-expanded", test_graph_huge_expanded);
  g_test_add_func ("/FxwWindow/graph-first-view", test_graph_first_view);
  g_test_add_func ("/FxwWindow/provenance-open-location", test_provenance_open_location);
  g_test_add_func ("/FxwWindow/bad-files", test_bad_files);
  g_test_add_func ("/FxwWindow/demo-workspace", test_demo_workspace);
  g_test_add_func ("/FxwWindow/demo-guards", test_demo_guards);
  g_test_add_func ("/FxwWindow/breaks-and-recompiles", test_breaks_and_recompiles);
  g_test_add_func ("/FxwWindow/run-compare", test_run_compare);
  g_test_add_func ("/FxwWindow/run-training", test_run_training);
  g_test_add_func ("/FxwWindow/run-upto", test_run_upto);
  g_test_add_func ("/FxwWindow/follow-trace", test_follow_trace);
  g_test_add_func ("/FxwWindow/kernels-view", test_kernels_view);
  g_test_add_func ("/FxwWindow/kernel-node-links", test_kernel_node_links);
  g_test_add_func ("/FxwWindow/fusion-overlay", test_fusion_overlay);
  g_test_add_func ("/FxwWindow/kernel-highlight", test_kernel_highlight);
  g_test_add_func ("/FxwWindow/fusion-clusters", test_fusion_clusters);
  g_test_add_func ("/FxwWindow/kernels-sort", test_kernels_sort);
  g_test_add_func ("/FxwWindow/graph-context-menu", test_graph_context_menu);
  g_test_add_func ("/FxwWindow/compare-view", test_compare_view);
  g_test_add_func ("/FxwWindow/import-trace", test_import_trace);
  g_test_add_func ("/FxwWindow/export-report", test_export_report);
  g_test_add_func ("/FxwWindow/import-cancel", test_import_cancel);
  g_test_add_func ("/FxwWindow/read-only-workspace", test_read_only_workspace);
  g_test_add_func ("/FxwWindow/diff-recompile", test_diff_recompile);
  g_test_add_func ("/FxwWindow/diff-with-menu", test_diff_with_menu);
  g_test_add_func ("/FxwWindow/summary", test_summary);
  g_test_add_func ("/FxwWindow/summary-export", test_summary_export);
  g_test_add_func ("/FxwWindow/ranks", test_ranks);
  g_test_add_func ("/FxwWindow/provenance-jump", test_provenance_jump);
  g_test_add_func ("/FxwWindow/guards-user-line", test_guards_user_line);
  g_test_add_func ("/FxwWindow/diff-runs", test_diff_runs);
  g_test_add_func ("/FxwWindow/graph-heat", test_graph_heat);
  g_test_add_func ("/FxwWindow/training-view", test_training_view);
  /* Last: its toasts stay a few seconds and would show in the other tests' screenshots. */
  g_test_add_func ("/FxwWindow/graph-export", test_graph_export);
  ret = g_test_run ();
  gtk_window_destroy (GTK_WINDOW (window));
  return ret;
}
