/* fx-inductor.c: the inductor backend: options and modes, compile and generate over the pipeline
   (fx-inductor-pipeline.c), CPU autotuning, the run-time wrapper state (buffers, reuse slots, extern and fallback
   calls), per-kernel profiles and reports. */
#include "fx-inductor.h"
#include "fx-inductor-impl.h"
#include "registry/fx-registry.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

size_t ind_compiler_invocations (void);

static const fx_option_decl inductor_options[] = {
  { "max_autotune", FX_OPTION_BOOL, "False", "try kernel variants (threads, vector width) and keep the fastest" },
  { "epilogue_fusion", FX_OPTION_BOOL, "True", "fuse pointwise consumers into reduction kernels and, on the GPU, a residual add into the GEMM before it" },
  { "cpp.threads", FX_OPTION_INT, "-1", "OpenMP threads per kernel (-1: the OpenMP default)" },
  { "cpp.simdlen", FX_OPTION_INT, "None", "vector length given to omp simd (None: the compiler's choice)" },
  { "max_fusion_size", FX_OPTION_INT, "64", "most nodes in one fused kernel" },
  { "trace.enabled", FX_OPTION_BOOL, "False", "also draw the fused graph (the IR dumps and the generated code are always kept as artifacts)" },
  { "trace.graph_diagram", FX_OPTION_BOOL, "False", "draw the fused graph as dot" },
  { "debug", FX_OPTION_BOOL, "False", "log fusion decisions into the compiled notes" },
  { "triton.cudagraphs", FX_OPTION_BOOL, "False", "replay the graph as a CUDA graph (GPU code only; no effect on CPU)" },
  { "coordinate_descent_tuning", FX_OPTION_BOOL, "False", "with max_autotune on the CPU: move the thread count and vector length one at a time while faster (the GPU times every kernel configuration already)" },
  { "device", FX_OPTION_STRING, "None", "'cuda' (or 'cuda:N'): generate CUDA even for host inputs (None: follow the inputs)" },
  { "cpp.inject_relu_bug_TESTING_ONLY", FX_OPTION_STRING, "None",
    "testing only: break every relu of the C code: 'compile_error', 'runtime_error' or 'accuracy' (x + 1)" },
  { "triton.inject_relu_bug_TESTING_ONLY", FX_OPTION_STRING, "None",
    "testing only: break every relu of the CUDA code: 'compile_error', 'runtime_error' or 'accuracy' (x + 1)" },
};

/* list_mode_options() of PyTorch 2.11 (specs §4.2); the CPU code generator ignores the CUDA-graph setting. */
static const char *const mode_default[] = { NULL };
static const char *const mode_reduce_overhead[] = { "triton.cudagraphs=True", NULL };
static const char *const mode_max_autotune_no_cg[] = { "max_autotune=True", "coordinate_descent_tuning=True", NULL };
static const char *const mode_max_autotune[] = { "max_autotune=True", "triton.cudagraphs=True",
                                                 "coordinate_descent_tuning=True", NULL };
static const fx_mode_decl inductor_modes[] = {
  { "default", mode_default },
  { "reduce-overhead", mode_reduce_overhead },
  { "max-autotune-no-cudagraphs", mode_max_autotune_no_cg },
  { "max-autotune", mode_max_autotune },
};

/* ---------------------------------------------------------------- compiled state */

typedef void (*ind_call_fn) (void **bufs, void (*ext) (void *, int), void *ctx);
typedef void (*ind_call_timed_fn) (void **bufs, void (*ext) (void *, int), void *ctx, double *ms);

/* A symbolic program at other sizes: its program, run on the symbolic library (lib.handle NULL) or, where the source
   there is not the template's, on a build of its own. */
typedef struct ind_variant
{
  int64_t vals[IND_MAX_SYMS];
  ind_program prog;
  ind_library lib;
  ind_call_fn call;
  const char *(*error) (void);
  int (*index_error) (int64_t *value);
  ind_gpu *gpu;             /* on the device: its own program of launches, its module built from the template's text
                               (an NVRTC cache hit) with its sizes written in, or from its own source */
} ind_variant;

typedef struct ind_state
{
  ind_program prog;
  ind_library lib;
  ind_call_fn call;
  ind_call_timed_fn call_timed;
  const char *(*error) (void); /* the injected run-time error's report (fx_inductor_error), or NULL */
  int (*index_error) (int64_t *value); /* the first computed index out of range: its check, or -1; NULL: none */
  double *kernel_ms;        /* per group, filled by timed runs */
  fx_generator gen;
  ind_gpu *gpu;             /* CUDA code instead of C (fx-inductor-gpu.c) */
  int ordinal;              /* its device */
  /* symbolic kernels (fx-inductor-sym.c): the symbols and template (with the values prog was lowered at), the
     library's size setter, the programs at other sizes */
  ind_syms *sym;
  void (*set_sizes) (const int64_t *v);
  ind_variant *variants;
  int n_variants, cap_variants;
  int n_specialized;
  /* on the device: templates made at later sizes where the first one's kernels did not fit (gpu_sym_exec) */
  ind_syms **templates;
  int n_templates, cap_templates;
} ind_state;

/* Serializes symbolic runs: the sizes are globals of the library, and two compiles of the same graph load the same
   library (the kernel cache hands out one file per source). */
static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;

static void
inductor_release (fx_compiled *c)
{
  ind_state *s = c->impl;
  for (int v = 0; v < s->n_variants; v++)
    {
      if (s->variants[v].lib.handle)
        dlclose (s->variants[v].lib.handle);
      ind_gpu_free (s->variants[v].gpu);
      ind_program_free (&s->variants[v].prog);
    }
  free (s->variants);
  for (int t = 0; t < s->n_templates; t++)
    ind_syms_free (s->templates[t]);
  free (s->templates);
  ind_syms_free (s->sym);
  if (s->lib.handle)
    dlclose (s->lib.handle);
  ind_gpu_free (s->gpu);
  ind_program_free (&s->prog);
  free (s->kernel_ms);
  free (s);
}

static void
diagram (const ind_program *p, fx_buf *out)
{
  fx_buf_puts (out, "digraph fused {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n");
  for (int b = 0; b < p->n_bufs; b++)
    if (p->bufs[b].kind == IND_BUF_INPUT)
      fx_buf_printf (out, "  arg%d_1 [shape=ellipse];\n", p->bufs[b].input_index);
  for (int g = 0; g < p->n_groups; g++)
    {
      const ind_group *G = &p->groups[g];
      fx_buf_printf (out, "  subgraph cluster_k%d {\n    label=\"%s\";\n", g, G->name);
      for (int k = 0; k < G->n_nodes; k++)
        {
          const ind_node *n = &p->nodes[G->nodes[k]];
          fx_buf_printf (out, "    op%d [label=\"op%d: %s%s\"];\n", G->nodes[k], G->nodes[k], n->op_name,
                         n->out_buf >= 0 && !p->bufs[n->out_buf].stored ? " (not stored)" : "");
        }
      fx_buf_puts (out, "  }\n");
    }
  for (int i = 0; i < p->n_nodes; i++)
    {
      const ind_node *n = &p->nodes[i];
      for (int o = 0; o < n->n_opnd; o++)
        if (n->opnd[o].kind == IND_OPND_LOAD)
          {
            const ind_buffer *b = &p->bufs[n->opnd[o].buf];
            if (b->kind == IND_BUF_INPUT)
              fx_buf_printf (out, "  arg%d_1 -> op%d;\n", b->input_index, i);
            else
              fx_buf_printf (out, "  op%d -> op%d;\n", b->producer, i);
          }
      if (n->call)
        for (int a = 0; a < n->call->n_args; a++)
          if (n->arg_views[a] >= 0)
            {
              const ind_buffer *b = &p->bufs[p->views[n->arg_views[a]].buf];
              if (b->kind == IND_BUF_INPUT)
                fx_buf_printf (out, "  arg%d_1 -> op%d;\n", b->input_index, i);
              else
                fx_buf_printf (out, "  op%d -> op%d;\n", b->producer, i);
            }
    }
  fx_buf_puts (out, "}\n");
}

