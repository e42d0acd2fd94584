/* fx-inductor-cuda.c: the CUDA generator: one __global__ kernel per fused group of the scheduled loop IR (the same
   groups, segments and register reuse the C generator uses): pointwise kernels with float4 loads/stores where the
   innermost dimension is contiguous and aligned; reductions by shape: persistent (the row in registers, read once),
   looped, and split (a partial kernel plus a combining one) for few long rows; warp-shuffle and block reductions,
   Welford for variance, 32-bit index math when every index fits. Every identifier in the output is generated
   (in_ptrN, tmpN, kernel names from the op table): no text from the graph reaches the source. */
#include "fx-inductor-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_MAX_ITERS 8          /* a persistent row: at most this many loads of vec elements per thread */
#define PER_MAX_RNUMEL 8192
/* Split reductions as Inductor chooses them (ir.py num_splits / inner_reduction_splits) for an H100: fewer rows than
   two per SM, each longer than 8192; the split size from the elements per thread the whole device would get */
#define SPLIT_NUM_SM 132
#define SPLIT_THREADS 256
#define SPLIT_MIN_R 8192

/* ---------------------------------------------------------------- shapes and choices */

static int
pow2_at_least (int64_t v)
{
  int p = 1;
  while (p < v && p < (1 << 20))
    p <<= 1;
  return p;
}

static bool
group_has_red (const ind_program *p, const ind_group *G)
{
  for (int k = 0; k < G->n_nodes; k++)
    if (p->nodes[G->nodes[k]].kind == IND_NODE_REDUCTION)
      return true;
  return false;
}

/* A node of G reads from memory a buffer that an earlier node of G wrote (rows shared between threads: the kernel
   needs a barrier between segments, and such loads are never hoisted). */
static bool
reads_own_output (const ind_program *p, const ind_group *G, const ind_operand *op)
{
  int pr = p->bufs[op->buf].producer;
  return op->kind == IND_OPND_LOAD && op->local < 0 && pr >= 0 && p->nodes[pr].group == (int) (G - p->groups);
}

static bool
group_needs_sync (const ind_program *p, const ind_group *G)
{
  for (int k = 0; k < G->n_nodes; k++)
    {
      const ind_node *n = &p->nodes[G->nodes[k]];
      for (int o = 0; o < n->n_opnd; o++)
        if (reads_own_output (p, G, &n->opnd[o]))
          return true;
    }
  return false;
}

/* float4 over the innermost kernel variable (x for pointwise kernels, r for reductions) is possible when every
   memory access of the vectorized nodes moves by 0 or 1 element along it, float accesses by 1 start on a 16-byte
   boundary, and the innermost size is a multiple of 4. */
static bool
vec_ok (const ind_program *p, const ind_group *G)
{
  bool red = G->kr > 0;
  int inner = red ? G->kr - 1 : G->kx - 1;
  if (inner < 0)
    return false;
  int64_t inner_size = red ? G->rs[inner] : G->xs[inner];
  if (inner_size % 4 != 0)
    return false;
  for (int k = 0; k < G->n_nodes; k++)
    {
      const ind_node *n = &p->nodes[G->nodes[k]];
      if (red && n->kind == IND_NODE_POINTWISE && n->xlevel)
        continue;   /* x-level nodes do not iterate r */
      int64_t xc[IND_MAXD], rc[IND_MAXD];
      for (int o = 0; o < n->n_opnd; o++)
        {
          const ind_operand *op = &n->opnd[o];
          if (op->kind != IND_OPND_LOAD || op->local >= 0)
            continue;
          ind_split_coef (n, op->coef, G->kx, xc, rc);
          int64_t c = red ? rc[inner] : xc[inner];
          if (c == 0)
            continue;
          if (c != 1 || p->bufs[op->buf].dtype != FX_DTYPE_F32 || op->offset % 4 != 0)
            return false;
          for (int d = 0; d < G->kx; d++)
            if (xc[d] % 4 != 0 && !(!red && d == inner))
              return false;
          for (int d = 0; d < G->kr; d++)
            if (rc[d] % 4 != 0 && d != inner)
              return false;
        }
      if (n->kind == IND_NODE_POINTWISE && p->bufs[n->out_buf].stored
          && (!red || !n->xlevel) && p->bufs[n->out_buf].dtype != FX_DTYPE_F32)
        return false;
    }
  return true;
}

/* Split reductions: the first segment holds reductions (the first step); each reduction step is a kernel over chunks
   of the row writing partials, the kernel after it combines them (softmax: partial maxima, then the sums of exp with
   the combined maximum, then the normalization over the chunks), the last one runs the epilogue (x-level values,
   pointwise r loops) over the same chunks (gen_split_kernel). */
static bool
split_ok (const ind_program *p, const ind_group *G)
{
  if (G->kr == 0 || G->n_segs < 1 || G->seg_kind[0] != IND_SEG_R)
    return false;
  if (group_needs_sync (p, G) || !group_has_red (p, G))
    return false;
  int steps = 0;
  for (int s = 0; s < G->n_segs; s++)
    for (int k = 0; k < G->n_nodes; k++)
      {
        const ind_node *n = &p->nodes[G->nodes[k]];
        if (n->kind == IND_NODE_REDUCTION && n->segment == s)
          {
            if (steps == 0 && s != 0)
              return false;   /* the first kernel reduces the first segment */
            steps++;
            break;
          }
      }
  return steps >= 1 && steps <= IND_CUDA_MAX_MID + 1;
}

/* Inductor's inner_reduction_splits for SPLIT_NUM_SM SMs and SPLIT_THREADS threads: parts per row (1: no split). */
static int64_t
inductor_splits (int64_t rn, int64_t xn)
{
  const int64_t min_per_thread = 32, max_per_thread = 512, threads_per_sm = 2048;
  const int64_t min_dev = min_per_thread * SPLIT_NUM_SM * threads_per_sm;
  const int64_t max_dev = max_per_thread * SPLIT_NUM_SM * threads_per_sm;
  if (xn >= 2 * SPLIT_NUM_SM || rn <= SPLIT_MIN_R)
    return 1;
  int64_t split_size, target = max_per_thread;
  if (rn * xn <= min_dev)
    return (rn + min_per_thread * SPLIT_THREADS - 1) / (min_per_thread * SPLIT_THREADS);
  if (rn * xn < max_dev)
    {
      int64_t target_blocks = SPLIT_NUM_SM * threads_per_sm / (2 * SPLIT_THREADS);
      int64_t per_output = (target_blocks + xn - 1) / xn;
      target = (rn + SPLIT_THREADS * per_output - 1) / (SPLIT_THREADS * per_output);
    }
  /* the divisor of rn closest to the target when it is close (even chunks) */
  int64_t closest = 1;
  for (int64_t d = 1; d <= 2 * target + 64 && d <= rn; d++)
    if (rn % d == 0 && llabs (d - target) < llabs (closest - target))
      closest = d;
  int64_t tol = rn * xn < max_dev ? 30 : 50;
  split_size = llabs (closest - target) < tol ? closest : target;
  if (split_size < min_per_thread)
    split_size = min_per_thread;
  return (rn + split_size * SPLIT_THREADS - 1) / (split_size * SPLIT_THREADS);
}

/* An outer reduction (a sum over dim 0 of a row-major matrix): the loads move by 1 along the innermost x and by more
   along r, so threads that own neighbouring rows (columns of the matrix) read neighbouring addresses. */
static bool
outer_reduction (const ind_program *p, const ind_group *G)
{
  if (G->kx == 0 || G->kr == 0)
    return false;
  bool any = false;
  ind_load_walk w = { 0 };
  while (ind_group_next_load (p, G, &w))
    {
      bool uses_r = false;
      for (int d = 0; d < G->kr; d++)
        uses_r |= w.rc[d] != 0;
      if (!uses_r)
        continue;
      if (w.rc[G->kr - 1] == 1 || w.xc[G->kx - 1] != 1)
        return false;
      any = true;
    }
  return any;
}

/* An outer split reduction: a thread per output (neighbouring threads, neighbouring columns: coalesced) over a chunk
   of the reduced rows, blocks of `rows` outputs times `split` chunks; a second kernel combines each output's partials.
   Inductor splits outer reductions the same way (outer_reduction_splits) so that a few thousand columns still fill
   the GPU. */
static bool
outer_split (const ind_cuda_config *c)
{
  return c->kind == IND_CUDA_SPLIT && c->threads == 1;
}

/* Parts for an outer split: about eight blocks of `rows` threads per SM (loads in flight to cover the latency of a
   thread's serial loop), chunks of at least 64 rows. */
static int64_t
outer_splits (int64_t rn, int64_t xn, int rows)
{
  int64_t xblocks = (xn + rows - 1) / rows;
  int64_t want = (SPLIT_NUM_SM * 8 + xblocks - 1) / xblocks;
  if (want > rn / 64)
    want = rn / 64;
  if (want > 256)
    want = 256;
  return want;
}

/* The configurations a kernel can take: [0] is the heuristic choice; the others are what max-autotune also tries.
   force_split: split configurations wherever the group allows one (tests at small shapes). */
