/* fx-cuda.h: the CUDA runtime of the GPU backend: the driver, NVRTC and cuBLAS loaded at run time, device contexts,
   streams, events and per-kernel timing, a caching device allocator, transfers, NVRTC builds with an on-disk cubin
   cache, kernel launches, CUDA graph capture and replay, and cuBLAS GEMM over row-major strided matrices.

   Nothing here needs CUDA at build time. Where there is no driver, no device or no library, calls fail with
   FX_ERR_NO_DEVICE and a message that starts with "no CUDA device" (or names the missing library) and says why. */
#pragma once

#include "fx/common.h"
#include "fx/ir.h"
#include "fx/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A device address (CUdeviceptr). 0 is never a valid allocation. */
typedef uint64_t fx_cuda_ptr;

typedef struct fx_cuda fx_cuda;                  /* one device: its primary context, default stream, allocator */
typedef struct fx_cuda_stream fx_cuda_stream;
typedef struct fx_cuda_event fx_cuda_event;
typedef struct fx_cuda_timeline fx_cuda_timeline;
typedef struct fx_cuda_module fx_cuda_module;
typedef struct fx_cuda_kernel fx_cuda_kernel;
typedef struct fx_cuda_graph fx_cuda_graph;
typedef struct fx_cuda_blas fx_cuda_blas;

/* ---------------------------------------------------------------- probing (loads libraries, needs no device) */

typedef struct fx_cuda_runtime_info
{
  bool have_driver;          /* libcuda loaded and cuInit succeeded */
  int driver_version;        /* 13000 for CUDA 13.0 */
  int device_count;
  char driver_path[256];
  char driver_error[512];    /* why no device is usable; "" when one is */
  bool have_nvrtc;
  int nvrtc_major, nvrtc_minor;
  char nvrtc_path[256];
  char nvrtc_error[512];
  bool have_cublas;
  char cublas_path[256];
  char cublas_error[512];
  bool have_cublaslt;        /* GEMMs with epilogues and algorithm choice; without it GEMMs use cuBLAS */
  char cublaslt_path[256];
  char cublaslt_error[512];
} fx_cuda_runtime_info;

/* Fills info (never fails to); returns FX_OK when at least one device is usable, else FX_ERR_NO_DEVICE with
   "no CUDA device: <why>" in diag. The driver library is found as FX_CUDA_DRIVER_LIBRARY names it, else libcuda.so.1;
   NVRTC, cuBLAS and cuBLASLt as FX_NVRTC_LIBRARY / FX_CUBLAS_LIBRARY / FX_CUBLASLT_LIBRARY name them ("none" turns
   cuBLASLt off), else by their sonames and CUDA's usual folders. */
fx_status fx_cuda_probe (fx_cuda_runtime_info *info, fx_diag *diag);
/* FX_OK when NVRTC can be used (no device needed), else FX_ERR_NO_DEVICE "NVRTC not found: ...". */
fx_status fx_cuda_nvrtc_available (fx_diag *diag);

/* ---------------------------------------------------------------- devices */

typedef struct fx_cuda_device_info
{
  int ordinal;
  char name[256];
  int cc_major, cc_minor;           /* compute capability: 9.0 on H100 */
  int sm_count;
  int warp_size;
  int max_threads_per_block;
  int max_threads_per_sm;
  int max_registers_per_block;
  int max_shared_per_block;         /* without opt-in */
  int max_shared_per_block_optin;   /* with cuFuncSetAttribute (fx_cuda_kernel_set_dynamic_shared) */
  int max_shared_per_sm;
  int l2_bytes;
  size_t total_bytes;
  double peak_bandwidth_gbs;        /* 2 * memory clock * bus width / 8, from the attributes (a theoretical figure) */
  int driver_version;
} fx_cuda_device_info;

/* Opens device `ordinal` (its primary context, shared with the CUDA runtime, cuBLAS and PyTorch in the process). */
fx_status fx_cuda_open (int ordinal, fx_cuda **out, fx_diag *diag);
/* Synchronizes, frees every cached and live allocation, releases the context. */
void fx_cuda_close (fx_cuda *cuda);
const fx_cuda_device_info *fx_cuda_get_info (const fx_cuda *cuda);
/* "sm_90" for compute capability 9.0 */
void fx_cuda_arch_name (int cc_major, int cc_minor, char *out, size_t out_size);
fx_status fx_cuda_synchronize (fx_cuda *cuda, fx_diag *diag);
fx_status fx_cuda_mem_info (fx_cuda *cuda, size_t *free_bytes, size_t *total_bytes, fx_diag *diag);

/* ---------------------------------------------------------------- streams and events */

/* The device's own non-blocking stream, used where a call is given stream NULL. */
fx_cuda_stream *fx_cuda_default_stream (fx_cuda *cuda);
/* A new non-blocking stream (it does not synchronize with the legacy NULL stream; it can be captured). */
fx_status fx_cuda_stream_new (fx_cuda *cuda, fx_cuda_stream **out, fx_diag *diag);
void fx_cuda_stream_free (fx_cuda_stream *stream);
fx_status fx_cuda_stream_synchronize (fx_cuda_stream *stream, fx_diag *diag);
/* The CUstream handle, for interop (PyTorch's current stream, DLPack's stream argument). */
void *fx_cuda_stream_handle (fx_cuda_stream *stream);

