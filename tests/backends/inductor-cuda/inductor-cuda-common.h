/* inductor-cuda-common.h: shared by the inductor CUDA tests and benchmark (plain C, no GLib): fixture graph loading,
   meta inputs from placeholder annotations, and a fixed-seed random graph generator (the same op mix as
   tests/backends/inductor's GLib one). */
#pragma once

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx-inductor.h"
#include "fx/pyparse.h"
#include "fx/runtime.h"

static const char *const icuda_fixture_names[] = {
  "pointwise_chain.aten.0", "pointwise_chain.core_aten.0", "layernorm_gelu.aten.0", "layernorm_gelu.core_aten.0",
  "rmsnorm_residual.aten.0", "rmsnorm_residual.core_aten.0", "softmax_rows.aten.0", "softmax_rows.core_aten.0",
  "mlp_block.aten.0", "mlp_block.core_aten.0",
};
#define ICUDA_N_FIXTURES (sizeof icuda_fixture_names / sizeof icuda_fixture_names[0])

static inline const char *
icuda_fixtures_dir (void)
{
  const char *d = getenv ("FX_FIXTURES");
  return d ? d : "tests/fixtures";
}

static inline fx_graph *
icuda_load_fixture (const char *name, fx_diag *diag)
{
  char path[2048];
  fx_graph *g = NULL;
  snprintf (path, sizeof path, "%s/graphs/%s.py", icuda_fixtures_dir (), name);
  if (fx_parse_fx_file (path, &g, diag) != FX_OK)
    return NULL;
  fx_graph_resolve_ops (g);
  return g;
}

/* A graph from FX code text, its ops resolved, and seeded random inputs for it (in arena); NULL on failure, with
   diag set. */
static inline fx_graph *
icuda_parse_with_inputs (const char *name, const char *code, uint64_t seed, fx_arena *arena, fx_value **in, size_t *n,
                         fx_diag *diag)
{
  fx_graph *g = NULL;
  if (fx_parse_fx_code (code, strlen (code), name, &g, diag) != FX_OK)
    return NULL;
  fx_graph_resolve_ops (g);
  if (fx_inputs_make (g, FX_INPUTS_SPEC, NULL, seed, NULL, arena, in, n, diag) != FX_OK)
    {
      fx_graph_free (g);
      return NULL;
    }
  return g;
}

/* Meta tensors (no data) shaped as the placeholders' annotations: enough to generate code at the real shapes. */
static inline size_t
icuda_meta_inputs (const fx_graph *g, fx_value *out, size_t max)
{
  size_t n = 0;
  for (const fx_node *nd = g->first; nd && n < max; nd = nd->next)
    {
      if (nd->erased || nd->op != FX_OP_PLACEHOLDER)
        continue;
      const fx_tensor_meta *m = &nd->meta.val.tensor;
      int64_t sizes[FX_TENSOR_MAX_DIMS], strides[FX_TENSOR_MAX_DIMS];
      for (int d = 0; d < m->ndim && d < FX_TENSOR_MAX_DIMS; d++)
        {
          sizes[d] = m->sizes[d].value;
          strides[d] = m->strides ? m->strides[d].value : 0;
        }
      fx_tensor *t = fx_tensor_new_meta (m->dtype, m->ndim, sizes, m->strides ? strides : NULL);
      out[n++] = fx_value_tensor (t);
    }
  return n;
}

/* ---------------------------------------------------------------- random graphs */

typedef struct icuda_rng
{
  uint64_t s;
} icuda_rng;

static inline uint32_t
icuda_next (icuda_rng *r)
{
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return (uint32_t) (r->s >> 11);
}

/* [lo, hi) */
static inline int
icuda_range (icuda_rng *r, int lo, int hi)
{
  return lo + (int) (icuda_next (r) % (uint32_t) (hi - lo));
}

typedef struct icuda_val
{
  fx_node *node;
  int ndim;
  int64_t sizes[3];
} icuda_val;

static inline fx_node *
icuda_call (fx_graph *g, const char *target, const fx_arg *args, size_t n, const fx_kwarg *kw, size_t nk)
{
  return fx_graph_call_function (g, fx_target_op (target), args, n, kw, nk);
}

static inline fx_arg
icuda_int_list (fx_arg *items, const int64_t *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    items[i] = fx_arg_int (v[i]);
  return fx_arg_list (items, n);
}

/* A chain of pointwise, reduction, view and broadcast ops over 2-D inputs with random sizes (some rows long enough
   for looped and split reductions). inputs: 3 real CPU tensors (arena-owned array). */
