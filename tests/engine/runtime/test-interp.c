/* test-interp.c: the interpreter against torch eager (the installed torch 1.13, one subprocess for all graphs) on
   the fixture graphs, the Dynamo graphs of the fixture traces (lowered to ATen) and the repro.py graphs with their
   load_args; inputs from inputs.json, load_args and saved tensors; located errors. */
#include "fx-test-lines.h"
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fx/accuracy.h"
#include "fx/passes.h"
#include "fx/pyparse.h"
#include "fx/runtime.h"

/* Fixture graphs are 8192x4096-sized; the test runs them with every size >= 16 divided by this. */
#define FIXTURE_DIVISOR 64

static char *tmp_dir;
static bool have_torch;

/* One graph run by both the interpreter and torch. */
typedef struct
{
  char *name;
  char *code_path;      /* the text torch execs (the module class is taken from it) */
  fx_graph *graph;      /* as parsed (scaled for the fixtures) */
  fx_graph *run_graph;  /* what the interpreter runs: graph, or its ATen lowering */
  fx_value *inputs;
  size_t n_inputs;
  fx_arena *arena;
  char *out_prefix;
  bool torch_level;
} graph_case;

static GPtrArray *cases;

static const char *
fixtures (void)
{
  const char *d = g_getenv ("FX_FIXTURES");
  return d ? d : "tests/fixtures";
}

static const char *
source_root (void)
{
  const char *d = g_getenv ("FX_SOURCE_ROOT");
  return d ? d : ".";
}

static void
free_case (gpointer p)
{
  graph_case *c = p;
  for (size_t i = 0; i < c->n_inputs; i++)
    fx_value_clear (&c->inputs[i]);
  if (c->run_graph != c->graph)
    fx_graph_free (c->run_graph);
  fx_graph_free (c->graph);
  fx_arena_free (c->arena);
  g_free (c->name);
  g_free (c->code_path);
  g_free (c->out_prefix);
  g_free (c);
}

/* ---------------------------------------------------------------- building the cases */

static graph_case *
new_case (const char *name, fx_graph *graph, const char *code_path)
{
  graph_case *c = g_new0 (graph_case, 1);
  c->name = g_strdup (name);
  c->graph = graph;
  c->run_graph = graph;
  c->code_path = g_strdup (code_path);
  c->arena = fx_arena_new ();
  c->out_prefix = g_strdup_printf ("%s/out%u", tmp_dir, cases->len);
  g_ptr_array_add (cases, c);
  return c;
}

/* Fixture graph NAME (tests/fixtures/graphs/NAME.py): specs from NAME.inputs.json become the graph's input specs,
   every size >= 16 is divided by FIXTURE_DIVISOR (literal sizes in the graph's arguments with it), and torch runs
   the scaled graph's print_readable text, so both sides run the same shapes. */
static void
add_fixture_case (const char *name)
{
  char *py = g_strdup_printf ("%s/graphs/%s.py", fixtures (), name);
  char *js = g_strdup_printf ("%s/graphs/%s.inputs.json", fixtures (), name);
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = fx_parse_fx_file (py, &g, &diag);
  if (st != FX_OK)
    g_error ("%s: %s", py, diag.message);
  g_assert_cmpint (fx_graph_load_input_specs (g, js, &diag), ==, FX_OK);
  g_assert_cmpuint (g->n_inputs, ==, fx_graph_count_op (g, FX_OP_PLACEHOLDER));
  fx_graph_scale_inputs (g, FIXTURE_DIVISOR, 16);
  /* literal sizes scaled with the inputs: shape propagation goes through (and the printed annotations follow) */
  size_t changed = 0;
  if (fx_pass_shape_prop (g, &changed, &diag) != FX_OK)
    g_error ("%s: scaled graph does not propagate: %s", name, diag.message);
  g_assert_cmpuint (changed, >, 0);
  fx_graph_foreach_node (g, n)
  {
    if (n->target.name && strcmp (n->target.name, "aten.native_layer_norm.default") == 0)
      g_assert_cmpint (n->args[1].u.seq.items[0].u.i, ==, 4096 / FIXTURE_DIVISOR);
  }
  fx_buf code;
  fx_buf_init (&code);
  fx_readable_opts ro = { .include_stride = true, .include_device = false };
  fx_graph_print_readable (g, &ro, &code);
  char *scaled = g_strdup_printf ("%s/%s.scaled.py", tmp_dir, name);
  g_assert_cmpint (fx_file_write (scaled, code.data, code.len, &diag), ==, FX_OK);
  fx_buf_free (&code);
  char *cname = g_strdup_printf ("fixture/%s", name);
  graph_case *c = new_case (cname, g, scaled);
  st = fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 42, NULL, c->arena, &c->inputs, &c->n_inputs, &diag);
  if (st != FX_OK)
    g_error ("%s: inputs: %s", name, diag.message);
  g_free (cname);
  g_free (scaled);
  g_free (py);
  g_free (js);
}

