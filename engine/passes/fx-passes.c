/* fx-passes.c: shape propagation, DCE, CSE, decomposition and functionalization, the pass table and the pipeline
   that verifies the graph after each pass. */

/* Switches over opcodes and value kinds name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"
#include "fx/passes.h"
#include "fx/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- shape propagation */

static void
value_to_val (const fx_value *v, fx_arena *arena, fx_val *out)
{
  memset (out, 0, sizeof *out);
  switch (v->kind)
    {
    case FX_VALUE_TENSOR:
      out->kind = FX_VAL_TENSOR;
      fx_tensor_to_meta (v->u.t, arena, &out->tensor);
      break;
    case FX_VALUE_INT:
      out->kind = FX_VAL_INT;
      out->i = v->u.i;
      break;
    case FX_VALUE_FLOAT:
      out->kind = FX_VAL_FLOAT;
      out->f = v->u.f;
      break;
    case FX_VALUE_BOOL:
      out->kind = FX_VAL_BOOL;
      out->b = v->u.b;
      break;
    case FX_VALUE_TUPLE:
    case FX_VALUE_LIST:
      out->kind = FX_VAL_TUPLE;
      out->n_items = v->u.seq.n;
      out->items = fx_arena_alloc (arena, sizeof (fx_val) * (v->u.seq.n ? v->u.seq.n : 1));
      for (size_t i = 0; i < v->u.seq.n; i++)
        value_to_val (&v->u.seq.items[i], arena, &out->items[i]);
      break;
    default:
      out->kind = FX_VAL_NONE;
      break;
    }
}

typedef struct
{
  fx_graph *graph;
  size_t changed;
} prop_ctx;

static void
record_val (const fx_node *node, const fx_value *value, void *data)
{
  prop_ctx *c = data;
  fx_node *n = (fx_node *) node;
  if (n->op == FX_OP_OUTPUT || n->op == FX_OP_PLACEHOLDER)
    return;
  if (n->graph != c->graph)
    {
      /* a torch-level graph runs as its ATen lowering: the value belongs to the torch node the ATen node came
         from (the last ATen node of a torch node holds its result, and comes last) */
      if (n->meta.n_from_node == 0 || n->meta.from_node[0].name == NULL)
        return;
      n = fx_graph_find_node (c->graph, n->meta.from_node[0].name);
      if (n == NULL || n->op == FX_OP_PLACEHOLDER || n->op == FX_OP_OUTPUT)
        return;
      value_to_val (value, c->graph->arena, &n->meta.val);
      return;
    }
  value_to_val (value, c->graph->arena, &n->meta.val);
  c->changed++;
}

