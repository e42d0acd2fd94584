/* fxwb-cmd-minify.c: `fxwb minify GRAPH --backend B --fail-on KIND`: shrink a graph that fails under a backend to the
   smallest graph that still fails the same way, with progress, checkpoints (--resume) and a repro.py at the end. */
#include "fxwb-runs.h"

#include <math.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "fx/minify.h"

/* The backend under test, as the engine's minifier calls it (in the child process of each candidate). */
static fx_status
run_backend (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
             size_t *n_outputs, fx_minify_stage *failed_at, fx_diag *diag, void *user_data)
{
  const fxwb_column *col = user_data;
  fx_arena *scratch = fx_arena_new ();
  const fx_backend *backend = NULL;
  const char *sub = NULL;
  fx_compiled *c = NULL;
  *failed_at = FX_MINIFY_AT_COMPILE;
  fx_status st = fx_backend_parse_spec (col->spec, scratch, &backend, &sub, diag);
  if (st == FX_OK)
    {
      size_t n_kv = col->n_kv + (sub ? 1 : 0);
      fx_option_kv *kv = fx_arena_alloc (scratch, sizeof (fx_option_kv) * (n_kv + 1));
      size_t k = 0;
      if (sub)
        kv[k++] = (fx_option_kv) { "backend", sub };
      for (size_t i = 0; i < col->n_kv; i++)
        kv[k++] = col->kv[i];
      st = fx_backend_compile (backend, graph, inputs, n_inputs, col->mode, kv, n_kv, &c, diag);
    }
  if (st == FX_OK)
    {
      *failed_at = FX_MINIFY_AT_RUN;
      st = fx_compiled_run (c, inputs, n_inputs, arena, outputs, n_outputs, diag);
    }
  fx_compiled_free (c);
  fx_arena_free (scratch);
  return st;
}

typedef struct
{
  gboolean json;
  gboolean tty;
  fxwb_source *src;
  const char *strategy;     /* the last strategy printed (plain output) */
  size_t last_nodes;
  gboolean progress_line;   /* a TTY line is showing */
} progress_ctx;

static volatile int cancel_requested;

static void
on_signal (int sig)
{
  (void) sig;
  cancel_requested = 1;
}

static void
json_str (GString *s, const char *text)
{
  g_string_append_c (s, '"');
  for (const unsigned char *p = (const unsigned char *) (text ? text : ""); *p; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_printf (s, "\\%c", *p);
      else if (*p < 0x20)
        g_string_append_printf (s, "\\u%04x", *p);
      else
        g_string_append_c (s, (char) *p);
    }
  g_string_append_c (s, '"');
}

static const char *
event_name (fx_minify_event ev)
{
  switch (ev)
    {
    case FX_MINIFY_EVENT_START: return "start";
    case FX_MINIFY_EVENT_CANDIDATE: return "candidate";
    case FX_MINIFY_EVENT_SHRUNK: return "shrunk";
    case FX_MINIFY_EVENT_DONE: return "done";
    default: return "?";
    }
}

static void
store_minified (progress_ctx *pc, const fx_graph *graph)
{
  fxwb_source *src = pc->src;
  if (src->store == NULL || src->compile_row == 0)
    return;
  fx_buf text;
  fx_buf_init (&text);
  fx_readable_opts ro = { true, true, false };
  fx_graph_print_readable (graph, &ro, &text);
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_store_add_graph (src->store, src->compile_row, "minified", graph, text.data, NULL, &diag) != FX_OK)
    fprintf (stderr, "fxwb minify: cannot store the minified graph in %s: %s\n", src->store_path, diag.message);
  fx_buf_free (&text);
}

