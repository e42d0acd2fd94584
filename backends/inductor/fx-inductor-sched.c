/* fx-inductor-sched.c: the device-independent scheduler: vertical and horizontal fusion of loop nodes into kernels
   (outer loops X, reduction loops R, segments), recorded rejection reasons, buffer reuse and the IR dumps. */
#include "fx-inductor-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node's load or store in kernel coordinates. */
typedef struct kidx
{
  int64_t off;
  int64_t x[IND_MAXD];
  int64_t r[IND_MAXD];
} kidx;

static int
nonunit_dims (const ind_node *n, int from, int to, int64_t *out)
{
  int k = 0;
  for (int i = from; i < to; i++)
    if (n->sizes[i] != 1)
      out[k++] = n->sizes[i];
  return k;
}

static bool
dims_eq (const int64_t *a, int na, const int64_t *b, int nb)
{
  return na == nb && (na == 0 || memcmp (a, b, sizeof (int64_t) * (size_t) na) == 0);
}

/* How node n sits in a kernel with key (X, R): 1 = per x (X level), 2 = inside the r loops, 0 = it does not fit. */
static int
placement (const ind_node *n, const int64_t *xs, int kx, const int64_t *rs, int kr)
{
  int64_t d[IND_MAXD], e[IND_MAXD];
  if (n->kind == IND_NODE_REDUCTION)
    {
      int a = nonunit_dims (n, 0, n->ndim - n->nred, d);
      int b = nonunit_dims (n, n->ndim - n->nred, n->ndim, e);
      return (kr > 0 && dims_eq (d, a, xs, kx) && dims_eq (e, b, rs, kr)) ? 2 : 0;
    }
  int a = nonunit_dims (n, 0, n->ndim, d);
  if (dims_eq (d, a, xs, kx))
    return 1;
  if (kr > 0 && a == kx + kr && dims_eq (d, kx, xs, kx) && dims_eq (d + kx, kr, rs, kr))
    return 2;
  return 0;
}

/* Maps node-variable coefficients to kernel variables (non-unit dims in order: x first, then r). */
static void
to_kernel (const ind_node *n, const int64_t *coef, int64_t off, int kx, kidx *k)
{
  memset (k, 0, sizeof *k);
  k->off = off;
  int j = 0;
  for (int i = 0; i < n->ndim; i++)
    {
      if (n->sizes[i] == 1)
        continue;
      if (j < kx)
        k->x[j] = coef[i];
      else
        k->r[j - kx] = coef[i];
      j++;
    }
}

/* Store coefficients of a node's output (contiguous buffers): per node variable. */
static void
store_coef (const ind_program *p, const ind_node *n, int64_t *coef)
{
  memset (coef, 0, sizeof (int64_t) * IND_MAXD);
  int kept = n->ndim - n->nred;
  int64_t st = 1;
  (void) p;
  for (int i = kept - 1; i >= 0; i--)
    {
      coef[i] = n->sizes[i] == 1 ? 0 : st;
      st *= n->sizes[i];
    }
}

static void
node_store_k (const ind_program *p, const ind_node *n, int kx, kidx *k)
{
  int64_t c[IND_MAXD];
  store_coef (p, n, c);
  to_kernel (n, c, 0, kx, k);
}

static const char *
node_label (const ind_program *p, int i)
{
  static char b[2][32];
  static int w;
  w ^= 1;
  snprintf (b[w], sizeof b[w], "buf%d", p->nodes[i].out_buf >= 0 ? p->nodes[i].out_buf : i);
  return b[w];
}

static void
reject (ind_program *p, int g, int i, const char *why)
{
  const ind_group *G = &p->groups[g];
  fx_buf_printf (&p->fusion_log, "cannot fuse %s with %s: %s\n", node_label (p, G->nodes[G->n_nodes - 1]),
                 node_label (p, i), why);
}

static int
group_of_buf (const ind_program *p, int buf)
{
  int pr = p->bufs[buf].producer;
  return pr >= 0 ? p->nodes[pr].group : -1;
}

