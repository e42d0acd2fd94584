/* fxw-graph-canvas.h: the interactive graph diagram: Graphviz layout off the main thread, drawn with GtkSnapshot. */
#pragma once

#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_GRAPH_CANVAS (fxw_graph_canvas_get_type ())

G_DECLARE_FINAL_TYPE (FxwGraphCanvas, fxw_graph_canvas, FXW, GRAPH_CANVAS, FxwView)

/* FxwView's selection call under the canvas's name. */
#define fxw_graph_canvas_set_selection(self, selection) fxw_view_set_selection (FXW_VIEW (self), (selection))

gboolean   fxw_graph_canvas_get_busy          (FxwGraphCanvas *self);
/* Boxes (nodes or collapsed modules), edges and module clusters of the current layout. */
guint      fxw_graph_canvas_get_n_boxes       (FxwGraphCanvas *self);
guint      fxw_graph_canvas_get_n_edges       (FxwGraphCanvas *self);
guint      fxw_graph_canvas_get_n_clusters    (FxwGraphCanvas *self);
/* Graphs with more nodes than this open collapsed at module level. */
void       fxw_graph_canvas_set_collapse_threshold (FxwGraphCanvas *self,
                                                    guint           n_nodes);
void       fxw_graph_canvas_set_edge_labels   (FxwGraphCanvas *self,
                                               gboolean        edge_labels);
void       fxw_graph_canvas_set_collapsed     (FxwGraphCanvas *self,
                                               const char     *module_path,
                                               gboolean        collapsed);
void       fxw_graph_canvas_collapse_all      (FxwGraphCanvas *self);
void       fxw_graph_canvas_expand_all        (FxwGraphCanvas *self);
void       fxw_graph_canvas_zoom              (FxwGraphCanvas *self,
                                               double          factor);
void       fxw_graph_canvas_fit               (FxwGraphCanvas *self);
void       fxw_graph_canvas_pan               (FxwGraphCanvas *self,
                                               double          dx,
                                               double          dy);
double     fxw_graph_canvas_get_zoom          (FxwGraphCanvas *self);
/* Simulates a primary click at widget coordinates (tests). */
void       fxw_graph_canvas_click             (FxwGraphCanvas *self,
                                               double          x,
                                               double          y,
                                               int             n_press);
/* Widget coordinates of the centre of the box that shows node_name; FALSE when not laid out. */
gboolean   fxw_graph_canvas_get_node_center   (FxwGraphCanvas *self,
                                               const char     *node_name,
                                               double         *x,
                                               double         *y);
/* The fusion overlay: kernels (FxwKernel items of the graph's compile; NULL: none) colour the nodes they compute
   while show_fusion is on, with a legend; hovering a node names its kernels either way. by_name: see
   fxw_kernel_covers. */
void       fxw_graph_canvas_set_kernels       (FxwGraphCanvas *self,
                                               GListModel     *kernels,
                                               gboolean        by_name);
void       fxw_graph_canvas_set_show_fusion   (FxwGraphCanvas *self,
                                               gboolean        show);
gboolean   fxw_graph_canvas_get_show_fusion   (FxwGraphCanvas *self);
/* The index of the kernel colouring node_name, -1 for none; how many kernels colour a node of this graph. */
int        fxw_graph_canvas_get_node_kernel   (FxwGraphCanvas *self,
                                               const char     *node_name);
guint      fxw_graph_canvas_get_n_fusion_groups (FxwGraphCanvas *self);
/* The hover tooltip of the box showing node_name (markup; free it), NULL when not laid out. */
char      *fxw_graph_canvas_dup_tooltip       (FxwGraphCanvas *self,
                                               const char     *node_name);
/* Fusion groups (FxwFusionGroup items of the graph's compile, from ir_post_fusion.txt; NULL: none) drawn as
   clusters, one rounded box per group labelled with its kernel, while the overlay is on. on_this_graph: the graph is
   the one whose node names the groups' origins use (the post-grad graph); otherwise the overlay says where they are
   drawn. Module clusters and collapsing are set aside while groups are drawn. */
void       fxw_graph_canvas_set_fusion_groups (FxwGraphCanvas *self,
                                               GListModel     *groups,
                                               gboolean        on_this_graph);
/* Fusion-group clusters of the current layout; the boxes inside the one of group_name (-1: not drawn). */
guint      fxw_graph_canvas_get_n_fusion_clusters (FxwGraphCanvas *self);
int        fxw_graph_canvas_get_fusion_cluster_members (FxwGraphCanvas *self,
                                                        const char     *group_name);
/* The overlay's note about where the groups are (NULL: none). */
const char *fxw_graph_canvas_get_fusion_note  (FxwGraphCanvas *self);
/* Boxes drawn highlighted (the selection's highlight set; a collapsed module holding such a node counts once). */
guint      fxw_graph_canvas_get_n_highlighted_boxes (FxwGraphCanvas *self);
/* Seconds the last layout took in its worker thread. */
double     fxw_graph_canvas_get_layout_seconds (FxwGraphCanvas *self);

/* The context menu of the node box at widget point (x, y): selects the node and pops the menu up (Copy Name, Show
   Source, Show Kernel where a kernel computes it, Run & Compare…). FALSE where no node is. */
gboolean   fxw_graph_canvas_popup_menu        (FxwGraphCanvas *self,
                                               double          x,
                                               double          y);
GtkPopover *fxw_graph_canvas_get_menu         (FxwGraphCanvas *self);
/* The timing overlay: nodes heated by the time of the kernel computing them (FxwKernel time_ms, the latest stored
   run), pale for fast, red for the slowest; pale grey where no kernel or no time. */
void       fxw_graph_canvas_set_show_heat     (FxwGraphCanvas *self,
                                               gboolean        show);
/* The fill the box of node_name is drawn with (tests); FALSE when not laid out. */
gboolean   fxw_graph_canvas_get_node_fill     (FxwGraphCanvas *self,
                                               const char     *node_name,
                                               GdkRGBA        *fill);
/* Finds the next node whose name holds text (case-insensitive; next: after the selected one, else from it),
   selects it and centres it. FALSE when none matches. */
gboolean   fxw_graph_canvas_search            (FxwGraphCanvas *self,
                                               const char     *text,
                                               gboolean        next);
/* Writes the whole graph as drawn (overlays included) to path: SVG when it ends in .svg, PNG otherwise. */
gboolean   fxw_graph_canvas_export            (FxwGraphCanvas *self,
                                               const char     *path,
                                               GError        **error);
/* Dot text to SVG (g_malloc'd; NULL when Graphviz cannot), with the canvas's Graphviz context and lock, so a
   report can be drawn off the main thread while the canvas lays out (an fx_report_svg_fn). */
char      *fxw_graph_canvas_render_svg        (const char *dot, size_t len, void *user_data);

/* Where the minimap was last drawn (widget coordinates); FALSE when the graph fits and none is shown. A click on it
   centres the view on that point of the graph. */
gboolean   fxw_graph_canvas_get_minimap       (FxwGraphCanvas *self,
                                               double         *x,
                                               double         *y,
                                               double         *w,
                                               double         *h);
/* Where the fusion legend (top left) ends in widget coordinates, 0 when none is drawn; Fit keeps nodes below it. */
double     fxw_graph_canvas_get_legend_bottom (FxwGraphCanvas *self);
G_END_DECLS
