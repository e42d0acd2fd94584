"""Capture tests: the custom-backend contract, guards and recompiles, graph breaks and resume functions,
modules, stances and helpers. Run with Debian's /usr/bin/python3 (torch 1.13); no GPU needed."""
import collections
import contextlib
import io
import logging
import os
import re
import sys
import types
import unittest

import torch
import torch.nn as nn

import fxcapture
from capture_base import CaptureTest as Base, compiles, kinds, short_path


def masked(text):
    return re.sub(r"0x[0-9a-f]+", "0x...", text)


# a namespace the traced code stores attributes into (STORE_ATTR is a graph break)
_NS = types.SimpleNamespace()
_G = None


# ---------------------------------------------------------------- automatic dynamic shapes
def sig(rec):
    """The forward's parameters with their annotations, from the readable graph."""
    return re.search(r"def forward\(self, (.*)\):", rec["graph_readable"]).group(1)


def shape_guards(rec):
    return [line[len("+- LAMBDA_GUARD: "):].split("  # ")[0] for line in rec["guards"].splitlines()
            if line.startswith("+- LAMBDA_GUARD: ")]


def d_add(a, b):
    return a * 2 + b


def d_view(x):
    y = x.view(-1)
    z = x.reshape(-1, 2).t()
    return y.sum() + z.sum(), y * 2, z + 1


def d_shape(x):
    return x.view(x.shape[0], -1) + 1


def d_bt(x):
    B, T, C = x.shape
    return x.view(B * T, C).sum(0) + B


def d_cat(a, b):
    return torch.cat([a, b]) * 2