static inline fx_graph *
icuda_random_graph (icuda_rng *rng, fx_value **inputs, size_t *n_inputs, fx_arena *arena)
{
  fx_graph *g = fx_graph_new ();
  int64_t A = icuda_range (rng, 1, 40), B = icuda_range (rng, 1, 70);
  int shape_kind = icuda_range (rng, 0, 8);
  if (shape_kind == 0)
    B = icuda_range (rng, 200, 700);
  else if (shape_kind == 1)
    B = icuda_range (rng, 9000, 20000);          /* looped rows */
  else if (shape_kind == 2)
    {
      A = icuda_range (rng, 1, 4);
      B = icuda_range (rng, 40000, 90000);       /* split rows */
    }
  icuda_val vals[64];
  int nv = 0;
  const char *names[] = { "arg0_1", "arg1_1", "arg2_1" };
  *n_inputs = 3;
  *inputs = fx_arena_alloc (arena, sizeof (fx_value) * 3);
  fx_generator gen;
  fx_generator_seed (&gen, icuda_next (rng));
  for (int i = 0; i < 3; i++)
    {
      fx_node *ph = fx_graph_placeholder (g, names[i]);
      int64_t sz[2] = { A, B };
      int nd = i == 2 ? 1 : 2;
      const int64_t *s = i == 2 ? &sz[1] : sz;
      fx_tensor *t;
      if (i == 1 && icuda_range (rng, 0, 2))
        {
          int64_t st[2] = { 1, A };
          t = fx_tensor_new_strided (NULL, FX_DTYPE_F32, 2, sz, st);
        }
      else
        t = fx_tensor_new (NULL, FX_DTYPE_F32, nd, s);
      fx_tensor_fill_normal (t, &gen, 0, 1);
      (*inputs)[i] = fx_value_tensor (t);
      vals[nv].node = ph;
      vals[nv].ndim = nd;
      memcpy (vals[nv].sizes, s, sizeof (int64_t) * (size_t) nd);
      nv++;
    }
  static const char *unary[] = { "aten.tanh.default", "aten.sigmoid.default", "aten.neg.default", "aten.relu.default",
                                 "aten.abs.default", "aten.sin.default", "aten.cos.default", "aten.erf.default",
                                 "aten.gelu.default" };
  static const char *binary[] = { "aten.add.Tensor", "aten.mul.Tensor", "aten.sub.Tensor", "aten.maximum.default" };
  int steps = icuda_range (rng, 3, 12);
  for (int s = 0; s < steps && nv < 60; s++)
    {
      icuda_val *a = &vals[icuda_range (rng, 0, nv)];
      if (icuda_range (rng, 0, 3) == 0)
        a = &vals[nv - 1];
      icuda_val r = *a;
      int kind = icuda_range (rng, 0, 13);
      fx_arg args[4];
      fx_arg li[4];
      if (kind <= 1)
        {
          args[0] = fx_arg_node (a->node);
          r.node = icuda_call (g, unary[icuda_range (rng, 0, 9)], args, 1, NULL, 0);
        }
      else if (kind <= 3)
        {
          icuda_val *b = NULL;
          for (int tries = 0; tries < 8 && !b; tries++)
            {
              icuda_val *c = &vals[icuda_range (rng, 0, nv)];
              int64_t out[3];
              int no;
              if (fx_broadcast_shapes (a->ndim, a->sizes, c->ndim, c->sizes, &no, out, NULL) && no == a->ndim
                  && memcmp (out, a->sizes, sizeof (int64_t) * (size_t) no) == 0)
                b = c;
            }
          args[0] = fx_arg_node (a->node);
          args[1] = b ? fx_arg_node (b->node) : fx_arg_float ((icuda_range (rng, 0, 400) - 200) / 100.0);
          r.node = icuda_call (g, binary[icuda_range (rng, 0, 4)], args, 2, NULL, 0);
        }
      else if (kind <= 5 && a->ndim == 2)
        {
          static const char *red[] = { "aten.sum.dim_IntList", "aten.amax.default", "aten.mean.dim" };
          int64_t dim = icuda_range (rng, 0, 3) ? -1 : 0;
          args[0] = fx_arg_node (a->node);
          args[1] = icuda_int_list (li, &dim, 1);
          args[2] = fx_arg_bool (true);
          r.node = icuda_call (g, red[icuda_range (rng, 0, 3)], args, 3, NULL, 0);
          r.sizes[dim == -1 ? 1 : 0] = 1;
        }
      else if (kind == 6 && a->ndim == 2)
        {
          int64_t perm[2] = { 1, 0 };
          args[0] = fx_arg_node (a->node);
          args[1] = icuda_int_list (li, perm, 2);
          r.node = icuda_call (g, "aten.permute.default", args, 2, NULL, 0);
          r.sizes[0] = a->sizes[1];
          r.sizes[1] = a->sizes[0];
        }
      else if (kind == 7 && a->ndim == 2)
        {
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_int (-1);
          args[2] = fx_arg_bool (false);
          r.node = icuda_call (g, "aten._softmax.default", args, 3, NULL, 0);
        }
      else if (kind == 8 && a->ndim == 2 && a->sizes[1] == 1)
        {
          int64_t to[2] = { a->sizes[0], B };
          args[0] = fx_arg_node (a->node);
          args[1] = icuda_int_list (li, to, 2);
          r.node = icuda_call (g, "aten.expand.default", args, 2, NULL, 0);
          r.sizes[1] = B;
        }
      else if (kind == 9 && a->ndim == 2)
        {
          int64_t dim = -1;
          args[0] = fx_arg_node (a->node);
          args[1] = icuda_int_list (li, &dim, 1);
          fx_kwarg kw[2] = { { "correction", fx_arg_int (1) }, { "keepdim", fx_arg_bool (true) } };
          r.node = icuda_call (g, "aten.var.correction", args, 2, kw, 2);
          r.sizes[1] = 1;
        }
      else if (kind == 10)
        {
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_float (0.0);
          fx_node *cond = icuda_call (g, "aten.gt.Scalar", args, 2, NULL, 0);
          fx_arg wargs[3] = { fx_arg_node (cond), fx_arg_node (a->node), fx_arg_float (-1.5) };
          fx_node *neg = icuda_call (g, "aten.mul.Tensor", wargs + 1, 2, NULL, 0);
          wargs[2] = fx_arg_node (neg);
          r.node = icuda_call (g, "aten.where.self", wargs, 3, NULL, 0);
        }
      else if (kind == 11 && a->ndim == 2 && a->sizes[1] > 2)
        {
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_int (1);
          args[2] = fx_arg_int (1);
          args[3] = fx_arg_int (a->sizes[1] - 1);
          r.node = icuda_call (g, "aten.slice.Tensor", args, 4, NULL, 0);
          r.sizes[1] = a->sizes[1] - 2;
        }
      else if (kind == 12)
        {
          /* float64 (and back through promotion with float32 values later) */
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_dtype (icuda_range (rng, 0, 2) ? FX_DTYPE_F64 : FX_DTYPE_F32);
          r.node = icuda_call (g, "prims.convert_element_type.default", args, 2, NULL, 0);
        }
      else
        {
          args[0] = fx_arg_node (a->node);
          args[1] = fx_arg_float (0.5);
          r.node = icuda_call (g, "aten.mul.Tensor", args, 2, NULL, 0);
        }
      vals[nv++] = r;
    }
  fx_arg outs[2] = { fx_arg_node (vals[nv - 1].node), fx_arg_node (vals[icuda_range (rng, 3, nv)].node) };
  fx_graph_output (g, fx_arg_tuple (outs, 2));
  fx_graph_resolve_ops (g);
  return g;
}

