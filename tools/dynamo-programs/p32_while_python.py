import torch
def fn(x, n):
    i = 0
    while i < n:
        x = x + i
        i += 1
    return x
def calls():
    return [(torch.randn(4), 3)]
