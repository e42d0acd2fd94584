/* fxw-ranks-view.h: the Ranks view of a multi-rank workspace (one TORCH_TRACE per rank): its ranks and where they
   diverge (what `fxwb diff WORKSPACE --ranks` prints), each divergence one click from its compile or its diff. */
#pragma once

#include "fxw-workspace-page.h"

G_BEGIN_DECLS

#define FXW_TYPE_RANKS_VIEW (fxw_ranks_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwRanksView, fxw_ranks_view, FXW, RANKS_VIEW, FxwWorkspacePage)

/* The ranks and their divergences of the workspace (NULL: none) read in a thread and shown, a later call replacing
   them; whether the last one has been read and shown; the view as plain text, a line per divergence ("[1/1]
   compiles  ranks 1, 3  made on ..."), NULL before it is read. FxwWorkspacePage's, under the view's names. */
#define fxw_ranks_view_set_workspace(self, path) \
  fxw_workspace_page_set_workspace (FXW_WORKSPACE_PAGE (self), (path))
#define fxw_ranks_view_get_loaded(self) fxw_workspace_page_get_loaded (FXW_WORKSPACE_PAGE (self))
#define fxw_ranks_view_dup_text(self)   fxw_workspace_page_dup_text (FXW_WORKSPACE_PAGE (self))

/* The ranks of the workspace (0 before it is read, or when its traces name no rank). */
guint       fxw_ranks_view_get_n_ranks    (FxwRanksView *self);
/* How many divergences are listed. */
guint       fxw_ranks_view_get_n_divergences (FxwRanksView *self);
/* Activates the first button of divergence index (Compare or Show), as a click would; FALSE when it has none. */
gboolean    fxw_ranks_view_activate       (FxwRanksView *self,
                                           guint         index);

G_END_DECLS