fx_status
fx_pass_shape_prop (fx_graph *graph, size_t *changed, fx_diag *diag)
{
  fx_arena *arena = fx_arena_new ();
  size_t nph = fx_graph_count_op (graph, FX_OP_PLACEHOLDER);
  fx_value *inputs = fx_arena_alloc (arena, sizeof (fx_value) * (nph ? nph : 1));
  size_t i = 0;
  fx_status st = FX_OK;
  fx_graph_foreach_node (graph, n)
  {
    if (n->op != FX_OP_PLACEHOLDER)
      continue;
    const fx_val *v = &n->meta.val;
    if (v->kind == FX_VAL_NONE && i < graph->n_inputs)
      v = &graph->inputs[i].val;
    if (v->kind == FX_VAL_TENSOR)
      {
        int64_t sizes[FX_TENSOR_MAX_DIMS], strides[FX_TENSOR_MAX_DIMS];
        int nd = v->tensor.ndim > FX_TENSOR_MAX_DIMS ? FX_TENSOR_MAX_DIMS : v->tensor.ndim;
        for (int d = 0; d < nd; d++)
          {
            sizes[d] = v->tensor.sizes[d].value;
            if (v->tensor.strides)
              strides[d] = v->tensor.strides[d].value;
          }
        /* the annotation is input text: an overflowing or negative layout stops here, at its placeholder */
        fx_diag why;
        fx_diag_clear (&why);
        for (int d = 0; d < nd; d++)
          if (v->tensor.sizes[d].sym != NULL && v->tensor.sizes[d].value < 0)
            snprintf (why.message, sizeof why.message, "symbolic size %.200s has no hint to propagate from",
                      v->tensor.sizes[d].sym);
        if (why.message[0] != '\0' || v->tensor.ndim > FX_TENSOR_MAX_DIMS
            || fx_layout_check (v->tensor.dtype, nd, sizes, v->tensor.strides ? strides : NULL, 0, NULL, &why) != FX_OK)
          {
            if (v->tensor.ndim > FX_TENSOR_MAX_DIMS && why.message[0] == '\0')
              snprintf (why.message, sizeof why.message, "more than %d dims", FX_TENSOR_MAX_DIMS);
            st = fx_diag_set (diag, FX_ERR_INVALID, "placeholder '%s': %s", n->name, why.message);
            if (diag)
              {
                snprintf (diag->node, sizeof diag->node, "%s", n->name);
                snprintf (diag->pass, sizeof diag->pass, "shape_prop");
              }
            break;
          }
        inputs[i] = fx_value_tensor (fx_tensor_new_meta (v->tensor.dtype, nd, sizes, v->tensor.strides ? strides : NULL));
      }
    else if (v->kind == FX_VAL_INT || v->kind == FX_VAL_SYMINT)
      inputs[i] = fx_value_int (v->i);
    else
      {
        st = fx_diag_set (diag, FX_ERR_INVALID, "placeholder '%s' has no shape to propagate from", n->name);
        if (diag)
          {
            snprintf (diag->node, sizeof diag->node, "%s", n->name);
            snprintf (diag->pass, sizeof diag->pass, "shape_prop");
          }
        break;
      }
    i++;
  }
  if (st == FX_OK)
    {
      prop_ctx c = { graph, 0 };
      fx_interp_opts opts = { .meta_only = true, .on_node = record_val, .on_node_data = &c };
      fx_value *outs;
      size_t n_outs;
      st = fx_interp_run (graph, inputs, nph, &opts, arena, &outs, &n_outs, diag);
      if (st == FX_OK)
        for (size_t k = 0; k < n_outs; k++)
          fx_value_clear (&outs[k]);
      if (changed)
        *changed = c.changed;
      if (st == FX_OK && fx_graph_is_torch_level (graph))
        {
          size_t k = 0;
          fx_graph_foreach_node (graph, m)
          {
            if (m->op != FX_OP_PLACEHOLDER && m->op != FX_OP_OUTPUT && m->meta.val.kind != FX_VAL_NONE)
              k++;
          }
          if (changed)
            *changed = k;
        }
    }
  for (size_t k = 0; k < i; k++)
    fx_value_clear (&inputs[k]);
  fx_arena_free (arena);
  return st;
}

/* ---------------------------------------------------------------- gather sinking */

/* The table op a node calls, or NULL (not a call_function of a table op). */
static const fx_op_info *
node_op (const fx_node *n)
{
  if (n->op != FX_OP_CALL_FUNCTION || n->target.kind != FX_TARGET_OP)
    return NULL;
  int id = n->target.op_id >= 0 ? n->target.op_id : fx_op_lookup (n->target.name);
  return id >= 0 ? fx_op_get ((fx_op_id) id) : NULL;
}

static bool
is_gather (const fx_node *n)
{
  const fx_op_info *op = node_op (n);
  return op && op->id == FX_OP_GATHER;
}

/* The shapes of a graph as shape propagation finds them, on a copy (the graph's own metas stay as they were). */
static const fx_tensor_meta *
copy_meta (const fx_graph *shapes, const fx_node *n)
{
  const fx_node *c = n && shapes ? fx_graph_find_node (shapes, n->name) : NULL;
  return c && c->meta.val.kind == FX_VAL_TENSOR ? &c->meta.val.tensor : NULL;
}

static bool
same_dim (const fx_dim *a, const fx_dim *b)
{
  if (a->sym || b->sym)
    return a->sym && b->sym && strcmp (a->sym, b->sym) == 0;
  return a->value == b->value;
}

