/* test-ops.c: every op's reference kernel against torch (the installed PyTorch, run once in a subprocess) on random,
   non-contiguous, broadcast, zero-size and edge-value inputs; exits 77 when torch is missing. */
#include "fx/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An argument spec:
     T:dtype:d0,d1[:mode]   a tensor; mode n (normal, default), p (positive), e (edge values), t (transposed view),
                            s (strided: every other column), i (small ints 0..3), u (uniform 0..1)
     f:1.5  i:2  b:1  s:text  d:float64  L:1,2 (int list)  N (None)
   "K:name=spec" makes a keyword argument. */
typedef struct
{
  const char *op;
  const char *args[12];
  bool exact;      /* compare bit-exactly (conversions) */
  double tol;      /* 0: by dtype */
} op_case;

static const op_case cases[] = {
  { "aten.add.Tensor", { "T:f32:4,5", "T:f32:4,5:t" } },
  { "aten.add.Tensor", { "T:f32:4,5", "T:f32:1,5", "K:alpha=f:2.5" } },
  { "aten.add.Tensor", { "T:f32:0,5", "T:f32:1,5" } },
  { "aten.add.Tensor", { "T:f32:3,4", "f:1e-06" } },
  { "aten.add.Tensor", { "T:i64:3,4:i", "T:i32:4:i" } },
  { "aten.add.Tensor", { "T:i32:3,4:i", "f:0.5" } },
  { "aten.add.Tensor", { "T:f16:3,4", "T:bf16:3,4" } },
  { "aten.add.Tensor", { "T:bool:3,4", "i:3" } },
  { "aten.add.Tensor", { "T:f32:3,4:e", "T:f32:3,4:e" } },
  { "aten.add.Scalar", { "T:f64:3,4", "f:2.0" } },
  { "aten.sub.Tensor", { "T:f32:2,3,4:s", "T:f32:4" } },
  { "aten.sub.Scalar", { "T:i64:6:i", "i:4" } },
  { "aten.rsub.Scalar", { "T:f32:6", "f:1.0" } },
  { "aten.mul.Tensor", { "T:f32:8,16:t", "T:f32:8,1" } },
  { "aten.mul.Tensor", { "T:bf16:5,7", "f:3.0" } },
  { "aten.mul.Tensor", { "T:i8:5,7:i", "T:u8:5,7:i" } },
  { "aten.mul.Scalar", { "T:f16:5,7", "f:0.1" } },
  { "aten.div.Tensor", { "T:f32:4,5", "T:f32:4,5:p" } },
  { "aten.div.Tensor", { "T:i64:4,5:i", "i:2" } },
  { "aten.div.Tensor", { "T:f32:3,3:e", "T:f32:3,3:e" } },
  { "aten.div.Scalar", { "T:f32:4", "f:3.0" } },
  { "aten.div.Tensor_mode", { "T:f32:4,5", "T:f32:4,5:p", "K:rounding_mode=s:floor" } },
  { "aten.div.Tensor_mode", { "T:i64:4,5:i", "i:-3", "K:rounding_mode=s:trunc" } },
  { "aten.div.Tensor_mode", { "T:i64:4,5:i", "i:-3", "K:rounding_mode=s:floor" } },
  { "aten.pow.Tensor_Scalar", { "T:f32:4,5", "i:2" } },
  { "aten.pow.Tensor_Scalar", { "T:f32:4,5:p", "f:0.5" } },
  { "aten.pow.Tensor_Scalar", { "T:i64:4,5:i", "i:3" } },
  { "aten.pow.Tensor_Tensor", { "T:f32:4,5:p", "T:f32:5" } },
  { "aten.pow.Scalar", { "f:2.0", "T:f32:4,5" } },
  { "aten.maximum.default", { "T:f32:4,5:e", "T:f32:4,5" } },
  { "aten.minimum.default", { "T:f32:4,5", "T:f32:1,5" } },
  { "aten.remainder.Tensor", { "T:f32:4,5", "T:f32:4,5:p" } },
  { "aten.remainder.Scalar", { "T:i64:4,5:i", "i:-3" } },
  { "aten.fmod.Tensor", { "T:f32:4,5", "T:f32:4,5:p" } },
  { "aten.fmod.Scalar", { "T:f32:4,5", "f:0.7" } },
  { "aten.atan2.default", { "T:f32:4,5", "T:f32:4,5" } },
  { "aten.eq.Tensor", { "T:i64:4,5:i", "T:i64:4,5:i" } },
  { "aten.eq.Scalar", { "T:f32:4,5:e", "f:0.0" } },
  { "aten.ne.Tensor", { "T:f32:4,5:e", "T:f32:4,5:e" } },
  { "aten.ne.Scalar", { "T:i64:4,5:i", "i:1" } },
  { "aten.lt.Tensor", { "T:f32:4,5", "T:f32:5" } },
  { "aten.lt.Scalar", { "T:f32:4,5", "i:0" } },
  { "aten.le.Tensor", { "T:f32:4,5", "T:f32:4,5:t" } },
  { "aten.le.Scalar", { "T:i32:4,5:i", "f:1.5" } },
  { "aten.gt.Tensor", { "T:f16:4,5", "T:f16:4,5" } },
  { "aten.gt.Scalar", { "T:f32:4,5", "f:0.3" } },
  { "aten.ge.Tensor", { "T:i64:4,5:i", "T:i64:4,5:i" } },
  { "aten.ge.Scalar", { "T:f32:4,5", "f:-0.3" } },
  { "aten.logical_and.default", { "T:bool:4,5", "T:bool:4,5" } },
  { "aten.logical_or.default", { "T:f32:4,5:e", "T:bool:4,5" } },
  { "aten.logical_xor.default", { "T:i64:4,5:i", "T:bool:4,5" } },
  { "aten.bitwise_and.Tensor", { "T:i64:4,5:i", "T:i64:4,5:i" } },
  { "aten.bitwise_or.Tensor", { "T:bool:4,5", "T:bool:4,5" } },
  { "aten.bitwise_xor.Tensor", { "T:i32:4,5:i", "T:i32:4,5:i" } },
  { "aten.neg.default", { "T:f32:4,5:t" } },
  { "aten.neg.default", { "T:i64:4,5:i" } },
  { "aten.abs.default", { "T:f32:4,5:e" } },
  { "aten.abs.default", { "T:i32:4,5:i" } },
  { "aten.exp.default", { "T:f32:4,5" } },
  { "aten.exp.default", { "T:f32:4,5:e" } },
  { "aten.exp.default", { "T:i64:4,5:i" } },
  { "aten.exp2.default", { "T:f32:4,5" } },
  { "aten.expm1.default", { "T:f64:4,5" } },
  { "aten.log.default", { "T:f32:4,5:p" } },
  { "aten.log.default", { "T:f32:4,5:e" } },
  { "aten.log2.default", { "T:f32:4,5:p" } },
  { "aten.log10.default", { "T:f32:4,5:p" } },
  { "aten.log1p.default", { "T:f32:4,5:p" } },
  { "aten.sin.default", { "T:f32:4,5" } },
  { "aten.sin.default", { "T:bf16:4,5" } },
  { "aten.cos.default", { "T:f32:4,5:s" } },
  { "aten.tan.default", { "T:f32:4,5:u" } },
  { "aten.tanh.default", { "T:f32:4,5:e" } },
  { "aten.asin.default", { "T:f32:4,5:u" } },
  { "aten.acos.default", { "T:f32:4,5:u" } },
  { "aten.atan.default", { "T:f32:4,5" } },
  { "aten.sinh.default", { "T:f32:4,5" } },
  { "aten.cosh.default", { "T:f32:4,5" } },
  { "aten.sigmoid.default", { "T:f32:4,5:e" } },
  { "aten.sigmoid.default", { "T:f64:4,5" } },
  { "aten.erf.default", { "T:f32:4,5" } },
  { "aten.erfc.default", { "T:f32:4,5" } },
  { "aten.rsqrt.default", { "T:f32:4,5:p" } },
  { "aten.sqrt.default", { "T:f32:4,5:e" } },
  { "aten.reciprocal.default", { "T:f32:4,5:p" } },
  { "aten.relu.default", { "T:f32:4,5:e" } },
  { "aten.relu.default", { "T:i64:4,5:i" } },
  { "aten.silu.default", { "T:f32:4,5" } },
  { "aten.gelu.default", { "T:f32:4,5" } },
  { "aten.gelu.default", { "T:f32:4,5", "K:approximate=s:tanh" } },
  { "aten.hardsigmoid.default", { "T:f32:4,5" } },
  { "aten.hardswish.default", { "T:f32:4,5" } },
  { "aten.hardtanh.default", { "T:f32:4,5", "f:-0.5", "f:0.5" } },
  { "aten.leaky_relu.default", { "T:f32:4,5", "f:0.2" } },
  { "aten.floor.default", { "T:f32:4,5:e" } },
  { "aten.ceil.default", { "T:f32:4,5" } },
  { "aten.round.default", { "T:f32:4,5" } },
  { "aten.trunc.default", { "T:f32:4,5" } },
  { "aten.sign.default", { "T:f32:4,5" } },
  { "aten.logical_not.default", { "T:f32:4,5:e" } },
  { "aten.bitwise_not.default", { "T:i64:4,5:i" } },
  { "aten.bitwise_not.default", { "T:bool:4,5" } },
  { "aten.isnan.default", { "T:f32:4,5:e" } },
  { "aten.isinf.default", { "T:f32:4,5:e" } },
  { "aten.where.self", { "T:bool:4,5", "T:f32:4,5", "T:f32:5" } },
  { "aten.where.self", { "T:bool:4,1", "T:f32:4,5:t", "T:f64:4,5" } },
  { "aten.clamp.default", { "T:f32:4,5:e", "f:-0.5", "f:0.5" } },
  { "aten.clamp.default", { "T:i64:4,5:i", "N", "i:2" } },
  { "aten.clamp.Tensor", { "T:f32:4,5", "T:f32:5", "N" } },
  { "aten.clamp_min.default", { "T:f32:4,5", "f:0.0" } },
  { "aten.clamp_max.default", { "T:f32:4,5", "f:0.0" } },
  { "aten.masked_fill.Scalar", { "T:f32:4,5", "T:bool:5", "f:-1e9" } },
  { "aten._to_copy.default", { "T:f32:64:e", "K:dtype=d:float16" }, true },
  { "aten._to_copy.default", { "T:f32:257", "K:dtype=d:float16" }, true },
  { "aten._to_copy.default", { "T:f32:257", "K:dtype=d:bfloat16" }, true },
  { "aten._to_copy.default", { "T:f32:64:e", "K:dtype=d:bfloat16" }, true },
  { "aten._to_copy.default", { "T:f32:4,5", "K:dtype=d:int32" }, true },
  { "aten._to_copy.default", { "T:f16:4,5", "K:dtype=d:float32" }, true },
  { "aten._to_copy.default", { "T:bf16:4,5", "K:dtype=d:float64" }, true },
  { "aten._to_copy.default", { "T:i64:4,5:i", "K:dtype=d:bool" }, true },
  { "prims.convert_element_type.default", { "T:f64:4,5", "d:float32" }, true },
  { "aten.clone.default", { "T:f32:4,5:t" }, true },
  { "aten.copy.default", { "T:f32:4,5", "T:f64:5" }, true },
  { "aten.sum.default", { "T:f32:4,5" } },
  { "aten.sum.default", { "T:i32:4,5:i" } },
  { "aten.sum.default", { "T:bool:4,5" } },
  { "aten.sum.default", { "T:f32:0,5" } },
  { "aten.sum.dim_IntList", { "T:f32:4,5,6:t", "L:1", "b:1" } },
  { "aten.sum.dim_IntList", { "T:f32:4,5,6", "L:0,2" } },
  { "aten.sum.dim_IntList", { "T:f32:4,5,6", "L:-1", "b:0", "K:dtype=d:float64" } },
  { "aten.mean.default", { "T:f32:4,5" } },
  { "aten.mean.dim", { "T:f32:4,5,6", "L:-1", "b:1" } },
  { "aten.mean.dim", { "T:bf16:4,5,6", "L:1" } },
  { "aten.prod.default", { "T:f32:2,3:u" } },
  { "aten.prod.dim_int", { "T:i64:3,4:i", "i:1" } },
  { "aten.amax.default", { "T:f32:4,5,6", "L:-1", "b:1" } },
  { "aten.amax.default", { "T:f32:4,5:e", "L:0" } },
  { "aten.amin.default", { "T:i64:4,5:i", "L:1" } },
  { "aten.max.default", { "T:f32:4,5" } },
  { "aten.min.default", { "T:f32:4,5" } },
  { "aten.max.dim", { "T:f32:4,5", "i:1" } },
  { "aten.min.dim", { "T:f32:4,5", "i:0", "b:1" } },
  { "aten.argmax.default", { "T:f32:4,5" } },
  { "aten.argmax.default", { "T:f32:4,5", "i:1", "b:1" } },
  { "aten.argmin.default", { "T:f32:4,5", "i:0" } },
  { "aten.any.default", { "T:bool:4,5" } },
  { "aten.any.dim", { "T:f32:4,5:e", "i:1" } },
  { "aten.all.default", { "T:i64:4,5:i" } },
  { "aten.var.correction", { "T:f32:4,5", "L:1" } },
  { "aten.var_mean.correction", { "T:f32:4,8", "L:-1", "K:correction=i:0", "K:keepdim=b:1" } },
  { "aten.var_mean.correction", { "T:f32:4,8,3:t", "L:0,2" } },
  { "aten.logsumexp.default", { "T:f32:4,8", "L:1" } },
  { "aten.cumsum.default", { "T:f32:4,8", "i:1" } },
  { "aten.cumsum.default", { "T:i32:4,8:i", "i:0" } },
  { "aten._softmax.default", { "T:f32:4,8", "i:-1", "b:0" } },
  { "aten._softmax.default", { "T:f32:4,8,3:t", "i:1", "b:0" } },
  { "aten._softmax.default", { "T:f32:4,8:e", "i:-1", "b:0" } },
  { "aten._log_softmax.default", { "T:f32:4,8", "i:0", "b:0" } },
  { "aten.native_layer_norm.default", { "T:f32:4,6,8", "L:8", "T:f32:8", "T:f32:8", "f:1e-05" } },
  { "aten.native_layer_norm.default", { "T:f32:4,6,8:t", "L:6,8", "N", "N", "f:1e-05" } },
  { "aten._native_batch_norm_legit_no_training.default", { "T:f32:2,3,4,4", "T:f32:3", "T:f32:3", "T:f32:3", "T:f32:3:p", "f:0.1", "f:1e-05" } },
  { "aten.nll_loss_forward.default", { "T:f32:6,5", "T:i64:6:i", "N", "i:1", "i:-100" } },
  { "aten.nll_loss_forward.default", { "T:f32:6,5", "T:i64:6:i", "T:f32:5:p", "i:2", "i:1" } },
  { "aten.nll_loss_forward.default", { "T:f32:6,5", "T:i64:6:i", "N", "i:0", "i:-100" } },
  { "aten.mm.default", { "T:f32:7,9", "T:f32:9,5" } },
  { "aten.mm.default", { "T:f32:7,9:t", "T:f32:9,5:t" } },
  { "aten.mm.default", { "T:f64:7,9", "T:f64:9,5:s" } },
  { "aten.mm.default", { "T:i64:3,4:i", "T:i64:4,2:i" } },
  { "aten.mm.default", { "T:f32:0,9", "T:f32:9,5" } },
  { "aten.addmm.default", { "T:f32:5", "T:f32:7,9", "T:f32:9,5" } },
  { "aten.addmm.default", { "T:f32:7,5", "T:f32:7,9", "T:f32:9,5:t", "K:beta=f:0.5", "K:alpha=f:2.0" } },
  /* the bias broadcasts: per column, per row, a 0-d one, f64, and a transposed full one (the general copy) */
  { "aten.addmm.default", { "T:f32:7,1", "T:f32:7,9", "T:f32:9,5" } },
  { "aten.addmm.default", { "T:f32:1,5", "T:f32:7,9:t", "T:f32:9,5" } },
  { "aten.addmm.default", { "T:f32:", "T:f32:7,9", "T:f32:9,5" } },
  { "aten.addmm.default", { "T:f64:5", "T:f64:7,9", "T:f64:9,5" } },
  { "aten.addmm.default", { "T:f32:7,5:t", "T:f32:7,9", "T:f32:9,5", "K:beta=f:2.0" } },
  { "aten.bmm.default", { "T:f32:3,4,5", "T:f32:3,5,6" } },
  /* more batches than threads: one GEMM per thread, a transposed and an f64 operand */
  { "aten.bmm.default", { "T:f32:37,6,5", "T:f32:37,5,7:t" } },
  { "aten.bmm.default", { "T:f64:33,4,9:t", "T:f64:33,9,3" } },
  { "aten.baddbmm.default", { "T:f32:4,6", "T:f32:3,4,5", "T:f32:3,5,6" } },
  { "aten.baddbmm.default", { "T:f32:3,1,6", "T:f32:3,4,5", "T:f32:3,5,6" } },
  { "aten.baddbmm.default", { "T:f64:4,1", "T:f64:3,4,5", "T:f64:3,5,6" } },
  { "aten.convolution.default", { "T:f32:2,3,8,8", "T:f32:4,3,3,3", "T:f32:4", "L:1,1", "L:1,1", "L:1,1", "b:0", "L:0,0", "i:1" } },
  { "aten.convolution.default", { "T:f32:2,4,9,7", "T:f32:6,2,3,2", "N", "L:2,1", "L:1,0", "L:1,2", "b:0", "L:0,0", "i:2" } },
  { "aten.convolution.default", { "T:f32:2,3,10", "T:f32:4,3,3", "T:f32:4", "L:1", "L:1", "L:1", "b:0", "L:0", "i:1" } },
  { "aten.max_pool2d_with_indices.default", { "T:f32:2,3,8,8", "L:2,2", "L:2,2" } },
  { "aten.max_pool2d_with_indices.default", { "T:f32:2,3,9,9", "L:3,3", "L:2,2", "L:1,1", "L:1,1", "b:1" } },
  { "aten.avg_pool2d.default", { "T:f32:2,3,8,8", "L:3,3", "L:2,2", "L:1,1" } },
  { "aten.avg_pool2d.default", { "T:f32:2,3,8,8", "L:3,3", "L:2,2", "L:1,1", "b:1", "b:0" } },
  { "aten._adaptive_avg_pool2d.default", { "T:f32:2,3,7,9", "L:3,4" } },
  { "aten.embedding.default", { "T:f32:10,4", "T:i64:3,2:i" } },
  { "aten.gather.default", { "T:f32:4,5", "i:1", "T:i64:4,3:i" } },
  { "aten.index_select.default", { "T:f32:4,5", "i:0", "T:i64:3:i" } },
  /* in-range indices: the contiguous fast paths (a row's last dim, blocks after dim) and the general walk */
  { "aten.gather.default", { "T:f32:6,5", "i:1", "T:i64:4,3:k" } },
  { "aten.gather.default", { "T:f64:2,3,5", "i:-1", "T:i64:2,3,7:k" } },
  { "aten.gather.default", { "T:f32:5,4", "i:0", "T:i64:3,4:k" } },
  { "aten.gather.default", { "T:f32:6,5:t", "i:1", "T:i64:5,2:k" } },
  { "aten.index_select.default", { "T:f32:2,5,3", "i:1", "T:i64:6:k" } },
  { "aten.index_select.default", { "T:i64:5,3", "i:0", "T:i64:4:k" } },
  { "aten.index_select.default", { "T:f32:5,3:t", "i:0", "T:i64:4:k" } },
  { "aten.scatter.value", { "T:f32:4,16", "i:1", "T:i64:4,3", "f:0.5" } },
  { "aten.scatter.src", { "T:f32:4,16", "i:1", "T:i64:4,3", "T:f32:4,3" } },
  { "aten.scatter.src", { "T:f32:4,5", "i:1", "T:i64:4,3:i", "T:f32:4,3" } },   /* negative indices: both refuse */
  { "aten.index.Tensor", { "T:f32:4,5", "L:T:i64:3:i" } },
  { "aten.index_put.default", { "T:f32:5,4", "L:T:i64:3:i", "T:f32:3,4" } },
  { "aten.index_put.default", { "T:f32:5,4", "L:T:i64:6:i", "T:f32:4", "b:1" } },
  { "aten.index_put.default", { "T:f32:5,4:t", "L:T:bool:5,4", "T:f32:1" } },
  { "aten.index_put.default", { "T:i64:5,4:i", "L:T:bool:5", "T:i64:4:i" } },
  { "aten.index_put.default", { "T:f64:5,4,3", "L:T:i64:2,1:i|T:i64:3:i", "T:f64:3" } },
  { "aten.slice_scatter.default", { "T:f32:6,5", "T:f32:6,2", "i:1", "i:1", "i:5", "i:2" } },
  { "aten.slice_scatter.default", { "T:f32:6,5:t", "T:f32:2,5", "i:0", "i:-2" } },
  { "aten.select_scatter.default", { "T:f32:6,5", "T:f32:6:s", "i:1", "i:-2" } },
  { "aten.topk.default", { "T:f32:4,7", "i:3" } },
  { "aten.topk.default", { "T:f64:4,7,3:t", "i:2", "i:0", "b:0" } },
  { "aten.topk.default", { "T:f32:3,9:u", "i:4", "i:-1", "b:1", "b:1" } },
  { "aten.std_mean.correction", { "T:f32:4,5", "L:1", "K:correction=i:0", "K:keepdim=b:1" } },
  { "aten.std_mean.correction", { "T:f64:4,5", "N", "K:correction=N" } },
  { "aten.upsample_nearest2d.default", { "T:f32:2,3,5,4", "L:7,9" } },
  { "aten.upsample_nearest2d.default", { "T:f32:2,3,5,4", "L:10,8" } },
  { "aten.upsample_nearest2d.default", { "T:f32:2,3,5,4", "L:7,6", "f:1.5", "f:1.5" } },
  { "aten.upsample_bilinear2d.default", { "T:f32:2,3,5,4", "L:7,9", "b:0" } },
  { "aten.upsample_bilinear2d.default", { "T:f32:2,3,5,4", "L:10,8", "b:1" } },
  { "aten.upsample_bilinear2d.default", { "T:f64:1,2,5,4:t", "L:7,6", "b:0", "f:1.5", "f:1.5" } },
  { "aten.view.default", { "T:f32:4,6", "L:2,-1,3" }, true },
  { "aten.reshape.default", { "T:f32:4,6:t", "L:24" }, true },
  { "aten._unsafe_view.default", { "T:f32:4,6", "L:6,4" }, true },
  { "aten.permute.default", { "T:f32:2,3,4", "L:2,0,1" }, true },
  { "aten.transpose.int", { "T:f32:2,3,4", "i:0", "i:2" }, true },
  { "aten.t.default", { "T:f32:3,4" }, true },
  { "aten.expand.default", { "T:f32:3,1", "L:2,3,4" }, true },
  { "aten.unsqueeze.default", { "T:f32:3,4", "i:-1" }, true },
  { "aten.squeeze.dim", { "T:f32:3,1,4", "i:1" }, true },
  { "aten.squeeze.default", { "T:f32:1,3,1" }, true },
  { "aten.slice.Tensor", { "T:f32:6,5", "i:0", "i:1", "i:5", "i:2" }, true },
  { "aten.slice.Tensor", { "T:f32:6,5", "i:1", "i:-3", "i:9223372036854775807" }, true },
  { "aten.select.int", { "T:f32:6,5", "i:1", "i:-2" }, true },
  { "aten.as_strided.default", { "T:f32:6,5", "L:3,3", "L:5,2", "i:1" }, true },
  { "aten.split.Tensor", { "T:f32:7,4", "i:3" }, true },
  { "aten.split_with_sizes.default", { "T:f32:7,4", "L:1,3", "i:1" }, true },
  { "aten.unbind.int", { "T:f32:3,4", "i:1" }, true },
  { "aten.chunk.default", { "T:f32:7,4", "i:3" }, true },
  { "aten.flatten.using_ints", { "T:f32:2,3,4", "i:1" }, true },
  { "aten.cat.default", { "L:T:f32:2,3|T:f32:4,3", "i:0" }, true },
  { "aten.cat.default", { "L:T:f32:2,3:t|T:f64:2,1", "i:-1" }, true },
  { "aten.stack.default", { "L:T:f32:2,3|T:f32:2,3", "i:1" }, true },
  { "aten.constant_pad_nd.default", { "T:f32:3,4", "L:1,2,0,1", "f:0.5" }, true },
  { "aten.constant_pad_nd.default", { "T:f32:3,4", "L:-1,2" }, true },
  { "aten.flip.default", { "T:f32:3,4", "L:0,1" }, true },
  { "aten.tril.default", { "T:f32:4,5" }, true },
  { "aten.triu.default", { "T:f32:4,5", "i:1" }, true },
  { "aten.full.default", { "L:2,3", "f:1.5" }, true },
  { "aten.full.default", { "L:2,3", "i:7" }, true },
  { "aten.zeros.default", { "L:2,3", "K:dtype=d:int32" }, true },
  { "aten.ones.default", { "L:0,3" }, true },
  { "aten.full_like.default", { "T:f16:2,3", "f:2.0" }, true },
  { "aten.zeros_like.default", { "T:i64:2,3:i" }, true },
  { "aten.ones_like.default", { "T:f32:2,3", "K:dtype=d:float64" }, true },
  { "aten.arange.default", { "i:10" }, true },
  { "aten.arange.start_step", { "f:0.5", "f:3.0", "f:0.5" }, true },
  { "aten.arange.start", { "i:-3", "i:4", "K:dtype=d:float32" }, true },
  { "aten.scalar_tensor.default", { "f:3.5" }, true },
};

