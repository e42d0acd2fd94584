/* fx-trace-scan.c: strict JSON reading of TORCH_TRACE envelopes and chromium event keys without json-c (see
   fx-trace-scan.h for when it answers). */
#include "fx-trace-scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* json-c refuses nesting past 32; this reader stops well before, leaving deep input to json-c's verdict. */
enum { MAX_DEPTH = 16, MAX_MEMBERS = 32 };

static const char *
skip_ws (const char *p, const char *end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

static int
hex_digit (char c)
{
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A string at p (its opening quote): the position after its closing quote, NULL when not strict JSON (a raw
   control character, an unknown escape, the end). *escaped: it holds a backslash. */
static const char *
scan_string (const char *p, const char *end, bool *escaped)
{
  *escaped = false;
  for (p++; p < end; p++)
    {
#ifdef __SSE2__
      /* Sixteen at a time where SSE2 is (every x86-64): the first quote, backslash or control character. */
      {
        const __m128i quote = _mm_set1_epi8 ('"'), slash = _mm_set1_epi8 ('\\'), ctl = _mm_set1_epi8 (0x1f);
        while (end - p >= 16)
          {
            __m128i v = _mm_loadu_si128 ((const __m128i *) (const void *) p);
            __m128i hit = _mm_or_si128 (_mm_or_si128 (_mm_cmpeq_epi8 (v, quote), _mm_cmpeq_epi8 (v, slash)),
                                        _mm_cmpeq_epi8 (_mm_max_epu8 (v, ctl), ctl));
            int mask = _mm_movemask_epi8 (hit);
            if (mask != 0)
              {
                p += __builtin_ctz ((unsigned) mask);
                break;
              }
            p += 16;
          }
      }
#endif
      /* Eight plain characters at a time (none a quote, a backslash or a control character): most of a chromium
         event payload is string text. A hit, even a false one, is looked at byte by byte below. */
      while (end - p >= 8)
        {
          uint64_t v;
          memcpy (&v, p, 8);
          const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
          uint64_t quote = v ^ (ones * '"'), slash = v ^ (ones * '\\');
          uint64_t hit = ((quote - ones) & ~quote) | ((slash - ones) & ~slash) | ((v - ones * 0x20) & ~v);
          if (hit & highs)
            break;
          p += 8;
        }
      if (p >= end)
        return NULL;
      unsigned char c = (unsigned char) *p;
      if (c == '"')
        return p + 1;
      if (c < 0x20)
        return NULL;
      if (c == '\\')
        {
          *escaped = true;
          if (++p >= end)
            return NULL;
          if (*p == 'u')
            {
              if (end - p < 5 || !hex_digit (p[1]) || !hex_digit (p[2]) || !hex_digit (p[3]) || !hex_digit (p[4]))
                return NULL;
              /* Surrogates (paired or not) are json-c's to judge. */
              if ((p[1] == 'd' || p[1] == 'D') && strchr ("89abcdefABCDEF", p[2]))
                return NULL;
              p += 4;
            }
          else if (!strchr ("\"\\/bfnrt", *p) || *p == 0)
            return NULL;
        }
    }
  return NULL;
}

/* A number in RFC 8259's grammar (json-c reads them all). *type: 'i' an integer of at most 18 digits (an exact
   int64), 'I' a longer one (json-c saturates it), 'd' one with a fraction or an exponent. */
static const char *
scan_number (const char *p, const char *end, char *type)
{
  bool is_int = true;
  if (p < end && *p == '-')
    p++;
  const char *digits_start = p;
  if (p >= end || *p < '0' || *p > '9')
    return NULL;
  if (*p == '0')
    p++;
  else
    while (p < end && *p >= '0' && *p <= '9')
      p++;
  const char *int_end = p;
  if (p < end && *p == '.')
    {
      is_int = false;
      if (++p >= end || *p < '0' || *p > '9')
        return NULL;
      while (p < end && *p >= '0' && *p <= '9')
        p++;
    }
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      is_int = false;
      p++;
      if (p < end && (*p == '+' || *p == '-'))
        p++;
      const char *digits = p;
      while (p < end && *p >= '0' && *p <= '9')
        p++;
      if (p == digits || p - digits > 3)
        return NULL;
    }
  *type = !is_int ? 'd' : int_end - digits_start > 18 ? 'I' : 'i';
  return p;
}

typedef struct
{
  const char *key;
  size_t key_len;
  bool key_escaped;
  char type;
  const char *value, *value_end;
  bool value_escaped;
} member;

static const char *scan_value (const char *p, const char *end, int depth, char *type, bool *escaped);

/* The object at p ('{'): the position after its '}', NULL when unsure. With members, its members in order (at
   most cap: more is unsure). */
static const char *
scan_object (const char *p, const char *end, int depth, member *members, size_t cap, size_t *n_members)
{
  if (depth > MAX_DEPTH)
    return NULL;
  size_t n = 0;
  p = skip_ws (p + 1, end);
  if (p < end && *p == '}')
    {
      if (n_members)
        *n_members = 0;
      return p + 1;
    }
  for (;;)
    {
      if (p >= end || *p != '"')
        return NULL;
      member m = { .key = p + 1 };
      const char *q = scan_string (p, end, &m.key_escaped);
      if (!q)
        return NULL;
      m.key_len = (size_t) (q - 1 - m.key);
      p = skip_ws (q, end);
      if (p >= end || *p != ':')
        return NULL;
      p = skip_ws (p + 1, end);
      m.value = p;
      p = scan_value (p, end, depth + 1, &m.type, &m.value_escaped);
      if (!p)
        return NULL;
      m.value_end = p;
      if (members)
        {
          if (n == cap)
            return NULL;
          members[n++] = m;
        }
      p = skip_ws (p, end);
      if (p < end && *p == ',')
        {
          p = skip_ws (p + 1, end);
          continue;
        }
      if (p < end && *p == '}')
        break;
      return NULL;
    }
  if (n_members)
    *n_members = n;
  return p + 1;
}

/* The array at p ('['): item is called on each element, at its first character, and returns the position after it
   (NULL: unsure). The position after the ']', NULL when unsure. */
typedef const char *(*item_fn) (void *ctx, size_t index, const char *p, const char *end, int depth);

static const char *
walk_array (const char *p, const char *end, int depth, item_fn item, void *ctx)
{
  if (depth > MAX_DEPTH)
    return NULL;
  p = skip_ws (p + 1, end);
  if (p < end && *p == ']')
    return p + 1;
  for (size_t i = 0;; i++)
    {
      p = item (ctx, i, p, end, depth + 1);
      if (!p)
        return NULL;
      p = skip_ws (p, end);
      if (p < end && *p == ',')
        {
          p = skip_ws (p + 1, end);
          continue;
        }
      if (p < end && *p == ']')
        return p + 1;
      return NULL;
    }
}

static const char *
scan_item (void *ctx, size_t index, const char *p, const char *end, int depth)
{
  char type;
  bool escaped;
  (void) ctx;
  (void) index;
  return scan_value (p, end, depth, &type, &escaped);
}

static const char *
scan_array (const char *p, const char *end, int depth)
{
  return walk_array (p, end, depth, scan_item, NULL);
}

static const char *
scan_literal (const char *p, const char *end, const char *word)
{
  size_t n = strlen (word);
  if ((size_t) (end - p) < n || memcmp (p, word, n) != 0)
    return NULL;
  return p + n;
}

static const char *
scan_value (const char *p, const char *end, int depth, char *type, bool *escaped)
{
  *escaped = false;
  if (p >= end)
    return NULL;
  *type = *p;
  switch (*p)
    {
    case '{':
      return scan_object (p, end, depth, NULL, 0, NULL);
    case '[':
      return scan_array (p, end, depth);
    case '"':
      *type = 's';
      return scan_string (p, end, escaped);
    case 't':
      return scan_literal (p, end, "true");
    case 'f':
      return scan_literal (p, end, "false");
    case 'n':
      return scan_literal (p, end, "null");
    default:
      return scan_number (p, end, type);
    }
}

static bool
key_is (const member *m, const char *key)
{
  size_t n = strlen (key);
  return m->key_len == n && memcmp (m->key, key, n) == 0;
}

/* No key twice (json-c keeps the last value but the first position: not worth copying) and none escaped. */
static bool
plain_distinct_keys (const member *m, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      if (m[i].key_escaped)
        return false;
      for (size_t j = 0; j < i; j++)
        if (m[j].key_len == m[i].key_len && memcmp (m[j].key, m[i].key, m[i].key_len) == 0)
          return false;
    }
  return true;
}

