"""fxcapture: FX Workbench's torch.compile for CPython 3.11 and 3.12, with torch 1.13 or 2.x.

The frame hook, the symbolic interpreter and the guards are C (_fxcapture); this package holds the
Python-facing surface: torch.compile and its forms, the backend registry, GraphModule construction
for the custom-backend contract, torch._dynamo-style helpers and the in-memory capture record.
Automatic dynamic shapes keep their symbols, hints and shape guards in _shapes (a small ShapeEnv).
"""
import contextlib
import functools
import json
import logging
import os
import sys
import sysconfig
import types

import torch
import torch.fx

import _fxcapture

__all__ = [
    "compile", "reset", "list_backends", "register_backend", "lookup_backend", "allow_in_graph",
    "disallow_in_graph", "graph_break", "disable", "mark_static", "mark_dynamic", "explain", "set_stance",
    "is_compiling", "records", "dump_json", "install", "Unsupported", "BackendCompilerFailed", "config", "counters",
]

log = logging.getLogger("torch._dynamo")

# ---------------------------------------------------------------- the record (frames, compiles, graphs, guards, breaks)
records = []
# torch._dynamo.utils.counters' role for the engine's backends: graphs the engine compiled, and graphs it could not
# compile that ran through torch eager instead (config.suppress_errors). Tests read both: a differential test whose
# backend quietly fell back to eager compares eager with eager.
counters = {"engine_compiles": 0, "eager_fallbacks": 0}
_disallowed_ids = set()
_allowed_ids = set()


def _torch_logs():
    return [p.strip().lstrip("+") for p in os.environ.get("TORCH_LOGS", "").split(",") if p.strip()]


def _record(kind, data):
    entry = {"kind": kind}
    entry.update(data)
    records.append(entry)
    if kind == "recompile_limit":
        log.warning("%s", data["message"])


def _jsonable(obj):
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items() if k not in ("examples", "nodes")}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return str(obj)


def dump_json(path):
    """Writes the capture record as JSON (format version 1)."""
    with open(path, "w") as f:
        json.dump({"format": "fxcapture-record", "version": 1, "records": _jsonable(records)}, f, indent=1)


class Unsupported(RuntimeError):
    """A graph break under fullgraph=True (torch._dynamo.exc.Unsupported)."""


# ---------------------------------------------------------------- global state (Dynamo's GlobalStateGuard)
def _c_probe(name):
    # The C-level getters of torch._C (each call costs tens of ns, checked on every cache hit); None when this torch
    # has no such state, which then never changes.
    return getattr(torch._C, name, None)


# (reason word, probe) in GlobalStateGuard::reason()'s order.
_global_state_probes = (
    ("grad_mode", _c_probe("is_grad_enabled")),
    ("autocast", _c_probe("is_autocast_enabled")),
    ("torch_function", _c_probe("_is_torch_function_enabled")),
    ("deterministic_algorithms", _c_probe("_get_deterministic_algorithms")),
    ("deterministic_algorithms_warn_only", _c_probe("_get_deterministic_algorithms_warn_only")),
    ("allow_tf32", _c_probe("_get_cublas_allow_tf32")),
    ("allow_fp16_reduce", _c_probe("_get_cublas_allow_fp16_reduced_precision_reduction")),
    ("allow_bf16_reduce", _c_probe("_get_cublas_allow_bf16_reduced_precision_reduction")),
    ("num_threads", _c_probe("get_num_threads")),
    ("default_dtype", _c_probe("get_default_dtype")),
)


# ---------------------------------------------------------------- backends
_backends = {}
_backend_tags = {}


