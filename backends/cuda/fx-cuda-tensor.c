/* fx-cuda-tensor.c: engine tensors (fx/tensor.h) on a CUDA device: storage from the caching allocator, copies
   between host and device that keep strides, and DLPack imports of kDLCUDA tensors checked against the device. */
#include "fx-cuda-impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct storage_ctx
{
  fx_cuda *cuda;
  fx_cuda_ptr ptr;
} storage_ctx;

static void
storage_release (void *p)
{
  storage_ctx *ctx = p;
  fx_cuda_free (ctx->cuda, ctx->ptr);
  free (ctx);
}

/* Elements spanned by sizes/strides from element 0 (0 when any size is 0); -1 on negative strides. */
static int64_t
extent (int ndim, const int64_t *sizes, const int64_t *strides)
{
  int64_t hi = 0;
  for (int d = 0; d < ndim; d++)
    {
      if (sizes[d] == 0)
        return 0;
      if (strides[d] < 0)
        return -1;
      hi += (sizes[d] - 1) * strides[d];
    }
  return hi + 1;
}

/* Makes S (zeroed) the one reference to NBYTES of device memory at PTR, released by RELEASE (CTX), and T's storage. */
static void
attach_storage (fx_tensor *t, fx_storage *s, fx_cuda_ptr ptr, size_t nbytes, int ordinal, void (*release) (void *),
                void *ctx)
{
  s->refcount = 1;
  s->data = (void *) (uintptr_t) ptr;
  s->nbytes = nbytes;
  s->device.type = FX_DEVICE_CUDA;
  s->device.index = ordinal;
  s->release = release;
  s->release_ctx = ctx;
  t->storage = s;
  t->device = s->device;
}

fx_status
fx_cuda_tensor_own (fx_cuda *cuda, fx_tensor *t, fx_cuda_ptr ptr, size_t nbytes, fx_diag *diag)
{
  storage_ctx *ctx = calloc (1, sizeof *ctx);
  fx_storage *s = calloc (1, sizeof *s);
  if (!ctx || !s)
    {
      free (ctx);
      free (s);
      return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
    }
  ctx->cuda = cuda;
  ctx->ptr = ptr;
  attach_storage (t, s, ptr, nbytes, cuda->ordinal, storage_release, ctx);
  return FX_OK;
}

fx_status
fx_cuda_tensor_new (fx_cuda *cuda, fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides,
                    fx_tensor **out, fx_diag *diag)
{
  size_t item = fx_dtype_size (dtype);
  fx_tensor *t;
  fx_cuda_ptr ptr = 0;
  int64_t n;
  fx_status st;

  *out = NULL;
  if (item == 0 || ndim < 0 || ndim > FX_TENSOR_MAX_DIMS)
    return fx_diag_set (diag, FX_ERR_INVALID, "cannot make a %d-dim %s tensor", ndim, fx_dtype_name (dtype));
  /* sizes may come from an input file: the byte count below must not wrap */
  if ((st = fx_layout_check (dtype, ndim, sizes, strides, 0, NULL, diag)) != FX_OK)
    return st;
  t = fx_tensor_new_meta (dtype, ndim, sizes, strides);
  if (!t)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  n = extent (ndim, t->sizes, t->strides);
  if (n < 0)
    {
      fx_tensor_unref (t);
      return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "negative strides");
    }
  if ((st = fx_cuda_malloc (cuda, (size_t) n * item, NULL, &ptr, diag)) != FX_OK
      || (st = fx_cuda_tensor_own (cuda, t, ptr, (size_t) n * item, diag)) != FX_OK)
    {
      if (ptr)
        fx_cuda_free (cuda, ptr);
      fx_tensor_unref (t);
      return st;
    }
  *out = t;
  return FX_OK;
}

fx_cuda_ptr
fx_cuda_tensor_ptr (const fx_tensor *t)
{
  if (!t || !t->storage)
    return 0;
  return (fx_cuda_ptr) (uintptr_t) t->storage->data + (fx_cuda_ptr) t->offset * fx_dtype_size (t->dtype);
}

