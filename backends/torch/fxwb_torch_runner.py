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
#     {"op": "load", "graph": the graph in fxwb's canonical JSON form (`fxwb print G --json`), "inputs": [VALUE...],
#      "backend": "eager" | a torch.compile backend, "mode": null | "max-autotune", "options": "{...}",
#      "dynamic": null | bool, "fullgraph": bool, "device": "" | "cuda:0", "trace": bool, "crash": ""}
#        -> {"ok": true, "build_ms", "compile_ms", "first_call_ms", "outputs": [],
#            "output_code": [PATH...], "debug_files": [{"name", "path"}]}
#        (it runs the graph once on the inputs, which is where torch.compile compiles)
#     {"op": "run", "inputs": [VALUE...]} -> {"ok": true, "outputs": [VALUE...]}
#     {"op": "bench", "inputs": [VALUE...], "warmup": N, "repeat": N, "profile": bool}
#        -> {"ok": true, "times_ms": [...], "peak_bytes": N, "outputs": [VALUE...], "node_ms": {"add": 0.01}}
#     {"op": "allowlist"} -> {"ok": true, "allow": {...}} (what this script allows; for fxwb's tests)
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
# Security: the graph is built node by node from its JSON, never from code text, and only allowlisted targets are
# called (see "the allowlist and the graph builder" below). Refusals answer {"ok": false, "error": "node 'x': ..."}.
#
# Devices: inputs arrive on the CPU and move to the request's "device" when one is given; every device argument of
# the graph (`device(type='cuda', index=0)`) means that same device, so a graph captured on a GPU runs on
# the CPU with CPU inputs. Outputs come back to the CPU.

import ast
import ctypes
import json
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

# The allowlist: fx-torch-allow.def's lists and the targets of the engine's ops.def, filled in by embed-runner.py
# when fxwb embeds this script ({"namespaces", "functions", "operators", "methods", "constants", "ops"}).
_ALLOW = None  # @FXWB_ALLOWLIST@


class WorkerError(Exception):
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
    # the header line, then the body read straight into the buffer torch will own (no copies of a whole file)
    with open(path, "rb") as f:
        line = f.readline()
        if not line.endswith(b"\n"):
            raise WorkerError("%s: no header line" % (path,))
        size = os.fstat(f.fileno()).st_size - len(line)
        body = bytearray(size)
        got = f.readinto(body) if size else 0
        if got != size:
            raise WorkerError("%s: read %d of %d bytes" % (path, got, size))
    head = json.loads(line[:-1].decode("utf-8"))
    dtype = _dtype(head["dtype"])
    shape = [int(s) for s in head["shape"]]
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


# ---------------------------------------------------------------- the allowlist and the graph builder
#
# The graph arrives as fxwb's canonical JSON (engine/ir/fx-json.c). It is built node by node into a torch.fx.Graph:
# no text from it is ever exec'd, eval'd or compiled. Every target is resolved by walking attributes from a fixed root
# (torch.ops, torch, math, operator) through names that are on the allowlist, each checked on the way (no dunder
# names); call_method names, keywords, placeholder names and constants are checked the same way. fxwb checked the
# graph before sending it (fx-torch-check.c, from the same lists); this is the second fence, for whatever reaches the
# worker without that check.

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT_LITERAL = re.compile(r"-?[0-9]+\Z")


def _plain(name):
    # An ASCII identifier not starting with '__' (dunder names walk from any object to its class and builtins).
    return isinstance(name, str) and _IDENT.match(name) is not None and not name.startswith("__")


def _plain_dotted(path):
    return isinstance(path, str) and path != "" and all(_plain(p) for p in path.split("."))


class Refused(WorkerError):
    pass


def _refuse(node, what):
    raise Refused("node '%s': %s" % (node, what))


def _allow():
    if not _ALLOW:
        raise WorkerError("this runner has no allowlist (it was not built by embed-runner.py): it runs no graph")
    return _ALLOW


def op_allowed(target):
    # Mirrors fx_torch_op_allowed: an overload in the engine's op table (or the in-place form of one), or a packet
    # that has an overload there, in an allowed namespace.
    allow = _allow()
    if target.startswith("torch.ops."):
        target = target[10:]
    if not _plain_dotted(target):
        return False
    parts = target.split(".")
    if parts[0] not in allow["namespaces"] or len(parts) not in (2, 3):
        return False
    ops = _op_set()
    if len(parts) == 3:
        if target in ops:
            return True
        op = parts[1]
        return (len(op) >= 2 and op.endswith("_") and not op.endswith("__")
                and "%s.%s.%s" % (parts[0], op[:-1], parts[2]) in ops)
    packets = _packet_set()
    op = parts[1]
    if target in packets:
        return True
    return len(op) >= 2 and op.endswith("_") and not op.endswith("__") and "%s.%s" % (parts[0], op[:-1]) in packets


