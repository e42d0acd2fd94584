class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8, 32, 128]", primals_2: "f32[384, 128]", primals_3: "f32[384]", primals_4: "f32[128, 128]", primals_5: "f32[128]"):
        # File: /home/user/train/programs.py:24 in forward, code: q, k, v = self.qkv(x).split(C, dim=2)
        # the attention block's forward (tests/fixtures/training) on inputs ten times larger: scores of a few
        # hundred; the fused softmax kernel must round its mul and sub as eager does (an FMA contraction there,
        # amplified by exp, failed the accuracy check: -ffp-contract=off)
        big: "f32[8, 32, 128]" = torch.ops.aten.mul.Tensor(primals_1, 10.0);  primals_1 = None
        view: "f32[256, 128]" = torch.ops.aten.view.default(big, [256, 128]);  big = None
        permute: "f32[128, 384]" = torch.ops.aten.permute.default(primals_2, [1, 0]);  primals_2 = None
        addmm: "f32[256, 384]" = torch.ops.aten.addmm.default(primals_3, view, permute);  primals_3 = permute = None
        view_1: "f32[8, 32, 384]" = torch.ops.aten.view.default(addmm, [8, 32, 384]);  addmm = None
        split_with_sizes = torch.ops.aten.split_with_sizes.default(view_1, [128, 128, 128], 2);  view_1 = None
        getitem: "f32[8, 32, 128]" = split_with_sizes[0]
        getitem_1: "f32[8, 32, 128]" = split_with_sizes[1]
        getitem_2: "f32[8, 32, 128]" = split_with_sizes[2];  split_with_sizes = None

        # File: /home/user/train/programs.py:25 in forward, code: q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        view_2: "f32[8, 32, 4, 32]" = torch.ops.aten.view.default(getitem, [8, 32, 4, 32]);  getitem = None
        permute_1: "f32[8, 4, 32, 32]" = torch.ops.aten.permute.default(view_2, [0, 2, 1, 3]);  view_2 = None

        # File: /home/user/train/programs.py:26 in forward, code: k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        view_3: "f32[8, 32, 4, 32]" = torch.ops.aten.view.default(getitem_1, [8, 32, 4, 32]);  getitem_1 = None
        permute_2: "f32[8, 4, 32, 32]" = torch.ops.aten.permute.default(view_3, [0, 2, 1, 3]);  view_3 = None

        # File: /home/user/train/programs.py:27 in forward, code: v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        view_4: "f32[8, 32, 4, 32]" = torch.ops.aten.view.default(getitem_2, [8, 32, 4, 32]);  getitem_2 = None
        permute_3: "f32[8, 4, 32, 32]" = torch.ops.aten.permute.default(view_4, [0, 2, 1, 3]);  view_4 = None

        # File: /home/user/train/programs.py:28 in forward, code: att = (q @ k.transpose(-2, -1)) * (1.0 / (C // self.h) ** 0.5)
        permute_4: "f32[8, 4, 32, 32]" = torch.ops.aten.permute.default(permute_2, [0, 1, 3, 2]);  permute_2 = None
        expand: "f32[8, 4, 32, 32]" = torch.ops.aten.expand.default(permute_1, [8, 4, 32, 32]);  permute_1 = None
        clone: "f32[8, 4, 32, 32]" = torch.ops.aten.clone.default(expand, memory_format = torch.contiguous_format);  expand = None
        view_5: "f32[32, 32, 32]" = torch.ops.aten.view.default(clone, [32, 32, 32]);  clone = None
        expand_1: "f32[8, 4, 32, 32]" = torch.ops.aten.expand.default(permute_4, [8, 4, 32, 32]);  permute_4 = None
        clone_1: "f32[8, 4, 32, 32]" = torch.ops.aten.clone.default(expand_1, memory_format = torch.contiguous_format);  expand_1 = None
        view_6: "f32[32, 32, 32]" = torch.ops.aten.view.default(clone_1, [32, 32, 32]);  clone_1 = None
        bmm: "f32[32, 32, 32]" = torch.ops.aten.bmm.default(view_5, view_6)
        view_7: "f32[8, 4, 32, 32]" = torch.ops.aten.view.default(bmm, [8, 4, 32, 32]);  bmm = None
        mul: "f32[8, 4, 32, 32]" = torch.ops.aten.mul.Tensor(view_7, 0.17677669529663687);  view_7 = None

        # File: /home/user/train/programs.py:29 in forward, code: att = torch.softmax(att, dim=-1)
        _softmax: "f32[8, 4, 32, 32]" = torch.ops.aten._softmax.default(mul, -1, False);  mul = None

        # File: /home/user/train/programs.py:30 in forward, code: y = (att @ v).transpose(1, 2).reshape(B, T, C)
        expand_2: "f32[8, 4, 32, 32]" = torch.ops.aten.expand.default(_softmax, [8, 4, 32, 32])
        view_8: "f32[32, 32, 32]" = torch.ops.aten.view.default(expand_2, [32, 32, 32]);  expand_2 = None
        expand_3: "f32[8, 4, 32, 32]" = torch.ops.aten.expand.default(permute_3, [8, 4, 32, 32]);  permute_3 = None
        clone_2: "f32[8, 4, 32, 32]" = torch.ops.aten.clone.default(expand_3, memory_format = torch.contiguous_format);  expand_3 = None
        view_9: "f32[32, 32, 32]" = torch.ops.aten.view.default(clone_2, [32, 32, 32]);  clone_2 = None
        bmm_1: "f32[32, 32, 32]" = torch.ops.aten.bmm.default(view_8, view_9);  view_8 = None
        view_10: "f32[8, 4, 32, 32]" = torch.ops.aten.view.default(bmm_1, [8, 4, 32, 32]);  bmm_1 = None
        permute_5: "f32[8, 32, 4, 32]" = torch.ops.aten.permute.default(view_10, [0, 2, 1, 3]);  view_10 = None
        clone_3: "f32[8, 32, 4, 32]" = torch.ops.aten.clone.default(permute_5, memory_format = torch.contiguous_format);  permute_5 = None
        view_11: "f32[8, 32, 128]" = torch.ops.aten.view.default(clone_3, [8, 32, 128]);  clone_3 = None

        # File: /home/user/train/programs.py:31 in forward, code: return self.proj(y)
        view_12: "f32[256, 128]" = torch.ops.aten.view.default(view_11, [256, 128]);  view_11 = None
        permute_6: "f32[128, 128]" = torch.ops.aten.permute.default(primals_4, [1, 0])
        addmm_1: "f32[256, 128]" = torch.ops.aten.addmm.default(primals_5, view_12, permute_6);  primals_5 = permute_6 = None
        view_13: "f32[8, 32, 128]" = torch.ops.aten.view.default(addmm_1, [8, 32, 128]);  addmm_1 = None

        # File: /home/user/train/programs.py:30 in forward, code: y = (att @ v).transpose(1, 2).reshape(B, T, C)
        permute_13: "f32[32, 32, 32]" = torch.ops.aten.permute.default(view_9, [0, 2, 1]);  view_9 = None

        # File: /home/user/train/programs.py:28 in forward, code: att = (q @ k.transpose(-2, -1)) * (1.0 / (C // self.h) ** 0.5)
        permute_14: "f32[32, 32, 32]" = torch.ops.aten.permute.default(view_5, [0, 2, 1]);  view_5 = None
        permute_15: "f32[32, 32, 32]" = torch.ops.aten.permute.default(view_6, [0, 2, 1]);  view_6 = None
        return (view_13, primals_4, view, _softmax, view_12, permute_13, permute_14, permute_15)
