/* fx-common.c: status names, diagnostics with carets, growable buffers and whole-file I/O. */
#include "fx/common.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const status_names[] = {
  [FX_OK] = "ok",
  [FX_ERR_PARSE] = "parse error",
  [FX_ERR_IO] = "I/O error",
  [FX_ERR_INVALID] = "invalid",
  [FX_ERR_UNSUPPORTED] = "unsupported",
  [FX_ERR_NOT_FOUND] = "not found",
  [FX_ERR_NOMEM] = "out of memory",
  [FX_ERR_BACKEND] = "backend error",
  [FX_ERR_CANCELLED] = "cancelled",
  [FX_ERR_NO_DEVICE] = "no device",
};
_Static_assert (sizeof status_names / sizeof status_names[0] == FX_STATUS_COUNT, "status names");

const char *
fx_status_name (fx_status status)
{
  return (unsigned) status < FX_STATUS_COUNT ? status_names[status] : "unknown";
}

void
fx_diag_clear (fx_diag *diag)
{
  if (diag != NULL)
    memset (diag, 0, sizeof *diag);
}

fx_status
fx_diag_setv (fx_diag *diag, fx_status code, const char *fmt, va_list ap)
{
  if (diag != NULL)
    {
      diag->code = code;
      vsnprintf (diag->message, sizeof diag->message, fmt, ap);
    }
  return code;
}

fx_status
fx_diag_set (fx_diag *diag, fx_status code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fx_diag_setv (diag, code, fmt, ap);
  va_end (ap);
  return code;
}

void
fx_diag_locate (fx_diag *diag, const char *file, int line, int col, const char *line_start, size_t line_len)
{
  if (diag == NULL)
    return;
  if (file != NULL)
    snprintf (diag->file, sizeof diag->file, "%s", file);
  diag->line = line;
  diag->col = col;
  diag->line_text[0] = '\0';
  if (line_start != NULL)
    {
      size_t n = line_len < sizeof diag->line_text - 1 ? line_len : sizeof diag->line_text - 1;
      /* Control bytes would garble the terminal: show them as '?'. */
      for (size_t i = 0; i < n; i++)
        {
          unsigned char c = (unsigned char) line_start[i];
          diag->line_text[i] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char) c;
        }
      diag->line_text[n] = '\0';
    }
}

size_t
fx_diag_format (const fx_diag *diag, char *out, size_t out_size)
{
  fx_buf buf;
  fx_buf_init (&buf);
  if (diag->file[0] != '\0')
    {
      fx_buf_puts (&buf, diag->file);
      if (diag->line > 0)
        fx_buf_printf (&buf, ":%d", diag->line);
      if (diag->col > 0)
        fx_buf_printf (&buf, ":%d", diag->col);
      fx_buf_puts (&buf, ": ");
    }
  fx_buf_printf (&buf, "error: %s", diag->message[0] ? diag->message : fx_status_name (diag->code));
  if (diag->pass[0] != '\0')
    fx_buf_printf (&buf, " (pass %s)", diag->pass);
  if (diag->node[0] != '\0')
    fx_buf_printf (&buf, " (node %s)", diag->node);
  fx_buf_putc (&buf, '\n');
  if (diag->line_text[0] != '\0')
    {
      fx_buf_printf (&buf, "%5d | %s\n      | ", diag->line, diag->line_text);
      int col = diag->col > 0 ? diag->col : 1;
      for (int i = 1; i < col && i < (int) sizeof diag->line_text; i++)
        fx_buf_putc (&buf, diag->line_text[i - 1] == '\t' ? '\t' : ' ');
      fx_buf_puts (&buf, "^\n");
    }
  size_t n = 0;
  if (out_size > 0)
    {
      n = buf.len < out_size - 1 ? buf.len : out_size - 1;
      memcpy (out, buf.data, n);
      out[n] = '\0';
    }
  fx_buf_free (&buf);
  return n;
}

