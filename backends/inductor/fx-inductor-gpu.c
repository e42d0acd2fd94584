/* fx-inductor-gpu.c: the inductor backend on a CUDA device: the scheduled program becomes an fx_cuda_program
   (NVRTC-built kernels from fx-inductor-cuda.c, cuBLASLt GEMMs with bias and residual epilogues for extern
   mm/addmm/bmm, buffers from the caching allocator), runs eagerly or as a CUDA graph (reduce-overhead), is autotuned
   per kernel and per GEMM algorithm (max-autotune) and timed per kernel with CUDA events. Host inputs are copied in
   and outputs copied back; device inputs are used in place.
   Under reduce-overhead the outputs of device inputs are the CUDA graph's static buffers (no copy): valid until the
   next run of the same compiled graph, which overwrites them; a stale one is refused with PyTorch's error. */
#include "fx-inductor-impl.h"
#include "cuda/fx-cuda.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CONFIGS 8

struct ind_gpu
{
  fx_cuda *cuda;
  fx_cuda_program *prog;
  ind_cuda_plan plan;
  int *pbuf;                /* per program buffer of the loop IR: the fx_cuda_program buffer, or -1 */
  int *input_bufs;          /* program input k: the IR buffer */
  int n_inputs;
  int *output_bufs;         /* program output k: the IR buffer */
  int n_outputs;
  int *step_kernel;         /* per program step: the compiled kernel index it belongs to */
  size_t n_steps, cap_steps;
  double *kernel_ms;
  size_t n_kernels;
  bool graphs;              /* reduce-overhead asked for and not skipped */
  struct host_node *hosts;  /* fallback nodes run on the host (program host steps point into this) */
  int n_hosts;
  fx_generator gen;         /* random fallback nodes draw from it */
  const ind_program *ir;    /* the program of the run under way (the compiled state owns a copy made after the
                               compile: the compile's pointer does not outlive it), for the host steps */
  int gemm_algos;           /* cuBLASLt heuristic results kept per GEMM: 1, or more under max-autotune */
  int *gemm_step;           /* per group: the program step of its GEMM, or -1 */
};

/* max-autotune times this many of cuBLASLt's heuristic results per GEMM */
#define GEMM_AUTOTUNE_ALGOS 8

static fx_cuda_gemm_plan *
gemm_plan_of (const ind_gpu *gpu, int g)
{
  return gpu->gemm_step && gpu->gemm_step[g] >= 0 ? fx_cuda_program_gemm_plan (gpu->prog, (size_t) gpu->gemm_step[g])
                                                  : NULL;
}

/* One device handle per ordinal for the whole process: output tensors of a run stay valid after the compiled
   object that made them is freed. */
static fx_cuda *shared_cuda[16];
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

static fx_status
open_device (int ordinal, fx_cuda **out, fx_diag *diag)
{
  fx_status st = FX_OK;
  if (ordinal < 0 || ordinal >= 16)
    ordinal = 0;
  pthread_mutex_lock (&shared_lock);
  if (shared_cuda[ordinal] == NULL)
    st = fx_cuda_open (ordinal, &shared_cuda[ordinal], diag);
  *out = shared_cuda[ordinal];
  pthread_mutex_unlock (&shared_lock);
  return st;
}

bool
ind_gpu_wanted (const fx_value *inputs, size_t n_inputs, const ind_options *opt, int *ordinal)
{
  *ordinal = 0;
  for (size_t i = 0; i < n_inputs; i++)
    if (inputs[i].kind == FX_VALUE_TENSOR && inputs[i].u.t->device.type == FX_DEVICE_CUDA)
      {
        *ordinal = inputs[i].u.t->device.index > 0 ? inputs[i].u.t->device.index : 0;
        return true;
      }
  const char *d = opt->device;
  if (d == NULL)
    return false;
  if (strncmp (d, "cuda", 4) != 0)
    return false;
  if (d[4] == ':')
    *ordinal = atoi (d + 5);
  return true;
}

static size_t
nonzero (int64_t bytes)
{
  return bytes < 16 ? 16 : (size_t) bytes;
}

/* ---------------------------------------------------------------- program construction */

static void
note_step (ind_gpu *gpu, int kernel)
{
  if (gpu->n_steps == gpu->cap_steps)
    {
      gpu->cap_steps = gpu->cap_steps ? gpu->cap_steps * 2 : 16;
      gpu->step_kernel = realloc (gpu->step_kernel, sizeof (int) * gpu->cap_steps);
    }
  gpu->step_kernel[gpu->n_steps++] = kernel;
}

static fx_cuda_buffer_matrix
view_matrix (const ind_gpu *gpu, const ind_program *p, int view, int first_dim)
{
  const ind_view *v = &p->views[view];
  fx_cuda_buffer_matrix m;
  memset (&m, 0, sizeof m);
  m.buffer = gpu->pbuf[v->buf];
  m.offset = (size_t) v->offset * fx_dtype_size (p->bufs[v->buf].dtype);
  int nd = v->ndim - first_dim;
  if (nd == 1)
    {
      m.rows = 1;
      m.cols = v->sizes[first_dim];
      m.col_stride = v->strides[first_dim];
      m.row_stride = m.cols;
    }
  else
    {
      m.rows = v->sizes[first_dim];
      m.cols = v->sizes[first_dim + 1];
      m.row_stride = v->strides[first_dim];
      m.col_stride = v->strides[first_dim + 1];
    }
  /* cuBLAS needs one unit stride; a size-1 dimension's stride is free */
  if (m.rows == 1)
    m.row_stride = m.col_stride == 1 ? m.cols : 1;
  if (m.cols == 1)
    m.col_stride = m.row_stride == 1 ? m.rows : 1;
  if (first_dim == 1)
    m.batch_stride = v->sizes[0] == 1 ? 0 : v->strides[0];
  return m;
}

static double
call_scalar (const ind_node *n, const char *name, double fallback)
{
  const fx_op_schema *s = fx_op_get_schema (n->call->op->id);
  for (int i = 0; i < s->n_args && i < n->call->n_args; i++)
    if (strcmp (s->args[i].name, name) == 0)
      {
        const fx_value *v = &n->call->args[i];
        if (v->kind == FX_VALUE_INT || v->kind == FX_VALUE_FLOAT || v->kind == FX_VALUE_BOOL)
          return fx_value_as_f64 (v);
      }
  return fallback;
}

/* A load that reads element (i, j) of a [rows, cols] iteration at offset + i * rs + j * cs (size-1 dims free). */
static bool
loads_matrix (const ind_operand *o, const int64_t *sizes, int64_t rs, int64_t cs)
{
  return o->kind == IND_OPND_LOAD && o->local < 0 && !o->recompute && (sizes[0] == 1 || o->coef[0] == rs)
         && (sizes[1] == 1 || o->coef[1] == cs);
}

bool
ind_gpu_residual_match (const ind_program *p, const int *pbuf, int g, ind_gpu_residual *out)
{
  memset (out, 0, sizeof *out);
  if (g < 0 || g + 1 >= p->n_groups || !p->groups[g].is_extern || p->groups[g + 1].is_extern
      || p->groups[g + 1].n_nodes != 1)
    return false;
  const ind_node *n = &p->nodes[p->groups[g].nodes[0]];
  const ind_node *m = &p->nodes[p->groups[g + 1].nodes[0]];
  int op = n->call ? n->call->op->id : -1;
  if (n->kind != IND_NODE_EXTERN || (op != FX_OP_MM && op != FX_OP_ADDMM))
    return false;
  int e = n->out_buf;
  const ind_buffer *E = &p->bufs[e];
  fx_dtype dt = E->dtype;
  if (E->ndim != 2 || E->is_output || E->n_readers != 1 || E->strides[1] != 1 || E->strides[0] != E->sizes[1])
    return false;
  /* the consumer: one node computing `a + b` (add.Tensor, alpha 1) in the GEMM's dtype over its shape */
  if (m->kind != IND_NODE_POINTWISE || m->op_id != FX_OP_ADD_TENSOR || !m->tmpl || strcmp (m->tmpl, "$0 + $1") != 0
      || m->n_opnd != 2 || m->nred != 0 || m->out_dtype != dt || m->compute_dtype != dt || m->ndim != 2
      || m->sizes[0] != E->sizes[0] || m->sizes[1] != E->sizes[1])
    return false;
  int oe = m->opnd[0].kind == IND_OPND_LOAD && m->opnd[0].buf == e ? 0 : 1;
  int ox = 1 - oe;
  const ind_operand *le = &m->opnd[oe], *lx = &m->opnd[ox];
  if (le->kind != IND_OPND_LOAD || le->buf != e || le->offset != 0 || lx->kind != IND_OPND_LOAD || lx->buf == e)
    return false;
  const ind_buffer *D = &p->bufs[m->out_buf], *X = &p->bufs[lx->buf];
  if (D->ndim != 2 || D->dtype != dt || X->dtype != dt || D->strides[0] != E->strides[0] || D->strides[1] != 1)
    return false;
  if (!loads_matrix (le, m->sizes, E->strides[0], 1) || !loads_matrix (lx, m->sizes, D->strides[0], 1)
      || lx->offset < 0)
    return false;
  int pd = pbuf[m->out_buf], px = pbuf[lx->buf];
  if (pd < 0 || px < 0)
    return false;
  /* the GEMM now writes D where it ran: D must not be memory the GEMM reads (a reused slot of a, b or the bias) */
  for (int a = 0; a < n->call->n_args; a++)
    if (n->arg_views[a] >= 0 && pbuf[p->views[n->arg_views[a]].buf] == pd)
      return false;
  out->consumer = g + 1;
  out->x_buf = lx->buf;
  out->x_offset = lx->offset;
  out->d_buf = m->out_buf;
  return true;
}

