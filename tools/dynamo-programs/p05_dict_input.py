import torch
def fn(d):
    return d["a"] + d["b"].exp()
def calls():
    return [({"a": torch.randn(5), "b": torch.randn(5)},)]
