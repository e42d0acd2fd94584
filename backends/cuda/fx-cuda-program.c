/* fx-cuda-program.c: the GPU side of a compiled graph's wrapper: buffers and steps (launches, GEMMs, broadcasts) run
   eagerly with per-step timing, or under reduce-overhead as a CUDA graph (warm-up, record, replay) over the caller's
   input addresses (no copy while they stay) or over static inputs, with PyTorch's "skipping cudagraphs due to ..."
   when graphs cannot be used. */
#include "fx-cuda-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum buffer_role
{
  ROLE_INPUT,
  ROLE_OUTPUT,
  ROLE_TEMP,
} buffer_role;

typedef struct program_buffer
{
  buffer_role role;
  size_t nbytes;
  size_t role_index;
} program_buffer;

typedef enum step_kind
{
  STEP_LAUNCH,
  STEP_GEMM,
  STEP_BROADCAST,
  STEP_HOST,
  STEP_TAKE,
  STEP_ARGREDUCE,
} step_kind;

typedef struct program_step
{
  step_kind kind;
  char *label;
  /* launch */
  fx_cuda_kernel *kernel;
  unsigned int grid[3], block[3], shared_bytes;
  fx_cuda_arg *args;
  size_t n_args;
  /* gemm (c is d; cin the added matrix), broadcast */
  fx_dtype dtype;
  int64_t batch;
  double alpha, beta;
  fx_cuda_buffer_matrix a, b, c;
  fx_cuda_gemm_plan *plan;
  char *op;                     /* "mm", "addmm", "bmm": max-autotune's table */
  bool has_cin, has_bias;
  fx_cuda_buffer_matrix cin;
  int bias_buffer;
  size_t bias_offset;
  /* host: a node the device cannot run (fx_cuda_program_add_host) */
  fx_cuda_host_fn host_fn;
  void *host_ctx;
  /* take: an indexed copy; a is out, b is src, cin is idx (buffer and byte offset only) */
  fx_cuda_take_desc take;
  size_t elem_size;
  /* argreduce: a is val (buffer -1: none), b is src, cin is idx */
  fx_cuda_argreduce_desc argred;
} program_step;

struct fx_cuda_program
{
  fx_cuda *cuda;
  fx_cuda_module **modules;
  size_t n_modules;
  program_buffer *buffers;
  size_t n_buffers, n_inputs, n_outputs;
  program_step *steps;
  size_t n_steps;
  bool use_graphs;
  char *skip_message;
  fx_cuda_program_state state;
  fx_cuda_graph *graph;
  fx_cuda_ptr *static_ptrs;     /* per buffer, while recorded: inputs (ours), outputs (the graph's) */
  fx_cuda_graph *direct_graph;  /* recorded over the caller's input addresses of the recording run */
  fx_cuda_ptr *direct_ptrs;     /* per buffer: inputs (the caller's, never freed here), outputs (that graph's) */
  fx_cuda_generation *generation; /* replays of the graph: static outputs handed out go stale at the next */
};

fx_status
fx_cuda_program_new (fx_cuda *cuda, fx_cuda_program **out, fx_diag *diag)
{
  *out = calloc (1, sizeof **out);
  if (!*out)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  (*out)->cuda = cuda;
  (*out)->generation = fx_cuda_generation_new ();
  if (!(*out)->generation)
    {
      free (*out);
      *out = NULL;
      return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
    }
  return FX_OK;
}

/* Drops one recorded graph and the memory of its buffers (OUTPUTS_ONLY: the inputs are the caller's); the static
   outputs handed out go with the graph's memory, so their generation moves on. */
static void
release_graph (fx_cuda_program *p, fx_cuda_graph **graph, fx_cuda_ptr **ptrs, bool outputs_only)
{
  if (*graph)
    {
      fx_cuda_generation_bump (p->generation);
      fx_cuda_graph_free (*graph);
    }
  *graph = NULL;
  if (*ptrs)
    for (size_t i = 0; i < p->n_buffers; i++)
      if (!outputs_only || p->buffers[i].role == ROLE_OUTPUT)
        fx_cuda_free (p->cuda, (*ptrs)[i]);
  free (*ptrs);
  *ptrs = NULL;
}

static void
release_recording (fx_cuda_program *p)
{
  release_graph (p, &p->graph, &p->static_ptrs, false);
  release_graph (p, &p->direct_graph, &p->direct_ptrs, true);
}

void
fx_cuda_program_free (fx_cuda_program *program)
{
  if (!program)
    return;
  fx_cuda_generation_retire (program->generation);
  release_recording (program);
  fx_cuda_generation_unref (program->generation);
  for (size_t i = 0; i < program->n_steps; i++)
    {
      free (program->steps[i].label);
      free (program->steps[i].args);
      free (program->steps[i].op);
      fx_cuda_gemm_plan_free (program->steps[i].plan);
    }
  free (program->steps);
  for (size_t i = 0; i < program->n_modules; i++)
    fx_cuda_module_free (program->modules[i]);
  free (program->modules);
  free (program->buffers);
  free (program->skip_message);
  free (program);
}

