/* test-fxcode.c: the FX Python code parser against real PyTorch output (fixtures) and malformed input. */
#include "fx-test-lines.h"
#include <glib.h>
#include <math.h>
#include <string.h>

#include "fx/pyparse.h"

/* ---------------------------------------------------------------- helpers */

static char *
fixture_path (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  g_assert_nonnull (dir);
  return g_build_filename (dir, rel, NULL);
}

static char *
read_file (const char *path, gsize *len)
{
  char *text = NULL;
  g_autoptr (GError) error = NULL;
  if (!g_file_get_contents (path, &text, len, &error))
    g_error ("%s: %s", path, error->message);
  return text;
}

static fx_graph *
parse_ok (const char *text, const char *name)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_status st = fx_parse_fx_code (text, strlen (text), name, &g, &diag);
  if (st != FX_OK)
    {
      char msg[4096];
      fx_diag_format (&diag, msg, sizeof msg);
      g_error ("parse of %s failed:\n%s", name, msg);
    }
  g_assert_nonnull (g);
  g_assert_cmpint (fx_graph_verify (g, NULL), ==, FX_OK);
  return g;
}

static char *
print_readable (const fx_graph *g, bool stride, bool device)
{
  fx_readable_opts opts = { stride, device, false };
  fx_buf b;
  fx_buf_init (&b);
  fx_graph_print_readable (g, &opts, &b);
  return fx_buf_steal (&b);
}

static char *
print_with (const fx_graph *g, void (*fn) (const fx_graph *, fx_buf *))
{
  fx_buf b;
  fx_buf_init (&b);
  fn (g, &b);
  return fx_buf_steal (&b);
}

/* print_readable prints what it returns; the fixture files hold it plus the final newline. */
static char *
with_newline (char *s)
{
  size_t n = strlen (s);
  while (n > 0 && s[n - 1] == '\n')
    n--;
  char *out = g_strdup_printf ("%.*s\n", (int) n, s);
  free (s);
  return out;
}

/* The options a print_readable text was printed with, read back from its annotations. */
static void
detect_opts (const fx_graph *g, bool *stride, bool *device)
{
  fx_readable_opts opts;
  fx_parse_readable_opts (g, &opts);
  *stride = opts.include_stride;
  *device = opts.include_device;
}

/* "at 0x7f3a..." (an object address in print_tabular's str(target)) differs between runs. */
static char *
normalize_addresses (const char *s)
{
  GString *out = g_string_new (NULL);
  for (const char *p = s; *p;)
    {
      if (strncmp (p, "at 0x", 5) == 0)
        {
          g_string_append (out, "at 0x?");
          p += 5;
          while (g_ascii_isxdigit (*p))
            p++;
          continue;
        }
      g_string_append_c (out, *p++);
    }
  return g_string_free (out, FALSE);
}

static void
assert_same_text (const char *what, const char *got, const char *want)
{
  if (strcmp (got, want) == 0)
    return;
  /* Point at the first differing line: a whole-file dump hides it. */
  const char *g = got, *w = want;
  int line = 1;
  while (*g && *g == *w)
    {
      if (*g == '\n')
        line++;
      g++;
      w++;
    }
  const char *gl = g, *wl = w;
  while (gl > got && gl[-1] != '\n')
    gl--;
  while (wl > want && wl[-1] != '\n')
    wl--;
  g_test_message ("%s differs at line %d\n  got:  %.*s\n  want: %.*s", what, line, (int) strcspn (gl, "\n"), gl,
                  (int) strcspn (wl, "\n"), wl);
  g_assert_cmpstr (got, ==, want);
}

/* ---------------------------------------------------------------- golden: graphs/ */

