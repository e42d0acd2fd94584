import torch
def fn(x):
    return x[:, 1:3] + x[:, :2]
def calls():
    return [(torch.randn(4, 5),)]
