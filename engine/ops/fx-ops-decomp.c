/* fx-ops-decomp.c: decompositions of composite ops into simpler table ops, keeping provenance on every new node. */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "fx-ops-impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void
inherit_provenance (fx_graph *graph, fx_node *made, const fx_node *from)
{
  fx_node_share_user_provenance (made, from);
  made->meta.original_aten = from->meta.original_aten
                               ? from->meta.original_aten
                               : (from->target.kind == FX_TARGET_OP ? from->target.name : NULL);
  fx_node_set_source (made, graph->arena, from, "decompose", "replace", true);
}

fx_node *
fx_decomp_call (fx_graph *graph, fx_node *before, fx_op_id op, const fx_arg *args, size_t n_args,
                const fx_kwarg *kwargs, size_t n_kwargs)
{
  fx_graph_set_insert_point (graph, before);
  fx_target t = fx_target_op (fx_op_get (op)->target);
  t.op_id = op;
  fx_node *n = fx_graph_call_function (graph, t, args, n_args, kwargs, n_kwargs);
  fx_graph_set_insert_point (graph, NULL);
  inherit_provenance (graph, n, before);
  return n;
}

static fx_node *
getitem (fx_graph *graph, fx_node *before, fx_node *src, int64_t i)
{
  fx_arg a[2] = { fx_arg_node (src), fx_arg_int (i) };
  fx_graph_set_insert_point (graph, before);
  fx_node *n = fx_graph_call_function (graph, fx_target_operator ("getitem"), a, 2, NULL, 0);
  fx_graph_set_insert_point (graph, NULL);
  inherit_provenance (graph, n, before);
  return n;
}

/* Replaces node by single (one output) or by outs[k] for each getitem(node, k) user, then erases node. */
static fx_status
replace_node (fx_graph *graph, fx_node *node, fx_node **outs, int n_outs, fx_diag *diag)
{
  if (n_outs == 1)
    fx_node_replace_all_uses_with (node, outs[0]);
  else
    {
      /* users change while we rewrite them: take a copy */
      size_t nu = node->n_users;
      fx_node **users = fx_arena_alloc (graph->arena, sizeof (fx_node *) * (nu ? nu : 1));
      memcpy (users, node->users, sizeof (fx_node *) * nu);
      for (size_t i = 0; i < nu; i++)
        {
          fx_node *u = users[i];
          bool is_getitem = u->op == FX_OP_CALL_FUNCTION && u->target.kind == FX_TARGET_OPERATOR
                            && strcmp (u->target.name, "getitem") == 0 && u->n_args == 2
                            && u->args[1].kind == FX_ARG_INT;
          if (!is_getitem || u->args[1].u.i < 0 || u->args[1].u.i >= n_outs || outs[u->args[1].u.i] == NULL)
            {
              fx_diag_set (diag, FX_ERR_UNSUPPORTED,
                           "cannot decompose '%s': its result is used other than through getitem", node->name);
              if (diag != NULL)
                snprintf (diag->node, sizeof diag->node, "%s", node->name);
              return FX_ERR_UNSUPPORTED;
            }
          fx_node_replace_all_uses_with (u, outs[u->args[1].u.i]);
          fx_status st = fx_graph_erase_node (graph, u, diag);
          if (st != FX_OK)
            return st;
        }
    }
  return fx_graph_erase_node (graph, node, diag);
}

static int64_t
node_arg_int (const fx_node *node, int i, const char *kw, int64_t fallback)
{
  if ((size_t) i < node->n_args && node->args[i].kind == FX_ARG_INT)
    return node->args[i].u.i;
  const fx_arg *a = fx_node_get_kwarg (node, kw);
  return a && a->kind == FX_ARG_INT ? a->u.i : fallback;
}

static const fx_arg *
node_arg (const fx_node *node, int i, const char *kw)
{
  if ((size_t) i < node->n_args)
    return &node->args[i];
  return fx_node_get_kwarg (node, kw);
}

/* The stable softmax's shared steps over X along the node's dim: amax, x - amax, exp of that, and its sum. */
typedef struct
{
  fx_node *amax, *sub, *ex, *sum;
} softmax_parts;

