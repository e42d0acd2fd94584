/* fx-print-code.c: GraphModule.code and print_readable, byte-exact with torch/fx/graph.py CodeGen._gen_python_code
   and torch/fx/graph_module.py _print_readable (PyTorch 2.11). */
#include "fx-print-impl.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- operator tables (torch/fx/graph.py) */

typedef struct
{
  const char *name;
  const char *fmt;    /* '%' marks an operand, in order */
  int arity;
} op_format;

/* magic_methods = reflectable_magic_methods + comparisons and unary operators */
static const op_format magic_methods[] = {
  { "add", "% + %", 2 }, { "sub", "% - %", 2 }, { "mul", "% * %", 2 }, { "floordiv", "% // %", 2 },
  { "truediv", "% / %", 2 }, { "div", "% / %", 2 }, { "mod", "% %% %", 2 }, { "pow", "% ** %", 2 },
  { "lshift", "% << %", 2 }, { "rshift", "% >> %", 2 }, { "and_", "% & %", 2 }, { "or_", "% | %", 2 },
  { "xor", "% ^ %", 2 }, { "getitem", "%[%]", 2 }, { "matmul", "% @ %", 2 },
  { "eq", "% == %", 2 }, { "ne", "% != %", 2 }, { "lt", "% < %", 2 }, { "gt", "% > %", 2 },
  { "le", "% <= %", 2 }, { "ge", "% >= %", 2 }, { "pos", "+%", 1 }, { "neg", "-%", 1 }, { "invert", "~%", 1 },
};

static const op_format inplace_methods[] = {
  { "iadd", "% += %", 2 }, { "iand", "% &= %", 2 }, { "ifloordiv", "% //= %", 2 }, { "ilshift", "% <<= %", 2 },
  { "imod", "% %%= %", 2 }, { "imul", "% *= %", 2 }, { "imatmul", "% @= %", 2 }, { "ior", "% |= %", 2 },
  { "ipow", "% **= %", 2 }, { "irshift", "% >>= %", 2 }, { "isub", "% -= %", 2 }, { "itruediv", "% /= %", 2 },
  { "ixor", "% ^= %", 2 }, { "setitem", "%[%] = %", 3 },
};

static const op_format *
find_op (const op_format *table, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (table[i].name, name) == 0)
      return &table[i];
  return NULL;
}

/* str.format over a table entry: "%%" is a literal '%', each lone '%' the next operand. */
static void
put_op_format (const op_format *op, const fx_arg *args, fx_buf *out)
{
  int k = 0;
  for (const char *p = op->fmt; *p; p++)
    {
      if (*p != '%')
        fx_buf_putc (out, *p);
      else if (p[1] == '%')
        {
          fx_buf_putc (out, '%');
          p++;
        }
      else
        fx_arg_repr (&args[k++], FX_REPR_CODE, out);
    }
}

/* ---------------------------------------------------------------- names */

static bool
is_identifier (const char *s, size_t n)
{
  if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char) s[i];
      if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80))
        return false;
    }
  return true;
}

/* _format_target: "self" + "sub.fc" -> self.sub.fc; parts that are not identifiers -> getattr(base, "0") */
static void
put_format_target (const char *base, const char *target, fx_buf *out)
{
  fx_buf tmp;
  fx_buf_init (&tmp);
  fx_buf_puts (&tmp, base);
  const char *p = target ? target : "";
  for (;;)
    {
      const char *dot = strchr (p, '.');
      size_t n = dot ? (size_t) (dot - p) : strlen (p);
      if (is_identifier (p, n))
        {
          fx_buf_putc (&tmp, '.');
          fx_buf_append (&tmp, p, n);
        }
      else
        {
          char *inner = fx_buf_steal (&tmp);
          fx_buf_printf (&tmp, "getattr(%s, \"%.*s\")", inner, (int) n, p);
          free (inner);
        }
      if (dot == NULL)
        break;
      p = dot + 1;
    }
  fx_buf_append (out, tmp.data, tmp.len);
  fx_buf_free (&tmp);
}

