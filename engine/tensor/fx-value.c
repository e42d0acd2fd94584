/* fx-value.c: runtime values (tensors, scalars, lists) exchanged by kernels, the interpreter and backends. */

/* Switches over op ids and dtypes name the handled cases; `default` covers the rest on purpose. */
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "fx/tensor.h"

#include <string.h>

fx_value
fx_value_none (void)
{
  fx_value v;
  memset (&v, 0, sizeof v);
  v.kind = FX_VALUE_NONE;
  return v;
}

fx_value
fx_value_tensor (fx_tensor *t)
{
  fx_value v = fx_value_none ();
  v.kind = FX_VALUE_TENSOR;
  v.u.t = t;
  return v;
}

fx_value
fx_value_int (int64_t i)
{
  fx_value v = fx_value_none ();
  v.kind = FX_VALUE_INT;
  v.u.i = i;
  return v;
}

fx_value
fx_value_float (double f)
{
  fx_value v = fx_value_none ();
  v.kind = FX_VALUE_FLOAT;
  v.u.f = f;
  return v;
}

fx_value
fx_value_bool (bool b)
{
  fx_value v = fx_value_none ();
  v.kind = FX_VALUE_BOOL;
  v.u.b = b;
  return v;
}

fx_value
fx_value_dup (const fx_value *v, fx_arena *arena)
{
  fx_value r = *v;
  switch (v->kind)
    {
    case FX_VALUE_TENSOR:
      fx_tensor_ref (v->u.t);
      break;
    case FX_VALUE_LIST:
    case FX_VALUE_TUPLE:
      r.u.seq.items = fx_arena_alloc (arena, sizeof (fx_value) * (v->u.seq.n ? v->u.seq.n : 1));
      for (size_t i = 0; i < v->u.seq.n; i++)
        r.u.seq.items[i] = fx_value_dup (&v->u.seq.items[i], arena);
      break;
    case FX_VALUE_STR:
      r.u.s = fx_arena_strdup (arena, v->u.s);
      break;
    case FX_VALUE_NONE: case FX_VALUE_INT: case FX_VALUE_FLOAT: case FX_VALUE_BOOL: case FX_VALUE_DTYPE:
    case FX_VALUE_DEVICE: case FX_VALUE_LAYOUT: case FX_VALUE_MEMFMT: case FX_VALUE_KIND_COUNT:
    default:
      break;
    }
  return r;
}

void
fx_value_clear (fx_value *v)
{
  switch (v->kind)
    {
    case FX_VALUE_TENSOR:
      fx_tensor_unref (v->u.t);
      break;
    case FX_VALUE_LIST:
    case FX_VALUE_TUPLE:
      for (size_t i = 0; i < v->u.seq.n; i++)
        fx_value_clear (&v->u.seq.items[i]);
      break;
    case FX_VALUE_NONE: case FX_VALUE_INT: case FX_VALUE_FLOAT: case FX_VALUE_BOOL: case FX_VALUE_STR:
    case FX_VALUE_DTYPE: case FX_VALUE_DEVICE: case FX_VALUE_LAYOUT: case FX_VALUE_MEMFMT: case FX_VALUE_KIND_COUNT:
    default:
      break;
    }
  *v = fx_value_none ();
}

void
fx_value_describe (const fx_value *v, fx_buf *out)
{
  switch (v->kind)
    {
    case FX_VALUE_NONE: fx_buf_puts (out, "None"); break;
    case FX_VALUE_TENSOR: fx_tensor_describe (v->u.t, out); break;
    case FX_VALUE_INT: fx_buf_printf (out, "%lld", (long long) v->u.i); break;
    case FX_VALUE_FLOAT: fx_buf_printf (out, "%.17g", v->u.f); break;
    case FX_VALUE_BOOL: fx_buf_puts (out, v->u.b ? "True" : "False"); break;
    case FX_VALUE_STR: fx_buf_printf (out, "'%s'", v->u.s); break;
    case FX_VALUE_DTYPE: fx_buf_printf (out, "torch.%s", fx_dtype_name (v->u.dtype)); break;
    case FX_VALUE_DEVICE: fx_device_format (v->u.device, out); break;
    case FX_VALUE_LAYOUT: fx_buf_printf (out, "torch.%s", fx_layout_name (v->u.layout)); break;
    case FX_VALUE_MEMFMT: fx_buf_printf (out, "torch.%s", fx_memfmt_name (v->u.memfmt)); break;
    case FX_VALUE_LIST:
    case FX_VALUE_TUPLE:
      fx_buf_putc (out, v->kind == FX_VALUE_LIST ? '[' : '(');
      for (size_t i = 0; i < v->u.seq.n; i++)
        {
          if (i)
            fx_buf_puts (out, ", ");
          fx_value_describe (&v->u.seq.items[i], out);
        }
      if (v->kind == FX_VALUE_TUPLE && v->u.seq.n == 1)
        fx_buf_putc (out, ',');
      fx_buf_putc (out, v->kind == FX_VALUE_LIST ? ']' : ')');
      break;
    case FX_VALUE_KIND_COUNT:
    default:
      fx_buf_puts (out, "?");
      break;
    }
}
