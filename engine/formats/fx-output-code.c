/* fx-output-code.c: splits Inductor's generated wrapper (output_code.py) into its kernels, with the source-node
   comments Inductor writes above each and the order call() launches them in. */
#include "fx/importers.h"
#include "fx-import-util.h"
#include "fx-md5.h"

#include <stdlib.h>
#include <string.h>

static bool
is_ident (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* "[a, b], Original ATen: [x, y]" -> the text inside the first [ ] */
static const char *
bracket_list (fx_arena *arena, const char *p, const char *end, const char **after)
{
  const char *open = memchr (p, '[', (size_t) (end - p));
  if (!open)
    return NULL;
  const char *close = memchr (open, ']', (size_t) (end - open));
  if (!close)
    return NULL;
  if (after)
    *after = close + 1;
  return fx_arena_strndup (arena, open + 1, (size_t) (close - open - 1));
}

static const char *
find_in (const char *p, const char *end, const char *needle)
{
  size_t n = strlen (needle);
  for (; p + n <= end; p++)
    if (*p == needle[0] && memcmp (p, needle, n) == 0)
      return p;
  return NULL;
}

fx_status
fx_split_output_code (const char *text, size_t len, fx_arena *arena, fx_kernel_def **out, size_t *n,
                      fx_diag *diag)
{
  (void) diag;
  *out = NULL;
  *n = 0;
  size_t cap = 0;
  fx_kernel_def *defs = NULL;
  const char *end = text + len;
  const char *nodes = NULL, *aten = NULL;
  const char *defs_end = text;
  const char *p = text;
  while (p < end)
    {
      const char *eol = memchr (p, '\n', (size_t) (end - p));
      if (!eol)
        eol = end;
      static const char topo[] = "# Topologically Sorted Source Nodes: ";
      if ((size_t) (eol - p) > sizeof topo - 1 && memcmp (p, topo, sizeof topo - 1) == 0)
        {
          const char *after = NULL;
          nodes = bracket_list (arena, p + sizeof topo - 1, eol, &after);
          const char *orig = after ? find_in (after, eol, "Original ATen: ") : NULL;
          aten = orig ? bracket_list (arena, orig, eol, NULL) : NULL;
        }
      /* NAME = async_compile.KIND('NAME', ... ''' at column 0 */
      const char *q = p;
      while (q < eol && is_ident (*q))
        q++;
      static const char ac[] = " = async_compile.";
      if (q > p && (size_t) (eol - q) > sizeof ac - 1 && memcmp (q, ac, sizeof ac - 1) == 0)
        {
          const char *kind_start = q + sizeof ac - 1;
          const char *k = kind_start;
          while (k < eol && is_ident (*k))
            k++;
          const char *code_open = find_in (k, eol, "'''");
          const char *code_start = code_open ? code_open + 3 : eol;
          if (code_start < end && *code_start == '\n')
            code_start++;
          /* The string ends at a line that starts with ''' (''', device_str='cuda') */
          const char *close = find_in (code_start, end, "\n'''");
          const char *code_end = close ? close + 1 : code_start;
          const char *close_eol = close ? memchr (close + 1, '\n', (size_t) (end - close - 1)) : NULL;
          if (!close_eol)
            close_eol = end;
          if (*n == cap)
            defs = fx_arena_grow (arena, defs, &cap, sizeof *defs, 8);
          fx_kernel_def *d = &defs[(*n)++];
          memset (d, 0, sizeof *d);
          d->name = fx_arena_strndup (arena, p, (size_t) (q - p));
          size_t klen = (size_t) (k - kind_start);
          if (klen >= 6 && memcmp (kind_start, "triton", 6) == 0)
            d->kind = "triton";
          else if (klen >= 3 && memcmp (kind_start, "cpp", 3) == 0)
            d->kind = "cpp";
          else
            d->kind = fx_arena_strndup (arena, kind_start, klen);
          if (code_open)
            d->code = fx_arena_strndup (arena, code_start, (size_t) (code_end - code_start));
          const char *dev = close ? find_in (close, close_eol, "device_str='") : NULL;
          if (dev)
            {
              dev += strlen ("device_str='");
              const char *dev_end = memchr (dev, '\'', (size_t) (close_eol - dev));
              if (dev_end)
                d->device = fx_arena_strndup (arena, dev, (size_t) (dev_end - dev));
            }
          else if (strcmp (d->kind, "cpp") == 0)
            d->device = "cpu";
          d->nodes = nodes;
          d->aten = aten;
          d->call_order = -1;
          nodes = aten = NULL;
          p = close_eol < end ? close_eol + 1 : end;
          defs_end = p;
          continue;
        }
      p = eol < end ? eol + 1 : end;
    }

  /* Launch order: the first `NAME.run(` (Triton) or `NAME(` (C++) after the definitions. */
  const char **first = calloc (*n ? *n : 1, sizeof *first);
  for (size_t i = 0; i < *n; i++)
    {
      size_t nl = strlen (defs[i].name);
      for (const char *s = find_in (defs_end, end, defs[i].name); s; s = find_in (s + nl, end, defs[i].name))
        {
          if (s > text && is_ident (s[-1]))
            continue;
          const char *a = s + nl;
          if ((a < end && *a == '(') || (end - a > 5 && memcmp (a, ".run(", 5) == 0))
            {
              first[i] = s;
              break;
            }
        }
    }
  for (size_t i = 0; i < *n; i++)
    {
      if (!first[i])
        continue;
      int order = 0;
      for (size_t j = 0; j < *n; j++)
        if (first[j] && first[j] < first[i])
          order++;
      defs[i].call_order = order;
    }
  free (first);
  *out = defs;
  return FX_OK;
}

fx_status
fx_store_output_code_kernels (fx_store *store, int64_t input, int64_t compile_row, const char *text, size_t len,
                              int first_ordinal, const char *part, int64_t *n_kernels, fx_diag *diag)
{
  *n_kernels = 0;
  fx_arena *arena = fx_arena_new ();
  fx_kernel_def *defs = NULL;
  size_t n = 0;
  fx_buf names;
  fx_buf_init (&names);
  fx_status st = fx_split_output_code (text, len, arena, &defs, &n, diag);
  for (size_t i = 0; i < n && st == FX_OK; i++)
    {
      st = fx_store_add_kernel (store, compile_row, first_ordinal + (int) i, defs[i].call_order, defs[i].name,
                                defs[i].kind, defs[i].device, defs[i].code, defs[i].nodes, defs[i].aten, diag);
      if (st == FX_OK)
        (*n_kernels)++;
      if (names.len)
        fx_buf_putc (&names, ' ');
      fx_buf_puts (&names, defs[i].name ? defs[i].name : "?");
    }
  if (st == FX_OK && part)
    st = fx_store_set_kernels_part (store, compile_row, first_ordinal, part, diag);
  else if (st == FX_OK)
    {
      /* The trace payload and output_code.py differ at most in trailing newlines. */
      size_t trimmed = len;
      while (trimmed && (text[trimmed - 1] == '\n' || text[trimmed - 1] == '\r' || text[trimmed - 1] == ' '))
        trimmed--;
      char hex[33];
      fx_md5_hex (text, trimmed, hex);
      st = fx_store_add_output_code (store, input, compile_row, hex, names.len ? names.data : NULL, diag);
    }
  fx_buf_free (&names);
  fx_arena_free (arena);
  return st;
}

/* The launches of call(): "NAME.run(args" (Triton), "NAME(args" (C++) for a kernel defined above, or
   "extern_kernels.NAME(args", with the debug handle of the "# [Provenance debug handles] NAME:N" comment above. */
fx_status
fx_output_code_launches (const char *text, size_t len, fx_arena *arena, fx_kernel_launch **out, size_t *n,
                         fx_diag *diag)
{
  *out = NULL;
  *n = 0;
  fx_kernel_def *defs;
  size_t nd = 0;
  fx_status st = fx_split_output_code (text, len, arena, &defs, &nd, diag);
  if (st != FX_OK)
    return st;
  const char *end = text + len;
  const char *call = find_in (text, end, "def call(");
  size_t cap = 0;
  fx_kernel_launch *launches = NULL;
  const char *handle_name = NULL;
  size_t handle_len = 0;
  int handle = -1;
  for (const char *p = call; p && p < end;)
    {
      const char *eol = memchr (p, '\n', (size_t) (end - p));
      if (!eol)
        eol = end;
      const char *s = p;
      while (s < eol && *s == ' ')
        s++;
      static const char prov[] = "# [Provenance debug handles] ";
      if ((size_t) (eol - s) > sizeof prov - 1 && memcmp (s, prov, sizeof prov - 1) == 0)
        {
          const char *name = s + sizeof prov - 1;
          const char *colon = NULL;
          for (const char *c = eol; c > name; c--)
            if (c[-1] == ':')
              {
                colon = c - 1;
                break;
              }
          if (colon && colon + 1 < eol && colon[1] >= '0' && colon[1] <= '9' && eol - colon < 10)
            {
              handle_name = name;
              handle_len = (size_t) (colon - name);
              handle = atoi (colon + 1);
            }
        }
      else
        {
          const char *q = s;
          while (q < eol && (is_ident (*q) || *q == '.'))
            q++;
          size_t nl = (size_t) (q - s);
          const char *name_end = q;
          if (nl > 4 && memcmp (q - 4, ".run", 4) == 0)
            name_end = q - 4;
          bool known = nl > 15 && memcmp (s, "extern_kernels.", 15) == 0;
          size_t kl = (size_t) (name_end - s);
          for (size_t i = 0; i < nd && !known; i++)
            known = strlen (defs[i].name) == kl && memcmp (defs[i].name, s, kl) == 0;
          if (known && q < eol && *q == '(')
            {
              if (*n == cap)
                launches = fx_arena_grow (arena, launches, &cap, sizeof *launches, 16);
              fx_kernel_launch *l = &launches[(*n)++];
              l->kernel = fx_arena_strndup (arena, s, kl);
              l->args = fx_arena_strndup (arena, q + 1, (size_t) (eol - q - 1));
              l->handle = handle_name && handle_len == kl && memcmp (handle_name, s, kl) == 0 ? handle : -1;
              handle_name = NULL;
              handle = -1;
            }
        }
      p = eol < end ? eol + 1 : NULL;
    }
  *out = launches;
  return FX_OK;
}

/* name as a whole identifier inside args ("buf3" in "arg2_1, buf3, 32", not in "buf30"). */
static bool
has_token (const char *args, const char *name, size_t nl)
{
  for (const char *s = strstr (args, name); s; s = strstr (s + 1, name))
    if ((s == args || !is_ident (s[-1])) && !is_ident (s[nl]))
      return true;
  return false;
}

int
fx_launch_writing (const fx_kernel_launch *launches, size_t n, const char *writes)
{
  /* A buffer is written before anything reads it, so the first launch naming any written buffer writes it. */
  for (size_t i = 0; writes && i < n; i++)
    for (const char *w = writes; *w;)
      {
        const char *e = strstr (w, ", ");
        size_t wl = e ? (size_t) (e - w) : strlen (w);
        char name[128];
        if (wl > 0 && wl < sizeof name)
          {
            memcpy (name, w, wl);
            name[wl] = 0;
            if (has_token (launches[i].args, name, wl))
              return (int) i;
          }
        w += wl + (e ? 2 : 0);
      }
  return -1;
}
