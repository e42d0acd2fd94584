/* fx-inductor.c: the inductor backend: options and modes, the compile pipeline (decompose → lower → schedule →
   generate C → build), the run-time wrapper state (buffers, reuse slots, extern and fallback calls), artifacts. */
#include "fx-inductor.h"
#include "fx-inductor-impl.h"

#include <dlfcn.h>
#include <errno.h>
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
  { "fallback_random", FX_OPTION_BOOL, "False", "run random ops on the reference kernels (always on for CPU)" },
  { "cpp.threads", FX_OPTION_INT, "-1", "OpenMP threads per kernel (-1: the OpenMP default)" },
  { "cpp.simdlen", FX_OPTION_INT, "None", "vector length given to omp simd (None: the compiler's choice)" },
  { "max_fusion_size", FX_OPTION_INT, "64", "most nodes in one fused kernel" },
  { "trace.enabled", FX_OPTION_BOOL, "False", "keep the debug artifacts (IR dumps, generated C)" },
  { "trace.graph_diagram", FX_OPTION_BOOL, "False", "draw the fused graph as dot" },
  { "debug", FX_OPTION_BOOL, "False", "log fusion decisions into the compiled notes" },
  { "triton.cudagraphs", FX_OPTION_BOOL, "False", "replay the graph as a CUDA graph (GPU code only; no effect on CPU)" },
  { "coordinate_descent_tuning", FX_OPTION_BOOL, "False", "tune kernel parameters one at a time (with max_autotune)" },
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

typedef struct ind_state
{
  ind_program prog;
  ind_library lib;
  ind_call_fn call;
  ind_call_timed_fn call_timed;
  const char *(*error) (void); /* the injected run-time error's report (fx_inductor_error), or NULL */
  double *kernel_ms;        /* per group, filled by timed runs */
  fx_generator gen;
  ind_gpu *gpu;             /* CUDA code instead of C (fx-inductor-gpu.c) */
} ind_state;

static fx_kernel_info *
add_kernel (fx_compiled *c, const char *name, const char *kind, const char *lang, const char *src, size_t src_len)
{
  /* src is a span of the generated file (not NUL-terminated): copied once, straight into the compiled arena */
  fx_kernel_info *ki = fx_compiled_add_kernel (c, name, kind, lang, NULL);
  ki->source = src ? fx_arena_strndup (c->arena, src, src_len) : NULL;
  return ki;
}

static void
program_free (ind_program *p)
{
  for (int g = 0; g < p->n_groups; g++)
    free (p->groups[g].nodes);
  free (p->groups);
  free (p->nodes);
  free (p->bufs);
  free (p->views);
  free (p->slot_bytes);
  fx_buf_free (&p->fusion_log);
  fx_buf_free (&p->fallback_log);
  if (p->scratch)
    fx_arena_free (p->scratch);
  if (p->arena)
    fx_arena_free (p->arena);
}

static void
inductor_release (fx_compiled *c)
{
  ind_state *s = c->impl;
  if (s == NULL)
    return;
  if (s->lib.handle)
    dlclose (s->lib.handle);
  ind_gpu_free (s->gpu);
  program_free (&s->prog);
  free (s->kernel_ms);
  free (s);
  c->impl = NULL;
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

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static fx_status inductor_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                               fx_value **outputs, size_t *n_outputs, fx_diag *diag);

/* Median of a few timed runs of the current library on the example inputs (ms), or -1 when a run fails. */
static double
time_variant (fx_compiled *out, const fx_compile_request *req)
{
  double t[5];
  for (int r = -1; r < 5; r++)
    {
      fx_arena *arena = fx_arena_new ();
      fx_value *res = NULL;
      size_t n_res = 0;
      fx_diag d;
      fx_diag_clear (&d);
      double t0 = now_ms ();
      fx_status st = inductor_run (out, req->example_inputs, req->n_inputs, arena, &res, &n_res, &d);
      double dt = now_ms () - t0;
      for (size_t i = 0; i < n_res; i++)
        fx_value_clear (&res[i]);
      fx_arena_free (arena);
      if (st != FX_OK)
        return -1;
      if (r >= 0)
        t[r] = dt;
    }
  for (int i = 1; i < 5; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--)
      {
        double x = t[j];
        t[j] = t[j - 1];
        t[j - 1] = x;
      }
  return t[2];
}

