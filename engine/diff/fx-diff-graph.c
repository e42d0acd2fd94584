/* fx-diff-graph.c: matches the nodes of two FX graphs (placeholders, provenance, names, target and position,
   structure) and reports added, removed and changed nodes. Linear-ish: sorted hash keys, no pairwise scans. */
#include "fx/diff.h"

#include <stdlib.h>
#include <string.h>

#include "fx-diff-impl.h"

/* ------------------------------------------------------------------ node text */

static void
arg_list_repr (const fx_node *node, size_t skip, fx_buf *out)
{
  bool first = true;
  for (size_t i = skip; i < node->n_args; i++)
    {
      if (!first)
        fx_buf_puts (out, ", ");
      first = false;
      fx_arg_repr (&node->args[i], FX_REPR_CODE, out);
    }
  for (size_t i = 0; i < node->n_kwargs; i++)
    {
      if (!first)
        fx_buf_puts (out, ", ");
      first = false;
      fx_buf_printf (out, "%s = ", node->kwargs[i].name);
      fx_arg_repr (&node->kwargs[i].value, FX_REPR_CODE, out);
    }
}

void
fx_diff_node_line (const fx_node *node, fx_buf *out)
{
  if (node->op != FX_OP_OUTPUT)
    {
      fx_buf_puts (out, node->name);
      size_t mark = out->len;
      fx_buf_puts (out, ": \"");
      if (fx_val_annotation (&node->meta.val, true, true, out))
        fx_buf_putc (out, '"');
      else
        {
          out->len = mark;
          out->data[mark] = '\0';
        }
      fx_buf_puts (out, " = ");
    }
  switch (node->op)
    {
    case FX_OP_PLACEHOLDER:
      fx_buf_printf (out, "placeholder('%s')", node->target.name);
      break;
    case FX_OP_GET_ATTR:
      fx_buf_printf (out, "self.%s", node->target.name);
      break;
    case FX_OP_CALL_FUNCTION:
      fx_target_format (&node->target, out);
      fx_buf_putc (out, '(');
      arg_list_repr (node, 0, out);
      fx_buf_putc (out, ')');
      break;
    case FX_OP_CALL_METHOD:
      if (node->n_args)
        fx_arg_repr (&node->args[0], FX_REPR_CODE, out);
      fx_buf_printf (out, ".%s(", node->target.name);
      arg_list_repr (node, 1, out);
      fx_buf_putc (out, ')');
      break;
    case FX_OP_CALL_MODULE:
      fx_buf_printf (out, "self.%s(", node->target.name);
      arg_list_repr (node, 0, out);
      fx_buf_putc (out, ')');
      break;
    case FX_OP_OUTPUT:
      fx_buf_puts (out, "return ");
      if (node->n_args)
        fx_arg_repr (&node->args[0], FX_REPR_CODE, out);
      break;
    case FX_OPCODE_COUNT:
    default:
      break;
    }
}

/* ------------------------------------------------------------------ hashing */

/* ------------------------------------------------------------------ matching state */

typedef struct
{
  const fx_graph *ga, *gb;
  const fx_node **na, **nb;      /* nodes in graph order */
  size_t n_a, n_b;
  /* partner[] by position; -1: unmatched */
  long *pa, *pb;
  /* position of a node by its id */
  long *pos_a, *pos_b;
  fx_arena *tmp;
} match_state;

typedef const char *(*key_fn) (const fx_node *node, fx_buf *buf, fx_arena *arena);

static void
link (match_state *m, long a, long b)
{
  m->pa[a] = b;
  m->pb[b] = a;
}

/* The key fn gives node n while it is unpaired (paired < 0); NULL once paired or when fn gives none. */
static const char *
unpaired_key (const match_state *m, key_fn fn, const fx_node *n, long paired, fx_buf *buf)
{
  if (paired >= 0)
    return NULL;
  fx_buf_reset (buf);
  return fn (n, buf, m->tmp);
}

/* Pairs the unmatched nodes of a with unmatched nodes of b that have the same key, in order: the k-th a node with
   a key takes the k-th b node with it. Nodes whose key is NULL take no part. Returns the pairs made. */
