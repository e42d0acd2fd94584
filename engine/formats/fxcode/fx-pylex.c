/* fx-pylex.c: a Python tokenizer for FX code: indentation, brackets, numbers, every string form, comments. */
#include "fx-pyparse-impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  fx_lexed *lx;
  const char *s;
  size_t n;
  size_t p;
  uint32_t line;
  size_t line_start;       /* offset of the current line's first byte */
  int indents[FX_PY_MAX_INDENT + 1];
  int n_indents;
  struct
  {
    uint8_t op;
    uint32_t off, line, col;
  } brackets[FX_PY_MAX_DEPTH];
  int n_brackets;
  fx_diag *diag;
} lexer;

static const char *const op_texts[OP_COUNT] = {
  [OP_NONE] = "", [OP_LPAR] = "(", [OP_RPAR] = ")", [OP_LSQB] = "[", [OP_RSQB] = "]", [OP_LBRACE] = "{",
  [OP_RBRACE] = "}", [OP_COMMA] = ",", [OP_COLON] = ":", [OP_DOT] = ".", [OP_SEMI] = ";", [OP_AT] = "@",
  [OP_EQUAL] = "=", [OP_ARROW] = "->", [OP_ELLIPSIS] = "...", [OP_WALRUS] = ":=", [OP_PLUS] = "+",
  [OP_MINUS] = "-", [OP_STAR] = "*", [OP_SLASH] = "/", [OP_PERCENT] = "%", [OP_AMPER] = "&", [OP_VBAR] = "|",
  [OP_CIRCUMFLEX] = "^", [OP_TILDE] = "~", [OP_LESS] = "<", [OP_GREATER] = ">", [OP_DSTAR] = "**",
  [OP_DSLASH] = "//", [OP_LSHIFT] = "<<", [OP_RSHIFT] = ">>", [OP_EQEQUAL] = "==", [OP_NOTEQUAL] = "!=",
  [OP_LESSEQUAL] = "<=", [OP_GREATEREQUAL] = ">=", [OP_PLUSEQ] = "+=", [OP_MINUSEQ] = "-=", [OP_STAREQ] = "*=",
  [OP_SLASHEQ] = "/=", [OP_DSLASHEQ] = "//=", [OP_PERCENTEQ] = "%=", [OP_DSTAREQ] = "**=", [OP_ATEQ] = "@=",
  [OP_AMPEREQ] = "&=", [OP_VBAREQ] = "|=", [OP_CIRCUMFLEXEQ] = "^=", [OP_LSHIFTEQ] = "<<=", [OP_RSHIFTEQ] = ">>=",
};

const char *
fx_py_op_text (fx_op_kind op)
{
  return (unsigned) op < OP_COUNT ? op_texts[op] : "?";
}

static void
locate_at (const char *text, size_t len, const char *filename, uint32_t line, size_t line_start, uint32_t col,
           fx_diag *diag)
{
  size_t e = line_start;
  while (e < len && text[e] != '\n' && text[e] != '\r')
    e++;
  fx_diag_locate (diag, filename, (int) line, (int) col, text + line_start, e - line_start);
}

void
fx_py_locate (const fx_lexed *lx, const fx_tok *tok, fx_diag *diag)
{
  size_t off = tok->off <= lx->len ? tok->off : lx->len;
  size_t start = off;
  /* A token's column is counted from its line's start, which may be earlier than the token in a multi-line string. */
  start = off >= (size_t) (tok->col - 1) ? off - (tok->col - 1) : 0;
  locate_at (lx->text, lx->len, lx->filename, tok->line, start, tok->col, diag);
}

static fx_status lex_error (lexer *L, size_t off, const char *fmt, ...) FX_PRINTF (3, 4);

static fx_status
lex_error (lexer *L, size_t off, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fx_diag_setv (L->diag, FX_ERR_PARSE, fmt, ap);
  va_end (ap);
  locate_at (L->s, L->n, L->lx->filename, L->line, L->line_start, (uint32_t) (off - L->line_start + 1), L->diag);
  return FX_ERR_PARSE;
}

/* Appends a token at OFF..OFF+LEN of the current line to a growing array (the tokens or the bracket
   comments). */
