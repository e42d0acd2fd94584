/* fx-inductor-codegen.c: the C generator: one function per fused kernel (OpenMP outer loops, omp simd inner loops,
   per-row accumulators, Welford for variance) and a wrapper that calls kernels and extern kernels in order.
   Every identifier in the output is generated (bufN, tmpN, kernel names from the op table). */
#include "fx-inductor-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAR_THRESHOLD 32768
#define IND_LANES 16       /* Welford's lanes in a row reduction */
#define IND_ROW_LANES 64   /* the other row reductions' lanes */
#define IND_SPLIT_ROWS 32         /* at most this many kept elements: the reduction itself is split over threads */
#define IND_SPLIT_MIN_R (1 << 18) /* ... when each row has at least this many elements */

typedef ind_kernel_params kernel_params;

void
ind_kernel_params_collect (const ind_program *p, const ind_group *G, ind_kernel_params *kp)
{
  kp->buf_param = malloc (sizeof (int) * (size_t) (p->n_bufs + 1));
  kp->buf_written = calloc ((size_t) p->n_bufs + 1, sizeof (bool));
  kp->params = malloc (sizeof (int) * (size_t) (p->n_bufs + 1));
  kp->n_params = 0;
  for (int b = 0; b < p->n_bufs; b++)
    kp->buf_param[b] = -1;
  for (int k = 0; k < G->n_nodes; k++)
    {
      const ind_node *n = &p->nodes[G->nodes[k]];
      for (int o = 0; o < n->n_opnd; o++)
        if (n->opnd[o].kind == IND_OPND_LOAD && n->opnd[o].local < 0 && kp->buf_param[n->opnd[o].buf] < 0)
          {
            kp->buf_param[n->opnd[o].buf] = kp->n_params;
            kp->params[kp->n_params++] = n->opnd[o].buf;
          }
      if (p->bufs[n->out_buf].stored)
        {
          if (kp->buf_param[n->out_buf] < 0)
            {
              kp->buf_param[n->out_buf] = kp->n_params;
              kp->params[kp->n_params++] = n->out_buf;
            }
          kp->buf_written[n->out_buf] = true;
        }
    }
}

void
ind_kernel_params_free (ind_kernel_params *kp)
{
  free (kp->buf_param);
  free (kp->buf_written);
  free (kp->params);
}

/* A load from memory in a C kernel: the parameter indexed by the node's coefficients over the kernel variables. */
typedef struct c_load_ctx
{
  const ind_program *p;
  const ind_group *G;
  const kernel_params *kp;
} c_load_ctx;

static void
c_load (void *ctx, const ind_node *n, const ind_operand *op, const char *index, fx_buf *out)
{
  const c_load_ctx *c = ctx;
  int64_t xc[IND_MAXD], rc[IND_MAXD];
  ind_split_coef (n, op->coef, c->G->kx, xc, rc);
  ind_param_name (c->kp, op->buf, out);
  fx_buf_putc (out, '[');
  ind_put_index (xc, c->G->kx, rc, c->G->kr, op->offset, NULL, out);
  if (index && c->p->index_checks[op->idx_check].view >= 0)
    fx_buf_printf (out, " + %lldLL * (%s)", (long long) op->idx_stride, index);
  else if (index)
    fx_buf_printf (out, " + %lldLL * fx_ind_index (%s, %lldLL, %d)", (long long) op->idx_stride, index,
                   (long long) op->idx_bound, op->idx_check);
  fx_buf_putc (out, ']');
}

/* The body value of node n as a C expression. */
static void
node_value (const ind_program *p, const ind_group *G, const kernel_params *kp, const ind_node *n, fx_buf *out)
{
  c_load_ctx c = { p, G, kp };
  ind_node_value (p, n, false, c_load, &c, out);
}

static void
store_stmt (const ind_program *p, const ind_group *G, const kernel_params *kp, int ni, int depth, fx_buf *out)
{
  const ind_node *n = &p->nodes[ni];
  if (!p->bufs[n->out_buf].stored)
    return;
  int64_t c[IND_MAXD], xc[IND_MAXD], rc[IND_MAXD];
  ind_node_store_coef (n, c);
  ind_split_coef (n, c, G->kx, xc, rc);
  ind_indent (depth, out);
  ind_param_name (kp, n->out_buf, out);
  fx_buf_putc (out, '[');
  ind_put_index (xc, G->kx, rc, n->kind == IND_NODE_REDUCTION ? 0 : G->kr, 0, NULL, out);
  fx_buf_printf (out, "] = tmp%d;\n", ni);
}

/* A kernel parameter's element type: bool buffers are passed as uint8_t (the same bytes), since gcc 12 does not
   vectorize loads of _Bool (a masked_fill's mask kept the whole softmax loop scalar); a load converts to bool. */
static const char *
param_ctype (fx_dtype dtype)
{
  return dtype == FX_DTYPE_BOOL ? "uint8_t" : ind_ctype (dtype);
}

/* The flat index of the current element over a group's reduced dims (r0 * size(r1) * ... + r{kr-1}): what
   argmax/argmin return. */
static void
flat_r_index (const ind_group *G, fx_buf *out)
{
  fx_buf_putc (out, '(');
  for (int d = 0; d < G->kr; d++)
    {
      int64_t inner = 1;
      for (int e = d + 1; e < G->kr; e++)
        inner *= G->rs[e];
      fx_buf_printf (out, "%sr%d", d ? " + " : "", d);
      if (inner != 1)
        fx_buf_printf (out, " * %lldLL", (long long) inner);
    }
  fx_buf_putc (out, ')');
}

static void emit_r_finals (const ind_program *p, const ind_group *G, const kernel_params *kp, int seg, int depth,
                           int64_t rn, fx_buf *out);

/* Does every reduction of G have an OpenMP reduction clause (sum, mean, prod, max, min of numbers)? */
static bool
reductions_have_clauses (const ind_program *p, const ind_group *G)
{
  for (int s = 0; s < G->n_segs; s++)
    for (int k = 0, ni; (ni = ind_group_next (p, G, s, IND_NODE_REDUCTION, &k)) >= 0;)
      {
        const ind_node *n = &p->nodes[ni];
        if (n->compute_dtype == FX_DTYPE_BOOL)
          return false;
        switch ((int) n->red)
          {
          case IND_RED_SUM: case IND_RED_MEAN: case IND_RED_PROD: case IND_RED_MAX: case IND_RED_MIN:
            break;
          default:
            return false;
          }
      }
  return true;
}

/* A few long rows (sum over [2, 8M], a loss over a whole batch): the kept elements are too few to keep the cores
   busy, so each row's reduction loop is split over the threads (per-thread partials combined by OpenMP's reduction
   clause) and the rows go one after another, as Inductor's CPU code splits a reduction whose outer size is small.
   Reductions without a clause (argmax, Welford, any/all) keep the row-parallel loop. */
static bool
split_rows (const ind_program *p, const ind_group *G)
{
  int64_t xn = ind_numel (G->xs, G->kx);
  return G->kx > 0 && G->kr == 1 && xn <= IND_SPLIT_ROWS && G->rs[0] >= IND_SPLIT_MIN_R
         && reductions_have_clauses (p, G);
}

