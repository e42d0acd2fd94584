import torch
def gen(x):
    yield x + 1
    yield x * 2
def fn(x):
    return sum(gen(x))
def calls():
    return [(torch.randn(4),)]
