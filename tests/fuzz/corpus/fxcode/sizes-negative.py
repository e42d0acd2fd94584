class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[-5, 4][-4, -1]", y: "f32[-9223372036854775808]"):
        relu: "f32[-5, 4]" = torch.ops.aten.relu.default(x)
        neg: "f32[-9223372036854775808]" = torch.ops.aten.neg.default(y)
        return (relu, neg)
