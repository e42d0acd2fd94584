/* test-diff.c: engine/diff: node matching (provenance, names, target and position, structure), the entries of a
   graph diff, Myers' edit scripts against a DP LCS, text hunks, and compile diffs over an imported fixture trace. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "fx/diff.h"
#include "fx/importers.h"
#include "fx/pyparse.h"
#include "fx/store.h"

static char *
fixture_path (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  return g_build_filename (dir ? dir : "tests/fixtures", rel, NULL);
}

static fx_graph *
parse_fixture (const char *rel)
{
  g_autofree char *path = fixture_path (rel);
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_parse_fx_file (path, &g, &diag), ==, FX_OK);
  return g;
}

static fx_node *
unary (fx_graph *g, const char *op, fx_node *a)
{
  fx_arg args[1] = { fx_arg_node (a) };
  return fx_graph_call_function (g, fx_target_op (op), args, 1, NULL, 0);
}

static fx_node *
binary (fx_graph *g, const char *op, fx_node *a, fx_node *b)
{
  fx_arg args[2] = { fx_arg_node (a), fx_arg_node (b) };
  return fx_graph_call_function (g, fx_target_op (op), args, 2, NULL, 0);
}

static size_t
count_kind (const fx_diff *d, fx_diff_kind kind, const char *field)
{
  size_t n = 0;
  for (size_t i = 0; i < d->n_entries; i++)
    if (d->entries[i].kind == kind && !d->entries[i].informational
        && (!field || (d->entries[i].field && strcmp (d->entries[i].field, field) == 0)))
      n++;
  return n;
}

static const fx_diff_entry *
find_entry (const fx_diff *d, fx_diff_kind kind)
{
  for (size_t i = 0; i < d->n_entries; i++)
    if (d->entries[i].kind == kind && !d->entries[i].informational)
      return &d->entries[i];
  return NULL;
}

static void
test_identical (void)
{
  fx_graph *a = parse_fixture ("graphs/mlp_block.aten.0.py");
  fx_graph *b = fx_graph_copy (a);
  fx_diff *d = fx_diff_new ("a", "b");
  g_assert_cmpint (fx_diff_graphs (d, a, b, NULL, NULL, NULL), ==, FX_OK);
  g_assert_cmpuint (d->n_entries, ==, 0);
  g_assert_cmpuint (fx_diff_count (d), ==, 0);
  g_assert_cmpuint (d->n_pairs, ==, a->n_nodes);
  for (size_t i = 0; i < d->n_pairs; i++)
    {
      g_assert_nonnull (d->pairs[i].a);
      g_assert_nonnull (d->pairs[i].b);
      g_assert_cmpstr (d->pairs[i].a->name, ==, d->pairs[i].b->name);
      g_assert_false (d->pairs[i].changed);
    }
  fx_buf out;
  fx_buf_init (&out);
  fx_diff_print_text (d, false, &out);
  g_assert_nonnull (strstr (out.data, "no differences"));
  fx_buf_free (&out);
  fx_diff_free (d);
  fx_graph_free (a);
  fx_graph_free (b);
}

/* x -> sin -> mul(sin, x) -> output, plus a dead neg(x) (what DCE would drop). */
static fx_graph *
small_graph (void)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "x");
  fx_node *s = unary (g, "aten.sin.default", x);
  unary (g, "aten.neg.default", x);
  fx_node *c = unary (g, "aten.cos.default", s);
  fx_node *m = binary (g, "aten.mul.Tensor", c, x);
  fx_graph_output (g, fx_arg_node (m));
  return g;
}