typedef enum { OPND_FULL, OPND_ALONG, OPND_NO } opnd_class;

/* How an operand of a pointwise src (shape S) relates to a gather along d: the whole shape (gathered with it),
   broadcast along d (its value does not depend on the gathered coordinate: kept as it is), or neither. */
static opnd_class
classify_operand (const fx_tensor_meta *o, const fx_tensor_meta *src, int d)
{
  if (o->ndim == src->ndim)
    {
      bool full = true;
      for (int j = 0; j < o->ndim && full; j++)
        full = same_dim (&o->sizes[j], &src->sizes[j]);
      if (full)
        return OPND_FULL;
    }
  if (o->ndim > src->ndim)
    return OPND_NO;
  for (int j = 0; j < o->ndim; j++)
    {
      int sj = src->ndim - o->ndim + j;
      bool one = o->sizes[j].sym == NULL && o->sizes[j].value == 1;
      if (sj == d ? !one : !(one || same_dim (&o->sizes[j], &src->sizes[sj])))
        return OPND_NO;
    }
  return OPND_ALONG;
}

/* gather(f(a, b), d, idx) with f pointwise: f(gather(a, d, idx), b) where a has f's shape and b is broadcast along
   d (row statistics), so that f is computed at the gathered positions only. cross_entropy's
   gather(log_softmax(x), 1, target) becomes gather(x, 1, target) - amax - log(sum): the [N, C] log_softmax is never
   written (Inductor reaches the same by inlining the pointwise into the indirect load). The same operations run on
   the same values, so the results are bit for bit those of the graph before. Returns the first gather it made (in
   graph order, before the rewritten op), or NULL where it left g alone. */
static fx_node *
sink_one (fx_graph *graph, const fx_graph *shapes, fx_node *g)
{
  if (g->n_args < 3 || g->args[0].kind != FX_ARG_NODE || g->args[1].kind != FX_ARG_INT
      || g->args[2].kind != FX_ARG_NODE)
    return NULL;
  const fx_arg *sparse = fx_node_get_kwarg (g, "sparse_grad");
  if (sparse && !(sparse->kind == FX_ARG_BOOL && !sparse->u.b))
    return NULL;
  fx_node *src = g->args[0].u.node;
  const fx_op_info *op = node_op (src);
  const fx_tensor_meta *sm = copy_meta (shapes, src), *im = copy_meta (shapes, g->args[2].u.node);
  if (op == NULL || op->kind != FX_OP_KIND_POINTWISE || sm == NULL || im == NULL || im->ndim != sm->ndim
      || sm->ndim < 1)
    return NULL;
  int64_t d = g->args[1].u.i < 0 ? g->args[1].u.i + sm->ndim : g->args[1].u.i;
  if (d < 0 || d >= sm->ndim)
    return NULL;
  for (int j = 0; j < sm->ndim; j++)
    if (j != d && !same_dim (&im->sizes[j], &sm->sizes[j]))
      return NULL;
  if (src->n_args > 8)
    return NULL;
  opnd_class cls[8];
  bool any_full = false;
  for (size_t i = 0; i < src->n_args; i++)
    {
      cls[i] = OPND_ALONG;
      if (src->args[i].kind == FX_ARG_NODE)
        {
          const fx_tensor_meta *om = copy_meta (shapes, src->args[i].u.node);
          cls[i] = om ? classify_operand (om, sm, (int) d) : OPND_NO;
          if (cls[i] == OPND_NO)
            return NULL;
          any_full |= cls[i] == OPND_FULL;
        }
      else if (src->args[i].kind != FX_ARG_INT && src->args[i].kind != FX_ARG_FLOAT
               && src->args[i].kind != FX_ARG_BOOL && src->args[i].kind != FX_ARG_NONE)
        return NULL;
    }
  for (size_t i = 0; i < src->n_kwargs; i++)
    if (src->kwargs[i].value.kind == FX_ARG_NODE)
      return NULL;
  if (!any_full)
    return NULL;
  fx_arg args[8];
  fx_node *first = NULL;
  fx_graph_set_insert_point (graph, g);
  for (size_t i = 0; i < src->n_args; i++)
    {
      args[i] = src->args[i];
      if (cls[i] != OPND_FULL || src->args[i].kind != FX_ARG_NODE)
        continue;
      fx_arg ga[3] = { src->args[i], g->args[1], g->args[2] };
      fx_node *gi = fx_graph_call_function (graph, g->target, ga, 3, NULL, 0);
      fx_node_share_user_provenance (gi, g);
      fx_node_set_source (gi, graph->arena, g, "sink_gather", "replace", true);
      args[i] = fx_arg_node (gi);
      if (first == NULL)
        first = gi;
    }
  fx_node *f = fx_graph_call_function (graph, src->target, args, src->n_args, src->kwargs, src->n_kwargs);
  fx_graph_set_insert_point (graph, NULL);
  fx_node_share_user_provenance (f, src);
  fx_node_set_source (f, graph->arena, src, "sink_gather", "replace", true);
  fx_node_replace_all_uses_with (g, f);
  return first;
}