_OPS = None
_PACKETS = None


def _op_set():
    global _OPS
    if _OPS is None:
        _OPS = frozenset(_allow()["ops"])
    return _OPS


def _packet_set():
    global _PACKETS
    if _PACKETS is None:
        _PACKETS = frozenset(t.rsplit(".", 1)[0] for t in _allow()["ops"])
    return _PACKETS


def _walk(root, path, node):
    # root.a.b.c, one checked name at a time.
    obj = root
    for name in path:
        if not _plain(name):
            _refuse(node, "the torch backend refuses the name '%s'" % name)
        try:
            obj = getattr(obj, name)
        except (AttributeError, RuntimeError) as e:
            raise WorkerError("node '%s': this torch has no %s (%s)" % (node, ".".join(path), e)) from None
    return obj


def resolve_call_function(kind, name, node):
    # The callable of a call_function node's target ({"kind", "name"} of the JSON).
    import operator
    import torch
    allow = _allow()
    if not isinstance(name, str):
        _refuse(node, "the target is not a name")
    if kind == "op":
        if not op_allowed(name):
            _refuse(node, "the torch backend refuses to call torch.ops.%s: it calls only aten and prims ops that are "
                          "in the engine's op table" % name)
        path = (name[10:] if name.startswith("torch.ops.") else name).split(".")
        return _walk(torch.ops, path, node)
    if kind == "function" and (name.startswith("operator.") or name.startswith("_operator.")):
        kind, name = "operator", name.split(".", 1)[1]
    if kind == "operator":
        if name not in allow["operators"] or not _plain(name):
            _refuse(node, "the torch backend refuses to call operator.%s" % name)
        return _walk(operator, [name], node)
    if kind == "function":
        if name not in allow["functions"] or not _plain_dotted(name):
            _refuse(node, "the torch backend refuses to call '%s' (not in its list of torch functions)" % name)
        parts = name.split(".")
        roots = {"torch": torch, "math": math}
        if parts[0] not in roots:
            _refuse(node, "the torch backend refuses to call '%s'" % name)
        return _walk(roots[parts[0]], parts[1:], node)
    if kind == "builtin":
        _refuse(node, "the torch backend refuses to call the builtin '%s'" % name)
    _refuse(node, "the torch backend refuses to call '%s' (no function target)" % name)


_CONSTANTS = {"inf": math.inf, "nan": math.nan, "math.inf": math.inf, "math.nan": math.nan, "math.pi": math.pi,
              "math.e": math.e}


class _ArgDecoder:
    """Arguments of the canonical JSON to Python values, with node references as fx nodes. No eval: each tagged
    form has one meaning; dtypes, layouts and memory formats must be those torch objects."""

    def __init__(self, node, env, run_device):
        self.node = node
        self.env = env
        self.run_device = run_device

    def decode(self, a, depth=0):
        import torch
        if depth > 32:
            _refuse(self.node, "arguments nested deeper than 32 levels")
        if a is None or isinstance(a, (bool, int, str)):
            return a
        if not isinstance(a, dict) or len(a) != 1:
            _refuse(self.node, "an argument that is not of fxwb's graph form")
        (tag, v), = a.items()
        if tag == "node":
            if not isinstance(v, str) or v not in self.env:
                _refuse(self.node, "argument refers to '%s', which is no earlier node" % (v,))
            return self.env[v]
        if tag == "float":
            if isinstance(v, str) and re.match(r"-?(inf|nan|[0-9][0-9.e+-]*)\Z", v):
                return float(v)
            _refuse(self.node, "float argument %r is not a number" % (v,))
        if tag in ("dtype", "layout", "memory_format"):
            want = {"dtype": torch.dtype, "layout": torch.layout, "memory_format": torch.memory_format}[tag]
            obj = getattr(torch, v, None) if _plain(v) else None
            if not isinstance(obj, want):
                _refuse(self.node, "'%s' is not a torch %s" % (v, tag))
            return obj
        if tag == "device":
            # every device literal means the run's device (a graph captured on a GPU runs where its inputs are)
            return self.run_device
        if tag in ("list", "tuple", "slice"):
            if not isinstance(v, list):
                _refuse(self.node, "a %s argument without items" % tag)
            items = [self.decode(x, depth + 1) for x in v]
            if tag == "list":
                return items
            if tag == "tuple":
                return tuple(items)
            if len(items) != 3:
                _refuse(self.node, "a slice needs start, stop and step")
            return slice(*items)
        if tag == "dict":
            out = {}
            if not isinstance(v, list):
                _refuse(self.node, "a dict argument without items")
            for kv in v:
                if not isinstance(kv, list) or len(kv) != 2:
                    _refuse(self.node, "a dict item that is not a [key, value] pair")
                k = self.decode(kv[0], depth + 1)
                if not isinstance(k, (str, int, float, bool, type(None))):
                    _refuse(self.node, "a dict key that is not a constant")
                out[k] = self.decode(kv[1], depth + 1)
            return out
        if tag == "ellipsis":
            return Ellipsis
        if tag == "sym":
            if isinstance(v, str) and _INT_LITERAL.match(v):
                return int(v)
            _refuse(self.node, "the symbolic expression '%s' has no value the torch backend could pass" % (v,))
        if tag == "global":
            if v in _CONSTANTS and v in _allow()["constants"]:
                return _CONSTANTS[v]
            _refuse(self.node, "the torch backend refuses to pass the Python object '%s'" % (v,))
        _refuse(self.node, "an argument of unknown kind '%s'" % (tag,))


