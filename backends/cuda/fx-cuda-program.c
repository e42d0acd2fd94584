/* fx-cuda-program.c: the GPU side of a compiled graph's wrapper: buffers and steps (launches, GEMMs, broadcasts) run
   eagerly with per-step timing, or under reduce-overhead as one CUDA graph over static inputs (warm-up, record,
   replay), with PyTorch's "skipping cudagraphs due to ..." when graphs cannot be used. */
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
  /* gemm, broadcast */
  fx_dtype dtype;
  int64_t batch;
  double alpha, beta;
  fx_cuda_buffer_matrix a, b, c;
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
};

fx_status
fx_cuda_program_new (fx_cuda *cuda, fx_cuda_program **out, fx_diag *diag)
{
  *out = calloc (1, sizeof **out);
  if (!*out)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  (*out)->cuda = cuda;
  return FX_OK;
}

static void
release_recording (fx_cuda_program *p)
{
  if (p->graph)
    fx_cuda_graph_free (p->graph);
  p->graph = NULL;
  if (p->static_ptrs)
    for (size_t i = 0; i < p->n_buffers; i++)
      fx_cuda_free (p->cuda, p->static_ptrs[i]);
  free (p->static_ptrs);
  p->static_ptrs = NULL;
}

void
fx_cuda_program_free (fx_cuda_program *program)
{
  if (!program)
    return;
  release_recording (program);
  for (size_t i = 0; i < program->n_steps; i++)
    {
      free (program->steps[i].label);
      free (program->steps[i].args);
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

static program_step *
new_step (fx_cuda_program *p, step_kind kind, const char *label, fx_diag *diag)
{
  program_step *steps = realloc (p->steps, (p->n_steps + 1) * sizeof *steps);
  program_step *s;

  if (!steps)
    {
      fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
      return NULL;
    }
  p->steps = steps;
  s = &steps[p->n_steps];
  memset (s, 0, sizeof *s);
  s->kind = kind;
  s->label = strdup (label ? label : "");
  if (!s->label)
    {
      fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
      return NULL;
    }
  return s;
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
  program_step *s;

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
  if (!(s = new_step (program, STEP_LAUNCH, label ? label : kernel, diag)))
    return FX_ERR_NOMEM;
  s->kernel = k;
  memcpy (s->grid, grid, sizeof s->grid);
  memcpy (s->block, block, sizeof s->block);
  s->shared_bytes = shared_bytes;
  s->args = n_args ? malloc (n_args * sizeof *s->args) : NULL;
  if (n_args && !s->args)
    {
      free (s->label);
      return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
    }
  if (n_args)
    memcpy (s->args, args, n_args * sizeof *args);
  s->n_args = n_args;
  program->n_steps++;
  return FX_OK;
}

fx_status
fx_cuda_program_add_gemm (fx_cuda_program *program, const char *label, fx_dtype dtype, int64_t batch, double alpha,
                          const fx_cuda_buffer_matrix *a, const fx_cuda_buffer_matrix *b, double beta,
                          const fx_cuda_buffer_matrix *c, fx_diag *diag)
{
  program_step *s;
  fx_status st;

  if ((st = check_matrix (program, "gemm a", a, dtype, batch, diag)) != FX_OK
      || (st = check_matrix (program, "gemm b", b, dtype, batch, diag)) != FX_OK
      || (st = check_matrix (program, "gemm c", c, dtype, batch, diag)) != FX_OK)
    return st;
  if (!(s = new_step (program, STEP_GEMM, label ? label : "extern_kernels.mm", diag)))
    return FX_ERR_NOMEM;
  s->dtype = dtype;
  s->batch = batch;
  s->alpha = alpha;
  s->beta = beta;
  s->a = *a;
  s->b = *b;
  s->c = *c;
  program->n_steps++;
  return FX_OK;
}

fx_status
fx_cuda_program_add_broadcast (fx_cuda_program *program, const char *label, fx_dtype dtype,
                               const fx_cuda_buffer_matrix *src, double scale, const fx_cuda_buffer_matrix *dst,
                               fx_diag *diag)
{
  program_step *s;
  fx_status st;

  if ((st = check_matrix (program, "broadcast src", src, dtype, 1, diag)) != FX_OK
      || (st = check_matrix (program, "broadcast dst", dst, dtype, 1, diag)) != FX_OK)
    return st;
  if (!(s = new_step (program, STEP_BROADCAST, label ? label : "broadcast", diag)))
    return FX_ERR_NOMEM;
  s->dtype = dtype;
  s->alpha = scale;
  s->a = *src;
  s->c = *dst;
  program->n_steps++;
  return FX_OK;
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
      {
        fx_cuda_matrix a = resolve (&s->a, ptrs), b = resolve (&s->b, ptrs), c = resolve (&s->c, ptrs);
        return fx_cuda_gemm (p->cuda, stream, s->dtype, s->batch, s->alpha, &a, &b, s->beta, &c, diag);
      }
    case STEP_BROADCAST:
      {
        fx_cuda_matrix src = resolve (&s->a, ptrs), dst = resolve (&s->c, ptrs);
        return fx_cuda_broadcast_scale (p->cuda, stream, s->dtype, &src, s->alpha, &dst, diag);
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

/* Records the graph: static inputs outside the capture; outputs and temporaries inside it, so they come from the
   graph's private pool and stay the graph's while it lives. */
static fx_status
record (fx_cuda_program *p, fx_cuda_stream *stream, const fx_cuda_ptr *inputs, fx_diag *diag)
{
  fx_status st = FX_OK, end;

  p->static_ptrs = calloc (p->n_buffers + 1, sizeof *p->static_ptrs);
  if (!p->static_ptrs)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  for (size_t b = 0; b < p->n_buffers && st == FX_OK; b++)
    if (p->buffers[b].role == ROLE_INPUT)
      st = fx_cuda_malloc (p->cuda, p->buffers[b].nbytes, stream, &p->static_ptrs[b], diag);
  if (st != FX_OK || (st = copy_inputs (p, stream, inputs, diag)) != FX_OK)
    return st;
  /* cuBLAS and the built-in kernels must exist before the capture: creating them allocates and loads modules. */
  for (size_t i = 0; i < p->n_steps; i++)
    {
      fx_cuda_blas *blas;
      if (p->steps[i].kind == STEP_GEMM && (st = fx_cuda_get_blas (p->cuda, &blas, diag)) != FX_OK)
        return st;
      if (p->steps[i].kind == STEP_BROADCAST && (st = fx_cuda_builtin_prepare (p->cuda, diag)) != FX_OK)
        return st;
    }
  if ((st = fx_cuda_graph_capture_begin (stream, diag)) != FX_OK)
    return st;
  for (size_t b = 0; b < p->n_buffers && st == FX_OK; b++)
    if (p->buffers[b].role != ROLE_INPUT)
      st = fx_cuda_malloc (p->cuda, p->buffers[b].nbytes, stream, &p->static_ptrs[b], diag);
  if (st == FX_OK)
    st = run_steps (p, stream, p->static_ptrs, NULL, diag);
  for (size_t b = 0; b < p->n_buffers; b++)
    if (p->buffers[b].role == ROLE_TEMP)
      {
        fx_cuda_free (p->cuda, p->static_ptrs[b]);
        p->static_ptrs[b] = 0;
      }
  {
    fx_diag end_diag;
    fx_diag_clear (&end_diag);
    end = fx_cuda_graph_capture_end (stream, &p->graph, st == FX_OK ? diag : &end_diag);
  }
  return st != FX_OK ? st : end;
}

fx_status
fx_cuda_program_run (fx_cuda_program *program, fx_cuda_stream *stream, const fx_cuda_ptr *inputs, size_t n_inputs,
                     fx_cuda_ptr *outputs, size_t n_outputs, bool *caller_owns, fx_cuda_timeline *timeline,
                     fx_diag *diag)
{
  fx_cuda_program *p = program;
  fx_cuda_stream *s = stream ? stream : p->cuda->default_stream;
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
      fx_diag why;
      fx_diag_clear (&why);
      if ((st = record (p, s, inputs, &why)) != FX_OK)
        {
          /* What cannot be captured runs eagerly from now on, and says why. */
          char reason[1100];
          snprintf (reason, sizeof reason, "a failed capture (%s)", why.message);
          fx_cuda_program_skip_graphs (p, reason);
          return run_eager (p, s, inputs, outputs, timeline, diag);
        }
      p->state = FX_CUDA_PROGRAM_EXECUTION;
    }
  else if ((st = copy_inputs (p, s, inputs, diag)) != FX_OK)
    return st;

  /* The capture recorded the work without running it: a replay runs it, the first time too. */
  if (timeline && (st = fx_cuda_timeline_begin (timeline, s, "cudagraph replay", diag)) != FX_OK)
    return st;
  if ((st = fx_cuda_graph_replay (p->graph, s, diag)) != FX_OK)
    return st;
  if (timeline && (st = fx_cuda_timeline_end (timeline, s, diag)) != FX_OK)
    return st;
  for (size_t b = 0; b < p->n_buffers; b++)
    if (p->buffers[b].role == ROLE_OUTPUT)
      outputs[p->buffers[b].role_index] = p->static_ptrs[b];
  if (caller_owns)
    *caller_owns = false;
  return FX_OK;
}
