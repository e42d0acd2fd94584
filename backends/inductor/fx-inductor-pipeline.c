/* fx-inductor-pipeline.c: inductor's passes in order, stated once (ind_pipeline_run) for the compile, the
   device-less CUDA generator and the tests; the options read once; the kernels a scheduled program lists. */
#include "fx-inductor-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- options */

fx_status
ind_options_read (const fx_options *o, ind_options *out, fx_diag *diag)
{
  memset (out, 0, sizeof *out);
  out->max_autotune = fx_options_get_bool (o, "max_autotune", false);
  out->coordinate_descent_tuning = fx_options_get_bool (o, "coordinate_descent_tuning", false);
  out->epilogue_fusion = fx_options_get_bool (o, "epilogue_fusion", true);
  out->threads = (int) fx_options_get_int (o, "cpp.threads", -1);
  out->simdlen = (int) fx_options_get_int (o, "cpp.simdlen", -1);
  out->max_fusion = (int) fx_options_get_int (o, "max_fusion_size", IND_MAX_FUSION);
  if (out->max_fusion <= 0 || out->max_fusion > IND_MAX_FUSION)
    out->max_fusion = IND_MAX_FUSION;
  out->trace = fx_options_get_bool (o, "trace.enabled", false);
  out->graph_diagram = fx_options_get_bool (o, "trace.graph_diagram", false) || out->trace;
  out->debug = fx_options_get_bool (o, "debug", false);
  out->cudagraphs = fx_options_get_bool (o, "triton.cudagraphs", false);
  const char *d = fx_options_get_str (o, "device", NULL);
  if (d && (*d == '\'' || *d == '"'))
    d++;
  if (d && strncmp (d, "cuda", 4) != 0 && strcmp (d, "cpu") != 0)
    return fx_diag_set (diag, FX_ERR_INVALID, "inductor: unknown device '%.64s' (cpu, cuda or cuda:N)", d);
  out->device = d;
  return FX_OK;
}

/* ---------------------------------------------------------------- passes */

static void
record (ind_pipeline *pl, const char *name, const char *kind, const fx_buf *text)
{
  if (pl->out)
    fx_compiled_add_artifact (pl->out, name, kind, text->data ? text->data : "", text->len);
}

/* The graph as given, then at the aten level, functional and decomposed (the analogue of AOTAutograd's
   decompositions). *g is the rewritten copy. */
static fx_status
pass_decompose (ind_pipeline *pl, fx_graph **g, fx_diag *diag)
{
  fx_readable_opts ro = { true, false, false };
  fx_buf text;
  fx_buf_init (&text);
  if (pl->out)
    {
      fx_graph_print_readable (pl->graph, &ro, &text);
      record (pl, "fx_graph_readable.py", "code", &text);
      fx_buf_reset (&text);
    }
  fx_status st;
  if (fx_graph_is_torch_level (pl->graph))
    st = fx_lower_to_aten (pl->graph, g, diag);
  else
    {
      *g = fx_graph_copy (pl->graph);
      st = *g ? FX_OK : fx_diag_set (diag, FX_ERR_NOMEM, "inductor: cannot copy the graph");
    }
  if (st == FX_OK)
    {
      fx_graph_resolve_ops (*g);
      const char *passes[] = { "functionalize", "decompose", "sink_gather", "dce" };
      st = fx_pass_pipeline (*g, passes, 4, NULL, diag);
      fx_graph_resolve_ops (*g);
    }
  if (st == FX_OK && pl->out)
    {
      fx_graph_print_readable (*g, &ro, &text);
      record (pl, "fx_graph_transformed.py", "code", &text);
    }
  fx_buf_free (&text);
  return st;
}

/* "aten.copy_.default" into a placeholder: the graph writes that input. */
static bool
is_input_write (const fx_node *n)
{
  return !n->erased && n->op == FX_OP_CALL_FUNCTION && n->target.kind == FX_TARGET_OP && n->target.name
         && strcmp (n->target.name, "aten.copy_.default") == 0 && n->n_args == 2 && n->args[0].kind == FX_ARG_NODE
         && n->args[0].u.node->op == FX_OP_PLACEHOLDER && n->args[1].kind == FX_ARG_NODE && n->n_users == 0;
}