static int
cuda_configs (const ind_program *p, int g, bool force_split, ind_cuda_config *out, int max)
{
  const ind_group *G = &p->groups[g];
  int n = 0;
  if (G->is_extern || max <= 0)
    return 0;
  bool v4 = vec_ok (p, G);
  int vec = v4 ? 4 : 1;
#define ADD(K, T, R, V, S)                                                      \
  do                                                                           \
    if (n < max)                                                               \
      {                                                                        \
        ind_cuda_config c_ = { (K), (T), (R), (V), (S) };                   \
        out[n++] = c_;                                                         \
      }                                                                        \
  while (0)
  if (G->kr == 0)
    {
      int64_t xn = ind_numel (G->xs, G->kx);
      int t = xn >= 1 << 20 ? 256 : 128;
      ADD (IND_CUDA_POINTWISE, t, 1, vec, 0);
      static const int alts[] = { 128, 256, 512, 1024 };
      for (size_t i = 0; i < 4; i++)
        if (alts[i] != t)
          ADD (IND_CUDA_POINTWISE, alts[i], 1, vec, 0);
      if (vec == 4)
        ADD (IND_CUDA_POINTWISE, t, 1, 1, 0);
    }
  else
    {
      int64_t xn = ind_numel (G->xs, G->kx), rn = ind_numel (G->rs, G->kr);
      int64_t splits = split_ok (p, G) ? inductor_splits (rn, xn) : 1;
      if (force_split && split_ok (p, G) && splits < 2)
        splits = rn / 2048 < 2 ? 2 : rn / 2048 > 16 ? 16 : rn / 2048;
      bool split = splits > 1;
      bool outer = rn > 16 && outer_reduction (p, G);
      int64_t osplit = outer && split_ok (p, G) ? outer_splits (rn, xn, 128) : 0;
      if (outer && osplit >= 2 && (force_split || (xn >= 2048 && rn >= 2048)))
        {
          /* too few columns to fill the GPU with a thread each: chunks of the rows too, partials combined after */
          ADD (IND_CUDA_SPLIT, 1, 128, 1, (int) osplit);
          ADD (IND_CUDA_SPLIT, 1, 256, 1, (int) outer_splits (rn, xn, 256) >= 2 ? (int) outer_splits (rn, xn, 256)
                                                                                 : 2);
          ADD (IND_CUDA_LOOPED, 1, 256, 1, 0);
        }
      else if (!split && xn >= 2048 && rn > 16 && outer)
        {
          /* a thread per output, each looping down its column: coalesced across the warp */
          ADD (IND_CUDA_LOOPED, 1, 256, 1, 0);
          ADD (IND_CUDA_LOOPED, 1, 128, 1, 0);
          ADD (IND_CUDA_LOOPED, 32, 8, 1, 0);
        }
      else if (split)
        {
          int s = (int) (splits < 65536 ? splits : 65536);
          ADD (IND_CUDA_SPLIT, SPLIT_THREADS, 1, vec, s);
          ADD (IND_CUDA_SPLIT, 512, 1, vec, s);
          ADD (IND_CUDA_SPLIT, SPLIT_THREADS, 1, vec, s > 2 ? s / 2 : s * 2);
          ADD (IND_CUDA_LOOPED, 1024, 1, vec, 0);
        }
      else if (rn <= 16)
        {
          /* rows shorter than a warp: a thread per row, no cross-thread reduction */
          ADD (rn <= (int64_t) PER_MAX_ITERS * vec && !p->opt.cuda_looped ? IND_CUDA_PERSISTENT : IND_CUDA_LOOPED, 1,
               256, vec, 0);
          ADD (IND_CUDA_LOOPED, 1, 128, vec, 0);
          ADD (IND_CUDA_PERSISTENT, 32, 8, vec, 0);
          if (vec == 4)
            ADD (IND_CUDA_LOOPED, 1, 256, 1, 0);
        }
      else if (rn <= PER_MAX_RNUMEL && p->opt.cuda_looped)
        ADD (IND_CUDA_LOOPED, 256, 1, vec, 0);   /* one block shape whatever the length */
      else if (rn <= PER_MAX_RNUMEL)
        {
          /* persistent: each thread holds at most PER_MAX_ITERS / 2 loads of vec elements of each input row */
          int t = pow2_at_least ((rn + vec * 4 - 1) / (vec * 4));
          if (t < 32)
            t = 32;
          if (t > 1024)
            t = 1024;
          ADD (IND_CUDA_PERSISTENT, t, t == 32 ? 8 : 1, vec, 0);
          if (t > 32)
            ADD (IND_CUDA_PERSISTENT, t / 2, t / 2 == 32 ? 8 : 1, vec, 0);
          if (t < 1024)
            ADD (IND_CUDA_PERSISTENT, t * 2, 1, vec, 0);
          ADD (IND_CUDA_LOOPED, t < 256 ? t : 256, t < 256 && t == 32 ? 8 : 1, vec, 0);
          if (vec == 4)
            ADD (IND_CUDA_PERSISTENT, t, t == 32 ? 8 : 1, 1, 0);
          /* drop persistent entries that need too many registers (more than PER_MAX_ITERS loads per thread) */
          int k = 0;
          for (int i = 0; i < n; i++)
            {
              int64_t iters = (rn + (int64_t) out[i].threads * out[i].vec - 1) / ((int64_t) out[i].threads * out[i].vec);
              if (out[i].kind != IND_CUDA_PERSISTENT || iters <= PER_MAX_ITERS)
                out[k++] = out[i];
            }
          n = k;
        }
      else
        {
          int t = xn >= 512 ? 256 : 1024;
          ADD (IND_CUDA_LOOPED, t, 1, vec, 0);
          ADD (IND_CUDA_LOOPED, t == 256 ? 512 : 512, 1, vec, 0);
          ADD (IND_CUDA_LOOPED, t == 256 ? 1024 : 256, 1, vec, 0);
          if (vec == 4)
            ADD (IND_CUDA_LOOPED, t, 1, 1, 0);
        }
    }
#undef ADD
  return n;
}

int
ind_cuda_configs (const ind_program *p, int g, ind_cuda_config *out, int max)
{
  return cuda_configs (p, g, false, out, max);
}

const char *
ind_cuda_kind_name (ind_cuda_kind kind)
{
  switch (kind)
    {
    case IND_CUDA_POINTWISE: return "pointwise";
    case IND_CUDA_PERSISTENT: return "persistent_reduction";
    case IND_CUDA_LOOPED: return "reduction";
    case IND_CUDA_SPLIT: return "split_reduction";
    default: return "?";
    }
}

void
ind_cuda_config_describe (const ind_cuda_config *c, fx_buf *out)
{
  switch (c->kind)
    {
    case IND_CUDA_POINTWISE:
      fx_buf_printf (out, "XBLOCK=%d, num_warps=%d, VEC=%d", c->threads * c->vec, c->threads / 32, c->vec);
      break;
    case IND_CUDA_PERSISTENT:
      fx_buf_printf (out, "persistent, XBLOCK=%d, R0_BLOCK=%d, num_warps=%d, VEC=%d", c->rows, c->threads * c->vec,
                     c->threads * c->rows / 32, c->vec);
      break;
    case IND_CUDA_LOOPED:
      fx_buf_printf (out, "looped, XBLOCK=%d, R0_BLOCK=%d, num_warps=%d, VEC=%d", c->rows, c->threads * c->vec,
                     c->threads * c->rows / 32, c->vec);
      break;
    case IND_CUDA_SPLIT:
      if (c->threads == 1)
        fx_buf_printf (out, "outer split=%d, XBLOCK=%d, R0_BLOCK=1, num_warps=%d", c->split, c->rows, c->rows / 32);
      else
        fx_buf_printf (out, "split=%d, R0_BLOCK=%d, num_warps=%d, VEC=%d", c->split, c->threads * c->vec,
                       c->threads / 32, c->vec);
      break;
    default:
      break;
    }
}

/* ---------------------------------------------------------------- source helpers */

typedef struct kctx
{
  const ind_program *p;
  const ind_group *G;
  const ind_cuda_config *cfg;
  bool i32;
  ind_kernel_params kp;     /* the kernel's buffer parameters (shared with the C generator) */
  /* loads kept in registers: a table of distinct memory loads of the region being generated */
  int n_pre;
  struct pre
  {
    int buf;
    int64_t off;
    int64_t xc[IND_MAXD], rc[IND_MAXD];
    bool hoisted;           /* persistent: loaded once per row before the segments, indexed [i * V + l] */
  } pre[64];
  bool in_lanes;            /* generating inside a lane loop (the inner variable is <base> + l) */
  bool persistent;          /* the row is in registers: variance in two passes over them, no Welford */
  bool part_guard;          /* split epilogue kernel: row-level values are stored by the row's first part only */
  int n_share;
  struct share
  {
    int node, owner;        /* persistent: a sum or mean that is the owner's (a variance's) sum of the same value */
  } share[64];
} kctx;

static void
put_const_int (const kctx *k, int64_t v, fx_buf *out)
{
  fx_buf_printf (out, k->i32 ? "%lld" : "%lldLL", (long long) v);
}

/* An index expression over kernel variables. inner_base: name the innermost vectorized variable by its base (the
   start of its group of 4 lanes) instead of itself. */
static void
put_index (const kctx *k, const int64_t *xc, const int64_t *rc, int64_t off, bool inner_base, fx_buf *out)
{
  const ind_group *G = k->G;
  ind_index_style style = { k->i32, inner_base && G->kr == 0 ? G->kx - 1 : -1, inner_base ? G->kr - 1 : -1 };
  ind_put_index (xc, G->kx, rc, G->kr, off, &style, out);
}

/* The register table entry of a memory load, or -1. */
static int
pre_find (const kctx *k, int buf, int64_t off, const int64_t *xc, const int64_t *rc)
{
  for (int i = 0; i < k->n_pre; i++)
    if (k->pre[i].buf == buf && k->pre[i].off == off && memcmp (k->pre[i].xc, xc, sizeof k->pre[i].xc) == 0
        && memcmp (k->pre[i].rc, rc, sizeof k->pre[i].rc) == 0)
      return i;
  return -1;
}

/* The same reduced value: the same body over the same operands (the mean of a layer norm and its variance's sum). */
static bool
same_value (const ind_node *a, const ind_node *b)
{
  if (a->n_opnd != b->n_opnd || a->compute_dtype != b->compute_dtype || a->ndim != b->ndim
      || strcmp (a->tmpl, b->tmpl) != 0 || memcmp (a->sizes, b->sizes, sizeof (int64_t) * (size_t) a->ndim) != 0)
    return false;
  for (int o = 0; o < a->n_opnd; o++)
    {
      const ind_operand *x = &a->opnd[o], *y = &b->opnd[o];
      if (x->kind != y->kind || x->cast != y->cast)
        return false;
      if (x->kind == IND_OPND_CONST ? x->c != y->c
                                    : (x->buf != y->buf || x->offset != y->offset || x->local != y->local
                                       || x->recompute != y->recompute
                                       || memcmp (x->coef, y->coef, sizeof (int64_t) * (size_t) a->ndim) != 0))
        return false;
    }
  return true;
}

