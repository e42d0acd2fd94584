/* test-minify.c: the minifier with a test-only backend (the interpreter with faults that fire when a graph contains
   a relu): every predicate (compile error, run-time error, crash, hang, accuracy), every strategy, the same-failure
   rule, a graph that does not fail, cancel + checkpoint + resume, and the repro.py writer read back by the parser. */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "fx/minify.h"
#include "fx/pyparse.h"

/* ---------------------------------------------------------------- the test-only backend */

typedef enum
{
  FAKE_COMPILE_ERROR,
  FAKE_RUNTIME_ERROR,
  FAKE_CRASH,
  FAKE_HANG,
  FAKE_ACCURACY,
  FAKE_NONE,
} fake_fault;

typedef struct
{
  fake_fault fault;
  const char *trigger;      /* target whose presence breaks the backend: "aten.relu.default" */
  const char *trigger2;     /* a second one with its own error message, or NULL */
} fake_backend;

static const fx_node *
find_trigger (const fx_graph *g, const fake_backend *fb)
{
  /* dead nodes do not count: a compiler drops them (inductor's DCE) */
  fx_graph_foreach_node (g, n)
    if (n->op == FX_OP_CALL_FUNCTION && n->target.name && n->n_users > 0
        && (strcmp (n->target.name, fb->trigger) == 0 || (fb->trigger2 && strcmp (n->target.name, fb->trigger2) == 0)))
      return n;
  return NULL;
}

static fx_status
fake_run (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
          size_t *n_outputs, fx_minify_stage *failed_at, fx_diag *diag, void *user_data)
{
  const fake_backend *fb = user_data;
  const fx_node *t = find_trigger (graph, fb);
  fx_graph *run = fx_graph_copy (graph);
  if (t != NULL)
    switch (fb->fault)
      {
      case FAKE_COMPILE_ERROR:
        /* a per-candidate path and hash, as a C compiler's message has: the same failure regardless */
        *failed_at = FX_MINIFY_AT_COMPILE;
        fx_graph_free (run);
        return fx_diag_set (diag, FX_ERR_BACKEND, "fake: cannot compile %s on /tmp/c%d/k%016llx.c:\ndetails",
                            t->target.name, (int) getpid (), (unsigned long long) (uintptr_t) graph);
      case FAKE_RUNTIME_ERROR:
        *failed_at = FX_MINIFY_AT_RUN;
        fx_graph_free (run);
        return fx_diag_set (diag, FX_ERR_BACKEND, "fake: kernel raised at run time");
      case FAKE_CRASH:
        raise (SIGSEGV);
        break;
      case FAKE_HANG:
        for (;;)
          pause ();
      case FAKE_ACCURACY:
        /* relu computed as neg */
        fx_graph_foreach_node (run, n)
          if (n->op == FX_OP_CALL_FUNCTION && strcmp (n->target.name, fb->trigger) == 0)
            n->target = fx_target_op ("aten.neg.default");
        break;
      case FAKE_NONE:
      default:
        break;
      }
  fx_graph_resolve_ops (run);
  *failed_at = FX_MINIFY_AT_RUN;
  fx_status st = fx_interp_run (run, inputs, n_inputs, NULL, arena, outputs, n_outputs, diag);
  fx_graph_free (run);
  return st;
}

/* ---------------------------------------------------------------- graphs */

static fx_graph *
parse (const char *code)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_code (code, strlen (code), "test.py", &g, &diag) != FX_OK)
    g_error ("parse: %s\n%s", diag.message, code);
  fx_graph_resolve_ops (g);
  return g;
}

#define T "\"f32[4, 8][8, 1]cpu\""

