/* fx-inductor-build.c: builds generated C with the system compiler into a shared object (no shell involved),
   caches it on disk under a hash of source + flags + compiler, and loads it with dlopen. */
#include "fx-inductor-impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static size_t compiler_invocations;

size_t ind_compiler_invocations (void);

size_t
ind_compiler_invocations (void)
{
  return compiler_invocations;
}


static char cache_refused[600];

const char *
ind_cache_dir (void)
{
  static char dir[1024];
  char want[1024];
  const char *env = getenv ("FXWB_INDUCTOR_CACHE");
  if (env && env[0])
    snprintf (want, sizeof want, "%s", env);
  else if (getenv ("XDG_CACHE_HOME") && getenv ("XDG_CACHE_HOME")[0])
    snprintf (want, sizeof want, "%s/fx-workbench/inductor", getenv ("XDG_CACHE_HOME"));
  else if (getenv ("HOME") && getenv ("HOME")[0])
    snprintf (want, sizeof want, "%s/.cache/fx-workbench/inductor", getenv ("HOME"));
  else
    snprintf (want, sizeof want, "/tmp/fx-workbench-inductor-%d", (int) getuid ());
  /* a library found here is dlopened: a directory someone else can write to would run their code */
  fx_diag d;
  if (fx_cache_dir_open (want, "fx-workbench-inductor", dir, sizeof dir, cache_refused, sizeof cache_refused, &d)
      != FX_OK)
    {
      snprintf (cache_refused, sizeof cache_refused, "%.590s", d.message);
      snprintf (dir, sizeof dir, "%s", want);   /* every open below checks again and fails cleanly */
    }
  return dir;
}

const char *
ind_cache_refused (void)
{
  return cache_refused;
}

static const char *
compiler (void)
{
  const char *cc = getenv ("CC");
  return cc && cc[0] && strchr (cc, ' ') == NULL ? cc : "cc";
}