static softmax_parts
decomp_softmax_parts (fx_graph *graph, fx_node *node, const fx_arg *x)
{
  softmax_parts sp;
  int64_t dim = node_arg_int (node, 1, "dim", -1);
  fx_arg dl = fx_arg_int (dim);
  fx_arg dims = fx_arg_list (&dl, 1);
  fx_arg a1[3] = { *x, dims, fx_arg_bool (true) };
  sp.amax = fx_decomp_call (graph, node, FX_OP_AMAX, a1, 3, NULL, 0);
  fx_arg a2[2] = { *x, fx_arg_node (sp.amax) };
  sp.sub = fx_decomp_call (graph, node, FX_OP_SUB_TENSOR, a2, 2, NULL, 0);
  fx_arg a3[1] = { fx_arg_node (sp.sub) };
  sp.ex = fx_decomp_call (graph, node, FX_OP_EXP, a3, 1, NULL, 0);
  fx_arg a4[3] = { fx_arg_node (sp.ex), dims, fx_arg_bool (true) };
  sp.sum = fx_decomp_call (graph, node, FX_OP_SUM_DIM_INTLIST, a4, 3, NULL, 0);
  return sp;
}

fx_status
fx_decomp_softmax (fx_graph *graph, fx_node *node, fx_diag *diag)
{
  const fx_arg *x = node_arg (node, 0, "self");
  if (x == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "node '%s': missing input", node->name);
  const fx_arg *h = node_arg (node, 2, node->target.op_id == FX_OP_SOFTMAX_INT
                                         || node->target.op_id == FX_OP_LOG_SOFTMAX_INT ? "dtype" : "half_to_float");
  if (h && h->kind == FX_ARG_BOOL && h->u.b)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': half_to_float softmax is not decomposed", node->name);
  if (h && h->kind != FX_ARG_BOOL && h->kind != FX_ARG_NONE)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': softmax with a dtype is not decomposed", node->name);
  softmax_parts sp = decomp_softmax_parts (graph, node, x);
  fx_node *res;
  if (node->target.op_id == FX_OP_LOG_SOFTMAX || node->target.op_id == FX_OP_LOG_SOFTMAX_INT)
    {
      fx_arg a5[1] = { fx_arg_node (sp.sum) };
      fx_node *lg = fx_decomp_call (graph, node, FX_OP_LOG, a5, 1, NULL, 0);
      fx_arg a6[2] = { fx_arg_node (sp.sub), fx_arg_node (lg) };
      res = fx_decomp_call (graph, node, FX_OP_SUB_TENSOR, a6, 2, NULL, 0);
    }
  else
    {
      fx_arg a5[2] = { fx_arg_node (sp.ex), fx_arg_node (sp.sum) };
      res = fx_decomp_call (graph, node, FX_OP_DIV_TENSOR, a5, 2, NULL, 0);
    }
  return replace_node (graph, node, &res, 1, diag);
}

fx_status
fx_decomp_prepare_softmax (fx_graph *graph, fx_node *node, fx_diag *diag)
{
  const fx_arg *x = node_arg (node, 0, "self");
  if (x == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "node '%s': missing input", node->name);
  softmax_parts sp = decomp_softmax_parts (graph, node, x);
  fx_node *outs[2] = { sp.amax, sp.sum };
  return replace_node (graph, node, outs, 2, diag);
}

