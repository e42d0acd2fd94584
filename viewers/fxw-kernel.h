/* fxw-kernel.h: FxwKernel, one generated kernel of a compile (name, kind, device, source, covered nodes), and
   FxwRun, one stored run of a graph (backend, timings, accuracy, error): the items of the Kernels and Compare views. */
#pragma once

#include <gio/gio.h>

#include "fxw-graph.h"

G_BEGIN_DECLS

#define FXW_TYPE_KERNEL (fxw_kernel_get_type ())
#define FXW_TYPE_RUN    (fxw_run_get_type ())
#define FXW_TYPE_FUSION_GROUP (fxw_fusion_group_get_type ())

G_DECLARE_FINAL_TYPE (FxwKernel, fxw_kernel, FXW, KERNEL, GObject)
G_DECLARE_FINAL_TYPE (FxwRun, fxw_run, FXW, RUN, GObject)
G_DECLARE_FINAL_TYPE (FxwFusionGroup, fxw_fusion_group, FXW, FUSION_GROUP, GObject)

/* nodes: the comma-separated source node names of the kernel's "# Topologically Sorted Source Nodes" comment;
   time_ms: NAN when unknown. */
FxwKernel   *fxw_kernel_new              (int          ordinal,
                                          const char  *name,
                                          const char  *kind,
                                          const char  *device,
                                          const char  *code,
                                          const char  *nodes,
                                          const char  *aten,
                                          double       time_ms);
int          fxw_kernel_get_ordinal      (FxwKernel   *self);
const char  *fxw_kernel_get_name         (FxwKernel   *self);
const char  *fxw_kernel_get_kind         (FxwKernel   *self);
const char  *fxw_kernel_get_device       (FxwKernel   *self);
const char  *fxw_kernel_get_code         (FxwKernel   *self);
const char  *fxw_kernel_get_aten         (FxwKernel   *self);
double       fxw_kernel_get_time_ms      (FxwKernel   *self);
/* The source node names (empty entries dropped), NULL-terminated. */
const char * const *fxw_kernel_get_nodes (FxwKernel   *self);
guint        fxw_kernel_get_n_nodes      (FxwKernel   *self);
/* Whether the kernel computes node. Inductor names a kernel's source nodes by the first from_node entry of each
   node it fused, that is by the names of the graph Dynamo captured: by_name (node is of that graph) compares the
   node's own name; otherwise only the names in the node's from_node chain count, since a later stage reuses names
   ("add") for other nodes. */
gboolean     fxw_kernel_covers           (FxwKernel   *self,
                                          FxwNode     *node,
                                          gboolean     by_name);
/* The nodes of graph the kernel covers, in graph order (names, NULL-terminated; free with g_strfreev). */
GStrv        fxw_kernel_dup_covered      (FxwKernel   *self,
                                          FxwGraph    *graph,
                                          gboolean     by_name);
/* "marked": the kernel covers the node selected elsewhere (the Kernels view shows it). */
gboolean     fxw_kernel_get_marked       (FxwKernel   *self);
void         fxw_kernel_set_marked       (FxwKernel   *self,
                                          gboolean     marked);

/* For each node of graph (by index), the index in kernels of the first kernel covering it, or -1. */
int         *fxw_kernels_map_nodes       (GListModel  *kernels,
                                          FxwGraph    *graph,
                                          gboolean     by_name);

/* Numbers that were not measured are NAN (negative values in the store read as unknown too); peak_bytes -1.
   accuracy: the largest absolute error against the reference, as `fxwb run/compare` store it. */
FxwRun      *fxw_run_new                 (const char  *backend,
                                          const char  *mode,
                                          const char  *options,
                                          const char  *device,
                                          double       compile_ms,
                                          double       median_ms,
                                          double       min_ms,
                                          double       max_ms,
                                          double       accuracy,
                                          gint64       peak_bytes,
                                          const char  *error);
const char  *fxw_run_get_backend         (FxwRun      *self);
const char  *fxw_run_get_mode            (FxwRun      *self);
const char  *fxw_run_get_options         (FxwRun      *self);
const char  *fxw_run_get_device          (FxwRun      *self);
double       fxw_run_get_compile_ms      (FxwRun      *self);
double       fxw_run_get_median_ms       (FxwRun      *self);
double       fxw_run_get_min_ms          (FxwRun      *self);
double       fxw_run_get_max_ms          (FxwRun      *self);
double       fxw_run_get_accuracy        (FxwRun      *self);
gint64       fxw_run_get_peak_bytes      (FxwRun      *self);
const char  *fxw_run_get_error           (FxwRun      *self);
/* What newer workspaces also store: the graph stage run ("aot_inference"), the verdict of the accuracy check
   ("pass", "fail", "error", "not checked"; NULL unknown) and the number of generated kernels (-1 unknown). */
void         fxw_run_set_details         (FxwRun      *self,
                                          const char  *stage,
                                          const char  *verdict,
                                          int          n_kernels);
const char  *fxw_run_get_stage           (FxwRun      *self);
const char  *fxw_run_get_verdict         (FxwRun      *self);
int          fxw_run_get_n_kernels       (FxwRun      *self);
/* The kernels the run generated (FxwKernel, with the times the run measured; NULL: none stored, e.g. an eager
   run, which interprets node by node). */
GListModel  *fxw_run_get_kernels         (FxwRun      *self);
void         fxw_run_set_kernels         (FxwRun      *self,
                                          GListModel  *kernels);
/* max-autotune's candidate table (the compile's autotune.txt: configurations, times, the one kept); NULL: none. */
const char  *fxw_run_get_autotune        (FxwRun      *self);
void         fxw_run_set_autotune        (FxwRun      *self,
                                          const char  *table);

/* FxwFusionGroup: one top-level scheduler node of ir_post_fusion.txt ("op0_op1_op3", a FusedSchedulerNode, or a
   single SchedulerNode / ExternKernelSchedulerNode), the launch in call() that computes it, and its origins: the
   post-grad nodes that launch computes and their pre-grad nodes (from the provenance mappings). Lists are the
   store's ", "-separated texts; NULL or empty: none. */
FxwFusionGroup *fxw_fusion_group_new        (const char     *name,
                                             const char     *kind,
                                             const char     *members,
                                             const char     *kernel,
                                             const char     *post_nodes,
                                             const char     *pre_nodes);
const char     *fxw_fusion_group_get_name   (FxwFusionGroup *self);
const char     *fxw_fusion_group_get_kind   (FxwFusionGroup *self);
/* The kernel name ("triton_per_fused_native_layer_norm_0", "extern_kernels.mm"); "" when unknown. */
const char     *fxw_fusion_group_get_kernel (FxwFusionGroup *self);
/* Member scheduler nodes ("op0", "op1", "op3"; the node itself when not fused), NULL-terminated. */
const char * const *fxw_fusion_group_get_members    (FxwFusionGroup *self);
/* Node names of the post-grad graph the group computes, NULL-terminated. */
const char * const *fxw_fusion_group_get_post_nodes (FxwFusionGroup *self);
const char * const *fxw_fusion_group_get_pre_nodes  (FxwFusionGroup *self);

G_END_DECLS
