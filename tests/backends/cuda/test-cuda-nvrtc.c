/* test-cuda-nvrtc.c: NVRTC builds without a GPU: cubins for sm_90 from the generated-style sample kernels, the
   on-disk cache (a warm build does not call NVRTC; a damaged entry is rebuilt), compile errors located with NVRTC's
   log, PTX for an arch NVRTC does not know. Skips (77) where NVRTC is absent. */
#include "cuda-test.h"
#include "cuda/fx-cuda.h"

#include <sys/stat.h>
#include <unistd.h>

static const char *kernels_dir;
static char cache_dir[256];

static const char *const kernel_names[] = {
  "cuda_poi_fused_add_0", "cuda_per_fused_sum_1", "cuda_red_fused_var_mean_2", "cuda_poi_fused_mul_add_3",
};

static char *
read_kernel (const char *name)
{
  char path[1024];
  char *data = NULL;
  size_t len = 0;
  snprintf (path, sizeof path, "%s/%s.cu", kernels_dir, name);
  if (fx_file_read (path, &data, &len, NULL) != FX_OK)
    return NULL;
  return data;
}

static bool
image_has (const void *image, size_t size, const char *needle)
{
  size_t n = strlen (needle);
  for (size_t i = 0; i + n <= size; i++)
    if (memcmp ((const char *) image + i, needle, n) == 0)
      return true;
  return false;
}

static void
test_compile_samples (void)
{
  fx_cuda_build_options opts = { .cache_dir = cache_dir };

  for (size_t i = 0; i < sizeof kernel_names / sizeof kernel_names[0]; i++)
    {
      char *src = read_kernel (kernel_names[i]);
      fx_cuda_build_info info;
      void *image = NULL;
      size_t size = 0;
      fx_diag diag;

      fx_diag_clear (&diag);
      CHECK (src != NULL, "cannot read %s in %s", kernel_names[i], kernels_dir);
      CHECK_OK (fx_cuda_compile (src, kernel_names[i], 9, 0, &opts, &image, &size, &info, &diag), &diag);
      CHECK (!info.is_ptx && strcmp (info.arch, "sm_90") == 0, "arch %s", info.arch);
      CHECK (size > 64 && memcmp (image, "\177ELF", 4) == 0, "not an ELF cubin (%zu bytes)", size);
      CHECK (image_has (image, size, kernel_names[i]), "kernel symbol %s not in the cubin", kernel_names[i]);
      CHECK (!info.cache_hit && info.nvrtc_ms > 0, "cold build: hit %d, %.2f ms", info.cache_hit, info.nvrtc_ms);
      printf ("# %s: %zu bytes cubin, NVRTC %.1f ms\n", kernel_names[i], size, info.nvrtc_ms);
      fx_cuda_build_info_clear (&info);
      free (image);
      free (src);
    }
}