def _find_child(children, path):
    # children: {attr: (module, its children)}; path dotted, relative to the graph that names it.
    for attr, (mod, sub) in children.items():
        if path == attr:
            return mod
        if path.startswith(attr + "."):
            found = _find_child(sub, path[len(attr) + 1:])
            if found is not None:
                return found
    return None


def build_graph_module(gj, run_device, names, depth=0):
    """A torch.fx.GraphModule from a canonical JSON graph; names maps each fx node to the JSON node's name.
    Returns (module, {attr: (child module, its children)})."""
    import torch
    import torch.fx
    if depth > 8:
        raise Refused("graph modules nested deeper than 8 levels")
    if not isinstance(gj, dict) or not isinstance(gj.get("nodes"), list):
        raise Refused("the graph is not of fxwb's canonical JSON form")
    root = torch.nn.Module()
    children = {}
    for ch in gj.get("children") or []:
        attr = ch.get("attr") if isinstance(ch, dict) else None
        if not _plain_dotted(attr):
            raise Refused("the torch backend refuses the child graph name '%s'" % (attr,))
        mod, sub = build_graph_module(ch.get("graph"), run_device, names, depth + 1)
        owner = root
        parts = attr.split(".")
        for p in parts[:-1]:
            if not hasattr(owner, p):
                owner.add_module(p, torch.nn.Module())
            owner = getattr(owner, p)
        owner.add_module(parts[-1], mod)
        children[attr] = (mod, sub)
    allow = _allow()
    graph = torch.fx.Graph()
    env = {}
    have_output = False
    for nj in gj["nodes"]:
        if not isinstance(nj, dict):
            raise Refused("a node that is not of fxwb's graph form")
        name = nj.get("name")
        op = nj.get("op")
        target = nj.get("target") or {}
        tname = target.get("name") if isinstance(target, dict) else None
        if op != "output" and not _plain(name):
            raise Refused("node '%s': the name is not a plain Python identifier" % (name,))
        if name in env:
            raise Refused("node '%s': a second node of that name" % (name,))
        dec = _ArgDecoder(name, env, run_device)
        args = nj.get("args") or []
        kwargs_list = nj.get("kwargs") or []
        if not isinstance(args, list) or not isinstance(kwargs_list, list):
            _refuse(name, "args or kwargs that are not lists")
        for kv in kwargs_list:
            if not isinstance(kv, list) or len(kv) != 2 or not _plain(kv[0]):
                _refuse(name, "keyword %r is not a plain Python identifier" % (kv[0] if isinstance(kv, list) and kv
                                                                               else kv,))
        if op == "placeholder":
            pname = tname if isinstance(tname, str) and tname else name
            bare = pname.lstrip("*")
            if len(pname) - len(bare) > 2 or not _plain(bare):
                _refuse(name, "placeholder '%s' is not a plain Python identifier" % (pname,))
            if "default" in nj:
                fx_node = graph.placeholder(pname, default_value=dec.decode(nj["default"]))
            else:
                fx_node = graph.placeholder(pname)
        elif op == "output":
            if len(args) != 1:
                _refuse(name, "output needs one argument")
            graph.output(dec.decode(args[0]))
            have_output = True
            continue
        else:
            a = tuple(dec.decode(x) for x in args)
            kw = {kv[0]: dec.decode(kv[1]) for kv in kwargs_list}
            if op == "call_function":
                fn = resolve_call_function(target.get("kind"), tname, name)
                fx_node = graph.call_function(fn, a, kw)
            elif op == "call_method":
                if tname not in allow["methods"] or not _plain(tname):
                    _refuse(name, "the torch backend refuses to call the method '%s'" % (tname,))
                if not a or not isinstance(a[0], torch.fx.Node):
                    _refuse(name, "call_method '%s' has no node to call it on" % tname)
                fx_node = graph.call_method(tname, a, kw)
            elif op in ("get_attr", "call_module"):
                if not _plain_dotted(tname):
                    _refuse(name, "the torch backend refuses the attribute path '%s'" % (tname,))
                if _find_child(children, tname) is None:
                    _refuse(name, "the graph uses the module attribute '%s' (%s), and module attributes (weights, "
                                  "buffers, constants) are not stored with a graph, so the torch backend cannot run "
                                  "it" % (tname, op))
                fx_node = graph.get_attr(tname) if op == "get_attr" else graph.call_module(tname, a, kw)
            else:
                _refuse(name, "unknown op '%s'" % (op,))
        env[name] = fx_node
        names[fx_node] = name
    if not have_output:
        raise Refused("the graph has no output node")
    return torch.fx.GraphModule(root, graph, class_name="GraphModule"), children


