/* test-inductor-cuda-emu.c: runs the generated CUDA kernels on the CPU under cuda-emu.hpp (g++, one thread per CUDA
   thread) following the generated wrapper (buffers, launches, outputs), and compares with the interpreter: fixture
   graphs (scaled; mlp_block's cuBLAS GEMMs are not emulated), every reduction kind at shapes that select it, and
   fixed-seed random graphs. It checks the kernels' logic where no GPU exists (and takes about a minute). usage: test-inductor-cuda-emu EMU_DIR
   (the folder of cuda-emu.hpp). Skips (77) without g++. */
#include "../cuda/cuda-test.h"
#include "inductor-cuda-common.h"

#include <dlfcn.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *emu_dir;
static const char *cxx = "/usr/bin/g++";
static char tmp_dir[256];
static int lib_counter;
/* symbolic sources: the inputs the template is made at (fx_inductor_cuda_generate_at), and the values emu_run
   writes into fx_ks<i> before its launches */
static const fx_value *sym_base;
static size_t n_sym_base;
static const int64_t *sym_vals;
static int n_sym_vals;

static int
run_cxx (const char *src, const char *so, const char *log)
{
  char inc[1200];
  snprintf (inc, sizeof inc, "-I%s", emu_dir);
  fflush (stdout);
  pid_t pid = fork ();
  if (pid == 0)
    {
      if (!freopen (log, "w", stdout))
        _exit (126);
      dup2 (fileno (stdout), 2);
      execl (cxx, cxx, "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", "-Wno-unknown-pragmas", inc, "-o", so, src,
             (char *) NULL);
      _exit (127);
    }
  int status = 0;
  if (pid < 0 || waitpid (pid, &status, 0) < 0)
    return -1;
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* Copies the line at *cursor into line (without its newline) and moves past it; false at the end. */
static bool
next_line (const char **cursor, char *line, size_t size)
{
  const char *l = *cursor;
  if (l == NULL || *l == '\0')
    return false;
  const char *eol = strchr (l, '\n');
  size_t len = eol ? (size_t) (eol - l) : strlen (l);
  snprintf (line, size, "%.*s", (int) (len < size ? len : size - 1), l);
  *cursor = eol ? eol + 1 : l + len;
  return true;
}

static double
get_elem (const char *dtype, const void *base, int64_t i)
{
  if (strcmp (dtype, "float32") == 0 || strcmp (dtype, "f32") == 0)
    return ((const float *) base)[i];
  if (strcmp (dtype, "float64") == 0 || strcmp (dtype, "f64") == 0)
    return ((const double *) base)[i];
  if (strcmp (dtype, "int64") == 0 || strcmp (dtype, "i64") == 0)
    return (double) ((const int64_t *) base)[i];
  if (strcmp (dtype, "int32") == 0 || strcmp (dtype, "i32") == 0)
    return ((const int32_t *) base)[i];
  if (strcmp (dtype, "bool") == 0 || strcmp (dtype, "b8") == 0)
    return ((const unsigned char *) base)[i];
  return NAN;
}

static int64_t
extent_bytes (const fx_tensor *t)
{
  int64_t hi = 1;
  for (int d = 0; d < t->ndim; d++)
    {
      if (t->sizes[d] == 0)
        return 0;
      hi += (t->sizes[d] - 1) * t->strides[d];
    }
  return hi * (int64_t) fx_dtype_size (t->dtype);
}

/* Generates, builds and runs graph on inputs under the emulator; compares with the interpreter. Returns false on a
   mismatch or failure (reported); *skipped when the graph has extern kernels. */
static bool
emulate_kind (const char *label, const fx_graph *g, const fx_value *in, size_t n, const char *force, const char *want_kind,
              bool *skipped)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  *skipped = false;
  fx_buf src, listing, wrapper, cpp;
  fx_buf_init (&src);
  fx_buf_init (&listing);
  fx_buf_init (&wrapper);
  fx_buf_init (&cpp);
  bool ok = false;
  void *handle = NULL;
  void *bufs[256] = { 0 };
  int n_bufs = 0;
  fx_arena *arena = fx_arena_new ();
  fx_value *ref = NULL;
  size_t n_ref = 0;
  if (sym_base ? fx_inductor_cuda_generate_at (g, sym_base, n_sym_base, in, n, &src, &wrapper, &diag) != FX_OK
               : fx_inductor_cuda_generate_kind (g, in, n, force, &src, &listing, &wrapper, &diag) != FX_OK)
    {
      printf ("# %s: generate: %s\n", label, diag.message);
      goto out;
    }
  if (want_kind && !strstr (listing.data, want_kind))
    {
      printf ("# %s: expected a %s kernel:\n%s", label, want_kind, listing.data);
      goto out;
    }
  if (strstr (wrapper.data, "\nextern ") || strncmp (wrapper.data, "extern ", 7) == 0)
    {
      *skipped = true;
      ok = true;
      goto out;
    }
  /* the launcher: one emu_launch per wrapper launch line */
  fx_buf_puts (&cpp, "#include \"cuda-emu.hpp\"\n");
  fx_buf_append (&cpp, src.data, src.len);
  fx_buf_puts (&cpp, "\nextern \"C\" void emu_run (void **b)\n{\n");
  for (int i = 0; i < n_sym_vals; i++)
    fx_buf_printf (&cpp, "  fx_ks%d = %lld;\n", i, (long long) sym_vals[i]);
  const char *cur1 = wrapper.data;
  for (char line[2048]; next_line (&cur1, line, sizeof line);)
    {
      char name[256];
      unsigned grid, block;
      int used = 0;
      if (sscanf (line, "buffer %d", &used) == 1)
        {
          if (used + 1 > n_bufs)
            n_bufs = used + 1;
          continue;
        }
      if (sscanf (line, "launch %255s grid %u block %u args%n", name, &grid, &block, &used) != 3)
        continue;
      fx_buf_printf (&cpp, "  emu_launch (%s, %u, %u, {", name, grid, block);
      const char *a = line + used;
      int v, k = 0, m;
      while (sscanf (a, " %d%n", &v, &m) == 1)
        {
          fx_buf_printf (&cpp, "%s b[%d]", k++ ? "," : "", v);
          a += m;
        }
      fx_buf_puts (&cpp, " });\n");
    }
  fx_buf_puts (&cpp, "}\n");
  char cpp_path[512], so_path[512], log_path[512];
  snprintf (cpp_path, sizeof cpp_path, "%s/k%d.cpp", tmp_dir, lib_counter);
  snprintf (so_path, sizeof so_path, "%s/k%d.so", tmp_dir, lib_counter++);
  snprintf (log_path, sizeof log_path, "%s/cxx.log", tmp_dir);
  FILE *f = fopen (cpp_path, "w");
  if (!f)
    goto out;
  fwrite (cpp.data, 1, cpp.len, f);
  fclose (f);
  if (run_cxx (cpp_path, so_path, log_path) != 0)
    {
      char *text = NULL;
      size_t len = 0;
      fx_file_read (log_path, &text, &len, NULL);
      printf ("# %s: g++ failed:\n%s\n", label, text ? text : "");
      free (text);
      goto out;
    }
  handle = dlopen (so_path, RTLD_NOW | RTLD_LOCAL);
  void (*run) (void **) = handle ? (void (*) (void **)) dlsym (handle, "emu_run") : NULL;
  unlink (cpp_path);
  unlink (so_path);
  if (!run)
    {
      printf ("# %s: dlopen: %s\n", label, dlerror ());
      goto out;
    }
  /* buffers: inputs filled from the example inputs (same layout as compiled), the rest zeroed */
  const char *cur2 = wrapper.data;
  for (char line[512]; next_line (&cur2, line, sizeof line);)
    {
      int k, arg;
      size_t bytes;
      char role[16];
      if (sscanf (line, "buffer %d %15s %zu", &k, role, &bytes) != 3 || k < 0 || k >= 256)
        continue;
      bufs[k] = aligned_alloc (256, (bytes + 255) / 256 * 256);
      memset (bufs[k], 0, (bytes + 255) / 256 * 256);
      if (strcmp (role, "input") == 0 && sscanf (line, "buffer %*d %*s %*s arg %d", &arg) == 1 && (size_t) arg < n)
        {
          const fx_tensor *t = in[arg].u.t;
          memcpy (bufs[k], fx_tensor_data (t), (size_t) extent_bytes (t));
        }
    }
  struct timespec t0, t1;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  run (bufs);
  clock_gettime (CLOCK_MONOTONIC, &t1);
  double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf ("# %s: emulated in %.2f s\n", label, secs);
  if (secs > 5 && getenv ("EMU_VERBOSE"))
    printf ("%s%s", listing.data, wrapper.data);
  if (fx_interp_run (g, in, n, NULL, arena, &ref, &n_ref, &diag) != FX_OK)
    {
      printf ("# %s: interpreter: %s\n", label, diag.message);
      goto out;
    }
  ok = true;
  const char *cur3 = wrapper.data;
  for (char line[1024]; ok && next_line (&cur3, line, sizeof line);)
    {
      int k, pb, ndim, used;
      long long off;
      char dtype[32];
      if (sscanf (line, "result %d buffer %d offset %lld dtype %31s ndim %d%n", &k, &pb, &off, dtype, &ndim, &used) != 5)
        continue;
      int64_t sizes[8], strides[8];
      const char *a = line + used;
      for (int d = 0; d < ndim && d < 8; d++)
        {
          long long s1, s2;
          int m;
          if (sscanf (a, " %lld:%lld%n", &s1, &s2, &m) != 2)
            break;
          sizes[d] = s1;
          strides[d] = s2;
          a += m;
        }
      if ((size_t) k >= n_ref || ref[k].kind != FX_VALUE_TENSOR || pb < 0 || pb >= 256)
        {
          printf ("# %s: result %d has no reference\n", label, k);
          ok = false;
          break;
        }
      const fx_tensor *r = ref[k].u.t;
      int64_t numel = fx_tensor_numel (r);
      for (int64_t e = 0; e < numel; e++)
        {
          int64_t rem = e, idx = off;
          for (int d = ndim - 1; d >= 0; d--)
            {
              idx += (rem % sizes[d]) * strides[d];
              rem /= sizes[d];
            }
          double u = get_elem (dtype, bufs[pb], idx), v = fx_tensor_get_f64 (r, e);
          if (isnan (u) && isnan (v))
            continue;
          if (!(fabs (u - v) <= 1e-4 + 1e-4 * fabs (v)))
            {
              printf ("# %s: output %d element %lld: emulated %.9g vs interpreter %.9g\n%s# ---- wrapper\n%s# ---- source\n%s\n",
                      label, k, (long long) e, u, v, listing.data, wrapper.data, src.data);
              ok = false;
              break;
            }
        }
    }
out:
  for (size_t i = 0; i < n_ref; i++)
    fx_value_clear (&ref[i]);
  fx_arena_free (arena);
  for (int k = 0; k < 256; k++)
    free (bufs[k]);
  if (handle)
    dlclose (handle);
  fx_buf_free (&src);
  fx_buf_free (&listing);
  fx_buf_free (&wrapper);
  fx_buf_free (&cpp);
  return ok;
}

