/* fx-partition.c: splits a joint graph into forward and backward graphs: PyTorch's
   min_cut_rematerialization_partition (cheap ops are recomputed in backward, a min cut over byte sizes picks what is
   saved) or default_partition (every forward value the backward reads is saved). */

/* Switches over op kinds name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "fx-autograd-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why a node may not be recomputed in backward (should_ban_recomputation). */
typedef enum
{
  BAN_NONE,
  BAN_COMPUTE,          /* compute-intensive: a matmul or a convolution */
  BAN_RANDOM,
  BAN_NOT_RECOMPUTABLE, /* not in the recomputable allowlist */
  BAN_MATERIALIZED,     /* a non-fusible backward op reads it: it is materialized anyway */
  BAN_REDUCTION,        /* a reduction whose output is over 4x smaller than its inputs */
  BAN_NON_TENSOR,       /* a tuple or a non-tensor value */
} ban_reason;

typedef struct
{
  const fx_graph *j;
  size_t cap;           /* joint->next_id: every array below is indexed by node id */
  fx_joint_shape shape;
  const fx_arg *outs;   /* the joint output's items: forward outputs, then one grad per primal */
  bool *bw;             /* required in backward: depends on a tangent, or is a grad output */
  bool *fw;             /* required in forward: an ancestor of a forward output */
  bool *saved;
  int *dist;            /* dist_from_bw */
  bool *in_bw;          /* computed by the backward graph (recomputed or backward), saved values included */
  ban_reason *ban;
  fx_diag *diag;
} part_ctx;

static bool
is_getitem (const fx_node *n)
{
  return n->op == FX_OP_CALL_FUNCTION && n->target.kind == FX_TARGET_OPERATOR
         && strcmp (n->target.name, "getitem") == 0;
}

static bool
is_tangent (const fx_node *n)
{
  return n->op == FX_OP_PLACEHOLDER && strncmp (n->name, "tangents_", 9) == 0;
}

/* The node's table op, -1 when none (looked up by name when the graph's ops were not resolved). */
static int
op_of (const fx_node *n)
{
  if (n->op != FX_OP_CALL_FUNCTION || n->target.kind != FX_TARGET_OP)
    return -1;
  return n->target.op_id >= 0 ? n->target.op_id : fx_op_lookup (n->target.name);
}

static fx_op_kind
kind_of (const fx_node *n)
{
  int op = op_of (n);
  return op < 0 ? FX_OP_KIND_OTHER : fx_op_get ((fx_op_id) op)->kind;
}

static bool
is_op (const fx_node *n, fx_op_id op)
{
  return op_of (n) == (int) op;
}

static size_t
val_bytes (const fx_val *v)
{
  if (v->kind == FX_VAL_TUPLE)
    {
      size_t s = 0;
      for (size_t i = 0; i < v->n_items; i++)
        s += val_bytes (&v->items[i]);
      return s;
    }
  if (v->kind != FX_VAL_TENSOR)
    return 0;
  size_t s = fx_dtype_size (v->tensor.dtype);
  for (int d = 0; d < v->tensor.ndim; d++)
    s *= (size_t) (v->tensor.sizes[d].value > 0 ? v->tensor.sizes[d].value : 0);
  return s;
}

/* op_types.is_recomputable: pointwise, views, reductions, factories, softmax, cat. */
static bool
is_recomputable (const fx_node *n)
{
  if (is_getitem (n))
    return true;
  switch (kind_of (n))
    {
    case FX_OP_KIND_POINTWISE: case FX_OP_KIND_VIEW: case FX_OP_KIND_REDUCTION: case FX_OP_KIND_FACTORY:
      return true;
    default:
      return is_op (n, FX_OP_SOFTMAX) || is_op (n, FX_OP_LOG_SOFTMAX) || is_op (n, FX_OP_CAT);
    }
}

/* is_fusible(a, b): both recomputable and not random (cat fuses with anything). */
static bool
is_fusible (const fx_node *a, const fx_node *b)
{
  if (is_op (b, FX_OP_CAT))
    return true;
  return is_recomputable (a) && is_recomputable (b) && kind_of (a) != FX_OP_KIND_RANDOM;
}

static bool
is_view (const fx_node *n)
{
  return kind_of (n) == FX_OP_KIND_VIEW;
}