/* _is_from_torch on the module of a qualified name: torch(.x)* but not torch._dynamo.* / torch._inductor.* */
static bool
module_is_torch (const char *name, size_t mlen)
{
  if (mlen < 5 || strncmp (name, "torch", 5) != 0 || (mlen > 5 && name[5] != '.'))
    return false;
  for (size_t i = 5; i < mlen; i++)
    if (name[i] == '.')
      {
        const char *seg = name + i + 1;
        size_t rest = mlen - (i + 1);
        if ((rest > 8 && strncmp (seg, "_dynamo.", 8) == 0) || (rest > 10 && strncmp (seg, "_inductor.", 10) == 0))
          return false;
      }
  return true;
}

/* add_global: torch objects print by qualified name; anything else gets a namespace name (illegal characters
   -> '_'), e.g. _operator.not_ -> _operator_not_. */
static void
put_global_name (const fx_target *target, fx_buf *out)
{
  const char *name = target->name ? target->name : "";
  const char *qual = name;
  char *owned = NULL;

  switch (target->kind)
    {
    case FX_TARGET_OP:
      fx_buf_printf (out, "torch.ops.%s", name);
      return;
    case FX_TARGET_BUILTIN:
      fx_buf_puts (out, name);
      return;
    case FX_TARGET_OPERATOR:
      owned = malloc (strlen (name) + 11);
      if (owned == NULL)
        abort ();
      strcpy (owned, "_operator.");
      strcat (owned, name);
      qual = owned;
      break;
    case FX_TARGET_FUNCTION:
      {
        const char *dot = strrchr (name, '.');
        if (dot != NULL && module_is_torch (name, (size_t) (dot - name)))
          {
            fx_buf_puts (out, name);
            return;
          }
        break;
      }
    case FX_TARGET_STR:
    case FX_TARGET_KIND_COUNT:
    default:
      break;
    }
  size_t n = strlen (qual);
  if (n == 0)
    fx_buf_puts (out, "_unnamed");
  else
    {
      if (qual[0] >= '0' && qual[0] <= '9')
        fx_buf_putc (out, '_');
      bool in_run = false;
      for (size_t i = 0; i < n; i++)
        {
          unsigned char c = (unsigned char) qual[i];
          bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
          /* _illegal_char_regex.sub("_", ...): each run of illegal characters becomes one '_' */
          if (ok)
            fx_buf_putc (out, (char) c);
          else if (!in_run)
            fx_buf_putc (out, '_');
          in_run = !ok;
        }
    }
  free (owned);
}

/* ---------------------------------------------------------------- the generator */

typedef struct
{
  const fx_graph *graph;
  bool verbose;
  bool include_stride;
  bool include_device;
  bool expanded_def;  /* one parameter a line with its `# desc`; a returned tuple one value a line */
  /* values freed after each statement: pool[start[id] .. start[id] + count[id]) */
  fx_node **pool;
  uint32_t *start;
  uint32_t *count;
  uint8_t *seen;
  size_t n_pool;
  uint32_t user_id;
  fx_buf body;
  fx_buf free_vars;
  fx_buf summary;
  fx_buf prev_summary;
  bool have_prev_summary;
  const char *prev_trace;
  const char *return_annotation;
  fx_buf tmp;
} codegen;

static void
last_use_cb (fx_node *input, void *data)
{
  codegen *cg = data;
  if (input == NULL || input->graph != cg->graph || input->id >= cg->graph->next_id || cg->seen[input->id])
    return;
  cg->seen[input->id] = 1;
  cg->pool[cg->n_pool++] = input;
  cg->count[cg->user_id]++;
}

/* One reverse pass: the first use seen from the end is the last use in program order. */
static void
compute_last_uses (codegen *cg)
{
  const fx_graph *g = cg->graph;
  size_t n_ids = g->next_id ? g->next_id : 1;
  size_t n_uses = 0;

  fx_graph_foreach_node (g, node)
    n_uses++;
  cg->pool = calloc (n_uses + 1, sizeof *cg->pool);
  cg->start = calloc (n_ids, sizeof *cg->start);
  cg->count = calloc (n_ids, sizeof *cg->count);
  cg->seen = calloc (n_ids, 1);
  if (cg->pool == NULL || cg->start == NULL || cg->count == NULL || cg->seen == NULL)
    abort ();
  fx_graph_foreach_node_reverse (g, node)
    {
      if (node->id >= g->next_id)
        continue;
      cg->user_id = node->id;
      cg->start[node->id] = (uint32_t) cg->n_pool;
      /* pool holds each node at most once, so it never outgrows the node count */
      fx_node_foreach_input (node, last_use_cb, cg);
    }
}

