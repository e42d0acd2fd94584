# fxwb_torch_runner.py: the worker of fxwb's `torch` backend: runs one FX graph through the installed PyTorch.
#
# fxwb embeds this file in its binary, writes it into a private temporary folder and starts
#     python -u fxwb_torch_runner.py WORKDIR
# with stdin and stdout on pipes and stderr on WORKDIR/stderr.log. Everything the graph prints goes to stderr:
# the runner keeps the original stdout for its replies only.
#
# Protocol: one JSON object per line each way. The runner first answers, unasked,
#     {"ok": true, "hello": 1, "torch": "2.5.1", "python": "3.11.2", "has_compile": true, "executable": "..."}
# (or {"ok": false, "error": "..."} when torch cannot be imported), then one reply per request:
#     {"op": "load", "code": GraphModule.code, "modules": [{"path": "true_graph_0", "code": ...}],
#      "globals": {"_operator_not_": "_operator.not_"}, "attrs": ["_tensor_constant0"], "inputs": [VALUE...],
#      "backend": "eager" | a torch.compile backend, "mode": null | "max-autotune", "options": "{...}",
#      "dynamic": null | bool, "fullgraph": bool, "device": "" | "cuda:0", "trace": bool, "crash": ""}
#        -> {"ok": true, "build_ms", "compile_ms", "first_call_ms", "outputs": [],
#            "output_code": [PATH...], "debug_files": [{"name", "path"}]}
#        (it runs the graph once on the inputs, which is where torch.compile compiles)
#     {"op": "run", "inputs": [VALUE...]} -> {"ok": true, "outputs": [VALUE...]}
#     {"op": "bench", "inputs": [VALUE...], "warmup": N, "repeat": N, "profile": bool}
#        -> {"ok": true, "times_ms": [...], "peak_bytes": N, "outputs": [VALUE...], "node_ms": {"add": 0.01}}
#     {"op": "quit"} -> (exits)
# A failed request answers {"ok": false, "error": "RuntimeError: ...", "traceback": "last lines"}.
#
# VALUE: {"t": "tensor", "path": FILE} | {"t": "int", "v": 3} | {"t": "float", "v": "1.5"} (Python float repr,
# so inf and nan travel) | {"t": "bool", "v": true} | {"t": "none"} | {"t": "tuple" | "list", "items": [VALUE...]}.
#
# Tensor files (one per tensor, in WORKDIR): a one-line JSON header, then raw little-endian bytes:
#     {"dtype": "float32", "shape": [2, 3], "stride": [3, 1], "storage": 6, "device": "cpu"}
# "storage" is the number of elements from the tensor's first element to its last reachable one, which is exactly
# what the body holds: the tensor is body.as_strided(shape, stride). Without "storage" the body is contiguous
# (fxwb's fx_tensor_save format). No numpy: bytes go through torch.frombuffer and ctypes.
#
# Devices: inputs arrive on the CPU and move to the request's "device" when one is given; every device literal in
# the graph's code (`device(type='cuda', index=0)`) means that same device, so a graph captured on a GPU runs on
# the CPU with CPU inputs. Outputs come back to the CPU.

import ast
import ctypes
import importlib
import json
import linecache
import math
import os
import re
import sys
import time
import traceback

_DTYPES = (
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
    "complex64", "complex128",
)

# The modules whose functions a graph may call (fxwb checks the graph before it gets here; this is a second
# fence). torch's own namespaces that load or run outside code are excluded.
_ALLOWED_ROOTS = ("torch", "operator", "_operator", "math", "builtins")
_DENIED_PREFIXES = (
    "torch.hub", "torch.load", "torch.save", "torch.package", "torch.utils", "torch.distributed",
    "torch.multiprocessing", "torch.serialization", "torch.jit.load", "torch.classes", "torch.ops.load_library",
    "torch._C._jit", "builtins.eval", "builtins.exec", "builtins.open", "builtins.__import__", "builtins.compile",
    "builtins.input", "builtins.breakpoint",
)


class WorkerError(Exception):
    pass


class MissingAttribute(WorkerError, AttributeError):
    # An AttributeError still, so that hasattr() (nn.Module.add_module asks it) answers False.
    pass


