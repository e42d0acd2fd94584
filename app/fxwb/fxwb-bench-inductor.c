/* fxwb-bench-inductor.c: `fxwb bench inductor-cpu` and `inductor-cuda`: every fixture graph and every op-coverage
   graph of bench/graphs at full size through torch eager, torch.compile (inductor, where the PyTorch has it) and our
   inductor on the CPU or the GPU, in one run: a ratio table and geometric means. Each graph is one `fxwb compare
   --json` child in its own process group, so a graph that hangs or crashes is reported ("timed out", "crashed") and
   the rest still run; compare lets go of each column's worker before it times the next. */
#include "fxwb.h"
#include "fxwb-runs.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct
{
  char *name;   /* "col_sum" (the file name less ".aten.0.py") */
  char *path;   /* the FX file */
  char *inputs; /* NAME.inputs.json beside it */
} bench_graph;

static void
bench_graph_free (gpointer p)
{
  bench_graph *g = p;
  g_free (g->name);
  g_free (g->path);
  g_free (g->inputs);
  g_free (g);
}

static int
cmp_graph (gconstpointer a, gconstpointer b)
{
  const bench_graph *x = *(bench_graph *const *) a, *y = *(bench_graph *const *) b;
  return strcmp (x->name, y->name);
}

/* Does NAME hold one of the comma-separated texts of ONLY? */
static gboolean
name_matches (const char *name, const char *only)
{
  g_auto (GStrv) parts = g_strsplit (only, ",", -1);
  for (char **p = parts; *p; p++)
    if (**p && strstr (name, *p))
      return TRUE;
  return FALSE;
}

/* The graphs of DIR: NAME.py with NAME.inputs.json beside it, of the stage asked for ("aten": names with
   ".aten." or no stage; "core_aten"; "all"), whose name holds `only`. */
static gboolean
collect_graphs (const char *dir, const char *stage, const char *only, GPtrArray *out)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    return FALSE;
  const char *e;
  while ((e = g_dir_read_name (d)) != NULL)
    {
      if (!g_str_has_suffix (e, ".inputs.json"))
        continue;
      g_autofree char *base = g_strndup (e, strlen (e) - strlen (".inputs.json"));
      gboolean core = strstr (base, ".core_aten.") != NULL;
      if ((strcmp (stage, "aten") == 0 && core) || (strcmp (stage, "core_aten") == 0 && !core))
        continue;
      g_autofree char *py = g_strdup_printf ("%s/%s.py", dir, base);
      if (!g_file_test (py, G_FILE_TEST_IS_REGULAR))
        continue;
      /* "col_sum" for col_sum.aten.0 (the stage is in the table's title); all stages keep their full names */
      char *name = g_strdup (base);
      char *dot = strcmp (stage, "all") != 0 ? strstr (name, core ? ".core_aten." : ".aten.") : NULL;
      if (dot)
        *dot = '\0';
      if (only && !name_matches (name, only))
        {
          g_free (name);
          continue;
        }
      bench_graph *g = g_new0 (bench_graph, 1);
      g->name = name;
      g->path = g_steal_pointer (&py);
      g->inputs = g_strdup_printf ("%s/%s", dir, e);
      g_ptr_array_add (out, g);
    }
  g_dir_close (d);
  return TRUE;
}

typedef enum
{
  CHILD_OK,
  CHILD_TIMED_OUT,
  CHILD_CRASHED,
  CHILD_NOT_STARTED,
} child_outcome;

/* Starts argv (argv[0] an absolute path) in its own process group with stdout into out_path and stderr into
   err_path; its pid, or -1. */
