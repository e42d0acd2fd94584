/* test-training.c: training traces (torch 2.11, tests/fixtures/training): the importer tells a compile's forward
   and backward Inductor compiles apart, the AOT graphs print back as PyTorch logged them (expanded_def), and the
   values saved for backward are read off the forward and backward graphs. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "fx/aot-graphs.h"
#include "fx/importers.h"
#include "fx/pyparse.h"
#include "fx/store.h"

static const char *const cuda_traces[] = { "mlp_block-cuda", "layernorm_gelu-cuda", "attention_block-cuda",
                                           "cross_entropy-cuda", "transformer_block-cuda" };

typedef struct
{
  char *dir, *path;
  fx_store *store;
  int64_t row;
  fx_import_stats stats;
  fx_arena *arena;
} workspace;

static void
ws_open (workspace *w, const char *trace)
{
  memset (w, 0, sizeof *w);
  g_autoptr (GError) error = NULL;
  w->dir = g_dir_make_tmp ("fxtrain-XXXXXX", &error);
  g_assert_no_error (error);
  w->path = g_build_filename (w->dir, "w.fxwb", NULL);
  g_assert_cmpint (fx_store_open (w->path, true, &w->store, NULL), ==, FX_OK);
  g_autofree char *file = g_build_filename (g_getenv ("FX_FIXTURES"), "training", "traces", trace, "torch_trace.log",
                                            NULL);
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_import_path (w->store, file, NULL, NULL, &w->stats, &diag) != FX_OK)
    g_error ("import %s: %s", file, diag.message);
  g_assert_cmpint (fx_store_find_compile (w->store, "0/0", &w->row, NULL), ==, FX_OK);
  w->arena = fx_arena_new ();
}

static void
ws_close (workspace *w)
{
  fx_arena_free (w->arena);
  fx_store_close (w->store);
  const char *suffixes[] = { "", "-wal", "-shm" };
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *p = g_strconcat (w->path, suffixes[i], NULL);
      g_unlink (p);
    }
  g_rmdir (w->dir);
  g_free (w->path);
  g_free (w->dir);
}

/* The stored graph of a stage (its text too when text is not NULL); NULL graph when the stage is missing. */
static fx_graph *
ws_graph (workspace *w, const char *stage, char **text)
{
  fx_store_graph_info *gi;
  size_t n;
  g_assert_cmpint (fx_store_list_graphs (w->store, w->row, w->arena, &gi, &n, NULL), ==, FX_OK);
  for (size_t i = 0; i < n; i++)
    if (strcmp (gi[i].stage, stage) == 0)
      {
        fx_graph *g = NULL;
        g_assert_cmpint (fx_store_get_graph (w->store, gi[i].id, &g, text, NULL), ==, FX_OK);
        return g;
      }
  return NULL;
}

static char *
stages_of (workspace *w)
{
  fx_store_graph_info *gi;
  size_t n;
  g_assert_cmpint (fx_store_list_graphs (w->store, w->row, w->arena, &gi, &n, NULL), ==, FX_OK);
  GString *s = g_string_new (NULL);
  for (size_t i = 0; i < n; i++)
    g_string_append_printf (s, "%s%s", i ? " " : "", gi[i].stage);
  return g_string_free (s, FALSE);
}

