"""Automatic dynamic shapes for capture: which dims become symbols, their names, hints and guards (a small
ShapeEnv). The C interpreter runs meta tensors whose symbolic dims carry distinct large prime hints and maps each
result dim back to an expression (coefficient * product of symbols, plus at most one more term or a small
constant); what cannot be mapped makes the compile static, with the reason recorded."""
import hashlib


def _is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def _prime_after(n):
    n += 1
    while not _is_prime(n):
        n += 1
    return n


# Hints: primes in [10007, 100000) picked by a fixed pseudo-random walk, so that no small linear relation
# (p + q == 2*r - 10, as evenly spaced hints give) makes one dim look like an expression of other symbols.
_PRIMES = []
_seed = 12345
while len(_PRIMES) < 64:
    _seed = (_seed * 1103515245 + 12345) % (1 << 31)
    _p = _prime_after(10007 + _seed % 89000)
    if all(abs(_p - q) > 200 for q in _PRIMES):
        _PRIMES.append(_p)
P_MIN = 10007


class Unmappable(Exception):
    pass


def merge_frame_state(state, name, sizes):
    """Dynamo's FrameStateSizeEntry merge: a dim whose size changed becomes None (dynamic); a rank change makes
    every dim dynamic (the entry becomes None). Returns the merged entry."""
    old = state.get(name, False)
    if old is False:
        new = list(sizes)
    elif old is None or len(old) != len(sizes):
        new = None
    else:
        new = [o if o == s else None for o, s in zip(old, sizes)]
    state[name] = new
    return new


def render(terms, const=0):
    """sympy's str for a sum of monomials: terms {(syms...): coef}; higher degree first, constant last."""
    parts = []
    for syms, coef in sorted(terms.items(), key=lambda kv: (-len(kv[0]), kv[0])):
        if coef == 0:
            continue
        mono = "*".join(sorted(syms))
        c = abs(coef)
        text = mono if c == 1 else f"{c}*{mono}"
        parts.append((coef < 0, text))
    if const:
        parts.append((const < 0, str(abs(const))))
    if not parts:
        return "0"
    out = ("-" if parts[0][0] else "") + parts[0][1]
    for neg, text in parts[1:]:
        out += (" - " if neg else " + ") + text
    return out