static pid_t
spawn_child (char *const *argv, char *const *envp, const char *out_path, const char *err_path)
{
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen (&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen (&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawnattr_t attr;
  posix_spawnattr_init (&attr);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup (&attr, 0);
  pid_t pid;
  int rc = posix_spawn (&pid, argv[0], &fa, &attr, argv, envp);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  return rc == 0 ? pid : -1;
}

/* Has PID ended (by DEADLINE, a monotonic time, its group killed after)? CHILD_OK with *exit_status, or how it
   ended; *done FALSE while it runs and the deadline is not past. */
static child_outcome
poll_child (pid_t pid, gint64 deadline, gboolean *done, int *exit_status)
{
  int status = 0;
  *done = TRUE;
  pid_t w = waitpid (pid, &status, WNOHANG);
  if (w < 0 && errno != EINTR)
    return CHILD_CRASHED;
  if (w != pid)
    {
      if (g_get_monotonic_time () <= deadline)
        {
          *done = FALSE;
          return CHILD_OK;
        }
      kill (-pid, SIGKILL);
      while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
      return CHILD_TIMED_OUT;
    }
  /* the torch worker may outlive a crashed compare: the group goes with it */
  kill (-pid, SIGKILL);
  if (WIFSIGNALED (status))
    return CHILD_CRASHED;
  *exit_status = WEXITSTATUS (status);
  return CHILD_OK;
}

/* Runs argv to its end (see spawn_child); kills its group after timeout_s. */
static child_outcome
run_child (char *const *argv, char *const *envp, const char *out_path, const char *err_path, double timeout_s,
           int *exit_status)
{
  pid_t pid = spawn_child (argv, envp, out_path, err_path);
  if (pid < 0)
    return CHILD_NOT_STARTED;
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * 1e6);
  for (;;)
    {
      gboolean done;
      child_outcome oc = poll_child (pid, deadline, &done, exit_status);
      if (done)
        return oc;
      g_usleep (20000);
    }
}

/* --prepare: each graph through torch.compile once, JOBS at a time, before anything is timed, so that the timed
   run finds Inductor's caches (FX graph, kernels) warm: what this bench times is the calls, and a cold C++ or Triton
   compile of every graph one after another can take longer than the rest of the run. Returns how many failed. */
static int
prepare_torch_compile (GPtrArray *graphs, const char *self, char **envp, const char *device,
                       int scale, int jobs, double timeout_s)
{
  g_autofree char *col = g_strdup_printf ("torch:inductor,device=%s", device);
  g_autofree char *s_s = g_strdup_printf ("%d", scale);
  pid_t *pids = g_new (pid_t, graphs->len);
  gint64 *deadline = g_new (gint64, graphs->len);
  guint next = 0, running = 0, finished = 0;
  int failed = 0;
  for (guint i = 0; i < graphs->len; i++)
    pids[i] = -1;
  while (finished < graphs->len)
    {
      while (running < (guint) jobs && next < graphs->len)
        {
          const bench_graph *g = graphs->pdata[next];
          const char *av[] = { self, "compare", g->path, "-i", g->inputs, "-b", col, "-n", "1", "--warmup", "0",
                               "--scale", s_s, "--json", "--no-store", NULL };
          pids[next] = spawn_child ((char *const *) av, envp, "/dev/null", "/dev/null");
          deadline[next] = g_get_monotonic_time () + (gint64) (timeout_s * 1e6);
          if (pids[next] < 0)
            {
              failed++;
              finished++;
            }
          else
            running++;
          next++;
        }
      for (guint i = 0; i < next; i++)
        {
          if (pids[i] < 0)
            continue;
          gboolean done;
          int st = 0;
          child_outcome oc = poll_child (pids[i], deadline[i], &done, &st);
          if (!done)
            continue;
          failed += oc != CHILD_OK || st != 0;
          pids[i] = -1;
          running--;
          finished++;
          if (fxwb_stderr_is_tty ())
            fxwb_progress ("torch.compile, warming its caches", (double) finished / graphs->len);
        }
      g_usleep (20000);
    }
  if (fxwb_stderr_is_tty ())
    fxwb_progress_done ();
  g_free (pids);
  g_free (deadline);
  return failed;
}

/* One column's result from compare's --json list. */
typedef struct
{
  gboolean ok;
  double median_ms, compile_ms;
  char accuracy[32];
  char error[240];
} column_result;

static void
read_column (json_object *list, size_t i, column_result *c)
{
  memset (c, 0, sizeof *c);
  json_object *o = list && json_object_is_type (list, json_type_array) && i < json_object_array_length (list)
                     ? json_object_array_get_idx (list, i)
                     : NULL;
  json_object *v;
  if (o == NULL)
    {
      g_strlcpy (c->error, "no result", sizeof c->error);
      return;
    }
  c->ok = json_object_object_get_ex (o, "status", &v) && strcmp (json_object_get_string (v), "ok") == 0;
  if (json_object_object_get_ex (o, "median_ms", &v))
    c->median_ms = json_object_get_double (v);
  if (json_object_object_get_ex (o, "compile_ms", &v))
    c->compile_ms = json_object_get_double (v);
  if (json_object_object_get_ex (o, "accuracy", &v) && json_object_get_string (v))
    g_strlcpy (c->accuracy, json_object_get_string (v), sizeof c->accuracy);
  if (!c->ok && json_object_object_get_ex (o, "error", &v) && json_object_get_string (v))
    {
      /* first line only: the table says what failed, compare says the rest */
      g_strlcpy (c->error, json_object_get_string (v), sizeof c->error);
      char *nl = strchr (c->error, '\n');
      /* "backend='inductor' raised:" says nothing alone: keep the line after it */
      if (nl && nl > c->error && nl[-1] == ':')
        {
          *nl = ' ';
          nl = strchr (nl, '\n');
        }
      if (nl)
        *nl = '\0';
    }
}

/* The PyTorch the torch backend will use: "2.11.0+cu130", or NULL (with why). */
static char *
torch_version (const char *python, char **why)
{
  const char *argv[] = { python, "-c", "import torch; print(torch.__version__)", NULL };
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, &error))
    {
      *why = g_strdup (error->message);
      return NULL;
    }
  if (!g_spawn_check_wait_status (status, NULL))
    {
      char *last = err ? strrchr (g_strstrip (err), '\n') : NULL;
      *why = g_strdup (last ? last + 1 : (err && *err ? err : "no torch"));
      return NULL;
    }
  return g_strdup (g_strstrip (out));
}

