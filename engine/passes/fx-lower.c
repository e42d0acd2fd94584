/* fx-lower.c: torch-level graphs (Dynamo output: torch.*, operator.*, call_method) → ATen graphs, the forward half of
   AOTAutograd; each ATen node keeps the torch node's stack trace, module stack and a from_node entry. */

/* Switches over opcodes and value kinds name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"
#include "fx/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The target as Graph.__str__ names it ("torch.ops.aten.add.Tensor", "operator.add"). */
static void
target_text (const fx_target *t, fx_buf *out)
{
  switch (t->kind)
    {
    case FX_TARGET_OP: fx_buf_printf (out, "torch.ops.%s", t->name); break;
    case FX_TARGET_OPERATOR: fx_buf_printf (out, "operator.%s", t->name); break;
    case FX_TARGET_BUILTIN: fx_buf_printf (out, "builtins.%s", t->name); break;
    case FX_TARGET_STR: case FX_TARGET_FUNCTION: case FX_TARGET_KIND_COUNT:
    default: fx_buf_puts (out, t->name ? t->name : "?"); break;
    }
}

/* How a torch-level call maps to ATen. */
typedef enum
{
  MAP_SAME,       /* same args: torch.abs(x) → aten.abs.default(x) */
  MAP_BINARY,     /* operator.add(a, b) → aten.add.Tensor(a, b) */
  MAP_RBINARY,    /* operator.sub(2, x) handled as rsub when the first is a number */
  MAP_REDUCE,     /* x.sum(), x.sum(dim, keepdim) */
  MAP_SOFTMAX,    /* softmax(x, dim) → _softmax(x, dim, False) */
  MAP_LINEAR,     /* linear(x, w, b) → t + addmm (views around for >2-D) */
  MAP_LAYER_NORM, /* layer_norm(x, shape, w, b, eps) → native_layer_norm + getitem */
  MAP_VIEW,       /* x.view(*shape) / reshape */
  MAP_IDENTITY,   /* contiguous(), dropout in eval: the input itself */
} map_kind;

typedef struct
{
  const char *name;      /* torch-level name (operator.X, torch.X, method X) */
  map_kind kind;
  const char *aten;      /* default ATen overload */
  const char *aten_dim;  /* REDUCE: the overload with dims */
} lower_rule;

