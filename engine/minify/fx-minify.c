/* fx-minify.c: the minifier: PyTorch's fx_minifier strategies and granularity schedule over a failing graph, each
   candidate checked in a forked child with a time limit so a crashing or hanging backend cannot take it down. */
#include "fx/minify.h"
#include "fx/passes.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

/* ---------------------------------------------------------------- failures */

static const char *const kind_names[FX_FAILURE_KIND_COUNT] = {
  "none", "compile-error", "runtime-error", "crash", "hang", "accuracy", "invalid",
};

const char *
fx_failure_kind_name (fx_failure_kind kind)
{
  return (unsigned) kind < FX_FAILURE_KIND_COUNT ? kind_names[kind] : "?";
}

unsigned
fx_failure_mask_from_name (const char *name)
{
  if (name == NULL)
    return 0;
  if (strcmp (name, "any") == 0)
    return FX_FAIL_ON_ANY;
  char norm[64];
  snprintf (norm, sizeof norm, "%s", name);
  for (char *c = norm; *c; c++)
    if (*c == '_')
      *c = '-';
  for (int k = FX_FAILURE_COMPILE_ERROR; k <= FX_FAILURE_ACCURACY; k++)
    if (strcmp (norm, kind_names[k]) == 0)
      return FX_FAIL_ON (k);
  return 0;
}