fx_status
fx_pass_sink_gather (fx_graph *graph, size_t *changed, fx_diag *diag)
{
  size_t total = 0;
  bool any = false;
  for (const fx_node *n = graph->first; n && !any; n = n->next)
    any = is_gather (n);
  if (!any)
    {
      if (changed)
        *changed = 0;
      return FX_OK;
    }
  /* shapes from a propagated copy; a graph whose shapes cannot be found is left as it is */
  fx_graph *shapes = fx_graph_copy (graph);
  fx_diag quiet;
  fx_diag_clear (&quiet);
  if (shapes == NULL || fx_pass_shape_prop (shapes, NULL, &quiet) != FX_OK)
    {
      fx_graph_free (shapes);
      if (changed)
        *changed = 0;
      return FX_OK;
    }
  /* one scan: each rewrite moves a gather one pointwise op towards the inputs and the scan goes on from the gathers
     it made (inserted just before), so a chain is followed to its end; bounded by the graph's size */
  size_t limit = 4 * (graph->n_nodes + 4);
  for (fx_node *n = graph->first; n != NULL && total < limit;)
    {
      fx_node *made = is_gather (n) ? sink_one (graph, shapes, n) : NULL;
      if (made == NULL)
        {
          n = n->next;
          continue;
        }
      fx_status st = fx_graph_erase_node (graph, n, diag);
      if (st != FX_OK)
        {
          fx_graph_free (shapes);
          return st;
        }
      total++;
      n = made;
    }
  fx_graph_free (shapes);
  if (changed)
    *changed = total;
  return FX_OK;
}

/* ---------------------------------------------------------------- DCE */

fx_status
fx_pass_dce (fx_graph *graph, size_t *changed, fx_diag *diag)
{
  size_t n = fx_graph_eliminate_dead_code (graph);
  if (changed)
    *changed = n;
  return FX_OK;
}

/* ---------------------------------------------------------------- CSE */

static void
arg_key (const fx_arg *a, fx_buf *out)
{
  switch (a->kind)
    {
    case FX_ARG_NODE: fx_buf_printf (out, "%%%s", a->u.node->name); break;
    case FX_ARG_BOOL: fx_buf_puts (out, a->u.b ? "True" : "False"); break;
    case FX_ARG_INT: fx_buf_printf (out, "%lld", (long long) a->u.i); break;
    case FX_ARG_FLOAT: fx_buf_printf (out, "%.17g", a->u.f); break;
    case FX_ARG_STR: case FX_ARG_SYM: case FX_ARG_GLOBAL: fx_buf_printf (out, "'%s'", a->u.s); break;
    case FX_ARG_DTYPE: fx_buf_printf (out, "dtype%d", (int) a->u.dtype); break;
    case FX_ARG_DEVICE: fx_buf_printf (out, "dev%d:%d", (int) a->u.device.type, a->u.device.index); break;
    case FX_ARG_LAYOUT: fx_buf_printf (out, "layout%d", (int) a->u.layout); break;
    case FX_ARG_MEMFMT: fx_buf_printf (out, "memfmt%d", (int) a->u.memfmt); break;
    case FX_ARG_LIST: case FX_ARG_TUPLE: case FX_ARG_SLICE:
      fx_buf_printf (out, "%d[", (int) a->kind);
      for (size_t i = 0; i < a->u.seq.n; i++)
        {
          arg_key (&a->u.seq.items[i], out);
          fx_buf_putc (out, ',');
        }
      fx_buf_putc (out, ']');
      break;
    case FX_ARG_DICT:
      fx_buf_printf (out, "{%p}", (const void *) a);  /* dicts are never merged */
      break;
    default: fx_buf_puts (out, "None"); break;
    }
}

