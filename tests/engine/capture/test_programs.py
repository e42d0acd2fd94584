"""Runs the fixture programs (real Dynamo output in *.torch_logs.txt, PyTorch 2.11 on CUDA) on CPU under capture
and compares frames, compile ids, graph-break lines, recompile reasons and per-graph op sequences.

Differences the versions imply, and which this test therefore does not compare:
- devices: the programs run with DEV='cpu' (only the DEV line differs from the fixtures' program.py);
- 2.11 names a node after the variable it is stored to (`x`, `b`, `input_1`); capture names nodes after their
  target as FX does (`truediv`, `mul`, `add`): only op sequences are compared, not node names;
- 2.11 turns a dimension that changed into a symbol on the recompile (automatic dynamic shapes, `s77`); capture
  specializes again, so the recompiled graphs have the same ops but static shapes (and the recompile of a dynamic
  entry in 2.11 is a static-entry recompile here; the reasons of the newest entry are the same);
- the resume functions' frame ids 1 and 2 follow which branch runs first, i.e. the random data: the test seeds
  torch so that the not-taken branch (`x * b`) comes first, as in the fixture run; later compiles of the resume
  frames depend on the data and are not compared.
"""
import os
import re
import runpy
import sys
import unittest

import torch

import fxcapture

fxcapture.install()
FIX = os.path.join(os.environ.get("FX_FIXTURES", os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")),
                   "capture")

LOG = re.compile(r"^V\d+ [\d:.]+ \d+ \S+\] \[(\d+/\d+)\] \[(__\w+)\] ?(.*)$")
STMT = re.compile(r"^\s+(\w+)(?:: \"[^\"]*\")? = (.*?)(?:;  .*)?$")


def op_token(expr):
    m = re.match(r"^(torch\.[\w.]+|[A-Za-z_]\w*)\(", expr)
    if m:
        return m.group(1)
    m = re.match(r"^\w+\.(\w+)\(", expr)
    if m:
        return "." + m.group(1)
    m = re.match(r"^-?[\w.]+ (\+|-|\*|/|<|>|<=|>=|==|@) -?[\w.]+$", expr)
    if m:
        return m.group(1)
    return expr


def ops_of_code(code):
    ops = []
    for line in code.splitlines():
        m = STMT.match(line)
        if m and not re.match(r"^L_\w+$", m.group(2)):
            ops.append(op_token(m.group(2)))
    return ops


def parse_logs(path):
    graphs, reasons, breaks = {}, {}, []
    cur = None
    with open(path) as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = LOG.match(line)
        if not m:
            continue
        cid, chan, text = m.groups()
        if chan == "__graph_code":
            if "TRACED GRAPH" in text:
                cur = graphs.setdefault(cid, [])
            elif cur is not None:
                s = STMT.match(text)
                if s and not re.match(r"^L_\w+$", s.group(2)) and not text.strip().startswith("def "):
                    cur.append(op_token(s.group(2)))
        else:
            cur = None
        if chan == "__recompiles_verbose" and text.startswith("    - "):
            reasons.setdefault(cid, []).append(text[len("    - "):])
        gb = re.match(r"^Graph break (?:\(user stack suppressed due to duplicate graph break\) )?in user code at "
                      r"(.*):(\d+)$", text)
        if chan == "__graph_breaks" and gb:
            breaks.append((cid, gb.group(2)))
    return graphs, reasons, breaks


def run_program(name, seed):
    fxcapture.reset()
    start = len(fxcapture.records)
    torch.manual_seed(seed)
    runpy.run_path(os.path.join(FIX, name + ".py"), run_name="__main__")
    return fxcapture.records[start:]


class Programs(unittest.TestCase):
    def test_toy_graph_break(self):
        graphs, reasons, breaks = parse_logs(os.path.join(FIX, "toy_graph_break.torch_logs.txt"))
        recs = None
        for seed in range(50):
            torch.manual_seed(seed)
            if torch.randn(10).sum() < 0 and torch.randn(10).sum() >= 0:
                recs = run_program("toy_graph_break", seed)
                break
        self.assertIsNotNone(recs)
        compiles = {f"{r['frame_id']}/{r['compile_id']}": r for r in recs if r["kind"] == "compile"}
        # frame 0: four compiles with the same ops as Dynamo's
        frame0 = sorted(c for c in compiles if c.startswith("0/"))
        self.assertEqual(frame0, sorted(c for c in graphs if c.startswith("0/")))
        for cid in frame0:
            self.assertEqual(ops_of_code(compiles[cid]["graph_code"]), graphs[cid], cid)
        self.assertEqual(graphs["0/0"], ["torch.abs", "+", "/", ".sum", "<"])
        # resume frames: [1/0] is x * b, [2/0] is b * -1 then x * mul
        for cid in ("1/0", "2/0"):
            self.assertEqual(ops_of_code(compiles[cid]["graph_code"]), graphs[cid], cid)
            self.assertEqual(compiles[cid]["name"], "torch_dynamo_resume_in_toy_example_at_7")
        # recompile reasons of frame 0, text identical
        ours = {f"{r['frame_id']}/{r['compile_id']}": r["reasons"] for r in recs if r["kind"] == "recompile"}
        for cid in frame0[1:]:
            self.assertEqual(ours[cid], reasons[cid], cid)
        verbose = [r["verbose_message"] for r in recs if r["kind"] == "recompile" and r["frame_id"] == 0][0]
        self.assertEqual(verbose.splitlines()[1:], ["    triggered by the following guard failure(s):",
                                                    "    guard 0 failures:",
                                                    "    - 0/0: tensor 'a' size mismatch at index 0. expected 10, "
                                                    "actual 16"])
        # graph breaks: line 7 of the program, Data-dependent branching, in frame 0's compiles
        ours_breaks = [(f"{r['frame_id']}/{r['compile_id']}", str(r["lineno"])) for r in recs
                       if r["kind"] == "graph_break"]
        self.assertEqual(ours_breaks, [b for b in breaks if b[0].startswith("0/")])
        self.assertTrue(all(r["reason"].startswith("Data-dependent branching\n") for r in recs
                            if r["kind"] == "graph_break"))

    def test_mlp_module(self):
        graphs, reasons, breaks = parse_logs(os.path.join(FIX, "mlp_module.torch_logs.txt"))
        recs = run_program("mlp_module", 0)
        compiles = {f"{r['frame_id']}/{r['compile_id']}": r for r in recs if r["kind"] == "compile"}
        self.assertEqual(sorted(compiles), sorted(graphs))
        for cid in compiles:
            self.assertEqual(ops_of_code(compiles[cid]["graph_code"]), graphs[cid], cid)
        self.assertEqual(graphs["0/0"][:4], ["torch.nn.functional.layer_norm", "torch._C._nn.linear",
                                             "torch._C._nn.gelu", "torch._C._nn.linear"])
        ours = {f"{r['frame_id']}/{r['compile_id']}": r["reasons"] for r in recs if r["kind"] == "recompile"}
        self.assertEqual(ours, reasons)
        self.assertEqual(breaks, [])
        # TENSOR_MATCH guards of [0/0] are Dynamo's, CUDA replaced by CPU
        with open(os.path.join(FIX, "mlp_module.torch_logs.txt")) as f:
            real = {re.sub(r"AutogradCUDA", "AutogradCPU", re.sub(r"\(CUDA,", "(CPU,", m)).replace("device=0", "device=None")
                    for line in f if "[0/0] [__guards]" in line
                    for m in re.findall(r"check_tensor\(.*?, stride=\[[^\]]*\]\)", line)}
        ours_guards = set(re.findall(r"check_tensor\(.*?, stride=\[[^\]]*\]\)", compiles["0/0"]["guards"]))
        self.assertEqual(len(real), 15)
        self.assertEqual(ours_guards, real)
        # parameters are graph inputs named by their source, in Dynamo's order
        code = compiles["0/0"]["graph_code"]
        sig = re.search(r"def forward\(self, (.*)\):", code).group(1)
        self.assertEqual([a.split(" :")[0] for a in sig.split(", ")][:3], [
            "L_self_modules_blocks_modules_0_modules_ln_parameters_weight_",
            "L_self_modules_blocks_modules_0_modules_ln_parameters_bias_", "L_x_"])


if __name__ == "__main__":
    unittest.main()