static size_t
match_by_key (match_state *m, key_fn fn)
{
  fx_buf buf, other;
  fx_buf_init (&buf);
  fx_buf_init (&other);
  fx_diff_hashed *kb = malloc ((m->n_b + 1) * sizeof *kb);
  size_t nk = 0;
  for (size_t j = 0; j < m->n_b; j++)
    {
      const char *key = unpaired_key (m, fn, m->nb[j], m->pb[j], &buf);
      if (key)
        kb[nk++] = (fx_diff_hashed) { fx_hash_bytes (key, strlen (key), 0), j };
    }
  qsort (kb, nk, sizeof *kb, fx_diff_hashed_cmp);
  /* cursor[i]: for the first entry of a run of equal hashes, the next entry of that run to try. */
  size_t *cursor = malloc ((nk + 1) * sizeof *cursor);
  for (size_t i = 0; i < nk; i++)
    cursor[i] = i;
  size_t made = 0;
  for (size_t i = 0; i < m->n_a; i++)
    {
      const char *key = unpaired_key (m, fn, m->na[i], m->pa[i], &buf);
      if (!key)
        continue;
      uint64_t h = fx_hash_bytes (key, strlen (key), 0);
      size_t lo = fx_diff_hashed_find (kb, nk, h);
      if (lo >= nk || kb[lo].hash != h)
        continue;
      /* Walk the run from its cursor; entries before the cursor are taken. Hash collisions with another key are
         skipped without moving the cursor past them. */
      size_t c = cursor[lo];
      bool moved = true;
      for (size_t k = c; k < nk && kb[k].hash == h; k++)
        {
          if (m->pb[kb[k].pos] >= 0)
            {
              if (moved)
                cursor[lo] = k + 1;
              continue;
            }
          /* Keys are not kept (stack traces make them long): a candidate's is rebuilt to rule out a collision. */
          fx_buf_reset (&other);
          const char *key_b = fn (m->nb[kb[k].pos], &other, m->tmp);
          if (!key_b || strcmp (key_b, key) != 0)
            {
              moved = false;
              continue;
            }
          link (m, (long) i, (long) kb[k].pos);
          if (moved)
            cursor[lo] = k + 1;
          made++;
          break;
        }
    }
  free (cursor);
  free (kb);
  fx_buf_free (&buf);
  fx_buf_free (&other);
  return made;
}

static const char *
key_placeholder (const fx_node *n, fx_buf *buf, fx_arena *arena)
{
  (void) arena;
  if (n->op == FX_OP_PLACEHOLDER || n->op == FX_OP_GET_ATTR || n->op == FX_OP_OUTPUT)
    {
      fx_buf_printf (buf, "%d\x1f%s", (int) n->op, n->op == FX_OP_OUTPUT ? "" : n->target.name);
      return buf->data;
    }
  return NULL;
}

/* Placeholders that are not matched by target (renamed inputs): by position among the placeholders. */
static size_t
match_placeholders_by_position (match_state *m)
{
  size_t made = 0, j = 0;
  for (size_t i = 0; i < m->n_a; i++)
    {
      if (m->na[i]->op != FX_OP_PLACEHOLDER)
        continue;
      while (j < m->n_b && m->nb[j]->op != FX_OP_PLACEHOLDER)
        j++;
      if (j >= m->n_b)
        break;
      if (m->pa[i] < 0 && m->pb[j] < 0)
        {
          link (m, (long) i, (long) j);
          made++;
        }
      j++;
    }
  return made;
}

static void
target_key (const fx_node *n, fx_buf *buf)
{
  fx_buf_printf (buf, "%d\x1f", (int) n->op);
  fx_target_format (&n->target, buf);
}

static const char *
key_provenance (const fx_node *n, fx_buf *buf, fx_arena *arena)
{
  (void) arena;
  const fx_meta *mt = &n->meta;
  if (!mt->stack_trace && !mt->n_nn_module_stack && !mt->n_source_fn_stack)
    return NULL;
  target_key (n, buf);
  fx_buf_putc (buf, '\x1f');
  if (mt->stack_trace)
    fx_buf_puts (buf, mt->stack_trace);
  for (size_t i = 0; i < mt->n_nn_module_stack; i++)
    fx_buf_printf (buf, "\x1f%s", mt->nn_module_stack[i].path ? mt->nn_module_stack[i].path : "");
  for (size_t i = 0; i < mt->n_source_fn_stack; i++)
    fx_buf_printf (buf, "\x1e%s", mt->source_fn_stack[i].name ? mt->source_fn_stack[i].name : "");
  return buf->data;
}

