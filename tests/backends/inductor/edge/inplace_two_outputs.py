class <lambda>(torch.nn.Module):
    def forward(self, t: "f32[4, 5][5, 1]cpu", e: "b8[4, 5][5, 1]cpu", g: "b8[4, 5][5, 1]cpu", c: "b8[4, 5][5, 1]cpu", m: "f32[4, 5][5, 1]cpu"):
        # two outputs of one kernel (where_1, mul_2) must not both be written over the dead add_1
        add_1: "f32[4, 5][5, 1]cpu" = torch.ops.aten.add.Tensor(t, m)
        scalar_tensor: "f32[][]cpu" = torch.ops.aten.scalar_tensor.default(0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'))
        where_1: "f32[4, 5][5, 1]cpu" = torch.ops.aten.where.self(c, add_1, scalar_tensor)
        mul_2: "f32[4, 5][5, 1]cpu" = torch.ops.aten.mul.Tensor(where_1, 0.5)
        scalar_tensor_1: "f32[][]cpu" = torch.ops.aten.scalar_tensor.default(0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'))
        where_2: "f32[4, 5][5, 1]cpu" = torch.ops.aten.where.self(g, where_1, scalar_tensor_1)
        where_3: "f32[4, 5][5, 1]cpu" = torch.ops.aten.where.self(e, mul_2, where_2)
        return (where_3,)