static bool
is_hex (char c)
{
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void
fx_failure_signature (const fx_failure *f, fx_buf *out)
{
  fx_buf_printf (out, "%s", fx_failure_kind_name (f->kind));
  if (f->kind == FX_FAILURE_ACCURACY || f->kind == FX_FAILURE_HANG || f->kind == FX_FAILURE_NONE)
    return;
  fx_buf_puts (out, ": ");
  const char *s = f->message;
  const char *eol = strchr (s, '\n');
  size_t n = eol ? (size_t) (eol - s) : strlen (s);
  size_t i = 0;
  while (i < n)
    {
      if (s[i] == ' ' || s[i] == '\t' || s[i] == '(' || s[i] == ')' || s[i] == '\'' || s[i] == '"')
        {
          fx_buf_putc (out, s[i++]);
          continue;
        }
      size_t j = i;
      bool path = false;
      while (j < n && s[j] != ' ' && s[j] != '\t' && s[j] != '(' && s[j] != ')' && s[j] != '\'' && s[j] != '"')
        path |= s[j++] == '/';
      if (path)
        {
          fx_buf_puts (out, "<path>");
          i = j;
          continue;
        }
      /* a token: blank out 0x addresses and long hex runs (hashes), keep the rest */
      for (size_t k = i; k < j;)
        {
          if (s[k] == '0' && k + 1 < j && (s[k + 1] == 'x' || s[k + 1] == 'X'))
            {
              k += 2;
              while (k < j && is_hex (s[k]))
                k++;
              fx_buf_puts (out, "<addr>");
              continue;
            }
          size_t h = k;
          while (h < j && is_hex (s[h]))
            h++;
          if (h - k >= 8)
            {
              fx_buf_puts (out, "<hex>");
              k = h;
              continue;
            }
          fx_buf_putc (out, s[k++]);
        }
      i = j;
    }
}

bool
fx_failure_same (const fx_failure *a, const fx_failure *b)
{
  if (a->kind != b->kind)
    return false;
  fx_buf sa, sb;
  fx_buf_init (&sa);
  fx_buf_init (&sb);
  fx_failure_signature (a, &sa);
  fx_failure_signature (b, &sb);
  bool same = strcmp (sa.data ? sa.data : "", sb.data ? sb.data : "") == 0;
  fx_buf_free (&sa);
  fx_buf_free (&sb);
  return same;
}

static void
failure_set (fx_failure *f, fx_failure_kind kind, const char *fmt, ...) FX_PRINTF (3, 4);

static void
failure_set (fx_failure *f, fx_failure_kind kind, const char *fmt, ...)
{
  f->kind = kind;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (f->message, sizeof f->message, fmt, ap);
  va_end (ap);
}

static void
failure_from_diag (fx_failure *f, fx_failure_kind kind, const fx_diag *diag)
{
  char prefix[160];
  snprintf (prefix, sizeof prefix, "node '%s'", diag->node);
  if (diag->node[0] && strstr (diag->message, prefix) == NULL)
    failure_set (f, kind, "node '%s': %s", diag->node, diag->message);
  else
    failure_set (f, kind, "%s", diag->message[0] ? diag->message : fx_status_name (diag->code));
}

/* ---------------------------------------------------------------- configuration and inputs */

void
fx_minify_config_init (fx_minify_config *config)
{
  memset (config, 0, sizeof *config);
  config->fail_on = FX_FAIL_ON_ANY;
}

fx_status
fx_minify_make_inputs (const fx_graph *graph, const fx_minify_config *config, fx_arena *arena, fx_value **inputs,
                       size_t *n_inputs, fx_diag *diag)
{
  if (config->saved_inputs == NULL)
    return fx_inputs_make (graph, FX_INPUTS_SPEC, NULL, config->seed, NULL, arena, inputs, n_inputs, diag);
  /* saved tensors by placeholder name; placeholders the minifier made get seeded random values */
  size_t nph = fx_graph_count_op (graph, FX_OP_PLACEHOLDER);
  fx_value *vals = fx_arena_alloc (arena, sizeof (fx_value) * (nph + 1));
  fx_generator gen;
  fx_generator_seed (&gen, config->seed);
  size_t i = 0;
  fx_status st = FX_OK;
  fx_graph_foreach_node (graph, n)
    {
      if (n->op != FX_OP_PLACEHOLDER)
        continue;
      char path[4096];
      snprintf (path, sizeof path, "%s/%s.fxt", config->saved_inputs, n->name);
      if (access (path, R_OK) == 0)
        {
          fx_tensor *t = NULL;
          st = fx_tensor_load (path, NULL, &t, diag);
          if (st == FX_OK)
            vals[i] = fx_value_tensor (t);
        }
      else
        {
          fx_input_spec sp = fx_input_spec_of_placeholder (n);
          st = fx_input_from_spec (&sp, &gen, NULL, &vals[i], diag);
        }
      if (st != FX_OK)
        {
          for (size_t k = 0; k < i; k++)
            fx_value_clear (&vals[k]);
          return st;
        }
      i++;
    }
  *inputs = vals;
  *n_inputs = nph;
  return FX_OK;
}

/* ---------------------------------------------------------------- checking one candidate */

static void
clear_values (fx_value *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    fx_value_clear (&v[i]);
}

/* The predicate itself: backend errors first (compile, run), then same() against the interpreter with the fp64 RMSE
   rule when accuracy is asked for. */
static void
check_inline (const fx_graph *graph, const fx_minify_config *config, fx_failure *out)
{
  memset (out, 0, sizeof *out);
  fx_arena *arena = fx_arena_new ();
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_value *inputs = NULL, *res = NULL, *ref = NULL, *ref64 = NULL;
  size_t n_inputs = 0, n_res = 0, n_ref = 0, n_ref64 = 0;
  fx_status st = fx_minify_make_inputs (graph, config, arena, &inputs, &n_inputs, &diag);
  if (st != FX_OK)
    {
      failure_from_diag (out, FX_FAILURE_INVALID, &diag);
      goto done;
    }
  fx_minify_stage at = FX_MINIFY_AT_RUN;
  st = config->run (graph, inputs, n_inputs, arena, &res, &n_res, &at, &diag, config->run_data);
  if (st != FX_OK)
    {
      failure_from_diag (out, at == FX_MINIFY_AT_COMPILE ? FX_FAILURE_COMPILE_ERROR : FX_FAILURE_RUNTIME_ERROR, &diag);
      goto done;
    }
  unsigned fail_on = config->fail_on ? config->fail_on : FX_FAIL_ON_ANY;
  if (!(fail_on & FX_FAIL_ON (FX_FAILURE_ACCURACY)))
    goto done;
  fx_diag_clear (&diag);
  if (fx_interp_run_reference (graph, inputs, n_inputs, arena, &ref, &n_ref, &ref64, &n_ref64, &diag) != FX_OK)
    {
      failure_from_diag (out, FX_FAILURE_INVALID, &diag);
      goto done;
    }
  if (n_res != n_ref)
    {
      failure_set (out, FX_FAILURE_ACCURACY, "Accuracy failed: returned %zu outputs, the reference has %zu", n_res,
                   n_ref);
      goto done;
    }
  fx_same_opts so;
  fx_same_opts_init (&so);
  fx_same_report rep;
  memset (&rep, 0, sizeof rep);
  if (!fx_same_values (ref, res, ref64, n_ref, &so, &rep))
    failure_set (out, FX_FAILURE_ACCURACY, "%s", rep.message[0] ? rep.message : "Accuracy failed");

done:
  clear_values (inputs, n_inputs);
  clear_values (res, n_res);
  clear_values (ref, n_ref);
  clear_values (ref64, n_ref64);
  fx_arena_free (arena);
}

static const char *
signal_name (int sig)
{
  switch (sig)
    {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGTRAP: return "SIGTRAP";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal";
    }
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* fork + pipe + poll with the time limit + waitpid; the child is its own process group so that a compiler it
   started dies with it on a timeout. */
static void
check_isolated (const fx_graph *graph, const fx_minify_config *config, fx_failure *out)
{
  memset (out, 0, sizeof *out);
  int fds[2];
  if (pipe (fds) != 0)
    {
      failure_set (out, FX_FAILURE_INVALID, "minify: pipe: %s", strerror (errno));
      return;
    }
  fflush (stdout);
  fflush (stderr);
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (fds[0]);
      close (fds[1]);
      failure_set (out, FX_FAILURE_INVALID, "minify: fork: %s", strerror (errno));
      return;
    }
  if (pid == 0)
    {
      setpgid (0, 0);
      close (fds[0]);
      /* the parent's stdout may be a JSON stream: whatever a backend prints must not land in it */
      int devnull = open ("/dev/null", O_WRONLY);
      if (devnull >= 0)
        {
          dup2 (devnull, STDOUT_FILENO);
          close (devnull);
        }
      fx_failure f;
      check_inline (graph, config, &f);
      const char *p = (const char *) &f;
      size_t left = sizeof f;
      while (left > 0)
        {
          ssize_t w = write (fds[1], p, left);
          if (w <= 0)
            {
              if (w < 0 && errno == EINTR)
                continue;
              _exit (3);
            }
          p += w;
          left -= (size_t) w;
        }
      close (fds[1]);
      _exit (0);
    }
  setpgid (pid, pid);
  close (fds[1]);
  fx_failure got;
  size_t have = 0;
  bool timed_out = false;
  double t0 = now_s ();
  bool cancelled = false;
  for (;;)
    {
      int wait_ms = -1;
      if (config->cancel && *config->cancel)
        {
          cancelled = true;
          break;
        }
      if (config->timeout_s > 0)
        {
          double left = config->timeout_s - (now_s () - t0);
          if (left <= 0)
            {
              timed_out = true;
              break;
            }
          wait_ms = (int) ceil (left * 1000.0);
        }
      /* a cancel request is noticed within 200 ms */
      if (config->cancel && (wait_ms < 0 || wait_ms > 200))
        wait_ms = 200;
      struct pollfd pfd = { fds[0], POLLIN, 0 };
      int pr = poll (&pfd, 1, wait_ms);
      if (pr < 0 && errno == EINTR)
        continue;
      if (pr == 0)
        continue;
      if (pr < 0)
        break;
      ssize_t r = read (fds[0], (char *) &got + have, sizeof got - have);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      have += (size_t) r;
      if (have == sizeof got)
        break;
    }
  close (fds[0]);
  if (timed_out || cancelled)
    {
      kill (-pid, SIGKILL);
      kill (pid, SIGKILL);
    }
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (cancelled)
    {
      failure_set (out, FX_FAILURE_INVALID, "cancelled");
      return;
    }
  if (timed_out)
    {
      failure_set (out, FX_FAILURE_HANG, "timed out after %g s", config->timeout_s);
      return;
    }
  if (have == sizeof got)
    {
      *out = got;
      out->message[sizeof out->message - 1] = '\0';
      return;
    }
  if (WIFSIGNALED (status))
    failure_set (out, FX_FAILURE_CRASH, "killed by %s (signal %d)", signal_name (WTERMSIG (status)),
                 WTERMSIG (status));
  else
    failure_set (out, FX_FAILURE_CRASH, "exited with status %d before reporting",
                 WIFEXITED (status) ? WEXITSTATUS (status) : -1);
}

void
fx_minify_check (const fx_graph *graph, const fx_minify_config *config, fx_failure *out)
{
  if (config->in_process)
    check_inline (graph, config, out);
  else
    check_isolated (graph, config, out);
}

/* ---------------------------------------------------------------- graph helpers */

static bool
is_call (const fx_node *n)
{
  return n->op != FX_OP_PLACEHOLDER && n->op != FX_OP_OUTPUT;
}

static size_t
count_nodes (const fx_graph *g, bool calls_only)
{
  size_t c = 0;
  fx_graph_foreach_node (g, n)
    if (!calls_only || is_call (n))
      c++;
  return c;
}

static fx_node *
node_at (const fx_graph *g, size_t idx)
{
  size_t i = 0;
  fx_graph_foreach_node (g, n)
    if (i++ == idx)
      return n;
  return NULL;
}

static bool
tensor_meta_concrete (const fx_val *v)
{
  if (v->kind != FX_VAL_TENSOR || v->tensor.dtype == FX_DTYPE_UNKNOWN || !fx_dtype_is_supported (v->tensor.dtype))
    return false;
  for (int d = 0; d < v->tensor.ndim; d++)
    if (v->tensor.sizes[d].sym != NULL || v->tensor.sizes[d].value < 0
        || (v->tensor.strides && (v->tensor.strides[d].sym != NULL)))
      return false;
  return true;
}

/* _convert_node_to_placeholder: the node becomes an input with its own metadata (a tuple-valued node converts its
   getitem users instead). */
static bool
convert_to_placeholder (fx_graph *g, fx_node *n)
{
  if (!is_call (n))
    return false;
  if (n->meta.val.kind == FX_VAL_TUPLE)
    {
      bool any = false;
      size_t nu = n->n_users;
      fx_node **users = malloc (sizeof (fx_node *) * (nu + 1));
      memcpy (users, n->users, sizeof (fx_node *) * nu);
      for (size_t i = 0; i < nu; i++)
        any |= convert_to_placeholder (g, users[i]);
      free (users);
      return any;
    }
  if (!tensor_meta_concrete (&n->meta.val))
    return false;
  fx_node_set_args (n, NULL, 0);
  fx_node_set_kwargs (n, NULL, 0);
  n->op = FX_OP_PLACEHOLDER;
  n->target = fx_target_str (n->name);
  n->meta.val.tensor.has_device = true;
  if (n->meta.val.tensor.strides == NULL)
    {
      /* rand_strided needs strides: the contiguous ones */
      int nd = n->meta.val.tensor.ndim;
      fx_dim *st = fx_arena_alloc (g->arena, sizeof (fx_dim) * (size_t) (nd + 1));
      int64_t s = 1;
      for (int d = nd - 1; d >= 0; d--)
        {
          st[d] = (fx_dim) { s, NULL };
          if (n->meta.val.tensor.sizes[d].value > 1)
            s *= n->meta.val.tensor.sizes[d].value;
        }
      n->meta.val.tensor.strides = st;
    }
  return true;
}

/* Placeholders first, in their order (what _consolidate_placeholders does). */
static void
placeholders_to_front (fx_graph *g)
{
  fx_node *first = NULL;
  fx_graph_foreach_node (g, n)
    if (n->op != FX_OP_PLACEHOLDER)
      {
        first = n;
        break;
      }
  if (first == NULL)
    return;
  for (fx_node *n = first->next, *next; n != NULL; n = next)
    {
      next = n->next;
      if (n->op == FX_OP_PLACEHOLDER)
        fx_graph_move_before (g, n, first);
    }
}

static size_t
remove_unused_placeholders (fx_graph *g)
{
  size_t removed = 0;
  for (fx_node *n = g->first, *next; n != NULL; n = next)
    {
      next = n->next;
      if (n->op == FX_OP_PLACEHOLDER && n->n_users == 0 && fx_graph_erase_node (g, n, NULL) == FX_OK)
        removed++;
    }
  return removed;
}

/* ---------------------------------------------------------------- preparation */

fx_status
fx_minify_prepare (const fx_graph *graph, fx_graph **out, fx_diag *diag)
{
  *out = NULL;
  fx_graph *g = fx_graph_copy (graph);
  if (g == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "minify: cannot copy the graph");
  size_t nph = fx_graph_count_op (g, FX_OP_PLACEHOLDER);
  if (g->n_inputs == nph && nph > 0)
    {
      size_t i = 0;
      fx_graph_foreach_node (g, n)
        if (n->op == FX_OP_PLACEHOLDER)
          {
            const fx_input_spec *s = &g->inputs[i++];
            if (s->val.kind == FX_VAL_TENSOR || s->val.kind == FX_VAL_INT || s->val.kind == FX_VAL_SYMINT)
              n->meta.val = s->val;
          }
    }
  /* the placeholders' metas now say what the inputs are; input specs would go stale as placeholders change */
  g->inputs = NULL;
  g->n_inputs = 0;
  fx_graph_foreach_node (g, n)
    if (n->op == FX_OP_PLACEHOLDER && n->meta.val.kind == FX_VAL_NONE)
      {
        fx_diag_set (diag, FX_ERR_INVALID, "placeholder '%s' has no shape annotation: the minifier needs the inputs' "
                                           "shapes (print_readable with annotations, or a repro.py)", n->name);
        if (diag)
          snprintf (diag->node, sizeof diag->node, "%s", n->name);
        fx_graph_free (g);
        return FX_ERR_INVALID;
      }
  /* intermediate metas let delta debugging turn any node into an input; a graph whose shapes cannot be propagated is
     still minified, just without that */
  fx_diag sd;
  fx_diag_clear (&sd);
  fx_pass_shape_prop (g, NULL, &sd);
  /* module attributes (parameters, constants) become inputs, as AOT lifts them: the repro rebuilds them with
     rand_strided like any input */
  for (fx_node *n = g->first, *next; n != NULL; n = next)
    {
      next = n->next;
      if (n->op == FX_OP_GET_ATTR)
        convert_to_placeholder (g, n);
    }
  placeholders_to_front (g);
  *out = g;
  return FX_OK;
}

/* ---------------------------------------------------------------- the minifier */

typedef struct minify_state
{
  const fx_minify_config *cfg;
  fx_graph *cur;
  fx_failure target;
  size_t candidates;
  double t0;
  size_t start_nodes;
  bool cancelled;
  const char *strategy;
  int granularity;
  fx_status write_status;
  fx_diag *diag;
} minify_state;

static double
elapsed (const minify_state *s)
{
  return s->cfg->elapsed_before + (now_s () - s->t0);
}

static bool
report (minify_state *s, fx_minify_event ev, const fx_failure *outcome, bool accepted)
{
  if (s->cfg->progress == NULL)
    return true;
  fx_minify_progress p = {
    .event = ev,
    .strategy = s->strategy,
    .granularity = s->granularity,
    .nodes = count_nodes (s->cur, false),
    .call_nodes = count_nodes (s->cur, true),
    .start_nodes = s->start_nodes,
    .candidates = s->candidates,
    .elapsed_s = elapsed (s),
    .outcome = outcome,
    .accepted = accepted,
    .graph = (ev == FX_MINIFY_EVENT_SHRUNK || ev == FX_MINIFY_EVENT_DONE) ? s->cur : NULL,
  };
  return s->cfg->progress (&p, s->cfg->progress_data);
}

static void
write_checkpoint (minify_state *s, bool done)
{
  if (s->cfg->checkpoint == NULL || s->write_status != FX_OK)
    return;
  fx_minify_checkpoint cp = {
    .graph = s->cur,
    .failure = s->target,
    .fail_on = s->cfg->fail_on,
    .candidates = s->candidates,
    .elapsed_s = elapsed (s),
    .start_nodes = s->start_nodes,
    .done = done,
  };
  s->write_status = fx_minify_checkpoint_write (s->cfg->checkpoint, &cp, s->diag);
}

/* graph_fails: checks a candidate (taking ownership of it); when it fails the same way it becomes the current graph. */
static bool
try_candidate (minify_state *s, fx_graph *cand)
{
  if (s->cancelled || s->write_status != FX_OK)
    {
      fx_graph_free (cand);
      return false;
    }
  fx_failure f;
  fx_minify_check (cand, s->cfg, &f);
  s->candidates++;
  unsigned fail_on = s->cfg->fail_on ? s->cfg->fail_on : FX_FAIL_ON_ANY;
  bool same = (fail_on & FX_FAIL_ON (f.kind)) && fx_failure_same (&f, &s->target);
  if (same)
    {
      fx_graph_free (s->cur);
      s->cur = cand;
    }
  else
    fx_graph_free (cand);
  if (!report (s, FX_MINIFY_EVENT_CANDIDATE, &f, same) || (s->cfg->cancel && *s->cfg->cancel))
    s->cancelled = true;
  if (same)
    {
      write_checkpoint (s, false);
      if (!report (s, FX_MINIFY_EVENT_SHRUNK, NULL, true))
        s->cancelled = true;
    }
  return same;
}

static fx_node *
output_node (const fx_graph *g)
{
  return fx_graph_output_node (g);
}

fx_status
fx_graph_cut_after (const fx_graph *graph, const char *node_name, fx_graph **out, fx_diag *diag)
{
  fx_node *orig = node_name ? fx_graph_find_node ((fx_graph *) graph, node_name) : NULL;
  fx_node *out0 = fx_graph_output_node (graph);

  *out = NULL;
  if (orig == NULL)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "no node '%s' in the graph", node_name ? node_name : "");
  if (!is_call (orig) || orig->meta.val.kind == FX_VAL_TUPLE)
    return fx_diag_set (diag, FX_ERR_INVALID,
                        "node '%s' is not a call with one tensor value: a graph cannot end there", node_name);
  bool seq_out = out0 && out0->n_args == 1 && (out0->args[0].kind == FX_ARG_TUPLE || out0->args[0].kind == FX_ARG_LIST);
  fx_graph *c = fx_graph_copy (graph);
  fx_node *cut = fx_graph_find_node (c, node_name);
  fx_node *o = fx_graph_output_node (c);
  fx_arg item = fx_arg_node (cut);
  fx_arg a = seq_out ? fx_arg_tuple (&item, 1) : item;
  fx_node_set_args (o, &a, 1);
  for (fx_node *n = o->prev; n != NULL && n != cut;)
    {
      fx_node *prev = n->prev;
      fx_status st = fx_graph_erase_node (c, n, diag);
      if (st != FX_OK)
        {
          fx_graph_free (c);
          return st;
        }
      n = prev;
    }
  *out = c;
  return FX_OK;
}