static void
test_op_changed_node_removed (void)
{
  fx_graph *a = small_graph ();
  fx_graph *b = fx_graph_copy (a);
  fx_node *cos_b = fx_graph_find_node (b, "cos");
  cos_b->target = fx_target_op ("aten.tan.default");
  fx_diag diag;
  g_assert_cmpint (fx_graph_erase_node (b, fx_graph_find_node (b, "neg"), &diag), ==, FX_OK);

  fx_diff *d = fx_diff_new ("a", "b");
  g_assert_cmpint (fx_diff_graphs (d, a, b, NULL, NULL, NULL), ==, FX_OK);
  /* exactly two changes: cos's target, and neg gone */
  g_assert_cmpuint (fx_diff_count (d), ==, 2);
  const fx_diff_entry *c = find_entry (d, FX_DIFF_CHANGED);
  g_assert_nonnull (c);
  g_assert_cmpstr (c->name_a, ==, "cos");
  g_assert_cmpstr (c->field, ==, "target");
  g_assert_cmpstr (c->old_text, ==, "torch.ops.aten.cos.default");
  g_assert_cmpstr (c->new_text, ==, "torch.ops.aten.tan.default");
  const fx_diff_entry *r = find_entry (d, FX_DIFF_REMOVED);
  g_assert_nonnull (r);
  g_assert_cmpstr (r->name_a, ==, "neg");
  g_assert_null (find_entry (d, FX_DIFF_ADDED));
  /* merged order keeps the removed node where it stood */
  g_assert_cmpuint (d->n_pairs, ==, a->n_nodes);
  g_assert_null (d->pairs[2].b);
  g_assert_cmpstr (d->pairs[2].a->name, ==, "neg");

  fx_buf out;
  fx_buf_init (&out);
  fx_diff_print_text (d, false, &out);
  g_assert_nonnull (strstr (out.data, "-cos = torch.ops.aten.cos.default(sin)\n+cos = torch.ops.aten.tan.default(sin)\n"));
  g_assert_nonnull (strstr (out.data, "-neg = torch.ops.aten.neg.default(x)\n"));
  g_assert_nonnull (strstr (out.data, "2 differences (graph 2)"));
  fx_buf_reset (&out);
  fx_diff_print_json (d, &out);
  g_assert_nonnull (strstr (out.data, "\"differences\": 2"));
  g_assert_nonnull (strstr (out.data, "\"same\": false"));
  fx_buf_free (&out);
  fx_diff_free (d);
  fx_graph_free (a);
  fx_graph_free (b);
}

/* A node removed with its users rewired to its input: the user's args change too, and says so. */
static void
test_removed_rewired (void)
{
  fx_graph *a = small_graph ();
  fx_graph *b = fx_graph_copy (a);
  fx_node *sin_b = fx_graph_find_node (b, "sin");
  fx_node_replace_all_uses_with (sin_b, fx_graph_find_node (b, "x"));
  fx_diag diag;
  g_assert_cmpint (fx_graph_erase_node (b, sin_b, &diag), ==, FX_OK);
  fx_diff *d = fx_diff_new ("a", "b");
  g_assert_cmpint (fx_diff_graphs (d, a, b, NULL, NULL, NULL), ==, FX_OK);
  g_assert_cmpuint (count_kind (d, FX_DIFF_REMOVED, NULL), ==, 1);
  g_assert_cmpuint (count_kind (d, FX_DIFF_CHANGED, "args"), ==, 1);
  g_assert_cmpuint (fx_diff_count (d), ==, 2);
  const fx_diff_entry *c = find_entry (d, FX_DIFF_CHANGED);
  g_assert_cmpstr (c->name_b, ==, "cos");
  g_assert_cmpstr (c->old_text, ==, "(sin,)");
  g_assert_cmpstr (c->new_text, ==, "(x,)");
  fx_diff_free (d);
  fx_graph_free (a);
  fx_graph_free (b);
}

/* Renamed nodes with the same provenance pair up; a changed target with no common name pairs by structure. */
static void
test_matching_phases (void)
{
  fx_graph *a = fx_graph_new (), *b = fx_graph_new ();
  fx_node *xa = fx_graph_placeholder (a, "x"), *xb = fx_graph_placeholder (b, "x");
  fx_node *ra = unary (a, "aten.relu.default", xa);
  fx_node *rb = fx_graph_create_node (b, FX_OP_CALL_FUNCTION, fx_target_op ("aten.relu.default"),
                                      (fx_arg[]) { fx_arg_node (xb) }, 1, NULL, 0, "renamed_relu");
  const char *trace = "  File \"m.py\", line 3, in f\n    return x.relu().exp()\n";
  ra->meta.stack_trace = trace;
  rb->meta.stack_trace = trace;
  fx_node *ea = unary (a, "aten.exp.default", ra);
  fx_node *eb = fx_graph_create_node (b, FX_OP_CALL_FUNCTION, fx_target_op ("aten.sigmoid.default"),
                                      (fx_arg[]) { fx_arg_node (rb) }, 1, NULL, 0, "other");
  fx_graph_output (a, fx_arg_node (ea));
  fx_graph_output (b, fx_arg_node (eb));

  fx_diff_graph_opts opts;
  fx_diff_graph_opts_init (&opts);
  opts.ignore_names = true;
  fx_diff *d = fx_diff_new ("a", "b");
  g_assert_cmpint (fx_diff_graphs (d, a, b, NULL, &opts, NULL), ==, FX_OK);
  g_assert_cmpuint (d->stats.by_placeholder, ==, 2); /* x and the output */
  g_assert_cmpuint (d->stats.by_provenance, ==, 1);
  g_assert_cmpuint (d->stats.by_structure, ==, 1);
  g_assert_cmpuint (fx_diff_count (d), ==, 1);
  const fx_diff_entry *c = find_entry (d, FX_DIFF_CHANGED);
  g_assert_cmpstr (c->name_a, ==, "exp");
  g_assert_cmpstr (c->name_b, ==, "other");
  g_assert_cmpstr (c->field, ==, "target");
  fx_diff_free (d);

  /* with names: the renames are reported */
  d = fx_diff_new ("a", "b");
  g_assert_cmpint (fx_diff_graphs (d, a, b, NULL, NULL, NULL), ==, FX_OK);
  g_assert_cmpuint (count_kind (d, FX_DIFF_CHANGED, "name"), ==, 2);
  fx_diff_free (d);
  fx_graph_free (a);
  fx_graph_free (b);
}

