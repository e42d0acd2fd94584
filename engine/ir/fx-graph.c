/* fx-graph.c: graph and node creation, FX name uniquing, users, editing, DCE, verification and copying. */
#include "fx/ir.h"
#include "fx-arg-impl.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- name table */

/* Open-addressing map from a name to a node (names of erased nodes stay reserved, as in FX),
   plus FX's per-base counters (_Namespace._base_count). */
typedef struct
{
  const char *key;
  fx_node *node;
  int64_t count;
  bool used;
} name_slot;

typedef struct
{
  name_slot *slots;
  size_t cap;
  size_t len;
} name_map;

struct fx_name_table
{
  name_map used;
  name_map bases;
};

static name_slot *
map_find (name_map *m, const char *key, bool insert)
{
  if (insert && (m->len + 1) * 4 >= m->cap * 3)
    {
      size_t ncap = m->cap ? m->cap * 2 : 64;
      name_slot *old = m->slots;
      size_t ocap = m->cap;
      m->slots = calloc (ncap, sizeof *m->slots);
      if (m->slots == NULL)
        abort ();
      m->cap = ncap;
      for (size_t i = 0; i < ocap; i++)
        if (old[i].used)
          {
            size_t j = fx_hash_bytes (old[i].key, strlen (old[i].key), 0) & (ncap - 1);
            while (m->slots[j].used)
              j = (j + 1) & (ncap - 1);
            m->slots[j] = old[i];
          }
      free (old);
    }
  if (m->cap == 0)
    return NULL;
  size_t i = fx_hash_bytes (key, strlen (key), 0) & (m->cap - 1);
  while (m->slots[i].used)
    {
      if (strcmp (m->slots[i].key, key) == 0)
        return &m->slots[i];
      i = (i + 1) & (m->cap - 1);
    }
  if (!insert)
    return NULL;
  m->slots[i].used = true;
  m->len++;
  return &m->slots[i];
}

/* Python keywords, builtins and FX's custom builtins: a generated name never shadows them. */
static const char *const reserved_names[] = {
  "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup", "BlockingIOError",
  "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError", "ConnectionAbortedError", "ConnectionError",
  "ConnectionRefusedError", "ConnectionResetError", "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning",
  "EnvironmentError", "Exception", "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError",
  "FloatingPointError", "FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning",
  "IndentationError", "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
  "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "None", "NotADirectoryError", "NotImplemented",
  "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning", "PermissionError",
  "ProcessLookupError", "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning",
  "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError",
  "TimeoutError", "True", "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError",
  "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError", "Warning",
  "ZeroDivisionError", "__build_class__", "__debug__", "__doc__", "__import__", "__loader__", "__name__",
  "__package__", "__spec__", "abs", "aiter", "all", "and", "anext", "any", "as", "ascii", "assert", "async", "await",
  "bin", "bool", "break", "breakpoint", "bytearray", "bytes", "callable", "chr", "class", "classmethod", "compile",
  "complex", "continue", "copyright", "credits", "def", "del", "delattr", "dict", "dir", "divmod", "elif", "else",
  "enumerate", "eval", "except", "exec", "exit", "filter", "finally", "float", "for", "format", "from", "frozenset",
  "getattr", "global", "globals", "hasattr", "hash", "help", "hex", "id", "if", "import", "in", "input", "int", "is",
  "isinstance", "issubclass", "iter", "lambda", "len", "license", "list", "locals", "map", "max", "memoryview",
  "min", "next", "nonlocal", "not", "object", "oct", "open", "or", "ord", "pass", "pow", "print", "property", "quit",
  "raise", "range", "repr", "return", "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod",
  "str", "sum", "super", "try", "tuple", "type", "vars", "while", "with", "yield", "zip",
  /* torch/fx/graph.py _custom_builtins */
  "inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree",
};

static bool
is_reserved (const char *name)
{
  static name_map reserved;
  /* Built once; the table is read-only afterwards. Callers building graphs on several threads
     touch it first through fx_graph_new, which is serialized by the caller's own setup. */
  if (reserved.cap == 0)
    for (size_t i = 0; i < sizeof reserved_names / sizeof reserved_names[0]; i++)
      map_find (&reserved, reserved_names[i], true)->key = reserved_names[i];
  return map_find (&reserved, name, false) != NULL;
}

/* ---------------------------------------------------------------- graphs */

fx_graph *
fx_graph_new (void)
{
  fx_graph *g = calloc (1, sizeof *g);
  if (g == NULL)
    abort ();
  g->arena = fx_arena_new ();
  g->names = calloc (1, sizeof *g->names);
  if (g->names == NULL)
    abort ();
  g->class_name = "GraphModule";
  (void) is_reserved ("");
  return g;
}

void
fx_graph_free (fx_graph *graph)
{
  if (graph == NULL)
    return;
  for (size_t i = 0; i < graph->n_children; i++)
    fx_graph_free (graph->children[i].graph);
  fx_graph_foreach_node (graph, n)
    free (n->users);
  free (graph->names->used.slots);
  free (graph->names->bases.slots);
  free (graph->names);
  fx_arena_free (graph->arena);
  free (graph);
}

bool
fx_graph_name_taken (const fx_graph *graph, const char *name)
{
  return map_find (&graph->names->used, name, false) != NULL;
}

fx_node *
fx_graph_find_node (const fx_graph *graph, const char *name)
{
  name_slot *s = map_find (&graph->names->used, name, false);
  return s ? s->node : NULL;
}