/* is_materialized_backwards: a backward user that cannot fuse with it reads it (through views). */
static const fx_node *
materialized_backwards (const part_ctx *c, const fx_node *node)
{
  if (is_view (node))
    return NULL;
  const fx_node *stack[256];
  int sp = 0;
  stack[sp++] = node;
  while (sp > 0)
    {
      const fx_node *cur = stack[--sp];
      for (size_t i = 0; i < cur->n_users; i++)
        {
          const fx_node *u = cur->users[i];
          if (u->op != FX_OP_OUTPUT && !c->fw[u->id] && !is_fusible (cur, u))
            return u;
          if (is_view (u) && sp < 256)
            stack[sp++] = u;
        }
    }
  return NULL;
}

static ban_reason
ban_recomputation (const part_ctx *c, const fx_node *n)
{
  if (n->op != FX_OP_CALL_FUNCTION || is_getitem (n))
    return BAN_NONE;
  if (n->meta.val.kind != FX_VAL_TENSOR)
    return BAN_NON_TENSOR;
  fx_op_kind k = kind_of (n);
  if (k == FX_OP_KIND_EXTERN)
    return BAN_COMPUTE;
  if (k == FX_OP_KIND_RANDOM)
    return BAN_RANDOM;
  if (!is_recomputable (n))
    return BAN_NOT_RECOMPUTABLE;
  if (materialized_backwards (c, n))
    return BAN_MATERIALIZED;
  if (k != FX_OP_KIND_REDUCTION)
    return BAN_NONE;
  size_t in = 0;
  for (size_t i = 0; i < n->n_args; i++)
    if (n->args[i].kind == FX_ARG_NODE)
      in += val_bytes (&n->args[i].u.node->meta.val);
  return val_bytes (&n->meta.val) * 4 < in ? BAN_REDUCTION : BAN_NONE;
}

/* ---------------------------------------------------------------- classification */

static void
mark_ancestors (bool *set, fx_node *n)
{
  if (set[n->id])
    return;
  set[n->id] = true;
  for (size_t i = 0; i < n->n_args; i++)
    if (n->args[i].kind == FX_ARG_NODE)
      mark_ancestors (set, n->args[i].u.node);
    else if (n->args[i].kind == FX_ARG_LIST || n->args[i].kind == FX_ARG_TUPLE)
      for (size_t k = 0; k < n->args[i].u.seq.n; k++)
        if (n->args[i].u.seq.items[k].kind == FX_ARG_NODE)
          mark_ancestors (set, n->args[i].u.seq.items[k].u.node);
  for (size_t i = 0; i < n->n_kwargs; i++)
    if (n->kwargs[i].value.kind == FX_ARG_NODE)
      mark_ancestors (set, n->kwargs[i].value.u.node);
}

static void
classify (part_ctx *c)
{
  fx_graph_foreach_node (c->j, n)
  {
    if (is_tangent (n))
      c->bw[n->id] = true;
    if (c->bw[n->id])
      for (size_t i = 0; i < n->n_users; i++)
        if (n->users[i]->op != FX_OP_OUTPUT)
          c->bw[n->users[i]->id] = true;
  }
  for (size_t i = 0; i < c->shape.n_fwd_outputs + c->shape.n_primals; i++)
    if (c->outs[i].kind == FX_ARG_NODE)
      {
        if (i < c->shape.n_fwd_outputs)
          mark_ancestors (c->fw, c->outs[i].u.node);
        else if (c->outs[i].u.node->op != FX_OP_PLACEHOLDER)
          c->bw[c->outs[i].u.node->id] = true;
      }
  fx_graph_foreach_node (c->j, n)
    if (n->op == FX_OP_PLACEHOLDER && !is_tangent (n))
      c->fw[n->id] = true;
  fx_graph_foreach_node_reverse (c->j, n)
  {
    c->dist[n->id] = 1000000000;
    if (n->op != FX_OP_OUTPUT && !c->fw[n->id])
      c->dist[n->id] = 0;
    else
      for (size_t i = 0; i < n->n_users; i++)
        if (c->dist[n->users[i]->id] + 1 < c->dist[n->id])
          c->dist[n->id] = c->dist[n->users[i]->id] + 1;
  }
}

/* ---------------------------------------------------------------- min cut */

