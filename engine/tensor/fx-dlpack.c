/* fx-dlpack.c: DLPack export/import without copies, and the one-tensor-per-file format for saved tensors. */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "fx/tensor.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  fx_dl_managed_tensor managed;
  fx_tensor *tensor;
  int64_t shape[FX_TENSOR_MAX_DIMS];
  int64_t strides[FX_TENSOR_MAX_DIMS];
} export_ctx;

static void
export_deleter (fx_dl_managed_tensor *self)
{
  export_ctx *ctx = self->manager_ctx;
  fx_tensor_unref (ctx->tensor);
  free (ctx);
}

static bool
dtype_to_dl (fx_dtype dtype, fx_dl_data_type *out)
{
  out->lanes = 1;
  out->bits = (uint8_t) (fx_dtype_size (dtype) * 8);
  switch (dtype)
    {
    case FX_DTYPE_F32: case FX_DTYPE_F64: case FX_DTYPE_F16: out->code = FX_DL_FLOAT; return true;
    case FX_DTYPE_BF16: out->code = FX_DL_BFLOAT; return true;
    case FX_DTYPE_I64: case FX_DTYPE_I32: case FX_DTYPE_I16: case FX_DTYPE_I8: out->code = FX_DL_INT; return true;
    case FX_DTYPE_U8: out->code = FX_DL_UINT; return true;
    case FX_DTYPE_BOOL: out->code = FX_DL_BOOL; return true;
    default: return false;
    }
}

static fx_dtype
dtype_from_dl (fx_dl_data_type dt)
{
  if (dt.lanes != 1)
    return FX_DTYPE_UNKNOWN;
  switch (dt.code)
    {
    case FX_DL_FLOAT:
      return dt.bits == 32 ? FX_DTYPE_F32 : dt.bits == 64 ? FX_DTYPE_F64 : dt.bits == 16 ? FX_DTYPE_F16 : FX_DTYPE_UNKNOWN;
    case FX_DL_BFLOAT:
      return dt.bits == 16 ? FX_DTYPE_BF16 : FX_DTYPE_UNKNOWN;
    case FX_DL_INT:
      return dt.bits == 64 ? FX_DTYPE_I64 : dt.bits == 32 ? FX_DTYPE_I32 : dt.bits == 16 ? FX_DTYPE_I16
             : dt.bits == 8 ? FX_DTYPE_I8 : FX_DTYPE_UNKNOWN;
    case FX_DL_UINT:
      return dt.bits == 8 ? FX_DTYPE_U8 : FX_DTYPE_UNKNOWN;
    case FX_DL_BOOL:
      return dt.bits == 8 ? FX_DTYPE_BOOL : FX_DTYPE_UNKNOWN;
    default:
      return FX_DTYPE_UNKNOWN;
    }
}

fx_dl_managed_tensor *
fx_tensor_to_dlpack (fx_tensor *t)
{
  export_ctx *ctx = calloc (1, sizeof *ctx);
  if (ctx == NULL || t->storage == NULL || !dtype_to_dl (t->dtype, &ctx->managed.dl_tensor.dtype))
    {
      free (ctx);
      return NULL;
    }
  ctx->tensor = fx_tensor_ref (t);
  for (int d = 0; d < t->ndim; d++)
    {
      ctx->shape[d] = t->sizes[d];
      ctx->strides[d] = t->strides[d];
    }
  fx_dl_tensor *dl = &ctx->managed.dl_tensor;
  /* The view's offset goes into the data pointer, byte_offset stays 0, as PyTorch exports: torch 1.13's
     from_dlpack ignores byte_offset, so a split's second half came back as its first. */
  dl->data = (char *) t->storage->data + (size_t) t->offset * fx_dtype_size (t->dtype);
  dl->byte_offset = 0;
  dl->device.device_type = t->device.type == FX_DEVICE_CUDA ? FX_DL_CUDA : FX_DL_CPU;
  dl->device.device_id = t->device.index < 0 ? 0 : t->device.index;
  dl->ndim = t->ndim;
  dl->shape = ctx->shape;
  dl->strides = ctx->strides;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = export_deleter;
  return &ctx->managed;
}

static void
import_release (void *ctx)
{
  fx_dl_managed_tensor *m = ctx;
  if (m->deleter != NULL)
    m->deleter (m);
}

fx_status
fx_tensor_from_dlpack (fx_dl_managed_tensor *managed, fx_tensor **out, fx_diag *diag)
{
  *out = NULL;
  fx_dl_tensor *dl = &managed->dl_tensor;
  fx_dtype dtype = dtype_from_dl (dl->dtype);
  if (dtype == FX_DTYPE_UNKNOWN)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "DLPack dtype code %u bits %u lanes %u is not supported",
                        dl->dtype.code, dl->dtype.bits, dl->dtype.lanes);
  if (dl->ndim < 0 || dl->ndim > FX_TENSOR_MAX_DIMS)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "DLPack tensor has %d dims (at most %d)", dl->ndim,
                        FX_TENSOR_MAX_DIMS);
  if (dl->device.device_type != FX_DL_CPU && dl->device.device_type != FX_DL_CUDA_HOST
      && dl->device.device_type != FX_DL_CUDA)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "DLPack device type %d is not supported", dl->device.device_type);
  if (dl->byte_offset % fx_dtype_size (dtype) != 0)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "DLPack byte_offset is not a multiple of the item size");
  fx_status lst = fx_layout_check (dtype, dl->ndim, dl->shape, dl->strides, 0, NULL, diag);
  if (lst != FX_OK)
    return lst;
  fx_tensor *t = fx_tensor_new_meta (dtype, dl->ndim, dl->shape, dl->strides);
  if (t == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  if (dl->device.device_type == FX_DL_CUDA)
    {
      t->device.type = FX_DEVICE_CUDA;
      t->device.index = dl->device.device_id;
    }
  fx_storage *s = calloc (1, sizeof *s);
  if (s == NULL)
    {
      fx_tensor_unref (t);
      return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
    }
  s->refcount = 1;
  s->data = dl->data;
  int64_t hi = 0;
  for (int d = 0; d < dl->ndim; d++)
    if (t->sizes[d] > 0 && t->strides[d] > 0)
      hi += (t->sizes[d] - 1) * t->strides[d];
  s->nbytes = dl->byte_offset + (size_t) (hi + 1) * fx_dtype_size (dtype);
  s->device = t->device;
  s->release = import_release;
  s->release_ctx = managed;
  t->storage = s;
  t->offset = (int64_t) (dl->byte_offset / fx_dtype_size (dtype));
  *out = t;
  return FX_OK;
}

