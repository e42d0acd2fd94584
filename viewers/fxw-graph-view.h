/* fxw-graph-view.h: the Graph view: an FxwGraphCanvas with zoom, fit and collapse controls. */
#pragma once

#include "fxw-graph-canvas.h"
#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_GRAPH_VIEW (fxw_graph_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwGraphView, fxw_graph_view, FXW, GRAPH_VIEW, FxwView)

GtkWidget      *fxw_graph_view_new           (void);
FxwGraphCanvas *fxw_graph_view_get_canvas    (FxwGraphView *self);
/* FxwView's selection calls under the view's names. */
#define fxw_graph_view_set_selection(self, selection) fxw_view_set_selection (FXW_VIEW (self), (selection))

/* The compile's kernels for the fusion overlay (see fxw_graph_canvas_set_kernels); the Fusion toggle works while
   there are some. */
void            fxw_graph_view_set_kernels   (FxwGraphView *self,
                                              GListModel   *kernels,
                                              gboolean      by_name);
/* The compile's fusion groups (see fxw_graph_canvas_set_fusion_groups), drawn as clusters under the same toggle. */
void            fxw_graph_view_set_fusion_groups (FxwGraphView *self,
                                                  GListModel   *groups,
                                                  gboolean      on_this_graph);
/* Turns the Fusion toggle (and so the overlay) on or off. */
void            fxw_graph_view_set_fusion_overlay (FxwGraphView *self,
                                                   gboolean      show);
gboolean        fxw_graph_view_get_fusion_overlay (FxwGraphView *self);

/* Opens the search bar with text and jumps to the first node whose name holds it (FALSE: none). */
gboolean        fxw_graph_view_search          (FxwGraphView *self,
                                                const char   *text);
gboolean        fxw_graph_view_get_search_mode (FxwGraphView *self);
/* Writes the canvas to path (SVG or PNG by the suffix) and says so in a toast. */
gboolean        fxw_graph_view_export          (FxwGraphView *self,
                                                const char   *path,
                                                GError      **error);

/* The Time toggle: nodes heated by their kernel's time. */
void            fxw_graph_view_set_heat_overlay (FxwGraphView *self,
                                                 gboolean      show);

G_END_DECLS