void
fx_buf_init (fx_buf *buf)
{
  buf->data = NULL;
  buf->len = 0;
  buf->cap = 0;
}

void
fx_buf_free (fx_buf *buf)
{
  free (buf->data);
  fx_buf_init (buf);
}

void
fx_buf_reset (fx_buf *buf)
{
  buf->len = 0;
  if (buf->data != NULL)
    buf->data[0] = '\0';
}

void
fx_buf_reserve (fx_buf *buf, size_t extra)
{
  if (buf->len + extra + 1 <= buf->cap)
    return;
  size_t cap = buf->cap ? buf->cap : 256;
  while (cap < buf->len + extra + 1)
    cap *= 2;
  char *p = realloc (buf->data, cap);
  if (p == NULL)
    {
      fprintf (stderr, "fx: out of memory (%zu bytes)\n", cap);
      abort ();
    }
  buf->data = p;
  buf->cap = cap;
}

void
fx_buf_append (fx_buf *buf, const char *data, size_t len)
{
  fx_buf_reserve (buf, len);
  if (len > 0)
    memcpy (buf->data + buf->len, data, len);
  buf->len += len;
  buf->data[buf->len] = '\0';
}

void
fx_buf_puts (fx_buf *buf, const char *s)
{
  fx_buf_append (buf, s, strlen (s));
}

void
fx_buf_putc (fx_buf *buf, char c)
{
  fx_buf_reserve (buf, 1);
  buf->data[buf->len++] = c;
  buf->data[buf->len] = '\0';
}

void
fx_buf_vprintf (fx_buf *buf, const char *fmt, va_list ap)
{
  va_list ap2;
  char small[256];
  if (fmt == NULL) /* keeps GCC's -Wformat-truncation quiet under -fsanitize */
    return;
  va_copy (ap2, ap);
  int n = vsnprintf (small, sizeof small, fmt, ap);
  if (n > 0 && (size_t) n < sizeof small)
    fx_buf_append (buf, small, (size_t) n);
  else if (n > 0)
    {
      fx_buf_reserve (buf, (size_t) n);
      vsnprintf (buf->data + buf->len, (size_t) n + 1, fmt, ap2);
      buf->len += (size_t) n;
    }
  va_end (ap2);
}

void
fx_buf_printf (fx_buf *buf, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fx_buf_vprintf (buf, fmt, ap);
  va_end (ap);
}

