/* test-cuda-gpu.c: on a CUDA device: NVRTC build + launch of generated-style kernels (vector add, persistent row
   sum, Welford var_mean) against CPU references, allocator reuse and statistics, event timelines, CUDA graph capture
   and replay (and its private memory pool), cuBLAS GEMM (mm, transposed views, batched, broadcast, f64) against a CPU
   reference, cuBLASLt GEMM plans (bias epilogue, out-of-place C, every heuristic algorithm, max-autotune's table;
   --no-cublaslt: the cuBLAS fallback), transfers through pinned memory, DLPack pointer checks. Exits 77 where there
   is no device. */
#include "cuda-test.h"
#include "cuda/fx-cuda.h"

#include <math.h>
#include <stdint.h>
#include <unistd.h>

static const char *kernels_dir;
static char cache_dir[256];
static fx_cuda *cuda;

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

/* Deterministic values in [-1, 1). */
static void
fill (float *x, size_t n, uint32_t seed)
{
  uint32_t s = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++)
    {
      s = s * 1664525u + 1013904223u;
      x[i] = (float) ((s >> 8) / 8388608.0 - 1.0);
    }
}

static fx_status
build (const char *name, fx_cuda_module **module, fx_cuda_kernel **kernel, fx_cuda_build_info *info, fx_diag *diag)
{
  fx_cuda_build_options opts = { .cache_dir = cache_dir };
  char *src = read_kernel (name);
  fx_status st;

  if (!src)
    return fx_diag_set (diag, FX_ERR_IO, "cannot read kernel %s in %s", name, kernels_dir);
  st = fx_cuda_module_build (cuda, src, name, &opts, module, info, diag);
  free (src);
  if (st == FX_OK && (st = fx_cuda_module_get_kernel (*module, name, kernel, diag)) != FX_OK)
    fx_cuda_module_free (*module);
  return st;
}

/* A kernel of kernels/prelude/, after the prelude, as a code generator would emit it. */
static fx_status
build_with_prelude (const char *name, fx_cuda_module **module, fx_cuda_kernel **kernel, fx_diag *diag)
{
  fx_cuda_build_options opts = { .cache_dir = cache_dir };
  char sub[300];
  char *body, *src;
  fx_status st;

  snprintf (sub, sizeof sub, "prelude/%s", name);
  body = read_kernel (sub);
  if (!body)
    return fx_diag_set (diag, FX_ERR_IO, "cannot read kernel %s in %s", sub, kernels_dir);
  src = malloc (strlen (fx_cuda_prelude_source ()) + strlen (body) + 1);
  strcpy (src, fx_cuda_prelude_source ());
  strcat (src, body);
  st = fx_cuda_module_build (cuda, src, name, &opts, module, NULL, diag);
  free (src);
  free (body);
  if (st == FX_OK && (st = fx_cuda_module_get_kernel (*module, name, kernel, diag)) != FX_OK)
    fx_cuda_module_free (*module);
  return st;
}

static void
test_device_info (void)
{
  const fx_cuda_device_info *info = fx_cuda_get_info (cuda);
  size_t free_b = 0, total_b = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK (info->cc_major >= 5 && info->sm_count > 0 && info->warp_size == 32, "odd device info");
  CHECK (info->max_threads_per_block >= 1024 && info->total_bytes > 0, "odd limits");
  CHECK (info->max_shared_per_block_optin >= info->max_shared_per_block, "opt-in below default");
  CHECK_OK (fx_cuda_mem_info (cuda, &free_b, &total_b, &diag), &diag);
  CHECK (free_b > 0 && free_b <= total_b, "mem info %zu/%zu", free_b, total_b);
  printf ("# %s, cc %d.%d, %d SMs, %.1f GiB, L2 %d KiB, smem opt-in %d KiB, driver %d, peak %.0f GB/s (attributes)\n",
          info->name, info->cc_major, info->cc_minor, info->sm_count, info->total_bytes / 1073741824.0,
          info->l2_bytes / 1024, info->max_shared_per_block_optin / 1024, info->driver_version,
          info->peak_bandwidth_gbs);
}

static void
test_vector_add (void)
{
  const long long n = (1 << 20) + 3;   /* a tail that the vector path cannot take */
  size_t bytes = (size_t) n * sizeof (float);
  float *a = malloc (bytes), *b = malloc (bytes), *r = malloc (bytes);
  fx_cuda_ptr da = 0, db = 0, dr = 0;
  fx_cuda_module *module = NULL;
  fx_cuda_kernel *kernel = NULL;
  fx_cuda_build_info cold, warm;
  fx_cuda_kernel_attrs attrs;
  fx_diag diag;

  fx_diag_clear (&diag);
  fill (a, n, 1);
  fill (b, n, 2);
  CHECK_OK (build ("cuda_poi_fused_add_0", &module, &kernel, &cold, &diag), &diag);
  CHECK (!cold.cache_hit && cold.nvrtc_ms > 0, "first build was not cold");
  CHECK_OK (fx_cuda_kernel_get_attrs (kernel, &attrs, &diag), &diag);
  CHECK (attrs.num_regs > 0 && attrs.local_bytes == 0, "regs %d, local %d", attrs.num_regs, attrs.local_bytes);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &da, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &db, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &dr, &diag), &diag);
  CHECK ((da & 255) == 0 && (db & 255) == 0, "blocks not 256-byte aligned");
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, da, a, bytes, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, db, b, bytes, &diag), &diag);
  CHECK_OK (fx_cuda_memset (cuda, NULL, dr, 0xff, bytes, &diag), &diag);
  {
    void *args[] = { &da, &db, &dr, (void *) &n };
    unsigned int grid[3] = { (unsigned int) ((n + 1023) / 1024), 1, 1 }, block[3] = { 256, 1, 1 };
    CHECK_OK (fx_cuda_launch (kernel, NULL, grid, block, 0, args, &diag), &diag);
  }
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, r, dr, bytes, &diag), &diag);
  for (long long i = 0; i < n; i++)
    CHECK (r[i] == a[i] + b[i], "r[%lld] = %g, want %g", i, r[i], a[i] + b[i]);

  /* The same source again: from the disk cache, NVRTC not called. */
  fx_cuda_module_free (module);
  CHECK_OK (build ("cuda_poi_fused_add_0", &module, &kernel, &warm, &diag), &diag);
  CHECK (warm.cache_hit && warm.nvrtc_ms == 0, "second build was not a cache hit");
  printf ("# NVRTC build cold %.1f ms (nvrtc %.1f ms), warm %.2f ms (cache + module load)\n", cold.total_ms,
          cold.nvrtc_ms, warm.total_ms);
  fx_cuda_build_info_clear (&cold);
  fx_cuda_build_info_clear (&warm);
  fx_cuda_module_free (module);
  fx_cuda_free (cuda, da);
  fx_cuda_free (cuda, db);
  fx_cuda_free (cuda, dr);
  free (a);
  free (b);
  free (r);
}

static void
test_row_sum (void)
{
  const int rows = 4096, cols = 1000;
  size_t bytes = (size_t) rows * cols * sizeof (float);
  float *x = malloc (bytes), *r = malloc (rows * sizeof (float));
  fx_cuda_ptr dx = 0, dr = 0;
  fx_cuda_module *module = NULL;
  fx_cuda_kernel *kernel = NULL;
  fx_diag diag;

  fx_diag_clear (&diag);
  fill (x, (size_t) rows * cols, 3);
  CHECK_OK (build ("cuda_per_fused_sum_1", &module, &kernel, NULL, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &dx, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, rows * sizeof (float), NULL, &dr, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dx, x, bytes, &diag), &diag);
  {
    int xn = rows, rn = cols;
    void *args[] = { &dx, &dr, &xn, &rn };
    unsigned int grid[3] = { (unsigned int) rows, 1, 1 }, block[3] = { 256, 1, 1 };
    CHECK_OK (fx_cuda_launch (kernel, NULL, grid, block, 0, args, &diag), &diag);
  }
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, r, dr, rows * sizeof (float), &diag), &diag);
  for (int i = 0; i < rows; i++)
    {
      double ref = 0;
      for (int j = 0; j < cols; j++)
        ref += x[(size_t) i * cols + j];
      CHECK (fabs (r[i] - ref) <= 1e-4 * (1 + fabs (ref)) + 1e-4, "row %d: %g, want %g", i, r[i], ref);
    }
  fx_cuda_module_free (module);
  fx_cuda_free (cuda, dx);
  fx_cuda_free (cuda, dr);
  free (x);
  free (r);
}

static void
test_var_mean (void)
{
  const int rows = 257, cols = 3001;
  size_t bytes = (size_t) rows * cols * sizeof (float);
  float *x = malloc (bytes), *mean = malloc (rows * sizeof (float)), *var = malloc (rows * sizeof (float));
  fx_cuda_ptr dx = 0, dm = 0, dv = 0;
  fx_cuda_module *module = NULL;
  fx_cuda_kernel *kernel = NULL;
  fx_diag diag;

  fx_diag_clear (&diag);
  fill (x, (size_t) rows * cols, 4);
  for (size_t i = 0; i < (size_t) rows * cols; i++)
    x[i] = x[i] * 3 + 100;   /* a large mean: the naive sum-of-squares formula would lose the variance */
  CHECK_OK (build ("cuda_red_fused_var_mean_2", &module, &kernel, NULL, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &dx, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, rows * sizeof (float), NULL, &dm, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, rows * sizeof (float), NULL, &dv, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dx, x, bytes, &diag), &diag);
  {
    int xn = rows, rn = cols;
    void *args[] = { &dx, &dm, &dv, &xn, &rn };
    unsigned int grid[3] = { (unsigned int) rows, 1, 1 }, block[3] = { 256, 1, 1 };
    CHECK_OK (fx_cuda_launch (kernel, NULL, grid, block, 0, args, &diag), &diag);
  }
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, mean, dm, rows * sizeof (float), &diag), &diag);
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, var, dv, rows * sizeof (float), &diag), &diag);
  for (int i = 0; i < rows; i++)
    {
      double m = 0, v = 0;
      for (int j = 0; j < cols; j++)
        m += x[(size_t) i * cols + j];
      m /= cols;
      for (int j = 0; j < cols; j++)
        v += (x[(size_t) i * cols + j] - m) * (x[(size_t) i * cols + j] - m);
      v /= cols;
      CHECK (fabs (mean[i] - m) <= 1e-4 * fabs (m), "row %d mean %g, want %g", i, mean[i], m);
      CHECK (fabs (var[i] - v) <= 1e-3 * v, "row %d var %g, want %g", i, var[i], v);
    }
  fx_cuda_module_free (module);
  fx_cuda_free (cuda, dx);
  fx_cuda_free (cuda, dm);
  fx_cuda_free (cuda, dv);
  free (x);
  free (mean);
  free (var);
}