/* mm, addmm, bmm through GEMM plans (cuBLASLt, else cuBLAS): addmm's 1-D bias as the BIAS epilogue, a full-shape
   bias of the output's layout as beta * C, and with `res` the residual add of the next kernel as C (out of place).
   Anything else: FX_ERR_UNSUPPORTED naming the node (add_extern runs it on the host). */
static fx_status
add_gemm (ind_gpu *gpu, const ind_program *p, const ind_node *n, const ind_group *G, int kernel,
            const ind_gpu_residual *res, fx_diag *diag)
{
  int op = n->call ? n->call->op->id : -1;
  const char *origin = n->n_origins ? n->origins[0] : "?";
  if (n->kind != IND_NODE_EXTERN || (op != FX_OP_MM && op != FX_OP_ADDMM && op != FX_OP_BMM))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): no GPU kernel for %s (node '%s'); only loop "
                        "kernels and mm/addmm/bmm run on the device", n->call ? n->call->op->target : n->op_name,
                        origin);
  fx_dtype dt = p->bufs[n->out_buf].dtype;
  if (dt != FX_DTYPE_F32 && dt != FX_DTYPE_F64)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): %s of %s (node '%s') is not supported on the GPU",
                        n->op_name, fx_dtype_name (dt), origin);
  /* the output is the extern buffer itself (contiguous as planned), or the residual add's */
  int out_buf = res ? res->d_buf : n->out_buf;
  const ind_buffer *OB = &p->bufs[out_buf];
  fx_cuda_buffer_matrix c;
  memset (&c, 0, sizeof c);
  c.buffer = gpu->pbuf[out_buf];
  int fd = op == FX_OP_BMM ? 1 : 0;
  c.rows = OB->sizes[fd];
  c.cols = OB->sizes[fd + 1];
  c.row_stride = OB->strides[fd];
  c.col_stride = OB->strides[fd + 1];
  c.batch_stride = fd ? OB->strides[0] : 0;
  int a_arg = op == FX_OP_ADDMM ? 1 : 0;
  if (n->arg_views[a_arg] < 0 || n->arg_views[a_arg + 1] < 0)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): %s (node '%s') has no tensor operands",
                        n->op_name, origin);
  fx_cuda_buffer_matrix a = view_matrix (gpu, p, n->arg_views[a_arg], fd);
  fx_cuda_buffer_matrix b = view_matrix (gpu, p, n->arg_views[a_arg + 1], fd);
  if (a.buffer < 0 || b.buffer < 0 || c.buffer < 0)
    return fx_diag_set (diag, FX_ERR_BACKEND, "inductor (cuda): %s (node '%s'): an operand has no device buffer",
                        n->op_name, origin);
  if ((a.row_stride != 1 && a.col_stride != 1) || (b.row_stride != 1 && b.col_stride != 1))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): %s (node '%s'): an operand has no unit stride",
                        n->op_name, origin);
  fx_cuda_program_gemm gm;
  memset (&gm, 0, sizeof gm);
  gm.label = G->name;
  gm.op = op == FX_OP_ADDMM ? "addmm" : op == FX_OP_BMM ? "bmm" : "mm";
  gm.dtype = dt;
  gm.batch = fd ? OB->sizes[0] : 1;
  gm.alpha = 1;
  gm.a = a;
  gm.b = b;
  gm.d = c;
  gm.max_algos = gpu->gemm_algos;
  if (res)
    {
      gm.has_c = true;
      gm.beta = 1;
      gm.c = c;
      gm.c.buffer = gpu->pbuf[res->x_buf];
      gm.c.offset = (size_t) res->x_offset * fx_dtype_size (dt);
    }
  fx_status st;
  if (op == FX_OP_ADDMM)
    {
      double bb = call_scalar (n, "beta", 1), aa = call_scalar (n, "alpha", 1);
      if (n->arg_views[0] < 0)
        return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): addmm (node '%s') bias is not a tensor", origin);
      const ind_view *bv = &p->views[n->arg_views[0]];
      fx_cuda_buffer_matrix bias = view_matrix (gpu, p, n->arg_views[0], 0);
      if (bias.rows == 1 && bias.cols == 1 && bv->ndim == 0)
        bias.col_stride = 1;
      gm.alpha = aa;
      /* PyTorch's addmm with a 1-D bias: cuBLASLt's BIAS epilogue (bias[j] added to every row, unscaled) */
      bool row_bias = bb == 1.0 && bias.rows == 1 && bias.cols == c.cols && (bias.cols == 1 || bias.col_stride == 1)
                      && c.col_stride == 1 && bias.buffer >= 0;
      /* a bias of the output's own layout is beta * C (PyTorch copies it into the output; C needs no copy) */
      bool full_bias = !res && bias.rows == c.rows && bias.cols == c.cols && bias.row_stride == c.row_stride
                       && bias.col_stride == c.col_stride && bias.buffer >= 0;
      if (row_bias)
        {
          gm.has_bias = true;
          gm.bias_buffer = bias.buffer;
          gm.bias_offset = bias.offset;
        }
      else if (full_bias)
        {
          gm.has_c = true;
          gm.beta = bb;
          gm.c = bias;
        }
      else if (res)
        return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): addmm's bias does not fit the residual "
                            "epilogue");
      else
        {
          /* the bias broadcast into the output, then the GEMM accumulates onto it */
          if ((st = fx_cuda_program_add_broadcast (gpu->prog, G->name, dt, &bias, bb, &c, diag)) != FX_OK)
            return st;
          note_step (gpu, kernel);
          gm.has_c = true;
          gm.beta = 1;
          gm.c = c;
        }
    }
  if ((st = fx_cuda_program_add_gemm_ex (gpu->prog, &gm, diag)) != FX_OK)
    return st;
  note_step (gpu, kernel);
  return FX_OK;
}

typedef struct host_node
{
  ind_gpu *gpu;
  int node;
} host_node;

