class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[9223372036854775807]"):
        relu: "f32[9223372036854775807]" = torch.ops.aten.relu.default(x)
        return (relu,)