static void
test_errors (void)
{
  fx_cuda_module *module = NULL;
  fx_cuda_kernel *kernel = NULL, *missing = NULL;
  fx_cuda_build_info info;
  fx_cuda_build_options opts = { .cache_dir = cache_dir };
  fx_diag diag;
  fx_status st;

  fx_diag_clear (&diag);
  st = fx_cuda_module_build (cuda, "extern \"C\" __global__ void k (float *p) { p[0] = nope; }\n", "broken.cu",
                             &opts, &module, &info, &diag);
  CHECK (st == FX_ERR_BACKEND && module == NULL, "status %s", fx_status_name (st));
  CHECK (strstr (diag.message, "nope") && diag.line == 1, "diag: %s (line %d)", diag.message, diag.line);
  fx_cuda_build_info_clear (&info);

  CHECK_OK (build ("cuda_poi_fused_mul_add_3", &module, &kernel, NULL, &diag), &diag);
  st = fx_cuda_module_get_kernel (module, "no_such_kernel", &missing, &diag);
  CHECK (st == FX_ERR_NOT_FOUND && missing == NULL, "status %s", fx_status_name (st));
  {
    fx_cuda_ptr p = 0;
    float a = 1, b = 0;
    int n = 1;
    void *args[] = { &p, &a, &b, &n };
    unsigned int grid[3] = { 1, 1, 1 }, big[3] = { 2048, 1, 1 }, empty[3] = { 0, 1, 1 };
    CHECK (fx_cuda_launch (kernel, NULL, grid, big, 0, args, &diag) == FX_ERR_INVALID, "2048 threads accepted");
    CHECK (fx_cuda_launch (kernel, NULL, empty, grid, 0, args, &diag) == FX_ERR_INVALID, "empty grid accepted");
    CHECK (fx_cuda_kernel_set_dynamic_shared (kernel, 1 << 30, &diag) == FX_ERR_INVALID, "1 GiB smem accepted");
  }
  fx_cuda_module_free (module);
  /* Garbage is not a module. */
  CHECK (fx_cuda_module_load (cuda, "not a cubin at all", 19, &module, &diag) == FX_ERR_BACKEND, "garbage loaded");
  /* Freeing an address the allocator never gave is reported, not fatal. */
  fx_cuda_free (cuda, (fx_cuda_ptr) 0x1234500);
}

static void
test_allocator (void)
{
  fx_cuda_alloc_stats s0, s1, s2;
  fx_cuda_ptr p = 0, q = 0, ptrs[64];
  fx_cuda_stream *other = NULL;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK_OK (fx_cuda_empty_cache (cuda, &diag), &diag);
  fx_cuda_alloc_reset_peak (cuda);
  fx_cuda_alloc_get_stats (cuda, &s0);
  CHECK (s0.cached_bytes == 0, "cache not empty: %zu", s0.cached_bytes);

  CHECK_OK (fx_cuda_malloc (cuda, 1000000, NULL, &p, &diag), &diag);
  CHECK (fx_cuda_alloc_block_size (cuda, p) == fx_cuda_alloc_round (1000000), "block size");
  fx_cuda_free (cuda, p);
  CHECK (fx_cuda_alloc_block_size (cuda, p) == 0, "freed block still live");
  CHECK_OK (fx_cuda_malloc (cuda, 999999, NULL, &q, &diag), &diag);
  CHECK (q == p, "the same size class was not reused (%llx vs %llx)", (unsigned long long) q,
         (unsigned long long) p);
  fx_cuda_free (cuda, q);

  /* A run's worth of buffers, three times: only the first run reaches the driver. */
  for (int run = 0; run < 3; run++)
    {
      if (run == 1)
        fx_cuda_alloc_get_stats (cuda, &s1);
      for (int i = 0; i < 64; i++)
        CHECK_OK (fx_cuda_malloc (cuda, (size_t) (i % 8 + 1) * 300000 + (size_t) i * 8, NULL, &ptrs[i], &diag),
                  &diag);
      for (int i = 0; i < 64; i++)
        fx_cuda_free (cuda, ptrs[i]);
    }
  fx_cuda_alloc_get_stats (cuda, &s2);
  CHECK (s2.n_device_allocs == s1.n_device_allocs, "later runs called cuMemAlloc %llu times",
         (unsigned long long) (s2.n_device_allocs - s1.n_device_allocs));
  CHECK (s2.n_cache_hits >= s1.n_cache_hits + 128, "hits %llu -> %llu", (unsigned long long) s1.n_cache_hits,
         (unsigned long long) s2.n_cache_hits);
  CHECK (s2.allocated_bytes == s0.allocated_bytes && s2.requested_bytes == s0.requested_bytes, "leak in stats");
  CHECK (s2.peak_allocated_bytes >= 64 * 300000, "peak %zu", s2.peak_allocated_bytes);
  CHECK (s2.reserved_bytes == s2.allocated_bytes + s2.cached_bytes, "reserved != allocated + cached");
  printf ("# allocator: %llu allocs, %llu cache hits, %llu cuMemAlloc; peak allocated %.1f MiB, cached %.1f MiB\n",
          (unsigned long long) s2.n_allocs, (unsigned long long) s2.n_cache_hits,
          (unsigned long long) s2.n_device_allocs, s2.peak_allocated_bytes / 1048576.0,
          s2.cached_bytes / 1048576.0);

  /* A block cached for one stream is not handed to another (no cross-stream hazard without an event). */
  CHECK_OK (fx_cuda_stream_new (cuda, &other, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, 4096, NULL, &p, &diag), &diag);
  fx_cuda_free (cuda, p);
  CHECK_OK (fx_cuda_malloc (cuda, 4096, other, &q, &diag), &diag);
  CHECK (q != p, "a default-stream block went to another stream");
  fx_cuda_free (cuda, q);
  fx_cuda_stream_free (other);

  CHECK_OK (fx_cuda_empty_cache (cuda, &diag), &diag);
  fx_cuda_alloc_get_stats (cuda, &s2);
  CHECK (s2.cached_bytes == 0 && s2.reserved_bytes == s2.allocated_bytes, "empty_cache left %zu cached",
         s2.cached_bytes);

  /* Out of memory is an error, not a crash. */
  CHECK (fx_cuda_malloc (cuda, (size_t) 1 << 46, NULL, &p, &diag) == FX_ERR_NOMEM, "64 TiB allocated");
  CHECK (strstr (diag.message, "cuMemAlloc") != NULL, "message: %s", diag.message);
}

static void
test_timeline (void)
{
  const long long n = 16 << 20;
  size_t bytes = (size_t) n * sizeof (float);
  fx_cuda_ptr da = 0, db = 0, dr = 0;
  fx_cuda_module *module = NULL;
  fx_cuda_kernel *kernel = NULL;
  fx_cuda_timeline *tl = NULL;
  fx_cuda_event *e0 = NULL, *e1 = NULL;
  float ms = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK_OK (build ("cuda_poi_fused_add_0", &module, &kernel, NULL, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &da, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &db, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &dr, &diag), &diag);
  CHECK_OK (fx_cuda_memset (cuda, NULL, da, 0, bytes, &diag), &diag);
  CHECK_OK (fx_cuda_memset (cuda, NULL, db, 0, bytes, &diag), &diag);
  CHECK_OK (fx_cuda_timeline_new (cuda, &tl, &diag), &diag);
  CHECK (fx_cuda_timeline_end (tl, NULL, &diag) == FX_ERR_INVALID, "end without begin");
  for (int round = 0; round < 2; round++)
    {
      fx_cuda_timeline_reset (tl);
      for (int i = 0; i < 3; i++)
        {
          void *args[] = { &da, &db, &dr, (void *) &n };
          unsigned int grid[3] = { (unsigned int) ((n + 1023) / 1024), 1, 1 }, block[3] = { 256, 1, 1 };
          char name[64];
          snprintf (name, sizeof name, "cuda_poi_fused_add_0#%d", i);
          CHECK_OK (fx_cuda_timeline_begin (tl, NULL, name, &diag), &diag);
          CHECK_OK (fx_cuda_launch (kernel, NULL, grid, block, 0, args, &diag), &diag);
          CHECK_OK (fx_cuda_timeline_end (tl, NULL, &diag), &diag);
        }
      CHECK_OK (fx_cuda_timeline_collect (tl, &diag), &diag);
    }
  CHECK (fx_cuda_timeline_count (tl) == 3, "count %zu", fx_cuda_timeline_count (tl));
  for (size_t i = 0; i < 3; i++)
    {
      CHECK (fx_cuda_timeline_ms (tl, i) > 0 && fx_cuda_timeline_ms (tl, i) < 1000, "span %zu: %g ms", i,
             fx_cuda_timeline_ms (tl, i));
      printf ("# %s: %.4f ms (%.0f GB/s)\n", fx_cuda_timeline_name (tl, i), fx_cuda_timeline_ms (tl, i),
              3.0 * bytes / (fx_cuda_timeline_ms (tl, i) * 1e-3) / 1e9);
    }
  CHECK (strcmp (fx_cuda_timeline_name (tl, 2), "cuda_poi_fused_add_0#2") == 0, "name");
  fx_cuda_timeline_free (tl);

  CHECK_OK (fx_cuda_event_new (cuda, &e0, &diag), &diag);
  CHECK_OK (fx_cuda_event_new (cuda, &e1, &diag), &diag);
  CHECK_OK (fx_cuda_event_record (e0, NULL, &diag), &diag);
  CHECK_OK (fx_cuda_event_record (e1, NULL, &diag), &diag);
  CHECK_OK (fx_cuda_event_synchronize (e1, &diag), &diag);
  CHECK_OK (fx_cuda_event_elapsed_ms (e0, e1, &ms, &diag), &diag);
  CHECK (ms >= 0 && ms < 100, "empty span %g ms", ms);
  fx_cuda_event_free (e0);
  fx_cuda_event_free (e1);
  fx_cuda_module_free (module);
  fx_cuda_free (cuda, da);
  fx_cuda_free (cuda, db);
  fx_cuda_free (cuda, dr);
}

