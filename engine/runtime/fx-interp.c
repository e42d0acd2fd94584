/* fx-interp.c: the interpreter: runs a graph node by node on the reference kernels, freeing values after their
   last use; errors name the node. */
#include "fx/runtime.h"
#include "fx/passes.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Switches over arg kinds name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

typedef struct
{
  fx_value *env;        /* by node id */
  uint32_t *last_use;   /* by node id: the position of the last node reading it */
  fx_arena *arena;
} interp_state;

fx_status
fx_arg_to_value (const fx_arg *a, const fx_value *env, fx_arena *arena, fx_value *out, const fx_arg **bad)
{
  *out = fx_value_none ();
  switch (a->kind)
    {
    case FX_ARG_NONE: return FX_OK;
    case FX_ARG_NODE: *out = env[a->u.node->id]; return FX_OK;
    case FX_ARG_BOOL: *out = fx_value_bool (a->u.b); return FX_OK;
    case FX_ARG_INT: *out = fx_value_int (a->u.i); return FX_OK;
    case FX_ARG_FLOAT: *out = fx_value_float (a->u.f); return FX_OK;
    case FX_ARG_STR: out->kind = FX_VALUE_STR; out->u.s = a->u.s; return FX_OK;
    case FX_ARG_DTYPE: out->kind = FX_VALUE_DTYPE; out->u.dtype = a->u.dtype; return FX_OK;
    case FX_ARG_DEVICE: out->kind = FX_VALUE_DEVICE; out->u.device = a->u.device; return FX_OK;
    case FX_ARG_LAYOUT: out->kind = FX_VALUE_LAYOUT; out->u.layout = a->u.layout; return FX_OK;
    case FX_ARG_MEMFMT: out->kind = FX_VALUE_MEMFMT; out->u.memfmt = a->u.memfmt; return FX_OK;
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
      out->kind = a->kind == FX_ARG_LIST ? FX_VALUE_LIST : FX_VALUE_TUPLE;
      out->u.seq.n = a->u.seq.n;
      out->u.seq.items = fx_arena_alloc (arena, sizeof (fx_value) * (a->u.seq.n + 1));
      for (size_t i = 0; i < a->u.seq.n; i++)
        {
          fx_status st = fx_arg_to_value (&a->u.seq.items[i], env, arena, &out->u.seq.items[i], bad);
          if (st != FX_OK)
            return st;
        }
      return FX_OK;
    case FX_ARG_GLOBAL:
      {
        fx_dtype dt = fx_dtype_from_name (a->u.s);
        if (dt != FX_DTYPE_UNKNOWN)
          {
            out->kind = FX_VALUE_DTYPE;
            out->u.dtype = dt;
            return FX_OK;
          }
        if (strcmp (a->u.s, "inf") == 0 || strcmp (a->u.s, "math.inf") == 0)
          {
            *out = fx_value_float (INFINITY);
            return FX_OK;
          }
      }
      /* fall through */
    case FX_ARG_SYM:
    default:
      *bad = a;
      return FX_ERR_UNSUPPORTED;
    }
}

/* fx_arg → fx_value; node references are borrowed from env (no reference taken). */
static fx_status
arg_to_value (interp_state *s, const fx_node *user, const fx_arg *a, fx_value *out, fx_diag *diag)
{
  const fx_arg *bad = NULL;
  if (fx_arg_to_value (a, s->env, s->arena, out, &bad) == FX_OK)
    return FX_OK;
  if (bad->kind == FX_ARG_GLOBAL)
    return fx_node_error (diag, user, NULL, FX_ERR_UNSUPPORTED,
                          "argument '%s' is a Python object the interpreter cannot use", bad->u.s);
  if (bad->kind == FX_ARG_SYM)
    return fx_node_error (diag, user, NULL, FX_ERR_UNSUPPORTED,
                          "argument '%s' is a symbolic size; give concrete inputs", bad->u.s);
  return fx_node_error (diag, user, NULL, FX_ERR_UNSUPPORTED, "argument of kind %d is not supported",
                        (int) bad->kind);
}

static void
note_uses (fx_node *n, void *data)
{
  void **d = data;
  interp_state *s = d[0];
  uint32_t pos = *(uint32_t *) d[1];
  s->last_use[n->id] = pos;
}

