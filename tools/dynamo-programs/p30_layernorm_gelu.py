import torch, torch.nn as nn, torch.nn.functional as F
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(16)
    def forward(self, x):
        return F.gelu(self.ln(x))
fn = M()
def calls():
    return [(torch.randn(4, 16),)]