static bool
on_progress (const fx_minify_progress *p, void *data)
{
  progress_ctx *pc = data;
  if (p->event == FX_MINIFY_EVENT_SHRUNK)
    store_minified (pc, p->graph);
  if (pc->json)
    {
      GString *s = g_string_new ("{\"event\": ");
      json_str (s, event_name (p->event));
      g_string_append (s, ", \"strategy\": ");
      if (p->strategy)
        json_str (s, p->strategy);
      else
        g_string_append (s, "null");
      g_string_append_printf (s, ", \"granularity\": %d, \"nodes\": %zu, \"call_nodes\": %zu, \"start_nodes\": %zu, "
                                 "\"candidates\": %zu, \"elapsed_s\": %.3f",
                              p->granularity, p->nodes, p->call_nodes, p->start_nodes, p->candidates, p->elapsed_s);
      if (p->outcome)
        {
          g_string_append (s, ", \"outcome\": ");
          json_str (s, fx_failure_kind_name (p->outcome->kind));
          g_string_append (s, ", \"message\": ");
          const char *eol = strchr (p->outcome->message, '\n');
          g_autofree char *first = eol ? g_strndup (p->outcome->message, (gsize) (eol - p->outcome->message))
                                       : g_strdup (p->outcome->message);
          json_str (s, first);
        }
      g_string_append_printf (s, ", \"accepted\": %s}", p->accepted ? "true" : "false");
      printf ("%s\n", s->str);
      fflush (stdout);
      g_string_free (s, TRUE);
    }
  else if (pc->tty)
    {
      if (p->event == FX_MINIFY_EVENT_DONE)
        {
          fputs ("\r\033[K", stderr);
          pc->progress_line = FALSE;
        }
      else if (p->event != FX_MINIFY_EVENT_START)
        {
          char gran[32] = "";
          if (p->granularity > 0)
            g_snprintf (gran, sizeof gran, " (granularity %d)", p->granularity);
          fprintf (stderr, "\r\033[K%s%s: %zu nodes left (of %zu), %zu candidates tried, %.1f s",
                   p->strategy ? p->strategy : "minify", gran, p->nodes, p->start_nodes, p->candidates, p->elapsed_s);
          fflush (stderr);
          pc->progress_line = TRUE;
        }
    }
  else if (p->event == FX_MINIFY_EVENT_SHRUNK)
    {
      fprintf (stderr, "minify: %s (granularity %d): %zu nodes left (of %zu), %zu candidates tried, %.1f s\n",
               p->strategy ? p->strategy : "?", p->granularity, p->nodes, p->start_nodes, p->candidates, p->elapsed_s);
    }
  return !cancel_requested;
}

/* The explicit options, typed by the backend's declarations, for the repro's config lines. */
static size_t
repro_settings (const fxwb_column *col, fx_arena *arena, fx_repro_setting **out)
{
  *out = NULL;
  const fx_backend *b = NULL;
  const char *sub = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_options opts;
  if (fx_backend_parse_spec (col->spec, arena, &b, &sub, &diag) != FX_OK
      || fx_backend_resolve_options (b, NULL, col->kv, col->n_kv, arena, &opts, &diag) != FX_OK)
    return 0;
  fx_repro_setting *s = fx_arena_alloc (arena, sizeof *s * (opts.n + 1));
  size_t n = 0;
  for (size_t i = 0; i < opts.n; i++)
    {
      if (!opts.explicit_set[i])
        continue;
      const fx_option_value *v = &opts.items[i];
      s[n].key = v->name;
      switch (v->type)
        {
        case FX_OPTION_BOOL: s[n].value = fx_arg_bool (v->b); break;
        case FX_OPTION_INT: s[n].value = fx_arg_int (v->i); break;
        case FX_OPTION_FLOAT: s[n].value = fx_arg_float (v->f); break;
        case FX_OPTION_STRING: s[n].value = v->s ? fx_arg_str (v->s) : fx_arg_none (); break;
        case FX_OPTION_TYPE_COUNT:
        default: continue;
        }
      n++;
    }
  *out = s;
  return n;
}

static int
write_repro (const char *path, const fx_graph *graph, const fxwb_column *col, const fx_failure *failure, gint64 seed)
{
  fx_arena *arena = fx_arena_new ();
  fx_repro_setting *settings = NULL;
  size_t n = repro_settings (col, arena, &settings);
  const char *colon = strchr (col->spec, ':');
  g_autofree char *backend = colon ? g_strdup (colon + 1) : g_strdup (col->spec);
  fx_repro_opts ro = {
    .backend = backend,
    .mode = col->mode,
    .settings = settings,
    .n_settings = n,
    .kind = failure->kind,
    .failure_text = failure->message,
    .seed = (uint64_t) seed,
  };
  fx_buf out;
  fx_buf_init (&out);
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = fx_repro_write (graph, &ro, &out, &diag);
  if (st == FX_OK)
    st = fx_file_write (path, out.data, out.len, &diag);
  fx_buf_free (&out);
  fx_arena_free (arena);
  if (st != FX_OK)
    {
      fprintf (stderr, "fxwb minify: cannot write %s: %s\n", path, diag.message);
      return fxwb_exit_for_status (st);
    }
  return FXWB_EXIT_OK;
}

