/* fx-print-repr.c: argument and target renderings byte-exact with CPython repr()/str() and FX's three formatters. */
#include "fx-print-impl.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- Python float repr */

/* float.__repr__: the shortest digit string that reads back to the same double (David Gay's mode 0),
   in positional form when -4 < decpt <= 16, else "d.ddde+XX" (Python/pystrtod.c format_float_short). */
void
fx_py_float_repr (double value, fx_buf *out)
{
  char buf[64];
  char digits[32];
  int ndigits = 0;
  int exp10 = 0;

  if (isnan (value))
    {
      fx_buf_puts (out, "nan");
      return;
    }
  if (isinf (value))
    {
      fx_buf_puts (out, value > 0 ? "inf" : "-inf");
      return;
    }
  if (value == 0.0)
    {
      fx_buf_puts (out, signbit (value) ? "-0.0" : "0.0");
      return;
    }

  /* Correctly rounded %e. Any double whose shortest form has k <= 15 digits (DBL_DIG) rounds to exactly that
     form padded with zeros at 15 digits, so one try at 15 digits plus stripping zeros finds it; otherwise the
     shortest has 16 or 17 digits, and the nearest such string is the one to try. Subnormals carry fewer
     digits than DBL_DIG, so they search every precision. */
  int first = fabs (value) < DBL_MIN ? 1 : 15;
  for (int prec = first; prec <= 17; prec++)
    {
      snprintf (buf, sizeof buf, "%.*e", prec - 1, value);
      if (strtod (buf, NULL) == value)
        break;
    }

  /* buf is "[-]d[<point>ddd]e[+-]XX"; the point is locale dependent, so take digits only. */
  const char *p = buf;
  if (*p == '-')
    {
      fx_buf_putc (out, '-');
      p++;
    }
  for (; *p != '\0' && *p != 'e' && *p != 'E'; p++)
    if (*p >= '0' && *p <= '9' && ndigits < (int) sizeof digits - 1)
      digits[ndigits++] = *p;
  if (*p == 'e' || *p == 'E')
    exp10 = atoi (p + 1);
  while (ndigits > 1 && digits[ndigits - 1] == '0')
    ndigits--;
  digits[ndigits] = '\0';

  /* value = 0.d1d2... * 10^decpt */
  int decpt = exp10 + 1;
  if (decpt <= -4 || decpt > 16)
    {
      fx_buf_putc (out, digits[0]);
      if (ndigits > 1)
        {
          fx_buf_putc (out, '.');
          fx_buf_append (out, digits + 1, (size_t) ndigits - 1);
        }
      int e = decpt - 1;
      fx_buf_printf (out, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
  else if (decpt <= 0)
    {
      fx_buf_puts (out, "0.");
      for (int i = 0; i < -decpt; i++)
        fx_buf_putc (out, '0');
      fx_buf_append (out, digits, (size_t) ndigits);
    }
  else if (decpt >= ndigits)
    {
      fx_buf_append (out, digits, (size_t) ndigits);
      for (int i = ndigits; i < decpt; i++)
        fx_buf_putc (out, '0');
      fx_buf_puts (out, ".0");
    }
  else
    {
      fx_buf_append (out, digits, (size_t) decpt);
      fx_buf_putc (out, '.');
      fx_buf_append (out, digits + decpt, (size_t) (ndigits - decpt));
    }
}

/* ---------------------------------------------------------------- Python str repr */

/* Decodes one UTF-8 sequence; returns its length, or 0 for an invalid byte. */
static size_t
utf8_decode (const unsigned char *s, uint32_t *cp)
{
  unsigned char c = s[0];
  size_t n;
  uint32_t v;

  if (c < 0x80)
    {
      *cp = c;
      return 1;
    }
  else if ((c & 0xe0) == 0xc0 && c >= 0xc2)
    n = 2, v = c & 0x1f;
  else if ((c & 0xf0) == 0xe0)
    n = 3, v = c & 0x0f;
  else if ((c & 0xf8) == 0xf0 && c <= 0xf4)
    n = 4, v = c & 0x07;
  else
    return 0;
  for (size_t i = 1; i < n; i++)
    {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      v = (v << 6) | (s[i] & 0x3f);
    }
  if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10ffff)))
    return 0;
  *cp = v;
  return n;
}

