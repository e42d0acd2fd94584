/* test-inductor-cuda-epilogue.c: the GPU path's GEMM epilogue peephole without a device (and its indexed-copy plan
   for embedding, gather and index_select, evaluated on the host): which scheduled
   "addmm/mm then add" pairs become one cuBLASLt call (D = A·B + bias + X) and which must not (another layout, a
   scaled add, the GEMM's result used elsewhere, a broadcast operand). The GPU tests check the fused results. */
#include "../cuda/cuda-test.h"
#include "inductor-cuda-common.h"
#include "fx-inductor-impl.h"
#include "cuda/fx-cuda.h"
#include "fx/pyparse.h"

typedef struct lowered
{
  ind_pipeline pl;
  ind_program *p;
  ind_cuda_layout lay;
  bool have_lay;
} lowered;

static void
lowered_free (lowered *l)
{
  if (l->have_lay)
    ind_cuda_layout_free (&l->lay);
  ind_pipeline_clear (&l->pl);
}

/* inductor's pipeline up to the CUDA code (no device), then the device layout of its plan. */
static fx_status
lower (const fx_graph *graph, const fx_value *inputs, size_t n, lowered *l, fx_diag *diag)
{
  memset (l, 0, sizeof *l);
  ind_pipeline_init (&l->pl, graph, inputs, n);
  l->pl.target = IND_TARGET_CUDA;
  l->pl.build = false;
  l->p = &l->pl.prog;
  fx_status st = ind_pipeline_run (&l->pl, diag);
  if (st == FX_OK)
    {
      ind_cuda_layout_make (l->p, &l->pl.plan, &l->lay);
      l->have_lay = true;
    }
  return st;
}

/* The extern group computing FX node `origin`, or -1. */
static int
group_of (const ind_program *p, const char *origin)
{
  for (int g = 0; g < p->n_groups; g++)
    if (p->groups[g].is_extern)
      {
        const ind_node *n = &p->nodes[p->groups[g].nodes[0]];
        for (size_t o = 0; o < n->n_origins; o++)
          if (strcmp (n->origins[o], origin) == 0)
            return g;
      }
  return -1;
}

static void
test_mlp_block (void)
{
  const char *names[] = { "mlp_block.aten.0", "mlp_block.core_aten.0" };
  for (int f = 0; f < 2; f++)
    {
      fx_diag diag;
      fx_diag_clear (&diag);
      fx_graph *g = icuda_load_fixture (names[f], &diag);
      CHECK (g != NULL, "%s: %s", names[f], diag.message);
      fx_value in[8];
      size_t n = icuda_meta_inputs (g, in, 8);
      lowered l;
      fx_status st = lower (g, in, n, &l, &diag);
      for (size_t i = 0; i < n; i++)
        fx_value_clear (&in[i]);
      fx_graph_free (g);
      CHECK (st == FX_OK, "%s: %s", names[f], diag.message);
      const ind_program *p = l.p;
      int g0 = group_of (p, "addmm"), g1 = group_of (p, "addmm_1");
      ind_gpu_residual r;
      bool first = g0 >= 0 && ind_gpu_residual_match (p, l.lay.pbuf, g0, &r);
      bool second = g1 >= 0 && ind_gpu_residual_match (p, l.lay.pbuf, g1, &r);
      if (!(g0 >= 0 && g1 >= 0 && !first && second))
        {
          fx_buf ir;
          fx_buf_init (&ir);
          ind_dump_ir (p, true, &ir);
          printf ("%s\n", ir.data);
          fx_buf_free (&ir);
        }
      CHECK (g0 >= 0 && g1 >= 0, "%s: no addmm groups", names[f]);
      CHECK (!first, "%s: addmm -> gelu taken for a residual", names[f]);
      CHECK (second, "%s: addmm_1 -> add not fused", names[f]);
      CHECK (r.consumer == g1 + 1, "%s: consumer %d", names[f], r.consumer);
      /* X is x (arg2_1, input 2) read in place; D is the graph's output */
      CHECK (p->bufs[r.x_buf].kind == IND_BUF_INPUT && p->bufs[r.x_buf].input_index == 2 && r.x_offset == 0,
             "%s: X is buf%d", names[f], r.x_buf);
      CHECK (p->bufs[r.d_buf].is_output && l.lay.pbuf[r.d_buf] >= 0, "%s: D is buf%d", names[f], r.d_buf);
      printf ("# %s: %s -> %s fused (X buf%d, D buf%d)\n", names[f], p->groups[g1].name,
              p->groups[r.consumer].name, r.x_buf, r.d_buf);
      lowered_free (&l);
    }
}