class ShapeEnv:
    """One compile's symbols. mode: None (automatic dynamic), True (dynamic=True: every dim, duck shaped), False
    (static; no env is made)."""

    def __init__(self, frame_state, mode, aliases=None):
        self.frame_state = frame_state
        self.mode = mode
        self.aliases = dict(aliases or {})   # source of a dim -> source of the dim it equals (unified)
        self.alias_comments = {}
        self.specialized = set()   # dim sources an op needed equal to a constant: static from then on
        self.restart()

    def restart(self):
        """A new trace of the same compile: symbols start over, unified dims stay aliased."""
        self.syms = {}          # name -> dict(source, real, prime, comment)
        self.order = []
        self.by_real = {}       # duck shaping: real value -> symbol name
        self.by_prime = {}
        self.stride_guards = []  # (tensor source, dim, [size sources], comment)
        self.static_values = set()

    @property
    def active(self):
        return bool(self.syms)

    def _root(self, source):
        seen = set()
        while source in self.aliases and source not in seen:
            seen.add(source)
            source = self.aliases[source]
        return source

    def _name_for(self, source):
        idx = int(hashlib.sha256(source.encode()).hexdigest(), 16) % 100
        while f"s{idx}" in self.syms:
            idx += 1
        return f"s{idx}"

    def _symbol(self, source, real, duck, comment):
        # a unified dim takes the symbol of the dim it equals (created now under that source if not seen yet)
        source = self._root(source)
        for n, s in self.syms.items():
            if s["source"] == source:
                return n, False
        if duck and real in self.by_real:
            return self.by_real[real], False
        name = self._name_for(source)
        prime = _PRIMES[len(self.syms) % len(_PRIMES)]
        if len(self.syms) >= len(_PRIMES):
            raise Unmappable("more dynamic dimensions than this version supports (64)")
        self.syms[name] = {"source": source, "real": real, "prime": prime, "comment": comment}
        self.order.append(name)
        self.by_prime[prime] = name
        if duck:
            self.by_real[real] = name
        return name, True

    def wrap_tensor(self, source, sizes, strides, dynamic_idx, static_idx, comment):
        """Decides the tensor's dynamic dims. Returns None when every dim stays static, else (hint_sizes,
        hint_strides, size_exprs, stride_exprs, new_symbols) where exprs are str or None (static) and
        new_symbols lists (name, real) of the symbols this tensor introduces, in dim order."""
        merged = merge_frame_state(self.frame_state, source, sizes) if self.mode is None else None
        if "._parameters[" in source or "._buffers[" in source:
            # force_parameter_static_shapes / force_nn_module_property_static_shapes: module state stays static
            return None
        dyn = []
        for i, s in enumerate(sizes):
            if s in (0, 1) or i in static_idx or f"{source}.size()[{i}]" in self.specialized:
                d = False           # 0/1 specialization; mark_static
            elif i in dynamic_idx or self.mode is True:
                d = True
            else:
                d = merged is None or merged[i] is None
            dyn.append(d)
        if not any(dyn):
            return None
        duck = self.mode is True
        names, new = [], []
        for i, s in enumerate(sizes):
            if not dyn[i]:
                names.append(None)
                continue
            name, fresh = self._symbol(f"{source}.size()[{i}]", s, duck, comment)
            names.append(name)
            if fresh:
                new.append((name, s))
        hint_sizes = [self.syms[n]["prime"] if n else s for n, s in zip(names, sizes)]
        size_exprs = list(names)
        hint_strides, stride_exprs = [], []
        n = len(sizes)
        for i in range(n):
            later = range(i + 1, n)
            contiguous_like = strides[i] == _prod(sizes[j] for j in later)
            syms_after = [names[j] for j in later if names[j]]
            if contiguous_like and syms_after:
                const = _prod(sizes[j] for j in later if not names[j])
                terms = {tuple(sorted(syms_after)): const}
                stride_exprs.append(render(terms))
                hint_strides.append(_prod(hint_sizes[j] for j in later))
                self.stride_guards.append((source, i, [f"{source}.size()[{j}]" for j in later if names[j]], const))
            else:
                stride_exprs.append(None)
                hint_strides.append(strides[i])
        return hint_sizes, hint_strides, size_exprs, stride_exprs, new

    def _real(self, terms, const):
        total = const
        for syms, coef in terms.items():
            v = coef
            for s in syms:
                v *= self.syms[s]["real"]
            total += v
        return total

    def _monomial(self, v):
        """v == coef * product of symbol primes with 0 < coef < P_MIN, or None."""
        if v <= 0:
            return None
        syms = []
        for p, name in self.by_prime.items():
            while v % p == 0:
                v //= p
                syms.append(name)
        if not syms or v >= P_MIN:
            return None
        return tuple(sorted(syms)), v

    def to_expr(self, v):
        """An int computed on prime hints -> (text or None when static, real value)."""
        if -P_MIN // 2 < v < P_MIN // 2:
            return None, v
        m = self._monomial(v)
        terms, const = ({m[0]: m[1]}, 0) if m else (None, 0)
        if terms is None:
            # a sum of two terms (cat of two dynamic tensors)
            for p, name in self.by_prime.items():
                for k in range(1, 9):
                    m = self._monomial(v - k * p)
                    if m and m[0] != (name,):
                        terms = {(name,): k, m[0]: m[1]}
                        break
                if terms:
                    break
        if terms is None:
            # a term plus a small constant (slicing, padding)
            for c in range(-64, 65):
                m = self._monomial(v - c)
                if m:
                    terms, const = {m[0]: m[1]}, c
                    break
        if terms is None:
            if v in self.static_values:
                return None, v
            raise Unmappable(f"a dimension of size {v} on the hints is not an expression of the symbols")
        return render(terms, const), self._real(terms, const)

    def map_tensor(self, sizes, strides, args=(), kwargs=None):
        """Sizes and strides of an op's meta result -> ([(expr, real)], [(expr, real)]). A large value that is
        no expression of the symbols is static when the op's arguments hold it (a weight's 50257 rows)."""
        self.static_values = set()
        _collect_ints(args, self.static_values)
        _collect_ints(list((kwargs or {}).values()), self.static_values)
        return [self.to_expr(v) for v in sizes], [self.to_expr(v) for v in strides]

    def unify_args(self, args, kwargs, comment):
        """An op failed on the hints: dims of its tensor arguments that hold different symbols of equal real value
        are made equal (as Dynamo's broadcasting guard Eq(s77, s52) replaces one by the other); True when some
        were, and the trace restarts with them aliased."""
        arg_sizes = []
        _collect_sizes([args, list((kwargs or {}).values())], arg_sizes)
        syms = []
        for sizes in arg_sizes:
            for v in sizes:
                n = self.by_prime.get(v)
                if n and n not in syms:
                    syms.append(n)
        groups = {}
        for n in syms:
            groups.setdefault(self.syms[n]["real"], []).append(n)
        changed = False
        # a symbol against a static dim of the same value (x[s, s'] @ w[3, 4].T with s' == 4): Dynamo's guard
        # Eq(s', 4) specializes it; here that dim is static in the trace that follows
        statics = {v for sizes in arg_sizes for v in sizes if v not in self.by_prime}
        for n in syms:
            src = self.syms[n]["source"]
            if self.syms[n]["real"] in statics and src not in self.specialized:
                self.specialized.add(src)
                changed = True
        for real, names in groups.items():
            if len(names) < 2:
                continue
            # sympy keeps the symbol that sorts first among equal hints; the other is replaced by it
            names.sort(key=lambda n: int(n[1:]))
            kept = self._root(self.syms[names[0]]["source"])
            for other in names[1:]:
                src = self._root(self.syms[other]["source"])
                if src != kept:
                    self.aliases[src] = kept
                    self.alias_comments[src] = comment
                    changed = True
        return changed

    def guards(self):
        """Shape guards in Dynamo's order: equalities (unified dims, symbolic strides), then the 0/1
        specialization ranges. Each is (code, comment, kind, data) with kind 'eq' (lhs ref, [rhs refs], coef)
        or 'ge' (ref, bound); a ref is (tensor source, 'size'|'stride', dim)."""
        out = []
        for src in self.aliases:
            kept = self._root(src)
            if any(s["source"] == kept for s in self.syms.values()):
                out.append((f"{src} == {kept}", self.alias_comments.get(src), "eq",
                            (_ref(src), [_ref(kept)], 1)))
        for tsrc, i, size_srcs, const in self.stride_guards:
            rhs = "*".join(size_srcs)
            if const != 1:
                rhs = f"{const}*{rhs}"
            code = f"{tsrc}.stride()[{i}] == {rhs}"
            out.append((code, f"(unknown source {tsrc}.stride()[{i}], please file a bug)", "eq",
                        ((tsrc, "stride", i), [_ref(s) for s in size_srcs], const)))
        for name in self.order:
            s = self.syms[name]
            note = ("(user code shown is first use of this value--the guard itself is not due user code but due to "
                    "0/1 specialization in the framework; to avoid specialization try "
                    "torch._dynamo.decorators.mark_unbacked(tensor, dim))")
            comment = f"{s['comment']} {note}" if s["comment"] else note
            out.append((f"2 <= {s['source']}", comment, "ge", (_ref(s["source"]), 2)))
        return out


