import torch
def fn(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1
def calls():
    torch.manual_seed(0)
    return [(torch.randn(16),)]
