


def forward(self, L_x_ : torch.Tensor, L_y_ : torch.Tensor, y = 2, *args):
    l_x_ = L_x_
    l_y_ = L_y_
    sub_fc = self.sub.fc(l_x_);  l_x_ = None
    add = sub_fc + l_y_;  sub_fc = None
    relu = add.relu()
    sum_1 = relu.sum(dim = -1, keepdim = True);  relu = None
    cat = torch.cat([add, l_y_], dim = 1);  add = l_y_ = None
    max_1 = cat.max(dim = 1);  cat = None
    getitem = max_1[0];  max_1 = None
    neg = -getitem
    size = getitem.shape
    gelu = torch._C._nn.gelu(getitem, approximate = 'tanh')
    abs_1 = torch.abs(gelu);  gelu = None
    _tensor_constant0 = self._tensor_constant0
    layer = getattr(self.layers, "0")(abs_1)
    len_1 = len(size);  size = None
    full = torch.ops.aten.full.default([2, 3], 1.5, dtype = torch.float64, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False, memory_format = torch.contiguous_format)
    clamp = torch.ops.aten.clamp.default(full, -inf, inf)
    idx = clamp[(slice(None, None, None), None, Ellipsis)]
    idx2 = clamp[1:, ::2, ...]
    f = torch.foo.default(idx, 'it\'s', "dq\"", '\n\t\x41\u00e9', r'\d', b'b', '''tri
ple''', {'a': 1, 2: [idx2, (3,)]}, 123456789012345678901234567890, 0x10, 1_000, nan)
    f += abs_1;  iadd = f
    f[0] = 1;  setitem = f;  setitem = None
    return (getitem, sum_1, neg, abs_1, _tensor_constant0, layer, len_1, iadd)
    
