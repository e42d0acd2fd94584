/* fx-inductor-sym.c: symbolic kernels. A graph whose inputs have symbolic sizes (placeholders annotated
   "f32[s0, 64]", "Sym(s0)") is generated at its example sizes and again with each symbol moved by one (and each pair
   of symbols together); every integer literal of the C source that moves with them is fitted as
   c + sum a_i s_i + sum b_ij s_i s_j, checked at one more point, and written as that expression of the library's
   fx_ks<i>. One built library then serves every size whose generated source is that template at its values: a
   call at new sizes lowers and schedules the graph again (milliseconds), checks its source against the template
   literal by literal, and runs the new program on the same kernels (the C compiler is not called). Sources that
   differ in more than literals (a tiling that needs divisibility, a loop that is parallel only above a size) make
   the template fail at compile time, or at a new size: those sizes get a specialized build, as before. */
#include "fx-inductor-impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An integer literal of a generated source: its span (digits and suffix), value, and fit over the symbols. */
typedef struct ind_lit
{
  size_t off, len;          /* digits */
  size_t suffix;            /* bytes of suffix after the digits (LL) */
  int64_t v;
  bool fitted;
  int64_t c, a[IND_MAX_SYMS], b[IND_MAX_SYMS][IND_MAX_SYMS];
} ind_lit;

struct ind_syms
{
  int n;
  char names[IND_MAX_SYMS][64];
  int64_t base[IND_MAX_SYMS];
  struct ind_sym_dim
  {
    int input, dim, sym;
  } *dims;
  int n_dims;
  struct ind_sym_int
  {
    int input, sym;
  } *ints;
  int n_ints;
  fx_graph *graph;          /* a copy: variants at new sizes are lowered from it */
  ind_options opt;
  /* the template: the source at the example sizes and its literals */
  char *text;
  size_t text_len;
  ind_lit *lits;
  int n_lits;
  int n_fitted;
  size_t prefix_len;        /* the declarations put before the template's text in the symbolic source */
  int64_t *grow;            /* per literal: how much longer the symbolic text is up to its end (expressions) */
  ind_target target;        /* what the template is: C (globals and a setter) or CUDA (__constant__ per module) */
  bool int32;               /* CUDA with 32-bit index math: the symbols and expressions are int */
  char *sym_text;           /* the symbolic source (after ind_syms_generalize) */
  size_t sym_len;
};

/* ---------------------------------------------------------------- literals */

static bool
word_char (char c)
{
  return isalnum ((unsigned char) c) || c == '_' || c == '.';
}

/* The integer literals of text (not parts of names, floats or hex). */
static int
scan_literals (const char *text, size_t len, ind_lit **out)
{
  int n = 0, cap = 0;
  ind_lit *lits = NULL;
  for (size_t i = 0; i < len; i++)
    {
      if (!isdigit ((unsigned char) text[i]) || (i > 0 && word_char (text[i - 1])))
        continue;
      size_t j = i;
      int64_t v = 0;
      bool big = false;
      while (j < len && isdigit ((unsigned char) text[j]))
        {
          if (v > (INT64_MAX - 9) / 10)
            big = true;
          else
            v = v * 10 + (text[j] - '0');
          j++;
        }
      size_t k = j;
      while (k < len && (text[k] == 'L' || text[k] == 'U' || text[k] == 'l' || text[k] == 'u'))
        k++;
      if ((k < len && word_char (text[k])) || big)
        {
          while (i < len && word_char (text[i]))
            i++;
          continue;
        }
      lits = ind_grow (lits, n, &cap, sizeof *lits, 256);
      memset (&lits[n], 0, sizeof lits[n]);
      lits[n].off = i;
      lits[n].len = j - i;
      lits[n].suffix = k - j;
      lits[n].v = v;
      n++;
      i = k - 1;
    }
  *out = lits;
  return n;
}

