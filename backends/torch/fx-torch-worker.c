/* fx-torch-worker.c: the torch backend's worker process: spawned without a shell, spoken to over pipes one JSON line
   at a time, killed on timeout, its death reported with its exit status and stderr; tensor files both ways. */
#include "fx-torch-impl.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

const char *
fx_torch_pick_python (const char *option_value)
{
  if (option_value != NULL && option_value[0] != '\0')
    return option_value;
  const char *env = getenv ("FXWB_PYTHON");
  if (env != NULL && env[0] != '\0')
    return env;
  if (access ("/usr/bin/python3", X_OK) == 0)
    return "/usr/bin/python3";
  return "python3";
}

/* ---------------------------------------------------------------- process status */

static int
remove_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void) st;
  (void) flag;
  (void) ftw;
  remove (path);
  return 0;
}

/* Reaps the worker if it has exited (wait: up to wait_ms for it). Fills *status; true when reaped. */
static bool
reap (fx_torch_worker *w, double wait_ms, int *status)
{
  if (w->pid <= 0)
    return true;
  double deadline = fx_now_ms () + wait_ms;
  for (;;)
    {
      int st = 0;
      pid_t r = waitpid (w->pid, &st, WNOHANG);
      if (r == w->pid || (r < 0 && errno == ECHILD))
        {
          if (status)
            *status = r == w->pid ? st : 0;
          w->pid = 0;
          return true;
        }
      if (fx_now_ms () >= deadline)
        return false;
      struct timespec ts = { 0, 5 * 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
}

/* Kills the worker's whole process group (Inductor starts compile workers of its own) and reaps it. */
static void
kill_worker (fx_torch_worker *w, int *status)
{
  if (w->pid <= 0)
    return;
  kill (-w->pid, SIGKILL);
  kill (w->pid, SIGKILL);
  int st = 0;
  if (waitpid (w->pid, &st, 0) == w->pid && status)
    *status = st;
  w->pid = 0;
}

bool
fx_torch_worker_alive (fx_torch_worker *w)
{
  return w->pid > 0 && !reap (w, 0, NULL);
}

char *
fx_torch_worker_stderr_tail (const fx_torch_worker *w, size_t max)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/stderr.log", w->workdir);
  FILE *f = fopen (path, "rb");
  char *out = calloc (1, max + 1);
  if (f == NULL || out == NULL)
    {
      if (f)
        fclose (f);
      return out;
    }
  long size = 0;
  if (fseek (f, 0, SEEK_END) == 0)
    size = ftell (f);
  long from = size > (long) max ? size - (long) max : 0;
  fseek (f, from, SEEK_SET);
  size_t n = fread (out, 1, max, f);
  out[n] = '\0';
  fclose (f);
  /* Start at a line when the tail was cut. */
  if (from > 0)
    {
      char *nl = strchr (out, '\n');
      if (nl != NULL && nl[1] != '\0')
        memmove (out, nl + 1, strlen (nl + 1) + 1);
    }
  /* Control bytes (progress bars, colour codes) would garble a terminal. */
  for (char *p = out; *p; p++)
    if ((unsigned char) *p < 0x20 && *p != '\n' && *p != '\t')
      *p = '?';
  return out;
}

/* "exited with status 3" / "was killed by signal 11 (Segmentation fault)" */
static void
describe_status (int status, char *out, size_t size)
{
  if (WIFEXITED (status))
    snprintf (out, size, "exited with status %d", WEXITSTATUS (status));
  else if (WIFSIGNALED (status))
    snprintf (out, size, "was killed by signal %d (%s)", WTERMSIG (status), strsignal (WTERMSIG (status)));
  else
    snprintf (out, size, "stopped (wait status %d)", status);
}

/* Sets diag to head + the tail of the worker's stderr, clipped to fit the message. */
static fx_status
fail_with_stderr (fx_torch_worker *w, fx_status code, const char *head, fx_diag *diag)
{
  char *tail = fx_torch_worker_stderr_tail (w, 2048);
  size_t room = sizeof diag->message - 1;
  size_t hlen = strlen (head);
  const char *sep = "; stderr:\n";
  const char *t = tail ? tail : "";
  while (*t == '\n')
    t++;
  if (*t == '\0')
    fx_diag_set (diag, code, "%s (nothing on stderr)", head);
  else
    {
      size_t tlen = strlen (t);
      size_t avail = room > hlen + strlen (sep) ? room - hlen - strlen (sep) : 0;
      const char *shown = tlen > avail ? t + (tlen - avail) : t;
      fx_diag_set (diag, code, "%s%s%s", head, sep, shown);
    }
  free (tail);
  return code;
}

static fx_status
worker_died (fx_torch_worker *w, const char *what, fx_diag *diag)
{
  int status = 0;
  if (!reap (w, 2000, &status))
    kill_worker (w, &status);
  char how[128], head[512];
  describe_status (status, how, sizeof how);
  snprintf (head, sizeof head, "torch worker (%s) %s during %s", w->python, how, what);
  return fail_with_stderr (w, FX_ERR_BACKEND, head, diag);
}

static fx_status
worker_timed_out (fx_torch_worker *w, const char *what, double seconds, fx_diag *diag)
{
  kill_worker (w, NULL);
  char head[512];
  snprintf (head, sizeof head, "torch worker (%s) did not answer %s within %.1f s%s; killed it", w->python, what,
            seconds, seconds == w->timeout_s ? " (option timeout)" : "");
  return fail_with_stderr (w, FX_ERR_BACKEND, head, diag);
}

/* ---------------------------------------------------------------- line I/O */

typedef enum
{
  IO_OK,
  IO_CLOSED,   /* EOF or EPIPE: the worker is gone */
  IO_TIMEOUT,
  IO_ERROR,
} io_result;

static int
remaining_ms (double deadline)
{
  double left = deadline - fx_now_ms ();
  if (left <= 0)
    return 0;
  return left > 3.6e6 ? 3600000 : (int) ceil (left);
}

/* Writes all of data; SIGPIPE is blocked in this thread meanwhile (a dead worker must not kill fxwb) and a pending
   one it raised is taken back. */
static io_result
write_all (int fd, const char *data, size_t len, double deadline)
{
  sigset_t pipe_set, old, pending;
  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  sigpending (&pending);
  bool was_pending = sigismember (&pending, SIGPIPE) == 1;
  pthread_sigmask (SIG_BLOCK, &pipe_set, &old);
  io_result res = IO_OK;
  size_t off = 0;
  while (off < len)
    {
      struct pollfd p = { fd, POLLOUT, 0 };
      int pr = poll (&p, 1, remaining_ms (deadline));
      if (pr < 0 && errno == EINTR)
        continue;
      if (pr == 0)
        {
          res = IO_TIMEOUT;
          break;
        }
      if (pr < 0)
        {
          res = IO_ERROR;
          break;
        }
      ssize_t n = write (fd, data + off, len - off);
      if (n < 0)
        {
          if (errno == EINTR || errno == EAGAIN)
            continue;
          res = errno == EPIPE ? IO_CLOSED : IO_ERROR;
          break;
        }
      off += (size_t) n;
    }
  if (res == IO_CLOSED && !was_pending)
    {
      struct timespec zero = { 0, 0 };
      sigtimedwait (&pipe_set, NULL, &zero);
    }
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  return res;
}

/* Reads until a full line is in w->rbuf; *line_len is its length without the newline. */
static io_result
read_line (fx_torch_worker *w, double deadline, size_t *line_len)
{
  for (;;)
    {
      char *nl = w->rbuf.len ? memchr (w->rbuf.data, '\n', w->rbuf.len) : NULL;
      if (nl != NULL)
        {
          *line_len = (size_t) (nl - w->rbuf.data);
          return IO_OK;
        }
      struct pollfd p = { w->from_child, POLLIN, 0 };
      int pr = poll (&p, 1, remaining_ms (deadline));
      if (pr < 0 && errno == EINTR)
        continue;
      if (pr == 0)
        return IO_TIMEOUT;
      if (pr < 0)
        return IO_ERROR;
      fx_buf_reserve (&w->rbuf, 65536);
      ssize_t n = read (w->from_child, w->rbuf.data + w->rbuf.len, 65536);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0)
        return n == 0 ? IO_CLOSED : IO_ERROR;
      w->rbuf.len += (size_t) n;
      w->rbuf.data[w->rbuf.len] = '\0';
    }
}

