import torch
def fn(x, y):
    return torch.relu(x) * y + 1
def calls():
    return [(torch.randn(4, 8), torch.randn(4, 8))]