static const lower_rule rules[] = {
  { "operator.add", MAP_BINARY, "aten.add.Tensor", NULL },
  { "operator.iadd", MAP_BINARY, "aten.add.Tensor", NULL },
  { "operator.sub", MAP_BINARY, "aten.sub.Tensor", NULL },
  { "operator.isub", MAP_BINARY, "aten.sub.Tensor", NULL },
  { "operator.mul", MAP_BINARY, "aten.mul.Tensor", NULL },
  { "operator.imul", MAP_BINARY, "aten.mul.Tensor", NULL },
  { "operator.truediv", MAP_BINARY, "aten.div.Tensor", NULL },
  { "operator.itruediv", MAP_BINARY, "aten.div.Tensor", NULL },
  { "operator.pow", MAP_BINARY, "aten.pow.Tensor_Tensor", NULL },
  { "operator.lt", MAP_BINARY, "aten.lt.Tensor", NULL },
  { "operator.le", MAP_BINARY, "aten.le.Tensor", NULL },
  { "operator.gt", MAP_BINARY, "aten.gt.Tensor", NULL },
  { "operator.ge", MAP_BINARY, "aten.ge.Tensor", NULL },
  { "operator.eq", MAP_BINARY, "aten.eq.Tensor", NULL },
  { "operator.ne", MAP_BINARY, "aten.ne.Tensor", NULL },
  { "operator.neg", MAP_SAME, "aten.neg.default", NULL },
  { "operator.matmul", MAP_SAME, "aten.mm.default", NULL },
  { "torch.add", MAP_BINARY, "aten.add.Tensor", NULL },
  { "torch.sub", MAP_BINARY, "aten.sub.Tensor", NULL },
  { "torch.mul", MAP_BINARY, "aten.mul.Tensor", NULL },
  { "torch.div", MAP_BINARY, "aten.div.Tensor", NULL },
  { "torch.maximum", MAP_SAME, "aten.maximum.default", NULL },
  { "torch.minimum", MAP_SAME, "aten.minimum.default", NULL },
  { "torch.where", MAP_SAME, "aten.where.self", NULL },
  { "torch.mm", MAP_SAME, "aten.mm.default", NULL },
  { "torch.bmm", MAP_SAME, "aten.bmm.default", NULL },
  { "torch.cat", MAP_SAME, "aten.cat.default", NULL },
  { "torch.softmax", MAP_SOFTMAX, "aten._softmax.default", NULL },
  { "torch.nn.functional.softmax", MAP_SOFTMAX, "aten._softmax.default", NULL },
  { "torch.log_softmax", MAP_SOFTMAX, "aten._log_softmax.default", NULL },
  { "torch.nn.functional.log_softmax", MAP_SOFTMAX, "aten._log_softmax.default", NULL },
  { "torch._C._nn.linear", MAP_LINEAR, NULL, NULL },
  { "torch.nn.functional.linear", MAP_LINEAR, NULL, NULL },
  { "torch._C._nn.gelu", MAP_SAME, "aten.gelu.default", NULL },
  { "torch.nn.functional.gelu", MAP_SAME, "aten.gelu.default", NULL },
  { "torch.nn.functional.relu", MAP_SAME, "aten.relu.default", NULL },
  { "torch.nn.functional.silu", MAP_SAME, "aten.silu.default", NULL },
  { "torch.nn.functional.layer_norm", MAP_LAYER_NORM, "aten.native_layer_norm.default", NULL },
  { "torch.nn.functional.dropout", MAP_IDENTITY, NULL, NULL },
  { "sum", MAP_REDUCE, "aten.sum.default", "aten.sum.dim_IntList" },
  { "torch.sum", MAP_REDUCE, "aten.sum.default", "aten.sum.dim_IntList" },
  { "mean", MAP_REDUCE, "aten.mean.default", "aten.mean.dim" },
  { "torch.mean", MAP_REDUCE, "aten.mean.default", "aten.mean.dim" },
  { "view", MAP_VIEW, "aten.view.default", NULL },
  { "reshape", MAP_VIEW, "aten.view.default", NULL },
  { "torch.reshape", MAP_VIEW, "aten.view.default", NULL },
  { "contiguous", MAP_IDENTITY, NULL, NULL },
  { "softmax", MAP_SOFTMAX, "aten._softmax.default", NULL },
  { "permute", MAP_VIEW, "aten.permute.default", NULL },
  { "transpose", MAP_SAME, "aten.transpose.int", NULL },
  { "add", MAP_BINARY, "aten.add.Tensor", NULL },
  { "mul", MAP_BINARY, "aten.mul.Tensor", NULL },
  { "sub", MAP_BINARY, "aten.sub.Tensor", NULL },
  { "div", MAP_BINARY, "aten.div.Tensor", NULL },
};

static const lower_rule *
find_rule (const fx_node *n, char *buf, size_t len)
{
  const char *name = NULL;
  if (n->op == FX_OP_CALL_METHOD)
    name = n->target.name;
  else if (n->op == FX_OP_CALL_FUNCTION && n->target.kind == FX_TARGET_OPERATOR)
    {
      snprintf (buf, len, "operator.%s", n->target.name);
      name = buf;
    }
  else if (n->op == FX_OP_CALL_FUNCTION && n->target.kind == FX_TARGET_FUNCTION)
    name = n->target.name;
  if (name == NULL)
    return NULL;
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
    if (strcmp (rules[i].name, name) == 0)
      return &rules[i];
  /* torch.X / x.X with an ATen op of the same name and default overload (torch.abs, torch.sigmoid, x.exp()) */
  static lower_rule generic;
  const char *base = strrchr (name, '.') ? strrchr (name, '.') + 1 : name;
  char aten[256];
  snprintf (aten, sizeof aten, "aten.%s.default", base);
  int id = fx_op_lookup (aten);
  if (id >= 0 && fx_op_get ((fx_op_id) id)->kind == FX_OP_KIND_POINTWISE
      && (n->op == FX_OP_CALL_METHOD || strncmp (name, "torch.", 6) == 0))
    {
      generic.name = name;
      generic.kind = MAP_SAME;
      generic.aten = fx_op_get ((fx_op_id) id)->target;
      return &generic;
    }
  return NULL;
}