/* _name_regex = ^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$ : splits a valid name into a base and an optional number. */
static bool
name_regex_match (const char *s, size_t *base_len, const char **num)
{
  size_t n = strlen (s);
  if (n == 0 || !(isalpha ((unsigned char) s[0]) || s[0] == '_'))
    return false;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum ((unsigned char) s[i]) || s[i] == '_'))
      return false;
  /* The lazy base is the shortest prefix whose rest is "_<digits>": the maximal trailing digit run after a '_'. */
  size_t k = n;
  while (k > 0 && isdigit ((unsigned char) s[k - 1]))
    k--;
  if (k < n && k >= 2 && s[k - 1] == '_')
    {
      *base_len = k - 1;
      *num = s + k;
    }
  else
    {
      *base_len = n;
      *num = NULL;
    }
  return true;
}

static int64_t
parse_count (const char *digits)
{
  int64_t v = 0;
  for (; *digits; digits++)
    v = v < INT64_MAX / 10 - 10 ? v * 10 + (*digits - '0') : v;
  return v;
}

/* torch/fx/graph.py _Namespace.create_name (2.x), with obj = None. */
const char *
fx_graph_unique_name (fx_graph *graph, const char *candidate)
{
  fx_arena *arena = graph->arena;
  size_t base_len;
  const char *num_text;
  char *name;

  if (candidate == NULL)
    candidate = "";
  if (name_regex_match (candidate, &base_len, &num_text))
    name = fx_arena_strdup (arena, candidate);
  else
    {
      /* _illegal_char_regex = [^0-9a-zA-Z_]+ : each run of illegal characters becomes one '_' */
      size_t n = strlen (candidate), j = 0;
      char *clean = fx_arena_alloc (arena, n + 2);
      for (size_t i = 0; i < n; i++)
        {
          unsigned char c = (unsigned char) candidate[i];
          if (isalnum (c) || c == '_')
            clean[j++] = (char) c;
          else if (i == 0 || isalnum ((unsigned char) candidate[i - 1]) || candidate[i - 1] == '_')
            clean[j++] = '_';
        }
      clean[j] = '\0';
      if (j == 0)
        clean = fx_arena_strdup (arena, "_unnamed");
      else if (isdigit ((unsigned char) clean[0]))
        clean = fx_arena_printf (arena, "_%s", clean);
      name = clean;
      name_regex_match (name, &base_len, &num_text);
    }

  const char *base = fx_arena_strndup (arena, name, base_len);
  const char *result = name;
  int64_t num;
  if (num_text == NULL || fx_graph_name_taken (graph, name))
    {
      name_slot *b = map_find (&graph->names->bases, name, false);
      num = b ? b->count : 0;
      if (is_reserved (name))
        {
          num++;
          result = fx_arena_printf (arena, "%s_%lld", base, (long long) num);
        }
    }
  else
    num = parse_count (num_text);
  while (fx_graph_name_taken (graph, result))
    {
      num++;
      result = fx_arena_printf (arena, "%s_%lld", base, (long long) num);
    }
  name_slot *u = map_find (&graph->names->used, result, true);
  u->key = result;
  u->node = NULL;
  name_slot *b = map_find (&graph->names->bases, base, true);
  b->key = base;
  b->count = num;
  return result;
}

/* ---------------------------------------------------------------- users */

static void
users_add_unchecked (fx_node *def, fx_node *user);

/* During one argument update a repeated input meets its user as the last entry, so only that is checked;
   callers that may add an older user (replace_all_uses_with) use users_add_scan. */
static void
users_add (fx_node *def, fx_node *user)
{
  if (def->n_users > 0 && def->users[def->n_users - 1] == user)
    return;
  users_add_unchecked (def, user);
}

static void
users_add_scan (fx_node *def, fx_node *user)
{
  for (size_t i = 0; i < def->n_users; i++)
    if (def->users[i] == user)
      return;
  users_add_unchecked (def, user);
}

static void
users_add_unchecked (fx_node *def, fx_node *user)
{
  if (def->n_users == def->users_cap)
    {
      size_t cap = def->users_cap ? def->users_cap * 2 : 4;
      fx_node **u = realloc (def->users, cap * sizeof *u);
      if (u == NULL)
        abort ();
      def->users = u;
      def->users_cap = cap;
    }
  def->users[def->n_users++] = user;
}

/* Scans from the end: the users edited most are usually the newest ones. */
static void
users_remove (fx_node *def, fx_node *user)
{
  for (size_t i = def->n_users; i-- > 0;)
    if (def->users[i] == user)
      {
        memmove (&def->users[i], &def->users[i + 1], (def->n_users - i - 1) * sizeof *def->users);
        def->n_users--;
        return;
      }
}

static void
remove_use_cb (fx_node *def, void *data)
{
  users_remove (def, data);
}

static void
add_use_cb (fx_node *def, void *data)
{
  users_add (def, data);
}

void
fx_node_foreach_input (const fx_node *node, void (*fn) (fx_node *, void *), void *data)
{
  for (size_t i = 0; i < node->n_args; i++)
    fx_arg_foreach_node (&node->args[i], fn, data);
  for (size_t i = 0; i < node->n_kwargs; i++)
    fx_arg_foreach_node (&node->kwargs[i].value, fn, data);
}

/* As FX's __update_args_kwargs: drop every old use (args and kwargs), then register the new inputs in order.
   Afterwards no input lists this node twice, which users_add relies on. */
static void
node_update_uses (fx_node *node, const fx_arg *old_args, size_t n_old_args, const fx_kwarg *old_kwargs,
                  size_t n_old_kwargs)
{
  for (size_t i = 0; i < n_old_args; i++)
    fx_arg_foreach_node (&old_args[i], remove_use_cb, node);
  for (size_t i = 0; i < n_old_kwargs; i++)
    fx_arg_foreach_node (&old_kwargs[i].value, remove_use_cb, node);
  fx_node_foreach_input (node, add_use_cb, node);
}