static bool
emulate (const char *label, const fx_graph *g, const fx_value *in, size_t n, const char *want_kind, bool *skipped)
{
  return emulate_kind (label, g, in, n, NULL, want_kind, skipped);
}

static void
test_fixtures (void)
{
  for (size_t i = 0; i < ICUDA_N_FIXTURES; i++)
    {
      fx_diag diag;
      fx_diag_clear (&diag);
      fx_graph *g = icuda_load_fixture (icuda_fixture_names[i], &diag);
      CHECK (g != NULL, "%s: %s", icuda_fixture_names[i], diag.message);
      fx_graph_scale_inputs (g, 64, 64);
      fx_arena *arena = fx_arena_new ();
      fx_value *in = NULL;
      size_t n = 0;
      CHECK_OK (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 1234, NULL, arena, &in, &n, &diag), &diag);
      bool skipped;
      bool ok = emulate (icuda_fixture_names[i], g, in, n, NULL, &skipped);
      if (skipped)
        printf ("# %s: has extern GEMMs: not emulated\n", icuda_fixture_names[i]);
      for (size_t k = 0; k < n; k++)
        fx_value_clear (&in[k]);
      fx_arena_free (arena);
      fx_graph_free (g);
      CHECK (ok, "%s", icuda_fixture_names[i]);
    }
}