static bool
cse_candidate (const fx_node *n)
{
  if (n->op != FX_OP_CALL_FUNCTION || fx_node_is_impure (n))
    return false;
  if (n->target.kind == FX_TARGET_OP)
    {
      const fx_op_info *op = node_op (n);
      return op != NULL && op->kind != FX_OP_KIND_RANDOM;
    }
  return n->target.kind == FX_TARGET_OPERATOR && strcmp (n->target.name, "getitem") == 0;
}

fx_status
fx_pass_cse (fx_graph *graph, size_t *changed, fx_diag *diag)
{
  /* open addressing: keys (the call's target and arguments as text) → the first node with that key */
  size_t slots = 16;
  while (slots < 2 * (graph->n_nodes + 1))
    slots *= 2;
  char **keys = calloc (slots, sizeof (char *));
  fx_node **nodes = calloc (slots, sizeof (fx_node *));
  size_t *used = calloc (graph->n_nodes + 1, sizeof (size_t));
  size_t n_used = 0, removed = 0;
  fx_status st = FX_OK;
  fx_node *next;
  for (fx_node *n = graph->first; n != NULL && st == FX_OK; n = next)
    {
      next = n->next;
      if (n->op == FX_OP_CALL_FUNCTION && fx_node_is_impure (n))
        {
          /* a mutation (x.add_(1), copy_): a later identical call may read other values, so nothing seen before
             it is reused after it */
          for (size_t i = 0; i < n_used; i++)
            {
              free (keys[used[i]]);
              keys[used[i]] = NULL;
            }
          n_used = 0;
          continue;
        }
      if (!cse_candidate (n))
        continue;
      fx_buf key;
      fx_buf_init (&key);
      fx_target_format (&n->target, &key);
      for (size_t i = 0; i < n->n_args; i++)
        {
          fx_buf_putc (&key, '|');
          arg_key (&n->args[i], &key);
        }
      for (size_t i = 0; i < n->n_kwargs; i++)
        {
          fx_buf_printf (&key, "|%s=", n->kwargs[i].name);
          arg_key (&n->kwargs[i].value, &key);
        }
      size_t slot = (size_t) fx_hash_bytes (key.data, key.len, 0) & (slots - 1);
      while (keys[slot] != NULL && strcmp (keys[slot], key.data) != 0)
        slot = (slot + 1) & (slots - 1);
      if (keys[slot] != NULL)
        {
          fx_node_replace_all_uses_with (n, nodes[slot]);
          st = fx_graph_erase_node (graph, n, diag);
          if (st == FX_OK)
            removed++;
          else if (diag)
            snprintf (diag->pass, sizeof diag->pass, "cse");
        }
      else if (n_used < graph->n_nodes + 1)
        {
          keys[slot] = fx_buf_steal (&key);
          nodes[slot] = n;
          used[n_used++] = slot;
        }
      fx_buf_free (&key);
    }
  for (size_t i = 0; i < n_used; i++)
    free (keys[used[i]]);
  free (keys);
  free (nodes);
  free (used);
  if (changed)
    *changed = removed;
  return st;
}

/* ---------------------------------------------------------------- decomposition */