fx_status
fx_decomp_layer_norm (fx_graph *graph, fx_node *node, fx_diag *diag)
{
  const fx_arg *x = node_arg (node, 0, "input");
  const fx_arg *shape = node_arg (node, 1, "normalized_shape");
  const fx_arg *w = node_arg (node, 2, "weight");
  const fx_arg *b = node_arg (node, 3, "bias");
  const fx_arg *eps = node_arg (node, 4, "eps");
  if (!x || !shape || (shape->kind != FX_ARG_LIST && shape->kind != FX_ARG_TUPLE) || !eps)
    return fx_diag_set (diag, FX_ERR_INVALID, "node '%s': malformed native_layer_norm arguments", node->name);
  size_t nn = shape->u.seq.n;
  fx_arg dl[FX_TENSOR_MAX_DIMS];
  for (size_t i = 0; i < nn && i < FX_TENSOR_MAX_DIMS; i++)
    dl[i] = fx_arg_int (-(int64_t) (nn - i));
  fx_arg dims = fx_arg_list (dl, nn);
  fx_arg a1[2] = { *x, dims };
  fx_kwarg k1[2] = { { "correction", fx_arg_int (0) }, { "keepdim", fx_arg_bool (true) } };
  fx_node *vm = fx_decomp_call (graph, node, FX_OP_VAR_MEAN_CORRECTION, a1, 2, k1, 2);
  fx_node *var = getitem (graph, node, vm, 0);
  fx_node *mean = getitem (graph, node, vm, 1);
  fx_arg a2[2] = { fx_arg_node (var), *eps };
  fx_node *add = fx_decomp_call (graph, node, FX_OP_ADD_TENSOR, a2, 2, NULL, 0);
  fx_arg a3[1] = { fx_arg_node (add) };
  fx_node *rstd = fx_decomp_call (graph, node, FX_OP_RSQRT, a3, 1, NULL, 0);
  fx_arg a4[2] = { *x, fx_arg_node (mean) };
  fx_node *sub = fx_decomp_call (graph, node, FX_OP_SUB_TENSOR, a4, 2, NULL, 0);
  fx_arg a5[2] = { fx_arg_node (sub), fx_arg_node (rstd) };
  fx_node *out = fx_decomp_call (graph, node, FX_OP_MUL_TENSOR, a5, 2, NULL, 0);
  if (w && w->kind == FX_ARG_NODE)
    {
      fx_arg a6[2] = { fx_arg_node (out), *w };
      out = fx_decomp_call (graph, node, FX_OP_MUL_TENSOR, a6, 2, NULL, 0);
    }
  if (b && b->kind == FX_ARG_NODE)
    {
      fx_arg a7[2] = { fx_arg_node (out), *b };
      out = fx_decomp_call (graph, node, FX_OP_ADD_TENSOR, a7, 2, NULL, 0);
    }
  fx_node *outs[3] = { out, mean, rstd };
  return replace_node (graph, node, outs, 3, diag);
}

/* logsumexp(x, dims, keepdim) = log(sum(exp(x - m))) + m with m = amax(x, dims) kept, an infinite m replaced by 0
   (so that a row of -inf gives -inf and +inf gives +inf, not NaN), as torch._refs.logsumexp does. */
fx_status
fx_decomp_logsumexp (fx_graph *graph, fx_node *node, fx_diag *diag)
{
  const fx_arg *x = node_arg (node, 0, "self");
  const fx_arg *dims = node_arg (node, 1, "dim");
  if (x == NULL || dims == NULL || (dims->kind != FX_ARG_LIST && dims->kind != FX_ARG_TUPLE) || dims->u.seq.n == 0)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': logsumexp over all dims is not decomposed",
                        node->name);
  const fx_arg *kd = node_arg (node, 2, "keepdim");
  bool keepdim = kd && ((kd->kind == FX_ARG_BOOL && kd->u.b) || (kd->kind == FX_ARG_INT && kd->u.i != 0));
  fx_arg a1[3] = { *x, *dims, fx_arg_bool (true) };
  fx_node *amax = fx_decomp_call (graph, node, FX_OP_AMAX, a1, 3, NULL, 0);
  fx_arg a2[1] = { fx_arg_node (amax) };
  fx_node *mag = fx_decomp_call (graph, node, FX_OP_ABS, a2, 1, NULL, 0);
  fx_arg a3[2] = { fx_arg_node (mag), fx_arg_float (INFINITY) };
  fx_node *inf = fx_decomp_call (graph, node, FX_OP_EQ_SCALAR, a3, 2, NULL, 0);
  fx_arg a4[3] = { fx_arg_node (amax), fx_arg_node (inf), fx_arg_float (0.0) };
  fx_node *m = fx_decomp_call (graph, node, FX_OP_MASKED_FILL_SCALAR, a4, 3, NULL, 0);
  fx_arg a5[2] = { *x, fx_arg_node (m) };
  fx_node *sub = fx_decomp_call (graph, node, FX_OP_SUB_TENSOR, a5, 2, NULL, 0);
  fx_arg a6[1] = { fx_arg_node (sub) };
  fx_node *ex = fx_decomp_call (graph, node, FX_OP_EXP, a6, 1, NULL, 0);
  fx_arg a7[3] = { fx_arg_node (ex), *dims, fx_arg_bool (true) };
  fx_node *sum = fx_decomp_call (graph, node, FX_OP_SUM_DIM_INTLIST, a7, 3, NULL, 0);
  fx_arg a8[1] = { fx_arg_node (sum) };
  fx_node *lg = fx_decomp_call (graph, node, FX_OP_LOG, a8, 1, NULL, 0);
  fx_arg a9[2] = { fx_arg_node (lg), fx_arg_node (m) };
  fx_node *res = fx_decomp_call (graph, node, FX_OP_ADD_TENSOR, a9, 2, NULL, 0);
  if (!keepdim)
    {
      fx_arg a10[2] = { fx_arg_node (res), *dims };
      res = fx_decomp_call (graph, node, FX_OP_SQUEEZE_DIMS, a10, 2, NULL, 0);
    }
  return replace_node (graph, node, &res, 1, diag);
}

