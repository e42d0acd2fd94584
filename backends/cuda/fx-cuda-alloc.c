/* fx-cuda-alloc.c: the caching device allocator: size classes, free blocks kept per pool and reused in stream
   order, private pools for CUDA graph captures, and the statistics (peak, allocated, cached) runs report. */
#include "fx-cuda-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CU (fx_cuda_libs_driver ()->cu)

#define SMALL_LIMIT ((size_t) 1 << 20)
#define SMALL_ROUND ((size_t) 512)
#define LARGE_ROUND ((size_t) 2 << 20)

static fx_cuda_block tombstone_block;
#define TOMBSTONE (&tombstone_block)

size_t
fx_cuda_alloc_round (size_t nbytes)
{
  if (nbytes == 0)
    return SMALL_ROUND;
  if (nbytes < SMALL_LIMIT)
    return (nbytes + SMALL_ROUND - 1) / SMALL_ROUND * SMALL_ROUND;
  return (nbytes + LARGE_ROUND - 1) / LARGE_ROUND * LARGE_ROUND;
}

void
fx_cuda_alloc_init (fx_cuda_allocator *alloc)
{
  memset (alloc, 0, sizeof *alloc);
  pthread_mutex_init (&alloc->lock, NULL);
}

/* ---------------------------------------------------------------- the block table (address -> block) */

static size_t
hash_ptr (fx_CUdeviceptr ptr, size_t cap)
{
  return (size_t) (((uint64_t) ptr >> 8) * 0x9E3779B97F4A7C15ull >> 7) & (cap - 1);
}

static bool table_insert (fx_cuda_allocator *alloc, fx_cuda_block *block);

static bool
table_grow (fx_cuda_allocator *alloc)
{
  size_t old_cap = alloc->table_cap;
  fx_cuda_block **old = alloc->table;
  size_t cap = old_cap ? old_cap * 2 : 256;

  alloc->table = calloc (cap, sizeof *alloc->table);
  if (!alloc->table)
    {
      alloc->table = old;
      return false;
    }
  alloc->table_cap = cap;
  alloc->table_count = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i] && old[i] != TOMBSTONE)
      table_insert (alloc, old[i]);
  free (old);
  return true;
}

/* table_count counts tombstones too, so probing always ends at an empty slot. */
static bool
table_insert (fx_cuda_allocator *alloc, fx_cuda_block *block)
{
  size_t i;

  if ((alloc->table_count + 1) * 4 > alloc->table_cap * 3 && !table_grow (alloc))
    return false;
  i = hash_ptr (block->ptr, alloc->table_cap);
  while (alloc->table[i] && alloc->table[i] != TOMBSTONE)
    i = (i + 1) & (alloc->table_cap - 1);
  if (!alloc->table[i])
    alloc->table_count++;
  alloc->table[i] = block;
  return true;
}

static fx_cuda_block **
table_find (fx_cuda_allocator *alloc, fx_CUdeviceptr ptr)
{
  size_t i;

  if (!alloc->table_cap)
    return NULL;
  i = hash_ptr (ptr, alloc->table_cap);
  while (alloc->table[i])
    {
      if (alloc->table[i] != TOMBSTONE && alloc->table[i]->ptr == ptr)
        return &alloc->table[i];
      i = (i + 1) & (alloc->table_cap - 1);
    }
  return NULL;
}

/* ---------------------------------------------------------------- pools (free blocks sorted by size) */