static void
set_value (fx_json_field *f, const member *m)
{
  f->type = m->type;
  if (m->type == 's')
    f->value = (fx_json_span) { m->value + 1, (size_t) (m->value_end - m->value - 2) };
  else
    f->value = (fx_json_span) { m->value, (size_t) (m->value_end - m->value) };
}

bool
fx_json_scan_fields (const char *p, const char *end, fx_json_field *fields, size_t n, const char **obj_end)
{
  member members[MAX_MEMBERS];
  size_t n_members = 0;
  p = skip_ws (p, end);
  if (p >= end || *p != '{')
    return false;
  const char *q = scan_object (p, end, 0, members, MAX_MEMBERS, &n_members);
  if (!q || !plain_distinct_keys (members, n_members))
    return false;
  for (size_t i = 0; i < n; i++)
    {
      fields[i].type = 0;
      fields[i].value = (fx_json_span) { NULL, 0 };
      for (size_t j = 0; j < n_members; j++)
        if (key_is (&members[j], fields[i].key))
          {
            if (members[j].type == 's' && members[j].value_escaped)
              return false;
            set_value (&fields[i], &members[j]);
          }
    }
  *obj_end = q;
  return true;
}

int
fx_json_field_int (const fx_json_field *f, int dflt)
{
  if (f->type != 'i')
    return dflt;
  const char *p = f->value.p, *end = p + f->value.len;
  bool negative = *p == '-';
  long long v = 0;
  for (p += negative; p < end; p++)
    v = v * 10 + (*p - '0');
  if (negative)
    v = -v;
  return v < 0 || v > 1000000000 ? dflt : (int) v;
}