fx_status
fx_cuda_program_add_source (fx_cuda_program *program, const char *source, const char *name,
                            const fx_cuda_build_options *options, fx_cuda_build_info *info, fx_diag *diag)
{
  fx_cuda_module **modules = realloc (program->modules, (program->n_modules + 1) * sizeof *modules);
  fx_status st;

  if (!modules)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  program->modules = modules;
  st = fx_cuda_module_build (program->cuda, source, name, options, &modules[program->n_modules], info, diag);
  if (st == FX_OK)
    program->n_modules++;
  return st;
}

fx_status
fx_cuda_program_set_global (fx_cuda_program *program, const char *name, const void *data, size_t bytes,
                            fx_diag *diag)
{
  if (program->n_modules == 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "no module to set '%.64s' in", name);
  return fx_cuda_module_set_global (program->modules[program->n_modules - 1], name, data, bytes, diag);
}

static int
add_buffer (fx_cuda_program *p, buffer_role role, size_t nbytes, size_t *role_count)
{
  program_buffer *b = realloc (p->buffers, (p->n_buffers + 1) * sizeof *b);
  if (!b)
    return -1;
  p->buffers = b;
  b[p->n_buffers].role = role;
  b[p->n_buffers].nbytes = nbytes;
  b[p->n_buffers].role_index = role_count ? (*role_count)++ : 0;
  return (int) p->n_buffers++;
}

int
fx_cuda_program_add_input (fx_cuda_program *program, size_t nbytes)
{
  return add_buffer (program, ROLE_INPUT, nbytes, &program->n_inputs);
}

int
fx_cuda_program_add_output (fx_cuda_program *program, size_t nbytes)
{
  return add_buffer (program, ROLE_OUTPUT, nbytes, &program->n_outputs);
}

int
fx_cuda_program_add_temp (fx_cuda_program *program, size_t nbytes)
{
  return add_buffer (program, ROLE_TEMP, nbytes, NULL);
}

/* Appends STEP, its kind and payload built by the caller, under a copy of LABEL; the program then owns what the
   payload points to (else, out of memory, the caller still does). */
static fx_status
add_step (fx_cuda_program *p, const program_step *step, const char *label, fx_diag *diag)
{
  program_step *steps = realloc (p->steps, (p->n_steps + 1) * sizeof *steps);
  char *copy = strdup (label ? label : "");

  if (steps)
    p->steps = steps;
  if (!steps || !copy)
    {
      free (copy);
      return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
    }
  steps[p->n_steps] = *step;
  steps[p->n_steps].label = copy;
  p->n_steps++;
  return FX_OK;
}

/* A matrix must lie inside its buffer: the last element it reaches, plus one, within nbytes. */
static fx_status
check_matrix (const fx_cuda_program *p, const char *what, const fx_cuda_buffer_matrix *m, fx_dtype dtype,
              int64_t batch, fx_diag *diag)
{
  size_t item = fx_dtype_size (dtype);
  int64_t last = 0;

  if (m->buffer < 0 || (size_t) m->buffer >= p->n_buffers)
    return fx_diag_set (diag, FX_ERR_INVALID, "%s: no buffer %d", what, m->buffer);
  if (m->rows < 0 || m->cols < 0 || m->row_stride < 0 || m->col_stride < 0 || m->batch_stride < 0 || batch < 1)
    return fx_diag_set (diag, FX_ERR_INVALID, "%s: negative sizes or strides", what);
  if (m->rows == 0 || m->cols == 0)
    return FX_OK;
  last = (batch - 1) * m->batch_stride + (m->rows - 1) * m->row_stride + (m->cols - 1) * m->col_stride;
  if (m->offset + (size_t) (last + 1) * item > p->buffers[m->buffer].nbytes)
    return fx_diag_set (diag, FX_ERR_INVALID, "%s reaches byte %zu of buffer %d, which has %zu", what,
                        m->offset + (size_t) (last + 1) * item, m->buffer, p->buffers[m->buffer].nbytes);
  return FX_OK;
}

fx_status
fx_cuda_program_add_launch (fx_cuda_program *program, const char *kernel, const char *label,
                            const unsigned int grid[3], const unsigned int block[3], unsigned int shared_bytes,
                            const fx_cuda_arg *args, size_t n_args, fx_diag *diag)
{
  fx_cuda_kernel *k = NULL;
  fx_status st;

  for (size_t i = 0; i < program->n_modules && !k; i++)
    if (fx_cuda_module_get_kernel (program->modules[i], kernel, &k, NULL) != FX_OK)
      k = NULL;
  if (!k)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "no kernel '%s' in the program's modules", kernel);
  for (size_t i = 0; i < n_args; i++)
    if (args[i].kind == FX_CUDA_ARG_BUFFER
        && (args[i].buffer < 0 || (size_t) args[i].buffer >= program->n_buffers
            || args[i].offset >= program->buffers[args[i].buffer].nbytes))
      return fx_diag_set (diag, FX_ERR_INVALID, "%s: argument %zu points outside the program's buffers", kernel, i);
  program_step s = { .kind = STEP_LAUNCH, .kernel = k, .shared_bytes = shared_bytes, .n_args = n_args };
  memcpy (s.grid, grid, sizeof s.grid);
  memcpy (s.block, block, sizeof s.block);
  s.args = n_args ? malloc (n_args * sizeof *s.args) : NULL;
  if (n_args && !s.args)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  if (n_args)
    memcpy (s.args, args, n_args * sizeof *args);
  if ((st = add_step (program, &s, label ? label : kernel, diag)) != FX_OK)
    free (s.args);
  return st;
}