bool
fx_graph_is_torch_level (const fx_graph *graph)
{
  fx_graph_foreach_node (graph, n)
  {
    if (n->op == FX_OP_CALL_METHOD || n->op == FX_OP_CALL_MODULE)
      return true;
    if (n->op == FX_OP_CALL_FUNCTION && n->target.kind == FX_TARGET_FUNCTION)
      return true;
    if (n->op == FX_OP_CALL_FUNCTION && n->target.kind == FX_TARGET_OPERATOR && strcmp (n->target.name, "getitem") != 0)
      return true;
  }
  return false;
}

typedef struct
{
  fx_graph *out;
  fx_node **map;   /* old id → new node */
} lower_ctx;

static fx_arg
map_arg (lower_ctx *c, const fx_arg *a)
{
  fx_arg r = *a;
  if (a->kind == FX_ARG_NODE)
    r.u.node = c->map[a->u.node->id];
  else if (a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE)
    {
      r.u.seq.items = fx_arena_alloc (c->out->arena, sizeof (fx_arg) * (a->u.seq.n ? a->u.seq.n : 1));
      for (size_t i = 0; i < a->u.seq.n; i++)
        r.u.seq.items[i] = map_arg (c, &a->u.seq.items[i]);
    }
  return r;
}

static void
provenance (fx_graph *g, fx_node *made, const fx_node *from)
{
  made->meta.stack_trace = fx_arena_strdup (g->arena, from->meta.stack_trace);
  made->meta.nn_module_stack = from->meta.nn_module_stack;
  made->meta.n_nn_module_stack = from->meta.n_nn_module_stack;
  made->meta.source_fn_stack = from->meta.source_fn_stack;
  made->meta.n_source_fn_stack = from->meta.n_source_fn_stack;
  if (made->target.kind == FX_TARGET_OP)
    made->meta.original_aten = made->target.name;
  fx_node_source *src = fx_arena_alloc (g->arena, sizeof *src);
  src->name = fx_arena_strdup (g->arena, from->name);
  src->target = fx_arena_strdup (g->arena, from->target.name);
  src->pass_name = "lower_to_aten";
  src->action = "create";
  made->meta.from_node = src;
  made->meta.n_from_node = 1;
}

static fx_node *
emit (lower_ctx *c, const fx_node *from, const char *aten, const fx_arg *args, size_t n, const fx_kwarg *kw, size_t nk)
{
  fx_target t = fx_target_op (aten);
  t.op_id = fx_op_lookup (aten);
  fx_node *m = fx_graph_call_function (c->out, t, args, n, kw, nk);
  provenance (c->out, m, from);
  return m;
}

static const fx_arg *
get_arg (const fx_node *n, size_t i, const char *kw)
{
  if (i < n->n_args)
    return &n->args[i];
  return kw ? fx_node_get_kwarg (n, kw) : NULL;
}

static bool
is_compare (const char *aten)
{
  static const char *const cmp[] = { "aten.lt.Tensor", "aten.le.Tensor", "aten.gt.Tensor", "aten.ge.Tensor",
                                     "aten.eq.Tensor", "aten.ne.Tensor" };
  for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++)
    if (strcmp (aten, cmp[i]) == 0)
      return true;
  return false;
}

/* The concrete shape of a torch-level argument from its node's meta; false when unknown or symbolic. */
static bool
arg_shape (const fx_arg *a, int *ndim, int64_t *sizes)
{
  if (a == NULL || a->kind != FX_ARG_NODE || a->u.node->meta.val.kind != FX_VAL_TENSOR)
    return false;
  const fx_tensor_meta *m = &a->u.node->meta.val.tensor;
  if (m->ndim > FX_TENSOR_MAX_DIMS)
    return false;
  for (int d = 0; d < m->ndim; d++)
    {
      if (m->sizes[d].sym != NULL || m->sizes[d].value < 0)
        return false;
      sizes[d] = m->sizes[d].value;
    }
  *ndim = m->ndim;
  return true;
}

