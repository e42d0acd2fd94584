class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8192, 1024][1024, 1]cpu", arg1_1: "f32[1024][1]cpu", arg2_1: "f32[1024][1]cpu", arg3_1: "f32[1024, 1024][1024, 1]cpu", arg4_1: "f32[1024][1]cpu"):
        native_layer_norm = torch.ops.aten.native_layer_norm.default(arg0_1, [1024], arg1_1, arg2_1, 1e-05)
        getitem = native_layer_norm[0]
        getitem_1 = native_layer_norm[1]
        getitem_2 = native_layer_norm[2]
        t = torch.ops.aten.t.default(arg3_1)
        addmm = torch.ops.aten.addmm.default(arg4_1, getitem, t)
        tanh = torch.ops.aten.tanh.default(addmm)
        return (tanh,)
