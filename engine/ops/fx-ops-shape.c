/* fx-ops-shape.c: views (as_strided semantics), cat/stack, padding, flips, triangles, indexing, factories and

   random ops. */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"
#include "fx-ops-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- views */

static fx_status
set_view (fx_op_call *call, int slot, fx_tensor *x, int nd, const int64_t *sizes, const int64_t *strides,
          int64_t offset)
{
  fx_tensor *v = fx_tensor_as_strided (x, nd, sizes, strides, offset);
  if (v == NULL)
    return fx_op_error (call, FX_ERR_INVALID, "too many dims (%d)", nd);
  call->outs[slot] = fx_value_tensor (v);
  if (slot + 1 > call->n_outs)
    call->n_outs = slot + 1;
  return FX_OK;
}

/* slice(start, end, step) over a dim of length len as PyTorch clamps it (a: the start, end and step values):
   its first index and its length */
static fx_status
slice_range (fx_op_call *call, const fx_value *a, int64_t len, int64_t *first, int64_t *count)
{
  int64_t start = a[0].kind == FX_VALUE_NONE ? 0 : a[0].u.i;
  int64_t end = a[1].kind == FX_VALUE_NONE ? INT64_MAX : a[1].u.i;
  int64_t step = a[2].u.i;
  if (step <= 0)
    return fx_op_error (call, FX_ERR_INVALID, "slice step must be positive");
  if (start < 0)
    start += len;
  if (end < 0)
    end += len;
  start = start < 0 ? 0 : start > len ? len : start;
  end = end < start ? start : end > len ? len : end;
  *first = start;
  *count = (end - start + step - 1) / step;
  return FX_OK;
}

/* torch's computeStride: strides of a view of `x` at `shape`, or false when the memory layout does not allow it. */
static bool
view_strides (const fx_tensor *x, int nd, const int64_t *shape, int64_t *out)
{
  int64_t numel = fx_tensor_numel (x);
  if (numel == 0)
    {
      fx_contiguous_strides (nd, shape, out);
      return true;
    }
  int view_d = nd - 1;
  int64_t chunk_base_stride = x->ndim ? x->strides[x->ndim - 1] : 1;
  int64_t tensor_numel = 1, view_numel = 1;
  for (int tensor_d = x->ndim - 1; tensor_d >= 0; tensor_d--)
    {
      tensor_numel *= x->sizes[tensor_d];
      if (tensor_d == 0 || (x->sizes[tensor_d - 1] != 1 && x->strides[tensor_d - 1] != tensor_numel * chunk_base_stride))
        {
          while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1))
            {
              out[view_d] = view_numel * chunk_base_stride;
              view_numel *= shape[view_d];
              view_d--;
            }
          if (view_numel != tensor_numel)
            return false;
          if (tensor_d > 0)
            {
              chunk_base_stride = x->strides[tensor_d - 1];
              tensor_numel = 1;
              view_numel = 1;
            }
        }
    }
  if (view_d != -1)
    return false;
  if (x->ndim == 0)
    for (int d = 0; d < nd; d++)
      out[d] = 1;
  return true;
}

/* select's index into a dim of length len, negative counting from the end: in range, or an error */
static fx_status
select_index (fx_op_call *call, int64_t idx, int64_t len, int64_t d, int64_t *out)
{
  if (idx < -len || idx >= len)
    return fx_op_error (call, FX_ERR_INVALID,
                        "select(): index %lld out of range for tensor of size [...] at dimension %lld",
                        (long long) idx, (long long) d);
  *out = idx < 0 ? idx + len : idx;
  return FX_OK;
}

/* x's sizes and strides without dim d (select, unbind); returns the number of dims left. */
static int
drop_dim (const fx_tensor *x, int64_t d, int64_t *sizes, int64_t *strides)
{
  int m = 0;
  for (int k = 0; k < x->ndim; k++)
    if (k != d)
      {
        sizes[m] = x->sizes[k];
        strides[m] = x->strides[k];
        m++;
      }
  return m;
}

/* reshape's answer at `sizes`: a view of x where its layout allows one, else a view of a contiguous copy. */
static fx_status
view_or_copy (fx_op_call *call, fx_tensor *x, int nd, const int64_t *sizes, int64_t *strides)
{
  if (view_strides (x, nd, sizes, strides))
    return set_view (call, 0, x, nd, sizes, strides, x->offset);
  fx_tensor *c = fx_tensor_is_meta (x) ? fx_tensor_new_meta (x->dtype, x->ndim, x->sizes, NULL)
                                        : fx_tensor_contiguous_copy (call->alloc, x);
  fx_contiguous_strides (nd, sizes, strides);
  fx_status st = set_view (call, 0, c, nd, sizes, strides, 0);
  fx_tensor_unref (c);
  return st;
}

static fx_status
infer_size (fx_op_call *call, const fx_tensor *x, const fx_value *v, int *nd, int64_t *shape)
{
  int n = fx_value_as_int_list (v, shape, FX_TENSOR_MAX_DIMS);
  if (n < 0 || n > FX_TENSOR_MAX_DIMS)
    return fx_op_error (call, FX_ERR_INVALID, "bad shape");
  int64_t numel = fx_tensor_numel (x), known = 1;
  int infer = -1;
  for (int i = 0; i < n; i++)
    {
      if (shape[i] == -1)
        {
          if (infer >= 0)
            return fx_op_error (call, FX_ERR_INVALID, "only one dimension can be inferred");
          infer = i;
        }
      else if (shape[i] < 0)
        return fx_op_error (call, FX_ERR_INVALID, "invalid shape dimension %lld", (long long) shape[i]);
      else if (!fx_size_mul (known, shape[i], &known))
        return fx_op_error (call, FX_ERR_INVALID, "shape dimension %lld makes the element count overflow a 64-bit size",
                            (long long) shape[i]);
    }
  if (infer >= 0)
    {
      if (known == 0 || numel % known != 0)
        goto bad;
      shape[infer] = numel / known;
    }
  else if (known != numel)
    goto bad;
  *nd = n;
  return FX_OK;
bad:
  {
    fx_buf b;
    fx_buf_init (&b);
    fx_buf_put_ints (&b, shape, n);
    fx_status st = fx_op_error (call, FX_ERR_INVALID, "shape '[%s]' is invalid for input of size %lld", b.data,
                                (long long) numel);
    fx_buf_free (&b);
    return st;
  }
}

static fx_status
split_views (fx_op_call *call, fx_tensor *x, int64_t dim, const int64_t *lens, int n)
{
  fx_value list = fx_value_none ();
  list.kind = FX_VALUE_LIST;
  list.u.seq.items = fx_arena_alloc (call->arena, sizeof (fx_value) * (n ? n : 1));
  list.u.seq.n = (size_t) n;
  int64_t start = 0;
  for (int i = 0; i < n; i++)
    {
      int64_t sizes[FX_TENSOR_MAX_DIMS];
      memcpy (sizes, x->sizes, sizeof sizes);
      sizes[dim] = lens[i];
      list.u.seq.items[i] = fx_value_tensor (
        fx_tensor_as_strided (x, x->ndim, sizes, x->strides, x->offset + start * x->strides[dim]));
      start += lens[i];
    }
  call->outs[0] = list;
  call->n_outs = 1;
  return FX_OK;
}