/* Persistent segments: a sum or mean of the value a variance of the segment also sums is not computed twice. */
static void
find_shared_sums (kctx *k, int seg)
{
  const ind_program *p = k->p;
  const ind_group *G = k->G;
  k->n_share = 0;
  if (!k->persistent)
    return;
  for (int i = 0; i < G->n_nodes; i++)
    {
      const ind_node *n = &p->nodes[G->nodes[i]];
      if (n->segment != seg || n->kind != IND_NODE_REDUCTION || (n->red != IND_RED_SUM && n->red != IND_RED_MEAN))
        continue;
      for (int j = 0; j < G->n_nodes && k->n_share < 64; j++)
        {
          const ind_node *w = &p->nodes[G->nodes[j]];
          if (w->segment == seg && w->kind == IND_NODE_REDUCTION && w->red == IND_RED_WELFORD_VAR
              && same_value (n, w))
            {
              k->share[k->n_share].node = G->nodes[i];
              k->share[k->n_share++].owner = G->nodes[j];
              break;
            }
        }
    }
}

static int
share_owner (const kctx *k, int ni)
{
  for (int i = 0; i < k->n_share; i++)
    if (k->share[i].node == ni)
      return k->share[i].owner;
  return -1;
}

static bool
load_moves_inner (const kctx *k, const int64_t *xc, const int64_t *rc)
{
  const ind_group *G = k->G;
  return G->kr > 0 ? rc[G->kr - 1] != 0 : (G->kx > 0 && xc[G->kx - 1] != 0);
}

static bool
load_uses_r (const kctx *k, const int64_t *rc)
{
  for (int d = 0; d < k->G->kr; d++)
    if (rc[d])
      return true;
  return false;
}

/* The load differs between rows (or there is only one row). */
static bool
load_uses_x (const kctx *k, const int64_t *xc)
{
  bool rows = false;
  for (int d = 0; d < k->G->kx; d++)
    if (k->G->xs[d] > 1)
      {
        rows = true;
        if (xc[d])
          return true;
      }
  return !rows;
}

static void
load_text (kctx *k, const ind_node *n, const ind_operand *op, fx_buf *out)
{
  int64_t xc[IND_MAXD], rc[IND_MAXD];
  ind_split_coef (n, op->coef, k->G->kx, xc, rc);
  int e = pre_find (k, op->buf, op->offset, xc, rc);
  if (e >= 0)
    {
      if (k->pre[e].hoisted)
        fx_buf_printf (out, "ld%d[i * %d + l]", e, k->cfg->vec);
      else
        fx_buf_printf (out, "ld%d[l]", e);
      return;
    }
  ind_param_name (&k->kp, op->buf, out);
  fx_buf_putc (out, '[');
  put_index (k, xc, rc, op->offset, false, out);
  fx_buf_putc (out, ']');
}

static void
load_cb (void *ctx, const ind_node *n, const ind_operand *op, const char *index, fx_buf *out)
{
  (void) index;   /* the CUDA target lowers no indirect load (ind_program.indirect_loads) */
  load_text (ctx, n, op, out);
}

/* The body value of node n (operands substituted), as the C generator computes it. */
static void
node_value_in (kctx *k, const ind_node *n, bool recomputing, fx_buf *out)
{
  ind_node_value (k->p, n, recomputing, load_cb, k, out);
}

/* A reduction's input value (its body, operands substituted) in the reduction's compute dtype. */
static void
red_input_in (kctx *k, const ind_node *n, bool recomputing, fx_buf *out)
{
  ind_node tmp = *n;
  tmp.out_dtype = n->compute_dtype;
  node_value_in (k, &tmp, recomputing, out);
}

/* The loads of node n (and of the earlier r-level values its body recomputes, as node_value_in does) into the register
   table: hoisted (persistent rows: the row's own elements, read once per row) or the vectorized loads of one
   iteration (float4 along the inner variable). */
static void
add_node_loads (kctx *k, const ind_node *n, bool recomputing, bool hoisted, int depth)
{
  const ind_program *p = k->p;
  const ind_group *G = k->G;
  for (int o = 0; o < n->n_opnd; o++)
    {
      const ind_operand *op = &n->opnd[o];
      if (op->kind != IND_OPND_LOAD || k->n_pre >= 64)
        continue;
      if (op->local >= 0)
        {
          const ind_node *src = &p->nodes[op->local];
          bool again = op->recompute || (recomputing && src->kind == IND_NODE_POINTWISE && !src->xlevel);
          if (again && !hoisted && depth < 32)
            add_node_loads (k, src, true, hoisted, depth + 1);
          continue;
        }
      if (hoisted && reads_own_output (p, G, op))
        continue;
      int64_t xc[IND_MAXD], rc[IND_MAXD];
      ind_split_coef (n, op->coef, G->kx, xc, rc);
      /* hoisted (persistent rows): the row's own elements; what every row reads (weights) is not held in registers
         for the whole kernel but read where it is used (from L1/L2) */
      if (hoisted ? !load_uses_r (k, rc) || !load_uses_x (k, xc)
                  : !(k->cfg->vec == 4 && load_moves_inner (k, xc, rc)))
        continue;
      if (pre_find (k, op->buf, op->offset, xc, rc) >= 0)
        continue;
      struct pre *e = &k->pre[k->n_pre++];
      e->buf = op->buf;
      e->off = op->offset;
      memcpy (e->xc, xc, sizeof xc);
      memcpy (e->rc, rc, sizeof rc);
      e->hoisted = hoisted;
    }
}

/* The register table of a segment (or, hoisted, of every segment of a persistent row). */
static void
add_pre_loads (kctx *k, int seg, bool all_segments, bool hoisted)
{
  const ind_program *p = k->p;
  const ind_group *G = k->G;
  for (int i = 0; i < G->n_nodes; i++)
    {
      const ind_node *n = &p->nodes[G->nodes[i]];
      if (!all_segments && n->segment != seg)
        continue;
      if (G->kr > 0 && n->xlevel && n->kind != IND_NODE_REDUCTION)
        continue;
      add_node_loads (k, n, false, hoisted, 0);
    }
}

/* ---------------------------------------------------------------- kernel bodies */

static void
store_stmt (kctx *k, int ni, bool guard_tid, int depth, bool lanes_vec, fx_buf *out)
{
  const ind_program *p = k->p;
  const ind_node *n = &p->nodes[ni];
  if (!p->bufs[n->out_buf].stored)
    return;
  if (lanes_vec)
    {
      /* collected per lane, written as one float4 after the lane loop */
      ind_printf (depth, out, "st%d[l] = tmp%d;\n", ni, ni);
      return;
    }
  int64_t c[IND_MAXD], xc[IND_MAXD], rc[IND_MAXD];
  ind_node_store_coef (n, c);
  ind_split_coef (n, c, k->G->kx, xc, rc);
  if (n->kind == IND_NODE_REDUCTION || (k->G->kr > 0 && n->xlevel))
    memset (rc, 0, sizeof rc);
  ind_indent (depth, out);
  if (guard_tid)
    fx_buf_puts (out, k->part_guard ? "if (part == 0 && tid == 0) " : "if (tid == 0) ");
  ind_param_name (&k->kp, n->out_buf, out);
  fx_buf_putc (out, '[');
  put_index (k, xc, rc, 0, false, out);
  fx_buf_printf (out, "] = tmp%d;\n", ni);
}

/* Whether node N of segment SEG writes its own buffer in the vectorized store pass (pointwise, stored, not a value
   the row keeps). */
static bool
is_vec_store (const kctx *k, const ind_node *n, int seg)
{
  return n->segment == seg && n->kind == IND_NODE_POINTWISE && k->p->bufs[n->out_buf].stored
         && !(k->G->kr > 0 && n->xlevel);
}