static void
consume_line (fx_torch_worker *w, size_t line_len)
{
  size_t rest = w->rbuf.len - line_len - 1;
  memmove (w->rbuf.data, w->rbuf.data + line_len + 1, rest);
  w->rbuf.len = rest;
  w->rbuf.data[rest] = '\0';
}

/* Waits for one reply line and parses it. */
static fx_status
read_reply (fx_torch_worker *w, const char *what, double deadline, double seconds, json_object **reply,
            fx_diag *diag)
{
  size_t len = 0;
  io_result r = read_line (w, deadline, &len);
  if (r == IO_TIMEOUT)
    return worker_timed_out (w, what, seconds, diag);
  if (r != IO_OK)
    return worker_died (w, what, diag);
  w->rbuf.data[len] = '\0';
  json_object *j = json_tokener_parse (w->rbuf.data);
  consume_line (w, len);
  if (j == NULL || !json_object_is_type (j, json_type_object))
    {
      json_object_put (j);
      char head[512];
      snprintf (head, sizeof head, "torch worker (%s) answered %s with something that is not a JSON object",
                w->python, what);
      return fail_with_stderr (w, FX_ERR_BACKEND, head, diag);
    }
  *reply = j;
  return FX_OK;
}

static const char *
jstr (json_object *o, const char *key)
{
  json_object *v;
  if (o && json_object_object_get_ex (o, key, &v) && json_object_is_type (v, json_type_string))
    return json_object_get_string (v);
  return NULL;
}