fx_status fx_cuda_event_new (fx_cuda *cuda, fx_cuda_event **out, fx_diag *diag);
void fx_cuda_event_free (fx_cuda_event *event);
fx_status fx_cuda_event_record (fx_cuda_event *event, fx_cuda_stream *stream, fx_diag *diag);
fx_status fx_cuda_event_synchronize (fx_cuda_event *event, fx_diag *diag);
fx_status fx_cuda_event_elapsed_ms (fx_cuda_event *start, fx_cuda_event *end, float *ms, fx_diag *diag);

/* Per-kernel timing: an event pair around each named span, read back after the work. Events are pooled and reused
   after fx_cuda_timeline_reset, so a timed run creates no events once warm. */
fx_status fx_cuda_timeline_new (fx_cuda *cuda, fx_cuda_timeline **out, fx_diag *diag);
void fx_cuda_timeline_free (fx_cuda_timeline *timeline);
void fx_cuda_timeline_reset (fx_cuda_timeline *timeline);
/* name is copied. Spans do not nest. */
fx_status fx_cuda_timeline_begin (fx_cuda_timeline *timeline, fx_cuda_stream *stream, const char *name, fx_diag *diag);
fx_status fx_cuda_timeline_end (fx_cuda_timeline *timeline, fx_cuda_stream *stream, fx_diag *diag);
/* Waits for the last span and computes every span's milliseconds. */
fx_status fx_cuda_timeline_collect (fx_cuda_timeline *timeline, fx_diag *diag);
size_t fx_cuda_timeline_count (const fx_cuda_timeline *timeline);
const char *fx_cuda_timeline_name (const fx_cuda_timeline *timeline, size_t i);
float fx_cuda_timeline_ms (const fx_cuda_timeline *timeline, size_t i);

/* ---------------------------------------------------------------- caching allocator */

typedef struct fx_cuda_alloc_stats
{
  size_t allocated_bytes;        /* in live blocks (size classes) */
  size_t requested_bytes;        /* what live callers asked for */
  size_t cached_bytes;           /* in free blocks kept for reuse */
  size_t reserved_bytes;         /* allocated + cached: what the driver gave */
  size_t peak_allocated_bytes;
  size_t peak_reserved_bytes;
  uint64_t n_allocs;             /* fx_cuda_malloc calls */
  uint64_t n_frees;
  uint64_t n_cache_hits;         /* allocations served from a free block */
  uint64_t n_device_allocs;      /* cuMemAlloc calls */
  uint64_t n_device_frees;       /* cuMemFree calls */
} fx_cuda_alloc_stats;

/* The size class of a request: multiples of 512 bytes below 1 MiB, of 2 MiB from there (never 0). */
size_t fx_cuda_alloc_round (size_t nbytes);
/* Device memory ordered on `stream` (NULL: the default stream): a cached block of the same class and stream is
   reused, else the driver is asked; on out-of-memory the cache is emptied and the driver asked again. Blocks are
   256-byte aligned. nbytes 0 gives a 512-byte block. While a capture is under way on a stream, allocations come
   from that graph's private pool (fx_cuda_graph_capture_begin). */
fx_status fx_cuda_malloc (fx_cuda *cuda, size_t nbytes, fx_cuda_stream *stream, fx_cuda_ptr *out, fx_diag *diag);
/* Returns the block to its pool's cache (ptr 0 is ignored; an address this allocator did not hand out is a
   programming error and is ignored with a message on stderr). */
void fx_cuda_free (fx_cuda *cuda, fx_cuda_ptr ptr);
/* The size class of a live block, 0 when ptr is not one. */
size_t fx_cuda_alloc_block_size (fx_cuda *cuda, fx_cuda_ptr ptr);
void fx_cuda_alloc_get_stats (fx_cuda *cuda, fx_cuda_alloc_stats *stats);
void fx_cuda_alloc_reset_peak (fx_cuda *cuda);
/* Synchronizes the device and gives every cached block of the general pool back to the driver. */
fx_status fx_cuda_empty_cache (fx_cuda *cuda, fx_diag *diag);

/* ---------------------------------------------------------------- transfers (stream NULL: synchronous) */

fx_status fx_cuda_copy_h2d (fx_cuda *cuda, fx_cuda_stream *stream, fx_cuda_ptr dst, const void *src, size_t nbytes,
                            fx_diag *diag);
fx_status fx_cuda_copy_d2h (fx_cuda *cuda, fx_cuda_stream *stream, void *dst, fx_cuda_ptr src, size_t nbytes,
                            fx_diag *diag);
fx_status fx_cuda_copy_d2d (fx_cuda *cuda, fx_cuda_stream *stream, fx_cuda_ptr dst, fx_cuda_ptr src, size_t nbytes,
                            fx_diag *diag);
fx_status fx_cuda_memset (fx_cuda *cuda, fx_cuda_stream *stream, fx_cuda_ptr dst, unsigned char value, size_t nbytes,
                          fx_diag *diag);
/* Page-locked host memory (fast, truly asynchronous copies). */
fx_status fx_cuda_host_alloc (fx_cuda *cuda, size_t nbytes, void **out, fx_diag *diag);
void fx_cuda_host_free (fx_cuda *cuda, void *ptr);

/* ---------------------------------------------------------------- DLPack (kDLCUDA device pointers) */