bool
fx_trace_is_context_key (const char *key, size_t len)
{
  static const char *const keys[] = { "rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt",
                                      "has_payload", "severity", "timestamp", "pathname", "thread", "stack" };
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strlen (keys[i]) == len && memcmp (key, keys[i], len) == 0)
      return true;
  return false;
}

bool
fx_trace_scan_envelope (const char *js, const char *end, fx_trace_envelope *env)
{
  member members[MAX_MEMBERS];
  size_t n = 0;
  if (js >= end || *js != '{')
    return false;
  const char *q = scan_object (js, end, 0, members, MAX_MEMBERS, &n);
  if (!q || skip_ws (q, end) != end || !plain_distinct_keys (members, n))
    return false;
  fx_json_field ids[4] = { { "compiled_autograd_id" }, { "frame_id" }, { "frame_compile_id" }, { "attempt" } };
  memset (env, 0, sizeof *env);
  bool have_kind = false;
  for (size_t i = 0; i < n; i++)
    {
      const member *m = &members[i];
      if (!fx_trace_is_context_key (m->key, m->key_len))
        {
          if (!have_kind)
            {
              have_kind = true;
              env->kind = (fx_json_span) { m->key, m->key_len };
              env->meta = (fx_json_span) { m->value, (size_t) (m->value_end - m->value) };
              env->meta_type = m->type;
            }
          continue;
        }
      for (size_t k = 0; k < 4; k++)
        if (key_is (m, ids[k].key))
          set_value (&ids[k], m);
      if (key_is (m, "has_payload") && m->type == 's')
        {
          if (m->value_escaped)
            return false;
          env->has_want = true;
          env->want = (fx_json_span) { m->value + 1, (size_t) (m->value_end - m->value - 2) };
        }
    }
  if (!have_kind)
    return false;
  env->compiled_autograd_id = fx_json_field_int (&ids[0], -1);
  env->frame_id = fx_json_field_int (&ids[1], -1);
  env->frame_compile_id = fx_json_field_int (&ids[2], -1);
  env->attempt = fx_json_field_int (&ids[3], 0);
  return true;
}

