#!/usr/bin/env python3
"""Side by side with real Dynamo: runs each program of a folder twice, under real torch.compile (Dynamo) and under
fxcapture (FX Workbench's capture), and compares per program the graphs (count, compile ids, op sequences), the
graph breaks (count, lines, first line of the reason) and the recompiles (count, guard-failure reasons). Prints a
table and a match rate.

A program is a Python file that defines `fn` (a function or an nn.Module) and `calls()` (a list of argument tuples,
or {"args": (...), "kwargs": {...}} dicts, called in turn so that recompiles show); optionally `setup(args)` (run
on the first call's arguments, e.g. mark_dynamic) and `compile_kwargs` (e.g. {"dynamic": True}).

  dynamo-compare.py [--programs DIR] [--mode both|dynamo|fxcapture] [--json OUT] [--expect FILE] [-k SUBSTR]

Each run is a subprocess (the two frame hooks cannot share a process). `--mode fxcapture --expect FILE` compares
fxcapture with a JSON of Dynamo's results saved earlier by `--json` (Dynamo is not needed then): that is how the
programs are checked where only torch 1.13 is installed. FXCAPTURE_PATH holds the folders of `_fxcapture` and the
`fxcapture` package (os.pathsep-separated) when they are not importable as installed."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------- one run (in the subprocess)
# torch's log lines carry a prefix on every line of a message ("V1127 02:50:33.374000 1195 file.py:12] [0/0]
# [__graph_breaks] ..."); capture prints the messages bare
PREFIX = re.compile(r"^[VIWEDC]\d{4} [\d:.]+ +\d+ \S+\] (?:\[[^\]]*\] )*(?:\[__\w+\] ?)?", re.M)
BREAK = re.compile(r"Graph break in user code at (\S+):(\d+)\nGraph Break Reason: (.*)")
BREAK_DUP = re.compile(r"Graph break \(user stack suppressed due to duplicate graph break\) in user code at (\S+):(\d+)")
RECOMPILE = re.compile(r"Recompiling function (\S+) in (\S+):(\d+)\n\s+triggered by the following guard failure\(s\):\n"
                       r"((?:[ \t]+(?:- .*|guard \d+ failures:)\n?)+)")


def op_name(node):
    t = node.target
    if node.op == "call_function":
        name = getattr(t, "__name__", None) or str(t)
        mod = getattr(t, "__module__", "") or ""
        if mod in ("_operator", "operator"):
            return f"operator.{name}"
        if "OpOverload" in type(t).__name__:
            return str(t)
        return f"torch.{name}" if mod.startswith("torch") else name
    if node.op == "call_method":
        return f".{t}"
    if node.op == "call_module":
        return "module"
    return node.op


def run_one(path, mode, out_path):
    import logging
    import runpy
    import torch

    os.environ.setdefault("TORCH_LOGS", "graph_breaks,recompiles")
    if mode == "fxcapture":
        for p in os.environ.get("FXCAPTURE_PATH", "").split(os.pathsep):
            if p:
                sys.path.insert(0, p)
        import fxcapture
        fxcapture.install(replace=True)
        fxcapture.config.suppress_errors = False
        compile_fn = fxcapture.compile
    else:
        compile_fn = torch.compile
        torch._logging.set_logs(graph_breaks=True, recompiles=True)
    graphs = []

    def recorder(gm, example_inputs):
        cid = None
        if mode == "dynamo":
            c = torch._guards.CompileContext.current_compile_id()
            cid = f"{c.frame_id}/{c.frame_compile_id}" if c is not None else None
        graphs.append({"compile_id": cid,
                       "ops": [op_name(n) for n in gm.graph.nodes if n.op.startswith("call_")],
                       "placeholders": sum(1 for n in gm.graph.nodes if n.op == "placeholder")})
        return gm.forward

    torch.manual_seed(0)
    ns = runpy.run_path(path, run_name="__program__")
    calls = ns["calls"]()
    kwargs = dict(ns.get("compile_kwargs", {}))
    compiled = compile_fn(ns["fn"], backend=recorder, **kwargs)
    error = None
    for i, c in enumerate(calls):
        args, kw = (c["args"], c.get("kwargs", {})) if isinstance(c, dict) else (c, {})
        if i == 0 and "setup" in ns:
            ns["setup"](args)
        try:
            compiled(*args, **kw)
        except Exception as e:  # a failing program is a result too
            error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            break
    full_reasons = []
    if mode == "fxcapture":
        ids = [f"{r['frame_id']}/{r['compile_id']}" for r in fxcapture.records if r["kind"] == "compile"]
        for g, cid in zip(graphs, ids):
            g["compile_id"] = cid
        full_reasons = [f"{r['lineno']}: {r['reason']}" for r in fxcapture.records if r["kind"] == "graph_break"]
    json.dump({"graphs": graphs, "error": error, "break_reasons": full_reasons}, open(out_path, "w"))


def parse_logs(text, program):
    text = PREFIX.sub("", text)
    breaks, recompiles = [], []
    base = os.path.basename(program)
    for m in BREAK.finditer(text):
        if os.path.basename(m.group(1)) == base:
            breaks.append({"line": int(m.group(2)), "reason": m.group(3).strip()})
    for m in BREAK_DUP.finditer(text):
        if os.path.basename(m.group(1)) == base:
            breaks.append({"line": int(m.group(2)), "reason": "(duplicate)"})
    for m in RECOMPILE.finditer(text):
        reasons = [r.strip()[2:] for r in m.group(4).strip().splitlines() if r.strip().startswith("- ")]
        recompiles.append({"function": m.group(1), "line": int(m.group(3)), "reasons": reasons})
    return breaks, recompiles


def run_program(path, mode, timeout):
    out = f"/tmp/dynamo-compare-{os.getpid()}-{mode}-{os.path.basename(path)}.json"
    env = dict(os.environ, TORCH_LOGS="graph_breaks,recompiles", PYTHONHASHSEED="0")
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, __file__, "--run-one", mode, path, out], env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s", "graphs": [], "breaks": [], "recompiles": []}
    res = {"graphs": [], "error": None}
    if os.path.exists(out):
        res = json.load(open(out))
        os.unlink(out)
    if p.returncode != 0 and not res.get("error"):
        tail = (p.stderr.strip().splitlines() or ["?"])[-1]
        res["error"] = f"exit {p.returncode}: {tail}"
    res["breaks"], res["recompiles"] = parse_logs(p.stderr, path)
    res["seconds"] = round(time.time() - t0, 2)
    return res


# ---------------------------------------------------------------- comparing
def norm_reason(r):
    """The first line of a break reason, without Dynamo's gbNNNN link and trailing detail."""
    first = r.split("\n")[0].strip()
    return re.sub(r"\s+", " ", first)


