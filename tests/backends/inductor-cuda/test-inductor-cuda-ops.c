/* test-inductor-cuda-ops.c: every op of the op table on the inductor's GPU path. Each op gets a one-node sample graph
   (built from its schema, or from the table below where the schema's defaults do not make a valid call); the sample
   must run on the interpreter (the CPU backends' set), and then
   - listing (no device needed): the CUDA generation succeeds and the node is covered by a loop kernel, a GEMM, or a
     fallback that runs on the host (or is a view that needs no kernel); a failure names the op and the node;
   - execution (a CUDA device; skipped without one): compile with device='cuda', run, and match the interpreter.
   A new op without a usable sample fails here until it gets one. Prints one line per op: how the GPU runs it. */
#include "../cuda/cuda-test.h"
#include "inductor-cuda-common.h"
#include "cuda/fx-cuda.h"
#include "fx/accuracy.h"
#include "fx/pyparse.h"
#include "fx/runtime.h"
#include "registry/fx-registry.h"

#include <math.h>

typedef struct op_sample
{
  const char *target;
  const char *params;   /* the forward's parameters (annotated placeholders) */
  const char *args;     /* the call's arguments */
} op_sample;

#define X "x: \"f32[8, 16][16, 1]cpu\""
#define XY X ", y: \"f32[8, 16][16, 1]cpu\""
#define IDX(s) ", i: \"i64" s "cpu\""