static fx_tok *
push_to (lexer *L, fx_tok **toks, size_t *n, size_t *cap, size_t first_cap, fx_tok_kind kind, size_t off,
         size_t len)
{
  if (*n == *cap)
    {
      size_t grown = *cap ? *cap * 2 : first_cap;
      fx_tok *t = realloc (*toks, grown * sizeof *t);
      if (t == NULL)
        abort ();
      *toks = t;
      *cap = grown;
    }
  fx_tok *t = &(*toks)[(*n)++];
  t->kind = (uint8_t) kind;
  t->op = OP_NONE;
  t->off = (uint32_t) off;
  t->len = (uint32_t) len;
  t->line = L->line;
  t->col = (uint32_t) (off >= L->line_start ? off - L->line_start + 1 : 1);
  return t;
}

static fx_tok *
push (lexer *L, fx_tok_kind kind, size_t off, size_t len)
{
  fx_lexed *lx = L->lx;
  return push_to (L, &lx->toks, &lx->n_toks, &lx->cap, 1024, kind, off, len);
}

static void
push_bracket_comment (lexer *L, size_t off, size_t len)
{
  fx_lexed *lx = L->lx;
  push_to (L, &lx->bcomments, &lx->n_bcomments, &lx->cap_bcomments, 64, TK_COMMENT, off, len);
}

static bool
comment_before_line (const void *line, const void *comment)
{
  return ((const fx_tok *) comment)->line < *(const uint32_t *) line;
}

const fx_tok *
fx_py_bracket_comment (const fx_lexed *lx, uint32_t line, uint32_t after)
{
  size_t lo = fx_lower_bound (&line, lx->bcomments, lx->n_bcomments, sizeof *lx->bcomments, comment_before_line);
  if (lo < lx->n_bcomments && lx->bcomments[lo].line == line && lx->bcomments[lo].off > after)
    return &lx->bcomments[lo];
  return NULL;
}