static const char *
key_name (const fx_node *n, fx_buf *buf, fx_arena *arena)
{
  (void) arena;
  fx_buf_printf (buf, "%d\x1f%s", (int) n->op, n->name);
  return buf->data;
}

static const char *
key_target (const fx_node *n, fx_buf *buf, fx_arena *arena)
{
  (void) arena;
  target_key (n, buf);
  return buf->data;
}

/* One side's unpaired nodes (paired[i] < 0) in graph order: their positions in idx and the hashes of their target
   keys in h. Returns how many. */
static size_t
unpaired_targets (const fx_node **nodes, const long *paired, size_t n, uint64_t *h, long *idx)
{
  fx_buf buf;
  fx_buf_init (&buf);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (paired[i] < 0)
      {
        fx_buf_reset (&buf);
        target_key (nodes[i], &buf);
        h[k] = fx_hash_bytes (buf.data, buf.len, 0);
        idx[k++] = (long) i;
      }
  fx_buf_free (&buf);
  return k;
}

/* Target and position: the longest common subsequence (Myers) of the unmatched nodes' targets in graph order; when
   the sequences differ too much for that to be cheap, the k-th occurrence of a target pairs with the k-th. */
static size_t
match_by_target_position (match_state *m)
{
  long *ia = malloc ((m->n_a + 1) * sizeof *ia), *ib = malloc ((m->n_b + 1) * sizeof *ib);
  uint64_t *ha = malloc ((m->n_a + 1) * sizeof *ha), *hb = malloc ((m->n_b + 1) * sizeof *hb);
  size_t na = unpaired_targets (m->na, m->pa, m->n_a, ha, ia);
  size_t nb = unpaired_targets (m->nb, m->pb, m->n_b, hb, ib);
  size_t made = 0;
  if (na && nb)
    {
      char *ops = malloc (na + nb + 1);
      long n_ops = fx_diff_myers (ha, na, hb, nb, 2000, ops);
      if (n_ops >= 0)
        {
          size_t x = 0, y = 0;
          for (long k = 0; k < n_ops; k++)
            {
              if (ops[k] == '=')
                {
                  link (m, ia[x], ib[y]);
                  made++;
                  x++, y++;
                }
              else if (ops[k] == '-')
                x++;
              else
                y++;
            }
        }
      free (ops);
      if (n_ops < 0)
        made += match_by_key (m, key_target);
    }
  free (ia);
  free (ib);
  free (ha);
  free (hb);
  return made;
}

static long
arg_position_of (const fx_node *user, const fx_node *input)
{
  for (size_t k = 0; k < user->n_args; k++)
    if (user->args[k].kind == FX_ARG_NODE && user->args[k].u.node == input)
      return (long) k;
  return -1;
}

/* Structure: an unmatched node whose input (or user) is matched pairs with the unmatched node of the same opcode
   that uses the partner input at the same argument position (or that the partner user reads at that position).
   This catches a node whose target changed and that has no name in common. */
static size_t
match_by_structure (match_state *m)
{
  size_t made = 0;
  for (int round = 0; round < 2; round++)
    {
      size_t before = made;
      for (size_t i = 0; i < m->n_a; i++)
        {
          const fx_node *a = m->na[i];
          if (m->pa[i] >= 0)
            continue;
          for (size_t k = 0; k < a->n_args && m->pa[i] < 0; k++)
            {
              if (a->args[k].kind != FX_ARG_NODE)
                continue;
              long ip = m->pos_a[a->args[k].u.node->id];
              if (ip < 0 || m->pa[ip] < 0)
                continue;
              const fx_node *in_b = m->nb[m->pa[ip]];
              for (size_t u = 0; u < in_b->n_users; u++)
                {
                  const fx_node *cand = in_b->users[u];
                  long jp = m->pos_b[cand->id];
                  if (jp < 0 || m->pb[jp] >= 0 || cand->op != a->op
                      || arg_position_of (cand, in_b) != (long) k)
                    continue;
                  link (m, (long) i, jp);
                  made++;
                  break;
                }
            }
        }
      /* Backwards: through users. */
      for (size_t i = m->n_a; i-- > 0;)
        {
          const fx_node *a = m->na[i];
          if (m->pa[i] >= 0)
            continue;
          for (size_t u = 0; u < a->n_users && m->pa[i] < 0; u++)
            {
              const fx_node *user = a->users[u];
              long up = m->pos_a[user->id];
              if (up < 0 || m->pa[up] < 0)
                continue;
              long k = arg_position_of (user, a);
              const fx_node *user_b = m->nb[m->pa[up]];
              if (k < 0 || (size_t) k >= user_b->n_args || user_b->args[k].kind != FX_ARG_NODE)
                continue;
              const fx_node *cand = user_b->args[k].u.node;
              long jp = m->pos_b[cand->id];
              if (jp < 0 || m->pb[jp] >= 0 || cand->op != a->op)
                continue;
              link (m, (long) i, jp);
              made++;
            }
        }
      if (made == before)
        break;
    }
  return made;
}

