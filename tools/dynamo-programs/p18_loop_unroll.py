import torch
def fn(x):
    for _ in range(3):
        x = x * 2 + 1
    return x
def calls():
    return [(torch.randn(4),)]
