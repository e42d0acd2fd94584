import torch
def fn(xs):
    ys = [x.relu() for x in xs]
    return torch.stack(ys).sum(0)
def calls():
    return [([torch.randn(3) for _ in range(4)],)]
