/* fx-import-file.c: how importers open and read their files: regular files only, a bounded line reader, the
   containment check that keeps an imported folder's symlinks from reaching outside it, and the store transaction
   that skips a file imported before. */
#include "fx-import-util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 64 MiB: far above any line PyTorch writes (one line of generated code, one JSON envelope), far below what would
   hurt; a file of one endless line (a device, a corrupted log) stops being read there. */
static size_t max_line = (size_t) 64 << 20;

void
fx_import_set_max_line (size_t bytes)
{
  max_line = bytes ? bytes : (size_t) 64 << 20;
}

size_t
fx_import_max_line (void)
{
  return max_line;
}

static const char *
kind_of (mode_t mode)
{
  return S_ISDIR (mode) ? "a folder" : S_ISFIFO (mode) ? "a FIFO (named pipe)" : S_ISCHR (mode) ? "a character device"
         : S_ISBLK (mode) ? "a block device" : S_ISSOCK (mode) ? "a socket" : "not a regular file";
}

fx_status
fx_import_open_regular (const char *path, FILE **out, int64_t *size, fx_diag *diag)
{
  *out = NULL;
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer before fstat could refuse it. */
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return fx_diag_set (diag, FX_ERR_IO, "%s: cannot open: %s", path, strerror (errno));
  struct stat sb;
  if (fstat (fd, &sb) != 0)
    {
      int err = errno;
      close (fd);
      return fx_diag_set (diag, FX_ERR_IO, "%s: cannot read: %s", path, strerror (err));
    }
  if (!S_ISREG (sb.st_mode))
    {
      close (fd);
      return fx_diag_set (diag, FX_ERR_IO, "%s: %s, not a file to import (only regular files are read)", path,
                          kind_of (sb.st_mode));
    }
  int flags = fcntl (fd, F_GETFL);
  if (flags >= 0)
    fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
  FILE *f = fdopen (fd, "rb");
  if (!f)
    {
      int err = errno;
      close (fd);
      return fx_diag_set (diag, FX_ERR_IO, "%s: cannot open: %s", path, strerror (err));
    }
  if (size)
    *size = (int64_t) sb.st_size;
  *out = f;
  return FX_OK;
}

fx_status
fx_import_check_regular (const char *path, fx_diag *diag)
{
  FILE *f = NULL;
  fx_status st = fx_import_open_regular (path, &f, NULL, diag);
  if (f)
    fclose (f);
  return st;
}

fx_status
fx_import_read_regular (const char *path, size_t limit, char **data, size_t *len, fx_diag *diag)
{
  *data = NULL;
  *len = 0;
  FILE *f = NULL;
  int64_t size = 0;
  fx_status st = fx_import_open_regular (path, &f, &size, diag);
  if (st != FX_OK)
    return st;
  if (limit && (uint64_t) size > limit)
    {
      fclose (f);
      return fx_diag_set (diag, FX_ERR_IO, "%s: %lld bytes, more than the %zu this importer reads", path,
                          (long long) size, limit);
    }
  fx_buf buf;
  fx_buf_init (&buf);
  for (;;)
    {
      fx_buf_reserve (&buf, 65536);
      size_t n = fread (buf.data + buf.len, 1, 65536, f);
      buf.len += n;
      buf.data[buf.len] = 0;
      /* The file may grow while it is read: stop at the limit all the same. */
      if (n < 65536 || (limit && buf.len > limit))
        break;
    }
  bool failed = ferror (f);
  fclose (f);
  if (failed || (limit && buf.len > limit))
    {
      fx_buf_free (&buf);
      return fx_diag_set (diag, FX_ERR_IO, "%s: %s", path, failed ? "read failed" : "grew past the size limit");
    }
  *len = buf.len;
  *data = fx_buf_steal (&buf);
  return FX_OK;
}

/* ------------------------------------------------------------------ lines */

enum { BLOCK = 1 << 20 };

fx_status
fx_line_reader_open (fx_line_reader *r, const char *path, int64_t *size, fx_diag *diag)
{
  memset (r, 0, sizeof *r);
  fx_buf_init (&r->line);
  fx_status st = fx_import_open_regular (path, &r->f, size, diag);
  if (st != FX_OK)
    return st;
  r->block = malloc (BLOCK);
  fx_buf_reserve (&r->line, 256);
  return FX_OK;
}

