/* fx-md5.c: MD5 (RFC 1321), for TORCH_TRACE payload checks and input content hashes (not for security). */
#include "fx-md5.h"

#include <stdio.h>
#include <string.h>

static const uint32_t K[64] = {
  0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
  0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
  0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
  0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
  0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
  0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
  0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
  0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

/* The 64 steps unrolled (RFC 1321's reference form): the branchy loop cost a fifth of a trace import. */
#define MD5_ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define MD5_F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MD5_G(x, y, z) ((y) ^ ((z) & ((x) ^ (y))))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define MD5_STEP(f, a, b, c, d, x, k, s) ((a) += f ((b), (c), (d)) + (x) + (k), (a) = MD5_ROTL ((a), (s)) + (b))

static void
md5_block (fx_md5 *md5, const unsigned char *p)
{
  uint32_t w[16];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) p[i * 4] | (uint32_t) p[i * 4 + 1] << 8 | (uint32_t) p[i * 4 + 2] << 16
           | (uint32_t) p[i * 4 + 3] << 24;
  uint32_t a = md5->state[0], b = md5->state[1], c = md5->state[2], d = md5->state[3];
  for (int i = 0; i < 16; i += 4)
    {
      MD5_STEP (MD5_F, a, b, c, d, w[i], K[i], 7);
      MD5_STEP (MD5_F, d, a, b, c, w[i + 1], K[i + 1], 12);
      MD5_STEP (MD5_F, c, d, a, b, w[i + 2], K[i + 2], 17);
      MD5_STEP (MD5_F, b, c, d, a, w[i + 3], K[i + 3], 22);
    }
  for (int i = 16; i < 32; i += 4)
    {
      MD5_STEP (MD5_G, a, b, c, d, w[(5 * i + 1) % 16], K[i], 5);
      MD5_STEP (MD5_G, d, a, b, c, w[(5 * i + 6) % 16], K[i + 1], 9);
      MD5_STEP (MD5_G, c, d, a, b, w[(5 * i + 11) % 16], K[i + 2], 14);
      MD5_STEP (MD5_G, b, c, d, a, w[(5 * i + 16) % 16], K[i + 3], 20);
    }
  for (int i = 32; i < 48; i += 4)
    {
      MD5_STEP (MD5_H, a, b, c, d, w[(3 * i + 5) % 16], K[i], 4);
      MD5_STEP (MD5_H, d, a, b, c, w[(3 * i + 8) % 16], K[i + 1], 11);
      MD5_STEP (MD5_H, c, d, a, b, w[(3 * i + 11) % 16], K[i + 2], 16);
      MD5_STEP (MD5_H, b, c, d, a, w[(3 * i + 14) % 16], K[i + 3], 23);
    }
  for (int i = 48; i < 64; i += 4)
    {
      MD5_STEP (MD5_I, a, b, c, d, w[(7 * i) % 16], K[i], 6);
      MD5_STEP (MD5_I, d, a, b, c, w[(7 * i + 7) % 16], K[i + 1], 10);
      MD5_STEP (MD5_I, c, d, a, b, w[(7 * i + 14) % 16], K[i + 2], 15);
      MD5_STEP (MD5_I, b, c, d, a, w[(7 * i + 21) % 16], K[i + 3], 21);
    }
  md5->state[0] += a;
  md5->state[1] += b;
  md5->state[2] += c;
  md5->state[3] += d;
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
  for (int i = 0; i < 16; i++)
    snprintf (hex + 2 * i, 3, "%02x", (md5->state[i / 4] >> (8 * (i % 4))) & 0xff);
}

void
fx_md5_hex (const void *data, size_t len, char hex[33])
{
  fx_md5 md5;
  fx_md5_init (&md5);
  fx_md5_update (&md5, data, len);
  fx_md5_final_hex (&md5, hex);
}
