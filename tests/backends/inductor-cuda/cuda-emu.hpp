// cuda-emu.hpp: just enough of CUDA to run the inductor's generated kernels on the CPU in a test: one std::thread per
// CUDA thread of a block, blocks one after another, __syncthreads / __syncwarp as barriers, warp shuffles through a
// per-warp exchange, __shared__ as function statics (shared by the block's threads; blocks do not overlap). It checks
// the kernels' logic (index math, lanes, reductions, split partials) where there is no GPU; it says nothing about
// speed.
#pragma once

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <thread>
#include <utility>
#include <vector>

using std::acos;
using std::asin;
using std::atan;
using std::atan2;
using std::ceil;
using std::cos;
using std::cosh;
using std::erf;
using std::erfc;
using std::exp;
using std::exp2;
using std::expm1;
using std::fabs;
using std::floor;
using std::fmod;
using std::isinf;
using std::isnan;
using std::log;
using std::log10;
using std::log1p;
using std::log2;
using std::nearbyint;
using std::pow;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;
using std::trunc;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static

struct emu_dim3
{
  unsigned x, y, z;
};
inline thread_local emu_dim3 threadIdx, blockIdx;
inline emu_dim3 blockDim, gridDim;

struct alignas (16) float4
{
  float x, y, z, w;
};
inline float4
make_float4 (float x, float y, float z, float w)
{
  float4 r = { x, y, z, w };
  return r;
}

inline float
__int_as_float (int i)
{
  float f;
  std::memcpy (&f, &i, 4);
  return f;
}

inline std::barrier<> *emu_block_bar;
inline std::barrier<> *emu_warp_bar[32];
inline unsigned long long emu_xchg[32][32];

inline void
__syncthreads ()
{
  emu_block_bar->arrive_and_wait ();
}

inline void
__syncwarp (unsigned mask = 0xffffffffu)
{
  (void) mask;
  emu_warp_bar[threadIdx.x >> 5]->arrive_and_wait ();
}

template <typename T>
inline T
__shfl_xor_sync (unsigned mask, T v, int o)
{
  static_assert (sizeof (T) <= 8, "shuffle of at most 8 bytes");
  unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  unsigned long long bits = 0;
  std::memcpy (&bits, &v, sizeof v);
  __syncwarp (mask);
  emu_xchg[w][lane] = bits;
  __syncwarp (mask);
  T r;
  std::memcpy (&r, &emu_xchg[w][lane ^ (unsigned) o], sizeof r);
  return r;
}

template <class... P, std::size_t... I>
inline void
emu_call (void (*k) (P...), void *const *a, std::index_sequence<I...>)
{
  k (static_cast<P> (a[I])...);
}

// Runs k over grid blocks of block threads; args are the kernel's pointer arguments in order.
template <class... P>
inline void
emu_launch (void (*k) (P...), unsigned grid, unsigned block, std::initializer_list<void *> args)
{
  std::vector<void *> a (args);
  a.resize (sizeof... (P) + 1);
  blockDim = { block, 1, 1 };
  gridDim = { grid, 1, 1 };
  std::barrier<> block_bar (block), end_bar (block);
  std::vector<std::barrier<> *> warps;
  for (unsigned w = 0; w < (block + 31) / 32; w++)
    {
      warps.push_back (new std::barrier<> (block - w * 32 < 32 ? block - w * 32 : 32));
      emu_warp_bar[w] = warps.back ();
    }
  emu_block_bar = &block_bar;
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < block; t++)
    threads.emplace_back ([&, t] () {
      threadIdx = { t, 0, 0 };
      for (unsigned b = 0; b < grid; b++)
        {
          blockIdx = { b, 0, 0 };
          emu_call (k, a.data (), std::index_sequence_for<P...> ());
          end_bar.arrive_and_wait ();
        }
    });
  for (auto &th : threads)
    th.join ();
  for (auto *w : warps)
    delete w;
}