static void
test_cache (void)
{
  fx_cuda_build_options opts = { .cache_dir = cache_dir };
  const char *flags[] = { "-DFX_TEST_VARIANT=1" };
  fx_cuda_build_options opts2 = { .cache_dir = cache_dir, .flags = flags, .n_flags = 1 };
  char *src = read_kernel ("cuda_poi_fused_add_0");
  fx_cuda_build_info cold, warm, other;
  void *a = NULL, *b = NULL, *c = NULL;
  size_t na = 0, nb = 0, nc = 0;
  fx_diag diag;
  FILE *f;

  fx_diag_clear (&diag);
  CHECK (src != NULL, "no source");
  /* The samples test compiled this one already: now it must come from the cache. */
  CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_add_0", 9, 0, &opts, &a, &na, &warm, &diag), &diag);
  CHECK (warm.cache_hit && warm.nvrtc_ms == 0, "second build was not a cache hit (%s)", warm.cache_path);
  CHECK (strncmp (warm.cache_path, cache_dir, strlen (cache_dir)) == 0, "cache path %s", warm.cache_path);
  printf ("# warm build %.3f ms (cache %s)\n", warm.total_ms, warm.cache_path);

  /* Other options: another key, a fresh NVRTC call. */
  CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_add_0", 9, 0, &opts2, &b, &nb, &other, &diag), &diag);
  CHECK (!other.cache_hit && strcmp (other.key, warm.key) != 0, "options not in the key");

  /* A damaged entry is never loaded: rebuilt and rewritten. */
  f = fopen (warm.cache_path, "r+b");
  CHECK (f != NULL, "cannot open %s", warm.cache_path);
  fseek (f, 20, SEEK_SET);
  fputc ('Z', f);
  fclose (f);
  CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_add_0", 9, 0, &opts, &c, &nc, &cold, &diag), &diag);
  CHECK (!cold.cache_hit, "a damaged cache entry was used");
  CHECK (nc == na && memcmp (a, c, na) == 0, "rebuilt image differs from the cached one");
  fx_cuda_build_info_clear (&cold);
  free (c);
  CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_add_0", 9, 0, &opts, &c, &nc, &cold, &diag), &diag);
  CHECK (cold.cache_hit, "the rebuilt entry was not written back");

  /* no_cache neither reads nor writes. */
  {
    fx_cuda_build_options none = { .no_cache = true };
    fx_cuda_build_info ni;
    void *d = NULL;
    size_t nd = 0;
    CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_add_0", 9, 0, &none, &d, &nd, &ni, &diag), &diag);
    CHECK (!ni.cache_hit && ni.cache_path[0] == '\0', "no_cache used the cache");
    free (d);
    fx_cuda_build_info_clear (&ni);
  }
  fx_cuda_build_info_clear (&warm);
  fx_cuda_build_info_clear (&other);
  fx_cuda_build_info_clear (&cold);
  free (a);
  free (b);
  free (c);
  free (src);
}

/* The cache is loaded onto the GPU: its directory is made 0700 and used only when private; an entry that others
   can write to, or a symlink, is never loaded; a shared directory is replaced by a private temporary one. */
static void
test_cache_private (void)
{
  fx_cuda_build_options opts = { .cache_dir = cache_dir };
  char *src = read_kernel ("cuda_poi_fused_add_0");
  fx_cuda_build_info info;
  void *img = NULL;
  size_t n = 0;
  fx_diag diag;
  struct stat st;
  char moved[1100], shared[300], fallback[1100];

  fx_diag_clear (&diag);
  CHECK (src != NULL, "no source");
  CHECK (stat (cache_dir, &st) == 0 && (st.st_mode & 077) == 0, "cache dir mode %o", (unsigned) st.st_mode);
  CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_add_0", 9, 0, &opts, &img, &n, &info, &diag), &diag);
  CHECK (info.cache_hit, "not a cache hit before the test");
  CHECK (stat (info.cache_path, &st) == 0 && (st.st_mode & 022) == 0, "entry mode %o", (unsigned) st.st_mode);

  /* writable by others: rebuilt, and the rewritten entry is private again */
  CHECK (chmod (info.cache_path, 0666) == 0, "chmod");
  fx_cuda_build_info_clear (&info);
  free (img);
  CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_add_0", 9, 0, &opts, &img, &n, &info, &diag), &diag);
  CHECK (!info.cache_hit, "a group/other-writable cache entry was loaded");
  CHECK (stat (info.cache_path, &st) == 0 && (st.st_mode & 022) == 0, "rewritten mode %o", (unsigned) st.st_mode);

  /* a symlink to a valid entry: not followed */
  snprintf (moved, sizeof moved, "%s.moved", info.cache_path);
  CHECK (rename (info.cache_path, moved) == 0 && symlink (moved, info.cache_path) == 0, "symlink");
  fx_cuda_build_info_clear (&info);
  free (img);
  CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_add_0", 9, 0, &opts, &img, &n, &info, &diag), &diag);
  CHECK (!info.cache_hit, "a symlinked cache entry was loaded");
  CHECK (lstat (info.cache_path, &st) == 0 && S_ISREG (st.st_mode), "the symlink was not replaced");
  fx_cuda_build_info_clear (&info);
  free (img);

  /* a directory anyone can write to: not used */
  snprintf (shared, sizeof shared, "%.200s-shared", cache_dir);
  CHECK (mkdir (shared, 0700) == 0 && chmod (shared, 0777) == 0, "mkdir %s", shared);
  fx_cuda_build_options sopts = { .cache_dir = shared };
  CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_add_0", 9, 0, &sopts, &img, &n, &info, &diag), &diag);
  CHECK (strncmp (info.cache_path, shared, strlen (shared)) != 0, "the shared directory was used: %s",
         info.cache_path);
  snprintf (fallback, sizeof fallback, "%s", info.cache_path);
  if (strrchr (fallback, '/'))
    *strrchr (fallback, '/') = '\0';
  CHECK (stat (fallback, &st) == 0 && (st.st_mode & 077) == 0, "fallback %s mode %o", fallback,
         (unsigned) st.st_mode);
  if (strncmp (fallback, "/tmp/fx-workbench-cuda-", 23) == 0 && strchr (fallback, '\'') == NULL)
    {
      char cmd[1200];
      snprintf (cmd, sizeof cmd, "rm -rf '%s'", fallback);
      if (system (cmd) != 0)
        printf ("# could not remove %s\n", fallback);
    }
  fx_cuda_build_info_clear (&info);
  free (img);
  free (src);
}