/* Ops re-evaluated when node pi's value is recomputed in a later segment (its r-level register inputs too). */
static int
recompute_cost (const ind_program *p, int pi)
{
  const ind_node *n = &p->nodes[pi];
  int cost = 1;
  for (int o = 0; o < n->n_opnd; o++)
    {
      int l = n->opnd[o].local;
      if (l >= 0 && p->nodes[l].kind == IND_NODE_POINTWISE && !p->nodes[l].xlevel)
        cost += recompute_cost (p, l);
    }
  return cost;
}

/* Tries to put node i into group g. On success fills the per-operand local-value choices and the segment. */
/* Set while a horizontal fusion is allowed without shared reads: the node and the group feed a common consumer
   (sin(x) + cos(y): both halves end up in the consumer's kernel anyway, as Inductor's vertical fusion of both
   producers into the add gives one kernel). */
static bool allow_unshared;

/* Does group g hold a node that writes buffer b, or that reads b from memory? */
static bool
group_touches (const ind_program *p, const ind_group *G, int b)
{
  for (int k = 0; k < G->n_nodes; k++)
    {
      const ind_node *m = &p->nodes[G->nodes[k]];
      if (m->out_buf == b)
        return true;
      for (int q = 0; q < m->n_opnd; q++)
        if (m->opnd[q].kind == IND_OPND_LOAD && m->opnd[q].buf == b && m->opnd[q].local < 0)
          return true;
    }
  return false;
}

/* True when node i feeds, directly or through a few more loop nodes, a node that reads an output of group g or data
   g reads: cross entropy's target masking feeds the gather of the target logit, which reads the logits the
   log_softmax kernel streams; in that kernel it reads them while the row is in cache. */
#define IND_CONSUMER_WALK 16
static bool
common_consumer (const ind_program *p, int g, int i)
{
  const ind_group *G = &p->groups[g];
  int reached[IND_CONSUMER_WALK + 1], n_reached = 0;
  reached[n_reached++] = p->nodes[i].out_buf;
  for (int c = i + 1; c < p->n_nodes && n_reached <= IND_CONSUMER_WALK; c++)
    {
      const ind_node *cn = &p->nodes[c];
      if (cn->kind != IND_NODE_POINTWISE && cn->kind != IND_NODE_REDUCTION)
        continue;
      bool reads_i = false, reads_g = false;
      for (int o = 0; o < cn->n_opnd; o++)
        {
          if (cn->opnd[o].kind != IND_OPND_LOAD)
            continue;
          for (int r = 0; r < n_reached && !reads_i; r++)
            reads_i = cn->opnd[o].buf == reached[r];
          reads_g = reads_g || group_touches (p, G, cn->opnd[o].buf);
        }
      if (reads_i && reads_g)
        return true;
      if (reads_i && cn->kind == IND_NODE_POINTWISE)
        reached[n_reached++] = cn->out_buf;
    }
  return false;
}