static void
put_type_annotation (codegen *cg, const fx_node *node, fx_buf *out)
{
  if (cg->verbose)
    {
      fx_buf_reset (&cg->tmp);
      if (fx_val_annotation (&node->meta.val, cg->include_stride, cg->include_device, &cg->tmp))
        {
          fx_buf_printf (out, ": \"%s\"", cg->tmp.data);
          return;
        }
    }
  if (node->type_expr != NULL)
    fx_buf_printf (out, " : %s", node->type_expr);
}

static void
put_args (const fx_arg *args, size_t n_args, const fx_kwarg *kwargs, size_t n_kwargs, fx_buf *out)
{
  bool first = true;
  for (size_t i = 0; i < n_args; i++)
    {
      if (!first)
        fx_buf_puts (out, ", ");
      fx_arg_repr (&args[i], FX_REPR_CODE, out);
      first = false;
    }
  for (size_t i = 0; i < n_kwargs; i++)
    {
      if (!first)
        fx_buf_puts (out, ", ");
      fx_buf_printf (out, "%s = ", kwargs[i].name);
      fx_arg_repr (&kwargs[i].value, FX_REPR_CODE, out);
      first = false;
    }
}

static bool
py_strip_span (const char *s, size_t len, size_t *a, size_t *b)
{
  *a = 0;
  *b = len;
  while (*a < *b && fx_print_is_space ((unsigned char) s[*a]))
    (*a)++;
  while (*b > *a && fx_print_is_space ((unsigned char) s[*b - 1]))
    (*b)--;
  return *b > *a;
}

/* _parse_stack_trace: over stack_trace.strip() split on '\n', from the second-to-last line backwards, the first
   line whose strip() matches ^File "(.+)", line (\d+), in (.+)$ (file greedy); the next line, stripped, is code. */
static bool
parse_stack_trace (const char *trace, fx_buf *out)
{
  size_t ta, tb;
  if (!py_strip_span (trace, strlen (trace), &ta, &tb))
    return false;
  const char *text = trace + ta;
  size_t len = tb - ta;

  /* line starts, so lines can be walked backwards */
  size_t n_lines = 1;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n')
      n_lines++;
  size_t *starts = malloc ((n_lines + 1) * sizeof *starts);
  if (starts == NULL)
    abort ();
  size_t k = 0;
  starts[k++] = 0;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n')
      starts[k++] = i + 1;
  starts[n_lines] = len + 1;

  bool found = false;
  for (size_t idx = n_lines - 1; idx-- > 0 && !found;)
    {
      const char *line = text + starts[idx];
      size_t a, b;
      py_strip_span (line, starts[idx + 1] - 1 - starts[idx], &a, &b);
      const char *s = line + a;
      size_t n = b - a;
      if (n <= 6 || strncmp (s, "File \"", 6) != 0)
        continue;
      /* greedy (.+): the rightmost split that matches wins */
      for (size_t q = n; q-- > 7;)
        {
          if (q + 8 > n || strncmp (s + q, "\", line ", 8) != 0)
            continue;
          size_t d = q + 8, e = d;
          while (e < n && s[e] >= '0' && s[e] <= '9')
            e++;
          if (e == d || e + 5 >= n || strncmp (s + e, ", in ", 5) != 0)
            continue;
          const char *next = text + starts[idx + 1];
          size_t ca, cb;
          py_strip_span (next, starts[idx + 2] - 1 - starts[idx + 1], &ca, &cb);
          fx_buf_puts (out, "File: ");
          fx_buf_append (out, s + 6, q - 6);
          fx_buf_putc (out, ':');
          fx_buf_append (out, s + d, e - d);
          fx_buf_puts (out, " in ");
          fx_buf_append (out, s + e + 5, n - (e + 5));
          fx_buf_puts (out, ", code: ");
          fx_buf_append (out, next + ca, cb - ca);
          found = true;
          break;
        }
    }
  free (starts);
  return found;
}