static fx_cuda_matrix
plain_matrix (const fx_cuda_buffer_matrix *m)
{
  fx_cuda_matrix r = { 0, m->rows, m->cols, m->row_stride, m->col_stride, m->batch_stride };
  return r;
}

/* The alignment every pointer of a matrix at this offset has, given 16-byte aligned buffers (the allocator's blocks
   are 256-byte aligned; inputs must be 16-byte aligned for GEMM steps). */
static size_t
offset_alignment (size_t offset)
{
  size_t a = 16;
  while (a > 1 && offset % a)
    a /= 2;
  return a;
}

fx_status
fx_cuda_program_add_gemm_ex (fx_cuda_program *program, const fx_cuda_program_gemm *gemm, fx_diag *diag)
{
  const fx_cuda_program_gemm *g = gemm;
  fx_cuda_gemm_desc desc;
  fx_cuda_gemm_plan *plan = NULL;
  fx_status st;
  size_t align;

  if ((st = check_matrix (program, "gemm a", &g->a, g->dtype, g->batch, diag)) != FX_OK
      || (st = check_matrix (program, "gemm b", &g->b, g->dtype, g->batch, diag)) != FX_OK
      || (st = check_matrix (program, "gemm d", &g->d, g->dtype, g->batch, diag)) != FX_OK
      || (g->has_c && (st = check_matrix (program, "gemm c", &g->c, g->dtype, g->batch, diag)) != FX_OK))
    return st;
  if (g->has_bias)
    {
      fx_cuda_buffer_matrix bias = { g->bias_buffer, g->bias_offset, 1, g->d.cols, g->d.cols, 1, 0 };
      if ((st = check_matrix (program, "gemm bias", &bias, g->dtype, 1, diag)) != FX_OK)
        return st;
    }
  memset (&desc, 0, sizeof desc);
  desc.dtype = g->dtype;
  desc.batch = g->batch;
  desc.alpha = g->alpha;
  desc.beta = g->beta;
  desc.a = plain_matrix (&g->a);
  desc.b = plain_matrix (&g->b);
  desc.d = plain_matrix (&g->d);
  desc.has_c = g->has_c;
  if (g->has_c)
    desc.c = plain_matrix (&g->c);
  desc.has_bias = g->has_bias;
  align = offset_alignment (g->a.offset);
  if (offset_alignment (g->b.offset) < align)
    align = offset_alignment (g->b.offset);
  if (offset_alignment (g->d.offset) < align)
    align = offset_alignment (g->d.offset);
  if (g->has_c && offset_alignment (g->c.offset) < align)
    align = offset_alignment (g->c.offset);
  if (g->has_bias && offset_alignment (g->bias_offset) < align)
    align = offset_alignment (g->bias_offset);
  desc.alignment = align;
  if ((st = fx_cuda_gemm_plan_new (program->cuda, &desc, g->max_algos > 0 ? g->max_algos : 1, &plan, diag))
      != FX_OK)
    return st;
  program_step s = {
    .kind = STEP_GEMM, .plan = plan, .op = strdup (g->op ? g->op : (g->batch > 1 ? "bmm" : "mm")),
    .dtype = g->dtype, .batch = g->batch, .alpha = g->alpha, .beta = g->beta, .a = g->a, .b = g->b, .c = g->d,
    .has_cin = g->has_c, .cin = g->c, .has_bias = g->has_bias, .bias_buffer = g->bias_buffer,
    .bias_offset = g->bias_offset,
  };
  st = s.op ? add_step (program, &s, g->label ? g->label : "extern_kernels.mm", diag)
            : fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  if (st != FX_OK)
    {
      free (s.op);
      fx_cuda_gemm_plan_free (plan);
    }
  return st;
}

fx_status
fx_cuda_program_add_gemm (fx_cuda_program *program, const char *label, fx_dtype dtype, int64_t batch, double alpha,
                          const fx_cuda_buffer_matrix *a, const fx_cuda_buffer_matrix *b, double beta,
                          const fx_cuda_buffer_matrix *c, fx_diag *diag)
{
  fx_cuda_program_gemm g;

  memset (&g, 0, sizeof g);
  g.label = label;
  g.dtype = dtype;
  g.batch = batch;
  g.alpha = alpha;
  g.beta = beta;
  g.a = *a;
  g.b = *b;
  g.d = *c;
  /* c += ...: in place, c is d */
  g.has_c = beta != 0.0;
  g.c = *c;
  return fx_cuda_program_add_gemm_ex (program, &g, diag);
}

fx_status
fx_cuda_program_add_broadcast (fx_cuda_program *program, const char *label, fx_dtype dtype,
                               const fx_cuda_buffer_matrix *src, double scale, const fx_cuda_buffer_matrix *dst,
                               fx_diag *diag)
{
  fx_status st;

  if ((st = check_matrix (program, "broadcast src", src, dtype, 1, diag)) != FX_OK
      || (st = check_matrix (program, "broadcast dst", dst, dtype, 1, diag)) != FX_OK)
    return st;
  program_step s = { .kind = STEP_BROADCAST, .dtype = dtype, .alpha = scale, .a = *src, .c = *dst };
  return add_step (program, &s, label ? label : "broadcast", diag);
}