fx_status
fx_pass_decompose (fx_graph *graph, size_t *changed, fx_diag *diag)
{
  size_t total = 0, limit = 16 * (graph->n_nodes + 16);
  fx_node *n = graph->first;
  while (n != NULL)
    {
      fx_node *next = n->next;
      const fx_op_info *op = node_op (n);
      if (op == NULL || op->decomp == NULL)
        {
          n = next;
          continue;
        }
      if (total >= limit)
        {
          /* a decomposition that keeps producing composite ops would never end */
          fx_diag_set (diag, FX_ERR_INVALID, "node '%s' (%s): decompositions do not reach a fixed point", n->name,
                       n->target.name);
          if (diag)
            {
              snprintf (diag->node, sizeof diag->node, "%s", n->name);
              snprintf (diag->pass, sizeof diag->pass, "decompose");
            }
          return FX_ERR_INVALID;
        }
      /* the new nodes go before n (its getitem users after it are replaced): resume from n's predecessor, so
         they are decomposed in turn */
      fx_node *prev = n->prev;
      n->target.op_id = op->id;
      fx_status st = op->decomp (graph, n, diag);
      if (st == FX_ERR_UNSUPPORTED)
        {
          /* a form the decomposition does not cover (a softmax to another dtype, a norm of an odd ord): the node
             stays whole, and backends run it as a fallback, as Inductor falls back to ATen */
          if (diag)
            fx_diag_clear (diag);
          n = next;
          continue;
        }
      if (st != FX_OK)
        {
          if (diag)
            snprintf (diag->pass, sizeof diag->pass, "decompose");
          return st;
        }
      total++;
      n = prev ? prev->next : graph->first;
    }
  if (changed)
    *changed = total;
  return FX_OK;
}

/* ---------------------------------------------------------------- functionalization */

static bool
in_list (fx_node *const *list, size_t n, const fx_node *node)
{
  for (size_t i = 0; i < n; i++)
    if (list[i] == node)
      return true;
  return false;
}

/* Rewrites uses of `old` in the nodes after `after` to `replacement`, except in the copy-back nodes the pass made
   (they must keep writing into the graph input). */
static void
replace_later_uses (fx_graph *graph, fx_node *old, fx_node *replacement, fx_node *after, fx_node *const *skip,
                    size_t n_skip)
{
  for (fx_node *u = after->next; u != NULL; u = u->next)
    {
      if (in_list (skip, n_skip, u))
        continue;
      bool touched = false;
      fx_arg *args = fx_arena_alloc (graph->arena, sizeof (fx_arg) * (u->n_args ? u->n_args : 1));
      for (size_t i = 0; i < u->n_args; i++)
        {
          args[i] = u->args[i];
          if (args[i].kind == FX_ARG_NODE && args[i].u.node == old)
            {
              args[i] = fx_arg_node (replacement);
              touched = true;
            }
          else if (args[i].kind == FX_ARG_LIST || args[i].kind == FX_ARG_TUPLE)
            {
              fx_arg *items = fx_arena_alloc (graph->arena, sizeof (fx_arg) * (args[i].u.seq.n + 1));
              for (size_t k = 0; k < args[i].u.seq.n; k++)
                {
                  items[k] = args[i].u.seq.items[k];
                  if (items[k].kind == FX_ARG_NODE && items[k].u.node == old)
                    {
                      items[k] = fx_arg_node (replacement);
                      touched = true;
                    }
                }
              args[i].u.seq.items = items;
            }
        }
      if (touched)
        fx_node_set_args (u, args, u->n_args);
      if (u->n_kwargs > 0)
        {
          fx_kwarg *kw = fx_arena_alloc (graph->arena, sizeof (fx_kwarg) * u->n_kwargs);
          bool kt = false;
          for (size_t i = 0; i < u->n_kwargs; i++)
            {
              kw[i] = u->kwargs[i];
              if (kw[i].value.kind == FX_ARG_NODE && kw[i].value.u.node == old)
                {
                  kw[i].value = fx_arg_node (replacement);
                  kt = true;
                }
            }
          if (kt)
            fx_node_set_kwargs (u, kw, u->n_kwargs);
        }
    }
}

