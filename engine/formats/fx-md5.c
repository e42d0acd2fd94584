/* fx-md5.c: MD5 (RFC 1321), for TORCH_TRACE payload checks and input content hashes (not for security). */
#include "fx-md5.h"

#include <string.h>

/* RFC 1321's reference step macros. */
#define MD5_ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define MD5_F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MD5_G(x, y, z) (((x) & (z)) + ((y) & ~(z)))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
/* Word and constant are added first and G's y & ~z does not wait on x: both come off the serial chain through b. */
#define MD5_STEP(f, a, b, c, d, x, k, s) ((a) += (x) + (k), (a) += f ((b), (c), (d)), (a) = MD5_ROTL ((a), (s)) + (b))

/* The 64 steps, each with its message word index and constant; STEP is defined by the block function that
   expands the list. */
#define MD5_STEPS(STEP) \
  STEP (MD5_F, a, b, c, d, 0, 0xd76aa478, 7) \
  STEP (MD5_F, d, a, b, c, 1, 0xe8c7b756, 12) \
  STEP (MD5_F, c, d, a, b, 2, 0x242070db, 17) \
  STEP (MD5_F, b, c, d, a, 3, 0xc1bdceee, 22) \
  STEP (MD5_F, a, b, c, d, 4, 0xf57c0faf, 7) \
  STEP (MD5_F, d, a, b, c, 5, 0x4787c62a, 12) \
  STEP (MD5_F, c, d, a, b, 6, 0xa8304613, 17) \
  STEP (MD5_F, b, c, d, a, 7, 0xfd469501, 22) \
  STEP (MD5_F, a, b, c, d, 8, 0x698098d8, 7) \
  STEP (MD5_F, d, a, b, c, 9, 0x8b44f7af, 12) \
  STEP (MD5_F, c, d, a, b, 10, 0xffff5bb1, 17) \
  STEP (MD5_F, b, c, d, a, 11, 0x895cd7be, 22) \
  STEP (MD5_F, a, b, c, d, 12, 0x6b901122, 7) \
  STEP (MD5_F, d, a, b, c, 13, 0xfd987193, 12) \
  STEP (MD5_F, c, d, a, b, 14, 0xa679438e, 17) \
  STEP (MD5_F, b, c, d, a, 15, 0x49b40821, 22) \
  STEP (MD5_G, a, b, c, d, 1, 0xf61e2562, 5) \
  STEP (MD5_G, d, a, b, c, 6, 0xc040b340, 9) \
  STEP (MD5_G, c, d, a, b, 11, 0x265e5a51, 14) \
  STEP (MD5_G, b, c, d, a, 0, 0xe9b6c7aa, 20) \
  STEP (MD5_G, a, b, c, d, 5, 0xd62f105d, 5) \
  STEP (MD5_G, d, a, b, c, 10, 0x02441453, 9) \
  STEP (MD5_G, c, d, a, b, 15, 0xd8a1e681, 14) \
  STEP (MD5_G, b, c, d, a, 4, 0xe7d3fbc8, 20) \
  STEP (MD5_G, a, b, c, d, 9, 0x21e1cde6, 5) \
  STEP (MD5_G, d, a, b, c, 14, 0xc33707d6, 9) \
  STEP (MD5_G, c, d, a, b, 3, 0xf4d50d87, 14) \
  STEP (MD5_G, b, c, d, a, 8, 0x455a14ed, 20) \
  STEP (MD5_G, a, b, c, d, 13, 0xa9e3e905, 5) \
  STEP (MD5_G, d, a, b, c, 2, 0xfcefa3f8, 9) \
  STEP (MD5_G, c, d, a, b, 7, 0x676f02d9, 14) \
  STEP (MD5_G, b, c, d, a, 12, 0x8d2a4c8a, 20) \
  STEP (MD5_H, a, b, c, d, 5, 0xfffa3942, 4) \
  STEP (MD5_H, d, a, b, c, 8, 0x8771f681, 11) \
  STEP (MD5_H, c, d, a, b, 11, 0x6d9d6122, 16) \
  STEP (MD5_H, b, c, d, a, 14, 0xfde5380c, 23) \
  STEP (MD5_H, a, b, c, d, 1, 0xa4beea44, 4) \
  STEP (MD5_H, d, a, b, c, 4, 0x4bdecfa9, 11) \
  STEP (MD5_H, c, d, a, b, 7, 0xf6bb4b60, 16) \
  STEP (MD5_H, b, c, d, a, 10, 0xbebfbc70, 23) \
  STEP (MD5_H, a, b, c, d, 13, 0x289b7ec6, 4) \
  STEP (MD5_H, d, a, b, c, 0, 0xeaa127fa, 11) \
  STEP (MD5_H, c, d, a, b, 3, 0xd4ef3085, 16) \
  STEP (MD5_H, b, c, d, a, 6, 0x04881d05, 23) \
  STEP (MD5_H, a, b, c, d, 9, 0xd9d4d039, 4) \
  STEP (MD5_H, d, a, b, c, 12, 0xe6db99e5, 11) \
  STEP (MD5_H, c, d, a, b, 15, 0x1fa27cf8, 16) \
  STEP (MD5_H, b, c, d, a, 2, 0xc4ac5665, 23) \
  STEP (MD5_I, a, b, c, d, 0, 0xf4292244, 6) \
  STEP (MD5_I, d, a, b, c, 7, 0x432aff97, 10) \
  STEP (MD5_I, c, d, a, b, 14, 0xab9423a7, 15) \
  STEP (MD5_I, b, c, d, a, 5, 0xfc93a039, 21) \
  STEP (MD5_I, a, b, c, d, 12, 0x655b59c3, 6) \
  STEP (MD5_I, d, a, b, c, 3, 0x8f0ccc92, 10) \
  STEP (MD5_I, c, d, a, b, 10, 0xffeff47d, 15) \
  STEP (MD5_I, b, c, d, a, 1, 0x85845dd1, 21) \
  STEP (MD5_I, a, b, c, d, 8, 0x6fa87e4f, 6) \
  STEP (MD5_I, d, a, b, c, 15, 0xfe2ce6e0, 10) \
  STEP (MD5_I, c, d, a, b, 6, 0xa3014314, 15) \
  STEP (MD5_I, b, c, d, a, 13, 0x4e0811a1, 21) \
  STEP (MD5_I, a, b, c, d, 4, 0xf7537e82, 6) \
  STEP (MD5_I, d, a, b, c, 11, 0xbd3af235, 10) \
  STEP (MD5_I, c, d, a, b, 2, 0x2ad7d2bb, 15) \
  STEP (MD5_I, b, c, d, a, 9, 0xeb86d391, 21)