/* "f32[4, 8]" for a tensor operand (lists of tensors item by item); nothing for the rest. */
static void
describe_operand (const fx_value *v, fx_buf *out)
{
  if (v->kind == FX_VALUE_TENSOR)
    {
      if (out->len)
        fx_buf_puts (out, ", ");
      fx_buf_puts (out, fx_dtype_abbr (v->u.t->dtype));
      fx_buf_putc (out, '[');
      fx_buf_put_ints (out, v->u.t->sizes, v->u.t->ndim);
      fx_buf_putc (out, ']');
    }
  else if (v->kind == FX_VALUE_LIST || v->kind == FX_VALUE_TUPLE)
    for (size_t i = 0; i < v->u.seq.n; i++)
      describe_operand (&v->u.seq.items[i], out);
}

static fx_status
run_op (interp_state *s, const fx_node *node, const fx_interp_opts *opts, fx_diag *diag)
{
  int id = node->target.op_id;
  if (id < 0)
    id = fx_op_lookup (node->target.name);
  bool inplace = false;
  if (id < 0)
    {
      id = fx_op_lookup_inplace (node->target.name);
      inplace = id >= 0;
    }
  if (id < 0)
    return fx_node_error (diag, node, NULL, FX_ERR_UNSUPPORTED,
                          "unknown op '%s': the engine's op table has no such op", node->target.name);
  const fx_op_info *op = fx_op_get ((fx_op_id) id);
  fx_value args[FX_OP_MAX_ARGS];
  fx_value kwv[FX_OP_MAX_ARGS];
  const char *kwn[FX_OP_MAX_ARGS];
  if (node->n_args > FX_OP_MAX_ARGS || node->n_kwargs > FX_OP_MAX_ARGS)
    return fx_node_error (diag, node, NULL, FX_ERR_INVALID, "too many arguments");
  for (size_t i = 0; i < node->n_args; i++)
    {
      fx_status st = arg_to_value (s, node, &node->args[i], &args[i], diag);
      if (st != FX_OK)
        return st;
    }
  for (size_t i = 0; i < node->n_kwargs; i++)
    {
      kwn[i] = node->kwargs[i].name;
      fx_status st = arg_to_value (s, node, &node->kwargs[i].value, &kwv[i], diag);
      if (st != FX_OK)
        return st;
    }
  fx_op_call call;
  memset (&call, 0, sizeof call);
  call.arena = s->arena;
  call.alloc = opts && opts->alloc ? opts->alloc : NULL;
  call.gen = opts ? opts->gen : NULL;
  call.node_name = node->name;
  call.op = op;
  fx_status st = fx_op_bind (&call, op, args, node->n_args, kwn, kwv, node->n_kwargs, diag);
  if (st == FX_OK)
    {
      if (opts && opts->meta_only)
        st = fx_op_infer (&call);
      else
        st = fx_op_execute (&call);
    }
  if (st != FX_OK)
    {
      if (diag)
        {
          if (diag->node[0] == '\0')
            snprintf (diag->node, sizeof diag->node, "%s", node->name);
          /* the operands' shapes locate a shape error at run time */
          fx_buf d;
          fx_buf_init (&d);
          for (size_t i = 0; i < node->n_args; i++)
            describe_operand (&args[i], &d);
          for (size_t i = 0; i < node->n_kwargs; i++)
            describe_operand (&kwv[i], &d);
          if (d.len > 0 && strstr (diag->message, "(operands: ") == NULL)
            {
              fx_buf m;
              fx_buf_init (&m);
              fx_buf_printf (&m, "%s (operands: %s)", diag->message, d.data);
              snprintf (diag->message, sizeof diag->message, "%s", m.data);
              fx_buf_free (&m);
            }
          fx_buf_free (&d);
        }
      fx_op_call_clear (&call);
      return st;
    }
  fx_value result;
  const fx_op_schema *schema = fx_op_get_schema (op->id);
  if (call.n_outs == 1 || schema->returns_list)
    {
      result = call.outs[0];
      call.outs[0] = fx_value_none ();
    }
  else
    {
      result = fx_value_none ();
      result.kind = FX_VALUE_TUPLE;
      result.u.seq.n = (size_t) call.n_outs;
      result.u.seq.items = fx_arena_alloc (s->arena, sizeof (fx_value) * (size_t) (call.n_outs ? call.n_outs : 1));
      for (int i = 0; i < call.n_outs; i++)
        {
          result.u.seq.items[i] = call.outs[i];
          call.outs[i] = fx_value_none ();
        }
    }
  if (inplace && call.args[0].kind == FX_VALUE_TENSOR && result.kind == FX_VALUE_TENSOR && !(opts && opts->meta_only))
    {
      /* x.add_(y): compute functionally, write back into self, and the node's value is self */
      fx_tensor *self = call.args[0].u.t;
      st = fx_tensor_copy_into (self, result.u.t, diag);
      fx_value_clear (&result);
      if (st != FX_OK)
        return fx_node_error (diag, node, NULL, st, "in-place result cannot be written back: %s",
                              diag ? diag->message : "");
      result = fx_value_tensor (fx_tensor_ref (self));
    }
  s->env[node->id] = result;
  return FX_OK;
}