def register_backend(compiler_fn=None, name=None, tags=()):
    """Registers a backend under a name (decorator or call), as torch._dynamo.register_backend."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    name = name or compiler_fn.__name__
    if name in _backends:
        raise AssertionError(f"duplicate name: {name}")
    _backends[name] = compiler_fn
    _backend_tags[name] = tuple(tags)
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")):
    exclude = set(exclude_tags or ())
    return sorted(n for n, t in _backend_tags.items() if not exclude.intersection(t))


def lookup_backend(compiler_fn):
    if isinstance(compiler_fn, str):
        if compiler_fn not in _backends:
            raise InvalidBackend(compiler_fn)
        return _backends[compiler_fn]
    return compiler_fn


class InvalidBackend(RuntimeError):
    def __init__(self, name):
        super().__init__(
            f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.")


def _shape_env(frame_state, mode):
    """The C hook's ShapeEnv for one compile (mode: torch.compile's dynamic, None or True)."""
    from . import _shapes
    return _shapes.ShapeEnv(frame_state, mode)


def _specialize_graph_json(graph_json, values):
    """A dynamic graph's JSON for concrete sizes: SymInt placeholders dropped, symbolic dims evaluated."""
    import json
    from . import _shapes
    g = json.loads(graph_json)

    def dim(d):
        if isinstance(d, dict) and "sym" in d:
            return _shapes.eval_expr(d["sym"], values)
        return d

    consts = {}

    def subst(a):
        if isinstance(a, dict) and set(a) == {"node"} and a["node"] in consts:
            return consts[a["node"]]
        if isinstance(a, dict):
            return {k: subst(v) for k, v in a.items()}
        if isinstance(a, list):
            return [subst(v) for v in a]
        return a

    nodes = []
    for n in g["nodes"]:
        val = n.get("meta", {}).get("val")
        if val and val.get("kind") == "symint":
            # SymInt inputs and size reads / arithmetic on them become the ints they are for these sizes (a node
            # may read a SymInt placeholder itself: x.size(0) is the input's symbol, as Dynamo 2.x traces it)
            if n["op"] == "placeholder":
                consts[n["name"]] = values.get(n["name"], _shapes.eval_expr(val["sym"], values) if val.get("sym")
                                               else val.get("value"))
            else:
                consts[n["name"]] = _shapes.eval_expr(val["sym"], values) if val.get("sym") else val.get("value")
            continue
        for key in ("args", "kwargs"):
            if key in n:
                n[key] = subst(n[key])
        if val and val.get("kind") == "tensor":
            for key in ("sizes", "strides"):
                if key in val:
                    val[key] = [dim(d) for d in val[key]]
        nodes.append(n)
    g["nodes"] = nodes
    return json.dumps(g)


class _PerShapeCompiled:
    """A dynamic graph on one of the engine's backends: one Dynamo cache entry. The engine compiles the graph with its
    symbolic sizes once (inductor generates symbolic kernels: one build for every size); where it cannot, or a call
    at some size fails there, it compiles the graph once per concrete value of its SymInt inputs."""

    def __init__(self, gm, name, mode, options, example_inputs):
        self.gm, self.name, self.mode, self.options = gm, name, mode, options
        self.sym_pos = [i for i, a in enumerate(example_inputs) if isinstance(a, int)]
        self.sym_names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        self.cache = {}
        self.dynamic = None
        try:
            self.dynamic = _EngineCompiled(
                _fxcapture.engine_compile(gm._fx_graph_json, name, mode, options, list(example_inputs)), name)
            self.dynamic(*example_inputs)
            counters["engine_compiles"] += 1
        except RuntimeError as e:
            ki = _interrupt_behind(e)
            if ki is not None:
                raise ki from None
            self.dynamic = None

    def __call__(self, *args):
        if self.dynamic is not None:
            try:
                return self.dynamic(*args)
            except RuntimeError as e:
                ki = _interrupt_behind(e)
                if ki is not None:
                    raise ki from None
                self.dynamic = None
        key = tuple(args[i] for i in self.sym_pos)
        fn = self.cache.get(key)
        if fn is None:
            tensors = [a for i, a in enumerate(args) if i not in self.sym_pos]
            values = {self.sym_names[i]: args[i] for i in self.sym_pos}
            sub = torch.fx.GraphModule(torch.nn.Module(), self.gm.graph)
            sub._fx_graph_json = _specialize_graph_json(self.gm._fx_graph_json, values)
            fn = _engine_backend(self.name)(sub, tensors, mode=self.mode, options=self.options)
            if not isinstance(fn, _EngineCompiled):
                # the engine could not compile it (reason printed and kept on sub): this shape runs eagerly
                self.backend_error = getattr(sub, "_fx_backend_error", None)
                fn = self.gm.forward
            else:
                engine_fn = fn
                fn = lambda *a: engine_fn(*[x for i, x in enumerate(a) if i not in self.sym_pos])  # noqa: E731
                fn.kernels = engine_fn.kernels
            self.cache[key] = fn
        return fn(*args)

    def kernels(self):
        if self.dynamic is not None:
            return self.dynamic.kernels()
        for fn in self.cache.values():
            if hasattr(fn, "kernels"):
                return fn.kernels()
        return []


def _interrupt_behind(e):
    """The KeyboardInterrupt an error of the engine's bridge was raised over (Ctrl-C while it converted tensors
    through DLPack's Python code), or None: the user's interrupt must win over any fallback."""
    seen = 0
    while e is not None and seen < 32:
        if isinstance(e, KeyboardInterrupt):
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return None