fx_status
fx_cuda_program_add_host (fx_cuda_program *program, const char *label, fx_cuda_host_fn fn, void *ctx, fx_diag *diag)
{
  program_step s = { .kind = STEP_HOST, .host_fn = fn, .host_ctx = ctx };
  return add_step (program, &s, label ? label : "host", diag);
}

/* Adds STEP (its kind and payload filled) over three buffer places a, b and cin (take: out, src, idx; argreduce: val
   or -1, src, idx), checked. */
static fx_status
add_three_buffer_step (fx_cuda_program *program, program_step *step, const char *label, int a_buffer,
                       size_t a_offset, int b_buffer, size_t b_offset, int c_buffer, size_t c_offset, bool a_optional,
                       fx_diag *diag)
{
  int bufs[3] = { a_buffer, b_buffer, c_buffer };

  for (int i = 0; i < 3; i++)
    if ((bufs[i] < 0 && !(i == 0 && a_optional)) || (bufs[i] >= 0 && (size_t) bufs[i] >= program->n_buffers))
      return fx_diag_set (diag, FX_ERR_INVALID, "%s: no buffer %d", label, bufs[i]);
  step->a.buffer = a_buffer;
  step->a.offset = a_offset;
  step->b.buffer = b_buffer;
  step->b.offset = b_offset;
  step->cin.buffer = c_buffer;
  step->cin.offset = c_offset;
  return add_step (program, step, label, diag);
}

fx_status
fx_cuda_program_add_argreduce (fx_cuda_program *program, const char *label, fx_dtype dtype,
                               const fx_cuda_argreduce_desc *desc, int val_buffer, size_t val_offset, int idx_buffer,
                               size_t idx_offset, int src_buffer, size_t src_offset, fx_diag *diag)
{
  program_step s = { .kind = STEP_ARGREDUCE, .argred = *desc, .dtype = dtype };
  return add_three_buffer_step (program, &s, label ? label : "argreduce", val_buffer, val_offset, src_buffer,
                                src_offset, idx_buffer, idx_offset, true, diag);
}

fx_status
fx_cuda_program_add_take (fx_cuda_program *program, const char *label, size_t elem_size, const fx_cuda_take_desc *desc,
                          int out_buffer, size_t out_offset, int src_buffer, size_t src_offset, int idx_buffer,
                          size_t idx_offset, fx_diag *diag)
{
  program_step s = { .kind = STEP_TAKE, .take = *desc, .elem_size = elem_size };
  return add_three_buffer_step (program, &s, label ? label : "take", out_buffer, out_offset, src_buffer, src_offset,
                                idx_buffer, idx_offset, false, diag);
}

bool
fx_cuda_program_has_host_steps (const fx_cuda_program *program)
{
  for (size_t i = 0; i < program->n_steps; i++)
    if (program->steps[i].kind == STEP_HOST)
      return true;
  return false;
}

void
fx_cuda_program_use_graphs (fx_cuda_program *program, bool on)
{
  program->use_graphs = on && !program->skip_message;
}

void
fx_cuda_program_skip_graphs (fx_cuda_program *program, const char *reason)
{
  char msg[1200];

  snprintf (msg, sizeof msg, "skipping cudagraphs due to %s", reason ? reason : "an unknown reason");
  free (program->skip_message);
  program->skip_message = strdup (msg);
  program->use_graphs = false;
  release_recording (program);
  program->state = FX_CUDA_PROGRAM_NONE;
}

const char *
fx_cuda_program_skip_message (const fx_cuda_program *program)
{
  return program->skip_message;
}

fx_cuda_program_state
fx_cuda_program_get_state (const fx_cuda_program *program)
{
  return program->state;
}

size_t
fx_cuda_program_n_steps (const fx_cuda_program *program)
{
  return program->n_steps;
}

fx_cuda_ptr
fx_cuda_program_static_input (const fx_cuda_program *program, size_t i)
{
  if (!program->static_ptrs)
    return 0;
  for (size_t b = 0; b < program->n_buffers; b++)
    if (program->buffers[b].role == ROLE_INPUT && program->buffers[b].role_index == i)
      return program->static_ptrs[b];
  return 0;
}

static fx_cuda_matrix
resolve (const fx_cuda_buffer_matrix *m, const fx_cuda_ptr *ptrs)
{
  fx_cuda_matrix r = { ptrs[m->buffer] + m->offset, m->rows, m->cols, m->row_stride, m->col_stride, m->batch_stride };
  return r;
}

