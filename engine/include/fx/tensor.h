/* fx/tensor.h: strided CPU tensors (views, broadcasting, type promotion), the tracking allocator, seeded random
   generation, runtime values and DLPack interchange. */
#pragma once

#include "fx/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FX_TENSOR_MAX_DIMS 8

/* ---------------------------------------------------------------- half-precision conversions */

/* IEEE binary16 and bfloat16 as bit patterns; float -> half rounds to nearest even, NaN stays NaN. */
uint16_t fx_f32_to_f16 (float value);
float fx_f16_to_f32 (uint16_t bits);
uint16_t fx_f32_to_bf16 (float value);
float fx_bf16_to_f32 (uint16_t bits);

/* Dtypes the reference kernels compute on (f32 f64 f16 bf16 i64 i32 i16 i8 u8 bool). */
bool fx_dtype_is_supported (fx_dtype dtype);

/* ---------------------------------------------------------------- allocator */

/* Counts live and peak bytes of every storage it hands out; one per run, or the process-wide default. */
typedef struct fx_allocator
{
  size_t live_bytes;
  size_t peak_bytes;
  size_t total_allocs;
} fx_allocator;

fx_allocator *fx_allocator_default (void);
void fx_allocator_reset_peak (fx_allocator *alloc);   /* peak := live */

/* ---------------------------------------------------------------- storage and tensors */

typedef struct fx_storage fx_storage;
struct fx_storage
{
  int refcount;
  void *data;               /* 64-byte aligned when owned */
  size_t nbytes;
  fx_device device;
  fx_allocator *alloc;      /* NULL: external memory (DLPack import) */
  void (*release) (void *ctx); /* external memory: called when the last reference goes */
  void *release_ctx;
};

/* A strided view over a storage. sizes/strides/offset are in elements. storage may be NULL: a meta tensor
   (shape propagation), which carries dtype, shape and strides but no data. Tensors are reference counted. */
typedef struct fx_tensor
{
  int refcount;
  fx_storage *storage;
  fx_dtype dtype;
  fx_device device;
  int ndim;
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  int64_t strides[FX_TENSOR_MAX_DIMS];
  int64_t offset;
} fx_tensor;

/* Validates a layout before anything sizes memory or index math from it: ndim within FX_TENSOR_MAX_DIMS, sizes >= 0,
   and numel * item size and the storage extent ((offset + sum of (size - 1) * |stride|) + 1) * item size fit in int64.
   strides NULL: contiguous. nbytes (may be NULL): bytes of storage the layout needs. On failure a message without the
   node (callers add it) in diag and FX_ERR_INVALID. */
fx_status fx_layout_check (fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset,
                           size_t *nbytes, fx_diag *diag);
/* The most bytes one tensor's storage may take: $FX_MAX_TENSOR_BYTES when set (a number, suffixes k/M/G/T), else the
   machine's physical memory. Allocations above it fail with a clear error instead of overcommitting. */
size_t fx_tensor_max_bytes (void);
/* fx_tensor_new_strided with the reason for a failure in diag: a bad layout, over fx_tensor_max_bytes, or no memory. */
fx_status fx_tensor_new_checked (fx_allocator *alloc, fx_dtype dtype, int ndim, const int64_t *sizes,
                                 const int64_t *strides, fx_tensor **out, fx_diag *diag);
/* Contiguous tensor with fresh (uninitialised, zeroed for safety) storage from alloc (NULL: the default). */
fx_tensor *fx_tensor_new (fx_allocator *alloc, fx_dtype dtype, int ndim, const int64_t *sizes);
/* Fresh storage with the given strides (storage sized to the largest reachable element). */
fx_tensor *fx_tensor_new_strided (fx_allocator *alloc, fx_dtype dtype, int ndim, const int64_t *sizes,
                                  const int64_t *strides);
/* Meta tensor: no storage. strides NULL: contiguous. */
fx_tensor *fx_tensor_new_meta (fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides);
fx_tensor *fx_tensor_ref (fx_tensor *t);
void fx_tensor_unref (fx_tensor *t);

/* as_strided: a view sharing t's storage (no bounds check here; fx_tensor_check_bounds does it). */
fx_tensor *fx_tensor_as_strided (fx_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides,
                                 int64_t offset);
