/* fx-diff-impl.h: helpers shared by the diff files of engine/diff. */
#pragma once

#include <stdint.h>
#include <stddef.h>

/* FNV-1a over len bytes, continuing from h (0: start). */
uint64_t fx_diff_hash (const char *s, size_t len, uint64_t h);

/* Pairs keys of a with equal keys of b in order (the k-th a with the k-th b of the same key), among entries whose
   partner is still -1; NULL keys take no part. pa/pb: partner indexes, -1 when unmatched. Returns the pairs made.
   Sorts hashes: O((na + nb) log nb). */
size_t fx_diff_match_keys (const char *const *ka, size_t na, const char *const *kb, size_t nb, long *pa, long *pb);