static int n_failed;

typedef struct
{
  fx_value args[12];
  const char *names[12];
  int n_args;
  fx_value kw[8];
  const char *kw_names[8];
  int n_kw;
} built;

/* A tensor per spec, plus the JSON describing it for torch (values saved to a file). */
static fx_value
make_tensor (const char *spec, fx_generator *gen, fx_arena *arena, const char *dir, int *file_no, fx_buf *json)
{
  char dt[16], dims[64], mode = 'n';
  const char *p = spec + 2;
  const char *c1 = strchr (p, ':');
  snprintf (dt, sizeof dt, "%.*s", (int) (c1 - p), p);
  const char *c2 = strchr (c1 + 1, ':');
  if (c2)
    {
      snprintf (dims, sizeof dims, "%.*s", (int) (c2 - c1 - 1), c1 + 1);
      mode = c2[1];
    }
  else
    snprintf (dims, sizeof dims, "%s", c1 + 1);
  int64_t sizes[8];
  int nd = 0;
  for (char *q = dims; *q;)
    {
      sizes[nd++] = strtoll (q, &q, 10);
      if (*q == ',')
        q++;
    }
  fx_dtype dtype = fx_dtype_from_name (dt);
  fx_tensor *t;
  if (mode == 't' && nd >= 2)
    {
      /* the same logical shape as a transposed view of a contiguous tensor */
      int64_t rs[8];
      memcpy (rs, sizes, sizeof rs);
      rs[nd - 1] = sizes[nd - 2];
      rs[nd - 2] = sizes[nd - 1];
      fx_tensor *base = fx_tensor_new (NULL, dtype, nd, rs);
      int64_t st[8];
      memcpy (st, base->strides, sizeof st);
      int64_t tmp = st[nd - 1];
      st[nd - 1] = st[nd - 2];
      st[nd - 2] = tmp;
      t = fx_tensor_as_strided (base, nd, sizes, st, 0);
      fx_tensor_unref (base);
    }
  else if (mode == 's' && nd >= 1)
    {
      int64_t rs[8];
      memcpy (rs, sizes, sizeof rs);
      rs[nd - 1] = sizes[nd - 1] * 2 + 1;
      fx_tensor *base = fx_tensor_new (NULL, dtype, nd, rs);
      int64_t st[8];
      memcpy (st, base->strides, sizeof st);
      st[nd - 1] = 2;
      t = fx_tensor_as_strided (base, nd, sizes, st, 1);
      fx_tensor_unref (base);
    }
  else
    t = fx_tensor_new (NULL, dtype, nd, sizes);
  int64_t n = fx_tensor_numel (t);
  static const double edge[] = { 0.0, -0.0, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0, 1e-30, -1e30, 65504.0, 1e-8, -2.5, 3.5, 1.0 };
  for (int64_t i = 0; i < n; i++)
    {
      double v;
      if (dtype == FX_DTYPE_BOOL)
        v = fx_generator_uniform (gen) < 0.5;
      else if (fx_dtype_is_integral (dtype, false))
        v = mode == 'i'   ? (double) (fx_generator_next_u64 (gen) % 7) - 3
            : mode == 'k' ? (double) (fx_generator_next_u64 (gen) % 4)   /* valid indices into a dim of 4 or more */
                          : (double) (fx_generator_next_u64 (gen) % 16);
      else if (mode == 'p')
        v = 0.1 + 2.0 * fx_generator_uniform (gen);
      else if (mode == 'u')
        v = fx_generator_uniform (gen) * 0.98;
      else if (mode == 'e')
        v = edge[i % (sizeof edge / sizeof edge[0])] * (i % 24 >= 12 ? -1.0 : 1.0);
      else
        v = fx_generator_normal (gen);
      if (dtype == FX_DTYPE_U8 && v < 0)
        v = -v;
      fx_tensor_set_f64 (t, i, v);
    }
  char path[512];
  snprintf (path, sizeof path, "%s/in%d.fxt", dir, (*file_no)++);
  fx_tensor_save (t, path, NULL);
  fx_buf_printf (json, "{\"t\": \"%s\"}", path);
  (void) arena;
  return fx_value_tensor (t);
}