/* Dense: the elements fill their extent exactly (any order of dims), so the extent's bytes are the tensor. */
static bool
is_dense (const fx_tensor *t)
{
  int64_t n = fx_tensor_numel (t), e = extent (t->ndim, t->sizes, t->strides);
  return e >= 0 && n == e;
}

fx_status
fx_cuda_tensor_to_device (fx_cuda *cuda, fx_cuda_stream *stream, const fx_tensor *cpu, fx_tensor **out,
                          fx_diag *diag)
{
  fx_tensor *src = NULL, *t = NULL;
  fx_status st;

  *out = NULL;
  if (!cpu || !cpu->storage || cpu->device.type != FX_DEVICE_CPU)
    return fx_diag_set (diag, FX_ERR_INVALID, "to_device needs a CPU tensor with storage");
  if (!is_dense (cpu))
    {
      src = fx_tensor_contiguous_copy (NULL, cpu);
      if (!src)
        return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
    }
  else
    src = fx_tensor_ref ((fx_tensor *) cpu);
  st = fx_cuda_tensor_new (cuda, src->dtype, src->ndim, src->sizes, src->strides, &t, diag);
  if (st == FX_OK)
    st = fx_cuda_copy_h2d (cuda, stream, fx_cuda_tensor_ptr (t), fx_tensor_data (src), t->storage->nbytes, diag);
  /* An asynchronous copy reads src later: keep it alive until the copy is done. */
  if (st == FX_OK && stream)
    st = fx_cuda_stream_synchronize (stream, diag);
  fx_tensor_unref (src);
  if (st != FX_OK)
    {
      fx_tensor_unref (t);
      return st;
    }
  *out = t;
  return FX_OK;
}

fx_status
fx_cuda_tensor_to_host (fx_cuda *cuda, fx_cuda_stream *stream, const fx_tensor *gpu, fx_tensor **out, fx_diag *diag)
{
  fx_tensor *t;
  int64_t n;
  fx_status st;

  *out = NULL;
  if ((st = fx_cuda_tensor_check (cuda, gpu, diag)) != FX_OK)
    return st;
  n = extent (gpu->ndim, gpu->sizes, gpu->strides);
  if (n < 0)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "negative strides");
  t = fx_tensor_new_strided (NULL, gpu->dtype, gpu->ndim, gpu->sizes, gpu->strides);
  if (!t)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  st = fx_cuda_copy_d2h (cuda, stream, fx_tensor_data (t), fx_cuda_tensor_ptr (gpu),
                         (size_t) n * fx_dtype_size (gpu->dtype), diag);
  if (st == FX_OK && stream)
    st = fx_cuda_stream_synchronize (stream, diag);
  if (st != FX_OK)
    {
      fx_tensor_unref (t);
      return st;
    }
  *out = t;
  return FX_OK;
}

fx_status
fx_cuda_tensor_check (fx_cuda *cuda, const fx_tensor *t, fx_diag *diag)
{
  fx_status st;

  if (!t || !t->storage)
    return fx_diag_set (diag, FX_ERR_INVALID, "a tensor without storage is not on a device");
  if ((st = fx_cuda_tensor_check_live (t, diag)) != FX_OK)
    return st;
  if (t->device.type != FX_DEVICE_CUDA || (t->device.index != cuda->ordinal && t->device.index >= 0))
    {
      fx_buf where;
      fx_buf_init (&where);
      fx_device_format (t->device, &where);
      st = fx_diag_set (diag, FX_ERR_INVALID, "tensor on %s, expected cuda:%d", where.data ? where.data : "?",
                        cuda->ordinal);
      fx_buf_free (&where);
      return st;
    }
  return fx_cuda_check_device_ptr (cuda, fx_cuda_tensor_ptr (t), diag);
}

fx_status
fx_cuda_tensor_from_dlpack (fx_cuda *cuda, fx_dl_managed_tensor *managed, fx_tensor **out, fx_diag *diag)
{
  fx_tensor *t = NULL;
  fx_status st;

  *out = NULL;
  if ((st = fx_cuda_check_dlpack_device (cuda, managed->dl_tensor.device.device_type,
                                         managed->dl_tensor.device.device_id, diag)) != FX_OK)
    return st;
  if ((st = fx_cuda_check_device_ptr (cuda, (fx_cuda_ptr) (uintptr_t) managed->dl_tensor.data, diag)) != FX_OK)
    return st;
  if ((st = fx_tensor_from_dlpack (managed, &t, diag)) != FX_OK)
    return st;
  *out = t;
  return FX_OK;
}

