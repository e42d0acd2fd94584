# bench-torch-eager.py: times a fixture FX graph (print_readable form) in torch eager on random inputs at scaled shapes.
# usage: python3 bench-torch-eager.py FILE SCALE REPEAT THREADS  -> prints "median_ms min_ms"
# With BENCH_TORCH_COMPILE=1 (PyTorch >= 2.0) the module runs through torch.compile (Inductor, CPU) instead.
import os
import re
import sys
import time

import torch

path, scale, reps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if threads > 0:
    torch.set_num_threads(threads)
src = open(path).read().replace("class <lambda>(torch.nn.Module):", "class M(torch.nn.Module):", 1)
# literal sizes in calls (normalized_shape, view sizes) scale like the inputs
def scale_call(line):
    if "= torch.ops." not in line:
        return line
    head, call = line.split("= torch.ops.", 1)
    call = re.sub(r"(?<![\w.e-])(\d+)(?![\w.])", lambda m: str(max(1, int(m.group(1)) // scale)) if int(m.group(1)) >= 64 else m.group(1), call)
    return head + "= torch.ops." + call
src = "\n".join(scale_call(l) for l in src.split("\n"))
ns = {"torch": torch}
exec(compile(src, path, "exec"), ns)
m = ns["M"]()
if os.environ.get("BENCH_TORCH_COMPILE") == "1":
    m = torch.compile(m, backend="inductor")
sig = re.search(r"def forward\(self, (.*?)\):", src).group(1)
dtypes = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "f16": torch.float16, "bf16": torch.bfloat16}
args = []
for name, ann in re.findall(r'(\w+): "([^"]*)"', sig):
    mm = re.match(r"(\w+)\[([^\]]*)\]", ann)
    shape = [int(s) for s in mm.group(2).split(",") if s.strip()]
    shape = [max(1, s // scale) if s >= 64 else s for s in shape]
    args.append(torch.randn(shape, dtype=dtypes[mm.group(1)]))
with torch.no_grad():
    for _ in range(2):
        m(*args)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        m(*args)
        times.append((time.perf_counter() - t0) * 1e3)
times.sort()
print("%.4f %.4f" % (times[len(times) // 2], times[0]))
