// Generated-style looped reduction with Welford: mean and biased variance per row, combined across the block.
struct welford
{
  float mean, m2, n;
};

__device__ __forceinline__ welford
welford_combine (welford a, welford b)
{
  float n = a.n + b.n;
  if (n == 0.0f)
    return a;
  float delta = b.mean - a.mean;
  float wb = b.n / n;
  welford r;
  r.mean = a.mean + delta * wb;
  r.m2 = a.m2 + b.m2 + delta * delta * a.n * wb;
  r.n = n;
  return r;
}

extern "C" __global__ void __launch_bounds__ (256)
cuda_red_fused_var_mean_2 (const float *__restrict__ in_ptr0, float *__restrict__ out_mean,
                           float *__restrict__ out_var, int xnumel, int rnumel)
{
  __shared__ welford partial[32];
  int x = blockIdx.x;
  if (x >= xnumel)
    return;
  const float *row = in_ptr0 + (long long) x * rnumel;
  welford acc = { 0.0f, 0.0f, 0.0f };
  for (int r = threadIdx.x; r < rnumel; r += blockDim.x)
    {
      float v = row[r];
      acc.n += 1.0f;
      float delta = v - acc.mean;
      acc.mean += delta / acc.n;
      acc.m2 += delta * (v - acc.mean);
    }
  for (int offset = 16; offset > 0; offset >>= 1)
    {
      welford o;
      o.mean = __shfl_down_sync (0xffffffffu, acc.mean, offset);
      o.m2 = __shfl_down_sync (0xffffffffu, acc.m2, offset);
      o.n = __shfl_down_sync (0xffffffffu, acc.n, offset);
      acc = welford_combine (acc, o);
    }
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0)
    partial[warp] = acc;
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      welford total = partial[0];
      for (int w = 1; w < (int) ((blockDim.x + 31) >> 5); w++)
        total = welford_combine (total, partial[w]);
      out_mean[x] = total.mean;
      out_var[x] = total.n > 0.0f ? total.m2 / total.n : 0.0f;
    }
}