static fx_value
make_value (const char *spec, fx_generator *gen, fx_arena *arena, const char *dir, int *file_no, fx_buf *json)
{
  fx_value v = fx_value_none ();
  switch (spec[0])
    {
    case 'T':
      return make_tensor (spec, gen, arena, dir, file_no, json);
    case 'f':
      v = fx_value_float (strtod (spec + 2, NULL));
      fx_buf_printf (json, "{\"f\": %.17g}", v.u.f);
      return v;
    case 'i':
      v = fx_value_int (strtoll (spec + 2, NULL, 10));
      fx_buf_printf (json, "{\"i\": %lld}", (long long) v.u.i);
      return v;
    case 'b':
      v = fx_value_bool (spec[2] == '1');
      fx_buf_printf (json, "{\"b\": %s}", v.u.b ? "true" : "false");
      return v;
    case 's':
      v.kind = FX_VALUE_STR;
      v.u.s = spec + 2;
      fx_buf_printf (json, "{\"s\": \"%s\"}", spec + 2);
      return v;
    case 'd':
      v.kind = FX_VALUE_DTYPE;
      v.u.dtype = fx_dtype_from_name (spec + 2);
      fx_buf_printf (json, "{\"d\": \"%s\"}", spec + 2);
      return v;
    case 'N':
      fx_buf_puts (json, "{\"none\": true}");
      return v;
    case 'L':
      {
        v.kind = FX_VALUE_LIST;
        v.u.seq.items = fx_arena_alloc (arena, sizeof (fx_value) * 8);
        fx_buf_puts (json, "{\"L\": [");
        const char *p = spec + 2;
        if (p[0] == 'T')
          {
            /* tensors separated by '|' */
            char tmp[128];
            while (*p)
              {
                const char *e = strchr (p, '|');
                size_t len = e ? (size_t) (e - p) : strlen (p);
                snprintf (tmp, sizeof tmp, "%.*s", (int) len, p);
                if (v.u.seq.n)
                  fx_buf_puts (json, ", ");
                v.u.seq.items[v.u.seq.n++] = make_tensor (tmp, gen, arena, dir, file_no, json);
                p += len + (e ? 1 : 0);
              }
          }
        else
          {
            char *q = (char *) p;
            while (*q)
              {
                int64_t x = strtoll (q, &q, 10);
                if (v.u.seq.n)
                  fx_buf_puts (json, ", ");
                fx_buf_printf (json, "{\"i\": %lld}", (long long) x);
                v.u.seq.items[v.u.seq.n++] = fx_value_int (x);
                if (*q == ',')
                  q++;
              }
          }
        fx_buf_puts (json, "]}");
        return v;
      }
    default:
      return v;
    }
}