/* AOTAutograd's epilogue, copy_(input, new_value) before the output: the new values become extra outputs after the
   graph's own (the copies go), and the run writes them into the inputs after each call, as the epilogue does. */
static fx_status
pass_input_writes (ind_pipeline *pl, fx_graph *g, fx_diag *diag)
{
  ind_program *p = &pl->prog;
  int n = 0;
  for (const fx_node *k = g->first; k; k = k->next)
    n += is_input_write (k);
  fx_node *out = fx_graph_output_node (g);
  if (n == 0 || out == NULL || out->n_args != 1)
    return FX_OK;
  if (pl->target != IND_TARGET_C)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "inductor: the graph writes into its inputs (copy_ into a graph "
                        "input), which only the CPU target runs");
  const fx_arg *a = &out->args[0];
  bool seq = a->kind == FX_ARG_TUPLE || a->kind == FX_ARG_LIST;
  size_t n_own = seq ? a->u.seq.n : 1;
  fx_arg *items = fx_arena_alloc (g->arena, sizeof (fx_arg) * (n_own + (size_t) n + 1));
  for (size_t i = 0; i < n_own; i++)
    items[i] = seq ? a->u.seq.items[i] : *a;
  p->input_writes = calloc ((size_t) n + 1, sizeof (int));
  if (p->input_writes == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  int m = 0;
  for (fx_node *k = g->first, *next; k; k = next)
    {
      next = k->next;
      if (!is_input_write (k))
        continue;
      items[n_own + (size_t) m] = k->args[1];
      p->input_writes[m++] = fx_graph_placeholder_position (g, k->args[0].u.node);
      fx_status st = fx_graph_erase_node (g, k, diag);
      if (st != FX_OK)
        return st;
    }
  fx_arg tuple = { .kind = FX_ARG_TUPLE, .u.seq = { items, n_own + (size_t) m } };
  fx_node_set_args (out, &tuple, 1);
  p->n_input_writes = m;
  p->n_own_outputs = (int) n_own;
  return FX_OK;
}

/* The loop IR as Inductor's debug folder has it: before fusion (ir_pre_fusion.txt) or after (ir_post_fusion.txt). */
static void
record_ir (ind_pipeline *pl, bool post_fusion)
{
  if (pl->out == NULL)
    return;
  fx_buf text;
  fx_buf_init (&text);
  ind_dump_ir (&pl->prog, post_fusion, &text);
  record (pl, post_fusion ? "ir_post_fusion.txt" : "ir_pre_fusion.txt", "text", &text);
  fx_buf_free (&text);
}

/* aten graph → loop IR: pointwise and reduction bodies over index expressions, views as index rewrites, extern
   and fallback nodes. */
static fx_status
pass_lower (ind_pipeline *pl, const fx_graph *g, fx_diag *diag)
{
  fx_status st = ind_lower (&pl->prog, g, pl->inputs, pl->n_inputs, diag);
  if (st == FX_OK)
    record_ir (pl, false);
  return st;
}

/* Vertical and horizontal fusion into groups (why-not-fused reasons in fusion_log), buffer reuse. */
static fx_status
pass_schedule (ind_pipeline *pl, fx_diag *diag)
{
  fx_status st = ind_schedule (&pl->prog, diag);
  if (st == FX_OK)
    record_ir (pl, true);
  return st;
}

/* Symbolic kernels: SYM, the source generalized over the input symbols (OK), is what gets built and shown from
   here on; else it goes, pl->syms is dropped (the caller still owns it) and the concrete source stands. Returns OK:
   the caller then moves the kernels' source spans into SYM (ind_syms_map_offset). */
static bool
use_symbolic_source (ind_pipeline *pl, bool ok, fx_buf *sym)
{
  if (ok)
    {
      fx_buf_free (&pl->source);
      pl->source = *sym;
    }
  else
    {
      fx_buf_free (sym);
      pl->syms = NULL;
    }
  return ok;
}

