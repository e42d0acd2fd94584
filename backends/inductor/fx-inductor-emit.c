/* fx-inductor-emit.c: what the C and the CUDA generators (and the GPU run-time) share: index coefficients of a node
   split over a kernel's x / r variables, index expressions, parameter names, a node's value with its operands, the
   bytes a buffer spans, and the check of a run's inputs against the compiled buffers. */
#include "fx-inductor-impl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void
ind_indent (int depth, fx_buf *out)
{
  for (int i = 0; i < depth; i++)
    fx_buf_puts (out, "  ");
}

void
ind_printf (int depth, fx_buf *out, const char *fmt, ...)
{
  ind_indent (depth, out);
  va_list ap;
  va_start (ap, fmt);
  fx_buf_vprintf (out, fmt, ap);
  va_end (ap);
}

void *
ind_grow (void *items, int n, int *cap, size_t item, int first)
{
  if (n < *cap)
    return items;
  *cap = *cap ? *cap * 2 : first;
  return realloc (items, item * (size_t) *cap);
}

const char *
ind_dtype_limit (fx_dtype d, bool highest, bool cuda)
{
  static const struct
  {
    fx_dtype dtype;
    const char *c_low, *c_high, *cuda_low, *cuda_high;
  } ints[] = {
    { FX_DTYPE_I64, "INT64_MIN", "INT64_MAX", "(-9223372036854775807LL - 1)", "9223372036854775807LL" },
    { FX_DTYPE_I32, "INT32_MIN", "INT32_MAX", "(-2147483647 - 1)", "2147483647" },
    { FX_DTYPE_I16, "INT16_MIN", "INT16_MAX", "-32768", "32767" },
    { FX_DTYPE_I8, "INT8_MIN", "INT8_MAX", "-128", "127" },
    { FX_DTYPE_U8, "0", "UINT8_MAX", "0", "255" },
  };
  if (fx_dtype_is_floating (d))
    return highest ? "INFINITY" : "-INFINITY";
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (ints[i].dtype == d)
      return cuda ? (highest ? ints[i].cuda_high : ints[i].cuda_low) : (highest ? ints[i].c_high : ints[i].c_low);
  return highest ? "1" : "0";
}

int64_t
ind_numel (const int64_t *sizes, int nd)
{
  int64_t n = 1;
  for (int d = 0; d < nd; d++)
    n *= sizes[d];
  return n;
}

uint64_t
ind_fnv1a (uint64_t h, const void *data, size_t len)
{
  const unsigned char *s = data;
  for (size_t i = 0; i < len; i++)
    {
      h ^= s[i];
      h *= 1099511628211ULL;
    }
  return h;
}

void
ind_put_ints (fx_buf *out, const int64_t *v, int n)
{
  for (int d = 0; d < n; d++)
    fx_buf_printf (out, "%s%lld", d ? ", " : "", (long long) v[d]);
}

int
ind_group_next (const ind_program *p, const ind_group *G, int seg, int kind, int *k)
{
  for (; *k < G->n_nodes; ++*k)
    {
      int ni = G->nodes[*k];
      const ind_node *n = &p->nodes[ni];
      if (n->segment == seg && (kind < 0 || (int) n->kind == kind))
        {
          ++*k;
          return ni;
        }
    }
  return -1;
}

int
ind_group_next_red (const ind_program *p, const ind_group *G, int seg, ind_red red, int *k)
{
  int ni;
  while ((ni = ind_group_next (p, G, seg, IND_NODE_REDUCTION, k)) >= 0 && p->nodes[ni].red != red)
    ;
  return ni;
}

void
ind_split_coef (const ind_node *n, const int64_t *coef, int kx, int64_t *xc, int64_t *rc)
{
  memset (xc, 0, sizeof (int64_t) * IND_MAXD);
  memset (rc, 0, sizeof (int64_t) * IND_MAXD);
  int j = 0;
  for (int i = 0; i < n->ndim; i++)
    {
      if (n->sizes[i] == 1)
        continue;
      if (j < kx)
        xc[j] = coef[i];
      else
        rc[j - kx] = coef[i];
      j++;
    }
}

