# torch_ref.py: computes reference outputs with the installed PyTorch for the op tests (cases.json in, tensors out).
import json
import sys

try:
    import torch
except Exception:  # no torch: the C test skips
    sys.exit(77)

from tensor_file import DT, load, save  # noqa: E402  (after the torch check)


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