static bool
compare (const op_case *c, int case_no, int out_no, const fx_tensor *got, const fx_tensor *want)
{
  if (got->ndim != want->ndim || memcmp (got->sizes, want->sizes, sizeof (int64_t) * got->ndim) != 0)
    {
      fprintf (stderr, "FAIL case %d (%s) out %d: shape differs\n", case_no, c->op, out_no);
      return false;
    }
  if (got->dtype != want->dtype)
    {
      fprintf (stderr, "FAIL case %d (%s) out %d: dtype %s, torch %s\n", case_no, c->op, out_no,
               fx_dtype_name (got->dtype), fx_dtype_name (want->dtype));
      return false;
    }
  double tol = c->tol;
  if (tol == 0)
    tol = got->dtype == FX_DTYPE_F16 ? 2e-3 : got->dtype == FX_DTYPE_BF16 ? 1.6e-2 : got->dtype == FX_DTYPE_F64 ? 1e-10 : 2e-5;
  int64_t n = fx_tensor_numel (got);
  for (int64_t i = 0; i < n; i++)
    {
      double a = fx_tensor_get_f64 (got, i), b = fx_tensor_get_f64 (want, i);
      bool ok;
      if (isnan (a) || isnan (b))
        ok = isnan (a) && isnan (b);
      else if (c->exact || !fx_dtype_is_floating (got->dtype))
        ok = a == b;
      else
        ok = a == b || fabs (a - b) <= tol * (1 + fabs (b));
      if (!ok)
        {
          fprintf (stderr, "FAIL case %d (%s) out %d: element %lld: engine %.9g, torch %.9g\n", case_no, c->op, out_no,
                   (long long) i, a, b);
          return false;
        }
    }
  return true;
}