void
fx_line_reader_init_mem (fx_line_reader *r, const char *data, size_t len)
{
  memset (r, 0, sizeof *r);
  r->mem = data;
  r->mem_len = len;
  fx_buf_init (&r->line);
}

void
fx_line_reader_free (fx_line_reader *r)
{
  if (r->f)
    fclose (r->f);
  r->f = NULL;
  free (r->block);
  fx_buf_free (&r->line);
  r->block = NULL;
}

bool
fx_line_reader_next (fx_line_reader *r, const char **line, size_t *len, size_t *full_len)
{
  size_t limit = fx_import_max_line ();
  if (!r->f)
    {
      if (r->offset >= r->mem_len)
        return false;
      const char *p = r->mem + r->offset;
      const char *eol = memchr (p, '\n', r->mem_len - r->offset);
      size_t n = eol ? (size_t) (eol - p) : r->mem_len - r->offset;
      r->offset += n + (eol ? 1 : 0);
      r->lineno++;
      r->first = n ? (unsigned char) p[0] : -1;
      *full_len = n;
      *line = p;
      *len = n > limit ? 0 : n;
      return true;
    }
  /* A line whole inside the block is returned where it lies: copying every line cost a tenth of a trace import. */
  if (r->pos < r->fill)
    {
      const char *p = r->block + r->pos;
      const char *eol = memchr (p, '\n', r->fill - r->pos);
      if (eol && (size_t) (eol - p) <= limit)
        {
          size_t n = (size_t) (eol - p);
          r->pos += n + 1;
          r->offset += n + 1;
          r->lineno++;
          r->first = n ? (unsigned char) p[0] : -1;
          *full_len = n;
          *line = p;
          *len = n;
          return true;
        }
    }
  fx_buf_reset (&r->line);
  size_t total = 0;
  bool any = false;
  r->first = -1;
  for (;;)
    {
      if (r->pos == r->fill)
        {
          if (r->eof || !r->block)
            break;
          r->fill = fread (r->block, 1, BLOCK, r->f);
          r->pos = 0;
          if (r->fill == 0)
            {
              r->eof = true;
              r->error = ferror (r->f) != 0;
              break;
            }
          if (r->on_block)
            r->on_block (r->block, r->fill, r->on_block_data);
        }
      any = true;
      const char *p = r->block + r->pos;
      const char *eol = memchr (p, '\n', r->fill - r->pos);
      size_t n = eol ? (size_t) (eol - p) : r->fill - r->pos;
      if (total == 0 && n > 0)
        r->first = (unsigned char) p[0];
      /* Past the limit the rest of the line is only counted: memory stays bounded whatever the file holds. */
      if (total + n <= limit)
        fx_buf_append (&r->line, p, n);
      total += n;
      r->pos += n + (eol ? 1 : 0);
      r->offset += n + (eol ? 1 : 0);
      if (eol)
        break;
    }
  if (!any)
    return false;
  r->lineno++;
  *full_len = total;
  *line = r->line.data;
  *len = total > limit ? 0 : total;
  return true;
}

/* ------------------------------------------------------------------ folders */

char *
fx_import_resolve_inside (const char *root, const char *path)
{
  char *real_root = realpath (root, NULL);
  char *real = realpath (path, NULL);
  char *ok = NULL;
  if (real_root && real)
    {
      size_t n = strlen (real_root);
      /* "/" as the root holds everything. */
      bool inside = strncmp (real, real_root, n) == 0 && (real[n] == '/' || (n == 1 && real_root[0] == '/'));
      struct stat sb;
      if (inside && stat (real, &sb) == 0 && S_ISREG (sb.st_mode))
        ok = real, real = NULL;
    }
  free (real_root);
  free (real);
  return ok;
}

bool
fx_import_begin_input (fx_store *store, const char *hash, fx_import_stats *stats, fx_status *st, fx_diag *diag)
{
  int64_t existing = 0;
  if ((*st = fx_store_begin (store, diag)) != FX_OK)
    return false;
  if ((*st = fx_store_find_input (store, hash, &existing, diag)) != FX_OK || existing)
    {
      stats->already_imported = existing != 0;
      fx_store_rollback (store);
      return false;
    }
  return true;
}
