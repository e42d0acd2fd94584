/* fx-import-util.h: what the importers of engine/formats share (private to the folder). */
#pragma once

#include "fx/importers.h"

/* Splits output code into kernels, stores them (ordinals 0..), and records the code's md5 (trailing blank lines
   ignored) and kernel names for linking debug folders to trace compiles. *n_kernels: kernels stored. */
fx_status fx_store_output_code_kernels (fx_store *store, int64_t input, int64_t compile_row, const char *text,
                                        size_t len, int64_t *n_kernels, fx_diag *diag);