static fx_arg *
copy_args (fx_arena *arena, const fx_arg *args, size_t n)
{
  fx_arg *copy = n ? fx_arena_alloc (arena, n * sizeof *copy) : NULL;
  for (size_t i = 0; i < n; i++)
    copy[i] = fx_arg_copy (arena, &args[i]);
  return copy;
}

static fx_kwarg *
copy_kwargs (fx_arena *arena, const fx_kwarg *kwargs, size_t n)
{
  fx_kwarg *copy = n ? fx_arena_alloc (arena, n * sizeof *copy) : NULL;
  for (size_t i = 0; i < n; i++)
    {
      copy[i].name = fx_arena_strdup (arena, kwargs[i].name);
      copy[i].value = fx_arg_copy (arena, &kwargs[i].value);
    }
  return copy;
}

/* Sets both at once, so a new node registers its uses without first scanning its inputs' users. */
static void
node_set_args_kwargs (fx_node *node, const fx_arg *args, size_t n_args, const fx_kwarg *kwargs, size_t n_kwargs)
{
  fx_arena *arena = node->graph->arena;
  fx_arg *old_args = node->args;
  fx_kwarg *old_kwargs = node->kwargs;
  size_t n_old_args = node->n_args, n_old_kwargs = node->n_kwargs;

  node->args = copy_args (arena, args, n_args);
  node->n_args = n_args;
  node->kwargs = copy_kwargs (arena, kwargs, n_kwargs);
  node->n_kwargs = n_kwargs;
  node_update_uses (node, old_args, n_old_args, old_kwargs, n_old_kwargs);
}

void
fx_node_set_args (fx_node *node, const fx_arg *args, size_t n_args)
{
  node_set_args_kwargs (node, args, n_args, node->kwargs, node->n_kwargs);
}

void
fx_node_set_kwargs (fx_node *node, const fx_kwarg *kwargs, size_t n_kwargs)
{
  node_set_args_kwargs (node, node->args, node->n_args, kwargs, n_kwargs);
}

const fx_arg *
fx_node_get_kwarg (const fx_node *node, const char *name)
{
  for (size_t i = 0; i < node->n_kwargs; i++)
    if (strcmp (node->kwargs[i].name, name) == 0)
      return &node->kwargs[i].value;
  return NULL;
}

void
fx_node_share_user_provenance (fx_node *made, const fx_node *from)
{
  made->meta.stack_trace = from->meta.stack_trace;
  made->meta.nn_module_stack = from->meta.nn_module_stack;
  made->meta.n_nn_module_stack = from->meta.n_nn_module_stack;
  made->meta.source_fn_stack = from->meta.source_fn_stack;
  made->meta.n_source_fn_stack = from->meta.n_source_fn_stack;
  made->meta.seq_nr = from->meta.seq_nr;
}

void
fx_node_set_source (fx_node *made, fx_arena *arena, const fx_node *from, const char *pass_name, const char *action,
                    bool chain)
{
  fx_node_source *src = fx_arena_alloc (arena, sizeof *src);
  src->name = fx_arena_strdup (arena, from->name);
  src->target = fx_arena_strdup (arena, from->target.name);
  src->pass_name = pass_name;
  src->action = action;
  if (chain)
    {
      src->from_node = from->meta.from_node;
      src->n_from = from->meta.n_from_node;
    }
  made->meta.from_node = src;
  made->meta.n_from_node = 1;
}

/* ---------------------------------------------------------------- node creation and editing */

static void
link_before (fx_graph *graph, fx_node *node, fx_node *before)
{
  if (before == NULL)
    {
      node->prev = graph->last;
      node->next = NULL;
      if (graph->last)
        graph->last->next = node;
      else
        graph->first = node;
      graph->last = node;
    }
  else
    {
      node->next = before;
      node->prev = before->prev;
      if (before->prev)
        before->prev->next = node;
      else
        graph->first = node;
      before->prev = node;
    }
}

static void
unlink_node (fx_graph *graph, fx_node *node)
{
  if (node->prev)
    node->prev->next = node->next;
  else
    graph->first = node->next;
  if (node->next)
    node->next->prev = node->prev;
  else
    graph->last = node->prev;
  node->prev = node->next = NULL;
}

fx_node *
fx_graph_create_node (fx_graph *graph, fx_opcode op, fx_target target, const fx_arg *args, size_t n_args,
                      const fx_kwarg *kwargs, size_t n_kwargs, const char *name)
{
  fx_arena *arena = graph->arena;
  fx_node *node = fx_arena_alloc (arena, sizeof *node);

  node->graph = graph;
  node->id = graph->next_id++;
  node->op = op;
  node->target.kind = target.kind;
  node->target.name = fx_arena_strdup (arena, target.name ? target.name : "");
  node->target.repr = fx_arena_strdup (arena, target.repr);
  node->target.op_id = target.op_id;
  node->meta.seq_nr = -1;

  const char *candidate = name;
  if (candidate == NULL)
    candidate = op == FX_OP_OUTPUT ? "output" : fx_target_base_name (&node->target, arena);
  node->name = fx_graph_unique_name (graph, candidate);
  map_find (&graph->names->used, node->name, false)->node = node;

  link_before (graph, node, graph->insert_before);
  graph->n_nodes++;
  node_set_args_kwargs (node, args, n_args, kwargs, n_kwargs);
  return node;
}