static void
test_parts (void)
{
  for (size_t t = 0; t < G_N_ELEMENTS (cuda_traces); t++)
    {
      workspace w;
      ws_open (&w, cuda_traces[t]);
      /* the v2 provenance mapping of the backward ({"version": 2.0}) is no longer a malformed record */
      for (int k = 0; k < FX_IMPORT_WARN_COUNT; k++)
        if (w.stats.warnings[k])
          g_error ("%s: %s: %s", cuda_traces[t], fx_import_warning_name (k), w.stats.examples[k][0].text);
      g_autofree char *stages = stages_of (&w);
      g_assert_cmpstr (stages, ==, "dynamo before_pre_grad_graph after_pre_grad_graph aot_joint aot_forward "
                                   "aot_backward runnable post_grad runnable_backward post_grad_backward");
      /* The backward's output code and mappings carry the suffix; the AOT cache record is the compile's. */
      fx_store_kv *arts;
      size_t n;
      g_assert_cmpint (fx_store_list_artifacts (w.store, w.row, w.arena, &arts, &n, NULL), ==, FX_OK);
      int fw_code = 0, bw_code = 0, bw_map = 0, aot_cache = 0;
      for (size_t i = 0; i < n; i++)
        {
          fw_code += strcmp (arts[i].key, "inductor_output_code") == 0;
          bw_code += strcmp (arts[i].key, "inductor_output_code_backward") == 0;
          bw_map += strcmp (arts[i].key, "inductor_provenance_tracking_node_mappings_backward") == 0;
          aot_cache += strcmp (arts[i].key, "aotautograd_cache_hit") == 0;
        }
      g_assert_cmpint (fw_code, ==, 1);
      g_assert_cmpint (bw_code, ==, 1);
      g_assert_cmpint (bw_map, ==, 1);
      g_assert_cmpint (aot_cache, ==, 1);
      /* Backward kernels are numbered after the forward's (ordinals are unique) and marked as the backward's. */
      fx_store_kernel *k;
      size_t nk, n_bw = 0;
      g_assert_cmpint (fx_store_list_kernels (w.store, w.row, w.arena, &k, &nk, NULL), ==, FX_OK);
      g_assert_cmpint (nk, >=, 2);
      for (size_t i = 0; i < nk; i++)
        {
          g_assert_cmpint (k[i].ordinal, ==, (int) i);
          if (k[i].part)
            {
              g_assert_cmpstr (k[i].part, ==, "backward");
              /* the provenance rows are the forward's */
              g_assert_null (k[i].pre_nodes);
              n_bw++;
            }
          else
            g_assert_cmpint (n_bw, ==, 0);
        }
      g_assert_cmpint (n_bw, >, 0);
      g_assert_cmpint (n_bw, <, nk);
      ws_close (&w);
    }
  /* aot_eager: no Inductor, one part */
  workspace w;
  ws_open (&w, "mlp_block-aot_eager-cpu");
  g_autofree char *stages = stages_of (&w);
  g_assert_cmpstr (stages, ==, "dynamo aot_joint aot_forward aot_backward");
  ws_close (&w);
}

/* print_readable of the imported graph equals the text PyTorch logged (aot graphs with expanded_def; the joint
   graph through _PyTreeCodeGen: `def forward(self, primals, tangents)`, its leaves flattened in a prologue). */
static fx_graph *
parse_ok (const char *src)
{
  fx_graph *g = NULL;
  fx_diag diag;
  if (fx_parse_fx_code (src, strlen (src), "test.py", &g, &diag) != FX_OK)
    g_error ("%s", diag.message);
  return g;
}

/* print_readable of g, with the options its text was printed with, is text; what names it in the failure. */
static void
assert_prints_as (const fx_graph *g, const char *text, const char *what)
{
  fx_readable_opts opts;
  fx_parse_readable_opts (g, &opts);
  fx_buf out;
  fx_buf_init (&out);
  fx_graph_print_readable (g, &opts, &out);
  if (strcmp (out.data, text) != 0)
    g_error ("%s: printed differently:\n%s\n--- expected:\n%s", what, out.data, text);
  fx_buf_free (&out);
}

static void
check_golden (workspace *w, const char *trace, const char *stage)
{
  char *text = NULL;
  fx_graph *g = ws_graph (w, stage, &text);
  g_assert_nonnull (g);
  g_autofree char *what = g_strdup_printf ("%s %s", trace, stage);
  assert_prints_as (g, text, what);
  free (text);
  fx_graph_free (g);
}