/* graph_diagram.svg through Graphviz's dot, when it is installed (a note otherwise). */
static void
render_svg (fx_compiled *out, const char *dot_text, size_t len)
{
  char dot_path[1200], svg_path[1200], log_path[1200];
  snprintf (dot_path, sizeof dot_path, "%.1000s/diagram-%d.dot", ind_cache_dir (), (int) getpid ());
  snprintf (svg_path, sizeof svg_path, "%.1000s/diagram-%d.svg", ind_cache_dir (), (int) getpid ());
  snprintf (log_path, sizeof log_path, "%.1000s/diagram-%d.log", ind_cache_dir (), (int) getpid ());
  FILE *f = fopen (dot_path, "w");
  if (f == NULL)
    return;
  fwrite (dot_text, 1, len, f);
  fclose (f);
  char *argv[] = { (char *) "dot", (char *) "-Tsvg", (char *) "-o", svg_path, dot_path, NULL };
  char *svg = NULL;
  size_t svg_len = 0;
  fx_diag d;
  if (ind_run_tool (argv, log_path) == 0 && fx_file_read (svg_path, &svg, &svg_len, &d) == FX_OK)
    fx_compiled_add_artifact (out, "graph_diagram.svg", "text", svg, svg_len);
  else
    fx_buf_puts (&out->notes, "inductor: graph_diagram.svg not drawn (Graphviz dot failed or is not installed)\n");
  free (svg);
  unlink (dot_path);
  unlink (svg_path);
  unlink (log_path);
}

static fx_status inductor_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                               fx_value **outputs, size_t *n_outputs, fx_diag *diag);
static fx_status inductor_bench (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int warmup, int repeat,
                                 fx_arena *arena, double *times_ms, fx_value **outputs, size_t *n_outputs,
                                 size_t *peak_bytes, fx_diag *diag);
static fx_status inductor_profile (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int repeat,
                                   fx_diag *diag);

/* Median of a few timed runs of the current library on the example inputs (ms), or -1 when a run fails. */
static double
time_variant (fx_compiled *out, const fx_compile_request *req)
{
  double t[5];
  /* a graph that writes into its inputs writes into copies here, not into the caller's example inputs */
  fx_value *own = fx_inputs_for_run (req->graph, req->example_inputs, req->n_inputs);
  const fx_value *inputs = own ? own : req->example_inputs;
  for (int r = -1; r < 5; r++)
    {
      fx_arena *arena = fx_arena_new ();
      fx_value *res = NULL;
      size_t n_res = 0;
      fx_diag d;
      fx_diag_clear (&d);
      double t0 = fx_now_ms ();
      fx_status st = inductor_run (out, inputs, req->n_inputs, arena, &res, &n_res, &d);
      double dt = fx_now_ms () - t0;
      for (size_t i = 0; i < n_res; i++)
        fx_value_clear (&res[i]);
      fx_arena_free (arena);
      if (st != FX_OK)
        {
          fx_inputs_for_run_free (own, req->n_inputs);
          return -1;
        }
      if (r >= 0)
        t[r] = dt;
    }
  fx_inputs_for_run_free (own, req->n_inputs);
  for (int i = 1; i < 5; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--)
      {
        double x = t[j];
        t[j] = t[j - 1];
        t[j - 1] = x;
      }
  return t[2];
}

/* The variants max_autotune built and timed, the fastest kept. */
typedef struct tune_state
{
  double best;              /* ms, < 0: none ran */
  int threads, simdlen;
  ind_library lib;
  ind_call_fn call;
  ind_call_timed_fn timed;
  int tried[16][2];
  double ms[16];            /* per tried variant, < 0: it failed to build or run */
  int n_tried;
} tune_state;

/* Builds and times the program generated with threads / simdlen (once per pair); keeps it when it is the fastest,
   its source in text. Returns whether it became the best. */
static bool
try_variant (ind_state *s, fx_compiled *out, const fx_compile_request *req, tune_state *t, int threads, int simdlen,
             fx_buf *text)
{
  for (int i = 0; i < t->n_tried; i++)
    if (t->tried[i][0] == threads && t->tried[i][1] == simdlen)
      return false;
  if (t->n_tried == (int) (sizeof t->tried / sizeof t->tried[0]))
    return false;
  t->tried[t->n_tried][0] = threads;
  t->tried[t->n_tried][1] = simdlen;
  t->ms[t->n_tried] = -1;
  t->n_tried++;
  ind_program *p = &s->prog;
  p->threads = threads;
  p->simdlen = simdlen;
  fx_buf src;
  fx_buf_init (&src);
  ind_codegen (p, &src);
  ind_library lib;
  fx_diag d;
  fx_diag_clear (&d);
  if (ind_build (src.data, src.len, NULL, NULL, &lib, NULL, &d) != FX_OK)
    {
      fx_buf_printf (&out->notes, "max_autotune: threads=%d simdlen=%d failed to build: %s\n", threads, simdlen,
                     d.message);
      fx_buf_free (&src);
      return false;
    }
  s->lib = lib;
  s->call = (ind_call_fn) dlsym (lib.handle, "fx_inductor_call");
  s->call_timed = (ind_call_timed_fn) dlsym (lib.handle, "fx_inductor_call_timed");
  if (s->call_timed == NULL)
    s->call = NULL;
  double ms = s->call ? time_variant (out, req) : -1;
  t->ms[t->n_tried - 1] = ms;
  fx_buf_printf (&out->notes, "max_autotune: threads=%d simdlen=%d: %.3f ms\n", threads, simdlen, ms);
  bool better = ms >= 0 && (t->best < 0 || ms < t->best);
  if (better)
    {
      t->best = ms;
      t->threads = threads;
      t->simdlen = simdlen;
      t->lib = lib;
      t->call = s->call;
      t->timed = s->call_timed;
      fx_buf_reset (text);
      fx_buf_append (text, src.data, src.len);
    }
  fx_buf_free (&src);
  return better;
}

