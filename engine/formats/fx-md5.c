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

static void
md5_block (fx_md5 *md5, const unsigned char *p)
{
  /* Each step written out with its message index and constant. */
  uint32_t w[16];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) p[i * 4] | (uint32_t) p[i * 4 + 1] << 8 | (uint32_t) p[i * 4 + 2] << 16
           | (uint32_t) p[i * 4 + 3] << 24;
  uint32_t a = md5->state[0], b = md5->state[1], c = md5->state[2], d = md5->state[3];
  MD5_STEP (MD5_F, a, b, c, d, w[0], 0xd76aa478, 7);
  MD5_STEP (MD5_F, d, a, b, c, w[1], 0xe8c7b756, 12);
  MD5_STEP (MD5_F, c, d, a, b, w[2], 0x242070db, 17);
  MD5_STEP (MD5_F, b, c, d, a, w[3], 0xc1bdceee, 22);
  MD5_STEP (MD5_F, a, b, c, d, w[4], 0xf57c0faf, 7);
  MD5_STEP (MD5_F, d, a, b, c, w[5], 0x4787c62a, 12);
  MD5_STEP (MD5_F, c, d, a, b, w[6], 0xa8304613, 17);
  MD5_STEP (MD5_F, b, c, d, a, w[7], 0xfd469501, 22);
  MD5_STEP (MD5_F, a, b, c, d, w[8], 0x698098d8, 7);
  MD5_STEP (MD5_F, d, a, b, c, w[9], 0x8b44f7af, 12);
  MD5_STEP (MD5_F, c, d, a, b, w[10], 0xffff5bb1, 17);
  MD5_STEP (MD5_F, b, c, d, a, w[11], 0x895cd7be, 22);
  MD5_STEP (MD5_F, a, b, c, d, w[12], 0x6b901122, 7);
  MD5_STEP (MD5_F, d, a, b, c, w[13], 0xfd987193, 12);
  MD5_STEP (MD5_F, c, d, a, b, w[14], 0xa679438e, 17);
  MD5_STEP (MD5_F, b, c, d, a, w[15], 0x49b40821, 22);
  MD5_STEP (MD5_G, a, b, c, d, w[1], 0xf61e2562, 5);
  MD5_STEP (MD5_G, d, a, b, c, w[6], 0xc040b340, 9);
  MD5_STEP (MD5_G, c, d, a, b, w[11], 0x265e5a51, 14);
  MD5_STEP (MD5_G, b, c, d, a, w[0], 0xe9b6c7aa, 20);
  MD5_STEP (MD5_G, a, b, c, d, w[5], 0xd62f105d, 5);
  MD5_STEP (MD5_G, d, a, b, c, w[10], 0x02441453, 9);
  MD5_STEP (MD5_G, c, d, a, b, w[15], 0xd8a1e681, 14);
  MD5_STEP (MD5_G, b, c, d, a, w[4], 0xe7d3fbc8, 20);
  MD5_STEP (MD5_G, a, b, c, d, w[9], 0x21e1cde6, 5);
  MD5_STEP (MD5_G, d, a, b, c, w[14], 0xc33707d6, 9);
  MD5_STEP (MD5_G, c, d, a, b, w[3], 0xf4d50d87, 14);
  MD5_STEP (MD5_G, b, c, d, a, w[8], 0x455a14ed, 20);
  MD5_STEP (MD5_G, a, b, c, d, w[13], 0xa9e3e905, 5);
  MD5_STEP (MD5_G, d, a, b, c, w[2], 0xfcefa3f8, 9);
  MD5_STEP (MD5_G, c, d, a, b, w[7], 0x676f02d9, 14);
  MD5_STEP (MD5_G, b, c, d, a, w[12], 0x8d2a4c8a, 20);
  MD5_STEP (MD5_H, a, b, c, d, w[5], 0xfffa3942, 4);
  MD5_STEP (MD5_H, d, a, b, c, w[8], 0x8771f681, 11);
  MD5_STEP (MD5_H, c, d, a, b, w[11], 0x6d9d6122, 16);
  MD5_STEP (MD5_H, b, c, d, a, w[14], 0xfde5380c, 23);
  MD5_STEP (MD5_H, a, b, c, d, w[1], 0xa4beea44, 4);
  MD5_STEP (MD5_H, d, a, b, c, w[4], 0x4bdecfa9, 11);
  MD5_STEP (MD5_H, c, d, a, b, w[7], 0xf6bb4b60, 16);
  MD5_STEP (MD5_H, b, c, d, a, w[10], 0xbebfbc70, 23);
  MD5_STEP (MD5_H, a, b, c, d, w[13], 0x289b7ec6, 4);
  MD5_STEP (MD5_H, d, a, b, c, w[0], 0xeaa127fa, 11);
  MD5_STEP (MD5_H, c, d, a, b, w[3], 0xd4ef3085, 16);
  MD5_STEP (MD5_H, b, c, d, a, w[6], 0x04881d05, 23);
  MD5_STEP (MD5_H, a, b, c, d, w[9], 0xd9d4d039, 4);
  MD5_STEP (MD5_H, d, a, b, c, w[12], 0xe6db99e5, 11);
  MD5_STEP (MD5_H, c, d, a, b, w[15], 0x1fa27cf8, 16);
  MD5_STEP (MD5_H, b, c, d, a, w[2], 0xc4ac5665, 23);
  MD5_STEP (MD5_I, a, b, c, d, w[0], 0xf4292244, 6);
  MD5_STEP (MD5_I, d, a, b, c, w[7], 0x432aff97, 10);
  MD5_STEP (MD5_I, c, d, a, b, w[14], 0xab9423a7, 15);
  MD5_STEP (MD5_I, b, c, d, a, w[5], 0xfc93a039, 21);
  MD5_STEP (MD5_I, a, b, c, d, w[12], 0x655b59c3, 6);
  MD5_STEP (MD5_I, d, a, b, c, w[3], 0x8f0ccc92, 10);
  MD5_STEP (MD5_I, c, d, a, b, w[10], 0xffeff47d, 15);
  MD5_STEP (MD5_I, b, c, d, a, w[1], 0x85845dd1, 21);
  MD5_STEP (MD5_I, a, b, c, d, w[8], 0x6fa87e4f, 6);
  MD5_STEP (MD5_I, d, a, b, c, w[15], 0xfe2ce6e0, 10);
  MD5_STEP (MD5_I, c, d, a, b, w[6], 0xa3014314, 15);
  MD5_STEP (MD5_I, b, c, d, a, w[13], 0x4e0811a1, 21);
  MD5_STEP (MD5_I, a, b, c, d, w[4], 0xf7537e82, 6);
  MD5_STEP (MD5_I, d, a, b, c, w[11], 0xbd3af235, 10);
  MD5_STEP (MD5_I, c, d, a, b, w[2], 0x2ad7d2bb, 15);
  MD5_STEP (MD5_I, b, c, d, a, w[9], 0xeb86d391, 21);
  md5->state[0] += a;
  md5->state[1] += b;
  md5->state[2] += c;
  md5->state[3] += d;
}

