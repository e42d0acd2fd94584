# bench-torch-cuda.py: times a fixture FX graph (print_readable form) at full shape on the GPU through torch.compile
# (Inductor), or the launch-bound chain, for bench-inductor-cuda.
# usage: python3 bench-torch-cuda.py FILE|chain MODE REPEAT -> prints "median_ms compile_s"
#   MODE: default | reduce-overhead | eager. The compile is cold: a fresh TORCHINDUCTOR_CACHE_DIR, FX graph cache off.
import os
import re
import sys
import tempfile
import time

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-torch-cuda-")
os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
import torch  # noqa: E402

path, mode, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
dev = "cuda"
if path == "chain":
    class M(torch.nn.Module):
        def forward(self, x):
            for i in range(20):
                x = torch.sin(x) if i % 2 == 0 else x + 0.5
            return (x,)
    m = M()
    args = [torch.randn(4096, device=dev)]
else:
    src = open(path).read().replace("class <lambda>(torch.nn.Module):", "class M(torch.nn.Module):", 1)
    ns = {"torch": torch}
    exec(compile(src, path, "exec"), ns)
    m = ns["M"]()
    sig = re.search(r"def forward\(self, (.*?)\):", src).group(1)
    dtypes = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "f16": torch.float16, "bf16": torch.bfloat16}
    args = []
    for name, ann in re.findall(r'(\w+): "([^"]*)"', sig):
        mm = re.match(r"(\w+)\[([^\]]*)\]", ann)
        shape = [int(s) for s in mm.group(2).split(",") if s.strip()]
        args.append(torch.randn(shape, dtype=dtypes[mm.group(1)], device=dev))
compile_s = 0.0
with torch.no_grad():
    if mode != "eager":
        m = torch.compile(m, backend="inductor", mode=None if mode == "default" else mode)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        m(*args)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
    for _ in range(5):
        m(*args)
    torch.cuda.synchronize()
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        start.record()
        m(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
times.sort()
print("%.4f %.3f" % (times[len(times) // 2], compile_s))