static void
test_golden (void)
{
  const char *const stages[] = { "aot_joint", "aot_forward", "aot_backward", "post_grad", "post_grad_backward" };
  for (size_t t = 0; t < G_N_ELEMENTS (cuda_traces); t++)
    {
      workspace w;
      ws_open (&w, cuda_traces[t]);
      for (size_t s = 0; s < G_N_ELEMENTS (stages); s++)
        check_golden (&w, cuda_traces[t], stages[s]);
      ws_close (&w);
    }
  workspace w;
  ws_open (&w, "mlp_block-aot_eager-cpu");
  check_golden (&w, "mlp_block-aot_eager-cpu", "aot_joint");
  check_golden (&w, "mlp_block-aot_eager-cpu", "aot_forward");
  check_golden (&w, "mlp_block-aot_eager-cpu", "aot_backward");
  ws_close (&w);
}

/* The partitioners' graphs (print_readable(False) of min-cut's and default's joint, forward and backward, CPU):
   parsed and printed back byte for byte, the pytree ones through _PyTreeCodeGen without expanded_def. */
static void
test_partitioner_golden (void)
{
  g_autofree char *dir = g_build_filename (g_getenv ("FX_FIXTURES"), "training", "graphs", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  int n = 0, joint = 0;
  for (const char *name; (name = g_dir_read_name (d));)
    {
      if (!g_str_has_suffix (name, ".py"))
        continue;
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autofree char *text = NULL;
      gsize len = 0;
      g_assert_true (g_file_get_contents (path, &text, &len, NULL));
      fx_graph *g = NULL;
      fx_diag diag;
      if (fx_parse_fx_code (text, len, path, &g, &diag) != FX_OK)
        g_error ("%s: %s", name, diag.message);
      assert_prints_as (g, text, name);
      joint += g->pytree_args != NULL;
      fx_graph_free (g);
      n++;
    }
  g_assert_cmpint (n, ==, 30);
  /* default_partition's joint graphs are the traced ones (pytree); min-cut's were re-traced flat */
  g_assert_cmpint (joint, ==, 5);
}

/* Without descriptors the signature stays on one line (the pre-2.9 form). */
static void
test_expanded_def_off (void)
{
  const char *src = "class GraphModule(torch.nn.Module):\n"
                    "    def forward(self, x: \"f32[4]\"):\n"
                    "        # No stacktrace found for following nodes\n"
                    "        relu: \"f32[4]\" = torch.ops.aten.relu.default(x);  x = None\n"
                    "        return (relu,)\n";
  fx_graph *g = parse_ok (src);
  fx_readable_opts opts;
  fx_parse_readable_opts (g, &opts);
  g_assert_false (opts.expanded_def);
  assert_prints_as (g, src, "one-line signature");
  fx_graph_free (g);
}

/* The saved values are the forward outputs after the user outputs, in the backward's placeholder order. */
static void
test_saved (void)
{
  static const struct
  {
    const char *trace;
    const char *saved;
  } cases[] = {
    { "mlp_block-cuda", "primals_3:1 primals_4:2 relu:3" },
    { "mlp_block-aot_eager-cpu", NULL },
  };
  for (size_t c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      workspace w;
      ws_open (&w, cases[c].trace);
      fx_graph *fw = ws_graph (&w, "aot_forward", NULL), *bw = ws_graph (&w, "aot_backward", NULL);
      fx_saved_value *v;
      size_t n;
      fx_diag diag;
      g_assert_cmpint (fx_aot_saved_values (fw, bw, w.arena, &v, &n, &diag), ==, FX_OK);
      GString *s = g_string_new (NULL);
      size_t n_out = 0;
      const fx_node *out = fx_graph_output_node (fw);
      n_out = out->args[0].u.seq.n;
      for (size_t i = 0; i < n; i++)
        {
          g_assert_true (v[i].fw_node != NULL);
          g_assert_cmpstr (v[i].fw_node->name, ==, v[i].bw_placeholder->name);
          /* the last n outputs, in order */
          g_assert_cmpint (v[i].fw_output, ==, (int) (n_out - n + i));
          g_string_append_printf (s, "%s%s:%d", i ? " " : "", v[i].fw_node->name, v[i].fw_output);
        }
      if (cases[c].saved)
        g_assert_cmpstr (s->str, ==, cases[c].saved);
      g_assert_cmpint (n, >, 0);
      g_string_free (s, TRUE);
      fx_graph_free (fw);
      fx_graph_free (bw);
      ws_close (&w);
    }
}

/* A backward whose input the forward does not return is an error naming the value. */
static void
test_saved_mismatch (void)
{
  const char *fw_src = "class GraphModule(torch.nn.Module):\n"
                       "    def forward(self, primals_1: \"f32[4]\"):\n"
                       "        relu: \"f32[4]\" = torch.ops.aten.relu.default(primals_1);  primals_1 = None\n"
                       "        return (relu,)\n";
  const char *bw_src = "class GraphModule(torch.nn.Module):\n"
                       "    def forward(self, relu: \"f32[4]\", sig: \"f32[4]\", tangents_1: \"f32[4]\"):\n"
                       "        mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(tangents_1, relu);  tangents_1 = relu = None\n"
                       "        return (mul,)\n";
  fx_graph *fw = parse_ok (fw_src), *bw = parse_ok (bw_src);
  fx_arena *arena = fx_arena_new ();
  fx_saved_value *v;
  size_t n;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_aot_saved_values (fw, bw, arena, &v, &n, &diag), ==, FX_ERR_INVALID);
  g_assert_nonnull (strstr (diag.message, "'sig'"));
  fx_arena_free (arena);
  fx_graph_free (fw);
  fx_graph_free (bw);
}

