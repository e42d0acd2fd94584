/* fx-md5-worker.c: the md5 work of a TORCH_TRACE import (the file's identity hash and the has_payload checks) on a
   second thread, fed in batches through a bounded queue. */
#include "fx-md5.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A batch is a run of records, each a header then its bytes. The parser fills one while the worker hashes others;
   at most MAX_BATCHES exist, so what waits in the queue stays near MAX_BATCHES * BATCH_BYTES whatever the file.
   The worker keeps up to MAX_RUNS file records unhashed, to hash payloads beside them (fx_md5_update2: two messages
   for little more than the price of one); it never holds so many batches that the parser waits on them. */
enum { BATCH_BYTES = 1 << 20, MAX_BATCHES = 6, MAX_RUNS = 2, KIND_MAX = 127 };

typedef struct
{
  size_t len;
  int64_t line;
  char kind;                  /* 'F': file bytes, 'P': a payload to check */
  bool want_exact;            /* has_payload is 32 characters (anything else never matches) */
  char want[33];
  char what[KIND_MAX + 1];    /* the record kind, for the warning */
} record_head;

typedef struct batch
{
  struct batch *next;
  size_t len, cap;
  char *data;
  int held;       /* file runs of the worker that point into it */
  bool hashed;    /* run_batch went through it */
} batch;

/* File bytes the worker has not hashed yet, in file order. */
typedef struct
{
  batch *b;
  const char *p;
  size_t left;
} file_run;

struct fx_md5_worker
{
  bool threaded;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  batch *queue, *queue_tail; /* full batches waiting for the worker, oldest first */
  batch *spare;              /* hashed batches, for reuse */
  batch *filling;            /* the parser's current batch */
  int n_batches;
  bool closing;
  /* Written by the worker only; read once it has ended. */
  file_run runs[MAX_RUNS];
  int n_runs;
  fx_md5 file;
  int64_t mismatches;
  fx_import_example examples[FX_IMPORT_EXAMPLES];
};

/* A batch the worker is done with goes back to the parser. */
static void
give_back (fx_md5_worker *w, batch *b)
{
  pthread_mutex_lock (&w->lock);
  b->len = 0;
  b->held = 0;
  b->hashed = false;
  if (b->cap > 4 * BATCH_BYTES)
    {
      /* grown for one huge payload: not kept */
      free (b->data);
      b->data = NULL;
      b->cap = 0;
    }
  b->next = w->spare;
  w->spare = b;
  pthread_cond_broadcast (&w->changed);
  pthread_mutex_unlock (&w->lock);
}

/* The oldest file run is used up: its batch goes back once nothing else points into it. */
static void
drop_run (fx_md5_worker *w)
{
  batch *b = w->runs[0].b;
  memmove (w->runs, w->runs + 1, (size_t) --w->n_runs * sizeof w->runs[0]);
  if (--b->held == 0 && b->hashed)
    give_back (w, b);
}

static void
hash_oldest_run (fx_md5_worker *w)
{
  fx_md5_update (&w->file, w->runs[0].p, w->runs[0].left);
  drop_run (w);
}

/* A payload's md5, its whole blocks hashed beside the file's waiting bytes as far as they go. */
static void
payload_md5 (fx_md5_worker *w, const char *bytes, size_t len, char hex[33])
{
  fx_md5 m;
  fx_md5_init (&m);
  while (len >= 64 && w->n_runs > 0)
    {
      file_run *r = &w->runs[0];
      size_t n = fx_md5_update2 (&m, bytes, &w->file, r->p, len < r->left ? len : r->left);
      if (n == 0)
        break;
      bytes += n;
      len -= n;
      r->p += n;
      r->left -= n;
      if (r->left == 0)
        drop_run (w);
    }
  fx_md5_update (&m, bytes, len);
  fx_md5_final_hex (&m, hex);
}

static void
run_batch (fx_md5_worker *w, batch *b)
{
  for (size_t off = 0; off < b->len;)
    {
      record_head h;
      memcpy (&h, b->data + off, sizeof h);
      const char *bytes = b->data + off + sizeof h;
      off += sizeof h + h.len;
      if (h.kind == 'F' && !w->threaded)
        fx_md5_update (&w->file, bytes, h.len);
      else if (h.kind == 'F')
        {
          /* Kept for the payloads to come; in order behind the runs already kept. */
          if (w->n_runs == MAX_RUNS)
            hash_oldest_run (w);
          w->runs[w->n_runs++] = (file_run) { b, bytes, h.len };
          b->held++;
        }
      if (h.kind == 'F')
        continue;
      char hex[33];
      payload_md5 (w, bytes, h.len, hex);
      if (h.want_exact && memcmp (hex, h.want, 32) == 0)
        continue;
      /* The text fx-trace-import.c's warn() would have written. */
      if (w->mismatches < FX_IMPORT_EXAMPLES)
        {
          fx_import_example *ex = &w->examples[w->mismatches];
          ex->line = h.line;
          char text[sizeof h.what + 96];
          snprintf (text, sizeof text, "%s: has_payload %.32s, payload md5 %s", h.what, h.want, hex);
          memcpy (ex->text, text, sizeof ex->text - 1);
          ex->text[sizeof ex->text - 1] = 0;
        }
      w->mismatches++;
    }
}