static void
test_graph (void)
{
  const int n = 4096, steps = 20, replays = 10;
  float *h = NULL, *expect = malloc (n * sizeof (float));
  fx_cuda_ptr dx = 0, tmp = 0, tmp2 = 0, outside = 0;
  fx_cuda_module *module = NULL;
  fx_cuda_kernel *kernel = NULL;
  fx_cuda_stream *stream = NULL;
  fx_cuda_graph *graph = NULL;
  fx_diag diag;
  fx_status st;

  fx_diag_clear (&diag);
  CHECK_OK (build ("cuda_poi_fused_mul_add_3", &module, &kernel, NULL, &diag), &diag);
  CHECK_OK (fx_cuda_stream_new (cuda, &stream, &diag), &diag);
  CHECK_OK (fx_cuda_host_alloc (cuda, n * sizeof (float), (void **) &h, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, n * sizeof (float), stream, &dx, &diag), &diag);
  fill (h, n, 5);
  for (int i = 0; i < n; i++)
    expect[i] = h[i];
  CHECK_OK (fx_cuda_copy_h2d (cuda, stream, dx, h, n * sizeof (float), &diag), &diag);
  CHECK_OK (fx_cuda_stream_synchronize (stream, &diag), &diag);

  CHECK_OK (fx_cuda_graph_capture_begin (stream, &diag), &diag);
  CHECK (fx_cuda_graph_capture_begin (stream, &diag) == FX_ERR_INVALID, "nested capture accepted");
  /* An allocation during capture comes from the graph's pool. */
  st = fx_cuda_malloc (cuda, 12345, stream, &tmp, &diag);
  for (int s = 0; s < steps && st == FX_OK; s++)
    {
      float a = 1.0f + s / 64.0f, b = (float) s / 8.0f - 1.0f;
      int xn = n;
      void *args[] = { &dx, &a, &b, &xn };
      unsigned int grid[3] = { (unsigned int) ((n + 255) / 256), 1, 1 }, block[3] = { 256, 1, 1 };
      st = fx_cuda_launch (kernel, stream, grid, block, 0, args, &diag);
    }
  {
    fx_status end = fx_cuda_graph_capture_end (stream, &graph, &diag);
    CHECK (st == FX_OK, "launch during capture: %s", diag.message);
    CHECK_OK (end, &diag);
  }
  CHECK (fx_cuda_graph_node_count (graph) == (size_t) steps, "graph has %zu nodes", fx_cuda_graph_node_count (graph));
  /* The graph's block, freed, is not handed to work outside the graph. */
  fx_cuda_free (cuda, tmp);
  CHECK_OK (fx_cuda_malloc (cuda, 12345, stream, &outside, &diag), &diag);
  CHECK (outside != tmp, "a graph pool block leaked to ordinary allocations");
  fx_cuda_free (cuda, outside);

  /* Capturing records work, it does not run it. */
  CHECK_OK (fx_cuda_copy_d2h (cuda, stream, h, dx, n * sizeof (float), &diag), &diag);
  CHECK_OK (fx_cuda_stream_synchronize (stream, &diag), &diag);
  for (int i = 0; i < n; i++)
    CHECK (h[i] == expect[i], "capture ran the kernels (x[%d] = %g, was %g)", i, h[i], expect[i]);

  for (int r = 0; r < replays; r++)
    CHECK_OK (fx_cuda_graph_replay (graph, stream, &diag), &diag);
  CHECK_OK (fx_cuda_copy_d2h (cuda, stream, h, dx, n * sizeof (float), &diag), &diag);
  CHECK_OK (fx_cuda_stream_synchronize (stream, &diag), &diag);
  for (int r = 0; r < replays; r++)
    for (int s = 0; s < steps; s++)
      {
        float a = 1.0f + s / 64.0f, b = (float) s / 8.0f - 1.0f;
        for (int i = 0; i < n; i++)
          expect[i] = __builtin_fmaf (expect[i], a, b);
      }
  for (int i = 0; i < n; i++)
    CHECK (fabsf (h[i] - expect[i]) <= 1e-5f * (1 + fabsf (expect[i])), "x[%d] = %.9g, want %.9g", i, h[i],
           expect[i]);

  /* After the graph goes, its pool's blocks are ordinary cached blocks again. */
  fx_cuda_graph_free (graph);
  CHECK_OK (fx_cuda_malloc (cuda, 12345, NULL, &tmp2, &diag), &diag);
  CHECK (tmp2 == tmp, "the freed graph's block was not returned to the general cache");
  fx_cuda_free (cuda, tmp2);
  CHECK (fx_cuda_graph_capture_end (stream, &graph, &diag) == FX_ERR_INVALID, "end without capture");
  fx_cuda_free (cuda, dx);
  fx_cuda_host_free (cuda, h);
  fx_cuda_stream_free (stream);
  fx_cuda_module_free (module);
  free (expect);
}

/* c = a @ b in double on the CPU; matrices given by logical element accessors. */
static double
at (const float *base, const fx_cuda_matrix *m, int64_t batch, int64_t i, int64_t j)
{
  return base[batch * m->batch_stride + i * m->row_stride + j * m->col_stride];
}

static void
check_gemm (const char *what, int64_t batch, fx_cuda_matrix a, fx_cuda_matrix b, fx_cuda_matrix c, size_t a_elems,
            size_t b_elems, size_t c_elems, double alpha, double beta)
{
  float *ha = malloc (a_elems * 4), *hb = malloc (b_elems * 4), *hc = malloc (c_elems * 4), *hc0 = malloc (c_elems * 4);
  fx_cuda_ptr da = 0, db = 0, dc = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  fill (ha, a_elems, 11);
  fill (hb, b_elems, 12);
  fill (hc0, c_elems, 13);
  CHECK_OK (fx_cuda_malloc (cuda, a_elems * 4, NULL, &da, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, b_elems * 4, NULL, &db, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, c_elems * 4, NULL, &dc, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, da, ha, a_elems * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, db, hb, b_elems * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dc, hc0, c_elems * 4, &diag), &diag);
  a.data = da, b.data = db, c.data = dc;
  CHECK_OK (fx_cuda_gemm (cuda, NULL, FX_DTYPE_F32, batch, alpha, &a, &b, beta, &c, &diag), &diag);
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, hc, dc, c_elems * 4, &diag), &diag);
  for (int64_t t = 0; t < batch; t++)
    for (int64_t i = 0; i < c.rows; i++)
      for (int64_t j = 0; j < c.cols; j++)
        {
          double ref = beta * at (hc0, &c, t, i, j), got = at (hc, &c, t, i, j), mag = fabs (ref);
          for (int64_t k = 0; k < a.cols; k++)
            {
              ref += alpha * at (ha, &a, t, i, k) * at (hb, &b, t, k, j);
              mag += fabs (alpha * at (ha, &a, t, i, k) * at (hb, &b, t, k, j));
            }
          CHECK (fabs (got - ref) <= 5e-5 * mag + 1e-6, "%s: c[%lld][%lld][%lld] = %.8g, want %.8g", what,
                 (long long) t, (long long) i, (long long) j, got, ref);
        }
  fx_cuda_free (cuda, da);
  fx_cuda_free (cuda, db);
  fx_cuda_free (cuda, dc);
  free (ha);
  free (hb);
  free (hc);
  free (hc0);
}

static void
test_gemm (void)
{
  const int64_t M = 257, K = 129, N = 65, B = 3;
  fx_cuda_blas *blas = NULL;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK_OK (fx_cuda_get_blas (cuda, &blas, &diag), &diag);
  /* mm: row-major everything, beta 0 (c's old contents must not matter... but finite) */
  check_gemm ("mm", 1, fx_cuda_matrix_rowmajor (0, M, K), fx_cuda_matrix_rowmajor (0, K, N),
              fx_cuda_matrix_rowmajor (0, M, N), M * K, K * N, M * N, 1.0, 0.0);
  /* addmm with weight.t(): b is the transposed view of an N x K contiguous weight; beta 1 adds c */
  {
    fx_cuda_matrix bt = { 0, K, N, 1, K, 0 };
    check_gemm ("addmm(weight.t())", 1, fx_cuda_matrix_rowmajor (0, M, K), bt, fx_cuda_matrix_rowmajor (0, M, N),
                M * K, N * K, M * N, 1.0, 1.0);
  }
  /* a transposed too, alpha 0.5, and a column-major output */
  {
    fx_cuda_matrix at_ = { 0, M, K, 1, M, 0 }, ct = { 0, M, N, 1, M, 0 };
    check_gemm ("a.t() @ b -> column-major c", 1, at_, fx_cuda_matrix_rowmajor (0, K, N), ct, M * K, K * N, M * N,
                0.5, 0.0);
  }
  /* bmm, and a weight broadcast over the batch (batch stride 0) */
  {
    fx_cuda_matrix a = fx_cuda_matrix_rowmajor (0, M, K), b = fx_cuda_matrix_rowmajor (0, K, N);
    fx_cuda_matrix c = fx_cuda_matrix_rowmajor (0, M, N);
    check_gemm ("bmm", B, a, b, c, B * M * K, B * K * N, B * M * N, 1.0, 0.0);
    b.batch_stride = 0;
    check_gemm ("bmm, broadcast b", B, a, b, c, B * M * K, K * N, B * M * N, 1.0, 0.0);
    /* padded rows (a slice of a wider matrix) */
    a.row_stride = K + 7;
    a.batch_stride = M * (K + 7);
    check_gemm ("bmm, padded a", B, a, b, c, B * M * (K + 7), K * N, B * M * N, 1.0, 0.0);
  }
  /* errors: shapes, strides, dtype */
  {
    fx_cuda_matrix a = fx_cuda_matrix_rowmajor (4096, 4, 5), b = fx_cuda_matrix_rowmajor (4096, 6, 3);
    fx_cuda_matrix c = fx_cuda_matrix_rowmajor (4096, 4, 3), odd = { 4096, 5, 3, 6, 2, 0 };
    CHECK (fx_cuda_gemm (cuda, NULL, FX_DTYPE_F32, 1, 1, &a, &b, 0, &c, &diag) == FX_ERR_INVALID, "shapes");
    CHECK (fx_cuda_gemm (cuda, NULL, FX_DTYPE_F32, 1, 1, &a, &odd, 0, &c, &diag) == FX_ERR_UNSUPPORTED, "strides");
    CHECK (strstr (diag.message, "contiguous copy") != NULL, "message: %s", diag.message);
    b.rows = 5;
    CHECK (fx_cuda_gemm (cuda, NULL, FX_DTYPE_I64, 1, 1, &a, &b, 0, &c, &diag) == FX_ERR_UNSUPPORTED, "i64");
    c.batch_stride = 0;
    CHECK (fx_cuda_gemm (cuda, NULL, FX_DTYPE_F32, 2, 1, &a, &b, 0, &c, &diag) == FX_ERR_INVALID,
           "output broadcast over a batch");
  }
  /* f64 */
  {
    const int64_t m = 33, k = 17, n = 9;
    double *ha = malloc (m * k * 8), *hb = malloc (k * n * 8), *hc = malloc (m * n * 8);
    fx_cuda_ptr da = 0, db = 0, dc = 0;
    fx_cuda_matrix a = fx_cuda_matrix_rowmajor (0, m, k), b = fx_cuda_matrix_rowmajor (0, k, n);
    fx_cuda_matrix c = fx_cuda_matrix_rowmajor (0, m, n);
    for (int64_t i = 0; i < m * k; i++)
      ha[i] = sin ((double) i);
    for (int64_t i = 0; i < k * n; i++)
      hb[i] = cos ((double) i);
    CHECK_OK (fx_cuda_malloc (cuda, m * k * 8, NULL, &da, &diag), &diag);
    CHECK_OK (fx_cuda_malloc (cuda, k * n * 8, NULL, &db, &diag), &diag);
    CHECK_OK (fx_cuda_malloc (cuda, m * n * 8, NULL, &dc, &diag), &diag);
    CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, da, ha, m * k * 8, &diag), &diag);
    CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, db, hb, k * n * 8, &diag), &diag);
    a.data = da, b.data = db, c.data = dc;
    CHECK_OK (fx_cuda_gemm (cuda, NULL, FX_DTYPE_F64, 1, 1.0, &a, &b, 0.0, &c, &diag), &diag);
    CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, hc, dc, m * n * 8, &diag), &diag);
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++)
        {
          double ref = 0;
          for (int64_t t = 0; t < k; t++)
            ref += ha[i * k + t] * hb[t * n + j];
          CHECK (fabs (hc[i * n + j] - ref) <= 1e-12 * (1 + fabs (ref)), "f64 c[%lld][%lld] = %.17g, want %.17g",
                 (long long) i, (long long) j, hc[i * n + j], ref);
        }
    fx_cuda_free (cuda, da);
    fx_cuda_free (cuda, db);
    fx_cuda_free (cuda, dc);
    free (ha);
    free (hb);
    free (hc);
  }
}