static fx_status
run_step (fx_cuda_program *p, const program_step *s, fx_cuda_stream *stream, const fx_cuda_ptr *ptrs, fx_diag *diag)
{
  switch (s->kind)
    {
    case STEP_LAUNCH:
      {
        union
        {
          uint64_t ptr;
          int32_t i32;
          int64_t i64;
          float f32;
          double f64;
        } vals[64];
        void *params[64];
        if (s->n_args > 64)
          return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "%s: more than 64 kernel arguments", s->label);
        for (size_t i = 0; i < s->n_args; i++)
          {
            const fx_cuda_arg *a = &s->args[i];
            if (a->kind == FX_CUDA_ARG_BUFFER)
              vals[i].ptr = ptrs[a->buffer] + a->offset;
            else if (a->kind == FX_CUDA_ARG_I32)
              vals[i].i32 = a->v.i32;
            else if (a->kind == FX_CUDA_ARG_I64)
              vals[i].i64 = a->v.i64;
            else if (a->kind == FX_CUDA_ARG_F32)
              vals[i].f32 = a->v.f32;
            else
              vals[i].f64 = a->v.f64;
            params[i] = &vals[i];
          }
        return fx_cuda_launch (s->kernel, stream, s->grid, s->block, s->shared_bytes, params, diag);
      }
    case STEP_GEMM:
      return fx_cuda_gemm_plan_run (s->plan, stream, -1, ptrs[s->a.buffer] + s->a.offset,
                                    ptrs[s->b.buffer] + s->b.offset,
                                    s->has_cin ? ptrs[s->cin.buffer] + s->cin.offset : 0,
                                    s->has_bias ? ptrs[s->bias_buffer] + s->bias_offset : 0,
                                    ptrs[s->c.buffer] + s->c.offset, diag);
    case STEP_BROADCAST:
      {
        fx_cuda_matrix src = resolve (&s->a, ptrs), dst = resolve (&s->c, ptrs);
        return fx_cuda_broadcast_scale (p->cuda, stream, s->dtype, &src, s->alpha, &dst, diag);
      }
    case STEP_HOST:
      return s->host_fn (s->host_ctx, stream, ptrs, diag);
    case STEP_TAKE:
      {
        fx_cuda_take_desc d = s->take;
        d.out = ptrs[s->a.buffer] + s->a.offset;
        d.src = ptrs[s->b.buffer] + s->b.offset;
        d.idx = ptrs[s->cin.buffer] + s->cin.offset;
        return fx_cuda_take (p->cuda, stream, s->elem_size, &d, diag);
      }
    case STEP_ARGREDUCE:
      {
        fx_cuda_argreduce_desc d = s->argred;
        d.val = s->a.buffer >= 0 ? ptrs[s->a.buffer] + s->a.offset : 0;
        d.src = ptrs[s->b.buffer] + s->b.offset;
        d.idx = ptrs[s->cin.buffer] + s->cin.offset;
        return fx_cuda_argreduce (p->cuda, stream, s->dtype, &d, diag);
      }
    default:
      return fx_diag_set (diag, FX_ERR_INVALID, "unknown program step");
    }
}

static fx_status
run_steps (fx_cuda_program *p, fx_cuda_stream *stream, const fx_cuda_ptr *ptrs, fx_cuda_timeline *timeline,
           fx_diag *diag)
{
  fx_status st;

  for (size_t i = 0; i < p->n_steps; i++)
    {
      if (timeline && (st = fx_cuda_timeline_begin (timeline, stream, p->steps[i].label, diag)) != FX_OK)
        return st;
      if ((st = run_step (p, &p->steps[i], stream, ptrs, diag)) != FX_OK)
        return st;
      if (timeline && (st = fx_cuda_timeline_end (timeline, stream, diag)) != FX_OK)
        return st;
    }
  return FX_OK;
}

/* Eager: inputs as given, outputs and temporaries from the caching allocator (temporaries go back at the end, in
   stream order, so the next run reuses them without the driver). */
static fx_status
run_eager (fx_cuda_program *p, fx_cuda_stream *stream, const fx_cuda_ptr *inputs, fx_cuda_ptr *outputs,
           fx_cuda_timeline *timeline, fx_diag *diag)
{
  fx_cuda_ptr *ptrs = calloc (p->n_buffers + 1, sizeof *ptrs);
  fx_status st = FX_OK;

  if (!ptrs)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  for (size_t b = 0; b < p->n_buffers && st == FX_OK; b++)
    {
      if (p->buffers[b].role == ROLE_INPUT)
        ptrs[b] = inputs[p->buffers[b].role_index];
      else
        st = fx_cuda_malloc (p->cuda, p->buffers[b].nbytes, stream, &ptrs[b], diag);
    }
  if (st == FX_OK)
    st = run_steps (p, stream, ptrs, timeline, diag);
  for (size_t b = 0; b < p->n_buffers; b++)
    {
      if (p->buffers[b].role == ROLE_TEMP || (p->buffers[b].role == ROLE_OUTPUT && st != FX_OK))
        fx_cuda_free (p->cuda, ptrs[b]);
      else if (p->buffers[b].role == ROLE_OUTPUT)
        outputs[p->buffers[b].role_index] = ptrs[b];
    }
  free (ptrs);
  return st;
}

static fx_status
copy_inputs (fx_cuda_program *p, fx_cuda_stream *stream, const fx_cuda_ptr *inputs, fx_diag *diag)
{
  fx_status st;

  for (size_t b = 0; b < p->n_buffers; b++)
    if (p->buffers[b].role == ROLE_INPUT && inputs[p->buffers[b].role_index] != p->static_ptrs[b])
      if ((st = fx_cuda_copy_d2d (p->cuda, stream, p->static_ptrs[b], inputs[p->buffers[b].role_index],
                                  p->buffers[b].nbytes, diag)) != FX_OK)
        return st;
  return FX_OK;
}

