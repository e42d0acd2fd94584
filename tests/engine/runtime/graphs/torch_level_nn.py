class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[2, 5, 16][80, 16, 1]cpu", L_wq_: "f32[16, 16][16, 1]cpu", L_emb_: "f32[16, 16][16, 1]cpu", L_ids_: "i64[2, 5][5, 1]cpu", L_img_: "f32[2, 3, 8, 8][192, 64, 8, 1]cpu", L_cw_: "f32[4, 3, 3, 3][27, 9, 3, 1]cpu", L_cb_: "f32[4][1]cpu", L_logits_: "f32[6, 16][16, 1]cpu", L_tgt_: "i64[6][1]cpu"):
        l_x_ = L_x_
        l_wq_ = L_wq_
        l_emb_ = L_emb_
        l_ids_ = L_ids_
        l_img_ = L_img_
        l_cw_ = L_cw_
        l_cb_ = L_cb_
        l_logits_ = L_logits_
        l_tgt_ = L_tgt_

        # File: /work/torch_level_nn.py:12 in forward, code: q = self.wq(x).view(2, 5, 2, 8).transpose(1, 2)
        q: "f32[2, 5, 16][80, 16, 1]cpu" = torch._C._nn.linear(l_x_, l_wq_)
        view: "f32[2, 5, 2, 8][80, 16, 8, 1]cpu" = q.view(2, 5, 2, 8)
        transpose: "f32[2, 2, 5, 8][80, 8, 16, 1]cpu" = view.transpose(1, 2)
        # File: /work/torch_level_nn.py:13 in forward, code: s = (q @ q.transpose(-2, -1)) * 8 ** -0.5
        transpose_1: "f32[2, 2, 8, 5][80, 8, 1, 16]cpu" = transpose.transpose(-2, -1)
        matmul: "f32[2, 2, 5, 5][50, 25, 5, 1]cpu" = transpose @ transpose_1
        mul: "f32[2, 2, 5, 5][50, 25, 5, 1]cpu" = matmul * 0.35355339059327373
        ones: "f32[5, 5][5, 1]cpu" = torch.ones(5, 5, dtype = torch.float32, device = device(type='cpu'))
        tril: "f32[5, 5][5, 1]cpu" = torch.tril(ones)
        eq: "b8[5, 5][5, 1]cpu" = tril == 0
        masked_fill: "f32[2, 2, 5, 5][50, 25, 5, 1]cpu" = mul.masked_fill(eq, -1000000000.0)
        arange: "i64[5][1]cpu" = torch.arange(5)
        arange_1: "i64[3][1]cpu" = torch.arange(1, 7, 2)
        mul_2: "i64[5][1]cpu" = arange * 3
        softmax: "f32[2, 2, 5, 5][50, 25, 5, 1]cpu" = masked_fill.softmax(dim = -1)
        matmul_1: "f32[2, 2, 5, 8][80, 40, 8, 1]cpu" = softmax @ transpose
        transpose_2: "f32[2, 5, 2, 8][80, 8, 40, 1]cpu" = matmul_1.transpose(1, 2)
        reshape: "f32[2, 5, 16][80, 16, 1]cpu" = transpose_2.reshape(2, 5, 16)
        chunk = reshape.chunk(2, dim = -1)
        getitem: "f32[2, 5, 8][80, 16, 1]cpu" = chunk[0]
        getitem_1: "f32[2, 5, 8][80, 16, 1]cpu" = chunk[1];  chunk = None
        add: "f32[2, 5, 8][40, 8, 1]cpu" = getitem + getitem_1
        # File: /work/torch_level_nn.py:15 in forward, code: e = F.embedding(ids, emb) + reshape
        embedding: "f32[2, 5, 16][80, 16, 1]cpu" = torch.nn.functional.embedding(l_ids_, l_emb_)
        add_1: "f32[2, 5, 16][80, 16, 1]cpu" = reshape + embedding
        # File: /work/torch_level_nn.py:17 in forward, code: c = F.pad(torch.relu(torch.conv2d(img, cw, cb, 1, 1)), (1, 1, 2, 0)).mean((2, 3))
        conv2d: "f32[2, 4, 8, 8][256, 64, 8, 1]cpu" = torch.conv2d(l_img_, l_cw_, l_cb_, 1, 1)
        relu: "f32[2, 4, 8, 8][256, 64, 8, 1]cpu" = torch.relu(conv2d)
        pad: "f32[2, 4, 10, 10][400, 100, 10, 1]cpu" = torch.nn.functional.pad(relu, (1, 1, 2, 0))
        mean: "f32[2, 4][4, 1]cpu" = pad.mean((2, 3))
        # File: /work/torch_level_nn.py:19 in forward, code: loss = F.cross_entropy(logits, tgt)
        cross_entropy: "f32[][]cpu" = torch.nn.functional.cross_entropy(l_logits_, l_tgt_, None, None, -100, None, 'mean', 0.0)
        return (add, add_1, mean, cross_entropy, mul_2, arange_1)