/* One plan against the CPU: d = alpha * a @ b (+ beta * c) (+ bias), every algorithm the heuristic offered. c_is_d:
   c is d's own memory (in place). Checks that c, when separate, is left as it was. */
static void
check_plan (const char *what, fx_cuda_gemm_desc desc, size_t a_elems, size_t b_elems, size_t d_elems, bool c_is_d,
            bool want_lt)
{
  int64_t M = desc.a.rows, K = desc.a.cols, N = desc.b.cols;
  float *ha = malloc (a_elems * 4), *hb = malloc (b_elems * 4), *hc = malloc (d_elems * 4), *hd = malloc (d_elems * 4);
  float *hbias = malloc (N * 4), *hd0 = malloc (d_elems * 4);
  fx_cuda_ptr da = 0, db = 0, dc = 0, dd = 0, dbias = 0;
  fx_cuda_gemm_plan *plan = NULL;
  const char *why = "";
  fx_diag diag;

  fx_diag_clear (&diag);
  fill (ha, a_elems, 21);
  fill (hb, b_elems, 22);
  fill (hc, d_elems, 23);
  fill (hbias, N, 24);
  fill (hd0, d_elems, 25);
  CHECK_OK (fx_cuda_gemm_plan_new (cuda, &desc, 8, &plan, &diag), &diag);
  bool lt = fx_cuda_gemm_plan_uses_lt (plan, &why);
  printf ("# %s: %s, %d algorithms%s%s\n", what, lt ? "cuBLASLt" : "cuBLAS", fx_cuda_gemm_plan_n_algos (plan),
          lt ? "" : ": ", why);
  CHECK (lt == want_lt, "%s: cuBLASLt %d, expected %d (%s)", what, lt, want_lt, why);
  CHECK (lt ? fx_cuda_gemm_plan_n_algos (plan) >= 1 : fx_cuda_gemm_plan_n_algos (plan) == 0, "%s: %d algorithms",
         what, fx_cuda_gemm_plan_n_algos (plan));
  CHECK_OK (fx_cuda_malloc (cuda, a_elems * 4, NULL, &da, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, b_elems * 4, NULL, &db, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, d_elems * 4, NULL, &dc, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, d_elems * 4, NULL, &dd, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, N * 4, NULL, &dbias, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, da, ha, a_elems * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, db, hb, b_elems * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dbias, hbias, N * 4, &diag), &diag);
  for (int algo = -1; algo < fx_cuda_gemm_plan_n_algos (plan); algo++)
    {
      char name[96], text[192];
      fx_cuda_gemm_plan_algo_name (plan, algo, name, sizeof name);
      fx_cuda_gemm_plan_algo_describe (plan, algo, text, sizeof text);
      CHECK (algo < 0 || (strncmp (name, "cublaslt_", 9) == 0 && strncmp (text, "algo=", 5) == 0), "%s: %s %s", what,
             name, text);
      CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dc, hc, d_elems * 4, &diag), &diag);
      CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dd, hd0, d_elems * 4, &diag), &diag);
      CHECK_OK (fx_cuda_gemm_plan_run (plan, NULL, algo, da, db, desc.has_c ? (c_is_d ? dd : dc) : 0,
                                       desc.has_bias ? dbias : 0, dd, &diag), &diag);
      CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, hd, dd, d_elems * 4, &diag), &diag);
      for (int64_t t = 0; t < desc.batch; t++)
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++)
            {
              const float *cbase = c_is_d ? hd0 : hc;
              double ref = 0, mag = 0;
              if (desc.has_c)
                ref += desc.beta * at (cbase, &desc.c, t, i, j), mag += fabs (desc.beta * at (cbase, &desc.c, t, i, j));
              if (desc.has_bias)
                ref += hbias[j], mag += fabs (hbias[j]);
              for (int64_t k = 0; k < K; k++)
                {
                  double pr = desc.alpha * at (ha, &desc.a, t, i, k) * at (hb, &desc.b, t, k, j);
                  ref += pr;
                  mag += fabs (pr);
                }
              double got = at (hd, &desc.d, t, i, j);
              CHECK (fabs (got - ref) <= 5e-5 * mag + 1e-6, "%s (%s): d[%lld][%lld][%lld] = %.8g, want %.8g", what,
                     name, (long long) t, (long long) i, (long long) j, got, ref);
            }
      if (desc.has_c && !c_is_d)
        {
          float *back = malloc (d_elems * 4);
          CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, back, dc, d_elems * 4, &diag), &diag);
          CHECK (memcmp (back, hc, d_elems * 4) == 0, "%s: c was written", what);
          free (back);
        }
    }
  /* a pointer below the planned alignment is refused (cuBLASLt would fault or pick a wrong kernel) */
  if (lt)
    CHECK (fx_cuda_gemm_plan_run (plan, NULL, -1, da + 4, db, desc.has_c ? dc : 0, desc.has_bias ? dbias : 0, dd,
                                  &diag) == FX_ERR_INVALID, "%s: misaligned a accepted", what);
  fx_cuda_gemm_plan_free (plan);
  fx_cuda_free (cuda, da);
  fx_cuda_free (cuda, db);
  fx_cuda_free (cuda, dc);
  fx_cuda_free (cuda, dd);
  fx_cuda_free (cuda, dbias);
  free (ha);
  free (hb);
  free (hc);
  free (hd);
  free (hd0);
  free (hbias);
}

static bool have_lt;

/* GEMM plans: cuBLASLt with the BIAS epilogue and an out-of-place C where it is loaded (else the cuBLAS path with
   the broadcast kernel), transposed views, batches, in-place C, f64, errors. */
static void
test_gemm_plans (void)
{
  const int64_t M = 257, K = 129, N = 65, B = 3;
  fx_cuda_matrix a = fx_cuda_matrix_rowmajor (0, M, K), wt = { 0, K, N, 1, K, 0 };
  fx_cuda_matrix d = fx_cuda_matrix_rowmajor (0, M, N);
  fx_cuda_gemm_desc g;
  fx_cuda_gemm_plan *plan = NULL;
  fx_diag diag;

  fx_diag_clear (&diag);
  /* addmm(bias, x, weight.t()): the BIAS epilogue */
  memset (&g, 0, sizeof g);
  g.dtype = FX_DTYPE_F32, g.batch = 1, g.alpha = 1, g.a = a, g.b = wt, g.d = d, g.has_bias = true;
  check_plan ("addmm, 1-D bias", g, M * K, K * N, M * N, false, have_lt);
  /* x + addmm(...): bias and an out-of-place C (cuBLASLt only) */
  g.has_c = true, g.c = d, g.beta = 1;
  if (have_lt)
    check_plan ("addmm + residual", g, M * K, K * N, M * N, false, true);
  else
    {
      CHECK (fx_cuda_gemm_plan_new (cuda, &g, 1, &plan, &diag) == FX_ERR_UNSUPPORTED && plan == NULL,
             "bias and C without cuBLASLt");
      printf ("# %s\n", diag.message);
    }
  /* mm + C out of place, alpha 0.5, beta 2 */
  g.has_bias = false, g.alpha = 0.5, g.beta = 2;
  check_plan ("mm + 2 * c", g, M * K, K * N, M * N, false, have_lt);
  /* C in place (addmm after its bias was broadcast, beta 1), and a transposed a with a column-major d */
  check_plan ("mm, c in place", g, M * K, K * N, M * N, true, have_lt);
  {
    fx_cuda_gemm_desc t;
    fx_cuda_matrix at_ = { 0, M, K, 1, M, 0 }, dt = { 0, M, N, 1, M, 0 };
    memset (&t, 0, sizeof t);
    t.dtype = FX_DTYPE_F32, t.batch = 1, t.alpha = 1, t.a = at_, t.b = fx_cuda_matrix_rowmajor (0, K, N), t.d = dt;
    check_plan ("a.t() @ b -> column-major d", t, M * K, K * N, M * N, false, have_lt);
    /* a column-major d cannot take the epilogue's bias: the cuBLAS path broadcasts it */
    t.has_bias = true;
    check_plan ("column-major d with a bias", t, M * K, K * N, M * N, false, false);
  }
  /* bmm */
  {
    fx_cuda_gemm_desc t;
    memset (&t, 0, sizeof t);
    t.dtype = FX_DTYPE_F32, t.batch = B, t.alpha = 1, t.a = a, t.b = fx_cuda_matrix_rowmajor (0, K, N), t.d = d;
    t.a.batch_stride = M * K, t.b.batch_stride = K * N, t.d.batch_stride = M * N;
    check_plan ("bmm", t, B * M * K, B * K * N, B * M * N, false, have_lt);
  }
  /* errors */
  {
    fx_cuda_gemm_desc e = g;
    e.b.rows = K + 1;
    CHECK (fx_cuda_gemm_plan_new (cuda, &e, 1, &plan, &diag) == FX_ERR_INVALID && plan == NULL, "shapes");
    e = g;
    e.dtype = FX_DTYPE_I64;
    CHECK (fx_cuda_gemm_plan_new (cuda, &e, 1, &plan, &diag) == FX_ERR_UNSUPPORTED, "i64");
    e = g;
    e.alignment = 12;
    CHECK (fx_cuda_gemm_plan_new (cuda, &e, 1, &plan, &diag) == FX_ERR_INVALID, "alignment 12");
    e = g;
    CHECK_OK (fx_cuda_gemm_plan_new (cuda, &e, 1, &plan, &diag), &diag);
    CHECK (fx_cuda_gemm_plan_run (plan, NULL, -1, 0, 0, 0, 0, 0, &diag) == FX_ERR_INVALID, "null operands");
    fx_cuda_gemm_plan_free (plan);
  }
}