/* str.isprintable() for a code point above U+007F: false for the control, format, separator, surrogate and
   private-use ranges (Unicode categories Cc, Cf, Zs, Zl, Zp, Cs, Co). Unassigned code points are not tabled. */
static bool
py_printable (uint32_t c)
{
  static const uint32_t ranges[][2] = {
    { 0x80, 0xa0 }, { 0xad, 0xad }, { 0x600, 0x605 }, { 0x61c, 0x61c }, { 0x6dd, 0x6dd }, { 0x70f, 0x70f },
    { 0x890, 0x891 }, { 0x8e2, 0x8e2 }, { 0x1680, 0x1680 }, { 0x180e, 0x180e }, { 0x2000, 0x200f },
    { 0x2028, 0x202f }, { 0x205f, 0x206f }, { 0x3000, 0x3000 }, { 0xd800, 0xf8ff }, { 0xfeff, 0xfeff },
    { 0xfff9, 0xfffb }, { 0xfffe, 0xffff }, { 0x110bd, 0x110bd }, { 0x110cd, 0x110cd }, { 0x13430, 0x1343f },
    { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a }, { 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f },
    { 0xf0000, 0x10ffff },
  };
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
    if (c >= ranges[i][0] && c <= ranges[i][1])
      return false;
  return true;
}

/* unicode_repr (Objects/unicodeobject.c): single quotes unless the text has ' and no ". */
void
fx_py_str_repr (const char *s, fx_buf *out)
{
  const unsigned char *p = (const unsigned char *) (s ? s : "");
  char quote = '\'';

  if (strchr ((const char *) p, '\'') != NULL && strchr ((const char *) p, '"') == NULL)
    quote = '"';
  fx_buf_putc (out, quote);
  while (*p != '\0')
    {
      uint32_t c;
      size_t n = utf8_decode (p, &c);
      if (n == 0)
        {
          /* Bytes that are not UTF-8 come back as Python's surrogateescape would show them. */
          fx_buf_printf (out, "\\udc%02x", *p);
          p++;
          continue;
        }
      if (c == (uint32_t) quote || c == '\\')
        {
          fx_buf_putc (out, '\\');
          fx_buf_putc (out, (char) c);
        }
      else if (c == '\t')
        fx_buf_puts (out, "\\t");
      else if (c == '\n')
        fx_buf_puts (out, "\\n");
      else if (c == '\r')
        fx_buf_puts (out, "\\r");
      else if (c < 0x20 || c == 0x7f)
        fx_buf_printf (out, "\\x%02x", c);
      else if (c < 0x7f)
        fx_buf_putc (out, (char) c);
      else if (!py_printable (c))
        {
          if (c <= 0xff)
            fx_buf_printf (out, "\\x%02x", c);
          else if (c <= 0xffff)
            fx_buf_printf (out, "\\u%04x", c);
          else
            fx_buf_printf (out, "\\U%08x", c);
        }
      else
        fx_buf_append (out, (const char *) p, n);
      p += n;
    }
  fx_buf_putc (out, quote);
}