class DynLin(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


class DynamicShapes(Base):
    def run_all(self, opt, fn, argsets):
        for args in argsets:
            got, want = opt(*args), fn(*args)
            for g, w in zip(got if isinstance(got, tuple) else [got], want if isinstance(want, tuple) else [want]):
                self.assertEqual(g.shape, w.shape)
                self.assertTrue(torch.allclose(g, w), fn.__name__)

    def test_split_and_view_with_symbols(self):
        # attention's qkv split and view(B, T, h, C // h) on a dynamic T: the split items are mapped to the symbol
        # and checked at the real sizes, so the third length hits the dynamic entry
        def f(x, w):
            B, T, C = x.shape
            q, k = (x @ w).split(C, dim=2)
            q = q.view(B, T, 2, C // 2).transpose(1, 2)
            k = k.view(B, T, 2, C // 2).transpose(1, 2)
            return (q @ k.transpose(-2, -1)).softmax(-1)

        cf, w = torch.compile(f, backend="eager"), torch.randn(8, 16)
        for T in (5, 7, 9):
            x = torch.randn(2, T, 8)
            self.assertTrue(torch.allclose(cf(x, w), f(x, w), atol=1e-6))
        c = compiles(self.start)
        self.assertEqual(len(c), 2)
        self.assertIsNone(c[1].get("dynamic_specialized"))
        self.assertRegex(c[1]["graph_readable"], r'getitem_1: "f32\[2, s\d+, 8\]\[16\*s\d+, 16, 1\]')

    def test_automatic_dynamic_then_hit(self):
        opt = torch.compile(d_add, backend="eager")
        self.run_all(opt, d_add, [(torch.randn(10), torch.randn(10)), (torch.randn(16), torch.randn(16)),
                                  (torch.randn(23), torch.randn(23)), (torch.randn(7), torch.randn(7))])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 2)        # the third and fourth size hit the dynamic entry
        self.assertEqual(sig(cs[0]), 'L_a_: "f32[10][1]cpu", L_b_: "f32[10][1]cpu"')
        # automatic dynamic: no duck shaping, symbols named by sha256 of the source; a*2 + b unifies them (s52 kept)
        self.assertEqual(sig(cs[1]), 's52: "Sym(s52)", L_a_: "f32[s52][1]cpu", L_b_: "f32[s52][1]cpu"')
        self.assertEqual(shape_guards(cs[1]), ["L['a'].size()[0] == L['b'].size()[0]", "2 <= L['b'].size()[0]"])
        self.assertIn("size=[None], stride=[1]", cs[1]["guards"])
        # the shape guards are checked: a size 1 (0/1 specialization) or unequal sizes recompile
        n = len(kinds(self.start, "recompile"))
        self.assertTrue(torch.equal(opt(torch.ones(1), torch.ones(1)), d_add(torch.ones(1), torch.ones(1))))
        recs = kinds(self.start, "recompile")
        self.assertEqual(len(recs), n + 1)
        self.assertTrue(recs[-1]["reasons"][0].startswith("0/1: 2 <= b.size()[0]"), recs[-1]["reasons"])
        self.assertTrue(torch.equal(opt(torch.ones(5), torch.ones(1)), d_add(torch.ones(5), torch.ones(1))))
        self.assertTrue(any(r.startswith("0/1: a.size()[0] == b.size()[0]  ")
                            for r in kinds(self.start, "recompile")[-1]["reasons"]))

    def test_shape_env_expressions(self):
        from fxcapture import _shapes
        env = _shapes.ShapeEnv({}, True)
        hs, _, names, strides, new = env.wrap_tensor("L['x']", [8, 6, 1], [6, 1, 1], set(), set(), "")
        self.assertEqual(names, ["s77", "s27", None])   # L['x'].size()[1] hashes to 27; size 1 stays static
        self.assertEqual(strides, ["s27", None, None])
        self.assertEqual(new, [("s77", 8), ("s27", 6)])
        p, q = hs[0], hs[1]
        self.assertEqual(env.to_expr(p * q * 4), ("4*s27*s77", 192))
        self.assertEqual(env.to_expr(p + q), ("s27 + s77", 14))
        self.assertEqual(env.to_expr(p - 1), ("s77 - 1", 7))
        self.assertEqual(env.to_expr(12), (None, 12))
        with self.assertRaises(_shapes.Unmappable):
            env.to_expr(p * 99991 + 7777)
        self.assertEqual(_shapes.eval_expr("4*s27*s77 - 3", {"s27": 6, "s77": 8}), 189)
        self.assertEqual(_shapes.render({("s9",): 2, ("s10", "s9"): 1}, -1), "s10*s9 + 2*s9 - 1")
        # frame state: a changed dim becomes None, a rank change makes the whole entry None
        st = {}
        self.assertEqual(_shapes.merge_frame_state(st, "a", [4, 3]), [4, 3])
        self.assertEqual(_shapes.merge_frame_state(st, "a", [5, 3]), [None, 3])
        self.assertIsNone(_shapes.merge_frame_state(st, "a", [5]))

    def test_chain_unification(self):
        def f4(a, b, c, d):
            return a + b + c + d

        opt = torch.compile(f4, backend="eager")
        self.run_all(opt, f4, [tuple(torch.randn(n) for _ in range(4)) for n in (8, 12, 5)])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 2)
        self.assertEqual(sig(cs[1]), 's11: "Sym(s11)", L_a_: "f32[s11][1]cpu", L_b_: "f32[s11][1]cpu", '
                                     'L_c_: "f32[s11][1]cpu", L_d_: "f32[s11][1]cpu"')
        self.assertEqual(shape_guards(cs[1]), ["L['a'].size()[0] == L['d'].size()[0]",
                                               "L['b'].size()[0] == L['d'].size()[0]",
                                               "L['c'].size()[0] == L['d'].size()[0]", "2 <= L['d'].size()[0]"])
        self.assertIsNone(cs[1]["dynamic_specialized"])

    def test_rank_change_makes_all_dims_dynamic(self):
        opt = torch.compile(d_add, backend="eager")
        self.run_all(opt, d_add, [(torch.randn(10), torch.randn(10)), (torch.randn(8, 3), torch.randn(8, 3)),
                                  (torch.randn(5, 7), torch.randn(5, 7))])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 2)
        self.assertEqual(sig(cs[1]), 's52: "Sym(s52)", s20: "Sym(s20)", L_a_: "f32[s52, s20][s20, 1]cpu", '
                                     'L_b_: "f32[s52, s20][s20, 1]cpu"')
        self.assertIn("L['b'].stride()[0] == L['b'].size()[1]", shape_guards(cs[1]))
        self.assertIn("size=[None, None], stride=[None, 1]", cs[1]["guards"])

    def test_dynamic_true_false(self):
        opt = torch.compile(d_add, backend="eager", dynamic=True)
        self.run_all(opt, d_add, [(torch.randn(10), torch.randn(10)), (torch.randn(16), torch.randn(16))])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 1)
        # dynamic=True: duck shaping gives both inputs (same size) one symbol
        self.assertEqual(sig(cs[0]), 's97: "Sym(s97)", L_a_: "f32[s97][1]cpu", L_b_: "f32[s97][1]cpu"')
        # parameters and buffers stay static
        fxcapture.reset()
        start = len(fxcapture.records)
        lin = DynLin()
        opt = torch.compile(lin, backend="eager", dynamic=True)
        x = torch.randn(5, 4)
        self.assertTrue(torch.allclose(opt(x), lin(x)))
        self.assertIn('L_x_: "f32[s77, 4][4, 1]cpu"', sig(compiles(start)[0]))
        self.assertIn('_parameters_weight_: "f32[3, 4][4, 1]cpu"', sig(compiles(start)[0]))
        fxcapture.reset()
        start = len(fxcapture.records)
        opt = torch.compile(d_add, backend="eager", dynamic=False)
        self.run_all(opt, d_add, [(torch.randn(n), torch.randn(n)) for n in (10, 16, 23)])
        cs = compiles(start)
        self.assertEqual(len(cs), 3)
        self.assertTrue(all("Sym(" not in sig(c) for c in cs))

    def test_mark_dynamic_and_static(self):
        opt = torch.compile(d_add, backend="eager")
        a, b = torch.randn(6, 4), torch.randn(4)
        fxcapture.mark_dynamic(a, 0)
        self.run_all(opt, d_add, [(a, b), (torch.randn(9, 4), b)])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 1)
        self.assertEqual(sig(cs[0]), 's97: "Sym(s97)", L_a_: "f32[s97, 4][4, 1]cpu", L_b_: "f32[4][1]cpu"')
        fxcapture.reset()
        start = len(fxcapture.records)
        opt = torch.compile(d_add, backend="eager")
        for n in (6, 9):
            a, b = torch.randn(n, 4), torch.randn(n, 4)
            fxcapture.mark_static(a)
            fxcapture.mark_static(b, 0)
            self.run_all(opt, d_add, [(a, b)])
        cs = compiles(start)
        self.assertEqual(len(cs), 2)
        self.assertEqual(sig(cs[1]), 'L_a_: "f32[9, 4][4, 1]cpu", L_b_: "f32[9, 4][4, 1]cpu"')

    def test_zero_one_specialization(self):
        opt = torch.compile(d_add, backend="eager", dynamic=True)
        self.run_all(opt, d_add, [(torch.randn(1, 5), torch.randn(1, 5))])
        cs = compiles(self.start)
        # L['a'].size()[1] hashes to 97; duck shaping gives b's equal size the same symbol
        self.assertEqual(sig(cs[0]), 's97: "Sym(s97)", L_a_: "f32[1, s97][s97, 1]cpu", L_b_: "f32[1, s97][s97, 1]cpu"')
        # size 0 and 1 stay static: another size there recompiles, another size of the dynamic dim does not
        self.run_all(opt, d_add, [(torch.randn(1, 9), torch.randn(1, 9))])
        self.assertEqual(len(compiles(self.start)), 1)
        self.run_all(opt, d_add, [(torch.randn(3, 9), torch.randn(3, 9))])
        self.assertEqual(len(compiles(self.start)), 2)

    def test_view_reshape(self):
        opt = torch.compile(d_view, backend="eager")
        self.run_all(opt, d_view, [(torch.randn(4, 6),), (torch.randn(8, 6),), (torch.randn(10, 6),)])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 2)
        code = cs[1]["graph_readable"]
        self.assertIn('L_x_: "f32[s77, 6][6, 1]cpu"', code)
        self.assertIn('"f32[6*s77][1]cpu" = l_x_.view(-1)', code)
        self.assertIn('"f32[3*s77, 2][2, 1]cpu"', code)
        self.assertIn('"f32[2, 3*s77][1, 2]cpu"', code)

    def test_cat(self):
        opt = torch.compile(d_cat, backend="eager", dynamic=True)
        self.run_all(opt, d_cat, [(torch.randn(4, 3), torch.randn(6, 3)), (torch.randn(5, 3), torch.randn(2, 3))])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 1)
        self.assertIn('"f32[s52 + s97, s98][s98, 1]cpu"', cs[0]["graph_readable"])

    def test_size_reads_are_symints(self):
        opt = torch.compile(d_shape, backend="eager")
        self.run_all(opt, d_shape, [(torch.randn(4, 6),), (torch.randn(8, 6),), (torch.randn(11, 6),)])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 2)
        self.assertIsNone(cs[1]["dynamic_specialized"])
        code = cs[1]["graph_readable"]
        # Dynamo 2.x reads x.shape[0] as the input's SymInt placeholder (no size node: tools/dynamo-programs
        # p35's graph under torch 2.11 has none)
        self.assertNotIn("l_x_.size(0)", code)
        self.assertIn('view: "f32[s77, 6][6, 1]cpu" = l_x_.view(s77, -1)', code)
        # B, T, C = x.shape with arithmetic: only the dynamic dim is read, products are SymInt nodes
        opt = torch.compile(d_bt, backend="eager")
        self.run_all(opt, d_bt, [(torch.randn(2, 5, 4),), (torch.randn(3, 5, 4),), (torch.randn(6, 5, 4),)])
        code = compiles(self.start)[-1]["graph_readable"]
        self.assertIn('mul: "Sym(5*s77)" = s77 * 5', code)
        self.assertIn('"f32[5*s77, 4][4, 1]cpu" = l_x_.view(mul, 4)', code)
        self.assertEqual(len(compiles(self.start)), 4)
        # the custom backend's GraphModule takes the size as its SymInt input
        seen = []
        opt = torch.compile(d_bt, backend=lambda gm, ex: seen.append(gm.code) or gm.forward)
        self.run_all(opt, d_bt, [(torch.randn(2, 5, 4),), (torch.randn(3, 5, 4),), (torch.randn(7, 5, 4),)])
        self.assertIn("mul = s77 * 5", seen[-1])

    def test_branch_on_size_specializes_with_reason(self):
        def cond(x):
            if x.size(0) > 5:
                return x + 1
            return x - 1

        opt = torch.compile(cond, backend="eager")
        self.run_all(opt, cond, [(torch.randn(4, 2),), (torch.randn(8, 2),), (torch.randn(9, 2),)])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 3)
        self.assertIn("operator gt on a SymInt", cs[1]["dynamic_specialized"])
        self.assertNotIn("Sym(", sig(cs[1]))

    def test_value_dependent_shape_specializes(self):
        # x[:20] has 20 rows on the symbols' hints but 12 on the real input: the check on real sizes gives up symbols
        def head(x):
            return x[:20] * 2

        opt = torch.compile(head, backend="eager")
        self.run_all(opt, head, [(torch.randn(10),), (torch.randn(12),), (torch.randn(30),)])
        cs = compiles(self.start)
        self.assertEqual(len(cs), 3)
        self.assertIn("does not match the real sizes", cs[1]["dynamic_specialized"])
        self.assertEqual(sig(cs[1]), 'L_x_: "f32[12][1]cpu"')

    def test_custom_backend_gets_symints(self):
        seen = []

        def backend(gm, example_inputs):
            seen.append(([n.op for n in gm.graph.nodes if n.op == "placeholder"], list(example_inputs)))
            return gm.forward

        opt = torch.compile(d_add, backend=backend)
        self.run_all(opt, d_add, [(torch.randn(10), torch.randn(10)), (torch.randn(16), torch.randn(16)),
                                  (torch.randn(3), torch.randn(3))])
        self.assertEqual(len(seen), 2)
        self.assertEqual(seen[1][1][0], 16)
        self.assertEqual(len(seen[1][1]), 3)

    def test_engine_backends_per_shape(self):
        for backend in ("eager", "inductor"):
            fxcapture.reset()
            start = len(fxcapture.records)
            opt = torch.compile(d_view, backend=backend)
            self.run_all(opt, d_view, [(torch.randn(n, 6),) for n in (4, 8, 10, 12, 8)])
            cs = compiles(start)
            self.assertEqual(len(cs), 2, backend)
            self.assertIsNone(cs[1]["backend_error"], backend)
        # per backend: size 4 compiled static, then the dynamic graph once (symbolic sizes) for 8, 10, 12 and 8 again
        self.assertEqual(self.engine_counts(), (4, 0))

    def test_growing_batch_one_engine_compile(self):
        # a batch that grows: Dynamo recompiles once into a dynamic graph; the engine compiles that graph once
        # (inductor: symbolic kernels over the batch, GEMM and reductions included) and every later size runs on it
        def mlp(x, w):
            h = torch.relu(x @ w)
            return h.softmax(-1) * 2 + x.mean(1, keepdim=True), h.sum(0)

        fxcapture.reset()
        before = self.engine_counts()
        opt = torch.compile(mlp, backend="inductor")
        w = torch.randn(16, 8)
        for n in (4, 8, 16, 100, 700, 8, 3):
            x = torch.randn(n, 16)
            for g, want in zip(opt(x, w), mlp(x, w)):
                self.assertEqual(g.shape, want.shape)
                self.assertTrue(torch.allclose(g, want, rtol=1e-4, atol=1e-5), n)   # GEMM sums in another order
        compiled, fell_back = (a - b for a, b in zip(self.engine_counts(), before))
        self.assertEqual((compiled, fell_back), (2, 0))

    def test_differential(self):
        torch.manual_seed(0)
        for backend in ("eager", "aot_eager", "inductor"):
            for fn, shapes in ((d_add, [(n,) for n in (5, 9, 13)]), (d_view, [(n, 4) for n in (2, 6, 8)]),
                               (d_cat, [(n, 2) for n in (3, 4, 7)]), (d_shape, [(n, 3) for n in (2, 5, 6)]),
                               (d_bt, [(n, 5, 4) for n in (2, 3, 8)])):
                fxcapture.reset()
                before = self.engine_counts()
                opt = torch.compile(fn, backend=backend)
                nargs = fn.__code__.co_argcount
                self.run_all(opt, fn, [tuple(torch.randn(*s) for _ in range(nargs)) for s in shapes])
                # every shape ran on the engine: the static first compile, then the dynamic entry's graph once for
                # every later size (symbolic sizes, SymInt arithmetic such as d_bt's B * T included; inductor's
                # kernels are symbolic)
                compiled, fell_back = (a - b for a, b in zip(self.engine_counts(), before))
                self.assertEqual((compiled, fell_back), (2, 0), (backend, fn.__name__))