/* Copies buffer b (its whole planned extent) from the device to a new host tensor in bt[b], once. */
static fx_status
host_buffer (const host_node *h, const fx_cuda_ptr *ptrs, int b, fx_tensor **bt, fx_diag *diag)
{
  if (b < 0 || bt[b])
    return FX_OK;
  const ind_buffer *B = &h->gpu->ir->bufs[b];
  if (h->gpu->pbuf[b] < 0)
    return fx_diag_set (diag, FX_ERR_BACKEND, "buf%d has no device memory", b);
  bt[b] = fx_tensor_new_strided (NULL, B->dtype, B->ndim, B->sizes, B->strides);
  if (bt[b] == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  size_t bytes = (size_t) ind_buffer_extent_bytes (B);
  return bytes ? fx_cuda_copy_d2h (h->gpu->cuda, NULL, fx_tensor_data (bt[b]), ptrs[h->gpu->pbuf[b]], bytes, diag)
               : FX_OK;
}

/* The program's host step for a node with no device kernel: its operands to the host, the engine's reference
   kernel, its outputs back into their device buffers (Inductor's fallback to ATen, with a copy each way). */
static fx_status
run_host_node (void *ctx, fx_cuda_stream *stream, const fx_cuda_ptr *ptrs, fx_diag *diag)
{
  const host_node *h = ctx;
  const ind_program *p = h->gpu->ir;
  if (p == NULL)
    return fx_diag_set (diag, FX_ERR_BACKEND, "inductor (cuda): a host step outside a run");
  const ind_node *n = &p->nodes[h->node];
  fx_diag why;
  fx_diag_clear (&why);
  fx_tensor **bt = calloc ((size_t) p->n_bufs + 1, sizeof (fx_tensor *));
  fx_arena *arena = fx_arena_new ();
  fx_status st = bt && arena ? fx_cuda_stream_synchronize (stream, &why) : fx_diag_set (&why, FX_ERR_NOMEM, "out of "
                                                                                        "host memory");
  for (int a = 0; st == FX_OK && n->call && a < n->call->n_args; a++)
    {
      if (n->arg_views[a] >= 0)
        st = host_buffer (h, ptrs, p->views[n->arg_views[a]].buf, bt, &why);
      else if (n->arg_list_views[a] && n->call->args[a].kind == FX_VALUE_LIST)
        for (size_t k = 0; st == FX_OK && k < n->call->args[a].u.seq.n; k++)
          if (n->arg_list_views[a][k] >= 0)
            st = host_buffer (h, ptrs, p->views[n->arg_list_views[a][k]].buf, bt, &why);
    }
  if (st == FX_OK)
    st = ind_run_node_host (p, h->node, &h->gpu->gen, bt, arena, &why);
  for (int k = 0; st == FX_OK && k < n->n_outs; k++)
    {
      int b = n->out_bufs[k];
      if (b < 0)
        continue;
      size_t bytes = (size_t) ind_buffer_extent_bytes (&p->bufs[b]);
      if (h->gpu->pbuf[b] < 0 || bt[b] == NULL)
        st = fx_diag_set (&why, FX_ERR_BACKEND, "output %d (buf%d) has no %s memory", k, b,
                          bt[b] ? "device" : "host");
      else if (bytes)
        st = fx_cuda_copy_h2d (h->gpu->cuda, NULL, ptrs[h->gpu->pbuf[b]], fx_tensor_data (bt[b]), bytes, &why);
    }
  for (int b = 0; bt && b < p->n_bufs; b++)
    if (bt[b])
      fx_tensor_unref (bt[b]);
  free (bt);
  if (arena)
    fx_arena_free (arena);
  if (st != FX_OK)
    {
      const char *origin = n->n_origins ? n->origins[0] : "?";
      fx_diag_set (diag, st, "inductor (cuda): fallback %s (node '%s') on the host: %s",
                   n->call ? n->call->op->target : n->op_name, origin, why.message[0] ? why.message
                                                                                      : fx_status_name (st));
      if (diag)
        snprintf (diag->node, sizeof diag->node, "%s", origin);
    }
  return st;
}

/* Collapses dims [lo, hi) of an iteration shape into one (size, stride per array) where every array walks them as
   one run; false when one does not. */
static bool
collapse_range (const int64_t *sizes, int lo, int hi, int64_t strides[3][IND_MAXD], int64_t *size, int64_t out[3])
{
  *size = 1;
  out[0] = out[1] = out[2] = 0;
  int inner = -1;
  for (int d = hi - 1; d >= lo; d--)
    {
      if (sizes[d] == 1)
        continue;
      for (int a = 0; a < 3; a++)
        if (inner >= 0 && strides[a][d] != strides[a][inner] * sizes[inner])
          return false;
      if (inner < 0)
        for (int a = 0; a < 3; a++)
          out[a] = strides[a][d];
      *size *= sizes[d];
      inner = d;
    }
  return true;
}

bool
ind_gpu_take_plan (const ind_program *p, const ind_node *n, fx_cuda_take_desc *t, int *src_view, int *idx_view)
{
  int op = n->call ? n->call->op->id : -1;
  if (op != FX_OP_EMBEDDING && op != FX_OP_INDEX_SELECT && op != FX_OP_GATHER)
    return false;
  bool emb = op == FX_OP_EMBEDDING;
  int src_arg = 0, idx_arg = emb ? 1 : 2;
  if (n->arg_views[src_arg] < 0 || n->arg_views[idx_arg] < 0 || n->out_buf < 0)
    return false;
  const ind_view *sv = &p->views[n->arg_views[src_arg]], *iv = &p->views[n->arg_views[idx_arg]];
  const ind_buffer *OB = &p->bufs[n->out_buf];
  int nd = OB->ndim;
  if (p->bufs[iv->buf].dtype != FX_DTYPE_I64 || p->bufs[sv->buf].dtype != OB->dtype || nd < 1 || nd > IND_MAXD)
    return false;
  int dim = 0;
  if (!emb)
    {
      if (n->call->args[1].kind != FX_VALUE_INT)
        return false;
      dim = (int) n->call->args[1].u.i;
      if (dim < 0)
        dim += sv->ndim;
      if (dim < 0 || dim >= sv->ndim || sv->ndim != nd)
        return false;
      if (op == FX_OP_INDEX_SELECT ? iv->ndim != 1 : iv->ndim != nd)
        return false;
    }
  else if (sv->ndim != 2 || nd != iv->ndim + 1)
    return false;
  /* per output dim: the strides of out, src and idx; the indexed range [m_lo, m_hi) */
  int m_lo = emb ? 0 : dim, m_hi = emb ? iv->ndim : dim + 1;
  int64_t str[3][IND_MAXD];
  for (int d = 0; d < nd; d++)
    {
      str[0][d] = OB->strides[d];
      bool indexed = d >= m_lo && d < m_hi;
      str[1][d] = indexed ? 0 : emb ? sv->strides[1] : sv->strides[d];
      str[2][d] = emb ? (indexed ? iv->strides[d] : 0)
                  : op == FX_OP_INDEX_SELECT ? (indexed ? iv->strides[0] : 0) : iv->strides[d];
    }
  memset (t, 0, sizeof *t);
  int64_t so[3], sm[3], sn[3];
  if (!collapse_range (OB->sizes, 0, m_lo, str, &t->outer, so) || !collapse_range (OB->sizes, m_lo, m_hi, str, &t->m, sm)
      || !collapse_range (OB->sizes, m_hi, nd, str, &t->inner, sn))
    return false;
  t->v = sv->sizes[emb ? 0 : dim];
  for (int a = 0; a < 3; a++)
    {
      int64_t *dst = a == 0 ? t->out_stride : a == 1 ? t->src_stride : t->idx_stride;
      dst[0] = so[a];
      dst[1] = sm[a];
      dst[2] = sn[a];
    }
  t->src_stride[1] = sv->strides[emb ? 0 : dim];   /* the indexed dim of src, scaled by k */
  *src_view = n->arg_views[src_arg];
  *idx_view = n->arg_views[idx_arg];
  return true;
}

bool
ind_gpu_argreduce_plan (const ind_program *p, const ind_node *n, fx_cuda_argreduce_desc *t, int *src_view,
                        int *val_buf, int *idx_buf)
{
  int op = n->call ? n->call->op->id : -1;
  if (op != FX_OP_MAX_DIM && op != FX_OP_MIN_DIM && op != FX_OP_ARGMAX && op != FX_OP_ARGMIN)
    return false;
  bool pair = op == FX_OP_MAX_DIM || op == FX_OP_MIN_DIM;
  if (n->arg_views == NULL || n->arg_views[0] < 0 || n->n_outs < (pair ? 2 : 1) || n->call->n_args < 2
      || n->call->args[1].kind != FX_VALUE_INT)
    return false;   /* argmax over all elements (dim None) stays on the host */
  const ind_view *sv = &p->views[n->arg_views[0]];
  fx_dtype dt = p->bufs[sv->buf].dtype;
  int vb = pair ? n->out_bufs[0] : -1, ib = n->out_bufs[pair ? 1 : 0];
  if ((dt != FX_DTYPE_F32 && dt != FX_DTYPE_F64) || ib < 0 || p->bufs[ib].dtype != FX_DTYPE_I64
      || (pair && (vb < 0 || p->bufs[vb].dtype != dt)))
    return false;
  int nd = sv->ndim, dim = (int) n->call->args[1].u.i;
  if (dim < 0)
    dim += nd;
  if (nd < 1 || nd > IND_MAXD || dim < 0 || dim >= nd || sv->sizes[dim] <= 0)
    return false;
  /* the outputs have the source's dims less `dim` (or with it as 1, keepdim): their strides by source dim */
  const ind_buffer *IB = &p->bufs[ib], *VB = pair ? &p->bufs[vb] : NULL;
  bool keep = IB->ndim == nd;
  if (!keep && IB->ndim != nd - 1)
    return false;
  int64_t str[3][IND_MAXD];
  for (int d = 0; d < nd; d++)
    {
      int od = keep ? d : d - (d > dim);
      str[0][d] = d == dim || !VB ? 0 : VB->strides[od];
      str[1][d] = sv->strides[d];
      str[2][d] = d == dim ? 0 : IB->strides[od];
    }
  memset (t, 0, sizeof *t);
  int64_t so[3], sn[3];
  if (!collapse_range (sv->sizes, 0, dim, str, &t->outer, so) || !collapse_range (sv->sizes, dim + 1, nd, str, &t->inner, sn))
    return false;
  t->r = sv->sizes[dim];
  t->src_stride[0] = so[1];
  t->src_stride[1] = sv->strides[dim];
  t->src_stride[2] = sn[1];
  t->val_stride[0] = so[0];
  t->val_stride[1] = sn[0];
  t->idx_stride[0] = so[2];
  t->idx_stride[1] = sn[2];
  t->is_min = op == FX_OP_MIN_DIM || op == FX_OP_ARGMIN;
  *src_view = n->arg_views[0];
  *val_buf = vb;
  *idx_buf = ib;
  return true;
}

/* max.dim, min.dim, argmax and argmin as the device's arg-reduction where ind_gpu_argreduce_plan finds one. */
static bool
add_argreduce (ind_gpu *gpu, const ind_program *p, const ind_node *n, const ind_group *G, int kernel, fx_diag *diag,
               fx_status *st)
{
  fx_cuda_argreduce_desc t;
  int svi, vb, ib;
  if (!ind_gpu_argreduce_plan (p, n, &t, &svi, &vb, &ib))
    return false;
  const ind_view *sv = &p->views[svi];
  int sb = gpu->pbuf[sv->buf], pib = gpu->pbuf[ib], pvb = vb >= 0 ? gpu->pbuf[vb] : -1;
  if (sb < 0 || pib < 0 || (vb >= 0 && pvb < 0))
    return false;
  fx_dtype dt = p->bufs[sv->buf].dtype;
  *st = fx_cuda_program_add_argreduce (gpu->prog, G->name, dt, &t, pvb, 0, pib, 0, sb,
                                       (size_t) sv->offset * fx_dtype_size (dt), diag);
  if (*st == FX_OK)
    note_step (gpu, kernel);
  return true;
}

/* embedding, index_select and gather as the device's indexed copy where ind_gpu_take_plan finds one: false when it
   does not (the node then runs on the host). */
static bool
add_take (ind_gpu *gpu, const ind_program *p, const ind_node *n, const ind_group *G, int kernel, fx_diag *diag,
          fx_status *st)
{
  fx_cuda_take_desc t;
  int svi, ivi;
  if (!ind_gpu_take_plan (p, n, &t, &svi, &ivi))
    return false;
  const ind_view *sv = &p->views[svi], *iv = &p->views[ivi];
  int ob = gpu->pbuf[n->out_buf], sb = gpu->pbuf[sv->buf], ib = gpu->pbuf[iv->buf];
  if (ob < 0 || sb < 0 || ib < 0)
    return false;
  size_t es = fx_dtype_size (p->bufs[n->out_buf].dtype);
  *st = fx_cuda_program_add_take (gpu->prog, G->name, es, &t, ob, 0, sb, (size_t) sv->offset * es, ib,
                                  (size_t) iv->offset * sizeof (int64_t), diag);
  if (*st == FX_OK)
    note_step (gpu, kernel);
  return true;
}

/* An extern or fallback node: a GEMM plan where one fits, else a host step running the node's reference kernel
   (never a failed compile for a node the CPU backends run). With `res`, only the GEMM with the residual epilogue. */
static fx_status
add_extern (ind_gpu *gpu, const ind_program *p, const ind_node *n, const ind_group *G, int kernel,
            const ind_gpu_residual *res, bool *on_host, fx_diag *diag)
{
  *on_host = false;
  fx_diag why;
  fx_diag_clear (&why);
  size_t steps = fx_cuda_program_n_steps (gpu->prog);
  fx_status st = add_gemm (gpu, p, n, G, kernel, res, &why);
  if (st != FX_ERR_UNSUPPORTED || res || fx_cuda_program_n_steps (gpu->prog) != steps || n->call == NULL)
    {
      if (st != FX_OK && diag)
        *diag = why;
      return st;
    }
  if (add_take (gpu, p, n, G, kernel, diag, &st) || add_argreduce (gpu, p, n, G, kernel, diag, &st))
    return st;
  host_node *h = &gpu->hosts[gpu->n_hosts++];
  h->gpu = gpu;
  h->node = (int) (n - p->nodes);
  if ((st = fx_cuda_program_add_host (gpu->prog, G->name, run_host_node, h, diag)) != FX_OK)
    return st;
  note_step (gpu, kernel);
  *on_host = true;
  return FX_OK;
}

static fx_status
add_launches (ind_gpu *gpu, const ind_program *p, const ind_cuda_kernel *ck, int ws_buffer, int kernel, fx_diag *diag)
{
  fx_cuda_arg args[64];
  size_t n = 0;
  if (ck->n_params + 1 > 64)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): %s has more than 63 buffers", ck->name);
  for (int i = 0; i < ck->n_params; i++)
    {
      int b = ck->params[i];
      if (gpu->pbuf[b] < 0)
        return fx_diag_set (diag, FX_ERR_BACKEND, "inductor (cuda): %s: buf%d has no device memory", ck->name, b);
      memset (&args[n], 0, sizeof args[n]);
      args[n].kind = FX_CUDA_ARG_BUFFER;
      args[n].buffer = gpu->pbuf[b];
      n++;
    }
  if (ck->cfg.kind == IND_CUDA_SPLIT)
    {
      memset (&args[n], 0, sizeof args[n]);
      args[n].kind = FX_CUDA_ARG_BUFFER;
      args[n].buffer = ws_buffer;
      n++;
    }
  fx_status st = fx_cuda_program_add_launch (gpu->prog, ck->name, NULL, ck->grid, ck->block, 0, args, n, diag);
  if (st != FX_OK)
    return st;
  note_step (gpu, kernel);
  /* split reductions of several steps (fx-inductor-cuda.c): the kernels between the first and the last one, on the
     first one's grid; their time counts as the first kernel's */
  for (int m = 0; m < ck->n_mid; m++)
    {
      if ((st = fx_cuda_program_add_launch (gpu->prog, ck->mid_names[m], NULL, ck->grid, ck->block, 0, args, n, diag))
          != FX_OK)
        return st;
      note_step (gpu, kernel);
    }
  if (ck->cfg.kind == IND_CUDA_SPLIT)
    {
      if ((st = fx_cuda_program_add_launch (gpu->prog, ck->name2, NULL, ck->grid2, ck->block2, 0, args, n, diag))
          != FX_OK)
        return st;
      note_step (gpu, kernel + 1);
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- max-autotune */

typedef struct bench_ctx
{
  fx_cuda_kernel *k1, *k2;
  fx_cuda_kernel *mid[IND_CUDA_MAX_MID];    /* split reductions of several steps: launched between k1 and k2 */
  const ind_cuda_kernel *ck;
  fx_cuda_ptr *ptrs;        /* per IR buffer */
  fx_cuda_ptr ws;
} bench_ctx;

static fx_status
bench_launch (void *data, fx_cuda_stream *stream, fx_diag *diag)
{
  bench_ctx *b = data;
  fx_cuda_ptr vals[64];
  void *params[64];
  int n = 0;
  for (int i = 0; i < b->ck->n_params && n < 63; i++)
    {
      vals[n] = b->ptrs[b->ck->params[i]];
      params[n] = &vals[n];
      n++;
    }
  if (b->ck->cfg.kind == IND_CUDA_SPLIT)
    {
      vals[n] = b->ws;
      params[n] = &vals[n];
      n++;
    }
  fx_status st = fx_cuda_launch (b->k1, stream, b->ck->grid, b->ck->block, 0, params, diag);
  for (int m = 0; st == FX_OK && m < b->ck->n_mid; m++)
    st = fx_cuda_launch (b->mid[m], stream, b->ck->grid, b->ck->block, 0, params, diag);
  if (st == FX_OK && b->k2)
    st = fx_cuda_launch (b->k2, stream, b->ck->grid2, b->ck->block2, 0, params, diag);
  return st;
}

static void
describe_params (const ind_program *p, const ind_cuda_kernel *ck, fx_buf *strides, fx_buf *dtypes)
{
  for (int i = 0; i < ck->n_params; i++)
    {
      const ind_buffer *B = &p->bufs[ck->params[i]];
      fx_buf_puts (strides, i ? ", [" : "[");
      ind_put_ints (strides, B->strides, B->ndim);
      fx_buf_puts (strides, "]");
      fx_buf_printf (dtypes, "%s%s", i ? ", " : "", fx_dtype_name (B->dtype));
    }
}

/* Benchmarks every configuration of every loop kernel on scratch buffers and keeps the fastest in chosen[g].
   The AUTOTUNE tables go to table. */
static fx_status
autotune (ind_gpu *gpu, const ind_program *p, ind_cuda_config *chosen, fx_buf *table, fx_compiled *out, fx_diag *diag)
{
  ind_cuda_config (*cfgs)[MAX_CONFIGS] = calloc ((size_t) p->n_groups + 1, sizeof *cfgs);
  int *n_cfgs = calloc ((size_t) p->n_groups + 1, sizeof (int));
  ind_cuda_kernel *var = calloc ((size_t) (p->n_groups + 1) * MAX_CONFIGS, sizeof *var);
  fx_cuda_ptr *ptrs = calloc ((size_t) p->n_bufs + 1, sizeof *ptrs);
  fx_buf src;
  fx_buf_init (&src);
  fx_status st = FX_OK;
  ind_cuda_plan plan = { NULL, ind_cuda_index32 (p) };
  plan.kernels = calloc ((size_t) p->n_groups * MAX_CONFIGS + 1, sizeof (ind_cuda_kernel));
  /* one module with every variant: kernel names get a _cfgN suffix through the counter */
  int64_t ws_max = 16;
  int counter = 0;
  for (int g = 0; g < p->n_groups; g++)
    {
      n_cfgs[g] = ind_cuda_configs (p, g, cfgs[g], MAX_CONFIGS);
      for (int c = 0; c < n_cfgs[g]; c++)
        {
          ind_cuda_kernel *ck = &var[g * MAX_CONFIGS + c];
          ind_cuda_plan_kernel (p, g, &cfgs[g][c], &counter, ck);
          if (ck->ws_bytes > ws_max)
            ws_max = ck->ws_bytes;
        }
    }
  /* generate each variant by planning a one-group view of the plan */
  fx_buf_reset (&src);
  {
    ind_cuda_plan one = { NULL, plan.index32 };
    one.kernels = calloc ((size_t) p->n_groups + 1, sizeof (ind_cuda_kernel));
    bool first = true;
    for (int g = 0; g < p->n_groups; g++)
      for (int c = 0; c < n_cfgs[g]; c++)
        {
          memset (one.kernels, 0, sizeof (ind_cuda_kernel) * (size_t) p->n_groups);
          one.kernels[g] = var[g * MAX_CONFIGS + c];
          fx_buf part;
          fx_buf_init (&part);
          ind_cuda_codegen (p, &one, &part);
          var[g * MAX_CONFIGS + c].params = one.kernels[g].params;
          var[g * MAX_CONFIGS + c].n_params = one.kernels[g].n_params;
          /* every part starts with the header: keep it once */
          const char *body = strstr (part.data, "// index math in");
          if (first)
            fx_buf_append (&src, part.data, part.len);
          else if (body)
            fx_buf_puts (&src, body);
          first = false;
          fx_buf_free (&part);
        }
    free (one.kernels);
  }
  double t0 = fx_now_ms ();
  fx_cuda_module *module = NULL;
  fx_cuda_build_info info;
  memset (&info, 0, sizeof info);
  if (src.len)
    st = fx_cuda_module_build (gpu->cuda, src.data, "inductor_autotune.cu", NULL, &module, &info, diag);
  fx_cuda_build_info_clear (&info);
  double precompile = (fx_now_ms () - t0) / 1e3;
  fx_cuda_ptr ws = 0;
  for (int b = 0; st == FX_OK && b < p->n_bufs; b++)
    if (gpu->pbuf[b] >= 0)
      {
        size_t bytes = nonzero (ind_buffer_bytes (p, b));
        st = fx_cuda_malloc (gpu->cuda, bytes, NULL, &ptrs[b], diag);
        if (st == FX_OK)
          st = fx_cuda_memset (gpu->cuda, NULL, ptrs[b], 0, bytes, diag);
      }
  if (st == FX_OK)
    st = fx_cuda_malloc (gpu->cuda, (size_t) ws_max, NULL, &ws, diag);
  for (int g = 0; st == FX_OK && g < p->n_groups; g++)
    {
      if (n_cfgs[g] == 0)
        continue;
      chosen[g] = cfgs[g][0];
      if (n_cfgs[g] == 1)
        continue;
      fx_cuda_autotune_choice choices[MAX_CONFIGS];
      bench_ctx ctx[MAX_CONFIGS];
      char *names[MAX_CONFIGS], *descs[MAX_CONFIGS];
      int n = 0;
      for (int c = 0; c < n_cfgs[g]; c++)
        {
          ind_cuda_kernel *ck = &var[g * MAX_CONFIGS + c];
          memset (&ctx[n], 0, sizeof ctx[n]);
          ctx[n].ck = ck;
          ctx[n].ptrs = ptrs;
          ctx[n].ws = ws;
          fx_diag d;
          fx_diag_clear (&d);
          if (fx_cuda_module_get_kernel (module, ck->name, &ctx[n].k1, &d) != FX_OK
              || (ck->name2 && fx_cuda_module_get_kernel (module, ck->name2, &ctx[n].k2, &d) != FX_OK))
            continue;
          bool mids = true;
          for (int m = 0; m < ck->n_mid; m++)
            mids &= fx_cuda_module_get_kernel (module, ck->mid_names[m], &ctx[n].mid[m], &d) == FX_OK;
          if (!mids)
            continue;
          fx_buf t;
          fx_buf_init (&t);
          ind_cuda_config_describe (&ck->cfg, &t);
          names[n] = strdup (ck->name);
          descs[n] = strdup (t.data ? t.data : "");
          fx_buf_free (&t);
          choices[n].name = names[n];
          choices[n].description = descs[n];
          choices[n].fn = bench_launch;
          choices[n].ctx = &ctx[n];
          /* map back to the config */
          ctx[n].ck = ck;
          n++;
        }
      fx_buf strides, dtypes, title;
      fx_buf_init (&strides);
      fx_buf_init (&dtypes);
      fx_buf_init (&title);
      describe_params (p, &var[g * MAX_CONFIGS], &strides, &dtypes);
      const ind_group *G = &p->groups[g];
      fx_buf_printf (&title, "%s(", gpu->plan.kernels[g].name ? gpu->plan.kernels[g].name : G->name);
      for (int d = 0; d < G->kx; d++)
        fx_buf_printf (&title, "%s%lld", d ? "x" : "", (long long) G->xs[d]);
      if (G->kr)
        {
          fx_buf_puts (&title, G->kx ? ", " : "");
          for (int d = 0; d < G->kr; d++)
            fx_buf_printf (&title, "%s%lld", d ? "x" : "", (long long) G->rs[d]);
        }
      fx_buf_puts (&title, ")");
      fx_cuda_autotune_result res;
      memset (&res, 0, sizeof res);
      fx_diag d;
      fx_diag_clear (&d);
      if (n > 0 && fx_cuda_autotune (gpu->cuda, NULL, title.data, strides.data ? strides.data : "",
                                     dtypes.data ? dtypes.data : "", choices, (size_t) n, NULL, precompile, &res, &d)
                   == FX_OK)
        {
          chosen[g] = ctx[res.best].ck->cfg;
          if (res.table)
            fx_buf_puts (table, res.table);
          fx_buf_putc (table, '\n');
        }
      else if (n > 0)
        fx_buf_printf (&out->notes, "max_autotune: %s: %s (kept the heuristic choice)\n", title.data, d.message);
      fx_cuda_autotune_result_clear (&res);
      for (int i = 0; i < n; i++)
        {
          free (names[i]);
          free (descs[i]);
        }
      fx_buf_free (&strides);
      fx_buf_free (&dtypes);
      fx_buf_free (&title);
    }
  if (st == FX_OK)
    st = fx_cuda_synchronize (gpu->cuda, diag);
  for (int b = 0; b < p->n_bufs; b++)
    fx_cuda_free (gpu->cuda, ptrs[b]);
  fx_cuda_free (gpu->cuda, ws);
  if (module)
    fx_cuda_module_free (module);
  fx_buf_free (&src);
  free (plan.kernels);
  free (var);
  free (ptrs);
  free (n_cfgs);
  free (cfgs);
  return st;
}

/* ---------------------------------------------------------------- compile */

/* Mutated graph inputs (an in-place op on a placeholder): PyTorch's cudagraphs skip such graphs. */
static int
mutated_inputs (const fx_graph *g)
{
  int count = 0;
  for (const fx_node *n = g->first; n; n = n->next)
    if (!n->erased && n->op == FX_OP_CALL_FUNCTION && n->target.kind == FX_TARGET_OP && n->n_args > 0
        && n->args[0].kind == FX_ARG_NODE && n->args[0].u.node->op == FX_OP_PLACEHOLDER
        && fx_op_lookup_inplace (n->target.name) >= 0)
      count++;
  return count;
}

static void
plan_with (const ind_program *p, const ind_cuda_config *chosen, ind_cuda_plan *plan)
{
  plan->kernels = fx_arena_alloc (p->arena, sizeof (ind_cuda_kernel) * (size_t) (p->n_groups + 1));
  plan->index32 = ind_cuda_index32 (p);
  int counter = 0;
  for (int g = 0; g < p->n_groups; g++)
    {
      plan->kernels[g].group = g;
      if (!p->groups[g].is_extern)
        ind_cuda_plan_kernel (p, g, &chosen[g], &counter, &plan->kernels[g]);
    }
}

/* The module's text: src (the CUDA generated at the program's sizes), or with symbols (*syms) its template over them:
   made at the example sizes (ind_cuda_symbolic_source, before the layout: it may choose other kernels), or the
   template already made when vals are given. A template that cannot be made clears *syms (why says why). */
static void
module_text (ind_gpu *gpu, ind_program *p, const fx_compile_request *req, ind_syms **syms, const int64_t *vals,
             fx_buf *why, fx_buf *src, fx_buf *text)
{
  bool sym = false;
  if (syms && *syms && vals)
    {
      size_t len = 0;
      const char *t = ind_syms_text (*syms, &len);
      fx_buf_append (text, t, len);
      sym = t != NULL;
      ind_cuda_codegen (p, &gpu->plan, src);
    }
  else if (syms && *syms)
    sym = ind_cuda_symbolic_source (p, &gpu->plan, *syms, req->example_inputs, req->n_inputs, src, text, why);
  else
    ind_cuda_codegen (p, &gpu->plan, src);
  if (!sym)
    {
      if (syms)
        *syms = NULL;
      fx_buf_reset (text);
      fx_buf_append (text, src->data, src->len);
    }
}

/* Builds text into the program's module and writes the symbols' values into it. A symbolic text of the compile
   (vals NULL) that does not build clears *syms (why says why) and builds src instead. */
static fx_status
build_module (ind_gpu *gpu, const ind_program *p, ind_syms **syms, const int64_t *vals, fx_buf *why,
              const fx_buf *src, fx_buf *text, fx_compiled *out, int ordinal, fx_diag *diag)
{
  bool sym = syms && *syms;
  fx_cuda_build_info info;
  memset (&info, 0, sizeof info);
  double t1 = fx_now_ms ();
  fx_status st = fx_cuda_program_add_source (gpu->prog, text->data ? text->data : "", "output_code.cu", NULL, &info,
                                             diag);
  if (st != FX_OK && sym && vals == NULL)
    {
      fx_buf_printf (why, "the symbolic CUDA source did not build (%s)", diag ? diag->message : "NVRTC");
      fx_cuda_build_info_clear (&info);
      fx_diag_clear (diag);
      *syms = NULL;
      fx_buf_reset (text);
      fx_buf_append (text, src->data, src->len);
      return build_module (gpu, p, NULL, NULL, why, src, text, out, ordinal, diag);
    }
  fx_compiled_add_artifact (out, "output_code.cu", "code", text->data ? text->data : "", text->len);
  fx_buf_printf (&out->notes, "inductor: %d loop nodes, %d kernels on cuda:%d; NVRTC %s (%.1f ms, %s)\n",
                 p->n_nodes, p->n_groups, ordinal, info.cache_hit ? "cache hit" : "compiled", fx_now_ms () - t1,
                 info.arch);
  if (info.log && *info.log)
    fx_compiled_add_artifact (out, "compiler_output.txt", "log", info.log, strlen (info.log));
  fx_cuda_build_info_clear (&info);
  const int64_t *v = vals ? vals : sym ? ind_syms_base (*syms) : NULL;
  for (int i = 0; st == FX_OK && v && i < ind_syms_count (*syms); i++)
    {
      char name[16];
      snprintf (name, sizeof name, "fx_ks%d", i);
      int32_t v32 = (int32_t) v[i];
      long long v64 = v[i];
      st = gpu->plan.index32 ? fx_cuda_program_set_global (gpu->prog, name, &v32, sizeof v32, diag)
                             : fx_cuda_program_set_global (gpu->prog, name, &v64, sizeof v64, diag);
    }
  return st;
}

/* A kernel's code in the built text: src's span, moved into the symbolic text where that was built. */
static char *
kernel_code (fx_compiled *out, const fx_buf *text, const ind_syms *syms, size_t a, size_t b)
{
  if (syms)
    {
      a = ind_syms_map_offset (syms, a);
      b = ind_syms_map_offset (syms, b);
    }
  if (b > text->len || a > b)
    return NULL;
  return fx_arena_strndup (out->arena, text->data + a, b - a);
}

fx_status
ind_gpu_compile (ind_program *p, const fx_compile_request *req, int ordinal, fx_compiled *out, ind_gpu **gpu_out,
                 ind_syms **syms, const int64_t *vals, fx_buf *sym_why, fx_diag *diag)
{
  *gpu_out = NULL;
  fx_cuda *cuda = NULL;
  fx_status st = open_device (ordinal, &cuda, diag);
  if (st != FX_OK)
    return st;
  ind_gpu *gpu = calloc (1, sizeof *gpu);
  *gpu_out = gpu;
  gpu->cuda = cuda;
  gpu->hosts = calloc ((size_t) p->n_groups + 1, sizeof *gpu->hosts);
  if (req->gen)
    gpu->gen = *req->gen;
  else
    fx_generator_seed (&gpu->gen, 0);
  if ((st = fx_cuda_program_new (cuda, &gpu->prog, diag)) != FX_OK)
    return st;
  /* configurations: the heuristic's, or the fastest of max-autotune */
  ind_cuda_config *chosen = calloc ((size_t) p->n_groups + 1, sizeof *chosen);
  for (int g = 0; g < p->n_groups; g++)
    {
      ind_cuda_config c[MAX_CONFIGS];
      if (ind_cuda_configs (p, g, c, MAX_CONFIGS) > 0)
        chosen[g] = c[0];
    }
  plan_with (p, chosen, &gpu->plan);
  /* the module's text first: a symbolic one may re-plan (looped reductions) */
  fx_buf src, text;
  fx_buf_init (&src);
  fx_buf_init (&text);
  module_text (gpu, p, req, syms, vals, sym_why, &src, &text);
  ind_cuda_layout lay;
  ind_cuda_layout_make (p, &gpu->plan, &lay);
  gpu->pbuf = malloc (sizeof (int) * (size_t) (p->n_bufs + 1));
  memcpy (gpu->pbuf, lay.pbuf, sizeof (int) * (size_t) p->n_bufs);
  bool max_autotune = p->opt.max_autotune;
  fx_buf table;
  fx_buf_init (&table);
  gpu->gemm_algos = max_autotune ? GEMM_AUTOTUNE_ALGOS : 1;
  gpu->gemm_step = malloc (sizeof (int) * (size_t) (p->n_groups + 1));
  for (int g = 0; g < p->n_groups; g++)
    gpu->gemm_step[g] = -1;
  if (max_autotune)
    {
      double t0 = fx_now_ms ();
      st = autotune (gpu, p, chosen, &table, out, diag);
      if (st == FX_OK)
        {
          fx_buf_printf (&out->notes, "max_autotune: %d kernels benchmarked in %.1f ms\n", p->n_groups,
                         fx_now_ms () - t0);
          plan_with (p, chosen, &gpu->plan);
          ind_cuda_layout_free (&lay);
          ind_cuda_layout_make (p, &gpu->plan, &lay);
          memcpy (gpu->pbuf, lay.pbuf, sizeof (int) * (size_t) p->n_bufs);
          fx_buf_reset (&src);
          fx_buf_reset (&text);
          module_text (gpu, p, req, NULL, NULL, NULL, &src, &text);   /* max-autotune: never symbolic */
        }
    }
  free (chosen);
  /* device buffers, numbered as the layout numbers them */
  gpu->input_bufs = malloc (sizeof (int) * (size_t) (lay.n_pbufs + 1));
  gpu->output_bufs = malloc (sizeof (int) * (size_t) (lay.n_pbufs + 1));
  for (int k = 0; st == FX_OK && k < lay.n_pbufs; k++)
    {
      int idx = lay.pb[k].role == IND_PB_INPUT ? fx_cuda_program_add_input (gpu->prog, lay.pb[k].bytes)
                : lay.pb[k].role == IND_PB_OUTPUT ? fx_cuda_program_add_output (gpu->prog, lay.pb[k].bytes)
                : fx_cuda_program_add_temp (gpu->prog, lay.pb[k].bytes);
      if (idx != k)
        st = fx_diag_set (diag, FX_ERR_NOMEM, "inductor (cuda): cannot add device buffer %d", k);
      else if (lay.pb[k].role == IND_PB_INPUT)
        gpu->input_bufs[gpu->n_inputs++] = lay.pb[k].ir_buf;
      else if (lay.pb[k].role == IND_PB_OUTPUT)
        gpu->output_bufs[gpu->n_outputs++] = lay.pb[k].ir_buf;
    }
  if (st == FX_OK)
    st = build_module (gpu, p, syms, vals, sym_why, &src, &text, out, ordinal, diag);
  /* the kernels' code as listed: from the built text, except for a variant (its listing is not kept) */
  const ind_syms *ksyms = syms && *syms && vals == NULL ? *syms : NULL;
  const fx_buf *ktext = ksyms ? &text : &src;
  /* steps and the kernel list, in group order; with epilogue_fusion (PyTorch's default) a residual add after a GEMM
     becomes the GEMM's C */
  fx_device dev = { FX_DEVICE_CUDA, ordinal };
  bool epilogue = p->opt.epilogue_fusion;
  int *fused_into = malloc (sizeof (int) * (size_t) (p->n_groups + 1));
  for (int g = 0; g < p->n_groups; g++)
    fused_into[g] = -1;
  for (int g = 0; st == FX_OK && g < p->n_groups; g++)
    {
      const ind_group *G = &p->groups[g];
      const ind_cuda_kernel *ck = &gpu->plan.kernels[g];
      int first = (int) out->n_kernels;
      fx_kernel_info *ki[2] = { NULL, NULL };
      const ind_group *fused = NULL;
      bool on_host = false;
      if (G->is_extern)
        {
          const ind_node *n0 = &p->nodes[G->nodes[0]];
          ki[0] = fx_compiled_add_kernel (out, G->name, "extern", NULL, NULL);
          ind_gpu_residual res;
          if (epilogue && ind_gpu_residual_match (p, gpu->pbuf, g, &res))
            {
              fx_diag why;
              fx_diag_clear (&why);
              st = add_extern (gpu, p, n0, G, first, &res, &on_host, &why);
              if (st == FX_OK)
                {
                  fused = &p->groups[res.consumer];
                  fx_buf_printf (&out->notes, "inductor (cuda): %s and %s run as one GEMM (the add as C, out of "
                                 "place)\n", G->name, gpu->plan.kernels[res.consumer].name);
                }
              else if (st == FX_ERR_UNSUPPORTED)
                {
                  fx_buf_printf (&out->notes, "inductor (cuda): %s keeps its add: %s\n", G->name, why.message);
                  st = add_extern (gpu, p, n0, G, first, NULL, &on_host, diag);
                }
              else if (diag)
                *diag = why;
            }
          else
            st = add_extern (gpu, p, n0, G, first, NULL, &on_host, diag);
          int op0 = n0->call ? n0->call->op->id : -1;
          if (st == FX_OK && !on_host && (op0 == FX_OP_EMBEDDING || op0 == FX_OP_INDEX_SELECT || op0 == FX_OP_GATHER))
            fx_buf_printf (&out->notes, "inductor (cuda): %s (node '%s') runs as an indexed copy on the device\n",
                           n0->call->op->target, n0->n_origins ? n0->origins[0] : "?");
          if (st == FX_OK && !on_host && (op0 == FX_OP_MAX_DIM || op0 == FX_OP_MIN_DIM || op0 == FX_OP_ARGMAX
                                          || op0 == FX_OP_ARGMIN))
            fx_buf_printf (&out->notes, "inductor (cuda): %s (node '%s') runs as an arg-reduction on the device "
                           "(fx_argmax/fx_argmin: values and first indices in one pass)\n",
                           n0->call->op->target, n0->n_origins ? n0->origins[0] : "?");
          if (st == FX_OK && on_host)
            {
              ki[0]->kind = "fallback";
              fx_buf_printf (&out->notes, "inductor (cuda): fallback %s (node '%s') runs the engine's reference "
                             "kernel on the host, with its operands copied out and its outputs back\n",
                             n0->call->op->target, n0->n_origins ? n0->origins[0] : "?");
            }
          if (st == FX_OK && !on_host)
            gpu->gemm_step[g] = (int) fx_cuda_program_n_steps (gpu->prog) - 1;
        }
      else
        {
          const char *kind = ck->cfg.kind == IND_CUDA_POINTWISE ? "pointwise" : "reduction";
          size_t mid = ck->cfg.kind == IND_CUDA_SPLIT ? ck->src_mid : ck->src_end;
          char *code = kernel_code (out, ktext, ksyms, ck->src_begin, mid);
          ki[0] = fx_compiled_add_kernel (out, ck->name, kind, "cuda", code);
          if (ck->name2)
            {
              code = kernel_code (out, ktext, ksyms, ck->src_mid, ck->src_end);
              ki[1] = fx_compiled_add_kernel (out, ck->name2, kind, "cuda", code);
            }
          st = add_launches (gpu, p, ck, lay.ws[g], first, diag);
        }
      for (int j = 0; j < 2; j++)
        if (ki[j])
          {
            ki[j]->device = on_host ? (fx_device) { FX_DEVICE_CPU, -1 } : dev;
            for (int k = 0; k < G->n_nodes + (fused && j == 0 ? fused->n_nodes : 0); k++)
              {
                const ind_node *n = &p->nodes[k < G->n_nodes ? G->nodes[k] : fused->nodes[k - G->n_nodes]];
                for (size_t o = 0; o < n->n_origins; o++)
                  {
                    bool dup = false;
                    for (size_t q = 0; q < ki[j]->n_nodes; q++)
                      dup |= strcmp (ki[j]->nodes[q], n->origins[o]) == 0;
                    if (!dup)
                      fx_kernel_add_node (out, ki[j], n->origins[o]);
                  }
              }
          }
      if (fused)
        {
          fused_into[fused - p->groups] = g;
          g++;   /* its kernel is not launched: the GEMM wrote its output */
        }
    }
  /* max-autotune for the GEMMs: the heuristic's algorithms timed, the fastest kept */
  if (st == FX_OK && max_autotune)
    {
      double t0 = fx_now_ms ();
      int tuned = 0;
      fx_diag why;
      fx_diag_clear (&why);
      if (fx_cuda_program_autotune_gemms (gpu->prog, NULL, NULL, &table, &tuned, &why) != FX_OK)
        fx_buf_printf (&out->notes, "max_autotune: GEMMs: %s (kept the heuristic's first choice)\n", why.message);
      else if (tuned)
        fx_buf_printf (&out->notes, "max_autotune: %d GEMMs benchmarked in %.1f ms\n", tuned, fx_now_ms () - t0);
    }
  if (st == FX_OK && max_autotune)
    fx_compiled_add_artifact (out, "autotune.txt", "log", table.data ? table.data : "", table.len);
  fx_buf_free (&table);
  /* the table of choices, like the C generator's ir dumps */
  if (st == FX_OK)
    {
      fx_buf t;
      fx_buf_init (&t);
      for (int g = 0; g < p->n_groups; g++)
        {
          const ind_cuda_kernel *ck = &gpu->plan.kernels[g];
          if (!ck->name)
            {
              const char *why = "";
              fx_cuda_gemm_plan *plan = gemm_plan_of (gpu, g);
              bool lt = plan && fx_cuda_gemm_plan_uses_lt (plan, &why);
              bool host = false;
              for (int h = 0; h < gpu->n_hosts; h++)
                host |= p->nodes[gpu->hosts[h].node].group == g;
              int op = -1;
              for (int i = 0; i < p->groups[g].n_nodes; i++)
                if (p->nodes[p->groups[g].nodes[i]].call)
                  op = p->nodes[p->groups[g].nodes[i]].call->op->id;
              bool arg = op == FX_OP_MAX_DIM || op == FX_OP_MIN_DIM || op == FX_OP_ARGMAX || op == FX_OP_ARGMIN;
              fx_buf_printf (&t, "%s %s", p->groups[g].name,
                             plan ? "extern" : host ? "fallback on the host"
                             : arg ? "extern arg-reduction (fx_argmax/fx_argmin)" : "extern indexed copy (fx_take)");
              if (plan)
                {
                  char name[96];
                  const fx_cuda_gemm_desc *d = fx_cuda_gemm_plan_desc (plan);
                  fx_cuda_gemm_plan_algo_name (plan, lt ? fx_cuda_gemm_plan_chosen (plan) : -1, name, sizeof name);
                  fx_buf_printf (&t, " %s%s%s", name,
                                 d->has_bias ? (lt ? " epilogue=BIAS" : " bias broadcast first") : "",
                                 d->has_c ? " beta*C" : "");
                  if (!lt)
                    fx_buf_printf (&t, " (no cuBLASLt: %s)", why);
                }
              fx_buf_putc (&t, '\n');
              continue;
            }
          if (fused_into[g] >= 0)
            {
              fx_buf_printf (&t, "%s fused into %s (C of the GEMM)\n", ck->name, p->groups[fused_into[g]].name);
              continue;
            }
          fx_buf_printf (&t, "%s %s grid=%u block=%u ", ck->name, ind_cuda_kind_name (ck->cfg.kind), ck->grid[0],
                         ck->block[0]);
          ind_cuda_config_describe (&ck->cfg, &t);
          if (ck->name2)
            fx_buf_printf (&t, " then %s grid=%u block=%u", ck->name2, ck->grid2[0], ck->block2[0]);
          fx_buf_putc (&t, '\n');
        }
      fx_compiled_add_artifact (out, "cuda_kernels.txt", "text", t.data ? t.data : "", t.len);
      fx_buf_reset (&t);
      ind_cuda_wrapper_text (p, &gpu->plan, &lay, &t);
      fx_compiled_add_artifact (out, "cuda_wrapper.txt", "text", t.data ? t.data : "", t.len);
      fx_buf_free (&t);
    }
  fx_buf_free (&src);
  fx_buf_free (&text);
  free (fused_into);
  ind_cuda_layout_free (&lay);
  gpu->n_kernels = out->n_kernels;
  if (st == FX_OK && p->opt.cudagraphs)
    {
      int m = mutated_inputs (req->graph);
      if (gpu->n_hosts > 0)
        {
          const ind_node *hn = &p->nodes[gpu->hosts[0].node];
          char reason[256];
          snprintf (reason, sizeof reason, "cpu device (%s)", hn->n_origins ? hn->origins[0] : hn->op_name);
          fx_cuda_program_skip_graphs (gpu->prog, reason);
        }
      else if (m > 0)
        {
          char reason[64];
          snprintf (reason, sizeof reason, "mutated inputs (%d instances)", m);
          fx_cuda_program_skip_graphs (gpu->prog, reason);
        }
      else
        {
          fx_cuda_program_use_graphs (gpu->prog, true);
          gpu->graphs = true;
        }
      const char *skip = fx_cuda_program_skip_message (gpu->prog);
      if (skip)
        fx_buf_printf (&out->notes, "%s\n", skip);
    }
  return st;
}

void
ind_gpu_free (ind_gpu *gpu)
{
  if (gpu == NULL)
    return;
  if (gpu->cuda)
    fx_cuda_synchronize (gpu->cuda, NULL);
  fx_cuda_program_free (gpu->prog);
  free (gpu->pbuf);
  free (gpu->input_bufs);
  free (gpu->output_bufs);
  free (gpu->step_kernel);
  free (gpu->gemm_step);
  free (gpu->kernel_ms);
  free (gpu->hosts);
  free (gpu);
}

const char *
ind_gpu_skip_message (const ind_gpu *gpu)
{
  return gpu && gpu->prog ? fx_cuda_program_skip_message (gpu->prog) : NULL;
}

/* ---------------------------------------------------------------- run */

/* A tensor of buffer B that owns the caching allocator's block at PTR; NULL (the block untouched) without memory. */
static fx_tensor *
wrap_block (fx_cuda *cuda, fx_cuda_ptr ptr, size_t nbytes, const ind_buffer *B)
{
  fx_tensor *t = fx_tensor_new_meta (B->dtype, B->ndim, B->sizes, B->strides);
  if (t && fx_cuda_tensor_own (cuda, t, ptr, nbytes, NULL) != FX_OK)
    {
      fx_tensor_unref (t);
      t = NULL;
    }
  return t;
}

static fx_status
run_once (ind_gpu *gpu, const ind_program *p, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
          fx_value **outputs, size_t *n_outputs, fx_cuda_timeline *timeline, fx_cuda_event *const *span,
          fx_diag *diag)
{
  fx_cuda *cuda = gpu->cuda;
  fx_cuda_stream *stream = fx_cuda_default_stream (cuda);
  gpu->ir = p;
  fx_tensor **dev = calloc ((size_t) p->n_bufs + 1, sizeof (fx_tensor *));   /* per IR buffer: its device tensor */
  fx_cuda_ptr *in_ptrs = calloc ((size_t) gpu->n_inputs + 1, sizeof (fx_cuda_ptr));
  fx_cuda_ptr *out_ptrs = calloc ((size_t) gpu->n_outputs + 1, sizeof (fx_cuda_ptr));
  bool any_host = false, caller_owns = true, ran = false;
  fx_status st = FX_OK;
  for (int k = 0; st == FX_OK && k < gpu->n_inputs; k++)
    {
      int b = gpu->input_bufs[k];
      const ind_buffer *B = &p->bufs[b];
      fx_tensor *t = NULL;
      st = ind_check_input (B, inputs, n_inputs, &t, diag);
      if (st != FX_OK)
        break;
      /* a cuda tensor that fx-cuda refuses here (another device's memory, a reduce-overhead output a later run
         overwrote) goes through fx_cuda_tensor_to_host, which says why; it is never read as host memory */
      bool is_cuda = t->device.type == FX_DEVICE_CUDA;
      bool on_device = is_cuda && fx_cuda_tensor_check (cuda, t, NULL) == FX_OK;
      if (on_device && ind_same_layout (t, B) && fx_cuda_tensor_ptr (t) % 16 == 0)
        dev[b] = fx_tensor_ref (t);
      else
        {
          /* host inputs, other layouts and misaligned device inputs: into a planned, aligned device buffer */
          fx_tensor *host = NULL;
          if (is_cuda)
            {
              fx_diag why;
              fx_diag_clear (&why);
              st = fx_cuda_tensor_to_host (cuda, NULL, t, &host, &why);
              if (st != FX_OK)
                fx_diag_set (diag, st, "inductor: input %d: %s", B->input_index, why.message);
            }
          else if (t->storage == NULL)
            st = fx_diag_set (diag, FX_ERR_INVALID, "inductor: input %d has no data", B->input_index);
          else
            host = fx_tensor_ref (t);
          any_host |= !is_cuda;
          fx_tensor *planned = NULL;
          if (st == FX_OK && !ind_same_layout (host, B))
            {
              planned = fx_tensor_new_strided (NULL, B->dtype, B->ndim, B->sizes, B->strides);
              st = planned ? fx_tensor_copy_into (planned, host, diag)
                           : fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
            }
          /* the device copy keeps the compiled strides exactly (also where they leave gaps) */
          const fx_tensor *src = planned ? planned : host;
          if (st == FX_OK)
            st = fx_cuda_tensor_new (cuda, B->dtype, B->ndim, B->sizes, B->strides, &dev[b], diag);
          if (st == FX_OK)
            st = fx_cuda_copy_h2d (cuda, NULL, fx_cuda_tensor_ptr (dev[b]), fx_tensor_data (src),
                                   (size_t) ind_buffer_extent_bytes (B), diag);
          if (planned)
            fx_tensor_unref (planned);
          if (host)
            fx_tensor_unref (host);
        }
      if (st == FX_OK)
        in_ptrs[k] = fx_cuda_tensor_ptr (dev[b]);
    }
  if (st == FX_OK && span)
    st = fx_cuda_event_record (span[0], stream, diag);
  if (st == FX_OK)
    {
      st = fx_cuda_program_run (gpu->prog, stream, in_ptrs, (size_t) gpu->n_inputs, out_ptrs,
                                (size_t) gpu->n_outputs, &caller_owns, timeline, diag);
      ran = st == FX_OK;
    }
  if (ran && span)
    st = fx_cuda_event_record (span[1], stream, diag);
  for (int k = 0; ran && st == FX_OK && k < gpu->n_outputs; k++)
    {
      int b = gpu->output_bufs[k];
      const ind_buffer *B = &p->bufs[b];
      size_t bytes = nonzero (ind_buffer_bytes (p, b));
      if (caller_owns)
        {
          dev[b] = wrap_block (cuda, out_ptrs[k], bytes, B);
          if (dev[b] == NULL)
            {
              fx_cuda_free (cuda, out_ptrs[k]);
              st = fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
            }
        }
      else
        /* a replayed graph's outputs are its static buffers, handed out without a copy as PyTorch's cudagraph
           trees do; the next replay overwrites them, and reading one after that fails with PyTorch's words
           (fx_cuda_tensor_new_static) */
        st = fx_cuda_tensor_new_static (cuda, out_ptrs[k], bytes, fx_cuda_program_generation (gpu->prog), B->dtype,
                                        B->ndim, B->sizes, B->strides, &dev[b], diag);
    }
  if (ran && caller_owns && st != FX_OK)
    for (int k = 0; k < gpu->n_outputs; k++)
      if (dev[gpu->output_bufs[k]] == NULL)
        fx_cuda_free (cuda, out_ptrs[k]);
  if (ran)
    {
      fx_status s2 = fx_cuda_stream_synchronize (stream, st == FX_OK ? diag : NULL);
      if (st == FX_OK)
        st = s2;
    }
  if (st == FX_OK)
    {
      *n_outputs = (size_t) p->n_outputs;
      *outputs = fx_arena_alloc (arena, sizeof (fx_value) * ((size_t) p->n_outputs + 1));
      for (int k = 0; k < p->n_outputs; k++)
        {
          (*outputs)[k] = fx_value_none ();
          if (p->outputs[k] < 0)
            continue;
          const ind_view *v = &p->views[p->outputs[k]];
          fx_tensor *base = dev[v->buf];
          if (base == NULL)
            {
              st = fx_diag_set (diag, FX_ERR_BACKEND, "inductor (cuda): output %d has no device buffer", k);
              continue;
            }
          fx_tensor *view = fx_tensor_as_strided (base, v->ndim, v->sizes, v->strides, base->offset + v->offset);
          if (any_host && st == FX_OK)
            {
              fx_tensor *h = NULL;
              st = fx_cuda_tensor_to_host (cuda, NULL, view, &h, diag);
              fx_tensor_unref (view);
              view = h;
            }
          if (view)
            (*outputs)[k] = fx_value_tensor (view);
        }
      if (st != FX_OK)
        {
          for (int k = 0; k < p->n_outputs; k++)
            fx_value_clear (&(*outputs)[k]);
          *n_outputs = 0;
        }
    }
  for (int b = 0; b < p->n_bufs; b++)
    if (dev[b])
      fx_tensor_unref (dev[b]);
  free (dev);
  free (in_ptrs);
  free (out_ptrs);
  return st;
}

fx_status
ind_gpu_run (ind_gpu *gpu, const ind_program *p, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
             fx_value **outputs, size_t *n_outputs, fx_diag *diag)
{
  return run_once (gpu, p, inputs, n_inputs, arena, outputs, n_outputs, NULL, NULL, diag);
}

static void
clear_outputs (fx_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fx_value_clear (&v[i]);
}

/* PyTorch's benchmark of a compiled GPU graph: the inputs made resident on the device once, warm-up calls, then
   each call between two CUDA events on its stream (the call's device time, its launches included; no copy in or
   out); the first call's outputs are copied to the host, outside the timing, for the accuracy check. */
fx_status
ind_gpu_bench (ind_gpu *gpu, const ind_program *p, const fx_value *inputs, size_t n_inputs, int warmup, int repeat,
               fx_arena *arena, double *times_ms, fx_value **outputs, size_t *n_outputs, size_t *peak_bytes,
               fx_diag *diag)
{
  fx_cuda *cuda = gpu->cuda;
  fx_value *dev = calloc (n_inputs + 1, sizeof *dev);
  fx_cuda_event *span[2] = { NULL, NULL };
  fx_value *res = NULL;
  size_t n_res = 0;
  *outputs = NULL;
  *n_outputs = 0;
  *peak_bytes = 0;
  fx_status st = dev ? FX_OK : fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  for (size_t i = 0; st == FX_OK && i < n_inputs; i++)
    {
      const fx_value *v = &inputs[i];
      if (v->kind == FX_VALUE_TENSOR && v->u.t && v->u.t->device.type != FX_DEVICE_CUDA)
        {
          fx_tensor *t = NULL;
          st = fx_cuda_tensor_to_device (cuda, NULL, v->u.t, &t, diag);
          dev[i] = st == FX_OK ? fx_value_tensor (t) : fx_value_none ();
        }
      else
        dev[i] = fx_value_dup (v, arena);
    }
  if (st == FX_OK)
    st = fx_cuda_event_new (cuda, &span[0], diag);
  if (st == FX_OK)
    st = fx_cuda_event_new (cuda, &span[1], diag);
  fx_value *first = NULL;
  size_t n_first = 0;
  fx_cuda_alloc_stats before;
  memset (&before, 0, sizeof before);
  for (int i = 0; st == FX_OK && i < warmup + repeat; i++)
    {
      if (i == warmup)
        {
          fx_cuda_alloc_reset_peak (cuda);
          fx_cuda_alloc_get_stats (cuda, &before);
        }
      float ms = 0;
      st = run_once (gpu, p, dev, n_inputs, arena, &res, &n_res, NULL, i >= warmup ? span : NULL, diag);
      if (st == FX_OK && i >= warmup)
        {
          st = fx_cuda_event_elapsed_ms (span[0], span[1], &ms, diag);
          times_ms[i - warmup] = ms;
        }
      /* the first call's outputs are the ones the reference matches (random fallbacks draw from one generator);
         copied to the host after that call's timing */
      if (st == FX_OK && i == 0)
        {
          first = fx_arena_alloc (arena, sizeof (fx_value) * (n_res + 1));
          for (size_t k = 0; k < n_res; k++)
            {
              first[k] = fx_value_none ();
              if (st == FX_OK && res[k].kind == FX_VALUE_TENSOR && res[k].u.t
                  && res[k].u.t->device.type == FX_DEVICE_CUDA)
                {
                  fx_tensor *h = NULL;
                  st = fx_cuda_tensor_to_host (cuda, NULL, res[k].u.t, &h, diag);
                  if (h)
                    first[k] = fx_value_tensor (h);
                }
              else if (st == FX_OK)
                first[k] = fx_value_dup (&res[k], arena);
              n_first = k + 1;
            }
        }
      clear_outputs (res, n_res);
      n_res = 0;
    }
  if (st == FX_OK)
    {
      fx_cuda_alloc_stats after;
      fx_cuda_alloc_get_stats (cuda, &after);
      *peak_bytes = after.peak_allocated_bytes > before.allocated_bytes
                    ? after.peak_allocated_bytes - before.allocated_bytes : 0;
      *outputs = first;
      *n_outputs = n_first;
    }
  else
    clear_outputs (first, n_first);
  for (int k = 0; k < 2; k++)
    if (span[k])
      fx_cuda_event_free (span[k]);
  for (size_t i = 0; dev && i < n_inputs; i++)
    fx_value_clear (&dev[i]);
  free (dev);
  return st;
}

/* Per-kernel times with CUDA events around each step of eager runs (under reduce-overhead the graph is set aside
   for these runs: a replay is one span). */
fx_status
ind_gpu_profile (ind_gpu *gpu, const ind_program *p, fx_compiled *c, const fx_value *inputs, size_t n_inputs,
                 int repeat, fx_diag *diag)
{
  fx_cuda_timeline *tl = NULL;
  fx_status st = fx_cuda_timeline_new (gpu->cuda, &tl, diag);
  if (st != FX_OK)
    return st;
  bool graphs = gpu->graphs;
  double *ms = calloc (gpu->n_kernels + 1, sizeof (double));
  fx_cuda_program_use_graphs (gpu->prog, false);
  if (repeat < 1)
    repeat = 1;
  for (int r = -1; r < repeat && st == FX_OK; r++)
    {
      fx_arena *arena = fx_arena_new ();
      fx_value *res = NULL;
      size_t n_res = 0;
      fx_cuda_timeline_reset (tl);
      st = run_once (gpu, p, inputs, n_inputs, arena, &res, &n_res, tl, NULL, diag);
      if (st == FX_OK)
        st = fx_cuda_timeline_collect (tl, diag);
      for (size_t i = 0; st == FX_OK && r >= 0 && i < fx_cuda_timeline_count (tl) && i < gpu->n_steps; i++)
        ms[gpu->step_kernel[i]] += fx_cuda_timeline_ms (tl, i);
      for (size_t i = 0; i < n_res; i++)
        fx_value_clear (&res[i]);
      fx_arena_free (arena);
    }
  if (graphs)
    fx_cuda_program_use_graphs (gpu->prog, true);
  for (size_t k = 0; k < c->n_kernels && k < gpu->n_kernels; k++)
    c->kernels[k].time_ms = st == FX_OK ? ms[k] / repeat : -1;
  free (ms);
  fx_cuda_timeline_free (tl);
  return st;
}