/* The block's sixteen little-endian message words. */
static inline void
md5_words (uint32_t w[16], const unsigned char *p)
{
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) p[i * 4] | (uint32_t) p[i * 4 + 1] << 8 | (uint32_t) p[i * 4 + 2] << 16
           | (uint32_t) p[i * 4 + 3] << 24;
}

static void
md5_add_state (fx_md5 *md5, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
  md5->state[0] += a;
  md5->state[1] += b;
  md5->state[2] += c;
  md5->state[3] += d;
}

static void
md5_block (fx_md5 *md5, const unsigned char *p)
{
  uint32_t w[16];
  md5_words (w, p);
  uint32_t a = md5->state[0], b = md5->state[1], c = md5->state[2], d = md5->state[3];
#define MD5_STEP1(f, a, b, c, d, i, k, s) MD5_STEP (f, a, b, c, d, w[i], k, s);
  MD5_STEPS (MD5_STEP1)
#undef MD5_STEP1
  md5_add_state (md5, a, b, c, d);
}

/* Two independent messages a block at a time, their steps interleaved: MD5 is one long chain of dependent adds,
   so a single message leaves most of the core idle, and a second chain beside it comes almost free. */
static void
md5_block2 (fx_md5 *m1, const unsigned char *p, fx_md5 *m2, const unsigned char *q)
{
  uint32_t w[16], v[16];
  md5_words (w, p);
  md5_words (v, q);
  uint32_t a = m1->state[0], b = m1->state[1], c = m1->state[2], d = m1->state[3];
  uint32_t a2 = m2->state[0], b2 = m2->state[1], c2 = m2->state[2], d2 = m2->state[3];
#define MD5_STEP2(f, a, b, c, d, i, k, s) \
  MD5_STEP (f, a, b, c, d, w[i], k, s);  \
  MD5_STEP (f, a##2, b##2, c##2, d##2, v[i], k, s);
  MD5_STEPS (MD5_STEP2)
#undef MD5_STEP2
  md5_add_state (m1, a, b, c, d);
  md5_add_state (m2, a2, b2, c2, d2);
}

size_t
fx_md5_update2 (fx_md5 *m1, const void *d1, fx_md5 *m2, const void *d2, size_t len)
{
  const unsigned char *p = d1, *q = d2;
  if (m1->bytes % 64 || m2->bytes % 64)
    return 0;
  size_t n = len / 64 * 64;
  for (size_t i = 0; i < n; i += 64)
    md5_block2 (m1, p + i, m2, q + i);
  m1->bytes += n;
  m2->bytes += n;
  return n;
}

void
fx_md5_init (fx_md5 *md5)
{
  md5->state[0] = 0x67452301;
  md5->state[1] = 0xefcdab89;
  md5->state[2] = 0x98badcfe;
  md5->state[3] = 0x10325476;
  md5->bytes = 0;
}

void
fx_md5_update (fx_md5 *md5, const void *data, size_t len)
{
  const unsigned char *p = data;
  size_t have = (size_t) (md5->bytes % 64);
  md5->bytes += len;
  if (have)
    {
      size_t take = 64 - have < len ? 64 - have : len;
      memcpy (md5->block + have, p, take);
      p += take;
      len -= take;
      if (have + take < 64)
        return;
      md5_block (md5, md5->block);
    }
  for (; len >= 64; p += 64, len -= 64)
    md5_block (md5, p);
  memcpy (md5->block, p, len);
}

void
fx_md5_final_hex (fx_md5 *md5, char hex[33])
{
  uint64_t bits = md5->bytes * 8;
  unsigned char pad[72] = { 0x80 };
  size_t have = (size_t) (md5->bytes % 64);
  size_t padlen = have < 56 ? 56 - have : 120 - have;
  fx_md5_update (md5, pad, padlen);
  unsigned char len[8];
  for (int i = 0; i < 8; i++)
    len[i] = (unsigned char) (bits >> (8 * i));
  fx_md5_update (md5, len, 8);
  /* Not snprintf: an import checks a hash for every payload, and sixteen formatted writes cost more than a short
     payload's blocks. */
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++)
    {
      unsigned byte = (md5->state[i / 4] >> (8 * (i % 4))) & 0xff;
      hex[2 * i] = digits[byte >> 4];
      hex[2 * i + 1] = digits[byte & 15];
    }
  hex[32] = 0;
}

void
fx_md5_hex (const void *data, size_t len, char hex[33])
{
  fx_md5 md5;
  fx_md5_init (&md5);
  fx_md5_update (&md5, data, len);
  fx_md5_final_hex (&md5, hex);
}
