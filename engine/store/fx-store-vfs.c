/* fx-store-vfs.c: the sqlite VFS workspaces are opened with. It is the platform's default VFS, except that during a
   bulk import the main database file's writes go to a writer thread.

   Why: on a gigabyte trace the import writes about as many bytes into the workspace as it reads, and the kernel's
   copy of those pages into the page cache (pwrite) was a third of the importing thread's time (`perf` on
   `fxwb import` of a 1 GB trace). The parser cannot wait on it; a second core can take it.

   How it stays correct: a write is copied into a queue and the call returns, as a write into the page cache
   returns before the data is on disk. Everything that could observe the file waits for the queue to be empty
   first: xSync (so a commit, which syncs, is on disk when it says so), xTruncate, xUnlock, xClose, and switching the
   mode off. A read that overlaps a queued write waits for it; other reads go to the file at once (pread and
   pwrite on distinct ranges do not interfere). xFileSize counts queued writes past the end. A write that fails on
   the thread is returned by the next call that waits, or the next write, and the file goes back to plain
   synchronous writes, so that the rollback that follows writes for real. Rollback-journal ordering is kept:
   sqlite writes database pages only after it has synced the journal, and queued writes are still issued in
   order, after that point. */
#include "fx-store-vfs.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Bytes the queue may hold before a write waits for the thread: bounds the import's memory, and is far more than
   one write's latency needs. */
enum { QUEUE_LIMIT = 8 << 20, WAKE_BYTES = 1 << 20, SPARE_LIMIT = (QUEUE_LIMIT + WAKE_BYTES) / 4096,
       SYNC_BYTES = 64 << 20 };

typedef struct pending
{
  struct pending *next;
  sqlite3_int64 off;
  int len, cap;
  char data[];
} pending;

typedef struct
{
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  pending *head, *tail;   /* queued, oldest first */
  pending *writing;       /* taken by the thread, being written (a list) */
  pending *spare;         /* written entries kept for reuse */
  int n_spare;
  size_t queued;          /* bytes of head..tail and writing */
  sqlite3_int64 end;      /* the largest off + len queued while on */
  int error;              /* the first failed background write's code, until returned */
  bool stop;
  /* Wake-ups cost more than a page's copy: the thread is woken when a megabyte waits (or someone waits on it),
     and wakes the caller only when it waits. */
  bool idle;              /* the thread waits for work */
  int waiters;            /* callers waiting for the thread */
  size_t unsynced;        /* bytes the thread wrote since it last synced (its own) */
} writer;

typedef struct
{
  sqlite3_file base;
  sqlite3_file *real;     /* the default VFS's file, right after this struct */
  bool main_db;           /* only the main database queues writes (journals stay synchronous) */
  writer *w;              /* non-NULL while writes are queued */
} shim_file;

static sqlite3_vfs shim_vfs;
static sqlite3_vfs *real_vfs;
static pthread_once_t register_once = PTHREAD_ONCE_INIT;
static bool registered;

static void *
writer_main (void *arg)
{
  shim_file *f = arg;
  writer *w = f->w;

  pthread_mutex_lock (&w->lock);
  for (;;)
    {
      while ((w->head == NULL || (w->queued < WAKE_BYTES && w->waiters == 0)) && !w->stop)
        {
          w->idle = true;
          pthread_cond_wait (&w->changed, &w->lock);
          w->idle = false;
        }
      if (w->head == NULL)
        break;
      /* The whole queue at once: one lock round for a megabyte of pages, not one per page. */
      pending *batch = w->head;
      w->head = w->tail = NULL;
      w->writing = batch;
      pthread_mutex_unlock (&w->lock);
      int rc = SQLITE_OK;
      size_t bytes = 0;
      int n = 0;
      pending *last = batch;
      for (pending *e = batch; e != NULL; e = e->next)
        {
          if (rc == SQLITE_OK)
            rc = f->real->pMethods->xWrite (f->real, e->data, e->len, e->off);
          bytes += (size_t) e->len;
          last = e;
          n++;
        }
      /* Pages in the page cache still have to reach the disk at the commit's sync, which the importer waits for
         (0.56 s at the end of a 1 GB trace): the thread syncs every SYNC_BYTES, so the disk works while the
         importer does. Syncing early never breaks the journal's order (it was synced before any of these). */
      w->unsynced += bytes;
      if (rc == SQLITE_OK && w->unsynced >= SYNC_BYTES)
        {
          rc = f->real->pMethods->xSync (f->real, SQLITE_SYNC_NORMAL);
          w->unsynced = 0;
        }
      pthread_mutex_lock (&w->lock);
      w->writing = NULL;
      w->queued -= bytes;
      if (rc != SQLITE_OK && w->error == SQLITE_OK)
        w->error = rc;
      last->next = w->spare;
      w->spare = batch;
      w->n_spare += n;
      /* More spare entries than a full queue holds are returned to the allocator. */
      while (w->n_spare > SPARE_LIMIT)
        {
          pending *e = w->spare;
          w->spare = e->next;
          w->n_spare--;
          free (e);
        }
      if (w->waiters > 0)
        pthread_cond_broadcast (&w->changed);
    }
  pthread_mutex_unlock (&w->lock);
  return NULL;
}