static double
node_weight (const part_ctx *c, const fx_node *n)
{
  if (n->meta.val.kind != FX_VAL_TENSOR)
    return INFINITY; /* a tuple (its getitems are saved instead) or a value without a known size */
  double sz = (double) val_bytes (&n->meta.val);
  if (n->op == FX_OP_PLACEHOLDER)
    return sz;
  int d = c->dist[n->id] < 1 ? 1 : c->dist[n->id] > 100 ? 100 : c->dist[n->id];
  sz = floor (sz * pow (1.1, d));
  bool materialized = false;
  for (size_t i = 0; i < n->n_users; i++)
    materialized = materialized || !is_fusible (n, n->users[i]);
  return materialized ? sz : sz * 2;
}

static fx_status
min_cut (part_ctx *c)
{
  int src = (int) (2 * c->cap), sink = src + 1;
  fx_flow *f = fx_flow_new (src + 2);
  if (f == NULL)
    return fx_diag_set (c->diag, FX_ERR_NOMEM, "out of memory");
  bool ok = true;
  fx_graph_foreach_node (c->j, n)
  {
    int in = (int) (2 * n->id), out = in + 1;
    if (n->op == FX_OP_OUTPUT)
      continue;
    if (c->bw[n->id])
      {
        ok = ok && fx_flow_add_edge (f, in, sink, INFINITY);
        continue;
      }
    /* only what the forward outputs need is banned from recomputation (PyTorch: "we only need to ban nodes in
       the fw pass"): a node the backward alone reads (nll_loss's scatter of the targets) is recomputed there */
    c->ban[n->id] = c->fw[n->id] ? ban_recomputation (c, n) : BAN_NONE;
    if (n->op == FX_OP_PLACEHOLDER || c->ban[n->id] != BAN_NONE)
      ok = ok && fx_flow_add_edge (f, src, in, INFINITY);
    ok = ok && fx_flow_add_edge (f, in, out, node_weight (c, n));
    for (size_t i = 0; i < n->n_users; i++)
      if (n->users[i]->op != FX_OP_OUTPUT)
        ok = ok && fx_flow_add_edge (f, out, (int) (2 * n->users[i]->id), INFINITY);
  }
  double flow = ok ? fx_flow_max (f, src, sink) : 0;
  if (ok && !isinf (flow))
    fx_graph_foreach_node (c->j, n)
      if (n->op != FX_OP_OUTPUT && !c->bw[n->id] && fx_flow_source_side (f, (int) (2 * n->id))
          && !fx_flow_source_side (f, (int) (2 * n->id + 1)))
        c->saved[n->id] = true;
  fx_flow_free (f);
  if (!ok)
    return fx_diag_set (c->diag, FX_ERR_NOMEM, "out of memory");
  if (isinf (flow))
    return fx_diag_set (c->diag, FX_ERR_INVALID,
                        "min cut: the backward needs a value that can be neither saved nor recomputed");
  return FX_OK;
}

/* default_partition: every forward value (and forward getitem) a non-forward node reads. */
static void
save_all (part_ctx *c)
{
  fx_graph_foreach_node (c->j, n)
    if (is_getitem (n) && n->args[0].kind == FX_ARG_NODE && c->fw[n->args[0].u.node->id])
      c->fw[n->id] = true;
  fx_graph_foreach_node (c->j, n)
  {
    if (!c->fw[n->id] || n->meta.val.kind == FX_VAL_TUPLE)
      continue;
    for (size_t i = 0; i < n->n_users; i++)
      if (n->users[i]->op != FX_OP_OUTPUT && !c->fw[n->users[i]->id])
        c->saved[n->id] = true;
  }
}

/* ---------------------------------------------------------------- the two graphs */

static fx_node *
placeholder_like (fx_graph *g, const fx_node *n, fx_node **map)
{
  fx_node tmp;
  memset (&tmp, 0, sizeof tmp);
  tmp.op = FX_OP_PLACEHOLDER;
  tmp.name = n->name;
  tmp.target = fx_target_str (n->name);
  tmp.meta.val = n->meta.val;
  tmp.meta.seq_nr = -1;
  return fx_graph_copy_node (g, &tmp, map, NULL);
}

static fx_arg
mapped (const fx_arg *a, fx_node **map)
{
  return a->kind == FX_ARG_NODE ? fx_arg_node (map[a->u.node->id]) : fx_arg_none ();
}

