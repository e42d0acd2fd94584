class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[10][1]cuda:0", L_b_: "f32[10][1]cuda:0"):
        l_x_ = L_x_
        l_b_ = L_b_

        # File: /home/user/traces/toy_graph_break-cuda/program.py:9 in torch_dynamo_resume_in_toy_example_at_7, code: return x * b
        mul: "f32[10][1]cuda:0" = l_x_ * l_b_;  l_x_ = l_b_ = None
        return (mul,)