/* C with OpenMP and omp simd loops, one function per group. */
static fx_status
pass_codegen_c (ind_pipeline *pl, fx_diag *diag)
{
  (void) diag;
  pl->prog.use_mvec = ind_have_mvec ();
  ind_codegen (&pl->prog, &pl->source);
  fx_buf sym;
  fx_buf_init (&sym);
  if (pl->syms
      && use_symbolic_source (pl, ind_syms_generalize (pl->syms, pl->inputs, pl->n_inputs, &pl->source, &sym,
                                                        &pl->sym_why) == FX_OK, &sym))
    for (int g = 0; g < pl->prog.n_groups; g++)
      {
        ind_group *G = &pl->prog.groups[g];
        if (G->src_end > G->src_begin)
          {
            G->src_begin = ind_syms_map_offset (pl->syms, G->src_begin);
            G->src_end = ind_syms_map_offset (pl->syms, G->src_end);
          }
      }
  record (pl, "output_code.c", "code", &pl->source);
  return FX_OK;
}

/* The system C compiler into a shared object, cached by content. */
static fx_status
pass_build_c (ind_pipeline *pl, fx_diag *diag)
{
  const ind_program *p = &pl->prog;
  double t0 = fx_now_ms ();
  fx_buf cc_out;
  fx_buf_init (&cc_out);
  bool invoked = false;
  fx_status st = ind_build (pl->source.data, pl->source.len, NULL, &invoked, &pl->lib, &cc_out, diag);
  if (pl->out)
    {
      fx_buf_printf (&pl->out->notes, "inductor: %d loop nodes, %d kernels, %d fallbacks; C build %s (%.1f ms)\n",
                     p->n_nodes, p->n_groups, p->n_fallbacks, invoked ? "compiled" : "cache hit", fx_now_ms () - t0);
      if (pl->lib.cache_note[0])
        fx_buf_printf (&pl->out->notes, "%s\n", pl->lib.cache_note);
      if (cc_out.len)
        record (pl, "compiler_output.txt", "log", &cc_out);
    }
  fx_buf_free (&cc_out);
  return st;
}

static bool
plan_has_persistent (const ind_program *p, const ind_cuda_plan *plan)
{
  for (int g = 0; g < p->n_groups; g++)
    if (plan->kernels[g].name && plan->kernels[g].cfg.kind == IND_CUDA_PERSISTENT)
      return true;
  return false;
}

bool
ind_cuda_symbolic_source (ind_program *p, ind_cuda_plan *plan, ind_syms *syms, const fx_value *inputs,
                          size_t n_inputs, fx_buf *src, fx_buf *text, fx_buf *why)
{
  fx_buf w;
  fx_buf_init (&w);
  bool ok = false;
  for (int attempt = 0; attempt < 2 && !ok; attempt++)
    {
      fx_buf_reset (src);
      fx_buf_reset (text);
      fx_buf_reset (&w);
      ind_cuda_codegen (p, plan, src);
      ind_syms_set_target (syms, IND_TARGET_CUDA, plan->index32);
      ok = ind_syms_generalize (syms, inputs, n_inputs, src, text, &w) == FX_OK;
      if (ok || attempt > 0 || !plan_has_persistent (p, plan))
        break;
      /* a persistent reduction's block follows its length: looped reductions instead, at every size */
      p->opt.cuda_looped = true;
      ind_syms_set_cuda_looped (syms);
      ind_cuda_plan_kind (p, plan, -1);
    }
  if (!ok)
    {
      fx_buf_append (why, w.data ? w.data : "", w.len);
      fx_buf_reset (text);
    }
  fx_buf_free (&w);
  return ok;
}

/* CUDA C with the heuristic kernel choices (or one forced reduction kind), without a device: the source, the kernel
   table and the wrapper a build would launch. */
