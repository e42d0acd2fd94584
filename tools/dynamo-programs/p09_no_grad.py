import torch
def fn(x):
    with torch.no_grad():
        y = x * 2
    return y + 1
def calls():
    return [(torch.randn(4),)]
