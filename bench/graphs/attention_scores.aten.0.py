class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[64, 512, 64][32768, 64, 1]cpu", arg1_1: "f32[64, 512, 64][32768, 64, 1]cpu"):
        transpose = torch.ops.aten.transpose.int(arg1_1, 1, 2)
        bmm = torch.ops.aten.bmm.default(arg0_1, transpose)
        mul = torch.ops.aten.mul.Tensor(bmm, 0.125)
        _softmax = torch.ops.aten._softmax.default(mul, -1, False)
        return (_softmax,)
