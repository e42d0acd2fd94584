/* fxw-provenance-pane.h: the provenance pane: stack trace, module stack, source_fn_stack and from_node of a node. */
#pragma once

#include "fxw-provenance-map.h"
#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_PROVENANCE_PANE (fxw_provenance_pane_get_type ())

G_DECLARE_FINAL_TYPE (FxwProvenancePane, fxw_provenance_pane, FXW, PROVENANCE_PANE, FxwView)

/* FxwView's selection calls under the view's names. */
#define fxw_provenance_pane_set_selection(self, selection) fxw_view_set_selection (FXW_VIEW (self), (selection))

guint       fxw_provenance_pane_get_n_frames   (FxwProvenancePane *self);
gboolean    fxw_provenance_pane_activate_frame (FxwProvenancePane *self,
                                                guint              index);
const char *fxw_provenance_pane_get_title      (FxwProvenancePane *self);
/* Inductor's provenance for the graph on show: its nodes are side's (FX_PROV_PRE_GRAD or FX_PROV_POST_GRAD) in map;
   map NULL: none. A selected node then lists its post-grad (or pre-grad) nodes, emitting open-node (side name,
   node) when one is clicked, and its kernels, emitting open-code (code, line, title) for its definition or launch. */
void        fxw_provenance_pane_set_inductor   (FxwProvenancePane *self,
                                                FxwProvenanceMap  *map,
                                                fx_prov_side       side);
FxwProvenanceMap *fxw_provenance_pane_get_inductor (FxwProvenancePane *self);
/* For tests: the Inductor section as text ("post_grad: permute, addmm\nkernel: ..."; NULL while hidden), and a
   click on its link named what: a node name, a kernel "name:handle", or "launch name:handle". */
const char *fxw_provenance_pane_get_inductor_text (FxwProvenancePane *self);
gboolean    fxw_provenance_pane_activate_inductor (FxwProvenancePane *self,
                                                   const char        *what);

G_END_DECLS
