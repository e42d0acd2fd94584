class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[20, 30][30, 1]cpu"):
        slice_1: "f32[20, 10][30, 3]cpu" = torch.ops.aten.slice.Tensor(a, 1, 0, 30, 3)
        neg: "f32[20, 10][10, 1]cpu" = torch.ops.aten.neg.default(slice_1)
        view: "f32[200][1]cpu" = torch.ops.aten.view.default(neg, [200])
        cumsum: "f32[200][1]cpu" = torch.ops.aten.cumsum.default(view, 0)
        return (cumsum,)