static void *
worker_main (void *arg)
{
  fx_md5_worker *w = arg;
  pthread_mutex_lock (&w->lock);
  for (;;)
    {
      while (!w->queue && !w->closing)
        pthread_cond_wait (&w->changed, &w->lock);
      batch *b = w->queue;
      if (!b)
        break;
      w->queue = b->next;
      if (!w->queue)
        w->queue_tail = NULL;
      pthread_mutex_unlock (&w->lock);
      run_batch (w, b);
      b->hashed = true;
      if (b->held == 0)
        give_back (w, b);
      pthread_mutex_lock (&w->lock);
    }
  pthread_mutex_unlock (&w->lock);
  /* The end: the file's last bytes. */
  while (w->n_runs > 0)
    hash_oldest_run (w);
  return NULL;
}

fx_md5_worker *
fx_md5_worker_new (bool threaded)
{
  fx_md5_worker *w = calloc (1, sizeof *w);
  if (!w)
    return NULL;
  fx_md5_init (&w->file);
  pthread_mutex_init (&w->lock, NULL);
  pthread_cond_init (&w->changed, NULL);
  /* Without a thread (or when one cannot start) the same batches are hashed as they fill. */
  w->threaded = threaded && pthread_create (&w->thread, NULL, worker_main, w) == 0;
  return w;
}

/* Hands the current batch over (to the worker, or hashes it here) and gets an empty one with room for need more
   bytes. False when out of memory. */
static bool
next_batch (fx_md5_worker *w, size_t need)
{
  batch *b = w->filling;
  if (b && b->len && !w->threaded)
    {
      run_batch (w, b);
      b->len = 0;
    }
  else if (b && b->len)
    {
      pthread_mutex_lock (&w->lock);
      b->next = NULL;
      if (w->queue_tail)
        w->queue_tail->next = b;
      else
        w->queue = b;
      w->queue_tail = b;
      pthread_cond_broadcast (&w->changed);
      while (!w->spare && w->n_batches >= MAX_BATCHES)
        pthread_cond_wait (&w->changed, &w->lock);
      b = w->spare;
      if (b)
        w->spare = b->next;
      pthread_mutex_unlock (&w->lock);
      w->filling = b;
    }
  if (!b)
    {
      b = calloc (1, sizeof *b);
      if (!b)
        return false;
      w->n_batches++;
      w->filling = b;
    }
  if (b->cap < need)
    {
      size_t cap = need > BATCH_BYTES ? need : BATCH_BYTES;
      char *data = realloc (b->data, cap);
      if (!data)
        return false;
      b->data = data;
      b->cap = cap;
    }
  return true;
}

static bool
put (fx_md5_worker *w, const record_head *h, const void *bytes)
{
  size_t need = sizeof *h + h->len;
  batch *b = w->filling;
  if ((!b || b->len + need > b->cap) && !next_batch (w, need))
    return false;
  b = w->filling;
  memcpy (b->data + b->len, h, sizeof *h);
  memcpy (b->data + b->len + sizeof *h, bytes, h->len);
  b->len += need;
  /* A full batch goes at once: the worker starts while the parser reads on. */
  if (b->len >= BATCH_BYTES)
    return next_batch (w, 0);
  return true;
}

bool
fx_md5_worker_file (fx_md5_worker *w, const void *data, size_t len)
{
  record_head h = { .len = len, .kind = 'F' };
  return put (w, &h, data);
}

bool
fx_md5_worker_check (fx_md5_worker *w, const void *payload, size_t len, const char *want, const char *what,
                     int64_t line)
{
  record_head h = { .len = len, .line = line, .kind = 'P' };
  size_t n = strlen (want);
  h.want_exact = n == 32;
  snprintf (h.want, sizeof h.want, "%.32s", want);
  snprintf (h.what, sizeof h.what, "%s", what);
  return put (w, &h, payload);
}

bool
fx_md5_worker_finish (fx_md5_worker *w, char hex[33], int64_t *mismatches, fx_import_example examples[])
{
  bool ok = true;
  if (w->filling && w->filling->len)
    ok = next_batch (w, 0);
  if (w->threaded)
    {
      pthread_mutex_lock (&w->lock);
      w->closing = true;
      pthread_cond_broadcast (&w->changed);
      pthread_mutex_unlock (&w->lock);
      pthread_join (w->thread, NULL);
      w->threaded = false;
    }
  if (hex)
    fx_md5_final_hex (&w->file, hex);
  *mismatches = w->mismatches;
  for (int64_t i = 0; i < w->mismatches && i < FX_IMPORT_EXAMPLES; i++)
    examples[i] = w->examples[i];
  return ok;
}

void
fx_md5_worker_free (fx_md5_worker *w)
{
  if (!w)
    return;
  if (w->threaded)
    {
      int64_t n;
      fx_import_example ex[FX_IMPORT_EXAMPLES];
      fx_md5_worker_finish (w, NULL, &n, ex);
    }
  batch *lists[] = { w->queue, w->spare, w->filling };
  for (size_t i = 0; i < 3; i++)
    for (batch *b = lists[i], *next; b; b = next)
      {
        next = b == w->filling ? NULL : b->next;
        free (b->data);
        free (b);
      }
  pthread_mutex_destroy (&w->lock);
  pthread_cond_destroy (&w->changed);
  free (w);
}