/* True when a node after `after` (the output aside) reads `node`. */
static bool
read_after (const fx_node *after, const fx_node *node)
{
  for (const fx_node *u = after->next; u != NULL; u = u->next)
    {
      if (u->op == FX_OP_OUTPUT)
        continue;
      for (size_t i = 0; i < u->n_args; i++)
        {
          const fx_arg *a = &u->args[i];
          if (a->kind == FX_ARG_NODE && a->u.node == node)
            return true;
          if (a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE)
            for (size_t k = 0; k < a->u.seq.n; k++)
              if (a->u.seq.items[k].kind == FX_ARG_NODE && a->u.seq.items[k].u.node == node)
                return true;
        }
    }
  return false;
}

static fx_status
functionalize_error (fx_diag *diag, const fx_node *n, const char *what)
{
  fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s' (%s): %s", n->name, n->target.name, what);
  if (diag)
    {
      snprintf (diag->node, sizeof diag->node, "%s", n->name);
      snprintf (diag->pass, sizeof diag->pass, "functionalize");
    }
  return FX_ERR_UNSUPPORTED;
}

fx_status
fx_pass_functionalize (fx_graph *graph, size_t *changed, fx_diag *diag)
{
  size_t count = 0;
  fx_node *output = fx_graph_output_node (graph);
  /* only the nodes present now: the copy-back nodes this pass adds are already functional */
  size_t n_orig = 0;
  fx_node **orig = malloc (sizeof (fx_node *) * (graph->n_nodes + 1));
  fx_node **copies = malloc (sizeof (fx_node *) * (graph->n_nodes + 1));
  size_t n_copies = 0;
  fx_graph_foreach_node (graph, n)
    orig[n_orig++] = n;
  fx_status st = FX_OK;
  for (size_t oi = 0; oi < n_orig && st == FX_OK; oi++)
    {
      fx_node *n = orig[oi];
      if (n->op != FX_OP_CALL_FUNCTION || n->target.kind != FX_TARGET_OP)
        continue;
      int fid = fx_op_lookup_inplace (n->target.name);
      if (fid < 0)
        continue;
      if (n->n_args < 1 || n->args[0].kind != FX_ARG_NODE)
        {
          st = functionalize_error (diag, n, "in-place op without a tensor self");
          break;
        }
      fx_node *self = n->args[0].u.node;
      if (fid == FX_OP_COPY && self->op == FX_OP_PLACEHOLDER && n->n_users == 0 && !read_after (n, self))
        {
          /* already an epilogue: the final write into a graph input */
          copies[n_copies++] = n;
          continue;
        }
      if (self->op == FX_OP_CALL_FUNCTION && self->target.kind == FX_TARGET_OP && self->target.op_id >= 0
          && fx_op_get ((fx_op_id) self->target.op_id)->kind == FX_OP_KIND_VIEW)
        {
          /* writing through a view would need the view's inverse on its base */
          st = functionalize_error (diag, n, "in-place op on a view is not functionalized");
          break;
        }
      /* x.op_(args) → op(x, args); x.copy_(src) → copy(x, src): src's values broadcast to x's shape and dtype */
      fx_graph_set_insert_point (graph, n);
      fx_target t = fx_target_op (fx_op_get ((fx_op_id) fid)->target);
      t.op_id = fid;
      fx_node *f = fx_graph_call_function (graph, t, n->args, n->n_args, n->kwargs, n->n_kwargs);
      fx_graph_set_insert_point (graph, NULL);
      f->meta = n->meta;
      fx_node_set_source (f, graph->arena, n, "functionalize", "replace", false);
      fx_node_replace_all_uses_with (n, f);
      replace_later_uses (graph, self, f, f, copies, n_copies);
      st = fx_graph_erase_node (graph, n, diag);
      if (st != FX_OK)
        break;
      if (self->op == FX_OP_PLACEHOLDER && output != NULL)
        {
          /* a mutated graph input: write the final value back, as AOTAutograd's epilogue does */
          fx_arg a[2] = { fx_arg_node (self), fx_arg_node (f) };
          fx_node *prev_copy = NULL;
          for (size_t k = 0; k < n_copies; k++)
            if (copies[k]->args[0].u.node == self)
              prev_copy = copies[k];
          if (prev_copy != NULL)
            fx_node_set_args (prev_copy, a, 2);
          else
            {
              fx_graph_set_insert_point (graph, output);
              fx_target ct = fx_target_op ("aten.copy_.default");
              ct.op_id = -1;
              fx_node *c = fx_graph_call_function (graph, ct, a, 2, NULL, 0);
              fx_graph_set_insert_point (graph, NULL);
              c->meta.stack_trace = f->meta.stack_trace;
              const fx_node_source *src = f->meta.from_node; /* n is erased: its name lives on in f's source */
              fx_node_source *cs = fx_arena_alloc (graph->arena, sizeof *cs);
              cs->name = src->name;
              cs->target = src->target;
              cs->pass_name = "functionalize";
              cs->action = "create";
              c->meta.from_node = cs;
              c->meta.n_from_node = 1;
              copies[n_copies++] = c;
            }
        }
      count++;
    }
  free (orig);
  free (copies);
  if (changed)
    *changed = count;
  return st;
}

