/* fx-cuda-nvrtc.c: CUDA C to cubin with NVRTC for the present GPU, an on-disk cache keyed by SHA-256 of everything
   that shapes the image (a second build does not call NVRTC), module loading and kernel launches. */
#include "fx-cuda-impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CU (fx_cuda_libs_driver ()->cu)
#define NV (fx_cuda_libs_nvrtc ()->nvrtc)

/* ---------------------------------------------------------------- SHA-256 (FIPS 180-4) */

typedef struct sha256
{
  uint32_t h[8];
  uint8_t buf[64];
  size_t buf_len;
  uint64_t total;
} sha256;

static const uint32_t sha256_k[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha256_block (sha256 *c, const uint8_t *p)
{
  uint32_t w[64], a, b, cc, d, e, f, g, h;

  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 | (uint32_t) p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++)
    {
      uint32_t s0 = ROR32 (w[i - 15], 7) ^ ROR32 (w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = ROR32 (w[i - 2], 17) ^ ROR32 (w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
  a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
  for (int i = 0; i < 64; i++)
    {
      uint32_t t1 = h + (ROR32 (e, 6) ^ ROR32 (e, 11) ^ ROR32 (e, 25)) + ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
      uint32_t t2 = (ROR32 (a, 2) ^ ROR32 (a, 13) ^ ROR32 (a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
      h = g, g = f, f = e, e = d + t1, d = cc, cc = b, b = a, a = t1 + t2;
    }
  c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d;
  c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static void
sha256_init (sha256 *c)
{
  static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  memcpy (c->h, h0, sizeof h0);
  c->buf_len = 0;
  c->total = 0;
}

static void
sha256_update (sha256 *c, const void *data, size_t len)
{
  const uint8_t *p = data;

  c->total += len;
  while (len > 0)
    {
      size_t n = 64 - c->buf_len < len ? 64 - c->buf_len : len;
      memcpy (c->buf + c->buf_len, p, n);
      c->buf_len += n;
      p += n;
      len -= n;
      if (c->buf_len == 64)
        {
          sha256_block (c, c->buf);
          c->buf_len = 0;
        }
    }
}

static void
sha256_hex (sha256 *c, char out[65])
{
  uint64_t bits = c->total * 8;
  uint8_t pad = 0x80, zero = 0, len[8];

  sha256_update (c, &pad, 1);
  while (c->buf_len != 56)
    sha256_update (c, &zero, 1);
  for (int i = 0; i < 8; i++)
    len[i] = (uint8_t) (bits >> (56 - 8 * i));
  sha256_update (c, len, 8);
  for (int i = 0; i < 8; i++)
    snprintf (out + 8 * i, 9, "%08x", c->h[i]);
}

/* Each field is followed by a NUL so that ("ab","c") and ("a","bc") hash differently. */
static void
sha256_field (sha256 *c, const char *s)
{
  sha256_update (c, s ? s : "", strlen (s ? s : "") + 1);
}

/* ---------------------------------------------------------------- helpers */

static void
default_cache_dir (char *out, size_t out_size)
{
  const char *env = getenv ("FX_CUDA_CACHE_DIR");
  const char *xdg = getenv ("XDG_CACHE_HOME");
  const char *home = getenv ("HOME");

  if (env && *env)
    snprintf (out, out_size, "%s", env);
  else if (xdg && *xdg)
    snprintf (out, out_size, "%s/fx-workbench/cuda", xdg);
  else if (home && *home)
    snprintf (out, out_size, "%s/.cache/fx-workbench/cuda", home);
  else
    snprintf (out, out_size, "/tmp/fx-workbench-cuda-%ld", (long) getuid ());
}

/* Cache file: "FXCUBIN1 <key> <size>\n" then the image. A file whose header does not match is ignored (and
   rewritten), so a torn or foreign file can never be loaded. */
#define CACHE_MAGIC "FXCUBIN1"

static bool
cache_read (const char *path, const char *key, void **image, size_t *size)
{
  /* the image is loaded onto the GPU: only a private file of this user counts (never through a symlink) */
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  FILE *f = NULL;
  char header[128], want[128];
  unsigned long long n = 0;
  void *data;
  bool ok = false;

  if (fd >= 0 && fx_cache_file_trusted (fd))
    f = fdopen (fd, "rb");
  if (!f)
    {
      if (fd >= 0)
        close (fd);
      return false;
    }
  if (!fgets (header, sizeof header, f) || sscanf (header, CACHE_MAGIC " %*64s %llu", &n) != 1)
    goto out;
  snprintf (want, sizeof want, CACHE_MAGIC " %s %llu\n", key, n);
  if (strcmp (header, want) != 0 || n == 0 || n > ((unsigned long long) 1 << 31))
    goto out;
  data = malloc (n + 1);
  if (!data)
    goto out;
  if (fread (data, 1, n, f) != n || fgetc (f) != EOF)
    {
      free (data);
      goto out;
    }
  ((char *) data)[n] = '\0';
  *image = data;
  *size = n;
  ok = true;
out:
  fclose (f);
  return ok;
}

/* Written to a temporary name and renamed, so a concurrent reader sees the old file or the whole new one. */
static void
cache_write (const char *dir, const char *path, const char *key, const void *image, size_t size)
{
  char tmp[1100];
  FILE *f;
  bool ok;
  int fd;

  (void) dir;   /* made and checked private by the caller */
  snprintf (tmp, sizeof tmp, "%s.tmp.%ld", path, (long) getpid ());
  unlink (tmp);
  fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  f = fd >= 0 ? fdopen (fd, "wb") : NULL;
  if (!f)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  ok = fprintf (f, CACHE_MAGIC " %s %zu\n", key, size) > 0 && fwrite (image, 1, size, f) == size;
  ok = (fclose (f) == 0) && ok;
  if (!ok || rename (tmp, path) != 0)
    unlink (tmp);
}

/* Points diag at the first "name(LINE): error" of NVRTC's log, with that source line. */
static void
locate_first_error (fx_diag *diag, const char *name, const char *source, const char *log)
{
  char pattern[300];
  const char *p;
  int line = 0;

  if (!diag || !log)
    return;
  snprintf (pattern, sizeof pattern, "%s(", name);
  for (p = strstr (log, pattern); p; p = strstr (p + 1, pattern))
    {
      const char *q = p + strlen (pattern);
      char *end;
      long n = strtol (q, &end, 10);
      if (end != q && strncmp (end, "): error", 8) == 0)
        {
          line = (int) n;
          break;
        }
    }
  if (line <= 0)
    {
      fx_diag_locate (diag, name, 0, 0, NULL, 0);
      return;
    }
  p = source;
  for (int i = 1; i < line && p; i++)
    {
      p = strchr (p, '\n');
      if (p)
        p++;
    }
  if (p)
    fx_diag_locate (diag, name, line, 0, p, strcspn (p, "\n"));
  else
    fx_diag_locate (diag, name, line, 0, NULL, 0);
}

/* sm_XY when NVRTC can build it; else compute_ZW PTX of the newest arch below it, for the driver to finish. */
static fx_status
choose_arch (int cc_major, int cc_minor, char *arch, size_t arch_size, bool *is_ptx, fx_diag *diag)
{
  int want = cc_major * 10 + cc_minor, n = 0, best = 0;
  int *archs;

  *is_ptx = false;
  if (!NV.nvrtcGetNumSupportedArchs || !NV.nvrtcGetSupportedArchs)
    {
      snprintf (arch, arch_size, "sm_%d", want);
      return FX_OK;
    }
  if (NV.nvrtcGetNumSupportedArchs (&n) != FX_NVRTC_SUCCESS || n <= 0)
    {
      snprintf (arch, arch_size, "sm_%d", want);
      return FX_OK;
    }
  archs = calloc ((size_t) n, sizeof *archs);
  if (!archs)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  NV.nvrtcGetSupportedArchs (archs);
  for (int i = 0; i < n; i++)
    {
      if (archs[i] == want)
        best = want;
      else if (archs[i] < want && archs[i] > best && best != want)
        best = archs[i];
    }
  free (archs);
  if (best == 0)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "NVRTC %d.%d cannot build for compute capability %d.%d",
                        fx_cuda_libs_nvrtc ()->nvrtc_major, fx_cuda_libs_nvrtc ()->nvrtc_minor, cc_major, cc_minor);
  *is_ptx = best != want;
  snprintf (arch, arch_size, "%s_%d", *is_ptx ? "compute" : "sm", best);
  return FX_OK;
}

static size_t compiler_invocations;

size_t
fx_cuda_compiler_invocations (void)
{
  return __atomic_load_n (&compiler_invocations, __ATOMIC_RELAXED);
}

void
fx_cuda_build_info_clear (fx_cuda_build_info *info)
{
  if (!info)
    return;
  free (info->log);
  memset (info, 0, sizeof *info);
}

fx_status
fx_cuda_compile (const char *source, const char *name, int cc_major, int cc_minor,
                 const fx_cuda_build_options *options, void **image, size_t *image_size,
                 fx_cuda_build_info *info, fx_diag *diag)
{
  static const fx_cuda_build_options no_options;
  const fx_cuda_build_options *o = options ? options : &no_options;
  fx_cuda_build_info local_info;
  fx_cuda_build_info *bi = info ? info : &local_info;
  const fx_cuda_libs *l = fx_cuda_libs_nvrtc ();
  double t0 = fx_now_ms ();
  char arch_opt[64], cache_dir[900], version[32];
  const char **opts = NULL;
  int n_opts = 0;
  fx_nvrtcProgram prog = NULL;
  fx_nvrtcResult res;
  size_t log_size = 0, size = 0;
  char *data = NULL;
  fx_status st;
  sha256 h;

  memset (bi, 0, sizeof *bi);
  *image = NULL;
  *image_size = 0;
  if (!name || !*name)
    name = "kernel.cu";
  if (!source)
    return fx_diag_set (diag, FX_ERR_INVALID, "no CUDA source");
  if (!l->nvrtc_loaded)
    return fx_diag_set (diag, FX_ERR_NO_DEVICE, "%s", l->nvrtc_error);
  if ((st = choose_arch (cc_major, cc_minor, bi->arch, sizeof bi->arch, &bi->is_ptx, diag)) != FX_OK)
    return st;

  opts = calloc (o->n_flags + 4, sizeof *opts);
  if (!opts)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  snprintf (arch_opt, sizeof arch_opt, "--gpu-architecture=%s", bi->arch);
  opts[n_opts++] = arch_opt;
  if (o->line_info)
    opts[n_opts++] = "-lineinfo";
  for (size_t i = 0; i < o->n_flags; i++)
    opts[n_opts++] = o->flags[i];

  /* The key covers what changes the image: NVRTC's version, the options (arch included), the name (it appears in
     the line info) and the source. */
  snprintf (version, sizeof version, "%d.%d", l->nvrtc_major, l->nvrtc_minor);
  sha256_init (&h);
  sha256_field (&h, "fx-cuda-cache-1");
  sha256_field (&h, version);
  for (int i = 0; i < n_opts; i++)
    sha256_field (&h, opts[i]);
  sha256_field (&h, name);
  sha256_field (&h, source);
  sha256_hex (&h, bi->key);

  bool use_cache = !o->no_cache;
  if (use_cache)
    {
      char want_dir[900];
      if (o->cache_dir && *o->cache_dir)
        snprintf (want_dir, sizeof want_dir, "%s", o->cache_dir);
      else
        default_cache_dir (want_dir, sizeof want_dir);
      /* created 0700; a directory others can write to is replaced by a private temporary one */
      fx_diag dd;
      if (fx_cache_dir_open (want_dir, "fx-workbench-cuda", cache_dir, sizeof cache_dir, NULL, 0, &dd) != FX_OK)
        use_cache = false;
    }
  if (use_cache)
    {
      snprintf (bi->cache_path, sizeof bi->cache_path, "%s/%s.%s", cache_dir, bi->key, bi->is_ptx ? "ptx" : "cubin");
      if (cache_read (bi->cache_path, bi->key, image, image_size))
        {
          bi->cache_hit = true;
          bi->image_bytes = *image_size;
          bi->total_ms = fx_now_ms () - t0;
          free (opts);
          if (bi == &local_info)
            fx_cuda_build_info_clear (bi);
          return FX_OK;
        }
    }

  res = NV.nvrtcCreateProgram (&prog, source, name, 0, NULL, NULL);
  if (res != FX_NVRTC_SUCCESS)
    {
      free (opts);
      return fx_diag_set (diag, FX_ERR_BACKEND, "nvrtcCreateProgram: %s", NV.nvrtcGetErrorString (res));
    }
  {
    double c0 = fx_now_ms ();
    __atomic_fetch_add (&compiler_invocations, 1, __ATOMIC_RELAXED);
    res = NV.nvrtcCompileProgram (prog, n_opts, opts);
    bi->nvrtc_ms = fx_now_ms () - c0;
  }
  free (opts);
  if (NV.nvrtcGetProgramLogSize (prog, &log_size) == FX_NVRTC_SUCCESS && log_size > 1)
    {
      bi->log = malloc (log_size + 1);
      if (bi->log && NV.nvrtcGetProgramLog (prog, bi->log) == FX_NVRTC_SUCCESS)
        bi->log[log_size] = '\0';
      else
        {
          free (bi->log);
          bi->log = NULL;
        }
    }
  if (res != FX_NVRTC_SUCCESS)
    {
      st = fx_diag_set (diag, FX_ERR_BACKEND, "NVRTC could not compile %s for %s: %s\n%s", name, bi->arch,
                        NV.nvrtcGetErrorString (res), bi->log ? bi->log : "");
      locate_first_error (diag, name, source, bi->log);
      NV.nvrtcDestroyProgram (&prog);
      bi->total_ms = fx_now_ms () - t0;
      if (bi == &local_info)
        fx_cuda_build_info_clear (bi);
      return st;
    }

  res = bi->is_ptx ? NV.nvrtcGetPTXSize (prog, &size) : NV.nvrtcGetCUBINSize (prog, &size);
  if (res == FX_NVRTC_SUCCESS && size > 0 && (data = malloc (size + 1)))
    {
      res = bi->is_ptx ? NV.nvrtcGetPTX (prog, data) : NV.nvrtcGetCUBIN (prog, data);
      data[size] = '\0';
    }
  NV.nvrtcDestroyProgram (&prog);
  if (res != FX_NVRTC_SUCCESS || !data)
    {
      free (data);
      if (bi == &local_info)
        fx_cuda_build_info_clear (bi);
      return fx_diag_set (diag, res != FX_NVRTC_SUCCESS ? FX_ERR_BACKEND : FX_ERR_NOMEM,
                          "NVRTC returned no image for %s: %s", name, NV.nvrtcGetErrorString (res));
    }
  if (bi->is_ptx)
    size = strlen (data) + 1;   /* the driver wants the PTX text NUL-terminated */
  if (use_cache)
    cache_write (cache_dir, bi->cache_path, bi->key, data, size);
  *image = data;
  *image_size = size;
  bi->image_bytes = size;
  bi->total_ms = fx_now_ms () - t0;
  if (bi == &local_info)
    fx_cuda_build_info_clear (bi);
  return FX_OK;
}

/* ---------------------------------------------------------------- modules and kernels */

struct fx_cuda_kernel
{
  fx_cuda_module *module;
  fx_CUfunction fn;
  char *name;
  fx_cuda_kernel *next;
};

struct fx_cuda_module
{
  fx_cuda *cuda;
  fx_CUmodule mod;
  fx_cuda_kernel *kernels;
};

fx_status
fx_cuda_module_load (fx_cuda *cuda, const void *image, size_t image_size, fx_cuda_module **out, fx_diag *diag)
{
  fx_cuda_module *m;
  fx_status st;

  *out = NULL;
  if (!image || image_size == 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "empty module image");
  if ((m = fx_cuda_enter_alloc (cuda, sizeof *m, &st, diag)) == NULL)
    return st;
  m->cuda = cuda;
  *out = fx_cuda_handle_made (m, CU.cuModuleLoadData (&m->mod, image), "cuModuleLoadData", &st, diag);
  return st;
}

fx_status
fx_cuda_module_build (fx_cuda *cuda, const char *source, const char *name, const fx_cuda_build_options *options,
                      fx_cuda_module **out, fx_cuda_build_info *info, fx_diag *diag)
{
  fx_cuda_build_info local_info;
  fx_cuda_build_info *bi = info ? info : &local_info;
  double t0 = fx_now_ms ();
  void *image = NULL;
  size_t size = 0;
  fx_status st;

  *out = NULL;
  st = fx_cuda_compile (source, name, cuda->info.cc_major, cuda->info.cc_minor, options, &image, &size, bi, diag);
  if (st == FX_OK)
    {
      st = fx_cuda_module_load (cuda, image, size, out, diag);
      free (image);
    }
  bi->total_ms = fx_now_ms () - t0;
  if (bi == &local_info)
    fx_cuda_build_info_clear (bi);
  return st;
}

void
fx_cuda_module_free (fx_cuda_module *module)
{
  fx_cuda_kernel *k, *next;

  if (!module)
    return;
  for (k = module->kernels; k; k = next)
    {
      next = k->next;
      free (k->name);
      free (k);
    }
  if (fx_cuda_enter (module->cuda, NULL) == FX_OK)
    CU.cuModuleUnload (module->mod);
  free (module);
}

fx_status
fx_cuda_module_set_global (fx_cuda_module *module, const char *name, const void *data, size_t bytes, fx_diag *diag)
{
  fx_CUdeviceptr ptr = 0;
  size_t size = 0;
  fx_status st = fx_cuda_enter (module->cuda, diag);
  if (st != FX_OK)
    return st;
  fx_CUresult res = CU.cuModuleGetGlobal (&ptr, &size, module->mod, name);
  if (res == FX_CUDA_ERROR_NOT_FOUND)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "no global '%.64s' in the module", name);
  FX_CU_TRY (res, "cuModuleGetGlobal", diag);
  if (size != bytes)
    return fx_diag_set (diag, FX_ERR_INVALID, "global '%.64s' has %zu bytes, not %zu", name, size, bytes);
  FX_CU_TRY (CU.cuMemcpyHtoD (ptr, data, bytes), "cuMemcpyHtoD", diag);
  return FX_OK;
}

fx_status
fx_cuda_module_get_kernel (fx_cuda_module *module, const char *name, fx_cuda_kernel **out, fx_diag *diag)
{
  fx_cuda_kernel *k;
  fx_CUresult res;
  fx_status st;

  *out = NULL;
  for (k = module->kernels; k; k = k->next)
    if (strcmp (k->name, name) == 0)
      {
        *out = k;
        return FX_OK;
      }
  if ((st = fx_cuda_enter (module->cuda, diag)) != FX_OK)
    return st;
  k = calloc (1, sizeof *k);
  if (!k || !(k->name = strdup (name)))
    {
      free (k);
      return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
    }
  res = CU.cuModuleGetFunction (&k->fn, module->mod, name);
  if (res != FX_CUDA_SUCCESS)
    {
      free (k->name);
      free (k);
      if (res == FX_CUDA_ERROR_NOT_FOUND)
        return fx_diag_set (diag, FX_ERR_NOT_FOUND, "no kernel '%s' in the module (is it extern \"C\"?)", name);
      return fx_cuda_check (res, "cuModuleGetFunction", diag);
    }
  k->module = module;
  k->next = module->kernels;
  module->kernels = k;
  *out = k;
  return FX_OK;
}

fx_status
fx_cuda_kernel_get_attrs (fx_cuda_kernel *kernel, fx_cuda_kernel_attrs *attrs, fx_diag *diag)
{
  fx_status st = fx_cuda_enter (kernel->module->cuda, diag);

  memset (attrs, 0, sizeof *attrs);
  if (st != FX_OK)
    return st;
  FX_CU_TRY (CU.cuFuncGetAttribute (&attrs->num_regs, FX_CU_FUNC_NUM_REGS, kernel->fn), "cuFuncGetAttribute", diag);
  FX_CU_TRY (CU.cuFuncGetAttribute (&attrs->local_bytes, FX_CU_FUNC_LOCAL_SIZE_BYTES, kernel->fn),
             "cuFuncGetAttribute", diag);
  FX_CU_TRY (CU.cuFuncGetAttribute (&attrs->static_shared_bytes, FX_CU_FUNC_SHARED_SIZE_BYTES, kernel->fn),
             "cuFuncGetAttribute", diag);
  FX_CU_TRY (CU.cuFuncGetAttribute (&attrs->max_threads_per_block, FX_CU_FUNC_MAX_THREADS_PER_BLOCK, kernel->fn),
             "cuFuncGetAttribute", diag);
  return FX_OK;
}

fx_status
fx_cuda_kernel_set_dynamic_shared (fx_cuda_kernel *kernel, int bytes, fx_diag *diag)
{
  fx_cuda *cuda = kernel->module->cuda;
  fx_status st;

  if (bytes < 0 || bytes > cuda->info.max_shared_per_block_optin)
    return fx_diag_set (diag, FX_ERR_INVALID, "%d bytes of shared memory for %s; this GPU allows %d", bytes,
                        kernel->name, cuda->info.max_shared_per_block_optin);
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return st;
  FX_CU_TRY (CU.cuFuncSetAttribute (kernel->fn, FX_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
             "cuFuncSetAttribute", diag);
  return FX_OK;
}

fx_status
fx_cuda_launch (fx_cuda_kernel *kernel, fx_cuda_stream *stream, const unsigned int grid[3],
                const unsigned int block[3], unsigned int shared_bytes, void **args, fx_diag *diag)
{
  fx_cuda *cuda = kernel->module->cuda;
  fx_cuda_stream *s = fx_cuda_stream_or_default (cuda, stream);
  unsigned long long threads = (unsigned long long) block[0] * block[1] * block[2];
  fx_CUresult res;
  fx_status st;

  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0 || threads == 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "launch of %s with an empty grid (%u, %u, %u) or block (%u, %u, %u)",
                        kernel->name, grid[0], grid[1], grid[2], block[0], block[1], block[2]);
  if (threads > (unsigned long long) cuda->info.max_threads_per_block)
    return fx_diag_set (diag, FX_ERR_INVALID, "launch of %s with %llu threads per block; this GPU allows %d",
                        kernel->name, threads, cuda->info.max_threads_per_block);
  if (grid[1] > 65535 || grid[2] > 65535 || grid[0] > 0x7fffffffu)
    return fx_diag_set (diag, FX_ERR_INVALID, "launch of %s with grid (%u, %u, %u) beyond the limits", kernel->name,
                        grid[0], grid[1], grid[2]);
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return st;
  res = CU.cuLaunchKernel (kernel->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                           s->stream, args, NULL);
  if (res != FX_CUDA_SUCCESS)
    {
      char what[300];
      snprintf (what, sizeof what, "cuLaunchKernel(%s)", kernel->name);
      return fx_cuda_check (res, what, diag);
    }
  return FX_OK;
}
