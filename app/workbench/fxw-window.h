/* fxw-window.h: the main window over one document. */
#pragma once

#include <adwaita.h>

#include "fxw-document.h"
#include "fxw-viewers.h"

G_BEGIN_DECLS

#define FXW_TYPE_WINDOW (fxw_window_get_type ())

G_DECLARE_FINAL_TYPE (FxwWindow, fxw_window, FXW, WINDOW, AdwApplicationWindow)

FxwWindow    *fxw_window_new               (GtkApplication *application);
/* Loads file (an FX code file or a folder of them) off the main thread; the window stays usable meanwhile. */
void          fxw_window_open              (FxwWindow      *self,
                                            GFile          *file);
FxwDocument  *fxw_window_get_document      (FxwWindow      *self);
/* File → Export report…: writes the workspace's HTML report into folder off the main thread; the banner says when
   it is written ("Report written: FOLDER/index.html") or why not. */
void          fxw_window_export_report     (FxwWindow      *self,
                                            GFile          *folder);
FxwSelection *fxw_window_get_selection     (FxwWindow      *self);
/* For tests: the sidebar rows as shown (after the search filter), and the views. */
GListModel   *fxw_window_get_sidebar_model (FxwWindow      *self);
gboolean      fxw_window_select_stage      (FxwWindow      *self,
                                            guint          position);
void          fxw_window_set_view          (FxwWindow      *self,
                                            const char     *name);
GtkWidget    *fxw_window_get_view          (FxwWindow      *self,
                                            const char     *name);
const char   *fxw_window_get_banner_text   (FxwWindow      *self);
/* For tests: the Guards view's text (free it), NULL while it shows its empty page. */
char         *fxw_window_dup_guards_text   (FxwWindow      *self);
/* Opens Run & Compare on the graph on show (NULL, with a banner, when there is none); what it returns is the
   window's until closed. */
struct _FxwRunDialog *fxw_window_run_compare (FxwWindow *self);
/* Follows a TORCH_TRACE folder a running program writes into: `fxwb serve --follow` imports it into a new workspace
   and the window reopens that workspace as compiles arrive, keeping the selection. Opening another file stops it. */
gboolean      fxw_window_follow_trace      (FxwWindow      *self,
                                            GFile          *folder,
                                            GError        **error);
/* The workspace being filled while following, or NULL. */
const char   *fxw_window_get_follow_workspace (FxwWindow   *self);
gboolean      fxw_window_get_banner_visible (FxwWindow     *self);
/* Diffs two sidebar rows in the Diff view (two compiles of a workspace: guards, graph, kernels, code; else the
   graphs of two stages) off the main thread; ::diff-done when shown. FALSE when there is nothing to diff. */
gboolean      fxw_window_diff_items        (FxwWindow      *self,
                                            FxwSidebarItem *a,
                                            FxwSidebarItem *b);
/* Diffs two compiles of the workspace by their rows (labels name them in the Diff view); FALSE without a workspace. */
gboolean      fxw_window_diff_compile_rows (FxwWindow      *self,
                                            gint64          row_a,
                                            gint64          row_b,
                                            const char     *label_a,
                                            const char     *label_b);
/* The rank selector of a multi-rank workspace (hidden for fewer than two ranks): the sidebar lists rank's
   compiles, or every rank's (-1). FALSE for a rank the workspace does not have. */
gboolean      fxw_window_set_rank          (FxwWindow      *self,
                                            int             rank);
int           fxw_window_get_rank          (FxwWindow      *self);
GtkWidget    *fxw_window_get_rank_selector (FxwWindow      *self);
/* Whether the Inductor provenance mappings of the compile on show have been read (the provenance pane has them, or
   the compile has none); ::provenance-loaded says when. */
gboolean      fxw_window_get_provenance_loaded (FxwWindow  *self);
/* For tests: a node link ("post_grad:relu", "pre_grad:relu") of a kernel's source window that the provenance pane
   opened, clicked; FALSE when it has none. */
gboolean      fxw_window_activate_source_link (GtkWindow   *source,
                                               const char  *what);
/* The selected recompile against the compile whose guard failed ("Compare with Previous Compile"). */
gboolean      fxw_window_compare_previous  (FxwWindow      *self);
/* The sidebar context menu of a row ("Diff with" entries); fxw_window_diff_with (index) runs an entry. */
GMenuModel   *fxw_window_build_diff_menu   (FxwWindow      *self,
                                            FxwSidebarItem *source);
gboolean      fxw_window_diff_with         (FxwWindow      *self,
                                            guint          index);

/* Opens the first linked user line of the Guards view whose file ends with file_suffix, as a click does (tests);
   FALSE when there is none. */
gboolean    fxw_window_activate_guards_link (FxwWindow *self,
                                             const char *file_suffix);
/* Run & Compare on the graph on show up to node (the node menu's "Run up to Here"). */
struct _FxwRunDialog *fxw_window_run_compare_upto (FxwWindow *self,
                                           const char *node);
G_END_DECLS
