# torch_graph.py: runs FX graph code (ATen or torch-level) on torch eager for the interpreter tests: jobs.json in
# (graph source, saved input tensors), output tensors (and fp64 references) out; with "grad" in a job, the
# gradients torch autograd computes for it (the autograd tests' reference).
import json
import os
import re
import sys

try:
    import torch
except Exception:  # no torch: the C test skips
    sys.exit(77)

torch.set_num_threads(1)

# the tensor files' reader and writer live with the op tests
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensor"))
from tensor_file import load, save  # noqa: E402


def _prepare_softmax_online(x, dim):
    m = x.amax(dim, keepdim=True)
    return m, (x - m).exp().sum(dim, keepdim=True)


def _squeeze_dims(x, dims):
    for d in sorted((d % x.dim() for d in dims), reverse=True):
        x = x.squeeze(d)
    return x


# ATen/prims overloads torch 1.13 lacks (newer Inductor graphs use them), written with what it has.
FALLBACK = {
    ("aten", "_native_batch_norm_legit_no_training", "default"):
        lambda x, w, b, rm, rv, mom, eps: torch.ops.aten.native_batch_norm.default(x, w, b, rm, rv, False, mom, eps),
    ("prims", "convert_element_type", "default"): lambda x, dt: x.to(dt),
    ("aten", "squeeze", "dims"): lambda x, dims: _squeeze_dims(x, dims),
    ("prims", "prepare_softmax_online", "default"): _prepare_softmax_online,
    ("prims", "iota", "default"): lambda n, start, step, dtype, device, requires_grad:
        torch.arange(start, start + n * step, step, dtype=dtype),
}


class _Overloads:
    def __init__(self, ns, op):
        self.ns, self.op = ns, op

    def __getattr__(self, overload):
        fn = FALLBACK.get((self.ns, self.op, overload))
        if fn is not None:
            return fn
        return getattr(getattr(getattr(torch.ops, self.ns), self.op), overload)

    def __call__(self, *args, **kwargs):
        return getattr(getattr(torch.ops, self.ns), self.op)(*args, **kwargs)


class _Namespace:
    def __init__(self, ns):
        self.ns = ns

    def __getattr__(self, op):
        return _Overloads(self.ns, op)


class _Ops:
    def __getattr__(self, ns):
        return _Namespace(ns)


class _Torch:
    """torch, with torch.ops going through the fallbacks."""
    ops = _Ops()

    def __getattr__(self, name):
        return getattr(torch, name)


def module_source(text):
    """The first `class X(torch.nn.Module):` block of a print_readable text, a repro.py or a Dynamo graph."""
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines):
        if re.match(r"class \S+\(torch\.nn\.Module\):", line):
            start = i
            break
    if start is None:
        raise ValueError("no module class in the graph text")
    out = ["class G(torch.nn.Module):"]
    for line in lines[start + 1:]:
        if line and not line[0].isspace():
            break
        out.append(line)
    return "\n".join(out) + "\n"


def value(v):
    if "t" in v:
        return load(v["t"])
    if "i" in v:
        return int(v["i"])
    if "f" in v:
        return float(v["f"])
    return None


def to64(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(torch.float64)
    return x


def flat(out):
    if isinstance(out, (tuple, list)):
        r = []
        for o in out:
            r.extend(flat(o))
        return r
    return [out]


def run_grad(mod, args, job):
    """Autograd's reference for a joint graph: the inputs job["grad"] names require grad, the outputs that then
    require grad get job["tangents"] in order; each input's grad is saved as OUT.grad.INDEX."""
    for i in job["grad"]:
        args[i] = args[i].detach().clone().requires_grad_(True)
    outs = [o for o in flat(mod(*args)) if isinstance(o, torch.Tensor) and o.requires_grad]
    tangents = [load(t) for t in job["tangents"]]
    inputs = [args[i] for i in job["grad"]]
    grads = torch.autograd.grad(outs, inputs, tangents, allow_unused=True)
    for i, g in zip(job["grad"], grads):
        if g is not None:
            save(g.detach(), "%s.grad.%d" % (job["out"], i))


def main():
    jobs = json.load(open(sys.argv[1]))
    for job in jobs:
        try:
            src = module_source(open(job["code"]).read())
            g = {"torch": _Torch(), "operator": __import__("operator"), "inf": float("inf"), "nan": float("nan"),
                 "device": lambda *a, **k: torch.device("cpu")}
            exec(compile(src, job["code"], "exec"), g)
            mod = g["G"]()
            args = [value(a) for a in job["inputs"]]
            if "grad" in job:
                run_grad(mod, args, job)
                continue
            with torch.no_grad():
                outs = flat(mod(*args))
                for i, o in enumerate(outs):
                    if isinstance(o, torch.Tensor):
                        save(o, "%s.%d" % (job["out"], i))
                if job.get("fp64"):
                    for i, o in enumerate(flat(mod(*[to64(a) for a in args]))):
                        if isinstance(o, torch.Tensor):
                            save(o, "%s.fp64.%d" % (job["out"], i))
        except Exception as e:
            with open(job["out"] + ".err", "w") as f:
                f.write("%s: %s" % (type(e).__name__, e))


main()