static void
test_compile_error (void)
{
  static const char src[] =
    "extern \"C\" __global__ void\n"
    "cuda_poi_fused_broken_0 (float *out_ptr0)\n"
    "{\n"
    "  out_ptr0[threadIdx.x] = undeclared_tmp0 + 1.0f;\n"
    "}\n";
  fx_cuda_build_options opts = { .cache_dir = cache_dir };
  fx_cuda_build_info info;
  void *image = (void *) 0x1;
  size_t size = 7;
  fx_diag diag;
  fx_status st;

  fx_diag_clear (&diag);
  st = fx_cuda_compile (src, "cuda_poi_fused_broken_0.cu", 9, 0, &opts, &image, &size, &info, &diag);
  CHECK (st == FX_ERR_BACKEND, "status %s", fx_status_name (st));
  CHECK (image == NULL && size == 0, "an image came back");
  CHECK (info.log && strstr (info.log, "undeclared_tmp0"), "log: %s", info.log ? info.log : "(none)");
  CHECK (strstr (diag.message, "undeclared_tmp0") != NULL, "message: %s", diag.message);
  CHECK (diag.line == 4, "line %d", diag.line);
  CHECK (strcmp (diag.file, "cuda_poi_fused_broken_0.cu") == 0, "file %s", diag.file);
  CHECK (strstr (diag.line_text, "undeclared_tmp0 + 1.0f") != NULL, "line text %s", diag.line_text);
  {
    char text[2048];
    fx_diag_format (&diag, text, sizeof text);
    printf ("# %s", text);
  }
  fx_cuda_build_info_clear (&info);
}

static void
test_builtin (void)
{
  static const char *const names[] = {
    "fx_broadcast_scale_f32", "fx_broadcast_scale_f64", "fx_broadcast_scale_f16", "fx_broadcast_scale_bf16",
  };
  fx_cuda_build_options opts = { .no_cache = true };
  fx_cuda_build_info info;
  void *image = NULL;
  size_t size = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK_OK (fx_cuda_compile (fx_cuda_builtin_source (), "fx-cuda-builtin.cu", 9, 0, &opts, &image, &size, &info,
                             &diag), &diag);
  for (size_t i = 0; i < 4; i++)
    CHECK (image_has (image, size, names[i]), "%s missing", names[i]);
  CHECK (info.log == NULL || strstr (info.log, "warning") == NULL, "warnings: %s", info.log);
  free (image);
  fx_cuda_build_info_clear (&info);
}

