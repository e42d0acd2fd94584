/* fx-cuda-impl.h: the CUDA driver, NVRTC and cuBLAS entry points this backend uses, declared from the public API
   documentation (the build needs no CUDA headers), the loaded-library tables and the private structs. */
#pragma once

#include "fx-cuda.h"

#include <pthread.h>

/* ---------------------------------------------------------------- driver API types (cuda.h, by value) */

typedef int fx_CUresult;            /* CUresult: CUDA_SUCCESS = 0 */
typedef int fx_CUdevice;
typedef struct fx_CUctx_st *fx_CUcontext;
typedef struct fx_CUmod_st *fx_CUmodule;
typedef struct fx_CUfunc_st *fx_CUfunction;
typedef struct fx_CUstream_st *fx_CUstream;
typedef struct fx_CUevent_st *fx_CUevent;
typedef struct fx_CUgraph_st *fx_CUgraph;
typedef struct fx_CUgraphNode_st *fx_CUgraphNode;
typedef struct fx_CUgraphExec_st *fx_CUgraphExec;
typedef unsigned long long fx_CUdeviceptr;

enum
{
  FX_CUDA_SUCCESS = 0,
  FX_CUDA_ERROR_OUT_OF_MEMORY = 2,
  FX_CUDA_ERROR_NOT_INITIALIZED = 3,
  FX_CUDA_ERROR_STUB_LIBRARY = 34,
  FX_CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
  FX_CUDA_ERROR_NO_DEVICE = 100,
  FX_CUDA_ERROR_INVALID_DEVICE = 101,
  FX_CUDA_ERROR_NOT_FOUND = 500,
  FX_CUDA_ERROR_NOT_READY = 600,
};

