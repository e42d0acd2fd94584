/* fxw-run-dialog.h: Run & Compare: a matrix of backend × mode × options, run by `fxwb compare` in the background. */
#pragma once

#include "fxw-tool-window.h"

G_BEGIN_DECLS

#define FXW_TYPE_RUN_DIALOG (fxw_run_dialog_get_type ())

G_DECLARE_FINAL_TYPE (FxwRunDialog, fxw_run_dialog, FXW, RUN_DIALOG, FxwToolWindow)

/* source: what fxwb compare takes ("run.fxwb:0/1" or an FX file); stage: the graph stage of a workspace compile
   (NULL for a file); workspace: where the runs are stored (the source's own workspace, or a new one for a file).
   Emits "finished" (gboolean: every column ran) when the last column is done or the run was cancelled. */
FxwRunDialog *fxw_run_dialog_new            (GtkWindow    *parent,
                                             const char   *source,
                                             const char   *stage,
                                             const char   *workspace);
const char   *fxw_run_dialog_get_workspace  (FxwRunDialog *self);
/* What fxwb compare runs ("run.fxwb:rank3/1/1"). */
const char   *fxw_run_dialog_get_source     (FxwRunDialog *self);

/* For tests and scripting the dialog: the column specs on offer ("eager", "inductor", "torch:inductor"), checking
   one with a mode and options ("cpp.threads=1, epilogue_fusion=False"), starting, cancelling, reading state. */
char        **fxw_run_dialog_dup_specs      (FxwRunDialog *self);
gboolean      fxw_run_dialog_set_column     (FxwRunDialog *self,
                                             const char   *spec,
                                             gboolean      active,
                                             const char   *mode,
                                             const char   *options);
void          fxw_run_dialog_set_repeat     (FxwRunDialog *self,
                                             int           repeat);
/* Validates every checked column as the CLI does; on an error shows it beside the column and returns FALSE. */
gboolean      fxw_run_dialog_start          (FxwRunDialog *self,
                                             GError      **error);
void          fxw_run_dialog_cancel         (FxwRunDialog *self);
void          fxw_run_dialog_set_training   (FxwRunDialog *self,
                                             gboolean      training,
                                             int           steps,
                                             const char   *optimizer);
gboolean      fxw_run_dialog_get_training   (FxwRunDialog *self);
gboolean      fxw_run_dialog_get_running    (FxwRunDialog *self);
double        fxw_run_dialog_get_progress   (FxwRunDialog *self);
/* The log of the runs so far: one line per column with its outcome, and fxwb's errors. */
const char   *fxw_run_dialog_get_log        (FxwRunDialog *self);


/* Runs the graph up to node (its value the only output: fxwb compare --upto); NULL: the whole graph. */
void          fxw_run_dialog_set_upto      (FxwRunDialog *self,
                                            const char   *node);
const char   *fxw_run_dialog_get_upto      (FxwRunDialog *self);
G_END_DECLS