/* x, y -> n unary/binary ops in a chain with a relu at position relu_at (-1: none), output the last. */
static fx_graph *
chain (int n, int relu_at)
{
  static const char *const ops[] = { "add.Tensor", "sin.default", "mul.Tensor", "cos.default", "sub.Tensor",
                                     "neg.default" };
  GString *s = g_string_new ("class <lambda>(torch.nn.Module):\n    def forward(self, x: " T ", y: " T "):\n");
  const char *prev = "x";
  char name[32], last[32] = "x";
  for (int i = 0; i < n; i++)
    {
      const char *op = i == relu_at ? "relu.default" : ops[i % 6];
      g_snprintf (name, sizeof name, "v%d", i);
      if (strstr (op, "Tensor"))
        g_string_append_printf (s, "        %s: " T " = torch.ops.aten.%s(%s, y)\n", name, op, prev);
      else
        g_string_append_printf (s, "        %s: " T " = torch.ops.aten.%s(%s)\n", name, op, prev);
      g_strlcpy (last, name, sizeof last);
      prev = last;
    }
  g_string_append_printf (s, "        return (%s,)\n", last);
  fx_graph *g = parse (s->str);
  g_string_free (s, TRUE);
  return g;
}

static size_t
count_calls (const fx_graph *g)
{
  size_t c = 0;
  fx_graph_foreach_node (g, n)
    if (n->op == FX_OP_CALL_FUNCTION)
      c++;
  return c;
}

static bool
has_target (const fx_graph *g, const char *target)
{
  fx_graph_foreach_node (g, n)
    if (n->op == FX_OP_CALL_FUNCTION && strcmp (n->target.name, target) == 0)
      return true;
  return false;
}

/* Records the strategies that shrank the graph and the events seen. */
typedef struct
{
  GPtrArray *accepted;      /* strategy names */
  size_t candidates;
  size_t shrinks;
  size_t cancel_after;      /* cancel once this many shrinks happened (0: never) */
  size_t last_nodes, last_calls;
  bool nodes_decrease;      /* every SHRUNK had fewer nodes or fewer calls than the one before, never more calls */
} recorder;

static bool
record (const fx_minify_progress *p, void *data)
{
  recorder *r = data;
  if (p->event == FX_MINIFY_EVENT_CANDIDATE)
    r->candidates++;
  if (p->event == FX_MINIFY_EVENT_START)
    {
      r->last_nodes = p->nodes;
      r->last_calls = p->call_nodes;
    }
  if (p->event == FX_MINIFY_EVENT_SHRUNK)
    {
      r->shrinks++;
      if (g_test_verbose ())
        {
          fx_buf code;
          fx_buf_init (&code);
          fx_graph_print_code (p->graph, &code);
          g_printerr ("# %s (granularity %d):%s\n", p->strategy, p->granularity, code.data);
          fx_buf_free (&code);
        }
      g_ptr_array_add (r->accepted, g_strdup (p->strategy));
      g_assert_nonnull (p->graph);
      bool smaller = p->nodes < r->last_nodes || p->call_nodes < r->last_calls
                     || strcmp (p->strategy, "Remove outputs") == 0;
      if (!smaller || p->call_nodes > r->last_calls)
        r->nodes_decrease = false;
      r->last_nodes = p->nodes;
      r->last_calls = p->call_nodes;
    }
  return r->cancel_after == 0 || r->shrinks < r->cancel_after;
}

static void
recorder_init (recorder *r)
{
  memset (r, 0, sizeof *r);
  r->accepted = g_ptr_array_new_with_free_func (g_free);
  r->nodes_decrease = true;
}

static bool
recorded (const recorder *r, const char *strategy)
{
  for (guint i = 0; i < r->accepted->len; i++)
    if (strcmp (g_ptr_array_index (r->accepted, i), strategy) == 0)
      return true;
  return false;
}

static void
config_for (fx_minify_config *cfg, fake_backend *fb, unsigned fail_on, recorder *rec)
{
  fx_minify_config_init (cfg);
  cfg->run = fake_run;
  cfg->run_data = fb;
  cfg->fail_on = fail_on;
  cfg->timeout_s = 20;
  if (rec)
    {
      cfg->progress = record;
      cfg->progress_data = rec;
    }
}

/* ---------------------------------------------------------------- predicates */