def _say(out, obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()


def _dtype(name):
    import torch
    if name not in _DTYPES or not hasattr(torch, name):
        raise WorkerError("tensor dtype %r is not supported by this torch" % (name,))
    return getattr(torch, name)


def read_tensor(path, device):
    import torch
    with open(path, "rb") as f:
        data = f.read()
    nl = data.index(b"\n")
    head = json.loads(data[:nl].decode("utf-8"))
    dtype = _dtype(head["dtype"])
    shape = [int(s) for s in head["shape"]]
    body = bytearray(data[nl + 1:])
    itemsize = torch.empty((), dtype=dtype).element_size()
    count = len(body) // itemsize
    if len(body) != count * itemsize:
        raise WorkerError("%s: %d bytes is no whole number of %s elements" % (path, len(body), head["dtype"]))
    if "storage" in head:
        stride = [int(s) for s in head["stride"]]
        if int(head["storage"]) != count:
            raise WorkerError("%s: %d elements in the body, header says %s" % (path, count, head["storage"]))
        if count:
            t = torch.frombuffer(body, dtype=dtype).as_strided(shape, stride, 0)
        else:
            t = torch.empty_strided(shape, stride, dtype=dtype)
    elif count:
        t = torch.frombuffer(body, dtype=dtype).reshape(shape)
    else:
        t = torch.empty(shape, dtype=dtype)
    want = head.get("device") or "cpu"
    if device:
        want = device
    if want != "cpu":
        t = t.to(want)
    return t


def _contiguous(shape):
    stride, acc = [], 1
    for s in reversed(shape):
        stride.append(acc)
        acc *= max(int(s), 1)
    return list(reversed(stride))


def write_tensor(t, path):
    import torch
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    name = str(t.dtype).replace("torch.", "")
    if name not in _DTYPES:
        raise WorkerError("output dtype %s is not supported by fxwb" % t.dtype)
    shape, stride = list(t.shape), list(t.stride())
    extent = 0
    if t.numel() > 0:
        extent = 1 + sum((s - 1) * st for s, st in zip(shape, stride))
    nbytes = extent * t.element_size()
    head = {"dtype": name, "shape": shape, "stride": stride, "storage": extent, "device": "cpu"}
    with open(path, "wb") as f:
        f.write(json.dumps(head).encode("utf-8") + b"\n")
        if nbytes:
            f.write(ctypes.string_at(t.data_ptr(), nbytes))


def decode(v, device):
    t = v.get("t")
    if t == "tensor":
        return read_tensor(v["path"], device)
    if t == "int":
        return int(v["v"])
    if t == "float":
        return float(v["v"])
    if t == "bool":
        return bool(v["v"])
    if t == "none":
        return None
    if t == "tuple":
        return tuple(decode(x, device) for x in v["items"])
    if t == "list":
        return [decode(x, device) for x in v["items"]]
    raise WorkerError("unknown value kind %r" % (t,))


class _Outputs:
    def __init__(self, workdir):
        self.workdir = workdir
        self.count = 0

    def encode(self, v):
        import torch
        if isinstance(v, torch.Tensor):
            path = os.path.join(self.workdir, "out_%d.fxt" % self.count)
            self.count += 1
            write_tensor(v, path)
            return {"t": "tensor", "path": path}
        if isinstance(v, bool):
            return {"t": "bool", "v": v}
        if isinstance(v, int):
            return {"t": "int", "v": v}
        if isinstance(v, float):
            return {"t": "float", "v": repr(v)}
        if v is None:
            return {"t": "none"}
        if isinstance(v, tuple):
            return {"t": "tuple", "items": [self.encode(x) for x in v]}
        if isinstance(v, list):
            return {"t": "list", "items": [self.encode(x) for x in v]}
        if type(v).__name__ in ("SymInt", "SymFloat", "SymBool"):
            return self.encode({"SymInt": int, "SymFloat": float, "SymBool": bool}[type(v).__name__](v))
        raise WorkerError("output of type %s cannot be returned to fxwb" % type(v).__name__)


def encode_outputs(result, workdir):
    # The graph's output is a tuple or list; fxwb's interpreter flattens it one level, and so do we.
    enc = _Outputs(workdir)
    if isinstance(result, (tuple, list)):
        return [enc.encode(x) for x in result]
    return [enc.encode(result)]


def resolve_global(qualified):
    if not qualified.startswith(tuple(r + "." for r in _ALLOWED_ROOTS)) or qualified.startswith(_DENIED_PREFIXES):
        raise WorkerError("the graph calls %s, which the torch backend does not run" % qualified)
    parts = qualified.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise WorkerError("cannot resolve %s" % qualified)


def _namespace(globals_map):
    import operator
    import torch
    ns = {
        "torch": torch, "aten": torch.ops.aten, "prims": torch.ops.prims, "operator": operator,
        "math": math, "inf": math.inf, "nan": math.nan, "NoneType": type(None), "device": torch.device,
        "__name__": "fxwb_graph",
    }
    for name, qualified in globals_map.items():
        ns[name] = resolve_global(qualified)
    return ns


class _Profile:
    """Per-node wall times of an instrumented copy of forward (eager only)."""

    def __init__(self, sync):
        self.sync = sync
        self.total = {}

    def rec(self, name, t0):
        if self.sync is not None:
            self.sync()
        self.total[name] = self.total.get(name, 0.0) + (time.perf_counter() - t0)


def _instrument(code):
    # Every `name = expr` statement of forward becomes `_t = _clock(); name = expr; _prof.rec('name', _t)`.
    tree = ast.parse(code)
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        body = []
        for st in fn.body:
            target = None
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                tg = st.targets[0] if isinstance(st, ast.Assign) else st.target
                if isinstance(tg, ast.Name) and st.value is not None and not isinstance(st.value, (ast.Constant,
                                                                                                   ast.Name)):
                    target = tg.id
            if target is None:
                body.append(st)
                continue
            body.extend(ast.parse("_fxwb_t0 = _fxwb_clock()").body)
            body.append(st)
            body.extend(ast.parse("_fxwb_prof.rec(%r, _fxwb_t0)" % target).body)
        fn.body = body
    ast.fix_missing_locations(tree)
    return tree


class Worker:
    def __init__(self, workdir, out):
        self.workdir = workdir
        self.out = out
        self.fn = None
        self.module = None
        self.device = ""
        self.code = None
        self.ns = None
        self.backend = "eager"
        self.crash = ""

    # ------------------------------------------------------------ building the callable

    def _build_module(self, req):
        import torch

        attrs = set(req.get("attrs") or [])

        class FxwbAttrModule(torch.nn.Module):
            # Only for graphs with get_attr nodes: their values are not stored with the graph.
            def __getattr__(self, name):
                try:
                    return super().__getattr__(name)
                except AttributeError:
                    if name in attrs or any(a.startswith(name + ".") for a in attrs):
                        raise MissingAttribute("the graph uses the module attribute '%s' (get_attr or call_module), "
                                          "and module attributes are not stored with a graph" % name) from None
                    raise

        base = FxwbAttrModule if attrs else torch.nn.Module

        def make(code, ns, filename):
            src = "from __future__ import annotations\n" + code
            # Tracebacks show the graph's lines.
            linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
            exec(compile(src, filename, "exec"), ns)
            # A class with a real forward, so that Dynamo sees an ordinary nn.Module.
            return type("GraphModule", (base,), {"forward": ns["forward"]})()

        self.ns = _namespace(req.get("globals") or {})
        # A graph runs where its inputs are (or on the device option): the device literals in its code
        # (`device(type='cuda', index=0)` in a full() captured on a GPU) name the run's device.
        run_device = torch.device(req.get("device") or "cpu")
        self.ns["device"] = lambda *args, **kwargs: run_device
        root = make(req["code"], dict(self.ns), "<fxwb graph>")
        for sub in req.get("modules") or []:
            owner = root
            parts = sub["path"].split(".")
            for p in parts[:-1]:
                owner = getattr(owner, p)
            owner.add_module(parts[-1], make(sub["code"], dict(self.ns), "<fxwb graph %s>" % sub["path"]))
        self.code = req["code"]
        return root

    def op_load(self, req):
        import torch

        crash = req.get("crash") or ""
        self._crash(crash, "load")
        self.device = req.get("device") or ""
        self.crash = crash
        t0 = time.perf_counter()
        self.module = self._build_module(req)
        if self.device:
            self.module = self.module.to(self.device)
        self.module.eval()
        fn = self.module
        build_ms = (time.perf_counter() - t0) * 1e3
        self.backend = req.get("backend") or "eager"
        output_code, debug_files = [], []
        compile_ms = 0.0
        inputs = [decode(v, self.device) for v in req.get("inputs") or []]
        if self.backend != "eager":
            if not hasattr(torch, "compile"):
                raise WorkerError("torch %s has no torch.compile (needs PyTorch >= 2.0); use backend='eager'"
                                  % torch.__version__)
            options = ast.literal_eval(req.get("options") or "{}")
            if not isinstance(options, dict):
                raise WorkerError("option 'options' must be a Python dict literal, got %r" % (options,))
            kw = {"backend": self.backend, "fullgraph": bool(req.get("fullgraph"))}
            if req.get("dynamic") is not None:
                kw["dynamic"] = bool(req["dynamic"])
            if req.get("mode"):
                kw["mode"] = req["mode"]
            if options:
                kw["options"] = options
            if self.backend == "inductor" and req.get("trace"):
                self._enable_trace()
            t1 = time.perf_counter()
            fn = torch.compile(self.module, **kw)
            compile_ms = (time.perf_counter() - t1) * 1e3
        self.fn = fn
        t2 = time.perf_counter()
        with torch.no_grad():
            fn(*inputs)  # its outputs are not sent: run() gives them
        self._sync()
        first_ms = (time.perf_counter() - t2) * 1e3
        if self.backend == "inductor":
            output_code, debug_files = self._collect_output_code()
        if self.backend != "eager":
            compile_ms = build_ms + compile_ms + first_ms  # torch.compile is lazy: the first call compiles
        else:
            compile_ms = build_ms
        return {"ok": True, "build_ms": build_ms, "compile_ms": compile_ms, "first_call_ms": first_ms,
                "outputs": [], "output_code": output_code,
                "debug_files": debug_files}

    def _enable_trace(self):
        # Inductor's TORCH_COMPILE_DEBUG files (output_code.py, ir_pre_fusion.txt, ...) into WORKDIR/debug.
        try:
            import torch._dynamo.config as dcfg
            import torch._inductor.config as icfg
            dcfg.debug_dir_root = os.path.join(self.workdir, "debug")
            icfg.trace.enabled = True
        except Exception as e:  # an older or newer torch without these knobs: output code from the code cache
            sys.stderr.write("fxwb: Inductor trace not enabled: %s\n" % e)

    def _collect_output_code(self):
        found, debug = [], []
        droot = os.path.join(self.workdir, "debug")
        models = set()
        for dirpath, _dirs, files in os.walk(droot):
            model = os.path.basename(dirpath)
            if not model.startswith("model__"):
                continue
            models.add(model)
            for f in sorted(files):
                p = os.path.join(dirpath, f)
                if f == "output_code.py":
                    found.append(p)
                elif os.path.getsize(p) < (4 << 20):
                    debug.append({"name": f, "path": p, "model": model})
        # One Inductor graph: its files by their own names; several (graph breaks): prefixed by their folder.
        for d in debug:
            model = d.pop("model")
            if len(models) > 1:
                d["name"] = model + "/" + d["name"]
        if not found:
            # No trace folder: the output code modules Inductor wrote into its code cache (TORCHINDUCTOR_CACHE_DIR
            # points into WORKDIR), recognised by their call() entry point.
            croot = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or ""
            cands = []
            for dirpath, _dirs, files in os.walk(croot) if croot else ():
                for f in files:
                    if not f.endswith(".py"):
                        continue
                    p = os.path.join(dirpath, f)
                    try:
                        with open(p, "r", encoding="utf-8", errors="replace") as fh:
                            text = fh.read()
                    except OSError:
                        continue
                    # the wrapper module: it defines call() (a Runner's method in recent versions) and builds
                    # its kernels through async_compile; kernel modules do neither
                    if re.search(r"^\s*def call\((self, )?args", text, re.M) and "async_compile" in text:
                        cands.append((os.path.getmtime(p), p))
            found = [p for _m, p in sorted(cands)]
        found.sort(key=lambda p: os.path.getmtime(p))
        return found, debug

    def _sync(self):
        import torch
        if self.device.startswith("cuda") or (self.device == "" and torch.cuda.is_available()
                                              and torch.cuda.is_initialized()):
            torch.cuda.synchronize()

    def _crash(self, crash, where):
        # Test hooks (option _crash_for_test): how a dying or hanging worker looks to fxwb.
        if not crash or not crash.endswith(where):
            return
        kind = crash.split("-")[0]
        sys.stderr.write("fxwb test: crashing the worker (%s) in %s\n" % (kind, where))
        sys.stderr.flush()
        if kind == "exit":
            os._exit(3)
        if kind == "segv":
            ctypes.string_at(0)
        if kind == "hang":
            while True:
                time.sleep(60)
        if kind == "raise":
            raise RuntimeError("fxwb test: an exception in %s" % where)

    # ------------------------------------------------------------ calls

    def _need(self):
        if self.fn is None:
            raise WorkerError("no graph loaded")

    def op_run(self, req):
        import torch
        self._need()
        self._crash(self.crash, "run")
        inputs = [decode(v, self.device) for v in req.get("inputs") or []]
        with torch.no_grad():
            result = self.fn(*inputs)
        self._sync()
        return {"ok": True, "outputs": encode_outputs(result, self.workdir)}

    def op_bench(self, req):
        import torch
        self._need()
        self._crash(self.crash, "bench")
        inputs = [decode(v, self.device) for v in req.get("inputs") or []]
        warmup, repeat = int(req.get("warmup", 1)), int(req.get("repeat", 10))
        cuda = self.device.startswith("cuda") or any(
            isinstance(x, torch.Tensor) and x.device.type == "cuda" for x in inputs)
        times = []
        result = None
        with torch.no_grad():
            for _ in range(max(warmup, 0)):
                result = self.fn(*inputs)
            self._sync()
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            for _ in range(max(repeat, 1)):
                t0 = time.perf_counter()
                result = self.fn(*inputs)
                if cuda:
                    torch.cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1e3)
        peak = int(torch.cuda.max_memory_allocated()) if cuda else 0
        node_ms = {}
        if req.get("profile") and self.backend == "eager":
            node_ms = self._profile(inputs, min(max(repeat, 1), 10), cuda)
        return {"ok": True, "times_ms": times, "peak_bytes": peak, "node_ms": node_ms,
                "outputs": encode_outputs(result, self.workdir)}

    def _profile(self, inputs, calls, cuda):
        import torch
        prof = _Profile(torch.cuda.synchronize if cuda else None)
        ns = dict(self.ns)
        ns["_fxwb_clock"] = time.perf_counter
        ns["_fxwb_prof"] = prof
        exec(compile(_instrument(self.code), "<fxwb graph (profiled)>", "exec"), ns)
        forward = ns["forward"]
        with torch.no_grad():
            for _ in range(calls):
                forward(self.module, *inputs)
        return {k: v * 1e3 / calls for k, v in prof.total.items()}