/* softmax then var and sum over rows of each reduction kind's shapes */
static void
test_reduction_kinds (void)
{
  static const struct
  {
    int64_t rows, cols;
    const char *kind;
  } cases[] = {
    { 4, 4096, "persistent_reduction" },
    { 50, 100, "persistent_reduction" },
    { 3, 37, "persistent_reduction" },
    { 2, 20000, " reduction" },              /* forced: Inductor's heuristic splits these */
    { 3, 9999, " reduction" },
    { 1, 100000, "split_reduction" },
    { 2, 70001, "split_reduction" },
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      fx_graph *g = fx_graph_new ();
      fx_node *x = fx_graph_placeholder (g, "arg0_1");
      fx_arg li[1] = { fx_arg_int (-1) };
      bool split = strcmp (cases[c].kind, "split_reduction") == 0;
      fx_arg sargs[3] = { fx_arg_node (x), fx_arg_int (-1), fx_arg_bool (false) };
      /* split reductions take no epilogue: the softmax only where rows are not split */
      fx_node *sm = split ? NULL : fx_graph_call_function (g, fx_target_op ("aten._softmax.default"), sargs, 3, NULL, 0);
      fx_arg args[3] = { fx_arg_node (x), fx_arg_list (li, 1), fx_arg_bool (true) };
      fx_node *s = fx_graph_call_function (g, fx_target_op ("aten.sum.dim_IntList"), args, 3, NULL, 0);
      fx_kwarg kw[2] = { { "correction", fx_arg_int (1) }, { "keepdim", fx_arg_bool (true) } };
      fx_node *v = fx_graph_call_function (g, fx_target_op ("aten.var.correction"), args, 2, kw, 2);
      fx_node *mx = fx_graph_call_function (g, fx_target_op ("aten.amax.default"), args, 3, NULL, 0);
      fx_arg oa[4] = { fx_arg_node (s), fx_arg_node (v), fx_arg_node (mx), split ? fx_arg_none () : fx_arg_node (sm) };
      fx_graph_output (g, fx_arg_tuple (oa, split ? 3 : 4));
      fx_graph_resolve_ops (g);
      int64_t sz[2] = { cases[c].rows, cases[c].cols };
      fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
      fx_generator gen;
      fx_generator_seed (&gen, (uint64_t) c + 1);
      fx_tensor_fill_normal (t, &gen, 1, 2);
      fx_value in = fx_value_tensor (t);
      char label[96];
      snprintf (label, sizeof label, "%lldx%lld", (long long) sz[0], (long long) sz[1]);
      bool skipped;
      const char *force = strcmp (cases[c].kind, " reduction") == 0 ? "looped" : NULL;
      bool ok = emulate_kind (label, g, &in, 1, force, cases[c].kind, &skipped);
      fx_value_clear (&in);
      fx_graph_free (g);
      CHECK (ok && !skipped, "%s", label);
    }
}


