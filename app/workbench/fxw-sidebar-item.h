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

/* A row is a plain record: the document fills its fields while it loads (its worker makes the frame and compile
   rows, populate() the stages and the tree on the main thread), the window and the tests read them; nothing
   changes a row once it is in the tree. Owned fields are freed with the row. */
struct _FxwSidebarItem
{
  GObject parent_instance;

  FxwSidebarItemKind kind;
  char *title;                 /* never NULL */
  char *subtitle;              /* never NULL */
  char *status;                /* "ok", "graph-break", "recompiled", "failed" or "" (never NULL) */
  GListModel *children;        /* FxwSidebarItem (a GListStore); NULL for stages */
  FxwGraph *graph;             /* a stage's graph */

  /* A compile's, shared by its stages (fxw_sidebar_item_new_stage() copies them from the compile). */
  char *guards;                /* the Guards view's text (guards, recompile reasons, graph breaks); NULL when the
                                  document has none (folders of FX files) */
  GListModel *kernels;         /* FxwKernel; NULL when none are stored */
  gboolean kernels_by_name;    /* this stage's graph is the one whose node names the kernels list (the compile's
                                  first stage, Dynamo's graph) */
  GListModel *runs;            /* FxwRun of the compile's graphs; NULL when none */
  GListModel *fusion_groups;   /* FxwFusionGroup of the compile's ir_post_fusion.txt; NULL when none */
  gint64 compile_row;          /* the compile's row in the workspace file, which the Diff view reads it by; 0: none */
  int rank;                    /* the rank of the distributed run the row belongs to (its trace's file name says
                                  which); -1: none */
};

/* status NULL: "". */
FxwSidebarItem *fxw_sidebar_item_new        (FxwSidebarItemKind  kind,
                                             const char         *title,
                                             const char         *subtitle,
                                             const char         *status);
/* A stage of compile, with the compile's shared data (its kernels not by name); fxw_sidebar_item_append() it. */
FxwSidebarItem *fxw_sidebar_item_new_stage  (FxwSidebarItem     *compile,
                                             const char         *title,
                                             const char         *subtitle,
                                             FxwGraph           *graph);
void            fxw_sidebar_item_append     (FxwSidebarItem     *self,
                                             FxwSidebarItem     *child);
/* The first stage at or below this item, for selecting a compile or frame. */
FxwSidebarItem *fxw_sidebar_item_find_stage (FxwSidebarItem     *self);
/* Whether this item or any descendant matches a casefolded query. */
gboolean        fxw_sidebar_item_matches    (FxwSidebarItem     *self,
                                             const char         *query_folded);

G_END_DECLS