size_t
fx_lower_bound (const void *key, const void *base, size_t n, size_t size,
                bool (*before) (const void *key, const void *item))
{
  size_t lo = 0, hi = n;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (before (key, (const char *) base + mid * size))
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

uint64_t
fx_hash_bytes (const char *s, size_t len, uint64_t h)
{
  if (h == 0)
    h = 1469598103934665603ULL;
  for (size_t i = 0; i < len; i++)
    {
      h ^= (unsigned char) s[i];
      h *= 1099511628211ULL;
    }
  return h;
}

void
fx_buf_put_json_str (fx_buf *out, const char *s)
{
  static const char *const short_escapes[0x80] = {
    ['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n", ['\t'] = "\\t", ['\r'] = "\\r",
  };
  fx_buf_putc (out, '"');
  const unsigned char *run = (const unsigned char *) (s ? s : "");
  for (const unsigned char *p = run;; p++)
    {
      /* plain characters are appended a run at a time, not one by one */
      if (*p != 0 && !(*p < 0x80 && short_escapes[*p]) && *p >= 0x20 && *p != 0x7f)
        continue;
      fx_buf_append (out, (const char *) run, (size_t) (p - run));
      run = p + 1;
      if (*p == 0)
        break;
      if (*p < 0x80 && short_escapes[*p])
        fx_buf_puts (out, short_escapes[*p]);
      else
        fx_buf_printf (out, "\\u%04x", *p);
    }
  fx_buf_putc (out, '"');
}

void
fx_buf_put_int (fx_buf *buf, int64_t v)
{
  char digits[24];
  int n = 0;
  /* in unsigned arithmetic: INT64_MIN has no positive counterpart */
  uint64_t u = v < 0 ? 0 - (uint64_t) v : (uint64_t) v;
  do
    digits[sizeof digits - 1 - n++] = (char) ('0' + u % 10);
  while ((u /= 10) != 0);
  if (v < 0)
    digits[sizeof digits - 1 - n++] = '-';
  fx_buf_append (buf, digits + sizeof digits - n, (size_t) n);
}

void
fx_buf_put_ints (fx_buf *buf, const int64_t *v, int n)
{
  for (int i = 0; i < n; i++)
    {
      if (i)
        fx_buf_puts (buf, ", ");
      fx_buf_put_int (buf, v[i]);
    }
}

char *
fx_buf_steal (fx_buf *buf)
{
  char *p = buf->data;
  if (p == NULL)
    {
      p = malloc (1);
      if (p != NULL)
        p[0] = '\0';
    }
  fx_buf_init (buf);
  return p;
}

void
fx_malloc_tune (void)
{
#ifdef __GLIBC__
  mallopt (M_TRIM_THRESHOLD, 64 << 20);
  mallopt (M_TOP_PAD, 16 << 20);
#endif
}

double
fx_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

fx_status
fx_file_read (const char *path, char **data, size_t *len, fx_diag *diag)
{
  FILE *f = fopen (path, "rb");
  fx_buf buf;

  *data = NULL;
  if (len != NULL)
    *len = 0;
  if (f == NULL)
    {
      fx_diag_locate (diag, path, 0, 0, NULL, 0);
      return fx_diag_set (diag, FX_ERR_IO, "cannot open: %s", strerror (errno));
    }
  fx_buf_init (&buf);
  for (;;)
    {
      fx_buf_reserve (&buf, 65536);
      size_t n = fread (buf.data + buf.len, 1, 65536, f);
      buf.len += n;
      buf.data[buf.len] = '\0';
      if (n < 65536)
        break;
    }
  if (ferror (f))
    {
      int err = errno;
      fclose (f);
      fx_buf_free (&buf);
      fx_diag_locate (diag, path, 0, 0, NULL, 0);
      return fx_diag_set (diag, FX_ERR_IO, "read failed: %s", strerror (err));
    }
  fclose (f);
  if (len != NULL)
    *len = buf.len;
  *data = fx_buf_steal (&buf);
  return FX_OK;
}

fx_status
fx_file_read_header (const char *path, char **data, size_t *len, char **body, fx_diag *diag)
{
  fx_status st = fx_file_read (path, data, len, diag);
  if (st != FX_OK)
    return st;
  char *nl = memchr (*data, '\n', *len);
  if (nl == NULL)
    {
      free (*data);
      *data = NULL;
      return fx_diag_set (diag, FX_ERR_PARSE, "%s: no tensor header line", path);
    }
  *nl = '\0';
  *body = nl + 1;
  return FX_OK;
}

fx_status
fx_file_write (const char *path, const char *data, size_t len, fx_diag *diag)
{
  FILE *f = fopen (path, "wb");
  if (f == NULL)
    {
      fx_diag_locate (diag, path, 0, 0, NULL, 0);
      return fx_diag_set (diag, FX_ERR_IO, "cannot create: %s", strerror (errno));
    }
  size_t n = fwrite (data, 1, len, f);
  int bad = n != len || fclose (f) != 0;
  if (bad)
    {
      fx_diag_locate (diag, path, 0, 0, NULL, 0);
      return fx_diag_set (diag, FX_ERR_IO, "write failed: %s", strerror (errno));
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- private caches */

/* NULL when dir is private to this user, else why not. */
static const char *
cache_dir_problem (const char *dir, char *buf, size_t buf_size)
{
  struct stat st;
  if (lstat (dir, &st) != 0)
    {
      snprintf (buf, buf_size, "cannot be created or read (%s)", strerror (errno));
      return buf;
    }
  if (S_ISLNK (st.st_mode))
    return "is a symbolic link";
  if (!S_ISDIR (st.st_mode))
    return "is not a directory";
  if (st.st_uid != getuid ())
    {
      snprintf (buf, buf_size, "is owned by uid %ld, not by this user (uid %ld)", (long) st.st_uid,
                (long) getuid ());
      return buf;
    }
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    {
      snprintf (buf, buf_size, "is writable by group or others (mode %04o)", (unsigned) (st.st_mode & 07777));
      return buf;
    }
  return NULL;
}

static void
mkdir_parents_private (const char *path)
{
  char tmp[4096];
  if (snprintf (tmp, sizeof tmp, "%s", path) >= (int) sizeof tmp)
    return;
  for (char *c = tmp + 1; *c; c++)
    if (*c == '/')
      {
        *c = '\0';
        mkdir (tmp, 0700);   /* existing ancestors keep their modes: only the leaf is checked */
        *c = '/';
      }
  mkdir (tmp, 0700);
}

static pthread_mutex_t fallback_lock = PTHREAD_MUTEX_INITIALIZER;
static struct
{
  char prefix[64];
  char dir[512];
} fallbacks[8];

fx_status
fx_cache_dir_open (const char *path, const char *fallback_prefix, char *out, size_t out_size, char *refused,
                   size_t refused_size, fx_diag *diag)
{
  char buf[256];
  if (refused && refused_size)
    refused[0] = '\0';
  const char *why = path && path[0] ? NULL : "is empty";
  if (why == NULL)
    {
      mkdir_parents_private (path);
      why = cache_dir_problem (path, buf, sizeof buf);
    }
  if (why == NULL)
    {
      if (snprintf (out, out_size, "%s", path) >= (int) out_size)
        return fx_diag_set (diag, FX_ERR_IO, "cache directory path too long: %.200s", path);
      return FX_OK;
    }
  if (refused && refused_size)
    snprintf (refused, refused_size, "cache directory %.300s %s; using a private temporary directory instead",
              path ? path : "", why);
  const char *prefix = fallback_prefix && fallback_prefix[0] ? fallback_prefix : "fx-workbench-cache";
  fx_status st = FX_OK;
  pthread_mutex_lock (&fallback_lock);
  int slot = -1;
  for (int i = 0; i < 8 && slot < 0; i++)
    if (strcmp (fallbacks[i].prefix, prefix) == 0 && cache_dir_problem (fallbacks[i].dir, buf, sizeof buf) == NULL)
      slot = i;
  if (slot < 0)
    {
      const char *tmpdir = getenv ("TMPDIR");
      char templ[512];
      if (!tmpdir || tmpdir[0] != '/' || strlen (tmpdir) > 300)
        tmpdir = "/tmp";
      snprintf (templ, sizeof templ, "%s/%.60s-XXXXXX", tmpdir, prefix);
      if (mkdtemp (templ) == NULL)
        st = fx_diag_set (diag, FX_ERR_IO, "cannot make a private cache directory %s: %s", templ, strerror (errno));
      else
        {
          for (int i = 0; i < 8 && slot < 0; i++)
            if (fallbacks[i].prefix[0] == '\0' || strcmp (fallbacks[i].prefix, prefix) == 0)
              slot = i;
          if (slot < 0)
            slot = 7;
          snprintf (fallbacks[slot].prefix, sizeof fallbacks[slot].prefix, "%s", prefix);
          snprintf (fallbacks[slot].dir, sizeof fallbacks[slot].dir, "%s", templ);
        }
    }
  if (st == FX_OK && snprintf (out, out_size, "%s", fallbacks[slot].dir) >= (int) out_size)
    st = fx_diag_set (diag, FX_ERR_IO, "cache directory path too long");
  pthread_mutex_unlock (&fallback_lock);
  return st;
}

bool
fx_cache_file_trusted (int fd)
{
  struct stat st;
  return fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == getuid ()
         && !(st.st_mode & (S_IWGRP | S_IWOTH));
}