/* The statements of one r-loop segment's body. lanes: inside the lane-blocked Welford loop (lane rl). */
static void
emit_r_body (const ind_program *p, const ind_group *G, const kernel_params *kp, int seg, int bd, bool lanes,
             fx_buf *out)
{
  for (int k = 0, ni; (ni = ind_group_next (p, G, seg, -1, &k)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      const char *ct = ind_ctype (n->compute_dtype);
      if (n->kind == IND_NODE_POINTWISE)
        {
          ind_printf (bd, out, "const %s tmp%d = ", ind_ctype (n->out_dtype), ni);
          node_value (p, G, kp, n, out);
          fx_buf_puts (out, ";\n");
          store_stmt (p, G, kp, ni, bd, out);
          continue;
        }
      ind_printf (bd, out, "const %s v%d = ", ct, ni);
      ind_node tmp = *n;
      tmp.out_dtype = n->compute_dtype;
      node_value (p, G, kp, &tmp, out);
      fx_buf_puts (out, ";\n");
      ind_indent (bd, out);
      switch ((int) n->red)
        {
        case IND_RED_SUM: case IND_RED_MEAN:
          if (lanes)
            fx_buf_printf (out, "acc%d_l[rl] = acc%d_l[rl] + v%d;\n", ni, ni, ni);
          else
            fx_buf_printf (out, "acc%d = acc%d + v%d;\n", ni, ni, ni);
          break;
        case IND_RED_PROD: fx_buf_printf (out, "acc%d = acc%d * v%d;\n", ni, ni, ni); break;
        case IND_RED_MAX: case IND_RED_MIN:
          {
            const char *cmp = n->red == IND_RED_MAX ? ">" : "<";
            /* NaN in a flag beside the value, as in the scalar loop */
            if (lanes && fx_dtype_is_floating (n->compute_dtype))
              fx_buf_printf (out, "acc%d_l[rl] = v%d %s acc%d_l[rl] ? v%d : acc%d_l[rl]; acc%d_nl[rl] |= v%d != v%d;\n",
                             ni, ni, cmp, ni, ni, ni, ni, ni, ni);
            else if (lanes)
              fx_buf_printf (out, "acc%d_l[rl] = v%d %s acc%d_l[rl] ? v%d : acc%d_l[rl];\n", ni, ni, cmp, ni, ni, ni);
            else
              fx_buf_printf (out, "acc%d = v%d %s acc%d ? v%d : acc%d; acc%d_nan |= v%d != v%d;\n", ni, ni, cmp, ni,
                             ni, ni, ni, ni, ni);
            break;
          }
        case IND_RED_ARGMAX: case IND_RED_ARGMIN:
          {
            /* strictly better only: the first index of the max stays; the first NaN wins and then stays. | and &, not
               || and &&: gcc branches on each lazy operand and the lane loop mispredicted */
            const char *cmp = n->red == IND_RED_ARGMAX ? ">" : "<";
            const char *l = lanes ? "_l[rl]" : "";
            fx_buf_printf (out, "{ const bool b = (v%d %s acc%d%s)", ni, cmp, ni, l);
            if (fx_dtype_is_floating (n->compute_dtype))
              fx_buf_printf (out, " | ((v%d != v%d) & (acc%d%s == acc%d%s))", ni, ni, ni, l, ni, l);
            fx_buf_printf (out, "; acc%d%s = b ? v%d : acc%d%s; ", ni, l, ni, ni, l);
            if (lanes)
              /* the lane's block: the lane number is added when the lanes are combined */
              fx_buf_printf (out, "acc%d_il[rl] = b ? rb : acc%d_il[rl]; }\n", ni, ni);
            else
              {
                fx_buf_printf (out, "acc%d_i = b ? ", ni);
                flat_r_index (G, out);
                fx_buf_printf (out, " : acc%d_i; }\n", ni);
              }
            break;
          }
        case IND_RED_ANY: fx_buf_printf (out, "acc%d = acc%d || v%d;\n", ni, ni, ni); break;
        case IND_RED_ALL: fx_buf_printf (out, "acc%d = acc%d && v%d;\n", ni, ni, ni); break;
        case IND_RED_WELFORD_VAR:
          if (lanes)
            fx_buf_printf (out, "{ const %s delta = v%d - acc%d_wm[rl]; acc%d_wm[rl] += delta * acc%d_inv; "
                                "acc%d_wm2[rl] += delta * (v%d - acc%d_wm[rl]); }\n",
                           ct, ni, ni, ni, ni, ni, ni, ni);
          else
            fx_buf_printf (out, "{ acc%d_n++; const %s delta = v%d - acc%d_mean; acc%d_mean += delta / (%s) acc%d_n; "
                                "acc%d_m2 += delta * (v%d - acc%d_mean); }\n",
                           ni, ct, ni, ni, ni, ct, ni, ni, ni, ni);
          break;
        default: break;
        }
    }
}

/* After the lane loop of a row reduction: each lane reduction's lanes combined pairwise (log2(lanes) halvings, each
   a short loop the compiler vectorizes) into its scalar accumulator, before the scalar tail. Max/min: the lanes'
   NaN flags or'ed into the scalar one; argmax/argmin turn the lane's block into its element index first and, between
   two lanes, take the better value, a NaN over a number, and on a tie the smaller index: PyTorch's first index. */
static void
emit_lanes_combine (const ind_program *p, const ind_group *G, int seg, int lanes, int depth, fx_buf *out)
{
  for (int k = 0, ni; (ni = ind_group_next (p, G, seg, IND_NODE_REDUCTION, &k)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      bool fl = fx_dtype_is_floating (n->compute_dtype);
      bool arg = n->red == IND_RED_ARGMAX || n->red == IND_RED_ARGMIN;
      const char *cmp = n->red == IND_RED_MAX || n->red == IND_RED_ARGMAX ? ">" : "<";
      if (n->red == IND_RED_WELFORD_VAR)
        continue;
      if (arg)
        {
          ind_printf (depth, out, "for (int l = 0; l < %d; l++)\n", lanes);
          ind_printf (depth + 1, out, "acc%d_il[l] += l;\n", ni);
        }
      for (int w = lanes / 2; w >= 1; w /= 2)
        {
          ind_printf (depth, out, "for (int l = 0; l < %d; l++)\n", w);
          ind_indent (depth + 1, out);
          if (n->red == IND_RED_SUM || n->red == IND_RED_MEAN)
            fx_buf_printf (out, "acc%d_l[l] = acc%d_l[l] + acc%d_l[l + %d];\n", ni, ni, ni, w);
          else if (!arg)
            fx_buf_printf (out, "acc%d_l[l] = acc%d_l[l + %d] %s acc%d_l[l] ? acc%d_l[l + %d] : acc%d_l[l];\n", ni, ni,
                           w, cmp, ni, ni, w, ni);
          else
            {
              fx_buf_puts (out, "{\n");
              ind_printf (depth + 2, out, "const %s va = acc%d_l[l], vb = acc%d_l[l + %d];\n",
                          ind_ctype (n->compute_dtype), ni, ni, w);
              ind_printf (depth + 2, out, "const int64_t ia = acc%d_il[l], ib = acc%d_il[l + %d];\n", ni, ni, w);
              if (fl)
                ind_printf (depth + 2, out, "const bool b = (vb %s va) | ((vb != vb) & (va == va)) "
                                            "| (((vb == va) | ((vb != vb) & (va != va))) & (ib < ia));\n", cmp);
              else
                ind_printf (depth + 2, out, "const bool b = (vb %s va) | ((vb == va) & (ib < ia));\n", cmp);
              ind_printf (depth + 2, out, "acc%d_l[l] = b ? vb : va;\n", ni);
              ind_printf (depth + 2, out, "acc%d_il[l] = b ? ib : ia;\n", ni);
              ind_printf (depth + 1, out, "}\n");
            }
        }
      ind_printf (depth, out, "acc%d = acc%d_l[0];\n", ni, ni);
      if (arg)
        ind_printf (depth, out, "acc%d_i = acc%d_il[0];\n", ni, ni);
      else if ((n->red == IND_RED_MAX || n->red == IND_RED_MIN) && fl)
        {
          ind_printf (depth, out, "for (int l = 0; l < %d; l++)\n", lanes);
          ind_printf (depth + 1, out, "acc%d_nan |= acc%d_nl[l];\n", ni, ni);
        }
    }
}

/* The last pass over a row that earlier passes streamed from memory (softmax, logsumexp, cross entropy: max, then
   the sum of exp from cache) computes without reading memory; the next row's lines are prefetched meanwhile, so
   that the stream goes on through the compute (on 16 cores each row waited for memory after its exp pass). For each
   load read along the row (contiguous in r) from memory: the lines of this lane block, one row further on. */
/* Is r segment seg the last of two or more passes over the row? */
static bool
last_of_several_r (const ind_group *G, int seg)
{
  int before = 0;
  for (int t = 0; t < G->n_segs; t++)
    if (G->seg_kind[t] == IND_SEG_R)
      {
        if (t > seg)
          return false;
        before += t < seg;
      }
  return before > 0;
}

static void
emit_next_row_prefetch (const ind_program *p, const ind_group *G, const kernel_params *kp, int lanes, int depth,
                        fx_buf *out)
{
  struct seen
  {
    int buf;
    int64_t off, xc[IND_MAXD];
  } seen[8];
  int n_seen = 0;
  ind_load_walk w = { 0 };
  while (n_seen < 8 && ind_group_next_load (p, G, &w))
    {
      const ind_operand *op = w.op;
      if (op->indirect || kp->buf_param[op->buf] < 0 || w.rc[0] != 1 || w.xc[G->kx - 1] == 0)
        continue;
      bool dup = false;
      for (int q = 0; q < n_seen && !dup; q++)
        dup = seen[q].buf == op->buf && seen[q].off == op->offset && memcmp (seen[q].xc, w.xc, sizeof w.xc) == 0;
      if (dup)
        continue;
      seen[n_seen].buf = op->buf;
      seen[n_seen].off = op->offset;
      memcpy (seen[n_seen].xc, w.xc, sizeof w.xc);
      n_seen++;
      int per_line = 64 / (int) fx_dtype_size (p->bufs[op->buf].dtype);
      if (per_line < 1)
        per_line = 1;
      ind_printf (depth, out, "for (int64_t rq = 0; rq < %d; rq += %d)\n", lanes, per_line);
      ind_printf (depth, out, "{\n");
      ind_printf (depth + 1, out, "const int64_t r0 = rb + rq;\n");
      ind_printf (depth + 1, out, "__builtin_prefetch (&");
      ind_param_name (kp, op->buf, out);
      fx_buf_putc (out, '[');
      ind_put_index (w.xc, G->kx, w.rc, G->kr, op->offset + w.xc[G->kx - 1], NULL, out);
      fx_buf_puts (out, "]);\n");
      ind_printf (depth, out, "}\n");
    }
}

static void
gen_segment_r (const ind_program *p, const ind_group *G, const kernel_params *kp, int seg, int depth, fx_buf *out)
{
  int64_t rn = ind_numel (G->rs, G->kr);
  bool simd_ok = true;
  bool lanes_ok = true;     /* every other reduction of the segment has an OpenMP reduction clause */
  fx_buf red;
  fx_buf_init (&red);
  for (int k = 0, ni; (ni = ind_group_next (p, G, seg, IND_NODE_REDUCTION, &k)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      const char *ct = ind_ctype (n->compute_dtype);
      ind_indent (depth, out);
      switch ((int) n->red)
        {
        case IND_RED_SUM: case IND_RED_MEAN:
          fx_buf_printf (out, "%s acc%d = 0;\n", ct, ni);
          fx_buf_printf (&red, " reduction(+:acc%d)", ni);
          break;
        case IND_RED_PROD:
          fx_buf_printf (out, "%s acc%d = 1;\n", ct, ni);
          fx_buf_printf (&red, " reduction(*:acc%d)", ni);
          break;
        case IND_RED_MAX: case IND_RED_MIN:
          /* max/min vectorize; NaN propagates through a separate flag (a NaN anywhere makes the result NaN) */
          fx_buf_printf (out, "%s acc%d = %s; int acc%d_nan = 0;\n", ct, ni,
                         ind_dtype_limit (n->compute_dtype, n->red != IND_RED_MAX, false), ni);
          if (n->compute_dtype == FX_DTYPE_BOOL)
            simd_ok = lanes_ok = false;
          else
            fx_buf_printf (&red, " reduction(%s:acc%d) reduction(|:acc%d_nan)", n->red == IND_RED_MAX ? "max" : "min",
                           ni, ni);
          break;
        case IND_RED_ARGMAX: case IND_RED_ARGMIN:
          /* a (value, index) pair has no OpenMP reduction clause: scalar unless the lanes below take it */
          fx_buf_printf (out, "%s acc%d = %s; int64_t acc%d_i = 0;\n", ct, ni,
                         ind_dtype_limit (n->compute_dtype, n->red != IND_RED_ARGMAX, false), ni);
          simd_ok = false;
          break;
        case IND_RED_ANY:
          fx_buf_printf (out, "bool acc%d = false;\n", ni);
          simd_ok = lanes_ok = false;
          break;
        case IND_RED_ALL:
          fx_buf_printf (out, "bool acc%d = true;\n", ni);
          simd_ok = lanes_ok = false;
          break;
        case IND_RED_WELFORD_VAR:
          fx_buf_printf (out, "%s acc%d_mean = 0, acc%d_m2 = 0; int64_t acc%d_n = 0;\n", ct, ni, ni, ni);
          simd_ok = false;
          break;
        default:
          break;
        }
    }
  /* Row reductions in lanes (as Inductor's CPU code does with at::vec): L independent accumulators, lane rl seeing
     elements rb + rl of each block of L, so that the loop has L / (vector width) independent chains instead of one
     serial one; then the lanes combined pairwise (a tree) and a scalar loop over the tail. Welford keeps
     16 lanes (its running-mean weight is per block); the others take 64 (four AVX-512 vectors of floats). Every
     reduction of the segment must have a lane form: sum, mean, max, min, argmax, argmin, Welford. */
  bool has_welford = false, lanes_all = lanes_ok, any_red = false;
  for (int k = 0, ni; (ni = ind_group_next (p, G, seg, IND_NODE_REDUCTION, &k)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      /* max and min alone keep the omp simd reduction below: their chain is short (a compare and a blend), and
         a lane's NaN flag over a masked_fill's value was turned by gcc into control flow that stays scalar */
      any_red |= n->red != IND_RED_MAX && n->red != IND_RED_MIN;
      has_welford |= n->red == IND_RED_WELFORD_VAR;
      if (n->compute_dtype == FX_DTYPE_BOOL)
        lanes_all = false;
      switch ((int) n->red)
        {
        case IND_RED_SUM: case IND_RED_MEAN: case IND_RED_WELFORD_VAR: case IND_RED_MAX: case IND_RED_MIN:
        case IND_RED_ARGMAX: case IND_RED_ARGMIN:
          break;
        default:
          lanes_all = false;
          break;
        }
    }
  int lanes = has_welford ? IND_LANES : IND_ROW_LANES;
  /* a whole-tensor sum or max big enough, or a few long rows, split the reduction loop over the threads (below) */
  bool whole_parallel = ((G->kx == 0 && rn >= PAR_THRESHOLD) || split_rows (p, G)) && G->kr == 1 && simd_ok;
  if (any_red && lanes_all && G->kr == 1 && G->rs[0] >= 2 * lanes && !whole_parallel)
    {
      int64_t full = G->rs[0] / lanes * lanes;
      for (int k = 0, ni; (ni = ind_group_next (p, G, seg, IND_NODE_REDUCTION, &k)) >= 0;)
        {
          const ind_node *n = &p->nodes[ni];
          const char *ct = ind_ctype (n->compute_dtype);
          switch ((int) n->red)
            {
            case IND_RED_WELFORD_VAR:
              ind_printf (depth, out, "%s acc%d_wm[%d] = { 0 }, acc%d_wm2[%d] = { 0 };\n", ct, ni, lanes, ni, lanes);
              break;
            case IND_RED_SUM: case IND_RED_MEAN:
              ind_printf (depth, out, "%s acc%d_l[%d] = { 0 };\n", ct, ni, lanes);
              break;
            case IND_RED_MAX: case IND_RED_MIN:
              if (fx_dtype_is_floating (n->compute_dtype))
                ind_printf (depth, out, "%s acc%d_l[%d]; int acc%d_nl[%d] = { 0 };\n", ct, ni, lanes, ni, lanes);
              else
                ind_printf (depth, out, "%s acc%d_l[%d];\n", ct, ni, lanes);
              ind_printf (depth, out, "for (int l = 0; l < %d; l++)\n", lanes);
              ind_printf (depth + 1, out, "acc%d_l[l] = %s;\n", ni,
                          ind_dtype_limit (n->compute_dtype, n->red != IND_RED_MAX, false));
              break;
            default:
              /* lane l starts at (its extreme, element l): the element if no other is better, which is right */
              ind_printf (depth, out, "%s acc%d_l[%d]; int64_t acc%d_il[%d];\n", ct, ni, lanes, ni, lanes);
              ind_printf (depth, out, "for (int l = 0; l < %d; l++)\n", lanes);
              ind_printf (depth, out, "{\n");
              ind_printf (depth + 1, out, "acc%d_l[l] = %s;\n", ni,
                          ind_dtype_limit (n->compute_dtype, n->red != IND_RED_ARGMAX, false));
              ind_printf (depth + 1, out, "acc%d_il[l] = 0;\n", ni);
              ind_printf (depth, out, "}\n");
              break;
            }
        }
      ind_printf (depth, out, "for (int64_t rb = 0; rb < %lldLL; rb += %d)\n", (long long) full, lanes);
      ind_printf (depth, out, "{\n");
      for (int k = 0, ni; (ni = ind_group_next_red (p, G, seg, IND_RED_WELFORD_VAR, &k)) >= 0;)
        {
          const char *ct = ind_ctype (p->nodes[ni].compute_dtype);
          ind_printf (depth + 1, out, "const %s acc%d_inv = (%s) 1 / (%s) (rb / %d + 1);\n", ct, ni, ct, ct, lanes);
        }
      if (last_of_several_r (G, seg) && G->kx >= 1)
        emit_next_row_prefetch (p, G, kp, lanes, depth + 1, out);
      ind_printf (depth + 1, out, "#pragma omp simd\n");
      ind_printf (depth + 1, out, "for (int64_t rl = 0; rl < %d; rl++)\n", lanes);
      ind_printf (depth + 1, out, "{\n");
      ind_printf (depth + 2, out, "const int64_t r0 = rb + rl;\n");
      emit_r_body (p, G, kp, seg, depth + 2, true, out);
      ind_printf (depth + 1, out, "}\n");
      ind_printf (depth, out, "}\n");
      emit_lanes_combine (p, G, seg, lanes, depth, out);
      if (full < G->rs[0])
        {
          if (simd_ok && G->rs[0] - full >= 8)
            {
              /* the tail vectorized too (cross_entropy's rows of 1000: 40 scalar exp per row cost 20%) */
              ind_printf (depth, out, "#pragma omp simd%s", red.data ? red.data : "");
              if (p->simdlen > 0)
                fx_buf_printf (out, " simdlen(%d)", p->simdlen);
              fx_buf_putc (out, '\n');
            }
          ind_printf (depth, out, "for (int64_t r0 = %lldLL; r0 < %lldLL; r0++)\n",
                      (long long) full, (long long) G->rs[0]);
          ind_printf (depth, out, "{\n");
          emit_r_body (p, G, kp, seg, depth + 1, false, out);
          ind_printf (depth, out, "}\n");
        }
      for (int k = 0, ni; (ni = ind_group_next_red (p, G, seg, IND_RED_WELFORD_VAR, &k)) >= 0;)
        {
          const char *ct = ind_ctype (p->nodes[ni].compute_dtype);
          ind_printf (depth, out, "{\n");
          ind_printf (depth + 1, out, "%s mean = 0, m2 = 0, cnt = 0;\n", ct);
          ind_printf (depth + 1, out, "for (int l = 0; l < %d; l++)\n", IND_LANES);
          ind_printf (depth + 1, out, "{\n");
          ind_printf (depth + 2, out, "const %s nb = (%s) %lldLL, n = cnt + nb, delta = acc%d_wm[l] - mean;\n",
                      ct, ct, (long long) (full / IND_LANES), ni);
          ind_printf (depth + 2, out, "mean += delta * nb / n;\n");
          ind_printf (depth + 2, out, "m2 += acc%d_wm2[l] + delta * delta * cnt * nb / n;\n", ni);
          ind_printf (depth + 2, out, "cnt = n;\n");
          ind_printf (depth + 1, out, "}\n");
          ind_printf (depth + 1, out, "if (acc%d_n > 0)\n", ni);
          ind_printf (depth + 1, out, "{\n");
          ind_printf (depth + 2, out, "const %s nb = (%s) acc%d_n, n = cnt + nb, delta = acc%d_mean - mean;\n",
                      ct, ct, ni, ni);
          ind_printf (depth + 2, out, "mean += delta * nb / n;\n");
          ind_printf (depth + 2, out, "m2 += acc%d_m2 + delta * delta * cnt * nb / n;\n", ni);
          ind_printf (depth + 1, out, "}\n");
          ind_printf (depth + 1, out, "acc%d_mean = mean;\n", ni);
          ind_printf (depth + 1, out, "acc%d_m2 = m2;\n", ni);
          ind_printf (depth, out, "}\n");
        }
    }
  else
    {
    for (int d = 0; d < G->kr; d++)
      {
        ind_indent (depth + d, out);
        if (d == 0 && whole_parallel)
          {
            /* no outer loop (or too short a one) to spread over threads: split the reduction itself (per-thread
               partial accumulators combined by OpenMP) */
            fx_buf_printf (out, "#pragma omp parallel for simd schedule(static)%s", red.data ? red.data : "");
            if (p->threads > 0)
              fx_buf_printf (out, " num_threads(%d)", p->threads);
            if (p->simdlen > 0)
              fx_buf_printf (out, " simdlen(%d)", p->simdlen);
            fx_buf_putc (out, '\n');
            ind_indent (depth + d, out);
          }
        else if (d == G->kr - 1 && simd_ok && G->rs[d] >= 8)
          {
            fx_buf_printf (out, "#pragma omp simd%s", red.data ? red.data : "");
            if (p->simdlen > 0)
              fx_buf_printf (out, " simdlen(%d)", p->simdlen);
            fx_buf_putc (out, '\n');
            ind_indent (depth + d, out);
          }
        fx_buf_printf (out, "for (int64_t r%d = 0; r%d < %lldLL; r%d++)\n", d, d, (long long) G->rs[d], d);
      }
    int bd = depth + G->kr;
    ind_printf (bd - 1, out, "{\n");

      emit_r_body (p, G, kp, seg, bd, false, out);
      ind_printf (bd - 1, out, "}\n");
    }
  emit_r_finals (p, G, kp, seg, depth, rn, out);
  fx_buf_free (&red);
}

/* After a segment's reduction loop: each reduction's value tmpN from its accumulator, stored. */
static void
emit_r_finals (const ind_program *p, const ind_group *G, const kernel_params *kp, int seg, int depth, int64_t rn,
               fx_buf *out)
{
  for (int k = 0, ni; (ni = ind_group_next (p, G, seg, IND_NODE_REDUCTION, &k)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      const char *ot = ind_ctype (n->out_dtype);
      ind_indent (depth, out);
      if (n->red == IND_RED_MEAN)
        fx_buf_printf (out, "const %s tmp%d = (%s) (acc%d / (%s) %lldLL);\n", ot, ni, ot, ni,
                       ind_ctype (n->compute_dtype), (long long) rn);
      else if (n->red == IND_RED_WELFORD_VAR)
        fx_buf_printf (out, "const %s tmp%d = (%s) (acc%d_m2 / (%s) (%lldLL - (%s) %.17g));\n", ot, ni, ot, ni,
                       ind_ctype (n->compute_dtype), (long long) rn, ind_ctype (n->compute_dtype), n->red_param);
      else if (n->red == IND_RED_ARGMAX || n->red == IND_RED_ARGMIN)
        fx_buf_printf (out, "const %s tmp%d = (%s) acc%d_i;\n", ot, ni, ot, ni);
      else if ((n->red == IND_RED_MAX || n->red == IND_RED_MIN) && fx_dtype_is_floating (n->compute_dtype))
        fx_buf_printf (out, "const %s tmp%d = acc%d_nan ? (%s) NAN : (%s) acc%d;\n", ot, ni, ni, ot, ot, ni);
      else
        fx_buf_printf (out, "const %s tmp%d = (%s) acc%d;\n", ot, ni, ot, ni);
      store_stmt (p, G, kp, ni, depth, out);
    }
}

static void
gen_segment_x (const ind_program *p, const ind_group *G, const kernel_params *kp, int seg, int depth, fx_buf *out)
{
  for (int k = 0, ni; (ni = ind_group_next (p, G, seg, -1, &k)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      ind_printf (depth, out, "const %s tmp%d = ", ind_ctype (n->out_dtype), ni);
      node_value (p, G, kp, n, out);
      fx_buf_puts (out, ";\n");
      store_stmt (p, G, kp, ni, depth, out);
    }
}

static void
sanitized_comment (const char *s, fx_buf *out)
{
  for (; *s; s++)
    {
      char c = *s;
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
      fx_buf_putc (out, ok ? c : '?');
    }
}

/* Symbolic kernels: a loop parallel above some sizes and serial below is one source with the test at run time. */
static void
par_if (const ind_program *p, int64_t work, fx_buf *out)
{
  if (p->symbolic)
    fx_buf_printf (out, " if(%lldLL >= %d)", (long long) work, PAR_THRESHOLD);
}

/* ---------------------------------------------------------------- transposed pointwise */

#define IND_TRANSPOSE_TILE 16

/* A pointwise kernel over >= 2 dims that reads some operand along its second-to-last dim contiguously and along the
   last with a stride (x.t() + y): the plain loop takes a new cache line for every element of that operand. Tiled
   T x T over the last two dims, the T lines of a tile's transposed reads are each used T times while in cache, as
   Inductor's tile2d does. */
static bool
transposed_tile (const ind_program *p, const ind_group *G)
{
  if (G->kr != 0 || G->kx < 2 || G->n_segs != 1 || G->xs[G->kx - 1] % IND_TRANSPOSE_TILE != 0
      || G->xs[G->kx - 2] % IND_TRANSPOSE_TILE != 0)
    return false;
  bool transposed = false;
  ind_load_walk w = { 0 };
  while (ind_group_next_load (p, G, &w))
    if (!w.op->indirect)
      transposed |= w.xc[G->kx - 2] == 1 && w.xc[G->kx - 1] != 0 && w.xc[G->kx - 1] != 1;
  return transposed;
}

static void
gen_transposed (const ind_program *p, const ind_group *G, const kernel_params *kp, bool par, fx_buf *out)
{
  int a = G->kx - 2, b = G->kx - 1, T = IND_TRANSPOSE_TILE;
  if (par)
    {
      ind_printf (1, out, "#pragma omp parallel for collapse(%d) schedule(static)", G->kx);
      par_if (p, ind_numel (G->xs, G->kx), out);
      if (p->threads > 0)
        fx_buf_printf (out, " num_threads(%d)", p->threads);
      fx_buf_putc (out, '\n');
    }
  int depth = 1;
  for (int d = 0; d < a; d++)
    ind_printf (depth++, out, "for (int64_t x%d = 0; x%d < %lldLL; x%d++)\n", d, d, (long long) G->xs[d], d);
  ind_printf (depth++, out, "for (int64_t xt%d = 0; xt%d < %lldLL; xt%d++)\n", a, a, (long long) (G->xs[a] / T), a);
  ind_printf (depth, out, "for (int64_t xt%d = 0; xt%d < %lldLL; xt%d++)\n", b, b, (long long) (G->xs[b] / T), b);
  ind_printf (depth++, out, "{\n");
  ind_printf (depth, out, "for (int64_t xl = 0; xl < %d; xl++)\n", T);
  ind_printf (depth++, out, "{\n");
  ind_printf (depth, out, "const int64_t x%d = xt%d * %d + xl;\n", a, a, T);
  ind_printf (depth, out, "#pragma omp simd");
  if (p->simdlen > 0)
    fx_buf_printf (out, " simdlen(%d)", p->simdlen);
  fx_buf_putc (out, '\n');
  ind_printf (depth, out, "for (int64_t xm = 0; xm < %d; xm++)\n", T);
  ind_printf (depth++, out, "{\n");
  ind_printf (depth, out, "const int64_t x%d = xt%d * %d + xm;\n", b, b, T);
  gen_segment_x (p, G, kp, 0, depth, out);
  for (depth--; depth >= a + 2; depth--)
    ind_printf (depth, out, "}\n");
  fx_buf_puts (out, "}\n\n");
}

/* ---------------------------------------------------------------- outer (column) reductions */

/* The lane width of an outer reduction's tile of the last kept dimension (0: not one). An outer reduction reduces
   one dimension whose loads stride over rows while the last kept dimension is contiguous (x.sum(0), var_mean over
   dim 0, an embedding bag's sum over its bag): the plain r-loop walks memory a row apart per step. Tiled, the
   innermost loop runs over T contiguous kept elements with T accumulators each, vectorized, and the reduced
   dimension is walked row by row outside it, as Inductor's CPU code generator does for outer reductions. */
static int
outer_reduction_tile (const ind_program *p, const ind_group *G)
{
  if (G->kr != 1 || G->kx < 1 || G->n_segs != 1 || G->seg_kind[0] == IND_SEG_X)
    return 0;
  bool strided = false;
  for (int k = 0; k < G->n_nodes; k++)
    {
      const ind_node *n = &p->nodes[G->nodes[k]];
      if (n->kind == IND_NODE_REDUCTION && n->red != IND_RED_SUM && n->red != IND_RED_MEAN
          && n->red != IND_RED_WELFORD_VAR)
        return 0;
      if (n->kind != IND_NODE_REDUCTION && n->kind != IND_NODE_POINTWISE)
        return 0;
      if (ind_ctype (n->compute_dtype) == NULL || n->compute_dtype == FX_DTYPE_BOOL)
        return 0;
      for (int o = 0; o < n->n_opnd; o++)
        {
          const ind_operand *op = &n->opnd[o];
          if (op->kind != IND_OPND_LOAD || (op->local >= 0 && !op->recompute))
            continue;   /* a register of this iteration: no memory walk */
          int64_t xc[IND_MAXD], rc[IND_MAXD], ixc[IND_MAXD], irc[IND_MAXD];
          ind_split_coef (n, op->coef, G->kx, xc, rc);
          bool is_index = false;
          for (int q = 0; q < n->n_opnd; q++)
            is_index |= n->opnd[q].indirect && n->opnd[q].idx_opnd == o;
          if (is_index)
            {
              if (xc[G->kx - 1] != 0)
                return 0;   /* an index that changes across the tile: a gather per lane */
              continue;
            }
          if (rc[0] == 1 || (xc[G->kx - 1] != 1 && xc[G->kx - 1] != 0))
            return 0;   /* an inner reduction, or a kept dimension that is not contiguous */
          /* an indirect load walks rows through its index: an embedding bag's table rows, one per r step */
          bool r_varies = rc[0] != 0;
          if (op->indirect)
            {
              ind_split_coef (n, n->opnd[op->idx_opnd].coef, G->kx, ixc, irc);
              r_varies |= irc[0] != 0;
            }
          strided |= r_varies && xc[G->kx - 1] == 1;
        }
    }
  if (!strided)
    return 0;
  int64_t xs = G->xs[G->kx - 1], outer = 1;
  for (int d = 0; d < G->kx - 1; d++)
    outer *= G->xs[d];
  /* wide tiles stream whole cache lines per row; narrow ones leave enough tiles for every thread */
  static const int widths[] = { 64, 32, 16, 8 };
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
    if (xs % widths[i] == 0 && (outer * (xs / widths[i]) >= 32 || widths[i] == 8))
      return widths[i];
  return 0;
}

static void
gen_outer_reduction (const ind_program *p, const ind_group *G, const kernel_params *kp, int tile, bool par,
                     fx_buf *out)
{
  int last = G->kx - 1;
  int64_t rn = G->rs[0];
  int depth = 1;
  ind_indent (depth, out);
  if (par)
    {
      fx_buf_printf (out, "#pragma omp parallel for collapse(%d) schedule(static)", G->kx);
      par_if (p, ind_numel (G->xs, G->kx) * rn, out);
      if (p->threads > 0)
        fx_buf_printf (out, " num_threads(%d)", p->threads);
      fx_buf_putc (out, '\n');
    }
  for (int d = 0; d < last; d++)
    {
      ind_indent (depth + d, out);
      fx_buf_printf (out, "for (int64_t x%d = 0; x%d < %lldLL; x%d++)\n", d, d, (long long) G->xs[d], d);
    }
  depth += last;
  ind_indent (depth, out);
  fx_buf_printf (out, "for (int64_t xt = 0; xt < %lldLL; xt++)\n", (long long) (G->xs[last] / tile));
  ind_indent (depth, out);
  fx_buf_puts (out, "{\n");
  depth++;
  ind_indent (depth, out);
  fx_buf_printf (out, "const int64_t xb = xt * %d;\n", tile);
  for (int k = 0, ni; (ni = ind_group_next (p, G, 0, IND_NODE_REDUCTION, &k)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      const char *ct = ind_ctype (n->compute_dtype);
      ind_indent (depth, out);
      if (n->red == IND_RED_WELFORD_VAR)
        fx_buf_printf (out, "%s acc%d_wm[%d] = { 0 }, acc%d_wm2[%d] = { 0 };\n", ct, ni, tile, ni, tile);
      else
        fx_buf_printf (out, "%s acc%d_l[%d] = { 0 };\n", ct, ni, tile);
    }
  ind_indent (depth, out);
  fx_buf_printf (out, "for (int64_t r0 = 0; r0 < %lldLL; r0++)\n", (long long) rn);
  ind_indent (depth, out);
  fx_buf_puts (out, "{\n");
  for (int k = 0, ni; (ni = ind_group_next_red (p, G, 0, IND_RED_WELFORD_VAR, &k)) >= 0;)
    {
      /* every lane has seen r0 + 1 values: one running-mean weight for all */
      const char *ct = ind_ctype (p->nodes[ni].compute_dtype);
      ind_indent (depth + 1, out);
      fx_buf_printf (out, "const %s acc%d_inv = (%s) 1 / (%s) (r0 + 1);\n", ct, ni, ct, ct);
    }
  ind_indent (depth + 1, out);
  fx_buf_puts (out, "#pragma omp simd\n");
  ind_indent (depth + 1, out);
  fx_buf_printf (out, "for (int64_t rl = 0; rl < %d; rl++)\n", tile);
  ind_indent (depth + 1, out);
  fx_buf_puts (out, "{\n");
  ind_indent (depth + 2, out);
  fx_buf_printf (out, "const int64_t x%d = xb + rl;\n", last);
  emit_r_body (p, G, kp, 0, depth + 2, true, out);
  ind_indent (depth + 1, out);
  fx_buf_puts (out, "}\n");
  ind_indent (depth, out);
  fx_buf_puts (out, "}\n");
  /* each lane's accumulator is one kept element's result */
  ind_indent (depth, out);
  fx_buf_printf (out, "for (int64_t rl = 0; rl < %d; rl++)\n", tile);
  ind_indent (depth, out);
  fx_buf_puts (out, "{\n");
  ind_indent (depth + 1, out);
  fx_buf_printf (out, "const int64_t x%d = xb + rl;\n", last);
  for (int k = 0, ni; (ni = ind_group_next (p, G, 0, IND_NODE_REDUCTION, &k)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      const char *ct = ind_ctype (n->compute_dtype);
      ind_indent (depth + 1, out);
      if (n->red == IND_RED_WELFORD_VAR)
        fx_buf_printf (out, "const %s acc%d_m2 = acc%d_wm2[rl];\n", ct, ni, ni);
      else
        fx_buf_printf (out, "const %s acc%d = acc%d_l[rl];\n", ct, ni, ni);
    }
  emit_r_finals (p, G, kp, 0, depth + 1, rn, out);
  ind_indent (depth, out);
  fx_buf_puts (out, "}\n");
  depth--;
  ind_indent (depth, out);
  fx_buf_puts (out, "}\n}\n\n");
}

static void
gen_kernel (const ind_program *p, const ind_group *G, fx_buf *out)
{
  kernel_params kp;
  ind_kernel_params_collect (p, G, &kp);
  fx_buf_puts (out, "/* Topologically Sorted Source Nodes: [");
  for (int k = 0; k < G->n_nodes; k++)
    {
      const ind_node *n = &p->nodes[G->nodes[k]];
      for (size_t o = 0; o < n->n_origins; o++)
        {
          fx_buf_puts (out, k || o ? ", " : "");
          sanitized_comment (n->origins[o], out);
        }
    }
  fx_buf_printf (out, "] */\nvoid %s (", G->name);
  for (int k = 0; k < kp.n_params; k++)
    {
      int b = kp.params[k];
      /* buffers written in place over another parameter alias it: no restrict on either */
      bool aliased = false;
      for (int j = 0; j < kp.n_params; j++)
        aliased |= j != k && p->bufs[b].slot >= 0 && p->bufs[kp.params[j]].slot == p->bufs[b].slot;
      fx_buf_printf (out, "%s%s%s *%s", k ? ", " : "", kp.buf_written[b] ? "" : "const ",
                     param_ctype (p->bufs[b].dtype), aliased ? "" : "restrict ");
      ind_param_name (&kp, b, out);
    }
  if (kp.n_params == 0)
    fx_buf_puts (out, "void");
  fx_buf_puts (out, ")\n{\n");
  int64_t xn = ind_numel (G->xs, G->kx), rn = ind_numel (G->rs, G->kr);
  /* a few long rows are split inside (split_rows): their row loop stays serial, so regions do not nest */
  bool par = (xn * rn >= PAR_THRESHOLD || p->symbolic) && xn > 1 && !split_rows (p, G);
  int depth = 1;
  bool pointwise_only = G->kr == 0;
  int outer = pointwise_only ? G->kx - 1 : G->kx;
  if (pointwise_only && G->kx == 1)
    {
      /* one flat loop: parallel and vectorized together */
      ind_indent (depth, out);
      if (par)
        {
          fx_buf_puts (out, "#pragma omp parallel for simd schedule(static)");
          par_if (p, xn * rn, out);
          if (p->threads > 0)
            fx_buf_printf (out, " num_threads(%d)", p->threads);
        }
      else
        fx_buf_puts (out, "#pragma omp simd");
      if (p->simdlen > 0)
        fx_buf_printf (out, " simdlen(%d)", p->simdlen);
      fx_buf_printf (out, "\n  for (int64_t x0 = 0; x0 < %lldLL; x0++)\n", (long long) G->xs[0]);
      fx_buf_puts (out, "    {\n");
      gen_segment_x (p, G, &kp, 0, 3, out);
      fx_buf_puts (out, "    }\n}\n\n");
      ind_kernel_params_free (&kp);
      return;
    }
  if (pointwise_only && transposed_tile (p, G))
    {
      gen_transposed (p, G, &kp, par, out);
      ind_kernel_params_free (&kp);
      return;
    }
  int tile = pointwise_only ? 0 : outer_reduction_tile (p, G);
  if (tile > 0)
    {
      gen_outer_reduction (p, G, &kp, tile, par, out);
      ind_kernel_params_free (&kp);
      return;
    }
  if (outer > 0)
    {
      if (par)
        {
          ind_printf (depth, out, "#pragma omp parallel for collapse(%d) schedule(static)", outer);
          par_if (p, xn * rn, out);
          if (p->threads > 0)
            fx_buf_printf (out, " num_threads(%d)", p->threads);
          fx_buf_putc (out, '\n');
        }
      for (int d = 0; d < outer; d++)
        {
          ind_printf (depth + d, out, "for (int64_t x%d = 0; x%d < %lldLL; x%d++)\n", d, d, (long long) G->xs[d], d);
        }
      depth += outer;
    }
  ind_printf (depth - 1, out, "{\n");
  if (pointwise_only && G->kx >= 2)
    {
      int d = G->kx - 1;
      ind_printf (depth, out, "#pragma omp simd");
      if (p->simdlen > 0)
        fx_buf_printf (out, " simdlen(%d)", p->simdlen);
      fx_buf_putc (out, '\n');
      ind_printf (depth, out, "for (int64_t x%d = 0; x%d < %lldLL; x%d++)\n", d, d, (long long) G->xs[d], d);
      ind_printf (depth, out, "{\n");
      gen_segment_x (p, G, &kp, 0, depth + 1, out);
      ind_printf (depth, out, "}\n");
    }
  else
    for (int s = 0; s < G->n_segs; s++)
      {
        if (G->seg_kind[s] == IND_SEG_X)
          gen_segment_x (p, G, &kp, s, depth, out);
        else
          gen_segment_r (p, G, &kp, s, depth, out);
      }
  ind_printf (depth - 1, out, "}\n}\n\n");
  ind_kernel_params_free (&kp);
}

/* The kernels, each function once: a kernel whose code is the same as an earlier one's but for its name is that
   kernel launched again (Inductor's wrapper does the same with src_to_kernel), so a model's repeated layers are
   compiled once. The key is a kernel's text after its name (the source-nodes comment before it differs), with its
   local names (tmpN, accN: numbered by node) numbered again in order of appearance. */
typedef struct
{
  uint64_t hash;
  int group;                /* -1: empty */
  size_t key_begin, key_len; /* the key's span in keys */
} kernel_slot;


static bool
ident_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* text with "tmp<N>" / "acc<N>" renumbered by first appearance (local[] maps N; touched lists what to reset) */
static void
canonical_key (const char *text, size_t len, int *local, int n_local, int *touched, fx_buf *key)
{
  int next = 0, n_touched = 0;
  size_t i = 0;
  key->len = 0;
  while (i < len)
    {
      bool start = i == 0 || !ident_char (text[i - 1]);
      size_t pre = start && i + 3 < len && (memcmp (text + i, "tmp", 3) == 0 || memcmp (text + i, "acc", 3) == 0)
                   && text[i + 3] >= '0' && text[i + 3] <= '9' ? 3 : 0;
      if (!pre)
        {
          fx_buf_append (key, text + i, 1);
          i++;
          continue;
        }
      fx_buf_append (key, text + i, 3);
      i += 3;
      long v = 0;
      while (i < len && text[i] >= '0' && text[i] <= '9')
        v = v * 10 + (text[i++] - '0');
      int id = (int) v;
      if (v >= 0 && v < n_local)
        {
          if (local[v] < 0)
            {
              local[v] = next++;
              touched[n_touched++] = (int) v;
            }
          id = local[v];
        }
      else
        id = -1 - (int) (v % 1000000);  /* not a node index: kept apart from the renumbered ones */
      fx_buf_printf (key, "%d", id);
    }
  for (int t = 0; t < n_touched; t++)
    local[touched[t]] = -1;
}

static void
emit_kernels (ind_program *p, fx_buf *out)
{
  size_t cap = 16;
  while (cap < (size_t) p->n_groups * 2)
    cap *= 2;
  kernel_slot *slots = malloc (cap * sizeof *slots);
  int *local = malloc ((size_t) (p->n_nodes > 0 ? p->n_nodes : 1) * 2 * sizeof *local);
  if (slots == NULL || local == NULL)
    cap = 0;  /* no table: every kernel is written, none shared */
  for (size_t i = 0; i < cap; i++)
    slots[i].group = -1;
  for (int i = 0; cap && i < p->n_nodes; i++)
    local[i] = -1;
  fx_buf text, key, keys;
  fx_buf_init (&text);
  fx_buf_init (&key);
  fx_buf_init (&keys);
  for (int g = 0; g < p->n_groups; g++)
    {
      ind_group *G = &p->groups[g];
      if (G->is_extern)
        continue;
      text.len = 0;
      gen_kernel (p, G, &text);
      /* the declaration line "void NAME (" follows the comment: the key starts after the name */
      const char *decl = cap ? strstr (text.data, "*/\nvoid ") : NULL;
      size_t i = 0;
      uint64_t h = 0;
      if (decl != NULL)
        {
          size_t key_at = (size_t) (decl - text.data) + 8 + strlen (G->name);
          canonical_key (text.data + key_at, text.len - key_at, local, p->n_nodes, local + p->n_nodes, &key);
          h = ind_fnv1a (IND_FNV_OFFSET, key.data, key.len);
          for (i = h & (cap - 1); slots[i].group >= 0; i = (i + 1) & (cap - 1))
            if (slots[i].hash == h && slots[i].key_len == key.len
                && memcmp (keys.data + slots[i].key_begin, key.data, key.len) == 0)
              break;
          if (slots[i].group >= 0)
            {
              const ind_group *C = &p->groups[slots[i].group];
              G->name = C->name;
              G->src_begin = C->src_begin;
              G->src_end = C->src_end;
              continue;
            }
          slots[i].hash = h;
          slots[i].group = g;
          slots[i].key_begin = keys.len;
          slots[i].key_len = key.len;
          fx_buf_append (&keys, key.data, key.len);
        }
      /* exp inlined where the kernel calls no sin, cos or tan (see fx_expf_body) */
      bool inline_exp = p->use_mvec && strstr (text.data, "exp(") && !strstr (text.data, "sin(")
                        && !strstr (text.data, "cos(") && !strstr (text.data, "tan(") && !strstr (text.data, "sinh(")
                        && !strstr (text.data, "cosh(");
      if (inline_exp)
        fx_buf_puts (out, "#undef FX_EXPF\n#define FX_EXPF fx_expf_body\n");
      G->src_begin = out->len;
      fx_buf_append (out, text.data, text.len);
      G->src_end = out->len;
      if (inline_exp)
        fx_buf_puts (out, "#undef FX_EXPF\n#define FX_EXPF fx_expf\n");
    }
  fx_buf_free (&text);
  fx_buf_free (&key);
  fx_buf_free (&keys);
  free (slots);
  free (local);
}

static void gen_calls (const ind_program *p, bool timed, fx_buf *out);

/* More kernel launches than this: the wrapper is built without optimization (see ind_codegen). */
#define IND_BIG_WRAPPER 256

void
ind_codegen (ind_program *p, fx_buf *out)
{
  fx_buf_puts (out, "/* Generated by the FX Workbench inductor backend (C, CPU). */\n"
                    "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <stddef.h>\n#include <time.h>\n\n");
  if (p->use_mvec)
    {
      /* glibc's libmvec vector variants (<= 4 ulp, IEEE special values kept): what math.h declares under
         -ffast-math, declared here without relaxing anything else */
      static const char *const fns[] = { "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                                         "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "erf", "erfc" };
      for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        fx_buf_printf (out, "extern float %sf (float) __attribute__ ((__simd__ (\"notinbranch\")));\n"
                            "extern double %s (double) __attribute__ ((__simd__ (\"notinbranch\")));\n", fns[i], fns[i]);
      fx_buf_puts (out, "extern float powf (float, float) __attribute__ ((__simd__ (\"notinbranch\")));\n"
                        "extern double pow (double, double) __attribute__ ((__simd__ (\"notinbranch\")));\n\n");
    }
  fx_buf_puts (out, "#include <tgmath.h>\n\n");
  /* where / masked_fill: both sides evaluated first, then a select, so that gcc vectorizes the loop (a load
     inside one arm of ?: is a conditional load, and the loop stays scalar) */
  fx_buf_puts (out, "#define IND_SEL(c, a, b) \\\n"
                    "  ({ __typeof__ (a) ind_sel_a = (a); __typeof__ (b) ind_sel_b = (b); (c) ? ind_sel_a : ind_sel_b; })\n\n");
  if (p->use_mvec)
    /* expf inline (Cephes: 2^n p(r), r = x - n ln2, |rel err| < 1e-7 over the whole range, denormals exact):
       libmvec's expf leaves its vector path for x < -87.3 (a scalar call per lane, 10-25x slower), and softmax over
       a wide range (attention scores, rows masked with -inf) lives there; a clamped call is undone by gcc's
       range reasoning. 2^n is two factors so that denormal results come out right: at -104 the product rounds
       to 0, at 88.8 it overflows to inf, and a NaN runs through as NaN. Below -103.9721 (where exp rounds to 0)
       the second factor is 0: the product is 0 without passing through a denormal, whose multiply takes a
       microcode assist (~100 cycles) on x86; attention's softmax, with scores far below the row maximum, made one
       for nearly every element and ran 1.7x slower than a softmax of randn. Kernels inline it (fx_expf_body: no
       call per vector, no accumulators spilled around it; logsumexp over 8192 x 4096 took 12.3 ms on 2 cores
       against 14.5 ms through the call); a kernel that also calls sin, cos or tan calls its SIMD clone (declare
       simd, fx_expf) instead: there gcc does not if-convert the inlined clamp and the loop stays scalar. Its
       polynomial is evaluated with fused multiply-adds where the target has them (-ffp-contract=off keeps gcc from
       fusing on its own): on 16 cores, where the exp pass competes with the row stream, logsumexp over 8192 x 4096
       went from 3.0 to 2.65 ms. */
    fx_buf_puts (out, "#ifdef __FMA__\n#define FX_FMAF(a, b, c) __builtin_fmaf (a, b, c)\n#else\n"
                      "#define FX_FMAF(a, b, c) ((a) * (b) + (c))\n#endif\n"
                      "static inline __attribute__ ((always_inline)) float\n"
                      "fx_expf_body (float x)\n"
                      "{\n"
                      "  const float xc = x < -104.0f ? -104.0f : (x > 88.8f ? 88.8f : x);\n"
                      "  const float n = __builtin_floorf (xc * 1.44269504088896341f + 0.5f);\n"
                      "  const float r = FX_FMAF (n, 2.12194440e-4f, FX_FMAF (n, -0.693359375f, xc));\n"
                      "  float y = 1.9875691500e-4f;\n"
                      "  y = FX_FMAF (y, r, 1.3981999507e-3f);\n"
                      "  y = FX_FMAF (y, r, 8.3334519073e-3f);\n"
                      "  y = FX_FMAF (y, r, 4.1665795894e-2f);\n"
                      "  y = FX_FMAF (y, r, 1.6666665459e-1f);\n"
                      "  y = FX_FMAF (y, r, 5.0000001201e-1f);\n"
                      "  y = FX_FMAF (y, r * r, r + 1.0f);\n"
                      "  const int ni = (int) n, n1 = ni >> 1;\n"
                      "  union { int i; float f; } s1, s2;\n"
                      "  s1.i = (n1 + 127) << 23;\n"
                      "  s2.i = x < -103.9721f ? 0 : (ni - n1 + 127) << 23;\n"
                      "  return y * s1.f * s2.f;\n"
                      "}\n\n"
                      "#pragma omp declare simd notinbranch\n"
                      "static __attribute__ ((noinline)) float\n"
                      "fx_expf (float x)\n"
                      "{\n"
                      "  return fx_expf_body (x);\n"
                      "}\n"
                      "#define FX_EXPF fx_expf\n"
                      "#undef exp\n"
                      "#define exp(x) _Generic ((x), float: FX_EXPF, default: exp) (x)\n\n");
  if (p->relu_bug && strcmp (p->relu_bug, "runtime_error") == 0)
    /* the injected run-time error: kernels record it, the runner asks fx_inductor_error () after each call */
    fx_buf_puts (out, "static volatile int fx_ind_error_set;\nstatic const char *volatile fx_ind_error_msg;\n\n"
                      "static int\nfx_inductor_raise (const char *msg)\n{\n"
                      "  if (!fx_ind_error_set)\n    {\n      fx_ind_error_msg = msg;\n      fx_ind_error_set = 1;\n    }\n"
                      "  return 0;\n}\n\n"
                      "const char *\nfx_inductor_error (void)\n{\n"
                      "  const char *m = fx_ind_error_set ? fx_ind_error_msg : 0;\n  fx_ind_error_set = 0;\n  return m;\n}\n\n");
  bool kernel_checks = false;
  for (int i = 0; i < p->n_index_checks; i++)
    kernel_checks |= p->index_checks[i].view < 0;
  if (kernel_checks)
    /* a computed index out of [0, n): the first bad one is kept for the runner (fx_inductor_index_error) and the
       load reads element 0 of the row instead, inside the buffer */
    fx_buf_puts (out, "static int64_t fx_ind_bad_check = -1, fx_ind_bad_value;\n\n"
                      "static inline int64_t\nfx_ind_index (int64_t i, int64_t n, int check)\n{\n"
                      "  if (__builtin_expect ((uint64_t) i < (uint64_t) n, 1))\n    return i;\n"
                      "  int64_t none = -1;\n"
                      "  if (__atomic_compare_exchange_n (&fx_ind_bad_check, &none, (int64_t) check, 0, __ATOMIC_RELAXED,\n"
                      "                                   __ATOMIC_RELAXED))\n"
                      "    __atomic_store_n (&fx_ind_bad_value, i, __ATOMIC_RELAXED);\n"
                      "  return 0;\n}\n\n"
                      "int\nfx_inductor_index_error (int64_t *value)\n{\n"
                      "  int64_t c = __atomic_exchange_n (&fx_ind_bad_check, -1, __ATOMIC_RELAXED);\n"
                      "  *value = __atomic_load_n (&fx_ind_bad_value, __ATOMIC_RELAXED);\n"
                      "  return (int) c;\n}\n\n");
  emit_kernels (p, out);
  fx_buf_puts (out, "typedef void (*fx_ind_extern_fn) (void *ctx, int node);\n\n"
                    "static double\nfx_now_ms (void)\n{\n  struct timespec ts;\n"
                    "  clock_gettime (CLOCK_MONOTONIC, &ts);\n  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;\n}\n\n");
  for (int timed = 0; timed < 2; timed++)
    {
      /* The wrapper is a list of calls: with thousands of them (a 100k-node graph), gcc's -O2 inliner spends
         seconds on it for nothing (3.2 s of a 3.9 s build); unoptimized, each call still costs nanoseconds
         against a kernel's work. Small graphs keep it optimized. */
      fx_buf_printf (out, "void%s\nfx_inductor_call%s (void **bufs, fx_ind_extern_fn ext, void *ctx%s)\n{\n",
                     p->n_groups > IND_BIG_WRAPPER ? " __attribute__ ((optimize (\"O0\")))" : "",
                     timed ? "_timed" : "", timed ? ", double *ms" : "");
      if (timed)
        fx_buf_puts (out, "  double t;\n");
      gen_calls (p, timed, out);
      fx_buf_puts (out, "}\n\n");
    }
}

/* The wrapper body: kernels and extern calls in order (timed: each call's wall time added to ms[group]). */
static void
gen_calls (const ind_program *p, bool timed, fx_buf *out)
{
  for (int g = 0; g < p->n_groups; g++)
    {
      const ind_group *G = &p->groups[g];
      if (timed)
        fx_buf_puts (out, "  t = fx_now_ms ();\n");
      if (G->is_extern)
        {
          fx_buf_printf (out, "  ext (ctx, %d);  /* %s */\n", G->nodes[0], G->name);
          if (timed)
            fx_buf_printf (out, "  ms[%d] += fx_now_ms () - t;\n", g);
          continue;
        }
      kernel_params kp;
      ind_kernel_params_collect (p, G, &kp);
      fx_buf_printf (out, "  %s (", G->name);
      for (int k = 0; k < kp.n_params; k++)
        {
          int b = kp.params[k];
          fx_buf_printf (out, "%s(%s%s *) bufs[%d]", k ? ", " : "", kp.buf_written[b] ? "" : "const ",
                         param_ctype (p->bufs[b].dtype), b);
        }
      fx_buf_puts (out, ");\n");
      if (timed)
        fx_buf_printf (out, "  ms[%d] += fx_now_ms () - t;\n", g);
      ind_kernel_params_free (&kp);
    }
}