/* Same text apart from the literals' values (suffixes included in the text compared). */
static bool
same_skeleton (const char *a, size_t alen, const ind_lit *la, int na, const char *b, size_t blen, const ind_lit *lb,
               int nb)
{
  if (na != nb)
    return false;
  size_t pa = 0, pb = 0;
  for (int i = 0; i <= na; i++)
    {
      size_t ea = i < na ? la[i].off : alen, eb = i < nb ? lb[i].off : blen;
      if (ea - pa != eb - pb || memcmp (a + pa, b + pb, ea - pa) != 0)
        return false;
      if (i < na)
        {
          if (la[i].suffix != lb[i].suffix
              || memcmp (a + la[i].off + la[i].len, b + lb[i].off + lb[i].len, la[i].suffix) != 0)
            return false;
          pa = la[i].off + la[i].len + la[i].suffix;
          pb = lb[i].off + lb[i].len + lb[i].suffix;
        }
    }
  return true;
}

static int64_t
lit_eval (const ind_syms *s, const ind_lit *l, const int64_t *vals)
{
  if (!l->fitted)
    return l->v;
  int64_t v = l->c;
  for (int i = 0; i < s->n; i++)
    {
      v += l->a[i] * vals[i];
      for (int j = i + 1; j < s->n; j++)
        v += l->b[i][j] * vals[i] * vals[j];
    }
  return v;
}

/* ---------------------------------------------------------------- symbols of a graph */

static bool
plain_symbol (const char *s)
{
  if (s == NULL || !(isalpha ((unsigned char) s[0]) || s[0] == '_') || strlen (s) >= 64)
    return false;
  for (const char *c = s; *c; c++)
    if (!isalnum ((unsigned char) *c) && *c != '_')
      return false;
  return true;
}

static int
symbol_index (ind_syms *s, const char *name, int64_t value, fx_buf *why)
{
  for (int i = 0; i < s->n; i++)
    if (strcmp (s->names[i], name) == 0)
      {
        if (s->base[i] != value)
          {
            fx_buf_printf (why, "%s is %lld and %lld in the example inputs", name, (long long) s->base[i],
                           (long long) value);
            return -1;
          }
        return i;
      }
  if (s->n == IND_MAX_SYMS)
    {
      fx_buf_printf (why, "more than %d symbols", IND_MAX_SYMS);
      return -1;
    }
  if (value <= 1)
    {
      /* Dynamo specializes sizes 0 and 1, and a size-1 dim is a broadcast in the loop IR */
      fx_buf_printf (why, "%s = %lld", name, (long long) value);
      return -1;
    }
  snprintf (s->names[s->n], sizeof s->names[s->n], "%s", name);
  s->base[s->n] = value;
  return s->n++;
}

void
ind_syms_free (ind_syms *s)
{
  if (s == NULL)
    return;
  free (s->dims);
  free (s->ints);
  if (s->graph)
    fx_graph_free (s->graph);
  free (s->text);
  free (s->lits);
  free (s->grow);
  free (s->sym_text);
  free (s);
}