/* "Remove suffix": the graph cut after node idx, which becomes the only output. */
static bool
strategy_remove_suffix (minify_state *s, int granularity)
{
  size_t total = count_nodes (s->cur, false);
  fx_node *out0 = output_node (s->cur);
  bool seq_out = out0 && out0->n_args == 1 && (out0->args[0].kind == FX_ARG_TUPLE || out0->args[0].kind == FX_ARG_LIST);
  size_t idx = 0;
  char **names = calloc (total + 1, sizeof *names);
  fx_graph_foreach_node (s->cur, n)
    names[idx++] = (char *) n->name;
  bool found = false;
  for (idx = 0; idx < total && !found && !s->cancelled; idx++)
    {
      if (!(idx % (size_t) granularity == 0 && idx % ((size_t) granularity * 2) != 0))
        continue;
      fx_node *orig = fx_graph_find_node (s->cur, names[idx]);
      if (orig == NULL || !is_call (orig) || orig->meta.val.kind == FX_VAL_TUPLE)
        continue;
      fx_graph *c = fx_graph_copy (s->cur);
      fx_node *cut = fx_graph_find_node (c, names[idx]);
      fx_node *out = output_node (c);
      fx_arg item = fx_arg_node (cut);
      fx_arg a = seq_out ? fx_arg_tuple (&item, 1) : item;
      fx_node_set_args (out, &a, 1);
      bool ok = true;
      for (fx_node *n = out->prev; ok && n != NULL && n != cut;)
        {
          fx_node *prev = n->prev;
          ok = fx_graph_erase_node (c, n, NULL) == FX_OK;
          n = prev;
        }
      if (!ok || count_nodes (c, false) >= total)
        {
          fx_graph_free (c);
          continue;
        }
      found = try_candidate (s, c);
    }
  free (names);
  return found;
}