/* Meta: shape, dtype, stride and device changes each get their own field. */
static void
test_meta (void)
{
  fx_graph *a = parse_fixture ("graphs/pointwise_chain.aten.0.py");
  fx_graph *b = fx_graph_copy (a);
  fx_node *sin = fx_graph_find_node (b, "sin");
  g_assert_nonnull (sin);
  g_assert_cmpint (sin->meta.val.kind, ==, FX_VAL_TENSOR);
  fx_dim *sizes = fx_arena_alloc (b->arena, sizeof *sizes);
  sizes[0].value = 1024;
  sin->meta.val.tensor.sizes = sizes;
  sin->meta.val.tensor.dtype = FX_DTYPE_F16;
  sin->meta.val.tensor.device.index = 1;
  fx_diff *d = fx_diff_new ("a", "b");
  g_assert_cmpint (fx_diff_graphs (d, a, b, NULL, NULL, NULL), ==, FX_OK);
  g_assert_cmpuint (fx_diff_count (d), ==, 3);
  g_assert_cmpuint (count_kind (d, FX_DIFF_CHANGED, "meta.shape"), ==, 1);
  g_assert_cmpuint (count_kind (d, FX_DIFF_CHANGED, "meta.dtype"), ==, 1);
  g_assert_cmpuint (count_kind (d, FX_DIFF_CHANGED, "meta.device"), ==, 1);
  fx_diff_free (d);
  d = fx_diff_new ("a", "b");
  fx_diff_graph_opts opts;
  fx_diff_graph_opts_init (&opts);
  opts.ignore_meta = true;
  g_assert_cmpint (fx_diff_graphs (d, a, b, NULL, &opts, NULL), ==, FX_OK);
  g_assert_cmpuint (fx_diff_count (d), ==, 0);
  fx_diff_free (d);
  fx_graph_free (a);
  fx_graph_free (b);
}

/* 100,000 nodes in a chain of alternating ops against a copy with a few edits: every node pairs, the edits and only
   they are reported (an O(n^2) matcher would not finish within the test's timeout). */
static void
test_large (void)
{
  enum { N = 100000 };
  fx_graph *a = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (a, "x");
  fx_node *prev = x;
  static const char *const ops[] = { "aten.sin.default", "aten.cos.default", "aten.exp.default", "aten.relu.default" };
  for (int i = 0; i < N; i++)
    prev = (i % 5 == 4) ? binary (a, "aten.add.Tensor", prev, x) : unary (a, ops[i % 4], prev);
  fx_graph_output (a, fx_arg_node (prev));
  fx_graph *b = fx_graph_copy (a);
  int changed = 0;
  fx_graph_foreach_node (b, n)
    if (n->op == FX_OP_CALL_FUNCTION && n->id % 9973 == 0)
      {
        n->target = fx_target_op ("aten.tanh.default");
        changed++;
      }
  fx_diff *d = fx_diff_new ("a", "b");
  g_assert_cmpint (fx_diff_graphs (d, a, b, NULL, NULL, NULL), ==, FX_OK);
  g_assert_cmpint (changed, >, 5);
  g_assert_cmpuint (fx_diff_count (d), ==, (size_t) changed);
  g_assert_cmpuint (count_kind (d, FX_DIFF_CHANGED, "target"), ==, (size_t) changed);
  g_assert_cmpuint (d->n_pairs, ==, a->n_nodes);
  fx_diff_free (d);
  fx_graph_free (a);
  fx_graph_free (b);
}