/* Split reductions with an epilogue (layer norm + gelu with its mean and rstd stored, an RMS norm storing h in the
   partial kernel, sum and var of every element then a pointwise use of both) and forced kinds at small shapes: the
   same graphs split (where the heuristic would not), looped and persistent, all against the interpreter. */
static void
test_split_epilogue (void)
{
  static const struct
  {
    int graph;
    int64_t rows, cols;
    const char *force, *want;
  } cases[] = {
    { 0, 1, 100000, NULL, "split=13," },
    { 3, 1, 100000, NULL, "split=13," },     /* softmax: three kernels (maxima, sums of exp, normalization) */
    { 3, 3, 3000, "split", "then cuda_red_fused__softmax_1 then cuda_per_fused__softmax_2" },
    { 3, 2, 2050, "split", "split_reduction" },
    { 4, 5, 999, "split", "split_reduction" },
    { 4, 4, 4096, "split", "split_reduction" },
    { 0, 3, 3000, "split", "split_reduction" },
    { 0, 2, 2050, "split", "split_reduction" },
    { 1, 3, 4100, "split", "split_reduction" },
    { 1, 5, 999, "split", "split_reduction" },
    { 2, 40, 300, "split", "split_reduction" },
    { 2, 7, 33, "split", "split_reduction" },
    { 0, 3, 3000, "looped", " reduction looped" },
    { 1, 6, 2000, "persistent", "persistent_reduction" },
    { 2, 16, 64, "persistent", "persistent_reduction" },
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      fx_graph *g = icuda_norm_graph (cases[c].graph);
      int64_t sz[2] = { cases[c].rows, cases[c].cols };
      fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz);
      fx_generator gen;
      fx_generator_seed (&gen, (uint64_t) c + 11);
      fx_tensor_fill_normal (t, &gen, 0.5, 1.5);
      fx_value in = fx_value_tensor (t);
      char label[96];
      snprintf (label, sizeof label, "norm graph %d %lldx%lld %s", cases[c].graph, (long long) sz[0],
                (long long) sz[1], cases[c].force ? cases[c].force : "heuristic");
      bool skipped;
      bool ok = emulate_kind (label, g, &in, 1, cases[c].force, cases[c].want, &skipped);
      fx_value_clear (&in);
      fx_graph_free (g);
      CHECK (ok && !skipped, "%s", label);
    }
}