def _collect_ints(obj, out):
    if isinstance(obj, bool):
        return
    if isinstance(obj, int):
        out.add(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _collect_ints(o, out)
    elif hasattr(obj, "size") and hasattr(obj, "stride") and callable(obj.size):
        try:
            out.update(obj.size())
            out.update(obj.stride())
        except Exception:
            pass


def _collect_sizes(obj, out):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _collect_sizes(o, out)
    elif hasattr(obj, "size") and hasattr(obj, "stride") and callable(obj.size) and not isinstance(obj, int):
        try:
            out.append(tuple(obj.size()))
        except Exception:
            pass


def _ref(size_source):
    # "L['a'].size()[1]" -> ("L['a']", "size", 1)
    base, _, rest = size_source.rpartition(".size()[")
    return base, "size", int(rest[:-1])


def _prod(it):
    r = 1
    for v in it:
        r *= v
    return r


def eval_expr(text, values):
    """The value of a rendered expression (sums/differences of products of symbols and ints)."""
    total = 0
    for tok in text.replace(" - ", " + -").split(" + "):
        tok = tok.strip()
        neg = tok.startswith("-")
        v = 1
        for f in tok.lstrip("-").split("*"):
            v *= int(f) if f.isdigit() else values[f]
        total += -v if neg else v
    return total