class _EngineCompiled:
    """A captured graph compiled by one of the engine's backends; called with the graph's inputs (torch tensors
    travel through DLPack, no copies) it returns the graph's outputs as a tuple, as a Dynamo graph does."""

    def __init__(self, handle, backend):
        self._handle = handle
        self.backend = backend

    def __call__(self, *args):
        try:
            return _fxcapture.engine_run(self._handle, args)
        except RuntimeError as e:
            ki = _interrupt_behind(e)
            if ki is not None:
                raise ki from None
            raise

    def kernels(self):
        return _fxcapture.engine_kernels(self._handle)


def _eager_fallback(gm, name, reason, error=None):
    """gm.forward in place of a graph the engine's backend `name` could not compile, the reason printed and kept
    on gm; with config.suppress_errors off (as in the tests) the error is raised instead."""
    if not config.suppress_errors:
        raise BackendCompilerFailed(f"backend {name!r} failed: {reason}") from error
    counters["eager_fallbacks"] += 1
    gm._fx_backend_error = reason
    print(f"fxcapture: backend {name!r} could not compile this graph, running it eagerly: "
          f"{' '.join(line.strip() for line in reason.splitlines()[:2])}", file=sys.stderr)
    return gm.forward


class BackendCompilerFailed(RuntimeError):
    """torch._dynamo.exc.BackendCompilerFailed: an engine backend failed and config.suppress_errors is off."""


def _engine_backend(name):
    """A backend that compiles with the engine's registered backend `name`. A graph the engine cannot compile
    (an op it does not know) runs through torch eager, with the reason recorded and printed once, the way
    torch._dynamo's suppress_errors falls back to eager."""

    def compiler(gm, example_inputs, mode=None, options=None, **kwargs):
        graph_json = getattr(gm, "_fx_graph_json", None)
        if graph_json is None:
            # a GraphModule built outside capture: the engine has no graph of it to compile
            return _eager_fallback(gm, name, "the graph module was not captured by fxcapture")
        if any(isinstance(a, int) for a in example_inputs):
            per_shape = _PerShapeCompiled(gm, name, mode, options, example_inputs)
            per_shape(*example_inputs)
            if getattr(per_shape, "backend_error", None):
                gm._fx_backend_error = per_shape.backend_error
            gm._fx_engine_compiled = per_shape
            return per_shape
        try:
            compiled = _EngineCompiled(
                _fxcapture.engine_compile(graph_json, name, mode, options, list(example_inputs)), name)
            # One call on the example inputs: an op the engine runs differently from the graph's meaning fails
            # here, at compile time, where falling back to eager is still possible.
            compiled(*example_inputs)
        except RuntimeError as e:
            ki = _interrupt_behind(e)
            if ki is not None:
                raise ki from None
            return _eager_fallback(gm, name, str(e), e)
        counters["engine_compiles"] += 1
        gm._fx_engine_compiled = compiled
        return compiled

    compiler.__name__ = name
    return compiler


register_backend(_engine_backend("eager"), name="eager", tags=("debug",))
register_backend(_engine_backend("aot_eager"), name="aot_eager", tags=("debug",))
register_backend(_engine_backend("inductor"), name="inductor")


# ---------------------------------------------------------------- GraphModule construction (custom-backend contract)
class NodeRef:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def _map_arg(a, env):
    if isinstance(a, NodeRef):
        return env[a.name]
    if isinstance(a, list):
        return [_map_arg(x, env) for x in a]
    if isinstance(a, tuple):
        return tuple(_map_arg(x, env) for x in a)
    if isinstance(a, dict):
        return {k: _map_arg(v, env) for k, v in a.items()}
    return a


def build_graph_module(nodes, examples=()):
    """A real torch.fx.GraphModule from the engine graph's node tuples (op, name, target, args, kwargs, meta)."""
    g = torch.fx.Graph()
    env = {}
    ph = 0
    for op, name, target, args, kwargs, meta in nodes:
        if op == "output":
            n = g.output(_map_arg(args[0], env))
        else:
            symint = op == "placeholder" and ph < len(examples) and isinstance(examples[ph], int)
            n = g.create_node(op, target, tuple(_map_arg(args, env)), _map_arg(kwargs, env), name=name,
                              type_expr=(getattr(torch, "SymInt", int) if symint else torch.Tensor)
                              if op == "placeholder" else None)
            if n.name != name:
                raise AssertionError(f"FX renamed {name} to {n.name}")
        if meta.get("stack_trace"):
            n.meta["stack_trace"] = meta["stack_trace"]
        if meta.get("nn_module_stack"):
            n.meta["nn_module_stack"] = {k: (p, t) for k, p, t in meta["nn_module_stack"]}
        if meta.get("source_fn_stack") and op not in ("placeholder", "output"):
            n.meta["source_fn_stack"] = [tuple(x) for x in meta["source_fn_stack"]]
        if op == "placeholder" and ph < len(examples):
            n.meta["example_value"] = examples[ph]
            ph += 1
        env[name] = n
    return torch.fx.GraphModule(torch.nn.Module(), g)