#define FX_CUDA_DLPACK_DEVICE_TYPE 2   /* kDLCUDA */

/* FX_OK when ptr is device memory of this device (cuPointerGetAttribute), else FX_ERR_INVALID saying what it is.
   DLPack tensors that claim kDLCUDA are checked with this before any kernel reads them. */
fx_status fx_cuda_check_device_ptr (fx_cuda *cuda, fx_cuda_ptr ptr, fx_diag *diag);
/* Checks a DLPack device (type, id) against this device: FX_ERR_INVALID with "expected cuda:N" otherwise. */
fx_status fx_cuda_check_dlpack_device (fx_cuda *cuda, int32_t device_type, int32_t device_id, fx_diag *diag);

/* ---------------------------------------------------------------- engine tensors on the device (fx/tensor.h) */

/* A tensor on cuda:N whose storage is a block of the caching allocator (returned to the cache when the last
   reference goes). strides NULL: contiguous. The storage is not initialised. */
fx_status fx_cuda_tensor_new (fx_cuda *cuda, fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides,
                              fx_tensor **out, fx_diag *diag);
/* Gives T (a tensor without storage: fx_tensor_new_meta) the caching allocator's block at PTR (NBYTES) as its
   storage, returned to the cache when the last reference goes; on failure T and the block are untouched. */
fx_status fx_cuda_tensor_own (fx_cuda *cuda, fx_tensor *t, fx_cuda_ptr ptr, size_t nbytes, fx_diag *diag);
/* The device address of element 0 (storage + offset). */
fx_cuda_ptr fx_cuda_tensor_ptr (const fx_tensor *t);
/* Copies a CPU tensor to the device, keeping its strides when they are dense (else a contiguous copy first). */
fx_status fx_cuda_tensor_to_device (fx_cuda *cuda, fx_cuda_stream *stream, const fx_tensor *cpu, fx_tensor **out,
                                    fx_diag *diag);
/* Copies a device tensor to a new CPU tensor with the same sizes and strides; synchronous. */
fx_status fx_cuda_tensor_to_host (fx_cuda *cuda, fx_cuda_stream *stream, const fx_tensor *gpu, fx_tensor **out,
                                  fx_diag *diag);
/* FX_OK when t is a tensor with storage on this device (device type, index, and the driver's view of the pointer). */
fx_status fx_cuda_tensor_check (fx_cuda *cuda, const fx_tensor *t, fx_diag *diag);
/* Imports a kDLCUDA DLPack tensor (PyTorch's __dlpack__ on a GPU) without a copy, checked against this device.
   On success the tensor owns managed; on failure managed is untouched. */
fx_status fx_cuda_tensor_from_dlpack (fx_cuda *cuda, fx_dl_managed_tensor *managed, fx_tensor **out, fx_diag *diag);

/* Static outputs of a replayed CUDA graph (reduce-overhead), handed out without a copy as PyTorch's cudagraph trees
   do. The aliasing contract: such a tensor is the graph's own output buffer; the next replay of the same graph
   overwrites it, and freeing the graph gives its memory back. A generation counts the replays of one graph; a
   static tensor remembers the count it was made at, and every fx-cuda function that reads a device tensor
   (fx_cuda_tensor_check, _to_host, and through them the inductor's inputs) fails on a stale one with PyTorch's
   words: "Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run. ...".
   Clone (fx_cuda_tensor_to_host, or a device copy) what must outlive the next replay. */
typedef struct fx_cuda_generation fx_cuda_generation;

fx_cuda_generation *fx_cuda_generation_new (void);
void fx_cuda_generation_unref (fx_cuda_generation *gen);
/* A replay is about to overwrite the outputs: returns the new count. */
uint64_t fx_cuda_generation_bump (fx_cuda_generation *gen);
uint64_t fx_cuda_generation_get (const fx_cuda_generation *gen);
/* The owner is gone: every static tensor of it is stale from now on. */
void fx_cuda_generation_retire (fx_cuda_generation *gen);
/* A tensor over device memory it does not own (ptr, nbytes), valid while gen stays at its current count. The
   tensor holds a reference on gen, never on the memory. cuda NULL: device 0 (tests without a device). */
fx_status fx_cuda_tensor_new_static (fx_cuda *cuda, fx_cuda_ptr ptr, size_t nbytes, fx_cuda_generation *gen,
                                     fx_dtype dtype, int ndim, const int64_t *sizes, const int64_t *strides,
                                     fx_tensor **out, fx_diag *diag);
bool fx_cuda_tensor_is_static (const fx_tensor *t);
/* FX_OK for any tensor but a stale static output (FX_ERR_INVALID, PyTorch's message). */
fx_status fx_cuda_tensor_check_live (const fx_tensor *t, fx_diag *diag);

/* ---------------------------------------------------------------- NVRTC builds, modules, launches */

typedef struct fx_cuda_build_options
{
  const char *cache_dir;            /* NULL: $FX_CUDA_CACHE_DIR, else $XDG_CACHE_HOME/fx-workbench/cuda,
                                       else ~/.cache/fx-workbench/cuda */
  bool no_cache;                    /* neither read nor write the cache */
  bool line_info;                   /* -lineinfo (source lines in profilers) */
  const char *const *flags;         /* extra NVRTC options, part of the cache key */
  size_t n_flags;
} fx_cuda_build_options;

