/* fx-diff.c: the diff result (entries in an arena), Myers' line diff with unified hunks, and the text and JSON
   printers. */
#include "fx/diff.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "fx-diff-impl.h"

static const char *const section_names[] = {
#define FX_X(e, name) name,
  FX_DIFF_SECTION_LIST (FX_X)
#undef FX_X
};

static const char *const kind_names[] = {
#define FX_X(e, name) name,
  FX_DIFF_KIND_LIST (FX_X)
#undef FX_X
};

const char *
fx_diff_section_name (fx_diff_section section)
{
  return (unsigned) section < FX_DIFF_SECTION_COUNT ? section_names[section] : "?";
}

const char *
fx_diff_kind_name (fx_diff_kind kind)
{
  return (unsigned) kind < FX_DIFF_KIND_COUNT ? kind_names[kind] : "?";
}

fx_diff *
fx_diff_new (const char *label_a, const char *label_b)
{
  fx_diff *diff = calloc (1, sizeof *diff);
  diff->arena = fx_arena_new ();
  diff->label_a = fx_arena_strdup (diff->arena, label_a ? label_a : "a");
  diff->label_b = fx_arena_strdup (diff->arena, label_b ? label_b : "b");
  return diff;
}

void
fx_diff_free (fx_diff *diff)
{
  if (!diff)
    return;
  free (diff->entries);
  for (size_t i = 0; i < diff->n_owned; i++)
    fx_graph_free (diff->owned[i]);
  free (diff->owned);
  fx_arena_free (diff->arena);
  free (diff);
}

fx_diff_entry *
fx_diff_add (fx_diff *diff, fx_diff_section section, fx_diff_kind kind, const char *scope, const char *item,
             const char *name_a, const char *name_b, const char *field, const char *old_text, const char *new_text)
{
  if (diff->n_entries == diff->cap)
    {
      diff->cap = diff->cap ? diff->cap * 2 : 64;
      diff->entries = realloc (diff->entries, diff->cap * sizeof *diff->entries);
    }
  fx_diff_entry *e = &diff->entries[diff->n_entries++];
  e->section = section;
  e->kind = kind;
  e->scope = fx_arena_strdup (diff->arena, scope);
  e->item = fx_arena_strdup (diff->arena, item);
  e->name_a = fx_arena_strdup (diff->arena, name_a);
  e->name_b = fx_arena_strdup (diff->arena, name_b);
  e->field = fx_arena_strdup (diff->arena, field);
  e->old_text = fx_arena_strdup (diff->arena, old_text);
  e->new_text = fx_arena_strdup (diff->arena, new_text);
  e->informational = false;
  e->max_abs = e->rmse = e->ratio = NAN;
  return e;
}

size_t
fx_diff_count (const fx_diff *diff)
{
  size_t n = 0;
  for (size_t i = 0; i < diff->n_entries; i++)
    n += !diff->entries[i].informational;
  return n;
}

/* ------------------------------------------------------------------ Myers */

