/* fxw-diff-view.h: the Diff view: two compiles or graphs split side by side, guards, kernels and code diffed beside. */
#pragma once

#include "fxw-diff-canvas.h"
#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_DIFF_VIEW (fxw_diff_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwDiffView, fxw_diff_view, FXW, DIFF_VIEW, FxwView)

/* Shows diff (taken; NULL: the empty page). keep: an object the diff's graphs belong to (the FxwGraphs of a stage
   diff), held while the diff is shown; NULL when the diff owns them. */
void           fxw_diff_view_set_diff       (FxwDiffView *self,
                                             fx_diff     *diff,
                                             GObject     *keep_a,
                                             GObject     *keep_b);
/* While a diff is computed: a spinner page; an error replaces it with its message. */
void           fxw_diff_view_set_busy       (FxwDiffView *self,
                                             const char  *what);
void           fxw_diff_view_set_error      (FxwDiffView *self,
                                             const char  *message);
const fx_diff *fxw_diff_view_get_diff       (FxwDiffView *self);
FxwDiffCanvas *fxw_diff_view_get_canvas     (FxwDiffView *self);
/* For tests: the page shown ("empty", "busy", "error", "diff"), the summary line, the text beside the graphs
   (guards, kernels, code, metrics; free it) and the selected pair's changes. */
const char    *fxw_diff_view_get_page       (FxwDiffView *self);
const char    *fxw_diff_view_get_summary    (FxwDiffView *self);
char          *fxw_diff_view_dup_side_text  (FxwDiffView *self);
const char    *fxw_diff_view_get_detail     (FxwDiffView *self);
/* For tests: the runs table, a line per row with " | " between cells (header first); NULL while it is hidden. */
const char    *fxw_diff_view_get_runs_table (FxwDiffView *self);

G_END_DECLS
