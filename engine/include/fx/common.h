/* fx/common.h: status codes, diagnostics, growable buffers and arenas shared by the whole engine. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FX_VERSION_STRING "0.1.0"

#if defined(__GNUC__)
#define FX_PRINTF(f, a) __attribute__ ((format (printf, f, a)))
#else
#define FX_PRINTF(f, a)
#endif

/* Expected failures travel as fx_status plus an fx_diag; programming errors are assertions. */
typedef enum fx_status
{
  FX_OK = 0,
  FX_ERR_PARSE,       /* malformed input text */
  FX_ERR_IO,          /* a file could not be read or written */
  FX_ERR_INVALID,     /* well-formed input that breaks an invariant (verifier, bad option) */
  FX_ERR_UNSUPPORTED, /* an op, construct or feature the engine does not handle */
  FX_ERR_NOT_FOUND,   /* a name that does not exist (backend, node, compile id) */
  FX_ERR_NOMEM,
  FX_ERR_BACKEND,     /* a backend failed (compiler error, CUDA error) */
  FX_ERR_CANCELLED,
  FX_ERR_NO_DEVICE,   /* no CUDA device, no compiler */
  FX_STATUS_COUNT
} fx_status;

const char *fx_status_name (fx_status status);

/* A diagnostic points at the thing: file:line:col and the offending line, or a node and a pass. */
typedef struct fx_diag
{
  fx_status code;
  char file[256];
  int line;        /* 1-based; 0 when unknown */
  int col;         /* 1-based; 0 when unknown */
  char line_text[256];
  char pass[48];
  char node[128];
  char message[1024];
} fx_diag;

void fx_diag_clear (fx_diag *diag);
/* Sets code and message (printf-style). diag may be NULL. Returns code, so `return fx_diag_set (...)` works. */
fx_status fx_diag_set (fx_diag *diag, fx_status code, const char *fmt, ...) FX_PRINTF (3, 4);
fx_status fx_diag_setv (fx_diag *diag, fx_status code, const char *fmt, va_list ap) FX_PRINTF (3, 0);
/* Records the location; line_start..line_end is the text of the offending line (copied, clipped). */
void fx_diag_locate (fx_diag *diag, const char *file, int line, int col,
                     const char *line_start, size_t line_len);
/* "file:line:col: error: message\n  line text\n      ^\n" into out (NUL-terminated, clipped). */
size_t fx_diag_format (const fx_diag *diag, char *out, size_t out_size);

/* Checked size arithmetic for element counts, strides and byte counts (all int64, as PyTorch's): the result goes to
   *out and the call returns false when it does not fit. Every numel/bytes/stride product computed from input
   values (annotations, shape arguments, JSON) goes through these, so a size like 2^63-1 is an error, not a wrap. */
static inline bool
fx_size_mul (int64_t a, int64_t b, int64_t *out)
{
  return !__builtin_mul_overflow (a, b, out);
}

static inline bool
fx_size_add (int64_t a, int64_t b, int64_t *out)
{
  return !__builtin_add_overflow (a, b, out);
}

/* Growable byte buffer; data is always NUL-terminated. */
typedef struct fx_buf
{
  char *data;
  size_t len;
  size_t cap;
} fx_buf;

void fx_buf_init (fx_buf *buf);
void fx_buf_free (fx_buf *buf);
void fx_buf_reset (fx_buf *buf);
void fx_buf_reserve (fx_buf *buf, size_t extra);
void fx_buf_append (fx_buf *buf, const char *data, size_t len);
void fx_buf_puts (fx_buf *buf, const char *s);
void fx_buf_putc (fx_buf *buf, char c);
void fx_buf_printf (fx_buf *buf, const char *fmt, ...) FX_PRINTF (2, 3);
void fx_buf_vprintf (fx_buf *buf, const char *fmt, va_list ap) FX_PRINTF (2, 0);
/* FNV-1a over len bytes, going on from h (0 starts a new hash): for bucketing keys, whose equality the caller confirms
   on the text. */
