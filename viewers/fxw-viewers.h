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
#include "fxw-provenance-map.h"
#include "fxw-provenance-pane.h"
#include "fxw-ranks-view.h"
#include "fxw-selection.h"
#include "fxw-summary-view.h"
#include "fxw-table-view.h"

G_BEGIN_DECLS

void fxw_viewers_init (void);
/* A templated widget's dispose: gtk_widget_dispose_template() clears only the bound children; the template's root
   box goes too. */
void fxw_viewers_dispose_template (GtkWidget *widget, GType widget_type);

G_END_DECLS
