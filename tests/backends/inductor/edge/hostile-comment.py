class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[5][1]cpu"):
        # File: /x/*/ int evil; /*.py:18 in forward, code: return x */ #include "/etc/passwd"
        relu: "f32[5][1]cpu" = torch.ops.aten.relu.default(a)
        return (relu,)