long
fx_diff_myers (const uint64_t *a, size_t n_a, const uint64_t *b, size_t n_b, long max_d, char *ops)
{
  size_t pre = 0, suf = 0;
  while (pre < n_a && pre < n_b && a[pre] == b[pre])
    pre++;
  while (suf < n_a - pre && suf < n_b - pre && a[n_a - 1 - suf] == b[n_b - 1 - suf])
    suf++;
  const uint64_t *A = a + pre, *B = b + pre;
  long N = (long) (n_a - pre - suf), M = (long) (n_b - pre - suf);
  long limit = N + M;
  if (max_d > 0 && max_d < limit)
    limit = max_d;

  long n_ops = 0;
  for (size_t i = 0; i < pre; i++)
    ops[n_ops++] = '=';
  if (N == 0 || M == 0)
    {
      for (long i = 0; i < N; i++)
        ops[n_ops++] = '-';
      for (long i = 0; i < M; i++)
        ops[n_ops++] = '+';
      for (size_t i = 0; i < suf; i++)
        ops[n_ops++] = '=';
      return n_ops;
    }

  /* V[k] for k in -(limit+1)..limit+1; trace[d] keeps V[-(d+1)..d+1] as it was when step d began (O(D^2) memory,
     bounded by limit). */
  long off = limit + 1;
  int32_t *v = calloc ((size_t) (2 * off + 1), sizeof *v);
  size_t trace_cap = 1024, trace_len = 0;
  int32_t *trace = malloc (trace_cap * sizeof *trace);
  size_t *trace_at = malloc ((size_t) (limit + 2) * sizeof *trace_at);
  long found = -1;
  for (long d = 0; d <= limit && found < 0; d++)
    {
      size_t need = (size_t) (2 * d + 3);
      if (trace_len + need > trace_cap)
        {
          while (trace_len + need > trace_cap)
            trace_cap *= 2;
          trace = realloc (trace, trace_cap * sizeof *trace);
        }
      trace_at[d] = trace_len;
      memcpy (trace + trace_len, v + off - d - 1, need * sizeof *v);
      trace_len += need;
      for (long k = -d; k <= d; k += 2)
        {
          long x;
          if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
            x = v[off + k + 1];
          else
            x = v[off + k - 1] + 1;
          long y = x - k;
          while (x < N && y < M && A[x] == B[y])
            x++, y++;
          v[off + k] = (int32_t) x;
          if (x >= N && y >= M)
            {
              found = d;
              break;
            }
        }
    }
  if (found < 0)
    {
      free (v);
      free (trace);
      free (trace_at);
      return -1;
    }
  /* Backtrack from (N, M), writing the middle ops in reverse. */
  char *mid = malloc ((size_t) (N + M + 1));
  long nm = 0, x = N, y = M;
  for (long d = found; d >= 0; d--)
    {
      const int32_t *tv = trace + trace_at[d];  /* tv[k + d + 1] = V[k] */
      long k = x - y, prev_k;
      if (k == -d || (k != d && tv[k - 1 + d + 1] < tv[k + 1 + d + 1]))
        prev_k = k + 1;
      else
        prev_k = k - 1;
      long prev_x = tv[prev_k + d + 1], prev_y = prev_x - prev_k;
      while (x > prev_x && y > prev_y)
        {
          mid[nm++] = '=';
          x--, y--;
        }
      if (d > 0)
        mid[nm++] = x == prev_x ? '+' : '-';
      x = prev_x;
      y = prev_y;
    }
  for (long i = nm; i-- > 0;)
    ops[n_ops++] = mid[i];
  for (size_t i = 0; i < suf; i++)
    ops[n_ops++] = '=';
  free (mid);
  free (v);
  free (trace);
  free (trace_at);
  return n_ops;
}

/* ------------------------------------------------------------------ text diff */

typedef struct
{
  const char *start;
  size_t len;
} line_ref;

static size_t
split_lines (const char *text, line_ref **out)
{
  size_t n = 0, cap = 64;
  line_ref *lines = malloc (cap * sizeof *lines);
  const char *p = text ? text : "";
  while (*p)
    {
      const char *nl = strchr (p, '\n');
      size_t len = nl ? (size_t) (nl - p) : strlen (p);
      if (n == cap)
        lines = realloc (lines, (cap *= 2) * sizeof *lines);
      lines[n++] = (line_ref) { p, len };
      p += len + (nl != NULL);
    }
  *out = lines;
  return n;
}

