/* sym-graph.h: the batch-dynamic graph the symbolic-kernel tests compile, as Dynamo writes it, on either device:
   a softmax-style reduction per row, a GEMM, and a column sum over the batch (the symbolic dim reduced). */
#pragma once

/* DEVICE: "cpu" or "cuda", a string literal. */
#define FX_TEST_SYM_GRAPH(DEVICE)                                                                               \
  "class GraphModule(torch.nn.Module):\n"                                                                       \
  "    def forward(self, s0: \"Sym(s0)\", L_x_: \"f32[s0, 64][64, 1]" DEVICE "\", L_y_: \"f32[64][1]" DEVICE   \
  "\", L_w_: \"f32[64, 32][32, 1]" DEVICE "\"):\n"                                                             \
  "        add = torch.ops.aten.add.Tensor(L_x_, L_y_)\n"                                                       \
  "        view = torch.ops.aten.view.default(add, [s0, 8, 8])\n"                                               \
  "        amax = torch.ops.aten.amax.default(view, [2], True)\n"                                               \
  "        sub = torch.ops.aten.sub.Tensor(view, amax)\n"                                                       \
  "        exp = torch.ops.aten.exp.default(sub)\n"                                                             \
  "        sum_1 = torch.ops.aten.sum.dim_IntList(exp, [2])\n"                                                  \
  "        mm = torch.ops.aten.mm.default(add, L_w_)\n"                                                         \
  "        relu = torch.ops.aten.relu.default(mm)\n"                                                            \
  "        sum_2 = torch.ops.aten.sum.dim_IntList(relu, [0])\n"                                                 \
  "        return (sum_1, relu, sum_2)\n"