/* The neighbours of v in a sorted list of candidates (v itself when it is not in the list: the nearest two). */
static int
neighbours (const int *cand, int n, int v, int out[2])
{
  int k = 0;
  for (int i = 0; i < n; i++)
    if (cand[i] == v)
      {
        if (i > 0)
          out[k++] = cand[i - 1];
        if (i + 1 < n)
          out[k++] = cand[i + 1];
        return k;
      }
  for (int i = 0; i < n && k < 2; i++)
    if (cand[i] > v || i == n - 1)
      {
        out[k++] = cand[i];
        if (i > 0)
          out[k++] = cand[i - 1];
        break;
      }
  return k;
}

/* max_autotune: whole-program variants (OpenMP thread count, vector length) built and timed on the example inputs;
   the fastest is kept and its source replaces output_code.c. coordinate_descent_tuning then moves one parameter at
   a time to a neighbouring value while that is faster, as Inductor's coordinate descent tuner does for a kernel's
   block sizes. */
static fx_status
autotune (ind_state *s, fx_compiled *out, const fx_compile_request *req, fx_buf *text, fx_diag *diag)
{
  ind_program *p = &s->prog;
  int base_threads = p->threads, base_simd = p->simdlen;
  tune_state t;
  memset (&t, 0, sizeof t);
  t.n_tried = 1;
  t.tried[0][0] = base_threads;
  t.tried[0][1] = base_simd;
  t.best = time_variant (out, req);
  t.ms[0] = t.best;
  t.threads = base_threads;
  t.simdlen = base_simd;
  t.lib = s->lib;
  t.call = s->call;
  t.timed = s->call_timed;
  fx_buf_printf (&out->notes, "max_autotune: threads=%d simdlen=%d: %.3f ms\n", base_threads, base_simd, t.best);
  const int variants[][2] = { { 1, base_simd }, { base_threads, 8 }, { base_threads, 16 } };
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
    try_variant (s, out, req, &t, variants[v][0], variants[v][1], text);
  if (p->opt.coordinate_descent_tuning)
    {
      /* thread counts up to the machine's (-1: OpenMP's default), vector lengths (-1: the compiler's) */
      long ncpu = sysconf (_SC_NPROCESSORS_ONLN);
      int threads[8], n_threads = 0;
      threads[n_threads++] = -1;
      for (int n = 1; n <= ncpu && n_threads < 8; n *= 2)
        threads[n_threads++] = n;
      const int simds[] = { -1, 4, 8, 16 };
      bool moved = true;
      for (int round = 0; moved && round < 4; round++)
        {
          moved = false;
          int nb[2];
          int k = neighbours (threads, n_threads, t.threads, nb);
          for (int i = 0; i < k; i++)
            moved |= try_variant (s, out, req, &t, nb[i], t.simdlen, text);
          k = neighbours (simds, 4, t.simdlen, nb);
          for (int i = 0; i < k; i++)
            moved |= try_variant (s, out, req, &t, t.threads, nb[i], text);
        }
      fx_buf_printf (&out->notes, "coordinate_descent_tuning: %d variants tried\n", t.n_tried);
    }
  s->lib = t.lib;
  s->call = t.call;
  s->call_timed = t.timed;
  p->threads = t.threads;
  p->simdlen = t.simdlen;
  /* group source offsets must match the kept text */
  fx_buf again;
  fx_buf_init (&again);
  ind_codegen (p, &again);
  fx_buf_free (&again);
  if (t.best >= 0 && t.n_tried > 1 && (t.threads != base_threads || t.simdlen != base_simd))
    for (size_t i = 0; i < out->n_artifacts; i++)
      if (strcmp (out->artifacts[i].name, "output_code.c") == 0)
        {
          out->artifacts[i].text = fx_arena_strndup (out->arena, text->data, text->len);
          out->artifacts[i].len = text->len;
        }
  fx_buf_printf (&out->notes, "max_autotune: kept threads=%d simdlen=%d\n", p->threads, p->simdlen);
  /* the candidate table, fastest first, in the layout of Inductor's AUTOTUNE log (the GPU's autotune.txt) */
  fx_buf table;
  fx_buf_init (&table);
  fx_buf_puts (&table, "AUTOTUNE cpp program (OpenMP threads, simdlen; -1: the default) on the example inputs\n");
  bool shown[16] = { false };
  for (int k = 0; k < t.n_tried; k++)
    {
      int pick = -1;
      for (int i = 0; i < t.n_tried; i++)
        if (!shown[i] && (pick < 0 || (t.ms[i] >= 0 && (t.ms[pick] < 0 || t.ms[i] < t.ms[pick]))))
          pick = i;
      shown[pick] = true;
      if (t.ms[pick] < 0)
        fx_buf_printf (&table, "  threads=%d simdlen=%d inf ms 0.0%%\n", t.tried[pick][0], t.tried[pick][1]);
      else
        fx_buf_printf (&table, "  threads=%d simdlen=%d %.4f ms %.1f%%%s\n", t.tried[pick][0], t.tried[pick][1],
                       t.ms[pick], t.best > 0 ? 100.0 * t.best / t.ms[pick] : 100.0,
                       t.tried[pick][0] == p->threads && t.tried[pick][1] == p->simdlen ? " (kept)" : "");
    }
  fx_compiled_add_artifact (out, "autotune.txt", "log", table.data ? table.data : "", table.len);
  fx_buf_free (&table);
  return t.best < 0 ? fx_diag_set (diag, FX_ERR_BACKEND, "inductor: no autotune variant ran") : FX_OK;
}

/* Where the compile goes: C for host inputs, CUDA for device inputs or the `device` option. */
static fx_status
pipeline_for (ind_pipeline *pl, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  ind_pipeline_init (pl, req->graph, req->example_inputs, req->n_inputs);
  pl->req = req;
  pl->out = out;
  fx_status st = ind_options_read (req->options, &pl->prog.opt, diag);
  if (st == FX_OK && ind_gpu_wanted (req->example_inputs, req->n_inputs, &pl->prog.opt, &pl->ordinal))
    pl->target = IND_TARGET_CUDA;
  /* PyTorch's fault injection for testing the minifier: the generator of the target breaks every relu */
  bool gpu = pl->target == IND_TARGET_CUDA;
  const char *bug = st == FX_OK ? fx_options_get_str (req->options, gpu ? "triton.inject_relu_bug_TESTING_ONLY"
                                                                        : "cpp.inject_relu_bug_TESTING_ONLY", NULL)
                                : NULL;
  if (bug && *bug && strcmp (bug, "None") != 0)
    {
      static const char *const kinds[] = { "compile_error", "runtime_error", "accuracy" };
      const char *kind = NULL;

      for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (strcmp (bug, kinds[k]) == 0)
          kind = kinds[k];
      if (kind == NULL)
        return fx_diag_set (diag, FX_ERR_INVALID, "inductor: %s.inject_relu_bug_TESTING_ONLY must be "
                            "'compile_error', 'runtime_error', 'accuracy' or None, got '%.64s'",
                            gpu ? "triton" : "cpp", bug);
      pl->prog.relu_bug = kind;   /* static: the program's arena is made later, by the pipeline */
      pl->prog.relu_bug_gpu = gpu;
    }
  return st;
}

