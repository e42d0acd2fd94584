import torch
def fn(x):
    return x.transpose(0, 1).contiguous().view(-1).mean()
def calls():
    return [(torch.randn(3, 4),)]