static size_t
pool_lower_bound (const fx_cuda_pool *pool, size_t size)
{
  size_t lo = 0, hi = pool->n_free;
  while (lo < hi)
    {
      size_t mid = (lo + hi) / 2;
      if (pool->free_blocks[mid]->size < size)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static bool
pool_add (fx_cuda_allocator *alloc, fx_cuda_pool *pool, fx_cuda_block *block)
{
  size_t at;

  if (pool->n_free == pool->cap_free)
    {
      size_t cap = pool->cap_free ? pool->cap_free * 2 : 32;
      fx_cuda_block **blocks = realloc (pool->free_blocks, cap * sizeof *blocks);
      if (!blocks)
        return false;
      pool->free_blocks = blocks;
      pool->cap_free = cap;
    }
  at = pool_lower_bound (pool, block->size);
  memmove (pool->free_blocks + at + 1, pool->free_blocks + at, (pool->n_free - at) * sizeof *pool->free_blocks);
  pool->free_blocks[at] = block;
  pool->n_free++;
  pool->free_bytes += block->size;
  alloc->stats.cached_bytes += block->size;
  return true;
}

static void
pool_remove_at (fx_cuda_allocator *alloc, fx_cuda_pool *pool, size_t at)
{
  fx_cuda_block *block = pool->free_blocks[at];
  memmove (pool->free_blocks + at, pool->free_blocks + at + 1, (pool->n_free - at - 1) * sizeof *pool->free_blocks);
  pool->n_free--;
  pool->free_bytes -= block->size;
  alloc->stats.cached_bytes -= block->size;
}

/* Best fit among blocks ordered on the same stream: the same class for small requests; for large ones at most a
   quarter more than asked (blocks are not split, so a bigger match would waste the rest). */
static fx_cuda_block *
pool_take (fx_cuda_allocator *alloc, fx_cuda_pool *pool, size_t size, fx_cuda_stream *stream)
{
  size_t limit = size < SMALL_LIMIT ? size : size + size / 4;

  for (size_t i = pool_lower_bound (pool, size); i < pool->n_free && pool->free_blocks[i]->size <= limit; i++)
    if (pool->free_blocks[i]->stream == stream)
      {
        fx_cuda_block *block = pool->free_blocks[i];
        pool_remove_at (alloc, pool, i);
        return block;
      }
  return NULL;
}

/* Gives the pool's free blocks back to the driver. The caller holds the lock and has synchronized. */
static void
pool_release_to_driver (fx_cuda_allocator *alloc, fx_cuda_pool *pool)
{
  for (size_t i = 0; i < pool->n_free; i++)
    {
      fx_cuda_block *block = pool->free_blocks[i];
      fx_cuda_block **slot = table_find (alloc, block->ptr);
      CU.cuMemFree (block->ptr);
      alloc->stats.n_device_frees++;
      alloc->stats.reserved_bytes -= block->size;
      alloc->stats.cached_bytes -= block->size;
      if (slot)
        *slot = TOMBSTONE;
      free (block);
    }
  pool->n_free = 0;
  pool->free_bytes = 0;
}

/* ---------------------------------------------------------------- public */

static void
note_peaks (fx_cuda_alloc_stats *s)
{
  if (s->allocated_bytes > s->peak_allocated_bytes)
    s->peak_allocated_bytes = s->allocated_bytes;
  if (s->reserved_bytes > s->peak_reserved_bytes)
    s->peak_reserved_bytes = s->reserved_bytes;
}

fx_status
fx_cuda_malloc (fx_cuda *cuda, size_t nbytes, fx_cuda_stream *stream, fx_cuda_ptr *out, fx_diag *diag)
{
  fx_cuda_allocator *alloc = &cuda->alloc;
  fx_cuda_stream *s = stream ? stream : cuda->default_stream;
  fx_cuda_pool *pool;
  size_t size = fx_cuda_alloc_round (nbytes);
  fx_cuda_block *block;
  fx_CUdeviceptr ptr = 0;
  fx_CUresult res;
  fx_status st;

  *out = 0;
  if (nbytes > ((size_t) 1 << 48))
    return fx_diag_set (diag, FX_ERR_NOMEM, "device allocation of %zu bytes is out of range", nbytes);
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return st;
  pthread_mutex_lock (&alloc->lock);
  pool = s->capture_pool ? s->capture_pool : &alloc->general;
  alloc->stats.n_allocs++;
  block = pool_take (alloc, pool, size, s);
  if (block)
    alloc->stats.n_cache_hits++;
  else
    {
      res = CU.cuMemAlloc (&ptr, size);
      if (res == FX_CUDA_ERROR_OUT_OF_MEMORY && !s->capture_pool)
        {
          /* The cache may hold what the driver lacks: give it back and try once more. */
          CU.cuCtxSynchronize ();
          pool_release_to_driver (alloc, &alloc->general);
          res = CU.cuMemAlloc (&ptr, size);
        }
      if (res != FX_CUDA_SUCCESS)
        {
          fx_diag why;
          fx_diag_clear (&why);
          st = fx_cuda_check (res, "cuMemAlloc", &why);
          fx_diag_set (diag, st, "%s; %zu bytes asked, %zu allocated, %zu cached", why.message, nbytes,
                       alloc->stats.allocated_bytes, alloc->stats.cached_bytes);
          pthread_mutex_unlock (&alloc->lock);
          return st;
        }
      block = calloc (1, sizeof *block);
      if (block)
        block->ptr = ptr;
      if (!block || !table_insert (alloc, block))
        {
          free (block);
          CU.cuMemFree (ptr);
          pthread_mutex_unlock (&alloc->lock);
          return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
        }
      block->size = size;
      block->stream = s;
      block->pool = pool;
      alloc->stats.n_device_allocs++;
      alloc->stats.reserved_bytes += size;
    }
  block->live = true;
  block->requested = nbytes;
  alloc->stats.allocated_bytes += block->size;
  alloc->stats.requested_bytes += nbytes;
  note_peaks (&alloc->stats);
  *out = block->ptr;
  pthread_mutex_unlock (&alloc->lock);
  return FX_OK;
}

void
fx_cuda_free (fx_cuda *cuda, fx_cuda_ptr ptr)
{
  fx_cuda_allocator *alloc = &cuda->alloc;
  fx_cuda_block **slot;
  fx_cuda_block *block;

  if (ptr == 0)
    return;
  pthread_mutex_lock (&alloc->lock);
  slot = table_find (alloc, ptr);
  if (!slot || !(*slot)->live)
    {
      pthread_mutex_unlock (&alloc->lock);
      fprintf (stderr, "fx-cuda: free of 0x%llx, which is not a live allocation\n", (unsigned long long) ptr);
      return;
    }
  block = *slot;
  block->live = false;
  alloc->stats.n_frees++;
  alloc->stats.allocated_bytes -= block->size;
  alloc->stats.requested_bytes -= block->requested;
  block->requested = 0;
  if (!pool_add (alloc, block->pool, block))
    {
      /* No room to cache it: hand it straight back (after the work that may still use it). */
      CU.cuCtxSynchronize ();
      CU.cuMemFree (block->ptr);
      alloc->stats.n_device_frees++;
      alloc->stats.reserved_bytes -= block->size;
      *slot = TOMBSTONE;
      free (block);
    }
  pthread_mutex_unlock (&alloc->lock);
}

size_t
fx_cuda_alloc_block_size (fx_cuda *cuda, fx_cuda_ptr ptr)
{
  fx_cuda_block **slot;
  size_t size = 0;

  pthread_mutex_lock (&cuda->alloc.lock);
  slot = table_find (&cuda->alloc, ptr);
  if (slot && (*slot)->live)
    size = (*slot)->size;
  pthread_mutex_unlock (&cuda->alloc.lock);
  return size;
}

void
fx_cuda_alloc_get_stats (fx_cuda *cuda, fx_cuda_alloc_stats *stats)
{
  pthread_mutex_lock (&cuda->alloc.lock);
  *stats = cuda->alloc.stats;
  pthread_mutex_unlock (&cuda->alloc.lock);
}

void
fx_cuda_alloc_reset_peak (fx_cuda *cuda)
{
  pthread_mutex_lock (&cuda->alloc.lock);
  cuda->alloc.stats.peak_allocated_bytes = cuda->alloc.stats.allocated_bytes;
  cuda->alloc.stats.peak_reserved_bytes = cuda->alloc.stats.reserved_bytes;
  pthread_mutex_unlock (&cuda->alloc.lock);
}

fx_status
fx_cuda_empty_cache (fx_cuda *cuda, fx_diag *diag)
{
  fx_status st = fx_cuda_synchronize (cuda, diag);
  if (st != FX_OK)
    return st;
  pthread_mutex_lock (&cuda->alloc.lock);
  pool_release_to_driver (&cuda->alloc, &cuda->alloc.general);
  pthread_mutex_unlock (&cuda->alloc.lock);
  return FX_OK;
}

/* A graph is going away: its free blocks join the general cache (ordered on the default stream after a
   synchronize), its live blocks become ordinary ones. */
void
fx_cuda_pool_release (fx_cuda *cuda, fx_cuda_pool *pool)
{
  fx_cuda_allocator *alloc = &cuda->alloc;

  if (fx_cuda_enter (cuda, NULL) == FX_OK)
    CU.cuCtxSynchronize ();
  pthread_mutex_lock (&alloc->lock);
  for (size_t i = 0; i < alloc->table_cap; i++)
    {
      fx_cuda_block *block = alloc->table[i];
      if (block && block != TOMBSTONE && block->pool == pool)
        block->pool = &alloc->general;
    }
  for (size_t i = 0; i < pool->n_free; i++)
    {
      fx_cuda_block *block = pool->free_blocks[i];
      alloc->stats.cached_bytes -= block->size;   /* pool_add counts it again */
      block->stream = cuda->default_stream;
      if (!pool_add (alloc, &alloc->general, block))
        {
          fx_cuda_block **slot = table_find (alloc, block->ptr);
          CU.cuMemFree (block->ptr);
          alloc->stats.n_device_frees++;
          alloc->stats.reserved_bytes -= block->size;
          if (slot)
            *slot = TOMBSTONE;
          free (block);
        }
    }
  free (pool->free_blocks);
  memset (pool, 0, sizeof *pool);
  pthread_mutex_unlock (&alloc->lock);
}

void
fx_cuda_alloc_destroy (fx_cuda *cuda)
{
  fx_cuda_allocator *alloc = &cuda->alloc;

  pthread_mutex_lock (&alloc->lock);
  for (size_t i = 0; i < alloc->table_cap; i++)
    {
      fx_cuda_block *block = alloc->table[i];
      if (block && block != TOMBSTONE)
        {
          CU.cuMemFree (block->ptr);
          free (block);
        }
    }
  free (alloc->table);
  free (alloc->general.free_blocks);
  alloc->table = NULL;
  alloc->table_cap = alloc->table_count = 0;
  memset (&alloc->general, 0, sizeof alloc->general);
  pthread_mutex_unlock (&alloc->lock);
}