/* Waits for the thread to finish a write (or to stop). Lock held. */
static void
wait_locked (writer *w)
{
  w->waiters++;
  if (w->idle)
    pthread_cond_broadcast (&w->changed);
  pthread_cond_wait (&w->changed, &w->lock);
  w->waiters--;
}

/* Waits until every queued write is in the file. Lock held. */
static void
drain_locked (writer *w)
{
  while (w->head != NULL || w->writing != NULL)
    wait_locked (w);
}

static void free_list (pending *e);

/* Waits for w's queue to be empty, with stop also telling its thread to end; returns a background write's error. */
static int
drain_queue (writer *w, bool stop)
{
  pthread_mutex_lock (&w->lock);
  drain_locked (w);
  if (stop)
    {
      w->stop = true;
      pthread_cond_broadcast (&w->changed);
    }
  int rc = w->error;
  pthread_mutex_unlock (&w->lock);
  return rc;
}

/* Frees the writer of f, whose thread has ended or never started. */
static void
writer_free (shim_file *f)
{
  writer *w = f->w;
  pthread_mutex_destroy (&w->lock);
  pthread_cond_destroy (&w->changed);
  free (w);
  f->w = NULL;
}

/* Ends queuing: drains, stops the thread and returns a background write's error, if one is left. */
static int
writer_stop (shim_file *f)
{
  writer *w = f->w;
  if (w == NULL)
    return SQLITE_OK;
  int rc = drain_queue (w, true);
  pthread_join (w->thread, NULL);
  free_list (w->spare);
  writer_free (f);
  return rc;
}

static void
free_list (pending *e)
{
  while (e != NULL)
    {
      pending *next = e->next;
      free (e);
      e = next;
    }
}

static int
writer_start (shim_file *f)
{
  if (f->w != NULL)
    return SQLITE_OK;
  writer *w = calloc (1, sizeof *w);
  if (w == NULL)
    return SQLITE_NOMEM;
  pthread_mutex_init (&w->lock, NULL);
  pthread_cond_init (&w->changed, NULL);
  f->w = w;
  if (pthread_create (&w->thread, NULL, writer_main, f) != 0)
    writer_free (f); /* no thread: writes stay synchronous */
  return SQLITE_OK;
}

/* Waits for the queue to be empty; a background write's error ends queuing and is returned once. */
static int
drain (shim_file *f)
{
  if (f->w == NULL)
    return SQLITE_OK;
  int rc = drain_queue (f->w, false);
  if (rc != SQLITE_OK)
    writer_stop (f);
  return rc;
}

static bool
overlaps (const pending *e, sqlite3_int64 off, int amt)
{
  return e != NULL && e->off < off + amt && off < e->off + e->len;
}

/* ------------------------------------------------------------------ io methods */

static int
shim_close (sqlite3_file *file)
{
  shim_file *f = (shim_file *) file;
  int rc = writer_stop (f);
  int rc2 = f->real->pMethods ? f->real->pMethods->xClose (f->real) : SQLITE_OK;
  return rc != SQLITE_OK ? rc : rc2;
}

static int
shim_read (sqlite3_file *file, void *buf, int amt, sqlite3_int64 off)
{
  shim_file *f = (shim_file *) file;
  writer *w = f->w;
  if (w != NULL)
    {
      pthread_mutex_lock (&w->lock);
      bool wait = false;
      for (const pending *e = w->writing; e != NULL && !wait; e = e->next)
        wait = overlaps (e, off, amt);
      for (const pending *e = w->head; e != NULL && !wait; e = e->next)
        wait = overlaps (e, off, amt);
      if (wait)
        drain_locked (w);
      pthread_mutex_unlock (&w->lock);
    }
  return f->real->pMethods->xRead (f->real, buf, amt, off);
}