/* `graph_text` (aten level) over inputs x [64, 32], w [16, 32], y [64, 16]: does mm/addmm's group fuse its add? */
static int
fuses (const char *graph_text, const char *origin, const int64_t y_strides[2])
{
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_graph *g = NULL;
  if (fx_parse_fx_code (graph_text, strlen (graph_text), "case.py", &g, &diag) != FX_OK)
    {
      printf ("# parse: %s\n", diag.message);
      return -1;
    }
  fx_graph_resolve_ops (g);
  int64_t xs[2] = { 64, 32 }, ws[2] = { 16, 32 }, ys[2] = { 64, 16 }, bs[1] = { 16 };
  fx_value in[4] = {
    fx_value_tensor (fx_tensor_new_meta (FX_DTYPE_F32, 2, xs, NULL)),
    fx_value_tensor (fx_tensor_new_meta (FX_DTYPE_F32, 2, ws, NULL)),
    fx_value_tensor (fx_tensor_new_meta (FX_DTYPE_F32, 2, ys, y_strides)),
    fx_value_tensor (fx_tensor_new_meta (FX_DTYPE_F32, 1, bs, NULL)),
  };
  lowered l;
  fx_status st = lower (g, in, 4, &l, &diag);
  for (int i = 0; i < 4; i++)
    fx_value_clear (&in[i]);
  fx_graph_free (g);
  int result = -1;
  if (st == FX_OK)
    {
      int gi = group_of (l.p, origin);
      ind_gpu_residual r;
      result = gi >= 0 && ind_gpu_residual_match (l.p, l.lay.pbuf, gi, &r);
    }
  else
    printf ("# lower: %s\n", diag.message);
  lowered_free (&l);
  return result;
}

#define HEAD "def forward(self, x, w, y, b):\n    t = torch.ops.aten.t.default(w)\n"

static void
test_cases (void)
{
  static const int64_t row[2] = { 16, 1 }, col[2] = { 1, 64 };
  /* fused: mm + y, y + addmm (either operand order) */
  CHECK (fuses (HEAD "    mm = torch.ops.aten.mm.default(x, t)\n    add = torch.ops.aten.add.Tensor(mm, y)\n"
                "    return (add,)\n", "mm", row) == 1, "mm + y");
  CHECK (fuses (HEAD "    addmm = torch.ops.aten.addmm.default(b, x, t)\n"
                "    add = torch.ops.aten.add.Tensor(y, addmm)\n    return (add,)\n", "addmm", row) == 1, "y + addmm");
  /* not fused: y in another layout, a scaled add, the GEMM's result also returned, addmm + addmm, a broadcast
     row, a subtraction */
  CHECK (fuses (HEAD "    mm = torch.ops.aten.mm.default(x, t)\n    add = torch.ops.aten.add.Tensor(mm, y)\n"
                "    return (add,)\n", "mm", col) == 0, "transposed y fused");
  CHECK (fuses (HEAD "    mm = torch.ops.aten.mm.default(x, t)\n"
                "    add = torch.ops.aten.add.Tensor(mm, y, alpha = 2)\n    return (add,)\n", "mm", row) == 0,
         "alpha 2 fused");
  CHECK (fuses (HEAD "    mm = torch.ops.aten.mm.default(x, t)\n    add = torch.ops.aten.add.Tensor(mm, y)\n"
                "    return (add, mm)\n", "mm", row) == 0, "an output GEMM fused");
  CHECK (fuses (HEAD "    mm = torch.ops.aten.mm.default(x, t)\n    add = torch.ops.aten.add.Tensor(mm, mm)\n"
                "    return (add,)\n", "mm", row) == 0, "mm + mm fused");
  CHECK (fuses (HEAD "    mm = torch.ops.aten.mm.default(x, t)\n    add = torch.ops.aten.add.Tensor(mm, b)\n"
                "    return (add,)\n", "mm", row) == 0, "broadcast row fused");
  CHECK (fuses (HEAD "    mm = torch.ops.aten.mm.default(x, t)\n    sub = torch.ops.aten.sub.Tensor(mm, y)\n"
                "    return (sub,)\n", "mm", row) == 0, "subtraction fused");
}