static fx_arg
int_list (lower_ctx *c, const int64_t *v, int n)
{
  fx_arg *items = fx_arena_alloc (c->out->arena, sizeof (fx_arg) * (size_t) (n ? n : 1));
  for (int i = 0; i < n; i++)
    items[i] = fx_arg_int (v[i]);
  return fx_arg_list (items, (size_t) n);
}

static fx_status
lower_node (lower_ctx *c, const fx_node *n, fx_diag *diag)
{
  char buf[200];
  const lower_rule *r = find_rule (n, buf, sizeof buf);
  if (r == NULL)
    {
      fx_buf t;
      fx_buf_init (&t);
      target_text (&n->target, &t);
      fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': no ATen lowering for %s '%s'", n->name, fx_opcode_name (n->op),
                   t.data);
      fx_buf_free (&t);
      if (diag)
        {
          snprintf (diag->node, sizeof diag->node, "%s", n->name);
          snprintf (diag->pass, sizeof diag->pass, "lower_to_aten");
        }
      return FX_ERR_UNSUPPORTED;
    }
  fx_arg args[16];
  fx_kwarg kw[16];
  size_t na = n->n_args < 16 ? n->n_args : 16, nk = n->n_kwargs < 16 ? n->n_kwargs : 16;
  for (size_t i = 0; i < na; i++)
    args[i] = map_arg (c, &n->args[i]);
  for (size_t i = 0; i < nk; i++)
    {
      kw[i].name = n->kwargs[i].name;
      kw[i].value = map_arg (c, &n->kwargs[i].value);
    }
  fx_node *res = NULL;
  switch (r->kind)
    {
    case MAP_SAME:
      res = emit (c, n, r->aten, args, na, kw, nk);
      break;
    case MAP_BINARY:
      if (na == 2 && args[0].kind != FX_ARG_NODE && args[1].kind == FX_ARG_NODE)
        {
          /* number op tensor */
          if (strcmp (r->aten, "aten.sub.Tensor") == 0)
            {
              fx_arg a2[2] = { args[1], args[0] };
              res = emit (c, n, "aten.rsub.Scalar", a2, 2, NULL, 0);
              break;
            }
          if (strcmp (r->aten, "aten.add.Tensor") == 0 || strcmp (r->aten, "aten.mul.Tensor") == 0)
            {
              fx_arg a2[2] = { args[1], args[0] };
              res = emit (c, n, r->aten, a2, 2, NULL, 0);
              break;
            }
          if (strcmp (r->aten, "aten.pow.Tensor_Tensor") == 0)
            {
              res = emit (c, n, "aten.pow.Scalar", args, 2, NULL, 0);
              break;
            }
        }
      if (strcmp (r->aten, "aten.pow.Tensor_Tensor") == 0 && na == 2 && args[1].kind != FX_ARG_NODE)
        res = emit (c, n, "aten.pow.Tensor_Scalar", args, na, kw, nk);
      else if (na == 2 && is_compare (r->aten) && (args[0].kind != FX_ARG_NODE || args[1].kind != FX_ARG_NODE))
        {
          /* x < 0 → aten.lt.Scalar(x, 0); 0 < x → aten.gt.Scalar(x, 0), as AOTAutograd traces them */
          char name[64];
          const char *op = r->aten + 5;   /* "lt.Tensor" */
          bool swap = args[0].kind != FX_ARG_NODE;
          if (swap)
            op = strncmp (op, "lt.", 3) == 0 ? "gt." : strncmp (op, "gt.", 3) == 0 ? "lt." : strncmp (op, "le.", 3) == 0
                 ? "ge." : strncmp (op, "ge.", 3) == 0 ? "le." : op;
          snprintf (name, sizeof name, "aten.%.3sScalar", op);
          fx_arg a2[2] = { swap ? args[1] : args[0], swap ? args[0] : args[1] };
          res = emit (c, n, fx_arena_strdup (c->out->arena, name), a2, 2, NULL, 0);
        }
      else
        res = emit (c, n, r->aten, args, na, kw, nk);
      break;
    case MAP_REDUCE:
      {
        const fx_arg *dim = get_arg (n, 1, "dim");
        const fx_arg *keep = get_arg (n, 2, "keepdim");
        if (dim == NULL || dim->kind == FX_ARG_NONE)
          res = emit (c, n, r->aten, args, 1, NULL, 0);
        else
          {
            fx_arg d = *dim;
            if (d.kind == FX_ARG_INT)
              d = fx_arg_list ((fx_arg *) dim, 1);
            fx_arg a3[3] = { args[0], d, keep ? *keep : fx_arg_bool (false) };
            res = emit (c, n, r->aten_dim, a3, 3, NULL, 0);
          }
        break;
      }
    case MAP_SOFTMAX:
      {
        const fx_arg *dim = get_arg (n, 1, "dim");
        if (dim == NULL || dim->kind != FX_ARG_INT)
          return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': softmax needs an int dim", n->name);
        fx_arg a3[3] = { args[0], *dim, fx_arg_bool (false) };
        res = emit (c, n, r->aten, a3, 3, NULL, 0);
        break;
      }
    case MAP_LINEAR:
      {
        const fx_arg *w = get_arg (n, 1, "weight"), *b = get_arg (n, 2, "bias");
        if (w == NULL)
          return fx_diag_set (diag, FX_ERR_INVALID, "node '%s': linear without weight", n->name);
        fx_arg wa = map_arg (c, w);
        fx_node *t = emit (c, n, "aten.t.default", &wa, 1, NULL, 0);
        /* x of more than 2 dims: view to 2-D, GEMM, view back (AOTAutograd's decomposition of linear) */
        int xnd = 2, wnd = 0;
        int64_t xs[FX_TENSOR_MAX_DIMS], ws[FX_TENSOR_MAX_DIMS];
        bool known = arg_shape (&n->args[0], &xnd, xs) && arg_shape (w, &wnd, ws) && wnd == 2;
        if (!known && n->args[0].kind == FX_ARG_NODE && n->args[0].u.node->meta.val.kind == FX_VAL_TENSOR
            && n->args[0].u.node->meta.val.tensor.ndim != 2)
          return fx_diag_set (diag, FX_ERR_UNSUPPORTED,
                              "node '%s': linear of a %d-D input needs concrete sizes to lower", n->name,
                              n->args[0].u.node->meta.val.tensor.ndim);
        fx_arg x2 = args[0];
        if (known && xnd != 2)
          {
            int64_t rows = 1;
            for (int d = 0; d < xnd - 1; d++)
              rows *= xs[d];
            int64_t v2[2] = { rows, xs[xnd - 1] };
            fx_arg av[2] = { args[0], int_list (c, v2, 2) };
            x2 = fx_arg_node (emit (c, n, "aten.view.default", av, 2, NULL, 0));
          }
        if (b != NULL && b->kind == FX_ARG_NODE)
          {
            fx_arg a3[3] = { map_arg (c, b), x2, fx_arg_node (t) };
            res = emit (c, n, "aten.addmm.default", a3, 3, NULL, 0);
          }
        else
          {
            fx_arg a2[2] = { x2, fx_arg_node (t) };
            res = emit (c, n, "aten.mm.default", a2, 2, NULL, 0);
          }
        if (known && xnd != 2)
          {
            int64_t vo[FX_TENSOR_MAX_DIMS];
            memcpy (vo, xs, sizeof (int64_t) * (size_t) xnd);
            vo[xnd - 1] = ws[0];
            fx_arg av[2] = { fx_arg_node (res), int_list (c, vo, xnd) };
            res = emit (c, n, "aten.view.default", av, 2, NULL, 0);
          }
        break;
      }
    case MAP_LAYER_NORM:
      {
        const fx_arg *shape = get_arg (n, 1, "normalized_shape");
        const fx_arg *w = get_arg (n, 2, "weight"), *b = get_arg (n, 3, "bias"), *eps = get_arg (n, 4, "eps");
        fx_arg a5[5] = { args[0], shape ? *shape : fx_arg_none (), w ? map_arg (c, w) : fx_arg_none (),
                         b ? map_arg (c, b) : fx_arg_none (), eps ? *eps : fx_arg_float (1e-5) };
        fx_node *ln = emit (c, n, r->aten, a5, 5, NULL, 0);
        fx_arg g[2] = { fx_arg_node (ln), fx_arg_int (0) };
        res = fx_graph_call_function (c->out, fx_target_operator ("getitem"), g, 2, NULL, 0);
        provenance (c->out, res, n);
        break;
      }
    case MAP_VIEW:
      {
        /* x.view(a, b) or x.view((a, b)) */
        fx_arg shape;
        if (na == 2 && (args[1].kind == FX_ARG_LIST || args[1].kind == FX_ARG_TUPLE))
          shape = args[1];
        else
          shape = fx_arg_list (args + 1, na - 1);
        shape.kind = FX_ARG_LIST;
        fx_arg a2[2] = { args[0], shape };
        res = emit (c, n, r->aten, a2, 2, NULL, 0);
        break;
      }
    case MAP_IDENTITY:
      c->map[n->id] = args[0].kind == FX_ARG_NODE ? args[0].u.node : NULL;
      return FX_OK;
    default:
      break;
    }
  c->map[n->id] = res;
  return FX_OK;
}