/* A program with an addmm + residual GEMM step: max-autotune's AUTOTUNE table for it, then eager and replayed runs
   with the chosen algorithm, against the CPU. */
static void
test_program_gemm_autotune (void)
{
  const int64_t M = 512, K = 256, N = 128;
  float *x = malloc (M * K * 4), *w = malloc (N * K * 4), *bias = malloc (N * 4), *r = malloc (M * N * 4);
  float *y = malloc (M * N * 4);
  fx_cuda_program *prog = NULL;
  fx_cuda_program_gemm gm;
  fx_cuda_ptr in[4], out = 0;
  fx_buf table;
  bool owned;
  int tuned = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  fx_buf_init (&table);
  fill (x, M * K, 61);
  fill (w, N * K, 62);
  fill (bias, N, 63);
  fill (r, M * N, 64);
  CHECK_OK (fx_cuda_program_new (cuda, &prog, &diag), &diag);
  fx_cuda_program_add_input (prog, M * K * 4);
  fx_cuda_program_add_input (prog, N * K * 4);
  fx_cuda_program_add_input (prog, N * 4);
  fx_cuda_program_add_input (prog, M * N * 4);
  fx_cuda_program_add_output (prog, M * N * 4);
  memset (&gm, 0, sizeof gm);
  gm.label = "extern_kernels.addmm";
  gm.op = "addmm";
  gm.dtype = FX_DTYPE_F32;
  gm.batch = 1;
  gm.alpha = 1;
  gm.beta = 1;
  gm.a = (fx_cuda_buffer_matrix) { 0, 0, M, K, K, 1, 0 };
  gm.b = (fx_cuda_buffer_matrix) { 1, 0, K, N, 1, K, 0 };
  gm.d = (fx_cuda_buffer_matrix) { 4, 0, M, N, N, 1, 0 };
  gm.has_c = true;
  gm.c = (fx_cuda_buffer_matrix) { 3, 0, M, N, N, 1, 0 };
  gm.has_bias = have_lt;    /* bias + C needs cuBLASLt */
  gm.bias_buffer = 2;
  gm.max_algos = 8;
  CHECK_OK (fx_cuda_program_add_gemm_ex (prog, &gm, &diag), &diag);
  CHECK (fx_cuda_program_gemm_plan (prog, 0) != NULL && fx_cuda_program_gemm_plan (prog, 1) == NULL, "plan lookup");
  CHECK_OK (fx_cuda_program_autotune_gemms (prog, NULL, NULL, &table, &tuned, &diag), &diag);
  printf ("# %d tuned\n%s", tuned, table.data ? table.data : "");
  if (have_lt && fx_cuda_gemm_plan_n_algos (fx_cuda_program_gemm_plan (prog, 0)) > 1)
    {
      CHECK (tuned == 1, "tuned %d", tuned);
      CHECK (table.data && strstr (table.data, "AUTOTUNE addmm(512x128, 512x256, 256x128, 512x128)\n"
                                              "strides: [0, 1], [256, 1], [1, 256], [128, 1]\n"
                                              "dtypes: torch.float32, torch.float32, torch.float32, torch.float32\n"),
             "table head: %s", table.data ? table.data : "");
      CHECK (strstr (table.data, "  cublaslt_") && strstr (table.data, " ms 100.0% algo=")
             && strstr (table.data, "SingleProcess AUTOTUNE benchmarking takes"), "table rows");
    }
  for (int i = 0; i < 4; i++)
    CHECK_OK (fx_cuda_malloc (cuda, (i == 0 ? M * K : i == 1 ? N * K : i == 2 ? N : M * N) * 4, NULL, &in[i], &diag),
              &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, in[0], x, M * K * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, in[1], w, N * K * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, in[2], bias, N * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, in[3], r, M * N * 4, &diag), &diag);
  fx_cuda_program_use_graphs (prog, true);
  for (int run = 0; run < 4; run++)
    {
      CHECK_OK (fx_cuda_program_run (prog, NULL, in, 4, &out, 1, &owned, NULL, &diag), &diag);
      CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, y, out, M * N * 4, &diag), &diag);
      if (owned)
        fx_cuda_free (cuda, out);
      CHECK (run < 1 || !owned, "run %d not replayed: %s", run,
             fx_cuda_program_skip_message (prog) ? fx_cuda_program_skip_message (prog) : "");
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++)
          {
            double ref = r[i * N + j] + (gm.has_bias ? bias[j] : 0), mag = fabs (ref);
            for (int64_t k = 0; k < K; k++)
              ref += (double) x[i * K + k] * w[j * K + k], mag += fabs ((double) x[i * K + k] * w[j * K + k]);
            CHECK (fabs (y[i * N + j] - ref) <= 5e-5 * mag + 1e-6, "run %d: y[%lld][%lld] = %.8g, want %.8g", run,
                   (long long) i, (long long) j, y[i * N + j], ref);
          }
    }
  fx_cuda_program_free (prog);
  for (int i = 0; i < 4; i++)
    fx_cuda_free (cuda, in[i]);
  fx_buf_free (&table);
  free (x);
  free (w);
  free (bias);
  free (r);
  free (y);
}

static void
test_dlpack (void)
{
  fx_cuda_ptr p = 0;
  int host = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK_OK (fx_cuda_malloc (cuda, 1024, NULL, &p, &diag), &diag);
  CHECK_OK (fx_cuda_check_device_ptr (cuda, p, &diag), &diag);
  CHECK_OK (fx_cuda_check_device_ptr (cuda, p + 512, &diag), &diag);
  CHECK (fx_cuda_check_device_ptr (cuda, (fx_cuda_ptr) (uintptr_t) &host, &diag) == FX_ERR_INVALID,
         "a host pointer passed as device memory");
  printf ("# host pointer: %s\n", diag.message);
  CHECK (fx_cuda_check_device_ptr (cuda, 0, &diag) == FX_ERR_INVALID, "null accepted");
  CHECK_OK (fx_cuda_check_dlpack_device (cuda, FX_CUDA_DLPACK_DEVICE_TYPE, 0, &diag), &diag);
  CHECK (fx_cuda_check_dlpack_device (cuda, 1, 0, &diag) == FX_ERR_INVALID, "kDLCPU accepted");
  CHECK (fx_cuda_check_dlpack_device (cuda, 2, 7, &diag) == FX_ERR_INVALID, "cuda:7 accepted");
  fx_cuda_free (cuda, p);
}

static void
test_tensors (void)
{
  const int64_t sizes[2] = { 5, 7 }, tsizes[2] = { 7, 5 }, tstrides[2] = { 1, 7 };
  const int64_t ssizes[2] = { 3, 7 }, sstrides[2] = { 14, 1 };
  fx_tensor *cpu = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sizes), *view, *slice, *gpu = NULL, *back = NULL;
  fx_tensor *gpu2 = NULL, *imported = NULL;
  fx_dl_managed_tensor *managed;
  fx_cuda_alloc_stats before, after;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK (cpu != NULL, "no CPU tensor");
  fx_cuda_alloc_get_stats (cuda, &before);
  for (int64_t i = 0; i < 35; i++)
    fx_tensor_set_f64 (cpu, i, (double) i * 0.5 - 3);
  /* A transposed view is dense: it travels with its strides. */
  view = fx_tensor_as_strided (cpu, 2, tsizes, tstrides, 0);
  CHECK_OK (fx_cuda_tensor_to_device (cuda, NULL, view, &gpu, &diag), &diag);
  CHECK (gpu->device.type == FX_DEVICE_CUDA && gpu->strides[0] == 1 && gpu->strides[1] == 7, "strides %lld %lld",
         (long long) gpu->strides[0], (long long) gpu->strides[1]);
  CHECK_OK (fx_cuda_tensor_check (cuda, gpu, &diag), &diag);
  CHECK (fx_cuda_tensor_check (cuda, cpu, &diag) == FX_ERR_INVALID, "a CPU tensor passed the device check");
  CHECK_OK (fx_cuda_tensor_to_host (cuda, NULL, gpu, &back, &diag), &diag);
  for (int64_t i = 0; i < 35; i++)
    CHECK (fx_tensor_get_f64 (back, i) == fx_tensor_get_f64 (view, i), "element %lld", (long long) i);
  fx_tensor_unref (back);
  back = NULL;
  /* A strided slice (every other row) is not: a contiguous copy goes over. */
  slice = fx_tensor_as_strided (cpu, 2, ssizes, sstrides, 0);
  CHECK_OK (fx_cuda_tensor_to_device (cuda, fx_cuda_default_stream (cuda), slice, &gpu2, &diag), &diag);
  CHECK (fx_tensor_is_contiguous (gpu2), "slice not made contiguous");
  CHECK_OK (fx_cuda_tensor_to_host (cuda, NULL, gpu2, &back, &diag), &diag);
  for (int64_t i = 0; i < 21; i++)
    CHECK (fx_tensor_get_f64 (back, i) == fx_tensor_get_f64 (slice, i), "slice element %lld", (long long) i);

  /* DLPack out and back in: the same device memory, no copy; the block returns to the cache at the last unref. */
  managed = fx_tensor_to_dlpack (gpu);
  CHECK (managed && managed->dl_tensor.device.device_type == FX_CUDA_DLPACK_DEVICE_TYPE, "export");
  CHECK_OK (fx_cuda_tensor_from_dlpack (cuda, managed, &imported, &diag), &diag);
  CHECK (fx_cuda_tensor_ptr (imported) == fx_cuda_tensor_ptr (gpu), "import copied");
  {
    fx_tensor *cpu_t = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sizes), *none = NULL;
    fx_dl_managed_tensor *host = fx_tensor_to_dlpack (cpu_t);
    CHECK (fx_cuda_tensor_from_dlpack (cuda, host, &none, &diag) == FX_ERR_INVALID && none == NULL,
           "a kDLCPU tensor imported as CUDA");
    host->deleter (host);
    fx_tensor_unref (cpu_t);
  }
  fx_tensor_unref (imported);
  fx_tensor_unref (gpu);
  fx_tensor_unref (gpu2);
  fx_tensor_unref (back);
  fx_tensor_unref (view);
  fx_tensor_unref (slice);
  fx_tensor_unref (cpu);
  fx_cuda_alloc_get_stats (cuda, &after);
  CHECK (after.allocated_bytes == before.allocated_bytes, "device tensors leaked %zu bytes",
         after.allocated_bytes - before.allocated_bytes);
}