/* max_autotune: whole-program variants (OpenMP thread count, vector length) built and timed on the example inputs;
   the fastest is kept and its source replaces output_code.c. */
static fx_status
autotune (ind_state *s, fx_compiled *out, const fx_compile_request *req, fx_buf *text, fx_diag *diag)
{
  ind_program *p = &s->prog;
  int base_threads = p->threads, base_simd = p->simdlen;
  const int variants[][2] = { { base_threads, base_simd }, { 1, base_simd }, { base_threads, 8 }, { base_threads, 16 } };
  double best = time_variant (out, req);
  int best_v = 0;
  ind_library best_lib = s->lib;
  ind_call_fn best_call = s->call;
  ind_call_timed_fn best_timed = s->call_timed;
  fx_buf_printf (&out->notes, "max_autotune: threads=%d simdlen=%d: %.3f ms\n", base_threads, base_simd, best);
  for (size_t v = 1; v < sizeof variants / sizeof variants[0]; v++)
    {
      p->threads = variants[v][0];
      p->simdlen = variants[v][1];
      fx_buf src;
      fx_buf_init (&src);
      ind_codegen (p, &src);
      ind_library lib;
      fx_diag d;
      fx_diag_clear (&d);
      if (ind_build (src.data, src.len, NULL, NULL, &lib, NULL, &d) != FX_OK)
        {
          fx_buf_printf (&out->notes, "max_autotune: variant %zu failed to build: %s\n", v, d.message);
          fx_buf_free (&src);
          continue;
        }
      s->lib = lib;
      s->call = (ind_call_fn) dlsym (lib.handle, "fx_inductor_call");
      s->call_timed = (ind_call_timed_fn) dlsym (lib.handle, "fx_inductor_call_timed");
      if (s->call_timed == NULL)
        s->call = NULL;
      double t = s->call ? time_variant (out, req) : -1;
      fx_buf_printf (&out->notes, "max_autotune: threads=%d simdlen=%d: %.3f ms\n", p->threads, p->simdlen, t);
      if (t >= 0 && (best < 0 || t < best))
        {
          best = t;
          best_v = (int) v;
          best_lib = lib;
          best_call = s->call;
          best_timed = s->call_timed;
          fx_buf_reset (text);
          fx_buf_append (text, src.data, src.len);
        }
      fx_buf_free (&src);
    }
  s->lib = best_lib;
  s->call = best_call;
  s->call_timed = best_timed;
  p->threads = variants[best_v][0];
  p->simdlen = variants[best_v][1];
  /* group source offsets must match the kept text */
  fx_buf again;
  fx_buf_init (&again);
  ind_codegen (p, &again);
  fx_buf_free (&again);
  for (size_t i = 0; i < out->n_artifacts; i++)
    if (strcmp (out->artifacts[i].name, "output_code.c") == 0)
      {
        out->artifacts[i].text = fx_arena_strndup (out->arena, text->data, text->len);
        out->artifacts[i].len = text->len;
      }
  fx_buf_printf (&out->notes, "max_autotune: kept threads=%d simdlen=%d\n", p->threads, p->simdlen);
  (void) diag;
  return best < 0 ? fx_diag_set (diag, FX_ERR_BACKEND, "inductor: no autotune variant ran") : FX_OK;
}

