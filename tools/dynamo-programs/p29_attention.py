import math, torch
def fn(q, k, v):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return torch.softmax(s, dim=-1) @ v
def calls():
    return [tuple(torch.randn(2, 4, 8) for _ in range(3))]
