/* fx-autograd.c: builds the joint forward+backward graph (aot_joint_graph) by reverse-mode over an ATen graph. */
#include "fx-autograd-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const fx_arg *
fx_ag_arg (const fx_node *n, size_t i, const char *kw)
{
  if (i < n->n_args)
    return &n->args[i];
  return kw ? fx_node_get_kwarg (n, kw) : NULL;
}

fx_node *
fx_ag_arg_node (const fx_node *n, size_t i, const char *kw)
{
  const fx_arg *a = fx_ag_arg (n, i, kw);
  return a && a->kind == FX_ARG_NODE ? a->u.node : NULL;
}

const fx_tensor_meta *
fx_ag_meta (const fx_node *n)
{
  return n && n->meta.val.kind == FX_VAL_TENSOR ? &n->meta.val.tensor : NULL;
}

static bool
is_getitem (const fx_node *n)
{
  return n->op == FX_OP_CALL_FUNCTION && n->target.kind == FX_TARGET_OPERATOR
         && strcmp (n->target.name, "getitem") == 0 && n->n_args == 2 && n->args[0].kind == FX_ARG_NODE
         && n->args[1].kind == FX_ARG_INT;
}

static void
set_backward_provenance (fx_grad_ctx *c, fx_node *n)
{
  fx_node_share_user_provenance (n, c->from);
  fx_node_set_source (n, c->g->arena, c->from, "autograd", "backward", false);
  fx_meta_set_extra (c->g, &n->meta, "partitioner_tag", "is_backward");
}

fx_node *
fx_ag_call (fx_grad_ctx *c, fx_op_id op, const fx_arg *args, size_t n_args, const fx_kwarg *kwargs, size_t n_kwargs)
{
  fx_target t = fx_target_op (fx_op_get (op)->target);
  t.op_id = (int) op;
  fx_node *n = fx_graph_call_function (c->g, t, args, n_args, kwargs, n_kwargs);
  set_backward_provenance (c, n);
  return n;
}

void
fx_ag_accumulate (fx_grad_ctx *c, fx_node *node, fx_node *g)
{
  if (node == NULL || g == NULL || node->id >= c->cap || !c->rg[node->id])
    return;
  fx_node *prev = c->grad[node->id];
  c->grad[node->id] = prev ? FX_AG (c, ADD_TENSOR, fx_arg_node (prev), fx_arg_node (g)) : g;
}

fx_node *
fx_ag_output_grad (fx_grad_ctx *c, const fx_node *node, int64_t k)
{
  fx_node *sum = NULL;
  for (size_t i = 0; i < node->n_users; i++)
    {
      fx_node *u = node->users[i];
      if (!is_getitem (u) || u->args[1].u.i != k || u->id >= c->cap || c->grad[u->id] == NULL)
        continue;
      fx_node *g = c->grad[u->id];
      sum = sum ? FX_AG (c, ADD_TENSOR, fx_arg_node (sum), fx_arg_node (g)) : g;
    }
  return sum;
}

fx_node *
fx_ag_output (fx_grad_ctx *c, fx_node *node, int64_t k)
{
  for (size_t i = 0; i < node->n_users; i++)
    if (is_getitem (node->users[i]) && node->users[i]->args[1].u.i == k)
      return node->users[i];
  fx_arg a[2] = { fx_arg_node (node), fx_arg_int (k) };
  fx_node *n = fx_graph_call_function (c->g, fx_target_operator ("getitem"), a, 2, NULL, 0);
  set_backward_provenance (c, n);
  if (node->meta.val.kind == FX_VAL_TUPLE && (size_t) k < node->meta.val.n_items)
    n->meta.val = node->meta.val.items[k];
  return n;
}

/* ---------------------------------------------------------------- requires grad */

static bool
val_is_floating (const fx_val *v)
{
  if (v->kind == FX_VAL_TENSOR)
    return fx_dtype_is_floating (v->tensor.dtype);
  if (v->kind == FX_VAL_TUPLE)
    for (size_t i = 0; i < v->n_items; i++)
      if (val_is_floating (&v->items[i]))
        return true;
  return false;
}

typedef struct
{
  const bool *rg;
  bool any;
} any_rg;

static void
note_rg (fx_node *n, void *data)
{
  any_rg *a = data;
  a->any = a->any || a->rg[n->id];
}

static bool
inputs_require_grad (const fx_grad_ctx *c, const fx_node *n)
{
  any_rg a = { c->rg, false };
  fx_node_foreach_input (n, note_rg, &a);
  return a.any;
}

/* Ops whose result does not depend differentiably on their inputs: factories (zeros_like), draws (rand_like),
   detach. Their results do not require grad. */
static bool
cuts_grad (const fx_node *n)
{
  if (n->target.kind != FX_TARGET_OP || n->target.op_id < 0)
    return false;
  fx_op_id op = (fx_op_id) n->target.op_id;
  fx_op_kind kind = fx_op_get (op)->kind;
  return op == FX_OP_DETACH || kind == FX_OP_KIND_FACTORY || (kind == FX_OP_KIND_RANDOM && op != FX_OP_NATIVE_DROPOUT);
}