static fx_status
run_getitem (interp_state *s, const fx_node *node, fx_diag *diag)
{
  if (node->n_args != 2 || node->args[0].kind != FX_ARG_NODE || node->args[1].kind != FX_ARG_INT)
    return fx_node_error (diag, node, NULL, FX_ERR_UNSUPPORTED, "getitem expects (node, int)");
  fx_value *src = &s->env[node->args[0].u.node->id];
  int64_t i = node->args[1].u.i;
  if (src->kind != FX_VALUE_TUPLE && src->kind != FX_VALUE_LIST)
    return fx_node_error (diag, node, NULL, FX_ERR_INVALID, "getitem on a value that is not a sequence");
  int64_t n = (int64_t) src->u.seq.n;
  if (i < 0)
    i += n;
  if (i < 0 || i >= n)
    return fx_node_error (diag, node, NULL, FX_ERR_INVALID, "index %lld out of range for a sequence of %lld",
                          (long long) node->args[1].u.i, (long long) n);
  s->env[node->id] = fx_value_dup (&src->u.seq.items[i], s->arena);
  return FX_OK;
}

fx_status
fx_interp_run (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, const fx_interp_opts *opts,
               fx_arena *arena, fx_value **outputs, size_t *n_outputs, fx_diag *diag)
{
  *outputs = NULL;
  *n_outputs = 0;
  if (fx_graph_is_torch_level (graph))
    {
      fx_graph *lowered = NULL;
      fx_status st = fx_lower_to_aten (graph, &lowered, diag);
      if (st != FX_OK)
        return st;
      st = fx_interp_run (lowered, inputs, n_inputs, opts, arena, outputs, n_outputs, diag);
      fx_graph_free (lowered);
      return st;
    }
  interp_state s;
  s.arena = fx_arena_new ();
  uint32_t nids = graph->next_id + 1;
  s.env = calloc (nids, sizeof (fx_value));
  s.last_use = calloc (nids, sizeof (uint32_t));
  uint32_t pos = 0;
  void *d[2] = { &s, &pos };
  fx_graph_foreach_node (graph, n)
  {
    pos++;
    fx_node_foreach_input (n, note_uses, d);
  }
  fx_status st = FX_OK;
  size_t ph = 0;
  pos = 0;
  fx_graph_foreach_node (graph, n)
  {
    pos++;
    switch (n->op)
      {
      case FX_OP_PLACEHOLDER:
        if (ph < n_inputs)
          s.env[n->id] = fx_value_dup (&inputs[ph], s.arena);
        else if (n->default_value != NULL)
          st = arg_to_value (&s, n, n->default_value, &s.env[n->id], diag);
        else
          st = fx_node_error (diag, n, NULL, FX_ERR_INVALID,
                              "no input given for placeholder %zu (%zu inputs given)", ph, n_inputs);
        ph++;
        break;
      case FX_OP_GET_ATTR:
        st = fx_node_error (diag, n, NULL, FX_ERR_UNSUPPORTED,
                            "get_attr '%s' has no tensor value (module attributes are not stored with the graph)",
                            n->target.name);
        break;
      case FX_OP_CALL_FUNCTION:
        if (n->target.kind == FX_TARGET_OP)
          st = run_op (&s, n, opts, diag);
        else if (n->target.kind == FX_TARGET_OPERATOR && strcmp (n->target.name, "getitem") == 0)
          st = run_getitem (&s, n, diag);
        else
          {
            fx_buf t;
            fx_buf_init (&t);
            fx_target_format (&n->target, &t);
            st = fx_node_error (diag, n, NULL, FX_ERR_UNSUPPORTED, "unknown op '%s'", t.data);
            fx_buf_free (&t);
          }
        break;
      case FX_OP_CALL_METHOD:
      case FX_OP_CALL_MODULE:
        st = fx_node_error (diag, n, NULL, FX_ERR_UNSUPPORTED, "%s '%s' must be lowered to ATen first",
                            fx_opcode_name (n->op), n->target.name);
        break;
      case FX_OP_OUTPUT:
        {
          fx_value out;
          st = n->n_args ? arg_to_value (&s, n, &n->args[0], &out, diag) : FX_OK;
          if (st != FX_OK)
            break;
          if (n->n_args == 0)
            out = fx_value_none ();
          if (out.kind == FX_VALUE_TUPLE || out.kind == FX_VALUE_LIST)
            {
              *n_outputs = out.u.seq.n;
              *outputs = fx_arena_alloc (arena, sizeof (fx_value) * (out.u.seq.n ? out.u.seq.n : 1));
              for (size_t i = 0; i < out.u.seq.n; i++)
                (*outputs)[i] = fx_value_dup (&out.u.seq.items[i], arena);
            }
          else
            {
              *n_outputs = 1;
              *outputs = fx_arena_alloc (arena, sizeof (fx_value));
              (*outputs)[0] = fx_value_dup (&out, arena);
            }
          break;
        }
      case FX_OPCODE_COUNT:
      default:
        st = fx_node_error (diag, n, NULL, FX_ERR_INVALID, "bad opcode");
        break;
      }
    if (st != FX_OK)
      break;
    if (opts && opts->on_node)
      opts->on_node (n, &s.env[n->id], opts->on_node_data);
    /* free what no later node reads */
    for (size_t i = 0; i < n->n_args + n->n_kwargs; i++)
      {
        const fx_arg *a = i < n->n_args ? &n->args[i] : &n->kwargs[i - n->n_args].value;
        if (a->kind == FX_ARG_NODE && s.last_use[a->u.node->id] == pos)
          fx_value_clear (&s.env[a->u.node->id]);
        else if (a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE)
          for (size_t k = 0; k < a->u.seq.n; k++)
            if (a->u.seq.items[k].kind == FX_ARG_NODE && s.last_use[a->u.seq.items[k].u.node->id] == pos)
              fx_value_clear (&s.env[a->u.seq.items[k].u.node->id]);
      }
    if (n->n_users == 0 && n->op != FX_OP_OUTPUT)
      fx_value_clear (&s.env[n->id]);
  }
  for (uint32_t i = 0; i < nids; i++)
    fx_value_clear (&s.env[i]);
  free (s.env);
  free (s.last_use);
  fx_arena_free (s.arena);
  if (st != FX_OK)
    {
      for (size_t i = 0; i < *n_outputs; i++)
        fx_value_clear (&(*outputs)[i]);
      *outputs = NULL;
      *n_outputs = 0;
    }
  return st;
}

