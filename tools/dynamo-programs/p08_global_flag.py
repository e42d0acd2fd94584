import torch
USE_TANH = True
def fn(x):
    if USE_TANH:
        return torch.tanh(x)
    return torch.sigmoid(x)
def calls():
    return [(torch.randn(6),)]