/* Backward nodes lead to the forward nodes of their user line (the traces keep no seq_nr in printed graphs). */
static void
test_forward_sources (void)
{
  workspace w;
  ws_open (&w, "layernorm_gelu-cuda");
  fx_graph *fw = ws_graph (&w, "aot_forward", NULL), *bw = ws_graph (&w, "aot_backward", NULL);
  int with_sources = 0, computing = 0;
  fx_graph_foreach_node (bw, node)
    {
      if (node->op != FX_OP_CALL_FUNCTION)
        continue;
      computing++;
      const fx_node **src;
      size_t n;
      fx_aot_forward_sources (fw, node, w.arena, &src, &n);
      with_sources += n > 0;
      for (size_t i = 0; i < n; i++)
        g_assert_true (src[i]->op == FX_OP_CALL_FUNCTION);
    }
  g_assert_cmpint (computing, >, 0);
  g_assert_cmpint (with_sources, ==, computing);
  /* a placeholder has none */
  const fx_node **src;
  size_t n;
  fx_aot_forward_sources (fw, fx_graph_find_node (bw, "tangents_1"), w.arena, &src, &n);
  g_assert_cmpint (n, ==, 0);
  fx_graph_free (fw);
  fx_graph_free (bw);
  ws_close (&w);
}

/* mlp_block's min-cut backward recomputes the forward's permute_1 (of primals_4): it leads to that node alone; mm,
   a gradient, is no recomputation. */
