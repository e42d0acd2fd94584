class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4][1]cpu", s0: "Sym(s0)"):
        l_x_ = L_x_

        # Annotation: {'stage': 1} # recompute: MUST_SAVE File: /tmp/c.py:5 in f, code: return torch.cond(x.sum() > 0, t, e, (x,))
        sum_1: "f32[][]cpu" = l_x_.sum()
        gt: "b8[][]cpu" = sum_1 > 0;  sum_1 = None
        cond_true_0 = self.cond_true_0
        cond_false_0 = self.cond_false_0
        cond = torch.ops.higher_order.cond(gt, cond_true_0, cond_false_0, (l_x_,));  gt = cond_true_0 = cond_false_0 = l_x_ = None

        # No stacktrace found for following nodes
        getitem: "f32[4][1]cpu" = cond[0];  cond = None
        return (getitem,)

    class cond_true_0(torch.nn.Module):
        def forward(self, l_x_: "f32[4][1]cpu"):
            l_x__1 = l_x_

            # File: /tmp/c.py:3 in t, code: return x.sin()
            sin: "f32[4][1]cpu" = l_x__1.sin();  l_x__1 = None
            return (sin,)

    class cond_false_0(torch.nn.Module):
        def forward(self, l_x_: "f32[4][1]cpu"):
            l_x__1 = l_x_

            # File: /tmp/c.py:4 in e, code: return x.cos()
            cos: "f32[4][1]cpu" = l_x__1.cos();  l_x__1 = None
            return (cos,)
