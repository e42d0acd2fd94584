/* fx-cuda-device.c: opening a device (primary context, properties), streams, events, per-kernel timelines,
   host<->device transfers, pinned host memory and the pointer checks behind DLPack's kDLCUDA tensors. */
#include "fx-cuda-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CU (fx_cuda_libs_driver ()->cu)

fx_status
fx_cuda_enter (fx_cuda *cuda, fx_diag *diag)
{
  FX_CU_TRY (CU.cuCtxSetCurrent (cuda->ctx), "cuCtxSetCurrent", diag);
  return FX_OK;
}

void *
fx_cuda_enter_alloc (fx_cuda *cuda, size_t size, fx_status *st, fx_diag *diag)
{
  if ((*st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return NULL;
  void *p = calloc (1, size);
  if (p == NULL)
    *st = fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  return p;
}

void *
fx_cuda_handle_made (void *obj, fx_CUresult res, const char *what, fx_status *st, fx_diag *diag)
{
  if ((*st = fx_cuda_check (res, what, diag)) == FX_OK)
    return obj;
  free (obj);
  return NULL;
}

void
fx_cuda_arch_name (int cc_major, int cc_minor, char *out, size_t out_size)
{
  snprintf (out, out_size, "sm_%d%d", cc_major, cc_minor);
}

static fx_status
query_info (fx_cuda *cuda, fx_diag *diag)
{
  fx_cuda_device_info *info = &cuda->info;
  static const struct
  {
    int attr;
    size_t offset;
  } attrs[] = {
    { FX_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, offsetof (fx_cuda_device_info, cc_major) },
    { FX_CU_ATTR_COMPUTE_CAPABILITY_MINOR, offsetof (fx_cuda_device_info, cc_minor) },
    { FX_CU_ATTR_MULTIPROCESSOR_COUNT, offsetof (fx_cuda_device_info, sm_count) },
    { FX_CU_ATTR_WARP_SIZE, offsetof (fx_cuda_device_info, warp_size) },
    { FX_CU_ATTR_MAX_THREADS_PER_BLOCK, offsetof (fx_cuda_device_info, max_threads_per_block) },
    { FX_CU_ATTR_MAX_THREADS_PER_MULTIPROCESSOR, offsetof (fx_cuda_device_info, max_threads_per_sm) },
    { FX_CU_ATTR_MAX_REGISTERS_PER_BLOCK, offsetof (fx_cuda_device_info, max_registers_per_block) },
    { FX_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, offsetof (fx_cuda_device_info, max_shared_per_block) },
    { FX_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, offsetof (fx_cuda_device_info, max_shared_per_block_optin) },
    { FX_CU_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, offsetof (fx_cuda_device_info, max_shared_per_sm) },
    { FX_CU_ATTR_L2_CACHE_SIZE, offsetof (fx_cuda_device_info, l2_bytes) },
  };
  int clock_khz = 0, bus_bits = 0;

  info->ordinal = cuda->ordinal;
  FX_CU_TRY (CU.cuDeviceGetName (info->name, (int) sizeof info->name, cuda->device), "cuDeviceGetName", diag);
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    FX_CU_TRY (CU.cuDeviceGetAttribute ((int *) ((char *) info + attrs[i].offset), attrs[i].attr, cuda->device),
               "cuDeviceGetAttribute", diag);
  FX_CU_TRY (CU.cuDeviceTotalMem (&info->total_bytes, cuda->device), "cuDeviceTotalMem", diag);
  /* Newer drivers may no longer report the memory clock; the bandwidth figure is then 0, not an error. */
  if (CU.cuDeviceGetAttribute (&clock_khz, FX_CU_ATTR_MEMORY_CLOCK_RATE, cuda->device) != FX_CUDA_SUCCESS)
    clock_khz = 0;
  if (CU.cuDeviceGetAttribute (&bus_bits, FX_CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH, cuda->device) != FX_CUDA_SUCCESS)
    bus_bits = 0;
  info->peak_bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  info->driver_version = fx_cuda_libs_driver ()->driver_version;
  if (info->warp_size <= 0)
    info->warp_size = 32;
  return FX_OK;
}

fx_status
fx_cuda_open (int ordinal, fx_cuda **out, fx_diag *diag)
{
  const fx_cuda_libs *l = fx_cuda_libs_driver ();
  fx_cuda *cuda;
  fx_status st;

  *out = NULL;
  if (!l->driver_usable)
    return fx_diag_set (diag, FX_ERR_NO_DEVICE, "no CUDA device: %s", l->driver_error);
  if (ordinal < 0 || ordinal >= l->device_count)
    return fx_diag_set (diag, FX_ERR_NO_DEVICE, "no CUDA device cuda:%d (the driver reports %d device%s)", ordinal,
                        l->device_count, l->device_count == 1 ? "" : "s");
  cuda = calloc (1, sizeof *cuda);
  if (!cuda)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  cuda->ordinal = ordinal;
  fx_cuda_alloc_init (&cuda->alloc);
  pthread_mutex_init (&cuda->builtin_lock, NULL);
  if ((st = fx_cuda_check (l->cu.cuDeviceGet (&cuda->device, ordinal), "cuDeviceGet", diag)) != FX_OK)
    goto fail;
  /* The primary context is the one the CUDA runtime (cuBLAS, PyTorch) uses: pointers and streams are shared. */
  if ((st = fx_cuda_check (l->cu.cuDevicePrimaryCtxRetain (&cuda->ctx, cuda->device), "cuDevicePrimaryCtxRetain",
                           diag)) != FX_OK)
    goto fail;
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK || (st = query_info (cuda, diag)) != FX_OK
      || (st = fx_cuda_stream_new (cuda, &cuda->default_stream, diag)) != FX_OK)
    {
      l->cu.cuDevicePrimaryCtxRelease (cuda->device);
      goto fail;
    }
  *out = cuda;
  return FX_OK;

fail:
  pthread_mutex_destroy (&cuda->alloc.lock);
  pthread_mutex_destroy (&cuda->builtin_lock);
  free (cuda);
  return st;
}

void
fx_cuda_close (fx_cuda *cuda)
{
  if (!cuda)
    return;
  if (fx_cuda_enter (cuda, NULL) == FX_OK)
    CU.cuCtxSynchronize ();
  fx_cuda_blas_destroy (cuda);
  fx_cuda_lt_destroy (cuda);
  fx_cuda_builtin_destroy (cuda);
  fx_cuda_alloc_destroy (cuda);
  fx_cuda_stream_free (cuda->default_stream);
  CU.cuDevicePrimaryCtxRelease (cuda->device);
  pthread_mutex_destroy (&cuda->alloc.lock);
  pthread_mutex_destroy (&cuda->builtin_lock);
  free (cuda);
}

const fx_cuda_device_info *
fx_cuda_get_info (const fx_cuda *cuda)
{
  return &cuda->info;
}

fx_status
fx_cuda_synchronize (fx_cuda *cuda, fx_diag *diag)
{
  FX_CU_ENTER_TRY (cuda, CU.cuCtxSynchronize (), "cuCtxSynchronize", diag);
  return FX_OK;
}

fx_status
fx_cuda_mem_info (fx_cuda *cuda, size_t *free_bytes, size_t *total_bytes, fx_diag *diag)
{
  FX_CU_ENTER_TRY (cuda, CU.cuMemGetInfo (free_bytes, total_bytes), "cuMemGetInfo", diag);
  return FX_OK;
}

/* ---------------------------------------------------------------- streams */

fx_cuda_stream *
fx_cuda_default_stream (fx_cuda *cuda)
{
  return cuda->default_stream;
}

fx_status
fx_cuda_stream_new (fx_cuda *cuda, fx_cuda_stream **out, fx_diag *diag)
{
  fx_cuda_stream *s;
  fx_status st;

  *out = NULL;
  if ((s = fx_cuda_enter_alloc (cuda, sizeof *s, &st, diag)) == NULL)
    return st;
  s->cuda = cuda;
  /* Non-blocking: no implicit synchronization with the legacy NULL stream, and capturable. */
  *out = fx_cuda_handle_made (s, CU.cuStreamCreate (&s->stream, FX_CU_STREAM_NON_BLOCKING), "cuStreamCreate", &st,
                              diag);
  return st;
}

void
fx_cuda_stream_free (fx_cuda_stream *stream)
{
  if (!stream)
    return;
  /* Cached blocks remember their stream by address: let its work finish before the address can be reused. */
  if (fx_cuda_enter (stream->cuda, NULL) == FX_OK)
    {
      CU.cuStreamSynchronize (stream->stream);
      CU.cuStreamDestroy (stream->stream);
    }
  free (stream);
}

fx_status
fx_cuda_stream_synchronize (fx_cuda_stream *stream, fx_diag *diag)
{
  FX_CU_ENTER_TRY (stream->cuda, CU.cuStreamSynchronize (stream->stream), "cuStreamSynchronize", diag);
  return FX_OK;
}

void *
fx_cuda_stream_handle (fx_cuda_stream *stream)
{
  return stream ? (void *) stream->stream : NULL;
}

/* ---------------------------------------------------------------- events */

fx_status
fx_cuda_event_new (fx_cuda *cuda, fx_cuda_event **out, fx_diag *diag)
{
  fx_cuda_event *e;
  fx_status st;

  *out = NULL;
  if ((e = fx_cuda_enter_alloc (cuda, sizeof *e, &st, diag)) == NULL)
    return st;
  e->cuda = cuda;
  *out = fx_cuda_handle_made (e, CU.cuEventCreate (&e->event, FX_CU_EVENT_DEFAULT), "cuEventCreate", &st, diag);
  return st;
}

void
fx_cuda_event_free (fx_cuda_event *event)
{
  if (!event)
    return;
  if (fx_cuda_enter (event->cuda, NULL) == FX_OK)
    CU.cuEventDestroy (event->event);
  free (event);
}

fx_status
fx_cuda_event_record (fx_cuda_event *event, fx_cuda_stream *stream, fx_diag *diag)
{
  fx_cuda_stream *s = fx_cuda_stream_or_default (event->cuda, stream);
  FX_CU_ENTER_TRY (event->cuda, CU.cuEventRecord (event->event, s->stream), "cuEventRecord", diag);
  return FX_OK;
}

fx_status
fx_cuda_event_synchronize (fx_cuda_event *event, fx_diag *diag)
{
  FX_CU_ENTER_TRY (event->cuda, CU.cuEventSynchronize (event->event), "cuEventSynchronize", diag);
  return FX_OK;
}

fx_status
fx_cuda_event_elapsed_ms (fx_cuda_event *start, fx_cuda_event *end, float *ms, fx_diag *diag)
{
  FX_CU_ENTER_TRY (start->cuda, CU.cuEventElapsedTime (ms, start->event, end->event), "cuEventElapsedTime", diag);
  return FX_OK;
}

/* ---------------------------------------------------------------- timelines */

typedef struct timeline_span
{
  char *name;
  fx_CUevent start, end;
  float ms;
  bool closed;
} timeline_span;

struct fx_cuda_timeline
{
  fx_cuda *cuda;
  timeline_span *spans;
  size_t n;          /* spans in use */
  size_t n_events;   /* spans whose events exist (pooled) */
  size_t cap;
};

fx_status
fx_cuda_timeline_new (fx_cuda *cuda, fx_cuda_timeline **out, fx_diag *diag)
{
  *out = calloc (1, sizeof **out);
  if (!*out)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  (*out)->cuda = cuda;
  return FX_OK;
}

void
fx_cuda_timeline_reset (fx_cuda_timeline *timeline)
{
  for (size_t i = 0; i < timeline->n; i++)
    {
      free (timeline->spans[i].name);
      timeline->spans[i].name = NULL;
      timeline->spans[i].closed = false;
      timeline->spans[i].ms = 0;
    }
  timeline->n = 0;
}

void
fx_cuda_timeline_free (fx_cuda_timeline *timeline)
{
  if (!timeline)
    return;
  fx_cuda_timeline_reset (timeline);
  if (fx_cuda_enter (timeline->cuda, NULL) == FX_OK)
    for (size_t i = 0; i < timeline->n_events; i++)
      {
        CU.cuEventDestroy (timeline->spans[i].start);
        CU.cuEventDestroy (timeline->spans[i].end);
      }
  free (timeline->spans);
  free (timeline);
}

fx_status
fx_cuda_timeline_begin (fx_cuda_timeline *timeline, fx_cuda_stream *stream, const char *name, fx_diag *diag)
{
  fx_cuda_stream *s = stream ? stream : timeline->cuda->default_stream;
  timeline_span *span;
  fx_status st;

  if (timeline->n > 0 && !timeline->spans[timeline->n - 1].closed)
    return fx_diag_set (diag, FX_ERR_INVALID, "timeline span '%s' is still open",
                        timeline->spans[timeline->n - 1].name);
  if ((st = fx_cuda_enter (timeline->cuda, diag)) != FX_OK)
    return st;
  if (timeline->n == timeline->cap)
    {
      size_t cap = timeline->cap ? timeline->cap * 2 : 16;
      timeline_span *spans = realloc (timeline->spans, cap * sizeof *spans);
      if (!spans)
        return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
      memset (spans + timeline->cap, 0, (cap - timeline->cap) * sizeof *spans);
      timeline->spans = spans;
      timeline->cap = cap;
    }
  span = &timeline->spans[timeline->n];
  if (timeline->n == timeline->n_events)
    {
      FX_CU_TRY (CU.cuEventCreate (&span->start, FX_CU_EVENT_DEFAULT), "cuEventCreate", diag);
      if ((st = fx_cuda_check (CU.cuEventCreate (&span->end, FX_CU_EVENT_DEFAULT), "cuEventCreate", diag)) != FX_OK)
        {
          CU.cuEventDestroy (span->start);
          return st;
        }
      timeline->n_events++;
    }
  span->name = strdup (name ? name : "");
  if (!span->name)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  span->closed = false;
  timeline->n++;
  FX_CU_TRY (CU.cuEventRecord (span->start, s->stream), "cuEventRecord", diag);
  return FX_OK;
}

fx_status
fx_cuda_timeline_end (fx_cuda_timeline *timeline, fx_cuda_stream *stream, fx_diag *diag)
{
  fx_cuda_stream *s = stream ? stream : timeline->cuda->default_stream;
  timeline_span *span;
  fx_status st;

  if (timeline->n == 0 || timeline->spans[timeline->n - 1].closed)
    return fx_diag_set (diag, FX_ERR_INVALID, "timeline end without a begin");
  if ((st = fx_cuda_enter (timeline->cuda, diag)) != FX_OK)
    return st;
  span = &timeline->spans[timeline->n - 1];
  span->closed = true;
  FX_CU_TRY (CU.cuEventRecord (span->end, s->stream), "cuEventRecord", diag);
  return FX_OK;
}

fx_status
fx_cuda_timeline_collect (fx_cuda_timeline *timeline, fx_diag *diag)
{
  fx_status st;

  if (timeline->n == 0)
    return FX_OK;
  if (!timeline->spans[timeline->n - 1].closed)
    return fx_diag_set (diag, FX_ERR_INVALID, "timeline span '%s' is still open",
                        timeline->spans[timeline->n - 1].name);
  if ((st = fx_cuda_enter (timeline->cuda, diag)) != FX_OK)
    return st;
  for (size_t i = 0; i < timeline->n; i++)
    {
      timeline_span *span = &timeline->spans[i];
      FX_CU_TRY (CU.cuEventSynchronize (span->end), "cuEventSynchronize", diag);
      FX_CU_TRY (CU.cuEventElapsedTime (&span->ms, span->start, span->end), "cuEventElapsedTime", diag);
    }
  return FX_OK;
}

size_t
fx_cuda_timeline_count (const fx_cuda_timeline *timeline)
{
  return timeline->n;
}

const char *
fx_cuda_timeline_name (const fx_cuda_timeline *timeline, size_t i)
{
  return i < timeline->n ? timeline->spans[i].name : NULL;
}

float
fx_cuda_timeline_ms (const fx_cuda_timeline *timeline, size_t i)
{
  return i < timeline->n ? timeline->spans[i].ms : 0.0f;
}

/* ---------------------------------------------------------------- transfers */

typedef enum
{
  XFER_H2D,
  XFER_D2H,
  XFER_D2D,
  XFER_SET,
} xfer_kind;

/* One copy or memset of NBYTES to DST (a device pointer, or HOST for XFER_D2H) from SRC (or HOST for XFER_H2D, VALUE
   for XFER_SET). Without a stream it is queued on the default stream, so that it is ordered after the work there
   (which a synchronous copy would not see), and waited for. */
static fx_status
transfer (fx_cuda *cuda, fx_cuda_stream *stream, xfer_kind kind, fx_cuda_ptr dst, fx_cuda_ptr src, void *host,
          unsigned char value, size_t nbytes, fx_diag *diag)
{
  fx_cuda_stream *s = fx_cuda_stream_or_default (cuda, stream);
  fx_status st;

  if (nbytes == 0)
    return FX_OK;
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return st;
  switch (kind)
    {
    case XFER_H2D:
      FX_CU_TRY (CU.cuMemcpyHtoDAsync (dst, host, nbytes, s->stream), "cuMemcpyHtoDAsync", diag);
      break;
    case XFER_D2H:
      FX_CU_TRY (CU.cuMemcpyDtoHAsync (host, src, nbytes, s->stream), "cuMemcpyDtoHAsync", diag);
      break;
    case XFER_D2D:
      FX_CU_TRY (CU.cuMemcpyDtoDAsync (dst, src, nbytes, s->stream), "cuMemcpyDtoDAsync", diag);
      break;
    case XFER_SET:
    default:
      FX_CU_TRY (CU.cuMemsetD8Async (dst, value, nbytes, s->stream), "cuMemsetD8Async", diag);
      break;
    }
  if (!stream)
    FX_CU_TRY (CU.cuStreamSynchronize (s->stream), "cuStreamSynchronize", diag);
  return FX_OK;
}

fx_status
fx_cuda_copy_h2d (fx_cuda *cuda, fx_cuda_stream *stream, fx_cuda_ptr dst, const void *src, size_t nbytes,
                  fx_diag *diag)
{
  return transfer (cuda, stream, XFER_H2D, dst, 0, (void *) src, 0, nbytes, diag);
}

fx_status
fx_cuda_copy_d2h (fx_cuda *cuda, fx_cuda_stream *stream, void *dst, fx_cuda_ptr src, size_t nbytes, fx_diag *diag)
{
  return transfer (cuda, stream, XFER_D2H, 0, src, dst, 0, nbytes, diag);
}

fx_status
fx_cuda_copy_d2d (fx_cuda *cuda, fx_cuda_stream *stream, fx_cuda_ptr dst, fx_cuda_ptr src, size_t nbytes,
                  fx_diag *diag)
{
  return transfer (cuda, stream, XFER_D2D, dst, src, NULL, 0, nbytes, diag);
}

fx_status
fx_cuda_memset (fx_cuda *cuda, fx_cuda_stream *stream, fx_cuda_ptr dst, unsigned char value, size_t nbytes,
                fx_diag *diag)
{
  return transfer (cuda, stream, XFER_SET, dst, 0, NULL, value, nbytes, diag);
}

fx_status
fx_cuda_host_alloc (fx_cuda *cuda, size_t nbytes, void **out, fx_diag *diag)
{
  fx_status st;

  *out = NULL;
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return st;
  FX_CU_TRY (CU.cuMemAllocHost (out, nbytes ? nbytes : 1), "cuMemAllocHost", diag);
  return FX_OK;
}

void
fx_cuda_host_free (fx_cuda *cuda, void *ptr)
{
  if (ptr && fx_cuda_enter (cuda, NULL) == FX_OK)
    CU.cuMemFreeHost (ptr);
}

/* ---------------------------------------------------------------- DLPack pointers */

fx_status
fx_cuda_check_device_ptr (fx_cuda *cuda, fx_cuda_ptr ptr, fx_diag *diag)
{
  unsigned int mem_type = 0;
  int ordinal = -1;
  fx_CUresult res;
  fx_status st;

  if (ptr == 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "null device pointer");
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return st;
  res = CU.cuPointerGetAttribute (&mem_type, FX_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
  if (res != FX_CUDA_SUCCESS)
    return fx_diag_set (diag, FX_ERR_INVALID, "0x%llx is not memory known to the CUDA driver",
                        (unsigned long long) ptr);
  if (mem_type != FX_CU_MEMORYTYPE_DEVICE)
    return fx_diag_set (diag, FX_ERR_INVALID, "0x%llx is not device memory (CUmemorytype %u)",
                        (unsigned long long) ptr, mem_type);
  res = CU.cuPointerGetAttribute (&ordinal, FX_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr);
  if (res == FX_CUDA_SUCCESS && ordinal != cuda->ordinal)
    return fx_diag_set (diag, FX_ERR_INVALID, "0x%llx lives on cuda:%d, expected cuda:%d",
                        (unsigned long long) ptr, ordinal, cuda->ordinal);
  return FX_OK;
}

fx_status
fx_cuda_check_dlpack_device (fx_cuda *cuda, int32_t device_type, int32_t device_id, fx_diag *diag)
{
  if (device_type != FX_CUDA_DLPACK_DEVICE_TYPE)
    return fx_diag_set (diag, FX_ERR_INVALID, "DLPack device type %d is not kDLCUDA (%d)", (int) device_type,
                        FX_CUDA_DLPACK_DEVICE_TYPE);
  if (device_id != cuda->ordinal)
    return fx_diag_set (diag, FX_ERR_INVALID, "DLPack tensor on cuda:%d, expected cuda:%d", (int) device_id,
                        cuda->ordinal);
  return FX_OK;
}
