/* fx-import-util.h: what the importers of engine/formats share (private to the folder). */
#pragma once

#include "fx/importers.h"

#include <stdio.h>

/* Splits output code into kernels and stores them (ordinals first_ordinal..). part NULL: records the code's md5
   (trailing blank lines ignored) and kernel names for linking debug folders to trace compiles; else the kernels are
   marked of that part (a training compile's backward code, stored after its forward's and not linked: the
   compile's link is its forward's). *n_kernels: kernels stored. */
fx_status fx_store_output_code_kernels (fx_store *store, int64_t input, int64_t compile_row, const char *text,
                                        size_t len, int first_ordinal, const char *part, int64_t *n_kernels,
                                        fx_diag *diag);

/* ------------------------------------------------------------------ files (fx-import-file.c) */

/* Begins the store transaction for a new input with this md5. False when not to import: *st says why (an error, or
   FX_OK with stats->already_imported set when the store has the input already); no transaction is open then. */
bool fx_import_begin_input (fx_store *store, const char *hash, fx_import_stats *stats, fx_status *st, fx_diag *diag);

/* The longest line the importers keep (fx_import_set_max_line in fx/importers.h sets it). */
size_t fx_import_max_line (void);

/* Opens path for reading when it is a regular file; a FIFO, a device (/dev/zero), a socket or a folder is refused
   with FX_ERR_IO and a message naming the path and what it is (never blocks on a FIFO). *size (may be NULL): its
   size when opened. */
fx_status fx_import_open_regular (const char *path, FILE **f, int64_t *size, fx_diag *diag);
fx_status fx_import_check_regular (const char *path, fx_diag *diag);
/* Reads a whole regular file of at most limit bytes (0: no limit). */
fx_status fx_import_read_regular (const char *path, size_t limit, char **data, size_t *len, fx_diag *diag);

/* Lines of a file (read in blocks) or of memory, one at a time, without the '\n'. A line longer than
   fx_import_max_line() is not kept: it comes back with len 0 and full_len its real length, so the caller can skip
   it with a located warning. */
typedef struct fx_line_reader
{
  FILE *f;
  const char *mem;
  size_t mem_len;
  char *block;
  size_t pos, fill;
  bool eof, error;
  fx_buf line;
  int64_t lineno;       /* of the line last returned, from 1 */
  int first;            /* the first byte of the line last returned (-1: empty), kept for a line too long */
  uint64_t offset;      /* bytes consumed */
  /* Told each block as it is read from the file, in order (may be NULL): a hash of the file in the same pass. */
  void (*on_block) (const char *data, size_t len, void *user_data);
  void *on_block_data;
} fx_line_reader;

/* Opens path for reading line by line when it is a regular file (fx_import_open_regular; *size may be NULL). The
   reader owns the file: fx_line_reader_free closes it, and is also what a failed open leaves to call. */
fx_status fx_line_reader_open (fx_line_reader *r, const char *path, int64_t *size, fx_diag *diag);
void fx_line_reader_init_mem (fx_line_reader *r, const char *data, size_t len);
/* False at the end. */
bool fx_line_reader_next (fx_line_reader *r, const char **line, size_t *len, size_t *full_len);
void fx_line_reader_free (fx_line_reader *r);

/* The real path of path (free() it) when it is a regular file inside the folder root once every symlink is
   resolved; NULL otherwise (a symlink leading out of the folder, to a device, a FIFO, or nowhere). */
char *fx_import_resolve_inside (const char *root, const char *path);
