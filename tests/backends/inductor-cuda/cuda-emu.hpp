// cuda-emu.hpp: just enough of CUDA to run the inductor's generated kernels on the CPU in a test: one fiber per
// CUDA thread of a block, blocks one after another, __syncthreads / __syncwarp as barriers, warp shuffles through a
// per-warp exchange, __shared__ as function statics (shared by the block's threads; blocks do not overlap). It checks
// the kernels' logic (index math, lanes, reductions, split partials) where there is no GPU; it says nothing about
// speed.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <ucontext.h>
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
#define __constant__

struct emu_dim3
{
  unsigned x, y, z;
};
inline emu_dim3 threadIdx, blockIdx;   // set by the scheduler on every switch
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

// CUDA threads are fibers on one OS thread, switched only at barriers: cheap and deterministic.
struct emu_fiber
{
  ucontext_t ctx;
  unsigned tid;
  bool done;
};
struct emu_barrier
{
  unsigned n, count, gen;
};
inline ucontext_t emu_sched;
inline std::vector<emu_fiber> *emu_fibers;
inline unsigned emu_current;
inline emu_barrier emu_block_bar;
inline emu_barrier emu_warp_bar[32];
inline unsigned long long emu_xchg[32][32];

inline void
emu_yield ()
{
  swapcontext (&(*emu_fibers)[emu_current].ctx, &emu_sched);
}

inline void
emu_wait (emu_barrier &b)
{
  unsigned g = b.gen;
  if (++b.count == b.n)
    {
      b.count = 0;
      b.gen++;
      return;
    }
  while (b.gen == g)
    emu_yield ();
}

inline void
__syncthreads ()
{
  emu_wait (emu_block_bar);
}

inline void
__syncwarp (unsigned mask = 0xffffffffu)
{
  (void) mask;
  emu_wait (emu_warp_bar[threadIdx.x >> 5]);
}

/* __fdividef: CUDA's fast division (2 ulp); the exact quotient here. */
inline float
__fdividef (float a, float b)
{
  return a / b;
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

template <class... P> struct emu_job
{
  void (*k) (P...);
  void *const *args;
};
inline void *emu_job_ptr;
inline void (*emu_job_run) ();

template <class... P>
inline void
emu_run_job ()
{
  emu_job<P...> *j = static_cast<emu_job<P...> *> (emu_job_ptr);
  emu_call (j->k, j->args, std::index_sequence_for<P...> ());
}

inline void
emu_fiber_main ()
{
  emu_job_run ();
  (*emu_fibers)[emu_current].done = true;
  swapcontext (&(*emu_fibers)[emu_current].ctx, &emu_sched);
}

// Runs k over grid blocks of block threads; args are the kernel's pointer arguments in order.
template <class... P>
inline void
emu_launch (void (*k) (P...), unsigned grid, unsigned block, std::initializer_list<void *> args)
{
  const std::size_t stack = 64 * 1024;
  std::vector<void *> a (args);
  a.resize (sizeof... (P) + 1);
  emu_job<P...> job = { k, a.data () };
  emu_job_ptr = &job;
  emu_job_run = emu_run_job<P...>;
  blockDim = { block, 1, 1 };
  gridDim = { grid, 1, 1 };
  std::vector<emu_fiber> fibers (block);
  char *stacks = static_cast<char *> (std::malloc (stack * block));   // not zeroed: 64 MiB at 1024 threads
  emu_fibers = &fibers;
  for (unsigned b = 0; b < grid; b++)
    {
      blockIdx = { b, 0, 0 };
      emu_block_bar = { block, 0, 0 };
      for (unsigned w = 0; w < (block + 31) / 32; w++)
        emu_warp_bar[w] = { block - w * 32 < 32 ? block - w * 32 : 32, 0, 0 };
      for (unsigned t = 0; t < block; t++)
        {
          fibers[t].tid = t;
          fibers[t].done = false;
          getcontext (&fibers[t].ctx);
          fibers[t].ctx.uc_stack.ss_sp = &stacks[stack * t];
          fibers[t].ctx.uc_stack.ss_size = stack;
          fibers[t].ctx.uc_link = nullptr;
          makecontext (&fibers[t].ctx, emu_fiber_main, 0);
        }
      for (unsigned left = block; left > 0;)
        for (unsigned t = 0; t < block; t++)
          if (!fibers[t].done)
            {
              emu_current = t;
              threadIdx = { t, 0, 0 };
              swapcontext (&emu_sched, &fibers[t].ctx);
              if (fibers[t].done)
                left--;
            }
    }
  std::free (stacks);
}