fx_status
fx_lower_to_aten (const fx_graph *graph, fx_graph **out, fx_diag *diag)
{
  *out = NULL;
  lower_ctx c;
  c.out = fx_graph_new ();
  c.out->class_name = "<lambda>";
  c.map = calloc (graph->next_id + 1, sizeof (fx_node *));
  fx_status st = FX_OK;
  size_t n_ph = 0;
  /* the graph's input specs travel along */
  for (size_t i = 0; i < graph->n_inputs; i++)
    {
      fx_input_spec *s = fx_graph_add_input_spec (c.out, graph->inputs[i].name, graph->inputs[i].kind);
      s->val = graph->inputs[i].val;
    }
  fx_graph_foreach_node (graph, n)
  {
    switch (n->op)
      {
      case FX_OP_PLACEHOLDER:
        {
          /* AOTAutograd's names: arg0_1, arg1_1, ... in order */
          char pname[32];
          snprintf (pname, sizeof pname, "arg%zu_1", n_ph++);
          fx_node *p = fx_graph_placeholder (c.out, pname);
          p->meta = n->meta;
          c.map[n->id] = p;
          break;
        }
      case FX_OP_GET_ATTR:
        st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': get_attr '%s' needs the module's tensors", n->name,
                          n->target.name);
        break;
      case FX_OP_CALL_MODULE:
        st = fx_diag_set (diag, FX_ERR_UNSUPPORTED,
                          "node '%s': call_module '%s' needs the module's parameters; lower the Dynamo graph with its module attributes",
                          n->name, n->target.name);
        if (diag)
          snprintf (diag->node, sizeof diag->node, "%s", n->name);
        break;
      case FX_OP_CALL_FUNCTION:
        if (n->target.kind == FX_TARGET_OP
            || (n->target.kind == FX_TARGET_OPERATOR && strcmp (n->target.name, "getitem") == 0))
          {
            fx_arg args[16];
            fx_kwarg kw[16];
            size_t na = n->n_args < 16 ? n->n_args : 16, nk = n->n_kwargs < 16 ? n->n_kwargs : 16;
            for (size_t i = 0; i < na; i++)
              args[i] = map_arg (&c, &n->args[i]);
            for (size_t i = 0; i < nk; i++)
              {
                kw[i].name = n->kwargs[i].name;
                kw[i].value = map_arg (&c, &n->kwargs[i].value);
              }
            fx_node *m = fx_graph_call_function (c.out, n->target, args, na, kw, nk);
            m->meta = n->meta;
            c.map[n->id] = m;
            break;
          }
        /* fall through: torch-level function */
        st = lower_node (&c, n, diag);
        break;
      case FX_OP_CALL_METHOD:
        st = lower_node (&c, n, diag);
        break;
      case FX_OP_OUTPUT:
        {
          fx_arg a = n->n_args ? map_arg (&c, &n->args[0]) : fx_arg_none ();
          fx_graph_output (c.out, a);
          break;
        }
      case FX_OPCODE_COUNT:
      default:
        break;
      }
    if (st != FX_OK)
      break;
  }
  free (c.map);
  if (st != FX_OK)
    {
      fx_graph_free (c.out);
      return st;
    }
  fx_graph_resolve_ops (c.out);
  *out = c.out;
  return FX_OK;
}