def norm_guard(g):
    """A guard failure without the frame/compile prefix and the values, e.g. "tensor 'x' size mismatch at index 0",
    and with the user line's file as its base name (Dynamo shortens it against torch's folder, which differs from
    machine to machine: "ork/main/tools/.../p02.py:3 in fn"; so is the path of a user stack's File line)."""
    g = re.sub(r"^\d+/\d+: ", "", g)
    g = re.sub(r"# \S*/([^/\s]+:\d+ in \w+)$", r"# \1", g)
    g = re.sub(r'^(\s*File ")[^"]*/([^/"]+", line \d+)', r"\1\2", g)  # a user stack line: the file's base name
    return re.sub(r"\. expected \d+, actual \d+", "", g)


def compare(d, f):
    cols = {}
    cols["graphs"] = len(d["graphs"]) == len(f["graphs"])
    cols["breaks"] = sorted(b["line"] for b in d["breaks"]) == sorted(b["line"] for b in f["breaks"])
    cols["recompiles"] = ([sorted(map(norm_guard, r["reasons"])) for r in d["recompiles"]]
                          == [sorted(map(norm_guard, r["reasons"])) for r in f["recompiles"]])
    cols["ops"] = [g["ops"] for g in d["graphs"]] == [g["ops"] for g in f["graphs"]]
    cols["ids"] = [g["compile_id"] for g in d["graphs"]] == [g["compile_id"] for g in f["graphs"]]
    cols["error"] = bool(d.get("error")) == bool(f.get("error"))
    cols["match"] = cols["graphs"] and cols["breaks"] and cols["recompiles"] and cols["error"]
    return cols