static void
test_recomputed (void)
{
  workspace w;
  ws_open (&w, "mlp_block-cuda");
  fx_graph *fw = ws_graph (&w, "aot_forward", NULL), *bw = ws_graph (&w, "aot_backward", NULL);
  const fx_node *permute_1 = fx_graph_find_node (bw, "permute_1"), **src;
  size_t n;
  g_assert_true (fx_aot_is_recomputed (fw, permute_1));
  fx_aot_forward_sources (fw, permute_1, w.arena, &src, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_true (src[0] == fx_graph_find_node (fw, "permute_1"));
  g_assert_false (fx_aot_is_recomputed (fw, fx_graph_find_node (bw, "mm")));
  /* a name the forward lacks */
  g_assert_false (fx_aot_is_recomputed (fw, fx_graph_find_node (bw, "permute_2")));
  fx_graph_free (fw);
  fx_graph_free (bw);
  ws_close (&w);
}

/* Where both graphs keep seq_nr (graphs AOT autograd made, before printing drops it), a backward node leads to the
   forward node of its seq_nr alone, whatever the user lines say. */
static void
test_forward_sources_seq_nr (void)
{
  const char *fw_src = "class GraphModule(torch.nn.Module):\n"
                       "    def forward(self, primals_1: \"f32[4]\"):\n"
                       "        relu: \"f32[4]\" = torch.ops.aten.relu.default(primals_1);  primals_1 = None\n"
                       "        sin: \"f32[4]\" = torch.ops.aten.sin.default(relu)\n"
                       "        return (sin, relu)\n";
  const char *bw_src = "class GraphModule(torch.nn.Module):\n"
                       "    def forward(self, relu: \"f32[4]\", tangents_1: \"f32[4]\"):\n"
                       "        cos: \"f32[4]\" = torch.ops.aten.cos.default(relu)\n"
                       "        mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(tangents_1, cos);  tangents_1 = cos = None\n"
                       "        le: \"b8[4]\" = torch.ops.aten.le.Scalar(relu, 0);  relu = None\n"
                       "        return (le, mul)\n";
  fx_graph *fw = parse_ok (fw_src), *bw = parse_ok (bw_src);
  fx_graph_find_node (fw, "relu")->meta.seq_nr = 7;
  fx_graph_find_node (fw, "sin")->meta.seq_nr = 8;
  fx_graph_find_node (bw, "cos")->meta.seq_nr = 8;
  fx_graph_find_node (bw, "mul")->meta.seq_nr = 8;
  fx_graph_find_node (bw, "le")->meta.seq_nr = 7;
  fx_arena *arena = fx_arena_new ();
  const fx_node **src;
  size_t n;
  fx_aot_forward_sources (fw, fx_graph_find_node (bw, "mul"), arena, &src, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (src[0]->name, ==, "sin");
  fx_aot_forward_sources (fw, fx_graph_find_node (bw, "le"), arena, &src, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (src[0]->name, ==, "relu");
  /* a seq_nr the forward lacks: none, not a guess */
  fx_graph_find_node (bw, "le")->meta.seq_nr = 99;
  fx_aot_forward_sources (fw, fx_graph_find_node (bw, "le"), arena, &src, &n);
  g_assert_cmpuint (n, ==, 0);
  fx_arena_free (arena);
  fx_graph_free (fw);
  fx_graph_free (bw);
}

/* inductor_provenance_tracking_node_mappings version 2 leaves out empty maps. */
static void
test_provenance_v2 (void)
{
  int64_t rows = -1;
  fx_diag diag;
  const char *empty = "{\"version\": 2.0}";
  g_assert_cmpint (fx_import_provenance (NULL, 0, empty, strlen (empty), &rows, &diag), ==, FX_OK);
  g_assert_cmpint (rows, ==, 0);
  const char *bad = "{\"version\": 2.0, \"cppCodeToPost\": 3}";
  g_assert_cmpint (fx_import_provenance (NULL, 0, bad, strlen (bad), &rows, &diag), ==, FX_ERR_PARSE);
  g_assert_nonnull (strstr (diag.message, "cppCodeToPost is not an object"));
  const char *none = "{\"postToPre\": {}}";
  g_assert_cmpint (fx_import_provenance (NULL, 0, none, strlen (none), &rows, &diag), ==, FX_ERR_PARSE);
  g_assert_nonnull (strstr (diag.message, "no cppCodeToPost"));
  const char *rows2 = "{\"cppCodeToPost\": {\"triton_poi_fused_0:1\": [\"relu\"], \"extern_kernels.mm:2\": [\"mm\"]},"
                      " \"version\": 2.0}";
  g_assert_cmpint (fx_import_provenance (NULL, 0, rows2, strlen (rows2), &rows, &diag), ==, FX_OK);
  g_assert_cmpint (rows, ==, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/training/parts", test_parts);
  g_test_add_func ("/training/golden", test_golden);
  g_test_add_func ("/training/expanded-def-off", test_expanded_def_off);
  g_test_add_func ("/training/partitioner-golden", test_partitioner_golden);
  g_test_add_func ("/training/saved", test_saved);
  g_test_add_func ("/training/saved-mismatch", test_saved_mismatch);
  g_test_add_func ("/training/forward-sources", test_forward_sources);
  g_test_add_func ("/training/forward-sources-seq-nr", test_forward_sources_seq_nr);
  g_test_add_func ("/training/recomputed", test_recomputed);
  g_test_add_func ("/training/provenance-v2", test_provenance_v2);
  return g_test_run ();
}