static void
test_graph_fixture (gconstpointer data)
{
  const char *path = data;
  gsize len;
  g_autofree char *text = read_file (path, &len);
  fx_graph *g = NULL;
  fx_diag diag;
  fx_status st = fx_parse_fx_code (text, len, path, &g, &diag);
  if (st != FX_OK)
    {
      char msg[4096];
      fx_diag_format (&diag, msg, sizeof msg);
      g_error ("%s", msg);
    }
  g_autofree char *readable = with_newline (print_readable (g, true, true));
  assert_same_text ("print_readable", readable, text);

  g_autofree char *base = g_strndup (path, strlen (path) - 3);
  g_autofree char *tab_path = g_strconcat (base, ".tabular.txt", NULL);
  g_autofree char *want_tab = read_file (tab_path, NULL);
  char *tab = print_with (g, fx_graph_print_tabular);
  g_autofree char *got_n = normalize_addresses (tab);
  g_autofree char *want_n = normalize_addresses (want_tab);
  g_autofree char *got_nl = with_newline (g_strdup (got_n));
  g_autofree char *want_nl = with_newline (g_strdup (want_n));
  free (tab);
  assert_same_text ("print_tabular", got_nl, want_nl);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- golden: TORCH_COMPILE_DEBUG folders */

static void
test_debug_fixture (gconstpointer data)
{
  const char *path = data;
  gsize len;
  g_autofree char *text = read_file (path, &len);
  fx_graph *g = parse_ok (text, path);
  g_assert_cmpuint (g->n_nodes, >, 1);
  g_assert_nonnull (fx_graph_output_node (g));

  if (g_str_has_suffix (path, "fx_graph_runnable.py"))
    {
      /* a minifier repro: class Repro plus load_args */
      g_assert_cmpstr (g->class_name, ==, "Repro");
      size_t n_placeholders = fx_graph_count_op (g, FX_OP_PLACEHOLDER);
      g_assert_cmpuint (g->n_inputs, ==, n_placeholders);
      size_t i = 0;
      fx_graph_foreach_node (g, n)
        if (n->op == FX_OP_PLACEHOLDER)
          {
            const fx_input_spec *in = &g->inputs[i++];
            g_assert_cmpstr (in->name, ==, n->name);
            g_assert_true (in->kind == FX_INPUT_TENSOR || in->kind == FX_INPUT_SYMINT);
            if (in->kind == FX_INPUT_TENSOR)
              {
                g_assert_cmpint (in->val.kind, ==, FX_VAL_TENSOR);
                g_assert_true (in->val.tensor.has_device);
                g_assert_cmpint (in->val.tensor.device.type, ==, FX_DEVICE_CUDA);
              }
          }
    }
  else
    {
      bool stride = false, device = false;
      detect_opts (g, &stride, &device);
      g_autofree char *readable = with_newline (print_readable (g, stride, device));
      assert_same_text ("print_readable", readable, text);
    }
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- golden: torch_logs.txt */

/* The text after a glog line's "[__artifact] " tag, or NULL when the line is not one of those records. */
static const char *
log_payload (const char *line, const char **prefix_end)
{
  static const char *const tags[] = { "[__graph_code] ", "[__aot_graphs] ", "[__post_grad_graphs] " };
  for (size_t i = 0; i < G_N_ELEMENTS (tags); i++)
    {
      const char *t = strstr (line, tags[i]);
      if (t != NULL)
        {
          *prefix_end = t + strlen (tags[i]);
          return *prefix_end;
        }
    }
  return NULL;
}

typedef struct
{
  char *where;
  char *code;
} log_block;

/* Each "TRACED GRAPH" record holds " ===== name =====", then " <path>.py class ...:" and the print_readable lines. */
static GPtrArray *
scan_log_blocks (const char *text, const char *path)
{
  GPtrArray *blocks = g_ptr_array_new ();
  g_auto (GStrv) lines = fx_test_split_lines (text);
  guint n = g_strv_length (lines);

  for (guint i = 0; i < n; i++)
    {
      const char *pe;
      const char *payload = log_payload (lines[i], &pe);
      if (payload == NULL || strcmp (payload, "TRACED GRAPH") != 0)
        continue;
      size_t prefix_len = (size_t) (pe - lines[i]);
      if (i + 2 >= n)
        continue;
      const char *cls = strstr (lines[i + 2] + prefix_len, ".py class ");
      if (cls == NULL)
        continue;
      GString *code = g_string_new (cls + 4);
      g_string_append_c (code, '\n');
      guint j = i + 3;
      /* The record goes on while lines carry the same prefix. */
      for (; j < n && strlen (lines[j]) >= prefix_len && strncmp (lines[j], lines[i], prefix_len) == 0; j++)
        {
          g_string_append (code, lines[j] + prefix_len);
          g_string_append_c (code, '\n');
        }
      while (code->len >= 2 && code->str[code->len - 1] == '\n' && code->str[code->len - 2] == '\n')
        g_string_truncate (code, code->len - 1);
      log_block *b = g_new0 (log_block, 1);
      b->where = g_strdup_printf ("%s:%u", path, i + 1);
      b->code = g_string_free (code, FALSE);
      g_ptr_array_add (blocks, b);
      i = j - 1;
    }
  return blocks;
}

static void
test_log_fixture (gconstpointer data)
{
  const char *path = data;
  g_autofree char *text = read_file (path, NULL);
  GPtrArray *blocks = scan_log_blocks (text, path);
  /* every program compiles at least one graph: an empty scan means the scanner is broken */
  g_assert_cmpuint (blocks->len, >, 2);
  g_test_message ("%u graphs in %s", blocks->len, path);
  for (guint i = 0; i < blocks->len; i++)
    {
      log_block *b = blocks->pdata[i];
      fx_graph *g = parse_ok (b->code, b->where);
      bool stride = false, device = false;
      detect_opts (g, &stride, &device);
      g_autofree char *readable = with_newline (print_readable (g, stride, device));
      assert_same_text (b->where, readable, b->code);
      fx_graph_free (g);
      g_free (b->where);
      g_free (b->code);
      g_free (b);
    }
  g_ptr_array_free (blocks, TRUE);
}

/* ---------------------------------------------------------------- golden: TORCH_TRACE graph payloads */

/* Structured-trace records whose payload is print_readable text; round_trip: PyTorch printed it plainly (the AOT
   graphs use expanded_def and the pre-grad ones end in a "# graph id" comment: those only have to parse). */
static const struct
{
  const char *key;
  bool round_trip;
} trace_graphs[] = {
  { "{\"dynamo_output_graph\": ", true },
  { "{\"aot_inference_graph\": ", false },
  { "{\"aot_forward_graph\": ", false },
  { "{\"aot_backward_graph\": ", false },
  { "{\"aot_joint_graph\": ", false },
  { "\"name\": \"before_joint_graph\"", true },
  { "\"name\": \"after_joint_graph\"", true },
  { "\"name\": \"before_post_grad_graph\"", true },
  { "\"name\": \"inductor_post_grad_graph\"", true },
  { "\"name\": \"before_pre_grad_graph\"", false },
  { "\"name\": \"after_pre_grad_graph\"", false },
  { "\"name\": \"fx_graph_runnable\"", false },
};

static void
test_trace_fixture (gconstpointer data)
{
  const char *path = data;
  g_autofree char *text = read_file (path, NULL);
  g_auto (GStrv) lines = fx_test_split_lines (text);
  guint n = g_strv_length (lines), parsed = 0, compared = 0;

  for (guint i = 0; i < n; i++)
    {
      int kind = -1;
      if (lines[i][0] == '\t' || strstr (lines[i], "] {") == NULL)
        continue;
      for (size_t k = 0; k < G_N_ELEMENTS (trace_graphs) && kind < 0; k++)
        if (strstr (lines[i], trace_graphs[k].key) != NULL)
          kind = (int) k;
      if (kind < 0)
        continue;
      GString *payload = g_string_new (NULL);
      guint j = i + 1;
      for (; j < n && lines[j][0] == '\t'; j++)
        {
          g_string_append (payload, lines[j] + 1);
          g_string_append_c (payload, '\n');
        }
      g_autofree char *where = g_strdup_printf ("%s:%u", path, i + 2);
      fx_graph *g = parse_ok (payload->str, where);
      parsed++;
      /* A graph printed by _PyTreeCodeGen (AOTInductor's exported graphs: `def forward(self):` with the leaves
         bound by fx_pytree.tree_flatten_spec) parses to its leaves as placeholders; the printer writes the flat
         signature, not the prologue, so these only have to parse. */
      if (trace_graphs[kind].round_trip && strstr (payload->str, "fx_pytree.tree_flatten_spec") == NULL)
        {
          bool stride = false, device = false;
          detect_opts (g, &stride, &device);
          g_autofree char *got = with_newline (print_readable (g, stride, device));
          g_autofree char *want = with_newline (g_strdup (payload->str));
          assert_same_text (where, got, want);
          compared++;
        }
      fx_graph_free (g);
      g_string_free (payload, TRUE);
      i = j - 1;
    }
  g_test_message ("%u graph payloads parsed, %u printed back identically", parsed, compared);
  /* A torch.compile trace has graphs; a torch.export trace (no dynamo_start) may have none of these kinds. */
  if (strstr (text, "{\"dynamo_start\": ") != NULL)
    g_assert_cmpuint (parsed, >, 0);
}

/* ---------------------------------------------------------------- the forms, one by one */

static fx_node *
node (const fx_graph *g, const char *name)
{
  fx_node *n = fx_graph_find_node (g, name);
  if (n == NULL)
    g_error ("no node %s", name);
  return n;
}

/* GraphModule.code of a Dynamo graph: annotations are type expressions, placeholders renamed. */
static void
test_code_form (void)
{
  const char *src =
    "\n\n\n"
    "def forward(self, L_x_ : torch.Tensor, L_y_ : torch.Tensor):\n"
    "    l_x_ = L_x_\n"
    "    l_y_ = L_y_\n"
    "    sub_fc = self.sub.fc(l_x_);  l_x_ = None\n"
    "    add = sub_fc + l_y_;  sub_fc = None\n"
    "    relu = add.relu()\n"
    "    sum_1 = relu.sum(dim = -1, keepdim = True);  relu = None\n"
    "    cat = torch.cat([add, l_y_], dim = 1);  add = l_y_ = None\n"
    "    max_1 = cat.max(dim = 1);  cat = None\n"
    "    getitem = max_1[0];  max_1 = None\n"
    "    neg = -getitem\n"
    "    size = getitem.shape\n"
    "    gelu = torch._C._nn.gelu(getitem, approximate = 'tanh')\n"
    "    abs_1 = torch.abs(gelu);  gelu = None\n"
    "    _tensor_constant0 = self._tensor_constant0\n"
    "    layer = getattr(self.layers, \"0\")(abs_1)\n"
    "    len_1 = len(size);  size = None\n"
    "    return (getitem, sum_1, neg, abs_1, _tensor_constant0, layer, len_1)\n"
    "    ";
  fx_graph *g = parse_ok (src, "code.py");

  fx_node *x = node (g, "l_x_");
  g_assert_cmpint (x->op, ==, FX_OP_PLACEHOLDER);
  g_assert_cmpstr (x->target.name, ==, "L_x_");
  g_assert_cmpstr (x->type_expr, ==, "torch.Tensor");
  g_assert_true (x == g->first);

  fx_node *m = node (g, "sub_fc");
  g_assert_cmpint (m->op, ==, FX_OP_CALL_MODULE);
  g_assert_cmpstr (m->target.name, ==, "sub.fc");
  g_assert_true (m->args[0].kind == FX_ARG_NODE && m->args[0].u.node == x);

  fx_node *add = node (g, "add");
  g_assert_cmpint (add->target.kind, ==, FX_TARGET_OPERATOR);
  g_assert_cmpstr (add->target.name, ==, "add");

  fx_node *s = node (g, "sum_1");
  g_assert_cmpint (s->op, ==, FX_OP_CALL_METHOD);
  g_assert_cmpstr (s->target.name, ==, "sum");
  g_assert_cmpuint (s->n_args, ==, 1);
  g_assert_cmpuint (s->n_kwargs, ==, 2);
  g_assert_cmpstr (s->kwargs[0].name, ==, "dim");
  g_assert_cmpint (s->kwargs[0].value.u.i, ==, -1);
  g_assert_true (s->kwargs[1].value.kind == FX_ARG_BOOL && s->kwargs[1].value.u.b);

  fx_node *cat = node (g, "cat");
  g_assert_cmpint (cat->target.kind, ==, FX_TARGET_FUNCTION);
  g_assert_cmpstr (cat->target.name, ==, "torch.cat");
  g_assert_cmpint (cat->args[0].kind, ==, FX_ARG_LIST);

  fx_node *gi = node (g, "getitem");
  g_assert_cmpstr (gi->target.name, ==, "getitem");
  g_assert_cmpint (gi->args[1].u.i, ==, 0);

  g_assert_cmpstr (node (g, "neg")->target.name, ==, "neg");
  fx_node *size = node (g, "size");
  g_assert_cmpint (size->target.kind, ==, FX_TARGET_BUILTIN);
  g_assert_cmpstr (size->target.name, ==, "getattr");
  g_assert_cmpstr (size->args[1].u.s, ==, "shape");

  fx_node *gelu = node (g, "gelu");
  g_assert_cmpstr (gelu->target.name, ==, "torch._C._nn.gelu");
  g_assert_cmpstr (gelu->kwargs[0].value.u.s, ==, "tanh");
  g_assert_cmpint (node (g, "_tensor_constant0")->op, ==, FX_OP_GET_ATTR);
  fx_node *layer = node (g, "layer");
  g_assert_cmpint (layer->op, ==, FX_OP_CALL_MODULE);
  g_assert_cmpstr (layer->target.name, ==, "layers.0");
  g_assert_cmpint (node (g, "len_1")->target.kind, ==, FX_TARGET_BUILTIN);

  fx_node *out = fx_graph_output_node (g);
  g_assert_cmpint (out->args[0].kind, ==, FX_ARG_TUPLE);
  g_assert_cmpuint (out->args[0].u.seq.n, ==, 7);

  /* GraphModule.code prints it back as it was */
  char *code = print_with (g, fx_graph_print_code);
  assert_same_text ("code", code, src);
  free (code);
  fx_graph_free (g);
}

/* Argument values of every kind PyTorch prints. */
static void
test_values (void)
{
  const char *src =
    "def forward(self, x):\n"
    "    full = torch.ops.aten.full.default([2, 3], 1.5, dtype = torch.float64, layout = torch.strided, "
    "device = device(type='cuda', index=0), pin_memory = False, memory_format = torch.contiguous_format)\n"
    "    clamp = torch.ops.aten.clamp.default(x, -inf, inf)\n"
    "    nan_to_num = torch.ops.aten.nan_to_num.default(x, nan, 1e-05, -3.4028234663852886e+38)\n"
    "    sl = torch.ops.aten.slice.Tensor(x, 0, 0, 9223372036854775807)\n"
    "    idx = x[(slice(None, None, None), None, Ellipsis)]\n"
    "    idx2 = x[1:, ::2, ...]\n"
    "    f = torch.foo.default(x, 'it\\'s', \"dq\\\"\", '\\n\\t\\x41\\u00e9', r'\\d', b'b', '''tri\nple''')\n"
    "    d = torch.ops.mylib.op.default({'a': 1, 2: [x, (3,)], 'c': {}}, (), [], True, None, -9223372036854775808)\n"
    "    big = torch.ops.mylib.big.default(123456789012345678901234567890, 0x10, 1_000)\n"
    "    cpu = torch.ops.aten.to.dtype_layout(x, device = device(type='cpu'), dtype = torch.bfloat16)\n"
    "    return (full, clamp, nan_to_num, sl, idx, idx2, f, d, big, cpu)\n";
  fx_graph *g = parse_ok (src, "values.py");

  fx_node *full = node (g, "full");
  g_assert_cmpint (full->target.kind, ==, FX_TARGET_OP);
  g_assert_cmpstr (full->target.name, ==, "aten.full.default");
  g_assert_cmpfloat (full->args[1].u.f, ==, 1.5);
  g_assert_cmpint (fx_node_get_kwarg (full, "dtype")->u.dtype, ==, FX_DTYPE_F64);
  g_assert_cmpint (fx_node_get_kwarg (full, "layout")->u.layout, ==, FX_LAYOUT_STRIDED);
  const fx_arg *dev = fx_node_get_kwarg (full, "device");
  g_assert_cmpint (dev->kind, ==, FX_ARG_DEVICE);
  g_assert_cmpint (dev->u.device.type, ==, FX_DEVICE_CUDA);
  g_assert_cmpint (dev->u.device.index, ==, 0);
  g_assert_cmpint (fx_node_get_kwarg (full, "memory_format")->u.memfmt, ==, FX_MEMFMT_CONTIGUOUS);

  fx_node *clamp = node (g, "clamp");
  g_assert_true (isinf (clamp->args[1].u.f) && clamp->args[1].u.f < 0);
  g_assert_true (isinf (clamp->args[2].u.f) && clamp->args[2].u.f > 0);
  fx_node *n2n = node (g, "nan_to_num");
  g_assert_true (isnan (n2n->args[1].u.f));
  g_assert_cmpfloat (n2n->args[3].u.f, ==, -3.4028234663852886e+38);
  g_assert_cmpint (node (g, "sl")->args[3].u.i, ==, INT64_MAX);

  fx_node *idx = node (g, "idx");
  g_assert_cmpint (idx->args[1].kind, ==, FX_ARG_TUPLE);
  g_assert_cmpint (idx->args[1].u.seq.items[0].kind, ==, FX_ARG_SLICE);
  g_assert_cmpint (idx->args[1].u.seq.items[1].kind, ==, FX_ARG_NONE);
  g_assert_cmpint (idx->args[1].u.seq.items[2].kind, ==, FX_ARG_ELLIPSIS);
  fx_node *idx2 = node (g, "idx2");
  const fx_arg *s0 = &idx2->args[1].u.seq.items[0];
  g_assert_cmpint (s0->kind, ==, FX_ARG_SLICE);
  g_assert_cmpint (s0->u.seq.items[0].u.i, ==, 1);
  g_assert_cmpint (s0->u.seq.items[1].kind, ==, FX_ARG_NONE);
  g_assert_cmpint (idx2->args[1].u.seq.items[1].u.seq.items[2].u.i, ==, 2);

  fx_node *f = node (g, "f");
  g_assert_cmpint (f->target.kind, ==, FX_TARGET_FUNCTION);
  g_assert_cmpstr (f->args[1].u.s, ==, "it's");
  g_assert_cmpstr (f->args[2].u.s, ==, "dq\"");
  g_assert_cmpstr (f->args[3].u.s, ==, "\n\tA\xc3\xa9");
  g_assert_cmpstr (f->args[4].u.s, ==, "\\d");
  g_assert_cmpstr (f->args[5].u.s, ==, "b");
  g_assert_cmpstr (f->args[6].u.s, ==, "tri\nple");

  fx_node *d = node (g, "d");
  g_assert_cmpint (d->args[0].kind, ==, FX_ARG_DICT);
  g_assert_cmpuint (d->args[0].u.dict.n, ==, 3);
  g_assert_cmpstr (d->args[0].u.dict.items[0].key.u.s, ==, "a");
  g_assert_cmpint (d->args[0].u.dict.items[1].key.u.i, ==, 2);
  g_assert_cmpint (d->args[0].u.dict.items[1].value.u.seq.items[0].u.node->op, ==, FX_OP_PLACEHOLDER);
  g_assert_cmpint (d->args[1].kind, ==, FX_ARG_TUPLE);
  g_assert_cmpuint (d->args[1].u.seq.n, ==, 0);
  g_assert_cmpint (d->args[5].u.i, ==, INT64_MIN);
  fx_node *big = node (g, "big");
  g_assert_cmpint (big->args[0].kind, ==, FX_ARG_SYM);
  g_assert_cmpstr (big->args[0].u.s, ==, "123456789012345678901234567890");
  g_assert_cmpint (big->args[1].u.i, ==, 16);
  g_assert_cmpint (big->args[2].u.i, ==, 1000);
  fx_node *cpu = node (g, "cpu");
  g_assert_cmpint (fx_node_get_kwarg (cpu, "device")->u.device.type, ==, FX_DEVICE_CPU);
  g_assert_cmpint (fx_node_get_kwarg (cpu, "device")->u.device.index, ==, -1);
  g_assert_cmpint (fx_node_get_kwarg (cpu, "dtype")->u.dtype, ==, FX_DTYPE_BF16);
  fx_graph_free (g);
}

/* print_readable of a graph with a torch.cond: child graph modules are nested classes. */
static void
test_children (void)
{
  const char *src =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, L_x_: \"f32[4][1]cpu\"):\n"
    "        l_x_ = L_x_\n"
    "\n"
    "        # File: /tmp/c.py:5 in f, code: return torch.cond(x.sum() > 0, t, e, (x,))\n"
    "        sum_1: \"f32[][]cpu\" = l_x_.sum()\n"
    "        gt: \"b8[][]cpu\" = sum_1 > 0;  sum_1 = None\n"
    "        cond_true_0 = self.cond_true_0\n"
    "        cond_false_0 = self.cond_false_0\n"
    "        cond = torch.ops.higher_order.cond(gt, cond_true_0, cond_false_0, (l_x_,));  gt = cond_true_0 = cond_false_0 = l_x_ = None\n"
    "        getitem: \"f32[4][1]cpu\" = cond[0];  cond = None\n"
    "        return (getitem,)\n"
    "\n"
    "    class cond_true_0(torch.nn.Module):\n"
    "        def forward(self, l_x_: \"f32[4][1]cpu\"):\n"
    "            l_x__1 = l_x_\n"
    "\n"
    "            # File: /tmp/c.py:3 in t, code: return x.sin()\n"
    "            sin: \"f32[4][1]cpu\" = l_x__1.sin();  l_x__1 = None\n"
    "            return (sin,)\n"
    "\n"
    "    class cond_false_0(torch.nn.Module):\n"
    "        def forward(self, l_x_: \"f32[4][1]cpu\"):\n"
    "            l_x__1 = l_x_\n"
    "\n"
    "            # File: /tmp/c.py:4 in e, code: return x.cos()\n"
    "            cos: \"f32[4][1]cpu\" = l_x__1.cos();  l_x__1 = None\n"
    "            return (cos,)\n";
  fx_graph *g = parse_ok (src, "cond.py");
  g_assert_cmpstr (g->class_name, ==, "GraphModule");
  g_assert_cmpuint (g->n_children, ==, 2);
  g_assert_cmpstr (g->children[0].attr, ==, "cond_true_0");
  g_assert_cmpstr (g->children[1].attr, ==, "cond_false_0");
  fx_graph *t = g->children[0].graph;
  g_assert_cmpstr (node (t, "l_x__1")->target.name, ==, "l_x_");
  g_assert_cmpstr (node (t, "sin")->meta.stack_trace, ==, "  File \"/tmp/c.py\", line 3, in t\n    return x.sin()\n");
  fx_node *cond = node (g, "cond");
  g_assert_cmpint (cond->target.kind, ==, FX_TARGET_OP);
  g_assert_cmpstr (cond->target.name, ==, "higher_order.cond");
  g_assert_cmpint (node (g, "cond_true_0")->op, ==, FX_OP_GET_ATTR);
  g_assert_cmpint (node (g, "gt")->meta.val.tensor.dtype, ==, FX_DTYPE_BOOL);

  g_autofree char *got = with_newline (print_readable (g, true, true));
  assert_same_text ("print_readable", got, src);
  fx_graph_free (g);
}

/* Provenance comments: annotations, recompute tags, "No stacktrace", and in-place statements. */
static void
test_comments_and_inplace (void)
{
  const char *src =
    "class GraphModule(torch.nn.Module):\n"
    "    def forward(self, x: \"f32[4]\", s0: \"Sym(s0)\"):\n"
    "        # Annotation: {'stage': 1} # recompute: MUST_SAVE File: /a b/c.py:7 in <lambda>, code: y = x + 1  # hi\n"
    "        add: \"f32[4]\" = torch.ops.aten.add.Tensor(x, 1)\n"
    "\n"
    "        # No stacktrace found for following nodes\n"
    "        add += x;  iadd: \"f32[4]\" = add\n"
    "        add[0] = s0;  setitem = add;  setitem = None\n"
    "        return (iadd,)\n";
  fx_graph *g = parse_ok (src, "comments.py");
  fx_node *add = node (g, "add");
  g_assert_cmpstr (add->meta.stack_trace, ==, "  File \"/a b/c.py\", line 7, in <lambda>\n    y = x + 1  # hi\n");
  g_assert_cmpstr (fx_meta_get_extra (&add->meta, "custom"), ==, "{'stage': 1}");
  g_assert_cmpstr (fx_meta_get_extra (&add->meta, "recompute"), ==, "MUST_SAVE");
  fx_node *iadd = node (g, "iadd");
  g_assert_null (iadd->meta.stack_trace);
  g_assert_cmpint (iadd->target.kind, ==, FX_TARGET_OPERATOR);
  g_assert_cmpstr (iadd->target.name, ==, "iadd");
  g_assert_true (iadd->args[0].u.node == add);
  g_assert_cmpint (iadd->meta.val.kind, ==, FX_VAL_TENSOR);
  fx_node *setitem = node (g, "setitem");
  g_assert_cmpstr (setitem->target.name, ==, "setitem");
  g_assert_cmpuint (setitem->n_args, ==, 3);
  g_assert_cmpint (node (g, "s0")->meta.val.kind, ==, FX_VAL_SYMINT);
  g_assert_cmpstr (node (g, "s0")->meta.val.sym, ==, "s0");
  fx_graph_free (g);
}

/* A minifier repro.py: imports, class Repro with registered tensors and submodules, load_args. */
static void
test_repro (void)
{
  const char *src =
    "import torch\n"
    "from torch import tensor, device\n"
    "import torch._dynamo.config\n"
    "torch._inductor.config.trace.enabled = False\n"
    "isolate_fails_code_str = None\n"
    "\n"
    "if \"__compile_source__\" in globals():\n"
    "    import inspect as __after_aot_inspect\n"
    "    __after_aot_linecache.cache[x] = (\n"
    "        len(__compile_source__),\n"
    "    )\n"
    "\n"
    "from torch.nn import *\n"
    "class Repro(torch.nn.Module):\n"
    "    def __init__(self) -> None:\n"
    "        super().__init__()\n"
    "        self.fc = Linear(in_features=4, out_features=4, bias=True).cuda()\n"
    "        self.register_buffer('_tensor_constant0', torch.randint(1, size=[2, 3], dtype=torch.int64).cuda())\n"
    "        self._param_constant0 = torch.nn.Parameter(torch.randn([10, 20], dtype=torch.float16))\n"
    "        self.small = torch.tensor([1.0, 2.0])\n"
    "        self.whatever = lambda x: x\n"
    "        self.true_graph_0 = <lambda>()\n"
    "\n"
    "\n"
    "\n"
    "    def forward(self, arg0_1, arg1_1, arg2_1):\n"
    "        _tensor_constant0 = self._tensor_constant0\n"
    "        fc = self.fc(arg1_1);  arg1_1 = None\n"
    "        mul = torch.ops.aten.mul.Tensor(fc, arg0_1);  fc = arg0_1 = None\n"
    "        return (mul, _tensor_constant0)\n"
    "        \n"
    "def load_args(reader):\n"
    "    reader.symint(8)  # s0\n"
    "    buf0 = reader.storage(None, 1024, device=device(type='cuda', index=0))\n"
    "    reader.tensor(buf0, (256,), is_leaf=True)  # arg0_1\n"
    "    buf1 = reader.storage('0123abcd', 96, device=device(type='cuda', index=1), dtype_hint=torch.float16)\n"
    "    reader.tensor(buf1, (4, 6), (1, 4), dtype=torch.float16, storage_offset=2, requires_grad=True)  # arg1_1\n"
    "    reader.const('arg2_1')  # arg2_1, filtered out during compilation\n"
    "load_args._version = 0\n"
    "mod = Repro()\n"
    "if __name__ == '__main__':\n"
    "    from torch._dynamo.repro.after_aot import run_repro\n"
    "    with torch.no_grad():\n"
    "        run_repro(mod, load_args, accuracy=False, command='run', save_dir=None, tracing_mode='real', check_str=None)\n"
    "        # mod(*args)";
  fx_graph *g = parse_ok (src, "repro.py");
  g_assert_cmpstr (g->class_name, ==, "Repro");
  g_assert_cmpuint (fx_graph_count_op (g, FX_OP_PLACEHOLDER), ==, 3);

  /* Python this reader does not model is kept as text; a child GraphModule's `<lambda>()` is a submodule */
  g_assert_cmpuint (g->n_attrs, ==, 6);
  g_assert_cmpstr (g->attrs[4].name, ==, "whatever");
  g_assert_cmpint (g->attrs[4].kind, ==, FX_ATTR_OTHER);
  g_assert_cmpstr (g->attrs[4].text, ==, "lambda x: x");
  g_assert_cmpstr (g->attrs[5].name, ==, "true_graph_0");
  g_assert_cmpint (g->attrs[5].kind, ==, FX_ATTR_MODULE);
  g_assert_cmpstr (g->attrs[5].text, ==, "<lambda>()");
  g_assert_cmpstr (g->attrs[0].name, ==, "fc");
  g_assert_cmpint (g->attrs[0].kind, ==, FX_ATTR_MODULE);
  g_assert_cmpstr (g->attrs[0].text, ==, "Linear(in_features=4, out_features=4, bias=True).cuda()");
  g_assert_cmpstr (g->attrs[1].name, ==, "_tensor_constant0");
  g_assert_cmpint (g->attrs[1].kind, ==, FX_ATTR_BUFFER);
  g_assert_cmpint (g->attrs[1].val.kind, ==, FX_VAL_TENSOR);
  g_assert_cmpint (g->attrs[1].val.tensor.dtype, ==, FX_DTYPE_I64);
  g_assert_cmpint (g->attrs[1].val.tensor.ndim, ==, 2);
  g_assert_cmpint (g->attrs[1].val.tensor.sizes[1].value, ==, 3);
  g_assert_cmpint (g->attrs[1].val.tensor.device.type, ==, FX_DEVICE_CUDA);
  g_assert_cmpint (g->attrs[2].kind, ==, FX_ATTR_PARAMETER);
  g_assert_cmpint (g->attrs[2].val.tensor.dtype, ==, FX_DTYPE_F16);
  g_assert_cmpint (g->attrs[2].val.tensor.strides[0].value, ==, 20);
  g_assert_cmpint (g->attrs[3].kind, ==, FX_ATTR_CONSTANT);
  g_assert_cmpint (g->attrs[3].val.tensor.sizes[0].value, ==, 2);

  g_assert_cmpuint (g->n_inputs, ==, 4);
  g_assert_cmpstr (g->inputs[0].name, ==, "s0");
  g_assert_cmpint (g->inputs[0].kind, ==, FX_INPUT_SYMINT);
  g_assert_cmpint (g->inputs[0].val.i, ==, 8);
  const fx_input_spec *a0 = &g->inputs[1];
  g_assert_cmpstr (a0->name, ==, "arg0_1");
  g_assert_cmpint (a0->val.tensor.dtype, ==, FX_DTYPE_F32);
  g_assert_cmpint (a0->val.tensor.sizes[0].value, ==, 256);
  g_assert_cmpint (a0->val.tensor.strides[0].value, ==, 1);
  g_assert_cmpint (a0->val.tensor.device.index, ==, 0);
  g_assert_true (a0->is_leaf);
  g_assert_null (a0->storage);
  const fx_input_spec *a1 = &g->inputs[2];
  g_assert_cmpint (a1->val.tensor.dtype, ==, FX_DTYPE_F16);
  g_assert_cmpint (a1->val.tensor.strides[1].value, ==, 4);
  g_assert_cmpint (a1->val.tensor.storage_offset.value, ==, 2);
  g_assert_cmpint (a1->val.tensor.device.index, ==, 1);
  g_assert_true (a1->requires_grad);
  g_assert_false (a1->is_leaf);
  g_assert_cmpstr (a1->storage, ==, "0123abcd");
  g_assert_cmpstr (g->inputs[3].name, ==, "arg2_1");
  g_assert_cmpint (g->inputs[3].kind, ==, FX_INPUT_OTHER);
  fx_graph_free (g);
}

/* The older repro.py layout: inputs as `args = [(shape, stride, dtype, device), ...]`, named by position. */
static void
test_repro_args_list (void)
{
  const char *src =
    "from torch.nn import *\n"
    "class Repro(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "\n"
    "    def forward(self, primals_1, primals_2):\n"
    "        mm = torch.ops.aten.mm.default(primals_1, primals_2);  primals_1 = primals_2 = None\n"
    "        return [mm]\n"
    "        \n"
    "args = [((4, 8), (8, 1), torch.float32, 'cuda'), ((8, 2), (1, 8), torch.float16, 'cpu')]\n"
    "args = [rand_strided(sh, st, dt, dev) for (sh, st, dt, dev) in args]\n"
    "mod = make_fx(Repro(), tracing_mode='real')(*args)\n";
  fx_graph *g = parse_ok (src, "old_repro.py");
  g_assert_cmpuint (g->n_inputs, ==, 2);
  g_assert_cmpstr (g->inputs[0].name, ==, "primals_1");
  g_assert_cmpint (g->inputs[0].val.tensor.device.type, ==, FX_DEVICE_CUDA);
  g_assert_cmpstr (g->inputs[1].name, ==, "primals_2");
  g_assert_cmpint (g->inputs[1].val.tensor.dtype, ==, FX_DTYPE_F16);
  g_assert_cmpint (g->inputs[1].val.tensor.strides[1].value, ==, 8);
  g_assert_cmpint (fx_graph_output_node (g)->args[0].kind, ==, FX_ARG_LIST);
  fx_graph_free (g);
}

static void
test_misc_forms (void)
{
  /* An empty graph, CRLF line ends, a BOM, tabs, a backslash continuation, a default and *args. */
  fx_graph *g = parse_ok ("\xef\xbb\xbf" "def forward(self):\r\n    pass\r\n", "empty.py");
  g_assert_cmpuint (g->n_nodes, ==, 0);
  fx_graph_free (g);

  /* placeholders only: FX prints `pass` for a body without statements */
  g = parse_ok ("def forward(self, x, y):\n    pass\n", "placeholders.py");
  g_assert_cmpuint (g->n_nodes, ==, 2);
  g_assert_null (fx_graph_output_node (g));
  fx_graph_free (g);

  g = parse_ok ("def forward(self, x, y = 2, *args) -> torch.Tensor:\n"
                "\tadd = x + \\\n"
                "\t  y\n"
                "\treturn add\n", "misc.py");
  fx_node *y = node (g, "y");
  g_assert_nonnull (y->default_value);
  g_assert_cmpint (y->default_value->u.i, ==, 2);
  g_assert_cmpstr (node (g, "args")->target.name, ==, "*args");
  g_assert_cmpstr (fx_graph_output_node (g)->type_expr, ==, "torch.Tensor");
  g_assert_cmpint (fx_graph_output_node (g)->args[0].kind, ==, FX_ARG_NODE);
  fx_graph_free (g);

  /* An annotation PyTorch cannot print (a backslash in a dim): kept as text, not modelled, since the printers
     write annotations unescaped and its code would read back as another graph (found by fuzz-fxcode). */
  g = parse_ok ("def forward(self, x: \"f32[(s0\\\\\\\\)]\", y: \"f32[(s0)]\"):\n"
                "    relu = torch.ops.aten.relu.default(x)\n"
                "    return (relu,)\n", "backslash.py");
  g_assert_cmpint (node (g, "x")->meta.val.kind, ==, FX_VAL_OTHER);
  g_assert_cmpstr (node (g, "x")->meta.val.text, ==, "f32[(s0\\\\)]");
  g_assert_cmpint (node (g, "y")->meta.val.kind, ==, FX_VAL_TENSOR);
  g_assert_cmpstr (node (g, "y")->meta.val.tensor.sizes[0].sym, ==, "(s0)");
  fx_graph_free (g);

  /* The expanded_def form: one parameter per line with comments. */
  g = parse_ok ("class GraphModule(torch.nn.Module):\n"
                "    def forward(\n"
                "        self,\n"
                "        x: \"f32[2]\",  # PlainAOTInput(idx=0)\n"
                "    ):\n"
                "        sin: \"f32[2]\" = torch.ops.aten.sin.default(x);  x = None\n"
                "        return (\n"
                "            sin,  # PlainAOTOutput(idx=0)\n"
                "        )\n", "expanded.py");
  g_assert_cmpuint (g->n_nodes, ==, 3);
  g_assert_cmpstr (fx_meta_get_extra (&node (g, "x")->meta, "desc"), ==, "PlainAOTInput(idx=0)");
  g_assert_cmpstr (fx_meta_get_extra (&fx_graph_output_node (g)->meta, "desc"), ==, "[PlainAOTOutput(idx=0)]");
  fx_graph_free (g);

  /* torch.export's pytree codegen, and FX_GRAPH_SHOW_META's string statements */
  g = parse_ok ("class GraphModule(torch.nn.Module):\n"
                "    def forward(self, x, y):\n"
                "        x: \"f32[2, 4]\"; y: \"f32[2, 4]\"; \n"
                "\n"
                "        x, y, = fx_pytree.tree_flatten_spec(([x, y], {}), self._in_spec)\n"
                "        \"\"\"\n"
                "        seq_nr: '3'\n"
                "        \"\"\"\n"
                "        add: \"f32[2, 4]\" = torch.ops.aten.add.Tensor(x, y);  x = y = None\n"
                "        return pytree.tree_unflatten((add,), self._out_spec)\n", "export.py");
  g_assert_cmpint (node (g, "x")->meta.val.kind, ==, FX_VAL_TENSOR);
  g_assert_cmpint (node (g, "y")->meta.val.tensor.sizes[1].value, ==, 4);
  g_assert_cmpint (fx_graph_output_node (g)->args[0].kind, ==, FX_ARG_TUPLE);
  g_assert_cmpuint (g->n_nodes, ==, 4);
  fx_graph_free (g);

  /* AOT's joint graph (torch 2.11's aot_joint_graph): the signature takes the pytrees `primals, tangents`; the
     placeholders are their leaves, declared by annotation lines and bound by the prologue, in its order. */
  g = parse_ok ("class inner_f(torch.nn.Module):\n"
                "    def forward(\n"
                "        self,\n"
                "        primals,\n"
                "        tangents,\n"
                "    ):\n"
                "        primals_1: \"f32[8, 8][8, 1]cpu\"  # PlainAOTInput(idx=0)\n"
                "        primals_2: \"f32[4, 8][8, 1]cpu\"  # PlainAOTInput(idx=1)\n"
                "        tangents_1: \"f32[4, 8][8, 1]cpu\"  # TangentAOTInput(output=PlainAOTOutput(idx=0))\n"
                "        primals_1, primals_2, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], "
                "self._in_spec)\n"
                "        mm: \"f32[4, 8][8, 1]cpu\" = torch.ops.aten.mm.default(primals_2, primals_1)\n"
                "        mul: \"f32[4, 8][8, 1]cpu\" = torch.ops.aten.mul.Tensor(tangents_1, mm);  tangents_1 = None\n"
                "        return pytree.tree_unflatten([mm, mul, None], self._out_spec)\n", "joint.py");
  {
    const fx_node *first = g->n_nodes > 0 ? fx_graph_find_node (g, "primals_1") : NULL;

    g_assert_nonnull (first);
    g_assert_cmpint (first->op, ==, FX_OP_PLACEHOLDER);
    g_assert_null (fx_graph_find_node (g, "primals"));
    g_assert_null (fx_graph_find_node (g, "tangents"));
    g_assert_cmpint (node (g, "tangents_1")->op, ==, FX_OP_PLACEHOLDER);
    g_assert_cmpint (node (g, "primals_2")->meta.val.tensor.sizes[0].value, ==, 4);
    g_assert_cmpuint (g->n_nodes, ==, 6);
  }
  fx_graph_free (g);

  /* AOTInductor's provenance graphs: the prologue itself binds leaves that nothing declared (arg2_1). */
  g = parse_ok ("class GraphModule(torch.nn.Module):\n"
                "    def forward(self, arg0_1, arg1_1):\n"
                "        arg0_1, arg1_1, arg2_1, = fx_pytree.tree_flatten_spec([arg0_1, arg1_1], self._in_spec)\n"
                "        add = torch.ops.aten.add.Tensor(arg0_1, arg2_1);  arg0_1 = arg2_1 = None\n"
                "        return (add, arg1_1)\n", "aoti.py");
  g_assert_cmpint (node (g, "arg2_1")->op, ==, FX_OP_PLACEHOLDER);
  g_assert_cmpuint (g->n_nodes, ==, 5);
  fx_graph_free (g);
}

/* ---------------------------------------------------------------- bad input */

typedef struct
{
  const char *name;
  const char *text;
  int line;
  int col;
  const char *message;   /* a substring of the message */
} bad_case;

static const bad_case bad_cases[] = {
  { "undefined-name", "def forward(self, x):\n    y = torch.abs(z)\n    return y\n", 2, 19, "name 'z' is not defined" },
  { "use-before-def", "def forward(self, x):\n    a = b + x\n    b = x + x\n    return a\n", 2, 9, "name 'b' is not defined" },
  { "duplicate", "def forward(self, x):\n    a = x + x\n    a = x * x\n    return a\n", 3, 5, "duplicate name 'a'" },
  { "unbound leaf", "def forward(self, primals):\n    primals_1: \"f32[2]\"\n    a = torch.abs(primals_1)\n    return a\n", 2, 5,
    "an annotation without a value must name a parameter" },
  { "prologue twice", "def forward(self, x):\n    x, x, = fx_pytree.tree_flatten_spec([x], self._in_spec)\n    return x\n", 2, 8,
    "binds 'x' twice" },
  { "duplicate-param", "def forward(self, x, x):\n    return x\n", 1, 22, "duplicate name 'x'" },
  { "unclosed", "def forward(self, x):\n    a = torch.abs(x\n    return a\n", 2, 18, "'(' was never closed" },
  { "mismatched", "def forward(self, x):\n    a = torch.abs(x]\n    return a\n", 2, 20, "does not match" },
  { "unmatched", "def forward(self, x):\n    a = x)\n", 2, 10, "unmatched ')'" },
  { "truncated-string", "def forward(self, x):\n    a = torch.foo(x, 'abc\n", 2, 22, "unterminated string" },
  { "truncated-triple", "def forward(self, x):\n    a = torch.foo(x, '''abc\n\n", 2, 22, "unterminated triple-quoted" },
  { "truncated-body", "def forward(self, x):\n    a = torch.abs(x)\n", 1, 1, "no return statement" },
  { "truncated-def", "def forward(self, x):\n", 2, 1, "expected an indented block" },
  { "truncated-expr", "def forward(self, x):\n    a = torch.abs(x) +\n    return a\n", 2, 23, "expected an expression" },
  { "bad-dedent", "def forward(self, x):\n    a = x + x\n  return a\n", 3, 3, "unindent does not match" },
  { "unexpected-indent", "def forward(self, x):\n    a = x + x\n        return a\n", 3, 9, "unexpected indent" },
  { "binary", "def forward(self, x):\n    a = \x01\x02\n", 2, 9, "invalid character" },
  { "nul", "def forward(self, x):\n    a = x\0\n", 2, 10, "invalid character" },
  { "non-ascii", "def forward(self, x):\n    \xc3\xa9 = x\n", 2, 5, "non-ASCII" },
  { "not-fx", "x = 1\nprint(x)\n", 1, 1, "no forward()" },
  { "empty", "", 1, 1, "no forward()" },
  { "statement-after-return", "def forward(self, x):\n    return x\n    y = x + x\n", 3, 5, "after return" },
  { "expression-statement", "def forward(self, x):\n    torch.abs(x)\n    return x\n", 2, 17, "expected '='" },
  { "nested-call", "def forward(self, x):\n    a = torch.abs(torch.neg(x))\n    return a\n", 2, 19, "call inside an argument" },
  { "nested-op", "def forward(self, x):\n    a = x + x * x\n    return a\n", 2, 13, "operator inside an argument" },
  { "keyword-parameter", "def forward(pass, x):\n    return x\n", 1, 13, "a keyword cannot be a parameter name" },
  { "bad-annotation-syntax", "def forward(self, x):\n    a: = x + x\n    return a\n", 2, 8, "expected an expression" },
  { "dead-value-unknown", "def forward(self, x):\n    a = x + x;  q = None\n    return a\n", 2, 17, "name 'q' is not defined" },
  { "deep-brackets", NULL, 2, 218, "brackets nested too deeply" },
  { "deep-unary", NULL, 2, 0, "expression nested too deeply" },
  { "deep-power", NULL, 2, 0, "expression nested too deeply" },
  { "deep-attributes", NULL, 2, 0, "too many attributes" },
  { "chained-compare", "def forward(self, x):\n    a = x < x < x\n    return a\n", 2, 15, "chained comparisons" },
  { "bad-device", "def forward(self, x):\n    a = torch.foo(x, device = device(type='tpu9'))\n    return a\n", 2, 31, "unknown device" },
  { "bad-escape", "def forward(self, x):\n    a = torch.foo(x, '\\x4')\n    return a\n", 2, 22, "truncated \\xXX" },
  { "second-forward", "def forward(self, x):\n    return x\ndef forward(self, y):\n    return y\n", 3, 5, "second forward" },
  { "load-args-unknown-storage", "def forward(self, x):\n    return x\ndef load_args(reader):\n    reader.tensor(buf9, (2,))  # x\n", 4, 19, "storage 'buf9' is not defined" },
  { "repeated-kwarg", "def forward(self, x):\n    a = torch.foo(x, k0 = 1, dim = 2, k0 = 3)\n    return a\n", 2, 39,
    "keyword argument 'k0' repeated" },
  { "repeated-kwarg-many", "def forward(self, x):\n    a = torch.foo(x, k0 = 0, k1 = 1, k2 = 2, k3 = 3, k4 = 4, k5 = 5, k6 = 6, k7 = 7, k8 = 8, k9 = 9, k10 = 10, k11 = 11, k12 = 12, k13 = 13, k14 = 14, k15 = 15, k16 = 16, k17 = 17, k3 = 9)\n    return a\n", 2, 182, "keyword argument 'k3' repeated" },
  { "torch-logs", "V1121 16:41:15.923000 1273 torch/_dynamo/output_graph.py:2417] [0/0] [__graph_code] TRACED GRAPH\n",
    1, 1, "not FX code: import it" },
  { "number", "def forward(self, x):\n    a = torch.foo(x, 12abc)\n    return a\n", 2, 24, "invalid character 'a' in number" },
};

static void
test_bad_input (gconstpointer data)
{
  const bad_case *bc = data;
  g_autofree char *deep = NULL;
  const char *text = bc->text;
  if (text == NULL)
    {
      /* 5000 levels of nesting: must fail cleanly, not overflow the stack */
      GString *s = g_string_new ("def forward(self, x):\n    a = torch.foo(");
      for (int i = 0; i < 5000; i++)
        g_string_append (s, strcmp (bc->name, "deep-brackets") == 0 ? "["
                            : strcmp (bc->name, "deep-unary") == 0 ? "-"
                            : strcmp (bc->name, "deep-attributes") == 0 ? (i == 0 ? "self.a" : ".a")
                            : "x**");
      g_string_append (s, "x)\n    return a\n");
      deep = g_string_free (s, FALSE);
      text = deep;
    }
  fx_graph *g = (fx_graph *) 0x1;
  fx_diag diag;
  size_t len = bc->text == NULL ? strlen (text) : strlen (text) + (strcmp (bc->name, "nul") == 0 ? 2 : 0);
  fx_status st = fx_parse_fx_code (text, len, "bad.py", &g, &diag);
  char msg[4096];
  fx_diag_format (&diag, msg, sizeof msg);
  g_test_message ("%s", msg);
  g_assert_cmpint (st, ==, FX_ERR_PARSE);
  g_assert_null (g);
  g_assert_cmpint (diag.code, ==, FX_ERR_PARSE);
  g_assert_cmpstr (diag.file, ==, "bad.py");
  g_assert_cmpint (diag.line, ==, bc->line);
  if (bc->col > 0)
    g_assert_cmpint (diag.col, ==, bc->col);
  if (strstr (diag.message, bc->message) == NULL)
    g_error ("message '%s' lacks '%s'", diag.message, bc->message);
  /* the formatted error shows the line and a caret */
  if (diag.line_text[0] != '\0')
    g_assert_nonnull (strstr (msg, "^"));
}

/* Every prefix of a real file fails cleanly or parses; none crashes (run under ASan in CI). */
static void
test_truncations (void)
{
  g_autofree char *path = fixture_path ("graphs/mlp_block.core_aten.0.py");
  gsize len;
  g_autofree char *text = read_file (path, &len);
  size_t ok = 0;
  for (size_t n = 0; n < len; n++)
    {
      fx_graph *g = NULL;
      fx_diag diag;
      fx_status st = fx_parse_fx_code (text, n, "cut.py", &g, &diag);
      if (st == FX_OK)
        {
          ok++;
          fx_graph_free (g);
        }
      else
        {
          g_assert_cmpint (st, ==, FX_ERR_PARSE);
          g_assert_null (g);
          g_assert_cmpint (diag.line, >=, 1);
        }
    }
  /* only cuts right after a complete `return (...)` line can parse */
  g_assert_cmpuint (ok, <=, 3);
}

static void
test_missing_file (void)
{
  fx_graph *g = NULL;
  fx_diag diag;
  g_assert_cmpint (fx_parse_fx_file ("/nonexistent/graph.py", &g, &diag), ==, FX_ERR_IO);
  g_assert_null (g);
}

/* ---------------------------------------------------------------- registration */

static int
cmp_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static void
add_tree (const char *dir, const char *prefix, gboolean (*want) (const char *name), GTestDataFunc fn)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  if (d == NULL)
    return;
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, cmp_names);
  for (guint i = 0; i < names->len; i++)
    {
      const char *nm = names->pdata[i];
      char *path = g_build_filename (dir, nm, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          g_autofree char *sub = g_strdup_printf ("%s/%s", prefix, nm);
          add_tree (path, sub, want, fn);
          g_free (path);
        }
      else if (want (nm))
        {
          g_autofree char *test = g_strdup_printf ("%s/%s", prefix, nm);
          g_test_add_data_func_full (test, path, fn, g_free);
        }
      else
        g_free (path);
    }
  g_ptr_array_free (names, TRUE);
}

