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

static uint64_t
fnv1a (uint64_t h, const void *data, size_t len)
{
  const unsigned char *s = data;
  for (size_t i = 0; i < len; i++)
    {
      h ^= s[i];
      h *= 1099511628211ULL;
    }
  return h;
}

static void
mkdir_p (const char *path)
{
  char tmp[1024];
  snprintf (tmp, sizeof tmp, "%s", path);
  for (char *c = tmp + 1; *c; c++)
    if (*c == '/')
      {
        *c = '\0';
        mkdir (tmp, 0700);
        *c = '/';
      }
  mkdir (tmp, 0700);
}

const char *
ind_cache_dir (void)
{
  static char dir[1024];
  const char *env = getenv ("FXWB_INDUCTOR_CACHE");
  if (env && env[0])
    snprintf (dir, sizeof dir, "%s", env);
  else if (getenv ("XDG_CACHE_HOME") && getenv ("XDG_CACHE_HOME")[0])
    snprintf (dir, sizeof dir, "%s/fx-workbench/inductor", getenv ("XDG_CACHE_HOME"));
  else if (getenv ("HOME"))
    snprintf (dir, sizeof dir, "%s/.cache/fx-workbench/inductor", getenv ("HOME"));
  else
    snprintf (dir, sizeof dir, "/tmp/fx-workbench-inductor-%d", (int) getuid ());
  return dir;
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

bool
ind_have_openmp (void)
{
  static int known = -1;
  if (known >= 0)
    return known;
  const char *dir = ind_cache_dir ();
  mkdir_p (dir);
  char ok[1100], no[1100];
  snprintf (ok, sizeof ok, "%s/openmp-yes", dir);
  snprintf (no, sizeof no, "%s/openmp-no", dir);
  if (access (ok, F_OK) == 0)
    return (known = 1);
  if (access (no, F_OK) == 0)
    return (known = 0);
  char src[1100], so[1100], log[1100];
  snprintf (src, sizeof src, "%s/openmp-probe.c", dir);
  snprintf (so, sizeof so, "%s/openmp-probe.so", dir);
  snprintf (log, sizeof log, "%s/openmp-probe.log", dir);
  FILE *f = fopen (src, "w");
  if (!f)
    return (known = 0);
  fputs ("#include <omp.h>\nint fx_probe (void) { return omp_get_max_threads (); }\n", f);
  fclose (f);
  char *argv[] = { (char *) compiler (), (char *) "-O0", (char *) "-fPIC", (char *) "-shared", (char *) "-fopenmp",
                   (char *) "-o", so, src, NULL };
  known = run_compiler (argv, log) == 0;
  f = fopen (known ? ok : no, "w");
  if (f)
    fclose (f);
  return known;
}

bool
ind_have_mvec (void)
{
  static int known = -1;
  if (known >= 0)
    return known;
  const char *dir = ind_cache_dir ();
  mkdir_p (dir);
  char ok[1100], no[1100];
  snprintf (ok, sizeof ok, "%s/mvec-yes", dir);
  snprintf (no, sizeof no, "%s/mvec-no", dir);
  if (access (ok, F_OK) == 0)
    return (known = 1);
  if (access (no, F_OK) == 0)
    return (known = 0);
  char src[1100], so[1100], log[1100];
  snprintf (src, sizeof src, "%s/mvec-probe.c", dir);
  snprintf (so, sizeof so, "%s/mvec-probe.so", dir);
  snprintf (log, sizeof log, "%s/mvec-probe.log", dir);
  FILE *f = fopen (src, "w");
  if (!f)
    return (known = 0);
  fputs ("#include <math.h>\nextern float expf (float) __attribute__ ((__simd__ (\"notinbranch\")));\n"
         "void fx_probe (float *restrict a, int n) {\n#pragma omp simd\n for (int i = 0; i < n; i++) a[i] = expf (a[i]);\n}\n",
         f);
  fclose (f);
  char *argv[] = { (char *) compiler (), (char *) "-O2", (char *) "-fPIC", (char *) "-shared",
                   (char *) "-fopenmp-simd", (char *) "-march=native", (char *) "-o", so, src, (char *) "-lmvec",
                   (char *) "-lm", NULL };
  known = run_compiler (argv, log) == 0;
  f = fopen (known ? ok : no, "w");
  if (f)
    fclose (f);
  return known;
}

fx_status
ind_build (const char *source, size_t len, const char *cache_dir, bool *compiler_invoked, ind_library *lib,
           fx_buf *compiler_output, fx_diag *diag)
{
  memset (lib, 0, sizeof *lib);
  if (compiler_invoked)
    *compiler_invoked = false;
  const char *dir = cache_dir ? cache_dir : ind_cache_dir ();
  mkdir_p (dir);
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
  const char *flags[] = { "-O2", "-fPIC", "-shared", "-std=gnu11", march, "-fno-strict-aliasing", "-fwrapv",
                          "-fno-builtin-sin", "-fno-builtin-sinf", "-fno-builtin-cos", "-fno-builtin-cosf",
                          omp ? "-fopenmp" : "-Wno-unknown-pragmas" };
  size_t n_flags = sizeof flags / sizeof flags[0];
  uint64_t h = 14695981039346656037ULL;
  h = fnv1a (h, source, len);
  for (size_t i = 0; i < n_flags; i++)
    h = fnv1a (h, flags[i], strlen (flags[i]) + 1);
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
      h = fnv1a (h, cpu_id, strlen (cpu_id));
    }
  h = fnv1a (h, compiler (), strlen (compiler ()));
  char base[900], so[1000], src[1200], tmp[1200], log[1200];
  snprintf (base, sizeof base, "%.800s/k%016llx", dir, (unsigned long long) h);
  snprintf (so, sizeof so, "%s.so", base);
  snprintf (src, sizeof src, "%s.c", base);
  snprintf (log, sizeof log, "%s.log", base);
  snprintf (tmp, sizeof tmp, "%s.%d.tmp.so", base, (int) getpid ());
  if (access (so, R_OK) != 0)
    {
      FILE *f = fopen (src, "w");
      if (f == NULL)
        return fx_diag_set (diag, FX_ERR_IO, "inductor: cannot write %s: %s", src, strerror (errno));
      fwrite (source, 1, len, f);
      fclose (f);
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
      if (rename (tmp, so) != 0)
        {
          unlink (tmp);
          return fx_diag_set (diag, FX_ERR_IO, "inductor: cannot install %s: %s", so, strerror (errno));
        }
    }
  else
    lib->cache_hit = true;
  /* never unloaded: OpenMP worker threads may still reference the code after a kernel returns */
  lib->handle = dlopen (so, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (lib->handle == NULL)
    return fx_diag_set (diag, FX_ERR_BACKEND, "inductor: dlopen %s failed: %s", so, dlerror ());
  snprintf (lib->so_path, sizeof lib->so_path, "%s", so);
  return FX_OK;
}
