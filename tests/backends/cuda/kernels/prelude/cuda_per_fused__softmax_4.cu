// Generated-style persistent softmax over rows of 4096 (specialized on the static shape, as Inductor does): each
// thread keeps its 8 elements in registers (two 16-byte loads), one read and one write of the row. Needs the prelude.
#define R0_NUMEL 4096
#define NTHREADS 512
#define VEC_PER_THREAD (R0_NUMEL / NTHREADS / 4)

extern "C" __global__ void __launch_bounds__ (NTHREADS)
cuda_per_fused__softmax_4 (const float *__restrict__ in_ptr0, float *__restrict__ out_ptr0, int xnumel)
{
  __shared__ float scratch[32];
  int x = blockIdx.x;
  if (x >= xnumel)
    return;
  const float4 *row = reinterpret_cast<const float4 *> (in_ptr0 + (long long) x * R0_NUMEL);
  float4 *out = reinterpret_cast<float4 *> (out_ptr0 + (long long) x * R0_NUMEL);
  float4 v[VEC_PER_THREAD];
  float m = FX_NEG_INF;
#pragma unroll
  for (int i = 0; i < VEC_PER_THREAD; i++)
    {
      v[i] = row[threadIdx.x + i * NTHREADS];
      m = fx_maximum (fx_maximum (m, v[i].x), fx_maximum (v[i].y, fx_maximum (v[i].z, v[i].w)));
    }
  m = fx_block_max (m, scratch);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < VEC_PER_THREAD; i++)
    {
      v[i].x = expf (v[i].x - m);
      v[i].y = expf (v[i].y - m);
      v[i].z = expf (v[i].z - m);
      v[i].w = expf (v[i].w - m);
      s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
  s = fx_block_sum (s, scratch);
  float r = 1.0f / s;
#pragma unroll
  for (int i = 0; i < VEC_PER_THREAD; i++)
    out[threadIdx.x + i * NTHREADS] = make_float4 (v[i].x * r, v[i].y * r, v[i].z * r, v[i].w * r);
}