/* Samples the schema cannot give (shapes that must agree, index tensors, lists of sizes). */
static const op_sample samples[] = {
  { "aten.pow.Scalar", X, "2.0, x" },
  { "aten.bitwise_and.Tensor", "x: \"i64[8, 16][16, 1]cpu\", y: \"i64[8, 16][16, 1]cpu\"", "x, y" },
  { "aten.bitwise_or.Tensor", "x: \"i64[8, 16][16, 1]cpu\", y: \"i64[8, 16][16, 1]cpu\"", "x, y" },
  { "aten.bitwise_xor.Tensor", "x: \"i64[8, 16][16, 1]cpu\", y: \"i64[8, 16][16, 1]cpu\"", "x, y" },
  { "aten.bitwise_not.default", "x: \"i64[8, 16][16, 1]cpu\"", "x" },
  { "aten.where.self", "c: \"b8[8, 16][16, 1]cpu\", " XY, "c, x, y" },
  { "aten.clamp.default", X, "x, -0.5, 0.5" },
  { "aten.clamp.Tensor", XY ", z: \"f32[8, 16][16, 1]cpu\"", "x, y, z" },
  { "aten.masked_fill.Scalar", X ", m: \"b8[8, 16][16, 1]cpu\"", "x, m, 0.0" },
  { "aten._to_copy.default", X, "x, dtype = torch.float64" },
  { "prims.convert_element_type.default", X, "x, torch.float64" },
  { "aten.to.dtype", X, "x, torch.float64" },
  { "aten.copy.default", XY, "x, y" },
  { "aten.sum.dim_IntList", X, "x, [1]" },
  { "aten.mean.dim", X, "x, [1]" },
  { "aten.prod.dim_int", X, "x, 1" },
  { "aten.amax.default", X, "x, [1]" },
  { "aten.amin.default", X, "x, [1]" },
  { "aten.max.dim", X, "x, 1" },
  { "aten.min.dim", X, "x, 1" },
  { "aten.argmax.default", X, "x, 1" },
  { "aten.argmin.default", X, "x, 1" },
  { "aten.any.default", "x: \"b8[8, 16][16, 1]cpu\"", "x" },
  { "aten.any.dim", "x: \"b8[8, 16][16, 1]cpu\"", "x, 1" },
  { "aten.all.default", "x: \"b8[8, 16][16, 1]cpu\"", "x" },
  { "aten.var.correction", X, "x, [1], correction = 1" },
  { "aten.var_mean.correction", X, "x, [1], correction = 1" },
  { "aten.logsumexp.default", X, "x, [1]" },
  { "aten.linalg_vector_norm.default", X, "x, 2, [1]" },
  { "aten.cumsum.default", X, "x, 1" },
  { "aten._softmax.default", X, "x, 1, False" },
  { "aten._log_softmax.default", X, "x, 1, False" },
  { "aten.softmax.int", X, "x, 1" },
  { "aten.log_softmax.int", X, "x, 1" },
  { "prims.prepare_softmax_online.default", X, "x, 1" },
  { "aten.native_layer_norm.default", X ", w: \"f32[16][1]cpu\", b: \"f32[16][1]cpu\"", "x, [16], w, b, 1e-05" },
  { "aten.layer_norm.default", X ", w: \"f32[16][1]cpu\", b: \"f32[16][1]cpu\"", "x, [16], w, b, 1e-05" },
  { "aten._native_batch_norm_legit_no_training.default",
    "x: \"f32[4, 8, 6][48, 6, 1]cpu\", w: \"f32[8][1]cpu\", b: \"f32[8][1]cpu\", m: \"f32[8][1]cpu\", "
    "v: \"f32[8][1]cpu\"", "x, w, b, m, v, 0.1, 1e-05" },
  { "aten.nll_loss_forward.default", X ", t: \"i64[8][1]cpu\"", "x, t, None, 1, -100" },
  { "aten.mm.default", X ", w: \"f32[16, 8][8, 1]cpu\"", "x, w" },
  { "aten.addmm.default", "b: \"f32[8][1]cpu\", " X ", w: \"f32[16, 8][8, 1]cpu\"", "b, x, w" },
  { "aten.linear.default", X ", w: \"f32[4, 16][16, 1]cpu\", b: \"f32[4][1]cpu\"", "x, w, b" },
  { "aten.bmm.default", "x: \"f32[2, 8, 16][128, 16, 1]cpu\", w: \"f32[2, 16, 4][64, 4, 1]cpu\"", "x, w" },
  { "aten.baddbmm.default",
    "c: \"f32[2, 8, 4][32, 4, 1]cpu\", x: \"f32[2, 8, 16][128, 16, 1]cpu\", w: \"f32[2, 16, 4][64, 4, 1]cpu\"",
    "c, x, w" },
  { "aten.convolution.default", "x: \"f32[1, 3, 8, 8][192, 64, 8, 1]cpu\", w: \"f32[4, 3, 3, 3][27, 9, 3, 1]cpu\"",
    "x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1" },
  { "aten.max_pool2d_with_indices.default", "x: \"f32[1, 3, 8, 8][192, 64, 8, 1]cpu\"", "x, [2, 2], [2, 2]" },
  { "aten.avg_pool2d.default", "x: \"f32[1, 3, 8, 8][192, 64, 8, 1]cpu\"", "x, [2, 2], [2, 2]" },
  { "aten._adaptive_avg_pool2d.default", "x: \"f32[1, 3, 8, 8][192, 64, 8, 1]cpu\"", "x, [2, 2]" },
  { "aten.adaptive_avg_pool2d.default", "x: \"f32[1, 3, 8, 8][192, 64, 8, 1]cpu\"", "x, [2, 2]" },
  { "aten.embedding.default", "w: \"f32[16, 8][8, 1]cpu\"" IDX ("[4, 5][5, 1]"), "w, i" },
  { "aten.gather.default", X IDX ("[8, 4][4, 1]"), "x, 1, i" },
  { "aten.index_select.default", "x: \"f32[16, 8][8, 1]cpu\"" IDX ("[5][1]"), "x, 0, i" },
  { "aten.scatter.value", X IDX ("[8, 4][4, 1]"), "x, 1, i, 0.5" },
  { "aten.scatter.src", X IDX ("[8, 4][4, 1]") ", s: \"f32[8, 4][4, 1]cpu\"", "x, 1, i, s" },
  { "aten.index.Tensor", "x: \"f32[16, 8][8, 1]cpu\"" IDX ("[5][1]"), "x, [i]" },
  { "aten.index_put.default", "x: \"f32[16, 8][8, 1]cpu\"" IDX ("[5][1]") ", v: \"f32[8][1]cpu\"", "x, [i], v" },
  { "aten.select_scatter.default", X ", s: \"f32[16][1]cpu\"", "x, s, 0, 3" },
  { "aten.upsample_nearest2d.default", "x: \"f32[1, 3, 8, 8][192, 64, 8, 1]cpu\"", "x, [16, 12]" },
  { "aten.upsample_bilinear2d.default", "x: \"f32[1, 3, 8, 8][192, 64, 8, 1]cpu\"", "x, [16, 12], False" },
  { "aten.view.default", X, "x, [16, 8]" },
  { "aten.reshape.default", X, "x, [16, 8]" },
  { "aten._unsafe_view.default", X, "x, [16, 8]" },
  { "aten.permute.default", X, "x, [1, 0]" },
  { "aten.transpose.int", X, "x, 0, 1" },
  { "aten.expand.default", "x: \"f32[1, 16][16, 1]cpu\"", "x, [8, 16]" },
  { "aten.unsqueeze.default", X, "x, 1" },
  { "aten.squeeze.default", "x: \"f32[8, 1][1, 1]cpu\"", "x" },
  { "aten.squeeze.dim", "x: \"f32[8, 1][1, 1]cpu\"", "x, 1" },
  { "aten.squeeze.dims", "x: \"f32[8, 1][1, 1]cpu\"", "x, [1]" },
  { "aten.slice.Tensor", X, "x, 1, 2, 10" },
  { "aten.select.int", X, "x, 0, 3" },
  { "aten.as_strided.default", X, "x, [4, 4], [16, 1]" },
  { "aten.flatten.using_ints", "x: \"f32[2, 4, 16][64, 16, 1]cpu\"", "x, 0, 1" },
  { "aten.split.Tensor", X, "x, 4, 1" },
  { "aten.split_with_sizes.default", X, "x, [4, 12], 1" },
  { "aten.unbind.int", X, "x" },
  { "aten.chunk.default", X, "x, 2, 1" },
  { "aten.cat.default", XY, "[x, y], 1" },
  { "aten.stack.default", XY, "[x, y]" },
  { "aten.constant_pad_nd.default", X, "x, [1, 2], 0.0" },
  { "aten.flip.default", X, "x, [1]" },
  { "aten.tril.default", X, "x" },
  { "aten.triu.default", X, "x" },
  { "aten.full.default", X, "[8, 16], 2.0, dtype = torch.float32" },
  { "aten.zeros.default", X, "[8, 16], dtype = torch.float32" },
  { "aten.ones.default", X, "[8, 16], dtype = torch.float32" },
  { "aten.empty.memory_format", X, "[8, 16], dtype = torch.float32" },
  { "aten.empty_strided.default", X, "[8, 16], [16, 1], dtype = torch.float32" },
  { "aten.full_like.default", X, "x, 2.0" },
  { "aten.arange.default", X, "16, dtype = torch.float32" },
  { "aten.arange.start", X, "2, 16, dtype = torch.float32" },
  { "aten.arange.start_step", X, "2, 16, 3, dtype = torch.float32" },
  { "prims.iota.default", X, "16, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), "
    "requires_grad = False" },
  { "aten.scalar_tensor.default", X, "2.0, dtype = torch.float32" },
  { "aten.rand.default", X, "[8, 16], dtype = torch.float32" },
  { "aten.randn.default", X, "[8, 16], dtype = torch.float32" },
  { "aten.native_dropout.default", X, "x, 0.5, True" },
  { "aten.sym_size.int", X, "x, 1" },
};