static fx_status
build_forward (part_ctx *c, fx_partition *p, fx_node **map)
{
  bool *need = calloc (c->cap, sizeof *need);
  fx_arg *outs = calloc (c->shape.n_fwd_outputs + c->cap + 1, sizeof *outs);
  if (need == NULL || outs == NULL)
    {
      free (need);
      free (outs);
      return fx_diag_set (c->diag, FX_ERR_NOMEM, "out of memory");
    }
  for (size_t i = 0; i < c->shape.n_fwd_outputs; i++)
    if (c->outs[i].kind == FX_ARG_NODE)
      mark_ancestors (need, c->outs[i].u.node);
  fx_graph_foreach_node (c->j, n)
    if (c->saved[n->id])
      mark_ancestors (need, n);
  p->forward = fx_graph_new ();
  p->forward->class_name = "GraphModule";
  fx_graph_foreach_node (c->j, n)
    if ((n->op == FX_OP_PLACEHOLDER && !is_tangent (n)) || (need[n->id] && n->op != FX_OP_PLACEHOLDER))
      map[n->id] = fx_graph_copy_node (p->forward, n, map, NULL);
  size_t k = 0;
  for (size_t i = 0; i < c->shape.n_fwd_outputs; i++)
    outs[k++] = mapped (&c->outs[i], map);
  fx_graph_foreach_node (c->j, n)
    if (c->saved[n->id])
      outs[k++] = fx_arg_node (map[n->id]);
  fx_graph_output (p->forward, fx_arg_tuple (outs, k));
  free (need);
  free (outs);
  return FX_OK;
}

/* Ancestors of the grads, stopping at saved values and tangents; a primal reached that is not saved is an error. */
static fx_status
mark_backward (part_ctx *c, bool *need, fx_node *n)
{
  if (need[n->id])
    return FX_OK;
  need[n->id] = true;
  if (c->saved[n->id] || is_tangent (n))
    return FX_OK;
  if (n->op == FX_OP_PLACEHOLDER)
    return fx_node_error (c->diag, n, "partition", FX_ERR_INVALID,
                          "the backward reads this input but the partition does not save it");
  for (size_t i = 0; i < n->n_args; i++)
    {
      const fx_arg *a = &n->args[i];
      size_t cnt = a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE ? a->u.seq.n : 1;
      const fx_arg *items = a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE ? a->u.seq.items : a;
      for (size_t k = 0; k < cnt; k++)
        if (items[k].kind == FX_ARG_NODE)
          {
            fx_status st = mark_backward (c, need, items[k].u.node);
            if (st != FX_OK)
              return st;
          }
    }
  return FX_OK;
}

static fx_status
build_backward (part_ctx *c, fx_partition *p, fx_node **map)
{
  bool *need = c->in_bw;
  fx_arg *outs = calloc (c->shape.n_primals + 1, sizeof *outs);
  fx_status st = outs ? FX_OK : fx_diag_set (c->diag, FX_ERR_NOMEM, "out of memory");
  for (size_t i = 0; st == FX_OK && i < c->shape.n_primals; i++)
    {
      const fx_arg *g = &c->outs[c->shape.n_fwd_outputs + i];
      if (g->kind == FX_ARG_NODE)
        st = mark_backward (c, need, g->u.node);
    }
  if (st == FX_OK)
    {
      memset (map, 0, sizeof (fx_node *) * c->cap);
      p->backward = fx_graph_new ();
      p->backward->class_name = "GraphModule";
      fx_graph_foreach_node (c->j, n)
        if (c->saved[n->id])
          map[n->id] = placeholder_like (p->backward, n, map);
      fx_graph_foreach_node (c->j, n)
        if (is_tangent (n) || (need[n->id] && !c->saved[n->id] && n->op != FX_OP_PLACEHOLDER))
          map[n->id] = fx_graph_copy_node (p->backward, n, map, NULL);
      for (size_t i = 0; i < c->shape.n_primals; i++)
        outs[i] = mapped (&c->outs[c->shape.n_fwd_outputs + i], map);
      fx_graph_output (p->backward, fx_arg_tuple (outs, c->shape.n_primals));
    }
  free (outs);
  return st;
}

/* ---------------------------------------------------------------- reasons */

static const char *
ban_text (ban_reason b)
{
  switch (b)
    {
    case BAN_COMPUTE: return "recomputing it costs a matmul";
    case BAN_RANDOM: return "it is random: recomputing it would draw different numbers";
    case BAN_NOT_RECOMPUTABLE: return "its op is not in the recomputable allowlist";
    case BAN_MATERIALIZED: return "a backward op that cannot fuse with it reads it, so it is materialized anyway";
    case BAN_REDUCTION: return "it is a reduction over 4x smaller than its inputs";
    case BAN_NON_TENSOR: return "it is not a tensor";
    default: return NULL;
    }
}