typedef struct fx_cuda_build_info
{
  bool cache_hit;                   /* the image came from the cache: NVRTC was not called */
  bool is_ptx;                      /* NVRTC does not know this GPU: PTX for the driver to finish */
  char arch[24];                    /* "sm_90", or "compute_90" for PTX */
  char key[65];                     /* SHA-256 of NVRTC version, arch, options, name and source (hex) */
  char cache_path[1024];            /* "" without a cache */
  double nvrtc_ms;                  /* time in nvrtcCompileProgram (0 on a hit) */
  double total_ms;                  /* the whole call, cache lookup and module load included */
  size_t image_bytes;
  char *log;                        /* NVRTC's log (warnings), malloc()ed, NULL when empty; see _clear */
} fx_cuda_build_info;

void fx_cuda_build_info_clear (fx_cuda_build_info *info);

/* Compiles CUDA C (kernels declared extern "C") for compute capability cc_major.cc_minor into a cubin (or PTX when
   this NVRTC does not know the arch), through the cache. Needs NVRTC only, no device. *image is malloc()ed.
   A compile error is FX_ERR_BACKEND with NVRTC's log in diag's message and in info->log; diag's file is `name`. */
fx_status fx_cuda_compile (const char *source, const char *name, int cc_major, int cc_minor,
                           const fx_cuda_build_options *options, void **image, size_t *image_size,
                           fx_cuda_build_info *info, fx_diag *diag);
/* fx_cuda_compile for this device, then loads the image. info may be NULL. */
fx_status fx_cuda_module_build (fx_cuda *cuda, const char *source, const char *name,
                                const fx_cuda_build_options *options, fx_cuda_module **out,
                                fx_cuda_build_info *info, fx_diag *diag);
fx_status fx_cuda_module_load (fx_cuda *cuda, const void *image, size_t image_size, fx_cuda_module **out,
                               fx_diag *diag);
void fx_cuda_module_free (fx_cuda_module *module);
/* The CUDA C that generated sources start with (no CUDA headers needed): fx_f16_to_f32 / fx_f32_to_f16 /
   fx_bf16_to_f32 / fx_f32_to_bf16, NaN-propagating fx_maximum / fx_minimum, fx_warp_reduce, fx_block_sum /
   fx_block_max / fx_block_min (32 floats of shared scratch), Welford (fx_welford_add / _combine, fx_block_welford),
   fx_relu, fx_sigmoid, fx_silu, fx_gelu (erf) and fx_gelu_tanh. */
const char *fx_cuda_prelude_source (void);
/* Writes bytes into the module's __constant__ or __device__ variable `name` (a global of the global namespace:
   unmangled); FX_ERR_NOT_FOUND without one, FX_ERR_INVALID when its size is not bytes. Synchronous. */
fx_status fx_cuda_module_set_global (fx_cuda_module *module, const char *name, const void *data, size_t bytes,
                                     fx_diag *diag);
/* How many times NVRTC compiled in this process (cache hits not counted). */
size_t fx_cuda_compiler_invocations (void);
/* The kernel belongs to the module (freed with it). FX_ERR_NOT_FOUND when the module has no such kernel. */
fx_status fx_cuda_module_get_kernel (fx_cuda_module *module, const char *name, fx_cuda_kernel **out, fx_diag *diag);

typedef struct fx_cuda_kernel_attrs
{
  int num_regs;
  int local_bytes;       /* spills and stack per thread */
  int static_shared_bytes;
  int max_threads_per_block;
} fx_cuda_kernel_attrs;

fx_status fx_cuda_kernel_get_attrs (fx_cuda_kernel *kernel, fx_cuda_kernel_attrs *attrs, fx_diag *diag);
/* Opts the kernel into more than 48 KiB of dynamic shared memory. */
fx_status fx_cuda_kernel_set_dynamic_shared (fx_cuda_kernel *kernel, int bytes, fx_diag *diag);
/* args: one pointer per kernel parameter, pointing at the value (as cuLaunchKernel). Checks the launch shape
   against the device limits first (FX_ERR_INVALID). */
fx_status fx_cuda_launch (fx_cuda_kernel *kernel, fx_cuda_stream *stream, const unsigned int grid[3],
                          const unsigned int block[3], unsigned int shared_bytes, void **args, fx_diag *diag);

/* ---------------------------------------------------------------- CUDA graphs (reduce-overhead) */

/* Starts capturing the stream's work (relaxed mode). Until capture_end, fx_cuda_malloc on this stream draws from a
   private pool that the graph keeps: its blocks are never handed to work outside the graph while the graph lives,
   so a replay cannot overwrite memory that someone else now owns. */
fx_status fx_cuda_graph_capture_begin (fx_cuda_stream *stream, fx_diag *diag);
/* Ends the capture and instantiates the graph. On failure the capture is ended and its pool released. */
fx_status fx_cuda_graph_capture_end (fx_cuda_stream *stream, fx_cuda_graph **out, fx_diag *diag);
fx_status fx_cuda_graph_replay (fx_cuda_graph *graph, fx_cuda_stream *stream, fx_diag *diag);
size_t fx_cuda_graph_node_count (const fx_cuda_graph *graph);
/* Frees the graph; its pool's free blocks go back to the general cache. */
void fx_cuda_graph_free (fx_cuda_graph *graph);

