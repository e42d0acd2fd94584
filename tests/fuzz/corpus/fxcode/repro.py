import torch
from torch import tensor, device
isolate_fails_code_str = None

from torch.nn import *
class Repro(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = Linear(in_features=4, out_features=4, bias=True).cuda()
        self.register_buffer('_tensor_constant0', torch.randint(1, size=[2, 3], dtype=torch.int64).cuda())
        self._param_constant0 = torch.nn.Parameter(torch.randn([10, 20], dtype=torch.float16))
        self.small = torch.tensor([1.0, 2.0])



    def forward(self, arg0_1, arg1_1, arg2_1):
        _tensor_constant0 = self._tensor_constant0
        fc = self.fc(arg1_1);  arg1_1 = None
        mul = torch.ops.aten.mul.Tensor(fc, arg0_1);  fc = arg0_1 = None
        return (mul, _tensor_constant0)
        
def load_args(reader):
    reader.symint(8)  # s0
    buf0 = reader.storage(None, 1024*s0, device=device(type='cuda', index=0))
    reader.tensor(buf0, (s0, 32), is_leaf=True)  # arg0_1
    buf1 = reader.storage('0123abcd', 96, device=device(type='cuda', index=1), dtype_hint=torch.float16)
    reader.tensor(buf1, (4, 6), (1, 4), dtype=torch.float16, storage_offset=2, requires_grad=True)  # arg1_1
    reader.const('arg2_1')  # arg2_1, filtered out during compilation
load_args._version = 0
mod = Repro()
if __name__ == '__main__':
    from torch._dynamo.repro.after_aot import run_repro
    with torch.no_grad():
        run_repro(mod, load_args, accuracy=False, command='run', save_dir=None, tracing_mode='real', check_str=None)