/* cuBLAS and the built-in kernels must exist before a capture: creating them allocates and loads modules. */
static fx_status
prepare_capture (fx_cuda_program *p, fx_diag *diag)
{
  fx_status st;

  for (size_t i = 0; i < p->n_steps; i++)
    {
      fx_cuda_blas *blas;
      bool lt = p->steps[i].kind == STEP_GEMM && fx_cuda_gemm_plan_uses_lt (p->steps[i].plan, NULL);
      if (p->steps[i].kind == STEP_GEMM && !lt && (st = fx_cuda_get_blas (p->cuda, &blas, diag)) != FX_OK)
        return st;
      /* the cuBLAS path of a plan broadcasts its bias or c with the built-in kernel */
      if ((p->steps[i].kind == STEP_BROADCAST || p->steps[i].kind == STEP_TAKE || p->steps[i].kind == STEP_ARGREDUCE
           || (p->steps[i].kind == STEP_GEMM && !lt))
          && (st = fx_cuda_builtin_prepare (p->cuda, diag)) != FX_OK)
        return st;
    }
  return FX_OK;
}

/* Captures the steps over ptrs (inputs filled in): outputs and temporaries are allocated inside the capture, so they
   come from the graph's private pool and stay the graph's while it lives. */
static fx_status
capture (fx_cuda_program *p, fx_cuda_stream *stream, fx_cuda_ptr *ptrs, fx_cuda_graph **graph, fx_diag *diag)
{
  fx_status st, end;

  if ((st = prepare_capture (p, diag)) != FX_OK || (st = fx_cuda_graph_capture_begin (stream, diag)) != FX_OK)
    return st;
  for (size_t b = 0; b < p->n_buffers && st == FX_OK; b++)
    if (p->buffers[b].role != ROLE_INPUT)
      st = fx_cuda_malloc (p->cuda, p->buffers[b].nbytes, stream, &ptrs[b], diag);
  if (st == FX_OK)
    st = run_steps (p, stream, ptrs, NULL, diag);
  for (size_t b = 0; b < p->n_buffers; b++)
    if (p->buffers[b].role == ROLE_TEMP)
      {
        fx_cuda_free (p->cuda, ptrs[b]);
        ptrs[b] = 0;
      }
  {
    fx_diag end_diag;
    fx_diag_clear (&end_diag);
    end = fx_cuda_graph_capture_end (stream, graph, st == FX_OK ? diag : &end_diag);
  }
  return st != FX_OK ? st : end;
}

/* The graph over static input buffers of our own: later inputs are copied in unless they are already there. */
static fx_status
record (fx_cuda_program *p, fx_cuda_stream *stream, const fx_cuda_ptr *inputs, fx_diag *diag)
{
  fx_status st = FX_OK;

  p->static_ptrs = calloc (p->n_buffers + 1, sizeof *p->static_ptrs);
  if (!p->static_ptrs)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  for (size_t b = 0; b < p->n_buffers && st == FX_OK; b++)
    if (p->buffers[b].role == ROLE_INPUT)
      st = fx_cuda_malloc (p->cuda, p->buffers[b].nbytes, stream, &p->static_ptrs[b], diag);
  if (st != FX_OK || (st = copy_inputs (p, stream, inputs, diag)) != FX_OK)
    return st;
  return capture (p, stream, p->static_ptrs, &p->graph, diag);
}

/* The graph over the caller's own input addresses, replayed while a run's inputs are at those same addresses: it
   reads them where they are, as an eager run would, so that nothing is copied. (The memory at those addresses is
   the caller's input of that run whenever the addresses match; the graph only writes its own pool.) */
static fx_status
record_direct (fx_cuda_program *p, fx_cuda_stream *stream, const fx_cuda_ptr *inputs, fx_diag *diag)
{
  p->direct_ptrs = calloc (p->n_buffers + 1, sizeof *p->direct_ptrs);
  if (!p->direct_ptrs)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  for (size_t b = 0; b < p->n_buffers; b++)
    if (p->buffers[b].role == ROLE_INPUT)
      p->direct_ptrs[b] = inputs[p->buffers[b].role_index];
  return capture (p, stream, p->direct_ptrs, &p->direct_graph, diag);
}

static bool
inputs_are_direct (const fx_cuda_program *p, const fx_cuda_ptr *inputs)
{
  if (!p->direct_graph)
    return false;
  for (size_t b = 0; b < p->n_buffers; b++)
    if (p->buffers[b].role == ROLE_INPUT && inputs[p->buffers[b].role_index] != p->direct_ptrs[b])
      return false;
  return true;
}

/* Records a graph with RECORDER; false when the capture failed: what cannot be captured runs eagerly from now on,
   and says why. */
static bool
try_record (fx_cuda_program *p,
            fx_status (*recorder) (fx_cuda_program *, fx_cuda_stream *, const fx_cuda_ptr *, fx_diag *),
            fx_cuda_stream *s, const fx_cuda_ptr *inputs)
{
  fx_diag why;
  fx_diag_clear (&why);
  if (recorder (p, s, inputs, &why) == FX_OK)
    return true;
  char reason[1100];
  snprintf (reason, sizeof reason, "a failed capture (%s)", why.message);
  fx_cuda_program_skip_graphs (p, reason);
  return false;
}

