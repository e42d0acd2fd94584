// Generated-style persistent layer norm (no affine) over rows of any length with Welford, then gelu: one block per
// row, a strided loop to accumulate and a second pass to normalize. Needs the prelude.
extern "C" __global__ void __launch_bounds__ (1024)
cuda_per_fused_native_layer_norm_5 (const float *__restrict__ in_ptr0, float *__restrict__ out_ptr0, int xnumel,
                                    int r0_numel, float eps)
{
  __shared__ fx_welford scratch[32];
  int x = blockIdx.x;
  if (x >= xnumel)
    return;
  const float *row = in_ptr0 + (long long) x * r0_numel;
  fx_welford acc = fx_welford_init ();
  for (int r = threadIdx.x; r < r0_numel; r += blockDim.x)
    acc = fx_welford_add (acc, row[r]);
  acc = fx_block_welford (acc, scratch);
  float rstd = rsqrtf (acc.m2 / acc.weight + eps);
  for (int r = threadIdx.x; r < r0_numel; r += blockDim.x)
    out_ptr0[(long long) x * r0_numel + r] = fx_gelu ((row[r] - acc.mean) * rstd);
}