static int
shim_write (sqlite3_file *file, const void *buf, int amt, sqlite3_int64 off)
{
  shim_file *f = (shim_file *) file;
  writer *w = f->w;
  if (w == NULL)
    return f->real->pMethods->xWrite (f->real, buf, amt, off);

  pthread_mutex_lock (&w->lock);
  while (w->queued > QUEUE_LIMIT && w->error == SQLITE_OK)
    wait_locked (w);
  int rc = w->error;
  pending *e = NULL;
  if (rc == SQLITE_OK)
    {
      if (w->spare != NULL)
        {
          e = w->spare;
          w->spare = e->next;
          w->n_spare--;
        }
    }
  pthread_mutex_unlock (&w->lock);
  if (rc != SQLITE_OK)
    {
      drain (f);
      return rc;
    }
  if (e != NULL && e->cap < amt)
    {
      free (e);
      e = NULL;
    }
  if (e == NULL && (e = malloc (sizeof *e + (size_t) amt)) != NULL)
    e->cap = amt;
  if (e == NULL)
    {
      /* No memory for the copy: this write waits for the others and is made here. */
      if ((rc = drain (f)) != SQLITE_OK)
        return rc;
      return f->real->pMethods->xWrite (f->real, buf, amt, off);
    }
  memcpy (e->data, buf, (size_t) amt);
  e->off = off;
  e->len = amt;
  e->next = NULL;

  pthread_mutex_lock (&w->lock);
  if (w->tail != NULL)
    w->tail->next = e;
  else
    w->head = e;
  w->tail = e;
  w->queued += (size_t) amt;
  if (off + amt > w->end)
    w->end = off + amt;
  if (w->idle && w->queued >= WAKE_BYTES)
    pthread_cond_broadcast (&w->changed);
  pthread_mutex_unlock (&w->lock);
  return SQLITE_OK;
}

static int
shim_truncate (sqlite3_file *file, sqlite3_int64 size)
{
  shim_file *f = (shim_file *) file;
  int rc = drain (f);
  if (f->w != NULL)
    {
      pthread_mutex_lock (&f->w->lock);
      f->w->end = size;
      pthread_mutex_unlock (&f->w->lock);
    }
  return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate (f->real, size);
}

static int
shim_sync (sqlite3_file *file, int flags)
{
  shim_file *f = (shim_file *) file;
  int rc = drain (f);
  return rc != SQLITE_OK ? rc : f->real->pMethods->xSync (f->real, flags);
}

static int
shim_file_size (sqlite3_file *file, sqlite3_int64 *size)
{
  shim_file *f = (shim_file *) file;
  int rc = f->real->pMethods->xFileSize (f->real, size);
  writer *w = f->w;
  if (rc == SQLITE_OK && w != NULL)
    {
      pthread_mutex_lock (&w->lock);
      if (w->end > *size)
        *size = w->end;
      pthread_mutex_unlock (&w->lock);
    }
  return rc;
}

static int
shim_lock (sqlite3_file *file, int level)
{
  shim_file *f = (shim_file *) file;
  return f->real->pMethods->xLock (f->real, level);
}

static int
shim_unlock (sqlite3_file *file, int level)
{
  shim_file *f = (shim_file *) file;
  /* Another connection may read once the lock is gone: what this one wrote must be in the file by then. */
  int rc = drain (f);
  int rc2 = f->real->pMethods->xUnlock (f->real, level);
  return rc != SQLITE_OK ? rc : rc2;
}

static int
shim_check_reserved (sqlite3_file *file, int *out)
{
  shim_file *f = (shim_file *) file;
  return f->real->pMethods->xCheckReservedLock (f->real, out);
}

static int
shim_file_control (sqlite3_file *file, int op, void *arg)
{
  shim_file *f = (shim_file *) file;
  if (op == FX_STORE_FCNTL_QUEUE_WRITES)
    {
      if (!f->main_db || f->real->pMethods->iVersion < 1)
        return SQLITE_NOTFOUND;
      if (*(int *) arg)
        return writer_start (f);
      return writer_stop (f);
    }
  /* The default VFS's own controls may resize or map the file: nothing queued may be in flight. */
  if (op == SQLITE_FCNTL_SIZE_HINT || op == SQLITE_FCNTL_MMAP_SIZE || op == SQLITE_FCNTL_CHUNK_SIZE)
    {
      int rc = drain (f);
      if (rc != SQLITE_OK)
        return rc;
    }
  return f->real->pMethods->xFileControl (f->real, op, arg);
}