/* ---------------------------------------------------------------- building */

/* Whether the forward says which inputs require grad: a placeholder's meta val, or an input spec (a trace's or
   load_args' requires_grad). */
static bool
has_requires_grad_info (const fx_graph *fwd)
{
  fx_graph_foreach_node (fwd, n)
    if (n->op == FX_OP_PLACEHOLDER && n->meta.val.kind == FX_VAL_TENSOR && n->meta.val.tensor.requires_grad)
      return true;
  for (size_t i = 0; i < fwd->n_inputs; i++)
    if (fwd->inputs[i].requires_grad)
      return true;
  return false;
}

static bool
default_requires_grad (const fx_graph *fwd, const fx_node *p, size_t index, bool info)
{
  if (!info)
    return true;
  if (p->meta.val.kind == FX_VAL_TENSOR && p->meta.val.tensor.requires_grad)
    return true;
  return index < fwd->n_inputs && fwd->inputs[index].requires_grad;
}

/* Copies forward's placeholders as primals, adds the tangents and the forward's compute nodes; returns the forward
   output node's value (the list/tuple of outputs) mapped into the joint graph, in *outs. */
static fx_status
copy_forward (fx_grad_ctx *c, const fx_graph *fwd, const bool *requires_grad, size_t n_rg, fx_node **map,
              fx_arg *outs_arg)
{
  size_t k = 0;
  int64_t seq = 0;
  bool info = requires_grad == NULL && has_requires_grad_info (fwd);
  fx_graph_foreach_node (fwd, n)
    {
      if (n->op != FX_OP_PLACEHOLDER)
        continue;
      char name[32];
      snprintf (name, sizeof name, "primals_%zu", ++k);
      fx_node *p = fx_graph_copy_node (c->g, n, map, name);
      map[n->id] = p;
      p->type_expr = NULL;
      bool want = requires_grad ? (k - 1 < n_rg && requires_grad[k - 1]) : default_requires_grad (fwd, n, k - 1, info);
      c->rg[p->id] = want && val_is_floating (&p->meta.val);
    }
  fx_node *out = NULL;
  fx_graph_foreach_node (fwd, n)
    {
      if (n->op == FX_OP_PLACEHOLDER)
        continue;
      if (n->op == FX_OP_OUTPUT)
        {
          out = n;
          break;
        }
      if (n->op != FX_OP_CALL_FUNCTION)
        return fx_node_error (c->diag, n, "autograd", FX_ERR_UNSUPPORTED,
                              "a joint graph needs an ATen graph; %s nodes are not supported", fx_opcode_name (n->op));
      fx_node *m = fx_graph_copy_node (c->g, n, map, NULL);
      map[n->id] = m;
      if (m->meta.seq_nr < 0)
        m->meta.seq_nr = seq;
      seq++;
      c->rg[m->id] = val_is_floating (&m->meta.val) && inputs_require_grad (c, m) && !cuts_grad (m);
    }
  if (out == NULL || out->n_args != 1)
    return fx_diag_set (c->diag, FX_ERR_INVALID, "the forward graph has no output node");
  *outs_arg = fx_arg_copy (c->g->arena, &out->args[0]);
  /* remap through a throwaway node copy: the output's value as joint nodes */
  fx_node **m = map;
  fx_arg *items = outs_arg->kind == FX_ARG_LIST || outs_arg->kind == FX_ARG_TUPLE ? outs_arg->u.seq.items : outs_arg;
  size_t ni = outs_arg->kind == FX_ARG_LIST || outs_arg->kind == FX_ARG_TUPLE ? outs_arg->u.seq.n : 1;
  for (size_t i = 0; i < ni; i++)
    if (items[i].kind == FX_ARG_NODE)
      items[i].u.node = m[items[i].u.node->id];
  return FX_OK;
}

/* tangents_1..M before the first compute node: one per output that requires grad. */
static void
add_tangents (fx_grad_ctx *c, fx_arg *items, size_t n_items)
{
  fx_node *first = c->g->first;
  while (first && first->op == FX_OP_PLACEHOLDER)
    first = first->next;
  fx_graph_set_insert_point (c->g, first);
  size_t k = 0;
  for (size_t i = 0; i < n_items; i++)
    {
      fx_node *o = items[i].kind == FX_ARG_NODE ? items[i].u.node : NULL;
      if (o == NULL || !c->rg[o->id] || o->meta.val.kind != FX_VAL_TENSOR)
        continue;
      char name[32];
      snprintf (name, sizeof name, "tangents_%zu", ++k);
      fx_node *t = fx_graph_placeholder (c->g, name);
      t->meta.val = o->meta.val;
      t->meta.val.tensor.requires_grad = false;
      fx_ag_accumulate (c, o, t);
    }
  fx_graph_set_insert_point (c->g, NULL);
}