/* Runs argv with stdout+stderr into log_path; returns the exit status (or -1). */
static int
run_compiler (char *const *argv, const char *log_path)
{
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2 (&fa, 1, 2);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid;
  int rc = posix_spawnp (&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  compiler_invocations++;
  if (rc != 0)
    return -1;
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* Runs a tool (argv[0] looked up in PATH, no shell) with stdout+stderr into log_path; its exit status or -1. */
int
ind_run_tool (char *const *argv, const char *log_path)
{
  size_t before = compiler_invocations;
  int rc = run_compiler (argv, log_path);
  compiler_invocations = before;
  return rc;
}

/* Whether the compiler builds SOURCE with FLAGS (NULL-terminated, placed before "-o"; LIBS after the source); the
   answer is kept in the cache folder as NAME-yes or NAME-no so that it is asked once per machine. */
static bool
probe_compiler (const char *name, const char *source, const char *const *flags, const char *const *libs)
{
  const char *dir = ind_cache_dir ();
  char ok[1100], no[1100];
  snprintf (ok, sizeof ok, "%s/%s-yes", dir, name);
  snprintf (no, sizeof no, "%s/%s-no", dir, name);
  if (access (ok, F_OK) == 0)
    return true;
  if (access (no, F_OK) == 0)
    return false;
  char src[1100], so[1100], log[1100];
  snprintf (src, sizeof src, "%s/%s-probe.c", dir, name);
  snprintf (so, sizeof so, "%s/%s-probe.so", dir, name);
  snprintf (log, sizeof log, "%s/%s-probe.log", dir, name);
  FILE *f = fopen (src, "w");
  if (!f)
    return false;
  fputs (source, f);
  fclose (f);
  char *argv[16];
  size_t n = 0;
  argv[n++] = (char *) compiler ();
  for (; *flags; flags++)
    argv[n++] = (char *) *flags;
  argv[n++] = (char *) "-o";
  argv[n++] = so;
  argv[n++] = src;
  for (; *libs; libs++)
    argv[n++] = (char *) *libs;
  argv[n] = NULL;
  bool known = run_compiler (argv, log) == 0;
  f = fopen (known ? ok : no, "w");
  if (f)
    fclose (f);
  return known;
}

bool
ind_have_openmp (void)
{
  static int known = -1;
  static const char *const flags[] = { "-O0", "-fPIC", "-shared", "-fopenmp", NULL };
  static const char *const libs[] = { NULL };
  if (known < 0)
    known = probe_compiler ("openmp", "#include <omp.h>\nint fx_probe (void) { return omp_get_max_threads (); }\n",
                            flags, libs);
  return known;
}

bool
ind_have_mvec (void)
{
  static int known = -1;
  static const char *const flags[] = { "-O2", "-fPIC", "-shared", "-fopenmp-simd", "-march=native", NULL };
  static const char *const libs[] = { "-lmvec", "-lm", NULL };
  if (known < 0)
    known = probe_compiler ("mvec",
                            "#include <math.h>\nextern float expf (float) __attribute__ ((__simd__ (\"notinbranch\")));\n"
                            "void fx_probe (float *restrict a, int n) {\n#pragma omp simd\n for (int i = 0; i < n; i++) "
                            "a[i] = expf (a[i]);\n}\n",
                            flags, libs);
  return known;
}

/* Trailer after the ELF image: the source bytes, their length (8 bytes, little endian) and this magic. */
#define SOURCE_MAGIC "FXWBSRC1"

static int
write_all (int fd, const void *data, size_t len)
{
  const char *p = data;
  while (len > 0)
    {
      ssize_t w = write (fd, p, len);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return -1;
      p += w;
      len -= (size_t) w;
    }
  return 0;
}

/* Writes a file of this user only (0600, never through a symlink), replacing what was there. */
static int
write_private (const char *path, const void *data, size_t len, const void *data2, size_t len2)
{
  unlink (path);
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  int rc = write_all (fd, data, len) == 0 && write_all (fd, data2, len2) == 0 ? 0 : -1;
  if (close (fd) != 0)
    rc = -1;
  return rc;
}

static int
append_source (const char *path, const char *source, size_t len)
{
  int fd = open (path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  unsigned char trailer[16];
  uint64_t n = len;
  for (int i = 0; i < 8; i++)
    trailer[i] = (unsigned char) (n >> (8 * i));
  memcpy (trailer + 8, SOURCE_MAGIC, 8);
  int rc = fchmod (fd, 0700) == 0 && write_all (fd, source, len) == 0 && write_all (fd, trailer, 16) == 0 ? 0 : -1;
  if (close (fd) != 0)
    rc = -1;
  return rc;
}

/* The library open on fd is a private file of this user and ends with exactly this source. */
static bool
library_matches (int fd, const char *source, size_t len)
{
  struct stat st;
  if (!fx_cache_file_trusted (fd) || fstat (fd, &st) != 0 || st.st_size < 16
      || (uint64_t) st.st_size - 16 < (uint64_t) len)
    return false;
  unsigned char trailer[16];
  off_t end = st.st_size - 16;
  if (pread (fd, trailer, 16, end) != 16 || memcmp (trailer + 8, SOURCE_MAGIC, 8) != 0)
    return false;
  uint64_t n = 0;
  for (int i = 0; i < 8; i++)
    n |= (uint64_t) trailer[i] << (8 * i);
  if (n != len)
    return false;
  char chunk[65536];
  off_t at = end - (off_t) len;
  for (size_t done = 0; done < len;)
    {
      size_t want = len - done < sizeof chunk ? len - done : sizeof chunk;
      ssize_t got = pread (fd, chunk, want, at + (off_t) done);
      if (got <= 0 || memcmp (chunk, source + done, (size_t) got) != 0)
        return false;
      done += (size_t) got;
    }
  return true;
}

fx_status
ind_build (const char *source, size_t len, const char *cache_dir, bool *compiler_invoked, ind_library *lib,
           fx_buf *compiler_output, fx_diag *diag)
{
  memset (lib, 0, sizeof *lib);
  if (compiler_invoked)
    *compiler_invoked = false;
  char dir[1024];
  if (cache_dir == NULL)
    {
      cache_dir = ind_cache_dir ();
      snprintf (lib->cache_note, sizeof lib->cache_note, "%.500s", ind_cache_refused ());
    }
  char refused[600];
  fx_status dst = fx_cache_dir_open (cache_dir, "fx-workbench-inductor", dir, sizeof dir, refused, sizeof refused,
                                     diag);
  if (dst != FX_OK)
    return dst;
  if (refused[0])
    snprintf (lib->cache_note, sizeof lib->cache_note, "%.500s", refused);
  bool omp = ind_have_openmp ();
  /* $FXWB_INDUCTOR_MARCH picks another target (e.g. x86-64-v2 for valgrind, which lacks AVX-512) */
  char march[64] = "-march=native";
  const char *m = getenv ("FXWB_INDUCTOR_MARCH");
  if (m && m[0] && strlen (m) < 40 && strspn (m, "abcdefghijklmnopqrstuvwxyz0123456789-_.") == strlen (m))
    snprintf (march, sizeof march, "-march=%s", m);
  /* -fwrapv: integer ops wrap as PyTorch's do; without it gcc folds overflow checks away (a*INT_MAX < 0). */
  /* -fno-builtin-sin/cos: gcc merges sin(x) and cos(x) of one value into a scalar sincosf call, which has no libmvec
     variant and stops the whole loop from vectorizing (pointwise_chain ran 25x slower); without the builtins both
     calls map to their vector variants. */
  /* -fvect-cost-model=dynamic: -O2's "very cheap" model (gcc 12) vectorizes only loops that need no epilogue and
     no runtime checks, and left most reduction loops scalar, omp simd or not (softmax: 1 of 7 loops); this is
     -O3's model without -O3's unrolling and compile time. */
  /* -fno-trapping-math -fno-math-errno (as Inductor's C++ flags have them, from its -ffast-math less the unsafe
     parts): nothing reads the FP exception flags or errno, and with them gcc may not if-convert a select around a
     comparison or a math call, so such loops stayed scalar. */
  /* -mprefer-vector-width=512: gcc's tuning for Intel's AVX-512 parts (skylake-avx512 to sapphirerapids) prefers
     256-bit vectors, and a loop vectorized at 8 lanes finds only the 16-lane AVX-512 variant of an `omp declare
     simd` function (fx_expf, libmvec's erff): it called the scalar function per element instead. softmax_rows took
     478 ms on one Sapphire Rapids core against 43 ms on an AMD one, whose tuning already used 512 bits. Inductor's
     C++ uses 16-lane vectors on AVX-512 as well. */
#if defined(__x86_64__)
#define IND_VECTOR_WIDTH "-mprefer-vector-width=512",
#else
#define IND_VECTOR_WIDTH
#endif
  const char *flags[] = { "-O2", "-fvect-cost-model=dynamic", "-fno-trapping-math", "-fno-math-errno", "-ffp-contract=off", "-fPIC",
                          "-shared", "-std=gnu11", march, IND_VECTOR_WIDTH
                          "-fno-strict-aliasing", "-fwrapv",
                          "-fno-builtin-sin", "-fno-builtin-sinf", "-fno-builtin-cos", "-fno-builtin-cosf",
                          omp ? "-fopenmp" : "-Wno-unknown-pragmas" };
  size_t n_flags = sizeof flags / sizeof flags[0];
  uint64_t h = IND_FNV_OFFSET;
  h = ind_fnv1a (h, source, len);
  for (size_t i = 0; i < n_flags; i++)
    h = ind_fnv1a (h, flags[i], strlen (flags[i]) + 1);
  /* -march=native means this processor: a cache shared between machines must not hand one's code to another. */
  if (strcmp (march, "-march=native") == 0)
    {
      static char cpu_id[4096];
      static bool have_cpu_id;
      if (!have_cpu_id)
        {
          FILE *ci = fopen ("/proc/cpuinfo", "r");
          char line[4096];
          size_t used = 0;
          while (ci && fgets (line, sizeof line, ci) && used < sizeof cpu_id - 1)
            if (strncmp (line, "model name", 10) == 0 || strncmp (line, "flags", 5) == 0)
              {
                size_t l = strlen (line);
                if (l > sizeof cpu_id - 1 - used)
                  l = sizeof cpu_id - 1 - used;
                memcpy (cpu_id + used, line, l);
                used += l;
                if (strncmp (line, "flags", 5) == 0)
                  break;   /* the first processor's model and flags are enough */
              }
          if (ci)
            fclose (ci);
          cpu_id[used] = '\0';
          have_cpu_id = true;
        }
      h = ind_fnv1a (h, cpu_id, strlen (cpu_id));
    }
  h = ind_fnv1a (h, compiler (), strlen (compiler ()));
  char base[900], so[1000], src[1200], tmp[1200], log[1200], fdpath[64];
  snprintf (base, sizeof base, "%.800s/k%016llx", dir, (unsigned long long) h);
  snprintf (so, sizeof so, "%s.so", base);
  snprintf (src, sizeof src, "%s.c", base);
  snprintf (log, sizeof log, "%s.log", base);
  snprintf (tmp, sizeof tmp, "%s.%d.tmp.so", base, (int) getpid ());
  /* A cached library is used only when it is ours, private, and carries this very source (the 64-bit key can
     collide): the check and the dlopen go through one descriptor, so the file checked is the file loaded. */
  int fd = open (so, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && !library_matches (fd, source, len))
    {
      if (!fx_cache_file_trusted (fd))
        snprintf (lib->cache_note, sizeof lib->cache_note,
                  "inductor: cached %.400s is not a private file of this user; rebuilt", so);
      close (fd);
      fd = -1;
      unlink (so);
    }
  if (fd < 0)
    {
      if (write_private (src, source, len, NULL, 0) != 0)
        return fx_diag_set (diag, FX_ERR_IO, "inductor: cannot write %s: %s", src, strerror (errno));
      /* compiler + flags + "-o" tmp src -lmvec -lm + NULL */
      char *argv[sizeof flags / sizeof flags[0] + 8];
      size_t k = 0;
      argv[k++] = (char *) compiler ();
      for (size_t i = 0; i < n_flags; i++)
        argv[k++] = (char *) flags[i];
      argv[k++] = (char *) "-o";
      argv[k++] = tmp;
      argv[k++] = src;
      if (ind_have_mvec ())
        argv[k++] = (char *) "-lmvec";
      argv[k++] = (char *) "-lm";
      argv[k] = NULL;
      if (compiler_invoked)
        *compiler_invoked = true;
      unlink (tmp);
      int rc = run_compiler (argv, log);
      char *text = NULL;
      size_t tlen = 0;
      fx_diag d2;
      if (fx_file_read (log, &text, &tlen, &d2) == FX_OK && compiler_output)
        fx_buf_append (compiler_output, text, tlen);
      if (rc != 0)
        {
          unlink (tmp);
          fx_status st = fx_diag_set (diag, FX_ERR_BACKEND, "inductor: C compiler failed (%s exit %d) on %s:\n%.700s",
                                      compiler (), rc, src, text ? text : "");
          free (text);
          return st;
        }
      free (text);
      /* the source travels inside the library file (ELF loaders ignore trailing bytes): one rename installs both */
      if (append_source (tmp, source, len) != 0 || rename (tmp, so) != 0)
        {
          int e = errno;
          unlink (tmp);
          return fx_diag_set (diag, FX_ERR_IO, "inductor: cannot install %s: %s", so, strerror (e));
        }
      fd = open (so, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 || !library_matches (fd, source, len))
        {
          if (fd >= 0)
            close (fd);
          return fx_diag_set (diag, FX_ERR_IO, "inductor: %s changed while it was installed", so);
        }
    }
  else
    lib->cache_hit = true;
  /* dlopen goes through a fresh hard link to the checked inode: the loader then maps exactly the file that was
     checked, and a name it loaded before (k<hash>.so, replaced after a key collision) cannot hand back the old
     library. Installed files are never modified in place, so one inode is one content. */
  static unsigned load_counter;
  char unique[1300];
  snprintf (unique, sizeof unique, "%s.%d.%u.load.so", base, (int) getpid (),
            __atomic_add_fetch (&load_counter, 1, __ATOMIC_RELAXED));
  snprintf (fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
  unlink (unique);
  const char *load = unique;
  if (linkat (AT_FDCWD, fdpath, AT_FDCWD, unique, AT_SYMLINK_FOLLOW) != 0 && link (so, unique) != 0)
    load = so;   /* no hard links here: the directory is still private */
  /* never unloaded: OpenMP worker threads may still reference the code after a kernel returns */
  lib->handle = dlopen (load, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (load == unique)
    unlink (unique);
  close (fd);
  if (lib->handle == NULL)
    return fx_diag_set (diag, FX_ERR_BACKEND, "inductor: dlopen %s failed: %s", so, dlerror ());
  snprintf (lib->so_path, sizeof lib->so_path, "%s", so);
  return FX_OK;
}
