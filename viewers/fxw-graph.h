/* fxw-graph.h: FxwGraph, a GListModel of FxwNode over one engine fx_graph, and FxwNode, one row of it. */
#pragma once

#include <gio/gio.h>

#include "fx/ir.h"

G_BEGIN_DECLS

#define FXW_TYPE_GRAPH (fxw_graph_get_type ())
#define FXW_TYPE_NODE  (fxw_node_get_type ())

G_DECLARE_FINAL_TYPE (FxwGraph, fxw_graph, FXW, GRAPH, GObject)
G_DECLARE_FINAL_TYPE (FxwNode, fxw_node, FXW, NODE, GObject)

FxwGraph       *fxw_graph_new                (fx_graph      *graph,
                                              const char    *title);
const fx_graph *fxw_graph_get_graph          (FxwGraph      *self);
const char     *fxw_graph_get_title          (FxwGraph      *self);
guint           fxw_graph_get_n_nodes        (FxwGraph      *self);
FxwNode        *fxw_graph_get_node           (FxwGraph      *self,
                                              guint          index);
FxwNode        *fxw_graph_lookup             (FxwGraph      *self,
                                              const char    *name);
FxwNode        *fxw_graph_lookup_node        (FxwGraph      *self,
                                              const fx_node *node);
const char     *fxw_graph_get_readable       (FxwGraph      *self);
/* Distinct top-level module paths, in first-use order (for filters). */
GStrv           fxw_graph_dup_module_paths   (FxwGraph      *self);

FxwGraph       *fxw_node_get_owner           (FxwNode       *self);
const fx_node  *fxw_node_get_node            (FxwNode       *self);
guint           fxw_node_get_index           (FxwNode       *self);
const char     *fxw_node_get_name            (FxwNode       *self);
const char     *fxw_node_get_opcode          (FxwNode       *self);
const char     *fxw_node_get_target          (FxwNode       *self);
const char     *fxw_node_get_args            (FxwNode       *self);
const char     *fxw_node_get_kwargs          (FxwNode       *self);
const char     *fxw_node_get_shape           (FxwNode       *self);
const char     *fxw_node_get_module_path     (FxwNode       *self);
const char     *fxw_node_get_module_class    (FxwNode       *self);
const char     *fxw_node_get_source          (FxwNode       *self);
const char     *fxw_node_get_source_code     (FxwNode       *self);
char           *fxw_node_dup_summary         (FxwNode       *self);
/* The "highlighted" property: whether the node is in the shared selection's highlight set (FxwSelection keeps it
   up to date; views bind to it). */
gboolean        fxw_node_get_highlighted     (FxwNode       *self);
void            fxw_node_set_highlighted     (FxwNode       *self,
                                              gboolean       highlighted);

G_END_DECLS