/* "Remove outputs": drop a granule of the output tuple. */
static bool
strategy_remove_outputs (minify_state *s, int granularity)
{
  granularity = granularity / 2 > 1 ? granularity / 2 : 1;
  fx_node *out = output_node (s->cur);
  if (out == NULL || out->n_args != 1 || (out->args[0].kind != FX_ARG_TUPLE && out->args[0].kind != FX_ARG_LIST))
    return false;
  size_t n = out->args[0].u.seq.n;
  if (n <= 1)
    return false;
  for (size_t start = 0; start < n && !s->cancelled; start += (size_t) granularity)
    {
      fx_graph *c = fx_graph_copy (s->cur);
      fx_node *co = output_node (c);
      const fx_arg *items = co->args[0].u.seq.items;
      fx_arg *kept = calloc (n, sizeof *kept);
      size_t k = 0;
      for (size_t i = 0; i < n; i++)
        if (i < start || i >= start + (size_t) granularity)
          kept[k++] = items[i];
      fx_arg a = co->args[0].kind == FX_ARG_LIST ? fx_arg_list (kept, k) : fx_arg_tuple (kept, k);
      fx_node_set_args (co, &a, 1);
      free (kept);
      if (try_candidate (s, c))
        return true;
    }
  return false;
}

/* A candidate made by a whole-graph rewrite that returns how much it changed; none when it changed nothing. */
static bool
try_rewrite (minify_state *s, size_t (*rewrite) (fx_graph *graph))
{
  fx_graph *c = fx_graph_copy (s->cur);
  if (rewrite (c) == 0)
    {
      fx_graph_free (c);
      return false;
    }
  return try_candidate (s, c);
}