/* ---------------------------------------------------------------- cuBLAS GEMM */

/* A (batch of) matrices in device memory, logical rows x cols, strides in elements. Row-major contiguous is
   (row_stride = cols, col_stride = 1); a transposed view (t() of a contiguous matrix) is (1, rows). One of the two
   strides must be 1 (a size-1 dimension's stride does not matter). batch_stride 0 broadcasts one matrix over the
   batch. */
typedef struct fx_cuda_matrix
{
  fx_cuda_ptr data;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
  int64_t batch_stride;
} fx_cuda_matrix;

/* Describes a contiguous row-major rows x cols matrix. */
fx_cuda_matrix fx_cuda_matrix_rowmajor (fx_cuda_ptr data, int64_t rows, int64_t cols);

/* The device's cuBLAS handle (created on first use). FX_ERR_NO_DEVICE "cuBLAS not found: ..." without cuBLAS. */
fx_status fx_cuda_get_blas (fx_cuda *cuda, fx_cuda_blas **out, fx_diag *diag);
/* PyTorch's torch.backends.cuda.matmul.allow_tf32 (default false: full fp32 products). */
void fx_cuda_blas_set_allow_tf32 (fx_cuda_blas *blas, bool allow);

/* c[i] = alpha * a[i] @ b[i] + beta * c[i] for i < batch, dtype f32, f64, f16 or bf16 (f16/bf16 accumulate in f32).
   Shapes: a M x K, b K x N, c M x N. Strides mismatched with cuBLAS's needs are FX_ERR_UNSUPPORTED (the caller
   makes a contiguous copy); bad shapes are FX_ERR_INVALID. This is aten.mm (batch 1, beta 0), aten.bmm, and
   aten.addmm once the bias is broadcast into c (beta 1). */
fx_status fx_cuda_gemm (fx_cuda *cuda, fx_cuda_stream *stream, fx_dtype dtype, int64_t batch, double alpha,
                        const fx_cuda_matrix *a, const fx_cuda_matrix *b, double beta, const fx_cuda_matrix *c,
                        fx_diag *diag);

/* dst = scale * src broadcast to dst's shape (a size-1 dimension of src repeats), any strides, dtype f32, f64, f16
   or bf16 (f16/bf16 scaled in f32). A kernel of the runtime's own, built on first use. */
/* An indexed copy over [outer, m, inner] (element strides): out[o, i, n] = src[o, k * 1, n] with
   k = idx[o, i, n] (int64; negative counts from v; out of [0, v) is skipped): embedding, index_select and gather. */
typedef struct fx_cuda_take_desc
{
  fx_cuda_ptr out, src, idx;
  int64_t outer, m, inner, v;
  int64_t out_stride[3];   /* o, i, n */
  int64_t src_stride[3];   /* o, k, n */
  int64_t idx_stride[3];   /* o, i, n */
} fx_cuda_take_desc;
fx_status fx_cuda_take (fx_cuda *cuda, fx_cuda_stream *stream, size_t elem_size, const fx_cuda_take_desc *desc,
                        fx_diag *diag);
/* max.dim / min.dim / argmax / argmin over [outer, r, inner] (element strides, r > 0): idx[o, n] (int64) = the first
   k of the max (min) of src[o, k, n], a NaN winning, and val[o, n] = that value when val is not 0. f32 and f64. */
typedef struct fx_cuda_argreduce_desc
{
  fx_cuda_ptr val, idx, src;   /* val 0: indices only (argmax) */
  int64_t outer, r, inner;
  int64_t src_stride[3];       /* o, k, n */
  int64_t val_stride[2];       /* o, n */
  int64_t idx_stride[2];       /* o, n */
  bool is_min;
} fx_cuda_argreduce_desc;
fx_status fx_cuda_argreduce (fx_cuda *cuda, fx_cuda_stream *stream, fx_dtype dtype,
                             const fx_cuda_argreduce_desc *desc, fx_diag *diag);

fx_status fx_cuda_broadcast_scale (fx_cuda *cuda, fx_cuda_stream *stream, fx_dtype dtype, const fx_cuda_matrix *src,
                                   double scale, const fx_cuda_matrix *dst, fx_diag *diag);
/* The CUDA C of the runtime's own kernels (tests compile it without a device). */
const char *fx_cuda_builtin_source (void);
/* aten.addmm: c = beta * bias + alpha * (a @ b), bias broadcast to c's shape (a [N] bias is rows 1, cols N). */
fx_status fx_cuda_addmm (fx_cuda *cuda, fx_cuda_stream *stream, fx_dtype dtype, const fx_cuda_matrix *bias,
                         double beta, const fx_cuda_matrix *a, const fx_cuda_matrix *b, double alpha,
                         const fx_cuda_matrix *c, fx_diag *diag);

/* ---------------------------------------------------------------- GEMM plans (cuBLASLt, epilogues, algorithms) */

/* d = alpha * a @ b (+ beta * c) (+ bias on every row), as PyTorch runs addmm with a 1-D bias through cuBLASLt's
   BIAS epilogue. Shapes: a M x K, b K x N, d M x N (batched with batch_stride). c, when present, has d's shape and
   strides; it may be d itself or another buffer (out of place: d = a @ b + bias + c without a copy). The bias is
   N contiguous elements of dtype, one per column of d, and needs a row-major d. The data pointers of the matrices
   and bias are not used by a plan: they are given to each run. */