class _TimedInterpreter:
    """Per-node wall times (eager bench): torch.fx.Interpreter with a clock around each call node."""

    @staticmethod
    def run(module, names, inputs, calls, sync):
        import torch.fx
        total = {}

        class Timed(torch.fx.Interpreter):
            def run_node(self, n):
                if n.op not in ("call_function", "call_method", "call_module"):
                    return super().run_node(n)
                t0 = time.perf_counter()
                r = super().run_node(n)
                if sync is not None:
                    sync()
                key = names.get(n, n.name)
                total[key] = total.get(key, 0.0) + (time.perf_counter() - t0)
                return r

        for _ in range(calls):
            Timed(module).run(*inputs)
        return {k: v * 1e3 / calls for k, v in total.items()}


class Worker:
    def __init__(self, workdir, out):
        self.workdir = workdir
        self.out = out
        self.fn = None
        self.module = None
        self.device = ""
        self.names = {}
        self.backend = "eager"
        self.crash = ""

    # ------------------------------------------------------------ building the callable

    def _build_module(self, req):
        import torch
        # A graph runs where its inputs are (or on the device option): the device literals in its arguments
        # (`device(type='cuda', index=0)` in a full() captured on a GPU) name the run's device.
        run_device = torch.device(req.get("device") or "cpu")
        self.names = {}
        gm, _children = build_graph_module(req.get("graph"), run_device, self.names)
        return gm

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
            # on a GPU as PyTorch's benchmarks time it: the inputs already on the device, each call between two
            # CUDA events (its device time, launches included), read after the call's work is done
            for _ in range(max(repeat, 1)):
                if cuda:
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    result = self.fn(*inputs)
                    end.record()
                    end.synchronize()
                    times.append(start.elapsed_time(end))
                else:
                    t0 = time.perf_counter()
                    result = self.fn(*inputs)
                    times.append((time.perf_counter() - t0) * 1e3)
        peak = int(torch.cuda.max_memory_allocated()) if cuda else 0
        node_ms = {}
        if req.get("profile") and self.backend == "eager":
            node_ms = self._profile(inputs, min(max(repeat, 1), 10), cuda)
        return {"ok": True, "times_ms": times, "peak_bytes": peak, "node_ms": node_ms, "cuda_events": cuda,
                "outputs": encode_outputs(result, self.workdir)}

    def _profile(self, inputs, calls, cuda):
        import torch
        with torch.no_grad():
            return _TimedInterpreter.run(self.module, self.names, inputs, calls,
                                         torch.cuda.synchronize if cuda else None)

    def op_allowlist(self, req):
        # For the test that checks this copy against fxwb's C tables.
        return {"ok": True, "allow": _allow()}


def _error_reply(e):
    if isinstance(e, WorkerError):
        return {"ok": False, "error": str(e), "traceback": ""}
    msg = "".join(traceback.format_exception_only(type(e), e)).strip()
    frames = traceback.extract_tb(e.__traceback__)
    # From the graph's frame on (the runner's own frames say nothing); the last two when the graph has none.
    # (torch.fx runs the GraphModule's code from "<eval_with_key>.N": shown as the graph's frame)
    first = next((i for i, f in enumerate(frames) if f.filename.startswith("<eval_with_key>")),
                 max(len(frames) - 2, 0))
    lines = []
    for f in frames[first:]:
        fname = "<fxwb graph>" if f.filename.startswith("<eval_with_key>") else f.filename
        lines.append('  File "%s", line %d, in %s' % (fname, f.lineno, f.name))
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