static fx_status
pass_codegen_cuda (ind_pipeline *pl, fx_diag *diag)
{
  (void) diag;
  ind_program *p = &pl->prog;
  ind_cuda_plan_kind (p, &pl->plan, pl->cuda_kind);
  if (!pl->syms)
    ind_cuda_codegen (p, &pl->plan, &pl->source);
  /* the symbolic source a build makes (ind_gpu_compile) */
  fx_buf sym;
  fx_buf_init (&sym);
  if (pl->syms
      && use_symbolic_source (pl, ind_cuda_symbolic_source (p, &pl->plan, pl->syms, pl->inputs, pl->n_inputs,
                                                            &pl->source, &sym, &pl->sym_why), &sym))
    for (int g = 0; g < p->n_groups; g++)
      {
        ind_cuda_kernel *ck = &pl->plan.kernels[g];
        if (ck->name)
          {
            ck->src_begin = ind_syms_map_offset (pl->syms, ck->src_begin);
            ck->src_mid = ind_syms_map_offset (pl->syms, ck->src_mid);
            ck->src_end = ind_syms_map_offset (pl->syms, ck->src_end);
          }
      }
  if (pl->out == NULL)
    return FX_OK;
  record (pl, "output_code.cu", "code", &pl->source);
  ind_list_cuda_kernels (p, &pl->plan, &pl->source, pl->out);
  fx_buf t;
  fx_buf_init (&t);
  for (int g = 0; g < p->n_groups; g++)
    {
      const ind_cuda_kernel *ck = &pl->plan.kernels[g];
      if (!ck->name)
        {
          fx_buf_printf (&t, "%s extern\n", p->groups[g].name);
          continue;
        }
      fx_buf_printf (&t, "%s %s ", ck->name, ind_cuda_kind_name (ck->cfg.kind));
      ind_cuda_config_describe (&ck->cfg, &t);
      for (int m = 0; m < ck->n_mid; m++)
        fx_buf_printf (&t, " then %s", ck->mid_names[m]);
      if (ck->name2)
        fx_buf_printf (&t, " then %s", ck->name2);
      fx_buf_putc (&t, '\n');
    }
  record (pl, "cuda_kernels.txt", "text", &t);
  fx_buf_reset (&t);
  ind_cuda_layout lay;
  ind_cuda_layout_make (p, &pl->plan, &lay);
  ind_cuda_wrapper_text (p, &pl->plan, &lay, &t);
  ind_cuda_layout_free (&lay);
  record (pl, "cuda_wrapper.txt", "text", &t);
  fx_buf_free (&t);
  fx_buf_printf (&pl->out->notes, "inductor: %d loop nodes, %d kernels; CUDA generated, not built (heuristic kernel "
                 "choices)\n", p->n_nodes, p->n_groups);
  return FX_OK;
}

/* CUDA C generated, built by NVRTC, autotuned (max_autotune) and planned as launches on the device. */
static fx_status
pass_build_cuda (ind_pipeline *pl, fx_diag *diag)
{
  return ind_gpu_compile (&pl->prog, pl->req, pl->ordinal, pl->out, &pl->gpu, &pl->syms, NULL, &pl->sym_why, diag);
}

/* ---------------------------------------------------------------- the pipeline */

void
ind_pipeline_init (ind_pipeline *pl, const fx_graph *graph, const fx_value *inputs, size_t n_inputs)
{
  memset (pl, 0, sizeof *pl);
  pl->graph = graph;
  pl->inputs = inputs;
  pl->n_inputs = n_inputs;
  pl->target = IND_TARGET_C;
  pl->build = true;
  pl->cuda_kind = -1;
  ind_options_read (NULL, &pl->prog.opt, NULL);
  fx_buf_init (&pl->source);
  fx_buf_init (&pl->sym_why);
}

fx_status
ind_pipeline_run (ind_pipeline *pl, fx_diag *diag)
{
  ind_program *p = &pl->prog;
  p->arena = fx_arena_new ();
  fx_buf_init (&p->fusion_log);
  fx_buf_init (&p->fallback_log);
  p->epilogue_fusion = p->opt.epilogue_fusion;
  p->threads = p->opt.threads;
  p->simdlen = p->opt.simdlen;
  p->max_fusion = p->opt.max_fusion;
  p->arg_reductions = pl->target == IND_TARGET_C;
  p->indirect_loads = pl->target == IND_TARGET_C;

  fx_graph *g = NULL;
  fx_status st = pass_decompose (pl, &g, diag);
  if (st == FX_OK)
    st = pass_input_writes (pl, g, diag);
  if (st == FX_OK)
    st = pass_lower (pl, g, diag);
  if (g)
    fx_graph_free (g);
  if (st == FX_OK)
    st = pass_schedule (pl, diag);
  if (st != FX_OK)
    return st;
  if (pl->target == IND_TARGET_CUDA)
    return pl->build ? pass_build_cuda (pl, diag) : pass_codegen_cuda (pl, diag);
  st = pass_codegen_c (pl, diag);
  if (st == FX_OK && pl->build)
    st = pass_build_c (pl, diag);
  return st;
}

