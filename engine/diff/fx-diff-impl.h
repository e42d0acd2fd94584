/* fx-diff-impl.h: helpers shared by the diff files of engine/diff. */
#pragma once

#include <stdint.h>
#include <stddef.h>

#include "fx/diff.h"

/* FNV-1a over len bytes, continuing from h (0: start). */

/* A key's hash and its position; sorted with fx_diff_hashed_cmp (by hash, then position) for fx_diff_hashed_find. */
typedef struct fx_diff_hashed
{
  uint64_t hash;
  size_t pos;
} fx_diff_hashed;

int fx_diff_hashed_cmp (const void *x, const void *y);
/* The first of the N sorted entries with hash H, or where it would stand (N when past the end). */
size_t fx_diff_hashed_find (const fx_diff_hashed *hs, size_t n, uint64_t h);

/* Pairs keys of a with equal keys of b in order (the k-th a with the k-th b of the same key), among entries whose
   partner is still -1; NULL keys take no part. pa/pb: partner indexes, -1 when unmatched. Returns the pairs made.
   Sorts hashes: O((na + nb) log nb). */
size_t fx_diff_match_keys (const char *const *ka, size_t na, const char *const *kb, size_t nb, long *pa, long *pb);

/* The keys of two lists and their pairing by fx_diff_match_keys: the caller fills ka and kb (NULL keys take no
   part), fx_diff_pairing_match pairs them; pa[i] / pb[j] is the partner's index, -1 while unmatched. */
typedef struct fx_diff_pairing
{
  const char **ka, **kb;
  long *pa, *pb;
  size_t na, nb;
} fx_diff_pairing;

/* Room in arena for na and nb keys, no partners yet. */
fx_diff_pairing fx_diff_pairing_new (fx_arena *arena, size_t na, size_t nb);
size_t fx_diff_pairing_match (fx_diff_pairing *m);

/* Copies the run of decimal digits at *p to *o, or one '#' for it when it has min digits or more (an object id or an
   address, which differs between processes that are the same); advances both past it. */
void fx_diff_mask_digits (const char **p, char **o, size_t min);

/* Diffs two stored runs x and y (fx-diff-runs.c): verdict and times as "run" entries named name under scope;
   inputs, outputs and per-kernel times under detail_scope. */
fx_status fx_diff_run_pair (fx_diff *diff, fx_store *sa, const fx_store_run_row *x, fx_store *sb,
                            const fx_store_run_row *y, const char *scope, const char *name, const char *detail_scope,
                            fx_arena *arena, fx_diag *diag);
