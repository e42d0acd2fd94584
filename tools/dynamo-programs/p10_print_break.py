import torch
def fn(x):
    y = x + 1
    print("hello")
    return y * 2
def calls():
    return [(torch.randn(4),)]