ind_syms *
ind_syms_find (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, const ind_options *opt, fx_buf *why)
{
  ind_syms *s = calloc (1, sizeof *s);
  int dcap = 0, icap = 0;
  size_t i = 0;
  bool ok = true;
  for (const fx_node *n = graph->first; n && ok; n = n->next)
    {
      if (n->op != FX_OP_PLACEHOLDER)
        continue;
      size_t k = i++;
      const fx_val *v = &n->meta.val;
      if (k >= n_inputs)
        break;
      if (v->kind == FX_VAL_SYMINT && v->sym && inputs[k].kind == FX_VALUE_INT)
        {
          if (!plain_symbol (v->sym))
            {
              fx_buf_printf (why, "input %zu is Sym(%s), not a plain symbol", k, v->sym);
              ok = false;
              break;
            }
          int si = symbol_index (s, v->sym, inputs[k].u.i, why);
          if (si < 0)
            {
              ok = false;
              break;
            }
          s->ints = ind_grow (s->ints, s->n_ints, &icap, sizeof *s->ints, 4);
          s->ints[s->n_ints++] = (struct ind_sym_int) { (int) k, si };
          continue;
        }
      if (v->kind != FX_VAL_TENSOR || inputs[k].kind != FX_VALUE_TENSOR)
        continue;
      const fx_tensor *t = inputs[k].u.t;
      bool any = false;
      for (int d = 0; d < v->tensor.ndim && d < t->ndim && ok; d++)
        {
          const char *sym = v->tensor.sizes[d].sym;
          if (sym == NULL)
            continue;
          if (!plain_symbol (sym))
            {
              fx_buf_printf (why, "input %zu has size %s at dim %d, not a plain symbol", k, sym, d);
              ok = false;
              break;
            }
          int si = symbol_index (s, sym, t->sizes[d], why);
          if (si < 0)
            {
              ok = false;
              break;
            }
          s->dims = ind_grow (s->dims, s->n_dims, &dcap, sizeof *s->dims, 8);
          s->dims[s->n_dims++] = (struct ind_sym_dim) { (int) k, d, si };
          any = true;
        }
      if (ok && any && !fx_tensor_is_contiguous (t))
        {
          fx_buf_printf (why, "input %zu with a symbolic size is not contiguous", k);
          ok = false;
        }
    }
  if (!ok || s->n == 0)
    {
      ind_syms_free (s);
      return NULL;
    }
  s->opt = *opt;
  s->graph = fx_graph_copy (graph);
  if (s->graph == NULL)
    {
      ind_syms_free (s);
      return NULL;
    }
  return s;
}

const int64_t *
ind_syms_base (const ind_syms *s)
{
  return s->base;
}

int
ind_syms_count (const ind_syms *s)
{
  return s ? s->n : 0;
}

const char *
ind_syms_name (const ind_syms *s, int i)
{
  return s->names[i];
}