/* Symbolic input sizes: the pipeline generates its kernels over them (not with autotuned variants or an injected
   bug); NULL (why may say why) for concrete kernels. The caller owns the result. */
static ind_syms *
pipeline_syms (ind_pipeline *pl, const fx_compile_request *req, fx_buf *why)
{
  ind_syms *sym = NULL;
  if (!pl->prog.opt.max_autotune && !pl->prog.relu_bug)
    sym = ind_syms_find (req->graph, req->example_inputs, req->n_inputs, &pl->prog.opt, why);
  if (sym)
    ind_syms_set_target (sym, pl->target, false);
  pl->syms = sym;
  pl->prog.symbolic = sym != NULL;
  return sym;
}

/* The fusion log, the fallbacks and (trace) the fused graph drawn: what the compile reports besides its code. */
static void
add_reports (ind_program *p, fx_compiled *out, bool ok)
{
  fx_buf text;
  fx_buf_init (&text);
  if (p->fusion_log.len || p->fallback_log.len)
    {
      if (p->fallback_log.len)
        fx_buf_append (&text, p->fallback_log.data, p->fallback_log.len);
      if (p->fusion_log.len)
        fx_buf_append (&text, p->fusion_log.data, p->fusion_log.len);
      fx_compiled_add_artifact (out, "fusion_log.txt", "log", text.data, text.len);
      if (p->fallback_log.len)
        fx_buf_append (&out->notes, p->fallback_log.data, p->fallback_log.len);
      if (p->opt.debug && p->fusion_log.len)
        fx_buf_append (&out->notes, p->fusion_log.data, p->fusion_log.len);
    }
  if (ok && p->opt.graph_diagram)
    {
      fx_buf_reset (&text);
      diagram (p, &text);
      fx_compiled_add_artifact (out, "graph_diagram.dot", "text", text.data, text.len);
      render_svg (out, text.data, text.len);
    }
  fx_buf_free (&text);
}

/* After a call: the extra outputs written into the inputs they stand for, and dropped from the outputs. */
static fx_status
write_back_inputs (const ind_program *p, const fx_value *inputs, size_t n_inputs, fx_value *outputs,
                   size_t *n_outputs, fx_diag *diag)
{
  fx_status st = FX_OK;
  for (int k = 0; k < p->n_input_writes && (size_t) (p->n_own_outputs + k) < *n_outputs; k++)
    {
      fx_value *v = &outputs[p->n_own_outputs + k];
      int i = p->input_writes[k];
      if (st == FX_OK && (size_t) i < n_inputs && inputs[i].kind == FX_VALUE_TENSOR && inputs[i].u.t
          && v->kind == FX_VALUE_TENSOR && v->u.t)
        st = fx_tensor_copy_into (inputs[i].u.t, v->u.t, diag);
      fx_value_clear (v);
    }
  if (p->n_input_writes > 0 && *n_outputs > (size_t) p->n_own_outputs)
    *n_outputs = (size_t) p->n_own_outputs;
  return st;
}

static fx_status
inductor_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  double t0 = fx_now_ms ();
  ind_state *s = calloc (1, sizeof *s);
  out->impl = s;
  if (req->gen)
    s->gen = *req->gen;
  else
    fx_generator_seed (&s->gen, 0);
  ind_pipeline pl;
  fx_status st = pipeline_for (&pl, req, out, diag);
  fx_buf why;
  fx_buf_init (&why);
  ind_syms *sym = st == FX_OK ? pipeline_syms (&pl, req, &why) : NULL;
  if (st == FX_OK)
    st = ind_pipeline_run (&pl, diag);
  if (pl.syms)
    {
      s->sym = sym;
      for (int i = 0; i < ind_syms_count (sym); i++)
        fx_buf_printf (&out->notes, "%s%s", i ? ", " : "inductor: symbolic kernels over ", ind_syms_name (sym, i));
      fx_buf_printf (&out->notes, " (%d literals follow the sizes): one build serves every size whose generated "
                     "source is this one at its sizes\n", ind_syms_fitted (sym));
    }
  else
    {
      if (why.len || pl.sym_why.len)
        fx_buf_printf (&out->notes, "inductor: kernels specialized to the example sizes: %s\n",
                       pl.sym_why.len ? pl.sym_why.data : why.data);
      ind_syms_free (sym);
    }
  fx_buf_free (&why);
  /* the state owns the program and what was built from here on */
  s->prog = pl.prog;
  memset (&pl.prog, 0, sizeof pl.prog);
  s->lib = pl.lib;
  s->gpu = pl.gpu;
  s->ordinal = pl.ordinal;
  ind_program *p = &s->prog;
  if (st == FX_OK && pl.target == IND_TARGET_C)
    {
      s->call = (ind_call_fn) dlsym (s->lib.handle, "fx_inductor_call");
      s->call_timed = (ind_call_timed_fn) dlsym (s->lib.handle, "fx_inductor_call_timed");
      if (s->call == NULL || s->call_timed == NULL)
        st = fx_diag_set (diag, FX_ERR_BACKEND, "inductor: the built library has no entry point");
      /* after the build: variants are timed on the example inputs */
      if (st == FX_OK && p->opt.max_autotune)
        st = autotune (s, out, req, &pl.source, diag);
      if (st == FX_OK)
        {
          s->error = (const char *(*) (void)) dlsym (s->lib.handle, "fx_inductor_error");
          s->index_error = (int (*) (int64_t *)) dlsym (s->lib.handle, "fx_inductor_index_error");
          if (s->sym)
            {
              s->set_sizes = (void (*) (const int64_t *)) dlsym (s->lib.handle, "fx_inductor_set_sizes");
              if (s->set_sizes == NULL)
                st = fx_diag_set (diag, FX_ERR_BACKEND, "inductor: the symbolic library has no size setter");
            }
        }
      if (st == FX_OK)
        ind_list_c_kernels (p, &pl.source, out);
    }
  if (p->arena)
    add_reports (p, out, st == FX_OK);
  ind_pipeline_clear (&pl);
  out->compile_ms = fx_now_ms () - t0;
  return st;
}

/* The code compile would build, generated without building it: C, or CUDA without a device. */
static fx_status
inductor_generate (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  ind_pipeline pl;
  fx_status st = pipeline_for (&pl, req, out, diag);
  pl.build = false;
  /* the symbolic source where compile would build one */
  fx_buf why;
  fx_buf_init (&why);
  ind_syms *sym = st == FX_OK ? pipeline_syms (&pl, req, &why) : NULL;
  if (st == FX_OK)
    st = ind_pipeline_run (&pl, diag);
  ind_syms_free (sym);
  fx_buf_free (&why);
  if (st == FX_OK && pl.target == IND_TARGET_C)
    ind_list_c_kernels (&pl.prog, &pl.source, out);
  if (pl.prog.arena)
    add_reports (&pl.prog, out, st == FX_OK);
  ind_pipeline_clear (&pl);
  return st;
}

/* ---------------------------------------------------------------- run */

