class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[64][1]cpu"):
        remainder: "f32[64][1]cpu" = torch.ops.aten.remainder.Scalar(a, 0.3)
        fmod: "f32[64][1]cpu" = torch.ops.aten.fmod.Scalar(a, 0.3)
        div: "f32[64][1]cpu" = torch.ops.aten.div.Tensor_mode(a, 0.3, rounding_mode = "floor")
        return (remainder, fmod, div)
