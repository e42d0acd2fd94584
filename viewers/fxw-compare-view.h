/* fxw-compare-view.h: the Compare view: the stored runs of a compile's graphs side by side, timed against the first. */
#pragma once

#include "fxw-kernel.h"
#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_COMPARE_VIEW (fxw_compare_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwCompareView, fxw_compare_view, FXW, COMPARE_VIEW, FxwView)

/* runs: FxwRun items in the order they were stored (NULL or none: the empty page). */
void       fxw_compare_view_set_runs     (FxwCompareView *self,
                                          GListModel     *runs);
guint      fxw_compare_view_get_n_runs   (FxwCompareView *self);
/* The cells of a run as shown, tab-separated (graph stage, backend, mode, device, options, compile, median, min,
   max, speedup, accuracy, kernels, peak memory, verdict, error); NULL past the end. */
char      *fxw_compare_view_dup_row_text (FxwCompareView *self,
                                          guint           row);
/* The kernel rows as shown: the nodes a row covers, then per run its kernels and times, tab-separated, a line a
   row; NULL when no run has stored kernels. */
char      *fxw_compare_view_dup_kernels_text (FxwCompareView *self);
/* The speedup of row against the first run (median / median), NAN when either was not timed. */
double     fxw_compare_view_get_speedup  (FxwCompareView *self,
                                          guint           row);

G_END_DECLS
