/* fx-lower.c: torch-level graphs (Dynamo output: torch.*, operator.*, call_method) → ATen graphs, the forward half of
   AOTAutograd; each ATen node keeps the torch node's stack trace, module stack and a from_node entry. */

/* Switches over opcodes and value kinds name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"
#include "fx/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  MAP_REDUCE_INT, /* x.max(dim) / argmax(dim): an int dim, the same overload or a .dim one */
  MAP_VARARGS,    /* x.expand(2, 3) / x.expand((2, 3)): sizes as one list */
  MAP_SQUEEZE,    /* x.squeeze() / x.squeeze(d) */
  MAP_TO,         /* x.float(), x.to(dtype): _to_copy, or the input itself when the dtype is already that */
  MAP_MATMUL,     /* a @ b: mm / bmm by rank, views around for N-D @ 2-D */
  MAP_DROPOUT,    /* F.dropout(x, p, training): the input in eval mode */
  MAP_CONTIGUOUS, /* x.contiguous(): the input when its strides are contiguous, else a contiguous clone */
  MAP_EMBEDDING,  /* F.embedding(input, weight) → aten.embedding(weight, input) */
  MAP_PAD,        /* F.pad(x, pad, mode='constant', value) → constant_pad_nd */
  MAP_CONV,       /* F.conv1d/conv2d(x, w, b, stride, padding, dilation, groups) → convolution */
  MAP_CROSS_ENTROPY, /* F.cross_entropy(x, target) → _log_softmax + nll_loss_forward */
  MAP_FACTORY,    /* torch.ones(2, 3) / torch.ones((2, 3)) / torch.full(size, v): sizes as one list, kwargs kept */
  MAP_ARANGE,     /* torch.arange(end) / (start, end) / (start, end, step) */
  MAP_GRAD_MODE,  /* torch._C._set_grad_enabled(b) (Dynamo's no_grad regions): dropped, the engine records no autograd */
  MAP_BATCH_NORM, /* F.batch_norm(x, mean, var, w, b, training=False, momentum, eps) → _native_batch_norm_legit_no_training[0] */
  MAP_ROLL,       /* roll(x, shift, dim): cat of the two slices (one int shift and dim, a concrete size) */
  MAP_VAR_STD,    /* x.var/std(dim, unbiased, keepdim) or (..., correction=c): var.correction, sqrt for std */
  MAP_POOL,       /* F.max_pool2d → max_pool2d_with_indices[0]; F.avg_pool2d, F.adaptive_avg_pool2d with sizes as lists */
  MAP_SETITEM,    /* x[idx] = v → index_put, or slice/select_scatter of the indexed view: x's new value */
  MAP_INTERPOLATE, /* F.interpolate(x, size|scale_factor, mode nearest|bilinear) → upsample_*2d with the output size */
} map_kind;

typedef struct
{
  const char *names;     /* the torch-level names it serves, space-separated (operator.X, torch.X, method X) */
  map_kind kind;
  const char *aten;      /* default ATen overload */
  const char *aten_dim;  /* REDUCE: the overload with dims */
} lower_rule;

