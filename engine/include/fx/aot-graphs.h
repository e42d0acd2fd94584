/* aot-graphs.h: reading a training compile's AOT forward and backward graphs together (what the forward saves
   for the backward, which forward nodes a backward node came from), as AOT autograd's partitioner left them. */
#pragma once

#include "fx/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A value saved for backward: a placeholder of the backward graph other than its tangents_*, which PyTorch names
   after the forward node that computed it and returns from the forward after the user outputs. */
typedef struct fx_saved_value
{
  const fx_node *bw_placeholder;
  const fx_node *fw_node;       /* the forward node of that name; NULL when the forward has none */
  int fw_output;                /* its index among the forward's returned values; -1 when not returned */
} fx_saved_value;

/* The saved values in the backward's placeholder order (*out from arena). A forward that does not return one of
   them, or a backward placeholder the forward lacks, is FX_ERR_INVALID with the value's name: the two graphs are
   not one partition. */
fx_status fx_aot_saved_values (const fx_graph *fw, const fx_graph *bw, fx_arena *arena, fx_saved_value **out,
                               size_t *n, fx_diag *diag);

/* Whether the backward node recomputes the forward node of its name (see fx_aot_forward_sources). */
bool fx_aot_is_recomputed (const fx_graph *fw, const fx_node *bw_node);

/* True for a backward placeholder that carries an incoming gradient (tangents_N), false for a saved value. */
bool fx_aot_is_tangent (const fx_node *placeholder);

/* The forward nodes a backward node came from, best first (*out from arena, *n may be 0): the forward node it
   recomputes (the min-cut partitioner recomputes cheap forward ops in the backward under their forward name, with
   the same target and arguments); else those with its seq_nr where both graphs keep seq_nr (AOT autograd gives a
   backward node the seq_nr of the forward op it differentiates); else the computing forward nodes with its
   innermost user frame (file:line), the `# File:` line the printed graphs show. */
void fx_aot_forward_sources (const fx_graph *fw, const fx_node *bw_node, fx_arena *arena, const fx_node ***out,
                             size_t *n);

#ifdef __cplusplus
}
#endif
