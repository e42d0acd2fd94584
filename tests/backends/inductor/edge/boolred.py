class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[40][1]cpu"):
        gt: "b8[40][1]cpu" = torch.ops.aten.gt.Scalar(a, 0)
        any_1: "b8[][]cpu" = torch.ops.aten.any.default(gt)
        sum_1: "i64[][]cpu" = torch.ops.aten.sum.default(gt)
        return (any_1, sum_1)
