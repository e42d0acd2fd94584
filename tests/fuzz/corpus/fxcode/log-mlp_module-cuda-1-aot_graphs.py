class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[256][1]cuda:0", arg1_1: "f32[256][1]cuda:0", arg2_1: "f32[32, 256][256, 1]cuda:0", arg3_1: "f32[1024, 256][256, 1]cuda:0", arg4_1: "f32[1024][1]cuda:0", arg5_1: "f32[256, 1024][1024, 1]cuda:0", arg6_1: "f32[256][1]cuda:0", arg7_1: "f32[256][1]cuda:0", arg8_1: "f32[256][1]cuda:0", arg9_1: "f32[1024, 256][256, 1]cuda:0", arg10_1: "f32[1024][1]cuda:0", arg11_1: "f32[256, 1024][1024, 1]cuda:0", arg12_1: "f32[256][1]cuda:0", arg13_1: "f32[10, 256][256, 1]cuda:0", arg14_1: "f32[10][1]cuda:0"):
        # File: /home/user/traces/mlp_module-cuda/program.py:13 in forward, code: return x + self.fc2(self.act(self.fc1(self.ln(x))))
        var_mean = torch.ops.aten.var_mean.correction(arg2_1, [1], correction = 0, keepdim = True)
        getitem: "f32[32, 1][1, 1]cuda:0" = var_mean[0]
        getitem_1: "f32[32, 1][1, 1]cuda:0" = var_mean[1];  var_mean = None
        add: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.add.Tensor(getitem, 1e-05);  getitem = None
        rsqrt: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.rsqrt.default(add);  add = None
        sub: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.sub.Tensor(arg2_1, getitem_1);  getitem_1 = None
        mul: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mul.Tensor(sub, rsqrt);  sub = rsqrt = None
        mul_1: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul, arg0_1);  mul = arg0_1 = None
        add_1: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(mul_1, arg1_1);  mul_1 = arg1_1 = None
        permute: "f32[256, 1024][1, 256]cuda:0" = torch.ops.aten.permute.default(arg3_1, [1, 0]);  arg3_1 = None
        addmm: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.addmm.default(arg4_1, add_1, permute);  arg4_1 = add_1 = permute = None
        mul_2: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(addmm, 0.5)
        mul_3: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(addmm, 0.7071067811865476);  addmm = None
        erf: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.erf.default(mul_3);  mul_3 = None
        add_2: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.add.Tensor(erf, 1);  erf = None
        mul_4: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_2, add_2);  mul_2 = add_2 = None
        permute_1: "f32[1024, 256][1, 1024]cuda:0" = torch.ops.aten.permute.default(arg5_1, [1, 0]);  arg5_1 = None
        addmm_1: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.addmm.default(arg6_1, mul_4, permute_1);  arg6_1 = mul_4 = permute_1 = None
        add_3: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(arg2_1, addmm_1);  arg2_1 = addmm_1 = None
        var_mean_1 = torch.ops.aten.var_mean.correction(add_3, [1], correction = 0, keepdim = True)
        getitem_2: "f32[32, 1][1, 1]cuda:0" = var_mean_1[0]
        getitem_3: "f32[32, 1][1, 1]cuda:0" = var_mean_1[1];  var_mean_1 = None
        add_4: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.add.Tensor(getitem_2, 1e-05);  getitem_2 = None
        rsqrt_1: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.rsqrt.default(add_4);  add_4 = None
        sub_1: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.sub.Tensor(add_3, getitem_3);  getitem_3 = None
        mul_5: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mul.Tensor(sub_1, rsqrt_1);  sub_1 = rsqrt_1 = None
        mul_6: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_5, arg7_1);  mul_5 = arg7_1 = None
        add_5: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(mul_6, arg8_1);  mul_6 = arg8_1 = None
        permute_2: "f32[256, 1024][1, 256]cuda:0" = torch.ops.aten.permute.default(arg9_1, [1, 0]);  arg9_1 = None
        addmm_2: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.addmm.default(arg10_1, add_5, permute_2);  arg10_1 = add_5 = permute_2 = None
        mul_7: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(addmm_2, 0.5)
        mul_8: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(addmm_2, 0.7071067811865476);  addmm_2 = None
        erf_1: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.erf.default(mul_8);  mul_8 = None
        add_6: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.add.Tensor(erf_1, 1);  erf_1 = None
        mul_9: "f32[32, 1024][1024, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_7, add_6);  mul_7 = add_6 = None
        permute_3: "f32[1024, 256][1, 1024]cuda:0" = torch.ops.aten.permute.default(arg11_1, [1, 0]);  arg11_1 = None
        addmm_3: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.addmm.default(arg12_1, mul_9, permute_3);  arg12_1 = mul_9 = permute_3 = None
        add_7: "f32[32, 256][256, 1]cuda:0" = torch.ops.aten.add.Tensor(add_3, addmm_3);  add_3 = addmm_3 = None

        # File: /home/user/traces/mlp_module-cuda/program.py:20 in forward, code: return torch.softmax(self.head(self.blocks(x)), dim=-1)
        permute_4: "f32[256, 10][1, 256]cuda:0" = torch.ops.aten.permute.default(arg13_1, [1, 0]);  arg13_1 = None
        addmm_4: "f32[32, 10][10, 1]cuda:0" = torch.ops.aten.addmm.default(arg14_1, add_7, permute_4);  arg14_1 = add_7 = permute_4 = None
        amax: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.amax.default(addmm_4, [-1], True)
        sub_2: "f32[32, 10][10, 1]cuda:0" = torch.ops.aten.sub.Tensor(addmm_4, amax);  addmm_4 = amax = None
        exp: "f32[32, 10][10, 1]cuda:0" = torch.ops.aten.exp.default(sub_2);  sub_2 = None
        sum_1: "f32[32, 1][1, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(exp, [-1], True)
        div: "f32[32, 10][10, 1]cuda:0" = torch.ops.aten.div.Tensor(exp, sum_1);  exp = sum_1 = None
        return (div,)