bool
fx_print_is_space (unsigned char c)
{
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

size_t
fx_print_width (const char *s, size_t len)
{
  size_t w = 0;
  for (size_t i = 0; i < len; i++)
    if (((unsigned char) s[i] & 0xc0) != 0x80)
      w++;
  return w;
}

/* ---------------------------------------------------------------- arguments */

static void
device_repr (fx_device device, fx_buf *out)
{
  fx_buf_printf (out, "device(type='%s'", fx_device_type_name (device.type));
  if (device.index >= 0)
    fx_buf_printf (out, ", index=%d", device.index);
  fx_buf_putc (out, ')');
}

/* A global printed by name: "torch.ops.aten.add.Tensor" is an OpOverload, whose str() drops "torch.ops."
   and whose repr() is "<OpOverload(op='aten.add', overload='Tensor')>". */
static void
global_repr (const char *text, fx_repr_style style, fx_buf *out)
{
  const char *prefix = "torch.ops.";
  size_t plen = strlen (prefix);

  if (text == NULL)
    text = "";
  if (style == FX_REPR_CODE || strncmp (text, prefix, plen) != 0)
    {
      fx_buf_puts (out, text);
      return;
    }
  const char *qual = text + plen;
  const char *d1 = strchr (qual, '.');
  const char *d2 = d1 ? strchr (d1 + 1, '.') : NULL;
  if (style == FX_REPR_FORMAT || d1 == NULL || strncmp (qual, "higher_order.", 13) == 0)
    {
      /* str(OpOverload) is "aten.add.Tensor"; str(HigherOrderOperator) is its bare name. */
      fx_buf_puts (out, strncmp (qual, "higher_order.", 13) == 0 ? qual + 13 : qual);
      return;
    }
  if (d2 == NULL)
    fx_buf_printf (out, "<OpOverloadPacket(op='%s')>", qual);
  else if (strchr (d2 + 1, '.') == NULL)
    fx_buf_printf (out, "<OpOverload(op='%.*s', overload='%s')>", (int) (d2 - qual), qual, d2 + 1);
  else
    fx_buf_puts (out, text);
}

static void
seq_repr (const fx_arg *arg, fx_repr_style style, char open, char close, fx_buf *out)
{
  fx_buf_putc (out, open);
  for (size_t i = 0; i < arg->u.seq.n; i++)
    {
      if (i > 0)
        fx_buf_puts (out, ", ");
      fx_arg_repr (&arg->u.seq.items[i], style, out);
    }
  if (arg->kind == FX_ARG_TUPLE && arg->u.seq.n == 1)
    fx_buf_putc (out, ',');
  fx_buf_putc (out, close);
}

void
fx_arg_repr (const fx_arg *arg, fx_repr_style style, fx_buf *out)
{
  switch (arg->kind)
    {
    case FX_ARG_NONE:
      fx_buf_puts (out, "None");
      break;
    case FX_ARG_NODE:
      /* _format_arg writes '%' + str(node); repr(node) (code, tuples) is the bare name. */
      if (style == FX_REPR_FORMAT)
        fx_buf_putc (out, '%');
      fx_buf_puts (out, arg->u.node ? arg->u.node->name : "None");
      break;
    case FX_ARG_BOOL:
      fx_buf_puts (out, arg->u.b ? "True" : "False");
      break;
    case FX_ARG_INT:
      fx_buf_printf (out, "%lld", (long long) arg->u.i);
      break;
    case FX_ARG_FLOAT:
      fx_py_float_repr (arg->u.f, out);
      break;
    case FX_ARG_STR:
      if (style == FX_REPR_FORMAT)
        fx_buf_puts (out, arg->u.s ? arg->u.s : "");
      else
        fx_py_str_repr (arg->u.s, out);
      break;
    case FX_ARG_DTYPE:
    case FX_ARG_LAYOUT:
    case FX_ARG_MEMFMT:
      /* torch.float32, torch.strided, torch.contiguous_format */
      fx_buf_printf (out, "torch.%s",
                     arg->kind == FX_ARG_DTYPE    ? fx_dtype_name (arg->u.dtype)
                     : arg->kind == FX_ARG_LAYOUT ? fx_layout_name (arg->u.layout)
                                                  : fx_memfmt_name (arg->u.memfmt));
      break;
    case FX_ARG_DEVICE:
      if (style == FX_REPR_FORMAT)
        fx_device_format (arg->u.device, out);
      else
        device_repr (arg->u.device, out);
      break;
    case FX_ARG_LIST:
      seq_repr (arg, style, '[', ']', out);
      break;
    case FX_ARG_TUPLE:
      seq_repr (arg, style, '(', ')', out);
      break;
    case FX_ARG_DICT:
      /* _get_repr falls back to repr(dict); _format_arg writes str(key) unquoted and formats values. */
      fx_buf_putc (out, '{');
      for (size_t i = 0; i < arg->u.dict.n; i++)
        {
          if (i > 0)
            fx_buf_puts (out, ", ");
          if (style == FX_REPR_FORMAT)
            fx_print_arg_str (&arg->u.dict.items[i].key, out);
          else
            fx_arg_repr (&arg->u.dict.items[i].key, FX_REPR_PY, out);
          fx_buf_puts (out, ": ");
          fx_arg_repr (&arg->u.dict.items[i].value, style == FX_REPR_FORMAT ? FX_REPR_FORMAT : FX_REPR_PY, out);
        }
      fx_buf_putc (out, '}');
      break;
    case FX_ARG_SLICE:
      {
        /* code: slice(_get_repr(a), ...); str()/repr() of a slice uses repr() of its parts */
        fx_repr_style inner = style == FX_REPR_CODE ? FX_REPR_CODE : FX_REPR_PY;
        fx_arg none = fx_arg_none ();
        fx_buf_puts (out, "slice(");
        for (size_t i = 0; i < 3; i++)
          {
            if (i > 0)
              fx_buf_puts (out, ", ");
            fx_arg_repr (i < arg->u.seq.n ? &arg->u.seq.items[i] : &none, inner, out);
          }
        fx_buf_putc (out, ')');
        break;
      }
    case FX_ARG_ELLIPSIS:
      fx_buf_puts (out, "Ellipsis");
      break;
    case FX_ARG_SYM:
      fx_buf_puts (out, arg->u.s ? arg->u.s : "");
      break;
    case FX_ARG_GLOBAL:
      global_repr (arg->u.s, style, out);
      break;
    case FX_ARG_KIND_COUNT:
    default:
      fx_buf_puts (out, "None");
      break;
    }
}

void
fx_print_arg_str (const fx_arg *arg, fx_buf *out)
{
  if (arg->kind == FX_ARG_STR)
    fx_buf_puts (out, arg->u.s ? arg->u.s : "");
  else if (arg->kind == FX_ARG_DEVICE)
    fx_device_format (arg->u.device, out);
  else if (arg->kind == FX_ARG_GLOBAL)
    global_repr (arg->u.s, FX_REPR_FORMAT, out);
  else
    fx_arg_repr (arg, FX_REPR_PY, out);
}

/* ---------------------------------------------------------------- targets */

void
fx_target_format (const fx_target *target, fx_buf *out)
{
  const char *name = target->name ? target->name : "";

  switch (target->kind)
    {
    case FX_TARGET_OP:
      fx_buf_printf (out, "torch.ops.%s", name);
      break;
    case FX_TARGET_OPERATOR:
      fx_buf_printf (out, "operator.%s", name);
      break;
    case FX_TARGET_BUILTIN:
      fx_buf_printf (out, "builtins.%s", name);
      break;
    case FX_TARGET_STR:
    case FX_TARGET_FUNCTION:
    case FX_TARGET_KIND_COUNT:
    default:
      fx_buf_puts (out, name);
      break;
    }
}

/* The address CPython would print is unknowable; a fixed one keeps the text stable. */
#define FAKE_ADDRESS "0x7f0000000000"

void
fx_print_target_str (const fx_target *target, fx_buf *out)
{
  const char *name = target->name ? target->name : "";

  if (target->repr != NULL)
    {
      fx_buf_puts (out, target->repr);
      return;
    }
  switch (target->kind)
    {
    case FX_TARGET_OP:
      fx_buf_puts (out, strncmp (name, "higher_order.", 13) == 0 ? name + 13 : name);
      break;
    case FX_TARGET_OPERATOR:
    case FX_TARGET_BUILTIN:
      fx_buf_printf (out, "<built-in function %s>", name);
      break;
    case FX_TARGET_FUNCTION:
      {
        const char *dot = strrchr (name, '.');
        const char *leaf = dot ? dot + 1 : name;
        size_t mlen = dot ? (size_t) (dot - name) : 0;
        if (mlen == 12 && strncmp (name, "torch.Tensor", 12) == 0)
          fx_buf_printf (out, "<method '%s' of 'torch._C.TensorBase' objects>", leaf);
        else if (mlen == 5 && strncmp (name, "torch", 5) == 0)
          fx_buf_printf (out, "<built-in method %s of type object at " FAKE_ADDRESS ">", leaf);
        else if (mlen > 9 && strncmp (name, "torch._C.", 9) == 0)
          fx_buf_printf (out, "<built-in function %s>", leaf); /* bound to a C module: no self shown */
        else
          fx_buf_printf (out, "<function %s at " FAKE_ADDRESS ">", leaf);
        break;
      }
    case FX_TARGET_STR:
    case FX_TARGET_KIND_COUNT:
    default:
      fx_buf_puts (out, name);
      break;
    }
}