bool
ind_group_next_load (const ind_program *p, const ind_group *G, ind_load_walk *w)
{
  for (; w->k < G->n_nodes; w->k++, w->o = 0)
    {
      const ind_node *n = &p->nodes[G->nodes[w->k]];
      while (w->o < n->n_opnd)
        {
          const ind_operand *op = &n->opnd[w->o++];
          if (op->kind != IND_OPND_LOAD || op->local >= 0)
            continue;
          w->n = n;
          w->op = op;
          ind_split_coef (n, op->coef, G->kx, w->xc, w->rc);
          return true;
        }
    }
  return false;
}

void
ind_node_store_coef (const ind_node *n, int64_t *coef)
{
  memset (coef, 0, sizeof (int64_t) * IND_MAXD);
  int kept = n->ndim - n->nred;
  int64_t st = 1;
  for (int i = kept - 1; i >= 0; i--)
    {
      coef[i] = n->sizes[i] == 1 ? 0 : st;
      st *= n->sizes[i];
    }
}

static void
put_const (const ind_index_style *style, int64_t v, fx_buf *out)
{
  fx_buf_printf (out, style && style->index32 ? "%lld" : "%lldLL", (long long) v);
}

/* The terms coef[i] * <var>i of one kind of variable (x or r); BASE names the variable written <var>ib. */
static void
put_terms (char var, const int64_t *coef, int n, int base, const ind_index_style *style, bool *any, fx_buf *out)
{
  for (int i = 0; i < n; i++)
    if (coef[i])
      {
        fx_buf_printf (out, "%s%c%d%s", *any ? " + " : "", var, i, base == i ? "b" : "");
        if (coef[i] != 1)
          {
            fx_buf_puts (out, " * ");
            put_const (style, coef[i], out);
          }
        *any = true;
      }
}

void
ind_put_index (const int64_t *xc, int kx, const int64_t *rc, int kr, int64_t off, const ind_index_style *style,
               fx_buf *out)
{
  bool any = false;
  put_terms ('x', xc, kx, style ? style->base_x : -1, style, &any, out);
  put_terms ('r', rc, kr, style ? style->base_r : -1, style, &any, out);
  if (off || !any)
    {
      fx_buf_puts (out, any ? " + " : "");
      put_const (style, off, out);
    }
}

void
ind_param_name (const ind_kernel_params *kp, int buf, fx_buf *out)
{
  fx_buf_printf (out, "%s%d", kp->buf_written[buf] ? "out_ptr" : "in_ptr", kp->buf_param[buf]);
}

void
ind_node_value (const ind_program *p, const ind_node *n, bool recomputing, ind_load_fn load, void *ctx, fx_buf *out)
{
  fx_buf texts[IND_MAX_OPERANDS];
  const char *tp[IND_MAX_OPERANDS];
  for (int o = 0; o < n->n_opnd; o++)
    {
      fx_buf_init (&texts[o]);
      const ind_operand *op = &n->opnd[o];
      if (op->kind == IND_OPND_LOAD)
        {
          const ind_node *src = op->local >= 0 ? &p->nodes[op->local] : NULL;
          /* a value from a register of another segment (or, recomputing, any r-level value) is evaluated again */
          bool again = src && (op->recompute || (recomputing && src->kind == IND_NODE_POINTWISE && !src->xlevel));
          if (again)
            ind_node_value (p, src, true, load, ctx, &texts[o]);
          else if (op->local >= 0)
            fx_buf_printf (&texts[o], "tmp%d", op->local);
          else
            /* an index operand comes before the load it indexes (lowering puts it first) */
            load (ctx, n, op, op->indirect && op->idx_opnd < o ? texts[op->idx_opnd].data : NULL, &texts[o]);
        }
      tp[o] = texts[o].data ? texts[o].data : "";
    }
  ind_node_expr (p, n, tp, out);
  for (int o = 0; o < n->n_opnd; o++)
    fx_buf_free (&texts[o]);
}

int64_t
ind_buffer_extent_bytes (const ind_buffer *B)
{
  int64_t hi = 1;
  for (int d = 0; d < B->ndim; d++)
    {
      if (B->sizes[d] == 0)
        return 0;
      hi += (B->sizes[d] - 1) * (B->strides[d] < 0 ? -B->strides[d] : B->strides[d]);
    }
  return hi * (int64_t) fx_dtype_size (B->dtype);
}

