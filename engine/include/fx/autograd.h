/* fx/autograd.h: the training half of AOT autograd: the joint forward+backward graph of an ATen graph and its
   partition into a forward and a backward graph (min-cut rematerialization or save-everything). */
#pragma once

#include "fx/passes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds aot_joint_graph's functional joint graph of forward (an ATen graph): placeholders primals_1..N (the
   forward's inputs in order) then tangents_1..M (one per floating output that requires grad), outputs [forward
   outputs..., grad of each primal or None]. requires_grad (n entries, one per placeholder) picks the
   floating primals to differentiate; NULL: the placeholders whose meta val or input spec says requires_grad when
   any does (a trace's metadata, load_args), else every floating placeholder. Backward nodes keep the forward node's stack_trace,
   nn_module_stack and seq_nr, a from_node entry (pass "autograd") naming it, and the extra key partitioner_tag =
   "is_backward". An op without a derivative formula is FX_ERR_UNSUPPORTED naming the op and the node. */
fx_status fx_autograd_joint (const fx_graph *forward, const bool *requires_grad, size_t n, fx_graph **joint,
                             fx_diag *diag);

/* The joint graph's shape: how many primals, tangents and forward outputs. */
typedef struct fx_joint_shape
{
  size_t n_primals;
  size_t n_tangents;
  size_t n_fwd_outputs;
} fx_joint_shape;

fx_status fx_joint_shape_of (const fx_graph *joint, fx_joint_shape *shape, fx_diag *diag);

typedef enum fx_partition_kind
{
  FX_PARTITION_MIN_CUT,   /* min_cut_rematerialization_partition */
  FX_PARTITION_SAVE_ALL,  /* default_partition: every forward value the backward reads is saved */
  FX_PARTITION_KIND_COUNT
} fx_partition_kind;

const char *fx_partition_kind_name (fx_partition_kind kind);   /* "min-cut", "save-all" */
bool fx_partition_kind_from_name (const char *name, fx_partition_kind *out);

/* One value the forward saves for the backward. */
typedef struct fx_saved_value
{
  const char *name;       /* the joint node's name */
  size_t bytes;           /* its size */
  const char *reason;     /* why it is saved: "needed by mm_2 in backward; recomputing it costs a matmul" */
} fx_saved_value;

typedef struct fx_partition
{
  fx_graph *forward;      /* primals -> forward outputs..., saved values... */
  fx_graph *backward;     /* saved values..., tangents -> grads of the primals (None where not required) */
  fx_saved_value *saved;  /* in the forward's output order, allocated from forward's arena */
  size_t n_saved;
  size_t n_fwd_outputs;   /* the user outputs at the front of forward's output */
} fx_partition;

/* Splits joint (from fx_autograd_joint, or an imported aot_joint_graph) into forward and backward. */
fx_status fx_autograd_partition (const fx_graph *joint, fx_partition_kind kind, fx_partition *out, fx_diag *diag);
void fx_partition_clear (fx_partition *partition);

#ifdef __cplusplus
}
#endif