static bool
is_id_start (unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
is_id_char (unsigned char c)
{
  return is_id_start (c) || (c >= '0' && c <= '9');
}

static bool
is_digit (unsigned char c)
{
  return c >= '0' && c <= '9';
}

static const char *const keywords[] = {
  "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else", "except",
  "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass",
  "raise", "return", "try", "while", "with", "yield",
};

static uint8_t
is_keyword (const char *s, size_t n)
{
  if (n < 2 || n > 8 || s[0] < 'a' || s[0] > 'y')
    return 0;
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (keywords[i][0] == s[0] && strlen (keywords[i]) == n && memcmp (keywords[i], s, n) == 0)
      return 1;
  return 0;
}

/* Consumes a line break at L->p ("\n", "\r\n" or "\r") and starts the next line. */
static void
newline (lexer *L)
{
  if (L->s[L->p] == '\r' && L->p + 1 < L->n && L->s[L->p + 1] == '\n')
    L->p++;
  L->p++;
  L->line++;
  L->line_start = L->p;
}

static bool
at_newline (const lexer *L)
{
  return L->p < L->n && (L->s[L->p] == '\n' || L->s[L->p] == '\r');
}

static fx_status
lex_string (lexer *L, size_t start)
{
  const char *s = L->s;
  char q = s[L->p];
  bool triple = L->p + 2 < L->n && s[L->p + 1] == q && s[L->p + 2] == q;
  uint32_t line0 = L->line;
  size_t line_start0 = L->line_start;

  L->p += triple ? 3 : 1;
  for (;;)
    {
      if (L->p >= L->n)
        {
          L->line = line0;
          L->line_start = line_start0;
          return lex_error (L, start, triple ? "unterminated triple-quoted string literal"
                                             : "unterminated string literal");
        }
      char c = s[L->p];
      if (c == '\\')
        {
          L->p++;
          if (L->p < L->n && (s[L->p] == '\n' || s[L->p] == '\r'))
            newline (L);
          else if (L->p < L->n)
            L->p++;
          continue;
        }
      if (c == '\n' || c == '\r')
        {
          if (!triple)
            {
              L->line = line0;
              L->line_start = line_start0;
              return lex_error (L, start, "unterminated string literal (the line ends before the closing quote)");
            }
          newline (L);
          continue;
        }
      if (c == '\0')
        return lex_error (L, L->p, "NUL byte inside a string literal");
      if (c == q)
        {
          if (!triple)
            {
              L->p++;
              break;
            }
          if (L->p + 2 < L->n && s[L->p + 1] == q && s[L->p + 2] == q)
            {
              L->p += 3;
              break;
            }
        }
      L->p++;
    }
  /* The token keeps the line and column of its start. */
  uint32_t line_end = L->line;
  size_t ls_end = L->line_start;
  L->line = line0;
  L->line_start = line_start0;
  push (L, TK_STRING, start, L->p - start);
  L->line = line_end;
  L->line_start = ls_end;
  return FX_OK;
}

static fx_status
lex_number (lexer *L)
{
  const char *s = L->s;
  size_t start = L->p;
  bool is_float = false;

  if (s[L->p] == '0' && L->p + 1 < L->n && strchr ("xXoObB", s[L->p + 1]) != NULL)
    {
      char kind = (char) (s[L->p + 1] | 0x20);
      L->p += 2;
      size_t digits = L->p;
      while (L->p < L->n && (is_id_char ((unsigned char) s[L->p])))
        {
          unsigned char c = (unsigned char) s[L->p];
          bool ok = c == '_' || (kind == 'x' ? (is_digit (c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'))
                                 : kind == 'o' ? (c >= '0' && c <= '7') : (c == '0' || c == '1'));
          if (!ok)
            return lex_error (L, L->p, "invalid digit '%c' in %s literal", c,
                              kind == 'x' ? "hexadecimal" : kind == 'o' ? "octal" : "binary");
          L->p++;
        }
      if (L->p == digits)
        return lex_error (L, start, "invalid number literal");
      push (L, TK_INT, start, L->p - start);
      return FX_OK;
    }
  while (L->p < L->n && (is_digit ((unsigned char) s[L->p]) || s[L->p] == '_'))
    L->p++;
  if (L->p < L->n && s[L->p] == '.')
    {
      is_float = true;
      L->p++;
      while (L->p < L->n && (is_digit ((unsigned char) s[L->p]) || s[L->p] == '_'))
        L->p++;
    }
  if (L->p < L->n && (s[L->p] == 'e' || s[L->p] == 'E'))
    {
      size_t e = L->p + 1;
      if (e < L->n && (s[e] == '+' || s[e] == '-'))
        e++;
      if (e < L->n && is_digit ((unsigned char) s[e]))
        {
          is_float = true;
          L->p = e;
          while (L->p < L->n && (is_digit ((unsigned char) s[L->p]) || s[L->p] == '_'))
            L->p++;
        }
      else
        return lex_error (L, L->p, "invalid exponent in number literal");
    }
  if (L->p < L->n && (s[L->p] == 'j' || s[L->p] == 'J'))
    return lex_error (L, start, "complex literals are not supported");
  if (L->p < L->n && is_id_char ((unsigned char) s[L->p]))
    return lex_error (L, L->p, "invalid character '%c' in number literal", s[L->p]);
  push (L, is_float ? TK_FLOAT : TK_INT, start, L->p - start);
  return FX_OK;
}

/* One operator token; the longest match wins, as in Python. */
static fx_status
lex_op (lexer *L)
{
  const char *s = L->s + L->p;
  size_t left = L->n - L->p;
  char c1 = left > 1 ? s[1] : '\0';
  char c2 = left > 2 ? s[2] : '\0';
  fx_op_kind op = OP_NONE;
  size_t len = 1;

#define TWO(second, two_op, one_op) \
  (c1 == (second) ? (len = 2, (two_op)) : (one_op))
  switch (s[0])
    {
    case '(': op = OP_LPAR; break;
    case ')': op = OP_RPAR; break;
    case '[': op = OP_LSQB; break;
    case ']': op = OP_RSQB; break;
    case '{': op = OP_LBRACE; break;
    case '}': op = OP_RBRACE; break;
    case ',': op = OP_COMMA; break;
    case ';': op = OP_SEMI; break;
    case '~': op = OP_TILDE; break;
    case ':': op = TWO ('=', OP_WALRUS, OP_COLON); break;
    case '.':
      if (c1 == '.' && c2 == '.')
        op = OP_ELLIPSIS, len = 3;
      else
        op = OP_DOT;
      break;
    case '@': op = TWO ('=', OP_ATEQ, OP_AT); break;
    case '=': op = TWO ('=', OP_EQEQUAL, OP_EQUAL); break;
    case '+': op = TWO ('=', OP_PLUSEQ, OP_PLUS); break;
    case '%': op = TWO ('=', OP_PERCENTEQ, OP_PERCENT); break;
    case '&': op = TWO ('=', OP_AMPEREQ, OP_AMPER); break;
    case '|': op = TWO ('=', OP_VBAREQ, OP_VBAR); break;
    case '^': op = TWO ('=', OP_CIRCUMFLEXEQ, OP_CIRCUMFLEX); break;
    case '-':
      op = c1 == '>' ? (len = 2, OP_ARROW) : TWO ('=', OP_MINUSEQ, OP_MINUS);
      break;
    case '!':
      if (c1 == '=')
        op = OP_NOTEQUAL, len = 2;
      break;
    case '*': case '/': case '<': case '>':
      {
        /* x, x=, xx and xx= */
        static const struct
        {
          char c;
          fx_op_kind one, one_eq, two, two_eq;
        } doubled[] = {
          { '*', OP_STAR, OP_STAREQ, OP_DSTAR, OP_DSTAREQ },
          { '/', OP_SLASH, OP_SLASHEQ, OP_DSLASH, OP_DSLASHEQ },
          { '<', OP_LESS, OP_LESSEQUAL, OP_LSHIFT, OP_LSHIFTEQ },
          { '>', OP_GREATER, OP_GREATEREQUAL, OP_RSHIFT, OP_RSHIFTEQ },
        };
        size_t k = 0;
        while (doubled[k].c != s[0])
          k++;
        if (c1 == s[0])
          op = c2 == '=' ? (len = 3, doubled[k].two_eq) : (len = 2, doubled[k].two);
        else
          op = TWO ('=', doubled[k].one_eq, doubled[k].one);
        break;
      }
    default:
      break;
    }
#undef TWO
  if (op == OP_NONE)
    {
      unsigned char c = (unsigned char) s[0];
      if (c >= 0x20 && c < 0x7f)
        return lex_error (L, L->p, "invalid character '%c'", c);
      return lex_error (L, L->p, "invalid character (byte 0x%02x)", c);
    }

  if (op == OP_LPAR || op == OP_LSQB || op == OP_LBRACE)
    {
      if (L->n_brackets >= FX_PY_MAX_DEPTH)
        return lex_error (L, L->p, "brackets nested too deeply (more than %d levels)", FX_PY_MAX_DEPTH);
      L->brackets[L->n_brackets].op = (uint8_t) op;
      L->brackets[L->n_brackets].off = (uint32_t) L->p;
      L->brackets[L->n_brackets].line = L->line;
      L->brackets[L->n_brackets].col = (uint32_t) (L->p - L->line_start + 1);
      L->n_brackets++;
    }
  else if (op == OP_RPAR || op == OP_RSQB || op == OP_RBRACE)
    {
      fx_op_kind want = op == OP_RPAR ? OP_LPAR : op == OP_RSQB ? OP_LSQB : OP_LBRACE;
      if (L->n_brackets == 0)
        return lex_error (L, L->p, "unmatched '%s'", op_texts[op]);
      if (L->brackets[L->n_brackets - 1].op != want)
        {
          fx_op_kind open = L->brackets[L->n_brackets - 1].op;
          fx_op_kind close = open == OP_LPAR ? OP_RPAR : open == OP_LSQB ? OP_RSQB : OP_RBRACE;
          return lex_error (L, L->p, "closing '%s' does not match '%s' opened on line %u (expected '%s')",
                            op_texts[op], op_texts[open], L->brackets[L->n_brackets - 1].line, op_texts[close]);
        }
      L->n_brackets--;
    }
  fx_tok *t = push (L, TK_OP, L->p, len);
  t->op = (uint8_t) op;
  L->p += len;
  return FX_OK;
}

/* Handles the start of a logical line: indentation, blank lines and comment-only lines. Returns with L->p at
   the line's first token, or at the end of the input. */
static fx_status
lex_line_start (lexer *L)
{
  for (;;)
    {
      int col = 0;
      while (L->p < L->n)
        {
          char c = L->s[L->p];
          if (c == ' ')
            col++;
          else if (c == '\t')
            col = (col / 8 + 1) * 8;
          else if (c == '\f')
            col = 0;
          else
            break;
          L->p++;
          if (col > 100000)
            return lex_error (L, L->p, "indentation too deep");
        }
      if (L->p >= L->n)
        return FX_OK;
      if (at_newline (L))
        {
          newline (L);
          continue;
        }
      if (L->s[L->p] == '#')
        {
          size_t start = L->p;
          while (L->p < L->n && !at_newline (L))
            L->p++;
          push (L, TK_COMMENT, start, L->p - start);
          continue;
        }
      if (L->s[L->p] == '\\' && L->p + 1 < L->n && (L->s[L->p + 1] == '\n' || L->s[L->p + 1] == '\r'))
        return lex_error (L, L->p, "a line continuation cannot start a line");

      int top = L->indents[L->n_indents - 1];
      if (col > top)
        {
          if (L->n_indents > FX_PY_MAX_INDENT)
            return lex_error (L, L->p, "too many indentation levels (more than %d)", FX_PY_MAX_INDENT);
          L->indents[L->n_indents++] = col;
          push (L, TK_INDENT, L->p, 0);
        }
      else if (col < top)
        {
          while (L->n_indents > 1 && col < L->indents[L->n_indents - 1])
            {
              L->n_indents--;
              push (L, TK_DEDENT, L->p, 0);
            }
          if (col != L->indents[L->n_indents - 1])
            return lex_error (L, L->p, "unindent does not match any outer indentation level");
        }
      return FX_OK;
    }
}

fx_status
fx_py_tokenize (fx_lexed *lx, const char *text, size_t len, const char *filename, fx_diag *diag)
{
  lexer L;
  memset (&L, 0, sizeof L);
  memset (lx, 0, sizeof *lx);
  lx->text = text;
  lx->len = len;
  lx->filename = filename ? filename : "<string>";
  L.lx = lx;
  L.s = text;
  L.n = len;
  L.line = 1;
  L.indents[0] = 0;
  L.n_indents = 1;
  L.diag = diag;

  if (len >= UINT32_MAX)
    {
      fx_diag_set (diag, FX_ERR_PARSE, "input too large (%zu bytes)", len);
      fx_diag_locate (diag, lx->filename, 0, 0, NULL, 0);
      return FX_ERR_PARSE;
    }
  /* A UTF-8 byte order mark is not part of the code. */
  if (len >= 3 && memcmp (text, "\xef\xbb\xbf", 3) == 0)
    L.p = L.line_start = 3;

  fx_status st = lex_line_start (&L);
  if (st != FX_OK)
    return st;
  while (L.p < L.n)
    {
      unsigned char c = (unsigned char) L.s[L.p];
      if (c == ' ' || c == '\t' || c == '\f')
        {
          L.p++;
          continue;
        }
      if (c == '\n' || c == '\r')
        {
          bool logical = L.n_brackets == 0;
          if (logical)
            push (&L, TK_NEWLINE, L.p, 0);
          newline (&L);
          if (logical)
            {
              st = lex_line_start (&L);
              if (st != FX_OK)
                return st;
            }
          continue;
        }
      if (c == '\\')
        {
          if (L.p + 1 < L.n && (L.s[L.p + 1] == '\n' || L.s[L.p + 1] == '\r'))
            {
              L.p++;
              newline (&L);
              continue;
            }
          if (L.p + 1 >= L.n)
            return lex_error (&L, L.p, "unexpected end of file after a line continuation");
          return lex_error (&L, L.p, "unexpected character after a line continuation");
        }
      if (c == '#')
        {
          size_t start = L.p;
          while (L.p < L.n && !at_newline (&L))
            L.p++;
          if (L.n_brackets == 0)
            push (&L, TK_COMMENT, start, L.p - start);
          else
            push_bracket_comment (&L, start, L.p - start);
          continue;
        }
      if (is_id_start (c))
        {
          size_t start = L.p;
          while (L.p < L.n && is_id_char ((unsigned char) L.s[L.p]))
            L.p++;
          size_t n = L.p - start;
          /* String prefixes: r, b, u, f and their two-letter combinations. */
          if (n <= 2 && L.p < L.n && (L.s[L.p] == '\'' || L.s[L.p] == '"'))
            {
              bool prefix = true;
              for (size_t i = 0; i < n; i++)
                if (strchr ("rRbBuUfF", L.s[start + i]) == NULL)
                  prefix = false;
              if (prefix)
                {
                  st = lex_string (&L, start);
                  if (st != FX_OK)
                    return st;
                  continue;
                }
            }
          if (L.p < L.n && (unsigned char) L.s[L.p] >= 0x80)
            return lex_error (&L, L.p, "non-ASCII identifiers are not supported");
          fx_tok *nt = push (&L, TK_NAME, start, n);
          nt->op = is_keyword (L.s + start, n);
          continue;
        }
      if (is_digit (c) || (c == '.' && L.p + 1 < L.n && is_digit ((unsigned char) L.s[L.p + 1])))
        {
          st = lex_number (&L);
          if (st != FX_OK)
            return st;
          continue;
        }
      if (c == '\'' || c == '"')
        {
          st = lex_string (&L, L.p);
          if (st != FX_OK)
            return st;
          continue;
        }
      if (c >= 0x80)
        return lex_error (&L, L.p, "non-ASCII character outside a string or comment (byte 0x%02x)", c);
      st = lex_op (&L);
      if (st != FX_OK)
        return st;
    }

  if (L.n_brackets > 0)
    {
      /* Point at the bracket that was never closed. */
      L.line = L.brackets[L.n_brackets - 1].line;
      L.line_start = L.brackets[L.n_brackets - 1].off - (L.brackets[L.n_brackets - 1].col - 1);
      return lex_error (&L, L.brackets[L.n_brackets - 1].off, "'%s' was never closed",
                        op_texts[L.brackets[L.n_brackets - 1].op]);
    }
  if (lx->n_toks > 0)
    {
      fx_tok_kind last = lx->toks[lx->n_toks - 1].kind;
      if (last != TK_NEWLINE && last != TK_INDENT && last != TK_DEDENT)
        {
          /* A trailing comment ends the last line too; its NEWLINE goes after it. */
          push (&L, TK_NEWLINE, L.p, 0);
        }
    }
  while (L.n_indents > 1)
    {
      L.n_indents--;
      push (&L, TK_DEDENT, L.p, 0);
    }
  push (&L, TK_EOF, L.p, 0);
  return FX_OK;
}

void
fx_py_lexed_free (fx_lexed *lx)
{
  free (lx->toks);
  free (lx->bcomments);
  lx->toks = NULL;
  lx->bcomments = NULL;
  lx->n_toks = lx->cap = 0;
  lx->n_bcomments = lx->cap_bcomments = 0;
}

/* ---------------------------------------------------------------- string literals */

static void
put_utf8 (char *out, size_t *n, uint32_t cp)
{
  if (cp < 0x80)
    out[(*n)++] = (char) cp;
  else if (cp < 0x800)
    {
      out[(*n)++] = (char) (0xc0 | (cp >> 6));
      out[(*n)++] = (char) (0x80 | (cp & 0x3f));
    }
  else if (cp < 0x10000)
    {
      out[(*n)++] = (char) (0xe0 | (cp >> 12));
      out[(*n)++] = (char) (0x80 | ((cp >> 6) & 0x3f));
      out[(*n)++] = (char) (0x80 | (cp & 0x3f));
    }
  else
    {
      out[(*n)++] = (char) (0xf0 | (cp >> 18));
      out[(*n)++] = (char) (0x80 | ((cp >> 12) & 0x3f));
      out[(*n)++] = (char) (0x80 | ((cp >> 6) & 0x3f));
      out[(*n)++] = (char) (0x80 | (cp & 0x3f));
    }
}

static int
hexval (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  c = (char) (c | 0x20);
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

bool
fx_py_decode_string (const fx_lexed *lx, const fx_tok *tok, fx_arena *arena, char **out, size_t *out_len,
                     const char **err)
{
  const char *s = lx->text + tok->off;
  size_t n = tok->len;
  size_t i = 0;
  bool raw = false, bytes = false;

  while (i < n && s[i] != '\'' && s[i] != '"')
    {
      char c = (char) (s[i] | 0x20);
      if (c == 'r')
        raw = true;
      else if (c == 'b')
        bytes = true;
      else if (c == 'f')
        {
          *err = "f-strings are not supported";
          return false;
        }
      i++;
    }
  char q = s[i];
  size_t qlen = (i + 2 < n && s[i + 1] == q && s[i + 2] == q && n - i >= 6) ? 3 : 1;
  size_t body = i + qlen, end = n - qlen;
  /* Escapes never grow the text beyond 4 bytes per source byte. */
  char *buf = fx_arena_alloc (arena, (end - body) * 4 + 1);
  size_t o = 0;

  for (size_t k = body; k < end;)
    {
      char c = s[k];
      if (c == '\r')
        {
          /* Python normalizes line endings inside literals. */
          buf[o++] = '\n';
          k += (k + 1 < end && s[k + 1] == '\n') ? 2 : 1;
          continue;
        }
      if (c != '\\' || raw)
        {
          if (c == '\\' && raw && k + 1 < end)
            {
              buf[o++] = c;
              buf[o++] = s[k + 1];
              k += 2;
              continue;
            }
          buf[o++] = c;
          k++;
          continue;
        }
      k++;
      if (k >= end)
        {
          *err = "a string literal ends in a backslash";
          return false;
        }
      char e = s[k++];
      switch (e)
        {
        case '\n': break;
        case '\r':
          if (k < end && s[k] == '\n')
            k++;
          break;
        case '\\': buf[o++] = '\\'; break;
        case '\'': buf[o++] = '\''; break;
        case '"': buf[o++] = '"'; break;
        case 'a': buf[o++] = '\a'; break;
        case 'b': buf[o++] = '\b'; break;
        case 'f': buf[o++] = '\f'; break;
        case 'n': buf[o++] = '\n'; break;
        case 'r': buf[o++] = '\r'; break;
        case 't': buf[o++] = '\t'; break;
        case 'v': buf[o++] = '\v'; break;
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
          {
            uint32_t v = (uint32_t) (e - '0');
            for (int d = 0; d < 2 && k < end && s[k] >= '0' && s[k] <= '7'; d++)
              v = v * 8 + (uint32_t) (s[k++] - '0');
            if (bytes)
              buf[o++] = (char) (v & 0xff);
            else
              put_utf8 (buf, &o, v);
            break;
          }
        case 'x': case 'u': case 'U':
          {
            int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            uint32_t v = 0;
            if (bytes && e != 'x')
              {
                buf[o++] = '\\';
                buf[o++] = e;
                break;
              }
            for (int d = 0; d < digits; d++)
              {
                int h = k < end ? hexval (s[k]) : -1;
                if (h < 0)
                  {
                    *err = e == 'x' ? "truncated \\xXX escape" : e == 'u' ? "truncated \\uXXXX escape"
                                                                            : "truncated \\UXXXXXXXX escape";
                    return false;
                  }
                v = v * 16 + (uint32_t) h;
                k++;
              }
            if (v > 0x10ffff)
              {
                *err = "illegal Unicode character in \\U escape";
                return false;
              }
            if (bytes)
              buf[o++] = (char) v;
            else
              put_utf8 (buf, &o, v);
            break;
          }
        case 'N':
          *err = "\\N{...} escapes are not supported";
          return false;
        default:
          /* Python keeps unknown escapes as written. */
          buf[o++] = '\\';
          buf[o++] = e;
          break;
        }
    }
  buf[o] = '\0';
  *out = buf;
  *out_len = o;
  return true;
}