/* append_stacktrace_summary: "\n#{annotation}{recompute} {File: ... | No stacktrace found...}\n" whenever it
   differs from the previous node's. */
static void
append_stacktrace_summary (codegen *cg, const fx_node *node)
{
  if (node->op == FX_OP_PLACEHOLDER || node->op == FX_OP_OUTPUT)
    return;

  const char *custom = fx_meta_get_extra (&node->meta, "custom");
  const char *recompute = fx_meta_get_extra (&node->meta, "recompute");
  const char *ac_graph_id = fx_meta_get_extra (&node->meta, "ac_graph_id");
  const char *trace = node->meta.stack_trace;

  /* Same trace text and no per-node extras: same summary, no need to parse again. */
  if (cg->have_prev_summary && custom == NULL && recompute == NULL && ac_graph_id == NULL && cg->prev_trace != NULL
      && trace != NULL && (trace == cg->prev_trace || strcmp (trace, cg->prev_trace) == 0))
    return;

  fx_buf *s = &cg->summary;
  fx_buf_reset (s);
  fx_buf_puts (s, "\n#");
  if (custom != NULL && custom[0] != '\0' && strcmp (custom, "{}") != 0)
    fx_buf_printf (s, " Annotation: %s", custom);
  if (recompute != NULL)
    {
      const char *dot = strrchr (recompute, '.');
      const char *rname = dot ? dot + 1 : recompute;
      if (ac_graph_id != NULL)
        fx_buf_printf (s, " # ac_graph_id: %s - %s", ac_graph_id, rname);
      else
        fx_buf_printf (s, " # recompute: %s", rname);
    }
  else if (ac_graph_id != NULL)
    fx_buf_printf (s, " # ac_graph_id: %s", ac_graph_id);
  fx_buf_putc (s, ' ');
  if (trace == NULL || trace[0] == '\0' || !parse_stack_trace (trace, s))
    fx_buf_puts (s, "No stacktrace found for following nodes");
  fx_buf_putc (s, '\n');

  cg->prev_trace = (custom == NULL && recompute == NULL && ac_graph_id == NULL) ? trace : NULL;
  if (cg->have_prev_summary && cg->prev_summary.len == s->len && memcmp (cg->prev_summary.data, s->data, s->len) == 0)
    return;
  fx_buf_reset (&cg->prev_summary);
  fx_buf_append (&cg->prev_summary, s->data, s->len);
  cg->have_prev_summary = true;
  fx_buf_append (&cg->body, s->data, s->len);
}

/* The end of the next top-level item of a ", "-separated list (brackets and quotes nest). */
static const char *
list_item_end (const char *p)
{
  int depth = 0;
  char quote = 0;
  for (; *p; p++)
    {
      if (quote)
        {
          if (*p == '\\' && p[1])
            p++;
          else if (*p == quote)
            quote = 0;
        }
      else if (*p == '\'' || *p == '"')
        quote = *p;
      else if (*p == '(' || *p == '[' || *p == '{')
        depth++;
      else if (*p == ')' || *p == ']' || *p == '}')
        depth--;
      else if (depth == 0 && p[0] == ',' && p[1] == ' ')
        break;
    }
  return p;
}

/* CodeGen.generate_output with descs (expanded_def): "return (\n    a,  # desc\n)" for a returned tuple or list
   whose output node keeps meta['desc'] (the list of the values' descriptors, one each), inside
   "pytree.tree_unflatten(..., self._out_spec)" for _PyTreeCodeGen. False: not that shape. */
