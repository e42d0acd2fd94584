/* fx-pyexpr.c: Python expressions for the FX code parser: the grammar subset PyTorch writes, plus parser helpers. */
#include "fx-pyparse-impl.h"

#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static bool
is_keyword (const fx_pyparser *p, const fx_tok *t)
{
  (void) p;
  return t->kind == TK_NAME && t->op != 0;
}

/* How a token is shown in a message: `'('`, `'name'`, `end of line`. */
static const char *
tok_desc (const fx_pyparser *p, const fx_tok *t, char *buf, size_t size)
{
  switch ((fx_tok_kind) t->kind)
    {
    case TK_EOF: return "end of file";
    case TK_NEWLINE: return "end of line";
    case TK_INDENT: return "an indented block";
    case TK_DEDENT: return "the end of an indented block";
    case TK_COMMENT: return "a comment";
    case TK_STRING: return "a string";
    case TK_NAME: case TK_INT: case TK_FLOAT: case TK_OP:
    default:
      {
        int n = t->len > 40 ? 40 : (int) t->len;
        snprintf (buf, size, "'%.*s'", n, p->lx.text + t->off);
        return buf;
      }
    }
}

fx_status
fx_py_error (fx_pyparser *p, const fx_tok *tok, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fx_diag_setv (p->diag, FX_ERR_PARSE, fmt, ap);
  va_end (ap);
  fx_py_locate (&p->lx, tok, p->diag);
  return FX_ERR_PARSE;
}

fx_status
fx_py_expect_op (fx_pyparser *p, fx_op_kind op, const char *what)
{
  const fx_tok *t = fx_py_peek (p);
  char buf[64];
  if (!fx_py_is_op (t, op))
    return fx_py_error (p, t, "expected '%s'%s%s, found %s", fx_py_op_text (op), what ? " " : "", what ? what : "",
                        tok_desc (p, t, buf, sizeof buf));
  fx_py_next (p);
  return FX_OK;
}

fx_status
fx_py_end_statement (fx_pyparser *p, const fx_tok **comment)
{
  const fx_tok *t = fx_py_peek (p);
  char buf[64];
  if (comment != NULL)
    *comment = NULL;
  if (t->kind == TK_COMMENT)
    {
      if (comment != NULL)
        *comment = t;
      fx_py_next (p);
      t = fx_py_peek (p);
    }
  if (t->kind == TK_NEWLINE)
    {
      fx_py_next (p);
      return FX_OK;
    }
  if (t->kind == TK_EOF || t->kind == TK_DEDENT)
    return FX_OK;
  return fx_py_error (p, t, "expected the end of the statement, found %s", tok_desc (p, t, buf, sizeof buf));
}

static bool
starts_compound (const fx_pyparser *p, const fx_tok *t)
{
  static const char *const compound[] = {
    "if", "elif", "else", "for", "while", "with", "try", "except", "finally", "def", "class", "async",
  };
  if (fx_py_is_op (t, OP_AT))
    return true;
  for (size_t i = 0; i < sizeof compound / sizeof compound[0]; i++)
    if (fx_py_is_name (p, t, compound[i]))
      return true;
  return false;
}

fx_status
fx_py_skip_statement (fx_pyparser *p)
{
  const fx_tok *first = fx_py_peek (p);
  bool compound = starts_compound (p, first);

  /* Brackets never span a NEWLINE token (the tokenizer joins those lines), so the statement ends at the next one. */
  for (;;)
    {
      const fx_tok *t = fx_py_peek (p);
      if (t->kind == TK_EOF)
        return FX_OK;
      if (t->kind == TK_INDENT)
        return fx_py_error (p, t, "unexpected indent");
      if (t->kind == TK_DEDENT)
        return FX_OK;
      fx_py_next (p);
      if (t->kind == TK_NEWLINE)
        break;
    }
  /* A compound statement's block: comments may come before the INDENT. */
  size_t save = p->pos;
  while (fx_py_peek (p)->kind == TK_COMMENT)
    fx_py_next (p);
  if (fx_py_peek (p)->kind != TK_INDENT)
    {
      p->pos = save;
      return FX_OK;
    }
  if (!compound)
    return fx_py_error (p, fx_py_peek (p), "unexpected indent");
  int level = 0;
  for (;;)
    {
      const fx_tok *t = fx_py_next (p);
      if (t->kind == TK_INDENT)
        level++;
      else if (t->kind == TK_DEDENT && --level == 0)
        return FX_OK;
      else if (t->kind == TK_EOF)
        return FX_OK;
    }
}