static bool
try_fuse (ind_program *p, int g, int i, bool horizontal)
{
  ind_group *G = &p->groups[g];
  ind_node *n = &p->nodes[i];
  if (G->is_extern)
    {
      reject (p, g, i, "node1 is extern or nop");
      return false;
    }
  if (G->n_nodes + 1 > p->max_fusion || G->n_segs >= IND_MAX_FUSION)
    {
      reject (p, g, i, "exceeds max fusion");
      return false;
    }
  /* key: possibly re-keyed when a reduction joins a pointwise group */
  int kx = G->kx, kr = G->kr;
  int64_t xs[IND_MAXD], rs[IND_MAXD];
  memcpy (xs, G->xs, sizeof xs);
  memcpy (rs, G->rs, sizeof rs);
  bool rekey_all_r = false;
  int pl = placement (n, xs, kx, rs, kr);
  if (pl == 0 && n->kind == IND_NODE_REDUCTION && kr == 0)
    {
      int64_t d[IND_MAXD], e[IND_MAXD];
      int a = nonunit_dims (n, 0, n->ndim - n->nred, d);
      int b = nonunit_dims (n, n->ndim - n->nred, n->ndim, e);
      if (b > 0 && dims_eq (d, a, xs, kx))
        {
          /* the group's pointwise nodes become X-level prologue of the reduction */
          kx = a;
          kr = b;
          memcpy (rs, e, sizeof (int64_t) * (size_t) b);
          pl = 2;
        }
      else if (b > 0 && a + b == kx && dims_eq (d, a, xs, a) && dims_eq (e, b, xs + a, b))
        {
          kx = a;
          kr = b;
          memcpy (rs, e, sizeof (int64_t) * (size_t) b);
          rekey_all_r = true;
          pl = 2;
        }
    }
  if (pl == 0)
    {
      reject (p, g, i, n->kind == IND_NODE_REDUCTION || kr > 0 ? "numel/rnumel mismatch (reduce)"
                                                                : "numel/rnumel mismatch (pointwise)");
      return false;
    }
  bool has_red = false;
  for (int k = 0; k < G->n_nodes; k++)
    has_red |= p->nodes[G->nodes[k]].kind == IND_NODE_REDUCTION;
  if (!p->epilogue_fusion && has_red && n->kind == IND_NODE_POINTWISE)
    {
      reject (p, g, i, "epilogue fusion is disabled (epilogue_fusion=False)");
      return false;
    }
  /* the segment the node would start in */
  int last_seg = G->n_segs - 1;
  bool xlevel = pl == 1;
  bool force_new = false;
  int locals[IND_MAX_OPERANDS];
  bool shared = false;
  for (int o = 0; o < n->n_opnd; o++)
    {
      locals[o] = -1;
      const ind_operand *op = &n->opnd[o];
      if (op->kind != IND_OPND_LOAD)
        continue;
      int pg = group_of_buf (p, op->buf);
      if (pg != g)
        {
          /* horizontal fusion needs shared reads */
          for (int k = 0; k < G->n_nodes && !shared; k++)
            {
              const ind_node *m = &p->nodes[G->nodes[k]];
              for (int q = 0; q < m->n_opnd; q++)
                if (m->opnd[q].kind == IND_OPND_LOAD && m->opnd[q].buf == op->buf)
                  shared = true;
            }
          continue;
        }
      shared = true;
      int pi = p->bufs[op->buf].producer;
      const ind_node *pn = &p->nodes[pi];
      bool p_xlevel = rekey_all_r ? false : (pn->kind == IND_NODE_REDUCTION ? true : pn->xlevel);
      if (pn->kind == IND_NODE_POINTWISE && !rekey_all_r)
        p_xlevel = placement (pn, xs, kx, rs, kr) == 1;
      kidx L, S;
      to_kernel (n, op->coef, op->offset, kx, &L);
      node_store_k (p, pn, kx, &S);
      bool x_eq = memcmp (L.x, S.x, sizeof L.x) == 0;
      bool r_zero = true, same = x_eq && L.off == S.off && memcmp (L.r, S.r, sizeof L.r) == 0;
      for (int k = 0; k < IND_MAXD; k++)
        r_zero &= L.r[k] == 0;
      int p_seg = rekey_all_r ? 0 : pn->segment;
      bool p_red = pn->kind == IND_NODE_REDUCTION;
      if (p_xlevel || p_red)
        {
          if (!(x_eq && r_zero && L.off == S.off))
            {
              reject (p, g, i, "memory deps did not match");
              return false;
            }
          locals[o] = pi;
          if (p_red && p_seg == last_seg && !xlevel)
            force_new = true;
          continue;
        }
      /* producer inside the r loops: same index in the same segment reads the register; otherwise the row must
         have been written by an earlier segment of the same outer iteration */
      if (same && !xlevel)
        {
          locals[o] = pi;
          continue;
        }
      int64_t rn = 1;
      for (int k = 0; k < kr; k++)
        rn *= rs[k];
      int64_t lo = L.off - S.off, hi = L.off - S.off;
      for (int k = 0; k < kr; k++)
        {
          if (L.r[k] > 0)
            hi += L.r[k] * (rs[k] - 1);
          else
            lo += L.r[k] * (rs[k] - 1);
        }
      if (!x_eq || lo < 0 || hi >= rn)
        {
          reject (p, g, i, "memory deps did not match");
          return false;
        }
      if (!xlevel && p_seg == last_seg)
        force_new = true;
    }
  if (horizontal && !shared && !allow_unshared)
    {
      reject (p, g, i, "no shared data");
      return false;
    }
  /* accept */
  if (kx != G->kx || kr != G->kr)
    {
      G->kx = kx;
      G->kr = kr;
      memcpy (G->xs, xs, sizeof xs);
      memcpy (G->rs, rs, sizeof rs);
      for (int k = 0; k < G->n_nodes; k++)
        p->nodes[G->nodes[k]].xlevel = !rekey_all_r;
      if (rekey_all_r)
        G->seg_kind[0] = IND_SEG_R;
    }
  int seg;
  if (xlevel)
    seg = (G->n_segs > 0 && G->seg_kind[G->n_segs - 1] == IND_SEG_X) ? G->n_segs - 1 : G->n_segs;
  else
    seg = (G->n_segs > 0 && G->seg_kind[G->n_segs - 1] == IND_SEG_R && !force_new) ? G->n_segs - 1 : G->n_segs;
  if (seg == G->n_segs)
    G->seg_kind[G->n_segs++] = xlevel ? IND_SEG_X : IND_SEG_R;
  n->segment = seg;
  n->xlevel = xlevel;
  n->group = g;
  for (int o = 0; o < n->n_opnd; o++)
    n->opnd[o].local = locals[o];
  /* a register read is only valid inside the same r-loop segment for r-level producers; from a later segment a
     cheap producer is re-evaluated (as Inductor inlines pointwise bodies), an expensive one is read from memory */
  for (int o = 0; o < n->n_opnd; o++)
    {
      n->opnd[o].recompute = false;
      if (locals[o] >= 0)
        {
          const ind_node *pn = &p->nodes[locals[o]];
          if (!pn->xlevel && pn->kind != IND_NODE_REDUCTION && pn->segment != seg)
            {
              if (recompute_cost (p, locals[o]) <= 8)
                n->opnd[o].recompute = true;
              else
                n->opnd[o].local = -1;
            }
        }
    }
  G->nodes = ind_grow (G->nodes, G->n_nodes, &G->cap_nodes, sizeof *G->nodes, 8);
  G->nodes[G->n_nodes++] = i;
  return true;
}