uint64_t fx_hash_bytes (const char *s, size_t len, uint64_t h);
/* s as a JSON string with its quotes (NULL as ""): \" \\ \n \t \r, other control bytes and DEL as \u00XX, the rest
   (UTF-8 included) as is. */
void fx_buf_put_json_str (fx_buf *buf, const char *s);
/* "2, 3, 4": n integers separated by ", " (a shape or strides, without the brackets). */
void fx_buf_put_ints (fx_buf *buf, const int64_t *v, int n);
/* "%lld" without printf (a tenth of its cost: the importer writes a few hundred thousand of them a GB). */
void fx_buf_put_int (fx_buf *buf, int64_t v);
/* Hands the data to the caller (free() it) and leaves buf empty. */
char *fx_buf_steal (fx_buf *buf);

/* Binary search: the index of the first of the N sorted items of SIZE bytes at BASE that does not sort before KEY (N
   when all do); before (key, item) says whether ITEM sorts before KEY. */
size_t fx_lower_bound (const void *key, const void *base, size_t n, size_t size,
                       bool (*before) (const void *key, const void *item));

/* Bump allocator: everything allocated from it is freed in one call. */
typedef struct fx_arena fx_arena;

fx_arena *fx_arena_new (void);
void fx_arena_free (fx_arena *arena);
void *fx_arena_alloc (fx_arena *arena, size_t size);        /* zeroed, 16-byte aligned */
/* A growable array in the arena: a copy of the *CAP items (of ITEM bytes) at OLD in twice the room (FIRST items
   when *cap is 0), *cap updated; the old block stays in the arena. Call it when the array is full. */
void *fx_arena_grow (fx_arena *arena, const void *old, size_t *cap, size_t item, size_t first);
/* The N strings at V and a copy of S after them, in a new arena array (*n updated): for short lists. */
const char **fx_arena_strv_append (fx_arena *arena, const char **v, size_t *n, const char *s);
char *fx_arena_strdup (fx_arena *arena, const char *s);     /* NULL stays NULL */
char *fx_arena_strndup (fx_arena *arena, const char *s, size_t n);
char *fx_arena_printf (fx_arena *arena, const char *fmt, ...) FX_PRINTF (2, 3);
size_t fx_arena_bytes (const fx_arena *arena);

/* Whole-file read; the result is NUL-terminated and must be free()d. */
fx_status fx_file_read (const char *path, char **data, size_t *len, fx_diag *diag);
/* Milliseconds on the monotonic clock, for timing compiles, runs and time limits. */
double fx_now_ms (void);
/* For a program's main, before any work: the C library's allocator keeps up to 64 MiB of freed memory instead of
   returning it to the system at once. An import frees and allocates per record; with the default the heap shrank
   and grew again 25,000 times on a 1 GB trace, and its fresh pages' faults were 18% of the importing thread. */
void fx_malloc_tune (void);
/* fx_file_read of a file that starts with a header line (a tensor file's JSON): the line is NUL-terminated in place
   and *body is what follows it; FX_ERR_PARSE (nothing to free) when there is no line. */
fx_status fx_file_read_header (const char *path, char **data, size_t *len, char **body, fx_diag *diag);
fx_status fx_file_write (const char *path, const char *data, size_t len, fx_diag *diag);

/* Private on-disk caches (compiled kernels are loaded from them, so nobody else may be able to write there).
   fx_cache_dir_open makes path (missing parents too) with mode 0700 and checks the result: a real directory, not a
   symlink, owned by this user and writable by no one else. When path fails the check, out gets a fresh private
   directory made by mkdtemp ($TMPDIR or /tmp, "<fallback_prefix>-XXXXXX", one per prefix for the process) and
   refused (may be NULL) says why path was refused (empty when it was accepted). FX_OK with out set, or an error
   when not even the fallback can be made. */
fx_status fx_cache_dir_open (const char *path, const char *fallback_prefix, char *out, size_t out_size,
                             char *refused, size_t refused_size, fx_diag *diag);
/* An open file of such a cache may be trusted: a regular file owned by this user, writable by no one else. */
bool fx_cache_file_trusted (int fd);

#ifdef __cplusplus
}
#endif