static const lower_rule rules[] = {
  { "operator.add operator.iadd torch.add add", MAP_BINARY, "aten.add.Tensor", NULL },
  { "operator.sub operator.isub torch.sub sub", MAP_BINARY, "aten.sub.Tensor", NULL },
  { "operator.mul operator.imul torch.mul mul", MAP_BINARY, "aten.mul.Tensor", NULL },
  { "operator.truediv operator.itruediv torch.div div", MAP_BINARY, "aten.div.Tensor", NULL },
  { "operator.pow torch.pow pow", MAP_BINARY, "aten.pow.Tensor_Tensor", NULL },
  { "operator.lt torch.lt lt", MAP_BINARY, "aten.lt.Tensor", NULL },
  { "operator.le torch.le le", MAP_BINARY, "aten.le.Tensor", NULL },
  { "operator.gt torch.gt gt", MAP_BINARY, "aten.gt.Tensor", NULL },
  { "operator.ge torch.ge ge", MAP_BINARY, "aten.ge.Tensor", NULL },
  { "operator.eq torch.eq eq", MAP_BINARY, "aten.eq.Tensor", NULL },
  { "operator.ne torch.ne ne", MAP_BINARY, "aten.ne.Tensor", NULL },
  { "operator.neg", MAP_SAME, "aten.neg.default", NULL },
  { "operator.pos detach", MAP_IDENTITY, NULL, NULL },
  { "operator.matmul torch.matmul matmul", MAP_MATMUL, NULL, NULL },
  { "operator.and_", MAP_BINARY, "aten.bitwise_and.Tensor", NULL },
  { "operator.or_", MAP_BINARY, "aten.bitwise_or.Tensor", NULL },
  { "operator.xor", MAP_BINARY, "aten.bitwise_xor.Tensor", NULL },
  { "operator.invert", MAP_SAME, "aten.bitwise_not.default", NULL },
  { "operator.mod", MAP_BINARY, "aten.remainder.Tensor", NULL },
  { "mm torch.mm", MAP_SAME, "aten.mm.default", NULL },
  { "bmm torch.bmm", MAP_SAME, "aten.bmm.default", NULL },
  { "torch.addmm", MAP_SAME, "aten.addmm.default", NULL },
  { "torch.rsub", MAP_SAME, "aten.rsub.Tensor", NULL },
  { "torch.clamp clamp", MAP_SAME, "aten.clamp.default", NULL },
  { "torch.clamp_min clamp_min", MAP_SAME, "aten.clamp_min.default", NULL },
  { "torch.clamp_max clamp_max", MAP_SAME, "aten.clamp_max.default", NULL },
  { "masked_fill torch.masked_fill", MAP_SAME, "aten.masked_fill.Scalar", NULL },
  { "torch.zeros_like", MAP_SAME, "aten.zeros_like.default", NULL },
  { "torch.ones_like", MAP_SAME, "aten.ones_like.default", NULL },
  { "torch.full_like", MAP_SAME, "aten.full_like.default", NULL },
  { "torch.empty_like", MAP_SAME, "aten.empty_like.default", NULL },
  { "torch.stack", MAP_SAME, "aten.stack.default", NULL },
  { "torch.flatten flatten", MAP_SAME, "aten.flatten.using_ints", NULL },
  { "t torch.t", MAP_SAME, "aten.t.default", NULL },
  { "torch.transpose transpose", MAP_SAME, "aten.transpose.int", NULL },
  { "torch.permute", MAP_SAME, "aten.permute.default", NULL },
  { "unsqueeze torch.unsqueeze", MAP_SAME, "aten.unsqueeze.default", NULL },
  { "squeeze torch.squeeze", MAP_SQUEEZE, "aten.squeeze.default", "aten.squeeze.dim" },
  { "expand", MAP_VARARGS, "aten.expand.default", NULL },
  { "split torch.split", MAP_SAME, "aten.split.Tensor", NULL },
  { "chunk torch.chunk", MAP_SAME, "aten.chunk.default", NULL },
  { "clone torch.clone", MAP_SAME, "aten.clone.default", NULL },
  { "float", MAP_TO, "float32", NULL },
  { "double", MAP_TO, "float64", NULL },
  { "half", MAP_TO, "float16", NULL },
  { "bfloat16", MAP_TO, "bfloat16", NULL },
  { "int", MAP_TO, "int32", NULL },
  { "long", MAP_TO, "int64", NULL },
  { "bool", MAP_TO, "bool", NULL },
  { "to type_as", MAP_TO, NULL, NULL },
  { "amax torch.amax", MAP_REDUCE, "aten.amax.default", "aten.amax.default" },
  { "amin torch.amin", MAP_REDUCE, "aten.amin.default", "aten.amin.default" },
  { "max torch.max", MAP_REDUCE_INT, "aten.max.default", "aten.max.dim" },
  { "min torch.min", MAP_REDUCE_INT, "aten.min.default", "aten.min.dim" },
  { "argmax torch.argmax", MAP_REDUCE_INT, "aten.argmax.default", "aten.argmax.default" },
  { "argmin torch.argmin", MAP_REDUCE_INT, "aten.argmin.default", "aten.argmin.default" },
  { "torch.cumsum cumsum", MAP_SAME, "aten.cumsum.default", NULL },
  { "log_softmax torch.log_softmax torch.nn.functional.log_softmax",
    MAP_SOFTMAX, "aten._log_softmax.default", NULL },
  { "torch.nn.functional.dropout torch.dropout", MAP_DROPOUT, NULL, NULL },
  { "torch.nn.functional.embedding", MAP_EMBEDDING, "aten.embedding.default", NULL },
  { "torch.nn.functional.pad torch._C._nn.pad", MAP_PAD, "aten.constant_pad_nd.default", NULL },
  { "torch.conv2d torch.nn.functional.conv2d", MAP_CONV, "2", NULL },
  { "torch.conv1d torch.nn.functional.conv1d", MAP_CONV, "1", NULL },
  { "torch.nn.functional.cross_entropy", MAP_CROSS_ENTROPY, NULL, NULL },
  { "torch._C._set_grad_enabled", MAP_GRAD_MODE, NULL, NULL },
  { "torch.nn.functional.batch_norm torch.batch_norm",
    MAP_BATCH_NORM, "aten._native_batch_norm_legit_no_training.default", NULL },
  { "torch.nn.functional.max_pool2d torch.max_pool2d",
    MAP_POOL, "aten.max_pool2d_with_indices.default", NULL },
  { "torch.nn.functional.avg_pool2d torch._C._nn.avg_pool2d", MAP_POOL, "aten.avg_pool2d.default", NULL },
  { "torch.nn.functional.adaptive_avg_pool2d torch._C._nn.adaptive_avg_pool2d",
    MAP_POOL, "aten.adaptive_avg_pool2d.default", NULL },
  { "torch.ones", MAP_FACTORY, "aten.ones.default", NULL },
  { "torch.zeros", MAP_FACTORY, "aten.zeros.default", NULL },
  { "torch.empty", MAP_FACTORY, "aten.empty.memory_format", NULL },
  { "torch.full", MAP_SAME, "aten.full.default", NULL },
  { "torch.arange", MAP_ARANGE, NULL, NULL },
  { "torch.gather gather", MAP_SAME, "aten.gather.default", NULL },
  { "torch.roll roll", MAP_ROLL, "aten.cat.default", NULL },
  { "torch.var var", MAP_VAR_STD, "aten.var.correction", NULL },
  { "torch.std std", MAP_VAR_STD, "aten.sqrt.default", NULL },
  { "torch.var_mean", MAP_VAR_STD, "aten.var_mean.correction", NULL },
  { "torch.std_mean", MAP_VAR_STD, "aten.std_mean.correction", NULL },
  { "torch.topk topk", MAP_SAME, "aten.topk.default", NULL },
  { "operator.setitem", MAP_SETITEM, NULL, NULL },
  { "torch.nn.functional.interpolate", MAP_INTERPOLATE, NULL, NULL },
  { "torch.baddbmm baddbmm", MAP_SAME, "aten.baddbmm.default", NULL },
  { "torch.unbind unbind", MAP_SAME, "aten.unbind.int", NULL },
  { "torch.index_select index_select", MAP_SAME, "aten.index_select.default", NULL },
  { "torch.tril tril", MAP_SAME, "aten.tril.default", NULL },
  { "torch.triu triu", MAP_SAME, "aten.triu.default", NULL },
  { "torch.nn.functional.hardtanh", MAP_SAME, "aten.hardtanh.default", NULL },
  { "torch.nn.functional.leaky_relu", MAP_SAME, "aten.leaky_relu.default", NULL },
  { "torch.nn.functional.hardswish", MAP_SAME, "aten.hardswish.default", NULL },
  { "torch.nn.functional.hardsigmoid", MAP_SAME, "aten.hardsigmoid.default", NULL },
  { "torch.maximum", MAP_SAME, "aten.maximum.default", NULL },
  { "torch.minimum", MAP_SAME, "aten.minimum.default", NULL },
  { "torch.where", MAP_SAME, "aten.where.self", NULL },
  { "torch.cat", MAP_SAME, "aten.cat.default", NULL },
  { "torch.softmax torch.nn.functional.softmax softmax", MAP_SOFTMAX, "aten._softmax.default", NULL },
  { "torch._C._nn.linear torch.nn.functional.linear", MAP_LINEAR, NULL, NULL },
  { "torch._C._nn.gelu torch.nn.functional.gelu", MAP_SAME, "aten.gelu.default", NULL },
  { "torch.nn.functional.relu", MAP_SAME, "aten.relu.default", NULL },
  { "torch.nn.functional.silu", MAP_SAME, "aten.silu.default", NULL },
  { "torch.nn.functional.layer_norm", MAP_LAYER_NORM, "aten.native_layer_norm.default", NULL },
  { "sum torch.sum", MAP_REDUCE, "aten.sum.default", "aten.sum.dim_IntList" },
  { "mean torch.mean", MAP_REDUCE, "aten.mean.default", "aten.mean.dim" },
  { "view", MAP_VIEW, "aten.view.default", NULL },
  { "reshape torch.reshape", MAP_VIEW, "aten.reshape.default", NULL },
  { "contiguous", MAP_CONTIGUOUS, NULL, NULL },
  { "permute", MAP_VIEW, "aten.permute.default", NULL },
};

/* Whether NAME is one of the space-separated NAMES. */
static bool
name_in (const char *names, const char *name)
{
  size_t len = strlen (name);
  for (const char *p = names; (p = strstr (p, name)) != NULL; p += len)
    if ((p == names || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
      return true;
  return false;
}

/* The rule for a torch-level call; *called is the name it was called by. */
static const lower_rule *
find_rule (const fx_node *n, char *buf, size_t len, const char **called)
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
  *called = name;
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
    if (name_in (rules[i].names, name))
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
      generic.names = name;
      generic.kind = MAP_SAME;
      generic.aten = fx_op_get ((fx_op_id) id)->target;
      return &generic;
    }
  return NULL;
}

/* x[idx] on a tensor (not a tuple of results): the index is a slice, None, Ellipsis or a tuple of them, or an int on
   a node whose value is a tensor. */
static bool
is_tensor_index (const fx_node *n)
{
  if (n->op != FX_OP_CALL_FUNCTION || n->target.kind != FX_TARGET_OPERATOR || strcmp (n->target.name, "getitem") != 0
      || n->n_args != 2 || n->args[0].kind != FX_ARG_NODE)
    return false;
  const fx_arg *i = &n->args[1];
  if (i->kind == FX_ARG_SLICE || i->kind == FX_ARG_NONE || i->kind == FX_ARG_ELLIPSIS || i->kind == FX_ARG_TUPLE)
    return true;
  return i->kind == FX_ARG_INT && n->args[0].u.node->meta.val.kind == FX_VAL_TENSOR;
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
    if (is_tensor_index (n)
        && !(n->args[1].kind == FX_ARG_INT && n->args[0].u.node->target.kind == FX_TARGET_OP))
      return true;
  }
  return false;
}

#define MAX_MUTATED_INPUTS 64

