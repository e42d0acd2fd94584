class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[32][1]cpu", b: "f32[32][1]cpu"):
        log: "f32[32][1]cpu" = torch.ops.aten.log.default(a)
        maximum: "f32[32][1]cpu" = torch.ops.aten.maximum.default(log, b)
        minimum: "f32[32][1]cpu" = torch.ops.aten.minimum.default(b, log)
        clamp: "f32[32][1]cpu" = torch.ops.aten.clamp.default(log, -0.5, 0.5)
        max_1: "f32[][]cpu" = torch.ops.aten.max.default(log)
        return (maximum, minimum, clamp, max_1)