typedef struct fx_cuda_gemm_desc
{
  fx_dtype dtype;             /* f32, f64, f16, bf16 (f16/bf16 accumulate in f32) */
  int64_t batch;              /* 1 for mm/addmm */
  double alpha, beta;         /* beta: the factor of c (ignored without c) */
  fx_cuda_matrix a, b, d;
  bool has_c;
  fx_cuda_matrix c;
  bool has_bias;
  size_t alignment;           /* bytes every pointer of a run is aligned to (power of two; 0: 16) */
} fx_cuda_gemm_desc;

typedef struct fx_cuda_gemm_plan fx_cuda_gemm_plan;

#define FX_CUDA_GEMM_MAX_ALGOS 16

/* Plans the GEMM: with cuBLASLt, its descriptors and up to max_algos (<= FX_CUDA_GEMM_MAX_ALGOS) algorithms from
   cublasLtMatmulAlgoGetHeuristic, the first one chosen (as PyTorch runs it); without cuBLASLt, or where the
   heuristic has nothing for the case, cuBLAS (cublasGemmStridedBatchedEx) with the runtime's broadcast kernel for
   the bias and c. bias and c together need cuBLASLt: FX_ERR_UNSUPPORTED without it. Bad shapes are FX_ERR_INVALID,
   strides that neither library takes FX_ERR_UNSUPPORTED. fp32 computes in full fp32 (CUBLAS_COMPUTE_32F) unless
   fx_cuda_blas_set_allow_tf32 allowed TF32. */
fx_status fx_cuda_gemm_plan_new (fx_cuda *cuda, const fx_cuda_gemm_desc *desc, int max_algos,
                                 fx_cuda_gemm_plan **out, fx_diag *diag);
void fx_cuda_gemm_plan_free (fx_cuda_gemm_plan *plan);
const fx_cuda_gemm_desc *fx_cuda_gemm_plan_desc (const fx_cuda_gemm_plan *plan);
/* true when the plan runs through cuBLASLt (else why not, in *why when given). */
bool fx_cuda_gemm_plan_uses_lt (const fx_cuda_gemm_plan *plan, const char **why);
/* Algorithms the heuristic offered (0 on the cuBLAS path), and the one runs use. */
int fx_cuda_gemm_plan_n_algos (const fx_cuda_gemm_plan *plan);
int fx_cuda_gemm_plan_chosen (const fx_cuda_gemm_plan *plan);
void fx_cuda_gemm_plan_choose (fx_cuda_gemm_plan *plan, int algo);
/* Algorithm i as a choice name ("cublaslt_algo6_tile20_stages19", unique within the plan) and a description
   ("algo=6, tile=20, stages=19, splitK=1, reduction=0, swizzle=0, workspace=0, waves=0.83"). */
void fx_cuda_gemm_plan_algo_name (const fx_cuda_gemm_plan *plan, int algo, char *out, size_t out_size);
void fx_cuda_gemm_plan_algo_describe (const fx_cuda_gemm_plan *plan, int algo, char *out, size_t out_size);
/* Runs the plan with its chosen algorithm (algo -1) or algorithm `algo` on stream (NULL: the default stream).
   c and bias may be 0 where the plan has none. Pointers below the plan's alignment are FX_ERR_INVALID. */
fx_status fx_cuda_gemm_plan_run (fx_cuda_gemm_plan *plan, fx_cuda_stream *stream, int algo, fx_cuda_ptr a,
                                 fx_cuda_ptr b, fx_cuda_ptr c, fx_cuda_ptr bias, fx_cuda_ptr d, fx_diag *diag);

/* ---------------------------------------------------------------- benchmarking and autotuning (max-autotune) */

/* One call of the thing measured: enqueue its work on stream. */
typedef fx_status (*fx_cuda_bench_fn) (void *ctx, fx_cuda_stream *stream, fx_diag *diag);

typedef struct fx_cuda_bench_options
{
  int warmup;        /* untimed calls first (0: 3) */
  int reps;          /* timed calls (0: 20); the median is reported */
  bool keep_l2;      /* false: the L2 is flushed (a memset over twice its size) before each timed call, as PyTorch's
                        benchmarker does, so that a kernel is not timed on data the previous call left in L2 */
} fx_cuda_bench_options;

/* Median milliseconds of fn on stream (NULL: the default stream), each call between two events. */
fx_status fx_cuda_bench (fx_cuda *cuda, fx_cuda_stream *stream, fx_cuda_bench_fn fn, void *ctx,
                         const fx_cuda_bench_options *options, float *median_ms, fx_diag *diag);

typedef struct fx_cuda_autotune_choice
{
  const char *name;          /* "cuda_red_fused_sum_0_xblock128" */
  const char *description;   /* "XBLOCK=1, R0_BLOCK=128, num_warps=4" (may be NULL) */
  fx_cuda_bench_fn fn;
  void *ctx;
} fx_cuda_autotune_choice;

typedef struct fx_cuda_autotune_result
{
  size_t best;               /* index into the choices */
  size_t n;
  float *ms;                 /* per choice; INFINITY where the choice failed */
  char *table;               /* PyTorch's AUTOTUNE printout (malloc()ed) */
  double bench_seconds;
} fx_cuda_autotune_result;

