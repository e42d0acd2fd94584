/* bench-cuda.c: figures of the CUDA runtime on the present GPU (a benchmark, not a test): NVRTC build cold and warm,
   allocator cost, memory-bound kernel bandwidth, launch-bound chains with and without CUDA graphs, cuBLAS GEMM at the
   fixture graphs' shapes. Exits 77 where there is no device. */
#include "cuda-test.h"
#include "cuda/fx-cuda.h"

#include <time.h>
#include <unistd.h>

static const char *kernels_dir;
static fx_cuda *cuda;
static char cache_dir[256];

static fx_diag bench_diag;
#define D (&bench_diag)

#define TRY(call)                                                                                  \
  do                                                                                               \
    {                                                                                              \
      if ((call) != FX_OK)                                                                         \
        {                                                                                          \
          printf ("FAILED %s:%d: %s: %s\n", __FILE__, __LINE__, #call, bench_diag.message);         \
          exit (1);                                                                                \
        }                                                                                          \
    }                                                                                              \
  while (0)


static int
cmp_float (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return x < y ? -1 : x > y;
}

static char *
read_kernel (const char *name)
{
  char path[1024];
  char *data = NULL;
  size_t len = 0;
  snprintf (path, sizeof path, "%s/%s.cu", kernels_dir, name);
  if (fx_file_read (path, &data, &len, NULL) != FX_OK)
    {
      printf ("cannot read %s\n", path);
      exit (1);
    }
  return data;
}

static fx_cuda_kernel *
load (const char *name, fx_cuda_module **module)
{
  fx_cuda_build_options opts = { .cache_dir = cache_dir };
  fx_cuda_kernel *k = NULL;
  char *src = read_kernel (name);
  if (fx_cuda_module_build (cuda, src, name, &opts, module, NULL, D) != FX_OK
      || fx_cuda_module_get_kernel (*module, name, &k, D) != FX_OK)
    {
      printf ("build %s: %s\n", name, bench_diag.message);
      exit (1);
    }
  free (src);
  return k;
}

/* Median milliseconds of `reps` timed calls of fn (after 3 warm-up calls), with events on the default stream. */
typedef void (*bench_fn) (void *ctx);

static float
time_median (bench_fn fn, void *ctx, int reps)
{
  fx_cuda_event *e0, *e1;
  float *ms = calloc (reps, sizeof *ms), med;
  TRY (fx_cuda_event_new (cuda, &e0, D));
  TRY (fx_cuda_event_new (cuda, &e1, D));
  for (int i = 0; i < 3; i++)
    fn (ctx);
  for (int i = 0; i < reps; i++)
    {
      TRY (fx_cuda_event_record (e0, NULL, D));
      fn (ctx);
      TRY (fx_cuda_event_record (e1, NULL, D));
      TRY (fx_cuda_event_synchronize (e1, D));
      TRY (fx_cuda_event_elapsed_ms (e0, e1, &ms[i], D));
    }
  qsort (ms, reps, sizeof *ms, cmp_float);
  med = ms[reps / 2];
  free (ms);
  fx_cuda_event_free (e0);
  fx_cuda_event_free (e1);
  return med;
}

static void
bench_nvrtc (void)
{
  static const char *const names[] = {
    "cuda_poi_fused_add_0", "cuda_per_fused_sum_1", "cuda_red_fused_var_mean_2", "cuda_poi_fused_mul_add_3",
  };
  for (size_t i = 0; i < 4; i++)
    {
      fx_cuda_build_options opts = { .cache_dir = cache_dir };
      fx_cuda_build_info cold, warm;
      fx_cuda_module *m1, *m2;
      char *src = read_kernel (names[i]);
      TRY (fx_cuda_module_build (cuda, src, names[i], &opts, &m1, &cold, D));
      TRY (fx_cuda_module_build (cuda, src, names[i], &opts, &m2, &warm, D));
      printf ("nvrtc %-28s cold %7.1f ms (nvrtc %6.1f)  warm %6.3f ms  hit=%d  %zu bytes %s\n", names[i],
              cold.total_ms, cold.nvrtc_ms, warm.total_ms, warm.cache_hit, cold.image_bytes, cold.arch);
      fx_cuda_build_info_clear (&cold);
      fx_cuda_build_info_clear (&warm);
      fx_cuda_module_free (m1);
      fx_cuda_module_free (m2);
      free (src);
    }
}

static void
bench_allocator (void)
{
  fx_cuda_alloc_stats s;
  fx_cuda_ptr p;
  double t0, t1;
  const int n = 100000;

  TRY (fx_cuda_malloc (cuda, 1 << 20, NULL, &p, D));
  fx_cuda_free (cuda, p);
  t0 = fx_now_ms ();
  for (int i = 0; i < n; i++)
    {
      TRY (fx_cuda_malloc (cuda, 1 << 20, NULL, &p, D));
      fx_cuda_free (cuda, p);
    }
  t1 = fx_now_ms ();
  fx_cuda_alloc_get_stats (cuda, &s);
  printf ("allocator: cached malloc+free %.3f us; %llu allocs, %llu hits, %llu cuMemAlloc\n", (t1 - t0) * 1e3 / n,
          (unsigned long long) s.n_allocs, (unsigned long long) s.n_cache_hits,
          (unsigned long long) s.n_device_allocs);
}

typedef struct vec_ctx
{
  fx_cuda_kernel *k;
  fx_cuda_ptr a, b, r;
  long long n;
} vec_ctx;

static void
run_vec (void *p)
{
  vec_ctx *c = p;
  void *args[] = { &c->a, &c->b, &c->r, &c->n };
  unsigned int grid[3] = { (unsigned int) ((c->n + 1023) / 1024), 1, 1 }, block[3] = { 256, 1, 1 };
  TRY (fx_cuda_launch (c->k, NULL, grid, block, 0, args, D));
}

static void
run_copy (void *p)
{
  vec_ctx *c = p;
  TRY (fx_cuda_copy_d2d (cuda, fx_cuda_default_stream (cuda), c->r, c->a, (size_t) c->n * 4, D));
}

typedef struct row_ctx
{
  fx_cuda_kernel *k;
  fx_cuda_ptr x, r;
  int rows, cols;
} row_ctx;

static void
run_rows (void *p)
{
  row_ctx *c = p;
  void *args[] = { &c->x, &c->r, &c->rows, &c->cols };
  unsigned int grid[3] = { (unsigned int) c->rows, 1, 1 }, block[3] = { 512, 1, 1 };
  TRY (fx_cuda_launch (c->k, NULL, grid, block, 0, args, D));
}

static void
run_softmax (void *p)
{
  row_ctx *c = p;
  void *args[] = { &c->x, &c->r, &c->rows };
  unsigned int grid[3] = { (unsigned int) c->rows, 1, 1 }, block[3] = { 512, 1, 1 };
  TRY (fx_cuda_launch (c->k, NULL, grid, block, 0, args, D));
}

static void
bench_bandwidth (void)
{
  fx_cuda_module *m1, *m2;
  vec_ctx v = { .n = 64ll << 20 };
  row_ctx r = { .rows = 8192, .cols = 4096 };
  float ms;

  v.k = load ("cuda_poi_fused_add_0", &m1);
  TRY (fx_cuda_malloc (cuda, (size_t) v.n * 4, NULL, &v.a, D));
  TRY (fx_cuda_malloc (cuda, (size_t) v.n * 4, NULL, &v.b, D));
  TRY (fx_cuda_malloc (cuda, (size_t) v.n * 4, NULL, &v.r, D));
  TRY (fx_cuda_memset (cuda, NULL, v.a, 0, (size_t) v.n * 4, D));
  TRY (fx_cuda_memset (cuda, NULL, v.b, 0, (size_t) v.n * 4, D));
  ms = time_median (run_copy, &v, 50);
  printf ("d2d copy 64M floats: %.4f ms, %.0f GB/s (read + write)\n", ms, 2.0 * v.n * 4 / (ms * 1e-3) / 1e9);
  ms = time_median (run_vec, &v, 50);
  printf ("cuda_poi_fused_add_0 64M floats: %.4f ms, %.0f GB/s (2 reads + 1 write)\n", ms,
          3.0 * v.n * 4 / (ms * 1e-3) / 1e9);

  {
    fx_cuda_build_options opts = { .cache_dir = cache_dir };
    fx_cuda_module *m3;
    fx_cuda_kernel *k3;
    char *body = read_kernel ("prelude/cuda_per_fused__softmax_4");
    char *src = malloc (strlen (fx_cuda_prelude_source ()) + strlen (body) + 1);
    row_ctx sm = { .rows = 8192, .cols = 4096 };
    strcpy (src, fx_cuda_prelude_source ());
    strcat (src, body);
    TRY (fx_cuda_module_build (cuda, src, "cuda_per_fused__softmax_4", &opts, &m3, NULL, D));
    TRY (fx_cuda_module_get_kernel (m3, "cuda_per_fused__softmax_4", &k3, D));
    sm.k = k3;
    sm.x = v.a;
    sm.r = v.b;
    ms = time_median (run_softmax, &sm, 50);
    printf ("cuda_per_fused__softmax_4 8192x4096: %.4f ms, %.0f GB/s (fixtures README: inductor 0.137 ms, "
            "bound 0.085 ms)\n", ms, 2.0 * sm.rows * sm.cols * 4 / (ms * 1e-3) / 1e9);
    fx_cuda_module_free (m3);
    free (src);
    free (body);
  }
  r.k = load ("cuda_per_fused_sum_1", &m2);
  r.x = v.a;
  r.r = v.b;
  ms = time_median (run_rows, &r, 50);
  printf ("cuda_per_fused_sum_1 8192x4096: %.4f ms, %.0f GB/s\n", ms,
          ((double) r.rows * r.cols + r.rows) * 4 / (ms * 1e-3) / 1e9);
  fx_cuda_free (cuda, v.a);
  fx_cuda_free (cuda, v.b);
  fx_cuda_free (cuda, v.r);
  fx_cuda_module_free (m1);
  fx_cuda_module_free (m2);
}

typedef struct chain_ctx
{
  fx_cuda_kernel *k;
  fx_cuda_ptr x;
  int n;
  fx_cuda_graph *graph;
} chain_ctx;

static void
run_chain_eager (void *p)
{
  chain_ctx *c = p;
  for (int s = 0; s < 20; s++)
    {
      float a = 1.0f, b = 0.5f;
      void *args[] = { &c->x, &a, &b, &c->n };
      unsigned int grid[3] = { (unsigned int) ((c->n + 255) / 256), 1, 1 }, block[3] = { 256, 1, 1 };
      TRY (fx_cuda_launch (c->k, NULL, grid, block, 0, args, D));
    }
}

static void
run_chain_graph (void *p)
{
  chain_ctx *c = p;
  TRY (fx_cuda_graph_replay (c->graph, NULL, D));
}

static void
bench_launch_bound (void)
{
  fx_cuda_module *m;
  chain_ctx c = { .n = 4096 };
  fx_cuda_stream *s = fx_cuda_default_stream (cuda);
  float eager, graph;
  double t0, wall_eager, wall_graph;

  c.k = load ("cuda_poi_fused_mul_add_3", &m);
  TRY (fx_cuda_malloc (cuda, c.n * 4, NULL, &c.x, D));
  TRY (fx_cuda_memset (cuda, NULL, c.x, 0, c.n * 4, D));
  TRY (fx_cuda_graph_capture_begin (s, D));
  run_chain_eager (&c);
  TRY (fx_cuda_graph_capture_end (s, &c.graph, D));
  eager = time_median (run_chain_eager, &c, 200);
  graph = time_median (run_chain_graph, &c, 200);
  /* Host-side view too: 1000 iterations back to back, then one synchronize. */
  t0 = fx_now_ms ();
  for (int i = 0; i < 1000; i++)
    run_chain_eager (&c);
  TRY (fx_cuda_synchronize (cuda, D));
  wall_eager = (fx_now_ms () - t0) / 1000;
  t0 = fx_now_ms ();
  for (int i = 0; i < 1000; i++)
    run_chain_graph (&c);
  TRY (fx_cuda_synchronize (cuda, D));
  wall_graph = (fx_now_ms () - t0) / 1000;
  printf ("20 pointwise launches on 4096 floats: eager %.4f ms, CUDA graph %.4f ms (GPU events), speedup %.2fx; "
          "wall per iteration eager %.4f ms, graph %.4f ms, speedup %.2fx\n", eager, graph, eager / graph, wall_eager,
          wall_graph, wall_eager / wall_graph);
  fx_cuda_graph_free (c.graph);
  fx_cuda_free (cuda, c.x);
  fx_cuda_module_free (m);
}

typedef struct gemm_ctx
{
  fx_cuda_matrix a, b, c;
  double beta;
} gemm_ctx;

static void
run_gemm (void *p)
{
  gemm_ctx *g = p;
  TRY (fx_cuda_gemm (cuda, NULL, FX_DTYPE_F32, 1, 1.0, &g->a, &g->b, g->beta, &g->c, D));
}

static float
bench_one_gemm (const char *what, int64_t m, int64_t k, int64_t n, bool weight_t, bool tf32)
{
  fx_cuda_blas *blas;
  gemm_ctx g;
  fx_cuda_ptr a, b, c;
  float ms;

  TRY (fx_cuda_get_blas (cuda, &blas, D));
  fx_cuda_blas_set_allow_tf32 (blas, tf32);
  TRY (fx_cuda_malloc (cuda, m * k * 4, NULL, &a, D));
  TRY (fx_cuda_malloc (cuda, k * n * 4, NULL, &b, D));
  TRY (fx_cuda_malloc (cuda, m * n * 4, NULL, &c, D));
  TRY (fx_cuda_memset (cuda, NULL, a, 0, m * k * 4, D));
  TRY (fx_cuda_memset (cuda, NULL, b, 0, k * n * 4, D));
  TRY (fx_cuda_memset (cuda, NULL, c, 0, m * n * 4, D));
  g.a = fx_cuda_matrix_rowmajor (a, m, k);
  g.b = fx_cuda_matrix_rowmajor (b, k, n);
  if (weight_t)
    {
      /* nn.Linear: x @ weight.t(), weight [n, k] contiguous */
      fx_cuda_matrix bt = { b, k, n, 1, k, 0 };
      g.b = bt;
    }
  g.c = fx_cuda_matrix_rowmajor (c, m, n);
  g.beta = weight_t ? 1.0 : 0.0;
  ms = time_median (run_gemm, &g, 20);
  printf ("gemm %-34s [%lld x %lld] @ [%lld x %lld]%s: %.4f ms, %.1f TFLOP/s\n", what, (long long) m, (long long) k,
          (long long) k, (long long) n, tf32 ? " tf32" : " fp32", ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12);
  fx_cuda_blas_set_allow_tf32 (blas, false);
  fx_cuda_free (cuda, a);
  fx_cuda_free (cuda, b);
  fx_cuda_free (cuda, c);
  return ms;
}

static void
bench_gemm (void)
{
  float up, down;
  bench_one_gemm ("square", 4096, 4096, 4096, false, false);
  bench_one_gemm ("square", 4096, 4096, 4096, false, true);
  /* mlp_block of the fixtures: x [8192, 1024], hidden 4096: two Linear layers */
  up = bench_one_gemm ("mlp_block up (addmm, weight.t())", 8192, 1024, 4096, true, false);
  down = bench_one_gemm ("mlp_block down (addmm, weight.t())", 8192, 4096, 1024, true, false);
  printf ("mlp_block GEMMs together: %.3f ms fp32 (PyTorch's whole graph, fixtures README: eager 2.918 ms, "
          "inductor 2.946 ms)\n", up + down);
}

int
main (int argc, char **argv)
{
  fx_cuda_runtime_info info;
  fx_diag diag;

  fx_diag_clear (&diag);
  kernels_dir = argc > 1 ? argv[1] : "kernels";
  if (fx_cuda_probe (&info, &diag) != FX_OK || !info.have_nvrtc)
    {
      printf ("SKIP %s\n", diag.message[0] ? diag.message : info.nvrtc_error);
      return 77;
    }
  if (fx_cuda_open (0, &cuda, &diag) != FX_OK)
    {
      printf ("fx_cuda_open: %s\n", diag.message);
      return 1;
    }
  printf ("device %s cc %d.%d, %d SMs; driver %d; NVRTC %d.%d\n", fx_cuda_get_info (cuda)->name,
          fx_cuda_get_info (cuda)->cc_major, fx_cuda_get_info (cuda)->cc_minor, fx_cuda_get_info (cuda)->sm_count,
          info.driver_version, info.nvrtc_major, info.nvrtc_minor);
  snprintf (cache_dir, sizeof cache_dir, "/tmp/fx-cuda-bench-cache-%ld", (long) getpid ());
  bench_nvrtc ();
  bench_allocator ();
  bench_bandwidth ();
  bench_launch_bound ();
  if (info.have_cublas)
    bench_gemm ();
  fx_cuda_close (cuda);
  {
    char cmd[400];
    snprintf (cmd, sizeof cmd, "rm -rf /tmp/fx-cuda-bench-cache-%ld", (long) getpid ());
    if (system (cmd) != 0)
      printf ("could not remove the cache\n");
  }
  return 0;
}
