/* fx-arena.c: the bump allocator that owns a graph's nodes, arguments and strings. */
#include "fx/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fx_chunk fx_chunk;
struct fx_chunk
{
  fx_chunk *next;
  size_t size;
  size_t used;
  _Alignas (16) unsigned char data[];
};

struct fx_arena
{
  fx_chunk *head;
  size_t total;
};

enum { FX_ARENA_CHUNK = 64 * 1024 };

static void *
xmalloc (size_t size)
{
  void *p = malloc (size);
  if (p == NULL)
    {
      /* Out of memory is not an input error: there is no way to report it from deep inside a printer. */
      fprintf (stderr, "fx: out of memory (%zu bytes)\n", size);
      abort ();
    }
  return p;
}

fx_arena *
fx_arena_new (void)
{
  fx_arena *arena = xmalloc (sizeof *arena);
  arena->head = NULL;
  arena->total = 0;
  return arena;
}

void
fx_arena_free (fx_arena *arena)
{
  if (arena == NULL)
    return;
  for (fx_chunk *c = arena->head, *next; c != NULL; c = next)
    {
      next = c->next;
      free (c);
    }
  free (arena);
}

void *
fx_arena_alloc (fx_arena *arena, size_t size)
{
  fx_chunk *c = arena->head;
  size = (size + 15) & ~(size_t) 15;
  if (size == 0)
    size = 16;
  if (c == NULL || c->size - c->used < size)
    {
      size_t chunk = size > FX_ARENA_CHUNK / 4 ? size : FX_ARENA_CHUNK;
      fx_chunk *n = xmalloc (sizeof *n + chunk);
      n->size = chunk;
      n->used = 0;
      if (chunk == size && c != NULL)
        {
          /* A large block: keep the current chunk at the head so its free space stays usable. */
          n->next = c->next;
          c->next = n;
        }
      else
        {
          n->next = c;
          arena->head = n;
        }
      arena->total += chunk;
      c = n;
    }
  void *p = c->data + c->used;
  c->used += size;
  memset (p, 0, size);
  return p;
}

char *
fx_arena_strndup (fx_arena *arena, const char *s, size_t n)
{
  if (s == NULL)
    return NULL;
  char *p = fx_arena_alloc (arena, n + 1);
  memcpy (p, s, n);
  p[n] = '\0';
  return p;
}

char *
fx_arena_strdup (fx_arena *arena, const char *s)
{
  return s == NULL ? NULL : fx_arena_strndup (arena, s, strlen (s));
}

char *
fx_arena_printf (fx_arena *arena, const char *fmt, ...)
{
  va_list ap, ap2;
  char small[256];
  if (fmt == NULL) /* keeps GCC's -Wformat-truncation quiet under -fsanitize */
    return fx_arena_strdup (arena, "");
  va_start (ap, fmt);
  va_copy (ap2, ap);
  int n = vsnprintf (small, sizeof small, fmt, ap);
  va_end (ap);
  if (n < 0)
    n = 0;
  char *p = fx_arena_alloc (arena, (size_t) n + 1);
  if ((size_t) n < sizeof small)
    memcpy (p, small, (size_t) n + 1);
  else
    vsnprintf (p, (size_t) n + 1, fmt, ap2);
  va_end (ap2);
  return p;
}

size_t
fx_arena_bytes (const fx_arena *arena)
{
  return arena->total;
}

void *
fx_arena_grow (fx_arena *arena, const void *old, size_t *cap, size_t item, size_t first)
{
  size_t ncap = *cap ? *cap * 2 : first;
  void *grown = fx_arena_alloc (arena, ncap * item);
  if (old && *cap)
    memcpy (grown, old, *cap * item);
  *cap = ncap;
  return grown;
}

const char **
fx_arena_strv_append (fx_arena *arena, const char **v, size_t *n, const char *s)
{
  const char **grown = fx_arena_alloc (arena, sizeof (char *) * (*n + 1));
  if (*n)
    memcpy (grown, v, sizeof (char *) * *n);
  grown[(*n)++] = fx_arena_strdup (arena, s);
  return grown;
}