static int
new_group (ind_program *p, int i)
{
  p->groups = realloc (p->groups, sizeof (ind_group) * (size_t) (p->n_groups + 1));
  ind_group *G = &p->groups[p->n_groups];
  memset (G, 0, sizeof *G);
  ind_node *n = &p->nodes[i];
  n->group = p->n_groups;
  n->segment = 0;
  for (int o = 0; o < n->n_opnd; o++)
    {
      n->opnd[o].local = -1;
      n->opnd[o].recompute = false;
    }
  G->cap_nodes = 8;
  G->nodes = malloc (sizeof (int) * 8);
  G->nodes[G->n_nodes++] = i;
  if (n->kind == IND_NODE_EXTERN || n->kind == IND_NODE_FALLBACK)
    G->is_extern = true;
  else if (n->kind == IND_NODE_REDUCTION)
    {
      G->kx = nonunit_dims (n, 0, n->ndim - n->nred, G->xs);
      G->kr = nonunit_dims (n, n->ndim - n->nred, n->ndim, G->rs);
      G->seg_kind[0] = IND_SEG_R;
      G->n_segs = 1;
      n->xlevel = false;
    }
  else
    {
      G->kx = nonunit_dims (n, 0, n->ndim, G->xs);
      G->kr = 0;
      G->seg_kind[0] = IND_SEG_X;
      G->n_segs = 1;
      n->xlevel = true;
    }
  if (n->kind == IND_NODE_REDUCTION && G->kr == 0)
    {
      /* reducing only unit dims: still a reduction loop of one */
      G->rs[0] = 1;
      G->kr = 1;
    }
  return p->n_groups++;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static void
name_groups (ind_program *p)
{
  int counter = 0;
  for (int g = 0; g < p->n_groups; g++)
    {
      ind_group *G = &p->groups[g];
      if (G->is_extern)
        {
          const ind_node *n = &p->nodes[G->nodes[0]];
          G->name = n->kind == IND_NODE_EXTERN ? fx_arena_printf (p->arena, "extern_kernels.%s", n->op_name)
                                               : fx_arena_printf (p->arena, "aten.%s", n->op_name);
          continue;
        }
      const char **names = malloc (sizeof (char *) * (size_t) G->n_nodes);
      for (int k = 0; k < G->n_nodes; k++)
        names[k] = p->nodes[G->nodes[k]].op_name;
      qsort (names, (size_t) G->n_nodes, sizeof (char *), cmp_str);
      fx_buf b;
      fx_buf_init (&b);
      fx_buf_puts (&b, "cpp_fused");
      for (int k = 0; k < G->n_nodes; k++)
        if (k == 0 || strcmp (names[k], names[k - 1]) != 0)
          fx_buf_printf (&b, "_%s", names[k]);
      fx_buf_printf (&b, "_%d", counter++);
      G->name = fx_arena_strdup (p->arena, b.data);
      fx_buf_free (&b);
      free (names);
    }
}

/* Whether buffer b (computed by group g) may be written over buffer a's memory. */
static bool
inplace_ok (const ind_program *p, int g, int a, int b)
{
  const ind_buffer *A = &p->bufs[a], *B = &p->bufs[b];
  if (A->kind != IND_BUF_COMPUTED || A->is_output || A->last_use != g || group_of_buf (p, a) >= g
      || fx_dtype_size (A->dtype) != fx_dtype_size (B->dtype))
    return false;
  const ind_group *G = &p->groups[g];
  int bi = B->producer;
  const ind_node *bn = &p->nodes[bi];
  kidx S;
  node_store_k (p, bn, G->kx, &S);
  bool read = false;
  for (int k = 0; k < G->n_nodes; k++)
    for (int o = 0; o < p->nodes[G->nodes[k]].n_opnd; o++)
      if (p->nodes[G->nodes[k]].opnd[o].recompute)
        return false;
  for (int k = 0; k < G->n_nodes; k++)
    {
      int ni = G->nodes[k];
      const ind_node *n = &p->nodes[ni];
      for (int o = 0; o < n->n_opnd; o++)
        {
          const ind_operand *op = &n->opnd[o];
          if (op->kind != IND_OPND_LOAD || op->buf != a)
            continue;
          kidx L;
          to_kernel (n, op->coef, op->offset, G->kx, &L);
          /* a recomputed body could read a again after the write */
          for (int q = 0; q < n->n_opnd; q++)
            if (n->opnd[q].recompute)
              return false;
          if (ni > bi || n->segment != bn->segment || memcmp (&L, &S, sizeof L) != 0)
            return false;
          read = true;
        }
    }
  return read && bn->kind == IND_NODE_POINTWISE;
}

fx_status
ind_schedule (ind_program *p, fx_diag *diag)
{
  (void) diag;
  for (int i = 0; i < p->n_nodes; i++)
    {
      ind_node *n = &p->nodes[i];
      if (n->kind == IND_NODE_EXTERN || n->kind == IND_NODE_FALLBACK)
        {
          new_group (p, i);
          continue;
        }
      int dep = -1;
      for (int o = 0; o < n->n_opnd; o++)
        if (n->opnd[o].kind == IND_OPND_LOAD)
          {
            int g = group_of_buf (p, n->opnd[o].buf);
            if (g > dep)
              dep = g;
          }
      bool done = false;
      if (dep >= 0)
        done = try_fuse (p, dep, i, false);
      /* horizontal: independent loops over the same ranges that share reads */
      for (int g = dep + 1; !done && g < p->n_groups; g++)
        if (!p->groups[g].is_extern)
          done = try_fuse (p, g, i, true);
      for (int g = dep + 1; !done && g < p->n_groups; g++)
        if (!p->groups[g].is_extern && common_consumer (p, g, i))
          {
            allow_unshared = true;
            done = try_fuse (p, g, i, true);
            allow_unshared = false;
          }
      if (!done)
        new_group (p, i);
    }
  /* which buffers must be written to memory, and their last readers */
  for (int b = 0; b < p->n_bufs; b++)
    {
      p->bufs[b].stored = p->bufs[b].kind != IND_BUF_COMPUTED || p->bufs[b].is_output;
      p->bufs[b].last_use = p->bufs[b].is_output ? p->n_groups : -1;
    }
  for (int i = 0; i < p->n_nodes; i++)
    {
      const ind_node *n = &p->nodes[i];
      for (int o = 0; o < n->n_opnd; o++)
        if (n->opnd[o].kind == IND_OPND_LOAD)
          {
            ind_buffer *b = &p->bufs[n->opnd[o].buf];
            b->n_readers++;
            if (n->opnd[o].local < 0)
              b->stored = true;
            if (n->group > b->last_use)
              b->last_use = n->group;
          }
      if (n->call)
        for (int a = 0; a < n->call->n_args; a++)
          {
            int vws[256];
            int nv = 0;
            if (n->arg_views[a] >= 0)
              vws[nv++] = n->arg_views[a];
            if (n->arg_list_views[a])
              for (size_t k = 0; k < n->call->args[a].u.seq.n && nv < 256; k++)
                if (n->arg_list_views[a][k] >= 0)
                  vws[nv++] = n->arg_list_views[a][k];
            for (int k = 0; k < nv; k++)
              {
                ind_buffer *b = &p->bufs[p->views[vws[k]].buf];
                b->stored = true;
                b->n_readers++;
                if (n->group > b->last_use)
                  b->last_use = n->group;
              }
          }
    }
  for (int k = 0; k < p->n_outputs; k++)
    if (p->outputs[k] >= 0)
      p->bufs[p->views[p->outputs[k]].buf].stored = true;
  /* buffer reuse: computed, stored, non-output buffers share slots once their last reader has run */
  int *slot_free = calloc ((size_t) p->n_bufs + 1, sizeof (int));
  /* the group whose buffer took a slot in place: one slot is written over once per kernel (two outputs of one
     kernel over the same dead input would share memory) */
  int *slot_inplace_group = malloc (((size_t) p->n_bufs + 1) * sizeof (int));
  for (int s = 0; s <= p->n_bufs; s++)
    slot_inplace_group[s] = -1;
  p->slot_bytes = calloc ((size_t) p->n_bufs + 1, sizeof (int64_t));
  p->n_slots = 0;
  for (int g = 0; g < p->n_groups; g++)
    {
      for (int b = 0; b < p->n_bufs; b++)
        {
          ind_buffer *B = &p->bufs[b];
          if (B->kind != IND_BUF_COMPUTED || !B->stored || B->is_output || group_of_buf (p, b) != g)
            continue;
          int64_t need = 1;
          for (int d = 0; d < B->ndim; d++)
            need *= B->sizes[d];
          need *= (int64_t) fx_dtype_size (B->dtype);
          int best = -1;
          for (int s = 0; s < p->n_slots; s++)
            if (slot_free[s] && (best < 0 || p->slot_bytes[s] >= need))
              best = s;
          /* in place: an input of this kernel whose last reader is this kernel, read only at the index this
             buffer is written at, by nodes that run before the write */
          for (int a = 0; a < p->n_bufs && best < 0; a++)
            if (p->bufs[a].slot >= 0 && !slot_free[p->bufs[a].slot] && p->slot_bytes[p->bufs[a].slot] >= need
                && slot_inplace_group[p->bufs[a].slot] != g && inplace_ok (p, g, a, b))
              {
                best = p->bufs[a].slot;
                slot_inplace_group[best] = g;
                fx_buf_printf (&p->fusion_log, "inplace: buf%d is written over buf%d (slot %d)\n", b, a, best);
                slot_free[best] = 1;   /* taken below */
              }
          if (best < 0)
            {
              best = p->n_slots++;
              p->slot_bytes[best] = 0;
            }
          else
            fx_buf_printf (&p->fusion_log, "reuse: buf%d takes the memory of a dead buffer (slot %d)\n", b, best);
          slot_free[best] = 0;
          if (p->slot_bytes[best] < need)
            p->slot_bytes[best] = need;
          B->slot = best;
        }
      /* a slot is free once every buffer that ever held it is dead */
      for (int sl = 0; sl < p->n_slots; sl++)
        {
          bool live = false;
          for (int b = 0; b < p->n_bufs && !live; b++)
            live = p->bufs[b].slot == sl && p->bufs[b].last_use > g;
          slot_free[sl] = !live;
        }
    }
  /* never-read, non-output computed buffers still need somewhere to go when stored: none are stored */
  free (slot_free);
  free (slot_inplace_group);
  name_groups (p);
  return FX_OK;
}

/* ---------------------------------------------------------------- IR dumps (ir_pre_fusion.txt / ir_post_fusion.txt) */

static void
dump_index (const int64_t *coef, int64_t off, int ndim, const char *var, fx_buf *out)
{
  bool any = false;
  for (int i = 0; i < ndim; i++)
    {
      if (coef[i] == 0)
        continue;
      if (any)
        fx_buf_puts (out, " + ");
      if (coef[i] == 1)
        fx_buf_printf (out, "%s%d", var, i);
      else
        fx_buf_printf (out, "%lld*%s%d", (long long) coef[i], var, i);
      any = true;
    }
  if (off != 0 || !any)
    fx_buf_printf (out, "%s%lld", any ? " + " : "", (long long) off);
}

static void
dump_layout (const ind_buffer *b, fx_buf *out)
{
  fx_buf_printf (out, "FixedLayout('cpu', torch.%s, size=[", fx_dtype_name (b->dtype));
  ind_put_ints (out, b->sizes, b->ndim);
  fx_buf_puts (out, "], stride=[");
  ind_put_ints (out, b->strides, b->ndim);
  fx_buf_puts (out, "])");
}

static const char *
red_name (ind_red r)
{
  switch ((int) r)
    {
    case IND_RED_SUM: return "sum";
    case IND_RED_PROD: return "prod";
    case IND_RED_MAX: return "max";
    case IND_RED_MIN: return "min";
    case IND_RED_MEAN: return "mean";
    case IND_RED_ANY: return "any";
    case IND_RED_ALL: return "all";
    case IND_RED_WELFORD_VAR: return "welford_reduce";
    case IND_RED_ARGMAX: return "argmax";
    case IND_RED_ARGMIN: return "argmin";
    default: return "none";
    }
}

static void
buf_name (const ind_program *p, int b, fx_buf *out)
{
  if (p->bufs[b].kind == IND_BUF_INPUT)
    fx_buf_printf (out, "arg%d_1", p->bufs[b].input_index);
  else
    fx_buf_printf (out, "buf%d", b);
}

static void
dump_node (const ind_program *p, int i, fx_buf *out)
{
  const ind_node *n = &p->nodes[i];
  const char *cls = n->kind == IND_NODE_EXTERN ? "ExternKernelSchedulerNode(ExternKernelOut)"
                    : n->kind == IND_NODE_FALLBACK ? "ExternKernelSchedulerNode(FallbackKernel)"
                    : "SchedulerNode(ComputedBuffer)";
  fx_buf_printf (out, "op%d: %s\n", i, cls);
  fx_buf_printf (out, "op%d.origins = [", i);
  for (size_t k = 0; k < n->n_origins; k++)
    {
      fx_buf_puts (out, k ? ", " : "");
      fx_py_str_repr (n->origins[k], out);
    }
  fx_buf_puts (out, "]\n");
  if (n->kind == IND_NODE_EXTERN || n->kind == IND_NODE_FALLBACK)
    {
      fx_buf_printf (out, "op%d.node.kernel = %s\n", i, fx_op_get ((fx_op_id) n->op_id)->target);
      for (int k = 0; k < n->n_outs; k++)
        if (n->out_bufs[k] >= 0)
          {
            fx_buf_printf (out, "buf%d_layout = ", n->out_bufs[k]);
            dump_layout (&p->bufs[n->out_bufs[k]], out);
            fx_buf_putc (out, '\n');
          }
      fx_buf_putc (out, '\n');
      return;
    }
  int kept = n->ndim - n->nred;
  fx_buf_printf (out, "op%d.group.device = cpu\nop%d.group.iteration = ((", i, i);
  int64_t xn = 1, rn = 1;
  for (int d = 0; d < kept; d++)
    xn *= n->sizes[d];
  for (int d = kept; d < n->ndim; d++)
    rn *= n->sizes[d];
  fx_buf_printf (out, "%lld,), (", (long long) xn);
  if (n->nred)
    fx_buf_printf (out, "%lld,", (long long) rn);
  fx_buf_puts (out, "))\n");
  fx_buf_printf (out, "buf%d_layout = ", n->out_buf);
  dump_layout (&p->bufs[n->out_buf], out);
  fx_buf_printf (out, "\nclass op%d_loop_body:\n    var_ranges = {", i);
  for (int d = 0; d < n->ndim; d++)
    fx_buf_printf (out, "%sp%d: %lld", d ? ", " : "", d, (long long) n->sizes[d]);
  fx_buf_puts (out, "}\n    def body(self, ops):\n");
  for (int o = 0; o < n->n_opnd; o++)
    {
      const ind_operand *op = &n->opnd[o];
      if (op->kind == IND_OPND_CONST)
        {
          fx_buf_printf (out, "        opnd%d = ops.constant(", o);
          fx_py_float_repr (op->c, out);
          fx_buf_printf (out, ", torch.%s)\n", fx_dtype_name (op->cast));
          continue;
        }
      if (op->indirect)
        fx_buf_printf (out, "        index%d = ops.indirect_indexing(opnd%d, %lld)\n", o, op->idx_opnd,
                       (long long) op->idx_bound);
      fx_buf_printf (out, "        opnd%d = ops.load('", o);
      buf_name (p, op->buf, out);
      fx_buf_puts (out, "', ");
      dump_index (op->coef, op->offset, n->ndim, "p", out);
      if (op->indirect)
        fx_buf_printf (out, " + %lld*index%d", (long long) op->idx_stride, o);
      fx_buf_puts (out, ")");
      if (op->local >= 0 && n->group >= 0)
        fx_buf_printf (out, "  # in-register from op%d", op->local);
      fx_buf_putc (out, '\n');
    }
  fx_buf_printf (out, "        value = ops.%s(", n->op_name);
  for (int o = 0; o < n->n_opnd; o++)
    fx_buf_printf (out, "%sopnd%d", o ? ", " : "", o);
  fx_buf_puts (out, ")\n");
  int64_t sc[IND_MAXD];
  store_coef (p, n, sc);
  if (n->kind == IND_NODE_REDUCTION)
    {
      fx_buf_printf (out, "        reduction = ops.reduction(torch.%s, torch.%s, '%s', value)\n",
                     fx_dtype_name (n->out_dtype), fx_dtype_name (n->compute_dtype), red_name (n->red));
      fx_buf_printf (out, "        store_reduction = ops.store_reduction('buf%d', ", n->out_buf);
      dump_index (sc, 0, kept, "p", out);
      fx_buf_puts (out, ", reduction)\n        return None\n\n");
    }
  else
    {
      fx_buf_printf (out, "        store = ops.store('buf%d', ", n->out_buf);
      dump_index (sc, 0, n->ndim, "p", out);
      fx_buf_puts (out, ", value, None)\n        return store\n\n");
    }
}

void
ind_dump_ir (const ind_program *p, bool post_fusion, fx_buf *out)
{
  if (!post_fusion)
    {
      for (int i = 0; i < p->n_nodes; i++)
        dump_node (p, i, out);
      return;
    }
  for (int g = 0; g < p->n_groups; g++)
    {
      const ind_group *G = &p->groups[g];
      if (G->n_nodes == 1)
        {
          dump_node (p, G->nodes[0], out);
          continue;
        }
      fx_buf_puts (out, "op");
      for (int k = 0; k < G->n_nodes; k++)
        fx_buf_printf (out, "%s%d", k ? "_op" : "", G->nodes[k]);
      fx_buf_puts (out, ": FusedSchedulerNode(");
      for (int k = 0; k < G->n_nodes; k++)
        fx_buf_printf (out, "%sSchedulerNode", k ? "," : "");
      fx_buf_printf (out, ")\n# kernel %s: X = [", G->name);
      ind_put_ints (out, G->xs, G->kx);
      fx_buf_puts (out, "], R = [");
      ind_put_ints (out, G->rs, G->kr);
      fx_buf_printf (out, "], %d segment(s)\n", G->n_segs);
      for (int k = 0; k < G->n_nodes; k++)
        {
          fx_buf_puts (out, "snodes[");
          fx_buf_printf (out, "%d] =\n", k);
          dump_node (p, G->nodes[k], out);
        }
    }
}