/* linalg_vector_norm(x, ord, dim, keepdim) for ord 2 and 1: sqrt(sum(x * x)) and sum(abs(x)), which fuse into one
   reduction (other ords and a dtype argument stay on the reference kernel). */
fx_status
fx_decomp_vector_norm (fx_graph *graph, fx_node *node, fx_diag *diag)
{
  const fx_arg *x = node_arg (node, 0, "self");
  const fx_arg *ord = node_arg (node, 1, "ord");
  const fx_arg *dims = node_arg (node, 2, "dim");
  const fx_arg *kd = node_arg (node, 3, "keepdim");
  const fx_arg *dt = fx_node_get_kwarg (node, "dtype");
  double o = !ord || ord->kind == FX_ARG_NONE ? 2.0 : ord->kind == FX_ARG_INT ? (double) ord->u.i
             : ord->kind == FX_ARG_FLOAT ? ord->u.f : NAN;
  if (x == NULL || (o != 2.0 && o != 1.0) || (dt && dt->kind != FX_ARG_NONE))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': vector_norm of this ord is not decomposed", node->name);
  bool keepdim = kd && ((kd->kind == FX_ARG_BOOL && kd->u.b) || (kd->kind == FX_ARG_INT && kd->u.i != 0));
  fx_node *v;
  if (o == 2.0)
    {
      fx_arg a1[2] = { *x, *x };
      v = fx_decomp_call (graph, node, FX_OP_MUL_TENSOR, a1, 2, NULL, 0);
    }
  else
    {
      fx_arg a1[1] = { *x };
      v = fx_decomp_call (graph, node, FX_OP_ABS, a1, 1, NULL, 0);
    }
  fx_arg a2[3] = { fx_arg_node (v), dims ? *dims : fx_arg_none (), fx_arg_bool (keepdim) };
  fx_node *res = fx_decomp_call (graph, node, FX_OP_SUM_DIM_INTLIST, a2, 3, NULL, 0);
  if (o == 2.0)
    {
      fx_arg a3[1] = { fx_arg_node (res) };
      res = fx_decomp_call (graph, node, FX_OP_SQRT, a3, 1, NULL, 0);
    }
  return replace_node (graph, node, &res, 1, diag);
}

/* nll_loss_forward(self, target, weight, reduction, ignore_index) without a weight, as torch._decomp's
   _nll_loss_forward: the picked log-probability gather(self, c, target) negated, 0 where target == ignore_index,
   then summed (and divided by the count of kept targets for 'mean'); total_weight is that count in self's dtype.
   A gather and a reduction, which inductor fuses and the GPU runs as an indexed copy and a reduction instead of a
   host fallback. A weight stays on the reference kernel. */