static void
print_summary (const fx_minify_result *r, const char *repro, const char *checkpoint)
{
  size_t calls = 0;
  GString *ops = g_string_new (NULL);
  fx_graph_foreach_node (r->graph, n)
    if (n->op != FX_OP_PLACEHOLDER && n->op != FX_OP_OUTPUT)
      {
        fx_buf t;
        fx_buf_init (&t);
        fx_target_format (&n->target, &t);
        if (calls < 8)
          g_string_append_printf (ops, "%s%s", calls ? ", " : "", t.data ? t.data : n->name);
        else if (calls == 8)
          g_string_append (ops, ", ...");
        fx_buf_free (&t);
        calls++;
      }
  const char *eol = strchr (r->failure.message, '\n');
  printf ("failure    %s: %.*s\n", fx_failure_kind_name (r->failure.kind),
          eol ? (int) (eol - r->failure.message) : (int) strlen (r->failure.message), r->failure.message);
  printf ("minified   %zu -> %zu nodes (%zu calls: %s)%s\n", r->start_nodes, r->end_nodes, calls, ops->str,
          r->cancelled ? "  [cancelled: resume with --resume]" : "");
  printf ("work       %zu candidates in %.1f s\n", r->candidates, r->elapsed_s);
  if (repro)
    printf ("repro      %s\n", repro);
  printf ("checkpoint %s\n\n", checkpoint);
  fx_buf code;
  fx_buf_init (&code);
  fx_readable_opts ro = { true, true, false };
  fx_graph_print_readable (r->graph, &ro, &code);
  fputs (code.data ? code.data : "", stdout);
  fx_buf_free (&code);
  g_string_free (ops, TRUE);
}