static int
shim_sector_size (sqlite3_file *file)
{
  shim_file *f = (shim_file *) file;
  return f->real->pMethods->xSectorSize (f->real);
}

static int
shim_device_characteristics (sqlite3_file *file)
{
  shim_file *f = (shim_file *) file;
  return f->real->pMethods->xDeviceCharacteristics (f->real);
}

static int
shim_shm_map (sqlite3_file *file, int page, int size, int extend, void volatile **out)
{
  shim_file *f = (shim_file *) file;
  if (f->real->pMethods->iVersion < 2)
    return SQLITE_IOERR_SHMMAP;
  return f->real->pMethods->xShmMap (f->real, page, size, extend, out);
}

static int
shim_shm_lock (sqlite3_file *file, int offset, int n, int flags)
{
  shim_file *f = (shim_file *) file;
  if (f->real->pMethods->iVersion < 2)
    return SQLITE_IOERR_SHMLOCK;
  return f->real->pMethods->xShmLock (f->real, offset, n, flags);
}

static void
shim_shm_barrier (sqlite3_file *file)
{
  shim_file *f = (shim_file *) file;
  if (f->real->pMethods->iVersion >= 2)
    f->real->pMethods->xShmBarrier (f->real);
}

static int
shim_shm_unmap (sqlite3_file *file, int delete_flag)
{
  shim_file *f = (shim_file *) file;
  if (f->real->pMethods->iVersion < 2)
    return SQLITE_OK;
  return f->real->pMethods->xShmUnmap (f->real, delete_flag);
}

static int
shim_fetch (sqlite3_file *file, sqlite3_int64 off, int amt, void **out)
{
  shim_file *f = (shim_file *) file;
  /* A mapped page could miss a queued write: while queuing, every read goes through xRead. */
  if (f->w != NULL || f->real->pMethods->iVersion < 3)
    {
      *out = NULL;
      return SQLITE_OK;
    }
  return f->real->pMethods->xFetch (f->real, off, amt, out);
}

static int
shim_unfetch (sqlite3_file *file, sqlite3_int64 off, void *p)
{
  shim_file *f = (shim_file *) file;
  if (f->real->pMethods->iVersion < 3)
    return SQLITE_OK;
  return f->real->pMethods->xUnfetch (f->real, off, p);
}

static const sqlite3_io_methods shim_methods = {
  .iVersion = 3,
  .xClose = shim_close,
  .xRead = shim_read,
  .xWrite = shim_write,
  .xTruncate = shim_truncate,
  .xSync = shim_sync,
  .xFileSize = shim_file_size,
  .xLock = shim_lock,
  .xUnlock = shim_unlock,
  .xCheckReservedLock = shim_check_reserved,
  .xFileControl = shim_file_control,
  .xSectorSize = shim_sector_size,
  .xDeviceCharacteristics = shim_device_characteristics,
  .xShmMap = shim_shm_map,
  .xShmLock = shim_shm_lock,
  .xShmBarrier = shim_shm_barrier,
  .xShmUnmap = shim_shm_unmap,
  .xFetch = shim_fetch,
  .xUnfetch = shim_unfetch,
};

/* ------------------------------------------------------------------ the vfs */

static int
shim_open (sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags)
{
  (void) vfs;
  shim_file *f = (shim_file *) file;
  memset (f, 0, sizeof *f);
  f->real = (sqlite3_file *) (f + 1);
  f->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
  int rc = real_vfs->xOpen (real_vfs, name, f->real, flags, out_flags);
  /* sqlite calls every file's methods through this struct; without real methods the open failed and no method is
     called (not even xClose). */
  if (f->real->pMethods != NULL)
    f->base.pMethods = &shim_methods;
  return rc;
}

static void
register_vfs (void)
{
  real_vfs = sqlite3_vfs_find (NULL);
  if (real_vfs == NULL)
    return;
  shim_vfs = *real_vfs;
  shim_vfs.szOsFile = (int) sizeof (shim_file) + real_vfs->szOsFile;
  shim_vfs.zName = "fxwb";
  shim_vfs.pNext = NULL;
  shim_vfs.xOpen = shim_open;
  registered = sqlite3_vfs_register (&shim_vfs, 0) == SQLITE_OK;
}

const char *
fx_store_vfs_name (void)
{
  pthread_once (&register_once, register_vfs);
  return registered ? shim_vfs.zName : NULL;
}
