import torch
def fn(x):
    s = x.sum().item()
    return x * s
def calls():
    return [(torch.randn(4),)]
