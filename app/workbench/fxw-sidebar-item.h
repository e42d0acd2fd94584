/* fxw-sidebar-item.h: one row of the sidebar tree: a frame, a compile of it, or a graph stage of a compile. */
#pragma once

#include <gio/gio.h>

#include "fxw-graph.h"
#include "fxw-kernel.h"

G_BEGIN_DECLS

typedef enum
{
  FXW_SIDEBAR_ITEM_FRAME,
  FXW_SIDEBAR_ITEM_COMPILE,
  FXW_SIDEBAR_ITEM_STAGE,
} FxwSidebarItemKind;

#define FXW_TYPE_SIDEBAR_ITEM (fxw_sidebar_item_get_type ())

G_DECLARE_FINAL_TYPE (FxwSidebarItem, fxw_sidebar_item, FXW, SIDEBAR_ITEM, GObject)

FxwSidebarItem    *fxw_sidebar_item_new          (FxwSidebarItemKind  kind,
                                                  const char         *title,
                                                  const char         *subtitle);
FxwSidebarItemKind fxw_sidebar_item_get_kind     (FxwSidebarItem     *self);
const char        *fxw_sidebar_item_get_title    (FxwSidebarItem     *self);
const char        *fxw_sidebar_item_get_subtitle (FxwSidebarItem     *self);
/* "ok", "graph-break", "recompiled", "failed" or "" */
const char        *fxw_sidebar_item_get_status   (FxwSidebarItem     *self);
void               fxw_sidebar_item_set_status   (FxwSidebarItem     *self,
                                                  const char         *status);
/* The Guards view's text of a compile (guards, recompile reasons, graph breaks), also set on its stages; NULL
   when the document has none (folders of FX files). */
const char        *fxw_sidebar_item_get_guards   (FxwSidebarItem     *self);
void               fxw_sidebar_item_set_guards   (FxwSidebarItem     *self,
                                                  const char         *text);
/* The compile's kernels (FxwKernel; NULL when none are stored), set on the compile and its stages. by_name: this
   stage's graph is the one whose node names the kernels list (the compile's first stage, Dynamo's graph). */
GListModel        *fxw_sidebar_item_get_kernels  (FxwSidebarItem     *self);
gboolean           fxw_sidebar_item_get_kernels_by_name (FxwSidebarItem *self);
void               fxw_sidebar_item_set_kernels  (FxwSidebarItem     *self,
                                                  GListModel         *kernels,
                                                  gboolean            by_name);
/* The stored runs of the compile's graphs (FxwRun; NULL when none), set on the compile and its stages. */
GListModel        *fxw_sidebar_item_get_runs     (FxwSidebarItem     *self);
void               fxw_sidebar_item_set_runs     (FxwSidebarItem     *self,
                                                  GListModel         *runs);
/* The fusion groups of the compile's ir_post_fusion.txt (FxwFusionGroup; NULL when none stored), set on the
   compile and its stages. */
GListModel        *fxw_sidebar_item_get_fusion_groups (FxwSidebarItem *self);
void               fxw_sidebar_item_set_fusion_groups (FxwSidebarItem *self,
                                                       GListModel     *groups);
/* The compile's row in the workspace file (compiles and their stages read from a workspace; 0: none), which the
   Diff view reads the compile by. */
gint64             fxw_sidebar_item_get_compile_row (FxwSidebarItem *self);
void               fxw_sidebar_item_set_compile_row (FxwSidebarItem *self,
                                                     gint64          row);
/* The rank of a distributed run the row belongs to (its trace's file name says which); -1: none. */
int                fxw_sidebar_item_get_rank     (FxwSidebarItem     *self);
void               fxw_sidebar_item_set_rank     (FxwSidebarItem     *self,
                                                  int                 rank);
/* Children (NULL for stages). */
GListModel        *fxw_sidebar_item_get_children (FxwSidebarItem     *self);
void               fxw_sidebar_item_append       (FxwSidebarItem     *self,
                                                  FxwSidebarItem     *child);
FxwGraph          *fxw_sidebar_item_get_graph    (FxwSidebarItem     *self);
void               fxw_sidebar_item_set_graph    (FxwSidebarItem     *self,
                                                  FxwGraph           *graph);
/* The first stage at or below this item, for selecting a compile or frame. */
FxwSidebarItem    *fxw_sidebar_item_find_stage   (FxwSidebarItem     *self);
/* Whether this item or any descendant matches a casefolded query. */
gboolean           fxw_sidebar_item_matches      (FxwSidebarItem     *self,
                                                  const char         *query_folded);

G_END_DECLS