fx_status
ind_syms_values (const ind_syms *s, const fx_value *inputs, size_t n_inputs, int64_t *vals, fx_diag *diag)
{
  bool seen[IND_MAX_SYMS] = { false };
  for (int k = 0; k < s->n_dims + s->n_ints; k++)
    {
      int in = k < s->n_dims ? s->dims[k].input : s->ints[k - s->n_dims].input;
      int sym = k < s->n_dims ? s->dims[k].sym : s->ints[k - s->n_dims].sym;
      int64_t v;
      if ((size_t) in >= n_inputs)
        return fx_diag_set (diag, FX_ERR_INVALID, "inductor: input %d is missing", in);
      if (k < s->n_dims)
        {
          if (inputs[in].kind != FX_VALUE_TENSOR || inputs[in].u.t->ndim <= s->dims[k].dim)
            return fx_diag_set (diag, FX_ERR_INVALID, "inductor: input %d is not a tensor of the compiled rank", in);
          v = inputs[in].u.t->sizes[s->dims[k].dim];
        }
      else
        {
          if (inputs[in].kind != FX_VALUE_INT)
            return fx_diag_set (diag, FX_ERR_INVALID, "inductor: input %d is not an int (Sym(%s))", in,
                                s->names[sym]);
          v = inputs[in].u.i;
        }
      if (seen[sym] && vals[sym] != v)
        return fx_diag_set (diag, FX_ERR_INVALID, "inductor: %s is %lld and %lld in these inputs (input %d)",
                            s->names[sym], (long long) vals[sym], (long long) v, in);
      seen[sym] = true;
      vals[sym] = v;
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- sources at other sizes */

/* The example inputs with every symbol at vals: meta tensors (contiguous) for the tensors that have symbolic dims,
   the ints replaced; the rest shared with inputs (*made marks what to release). */
static fx_value *
sample_inputs (const ind_syms *s, const fx_value *inputs, size_t n_inputs, const int64_t *vals, bool **made)
{
  fx_value *v = calloc (n_inputs + 1, sizeof *v);
  *made = calloc (n_inputs + 1, sizeof **made);
  memcpy (v, inputs, sizeof *v * n_inputs);
  for (int k = 0; k < s->n_ints; k++)
    v[s->ints[k].input] = fx_value_int (vals[s->ints[k].sym]);
  for (int k = 0; k < s->n_dims; k++)
    {
      int in = s->dims[k].input;
      if ((*made)[in])
        continue;
      const fx_tensor *t = inputs[in].u.t;
      int64_t sizes[FX_TENSOR_MAX_DIMS];
      memcpy (sizes, t->sizes, sizeof (int64_t) * (size_t) t->ndim);
      for (int q = 0; q < s->n_dims; q++)
        if (s->dims[q].input == in)
          sizes[s->dims[q].dim] = vals[s->dims[q].sym];
      fx_tensor *m = fx_tensor_new_meta (t->dtype, t->ndim, sizes, NULL);
      if (m)
        {
          m->device = t->device;
          v[in] = fx_value_tensor (m);
          (*made)[in] = true;
        }
    }
  return v;
}

static void
sample_free (fx_value *v, bool *made, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (made[i])
      fx_value_clear (&v[i]);
  free (v);
  free (made);
}

fx_status
ind_syms_lower (const ind_syms *s, const fx_value *inputs, size_t n_inputs, const int64_t *vals, bool build,
                ind_pipeline *pl, fx_diag *diag)
{
  bool *made = NULL;
  fx_value *in = vals ? sample_inputs (s, inputs, n_inputs, vals, &made) : NULL;
  ind_pipeline_init (pl, s->graph, in ? in : inputs, n_inputs);
  pl->target = s->target;
  pl->prog.opt = s->opt;
  pl->prog.symbolic = true;
  pl->build = build;
  fx_status st = ind_pipeline_run (pl, diag);
  /* the program keeps no pointer to the sample tensors (the lowering reads their metadata) */
  pl->inputs = NULL;
  if (in)
    sample_free (in, made, n_inputs);
  return st;
}

/* The template's symbolic text: declarations, then the base source with each fitted literal as its expression. */
static void
put_expr (const ind_syms *s, const ind_lit *l, fx_buf *out)
{
  const char *ll = s->int32 ? "" : "LL";
  fx_buf_putc (out, '(');
  bool any = false;
  if (l->c != 0)
    {
      fx_buf_printf (out, "%lld%s", (long long) l->c, ll);
      any = true;
    }
  for (int i = 0; i < s->n; i++)
    {
      if (l->a[i] != 0)
        {
          fx_buf_printf (out, "%s%lld%s * fx_ks%d", any ? " + " : "", (long long) l->a[i], ll, i);
          any = true;
        }
      for (int j = i + 1; j < s->n; j++)
        if (l->b[i][j] != 0)
          {
            fx_buf_printf (out, "%s%lld%s * fx_ks%d * fx_ks%d", any ? " + " : "", (long long) l->b[i][j], ll, i, j);
            any = true;
          }
    }
  if (!any)
    fx_buf_printf (out, "0%s", ll);
  fx_buf_putc (out, ')');
}

static bool
lit_before (const void *off, const void *lit)
{
  return ((const ind_lit *) lit)->off < *(const size_t *) off;
}

size_t
ind_syms_map_offset (const ind_syms *s, size_t off)
{
  /* the last literal that starts before off: its text and all before it changed length by grow[i] in all */
  size_t lo = fx_lower_bound (&off, s->lits, (size_t) s->n_lits, sizeof *s->lits, lit_before);
  return off + s->prefix_len + (lo > 0 ? s->grow[lo - 1] : 0);
}

static void
symbolic_text (ind_syms *s, fx_buf *out)
{
  size_t start = out->len;
  fx_buf pre;
  fx_buf_init (&pre);
  if (s->target == IND_TARGET_CUDA)
    {
      /* one module per size set: the runner writes the values into the module before its first launch */
      fx_buf_puts (&pre, "// symbolic sizes:");
      for (int i = 0; i < s->n; i++)
        fx_buf_printf (&pre, " fx_ks%d = %s", i, s->names[i]);   /* [A-Za-z0-9_] only (plain_symbol) */
      fx_buf_puts (&pre, " (written into each module by the runner)\n");
      for (int i = 0; i < s->n; i++)
        fx_buf_printf (&pre, "__constant__ %s fx_ks%d;\n", s->int32 ? "int" : "long long", i);
      fx_buf_putc (&pre, '\n');
    }
  else
    {
      fx_buf_puts (&pre, "#include <stdint.h>\n/* symbolic sizes:");
      for (int i = 0; i < s->n; i++)
        fx_buf_printf (&pre, " fx_ks%d = %s", i, s->names[i]);   /* [A-Za-z0-9_] only (plain_symbol) */
      fx_buf_puts (&pre, " (set by the runner before each call) */\nstatic int64_t");
      for (int i = 0; i < s->n; i++)
        fx_buf_printf (&pre, "%s fx_ks%d", i ? "," : "", i);
      fx_buf_puts (&pre, ";\n\nvoid\nfx_inductor_set_sizes (const int64_t *v)\n{\n");
      for (int i = 0; i < s->n; i++)
        fx_buf_printf (&pre, "  fx_ks%d = v[%d];\n", i, i);
      fx_buf_puts (&pre, "}\n\n");
    }
  s->prefix_len = pre.len;
  fx_buf_append (out, pre.data, pre.len);
  fx_buf_free (&pre);
  size_t p = 0;
  int64_t grow = 0;
  s->grow = calloc ((size_t) s->n_lits + 1, sizeof *s->grow);
  for (int i = 0; i < s->n_lits; i++)
    {
      const ind_lit *l = &s->lits[i];
      if (l->fitted)
        {
          fx_buf_append (out, s->text + p, l->off - p);
          size_t at = out->len;
          put_expr (s, l, out);
          grow += (int64_t) (out->len - at) - (int64_t) (l->len + l->suffix);
          p = l->off + l->len + l->suffix;
        }
      s->grow[i] = grow;
    }
  fx_buf_append (out, s->text + p, s->text_len - p);
  free (s->sym_text);
  s->sym_len = out->len - start;
  s->sym_text = malloc (s->sym_len + 1);
  memcpy (s->sym_text, out->data + start, s->sym_len);
  s->sym_text[s->sym_len] = '\0';
}

/* The literals of a source generated at vals; false (why says) when it is not the template's skeleton. */
static bool
sample_literals (ind_syms *s, const fx_value *inputs, size_t n_inputs, const int64_t *vals, int64_t *out,
                 fx_buf *why)
{
  ind_pipeline pl;
  fx_diag diag;
  fx_diag_clear (&diag);
  bool ok = ind_syms_lower (s, inputs, n_inputs, vals, false, &pl, &diag) == FX_OK;
  if (!ok)
    fx_buf_printf (why, "at other sizes: %s", diag.message);
  ind_lit *lits = NULL;
  int n = ok ? scan_literals (pl.source.data, pl.source.len, &lits) : 0;
  if (ok && !same_skeleton (s->text, s->text_len, s->lits, s->n_lits, pl.source.data, pl.source.len, lits, n))
    {
      fx_buf_puts (why, "the kernels' structure depends on the sizes");
      ok = false;
    }
  for (int i = 0; ok && i < n; i++)
    out[i] = lits[i].v;
  free (lits);
  ind_pipeline_clear (&pl);
  return ok;
}

fx_status
ind_syms_generalize (ind_syms *s, const fx_value *inputs, size_t n_inputs, const fx_buf *base_source,
                     fx_buf *sym_source, fx_buf *why)
{
  /* a second try starts over */
  free (s->text);
  free (s->lits);
  free (s->grow);
  s->grow = NULL;
  s->text = malloc (base_source->len + 1);
  memcpy (s->text, base_source->data, base_source->len);
  s->text[base_source->len] = '\0';
  s->text_len = base_source->len;
  s->n_lits = scan_literals (s->text, s->text_len, &s->lits);
  int n = s->n;
  /* points: +1 on each symbol, +1 on each pair, then a check with symbol i at base + 2 + i */
  int64_t *vi[IND_MAX_SYMS], *vij[IND_MAX_SYMS][IND_MAX_SYMS], *vv;
  int64_t *mem = calloc ((size_t) (n + n * n + 1) * (size_t) (s->n_lits + 1), sizeof (int64_t));
  int64_t *next = mem;
  bool ok = true;
  int64_t vals[IND_MAX_SYMS];
  for (int i = 0; i < n && ok; i++)
    {
      memcpy (vals, s->base, sizeof vals);
      vals[i]++;
      vi[i] = next;
      next += s->n_lits + 1;
      ok = sample_literals (s, inputs, n_inputs, vals, vi[i], why);
    }
  for (int i = 0; i < n && ok; i++)
    for (int j = i + 1; j < n && ok; j++)
      {
        memcpy (vals, s->base, sizeof vals);
        vals[i]++;
        vals[j]++;
        vij[i][j] = next;
        next += s->n_lits + 1;
        ok = sample_literals (s, inputs, n_inputs, vals, vij[i][j], why);
      }
  vv = next;
  for (int i = 0; i < n; i++)
    vals[i] = s->base[i] + 2 + i;
  if (ok)
    ok = sample_literals (s, inputs, n_inputs, vals, vv, why);
  s->n_fitted = 0;
  for (int k = 0; ok && k < s->n_lits; k++)
    {
      ind_lit *l = &s->lits[k];
      /* shifted: v = c' + sum a'_i d_i + sum b_ij d_i d_j, d = s - base */
      int64_t cs = l->v, as[IND_MAX_SYMS] = { 0 };
      for (int i = 0; i < n; i++)
        as[i] = vi[i][k] - cs;
      for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
          l->b[i][j] = vij[i][j][k] - vi[i][k] - vi[j][k] + cs;
      l->c = cs;
      for (int i = 0; i < n; i++)
        {
          l->a[i] = as[i];
          l->c -= as[i] * s->base[i];
          for (int j = i + 1; j < n; j++)
            {
              l->a[i] -= l->b[i][j] * s->base[j];
              l->c += l->b[i][j] * s->base[i] * s->base[j];
            }
        }
      /* the b terms subtracted from a_j too */
      for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
          l->a[i] -= l->b[j][i] * s->base[j];
      bool moves = false;
      for (int i = 0; i < n; i++)
        {
          moves |= as[i] != 0;
          for (int j = i + 1; j < n; j++)
            moves |= l->b[i][j] != 0;
        }
      l->fitted = moves;
      if (lit_eval (s, l, vals) != vv[k])
        {
          fx_buf_printf (why, "a literal (%lld at the example sizes) is not a polynomial of degree one per symbol "
                         "in the sizes", (long long) l->v);
          ok = false;
        }
      s->n_fitted += moves;
    }
  free (mem);
  if (!ok)
    return FX_ERR_UNSUPPORTED;
  symbolic_text (s, sym_source);
  return FX_OK;
}

bool
ind_syms_matches (const ind_syms *s, const fx_buf *source, const int64_t *vals)
{
  ind_lit *lits = NULL;
  int n = scan_literals (source->data, source->len, &lits);
  bool ok = same_skeleton (s->text, s->text_len, s->lits, s->n_lits, source->data, source->len, lits, n);
  for (int i = 0; ok && i < n; i++)
    ok = lits[i].v == lit_eval (s, &s->lits[i], vals);
  free (lits);
  return ok;
}

int
ind_syms_fitted (const ind_syms *s)
{
  return s->n_fitted;
}

void
ind_syms_set_cuda_looped (ind_syms *s)
{
  s->opt.cuda_looped = true;
}

void
ind_syms_set_target (ind_syms *s, ind_target target, bool int32)
{
  s->target = target;
  s->int32 = int32;
}

const fx_graph *
ind_syms_graph (const ind_syms *s)
{
  return s->graph;
}

const char *
ind_syms_text (const ind_syms *s, size_t *len)
{
  *len = s->sym_len;
  return s->sym_text;
}
