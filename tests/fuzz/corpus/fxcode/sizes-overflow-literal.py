class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[99999999999999999999999999, 4]"):
        relu: "f32[99999999999999999999999999, 4]" = torch.ops.aten.relu.default(x)
        return (relu,)
