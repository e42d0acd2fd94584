/* fxw-provenance-pane.h: the provenance pane: stack trace, module stack, source_fn_stack and from_node of a node. */
#pragma once

#include <gtk/gtk.h>

#include "fxw-selection.h"

G_BEGIN_DECLS

#define FXW_TYPE_PROVENANCE_PANE (fxw_provenance_pane_get_type ())

G_DECLARE_FINAL_TYPE (FxwProvenancePane, fxw_provenance_pane, FXW, PROVENANCE_PANE, GtkWidget)

GtkWidget  *fxw_provenance_pane_new            (void);
void        fxw_provenance_pane_set_selection  (FxwProvenancePane *self,
                                                FxwSelection      *selection);
guint       fxw_provenance_pane_get_n_frames   (FxwProvenancePane *self);
gboolean    fxw_provenance_pane_activate_frame (FxwProvenancePane *self,
                                                guint              index);
const char *fxw_provenance_pane_get_title      (FxwProvenancePane *self);

G_END_DECLS
