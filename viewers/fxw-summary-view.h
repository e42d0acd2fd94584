/* fxw-summary-view.h: the Summary view: a workspace at a glance, like tlparse's index: counts, the recompile chain of
   every frame as a timeline with the guard that failed, graph breaks with their user lines, failures. */
#pragma once

#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_SUMMARY_VIEW (fxw_summary_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwSummaryView, fxw_summary_view, FXW, SUMMARY_VIEW, FxwView)

/* Reads the workspace (NULL: none, e.g. a folder of FX files) in a thread and shows it; a later call replaces it. */
void        fxw_summary_view_set_workspace (FxwSummaryView *self,
                                            const char     *path);
/* Whether the last set_workspace has been read and shown. */
gboolean    fxw_summary_view_get_loaded    (FxwSummaryView *self);
/* The view as plain text (what a user reads, for tests and copying); NULL before it is loaded. */
char       *fxw_summary_view_dup_text      (FxwSummaryView *self);
/* Activates the link of a compile ("0/1") as a click would; FALSE when the view has none. */
gboolean    fxw_summary_view_activate_compile (FxwSummaryView *self,
                                               const char     *compile_id);

G_END_DECLS
