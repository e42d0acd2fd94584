class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8192, 1000][1000, 1]cpu", arg1_1: "i64[8192][1]cpu"):
        _log_softmax = torch.ops.aten._log_softmax.default(arg0_1, 1, False)
        nll_loss_forward = torch.ops.aten.nll_loss_forward.default(_log_softmax, arg1_1, None, 1, -100)
        getitem = nll_loss_forward[0]
        getitem_1 = nll_loss_forward[1]
        return (getitem,)
