class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[256][1]cuda:0", arg1_1: "f32[256][1]cuda:0", arg2_1: "f32[32, 256][256, 1]cuda:0", arg3_1: "f32[1024, 256][256, 1]cuda:0", arg4_1: "f32[1024][1]cuda:0", arg5_1: "f32[256, 1024][1024, 1]cuda:0", arg6_1: "f32[256][1]cuda:0", arg7_1: "f32[256][1]cuda:0", arg8_1: "f32[256][1]cuda:0", arg9_1: "f32[1024, 256][256, 1]cuda:0", arg10_1: "f32[1024][1]cuda:0", arg11_1: "f32[256, 1024][1024, 1]cuda:0", arg12_1: "f32[256][1]cuda:0", arg13_1: "f32[10, 256][256, 1]cuda:0", arg14_1: "f32[10][1]cuda:0"):
        # File: /home/user/traces/mlp_module-cuda/program.py:13 in forward, code: return x + self.fc2(self.act(self.fc1(self.ln(x))))
        var_mean = torch.ops.aten.var_mean.correction(arg2_1, [1], correction = 0, keepdim = True)
        getitem: "f32[32, 1][1, 1]cuda:0" = var_mean[0]
        getitem_1: "f32[32, 1][1, 1]cuda:0" = var_mean[1];  var_mean = None
        sub: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.sub.Tensor(arg2_1, getitem_1);  getitem_1 = None
        add: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.add.Tensor(getitem, 1e-05);  getitem = None
        rsqrt: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.rsqrt.default(add);  add = None
        mul: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mul.Tensor(sub, rsqrt);  sub = rsqrt = None
        mul_1: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul, arg0_1);  mul = arg0_1 = None
        add_1: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(mul_1, arg1_1);  mul_1 = arg1_1 = None
        permute: "f32[256, 1024][1, 256]cuda:0" = torch.ops.aten.permute.default(arg3_1, [1, 0]);  arg3_1 = None
        mm_default_3: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mm.default(add_1, permute);  add_1 = permute = None
        add_tensor_3: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.add.Tensor(arg4_1, mm_default_3);  arg4_1 = mm_default_3 = None
        mul_2: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(add_tensor_3, 0.5)
        mul_3: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(add_tensor_3, 0.7071067811865476);  add_tensor_3 = None
        erf: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.erf.default(mul_3);  mul_3 = None
        add_2: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.add.Tensor(erf, 1);  erf = None
        mul_4: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_2, add_2);  mul_2 = add_2 = None
        permute_1: "f32[1024, 256][1, 1024]cuda:0" = torch.ops.aten.permute.default(arg5_1, [1, 0]);  arg5_1 = None
        mm_default_2: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mm.default(mul_4, permute_1);  mul_4 = permute_1 = None
        add_tensor_2: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(arg6_1, mm_default_2);  arg6_1 = mm_default_2 = None
        add_3: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(arg2_1, add_tensor_2);  arg2_1 = add_tensor_2 = None
        var_mean_1 = torch.ops.aten.var_mean.correction(add_3, [1], correction = 0, keepdim = True)
        getitem_2: "f32[32, 1][1, 1]cuda:0" = var_mean_1[0]
        getitem_3: "f32[32, 1][1, 1]cuda:0" = var_mean_1[1];  var_mean_1 = None

        # File: /home/user/traces/mlp_module-cuda/program.py:20 in forward, code: return torch.softmax(self.head(self.blocks(x)), dim=-1)
        full_default: "f32[2][1]cuda:0" = torch.ops.aten.full.default([2], 0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        cat_default: "f32[12][1]cuda:0" = torch.ops.aten.cat.default([arg14_1, full_default]);  arg14_1 = full_default = None

        # File: /home/user/traces/mlp_module-cuda/program.py:13 in forward, code: return x + self.fc2(self.act(self.fc1(self.ln(x))))
        sub_1: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.sub.Tensor(add_3, getitem_3);  getitem_3 = None
        add_4: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.add.Tensor(getitem_2, 1e-05);  getitem_2 = None
        rsqrt_1: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.rsqrt.default(add_4);  add_4 = None
        mul_5: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mul.Tensor(sub_1, rsqrt_1);  sub_1 = rsqrt_1 = None
        mul_6: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_5, arg7_1);  mul_5 = arg7_1 = None
        add_5: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(mul_6, arg8_1);  mul_6 = arg8_1 = None
        permute_2: "f32[256, 1024][1, 256]cuda:0" = torch.ops.aten.permute.default(arg9_1, [1, 0]);  arg9_1 = None
        mm_default_1: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mm.default(add_5, permute_2);  add_5 = permute_2 = None
        add_tensor_1: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.add.Tensor(arg10_1, mm_default_1);  arg10_1 = mm_default_1 = None
        mul_7: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(add_tensor_1, 0.5)
        mul_8: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(add_tensor_1, 0.7071067811865476);  add_tensor_1 = None
        erf_1: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.erf.default(mul_8);  mul_8 = None
        add_6: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.add.Tensor(erf_1, 1);  erf_1 = None
        mul_9: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_7, add_6);  mul_7 = add_6 = None
        permute_3: "f32[1024, 256][1, 1024]cuda:0" = torch.ops.aten.permute.default(arg11_1, [1, 0]);  arg11_1 = None
        mm_default: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mm.default(mul_9, permute_3);  mul_9 = permute_3 = None
        add_tensor: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(arg12_1, mm_default);  arg12_1 = mm_default = None
        add_7: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(add_3, add_tensor);  add_3 = add_tensor = None

        # File: /home/user/traces/mlp_module-cuda/program.py:20 in forward, code: return torch.softmax(self.head(self.blocks(x)), dim=-1)
        permute_4: "f32[256, 10][1, 256]cuda:0" = torch.ops.aten.permute.default(arg13_1, [1, 0]);  arg13_1 = None
        constant_pad_nd_default: "f32[256, 12][12, 1]cuda:0" = torch.ops.aten.constant_pad_nd.default(permute_4, [0, 2, 0, 0]);  permute_4 = None
        addmm_default: "f32[32, 12][12, 1]cuda:0" = torch.ops.aten.addmm.default(cat_default, add_7, constant_pad_nd_default);  cat_default = add_7 = constant_pad_nd_default = None
        slice_tensor: "f32[32, 10][12, 1]cuda:0" = torch.ops.aten.slice.Tensor(addmm_default, 1, 0, -2);  addmm_default = None

        # No stacktrace found for following nodes
        prepare_softmax_online_default = torch.ops.prims.prepare_softmax_online.default(slice_tensor, -1)
        getitem_4: "f32[32, 1][1, 1]cuda:0" = prepare_softmax_online_default[0]
        getitem_5: "f32[32, 1][1, 1]cuda:0" = prepare_softmax_online_default[1];  prepare_softmax_online_default = None
        sub_tensor: "f32[32, 10][10, 1]cuda:0" = torch.ops.aten.sub.Tensor(slice_tensor, getitem_4);  slice_tensor = getitem_4 = None
        exp_default: "f32[32, 10][10, 1]cuda:0" = torch.ops.aten.exp.default(sub_tensor);  sub_tensor = None

        # File: /home/user/traces/mlp_module-cuda/program.py:20 in forward, code: return torch.softmax(self.head(self.blocks(x)), dim=-1)
        div: "f32[32, 10][10, 1]cuda:0" = torch.ops.aten.div.Tensor(exp_default, getitem_5);  exp_default = getitem_5 = None
        return (div,)
