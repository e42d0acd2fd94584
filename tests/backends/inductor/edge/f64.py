class <lambda>(torch.nn.Module):
    def forward(self, a: "f64[10, 10][10, 1]cpu"):
        exp: "f64[10, 10][10, 1]cpu" = torch.ops.aten.exp.default(a)
        sum_1: "f64[10, 1][1, 1]cpu" = torch.ops.aten.sum.dim_IntList(exp, [1], True)
        div: "f64[10, 10][10, 1]cpu" = torch.ops.aten.div.Tensor(exp, sum_1)
        return (div,)