static void
explain (part_ctx *c, fx_partition *p, fx_partition_kind kind)
{
  fx_arena *a = p->forward->arena;
  size_t n = 0;
  fx_graph_foreach_node (c->j, s)
    n += c->saved[s->id];
  p->saved = fx_arena_alloc (a, sizeof (fx_saved_value) * (n ? n : 1));
  fx_graph_foreach_node (c->j, s)
  {
    if (!c->saved[s->id])
      continue;
    /* the backward graph's first reader: a backward op, or a forward op the backward recomputes */
    const fx_node *user = NULL;
    for (size_t i = 0; i < s->n_users && user == NULL; i++)
      if (s->users[i]->op != FX_OP_OUTPUT && c->in_bw[s->users[i]->id] && !c->saved[s->users[i]->id])
        user = s->users[i];
    const char *why = kind == FX_PARTITION_SAVE_ALL ? "the save-all partition saves every value the backward reads"
                      : s->op == FX_OP_PLACEHOLDER ? "it is a graph input, which the backward cannot recompute"
                      : ban_text (c->ban[s->id]);
    char buf[512];
    size_t bytes = val_bytes (&s->meta.val);
    if (why == NULL)
      {
        snprintf (buf, sizeof buf, "%s%s%s; the min cut found saving it (%zu bytes) cheaper than what recomputing it "
                  "would need", user ? "needed by " : "", user ? user->name : "", user ? " in backward" : "", bytes);
      }
    else
      snprintf (buf, sizeof buf, "%s%s%s%s%s", user ? "needed by " : "", user ? user->name : "",
                user ? " in backward" : "", user ? "; " : "", why);
    p->saved[p->n_saved++] = (fx_saved_value) { fx_arena_strdup (a, s->name), bytes, fx_arena_strdup (a, buf) };
  }
}

/* ---------------------------------------------------------------- entry points */

const char *
fx_partition_kind_name (fx_partition_kind kind)
{
  return kind == FX_PARTITION_SAVE_ALL ? "save-all" : "min-cut";
}

bool
fx_partition_kind_from_name (const char *name, fx_partition_kind *out)
{
  for (int k = 0; k < FX_PARTITION_KIND_COUNT; k++)
    if (strcmp (name, fx_partition_kind_name ((fx_partition_kind) k)) == 0)
      {
        *out = (fx_partition_kind) k;
        return true;
      }
  return false;
}

void
fx_partition_clear (fx_partition *p)
{
  fx_graph_free (p->forward);
  fx_graph_free (p->backward);
  memset (p, 0, sizeof *p);
}

fx_status
fx_autograd_partition (const fx_graph *joint, fx_partition_kind kind, fx_partition *out, fx_diag *diag)
{
  memset (out, 0, sizeof *out);
  part_ctx c = { .j = joint, .cap = joint->next_id + 1, .diag = diag };
  fx_status st = fx_joint_shape_of (joint, &c.shape, diag);
  if (st != FX_OK)
    return st;
  c.outs = fx_graph_output_node (joint)->args[0].u.seq.items;
  c.bw = calloc (c.cap, sizeof *c.bw);
  c.fw = calloc (c.cap, sizeof *c.fw);
  c.saved = calloc (c.cap, sizeof *c.saved);
  c.dist = calloc (c.cap, sizeof *c.dist);
  c.ban = calloc (c.cap, sizeof *c.ban);
  c.in_bw = calloc (c.cap, sizeof *c.in_bw);
  fx_node **map = calloc (c.cap, sizeof *map);
  if (!c.bw || !c.fw || !c.saved || !c.dist || !c.ban || !c.in_bw || !map)
    st = fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  if (st == FX_OK)
    {
      classify (&c);
      if (kind == FX_PARTITION_SAVE_ALL)
        save_all (&c);
      else
        st = min_cut (&c);
    }
  if (st == FX_OK)
    st = build_forward (&c, out, map);
  if (st == FX_OK)
    st = build_backward (&c, out, map);
  if (st == FX_OK)
    {
      out->n_fwd_outputs = c.shape.n_fwd_outputs;
      explain (&c, out, kind);
      st = fx_graph_verify (out->forward, diag);
      if (st == FX_OK)
        st = fx_graph_verify (out->backward, diag);
    }
  free (c.bw);
  free (c.fw);
  free (c.saved);
  free (c.dist);
  free (c.ban);
  free (c.in_bw);
  free (map);
  if (st != FX_OK)
    fx_partition_clear (out);
  return st;
}