static bool
strategy_eliminate_dead_code (minify_state *s, int granularity)
{
  (void) granularity;
  return try_rewrite (s, fx_graph_eliminate_dead_code);
}

static bool
strategy_remove_unused_inputs (minify_state *s, int granularity)
{
  (void) granularity;
  return try_rewrite (s, remove_unused_placeholders);
}

/* "Consolidate Inputs": every node computed from inputs alone becomes an input itself (PyTorch turns leading
   load_tensor nodes into inputs; here the first layer of computation plays that part). */
static bool
strategy_consolidate_inputs (minify_state *s, int granularity)
{
  (void) granularity;
  fx_graph *c = fx_graph_copy (s->cur);
  size_t nodes = count_nodes (c, false);
  fx_node **first_layer = calloc (nodes + 1, sizeof *first_layer);
  size_t n_first = 0;
  fx_graph_foreach_node (c, n)
    {
      if (!is_call (n) || n->n_args == 0)
        continue;
      bool only_inputs = true, any_input = false;
      for (size_t i = 0; i < n->n_args; i++)
        if (n->args[i].kind == FX_ARG_NODE)
          {
            any_input = true;
            only_inputs &= n->args[i].u.node->op == FX_OP_PLACEHOLDER;
          }
      /* a node that is the output itself stays: converting it leaves nothing to compile */
      bool feeds_output_only = n->n_users == 1 && n->users[0]->op == FX_OP_OUTPUT;
      if (only_inputs && any_input && !feeds_output_only)
        first_layer[n_first++] = n;
    }
  size_t converted = 0;
  for (size_t i = 0; i < n_first; i++)
    converted += convert_to_placeholder (c, first_layer[i]);
  free (first_layer);
  if (converted == 0)
    {
      fx_graph_free (c);
      return false;
    }
  fx_graph_eliminate_dead_code (c);
  placeholders_to_front (c);
  remove_unused_placeholders (c);
  return try_candidate (s, c);
}

