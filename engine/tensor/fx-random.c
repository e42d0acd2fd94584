/* fx-random.c: the seeded generator behind random inputs and random ops (xoshiro256** seeded by splitmix64). */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "fx/tensor.h"

#include <math.h>

static uint64_t
splitmix64 (uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void
fx_generator_seed (fx_generator *gen, uint64_t seed)
{
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    gen->s[i] = splitmix64 (&x);
  gen->has_spare = false;
  gen->spare = 0;
}

static inline uint64_t
rotl (uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

uint64_t
fx_generator_next_u64 (fx_generator *gen)
{
  uint64_t *s = gen->s;
  uint64_t result = rotl (s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl (s[3], 45);
  return result;
}

double
fx_generator_uniform (fx_generator *gen)
{
  return (double) (fx_generator_next_u64 (gen) >> 11) * 0x1.0p-53;
}

double
fx_generator_normal (fx_generator *gen)
{
  if (gen->has_spare)
    {
      gen->has_spare = false;
      return gen->spare;
    }
  /* Box-Muller; u1 in (0, 1] so log never sees 0 */
  double u1 = 1.0 - fx_generator_uniform (gen);
  double u2 = fx_generator_uniform (gen);
  double r = sqrt (-2.0 * log (u1));
  gen->spare = r * sin (2.0 * M_PI * u2);
  gen->has_spare = true;
  return r * cos (2.0 * M_PI * u2);
}

void
fx_tensor_fill_uniform (fx_tensor *t, fx_generator *gen, double low, double high)
{
  int64_t n = fx_tensor_numel (t);
  for (int64_t i = 0; i < n; i++)
    fx_tensor_set_f64 (t, i, low + (high - low) * fx_generator_uniform (gen));
}

void
fx_tensor_fill_normal (fx_tensor *t, fx_generator *gen, double mean, double std)
{
  int64_t n = fx_tensor_numel (t);
  if (t->dtype == FX_DTYPE_F32 && fx_tensor_is_contiguous (t))
    {
      float *p = fx_tensor_data (t);
      for (int64_t i = 0; i < n; i++)
        p[i] = (float) (mean + std * fx_generator_normal (gen));
      return;
    }
  for (int64_t i = 0; i < n; i++)
    fx_tensor_set_f64 (t, i, mean + std * fx_generator_normal (gen));
}

void
fx_tensor_fill_randint (fx_tensor *t, fx_generator *gen, int64_t low, int64_t high)
{
  int64_t n = fx_tensor_numel (t);
  uint64_t span = high > low ? (uint64_t) (high - low) : 1;
  for (int64_t i = 0; i < n; i++)
    fx_tensor_set_i64 (t, i, low + (int64_t) (fx_generator_next_u64 (gen) % span));
}