/* Sums, maxima and variances down the columns of a row-major matrix: a thread per column, and split into chunks of
   rows (outer split). */
static void
test_outer_reduction (void)
{
  static const int64_t shapes[][2] = { { 300, 4096 }, { 77, 2500 }, { 2048, 2048 } };
  /* the heuristic's choice: a thread per column, or (many rows, a few thousand columns) the outer split */
  static const char *const want[] = { "XBLOCK=256, R0_BLOCK=1,", "XBLOCK=256, R0_BLOCK=1,", "outer split=" };
  for (size_t c = 0; c < 3; c++)
    {
      fx_graph *g = fx_graph_new ();
      fx_node *x = fx_graph_placeholder (g, "arg0_1");
      fx_arg li[1] = { fx_arg_int (0) };
      fx_arg args[3] = { fx_arg_node (x), fx_arg_list (li, 1), fx_arg_bool (true) };
      fx_node *s = fx_graph_call_function (g, fx_target_op ("aten.sum.dim_IntList"), args, 3, NULL, 0);
      fx_kwarg kw[2] = { { "correction", fx_arg_int (1) }, { "keepdim", fx_arg_bool (true) } };
      fx_node *v = fx_graph_call_function (g, fx_target_op ("aten.var.correction"), args, 2, kw, 2);
      fx_node *mx = fx_graph_call_function (g, fx_target_op ("aten.amax.default"), args, 3, NULL, 0);
      fx_arg oa[3] = { fx_arg_node (s), fx_arg_node (v), fx_arg_node (mx) };
      fx_graph_output (g, fx_arg_tuple (oa, 3));
      fx_graph_resolve_ops (g);
      fx_tensor *t = fx_tensor_new (NULL, FX_DTYPE_F32, 2, shapes[c]);
      fx_generator gen;
      fx_generator_seed (&gen, (uint64_t) c + 5);
      fx_tensor_fill_normal (t, &gen, 0, 1);
      fx_value in = fx_value_tensor (t);
      char label[96];
      snprintf (label, sizeof label, "columns of %lldx%lld", (long long) shapes[c][0], (long long) shapes[c][1]);
      bool skipped;
      bool ok = emulate (label, g, &in, 1, want[c], &skipped);
      CHECK (ok && !skipped, "%s", label);
      /* split into chunks of rows, the partials combined by a second kernel (too few rows: no split) */
      snprintf (label, sizeof label, "columns of %lldx%lld, outer split", (long long) shapes[c][0],
                (long long) shapes[c][1]);
      ok = shapes[c][0] < 128 || emulate_kind (label, g, &in, 1, "split", "outer split=", &skipped);
      CHECK (ok && !skipped, "%s", label);
      fx_value_clear (&in);
      fx_graph_free (g);
    }
}

