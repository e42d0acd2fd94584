# tensor_file.py: the engine's test tensor files for the PyTorch reference scripts (torch_ref.py, torch_graph.py):
# one JSON header line {"dtype", "shape"}, then the raw little-endian elements.
import json

import torch

DT = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8,
    "bool": torch.bool,
}
NAMES = {v: k for k, v in DT.items()}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    nl = data.index(b"\n")
    head = json.loads(data[:nl])
    body = bytearray(data[nl + 1:])
    dt = DT[head["dtype"]]
    shape = head["shape"]
    if len(body) == 0:
        return torch.empty(shape, dtype=dt)
    raw = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.bool: torch.uint8}.get(dt, dt)
    t = torch.frombuffer(body, dtype=raw).clone()
    if raw is not dt:
        t = t.view(dt) if dt is not torch.bool else t.to(torch.bool)
    return t.reshape(shape)


def save(t, path):
    t = t.contiguous()
    head = json.dumps({"dtype": NAMES[t.dtype], "shape": list(t.shape)}).encode() + b"\n"
    if t.dtype is torch.bool:
        raw = t.to(torch.uint8)
    elif t.dtype in (torch.float16, torch.bfloat16):
        raw = t.view(torch.int16)
    else:
        raw = t
    with open(path, "wb") as f:
        f.write(head)
        f.write(raw.numpy().tobytes() if raw.numel() else b"")