/* ---------------------------------------------------------------- saved tensors */

fx_status
fx_tensor_save_raw (const fx_tensor *t, const char *path, fx_diag *diag)
{
  fx_tensor *c = fx_tensor_is_contiguous (t) ? NULL : fx_tensor_contiguous_copy (NULL, t);
  const fx_tensor *src = c ? c : t;
  fx_status st = fx_file_write (path, fx_tensor_data (src) ? fx_tensor_data (src) : "", fx_tensor_nbytes (src), diag);
  fx_tensor_unref (c);
  return st;
}

fx_status
fx_tensor_save (const fx_tensor *t, const char *path, fx_diag *diag)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_buf_printf (&b, "{\"dtype\": \"%s\", \"shape\": [", fx_dtype_name (t->dtype));
  fx_buf_put_ints (&b, t->sizes, t->ndim);
  fx_buf_puts (&b, "]}\n");
  fx_tensor *c = fx_tensor_is_contiguous (t) ? NULL : fx_tensor_contiguous_copy (NULL, t);
  const fx_tensor *src = c ? c : t;
  if (fx_tensor_nbytes (src))
    fx_buf_append (&b, fx_tensor_data (src), fx_tensor_nbytes (src));
  fx_status st = fx_file_write (path, b.data, b.len, diag);
  fx_tensor_unref (c);
  fx_buf_free (&b);
  return st;
}

fx_status
fx_tensor_load_raw (const char *path, fx_allocator *alloc, fx_dtype dtype, int ndim, const int64_t *sizes,
                    fx_tensor **out, fx_diag *diag)
{
  char *data;
  size_t len;
  *out = NULL;
  fx_status st = fx_file_read (path, &data, &len, diag);
  if (st != FX_OK)
    return st;
  fx_tensor *t = fx_tensor_new (alloc, dtype, ndim, sizes);
  if (t == NULL)
    {
      free (data);
      return fx_diag_set (diag, FX_ERR_NOMEM, "%s: cannot allocate the tensor", path);
    }
  if (len != fx_tensor_nbytes (t))
    {
      free (data);
      fx_tensor_unref (t);
      return fx_diag_set (diag, FX_ERR_PARSE, "%s: %zu bytes, expected %zu for the tensor's shape and dtype", path,
                          len, fx_tensor_nbytes (t));
    }
  if (len)
    memcpy (fx_tensor_data (t), data, len);
  free (data);
  *out = t;
  return FX_OK;
}

fx_status
fx_tensor_load (const char *path, fx_allocator *alloc, fx_tensor **out, fx_diag *diag)
{
  char *data;
  size_t len;
  *out = NULL;
  char *payload;
  fx_status st = fx_file_read_header (path, &data, &len, &payload, diag);
  if (st != FX_OK)
    return st;
  json_object *h = json_tokener_parse (data);
  json_object *jd, *js;
  fx_dtype dtype = FX_DTYPE_UNKNOWN;
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  int ndim = -1;
  if (h && json_object_object_get_ex (h, "dtype", &jd) && json_object_object_get_ex (h, "shape", &js)
      && json_object_is_type (js, json_type_array))
    {
      dtype = fx_dtype_from_name (json_object_get_string (jd));
      size_t n = json_object_array_length (js);
      if (n <= FX_TENSOR_MAX_DIMS)
        {
          ndim = (int) n;
          for (size_t i = 0; i < n; i++)
            {
              sizes[i] = json_object_get_int64 (json_object_array_get_idx (js, i));
              if (sizes[i] < 0)
                ndim = -1;
            }
        }
    }
  json_object_put (h);
  if (!fx_dtype_is_supported (dtype) || ndim < 0)
    {
      free (data);
      fx_diag_set (diag, FX_ERR_PARSE, "%s: bad tensor header (want {\"dtype\": ..., \"shape\": [...]})", path);
      fx_diag_locate (diag, path, 1, 1, data, strlen (data));
      return FX_ERR_PARSE;
    }
  fx_tensor *t = fx_tensor_new (alloc, dtype, ndim, sizes);
  size_t body = len - (size_t) (payload - data);
  if (t == NULL || body != fx_tensor_nbytes (t))
    {
      size_t want = t ? fx_tensor_nbytes (t) : 0;
      fx_tensor_unref (t);
      free (data);
      return fx_diag_set (diag, FX_ERR_PARSE, "%s: %zu data bytes, expected %zu", path, body, want);
    }
  if (body)
    memcpy (fx_tensor_data (t), payload, body);
  free (data);
  *out = t;
  return FX_OK;
}