fx_status
fx_decomp_nll_loss_forward (fx_graph *graph, fx_node *node, fx_diag *diag)
{
  const fx_arg *x = node_arg (node, 0, "self");
  const fx_arg *target = node_arg (node, 1, "target");
  const fx_arg *weight = node_arg (node, 2, "weight");
  int64_t reduction = node_arg_int (node, 3, "reduction", 1);
  int64_t ignore_index = node_arg_int (node, 4, "ignore_index", -100);
  const fx_node *xn = x && x->kind == FX_ARG_NODE ? x->u.node : NULL;
  const fx_node *tn = target && target->kind == FX_ARG_NODE ? target->u.node : NULL;
  /* self is [N, C] with target [N], or [C] with a 0-d target: either one's meta tells which (decompose runs before
     shapes are propagated, so an intermediate self may have none yet) */
  int ndim = xn && xn->meta.val.kind == FX_VAL_TENSOR ? xn->meta.val.tensor.ndim
             : tn && tn->meta.val.kind == FX_VAL_TENSOR ? tn->meta.val.tensor.ndim + 1
                                                         : -1;
  bool has_dtype = xn && xn->meta.val.kind == FX_VAL_TENSOR;
  fx_dtype dt = has_dtype ? xn->meta.val.tensor.dtype : FX_DTYPE_UNKNOWN;
  /* total_weight is needed in self's dtype only when something reads it (a getitem of it nothing reads goes with
     dead code elimination) */
  bool total_used = false;
  for (size_t i = 0; i < node->n_users; i++)
    {
      const fx_node *u = node->users[i];
      bool item = u->op == FX_OP_CALL_FUNCTION && u->target.kind == FX_TARGET_OPERATOR && u->n_args == 2
                  && u->args[1].kind == FX_ARG_INT;
      total_used |= !item || (u->args[1].u.i != 0 && u->n_users > 0);
    }
  if (xn == NULL || tn == NULL || (weight && weight->kind != FX_ARG_NONE) || (ndim != 1 && ndim != 2)
      || reduction < 0 || reduction > 2 || (total_used && !has_dtype))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': nll_loss_forward of this form is not decomposed",
                        node->name);
  int64_t cdim = ndim == 2 ? 1 : 0;
  fx_arg a1[2] = { *target, fx_arg_int (ignore_index) };
  fx_node *ignored = fx_decomp_call (graph, node, FX_OP_EQ_SCALAR, a1, 2, NULL, 0);
  fx_arg a2[3] = { *target, fx_arg_node (ignored), fx_arg_int (0) };
  fx_node *safe = fx_decomp_call (graph, node, FX_OP_MASKED_FILL_SCALAR, a2, 3, NULL, 0);
  fx_arg a3[2] = { fx_arg_node (safe), fx_arg_int (cdim) };
  fx_node *idx = fx_decomp_call (graph, node, FX_OP_UNSQUEEZE, a3, 2, NULL, 0);
  fx_arg a4[3] = { *x, fx_arg_int (cdim), fx_arg_node (idx) };
  fx_node *picked = fx_decomp_call (graph, node, FX_OP_GATHER, a4, 3, NULL, 0);
  fx_arg a5[2] = { fx_arg_node (picked), fx_arg_int (cdim) };
  fx_node *sq = fx_decomp_call (graph, node, FX_OP_SQUEEZE_DIM, a5, 2, NULL, 0);
  fx_arg a6[1] = { fx_arg_node (sq) };
  fx_node *neg = fx_decomp_call (graph, node, FX_OP_NEG, a6, 1, NULL, 0);
  fx_arg a7[3] = { fx_arg_node (neg), fx_arg_node (ignored), fx_arg_float (0.0) };
  fx_node *res = fx_decomp_call (graph, node, FX_OP_MASKED_FILL_SCALAR, a7, 3, NULL, 0);
  fx_node *total = NULL;
  if (reduction == 0 && cdim == 1)
    {
      /* 'none': the per-sample losses, and total_weight 0 (self.new_full((), 0.0)) */
      fx_kwarg kw[1] = { { "dtype", fx_arg_dtype (dt) } };
      fx_arg a8[1] = { fx_arg_float (0.0) };
      total = fx_decomp_call (graph, node, FX_OP_SCALAR_TENSOR, a8, 1, kw, has_dtype ? 1 : 0);
    }
  else
    {
      fx_arg a8[2] = { *target, fx_arg_int (ignore_index) };
      fx_node *kept = fx_decomp_call (graph, node, FX_OP_NE_SCALAR, a8, 2, NULL, 0);
      fx_arg a9[1] = { fx_arg_node (kept) };
      fx_node *count = fx_decomp_call (graph, node, FX_OP_SUM, a9, 1, NULL, 0);
      /* an int64 count divides a float sum into a float mean by type promotion; converted when it is an output */
      total = count;
      if (has_dtype)
        {
          fx_arg a10[2] = { fx_arg_node (count), fx_arg_dtype (dt) };
          total = fx_decomp_call (graph, node, FX_OP_CONVERT_ELEMENT_TYPE, a10, 2, NULL, 0);
        }
      if (reduction != 0)
        {
          fx_arg a11[1] = { fx_arg_node (res) };
          res = fx_decomp_call (graph, node, FX_OP_SUM, a11, 1, NULL, 0);
          if (reduction == 1)
            {
              fx_arg a12[2] = { fx_arg_node (res), fx_arg_node (total) };
              res = fx_decomp_call (graph, node, FX_OP_DIV_TENSOR, a12, 2, NULL, 0);
            }
        }
    }
  fx_node *outs[2] = { res, total };
  return replace_node (graph, node, outs, 2, diag);
}
