class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8192, 1024][1024, 1]cpu", arg1_1: "b8[8192, 1024][1024, 1]cpu"):
        bitwise_not = torch.ops.aten.bitwise_not.default(arg1_1)
        masked_fill = torch.ops.aten.masked_fill.Scalar(arg0_1, bitwise_not, -inf)
        _softmax = torch.ops.aten._softmax.default(masked_fill, -1, False)
        return (_softmax,)
