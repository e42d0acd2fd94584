import torch
def fn(x, *, scale=1.0, bias=None):
    y = x * scale
    if bias is not None:
        y = y + bias
    return y
def calls():
    return [{"args": (torch.randn(4),), "kwargs": {"scale": 2.0, "bias": torch.randn(4)}}]