typedef struct run_ctx
{
  const ind_program *p;
  fx_generator *gen;
  fx_tensor **bt;           /* per buffer */
  void **bufs;
  fx_arena *arena;
  fx_status status;
  fx_diag *diag;
} run_ctx;

static fx_tensor *
view_tensor (run_ctx *r, int view)
{
  const ind_view *v = &r->p->views[view];
  fx_tensor *base = r->bt[v->buf];
  if (base == NULL)
    return NULL;
  return fx_tensor_as_strided (base, v->ndim, v->sizes, v->strides, base->offset + v->offset);
}

static fx_tensor *
buffer_tensor (const ind_buffer *b)
{
  return fx_tensor_new_strided (NULL, b->dtype, b->ndim, b->sizes, b->strides);
}

static void
run_extern (void *ctx, int ni)
{
  run_ctx *r = ctx;
  const ind_program *p = r->p;
  const ind_node *n = &p->nodes[ni];
  fx_op_call call = *n->call;
  call.arena = r->arena;
  call.alloc = NULL;
  call.gen = r->gen;
  call.diag = r->diag;
  call.n_outs = 0;
  memset (call.outs, 0, sizeof call.outs);
  fx_tensor *made[256];
  int n_made = 0;
  bool ok = r->status == FX_OK;
  for (int a = 0; ok && a < call.n_args; a++)
    {
      if (n->arg_views[a] >= 0)
        {
          fx_tensor *t = view_tensor (r, n->arg_views[a]);
          if (t == NULL || n_made >= 256)
            {
              ok = false;
              break;
            }
          made[n_made++] = t;
          call.args[a] = fx_value_tensor (t);
        }
      else if (n->arg_list_views[a])
        {
          size_t cnt = call.args[a].u.seq.n;
          fx_value *items = fx_arena_alloc (r->arena, sizeof (fx_value) * (cnt + 1));
          memcpy (items, call.args[a].u.seq.items, sizeof (fx_value) * cnt);
          for (size_t k = 0; k < cnt; k++)
            if (n->arg_list_views[a][k] >= 0)
              {
                fx_tensor *t = view_tensor (r, n->arg_list_views[a][k]);
                if (t == NULL || n_made >= 256)
                  {
                    ok = false;
                    break;
                  }
                made[n_made++] = t;
                items[k] = fx_value_tensor (t);
              }
          call.args[a].u.seq.items = items;
        }
    }
  if (ok)
    {
      fx_status st = fx_op_execute (&call);
      if (st != FX_OK)
        {
          r->status = st;
          ok = false;
        }
    }
  else if (r->status == FX_OK)
    r->status = fx_diag_set (r->diag, FX_ERR_BACKEND, "inductor: extern kernel %s has a missing input", n->op_name);
  const fx_value *outs = call.outs;
  int n_outs = call.n_outs;
  if (ok && n_outs == 1 && call.outs[0].kind == FX_VALUE_LIST)
    {
      outs = call.outs[0].u.seq.items;
      n_outs = (int) call.outs[0].u.seq.n;
    }
  for (int k = 0; k < n->n_outs; k++)
    {
      int b = n->out_bufs[k];
      if (b < 0)
        continue;
      const ind_buffer *B = &p->bufs[b];
      fx_tensor *res = ok && k < n_outs && outs[k].kind == FX_VALUE_TENSOR ? outs[k].u.t : NULL;
      fx_tensor *dst;
      if (res && ind_same_layout (res, B))
        dst = fx_tensor_ref (res);
      else
        {
          /* a layout other than the compiled one (or a failed call): copy into the planned layout so that the
             kernels after it still read valid memory */
          dst = buffer_tensor (B);
          if (res && dst)
            fx_tensor_copy_into (dst, res, NULL);
        }
      if (r->bt[b])
        fx_tensor_unref (r->bt[b]);
      r->bt[b] = dst;
      r->bufs[b] = dst ? fx_tensor_data (dst) : NULL;
    }
  fx_op_call_clear (&call);
  for (int k = 0; k < n_made; k++)
    fx_tensor_unref (made[k]);
}