static void
check_kind (fake_fault fault, fx_failure_kind want, bool in_process)
{
  fake_backend fb = { fault, "aten.relu.default", NULL };
  fx_minify_config cfg;
  config_for (&cfg, &fb, FX_FAIL_ON_ANY, NULL);
  cfg.in_process = in_process;
  cfg.timeout_s = fault == FAKE_HANG ? 0.5 : 20;
  fx_graph *bad = chain (6, 2), *good = chain (6, -1);
  fx_graph *pb = NULL, *pg = NULL;
  g_assert_cmpint (fx_minify_prepare (bad, &pb, NULL), ==, FX_OK);
  g_assert_cmpint (fx_minify_prepare (good, &pg, NULL), ==, FX_OK);
  fx_failure f;
  fx_minify_check (pb, &cfg, &f);
  g_assert_cmpstr (fx_failure_kind_name (f.kind), ==, fx_failure_kind_name (want));
  g_assert_cmpuint (strlen (f.message), >, 0);
  fx_minify_check (pg, &cfg, &f);
  g_assert_cmpstr (fx_failure_kind_name (f.kind), ==, "none");
  fx_graph_free (bad);
  fx_graph_free (good);
  fx_graph_free (pb);
  fx_graph_free (pg);
}

static void
test_predicates (void)
{
  check_kind (FAKE_COMPILE_ERROR, FX_FAILURE_COMPILE_ERROR, false);
  check_kind (FAKE_RUNTIME_ERROR, FX_FAILURE_RUNTIME_ERROR, false);
  check_kind (FAKE_ACCURACY, FX_FAILURE_ACCURACY, false);
  check_kind (FAKE_CRASH, FX_FAILURE_CRASH, false);
  check_kind (FAKE_HANG, FX_FAILURE_HANG, false);
  /* the same predicates without a child process */
  check_kind (FAKE_COMPILE_ERROR, FX_FAILURE_COMPILE_ERROR, true);
  check_kind (FAKE_RUNTIME_ERROR, FX_FAILURE_RUNTIME_ERROR, true);
  check_kind (FAKE_ACCURACY, FX_FAILURE_ACCURACY, true);
}

static void
test_crash_message (void)
{
  fake_backend fb = { FAKE_CRASH, "aten.relu.default", NULL };
  fx_minify_config cfg;
  config_for (&cfg, &fb, FX_FAIL_ON_ANY, NULL);
  fx_graph *g = chain (3, 1), *p = NULL;
  g_assert_cmpint (fx_minify_prepare (g, &p, NULL), ==, FX_OK);
  fx_failure f;
  fx_minify_check (p, &cfg, &f);
  g_assert_cmpint (f.kind, ==, FX_FAILURE_CRASH);
  /* SIGSEGV, or SIGABRT where a sanitizer catches the fault and aborts */
  g_assert_true (strstr (f.message, "killed by SIGSEGV") || strstr (f.message, "killed by SIGABRT"));
  fx_graph_free (g);
  fx_graph_free (p);
}

static void
test_same_failure (void)
{
  fx_failure a = { FX_FAILURE_COMPILE_ERROR, "inductor: C compiler failed (cc exit 1) on /x/y/k0123456789abcdef.c:\nmore" };
  fx_failure b = { FX_FAILURE_COMPILE_ERROR, "inductor: C compiler failed (cc exit 1) on /z/kfedcba9876543210.c:\nother" };
  fx_failure c = { FX_FAILURE_COMPILE_ERROR, "inductor: C compiler failed (cc exit 4) on /z/kfedcba9876543210.c:" };
  fx_failure d = { FX_FAILURE_RUNTIME_ERROR, "inductor: C compiler failed (cc exit 1) on /x/y/k0123456789abcdef.c:" };
  fx_failure e1 = { FX_FAILURE_ACCURACY, "RMSE 1.0" }, e2 = { FX_FAILURE_ACCURACY, "RMSE 2.0" };
  fx_failure h1 = { FX_FAILURE_CRASH, "killed by SIGSEGV (signal 11)" }, h2 = { FX_FAILURE_CRASH, "killed by SIGABRT (signal 6)" };
  g_assert_true (fx_failure_same (&a, &b));
  g_assert_false (fx_failure_same (&a, &c));
  g_assert_false (fx_failure_same (&a, &d));
  g_assert_true (fx_failure_same (&e1, &e2));
  g_assert_false (fx_failure_same (&h1, &h2));
  g_assert_cmpuint (fx_failure_mask_from_name ("compile_error"), ==, FX_FAIL_ON (FX_FAILURE_COMPILE_ERROR));
  g_assert_cmpuint (fx_failure_mask_from_name ("any"), ==, FX_FAIL_ON_ANY);
  g_assert_cmpuint (fx_failure_mask_from_name ("segfault"), ==, 0);
}

