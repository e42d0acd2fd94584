/* fx-pyparse-impl.h: internals shared by the FX Python code tokenizer, parser and repro.py reader. */
#pragma once

#include "fx/pyparse.h"

#include <stdint.h>

/* Limits that keep hostile input from exhausting the stack or memory. */
enum
{
  FX_PY_MAX_DEPTH = 200,        /* bracket and expression nesting */
  FX_PY_MAX_INDENT = 100,       /* indentation levels */
  FX_PY_MAX_GRAPHS = 10000,     /* graphs (child graph modules included) in one file: each owns an arena */
};

typedef enum
{
  TK_EOF,
  TK_NAME,
  TK_INT,
  TK_FLOAT,
  TK_STRING,
  TK_OP,
  TK_NEWLINE,
  TK_INDENT,
  TK_DEDENT,
  TK_COMMENT,          /* text starts at '#'; only at statement level (comments inside brackets are dropped) */
} fx_tok_kind;

typedef enum
{
  OP_NONE,
  OP_LPAR, OP_RPAR, OP_LSQB, OP_RSQB, OP_LBRACE, OP_RBRACE,
  OP_COMMA, OP_COLON, OP_DOT, OP_SEMI, OP_AT, OP_EQUAL, OP_ARROW, OP_ELLIPSIS, OP_WALRUS,
  OP_PLUS, OP_MINUS, OP_STAR, OP_SLASH, OP_PERCENT, OP_AMPER, OP_VBAR, OP_CIRCUMFLEX, OP_TILDE,
  OP_LESS, OP_GREATER, OP_DSTAR, OP_DSLASH, OP_LSHIFT, OP_RSHIFT,
  OP_EQEQUAL, OP_NOTEQUAL, OP_LESSEQUAL, OP_GREATEREQUAL,
  OP_PLUSEQ, OP_MINUSEQ, OP_STAREQ, OP_SLASHEQ, OP_DSLASHEQ, OP_PERCENTEQ, OP_DSTAREQ, OP_ATEQ,
  OP_AMPEREQ, OP_VBAREQ, OP_CIRCUMFLEXEQ, OP_LSHIFTEQ, OP_RSHIFTEQ,
  OP_COUNT
} fx_op_kind;

typedef struct
{
  uint8_t kind;        /* fx_tok_kind */
  uint8_t op;          /* fx_op_kind for TK_OP; for TK_NAME, 1 when the name is a Python keyword */
  uint32_t off;        /* byte offset of the first character */
  uint32_t len;
  uint32_t line;       /* 1-based */
  uint32_t col;        /* 1-based, in bytes */
} fx_tok;

typedef struct
{
  const char *text;
  size_t len;
  const char *filename;
  fx_tok *toks;
  size_t n_toks;
  size_t cap;
  fx_tok *bcomments;     /* comments inside brackets (expanded_def descriptors), in source order */
  size_t n_bcomments;
  size_t cap_bcomments;
} fx_lexed;

/* Tokenizes text as Python does (INDENT/DEDENT, implicit line joining, all string forms).
   On error fills diag (located) and returns FX_ERR_PARSE. */
fx_status fx_py_tokenize (fx_lexed *lx, const char *text, size_t len, const char *filename, fx_diag *diag);
void fx_py_lexed_free (fx_lexed *lx);
/* Locates diag at the token (file:line:col and the line's text). */
void fx_py_locate (const fx_lexed *lx, const fx_tok *tok, fx_diag *diag);
/* Decodes a string token (prefixes, quotes, escapes) into a NUL-terminated UTF-8 string from arena.
   Returns false (with *err set) on a bad escape. */
bool fx_py_decode_string (const fx_lexed *lx, const fx_tok *tok, fx_arena *arena, char **out, size_t *out_len,
                          const char **err);
const char *fx_py_op_text (fx_op_kind op);
/* The comment inside brackets on the given line after offset `after` (expanded_def's `# PlainAOTInput(idx=0)`),
   or NULL. */
const fx_tok *fx_py_bracket_comment (const fx_lexed *lx, uint32_t line, uint32_t after);

/* ---------------------------------------------------------------- expressions */

typedef enum
{
  E_NAME,
  E_INT,
  E_BIGINT,            /* an int literal that does not fit int64: kept as text */
  E_FLOAT,
  E_STR,
  E_ELLIPSIS,
  E_ATTR,              /* a.name */
  E_CALL,              /* a(items..., kw=...) */
  E_SUBSCRIPT,         /* a[b] */
  E_BINOP,             /* a op b */
  E_UNARY,             /* op a */
  E_COMPARE,           /* a op b (one comparison) */
  E_TUPLE,
  E_LIST,
  E_DICT,              /* items: key0, value0, key1, value1, ... */
  E_SLICE,             /* items: start, stop, step (NULL where absent) */
  E_STARRED,
} fx_expr_kind;

typedef struct fx_expr fx_expr;
struct fx_expr
{
  fx_expr_kind kind;
  uint32_t tok_first;  /* token span, for locations and source text */
  uint32_t tok_last;
  int op;              /* fx_op_kind for BINOP/UNARY/COMPARE */
  const char *s;       /* NAME/ATTR name, STR value, BIGINT text */
  size_t slen;
  int64_t i;
  double f;
  fx_expr *a;          /* ATTR/CALL/SUBSCRIPT base, BINOP/UNARY/COMPARE left operand */
  fx_expr *b;          /* SUBSCRIPT index, BINOP/COMPARE right operand */
  fx_expr **items;     /* TUPLE/LIST/DICT/SLICE items, CALL positional args */
  size_t n;
  const char **kw_names; /* CALL keyword names */
  fx_expr **kw_values;
  size_t n_kw;
};