static void
test_addmm_half (void)
{
  const int64_t M = 130, K = 70, N = 33;
  float *a = malloc (M * K * 4), *b = malloc (K * N * 4), *bias = malloc (N * 4), *c = malloc (M * N * 4);
  uint16_t *ha = malloc (M * K * 2), *hb = malloc (K * N * 2), *hc = malloc (M * N * 2);
  fx_cuda_ptr da, db, dbias, dc, dha, dhb, dhc;
  fx_cuda_matrix ma = fx_cuda_matrix_rowmajor (0, M, K), mb = fx_cuda_matrix_rowmajor (0, K, N);
  fx_cuda_matrix mc = fx_cuda_matrix_rowmajor (0, M, N), mbias = fx_cuda_matrix_rowmajor (0, 1, N);
  fx_diag diag;

  fx_diag_clear (&diag);
  fill (a, M * K, 21);
  fill (b, K * N, 22);
  fill (bias, N, 23);
  CHECK_OK (fx_cuda_malloc (cuda, M * K * 4, NULL, &da, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, K * N * 4, NULL, &db, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, N * 4, NULL, &dbias, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, M * N * 4, NULL, &dc, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, da, a, M * K * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, db, b, K * N * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dbias, bias, N * 4, &diag), &diag);
  CHECK_OK (fx_cuda_memset (cuda, NULL, dc, 0xff, M * N * 4, &diag), &diag);   /* NaN: must be overwritten */
  ma.data = da, mb.data = db, mc.data = dc, mbias.data = dbias;
  CHECK_OK (fx_cuda_addmm (cuda, NULL, FX_DTYPE_F32, &mbias, 0.5, &ma, &mb, 2.0, &mc, &diag), &diag);
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, c, dc, M * N * 4, &diag), &diag);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      {
        double ref = 0.5 * bias[j], mag = fabs (ref);
        for (int64_t k = 0; k < K; k++)
          ref += 2.0 * a[i * K + k] * b[k * N + j], mag += fabs (2.0 * a[i * K + k] * b[k * N + j]);
        CHECK (fabs (c[i * N + j] - ref) <= 5e-5 * mag + 1e-6, "addmm c[%lld][%lld] = %g, want %g", (long long) i,
               (long long) j, c[i * N + j], ref);
      }

  /* f16 GEMM (f32 accumulation) and a bf16 broadcast */
  for (int64_t i = 0; i < M * K; i++)
    ha[i] = fx_f32_to_f16 (a[i]);
  for (int64_t i = 0; i < K * N; i++)
    hb[i] = fx_f32_to_f16 (b[i]);
  CHECK_OK (fx_cuda_malloc (cuda, M * K * 2, NULL, &dha, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, K * N * 2, NULL, &dhb, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, M * N * 2, NULL, &dhc, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dha, ha, M * K * 2, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dhb, hb, K * N * 2, &diag), &diag);
  ma.data = dha, mb.data = dhb, mc.data = dhc;
  CHECK_OK (fx_cuda_gemm (cuda, NULL, FX_DTYPE_F16, 1, 1.0, &ma, &mb, 0.0, &mc, &diag), &diag);
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, hc, dhc, M * N * 2, &diag), &diag);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      {
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < K; k++)
          {
            double p = (double) fx_f16_to_f32 (ha[i * K + k]) * fx_f16_to_f32 (hb[k * N + j]);
            ref += p, mag += fabs (p);
          }
        CHECK (fabs (fx_f16_to_f32 (hc[i * N + j]) - ref) <= 2e-3 * mag + 1e-3, "f16 c[%lld][%lld] = %g, want %g",
               (long long) i, (long long) j, fx_f16_to_f32 (hc[i * N + j]), ref);
      }
  {
    /* bias row of bf16, broadcast down every row of a column-major output, scaled by 1: exact */
    uint16_t hbias[33], out[130 * 33];
    fx_cuda_matrix src = fx_cuda_matrix_rowmajor (dha, 1, N), dst = { dhc, M, N, 1, M, 0 };
    for (int64_t j = 0; j < N; j++)
      hbias[j] = fx_f32_to_bf16 (bias[j]);
    CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dha, hbias, N * 2, &diag), &diag);
    CHECK_OK (fx_cuda_broadcast_scale (cuda, NULL, FX_DTYPE_BF16, &src, 1.0, &dst, &diag), &diag);
    CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, out, dhc, M * N * 2, &diag), &diag);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        CHECK (out[j * M + i] == hbias[j], "bf16 broadcast [%lld][%lld]", (long long) i, (long long) j);
    src.rows = 2;
    CHECK (fx_cuda_broadcast_scale (cuda, NULL, FX_DTYPE_BF16, &src, 1.0, &dst, &diag) == FX_ERR_INVALID,
           "[2, N] broadcast to [M, N]");
    CHECK (fx_cuda_broadcast_scale (cuda, NULL, FX_DTYPE_I32, &src, 1.0, &dst, &diag) == FX_ERR_UNSUPPORTED, "i32");
  }
  fx_cuda_free (cuda, da);
  fx_cuda_free (cuda, db);
  fx_cuda_free (cuda, dbias);
  fx_cuda_free (cuda, dc);
  fx_cuda_free (cuda, dha);
  fx_cuda_free (cuda, dhb);
  fx_cuda_free (cuda, dhc);
  free (a);
  free (b);
  free (bias);
  free (c);
  free (ha);
  free (hb);
  free (hc);
}

/* The program of a small graph: y = chain of 5 x*a+b steps over a copy of x; z = 2 * (x.view(M, K) @ w), through a
   temporary. */
enum { P_M = 48, P_K = 32, P_N = 24, P_LEN = P_M * P_K, P_STEPS = 5 };

static fx_status
build_program (fx_cuda_program **out, fx_diag *diag)
{
  char *src = read_kernel ("cuda_poi_fused_mul_add_3");
  fx_cuda_build_options opts = { .cache_dir = cache_dir };
  fx_cuda_program *p;
  int x, w, y, z, t;
  fx_status st;

  if ((st = fx_cuda_program_new (cuda, &p, diag)) != FX_OK)
    {
      free (src);
      return st;
    }
  st = fx_cuda_program_add_source (p, src, "cuda_poi_fused_mul_add_3", &opts, NULL, diag);
  free (src);
  x = fx_cuda_program_add_input (p, P_LEN * 4);
  w = fx_cuda_program_add_input (p, P_K * P_N * 4);
  y = fx_cuda_program_add_output (p, P_LEN * 4);
  z = fx_cuda_program_add_output (p, P_M * P_N * 4);
  t = fx_cuda_program_add_temp (p, P_M * P_N * 4);
  if (st == FX_OK)
    {
      fx_cuda_buffer_matrix xs = { x, 0, 1, P_LEN, P_LEN, 1, 0 }, ys = { y, 0, 1, P_LEN, P_LEN, 1, 0 };
      st = fx_cuda_program_add_broadcast (p, "copy", FX_DTYPE_F32, &xs, 1.0, &ys, diag);
    }
  for (int i = 0; i < P_STEPS && st == FX_OK; i++)
    {
      fx_cuda_arg args[4] = { { .kind = FX_CUDA_ARG_BUFFER, .buffer = y }, { .kind = FX_CUDA_ARG_F32 },
                              { .kind = FX_CUDA_ARG_F32 }, { .kind = FX_CUDA_ARG_I32 } };
      unsigned int grid[3] = { (P_LEN + 255) / 256, 1, 1 }, block[3] = { 256, 1, 1 };
      args[1].v.f32 = 1.0f + i / 8.0f;
      args[2].v.f32 = 0.25f * i;
      args[3].v.i32 = P_LEN;
      st = fx_cuda_program_add_launch (p, "cuda_poi_fused_mul_add_3", NULL, grid, block, 0, args, 4, diag);
    }
  if (st == FX_OK)
    {
      fx_cuda_buffer_matrix a = { x, 0, P_M, P_K, P_K, 1, 0 }, b = { w, 0, P_K, P_N, P_N, 1, 0 };
      fx_cuda_buffer_matrix c = { t, 0, P_M, P_N, P_N, 1, 0 }, zz = { z, 0, P_M, P_N, P_N, 1, 0 };
      st = fx_cuda_program_add_gemm (p, "extern_kernels.mm", FX_DTYPE_F32, 1, 1.0, &a, &b, 0.0, &c, diag);
      if (st == FX_OK)
        st = fx_cuda_program_add_broadcast (p, "scale", FX_DTYPE_F32, &c, 2.0, &zz, diag);
    }
  if (st != FX_OK)
    {
      fx_cuda_program_free (p);
      return st;
    }
  *out = p;
  return FX_OK;
}

