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
            {
              size_t ncap = cap ? cap * 2 : 8;
              fx_kernel_def *grown = fx_arena_alloc (arena, ncap * sizeof *grown);
              if (defs)
                memcpy (grown, defs, cap * sizeof *grown);
              defs = grown;
              cap = ncap;
            }
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
                              int64_t *n_kernels, fx_diag *diag)
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
      st = fx_store_add_kernel (store, compile_row, (int) i, defs[i].call_order, defs[i].name, defs[i].kind,
                                defs[i].device, defs[i].code, defs[i].nodes, defs[i].aten, diag);
      if (st == FX_OK)
        (*n_kernels)++;
      if (names.len)
        fx_buf_putc (&names, ' ');
      fx_buf_puts (&names, defs[i].name ? defs[i].name : "?");
    }
  if (st == FX_OK)
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
