#!/usr/bin/env python3
"""Forward and backward times of the training fixtures' models under torch eager (autograd), single-threaded: the
reference for `fxwb compare tests/fixtures/training/graphs/NAME.min_cut.joint.py --train`.

  torch-train-time.py [NAME...]   (default: the five models of tests/fixtures/training/programs.py)

Prints per model the median forward, backward (loss.backward() of the output's sum, as compare --train's tangents
of ones) and total ms over 50 steps after 10 warm-up steps."""
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "training"))
from programs import NAMES, make  # noqa: E402


def main():
    torch.set_num_threads(1)
    for name in sys.argv[1:] or NAMES:
        torch.manual_seed(0)
        m, args = make(name, "cpu")
        fw, bw = [], []
        for i in range(60):
            t0 = time.perf_counter()
            out = m(*args)
            t1 = time.perf_counter()
            (out if out.dim() == 0 else out.sum()).backward()
            t2 = time.perf_counter()
            if i >= 10:
                fw.append((t1 - t0) * 1e3)
                bw.append((t2 - t1) * 1e3)
            m.zero_grad()
        f, b = statistics.median(fw), statistics.median(bw)
        print(f"{name:18} torch {torch.__version__} eager  forward {f:.3f} ms  backward {b:.3f} ms  total {f + b:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