# ---------------------------------------------------------------- torch.compile
_config = {"stance": "default", "recompile_limit": 8}
_seen_breaks = set()


class _Ctx:
    """One torch.compile call's settings; the C hook calls _compile/_skip on it."""

    def __init__(self, backend, fullgraph, dynamic, mode, options):
        self.backend = backend
        self.backend_key = lookup_backend(backend)
        self.fullgraph = bool(fullgraph)
        self.dynamic = dynamic
        self.mode = mode
        self.options = options
        self.name = backend if isinstance(backend, str) else getattr(backend, "__name__", repr(backend))

    def _log_recompile(self, info):
        if info.get("reasons"):
            msg = _fxcapture.recompile_message(info["name"], info["filename"], info["firstlineno"], info["reasons"])
            vmsg = _fxcapture.recompile_message(info["name"], info["filename"], info["firstlineno"],
                                                info["reasons"], True)
            _record("recompile", {"frame_id": info["frame_id"], "compile_id": info["compile_id"], "message": msg,
                                  "verbose_message": vmsg, "reasons": list(info["reasons"])})
            if "recompiles_verbose" in _torch_logs():
                print(vmsg, file=sys.stderr)
            elif "recompiles" in _torch_logs():
                print(msg, file=sys.stderr)

    def _log_break(self, info):
        b = info.get("graph_break")
        if not b:
            return
        _record("graph_break", {"frame_id": info["frame_id"], "compile_id": info["compile_id"],
                                "filename": info["filename"], "lineno": b["lineno"], "reason": b["reason"],
                                "user_stack": b["user_stack"]})
        if "graph_breaks" in _torch_logs():
            key = (info["filename"], b["lineno"], b["reason"])
            if key in _seen_breaks:
                print("Graph break (user stack suppressed due to duplicate graph break) in user code at "
                      f"{info['filename']}:{b['lineno']}", file=sys.stderr)
            else:
                _seen_breaks.add(key)
                print(f"Graph break in user code at {info['filename']}:{b['lineno']}\n"
                      f"Graph Break Reason: {b['reason']}\nUser code traceback:\n{b['user_stack']}", file=sys.stderr)

    def _skip(self, info):
        self._log_recompile(info)
        b = info.get("graph_break")
        if b and self.fullgraph:
            raise Unsupported(f"{b['reason']}\n\nfrom user code:\n{b['user_stack']}\n"
                              "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if "
                              "you're reporting a bug to PyTorch). For even more developer context, set "
                              "TORCH_LOGS=\"+dynamo\"")
        self._log_break(info)
        _record("skip", {"frame_id": info["frame_id"], "compile_id": info["compile_id"], "name": info["name"],
                         "filename": info["filename"], "firstlineno": info["firstlineno"],
                         "reason": info.get("reason") or (b and b["reason"])})
        return None

    def _compile(self, info):
        self._log_recompile(info)
        self._log_break(info)
        cid = f"{info['frame_id']}/{info['compile_id']}"
        gm = build_graph_module(info["nodes"], info["examples"])
        if not any(n[0].startswith("call_") for n in info["nodes"]):
            # No operations: Dynamo makes no graph and calls no backend; the frame's outputs are its inputs.
            _record("frame", {"frame_id": info["frame_id"], "compile_id": info["compile_id"], "name": info["name"],
                              "filename": info["filename"], "firstlineno": info["firstlineno"], "graph": False})
            return gm.forward
        _record("frame", {"frame_id": info["frame_id"], "compile_id": info["compile_id"], "name": info["name"],
                          "filename": info["filename"], "firstlineno": info["firstlineno"], "graph": True})
        if "graph_code" in _torch_logs():
            print(f"[{cid}] TRACED GRAPH\n{info['readable']}", file=sys.stderr)
        if "guards" in _torch_logs():
            print(f"[{cid}] GUARDS:\n{info['guards']}", file=sys.stderr)
        fn = self.backend_key
        examples = list(info["examples"])
        gm._fx_graph_json = info["graph_json"]
        if isinstance(self.backend, str):
            compiled = fn(gm, examples, mode=self.mode, options=self.options)
        else:
            compiled = fn(gm, examples)
        ops = [n["op"] if isinstance(n, dict) else n[0] for n in info["nodes"]]
        _record("compile", {
            "frame_id": info["frame_id"], "compile_id": info["compile_id"], "name": info["name"],
            "filename": info["filename"], "firstlineno": info["firstlineno"], "backend": self.name,
            "graph_tabular": info["tabular"], "graph_code": info["code"], "graph_readable": info["readable"],
            "graph_json": info["graph_json"], "guards": info["guards"], "guard_list": info["guard_list"],
            "n_ops": sum(1 for o in ops if o.startswith("call_")),
            "graph_break": info.get("graph_break"),
            "backend_error": getattr(gm, "_fx_backend_error", None),
            "dynamic_specialized": info.get("dynamic_specialized"),
            "kernels": [list(k[:3]) for k in gm._fx_engine_compiled.kernels()]
            if hasattr(gm, "_fx_engine_compiled") else [],
        })
        return compiled