/* ------------------------------------------------------------------ comparing matched nodes */

static bool
arg_equal_mapped (const match_state *m, const fx_arg *a, const fx_arg *b)
{
  if (a->kind != b->kind)
    return false;
  if (a->kind == FX_ARG_NODE)
    {
      long ip = m->pos_a[a->u.node->id];
      long jp = m->pos_b[b->u.node->id];
      return ip >= 0 && jp >= 0 && m->pa[ip] == jp;
    }
  if (a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE || a->kind == FX_ARG_SLICE)
    {
      if (a->u.seq.n != b->u.seq.n)
        return false;
      for (size_t i = 0; i < a->u.seq.n; i++)
        if (!arg_equal_mapped (m, &a->u.seq.items[i], &b->u.seq.items[i]))
          return false;
      return true;
    }
  if (a->kind == FX_ARG_DICT)
    {
      if (a->u.dict.n != b->u.dict.n)
        return false;
      for (size_t i = 0; i < a->u.dict.n; i++)
        if (!arg_equal_mapped (m, &a->u.dict.items[i].key, &b->u.dict.items[i].key)
            || !arg_equal_mapped (m, &a->u.dict.items[i].value, &b->u.dict.items[i].value))
          return false;
      return true;
    }
  return fx_arg_equal (a, b);
}

static bool
args_equal (const match_state *m, const fx_node *a, const fx_node *b)
{
  if (a->n_args != b->n_args)
    return false;
  for (size_t i = 0; i < a->n_args; i++)
    if (!arg_equal_mapped (m, &a->args[i], &b->args[i]))
      return false;
  return true;
}

static bool
kwargs_equal (const match_state *m, const fx_node *a, const fx_node *b)
{
  if (a->n_kwargs != b->n_kwargs)
    return false;
  for (size_t i = 0; i < a->n_kwargs; i++)
    if (strcmp (a->kwargs[i].name, b->kwargs[i].name) != 0
        || !arg_equal_mapped (m, &a->kwargs[i].value, &b->kwargs[i].value))
      return false;
  return true;
}

static void
args_text (const fx_node *n, bool kwargs, fx_buf *out)
{
  fx_buf_reset (out);
  if (kwargs)
    {
      fx_buf_putc (out, '{');
      for (size_t i = 0; i < n->n_kwargs; i++)
        {
          fx_buf_printf (out, "%s%s: ", i ? ", " : "", n->kwargs[i].name);
          fx_arg_repr (&n->kwargs[i].value, FX_REPR_CODE, out);
        }
      fx_buf_putc (out, '}');
      return;
    }
  fx_buf_putc (out, '(');
  for (size_t i = 0; i < n->n_args; i++)
    {
      if (i)
        fx_buf_puts (out, ", ");
      fx_arg_repr (&n->args[i], FX_REPR_CODE, out);
    }
  if (n->n_args == 1)
    fx_buf_putc (out, ',');
  fx_buf_putc (out, ')');
}

static void
dims_text (const fx_dim *d, int n, fx_buf *out)
{
  fx_buf_putc (out, '[');
  for (int i = 0; i < n; i++)
    {
      if (i)
        fx_buf_puts (out, ", ");
      if (d[i].sym)
        fx_buf_puts (out, d[i].sym);
      else
        fx_buf_printf (out, "%lld", (long long) d[i].value);
    }
  fx_buf_putc (out, ']');
}

