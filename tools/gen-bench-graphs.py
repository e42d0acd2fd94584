#!/usr/bin/python3
"""gen-bench-graphs.py: writes the op-coverage benchmark graphs of `fxwb bench inductor-cpu` (bench/graphs).

Each program below is traced to an ATen graph with make_fx (torch 1.13 or 2.x) and written as PyTorch prints a
graph module (`print_readable`, with the "f32[...][...]cpu" annotations), next to NAME.inputs.json, the input
specs fxwb makes its seeded inputs from. Usage: tools/gen-bench-graphs.py [OUT_DIR] (default bench/graphs).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
          torch.int64: "i64", torch.int32: "i32", torch.bool: "b8"}


def col_sum(x):
    return x.sum(dim=0)


def cross_entropy(logits, target):
    return F.cross_entropy(logits, target)


def embedding_bag_sum(weight, idx):
    return F.embedding(idx, weight).sum(dim=1)


def logsumexp_rows(x):
    return torch.logsumexp(x, dim=-1)


def l2_norm_rows(x):
    return torch.linalg.vector_norm(x, 2, dim=-1, keepdim=True)


def var_mean_rows(x):
    return torch.var_mean(x, dim=1)


def var_mean_cols(x):
    return torch.var_mean(x, dim=0)


def masked_softmax(x, mask):
    return torch.softmax(x.masked_fill(~mask, float("-inf")), dim=-1)


def transpose_add(x, y):
    return x.t() + y


def adam_update(p, g, m, v):
    m2 = m * 0.9 + g * 0.1
    v2 = v * 0.999 + g * g * 0.001
    p2 = p - 0.001 * (m2 / 0.1) / (torch.sqrt(v2 / 0.001) + 1e-8)
    return p2, m2, v2


def row_max_argmax(x):
    values, indices = torch.max(x, dim=-1)
    return values, indices


def bias_gelu(x, b):
    return F.gelu(x + b)


def attention_scores(q, k):
    return torch.softmax(torch.bmm(q, k.transpose(1, 2)) * 0.125, dim=-1)


def attention_block(x, wq, wk, wv, wo):
    # 8 heads over [b, s, d]; written with view/mm/bmm so that torch 1.13's make_fx gives no _reshape_alias
    b, s, d = x.shape
    h = 8
    x2 = x.view(b * s, d)

    def heads(w):
        return x2.mm(w).view(b, s, h, d // h).permute(0, 2, 1, 3).contiguous().view(b * h, s, d // h)

    q, k, v = heads(wq), heads(wk), heads(wv)
    a = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / 8.0, dim=-1)
    o = torch.bmm(a, v).view(b, h, s, d // h).permute(0, 2, 1, 3).contiguous().view(b * s, d)
    return x + o.mm(wo).view(b, s, d)


def layernorm_linear_tanh(x, w, b, lw, lb):
    return torch.tanh(F.linear(F.layer_norm(x, (x.shape[-1],), w, b), lw, lb))


def f32(*shape):
    return torch.randn(*shape)


PROGRAMS = [
    ("col_sum", col_sum, lambda: [f32(16384, 4096)]),
    ("cross_entropy", cross_entropy, lambda: [f32(8192, 1000), torch.randint(0, 16, (8192,))]),
    ("embedding_bag_sum", embedding_bag_sum, lambda: [f32(50000, 256), torch.randint(0, 16, (4096, 32))]),
    ("logsumexp_rows", logsumexp_rows, lambda: [f32(8192, 4096)]),
    ("l2_norm_rows", l2_norm_rows, lambda: [f32(8192, 4096)]),
    ("var_mean_rows", var_mean_rows, lambda: [f32(8192, 4096)]),
    ("var_mean_cols", var_mean_cols, lambda: [f32(8192, 4096)]),
    ("masked_softmax", masked_softmax, lambda: [f32(8192, 1024), torch.rand(8192, 1024) > 0.1]),
    ("transpose_add", transpose_add, lambda: [f32(4096, 4096), f32(4096, 4096)]),
    ("adam_update", adam_update, lambda: [f32(16777216), f32(16777216), f32(16777216), f32(16777216)]),
    ("row_max_argmax", row_max_argmax, lambda: [f32(8192, 4096)]),
    ("bias_gelu", bias_gelu, lambda: [f32(8192, 4096), f32(4096)]),
    ("attention_scores", attention_scores, lambda: [f32(64, 512, 64), f32(64, 512, 64)]),
    ("attention_block", attention_block,
     lambda: [f32(8, 512, 512), f32(512, 512), f32(512, 512), f32(512, 512), f32(512, 512)]),
    ("layernorm_linear_tanh", layernorm_linear_tanh,
     lambda: [f32(8192, 1024), f32(1024), f32(1024), f32(1024, 1024), f32(1024)]),
]


def annotation(v):
    if not isinstance(v, torch.Tensor):
        return None
    dt = DTYPES.get(v.dtype, str(v.dtype).replace("torch.", ""))
    return '"%s[%s][%s]cpu"' % (dt, ", ".join(str(s) for s in v.shape), ", ".join(str(s) for s in v.stride()))


def fmt(a):
    if isinstance(a, torch.fx.Node):
        return a.name
    if isinstance(a, (list, tuple)):
        inner = ", ".join(fmt(x) for x in a)
        return "[" + inner + "]" if isinstance(a, list) else "(" + inner + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, torch.dtype):
        return str(a)
    if isinstance(a, torch.device):
        return "device(type='%s')" % a.type
    if isinstance(a, torch.layout):
        return str(a)
    if isinstance(a, float):
        if a == float("inf"):
            return "inf"
        if a == float("-inf"):
            return "-inf"
    return repr(a)


def target_name(t):
    s = str(t)            # "aten.addmm.default"
    return "torch.ops." + s


def write(out_dir, name, fn, make_inputs):
    torch.manual_seed(0)
    inputs = make_inputs()
    gm = make_fx(fn)(*inputs)
    names = {}
    lines = []
    params = []
    vals = {}
    for i, node in enumerate(gm.graph.nodes):
        if node.op == "placeholder":
            names[node] = "arg%d_1" % len(params)
            node.name = names[node]
            vals[node] = inputs[len(params)]
            params.append("%s: %s" % (node.name, annotation(inputs[len(params)])))
    for node in gm.graph.nodes:
        if node.op == "call_function":
            args = [fmt(a) for a in node.args] + ["%s = %s" % (k, fmt(v)) for k, v in node.kwargs.items()]
            if node.target.__name__ == "getitem" if hasattr(node.target, "__name__") else False:
                rhs = "%s[%s]" % (fmt(node.args[0]), fmt(node.args[1]))
            else:
                rhs = "%s(%s)" % (target_name(node.target), ", ".join(args))
            val = node.meta.get("val")
            ann = annotation(val) if isinstance(val, torch.Tensor) else None
            lines.append("        %s%s = %s" % (node.name, ": " + ann if ann else "", rhs))
        elif node.op == "get_attr":
            raise SystemExit("%s: the traced graph holds a constant (%s); pass it as an input" % (name, node.target))
        elif node.op == "output":
            outs = node.args[0]
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            lines.append("        return (%s)" % "".join(fmt(o) + ", " for o in outs).rstrip(" ")
                         if len(outs) > 1 else "        return (%s,)" % fmt(outs[0]))
    text = "class <lambda>(torch.nn.Module):\n    def forward(self, %s):\n%s\n" % (", ".join(params), "\n".join(lines))
    with open(os.path.join(out_dir, name + ".aten.0.py"), "w") as f:
        f.write(text)
    specs = []
    for t in inputs:
        specs.append({"shape": list(t.shape), "stride": list(t.stride()), "dtype": str(t.dtype), "device": "cpu"})
    with open(os.path.join(out_dir, name + ".aten.0.inputs.json"), "w") as f:
        json.dump(specs, f)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "bench/graphs"
    os.makedirs(out_dir, exist_ok=True)
    for name, fn, make_inputs in PROGRAMS:
        write(out_dir, name, fn, make_inputs)
        print("wrote %s/%s.aten.0.py" % (out_dir, name))


if __name__ == "__main__":
    main()