class OptimizedModule(torch.nn.Module):
    """What torch.compile(module) returns: calls capture, forwards attributes to the original module."""

    def __init__(self, mod, ctx):
        super().__init__()
        self._orig_mod = mod
        self._fx_ctx = ctx
        # the module in the instance dict as well: self._orig_mod (a submodule, in _modules) is found only after the
        # instance lookup raised AttributeError, on every call
        object.__setattr__(self, "_fx_mod", mod)
        fwd = getattr(type(mod).forward, "__code__", None)
        if fwd is not None:
            _fxcapture.allow_code(fwd)   # torch.nn's own modules (nn.Sequential) are captured, as Dynamo inlines them

    def forward(self, *args, **kwargs):
        return _fxcapture.call(self._fx_ctx, self._fx_mod, args, kwargs)

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile: function, module or decorator (with and without arguments)."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        def deco(m):
            return compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           disable=disable)
        return deco
    if disable:
        return model
    ctx = _Ctx(backend, fullgraph, dynamic, mode, options)
    if isinstance(model, torch.nn.Module):
        return OptimizedModule(model, ctx)
    if not callable(model):
        raise RuntimeError(f"torch.compile expects a callable, got {type(model).__name__}")

    @functools.wraps(model)
    def compiled_fn(*args, **kwargs):
        return _fxcapture.call(ctx, model, args, kwargs)

    compiled_fn._torchdynamo_orig_callable = model
    return compiled_fn


# ---------------------------------------------------------------- helpers (torch._dynamo / torch.compiler)
def reset():
    _fxcapture.reset()


def graph_break(msg=""):
    """Forces a graph break when traced; a no-op when run."""


def allow_in_graph(fn):
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    _allowed_ids.add(id(fn))
    _disallowed_ids.discard(id(fn))
    return fn


def disallow_in_graph(fn):
    if isinstance(fn, (list, tuple)):
        return [disallow_in_graph(x) for x in fn]
    if id(fn) not in _allowed_ids and not getattr(fn, "__module__", "").startswith("torch"):
        raise AssertionError("disallow_in_graph is expected to be used on an already allowed callable (like torch.* "
                             "ops). Allowed callables means callables that TorchDynamo puts as-is in the extracted "
                             "graph.")
    _disallowed_ids.add(id(fn))
    _allowed_ids.discard(id(fn))
    return fn


def disable(fn=None, recursive=True, *, reason=None):
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return _fxcapture.call(None, fn, args, kwargs)

    _disallowed_ids.add(id(wrapper))
    return wrapper


def mark_dynamic(t, index, *, min=None, max=None):
    idx = getattr(t, "_dynamo_dynamic_indices", set())
    idx |= set(index if isinstance(index, (list, tuple)) else [index])
    t._dynamo_dynamic_indices = idx
    _record("mark_dynamic", {"index": sorted(idx), "min": min, "max": max})


def mark_static(t, index=None):
    t._dynamo_static_indices = getattr(t, "_dynamo_static_indices", set()) | (
        set(index if isinstance(index, (list, tuple)) else [index]) if index is not None else set(range(t.dim())))
    _record("mark_static", {"index": None if index is None else index})


def is_compiling():
    return _fxcapture.is_compiling()


_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
            "aot_eager_then_compile")


class _StanceCtx:
    def __init__(self, prev):
        self.prev = prev

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _set_stance(self.prev)
        return False

    def __call__(self, fn):
        new = _config["stance"]
        _set_stance(self.prev)

        @functools.wraps(fn)
        def wrapper(*a, **k):
            prev = _config["stance"]
            _set_stance(new)
            try:
                return fn(*a, **k)
            finally:
                _set_stance(prev)
        return wrapper