static bool
dims_equal (const fx_dim *a, const fx_dim *b, int n)
{
  for (int i = 0; i < n; i++)
    {
      if ((a[i].sym == NULL) != (b[i].sym == NULL))
        return false;
      if (a[i].sym ? strcmp (a[i].sym, b[i].sym) != 0 : a[i].value != b[i].value)
        return false;
    }
  return true;
}

typedef struct
{
  fx_diff *diff;
  const char *scope;
  const fx_node *a, *b;
  int n_changes;
} change_ctx;

static void
change (change_ctx *c, const char *field, const char *old_text, const char *new_text)
{
  fx_diff_add (c->diff, FX_DIFF_SECTION_GRAPH, FX_DIFF_CHANGED, c->scope, "node", c->a->name, c->b->name, field,
               old_text, new_text);
  c->n_changes++;
}

static void
compare_meta (change_ctx *c, const fx_val *va, const fx_val *vb)
{
  /* What one side does not record is unknown, not different: formats carry different metadata (a repro.py has no
     strides, a Dynamo graph text no values on some nodes). */
  if (va->kind == FX_VAL_NONE || vb->kind == FX_VAL_NONE)
    return;
  fx_buf x, y;
  fx_buf_init (&x);
  fx_buf_init (&y);
  if (va->kind == FX_VAL_TENSOR && vb->kind == FX_VAL_TENSOR)
    {
      const fx_tensor_meta *ta = &va->tensor, *tb = &vb->tensor;
      if (ta->dtype != tb->dtype)
        change (c, "meta.dtype", fx_dtype_name (ta->dtype), fx_dtype_name (tb->dtype));
      if (ta->ndim != tb->ndim || !dims_equal (ta->sizes, tb->sizes, ta->ndim))
        {
          dims_text (ta->sizes, ta->ndim, &x);
          dims_text (tb->sizes, tb->ndim, &y);
          change (c, "meta.shape", x.data, y.data);
        }
      else if (ta->strides && tb->strides && !dims_equal (ta->strides, tb->strides, ta->ndim))
        {
          fx_buf_reset (&x);
          fx_buf_reset (&y);
          if (ta->strides)
            dims_text (ta->strides, ta->ndim, &x);
          else
            fx_buf_puts (&x, "?");
          if (tb->strides)
            dims_text (tb->strides, tb->ndim, &y);
          else
            fx_buf_puts (&y, "?");
          change (c, "meta.stride", x.data, y.data);
        }
      if (ta->has_device && tb->has_device
          && (ta->device.type != tb->device.type || ta->device.index != tb->device.index))
        {
          fx_buf_reset (&x);
          fx_buf_reset (&y);
          if (ta->has_device)
            fx_device_format (ta->device, &x);
          else
            fx_buf_puts (&x, "?");
          if (tb->has_device)
            fx_device_format (tb->device, &y);
          else
            fx_buf_puts (&y, "?");
          change (c, "meta.device", x.data, y.data);
        }
    }
  else
    {
      bool ha = fx_val_annotation (va, true, true, &x);
      bool hb = fx_val_annotation (vb, true, true, &y);
      if (ha != hb || (ha && strcmp (x.data, y.data) != 0))
        change (c, "meta.val", ha ? x.data : "-", hb ? y.data : "-");
    }
  fx_buf_free (&x);
  fx_buf_free (&y);
}

static bool
compare_pair (const match_state *m, fx_diff *diff, const char *scope, const fx_node *a, const fx_node *b,
              const fx_diff_graph_opts *opts)
{
  change_ctx c = { diff, scope, a, b, 0 };
  fx_buf x, y;
  fx_buf_init (&x);
  fx_buf_init (&y);
  if (a->op != b->op)
    change (&c, "op", fx_opcode_name (a->op), fx_opcode_name (b->op));
  if (!fx_target_equal (&a->target, &b->target))
    {
      fx_target_format (&a->target, &x);
      fx_target_format (&b->target, &y);
      if (strcmp (x.data, y.data) != 0)
        change (&c, "target", x.data, y.data);
    }
  if (!opts->ignore_names && strcmp (a->name, b->name) != 0)
    change (&c, "name", a->name, b->name);
  if (!args_equal (m, a, b))
    {
      args_text (a, false, &x);
      args_text (b, false, &y);
      change (&c, "args", x.data, y.data);
    }
  if (!kwargs_equal (m, a, b))
    {
      args_text (a, true, &x);
      args_text (b, true, &y);
      change (&c, "kwargs", x.data, y.data);
    }
  if (!opts->ignore_meta)
    compare_meta (&c, &a->meta.val, &b->meta.val);
  fx_buf_free (&x);
  fx_buf_free (&y);
  return c.n_changes > 0;
}