static const op_sample *
sample_of (const char *target)
{
  for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
    if (strcmp (samples[i].target, target) == 0)
      return &samples[i];
  return NULL;
}

/* The sample's FX code: one call of the op, its first tensor result returned. */
static void
sample_code (const fx_op_info *op, const fx_op_schema *sc, fx_buf *code)
{
  const op_sample *s = sample_of (op->target);
  fx_buf args;
  fx_buf_init (&args);
  int n_tensors = 0;
  if (s)
    fx_buf_puts (&args, s->args);
  else
    for (int a = 0; a < sc->n_args; a++)
      {
        const fx_schema_arg *sa = &sc->args[a];
        if (sa->has_default || sa->optional)
          continue;
        fx_buf_printf (&args, "%s%s%s", args.len ? ", " : "", sa->kwarg_only ? sa->name : "",
                       sa->kwarg_only ? " = " : "");
        fx_schema_type t = sa->type;
        if (t == FX_SCHEMA_TENSOR)
          fx_buf_puts (&args, n_tensors++ ? "y" : "x");
        else
          fx_buf_puts (&args, t == FX_SCHEMA_SCALAR || t == FX_SCHEMA_FLOAT ? "0.5"
                              : t == FX_SCHEMA_INT                         ? "1"
                              : t == FX_SCHEMA_INT_LIST                    ? "[1]"
                              : t == FX_SCHEMA_BOOL                        ? "False"
                              : t == FX_SCHEMA_DTYPE                       ? "torch.float32"
                                                                           : "None");
      }
  /* "aten.add.Tensor" → torch.ops.aten.add.Tensor */
  fx_buf_printf (code, "class <lambda>(torch.nn.Module):\n    def forward(self, %s):\n",
                 s ? s->params : n_tensors > 1 ? XY : X);
  fx_buf_printf (code, "        r = torch.ops.%s(%s)\n", op->target, args.data ? args.data : "");
  if (sc->n_returns > 1 || sc->returns_list)
    fx_buf_puts (code, "        getitem = r[0]\n        return (getitem,)\n");
  else
    fx_buf_puts (code, "        return (r,)\n");
  fx_buf_free (&args);
}