int64_t
ind_buffer_bytes (const ind_program *p, int b)
{
  const ind_buffer *B = &p->bufs[b];
  return B->slot >= 0 ? p->slot_bytes[B->slot] : ind_buffer_extent_bytes (B);
}

bool
ind_same_layout (const fx_tensor *t, const ind_buffer *b)
{
  if (t->dtype != b->dtype || t->ndim != b->ndim)
    return false;
  for (int d = 0; d < b->ndim; d++)
    if (t->sizes[d] != b->sizes[d] || (b->sizes[d] != 1 && t->strides[d] != b->strides[d]))
      return false;
  return true;
}

fx_status
ind_check_input (const ind_buffer *B, const fx_value *inputs, size_t n_inputs, fx_tensor **t, fx_diag *diag)
{
  *t = NULL;
  if ((size_t) B->input_index >= n_inputs || inputs[B->input_index].kind != FX_VALUE_TENSOR)
    return fx_diag_set (diag, FX_ERR_INVALID, "inductor: input %d is missing or not a tensor", B->input_index);
  fx_tensor *x = inputs[B->input_index].u.t;
  bool shape_ok = x->dtype == B->dtype && x->ndim == B->ndim;
  for (int d = 0; shape_ok && d < B->ndim; d++)
    shape_ok = x->sizes[d] == B->sizes[d];
  if (!shape_ok)
    {
      fx_buf want;
      fx_buf_init (&want);
      fx_tensor_describe (x, &want);
      fx_status st = fx_diag_set (diag, FX_ERR_INVALID, "inductor: input %d is %s; the graph was compiled for "
                                  "another shape or dtype (recompile)", B->input_index, want.data);
      fx_buf_free (&want);
      return st;
    }
  *t = x;
  return FX_OK;
}

/* An index as the engine's kernel would report it (fx-ops-shape.c: embedding, index_select and gather). */
fx_status
ind_index_error (const ind_program *p, int check, int64_t k, fx_diag *diag)
{
  if (check < 0 || check >= p->n_index_checks)
    return fx_diag_set (diag, FX_ERR_BACKEND, "inductor: a kernel read an index out of range (%lld)", (long long) k);
  const ind_index_check *c = &p->index_checks[check];
  if (c->op_id == FX_OP_EMBEDDING)
    return fx_diag_set (diag, FX_ERR_INVALID, "inductor: node '%s': index out of range in self (index %lld, %lld rows)",
                        c->node, (long long) k, (long long) c->bound);
  if (c->op_id == FX_OP_INDEX_SELECT)
    return fx_diag_set (diag, FX_ERR_INVALID, "inductor: node '%s': index out of range in self (index %lld, "
                        "dimension %lld of size %lld)", c->node, (long long) k, (long long) c->dim,
                        (long long) c->bound);
  return fx_diag_set (diag, FX_ERR_INVALID, "inductor: node '%s': index %lld is out of bounds for dimension %lld "
                      "with size %lld", c->node, (long long) k, (long long) c->dim, (long long) c->bound);
}

fx_status
ind_check_indices (const ind_program *p, void *const *bufs, fx_diag *diag)
{
  for (int i = 0; i < p->n_index_checks; i++)
    {
      const ind_index_check *c = &p->index_checks[i];
      if (c->view < 0)
        continue;   /* computed in a kernel, checked there */
      const ind_view *v = &p->views[c->view];
      const char *data = bufs[v->buf];
      fx_dtype dt = p->bufs[v->buf].dtype;
      int64_t n = ind_numel (v->sizes, v->ndim);
      if (n == 0)
        continue;
      if (data == NULL)
        return fx_diag_set (diag, FX_ERR_INVALID, "inductor: node '%s': its indices are not bound", c->node);
      /* every element of the view, in an odometer over its dims */
      int64_t coord[IND_MAXD] = { 0 }, off = v->offset;
      for (int64_t e = 0; e < n; e++)
        {
          int64_t k = dt == FX_DTYPE_I32 ? ((const int32_t *) data)[off] : ((const int64_t *) data)[off];
          if (k < 0 || k >= c->bound)
            return ind_index_error (p, i, k, diag);
          for (int d = v->ndim - 1; d >= 0; d--)
            {
              off += v->strides[d];
              if (++coord[d] < v->sizes[d])
                break;
              off -= v->strides[d] * v->sizes[d];
              coord[d] = 0;
            }
        }
    }
  return FX_OK;
}
