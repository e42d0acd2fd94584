/* fx-cuda-loader.c: finds libcuda, NVRTC and cuBLAS with dlopen at run time, resolves the entry points, and turns
   their error codes into fx_diag messages; says precisely why there is no usable CUDA device. */
#include "fx-cuda-impl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fx_cuda_libs libs;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;
static pthread_once_t cublas_once = PTHREAD_ONCE_INIT;
static pthread_once_t cublaslt_once = PTHREAD_ONCE_INIT;

typedef struct sym_entry
{
  const char *name;       /* preferred (versioned) symbol */
  const char *fallback;   /* older name, or NULL */
  void **slot;
  bool optional;
} sym_entry;

/* Tries each candidate in turn; records the dlerror of the first failure (the most telling one). */
static void *
open_first (const char *env_name, const char *const *candidates, char *path, size_t path_size, char *err,
            size_t err_size)
{
  const char *env = getenv (env_name);
  char first_error[400] = "";

  if (env && *env)
    {
      void *h = dlopen (env, RTLD_NOW | RTLD_LOCAL);
      if (h)
        {
          snprintf (path, path_size, "%s", env);
          return h;
        }
      snprintf (err, err_size, "%s=%s cannot be loaded: %s", env_name, env, dlerror ());
      return NULL;
    }
  for (size_t i = 0; candidates[i]; i++)
    {
      void *h = dlopen (candidates[i], RTLD_NOW | RTLD_LOCAL);
      if (h)
        {
          snprintf (path, path_size, "%s", candidates[i]);
          return h;
        }
      if (!first_error[0])
        {
          const char *e = dlerror ();
          snprintf (first_error, sizeof first_error, "%s", e ? e : candidates[i]);
        }
    }
  snprintf (err, err_size, "%s not found (%s)", candidates[0], first_error);
  return NULL;
}

/* Resolves the table; on a missing required symbol fills err and returns false. */
static bool
resolve (void *handle, const sym_entry *syms, size_t n, char *err, size_t err_size)
{
  for (size_t i = 0; i < n; i++)
    {
      void *p = dlsym (handle, syms[i].name);
      if (!p && syms[i].fallback)
        p = dlsym (handle, syms[i].fallback);
      if (!p && !syms[i].optional)
        {
          snprintf (err, err_size, "symbol %s missing", syms[i].name);
          return false;
        }
      *syms[i].slot = p;
    }
  return true;
}

/* The real file behind a handle, for the probe's report. */
static void
real_path_of (void *sym, char *path, size_t path_size)
{
  Dl_info dli;
  if (sym && dladdr (sym, &dli) && dli.dli_fname)
    snprintf (path, path_size, "%s", dli.dli_fname);
}

/* Opens a library (ENV_NAME's file, else the first candidate that loads) into PATH and resolves its table; false
   with ERROR saying "<not_found>: why" or "<name> <path> <unusable>: why". PATH ends as the real file behind the
   table's KEY entry. */
static bool
open_library (const char *env_name, const char *const *candidates, const sym_entry *syms, size_t n, size_t key,
              const char *not_found, const char *name, const char *unusable, char *path, size_t path_size,
              char *error, size_t error_size)
{
  char why[400] = "";
  void *h = open_first (env_name, candidates, path, path_size, why, sizeof why);

  if (!h)
    {
      snprintf (error, error_size, "%s: %s", not_found, why);
      return false;
    }
  if (!resolve (h, syms, n, why, sizeof why))
    {
      snprintf (error, error_size, "%s %s %s: %s", name, path, unusable, why);
      return false;
    }
  real_path_of (*syms[key].slot, path, path_size);
  return true;
}

#define SYM(api, field, name, fallback) { name, fallback, (void **) &(api).field, false }
#define OPT(api, field, name, fallback) { name, fallback, (void **) &(api).field, true }