def _set_stance(stance):
    _config["stance"] = stance
    _fxcapture.set_config(stance, _config["recompile_limit"])


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """torch.compiler.set_stance: function, context manager or decorator."""
    if stance not in _STANCES:
        raise RuntimeError(f"invalid torch.compile stance '{stance}'")
    if _fxcapture.is_compiling():
        raise RuntimeError("Attempt to trace forbidden callable torch.compiler.set_stance")
    prev = _config["stance"]
    _set_stance(stance)
    return _StanceCtx(prev)


def _fail_on_recompile(filename, name, line, reasons):
    raise RuntimeError(
        f"Detected recompile when torch.compile stance is 'fail_on_recompile'. filename: '{filename}', "
        f"function name: '{name}', line number: {line}\n    triggered by the following guard failure(s):"
        + "".join(f"\n    - {line}" for r in reasons for line in r.split("\n") if line))


class _Config:
    """torch._dynamo.config: recompile_limit (cache_size_limit) and friends. suppress_errors: a graph an engine
    backend cannot compile runs through torch eager with a note (on, the default here) or raises
    BackendCompilerFailed (off, Dynamo's default; FXCAPTURE_SUPPRESS_ERRORS=0 turns it off from outside)."""

    suppress_errors = os.environ.get("FXCAPTURE_SUPPRESS_ERRORS", "1") not in ("0", "")

    def __getattr__(self, name):
        if name in ("recompile_limit", "cache_size_limit"):
            return _config["recompile_limit"]
        raise AttributeError(name)

    @contextlib.contextmanager
    def patch(self, **changes):
        """torch._dynamo.config.patch: these settings inside the block, the old ones after it."""
        old = {k: getattr(self, k) for k in changes}
        for k, v in changes.items():
            setattr(self, k, v)
        try:
            yield self
        finally:
            for k, v in old.items():
                setattr(self, k, v)

    def __setattr__(self, name, value):
        if name in ("recompile_limit", "cache_size_limit"):
            _config["recompile_limit"] = int(value)
            _fxcapture.set_config(_config["stance"], _config["recompile_limit"])
        else:
            object.__setattr__(self, name, value)


config = _Config()


class ExplainOutput:
    def __init__(self, graphs, break_reasons, ops_per_graph, out_guards):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        self.ops_per_graph = ops_per_graph
        self.op_count = sum(len(o) for o in ops_per_graph)
        self.out_guards = out_guards
        self.compile_times = ""

    def __str__(self):
        out = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
               f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons):
            out.append(f"  Break Reason {i + 1}:")
            reason = b["reason"]
            if reason.startswith("Data-dependent branching\n"):
                reason = "generic_jump TensorVariable()"  # explain() shows the jump's own reason
            out.append(f"    Reason: {reason}")
            out.append("    User Stack:")
            out.append(f"      <FrameSummary file {b['filename']}, line {b['lineno']} in {b['name']}>")
        out.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph):
            out.append(f"  Ops {i + 1}:")
            out.extend(f"    {o}" for o in ops)
        out.append("Out Guards:")
        for i, g in enumerate(self.out_guards):
            out.append(f"  Guard {i + 1}:")
            out.append(f"    Name: {g['source']!r}" if g["source"] else "    Name: ''")
            out.append(f"    Source: {'local' if (g['source'] or '').startswith('L[') else 'global'}")
            out.append(f"    Create Function: {g['kind']}")
            out.append(f"    Code List: {[g['code']]}")
        return "\n".join(out) + "\n"


def explain(f, *extra_args, **extra_kwargs):
    """explain(fn)(*args): graphs, graph breaks, ops and guards of a fresh capture of fn."""
    def inner(*args, **kwargs):
        reset()
        start = len(records)
        graphs = []

        def collect(gm, ex):
            graphs.append(gm)
            return gm.forward

        compile(f, backend=collect)(*args, **kwargs)
        new = records[start:]
        breaks = [dict(r, name=next((c["name"] for c in new if c["kind"] == "frame"
                                     and c["frame_id"] == r["frame_id"]), "?"))
                  for r in new if r["kind"] == "graph_break"]
        ops = [[str(n.target) for n in gm.graph.nodes if n.op.startswith("call_")] for gm in graphs]
        guards = [g for r in new if r["kind"] == "compile" for g in r["guard_list"]]
        reset()
        return ExplainOutput(graphs, breaks, ops, guards)

    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner


