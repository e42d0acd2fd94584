class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8192, 4096][4096, 1]cpu"):
        linalg_vector_norm = torch.ops.aten.linalg_vector_norm.default(arg0_1, 2, [-1], True)
        return (linalg_vector_norm,)