static void
load_driver (void)
{
  static const char *const candidates[] = { "libcuda.so.1", "libcuda.so", NULL };
  fx_cuda_driver_api *cu = &libs.cu;
  const sym_entry syms[] = {
    SYM (*cu, cuInit, "cuInit", NULL),
    SYM (*cu, cuDriverGetVersion, "cuDriverGetVersion", NULL),
    SYM (*cu, cuGetErrorString, "cuGetErrorString", NULL),
    SYM (*cu, cuGetErrorName, "cuGetErrorName", NULL),
    SYM (*cu, cuDeviceGetCount, "cuDeviceGetCount", NULL),
    SYM (*cu, cuDeviceGet, "cuDeviceGet", NULL),
    SYM (*cu, cuDeviceGetName, "cuDeviceGetName", NULL),
    SYM (*cu, cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    SYM (*cu, cuDeviceTotalMem, "cuDeviceTotalMem_v2", NULL),
    SYM (*cu, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    SYM (*cu, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    SYM (*cu, cuCtxSetCurrent, "cuCtxSetCurrent", NULL),
    SYM (*cu, cuCtxSynchronize, "cuCtxSynchronize", NULL),
    SYM (*cu, cuMemGetInfo, "cuMemGetInfo_v2", NULL),
    SYM (*cu, cuMemAlloc, "cuMemAlloc_v2", NULL),
    SYM (*cu, cuMemFree, "cuMemFree_v2", NULL),
    SYM (*cu, cuMemAllocHost, "cuMemAllocHost_v2", NULL),
    SYM (*cu, cuMemFreeHost, "cuMemFreeHost", NULL),
    SYM (*cu, cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL),
    SYM (*cu, cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
    SYM (*cu, cuMemcpyDtoD, "cuMemcpyDtoD_v2", NULL),
    SYM (*cu, cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL),
    SYM (*cu, cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", NULL),
    SYM (*cu, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", NULL),
    SYM (*cu, cuMemsetD8Async, "cuMemsetD8Async", NULL),
    SYM (*cu, cuPointerGetAttribute, "cuPointerGetAttribute", NULL),
    SYM (*cu, cuStreamCreate, "cuStreamCreate", NULL),
    SYM (*cu, cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
    SYM (*cu, cuStreamSynchronize, "cuStreamSynchronize", NULL),
    SYM (*cu, cuEventCreate, "cuEventCreate", NULL),
    SYM (*cu, cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
    SYM (*cu, cuEventRecord, "cuEventRecord", NULL),
    SYM (*cu, cuEventSynchronize, "cuEventSynchronize", NULL),
    SYM (*cu, cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    SYM (*cu, cuModuleLoadData, "cuModuleLoadData", NULL),
    SYM (*cu, cuModuleUnload, "cuModuleUnload", NULL),
    SYM (*cu, cuModuleGetFunction, "cuModuleGetFunction", NULL),
    SYM (*cu, cuFuncGetAttribute, "cuFuncGetAttribute", NULL),
    SYM (*cu, cuFuncSetAttribute, "cuFuncSetAttribute", NULL),
    SYM (*cu, cuLaunchKernel, "cuLaunchKernel", NULL),
    SYM (*cu, cuStreamBeginCapture, "cuStreamBeginCapture_v2", NULL),
    SYM (*cu, cuStreamEndCapture, "cuStreamEndCapture", NULL),
    SYM (*cu, cuStreamIsCapturing, "cuStreamIsCapturing", NULL),
    SYM (*cu, cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", NULL),
    SYM (*cu, cuGraphLaunch, "cuGraphLaunch", NULL),
    SYM (*cu, cuGraphGetNodes, "cuGraphGetNodes", NULL),
    SYM (*cu, cuGraphExecDestroy, "cuGraphExecDestroy", NULL),
    SYM (*cu, cuGraphDestroy, "cuGraphDestroy", NULL),
  };
  if (!open_library ("FX_CUDA_DRIVER_LIBRARY", candidates, syms, sizeof syms / sizeof syms[0], 0, "no CUDA driver",
                     "CUDA driver", "too old", libs.driver_path, sizeof libs.driver_path, libs.driver_error,
                     sizeof libs.driver_error))
    return;
  libs.driver_loaded = true;

  fx_CUresult res = cu->cuInit (0);
  if (res != FX_CUDA_SUCCESS)
    {
      const char *name = NULL, *text = NULL;
      if (cu->cuGetErrorName (res, &name) != FX_CUDA_SUCCESS)
        name = NULL;
      if (cu->cuGetErrorString (res, &text) != FX_CUDA_SUCCESS)
        text = NULL;
      snprintf (libs.driver_error, sizeof libs.driver_error, "cuInit failed: %s (%s)",
                name ? name : "CUDA error", text ? text : "unknown");
      return;
    }
  cu->cuDriverGetVersion (&libs.driver_version);
  if (cu->cuDeviceGetCount (&libs.device_count) != FX_CUDA_SUCCESS || libs.device_count <= 0)
    {
      libs.device_count = 0;
      snprintf (libs.driver_error, sizeof libs.driver_error, "the driver (%s) reports zero devices",
                libs.driver_path);
      return;
    }
  libs.driver_usable = true;
}

static void
load_nvrtc (void)
{
  static const char *const candidates[] = {
    "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "libnvrtc.so.11.2",
    "/usr/local/cuda/lib64/libnvrtc.so", "/usr/local/cuda/lib/libnvrtc.so", NULL,
  };
  fx_cuda_nvrtc_api *nv = &libs.nvrtc;
  const sym_entry syms[] = {
    SYM (*nv, nvrtcGetErrorString, "nvrtcGetErrorString", NULL),
    SYM (*nv, nvrtcVersion, "nvrtcVersion", NULL),
    OPT (*nv, nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", NULL),
    OPT (*nv, nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", NULL),
    SYM (*nv, nvrtcCreateProgram, "nvrtcCreateProgram", NULL),
    SYM (*nv, nvrtcDestroyProgram, "nvrtcDestroyProgram", NULL),
    SYM (*nv, nvrtcCompileProgram, "nvrtcCompileProgram", NULL),
    SYM (*nv, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", NULL),
    SYM (*nv, nvrtcGetProgramLog, "nvrtcGetProgramLog", NULL),
    SYM (*nv, nvrtcGetCUBINSize, "nvrtcGetCUBINSize", NULL),
    SYM (*nv, nvrtcGetCUBIN, "nvrtcGetCUBIN", NULL),
    SYM (*nv, nvrtcGetPTXSize, "nvrtcGetPTXSize", NULL),
    SYM (*nv, nvrtcGetPTX, "nvrtcGetPTX", NULL),
  };
  if (!open_library ("FX_NVRTC_LIBRARY", candidates, syms, sizeof syms / sizeof syms[0], 1, "NVRTC not found", "NVRTC",
                     "unusable", libs.nvrtc_path, sizeof libs.nvrtc_path, libs.nvrtc_error, sizeof libs.nvrtc_error))
    return;
  if (nv->nvrtcVersion (&libs.nvrtc_major, &libs.nvrtc_minor) != FX_NVRTC_SUCCESS)
    {
      snprintf (libs.nvrtc_error, sizeof libs.nvrtc_error, "NVRTC %s: nvrtcVersion failed", libs.nvrtc_path);
      return;
    }
  libs.nvrtc_loaded = true;
}

static void
load_cublas (void)
{
  static const char *const candidates[] = {
    "libcublas.so.13", "libcublas.so.12", "libcublas.so", "libcublas.so.11",
    "/usr/local/cuda/lib64/libcublas.so", "/usr/local/cuda/lib/libcublas.so", NULL,
  };
  fx_cuda_cublas_api *cb = &libs.cublas;
  const sym_entry syms[] = {
    SYM (*cb, cublasCreate, "cublasCreate_v2", NULL),
    SYM (*cb, cublasDestroy, "cublasDestroy_v2", NULL),
    SYM (*cb, cublasGetVersion, "cublasGetVersion_v2", NULL),
    SYM (*cb, cublasSetStream, "cublasSetStream_v2", NULL),
    OPT (*cb, cublasSetWorkspace, "cublasSetWorkspace_v2", NULL),
    SYM (*cb, cublasSetMathMode, "cublasSetMathMode", NULL),
    OPT (*cb, cublasGetStatusString, "cublasGetStatusString", NULL),
    SYM (*cb, cublasGemmStridedBatchedEx, "cublasGemmStridedBatchedEx", NULL),
  };
  if (!open_library ("FX_CUBLAS_LIBRARY", candidates, syms, sizeof syms / sizeof syms[0], 0, "cuBLAS not found",
                     "cuBLAS", "unusable", libs.cublas_path, sizeof libs.cublas_path, libs.cublas_error,
                     sizeof libs.cublas_error))
    return;
  libs.cublas_loaded = true;
}

/* cuBLASLt (GEMMs with epilogues, algorithm choice); without it GEMMs go through cuBLAS. */
static void
load_cublaslt (void)
{
  static const char *const candidates[] = {
    "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", "libcublasLt.so.11",
    "/usr/local/cuda/lib64/libcublasLt.so", "/usr/local/cuda/lib/libcublasLt.so", NULL,
  };
  fx_cuda_cublaslt_api *lt = &libs.lt;
  const sym_entry syms[] = {
    SYM (*lt, cublasLtCreate, "cublasLtCreate", NULL),
    SYM (*lt, cublasLtDestroy, "cublasLtDestroy", NULL),
    SYM (*lt, cublasLtGetVersion, "cublasLtGetVersion", NULL),
    OPT (*lt, cublasLtGetStatusString, "cublasLtGetStatusString", NULL),
    SYM (*lt, cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate", NULL),
    SYM (*lt, cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy", NULL),
    SYM (*lt, cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute", NULL),
    SYM (*lt, cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate", NULL),
    SYM (*lt, cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy", NULL),
    SYM (*lt, cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute", NULL),
    SYM (*lt, cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate", NULL),
    SYM (*lt, cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy", NULL),
    SYM (*lt, cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute", NULL),
    SYM (*lt, cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic", NULL),
    SYM (*lt, cublasLtMatmulAlgoConfigGetAttribute, "cublasLtMatmulAlgoConfigGetAttribute", NULL),
    SYM (*lt, cublasLtMatmul, "cublasLtMatmul", NULL),
  };
  /* FX_CUBLASLT_LIBRARY=none turns cuBLASLt off (the cuBLAS fallback, for tests and comparisons). */
  if (getenv ("FX_CUBLASLT_LIBRARY") && strcmp (getenv ("FX_CUBLASLT_LIBRARY"), "none") == 0)
    {
      snprintf (libs.cublaslt_error, sizeof libs.cublaslt_error, "cuBLASLt turned off (FX_CUBLASLT_LIBRARY=none)");
      return;
    }
  if (!open_library ("FX_CUBLASLT_LIBRARY", candidates, syms, sizeof syms / sizeof syms[0], 0, "cuBLASLt not found",
                     "cuBLASLt", "unusable", libs.cublaslt_path, sizeof libs.cublaslt_path, libs.cublaslt_error,
                     sizeof libs.cublaslt_error))
    return;
  libs.cublaslt_loaded = true;
}

const fx_cuda_libs *
fx_cuda_libs_driver (void)
{
  pthread_once (&driver_once, load_driver);
  return &libs;
}

const fx_cuda_libs *
fx_cuda_libs_nvrtc (void)
{
  pthread_once (&nvrtc_once, load_nvrtc);
  return &libs;
}

const fx_cuda_libs *
fx_cuda_libs_cublas (void)
{
  pthread_once (&cublas_once, load_cublas);
  return &libs;
}

const fx_cuda_libs *
fx_cuda_libs_cublaslt (void)
{
  pthread_once (&cublaslt_once, load_cublaslt);
  return &libs;
}

fx_status
fx_cuda_check (fx_CUresult res, const char *what, fx_diag *diag)
{
  const char *name = NULL, *text = NULL;

  if (res == FX_CUDA_SUCCESS)
    return FX_OK;
  if (libs.driver_loaded)
    {
      if (libs.cu.cuGetErrorName (res, &name) != FX_CUDA_SUCCESS)
        name = NULL;
      if (libs.cu.cuGetErrorString (res, &text) != FX_CUDA_SUCCESS)
        text = NULL;
    }
  return fx_diag_set (diag, res == FX_CUDA_ERROR_OUT_OF_MEMORY ? FX_ERR_NOMEM : FX_ERR_BACKEND,
                      "%s: %s (%s)", what, name ? name : "CUDA error", text ? text : "unknown error");
}

fx_status
fx_cuda_probe (fx_cuda_runtime_info *info, fx_diag *diag)
{
  const fx_cuda_libs *l = fx_cuda_libs_driver ();

  fx_cuda_libs_nvrtc ();
  fx_cuda_libs_cublas ();
  fx_cuda_libs_cublaslt ();
  if (info)
    {
      memset (info, 0, sizeof *info);
      info->have_driver = l->driver_version > 0;
      info->driver_version = l->driver_version;
      info->device_count = l->device_count;
      memcpy (info->driver_path, l->driver_path, sizeof info->driver_path);
      memcpy (info->driver_error, l->driver_error, sizeof info->driver_error);
      info->have_nvrtc = l->nvrtc_loaded;
      info->nvrtc_major = l->nvrtc_major;
      info->nvrtc_minor = l->nvrtc_minor;
      memcpy (info->nvrtc_path, l->nvrtc_path, sizeof info->nvrtc_path);
      memcpy (info->nvrtc_error, l->nvrtc_error, sizeof info->nvrtc_error);
      info->have_cublas = l->cublas_loaded;
      memcpy (info->cublas_path, l->cublas_path, sizeof info->cublas_path);
      memcpy (info->cublas_error, l->cublas_error, sizeof info->cublas_error);
      info->have_cublaslt = l->cublaslt_loaded;
      memcpy (info->cublaslt_path, l->cublaslt_path, sizeof info->cublaslt_path);
      memcpy (info->cublaslt_error, l->cublaslt_error, sizeof info->cublaslt_error);
    }
  if (!l->driver_usable)
    return fx_diag_set (diag, FX_ERR_NO_DEVICE, "no CUDA device: %s", l->driver_error);
  return FX_OK;
}

fx_status
fx_cuda_nvrtc_available (fx_diag *diag)
{
  const fx_cuda_libs *l = fx_cuda_libs_nvrtc ();

  if (!l->nvrtc_loaded)
    return fx_diag_set (diag, FX_ERR_NO_DEVICE, "%s", l->nvrtc_error);
  return FX_OK;
}
