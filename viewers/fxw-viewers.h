/* fxw-viewers.h: one entry point that registers the viewers' types and resources. */
#pragma once

#include "fxw-code-view.h"
#include "fxw-compare-view.h"
#include "fxw-diff-canvas.h"
#include "fxw-diff-view.h"
#include "fxw-graph-canvas.h"
#include "fxw-graph-view.h"
#include "fxw-graph.h"
#include "fxw-kernel.h"
#include "fxw-kernels-view.h"
#include "fxw-properties.h"
#include "fxw-provenance-map.h"
#include "fxw-provenance-pane.h"
#include "fxw-ranks-view.h"
#include "fxw-selection.h"
#include "fxw-summary-view.h"
#include "fxw-table-view.h"
#include "fxw-training-view.h"
#include "fxw-view.h"
#include "fxw-workspace-page.h"

G_BEGIN_DECLS

/* Also what lets a view's template name any of these types: FxwView's class_init calls it. */
void fxw_viewers_init (void);
/* A viewer's template: the .ui file of that name among the viewers' resources ("fxw-code-view.ui"), its root
   laid out by a GtkBinLayout. */
void fxw_viewers_class_set_template (GtkWidgetClass *widget_class, const char *ui_file);
/* A templated widget's dispose: gtk_widget_dispose_template() clears only the bound children; the template's root
   box goes too. Nothing for a type whose template was not set by fxw_viewers_class_set_template() (a canvas). */
void fxw_viewers_dispose_template (GtkWidget *widget, GType widget_type);

/* Removes every child of container (a GtkBox or GtkGrid). The focus leaves them first when it is inside scope:
   removing the focused row of a hidden page makes AdwViewStack and the window's focus tracking of GTK 4.8 look at a
   widget that is gone (a critical, seen in the display test). */
void fxw_viewers_remove_children (GtkWidget *container, GtkWidget *scope);
/* Appends a label to box: left-aligned, wrapped, with css_class (NULL: none). Only body text (no class) and
   "monospace" text are selectable, for copying: the first selectable label of a page takes the focus with all its
   text selected, which a heading must not. */
GtkWidget *fxw_viewers_add_label (GtkBox *box, const char *text, const char *css_class);

/* Adds the path of a rectangle with corners rounded to radius r, as the canvases draw their boxes. */
void fxw_viewers_rounded_rect (cairo_t *cr, double x, double y, double w, double h, double r);

/* The item at position of model, NULL past the end; (transfer none): for a model whose items are kept alive
   elsewhere as long as the caller uses them (a sort model over a store, a graph's nodes). */
gpointer fxw_viewers_peek_item (GListModel *model, guint position);
/* Clicks button as the user does (a link of a page followed from the outside); FALSE when it is NULL. */
gboolean fxw_viewers_click (GtkWidget *button);

G_END_DECLS