/* ------------------------------------------------------------------ the graph diff */

void
fx_diff_graph_opts_init (fx_diff_graph_opts *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->context = 3;
}

static const fx_node **
node_array (const fx_graph *g, size_t *n, long **pos)
{
  const fx_node **arr = malloc ((g->n_nodes + 1) * sizeof *arr);
  *pos = malloc (((size_t) g->next_id + 1) * sizeof **pos);
  for (uint32_t i = 0; i <= g->next_id; i++)
    (*pos)[i] = -1;
  size_t k = 0;
  fx_graph_foreach_node (g, node)
    {
      if (node->erased)
        continue;
      (*pos)[node->id] = (long) k;
      arr[k++] = node;
    }
  *n = k;
  return arr;
}

/* The graph as unified-diff hunks over node lines in merged order: informational, the node entries say the same. */
static void
add_graph_hunks (fx_diff *diff, const char *scope, const fx_diff_pair *pairs, size_t n, int context)
{
  fx_buf hunk, line;
  fx_buf_init (&hunk);
  fx_buf_init (&line);
  size_t i = 0;
  /* line numbers (1-based node positions) of each side before pair i */
  size_t *la = malloc ((n + 1) * sizeof *la), *lb = malloc ((n + 1) * sizeof *lb);
  la[0] = lb[0] = 1;
  for (size_t k = 0; k < n; k++)
    {
      la[k + 1] = la[k] + (pairs[k].a != NULL);
      lb[k + 1] = lb[k] + (pairs[k].b != NULL);
    }
  while (i < n)
    {
      while (i < n && pairs[i].a && pairs[i].b && !pairs[i].changed)
        i++;
      if (i >= n)
        break;
      size_t start = i > (size_t) context ? i - (size_t) context : 0;
      /* extend the hunk while changes are within 2*context of each other */
      size_t end = i, last_change = i;
      while (end < n)
        {
          bool is_change = !(pairs[end].a && pairs[end].b && !pairs[end].changed);
          if (is_change)
            last_change = end;
          else if (end - last_change > (size_t) (2 * context))
            break;
          end++;
        }
      size_t stop = last_change + 1 + (size_t) context;
      if (stop > n)
        stop = n;
      fx_buf_reset (&hunk);
      fx_buf_printf (&hunk, "@@ -%zu,%zu +%zu,%zu @@\n", la[start], la[stop] - la[start], lb[start],
                     lb[stop] - lb[start]);
      for (size_t k = start; k < stop; k++)
        {
          const fx_diff_pair *p = &pairs[k];
          if (p->a && p->b && !p->changed)
            {
              fx_buf_reset (&line);
              fx_diff_node_line (p->b, &line);
              fx_buf_printf (&hunk, " %s\n", line.data);
              continue;
            }
          if (p->a)
            {
              fx_buf_reset (&line);
              fx_diff_node_line (p->a, &line);
              fx_buf_printf (&hunk, "-%s\n", line.data);
            }
          if (p->b)
            {
              fx_buf_reset (&line);
              fx_diff_node_line (p->b, &line);
              fx_buf_printf (&hunk, "+%s\n", line.data);
            }
        }
      fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_GRAPH, FX_DIFF_HUNK, scope, "graph", NULL, NULL, NULL,
                                      NULL, hunk.data);
      e->informational = true;
      i = stop;
    }
  free (la);
  free (lb);
  fx_buf_free (&hunk);
  fx_buf_free (&line);
}