bool fx_tensor_check_bounds (const fx_tensor *t);
/* Materialises t (any strides) into a new contiguous tensor. */
fx_tensor *fx_tensor_contiguous_copy (fx_allocator *alloc, const fx_tensor *t);
/* dst[...] = src[...] with broadcasting of src to dst's shape and dtype conversion. */
fx_status fx_tensor_copy_into (fx_tensor *dst, const fx_tensor *src, fx_diag *diag);
fx_tensor *fx_tensor_to_dtype (fx_allocator *alloc, const fx_tensor *t, fx_dtype dtype);

int64_t fx_tensor_numel (const fx_tensor *t);
size_t fx_tensor_nbytes (const fx_tensor *t);       /* numel * item size */
bool fx_tensor_is_contiguous (const fx_tensor *t);
bool fx_tensor_is_meta (const fx_tensor *t);
void fx_contiguous_strides (int ndim, const int64_t *sizes, int64_t *strides);
/* Pointer to the element at a flat (row-major) logical index, honouring strides. */
void *fx_tensor_elem_ptr (const fx_tensor *t, int64_t flat_index);
void *fx_tensor_data (const fx_tensor *t);          /* pointer to element 0 (storage + offset) */

/* Element access through double/int64 (every dtype; f16/bf16 rounded on store). */
double fx_tensor_get_f64 (const fx_tensor *t, int64_t flat_index);
int64_t fx_tensor_get_i64 (const fx_tensor *t, int64_t flat_index);
void fx_tensor_set_f64 (fx_tensor *t, int64_t flat_index, double value);
void fx_tensor_set_i64 (fx_tensor *t, int64_t flat_index, int64_t value);
double fx_load_f64 (const void *ptr, fx_dtype dtype);
void fx_store_f64 (void *ptr, fx_dtype dtype, double value);
int64_t fx_load_i64 (const void *ptr, fx_dtype dtype);
void fx_store_i64 (void *ptr, fx_dtype dtype, int64_t value);

void fx_tensor_fill_f64 (fx_tensor *t, double value);
/* "f32[2, 3][3, 1]cpu": the print_readable annotation of the tensor. */
void fx_tensor_describe (const fx_tensor *t, fx_buf *out);
/* torch-like short text of the values (first `limit` elements). */
void fx_tensor_format_values (const fx_tensor *t, size_t limit, fx_buf *out);
/* Fills an fx_tensor_meta (sizes/strides from arena). */
void fx_tensor_to_meta (const fx_tensor *t, fx_arena *arena, fx_tensor_meta *meta);

/* ---------------------------------------------------------------- broadcasting and type promotion */

/* NumPy/PyTorch broadcasting; false (and a message in diag) when the shapes do not broadcast. */
bool fx_broadcast_shapes (int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out,
                          fx_diag *diag);
/* Strides of t viewed at the broadcast shape (0 on broadcast dims). */
void fx_broadcast_strides (const fx_tensor *t, int ndim, const int64_t *sizes, int64_t *strides);

/* torch.promote_types */
fx_dtype fx_promote_types (fx_dtype a, fx_dtype b);

/* torch.result_type over operands: dimensioned tensors outrank zero-dim tensors, which outrank Python scalars,
   within the same category (bool < integral < floating). */
typedef struct fx_type_promo
{
  fx_dtype dim_result;   /* FX_DTYPE_UNKNOWN while none seen */
  fx_dtype zero_result;
  fx_dtype wrapped_result;
} fx_type_promo;

void fx_type_promo_init (fx_type_promo *p);
void fx_type_promo_add_tensor (fx_type_promo *p, const fx_tensor *t);
void fx_type_promo_add_dtype (fx_type_promo *p, fx_dtype dtype, bool zero_dim);
void fx_type_promo_add_scalar_bool (fx_type_promo *p);
void fx_type_promo_add_scalar_int (fx_type_promo *p);
void fx_type_promo_add_scalar_float (fx_type_promo *p);
fx_dtype fx_type_promo_result (const fx_type_promo *p);

/* ---------------------------------------------------------------- random */

/* Seeded generator (splitmix64 seeding a xoshiro256**): identical sequences for identical seeds on every machine. */
typedef struct fx_generator
{
  uint64_t s[4];
  bool has_spare;
  double spare;
} fx_generator;

void fx_generator_seed (fx_generator *gen, uint64_t seed);
uint64_t fx_generator_next_u64 (fx_generator *gen);
double fx_generator_uniform (fx_generator *gen);    /* [0, 1) */
double fx_generator_normal (fx_generator *gen);     /* standard normal */
void fx_tensor_fill_uniform (fx_tensor *t, fx_generator *gen, double low, double high);
void fx_tensor_fill_normal (fx_tensor *t, fx_generator *gen, double mean, double std);
void fx_tensor_fill_randint (fx_tensor *t, fx_generator *gen, int64_t low, int64_t high);

