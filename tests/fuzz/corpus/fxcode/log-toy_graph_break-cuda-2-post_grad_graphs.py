class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[10][1]cuda:0", arg1_1: "f32[10][1]cuda:0"):
        # File: /home/user/traces/toy_graph_break-cuda/program.py:7 in toy_example, code: if b.sum() < 0:
        sum_1: "f32[][]cuda:0" = torch.ops.aten.sum.default(arg1_1);  arg1_1 = None
        lt: "b8[][]cuda:0" = torch.ops.aten.lt.Scalar(sum_1, 0);  sum_1 = None

        # File: /home/user/traces/toy_graph_break-cuda/program.py:6 in toy_example, code: x = a / (torch.abs(a) + 1)
        abs_1: "f32[10][1]cuda:0" = torch.ops.aten.abs.default(arg0_1)
        add: "f32[10][1]cuda:0" = torch.ops.aten.add.Tensor(abs_1, 1);  abs_1 = None
        div: "f32[10][1]cuda:0" = torch.ops.aten.div.Tensor(arg0_1, add);  arg0_1 = add = None
        return (lt, div)