fx_node *
fx_graph_placeholder (fx_graph *graph, const char *target)
{
  return fx_graph_create_node (graph, FX_OP_PLACEHOLDER, fx_target_str (target), NULL, 0, NULL, 0, NULL);
}

fx_node *
fx_graph_call_function (fx_graph *graph, fx_target target, const fx_arg *args, size_t n_args,
                        const fx_kwarg *kwargs, size_t n_kwargs)
{
  return fx_graph_create_node (graph, FX_OP_CALL_FUNCTION, target, args, n_args, kwargs, n_kwargs, NULL);
}

fx_node *
fx_graph_output (fx_graph *graph, fx_arg value)
{
  return fx_graph_create_node (graph, FX_OP_OUTPUT, fx_target_str ("output"), &value, 1, NULL, 0, "output");
}

fx_node *
fx_graph_output_node (const fx_graph *graph)
{
  fx_graph_foreach_node_reverse (graph, n)
    if (n->op == FX_OP_OUTPUT)
      return n;
  return NULL;
}

int
fx_graph_placeholder_position (const fx_graph *graph, const fx_node *placeholder)
{
  if (placeholder == NULL || placeholder->op != FX_OP_PLACEHOLDER)
    return -1;
  int index = 0;
  for (const fx_node *q = graph->first; q && q != placeholder; q = q->next)
    index += !q->erased && q->op == FX_OP_PLACEHOLDER;
  return index;
}

void
fx_graph_set_insert_point (fx_graph *graph, fx_node *before)
{
  graph->insert_before = before;
}

void
fx_graph_move_before (fx_graph *graph, fx_node *node, fx_node *before)
{
  if (node == before)
    return;
  unlink_node (graph, node);
  link_before (graph, node, before);
}

fx_status
fx_node_error (fx_diag *diag, const fx_node *node, const char *pass, fx_status code, const char *fmt, ...)
{
  char msg[900];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  fx_buf t;
  fx_buf_init (&t);
  fx_target_format (&node->target, &t);
  fx_diag_set (diag, code, "node '%s' (%s): %s", node->name, t.data, msg);
  fx_buf_free (&t);
  if (diag)
    {
      snprintf (diag->node, sizeof diag->node, "%s", node->name);
      if (pass)
        snprintf (diag->pass, sizeof diag->pass, "%s", pass);
    }
  return code;
}

size_t
fx_node_replace_all_uses_with (fx_node *node, fx_node *replacement)
{
  size_t n = node->n_users;
  fx_node **users;

  if (n == 0 || node == replacement)
    return 0;
  users = malloc (n * sizeof *users);
  if (users == NULL)
    abort ();
  memcpy (users, node->users, n * sizeof *users);
  for (size_t i = 0; i < n; i++)
    {
      fx_node *u = users[i];
      for (size_t a = 0; a < u->n_args; a++)
        fx_arg_replace_node (&u->args[a], node, replacement);
      for (size_t k = 0; k < u->n_kwargs; k++)
        fx_arg_replace_node (&u->kwargs[k].value, node, replacement);
      users_remove (node, u);
      users_add_scan (replacement, u);
    }
  free (users);
  return n;
}

fx_status
fx_graph_erase_node (fx_graph *graph, fx_node *node, fx_diag *diag)
{
  if (node->graph != graph || node->erased)
    return fx_diag_set (diag, FX_ERR_INVALID, "node %s is not in this graph", node->name);
  if (node->n_users > 0)
    {
      if (diag != NULL)
        snprintf (diag->node, sizeof diag->node, "%s", node->name);
      return fx_diag_set (diag, FX_ERR_INVALID, "tried to erase node %s but it still has %zu user(s), e.g. %s",
                          node->name, node->n_users, node->users[0]->name);
    }
  fx_node_foreach_input (node, remove_use_cb, node);
  if (graph->insert_before == node)
    graph->insert_before = node->next;
  unlink_node (graph, node);
  name_slot *s = map_find (&graph->names->used, node->name, false);
  if (s != NULL)
    s->node = NULL;
  free (node->users);
  node->users = NULL;
  node->n_users = node->users_cap = 0;
  node->erased = true;
  graph->n_nodes--;
  return FX_OK;
}

bool
fx_node_is_impure (const fx_node *node)
{
  static const char *const impure_ops[] = {
    "aten._assert_async.msg", "aten._assert_async.default", "aten._assert_scalar.default",
    "aten._assert_tensor_metadata.default", "aten.sym_constrain_range.default",
    "aten.sym_constrain_range_for_size.default", "aten._print.default", "aten.copy_.default",
    "aten._functional_assert_async.msg", "profiler._record_function_enter.default",
    "profiler._record_function_enter_new.default", "profiler._record_function_exit._RecordFunction",
  };
  const char *t = node->target.name;

  switch (node->op)
    {
    case FX_OP_PLACEHOLDER:
    case FX_OP_OUTPUT:
      return true;
    case FX_OP_CALL_FUNCTION:
      if (node->target.kind == FX_TARGET_OP)
        {
          for (size_t i = 0; i < sizeof impure_ops / sizeof impure_ops[0]; i++)
            if (strcmp (t, impure_ops[i]) == 0)
              return true;
          /* In-place overloads ("aten.add_.Tensor") mutate an input. */
          const char *dot = strchr (t, '.');
          const char *end = dot ? strchr (dot + 1, '.') : NULL;
          if (end != NULL && end[-1] == '_' && end - dot > 2 && end[-2] != '_')
            return true;
          return false;
        }
      if (node->target.kind == FX_TARGET_OPERATOR)
        return strcmp (t, "setitem") == 0 || strcmp (t, "delitem") == 0;
      if (node->target.kind == FX_TARGET_BUILTIN)
        return strcmp (t, "print") == 0 || strcmp (t, "setattr") == 0;
      return strcmp (t, "torch._assert") == 0 || strcmp (t, "torch._assert_async") == 0
             || strcmp (t, "torch._C._set_grad_enabled") == 0;
    case FX_OP_CALL_METHOD:
      {
        size_t n = strlen (t);
        return n > 1 && t[n - 1] == '_' && t[n - 2] != '_';
      }
    case FX_OP_GET_ATTR:
    case FX_OP_CALL_MODULE:
    case FX_OPCODE_COUNT:
    default:
      return false;
    }
}