/* ---------------------------------------------------------------- table and pipeline */

static fx_status
pass_lower (fx_graph *graph, size_t *changed, fx_diag *diag)
{
  (void) graph;
  (void) changed;
  return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "lowering makes a new graph: use fx_lower_to_aten");
}

static const fx_pass_info passes[] = {
  { "shape_prop", fx_pass_shape_prop, "fill meta['val'] of every node from the placeholders' shapes" },
  { "dce", fx_pass_dce, "remove nodes whose results are unused (Graph.eliminate_dead_code)" },
  { "cse", fx_pass_cse, "merge identical pure calls" },
  { "decompose", fx_pass_decompose, "replace composite ops (softmax, layer norm, ...) by simpler ATen ops" },
  { "functionalize", fx_pass_functionalize, "rewrite in-place ops to functional ones" },
  { "sink_gather", fx_pass_sink_gather, "compute a pointwise op at gathered positions only (gather of f(a, rows))" },
  { "lower", pass_lower, "torch-level graph to ATen (makes a new graph)" },
  { NULL, NULL, NULL },
};

const fx_pass_info *
fx_pass_table (void)
{
  return passes;
}

const fx_pass_info *
fx_pass_find (const char *name)
{
  for (const fx_pass_info *p = passes; p->name != NULL; p++)
    if (strcmp (p->name, name) == 0)
      return p;
  return NULL;
}

fx_status
fx_pass_pipeline (fx_graph *graph, const char *const *names, size_t n_names, fx_buf *dump, fx_diag *diag)
{
  for (size_t i = 0; i < n_names; i++)
    {
      const fx_pass_info *p = fx_pass_find (names[i]);
      if (p == NULL)
        {
          fx_buf known;
          fx_buf_init (&known);
          for (const fx_pass_info *q = passes; q->name != NULL; q++)
            fx_buf_printf (&known, "%s%s", q == passes ? "" : ", ", q->name);
          fx_status st = fx_diag_set (diag, FX_ERR_NOT_FOUND, "unknown pass '%s' (known: %s)", names[i], known.data);
          fx_buf_free (&known);
          return st;
        }
      size_t changed = 0;
      fx_status st = p->fn (graph, &changed, diag);
      if (st == FX_OK)
        st = fx_graph_verify (graph, diag);
      if (st != FX_OK)
        {
          if (diag && diag->pass[0] == '\0')
            snprintf (diag->pass, sizeof diag->pass, "%s", p->name);
          return st;
        }
      if (dump != NULL)
        {
          fx_buf_printf (dump, "# after %s: %zu changed\n", p->name, changed);
          fx_readable_opts ro = { .include_stride = true, .include_device = true };
          fx_graph_print_readable (graph, &ro, dump);
          fx_buf_putc (dump, '\n');
        }
    }
  return FX_OK;
}