static bool
program_results_ok (const float *x, const float *w, const float *y, const float *z)
{
  for (int i = 0; i < P_LEN; i++)
    {
      float v = x[i];
      for (int s = 0; s < P_STEPS; s++)
        v = __builtin_fmaf (v, 1.0f + s / 8.0f, 0.25f * s);
      if (fabsf (y[i] - v) > 1e-5f * (1 + fabsf (v)))
        {
          printf ("# y[%d] = %g, want %g\n", i, y[i], v);
          return false;
        }
    }
  for (int i = 0; i < P_M; i++)
    for (int j = 0; j < P_N; j++)
      {
        double ref = 0, mag = 0;
        for (int k = 0; k < P_K; k++)
          ref += (double) x[i * P_K + k] * w[k * P_N + j], mag += fabs ((double) x[i * P_K + k] * w[k * P_N + j]);
        if (fabs (z[i * P_N + j] - 2 * ref) > 1e-4 * mag + 1e-6)
          {
            printf ("# z[%d][%d] = %g, want %g\n", i, j, z[i * P_N + j], 2 * ref);
            return false;
          }
      }
  return true;
}

static void
test_program (void)
{
  float *x = malloc (P_LEN * 4), *w = malloc (P_K * P_N * 4), *y = malloc (P_LEN * 4), *z = malloc (P_M * P_N * 4);
  fx_cuda_ptr in[2], in2[2], outs[2];
  fx_cuda_program *eager = NULL, *graphs = NULL;
  fx_cuda_timeline *tl = NULL;
  fx_cuda_alloc_stats s1, s2;
  bool owned = false;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK_OK (build_program (&eager, &diag), &diag);
  CHECK (fx_cuda_program_n_steps (eager) == P_STEPS + 3, "%zu steps", fx_cuda_program_n_steps (eager));
  CHECK_OK (fx_cuda_malloc (cuda, P_LEN * 4, NULL, &in[0], &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, P_K * P_N * 4, NULL, &in[1], &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, P_LEN * 4, NULL, &in2[0], &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, P_K * P_N * 4, NULL, &in2[1], &diag), &diag);
  fill (x, P_LEN, 31);
  fill (w, P_K * P_N, 32);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, in[0], x, P_LEN * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, in[1], w, P_K * P_N * 4, &diag), &diag);

  /* Eager, with per-step timing; a second run reaches the driver no more. */
  CHECK_OK (fx_cuda_timeline_new (cuda, &tl, &diag), &diag);
  for (int run = 0; run < 2; run++)
    {
      if (run == 1)
        fx_cuda_alloc_get_stats (cuda, &s1);
      fx_cuda_timeline_reset (tl);
      CHECK_OK (fx_cuda_program_run (eager, NULL, in, 2, outs, 2, &owned, tl, &diag), &diag);
      CHECK (owned, "eager outputs not the caller's");
      CHECK_OK (fx_cuda_timeline_collect (tl, &diag), &diag);
      CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, y, outs[0], P_LEN * 4, &diag), &diag);
      CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, z, outs[1], P_M * P_N * 4, &diag), &diag);
      CHECK (program_results_ok (x, w, y, z), "eager results");
      fx_cuda_free (cuda, outs[0]);
      fx_cuda_free (cuda, outs[1]);
    }
  fx_cuda_alloc_get_stats (cuda, &s2);
  CHECK (s2.n_device_allocs == s1.n_device_allocs, "the second eager run called cuMemAlloc");
  CHECK (fx_cuda_timeline_count (tl) == P_STEPS + 3, "%zu spans", fx_cuda_timeline_count (tl));
  CHECK (strcmp (fx_cuda_timeline_name (tl, P_STEPS + 1), "extern_kernels.mm") == 0, "span name %s",
         fx_cuda_timeline_name (tl, P_STEPS + 1));
  CHECK (fx_cuda_program_get_state (eager) == FX_CUDA_PROGRAM_NONE, "eager program changed state");

  /* reduce-overhead: warm-up, record + replay, replay with new inputs, replay from the static inputs. */
  CHECK_OK (build_program (&graphs, &diag), &diag);
  fx_cuda_program_use_graphs (graphs, true);
  CHECK_OK (fx_cuda_program_run (graphs, NULL, in, 2, outs, 2, &owned, NULL, &diag), &diag);
  CHECK (owned && fx_cuda_program_get_state (graphs) == FX_CUDA_PROGRAM_WARMUP, "warm-up");
  fx_cuda_free (cuda, outs[0]);
  fx_cuda_free (cuda, outs[1]);
  CHECK_OK (fx_cuda_program_run (graphs, NULL, in, 2, outs, 2, &owned, NULL, &diag), &diag);
  CHECK (!owned && fx_cuda_program_get_state (graphs) == FX_CUDA_PROGRAM_EXECUTION, "record: %s",
         fx_cuda_program_skip_message (graphs) ? fx_cuda_program_skip_message (graphs) : "no skip");
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, y, outs[0], P_LEN * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, z, outs[1], P_M * P_N * 4, &diag), &diag);
  CHECK (program_results_ok (x, w, y, z), "recorded run results");
  /* the same input addresses with new contents: the graph reads them in place (no static input, no copy) */
  {
    fx_cuda_ptr first_out = outs[0];
    fill (x, P_LEN, 37);
    CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, in[0], x, P_LEN * 4, &diag), &diag);
    CHECK_OK (fx_cuda_program_run (graphs, NULL, in, 2, outs, 2, &owned, NULL, &diag), &diag);
    CHECK (!owned && outs[0] == first_out, "a replay at the same addresses used other outputs");
    CHECK (fx_cuda_program_static_input (graphs, 0) == 0, "inputs at the recorded addresses were copied");
    CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, y, outs[0], P_LEN * 4, &diag), &diag);
    CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, z, outs[1], P_M * P_N * 4, &diag), &diag);
    CHECK (program_results_ok (x, w, y, z), "replay over the caller's inputs, new contents");
  }
  fill (x, P_LEN, 41);
  fill (w, P_K * P_N, 42);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, in2[0], x, P_LEN * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, in2[1], w, P_K * P_N * 4, &diag), &diag);
  fx_cuda_timeline_reset (tl);
  CHECK_OK (fx_cuda_program_run (graphs, NULL, in2, 2, outs, 2, &owned, tl, &diag), &diag);
  CHECK_OK (fx_cuda_timeline_collect (tl, &diag), &diag);
  CHECK (fx_cuda_timeline_count (tl) == 1 && strcmp (fx_cuda_timeline_name (tl, 0), "cudagraph replay") == 0,
         "replay span");
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, y, outs[0], P_LEN * 4, &diag), &diag);
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, z, outs[1], P_M * P_N * 4, &diag), &diag);
  CHECK (program_results_ok (x, w, y, z), "replay with new inputs");
  {
    fx_cuda_ptr st_in[2] = { fx_cuda_program_static_input (graphs, 0), fx_cuda_program_static_input (graphs, 1) };
    CHECK (st_in[0] && st_in[1] && st_in[0] != in2[0], "static inputs");
    fill (x, P_LEN, 51);
    CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, st_in[0], x, P_LEN * 4, &diag), &diag);
    CHECK_OK (fx_cuda_program_run (graphs, NULL, st_in, 2, outs, 2, &owned, NULL, &diag), &diag);
    CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, y, outs[0], P_LEN * 4, &diag), &diag);
    CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, z, outs[1], P_M * P_N * 4, &diag), &diag);
    CHECK (program_results_ok (x, w, y, z), "replay from the static inputs");
  }
  CHECK (fx_cuda_program_skip_message (graphs) == NULL, "skip message");
  /* A backend that finds a reason not to use graphs says it as PyTorch does; runs go eager. */
  fx_cuda_program_skip_graphs (graphs, "mutated inputs (1 instances)");
  CHECK (strcmp (fx_cuda_program_skip_message (graphs), "skipping cudagraphs due to mutated inputs (1 instances)") == 0,
         "%s", fx_cuda_program_skip_message (graphs));
  CHECK_OK (fx_cuda_program_run (graphs, NULL, in2, 2, outs, 2, &owned, NULL, &diag), &diag);
  CHECK (owned, "skipped program did not run eagerly");
  fx_cuda_free (cuda, outs[0]);
  fx_cuda_free (cuda, outs[1]);

  /* Errors */
  CHECK (fx_cuda_program_run (eager, NULL, in, 1, outs, 2, &owned, NULL, &diag) == FX_ERR_INVALID, "input count");
  {
    fx_cuda_arg bad = { .kind = FX_CUDA_ARG_BUFFER, .buffer = 99 };
    unsigned int one[3] = { 1, 1, 1 };
    fx_cuda_buffer_matrix big = { 0, 0, P_M, P_K + 1, P_K + 1, 1, 0 }, ok = { 1, 0, P_K, P_N, P_N, 1, 0 };
    CHECK (fx_cuda_program_add_launch (eager, "nope", NULL, one, one, 0, NULL, 0, &diag) == FX_ERR_NOT_FOUND,
           "unknown kernel");
    CHECK (fx_cuda_program_add_launch (eager, "cuda_poi_fused_mul_add_3", NULL, one, one, 0, &bad, 1, &diag)
           == FX_ERR_INVALID, "buffer 99");
    CHECK (fx_cuda_program_add_gemm (eager, NULL, FX_DTYPE_F32, 1, 1, &big, &ok, 0, &ok, &diag) == FX_ERR_INVALID,
           "matrix past its buffer");
    printf ("# %s\n", diag.message);
  }
  fx_cuda_timeline_free (tl);
  fx_cuda_program_free (eager);
  fx_cuda_program_free (graphs);
  for (int i = 0; i < 2; i++)
    {
      fx_cuda_free (cuda, in[i]);
      fx_cuda_free (cuda, in2[i]);
    }
  free (x);
  free (w);
  free (y);
  free (z);
}