fx_status
fx_cuda_program_run (fx_cuda_program *program, fx_cuda_stream *stream, const fx_cuda_ptr *inputs, size_t n_inputs,
                     fx_cuda_ptr *outputs, size_t n_outputs, bool *caller_owns, fx_cuda_timeline *timeline,
                     fx_diag *diag)
{
  fx_cuda_program *p = program;
  fx_cuda_stream *s = fx_cuda_stream_or_default (p->cuda, stream);
  fx_status st;

  if (n_inputs != p->n_inputs || n_outputs != p->n_outputs)
    return fx_diag_set (diag, FX_ERR_INVALID, "the program takes %zu inputs and %zu outputs, given %zu and %zu",
                        p->n_inputs, p->n_outputs, n_inputs, n_outputs);
  for (size_t i = 0; i < n_inputs; i++)
    if (inputs[i] == 0)
      return fx_diag_set (diag, FX_ERR_INVALID, "input %zu is a null device pointer", i);
  if (caller_owns)
    *caller_owns = true;

  if (!p->use_graphs || p->state == FX_CUDA_PROGRAM_NONE)
    {
      st = run_eager (p, s, inputs, outputs, timeline, diag);
      if (st == FX_OK && p->use_graphs)
        p->state = FX_CUDA_PROGRAM_WARMUP;
      return st;
    }

  if (p->state == FX_CUDA_PROGRAM_WARMUP)
    {
      if (!try_record (p, record_direct, s, inputs))
        return run_eager (p, s, inputs, outputs, timeline, diag);
      p->state = FX_CUDA_PROGRAM_EXECUTION;
    }
  bool direct = inputs_are_direct (p, inputs);
  if (!direct && !p->graph)
    {
      /* inputs at other addresses: the graph over static buffers, recorded once */
      if (!try_record (p, record, s, inputs))
        return run_eager (p, s, inputs, outputs, timeline, diag);
    }
  else if (!direct && (st = copy_inputs (p, s, inputs, diag)) != FX_OK)
    return st;

  /* The capture recorded the work without running it: a replay runs it, the first time too. Outputs handed out
     before are overwritten from here on (the other graph's too: PyTorch's rule is any later run). */
  fx_cuda_generation_bump (p->generation);
  if (timeline && (st = fx_cuda_timeline_begin (timeline, s, "cudagraph replay", diag)) != FX_OK)
    return st;
  if ((st = fx_cuda_graph_replay (direct ? p->direct_graph : p->graph, s, diag)) != FX_OK)
    return st;
  if (timeline && (st = fx_cuda_timeline_end (timeline, s, diag)) != FX_OK)
    return st;
  for (size_t b = 0; b < p->n_buffers; b++)
    if (p->buffers[b].role == ROLE_OUTPUT)
      outputs[p->buffers[b].role_index] = direct ? p->direct_ptrs[b] : p->static_ptrs[b];
  if (caller_owns)
    *caller_owns = false;
  return FX_OK;
}

fx_cuda_generation *
fx_cuda_program_generation (const fx_cuda_program *program)
{
  return program->generation;
}

fx_cuda_gemm_plan *
fx_cuda_program_gemm_plan (const fx_cuda_program *program, size_t step)
{
  return step < program->n_steps && program->steps[step].kind == STEP_GEMM ? program->steps[step].plan : NULL;
}

typedef struct gemm_bench
{
  const program_step *s;
  const fx_cuda_ptr *ptrs;
  int algo;
} gemm_bench;

static fx_status
gemm_bench_run (void *data, fx_cuda_stream *stream, fx_diag *diag)
{
  const gemm_bench *g = data;
  const program_step *s = g->s;
  const fx_cuda_ptr *ptrs = g->ptrs;

  return fx_cuda_gemm_plan_run (s->plan, stream, g->algo, ptrs[s->a.buffer] + s->a.offset,
                                ptrs[s->b.buffer] + s->b.offset,
                                s->has_cin ? ptrs[s->cin.buffer] + s->cin.offset : 0,
                                s->has_bias ? ptrs[s->bias_buffer] + s->bias_offset : 0,
                                ptrs[s->c.buffer] + s->c.offset, diag);
}

/* "8192x1024" (with the batch first when batched) */
static void
describe_size (fx_buf *out, int64_t batch, int64_t rows, int64_t cols)
{
  if (batch > 1)
    fx_buf_printf (out, "%lldx", (long long) batch);
  fx_buf_printf (out, "%lldx%lld", (long long) rows, (long long) cols);
}

static void
describe_stride (fx_buf *out, int64_t batch, const fx_cuda_buffer_matrix *m)
{
  if (batch > 1)
    fx_buf_printf (out, "[%lld, %lld, %lld]", (long long) m->batch_stride, (long long) m->row_stride,
                   (long long) m->col_stride);
  else
    fx_buf_printf (out, "[%lld, %lld]", (long long) m->row_stride, (long long) m->col_stride);
}

/* The inputs as select_algorithm.py lists them: addmm's bias expanded to the output's shape (stride 0 along the
   rows) first, then a and b, then an added matrix other than the output itself. */