static bool
put_expanded_return (const fx_node *node, fx_buf *body)
{
  bool pytree = node->graph->pytree_out;
  const char *descs = fx_meta_get_extra (&node->meta, "desc");
  if (node->n_args == 0 || descs == NULL || descs[0] != '[')
    return false;
  const fx_arg *ret = &node->args[0];
  if (ret->kind != FX_ARG_TUPLE && ret->kind != FX_ARG_LIST)
    return false;
  size_t n = 0;
  const char *p = descs + 1;
  for (const char *e = p; *e && *e != ']'; e = *list_item_end (e) ? list_item_end (e) + 2 : "")
    n++;
  if (n != ret->u.seq.n)
    return false;
  bool list = ret->kind == FX_ARG_LIST;
  fx_buf_printf (body, "return %s%s\n", pytree ? "pytree.tree_unflatten(" : "", list ? "[" : "(");
  for (size_t i = 0; i < n; i++)
    {
      const char *e = list_item_end (p);
      size_t len = (size_t) (e - p);
      if (i == n - 1 && len > 0 && p[len - 1] == ']')
        len--;
      fx_buf_puts (body, "    ");
      fx_arg_repr (&ret->u.seq.items[i], FX_REPR_PY, body);
      fx_buf_printf (body, ",  # %.*s\n", (int) len, p);
      p = *e ? e + 2 : e;
    }
  fx_buf_puts (body, list ? "]" : ")");
  if (pytree)
    fx_buf_puts (body, ", self._out_spec)");
  return true;
}

