class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[4, 5, 6][30, 6, 1]cpu"):
        sum_1: "f32[4, 1, 6][6, 6, 1]cpu" = torch.ops.aten.sum.dim_IntList(a, [-2], True)
        mean: "f32[5][1]cpu" = torch.ops.aten.mean.dim(a, [0, 2])
        amin: "f32[][]cpu" = torch.ops.aten.amin.default(a, [0, 1, 2])
        return (sum_1, mean, amin)