/* ---------------------------------------------------------------- static outputs of replayed CUDA graphs */

struct fx_cuda_generation
{
  int refcount;
  uint64_t count;     /* replays so far */
  bool retired;       /* the owner is gone: its memory may be anyone's now */
};

fx_cuda_generation *
fx_cuda_generation_new (void)
{
  fx_cuda_generation *g = calloc (1, sizeof *g);
  if (g)
    g->refcount = 1;
  return g;
}

void
fx_cuda_generation_unref (fx_cuda_generation *gen)
{
  if (gen && __atomic_sub_fetch (&gen->refcount, 1, __ATOMIC_ACQ_REL) == 0)
    free (gen);
}

uint64_t
fx_cuda_generation_bump (fx_cuda_generation *gen)
{
  return __atomic_add_fetch (&gen->count, 1, __ATOMIC_ACQ_REL);
}

uint64_t
fx_cuda_generation_get (const fx_cuda_generation *gen)
{
  return __atomic_load_n (&gen->count, __ATOMIC_ACQUIRE);
}

void
fx_cuda_generation_retire (fx_cuda_generation *gen)
{
  if (gen)
    __atomic_store_n (&gen->retired, true, __ATOMIC_RELEASE);
}

typedef struct static_ctx
{
  fx_cuda_generation *gen;
  uint64_t count;     /* the replay whose results the storage holds */
} static_ctx;

static void
static_release (void *p)
{
  static_ctx *ctx = p;
  fx_cuda_generation_unref (ctx->gen);
  free (ctx);
}

fx_status
fx_cuda_tensor_new_static (fx_cuda *cuda, fx_cuda_ptr ptr, size_t nbytes, fx_cuda_generation *gen, fx_dtype dtype,
                           int ndim, const int64_t *sizes, const int64_t *strides, fx_tensor **out, fx_diag *diag)
{
  static_ctx *ctx;
  fx_storage *s;
  fx_tensor *t;

  *out = NULL;
  if (!gen || ptr == 0 || ndim < 0 || ndim > FX_TENSOR_MAX_DIMS || fx_dtype_size (dtype) == 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "a static output needs memory, a generation and a shape");
  t = fx_tensor_new_meta (dtype, ndim, sizes, strides);
  ctx = calloc (1, sizeof *ctx);
  s = calloc (1, sizeof *s);
  if (!t || !ctx || !s)
    {
      if (t)
        fx_tensor_unref (t);
      free (ctx);
      free (s);
      return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
    }
  __atomic_add_fetch (&gen->refcount, 1, __ATOMIC_ACQ_REL);
  ctx->gen = gen;
  ctx->count = fx_cuda_generation_get (gen);
  attach_storage (t, s, ptr, nbytes, cuda ? cuda->ordinal : 0, static_release, ctx);
  *out = t;
  return FX_OK;
}

bool
fx_cuda_tensor_is_static (const fx_tensor *t)
{
  return t && t->storage && t->storage->release == static_release;
}

fx_status
fx_cuda_tensor_check_live (const fx_tensor *t, fx_diag *diag)
{
  const static_ctx *ctx;

  if (!fx_cuda_tensor_is_static (t))
    return FX_OK;
  ctx = t->storage->release_ctx;
  if (__atomic_load_n (&ctx->gen->retired, __ATOMIC_ACQUIRE))
    return fx_diag_set (diag, FX_ERR_INVALID, "Error: accessing tensor output of CUDAGraphs whose compiled graph "
                        "has been freed. To keep an output, clone it before freeing the compiled graph.");
  if (fx_cuda_generation_get (ctx->gen) != ctx->count)
    return fx_diag_set (diag, FX_ERR_INVALID, "Error: accessing tensor output of CUDAGraphs that has been "
                        "overwritten by a subsequent run. To prevent overwriting, clone the tensor outside of "
                        "torch.compile() or call torch.compiler.cudagraph_mark_step_begin() before each model "
                        "invocation.");
  return FX_OK;
}