int
fxwb_cmd_minify (int argc, char **argv)
{
  g_auto (fxwb_run_opts) o;
  fxwb_run_opts_init (&o);
  g_autofree char *backend = NULL;
  g_autofree char *fail_on = NULL;
  g_autofree char *output = NULL;
  g_autofree char *checkpoint = NULL;
  gboolean resume = FALSE, in_process = FALSE;
  double timeout = 120.0;
  int max_granularity = 0;
  GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend, "The backend that fails (required; see `fxwb backends`)",
      "SPEC" },
    { "fail-on", 'f', 0, G_OPTION_ARG_STRING, &fail_on,
      "The failure to keep: compile-error, runtime-error, crash, hang, accuracy or any (default any)", "KIND" },
    { "timeout", 't', 0, G_OPTION_ARG_DOUBLE, &timeout,
      "Seconds each candidate may take before it counts as a hang and is killed (default 120; 0: no limit)", "S" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Where to write the repro (default repro.py)", "FILE" },
    { "checkpoint", 0, 0, G_OPTION_ARG_FILENAME, &checkpoint,
      "The checkpoint written on every shrink (default OUTPUT.checkpoint)", "FILE" },
    { "resume", 'r', 0, G_OPTION_ARG_NONE, &resume, "Resume from the checkpoint of a run that was stopped", NULL },
    { "max-granularity", 0, 0, G_OPTION_ARG_INT, &max_granularity, "Largest granule tried (default: no limit)", "N" },
    { "in-process", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &in_process, "Check candidates in this process", NULL },
    { "mode", 'm', 0, G_OPTION_ARG_STRING, &o.mode, "The backend's mode (default, max-autotune, ...)", "MODE" },
    { "option", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.options,
      "A backend option, e.g. cpp.inject_relu_bug_TESTING_ONLY=accuracy (repeatable)", "KEY=VALUE" },
    { "stage", 0, 0, G_OPTION_ARG_STRING, &o.stage, "The graph stage of a workspace compile", "STAGE" },
    { "inputs", 'i', 0, G_OPTION_ARG_FILENAME, &o.inputs,
      "A folder of saved tensors (<placeholder>.fxt) used for the placeholders it has (default: seeded random "
      "inputs from the graph's annotations, as repro.py makes them)", "DIR" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "Seed of the random inputs (default 0)", "S" },
    { "scale", 0, 0, G_OPTION_ARG_INT, &o.scale, "Divide every input size >= 64 by N", "N" },
    { "no-store", 0, 0, G_OPTION_ARG_NONE, &o.no_store,
      "Do not store the minified graphs of a workspace's compile back into the workspace", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "Progress and result as JSON lines on stdout", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb minify",
                               "FILE|WORKSPACE:COMPILE - shrink a failing graph to a repro", entries,
                               "Shrinks a graph that fails under a backend (compile error, run-time error, crash, hang or wrong numbers\n"
                               "against the eager fp64 reference) to the smallest graph that still fails the same way, with PyTorch's\n"
                               "minifier strategies. Every candidate runs in a child process with a time limit. The result is written\n"
                               "as repro.py (PyTorch's minifier form: `python3 repro.py`, `fxwb run repro.py --backend ...`).\n"
                               "Every shrink is checkpointed: an interrupted run continues with --resume.",
                               "Output: progress on a terminal, one line per shrink otherwise, JSON lines with --json.\n"
                               "\n"
                               "Exit status:\n"
                               "  0  the failure was reproduced (and minimized; repro written)\n"
                               "  1  the graph does not fail that way (nothing to minify), or it is malformed\n"
                               "  2  wrong command line\n"
                               "  3  a file could not be read or written\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  unsigned mask = fx_failure_mask_from_name (fail_on ? fail_on : "any");
  const char *problem = argc < 2 ? "missing FILE" : argc > 2 ? "more than one graph"
                        : backend == NULL ? "--backend is required"
                        : mask == 0 ? "--fail-on must be compile-error, runtime-error, crash, hang, accuracy or any"
                        : timeout < 0 ? "--timeout must be >= 0" : NULL;
  if (problem)
    return fxwb_usage_error (context, problem);
  if (output == NULL)
    output = g_strdup ("repro.py");
  if (checkpoint == NULL)
    checkpoint = g_strdup_printf ("%s.checkpoint", output);
  g_auto (fxwb_column) col = { 0 };
  if (!fxwb_column_parse ("fxwb minify", backend, &o, &col) || !fxwb_column_validate ("fxwb minify", &col))
    return FXWB_EXIT_USAGE;

  g_auto (fxwb_source) src = { 0 };
  int rc = fxwb_source_load ("fxwb minify", argv[1], &o, &src);
  if (rc != FXWB_EXIT_OK)
    return rc;
  if (o.scale > 1)
    fx_graph_scale_inputs (src.graph, o.scale, 64);

  fx_minify_config cfg;
  fx_minify_config_init (&cfg);
  cfg.run = run_backend;
  cfg.run_data = &col;
  cfg.fail_on = mask;
  cfg.timeout_s = timeout;
  cfg.in_process = in_process;
  cfg.seed = (uint64_t) o.seed;
  cfg.max_granularity = max_granularity;
  cfg.checkpoint = checkpoint;
  if (o.inputs && strcmp (o.inputs, "spec") != 0 && strcmp (o.inputs, "repro") != 0)
    {
      if (!g_file_test (o.inputs, G_FILE_TEST_IS_DIR))
        {
          fprintf (stderr, "fxwb minify: --inputs takes a folder of saved tensors (<placeholder>.fxt)\n");
          return FXWB_EXIT_USAGE;
        }
      cfg.saved_inputs = o.inputs;
    }
  progress_ctx pc = { .json = o.json, .tty = !o.json && fxwb_stderr_is_tty (), .src = &src };
  cfg.progress = on_progress;
  cfg.progress_data = &pc;
  cfg.cancel = &cancel_requested;

  fx_diag diag;
  fx_diag_clear (&diag);
  fx_minify_checkpoint cp;
  memset (&cp, 0, sizeof cp);
  const fx_graph *start = src.graph;
  if (resume)
    {
      fx_status st = fx_minify_checkpoint_read (checkpoint, &cp, &diag);
      if (st != FX_OK)
        {
          fprintf (stderr, "fxwb minify: --resume: %s\n", diag.message);
          return fxwb_exit_for_status (st);
        }
      start = cp.graph;
      cfg.expect = &cp.failure;
      cfg.candidates_before = cp.candidates;
      cfg.elapsed_before = cp.elapsed_s;
      if (!o.json)
        fprintf (stderr, "minify: resuming from %s: %s, %zu candidates and %.1f s so far\n", checkpoint,
                 fx_failure_kind_name (cp.failure.kind), cp.candidates, cp.elapsed_s);
    }

  struct sigaction sa, old_int, old_term;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, &old_int);
  sigaction (SIGTERM, &sa, &old_term);
  fx_minify_result r;
  fx_status st = fx_minify (start, &cfg, &r, &diag);
  sigaction (SIGINT, &old_int, NULL);
  sigaction (SIGTERM, &old_term, NULL);
  if (resume && cp.start_nodes)
    r.start_nodes = cp.start_nodes;

  if (st != FX_OK && r.graph == NULL)
    {
      fxwb_print_diag (&diag);
      rc = fxwb_exit_for_status (st);
    }
  else if (!r.reproduced)
    {
      const char *want = fail_on ? fail_on : "any";
      if (r.cancelled)
        fprintf (stderr, "fxwb minify: cancelled while checking the original graph\n");
      else if (r.failure.kind == FX_FAILURE_NONE)
        fprintf (stderr, "fxwb minify: the %s does not fail with %s: it compiles, runs%s. Nothing to minify.\n",
                 resume ? "checkpoint's graph" : "graph", col.label,
                 (mask & FX_FAIL_ON (FX_FAILURE_ACCURACY)) ? " and matches the eager reference" : "");
      else if (cfg.expect)
        fprintf (stderr, "fxwb minify: the checkpoint's graph no longer fails as it did (%s: %s); it now gives %s: %s\n",
                 fx_failure_kind_name (cfg.expect->kind), cfg.expect->message, fx_failure_kind_name (r.failure.kind),
                 r.failure.message);
      else
        fprintf (stderr, "fxwb minify: the graph fails with %s, but not as --fail-on %s asks: %s: %s\n", col.label,
                 want, fx_failure_kind_name (r.failure.kind), r.failure.message);
      if (o.json)
        {
          GString *s = g_string_new ("{\"event\": \"result\", \"reproduced\": false, \"outcome\": ");
          json_str (s, fx_failure_kind_name (r.failure.kind));
          g_string_append (s, ", \"message\": ");
          json_str (s, r.failure.message);
          g_string_append_printf (s, ", \"candidates\": %zu}", r.candidates);
          printf ("%s\n", s->str);
          g_string_free (s, TRUE);
        }
      rc = FXWB_EXIT_FAILURE;
    }
  else
    {
      if (st != FX_OK)
        fxwb_print_diag (&diag);
      rc = write_repro (output, r.graph, &col, &r.failure, o.seed);
      if (o.json)
        {
          GString *s = g_string_new ("{\"event\": \"result\", \"reproduced\": true, \"outcome\": ");
          json_str (s, fx_failure_kind_name (r.failure.kind));
          g_string_append (s, ", \"message\": ");
          json_str (s, r.failure.message);
          g_string_append_printf (s, ", \"start_nodes\": %zu, \"end_nodes\": %zu, \"candidates\": %zu, "
                                     "\"elapsed_s\": %.3f, \"cancelled\": %s, \"repro\": ",
                                  r.start_nodes, r.end_nodes, r.candidates, r.elapsed_s, r.cancelled ? "true" : "false");
          json_str (s, rc == FXWB_EXIT_OK ? output : NULL);
          g_string_append (s, ", \"checkpoint\": ");
          json_str (s, checkpoint);
          g_string_append (s, ", \"kept\": [");
          size_t k = 0;
          fx_graph_foreach_node (r.graph, n)
            if (n->op != FX_OP_PLACEHOLDER && n->op != FX_OP_OUTPUT)
              {
                if (k++)
                  g_string_append (s, ", ");
                json_str (s, n->name);
              }
          g_string_append (s, "]}");
          printf ("%s\n", s->str);
          g_string_free (s, TRUE);
        }
      else
        print_summary (&r, rc == FXWB_EXIT_OK ? output : NULL, checkpoint);
      if (rc == FXWB_EXIT_OK && st != FX_OK)
        rc = fxwb_exit_for_status (st);
    }
  fx_minify_result_clear (&r);
  if (cp.graph)
    fx_graph_free (cp.graph);
  return rc;
}