bool
fx_json_scan_members (const char *p, const char *end, fx_json_member *out, size_t cap, size_t *n, const char **obj_end)
{
  *n = 0;
  p = skip_ws (p, end);
  if (p >= end || *p != '{' || cap == 0)
    return false;
  member *members = malloc (cap * sizeof *members);
  if (!members)
    return false;
  size_t got = 0;
  const char *q = scan_object (p, end, 0, members, cap, &got);
  bool ok = q != NULL && plain_distinct_keys (members, got);
  for (size_t i = 0; ok && i < got; i++)
    {
      fx_json_field f;
      set_value (&f, &members[i]);
      out[i] = (fx_json_member) { { members[i].key, members[i].key_len }, f.type, members[i].value_escaped, f.value };
    }
  free (members);
  if (!ok)
    return false;
  *n = got;
  *obj_end = q;
  return true;
}

static void
put_utf8 (fx_buf *out, unsigned cp)
{
  if (cp < 0x80)
    fx_buf_putc (out, (char) cp);
  else if (cp < 0x800)
    {
      fx_buf_putc (out, (char) (0xc0 | (cp >> 6)));
      fx_buf_putc (out, (char) (0x80 | (cp & 0x3f)));
    }
  else
    {
      fx_buf_putc (out, (char) (0xe0 | (cp >> 12)));
      fx_buf_putc (out, (char) (0x80 | ((cp >> 6) & 0x3f)));
      fx_buf_putc (out, (char) (0x80 | (cp & 0x3f)));
    }
}

void
fx_json_unescape (fx_json_span s, fx_buf *out)
{
  const char *p = s.p, *end = s.p + s.len;
  while (p < end)
    {
      const char *bs = memchr (p, '\\', (size_t) (end - p));
      if (!bs)
        bs = end;
      fx_buf_append (out, p, (size_t) (bs - p));
      p = bs;
      if (p >= end || p + 1 >= end)
        break;
      char c = p[1];
      p += 2;
      switch (c)
        {
        case 'b': fx_buf_putc (out, '\b'); break;
        case 'f': fx_buf_putc (out, '\f'); break;
        case 'n': fx_buf_putc (out, '\n'); break;
        case 'r': fx_buf_putc (out, '\r'); break;
        case 't': fx_buf_putc (out, '\t'); break;
        case 'u':
          {
            unsigned cp = 0;
            for (int i = 0; i < 4 && p < end; i++, p++)
              cp = cp * 16 + (unsigned) (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
            put_utf8 (out, cp);
            break;
          }
        default: fx_buf_putc (out, c); break; /* " \ / */
        }
    }
}

typedef struct
{
  fx_json_member *items;
  size_t cap, n;
} item_list;

static const char *
collect_item (void *ctx, size_t index, const char *p, const char *end, int depth)
{
  item_list *l = ctx;
  if (index == l->cap)
    return NULL;
  member m = { .value = p };
  p = scan_value (p, end, depth, &m.type, &m.value_escaped);
  if (!p)
    return NULL;
  m.value_end = p;
  fx_json_field f;
  set_value (&f, &m);
  l->items[index] = (fx_json_member) { { NULL, 0 }, f.type, m.value_escaped, f.value };
  l->n = index + 1;
  return p;
}

bool
fx_json_scan_array (const char *p, const char *end, fx_json_member *items, size_t cap, size_t *n)
{
  item_list l = { items, cap, 0 };
  p = skip_ws (p, end);
  bool ok = p < end && *p == '[' && walk_array (p, end, 0, collect_item, &l) != NULL;
  *n = ok ? l.n : 0;
  return ok;
}

/* json-c's json_escape_str (no JSON_C_TO_STRING_NOSLASHESCAPE): the characters of a string as it writes them. */
static void
put_escaped_jsonc (const char *s, size_t len, fx_buf *out)
{
  static const char hex[] = "0123456789abcdef";
  size_t start = 0;
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char) s[i];
      const char *esc = NULL;
      switch (c)
        {
        case '\b': esc = "\\b"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\f': esc = "\\f"; break;
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '/': esc = "\\/"; break;
        default: break;
        }
      if (!esc && c >= 0x20)
        continue;
      fx_buf_append (out, s + start, i - start);
      if (esc)
        fx_buf_puts (out, esc);
      else
        {
          char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf], 0 };
          fx_buf_puts (out, u);
        }
      start = i + 1;
    }
  fx_buf_append (out, s + start, len - start);
}

