/* fx-tensor.c: strided tensors over reference-counted storages, the tracking allocator, element access and copies. */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "fx/tensor.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- half precision */

uint16_t
fx_f32_to_f16 (float value)
{
  uint32_t x;
  memcpy (&x, &value, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;

  if (exp == 0xffu)
    return (uint16_t) (sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0));
  int32_t e = (int32_t) exp - 127 + 15;
  if (e >= 31)
    return (uint16_t) (sign | 0x7c00u);
  if (e <= 0)
    {
      /* subnormal half (or zero): shift the full mantissa, round to nearest even */
      if (e < -10)
        return (uint16_t) sign;
      mant |= 0x800000u;
      int shift = 14 - e;
      uint32_t half = mant >> shift;
      uint32_t rem = mant & ((1u << shift) - 1);
      uint32_t mid = 1u << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1)))
        half++;
      return (uint16_t) (sign | half);
    }
  uint32_t half = sign | ((uint32_t) e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1)))
    half++; /* may carry into the exponent, which is the right result (up to inf) */
  return (uint16_t) half;
}

float
fx_f16_to_f32 (uint16_t bits)
{
  uint32_t sign = (uint32_t) (bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  uint32_t x;
  if (exp == 0)
    {
      if (mant == 0)
        x = sign;
      else
        {
          /* normalise the subnormal */
          int e = -1;
          do
            {
              e++;
              mant <<= 1;
            }
          while (!(mant & 0x400u));
          x = sign | ((uint32_t) (127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    }
  else if (exp == 31)
    x = sign | 0x7f800000u | (mant << 13);
  else
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  float f;
  memcpy (&f, &x, 4);
  return f;
}

uint16_t
fx_f32_to_bf16 (float value)
{
  uint32_t x;
  memcpy (&x, &value, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t) ((x >> 16) | 0x40u); /* quiet NaN */
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return (uint16_t) (x >> 16);
}

float
fx_bf16_to_f32 (uint16_t bits)
{
  uint32_t x = (uint32_t) bits << 16;
  float f;
  memcpy (&f, &x, 4);
  return f;
}

bool
fx_dtype_is_supported (fx_dtype dtype)
{
  switch (dtype)
    {
    case FX_DTYPE_F32: case FX_DTYPE_F64: case FX_DTYPE_F16: case FX_DTYPE_BF16:
    case FX_DTYPE_I64: case FX_DTYPE_I32: case FX_DTYPE_I16: case FX_DTYPE_I8:
    case FX_DTYPE_U8: case FX_DTYPE_BOOL:
      return true;
    default:
      return false;
    }
}

/* ---------------------------------------------------------------- allocator and storage */

static fx_allocator default_allocator;

fx_allocator *
fx_allocator_default (void)
{
  return &default_allocator;
}

void
fx_allocator_reset_peak (fx_allocator *alloc)
{
  alloc->peak_bytes = alloc->live_bytes;
}

/* Freed large blocks are kept for the next allocation of the same size: an interpreter run allocates the same
   shapes again and again, and fresh memory from the kernel costs a page fault per 4 KiB on first touch (glibc's own
   reuse stops at 32 MiB). Bounded in count and bytes; the least recently freed block goes first, and an allocation
   takes the most recently freed block of its size. (With 16 slots and slot 0 evicted first, blocks left from an
   earlier phase, such as the fp64 reference run, pushed out the ones each call reuses: attention_block faulted in
   ~100 MB of fresh pages per call.) The allocator's live/peak figures count only live storages. */
#define BLOCK_CACHE_SLOTS 64
#define BLOCK_CACHE_MIN ((size_t) 256 << 10)
#define BLOCK_CACHE_MAX_BYTES ((size_t) 512 << 20)

static struct
{
  pthread_mutex_t lock;
  void *data[BLOCK_CACHE_SLOTS];
  size_t size[BLOCK_CACHE_SLOTS];
  uint64_t stamp[BLOCK_CACHE_SLOTS];   /* when it was freed (a counter) */
  uint64_t clock;
  size_t bytes;
} block_cache = { PTHREAD_MUTEX_INITIALIZER, { 0 }, { 0 }, { 0 }, 0, 0 };

/* Under AddressSanitizer every block goes back to malloc, so a use after free is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define BLOCK_CACHE_ON 0
#else
#define BLOCK_CACHE_ON 1
#endif

static void *
block_alloc (size_t rounded)
{
  if (BLOCK_CACHE_ON && rounded >= BLOCK_CACHE_MIN)
    {
      pthread_mutex_lock (&block_cache.lock);
      int best = -1;
      for (int i = 0; i < BLOCK_CACHE_SLOTS; i++)
        if (block_cache.data[i] != NULL && block_cache.size[i] == rounded
            && (best < 0 || block_cache.stamp[i] > block_cache.stamp[best]))
          best = i;
      if (best >= 0)
        {
          void *p = block_cache.data[best];
          block_cache.data[best] = NULL;
          block_cache.bytes -= rounded;
          pthread_mutex_unlock (&block_cache.lock);
          return p;
        }
      pthread_mutex_unlock (&block_cache.lock);
    }
  return aligned_alloc (64, rounded);
}

/* The slot of the least recently freed block, -1 when the cache is empty; called with the lock held. */
static int
block_oldest (void)
{
  int old = -1;
  for (int i = 0; i < BLOCK_CACHE_SLOTS; i++)
    if (block_cache.data[i] != NULL && (old < 0 || block_cache.stamp[i] < block_cache.stamp[old]))
      old = i;
  return old;
}

static void
block_free (void *p, size_t rounded)
{
  if (BLOCK_CACHE_ON && p != NULL && rounded >= BLOCK_CACHE_MIN && rounded <= BLOCK_CACHE_MAX_BYTES)
    {
      void *evicted[BLOCK_CACHE_SLOTS];
      int n_evicted = 0;
      pthread_mutex_lock (&block_cache.lock);
      /* room in bytes and in slots: the least recently freed blocks go */
      for (;;)
        {
          int free_slot = -1;
          for (int i = 0; i < BLOCK_CACHE_SLOTS && free_slot < 0; i++)
            if (block_cache.data[i] == NULL)
              free_slot = i;
          if (free_slot >= 0 && block_cache.bytes + rounded <= BLOCK_CACHE_MAX_BYTES)
            {
              block_cache.data[free_slot] = p;
              block_cache.size[free_slot] = rounded;
              block_cache.stamp[free_slot] = ++block_cache.clock;
              block_cache.bytes += rounded;
              p = NULL;
              break;
            }
          int old = block_oldest ();
          if (old < 0)
            break;
          evicted[n_evicted++] = block_cache.data[old];
          block_cache.bytes -= block_cache.size[old];
          block_cache.data[old] = NULL;
        }
      pthread_mutex_unlock (&block_cache.lock);
      for (int i = 0; i < n_evicted; i++)
        free (evicted[i]);
    }
  free (p);
}

static size_t
rounded_size (size_t nbytes)
{
  size_t rounded = (nbytes + 63) & ~(size_t) 63;
  return rounded == 0 ? 64 : rounded;
}

static fx_storage *
storage_new (fx_allocator *alloc, size_t nbytes)
{
  if (alloc == NULL)
    alloc = &default_allocator;
  fx_storage *s = calloc (1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->data = block_alloc (rounded_size (nbytes));
  if (s->data == NULL)
    {
      free (s);
      return NULL;
    }
  s->refcount = 1;
  s->nbytes = nbytes;
  s->device = fx_device_cpu ();
  s->alloc = alloc;
  __atomic_add_fetch (&alloc->live_bytes, nbytes, __ATOMIC_RELAXED);
  __atomic_add_fetch (&alloc->total_allocs, 1, __ATOMIC_RELAXED);
  size_t live = alloc->live_bytes;
  if (live > alloc->peak_bytes)
    alloc->peak_bytes = live;
  return s;
}

static void
storage_unref (fx_storage *s)
{
  if (s == NULL || __atomic_sub_fetch (&s->refcount, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  if (s->alloc != NULL)
    {
      __atomic_sub_fetch (&s->alloc->live_bytes, s->nbytes, __ATOMIC_RELAXED);
      block_free (s->data, rounded_size (s->nbytes));
    }
  else if (s->release != NULL)
    s->release (s->release_ctx);
  free (s);
}

/* ---------------------------------------------------------------- tensors */

void
fx_contiguous_strides (int ndim, const int64_t *sizes, int64_t *strides)
{
  /* saturates: an overflowing shape is refused by fx_layout_check, this only must not be undefined on the way */
  int64_t acc = 1;
  for (int d = ndim - 1; d >= 0; d--)
    {
      strides[d] = acc;
      if (!fx_size_mul (acc, sizes[d] > 1 ? sizes[d] : 1, &acc))
        acc = INT64_MAX;
    }
}

static fx_tensor *
tensor_alloc (fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides)
{
  if (ndim < 0 || ndim > FX_TENSOR_MAX_DIMS)
    return NULL;
  fx_tensor *t = calloc (1, sizeof *t);
  if (t == NULL)
    return NULL;
  t->refcount = 1;
  t->dtype = dtype;
  t->device = fx_device_cpu ();
  t->ndim = ndim;
  for (int d = 0; d < ndim; d++)
    t->sizes[d] = sizes[d];
  if (strides != NULL)
    for (int d = 0; d < ndim; d++)
      t->strides[d] = strides[d];
  else
    fx_contiguous_strides (ndim, t->sizes, t->strides);
  return t;
}

static void
format_shape (char *out, size_t out_size, int ndim, const int64_t *v)
{
  size_t used = 0;
  used += (size_t) snprintf (out, out_size, "[");
  for (int d = 0; d < ndim && used < out_size; d++)
    used += (size_t) snprintf (out + used, out_size - used, "%s%lld", d ? ", " : "", (long long) v[d]);
  if (used < out_size)
    snprintf (out + used, out_size - used, "]");
}

fx_status
fx_layout_check (fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                 size_t *nbytes, fx_diag *diag)
{
  char shape[400];
  if (ndim < 0 || ndim > FX_TENSOR_MAX_DIMS)
    return fx_diag_set (diag, FX_ERR_INVALID, "a tensor of %d dims (at most %d are supported)", ndim,
                        FX_TENSOR_MAX_DIMS);
  if (offset < 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "negative storage offset %lld", (long long) offset);
  int64_t item = (int64_t) fx_dtype_size (dtype);
  if (item < 1)
    item = 1;
  /* hi: the last reachable element with the positive strides (the storage a fresh tensor gets); hi_abs bounds every
     element either way, so index math on the layout cannot overflow */
  int64_t numel = 1, hi = offset, hi_abs = offset, cstr[FX_TENSOR_MAX_DIMS];
  bool empty = false;
  if (strides == NULL)
    {
      fx_contiguous_strides (ndim, sizes, cstr);
      strides = cstr;
    }
  for (int d = 0; d < ndim; d++)
    if (sizes[d] < 0)
      {
        format_shape (shape, sizeof shape, ndim, sizes);
        return fx_diag_set (diag, FX_ERR_INVALID, "negative size %lld at dim %d of shape %s", (long long) sizes[d], d,
                            shape);
      }
  for (int d = 0; d < ndim; d++)
    {
      int64_t span;
      int64_t stride = strides[d] == INT64_MIN ? INT64_MAX : strides[d] < 0 ? -strides[d] : strides[d];
      if (sizes[d] == 0)
        empty = true;
      if (!fx_size_mul (numel, sizes[d], &numel) || !fx_size_mul (numel, item, &(int64_t) { 0 })
          || (sizes[d] > 0 && (!fx_size_mul (sizes[d] - 1, stride, &span) || !fx_size_add (hi_abs, span, &hi_abs)
                               || !fx_size_mul (hi_abs, item, &(int64_t) { 0 }))))
        {
          format_shape (shape, sizeof shape, ndim, sizes);
          char st[400];
          format_shape (st, sizeof st, ndim, strides);
          return fx_diag_set (diag, FX_ERR_INVALID,
                              "tensor %s of shape %s with strides %s is too large: its element or byte count "
                              "overflows a 64-bit size", fx_dtype_name (dtype), shape, st);
        }
      if (sizes[d] > 0 && strides[d] > 0)
        hi += (sizes[d] - 1) * strides[d];
    }
  int64_t bytes = 0;
  if (!empty && (!fx_size_add (hi, 1, &hi) || !fx_size_mul (hi, item, &bytes)))
    {
      format_shape (shape, sizeof shape, ndim, sizes);
      return fx_diag_set (diag, FX_ERR_INVALID, "tensor %s of shape %s: its storage extent overflows a 64-bit size",
                          fx_dtype_name (dtype), shape);
    }
  if (nbytes)
    *nbytes = (size_t) bytes;
  return FX_OK;
}

size_t
fx_tensor_max_bytes (void)
{
  const char *env = getenv ("FX_MAX_TENSOR_BYTES");
  if (env && env[0])
    {
      char *end;
      errno = 0;
      unsigned long long v = strtoull (env, &end, 10);
      int shift = 0;
      switch (*end)
        {
        case 'k': case 'K': shift = 10; end++; break;
        case 'm': case 'M': shift = 20; end++; break;
        case 'g': case 'G': shift = 30; end++; break;
        case 't': case 'T': shift = 40; end++; break;
        default: break;
        }
      if (errno == 0 && *end == '\0' && end != env && v <= (SIZE_MAX >> shift))
        return (size_t) v << shift;
    }
  /* every allocation asks: the machine's memory is read once (sysconf is a system call) */
  static size_t physical;
  size_t phys = __atomic_load_n (&physical, __ATOMIC_RELAXED);
  if (phys == 0)
    {
      long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
      phys = pages > 0 && page > 0 && (unsigned long) pages <= SIZE_MAX / (unsigned long) page
             ? (size_t) pages * (size_t) page : (size_t) INT64_MAX;
      __atomic_store_n (&physical, phys, __ATOMIC_RELAXED);
    }
  return phys;
}

fx_status
fx_tensor_new_checked (fx_allocator *alloc, fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides,
                       fx_tensor **out, fx_diag *diag)
{
  *out = NULL;
  size_t nbytes = 0;
  fx_status st = fx_layout_check (dtype, ndim, sizes, strides, 0, &nbytes, diag);
  if (st != FX_OK)
    return st;
  size_t limit = fx_tensor_max_bytes ();
  if (nbytes > limit)
    {
      char shape[400];
      format_shape (shape, sizeof shape, ndim, sizes);
      return fx_diag_set (diag, FX_ERR_NOMEM, "tensor %s of shape %s needs %zu bytes, more than the %zu bytes one "
                          "tensor may take (physical memory, or $FX_MAX_TENSOR_BYTES)", fx_dtype_name (dtype), shape,
                          nbytes, limit);
    }
  fx_tensor *t = tensor_alloc (dtype, ndim, sizes, strides);
  if (t != NULL)
    {
      t->storage = storage_new (alloc, nbytes);
      if (t->storage == NULL)
        {
          free (t);
          t = NULL;
        }
    }
  if (t == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "cannot allocate %zu bytes for a tensor %s", nbytes,
                        fx_dtype_name (dtype));
  *out = t;
  return FX_OK;
}

/* Elements the storage must hold for these sizes/strides (0 when any size is 0); the layout was checked. */
static int64_t
storage_extent (int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
  int64_t hi = offset;
  for (int d = 0; d < ndim; d++)
    {
      if (sizes[d] == 0)
        return 0;
      if (strides[d] > 0)
        hi += (sizes[d] - 1) * strides[d];
    }
  return hi + 1;
}

fx_tensor *
fx_tensor_new_strided (fx_allocator *alloc, fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides)
{
  fx_tensor *t = NULL;
  fx_diag diag;
  fx_tensor_new_checked (alloc, dtype, ndim, sizes, strides, &t, &diag);
  return t;
}

fx_tensor *
fx_tensor_new (fx_allocator *alloc, fx_dtype dtype, int ndim, const int64_t *sizes)
{
  return fx_tensor_new_strided (alloc, dtype, ndim, sizes, NULL);
}

fx_tensor *
fx_tensor_new_meta (fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides)
{
  return tensor_alloc (dtype, ndim, sizes, strides);
}

fx_tensor *
fx_tensor_ref (fx_tensor *t)
{
  if (t != NULL)
    __atomic_add_fetch (&t->refcount, 1, __ATOMIC_RELAXED);
  return t;
}

void
fx_tensor_unref (fx_tensor *t)
{
  if (t == NULL || __atomic_sub_fetch (&t->refcount, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  storage_unref (t->storage);
  free (t);
}

fx_tensor *
fx_tensor_as_strided (fx_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
  fx_tensor *v = tensor_alloc (t->dtype, ndim, sizes, strides);
  if (v == NULL)
    return NULL;
  v->device = t->device;
  v->offset = offset;
  v->storage = t->storage;
  if (v->storage != NULL)
    __atomic_add_fetch (&v->storage->refcount, 1, __ATOMIC_RELAXED);
  return v;
}

bool
fx_tensor_check_bounds (const fx_tensor *t)
{
  if (t->storage == NULL)
    return true;
  if (t->offset < 0)
    return false;
  if (fx_layout_check (t->dtype, t->ndim, t->sizes, t->strides, t->offset, NULL, NULL) != FX_OK)
    return false;
  int64_t lo = t->offset;
  for (int d = 0; d < t->ndim; d++)
    {
      if (t->sizes[d] == 0)
        return true;
      if (t->strides[d] < 0)
        lo += (t->sizes[d] - 1) * t->strides[d];
    }
  if (lo < 0)
    return false;
  int64_t n = storage_extent (t->ndim, t->sizes, t->strides, t->offset);
  return (size_t) n * fx_dtype_size (t->dtype) <= t->storage->nbytes;
}

int64_t
fx_tensor_numel (const fx_tensor *t)
{
  /* saturates for unchecked meta tensors (error messages); checked layouts never get there */
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++)
    if (!fx_size_mul (n, t->sizes[d], &n))
      return INT64_MAX;
  return n;
}

size_t
fx_tensor_nbytes (const fx_tensor *t)
{
  int64_t n;
  if (!fx_size_mul (fx_tensor_numel (t), (int64_t) fx_dtype_size (t->dtype), &n))
    return SIZE_MAX;
  return (size_t) n;
}

bool
fx_tensor_is_contiguous (const fx_tensor *t)
{
  int64_t acc = 1;
  for (int d = t->ndim - 1; d >= 0; d--)
    {
      if (t->sizes[d] == 0)
        return true;
      if (t->sizes[d] != 1 && t->strides[d] != acc)
        return false;
      acc *= t->sizes[d];
    }
  return true;
}

bool
fx_tensor_is_meta (const fx_tensor *t)
{
  return t->storage == NULL;
}

void *
fx_tensor_data (const fx_tensor *t)
{
  if (t->storage == NULL)
    return NULL;
  return (char *) t->storage->data + t->offset * (int64_t) fx_dtype_size (t->dtype);
}

static int64_t
flat_to_offset (const fx_tensor *t, int64_t flat)
{
  int64_t off = t->offset;
  for (int d = t->ndim - 1; d >= 0; d--)
    {
      int64_t s = t->sizes[d];
      if (s == 0)
        return off;
      off += (flat % s) * t->strides[d];
      flat /= s;
    }
  return off;
}

void *
fx_tensor_elem_ptr (const fx_tensor *t, int64_t flat_index)
{
  return (char *) t->storage->data + flat_to_offset (t, flat_index) * (int64_t) fx_dtype_size (t->dtype);
}

double
fx_load_f64 (const void *p, fx_dtype dtype)
{
  switch (dtype)
    {
    case FX_DTYPE_F32: return *(const float *) p;
    case FX_DTYPE_F64: return *(const double *) p;
    case FX_DTYPE_F16: return fx_f16_to_f32 (*(const uint16_t *) p);
    case FX_DTYPE_BF16: return fx_bf16_to_f32 (*(const uint16_t *) p);
    case FX_DTYPE_I64: return (double) *(const int64_t *) p;
    case FX_DTYPE_I32: return *(const int32_t *) p;
    case FX_DTYPE_I16: return *(const int16_t *) p;
    case FX_DTYPE_I8: return *(const int8_t *) p;
    case FX_DTYPE_U8: return *(const uint8_t *) p;
    case FX_DTYPE_BOOL: return *(const uint8_t *) p ? 1.0 : 0.0;
    default: return NAN;
    }
}

int64_t
fx_load_i64 (const void *p, fx_dtype dtype)
{
  switch (dtype)
    {
    case FX_DTYPE_I64: return *(const int64_t *) p;
    case FX_DTYPE_I32: return *(const int32_t *) p;
    case FX_DTYPE_I16: return *(const int16_t *) p;
    case FX_DTYPE_I8: return *(const int8_t *) p;
    case FX_DTYPE_U8: return *(const uint8_t *) p;
    case FX_DTYPE_BOOL: return *(const uint8_t *) p ? 1 : 0;
    default:
      {
        double v = fx_load_f64 (p, dtype);
        if (isnan (v))
          return INT64_MIN;
        if (v >= 9.2233720368547758e18)
          return INT64_MAX;
        if (v <= -9.2233720368547758e18)
          return INT64_MIN;
        return (int64_t) v;
      }
    }
}

/* Float to integer as C++ static_cast does on x86 for in-range values (truncation); out of range wraps through
   int64 like PyTorch's CPU kernels. */
static int64_t
f64_to_int (double v)
{
  if (isnan (v))
    return INT64_MIN;
  if (v >= 9.2233720368547758e18 || v <= -9.2233720368547758e18)
    return INT64_MIN;
  return (int64_t) v;
}

void
fx_store_f64 (void *p, fx_dtype dtype, double v)
{
  switch (dtype)
    {
    case FX_DTYPE_F32: *(float *) p = (float) v; break;
    case FX_DTYPE_F64: *(double *) p = v; break;
    case FX_DTYPE_F16: *(uint16_t *) p = fx_f32_to_f16 ((float) v); break;
    case FX_DTYPE_BF16: *(uint16_t *) p = fx_f32_to_bf16 ((float) v); break;
    case FX_DTYPE_I64: *(int64_t *) p = f64_to_int (v); break;
    case FX_DTYPE_I32: *(int32_t *) p = (int32_t) f64_to_int (v); break;
    case FX_DTYPE_I16: *(int16_t *) p = (int16_t) f64_to_int (v); break;
    case FX_DTYPE_I8: *(int8_t *) p = (int8_t) f64_to_int (v); break;
    case FX_DTYPE_U8: *(uint8_t *) p = (uint8_t) f64_to_int (v); break;
    case FX_DTYPE_BOOL: *(uint8_t *) p = v != 0.0; break;
    default: break;
    }
}

void
fx_store_i64 (void *p, fx_dtype dtype, int64_t v)
{
  switch (dtype)
    {
    case FX_DTYPE_I64: *(int64_t *) p = v; break;
    case FX_DTYPE_I32: *(int32_t *) p = (int32_t) v; break;
    case FX_DTYPE_I16: *(int16_t *) p = (int16_t) v; break;
    case FX_DTYPE_I8: *(int8_t *) p = (int8_t) v; break;
    case FX_DTYPE_U8: *(uint8_t *) p = (uint8_t) v; break;
    case FX_DTYPE_BOOL: *(uint8_t *) p = v != 0; break;
    default: fx_store_f64 (p, dtype, (double) v); break;
    }
}

double
fx_tensor_get_f64 (const fx_tensor *t, int64_t i)
{
  return fx_load_f64 (fx_tensor_elem_ptr (t, i), t->dtype);
}

int64_t
fx_tensor_get_i64 (const fx_tensor *t, int64_t i)
{
  return fx_load_i64 (fx_tensor_elem_ptr (t, i), t->dtype);
}

void
fx_tensor_set_f64 (fx_tensor *t, int64_t i, double v)
{
  fx_store_f64 (fx_tensor_elem_ptr (t, i), t->dtype, v);
}

void
fx_tensor_set_i64 (fx_tensor *t, int64_t i, int64_t v)
{
  fx_store_i64 (fx_tensor_elem_ptr (t, i), t->dtype, v);
}

void
fx_tensor_fill_f64 (fx_tensor *t, double value)
{
  int64_t n = fx_tensor_numel (t);
  if (t->storage == NULL || n == 0)
    return;
  size_t isz = fx_dtype_size (t->dtype);
  char tmp[16];
  fx_store_f64 (tmp, t->dtype, value);
  if (fx_tensor_is_contiguous (t))
    {
      char *p = fx_tensor_data (t);
      if (t->dtype == FX_DTYPE_F32)
        {
          float f = (float) value;
          for (int64_t i = 0; i < n; i++)
            ((float *) p)[i] = f;
          return;
        }
      for (int64_t i = 0; i < n; i++)
        memcpy (p + i * isz, tmp, isz);
      return;
    }
  for (int64_t i = 0; i < n; i++)
    memcpy (fx_tensor_elem_ptr (t, i), tmp, isz);
}

bool
fx_broadcast_shapes (int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out, fx_diag *diag)
{
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++)
    {
      int ia = na - n + i, ib = nb - n + i;
      int64_t sa = ia >= 0 ? a[ia] : 1;
      int64_t sb = ib >= 0 ? b[ib] : 1;
      if (sa != sb && sa != 1 && sb != 1)
        {
          fx_diag_set (diag, FX_ERR_INVALID,
                       "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                       (long long) sa, (long long) sb, i);
          return false;
        }
      out[i] = sa == 1 ? sb : sa;
    }
  *nout = n;
  return true;
}

void
fx_broadcast_strides (const fx_tensor *t, int ndim, const int64_t *sizes, int64_t *strides)
{
  for (int i = 0; i < ndim; i++)
    {
      int it = t->ndim - ndim + i;
      if (it < 0 || (t->sizes[it] == 1 && sizes[i] != 1))
        strides[i] = 0;
      else
        strides[i] = t->strides[it];
    }
}

/* Same-dtype strided copy (src already viewed at dst's shape, broadcast dims with stride 0): row by row over the
   last dim, the row offsets advanced like an odometer instead of divided out per element. */
#define COPY_ROW(T)                                                                                   \
  do                                                                                                  \
    {                                                                                                 \
      T *d = (T *) dp;                                                                                \
      const T *sv = (const T *) sp;                                                                   \
      if (ss == 0)                                                                                    \
        {                                                                                             \
          T v = sv[0];                                                                                \
          for (int64_t k = 0; k < inner; k++)                                                         \
            d[k * ds] = v;                                                                            \
        }                                                                                             \
      else                                                                                            \
        for (int64_t k = 0; k < inner; k++)                                                           \
          d[k * ds] = sv[k * ss];                                                                     \
    }                                                                                                 \
  while (0)

static void
copy_rows_same_dtype (fx_tensor *dst, const fx_tensor *view, int64_t total, size_t esz)
{
  int nd = dst->ndim;
  int64_t inner = dst->sizes[nd - 1];
  int64_t ds = dst->strides[nd - 1], ss = view->strides[nd - 1];
  int64_t rows = inner ? total / inner : 0;
  int64_t idx[FX_TENSOR_MAX_DIMS] = { 0 };
  int64_t doff = 0, soff = 0;
  char *dbase = (char *) fx_tensor_data (dst);
  const char *sbase = (const char *) fx_tensor_data (view);
  for (int64_t r = 0; r < rows; r++)
    {
      char *dp = dbase + doff * (int64_t) esz;
      const char *sp = sbase + soff * (int64_t) esz;
      if (ds == 1 && ss == 1)
        memcpy (dp, sp, (size_t) inner * esz);
      else if (esz == 4)
        COPY_ROW (uint32_t);
      else if (esz == 8)
        COPY_ROW (uint64_t);
      else if (esz == 2)
        COPY_ROW (uint16_t);
      else if (esz == 1)
        COPY_ROW (uint8_t);
      else
        for (int64_t k = 0; k < inner; k++)
          memcpy (dp + k * ds * (int64_t) esz, sp + k * ss * (int64_t) esz, esz);
      /* next row: advance the odometer over dims nd-2 .. 0 */
      for (int d = nd - 2; d >= 0; d--)
        {
          idx[d]++;
          doff += dst->strides[d];
          soff += view->strides[d];
          if (idx[d] < dst->sizes[d])
            break;
          doff -= dst->strides[d] * dst->sizes[d];
          soff -= view->strides[d] * dst->sizes[d];
          idx[d] = 0;
        }
    }
}

fx_status
fx_tensor_copy_into (fx_tensor *dst, const fx_tensor *src, fx_diag *diag)
{
  int n;
  int64_t shape[FX_TENSOR_MAX_DIMS];
  if (!fx_broadcast_shapes (dst->ndim, dst->sizes, src->ndim, src->sizes, &n, shape, diag))
    return FX_ERR_INVALID;
  if (n != dst->ndim || memcmp (shape, dst->sizes, sizeof (int64_t) * n) != 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "cannot copy a tensor of %d dims into one of %d dims", src->ndim,
                        dst->ndim);
  int64_t total = fx_tensor_numel (dst);
  if (total == 0)
    return FX_OK;
  fx_tensor view = *src;
  view.ndim = dst->ndim;
  fx_broadcast_strides (src, dst->ndim, dst->sizes, view.strides);
  for (int d = 0; d < dst->ndim; d++)
    view.sizes[d] = dst->sizes[d];
  size_t dsz = fx_dtype_size (dst->dtype);
  if (src->dtype == dst->dtype && fx_tensor_is_contiguous (dst) && fx_tensor_is_contiguous (&view))
    {
      memmove (fx_tensor_data (dst), fx_tensor_data (&view), (size_t) total * dsz);
      return FX_OK;
    }
  if (src->dtype == dst->dtype && dst->ndim > 0)
    {
      copy_rows_same_dtype (dst, &view, total, dsz);
      return FX_OK;
    }
  /* float32 <-> float64, both contiguous (the fp64 reference converts every input and output): a plain loop instead
     of an element pointer and a dtype switch per element */
  if (fx_tensor_is_contiguous (dst) && fx_tensor_is_contiguous (&view))
    {
      if (src->dtype == FX_DTYPE_F32 && dst->dtype == FX_DTYPE_F64)
        {
          const float *sp = fx_tensor_data (&view);
          double *dp = fx_tensor_data (dst);
          for (int64_t i = 0; i < total; i++)
            dp[i] = sp[i];
          return FX_OK;
        }
      if (src->dtype == FX_DTYPE_F64 && dst->dtype == FX_DTYPE_F32)
        {
          const double *sp = fx_tensor_data (&view);
          float *dp = fx_tensor_data (dst);
          for (int64_t i = 0; i < total; i++)
            dp[i] = (float) sp[i];
          return FX_OK;
        }
    }
  bool integral = fx_dtype_is_integral (src->dtype, true) && fx_dtype_is_integral (dst->dtype, true);
  for (int64_t i = 0; i < total; i++)
    {
      const void *sp = fx_tensor_elem_ptr (&view, i);
      void *dp = fx_tensor_elem_ptr (dst, i);
      if (src->dtype == dst->dtype)
        memcpy (dp, sp, dsz);
      else if (integral)
        fx_store_i64 (dp, dst->dtype, fx_load_i64 (sp, src->dtype));
      else
        fx_store_f64 (dp, dst->dtype, fx_load_f64 (sp, src->dtype));
    }
  return FX_OK;
}

fx_tensor *
fx_tensor_contiguous_copy (fx_allocator *alloc, const fx_tensor *t)
{
  fx_tensor *c = fx_tensor_new (alloc, t->dtype, t->ndim, t->sizes);
  if (c != NULL)
    fx_tensor_copy_into (c, t, NULL);
  return c;
}

fx_tensor *
fx_tensor_to_dtype (fx_allocator *alloc, const fx_tensor *t, fx_dtype dtype)
{
  fx_tensor *c = fx_tensor_new (alloc, dtype, t->ndim, t->sizes);
  if (c != NULL)
    fx_tensor_copy_into (c, t, NULL);
  return c;
}

void
fx_tensor_describe (const fx_tensor *t, fx_buf *out)
{
  fx_buf_printf (out, "%s[", fx_dtype_abbr (t->dtype));
  fx_buf_put_ints (out, t->sizes, t->ndim);
  fx_buf_puts (out, "][");
  fx_buf_put_ints (out, t->strides, t->ndim);
  fx_buf_puts (out, "]");
  fx_device_format (t->device, out);
}

void
fx_tensor_format_values (const fx_tensor *t, size_t limit, fx_buf *out)
{
  int64_t n = fx_tensor_numel (t);
  fx_buf_puts (out, "[");
  for (int64_t i = 0; i < n && (size_t) i < limit; i++)
    {
      if (i)
        fx_buf_puts (out, ", ");
      if (t->storage == NULL)
        fx_buf_puts (out, "?");
      else if (fx_dtype_is_integral (t->dtype, true))
        fx_buf_printf (out, "%lld", (long long) fx_tensor_get_i64 (t, i));
      else
        fx_buf_printf (out, "%.6g", fx_tensor_get_f64 (t, i));
    }
  if ((size_t) n > limit)
    fx_buf_puts (out, ", ...");
  fx_buf_puts (out, "]");
}

void
fx_tensor_to_meta (const fx_tensor *t, fx_arena *arena, fx_tensor_meta *meta)
{
  memset (meta, 0, sizeof *meta);
  meta->dtype = t->dtype;
  meta->ndim = t->ndim;
  meta->sizes = fx_arena_alloc (arena, sizeof (fx_dim) * (t->ndim ? t->ndim : 1));
  meta->strides = fx_arena_alloc (arena, sizeof (fx_dim) * (t->ndim ? t->ndim : 1));
  for (int d = 0; d < t->ndim; d++)
    {
      meta->sizes[d].value = t->sizes[d];
      meta->strides[d].value = t->strides[d];
    }
  meta->storage_offset.value = t->offset;
  meta->device = t->device;
  meta->has_device = true;
}

/* ---------------------------------------------------------------- type promotion */

static int
dtype_category (fx_dtype d)
{
  if (d == FX_DTYPE_BOOL)
    return 0;
  if (fx_dtype_is_integral (d, false))
    return 1;
  return 2;
}

fx_dtype
fx_promote_types (fx_dtype a, fx_dtype b)
{
  if (a == FX_DTYPE_UNKNOWN)
    return b;
  if (b == FX_DTYPE_UNKNOWN || a == b)
    return a;
  int ca = dtype_category (a), cb = dtype_category (b);
  if (ca != cb)
    return ca > cb ? a : b;
  if (ca == 2)
    {
      if ((a == FX_DTYPE_F16 && b == FX_DTYPE_BF16) || (a == FX_DTYPE_BF16 && b == FX_DTYPE_F16))
        return FX_DTYPE_F32;
      return fx_dtype_size (a) >= fx_dtype_size (b) ? a : b;
    }
  if (ca == 1)
    {
      /* u8 with a signed type: the signed type large enough (u8 + i8 -> i16) */
      if (a == FX_DTYPE_U8 || b == FX_DTYPE_U8)
        {
          fx_dtype o = a == FX_DTYPE_U8 ? b : a;
          return o == FX_DTYPE_I8 ? FX_DTYPE_I16 : o;
        }
      return fx_dtype_size (a) >= fx_dtype_size (b) ? a : b;
    }
  return a;
}

void
fx_type_promo_init (fx_type_promo *p)
{
  p->dim_result = p->zero_result = p->wrapped_result = FX_DTYPE_UNKNOWN;
}

void
fx_type_promo_add_dtype (fx_type_promo *p, fx_dtype dtype, bool zero_dim)
{
  if (zero_dim)
    p->zero_result = fx_promote_types (p->zero_result, dtype);
  else
    p->dim_result = fx_promote_types (p->dim_result, dtype);
}

void
fx_type_promo_add_tensor (fx_type_promo *p, const fx_tensor *t)
{
  fx_type_promo_add_dtype (p, t->dtype, t->ndim == 0);
}

/* Python scalars take part as the default dtypes of their kind: bool, int64, float32 (torch's default float). */
void
fx_type_promo_add_scalar_bool (fx_type_promo *p)
{
  p->wrapped_result = fx_promote_types (p->wrapped_result, FX_DTYPE_BOOL);
}

void
fx_type_promo_add_scalar_int (fx_type_promo *p)
{
  p->wrapped_result = fx_promote_types (p->wrapped_result, FX_DTYPE_I64);
}

void
fx_type_promo_add_scalar_float (fx_type_promo *p)
{
  p->wrapped_result = fx_promote_types (p->wrapped_result, FX_DTYPE_F32);
}

/* c10's combine_categories: a higher-priority operand wins unless the lower one is of a higher category. */
static fx_dtype
combine_categories (fx_dtype higher, fx_dtype lower)
{
  if (higher == FX_DTYPE_UNKNOWN)
    return lower;
  if (lower == FX_DTYPE_UNKNOWN)
    return higher;
  if (dtype_category (higher) == 2)
    return higher;
  if (higher == FX_DTYPE_BOOL || dtype_category (lower) == 2)
    return fx_promote_types (higher, lower);
  return higher;
}

fx_dtype
fx_type_promo_result (const fx_type_promo *p)
{
  return combine_categories (p->dim_result, combine_categories (p->zero_result, p->wrapped_result));
}