/* ---------------------------------------------------------------- whole runs */

static fx_minify_result
minify_ok (const fx_graph *g, fx_minify_config *cfg)
{
  fx_minify_result r;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_minify (g, cfg, &r, &diag), ==, FX_OK);
  return r;
}

static void
test_minify_kind (gconstpointer data)
{
  fake_fault fault = (fake_fault) GPOINTER_TO_INT (data);
  static const fx_failure_kind kinds[] = { FX_FAILURE_COMPILE_ERROR, FX_FAILURE_RUNTIME_ERROR, FX_FAILURE_CRASH,
                                           FX_FAILURE_HANG, FX_FAILURE_ACCURACY };
  fake_backend fb = { fault, "aten.relu.default", NULL };
  fx_minify_config cfg;
  recorder rec;
  recorder_init (&rec);
  config_for (&cfg, &fb, FX_FAIL_ON (kinds[fault]), &rec);
  if (fault == FAKE_HANG)
    cfg.timeout_s = 0.3;
  fx_graph *g = chain (fault == FAKE_HANG ? 12 : 24, fault == FAKE_HANG ? 7 : 13);
  fx_minify_result r = minify_ok (g, &cfg);
  g_assert_true (r.reproduced);
  g_assert_cmpint (r.failure.kind, ==, kinds[fault]);
  g_assert_nonnull (r.graph);
  g_assert_true (has_target (r.graph, "aten.relu.default"));
  g_assert_cmpuint (count_calls (r.graph), <=, 3);
  g_assert_cmpuint (r.end_nodes, <, r.start_nodes);
  g_assert_cmpuint (r.candidates, ==, rec.candidates + 1); /* + the original graph's check */
  g_assert_true (rec.nodes_decrease);
  /* the result fails the same way on its own */
  fx_failure f;
  fx_minify_check (r.graph, &cfg, &f);
  g_assert_cmpint (f.kind, ==, kinds[fault]);
  fx_minify_result_clear (&r);
  fx_graph_free (g);
  g_ptr_array_unref (rec.accepted);
}

static void
test_not_failing (void)
{
  fake_backend fb = { FAKE_COMPILE_ERROR, "aten.relu.default", NULL };
  fx_minify_config cfg;
  config_for (&cfg, &fb, FX_FAIL_ON_ANY, NULL);
  fx_graph *g = chain (8, -1);
  fx_minify_result r = minify_ok (g, &cfg);
  g_assert_false (r.reproduced);
  g_assert_null (r.graph);
  g_assert_cmpint (r.failure.kind, ==, FX_FAILURE_NONE);
  g_assert_cmpuint (r.candidates, ==, 1);
  fx_minify_result_clear (&r);
  /* fails, but not in the asked way: nothing to minify either */
  fx_graph *bad = chain (8, 3);
  config_for (&cfg, &fb, FX_FAIL_ON (FX_FAILURE_ACCURACY), NULL);
  r = minify_ok (bad, &cfg);
  g_assert_false (r.reproduced);
  g_assert_cmpint (r.failure.kind, ==, FX_FAILURE_COMPILE_ERROR);
  fx_minify_result_clear (&r);
  fx_graph_free (g);
  fx_graph_free (bad);
}

