class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4, 6, 8][48, 8, 1]cpu", L_w_: "f32[5, 8][8, 1]cpu", L_b_: "f32[5][1]cpu", L_g_: "f32[8][1]cpu", L_m_: "f32[6, 8][8, 1]cpu"):
        l_x_ = L_x_
        l_w_ = L_w_
        l_b_ = L_b_
        l_g_ = L_g_
        l_m_ = L_m_

        # File: /work/torch_level_ops.py:10 in forward, code: h = F.layer_norm(x, (8,), g, None, 1e-5)
        layer_norm: "f32[4, 6, 8][48, 8, 1]cpu" = torch.nn.functional.layer_norm(l_x_, (8,), l_g_, None, 1e-05)
        # File: /work/torch_level_ops.py:11 in forward, code: y = F.linear(h, w, b)
        linear: "f32[4, 6, 5][30, 5, 1]cpu" = torch._C._nn.linear(layer_norm, l_w_, l_b_)
        relu: "f32[4, 6, 5][30, 5, 1]cpu" = torch.relu(linear)
        gelu: "f32[4, 6, 5][30, 5, 1]cpu" = torch._C._nn.gelu(relu, approximate = 'tanh')
        silu: "f32[4, 6, 5][30, 5, 1]cpu" = torch.nn.functional.silu(gelu)
        sigmoid: "f32[4, 6, 5][30, 5, 1]cpu" = linear.sigmoid()
        tanh: "f32[4, 6, 5][30, 5, 1]cpu" = torch.tanh(sigmoid)
        add: "f32[4, 6, 5][30, 5, 1]cpu" = silu + tanh
        mul: "f32[4, 6, 5][30, 5, 1]cpu" = 2.0 * add
        sub: "f32[4, 6, 5][30, 5, 1]cpu" = 1 - mul
        truediv: "f32[4, 6, 5][30, 5, 1]cpu" = sub / 3
        pow_1: "f32[4, 6, 5][30, 5, 1]cpu" = truediv ** 2
        neg: "f32[4, 6, 5][30, 5, 1]cpu" = -pow_1
        sum_1: "f32[4, 5][5, 1]cpu" = neg.sum(dim = 1)
        mean: "f32[4, 6, 1][6, 1, 1]cpu" = neg.mean(-1, keepdim = True)
        softmax: "f32[4, 6, 5][30, 5, 1]cpu" = torch.nn.functional.softmax(neg, dim = -1)
        log_softmax: "f32[4, 6, 5][30, 5, 1]cpu" = neg.log_softmax(1)
        view: "f32[24, 5][5, 1]cpu" = softmax.view(24, 5)
        reshape: "f32[4, 30][30, 1]cpu" = log_softmax.reshape((4, -1))
        permute: "f32[5, 4, 6][1, 30, 5]cpu" = softmax.permute(2, 0, 1)
        transpose: "f32[6, 4, 5][5, 30, 1]cpu" = softmax.transpose(0, 1)
        contiguous: "f32[6, 4, 5][20, 5, 1]cpu" = transpose.contiguous()
        view_1: "f32[120][1]cpu" = contiguous.view(120)
        reshape_1: "f32[120][1]cpu" = transpose.reshape(-1)
        flatten_1: "f32[120][1]cpu" = torch.flatten(permute)
        unsqueeze: "f32[4, 1, 5][5, 5, 1]cpu" = sum_1.unsqueeze(1)
        cat: "f32[4, 7, 5][35, 5, 1]cpu" = torch.cat([neg, unsqueeze], dim = 1)
        exp: "f32[4, 7, 5][35, 5, 1]cpu" = torch.exp(cat)
        getitem: "f32[7, 5][5, 1]cpu" = exp[0]
        getitem_1: "f32[4, 3, 5][35, 5, 1]cpu" = exp[(slice(None, None, None), slice(1, 4, None))]
        t: "f32[8, 6][1, 8]cpu" = l_m_.t()
        matmul: "f32[6, 6][6, 1]cpu" = l_m_ @ t
        flatten: "f32[4, 35][35, 1]cpu" = torch.flatten(exp, 1)
        gt: "b8[4, 6, 1][6, 1, 1]cpu" = mean > 0
        zeros_like: "f32[4, 6, 1][6, 1, 1]cpu" = torch.zeros_like(mean)
        where: "f32[4, 6, 1][6, 1, 1]cpu" = torch.where(gt, mean, zeros_like)
        maximum: "f32[4, 5][5, 1]cpu" = torch.maximum(sum_1, l_b_)
        clamp: "f32[4, 5][5, 1]cpu" = maximum.clamp(min = -1.0, max = 1.0)
        float_1: "f32[4, 5][5, 1]cpu" = clamp.float()
        amax: "f32[4][1]cpu" = torch.amax(float_1, -1)
        dropout: "f32[4, 5][5, 1]cpu" = torch.nn.functional.dropout(float_1, 0.1, False, False)
        return (view, reshape, permute, contiguous, view_1, reshape_1, flatten_1, getitem, getitem_1, matmul, flatten, where, amax, dropout)
