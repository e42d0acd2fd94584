class GraphModule(torch.nn.Module):
    def forward(self, L_a_: "f32[10][1]cuda:0", L_b_: "f32[10][1]cuda:0"):
        l_a_ = L_a_
        l_b_ = L_b_

        # File: /home/user/traces/toy_graph_break-cuda/program.py:6 in toy_example, code: x = a / (torch.abs(a) + 1)
        abs_1: "f32[10][1]cuda:0" = torch.abs(l_a_)
        add: "f32[10][1]cuda:0" = abs_1 + 1;  abs_1 = None
        x: "f32[10][1]cuda:0" = l_a_ / add;  l_a_ = add = None

        # File: /home/user/traces/toy_graph_break-cuda/program.py:7 in toy_example, code: if b.sum() < 0:
        sum_1: "f32[][]cuda:0" = l_b_.sum();  l_b_ = None
        lt: "b8[][]cuda:0" = sum_1 < 0;  sum_1 = None
        return (lt, x)