/* A candidate failing with another message is not the same failure: the minified graph keeps the relu's. */
static void
test_other_failure_rejected (void)
{
  fake_backend fb = { FAKE_COMPILE_ERROR, "aten.relu.default", "aten.cos.default" };
  fx_minify_config cfg;
  config_for (&cfg, &fb, FX_FAIL_ON_ANY, NULL);
  cfg.in_process = true;
  /* the relu comes first in the graph, so the original message names it; cos nodes follow */
  fx_graph *g = chain (14, 1);
  fx_minify_result r = minify_ok (g, &cfg);
  g_assert_true (r.reproduced);
  g_assert_nonnull (strstr (r.failure.message, "relu"));
  g_assert_true (has_target (r.graph, "aten.relu.default"));
  fx_minify_result_clear (&r);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- strategies */

static void
expect_strategy (const char *code, const char *strategy)
{
  fake_backend fb = { FAKE_COMPILE_ERROR, "aten.relu.default", NULL };
  fx_minify_config cfg;
  recorder rec;
  recorder_init (&rec);
  config_for (&cfg, &fb, FX_FAIL_ON_ANY, &rec);
  cfg.in_process = true;
  fx_graph *g = parse (code);
  fx_minify_result r = minify_ok (g, &cfg);
  g_assert_true (r.reproduced);
  if (!recorded (&rec, strategy))
    {
      for (guint i = 0; i < rec.accepted->len; i++)
        g_printerr ("accepted: %s\n", (char *) g_ptr_array_index (rec.accepted, i));
      g_error ("strategy %s never shrank the graph", strategy);
    }
  g_assert_true (has_target (r.graph, "aten.relu.default"));
  g_assert_cmpuint (count_calls (r.graph), ==, 1);
  fx_minify_result_clear (&r);
  fx_graph_free (g);
  g_ptr_array_unref (rec.accepted);
}

static void
test_strategy_dce (void)
{
  expect_strategy ("def forward(self, x: " T "):\n"
                   "    a: " T " = torch.ops.aten.sin.default(x)\n"
                   "    b: " T " = torch.ops.aten.cos.default(a)\n"
                   "    r: " T " = torch.ops.aten.relu.default(x)\n"
                   "    return (r,)\n",
                   "Eliminate dead code");
}

static void
test_strategy_unused_inputs (void)
{
  expect_strategy ("def forward(self, x: " T ", unused: " T "):\n"
                   "    r: " T " = torch.ops.aten.relu.default(x)\n"
                   "    return (r,)\n",
                   "Remove unused inputs");
}

static void
test_strategy_consolidate (void)
{
  expect_strategy ("def forward(self, x: " T "):\n"
                   "    a: " T " = torch.ops.aten.sin.default(x)\n"
                   "    r: " T " = torch.ops.aten.relu.default(a)\n"
                   "    return (r,)\n",
                   "Consolidate Inputs");
}

static void
test_strategy_suffix (void)
{
  /* the relu in the first layer (consolidating it loses the failure), a tail after it */
  fx_graph *g = chain (12, 0);
  fx_buf code;
  fx_buf_init (&code);
  fx_readable_opts ro = { true, true, false };
  fx_graph_print_readable (g, &ro, &code);
  expect_strategy (code.data, "Remove suffix");
  fx_buf_free (&code);
  fx_graph_free (g);
}

static void
test_strategy_delta (void)
{
  /* relu and sin both read x (consolidation converts both and loses the relu); the sin chain only joins at the end */
  expect_strategy ("def forward(self, x: " T "):\n"
                   "    r: " T " = torch.ops.aten.relu.default(x)\n"
                   "    s0: " T " = torch.ops.aten.sin.default(x)\n"
                   "    s1: " T " = torch.ops.aten.cos.default(s0)\n"
                   "    s2: " T " = torch.ops.aten.sin.default(s1)\n"
                   "    s3: " T " = torch.ops.aten.cos.default(s2)\n"
                   "    s4: " T " = torch.ops.aten.sin.default(s3)\n"
                   "    s5: " T " = torch.ops.aten.cos.default(s4)\n"
                   "    s6: " T " = torch.ops.aten.sin.default(s5)\n"
                   "    out: " T " = torch.ops.aten.add.Tensor(r, s6)\n"
                   "    return (out,)\n",
                   "Delta Debugging");
}

static void
test_strategy_remove_outputs (void)
{
  expect_strategy ("def forward(self, x: " T "):\n"
                   "    a: " T " = torch.ops.aten.sin.default(x)\n"
                   "    b: " T " = torch.ops.aten.cos.default(x)\n"
                   "    c: " T " = torch.ops.aten.neg.default(x)\n"
                   "    r: " T " = torch.ops.aten.relu.default(x)\n"
                   "    return (a, b, c, r)\n",
                   "Remove outputs");
}

/* ---------------------------------------------------------------- checkpoints */

static void
test_checkpoint_resume (void)
{
  g_autofree char *dir = g_dir_make_tmp ("fxminify-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "cp.json", NULL);
  fake_backend fb = { FAKE_RUNTIME_ERROR, "aten.relu.default", NULL };

  /* the uninterrupted run */
  fx_minify_config cfg;
  config_for (&cfg, &fb, FX_FAIL_ON_ANY, NULL);
  cfg.in_process = true;
  fx_graph *g = chain (30, 17);
  fx_minify_result full = minify_ok (g, &cfg);
  g_assert_true (full.reproduced);

  /* stopped after two shrinks (what a kill leaves: the checkpoint of the last shrink) */
  recorder rec;
  recorder_init (&rec);
  rec.cancel_after = 2;
  config_for (&cfg, &fb, FX_FAIL_ON_ANY, &rec);
  cfg.in_process = true;
  cfg.checkpoint = path;
  fx_minify_result part = minify_ok (g, &cfg);
  g_assert_true (part.cancelled);
  g_assert_cmpuint (part.end_nodes, >, full.end_nodes);

  fx_minify_checkpoint cp;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_minify_checkpoint_read (path, &cp, &diag), ==, FX_OK);
  g_assert_cmpint (cp.failure.kind, ==, FX_FAILURE_RUNTIME_ERROR);
  g_assert_false (cp.done);
  g_assert_cmpuint (cp.candidates, >, 0);
  g_assert_cmpuint (cp.graph->n_nodes, ==, part.end_nodes);
  g_assert_cmpuint (cp.start_nodes, ==, part.start_nodes);

  /* resumed: it finishes with the same graph the uninterrupted run found, counting on from the checkpoint */
  fx_minify_config rc;
  config_for (&rc, &fb, FX_FAIL_ON_ANY, NULL);
  rc.in_process = true;
  rc.checkpoint = path;
  rc.expect = &cp.failure;
  rc.candidates_before = cp.candidates;
  rc.elapsed_before = cp.elapsed_s;
  fx_minify_result res = minify_ok (cp.graph, &rc);
  g_assert_true (res.reproduced);
  g_assert_false (res.cancelled);
  g_assert_cmpuint (res.candidates, >, cp.candidates);
  g_assert_cmpuint (res.end_nodes, ==, full.end_nodes);
  fx_buf a, b;
  fx_buf_init (&a);
  fx_buf_init (&b);
  fx_graph_print_code (res.graph, &a);
  fx_graph_print_code (full.graph, &b);
  g_assert_cmpstr (a.data, ==, b.data);
  fx_buf_free (&a);
  fx_buf_free (&b);
  fx_minify_checkpoint cp2;
  g_assert_cmpint (fx_minify_checkpoint_read (path, &cp2, &diag), ==, FX_OK);
  g_assert_true (cp2.done);
  fx_graph_free (cp2.graph);

  /* a checkpoint whose graph no longer fails that way is refused */
  fx_failure other = { FX_FAILURE_COMPILE_ERROR, "something else" };
  rc.expect = &other;
  fx_minify_result no = minify_ok (cp.graph, &rc);
  g_assert_false (no.reproduced);
  fx_minify_result_clear (&no);

  /* not a checkpoint */
  g_assert_true (g_file_set_contents (path, "{\"format\": \"x\"}\n{}", -1, NULL));
  g_assert_cmpint (fx_minify_checkpoint_read (path, &cp2, &diag), ==, FX_ERR_PARSE);

  fx_minify_result_clear (&res);
  fx_minify_result_clear (&part);
  fx_minify_result_clear (&full);
  fx_graph_free (cp.graph);
  fx_graph_free (g);
  g_ptr_array_unref (rec.accepted);
  g_unlink (path);
  g_autofree char *tmp = g_strconcat (path, ".tmp", NULL);
  g_unlink (tmp);
  g_rmdir (dir);
}

/* ---------------------------------------------------------------- repro.py */

static void
test_repro_roundtrip (void)
{
  fake_backend fb = { FAKE_ACCURACY, "aten.relu.default", NULL };
  fx_minify_config cfg;
  config_for (&cfg, &fb, FX_FAIL_ON (FX_FAILURE_ACCURACY), NULL);
  cfg.in_process = true;
  fx_graph *g = chain (10, 5);
  fx_minify_result r = minify_ok (g, &cfg);
  g_assert_true (r.reproduced);
  fx_repro_setting settings[] = {
    { "cpp.inject_relu_bug_TESTING_ONLY", fx_arg_str ("accuracy") },
    { "bad key'); import os", fx_arg_str ("x") },
    { "max_autotune", fx_arg_str ("'); import os; ('") },
  };
  fx_repro_opts ro = { .backend = "inductor", .settings = settings, .n_settings = 3, .kind = FX_FAILURE_ACCURACY,
                       .failure_text = "line one\nline two" };
  fx_buf out;
  fx_buf_init (&out);
  g_assert_cmpint (fx_repro_write (r.graph, &ro, &out, NULL), ==, FX_OK);
  g_assert_nonnull (strstr (out.data, "class Repro(torch.nn.Module):"));
  g_assert_nonnull (strstr (out.data, "rand_strided"));
  g_assert_nonnull (strstr (out.data, "setattr(_config.cpp, 'inject_relu_bug_TESTING_ONLY', 'accuracy')"));
  g_assert_null (strstr (out.data, "bad key"));
  g_assert_null (strstr (out.data, "line two"));
  /* a hostile value stays one Python string literal */
  g_assert_nonnull (strstr (out.data, "setattr(_config, 'max_autotune', \"'); import os; ('\")"));
  /* read back: same graph, same inputs */
  fx_graph *back = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_code (out.data, out.len, "repro.py", &back, &diag) != FX_OK)
    g_error ("repro does not parse: %s:%d: %s\n%s", diag.file, diag.line, diag.message, out.data);
  g_assert_cmpstr (back->class_name, ==, "Repro");
  g_assert_cmpuint (back->n_inputs, ==, fx_graph_count_op (r.graph, FX_OP_PLACEHOLDER));
  g_assert_cmpuint (count_calls (back), ==, count_calls (r.graph));
  fx_buf a, b;
  fx_buf_init (&a);
  fx_buf_init (&b);
  fx_graph_print_code (back, &a);
  fx_graph_print_code (r.graph, &b);
  g_assert_cmpstr (a.data, ==, b.data);
  /* the repro's inputs are the minifier's: the same failure when checked from the parsed file */
  fx_graph *pb = NULL;
  g_assert_cmpint (fx_minify_prepare (back, &pb, NULL), ==, FX_OK);
  fx_failure f;
  fx_minify_check (pb, &cfg, &f);
  g_assert_cmpint (f.kind, ==, FX_FAILURE_ACCURACY);
  fx_buf_free (&a);
  fx_buf_free (&b);
  fx_buf_free (&out);
  fx_graph_free (pb);
  fx_graph_free (back);
  fx_minify_result_clear (&r);
  fx_graph_free (g);
}

