/* fxw-ranks-view.h: the Ranks view of a multi-rank workspace (one TORCH_TRACE per rank): its ranks and where they
   diverge (what `fxwb diff WORKSPACE --ranks` prints), each divergence one click from its compile or its diff. */
#pragma once

#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_RANKS_VIEW (fxw_ranks_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwRanksView, fxw_ranks_view, FXW, RANKS_VIEW, FxwView)

/* Reads the ranks and their divergences of the workspace (NULL: none) in a thread and shows them; a later call
   replaces it. */
void        fxw_ranks_view_set_workspace  (FxwRanksView *self,
                                           const char   *path);
/* Whether the last set_workspace has been read and shown. */
gboolean    fxw_ranks_view_get_loaded     (FxwRanksView *self);
/* The ranks of the workspace (0 before it is read, or when its traces name no rank). */
guint       fxw_ranks_view_get_n_ranks    (FxwRanksView *self);
/* How many divergences are listed. */
guint       fxw_ranks_view_get_n_divergences (FxwRanksView *self);
/* The view as plain text, a line per divergence ("[1/1]  compiles  ranks 1, 3  made on ..."); NULL before it is
   read. */
char       *fxw_ranks_view_dup_text       (FxwRanksView *self);
/* Activates the first button of divergence index (Compare or Show), as a click would; FALSE when it has none. */
gboolean    fxw_ranks_view_activate       (FxwRanksView *self,
                                           guint         index);

G_END_DECLS
