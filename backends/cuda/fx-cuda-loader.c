/* fx-cuda-loader.c: finds libcuda, NVRTC and cuBLAS with dlopen at run time, resolves the entry points, and turns
   their error codes into fx_diag messages; says precisely why there is no usable CUDA device. */
#include "fx-cuda-impl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fx_cuda_libs libs;

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

/* One library: where to look, its entry points, and where its state goes in `libs`. */
typedef struct lib_spec
{
  const char *env_name;              /* names the file to load instead of the candidates */
  const char *const *candidates;     /* NULL-terminated */
  const sym_entry *syms;
  size_t n_syms;
  size_t key;                        /* the entry whose real file becomes PATH */
  const char *not_found, *name, *unusable;   /* for the error texts */
  char *path;                        /* [256], as each library's in fx_cuda_libs */
  char *error;                       /* [512] */
} lib_spec;

/* Opens a library (ENV_NAME's file, else the first candidate that loads) into PATH and resolves its table; false
   with ERROR saying "<not_found>: why" or "<name> <path> <unusable>: why". PATH ends as the real file behind the
   table's KEY entry. */
static bool
open_library (const lib_spec *lib)
{
  const size_t path_size = sizeof libs.driver_path, error_size = sizeof libs.driver_error;   /* all alike */
  char why[400] = "";
  void *h = open_first (lib->env_name, lib->candidates, lib->path, path_size, why, sizeof why);

  if (!h)
    {
      snprintf (lib->error, error_size, "%s: %s", lib->not_found, why);
      return false;
    }
  if (!resolve (h, lib->syms, lib->n_syms, why, sizeof why))
    {
      snprintf (lib->error, error_size, "%s %s %s: %s", lib->name, lib->path, lib->unusable, why);
      return false;
    }
  real_path_of (*lib->syms[lib->key].slot, lib->path, path_size);
  return true;
}

/* The text of a driver error: its name and description, NULL where the driver has none. */
static void
driver_error_text (fx_CUresult res, const char **name, const char **text)
{
  *name = *text = NULL;
  if (libs.cu.cuGetErrorName (res, name) != FX_CUDA_SUCCESS)
    *name = NULL;
  if (libs.cu.cuGetErrorString (res, text) != FX_CUDA_SUCCESS)
    *text = NULL;
}

/* An entry point of libs.API under its own name, or its _v2 name (V2_OLD: else the unversioned one); OPT: may be
   missing. */
#define SYM(api, field) { #field, NULL, (void **) &libs.api.field, false }
#define SYM_V2(api, field) { #field "_v2", NULL, (void **) &libs.api.field, false }
#define SYM_V2_OLD(api, field) { #field "_v2", #field, (void **) &libs.api.field, false }
#define OPT(api, field) { #field, NULL, (void **) &libs.api.field, true }
#define OPT_V2(api, field) { #field "_v2", NULL, (void **) &libs.api.field, true }
/* One entry of a library's list in fx-cuda-impl.h, as its HOW says. */
#define SYM_ENTRY(api, how, ret, name, params) how (api, name),

/* VAR, the lib_spec of a library: its symbol table from LIST (fx-cuda-impl.h) into libs.API, KEY and the error texts
   as lib_spec says, its path and error in libs.STATE_path and libs.STATE_error. */
#define LIB_SPEC(var, env_name, candidates, list, api, key, not_found, name, unusable, state)                      \
  static const sym_entry var##_syms[] = { list (SYM_ENTRY, api) };                                                \
  static const lib_spec var = {                                                                                    \
    env_name, candidates, var##_syms, sizeof var##_syms / sizeof var##_syms[0], key,                               \
    not_found, name, unusable, libs.state##_path, libs.state##_error,                                              \
  }

/* The toolkit's library BASE: the sonames of CUDA 13 and 12, the unversioned one, the OLD soname, then CUDA's usual
   folders. */
#define TOOLKIT_CANDIDATES(base, old)                                                                     \
  {                                                                                                       \
    base ".so.13", base ".so.12", base ".so", base ".so" old, "/usr/local/cuda/lib64/" base ".so",        \
    "/usr/local/cuda/lib/" base ".so", NULL,                                                              \
  }

