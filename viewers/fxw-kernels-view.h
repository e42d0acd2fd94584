/* fxw-kernels-view.h: the Kernels view: a compile's generated kernels, the selected one's source and covered nodes. */
#pragma once

#include "fxw-kernel.h"
#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_KERNELS_VIEW (fxw_kernels_view_get_type ())

G_DECLARE_FINAL_TYPE (FxwKernelsView, fxw_kernels_view, FXW, KERNELS_VIEW, FxwView)

/* FxwView's selection calls under the view's names. */
#define fxw_kernels_view_set_selection(self, selection) fxw_view_set_selection (FXW_VIEW (self), (selection))

/* kernels: FxwKernel items (NULL: none, the empty page); by_name: the selection's graph is the one whose node names
   the kernels list (see fxw_kernel_covers). */
void        fxw_kernels_view_set_kernels    (FxwKernelsView *self,
                                             GListModel     *kernels,
                                             gboolean        by_name);
guint       fxw_kernels_view_get_n_kernels  (FxwKernelsView *self);
/* max-autotune's candidate table of the latest run that autotuned (its autotune.txt), shown below the kernels; NULL:
   none (hidden). */
void        fxw_kernels_view_set_autotune   (FxwKernelsView *self,
                                             const char     *table);
const char *fxw_kernels_view_get_autotune   (FxwKernelsView *self);
/* Selects the kernel at position (G_MAXUINT: none): shows its source and highlights the nodes it covers. */
void        fxw_kernels_view_select         (FxwKernelsView *self,
                                             guint           position);
FxwKernel  *fxw_kernels_view_get_selected   (FxwKernelsView *self);
/* The source shown (free it) and its highlighting language id ("python3", "cpp", NULL). */
char       *fxw_kernels_view_dup_source     (FxwKernelsView *self);
const char *fxw_kernels_view_get_language   (FxwKernelsView *self);
/* Follows the link of a covered node: selects it in the shared selection, or, when the graph on show is not the one
   the kernel names, emits ::open-node for the window to switch graphs. Returns FALSE for a name the kernel lacks. */
gboolean    fxw_kernels_view_activate_node  (FxwKernelsView *self,
                                             const char     *name);
/* Kernels marked as covering the selected node. */
guint       fxw_kernels_view_get_n_marked   (FxwKernelsView *self);

/* Sorts the table as a click on the header of column (0 Kernel, 1 Kind, 2 Device, 3 Nodes, 4 Time;
   G_MAXUINT: the compile's order) would; the
   kernel shown at position (positions of fxw_kernels_view_select are these too). */
void        fxw_kernels_view_sort_by        (FxwKernelsView *self,
                                             guint           column,
                                             GtkSortType     order);
FxwKernel  *fxw_kernels_view_get_shown      (FxwKernelsView *self,
                                             guint           position);

G_END_DECLS