# ---------------------------------------------------------------- installation
def _skip_prefixes():
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    paths = {here, os.path.dirname(torch.__file__) + os.sep}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            paths.add(p.rstrip(os.sep) + os.sep)
    for p in sys.path:
        if p.endswith(("dist-packages", "site-packages")):
            paths.add(p.rstrip(os.sep) + os.sep)
    return sorted(paths)


_USER_FACING = ("reset", "list_backends", "register_backend", "lookup_backend", "allow_in_graph",
                "disallow_in_graph", "graph_break", "mark_static", "mark_dynamic", "explain")


def _real_dynamo():
    """torch 2.x's own torch._dynamo, or None (torch 1.13 has none)."""
    if "torch._dynamo" in sys.modules and not getattr(sys.modules["torch._dynamo"], "_fxcapture_stub", False):
        return sys.modules["torch._dynamo"]
    if int(torch.__version__.split(".")[0]) < 2:
        return None
    try:
        import importlib
        return importlib.import_module("torch._dynamo")
    except ImportError:
        return None


def install(replace=False):
    """Puts the engine's torch.compile, torch._dynamo and torch.compiler in place (when torch has none, or always
    with replace=True). Where torch has its own torch._dynamo (torch 2.x), that module stays: torch's own code calls
    into it (disable, is_compiling, config); only its user-facing functions (graph_break, mark_dynamic, reset, ...)
    are pointed at capture's."""
    if replace or not hasattr(torch, "compile"):
        torch.compile = compile
    real = _real_dynamo()
    if real is not None:
        if replace:
            for name in _USER_FACING:
                setattr(real, name, globals()[name])
            comp = getattr(torch, "compiler", None)
            for name in ("reset", "allow_in_graph", "set_stance"):
                if comp is not None and hasattr(comp, name):
                    setattr(comp, name, globals()[name])
        return
    if replace or "torch._dynamo" not in sys.modules:
        dyn = types.ModuleType("torch._dynamo")
        dyn._fxcapture_stub = True
        for name in _USER_FACING + ("disable", "is_compiling", "config"):
            setattr(dyn, name, globals()[name])
        exc = types.ModuleType("torch._dynamo.exc")
        exc.Unsupported = Unsupported
        dyn.exc = exc
        sys.modules["torch._dynamo"] = dyn
        sys.modules["torch._dynamo.exc"] = exc
        torch._dynamo = dyn
    if replace or not hasattr(torch, "compiler"):
        comp = types.ModuleType("torch.compiler")
        for name in ("reset", "list_backends", "allow_in_graph", "disable", "is_compiling", "set_stance"):
            setattr(comp, name, globals()[name])
        comp.is_dynamo_compiling = is_compiling
        sys.modules["torch.compiler"] = comp
        torch.compiler = comp


_fxcapture.setup(sys.modules[__name__], _skip_prefixes())


# ---------------------------------------------------------------- resume functions (CPython 3.11 and 3.12 bytecode)
_resume_cache = {}
_resume_counter = [0]


def _loc_varint(val):
    out = bytearray()
    while val >= 64:
        out.append(64 | (val & 63))
        val >>= 6
    out.append(val)
    return out


def _loc_svarint(val):
    return _loc_varint(((-val) << 1) | 1 if val < 0 else val << 1)


def _parse_exc_table(tab):
    it = iter(tab)
    entries = []

    def varint(b):
        val = b & 63
        while b & 64:
            val <<= 6
            b = next(it)
            val |= b & 63
        return val
    try:
        while True:
            b = next(it)
            start = varint(b)
            size = varint(next(it))
            target = varint(next(it))
            dl = varint(next(it))
            entries.append([start, size, target, dl])
    except StopIteration:
        pass
    return entries


def _exc_varint(val, first):
    chunks = [val & 63]
    val >>= 6
    while val:
        chunks.append(val & 63)
        val >>= 6
    chunks.reverse()
    out = bytearray()
    for i, c in enumerate(chunks):
        b = c | (64 if i < len(chunks) - 1 else 0)
        if i == 0 and first:
            b |= 128
        out.append(b)
    return out


