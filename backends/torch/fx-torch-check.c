/* fx-torch-check.c: the torch backend's graph check: every target, method, constant and name of a graph against the
   allowlist (fx-torch-allow.def and the engine's op table), before any Python process starts. */
#include "fx-torch-impl.h"

#include "fx/ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- the lists */

/* The one table: every entry of fx-torch-allow.def with its kind, in the file's order. */
typedef struct allow_entry
{
  fx_torch_allow_kind kind;
  const char *name;
} allow_entry;

#define FX_TORCH_ALLOW_OP_NAMESPACE(s) { FX_TORCH_ALLOW_KIND_NAMESPACE, s },
#define FX_TORCH_ALLOW_FUNCTION(s) { FX_TORCH_ALLOW_KIND_FUNCTION, s },
#define FX_TORCH_ALLOW_OPERATOR(s) { FX_TORCH_ALLOW_KIND_OPERATOR, s },
#define FX_TORCH_ALLOW_METHOD(s) { FX_TORCH_ALLOW_KIND_METHOD, s },
#define FX_TORCH_ALLOW_CONSTANT(s) { FX_TORCH_ALLOW_KIND_CONSTANT, s },
static const allow_entry allowed[] = {
#include "fx-torch-allow.def"
};
#undef FX_TORCH_ALLOW_OP_NAMESPACE
#undef FX_TORCH_ALLOW_FUNCTION
#undef FX_TORCH_ALLOW_OPERATOR
#undef FX_TORCH_ALLOW_METHOD
#undef FX_TORCH_ALLOW_CONSTANT

#define N_ALLOWED (sizeof allowed / sizeof allowed[0])

size_t
fx_torch_allow_names (fx_torch_allow_kind kind, const char **names, size_t max)
{
  size_t n = 0;
  for (size_t i = 0; i < N_ALLOWED; i++)
    if (allowed[i].kind == kind)
      {
        if (n < max)
          names[n] = allowed[i].name;
        n++;
      }
  return n;
}

/* Whether the first LEN bytes of S are an entry of KIND. */
static bool
in_list (fx_torch_allow_kind kind, const char *s, size_t len)
{
  for (size_t i = 0; i < N_ALLOWED; i++)
    if (allowed[i].kind == kind && strlen (allowed[i].name) == len && strncmp (allowed[i].name, s, len) == 0)
      return true;
  return false;
}

