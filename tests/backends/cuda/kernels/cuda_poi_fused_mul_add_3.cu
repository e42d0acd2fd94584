// Generated-style small pointwise step (x = x * a + b, in place): the unit of the launch-bound chain that CUDA
// graphs replay.
extern "C" __global__ void __launch_bounds__ (256)
cuda_poi_fused_mul_add_3 (float *__restrict__ in_out_ptr0, float a, float b, int xnumel)
{
  int xindex = blockIdx.x * blockDim.x + threadIdx.x;
  if (xindex < xnumel)
    in_out_ptr0[xindex] = in_out_ptr0[xindex] * a + b;
}