static void
describe_gemm (const program_step *s, fx_buf *title, fx_buf *strides, fx_buf *dtypes)
{
  const fx_cuda_buffer_matrix *mats[2] = { &s->a, &s->b };
  const char *dt = fx_dtype_name (s->dtype);
  bool extra = s->has_cin && !(s->cin.buffer == s->c.buffer && s->cin.offset == s->c.offset);
  int n = 0;

  fx_buf_printf (title, "%s(", s->op ? s->op : "mm");
  if (s->has_bias)
    {
      describe_size (title, 1, s->c.rows, s->c.cols);
      fx_buf_puts (strides, "[0, 1]");
      fx_buf_printf (dtypes, "torch.%s", dt);
      n++;
    }
  for (int i = 0; i < 2; i++, n++)
    {
      fx_buf_puts (title, n ? ", " : "");
      fx_buf_puts (strides, n ? ", " : "");
      fx_buf_printf (dtypes, "%storch.%s", n ? ", " : "", dt);
      describe_size (title, s->batch, mats[i]->rows, mats[i]->cols);
      describe_stride (strides, s->batch, mats[i]);
    }
  if (extra)
    {
      fx_buf_puts (title, ", ");
      describe_size (title, s->batch, s->cin.rows, s->cin.cols);
      fx_buf_puts (strides, ", ");
      describe_stride (strides, s->batch, &s->cin);
      fx_buf_printf (dtypes, ", torch.%s", dt);
    }
  fx_buf_puts (title, ")");
}

fx_status
fx_cuda_program_autotune_gemms (fx_cuda_program *program, fx_cuda_stream *stream,
                                const fx_cuda_bench_options *options, fx_buf *table, int *n_tuned, fx_diag *diag)
{
  fx_cuda_program *p = program;
  fx_cuda_ptr *ptrs = calloc (p->n_buffers + 1, sizeof *ptrs);
  fx_status st = FX_OK;

  if (n_tuned)
    *n_tuned = 0;
  if (!ptrs)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  for (size_t i = 0; i < p->n_steps && st == FX_OK; i++)
    {
      program_step *s = &p->steps[i];
      int n = s->kind == STEP_GEMM ? fx_cuda_gemm_plan_n_algos (s->plan) : 0;
      fx_cuda_autotune_choice choices[FX_CUDA_GEMM_MAX_ALGOS];
      gemm_bench ctx[FX_CUDA_GEMM_MAX_ALGOS];
      char names[FX_CUDA_GEMM_MAX_ALGOS][96], descs[FX_CUDA_GEMM_MAX_ALGOS][192];
      fx_cuda_autotune_result res;
      fx_buf title, strides, dtypes;
      int used[4] = { s->a.buffer, s->b.buffer, s->c.buffer, -1 };

      if (n < 2)
        continue;
      /* scratch for what this GEMM touches (zeros: the time of a GEMM does not depend on its values) */
      if (s->has_cin)
        used[3] = s->cin.buffer;
      for (int u = 0; u < 5 && st == FX_OK; u++)
        {
          int b = u < 4 ? used[u] : (s->has_bias ? s->bias_buffer : -1);
          if (b < 0 || ptrs[b])
            continue;
          st = fx_cuda_malloc (p->cuda, p->buffers[b].nbytes, stream, &ptrs[b], diag);
          if (st == FX_OK)
            st = fx_cuda_memset (p->cuda, stream, ptrs[b], 0, p->buffers[b].nbytes, diag);
        }
      if (st != FX_OK)
        break;
      for (int k = 0; k < n; k++)
        {
          ctx[k].s = s;
          ctx[k].ptrs = ptrs;
          ctx[k].algo = k;
          fx_cuda_gemm_plan_algo_name (s->plan, k, names[k], sizeof names[k]);
          fx_cuda_gemm_plan_algo_describe (s->plan, k, descs[k], sizeof descs[k]);
          choices[k].name = names[k];
          choices[k].description = descs[k];
          choices[k].fn = gemm_bench_run;
          choices[k].ctx = &ctx[k];
        }
      fx_buf_init (&title);
      fx_buf_init (&strides);
      fx_buf_init (&dtypes);
      describe_gemm (s, &title, &strides, &dtypes);
      memset (&res, 0, sizeof res);
      st = fx_cuda_autotune (p->cuda, stream, title.data, strides.data, dtypes.data, choices, (size_t) n, options,
                             0.0, &res, diag);
      if (st == FX_OK)
        {
          fx_cuda_gemm_plan_choose (s->plan, (int) res.best);
          if (table && res.table)
            {
              fx_buf_puts (table, res.table);
              fx_buf_putc (table, '\n');
            }
          if (n_tuned)
            (*n_tuned)++;
        }
      fx_cuda_autotune_result_clear (&res);
      fx_buf_free (&title);
      fx_buf_free (&strides);
      fx_buf_free (&dtypes);
    }
  {
    fx_status s2 = fx_cuda_synchronize (p->cuda, st == FX_OK ? diag : NULL);
    if (st == FX_OK)
      st = s2;
  }
  for (size_t b = 0; b < p->n_buffers; b++)
    fx_cuda_free (p->cuda, ptrs[b]);
  free (ptrs);
  return st;
}