static size_t
lcs_dp (const uint64_t *a, size_t n, const uint64_t *b, size_t m)
{
  size_t *t = g_new0 (size_t, (n + 1) * (m + 1));
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++)
      t[i * (m + 1) + j] = a[i - 1] == b[j - 1] ? t[(i - 1) * (m + 1) + j - 1] + 1
                           : MAX (t[(i - 1) * (m + 1) + j], t[i * (m + 1) + j - 1]);
  size_t r = t[n * (m + 1) + m];
  g_free (t);
  return r;
}

/* The edit script is a valid transformation of a into b and keeps a longest common subsequence. */
static void
test_myers (void)
{
  GRand *rand = g_rand_new_with_seed (42);
  for (int round = 0; round < 300; round++)
    {
      size_t n = (size_t) g_rand_int_range (rand, 0, 40), m = (size_t) g_rand_int_range (rand, 0, 40);
      uint64_t a[40], b[40];
      int alphabet = g_rand_int_range (rand, 2, 6);
      for (size_t i = 0; i < n; i++)
        a[i] = (uint64_t) g_rand_int_range (rand, 0, alphabet);
      for (size_t i = 0; i < m; i++)
        b[i] = (uint64_t) g_rand_int_range (rand, 0, alphabet);
      char ops[81];
      long k = fx_diff_myers (a, n, b, m, 0, ops);
      g_assert_cmpint (k, >=, 0);
      size_t x = 0, y = 0, eq = 0;
      for (long i = 0; i < k; i++)
        {
          if (ops[i] == '=')
            {
              g_assert_cmpuint (a[x], ==, b[y]);
              x++, y++, eq++;
            }
          else if (ops[i] == '-')
            x++;
          else
            {
              g_assert_cmpint (ops[i], ==, '+');
              y++;
            }
        }
      g_assert_cmpuint (x, ==, n);
      g_assert_cmpuint (y, ==, m);
      g_assert_cmpuint (eq, ==, lcs_dp (a, n, b, m));
    }
  /* a bound on the edits refuses scripts longer than it */
  uint64_t a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 };
  char ops[9];
  g_assert_cmpint (fx_diff_myers (a, 4, b, 4, 3, ops), ==, -1);
  g_rand_free (rand);
}

static void
test_text_hunks (void)
{
  fx_diff *d = fx_diff_new ("a", "b");
  const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n";
  const char *b = "1\n2\n3\n4\n5\n6\nseven\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n21\n";
  g_assert_cmpuint (fx_diff_text (d, FX_DIFF_SECTION_CODE, "code", a, b, 3), ==, 2);
  g_assert_cmpstr (d->entries[0].new_text, ==, "@@ -4,7 +4,7 @@\n 4\n 5\n 6\n-7\n+seven\n 8\n 9\n 10\n");
  g_assert_cmpstr (d->entries[1].new_text, ==, "@@ -18,3 +18,4 @@\n 18\n 19\n 20\n+21\n");
  g_assert_cmpuint (fx_diff_count (d), ==, 2);
  g_assert_cmpuint (fx_diff_text (d, FX_DIFF_SECTION_CODE, "code", a, a, 3), ==, 0);
  /* text from an input cannot drive the terminal: control characters print as '?' */
  fx_diff_add (d, FX_DIFF_SECTION_GUARDS, FX_DIFF_ADDED, NULL, "guard", NULL, "G['x']", NULL, NULL,
               "x == 1\033[2J\r");
  fx_buf out;
  fx_buf_init (&out);
  fx_diff_print_text (d, false, &out);
  g_assert_null (strchr (out.data, '\033'));
  g_assert_null (strchr (out.data, '\r'));
  g_assert_nonnull (strstr (out.data, "+ guard G['x']: x == 1?[2J?\n"));
  fx_buf_reset (&out);
  fx_diff_print_text (d, true, &out);
  g_assert_nonnull (strstr (out.data, "x == 1?[2J?"));
  /* a long value that changed in one place: that place with context, the rest elided */
  const char *ga = "check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), "
                   "torch.float32, device=None, requires_grad=False, size=[10], stride=[1])";
  const char *gb = "check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), "
                   "torch.float32, device=None, requires_grad=False, size=[None], stride=[1])";
  fx_diff_add (d, FX_DIFF_SECTION_GUARDS, FX_DIFF_CHANGED, NULL, "guard", "TENSOR_MATCH L['x']",
               "TENSOR_MATCH L['x']", "code", ga, gb);
  fx_buf_reset (&out);
  fx_diff_print_text (d, false, &out);
  g_assert_nonnull (strstr (out.data, "~ guard TENSOR_MATCH L['x']: code: …uires_grad=False, size=[10], stride=[1]) "
                                      "-> …uires_grad=False, size=[None], stride=[1])\n"));
  fx_buf_free (&out);
  fx_diff_free (d);
}