/* Benchmarks every choice and keeps the fastest. A choice that fails to run is timed as inf and never chosen (its
   error is in the table's description); all failing is FX_ERR_BACKEND. The table reads, as select_algorithm.py
   writes it to stderr:
     AUTOTUNE <title>\n strides: <strides>\n dtypes: <dtypes>\n
     then up to 10 lines "  <name> <ms .4f> ms <best/ms .1%> <description>", fastest first, and
     "SingleProcess AUTOTUNE benchmarking takes <s .4f> seconds and <precompile .4f> seconds precompiling for <n> choices". */
fx_status fx_cuda_autotune (fx_cuda *cuda, fx_cuda_stream *stream, const char *title, const char *strides,
                            const char *dtypes, const fx_cuda_autotune_choice *choices, size_t n_choices,
                            const fx_cuda_bench_options *options, double precompile_seconds,
                            fx_cuda_autotune_result *result, fx_diag *diag);
void fx_cuda_autotune_result_clear (fx_cuda_autotune_result *result);

/* ---------------------------------------------------------------- programs: a compiled graph's wrapper on the GPU */

/* A program is what a CUDA code generator hands the runtime: kernel sources, the buffers (inputs, outputs,
   temporaries) and the steps in order (kernel launches, GEMMs, broadcasts). It runs eagerly, or, with CUDA graphs on
   (reduce-overhead), as PyTorch's cudagraph trees do for one graph: the first run is a warm-up (eager), the second
   records a CUDA graph over that run's own input addresses and replays it; a later run whose inputs are at those
   same addresses replays it without a copy (the graph reads the caller's memory, as an eager run would). The first
   run with inputs elsewhere records a second graph over static input buffers of the program's own; runs like it
   copy their inputs there (unless they are already there) and replay that graph. Each graph's outputs and
   temporaries live in its private pool. */
typedef struct fx_cuda_program fx_cuda_program;

typedef enum fx_cuda_arg_kind
{
  FX_CUDA_ARG_BUFFER,    /* device address of buffer `buffer` plus `offset` bytes */
  FX_CUDA_ARG_I32,
  FX_CUDA_ARG_I64,
  FX_CUDA_ARG_F32,
  FX_CUDA_ARG_F64,
} fx_cuda_arg_kind;

typedef struct fx_cuda_arg
{
  fx_cuda_arg_kind kind;
  int buffer;
  size_t offset;
  union
  {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  } v;
} fx_cuda_arg;

/* A matrix inside a program buffer (see fx_cuda_matrix; data = the buffer's address + offset bytes). */
typedef struct fx_cuda_buffer_matrix
{
  int buffer;
  size_t offset;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
  int64_t batch_stride;
} fx_cuda_buffer_matrix;

typedef enum fx_cuda_program_state
{
  FX_CUDA_PROGRAM_NONE,        /* never ran */
  FX_CUDA_PROGRAM_WARMUP,      /* ran eagerly once; the next run records */
  FX_CUDA_PROGRAM_EXECUTION,   /* recorded: runs replay the graph */
} fx_cuda_program_state;

fx_status fx_cuda_program_new (fx_cuda *cuda, fx_cuda_program **out, fx_diag *diag);
void fx_cuda_program_free (fx_cuda_program *program);
/* Builds a module of kernels through NVRTC and the cache; launches name kernels of any added module. */
fx_status fx_cuda_program_add_source (fx_cuda_program *program, const char *source, const char *name,
                                      const fx_cuda_build_options *options, fx_cuda_build_info *info, fx_diag *diag);
/* fx_cuda_module_set_global on the module added last. */
fx_status fx_cuda_program_set_global (fx_cuda_program *program, const char *name, const void *data, size_t bytes,
                                      fx_diag *diag);
/* Buffers, numbered from 0 in the order added; inputs and outputs are also numbered among themselves. */
int fx_cuda_program_add_input (fx_cuda_program *program, size_t nbytes);
int fx_cuda_program_add_output (fx_cuda_program *program, size_t nbytes);
int fx_cuda_program_add_temp (fx_cuda_program *program, size_t nbytes);
/* label names the step in timelines (NULL: the kernel name). Arguments are checked against the buffers. */
fx_status fx_cuda_program_add_launch (fx_cuda_program *program, const char *kernel, const char *label,
                                      const unsigned int grid[3], const unsigned int block[3],
                                      unsigned int shared_bytes, const fx_cuda_arg *args, size_t n_args,
                                      fx_diag *diag);
/* c = alpha * a @ b + beta * c (a plan without bias, c in place) */
fx_status fx_cuda_program_add_gemm (fx_cuda_program *program, const char *label, fx_dtype dtype, int64_t batch,
                                    double alpha, const fx_cuda_buffer_matrix *a, const fx_cuda_buffer_matrix *b,
                                    double beta, const fx_cuda_buffer_matrix *c, fx_diag *diag);
/* A GEMM step through a plan (fx_cuda_gemm_plan_new): d = alpha * a @ b (+ beta * c) (+ bias on every row of d,
   bias_buffer + bias_offset: d.cols contiguous elements). c may be another buffer than d (out of place). Program
   buffers used by GEMM steps must be 16-byte aligned (the allocator's are; inputs are the caller's promise). */