fx_status
ind_run_node_host (const ind_program *p, int node, fx_generator *gen, fx_tensor **bt, fx_arena *arena, fx_diag *diag)
{
  run_ctx r;
  memset (&r, 0, sizeof r);
  r.p = p;
  r.gen = gen;
  r.bt = bt;
  r.bufs = calloc ((size_t) p->n_bufs + 1, sizeof (void *));
  r.arena = arena;
  r.diag = diag;
  if (r.bufs == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
  run_extern (&r, node);
  free (r.bufs);
  return r.status;
}

/* What one run executes: a program and the library entry points that run it. */
typedef struct ind_exec
{
  const ind_program *p;
  ind_call_fn call;
  ind_call_timed_fn call_timed;   /* NULL: not timed */
  double *kernel_ms;
  const char *(*error) (void);
  int (*index_error) (int64_t *value);
} ind_exec;

static fx_status run_exec (ind_state *s, const ind_exec *e, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                           fx_value **outputs, size_t *n_outputs, fx_diag *diag);

/* A symbolic program at the run's sizes: the compiled one, a variant made before, or a new variant (lowered at these
   sizes; on the symbolic library when its source is the template there, else built for them). */
static fx_status
sym_exec (ind_state *s, const fx_value *inputs, size_t n_inputs, ind_exec *e, fx_diag *diag)
{
  int64_t vals[IND_MAX_SYMS] = { 0 };
  fx_status st = ind_syms_values (s->sym, inputs, n_inputs, vals, diag);
  if (st != FX_OK)
    return st;
  int n = ind_syms_count (s->sym);
  s->set_sizes (vals);
  if (memcmp (vals, ind_syms_base (s->sym), sizeof (int64_t) * (size_t) n) == 0)
    return FX_OK;
  e->call_timed = NULL;   /* kernel timings are the compiled program's */
  for (int v = 0; v < s->n_variants; v++)
    if (memcmp (vals, s->variants[v].vals, sizeof (int64_t) * (size_t) n) == 0)
      {
        ind_variant *V = &s->variants[v];
        *e = (ind_exec) { &V->prog, V->call, NULL, NULL, V->error, V->index_error };
        return FX_OK;
      }
  ind_pipeline pl;
  st = ind_syms_lower (s->sym, inputs, n_inputs, vals, false, &pl, diag);
  ind_variant V;
  memset (&V, 0, sizeof V);
  memcpy (V.vals, vals, sizeof vals);
  if (st == FX_OK && ind_syms_matches (s->sym, &pl.source, vals))
    {
      V.call = s->call;
      V.error = s->error;
      V.index_error = s->index_error;
    }
  else if (st == FX_OK)
    {
      /* another kernel structure at these sizes: a build of its own (counted, as a recompile) */
      ind_pipeline_clear (&pl);
      st = ind_syms_lower (s->sym, inputs, n_inputs, NULL, true, &pl, diag);
      if (st == FX_OK)
        {
          V.lib = pl.lib;
          memset (&pl.lib, 0, sizeof pl.lib);
          V.call = (ind_call_fn) dlsym (V.lib.handle, "fx_inductor_call");
          V.error = (const char *(*) (void)) dlsym (V.lib.handle, "fx_inductor_error");
          V.index_error = (int (*) (int64_t *)) dlsym (V.lib.handle, "fx_inductor_index_error");
          if (V.call == NULL)
            st = fx_diag_set (diag, FX_ERR_BACKEND, "inductor: the built library has no entry point");
          s->n_specialized++;
        }
    }
  if (st == FX_OK)
    {
      V.prog = pl.prog;
      memset (&pl.prog, 0, sizeof pl.prog);
      s->variants = ind_grow (s->variants, s->n_variants, &s->cap_variants, sizeof *s->variants, 4);
      s->variants[s->n_variants] = V;
      ind_variant *W = &s->variants[s->n_variants++];
      *e = (ind_exec) { &W->prog, W->call, NULL, NULL, W->error, W->index_error };
    }
  else if (V.lib.handle)
    dlclose (V.lib.handle);
  ind_pipeline_clear (&pl);
  return st;
}

/* The device program at the run's sizes (the sym lock held): the compiled one, a variant made before, or a new
   variant lowered at these sizes. Its module is the text of the first template whose source at these sizes is the
   program's (NVRTC's cache has it: no compile); where none is, the variant's own source is generalized into one
   more template (one NVRTC compile serves the sizes of that kernel structure from then on: a column sum past the
   length where its kernel changes), or built as it is where it does not generalize (counted as specialized). */
static fx_status
gpu_sym_exec (ind_state *s, const fx_value *inputs, size_t n_inputs, ind_gpu **gpu, const ind_program **prog,
              fx_diag *diag)
{
  int64_t vals[IND_MAX_SYMS] = { 0 };
  fx_status st = ind_syms_values (s->sym, inputs, n_inputs, vals, diag);
  if (st != FX_OK)
    return st;
  size_t bytes = sizeof (int64_t) * (size_t) ind_syms_count (s->sym);
  *gpu = s->gpu;
  *prog = &s->prog;
  if (memcmp (vals, ind_syms_base (s->sym), bytes) == 0)
    return FX_OK;
  for (int v = 0; v < s->n_variants; v++)
    if (memcmp (vals, s->variants[v].vals, bytes) == 0)
      {
        *gpu = s->variants[v].gpu;
        *prog = &s->variants[v].prog;
        return FX_OK;
      }
  /* the templates in turn: each lowers with its own options (a retry may have chosen looped reductions) */
  ind_pipeline pl;
  memset (&pl, 0, sizeof pl);
  ind_syms *same = NULL;
  for (int t = 0; st == FX_OK && same == NULL && t <= s->n_templates; t++)
    {
      ind_syms *T = t == 0 ? s->sym : s->templates[t - 1];
      ind_pipeline_clear (&pl);
      st = ind_syms_lower (T, inputs, n_inputs, vals, false, &pl, diag);
      if (st == FX_OK && ind_syms_matches (T, &pl.source, vals))
        same = T;
    }
  /* none: a template of its own, from these sizes */
  ind_syms *fresh = NULL, *made = NULL;
  if (st == FX_OK && same == NULL)
    {
      fx_buf why;
      fx_buf_init (&why);
      ind_options opt = s->prog.opt;
      opt.cuda_looped = false;
      fresh = ind_syms_find (ind_syms_graph (s->sym), inputs, n_inputs, &opt, &why);
      fx_buf_free (&why);
      if (fresh)
        {
          ind_syms_set_target (fresh, IND_TARGET_CUDA, false);
          ind_pipeline_clear (&pl);
          st = ind_syms_lower (fresh, inputs, n_inputs, NULL, false, &pl, diag);
          made = fresh;
        }
    }
  ind_variant V;
  memset (&V, 0, sizeof V);
  memcpy (V.vals, vals, sizeof vals);
  if (st == FX_OK)
    {
      /* the kernel listing and notes of a variant are not kept: the compiled object lists the first template's */
      fx_compiled scratch;
      memset (&scratch, 0, sizeof scratch);
      scratch.arena = fx_arena_new ();
      fx_buf_init (&scratch.notes);
      fx_compile_request req;
      memset (&req, 0, sizeof req);
      req.graph = ind_syms_graph (s->sym);
      req.example_inputs = inputs;
      req.n_inputs = n_inputs;
      req.gen = &s->gen;
      fx_buf why;
      fx_buf_init (&why);
      ind_syms *use = same ? same : made;
      st = ind_gpu_compile (&pl.prog, &req, s->ordinal, &scratch, &V.gpu, use ? &use : NULL, same ? vals : NULL,
                            &why, diag);
      if (same == NULL && use != NULL && st == FX_OK)
        {
          s->templates = ind_grow (s->templates, s->n_templates, &s->cap_templates, sizeof *s->templates, 4);
          s->templates[s->n_templates++] = made;
          made = NULL;
        }
      s->n_specialized += same == NULL && use == NULL;
      fx_buf_free (&why);
      fx_buf_free (&scratch.notes);
      fx_arena_free (scratch.arena);
    }
  ind_syms_free (made);
  if (st == FX_OK)
    {
      V.prog = pl.prog;
      memset (&pl.prog, 0, sizeof pl.prog);
      s->variants = ind_grow (s->variants, s->n_variants, &s->cap_variants, sizeof *s->variants, 4);
      s->variants[s->n_variants] = V;
      *gpu = s->variants[s->n_variants].gpu;
      *prog = &s->variants[s->n_variants].prog;
      s->n_variants++;
    }
  else
    ind_gpu_free (V.gpu);
  ind_pipeline_clear (&pl);
  return st;
}

static fx_status
inductor_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
              size_t *n_outputs, fx_diag *diag)
{
  if (c == NULL || c->impl == NULL
      || (((ind_state *) c->impl)->call == NULL && ((ind_state *) c->impl)->gpu == NULL))
    return fx_diag_set (diag, FX_ERR_INVALID, "inductor: run of a graph that did not compile");
  ind_state *s = c->impl;
  if (s->gpu && s->sym)
    {
      ind_gpu *gpu = NULL;
      const ind_program *prog = NULL;
      pthread_mutex_lock (&sym_lock);
      fx_status st = gpu_sym_exec (s, inputs, n_inputs, &gpu, &prog, diag);
      if (st == FX_OK)
        st = ind_gpu_run (gpu, prog, inputs, n_inputs, arena, outputs, n_outputs, diag);
      pthread_mutex_unlock (&sym_lock);
      return st;
    }
  if (s->gpu)
    return ind_gpu_run (s->gpu, &s->prog, inputs, n_inputs, arena, outputs, n_outputs, diag);
  ind_exec e = { &s->prog, s->call, s->kernel_ms ? s->call_timed : NULL, s->kernel_ms, s->error, s->index_error };
  if (s->sym == NULL)
    return run_exec (s, &e, inputs, n_inputs, arena, outputs, n_outputs, diag);
  pthread_mutex_lock (&sym_lock);
  fx_status st = sym_exec (s, inputs, n_inputs, &e, diag);
  if (st == FX_OK)
    st = run_exec (s, &e, inputs, n_inputs, arena, outputs, n_outputs, diag);
  pthread_mutex_unlock (&sym_lock);
  return st;
}