size_t
fx_graph_eliminate_dead_code (fx_graph *graph)
{
  size_t erased = 0;
  for (fx_node *n = graph->last, *prev; n != NULL; n = prev)
    {
      prev = n->prev;
      if (n->n_users == 0 && !fx_node_is_impure (n))
        {
          fx_graph_erase_node (graph, n, NULL);
          erased++;
        }
    }
  return erased;
}

/* ---------------------------------------------------------------- checks */

typedef struct
{
  const fx_graph *graph;
  const fx_node *user;
  uint8_t *seen;   /* by node id: 1 = defined before the user */
  fx_diag *diag;
  bool ok;
} check_ctx;

static void
check_input_cb (fx_node *def, void *data)
{
  check_ctx *c = data;
  if (!c->ok)
    return;
  if (def == NULL || def->graph != c->graph || def->erased)
    {
      fx_diag_set (c->diag, FX_ERR_INVALID, "node %s uses a node that is not in the graph", c->user->name);
      c->ok = false;
    }
  else if (!c->seen[def->id])
    {
      fx_diag_set (c->diag, FX_ERR_INVALID, "node %s uses %s before it is defined", c->user->name, def->name);
      c->ok = false;
    }
}

static bool
walk_topological (const fx_graph *graph, fx_diag *diag, uint8_t *seen)
{
  check_ctx c = { graph, NULL, seen, diag, true };
  fx_graph_foreach_node (graph, n)
    {
      c.user = n;
      fx_node_foreach_input (n, check_input_cb, &c);
      if (!c.ok)
        {
          if (diag != NULL)
            snprintf (diag->node, sizeof diag->node, "%s", n->name);
          return false;
        }
      seen[n->id] = 1;
    }
  return true;
}

bool
fx_graph_is_topological (const fx_graph *graph, fx_diag *diag)
{
  uint8_t *seen = calloc (graph->next_id + 1, 1);
  if (seen == NULL)
    abort ();
  bool ok = walk_topological (graph, diag, seen);
  free (seen);
  return ok;
}

/* A set of (definition, user) edges, so that checking users against inputs stays linear. */
typedef struct
{
  uint64_t *keys;   /* 0 = empty; keys are (def id + 1) << 32 | (user id + 1) */
  size_t cap;
  size_t len;
} edge_set;

static uint64_t
edge_key (const fx_node *def, const fx_node *user)
{
  return ((uint64_t) def->id + 1) << 32 | ((uint64_t) user->id + 1);
}

/* Returns true when the key was new. */
static bool
edge_set_add (edge_set *set, uint64_t key)
{
  if ((set->len + 1) * 2 >= set->cap)
    {
      size_t ncap = set->cap ? set->cap * 2 : 256;
      uint64_t *keys = calloc (ncap, sizeof *keys);
      if (keys == NULL)
        abort ();
      for (size_t i = 0; i < set->cap; i++)
        if (set->keys[i] != 0)
          {
            size_t j = (set->keys[i] * 0x9E3779B97F4A7C15ULL) >> 40 & (ncap - 1);
            while (keys[j] != 0)
              j = (j + 1) & (ncap - 1);
            keys[j] = set->keys[i];
          }
      free (set->keys);
      set->keys = keys;
      set->cap = ncap;
    }
  size_t i = (key * 0x9E3779B97F4A7C15ULL) >> 40 & (set->cap - 1);
  while (set->keys[i] != 0)
    {
      if (set->keys[i] == key)
        return false;
      i = (i + 1) & (set->cap - 1);
    }
  set->keys[i] = key;
  set->len++;
  return true;
}

static bool
edge_set_has (const edge_set *set, uint64_t key)
{
  if (set->cap == 0)
    return false;
  size_t i = (key * 0x9E3779B97F4A7C15ULL) >> 40 & (set->cap - 1);
  while (set->keys[i] != 0)
    {
      if (set->keys[i] == key)
        return true;
      i = (i + 1) & (set->cap - 1);
    }
  return false;
}

typedef struct
{
  const fx_node *user;
  const edge_set *listed;  /* edges from the users lists */
  edge_set *used;          /* edges from the inputs */
  const fx_node *missing;
} edge_check_ctx;

static void
input_edge_cb (fx_node *def, void *data)
{
  edge_check_ctx *c = data;
  uint64_t key = edge_key (def, c->user);
  edge_set_add (c->used, key);
  if (c->missing == NULL && !edge_set_has (c->listed, key))
    c->missing = def;
}

