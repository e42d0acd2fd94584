/* fxw-selection.h: the one selection every view shares: the graph on show, its selected node, highlighted nodes. */
#pragma once

#include "fxw-graph.h"

G_BEGIN_DECLS

#define FXW_TYPE_SELECTION (fxw_selection_get_type ())

G_DECLARE_FINAL_TYPE (FxwSelection, fxw_selection, FXW, SELECTION, GObject)

FxwSelection *fxw_selection_new            (void);
FxwGraph     *fxw_selection_get_graph      (FxwSelection *self);
void          fxw_selection_set_graph      (FxwSelection *self,
                                            FxwGraph     *graph);
FxwNode      *fxw_selection_get_node       (FxwSelection *self);
void          fxw_selection_set_node       (FxwSelection *self,
                                            FxwNode      *node);
gboolean      fxw_selection_select_name    (FxwSelection *self,
                                            const char   *name);
/* The highlight set: nodes drawn highlighted all at once (the nodes a selected kernel covers), by name in the
   current graph; NULL clears it. Every view draws it: the table marks the rows, the canvas fills the boxes and dims
   the rest, the code view marks the lines. The graph's FxwNodes mirror it in their "highlighted" property;
   ::highlight-changed tells the views. Changing the graph clears it. */
void          fxw_selection_set_highlight  (FxwSelection *self,
                                            const char * const *names);
gboolean      fxw_selection_is_highlighted (FxwSelection *self,
                                            const char   *name);
guint         fxw_selection_get_n_highlighted (FxwSelection *self);

/* A view's hold on the shared selection (*slot): drops the old selection's handlers for @view and its reference,
   takes @selection (NULL: lets go, as in dispose) and connects the view's callbacks to it (swapped; NULL: not
   wanted). */
void          fxw_selection_follow         (FxwSelection **slot,
                                            FxwSelection  *selection,
                                            gpointer       view,
                                            GCallback      graph_changed,
                                            GCallback      node_changed,
                                            GCallback      highlight_changed);

G_END_DECLS