def summary(r):
    return (f"{len(r['graphs'])}g {len(r['breaks'])}b {len(r['recompiles'])}r"
            + (" ERR" if r.get("error") else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--programs", default=os.path.join(HERE, "dynamo-programs"), help="folder of programs")
    ap.add_argument("--mode", choices=("both", "dynamo", "fxcapture"), default="both")
    ap.add_argument("--json", help="write every result as JSON here")
    ap.add_argument("--expect", help="with --mode fxcapture: Dynamo's results from an earlier --json")
    ap.add_argument("-k", dest="only", help="only programs whose name contains this")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run (default 300)")
    ap.add_argument("--verbose", "-v", action="store_true", help="print what differs")
    ap.add_argument("--min-match", type=float, default=0.0,
                    help="exit 1 when the match rate is below this fraction (a test: --min-match 0.9)")
    ap.add_argument("-j", dest="jobs", type=int, default=1, help="programs run in parallel (default 1)")
    ap.add_argument("--run-one", nargs=3, metavar=("MODE", "PROGRAM", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run_one:
        run_one(a.run_one[1], a.run_one[0], a.run_one[2])
        return 0
    progs = sorted(p for p in os.listdir(a.programs) if p.endswith(".py") and (not a.only or a.only in p))
    if not progs:
        print(f"dynamo-compare: no programs in {a.programs}", file=sys.stderr)
        return 2
    expect = json.load(open(a.expect))["results"] if a.expect else {}
    results, rows = {}, []
    modes = ("dynamo", "fxcapture") if a.mode == "both" else (a.mode,)
    from concurrent.futures import ThreadPoolExecutor
    done = [0]

    def run_both(name):
        path = os.path.join(a.programs, name)
        r = {m: run_program(path, m, a.timeout) for m in modes}
        done[0] += 1
        print(f"[{done[0]}/{len(progs)}] {name}", file=sys.stderr, flush=True)
        return r

    with ThreadPoolExecutor(max(1, a.jobs)) as pool:
        all_runs = dict(zip(progs, pool.map(run_both, progs)))
    for name in progs:
        r = all_runs[name]
        if a.expect and name in expect:
            r["dynamo"] = expect[name]["dynamo"]
        results[name] = r
        if "dynamo" in r and "fxcapture" in r:
            c = compare(r["dynamo"], r["fxcapture"])
            rows.append((name, summary(r["dynamo"]), summary(r["fxcapture"]), c))
            if a.verbose and not all(c.values()):
                for m in ("dynamo", "fxcapture"):
                    x = r[m]
                    print(f"  {m}: graphs {[g['ops'] for g in x['graphs']]} ids {[g['compile_id'] for g in x['graphs']]}"
                          f"\n    breaks {x['breaks']}\n    recompiles {x['recompiles']}\n    error {x.get('error')}"
                          + "".join(f"\n    reason {t}" for t in x.get("break_reasons", [])),
                          file=sys.stderr)
    if a.json:
        import platform
        import torch
        json.dump({"python": platform.python_version(), "torch": torch.__version__, "results": results},
                  open(a.json, "w"), indent=1)
    if not rows:
        for name, r in results.items():
            print(f"{name:28} " + "  ".join(f"{m}: {summary(x)}" for m, x in r.items()))
        return 0
    keys = ["graphs", "breaks", "recompiles", "ops", "ids", "match"]
    print(f"{'PROGRAM':28} {'DYNAMO':16} {'FXCAPTURE':16} " + " ".join(f"{k:10}" for k in keys))
    for name, ds, fs, c in rows:
        print(f"{name:28} {ds:16} {fs:16} " + " ".join(f"{'yes' if c[k] else 'NO':10}" for k in keys))
    n = len(rows)
    rates = {k: sum(1 for *_, c in rows if c[k]) for k in keys}
    print(f"{'':62}" + " ".join(f"{rates[k]}/{n}".ljust(10) for k in keys))
    print(f"match rate (graph count, breaks, recompile reasons): {rates['match']}/{n} = {100.0 * rates['match'] / n:.0f}%")
    if rates["match"] < a.min_match * n:
        print(f"dynamo-compare: match rate below {a.min_match:.0%}", file=sys.stderr)
        return 1
    errors = [name for name, r in results.items() if r.get("fxcapture", {}).get("error")
              and not r.get("dynamo", {}).get("error")]
    if errors and a.min_match:
        print(f"dynamo-compare: capture raised where Dynamo did not: {', '.join(errors)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
