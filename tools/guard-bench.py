#!/usr/bin/env python3
"""Guard evaluation per call, capture against real Dynamo: the time a compiled call adds over calling the same
function eagerly, when the compiled graph is the eager function itself (a backend that returns gm.forward), so what
is left is the frame hook, the guard check and the dispatch to the cached graph.

  guard-bench.py MODE   MODE: dynamo (real torch.compile) or fxcapture (FXCAPTURE_PATH holds _fxcapture's and the
                        fxcapture package's folders when they are not installed)

Prints one line per program: eager and compiled µs per call (medians of 15 runs of 2000 calls), the difference,
and the time of a compiled call whose graph is a no-op function (frame hook, guard evaluation, calling the graph):
the guard cost per call."""
import os
import statistics
import sys
import time

import torch


def bench(f, args, n=2000, reps=15):
    for _ in range(200):
        f(*args)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            f(*args)
        times.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(times)


def programs():
    def pointwise(x, y):
        return x * y + 1

    mlp = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8))

    def with_flag(x, flag=True, scale=2.0):
        return x * scale if flag else x

    x = torch.randn(4, 8)
    return [("pointwise (2 tensors)", pointwise, (x, x)), ("mlp module (4 params)", mlp, (x,)),
            ("python args (tensor, bool, float)", with_flag, (x, True, 2.0))]


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "dynamo"
    if mode == "fxcapture":
        for p in reversed(os.environ.get("FXCAPTURE_PATH", "").split(os.pathsep)):
            if p:
                sys.path.insert(0, p)
        import fxcapture
        compile_fn = fxcapture.compile
    else:
        compile_fn = torch.compile
    torch.set_num_threads(1)
    with torch.no_grad():
        for name, f, args in programs():
            c = compile_fn(f, backend=lambda gm, ex: gm.forward)
            e_us, c_us = bench(f, args), bench(c, args)
            # the graph replaced by a function that returns its first input: what is left is the hook, the guards
            # and the call of the compiled function
            n = compile_fn(f, backend=lambda gm, ex: (lambda *a: (a[0],)))
            n_us = bench(n, args)
            print(f"{mode:10} {name:34} eager {e_us:7.2f} us  compiled {c_us:7.2f} us  "
                  f"(+{c_us - e_us:6.2f})  guards+call with a no-op graph {n_us:6.2f} us/call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
