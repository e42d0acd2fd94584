/* fxw-table-view.h: the Table view: print_tabular columns plus shape, module and source line. */
#pragma once

#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_TABLE_VIEW (fxw_table_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwTableView, fxw_table_view, FXW, TABLE_VIEW, FxwView)

/* FxwView's selection calls under the view's names. */
#define fxw_table_view_get_selection(self) fxw_view_get_selection (FXW_VIEW (self))
#define fxw_table_view_set_selection(self, selection) fxw_view_set_selection (FXW_VIEW (self), (selection))

/* Rows shown after filtering, and the node shown in row position (for tests). */
guint         fxw_table_view_get_n_rows    (FxwTableView *self);
FxwNode      *fxw_table_view_get_row       (FxwTableView *self,
                                            guint         position);
void          fxw_table_view_set_filter    (FxwTableView *self,
                                            const char   *text,
                                            const char   *opcode,
                                            const char   *module);

guint         fxw_table_view_get_n_marked_rows (FxwTableView *self);
void          fxw_table_view_set_highlighted_only (FxwTableView *self,
                                                   gboolean      only);
/* The label of the check showing only highlighted rows ("Kernel nodes only" by default). */
void          fxw_table_view_set_highlighted_label (FxwTableView *self,
                                                    const char   *label);

G_END_DECLS