static fx_status
verify_users (const fx_graph *graph, fx_diag *diag)
{
  edge_set listed = { 0 }, used = { 0 };
  fx_status st = FX_OK;

  fx_graph_foreach_node (graph, n)
    for (size_t i = 0; i < n->n_users && st == FX_OK; i++)
      if (!edge_set_add (&listed, edge_key (n, n->users[i])))
        st = fx_diag_set (diag, FX_ERR_INVALID, "node %s lists %s as a user twice", n->name, n->users[i]->name);
  fx_graph_foreach_node (graph, n)
    {
      if (st != FX_OK)
        break;
      edge_check_ctx c = { n, &listed, &used, NULL };
      fx_node_foreach_input (n, input_edge_cb, &c);
      if (c.missing != NULL)
        st = fx_diag_set (diag, FX_ERR_INVALID, "node %s is missing from the users of its input %s",
                          n->name, c.missing->name);
    }
  /* Every listed edge is a real use when both sets hold the same number of distinct edges. */
  if (st == FX_OK && used.len != listed.len)
    st = fx_diag_set (diag, FX_ERR_INVALID, "users lists name %zu uses but the arguments hold %zu",
                      listed.len, used.len);
  free (listed.keys);
  free (used.keys);
  return st;
}

fx_status
fx_graph_verify (const fx_graph *graph, fx_diag *diag)
{
  size_t count = 0, outputs = 0;

  if (!fx_graph_is_topological (graph, diag))
    return FX_ERR_INVALID;
  fx_graph_foreach_node (graph, n)
    {
      count++;
      if (n->name == NULL || n->name[0] == '\0')
        return fx_diag_set (diag, FX_ERR_INVALID, "a %s node has no name", fx_opcode_name (n->op));
      if (fx_graph_find_node (graph, n->name) != n)
        return fx_diag_set (diag, FX_ERR_INVALID, "node name %s is not unique", n->name);
      if ((unsigned) n->op >= FX_OPCODE_COUNT)
        return fx_diag_set (diag, FX_ERR_INVALID, "node %s has an invalid opcode", n->name);
      if (n->op == FX_OP_OUTPUT)
        {
          outputs++;
          if (n->next != NULL)
            return fx_diag_set (diag, FX_ERR_INVALID, "output node %s is not the last node", n->name);
        }
      if ((n->op == FX_OP_CALL_METHOD || n->op == FX_OP_CALL_MODULE || n->op == FX_OP_GET_ATTR)
          && (n->target.name == NULL || n->target.name[0] == '\0'))
        return fx_diag_set (diag, FX_ERR_INVALID, "node %s has an empty target", n->name);
      if (n->op == FX_OP_CALL_METHOD && n->n_args == 0)
        return fx_diag_set (diag, FX_ERR_INVALID, "call_method node %s has no receiver", n->name);
    }
  fx_status users_st = verify_users (graph, diag);
  if (users_st != FX_OK)
    return users_st;
  if (count != graph->n_nodes)
    return fx_diag_set (diag, FX_ERR_INVALID, "node count %zu does not match the list (%zu)", graph->n_nodes, count);
  if (outputs > 1)
    return fx_diag_set (diag, FX_ERR_INVALID, "graph has %zu output nodes", outputs);
  for (size_t i = 0; i < graph->n_children; i++)
    {
      fx_status st = fx_graph_verify (graph->children[i].graph, diag);
      if (st != FX_OK)
        return st;
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- children, attrs, inputs */

#define GROW(arena, arr, n, type)                                                  \
  do                                                                               \
    {                                                                              \
      type *grown_ = fx_arena_alloc ((arena), ((n) + 1) * sizeof (type));          \
      if ((n) > 0)                                                                 \
        memcpy (grown_, (arr), (n) * sizeof (type));                               \
      (arr) = grown_;                                                              \
    }                                                                              \
  while (0)

fx_graph *
fx_graph_add_child (fx_graph *graph, const char *attr, fx_graph *child)
{
  GROW (graph->arena, graph->children, graph->n_children, fx_graph_child);
  graph->children[graph->n_children].attr = fx_arena_strdup (graph->arena, attr);
  graph->children[graph->n_children].graph = child;
  graph->n_children++;
  return child;
}

fx_attr *
fx_graph_add_attr (fx_graph *graph, const char *name, fx_attr_kind kind)
{
  GROW (graph->arena, graph->attrs, graph->n_attrs, fx_attr);
  fx_attr *a = &graph->attrs[graph->n_attrs++];
  memset (a, 0, sizeof *a);
  a->name = fx_arena_strdup (graph->arena, name);
  a->kind = kind;
  return a;
}

fx_input_spec *
fx_graph_add_input_spec (fx_graph *graph, const char *name, fx_input_kind kind)
{
  GROW (graph->arena, graph->inputs, graph->n_inputs, fx_input_spec);
  fx_input_spec *s = &graph->inputs[graph->n_inputs++];
  memset (s, 0, sizeof *s);
  s->name = fx_arena_strdup (graph->arena, name);
  s->kind = kind;
  return s;
}

size_t
fx_graph_count_op (const fx_graph *graph, fx_opcode op)
{
  size_t n = 0;
  fx_graph_foreach_node (graph, node)
    n += node->op == op;
  return n;
}

/* ---------------------------------------------------------------- metadata */

const char *
fx_meta_get_extra (const fx_meta *meta, const char *key)
{
  for (size_t i = 0; i < meta->n_extra; i++)
    if (strcmp (meta->extra[i].key, key) == 0)
      return meta->extra[i].text;
  return NULL;
}

void
fx_meta_set_extra (fx_graph *graph, fx_meta *meta, const char *key, const char *text)
{
  for (size_t i = 0; i < meta->n_extra; i++)
    if (strcmp (meta->extra[i].key, key) == 0)
      {
        meta->extra[i].text = fx_arena_strdup (graph->arena, text);
        return;
      }
  GROW (graph->arena, meta->extra, meta->n_extra, fx_meta_extra);
  meta->extra[meta->n_extra].key = fx_arena_strdup (graph->arena, key);
  meta->extra[meta->n_extra].text = fx_arena_strdup (graph->arena, text);
  meta->n_extra++;
}

/* Matches `^\s*File "(.+)", line (\d+), in (.+)$` on one line. */
static bool
match_frame_line (const char *s, size_t len, fx_arena *arena, fx_stack_frame *f)
{
  size_t i = 0;
  while (i < len && (s[i] == ' ' || s[i] == '\t'))
    i++;
  if (len - i < 6 || strncmp (s + i, "File \"", 6) != 0)
    return false;
  i += 6;
  /* The file name runs to the last `", line ` on the line (file names may contain quotes). */
  const char *marker = NULL;
  for (size_t k = i; k + 8 <= len; k++)
    if (strncmp (s + k, "\", line ", 8) == 0)
      marker = s + k;
  if (marker == NULL || marker == s + i)
    return false;
  const char *p = marker + 8;
  const char *end = s + len;
  if (p >= end || !isdigit ((unsigned char) *p))
    return false;
  long line = 0;
  while (p < end && isdigit ((unsigned char) *p))
    {
      if (line < 100000000)
        line = line * 10 + (*p - '0');
      p++;
    }
  if (end - p < 5 || strncmp (p, ", in ", 5) != 0 || end - p == 5)
    return false;
  f->file = fx_arena_strndup (arena, s + i, (size_t) (marker - (s + i)));
  f->line = (int) line;
  f->func = fx_arena_strndup (arena, p + 5, (size_t) (end - (p + 5)));
  f->code = NULL;
  return true;
}

size_t
fx_stack_trace_parse (const char *trace, fx_arena *arena, fx_stack_frame **frames)
{
  size_t n = 0;
  fx_stack_frame *out = NULL;
  const char *p = trace;

  *frames = NULL;
  if (trace == NULL)
    return 0;
  while (*p)
    {
      const char *eol = strchr (p, '\n');
      size_t len = eol ? (size_t) (eol - p) : strlen (p);
      fx_stack_frame f;
      if (match_frame_line (p, len, arena, &f))
        {
          GROW (arena, out, n, fx_stack_frame);
          out[n++] = f;
        }
      else if (n > 0 && out[n - 1].code == NULL)
        {
          size_t a = 0, b = len;
          while (a < b && isspace ((unsigned char) p[a]))
            a++;
          while (b > a && isspace ((unsigned char) p[b - 1]))
            b--;
          if (b > a)
            out[n - 1].code = fx_arena_strndup (arena, p + a, b - a);
        }
      if (eol == NULL)
        break;
      p = eol + 1;
    }
  *frames = out;
  return n;
}

bool
fx_stack_trace_innermost (const char *trace, fx_arena *arena, fx_stack_frame *frame)
{
  fx_stack_frame *frames;
  size_t n = fx_stack_trace_parse (trace, arena, &frames);
  if (n == 0)
    return false;
  *frame = frames[n - 1];
  if (frame->code == NULL)
    frame->code = "";
  return true;
}

/* ---------------------------------------------------------------- copying */

static fx_val
val_copy (fx_arena *a, const fx_val *v)
{
  fx_val c = *v;
  c.sym = fx_arena_strdup (a, v->sym);
  c.text = fx_arena_strdup (a, v->text);
  if (v->kind == FX_VAL_TENSOR)
    {
      int nd = v->tensor.ndim;
      c.tensor.subclass = fx_arena_strdup (a, v->tensor.subclass);
      c.tensor.sizes = fx_arena_alloc (a, (size_t) (nd ? nd : 1) * sizeof (fx_dim));
      c.tensor.strides = v->tensor.strides ? fx_arena_alloc (a, (size_t) (nd ? nd : 1) * sizeof (fx_dim)) : NULL;
      for (int i = 0; i < nd; i++)
        {
          c.tensor.sizes[i] = (fx_dim) { v->tensor.sizes[i].value, fx_arena_strdup (a, v->tensor.sizes[i].sym) };
          if (c.tensor.strides)
            c.tensor.strides[i] = (fx_dim) { v->tensor.strides[i].value, fx_arena_strdup (a, v->tensor.strides[i].sym) };
        }
      c.tensor.storage_offset.sym = fx_arena_strdup (a, v->tensor.storage_offset.sym);
    }
  c.items = v->n_items ? fx_arena_alloc (a, v->n_items * sizeof (fx_val)) : NULL;
  for (size_t i = 0; i < v->n_items; i++)
    c.items[i] = val_copy (a, &v->items[i]);
  return c;
}

static fx_node_source *
sources_copy (fx_arena *a, const fx_node_source *src, size_t n)
{
  fx_node_source *out = n ? fx_arena_alloc (a, n * sizeof *out) : NULL;
  for (size_t i = 0; i < n; i++)
    {
      out[i].name = fx_arena_strdup (a, src[i].name);
      out[i].target = fx_arena_strdup (a, src[i].target);
      out[i].graph_id = src[i].graph_id;
      out[i].pass_name = fx_arena_strdup (a, src[i].pass_name);
      out[i].action = fx_arena_strdup (a, src[i].action);
      out[i].from_node = sources_copy (a, src[i].from_node, src[i].n_from);
      out[i].n_from = src[i].n_from;
    }
  return out;
}

static void
meta_copy (fx_arena *a, fx_meta *dst, const fx_meta *src)
{
  dst->val = val_copy (a, &src->val);
  dst->stack_trace = fx_arena_strdup (a, src->stack_trace);
  dst->n_nn_module_stack = src->n_nn_module_stack;
  dst->nn_module_stack = src->n_nn_module_stack ? fx_arena_alloc (a, src->n_nn_module_stack * sizeof (fx_module_entry)) : NULL;
  for (size_t i = 0; i < src->n_nn_module_stack; i++)
    {
      dst->nn_module_stack[i].key = fx_arena_strdup (a, src->nn_module_stack[i].key);
      dst->nn_module_stack[i].path = fx_arena_strdup (a, src->nn_module_stack[i].path);
      dst->nn_module_stack[i].type = fx_arena_strdup (a, src->nn_module_stack[i].type);
    }
  dst->n_source_fn_stack = src->n_source_fn_stack;
  dst->source_fn_stack = src->n_source_fn_stack ? fx_arena_alloc (a, src->n_source_fn_stack * sizeof (fx_source_fn)) : NULL;
  for (size_t i = 0; i < src->n_source_fn_stack; i++)
    {
      dst->source_fn_stack[i].name = fx_arena_strdup (a, src->source_fn_stack[i].name);
      dst->source_fn_stack[i].target = fx_arena_strdup (a, src->source_fn_stack[i].target);
    }
  dst->original_aten = fx_arena_strdup (a, src->original_aten);
  dst->from_node = sources_copy (a, src->from_node, src->n_from_node);
  dst->n_from_node = src->n_from_node;
  dst->seq_nr = src->seq_nr;
  dst->n_extra = src->n_extra;
  dst->extra = src->n_extra ? fx_arena_alloc (a, src->n_extra * sizeof (fx_meta_extra)) : NULL;
  for (size_t i = 0; i < src->n_extra; i++)
    {
      dst->extra[i].key = fx_arena_strdup (a, src->extra[i].key);
      dst->extra[i].text = fx_arena_strdup (a, src->extra[i].text);
    }
}

static fx_arg
arg_remap (fx_arena *a, const fx_arg *arg, fx_node **map)
{
  fx_arg c = fx_arg_copy (a, arg);
  if (arg->kind == FX_ARG_NODE)
    c.u.node = map[arg->u.node->id];
  else if (arg->kind == FX_ARG_LIST || arg->kind == FX_ARG_TUPLE || arg->kind == FX_ARG_SLICE)
    for (size_t i = 0; i < arg->u.seq.n; i++)
      c.u.seq.items[i] = arg_remap (a, &arg->u.seq.items[i], map);
  else if (arg->kind == FX_ARG_DICT)
    for (size_t i = 0; i < arg->u.dict.n; i++)
      {
        c.u.dict.items[i].key = arg_remap (a, &arg->u.dict.items[i].key, map);
        c.u.dict.items[i].value = arg_remap (a, &arg->u.dict.items[i].value, map);
      }
  return c;
}

fx_node *
fx_graph_copy_node (fx_graph *graph, const fx_node *n, fx_node **map, const char *name)
{
  fx_arena *a = graph->arena;
  size_t na = n->n_args, nk = n->n_kwargs;
  fx_arg *args = na ? calloc (na, sizeof *args) : NULL;
  fx_kwarg *kwargs = nk ? calloc (nk, sizeof *kwargs) : NULL;
  if ((na && args == NULL) || (nk && kwargs == NULL))
    abort ();
  for (size_t i = 0; i < na; i++)
    args[i] = arg_remap (a, &n->args[i], map);
  for (size_t i = 0; i < nk; i++)
    kwargs[i] = (fx_kwarg) { n->kwargs[i].name, arg_remap (a, &n->kwargs[i].value, map) };
  fx_target target = n->target;
  if (name != NULL && n->op == FX_OP_PLACEHOLDER)
    target = fx_target_str (name);
  fx_node *c = fx_graph_create_node (graph, n->op, target, args, na, kwargs, nk, name ? name : n->name);
  free (args);
  free (kwargs);
  c->type_expr = fx_arena_strdup (a, n->type_expr);
  if (n->default_value != NULL)
    {
      c->default_value = fx_arena_alloc (a, sizeof (fx_arg));
      *c->default_value = arg_remap (a, n->default_value, map);
    }
  meta_copy (a, &c->meta, &n->meta);
  return c;
}

fx_graph *
fx_graph_copy (const fx_graph *graph)
{
  fx_graph *g = fx_graph_new ();
  fx_arena *a = g->arena;
  fx_node **map = calloc (graph->next_id + 1, sizeof *map);
  if (map == NULL)
    abort ();

  g->class_name = fx_arena_strdup (a, graph->class_name);
  g->source_file = fx_arena_strdup (a, graph->source_file);
  g->pytree_args = fx_arena_strdup (a, graph->pytree_args);
  g->pytree_out = graph->pytree_out;
  fx_graph_foreach_node (graph, n)
    /* Arguments are remapped onto the copies, which exist already since the source is topological. */
    map[n->id] = fx_graph_copy_node (g, n, map, NULL);
  free (map);
  for (size_t i = 0; i < graph->n_children; i++)
    fx_graph_add_child (g, graph->children[i].attr, fx_graph_copy (graph->children[i].graph));
  for (size_t i = 0; i < graph->n_attrs; i++)
    {
      fx_attr *at = fx_graph_add_attr (g, graph->attrs[i].name, graph->attrs[i].kind);
      at->val = val_copy (a, &graph->attrs[i].val);
      at->text = fx_arena_strdup (a, graph->attrs[i].text);
    }
  for (size_t i = 0; i < graph->n_inputs; i++)
    {
      const fx_input_spec *s = &graph->inputs[i];
      fx_input_spec *d = fx_graph_add_input_spec (g, s->name, s->kind);
      d->val = val_copy (a, &s->val);
      d->storage = fx_arena_strdup (a, s->storage);
      d->is_leaf = s->is_leaf;
      d->requires_grad = s->requires_grad;
    }
  return g;
}