/* ---------------------------------------------------------------- graphs with a reduction then an epilogue */

/* kind 0: a layer norm (mean, var with correction 0, rsqrt) then gelu; outputs (gelu, mean, rstd): row values stored
   once per row. kind 1: an RMS norm over h = x + 1 (h stored while the sum of squares is taken); outputs (out, h).
   kind 2: sum and var over every element (one row), then x * var + sum; outputs (that, sum, var). kind 3: softmax over
   rows (two reduction steps, max then the sum of exp, then the normalization). kind 4: softmax, and sum, var, amax of
   the rows; outputs (softmax, sum, var, amax). */
static inline fx_graph *
icuda_norm_graph (int kind)
{
  fx_graph *g = fx_graph_new ();
  fx_node *x = fx_graph_placeholder (g, "arg0_1");
  fx_arg li[2] = { fx_arg_int (-1), fx_arg_int (0) };
  fx_arg dims = kind == 2 ? fx_arg_list (li, 2) : fx_arg_list (li, 1);
  if (kind == 2)
    li[0] = fx_arg_int (1);
  fx_kwarg kw[2] = { { "correction", fx_arg_int (kind == 2 ? 1 : 0) }, { "keepdim", fx_arg_bool (true) } };
  if (kind == 3 || kind == 4)
    {
      fx_arg sargs[3] = { fx_arg_node (x), fx_arg_int (-1), fx_arg_bool (false) };
      fx_node *sm = icuda_call (g, "aten._softmax.default", sargs, 3, NULL, 0);
      if (kind == 3)
        {
          fx_arg o = fx_arg_node (sm);
          fx_graph_output (g, fx_arg_tuple (&o, 1));
        }
      else
        {
          fx_arg ra[3] = { fx_arg_node (x), dims, fx_arg_bool (true) };
          fx_node *su = icuda_call (g, "aten.sum.dim_IntList", ra, 3, NULL, 0);
          kw[0].value = fx_arg_int (1);
          fx_node *v = icuda_call (g, "aten.var.correction", ra, 2, kw, 2);
          fx_node *mx = icuda_call (g, "aten.amax.default", ra, 3, NULL, 0);
          fx_arg oa[4] = { fx_arg_node (sm), fx_arg_node (su), fx_arg_node (v), fx_arg_node (mx) };
          fx_graph_output (g, fx_arg_tuple (oa, 4));
        }
    }
  else if (kind == 0 || kind == 2)
    {
      fx_arg ra[3] = { fx_arg_node (x), dims, fx_arg_bool (true) };
      fx_node *m = icuda_call (g, kind == 0 ? "aten.mean.dim" : "aten.sum.dim_IntList", ra, 3, NULL, 0);
      fx_node *v = icuda_call (g, "aten.var.correction", ra, 2, kw, 2);
      fx_node *out;
      fx_node *second;
      if (kind == 0)
        {
          fx_arg sa[2] = { fx_arg_node (x), fx_arg_node (m) };
          fx_node *d = icuda_call (g, "aten.sub.Tensor", sa, 2, NULL, 0);
          fx_arg aa[2] = { fx_arg_node (v), fx_arg_float (1e-5) };
          fx_node *a = icuda_call (g, "aten.add.Tensor", aa, 2, NULL, 0);
          fx_arg qa[1] = { fx_arg_node (a) };
          second = icuda_call (g, "aten.rsqrt.default", qa, 1, NULL, 0);
          fx_arg ma[2] = { fx_arg_node (d), fx_arg_node (second) };
          fx_node *y = icuda_call (g, "aten.mul.Tensor", ma, 2, NULL, 0);
          fx_arg ga[1] = { fx_arg_node (y) };
          out = icuda_call (g, "aten.gelu.default", ga, 1, NULL, 0);
        }
      else
        {
          second = v;
          fx_arg ma[2] = { fx_arg_node (x), fx_arg_node (v) };
          fx_node *y = icuda_call (g, "aten.mul.Tensor", ma, 2, NULL, 0);
          fx_arg aa[2] = { fx_arg_node (y), fx_arg_node (m) };
          out = icuda_call (g, "aten.add.Tensor", aa, 2, NULL, 0);
        }
      fx_arg oa[3] = { fx_arg_node (out), fx_arg_node (m), fx_arg_node (second) };
      fx_graph_output (g, fx_arg_tuple (oa, 3));
    }
  else
    {
      fx_arg ha[2] = { fx_arg_node (x), fx_arg_float (1.0) };
      fx_node *h = icuda_call (g, "aten.add.Tensor", ha, 2, NULL, 0);
      fx_arg pa[2] = { fx_arg_node (h), fx_arg_node (h) };
      fx_node *sq = icuda_call (g, "aten.mul.Tensor", pa, 2, NULL, 0);
      fx_arg ra[3] = { fx_arg_node (sq), dims, fx_arg_bool (true) };
      fx_node *ms = icuda_call (g, "aten.mean.dim", ra, 3, NULL, 0);
      fx_arg aa[2] = { fx_arg_node (ms), fx_arg_float (1e-6) };
      fx_node *a = icuda_call (g, "aten.add.Tensor", aa, 2, NULL, 0);
      fx_arg qa[1] = { fx_arg_node (a) };
      fx_node *r = icuda_call (g, "aten.rsqrt.default", qa, 1, NULL, 0);
      fx_arg ma[2] = { fx_arg_node (h), fx_arg_node (r) };
      fx_node *o = icuda_call (g, "aten.mul.Tensor", ma, 2, NULL, 0);
      fx_arg oa[2] = { fx_arg_node (o), fx_arg_node (h) };
      fx_graph_output (g, fx_arg_tuple (oa, 2));
    }
  fx_graph_resolve_ops (g);
  return g;
}