/* ---------------------------------------------------------------- runtime values */

typedef enum fx_value_kind
{
  FX_VALUE_NONE,
  FX_VALUE_TENSOR,
  FX_VALUE_INT,
  FX_VALUE_FLOAT,
  FX_VALUE_BOOL,
  FX_VALUE_STR,
  FX_VALUE_DTYPE,
  FX_VALUE_DEVICE,
  FX_VALUE_LAYOUT,
  FX_VALUE_MEMFMT,
  FX_VALUE_LIST,     /* int[], Tensor[], Tensor?[] ... */
  FX_VALUE_TUPLE,    /* multi-output ops, graph outputs */
  FX_VALUE_KIND_COUNT
} fx_value_kind;

typedef struct fx_value fx_value;
struct fx_value
{
  fx_value_kind kind;
  union
  {
    fx_tensor *t;          /* one reference owned by the value */
    int64_t i;
    double f;
    bool b;
    const char *s;
    fx_dtype dtype;
    fx_device device;
    fx_layout layout;
    fx_memfmt memfmt;
    struct
    {
      fx_value *items;
      size_t n;
    } seq;
  } u;
};

fx_value fx_value_none (void);
fx_value fx_value_tensor (fx_tensor *t);   /* takes the reference */
fx_value fx_value_int (int64_t i);
fx_value fx_value_float (double f);
fx_value fx_value_bool (bool b);
/* Copies the value: tensor references taken, sequences copied into arena. */
fx_value fx_value_dup (const fx_value *v, fx_arena *arena);
/* Drops the tensor references held (recursively); the value becomes NONE. */
void fx_value_clear (fx_value *v);
void fx_value_describe (const fx_value *v, fx_buf *out);

/* ---------------------------------------------------------------- DLPack (v0.8 ABI, defined from the public spec) */

typedef enum
{
  FX_DL_CPU = 1,
  FX_DL_CUDA = 2,
  FX_DL_CUDA_HOST = 3,
} fx_dl_device_type;

typedef enum
{
  FX_DL_INT = 0,
  FX_DL_UINT = 1,
  FX_DL_FLOAT = 2,
  FX_DL_OPAQUE_HANDLE = 3,
  FX_DL_BFLOAT = 4,
  FX_DL_COMPLEX = 5,
  FX_DL_BOOL = 6,
} fx_dl_type_code;

typedef struct fx_dl_device
{
  int32_t device_type;
  int32_t device_id;
} fx_dl_device;

typedef struct fx_dl_data_type
{
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} fx_dl_data_type;

typedef struct fx_dl_tensor
{
  void *data;
  fx_dl_device device;
  int32_t ndim;
  fx_dl_data_type dtype;
  int64_t *shape;
  int64_t *strides;     /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} fx_dl_tensor;

typedef struct fx_dl_managed_tensor fx_dl_managed_tensor;
struct fx_dl_managed_tensor
{
  fx_dl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter) (fx_dl_managed_tensor *self);
};

/* Exports a reference to t (no copy); the consumer calls deleter once. */
fx_dl_managed_tensor *fx_tensor_to_dlpack (fx_tensor *t);
/* Imports without a copy; takes ownership of managed (its deleter runs when the tensor's storage dies). */
fx_status fx_tensor_from_dlpack (fx_dl_managed_tensor *managed, fx_tensor **out, fx_diag *diag);

/* ---------------------------------------------------------------- saved tensors */

/* One tensor per file: a one-line JSON header {"dtype":"float32","shape":[..]} then the contiguous raw bytes
   (little endian). This is also how tensors travel to the torch subprocess backend. */
fx_status fx_tensor_save (const fx_tensor *t, const char *path, fx_diag *diag);
fx_status fx_tensor_load (const char *path, fx_allocator *alloc, fx_tensor **out, fx_diag *diag);
/* Raw contiguous bytes only (shape and dtype known by the caller). */
fx_status fx_tensor_save_raw (const fx_tensor *t, const char *path, fx_diag *diag);
fx_status fx_tensor_load_raw (const char *path, fx_allocator *alloc, fx_dtype dtype, int ndim,
                              const int64_t *sizes, fx_tensor **out, fx_diag *diag);

#ifdef __cplusplus
}
#endif
