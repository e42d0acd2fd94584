class <lambda>(torch.nn.Module):
    def forward(self, a: "f16[32, 64][64, 1]cpu", b: "bf16[64][1]cpu"):
        convert_element_type: "f32[32, 64][64, 1]cpu" = torch.ops.prims.convert_element_type.default(a, torch.float32)
        add: "f32[32, 64][64, 1]cpu" = torch.ops.aten.add.Tensor(convert_element_type, b)
        sum_1: "f32[32][1]cpu" = torch.ops.aten.sum.dim_IntList(add, [1])
        convert_element_type_1: "f16[32][1]cpu" = torch.ops.prims.convert_element_type.default(sum_1, torch.float16)
        mul: "bf16[64][1]cpu" = torch.ops.aten.mul.Tensor(b, b)
        return (convert_element_type_1, mul)