# ---------------------------------------------------------------- the documentation's debugging backends
class CustomBackend(Base):
    def test_cos_sin(self):
        seen = []

        def my_compiler(gm, example_inputs):
            seen.append((gm, example_inputs))
            return gm.forward

        def fn(x, y):
            a = torch.cos(x)
            b = torch.sin(y)
            return a + b

        x, y = torch.randn(10), torch.randn(10)
        out = torch.compile(fn, backend=my_compiler)(x, y)
        self.assertTrue(torch.allclose(out, fn(x, y)))
        self.assertEqual(len(seen), 1)
        gm, ex = seen[0]
        self.assertIsInstance(gm, torch.fx.GraphModule)
        self.assertEqual([e.shape for e in ex], [torch.Size([10]), torch.Size([10])])
        # torch.fx's own view of the graph the backend received
        self.assertEqual([(n.op, n.name, str(n.target)) for n in gm.graph.nodes][:2],
                         [("placeholder", "l_x_", "L_x_"), ("placeholder", "l_y_", "L_y_")])
        self.assertIs([n for n in gm.graph.nodes][2].target, torch.cos)
        self.assertEqual(masked(compiles(self.start)[0]["graph_tabular"]), masked(
            "opcode         name    target                                                  args        kwargs\n"
            "-------------  ------  ------------------------------------------------------  ----------  --------\n"
            "placeholder    l_x_    L_x_                                                    ()          {}\n"
            "placeholder    l_y_    L_y_                                                    ()          {}\n"
            "call_function  cos     <built-in method cos of type object at 0x7f00000000>  (l_x_,)     {}\n"
            "call_function  sin     <built-in method sin of type object at 0x7f00000000>  (l_y_,)     {}\n"
            "call_function  add     <built-in function add>                                 (cos, sin)  {}\n"
            "output         output  output                                                  ((add,),)   {}\n"))
        self.assertEqual(gm.code, "\n\n\ndef forward(self, L_x_ : torch.Tensor, L_y_ : torch.Tensor):\n"
                         "    l_x_ = L_x_\n    l_y_ = L_y_\n"
                         "    cos = torch.cos(l_x_);  l_x_ = None\n"
                         "    sin = torch.sin(l_y_);  l_y_ = None\n"
                         "    add = cos + sin;  cos = sin = None\n"
                         "    return (add,)\n    ")
        node = [n for n in gm.graph.nodes][2]
        self.assertIn('in fn\n    a = torch.cos(x)\n', node.meta["stack_trace"])
        self.assertEqual(node.meta["source_fn_stack"][0][0], "cos")

    def test_mock_module(self):
        class MockModule(nn.Module):
            def __init__(self):
                super().__init__()
                self.relu = nn.ReLU()

            def forward(self, x):
                return self.relu(torch.cos(x))

        graphs = []
        mod = MockModule()
        opt = torch.compile(mod, backend=lambda gm, ex: graphs.append(gm) or gm.forward)
        x = torch.randn(4)
        self.assertTrue(torch.allclose(opt(x), mod(x)))
        self.assertEqual(len(graphs), 1)
        code = graphs[0].code
        self.assertIn("cos = torch.cos(l_x_)", code)
        self.assertIn("relu = torch.nn.functional.relu(cos, inplace = False)", code)
        relu = [n for n in graphs[0].graph.nodes if n.name == "relu"][0]
        self.assertEqual([v[0] for v in relu.meta["nn_module_stack"].values()], ["L['self']._modules['relu']"])
        # the optimized module forwards attributes to the original
        self.assertIs(opt.relu, mod.relu)

    def test_toy_example_three_graphs(self):
        graphs = []

        def toy_example(a, b):
            x = a / (torch.abs(a) + 1)
            if b.sum() < 0:
                b = b * -1
            return x * b

        opt = torch.compile(toy_example, backend=lambda gm, ex: graphs.append(gm.code) or gm.forward)
        torch.manual_seed(1)
        for _ in range(100):
            a, b = torch.randn(10), torch.randn(10)
            self.assertTrue(torch.allclose(opt(a, b), toy_example(a, b)))
        self.assertEqual(len(graphs), 3)
        body = [re.findall(r"^    (\w+) = (.*?)(?:;|$)", g, re.M) for g in graphs]
        self.assertEqual(body[0], [("l_a_", "L_a_"), ("l_b_", "L_b_"), ("abs_1", "torch.abs(l_a_)"),
                                   ("add", "abs_1 + 1"), ("truediv", "l_a_ / add"), ("sum_1", "l_b_.sum()"),
                                   ("lt", "sum_1 < 0")])
        self.assertIn("return (lt, truediv)", graphs[0])
        rest = sorted(tuple(x for x in b if not x[0].startswith("l_")) for b in body[1:])
        self.assertEqual(rest, [(("mul", "l_b_ * -1"), ("mul_1", "l_x_ * mul")), (("mul", "l_x_ * l_b_"),)])
        frames = kinds(self.start, "frame")
        self.assertEqual([(f["frame_id"], f["compile_id"]) for f in frames], [(0, 0), (1, 0), (2, 0)])
        self.assertEqual({f["name"] for f in frames[1:]}, {"torch_dynamo_resume_in_toy_example_at_7"}.__class__(
            [f"torch_dynamo_resume_in_toy_example_at_{toy_example.__code__.co_firstlineno + 2}"]))