static fx_status
run_exec (ind_state *s, const ind_exec *e, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
          fx_value **outputs, size_t *n_outputs, fx_diag *diag)
{
  const ind_program *p = e->p;
  run_ctx r;
  memset (&r, 0, sizeof r);
  r.p = p;
  r.gen = &s->gen;
  r.arena = arena;
  r.diag = diag;
  r.bt = calloc ((size_t) p->n_bufs + 1, sizeof (fx_tensor *));
  r.bufs = calloc ((size_t) p->n_bufs + 1, sizeof (void *));
  fx_tensor **slots = calloc ((size_t) p->n_slots + 1, sizeof (fx_tensor *));
  fx_status st = FX_OK;
  for (int b = 0; st == FX_OK && b < p->n_bufs; b++)
    {
      const ind_buffer *B = &p->bufs[b];
      if (B->kind == IND_BUF_INPUT)
        {
          fx_tensor *t = NULL;
          st = ind_check_input (B, inputs, n_inputs, &t, diag);
          if (st != FX_OK)
            break;
          if (ind_same_layout (t, B))
            r.bt[b] = fx_tensor_ref (t);
          else
            {
              r.bt[b] = buffer_tensor (B);
              st = r.bt[b] ? fx_tensor_copy_into (r.bt[b], t, diag)
                           : fx_diag_set (diag, FX_ERR_NOMEM, "inductor: cannot allocate a copy of input %d",
                                          B->input_index);
            }
          r.bufs[b] = r.bt[b] ? fx_tensor_data (r.bt[b]) : NULL;
        }
      else if (B->kind == IND_BUF_COMPUTED && B->stored)
        {
          if (B->slot >= 0)
            {
              if (slots[B->slot] == NULL)
                {
                  int64_t bytes = p->slot_bytes[B->slot];
                  slots[B->slot] = fx_tensor_new (NULL, FX_DTYPE_U8, 1, &bytes);
                }
              fx_tensor *v = slots[B->slot] ? fx_tensor_as_strided (slots[B->slot], B->ndim, B->sizes, B->strides, 0)
                                            : NULL;
              if (v)
                v->dtype = B->dtype;
              r.bt[b] = v;
            }
          else
            r.bt[b] = buffer_tensor (B);
          if (r.bt[b] == NULL)
            st = fx_diag_set (diag, FX_ERR_NOMEM, "inductor: cannot allocate buf%d", b);
          else
            r.bufs[b] = fx_tensor_data (r.bt[b]);
        }
    }
  /* indirect loads read where their indices say: those from the inputs are checked before anything runs */
  if (st == FX_OK)
    st = ind_check_indices (p, r.bufs, diag);
  if (st == FX_OK)
    {
      if (e->call_timed)
        e->call_timed (r.bufs, run_extern, &r, e->kernel_ms);
      else
        e->call (r.bufs, run_extern, &r);
      st = r.status;
      const char *raised = e->error ? e->error () : NULL;
      int64_t bad = 0;
      int check = e->index_error ? e->index_error (&bad) : -1;
      if (st == FX_OK && check >= 0)
        st = ind_index_error (p, check, bad, diag);
      if (st == FX_OK && raised)
        st = fx_diag_set (diag, FX_ERR_BACKEND, "inductor: a generated kernel raised an error at run time: %s", raised);
    }
  if (st == FX_OK)
    {
      *n_outputs = (size_t) p->n_outputs;
      *outputs = fx_arena_alloc (arena, sizeof (fx_value) * ((size_t) p->n_outputs + 1));
      for (int k = 0; k < p->n_outputs; k++)
        (*outputs)[k] = p->outputs[k] >= 0 ? fx_value_tensor (view_tensor (&r, p->outputs[k])) : fx_value_none ();
      st = write_back_inputs (p, inputs, n_inputs, *outputs, n_outputs, diag);
    }
  for (int b = 0; b < p->n_bufs; b++)
    if (r.bt[b])
      fx_tensor_unref (r.bt[b]);
  for (int k = 0; k < p->n_slots; k++)
    if (slots[k])
      fx_tensor_unref (slots[k]);
  free (slots);
  free (r.bt);
  free (r.bufs);
  return st;
}

const fx_backend fx_inductor_backend = {
  .name = "inductor",
  .description = "fuses the graph into C loop kernels (OpenMP, omp simd), GEMMs on the engine's BLAS kernels",
  .tags = NULL,
  .options = inductor_options,
  .n_options = sizeof inductor_options / sizeof inductor_options[0],
  .modes = inductor_modes,
  .n_modes = sizeof inductor_modes / sizeof inductor_modes[0],
  .compile = inductor_compile,
  .run = inductor_run,
  .release = inductor_release,
  .size = sizeof (fx_backend),
  .generate = inductor_generate,
  .profile = inductor_profile,
  .bench = inductor_bench,
};

/* ---------------------------------------------------------------- direct entry points */

fx_status
fx_inductor_compile (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, const char *mode,
                     const fx_option_kv *options, size_t n_options, fx_compiled **out, fx_diag *diag)
{
  return fx_backend_compile (&fx_inductor_backend, graph, inputs, n_inputs, mode, options, n_options, out, diag);
}

fx_status
fx_inductor_run (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                 fx_value **outputs, size_t *n_outputs, fx_diag *diag)
{
  return inductor_run (compiled, inputs, n_inputs, arena, outputs, n_outputs, diag);
}

void
fx_inductor_free (fx_compiled *c)
{
  fx_compiled_free (c);
}

size_t
fx_inductor_compiler_invocations (void)
{
  return ind_compiler_invocations ();
}

fx_status
fx_inductor_write_artifacts (const fx_compiled *c, const char *dir, fx_diag *diag)
{
  return fx_compiled_write_artifacts (c, dir, diag);
}

/* On the GPU: inputs resident on the device, CUDA-event times (ind_gpu_bench). On the CPU: unsupported, so that
   fx_run_backend times run() itself. */
static fx_status
inductor_bench (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int warmup, int repeat, fx_arena *arena,
                double *times_ms, fx_value **outputs, size_t *n_outputs, size_t *peak_bytes, fx_diag *diag)
{
  ind_state *s = c ? c->impl : NULL;
  if (s == NULL || s->gpu == NULL)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor: bench is the GPU path's");
  ind_gpu *gpu = s->gpu;
  const ind_program *prog = &s->prog;
  pthread_mutex_lock (&sym_lock);
  fx_status st = s->sym ? gpu_sym_exec (s, inputs, n_inputs, &gpu, &prog, diag) : FX_OK;
  if (st == FX_OK)
    st = ind_gpu_bench (gpu, prog, inputs, n_inputs, warmup, repeat, arena, times_ms, outputs, n_outputs,
                        peak_bytes, diag);
  pthread_mutex_unlock (&sym_lock);
  if (st == FX_OK)
    c->timing = "CUDA events around each call, inputs resident on the device";
  return st;
}

