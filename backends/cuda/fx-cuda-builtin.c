/* fx-cuda-builtin.c: the runtime's own small kernels (built once per device through NVRTC and the cache), such as
   the strided broadcast that puts addmm's bias into the output before the GEMM accumulates onto it. */
#include "fx-cuda-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No headers: half and bfloat16 are handled as their bits, converted with PTX and integer rounding. */
static const char builtin_source[] =
  "// fx-cuda builtin kernels\n"
  "struct fx_f32 { typedef float S; static __device__ float ld (const float *p) { return *p; }\n"
  "  static __device__ void st (float *p, float v) { *p = v; } };\n"
  "struct fx_f64 { typedef double S; static __device__ double ld (const double *p) { return *p; }\n"
  "  static __device__ void st (double *p, double v) { *p = v; } };\n"
  "struct fx_f16 { typedef unsigned short S;\n"
  "  static __device__ float ld (const unsigned short *p) { float f; unsigned short h = *p;\n"
  "    asm (\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
  "  static __device__ void st (unsigned short *p, float v) { unsigned short h;\n"
  "    asm (\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(v)); *p = h; } };\n"
  "struct fx_bf16 { typedef unsigned short S;\n"
  "  static __device__ float ld (const unsigned short *p) { return __uint_as_float ((unsigned) *p << 16); }\n"
  "  static __device__ void st (unsigned short *p, float v) { unsigned u = __float_as_uint (v);\n"
  "    *p = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short) ((u >> 16) | 0x40u)\n"
  "                                          : (unsigned short) ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); } };\n"
  "template <typename IO, typename C>\n"
  "__device__ void fx_broadcast_scale (typename IO::S *out, const typename IO::S *src, long long rows,\n"
  "    long long cols, long long rs, long long cs, long long ors, long long ocs, double beta)\n"
  "{\n"
  "  long long total = rows * cols;\n"
  "  for (long long idx = (long long) blockIdx.x * blockDim.x + threadIdx.x; idx < total;\n"
  "       idx += (long long) gridDim.x * blockDim.x)\n"
  "    {\n"
  "      long long i = idx / cols, j = idx - i * cols;\n"
  "      IO::st (out + i * ors + j * ocs, (C) beta * (C) IO::ld (src + i * rs + j * cs));\n"
  "    }\n"
  "}\n"
  "#define FX_BROADCAST(name, IO, C) extern \"C\" __global__ void name (IO::S *out, const IO::S *src,\\\n"
  "    long long rows, long long cols, long long rs, long long cs, long long ors, long long ocs, double beta)\\\n"
  "  { fx_broadcast_scale<IO, C> (out, src, rows, cols, rs, cs, ors, ocs, beta); }\n"
  "FX_BROADCAST (fx_broadcast_scale_f32, fx_f32, float)\n"
  "FX_BROADCAST (fx_broadcast_scale_f64, fx_f64, double)\n"
  "FX_BROADCAST (fx_broadcast_scale_f16, fx_f16, float)\n"
  "FX_BROADCAST (fx_broadcast_scale_bf16, fx_bf16, float)\n"
  "// out[o, i, n] = src[o, idx[o, i, n], n]: embedding, index_select and gather as one indexed copy (bits)\n"
  "template <typename T>\n"
  "__device__ void fx_take (T *out, const T *src, const long long *idx, long long outer, long long m,\n"
  "    long long inner, long long v, long long oo, long long om, long long on, long long so, long long sv,\n"
  "    long long sn, long long io, long long im, long long in_)\n"
  "{\n"
  "  long long total = outer * m * inner;\n"
  "  for (long long t = (long long) blockIdx.x * blockDim.x + threadIdx.x; t < total;\n"
  "       t += (long long) gridDim.x * blockDim.x)\n"
  "    {\n"
  "      long long n = t % inner, r = t / inner, i = r % m, o = r / m;\n"
  "      long long k = idx[o * io + i * im + n * in_];\n"
  "      if (k < 0)\n"
  "        k += v;\n"
  "      if (k < 0 || k >= v)\n"
  "        continue;   // out of range: PyTorch asserts on the device; nothing is read out of bounds here\n"
  "      out[o * oo + i * om + n * on] = src[o * so + k * sv + n * sn];\n"
  "    }\n"
  "}\n"
  "#define FX_TAKE(name, T) extern \"C\" __global__ void name (T *out, const T *src, const long long *idx,\\\n"
  "    long long outer, long long m, long long inner, long long v, long long oo, long long om, long long on,\\\n"
  "    long long so, long long sv, long long sn, long long io, long long im, long long in_)\\\n"
  "  { fx_take<T> (out, src, idx, outer, m, inner, v, oo, om, on, so, sv, sn, io, im, in_); }\n"
  "FX_TAKE (fx_take_b1, unsigned char)\n"
  "FX_TAKE (fx_take_b2, unsigned short)\n"
  "FX_TAKE (fx_take_b4, unsigned int)\n"
  "FX_TAKE (fx_take_b8, unsigned long long)\n"
  "// max.dim / min.dim / argmax / argmin over [outer, r, inner] (element strides): idx[o, n] = the first k of the\n"
  "// max (min) of src[o, k, n], a NaN winning (its first), as ATen's; val[o, n] = that value where val is given\n"
  "template <typename T, bool MIN>\n"
  "__device__ bool fx_arg_better (T a, long long ia, T b, long long ib)\n"
  "{\n"
  "  bool an = a != a, bn = b != b;\n"
  "  if (an || bn)\n"
  "    return an && (!bn || ia < ib);\n"
  "  if (a == b)\n"
  "    return ia < ib;\n"
  "  return MIN ? a < b : a > b;\n"
  "}\n"
  "template <typename T, bool MIN>\n"
  "__device__ void fx_argred (T *val, long long *idx, const T *src, long long outer, long long r, long long inner,\n"
  "    long long so, long long sr, long long sn, long long vo, long long vn, long long io, long long in_)\n"
  "{\n"
  "  if (inner == 1)\n"
  "    {\n"
  "      // a warp per row: the lanes stride along it, then combine by shuffles (the loop is warp-uniform)\n"
  "      int lane = threadIdx.x & 31;\n"
  "      long long warps = ((long long) gridDim.x * blockDim.x) >> 5;\n"
  "      for (long long o = ((long long) blockIdx.x * blockDim.x + threadIdx.x) >> 5; o < outer; o += warps)\n"
  "        {\n"
  "          const T *row = src + o * so;\n"
  "          T best = row[0];\n"
  "          long long bi = 0;\n"
  "          for (long long k = lane; k < r; k += 32)\n"
  "            {\n"
  "              T v = row[k * sr];\n"
  "              if (fx_arg_better<T, MIN> (v, k, best, bi) || k == lane)\n"
  "                best = v, bi = k;\n"
  "            }\n"
  "          bool have = lane < r;\n"
  "          for (int off = 16; off > 0; off >>= 1)\n"
  "            {\n"
  "              T ob = __shfl_xor_sync (0xffffffffu, best, off);\n"
  "              long long oi = __shfl_xor_sync (0xffffffffu, bi, off);\n"
  "              bool oh = __shfl_xor_sync (0xffffffffu, (int) have, off) != 0;\n"
  "              if (oh && (!have || fx_arg_better<T, MIN> (ob, oi, best, bi)))\n"
  "                best = ob, bi = oi, have = true;\n"
  "            }\n"
  "          if (lane == 0)\n"
  "            {\n"
  "              idx[o * io] = bi;\n"
  "              if (val)\n"
  "                val[o * vo] = best;\n"
  "            }\n"
  "        }\n"
  "      return;\n"
  "    }\n"
  "  // a thread per kept element, walking down its column: neighbouring threads read neighbouring n (coalesced)\n"
  "  long long total = outer * inner;\n"
  "  for (long long t = (long long) blockIdx.x * blockDim.x + threadIdx.x; t < total;\n"
  "       t += (long long) gridDim.x * blockDim.x)\n"
  "    {\n"
  "      long long n = t % inner, o = t / inner;\n"
  "      const T *col = src + o * so + n * sn;\n"
  "      T best = col[0];\n"
  "      long long bi = 0;\n"
  "      for (long long k = 1; k < r; k++)\n"
  "        {\n"
  "          T v = col[k * sr];\n"
  "          if (fx_arg_better<T, MIN> (v, k, best, bi))\n"
  "            best = v, bi = k;\n"
  "        }\n"
  "      idx[o * io + n * in_] = bi;\n"
  "      if (val)\n"
  "        val[o * vo + n * vn] = best;\n"
  "    }\n"
  "}\n"
  "#define FX_ARGRED(name, T, MIN) extern \"C\" __global__ void name (T *val, long long *idx, const T *src,\\\n"
  "    long long outer, long long r, long long inner, long long so, long long sr, long long sn, long long vo,\\\n"
  "    long long vn, long long io, long long in_)\\\n"
  "  { fx_argred<T, MIN> (val, idx, src, outer, r, inner, so, sr, sn, vo, vn, io, in_); }\n"
  "FX_ARGRED (fx_argmax_f32, float, false)\n"
  "FX_ARGRED (fx_argmin_f32, float, true)\n"
  "FX_ARGRED (fx_argmax_f64, double, false)\n"
  "FX_ARGRED (fx_argmin_f64, double, true)\n";