# ---------------------------------------------------------------- guards and recompiles
class Guards(Base):
    def test_tensor_reasons(self):
        def f(a):
            return a * 2

        opt = torch.compile(f, backend="eager")
        opt(torch.randn(10))
        opt(torch.randn(16))
        opt(torch.randn(8, 3))
        opt(torch.randn(10, dtype=torch.float64))
        opt(torch.randn(10, requires_grad=True))
        msgs = [r["reasons"][0] for r in kinds(self.start, "recompile")]
        self.assertEqual(msgs, [
            "0/0: tensor 'a' size mismatch at index 0. expected 10, actual 16",
            "0/1: tensor 'a' rank mismatch. expected 1, actual 2",
            "0/2: tensor 'a' dtype mismatch. expected Float, actual Double",
            "0/3: tensor 'a' dtype mismatch. expected Double, actual Float",
        ])
        self.assertEqual(kinds(self.start, "recompile")[3]["reasons"][-1],
                         "0/0: tensor 'a' requires_grad mismatch. expected requires_grad=0")
        rec = kinds(self.start, "recompile")[0]
        self.assertEqual(rec["message"], f"Recompiling function f in {__file__}:{f.__code__.co_firstlineno}\n"
                         "    triggered by the following guard failure(s):\n"
                         "    - 0/0: tensor 'a' size mismatch at index 0. expected 10, actual 16")
        self.assertEqual(rec["verbose_message"].splitlines()[2], "    guard 0 failures:")
        g = compiles(self.start)[0]["guards"]
        self.assertIn("| | +- TENSOR_MATCH: check_tensor(L['a'], Tensor, DispatchKeySet(CPU, BackendSelect, "
                      "ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=False, size=[10], "
                      "stride=[1])", g)
        # a cache hit does not recompile
        n = len(compiles(self.start))
        opt(torch.randn(16))
        self.assertEqual(len(compiles(self.start)), n)

    def test_equals_and_globals(self):
        def f(x, n):
            return x * n + SCALE

        global SCALE
        SCALE = 2.0
        opt = torch.compile(f, backend="eager")
        x = torch.randn(3)
        self.assertTrue(torch.allclose(opt(x, 3), f(x, 3)))
        opt(x, 4)
        SCALE = 5.0
        self.assertTrue(torch.allclose(opt(x, 4), f(x, 4)))
        reasons = [r["reasons"][0] for r in kinds(self.start, "recompile")]
        line = f.__code__.co_firstlineno + 1
        # Dynamo 2.11's form: the guard's line, then the user stack that installed it
        self.assertEqual(reasons[0], "0/0: n == 3" + " " * 51 + f"# return x * n + SCALE  # {short_path(__file__)}:{line} in f"
                         + f'\nUser stack trace:\n  File "{f.__code__.co_filename}", line {line}, in f\n    return x * n + SCALE')
        self.assertTrue(reasons[1].startswith("0/1: G['SCALE'] == 2.0  "))
        self.assertIn("EQUALS_MATCH: L['n'] == 3", compiles(self.start)[0]["guards"])

    def test_module_training_and_global_flag(self):
        global USE_RELU
        USE_RELU = True

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.drop = nn.Dropout(0.5)

            def forward(self, x):
                y = self.drop(self.fc(x))
                if USE_RELU:
                    y = torch.relu(y)
                return y

        m = M()
        opt = torch.compile(m, backend="eager")
        x = torch.randn(2, 3)
        with fxcapture.config.patch(suppress_errors=True):
            opt(x)  # training-mode dropout: the engine draws no random masks, this graph runs eagerly
        self.assertEqual(self.engine_counts(), (0, 1))
        m.eval()
        self.assertTrue(torch.allclose(opt(x), m(x)))
        USE_RELU = False
        self.assertTrue(torch.allclose(opt(x), m(x)))
        reasons = [r["reasons"][0].split("  #")[0].rstrip() for r in kinds(self.start, "recompile")]
        self.assertEqual(reasons, ["0/0: self._modules['drop'].training == True", "0/1: G['USE_RELU'] == True"])
        g = compiles(self.start)[0]["guards"]
        self.assertIn("EQUALS_MATCH: G['USE_RELU'] == True", g)
        self.assertIn("TENSOR_MATCH: check_tensor(L['self']._modules['fc']._parameters['weight'], Parameter, ", g)

    def test_global_state(self):
        """GlobalStateGuard: each changed field named in reason() order; a change back reuses the first entry."""
        def h(x):
            return x * 2

        opt = torch.compile(h, backend="eager")
        x = torch.ones(3)
        opt(x)
        old_dtype, old_threads = torch.get_default_dtype(), torch.get_num_threads()
        try:
            torch.set_default_dtype(torch.float64)
            opt(x)
            torch.set_default_dtype(old_dtype)
            with torch.no_grad():
                torch.set_num_threads(old_threads + 1)
                opt(x)
        finally:
            torch.set_default_dtype(old_dtype)
            torch.set_num_threads(old_threads)
        opt(x)   # the first state again: a cache hit
        reasons = [r["reasons"] for r in kinds(self.start, "recompile")]
        self.assertEqual(reasons, [
            ["0/0: GLOBAL_STATE changed: default_dtype "],
            # newest entry first, as Dynamo reports them
            ["0/1: GLOBAL_STATE changed: grad_mode num_threads default_dtype ",
             "0/0: GLOBAL_STATE changed: grad_mode num_threads "],
        ])
        self.assertEqual(len(compiles(self.start)), 3)

    def test_global_state_each_kind_recompiles(self):
        """The fast cache-hit check must still see every GlobalStateGuard field change, however it is changed
        (torch.inference_mode sets grad mode from C++, no Python setter involved)."""
        threads = torch.get_num_threads()
        kinds_ = [
            ("grad_mode", lambda: torch.set_grad_enabled(False), lambda: torch.set_grad_enabled(True)),
            ("grad_mode", lambda: torch._C._set_grad_enabled(False), lambda: torch._C._set_grad_enabled(True)),
            ("autocast", lambda: torch.set_autocast_enabled(True), lambda: torch.set_autocast_enabled(False)),
            ("deterministic_algorithms", lambda: torch.use_deterministic_algorithms(True),
             lambda: torch.use_deterministic_algorithms(False)),
            ("allow_tf32", lambda: setattr(torch.backends.cuda.matmul, "allow_tf32", True),
             lambda: setattr(torch.backends.cuda.matmul, "allow_tf32", False)),
            ("allow_fp16_reduce",
             lambda: setattr(torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", False),
             lambda: setattr(torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", True)),
            ("num_threads", lambda: torch.set_num_threads(threads + 1), lambda: torch.set_num_threads(threads)),
            ("default_dtype", lambda: torch.set_default_dtype(torch.float64),
             lambda: torch.set_default_dtype(torch.float32)),
        ]
        x = torch.ones(3)
        for name, enter, leave in kinds_:
            with self.subTest(name):
                fxcapture.reset()
                start = len(fxcapture.records)

                def h(x):
                    return x * 2

                opt = torch.compile(h, backend="eager")
                opt(x)
                enter()
                try:
                    self.assertTrue(torch.equal(opt(x), x * 2))
                    opt(x)                  # the changed state again: a hit on the new entry
                finally:
                    leave()
                opt(x)                      # back: a hit on the first entry
                self.assertEqual([r["reasons"] for r in kinds(start, "recompile")],
                                 [["0/0: GLOBAL_STATE changed: %s " % name]])
                self.assertEqual(len(compiles(start)), 2)

        # torch_function and inference_mode: context managers implemented in C++
        for name, ctx in [("torch_function", torch._C.DisableTorchFunction), ("grad_mode", torch.inference_mode)]:
            with self.subTest(name):
                fxcapture.reset()
                start = len(fxcapture.records)

                def h2(x):
                    return x + 1

                opt = torch.compile(h2, backend="eager")
                opt(x)
                with ctx():
                    opt(x)
                opt(x)
                self.assertEqual([r["reasons"] for r in kinds(start, "recompile")],
                                 [["0/0: GLOBAL_STATE changed: %s " % name]])
                self.assertEqual(len(compiles(start)), 2)

        # warn_only changes only together with deterministic mode here: both named, in reason() order
        fxcapture.reset()
        start = len(fxcapture.records)

        def h3(x):
            return x - 1

        opt = torch.compile(h3, backend="eager")
        opt(x)
        torch.use_deterministic_algorithms(True, warn_only=True)
        try:
            opt(x)
        finally:
            torch.use_deterministic_algorithms(False)
        self.assertEqual([r["reasons"] for r in kinds(start, "recompile")],
                         [["0/0: GLOBAL_STATE changed: deterministic_algorithms deterministic_algorithms_warn_only "]])

    def test_fast_tensor_check_follows_a_patched_tensor_type(self):
        """The cache-hit check reads tensors through torch.Tensor's C getters only while the type is unchanged
        (its version tag): a patched attribute is read as Python would read it."""
        def h(x):
            return x + 1

        opt = torch.compile(h, backend="eager")
        x = torch.ones(3)
        opt(x)
        opt(x)
        torch.Tensor.shape = property(lambda self: torch.Size([7]))
        try:
            opt(x)
        finally:
            del torch.Tensor.shape
        self.assertEqual(torch.ones(3).shape, torch.Size([3]))
        opt(x)
        self.assertEqual(len(compiles(self.start)), 2)
        self.assertEqual(len(kinds(self.start, "recompile")), 1)

    def test_global_state_is_per_thread(self):
        """Grad mode is thread-local: a thread under no_grad must not hit the entry compiled with grad on."""
        import threading

        def h(x):
            return x * 3

        opt = torch.compile(h, backend="eager")
        opt(torch.ones(2))
        seen = []

        def worker():
            with torch.no_grad():
                seen.append(opt(torch.ones(2)).sum().item())
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        self.assertEqual(seen, [6.0])
        self.assertEqual([r["reasons"] for r in kinds(self.start, "recompile")],
                         [["0/0: GLOBAL_STATE changed: grad_mode "]])

    def test_recompile_limit(self):
        def g(k):
            return k + 1

        fxcapture.config.recompile_limit = 2
        # dynamic=False: every size change recompiles (automatic dynamic shapes would absorb them)
        opt = torch.compile(g, backend="eager", dynamic=False)
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        logging.getLogger("torch._dynamo").addHandler(handler)
        try:
            for n in (2, 3, 4, 5):
                self.assertTrue(torch.equal(opt(torch.ones(n)), torch.ones(n) + 1))
        finally:
            logging.getLogger("torch._dynamo").removeHandler(handler)
        self.assertEqual(len(compiles(self.start)), 2)
        self.assertEqual(stream.getvalue(), (
            "torch._dynamo hit config.recompile_limit (2)\n"
            f"   function: 'g' ({__file__}:{g.__code__.co_firstlineno})\n"
            "   last reason: 0/1: tensor 'k' size mismatch at index 0. expected 3, actual 4\n"
            "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
            "To diagnose recompilation issues, see "
            "https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html\n"))

    def test_stances(self):
        def k(x):
            return x - 1

        opt = torch.compile(k, backend="eager")
        opt(torch.ones(3))
        with fxcapture.set_stance("fail_on_recompile"):
            with self.assertRaises(RuntimeError) as cm:
                opt(torch.ones(4))
        self.assertEqual(str(cm.exception), (
            f"Detected recompile when torch.compile stance is 'fail_on_recompile'. filename: '{__file__}', "
            f"function name: 'k', line number: {k.__code__.co_firstlineno}\n"
            "    triggered by the following guard failure(s):\n"
            "    - 0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4"))
        n = len(compiles(self.start))
        with fxcapture.set_stance("force_eager"):
            self.assertTrue(torch.equal(opt(torch.ones(5)), torch.zeros(5)))
        self.assertEqual(len(compiles(self.start)), n)

        @fxcapture.set_stance("eager_on_recompile")
        def run():
            return opt(torch.ones(6))
        self.assertTrue(torch.equal(run(), torch.zeros(6)))
        self.assertEqual(len(compiles(self.start)), n)
        self.assertEqual(fxcapture._config["stance"], "default")

        def k2(x):
            return x * 5
        with fxcapture.set_stance("eager_then_compile"):
            opt2 = torch.compile(k2, backend="eager")
            opt2(torch.ones(2))
            self.assertEqual(len(compiles(self.start)), n)
            opt2(torch.ones(2))
            self.assertEqual(len(compiles(self.start)), n + 1)
        with self.assertRaises(RuntimeError):
            fxcapture.set_stance("bogus")

    def test_backend_cache(self):
        def h(x):
            return x.relu()

        x = torch.randn(4)
        torch.compile(h, backend="eager")(x)
        torch.compile(h, backend="eager")(x)
        self.assertEqual(len(compiles(self.start)), 1)
        torch.compile(h, backend="aot_eager")(x)
        self.assertEqual(len(compiles(self.start)), 2)
        self.assertEqual(kinds(self.start, "recompile"), [])


# ---------------------------------------------------------------- graph breaks
class Breaks(Base):
    def test_print_item_graph_break(self):
        def f(x):
            y = x + 1
            print("hi")
            z = y * 2
            v = z.sum().item()
            fxcapture.graph_break()
            return z - v

        x = torch.randn(5)
        graphs = []
        out = io.StringIO()
        old, sys.stdout = sys.stdout, out
        try:
            res = torch.compile(f, backend=lambda gm, ex: graphs.append(gm.code) or gm.forward)(x)
        finally:
            sys.stdout = old
        self.assertEqual(out.getvalue(), "hi\n")
        self.assertTrue(torch.allclose(res, f(x)))
        reasons = [b["reason"].splitlines()[0] for b in kinds(self.start, "graph_break")]
        self.assertEqual(reasons, ["Failed to trace builtin operator",
                                   "Unsupported Tensor.item() call with capture_scalar_outputs=False",
                                   "Call to `torch._dynamo.graph_break()`"])
        # graph_break() right after .item() leaves an empty segment: no graph, as in Dynamo
        self.assertEqual(len(graphs), 3)

    def test_fullgraph(self):
        def fb(x):
            if x.sum() > 0:
                return x
            return -x

        with self.assertRaises(fxcapture.Unsupported) as cm:
            torch.compile(fb, backend="eager", fullgraph=True)(torch.ones(2))
        text = str(cm.exception)
        self.assertTrue(text.startswith("Data-dependent branching\n  Explanation: Detected data-dependent branching"))
        self.assertIn(f"\n\nfrom user code:\n  File \"{__file__}\", line {fb.__code__.co_firstlineno + 1}, in fb\n"
                      "    if x.sum() > 0:\n", text)

    def test_explain(self):
        def f(x):
            x = x * 2
            if x.sum() > 0:
                return x + 1
            return x - 1

        e = fxcapture.explain(f)(torch.ones(3))
        self.assertEqual((e.graph_count, e.graph_break_count), (2, 1))
        text = str(e)
        self.assertTrue(text.startswith("Graph Count: 2\nGraph Break Count: 1\nOp Count: 4\nBreak Reasons:\n"
                                        "  Break Reason 1:\n    Reason: generic_jump TensorVariable()\n    User Stack:\n"))
        self.assertIn("Ops per Graph:\n  Ops 1:\n    <built-in function mul>\n    sum\n    <built-in function gt>\n", text)


# ---------------------------------------------------------------- robustness and the differential test
def p_loop(x, w):
    for i in range(3):
        x = torch.tanh(x @ w) + i
    return x, x.shape[0]


def p_helpers(x):
    def inner(t):
        return t.clamp(min=-1.0, max=1.0)
    return torch.nn.functional.softmax(x, dim=-1) + x.view(-1).sum() + len([1, 2])


def helper(a, b=2):
    return a * b


def p_calls(x, y):
    t = (x, y)
    return helper(t[0]) + helper(y, b=3), {"k": 1}["k"]


def p_slices(x, opts):
    a = x[:, 1:]
    b = x[0]
    c = x[..., ::2]
    d = {"k": 2}
    if opts is None:
        return a.sum() + b.sum() + c.sum() * d["k"]
    return a


def vsum(*xs):
    out = xs[0]
    for t in xs[1:]:
        out = out + t
    return out


def p_varargs(x, y):
    args = (x, y)
    return vsum(*args) + vsum(x, y, x) + torch.add(*args, **{"alpha": 2})


def p_break_in_call(x):
    y = torch.relu(x)
    n = int(y.sum().item() > 0)
    return y * n


def p_raises(x):
    return x + undefined_name  # noqa: F821


class Robust(Base):
    def test_differential(self):
        torch.manual_seed(0)
        cases = [(p_loop, (torch.randn(4, 4), torch.randn(4, 4))), (p_helpers, (torch.randn(2, 3),)),
                 (p_calls, (torch.randn(3), torch.randn(3))), (p_slices, (torch.randn(4, 5), None)),
                 (p_varargs, (torch.randn(3), torch.randn(3))), (p_break_in_call, (torch.randn(6),))]
        for fn, args in cases:
            for backend in ("eager", "aot_eager"):
                got = torch.compile(fn, backend=backend)(*args)
                want = fn(*args)
                self.assertEqual(type(got), type(want))
                for g, w in zip(got if isinstance(got, tuple) else [got], want if isinstance(want, tuple) else [want]):
                    if isinstance(w, torch.Tensor):
                        self.assertTrue(torch.allclose(g, w), fn.__name__)
                    else:
                        self.assertEqual(g, w)

    def test_sequences_of_tensors(self):
        # tuple/list arguments: their tensors are graph inputs read afresh on each call (L['xs'][0]), guarded by
        # type and length; a tuple result (split) stays in the graph as getitem nodes
        def f(xs, y):
            a, b = y.split(2, dim=0)
            return xs[0] * a + xs[1] * b

        cf = torch.compile(f, backend="eager")
        for _ in range(3):
            xs, y = [torch.randn(2, 3), torch.randn(2, 3)], torch.randn(4, 3)
            self.assertTrue(torch.allclose(cf(xs, y), f(xs, y)))
            t = (torch.randn(2, 3), torch.randn(2, 3))
            self.assertTrue(torch.allclose(cf(t, y), f(t, y)))
        c = compiles(self.start)
        self.assertEqual(len(c), 2, [r.get("reasons") for r in c])   # the list and the tuple: TYPE_MATCH
        self.assertIn("LENGTH_CHECK: len(L['xs']) == 2", c[0]["guards"])
        self.assertIn("TENSOR_MATCH: check_tensor(L['xs'][1], ", c[0]["guards"])
        self.assertIn("split = l_y_.split(2, dim = 0)", c[0]["graph_code"])
        self.assertIn("getitem_1 = split[1]", c[0]["graph_code"])
        self.assertEqual(kinds(self.start, "graph_break"), [])
        xs3 = [torch.randn(2, 3)] * 3
        self.assertTrue(torch.allclose(cf(xs3, y), f(xs3, y)))
        self.assertIn("0/0: len(xs) == 2 ", "".join(kinds(self.start, "recompile")[-1]["reasons"]))

    def test_dicts_lists_and_conditions(self):
        # dict inputs and **kwargs read through item sources, a traced list's append, `a and b` on constants,
        # `is None` on a tensor: all in one graph, no break, same results as eager
        def f(d, xs, bias=None, flag=True, **kw):
            out = []
            for i, x in enumerate(xs):
                out.append(x * (i + 1))
            y = torch.stack(out).sum(0) * d["scale"] + d.get("shift", 0.0)
            if flag and kw.get("relu", False):
                y = y.relu()
            if bias is not None:
                y = y + bias
            for k, v in d.items():
                if k == "extra":
                    y = y + v
            return y

        cf = torch.compile(f, backend="eager")
        xs = [torch.randn(3) for _ in range(2)]
        for d, kw in [({"scale": torch.randn(3), "shift": torch.randn(3)}, {"relu": True}),
                      ({"scale": torch.randn(3), "shift": torch.randn(3)}, {"relu": True}),
                      ({"scale": torch.randn(3), "extra": torch.randn(3)}, {})]:
            for bias in (None, torch.randn(3)):
                self.assertTrue(torch.allclose(cf(d, xs, bias, **kw), f(d, xs, bias, **kw)))
        self.assertEqual(kinds(self.start, "graph_break"), [])
        self.assertEqual(kinds(self.start, "skip"), [])
        g = compiles(self.start)[0]["guards"]
        self.assertIn("DICT_KEYS_MATCH: list(L['d'].keys()) == ['scale', 'shift']", g)
        self.assertIn("TENSOR_MATCH: check_tensor(L['d']['shift'], ", g)
        # the second dict has the same keys: a hit; the third other keys: a recompile, 4 compiles in all (bias)
        self.assertEqual(len(compiles(self.start)), 4)

    def test_small_gpt_is_one_graph(self):
        # nn.ModuleList loop, a dataclass config, register_buffer mask, math.sqrt on a size (folded), Embedding,
        # an optional target: one graph per call shape, no break, same results
        import math

        class Layer(nn.Module):
            def __init__(self, d, heads):
                super().__init__()
                self.heads = heads
                self.qkv = nn.Linear(d, 3 * d)
                self.register_buffer("mask", torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8))

            def forward(self, x):
                B, T, C = x.size()
                q, k, v = self.qkv(x).split(C, dim=2)
                q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
                k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
                v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
                att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
                att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf")).softmax(-1)
                return (att @ v).transpose(1, 2).reshape(B, T, C)

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(50, 16)
                self.layers = nn.ModuleList([Layer(16, 2) for _ in range(2)])
                self.head = nn.Linear(16, 50, bias=False)

            def forward(self, idx, targets=None):
                x = self.emb(idx)
                for layer in self.layers:
                    x = x + layer(x)
                logits = self.head(x)
                loss = None
                if targets is not None:
                    loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
                return logits, loss

        torch.manual_seed(0)
        m = LM().eval()
        idx, tg = torch.randint(0, 50, (2, 8)), torch.randint(0, 50, (2, 8))
        cm = torch.compile(m, backend="eager")
        (l1, s1), (l2, s2) = cm(idx, tg), m(idx, tg)
        self.assertTrue(torch.allclose(l1, l2, atol=1e-6) and torch.allclose(s1, s2, atol=1e-6))
        l1, none = cm(idx[:, :6])
        self.assertTrue(torch.allclose(l1, m(idx[:, :6])[0], atol=1e-6))
        self.assertIsNone(none)
        self.assertEqual(kinds(self.start, "graph_break"), [])
        self.assertEqual(len(compiles(self.start)), 2)
        self.assertIn("/ 2.8284271247461903", compiles(self.start)[0]["graph_code"])

    def test_no_grad_block_in_the_graph(self):
        # Dynamo's GradModeVariable: the block becomes _set_grad_enabled nodes; a break inside runs the frame in
        # CPython; torch's grad mode is the caller's afterwards
        def f(x, w):
            y = x @ w
            with torch.no_grad():
                z = y * 2
            return y.relu() + z, z.requires_grad

        def g(x):
            with torch.no_grad():
                y = x * 2
                print("", end="")
            return y + 1

        x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4, 4)
        out, rg = torch.compile(f, backend=lambda gm, ex: gm.forward)(x, w)
        self.assertTrue(torch.allclose(out, f(x, w)[0]))
        self.assertFalse(rg)
        code = compiles(self.start)[0]["graph_code"]
        self.assertIn("_set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None", code)
        self.assertIn("_set_grad_enabled_1 = torch._C._set_grad_enabled(True)", code)
        self.assertEqual(kinds(self.start, "graph_break"), [])
        self.assertTrue(torch.allclose(torch.compile(f, backend="inductor")(x, w)[0], f(x, w)[0], atol=1e-6))
        self.assertTrue(torch.equal(torch.compile(g, backend="eager")(x), g(x)))
        self.assertTrue(any("inside a torch.no_grad()" in r["reason"] for r in kinds(self.start, "skip")))
        self.assertTrue(torch.is_grad_enabled())

    def test_outside_iterators_are_not_consumed(self):
        # a resume function receives the live enumerate object; tracing must not advance it
        def f(xs):
            out = []
            for i, x in enumerate(xs):
                print("", end="")
                out.append(x * i)
            return out

        xs = (torch.randn(2), torch.randn(2), torch.randn(2))
        got = torch.compile(f, backend="eager")(xs)
        self.assertEqual(len(got), 3)
        for g, w in zip(got, f(xs)):
            self.assertTrue(torch.equal(g, w))

    def test_size_arguments_guard_by_value(self):
        def f(x, shape):
            return x.reshape(shape) * 2

        cf, x = torch.compile(f, backend="eager"), torch.randn(6)
        for shape in (torch.Size([2, 3]), torch.Size([2, 3]), torch.Size([3, 2])):
            self.assertTrue(torch.equal(cf(x, shape), f(x, shape)))
        self.assertEqual(len(compiles(self.start)), 2)   # a new Size object of the same value hits
        self.assertIn("0/0: shape == torch.Size([2, 3])", kinds(self.start, "recompile")[0]["reasons"][0])

    def test_two_instances_after_a_break_in_a_submodule(self):
        # A break inside an inlined submodule's forward: the frames resumed for a second instance must use that
        # instance's tensors, never values captured while compiling the first (a wrong result before the fix).
        class Inner(nn.Module):
            def __init__(self):
                super().__init__()
                self.qk = nn.Linear(8, 16)
                self.proj = nn.Linear(8, 8)

            def forward(self, x):
                q, k = self.qk(x).split(8, dim=-1)
                print("", end="")                      # a graph break between the two halves
                return self.proj(q * k)

        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()

            def forward(self, x):
                return self.inner(x) + 1

        torch.manual_seed(0)
        x = torch.randn(2, 8)
        a, b = Inner().eval(), Outer().eval()
        self.assertTrue(torch.allclose(torch.compile(a, backend="eager")(x), a(x)))
        self.assertTrue(torch.allclose(torch.compile(b, backend="eager")(x), b(x)))
        x2 = torch.randn(2, 8)
        self.assertTrue(torch.allclose(torch.compile(b, backend="eager")(x2), b(x2)))

    def test_no_unexpected_skips(self):
        torch.compile(p_slices, backend="eager")(torch.randn(4, 5), None)
        torch.compile(p_varargs, backend="eager")(torch.randn(3), torch.randn(3))
        self.assertEqual(kinds(self.start, "skip"), [])
        self.assertEqual(kinds(self.start, "graph_break"), [])
        self.assertIn("getitem = l_x_[(slice(None, None, None), slice(1, None, None))]",
                      compiles(self.start)[0]["graph_code"])

    def test_untraceable_inputs_and_backend_errors(self):
        def f(x):
            return x * 2

        def g(x):
            _NS.y = x + 1   # (STORE_ATTR: a graph break there, the frame goes on in CPython)
            return _NS.y

        x = torch.randn(3)
        with fxcapture.config.patch(suppress_errors=True):
            # DLPack carries no sparse tensor: the graph runs eagerly
            self.assertTrue(torch.equal(torch.compile(f, backend="eager")(x.to_sparse()).to_dense(), x * 2))
        self.assertEqual(self.engine_counts(), (0, 1))
        self.assertTrue(torch.equal(torch.compile(g, backend="eager")(x), x + 1))
        self.assertTrue(any("unsupported bytecode" in r["reason"] for r in kinds(self.start, "graph_break")))

        def bad(gm, ex):
            raise RuntimeError("backend exploded")
        with self.assertRaisesRegex(RuntimeError, "backend exploded"):
            torch.compile(lambda t: t * 3, backend=bad)(x)

    def test_exception_reaches_caller(self):
        with self.assertRaises(NameError):
            torch.compile(p_raises, backend="eager")(torch.ones(1))

    def test_generators_and_recursion_are_skipped(self):
        def gen(x):
            yield x + 1

        def rec(x, n):
            return x if n == 0 else rec(x + 1, n - 1)

        self.assertTrue(torch.equal(next(torch.compile(gen, backend="eager")(torch.ones(1))), torch.ones(1) * 2))
        self.assertTrue(torch.equal(torch.compile(rec, backend="eager")(torch.zeros(1), 20), torch.ones(1) * 20))

    def test_closures(self):
        def make(scale, bias):
            def f(x):
                y = x * scale + bias
                if y.sum() > 0:
                    y = y + 1
                return y
            return f

        f = make(2.0, torch.ones(3))
        g = torch.compile(f, backend="eager")
        torch.manual_seed(3)
        for _ in range(4):
            x = torch.randn(3)
            self.assertTrue(torch.allclose(g(x), f(x)))
        f3 = make(3.0, torch.ones(3))
        x = torch.randn(3)
        self.assertTrue(torch.allclose(torch.compile(f3, backend="eager")(x), f3(x)))
        self.assertIn("EQUALS_MATCH: L['scale'] == 2.0", compiles(self.start)[0]["guards"])
        self.assertIn("TENSOR_MATCH: check_tensor(L['bias'], ", compiles(self.start)[0]["guards"])
        self.assertTrue(kinds(self.start, "recompile")[0]["reasons"][0].startswith("0/0: scale == 2.0  "))

    def test_threads(self):
        import threading

        def tf(x):
            return torch.sin(x) * 2

        opt = torch.compile(tf, backend="eager")
        errors = []

        def worker(n):
            try:
                for _ in range(50):
                    x = torch.randn(n)
                    if not torch.allclose(opt(x), tf(x)):
                        errors.append(n)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(n,)) for n in (3, 4, 3, 5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_helpers(self):
        self.assertIn("inductor", fxcapture.list_backends())
        self.assertNotIn("eager", fxcapture.list_backends())
        self.assertIn("eager", fxcapture.list_backends(None))

        @fxcapture.register_backend(name="mine_test")
        def mine(gm, ex, **kw):
            return gm.forward
        self.assertIn("mine_test", fxcapture.list_backends())
        with self.assertRaises(RuntimeError):
            torch.compile(lambda x: x, backend="no_such_backend")
        with self.assertRaises(RuntimeError):
            torch.compile(lambda x: x, mode="max-autotune", options={"a": 1})

        def uses(x):
            return torch.sigmoid(x) + 1
        fxcapture.disallow_in_graph(torch.sigmoid)
        try:
            torch.compile(uses, backend="eager")(torch.ones(2))
        finally:
            fxcapture._disallowed_ids.discard(id(torch.sigmoid))
        self.assertEqual(kinds(self.start, "graph_break")[0]["reason"].splitlines()[0],
                         "Attempted to call function marked as skipped")
        self.assertIs(torch.compile(uses, disable=True), uses)

        @torch.compile(backend="eager")
        def deco(x):
            return x + 1

        @torch.compile
        def deco2(x):
            return x + 2
        self.assertTrue(torch.equal(deco(torch.ones(1)), torch.ones(1) * 2))
        self.assertTrue(torch.equal(deco2(torch.ones(1)), torch.ones(1) * 3))
        t = torch.ones(3)
        fxcapture.mark_dynamic(t, 0)
        self.assertEqual(t._dynamo_dynamic_indices, {0})


# ---------------------------------------------------------------- the engine's backends behind the registered names
class EngineBackends(Base):
    def test_super_calls_are_traced(self):
        # super().method(), super(Cls, self).method() and an nn.Linear subclass calling its base forward: one graph
        # each, no break, the parent's ops in it and the parameters read through self's source (as Dynamo's
        # SuperVariable); a break before super() resumes into a frame that still has its __class__ cell
        class Parent(nn.Module):
            def forward(self, x):
                return x * 2

        class ZeroArg(Parent):
            def forward(self, x):
                return torch.relu(super().forward(x)) + 1

        class TwoArg(Parent):
            def forward(self, x):
                return super(TwoArg, self).forward(x).sin()

        class Lin(nn.Linear):
            def forward(self, x):
                return super().forward(x).sigmoid()

        class BreakFirst(Parent):
            def forward(self, x):
                y = x.sin()
                print("a graph break")
                return super().forward(y).cos()

        x = torch.randn(3, 4)
        for m, ops, n_graphs in ((ZeroArg(), ["mul", "relu", "add"], 1), (TwoArg(), ["mul", "sin"], 1),
                                 (Lin(4, 4), ["linear", "sigmoid"], 1), (BreakFirst(), ["mul", "cos"], 2)):
            fxcapture.reset()
            start = len(fxcapture.records)
            with contextlib.redirect_stdout(io.StringIO()):
                out = torch.compile(m, backend="eager")(x)
                want = m(x)
            self.assertTrue(torch.allclose(out, want), type(m).__name__)
            recs = compiles(start)
            self.assertEqual(len(recs), n_graphs, type(m).__name__)
            code = recs[-1]["graph_code"]
            for op in ops:
                self.assertIn(op, code, (type(m).__name__, code))
            if isinstance(m, nn.Linear):
                self.assertIn("L['self']._parameters['weight']", recs[-1]["guards"])

    def test_softmax_dtype_and_device_arguments(self):
        # softmax(x, dim, dtype=float64) converts first (the result is float64, on every backend), and a
        # device=x.device argument stays in the graph as Dynamo prints it
        fns = (lambda x: nn.functional.softmax(x, dim=-1, dtype=torch.float64),
               lambda x: x.log_softmax(-1, dtype=torch.float64),
               lambda x: torch.softmax(x, 1, torch.float64),
               lambda x: x + torch.arange(8, device=x.device, dtype=x.dtype))
        x = torch.randn(4, 8)
        for i, f in enumerate(fns):
            for backend in ("eager", "aot_eager", "inductor"):
                fxcapture.reset()
                start = len(fxcapture.records)
                out, want = torch.compile(f, backend=backend)(x), f(x)
                self.assertEqual(out.dtype, want.dtype, (i, backend))
                self.assertTrue(torch.allclose(out, want, atol=1e-6), (i, backend))
                rec = compiles(start)
                self.assertEqual(len(rec), 1, (i, backend))
                self.assertIsNone(rec[0]["backend_error"], (i, backend))
        self.assertIn("device = device(type='cpu'), dtype = torch.float32)", rec[0]["graph_code"])

    def test_dicts_and_namedtuples_of_traced_values(self):
        # dicts built from traced values (stores, `in`, len, get, keys/values/items, iteration) and namedtuples
        # (positional, keyword and default fields, field reads) stay in one graph and come back as dict and as the
        # namedtuple class; a dict live across a graph break is rebuilt for the resumed frame
        Out = collections.namedtuple("Out", "y z w", defaults=(None,))

        def dict_ops(x):
            d = {"a": x + 1, "b": x * 2}
            d["c"] = d["a"] - d["b"]
            d["a"] = d["a"].relu()
            total = sum(v for v in d.values())
            keys = [k for k in d]
            extra = d.get("missing", x) * len(d) if "c" in d else x
            return {"total": total, "extra": extra, "pairs": [(k, v.sum()) for k, v in d.items()], "keys": keys}

        def nt_ops(x):
            o = Out(x.sin(), z=x.cos())
            return Out(o.y + o.z, o[1] * 2, o.w)

        def null_ctx(x, amp=False):
            with torch.no_grad() if amp else contextlib.nullcontext() as c:
                return {"y": x * 3, "c": c}

        def empty_then_store(x):
            e = {}
            e[x.shape[0]] = x.exp()
            return e[4] + 1

        def dict_over_break(x):
            d = {"h": x.exp()}
            print("a graph break")
            return d["h"] + 1

        x = torch.randn(4, 3)
        for f, n_graphs in ((dict_ops, 1), (nt_ops, 1), (null_ctx, 1), (empty_then_store, 1), (dict_over_break, 2)):
            fxcapture.reset()
            start = len(fxcapture.records)
            with contextlib.redirect_stdout(io.StringIO()):
                out, want = torch.compile(f, backend="eager")(x), f(x)
            recs = fxcapture.records[start:]
            self.assertEqual(len([r for r in recs if r["kind"] == "compile"]), n_graphs, f.__name__)
            self.assertEqual(len([r for r in recs if r["kind"] == "graph_break"]), n_graphs - 1,
                             [r.get("reason") for r in recs if r["kind"] == "graph_break"])
            self.assertEqual(type(out), type(want), f.__name__)
            if isinstance(want, dict) and "c" in want:
                self.assertTrue(torch.allclose(out["y"], want["y"]) and out["c"] is None)
            elif isinstance(want, dict):
                self.assertEqual(list(out), list(want))
                self.assertTrue(torch.allclose(out["total"], want["total"]))
                self.assertTrue(torch.allclose(out["extra"], want["extra"]))
                self.assertEqual([k for k, _ in out["pairs"]], [k for k, _ in want["pairs"]])
                self.assertEqual(out["keys"], ["a", "b", "c"])
            elif isinstance(want, Out):
                self.assertTrue(torch.allclose(out.y, want.y) and torch.allclose(out.z, want.z))
                self.assertIsNone(out.w)
            else:
                self.assertTrue(torch.allclose(out, want))

    def test_structseq_results_and_more_lowerings(self):
        # torch.max(dim)/topk return torch.return_types structseqs: .values/.indices read in the graph, the result
        # rebuilt as that type (a function-style multi-output call crashed the interpreter before); gather,
        # baddbmm and unbind lower to ATen on every backend; isinstance(traced list, (list, tuple)) folds
        def max_values(x, i):
            m = x.max(dim=1, keepdim=True)
            return torch.gather(x, 1, i) + m.values, m.indices

        def topk(x):
            r = torch.topk(x, 2, dim=-1)
            return r, r.values * 2

        def more(a, b, xs):
            y = torch.baddbmm(a @ b, a, b, alpha=0.5)
            return torch.stack([t * k for k, t in enumerate(y.unbind(0))]) + (sum(xs) if isinstance(xs, (list, tuple)) else 0)

        x, i = torch.randn(3, 5), torch.randint(0, 5, (3, 2))
        a, b = torch.randn(2, 3, 3), torch.randn(2, 3, 3)
        def graph_forward(gm, example_inputs):   # capture alone: the torch.return_types rebuild
            return gm.forward

        cases = ((max_values, (x, i), ("eager", "inductor")), (topk, (x,), (graph_forward, "eager", "aot_eager")),
                 (more, (a, b, [torch.randn(3, 3)] * 2), ("eager", "inductor")))
        for f, args, backends in cases:
            for backend in backends:
                fxcapture.reset()
                start = len(fxcapture.records)
                out, want = torch.compile(f, backend=backend)(*args), f(*args)
                self.assertEqual(type(out[0]), type(want[0]), (f.__name__, backend))
                for o, w in zip(torch.utils._pytree.tree_flatten(out)[0], torch.utils._pytree.tree_flatten(want)[0]):
                    self.assertTrue(torch.allclose(o.float(), w.float(), atol=1e-5), (f.__name__, backend))
                recs = fxcapture.records[start:]
                self.assertEqual([r["kind"] for r in recs if r["kind"] in ("compile", "graph_break")], ["compile"],
                                 [r.get("reason") for r in recs])
                self.assertIsNone(recs[-1]["backend_error"], (f.__name__, backend))
        self.assertIn("torch.return_types.topk", repr(type(torch.compile(topk, backend=graph_forward)(x)[0])))

    def test_var_std_and_roll_lower_to_aten(self):
        # torch-level var/std (unbiased, correction=, keepdim, dims) become var.correction (+ sqrt), roll becomes a
        # cat of two slices: the engine's backends compile them instead of running the graph eagerly
        fns = (lambda x: x.var(-1, keepdim=True), lambda x: x.std(), lambda x: torch.std(x, 0, unbiased=False),
               lambda x: x.var(dim=1, correction=0), lambda x: torch.var(x, False),
               lambda x: x.std([0, 1], keepdim=True),
               lambda x: (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5),
               lambda x: torch.roll(x, 1, 0), lambda x: x.roll(-2, dims=1), lambda x: torch.roll(x, (7,), (-1,)),
               lambda x: x.roll(5, 1) * 2)
        x = torch.randn(4, 5, dtype=torch.float64)
        for k, f in enumerate(fns):
            for backend in ("eager", "aot_eager", "inductor"):
                fxcapture.reset()
                start = len(fxcapture.records)
                out, want = torch.compile(f, backend=backend)(x), f(x)
                self.assertEqual(out.shape, want.shape, (k, backend))
                self.assertTrue(torch.allclose(out, want), (k, backend))
                self.assertIsNone(compiles(start)[-1]["backend_error"], (k, backend))

    def test_unpacking_fstrings_and_unsupported_opcodes(self):
        # a, *rest = ...; [*xs, y]; f-strings of constants are traced; an opcode capture does not know (an attribute
        # store) is a graph break at that instruction, not a skipped frame: the store is made after the graph, then
        # a resume function goes on after it, captured as the second graph
        def star(x):
            a, *rest = x.split(1)
            return torch.cat([*rest, a]) + len(f"layer{x.shape[0]:02d}")

        def store_attr(x):
            import math   # imported while tracing, as Dynamo does
            y = x.sin() * math.pi
            _NS.y = y * 2
            return _NS.y.cos()

        x = torch.randn(3, 4)
        for f, n_graphs, n_breaks in ((star, 1, 0), (store_attr, 2, 1)):
            fxcapture.reset()
            start = len(fxcapture.records)
            out, want = torch.compile(f, backend="eager")(x), f(x)
            self.assertTrue(torch.allclose(out, want), f.__name__)
            self.assertEqual(len(compiles(start)), n_graphs, f.__name__)
            self.assertEqual(len(kinds(start, "graph_break")), n_breaks, f.__name__)
            self.assertEqual(kinds(start, "skip"), [], f.__name__)

    def run_differential(self, f, args, backends=("eager", "aot_eager", "inductor"), n_breaks=0):
        """f compiled on each backend against f eager: the same outputs, the same mutations of its inputs, one graph
        per frame compiled by the engine, n_breaks graph breaks."""
        for backend in backends:
            fxcapture.reset()
            start = len(fxcapture.records)
            mine = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
            theirs = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
            out, want = torch.compile(f, backend=backend)(*mine), f(*theirs)
            flat_out, flat_want = (torch.utils._pytree.tree_flatten(o)[0] for o in (out, want))
            self.assertEqual(len(flat_out), len(flat_want), (f.__name__, backend))
            for o, w in zip(flat_out + mine, flat_want + theirs):
                if isinstance(w, torch.Tensor):
                    self.assertEqual((o.shape, o.dtype), (w.shape, w.dtype), (f.__name__, backend))
                    self.assertTrue(torch.allclose(o, w, atol=1e-5, equal_nan=True), (f.__name__, backend, o, w))
            self.assertEqual([r.get("reason", "").splitlines()[0] for r in kinds(start, "graph_break")],
                             ["Unsupported tensor setitem"] * n_breaks, (f.__name__, backend))
            for rec in compiles(start):
                self.assertIsNone(rec["backend_error"], (f.__name__, backend))

    def test_tensor_setitem(self):
        # x[idx] = v on a tensor is an in-place operator.setitem node (as Dynamo traces it), not a graph break; it
        # lowers to index_put (tensor indices, masks) or to the indexed view's new value scattered back
        # (select_scatter/slice_scatter), then a copy_ into the tensor, which functionalization makes an epilogue
        # for a graph input
        def cols(x):
            y = x.clone()
            y[:, 0] = 1
            y[1:3, ..., None, 2] = x[1:3, 0, None]
            y[..., -1] = y[..., 0] * 2
            return y.cos()

        def mask(x):
            y = x * 2
            y[y > 0.5] = 0.0
            y[x < -1] = x.sum()
            return y

        def tensor_index(x, idx, t):
            y = x.sin()
            y[idx] = t
            y[:, idx] = -1.0
            y[[1, 3]] = 2.0
            y[:, [True, False, True, False, True]] = y[0, 0]
            return y

        def factory(x):
            y = torch.zeros(3, 4, dtype=torch.long)
            y[0] = 7
            y[:, 1:3] = x[:3, :2].long()
            return y

        def loop(x):
            y = x.clone()
            for k in range(3):
                y[k, k] = k
            y[0] += 1
            return y

        x, idx, t = torch.randn(4, 5), torch.tensor([0, 2]), torch.randn(2, 5)
        for f, args in ((cols, (x,)), (mask, (x,)), (tensor_index, (x, idx, t)), (factory, (x,)), (loop, (x,))):
            self.run_differential(f, args)
        fxcapture.reset()
        start = len(fxcapture.records)
        torch.compile(cols, backend="eager")(x)
        code = compiles(start)[0]["graph_code"]
        self.assertIn("clone[(slice(None, None, None), 0)] = 1", code)

    def test_tensor_setitem_mutates_inputs(self):
        # a write into a graph input reaches the caller's tensor (the eager engine writes in place; aot_eager's
        # functionalization writes back in an epilogue; inductor compiles the epilogue's values as extra outputs and
        # writes them into the inputs after the call)
        def write_input(x, v):
            x[0] = v
            x[:, -1] = 0.5
            return x + 1

        self.run_differential(write_input, (torch.randn(3, 4), torch.randn(4)),
                              backends=("eager", "aot_eager", "inductor"))

    def test_tensor_setitem_on_views_breaks(self):
        # the engine's functionalization writes the new value to the tensor alone: a write into a view, or while a
        # view of the tensor is still held, is a graph break, with the same results: the write is made after the
        # graph, and the rest of the frame is a resume function
        def into_view(x):
            y = x.view(-1)
            y[0] = 1.0
            return x * 2

        def view_held(x):
            y = x.clone()
            row = y[0]
            y[0] = 3.0
            return row + 1

        for f in (into_view, view_held):
            self.run_differential(f, (torch.randn(3, 4),), n_breaks=1)
            self.assertEqual([r["name"].split("_at_")[0] for r in compiles(self.start)[-2:]],
                             [f.__name__, "torch_dynamo_resume_in_" + f.__name__])

    def test_topk_std_mean_var_mean_interpolate_lower_to_aten(self):
        # each has an engine op now (topk, std_mean.correction, var_mean.correction, upsample_nearest2d,
        # upsample_bilinear2d): the engine's backends run them instead of failing over to eager
        fns = (lambda x: torch.topk(x, 3), lambda x: x.topk(2, dim=0, largest=False),
               lambda x: torch.topk(x, 2, -1, True, True).values * 2,
               lambda x: torch.std_mean(x, dim=1), lambda x: torch.std_mean(x, 0, keepdim=True, unbiased=False),
               lambda x: torch.var_mean(x), lambda x: torch.var_mean(x, [0, 1], correction=0),
               lambda x: torch.std_mean(x, False))
        x = torch.randn(4, 6)
        for f in fns:
            self.run_differential(f, (x,))
        F = nn.functional
        ups = (lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
               lambda x: F.interpolate(x, size=(7, 5), mode="nearest"),
               lambda x: F.interpolate(x, scale_factor=1.5),
               lambda x: F.interpolate(x, scale_factor=(2, 3), mode="bilinear", align_corners=False),
               lambda x: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True),
               lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
               lambda x: F.interpolate(x, size=(3, 2), mode="bilinear"))
        x = torch.randn(2, 3, 5, 4)
        for f in ups:
            self.run_differential(f, (x,))

    def test_store_breaks_resume_after_the_store(self):
        # a store capture does not trace (attribute, global, list item, del of an item) breaks the graph; the store
        # is made after the graph and the rest of the frame is a resume function, captured again (Dynamo's resume
        # after a non-call instruction). A list held by a local and by the stack at the break is one list again.
        def attr(x):
            y = x.sin()
            _NS.z = y
            return y.cos() + _NS.z

        def glob(x):
            global _G
            _G = x * 2
            d = {"a": 1}
            del d["a"]
            return _G.sum() + len(d)

        def list_item(x):
            ys = [x, x + 1]
            ys[0] = x * 3
            return ys[0] + ys[1]

        class Slotted:
            __slots__ = ()

        def boom():
            raise KeyError("boom")

        def in_try(x):
            # in a try block the breaking store or call is made by CPython, whose handler sees what it raises
            y = x + 1
            try:
                Slotted().a = y
            except AttributeError:
                y = y * 10
            try:
                boom()
            except KeyError:
                y = y + 5
            return y

        x = torch.randn(4)
        self.assertTrue(torch.equal(torch.compile(in_try, backend="eager")(x), in_try(x)))
        for f, names in ((attr, ["attr", "torch_dynamo_resume_in_attr_at_%d"]),
                         (glob, ["glob", "torch_dynamo_resume_in_torch_dynamo_resume_in_glob_at_%d_at_%d"]),
                         (list_item, ["list_item", "torch_dynamo_resume_in_list_item_at_%d"])):
            for backend in ("eager", "aot_eager", "inductor"):
                fxcapture.reset()
                start = len(fxcapture.records)
                out, want = torch.compile(f, backend=backend)(x), f(x)
                self.assertTrue(torch.allclose(out, want), (f.__name__, backend))
                got = [r["name"] for r in compiles(start)]
                self.assertEqual(len(got), len(names), (f.__name__, got))
                self.assertEqual(got[0], names[0])
                self.assertRegex(got[1], "^" + names[1].replace("%d", "[0-9]+") + "$")
                self.assertEqual(kinds(start, "skip"), [], f.__name__)
                for rec in compiles(start):
                    self.assertIsNone(rec["backend_error"], (f.__name__, backend))

    def test_inductor_generates_kernels(self):
        def f(x, y):
            return torch.nn.functional.gelu(torch.sin(x) + torch.cos(y)) * 2

        x, y = torch.randn(64, 32), torch.randn(64, 32)
        out = torch.compile(f, backend="inductor")(x, y)
        self.assertTrue(torch.allclose(out, f(x, y), atol=1e-5))
        rec = compiles(self.start)[-1]
        self.assertIsNone(rec["backend_error"])
        names = [k[0] for k in rec["kernels"]]
        self.assertTrue(names and all(n.startswith("cpp_fused_") for n in names), names)
        covered = sorted(n for k in rec["kernels"] for n in k[2])
        self.assertEqual(covered, ["add", "cos", "gelu", "mul", "sin"])

    def test_inductor_compiles_a_cnn(self):
        # conv, eval-mode batch norm, max/avg/adaptive pooling and flatten are lowered: no fallback to eager
        class CNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
                self.c2, self.fc = nn.Conv2d(8, 8, 3), nn.Linear(8, 4)

            def forward(self, x):
                x = nn.functional.max_pool2d(torch.relu(self.bn(self.c1(x))), 2)
                x = nn.functional.avg_pool2d(self.c2(x), 2, stride=1)
                return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

        torch.manual_seed(0)
        m = CNN().eval()
        m.bn.running_mean.uniform_(-1, 1)
        m.bn.running_var.uniform_(0.5, 2)
        x = torch.randn(2, 3, 16, 16)
        out = torch.compile(m, backend="inductor")(x)
        self.assertTrue(torch.allclose(out, m(x), atol=1e-5))
        rec = compiles(self.start)[-1]
        self.assertIsNone(rec["backend_error"])
        self.assertTrue(rec["kernels"])

    def test_aot_eager_and_options(self):
        def f(x):
            return torch.softmax(x, -1).sum(0)

        x = torch.randn(16, 8)
        for backend, kw in (("aot_eager", {}), ("inductor", {"options": {"cpp.threads": 1}}),
                            ("inductor", {"mode": "max-autotune"})):
            fxcapture.reset()
            out = torch.compile(f, backend=backend, **kw)(x)
            self.assertTrue(torch.allclose(out, f(x), atol=1e-5), (backend, kw))
            self.assertIsNone(compiles(self.start)[-1]["backend_error"])

    def test_bool_and_int_outputs_through_dlpack(self):
        def f(x):
            return x > 0, (x * 3).to(torch.int64)

        x = torch.randn(5, 3)
        m, i = torch.compile(f, backend="eager")(x)
        self.assertEqual(m.dtype, torch.bool)
        self.assertTrue(torch.equal(m, x > 0))
        self.assertTrue(torch.equal(i, (x * 3).to(torch.int64)))

    def test_unknown_option_is_an_error_and_runs_eagerly(self):
        def f(x):
            return x.relu() + 1

        x = torch.randn(4)
        stderr = io.StringIO()
        old, sys.stderr = sys.stderr, stderr
        try:
            with fxcapture.config.patch(suppress_errors=True):
                out = torch.compile(f, backend="inductor", options={"max_autotun": True})(x)
        finally:
            sys.stderr = old
        self.assertTrue(torch.equal(out, f(x)))
        self.assertEqual(self.engine_counts(), (0, 1))
        # with errors not suppressed (Dynamo's default) the same compile raises
        fxcapture.reset()
        with self.assertRaisesRegex(fxcapture.BackendCompilerFailed, "did you mean 'max_autotune'"):
            torch.compile(f, backend="inductor", options={"max_autotun": True})(x)
        err = compiles(self.start)[-1]["backend_error"]
        self.assertIn("did you mean 'max_autotune'", err)
        self.assertIn("could not compile", stderr.getvalue())


if __name__ == "__main__":
    unittest.main()
