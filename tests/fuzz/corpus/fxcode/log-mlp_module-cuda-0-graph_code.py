class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_blocks_modules_0_modules_ln_parameters_weight_: "f32[256][1]cuda:0", L_self_modules_blocks_modules_0_modules_ln_parameters_bias_: "f32[256][1]cuda:0", L_x_: "f32[32, 256][256, 1]cuda:0", L_self_modules_blocks_modules_0_modules_fc1_parameters_weight_: "f32[1024, 256][256, 1]cuda:0", L_self_modules_blocks_modules_0_modules_fc1_parameters_bias_: "f32[1024][1]cuda:0", L_self_modules_blocks_modules_0_modules_fc2_parameters_weight_: "f32[256, 1024][1024, 1]cuda:0", L_self_modules_blocks_modules_0_modules_fc2_parameters_bias_: "f32[256][1]cuda:0", L_self_modules_blocks_modules_1_modules_ln_parameters_weight_: "f32[256][1]cuda:0", L_self_modules_blocks_modules_1_modules_ln_parameters_bias_: "f32[256][1]cuda:0", L_self_modules_blocks_modules_1_modules_fc1_parameters_weight_: "f32[1024, 256][256, 1]cuda:0", L_self_modules_blocks_modules_1_modules_fc1_parameters_bias_: "f32[1024][1]cuda:0", L_self_modules_blocks_modules_1_modules_fc2_parameters_weight_: "f32[256, 1024][1024, 1]cuda:0", L_self_modules_blocks_modules_1_modules_fc2_parameters_bias_: "f32[256][1]cuda:0", L_self_modules_head_parameters_weight_: "f32[10, 256][256, 1]cuda:0", L_self_modules_head_parameters_bias_: "f32[10][1]cuda:0"):
        l_self_modules_blocks_modules_0_modules_ln_parameters_weight_ = L_self_modules_blocks_modules_0_modules_ln_parameters_weight_
        l_self_modules_blocks_modules_0_modules_ln_parameters_bias_ = L_self_modules_blocks_modules_0_modules_ln_parameters_bias_
        l_x_ = L_x_
        l_self_modules_blocks_modules_0_modules_fc1_parameters_weight_ = L_self_modules_blocks_modules_0_modules_fc1_parameters_weight_
        l_self_modules_blocks_modules_0_modules_fc1_parameters_bias_ = L_self_modules_blocks_modules_0_modules_fc1_parameters_bias_
        l_self_modules_blocks_modules_0_modules_fc2_parameters_weight_ = L_self_modules_blocks_modules_0_modules_fc2_parameters_weight_
        l_self_modules_blocks_modules_0_modules_fc2_parameters_bias_ = L_self_modules_blocks_modules_0_modules_fc2_parameters_bias_
        l_self_modules_blocks_modules_1_modules_ln_parameters_weight_ = L_self_modules_blocks_modules_1_modules_ln_parameters_weight_
        l_self_modules_blocks_modules_1_modules_ln_parameters_bias_ = L_self_modules_blocks_modules_1_modules_ln_parameters_bias_
        l_self_modules_blocks_modules_1_modules_fc1_parameters_weight_ = L_self_modules_blocks_modules_1_modules_fc1_parameters_weight_
        l_self_modules_blocks_modules_1_modules_fc1_parameters_bias_ = L_self_modules_blocks_modules_1_modules_fc1_parameters_bias_
        l_self_modules_blocks_modules_1_modules_fc2_parameters_weight_ = L_self_modules_blocks_modules_1_modules_fc2_parameters_weight_
        l_self_modules_blocks_modules_1_modules_fc2_parameters_bias_ = L_self_modules_blocks_modules_1_modules_fc2_parameters_bias_
        l_self_modules_head_parameters_weight_ = L_self_modules_head_parameters_weight_
        l_self_modules_head_parameters_bias_ = L_self_modules_head_parameters_bias_

        # File: /home/user/traces/mlp_module-cuda/program.py:13 in forward, code: return x + self.fc2(self.act(self.fc1(self.ln(x))))
        layer_norm: "f32[32, 256][256, 1]cuda:0" = torch.nn.functional.layer_norm(l_x_, (256,), l_self_modules_blocks_modules_0_modules_ln_parameters_weight_, l_self_modules_blocks_modules_0_modules_ln_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_0_modules_ln_parameters_weight_ = l_self_modules_blocks_modules_0_modules_ln_parameters_bias_ = None
        linear: "f32[32, 1024][1024, 1]cuda:0" = torch._C._nn.linear(layer_norm, l_self_modules_blocks_modules_0_modules_fc1_parameters_weight_, l_self_modules_blocks_modules_0_modules_fc1_parameters_bias_);  layer_norm = l_self_modules_blocks_modules_0_modules_fc1_parameters_weight_ = l_self_modules_blocks_modules_0_modules_fc1_parameters_bias_ = None
        gelu: "f32[32, 1024][1024, 1]cuda:0" = torch._C._nn.gelu(linear, approximate = 'none');  linear = None
        linear_1: "f32[32, 256][256, 1]cuda:0" = torch._C._nn.linear(gelu, l_self_modules_blocks_modules_0_modules_fc2_parameters_weight_, l_self_modules_blocks_modules_0_modules_fc2_parameters_bias_);  gelu = l_self_modules_blocks_modules_0_modules_fc2_parameters_weight_ = l_self_modules_blocks_modules_0_modules_fc2_parameters_bias_ = None
        input_1: "f32[32, 256][256, 1]cuda:0" = l_x_ + linear_1;  l_x_ = linear_1 = None
        layer_norm_1: "f32[32, 256][256, 1]cuda:0" = torch.nn.functional.layer_norm(input_1, (256,), l_self_modules_blocks_modules_1_modules_ln_parameters_weight_, l_self_modules_blocks_modules_1_modules_ln_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_1_modules_ln_parameters_weight_ = l_self_modules_blocks_modules_1_modules_ln_parameters_bias_ = None
        linear_2: "f32[32, 1024][1024, 1]cuda:0" = torch._C._nn.linear(layer_norm_1, l_self_modules_blocks_modules_1_modules_fc1_parameters_weight_, l_self_modules_blocks_modules_1_modules_fc1_parameters_bias_);  layer_norm_1 = l_self_modules_blocks_modules_1_modules_fc1_parameters_weight_ = l_self_modules_blocks_modules_1_modules_fc1_parameters_bias_ = None
        gelu_1: "f32[32, 1024][1024, 1]cuda:0" = torch._C._nn.gelu(linear_2, approximate = 'none');  linear_2 = None
        linear_3: "f32[32, 256][256, 1]cuda:0" = torch._C._nn.linear(gelu_1, l_self_modules_blocks_modules_1_modules_fc2_parameters_weight_, l_self_modules_blocks_modules_1_modules_fc2_parameters_bias_);  gelu_1 = l_self_modules_blocks_modules_1_modules_fc2_parameters_weight_ = l_self_modules_blocks_modules_1_modules_fc2_parameters_bias_ = None
        input_2: "f32[32, 256][256, 1]cuda:0" = input_1 + linear_3;  input_1 = linear_3 = None

        # File: /home/user/traces/mlp_module-cuda/program.py:20 in forward, code: return torch.softmax(self.head(self.blocks(x)), dim=-1)
        linear_4: "f32[32, 10][10, 1]cuda:0" = torch._C._nn.linear(input_2, l_self_modules_head_parameters_weight_, l_self_modules_head_parameters_bias_);  input_2 = l_self_modules_head_parameters_weight_ = l_self_modules_head_parameters_bias_ = None
        softmax: "f32[32, 10][10, 1]cuda:0" = torch.softmax(linear_4, dim = -1);  linear_4 = None
        return (softmax,)