size_t
fx_diff_text (fx_diff *diff, fx_diff_section section, const char *scope, const char *a, const char *b, int context)
{
  line_ref *la, *lb;
  size_t na = split_lines (a, &la), nb = split_lines (b, &lb);
  uint64_t *ha = malloc ((na + 1) * sizeof *ha), *hb = malloc ((nb + 1) * sizeof *hb);
  for (size_t i = 0; i < na; i++)
    ha[i] = fx_hash_bytes (la[i].start, la[i].len, 0);
  for (size_t i = 0; i < nb; i++)
    hb[i] = fx_hash_bytes (lb[i].start, lb[i].len, 0);
  char *ops = malloc (na + nb + 1);
  long n_ops = fx_diff_myers (ha, na, hb, nb, 3000, ops);
  if (n_ops < 0)
    {
      /* Too different for a cheap shortest script: common prefix and suffix, the middle replaced. */
      size_t pre = 0, suf = 0;
      while (pre < na && pre < nb && ha[pre] == hb[pre])
        pre++;
      while (suf < na - pre && suf < nb - pre && ha[na - 1 - suf] == hb[nb - 1 - suf])
        suf++;
      n_ops = 0;
      for (size_t i = 0; i < pre; i++)
        ops[n_ops++] = '=';
      for (size_t i = pre; i < na - suf; i++)
        ops[n_ops++] = '-';
      for (size_t i = pre; i < nb - suf; i++)
        ops[n_ops++] = '+';
      for (size_t i = 0; i < suf; i++)
        ops[n_ops++] = '=';
    }
  /* Line numbers before each op. */
  size_t *xa = malloc (((size_t) n_ops + 1) * sizeof *xa), *xb = malloc (((size_t) n_ops + 1) * sizeof *xb);
  xa[0] = xb[0] = 0;
  for (long k = 0; k < n_ops; k++)
    {
      xa[k + 1] = xa[k] + (ops[k] != '+');
      xb[k + 1] = xb[k] + (ops[k] != '-');
    }
  if (context < 0)
    context = 3;
  size_t hunks = 0;
  fx_buf hunk;
  fx_buf_init (&hunk);
  long i = 0;
  while (i < n_ops)
    {
      while (i < n_ops && ops[i] == '=')
        i++;
      if (i >= n_ops)
        break;
      long start = i > context ? i - context : 0;
      long end = i, last = i;
      while (end < n_ops)
        {
          if (ops[end] != '=')
            last = end;
          else if (end - last > 2 * context)
            break;
          end++;
        }
      long stop = last + 1 + context;
      if (stop > n_ops)
        stop = n_ops;
      fx_buf_reset (&hunk);
      size_t ca = xa[stop] - xa[start], cb = xb[stop] - xb[start];
      /* unified diff numbering: a range of 0 lines names the line before it */
      fx_buf_printf (&hunk, "@@ -%zu,%zu +%zu,%zu @@\n", ca ? xa[start] + 1 : xa[start], ca,
                     cb ? xb[start] + 1 : xb[start], cb);
      for (long k = start; k < stop; k++)
        {
          const line_ref *l = ops[k] == '+' ? &lb[xb[k]] : &la[xa[k]];
          fx_buf_putc (&hunk, ops[k] == '=' ? ' ' : ops[k]);
          fx_buf_append (&hunk, l->start, l->len);
          fx_buf_putc (&hunk, '\n');
        }
      fx_diff_add (diff, section, FX_DIFF_HUNK, scope, "code", NULL, NULL, NULL, NULL, hunk.data);
      hunks++;
      i = stop;
    }
  fx_buf_free (&hunk);
  free (xa);
  free (xb);
  free (ops);
  free (ha);
  free (hb);
  free (la);
  free (lb);
  return hunks;
}

/* ------------------------------------------------------------------ printing */

#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_CYAN "\033[36m"
#define C_YELLOW "\033[33m"
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"
#define C_OFF "\033[0m"

/* Text from input files goes to a terminal: control characters (an escape sequence in a guard's code, say) are
   shown as '?' so that only the printer's own colour codes reach it. */
static void
append_clean (fx_buf *out, const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char) s[i];
      fx_buf_putc (out, (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ? '?' : (char) c);
    }
}

static void
put_colored (fx_buf *out, bool color, const char *code, const char *fmt_text)
{
  if (color)
    fx_buf_puts (out, code);
  append_clean (out, fmt_text, strlen (fmt_text));
  if (color)
    fx_buf_puts (out, C_OFF);
}

