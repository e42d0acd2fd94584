import torch
def inner(x):
    torch._dynamo.graph_break()
    return x + 1
def fn(x):
    y = x * 2
    z = inner(y)
    return z.sum()
def calls():
    return [(torch.randn(4),)]
