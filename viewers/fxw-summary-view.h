/* fxw-summary-view.h: the Summary view: a workspace at a glance, like tlparse's index: counts, the recompile chain of
   every frame as a timeline with the guard that failed, graph breaks with their user lines, failures. */
#pragma once

#include "fxw-workspace-page.h"

G_BEGIN_DECLS

#define FXW_TYPE_SUMMARY_VIEW (fxw_summary_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwSummaryView, fxw_summary_view, FXW, SUMMARY_VIEW, FxwWorkspacePage)

/* The workspace (NULL: none, e.g. a folder of FX files) read in a thread and shown, a later call replacing it; whether
   the last one has been read and shown; the view as plain text (what a user reads, for tests and copying), NULL
   before it is loaded. FxwWorkspacePage's, under the view's names. */
#define fxw_summary_view_set_workspace(self, path) \
  fxw_workspace_page_set_workspace (FXW_WORKSPACE_PAGE (self), (path))
#define fxw_summary_view_get_loaded(self) fxw_workspace_page_get_loaded (FXW_WORKSPACE_PAGE (self))
#define fxw_summary_view_dup_text(self)   fxw_workspace_page_dup_text (FXW_WORKSPACE_PAGE (self))

/* Activates the link of a compile ("0/1") as a click would; FALSE when the view has none. */
gboolean    fxw_summary_view_activate_compile (FxwSummaryView *self,
                                               const char     *compile_id);

G_END_DECLS
