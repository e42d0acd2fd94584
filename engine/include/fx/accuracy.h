/* fx/accuracy.h: PyTorch's same() (torch/_dynamo/utils.py): allclose, else RMSE against an fp64 reference within a multiplier. */
#pragma once

#include "fx/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fx_same_opts
{
  double tol;             /* atol = rtol = tol; PyTorch's repro_tolerance is 1e-3 */
  bool equal_nan;
  bool ignore_non_fp;     /* skip bool/int outputs */
  bool force_max_multiplier; /* multiplier 10 */
} fx_same_opts;

void fx_same_opts_init (fx_same_opts *opts);   /* tol 1e-3, equal_nan, keep non-fp */

/* What same() found for one output. */
typedef struct fx_same_report
{
  bool pass;
  bool used_rmse;             /* allclose failed and the fp64 comparison decided */
  double max_abs_err;         /* worst element |ref - res| */
  double max_rel_err;
  int64_t worst_index;        /* flat index of the worst element, -1 when none */
  double worst_ref, worst_res;
  double ref_error;           /* rmse(fp64_ref, ref) */
  double res_error;           /* rmse(fp64_ref, res) */
  double multiplier;
  char message[512];          /* PyTorch's log line on failure ("RMSE (res-fp64): ...", "Accuracy failed: ...") */
} fx_same_report;

/* Compares one tensor. fp64_ref may be NULL (allclose only). */
bool fx_same_tensor (const fx_tensor *ref, const fx_tensor *res, const fx_tensor *fp64_ref,
                     const fx_same_opts *opts, fx_same_report *report);
/* Compares output lists (tensors, ints, floats, bools; nested tuples); report describes the worst output. */
bool fx_same_values (const fx_value *ref, const fx_value *res, const fx_value *fp64_ref, size_t n,
                     const fx_same_opts *opts, fx_same_report *report);

/* torch.allclose(a, b, rtol, atol, equal_nan) over broadcast shapes. */
bool fx_allclose (const fx_tensor *a, const fx_tensor *b, double rtol, double atol, bool equal_nan);

#ifdef __cplusplus
}
#endif