static void
emit_node (codegen *cg, const fx_node *node)
{
  fx_buf *body = &cg->body;
  const char *name = node->name;

  switch (node->op)
    {
    case FX_OP_PLACEHOLDER:
      {
        const char *target = node->target.name ? node->target.name : "";
        /* expanded_def: free_vars holds one "    arg,  # desc\n" a parameter */
        if (cg->expanded_def)
          fx_buf_puts (&cg->free_vars, "    ");
        else if (cg->free_vars.len > 0)
          fx_buf_puts (&cg->free_vars, ", ");
        fx_buf_puts (&cg->free_vars, target);
        put_type_annotation (cg, node, &cg->free_vars);
        const fx_arg *def = node->default_value ? node->default_value : (node->n_args > 0 ? &node->args[0] : NULL);
        if (def != NULL)
          {
            fx_buf_puts (&cg->free_vars, " = ");
            fx_arg_repr (def, FX_REPR_CODE, &cg->free_vars);
          }
        if (cg->expanded_def)
          {
            const char *desc = fx_meta_get_extra (&node->meta, "desc");
            fx_buf_putc (&cg->free_vars, ',');
            if (desc != NULL)
              fx_buf_printf (&cg->free_vars, "  # %s", desc);
            fx_buf_putc (&cg->free_vars, '\n');
          }
        /* raw_name = target.replace("*", "") */
        fx_buf_reset (&cg->tmp);
        for (const char *p = target; *p; p++)
          if (*p != '*')
            fx_buf_putc (&cg->tmp, *p);
        /* an empty target (a hand-written JSON graph) leaves the buffer without data */
        const char *raw = cg->tmp.data ? cg->tmp.data : "";
        if (strcmp (raw, name) != 0)
          fx_buf_printf (body, "%s = %s\n", name, raw);
        return;
      }
    case FX_OP_CALL_METHOD:
      {
        fx_buf_puts (body, name);
        put_type_annotation (cg, node, body);
        fx_buf_puts (body, " = ");
        fx_buf recv;
        fx_buf_init (&recv);
        fx_arg none = fx_arg_none ();
        fx_arg_repr (node->n_args > 0 ? &node->args[0] : &none, FX_REPR_CODE, &recv);
        put_format_target (recv.data, node->target.name, body);
        fx_buf_free (&recv);
        fx_buf_putc (body, '(');
        put_args (node->args + (node->n_args > 0), node->n_args > 0 ? node->n_args - 1 : 0, node->kwargs,
                  node->n_kwargs, body);
        fx_buf_putc (body, ')');
        return;
      }
    case FX_OP_CALL_FUNCTION:
      {
        if (node->target.kind == FX_TARGET_OPERATOR && node->target.name != NULL)
          {
            const op_format *op = find_op (magic_methods, sizeof magic_methods / sizeof magic_methods[0],
                                           node->target.name);
            if (op != NULL && node->n_args >= (size_t) op->arity)
              {
                fx_buf_puts (body, name);
                put_type_annotation (cg, node, body);
                fx_buf_puts (body, " = ");
                put_op_format (op, node->args, body);
                return;
              }
            op = find_op (inplace_methods, sizeof inplace_methods / sizeof inplace_methods[0], node->target.name);
            if (op != NULL && node->n_args >= (size_t) op->arity)
              {
                put_op_format (op, node->args, body);
                fx_buf_printf (body, ";  %s", name);
                put_type_annotation (cg, node, body);
                fx_buf_puts (body, " = ");
                fx_arg_repr (&node->args[0], FX_REPR_CODE, body);
                return;
              }
          }
        fx_buf_reset (&cg->tmp);
        put_global_name (&node->target, &cg->tmp);
        /* getattr(x, "attr") with an identifier prints as attribute access */
        if (strcmp (cg->tmp.data, "getattr") == 0 && node->n_args == 2 && node->args[1].kind == FX_ARG_STR
            && node->args[1].u.s != NULL && is_identifier (node->args[1].u.s, strlen (node->args[1].u.s)))
          {
            fx_buf_puts (body, name);
            put_type_annotation (cg, node, body);
            fx_buf_puts (body, " = ");
            fx_buf recv;
            fx_buf_init (&recv);
            fx_arg_repr (&node->args[0], FX_REPR_CODE, &recv);
            put_format_target (recv.data, node->args[1].u.s, body);
            fx_buf_free (&recv);
            return;
          }
        char *global = fx_buf_steal (&cg->tmp);
        fx_buf_puts (body, name);
        put_type_annotation (cg, node, body);
        fx_buf_printf (body, " = %s(", global);
        free (global);
        put_args (node->args, node->n_args, node->kwargs, node->n_kwargs, body);
        fx_buf_putc (body, ')');
        return;
      }
    case FX_OP_CALL_MODULE:
    case FX_OP_GET_ATTR:
      fx_buf_puts (body, name);
      put_type_annotation (cg, node, body);
      fx_buf_puts (body, " = ");
      put_format_target ("self", node->target.name, body);
      if (node->op == FX_OP_CALL_MODULE)
        {
          fx_buf_putc (body, '(');
          put_args (node->args, node->n_args, node->kwargs, node->n_kwargs, body);
          fx_buf_putc (body, ')');
        }
      return;
    case FX_OP_OUTPUT:
      if (node->type_expr != NULL)
        cg->return_annotation = node->type_expr;
      if (cg->expanded_def && put_expanded_return (node, body))
        return;
      fx_buf_puts (body, cg->graph->pytree_out ? "return pytree.tree_unflatten(" : "return ");
      if (node->n_args > 0)
        fx_arg_repr (&node->args[0], FX_REPR_PY, body);
      else
        fx_buf_puts (body, "None");
      if (cg->graph->pytree_out)
        fx_buf_puts (body, ", self._out_spec)");
      return;
    case FX_OPCODE_COUNT:
    default:
      return;
    }
}

/* delete_unused_values: ";  a = b = None" for the values last used here (and the node itself when unused). */
static void
delete_unused_values (codegen *cg, const fx_node *node)
{
  fx_buf *body = &cg->body;

  if (node->op == FX_OP_PLACEHOLDER)
    return;
  if (node->op == FX_OP_OUTPUT)
    {
      fx_buf_putc (body, '\n');
      return;
    }
  uint32_t n = node->id < cg->graph->next_id ? cg->count[node->id] : 0;
  if (n == 0 && node->n_users > 0)
    {
      fx_buf_putc (body, '\n');
      return;
    }
  fx_buf_puts (body, ";  ");
  for (uint32_t i = 0; i < n; i++)
    fx_buf_printf (body, "%s = ", cg->pool[cg->start[node->id] + i]->name);
  if (node->n_users == 0)
    fx_buf_printf (body, "%s = ", node->name);
  fx_buf_puts (body, "None\n");
}

