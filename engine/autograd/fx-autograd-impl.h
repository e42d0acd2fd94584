/* fx-autograd-impl.h: the joint-graph builder's state and the graph-building helpers the derivative formulas use. */
#pragma once

#include "fx/autograd.h"

#define FX_AG_MAX_DIMS 16

typedef struct fx_grad_ctx
{
  fx_graph *g;            /* the joint graph being built */
  const fx_node *from;    /* the forward node whose backward is being emitted */
  fx_node **grad;         /* by node id: the accumulated gradient of a forward node; NULL: zero */
  bool *rg;               /* by node id: the node's value requires grad */
  size_t cap;             /* entries of grad and rg */
  fx_diag *diag;
} fx_grad_ctx;

/* A backward call of a table op, appended to the joint graph with the provenance of ctx->from. */
fx_node *fx_ag_call (fx_grad_ctx *c, fx_op_id op, const fx_arg *args, size_t n_args, const fx_kwarg *kwargs,
                     size_t n_kwargs);
#define FX_AG_ARGS(...) ((const fx_arg[]){ __VA_ARGS__ }), (sizeof ((const fx_arg[]){ __VA_ARGS__ }) / sizeof (fx_arg))
#define FX_AG(c, op, ...) fx_ag_call ((c), FX_OP_##op, FX_AG_ARGS (__VA_ARGS__), NULL, 0)

/* Adds g to node's gradient (nothing when node is NULL or does not require grad). */
void fx_ag_accumulate (fx_grad_ctx *c, fx_node *node, fx_node *g);
/* The gradient flowing into output k of a multi-output node (its getitem users'), or NULL. */
fx_node *fx_ag_output_grad (fx_grad_ctx *c, const fx_node *node, int64_t k);
/* Output k of a multi-output node: its getitem user, or a new getitem. */
fx_node *fx_ag_output (fx_grad_ctx *c, fx_node *node, int64_t k);

/* Emits the backward of c->from given the gradient g of its (single) output; FX_ERR_UNSUPPORTED when the op has no
   formula. */
fx_status fx_ag_backward (fx_grad_ctx *c, fx_node *g);

/* Argument readers over a node: positional index i, else keyword kw. */
const fx_arg *fx_ag_arg (const fx_node *n, size_t i, const char *kw);
fx_node *fx_ag_arg_node (const fx_node *n, size_t i, const char *kw);
const fx_tensor_meta *fx_ag_meta (const fx_node *n);

/* Max-flow (fx-maxflow.c): vertices 0..n-1, capacities may be INFINITY. */
typedef struct fx_flow fx_flow;
fx_flow *fx_flow_new (int n_vertices);
void fx_flow_free (fx_flow *f);
bool fx_flow_add_edge (fx_flow *f, int u, int v, double cap);
/* The max flow from s to t (INFINITY when an all-infinite path exists). */
double fx_flow_max (fx_flow *f, int s, int t);
/* After fx_flow_max: whether v is on the source side of the min cut. */
bool fx_flow_source_side (const fx_flow *f, int v);