static fx_status
inductor_profile (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int repeat, fx_diag *diag)
{
  if (c == NULL || c->impl == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "inductor: profile of a graph that did not compile");
  ind_state *s = c->impl;
  if (s->gpu)
    {
      /* at other sizes: the variant's kernel times (the template's kernels, where its source is the template's) */
      ind_gpu *gpu = s->gpu;
      const ind_program *prog = &s->prog;
      pthread_mutex_lock (&sym_lock);
      fx_status st = s->sym ? gpu_sym_exec (s, inputs, n_inputs, &gpu, &prog, diag) : FX_OK;
      if (st == FX_OK)
        st = ind_gpu_profile (gpu, prog, c, inputs, n_inputs, repeat, diag);
      pthread_mutex_unlock (&sym_lock);
      return st;
    }
  int n = s->prog.n_groups;
  s->kernel_ms = calloc ((size_t) n + 1, sizeof (double));
  fx_status st = FX_OK;
  if (repeat < 1)
    repeat = 1;
  for (int r = 0; r < repeat && st == FX_OK; r++)
    {
      fx_arena *arena = fx_arena_new ();
      fx_value *res = NULL;
      size_t n_res = 0;
      st = inductor_run (c, inputs, n_inputs, arena, &res, &n_res, diag);
      for (size_t i = 0; i < n_res; i++)
        fx_value_clear (&res[i]);
      fx_arena_free (arena);
    }
  for (size_t k = 0; k < c->n_kernels && (int) k < n; k++)
    c->kernels[k].time_ms = st == FX_OK ? s->kernel_ms[k] / repeat : -1;
  free (s->kernel_ms);
  s->kernel_ms = NULL;
  return st;
}

/* The CUDA source of a graph without a device: the compile pipeline up to scheduling, then the CUDA generator with
   its heuristic choices; wrapper (may be NULL) gets the run as ind_cuda_wrapper_text writes it. listing gets one line
   per group: "<kernel> <kind> <config>" (extern groups: "<name>
   extern"). */
fx_status
fx_inductor_profile (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int repeat, fx_diag *diag)
{
  return fx_compiled_profile (c, inputs, n_inputs, repeat, diag);
}

fx_status
fx_inductor_cuda_generate (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, fx_buf *source,
                           fx_buf *listing, fx_buf *wrapper, fx_diag *diag)
{
  return fx_inductor_cuda_generate_kind (graph, inputs, n_inputs, NULL, source, listing, wrapper, diag);
}

fx_status
fx_inductor_cuda_generate_at (const fx_graph *graph, const fx_value *inputs, size_t n_inputs,
                              const fx_value *run_inputs, size_t n_run, fx_buf *source, fx_buf *wrapper, fx_diag *diag)
{
  fx_buf why;
  fx_buf_init (&why);
  ind_options opt;
  ind_options_read (NULL, &opt, NULL);
  ind_syms *sym = ind_syms_find (graph, inputs, n_inputs, &opt, &why);
  fx_status st = FX_OK;
  if (sym == NULL)
    st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): no symbolic sizes: %s", why.data ? why.data : "");
  ind_pipeline pl;
  ind_pipeline_init (&pl, graph, inputs, n_inputs);
  pl.target = IND_TARGET_CUDA;
  pl.build = false;
  pl.syms = sym;
  if (st == FX_OK)
    {
      ind_syms_set_target (sym, IND_TARGET_CUDA, false);
      st = ind_pipeline_run (&pl, diag);
    }
  if (st == FX_OK && pl.syms == NULL)
    st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): kernels specialized to the example sizes: %s",
                      pl.sym_why.data ? pl.sym_why.data : "");
  /* the run: lowered at its sizes as gpu_sym_exec lowers it, its source checked against the template */
  int64_t vals[IND_MAX_SYMS] = { 0 };
  if (st == FX_OK)
    st = ind_syms_values (sym, run_inputs, n_run, vals, diag);
  ind_pipeline at;
  memset (&at, 0, sizeof at);
  if (st == FX_OK)
    st = ind_syms_lower (sym, run_inputs, n_run, vals, false, &at, diag);
  if (st == FX_OK && !ind_syms_matches (sym, &at.source, vals))
    st = fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor (cuda): at these sizes the kernels are not the template's "
                      "(a build of their own)");
  if (st == FX_OK)
    {
      size_t len = 0;
      const char *t = ind_syms_text (sym, &len);
      fx_buf_append (source, t, len);
      ind_cuda_layout lay;
      ind_cuda_layout_make (&at.prog, &at.plan, &lay);
      ind_cuda_wrapper_text (&at.prog, &at.plan, &lay, wrapper);
      ind_cuda_layout_free (&lay);
    }
  ind_pipeline_clear (&at);
  ind_pipeline_clear (&pl);
  ind_syms_free (sym);
  fx_buf_free (&why);
  return st;
}

fx_status
fx_inductor_cuda_generate_kind (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, const char *kind,
                                fx_buf *source, fx_buf *listing, fx_buf *wrapper, fx_diag *diag)
{
  int force = -1;
  if (kind && strcmp (kind, "persistent") == 0)
    force = IND_CUDA_PERSISTENT;
  else if (kind && strcmp (kind, "looped") == 0)
    force = IND_CUDA_LOOPED;
  else if (kind && strcmp (kind, "split") == 0)
    force = IND_CUDA_SPLIT;
  else if (kind)
    return fx_diag_set (diag, FX_ERR_INVALID, "inductor (cuda): unknown kernel kind '%.32s'", kind);
  ind_pipeline pl;
  ind_pipeline_init (&pl, graph, inputs, n_inputs);
  pl.target = IND_TARGET_CUDA;
  pl.build = false;
  pl.cuda_kind = force;
  /* symbolic sizes with the heuristic's choices: the symbolic source a build makes (forced kinds: concrete) */
  fx_buf why;
  fx_buf_init (&why);
  ind_syms *sym = force < 0 ? ind_syms_find (graph, inputs, n_inputs, &pl.prog.opt, &why) : NULL;
  if (sym)
    ind_syms_set_target (sym, IND_TARGET_CUDA, false);
  pl.syms = sym;
  /* the listing and the wrapper are artifacts of a scratch compiled object */
  fx_compiled scratch;
  memset (&scratch, 0, sizeof scratch);
  scratch.arena = fx_arena_new ();
  fx_buf_init (&scratch.notes);
  pl.out = &scratch;
  fx_status st = ind_pipeline_run (&pl, diag);
  if (st == FX_OK)
    {
      fx_buf_append (source, pl.source.data, pl.source.len);
      for (size_t i = 0; i < scratch.n_artifacts; i++)
        {
          const fx_artifact *a = &scratch.artifacts[i];
          if (listing && strcmp (a->name, "cuda_kernels.txt") == 0)
            fx_buf_append (listing, a->text, a->len);
          if (wrapper && strcmp (a->name, "cuda_wrapper.txt") == 0)
            fx_buf_append (wrapper, a->text, a->len);
        }
    }
  ind_pipeline_clear (&pl);
  ind_syms_free (sym);
  fx_buf_free (&why);
  fx_buf_free (&scratch.notes);
  fx_arena_free (scratch.arena);
  return st;
}