static bool
jbool (json_object *o, const char *key)
{
  json_object *v;
  return o && json_object_object_get_ex (o, key, &v) && json_object_get_boolean (v);
}

/* ---------------------------------------------------------------- start and stop */

static fx_status
spawn_error (const char *python, int err, fx_diag *diag)
{
  if (err == ENOENT)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND,
                        "python interpreter '%s' not found (set the torch backend's option python, or "
                        "$FXWB_PYTHON, to a Python with torch)", python);
  if (err == EACCES)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "python interpreter '%s' is not executable", python);
  return fx_diag_set (diag, FX_ERR_BACKEND, "cannot start python interpreter '%s': %s", python, strerror (err));
}

fx_status
fx_torch_worker_start (const char *python, double timeout_s, fx_torch_worker **out, fx_diag *diag)
{
  *out = NULL;
  if (python == NULL || python[0] == '\0')
    return fx_diag_set (diag, FX_ERR_INVALID, "no python interpreter given");
  if (strchr (python, '/') != NULL)
    {
      struct stat st;
      if (stat (python, &st) != 0)
        return spawn_error (python, errno, diag);
      if (S_ISDIR (st.st_mode) || access (python, X_OK) != 0)
        return spawn_error (python, EACCES, diag);
    }
  fx_torch_worker *w = calloc (1, sizeof *w);
  if (w == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  w->to_child = w->from_child = -1;
  w->timeout_s = timeout_s > 0 ? timeout_s : 600;
  w->python = strdup (python);
  fx_buf_init (&w->rbuf);
  const char *tmp = getenv ("TMPDIR");
  char templ[4096];
  snprintf (templ, sizeof templ, "%s/fxwb-torch-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (mkdtemp (templ) == NULL)
    {
      fx_diag_set (diag, FX_ERR_IO, "cannot create a folder for the torch worker (%s): %s", templ, strerror (errno));
      fx_torch_worker_stop (w);
      return FX_ERR_IO;
    }
  w->workdir = strdup (templ);

  char script[4096], errlog[4096], cache_env[4200];
  snprintf (script, sizeof script, "%s/fxwb_torch_runner.py", w->workdir);
  snprintf (errlog, sizeof errlog, "%s/stderr.log", w->workdir);
  snprintf (cache_env, sizeof cache_env, "TORCHINDUCTOR_CACHE_DIR=%s/inductor-cache", w->workdir);
  fx_status st = fx_file_write (script, (const char *) fx_torch_runner_script, fx_torch_runner_script_len, diag);
  if (st != FX_OK)
    {
      fx_torch_worker_stop (w);
      return st;
    }

  int in_pipe[2] = { -1, -1 }, out_pipe[2] = { -1, -1 };
  int errfd = open (errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (errfd < 0 || pipe2 (in_pipe, O_CLOEXEC) != 0 || pipe2 (out_pipe, O_CLOEXEC) != 0)
    {
      int e = errno;
      if (errfd >= 0)
        close (errfd);
      for (int i = 0; i < 2; i++)
        {
          if (in_pipe[i] >= 0)
            close (in_pipe[i]);
          if (out_pipe[i] >= 0)
            close (out_pipe[i]);
        }
      fx_torch_worker_stop (w);
      return fx_diag_set (diag, FX_ERR_IO, "cannot create pipes for the torch worker: %s", strerror (e));
    }

  /* The environment: ours, with Inductor's code cache inside the worker's folder (so its output code can be
     found, and one compile does not reuse another's). */
  size_t n_env = 0;
  while (environ[n_env] != NULL)
    n_env++;
  char **envp = calloc (n_env + 3, sizeof *envp);
  size_t k = 0;
  for (size_t i = 0; i < n_env; i++)
    if (strncmp (environ[i], "TORCHINDUCTOR_CACHE_DIR=", 24) != 0)
      envp[k++] = environ[i];
  envp[k++] = cache_env;
  envp[k++] = (char *) "PYTHONDONTWRITEBYTECODE=1";
  envp[k] = NULL;

  char *argv[] = { w->python, (char *) "-u", script, w->workdir, NULL };
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2 (&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, errfd, 2);
  posix_spawnattr_init (&attr);
  /* Its own process group (killed as one on timeout), default signal dispositions and an empty mask whatever
     this process set up. */
  sigset_t all, none;
  sigfillset (&all);
  sigemptyset (&none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  double t0 = fx_now_ms ();
  pid_t pid = 0;
  int err = strchr (python, '/') ? posix_spawn (&pid, python, &fa, &attr, argv, envp)
                                 : posix_spawnp (&pid, python, &fa, &attr, argv, envp);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  free (envp);
  close (in_pipe[0]);
  close (out_pipe[1]);
  close (errfd);
  w->to_child = in_pipe[1];
  w->from_child = out_pipe[0];
  if (err != 0)
    {
      fx_torch_worker_stop (w);
      return spawn_error (python, err, diag);
    }
  w->pid = pid;
  fcntl (w->to_child, F_SETFL, fcntl (w->to_child, F_GETFL) | O_NONBLOCK);

  json_object *hello = NULL;
  /* Importing torch takes seconds on a busy machine: the start-up gets at least two minutes, whatever the
     per-request timeout. */
  double startup_s = w->timeout_s > 120 ? w->timeout_s : 120;
  st = read_reply (w, "start-up (import torch)", fx_now_ms () + startup_s * 1e3, startup_s, &hello, diag);
  if (st != FX_OK)
    {
      fx_torch_worker_stop (w);
      return st;
    }
  w->start_ms = fx_now_ms () - t0;
  if (!jbool (hello, "ok"))
    {
      const char *e = jstr (hello, "error");
      fx_diag_set (diag, FX_ERR_NOT_FOUND, "python interpreter '%s' has no usable torch: %s", python,
                   e ? e : "(no reason given)");
      json_object_put (hello);
      fx_torch_worker_stop (w);
      return FX_ERR_NOT_FOUND;
    }
  const char *s;
  if ((s = jstr (hello, "torch")) != NULL)
    snprintf (w->torch_version, sizeof w->torch_version, "%s", s);
  if ((s = jstr (hello, "python")) != NULL)
    snprintf (w->python_version, sizeof w->python_version, "%s", s);
  if ((s = jstr (hello, "executable")) != NULL)
    snprintf (w->executable, sizeof w->executable, "%s", s);
  w->has_compile = jbool (hello, "has_compile");
  w->has_cuda = jbool (hello, "cuda");
  json_object_put (hello);
  *out = w;
  return FX_OK;
}

void
fx_torch_worker_stop (fx_torch_worker *w)
{
  if (w == NULL)
    return;
  if (w->pid > 0 && w->to_child >= 0)
    {
      static const char quit[] = "{\"op\": \"quit\"}\n";
      write_all (w->to_child, quit, sizeof quit - 1, fx_now_ms () + 200);
    }
  if (w->to_child >= 0)
    close (w->to_child);
  if (w->pid > 0 && !reap (w, 1000, NULL))
    kill_worker (w, NULL);
  if (w->from_child >= 0)
    close (w->from_child);
  if (w->workdir != NULL)
    nftw (w->workdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  free (w->workdir);
  free (w->python);
  fx_buf_free (&w->rbuf);
  free (w);
}

fx_status
fx_torch_worker_call (fx_torch_worker *w, json_object *request, const char *what, json_object **reply,
                      fx_diag *diag)
{
  *reply = NULL;
  if (w->pid <= 0)
    return fx_diag_set (diag, FX_ERR_BACKEND, "the torch worker is no longer running (it failed earlier)");
  double deadline = fx_now_ms () + w->timeout_s * 1e3;
  const char *text = json_object_to_json_string_ext (request, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  fx_buf line;
  fx_buf_init (&line);
  fx_buf_puts (&line, text);
  fx_buf_putc (&line, '\n');
  io_result r = write_all (w->to_child, line.data, line.len, deadline);
  fx_buf_free (&line);
  if (r == IO_TIMEOUT)
    return worker_timed_out (w, what, w->timeout_s, diag);
  if (r != IO_OK)
    return worker_died (w, what, diag);
  json_object *j = NULL;
  fx_status st = read_reply (w, what, deadline, w->timeout_s, &j, diag);
  if (st != FX_OK)
    return st;
  if (!jbool (j, "ok"))
    {
      const char *e = jstr (j, "error");
      const char *tb = jstr (j, "traceback");
      /* The traceback's last lines say where in the graph it failed; the message keeps as many as fit. */
      fx_buf b;
      fx_buf_init (&b);
      fx_buf_printf (&b, "torch (%s) failed in %s: %s", w->torch_version, what, e ? e : "(no message)");
      if (tb != NULL && tb[0] != '\0')
        {
          size_t room = sizeof diag->message - 1;
          size_t tlen = strlen (tb);
          size_t avail = room > b.len + 2 ? room - b.len - 2 : 0;
          if (avail > 0)
            {
              const char *shown = tlen > avail ? tb + (tlen - avail) : tb;
              if (shown != tb)
                {
                  const char *nl = strchr (shown, '\n');
                  if (nl != NULL)
                    shown = nl + 1;
                }
              fx_buf_printf (&b, "\n%s", shown);
            }
        }
      fx_diag_set (diag, FX_ERR_BACKEND, "%s", b.data);
      fx_buf_free (&b);
      json_object_put (j);
      return FX_ERR_BACKEND;
    }
  *reply = j;
  return FX_OK;
}

/* ---------------------------------------------------------------- tensor files */

static bool
has_negative_stride (const fx_tensor *t)
{
  for (int d = 0; d < t->ndim; d++)
    if (t->strides[d] < 0)
      return true;
  return false;
}

/* The sizes or strides of the header: "1, 2, 3". */
static void
put_ints (fx_buf *out, const int64_t *v, int n)
{
  for (int d = 0; d < n; d++)
    fx_buf_printf (out, "%s%lld", d ? ", " : "", (long long) v[d]);
}

fx_status
fx_torch_tensor_write (const fx_tensor *t, const char *path, fx_diag *diag)
{
  if (fx_tensor_is_meta (t))
    return fx_diag_set (diag, FX_ERR_INVALID, "a meta tensor (no data) cannot be sent to torch");
  if (t->storage->device.type != FX_DEVICE_CPU)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED,
                        "the torch backend takes CPU tensors (a tensor on %s was given); option device='cuda' "
                        "runs them on the GPU in torch", fx_device_type_name (t->storage->device.type));
  if (!fx_dtype_is_supported (t->dtype))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "dtype %s cannot be sent to torch", fx_dtype_name (t->dtype));
  /* The exact layout travels (strides, overlap of expanded dims): the bytes from the first element to the last
     reachable one. A layout torch cannot have (negative strides) is sent as a contiguous copy. */
  fx_tensor *copy = NULL;
  const fx_tensor *src = t;
  if (has_negative_stride (t) || !fx_tensor_check_bounds (t))
    src = copy = fx_tensor_contiguous_copy (NULL, t);
  if (src == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  int64_t numel = fx_tensor_numel (src);
  int64_t extent = 0;
  if (numel > 0)
    {
      extent = 1;
      for (int d = 0; d < src->ndim; d++)
        extent += (src->sizes[d] - 1) * src->strides[d];
    }
  fx_buf b;
  fx_buf_init (&b);
  fx_buf_printf (&b, "{\"dtype\": \"%s\", \"shape\": [", fx_dtype_name (src->dtype));
  put_ints (&b, src->sizes, src->ndim);
  fx_buf_puts (&b, "], \"stride\": [");
  put_ints (&b, src->strides, src->ndim);
  fx_buf_printf (&b, "], \"storage\": %lld, \"device\": \"cpu\"}\n", (long long) extent);
  if (extent > 0)
    fx_buf_append (&b, fx_tensor_data (src), (size_t) extent * fx_dtype_size (src->dtype));
  fx_status st = fx_file_write (path, b.data, b.len, diag);
  fx_buf_free (&b);
  fx_tensor_unref (copy);
  return st;
}

fx_status
fx_torch_tensor_read (const char *path, fx_tensor **out, fx_diag *diag)
{
  *out = NULL;
  char *data = NULL;
  size_t len = 0;
  char *payload;
  fx_status st = fx_file_read_header (path, &data, &len, &payload, diag);
  if (st != FX_OK)
    return st;
  json_object *h = json_tokener_parse (data);
  json_object *jd = NULL, *js = NULL, *jst = NULL, *jn = NULL;
  fx_dtype dtype = FX_DTYPE_UNKNOWN;
  int64_t sizes[FX_TENSOR_MAX_DIMS], strides[FX_TENSOR_MAX_DIMS];
  int ndim = -1;
  int64_t storage = -1;
  const char *dtype_name = "?";
  if (h && json_object_object_get_ex (h, "dtype", &jd) && json_object_object_get_ex (h, "shape", &js)
      && json_object_object_get_ex (h, "stride", &jst) && json_object_object_get_ex (h, "storage", &jn)
      && json_object_is_type (js, json_type_array) && json_object_is_type (jst, json_type_array)
      && json_object_array_length (js) == json_object_array_length (jst)
      && json_object_array_length (js) <= FX_TENSOR_MAX_DIMS)
    {
      dtype_name = json_object_get_string (jd);
      dtype = fx_dtype_from_name (dtype_name);
      ndim = (int) json_object_array_length (js);
      storage = json_object_get_int64 (jn);
      for (int d = 0; d < ndim; d++)
        {
          sizes[d] = json_object_get_int64 (json_object_array_get_idx (js, (size_t) d));
          strides[d] = json_object_get_int64 (json_object_array_get_idx (jst, (size_t) d));
          if (sizes[d] < 0 || strides[d] < 0)
            ndim = -1;
        }
    }
  else if (h && json_object_object_get_ex (h, "shape", &js) && json_object_is_type (js, json_type_array)
           && json_object_array_length (js) > FX_TENSOR_MAX_DIMS)
    {
      json_object_put (h);
      free (data);
      return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "%s: a tensor of more than %d dims", path, FX_TENSOR_MAX_DIMS);
    }
  if (ndim >= 0 && !fx_dtype_is_supported (dtype))
    {
      fx_diag_set (diag, FX_ERR_UNSUPPORTED, "torch returned a tensor of dtype %s, which the engine does not support",
                   dtype_name);
      json_object_put (h);
      free (data);
      return FX_ERR_UNSUPPORTED;
    }
  json_object_put (h);
  if (ndim < 0 || storage < 0)
    {
      free (data);
      return fx_diag_set (diag, FX_ERR_PARSE, "%s: bad tensor header", path);
    }
  int64_t numel = 1, extent = 0;
  for (int d = 0; d < ndim; d++)
    numel *= sizes[d];
  if (numel > 0)
    {
      extent = 1;
      for (int d = 0; d < ndim; d++)
        extent += (sizes[d] - 1) * strides[d];
    }
  size_t body = len - (size_t) (payload - data);
  size_t isz = fx_dtype_size (dtype);
  if (extent != storage || body != (size_t) storage * isz)
    {
      free (data);
      return fx_diag_set (diag, FX_ERR_PARSE, "%s: %zu bytes of data, the header describes %lld elements of %zu bytes",
                          path, body, (long long) storage, isz);
    }
  fx_tensor *t = numel > 0 ? fx_tensor_new_strided (NULL, dtype, ndim, sizes, strides)
                           : fx_tensor_new (NULL, dtype, ndim, sizes);
  if (t == NULL)
    {
      free (data);
      return fx_diag_set (diag, FX_ERR_NOMEM, "%s: cannot allocate the tensor", path);
    }
  if (body > 0)
    {
      if (t->storage->nbytes < body + (size_t) t->offset * isz)
        {
          fx_tensor_unref (t);
          free (data);
          return fx_diag_set (diag, FX_ERR_PARSE, "%s: layout does not fit its storage", path);
        }
      memcpy (fx_tensor_data (t), payload, body);
    }
  free (data);
  *out = t;
  return FX_OK;
}

/* ---------------------------------------------------------------- values */

/* A float as the worker reads it back: "nan", "inf", "-inf", else all 17 digits. */
static const char *
float_text (double x, char *text, size_t size)
{
  if (isnan (x))
    snprintf (text, size, "nan");
  else if (isinf (x))
    snprintf (text, size, "%sinf", x < 0 ? "-" : "");
  else
    snprintf (text, size, "%.17g", x);
  return text;
}

fx_status
fx_torch_value_to_json (fx_torch_worker *w, const fx_value *v, json_object **out, fx_diag *diag)
{
  /* the kind the worker reads; the value goes in "v" ("path" for a tensor's file, "items" for a sequence) */
  static const char *const tags[FX_VALUE_KIND_COUNT] = {
    [FX_VALUE_TENSOR] = "tensor", [FX_VALUE_INT] = "int", [FX_VALUE_FLOAT] = "float", [FX_VALUE_BOOL] = "bool",
    [FX_VALUE_NONE] = "none", [FX_VALUE_LIST] = "list", [FX_VALUE_TUPLE] = "tuple",
  };
  *out = NULL;
  const char *key = "v";
  json_object *payload = NULL;
  char text[64];
  switch (v->kind)
    {
    case FX_VALUE_TENSOR:
      {
        char path[4200];
        snprintf (path, sizeof path, "%s/in_%d.fxt", w->workdir, w->file_seq++);
        fx_status st = fx_torch_tensor_write (v->u.t, path, diag);
        if (st != FX_OK)
          return st;
        key = "path";
        payload = json_object_new_string (path);
        break;
      }
    case FX_VALUE_INT:
      payload = json_object_new_int64 (v->u.i);
      break;
    case FX_VALUE_FLOAT:
      payload = json_object_new_string (float_text (v->u.f, text, sizeof text));
      break;
    case FX_VALUE_BOOL:
      payload = json_object_new_boolean (v->u.b);
      break;
    case FX_VALUE_NONE:
      break;
    case FX_VALUE_LIST:
    case FX_VALUE_TUPLE:
      key = "items";
      payload = json_object_new_array ();
      for (size_t i = 0; i < v->u.seq.n; i++)
        {
          json_object *item = NULL;
          fx_status st = fx_torch_value_to_json (w, &v->u.seq.items[i], &item, diag);
          if (st != FX_OK)
            {
              json_object_put (payload);
              return st;
            }
          json_object_array_add (payload, item);
        }
      break;
    case FX_VALUE_STR:
    case FX_VALUE_DTYPE:
    case FX_VALUE_DEVICE:
    case FX_VALUE_LAYOUT:
    case FX_VALUE_MEMFMT:
    case FX_VALUE_KIND_COUNT:
    default:
      return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "an input of kind %d cannot be sent to torch", (int) v->kind);
    }
  json_object *o = json_object_new_object ();
  json_object_object_add (o, "t", json_object_new_string (tags[v->kind]));
  if (payload)
    json_object_object_add (o, key, payload);
  *out = o;
  return FX_OK;
}

fx_status
fx_torch_values_from_json (json_object *arr, fx_arena *arena, fx_value **out, size_t *n_out, fx_diag *diag)
{
  size_t n = json_object_array_length (arr);
  fx_value *vals = fx_arena_alloc (arena, sizeof (fx_value) * (n ? n : 1));
  for (size_t i = 0; i < n; i++)
    {
      fx_status st = fx_torch_value_from_json (json_object_array_get_idx (arr, i), arena, &vals[i], diag);
      if (st != FX_OK)
        {
          for (size_t k = 0; k < i; k++)
            fx_value_clear (&vals[k]);
          return st;
        }
    }
  *out = vals;
  *n_out = n;
  return FX_OK;
}

fx_status
fx_torch_value_from_json (json_object *j, fx_arena *arena, fx_value *out, fx_diag *diag)
{
  *out = fx_value_none ();
  const char *t = jstr (j, "t");
  json_object *v = NULL;
  if (t == NULL)
    return fx_diag_set (diag, FX_ERR_PARSE, "torch worker: a value without a kind");
  json_object_object_get_ex (j, "v", &v);
  if (strcmp (t, "tensor") == 0)
    {
      const char *path = jstr (j, "path");
      if (path == NULL)
        return fx_diag_set (diag, FX_ERR_PARSE, "torch worker: a tensor without a file");
      fx_tensor *tensor = NULL;
      fx_status st = fx_torch_tensor_read (path, &tensor, diag);
      if (st != FX_OK)
        return st;
      *out = fx_value_tensor (tensor);
      return FX_OK;
    }
  if (strcmp (t, "int") == 0)
    {
      *out = fx_value_int (json_object_get_int64 (v));
      return FX_OK;
    }
  if (strcmp (t, "float") == 0)
    {
      const char *s = v ? json_object_get_string (v) : "nan";
      *out = fx_value_float (strtod (s, NULL));
      return FX_OK;
    }
  if (strcmp (t, "bool") == 0)
    {
      *out = fx_value_bool (json_object_get_boolean (v));
      return FX_OK;
    }
  if (strcmp (t, "none") == 0)
    return FX_OK;
  if (strcmp (t, "tuple") == 0 || strcmp (t, "list") == 0)
    {
      json_object *items = NULL;
      if (!json_object_object_get_ex (j, "items", &items) || !json_object_is_type (items, json_type_array))
        return fx_diag_set (diag, FX_ERR_PARSE, "torch worker: a %s without items", t);
      fx_status st = fx_torch_values_from_json (items, arena, &out->u.seq.items, &out->u.seq.n, diag);
      if (st == FX_OK)
        out->kind = strcmp (t, "tuple") == 0 ? FX_VALUE_TUPLE : FX_VALUE_LIST;
      return st;
    }
  return fx_diag_set (diag, FX_ERR_PARSE, "torch worker: unknown value kind '%s'", t);
}
