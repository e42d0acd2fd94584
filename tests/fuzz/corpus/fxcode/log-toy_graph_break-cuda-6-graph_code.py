class GraphModule(torch.nn.Module):
    def forward(self, L_b_: "f32[10][1]cuda:0", L_x_: "f32[10][1]cuda:0"):
        l_b_ = L_b_
        l_x_ = L_x_

        # File: /home/user/traces/toy_graph_break-cuda/program.py:8 in torch_dynamo_resume_in_toy_example_at_7, code: b = b * -1
        b: "f32[10][1]cuda:0" = l_b_ * -1;  l_b_ = None

        # File: /home/user/traces/toy_graph_break-cuda/program.py:9 in torch_dynamo_resume_in_toy_example_at_7, code: return x * b
        mul_1: "f32[10][1]cuda:0" = l_x_ * b;  l_x_ = b = None
        return (mul_1,)