/* _PyTreeCodeGen.gen_fn_def: the forward's own parameters (one a line with expanded_def). */
static void
put_pytree_def (codegen *cg, fx_buf *out)
{
  const char *args = cg->graph->pytree_args;
  if (!cg->expanded_def)
    {
      fx_buf_printf (out, "self%s%s", *args ? ", " : "", args);
      return;
    }
  fx_buf_puts (out, "\n    self,\n");
  for (const char *p = args; *p;)
    {
      const char *e = strstr (p, ", ");
      size_t len = e ? (size_t) (e - p) : strlen (p);
      fx_buf_printf (out, "    %.*s,\n", (int) len, p);
      p = e ? e + 2 : p + len;
    }
}

/* Its prologue: the leaves' annotations ("a: A; b: B; " and a blank line; with expanded_def one a line with its
   descriptor), then "a, b, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)". */
static void
put_pytree_prologue (codegen *cg, fx_buf *out)
{
  bool any = false;
  fx_buf ann;
  fx_buf_init (&ann);
  fx_graph_foreach_node (cg->graph, node)
    if (node->op == FX_OP_PLACEHOLDER)
      {
        const char *desc = cg->expanded_def ? fx_meta_get_extra (&node->meta, "desc") : NULL;
        fx_buf_reset (&ann);
        put_type_annotation (cg, node, &ann);
        if (ann.len == 0 && !cg->expanded_def)
          continue;
        fx_buf_puts (out, any && !cg->expanded_def ? "" : "    ");
        fx_buf_printf (out, "%s%s", node->target.name ? node->target.name : "", ann.len ? ann.data : "");
        if (desc != NULL)
          fx_buf_printf (out, "  # %s", desc);
        fx_buf_puts (out, cg->expanded_def ? "\n" : "; ");
        any = true;
      }
  fx_buf_free (&ann);
  if (any && !cg->expanded_def)
    fx_buf_puts (out, "\n\n");
  fx_buf_puts (out, "    ");
  fx_graph_foreach_node (cg->graph, node)
    if (node->op == FX_OP_PLACEHOLDER)
      fx_buf_printf (out, "%s, ", node->target.name ? node->target.name : "");
  fx_buf_printf (out, "= fx_pytree.tree_flatten_spec([%s], self._in_spec)\n", cg->graph->pytree_args);
}

/* Graph.python_code(root_module="self", verbose=...).src */
static void
gen_python_code (const fx_graph *graph, bool verbose, bool include_stride, bool include_device, bool expanded_def,
                 fx_buf *out)
{
  codegen cg = { 0 };

  cg.graph = graph;
  cg.expanded_def = expanded_def;
  cg.verbose = verbose;
  cg.include_stride = include_stride;
  cg.include_device = include_device;
  fx_buf_init (&cg.body);
  fx_buf_init (&cg.free_vars);
  fx_buf_init (&cg.summary);
  fx_buf_init (&cg.prev_summary);
  fx_buf_init (&cg.tmp);
  compute_last_uses (&cg);

  fx_graph_foreach_node (graph, node)
    {
      if (verbose)
        append_stacktrace_summary (&cg, node);
      emit_node (&cg, node);
      delete_unused_values (&cg, node);
    }
  /* CodeGen: `if len(body) == 0: body.append("pass\n")` (placeholders alone emit nothing) */
  if (cg.body.len == 0)
    fx_buf_puts (&cg.body, "pass\n");

  /* fn_code = "\n{wrap_stmts}\n\n{prologue}\n{code}" */
  fx_buf_reserve (out, cg.body.len + cg.free_vars.len + cg.body.len / 8 + 64);
  fx_buf_puts (out, "\n\n\ndef forward(");
  /* gen_fn_def puts self first unless the first argument already is self */
  if (graph->pytree_args != NULL)
    put_pytree_def (&cg, out);
  else if (expanded_def)
    fx_buf_puts (out, "\n    self,\n");
  else if (!(cg.free_vars.len >= 4 && strncmp (cg.free_vars.data, "self", 4) == 0
             && (cg.free_vars.len == 4 || cg.free_vars.data[4] == ',')))
    fx_buf_puts (out, cg.free_vars.len ? "self, " : "self");
  if (graph->pytree_args == NULL)
    fx_buf_append (out, cg.free_vars.data, cg.free_vars.len);
  fx_buf_putc (out, ')');
  if (cg.return_annotation != NULL)
    fx_buf_printf (out, " -> %s", cg.return_annotation);
  fx_buf_puts (out, ":\n");
  if (graph->pytree_args != NULL)
    put_pytree_prologue (&cg, out);

  /* code = body.lstrip("\n"); every line, the last (empty) one too, indented by four */
  const char *p = cg.body.data;
  const char *end = cg.body.data + cg.body.len;
  while (p < end && *p == '\n')
    p++;
  for (;;)
    {
      const char *eol = memchr (p, '\n', (size_t) (end - p));
      fx_buf_puts (out, "    ");
      if (eol == NULL)
        {
          fx_buf_append (out, p, (size_t) (end - p));
          break;
        }
      fx_buf_append (out, p, (size_t) (eol + 1 - p));
      p = eol + 1;
    }

  fx_buf_free (&cg.body);
  fx_buf_free (&cg.free_vars);
  fx_buf_free (&cg.summary);
  fx_buf_free (&cg.prev_summary);
  fx_buf_free (&cg.tmp);
  free (cg.pool);
  free (cg.start);
  free (cg.count);
  free (cg.seen);
}