fx_status
fx_py_parse_block (fx_pyparser *p, fx_py_stmt_fn stmt, void *data)
{
  const fx_tok *t = fx_py_peek (p);
  fx_status st;

  if (t->kind != TK_NEWLINE)
    {
      /* `class X: pass`: the body is on the same line. */
      if (t->kind == TK_COMMENT || t->kind == TK_EOF)
        return fx_py_error (p, t, "expected a statement after ':'");
      return stmt (p, data);
    }
  fx_py_next (p);
  while (fx_py_peek (p)->kind == TK_COMMENT)
    {
      st = stmt (p, data);
      if (st != FX_OK)
        return st;
    }
  t = fx_py_peek (p);
  if (t->kind != TK_INDENT)
    return fx_py_error (p, t, t->kind == TK_EOF ? "expected an indented block (the file ends here)"
                                                 : "expected an indented block");
  fx_py_next (p);
  for (;;)
    {
      t = fx_py_peek (p);
      if (t->kind == TK_DEDENT)
        {
          fx_py_next (p);
          return FX_OK;
        }
      if (t->kind == TK_EOF)
        return FX_OK;
      if (t->kind == TK_NEWLINE)
        {
          fx_py_next (p);
          continue;
        }
      if (t->kind == TK_INDENT)
        return fx_py_error (p, t, "unexpected indent");
      size_t before = p->pos;
      st = stmt (p, data);
      if (st != FX_OK)
        return st;
      if (p->pos == before)
        return fx_py_error (p, t, "internal error: the statement parser made no progress");
    }
}

char *
fx_py_expr_text (const fx_pyparser *p, const fx_expr *e, fx_arena *arena)
{
  const fx_tok *a = &p->lx.toks[e->tok_first];
  const fx_tok *b = &p->lx.toks[e->tok_last];
  size_t end = (size_t) b->off + b->len;
  return fx_arena_strndup (arena, p->lx.text + a->off, end > a->off ? end - a->off : 0);
}

static size_t
dotted_len (const fx_expr *e)
{
  if (e->kind == E_NAME)
    return e->slen;
  if (e->kind == E_ATTR)
    {
      size_t n = dotted_len (e->a);
      return n ? n + 1 + e->slen : 0;
    }
  return 0;
}

static size_t
dotted_fill (const fx_expr *e, char *out)
{
  if (e->kind == E_NAME)
    {
      memcpy (out, e->s, e->slen);
      return e->slen;
    }
  size_t n = dotted_fill (e->a, out);
  out[n++] = '.';
  memcpy (out + n, e->s, e->slen);
  return n + e->slen;
}

char *
fx_py_dotted_name (const fx_pyparser *p, const fx_expr *e, fx_arena *arena)
{
  size_t n = dotted_len (e);
  if (n == 0)
    return NULL;
  char *out = fx_arena_alloc (arena, n + 1);
  out[dotted_fill (e, out)] = '\0';
  return out;
}

/* ---------------------------------------------------------------- the hash map */

fx_py_slot *
fx_py_map_find (const fx_py_map *m, const char *key, size_t klen)
{
  if (m->cap == 0)
    return NULL;
  size_t i = fx_hash_bytes (key, klen, 0) & (m->cap - 1);
  while (m->slots[i].key != NULL)
    {
      if (m->slots[i].klen == klen && memcmp (m->slots[i].key, key, klen) == 0)
        return &m->slots[i];
      i = (i + 1) & (m->cap - 1);
    }
  return NULL;
}

