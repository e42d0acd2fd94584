class <lambda>(torch.nn.Module):
    def forward(self, a: "i64[64][1]cpu", b: "i64[64][1]cpu"):
        sub: "i64[64][1]cpu" = torch.ops.aten.sub.Tensor(a, 3)
        remainder: "i64[64][1]cpu" = torch.ops.aten.remainder.Scalar(sub, 5)
        neg: "i64[64][1]cpu" = torch.ops.aten.neg.default(sub)
        remainder_1: "i64[64][1]cpu" = torch.ops.aten.remainder.Tensor(neg, 7)
        return (remainder, remainder_1)