void
fx_graph_print_code (const fx_graph *graph, fx_buf *out)
{
  gen_python_code (graph, false, false, false, false, out);
}

/* ---------------------------------------------------------------- print_readable */

/* _addindent as of PyTorch 2.11 (pytorch#172644): the first line is kept; every other line gets the indent,
   except blank (empty or whitespace-only) lines, which become empty. A single line is returned unchanged. */
static void
add_indent (const char *s, size_t len, int spaces, fx_buf *out)
{
  const char *end = s + len;
  const char *eol = memchr (s, '\n', len);

  if (eol == NULL)
    {
      fx_buf_append (out, s, len);
      return;
    }
  fx_buf_append (out, s, (size_t) (eol - s));
  const char *p = eol + 1;
  for (;;)
    {
      fx_buf_putc (out, '\n');
      const char *e = memchr (p, '\n', (size_t) (end - p));
      size_t n = e ? (size_t) (e - p) : (size_t) (end - p);
      bool blank = true;
      for (size_t i = 0; i < n && blank; i++)
        blank = fx_print_is_space ((unsigned char) p[i]);
      if (!blank)
        {
          for (int i = 0; i < spaces; i++)
            fx_buf_putc (out, ' ');
          fx_buf_append (out, p, n);
        }
      if (e == NULL)
        break;
      p = e + 1;
    }
}

static void
print_readable (const fx_graph *graph, const char *class_name, const fx_readable_opts *opts, int depth, fx_buf *out)
{
  fx_buf src, module;

  fx_buf_init (&src);
  fx_buf_init (&module);
  gen_python_code (graph, true, opts->include_stride, opts->include_device, opts->expanded_def, &src);
  const char *p = src.data;
  while (*p == '\n')
    p++;
  fx_buf_printf (&module, "class %s(torch.nn.Module):\n", class_name ? class_name : "GraphModule");
  fx_buf_puts (&module, p);
  add_indent (module.data, module.len, 4, out);

  /* submodule_code = _addindent("\n".join([""] + children), 4) */
  if (graph->n_children > 0 && depth < 64)
    {
      fx_buf subs;
      fx_buf_init (&subs);
      for (size_t i = 0; i < graph->n_children; i++)
        {
          fx_buf_putc (&subs, '\n');
          if (graph->children[i].graph != NULL)
            print_readable (graph->children[i].graph, graph->children[i].attr, opts, depth + 1, &subs);
        }
      add_indent (subs.data, subs.len, 4, out);
      fx_buf_free (&subs);
    }
  fx_buf_free (&src);
  fx_buf_free (&module);
}

void
fx_graph_print_readable (const fx_graph *graph, const fx_readable_opts *opts, fx_buf *out)
{
  fx_readable_opts defaults = { 0 };
  print_readable (graph, graph->class_name, opts ? opts : &defaults, 0, out);
}
