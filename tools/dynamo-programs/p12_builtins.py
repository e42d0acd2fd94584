import torch
def fn(x):
    n = len(x.shape)
    m = max(x.shape[0], 2)
    return x.reshape(-1) * n + m
def calls():
    return [(torch.randn(3, 5),)]
