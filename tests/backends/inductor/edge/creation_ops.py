class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[10, 12][12, 1]cpu"):
        full: "f32[10, 12][12, 1]cpu" = torch.ops.aten.full.default([10, 12], 2.5, dtype = torch.float32, layout = torch.strided, device = device(type="cpu"), pin_memory = False)
        iota: "i64[12][1]cpu" = torch.ops.prims.iota.default(12, start = 0, step = 1, dtype = torch.int64, device = device(type="cpu"), requires_grad = False)
        arange: "i64[10][1]cpu" = torch.ops.aten.arange.start(3, 13, device = device(type="cpu"), pin_memory = False)
        unsqueeze: "i64[10, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(arange, 1)
        add: "i64[10, 12][12, 1]cpu" = torch.ops.aten.add.Tensor(unsqueeze, iota)
        mul: "f32[10, 12][12, 1]cpu" = torch.ops.aten.mul.Tensor(add, full)
        add_1: "f32[10, 12][12, 1]cpu" = torch.ops.aten.add.Tensor(mul, a)
        ones_like: "f32[10, 12][12, 1]cpu" = torch.ops.aten.ones_like.default(a, pin_memory = False)
        sub: "f32[10, 12][12, 1]cpu" = torch.ops.aten.sub.Tensor(add_1, ones_like)
        return (sub,)