def _error_reply(e):
    if isinstance(e, WorkerError):
        return {"ok": False, "error": str(e), "traceback": ""}
    msg = "".join(traceback.format_exception_only(type(e), e)).strip()
    frames = traceback.extract_tb(e.__traceback__)
    # From the graph's frame on (the runner's own frames say nothing); the last two when the graph has none.
    first = next((i for i, f in enumerate(frames) if f.filename.startswith("<fxwb graph")), max(len(frames) - 2, 0))
    lines = []
    for f in frames[first:]:
        lines.append('  File "%s", line %d, in %s' % (f.filename, f.lineno, f.name))
        if f.line:
            lines.append("    " + f.line.strip())
    return {"ok": False, "error": msg, "traceback": "\n".join(lines[-16:])}


def main():
    workdir = sys.argv[1]
    # Replies go to the original stdout; anything else that writes to stdout (print in a graph, torch's logs)
    # lands in stderr.log.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    try:
        import torch
    except BaseException as e:  # noqa: B902 (an ImportError, or torch's own failures while importing)
        _say(out, {"ok": False, "error": "cannot import torch: %s" % "".join(
            traceback.format_exception_only(type(e), e)).strip(), "executable": sys.executable})
        return 2
    _say(out, {"ok": True, "hello": 1, "torch": torch.__version__, "python": sys.version.split()[0],
               "has_compile": hasattr(torch, "compile"), "executable": sys.executable,
               "cuda": bool(torch.cuda.is_available())})
    worker = Worker(workdir, out)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "quit":
                return 0
            handler = getattr(worker, "op_" + str(op), None)
            if handler is None:
                raise WorkerError("unknown request %r" % (op,))
            reply = handler(req)
        except Exception as e:
            reply = _error_reply(e)
        _say(out, reply)
        if worker.crash == "exit-reply":  # test hook: gone before the next request (fxwb then writes to a dead pipe)
            sys.stderr.write("fxwb test: crashing the worker (exit) after a reply\n")
            sys.stderr.flush()
            os._exit(3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