/* "Delta Debugging": a granule of nodes becomes inputs, then dead code and unused inputs go. */
static bool
strategy_delta_debugging (minify_state *s, int granularity)
{
  size_t total = count_nodes (s->cur, false);
  for (size_t start = 0; start < total && !s->cancelled; start += (size_t) granularity)
    {
      fx_graph *c = fx_graph_copy (s->cur);
      size_t end = start + (size_t) granularity < total ? start + (size_t) granularity : total;
      fx_node **range = calloc (end - start + 1, sizeof *range);
      for (size_t i = start; i < end; i++)
        range[i - start] = node_at (c, i);
      bool removing = false;
      for (size_t i = 0; i < end - start; i++)
        if (range[i] && !range[i]->erased)
          removing |= convert_to_placeholder (c, range[i]);
      free (range);
      if (!removing)
        {
          fx_graph_free (c);
          continue;
        }
      fx_graph_eliminate_dead_code (c);
      placeholders_to_front (c);
      remove_unused_placeholders (c);
      if (try_candidate (s, c))
        return true;
    }
  return false;
}

typedef bool (*strategy_fn) (minify_state *s, int granularity);

static bool
run_strategy (minify_state *s, const char *name, strategy_fn fn, int granularity)
{
  s->strategy = name;
  s->granularity = granularity;
  return fn (s, granularity);
}