/* The graph payloads of one kind of record ("dynamo_output_graph") in a TORCH_TRACE log: the tab-indented lines
   after each record line. */
static GPtrArray *
trace_payloads (const char *log_path, const char *kind)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  char *data;
  size_t len;
  fx_diag diag;
  if (fx_file_read (log_path, &data, &len, &diag) != FX_OK)
    return out;
  char key[128];
  g_snprintf (key, sizeof key, "{\"%s\"", kind);
  char **lines = fx_test_split_lines (data);
  free (data);
  for (size_t i = 0; lines[i]; i++)
    {
      if (strstr (lines[i], key) == NULL || lines[i][0] == '\t')
        continue;
      GString *s = g_string_new (NULL);
      for (size_t k = i + 1; lines[k] && lines[k][0] == '\t'; k++)
        {
          g_string_append (s, lines[k] + 1);
          g_string_append_c (s, '\n');
        }
      g_ptr_array_add (out, g_string_free (s, FALSE));
    }
  g_strfreev (lines);
  return out;
}

/* Symbolic sizes (s77) get this value, Sym placeholders too. */
#define SYM_VALUE 6

static void
concretize_syms (fx_graph *g)
{
  fx_graph_foreach_node (g, n)
  {
    if (n->op != FX_OP_PLACEHOLDER)
      continue;
    fx_val *v = &n->meta.val;
    if (v->kind == FX_VAL_SYMINT && v->sym != NULL)
      v->i = SYM_VALUE;
    if (v->kind != FX_VAL_TENSOR)
      continue;
    bool sym = false;
    for (int d = 0; d < v->tensor.ndim; d++)
      if (v->tensor.sizes[d].sym != NULL)
        {
          v->tensor.sizes[d].value = SYM_VALUE;
          sym = true;
        }
    if (sym)
      v->tensor.strides = NULL;
  }
}

static char *
find_one (const char *dir, const char *suffix)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  char *found = NULL;
  const char *e;
  while (d && (e = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (e, suffix) && found == NULL)
      found = g_build_filename (dir, e, NULL);
  if (d)
    g_dir_close (d);
  return found;
}

/* N(0, 1) weights make the traces' MLP logits so large that softmax is one-hot and agrees trivially; scaled
   inputs keep the comparison meaningful. */
static void
damp_inputs (graph_case *c)
{
  for (size_t i = 0; i < c->n_inputs; i++)
    if (c->inputs[i].kind == FX_VALUE_TENSOR && fx_dtype_is_floating (c->inputs[i].u.t->dtype))
      {
        fx_tensor *t = c->inputs[i].u.t;
        int64_t n = fx_tensor_numel (t);
        for (int64_t k = 0; k < n; k++)
          fx_tensor_set_f64 (t, k, fx_tensor_get_f64 (t, k) * 0.05);
      }
}

/* Every Dynamo graph of a trace's TORCH_TRACE log: lowered to ATen for the interpreter, the torch-level code for
   torch. */
static void
add_dynamo_cases (const char *trace)
{
  char *dir = g_strdup_printf ("%s/traces/%s/torch_trace", fixtures (), trace);
  char *log = find_one (dir, ".log");
  g_assert_nonnull (log);
  GPtrArray *graphs = trace_payloads (log, "dynamo_output_graph");
  g_assert_cmpuint (graphs->len, >, 0);
  for (guint k = 0; k < graphs->len; k++)
    {
      const char *text = graphs->pdata[k];
      char *path = g_strdup_printf ("%s/%s.dynamo.%u.py", tmp_dir, trace, k);
      fx_diag diag;
      fx_diag_clear (&diag);
      g_assert_cmpint (fx_file_write (path, text, strlen (text), &diag), ==, FX_OK);
      fx_graph *g = NULL;
      if (fx_parse_fx_code (text, strlen (text), path, &g, &diag) != FX_OK)
        g_error ("%s graph %u: %s", trace, k, diag.message);
      g_assert_true (fx_graph_is_torch_level (g));
      concretize_syms (g);
      char *cname = g_strdup_printf ("dynamo/%s/%u", trace, k);
      graph_case *c = new_case (cname, g, path);
      c->torch_level = true;
      if (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 7 + k, NULL, c->arena, &c->inputs, &c->n_inputs, &diag) != FX_OK)
        g_error ("%s: inputs: %s", cname, diag.message);
      damp_inputs (c);
      if (fx_lower_to_aten (g, &c->run_graph, &diag) != FX_OK)
        {
          g_test_message ("%s: lowering failed: %s", cname, diag.message);
          c->run_graph = NULL;
        }
      g_free (cname);
      g_free (path);
    }
  g_ptr_array_unref (graphs);
  g_free (log);
  g_free (dir);
}

