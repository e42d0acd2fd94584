class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8192, 4096][4096, 1]cpu"):
        max_1 = torch.ops.aten.max.dim(arg0_1, -1)
        getitem = max_1[0]
        getitem_1 = max_1[1]
        return (getitem, getitem_1,)
