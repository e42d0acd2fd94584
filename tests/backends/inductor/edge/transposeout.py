class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[64, 48][48, 1]cpu"):
        t: "f32[48, 64][1, 48]cpu" = torch.ops.aten.t.default(a)
        clone: "f32[48, 64][64, 1]cpu" = torch.ops.aten.clone.default(t, memory_format = torch.contiguous_format)
        mul: "f32[48, 64][64, 1]cpu" = torch.ops.aten.mul.Tensor(clone, 2.0)
        return (mul, t)
