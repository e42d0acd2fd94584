// Generated-style persistent row reduction: one block per row, the row read once, a warp-shuffle block reduction.
template <typename T>
__device__ __forceinline__ T
warp_sum (T v)
{
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync (0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void __launch_bounds__ (1024)
cuda_per_fused_sum_1 (const float *__restrict__ in_ptr0, float *__restrict__ out_ptr0, int xnumel, int rnumel)
{
  __shared__ float partial[32];
  int x = blockIdx.x;
  if (x >= xnumel)
    return;
  const float *row = in_ptr0 + (long long) x * rnumel;
  float acc = 0.0f;
  for (int r = threadIdx.x; r < rnumel; r += blockDim.x)
    acc += row[r];
  acc = warp_sum (acc);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0)
    partial[warp] = acc;
  __syncthreads ();
  if (warp == 0)
    {
      int nwarps = (blockDim.x + 31) >> 5;
      acc = lane < nwarps ? partial[lane] : 0.0f;
      acc = warp_sum (acc);
      if (lane == 0)
        out_ptr0[x] = acc;
    }
}
