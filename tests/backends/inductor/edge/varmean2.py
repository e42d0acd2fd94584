class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[7, 300][300, 1]cpu"):
        var_mean = torch.ops.aten.var_mean.correction(a, [1], correction = 0, keepdim = True)
        getitem: "f32[7, 1][1, 1]cpu" = var_mean[0]
        getitem_1: "f32[7, 1][1, 1]cpu" = var_mean[1]
        sub: "f32[7, 300][300, 1]cpu" = torch.ops.aten.sub.Tensor(a, getitem_1)
        return (getitem, sub)
