// Generated-style pointwise kernel: out = a + b over xnumel elements, 4-wide vector loads where aligned.
extern "C" __global__ void __launch_bounds__ (256)
cuda_poi_fused_add_0 (const float *__restrict__ in_ptr0, const float *__restrict__ in_ptr1,
                      float *__restrict__ out_ptr0, long long xnumel)
{
  long long xindex = ((long long) blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (xindex + 3 < xnumel && (((unsigned long long) in_ptr0 | (unsigned long long) in_ptr1
                               | (unsigned long long) out_ptr0) & 15) == 0)
    {
      float4 a = *reinterpret_cast<const float4 *> (in_ptr0 + xindex);
      float4 b = *reinterpret_cast<const float4 *> (in_ptr1 + xindex);
      float4 r = make_float4 (a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
      *reinterpret_cast<float4 *> (out_ptr0 + xindex) = r;
      return;
    }
  for (long long i = xindex; i < xindex + 4 && i < xnumel; i++)
    out_ptr0[i] = in_ptr0[i] + in_ptr1[i];
}