/* The float4 stores of segment SEG: their lane arrays declared (before the lane loop), or written (after it). */
static void
vec_stores (kctx *k, int seg, bool declare, int depth, fx_buf *out)
{
  const ind_program *p = k->p;
  const ind_group *G = k->G;
  for (int i = 0, ni; (ni = ind_group_next (p, G, seg, IND_NODE_POINTWISE, &i)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      if (!is_vec_store (k, n, seg))
        continue;
      if (declare)
        {
          ind_printf (depth, out, "float st%d[4];\n", ni);
          continue;
        }
      int64_t c[IND_MAXD], xc[IND_MAXD], rc[IND_MAXD];
      ind_node_store_coef (n, c);
      ind_split_coef (n, c, G->kx, xc, rc);
      /* plain stores: cache-streaming hints (__stcs, and __ldcs for the row's loads) made softmax and RMS norm 2%
         slower on the H100 */
      ind_printf (depth, out, "*reinterpret_cast<float4 *> (&");
      ind_param_name (&k->kp, n->out_buf, out);
      fx_buf_putc (out, '[');
      put_index (k, xc, rc, 0, true, out);
      fx_buf_printf (out, "]) = make_float4 (st%d[0], st%d[1], st%d[2], st%d[3]);\n", ni, ni, ni, ni);
    }
}

/* Vectorized per-iteration loads (looped and pointwise kernels): one float4 per entry, or per-lane loads. */
static void
emit_iter_loads (kctx *k, int from, int depth, fx_buf *out)
{
  for (int e = from; e < k->n_pre; e++)
    {
      const struct pre *pe = &k->pre[e];
      ind_printf (depth, out, "const float4 ld%dv = *reinterpret_cast<const float4 *> (&", e);
      ind_param_name (&k->kp, pe->buf, out);
      fx_buf_putc (out, '[');
      put_index (k, pe->xc, pe->rc, pe->off, true, out);
      fx_buf_puts (out, "]);\n");
      ind_printf (depth, out, "const float ld%d[4] = { ld%dv.x, ld%dv.y, ld%dv.z, ld%dv.w };\n", e, e, e, e, e);
    }
}

/* Decomposes a flat index `flat` into kernel variables (prefix x or r), the innermost named <prefix><d>b when vec. */
static void
decompose (kctx *k, const char *flat, char prefix, const int64_t *sizes, int nd, bool inner_base, int depth,
           fx_buf *out)
{
  if (nd == 0)
    return;
  const char *it = k->i32 ? "int" : "long long";
  for (int d = nd - 1; d >= 0; d--)
    {
      ind_printf (depth, out, "const %s %c%d%s = ", it, prefix, d, (inner_base && d == nd - 1) ? "b" : "");
      int64_t inner = 1;
      for (int e = d + 1; e < nd; e++)
        inner *= sizes[e];
      if (inner != 1)
        {
          fx_buf_printf (out, "(%s / ", flat);
          put_const_int (k, inner, out);
          fx_buf_putc (out, ')');
        }
      else
        fx_buf_puts (out, flat);
      if (d > 0)
        {
          fx_buf_puts (out, " % ");
          put_const_int (k, sizes[d], out);
        }
      fx_buf_puts (out, ";\n");
    }
}

static const char *
red_identity (ind_red red, fx_dtype d)
{
  switch ((int) red)
    {
    case IND_RED_SUM: case IND_RED_MEAN: return "0";
    case IND_RED_PROD: return "1";
    case IND_RED_ANY: return "false";
    case IND_RED_ALL: return "true";
    case IND_RED_MAX: return ind_dtype_limit (d, false, true);
    case IND_RED_MIN: return ind_dtype_limit (d, true, true);
    default: return "0";
    }
}

static const char *
red_op (ind_red red)
{
  switch ((int) red)
    {
    case IND_RED_PROD: return "ind_prod_op";
    case IND_RED_MAX: return "ind_max_op";
    case IND_RED_MIN: return "ind_min_op";
    case IND_RED_ANY: return "ind_any_op";
    case IND_RED_ALL: return "ind_all_op";
    default: return "ind_sum_op";
    }
}

static const char *
acc_type (const ind_node *n)
{
  if (n->red == IND_RED_ANY || n->red == IND_RED_ALL)
    return "bool";
  return ind_ctype (n->compute_dtype);
}

/* The next reduction of segment SEG at or after *i with an accumulator of its own (not one sharing its owner's
   sum), as ind_group_next. */
static int
next_own_acc (const kctx *k, int seg, int *i)
{
  int ni;
  while ((ni = ind_group_next (k->p, k->G, seg, IND_NODE_REDUCTION, i)) >= 0 && share_owner (k, ni) >= 0)
    ;
  return ni;
}

static void
declare_accs (kctx *k, int seg, int depth, fx_buf *out)
{
  for (int i = 0, ni; (ni = next_own_acc (k, seg, &i)) >= 0;)
    {
      const ind_node *n = &k->p->nodes[ni];
      ind_indent (depth, out);
      if (n->red == IND_RED_WELFORD_VAR && k->persistent)
        fx_buf_printf (out, "%s acc%d = 0;   /* the sum (the mean); the deviations from it in a second pass */\n",
                       ind_ctype (n->compute_dtype), ni);
      else if (n->red == IND_RED_WELFORD_VAR)
        fx_buf_printf (out, "ind_wf<%s> acc%d = { 0, 0, 0 };\n", ind_ctype (n->compute_dtype), ni);
      else
        fx_buf_printf (out, "%s acc%d = %s;\n", acc_type (n), ni, red_identity (n->red, n->compute_dtype));
    }
}

/* "const T tmpN = <value>;": a pointwise node's value, in the current lane's or row's scope. */
static void
emit_tmp (kctx *k, int ni, int depth, fx_buf *out)
{
  const ind_node *n = &k->p->nodes[ni];
  ind_printf (depth, out, "const %s tmp%d = ", ind_ctype (n->out_dtype), ni);
  node_value_in (k, n, false, out);
  fx_buf_puts (out, ";\n");
}

/* The statements of one r segment for the current lane (or of a pointwise kernel). */
static void
emit_body (kctx *k, int seg, bool vec_store, int depth, fx_buf *out)
{
  const ind_program *p = k->p;
  const ind_group *G = k->G;
  for (int i = 0, ni; (ni = ind_group_next (p, G, seg, -1, &i)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      if (n->kind == IND_NODE_POINTWISE)
        {
          emit_tmp (k, ni, depth, out);
          store_stmt (k, ni, false, depth, vec_store, out);
          continue;
        }
      if (share_owner (k, ni) >= 0)
        continue;   /* the owner's sum */
      const char *ct = ind_ctype (n->compute_dtype);
      ind_printf (depth, out, "{\n");
      ind_printf (depth + 1, out, "const %s v = ", ct);
      red_input_in (k, n, false, out);
      fx_buf_puts (out, ";\n");
      ind_indent (depth + 1, out);
      switch ((int) n->red)
        {
        case IND_RED_WELFORD_VAR:
          if (k->persistent)
            fx_buf_printf (out, "acc%d += v;\n", ni);
          else
            fx_buf_printf (out, "acc%d = ind_wf_add (acc%d, v);\n", ni, ni);
          break;
        case IND_RED_ANY: case IND_RED_ALL:
          fx_buf_printf (out, "acc%d = %s () (acc%d, (bool) v);\n", ni, red_op (n->red), ni);
          break;
        default:
          fx_buf_printf (out, "acc%d = %s () (acc%d, v);\n", ni, red_op (n->red), ni);
          break;
        }
      ind_printf (depth, out, "}\n");
    }
}

/* Combines the threads' partial accumulator `acc` of node n (a warp's or a block's). */
static void
combine_threads (const ind_node *n, const char *acc, bool two_pass, int threads, int depth, fx_buf *out)
{
  const char *ct = ind_ctype (n->compute_dtype);
  ind_indent (depth, out);
  if (threads == 1)
    fx_buf_puts (out, "/* one thread per row: nothing to combine */\n");
  else if (n->red == IND_RED_WELFORD_VAR && !two_pass)
    {
      if (threads == 32)
        fx_buf_printf (out, "%s = ind_warp_welford (%s);\n", acc, acc);
      else
        fx_buf_printf (out, "{ __shared__ ind_wf<%s> sc[32]; %s = ind_block_welford (%s, sc); }\n", ct, acc, acc);
    }
  else
    {
      /* a two-pass variance's sums add like any sum */
      const char *op = n->red == IND_RED_WELFORD_VAR ? "ind_sum_op" : red_op (n->red);
      const char *at = n->red == IND_RED_WELFORD_VAR ? ct : acc_type (n);
      const char *id = n->red == IND_RED_WELFORD_VAR ? "0" : red_identity (n->red, n->compute_dtype);
      if (threads == 32)
        fx_buf_printf (out, "%s = ind_warp_reduce (%s, %s ());\n", acc, acc, op);
      else
        fx_buf_printf (out, "{ __shared__ %s sc[32]; %s = ind_block_reduce (%s, %s (), (%s) %s, sc); }\n", at, acc,
                       acc, op, at, id);
    }
}

static void gen_r_loop (kctx *k, int seg, bool persistent, bool split, int pass, int depth, fx_buf *out);

/* After the r loop: combine the threads of a row and finish each reduction (every thread gets the value). Persistent
   rows compute a variance in two passes over the registers: the sum gives the mean, then the squared deviations
   from it are summed (exact; no per-element division as in Welford's update). */
static void
finish_reductions (kctx *k, int seg, int threads, bool store, int depth, fx_buf *out)
{
  const ind_program *p = k->p;
  const ind_group *G = k->G;
  int64_t rn = ind_numel (G->rs, G->kr);
  bool two_pass = false;
  char acc[32];
  for (int i = 0, ni; (ni = next_own_acc (k, seg, &i)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      snprintf (acc, sizeof acc, "acc%d", ni);
      combine_threads (n, acc, k->persistent, threads, depth, out);
      if (n->red == IND_RED_WELFORD_VAR && k->persistent)
        {
          const char *ct = ind_ctype (n->compute_dtype);
          ind_printf (depth, out, "const %s mean%d = acc%d / (%s) %lld;\n", ct, ni, ni, ct, (long long) rn);
          ind_printf (depth, out, "%s m2_%d = 0;\n", ct, ni);
          two_pass = true;
        }
    }
  if (two_pass)
    {
      gen_r_loop (k, seg, true, false, 1, depth, out);
      for (int i = 0, ni; (ni = ind_group_next_red (p, G, seg, IND_RED_WELFORD_VAR, &i)) >= 0;)
        {
          snprintf (acc, sizeof acc, "m2_%d", ni);
          combine_threads (&p->nodes[ni], acc, true, threads, depth, out);
        }
    }
  for (int i = 0, ni; (ni = ind_group_next (p, G, seg, IND_NODE_REDUCTION, &i)) >= 0;)
    {
      const ind_node *n = &p->nodes[ni];
      const char *ct = ind_ctype (n->compute_dtype);
      const char *ot = ind_ctype (n->out_dtype);
      int owner = share_owner (k, ni);
      int src = owner >= 0 ? owner : ni;
      ind_indent (depth, out);
      if (n->red == IND_RED_MEAN)
        fx_buf_printf (out, "const %s tmp%d = (%s) (acc%d / (%s) %lld);\n", ot, ni, ot, src, ct, (long long) rn);
      else if (n->red == IND_RED_WELFORD_VAR && k->persistent)
        fx_buf_printf (out, "const %s tmp%d = (%s) (m2_%d / ((%s) %lld - (%s) %.17g));\n", ot, ni, ot, ni, ct,
                       (long long) rn, ct, n->red_param);
      else if (n->red == IND_RED_WELFORD_VAR)
        fx_buf_printf (out, "const %s tmp%d = (%s) (acc%d.m2 / ((%s) %lld - (%s) %.17g));\n", ot, ni, ot, ni, ct,
                       (long long) rn, ct, n->red_param);
      else
        fx_buf_printf (out, "const %s tmp%d = (%s) acc%d;\n", ot, ni, ot, src);
      if (store)
        store_stmt (k, ni, true, depth, false, out);
    }
}

/* The second pass of a persistent segment's variances: the squared deviations from each mean. */
static void
emit_m2_body (kctx *k, int seg, int depth, fx_buf *out)
{
  for (int i = 0, ni; (ni = ind_group_next_red (k->p, k->G, seg, IND_RED_WELFORD_VAR, &i)) >= 0;)
    {
      const ind_node *n = &k->p->nodes[ni];
      const char *ct = ind_ctype (n->compute_dtype);
      ind_printf (depth, out, "{\n");
      ind_printf (depth + 1, out, "const %s d = (", ct);
      /* this segment's pointwise values are out of scope here: recomputed from the registers */
      red_input_in (k, n, true, out);
      fx_buf_printf (out, ") - mean%d;\n", ni);
      ind_printf (depth + 1, out, "m2_%d += d * d;\n", ni);
      ind_printf (depth, out, "}\n");
    }
}

static void
gen_segment_x (kctx *k, int seg, bool store, int depth, fx_buf *out)
{
  for (int i = 0, ni; (ni = ind_group_next (k->p, k->G, seg, -1, &i)) >= 0;)
    {
      emit_tmp (k, ni, depth, out);
      if (store)
        store_stmt (k, ni, true, depth, false, out);
    }
}

/* The r loop of one segment: persistent (unrolled over the row's iterations held in registers) or looped; lanes of
   vec elements inside. split: the loop covers this block's chunk of the row. pass 1: the variances' second pass
   (persistent), no stores. */
static void
gen_r_loop (kctx *k, int seg, bool persistent, bool split, int pass, int depth, fx_buf *out)
{
  const ind_group *G = k->G;
  int V = k->cfg->vec, T = k->cfg->threads;
  int64_t rn = ind_numel (G->rs, G->kr);
  const char *it = k->i32 ? "int" : "long long";
  int from = k->n_pre;
  if (V == 4)
    add_pre_loads (k, seg, false, false);
  if (persistent)
    {
      int64_t iters = (rn + (int64_t) T * V - 1) / ((int64_t) T * V);
      ind_printf (depth, out, "#pragma unroll\n");
      ind_printf (depth, out, "for (int i = 0; i < %lld; i++)\n", (long long) iters);
      ind_printf (depth, out, "{\n");
      ind_printf (depth + 1, out, "const %s rb = ((%s) i * %d + tid) * %d;\n", it, it, T, V);
      ind_printf (depth + 1, out, "if (rb < ");
      put_const_int (k, rn, out);
      fx_buf_puts (out, ")\n");
    }
  else if (split)
    {
      ind_printf (depth, out, "for (%s rb = r_begin + (%s) tid * %d; rb < r_end; rb += %d)\n", it, it, V, T * V);
    }
  else
    {
      ind_printf (depth, out, "for (%s rb = (%s) tid * %d; rb < ", it, it, V);
      put_const_int (k, rn, out);
      fx_buf_printf (out, "; rb += %d)\n", T * V);
    }
  int bd = depth + (persistent ? 1 : 0);
  ind_printf (bd, out, "{\n");
  decompose (k, "rb", 'r', G->rs, G->kr, V == 4, bd + 1, out);
  if (V == 4)
    {
      emit_iter_loads (k, from, bd + 1, out);
      if (pass == 0)
        vec_stores (k, seg, true, bd + 1, out);
    }
  ind_printf (bd + 1, out, "#pragma unroll\n");
  ind_printf (bd + 1, out, "for (int l = 0; l < %d; l++)\n", V);
  ind_printf (bd + 1, out, "{\n");
  if (V == 4)
    {
      ind_printf (bd + 2, out, "const %s r%d = r%db + l;\n", it, G->kr - 1, G->kr - 1);
    }
  if (pass == 0)
    emit_body (k, seg, V == 4, bd + 2, out);
  else
    emit_m2_body (k, seg, bd + 2, out);
  ind_printf (bd + 1, out, "}\n");
  if (V == 4 && pass == 0)
    vec_stores (k, seg, false, bd + 1, out);
  ind_printf (bd, out, "}\n");
  if (persistent)
    {
      ind_printf (depth, out, "}\n");
    }
  k->n_pre = from;
}

/* min_blocks > 0: blocks that must fit on an SM at once (caps the registers per thread). */
static void
signature (kctx *k, const char *name, int block, int min_blocks, bool workspace, fx_buf *out)
{
  const ind_program *p = k->p;
  if (min_blocks > 1)
    fx_buf_printf (out, "extern \"C\" __global__ void __launch_bounds__ (%d, %d)\n%s (", block, min_blocks, name);
  else
    fx_buf_printf (out, "extern \"C\" __global__ void __launch_bounds__ (%d)\n%s (", block, name);
  for (int i = 0; i < k->kp.n_params; i++)
    {
      int b = k->kp.params[i];
      bool aliased = false;
      for (int j = 0; j < k->kp.n_params; j++)
        aliased |= j != i && p->bufs[b].slot >= 0 && p->bufs[k->kp.params[j]].slot == p->bufs[b].slot;
      fx_buf_printf (out, "%s%s%s *%s", i ? ", " : "", k->kp.buf_written[b] || aliased ? "" : "const ",
                     ind_ctype (p->bufs[b].dtype), aliased ? "" : "__restrict__ ");
      ind_param_name (&k->kp, b, out);
    }
  if (workspace)
    fx_buf_printf (out, "%schar *__restrict__ ws", k->kp.n_params ? ", " : "");
  if (k->kp.n_params == 0 && !workspace)
    fx_buf_puts (out, "void");
  fx_buf_puts (out, ")\n{\n");
}

static void
comment_origins (const ind_program *p, const ind_group *G, fx_buf *out)
{
  fx_buf_puts (out, "// Topologically Sorted Source Nodes: [");
  bool first = true;
  for (int i = 0; i < G->n_nodes; i++)
    {
      const ind_node *n = &p->nodes[G->nodes[i]];
      for (size_t o = 0; o < n->n_origins; o++)
        {
          fx_buf_puts (out, first ? "" : ", ");
          first = false;
          for (const char *s = n->origins[o]; *s; s++)
            {
              char c = *s;
              bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
                        || c == '.';
              fx_buf_putc (out, ok ? c : '?');
            }
        }
    }
  fx_buf_puts (out, "]\n");
}

static void
gen_pointwise (kctx *k, const char *name, fx_buf *out)
{
  const ind_group *G = k->G;
  int V = k->cfg->vec, T = k->cfg->threads;
  int64_t xn = ind_numel (G->xs, G->kx);
  const char *it = k->i32 ? "int" : "long long";
  signature (k, name, T, 0, false, out);
  int64_t per = (int64_t) T * V;
  if ((xn + per - 1) / per > ((int64_t) 1 << 30))
    {
      /* more blocks than one launch takes: a grid-stride loop (64-bit: the stride is beyond 32 bits here) */
      fx_buf_printf (out, "  for (%s xf = ((%s) blockIdx.x * %d + threadIdx.x) * %d; xf < ", it, it, T, V);
      put_const_int (k, xn, out);
      fx_buf_printf (out, "; xf += (%s) gridDim.x * %d)\n    {\n", it, T * V);
    }
  else
    {
      /* one element group per thread; a loop's increment could overflow 32-bit index math */
      fx_buf_printf (out, "  const %s xf = ((%s) blockIdx.x * %d + threadIdx.x) * %d;\n  if (xf < ", it, it, T, V);
      put_const_int (k, xn, out);
      fx_buf_puts (out, ")\n    {\n");
    }
  decompose (k, "xf", 'x', G->xs, G->kx, V == 4, 3, out);
  if (V == 4)
    {
      add_pre_loads (k, 0, false, false);
      emit_iter_loads (k, 0, 3, out);
      vec_stores (k, 0, true, 3, out);
    }
  fx_buf_printf (out, "#pragma unroll\n      for (int l = 0; l < %d; l++)\n        {\n", V);
  if (V == 4)
    fx_buf_printf (out, "          const %s x%d = x%db + l;\n", it, G->kx - 1, G->kx - 1);
  else
    fx_buf_puts (out, "          (void) l;\n");
  emit_body (k, 0, V == 4, 5, out);
  fx_buf_puts (out, "        }\n");
  if (V == 4)
    vec_stores (k, 0, false, 3, out);
  fx_buf_puts (out, "    }\n}\n\n");
  k->n_pre = 0;
}

/* Persistent and looped reductions: a row per block (T threads) or per warp (8 rows of 32 threads per block). */
static void
gen_reduction (kctx *k, const char *name, fx_buf *out)
{
  const ind_program *p = k->p;
  const ind_group *G = k->G;
  int V = k->cfg->vec, T = k->cfg->threads, R = k->cfg->rows;
  bool warp = T == 32, single = T == 1;
  bool persistent = k->cfg->kind == IND_CUDA_PERSISTENT;
  k->persistent = persistent;
  int64_t xn = ind_numel (G->xs, G->kx), rn = ind_numel (G->rs, G->kr);
  const char *it = k->i32 ? "int" : "long long";
  int64_t iters = (rn + (int64_t) T * V - 1) / ((int64_t) T * V);
  int min_blocks = 0;
  if (persistent)
    {
      /* the row's loads from memory, read once and kept in registers for every segment: as many rows resident per
         SM as those registers (and about 16 more per thread) allow, so that loads of other rows overlap a row's
         reductions (a layer norm: 32 registers, 8 blocks of 256 threads per SM, instead of 72 and 3) */
      add_pre_loads (k, 0, true, true);
      int64_t held = 16;
      for (int e = 0; e < k->n_pre; e++)
        {
          fx_dtype dt = p->bufs[k->pre[e].buf].dtype;
          held += iters * V * (dt == FX_DTYPE_F64 || dt == FX_DTYPE_I64 ? 2 : 1);
        }
      int per_sm = 2048 / (T * R);
      min_blocks = (int) (65536 / ((int64_t) T * R * held));
      if (min_blocks > per_sm)
        min_blocks = per_sm;
    }
  signature (k, name, T * R, min_blocks, false, out);
  if (single)
    {
      fx_buf_printf (out, "  const %s row = (%s) blockIdx.x * %d + threadIdx.x;\n", it, it, R);
      fx_buf_puts (out, "  const int tid = 0;\n  if (row >= ");
      put_const_int (k, xn, out);
      fx_buf_puts (out, ")\n    return;   /* a thread per row: no barriers */\n");
    }
  else if (R > 1)
    {
      fx_buf_printf (out, "  const %s row = (%s) blockIdx.x * %d + threadIdx.x / 32;\n", it, it, R);
      fx_buf_puts (out, "  const int tid = threadIdx.x & 31;\n  if (row >= ");
      put_const_int (k, xn, out);
      fx_buf_puts (out, ")\n    return;   /* a whole warp: it takes part in no block barrier */\n");
    }
  else
    fx_buf_printf (out, "  const %s row = blockIdx.x;\n  const int tid = threadIdx.x;\n", it);
  decompose (k, "row", 'x', G->xs, G->kx, false, 1, out);
  if (persistent)
    {
      for (int e = 0; e < k->n_pre; e++)
        fx_buf_printf (out, "  %s ld%d[%lld];\n", ind_ctype (p->bufs[k->pre[e].buf].dtype), e,
                       (long long) (iters * V));
      if (k->n_pre > 0)
        {
          fx_buf_printf (out, "#pragma unroll\n  for (int i = 0; i < %lld; i++)\n    {\n", (long long) iters);
          fx_buf_printf (out, "      const %s rb = ((%s) i * %d + tid) * %d;\n      if (rb < ", it, it, T, V);
          put_const_int (k, rn, out);
          fx_buf_puts (out, ")\n        {\n");
          decompose (k, "rb", 'r', G->rs, G->kr, V == 4, 5, out);
          for (int e = 0; e < k->n_pre; e++)
            {
              const struct pre *pe = &k->pre[e];
              bool vload = V == 4 && load_moves_inner (k, pe->xc, pe->rc);
              if (vload)
                {
                  fx_buf_puts (out, "          { const float4 v = *reinterpret_cast<const float4 *> (&");
                  ind_param_name (&k->kp, pe->buf, out);
                  fx_buf_putc (out, '[');
                  put_index (k, pe->xc, pe->rc, pe->off, true, out);
                  fx_buf_puts (out, "]);");
                  fx_buf_printf (out, " ld%d[i * 4] = v.x; ld%d[i * 4 + 1] = v.y; ld%d[i * 4 + 2] = v.z; "
                                      "ld%d[i * 4 + 3] = v.w; }\n", e, e, e, e);
                }
              else
                for (int l = 0; l < V; l++)
                  {
                    if (V == 4)
                      fx_buf_printf (out, "          { const %s r%d = r%db + %d; (void) r%d; ld%d[i * 4 + %d] = ", it,
                                     G->kr - 1, G->kr - 1, l, G->kr - 1, e, l);
                    else
                      fx_buf_printf (out, "          { ld%d[i] = ", e);
                    ind_param_name (&k->kp, pe->buf, out);
                    fx_buf_putc (out, '[');
                    put_index (k, pe->xc, pe->rc, pe->off, false, out);
                    fx_buf_puts (out, "]; }\n");
                  }
            }
          fx_buf_puts (out, "        }\n    }\n");
        }
    }
  bool sync = group_needs_sync (p, G);
  for (int s = 0; s < G->n_segs; s++)
    {
      if (s > 0 && sync && !single)
        fx_buf_puts (out, warp ? "  __syncwarp ();\n" : "  __syncthreads ();\n");
      fx_buf_puts (out, "  {\n");
      if (G->seg_kind[s] == IND_SEG_X)
        gen_segment_x (k, s, true, 2, out);
      else
        {
          find_shared_sums (k, s);
          declare_accs (k, s, 2, out);
          gen_r_loop (k, s, persistent, false, 0, 2, out);
          finish_reductions (k, s, single ? 1 : warp ? 32 : T, true, 2, out);
        }
      /* values of this segment that later segments read stay in scope: close the block at the end */
    }
  for (int s = 0; s < G->n_segs; s++)
    fx_buf_puts (out, "  }\n");
  fx_buf_puts (out, "}\n\n");
  k->n_pre = 0;
}

/* The chunk of the row a split kernel's block (row, part) covers: r_begin .. r_end. */
static void
split_prologue (kctx *k, int S, fx_buf *out)
{
  const ind_group *G = k->G;
  int64_t rn = ind_numel (G->rs, G->kr);
  int64_t chunk = (rn + S - 1) / S;
  chunk = (chunk + 3) / 4 * 4;
  const char *it = k->i32 ? "int" : "long long";
  if (outer_split (k->cfg))
    {
      /* a thread per output: the block's threads are neighbouring outputs, blockIdx the (outputs, part) pair */
      fx_buf_printf (out, "  const %s row = (%s) (blockIdx.x / %d) * %d + threadIdx.x;\n  const int part = blockIdx.x "
                          "%% %d;\n", it, it, S, k->cfg->rows, S);
      fx_buf_puts (out, "  const int tid = 0;\n  if (row >= ");
      put_const_int (k, ind_numel (G->xs, G->kx), out);
      fx_buf_puts (out, ")\n    return;   /* no barriers below */\n");
    }
  else
    {
      fx_buf_printf (out, "  const %s row = blockIdx.x / %d;\n  const int part = blockIdx.x %% %d;\n", it, S, S);
      fx_buf_puts (out, "  const int tid = threadIdx.x;\n");
    }
  fx_buf_printf (out, "  const %s r_begin = (%s) part * ", it, it);
  put_const_int (k, chunk, out);
  fx_buf_printf (out, ";\n  const %s r_end = r_begin + ", it);
  put_const_int (k, chunk, out);
  fx_buf_puts (out, " < ");
  put_const_int (k, rn, out);
  fx_buf_puts (out, " ? r_begin + ");
  put_const_int (k, chunk, out);
  fx_buf_puts (out, " : ");
  put_const_int (k, rn, out);
  fx_buf_puts (out, ";\n  (void) r_end;\n");
}

/* The reduction steps of a split group: the segments that hold reductions, in order. */
static int
split_steps (const ind_program *p, const ind_group *G, int *segs)
{
  int n = 0;
  for (int s = 0; s < G->n_segs; s++)
    for (int k = 0; k < G->n_nodes; k++)
      {
        const ind_node *nd = &p->nodes[G->nodes[k]];
        if (nd->segment == s && nd->kind == IND_NODE_REDUCTION)
          {
            segs[n++] = s;
            break;
          }
      }
  return n;
}

/* The next reduction of segment SEG at or after group position *i (as ind_group_next), and in *WS where its
   partials start in the workspace. */
static int
next_partials (const kctx *k, const ind_cuda_kernel *ck, int seg, int *i, long long *ws)
{
  int ni = ind_group_next (k->p, k->G, seg, IND_NODE_REDUCTION, i);
  if (ni >= 0)
    *ws = (long long) ck->ws_offset[*i - 1];
  return ni;
}

/* The block's accumulators of segment seg into the workspace: the row's partial number `part`. */
static void
write_partials (kctx *k, const ind_cuda_kernel *ck, int seg, fx_buf *out)
{
  int S = k->cfg->split;
  long long ws;
  for (int i = 0, ni; (ni = next_partials (k, ck, seg, &i, &ws)) >= 0;)
    {
      const ind_node *n = &k->p->nodes[ni];
      const char *ct = ind_ctype (n->compute_dtype);
      if (outer_split (k->cfg))
        fx_buf_printf (out, "    reinterpret_cast<%s%s%s *> (ws + %lld)[row * %d + part] = acc%d;\n",
                       n->red == IND_RED_WELFORD_VAR ? "ind_wf<" : "",
                       n->red == IND_RED_WELFORD_VAR ? ct : acc_type (n), n->red == IND_RED_WELFORD_VAR ? ">" : "",
                       ws, S, ni);
      else if (n->red == IND_RED_WELFORD_VAR)
        fx_buf_printf (out, "    { __shared__ ind_wf<%s> sc[32]; acc%d = ind_block_welford (acc%d, sc); }\n"
                            "    if (tid == 0) reinterpret_cast<ind_wf<%s> *> (ws + %lld)[row * %d + part] = acc%d;\n",
                       ct, ni, ni, ct, ws, S, ni);
      else
        fx_buf_printf (out, "    { __shared__ %s sc[32]; acc%d = ind_block_reduce (acc%d, %s (), (%s) %s, sc); }\n"
                            "    if (tid == 0) reinterpret_cast<%s *> (ws + %lld)[row * %d + part] = acc%d;\n",
                       acc_type (n), ni, ni, red_op (n->red), acc_type (n), red_identity (n->red, n->compute_dtype),
                       acc_type (n), ws, S, ni);
    }
}

/* The row's partials of segment seg combined (threads of the block stride over them) and its reductions finished. */
static void
combine_partials (kctx *k, const ind_cuda_kernel *ck, int seg, int threads, bool store, fx_buf *out)
{
  int S = k->cfg->split;
  long long ws;
  declare_accs (k, seg, 2, out);
  for (int i = 0, ni; (ni = next_partials (k, ck, seg, &i, &ws)) >= 0;)
    {
      const ind_node *n = &k->p->nodes[ni];
      const char *ct = ind_ctype (n->compute_dtype);
      fx_buf_printf (out, "    for (int j = tid; j < %d; j += %d)\n", S, threads);
      if (n->red == IND_RED_WELFORD_VAR)
        fx_buf_printf (out, "      acc%d = ind_wf_combine (acc%d, reinterpret_cast<const ind_wf<%s> *> (ws + %lld)"
                            "[row * %d + j]);\n", ni, ni, ct, ws, S);
      else
        fx_buf_printf (out, "      acc%d = %s () (acc%d, reinterpret_cast<const %s *> (ws + %lld)[row * %d + j]);\n",
                       ni, red_op (n->red), ni, acc_type (n), ws, S);
    }
  finish_reductions (k, seg, threads, store, 2, out);
}

/* Split reduction, kernel j of J + 1 (J reduction steps). Kernel j < J runs on (row, part) blocks: it combines the
   partials of the steps before it (every block, a few hundred values from L2; what step j - 1 finishes and the x-level
   values after it are stored by part 0), runs the pointwise loops since step j - 1 over its chunk, and reduces step
   j's segment over the chunk into the workspace. Kernel J finishes the last step and runs what follows (the epilogue)
   over the chunk; with nothing after the last step, one block per row only combines. Values of loops that an
   earlier kernel ran are recomputed where used, as in looped kernels. */
static void
gen_split_kernel (kctx *k, const ind_cuda_kernel *ck, int j, const char *name, fx_buf *out)
{
  const ind_group *G = k->G;
  int segs[IND_MAX_FUSION];
  int J = split_steps (k->p, G, segs);
  bool last = j == J;
  bool per_row = last && segs[J - 1] == G->n_segs - 1;
  bool outer = outer_split (k->cfg);
  int threads = outer ? 1 : per_row ? (int) ck->block2[0] : k->cfg->threads;
  const char *it = k->i32 ? "int" : "long long";
  signature (k, name, outer ? (int) (per_row ? ck->block2[0] : ck->block[0]) : threads, 0, true, out);
  if (per_row && outer)
    {
      fx_buf_printf (out, "  const %s row = (%s) blockIdx.x * %u + threadIdx.x;\n  const int tid = 0;\n  if (row >= ",
                     it, it, ck->block2[0]);
      put_const_int (k, ind_numel (G->xs, G->kx), out);
      fx_buf_puts (out, ")\n    return;\n");
    }
  else if (per_row)
    fx_buf_printf (out, "  const %s row = blockIdx.x;\n  const int tid = threadIdx.x;\n", it);
  else
    split_prologue (k, k->cfg->split, out);
  k->part_guard = !per_row;
  decompose (k, "row", 'x', G->xs, G->kx, false, 1, out);
  int end = last ? G->n_segs - 1 : segs[j];
  int prev = j > 0 ? segs[j - 1] : -1;     /* segments after it are this kernel's own */
  int opened = 0, step = 0;
  for (int s = 0; s <= end; s++)
    {
      bool is_step = step < J && segs[step] == s;
      if (per_row && s < prev)
        {
          step += is_step;
          continue;
        }
      fx_buf_puts (out, "  {\n");
      opened++;
      if (is_step && step < j)
        combine_partials (k, ck, s, threads, step == j - 1, out);
      else if (is_step)
        {
          declare_accs (k, s, 2, out);
          gen_r_loop (k, s, false, true, 0, 2, out);
          write_partials (k, ck, s, out);
        }
      else if (G->seg_kind[s] == IND_SEG_X)
        gen_segment_x (k, s, s > prev, 2, out);
      else if (s > prev)
        gen_r_loop (k, s, false, true, 0, 2, out);
      step += is_step;
    }
  for (int s = 0; s < opened; s++)
    fx_buf_puts (out, "  }\n");
  fx_buf_puts (out, "}\n\n");
  k->part_guard = false;
}

/* ---------------------------------------------------------------- the source */

static const char cuda_header[] =
  "// Generated by the FX Workbench inductor backend (CUDA).\n"
  "typedef long int64_t;\n"
  "typedef int int32_t;\n"
  "typedef short int16_t;\n"
  "typedef signed char int8_t;\n"
  "typedef unsigned char uint8_t;\n"
  "#ifndef INFINITY\n#define INFINITY __int_as_float (0x7f800000)\n#endif\n"
  "#ifndef NAN\n#define NAN __int_as_float (0x7fffffff)\n#endif\n"
  "#define IND_INLINE __device__ __forceinline__\n"
  "#define IND_SEL(c, a, b) ((c) ? (a) : (b))\n"

  "// NaN-propagating max/min (torch.amax): a NaN on either side wins\n"
  "struct ind_sum_op { template <typename T> IND_INLINE T operator() (T a, T b) const { return a + b; } };\n"
  "struct ind_prod_op { template <typename T> IND_INLINE T operator() (T a, T b) const { return a * b; } };\n"
  "struct ind_max_op { template <typename T> IND_INLINE T operator() (T a, T b) const { return (a != a || a > b) ? a : b; } };\n"
  "struct ind_min_op { template <typename T> IND_INLINE T operator() (T a, T b) const { return (a != a || a < b) ? a : b; } };\n"
  "struct ind_any_op { IND_INLINE bool operator() (bool a, bool b) const { return a || b; } };\n"
  "struct ind_all_op { IND_INLINE bool operator() (bool a, bool b) const { return a && b; } };\n"
  "template <typename T> IND_INLINE T ind_shfl (T v, int o) { return (T) __shfl_xor_sync (0xffffffffu, (int) v, o); }\n"
  "template <> IND_INLINE float ind_shfl<float> (float v, int o) { return __shfl_xor_sync (0xffffffffu, v, o); }\n"
  "template <> IND_INLINE double ind_shfl<double> (double v, int o) { return __shfl_xor_sync (0xffffffffu, v, o); }\n"
  "template <> IND_INLINE long ind_shfl<long> (long v, int o) { return (long) __shfl_xor_sync (0xffffffffu, (long long) v, o); }\n"
  "template <typename T, typename Op> IND_INLINE T ind_warp_reduce (T v, Op op)\n"
  "{\n"
  "  for (int o = 16; o > 0; o >>= 1)\n"
  "    v = op (v, ind_shfl (v, o));\n"
  "  return v;\n"
  "}\n"
  "// every thread of the block gets the result; every call site has its own scratch (never reused), so one barrier\n"
  "// suffices\n"
  "template <typename T, typename Op> IND_INLINE T ind_block_reduce (T v, Op op, T identity, T *scratch)\n"
  "{\n"
  "  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;\n"
  "  v = ind_warp_reduce (v, op);\n"
  "  if (lane == 0)\n"
  "    scratch[warp] = v;\n"
  "  __syncthreads ();\n"
  "  v = lane < nwarps ? scratch[lane] : identity;\n"
  "  return ind_warp_reduce (v, op);\n"
  "}\n"
  "// Welford: mean, m2 and count, combined as torch's welford_combine\n"
  "template <typename T> struct ind_wf { T mean, m2, n; };\n"
  "// the per-element step divides by a small count: the fast division (2 ulp) instead of IEEE's (a memory-bound\n"
  "// layer norm spent its time there)\n"
  "template <typename T> IND_INLINE T ind_wf_div (T a, T b) { return a / b; }\n"
  "template <> IND_INLINE float ind_wf_div<float> (float a, float b) { return __fdividef (a, b); }\n"
  "template <typename T> IND_INLINE ind_wf<T> ind_wf_add (ind_wf<T> a, T x)\n"
  "{\n"
  "  a.n += (T) 1;\n"
  "  T delta = x - a.mean;\n"
  "  a.mean += ind_wf_div (delta, a.n);\n"
  "  a.m2 += delta * (x - a.mean);\n"
  "  return a;\n"
  "}\n"
  "template <typename T> IND_INLINE ind_wf<T> ind_wf_combine (ind_wf<T> a, ind_wf<T> b)\n"
  "{\n"
  "  T n = a.n + b.n;\n"
  "  if (n == (T) 0)\n"
  "    return a;\n"
  "  T delta = b.mean - a.mean, nb = b.n / n;\n"
  "  ind_wf<T> r = { a.mean + delta * nb, a.m2 + b.m2 + delta * delta * a.n * nb, n };\n"
  "  return r;\n"
  "}\n"
  "template <typename T> IND_INLINE ind_wf<T> ind_warp_welford (ind_wf<T> v)\n"
  "{\n"
  "  for (int o = 16; o > 0; o >>= 1)\n"
  "    {\n"
  "      ind_wf<T> w = { ind_shfl (v.mean, o), ind_shfl (v.m2, o), ind_shfl (v.n, o) };\n"
  "      v = ind_wf_combine (v, w);\n"
  "    }\n"
  "  return v;\n"
  "}\n"
  "template <typename T> IND_INLINE ind_wf<T> ind_block_welford (ind_wf<T> v, ind_wf<T> *scratch)\n"
  "{\n"
  "  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;\n"
  "  v = ind_warp_welford (v);\n"
  "  if (lane == 0)\n"
  "    scratch[warp] = v;\n"
  "  __syncthreads ();\n"
  "  if (lane < nwarps)\n"
  "    v = scratch[lane];\n"
  "  else\n"
  "    v.mean = v.m2 = v.n = (T) 0;\n"
  "  return ind_warp_welford (v);\n"
  "}\n\n";

bool
ind_cuda_index32 (const ind_program *p)
{
  const int64_t lim = ((int64_t) 1 << 31) - ((int64_t) 1 << 24);
  for (int b = 0; b < p->n_bufs; b++)
    {
      const ind_buffer *B = &p->bufs[b];
      int64_t hi = 1;
      for (int d = 0; d < B->ndim; d++)
        hi += (B->sizes[d] - 1) * (B->strides[d] < 0 ? -B->strides[d] : B->strides[d]);
      if (hi >= lim)
        return false;
    }
  for (int g = 0; g < p->n_groups; g++)
    {
      const ind_group *G = &p->groups[g];
      if (ind_numel (G->xs, G->kx) * ind_numel (G->rs, G->kr) >= lim)
        return false;
    }
  return true;
}

/* Kernel names: PyTorch's triton_<cat>_fused_<ops>_<n> with cuda_ for triton_; the ops part is the C generator's
   (op-table names, sorted and deduplicated). */
static const char *
kernel_name (const ind_program *p, const ind_group *G, const char *cat, int counter)
{
  const char *fused = strstr (G->name, "fused");
  const char *end = strrchr (G->name, '_');
  size_t len = fused && end > fused ? (size_t) (end - fused) : 5;
  return fx_arena_printf (p->arena, "cuda_%s_%.*s_%d", cat, (int) len, fused ? fused : "fused", counter);
}

void
ind_cuda_plan_kernel (const ind_program *p, int g, const ind_cuda_config *cfg, int *counter, ind_cuda_kernel *ck)
{
  const ind_group *G = &p->groups[g];
  memset (ck, 0, sizeof *ck);
  ck->group = g;
  ck->cfg = *cfg;
  int64_t xn = ind_numel (G->xs, G->kx), rn = ind_numel (G->rs, G->kr);
  ck->block[1] = ck->block[2] = ck->grid[1] = ck->grid[2] = 1;
  ck->block2[1] = ck->block2[2] = ck->grid2[1] = ck->grid2[2] = 1;
  switch (cfg->kind)
    {
    case IND_CUDA_POINTWISE:
      {
        ck->name = kernel_name (p, G, "poi", (*counter)++);
        int64_t per = (int64_t) cfg->threads * cfg->vec;
        int64_t blocks = (xn + per - 1) / per;
        if (blocks > ((int64_t) 1 << 30))
          blocks = (int64_t) 1 << 30;
        ck->grid[0] = (unsigned) (blocks > 0 ? blocks : 1);
        ck->block[0] = (unsigned) cfg->threads;
        break;
      }
    case IND_CUDA_PERSISTENT: case IND_CUDA_LOOPED:
      ck->name = kernel_name (p, G, cfg->kind == IND_CUDA_PERSISTENT ? "per" : "red", (*counter)++);
      ck->grid[0] = (unsigned) ((xn + cfg->rows - 1) / cfg->rows);
      ck->block[0] = (unsigned) (cfg->threads * cfg->rows);
      break;
    case IND_CUDA_SPLIT:
      {
        int segs[IND_MAX_FUSION];
        int steps = split_steps (p, G, segs);
        ck->name = kernel_name (p, G, "red", (*counter)++);
        ck->n_mid = steps - 1;
        for (int m = 0; m < ck->n_mid; m++)
          ck->mid_names[m] = kernel_name (p, G, "red", (*counter)++);
        ck->name2 = kernel_name (p, G, "per", (*counter)++);
        ck->grid[0] = (unsigned) (xn * cfg->split);
        ck->block[0] = (unsigned) cfg->threads;
        if (cfg->threads == 1)
          {
            /* outer: blocks of `rows` outputs times the parts; the combining kernel a thread per output */
            int64_t xblocks = (xn + cfg->rows - 1) / cfg->rows;
            ck->grid[0] = (unsigned) (xblocks * cfg->split);
            ck->block[0] = (unsigned) cfg->rows;
            ck->grid2[0] = segs[steps - 1] < G->n_segs - 1 ? ck->grid[0] : (unsigned) xblocks;
            ck->block2[0] = (unsigned) cfg->rows;
          }
        else if (segs[steps - 1] < G->n_segs - 1)
          {
            /* an epilogue: every (row, part) block again, over its chunk */
            ck->grid2[0] = ck->grid[0];
            ck->block2[0] = ck->block[0];
          }
        else
          {
            ck->grid2[0] = (unsigned) xn;
            int t2 = pow2_at_least (cfg->split);
            ck->block2[0] = (unsigned) (t2 < 32 ? 32 : t2 > 1024 ? 1024 : t2);
          }
        int64_t off = 0;
        ck->ws_offset = fx_arena_alloc (p->arena, sizeof (int64_t) * (size_t) (G->n_nodes + 1));
        for (int i = 0; i < G->n_nodes; i++)
          {
            const ind_node *n = &p->nodes[G->nodes[i]];
            ck->ws_offset[i] = -1;
            if (n->kind != IND_NODE_REDUCTION)
              continue;
            int64_t item = (int64_t) fx_dtype_size (n->compute_dtype);
            if (n->red == IND_RED_ANY || n->red == IND_RED_ALL)
              item = 1;
            if (n->red == IND_RED_WELFORD_VAR)
              item *= 3;
            ck->ws_offset[i] = off;
            off += (xn * cfg->split * item + 15) / 16 * 16;
          }
        ck->ws_bytes = off;
        (void) rn;
        break;
      }
    default:
      break;
    }
}

/* Generates every loop kernel of p with the configurations in plan (plan->kernels[g] for each group g, filled by
   ind_cuda_plan_kernel; extern groups have no name). */
void
ind_cuda_codegen (const ind_program *p, ind_cuda_plan *plan, fx_buf *out)
{
  fx_buf_puts (out, cuda_header);
  fx_buf_printf (out, "// index math in %s bits\n\n", plan->index32 ? "32" : "64");
  for (int g = 0; g < p->n_groups; g++)
    {
      const ind_group *G = &p->groups[g];
      ind_cuda_kernel *ck = &plan->kernels[g];
      if (G->is_extern || !ck->name)
        continue;
      kctx k;
      memset (&k, 0, sizeof k);
      k.p = p;
      k.G = G;
      k.cfg = &ck->cfg;
      k.i32 = plan->index32;
      ind_kernel_params_collect (k.p, k.G, &k.kp);
      ck->n_params = k.kp.n_params;
      ck->params = fx_arena_alloc (p->arena, sizeof (int) * (size_t) (k.kp.n_params + 1));
      memcpy (ck->params, k.kp.params, sizeof (int) * (size_t) k.kp.n_params);
      ck->src_begin = out->len;
      comment_origins (p, G, out);
      switch (ck->cfg.kind)
        {
        case IND_CUDA_POINTWISE: gen_pointwise (&k, ck->name, out); break;
        case IND_CUDA_PERSISTENT: case IND_CUDA_LOOPED: gen_reduction (&k, ck->name, out); break;
        case IND_CUDA_SPLIT:
          gen_split_kernel (&k, ck, 0, ck->name, out);
          for (int m = 0; m < ck->n_mid; m++)
            gen_split_kernel (&k, ck, m + 1, ck->mid_names[m], out);
          ck->src_mid = out->len;
          gen_split_kernel (&k, ck, ck->n_mid + 1, ck->name2, out);
          break;
        default:
          break;
        }
      ck->src_end = out->len;
      ind_kernel_params_free (&k.kp);
    }
}

void
ind_cuda_plan_default (const ind_program *p, ind_cuda_plan *plan)
{
  ind_cuda_plan_kind (p, plan, -1);
}

void
ind_cuda_plan_kind (const ind_program *p, ind_cuda_plan *plan, int kind)
{
  plan->kernels = fx_arena_alloc (p->arena, sizeof (ind_cuda_kernel) * (size_t) (p->n_groups + 1));
  plan->index32 = ind_cuda_index32 (p);
  int counter = 0;
  for (int g = 0; g < p->n_groups; g++)
    {
      ind_cuda_config cfg[8];
      memset (&plan->kernels[g], 0, sizeof plan->kernels[g]);
      plan->kernels[g].group = g;
      int n = cuda_configs (p, g, kind == IND_CUDA_SPLIT, cfg, 8);
      int pick = 0;
      for (int i = n - 1; i >= 0; i--)
        if ((int) cfg[i].kind == kind)
          pick = i;
      if (n > 0)
        ind_cuda_plan_kernel (p, g, &cfg[pick], &counter, &plan->kernels[g]);
    }
}

/* ---------------------------------------------------------------- device buffers and the wrapper */

static int
layout_add (ind_cuda_layout *l, int role, int64_t bytes, int ir_buf)
{
  l->pb[l->n_pbufs].role = role;
  l->pb[l->n_pbufs].bytes = bytes < 16 ? 16 : (size_t) bytes;
  l->pb[l->n_pbufs].ir_buf = ir_buf;
  return l->n_pbufs++;
}

void
ind_cuda_layout_make (const ind_program *p, const ind_cuda_plan *plan, ind_cuda_layout *l)
{
  memset (l, 0, sizeof *l);
  l->pb = calloc ((size_t) (p->n_bufs + p->n_groups + 1), sizeof *l->pb);
  l->pbuf = malloc (sizeof (int) * (size_t) (p->n_bufs + 1));
  l->ws = malloc (sizeof (int) * (size_t) (p->n_groups + 1));
  int *slot_pb = malloc (sizeof (int) * (size_t) (p->n_slots + 1));
  for (int s = 0; s < p->n_slots; s++)
    slot_pb[s] = -1;
  for (int b = 0; b < p->n_bufs; b++)
    {
      const ind_buffer *B = &p->bufs[b];
      l->pbuf[b] = -1;
      if (B->kind == IND_BUF_INPUT)
        l->pbuf[b] = layout_add (l, IND_PB_INPUT, ind_buffer_bytes (p, b), b);
      else if (!B->stored)
        continue;
      else if (B->is_output)
        l->pbuf[b] = layout_add (l, IND_PB_OUTPUT, ind_buffer_bytes (p, b), b);
      else if (B->slot >= 0)
        {
          /* buffers that share a reuse slot share one device block */
          if (slot_pb[B->slot] < 0)
            slot_pb[B->slot] = layout_add (l, IND_PB_TEMP, p->slot_bytes[B->slot], b);
          l->pbuf[b] = slot_pb[B->slot];
        }
      else
        l->pbuf[b] = layout_add (l, IND_PB_TEMP, ind_buffer_bytes (p, b), b);
    }
  free (slot_pb);
  for (int g = 0; g < p->n_groups; g++)
    {
      const ind_cuda_kernel *ck = &plan->kernels[g];
      l->ws[g] = ck->name && ck->cfg.kind == IND_CUDA_SPLIT ? layout_add (l, IND_PB_TEMP, ck->ws_bytes, -1) : -1;
    }
}

void
ind_cuda_layout_free (ind_cuda_layout *l)
{
  free (l->pb);
  free (l->pbuf);
  free (l->ws);
  memset (l, 0, sizeof *l);
}

/* The run as text (what output_code.py's call() does): device buffers, launches with their argument buffers, extern
   calls, and where each graph output lies. Tests replay it; the UI shows it. */
void
ind_cuda_wrapper_text (const ind_program *p, const ind_cuda_plan *plan, const ind_cuda_layout *l, fx_buf *out)
{
  static const char *const roles[] = { "input", "output", "temp" };
  for (int k = 0; k < l->n_pbufs; k++)
    {
      int b = l->pb[k].ir_buf;
      fx_buf_printf (out, "buffer %d %s %zu", k, roles[l->pb[k].role], l->pb[k].bytes);
      if (l->pb[k].role == IND_PB_INPUT)
        fx_buf_printf (out, " arg %d", p->bufs[b].input_index);
      if (b >= 0)
        fx_buf_printf (out, " buf%d", b);
      else
        fx_buf_puts (out, " workspace");
      fx_buf_putc (out, '\n');
    }
  for (int g = 0; g < p->n_groups; g++)
    {
      const ind_cuda_kernel *ck = &plan->kernels[g];
      if (!ck->name)
        {
          fx_buf_printf (out, "extern %s\n", p->groups[g].name);
          continue;
        }
      /* split: the partial kernel, the kernels of later steps (on its grid), then the last one */
      int n_launch = ck->name2 ? ck->n_mid + 2 : 1;
      for (int pass = 0; pass < n_launch; pass++)
        {
          bool fin = pass > 0 && pass == n_launch - 1;
          const char *kname = fin ? ck->name2 : pass ? ck->mid_names[pass - 1] : ck->name;
          fx_buf_printf (out, "launch %s grid %u block %u args", kname, fin ? ck->grid2[0] : ck->grid[0],
                         fin ? ck->block2[0] : ck->block[0]);
          for (int i = 0; i < ck->n_params; i++)
            fx_buf_printf (out, " %d", l->pbuf[ck->params[i]]);
          if (l->ws[g] >= 0)
            fx_buf_printf (out, " %d", l->ws[g]);
          fx_buf_putc (out, '\n');
        }
    }
  for (int k = 0; k < p->n_outputs; k++)
    {
      if (p->outputs[k] < 0)
        {
          fx_buf_printf (out, "result %d none\n", k);
          continue;
        }
      const ind_view *v = &p->views[p->outputs[k]];
      fx_buf_printf (out, "result %d buffer %d offset %lld dtype %s ndim %d", k, l->pbuf[v->buf], (long long) v->offset,
                     fx_dtype_name (p->bufs[v->buf].dtype), v->ndim);
      for (int d = 0; d < v->ndim; d++)
        fx_buf_printf (out, " %lld:%lld", (long long) v->sizes[d], (long long) v->strides[d]);
      fx_buf_putc (out, '\n');
    }
}