static void
test_prepare_needs_shapes (void)
{
  fx_graph *g = parse ("def forward(self, x):\n    r = torch.ops.aten.relu.default(x)\n    return (r,)\n");
  fx_graph *p = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_minify_prepare (g, &p, &diag), ==, FX_ERR_INVALID);
  g_assert_null (p);
  g_assert_cmpstr (diag.node, ==, "x");
  fx_graph_free (g);
}

static volatile int cancel_flag;

static void
on_alarm (int sig)
{
  (void) sig;
  cancel_flag = 1;
}

/* A hang with no time limit is still cancellable: the flag (set by a signal handler, as fxwb's SIGINT/SIGTERM do)
   kills the candidate in flight and stops the run. */
static void
test_cancel_hang (void)
{
  fake_backend fb = { FAKE_HANG, "aten.relu.default", NULL };
  fx_minify_config cfg;
  config_for (&cfg, &fb, FX_FAIL_ON_ANY, NULL);
  cfg.timeout_s = 0;
  cfg.cancel = &cancel_flag;
  cancel_flag = 0;
  signal (SIGALRM, on_alarm);
  alarm (1);
  fx_graph *g = chain (6, 2);
  fx_minify_result r = minify_ok (g, &cfg);
  g_assert_true (r.cancelled);
  g_assert_false (r.reproduced);
  g_assert_null (r.graph);
  fx_minify_result_clear (&r);
  fx_graph_free (g);
  signal (SIGALRM, SIG_DFL);
}