static bool
try_granularity (minify_state *s, int granularity, bool use_non_granular)
{
  size_t n = count_nodes (s->cur, false);
  fx_node *out = output_node (s->cur);
  size_t n_outputs = out && out->n_args == 1 && (out->args[0].kind == FX_ARG_TUPLE || out->args[0].kind == FX_ARG_LIST)
                       ? out->args[0].u.seq.n : 1;
  if (n_outputs > n / 2 && run_strategy (s, "Remove outputs", strategy_remove_outputs, granularity))
    return true;
  if (use_non_granular)
    {
      if (run_strategy (s, "Eliminate dead code", strategy_eliminate_dead_code, granularity)
          || run_strategy (s, "Remove unused inputs", strategy_remove_unused_inputs, granularity))
        return true;
    }
  if (run_strategy (s, "Remove suffix", strategy_remove_suffix, granularity)
      || run_strategy (s, "Delta Debugging", strategy_delta_debugging, granularity))
    return true;
  /* after the granular cuts (PyTorch tries it before them, but its version only turns leading load_tensor nodes into
     inputs and rarely applies): converting the first layer peels one layer per candidate, which cutting by halves
     beats (17 instead of 42 candidates on a 48-node chain) */
  return use_non_granular && run_strategy (s, "Consolidate Inputs", strategy_consolidate_inputs, granularity);
}

