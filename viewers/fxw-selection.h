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
/* Nodes drawn as highlighted (the nodes a kernel covers); names of the current graph. */
void          fxw_selection_set_highlight  (FxwSelection *self,
                                            const char * const *names);
gboolean      fxw_selection_is_highlighted (FxwSelection *self,
                                            const char   *name);
guint         fxw_selection_get_n_highlighted (FxwSelection *self);

G_END_DECLS