/* ---------------------------------------------------------------- the indexed copy (fx_cuda_take) */

/* One plan case: a graph parsed with seeded inputs, its interpreter outputs, lowered for the GPU, and the node of
   its extern group "r". */
typedef struct
{
  fx_arena *arena;
  fx_graph *g;
  fx_value *in, *ref;
  size_t n, n_ref;
  lowered l;
  const ind_node *nd;
} plan_case;

static void
plan_case_open (plan_case *pc, const char *name, const char *code, int seed)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  memset (pc, 0, sizeof *pc);
  pc->arena = fx_arena_new ();
  pc->g = icuda_parse_with_inputs (name, code, seed, pc->arena, &pc->in, &pc->n, &diag);
  CHECK (pc->g != NULL, "%s: %s", name, diag.message);
  CHECK_OK (fx_interp_run (pc->g, pc->in, pc->n, NULL, pc->arena, &pc->ref, &pc->n_ref, &diag), &diag);
  CHECK_OK (lower (pc->g, pc->in, pc->n, &pc->l, &diag), &diag);
  int gi = group_of (pc->l.p, "r");
  CHECK (gi >= 0, "%s: no extern group for r", name);
  pc->nd = &pc->l.p->nodes[pc->l.p->groups[gi].nodes[0]];
}

static void
plan_case_close (plan_case *pc)
{
  lowered_free (&pc->l);
  for (size_t i = 0; i < pc->n_ref; i++)
    fx_value_clear (&pc->ref[i]);
  for (size_t i = 0; i < pc->n; i++)
    fx_value_clear (&pc->in[i]);
  fx_arena_free (pc->arena);
  fx_graph_free (pc->g);
}

/* embedding, gather and index_select as the device's indexed copy: the plan ind_gpu_take_plan makes from the
   scheduled program, evaluated here on the host with the kernel's formula over the input tensors, must give the
   interpreter's output; layouts that do not collapse (an index tensor read transposed across the collapsed
   dims) get no plan (they run on the host). */
