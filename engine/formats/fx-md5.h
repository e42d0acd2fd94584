/* fx-md5.h: MD5 (RFC 1321), for TORCH_TRACE payload checks (has_payload) and input content hashes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx/importers.h"

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
/* Adds the same number of whole 64-byte blocks (len rounded down) of d1 to m1 and of d2 to m2, at about the cost
   of one of them; returns the bytes added to each (0 when either holds a partial block: then use fx_md5_update). */
size_t fx_md5_update2 (fx_md5 *m1, const void *d1, fx_md5 *m2, const void *d2, size_t len);

/* The md5 work of one import on a second thread (threaded false, or no thread to be had: the same work done
   inline as batches fill): the md5 of the file's bytes in order, and has_payload checks. Memory stays bounded
   (a few 1 MiB batches); the parser waits when the worker falls behind. False: out of memory. */
typedef struct fx_md5_worker fx_md5_worker;
fx_md5_worker *fx_md5_worker_new (bool threaded);
bool fx_md5_worker_file (fx_md5_worker *w, const void *data, size_t len);
/* want: the record's has_payload; what: its kind, named in the warning's text. */
bool fx_md5_worker_check (fx_md5_worker *w, const void *payload, size_t len, const char *want, const char *what,
                          int64_t line);
/* Waits for the work queued so far: hex (may be NULL) the md5 of the file's bytes, *mismatches the payloads whose
   md5 differs from has_payload, the first FX_IMPORT_EXAMPLES of them in examples (the text of an md5 mismatch
   warning). Call once. */
bool fx_md5_worker_finish (fx_md5_worker *w, char hex[33], int64_t *mismatches, fx_import_example examples[]);
void fx_md5_worker_free (fx_md5_worker *w);