/* What the timings depend on besides the code, in one line: CPUs online and in this process's affinity, the
   cgroup's CPU quota, the BLAS and the OpenMP settings the children inherit. */
static char *
host_line (void)
{
  cpu_set_t set;
  int affinity = sched_getaffinity (0, sizeof set, &set) == 0 ? CPU_COUNT (&set) : -1;
  g_autofree char *quota = NULL;
  if (g_file_get_contents ("/sys/fs/cgroup/cpu.max", &quota, NULL, NULL))
    g_strstrip (quota);
  char blas[256];
  fx_blas_describe (blas, sizeof blas);
  const char *omp = g_getenv ("OMP_NUM_THREADS"), *wait = g_getenv ("OMP_WAIT_POLICY"),
             *spin = g_getenv ("GOMP_SPINCOUNT");
  return g_strdup_printf ("%ld CPUs online, %d in this process's affinity, cgroup cpu.max %s; BLAS: %s; "
                          "OMP_NUM_THREADS=%s OMP_WAIT_POLICY=%s GOMP_SPINCOUNT=%s",
                          sysconf (_SC_NPROCESSORS_ONLN), affinity, quota ? quota : "(none)", blas,
                          omp ? omp : "(unset)", wait ? wait : "(unset)",
                          spin ? spin : "(unset)");
}

static double
geomean (const double *v, int n)
{
  double s = 0;
  for (int i = 0; i < n; i++)
    s += log (v[i]);
  return n ? exp (s / n) : NAN;
}