static void
test_take (void)
{
  static const struct
  {
    const char *name, *code;
    bool planned;
  } cases[] = {
    { "embedding",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, w: \"f32[16, 32][32, 1]cpu\", i: \"i64[8, 5][5, 1]cpu\"):\n"
      "        r = torch.ops.aten.embedding.default(w, i)\n        return (r,)\n", true },
    { "gather dim 1",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[6, 16][16, 1]cpu\", i: \"i64[6, 4][4, 1]cpu\"):\n"
      "        r = torch.ops.aten.gather.default(x, 1, i)\n        return (r,)\n", true },
    { "gather dim 0 of 3-d",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[16, 3, 5][15, 5, 1]cpu\", i: \"i64[4, 3, 5][15, 5, 1]cpu\"):\n"
      "        r = torch.ops.aten.gather.default(x, -3, i)\n        return (r,)\n", true },
    { "index_select of a transposed view",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[16, 24][24, 1]cpu\", i: \"i64[7][1]cpu\"):\n"
      "        t = torch.ops.aten.t.default(x)\n"
      "        r = torch.ops.aten.index_select.default(t, 1, i)\n        return (r,)\n", true },
    { "index_select dim 1 of 3-d",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[3, 16, 4][64, 4, 1]cpu\", i: \"i64[9][1]cpu\"):\n"
      "        r = torch.ops.aten.index_select.default(x, 1, i)\n        return (r,)\n", true },
    { "embedding of transposed indices",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, w: \"f32[16, 8][8, 1]cpu\", i: \"i64[5, 6][6, 1]cpu\"):\n"
      "        t = torch.ops.aten.t.default(i)\n"
      "        r = torch.ops.aten.embedding.default(w, t)\n        return (r,)\n", false },
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      plan_case pc;
      plan_case_open (&pc, cases[c].name, cases[c].code, 3);
      const ind_program *p = pc.l.p;
      const ind_node *nd = pc.nd;
      fx_value *in = pc.in, *ref = pc.ref;
      fx_cuda_take_desc t;
      int svi = -1, ivi = -1;
      bool planned = ind_gpu_take_plan (p, nd, &t, &svi, &ivi);
      CHECK (planned == cases[c].planned, "%s: %s", cases[c].name, planned ? "planned" : "no plan");
      if (planned)
        {
          /* the kernel's formula over the inputs' data (the views' buffers are the inputs here) */
          const ind_view *sv = &p->views[svi], *iv = &p->views[ivi];
          const ind_buffer *OB = &p->bufs[nd->out_buf];
          const fx_tensor *src = in[p->bufs[sv->buf].input_index].u.t, *idx = in[p->bufs[iv->buf].input_index].u.t;
          CHECK (p->bufs[sv->buf].kind == IND_BUF_INPUT && p->bufs[iv->buf].kind == IND_BUF_INPUT, "%s: not inputs",
                 cases[c].name);
          fx_tensor *out = fx_tensor_new_strided (NULL, OB->dtype, OB->ndim, OB->sizes, OB->strides);
          const float *sd = (const float *) fx_tensor_data (src) + sv->offset;
          const int64_t *id = (const int64_t *) fx_tensor_data (idx) + iv->offset;
          float *od = fx_tensor_data (out);
          for (int64_t o = 0; o < t.outer; o++)
            for (int64_t i = 0; i < t.m; i++)
              for (int64_t e = 0; e < t.inner; e++)
                {
                  int64_t k = id[o * t.idx_stride[0] + i * t.idx_stride[1] + e * t.idx_stride[2]];
                  if (k < 0)
                    k += t.v;
                  od[o * t.out_stride[0] + i * t.out_stride[1] + e * t.out_stride[2]]
                    = sd[o * t.src_stride[0] + k * t.src_stride[1] + e * t.src_stride[2]];
                }
          const fx_tensor *want = ref[0].u.t;
          bool same = fx_tensor_numel (want) == t.outer * t.m * t.inner && fx_tensor_numel (want) == fx_tensor_numel (out);
          for (int64_t e = 0; same && e < fx_tensor_numel (want); e++)
            same = fx_tensor_get_f64 (want, e) == fx_tensor_get_f64 (out, e);
          fx_tensor_unref (out);
          CHECK (same, "%s: the indexed copy differs from the interpreter", cases[c].name);
        }
      plan_case_close (&pc);
    }
}

/* ---------------------------------------------------------------- the arg-reduction (fx_cuda_argreduce) */

/* (a, ia) kept over (b, ib): the kernel's rule (a NaN wins, its first; ties: the first index) */
static bool
arg_better (double a, int64_t ia, double b, int64_t ib, bool is_min)
{
  bool an = a != a, bn = b != b;
  if (an || bn)
    return an && (!bn || ia < ib);
  if (a == b)
    return ia < ib;
  return is_min ? a < b : a > b;
}

/* max.dim, min.dim, argmax and argmin as the device's arg-reduction: ind_gpu_argreduce_plan's desc evaluated on the
   host with the kernel's rule must give the interpreter's values and indices; argmax over all elements gets no plan
   (it runs on the host). */