static void
test_prelude_kernels (void)
{
  static const char *const names[] = { "cuda_per_fused__softmax_4", "cuda_per_fused_native_layer_norm_5" };
  fx_cuda_build_options opts = { .no_cache = true };

  for (size_t i = 0; i < 2; i++)
    {
      char sub[200];
      char *body, *src;
      fx_cuda_build_info info;
      void *image = NULL;
      size_t size = 0;
      fx_diag diag;

      fx_diag_clear (&diag);
      snprintf (sub, sizeof sub, "prelude/%s", names[i]);
      body = read_kernel (sub);
      CHECK (body != NULL, "cannot read %s", sub);
      src = malloc (strlen (fx_cuda_prelude_source ()) + strlen (body) + 1);
      strcpy (src, fx_cuda_prelude_source ());
      strcat (src, body);
      CHECK_OK (fx_cuda_compile (src, names[i], 9, 0, &opts, &image, &size, &info, &diag), &diag);
      CHECK (image_has (image, size, names[i]), "%s missing", names[i]);
      CHECK (info.log == NULL || strstr (info.log, "warning") == NULL, "warnings: %s", info.log);
      free (image);
      free (src);
      free (body);
      fx_cuda_build_info_clear (&info);
    }
}

static void
test_ptx_fallback (void)
{
  char *src = read_kernel ("cuda_poi_fused_mul_add_3");
  fx_cuda_build_options opts = { .cache_dir = cache_dir };
  fx_cuda_build_info info;
  void *image = NULL;
  size_t size = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK (src != NULL, "no source");
  /* 9.9 does not exist: the newest arch below it, as PTX. */
  CHECK_OK (fx_cuda_compile (src, "cuda_poi_fused_mul_add_3", 9, 9, &opts, &image, &size, &info, &diag), &diag);
  CHECK (info.is_ptx && strncmp (info.arch, "compute_", 8) == 0, "arch %s", info.arch);
  CHECK (image_has (image, size, ".version") && image_has (image, size, "cuda_poi_fused_mul_add_3"), "not PTX");
  CHECK (((char *) image)[size - 1] == '\0', "PTX not NUL-terminated");
  printf ("# cc 9.9 -> %s\n", info.arch);
  free (image);
  fx_cuda_build_info_clear (&info);
  /* Nothing this old. */
  CHECK (fx_cuda_compile (src, "k", 1, 0, &opts, &image, &size, &info, &diag) == FX_ERR_UNSUPPORTED,
         "sm_10 accepted");
  free (src);
}

int
main (int argc, char **argv)
{
  fx_diag diag;

  fx_diag_clear (&diag);
  kernels_dir = argc > 1 ? argv[1] : "kernels";
  if (fx_cuda_nvrtc_available (&diag) != FX_OK)
    {
      printf ("1..0 # SKIP %s\n", diag.message);
      return 77;
    }
  snprintf (cache_dir, sizeof cache_dir, "/tmp/fx-cuda-test-cache-%ld/nested", (long) getpid ());
  cuda_test_run ("/cuda/nvrtc/compile-samples", test_compile_samples);
  cuda_test_run ("/cuda/nvrtc/cache", test_cache);
  cuda_test_run ("/cuda/nvrtc/cache-private", test_cache_private);
  cuda_test_run ("/cuda/nvrtc/compile-error", test_compile_error);
  cuda_test_run ("/cuda/nvrtc/ptx-fallback", test_ptx_fallback);
  cuda_test_run ("/cuda/nvrtc/builtin", test_builtin);
  cuda_test_run ("/cuda/nvrtc/prelude-kernels", test_prelude_kernels);
  {
    char cmd[400];
    snprintf (cmd, sizeof cmd, "rm -rf /tmp/fx-cuda-test-cache-%ld", (long) getpid ());
    if (system (cmd) != 0)
      printf ("# could not remove the test cache\n");
  }
  return cuda_test_finish ();
}