fx_status
fx_interp_run_reference (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                         fx_value **ref, size_t *n_ref, fx_value **ref64, size_t *n_ref64, fx_diag *diag)
{
  fx_interp_opts io;
  memset (&io, 0, sizeof io);
  fx_generator gen;
  fx_generator_seed (&gen, 0);
  io.gen = &gen;
  *ref64 = NULL;
  *n_ref64 = 0;
  /* the reference must leave the inputs as they were for the backends (a graph may write into them) */
  fx_value *own = fx_inputs_for_run (graph, inputs, n_inputs);
  fx_status st = fx_interp_run (graph, own ? own : inputs, n_inputs, &io, arena, ref, n_ref, diag);
  fx_inputs_for_run_free (own, n_inputs);
  if (st != FX_OK)
    return st;
  fx_value *in64 = fx_arena_alloc (arena, sizeof (fx_value) * (n_inputs + 1));
  for (size_t i = 0; i < n_inputs; i++)
    {
      const fx_value *v = &inputs[i];
      if (v->kind == FX_VALUE_TENSOR && v->u.t && fx_dtype_is_floating (v->u.t->dtype))
        in64[i] = fx_value_tensor (fx_tensor_to_dtype (NULL, v->u.t, FX_DTYPE_F64));
      else
        in64[i] = fx_value_dup (v, arena);
    }
  fx_value *r64 = NULL;
  size_t n64 = 0;
  fx_diag d64;
  fx_diag_clear (&d64);
  fx_generator_seed (&gen, 0);
  if (fx_interp_run (graph, in64, n_inputs, &io, arena, &r64, &n64, &d64) == FX_OK && n64 == *n_ref)
    {
      *ref64 = r64;
      *n_ref64 = n64;
    }
  else
    for (size_t i = 0; i < n64; i++)
      fx_value_clear (&r64[i]);
  for (size_t i = 0; i < n_inputs; i++)
    fx_value_clear (&in64[i]);
  return FX_OK;
}

/* ---------------------------------------------------------------- threads */

void fx_parallel_set_threads (int n);   /* engine/ops/fx-ops.c */
int fx_parallel_threads (void);
void fx_blas_set_threads (int n);       /* engine/ops/fx-ops-linalg.c */

void
fx_runtime_set_threads (int n)
{
  fx_parallel_set_threads (n);
  /* OpenBLAS gets the count the engine's loops use (n, or FX_NUM_THREADS, or the CPUs) */
  fx_blas_set_threads (fx_parallel_threads ());
}
