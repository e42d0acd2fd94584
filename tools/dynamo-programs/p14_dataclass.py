import dataclasses, torch
@dataclasses.dataclass
class Cfg:
    alpha: float = 0.5
    beta: float = 2.0
CFG = Cfg()
def fn(x):
    return x * CFG.alpha + CFG.beta
def calls():
    return [(torch.randn(4),)]