static fx_status
inductor_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  double t0 = now_ms ();
  ind_state *s = calloc (1, sizeof *s);
  out->impl = s;
  ind_program *p = &s->prog;
  p->arena = fx_arena_new ();
  fx_buf_init (&p->fusion_log);
  fx_buf_init (&p->fallback_log);
  p->epilogue_fusion = fx_options_get_bool (req->options, "epilogue_fusion", true);
  p->threads = (int) fx_options_get_int (req->options, "cpp.threads", -1);
  p->simdlen = (int) fx_options_get_int (req->options, "cpp.simdlen", -1);
  p->max_fusion = (int) fx_options_get_int (req->options, "max_fusion_size", IND_MAX_FUSION);
  if (p->max_fusion <= 0 || p->max_fusion > IND_MAX_FUSION)
    p->max_fusion = IND_MAX_FUSION;
  if (req->gen)
    s->gen = *req->gen;
  else
    fx_generator_seed (&s->gen, 0);
  bool trace = fx_options_get_bool (req->options, "trace.enabled", false);
  int ordinal = 0;
  bool on_gpu = ind_gpu_wanted (req, &ordinal);
  const char *bug = fx_options_get_str (req->options, on_gpu ? "triton.inject_relu_bug_TESTING_ONLY"
                                                             : "cpp.inject_relu_bug_TESTING_ONLY", NULL);
  if (bug && strcmp (bug, "None") != 0 && *bug)
    {
      if (strcmp (bug, "compile_error") != 0 && strcmp (bug, "runtime_error") != 0 && strcmp (bug, "accuracy") != 0)
        {
          /* out->impl is set: fx_backend_compile's failure path releases it */
          return fx_diag_set (diag, FX_ERR_INVALID, "inductor: %s.inject_relu_bug_TESTING_ONLY must be "
                              "'compile_error', 'runtime_error', 'accuracy' or None, got '%.64s'",
                              on_gpu ? "triton" : "cpp", bug);
        }
      p->relu_bug = fx_arena_strdup (p->arena, bug);
      p->relu_bug_gpu = on_gpu;
    }
  fx_buf text;
  fx_buf_init (&text);
  /* the graph as given, then decomposed (the analogue of AOTAutograd's decompositions) */
  fx_readable_opts ro = { true, false, false };
  fx_graph_print_readable (req->graph, &ro, &text);
  fx_compiled_add_artifact (out, "fx_graph_readable.py", "code", text.data, text.len);
  fx_buf_reset (&text);
  fx_graph *g = NULL;
  fx_status st;
  if (fx_graph_is_torch_level (req->graph))
    st = fx_lower_to_aten (req->graph, &g, diag);
  else
    {
      g = fx_graph_copy (req->graph);
      st = g ? FX_OK : fx_diag_set (diag, FX_ERR_NOMEM, "inductor: cannot copy the graph");
    }
  if (st == FX_OK)
    {
      fx_graph_resolve_ops (g);
      const char *passes[] = { "functionalize", "decompose", "dce" };
      st = fx_pass_pipeline (g, passes, 3, NULL, diag);
      fx_graph_resolve_ops (g);
    }
  if (st == FX_OK)
    {
      fx_graph_print_readable (g, &ro, &text);
      fx_compiled_add_artifact (out, "fx_graph_transformed.py", "code", text.data, text.len);
      fx_buf_reset (&text);
      st = ind_lower (p, g, req->example_inputs, req->n_inputs, diag);
    }
  if (g)
    fx_graph_free (g);
  if (st == FX_OK)
    {
      ind_dump_ir (p, false, &text);
      fx_compiled_add_artifact (out, "ir_pre_fusion.txt", "text", text.data, text.len);
      fx_buf_reset (&text);
      st = ind_schedule (p, diag);
    }
  const char *dev_opt = fx_options_get_str (req->options, "device", NULL);
  if (st == FX_OK && dev_opt && strncmp (dev_opt, "cuda", 4) != 0 && strcmp (dev_opt, "cpu") != 0)
    st = fx_diag_set (diag, FX_ERR_INVALID, "inductor: unknown device '%.64s' (cpu, cuda or cuda:N)", dev_opt);
  if (st == FX_OK && on_gpu)
    {
      ind_dump_ir (p, true, &text);
      fx_compiled_add_artifact (out, "ir_post_fusion.txt", "text", text.data, text.len);
      fx_buf_reset (&text);
      st = ind_gpu_compile (p, req, ordinal, out, &s->gpu, diag);
    }
  else if (st == FX_OK)
    {
      ind_dump_ir (p, true, &text);
      fx_compiled_add_artifact (out, "ir_post_fusion.txt", "text", text.data, text.len);
      fx_buf_reset (&text);
      p->use_mvec = ind_have_mvec ();
      ind_codegen (p, &text);
      fx_compiled_add_artifact (out, "output_code.c", "code", text.data, text.len);
      double t1 = now_ms ();
      fx_buf cc_out;
      fx_buf_init (&cc_out);
      bool invoked = false;
      st = ind_build (text.data, text.len, NULL, &invoked, &s->lib, &cc_out, diag);
      fx_buf_printf (&out->notes, "inductor: %d loop nodes, %d kernels, %d fallbacks; C build %s (%.1f ms)\n",
                     p->n_nodes, p->n_groups, p->n_fallbacks,
                     invoked ? "compiled" : "cache hit", now_ms () - t1);
      if (cc_out.len)
        fx_compiled_add_artifact (out, "compiler_output.txt", "log", cc_out.data, cc_out.len);
      fx_buf_free (&cc_out);
      if (st == FX_OK)
        {
          s->call = (ind_call_fn) dlsym (s->lib.handle, "fx_inductor_call");
          s->call_timed = (ind_call_timed_fn) dlsym (s->lib.handle, "fx_inductor_call_timed");
          s->error = (const char *(*) (void)) dlsym (s->lib.handle, "fx_inductor_error");
          if (s->call == NULL || s->call_timed == NULL)
            st = fx_diag_set (diag, FX_ERR_BACKEND, "inductor: the built library has no entry point");
        }
      if (st == FX_OK && fx_options_get_bool (req->options, "max_autotune", false))
        st = autotune (s, out, req, &text, diag);
      for (int gi = 0; st == FX_OK && gi < p->n_groups; gi++)
        {
          const ind_group *G = &p->groups[gi];
          const ind_node *n0 = &p->nodes[G->nodes[0]];
          bool red = false;
          for (int k = 0; k < G->n_nodes; k++)
            red |= p->nodes[G->nodes[k]].kind == IND_NODE_REDUCTION;
          const char *kind = G->is_extern ? (n0->kind == IND_NODE_EXTERN ? "extern" : "fallback")
                                          : red ? "reduction" : "pointwise";
          fx_kernel_info *ki = add_kernel (out, G->name, kind, G->is_extern ? NULL : "c",
                                           G->is_extern ? NULL : text.data + G->src_begin,
                                           G->is_extern ? 0 : G->src_end - G->src_begin);
          size_t cnt = 0;
          for (int k = 0; k < G->n_nodes; k++)
            cnt += p->nodes[G->nodes[k]].n_origins;
          ki->nodes = fx_arena_alloc (out->arena, sizeof (char *) * (cnt + 1));
          for (int k = 0; k < G->n_nodes; k++)
            {
              const ind_node *n = &p->nodes[G->nodes[k]];
              for (size_t o = 0; o < n->n_origins; o++)
                {
                  bool dup = false;
                  for (size_t q = 0; q < ki->n_nodes; q++)
                    dup |= strcmp (ki->nodes[q], n->origins[o]) == 0;
                  if (!dup)
                    ki->nodes[ki->n_nodes++] = fx_arena_strdup (out->arena, n->origins[o]);
                }
            }
        }
    }
  if (p->fusion_log.len || p->fallback_log.len)
    {
      fx_buf_reset (&text);
      if (p->fallback_log.len)
        fx_buf_append (&text, p->fallback_log.data, p->fallback_log.len);
      if (p->fusion_log.len)
        fx_buf_append (&text, p->fusion_log.data, p->fusion_log.len);
      fx_compiled_add_artifact (out, "fusion_log.txt", "log", text.data, text.len);
      if (p->fallback_log.len)
        fx_buf_append (&out->notes, p->fallback_log.data, p->fallback_log.len);
      if (fx_options_get_bool (req->options, "debug", false) && p->fusion_log.len)
        fx_buf_append (&out->notes, p->fusion_log.data, p->fusion_log.len);
    }
  if (st == FX_OK && (fx_options_get_bool (req->options, "trace.graph_diagram", false) || trace))
    {
      fx_buf_reset (&text);
      diagram (p, &text);
      fx_compiled_add_artifact (out, "graph_diagram.dot", "text", text.data, text.len);
      render_svg (out, text.data, text.len);
    }
  fx_buf_free (&text);
  out->compile_ms = now_ms () - t0;
  return st;
}

