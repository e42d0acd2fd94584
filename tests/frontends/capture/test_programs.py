"""Runs the fixture programs (real Dynamo output in *.torch_logs.txt, PyTorch 2.11 on CUDA) on CPU under capture
and compares frames, compile ids, graph-break lines, recompile reasons and per-graph op sequences.

Differences the versions imply, and which this test therefore does not compare:
- devices: the programs run with DEV='cpu' (only the DEV line differs from the fixtures' program.py);
- 2.11 names a node after the variable it is stored to (`x`, `b`, `input_1`); capture names nodes after their
  target as FX does (`truediv`, `mul`, `add`): only op sequences are compared, not node names;
- devices in annotations: capture's tensors run on the meta device, so annotations end in `meta` where the logs
  have `cuda:0`: annotations are compared without the device;
- automatic dynamic shapes are compared: the recompiled graphs' placeholders (SymInt placeholders `s97: "Sym(s97)"`
  included) and every annotation (`f32[s97, s98][s98, 1]`) must equal the logs'. The shape-env guards that come
  from Inductor itself (`can_use_32bit_indexing`, `pad_mm`) are not emitted by capture, so guard trees are not
  compared for the dynamic entries;
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
fxcapture.config.suppress_errors = False  # the programs' inductor graphs must compile on the engine, not fall back
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


ANN = re.compile(r'^\s+(\w+): "([^"]*)"')
DEVICE = re.compile(r"(cuda:\d+|cpu|meta)$")


def no_device(ann):
    return DEVICE.sub("", ann)


def signature(code):
    """[(name, annotation without device)] of the forward's parameters."""
    m = re.search(r"def forward\(self, (.*)\):", code)
    return [(n, no_device(a)) for n, a in re.findall(r'(\w+): "([^"]*)"', m.group(1))]


def annotations(code):
    """[annotation without device] of the body's statements, in order."""
    return [no_device(m.group(2)) for m in map(ANN.match, code.splitlines()) if m]


def parse_graph_texts(path):
    """compile id -> the readable graph text Dynamo logged (graph_code channel)."""
    texts, cur = {}, None
    with open(path) as f:
        for line in f.read().splitlines():
            m = LOG.match(line)
            if not m:
                continue
            cid, chan, text = m.groups()
            if chan == "__graph_code" and "TRACED GRAPH" in text:
                cur = texts.setdefault(cid, [])
            elif chan == "__graph_code" and cur is not None:
                cur.append(text)
            else:
                cur = None
    return {cid: "\n".join(lines) for cid, lines in texts.items()}


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
    before = dict(fxcapture.counters)
    torch.manual_seed(seed)
    runpy.run_path(os.path.join(FIX, name + ".py"), run_name="__main__")
    recs = fxcapture.records[start:]
    # every graph ran on the engine's inductor: none fell back to torch eager
    graphs = [r for r in recs if r["kind"] == "compile" and r["n_ops"] > 0]
    assert fxcapture.counters["eager_fallbacks"] == before["eager_fallbacks"], "a graph fell back to eager"
    assert fxcapture.counters["engine_compiles"] - before["engine_compiles"] >= len(graphs) > 0, \
        (fxcapture.counters, before, len(graphs))
    assert all(r["backend_error"] is None for r in graphs)
    return recs


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
        # placeholders and annotations, symbols included (automatic dynamic shapes): frame 0's four compiles, and
        # the resume frame compiles whose ops are the logs' (which resume frame recompiles follows the data)
        texts = parse_graph_texts(os.path.join(FIX, "toy_graph_break.torch_logs.txt"))
        self.assertEqual(signature(texts["0/2"])[:3], [("s97", "Sym(s97)"), ("s98", "Sym(s98)"),
                                                       ("L_a_", "f32[s97, s98][s98, 1]")])
        for cid in frame0 + ["1/0", "2/0"]:
            self.assertEqual(signature(compiles[cid]["graph_readable"]), signature(texts[cid]), cid)
            self.assertEqual(annotations(compiles[cid]["graph_readable"]), annotations(texts[cid]), cid)
        # the resume frames' recompiles are numbered in the order the data takes the branches: each of ours that is
        # dynamic must be one of the logs' graphs of that frame (ops, placeholders and annotations)
        def kind(frame, ops, sig):
            # frame, ops, and the tensor inputs' names, dtypes and ranks
            return (str(frame), tuple(ops), tuple((n, a.split("[")[0], a.split("]")[0].count(",")) for n, a in sig
                                                  if not a.startswith("Sym(")))

        real = {kind(cid.split("/")[0], graphs[cid], signature(t)): (signature(t), annotations(t))
                for cid, t in texts.items() if "Sym(" in t}
        compared = 0
        for cid, c in compiles.items():
            k = kind(c["frame_id"], ops_of_code(c["graph_code"]), signature(c["graph_readable"]))
            if cid.startswith("0/") or "Sym(" not in c["graph_readable"] or k not in real:
                continue
            self.assertEqual((signature(c["graph_readable"]), annotations(c["graph_readable"])), real[k], cid)
            compared += 1
        self.assertGreaterEqual(compared, 2)
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
        # placeholders and annotations of both compiles; [0/1] has x's batch dim as s77
        texts = parse_graph_texts(os.path.join(FIX, "mlp_module.torch_logs.txt"))
        for cid in ("0/0", "0/1"):
            self.assertEqual(signature(compiles[cid]["graph_readable"]), signature(texts[cid]), cid)
            self.assertEqual(annotations(compiles[cid]["graph_readable"]), annotations(texts[cid]), cid)
        self.assertIn(("s77", "Sym(s77)"), signature(texts["0/1"]))
        self.assertIn("size=[None, 256], stride=[256, 1]", compiles["0/1"]["guards"])
        self.assertIn("+- LAMBDA_GUARD: 2 <= L['x'].size()[0]  # return F.layer_norm(", compiles["0/1"]["guards"])
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