/* A hand-written Dynamo-style graph (tests/engine/runtime/graphs/NAME.py) covering the torch-level forms the
   lowering knows: torch.*, F.*, methods, operators with numbers on either side, indexing. */
static void
add_torch_level_case (const char *name)
{
  char *path = g_strdup_printf ("%s/tests/engine/runtime/graphs/%s.py", source_root (), name);
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_file (path, &g, &diag) != FX_OK)
    g_error ("%s: %s", path, diag.message);
  g_assert_true (fx_graph_is_torch_level (g));
  char *cname = g_strdup_printf ("torch-level/%s", name);
  graph_case *c = new_case (cname, g, path);
  c->torch_level = true;
  if (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 3, NULL, c->arena, &c->inputs, &c->n_inputs, &diag) != FX_OK)
    g_error ("%s: inputs: %s", cname, diag.message);
  if (fx_lower_to_aten (g, &c->run_graph, &diag) != FX_OK)
    g_error ("%s: lowering: %s", cname, diag.message);
  g_free (cname);
  g_free (path);
}

/* The fx_graph_runnable.py (repro.py) files of a trace's TORCH_COMPILE_DEBUG folder (inputs from load_args), and
   the fx_graph_readable.py / fx_graph_transformed.py graphs next to them. */
static void
add_repro_cases (const char *trace)
{
  char *base = g_strdup_printf ("%s/traces/%s/torch_compile_debug", fixtures (), trace);
  GDir *runs = g_dir_open (base, 0, NULL);
  g_assert_nonnull (runs);
  const char *run;
  while ((run = g_dir_read_name (runs)) != NULL)
    {
      char *ind = g_strdup_printf ("%s/%s/torchinductor", base, run);
      GDir *models = g_dir_open (ind, 0, NULL);
      const char *m;
      GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
      while (models && (m = g_dir_read_name (models)) != NULL)
        g_ptr_array_add (names, g_strdup (m));
      if (models)
        g_dir_close (models);
      g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
      for (guint i = 0; i < names->len; i++)
        {
          m = names->pdata[i];
          char *path = g_strdup_printf ("%s/%s/fx_graph_runnable.py", ind, m);
          if (!g_file_test (path, G_FILE_TEST_EXISTS))
            {
              g_free (path);
              continue;
            }
          /* the same compile's print_readable graphs (before and after Inductor's passes): symbolic sizes get
             concrete values */
          static const char *const readable[] = { "fx_graph_readable", "fx_graph_transformed" };
          for (size_t r = 0; r < G_N_ELEMENTS (readable); r++)
            {
              char *rp = g_strdup_printf ("%s/%s/%s.py", ind, m, readable[r]);
              fx_graph *rg = NULL;
              fx_diag rd;
              fx_diag_clear (&rd);
              if (g_file_test (rp, G_FILE_TEST_EXISTS))
                {
                  if (fx_parse_fx_file (rp, &rg, &rd) != FX_OK)
                    g_error ("%s: %s", rp, rd.message);
                  concretize_syms (rg);
                  char *rname = g_strdup_printf ("aot/%s/%s/%s", trace, m, readable[r]);
                  graph_case *rc = new_case (rname, rg, rp);
                  if (fx_inputs_make (rg, FX_INPUTS_SPEC, NULL, 13, NULL, rc->arena, &rc->inputs, &rc->n_inputs, &rd)
                      != FX_OK)
                    g_error ("%s: inputs: %s", rname, rd.message);
                  damp_inputs (rc);
                  g_free (rname);
                }
              g_free (rp);
            }
          fx_graph *g = NULL;
          fx_diag diag;
          fx_diag_clear (&diag);
          if (fx_parse_fx_file (path, &g, &diag) != FX_OK)
            g_error ("%s: %s", path, diag.message);
          char *cname = g_strdup_printf ("repro/%s/%s", trace, m);
          graph_case *c = new_case (cname, g, path);
          if (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 11, NULL, c->arena, &c->inputs, &c->n_inputs, &diag) != FX_OK)
            g_error ("%s: inputs: %s", cname, diag.message);
          damp_inputs (c);
          g_free (cname);
          g_free (path);
        }
      g_ptr_array_unref (names);
      g_free (ind);
    }
  g_dir_close (runs);
  g_free (base);
}