/* Whether e is the bare name NAME. */
static inline bool
fx_expr_is_name (const fx_expr *e, const char *name)
{
  size_t n = __builtin_strlen (name);
  return e->kind == E_NAME && e->slen == n && __builtin_memcmp (e->s, name, n) == 0;
}

/* ---------------------------------------------------------------- parser state */

typedef struct fx_env fx_env;

typedef struct
{
  fx_lexed lx;
  size_t pos;          /* current token */
  fx_arena *arena;     /* scratch memory for the parse (ASTs, tables) */
  fx_diag *diag;
  int depth;
  fx_graph *root;      /* the graph the file describes */
  bool have_graph;
  /* input specs (from load_args) collected in the scratch arena; attached to the final graph at the end */
  fx_input_spec *inputs;
  size_t n_inputs, cap_inputs;
  bool inputs_unnamed;   /* from an `args = [...]` list: named after the placeholders at the end */
  size_t n_graphs;       /* classes parsed so far, for FX_PY_MAX_GRAPHS */
} fx_pyparser;

/* Module attributes of one class, allocated in that class's graph arena (attaching one by one is quadratic). */
typedef struct
{
  fx_attr *items;
  size_t n, cap;
} fx_attr_vec;

static inline const fx_tok *
fx_py_peek (const fx_pyparser *p)
{
  return &p->lx.toks[p->pos];
}

static inline const fx_tok *
fx_py_peek_at (const fx_pyparser *p, size_t ahead)
{
  size_t i = p->pos + ahead;
  return &p->lx.toks[i < p->lx.n_toks ? i : p->lx.n_toks - 1];
}

static inline const fx_tok *
fx_py_next (fx_pyparser *p)
{
  const fx_tok *t = &p->lx.toks[p->pos];
  if (t->kind != TK_EOF)
    p->pos++;
  return t;
}

static inline bool
fx_py_is_op (const fx_tok *t, fx_op_kind op)
{
  return t->kind == TK_OP && t->op == op;
}

/* Inline so that strlen of a literal folds: this runs for nearly every token. */
static inline bool
fx_py_is_name (const fx_pyparser *p, const fx_tok *t, const char *name)
{
  size_t n = __builtin_strlen (name);
  return t->kind == TK_NAME && t->len == n && p->lx.text[t->off] == name[0]
         && __builtin_memcmp (p->lx.text + t->off, name, n) == 0;
}
/* Sets a located FX_ERR_PARSE at tok; returns FX_ERR_PARSE. */
fx_status fx_py_error (fx_pyparser *p, const fx_tok *tok, const char *fmt, ...) FX_PRINTF (3, 4);
fx_status fx_py_expect_op (fx_pyparser *p, fx_op_kind op, const char *what);
/* Expression parsers (Python's grammar, the subset PyTorch writes). */
fx_status fx_py_parse_test (fx_pyparser *p, fx_expr **out);
/* A comma-separated list: a tuple when there is a comma (return a, b). */
fx_status fx_py_parse_testlist (fx_pyparser *p, fx_expr **out);
/* The end of a simple statement: an optional trailing comment (returned, or NULL) and NEWLINE. */
fx_status fx_py_end_statement (fx_pyparser *p, const fx_tok **comment);
/* Skips one statement, compound statements with their whole block. */
fx_status fx_py_skip_statement (fx_pyparser *p);
/* The source text an expression spans, copied into arena. */
char *fx_py_expr_text (const fx_pyparser *p, const fx_expr *e, fx_arena *arena);
/* "a.b.c" for a chain of names, or NULL. */
char *fx_py_dotted_name (const fx_pyparser *p, const fx_expr *e, fx_arena *arena);
/* Evaluates a constant argument (no node references): used by the repro.py reader. */
fx_status fx_py_eval_const (fx_pyparser *p, const fx_expr *e, fx_arg *out);

/* A hash map from a byte string (usually pointing into the source text) to a pointer. */
typedef struct
{
  const char *key;
  size_t klen;
  void *value;
  uint32_t tok;          /* where the key was defined */
} fx_py_slot;

typedef struct
{
  fx_py_slot *slots;
  size_t cap;
  size_t len;
} fx_py_map;

fx_py_slot *fx_py_map_find (const fx_py_map *m, const char *key, size_t klen);
/* The slot for key, inserted (value NULL) when absent; *fresh tells which. */
fx_py_slot *fx_py_map_insert (fx_py_map *m, const char *key, size_t klen, bool *fresh);
void fx_py_map_free (fx_py_map *m);

/* repro.py parts (fx-pyrepro.c) */
/* At `def __init__`: records registered parameters, buffers, constants and submodules into attrs (strings in g's arena). */
fx_status fx_py_parse_init (fx_pyparser *p, fx_graph *g, fx_attr_vec *attrs);
/* At `def load_args`: appends the reader.tensor/storage/symint/const inputs to p->inputs. */
fx_status fx_py_parse_load_args (fx_pyparser *p);
/* At a top-level `args = [((shape), (stride), dtype, 'device'), ...]` (older repro.py files): records the inputs
   when the list has that shape, else skips the statement. */
fx_status fx_py_parse_args_list (fx_pyparser *p);
/* Parses a block body after ':' (NEWLINE INDENT ... DEDENT, or statements on the same line) by calling stmt for
   each statement; comments are passed to stmt too (as TK_COMMENT tokens, left for it to consume). */
typedef fx_status (*fx_py_stmt_fn) (fx_pyparser *p, void *data);
fx_status fx_py_parse_block (fx_pyparser *p, fx_py_stmt_fn stmt, void *data);