static int
bench_inductor (int argc, char **argv, const char *device)
{
  int repeat = 10, warmup = 2, scale = 1, threads = 0, prepare = 0;
  gboolean cuda = strcmp (device, "cuda") == 0;
  g_autofree char *prg = g_strdup_printf ("fxwb bench inductor-%s", device);
  double timeout_s = 300;
  g_auto (GStrv) dirs = NULL;
  g_autofree char *only = NULL, *python = NULL, *stage = NULL;
  gboolean json = FALSE, no_eager = FALSE;
  GOptionEntry entries[] = {
    { "dir", 'd', 0, G_OPTION_ARG_FILENAME_ARRAY, &dirs,
      "A folder of graphs NAME.py with NAME.inputs.json (repeatable; default tests/fixtures/graphs and bench/graphs, "
      "or $FX_FIXTURES/graphs)", "DIR" },
    { "graph", 'g', 0, G_OPTION_ARG_STRING, &only, "Only graphs whose name contains TEXT (or one of TEXT,TEXT,...)", "TEXT" },
    { "stage", 0, 0, G_OPTION_ARG_STRING, &stage, "Which stage of the fixture graphs: aten (default), core_aten, all",
      "STAGE" },
    { "repeat", 'n', 0, G_OPTION_ARG_INT, &repeat, "Timed calls per column; the median is reported (default 10)", "N" },
    { "warmup", 'w', 0, G_OPTION_ARG_INT, &warmup, "Untimed calls first (default 2)", "N" },
    { "scale", 0, 0, G_OPTION_ARG_INT, &scale, "Divide every input size >= 64 by N (default 1: full size)", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads,
      "Threads on every side (OMP_NUM_THREADS, FX_NUM_THREADS and cpp.threads; default: all cores)", "N" },
    { "timeout", 0, 0, G_OPTION_ARG_DOUBLE, &timeout_s, "Seconds one graph may take, all columns (default 300)",
      "S" },
    { "prepare", 0, 0, G_OPTION_ARG_INT, &prepare,
      "First compile every graph with torch.compile, N at a time, untimed, so that the timed run finds Inductor's "
      "caches warm (default 0: off)", "N" },
    { "python", 0, 0, G_OPTION_ARG_FILENAME, &python,
      "Python with torch (default $FXWB_PYTHON, else /usr/bin/python3)", "PATH" },
    { "no-eager", 0, 0, G_OPTION_ARG_NONE, &no_eager,
      "Leave out the torch eager column: torch.compile against fxwb only, one torch worker per graph instead of two",
      NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the results as JSON", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new (
    cuda ? "- our GPU inductor against torch eager and Inductor" : "- our CPU inductor against torch eager and Inductor");
  g_autofree char *summary = g_strdup_printf (
    "Runs every graph through torch eager, torch.compile (where the PyTorch has it) and fxwb's inductor on\n"
    "the %s on the same seeded inputs (`fxwb compare --json` per graph, killed after --timeout) and prints\n"
    "the median times, the ratios (above 1: fxwb faster), fxwb's compile time and accuracy verdict, and the\n"
    "geometric means.%s Example: fxwb bench inductor-%s %s-g softmax",
    cuda ? "GPU" : "CPU",
    cuda ? " Inputs are made on the GPU once and every column is timed with CUDA events around\neach call." : "",
    device, cuda ? "--prepare 4 " : "--threads 16 ");
  g_option_context_set_summary (context, summary);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  if (argc > 1)
    {
      fprintf (stderr, "%s: unexpected argument '%s'\n", prg, argv[1]);
      return FXWB_EXIT_USAGE;
    }
  if (stage == NULL)
    stage = g_strdup ("aten");
  if (repeat < 1 || repeat > 10000 || warmup < 0 || warmup > 100 || scale < 1 || threads < 0 || threads > 1024
      || prepare < 0 || prepare > 256 || !(timeout_s > 0) || (strcmp (stage, "aten") != 0 && strcmp (stage, "core_aten") != 0
                              && strcmp (stage, "all") != 0))
    {
      fprintf (stderr, "%s: --repeat must be 1..10000, --warmup 0..100, --scale >= 1, --threads 0..1024, "
                       "--prepare 0..256, --timeout > 0, --stage aten, core_aten or all\n", prg);
      return FXWB_EXIT_USAGE;
    }
  if (python == NULL)
    python = g_strdup (g_getenv ("FXWB_PYTHON") && *g_getenv ("FXWB_PYTHON")
                         ? g_getenv ("FXWB_PYTHON")
                         : (g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE) ? "/usr/bin/python3"
                                                                                        : "python3"));

  g_autoptr (GPtrArray) graphs = g_ptr_array_new_with_free_func (bench_graph_free);
  g_autoptr (GString) dir_list = g_string_new (NULL);
  if (dirs)
    {
      for (char **d = dirs; *d; d++)
        {
          if (!collect_graphs (*d, stage, only, graphs))
            {
              fprintf (stderr, "%s: cannot open the graph folder '%s' (--dir)\n", prg, *d);
              return FXWB_EXIT_IO;
            }
          g_string_append_printf (dir_list, "%s%s", dir_list->len ? ", " : "", *d);
        }
    }
  else
    {
      g_autofree char *fixtures = g_getenv ("FX_FIXTURES") ? g_build_filename (g_getenv ("FX_FIXTURES"), "graphs", NULL)
                                                           : g_strdup ("tests/fixtures/graphs");
      const char *defaults[] = { fixtures, "bench/graphs" };
      for (size_t i = 0; i < G_N_ELEMENTS (defaults); i++)
        if (collect_graphs (defaults[i], stage, only, graphs))
          g_string_append_printf (dir_list, "%s%s", dir_list->len ? ", " : "", defaults[i]);
    }
  g_ptr_array_sort (graphs, cmp_graph);
  if (graphs->len == 0)
    {
      fprintf (stderr, "%s: no graphs (NAME.py with NAME.inputs.json) in %s\n", prg,
               dir_list->len ? dir_list->str : "tests/fixtures/graphs or bench/graphs (run from the source tree, or "
                                               "give --dir)");
      return FXWB_EXIT_IO;
    }

  g_autofree char *why = NULL;
  g_autofree char *tv = torch_version (python, &why);
  gboolean has_compile = tv != NULL && tv[0] >= '2' && tv[1] == '.';
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("fxwb-bench-inductor-XXXXXX", &error);
  if (self == NULL || tmp == NULL)
    {
      fprintf (stderr, "%s: %s\n", prg, error ? error->message : "cannot find this program's path");
      return FXWB_EXIT_IO;
    }

  /* the children's environment: the python, and the thread count on every side */
  char **envp = g_get_environ ();
  envp = g_environ_setenv (envp, "FXWB_PYTHON", python, TRUE);
  g_autofree char *nthreads = g_strdup_printf ("%d", threads);
  if (threads > 0)
    {
      envp = g_environ_setenv (envp, "OMP_NUM_THREADS", nthreads, TRUE);
      envp = g_environ_setenv (envp, "FX_NUM_THREADS", nthreads, TRUE);
    }

  if (cuda && !fxwb_cuda_present ())
    {
      fprintf (stderr, "%s: no CUDA device here (the CUDA driver found none); `fxwb bench inductor-cpu` runs on the "
                       "CPU\n", prg);
      g_strfreev (envp);
      fxwb_remove_tree (tmp);
      return FXWB_EXIT_UNAVAILABLE;
    }
  if (!json)
    {
      printf ("bench inductor-%s: %u graphs from %s, device=%s, %s, median of %d calls after %d warm-up, "
              "%s%s\n",
              device, graphs->len, dir_list->str, device, scale == 1 ? "full size" : "sizes divided", repeat, warmup,
              cuda ? "CUDA events, inputs resident on the GPU; CPU threads: " : "threads: ",
              threads ? nthreads : "all cores");
      g_autofree char *host = host_line ();
      printf ("host: %s\n", host);
      if (tv)
        printf ("torch %s (%s)%s\n", tv, python,
                has_compile ? "" : ": no torch.compile before 2.0, the inductor column is left out");
      else
        printf ("torch: not found (%s: %s): only fxwb's columns\n", python, why ? why : "?");
      printf ("ratios above 1: fxwb is faster; compile: fxwb inductor's, cache cold per graph%s%s\n\n",
              prepare && has_compile ? "; torch.compile's caches warmed first (--prepare)" : "",
              no_eager ? "; no torch eager column (--no-eager)" : "");
      printf ("%-24s %10s %10s %10s %9s %9s %10s  %s\n", "graph", "eager ms", "inductor", "fxwb ms", "vs eager",
              "vs induct", "compile ms", "accuracy");
      fflush (stdout);   /* a bench stopped in --prepare or in its first graph still says what it ran */
    }

  if (prepare && has_compile)
    {
      int bad = prepare_torch_compile (graphs, self, envp, device, scale, prepare, timeout_s);
      if (bad && !json)
        printf ("(--prepare: torch.compile failed or timed out on %d graph%s; the table says which)\n\n", bad,
                bad == 1 ? "" : "s");
    }

  json_object *jall = json_object_new_array ();
  double *vs_eager = g_new (double, graphs->len), *vs_ind = g_new (double, graphs->len);
  int n_eager = 0, n_ind = 0, n_bad = 0;
  g_autofree char *cache = g_build_filename (tmp, "cache", NULL);
  for (guint gi = 0; gi < graphs->len; gi++)
    {
      const bench_graph *g = graphs->pdata[gi];
      if (!json && fxwb_stderr_is_tty ())
        fxwb_progress (g->name, (double) gi / graphs->len);
      g_autofree char *out_path = g_build_filename (tmp, "out.json", NULL);
      g_autofree char *err_path = g_build_filename (tmp, "err.txt", NULL);
      g_autofree char *n_s = g_strdup_printf ("%d", repeat), *w_s = g_strdup_printf ("%d", warmup),
                      *s_s = g_strdup_printf ("%d", scale);
      g_autofree char *ind_col = threads && !cuda
                                   ? g_strdup_printf ("inductor,device=cpu,cpp.threads=%d", threads)
                                   : g_strdup_printf ("inductor,device=%s", device);
      g_autofree char *eager_col = g_strdup_printf ("torch:eager,device=%s", device);
      g_autofree char *torch_ind_col = g_strdup_printf ("torch:inductor,device=%s", device);
      /* a cold inductor cache per graph: the compile column is what a first compile costs */
      g_autofree char *graph_cache = g_strdup_printf ("%s/%u", cache, gi);
      char **genv = g_environ_setenv (g_strdupv (envp), "FXWB_INDUCTOR_CACHE", graph_cache, TRUE);
      genv = g_environ_setenv (genv, "FX_CUDA_CACHE_DIR", graph_cache, TRUE);
      GPtrArray *av = g_ptr_array_new ();
      const char *fixed[] = { self, "compare", g->path, "-i", g->inputs, "-b", eager_col };
      for (size_t i = 0; i < G_N_ELEMENTS (fixed) - (no_eager ? 2 : 0); i++)
        g_ptr_array_add (av, (char *) fixed[i]);
      if (has_compile)
        {
          g_ptr_array_add (av, (char *) "-b");
          g_ptr_array_add (av, torch_ind_col);
        }
      const char *rest[] = { "-b", ind_col, "-n", n_s, "--warmup", w_s, "--scale", s_s, "--json", "--no-store" };
      for (size_t i = 0; i < G_N_ELEMENTS (rest); i++)
        g_ptr_array_add (av, (char *) rest[i]);
      g_ptr_array_add (av, NULL);
      int exit_status = 0;
      child_outcome oc = run_child ((char *const *) av->pdata, genv, out_path, err_path, timeout_s, &exit_status);
      g_ptr_array_unref (av);
      g_strfreev (genv);

      g_autofree char *out = NULL;
      g_file_get_contents (out_path, &out, NULL, NULL);
      json_object *list = out ? json_tokener_parse (out) : NULL;
      column_result eager, ind, ours;
      /* the columns in order: torch eager (unless --no-eager), torch.compile (where there is one), fxwb */
      size_t col = 0;
      read_column (list, no_eager ? 99 : col++, &eager);
      read_column (list, has_compile ? col++ : 99, &ind);
      read_column (list, col, &ours);
      const char *failure = NULL;
      g_autofree char *err_line = NULL;
      if (oc == CHILD_TIMED_OUT)
        failure = "timed out";
      else if (oc == CHILD_CRASHED)
        failure = "crashed";
      else if (oc == CHILD_NOT_STARTED)
        failure = "could not start";
      else if (list == NULL)
        {
          g_autofree char *err = NULL;
          g_file_get_contents (err_path, &err, NULL, NULL);
          char *nl = err ? strchr (err, '\n') : NULL;
          if (nl)
            *nl = '\0';
          err_line = g_strdup (err && *err ? err : "no output");
          failure = err_line;
        }
      json_object *jg = json_object_new_object ();
      json_object_object_add (jg, "graph", json_object_new_string (g->name));
      json_object_object_add (jg, "file", json_object_new_string (g->path));
      if (failure)
        {
          json_object_object_add (jg, "failure", json_object_new_string (failure));
          n_bad++;
          if (!json)
            printf ("%-24s %s\n", g->name, failure);
        }
      else
        {
          json_object_object_add (jg, "columns", json_object_get (list));
          char e_ms[32] = "-", i_ms[32] = "-", o_ms[32] = "-", r_e[32] = "-", r_i[32] = "-", c_ms[32] = "-";
          if (eager.ok)
            g_snprintf (e_ms, sizeof e_ms, "%.3f", eager.median_ms);
          if (ind.ok)
            g_snprintf (i_ms, sizeof i_ms, "%.3f", ind.median_ms);
          if (ours.ok)
            {
              g_snprintf (o_ms, sizeof o_ms, "%.3f", ours.median_ms);
              g_snprintf (c_ms, sizeof c_ms, "%.0f", ours.compile_ms);
              if (eager.ok && ours.median_ms > 0)
                {
                  vs_eager[n_eager] = eager.median_ms / ours.median_ms;
                  g_snprintf (r_e, sizeof r_e, "%.2fx", vs_eager[n_eager++]);
                }
              if (ind.ok && ours.median_ms > 0)
                {
                  vs_ind[n_ind] = ind.median_ms / ours.median_ms;
                  g_snprintf (r_i, sizeof r_i, "%.2fx", vs_ind[n_ind++]);
                }
            }
          if (!ours.ok || strcmp (ours.accuracy, "fail") == 0)
            n_bad++;
          if (!json)
            {
              printf ("%-24s %10s %10s %10s %9s %9s %10s  %s\n", g->name, e_ms, i_ms, o_ms, r_e, r_i, c_ms,
                      ours.ok ? ours.accuracy : "error");
              if (!ours.ok)
                printf ("%-24s   fxwb: %s\n", "", ours.error);
              if (has_compile && !ind.ok)
                printf ("%-24s   torch.compile: %s\n", "", ind.error);
              if (!no_eager && !eager.ok)
                printf ("%-24s   torch eager: %s\n", "", eager.error);
            }
        }
      json_object_array_add (jall, jg);
      if (list)
        json_object_put (list);
      fflush (stdout);
    }
  if (!json && fxwb_stderr_is_tty ())
    fxwb_progress_done ();

  double ge = geomean (vs_eager, n_eager), gind = geomean (vs_ind, n_ind);
  if (json)
    {
      json_object *top = json_object_new_object ();
      g_autofree char *host = host_line ();
      json_object_object_add (top, "host", json_object_new_string (host));
      json_object_object_add (top, "torch", tv ? json_object_new_string (tv) : NULL);
      json_object_object_add (top, "graphs", jall);
      json_object_object_add (top, "geomean_vs_eager", n_eager ? json_object_new_double (ge) : NULL);
      json_object_object_add (top, "geomean_vs_inductor", n_ind ? json_object_new_double (gind) : NULL);
      fxwb_json_print (top);
    }
  else
    {
      printf ("\ngeomean:");
      if (n_eager)
        printf (" %.2fx torch eager over %d graphs%s", ge, n_eager, n_ind ? "," : "");
      if (n_ind)
        printf (" %.2fx torch.compile (inductor) over %d graphs", gind, n_ind);
      if (!n_eager && !n_ind)
        printf (" no torch column to compare with");
      printf ("\n");
      if (n_bad)
        printf ("%d graph%s failed, timed out or did not match\n", n_bad, n_bad == 1 ? "" : "s");
      json_object_put (jall);
    }
  g_free (vs_eager);
  g_free (vs_ind);
  g_strfreev (envp);
  fxwb_remove_tree (tmp);   /* the outputs and every graph's inductor cache */
  return n_bad ? FXWB_EXIT_FAILURE : FXWB_EXIT_OK;
}

int
fxwb_bench_inductor_cpu (int argc, char **argv)
{
  return bench_inductor (argc, argv, "cpu");
}

int
fxwb_bench_inductor_cuda (int argc, char **argv)
{
  return bench_inductor (argc, argv, "cuda");
}