/* ---------------------------------------------------------------- torch */

static void
json_value (fx_buf *j, const fx_value *v, const char *path)
{
  if (v->kind == FX_VALUE_TENSOR)
    fx_buf_printf (j, "{\"t\": \"%s\"}", path);
  else if (v->kind == FX_VALUE_INT)
    fx_buf_printf (j, "{\"i\": %lld}", (long long) v->u.i);
  else if (v->kind == FX_VALUE_FLOAT)
    fx_buf_printf (j, "{\"f\": %.17g}", v->u.f);
  else
    fx_buf_puts (j, "{}");
}

/* Saves every case's inputs and runs them all through torch in one subprocess. */
static bool
run_torch (void)
{
  fx_buf j;
  fx_buf_init (&j);
  fx_buf_puts (&j, "[\n");
  for (guint k = 0; k < cases->len; k++)
    {
      graph_case *c = cases->pdata[k];
      fx_buf_printf (&j, "%s{\"code\": \"%s\", \"out\": \"%s\", \"fp64\": true, \"inputs\": [", k ? "," : "",
                     c->code_path, c->out_prefix);
      for (size_t i = 0; i < c->n_inputs; i++)
        {
          char *p = g_strdup_printf ("%s.in%zu.fxt", c->out_prefix, i);
          if (c->inputs[i].kind == FX_VALUE_TENSOR)
            {
              fx_diag diag;
              g_assert_cmpint (fx_tensor_save (c->inputs[i].u.t, p, &diag), ==, FX_OK);
            }
          fx_buf_puts (&j, i ? ", " : "");
          json_value (&j, &c->inputs[i], p);
          g_free (p);
        }
      fx_buf_puts (&j, "]}\n");
    }
  fx_buf_puts (&j, "]\n");
  char *jobs = g_strdup_printf ("%s/jobs.json", tmp_dir);
  g_assert_cmpint (fx_file_write (jobs, j.data, j.len, NULL), ==, FX_OK);
  fx_buf_free (&j);
  char *script = g_strdup_printf ("%s/tests/engine/runtime/torch_graph.py", source_root ());
  char *argv[] = { (char *) "/usr/bin/python3", script, jobs, NULL };
  int status = 0;
  GError *err = NULL;
  bool ok = g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, &err);
  if (!ok)
    {
      g_printerr ("torch_graph.py: %s\n", err->message);
      g_error_free (err);
    }
  else if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
    ok = false;
  else if (!g_spawn_check_wait_status (status, NULL))
    g_error ("torch_graph.py failed (status %d)", status);
  g_free (script);
  g_free (jobs);
  return ok;
}

/* Loads torch's outputs (PREFIX.N, and PREFIX.fp64.N) for n outputs. */
static void
load_torch_outputs (const graph_case *c, size_t n, fx_value *ref, fx_value *ref64)
{
  for (size_t i = 0; i < n; i++)
    {
      char *p = g_strdup_printf ("%s.%zu", c->out_prefix, i);
      char *p64 = g_strdup_printf ("%s.fp64.%zu", c->out_prefix, i);
      fx_tensor *t = NULL;
      fx_diag diag;
      ref[i] = fx_value_none ();
      ref64[i] = fx_value_none ();
      if (fx_tensor_load (p, NULL, &t, &diag) == FX_OK)
        ref[i] = fx_value_tensor (t);
      if (fx_tensor_load (p64, NULL, &t, &diag) == FX_OK)
        ref64[i] = fx_value_tensor (t);
      g_free (p);
      g_free (p64);
    }
}

/* ---------------------------------------------------------------- the graph test */