static bool
is_ident_char (char c, bool first)
{
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

/* A Python identifier of ASCII letters, digits and '_', not starting with two underscores (dunder names are how
   Python code walks from an object to its class, module and builtins). */
static bool
is_plain_name (const char *s, size_t n)
{
  if (s == NULL || n == 0 || !is_ident_char (s[0], true))
    return false;
  for (size_t i = 1; i < n; i++)
    if (!is_ident_char (s[i], false))
      return false;
  return !(n >= 2 && s[0] == '_' && s[1] == '_');
}

static bool
is_plain (const char *s)
{
  return s != NULL && is_plain_name (s, strlen (s));
}

/* a.b.c, each part a plain name */
static bool
is_plain_dotted (const char *s)
{
  if (s == NULL || s[0] == '\0')
    return false;
  for (const char *p = s;;)
    {
      const char *dot = strchr (p, '.');
      size_t n = dot ? (size_t) (dot - p) : strlen (p);
      if (!is_plain_name (p, n))
        return false;
      if (dot == NULL)
        return true;
      p = dot + 1;
    }
}

/* "aten.add.Tensor", "aten.add_.Tensor" (in place: its "add" is in the table), or a packet "aten.abs" (the table has
   one of its overloads), in an allowed namespace; an optional "torch.ops." in front. */
bool
fx_torch_op_allowed (const char *target)
{
  if (target == NULL)
    return false;
  if (strncmp (target, "torch.ops.", 10) == 0)
    target += 10;
  if (!is_plain_dotted (target))
    return false;
  const char *d1 = strchr (target, '.');
  if (d1 == NULL || !in_list (FX_TORCH_ALLOW_KIND_NAMESPACE, target, (size_t) (d1 - target)))
    return false;
  const char *d2 = strchr (d1 + 1, '.');
  if (d2 != NULL && strchr (d2 + 1, '.') != NULL)
    return false;
  if (d2 != NULL)
    return fx_op_lookup (target) >= 0 || fx_op_lookup_inplace (target) >= 0;
  /* a packet: "ns.op" or "ns.op_" against every "ns.op.<overload>" of the table */
  size_t len = strlen (target);
  size_t base = len;
  if (len - (size_t) (d1 - target) > 2 && target[len - 1] == '_' && target[len - 2] != '_')
    base = len - 1;
  for (int i = 0; i < FX_OP_COUNT; i++)
    {
      const char *t = fx_op_get ((fx_op_id) i)->target;
      if ((strncmp (t, target, len) == 0 && t[len] == '.') || (strncmp (t, target, base) == 0 && t[base] == '.'))
        return true;
    }
  return false;
}

bool
fx_torch_function_allowed (const char *qualified)
{
  return qualified != NULL && in_list (FX_TORCH_ALLOW_KIND_FUNCTION, qualified, strlen (qualified));
}

bool
fx_torch_operator_allowed (const char *name)
{
  return name != NULL && in_list (FX_TORCH_ALLOW_KIND_OPERATOR, name, strlen (name));
}

bool
fx_torch_method_allowed (const char *name)
{
  return name != NULL && in_list (FX_TORCH_ALLOW_KIND_METHOD, name, strlen (name));
}

/* ---------------------------------------------------------------- the check */

static fx_status node_fail (fx_diag *diag, fx_status code, const fx_node *node, const char *fmt, ...)
  FX_PRINTF (4, 5);

/* "node 'x': ..." with diag->node set. */
static fx_status
node_fail (fx_diag *diag, fx_status code, const fx_node *node, const char *fmt, ...)
{
  char what[768];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  fx_diag_set (diag, code, "node '%s': %s", node->name ? node->name : "?", what);
  if (diag)
    {
      snprintf (diag->node, sizeof diag->node, "%s", node->name ? node->name : "");
      snprintf (diag->pass, sizeof diag->pass, "torch_check");
    }
  return code;
}

/* An integer written as a symbolic expression because it does not fit in 64 bits ("-9223372036854775809"). */
static bool
is_int_literal (const char *s)
{
  if (s == NULL)
    return false;
  if (*s == '-')
    s++;
  if (*s == '\0')
    return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9')
      return false;
  return true;
}

static fx_status
check_arg (const fx_node *node, const fx_arg *arg, int depth, fx_diag *diag)
{
  if (depth > 32)
    return node_fail (diag, FX_ERR_INVALID, node, "arguments nested deeper than 32 levels");
  switch (arg->kind)
    {
    case FX_ARG_SYM:
      if (!is_int_literal (arg->u.s))
        return node_fail (diag, FX_ERR_UNSUPPORTED, node,
                          "the symbolic expression '%s' has no value the torch backend could pass", arg->u.s);
      return FX_OK;
    case FX_ARG_GLOBAL:
      if (!in_list (FX_TORCH_ALLOW_KIND_CONSTANT, arg->u.s, strlen (arg->u.s)))
        return node_fail (diag, FX_ERR_INVALID, node,
                          "the torch backend refuses to pass the Python object '%s' (an argument may name only %s)",
                          arg->u.s, "math.inf, math.nan, math.pi, math.e, inf and nan");
      return FX_OK;
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
    case FX_ARG_SLICE:
      for (size_t i = 0; i < arg->u.seq.n; i++)
        {
          fx_status st = check_arg (node, &arg->u.seq.items[i], depth + 1, diag);
          if (st != FX_OK)
            return st;
        }
      return FX_OK;
    case FX_ARG_DICT:
      for (size_t i = 0; i < arg->u.dict.n; i++)
        {
          fx_status st = check_arg (node, &arg->u.dict.items[i].key, depth + 1, diag);
          if (st == FX_OK)
            st = check_arg (node, &arg->u.dict.items[i].value, depth + 1, diag);
          if (st != FX_OK)
            return st;
        }
      return FX_OK;
    case FX_ARG_NONE:
    case FX_ARG_NODE:
    case FX_ARG_BOOL:
    case FX_ARG_INT:
    case FX_ARG_FLOAT:
    case FX_ARG_STR:      /* a str value, never code: the worker builds the graph from JSON */
    case FX_ARG_DTYPE:
    case FX_ARG_DEVICE:
    case FX_ARG_LAYOUT:
    case FX_ARG_MEMFMT:
    case FX_ARG_ELLIPSIS:
      return FX_OK;
    case FX_ARG_KIND_COUNT:
    default:
      return node_fail (diag, FX_ERR_INVALID, node, "an argument of unknown kind %d", (int) arg->kind);
    }
}

/* The child graph at path (dotted, relative to graph), or NULL. */
static const fx_graph *
find_child (const fx_graph *graph, const char *path)
{
  for (size_t i = 0; i < graph->n_children; i++)
    {
      const fx_graph_child *ch = &graph->children[i];
      size_t n = strlen (ch->attr);
      if (ch->graph == NULL || strncmp (path, ch->attr, n) != 0)
        continue;
      if (path[n] == '\0')
        return ch->graph;
      if (path[n] == '.')
        {
          const fx_graph *g = find_child (ch->graph, path + n + 1);
          if (g != NULL)
            return g;
        }
    }
  return NULL;
}

static fx_status
check_node (const fx_graph *graph, const fx_node *n, fx_diag *diag)
{
  const char *target = n->target.name ? n->target.name : "";
  if (n->op != FX_OP_OUTPUT && !is_plain (n->name))
    return node_fail (diag, FX_ERR_INVALID, n, "the name is not a plain Python identifier");
  switch (n->op)
    {
    case FX_OP_PLACEHOLDER:
      {
        /* *args / **kwargs placeholders keep their stars */
        const char *t = n->target.name ? n->target.name : n->name;
        for (int i = 0; i < 2 && *t == '*'; i++)
          t++;
        if (!is_plain (t))
          return node_fail (diag, FX_ERR_INVALID, n, "placeholder '%s' is not a plain Python identifier", target);
        break;
      }
    case FX_OP_CALL_FUNCTION:
      switch (n->target.kind)
        {
        case FX_TARGET_OP:
          if (!fx_torch_op_allowed (target))
            return node_fail (diag, FX_ERR_INVALID, n,
                              "the torch backend refuses to call torch.ops.%s: it calls only aten and prims ops "
                              "that are in the engine's op table", target);
          break;
        case FX_TARGET_OPERATOR:
          if (!fx_torch_operator_allowed (target))
            return node_fail (diag, FX_ERR_INVALID, n, "the torch backend refuses to call operator.%s", target);
          break;
        case FX_TARGET_BUILTIN:
          return node_fail (diag, FX_ERR_INVALID, n, "the torch backend refuses to call the builtin '%s'", target);
        case FX_TARGET_FUNCTION:
          {
            const char *op = strncmp (target, "operator.", 9) == 0    ? target + 9
                             : strncmp (target, "_operator.", 10) == 0 ? target + 10
                                                                        : NULL;
            if (op != NULL ? fx_torch_operator_allowed (op) : fx_torch_function_allowed (target))
              break;
            return node_fail (diag, FX_ERR_INVALID, n,
                              "the torch backend refuses to call '%s' (not in its list of torch functions)", target);
          }
        case FX_TARGET_STR:
        case FX_TARGET_KIND_COUNT:
        default:
          return node_fail (diag, FX_ERR_INVALID, n, "the torch backend refuses to call '%s' (no function target)",
                            target);
        }
      break;
    case FX_OP_CALL_METHOD:
      if (!fx_torch_method_allowed (target))
        return node_fail (diag, FX_ERR_INVALID, n, "the torch backend refuses to call the method '%s'", target);
      if (n->n_args < 1 || n->args[0].kind != FX_ARG_NODE)
        return node_fail (diag, FX_ERR_INVALID, n, "call_method '%s' has no node to call it on", target);
      break;
    case FX_OP_GET_ATTR:
    case FX_OP_CALL_MODULE:
      if (!is_plain_dotted (target))
        return node_fail (diag, FX_ERR_INVALID, n, "the torch backend refuses the attribute path '%s'", target);
      /* Only child graphs travel with a graph; weights, buffers and constants are not stored with it. */
      if (find_child (graph, target) == NULL)
        return node_fail (diag, FX_ERR_UNSUPPORTED, n,
                          "the graph uses the module attribute '%s' (%s), and module attributes (weights, buffers, "
                          "constants) are not stored with a graph, so the torch backend cannot run it",
                          target, fx_opcode_name (n->op));
      break;
    case FX_OP_OUTPUT:
    case FX_OPCODE_COUNT:
    default:
      break;
    }
  for (size_t i = 0; i < n->n_args; i++)
    {
      fx_status st = check_arg (n, &n->args[i], 0, diag);
      if (st != FX_OK)
        return st;
    }
  for (size_t i = 0; i < n->n_kwargs; i++)
    {
      if (!is_plain (n->kwargs[i].name))
        return node_fail (diag, FX_ERR_INVALID, n, "keyword '%s' is not a plain Python identifier",
                          n->kwargs[i].name ? n->kwargs[i].name : "");
      fx_status st = check_arg (n, &n->kwargs[i].value, 0, diag);
      if (st != FX_OK)
        return st;
    }
  if (n->default_value != NULL)
    return check_arg (n, n->default_value, 0, diag);
  return FX_OK;
}

static fx_status
check_graph (const fx_graph *graph, int depth, fx_diag *diag)
{
  if (depth > 8)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "graph modules nested deeper than 8 levels");
  fx_graph_foreach_node (graph, n)
  {
    fx_status st = check_node (graph, n, diag);
    if (st != FX_OK)
      return st;
  }
  for (size_t i = 0; i < graph->n_children; i++)
    {
      const fx_graph_child *ch = &graph->children[i];
      if (!is_plain_dotted (ch->attr))
        return fx_diag_set (diag, FX_ERR_INVALID, "the torch backend refuses the child graph name '%s'",
                            ch->attr ? ch->attr : "");
      if (ch->graph == NULL)
        return fx_diag_set (diag, FX_ERR_INVALID, "child graph '%s' has no graph", ch->attr);
      fx_status st = check_graph (ch->graph, depth + 1, diag);
      if (st != FX_OK)
        return st;
    }
  return FX_OK;
}

fx_status
fx_torch_check_graph (const fx_graph *graph, fx_diag *diag)
{
  return check_graph (graph, 0, diag);
}
