import torch
def fn(x):
    return x.softmax(dim=-1) * 2
def calls():
    return [(torch.randn(4, 8),), (torch.randn(6, 8),), (torch.randn(10, 8),)]