static void
print_hunk (const char *text, bool color, fx_buf *out)
{
  const char *p = text;
  while (*p)
    {
      const char *nl = strchr (p, '\n');
      size_t len = nl ? (size_t) (nl - p) : strlen (p);
      const char *code = NULL;
      if (color)
        code = *p == '-' ? C_RED : *p == '+' ? C_GREEN : *p == '@' ? C_CYAN : NULL;
      if (code)
        fx_buf_puts (out, code);
      append_clean (out, p, len);
      if (code)
        fx_buf_puts (out, C_OFF);
      fx_buf_putc (out, '\n');
      p += len + (nl != NULL);
    }
}

static bool
same_str (const char *a, const char *b)
{
  return a == b || (a && b && strcmp (a, b) == 0);
}

/* "old -> new" for a change; two long texts that differ in a small part (a guard's size=[10] -> size=[None]) show
   that part with some context, the rest elided. */
static void
put_change (fx_buf *line, const char *old_text, const char *new_text)
{
  const char *a = old_text ? old_text : "-", *b = new_text ? new_text : "-";
  size_t la = strlen (a), lb = strlen (b), pre = 0, suf = 0;
  enum { LONG = 100, CONTEXT = 24 };

  if (la + lb < LONG)
    {
      fx_buf_printf (line, "%s -> %s", a, b);
      return;
    }
  while (pre < la && pre < lb && a[pre] == b[pre])
    pre++;
  while (suf < la - pre && suf < lb - pre && a[la - 1 - suf] == b[lb - 1 - suf])
    suf++;
  size_t start = pre > CONTEXT ? pre - CONTEXT : 0;
  size_t tail = suf > CONTEXT ? suf - CONTEXT : 0;
  /* Cut in UTF-8 at character starts only. */
  while (start > 0 && ((unsigned char) a[start] & 0xc0) == 0x80)
    start--;
  while (tail > 0 && ((unsigned char) a[la - tail] & 0xc0) == 0x80)
    tail--;
  fx_buf_printf (line, "%s%.*s%s -> %s%.*s%s", start ? "…" : "", (int) (la - start - tail), a + start, tail ? "…" : "",
                 start ? "…" : "", (int) (lb - start - tail), b + start, tail ? "…" : "");
}

void
fx_diff_print_text (const fx_diff *diff, bool color, fx_buf *out)
{
  fx_buf line;
  fx_buf_init (&line);
  fx_buf_reset (&line);
  fx_buf_printf (&line, "--- a: %s", diff->label_a);
  put_colored (out, color, C_BOLD, line.data);
  fx_buf_putc (out, '\n');
  fx_buf_reset (&line);
  fx_buf_printf (&line, "+++ b: %s", diff->label_b);
  put_colored (out, color, C_BOLD, line.data);
  fx_buf_putc (out, '\n');
  size_t counts[FX_DIFF_SECTION_COUNT] = { 0 };
  int prev_section = -1;
  const char *prev_scope = NULL;
  for (size_t i = 0; i < diff->n_entries; i++)
    {
      const fx_diff_entry *e = &diff->entries[i];
      if (!e->informational)
        counts[e->section]++;
      if ((int) e->section != prev_section || !same_str (e->scope, prev_scope))
        {
          fx_buf_reset (&line);
          fx_buf_printf (&line, "== %s%s%s", fx_diff_section_name (e->section), e->scope ? ": " : "",
                         e->scope ? e->scope : "");
          put_colored (out, color, C_BOLD C_CYAN, line.data);
          fx_buf_putc (out, '\n');
          prev_section = (int) e->section;
          prev_scope = e->scope;
        }
      fx_buf_reset (&line);
      const char *name = e->name_a ? e->name_a : e->name_b ? e->name_b : "";
      switch (e->kind)
        {
        case FX_DIFF_HUNK:
          print_hunk (e->new_text ? e->new_text : "", color, out);
          continue;
        case FX_DIFF_ADDED:
        case FX_DIFF_REMOVED:
          {
            bool added = e->kind == FX_DIFF_ADDED;
            const char *text = added ? e->new_text : e->old_text;
            char sign = added ? '+' : '-';
            /* a node's text starts with its name */
            if (text && e->item && strcmp (e->item, "node") == 0)
              fx_buf_printf (&line, "%c node %s", sign, text);
            else
              fx_buf_printf (&line, "%c %s %s%s%s", sign, e->item ? e->item : "", name, text ? ": " : "",
                             text ? text : "");
            put_colored (out, color, added ? C_GREEN : C_RED, line.data);
            break;
          }
        case FX_DIFF_CHANGED:
          fx_buf_printf (&line, "~ %s %s", e->item ? e->item : "", name);
          if (e->name_b && e->name_a && strcmp (e->name_a, e->name_b) != 0)
            fx_buf_printf (&line, " -> %s", e->name_b);
          fx_buf_printf (&line, ": %s: ", e->field ? e->field : "");
          put_change (&line, e->old_text, e->new_text);
          put_colored (out, color, e->informational ? C_DIM : C_YELLOW, line.data);
          break;
        case FX_DIFF_FAILURE:
          fx_buf_printf (&line, "! %s failed: %s", e->name_a ? e->name_a : "guard",
                         e->new_text ? e->new_text : "");
          if (e->old_text)
            fx_buf_printf (&line, "\n    guard in a: %s", e->old_text);
          put_colored (out, color, C_RED C_BOLD, line.data);
          break;
        case FX_DIFF_KIND_COUNT:
        default:
          break;
        }
      fx_buf_putc (out, '\n');
    }
  size_t total = fx_diff_count (diff);
  if (total == 0)
    fx_buf_puts (out, "no differences\n");
  else
    {
      fx_buf_printf (out, "%zu difference%s (", total, total == 1 ? "" : "s");
      bool first = true;
      for (int s = 0; s < FX_DIFF_SECTION_COUNT; s++)
        if (counts[s])
          {
            fx_buf_printf (out, "%s%s %zu", first ? "" : ", ", section_names[s], counts[s]);
            first = false;
          }
      fx_buf_puts (out, ")\n");
    }
  fx_buf_free (&line);
}