/* A batch-dynamic graph (rows of a softmax-style reduction, a column sum over the symbolic batch): its CUDA source
   made at s0 = 64 is symbolic, and that one text runs right at other batch sizes with fx_ks0 set, following the
   wrapper a device run makes there (fx_inductor_cuda_generate_at). A column of 100000 rows is summed by another
   kernel shape (split): not the template. */
static void
test_symbolic (void)
{
  static const char code[] =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, s0: \"Sym(s0)\", L_x_: \"f32[s0, 64][64, 1]cuda\", L_y_: \"f32[64][1]cuda\"):\n"
    "        add = torch.ops.aten.add.Tensor(L_x_, L_y_)\n"
    "        view = torch.ops.aten.view.default(add, [s0, 8, 8])\n"
    "        amax = torch.ops.aten.amax.default(view, [2], True)\n"
    "        sub = torch.ops.aten.sub.Tensor(view, amax)\n"
    "        exp = torch.ops.aten.exp.default(sub)\n"
    "        sum_1 = torch.ops.aten.sum.dim_IntList(exp, [2])\n"
    "        relu = torch.ops.aten.relu.default(add)\n"
    "        sum_2 = torch.ops.aten.sum.dim_IntList(relu, [0])\n"
    "        return (sum_1, sum_2)\n";
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_graph *g = NULL;
  CHECK (fx_parse_fx_code (code, strlen (code), "sym.py", &g, &diag) == FX_OK, "parse: %s", diag.message);
  if (g == NULL)
    return;
  fx_graph_resolve_ops (g);
  /* the base: s0 = 64 (meta tensors suffice to generate) */
  int64_t bx[2] = { 64, 64 }, by[1] = { 64 };
  fx_value base[3] = { fx_value_int (64), fx_value_tensor (fx_tensor_new_meta (FX_DTYPE_F32, 2, bx, NULL)),
                       fx_value_tensor (fx_tensor_new_meta (FX_DTYPE_F32, 1, by, NULL)) };
  fx_buf src;
  fx_buf_init (&src);
  CHECK (fx_inductor_cuda_generate (g, base, 3, &src, NULL, NULL, &diag) == FX_OK, "generate: %s", diag.message);
  CHECK (src.data && strstr (src.data, "__constant__ int fx_ks0;") && strstr (src.data, " * fx_ks0)"),
         "the source is symbolic over s0:\n%.2000s", src.data ? src.data : "");
  fx_buf_free (&src);
  static const int64_t sizes[] = { 64, 100, 1000, 65 };
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++)
    {
      int64_t n = sizes[c];
      int64_t xs[2] = { n, 64 }, ys[1] = { 64 };
      fx_generator gen;
      fx_generator_seed (&gen, (uint64_t) n);
      fx_tensor *x = fx_tensor_new (NULL, FX_DTYPE_F32, 2, xs), *y = fx_tensor_new (NULL, FX_DTYPE_F32, 1, ys);
      fx_tensor_fill_normal (x, &gen, 0, 1);
      fx_tensor_fill_normal (y, &gen, 0, 1);
      fx_value in[3] = { fx_value_int (n), fx_value_tensor (x), fx_value_tensor (y) };
      sym_base = base;
      n_sym_base = 3;
      sym_vals = &n;
      n_sym_vals = 1;
      char label[64];
      snprintf (label, sizeof label, "symbolic (made at s0=64), s0=%lld", (long long) n);
      bool skipped = false;
      bool ok = emulate (label, g, in, 3, NULL, &skipped);
      sym_base = NULL;
      sym_vals = NULL;
      n_sym_vals = 0;
      fx_value_clear (&in[1]);
      fx_value_clear (&in[2]);
      CHECK (ok && !skipped, "%s", label);
    }
  /* 100000 rows to sum per column: another reduction kernel, not the template (a device run builds its own) */
  int64_t lx[2] = { 100000, 64 };
  fx_value at[3] = { fx_value_int (100000), fx_value_tensor (fx_tensor_new_meta (FX_DTYPE_F32, 2, lx, NULL)),
                     fx_value_tensor (fx_tensor_new_meta (FX_DTYPE_F32, 1, by, NULL)) };
  fx_buf s2, w2;
  fx_buf_init (&s2);
  fx_buf_init (&w2);
  fx_status st = fx_inductor_cuda_generate_at (g, base, 3, at, 3, &s2, &w2, &diag);
  fx_buf_free (&s2);
  fx_buf_free (&w2);
  fx_value_clear (&at[1]);
  fx_value_clear (&at[2]);
  CHECK (st == FX_ERR_UNSUPPORTED && strstr (diag.message, "not the template's"), "s0=100000: %s", diag.message);
  fx_value_clear (&base[1]);
  fx_value_clear (&base[2]);
  fx_graph_free (g);
}