static int
initial_granularity (const minify_state *s)
{
  size_t n = count_nodes (s->cur, false);
  int g = 1;
  while ((size_t) g * 2 <= n)
    g *= 2;
  if (s->cfg->max_granularity > 0 && g > s->cfg->max_granularity)
    g = s->cfg->max_granularity;
  return g;
}

fx_status
fx_minify (const fx_graph *graph, const fx_minify_config *config, fx_minify_result *result, fx_diag *diag)
{
  memset (result, 0, sizeof *result);
  if (config->run == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "minify: no backend run function");
  minify_state s;
  memset (&s, 0, sizeof s);
  s.cfg = config;
  s.t0 = now_s ();
  s.diag = diag;
  s.candidates = config->candidates_before;
  fx_status st = fx_minify_prepare (graph, &s.cur, diag);
  if (st != FX_OK)
    return st;
  s.start_nodes = count_nodes (s.cur, false);
  result->start_nodes = s.start_nodes;

  /* the original failure: checked afresh even when resuming, so a checkpoint that no longer fails says so */
  s.strategy = "Original graph";
  fx_failure f;
  fx_minify_check (s.cur, config, &f);
  s.candidates++;
  result->failure = f;
  unsigned fail_on = config->fail_on ? config->fail_on : FX_FAIL_ON_ANY;
  result->reproduced = (fail_on & FX_FAIL_ON (f.kind)) != 0
                       && (config->expect == NULL || fx_failure_same (&f, config->expect));
  if (config->expect && result->reproduced)
    result->failure = *config->expect;
  if (config->cancel && *config->cancel)
    {
      result->reproduced = false;
      result->cancelled = true;
    }
  s.target = result->failure;
  report (&s, FX_MINIFY_EVENT_START, &result->failure, result->reproduced);
  if (!result->reproduced)
    {
      result->candidates = s.candidates;
      result->elapsed_s = elapsed (&s);
      fx_graph_free (s.cur);
      return FX_OK;
    }
  write_checkpoint (&s, false);

  for (;;)
    {
      if (s.cancelled || s.write_status != FX_OK)
        break;
      int granularity = initial_granularity (&s);
      if (try_granularity (&s, granularity, true))
        continue;
      granularity /= 2;
      bool progress = false;
      while (granularity >= 1 && !s.cancelled)
        {
          if (try_granularity (&s, granularity, false))
            {
              progress = true;
              break;
            }
          granularity /= 2;
        }
      if (progress)
        continue;
      if (!s.cancelled && run_strategy (&s, "Remove outputs", strategy_remove_outputs, 1))
        continue;
      break;
    }
  s.strategy = NULL;
  if (s.write_status == FX_OK && !s.cancelled)
    write_checkpoint (&s, true);
  result->cancelled = s.cancelled;
  result->candidates = s.candidates;
  result->elapsed_s = elapsed (&s);
  result->end_nodes = count_nodes (s.cur, false);
  report (&s, FX_MINIFY_EVENT_DONE, NULL, false);
  result->graph = s.cur;
  return s.write_status;
}

void
fx_minify_result_clear (fx_minify_result *result)
{
  if (result->graph)
    fx_graph_free (result->graph);
  memset (result, 0, sizeof *result);
}
