"""Capture of frames with cell and free variables: inner functions and lambdas (inlined with the trace's cells),
compiled closures reading and writing their free variables, closures of inlined functions guarded through
L['fn'].__closure__[k].cell_contents, and graph breaks in such frames. Debian's /usr/bin/python3 (torch 1.13)."""
import re
import unittest

import torch

from capture_base import CaptureTest, here, kinds

# Dynamo 2.11's user stack under a failing value guard's reason, and one more frame of it
STACK = r'\nUser stack trace:\n  File "[^"]*test_closures\.py", line \d+, in '
FRAME = r'\n  File "[^"]*test_closures\.py", line \d+, in '


def ops(compile_record):
    """call_* node targets of a compile, in graph order (from the readable code: 'name = torch.relu(...)')."""
    out = []
    for line in compile_record["graph_code"].splitlines():
        m = re.match(r"\s+(\w+) = (.*?)\(", line)
        if m:
            out.append(m.group(1))
        elif re.match(r"\s+(\w+) = \w+ [-+*/] ", line):
            out.append(line.split("=")[0].strip())
    return out


# module level, so that the guard sources are G[...] and L[...] as Dynamo names them
def make_scale(s):
    def scale(t):
        return t * s
    return scale


def apply_fn(fn, x):
    return fn(x) + 1


SINK = []   # SINK.append(...): an untraceable call, a graph break with a resume function


class Base(CaptureTest):
    def no_skips_or_breaks(self):
        self.assertEqual(kinds(self.start, "skip"), [])
        self.assertEqual(kinds(self.start, "graph_break"), [])


class InnerFunctions(Base):
    def test_inner_function_and_lambda_over_locals(self):
        def outer(x, y):
            s = 2.0

            def inner(t):
                return t * s + y
            z = inner(x)
            return torch.relu(z) + (lambda q: q - s)(x)

        x, y = torch.randn(5), torch.randn(5)
        got = torch.compile(outer, backend="eager")(x, y)
        self.assertTrue(torch.allclose(got, outer(x, y)))
        self.no_skips_or_breaks()
        c = kinds(self.start, "compile")
        self.assertEqual(len(c), 1)
        self.assertEqual(ops(c[0]), ["mul", "add", "relu", "sub", "add_1"])
        # a cell argument (y) is still the graph input L['y']
        self.assertIn("TENSOR_MATCH: check_tensor(L['y'], ", c[0]["guards"])

    def test_nonlocal_writes_in_inner_function(self):
        def counting(x):
            n = 0

            def bump(t):
                nonlocal n
                n += 1
                return t + n
            a = bump(x)
            b = bump(a)
            return b * n

        x = torch.randn(4)
        self.assertTrue(torch.allclose(torch.compile(counting, backend="eager")(x), counting(x)))
        self.assertTrue(torch.allclose(counting(x), (x + 3) * 2))
        self.no_skips_or_breaks()

    def test_nested_closures_two_levels(self):
        def f(x):
            a = 3.0

            def mid(t):
                b = 2.0

                def leaf(u):
                    return u * a - b
                return leaf(t) + a
            return mid(x)

        x = torch.randn(3)
        self.assertTrue(torch.allclose(torch.compile(f, backend="eager")(x), f(x)))
        self.no_skips_or_breaks()

    def test_escaping_closure_runs_the_frame_in_cpython(self):
        def f(x):
            k = x * 2

            def g():
                return k
            return g

        x = torch.randn(3)
        g = torch.compile(f, backend="eager")(x)
        self.assertTrue(torch.equal(g(), x * 2))
        self.assertEqual(len(kinds(self.start, "skip")), 1)


class CompiledClosures(Base):
    def test_free_variables_and_nonlocal_counter(self):
        calls = 0
        k = 3.0

        def f(x):
            nonlocal calls
            calls += 1
            return x * k + calls

        opt = torch.compile(f, backend="eager")
        x = torch.ones(2)
        self.assertTrue(torch.equal(opt(x), x * 3 + 1))
        self.assertEqual(calls, 1)
        self.assertTrue(torch.equal(opt(x), x * 3 + 2))
        self.assertEqual(calls, 2)
        c = kinds(self.start, "compile")
        self.assertIn("EQUALS_MATCH: L['k'] == 3.0", c[0]["guards"])
        self.assertIn("EQUALS_MATCH: L['calls'] == 0", c[0]["guards"])
        # the counter was read, so its new value recompiles, with the line that installed the guard
        reasons = [r["reasons"][0] for r in kinds(self.start, "recompile")]
        self.assertEqual(len(reasons), 1)
        self.assertRegex(reasons[0], r"^0/0: calls == 0 +# calls \+= 1  # " + here(__file__) + r":\d+ in f" + STACK + r"f\n    calls \+= 1$")

    def test_closure_value_change_recompiles_with_reason(self):
        def make(scale):
            def f(x):
                return torch.sin(x) * scale
            return f

        x = torch.randn(3)
        f2, f5 = make(2.0), make(5.0)
        o2, o5 = torch.compile(f2, backend="eager"), torch.compile(f5, backend="eager")
        self.assertTrue(torch.allclose(o2(x), f2(x)))
        self.assertTrue(torch.allclose(o5(x), f5(x)))
        self.assertTrue(torch.allclose(o2(x), f2(x)))     # the first entry again: a hit
        self.assertEqual(len(kinds(self.start, "compile")), 2)
        r = kinds(self.start, "recompile")
        self.assertEqual(len(r), 1)
        self.assertRegex(r[0]["reasons"][0], r"^0/0: scale == 2.0 +# return torch.sin\(x\) \* scale  # " + here(__file__)
                         + r":\d+ in f" + STACK + r"f\n    return torch.sin\(x\) \* scale$")

    def test_graph_break_keeps_cells_working(self):
        def make(bias):
            def f(x):
                acc = x * 2

                def add_bias(t):
                    return t + bias + acc
                print("break")          # the frame continues in CPython: its cells must be real cells there
                y = add_bias(x)
                if y.sum() > 0:
                    y = y - acc
                return add_bias(y)
            return f

        f = make(1.5)
        opt = torch.compile(f, backend="eager")
        import contextlib
        import io
        for seed in range(3):
            torch.manual_seed(seed)
            x = torch.randn(4)
            with contextlib.redirect_stdout(io.StringIO()):
                got, want = opt(x), f(x)
            self.assertTrue(torch.allclose(got, want))
        # the break at print, then the branch on a tensor inside the first resume function: both resume
        # functions are frames with cells of their own, captured in their turn
        self.assertEqual(len(kinds(self.start, "graph_break")), 2)
        self.assertEqual(kinds(self.start, "skip"), [])
        names = [c["name"] for c in kinds(self.start, "compile")]
        self.assertEqual(names[:3], ["f", "torch_dynamo_resume_in_f_at_%d" % (f.__code__.co_firstlineno + 5),
                                     "torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_%d_at_%d"
                                     % (f.__code__.co_firstlineno + 5, f.__code__.co_firstlineno + 7)])

    def test_break_after_nonlocal_store(self):
        state = [0]
        total = 0.0

        def f(x):
            nonlocal total
            total = 4.0
            y = x * total
            state.append(1)        # an untraceable call: a break after the store
            return y + total

        x = torch.ones(2)
        got = torch.compile(f, backend="eager")(x)
        self.assertEqual(total, 4.0)
        self.assertTrue(torch.equal(got, x * 4 + 4))