static void
test_random (void)
{
  icuda_rng rng = { 0x9e3779b97f4a7c15ull };
  int failed = 0, emulated_big = 0, count = getenv ("EMU_RANDOM") ? atoi (getenv ("EMU_RANDOM")) : 40;
  for (int i = 0; i < count; i++)
    {
      fx_arena *arena = fx_arena_new ();
      fx_value *in = NULL;
      size_t n = 0;
      fx_graph *g = icuda_random_graph (&rng, &in, &n, arena);
      char label[64];
      snprintf (label, sizeof label, "random graph %d", i);
      bool skipped;
      /* emulation runs every CUDA thread on one core: the largest graphs are left to the GPU test */
      if (fx_tensor_numel (in[0].u.t) <= 1000000)
        failed += !emulate (label, g, in, n, NULL, &skipped);
      else
        emulated_big++;
      for (size_t k = 0; k < n; k++)
        fx_value_clear (&in[k]);
      fx_graph_free (g);
      fx_arena_free (arena);
    }
  printf ("# %d of %d random graphs too large to emulate\n", emulated_big, count);
  CHECK (failed == 0, "%d random graphs differ", failed);
}

int
main (int argc, char **argv)
{
  emu_dir = argc > 1 ? argv[1] : "tests/backends/inductor-cuda";
  if (getenv ("FX_TEST_CXX"))
    cxx = getenv ("FX_TEST_CXX");
  if (access (cxx, X_OK) != 0)
    {
      printf ("1..0 # SKIP no C++ compiler at %s\n", cxx);
      return 77;
    }
  snprintf (tmp_dir, sizeof tmp_dir, "/tmp/fx-icuda-emu-XXXXXX");
  if (!mkdtemp (tmp_dir))
    return 1;
  cuda_test_run ("fixtures", test_fixtures);
  cuda_test_run ("reduction-kinds", test_reduction_kinds);
  cuda_test_run ("outer-reduction", test_outer_reduction);
  cuda_test_run ("split-epilogue", test_split_epilogue);
  cuda_test_run ("symbolic", test_symbolic);
  cuda_test_run ("random-graphs", test_random);
  char p[600];
  snprintf (p, sizeof p, "%s/cxx.log", tmp_dir);
  unlink (p);
  rmdir (tmp_dir);
  return cuda_test_finish ();
}