const char *
fx_cuda_builtin_source (void)
{
  return builtin_source;
}

static fx_status
builtin_kernel (fx_cuda *cuda, const char *name, fx_cuda_kernel **out, fx_diag *diag)
{
  fx_status st = FX_OK;

  pthread_mutex_lock (&cuda->builtin_lock);
  if (!cuda->builtin)
    st = fx_cuda_module_build (cuda, builtin_source, "fx-cuda-builtin.cu", NULL, &cuda->builtin, NULL, diag);
  pthread_mutex_unlock (&cuda->builtin_lock);
  if (st != FX_OK)
    return st;
  return fx_cuda_module_get_kernel (cuda->builtin, name, out, diag);
}

fx_status
fx_cuda_builtin_prepare (fx_cuda *cuda, fx_diag *diag)
{
  fx_cuda_kernel *k;
  return builtin_kernel (cuda, "fx_broadcast_scale_f32", &k, diag);
}

void
fx_cuda_builtin_destroy (fx_cuda *cuda)
{
  fx_cuda_module_free (cuda->builtin);
  cuda->builtin = NULL;
}

fx_status
fx_cuda_broadcast_scale (fx_cuda *cuda, fx_cuda_stream *stream, fx_dtype dtype, const fx_cuda_matrix *src,
                         double scale, const fx_cuda_matrix *dst, fx_diag *diag)
{
  char name[64];
  fx_cuda_kernel *kernel;
  long long rows = dst->rows, cols = dst->cols, total;
  long long rs, cs, ors = dst->row_stride, ocs = dst->col_stride;
  unsigned int grid[3] = { 1, 1, 1 }, block[3] = { 256, 1, 1 };
  fx_status st;

  /* the kernels of builtin_source: fx_broadcast_scale_f32, _f64, _f16, _bf16 */
  if (dtype != FX_DTYPE_F32 && dtype != FX_DTYPE_F64 && dtype != FX_DTYPE_F16 && dtype != FX_DTYPE_BF16)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "broadcast on %s", fx_dtype_name (dtype));
  snprintf (name, sizeof name, "fx_broadcast_scale_%s", fx_dtype_abbr (dtype));
  /* src broadcasts to dst's shape: a size-1 dimension repeats (stride 0). */
  if ((src->rows != rows && src->rows != 1) || (src->cols != cols && src->cols != 1))
    return fx_diag_set (diag, FX_ERR_INVALID, "[%lld, %lld] does not broadcast to [%lld, %lld]",
                        (long long) src->rows, (long long) src->cols, rows, cols);
  if (rows < 0 || cols < 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "negative sizes");
  rs = src->rows == 1 ? 0 : src->row_stride;
  cs = src->cols == 1 ? 0 : src->col_stride;
  total = rows * cols;
  if (total == 0)
    return FX_OK;
  if ((st = builtin_kernel (cuda, name, &kernel, diag)) != FX_OK)
    return st;
  {
    long long blocks = (total + 255) / 256, cap = (long long) cuda->info.sm_count * 16;
    grid[0] = (unsigned int) (blocks < cap ? blocks : cap);
  }
  {
    fx_cuda_ptr out = dst->data, in = src->data;
    void *args[] = { &out, &in, &rows, &cols, &rs, &cs, &ors, &ocs, &scale };
    return fx_cuda_launch (kernel, stream, grid, block, 0, args, diag);
  }
}