class InlinedClosures(Base):
    def test_closure_of_an_inlined_function_is_guarded(self):
        opt = torch.compile(apply_fn, backend="eager")
        x = torch.randn(3)
        self.assertTrue(torch.allclose(opt(make_scale(2.0), x), x * 2 + 1))
        self.assertTrue(torch.allclose(opt(make_scale(2.0), x), x * 2 + 1))   # another closure, same contents
        self.assertTrue(torch.allclose(opt(make_scale(3.0), x), x * 3 + 1))
        c = kinds(self.start, "compile")
        self.assertEqual(len(c), 2)
        self.assertIn("ID_MATCH: ___check_obj_id(L['fn'].__code__, ", c[0]["guards"])
        self.assertIn("EQUALS_MATCH: L['fn'].__closure__[0].cell_contents == 2.0", c[0]["guards"])
        r = kinds(self.start, "recompile")
        self.assertEqual(len(r), 1)
        self.assertRegex(r[0]["reasons"][0], r"^0/0: fn.__closure__\[0\].cell_contents == 2.0 +# return t \* s  # " + here(__file__)
                         + r":\d+ in scale" + STACK + r"apply_fn\n    return fn\(x\) \+ 1" + FRAME + r"scale\n    return t \* s$")

    def test_tensor_in_a_closure_is_a_graph_input(self):
        w = torch.randn(3)

        def make():
            def g(t):
                return t * w
            return g

        opt = torch.compile(apply_fn, backend="eager")
        x = torch.randn(3)
        self.assertTrue(torch.allclose(opt(make(), x), x * w + 1))
        c = kinds(self.start, "compile")[0]
        self.assertIn("TENSOR_MATCH: check_tensor(L['fn'].__closure__[0].cell_contents, ", c["guards"])
        self.assertIn("l_fn_closure_0_cell_contents", c["graph_code"])
        w.mul_(2)          # in place: same tensor, the graph reads it again
        self.assertTrue(torch.allclose(opt(make(), x), x * w + 1))

    def test_a_closure_argument_is_this_calls_object(self):
        """CLOSURE_MATCH passes another closure of the same code: what the frame returns or keeps across a break
        is the object of this call, not the one traced."""
        def f(fn, x):
            y = fn(x)
            SINK.append(y)         # a break: fn is live in the resume function
            return fn(y), fn

        opt = torch.compile(f, backend="eager")
        x = torch.ones(2)
        s2, s3 = make_scale(2.0), make_scale(2.0)
        r2, fn2 = opt(s2, x)
        r3, fn3 = opt(s3, x)
        self.assertIs(fn2, s2)
        self.assertIs(fn3, s3)
        self.assertTrue(torch.equal(r3, x * 4))
        self.assertEqual(len([c for c in kinds(self.start, "compile") if c["name"] == "f"]), 1)

    def test_nonlocal_write_after_a_break_in_a_cell_frame(self):
        def f(x):
            total = x * 0

            def acc(t):
                nonlocal total
                total = total + t
            acc(x)
            SINK.append(total)      # a break
            acc(x * 2)
            if total.sum() > 0:     # another, in the resume function
                acc(x)
            return total

        opt = torch.compile(f, backend="eager")
        for v in (1.0, -1.0, 2.0):
            x = torch.full((3,), v)
            self.assertTrue(torch.equal(opt(x), f(x)), v)

    def test_nonlocal_store_into_an_outside_closure_breaks(self):
        def make():
            n = 0

            def bump(t):
                nonlocal n
                n += 1
                return t + n
            return bump, lambda: n

        bump, read = make()
        opt = torch.compile(apply_fn, backend="eager")
        x = torch.zeros(2)
        self.assertTrue(torch.equal(opt(bump, x), x + 2))
        self.assertEqual(read(), 1)
        self.assertTrue(any("Unsupported nonlocal write" in b["reason"] for b in kinds(self.start, "graph_break")),
                        kinds(self.start, "graph_break"))


if __name__ == "__main__":
    unittest.main()