fx_status
fx_diff_graphs (fx_diff *diff, const fx_graph *a, const fx_graph *b, const char *scope,
                const fx_diff_graph_opts *opts, fx_diag *diag)
{
  fx_diff_graph_opts defaults;
  if (!opts)
    {
      fx_diff_graph_opts_init (&defaults);
      opts = &defaults;
    }
  if (!a || !b)
    return fx_diag_set (diag, FX_ERR_INVALID, "graph diff: missing graph %s", !a ? "a" : "b");

  match_state m;
  memset (&m, 0, sizeof m);
  m.ga = a;
  m.gb = b;
  m.tmp = fx_arena_new ();
  m.na = node_array (a, &m.n_a, &m.pos_a);
  m.nb = node_array (b, &m.n_b, &m.pos_b);
  m.pa = malloc ((m.n_a + 1) * sizeof *m.pa);
  m.pb = malloc ((m.n_b + 1) * sizeof *m.pb);
  for (size_t i = 0; i < m.n_a; i++)
    m.pa[i] = -1;
  for (size_t j = 0; j < m.n_b; j++)
    m.pb[j] = -1;

  fx_diff_match_stats local, *st = diff->pairs ? &local : &diff->stats;
  memset (st, 0, sizeof *st);
  st->by_placeholder = match_by_key (&m, key_placeholder) + match_placeholders_by_position (&m);
  st->by_provenance = match_by_key (&m, key_provenance);
  st->by_name = match_by_key (&m, key_name);
  st->by_target = match_by_target_position (&m);
  st->by_structure = match_by_structure (&m);

  /* Merged order: b's order, a's unmatched nodes where they stood, a node moved out of order shown at b's place. */
  fx_diff_pair *pairs = fx_arena_alloc (diff->arena, (m.n_a + m.n_b + 1) * sizeof *pairs);
  bool *done_a = calloc (m.n_a + 1, sizeof *done_a);
  size_t np = 0, i = 0, j = 0;
  while (i < m.n_a || j < m.n_b)
    {
      if (i < m.n_a && done_a[i])
        i++;
      else if (i < m.n_a && m.pa[i] < 0)
        {
          pairs[np++] = (fx_diff_pair) { m.na[i], NULL, true };
          done_a[i++] = true;
        }
      else if (j < m.n_b && m.pb[j] < 0)
        pairs[np++] = (fx_diff_pair) { NULL, m.nb[j++], true };
      else if (j < m.n_b)
        {
          long pi = m.pb[j];
          pairs[np++] = (fx_diff_pair) { m.na[pi], m.nb[j], false };
          done_a[pi] = true;
          j++;
        }
      else
        i++;
    }
  free (done_a);

  fx_buf line;
  fx_buf_init (&line);
  size_t first_entry = diff->n_entries;
  for (size_t k = 0; k < np; k++)
    {
      fx_diff_pair *p = &pairs[k];
      if (p->a && p->b)
        p->changed = compare_pair (&m, diff, scope, p->a, p->b, opts);
      else
        {
          fx_buf_reset (&line);
          fx_diff_node_line (p->a ? p->a : p->b, &line);
          fx_diff_add (diff, FX_DIFF_SECTION_GRAPH, p->a ? FX_DIFF_REMOVED : FX_DIFF_ADDED, scope, "node",
                       p->a ? p->a->name : NULL, p->b ? p->b->name : NULL, NULL, p->a ? line.data : NULL,
                       p->b ? line.data : NULL);
        }
    }
  fx_buf_free (&line);
  size_t first_hunk = diff->n_entries;
  add_graph_hunks (diff, scope, pairs, np, opts->context >= 0 ? opts->context : 3);
  /* The text form reads best hunks first, then the per-field list: rotate the hunks in front of the node entries. */
  size_t n_nodes_e = first_hunk - first_entry, n_hunks = diff->n_entries - first_hunk;
  if (n_nodes_e && n_hunks)
    {
      fx_diff_entry *tmp = malloc (n_nodes_e * sizeof *tmp);
      memcpy (tmp, diff->entries + first_entry, n_nodes_e * sizeof *tmp);
      memmove (diff->entries + first_entry, diff->entries + first_hunk, n_hunks * sizeof *tmp);
      memcpy (diff->entries + first_entry + n_hunks, tmp, n_nodes_e * sizeof *tmp);
      free (tmp);
    }
  if (!diff->pairs)
    {
      diff->pairs = pairs;
      diff->n_pairs = np;
      diff->graph_a = a;
      diff->graph_b = b;
      diff->pairs_scope = fx_arena_strdup (diff->arena, scope);
    }

  free (m.na);
  free (m.nb);
  free (m.pa);
  free (m.pb);
  free (m.pos_a);
  free (m.pos_b);
  fx_arena_free (m.tmp);
  return FX_OK;
}