typedef struct fx_cuda_program_gemm
{
  const char *label;          /* timelines (NULL: "extern_kernels.mm") */
  const char *op;             /* the ATen op in max-autotune's table: "mm", "addmm", "bmm" (NULL: by batch) */
  fx_dtype dtype;
  int64_t batch;
  double alpha, beta;
  fx_cuda_buffer_matrix a, b, d;
  bool has_c;
  fx_cuda_buffer_matrix c;
  bool has_bias;
  int bias_buffer;
  size_t bias_offset;
  int max_algos;              /* heuristic results kept for max-autotune (0: 1) */
} fx_cuda_program_gemm;

fx_status fx_cuda_program_add_gemm_ex (fx_cuda_program *program, const fx_cuda_program_gemm *gemm, fx_diag *diag);
/* The plan of step i when it is a GEMM, else NULL. */
fx_cuda_gemm_plan *fx_cuda_program_gemm_plan (const fx_cuda_program *program, size_t step);
/* max-autotune for GEMMs: every GEMM step whose plan has more than one cuBLASLt algorithm is benchmarked on
   scratch buffers of the program's sizes (fx_cuda_autotune: CUDA events, L2 flushed) and keeps the fastest. Each
   table ("AUTOTUNE addmm(8192x4096, 8192x1024, 1024x4096)" ...) is appended to table; *n_tuned counts them. */
fx_status fx_cuda_program_autotune_gemms (fx_cuda_program *program, fx_cuda_stream *stream,
                                          const fx_cuda_bench_options *options, fx_buf *table, int *n_tuned,
                                          fx_diag *diag);
/* The replay count of the program's CUDA graph (static outputs are made against it). */
fx_cuda_generation *fx_cuda_program_generation (const fx_cuda_program *program);

/* dst = scale * broadcast(src) (fx_cuda_broadcast_scale) */
fx_status fx_cuda_program_add_broadcast (fx_cuda_program *program, const char *label, fx_dtype dtype,
                                         const fx_cuda_buffer_matrix *src, double scale,
                                         const fx_cuda_buffer_matrix *dst, fx_diag *diag);

/* An indexed copy (fx_cuda_take) between program buffers: the desc's pointers are ignored, the buffers and byte
   offsets given here are used. */
fx_status fx_cuda_program_add_take (fx_cuda_program *program, const char *label, size_t elem_size,
                                    const fx_cuda_take_desc *desc, int out_buffer, size_t out_offset, int src_buffer,
                                    size_t src_offset, int idx_buffer, size_t idx_offset, fx_diag *diag);

/* An argmax / argmin (fx_cuda_argreduce) between program buffers: the desc's pointers are ignored; val_buffer -1
   for indices only. */
fx_status fx_cuda_program_add_argreduce (fx_cuda_program *program, const char *label, fx_dtype dtype,
                                         const fx_cuda_argreduce_desc *desc, int val_buffer, size_t val_offset,
                                         int idx_buffer, size_t idx_offset, int src_buffer, size_t src_offset,
                                         fx_diag *diag);

/* A step the device cannot run, done on the host in stream order: fn synchronizes the stream, copies what it
   reads from ptrs (the program's buffers, by index) to the host and its results back (Inductor's fallback to an
   ATen kernel, here the engine's reference kernel with a copy each way). A program with host steps cannot be
   captured as a CUDA graph (skip the graphs, as PyTorch skips them for a CPU node). */
typedef fx_status (*fx_cuda_host_fn) (void *ctx, fx_cuda_stream *stream, const fx_cuda_ptr *ptrs, fx_diag *diag);
fx_status fx_cuda_program_add_host (fx_cuda_program *program, const char *label, fx_cuda_host_fn fn, void *ctx,
                                    fx_diag *diag);
bool fx_cuda_program_has_host_steps (const fx_cuda_program *program);

/* reduce-overhead on or off (off by default). */
void fx_cuda_program_use_graphs (fx_cuda_program *program, bool on);
/* Turns CUDA graphs off for this program and records "skipping cudagraphs due to <reason>", as PyTorch logs it. */
void fx_cuda_program_skip_graphs (fx_cuda_program *program, const char *reason);
/* "skipping cudagraphs due to ...", or NULL when graphs are in use or were never asked for. */
const char *fx_cuda_program_skip_message (const fx_cuda_program *program);
fx_cuda_program_state fx_cuda_program_get_state (const fx_cuda_program *program);
size_t fx_cuda_program_n_steps (const fx_cuda_program *program);
/* The static buffer of input i once the graph over static buffers is recorded (0 before): a caller that writes its
   inputs there saves the copy. */
fx_cuda_ptr fx_cuda_program_static_input (const fx_cuda_program *program, size_t i);

/* Runs the program on stream (NULL: the default stream). inputs[i] holds input i (at least its nbytes). outputs
   receive the output addresses: with graphs in use they belong to the program and are overwritten by the next run
   (*caller_owns false); otherwise they are fresh blocks the caller frees with fx_cuda_free (*caller_owns true).
   With a timeline, each step is a span (eager), or the replay is one span named "cudagraph replay". Does not
   synchronize. */
fx_status fx_cuda_program_run (fx_cuda_program *program, fx_cuda_stream *stream, const fx_cuda_ptr *inputs,
                               size_t n_inputs, fx_cuda_ptr *outputs, size_t n_outputs, bool *caller_owns,
                               fx_cuda_timeline *timeline, fx_diag *diag);

#ifdef __cplusplus
}
#endif