typedef struct
{
  fx_graph *out;
  fx_node **map;   /* old id → new node */
  size_t n_map;
  /* graph inputs a setitem wrote: their latest value, written back by a copy_ before the output */
  fx_node *mut_input[MAX_MUTATED_INPUTS], *mut_value[MAX_MUTATED_INPUTS];
  int n_mut;
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
  fx_node_set_source (made, g->arena, from, "lower_to_aten", "create", false);
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

/* The rank of a torch-level tensor argument from its node's meta (sizes may be symbolic), -1 when unknown. */
static int
arg_rank (const fx_arg *a)
{
  if (a == NULL || a->kind != FX_ARG_NODE || a->u.node->meta.val.kind != FX_VAL_TENSOR)
    return -1;
  return a->u.node->meta.val.tensor.ndim;
}

static fx_status
lower_error (fx_diag *diag, const fx_node *n, const char *what)
{
  return fx_node_error (diag, n, "lower_to_aten", FX_ERR_UNSUPPORTED, "%s", what);
}

/* The call's own value stands for it (identity, eval-mode dropout, a cast to the dtype it has). */
static fx_status
alias_input (lower_ctx *c, const fx_node *n, const fx_arg *args)
{
  c->map[n->id] = args[0].kind == FX_ARG_NODE ? args[0].u.node : NULL;
  return FX_OK;
}

/* Maps a call's args and kwargs (at most 16 of each) into the new graph; returns the number of args. */
static size_t
map_call_args (lower_ctx *c, const fx_node *n, fx_arg *args, fx_kwarg *kw, size_t *nk)
{
  size_t na = n->n_args < 16 ? n->n_args : 16;
  *nk = n->n_kwargs < 16 ? n->n_kwargs : 16;
  for (size_t i = 0; i < na; i++)
    args[i] = map_arg (c, &n->args[i]);
  for (size_t i = 0; i < *nk; i++)
    {
      kw[i].name = n->kwargs[i].name;
      kw[i].value = map_arg (c, &n->kwargs[i].value);
    }
  return na;
}

/* ATen ops that return a tuple whose first item is the torch-level result: OP(args)[0]. */
static fx_node *
emit_first (lower_ctx *c, const fx_node *from, const char *aten, const fx_arg *args, size_t n)
{
  fx_arg g0[2] = { fx_arg_node (emit (c, from, aten, args, n, NULL, 0)), fx_arg_int (0) };
  fx_node *res = fx_graph_call_function (c->out, fx_target_operator ("getitem"), g0, 2, NULL, 0);
  provenance (c->out, res, from);
  return res;
}

/* N-D x as 2-D rows for a GEMM: view(x, [prod(sizes[:-1]), sizes[-1]]). */
static fx_arg
rows_view (lower_ctx *c, const fx_node *from, fx_arg x, const int64_t *sizes, int nd)
{
  int64_t rows = 1;
  for (int d = 0; d < nd - 1; d++)
    rows *= sizes[d];
  int64_t v2[2] = { rows, sizes[nd - 1] };
  fx_arg av[2] = { x, fx_arg_int_list (c->out->arena, v2, 2) };
  return fx_arg_node (emit (c, from, "aten.view.default", av, 2, NULL, 0));
}

/* The GEMM result back in x's leading dims: view(res, sizes[:-1] + [cols]). */
static fx_node *
unrows_view (lower_ctx *c, const fx_node *from, fx_node *res, const int64_t *sizes, int nd, int64_t cols)
{
  int64_t vo[FX_TENSOR_MAX_DIMS];
  memcpy (vo, sizes, sizeof (int64_t) * (size_t) nd);
  vo[nd - 1] = cols;
  fx_arg ao[2] = { fx_arg_node (res), fx_arg_int_list (c->out->arena, vo, nd) };
  return emit (c, from, "aten.view.default", ao, 2, NULL, 0);
}

/* Basic indexing as AOTAutograd traces it: ints → select, slices → slice (full ones skipped), None → unsqueeze. */
static fx_status
lower_getitem (lower_ctx *c, const fx_node *n, fx_diag *diag)
{
  const fx_arg *idx = &n->args[1];
  const fx_arg *items = idx->kind == FX_ARG_TUPLE ? idx->u.seq.items : idx;
  size_t n_items = idx->kind == FX_ARG_TUPLE ? idx->u.seq.n : 1;
  int ndim = -1;
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  if (!arg_shape (&n->args[0], &ndim, sizes))
    ndim = -1;
  fx_arg cur = map_arg (c, &n->args[0]);
  int64_t d = 0;
  size_t consumed = 0;   /* items that take a dim of the input (ints and slices) */
  for (size_t k = 0; k < n_items; k++)
    if (items[k].kind == FX_ARG_INT || items[k].kind == FX_ARG_SLICE)
      consumed++;
  for (size_t k = 0; k < n_items; k++)
    {
      const fx_arg *it = &items[k];
      fx_node *made = NULL;
      switch (it->kind)
        {
        case FX_ARG_INT:
          {
            fx_arg a3[3] = { cur, fx_arg_int (d), *it };
            made = emit (c, n, "aten.select.int", a3, 3, NULL, 0);
            break;
          }
        case FX_ARG_SLICE:
          {
            const fx_arg *sl = it->u.seq.items;
            bool full = sl[0].kind == FX_ARG_NONE && sl[1].kind == FX_ARG_NONE
                        && (sl[2].kind == FX_ARG_NONE || (sl[2].kind == FX_ARG_INT && sl[2].u.i == 1));
            if (!full)
              {
                for (int q = 0; q < 3; q++)
                  if (sl[q].kind != FX_ARG_NONE && sl[q].kind != FX_ARG_INT)
                    return lower_error (diag, n, "slice bounds must be ints to lower");
                fx_arg a5[5] = { cur, fx_arg_int (d), sl[0].kind == FX_ARG_INT ? sl[0] : fx_arg_int (0),
                                 sl[1].kind == FX_ARG_INT ? sl[1] : fx_arg_int (INT64_MAX),
                                 sl[2].kind == FX_ARG_INT ? sl[2] : fx_arg_int (1) };
                made = emit (c, n, "aten.slice.Tensor", a5, 5, NULL, 0);
              }
            d++;
            break;
          }
        case FX_ARG_NONE:
          {
            fx_arg a2[2] = { cur, fx_arg_int (d) };
            made = emit (c, n, "aten.unsqueeze.default", a2, 2, NULL, 0);
            d++;
            break;
          }
        case FX_ARG_ELLIPSIS:
          if (ndim < 0)
            return lower_error (diag, n, "indexing with ... needs the input's rank");
          d += ndim - (int64_t) consumed;
          break;
        default:
          return lower_error (diag, n, "advanced indexing (tensors, lists, bools) is not lowered");
        }
      if (made != NULL)
        cur = fx_arg_node (made);
    }
  if (cur.kind != FX_ARG_NODE)
    return lower_error (diag, n, "indexing did not produce a tensor");
  if (cur.u.node == c->map[n->args[0].u.node->id])
    {
      /* x[:] and the like: an alias */
      fx_arg a1[1] = { cur };
      cur = fx_arg_node (emit (c, n, "aten.alias.default", a1, 1, NULL, 0));
    }
  c->map[n->id] = cur.u.node;
  return FX_OK;
}

/* A full slice `:` */
static bool
is_full_slice (const fx_arg *a)
{
  if (a->kind != FX_ARG_SLICE)
    return false;
  const fx_arg *sl = a->u.seq.items;
  return sl[0].kind == FX_ARG_NONE && sl[1].kind == FX_ARG_NONE
         && (sl[2].kind == FX_ARG_NONE || (sl[2].kind == FX_ARG_INT && sl[2].u.i == 1));
}

/* One step of basic indexing on the way to the region a setitem writes: how to write the region back. */
typedef struct
{
  fx_arg parent;   /* the tensor the step viewed */
  int kind;        /* 0 select, 1 slice, 2 unsqueeze */
  int64_t dim;
  fx_arg a[3];     /* select: index; slice: start, end, step */
} view_step;

/* operator.setitem(x, idx, v) as AOTAutograd functionalizes it: the new value of x computed out of place
   (index_put for tensor indices, for basic indexing the indexed region replaced and scattered back up through
   select_scatter/slice_scatter); later reads of x read it, and a graph input gets it copied back before the output
   (the epilogue AOTAutograd emits). Views of x taken before would keep the old values: capture does not put such a
   setitem into the graph. */
static fx_status
lower_setitem (lower_ctx *c, const fx_node *n, fx_diag *diag)
{
  if (n->n_args != 3 || n->args[0].kind != FX_ARG_NODE || n->args[0].u.node->meta.val.kind != FX_VAL_TENSOR)
    return lower_error (diag, n, "setitem expects (tensor, index, value)");
  const fx_tensor_meta *xm = &n->args[0].u.node->meta.val.tensor;
  fx_arg self = map_arg (c, &n->args[0]);
  fx_arg value = map_arg (c, &n->args[2]);
  const fx_arg *idx = &n->args[1];
  const fx_arg *items = idx->kind == FX_ARG_TUPLE ? idx->u.seq.items : idx;
  size_t n_items = idx->kind == FX_ARG_TUPLE ? idx->u.seq.n : 1;
  if (value.kind != FX_ARG_NODE && value.kind != FX_ARG_INT && value.kind != FX_ARG_FLOAT && value.kind != FX_ARG_BOOL)
    return lower_error (diag, n, "setitem of a value that is neither a tensor nor a number");
  bool advanced = false;
  for (size_t k = 0; k < n_items; k++)
    advanced |= items[k].kind == FX_ARG_NODE || items[k].kind == FX_ARG_LIST;
  fx_node *new_self = NULL;
  if (advanced)
    {
      /* x[t] = v, x[:, t] = v, x[t1, t2] = v: index_put(x, [None, t...], v); full slices are None entries */
      fx_arg *ind = fx_arena_alloc (c->out->arena, sizeof (fx_arg) * n_items);
      for (size_t k = 0; k < n_items; k++)
        {
          if (items[k].kind == FX_ARG_NODE)
            ind[k] = map_arg (c, &items[k]);
          else if (items[k].kind == FX_ARG_LIST)
            {
              /* x[[0, 2]] = v: the list as an index tensor, stacked from scalars */
              const fx_arg *l = &items[k];
              bool is_bool = l->u.seq.n > 0 && l->u.seq.items[0].kind == FX_ARG_BOOL;
              fx_arg *parts = fx_arena_alloc (c->out->arena, sizeof (fx_arg) * (l->u.seq.n + 1));
              for (size_t q = 0; q < l->u.seq.n; q++)
                {
                  const fx_arg *e = &l->u.seq.items[q];
                  if (e->kind != (is_bool ? FX_ARG_BOOL : FX_ARG_INT))
                    return lower_error (diag, n, "setitem with a list index is lowered for a flat list of ints or "
                                                 "bools");
                  fx_kwarg k1[1] = { { "dtype", fx_arg_dtype (is_bool ? FX_DTYPE_BOOL : FX_DTYPE_I64) } };
                  parts[q] = fx_arg_node (emit (c, n, "aten.scalar_tensor.default", e, 1, k1, 1));
                }
              if (l->u.seq.n == 0)
                return lower_error (diag, n, "setitem with an empty list index is not lowered");
              fx_arg a1[1] = { fx_arg_list (parts, l->u.seq.n) };
              ind[k] = fx_arg_node (emit (c, n, "aten.stack.default", a1, 1, NULL, 0));
            }
          else if (is_full_slice (&items[k]))
            ind[k] = fx_arg_none ();
          else
            return lower_error (diag, n, "setitem mixing tensor indices with ints, partial slices, None or ... is "
                                         "not lowered");
        }
      fx_arg vals = value;
      if (value.kind != FX_ARG_NODE)
        {
          fx_kwarg k1[1] = { { "dtype", fx_arg_dtype (xm->dtype) } };
          vals = fx_arg_node (emit (c, n, "aten.scalar_tensor.default", &value, 1, k1, 1));
        }
      fx_arg a4[4] = { self, fx_arg_list (ind, n_items), vals, fx_arg_bool (false) };
      new_self = emit (c, n, "aten.index_put.default", a4, 4, NULL, 0);
    }
  else
    {
      view_step steps[2 * FX_TENSOR_MAX_DIMS];
      int n_steps = 0;
      size_t consumed = 0;
      for (size_t k = 0; k < n_items; k++)
        if (items[k].kind == FX_ARG_INT || items[k].kind == FX_ARG_SLICE)
          consumed++;
      fx_arg cur = self;
      int64_t d = 0;
      for (size_t k = 0; k < n_items; k++)
        {
          const fx_arg *it = &items[k];
          if (n_steps >= (int) (sizeof steps / sizeof steps[0]))
            return lower_error (diag, n, "too many indices");
          view_step *s = &steps[n_steps];
          s->parent = cur;
          s->dim = d;
          fx_node *made = NULL;
          switch (it->kind)
            {
            case FX_ARG_INT:
              {
                s->kind = 0;
                s->a[0] = *it;
                fx_arg a3[3] = { cur, fx_arg_int (d), *it };
                made = emit (c, n, "aten.select.int", a3, 3, NULL, 0);
                break;
              }
            case FX_ARG_SLICE:
              if (!is_full_slice (it))
                {
                  const fx_arg *sl = it->u.seq.items;
                  for (int q = 0; q < 3; q++)
                    if (sl[q].kind != FX_ARG_NONE && sl[q].kind != FX_ARG_INT)
                      return lower_error (diag, n, "slice bounds must be ints to lower");
                  s->kind = 1;
                  s->a[0] = sl[0].kind == FX_ARG_INT ? sl[0] : fx_arg_int (0);
                  s->a[1] = sl[1].kind == FX_ARG_INT ? sl[1] : fx_arg_int (INT64_MAX);
                  s->a[2] = sl[2].kind == FX_ARG_INT ? sl[2] : fx_arg_int (1);
                  fx_arg a5[5] = { cur, fx_arg_int (d), s->a[0], s->a[1], s->a[2] };
                  made = emit (c, n, "aten.slice.Tensor", a5, 5, NULL, 0);
                }
              d++;
              break;
            case FX_ARG_NONE:
              {
                s->kind = 2;
                fx_arg a2[2] = { cur, fx_arg_int (d) };
                made = emit (c, n, "aten.unsqueeze.default", a2, 2, NULL, 0);
                d++;
                break;
              }
            case FX_ARG_ELLIPSIS:
              d += xm->ndim - (int64_t) consumed;
              break;
            default:
              return lower_error (diag, n, "setitem with this index is not lowered");
            }
          if (made != NULL)
            {
              cur = fx_arg_node (made);
              n_steps++;
            }
        }
      /* the region's new value: v broadcast and cast to the region (copy), or filled with the number */
      fx_node *v;
      if (value.kind == FX_ARG_NODE)
        {
          fx_arg a2[2] = { cur, value };
          v = emit (c, n, "aten.copy.default", a2, 2, NULL, 0);
        }
      else
        {
          fx_arg a2[2] = { cur, value };
          v = emit (c, n, "aten.full_like.default", a2, 2, NULL, 0);
        }
      for (int k = n_steps - 1; k >= 0; k--)
        {
          const view_step *s = &steps[k];
          if (s->kind == 0)
            {
              fx_arg a4[4] = { s->parent, fx_arg_node (v), fx_arg_int (s->dim), s->a[0] };
              v = emit (c, n, "aten.select_scatter.default", a4, 4, NULL, 0);
            }
          else if (s->kind == 1)
            {
              fx_arg a6[6] = { s->parent, fx_arg_node (v), fx_arg_int (s->dim), s->a[0], s->a[1], s->a[2] };
              v = emit (c, n, "aten.slice_scatter.default", a6, 6, NULL, 0);
            }
          else
            {
              fx_arg a2[2] = { fx_arg_node (v), fx_arg_int (s->dim) };
              v = emit (c, n, "aten.squeeze.dim", a2, 2, NULL, 0);
            }
        }
      new_self = v;
    }
  /* from here on the tensor is its new value: every torch node that stood for it (aliases included) */
  fx_node *old = self.u.node;
  for (size_t i = 0; i < c->n_map; i++)
    if (c->map[i] == old)
      c->map[i] = new_self;
  int k = 0;
  while (k < c->n_mut && c->mut_value[k] != old)
    k++;
  if (k < c->n_mut)
    c->mut_value[k] = new_self;
  else if (old->op == FX_OP_PLACEHOLDER)
    {
      if (c->n_mut == MAX_MUTATED_INPUTS)
        return lower_error (diag, n, "too many graph inputs written by setitem");
      c->mut_input[c->n_mut] = old;
      c->mut_value[c->n_mut++] = new_self;
    }
  c->map[n->id] = NULL;
  return FX_OK;
}

/* The final values of the graph inputs setitems wrote, copied into them (AOTAutograd's epilogue). */
static void
write_back_inputs (lower_ctx *c, const fx_node *output)
{
  for (int k = 0; k < c->n_mut; k++)
    {
      fx_arg a2[2] = { fx_arg_node (c->mut_input[k]), fx_arg_node (c->mut_value[k]) };
      fx_node *cp = emit (c, output, "aten.copy_.default", a2, 2, NULL, 0);
      cp->target.op_id = -1;
    }
}

/* F.interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
   recompute_scale_factor=None, antialias=False) on a 4-D input: upsample_nearest2d / upsample_bilinear2d with the
   output size the graph recorded and, where the scale factor is used as given, the scales. */
static fx_status
lower_interpolate (lower_ctx *c, const fx_node *n, fx_diag *diag)
{
  const fx_arg *sf = get_arg (n, 2, "scale_factor"), *mode = get_arg (n, 3, "mode");
  const fx_arg *ac = get_arg (n, 4, "align_corners"), *rsf = get_arg (n, 5, "recompute_scale_factor");
  const fx_arg *aa = get_arg (n, 6, "antialias");
  const char *m = mode == NULL || mode->kind == FX_ARG_NONE ? "nearest" : mode->kind == FX_ARG_STR ? mode->u.s : "?";
  bool bilinear = strcmp (m, "bilinear") == 0;
  if (!bilinear && strcmp (m, "nearest") != 0)
    return lower_error (diag, n, "interpolate: only modes 'nearest' and 'bilinear' are lowered");
  if (aa != NULL && !(aa->kind == FX_ARG_BOOL && !aa->u.b))
    return lower_error (diag, n, "interpolate with antialias is not lowered");
  int nd = 0;
  int64_t in_sizes[FX_TENSOR_MAX_DIMS];
  if (!arg_shape (&n->args[0], &nd, in_sizes) || nd != 4 || n->meta.val.kind != FX_VAL_TENSOR
      || n->meta.val.tensor.ndim != 4)
    return lower_error (diag, n, "interpolate is lowered for 4-D inputs of concrete sizes");
  int64_t os[2];
  for (int k = 0; k < 2; k++)
    {
      const fx_dim *dm = &n->meta.val.tensor.sizes[2 + k];
      if (dm->sym != NULL)
        return lower_error (diag, n, "interpolate needs a concrete output size to lower");
      os[k] = dm->value;
    }
  /* the kernel's scales: the scale factors as given, unless recompute_scale_factor (then from the sizes) */
  fx_arg scales[2] = { fx_arg_none (), fx_arg_none () };
  bool recompute = rsf != NULL && rsf->kind == FX_ARG_BOOL && rsf->u.b;
  if (sf != NULL && sf->kind != FX_ARG_NONE && !recompute)
    for (int k = 0; k < 2; k++)
      {
        const fx_arg *f = (sf->kind == FX_ARG_LIST || sf->kind == FX_ARG_TUPLE) && sf->u.seq.n == 2
                            ? &sf->u.seq.items[k] : sf;
        if (f->kind == FX_ARG_FLOAT)
          scales[k] = *f;
        else if (f->kind == FX_ARG_INT)
          scales[k] = fx_arg_float ((double) f->u.i);
        else
          return lower_error (diag, n, "interpolate: a scale factor that is not a number or a pair of them");
      }
  fx_arg x = map_arg (c, &n->args[0]);
  fx_arg size = fx_arg_int_list (c->out->arena, os, 2);
  fx_node *res;
  if (bilinear)
    {
      fx_arg a5[5] = { x, size, fx_arg_bool (ac != NULL && ac->kind == FX_ARG_BOOL && ac->u.b), scales[0],
                       scales[1] };
      res = emit (c, n, "aten.upsample_bilinear2d.default", a5, 5, NULL, 0);
    }
  else
    {
      if (ac != NULL && ac->kind == FX_ARG_BOOL && ac->u.b)
        return lower_error (diag, n, "align_corners option can only be set with the interpolating modes");
      fx_arg a4[4] = { x, size, scales[0], scales[1] };
      res = emit (c, n, "aten.upsample_nearest2d.default", a4, 4, NULL, 0);
    }
  c->map[n->id] = res;
  return FX_OK;
}

/* A conv size argument as ATen takes it: a list of nsp ints (F.conv2d accepts one int for all dims). */
static fx_arg
conv_list (lower_ctx *c, const fx_arg *a, int64_t dflt, int nsp)
{
  int64_t v[2] = { dflt, dflt };
  if (a != NULL && a->kind == FX_ARG_INT)
    v[0] = v[1] = a->u.i;
  else if (a != NULL && a->kind != FX_ARG_NONE)
    return *a;
  return fx_arg_int_list (c->out->arena, v, nsp);
}

static fx_status
lower_node (lower_ctx *c, const fx_node *n, fx_diag *diag)
{
  char buf[200];
  const char *called = NULL;
  const lower_rule *r = find_rule (n, buf, sizeof buf, &called);
  if (r == NULL)
    {
      fx_buf t;
      fx_buf_init (&t);
      fx_target_format (&n->target, &t);
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
  size_t nk;
  size_t na = map_call_args (c, n, args, kw, &nk);
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
    case MAP_ROLL:
      {
        const fx_arg *sh = get_arg (n, 1, "shifts"), *dm = get_arg (n, 2, "dims");
        if (sh && (sh->kind == FX_ARG_LIST || sh->kind == FX_ARG_TUPLE) && sh->u.seq.n == 1)
          sh = &sh->u.seq.items[0];
        if (dm && (dm->kind == FX_ARG_LIST || dm->kind == FX_ARG_TUPLE) && dm->u.seq.n == 1)
          dm = &dm->u.seq.items[0];
        int nd = 0;
        int64_t sizes[FX_TENSOR_MAX_DIMS];
        if (!sh || sh->kind != FX_ARG_INT || !dm || dm->kind != FX_ARG_INT || !arg_shape (&n->args[0], &nd, sizes)
            || dm->u.i < -nd || dm->u.i >= nd)
          return lower_error (diag, n, "roll needs one int shift, one int dim and a concrete size to lower");
        int64_t d = dm->u.i < 0 ? dm->u.i + nd : dm->u.i, len = sizes[d];
        int64_t k = len ? ((sh->u.i % len) + len) % len : 0;
        if (k == 0)
          return alias_input (c, n, args);
        /* roll by k: the last k items, then the first len - k */
        fx_arg tail[5] = { args[0], fx_arg_int (d), fx_arg_int (len - k), fx_arg_int (len), fx_arg_int (1) };
        fx_arg head[5] = { args[0], fx_arg_int (d), fx_arg_int (0), fx_arg_int (len - k), fx_arg_int (1) };
        fx_node *t = emit (c, n, "aten.slice.Tensor", tail, 5, NULL, 0);
        fx_node *h = emit (c, n, "aten.slice.Tensor", head, 5, NULL, 0);
        fx_arg *parts = fx_arena_alloc (c->out->arena, 2 * sizeof (fx_arg));
        parts[0] = fx_arg_node (t);
        parts[1] = fx_arg_node (h);
        fx_arg a2[2] = { fx_arg_list (parts, 2), fx_arg_int (d) };
        res = emit (c, n, "aten.cat.default", a2, 2, NULL, 0);
        break;
      }
    case MAP_VAR_STD:
      {
        /* var(x, unbiased) / var(x, dim, unbiased, keepdim) / var(x, dim, correction=c, keepdim=k) */
        const fx_arg *dim = fx_node_get_kwarg (n, "dim");
        const fx_arg *unb = fx_node_get_kwarg (n, "unbiased"), *corr = fx_node_get_kwarg (n, "correction");
        const fx_arg *keep = fx_node_get_kwarg (n, "keepdim");
        /* var_mean / std_mean take the same arguments and return (var or std, mean) */
        size_t p = 1;
        if (p < n->n_args && n->args[p].kind == FX_ARG_BOOL)
          unb = &n->args[p++];
        else
          {
            if (p < n->n_args)
              dim = &n->args[p++];
            if (p < n->n_args)
              unb = &n->args[p++];
            if (p < n->n_args)
              keep = &n->args[p++];
          }
        if ((unb && unb->kind != FX_ARG_BOOL) || (keep && keep->kind != FX_ARG_BOOL)
            || (corr && corr->kind != FX_ARG_INT && corr->kind != FX_ARG_FLOAT && corr->kind != FX_ARG_NONE))
          return lower_error (diag, n, "var/std with arguments it does not know");
        fx_arg d = dim ? *dim : fx_arg_none ();
        if (d.kind == FX_ARG_INT)
          d = fx_arg_list ((fx_arg *) dim, 1);
        fx_kwarg vk[2] = { { "correction", corr && corr->kind != FX_ARG_NONE ? *corr
                                                : fx_arg_int (unb && !unb->u.b ? 0 : 1) },
                           { "keepdim", keep ? *keep : fx_arg_bool (false) } };
        fx_arg a2[2] = { args[0], d };
        bool is_std = strcmp (r->aten, "aten.sqrt.default") == 0;
        res = emit (c, n, is_std ? "aten.var.correction" : r->aten, a2, 2, vk, 2);
        if (res && is_std)
          {
            fx_arg v = fx_arg_node (res);
            res = emit (c, n, "aten.sqrt.default", &v, 1, NULL, 0);
          }
        break;
      }
    case MAP_SETITEM:
      return lower_setitem (c, n, diag);
    case MAP_INTERPOLATE:
      return lower_interpolate (c, n, diag);
    case MAP_SOFTMAX:
      {
        const fx_arg *dim = get_arg (n, 1, "dim");
        if (dim == NULL || dim->kind != FX_ARG_INT)
          return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "node '%s': softmax needs an int dim", n->name);
        /* softmax(x, dim, dtype=d) is _softmax of x converted first (ATen's softmax.int); F.softmax's third
           positional is _stacklevel, so only a dtype value counts */
        const fx_arg *dt = fx_node_get_kwarg (n, "dtype");
        for (size_t i = 2; i < n->n_args && i < 4 && (dt == NULL || dt->kind != FX_ARG_DTYPE); i++)
          dt = &n->args[i];
        fx_arg x = args[0];
        if (dt != NULL && dt->kind == FX_ARG_DTYPE)
          {
            fx_kwarg k1[1] = { { "dtype", *dt } };
            x = fx_arg_node (emit (c, n, "aten._to_copy.default", &args[0], 1, k1, 1));
          }
        fx_arg a3[3] = { x, *dim, fx_arg_bool (false) };
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
        fx_arg x2 = known && xnd != 2 ? rows_view (c, n, args[0], xs, xnd) : args[0];
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
          res = unrows_view (c, n, res, xs, xnd, ws[0]);
        break;
      }
    case MAP_LAYER_NORM:
      {
        const fx_arg *shape = get_arg (n, 1, "normalized_shape");
        const fx_arg *w = get_arg (n, 2, "weight"), *b = get_arg (n, 3, "bias"), *eps = get_arg (n, 4, "eps");
        fx_arg a5[5] = { args[0], shape ? *shape : fx_arg_none (), w ? map_arg (c, w) : fx_arg_none (),
                         b ? map_arg (c, b) : fx_arg_none (), eps ? *eps : fx_arg_float (1e-5) };
        res = emit_first (c, n, r->aten, a5, 5);
        break;
      }
    case MAP_VIEW:
    case MAP_VARARGS:
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
      return alias_input (c, n, args);
    case MAP_CONTIGUOUS:
      {
        const fx_node *src = n->args[0].kind == FX_ARG_NODE ? n->args[0].u.node : NULL;
        bool contiguous = false;
        if (src != NULL && src->meta.val.kind == FX_VAL_TENSOR && src->meta.val.tensor.strides != NULL)
          {
            const fx_tensor_meta *m = &src->meta.val.tensor;
            int64_t expect = 1;
            contiguous = true;
            for (int d = m->ndim - 1; d >= 0; d--)
              {
                if (m->sizes[d].sym != NULL || m->strides[d].sym != NULL)
                  {
                    contiguous = false;
                    break;
                  }
                if (m->sizes[d].value != 1 && m->strides[d].value != expect)
                  contiguous = false;
                expect *= m->sizes[d].value;
              }
          }
        if (contiguous)
          return alias_input (c, n, args);
        fx_kwarg k1[1] = { { "memory_format", fx_arg_memfmt (FX_MEMFMT_CONTIGUOUS) } };
        res = emit (c, n, "aten.clone.default", args, 1, k1, 1);
        break;
      }
    case MAP_EMBEDDING:
      {
        const fx_arg *w = get_arg (n, 1, "weight");
        const fx_arg *pi = get_arg (n, 2, "padding_idx");
        if (w == NULL)
          return lower_error (diag, n, "embedding without weight");
        fx_arg a3[3] = { map_arg (c, w), args[0], pi && pi->kind == FX_ARG_INT ? *pi : fx_arg_int (-1) };
        res = emit (c, n, r->aten, a3, 3, NULL, 0);
        break;
      }
    case MAP_PAD:
      {
        const fx_arg *pad = get_arg (n, 1, "pad");
        const fx_arg *mode = get_arg (n, 2, "mode");
        const fx_arg *value = get_arg (n, 3, "value");
        if (pad == NULL)
          return lower_error (diag, n, "pad without the pad sizes");
        if (mode != NULL && mode->kind == FX_ARG_STR && strcmp (mode->u.s, "constant") != 0)
          return lower_error (diag, n, "only mode='constant' padding is lowered");
        fx_arg a3[3] = { args[0], *pad, value && value->kind != FX_ARG_NONE ? *value : fx_arg_float (0.0) };
        res = emit (c, n, r->aten, a3, 3, NULL, 0);
        break;
      }
    case MAP_CONV:
      {
        int nsp = r->aten[0] - '0';
        const fx_arg *w = get_arg (n, 1, "weight"), *b = get_arg (n, 2, "bias");
        const fx_arg *stride = get_arg (n, 3, "stride"), *padding = get_arg (n, 4, "padding");
        const fx_arg *dil = get_arg (n, 5, "dilation"), *groups = get_arg (n, 6, "groups");
        if (w == NULL)
          return lower_error (diag, n, "convolution without weight");
        if (padding != NULL && padding->kind == FX_ARG_STR)
          return lower_error (diag, n, "padding='same'/'valid' is not lowered; give the sizes");
        int64_t zeros[2] = { 0, 0 };
        fx_arg a9[9] = { args[0], map_arg (c, w), b ? map_arg (c, b) : fx_arg_none (),
                         conv_list (c, stride, 1, nsp), conv_list (c, padding, 0, nsp), conv_list (c, dil, 1, nsp),
                         fx_arg_bool (false), fx_arg_int_list (c->out->arena, zeros, nsp),
                         groups && groups->kind == FX_ARG_INT ? *groups : fx_arg_int (1) };
        res = emit (c, n, "aten.convolution.default", a9, 9, NULL, 0);
        break;
      }
    case MAP_CROSS_ENTROPY:
      {
        const fx_arg *target = get_arg (n, 1, "target"), *weight = get_arg (n, 2, "weight");
        const fx_arg *ignore = get_arg (n, 4, "ignore_index"), *red = get_arg (n, 6, "reduction");
        const fx_arg *smooth = get_arg (n, 7, "label_smoothing");
        if (target == NULL)
          return lower_error (diag, n, "cross_entropy without target");
        if (smooth != NULL && !(smooth->kind == FX_ARG_FLOAT && smooth->u.f == 0.0) && smooth->kind != FX_ARG_NONE)
          return lower_error (diag, n, "cross_entropy with label_smoothing is not lowered");
        int64_t reduction = 1;   /* mean */
        if (red != NULL && red->kind == FX_ARG_STR)
          {
            if (strcmp (red->u.s, "none") == 0)
              reduction = 0;
            else if (strcmp (red->u.s, "sum") == 0)
              reduction = 2;
            else if (strcmp (red->u.s, "mean") != 0)
              return lower_error (diag, n, "cross_entropy reduction must be 'none', 'mean' or 'sum'");
          }
        int xnd = 0;
        int64_t xs[FX_TENSOR_MAX_DIMS];
        if (!arg_shape (&n->args[0], &xnd, xs) || xnd != 2)
          return lower_error (diag, n, "cross_entropy is lowered for 2-D inputs (N, C) of known shape");
        fx_arg ls[3] = { args[0], fx_arg_int (1), fx_arg_bool (false) };
        fx_node *lsm = emit (c, n, "aten._log_softmax.default", ls, 3, NULL, 0);
        fx_arg nl[5] = { fx_arg_node (lsm), map_arg (c, target), weight ? map_arg (c, weight) : fx_arg_none (),
                         fx_arg_int (reduction), ignore && ignore->kind == FX_ARG_INT ? *ignore : fx_arg_int (-100) };
        res = emit_first (c, n, "aten.nll_loss_forward.default", nl, 5);
        break;
      }
    case MAP_GRAD_MODE:
      if (n->n_users != 0)
        return lower_error (diag, n, "the result of _set_grad_enabled is used");
      c->map[n->id] = NULL;
      return FX_OK;
    case MAP_BATCH_NORM:
      {
        /* F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps); torch.batch_norm
           (input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled) */
        bool fn = strncmp (called, "torch.nn.", 9) == 0;
        const fx_arg *mean = get_arg (n, fn ? 1 : 3, "running_mean"), *var = get_arg (n, fn ? 2 : 4, "running_var");
        const fx_arg *w = get_arg (n, fn ? 3 : 1, "weight"), *b = get_arg (n, fn ? 4 : 2, "bias");
        const fx_arg *train = get_arg (n, 5, "training"), *mom = get_arg (n, 6, "momentum");
        const fx_arg *eps = get_arg (n, 7, "eps");
        if (mean == NULL || var == NULL || mean->kind != FX_ARG_NODE || var->kind != FX_ARG_NODE)
          return lower_error (diag, n, "batch_norm without running statistics is not lowered");
        if (train != NULL && !(train->kind == FX_ARG_BOOL && !train->u.b))
          return lower_error (diag, n, "batch_norm in training mode updates running statistics; only eval mode "
                                       "(training=False) is lowered");
        fx_arg a7[7] = { args[0], w ? map_arg (c, w) : fx_arg_none (), b ? map_arg (c, b) : fx_arg_none (),
                         map_arg (c, mean), map_arg (c, var),
                         mom && mom->kind == FX_ARG_FLOAT ? *mom : fx_arg_float (0.1),
                         eps && eps->kind == FX_ARG_FLOAT ? *eps : fx_arg_float (1e-5) };
        res = emit_first (c, n, r->aten, a7, 7);
        break;
      }
    case MAP_POOL:
      {
        bool adaptive = strstr (r->aten, "adaptive") != NULL, is_max = strstr (r->aten, "max_pool") != NULL;
        if (adaptive)
          {
            const fx_arg *os = get_arg (n, 1, "output_size");
            if (os == NULL || (os->kind != FX_ARG_INT && os->kind != FX_ARG_LIST && os->kind != FX_ARG_TUPLE))
              return lower_error (diag, n, "adaptive_avg_pool2d needs its output size");
            fx_arg a2[2] = { args[0], conv_list (c, os, 1, 2) };
            res = emit (c, n, r->aten, a2, 2, NULL, 0);
            break;
          }
        const fx_arg *ks = get_arg (n, 1, "kernel_size"), *st = get_arg (n, 2, "stride");
        const fx_arg *pad = get_arg (n, 3, "padding");
        if (ks == NULL)
          return lower_error (diag, n, "pooling without kernel_size");
        fx_arg kl = conv_list (c, ks, 1, 2);
        /* stride None means the kernel size */
        fx_arg sl = st == NULL || st->kind == FX_ARG_NONE ? kl : conv_list (c, st, 1, 2);
        fx_arg pl = conv_list (c, pad, 0, 2);
        if (is_max)
          {
            const fx_arg *dil = get_arg (n, 4, "dilation"), *ceil = get_arg (n, 5, "ceil_mode");
            const fx_arg *ri = get_arg (n, 6, "return_indices");
            if (ri != NULL && ri->kind == FX_ARG_BOOL && ri->u.b)
              return lower_error (diag, n, "max_pool2d with return_indices=True is not lowered");
            fx_arg a6[6] = { args[0], kl, sl, pl, conv_list (c, dil, 1, 2),
                             ceil && ceil->kind == FX_ARG_BOOL ? *ceil : fx_arg_bool (false) };
            res = emit_first (c, n, r->aten, a6, 6);
          }
        else
          {
            const fx_arg *ceil = get_arg (n, 4, "ceil_mode"), *cip = get_arg (n, 5, "count_include_pad");
            const fx_arg *div = get_arg (n, 6, "divisor_override");
            fx_arg a7[7] = { args[0], kl, sl, pl, ceil && ceil->kind == FX_ARG_BOOL ? *ceil : fx_arg_bool (false),
                             cip && cip->kind == FX_ARG_BOOL ? *cip : fx_arg_bool (true),
                             div && div->kind == FX_ARG_INT ? *div : fx_arg_none () };
            res = emit (c, n, r->aten, a7, 7, NULL, 0);
          }
        break;
      }
    case MAP_FACTORY:
      {
        fx_arg size;
        if (na == 1 && (args[0].kind == FX_ARG_LIST || args[0].kind == FX_ARG_TUPLE))
          size = args[0];
        else
          size = fx_arg_list (args, na);
        size.kind = FX_ARG_LIST;
        res = emit (c, n, r->aten, &size, 1, kw, nk);
        break;
      }
    case MAP_ARANGE:
      {
        const char *ov = na <= 1 ? "aten.arange.default" : na == 2 ? "aten.arange.start" : "aten.arange.start_step";
        if (na == 0 || na > 3)
          return lower_error (diag, n, "arange takes end, start and end, or start, end and step");
        res = emit (c, n, ov, args, na, kw, nk);
        break;
      }
    case MAP_DROPOUT:
      {
        const fx_arg *train = get_arg (n, 2, "training");
        if (train == NULL && strcmp (called, "torch.dropout") == 0)
          train = get_arg (n, 2, "train");
        if (train == NULL || train->kind != FX_ARG_BOOL || train->u.b)
          return lower_error (diag, n, "dropout in training mode draws random masks; only eval-mode dropout "
                                       "(training=False) is lowered");
        return alias_input (c, n, args);
      }
    case MAP_REDUCE_INT:
      {
        const fx_arg *dim = get_arg (n, 1, "dim");
        const fx_arg *keep = get_arg (n, 2, "keepdim");
        if (dim != NULL && dim->kind == FX_ARG_NODE && strstr (r->aten, "arg") == NULL)
          {
            /* torch.max(a, b): elementwise */
            fx_arg a2[2] = { args[0], args[1] };
            res = emit (c, n, strstr (r->aten, "max") ? "aten.maximum.default" : "aten.minimum.default", a2, 2,
                        NULL, 0);
          }
        else if (dim == NULL || dim->kind == FX_ARG_NONE)
          res = emit (c, n, r->aten, args, 1, NULL, 0);
        else
          {
            fx_arg a3[3] = { args[0], *dim, keep ? *keep : fx_arg_bool (false) };
            res = emit (c, n, r->aten_dim, a3, 3, NULL, 0);
          }
        break;
      }
    case MAP_SQUEEZE:
      {
        const fx_arg *dim = get_arg (n, 1, "dim");
        if (dim == NULL || dim->kind == FX_ARG_NONE)
          res = emit (c, n, r->aten, args, 1, NULL, 0);
        else
          {
            fx_arg a2[2] = { args[0], *dim };
            res = emit (c, n, dim->kind == FX_ARG_INT ? r->aten_dim : "aten.squeeze.dims", a2, 2, NULL, 0);
          }
        break;
      }
    case MAP_TO:
      {
        fx_dtype want = r->aten ? fx_dtype_from_name (r->aten) : FX_DTYPE_UNKNOWN;
        for (size_t i = 1; i < n->n_args && want == FX_DTYPE_UNKNOWN; i++)
          {
            if (n->args[i].kind == FX_ARG_DTYPE)
              want = n->args[i].u.dtype;
            else if (n->args[i].kind == FX_ARG_NODE && n->args[i].u.node->meta.val.kind == FX_VAL_TENSOR)
              want = n->args[i].u.node->meta.val.tensor.dtype;   /* x.to(other), x.type_as(other) */
          }
        const fx_arg *kd = fx_node_get_kwarg (n, "dtype");
        if (want == FX_DTYPE_UNKNOWN && kd != NULL && kd->kind == FX_ARG_DTYPE)
          want = kd->u.dtype;
        fx_dtype have = n->args[0].kind == FX_ARG_NODE && n->args[0].u.node->meta.val.kind == FX_VAL_TENSOR
                          ? n->args[0].u.node->meta.val.tensor.dtype : FX_DTYPE_UNKNOWN;
        if (want == FX_DTYPE_UNKNOWN || want == have)
          {
            /* a device move (the engine is one device) or the dtype it already has */
            return alias_input (c, n, args);
          }
        fx_kwarg k1[1] = { { "dtype", fx_arg_dtype (want) } };
        res = emit (c, n, "aten._to_copy.default", args, 1, k1, 1);
        break;
      }
    case MAP_MATMUL:
      {
        int an = 0, bn = 0;
        int64_t as[FX_TENSOR_MAX_DIMS], bs[FX_TENSOR_MAX_DIMS];
        /* 2-D @ 2-D and 3-D @ 3-D need only the ranks (a dynamic graph's symbolic batch stays symbolic) */
        int rka = na >= 2 ? arg_rank (&n->args[0]) : -1, rkb = na >= 2 ? arg_rank (&n->args[1]) : -1;
        if (rka == rkb && (rka == 2 || rka == 3))
          {
            res = emit (c, n, rka == 2 ? "aten.mm.default" : "aten.bmm.default", args, 2, NULL, 0);
            break;
          }
        if (na < 2 || !arg_shape (&n->args[0], &an, as) || !arg_shape (&n->args[1], &bn, bs))
          return lower_error (diag, n, "matmul needs both operands' concrete shapes to lower");
        if (an == 2 && bn == 2)
          res = emit (c, n, "aten.mm.default", args, 2, NULL, 0);
        else if (an == 3 && bn == 3)
          res = emit (c, n, "aten.bmm.default", args, 2, NULL, 0);
        else if (an > 2 && bn == 2)
          {
            fx_arg am[2] = { rows_view (c, n, args[0], as, an), args[1] };
            res = unrows_view (c, n, emit (c, n, "aten.mm.default", am, 2, NULL, 0), as, an, bs[1]);
          }
        else if (an == bn && an > 3 && memcmp (as, bs, sizeof (int64_t) * (size_t) (an - 2)) == 0)
          {
            /* batched: fold the batch dims into one, bmm, unfold */
            int64_t batch = 1;
            for (int d = 0; d < an - 2; d++)
              batch *= as[d];
            int64_t va[3] = { batch, as[an - 2], as[an - 1] }, vb[3] = { batch, bs[bn - 2], bs[bn - 1] };
            fx_arg ra[2] = { args[0], fx_arg_int_list (c->out->arena, va, 3) };
            fx_arg rb[2] = { args[1], fx_arg_int_list (c->out->arena, vb, 3) };
            fx_node *a3 = emit (c, n, "aten.reshape.default", ra, 2, NULL, 0);
            fx_node *b3 = emit (c, n, "aten.reshape.default", rb, 2, NULL, 0);
            fx_arg ab[2] = { fx_arg_node (a3), fx_arg_node (b3) };
            res = unrows_view (c, n, emit (c, n, "aten.bmm.default", ab, 2, NULL, 0), as, an, bs[bn - 1]);
          }
        else
          return lower_error (diag, n, "matmul of these ranks is not lowered (2-D @ 2-D, 3-D @ 3-D, N-D @ 2-D and "
                                       "N-D @ N-D with equal batch dims are)");
        break;
      }
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
  c.n_map = graph->next_id + 1;
  c.map = calloc (c.n_map, sizeof (fx_node *));
  c.n_mut = 0;
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
        if (is_tensor_index (n))
          {
            st = lower_getitem (&c, n, diag);
            break;
          }
        if (n->target.kind == FX_TARGET_OP
            || (n->target.kind == FX_TARGET_OPERATOR && strcmp (n->target.name, "getitem") == 0))
          {
            fx_arg args[16];
            fx_kwarg kw[16];
            size_t nk;
            size_t na = map_call_args (&c, n, args, kw, &nk);
            fx_node *m = fx_graph_call_function (c.out, n->target, args, na, kw, nk);
            m->meta = n->meta;
            /* already ATen (or a getitem of a multi-output call): kept as it is, with where it came from */
            fx_node_set_source (m, c.out->arena, n, "lower_to_aten", "copy", true);
            c.map[n->id] = m;
            break;
          }
        /* SymInt arithmetic (a dynamic graph's B * T): kept as Python's operator on ints */
        if (n->target.kind == FX_TARGET_OPERATOR && n->meta.val.kind == FX_VAL_SYMINT)
          {
            static const char *const sym_ops[] = { "add", "sub", "mul", "floordiv" };
            const char *op = NULL;
            for (size_t k = 0; k < sizeof sym_ops / sizeof sym_ops[0]; k++)
              if (strcmp (n->target.name, sym_ops[k]) == 0)
                op = sym_ops[k];
            if (op && n->n_args == 2 && n->n_kwargs == 0)
              {
                char target[32];
                snprintf (target, sizeof target, "_operator.%s", op);
                fx_arg args[2] = { map_arg (&c, &n->args[0]), map_arg (&c, &n->args[1]) };
                fx_node *m = emit (&c, n, target, args, 2, NULL, 0);
                m->meta = n->meta;
                c.map[n->id] = m;
                break;
              }
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
          write_back_inputs (&c, n);
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