/* CUdevice_attribute values used here */
enum
{
  FX_CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
  FX_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  FX_CU_ATTR_WARP_SIZE = 10,
  FX_CU_ATTR_MAX_REGISTERS_PER_BLOCK = 12,
  FX_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
  FX_CU_ATTR_MEMORY_CLOCK_RATE = 36,
  FX_CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37,
  FX_CU_ATTR_L2_CACHE_SIZE = 38,
  FX_CU_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  FX_CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  FX_CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  FX_CU_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  FX_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* CUfunction_attribute */
enum
{
  FX_CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
  FX_CU_FUNC_SHARED_SIZE_BYTES = 1,
  FX_CU_FUNC_LOCAL_SIZE_BYTES = 3,
  FX_CU_FUNC_NUM_REGS = 4,
  FX_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* CUpointer_attribute and CUmemorytype */
enum
{
  FX_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  FX_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  FX_CU_MEMORYTYPE_DEVICE = 2,
};

enum
{
  FX_CU_STREAM_NON_BLOCKING = 1,
  FX_CU_EVENT_DEFAULT = 0,
  FX_CU_STREAM_CAPTURE_MODE_RELAXED = 2,
  FX_CU_STREAM_CAPTURE_STATUS_NONE = 0,
  FX_CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
};

/* Each library's entry points are one list, X (api, how, return type, name, (parameters)), that makes both the
   struct of function pointers here and the loader's symbol table (fx-cuda-loader.c), so the two cannot drift apart.
   HOW is how the loader finds the symbol: SYM (its own name), SYM_V2 (its _v2 name), SYM_V2_OLD (_v2, else its own
   name), OPT / OPT_V2 (as SYM / SYM_V2, and may be missing: the pointer stays NULL). */
#define FX_CUDA_API_FIELD(api, how, ret, name, params) ret (*name) params;

#define FX_CUDA_DRIVER_API(X, api)                                                                                   \
  X (api, SYM, fx_CUresult, cuInit, (unsigned int flags))                                                            \
  X (api, SYM, fx_CUresult, cuDriverGetVersion, (int *version))                                                      \
  X (api, SYM, fx_CUresult, cuGetErrorString, (fx_CUresult error, const char **str))                                 \
  X (api, SYM, fx_CUresult, cuGetErrorName, (fx_CUresult error, const char **str))                                   \
  X (api, SYM, fx_CUresult, cuDeviceGetCount, (int *count))                                                          \
  X (api, SYM, fx_CUresult, cuDeviceGet, (fx_CUdevice *device, int ordinal))                                         \
  X (api, SYM, fx_CUresult, cuDeviceGetName, (char *name, int len, fx_CUdevice dev))                                 \
  X (api, SYM, fx_CUresult, cuDeviceGetAttribute, (int *value, int attrib, fx_CUdevice dev))                         \
  X (api, SYM_V2, fx_CUresult, cuDeviceTotalMem, (size_t *bytes, fx_CUdevice dev))                                   \
  X (api, SYM, fx_CUresult, cuDevicePrimaryCtxRetain, (fx_CUcontext *ctx, fx_CUdevice dev))                          \
  X (api, SYM_V2_OLD, fx_CUresult, cuDevicePrimaryCtxRelease, (fx_CUdevice dev))                                     \
  X (api, SYM, fx_CUresult, cuCtxSetCurrent, (fx_CUcontext ctx))                                                     \
  X (api, SYM, fx_CUresult, cuCtxSynchronize, (void))                                                                \
  X (api, SYM_V2, fx_CUresult, cuMemGetInfo, (size_t *free_bytes, size_t *total_bytes))                              \
  X (api, SYM_V2, fx_CUresult, cuMemAlloc, (fx_CUdeviceptr *dptr, size_t bytes))                                     \
  X (api, SYM_V2, fx_CUresult, cuMemFree, (fx_CUdeviceptr dptr))                                                     \
  X (api, SYM_V2, fx_CUresult, cuMemAllocHost, (void **pp, size_t bytes))                                            \
  X (api, SYM, fx_CUresult, cuMemFreeHost, (void *p))                                                                \
  X (api, SYM_V2, fx_CUresult, cuMemcpyHtoD, (fx_CUdeviceptr dst, const void *src, size_t bytes))                    \
  X (api, SYM_V2, fx_CUresult, cuMemcpyDtoH, (void *dst, fx_CUdeviceptr src, size_t bytes))                          \
  X (api, SYM_V2, fx_CUresult, cuMemcpyDtoD, (fx_CUdeviceptr dst, fx_CUdeviceptr src, size_t bytes))                 \
  X (api, SYM_V2, fx_CUresult, cuMemcpyHtoDAsync, (fx_CUdeviceptr dst, const void *src, size_t bytes,                \
                                                   fx_CUstream stream))                                              \
  X (api, SYM_V2, fx_CUresult, cuMemcpyDtoHAsync, (void *dst, fx_CUdeviceptr src, size_t bytes, fx_CUstream stream)) \
  X (api, SYM_V2, fx_CUresult, cuMemcpyDtoDAsync, (fx_CUdeviceptr dst, fx_CUdeviceptr src, size_t bytes,             \
                                                   fx_CUstream stream))                                              \
  X (api, SYM, fx_CUresult, cuMemsetD8Async, (fx_CUdeviceptr dst, unsigned char value, size_t n,                     \
                                              fx_CUstream stream))                                                   \
  X (api, SYM, fx_CUresult, cuPointerGetAttribute, (void *data, int attribute, fx_CUdeviceptr ptr))                  \
  X (api, SYM, fx_CUresult, cuStreamCreate, (fx_CUstream *stream, unsigned int flags))                               \
  X (api, SYM_V2_OLD, fx_CUresult, cuStreamDestroy, (fx_CUstream stream))                                            \
  X (api, SYM, fx_CUresult, cuStreamSynchronize, (fx_CUstream stream))                                               \
  X (api, SYM, fx_CUresult, cuEventCreate, (fx_CUevent *event, unsigned int flags))                                  \
  X (api, SYM_V2_OLD, fx_CUresult, cuEventDestroy, (fx_CUevent event))                                               \
  X (api, SYM, fx_CUresult, cuEventRecord, (fx_CUevent event, fx_CUstream stream))                                   \
  X (api, SYM, fx_CUresult, cuEventSynchronize, (fx_CUevent event))                                                  \
  X (api, SYM_V2_OLD, fx_CUresult, cuEventElapsedTime, (float *ms, fx_CUevent start, fx_CUevent end))                \
  X (api, SYM, fx_CUresult, cuModuleLoadData, (fx_CUmodule *module, const void *image))                              \
  X (api, SYM, fx_CUresult, cuModuleUnload, (fx_CUmodule module))                                                    \
  X (api, SYM, fx_CUresult, cuModuleGetFunction, (fx_CUfunction *func, fx_CUmodule module, const char *name))        \
  X (api, SYM_V2, fx_CUresult, cuModuleGetGlobal, (fx_CUdeviceptr *dptr, size_t *bytes, fx_CUmodule module,         \
                                                   const char *name))                                                \
  X (api, SYM, fx_CUresult, cuFuncGetAttribute, (int *value, int attrib, fx_CUfunction func))                        \
  X (api, SYM, fx_CUresult, cuFuncSetAttribute, (fx_CUfunction func, int attrib, int value))                         \
  X (api, SYM, fx_CUresult, cuLaunchKernel, (fx_CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,     \
                                             unsigned int bx, unsigned int by, unsigned int bz,                      \
                                             unsigned int shared_bytes, fx_CUstream stream, void **params,           \
                                             void **extra))                                                          \
  X (api, SYM_V2, fx_CUresult, cuStreamBeginCapture, (fx_CUstream stream, int mode))                                 \
  X (api, SYM, fx_CUresult, cuStreamEndCapture, (fx_CUstream stream, fx_CUgraph *graph))                             \
  X (api, SYM, fx_CUresult, cuStreamIsCapturing, (fx_CUstream stream, int *status))                                  \
  X (api, SYM, fx_CUresult, cuGraphInstantiateWithFlags, (fx_CUgraphExec *exec, fx_CUgraph graph,                    \
                                                          unsigned long long flags))                                 \
  X (api, SYM, fx_CUresult, cuGraphLaunch, (fx_CUgraphExec exec, fx_CUstream stream))                                \
  X (api, SYM, fx_CUresult, cuGraphGetNodes, (fx_CUgraph graph, fx_CUgraphNode *nodes, size_t *count))               \
  X (api, SYM, fx_CUresult, cuGraphExecDestroy, (fx_CUgraphExec exec))                                               \
  X (api, SYM, fx_CUresult, cuGraphDestroy, (fx_CUgraph graph))

typedef struct fx_cuda_driver_api
{
  FX_CUDA_DRIVER_API (FX_CUDA_API_FIELD, _)
} fx_cuda_driver_api;

/* ---------------------------------------------------------------- NVRTC (nvrtc.h, by value) */

typedef int fx_nvrtcResult;          /* NVRTC_SUCCESS = 0 */
typedef struct fx_nvrtcProgram_st *fx_nvrtcProgram;

enum
{
  FX_NVRTC_SUCCESS = 0,
  FX_NVRTC_ERROR_COMPILATION = 6,
};

#define FX_CUDA_NVRTC_API(X, api)                                                                                    \
  X (api, SYM, const char *, nvrtcGetErrorString, (fx_nvrtcResult result))                                           \
  X (api, SYM, fx_nvrtcResult, nvrtcVersion, (int *major, int *minor))                                               \
  X (api, OPT, fx_nvrtcResult, nvrtcGetNumSupportedArchs, (int *n))                                                  \
  X (api, OPT, fx_nvrtcResult, nvrtcGetSupportedArchs, (int *archs))                                                 \
  X (api, SYM, fx_nvrtcResult, nvrtcCreateProgram, (fx_nvrtcProgram *prog, const char *src, const char *name,        \
                                                    int n_headers, const char *const *headers,                       \
                                                    const char *const *include_names))                               \
  X (api, SYM, fx_nvrtcResult, nvrtcDestroyProgram, (fx_nvrtcProgram *prog))                                         \
  X (api, SYM, fx_nvrtcResult, nvrtcCompileProgram, (fx_nvrtcProgram prog, int n_options,                            \
                                                     const char *const *options))                                    \
  X (api, SYM, fx_nvrtcResult, nvrtcGetProgramLogSize, (fx_nvrtcProgram prog, size_t *size))                         \
  X (api, SYM, fx_nvrtcResult, nvrtcGetProgramLog, (fx_nvrtcProgram prog, char *log))                                \
  X (api, SYM, fx_nvrtcResult, nvrtcGetCUBINSize, (fx_nvrtcProgram prog, size_t *size))                              \
  X (api, SYM, fx_nvrtcResult, nvrtcGetCUBIN, (fx_nvrtcProgram prog, char *cubin))                                   \
  X (api, SYM, fx_nvrtcResult, nvrtcGetPTXSize, (fx_nvrtcProgram prog, size_t *size))                                \
  X (api, SYM, fx_nvrtcResult, nvrtcGetPTX, (fx_nvrtcProgram prog, char *ptx))

typedef struct fx_cuda_nvrtc_api
{
  FX_CUDA_NVRTC_API (FX_CUDA_API_FIELD, _)
} fx_cuda_nvrtc_api;

/* ---------------------------------------------------------------- cuBLAS (cublas_api.h, by value) */

typedef int fx_cublasStatus;         /* CUBLAS_STATUS_SUCCESS = 0 */
typedef struct fx_cublasContext *fx_cublasHandle;

enum
{
  FX_CUBLAS_OP_N = 0,
  FX_CUBLAS_OP_T = 1,
  FX_CUBLAS_DEFAULT_MATH = 0,
  FX_CUBLAS_TF32_TENSOR_OP_MATH = 3,
  FX_CUBLAS_GEMM_DEFAULT = -1,
  FX_CUBLAS_COMPUTE_32F = 68,
  FX_CUBLAS_COMPUTE_32F_PEDANTIC = 69,
  FX_CUBLAS_COMPUTE_64F = 70,
  FX_CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  /* cudaDataType */
  FX_CUDA_R_32F = 0,
  FX_CUDA_R_64F = 1,
  FX_CUDA_R_16F = 2,
  FX_CUDA_R_16BF = 14,
};

#define FX_CUDA_CUBLAS_API(X, api)                                                                                   \
  X (api, SYM_V2, fx_cublasStatus, cublasCreate, (fx_cublasHandle *handle))                                          \
  X (api, SYM_V2, fx_cublasStatus, cublasDestroy, (fx_cublasHandle handle))                                          \
  X (api, SYM_V2, fx_cublasStatus, cublasGetVersion, (fx_cublasHandle handle, int *version))                         \
  X (api, SYM_V2, fx_cublasStatus, cublasSetStream, (fx_cublasHandle handle, fx_CUstream stream))                    \
  X (api, OPT_V2, fx_cublasStatus, cublasSetWorkspace, (fx_cublasHandle handle, void *workspace, size_t bytes))      \
  X (api, SYM, fx_cublasStatus, cublasSetMathMode, (fx_cublasHandle handle, int mode))                               \
  X (api, OPT, const char *, cublasGetStatusString, (fx_cublasStatus status)) /* may be NULL (old cuBLAS) */         \
  X (api, SYM, fx_cublasStatus, cublasGemmStridedBatchedEx, (fx_cublasHandle handle, int transa, int transb, int m,  \
                                                             int n, int k, const void *alpha, const void *a,         \
                                                             int a_type, int lda, long long stride_a,                \
                                                             const void *b, int b_type, int ldb,                     \
                                                             long long stride_b, const void *beta, void *c,          \
                                                             int c_type, int ldc, long long stride_c, int batch,     \
                                                             int compute_type, int algo))

typedef struct fx_cuda_cublas_api
{
  FX_CUDA_CUBLAS_API (FX_CUDA_API_FIELD, _)
} fx_cuda_cublas_api;

/* ---------------------------------------------------------------- cuBLASLt (cublasLt.h, by value; checked against
   the real header by tests/backends/cuda/test-cublaslt-abi.c where CUDA's headers are installed) */

typedef struct fx_cublasLtContext *fx_cublasLtHandle;
typedef struct fx_cublasLtMatmulDescOpaque *fx_cublasLtMatmulDesc;
typedef struct fx_cublasLtMatrixLayoutOpaque *fx_cublasLtMatrixLayout;
typedef struct fx_cublasLtMatmulPreferenceOpaque *fx_cublasLtMatmulPreference;

/* cublasLtMatmulAlgo_t: 64 opaque bytes */
typedef struct fx_cublasLtMatmulAlgo
{
  uint64_t data[8];
} fx_cublasLtMatmulAlgo;

/* cublasLtMatmulHeuristicResult_t */
typedef struct fx_cublasLtMatmulHeuristicResult
{
  fx_cublasLtMatmulAlgo algo;
  size_t workspaceSize;
  fx_cublasStatus state;
  float wavesCount;
  int reserved[4];
} fx_cublasLtMatmulHeuristicResult;

enum
{
  /* cublasLtMatmulDescAttributes_t */
  FX_CUBLASLT_MATMUL_DESC_TRANSA = 3,              /* int32_t */
  FX_CUBLASLT_MATMUL_DESC_TRANSB = 4,              /* int32_t */
  FX_CUBLASLT_MATMUL_DESC_EPILOGUE = 7,            /* uint32_t */
  FX_CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,        /* void * */
  FX_CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,     /* int32_t */
  /* cublasLtEpilogue_t */
  FX_CUBLASLT_EPILOGUE_DEFAULT = 1,
  FX_CUBLASLT_EPILOGUE_BIAS = 4,
  /* cublasLtMatrixLayoutAttribute_t */
  FX_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,       /* int32_t */
  FX_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6, /* int64_t */
  /* cublasLtMatmulPreferenceAttributes_t */
  FX_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1, /* uint64_t */
  FX_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5, /* uint32_t */
  FX_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
  FX_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
  FX_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,
  /* cublasLtMatmulAlgoConfigAttributes_t */
  FX_CUBLASLT_ALGO_CONFIG_ID = 0,                  /* int32_t */
  FX_CUBLASLT_ALGO_CONFIG_TILE_ID = 1,             /* uint32_t */
  FX_CUBLASLT_ALGO_CONFIG_SPLITK_NUM = 2,          /* int32_t */
  FX_CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME = 3,    /* uint32_t */
  FX_CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING = 4,       /* uint32_t */
  FX_CUBLASLT_ALGO_CONFIG_STAGES_ID = 6,           /* uint32_t */
};

#define FX_CUDA_CUBLASLT_API(X, api)                                                                                 \
  X (api, SYM, fx_cublasStatus, cublasLtCreate, (fx_cublasLtHandle *handle))                                         \
  X (api, SYM, fx_cublasStatus, cublasLtDestroy, (fx_cublasLtHandle handle))                                         \
  X (api, SYM, size_t, cublasLtGetVersion, (void))                                                                   \
  X (api, OPT, const char *, cublasLtGetStatusString, (fx_cublasStatus status)) /* may be NULL */                    \
  X (api, SYM, fx_cublasStatus, cublasLtMatmulDescCreate, (fx_cublasLtMatmulDesc *desc, int compute_type,            \
                                                           int scale_type))                                          \
  X (api, SYM, fx_cublasStatus, cublasLtMatmulDescDestroy, (fx_cublasLtMatmulDesc desc))                             \
  X (api, SYM, fx_cublasStatus, cublasLtMatmulDescSetAttribute, (fx_cublasLtMatmulDesc desc, int attr,               \
                                                                 const void *buf, size_t bytes))                     \
  X (api, SYM, fx_cublasStatus, cublasLtMatrixLayoutCreate, (fx_cublasLtMatrixLayout *layout, int type,              \
                                                             uint64_t rows, uint64_t cols, int64_t ld))              \
  X (api, SYM, fx_cublasStatus, cublasLtMatrixLayoutDestroy, (fx_cublasLtMatrixLayout layout))                       \
  X (api, SYM, fx_cublasStatus, cublasLtMatrixLayoutSetAttribute, (fx_cublasLtMatrixLayout layout, int attr,         \
                                                                   const void *buf, size_t bytes))                   \
  X (api, SYM, fx_cublasStatus, cublasLtMatmulPreferenceCreate, (fx_cublasLtMatmulPreference *pref))                 \
  X (api, SYM, fx_cublasStatus, cublasLtMatmulPreferenceDestroy, (fx_cublasLtMatmulPreference pref))                 \
  X (api, SYM, fx_cublasStatus, cublasLtMatmulPreferenceSetAttribute, (fx_cublasLtMatmulPreference pref, int attr,   \
                                                                       const void *buf, size_t bytes))               \
  X (api, SYM, fx_cublasStatus, cublasLtMatmulAlgoGetHeuristic, (fx_cublasLtHandle handle,                           \
                                                                 fx_cublasLtMatmulDesc desc,                         \
                                                                 fx_cublasLtMatrixLayout a,                          \
                                                                 fx_cublasLtMatrixLayout b,                          \
                                                                 fx_cublasLtMatrixLayout c,                          \
                                                                 fx_cublasLtMatrixLayout d,                          \
                                                                 fx_cublasLtMatmulPreference pref, int requested,    \
                                                                 fx_cublasLtMatmulHeuristicResult *results,          \
                                                                 int *returned))                                     \
  X (api, SYM, fx_cublasStatus, cublasLtMatmulAlgoConfigGetAttribute, (const fx_cublasLtMatmulAlgo *algo, int attr,  \
                                                                       void *buf, size_t bytes, size_t *written))    \
  X (api, SYM, fx_cublasStatus, cublasLtMatmul, (fx_cublasLtHandle handle, fx_cublasLtMatmulDesc desc,               \
                                                 const void *alpha, const void *a, fx_cublasLtMatrixLayout a_desc,   \
                                                 const void *b, fx_cublasLtMatrixLayout b_desc, const void *beta,    \
                                                 const void *c, fx_cublasLtMatrixLayout c_desc, void *d,             \
                                                 fx_cublasLtMatrixLayout d_desc, const fx_cublasLtMatmulAlgo *algo,  \
                                                 void *workspace, size_t workspace_bytes, fx_CUstream stream))

typedef struct fx_cuda_cublaslt_api
{
  FX_CUDA_CUBLASLT_API (FX_CUDA_API_FIELD, _)
} fx_cuda_cublaslt_api;

/* ---------------------------------------------------------------- loaded libraries (process-wide, loaded once) */

typedef struct fx_cuda_libs
{
  /* driver: usable is true once the library loaded, cuInit succeeded and at least one device exists */
  bool driver_loaded;
  bool driver_usable;
  fx_cuda_driver_api cu;
  int driver_version;
  int device_count;
  char driver_path[256];
  char driver_error[512];    /* why the driver is not usable, "" when it is */

  bool nvrtc_loaded;
  fx_cuda_nvrtc_api nvrtc;
  int nvrtc_major, nvrtc_minor;
  char nvrtc_path[256];
  char nvrtc_error[512];

  bool cublas_loaded;
  fx_cuda_cublas_api cublas;
  char cublas_path[256];
  char cublas_error[512];

  bool cublaslt_loaded;
  fx_cuda_cublaslt_api lt;
  char cublaslt_path[256];
  char cublaslt_error[512];
} fx_cuda_libs;

/* Loads the driver on first use (thread-safe); never fails, look at the flags. */
const fx_cuda_libs *fx_cuda_libs_driver (void);
const fx_cuda_libs *fx_cuda_libs_nvrtc (void);
const fx_cuda_libs *fx_cuda_libs_cublas (void);
const fx_cuda_libs *fx_cuda_libs_cublaslt (void);

/* Fills diag from a driver error: "what: CUDA_ERROR_X (text)". Maps out-of-memory to FX_ERR_NOMEM, everything else
   to FX_ERR_BACKEND. Returns the status. */
fx_status fx_cuda_check (fx_CUresult res, const char *what, fx_diag *diag);
#define FX_CU_TRY(call, what, diag)                                  \
  do                                                                 \
    {                                                                \
      fx_CUresult fx_cu_res_ = (call);                               \
      if (fx_cu_res_ != FX_CUDA_SUCCESS)                             \
        return fx_cuda_check (fx_cu_res_, (what), (diag));           \
    }                                                                \
  while (0)
/* The body of a one-call wrapper: makes CUDA's context current (fx_cuda_enter), then FX_CU_TRY (call). */
#define FX_CU_ENTER_TRY(cuda, call, what, diag)                      \
  do                                                                 \
    {                                                                \
      fx_status fx_cu_st_ = fx_cuda_enter ((cuda), (diag));          \
      if (fx_cu_st_ != FX_OK)                                        \
        return fx_cu_st_;                                            \
      FX_CU_TRY (call, what, diag);                                  \
    }                                                                \
  while (0)

/* ---------------------------------------------------------------- private structs */

typedef struct fx_cuda_block fx_cuda_block;
typedef struct fx_cuda_lt fx_cuda_lt;
typedef struct fx_cuda_pool fx_cuda_pool;

/* Free blocks of one pool, sorted by size (best fit by binary search). */
struct fx_cuda_pool
{
  fx_cuda_block **free_blocks;
  size_t n_free;
  size_t cap_free;
  size_t free_bytes;
};

struct fx_cuda_block
{
  fx_CUdeviceptr ptr;
  size_t size;            /* size class (what cuMemAlloc got) */
  size_t requested;       /* what the caller asked for, while live */
  fx_cuda_stream *stream; /* the stream the block is ordered on (NULL: the device's default stream) */
  fx_cuda_pool *pool;     /* the general pool, or a CUDA graph's private pool */
  bool live;
};

typedef struct fx_cuda_allocator
{
  pthread_mutex_t lock;
  fx_cuda_pool general;
  fx_cuda_pool *capture_pool;   /* non-NULL while a stream capture is under way */
  /* every block, live or cached, hashed by device address (open addressing) */
  fx_cuda_block **table;
  size_t table_cap;
  size_t table_count;
  fx_cuda_alloc_stats stats;
} fx_cuda_allocator;

struct fx_cuda
{
  int ordinal;
  fx_CUdevice device;
  fx_CUcontext ctx;
  fx_cuda_device_info info;
  fx_cuda_stream *default_stream;
  fx_cuda_allocator alloc;
  fx_cuda_blas *blas;           /* created on first use */
  fx_cuda_lt *lt;               /* cuBLASLt handle and workspace, created on first use */
  fx_cuda_module *builtin;      /* the runtime's own kernels, built on first use */
  pthread_mutex_t builtin_lock;
};

struct fx_cuda_stream
{
  fx_cuda *cuda;
  fx_CUstream stream;
  fx_cuda_pool *capture_pool;   /* the graph pool of the capture under way on this stream */
};

struct fx_cuda_event
{
  fx_cuda *cuda;
  fx_CUevent event;
};

/* Makes the device's primary context current on the calling thread. */
fx_status fx_cuda_enter (fx_cuda *cuda, fx_diag *diag);
/* Fills diag from a cuBLAS or cuBLASLt status: "what: cuBLAS status N (text)", text from DESCRIBE (the library's
   GetStatusString, NULL where it has none). Maps CUBLAS_STATUS_ALLOC_FAILED to FX_ERR_NOMEM. */
fx_status fx_cublas_check (fx_cublasStatus status, const char *(*describe) (fx_cublasStatus), const char *what,
                           fx_diag *diag);
/* fx_cuda_enter, then a zeroed host object of SIZE bytes for a handle of this device (free() it); NULL with *st
   and diag set when either fails. */
void *fx_cuda_enter_alloc (fx_cuda *cuda, size_t size, fx_status *st, fx_diag *diag);
/* The end of making a handle in OBJ (from fx_cuda_enter_alloc): RES is the driver call that made it. Returns OBJ with
   *st FX_OK, or frees OBJ and returns NULL with *st and diag set. */
void *fx_cuda_handle_made (void *obj, fx_CUresult res, const char *what, fx_status *st, fx_diag *diag);
/* The stream to queue on: STREAM, or the device's default stream when NULL. */
static inline fx_cuda_stream *
fx_cuda_stream_or_default (fx_cuda *cuda, fx_cuda_stream *stream)
{
  return stream ? stream : cuda->default_stream;
}

void fx_cuda_alloc_init (fx_cuda_allocator *alloc);
/* Returns every block to the driver (live ones too: the device is going away). */
void fx_cuda_alloc_destroy (fx_cuda *cuda);
void fx_cuda_pool_release (fx_cuda *cuda, fx_cuda_pool *pool);
void fx_cuda_blas_destroy (fx_cuda *cuda);
void fx_cuda_lt_destroy (fx_cuda *cuda);
void fx_cuda_builtin_destroy (fx_cuda *cuda);
/* Builds the runtime's own kernels now (before a capture, which must not build modules). */
fx_status fx_cuda_builtin_prepare (fx_cuda *cuda, fx_diag *diag);

/* What PyTorch gives cuBLAS on Hopper (CUBLAS_WORKSPACE_CONFIG ":4096:8"): a fixed workspace, so that no call
   allocates (which a CUDA graph capture would not allow). cuBLASLt gets one of the same size. */
#define FX_CUDA_BLAS_WORKSPACE_BYTES ((size_t) 32 << 20)

/* fx-cuda-blas.c, shared with the cuBLASLt plans (fx-cuda-lt.c): the leading dimension when x's memory is row-major
   (unit column stride) or column-major (unit row stride), else -1; and x as a column-major cuBLAS operand
   (want_transpose: the operand is x^T), false when neither layout fits. */
int64_t fx_cuda_matrix_rowmajor_ld (const fx_cuda_matrix *x);
int64_t fx_cuda_matrix_colmajor_ld (const fx_cuda_matrix *x);
bool fx_cuda_blas_operand (const fx_cuda_matrix *x, bool want_transpose, int *op, int64_t *ld);
bool fx_cuda_blas_allow_tf32 (const fx_cuda_blas *blas);