static gboolean
is_graph_py (const char *name)
{
  return g_str_has_suffix (name, ".py");
}

static gboolean
is_fx_graph_py (const char *name)
{
  return g_str_has_prefix (name, "fx_graph_") && g_str_has_suffix (name, ".py");
}

static gboolean
is_trace_log (const char *name)
{
  return g_str_has_prefix (name, "dedicated_log_torch_trace") && g_str_has_suffix (name, ".log");
}

static gboolean
is_torch_logs (const char *name)
{
  return strcmp (name, "torch_logs.txt") == 0;
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autofree char *graphs = fixture_path ("graphs");
  g_autofree char *traces = fixture_path ("traces");
  add_tree (graphs, "/fxcode/golden/graphs", is_graph_py, test_graph_fixture);
  add_tree (traces, "/fxcode/golden/debug", is_fx_graph_py, test_debug_fixture);
  add_tree (traces, "/fxcode/golden/logs", is_torch_logs, test_log_fixture);
  /* the TORCH_TRACE logs are copied by the trace importer's change; until then there is nothing to scan */
  add_tree (traces, "/fxcode/golden/trace", is_trace_log, test_trace_fixture);
  g_test_add_func ("/fxcode/forms/code", test_code_form);
  g_test_add_func ("/fxcode/forms/values", test_values);
  g_test_add_func ("/fxcode/forms/children", test_children);
  g_test_add_func ("/fxcode/forms/comments-inplace", test_comments_and_inplace);
  g_test_add_func ("/fxcode/forms/repro", test_repro);
  g_test_add_func ("/fxcode/forms/repro-args-list", test_repro_args_list);
  g_test_add_func ("/fxcode/forms/misc", test_misc_forms);
  for (size_t i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/fxcode/errors/%s", bad_cases[i].name);
      g_test_add_data_func (name, &bad_cases[i], test_bad_input);
    }
  g_test_add_func ("/fxcode/errors/truncations", test_truncations);
  g_test_add_func ("/fxcode/errors/missing-file", test_missing_file);
  return g_test_run ();
}