static void
test_argreduce (void)
{
  static const struct
  {
    const char *name, *code;
    bool planned, pair;
  } cases[] = {
    { "max.dim rows",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[12, 40][40, 1]cpu\"):\n"
      "        r = torch.ops.aten.max.dim(x, -1)\n"
      "        v = r[0]\n        i = r[1]\n        return (v, i)\n", true, true },
    { "min.dim dim 1 of 3-d, keepdim",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[3, 17, 5][85, 5, 1]cpu\"):\n"
      "        r = torch.ops.aten.min.dim(x, 1, True)\n"
      "        v = r[0]\n        i = r[1]\n        return (v, i)\n", true, true },
    { "argmax dim 0 (columns)",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[33, 7][7, 1]cpu\"):\n"
      "        r = torch.ops.aten.argmax.default(x, 0)\n        return (r,)\n", true, false },
    { "argmin of a transposed view",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, x: \"f64[9, 20][20, 1]cpu\"):\n"
      "        t = torch.ops.aten.t.default(x)\n"
      "        r = torch.ops.aten.argmin.default(t, 1)\n        return (r,)\n", true, false },
    { "argmax over all elements",
      "class <lambda>(torch.nn.Module):\n"
      "    def forward(self, x: \"f32[6, 8][8, 1]cpu\"):\n"
      "        r = torch.ops.aten.argmax.default(x)\n        return (r,)\n", false, false },
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      plan_case pc;
      plan_case_open (&pc, cases[c].name, cases[c].code, 5);
      const ind_program *p = pc.l.p;
      const ind_node *nd = pc.nd;
      fx_value *in = pc.in, *ref = pc.ref;
      fx_cuda_argreduce_desc t;
      int svi = -1, vb = -1, ib = -1;
      bool planned = ind_gpu_argreduce_plan (p, nd, &t, &svi, &vb, &ib);
      CHECK (planned == cases[c].planned, "%s: %s", cases[c].name, planned ? "planned" : "no plan");
      if (planned)
        {
          const ind_view *sv = &p->views[svi];
          CHECK (p->bufs[sv->buf].kind == IND_BUF_INPUT, "%s: the source is not the input", cases[c].name);
          CHECK ((vb >= 0) == cases[c].pair, "%s: values buffer %d", cases[c].name, vb);
          const fx_tensor *src = in[p->bufs[sv->buf].input_index].u.t;
          const ind_buffer *IB = &p->bufs[ib], *VB = vb >= 0 ? &p->bufs[vb] : NULL;
          fx_tensor *idx = fx_tensor_new_strided (NULL, FX_DTYPE_I64, IB->ndim, IB->sizes, IB->strides);
          fx_tensor *val = VB ? fx_tensor_new_strided (NULL, VB->dtype, VB->ndim, VB->sizes, VB->strides) : NULL;
          int64_t *id = fx_tensor_data (idx);
          for (int64_t o = 0; o < t.outer; o++)
            for (int64_t e = 0; e < t.inner; e++)
              {
                int64_t base = sv->offset + o * t.src_stride[0] + e * t.src_stride[2], bi = 0;
                double best = fx_tensor_get_f64 (src, base);
                for (int64_t k = 1; k < t.r; k++)
                  {
                    double v = fx_tensor_get_f64 (src, base + k * t.src_stride[1]);
                    if (arg_better (v, k, best, bi, t.is_min))
                      best = v, bi = k;
                  }
                id[o * t.idx_stride[0] + e * t.idx_stride[1]] = bi;
                if (val)
                  fx_tensor_set_f64 (val, o * t.val_stride[0] + e * t.val_stride[1], best);
              }
          const fx_tensor *want_i = ref[cases[c].pair ? 1 : 0].u.t;
          bool same = fx_tensor_numel (want_i) == t.outer * t.inner && fx_tensor_numel (idx) == fx_tensor_numel (want_i);
          for (int64_t e = 0; same && e < fx_tensor_numel (want_i); e++)
            same = fx_tensor_get_f64 (want_i, e) == fx_tensor_get_f64 (idx, e);
          CHECK (same, "%s: the indices differ from the interpreter", cases[c].name);
          if (val)
            {
              const fx_tensor *want_v = ref[0].u.t;
              for (int64_t e = 0; same && e < fx_tensor_numel (want_v); e++)
                same = fx_tensor_get_f64 (want_v, e) == fx_tensor_get_f64 (val, e);
              CHECK (same, "%s: the values differ from the interpreter", cases[c].name);
              fx_tensor_unref (val);
            }
          fx_tensor_unref (idx);
        }
      plan_case_close (&pc);
    }
}

int
main (void)
{
  cuda_test_run ("/inductor-cuda/epilogue/mlp-block", test_mlp_block);
  cuda_test_run ("/inductor-cuda/epilogue/cases", test_cases);
  cuda_test_run ("/inductor-cuda/take/layouts", test_take);
  cuda_test_run ("/inductor-cuda/argreduce/layouts", test_argreduce);
  return cuda_test_finish ();
}
