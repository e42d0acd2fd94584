# torch_ref.py: computes reference outputs with the installed PyTorch for the op tests (cases.json in, tensors out).
import json
import sys

try:
    import torch
except Exception:  # no torch: the C test skips
    sys.exit(77)

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


def value(v):
    if "t" in v:
        return load(v["t"])
    if "f" in v:
        return float(v["f"])
    if "i" in v:
        return int(v["i"])
    if "b" in v:
        return bool(v["b"])
    if "s" in v:
        return v["s"]
    if "d" in v:
        return DT[v["d"]]
    if "L" in v:
        return [value(x) for x in v["L"]]
    return None


def _prepare_softmax_online(x, dim):
    m = x.amax(dim, keepdim=True)
    return m, (x - m).exp().sum(dim, keepdim=True)


# Ops the installed (older) torch lacks, written with what it has.
FALLBACK = {
    "aten._native_batch_norm_legit_no_training.default":
        lambda x, w, b, rm, rv, mom, eps: torch.ops.aten.native_batch_norm.default(x, w, b, rm, rv, False, mom, eps),
    "prims.prepare_softmax_online.default": _prepare_softmax_online,
    "prims.convert_element_type.default": lambda x, dt: x.to(dt),
    "prims.iota.default": lambda n, start, step, dtype, device, requires_grad:
        torch.arange(start, start + n * step, step, dtype=dtype),
    "aten.var_mean.correction": lambda x, dim=None, correction=None, keepdim=False:
        torch.var_mean(x, dim, unbiased=(correction is None or correction == 1), keepdim=keepdim),
    "aten.var.correction": lambda x, dim=None, correction=None, keepdim=False:
        torch.var(x, dim, unbiased=(correction is None or correction == 1), keepdim=keepdim),
    "aten.squeeze.dims": lambda x, dims: x.squeeze(dims[0]) if len(dims) == 1 else x,
}


def lookup(name):
    ns, op, overload = name.split(".")
    try:
        return getattr(getattr(getattr(torch.ops, ns), op), overload)
    except (AttributeError, RuntimeError):
        return FALLBACK.get(name)


def main():
    cases = json.load(open(sys.argv[1]))
    for c in cases:
        fn = lookup(c["op"])
        if fn is None:
            open(c["out"] + ".skip", "w").close()
            continue
        args = [value(a) for a in c["args"]]
        kwargs = {k: value(v) for k, v in c.get("kwargs", {}).items()}
        try:
            try:
                out = fn(*args, **kwargs)
            except Exception:
                if c["op"] not in FALLBACK:
                    raise
                out = FALLBACK[c["op"]](*args, **kwargs)
        except Exception as e:  # the engine must fail too
            with open(c["out"] + ".err", "w") as f:
                f.write(str(e))
            continue
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        for i, o in enumerate(outs):
            if isinstance(o, torch.Tensor):
                save(o, "%s.%d" % (c["out"], i))


main()
