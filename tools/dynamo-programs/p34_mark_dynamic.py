import torch
def fn(x):
    return x.relu() + 1
def setup(args):
    torch._dynamo.mark_dynamic(args[0], 0)
def calls():
    return [(torch.randn(4, 3),), (torch.randn(7, 3),)]