static bool have_device;

static const char *
covering_kernel (const fx_compiled *c, const char *node)
{
  for (size_t k = 0; k < c->n_kernels; k++)
    for (size_t j = 0; j < c->kernels[k].n_nodes; j++)
      if (strcmp (c->kernels[k].nodes[j], node) == 0)
        return c->kernels[k].kind;
  return NULL;
}

static void
test_ops (void)
{
  const fx_backend *ind = fx_backend_lookup ("inductor", NULL);
  CHECK (ind != NULL, "no inductor backend");
  fx_option_kv dev = { "device", "'cuda'" };
  int counts[4] = { 0 };   /* kernel, extern/fallback, view, ran on the device */
  for (int id = 0; id < FX_OP_COUNT; id++)
    {
      const fx_op_info *op = fx_op_get ((fx_op_id) id);
      const fx_op_schema *sc = fx_op_get_schema ((fx_op_id) id);
      fx_buf code;
      fx_buf_init (&code);
      sample_code (op, sc, &code);
      fx_diag diag;
      fx_diag_clear (&diag);
      fx_graph *g = NULL;
      fx_arena *arena = fx_arena_new ();
      fx_value *in = NULL, *ref = NULL, *res = NULL;
      size_t n_in = 0, n_ref = 0, n_res = 0;
      fx_compiled *c = NULL;
      const char *how = NULL;
      bool ok = fx_parse_fx_code (code.data, code.len, op->target, &g, &diag) == FX_OK;
      if (ok)
        fx_graph_resolve_ops (g);
      ok = ok && fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 7, NULL, arena, &in, &n_in, &diag) == FX_OK;
      fx_interp_opts io;
      memset (&io, 0, sizeof io);
      fx_generator gen;
      fx_generator_seed (&gen, 0);
      io.gen = &gen;
      ok = ok && fx_interp_run (g, in, n_in, &io, arena, &ref, &n_ref, &diag) == FX_OK;
      if (!ok)
        {
          printf ("# %s: the sample does not run on the interpreter (%s):\n%s", op->target, diag.message, code.data);
          cuda_test_failures++;
          goto next;
        }
      /* listing: generated for the GPU, the node covered */
      fx_diag_clear (&diag);
      if (fx_backend_generate (ind, g, in, n_in, NULL, &dev, 1, &c, &diag) != FX_OK)
        {
          /* not in the CPU set either: not a GPU gap */
          fx_compiled *cpu = NULL;
          fx_diag why;
          fx_diag_clear (&why);
          bool on_cpu = fx_backend_compile (ind, g, in, n_in, NULL, NULL, 0, &cpu, &why) == FX_OK;
          fx_compiled_free (cpu);
          if (!on_cpu)
            {
              printf ("# %-48s not supported by the CPU inductor either: %s\n", op->target, why.message);
              goto next;
            }
          printf ("# %s: no CUDA generated: %s\n", op->target, diag.message[0] ? diag.message : "(empty message)");
          cuda_test_failures++;
          goto next;
        }
      /* the kind is c's memory, freed before the line is printed: copied */
      char how_buf[64];
      how = covering_kernel (c, "r");
      if (how)
        {
          snprintf (how_buf, sizeof how_buf, "%s", how);
          how = how_buf;
        }
      if (how == NULL && op->kind != FX_OP_KIND_VIEW && op->kind != FX_OP_KIND_OTHER && id != FX_OP_SYM_SIZE_INT
          && id != FX_OP_ALIAS && id != FX_OP_DETACH)
        {
          /* a factory or copy folded into nothing is fine only when the output is still produced */
          bool any = c->n_kernels > 0;
          if (!any && op->kind != FX_OP_KIND_FACTORY && op->kind != FX_OP_KIND_POINTWISE)
            {
              printf ("# %s: node 'r' is in no kernel of the CUDA program\n", op->target);
              cuda_test_failures++;
              goto next;
            }
        }
      counts[how == NULL ? 2 : strcmp (how, "extern") == 0 || strcmp (how, "fallback") == 0 ? 1 : 0]++;
      fx_compiled_free (c);
      c = NULL;
      /* execution */
      if (have_device)
        {
          fx_diag_clear (&diag);
          fx_status st = fx_backend_compile (ind, g, in, n_in, NULL, &dev, 1, &c, &diag);
          if (st == FX_OK)
            st = fx_compiled_run (c, in, n_in, arena, &res, &n_res, &diag);
          if (st != FX_OK)
            {
              printf ("# %s: on the GPU: %s\n", op->target, diag.message[0] ? diag.message : "(empty message)");
              cuda_test_failures++;
              goto next;
            }
          bool random = op->kind == FX_OP_KIND_RANDOM || id == FX_OP_EMPTY_MEMORY_FORMAT
                        || id == FX_OP_EMPTY_STRIDED || id == FX_OP_EMPTY_LIKE;
          fx_same_opts so;
          fx_same_opts_init (&so);
          fx_same_report rep;
          memset (&rep, 0, sizeof rep);
          if (n_res != n_ref || (!random && !fx_same_values (ref, res, NULL, n_ref, &so, &rep)))
            {
              printf ("# %s: the GPU result differs from the interpreter: %s\n", op->target, rep.message);
              cuda_test_failures++;
              goto next;
            }
          counts[3]++;
        }
      bool gemm = id == FX_OP_MM || id == FX_OP_ADDMM || id == FX_OP_BMM || id == FX_OP_LINEAR || id == FX_OP_BADDBMM;
      /* the GPU path's choice for an extern or fallback node (fx-inductor-gpu.c: add_extern) */
      bool take = id == FX_OP_EMBEDDING || id == FX_OP_INDEX_SELECT || id == FX_OP_GATHER;
      if (how && (strcmp (how, "extern") == 0 || strcmp (how, "fallback") == 0))
        how = gemm ? "gemm" : take ? "indexed copy (device)" : "fallback (host)";
      printf ("# %-48s %-20s %s\n", op->target, how ? how : "view", have_device ? "ran on the GPU" : "");
    next:
      for (size_t i = 0; i < n_res; i++)
        fx_value_clear (&res[i]);
      for (size_t i = 0; i < n_ref; i++)
        fx_value_clear (&ref[i]);
      for (size_t i = 0; i < n_in; i++)
        fx_value_clear (&in[i]);
      fx_compiled_free (c);
      if (g)
        fx_graph_free (g);
      fx_arena_free (arena);
      fx_buf_free (&code);
    }
  printf ("# %d ops: %d in loop kernels, %d GEMM or fallback, %d views; %d ran on the GPU\n", FX_OP_COUNT, counts[0],
          counts[1], counts[2], counts[3]);
}

int
main (void)
{
  fx_backends_register_builtins ();
  fx_cuda_runtime_info info;
  fx_diag diag;
  fx_diag_clear (&diag);
  have_device = fx_cuda_probe (&info, &diag) == FX_OK && info.device_count > 0;
  if (!have_device)
    printf ("# no CUDA device (%s): listing only\n", diag.message);
  cuda_test_run ("ops", test_ops);
  return cuda_test_finish ();
}