fx_py_slot *
fx_py_map_insert (fx_py_map *m, const char *key, size_t klen, bool *fresh)
{
  fx_py_slot *s = fx_py_map_find (m, key, klen);
  if (s != NULL)
    {
      *fresh = false;
      return s;
    }
  if ((m->len + 1) * 2 > m->cap)
    {
      size_t ncap = m->cap ? m->cap * 2 : 64;
      fx_py_slot *slots = calloc (ncap, sizeof *slots);
      if (slots == NULL)
        abort ();
      for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != NULL)
          {
            size_t j = fx_hash_bytes (m->slots[i].key, m->slots[i].klen, 0) & (ncap - 1);
            while (slots[j].key != NULL)
              j = (j + 1) & (ncap - 1);
            slots[j] = m->slots[i];
          }
      free (m->slots);
      m->slots = slots;
      m->cap = ncap;
    }
  size_t i = fx_hash_bytes (key, klen, 0) & (m->cap - 1);
  while (m->slots[i].key != NULL)
    i = (i + 1) & (m->cap - 1);
  m->slots[i].key = key;
  m->slots[i].klen = klen;
  m->slots[i].value = NULL;
  m->slots[i].tok = 0;
  m->len++;
  *fresh = true;
  return &m->slots[i];
}

void
fx_py_map_free (fx_py_map *m)
{
  free (m->slots);
  memset (m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- expressions */

static fx_expr *
new_expr (fx_pyparser *p, fx_expr_kind kind, size_t tok)
{
  fx_expr *e = fx_arena_alloc (p->arena, sizeof *e);
  e->kind = kind;
  e->tok_first = e->tok_last = (uint32_t) tok;
  return e;
}

/* A growable list of expressions in the scratch arena (doubling, so appends stay linear). */
typedef struct
{
  fx_expr **items;
  size_t n, cap;
} expr_vec;

/* A OP B (KIND: E_BINOP or E_COMPARE), spanning from token FIRST to B's end. */
static fx_expr *
binary_expr (fx_pyparser *p, fx_expr_kind kind, size_t first, int op, fx_expr *a, fx_expr *b)
{
  fx_expr *e = new_expr (p, kind, first);
  e->op = op;
  e->a = a;
  e->b = b;
  e->tok_last = b->tok_last;
  return e;
}

/* A tuple or list of v's items, from token FIRST to the one before the parser's position. */
static fx_expr *
seq_expr (fx_pyparser *p, fx_expr_kind kind, size_t first, const expr_vec *v)
{
  fx_expr *e = new_expr (p, kind, first);
  e->items = v->items;
  e->n = v->n;
  e->tok_last = (uint32_t) (p->pos - 1);
  return e;
}

static void
vec_push (fx_pyparser *p, expr_vec *v, fx_expr *e)
{
  if (v->n == v->cap)
    v->items = fx_arena_grow (p->arena, v->items, &v->cap, sizeof *v->items, 4);
  v->items[v->n++] = e;
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void
c_locale_init (void)
{
  c_locale = newlocale (LC_ALL_MASK, "C", (locale_t) 0);
}

/* Number text without Python's digit-group underscores. */
static char *
clean_number (fx_pyparser *p, const fx_tok *t)
{
  char *s = fx_arena_alloc (p->arena, t->len + 1);
  size_t n = 0;
  for (size_t i = 0; i < t->len; i++)
    if (p->lx.text[t->off + i] != '_')
      s[n++] = p->lx.text[t->off + i];
  s[n] = '\0';
  return s;
}

static fx_status parse_atom_expr (fx_pyparser *p, fx_expr **out);
static fx_status parse_factor (fx_pyparser *p, fx_expr **out);

static fx_status
enter (fx_pyparser *p)
{
  if (++p->depth > FX_PY_MAX_DEPTH)
    return fx_py_error (p, fx_py_peek (p), "expression nested too deeply (more than %d levels)", FX_PY_MAX_DEPTH);
  return FX_OK;
}

/* One element of a list, tuple or call: a test, or *starred. */
static fx_status
parse_element (fx_pyparser *p, fx_expr **out)
{
  if (fx_py_is_op (fx_py_peek (p), OP_STAR))
    {
      size_t first = p->pos;
      fx_py_next (p);
      fx_expr *inner;
      fx_status st = parse_factor (p, &inner);
      if (st != FX_OK)
        return st;
      fx_expr *e = new_expr (p, E_STARRED, first);
      e->a = inner;
      e->tok_last = inner->tok_last;
      *out = e;
      return FX_OK;
    }
  return fx_py_parse_test (p, out);
}

/* After an item of a bracketed list: a comma (taken; *comma set) or the closing bracket (left for the caller's loop);
   a comprehension or anything else is an error. */
static fx_status
after_item (fx_pyparser *p, fx_op_kind close, bool *comma)
{
  const fx_tok *t = fx_py_peek (p);
  *comma = false;
  if (fx_py_is_name (p, t, "for"))
    return fx_py_error (p, t, "comprehensions are not supported in FX code");
  if (fx_py_is_op (t, OP_COMMA))
    {
      *comma = true;
      fx_py_next (p);
      return FX_OK;
    }
  if (!fx_py_is_op (t, close))
    {
      char buf[64];
      return fx_py_error (p, t, "expected ',' or '%s', found %s", fx_py_op_text (close),
                          tok_desc (p, t, buf, sizeof buf));
    }
  return FX_OK;
}

/* Items up to the closing bracket; *had_comma tells (x) from (x,). */
static fx_status
parse_seq (fx_pyparser *p, fx_op_kind close, expr_vec *v, bool *had_comma)
{
  *had_comma = false;
  while (!fx_py_is_op (fx_py_peek (p), close))
    {
      fx_expr *e;
      fx_status st = parse_element (p, &e);
      if (st != FX_OK)
        return st;
      vec_push (p, v, e);
      bool comma;
      if ((st = after_item (p, close, &comma)) != FX_OK)
        return st;
      *had_comma = *had_comma || comma;
    }
  fx_py_next (p);
  return FX_OK;
}

static fx_status
parse_dict (fx_pyparser *p, size_t first, fx_expr **out)
{
  expr_vec v = { 0 };
  bool is_set = false;
  while (!fx_py_is_op (fx_py_peek (p), OP_RBRACE))
    {
      fx_expr *k, *val;
      fx_status st = fx_py_parse_test (p, &k);
      if (st != FX_OK)
        return st;
      vec_push (p, &v, k);
      if (fx_py_is_op (fx_py_peek (p), OP_COLON))
        {
          if (is_set)
            return fx_py_error (p, fx_py_peek (p), "a set cannot hold 'key: value' items");
          fx_py_next (p);
          st = fx_py_parse_test (p, &val);
          if (st != FX_OK)
            return st;
          vec_push (p, &v, val);
        }
      else
        is_set = true;
      if (v.n == 1 && is_set)
        return fx_py_error (p, &p->lx.toks[k->tok_first], "sets are not supported in FX code");
      bool comma;
      if ((st = after_item (p, OP_RBRACE, &comma)) != FX_OK)
        return st;
    }
  fx_expr *e = new_expr (p, E_DICT, first);
  e->tok_last = (uint32_t) p->pos;
  fx_py_next (p);
  e->items = v.items;
  e->n = v.n / 2;
  *out = e;
  return FX_OK;
}

static fx_status
parse_atom (fx_pyparser *p, fx_expr **out)
{
  size_t first = p->pos;
  const fx_tok *t = fx_py_peek (p);
  char buf[64];
  fx_status st;

  switch ((fx_tok_kind) t->kind)
    {
    case TK_NAME:
      if (is_keyword (p, t))
        return fx_py_error (p, t, "unexpected keyword %s", tok_desc (p, t, buf, sizeof buf));
      {
        fx_expr *e = new_expr (p, E_NAME, first);
        e->s = p->lx.text + t->off;
        e->slen = t->len;
        fx_py_next (p);
        *out = e;
        return FX_OK;
      }
    case TK_INT:
      {
        fx_expr *e = new_expr (p, E_INT, first);
        char *s = clean_number (p, t);
        int base = 10;
        const char *digits = s;
        if (s[0] == '0' && (s[1] | 0x20) == 'x')
          base = 16, digits = s + 2;
        else if (s[0] == '0' && (s[1] | 0x20) == 'o')
          base = 8, digits = s + 2;
        else if (s[0] == '0' && (s[1] | 0x20) == 'b')
          base = 2, digits = s + 2;
        errno = 0;
        char *end;
        unsigned long long v = strtoull (digits, &end, base);
        if (errno == ERANGE || v > (unsigned long long) INT64_MAX || *end != '\0')
          {
            e->kind = E_BIGINT;
            e->s = s;
            e->slen = strlen (s);
          }
        else
          e->i = (int64_t) v;
        fx_py_next (p);
        *out = e;
        return FX_OK;
      }
    case TK_FLOAT:
      {
        fx_expr *e = new_expr (p, E_FLOAT, first);
        char *s = clean_number (p, t);
        pthread_once (&c_locale_once, c_locale_init);
        char *end;
        e->f = c_locale != (locale_t) 0 ? strtod_l (s, &end, c_locale) : strtod (s, &end);
        if (*end != '\0')
          return fx_py_error (p, t, "invalid float literal");
        fx_py_next (p);
        *out = e;
        return FX_OK;
      }
    case TK_STRING:
      {
        /* Adjacent literals concatenate. */
        fx_buf buf2;
        fx_buf_init (&buf2);
        fx_expr *e = new_expr (p, E_STR, first);
        while (fx_py_peek (p)->kind == TK_STRING)
          {
            const fx_tok *s = fx_py_next (p);
            char *val;
            size_t n;
            const char *err = NULL;
            if (!fx_py_decode_string (&p->lx, s, p->arena, &val, &n, &err))
              {
                fx_buf_free (&buf2);
                return fx_py_error (p, s, "%s", err);
              }
            fx_buf_append (&buf2, val, n);
          }
        e->s = fx_arena_strndup (p->arena, buf2.data ? buf2.data : "", buf2.len);
        e->slen = buf2.len;
        e->tok_last = (uint32_t) (p->pos - 1);
        fx_buf_free (&buf2);
        *out = e;
        return FX_OK;
      }
    case TK_OP:
      if (t->op == OP_ELLIPSIS)
        {
          fx_py_next (p);
          *out = new_expr (p, E_ELLIPSIS, first);
          return FX_OK;
        }
      if (t->op == OP_LPAR || t->op == OP_LSQB)
        {
          bool paren = t->op == OP_LPAR;
          fx_py_next (p);
          expr_vec v = { 0 };
          bool comma;
          st = parse_seq (p, paren ? OP_RPAR : OP_RSQB, &v, &comma);
          if (st != FX_OK)
            return st;
          if (paren && v.n == 1 && !comma && v.items[0]->kind != E_STARRED)
            {
              /* Parenthesized: keep the brackets in the span so source text stays balanced. */
              fx_expr *inner = v.items[0];
              inner->tok_first = (uint32_t) first;
              inner->tok_last = (uint32_t) (p->pos - 1);
              *out = inner;
              return FX_OK;
            }
          *out = seq_expr (p, paren ? E_TUPLE : E_LIST, first, &v);
          return FX_OK;
        }
      if (t->op == OP_LBRACE)
        {
          fx_py_next (p);
          return parse_dict (p, first, out);
        }
      break;
    case TK_EOF: case TK_NEWLINE: case TK_INDENT: case TK_DEDENT: case TK_COMMENT:
    default:
      break;
    }
  return fx_py_error (p, t, "expected an expression, found %s", tok_desc (p, t, buf, sizeof buf));
}

/* [start]:[stop][:[step]] or a plain test inside a subscript. */
static fx_status
parse_subscript_item (fx_pyparser *p, fx_expr **out)
{
  size_t first = p->pos;
  fx_expr *parts[3] = { NULL, NULL, NULL };
  fx_status st;
  const fx_tok *t = fx_py_peek (p);

  if (!fx_py_is_op (t, OP_COLON))
    {
      st = parse_element (p, &parts[0]);
      if (st != FX_OK)
        return st;
      if (!fx_py_is_op (fx_py_peek (p), OP_COLON))
        {
          *out = parts[0];
          return FX_OK;
        }
    }
  for (int k = 1; k < 3; k++)
    {
      if (!fx_py_is_op (fx_py_peek (p), OP_COLON))
        break;
      fx_py_next (p);
      t = fx_py_peek (p);
      if (fx_py_is_op (t, OP_COLON) || fx_py_is_op (t, OP_COMMA) || fx_py_is_op (t, OP_RSQB))
        continue;
      st = fx_py_parse_test (p, &parts[k]);
      if (st != FX_OK)
        return st;
    }
  fx_expr *e = new_expr (p, E_SLICE, first);
  e->items = fx_arena_alloc (p->arena, 3 * sizeof *e->items);
  memcpy (e->items, parts, sizeof parts);
  e->n = 3;
  e->tok_last = (uint32_t) (p->pos > first ? p->pos - 1 : first);
  *out = e;
  return FX_OK;
}

static fx_status
parse_call_args_inner (fx_pyparser *p, fx_expr *call, fx_py_map *seen_map)
{
  expr_vec args = { 0 };
  const char **names = NULL;
  fx_expr **values = NULL;
  size_t n_kw = 0, cap_kw = 0;
  char buf[64];

  while (!fx_py_is_op (fx_py_peek (p), OP_RPAR))
    {
      const fx_tok *t = fx_py_peek (p);
      if (fx_py_is_op (t, OP_DSTAR))
        return fx_py_error (p, t, "'**' arguments are not supported in FX code");
      if (t->kind == TK_NAME && fx_py_is_op (fx_py_peek_at (p, 1), OP_EQUAL))
        {
          if (n_kw == cap_kw)
            {
              size_t cap = cap_kw ? cap_kw * 2 : 4;
              const char **nn = fx_arena_alloc (p->arena, cap * sizeof *nn);
              fx_expr **nv = fx_arena_alloc (p->arena, cap * sizeof *nv);
              if (n_kw)
                {
                  memcpy (nn, names, n_kw * sizeof *nn);
                  memcpy (nv, values, n_kw * sizeof *nv);
                }
              names = nn;
              values = nv;
              cap_kw = cap;
            }
          if (is_keyword (p, t))
            return fx_py_error (p, t, "a keyword cannot be an argument name");
          names[n_kw] = fx_arena_strndup (p->arena, p->lx.text + t->off, t->len);
          /* A linear check for the usual handful; a map beyond, so huge calls stay linear. */
          bool repeated = false;
          if (n_kw < 16)
            {
              for (size_t i = 0; i < n_kw; i++)
                repeated = repeated || strcmp (names[i], names[n_kw]) == 0;
            }
          else
            {
              bool fresh;
              if (n_kw == 16)
                for (size_t i = 0; i < n_kw; i++)
                  fx_py_map_insert (seen_map, names[i], strlen (names[i]), &fresh);
              fx_py_map_insert (seen_map, names[n_kw], t->len, &fresh);
              repeated = !fresh;
            }
          if (repeated)
            return fx_py_error (p, t, "keyword argument '%s' repeated", names[n_kw]);
          fx_py_next (p);
          fx_py_next (p);
          fx_status st = fx_py_parse_test (p, &values[n_kw]);
          if (st != FX_OK)
            return st;
          n_kw++;
        }
      else
        {
          if (n_kw > 0 && !fx_py_is_op (t, OP_STAR))
            return fx_py_error (p, t, "a positional argument follows keyword arguments");
          fx_expr *e;
          fx_status st = parse_element (p, &e);
          if (st != FX_OK)
            return st;
          if (fx_py_is_name (p, fx_py_peek (p), "for"))
            return fx_py_error (p, fx_py_peek (p), "generator expressions are not supported in FX code");
          vec_push (p, &args, e);
        }
      t = fx_py_peek (p);
      if (fx_py_is_op (t, OP_COMMA))
        {
          fx_py_next (p);
          continue;
        }
      if (!fx_py_is_op (t, OP_RPAR))
        return fx_py_error (p, t, "expected ',' or ')' in the call, found %s", tok_desc (p, t, buf, sizeof buf));
    }
  call->tok_last = (uint32_t) p->pos;
  fx_py_next (p);
  call->items = args.items;
  call->n = args.n;
  call->kw_names = names;
  call->kw_values = values;
  call->n_kw = n_kw;
  return FX_OK;
}

static fx_status
parse_call_args (fx_pyparser *p, fx_expr *call)
{
  fx_py_map seen = { 0 };
  fx_status st = parse_call_args_inner (p, call, &seen);
  fx_py_map_free (&seen);
  return st;
}

static fx_status
parse_atom_expr (fx_pyparser *p, fx_expr **out)
{
  size_t first = p->pos;
  fx_expr *e = NULL;
  fx_status st = parse_atom (p, &e);
  if (st != FX_OK)
    return st;
  /* Later passes walk trailer chains recursively (dotted names, module paths): bound them like nesting. */
  for (int trailers = 0;; trailers++)
    {
      const fx_tok *t = fx_py_peek (p);
      if (trailers >= FX_PY_MAX_DEPTH)
        return fx_py_error (p, t, "too many attributes, calls or subscripts in one expression (more than %d)",
                            FX_PY_MAX_DEPTH);
      if (fx_py_is_op (t, OP_DOT))
        {
          fx_py_next (p);
          const fx_tok *n = fx_py_peek (p);
          if (n->kind != TK_NAME)
            {
              char buf[64];
              return fx_py_error (p, n, "expected an attribute name after '.', found %s",
                                  tok_desc (p, n, buf, sizeof buf));
            }
          fx_expr *a = new_expr (p, E_ATTR, first);
          a->a = e;
          a->s = p->lx.text + n->off;
          a->slen = n->len;
          a->tok_last = (uint32_t) p->pos;
          fx_py_next (p);
          e = a;
        }
      else if (fx_py_is_op (t, OP_LPAR))
        {
          if ((st = enter (p)) != FX_OK)
            return st;
          fx_py_next (p);
          fx_expr *c = new_expr (p, E_CALL, first);
          c->a = e;
          st = parse_call_args (p, c);
          p->depth--;
          if (st != FX_OK)
            return st;
          e = c;
        }
      else if (fx_py_is_op (t, OP_LSQB))
        {
          if ((st = enter (p)) != FX_OK)
            return st;
          fx_py_next (p);
          expr_vec v = { 0 };
          bool comma = false;
          while (!fx_py_is_op (fx_py_peek (p), OP_RSQB))
            {
              fx_expr *item;
              st = parse_subscript_item (p, &item);
              if (st != FX_OK)
                return st;
              vec_push (p, &v, item);
              const fx_tok *c = fx_py_peek (p);
              if (fx_py_is_op (c, OP_COMMA))
                {
                  comma = true;
                  fx_py_next (p);
                  continue;
                }
              if (!fx_py_is_op (c, OP_RSQB))
                {
                  char buf[64];
                  return fx_py_error (p, c, "expected ',' or ']' in the subscript, found %s",
                                      tok_desc (p, c, buf, sizeof buf));
                }
            }
          if (v.n == 0)
            return fx_py_error (p, fx_py_peek (p), "empty subscript");
          fx_expr *s = new_expr (p, E_SUBSCRIPT, first);
          s->a = e;
          if (v.n == 1 && !comma)
            s->b = v.items[0];
          else
            {
              fx_expr *tup = new_expr (p, E_TUPLE, v.items[0]->tok_first);
              tup->items = v.items;
              tup->n = v.n;
              tup->tok_last = v.items[v.n - 1]->tok_last;
              s->b = tup;
            }
          s->tok_last = (uint32_t) p->pos;
          fx_py_next (p);
          p->depth--;
          e = s;
        }
      else
        break;
    }
  *out = e;
  return FX_OK;
}

static fx_status
parse_power (fx_pyparser *p, fx_expr **out)
{
  size_t first = p->pos;
  fx_expr *base;
  fx_status st = parse_atom_expr (p, &base);
  if (st != FX_OK)
    return st;
  if (fx_py_is_op (fx_py_peek (p), OP_DSTAR))
    {
      if ((st = enter (p)) != FX_OK)
        return st;
      fx_py_next (p);
      fx_expr *exp;
      if ((st = parse_factor (p, &exp)) != FX_OK)
        return st;
      p->depth--;
      base = binary_expr (p, E_BINOP, first, OP_DSTAR, base, exp);
    }
  *out = base;
  return FX_OK;
}

static fx_status
parse_factor (fx_pyparser *p, fx_expr **out)
{
  const fx_tok *t = fx_py_peek (p);
  if (fx_py_is_op (t, OP_MINUS) || fx_py_is_op (t, OP_PLUS) || fx_py_is_op (t, OP_TILDE))
    {
      size_t first = p->pos;
      fx_status st = enter (p);
      if (st != FX_OK)
        return st;
      fx_py_next (p);
      fx_expr *operand;
      st = parse_factor (p, &operand);
      p->depth--;
      if (st != FX_OK)
        return st;
      fx_expr *e = new_expr (p, E_UNARY, first);
      e->op = t->op;
      e->a = operand;
      e->tok_last = operand->tok_last;
      *out = e;
      return FX_OK;
    }
  return parse_power (p, out);
}

/* Binary levels from tightest to loosest; each is left-associative. */
static const fx_op_kind level_ops[][5] = {
  { OP_STAR, OP_SLASH, OP_DSLASH, OP_PERCENT, OP_AT },
  { OP_PLUS, OP_MINUS },
  { OP_LSHIFT, OP_RSHIFT },
  { OP_AMPER },
  { OP_CIRCUMFLEX },
  { OP_VBAR },
};

static bool
level_has (int level, const fx_tok *t)
{
  if (t->kind != TK_OP)
    return false;
  for (int i = 0; i < 5 && level_ops[level][i] != OP_NONE; i++)
    if (t->op == level_ops[level][i])
      return true;
  return false;
}

static fx_status
parse_level (fx_pyparser *p, int level, fx_expr **out)
{
  size_t first = p->pos;
  fx_expr *left;
  fx_status st = level == 0 ? parse_factor (p, &left) : parse_level (p, level - 1, &left);
  if (st != FX_OK)
    return st;
  while (level_has (level, fx_py_peek (p)))
    {
      int op = fx_py_next (p)->op;
      fx_expr *right;
      st = level == 0 ? parse_factor (p, &right) : parse_level (p, level - 1, &right);
      if (st != FX_OK)
        return st;
      left = binary_expr (p, E_BINOP, first, op, left, right);
    }
  *out = left;
  return FX_OK;
}

static bool
is_compare (const fx_pyparser *p, const fx_tok *t)
{
  if (t->kind == TK_OP)
    switch ((int) t->op)
      {
      case OP_LESS: case OP_GREATER: case OP_EQEQUAL: case OP_NOTEQUAL: case OP_LESSEQUAL: case OP_GREATEREQUAL:
        return true;
      default:
        return false;
      }
  return fx_py_is_name (p, t, "in") || fx_py_is_name (p, t, "is") || fx_py_is_name (p, t, "not");
}

fx_status
fx_py_parse_test (fx_pyparser *p, fx_expr **out)
{
  size_t first = p->pos;
  fx_status st = enter (p);
  if (st != FX_OK)
    return st;
  const fx_tok *t = fx_py_peek (p);
  if (fx_py_is_name (p, t, "lambda") || fx_py_is_name (p, t, "not") || fx_py_is_name (p, t, "await")
      || fx_py_is_name (p, t, "yield"))
    return fx_py_error (p, t, "'%.*s' expressions are not supported in FX code", (int) t->len, p->lx.text + t->off);
  fx_expr *left;
  st = parse_level (p, 5, &left);
  if (st != FX_OK)
    return st;
  t = fx_py_peek (p);
  if (is_compare (p, t))
    {
      if (t->kind != TK_OP)
        return fx_py_error (p, t, "'%.*s' comparisons are not supported in FX code", (int) t->len,
                            p->lx.text + t->off);
      fx_py_next (p);
      fx_expr *right;
      st = parse_level (p, 5, &right);
      if (st != FX_OK)
        return st;
      if (is_compare (p, fx_py_peek (p)))
        return fx_py_error (p, fx_py_peek (p), "chained comparisons are not supported in FX code");
      left = binary_expr (p, E_COMPARE, first, t->op, left, right);
    }
  t = fx_py_peek (p);
  if (fx_py_is_name (p, t, "if") || fx_py_is_name (p, t, "and") || fx_py_is_name (p, t, "or"))
    return fx_py_error (p, t, "'%.*s' expressions are not supported in FX code", (int) t->len, p->lx.text + t->off);
  p->depth--;
  *out = left;
  return FX_OK;
}

fx_status
fx_py_parse_testlist (fx_pyparser *p, fx_expr **out)
{
  size_t first = p->pos;
  fx_expr *e;
  fx_status st = parse_element (p, &e);
  if (st != FX_OK)
    return st;
  if (!fx_py_is_op (fx_py_peek (p), OP_COMMA))
    {
      *out = e;
      return FX_OK;
    }
  expr_vec v = { 0 };
  vec_push (p, &v, e);
  while (fx_py_is_op (fx_py_peek (p), OP_COMMA))
    {
      fx_py_next (p);
      const fx_tok *t = fx_py_peek (p);
      if (t->kind == TK_NEWLINE || t->kind == TK_COMMENT || t->kind == TK_EOF || fx_py_is_op (t, OP_EQUAL)
          || fx_py_is_op (t, OP_SEMI))
        break;
      if ((st = parse_element (p, &e)) != FX_OK)
        return st;
      vec_push (p, &v, e);
    }
  *out = seq_expr (p, E_TUPLE, first, &v);
  return FX_OK;
}