fx_status
fx_cuda_argreduce (fx_cuda *cuda, fx_cuda_stream *stream, fx_dtype dtype, const fx_cuda_argreduce_desc *d,
                   fx_diag *diag)
{
  const char *name = dtype == FX_DTYPE_F32 ? (d->is_min ? "fx_argmin_f32" : "fx_argmax_f32")
                     : dtype == FX_DTYPE_F64 ? (d->is_min ? "fx_argmin_f64" : "fx_argmax_f64") : NULL;
  fx_cuda_kernel *kernel;
  unsigned int grid[3] = { 1, 1, 1 }, block[3] = { 256, 1, 1 };
  fx_status st;

  if (!name)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "argmax/argmin on %s", fx_dtype_name (dtype));
  if (d->r <= 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "argmax/argmin over an empty dimension");
  if (d->outer * d->inner <= 0)
    return FX_OK;
  if ((st = builtin_kernel (cuda, name, &kernel, diag)) != FX_OK)
    return st;
  {
    /* rows (inner 1): a warp each; columns: a thread each */
    long long threads = d->inner == 1 ? d->outer * 32 : d->outer * d->inner;
    long long blocks = (threads + 255) / 256, cap = (long long) cuda->info.sm_count * 32;
    grid[0] = (unsigned int) (blocks < cap ? blocks : cap);
  }
  fx_cuda_ptr val = d->val, idx = d->idx, src = d->src;
  long long a[10] = { d->outer, d->r, d->inner, d->src_stride[0], d->src_stride[1], d->src_stride[2],
                      d->val_stride[0], d->val_stride[1], d->idx_stride[0], d->idx_stride[1] };
  void *args[] = { &val, &idx, &src, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8], &a[9] };
  return fx_cuda_launch (kernel, stream, grid, block, 0, args, diag);
}