def _make_resume(code, offset, nulls, lineno, globals_):
    """A function that continues `code` at `offset` (code units): all original locals as arguments, then the live
    stack values (Dynamo's resume functions; co_name torch_dynamo_resume_in_<fn>_at_<line>). nulls[i] is true for a
    stack slot holding NULL (below a callable): the prologue pushes it instead of taking an argument."""
    nulls = tuple(bool(n) for n in nulls)
    nstack = sum(1 for n in nulls if not n)
    key = (code, offset, nulls)
    fn = _resume_cache.get(key)
    if fn is not None:
        return fn
    import dis
    op = dis.opmap
    names = list(code.co_varnames) + [f"___stack{i}" for i in range(nstack)]
    nl = len(code.co_varnames)
    body = code.co_code
    # A frame with cells: its cell variables and free variables become the resume function's free variables (the
    # caller passes the frame's cells as the closure, so that inner functions made before the break share them);
    # a cell argument keeps a placeholder name among the arguments. The DEREF opcodes are renumbered.
    cells = code.co_cellvars
    frees = cells + code.co_freevars
    if frees:
        cell_only = [c for c in cells if c not in code.co_varnames]
        old_names = list(code.co_varnames) + cell_only + list(code.co_freevars)
        names = [f"___cell_{n}" if n in cells else n for n in code.co_varnames] + names[nl:]
        base = len(names)
        renumber = {}
        for i, n in enumerate(old_names):
            if i >= nl + len(cell_only):
                renumber[i] = base + len(cells) + (i - nl - len(cell_only))
            elif n in cells:
                renumber[i] = base + cells.index(n)
        deref = {op[n] for n in ("LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE", "LOAD_CLASSDEREF",
                                 "LOAD_FROM_DICT_OR_DEREF") if n in op}
        body = bytearray(body)
        ext = 0
        for j in range(0, len(body), 2):
            opc, arg = body[j], body[j + 1]
            if opc in (op["MAKE_CELL"], op["COPY_FREE_VARS"]):
                body[j:j + 2] = bytes([op["NOP"], 0])    # done by the prologue (they precede RESUME)
            elif opc in deref:
                new = renumber[(ext << 8) | arg]
                if new >> 8 != ext or (new > 255 and not (j >= 2 and body[j - 2] == op["EXTENDED_ARG"])):
                    raise ValueError("a renumbered cell does not fit its EXTENDED_ARG")
                body[j + 1] = new & 255
            ext = (ext << 8 | arg) if opc == op["EXTENDED_ARG"] else 0
        body = bytes(body)
    pro = bytearray([op["COPY_FREE_VARS"], len(frees)] if frees else []) + bytearray([op["RESUME"], 0])
    arg = 0
    for is_null in nulls:
        if is_null:
            pro += bytes([op["NOP"], 0, op["PUSH_NULL"], 0])
        else:
            idx = nl + arg
            arg += 1
            pro += bytes([op["EXTENDED_ARG"], idx >> 8, op["LOAD_FAST"], idx & 255])
    P = len(pro) // 2 + 2
    pro += bytes([op["EXTENDED_ARG"], offset >> 8, op["JUMP_FORWARD"], offset & 255])
    # location table: the prologue has no location but moves the line base from lineno back to the original
    lt = bytearray()
    remaining = P
    first = True
    while remaining:
        n = min(8, remaining)
        if first:
            lt += bytes([0x80 | (14 << 3) | (n - 1)]) + _loc_svarint(code.co_firstlineno - lineno) + \
                _loc_varint(0) + _loc_varint(0) + _loc_varint(0)
            first = False
        else:
            lt += bytes([0x80 | (15 << 3) | (n - 1)])
        remaining -= n
    et = bytearray()
    for start, size, target, dl in _parse_exc_table(code.co_exceptiontable):
        et += _exc_varint(start + P, True) + _exc_varint(size, False) + _exc_varint(target + P, False) + \
            _exc_varint(dl, False)
    _resume_counter[0] += 1
    name = f"torch_dynamo_resume_in_{code.co_name}_at_{lineno}"
    flags = code.co_flags & ~(0x04 | 0x08)  # no *args/**kwargs: everything is positional
    if frees and len(frees) > 255:
        raise ValueError("too many cells")
    new = code.replace(co_code=bytes(pro) + body, co_varnames=tuple(names), co_nlocals=len(names),
                       co_cellvars=(), co_freevars=frees,
                       co_argcount=len(names), co_posonlyargcount=0, co_kwonlyargcount=0, co_flags=flags,
                       co_stacksize=code.co_stacksize + nstack + 2, co_name=name, co_qualname=name,
                       co_firstlineno=lineno, co_linetable=bytes(lt) + code.co_linetable,
                       co_exceptiontable=bytes(et))
    # with cells, a template: the caller makes the function of each call over that call's cells
    closure = tuple(types.CellType() for _ in frees) if frees else None
    fn = types.FunctionType(new, globals_, f"__resume_at_{offset * 2}_{_resume_counter[0]}", None, closure)
    _resume_cache[key] = fn
    return fn