/* parameters read through get_attr become inputs, as AOT lifts them */
static void
test_prepare_lifts_attrs (void)
{
  fx_graph *g = parse ("def forward(self, x: " T "):\n"
                       "    w: " T " = self.w\n"
                       "    a: " T " = torch.ops.aten.add.Tensor(x, w)\n"
                       "    r: " T " = torch.ops.aten.relu.default(a)\n"
                       "    return (r,)\n");
  g_assert_cmpuint (fx_graph_count_op (g, FX_OP_GET_ATTR), ==, 1);
  fx_graph *p = NULL;
  g_assert_cmpint (fx_minify_prepare (g, &p, NULL), ==, FX_OK);
  g_assert_cmpuint (fx_graph_count_op (p, FX_OP_GET_ATTR), ==, 0);
  g_assert_cmpuint (fx_graph_count_op (p, FX_OP_PLACEHOLDER), ==, 2);
  g_assert_true (p->first->op == FX_OP_PLACEHOLDER && p->first->next->op == FX_OP_PLACEHOLDER);
  fake_backend fb = { FAKE_RUNTIME_ERROR, "aten.relu.default", NULL };
  fx_minify_config cfg;
  config_for (&cfg, &fb, FX_FAIL_ON_ANY, NULL);
  cfg.in_process = true;
  fx_failure f;
  fx_minify_check (p, &cfg, &f);
  g_assert_cmpint (f.kind, ==, FX_FAILURE_RUNTIME_ERROR);
  fx_graph_free (p);
  fx_graph_free (g);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/minify/predicates", test_predicates);
  g_test_add_func ("/minify/crash-message", test_crash_message);
  g_test_add_func ("/minify/same-failure", test_same_failure);
  g_test_add_data_func ("/minify/run/compile-error", GINT_TO_POINTER (FAKE_COMPILE_ERROR), test_minify_kind);
  g_test_add_data_func ("/minify/run/runtime-error", GINT_TO_POINTER (FAKE_RUNTIME_ERROR), test_minify_kind);
  g_test_add_data_func ("/minify/run/crash", GINT_TO_POINTER (FAKE_CRASH), test_minify_kind);
  g_test_add_data_func ("/minify/run/hang", GINT_TO_POINTER (FAKE_HANG), test_minify_kind);
  g_test_add_data_func ("/minify/run/accuracy", GINT_TO_POINTER (FAKE_ACCURACY), test_minify_kind);
  g_test_add_func ("/minify/not-failing", test_not_failing);
  g_test_add_func ("/minify/other-failure-rejected", test_other_failure_rejected);
  g_test_add_func ("/minify/strategy/eliminate-dead-code", test_strategy_dce);
  g_test_add_func ("/minify/strategy/remove-unused-inputs", test_strategy_unused_inputs);
  g_test_add_func ("/minify/strategy/consolidate-inputs", test_strategy_consolidate);
  g_test_add_func ("/minify/strategy/remove-suffix", test_strategy_suffix);
  g_test_add_func ("/minify/strategy/delta-debugging", test_strategy_delta);
  g_test_add_func ("/minify/strategy/remove-outputs", test_strategy_remove_outputs);
  g_test_add_func ("/minify/checkpoint-resume", test_checkpoint_resume);
  g_test_add_func ("/minify/repro-roundtrip", test_repro_roundtrip);
  g_test_add_func ("/minify/prepare-needs-shapes", test_prepare_needs_shapes);
  g_test_add_func ("/minify/prepare-lifts-attrs", test_prepare_lifts_attrs);
  g_test_add_func ("/minify/cancel-hang", test_cancel_hang);
  return g_test_run ();
}
