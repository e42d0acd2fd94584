/* fxw-diff-canvas.h: two graphs drawn side by side, matched nodes on one row, changes coloured (a graph diff). */
#pragma once

#include <gtk/gtk.h>

#include "fx/diff.h"

G_BEGIN_DECLS

#define FXW_TYPE_DIFF_CANVAS (fxw_diff_canvas_get_type ())

G_DECLARE_FINAL_TYPE (FxwDiffCanvas, fxw_diff_canvas, FXW, DIFF_CANVAS, GtkWidget)

/* The diff whose node pairing is drawn (not owned: keep it alive while set; NULL clears). */
void        fxw_diff_canvas_set_diff         (FxwDiffCanvas *self,
                                              const fx_diff *diff);
guint       fxw_diff_canvas_get_n_rows       (FxwDiffCanvas *self);
/* The selected row (G_MAXUINT: none); selecting a row selects both nodes of the pair. Emits ::row-selected. */
guint       fxw_diff_canvas_get_selected     (FxwDiffCanvas *self);
void        fxw_diff_canvas_select_row       (FxwDiffCanvas *self,
                                              guint          row);
/* Selects the row of node `name` on side 0 (a) or 1 (b); FALSE when that side has no such node. */
gboolean    fxw_diff_canvas_select_node      (FxwDiffCanvas *self,
                                              int            side,
                                              const char    *name);
/* The pair of a row (NULL past the end). */
const fx_diff_pair *fxw_diff_canvas_get_pair (FxwDiffCanvas *self,
                                              guint          row);
/* Widget coordinates of the centre of a row's box on a side; FALSE when the side has no node there. */
gboolean    fxw_diff_canvas_get_box_center   (FxwDiffCanvas *self,
                                              guint          row,
                                              int            side,
                                              double        *x,
                                              double        *y);
/* Selects the next (direction > 0) or previous changed, added or removed row after the selection, wrapping around;
   returns the row, G_MAXUINT when nothing changed. */
guint       fxw_diff_canvas_select_change    (FxwDiffCanvas *self,
                                              int            direction);
/* Simulates a primary click at widget coordinates (tests). */
void        fxw_diff_canvas_click            (FxwDiffCanvas *self,
                                              double         x,
                                              double         y);

G_END_DECLS