static const char *const driver_candidates[] = { "libcuda.so.1", "libcuda.so", NULL };
LIB_SPEC (driver_lib, "FX_CUDA_DRIVER_LIBRARY", driver_candidates, FX_CUDA_DRIVER_API, cu, 0,
          "no CUDA driver", "CUDA driver", "too old", driver);

static const char *const nvrtc_candidates[] = TOOLKIT_CANDIDATES ("libnvrtc", ".11.2");
LIB_SPEC (nvrtc_lib, "FX_NVRTC_LIBRARY", nvrtc_candidates, FX_CUDA_NVRTC_API, nvrtc, 1,
          "NVRTC not found", "NVRTC", "unusable", nvrtc);

static const char *const cublas_candidates[] = TOOLKIT_CANDIDATES ("libcublas", ".11");
LIB_SPEC (cublas_lib, "FX_CUBLAS_LIBRARY", cublas_candidates, FX_CUDA_CUBLAS_API, cublas, 0,
          "cuBLAS not found", "cuBLAS", "unusable", cublas);

/* cuBLASLt (GEMMs with epilogues, algorithm choice); without it GEMMs go through cuBLAS. */
static const char *const cublaslt_candidates[] = TOOLKIT_CANDIDATES ("libcublasLt", ".11");
LIB_SPEC (cublaslt_lib, "FX_CUBLASLT_LIBRARY", cublaslt_candidates, FX_CUDA_CUBLASLT_API, lt, 0,
          "cuBLASLt not found", "cuBLASLt", "unusable", cublaslt);

static void
load_driver (void)
{
  fx_cuda_driver_api *cu = &libs.cu;
  if (!open_library (&driver_lib))
    return;
  libs.driver_loaded = true;

  fx_CUresult res = cu->cuInit (0);
  if (res != FX_CUDA_SUCCESS)
    {
      const char *name, *text;
      driver_error_text (res, &name, &text);
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
  if (!open_library (&nvrtc_lib))
    return;
  if (libs.nvrtc.nvrtcVersion (&libs.nvrtc_major, &libs.nvrtc_minor) != FX_NVRTC_SUCCESS)
    {
      snprintf (libs.nvrtc_error, sizeof libs.nvrtc_error, "NVRTC %s: nvrtcVersion failed", libs.nvrtc_path);
      return;
    }
  libs.nvrtc_loaded = true;
}

static void
load_cublas (void)
{
  libs.cublas_loaded = open_library (&cublas_lib);
}

static void
load_cublaslt (void)
{
  /* FX_CUBLASLT_LIBRARY=none turns cuBLASLt off (the cuBLAS fallback, for tests and comparisons). */
  if (getenv ("FX_CUBLASLT_LIBRARY") && strcmp (getenv ("FX_CUBLASLT_LIBRARY"), "none") == 0)
    {
      snprintf (libs.cublaslt_error, sizeof libs.cublaslt_error, "cuBLASLt turned off (FX_CUBLASLT_LIBRARY=none)");
      return;
    }
  libs.cublaslt_loaded = open_library (&cublaslt_lib);
}

/* fx_cuda_libs_LIB (): LIB loaded on first use (once per process, thread-safe). */
#define LIBS_GETTER(lib)                               \
  const fx_cuda_libs *fx_cuda_libs_##lib (void)        \
  {                                                    \
    static pthread_once_t once = PTHREAD_ONCE_INIT;    \
    pthread_once (&once, load_##lib);                  \
    return &libs;                                      \
  }

LIBS_GETTER (driver)
LIBS_GETTER (nvrtc)
LIBS_GETTER (cublas)
LIBS_GETTER (cublaslt)

fx_status
fx_cuda_check (fx_CUresult res, const char *what, fx_diag *diag)
{
  const char *name = NULL, *text = NULL;

  if (res == FX_CUDA_SUCCESS)
    return FX_OK;
  if (libs.driver_loaded)
    driver_error_text (res, &name, &text);
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