static void
jset_str (json_object *o, const char *key, const char *value)
{
  json_object_object_add (o, key, value ? json_object_new_string (value) : NULL);
}

void
fx_diff_print_json (const fx_diff *diff, fx_buf *out)
{
  json_object *root = json_object_new_object ();
  jset_str (root, "a", diff->label_a);
  jset_str (root, "b", diff->label_b);
  size_t total = fx_diff_count (diff);
  json_object_object_add (root, "same", json_object_new_boolean (total == 0));
  json_object_object_add (root, "differences", json_object_new_int64 ((int64_t) total));
  json_object *entries = json_object_new_array ();
  for (size_t i = 0; i < diff->n_entries; i++)
    {
      const fx_diff_entry *e = &diff->entries[i];
      json_object *o = json_object_new_object ();
      jset_str (o, "section", fx_diff_section_name (e->section));
      jset_str (o, "kind", fx_diff_kind_name (e->kind));
      jset_str (o, "scope", e->scope);
      jset_str (o, "item", e->item);
      jset_str (o, "name_a", e->name_a);
      jset_str (o, "name_b", e->name_b);
      jset_str (o, "field", e->field);
      jset_str (o, "old", e->old_text);
      jset_str (o, "new", e->new_text);
      json_object_object_add (o, "informational", json_object_new_boolean (e->informational));
      if (!isnan (e->max_abs))
        json_object_object_add (o, "max_abs", json_object_new_double (e->max_abs));
      if (!isnan (e->rmse))
        json_object_object_add (o, "rmse", json_object_new_double (e->rmse));
      if (!isnan (e->ratio))
        json_object_object_add (o, "ratio", json_object_new_double (e->ratio));
      json_object_array_add (entries, o);
    }
  json_object_object_add (root, "entries", entries);
  json_object *pairs = json_object_new_array ();
  for (size_t i = 0; i < diff->n_pairs; i++)
    {
      json_object *p = json_object_new_array ();
      const fx_diff_pair *dp = &diff->pairs[i];
      json_object_array_add (p, dp->a ? json_object_new_string (dp->a->name) : NULL);
      json_object_array_add (p, dp->b ? json_object_new_string (dp->b->name) : NULL);
      json_object_array_add (p, json_object_new_boolean (dp->changed));
      json_object_array_add (pairs, p);
    }
  json_object_object_add (root, "pairs", pairs);
  json_object *stats = json_object_new_object ();
  json_object_object_add (stats, "placeholder", json_object_new_int64 ((int64_t) diff->stats.by_placeholder));
  json_object_object_add (stats, "provenance", json_object_new_int64 ((int64_t) diff->stats.by_provenance));
  json_object_object_add (stats, "name", json_object_new_int64 ((int64_t) diff->stats.by_name));
  json_object_object_add (stats, "target", json_object_new_int64 ((int64_t) diff->stats.by_target));
  json_object_object_add (stats, "structure", json_object_new_int64 ((int64_t) diff->stats.by_structure));
  json_object_object_add (root, "matched_by", stats);
  fx_buf_puts (out, json_object_to_json_string_ext (root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                                            | JSON_C_TO_STRING_NOSLASHESCAPE));
  fx_buf_putc (out, '\n');
  json_object_put (root);
}