enum { PLAIN_MEMBERS = 32, PLAIN_MAX_MEMBERS = 4096 };

static const char *write_plain (const char *p, const char *end, int depth, fx_buf *tmp, fx_buf *out);

typedef struct
{
  fx_buf *tmp, *out;
} plain_ctx;

static const char *
plain_item (void *ctx, size_t index, const char *p, const char *end, int depth)
{
  plain_ctx *c = ctx;
  if (index > 0)
    fx_buf_putc (c->out, ',');
  return write_plain (p, end, depth, c->tmp, c->out);
}

/* The value at p, written as json-c writes what it read (JSON_C_TO_STRING_PLAIN); the position after it, NULL when
   unsure (as the scanner, plus integers past 18 digits and an object with a repeated key at any depth). */
static const char *
write_plain (const char *p, const char *end, int depth, fx_buf *tmp, fx_buf *out)
{
  if (depth > MAX_DEPTH || p >= end)
    return NULL;
  switch (*p)
    {
    case '{':
      {
        member local[PLAIN_MEMBERS], *members = local;
        size_t n = 0;
        const char *q = scan_object (p, end, depth, members, PLAIN_MEMBERS, &n);
        if (!q)
          {
            /* more members than the stack holds (compilation_metrics has about a hundred) */
            members = malloc (PLAIN_MAX_MEMBERS * sizeof *members);
            q = members ? scan_object (p, end, depth, members, PLAIN_MAX_MEMBERS, &n) : NULL;
          }
        bool ok = q && plain_distinct_keys (members, n);
        if (ok)
          fx_buf_putc (out, '{');
        for (size_t i = 0; ok && i < n; i++)
          {
            if (i)
              fx_buf_putc (out, ',');
            fx_buf_putc (out, '"');
            put_escaped_jsonc (members[i].key, members[i].key_len, out);
            fx_buf_puts (out, "\":");
            ok = write_plain (members[i].value, members[i].value_end, depth + 1, tmp, out) != NULL;
          }
        if (members != local)
          free (members);
        if (!ok)
          return NULL;
        fx_buf_putc (out, '}');
        return q;
      }
    case '[':
      {
        plain_ctx ctx = { tmp, out };
        fx_buf_putc (out, '[');
        const char *q = walk_array (p, end, depth, plain_item, &ctx);
        if (q)
          fx_buf_putc (out, ']');
        return q;
      }
    case '"':
      {
        bool escaped;
        const char *q = scan_string (p, end, &escaped);
        if (!q)
          return NULL;
        fx_json_span s = { p + 1, (size_t) (q - p - 2) };
        fx_buf_putc (out, '"');
        if (escaped)
          {
            fx_buf_reset (tmp);
            fx_json_unescape (s, tmp);
            put_escaped_jsonc (tmp->data ? tmp->data : "", tmp->len, out);
          }
        else
          put_escaped_jsonc (s.p, s.len, out);
        fx_buf_putc (out, '"');
        return q;
      }
    case 't':
    case 'f':
    case 'n':
      {
        const char *word = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
        const char *q = scan_literal (p, end, word);
        if (q)
          fx_buf_puts (out, word);
        return q;
      }
    default:
      {
        char type;
        const char *q = scan_number (p, end, &type);
        if (!q || type == 'I')
          return NULL;
        if (type == 'i') /* json-c keeps an int64 (-0 is 0) */
          fx_buf_printf (out, "%lld", strtoll (p, NULL, 10));
        else /* and a double's own text */
          fx_buf_append (out, p, (size_t) (q - p));
        return q;
      }
    }
}

bool
fx_json_write_plain (fx_json_span value, fx_buf *out)
{
  fx_buf tmp;
  fx_buf_init (&tmp);
  size_t mark = out->len;
  const char *end = value.p + value.len;
  const char *q = write_plain (skip_ws (value.p, end), end, 0, &tmp, out);
  fx_buf_free (&tmp);
  if (q && skip_ws (q, end) == end)
    return true;
  out->len = mark;
  if (out->data)
    out->data[mark] = 0;
  return false;
}
