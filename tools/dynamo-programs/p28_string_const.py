import torch
def fn(x, mode):
    if mode == "double":
        return x * 2
    return x
def calls():
    x = torch.randn(4)
    return [(x, "double"), (x, "same")]