fx_status
fx_cuda_take (fx_cuda *cuda, fx_cuda_stream *stream, size_t elem_size, const fx_cuda_take_desc *d, fx_diag *diag)
{
  const char *name = elem_size == 1 ? "fx_take_b1" : elem_size == 2 ? "fx_take_b2" : elem_size == 4 ? "fx_take_b4"
                     : elem_size == 8 ? "fx_take_b8" : NULL;
  fx_cuda_kernel *kernel;
  unsigned int grid[3] = { 1, 1, 1 }, block[3] = { 256, 1, 1 };
  fx_status st;

  if (!name)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "indexed copy of %zu-byte elements", elem_size);
  long long total = (long long) (d->outer * d->m * d->inner);
  if (total <= 0)
    return FX_OK;
  if ((st = builtin_kernel (cuda, name, &kernel, diag)) != FX_OK)
    return st;
  {
    long long blocks = (total + 255) / 256, cap = (long long) cuda->info.sm_count * 32;
    grid[0] = (unsigned int) (blocks < cap ? blocks : cap);
  }
  fx_cuda_ptr out = d->out, src = d->src, idx = d->idx;
  long long a[12] = { d->outer, d->m, d->inner, d->v, d->out_stride[0], d->out_stride[1], d->out_stride[2],
                      d->src_stride[0], d->src_stride[1], d->src_stride[2], d->idx_stride[0], d->idx_stride[1] };
  long long in_ = d->idx_stride[2];
  void *args[] = { &out, &src, &idx, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8], &a[9], &a[10],
                   &a[11], &in_ };
  return fx_cuda_launch (kernel, stream, grid, block, 0, args, diag);
}
