/* fx-ir-dump.c: Inductor's scheduler dumps (ir_pre_fusion.txt, ir_post_fusion.txt of TORCH_COMPILE_DEBUG) into
   scheduler nodes: fused groups and their members, buffers written and read, output buffers with their layouts. */
#include "fx/importers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  const char *start;          /* header line */
  const char *end;            /* end of the block so far */
  fx_buf name, kind, ir_type, device, iteration, sizes, extern_kernel;
  fx_buf writes, reads, unmet, buffers;
  fx_buf members;             /* a fused node's member names */
  int fused_into;             /* index of the fused node holding it, -1 */
  int ordinal;
} node_acc;

static bool
is_ident_char (char c)
{
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* "NAME: KindSchedulerNode(IR)" at column 0: the length of NAME, 0 when the line is no header. */
static size_t
header (const char *p, const char *eol, const char **kind, size_t *kind_len, const char **ir, size_t *ir_len)
{
  const char *q = p;
  while (q < eol && is_ident_char (*q))
    q++;
  if (q == p || eol - q < 3 || q[0] != ':' || q[1] != ' ')
    return 0;
  const char *k = q + 2;
  const char *paren = memchr (k, '(', (size_t) (eol - k));
  if (!paren || paren - k < 13 || memcmp (paren - 13, "SchedulerNode", 13) != 0 || eol[-1] != ')')
    return 0;
  for (const char *c = k; c < paren; c++)
    if (!is_ident_char (*c))
      return 0;
  *kind = k;
  *kind_len = (size_t) (paren - k);
  *ir = paren + 1;
  *ir_len = (size_t) (eol - 1 - (paren + 1));
  return (size_t) (q - p);
}

static void
list_add (fx_buf *list, const char *item, size_t n)
{
  /* Keeps the first occurrence only: a buffer read through two index expressions is one read. */
  if (list->len)
    {
      const char *p = list->data;
      while (p)
        {
          const char *e = strstr (p, ", ");
          size_t len = e ? (size_t) (e - p) : strlen (p);
          if (len == n && memcmp (p, item, n) == 0)
            return;
          p = e ? e + 2 : NULL;
        }
      fx_buf_puts (list, ", ");
    }
  fx_buf_append (list, item, n);
}

/* The buffer names of a dependency list: MemoryDep('buf0', ...), StarDep(name='buf0', ...), WeakDep(name='x', ...). */
static void
dep_names (const char *text, size_t len, fx_buf *out, fx_buf *also)
{
  const char *end = text + len;
  for (const char *p = text; p + 4 < end; p++)
    {
      if (memcmp (p, "Dep(", 4) != 0)
        continue;
      const char *q = p + 4;
      if (end - q > 5 && memcmp (q, "name=", 5) == 0)
        q += 5;
      if (q >= end || (*q != '\'' && *q != '"'))
        continue;
      char quote = *q++;
      const char *e = memchr (q, quote, (size_t) (end - q));
      if (!e)
        break;
      list_add (out, q, (size_t) (e - q));
      if (also)
        list_add (also, q, (size_t) (e - q));
      p = e;
    }
}

static void
acc_init (node_acc *a)
{
  memset (a, 0, sizeof *a);
  fx_buf *bufs[] = { &a->name, &a->kind, &a->ir_type, &a->device, &a->iteration, &a->sizes, &a->extern_kernel,
                     &a->writes, &a->reads, &a->unmet, &a->buffers, &a->members };
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    fx_buf_init (bufs[i]);
  a->fused_into = -1;
}

static void
acc_free (node_acc *a)
{
  fx_buf *bufs[] = { &a->name, &a->kind, &a->ir_type, &a->device, &a->iteration, &a->sizes, &a->extern_kernel,
                     &a->writes, &a->reads, &a->unmet, &a->buffers, &a->members };
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    fx_buf_free (bufs[i]);
}

static const char *
arena_buf (fx_arena *arena, const fx_buf *b)
{
  return b->len ? fx_arena_strndup (arena, b->data, b->len) : NULL;
}

/* The end of the line at p (without the newline) and the start of the next. */
static const char *
line_end (const char *p, const char *end, const char **next)
{
  const char *eol = memchr (p, '\n', (size_t) (end - p));
  if (!eol)
    eol = end;
  *next = eol < end ? eol + 1 : end;
  return eol;
}

static void
trim_copy (fx_buf *out, const char *s, const char *e)
{
  while (s < e && (*s == ' ' || *s == '\t'))
    s++;
  while (e > s && (e[-1] == ' ' || e[-1] == '\r'))
    e--;
  fx_buf_reset (out);
  fx_buf_append (out, s, (size_t) (e - s));
}

fx_status
fx_parse_ir_dump (const char *text, size_t len, const char *stage, fx_arena *arena, fx_store_ir_node **out,
                  size_t *n_out, fx_ir_dump_issues *issues, fx_diag *diag)
{
  (void) diag;
  *out = NULL;
  *n_out = 0;
  if (issues)
    memset (issues, 0, sizeof *issues);
  node_acc *nodes = NULL;
  size_t n = 0, cap = 0;
  int top = -1;               /* the current top-level node */
  int cur = -1;               /* the node whose fields follow */
  bool member_next = false;   /* the previous line was "X.snodes[i] =" */
  const char *end = text + len, *p = text;
  int lineno = 0;
  while (p < end)
    {
      const char *next, *eol = line_end (p, end, &next);
      lineno++;
      const char *kind, *ir;
      size_t kind_len, ir_len;
      size_t nl = header (p, eol, &kind, &kind_len, &ir, &ir_len);
      if (nl)
        {
          if (n == cap)
            {
              cap = cap ? cap * 2 : 16;
              node_acc *grown = realloc (nodes, cap * sizeof *nodes);
              if (!grown)
                break;
              nodes = grown;
            }
          node_acc *a = &nodes[n];
          acc_init (a);
          fx_buf_append (&a->name, p, nl);
          fx_buf_append (&a->kind, kind, kind_len);
          fx_buf_append (&a->ir_type, ir, ir_len);
          a->start = p;
          a->end = eol;
          a->ordinal = (int) n;
          if (member_next && top >= 0)
            {
              a->fused_into = top;
              list_add (&nodes[top].members, p, nl);
            }
          else
            top = (int) n;
          cur = (int) n;
          n++;
          member_next = false;
          p = next;
          continue;
        }
      member_next = false;
      if (cur < 0)
        {
          /* Text before the first node: not a scheduler dump (or a damaged one). */
          bool blank = true;
          for (const char *c = p; c < eol; c++)
            blank &= *c == ' ' || *c == '\t' || *c == '\r';
          if (!blank && issues)
            {
              if (!issues->skipped_lines)
                {
                  /* Shown to users: control bytes of a binary file become '?'. */
                  size_t k = 0;
                  for (const char *c = p; c < eol && k < 100; c++, k++)
                    issues->first_text[k] = (unsigned char) *c < 0x20 || *c == 0x7f ? '?' : *c;
                  issues->first_text[k] = 0;
                  issues->first_line = lineno;
                }
              issues->skipped_lines++;
            }
          p = next;
          continue;
        }
      /* "NAME.field = value" of the current node or of the fused node around it. */
      node_acc *a = NULL;
      const char *field = NULL;
      for (int pass = 0; pass < 2 && !a; pass++)
        {
          int idx = pass == 0 ? cur : top;
          if (idx < 0)
            continue;
          node_acc *cand = &nodes[idx];
          if ((size_t) (eol - p) > cand->name.len + 1 && memcmp (p, cand->name.data, cand->name.len) == 0
              && p[cand->name.len] == '.')
            {
              a = cand;
              field = p + cand->name.len + 1;
            }
        }
      /* The block ends where the next header starts: lines up to it are the node's text (a fused node's own
         lines, such as "X.snodes[1] =", only extend the fused node). */
      node_acc *owner = a && a != &nodes[cur] ? a : &nodes[cur];
      owner->end = eol;
      if (top >= 0)
        nodes[top].end = eol;
      if (!a)
        {
          p = next;
          continue;
        }
      const char *eq = NULL;
      for (const char *c = field; c + 3 <= eol && !eq; c++)
        if (c[0] == ' ' && c[1] == '=' && c[2] == ' ')
          eq = c;
      bool bare = !eq && eol - field >= 3 && eol[-1] == '=' && eol[-2] == ' ';
      if (bare && eol - field >= 9 && memcmp (field, "snodes[", 7) == 0)
        {
          /* "X.snodes[0] =" has no value: the next header is a member of X. */
          member_next = true;
          p = next;
          continue;
        }
      if (!eq && !bare)
        {
          p = next;
          continue;
        }
      /* "X.writes = " with the value on the next lines; its trailing blank may have been trimmed. */
      if (!eq)
        eq = eol - 2;
      size_t flen = (size_t) (eq - field);
      const char *val = eq + 3 <= eol ? eq + 3 : eol;
      /* A value continues on the following indented lines; "outputs = [" runs to a "]" line. */
      bool to_bracket = flen == 7 && memcmp (field, "outputs", 7) == 0 && eol[-1] == '[';
      const char *vend = eol, *q = next;
      while (q < end)
        {
          const char *qn, *qe = line_end (q, end, &qn);
          if (!to_bracket && !(q < qe && *q == ' '))
            break;
          vend = qe;
          bool closing = qe - q == 1 && *q == ']';
          q = qn;
          if (to_bracket && closing)
            break;
        }
      if (to_bracket)
        {
          /* Each output: "    buf0: ComputedBuffer" and "    buf0.layout = FixedLayout(...)". */
          const char *r = next;
          while (r < vend)
            {
              const char *rn, *re = line_end (r, end, &rn);
              const char *s = r;
              while (s < re && *s == ' ')
                s++;
              const char *id = s;
              while (s < re && is_ident_char (*s))
                s++;
              if (s > id && s + 2 <= re && s[0] == ':' && s[1] == ' ' && id - r == 4)
                {
                  if (a->buffers.len)
                    fx_buf_putc (&a->buffers, '\n');
                  fx_buf_append (&a->buffers, id, (size_t) (re - id));
                }
              else if (s > id && re - s > 10 && memcmp (s, ".layout = ", 10) == 0 && a->buffers.len)
                {
                  fx_buf_putc (&a->buffers, ' ');
                  fx_buf_append (&a->buffers, s + 10, (size_t) (re - s - 10));
                }
              r = rn;
            }
        }
      else if (flen == 6 && memcmp (field, "writes", 6) == 0)
        dep_names (val, (size_t) (vend - val), &a->writes, NULL);
      else if (flen == 18 && memcmp (field, "unmet_dependencies", 18) == 0)
        dep_names (val, (size_t) (vend - val), &a->unmet, &a->reads);
      else if (flen == 16 && memcmp (field, "met_dependencies", 16) == 0)
        dep_names (val, (size_t) (vend - val), &a->reads, NULL);
      else if (flen == 12 && memcmp (field, "group.device", 12) == 0)
        trim_copy (&a->device, val, vend);
      else if (flen == 15 && memcmp (field, "group.iteration", 15) == 0)
        trim_copy (&a->iteration, val, vend);
      else if (flen == 5 && memcmp (field, "sizes", 5) == 0)
        trim_copy (&a->sizes, val, vend);
      else if (flen == 11 && memcmp (field, "node.kernel", 11) == 0)
        trim_copy (&a->extern_kernel, val, vend);
      owner->end = vend;
      if (top >= 0)
        nodes[top].end = vend;
      p = vend < end ? vend + 1 : end;
    }

  fx_store_ir_node *res = n ? fx_arena_alloc (arena, n * sizeof *res) : NULL;
  for (size_t i = 0; i < n; i++)
    {
      node_acc *a = &nodes[i];
      fx_store_ir_node *r = &res[i];
      /* Trailing blank lines belong to no node. */
      const char *e = a->end;
      while (e > a->start && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\r'))
        e--;
      r->stage = stage;
      r->ordinal = a->ordinal;
      r->handle = -1;
      r->name = arena_buf (arena, &a->name);
      r->kind = arena_buf (arena, &a->kind);
      r->ir_type = arena_buf (arena, &a->ir_type);
      r->fused_into = a->fused_into >= 0 ? res[a->fused_into].name : NULL;
      r->members = arena_buf (arena, &a->members);
      r->device = arena_buf (arena, &a->device);
      r->iteration = arena_buf (arena, &a->iteration);
      r->sizes = arena_buf (arena, &a->sizes);
      r->writes = arena_buf (arena, &a->writes);
      r->reads = arena_buf (arena, &a->reads);
      r->unmet = arena_buf (arena, &a->unmet);
      r->buffers = arena_buf (arena, &a->buffers);
      r->extern_kernel = arena_buf (arena, &a->extern_kernel);
      r->text = fx_arena_strndup (arena, a->start, (size_t) (e - a->start));
      acc_free (a);
    }
  free (nodes);
  *out = res;
  *n_out = n;
  return FX_OK;
}

fx_status
fx_split_post_fusion (const char *text, size_t len, fx_arena *arena, fx_fusion_group **out, size_t *n,
                      fx_diag *diag)
{
  fx_store_ir_node *nodes;
  size_t nn;
  *out = NULL;
  *n = 0;
  fx_status st = fx_parse_ir_dump (text, len, "post_fusion", arena, &nodes, &nn, NULL, diag);
  if (st != FX_OK)
    return st;
  size_t top = 0;
  for (size_t i = 0; i < nn; i++)
    top += nodes[i].fused_into == NULL;
  fx_fusion_group *groups = top ? fx_arena_alloc (arena, top * sizeof *groups) : NULL;
  for (size_t i = 0, k = 0; i < nn; i++)
    if (!nodes[i].fused_into)
      {
        groups[k].name = nodes[i].name;
        groups[k].kind = nodes[i].kind;
        groups[k].nodes = nodes[i].members ? nodes[i].members : nodes[i].name;
        groups[k].text = nodes[i].text;
        k++;
      }
  *out = groups;
  *n = top;
  return FX_OK;
}
