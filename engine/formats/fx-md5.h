/* fx-md5.h: MD5 (RFC 1321), for TORCH_TRACE payload checks (has_payload) and input content hashes. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct fx_md5
{
  uint32_t state[4];
  uint64_t bytes;
  unsigned char block[64];
} fx_md5;

void fx_md5_init (fx_md5 *md5);
void fx_md5_update (fx_md5 *md5, const void *data, size_t len);
/* Writes 32 lowercase hex digits and a NUL into hex. */
void fx_md5_final_hex (fx_md5 *md5, char hex[33]);
void fx_md5_hex (const void *data, size_t len, char hex[33]);
