/* fxw-code-view.h: the Code view: print_readable of a graph with provenance comments; lines map to nodes. */
#pragma once

#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_CODE_VIEW (fxw_code_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwCodeView, fxw_code_view, FXW, CODE_VIEW, FxwView)

/* FxwView's selection calls under the view's names. */
#define fxw_code_view_set_selection(self, selection) fxw_view_set_selection (FXW_VIEW (self), (selection))

/* 1-based line of the node's statement, 0 when it has none. */
guint      fxw_code_view_get_node_line   (FxwCodeView  *self,
                                          FxwNode      *node);
/* The node a 1-based line belongs to, or NULL. */
FxwNode   *fxw_code_view_get_line_node   (FxwCodeView  *self,
                                          guint         line);
/* Moves the cursor to a 1-based line, as a click would. */
void       fxw_code_view_place_cursor    (FxwCodeView  *self,
                                          guint         line);
guint      fxw_code_view_get_cursor_line (FxwCodeView  *self);
/* Lines shown highlighted because their node is in the selection's highlight set. */
guint      fxw_code_view_get_n_highlighted_lines (FxwCodeView *self);

G_END_DECLS
