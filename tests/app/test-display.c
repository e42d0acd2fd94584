/* test-display.c: the display suite: opens fixture graphs in a real window under Xvfb, drives the views, takes screenshots. */
#include "fx-config.h"

#include <adwaita.h>
#include <glib/gstdio.h>

#include "display-util.h"
#include "fxw-window.h"
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

      switch (fxw_sidebar_item_get_kind (item))
        {
        case FXW_SIDEBAR_ITEM_FRAME:
          n_frames++;
          break;
        case FXW_SIDEBAR_ITEM_COMPILE:
          n_compiles++;
          g_assert_cmpstr (fxw_sidebar_item_get_status (item), ==, "ok");
          break;
        case FXW_SIDEBAR_ITEM_STAGE:
          n_stages++;
          g_assert_nonnull (fxw_sidebar_item_get_graph (item));
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
  fxw_test_pump (400);  /* search-changed is debounced */
  g_assert_cmpuint (g_list_model_get_n_items (rows), <, n_all);
  g_assert_cmpuint (g_list_model_get_n_items (rows), >=, 2);
  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      if (fxw_sidebar_item_get_kind (item) == FXW_SIDEBAR_ITEM_COMPILE)
        g_assert_nonnull (strstr (fxw_sidebar_item_get_title (item), "model__1_"));
    }
  gtk_editable_set_text (GTK_EDITABLE (search), "");
  fxw_test_pump (400);
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
  fxw_test_pump (300);
  g_free (fxw_test_screenshot (GTK_WIDGET (window), "08-graph-4000-nodes-expanded"));
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

  g_unlink (corrupt);
  g_unlink (binary);
  g_rmdir (dir);
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
  g_test_add_func ("/FxwWindow/graph-synthetic-modules", test_graph_synthetic_modules);
  g_test_add_func ("/FxwWindow/graph-huge-expanded", test_graph_huge_expanded);
  g_test_add_func ("/FxwWindow/provenance-open-location", test_provenance_open_location);
  g_test_add_func ("/FxwWindow/bad-files", test_bad_files);
  ret = g_test_run ();
  gtk_window_destroy (GTK_WINDOW (window));
  return ret;
}
