/* test-inductor-cuda-epilogue.c: the GPU path's GEMM epilogue peephole without a device: which scheduled
   "addmm/mm then add" pairs become one cuBLASLt call (D = A·B + bias + X) and which must not (another layout, a
   scaled add, the GEMM's result used elsewhere, a broadcast operand). The GPU tests check the fused results. */
#include "../cuda/cuda-test.h"
#include "inductor-cuda-common.h"
#include "fx-inductor-impl.h"

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

int
main (void)
{
  cuda_test_run ("/inductor-cuda/epilogue/mlp-block", test_mlp_block);
  cuda_test_run ("/inductor-cuda/epilogue/cases", test_cases);
  return cuda_test_finish ();
}