int
main (void)
{
  if (access ("/usr/bin/python3", X_OK) != 0 || system ("/usr/bin/python3 -c 'import torch' 2>/dev/null") != 0)
    {
      printf ("SKIP: /usr/bin/python3 with torch not available\n");
      return 77;
    }
  char dir[] = "/tmp/fx-test-ops-XXXXXX";
  if (mkdtemp (dir) == NULL)
    return 1;
  size_t ncases = sizeof cases / sizeof cases[0];
  fx_arena *arena = fx_arena_new ();
  fx_generator gen;
  fx_generator_seed (&gen, 1234);
  built *b = calloc (ncases, sizeof *b);
  fx_buf json;
  fx_buf_init (&json);
  fx_buf_puts (&json, "[\n");
  int file_no = 0;
  for (size_t k = 0; k < ncases; k++)
    {
      const op_case *c = &cases[k];
      fx_buf a, kw;
      fx_buf_init (&a);
      fx_buf_init (&kw);
      for (int i = 0; i < 12 && c->args[i]; i++)
        {
          const char *spec = c->args[i];
          if (spec[0] == 'K')
            {
              const char *eq = strchr (spec, '=');
              char *name = fx_arena_strndup (arena, spec + 2, (size_t) (eq - spec - 2));
              if (kw.len)
                fx_buf_puts (&kw, ", ");
              fx_buf_printf (&kw, "\"%s\": ", name);
              b[k].kw_names[b[k].n_kw] = name;
              b[k].kw[b[k].n_kw++] = make_value (eq + 1, &gen, arena, dir, &file_no, &kw);
            }
          else
            {
              if (a.len)
                fx_buf_puts (&a, ", ");
              b[k].args[b[k].n_args++] = make_value (spec, &gen, arena, dir, &file_no, &a);
            }
        }
      fx_buf_printf (&json, "%s{\"op\": \"%s\", \"args\": [%s], \"kwargs\": {%s}, \"out\": \"%s/out%zu\"}\n",
                     k ? "," : "", c->op, a.data ? a.data : "", kw.data ? kw.data : "", dir, k);
      fx_buf_free (&a);
      fx_buf_free (&kw);
    }
  fx_buf_puts (&json, "]\n");
  char path[600], cmd[1400];
  snprintf (path, sizeof path, "%s/cases.json", dir);
  fx_file_write (path, json.data, json.len, NULL);
  fx_buf_free (&json);
  snprintf (cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/engine/tensor/torch_ref.py' '%s'", getenv ("FX_SOURCE_ROOT") ? getenv ("FX_SOURCE_ROOT") : ".", path);
  int rc = system (cmd);
  if (WEXITSTATUS (rc) == 77)
    return 77;
  if (rc != 0)
    {
      fprintf (stderr, "torch reference script failed (%d)\n", rc);
      return 1;
    }
  int checked = 0;
  for (size_t k = 0; k < ncases; k++)
    {
      const op_case *c = &cases[k];
      int id = fx_op_lookup (c->op);
      if (id < 0)
        {
          fprintf (stderr, "FAIL case %zu: op %s not in the table\n", k, c->op);
          n_failed++;
          continue;
        }
      fx_diag diag;
      fx_diag_clear (&diag);
      fx_op_call call;
      memset (&call, 0, sizeof call);
      call.arena = arena;
      call.op = fx_op_get ((fx_op_id) id);
      fx_status st = fx_op_bind (&call, call.op, b[k].args, (size_t) b[k].n_args, b[k].kw_names, b[k].kw,
                                 (size_t) b[k].n_kw, &diag);
      if (st == FX_OK)
        st = fx_op_execute (&call);
      char errp[700];
      snprintf (errp, sizeof errp, "%s/out%zu.skip", dir, k);
      if (access (errp, F_OK) == 0)
        {
          printf ("skip case %zu (%s): not in this torch\n", k, c->op);
          fx_op_call_clear (&call);
          continue;
        }
      snprintf (errp, sizeof errp, "%s/out%zu.err", dir, k);
      bool torch_failed = access (errp, F_OK) == 0;
      if (st != FX_OK || torch_failed)
        {
          if (!(st != FX_OK && torch_failed))
            {
              fprintf (stderr, "FAIL case %zu (%s): engine %s (%s), torch %s\n", k, c->op,
                       st == FX_OK ? "ok" : "failed", diag.message, torch_failed ? "failed" : "ok");
              n_failed++;
            }
          fx_op_call_clear (&call);
          continue;
        }
      /* flatten outputs */
      fx_value flat[16];
      int nf = 0;
      for (int i = 0; i < call.n_outs; i++)
        {
          if (call.outs[i].kind == FX_VALUE_LIST)
            for (size_t j = 0; j < call.outs[i].u.seq.n && nf < 16; j++)
              flat[nf++] = call.outs[i].u.seq.items[j];
          else
            flat[nf++] = call.outs[i];
        }
      bool ok = true;
      for (int i = 0; i < nf; i++)
        {
          char op[700];
          snprintf (op, sizeof op, "%s/out%zu.%d", dir, k, i);
          fx_tensor *want = NULL;
          if (fx_tensor_load (op, NULL, &want, &diag) != FX_OK)
            {
              fprintf (stderr, "FAIL case %zu (%s): torch gave no output %d\n", k, c->op, i);
              ok = false;
              break;
            }
          /* batch-norm / layer-norm auxiliary outputs differ by convention on CPU: compare the main output only */
          bool aux = (id == FX_OP_BATCH_NORM_NO_TRAINING && i > 0) || (id == FX_OP_MAX_POOL2D_WITH_INDICES && i > 0 && false);
          if (!aux && flat[i].kind == FX_VALUE_TENSOR && !compare (c, (int) k, i, flat[i].u.t, want))
            ok = false;
          fx_tensor_unref (want);
        }
      if (!ok)
        n_failed++;
      checked++;
      fx_op_call_clear (&call);
    }
  printf ("%d cases checked against torch, %d failed (of %zu)\n", checked, n_failed, ncases);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (n_failed == 0)
    (void) !system (cmd);
  return n_failed ? 1 : 0;
}