void
ind_program_free (ind_program *p)
{
  for (int g = 0; g < p->n_groups; g++)
    free (p->groups[g].nodes);
  free (p->groups);
  free (p->nodes);
  free (p->bufs);
  free (p->views);
  free (p->slot_bytes);
  free (p->input_writes);
  free (p->index_checks);
  fx_buf_free (&p->fusion_log);
  fx_buf_free (&p->fallback_log);
  if (p->scratch)
    fx_arena_free (p->scratch);
  if (p->arena)
    fx_arena_free (p->arena);
  memset (p, 0, sizeof *p);
}

void
ind_pipeline_clear (ind_pipeline *pl)
{
  /* the plan lives in the program's arena */
  pl->plan.kernels = NULL;
  ind_program_free (&pl->prog);
  fx_buf_free (&pl->source);
  fx_buf_free (&pl->sym_why);
}

/* ---------------------------------------------------------------- kernel listings */

void
ind_kernel_add_origins (const ind_program *p, const ind_group *G, fx_compiled *out, fx_kernel_info *ki)
{
  for (int k = 0; k < G->n_nodes; k++)
    {
      const ind_node *n = &p->nodes[G->nodes[k]];
      for (size_t o = 0; o < n->n_origins; o++)
        {
          bool dup = false;
          for (size_t q = 0; q < ki->n_nodes && !dup; q++)
            dup = strcmp (ki->nodes[q], n->origins[o]) == 0;
          if (!dup)
            fx_kernel_add_node (out, ki, n->origins[o]);
        }
    }
}

void
ind_list_c_kernels (const ind_program *p, const fx_buf *source, fx_compiled *out)
{
  for (int gi = 0; gi < p->n_groups; gi++)
    {
      const ind_group *G = &p->groups[gi];
      const ind_node *n0 = &p->nodes[G->nodes[0]];
      bool red = false;
      for (int k = 0; k < G->n_nodes; k++)
        red |= p->nodes[G->nodes[k]].kind == IND_NODE_REDUCTION;
      const char *kind = G->is_extern ? (n0->kind == IND_NODE_EXTERN ? "extern" : "fallback")
                                      : red ? "reduction" : "pointwise";
      /* the source is a span of the generated file: copied once, straight into the compiled arena */
      fx_kernel_info *ki = fx_compiled_add_kernel (out, G->name, kind, G->is_extern ? NULL : "c", NULL);
      if (!G->is_extern)
        ki->source = fx_arena_strndup (out->arena, source->data + G->src_begin, G->src_end - G->src_begin);
      ind_kernel_add_origins (p, G, out, ki);
    }
}

void
ind_list_cuda_kernels (const ind_program *p, const ind_cuda_plan *plan, const fx_buf *source, fx_compiled *out)
{
  fx_device dev = { FX_DEVICE_CUDA, 0 };
  for (int g = 0; g < p->n_groups; g++)
    {
      const ind_group *G = &p->groups[g];
      const ind_cuda_kernel *ck = &plan->kernels[g];
      fx_kernel_info *ki[2] = { NULL, NULL };
      if (G->is_extern || !ck->name)
        ki[0] = fx_compiled_add_kernel (out, G->name, "extern", NULL, NULL);
      else
        {
          /* the heuristic's choice names the kind: pointwise, persistent_reduction, reduction, split_reduction */
          const char *kind = ind_cuda_kind_name (ck->cfg.kind);
          size_t mid = ck->cfg.kind == IND_CUDA_SPLIT ? ck->src_mid : ck->src_end;
          ki[0] = fx_compiled_add_kernel (out, ck->name, kind, "cuda", NULL);
          ki[0]->source = fx_arena_strndup (out->arena, source->data + ck->src_begin, mid - ck->src_begin);
          if (ck->name2)
            {
              ki[1] = fx_compiled_add_kernel (out, ck->name2, kind, "cuda", NULL);
              ki[1]->source = fx_arena_strndup (out->arena, source->data + ck->src_mid, ck->src_end - ck->src_mid);
            }
        }
      for (int j = 0; j < 2; j++)
        if (ki[j])
          {
            ki[j]->device = dev;
            ind_kernel_add_origins (p, G, out, ki[j]);
          }
    }
}