static void
test_graph_case (gconstpointer data)
{
  const graph_case *c = data;
  if (!have_torch)
    {
      g_test_skip ("/usr/bin/python3 with torch is not available");
      return;
    }
  char *errp = g_strdup_printf ("%s.err", c->out_prefix);
  char *terr = NULL;
  if (g_file_get_contents (errp, &terr, NULL, NULL))
    g_error ("%s: torch failed on the graph: %s", c->name, terr);
  g_free (errp);
  g_assert_nonnull (c->run_graph);

  if (c->torch_level)
    {
      /* the lowering keeps provenance: every ATen call names its torch-level node and keeps its stack trace */
      size_t calls = 0;
      fx_graph_foreach_node (c->run_graph, n)
      {
        if (n->op != FX_OP_CALL_FUNCTION)
          continue;
        calls++;
        g_assert_false (n->target.kind == FX_TARGET_FUNCTION);
        g_assert_cmpuint (n->meta.n_from_node, ==, 1);
        g_assert_cmpstr (n->meta.from_node[0].pass_name, ==, "lower_to_aten");
        fx_node *src = fx_graph_find_node (c->graph, n->meta.from_node[0].name);
        g_assert_nonnull (src);
        g_assert_cmpstr (n->meta.stack_trace, ==, src->meta.stack_trace);
      }
      g_assert_cmpuint (calls, >, 0);
    }
  fx_arena *arena = fx_arena_new ();
  fx_value *outs = NULL;
  size_t n_outs = 0;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = fx_interp_run (c->run_graph, c->inputs, c->n_inputs, NULL, arena, &outs, &n_outs, &diag);
  if (st != FX_OK)
    g_error ("%s: interpreter: %s", c->name, diag.message);
  g_assert_cmpuint (n_outs, >, 0);

  fx_value *ref = g_new0 (fx_value, n_outs), *ref64 = g_new0 (fx_value, n_outs);
  load_torch_outputs (c, n_outs, ref, ref64);
  for (size_t i = 0; i < n_outs; i++)
    {
      g_assert_cmpint (outs[i].kind, ==, FX_VALUE_TENSOR);
      if (ref[i].kind != FX_VALUE_TENSOR)
        g_error ("%s: torch gave no output %zu", c->name, i);
    }
  fx_same_opts so;
  fx_same_opts_init (&so);
  fx_same_report rep;
  bool same = fx_same_values (ref, outs, ref64, n_outs, &so, &rep);
  g_test_message ("%s: %zu outputs, max abs err %.3g (rmse used: %d)", c->name, n_outs, rep.max_abs_err,
                  rep.used_rmse);
  if (!same)
    g_error ("%s: interpreter differs from torch: %s (worst element %lld: torch %.9g, interpreter %.9g)", c->name,
             rep.message, (long long) rep.worst_index, rep.worst_ref, rep.worst_res);
  for (size_t i = 0; i < n_outs; i++)
    {
      fx_value_clear (&outs[i]);
      fx_value_clear (&ref[i]);
      fx_value_clear (&ref64[i]);
    }
  g_free (ref);
  g_free (ref64);
  fx_arena_free (arena);
}

/* ---------------------------------------------------------------- main */

static const char *fixture_graphs[] = {
  "layernorm_gelu.aten.0", "layernorm_gelu.core_aten.0", "mlp_block.aten.0", "mlp_block.core_aten.0",
  "pointwise_chain.aten.0", "pointwise_chain.core_aten.0", "rmsnorm_residual.aten.0", "rmsnorm_residual.core_aten.0",
  "softmax_rows.aten.0", "softmax_rows.core_aten.0",
};

static const char *traces[] = { "toy_graph_break-cuda", "mlp_module-cuda" };

static void
remove_tree (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *e;
  while (d && (e = g_dir_read_name (d)) != NULL)
    {
      char *p = g_build_filename (dir, e, NULL);
      g_remove (p);
      g_free (p);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

void register_unit_tests (void);

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("fx-test-interp-XXXXXX", NULL);
  g_assert_nonnull (tmp_dir);
  cases = g_ptr_array_new_with_free_func (free_case);
  for (size_t i = 0; i < G_N_ELEMENTS (fixture_graphs); i++)
    add_fixture_case (fixture_graphs[i]);
  for (size_t i = 0; i < G_N_ELEMENTS (traces); i++)
    add_dynamo_cases (traces[i]);
  for (size_t i = 0; i < G_N_ELEMENTS (traces); i++)
    add_repro_cases (traces[i]);
  add_torch_level_case ("torch_level_ops");
  add_torch_level_case ("torch_level_nn");
  have_torch = access ("/usr/bin/python3", X_OK) == 0 && run_torch ();
  for (guint k = 0; k < cases->len; k++)
    {
      graph_case *c = cases->pdata[k];
      char *path = g_strdup_printf ("/interp/%s", c->name);
      g_test_add_data_func (path, c, test_graph_case);
      g_free (path);
    }
  register_unit_tests ();
  int rc = g_test_run ();
  g_ptr_array_unref (cases);
  if (rc == 0)
    remove_tree (tmp_dir);
  g_free (tmp_dir);
  return rc;
}

void
register_unit_tests (void)
{
}