/* The recompile of the fixture trace: 0/1 exists because L['x'] changed size; a workspace diffed with itself is
   the same. */
static void
test_compiles (void)
{
  g_autofree char *trace = fixture_path ("traces/mlp_module-cuda/torch_trace/dedicated_log_torch_trace_f93v9gvu.log");
  g_autofree char *dir = g_dir_make_tmp ("fx-diff-XXXXXX", NULL);
  g_autofree char *ws = g_build_filename (dir, "w.fxwb", NULL);
  fx_store *s = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_store_open (ws, true, &s, &diag), ==, FX_OK);
  fx_import_stats stats;
  memset (&stats, 0, sizeof stats);
  g_assert_cmpint (fx_import_torch_trace (s, trace, NULL, NULL, &stats, &diag), ==, FX_OK);
  int64_t c0 = 0, c1 = 0;
  g_assert_cmpint (fx_store_find_compile (s, "0/0", &c0, &diag), ==, FX_OK);
  g_assert_cmpint (fx_store_find_compile (s, "0/1", &c1, &diag), ==, FX_OK);

  fx_diff *d = fx_diff_new ("0/0", "0/1");
  g_assert_cmpint (fx_diff_compiles (d, s, c0, s, c1, NULL, &diag), ==, FX_OK);
  const fx_diff_entry *f = find_entry (d, FX_DIFF_FAILURE);
  g_assert_nonnull (f);
  g_assert_cmpstr (f->name_a, ==, "TENSOR_MATCH L['x']");
  g_assert_nonnull (strstr (f->new_text, "tensor 'x' size mismatch at index 0. expected 32, actual 64"));
  g_assert_nonnull (strstr (f->old_text, "size=[32, 256]"));
  /* the dynamic dimension shows in the graph: l_x_ is [s77, 256] in 0/1 */
  bool shape_change = false, code_hunk = false;
  for (size_t i = 0; i < d->n_entries; i++)
    {
      const fx_diff_entry *e = &d->entries[i];
      if (e->section == FX_DIFF_SECTION_GRAPH && e->kind == FX_DIFF_CHANGED && e->field
          && strcmp (e->field, "meta.shape") == 0 && strcmp (e->name_a, "l_x_") == 0)
        shape_change = strcmp (e->old_text, "[32, 256]") == 0 && strstr (e->new_text, ", 256]") != NULL;
      if (e->section == FX_DIFF_SECTION_CODE && e->kind == FX_DIFF_HUNK)
        code_hunk = true;
    }
  g_assert_true (shape_change);
  g_assert_true (code_hunk);
  g_assert_nonnull (d->graph_a);
  g_assert_cmpuint (d->n_pairs, >=, d->graph_a->n_nodes);
  fx_diff_free (d);

  d = fx_diff_new ("w", "w");
  g_assert_cmpint (fx_diff_workspaces (d, s, s, NULL, &diag), ==, FX_OK);
  g_assert_cmpuint (d->n_entries, ==, 0);
  fx_diff_free (d);

  /* narrowed to guards: no graph entries */
  fx_diff_compile_opts opts;
  fx_diff_compile_opts_init (&opts);
  opts.what = FX_DIFF_WHAT_GUARDS;
  d = fx_diff_new ("0/0", "0/1");
  g_assert_cmpint (fx_diff_compiles (d, s, c0, s, c1, &opts, &diag), ==, FX_OK);
  g_assert_cmpuint (d->n_entries, >, 0);
  for (size_t i = 0; i < d->n_entries; i++)
    g_assert_cmpint (d->entries[i].section, ==, FX_DIFF_SECTION_GUARDS);
  fx_diff_free (d);

  fx_store_close (s);
  g_autofree char *wal = g_strconcat (ws, "-wal", NULL), *shm = g_strconcat (ws, "-shm", NULL);
  g_unlink (wal);
  g_unlink (shm);
  g_unlink (ws);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/Diff/graph/identical", test_identical);
  g_test_add_func ("/Diff/graph/op-changed-node-removed", test_op_changed_node_removed);
  g_test_add_func ("/Diff/graph/removed-rewired", test_removed_rewired);
  g_test_add_func ("/Diff/graph/matching-phases", test_matching_phases);
  g_test_add_func ("/Diff/graph/meta", test_meta);
  g_test_add_func ("/Diff/graph/large", test_large);
  g_test_add_func ("/Diff/myers", test_myers);
  g_test_add_func ("/Diff/text-hunks", test_text_hunks);
  g_test_add_func ("/Diff/compiles", test_compiles);
  return g_test_run ();
}