/* ---------------------------------------------------------------- run */

typedef struct run_ctx
{
  ind_state *s;
  fx_tensor **bt;           /* per buffer */
  void **bufs;
  fx_arena *arena;
  fx_status status;
  fx_diag *diag;
} run_ctx;

static fx_tensor *
view_tensor (run_ctx *r, int view)
{
  const ind_view *v = &r->s->prog.views[view];
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

static bool
same_layout (const fx_tensor *t, const ind_buffer *b)
{
  if (t->dtype != b->dtype || t->ndim != b->ndim)
    return false;
  for (int d = 0; d < b->ndim; d++)
    if (t->sizes[d] != b->sizes[d] || (b->sizes[d] != 1 && t->strides[d] != b->strides[d]))
      return false;
  return true;
}

static void
run_extern (void *ctx, int ni)
{
  run_ctx *r = ctx;
  ind_program *p = &r->s->prog;
  const ind_node *n = &p->nodes[ni];
  fx_op_call call = *n->call;
  call.arena = r->arena;
  call.alloc = NULL;
  call.gen = &r->s->gen;
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
      if (res && same_layout (res, B))
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

static fx_status
inductor_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
              size_t *n_outputs, fx_diag *diag)
{
  if (c == NULL || c->impl == NULL
      || (((ind_state *) c->impl)->call == NULL && ((ind_state *) c->impl)->gpu == NULL))
    return fx_diag_set (diag, FX_ERR_INVALID, "inductor: run of a graph that did not compile");
  ind_state *s = c->impl;
  ind_program *p = &s->prog;
  if (s->gpu)
    return ind_gpu_run (s->gpu, p, inputs, n_inputs, arena, outputs, n_outputs, diag);
  run_ctx r;
  memset (&r, 0, sizeof r);
  r.s = s;
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
          if ((size_t) B->input_index >= n_inputs || inputs[B->input_index].kind != FX_VALUE_TENSOR)
            {
              st = fx_diag_set (diag, FX_ERR_INVALID, "inductor: input %d is missing or not a tensor", B->input_index);
              break;
            }
          fx_tensor *t = inputs[B->input_index].u.t;
          bool shape_ok = t->dtype == B->dtype && t->ndim == B->ndim;
          for (int d = 0; shape_ok && d < B->ndim; d++)
            shape_ok = t->sizes[d] == B->sizes[d];
          if (!shape_ok)
            {
              fx_buf want;
              fx_buf_init (&want);
              fx_tensor_describe (t, &want);
              st = fx_diag_set (diag, FX_ERR_INVALID, "inductor: input %d is %s; the graph was compiled for "
                                "another shape or dtype (recompile)", B->input_index, want.data);
              fx_buf_free (&want);
              break;
            }
          if (same_layout (t, B))
            r.bt[b] = fx_tensor_ref (t);
          else
            {
              r.bt[b] = buffer_tensor (B);
              st = fx_tensor_copy_into (r.bt[b], t, diag);
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
              fx_tensor *v = fx_tensor_as_strided (slots[B->slot], B->ndim, B->sizes, B->strides, 0);
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
  if (st == FX_OK)
    {
      if (s->kernel_ms)
        s->call_timed (r.bufs, run_extern, &r, s->kernel_ms);
      else
        s->call (r.bufs, run_extern, &r);
      st = r.status;
      const char *raised = s->error ? s->error () : NULL;
      if (st == FX_OK && raised)
        st = fx_diag_set (diag, FX_ERR_BACKEND, "inductor: a generated kernel raised an error at run time: %s", raised);
    }
  if (st == FX_OK)
    {
      *n_outputs = (size_t) p->n_outputs;
      *outputs = fx_arena_alloc (arena, sizeof (fx_value) * ((size_t) p->n_outputs + 1));
      for (int k = 0; k < p->n_outputs; k++)
        (*outputs)[k] = p->outputs[k] >= 0 ? fx_value_tensor (view_tensor (&r, p->outputs[k])) : fx_value_none ();
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
  mkdir (dir, 0755);
  for (size_t i = 0; i < c->n_artifacts; i++)
    {
      const fx_artifact *a = &c->artifacts[i];
      if (strchr (a->name, '/') || a->name[0] == '.')
        continue;
      char path[2048];
      snprintf (path, sizeof path, "%s/%s", dir, a->name);
      FILE *f = fopen (path, "w");
      if (f == NULL)
        return fx_diag_set (diag, FX_ERR_IO, "cannot write %s: %s", path, strerror (errno));
      fwrite (a->text, 1, a->len, f);
      fclose (f);
    }
  return FX_OK;
}

fx_status
fx_inductor_profile (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int repeat, fx_diag *diag)
{
  if (c == NULL || c->impl == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "inductor: profile of a graph that did not compile");
  ind_state *s = c->impl;
  if (s->gpu)
    return ind_gpu_profile (s->gpu, &s->prog, c, inputs, n_inputs, repeat, diag);
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
fx_inductor_cuda_generate (const fx_graph *graph, const fx_value *inputs, size_t n_inputs, fx_buf *source,
                           fx_buf *listing, fx_buf *wrapper, fx_diag *diag)
{
  return fx_inductor_cuda_generate_kind (graph, inputs, n_inputs, NULL, source, listing, wrapper, diag);
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
  ind_program prog;
  memset (&prog, 0, sizeof prog);
  ind_program *p = &prog;
  p->arena = fx_arena_new ();
  fx_buf_init (&p->fusion_log);
  fx_buf_init (&p->fallback_log);
  p->epilogue_fusion = true;
  p->threads = -1;
  p->simdlen = -1;
  p->max_fusion = IND_MAX_FUSION;
  fx_graph *g = NULL;
  fx_status st;
  if (fx_graph_is_torch_level (graph))
    st = fx_lower_to_aten (graph, &g, diag);
  else
    {
      g = fx_graph_copy (graph);
      st = g ? FX_OK : fx_diag_set (diag, FX_ERR_NOMEM, "inductor: cannot copy the graph");
    }
  if (st == FX_OK)
    {
      fx_graph_resolve_ops (g);
      const char *passes[] = { "functionalize", "decompose", "dce" };
      st = fx_pass_pipeline (g, passes, 3, NULL, diag);
      fx_graph_resolve_ops (g);
    }
  if (st == FX_OK)
    st = ind_lower (p, g, inputs, n_inputs, diag);
  if (g)
    fx_graph_free (g);
  if (st == FX_OK)
    st = ind_schedule (p, diag);
  if (st == FX_OK)
    {
      ind_cuda_plan plan;
      ind_cuda_plan_kind (p, &plan, force);
      ind_cuda_codegen (p, &plan, source);
      for (int gi = 0; listing && gi < p->n_groups; gi++)
        {
          const ind_cuda_kernel *ck = &plan.kernels[gi];
          if (!ck->name)
            {
              fx_buf_printf (listing, "%s extern\n", p->groups[gi].name);
              continue;
            }
          fx_buf_printf (listing, "%s %s ", ck->name, ind_cuda_kind_name (ck->cfg.kind));
          ind_cuda_config_describe (&ck->cfg, listing);
          for (int m = 0; m < ck->n_mid; m++)
            fx_buf_printf (listing, " then %s", ck->mid_names[m]);
          if (ck->name2)
            fx_buf_printf (listing, " then %s", ck->name2);
          fx_buf_putc (listing, '\n');
        }
      if (wrapper)
        {
          ind_cuda_layout lay;
          ind_cuda_layout_make (p, &plan, &lay);
          ind_cuda_wrapper_text (p, &plan, &lay, wrapper);
          ind_cuda_layout_free (&lay);
        }
    }
  program_free (p);
  return st;
}
