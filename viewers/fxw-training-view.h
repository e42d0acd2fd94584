/* fxw-training-view.h: the Forward/Backward view of a training compile: its AOT forward and backward graphs side by
   side, the values saved for backward highlighted in both, and where a backward node came from. */
#pragma once

#include "fxw-graph.h"
#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_TRAINING_VIEW (fxw_training_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwTrainingView, fxw_training_view, FXW, TRAINING_VIEW, FxwView)

GtkWidget    *fxw_training_view_new                (void);
/* The compile's aot_forward and aot_backward graphs; either NULL: the view says it is no training compile. */
void          fxw_training_view_set_graphs         (FxwTrainingView *self,
                                                    FxwGraph        *forward,
                                                    FxwGraph        *backward);
/* The forward and backward tables' selections: selecting a backward node selects the forward node it came from. */
FxwSelection *fxw_training_view_get_forward_selection  (FxwTrainingView *self);
FxwSelection *fxw_training_view_get_backward_selection (FxwTrainingView *self);
/* Values saved for backward (0 without graphs, or when the two are not one partition). */
guint         fxw_training_view_get_n_saved        (FxwTrainingView *self);
/* The provenance line under the tables: the selected backward node's forward nodes and user line ("" when none). */
const char   *fxw_training_view_get_provenance     (FxwTrainingView *self);

G_END_DECLS
