/* fxw-minify-window.h: the Minify window: runs `fxwb minify --json` on a graph, shows its progress live (nodes left
   over candidates), cancels and resumes it, then shows the minimized graph beside the original with the kept nodes
   highlighted and saves repro.py. */
#pragma once

#include "fxw-tool-window.h"

#include "fx/ir.h"

G_BEGIN_DECLS

#define FXW_TYPE_MINIFY_WINDOW (fxw_minify_window_get_type ())
G_DECLARE_FINAL_TYPE (FxwMinifyWindow, fxw_minify_window, FXW, MINIFY_WINDOW, FxwToolWindow)

typedef enum
{
  FXW_MINIFY_IDLE,
  FXW_MINIFY_RUNNING,
  FXW_MINIFY_DONE,          /* reproduced and minimized: the result is on show */
  FXW_MINIFY_CANCELLED,     /* stopped: Resume continues from the checkpoint */
  FXW_MINIFY_NOT_FAILING,   /* the graph does not fail that way */
  FXW_MINIFY_FAILED,        /* fxwb could not run or reported an error */
} FxwMinifyState;

/* graph is copied. title names it in the window's title. */
FxwMinifyWindow *fxw_minify_window_new (GtkWindow *parent, const fx_graph *graph, const char *title);

/* What the form's controls hold, for scripts and tests (options: "K=V" strings, NULL-terminated). */
void            fxw_minify_window_configure   (FxwMinifyWindow    *self,
                                               const char         *backend,
                                               const char * const *options,
                                               const char         *fail_on,
                                               double              timeout_s);
void            fxw_minify_window_start       (FxwMinifyWindow *self);
void            fxw_minify_window_cancel      (FxwMinifyWindow *self);
void            fxw_minify_window_resume      (FxwMinifyWindow *self);
FxwMinifyState  fxw_minify_window_get_state   (FxwMinifyWindow *self);
/* The status line (strategy, nodes left, candidates, seconds; or the outcome). */
const char     *fxw_minify_window_get_status  (FxwMinifyWindow *self);
/* Points of the progress chart (one per shrink, plus the start). */
guint           fxw_minify_window_get_n_points (FxwMinifyWindow *self);
/* The call nodes of the minimized graph that the original has (highlighted on the original). */
guint           fxw_minify_window_get_n_kept  (FxwMinifyWindow *self);
const fx_graph *fxw_minify_window_get_result  (FxwMinifyWindow *self);
gboolean        fxw_minify_window_save_repro  (FxwMinifyWindow *self,
                                               const char      *path,
                                               GError         **error);

G_END_DECLS