/* Two independent messages a block at a time, their steps interleaved: MD5 is one long chain of dependent adds,
   so a single message leaves most of the core idle, and a second chain beside it comes almost free. */
static void
md5_block2 (fx_md5 *m1, const unsigned char *p, fx_md5 *m2, const unsigned char *q)
{
  uint32_t w[16], v[16];
  for (int i = 0; i < 16; i++)
    {
      w[i] = (uint32_t) p[i * 4] | (uint32_t) p[i * 4 + 1] << 8 | (uint32_t) p[i * 4 + 2] << 16
             | (uint32_t) p[i * 4 + 3] << 24;
      v[i] = (uint32_t) q[i * 4] | (uint32_t) q[i * 4 + 1] << 8 | (uint32_t) q[i * 4 + 2] << 16
             | (uint32_t) q[i * 4 + 3] << 24;
    }
  uint32_t a = m1->state[0], b = m1->state[1], c = m1->state[2], d = m1->state[3];
  uint32_t a2 = m2->state[0], b2 = m2->state[1], c2 = m2->state[2], d2 = m2->state[3];
  MD5_STEP (MD5_F, a, b, c, d, w[0], 0xd76aa478, 7);
  MD5_STEP (MD5_F, a2, b2, c2, d2, v[0], 0xd76aa478, 7);
  MD5_STEP (MD5_F, d, a, b, c, w[1], 0xe8c7b756, 12);
  MD5_STEP (MD5_F, d2, a2, b2, c2, v[1], 0xe8c7b756, 12);
  MD5_STEP (MD5_F, c, d, a, b, w[2], 0x242070db, 17);
  MD5_STEP (MD5_F, c2, d2, a2, b2, v[2], 0x242070db, 17);
  MD5_STEP (MD5_F, b, c, d, a, w[3], 0xc1bdceee, 22);
  MD5_STEP (MD5_F, b2, c2, d2, a2, v[3], 0xc1bdceee, 22);
  MD5_STEP (MD5_F, a, b, c, d, w[4], 0xf57c0faf, 7);
  MD5_STEP (MD5_F, a2, b2, c2, d2, v[4], 0xf57c0faf, 7);
  MD5_STEP (MD5_F, d, a, b, c, w[5], 0x4787c62a, 12);
  MD5_STEP (MD5_F, d2, a2, b2, c2, v[5], 0x4787c62a, 12);
  MD5_STEP (MD5_F, c, d, a, b, w[6], 0xa8304613, 17);
  MD5_STEP (MD5_F, c2, d2, a2, b2, v[6], 0xa8304613, 17);
  MD5_STEP (MD5_F, b, c, d, a, w[7], 0xfd469501, 22);
  MD5_STEP (MD5_F, b2, c2, d2, a2, v[7], 0xfd469501, 22);
  MD5_STEP (MD5_F, a, b, c, d, w[8], 0x698098d8, 7);
  MD5_STEP (MD5_F, a2, b2, c2, d2, v[8], 0x698098d8, 7);
  MD5_STEP (MD5_F, d, a, b, c, w[9], 0x8b44f7af, 12);
  MD5_STEP (MD5_F, d2, a2, b2, c2, v[9], 0x8b44f7af, 12);
  MD5_STEP (MD5_F, c, d, a, b, w[10], 0xffff5bb1, 17);
  MD5_STEP (MD5_F, c2, d2, a2, b2, v[10], 0xffff5bb1, 17);
  MD5_STEP (MD5_F, b, c, d, a, w[11], 0x895cd7be, 22);
  MD5_STEP (MD5_F, b2, c2, d2, a2, v[11], 0x895cd7be, 22);
  MD5_STEP (MD5_F, a, b, c, d, w[12], 0x6b901122, 7);
  MD5_STEP (MD5_F, a2, b2, c2, d2, v[12], 0x6b901122, 7);
  MD5_STEP (MD5_F, d, a, b, c, w[13], 0xfd987193, 12);
  MD5_STEP (MD5_F, d2, a2, b2, c2, v[13], 0xfd987193, 12);
  MD5_STEP (MD5_F, c, d, a, b, w[14], 0xa679438e, 17);
  MD5_STEP (MD5_F, c2, d2, a2, b2, v[14], 0xa679438e, 17);
  MD5_STEP (MD5_F, b, c, d, a, w[15], 0x49b40821, 22);
  MD5_STEP (MD5_F, b2, c2, d2, a2, v[15], 0x49b40821, 22);
  MD5_STEP (MD5_G, a, b, c, d, w[1], 0xf61e2562, 5);
  MD5_STEP (MD5_G, a2, b2, c2, d2, v[1], 0xf61e2562, 5);
  MD5_STEP (MD5_G, d, a, b, c, w[6], 0xc040b340, 9);
  MD5_STEP (MD5_G, d2, a2, b2, c2, v[6], 0xc040b340, 9);
  MD5_STEP (MD5_G, c, d, a, b, w[11], 0x265e5a51, 14);
  MD5_STEP (MD5_G, c2, d2, a2, b2, v[11], 0x265e5a51, 14);
  MD5_STEP (MD5_G, b, c, d, a, w[0], 0xe9b6c7aa, 20);
  MD5_STEP (MD5_G, b2, c2, d2, a2, v[0], 0xe9b6c7aa, 20);
  MD5_STEP (MD5_G, a, b, c, d, w[5], 0xd62f105d, 5);
  MD5_STEP (MD5_G, a2, b2, c2, d2, v[5], 0xd62f105d, 5);
  MD5_STEP (MD5_G, d, a, b, c, w[10], 0x02441453, 9);
  MD5_STEP (MD5_G, d2, a2, b2, c2, v[10], 0x02441453, 9);
  MD5_STEP (MD5_G, c, d, a, b, w[15], 0xd8a1e681, 14);
  MD5_STEP (MD5_G, c2, d2, a2, b2, v[15], 0xd8a1e681, 14);
  MD5_STEP (MD5_G, b, c, d, a, w[4], 0xe7d3fbc8, 20);
  MD5_STEP (MD5_G, b2, c2, d2, a2, v[4], 0xe7d3fbc8, 20);
  MD5_STEP (MD5_G, a, b, c, d, w[9], 0x21e1cde6, 5);
  MD5_STEP (MD5_G, a2, b2, c2, d2, v[9], 0x21e1cde6, 5);
  MD5_STEP (MD5_G, d, a, b, c, w[14], 0xc33707d6, 9);
  MD5_STEP (MD5_G, d2, a2, b2, c2, v[14], 0xc33707d6, 9);
  MD5_STEP (MD5_G, c, d, a, b, w[3], 0xf4d50d87, 14);
  MD5_STEP (MD5_G, c2, d2, a2, b2, v[3], 0xf4d50d87, 14);
  MD5_STEP (MD5_G, b, c, d, a, w[8], 0x455a14ed, 20);
  MD5_STEP (MD5_G, b2, c2, d2, a2, v[8], 0x455a14ed, 20);
  MD5_STEP (MD5_G, a, b, c, d, w[13], 0xa9e3e905, 5);
  MD5_STEP (MD5_G, a2, b2, c2, d2, v[13], 0xa9e3e905, 5);
  MD5_STEP (MD5_G, d, a, b, c, w[2], 0xfcefa3f8, 9);
  MD5_STEP (MD5_G, d2, a2, b2, c2, v[2], 0xfcefa3f8, 9);
  MD5_STEP (MD5_G, c, d, a, b, w[7], 0x676f02d9, 14);
  MD5_STEP (MD5_G, c2, d2, a2, b2, v[7], 0x676f02d9, 14);
  MD5_STEP (MD5_G, b, c, d, a, w[12], 0x8d2a4c8a, 20);
  MD5_STEP (MD5_G, b2, c2, d2, a2, v[12], 0x8d2a4c8a, 20);
  MD5_STEP (MD5_H, a, b, c, d, w[5], 0xfffa3942, 4);
  MD5_STEP (MD5_H, a2, b2, c2, d2, v[5], 0xfffa3942, 4);
  MD5_STEP (MD5_H, d, a, b, c, w[8], 0x8771f681, 11);
  MD5_STEP (MD5_H, d2, a2, b2, c2, v[8], 0x8771f681, 11);
  MD5_STEP (MD5_H, c, d, a, b, w[11], 0x6d9d6122, 16);
  MD5_STEP (MD5_H, c2, d2, a2, b2, v[11], 0x6d9d6122, 16);
  MD5_STEP (MD5_H, b, c, d, a, w[14], 0xfde5380c, 23);
  MD5_STEP (MD5_H, b2, c2, d2, a2, v[14], 0xfde5380c, 23);
  MD5_STEP (MD5_H, a, b, c, d, w[1], 0xa4beea44, 4);
  MD5_STEP (MD5_H, a2, b2, c2, d2, v[1], 0xa4beea44, 4);
  MD5_STEP (MD5_H, d, a, b, c, w[4], 0x4bdecfa9, 11);
  MD5_STEP (MD5_H, d2, a2, b2, c2, v[4], 0x4bdecfa9, 11);
  MD5_STEP (MD5_H, c, d, a, b, w[7], 0xf6bb4b60, 16);
  MD5_STEP (MD5_H, c2, d2, a2, b2, v[7], 0xf6bb4b60, 16);
  MD5_STEP (MD5_H, b, c, d, a, w[10], 0xbebfbc70, 23);
  MD5_STEP (MD5_H, b2, c2, d2, a2, v[10], 0xbebfbc70, 23);
  MD5_STEP (MD5_H, a, b, c, d, w[13], 0x289b7ec6, 4);
  MD5_STEP (MD5_H, a2, b2, c2, d2, v[13], 0x289b7ec6, 4);
  MD5_STEP (MD5_H, d, a, b, c, w[0], 0xeaa127fa, 11);
  MD5_STEP (MD5_H, d2, a2, b2, c2, v[0], 0xeaa127fa, 11);
  MD5_STEP (MD5_H, c, d, a, b, w[3], 0xd4ef3085, 16);
  MD5_STEP (MD5_H, c2, d2, a2, b2, v[3], 0xd4ef3085, 16);
  MD5_STEP (MD5_H, b, c, d, a, w[6], 0x04881d05, 23);
  MD5_STEP (MD5_H, b2, c2, d2, a2, v[6], 0x04881d05, 23);
  MD5_STEP (MD5_H, a, b, c, d, w[9], 0xd9d4d039, 4);
  MD5_STEP (MD5_H, a2, b2, c2, d2, v[9], 0xd9d4d039, 4);
  MD5_STEP (MD5_H, d, a, b, c, w[12], 0xe6db99e5, 11);
  MD5_STEP (MD5_H, d2, a2, b2, c2, v[12], 0xe6db99e5, 11);
  MD5_STEP (MD5_H, c, d, a, b, w[15], 0x1fa27cf8, 16);
  MD5_STEP (MD5_H, c2, d2, a2, b2, v[15], 0x1fa27cf8, 16);
  MD5_STEP (MD5_H, b, c, d, a, w[2], 0xc4ac5665, 23);
  MD5_STEP (MD5_H, b2, c2, d2, a2, v[2], 0xc4ac5665, 23);
  MD5_STEP (MD5_I, a, b, c, d, w[0], 0xf4292244, 6);
  MD5_STEP (MD5_I, a2, b2, c2, d2, v[0], 0xf4292244, 6);
  MD5_STEP (MD5_I, d, a, b, c, w[7], 0x432aff97, 10);
  MD5_STEP (MD5_I, d2, a2, b2, c2, v[7], 0x432aff97, 10);
  MD5_STEP (MD5_I, c, d, a, b, w[14], 0xab9423a7, 15);
  MD5_STEP (MD5_I, c2, d2, a2, b2, v[14], 0xab9423a7, 15);
  MD5_STEP (MD5_I, b, c, d, a, w[5], 0xfc93a039, 21);
  MD5_STEP (MD5_I, b2, c2, d2, a2, v[5], 0xfc93a039, 21);
  MD5_STEP (MD5_I, a, b, c, d, w[12], 0x655b59c3, 6);
  MD5_STEP (MD5_I, a2, b2, c2, d2, v[12], 0x655b59c3, 6);
  MD5_STEP (MD5_I, d, a, b, c, w[3], 0x8f0ccc92, 10);
  MD5_STEP (MD5_I, d2, a2, b2, c2, v[3], 0x8f0ccc92, 10);
  MD5_STEP (MD5_I, c, d, a, b, w[10], 0xffeff47d, 15);
  MD5_STEP (MD5_I, c2, d2, a2, b2, v[10], 0xffeff47d, 15);
  MD5_STEP (MD5_I, b, c, d, a, w[1], 0x85845dd1, 21);
  MD5_STEP (MD5_I, b2, c2, d2, a2, v[1], 0x85845dd1, 21);
  MD5_STEP (MD5_I, a, b, c, d, w[8], 0x6fa87e4f, 6);
  MD5_STEP (MD5_I, a2, b2, c2, d2, v[8], 0x6fa87e4f, 6);
  MD5_STEP (MD5_I, d, a, b, c, w[15], 0xfe2ce6e0, 10);
  MD5_STEP (MD5_I, d2, a2, b2, c2, v[15], 0xfe2ce6e0, 10);
  MD5_STEP (MD5_I, c, d, a, b, w[6], 0xa3014314, 15);
  MD5_STEP (MD5_I, c2, d2, a2, b2, v[6], 0xa3014314, 15);
  MD5_STEP (MD5_I, b, c, d, a, w[13], 0x4e0811a1, 21);
  MD5_STEP (MD5_I, b2, c2, d2, a2, v[13], 0x4e0811a1, 21);
  MD5_STEP (MD5_I, a, b, c, d, w[4], 0xf7537e82, 6);
  MD5_STEP (MD5_I, a2, b2, c2, d2, v[4], 0xf7537e82, 6);
  MD5_STEP (MD5_I, d, a, b, c, w[11], 0xbd3af235, 10);
  MD5_STEP (MD5_I, d2, a2, b2, c2, v[11], 0xbd3af235, 10);
  MD5_STEP (MD5_I, c, d, a, b, w[2], 0x2ad7d2bb, 15);
  MD5_STEP (MD5_I, c2, d2, a2, b2, v[2], 0x2ad7d2bb, 15);
  MD5_STEP (MD5_I, b, c, d, a, w[9], 0xeb86d391, 21);
  MD5_STEP (MD5_I, b2, c2, d2, a2, v[9], 0xeb86d391, 21);
  m1->state[0] += a;
  m1->state[1] += b;
  m1->state[2] += c;
  m1->state[3] += d;
  m2->state[0] += a2;
  m2->state[1] += b2;
  m2->state[2] += c2;
  m2->state[3] += d2;
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