/* ------------------------------------------------------------------ key matching */

void
fx_diff_mask_digits (const char **p, char **o, size_t min)
{
  const char *e = *p;
  while (isdigit ((unsigned char) *e))
    e++;
  if ((size_t) (e - *p) >= min)
    *(*o)++ = '#';
  else
    {
      memcpy (*o, *p, (size_t) (e - *p));
      *o += e - *p;
    }
  *p = e;
}

int
fx_diff_hashed_cmp (const void *x, const void *y)
{
  const fx_diff_hashed *a = x, *b = y;
  if (a->hash != b->hash)
    return a->hash < b->hash ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static bool
hash_before (const void *h, const void *item)
{
  return ((const fx_diff_hashed *) item)->hash < *(const uint64_t *) h;
}

size_t
fx_diff_hashed_find (const fx_diff_hashed *hs, size_t n, uint64_t h)
{
  return fx_lower_bound (&h, hs, n, sizeof *hs, hash_before);
}

size_t
fx_diff_match_keys (const char *const *ka, size_t na, const char *const *kb, size_t nb, long *pa, long *pb)
{
  fx_diff_hashed *hb = malloc ((nb + 1) * sizeof *hb);
  size_t n = 0, made = 0;
  for (size_t j = 0; j < nb; j++)
    if (kb[j] && pb[j] < 0)
      hb[n++] = (fx_diff_hashed) { fx_hash_bytes (kb[j], strlen (kb[j]), 0), j };
  qsort (hb, n, sizeof *hb, fx_diff_hashed_cmp);
  for (size_t i = 0; i < na; i++)
    {
      if (!ka[i] || pa[i] >= 0)
        continue;
      uint64_t h = fx_hash_bytes (ka[i], strlen (ka[i]), 0);
      /* Taken entries stay in the run; runs of one key are short in practice (guards, kernels, metrics). */
      for (size_t k = fx_diff_hashed_find (hb, n, h); k < n && hb[k].hash == h; k++)
        if (pb[hb[k].pos] < 0 && strcmp (kb[hb[k].pos], ka[i]) == 0)
          {
            pa[i] = (long) hb[k].pos;
            pb[hb[k].pos] = (long) i;
            made++;
            break;
          }
    }
  free (hb);
  return made;
}

fx_diff_pairing
fx_diff_pairing_new (fx_arena *arena, size_t na, size_t nb)
{
  fx_diff_pairing m = { fx_arena_alloc (arena, (na + 1) * sizeof *m.ka), fx_arena_alloc (arena, (nb + 1) * sizeof *m.kb),
                        fx_arena_alloc (arena, (na + 1) * sizeof *m.pa), fx_arena_alloc (arena, (nb + 1) * sizeof *m.pb),
                        na, nb };
  for (size_t i = 0; i < na; i++)
    m.pa[i] = -1;
  for (size_t j = 0; j < nb; j++)
    m.pb[j] = -1;
  return m;
}

size_t
fx_diff_pairing_match (fx_diff_pairing *m)
{
  return fx_diff_match_keys (m->ka, m->na, m->kb, m->nb, m->pa, m->pb);
}