static void
test_softmax_layernorm (void)
{
  const int rows = 600, cols = 4096, lrows = 300, lcols = 3000;
  size_t bytes = (size_t) rows * cols * 4;
  float *x = malloc (bytes), *y = malloc (bytes);
  fx_cuda_ptr dx = 0, dy = 0;
  fx_cuda_module *m1 = NULL, *m2 = NULL;
  fx_cuda_kernel *softmax = NULL, *layernorm = NULL;
  fx_diag diag;

  fx_diag_clear (&diag);
  fill (x, (size_t) rows * cols, 61);
  for (size_t i = 0; i < (size_t) rows * cols; i++)
    x[i] *= 8;
  CHECK_OK (build_with_prelude ("cuda_per_fused__softmax_4", &m1, &softmax, &diag), &diag);
  CHECK_OK (build_with_prelude ("cuda_per_fused_native_layer_norm_5", &m2, &layernorm, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &dx, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, bytes, NULL, &dy, &diag), &diag);
  CHECK_OK (fx_cuda_copy_h2d (cuda, NULL, dx, x, bytes, &diag), &diag);
  {
    int xn = rows;
    void *args[] = { &dx, &dy, &xn };
    unsigned int grid[3] = { (unsigned int) rows, 1, 1 }, block[3] = { 512, 1, 1 };
    CHECK_OK (fx_cuda_launch (softmax, NULL, grid, block, 0, args, &diag), &diag);
  }
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, y, dy, bytes, &diag), &diag);
  for (int i = 0; i < rows; i++)
    {
      double m = -INFINITY, sum = 0;
      for (int j = 0; j < cols; j++)
        m = fmax (m, x[(size_t) i * cols + j]);
      for (int j = 0; j < cols; j++)
        sum += exp ((double) x[(size_t) i * cols + j] - m);
      for (int j = 0; j < cols; j++)
        {
          double ref = exp ((double) x[(size_t) i * cols + j] - m) / sum;
          CHECK (fabs (y[(size_t) i * cols + j] - ref) <= 1e-5 * ref + 1e-9, "softmax[%d][%d] = %g, want %g", i, j,
                 y[(size_t) i * cols + j], ref);
        }
    }
  {
    int xn = lrows, rn = lcols;
    float eps = 1e-5f;
    void *args[] = { &dx, &dy, &xn, &rn, &eps };
    unsigned int grid[3] = { (unsigned int) lrows, 1, 1 }, block[3] = { 256, 1, 1 };
    CHECK_OK (fx_cuda_launch (layernorm, NULL, grid, block, 0, args, &diag), &diag);
  }
  CHECK_OK (fx_cuda_copy_d2h (cuda, NULL, y, dy, (size_t) lrows * lcols * 4, &diag), &diag);
  for (int i = 0; i < lrows; i++)
    {
      double mean = 0, var = 0;
      for (int j = 0; j < lcols; j++)
        mean += x[(size_t) i * lcols + j];
      mean /= lcols;
      for (int j = 0; j < lcols; j++)
        var += (x[(size_t) i * lcols + j] - mean) * (x[(size_t) i * lcols + j] - mean);
      var /= lcols;
      for (int j = 0; j < lcols; j++)
        {
          double n = (x[(size_t) i * lcols + j] - mean) / sqrt (var + 1e-5);
          double ref = 0.5 * n * (1 + erf (n / sqrt (2.0)));
          CHECK (fabs (y[(size_t) i * lcols + j] - ref) <= 1e-4 * (1 + fabs (ref)), "layernorm+gelu[%d][%d] = %g, want %g",
                 i, j, y[(size_t) i * lcols + j], ref);
        }
    }
  fx_cuda_module_free (m1);
  fx_cuda_module_free (m2);
  fx_cuda_free (cuda, dx);
  fx_cuda_free (cuda, dy);
  free (x);
  free (y);
}

typedef struct rowsum_cfg
{
  fx_cuda_kernel *kernel;
  fx_cuda_ptr x, r;
  int rows, cols;
  unsigned int threads;
} rowsum_cfg;

static fx_status
run_rowsum (void *ctx, fx_cuda_stream *stream, fx_diag *diag)
{
  rowsum_cfg *c = ctx;
  void *args[] = { &c->x, &c->r, &c->rows, &c->cols };
  unsigned int grid[3] = { (unsigned int) c->rows, 1, 1 }, block[3] = { c->threads, 1, 1 };
  return fx_cuda_launch (c->kernel, stream, grid, block, 0, args, diag);
}

static void
test_autotune (void)
{
  static const unsigned int threads[] = { 128, 256, 512, 1024, 2048 };
  rowsum_cfg cfg[5];
  char names[5][64], descs[5][64];
  fx_cuda_autotune_choice choices[5];
  fx_cuda_autotune_result res;
  fx_cuda_module *module = NULL;
  fx_cuda_kernel *kernel = NULL;
  fx_cuda_ptr x = 0, r = 0;
  float ms = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  CHECK_OK (build ("cuda_per_fused_sum_1", &module, &kernel, NULL, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, (size_t) 8192 * 4096 * 4, NULL, &x, &diag), &diag);
  CHECK_OK (fx_cuda_malloc (cuda, 8192 * 4, NULL, &r, &diag), &diag);
  CHECK_OK (fx_cuda_memset (cuda, NULL, x, 0, (size_t) 8192 * 4096 * 4, &diag), &diag);
  for (int i = 0; i < 5; i++)
    {
      cfg[i] = (rowsum_cfg) { kernel, x, r, 8192, 4096, threads[i] };
      snprintf (names[i], sizeof names[i], "cuda_per_fused_sum_1_%u", threads[i]);
      snprintf (descs[i], sizeof descs[i], "XBLOCK=1, R0_BLOCK=%u, num_warps=%u", threads[i], threads[i] / 32);
      choices[i] = (fx_cuda_autotune_choice) { names[i], descs[i], run_rowsum, &cfg[i] };
    }
  CHECK_OK (fx_cuda_bench (cuda, NULL, run_rowsum, &cfg[1], NULL, &ms, &diag), &diag);
  CHECK (ms > 0 && ms < 100, "bench %g ms", ms);
  /* The 2048-thread choice cannot launch on any GPU: it is timed as inf and never chosen. */
  CHECK_OK (fx_cuda_autotune (cuda, NULL, "sum(8192x4096)", "[4096, 1]", "torch.float32", choices, 5, NULL, 0.0125,
                              &res, &diag), &diag);
  printf ("%s", res.table);
  CHECK (res.n == 5 && res.best < 4 && isinf (res.ms[4]), "best %zu, ms[4] %g", res.best, res.ms[4]);
  for (int i = 0; i < 4; i++)
    CHECK (res.ms[res.best] <= res.ms[i], "best is not the fastest");
  CHECK (strncmp (res.table, "AUTOTUNE sum(8192x4096)\nstrides: [4096, 1]\ndtypes: torch.float32\n  ", 67) == 0,
         "table head");
  {
    char want[128];
    snprintf (want, sizeof want, "\n  %s %.4f ms 100.0%% %s\n", names[res.best], res.ms[res.best], descs[res.best]);
    CHECK (strstr (res.table, want) != NULL, "no line '%s'", want);
  }
  CHECK (strstr (res.table, "  cuda_per_fused_sum_1_2048 inf ms 0.0% ") != NULL, "failed choice line");
  CHECK (strstr (res.table, " seconds and 0.0125 seconds precompiling for 5 choices\n") != NULL, "tail");
  CHECK (strncmp (strstr (res.table, "SingleProcess AUTOTUNE benchmarking takes "), "SingleProcess", 13) == 0, "tail");
  fx_cuda_autotune_result_clear (&res);
  /* Nothing that runs is an error. */
  CHECK (fx_cuda_autotune (cuda, NULL, "sum", "", "", choices + 4, 1, NULL, 0, &res, &diag) == FX_ERR_BACKEND,
         "all failing accepted");
  fx_cuda_free (cuda, x);
  fx_cuda_free (cuda, r);
  fx_cuda_module_free (module);
}

int
main (int argc, char **argv)
{
  fx_cuda_runtime_info info;
  fx_diag diag;
  int rc;

  fx_diag_clear (&diag);
  kernels_dir = argc > 1 ? argv[1] : "kernels";
  /* --no-cublaslt: every GEMM through cuBLAS and the broadcast kernel (the path of hosts without cuBLASLt) */
  if (argc > 2 && strcmp (argv[2], "--no-cublaslt") == 0)
    setenv ("FX_CUBLASLT_LIBRARY", "none", 1);
  if (fx_cuda_probe (&info, &diag) != FX_OK)
    {
      printf ("1..0 # SKIP %s\n", diag.message);
      return 77;
    }
  if (!info.have_nvrtc)
    {
      printf ("1..0 # SKIP %s\n", info.nvrtc_error);
      return 77;
    }
  printf ("# driver %d (%s), NVRTC %d.%d (%s), cuBLAS %s\n", info.driver_version, info.driver_path, info.nvrtc_major,
          info.nvrtc_minor, info.nvrtc_path, info.have_cublas ? info.cublas_path : info.cublas_error);
  if (fx_cuda_open (0, &cuda, &diag) != FX_OK)
    {
      printf ("Bail out! fx_cuda_open: %s\n", diag.message);
      return 1;
    }
  snprintf (cache_dir, sizeof cache_dir, "/tmp/fx-cuda-gpu-test-cache-%ld", (long) getpid ());
  cuda_test_run ("/cuda/gpu/device-info", test_device_info);
  cuda_test_run ("/cuda/gpu/vector-add", test_vector_add);
  cuda_test_run ("/cuda/gpu/row-sum", test_row_sum);
  cuda_test_run ("/cuda/gpu/var-mean", test_var_mean);
  cuda_test_run ("/cuda/gpu/softmax-layernorm", test_softmax_layernorm);
  cuda_test_run ("/cuda/gpu/errors", test_errors);
  cuda_test_run ("/cuda/gpu/allocator", test_allocator);
  cuda_test_run ("/cuda/gpu/timeline", test_timeline);
  cuda_test_run ("/cuda/gpu/autotune", test_autotune);
  cuda_test_run ("/cuda/gpu/graph", test_graph);
  have_lt = info.have_cublaslt;
  printf ("# cuBLASLt: %s\n", info.have_cublaslt ? info.cublaslt_path : info.cublaslt_error);
  if (info.have_cublas)
    {
      cuda_test_run ("/cuda/gpu/gemm", test_gemm);
      cuda_test_run ("/cuda/gpu/gemm-plans", test_gemm_plans);
      cuda_test_run ("/cuda/gpu/program-gemm-autotune", test_program_gemm_autotune);
    }
  else
    printf ("# SKIP /cuda/gpu/gemm: %s\n", info.cublas_error);
  cuda_test_run ("/cuda/gpu/dlpack", test_dlpack);
  cuda_test_run ("/cuda/gpu/tensors", test_tensors);
  if (info.have_cublas)
    {
      cuda_test_run ("/cuda/gpu/addmm-half", test_addmm_half);
      cuda_test_run ("/cuda/gpu/program", test_program);
    }
  rc = cuda_test_finish ();
  fx_cuda_close (cuda);
  {
    char cmd[400];
    snprintf (cmd, sizeof cmd, "rm -rf /tmp/fx-cuda-gpu-test-cache-%ld", (long) getpid ());
    if (system (cmd) != 0)
      printf ("# could not remove the test cache\n");
  }
  return rc;
}