static fx_status
run_backward (fx_grad_ctx *c, fx_node *last_forward)
{
  for (fx_node *n = last_forward; n != NULL && n->op != FX_OP_PLACEHOLDER; n = n->prev)
    {
      if (!c->rg[n->id] || is_getitem (n))
        continue;
      c->from = n;
      fx_node *g = c->grad[n->id];
      bool multi = n->meta.val.kind == FX_VAL_TUPLE;
      bool any = g != NULL;
      for (size_t i = 0; multi && !any && i < n->n_users; i++)
        any = is_getitem (n->users[i]) && n->users[i]->id < c->cap && c->grad[n->users[i]->id] != NULL;
      if (!any)
        continue;
      fx_status st = fx_ag_backward (c, g);
      if (st != FX_OK)
        return st;
    }
  return FX_OK;
}

static fx_status
finish (fx_grad_ctx *c, fx_arg *items, size_t n_items)
{
  size_t np = 0;
  fx_graph_foreach_node (c->g, n)
    np += n->op == FX_OP_PLACEHOLDER && strncmp (n->name, "primals_", 8) == 0;
  fx_arg *outs = calloc (n_items + np + 1, sizeof *outs);
  if (outs == NULL)
    return fx_diag_set (c->diag, FX_ERR_NOMEM, "out of memory");
  size_t k = 0;
  for (size_t i = 0; i < n_items; i++)
    outs[k++] = items[i];
  fx_graph_foreach_node (c->g, n)
    if (n->op == FX_OP_PLACEHOLDER && strncmp (n->name, "primals_", 8) == 0)
      {
        fx_node *g = c->rg[n->id] ? c->grad[n->id] : NULL;
        outs[k++] = g ? fx_arg_node (g) : fx_arg_none ();
      }
  fx_graph_output (c->g, fx_arg_list (outs, k));
  free (outs);
  size_t changed = 0;
  fx_status st = fx_pass_shape_prop (c->g, &changed, c->diag);
  if (st == FX_OK)
    st = fx_graph_verify (c->g, c->diag);
  return st;
}

fx_status
fx_autograd_joint (const fx_graph *forward, const bool *requires_grad, size_t n, fx_graph **joint, fx_diag *diag)
{
  *joint = NULL;
  fx_graph *fwd = fx_graph_copy (forward);
  size_t changed = 0;
  fx_graph_resolve_ops (fwd);
  fx_status st = fx_pass_shape_prop (fwd, &changed, diag);
  if (st != FX_OK)
    {
      fx_graph_free (fwd);
      return st;
    }
  fx_grad_ctx c = { .g = fx_graph_new (), .diag = diag };
  c.g->class_name = "inner_f";
  /* grads and requires-grad flags are kept for the primals, forward nodes and tangents, whose ids lie below this
     bound (at most twice the forward's); backward nodes, made later, are never differentiated themselves */
  c.cap = (size_t) fwd->next_id * 2 + 64;
  c.grad = calloc (c.cap, sizeof *c.grad);
  c.rg = calloc (c.cap, sizeof *c.rg);
  fx_node **map = calloc (fwd->next_id + 1, sizeof *map);
  fx_arg outs;
  if (c.grad == NULL || c.rg == NULL || map == NULL)
    st = fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  else
    st = copy_forward (&c, fwd, requires_grad, n, map, &outs);
  if (st == FX_OK)
    {
      bool seq = outs.kind == FX_ARG_LIST || outs.kind == FX_ARG_TUPLE;
      fx_arg *items = seq ? outs.u.seq.items : &outs;
      size_t ni = seq ? outs.u.seq.n : 1;
      fx_node *last = c.g->last;
      add_tangents (&c, items, ni);
      st = run_backward (&c, last);
      if (st == FX_OK)
        st = finish (&c, items, ni);
    }
  free (map);
  free (c.grad);
  free (c.rg);
  fx_graph_free (fwd);
  if (st != FX_OK)
    {
      fx_graph_free (c.g);
      return st;
    }
  *joint = c.g;
  return FX_OK;
}

fx_status
fx_joint_shape_of (const fx_graph *joint, fx_joint_shape *shape, fx_diag *diag)
{
  memset (shape, 0, sizeof *shape);
  fx_graph_foreach_node (joint, n)
    if (n->op == FX_OP_PLACEHOLDER)
      {
        if (strncmp (n->name, "tangents_", 9) == 0)
          shape->n_tangents++;
        else if (strncmp (n->name, "primals_", 8) == 0)
          shape->n_primals++;
        else
          return fx_node_error (diag, n, "partition", FX_ERR_INVALID,
                                "not a joint graph: its inputs are primals_N and tangents_N");
      }
  const fx_node *out = fx_graph_output_node (joint);
  if (out == NULL || out->n_args != 1
      || (out->args[0].kind != FX_ARG_LIST && out->args[0].kind != FX_ARG_TUPLE)
      || out->args[0].u.seq.n < shape->n_primals)
    return fx_diag_set (diag, FX_ERR_INVALID,
                        "not a joint graph: its output is not a list of forward outputs and one grad per primal");
  shape->n_fwd_outputs = out->args[0].u.seq.n - shape->n_primals;
  return FX_OK;
}