fx_status
fx_meta_view (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  int nd = x->ndim;
  int64_t sizes[FX_TENSOR_MAX_DIMS], strides[FX_TENSOR_MAX_DIMS];
  int64_t d, d2;
  memcpy (sizes, x->sizes, sizeof sizes);
  memcpy (strides, x->strides, sizeof strides);
  fx_status st;
  switch (call->op->id)
    {
    case FX_OP_VIEW: case FX_OP_RESHAPE: case FX_OP_UNSAFE_VIEW:
      if ((st = infer_size (call, x, &call->args[1], &nd, sizes)) != FX_OK)
        return st;
      if (call->op->id == FX_OP_VIEW && !view_strides (x, nd, sizes, strides))
        return fx_op_error (call, FX_ERR_INVALID,
                            "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
      /* reshape of a non-viewable tensor copies */
      return view_or_copy (call, x, nd, sizes, strides);
    case FX_OP_PERMUTE:
      {
        int64_t p[FX_TENSOR_MAX_DIMS];
        int n = fx_value_as_int_list (&call->args[1], p, FX_TENSOR_MAX_DIMS);
        if (n != x->ndim)
          return fx_op_error (call, FX_ERR_INVALID,
                              "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %d",
                              x->ndim, n);
        bool seen[FX_TENSOR_MAX_DIMS] = { false };
        for (int i = 0; i < n; i++)
          {
            if (!fx_norm_dim (call, &p[i], x->ndim))
              return FX_ERR_INVALID;
            if (seen[p[i]])
              return fx_op_error (call, FX_ERR_INVALID, "permute(): duplicate dims are not allowed.");
            seen[p[i]] = true;
            sizes[i] = x->sizes[p[i]];
            strides[i] = x->strides[p[i]];
          }
        return set_view (call, 0, x, nd, sizes, strides, x->offset);
      }
    case FX_OP_TRANSPOSE_INT: case FX_OP_T:
      if (call->op->id == FX_OP_T)
        {
          if (x->ndim > 2)
            return fx_op_error (call, FX_ERR_INVALID, "t() expects a tensor with <= 2 dimensions, but self is %dD",
                                x->ndim);
          d = 0;
          d2 = x->ndim == 2 ? 1 : 0;
        }
      else
        {
          d = call->args[1].u.i;
          d2 = call->args[2].u.i;
          if (!fx_norm_dim (call, &d, x->ndim) || !fx_norm_dim (call, &d2, x->ndim))
            return FX_ERR_INVALID;
        }
      if (x->ndim > 0)
        {
          sizes[d] = x->sizes[d2];
          sizes[d2] = x->sizes[d];
          strides[d] = x->strides[d2];
          strides[d2] = x->strides[d];
        }
      return set_view (call, 0, x, nd, sizes, strides, x->offset);
    case FX_OP_EXPAND:
      {
        int64_t want[FX_TENSOR_MAX_DIMS];
        int n = fx_value_as_int_list (&call->args[1], want, FX_TENSOR_MAX_DIMS);
        if (n < 0)
          return fx_op_error (call, FX_ERR_UNSUPPORTED, "expand: more than %d sizes", FX_TENSOR_MAX_DIMS);
        if (n < x->ndim)
          return fx_op_error (call, FX_ERR_INVALID,
                              "expand: the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)",
                              n, x->ndim);
        for (int i = 0; i < n; i++)
          {
            int xi = x->ndim - n + i;
            if (xi < 0)
              {
                if (want[i] < 0)
                  return fx_op_error (call, FX_ERR_INVALID, "expand: -1 not allowed in a leading, non-existing dimension");
                sizes[i] = want[i];
                strides[i] = 0;
                continue;
              }
            int64_t cur = x->sizes[xi];
            if (want[i] == -1)
              want[i] = cur;
            if (cur != want[i] && cur != 1)
              return fx_op_error (call, FX_ERR_INVALID,
                                  "The expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton dimension %d.  Target sizes: [...].  Tensor sizes: [...]",
                                  (long long) want[i], (long long) cur, i);
            sizes[i] = want[i];
            strides[i] = cur == want[i] ? x->strides[xi] : 0;
          }
        return set_view (call, 0, x, n, sizes, strides, x->offset);
      }
    case FX_OP_UNSQUEEZE:
      d = call->args[1].u.i;
      if (d < -(x->ndim + 1) || d > x->ndim)
        return fx_op_error (call, FX_ERR_INVALID, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                            -(x->ndim + 1), x->ndim, (long long) d);
      if (d < 0)
        d += x->ndim + 1;
      if (x->ndim + 1 > FX_TENSOR_MAX_DIMS)
        return fx_op_error (call, FX_ERR_UNSUPPORTED, "more than %d dims", FX_TENSOR_MAX_DIMS);
      for (int i = x->ndim; i > d; i--)
        {
          sizes[i] = x->sizes[i - 1];
          strides[i] = x->strides[i - 1];
        }
      sizes[d] = 1;
      strides[d] = d < x->ndim ? x->sizes[d] * x->strides[d] : 1;
      return set_view (call, 0, x, x->ndim + 1, sizes, strides, x->offset);
    case FX_OP_SQUEEZE: case FX_OP_SQUEEZE_DIM: case FX_OP_SQUEEZE_DIMS:
      {
        bool drop[FX_TENSOR_MAX_DIMS] = { false };
        if (call->op->id == FX_OP_SQUEEZE)
          for (int i = 0; i < x->ndim; i++)
            drop[i] = x->sizes[i] == 1;
        else
          {
            int64_t ds[FX_TENSOR_MAX_DIMS];
            int n = call->op->id == FX_OP_SQUEEZE_DIM ? 1 : fx_value_as_int_list (&call->args[1], ds, FX_TENSOR_MAX_DIMS);
            if (call->op->id == FX_OP_SQUEEZE_DIM)
              ds[0] = call->args[1].u.i;
            for (int i = 0; i < n; i++)
              {
                if (!fx_norm_dim (call, &ds[i], x->ndim))
                  return FX_ERR_INVALID;
                if (x->ndim > 0 && x->sizes[ds[i]] == 1)
                  drop[ds[i]] = true;
              }
          }
        int m = 0;
        for (int i = 0; i < x->ndim; i++)
          if (!drop[i])
            {
              sizes[m] = x->sizes[i];
              strides[m] = x->strides[i];
              m++;
            }
        return set_view (call, 0, x, m, sizes, strides, x->offset);
      }
    case FX_OP_SLICE_TENSOR:
      {
        d = call->args[1].u.i;
        if (!fx_norm_dim (call, &d, x->ndim))
          return FX_ERR_INVALID;
        if (x->ndim == 0)
          return fx_op_error (call, FX_ERR_INVALID, "slice() cannot be applied to a 0-dim tensor.");
        int64_t start = 0;
        if (slice_range (call, &call->args[2], x->sizes[d], &start, &sizes[d]) != FX_OK)
          return FX_ERR_INVALID;
        strides[d] = x->strides[d] * call->args[4].u.i;
        return set_view (call, 0, x, nd, sizes, strides, x->offset + start * x->strides[d]);
      }
    case FX_OP_SELECT_INT:
      {
        d = call->args[1].u.i;
        if (x->ndim == 0)
          return fx_op_error (call, FX_ERR_INVALID, "select() cannot be applied to a 0-dim tensor.");
        if (!fx_norm_dim (call, &d, x->ndim))
          return FX_ERR_INVALID;
        int64_t idx = 0;
        if (select_index (call, call->args[2].u.i, x->sizes[d], d, &idx) != FX_OK)
          return FX_ERR_INVALID;
        int m = drop_dim (x, d, sizes, strides);
        return set_view (call, 0, x, m, sizes, strides, x->offset + idx * x->strides[d]);
      }
    case FX_OP_AS_STRIDED:
      {
        int n = fx_value_as_int_list (&call->args[1], sizes, FX_TENSOR_MAX_DIMS);
        int m = fx_value_as_int_list (&call->args[2], strides, FX_TENSOR_MAX_DIMS);
        if (n != m || n < 0 || n > FX_TENSOR_MAX_DIMS)
          return fx_op_error (call, FX_ERR_INVALID, "mismatch in length of strides and shape");
        int64_t off = call->args[3].kind == FX_VALUE_NONE ? x->offset : call->args[3].u.i;
        for (int i = 0; i < n; i++)
          if (sizes[i] < 0 || strides[i] < 0)
            return fx_op_error (call, FX_ERR_INVALID, "as_strided: negative sizes or strides are not supported");
        st = set_view (call, 0, x, n, sizes, strides, off);
        if (st == FX_OK && !fx_tensor_check_bounds (call->outs[0].u.t))
          return fx_op_error (call, FX_ERR_INVALID,
                              "setStorage: sizes, strides and storage offset go out of bounds of the storage");
        return st;
      }
    case FX_OP_ALIAS: case FX_OP_DETACH:
      return set_view (call, 0, x, nd, sizes, strides, x->offset);
    case FX_OP_FLATTEN:
      {
        int64_t s0 = call->args[1].u.i, e0 = call->args[2].u.i;
        if (x->ndim == 0)
          {
            int64_t one = 1;
            int64_t st1 = 1;
            return set_view (call, 0, x, 1, &one, &st1, x->offset);
          }
        if (!fx_norm_dim (call, &s0, x->ndim) || !fx_norm_dim (call, &e0, x->ndim))
          return FX_ERR_INVALID;
        if (s0 > e0)
          return fx_op_error (call, FX_ERR_INVALID, "flatten() has invalid args: start_dim cannot come after end_dim");
        int m = 0;
        for (int i = 0; i < x->ndim; i++)
          {
            if (i > s0 && i <= e0)
              {
                sizes[m - 1] *= x->sizes[i];
                continue;
              }
            sizes[m++] = x->sizes[i];
          }
        return view_or_copy (call, x, m, sizes, strides);
      }
    case FX_OP_SPLIT_TENSOR: case FX_OP_SPLIT_WITH_SIZES: case FX_OP_UNBIND_INT: case FX_OP_CHUNK:
      {
        int64_t lens[64];
        int n = 0;
        d = call->args[call->op->id == FX_OP_UNBIND_INT ? 1 : 2].u.i;
        if (!fx_norm_dim (call, &d, x->ndim))
          return FX_ERR_INVALID;
        int64_t len = x->ndim ? x->sizes[d] : 0;
        if (call->op->id == FX_OP_SPLIT_WITH_SIZES)
          {
            n = fx_value_as_int_list (&call->args[1], lens, 64);
            int64_t tot = 0;
            for (int i = 0; i < n; i++)
              if (lens[i] < 0 || !fx_size_add (tot, lens[i], &tot))
                return fx_op_error (call, FX_ERR_INVALID, "split_with_sizes: split size %lld is negative or overflows",
                                    (long long) lens[i]);
            if (n < 0 || n > 64 || tot != len)
              return fx_op_error (call, FX_ERR_INVALID,
                                  "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at dimension %lld), but got split_sizes summing to %lld",
                                  (long long) len, (long long) d, (long long) tot);
          }
        else if (call->op->id == FX_OP_UNBIND_INT)
          {
            if (len > 64)
              return fx_op_error (call, FX_ERR_UNSUPPORTED, "unbind of more than 64 pieces");
            n = (int) len;
            for (int i = 0; i < n; i++)
              lens[i] = 1;
            /* unbind drops the dim: select views */
            fx_value list = fx_value_none ();
            list.kind = FX_VALUE_LIST;
            list.u.seq.items = fx_arena_alloc (call->arena, sizeof (fx_value) * (n ? n : 1));
            list.u.seq.n = (size_t) n;
            int m = drop_dim (x, d, sizes, strides);
            for (int i = 0; i < n; i++)
              list.u.seq.items[i]
                = fx_value_tensor (fx_tensor_as_strided (x, m, sizes, strides, x->offset + i * x->strides[d]));
            call->outs[0] = list;
            call->n_outs = 1;
            return FX_OK;
          }
        else
          {
            int64_t sz = call->args[1].u.i;
            if (call->op->id == FX_OP_CHUNK)
              {
                if (sz <= 0)
                  return fx_op_error (call, FX_ERR_INVALID, "chunk expects `chunks` to be greater than 0");
                sz = (len + sz - 1) / sz;
              }
            if (sz <= 0 && len > 0)
              return fx_op_error (call, FX_ERR_INVALID, "split expects split_size be non-negative");
            n = sz > 0 ? (int) ((len + sz - 1) / sz) : 1;
            if (len == 0)
              n = 1;
            if (n > 64)
              return fx_op_error (call, FX_ERR_UNSUPPORTED, "split into more than 64 pieces");
            for (int i = 0; i < n; i++)
              lens[i] = (i + 1) * sz <= len ? sz : len - i * sz;
          }
        return split_views (call, x, d, lens, n);
      }
    default:
      return fx_op_error (call, FX_ERR_UNSUPPORTED, "not a view op");
    }
}

fx_status
fx_meta_sym_size (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  if (!fx_norm_dim (call, &call->args[1].u.i, x->ndim))
    return FX_ERR_INVALID;
  call->outs[0] = fx_value_int (x->sizes[call->args[1].u.i]);
  call->n_outs = 1;
  return FX_OK;
}

/* _operator.add/sub/mul/floordiv on SymInts: Python's int arithmetic (floor division rounds toward -inf) */
fx_status
fx_meta_sym_arith (fx_op_call *call)
{
  int64_t a = fx_value_as_i64 (&call->args[0]), b = fx_value_as_i64 (&call->args[1]), r = 0;
  switch ((int) call->op->id)
    {
    case FX_OP_SYM_ADD: r = a + b; break;
    case FX_OP_SYM_SUB: r = a - b; break;
    case FX_OP_SYM_MUL: r = a * b; break;
    default:
      if (b == 0)
        return fx_op_error (call, FX_ERR_INVALID, "integer division or modulo by zero");
      r = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
      break;
    }
  call->outs[0] = fx_value_int (r);
  call->n_outs = 1;
  return FX_OK;
}

/* ---------------------------------------------------------------- cat / stack */

fx_status
fx_meta_cat (fx_op_call *call)
{
  fx_value *list = &call->args[0];
  bool stack = call->op->id == FX_OP_STACK;
  size_t n = list->u.seq.n;
  if (n == 0)
    return fx_op_error (call, FX_ERR_INVALID, "expected a non-empty list of Tensors");
  const fx_tensor *ref = NULL;
  fx_type_promo p;
  fx_type_promo_init (&p);
  for (size_t i = 0; i < n; i++)
    {
      if (list->u.seq.items[i].kind != FX_VALUE_TENSOR)
        return fx_op_error (call, FX_ERR_INVALID, "expected a list of Tensors (item %zu is not one)", i);
      const fx_tensor *t = list->u.seq.items[i].u.t;
      p.dim_result = fx_promote_types (p.dim_result, t->dtype);
      /* legacy: 1-D empty tensors are skipped by cat */
      if (!stack && t->ndim == 1 && t->sizes[0] == 0)
        continue;
      if (ref == NULL)
        ref = t;
    }
  if (ref == NULL)
    ref = list->u.seq.items[0].u.t;
  int nd = ref->ndim + (stack ? 1 : 0);
  if (nd > FX_TENSOR_MAX_DIMS)
    return fx_op_error (call, FX_ERR_UNSUPPORTED, "more than %d dims", FX_TENSOR_MAX_DIMS);
  int64_t d = call->args[1].u.i;
  if (!fx_norm_dim (call, &d, nd))
    return FX_ERR_INVALID;
  if (nd == 0)
    return fx_op_error (call, FX_ERR_INVALID, "zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  if (stack)
    {
      for (int i = 0, k = 0; i < nd; i++)
        sizes[i] = i == d ? (int64_t) n : ref->sizes[k++];
    }
  else
    {
      memcpy (sizes, ref->sizes, sizeof (int64_t) * ref->ndim);
      sizes[d] = 0;
    }
  for (size_t i = 0; i < n; i++)
    {
      const fx_tensor *t = list->u.seq.items[i].u.t;
      if (!stack && t->ndim == 1 && t->sizes[0] == 0 && ref->ndim != 1)
        continue;
      if (t->ndim != ref->ndim)
        return fx_op_error (call, FX_ERR_INVALID, "Tensors must have same number of dimensions: got %d and %d",
                            ref->ndim, t->ndim);
      for (int k = 0; k < t->ndim; k++)
        if ((stack || k != d) && t->sizes[k] != ref->sizes[k])
          return fx_op_error (call, FX_ERR_INVALID,
                              "Sizes of tensors must match except in dimension %lld. Expected size %lld but got size %lld for tensor number %zu in the list.",
                              (long long) d, (long long) ref->sizes[k], (long long) t->sizes[k], i);
      if (!stack && !fx_size_add (sizes[d], t->sizes[d], &sizes[d]))
        return fx_op_error (call, FX_ERR_INVALID, "the concatenated size of dimension %lld overflows a 64-bit size",
                            (long long) d);
    }
  fx_out_meta (call, 0, p.dim_result, nd, sizes);
  return FX_OK;
}

fx_status
fx_kernel_cat (fx_op_call *call)
{
  fx_value *list = &call->args[0];
  bool stack = call->op->id == FX_OP_STACK;
  fx_tensor *o = call->outs[0].u.t;
  int64_t d = call->args[1].u.i;
  fx_norm_dim (call, &d, o->ndim);
  int64_t start = 0;
  for (size_t i = 0; i < list->u.seq.n; i++)
    {
      fx_tensor *t = list->u.seq.items[i].u.t;
      if (!stack && t->ndim == 1 && t->sizes[0] == 0 && o->ndim != 1)
        continue;
      int64_t sizes[FX_TENSOR_MAX_DIMS];
      memcpy (sizes, o->sizes, sizeof sizes);
      sizes[d] = stack ? 1 : t->sizes[d];
      fx_tensor *dst = fx_tensor_as_strided (o, o->ndim, sizes, o->strides, o->offset + start * o->strides[d]);
      fx_tensor *src = t;
      fx_tensor *tmp = NULL;
      if (stack)
        {
          int64_t ss[FX_TENSOR_MAX_DIMS], st[FX_TENSOR_MAX_DIMS];
          for (int k = 0, m = 0; k < o->ndim; k++)
            {
              if (k == d)
                {
                  ss[k] = 1;
                  st[k] = 0;
                }
              else
                {
                  ss[k] = t->sizes[m];
                  st[k] = t->strides[m];
                  m++;
                }
            }
          tmp = fx_tensor_as_strided (t, o->ndim, ss, st, t->offset);
          src = tmp;
        }
      fx_status s = fx_tensor_copy_into (dst, src, call->diag);
      fx_tensor_unref (dst);
      fx_tensor_unref (tmp);
      if (s != FX_OK)
        return s;
      start += stack ? 1 : t->sizes[d];
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- pad, flip, tril/triu */

fx_status
fx_meta_pad (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  int64_t pad[2 * FX_TENSOR_MAX_DIMS];
  int n = fx_value_as_int_list (&call->args[1], pad, 2 * FX_TENSOR_MAX_DIMS);
  if (n < 0 || n % 2 != 0 || n / 2 > x->ndim)
    return fx_op_error (call, FX_ERR_INVALID,
                        "Length of pad must be even but instead it equals %d (and at most twice the number of dims)", n);
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  memcpy (sizes, x->sizes, sizeof sizes);
  for (int i = 0; i < n / 2; i++)
    {
      int d = x->ndim - 1 - i;
      if (!fx_size_add (sizes[d], pad[2 * i], &sizes[d]) || !fx_size_add (sizes[d], pad[2 * i + 1], &sizes[d]))
        return fx_op_error (call, FX_ERR_INVALID, "padding %lld and %lld of dimension %d overflow a 64-bit size",
                            (long long) pad[2 * i], (long long) pad[2 * i + 1], d);
      if (sizes[d] < 0)
        return fx_op_error (call, FX_ERR_INVALID,
                            "The input size %lld, plus negative padding %lld and %lld resulted in a negative output size, which is invalid. Check dimension %d of your input.",
                            (long long) x->sizes[d], (long long) pad[2 * i], (long long) pad[2 * i + 1], d);
    }
  fx_out_meta (call, 0, x->dtype, x->ndim, sizes);
  return FX_OK;
}

fx_status
fx_kernel_pad (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *o = call->outs[0].u.t;
  int64_t pad[2 * FX_TENSOR_MAX_DIMS];
  int n = fx_value_as_int_list (&call->args[1], pad, 2 * FX_TENSOR_MAX_DIMS);
  fx_tensor_fill_f64 (o, fx_value_as_f64 (&call->args[2]));
  /* copy the overlapping region: negative pads crop the input */
  int64_t osz[FX_TENSOR_MAX_DIMS], ooff = o->offset;
  int64_t isz[FX_TENSOR_MAX_DIMS], ioff = x->offset;
  memcpy (osz, o->sizes, sizeof osz);
  memcpy (isz, x->sizes, sizeof isz);
  for (int i = 0; i < n / 2; i++)
    {
      int d = x->ndim - 1 - i;
      int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
      int64_t in_start = lo < 0 ? -lo : 0, out_start = lo > 0 ? lo : 0;
      int64_t len = x->sizes[d] - in_start - (hi < 0 ? -hi : 0);
      if (len < 0)
        len = 0;
      ioff += in_start * x->strides[d];
      ooff += out_start * o->strides[d];
      isz[d] = osz[d] = len;
    }
  fx_tensor *dst = fx_tensor_as_strided (o, o->ndim, osz, o->strides, ooff);
  fx_tensor *src = fx_tensor_as_strided (x, x->ndim, isz, x->strides, ioff);
  fx_status st = fx_tensor_numel (dst) ? fx_tensor_copy_into (dst, src, call->diag) : FX_OK;
  fx_tensor_unref (dst);
  fx_tensor_unref (src);
  return st;
}

/* flip's dims (argument 1) into ds, normalized against x; -1 when one is out of range (the error is set). */
static int
flip_dims (fx_op_call *call, const fx_tensor *x, int64_t ds[FX_TENSOR_MAX_DIMS])
{
  int n = fx_value_as_int_list (&call->args[1], ds, FX_TENSOR_MAX_DIMS);
  for (int i = 0; i < n; i++)
    if (!fx_norm_dim (call, &ds[i], x->ndim))
      return -1;
  return n;
}

fx_status
fx_meta_flip (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  int64_t ds[FX_TENSOR_MAX_DIMS];
  if (flip_dims (call, x, ds) < 0)
    return FX_ERR_INVALID;
  fx_out_meta (call, 0, x->dtype, x->ndim, x->sizes);
  return FX_OK;
}

fx_status
fx_kernel_flip (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  int64_t ds[FX_TENSOR_MAX_DIMS];
  int n = flip_dims (call, x, ds); /* the meta function has checked them */
  int64_t strides[FX_TENSOR_MAX_DIMS];
  for (int k = 0; k < x->ndim; k++)
    strides[k] = x->strides[k];
  int64_t off = x->offset;
  for (int i = 0; i < n; i++)
    {
      if (x->sizes[ds[i]] > 0)
        off += (x->sizes[ds[i]] - 1) * x->strides[ds[i]];
      strides[ds[i]] = -x->strides[ds[i]];
    }
  fx_tensor *v = fx_tensor_as_strided (x, x->ndim, x->sizes, strides, off);
  fx_status st = fx_tensor_copy_into (call->outs[0].u.t, v, call->diag);
  fx_tensor_unref (v);
  return st;
}

fx_status
fx_kernel_tri (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *o = call->outs[0].u.t;
  if (x->ndim < 2)
    return fx_op_error (call, FX_ERR_INVALID, "tril/triu: input tensor must have at least 2 dimensions");
  int64_t k = call->args[1].u.i;
  bool lower = call->op->id == FX_OP_TRIL;
  fx_status st = fx_tensor_copy_into (o, x, call->diag);
  if (st != FX_OK)
    return st;
  int64_t r = x->sizes[x->ndim - 2], c = x->sizes[x->ndim - 1];
  int64_t n = fx_tensor_numel (x);
  for (int64_t i = 0; i < n; i++)
    {
      int64_t col = i % c, row = (i / c) % r;
      bool keep = lower ? col - row <= k : col - row >= k;
      if (!keep)
        fx_tensor_set_f64 (o, i, 0.0);
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- indexing */

fx_status
fx_meta_indexing (fx_op_call *call)
{
  fx_op_id id = call->op->id;
  fx_tensor *x = fx_arg_tensor (call, 0);
  if (id == FX_OP_EMBEDDING)
    {
      fx_tensor *idx = fx_arg_tensor (call, 1);
      if (x->ndim != 2)
        return fx_op_error (call, FX_ERR_INVALID, "'weight' must be 2-D");
      if (!fx_dtype_is_integral (idx->dtype, false))
        return fx_op_error (call, FX_ERR_INVALID,
                            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got %s instead",
                            fx_dtype_c10_name (idx->dtype));
      int64_t sizes[FX_TENSOR_MAX_DIMS];
      if (idx->ndim + 1 > FX_TENSOR_MAX_DIMS)
        return fx_op_error (call, FX_ERR_UNSUPPORTED, "too many dims");
      memcpy (sizes, idx->sizes, sizeof (int64_t) * idx->ndim);
      sizes[idx->ndim] = x->sizes[1];
      fx_out_meta (call, 0, x->dtype, idx->ndim + 1, sizes);
      return FX_OK;
    }
  int64_t d = call->args[1].u.i;
  if (!fx_norm_dim (call, &d, x->ndim))
    return FX_ERR_INVALID;
  fx_tensor *idx = fx_arg_tensor (call, 2);
  if (!fx_dtype_is_integral (idx->dtype, false))
    return fx_op_error (call, FX_ERR_INVALID, "%s(): Expected dtype int64 for index",
                        id == FX_OP_GATHER ? "gather" : "index_select");
  if (id == FX_OP_GATHER)
    {
      if (idx->ndim != x->ndim && !(x->ndim == 0 && idx->ndim <= 1))
        return fx_op_error (call, FX_ERR_INVALID, "Index tensor must have the same number of dimensions as input tensor");
      for (int k = 0; k < idx->ndim; k++)
        if (k != d && idx->sizes[k] > x->sizes[k])
          return fx_op_error (call, FX_ERR_INVALID,
                              "Size does not match at dimension %d expected index [...] to be smaller than self [...] apart from dimension %lld",
                              k, (long long) d);
      fx_out_meta (call, 0, x->dtype, idx->ndim, idx->sizes);
      return FX_OK;
    }
  if (idx->ndim > 1)
    return fx_op_error (call, FX_ERR_INVALID, "index_select(): Index is supposed to be a vector");
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  memcpy (sizes, x->sizes, sizeof sizes);
  if (x->ndim)
    sizes[d] = fx_tensor_numel (idx);
  fx_out_meta (call, 0, x->dtype, x->ndim, sizes);
  return FX_OK;
}

/* Rows [begin, end) of a contiguous index_select or last-dim gather whose indices were checked: each output row is
   nj blocks of `inner` elements, block j from self's row at index idx[j] (index_select) or idx[row, j] (gather). */
typedef struct
{
  const char *xs;
  char *os;
  const fx_tensor *idx;
  bool per_row;
  int64_t nj, inner, x_row;
  size_t isz;
} take_job;

static void
take_rows (int64_t begin, int64_t end, void *ctx)
{
  const take_job *t = ctx;
  size_t block = (size_t) t->inner * t->isz;
  for (int64_t r = begin; r < end; r++)
    for (int64_t j = 0; j < t->nj; j++)
      {
        int64_t k = fx_tensor_get_i64 (t->idx, t->per_row ? r * t->nj + j : j);
        memcpy (t->os + (r * t->nj + j) * t->inner * (int64_t) t->isz,
                t->xs + (r * t->x_row + k * t->inner) * (int64_t) t->isz, block);
      }
}

/* An index outside [0, len) of dim d: neither op wraps a negative one (eager's texts). */
static fx_status
index_error (fx_op_call *call, int64_t k, int64_t d, int64_t len)
{
  if (call->op->id == FX_OP_INDEX_SELECT)
    return fx_op_error (call, FX_ERR_INVALID, "index out of range in self (index %lld, dimension %lld of size %lld)",
                        (long long) k, (long long) d, (long long) len);
  return fx_op_error (call, FX_ERR_INVALID, "index %lld is out of bounds for dimension %lld with size %lld",
                      (long long) k, (long long) d, (long long) len);
}

fx_status
fx_kernel_indexing (fx_op_call *call)
{
  fx_op_id id = call->op->id;
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *o = call->outs[0].u.t;
  size_t isz = fx_dtype_size (x->dtype);
  if (id == FX_OP_EMBEDDING)
    {
      fx_tensor *idx = fx_arg_tensor (call, 1);
      int64_t n = fx_tensor_numel (idx), dim = x->sizes[1], rows = x->sizes[0];
      /* contiguous weight and output: a row is one copy */
      bool rows_whole = fx_tensor_is_contiguous (x) && fx_tensor_is_contiguous (o);
      for (int64_t i = 0; i < n; i++)
        {
          int64_t r = fx_tensor_get_i64 (idx, i);
          if (r < 0 || r >= rows)
            return fx_op_error (call, FX_ERR_INVALID, "index out of range in self (index %lld, %lld rows)",
                                (long long) r, (long long) rows);
          if (rows_whole)
            {
              memcpy ((char *) o->storage->data + (o->offset + i * dim) * (int64_t) isz,
                      (const char *) x->storage->data + (x->offset + r * dim) * (int64_t) isz, (size_t) (dim * isz));
              continue;
            }
          for (int64_t c = 0; c < dim; c++)
            memcpy (fx_tensor_elem_ptr (o, i * dim + c), fx_tensor_elem_ptr (x, r * dim + c), isz);
        }
      return FX_OK;
    }
  int64_t d = call->args[1].u.i;
  fx_norm_dim (call, &d, x->ndim);
  fx_tensor *idx = fx_arg_tensor (call, 2);
  int64_t n = fx_tensor_numel (o);
  int64_t len = x->ndim ? x->sizes[d] : 1;
  /* Contiguous fast paths (the general walk below unravels every element: cross entropy's gather of 8192 targets
     took 1.8 ms): index_select copies blocks of the dims after d, a gather along a row's last dim reads one element. */
  if (x->ndim >= 1 && fx_tensor_is_contiguous (x) && fx_tensor_is_contiguous (o) && fx_tensor_is_contiguous (idx)
      && (id == FX_OP_INDEX_SELECT || (id == FX_OP_GATHER && d == x->ndim - 1 && idx->ndim == x->ndim)))
    {
      int64_t outer = 1, inner = 1;
      for (int k = 0; k < d; k++)
        outer *= id == FX_OP_GATHER ? idx->sizes[k] : x->sizes[k];
      for (int k = (int) d + 1; k < x->ndim; k++)
        inner *= x->sizes[k];
      /* a gather's idx may be smaller than self in the leading dims: its row r is self's row r only in 2-D or
         where those dims match */
      bool rows_map = true;
      if (id == FX_OP_GATHER && x->ndim > 2)
        for (int k = 0; k < d; k++)
          rows_map = rows_map && idx->sizes[k] == x->sizes[k];
      if (rows_map)
        {
          int64_t nj = id == FX_OP_GATHER ? idx->sizes[d] : fx_tensor_numel (idx);
          /* every index checked first (a contiguous read), then the copies on the engine's threads: a gather of
             one element per row misses the cache on each, and more threads keep more misses in flight */
          int64_t n_idx = fx_tensor_numel (idx);
          for (int64_t q = 0; q < n_idx; q++)
            {
              int64_t k = fx_tensor_get_i64 (idx, q);
              if (k < 0 || k >= len)
                return index_error (call, k, d, len);
            }
          take_job j = { (const char *) fx_tensor_data (x), (char *) fx_tensor_data (o), idx, id == FX_OP_GATHER,
                         nj, inner, len * inner, isz };
          /* rows of about 64 KiB of copies or 256 indices per chunk, whichever is more */
          int64_t per_row = nj * inner * (int64_t) isz;
          int64_t grain = per_row >= 65536 ? 1 : (65536 / (per_row ? per_row : 1) > 256 ? 256 : 65536 / per_row);
          fx_parallel_for (outer, grain, take_rows, &j);
          return FX_OK;
        }
    }
  for (int64_t i = 0; i < n; i++)
    {
      /* decompose the output index; replace the coordinate along d */
      int64_t coord[FX_TENSOR_MAX_DIMS];
      fx_unravel (o->sizes, o->ndim, i, coord);
      int64_t j = id == FX_OP_GATHER ? fx_tensor_get_i64 (idx, i) : fx_tensor_get_i64 (idx, x->ndim ? coord[d] : 0);
      if (j < 0 || j >= len)
        return index_error (call, j, d, len);
      int64_t off = x->offset;
      for (int k = 0; k < x->ndim; k++)
        off += (k == d ? j : coord[k]) * x->strides[k];
      memcpy (fx_tensor_elem_ptr (o, i), (char *) x->storage->data + off * (int64_t) isz, isz);
    }
  return FX_OK;
}

/* scatter.value / scatter.src: a copy of self where out[..., index[i], ...] (along dim) = value or src[i] for every
   position i of index (PyTorch's nll_loss_backward decomposes into it). */
fx_status
fx_meta_scatter (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  if (!fx_norm_dim (call, &call->args[1].u.i, x->ndim))
    return FX_ERR_INVALID;
  int64_t d = call->args[1].u.i;
  fx_tensor *idx = fx_arg_tensor (call, 2);
  if (!fx_dtype_is_integral (idx->dtype, false))
    return fx_op_error (call, FX_ERR_INVALID, "scatter(): Expected dtype int64 for index");
  if (idx->ndim != x->ndim && !(x->ndim == 0 && idx->ndim <= 1))
    return fx_op_error (call, FX_ERR_INVALID, "Index tensor must have the same number of dimensions as self tensor");
  const fx_tensor *src = call->op->id == FX_OP_SCATTER_SRC ? fx_arg_tensor (call, 3) : NULL;
  for (int k = 0; k < idx->ndim; k++)
    if ((k != d && idx->sizes[k] > x->sizes[k]) || (src && (src->ndim != idx->ndim || idx->sizes[k] > src->sizes[k])))
      return fx_op_error (call, FX_ERR_INVALID,
                          "Expected index [...] to be smaller than self [...] apart from dimension %lld and to be "
                          "smaller size than src [...]", (long long) d);
  fx_out_meta (call, 0, x->dtype, x->ndim, x->sizes);
  return FX_OK;
}

fx_status
fx_kernel_scatter (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *o = call->outs[0].u.t;
  fx_status st = fx_tensor_copy_into (o, x, call->diag);
  if (st != FX_OK)
    return st;
  int64_t d = call->args[1].u.i; /* normalised by fx_meta_scatter */
  fx_tensor *idx = fx_arg_tensor (call, 2);
  const fx_tensor *src = call->op->id == FX_OP_SCATTER_SRC ? fx_arg_tensor (call, 3) : NULL;
  double value = src ? 0 : fx_value_as_f64 (&call->args[3]);
  int64_t n = fx_tensor_numel (idx), len = x->ndim ? x->sizes[d] : 1;
  for (int64_t i = 0; i < n; i++)
    {
      int64_t coord[FX_TENSOR_MAX_DIMS], src_flat = 0, src_stride = 1;
      fx_unravel (idx->sizes, idx->ndim, i, coord);
      int64_t j = fx_tensor_get_i64 (idx, i);
      if (j < 0 || j >= len)   /* as gather, and unlike index_select, no negative index */
        return fx_op_error (call, FX_ERR_INVALID, "index %lld is out of bounds for dimension %lld with size %lld",
                            (long long) j, (long long) d, (long long) len);
      int64_t out_flat = 0, out_stride = 1;
      for (int k = x->ndim - 1; k >= 0; k--)
        {
          out_flat += (k == d ? j : coord[k]) * out_stride;
          out_stride *= x->sizes[k];
        }
      if (src)
        {
          for (int k = src->ndim - 1; k >= 0; k--)
            {
              src_flat += coord[k] * src_stride;
              src_stride *= src->sizes[k];
            }
          fx_tensor_set_f64 (o, out_flat, fx_tensor_get_f64 (src, src_flat));
        }
      else
        fx_tensor_set_f64 (o, out_flat, value);
    }
  return FX_OK;
}

/* index.Tensor: advanced indexing with index tensors on leading consecutive dims (None entries keep a dim). */
fx_status
fx_meta_index_tensor (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_value *list = &call->args[1];
  size_t n = list->u.seq.n;
  if (n > (size_t) x->ndim)
    return fx_op_error (call, FX_ERR_INVALID, "too many indices for tensor of dimension %d (got %zu)", x->ndim, n);
  int first = -1, last = -1;
  int bnd = 0;
  int64_t bshape[FX_TENSOR_MAX_DIMS];
  for (size_t i = 0; i < n; i++)
    {
      fx_value *v = &list->u.seq.items[i];
      if (v->kind == FX_VALUE_NONE)
        continue;
      if (v->kind != FX_VALUE_TENSOR)
        return fx_op_error (call, FX_ERR_INVALID, "indices must be tensors or None");
      if (v->u.t->dtype == FX_DTYPE_BOOL || v->u.t->dtype == FX_DTYPE_U8)
        return fx_op_error (call, FX_ERR_UNSUPPORTED, "boolean mask indexing has a data-dependent shape; not supported");
      if (first >= 0 && last != (int) i - 1)
        return fx_op_error (call, FX_ERR_UNSUPPORTED, "non-adjacent advanced indices are not supported");
      if (first < 0)
        first = (int) i;
      last = (int) i;
      int64_t tmp[FX_TENSOR_MAX_DIMS];
      int tn;
      fx_diag dd;
      fx_diag_clear (&dd);
      if (!fx_broadcast_shapes (bnd, bshape, v->u.t->ndim, v->u.t->sizes, &tn, tmp, &dd))
        return fx_op_error (call, FX_ERR_INVALID, "shape mismatch: indexing tensors could not be broadcast together");
      memcpy (bshape, tmp, sizeof (int64_t) * tn);
      bnd = tn;
    }
  if (first < 0)
    return fx_op_error (call, FX_ERR_INVALID, "at least one index tensor is required");
  int64_t sizes[FX_TENSOR_MAX_DIMS];
  int m = 0;
  for (int k = 0; k < first; k++)
    sizes[m++] = x->sizes[k];
  for (int k = 0; k < bnd; k++)
    sizes[m++] = bshape[k];
  for (int k = last + 1; k < x->ndim; k++)
    sizes[m++] = x->sizes[k];
  if (m > FX_TENSOR_MAX_DIMS)
    return fx_op_error (call, FX_ERR_UNSUPPORTED, "too many dims");
  fx_out_meta (call, 0, x->dtype, m, sizes);
  return FX_OK;
}

fx_status
fx_kernel_index_tensor (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  fx_tensor *o = call->outs[0].u.t;
  fx_value *list = &call->args[1];
  int first = -1, last = -1;
  for (size_t i = 0; i < list->u.seq.n; i++)
    if (list->u.seq.items[i].kind == FX_VALUE_TENSOR)
      {
        if (first < 0)
          first = (int) i;
        last = (int) i;
      }
  int bnd = o->ndim - first - (x->ndim - 1 - last);
  size_t isz = fx_dtype_size (x->dtype);
  int64_t n = fx_tensor_numel (o);
  for (int64_t i = 0; i < n; i++)
    {
      int64_t coord[FX_TENSOR_MAX_DIMS];
      fx_unravel (o->sizes, o->ndim, i, coord);
      int64_t off = x->offset;
      for (int k = 0; k < first; k++)
        off += coord[k] * x->strides[k];
      for (int k = first; k <= last; k++)
        {
          fx_tensor *it = list->u.seq.items[k].u.t;
          /* broadcast index position */
          int64_t flat = 0, mul = 1;
          for (int q = it->ndim - 1; q >= 0; q--)
            {
              int64_t c = coord[first + bnd - it->ndim + q];
              if (it->sizes[q] == 1)
                c = 0;
              flat += c * mul;
              mul *= it->sizes[q];
            }
          int64_t j = fx_tensor_get_i64 (it, flat);
          if (j < -x->sizes[k] || j >= x->sizes[k])
            return fx_op_error (call, FX_ERR_INVALID, "index %lld is out of bounds for dimension %d with size %lld",
                                (long long) j, k, (long long) x->sizes[k]);
          if (j < 0)
            j += x->sizes[k];
          off += j * x->strides[k];
        }
      for (int k = last + 1; k < x->ndim; k++)
        off += coord[first + bnd + (k - last - 1)] * x->strides[k];
      memcpy (fx_tensor_elem_ptr (o, i), (char *) x->storage->data + off * (int64_t) isz, isz);
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- factories and random */

static bool
is_like (fx_op_id id)
{
  return id == FX_OP_FULL_LIKE || id == FX_OP_ZEROS_LIKE || id == FX_OP_ONES_LIKE || id == FX_OP_EMPTY_LIKE
         || id == FX_OP_RAND_LIKE || id == FX_OP_RANDN_LIKE;
}

fx_status
fx_meta_factory (fx_op_call *call)
{
  fx_op_id id = call->op->id;
  const fx_op_schema *s = fx_op_get_schema (id);
  int dtype_i = -1;
  for (int i = 0; i < s->n_args; i++)
    if (strcmp (s->args[i].name, "dtype") == 0)
      dtype_i = i;
  int64_t sizes[FX_TENSOR_MAX_DIMS] = { 0 };
  int nd = 0;
  fx_dtype dt = FX_DTYPE_F32;
  if (is_like (id))
    {
      fx_tensor *x = fx_arg_tensor (call, 0);
      nd = x->ndim;
      memcpy (sizes, x->sizes, sizeof sizes);
      dt = x->dtype;
    }
  else if (id == FX_OP_ARANGE || id == FX_OP_ARANGE_START || id == FX_OP_ARANGE_START_STEP)
    {
      double start = 0, end, step = 1;
      bool any_float = false;
      if (id == FX_OP_ARANGE)
        end = fx_value_as_f64 (&call->args[0]);
      else
        {
          start = fx_value_as_f64 (&call->args[0]);
          end = fx_value_as_f64 (&call->args[1]);
          if (id == FX_OP_ARANGE_START_STEP)
            step = fx_value_as_f64 (&call->args[2]);
        }
      int nscal = id == FX_OP_ARANGE ? 1 : id == FX_OP_ARANGE_START ? 2 : 3;
      for (int i = 0; i < nscal; i++)
        any_float |= call->args[i].kind == FX_VALUE_FLOAT;
      if (step == 0)
        return fx_op_error (call, FX_ERR_INVALID, "step must be nonzero");
      if ((step > 0 && start > end) || (step < 0 && start < end))
        return fx_op_error (call, FX_ERR_INVALID, "upper bound and larger bound inconsistent with step sign");
      nd = 1;
      double len = ceil ((end - start) / step);
      /* a NaN, an infinity or a length past int64 would be undefined to convert */
      if (!(len >= 0 && len < 9.2e18))
        return fx_op_error (call, FX_ERR_INVALID, "arange: the length (%g) is not a valid tensor size", len);
      sizes[0] = (int64_t) len;
      dt = any_float ? FX_DTYPE_F32 : FX_DTYPE_I64;
    }
  else if (id == FX_OP_IOTA)
    {
      nd = 1;
      sizes[0] = call->args[0].u.i;
      dt = call->args[3].u.dtype;
    }
  else if (id == FX_OP_SCALAR_TENSOR)
    {
      nd = 0;
      dt = FX_DTYPE_F32;
    }
  else
    {
      nd = fx_value_as_int_list (&call->args[0], sizes, FX_TENSOR_MAX_DIMS);
      if (nd < 0 || nd > FX_TENSOR_MAX_DIMS)
        return fx_op_error (call, FX_ERR_INVALID, "bad size list");
      for (int i = 0; i < nd; i++)
        if (sizes[i] < 0)
          return fx_op_error (call, FX_ERR_INVALID, "Trying to create tensor with negative dimension %lld: [...]",
                              (long long) sizes[i]);
      if (id == FX_OP_FULL)
        {
          fx_value *fv = &call->args[1];
          dt = fv->kind == FX_VALUE_FLOAT ? FX_DTYPE_F32 : fv->kind == FX_VALUE_BOOL ? FX_DTYPE_BOOL : FX_DTYPE_I64;
        }
    }
  if (dtype_i >= 0 && call->args[dtype_i].kind == FX_VALUE_DTYPE)
    dt = call->args[dtype_i].u.dtype;
  if (!fx_dtype_is_supported (dt))
    return fx_op_error (call, FX_ERR_UNSUPPORTED, "dtype %s is not supported", fx_dtype_name (dt));
  /* a 0-d result (scalar_tensor, a _like of a scalar) has no sizes[0] to look at */
  if (nd < 0 || (nd > 0 && sizes[0] < 0))
    return fx_op_error (call, FX_ERR_INVALID, "negative size");
  if (id == FX_OP_EMPTY_STRIDED)
    {
      int64_t strides[FX_TENSOR_MAX_DIMS];
      int ns = fx_value_as_int_list (&call->args[1], strides, FX_TENSOR_MAX_DIMS);
      if (ns != nd)
        return fx_op_error (call, FX_ERR_INVALID, "mismatch in length of strides and shape");
      call->outs[0] = fx_value_tensor (fx_tensor_new_meta (dt, nd, sizes, strides));
      call->n_outs = 1;
      return FX_OK;
    }
  fx_out_meta (call, 0, dt, nd, sizes);
  return FX_OK;
}

fx_status
fx_kernel_factory (fx_op_call *call)
{
  fx_op_id id = call->op->id;
  fx_tensor *o = call->outs[0].u.t;
  int64_t n = fx_tensor_numel (o);
  switch (id)
    {
    case FX_OP_FULL:
      fx_tensor_fill_f64 (o, fx_value_as_f64 (&call->args[1]));
      if (fx_dtype_is_integral (o->dtype, false))
        for (int64_t i = 0; i < n; i++)
          fx_tensor_set_i64 (o, i, fx_value_as_i64 (&call->args[1]));
      break;
    case FX_OP_FULL_LIKE:
      fx_tensor_fill_f64 (o, fx_value_as_f64 (&call->args[1]));
      break;
    case FX_OP_SCALAR_TENSOR:
      fx_tensor_fill_f64 (o, fx_value_as_f64 (&call->args[0]));
      break;
    case FX_OP_ONES: case FX_OP_ONES_LIKE:
      fx_tensor_fill_f64 (o, 1.0);
      break;
    case FX_OP_ARANGE: case FX_OP_ARANGE_START: case FX_OP_ARANGE_START_STEP:
      {
        double start = id == FX_OP_ARANGE ? 0 : fx_value_as_f64 (&call->args[0]);
        double step = id == FX_OP_ARANGE_START_STEP ? fx_value_as_f64 (&call->args[2]) : 1;
        for (int64_t i = 0; i < n; i++)
          fx_tensor_set_f64 (o, i, start + (double) i * step);
        break;
      }
    case FX_OP_IOTA:
      {
        int64_t start = call->args[1].u.i, step = call->args[2].u.i;
        for (int64_t i = 0; i < n; i++)
          fx_tensor_set_i64 (o, i, start + i * step);
        break;
      }
    default:
      fx_tensor_fill_f64 (o, 0.0); /* zeros, empty: deterministic */
      break;
    }
  return FX_OK;
}

fx_status
fx_kernel_random (fx_op_call *call)
{
  fx_tensor *o = call->outs[0].u.t;
  fx_generator local;
  fx_generator *gen = call->gen;
  if (gen == NULL)
    {
      fx_generator_seed (&local, 0);
      gen = &local;
    }
  if (!fx_dtype_is_floating (o->dtype))
    return fx_op_error (call, FX_ERR_INVALID, "random floats need a floating dtype, got %s", fx_dtype_name (o->dtype));
  if (call->op->id == FX_OP_RAND || call->op->id == FX_OP_RAND_LIKE)
    fx_tensor_fill_uniform (o, gen, 0.0, 1.0);
  else
    fx_tensor_fill_normal (o, gen, 0.0, 1.0);
  return FX_OK;
}

fx_status
fx_meta_dropout (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  double p = fx_value_as_f64 (&call->args[1]);
  if (p < 0 || p > 1)
    return fx_op_error (call, FX_ERR_INVALID, "dropout probability has to be between 0 and 1, but got %g", p);
  fx_out_meta (call, 0, x->dtype, x->ndim, x->sizes);
  fx_out_meta (call, 1, FX_DTYPE_BOOL, x->ndim, x->sizes);
  return FX_OK;
}

fx_status
fx_kernel_dropout (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  double p = fx_value_as_f64 (&call->args[1]);
  bool train = call->args[2].kind != FX_VALUE_BOOL || call->args[2].u.b;
  fx_tensor *o = call->outs[0].u.t, *m = call->outs[1].u.t;
  fx_generator local;
  fx_generator *gen = call->gen;
  if (gen == NULL)
    {
      fx_generator_seed (&local, 0);
      gen = &local;
    }
  int64_t n = fx_tensor_numel (x);
  double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  for (int64_t i = 0; i < n; i++)
    {
      bool keep = !train || fx_generator_uniform (gen) >= p;
      fx_tensor_set_i64 (m, i, keep);
      fx_tensor_set_f64 (o, i, keep ? fx_tensor_get_f64 (x, i) * (train ? scale : 1.0) : 0.0);
    }
  return FX_OK;
}

/* ---------------------------------------------------------------- scatters (what a tensor setitem functionalizes to) */

/* The region slice_scatter/select_scatter write: slice(t, dim, start, end, step) or select(t, dim, index) of t,
   as sizes, strides and offset over t's storage. */
static fx_status
scatter_region (fx_op_call *call, const fx_tensor *t, int *nd, int64_t *sizes, int64_t *strides, int64_t *offset)
{
  int64_t d = call->args[2].u.i;
  if (t->ndim == 0)
    return fx_op_error (call, FX_ERR_INVALID, "%s cannot be applied to a 0-dim tensor.",
                        call->op->id == FX_OP_SLICE_SCATTER ? "slice_scatter()" : "select_scatter()");
  if (!fx_norm_dim (call, &d, t->ndim))
    return FX_ERR_INVALID;
  int64_t len = t->sizes[d];
  memcpy (sizes, t->sizes, sizeof (int64_t) * (size_t) t->ndim);
  memcpy (strides, t->strides, sizeof (int64_t) * (size_t) t->ndim);
  if (call->op->id == FX_OP_SELECT_SCATTER)
    {
      int64_t idx = 0;
      if (select_index (call, call->args[3].u.i, len, d, &idx) != FX_OK)
        return FX_ERR_INVALID;
      *offset = t->offset + idx * t->strides[d];
      *nd = drop_dim (t, d, sizes, strides);
      return FX_OK;
    }
  int64_t start = 0;
  if (slice_range (call, &call->args[3], len, &start, &sizes[d]) != FX_OK)
    return FX_ERR_INVALID;
  strides[d] = t->strides[d] * call->args[5].u.i;
  *offset = t->offset + start * t->strides[d];
  *nd = t->ndim;
  return FX_OK;
}

/* slice_scatter / select_scatter: a copy of self with src written into the slice (select) of it; src has exactly
   the region's shape, as in PyTorch. */
fx_status
fx_meta_view_scatter (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0), *src = fx_arg_tensor (call, 1);
  int nd = 0;
  int64_t sizes[FX_TENSOR_MAX_DIMS], strides[FX_TENSOR_MAX_DIMS], off = 0;
  fx_status st = scatter_region (call, x, &nd, sizes, strides, &off);
  if (st != FX_OK)
    return st;
  if (src->ndim != nd || memcmp (src->sizes, sizes, sizeof (int64_t) * (size_t) nd) != 0)
    return fx_op_error (call, FX_ERR_INVALID, "expected src to have a size equal to the slice of self");
  fx_out_meta (call, 0, x->dtype, x->ndim, x->sizes);
  return FX_OK;
}

fx_status
fx_kernel_view_scatter (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0), *src = fx_arg_tensor (call, 1);
  fx_tensor *o = call->outs[0].u.t;
  fx_status st = fx_tensor_copy_into (o, x, call->diag);
  if (st != FX_OK)
    return st;
  int nd = 0;
  int64_t sizes[FX_TENSOR_MAX_DIMS], strides[FX_TENSOR_MAX_DIMS], off = 0;
  st = scatter_region (call, o, &nd, sizes, strides, &off);
  if (st != FX_OK)
    return st;
  fx_tensor *region = fx_tensor_as_strided (o, nd, sizes, strides, off);
  st = fx_tensor_numel (region) ? fx_tensor_copy_into (region, src, call->diag) : FX_OK;
  fx_tensor_unref (region);
  return st;
}

/* index_put's indices as int64 index arrays, one per dim of self they index: a bool (uint8) mask of k dims becomes
   k arrays of its nonzero coordinates, as PyTorch expands it; None keeps a dim. */
typedef struct
{
  int first, last;                          /* the dims of self the indices take (adjacent), -1 when none */
  int bnd;                                  /* their broadcast shape */
  int64_t bshape[FX_TENSOR_MAX_DIMS];
  int nidx;
  int64_t *data[FX_TENSOR_MAX_DIMS];        /* owned; NULL in meta mode */
  const fx_tensor *tensor[FX_TENSOR_MAX_DIMS];   /* an int index tensor as given, or NULL for a mask's array */
  int ndim[FX_TENSOR_MAX_DIMS];
  int64_t sizes[FX_TENSOR_MAX_DIMS][FX_TENSOR_MAX_DIMS];
} put_plan;

static void
put_plan_free (put_plan *p)
{
  for (int i = 0; i < p->nidx; i++)
    free (p->data[i]);
}

static fx_status
put_plan_init (fx_op_call *call, const fx_tensor *x, bool with_data, put_plan *p)
{
  memset (p, 0, sizeof *p);
  p->first = p->last = -1;
  const fx_value *list = &call->args[1];
  int dim = 0;
  for (size_t i = 0; i < list->u.seq.n; i++)
    {
      const fx_value *v = &list->u.seq.items[i];
      if (v->kind == FX_VALUE_NONE)
        {
          dim++;
          continue;
        }
      if (v->kind != FX_VALUE_TENSOR)
        return fx_op_error (call, FX_ERR_INVALID, "indices must be tensors or None");
      const fx_tensor *t = v->u.t;
      bool mask = t->dtype == FX_DTYPE_BOOL || t->dtype == FX_DTYPE_U8;
      if (!mask && !fx_dtype_is_integral (t->dtype, false))
        return fx_op_error (call, FX_ERR_INVALID, "tensors used as indices must be long, int, byte or bool tensors");
      if (mask && t->ndim == 0)
        return fx_op_error (call, FX_ERR_UNSUPPORTED, "a 0-dim mask index is not supported");
      int take = mask ? t->ndim : 1;
      if (dim + take > x->ndim)
        return fx_op_error (call, FX_ERR_INVALID, "too many indices for tensor of dimension %d", x->ndim);
      if (p->first >= 0 && p->last != dim - 1)
        return fx_op_error (call, FX_ERR_UNSUPPORTED, "non-adjacent advanced indices are not supported");
      if (mask)
        for (int k = 0; k < t->ndim; k++)
          if (t->sizes[k] != x->sizes[dim + k])
            return fx_op_error (call, FX_ERR_INVALID,
                                "The shape of the mask [...] at index %d does not match the shape of the indexed "
                                "tensor [...] at index %d", k, dim + k);
      if (p->first < 0)
        p->first = dim;
      p->last = dim + take - 1;
      if (!mask)
        {
          p->tensor[p->nidx] = t;
          p->ndim[p->nidx] = t->ndim;
          memcpy (p->sizes[p->nidx], t->sizes, sizeof (int64_t) * (size_t) t->ndim);
          p->nidx++;
        }
      else
        {
          /* the mask's nonzero coordinates (meta mode: their count is unknown, the shape is not needed) */
          int64_t n = fx_tensor_numel (t), cnt = 0;
          int64_t *cols[FX_TENSOR_MAX_DIMS] = { 0 };
          for (int k = 0; k < take; k++)
            cols[k] = with_data ? malloc (sizeof (int64_t) * (size_t) (n ? n : 1)) : NULL;
          for (int64_t f = 0; with_data && f < n; f++)
            if (fx_tensor_get_i64 (t, f) != 0)
              {
                int64_t coord[FX_TENSOR_MAX_DIMS] = { 0 };
                fx_unravel (t->sizes, t->ndim, f, coord);
                for (int k = 0; k < take; k++)
                  cols[k][cnt] = coord[k];
                cnt++;
              }
          for (int k = 0; k < take; k++)
            {
              p->data[p->nidx] = cols[k];
              p->ndim[p->nidx] = 1;
              p->sizes[p->nidx][0] = cnt;
              p->nidx++;
            }
        }
      dim += take;
    }
  if (p->first < 0)
    return fx_op_error (call, FX_ERR_INVALID, "index_put needs at least one index tensor");
  for (int i = 0; i < p->nidx; i++)
    {
      int64_t tmp[FX_TENSOR_MAX_DIMS];
      int tn;
      fx_diag dd;
      fx_diag_clear (&dd);
      if (!fx_broadcast_shapes (p->bnd, p->bshape, p->ndim[i], p->sizes[i], &tn, tmp, &dd))
        return fx_op_error (call, FX_ERR_INVALID, "shape mismatch: indexing tensors could not be broadcast together");
      memcpy (p->bshape, tmp, sizeof (int64_t) * (size_t) tn);
      p->bnd = tn;
    }
  return FX_OK;
}

fx_status
fx_meta_index_put (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0);
  put_plan p;
  fx_status st = put_plan_init (call, x, false, &p);
  put_plan_free (&p);
  if (st != FX_OK)
    return st;
  fx_out_meta (call, 0, x->dtype, x->ndim, x->sizes);
  return FX_OK;
}

/* index_put: a copy of self where self[indices] = values (values broadcast to the indexed shape), or += with
   accumulate. */
fx_status
fx_kernel_index_put (fx_op_call *call)
{
  fx_tensor *x = fx_arg_tensor (call, 0), *vals = fx_arg_tensor (call, 2);
  fx_tensor *o = call->outs[0].u.t;
  bool accumulate = call->args[3].kind == FX_VALUE_BOOL && call->args[3].u.b;
  fx_status st = fx_tensor_copy_into (o, x, call->diag);
  if (st != FX_OK)
    return st;
  put_plan p;
  st = put_plan_init (call, x, true, &p);
  /* the indexed region's shape: self's dims before the indices, their broadcast shape, self's dims after */
  int64_t rs[FX_TENSOR_MAX_DIMS];
  int rn = 0;
  if (st == FX_OK && p.first + p.bnd + (x->ndim - 1 - p.last) > FX_TENSOR_MAX_DIMS)
    st = fx_op_error (call, FX_ERR_UNSUPPORTED, "too many dims");
  if (st == FX_OK)
    {
      for (int k = 0; k < p.first; k++)
        rs[rn++] = x->sizes[k];
      for (int k = 0; k < p.bnd; k++)
        rs[rn++] = p.bshape[k];
      for (int k = p.last + 1; k < x->ndim; k++)
        rs[rn++] = x->sizes[k];
      int64_t bt[FX_TENSOR_MAX_DIMS];
      int btn;
      if (!fx_broadcast_shapes (rn, rs, vals->ndim, vals->sizes, &btn, bt, call->diag) || btn != rn
          || memcmp (bt, rs, sizeof (int64_t) * (size_t) rn) != 0)
        st = fx_op_error (call, FX_ERR_INVALID, "shape mismatch: value tensor cannot be broadcast to the indexing "
                                                "result");
    }
  int64_t n = 1;
  for (int k = 0; k < rn; k++)
    n *= rs[k];
  for (int64_t i = 0; st == FX_OK && i < n; i++)
    {
      int64_t coord[FX_TENSOR_MAX_DIMS];
      fx_unravel (rs, rn, i, coord);
      int64_t out_coord[FX_TENSOR_MAX_DIMS];
      for (int k = 0; k < p.first; k++)
        out_coord[k] = coord[k];
      for (int j = 0; j < p.nidx; j++)
        {
          int64_t flat = 0, mul = 1;
          for (int q = p.ndim[j] - 1; q >= 0; q--)
            {
              int64_t c = p.sizes[j][q] == 1 ? 0 : coord[p.first + p.bnd - p.ndim[j] + q];
              flat += c * mul;
              mul *= p.sizes[j][q];
            }
          int64_t len = x->sizes[p.first + j];
          int64_t v = p.tensor[j] ? fx_tensor_get_i64 (p.tensor[j], flat) : p.data[j][flat];
          if (v < -len || v >= len)
            {
              st = fx_op_error (call, FX_ERR_INVALID, "index %lld is out of bounds for dimension %d with size %lld",
                                (long long) v, p.first + j, (long long) len);
              break;
            }
          out_coord[p.first + j] = v < 0 ? v + len : v;
        }
      if (st != FX_OK)
        break;
      for (int k = p.last + 1; k < x->ndim; k++)
        out_coord[k] = coord[p.first + p.bnd + (k - p.last - 1)];
      int64_t of = 0, vf = 0, mul = 1;
      for (int k = 0; k < x->ndim; k++)
        of = of * x->sizes[k] + out_coord[k];
      for (int q = vals->ndim - 1; q >= 0; q--)
        {
          int64_t c = vals->sizes[q] == 1 ? 0 : coord[rn - vals->ndim + q];
          vf += c * mul;
          mul *= vals->sizes[q];
        }
      if (!accumulate && vals->dtype == o->dtype)
        memcpy (fx_tensor_elem_ptr (o, of), fx_tensor_elem_ptr (vals, vf), fx_dtype_size (o->dtype));
      else if (fx_dtype_is_integral (o->dtype, true))
        fx_tensor_set_i64 (o, of, (accumulate ? fx_tensor_get_i64 (o, of) : 0) + fx_tensor_get_i64 (vals, vf));
      else
        fx_tensor_set_f64 (o, of, (accumulate ? fx_tensor_get_f64 (o, of) : 0) + fx_tensor_get_f64 (vals, vf));
    }
  put_plan_free (&p);
  return st;
}
