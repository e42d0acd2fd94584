/* fx-types.c: dtype/device/layout tables, argument and target constructors, tensor-value annotations. */
#include "fx/ir.h"
#include "fx-arg-impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- dtypes */

typedef enum
{
  DTYPE_CLASS_NONE,
  DTYPE_CLASS_FLOAT,
  DTYPE_CLASS_INT,
  DTYPE_CLASS_BOOL,
  DTYPE_CLASS_COMPLEX,
} dtype_class;

typedef struct
{
  const char *name;
  const char *abbr;
  const char *c10;
  size_t size;
  int export_id;
  dtype_class cls;
} dtype_info;

static const dtype_info dtype_table[] = {
  [FX_DTYPE_UNKNOWN] = { "unknown", "?", "Undefined", 0, 0, DTYPE_CLASS_NONE },
#define FX_X(e, n, a, c, s, id, k) [FX_DTYPE_##e] = { n, a, c, s, id, DTYPE_CLASS_##k },
  FX_DTYPE_LIST (FX_X)
#undef FX_X
};
_Static_assert (sizeof dtype_table / sizeof dtype_table[0] == FX_DTYPE_COUNT, "dtype table");

static const dtype_info *
dtype_get (fx_dtype dtype)
{
  return (unsigned) dtype < FX_DTYPE_COUNT ? &dtype_table[dtype] : &dtype_table[FX_DTYPE_UNKNOWN];
}

const char *fx_dtype_name (fx_dtype dtype) { return dtype_get (dtype)->name; }
const char *fx_dtype_abbr (fx_dtype dtype) { return dtype_get (dtype)->abbr; }
const char *fx_dtype_c10_name (fx_dtype dtype) { return dtype_get (dtype)->c10; }
size_t fx_dtype_size (fx_dtype dtype) { return dtype_get (dtype)->size; }
int fx_dtype_export_id (fx_dtype dtype) { return dtype_get (dtype)->export_id; }

fx_dtype
fx_dtype_from_export_id (int id)
{
  for (int d = 1; d < FX_DTYPE_COUNT; d++)
    if (id != 0 && dtype_table[d].export_id == id)
      return (fx_dtype) d;
  return FX_DTYPE_UNKNOWN;
}

fx_dtype
fx_dtype_from_name (const char *name)
{
  static const struct { const char *alias; fx_dtype dtype; } aliases[] = {
    { "float", FX_DTYPE_F32 }, { "double", FX_DTYPE_F64 }, { "half", FX_DTYPE_F16 },
    { "long", FX_DTYPE_I64 }, { "int", FX_DTYPE_I32 }, { "short", FX_DTYPE_I16 },
    { "cfloat", FX_DTYPE_C64 }, { "cdouble", FX_DTYPE_C128 }, { "chalf", FX_DTYPE_C32 },
  };
  if (name == NULL)
    return FX_DTYPE_UNKNOWN;
  if (strncmp (name, "torch.", 6) == 0)
    name += 6;
  for (int d = 1; d < FX_DTYPE_COUNT; d++)
    if (strcmp (name, dtype_table[d].name) == 0 || strcmp (name, dtype_table[d].abbr) == 0
        || strcmp (name, dtype_table[d].c10) == 0)
      return (fx_dtype) d;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp (name, aliases[i].alias) == 0)
      return aliases[i].dtype;
  return FX_DTYPE_UNKNOWN;
}

bool fx_dtype_is_floating (fx_dtype dtype) { return dtype_get (dtype)->cls == DTYPE_CLASS_FLOAT; }
bool fx_dtype_is_complex (fx_dtype dtype) { return dtype_get (dtype)->cls == DTYPE_CLASS_COMPLEX; }

bool
fx_dtype_is_integral (fx_dtype dtype, bool include_bool)
{
  dtype_class cls = dtype_get (dtype)->cls;
  return cls == DTYPE_CLASS_INT || (include_bool && cls == DTYPE_CLASS_BOOL);
}

/* ---------------------------------------------------------------- devices, layouts, memory formats */

static const char *const device_names[] = {
  [FX_DEVICE_CPU] = "cpu", [FX_DEVICE_CUDA] = "cuda", [FX_DEVICE_META] = "meta",
  [FX_DEVICE_MPS] = "mps", [FX_DEVICE_XPU] = "xpu", [FX_DEVICE_HIP] = "hip", [FX_DEVICE_OTHER] = "other",
};
_Static_assert (sizeof device_names / sizeof device_names[0] == FX_DEVICE_TYPE_COUNT, "device names");

const char *
fx_device_type_name (fx_device_type type)
{
  return (unsigned) type < FX_DEVICE_TYPE_COUNT ? device_names[type] : "other";
}

void
fx_device_format (fx_device device, fx_buf *out)
{
  fx_buf_puts (out, fx_device_type_name (device.type));
  if (device.index >= 0)
    fx_buf_printf (out, ":%d", device.index);
}

bool
fx_device_parse (const char *text, fx_device *out)
{
  for (int t = 0; t < FX_DEVICE_OTHER; t++)
    {
      size_t n = strlen (device_names[t]);
      if (strncmp (text, device_names[t], n) != 0)
        continue;
      if (text[n] == '\0')
        {
          out->type = (fx_device_type) t;
          out->index = -1;
          return true;
        }
      if (text[n] == ':' && isdigit ((unsigned char) text[n + 1]))
        {
          char *end;
          errno = 0;
          long idx = strtol (text + n + 1, &end, 10);
          if (*end != '\0' || errno != 0 || idx > 65535)
            return false;
          out->type = (fx_device_type) t;
          out->index = (int) idx;
          return true;
        }
    }
  return false;
}

/* Index of NAME ("torch." prefix optional) in a table of COUNT names, or -1. */
static int
torch_name_index (const char *const *names, int count, const char *name)
{
  if (strncmp (name, "torch.", 6) == 0)
    name += 6;
  for (int i = 0; i < count; i++)
    if (strcmp (name, names[i]) == 0)
      return i;
  return -1;
}

/* An enum printed as "torch.<name>": its name (FALLBACK out of range) and its lookup by name, over one name
   table. */
#define TORCH_ENUM_NAMES(type, names, count, fallback)                            \
  const char *type##_name (type value)                                            \
  {                                                                               \
    return (unsigned) value < count ? names[value] : fallback;                    \
  }                                                                               \
  bool type##_from_name (const char *name, type *out)                             \
  {                                                                               \
    int i = torch_name_index (names, count, name);                                \
    if (i >= 0)                                                                   \
      *out = (type) i;                                                            \
    return i >= 0;                                                                \
  }

static const char *const layout_names[] = {
  [FX_LAYOUT_STRIDED] = "strided", [FX_LAYOUT_SPARSE_COO] = "sparse_coo", [FX_LAYOUT_SPARSE_CSR] = "sparse_csr",
  [FX_LAYOUT_SPARSE_CSC] = "sparse_csc", [FX_LAYOUT_SPARSE_BSR] = "sparse_bsr", [FX_LAYOUT_SPARSE_BSC] = "sparse_bsc",
  [FX_LAYOUT_MKLDNN] = "_mkldnn", [FX_LAYOUT_JAGGED] = "jagged",
};
_Static_assert (sizeof layout_names / sizeof layout_names[0] == FX_LAYOUT_COUNT, "layout names");
/* fx_layout_name, fx_layout_from_name */
TORCH_ENUM_NAMES (fx_layout, layout_names, FX_LAYOUT_COUNT, "strided")

static const char *const memfmt_names[] = {
  [FX_MEMFMT_CONTIGUOUS] = "contiguous_format", [FX_MEMFMT_CHANNELS_LAST] = "channels_last",
  [FX_MEMFMT_CHANNELS_LAST_3D] = "channels_last_3d", [FX_MEMFMT_PRESERVE] = "preserve_format",
};
_Static_assert (sizeof memfmt_names / sizeof memfmt_names[0] == FX_MEMFMT_COUNT, "memory format names");
/* fx_memfmt_name, fx_memfmt_from_name */
TORCH_ENUM_NAMES (fx_memfmt, memfmt_names, FX_MEMFMT_COUNT, "contiguous_format")
#undef TORCH_ENUM_NAMES

static const char *const opcode_names[] = {
  [FX_OP_PLACEHOLDER] = "placeholder", [FX_OP_GET_ATTR] = "get_attr", [FX_OP_CALL_FUNCTION] = "call_function",
  [FX_OP_CALL_METHOD] = "call_method", [FX_OP_CALL_MODULE] = "call_module", [FX_OP_OUTPUT] = "output",
};
_Static_assert (sizeof opcode_names / sizeof opcode_names[0] == FX_OPCODE_COUNT, "opcode names");

const char *
fx_opcode_name (fx_opcode op)
{
  return (unsigned) op < FX_OPCODE_COUNT ? opcode_names[op] : "?";
}

bool
fx_opcode_from_name (const char *name, fx_opcode *out)
{
  for (int i = 0; i < FX_OPCODE_COUNT; i++)
    if (strcmp (name, opcode_names[i]) == 0)
      {
        *out = (fx_opcode) i;
        return true;
      }
  return false;
}

/* ---------------------------------------------------------------- arguments */

fx_arg fx_arg_none (void) { return (fx_arg) { .kind = FX_ARG_NONE }; }
fx_arg fx_arg_node (fx_node *node) { return (fx_arg) { .kind = FX_ARG_NODE, .u.node = node }; }
fx_arg fx_arg_bool (bool b) { return (fx_arg) { .kind = FX_ARG_BOOL, .u.b = b }; }
fx_arg fx_arg_int (int64_t i) { return (fx_arg) { .kind = FX_ARG_INT, .u.i = i }; }
fx_arg fx_arg_float (double f) { return (fx_arg) { .kind = FX_ARG_FLOAT, .u.f = f }; }
fx_arg fx_arg_str (const char *s) { return (fx_arg) { .kind = FX_ARG_STR, .u.s = s }; }
fx_arg fx_arg_dtype (fx_dtype dtype) { return (fx_arg) { .kind = FX_ARG_DTYPE, .u.dtype = dtype }; }
fx_arg fx_arg_device (fx_device device) { return (fx_arg) { .kind = FX_ARG_DEVICE, .u.device = device }; }
fx_arg fx_arg_layout (fx_layout layout) { return (fx_arg) { .kind = FX_ARG_LAYOUT, .u.layout = layout }; }
fx_arg fx_arg_memfmt (fx_memfmt fmt) { return (fx_arg) { .kind = FX_ARG_MEMFMT, .u.memfmt = fmt }; }
fx_arg fx_arg_sym (const char *expr) { return (fx_arg) { .kind = FX_ARG_SYM, .u.s = expr }; }
fx_arg fx_arg_global (const char *name) { return (fx_arg) { .kind = FX_ARG_GLOBAL, .u.s = name }; }

fx_arg
fx_arg_list (fx_arg *items, size_t n)
{
  return (fx_arg) { .kind = FX_ARG_LIST, .u.seq = { items, n } };
}

fx_arg
fx_arg_int_list (fx_arena *arena, const int64_t *v, int n)
{
  fx_arg *items = fx_arena_alloc (arena, sizeof (fx_arg) * (size_t) (n ? n : 1));
  for (int i = 0; i < n; i++)
    items[i] = fx_arg_int (v[i]);
  return fx_arg_list (items, (size_t) n);
}

fx_arg
fx_arg_tuple (fx_arg *items, size_t n)
{
  return (fx_arg) { .kind = FX_ARG_TUPLE, .u.seq = { items, n } };
}

fx_arg
fx_arg_dict (fx_dict_entry *items, size_t n)
{
  return (fx_arg) { .kind = FX_ARG_DICT, .u.dict = { items, n } };
}

fx_arg
fx_arg_copy (fx_arena *arena, const fx_arg *arg)
{
  fx_arg copy = *arg;
  switch (arg->kind)
    {
    case FX_ARG_STR:
    case FX_ARG_SYM:
    case FX_ARG_GLOBAL:
      copy.u.s = fx_arena_strdup (arena, arg->u.s);
      break;
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
    case FX_ARG_SLICE:
      copy.u.seq.items = arg->u.seq.n ? fx_arena_alloc (arena, arg->u.seq.n * sizeof (fx_arg)) : NULL;
      for (size_t i = 0; i < arg->u.seq.n; i++)
        copy.u.seq.items[i] = fx_arg_copy (arena, &arg->u.seq.items[i]);
      break;
    case FX_ARG_DICT:
      copy.u.dict.items = arg->u.dict.n ? fx_arena_alloc (arena, arg->u.dict.n * sizeof (fx_dict_entry)) : NULL;
      for (size_t i = 0; i < arg->u.dict.n; i++)
        {
          copy.u.dict.items[i].key = fx_arg_copy (arena, &arg->u.dict.items[i].key);
          copy.u.dict.items[i].value = fx_arg_copy (arena, &arg->u.dict.items[i].value);
        }
      break;
    case FX_ARG_NONE: case FX_ARG_NODE: case FX_ARG_BOOL: case FX_ARG_INT: case FX_ARG_FLOAT:
    case FX_ARG_DTYPE: case FX_ARG_DEVICE: case FX_ARG_LAYOUT: case FX_ARG_MEMFMT: case FX_ARG_ELLIPSIS:
    case FX_ARG_KIND_COUNT:
    default:
      break;
    }
  return copy;
}

static bool
str_eq (const char *a, const char *b)
{
  return a == b || (a != NULL && b != NULL && strcmp (a, b) == 0);
}

bool
fx_arg_equal (const fx_arg *a, const fx_arg *b)
{
  if (a->kind != b->kind)
    return false;
  switch (a->kind)
    {
    case FX_ARG_NONE:
    case FX_ARG_ELLIPSIS:
      return true;
    case FX_ARG_NODE:
      return a->u.node == b->u.node;
    case FX_ARG_BOOL:
      return a->u.b == b->u.b;
    case FX_ARG_INT:
      return a->u.i == b->u.i;
    case FX_ARG_FLOAT:
      /* Bitwise, so that nan equals nan and -0.0 differs from 0.0, as a printer would see them. */
      return memcmp (&a->u.f, &b->u.f, sizeof (double)) == 0;
    case FX_ARG_STR:
    case FX_ARG_SYM:
    case FX_ARG_GLOBAL:
      return str_eq (a->u.s, b->u.s);
    case FX_ARG_DTYPE:
      return a->u.dtype == b->u.dtype;
    case FX_ARG_DEVICE:
      return a->u.device.type == b->u.device.type && a->u.device.index == b->u.device.index;
    case FX_ARG_LAYOUT:
      return a->u.layout == b->u.layout;
    case FX_ARG_MEMFMT:
      return a->u.memfmt == b->u.memfmt;
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
    case FX_ARG_SLICE:
      if (a->u.seq.n != b->u.seq.n)
        return false;
      for (size_t i = 0; i < a->u.seq.n; i++)
        if (!fx_arg_equal (&a->u.seq.items[i], &b->u.seq.items[i]))
          return false;
      return true;
    case FX_ARG_DICT:
      if (a->u.dict.n != b->u.dict.n)
        return false;
      for (size_t i = 0; i < a->u.dict.n; i++)
        if (!fx_arg_equal (&a->u.dict.items[i].key, &b->u.dict.items[i].key)
            || !fx_arg_equal (&a->u.dict.items[i].value, &b->u.dict.items[i].value))
          return false;
      return true;
    case FX_ARG_KIND_COUNT:
    default:
      return false;
    }
}

/* Calls fn on the address of every node reference in arg (recursively): the one traversal of args that reads
   (fx_arg_foreach_node) or rewrites (fx_arg_replace_node) their nodes. */
static void
arg_walk_nodes (fx_arg *arg, void (*fn) (fx_node **ref, void *data), void *data)
{
  switch (arg->kind)
    {
    case FX_ARG_NODE:
      fn (&arg->u.node, data);
      break;
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
    case FX_ARG_SLICE:
      for (size_t i = 0; i < arg->u.seq.n; i++)
        arg_walk_nodes (&arg->u.seq.items[i], fn, data);
      break;
    case FX_ARG_DICT:
      for (size_t i = 0; i < arg->u.dict.n; i++)
        {
          arg_walk_nodes (&arg->u.dict.items[i].key, fn, data);
          arg_walk_nodes (&arg->u.dict.items[i].value, fn, data);
        }
      break;
    case FX_ARG_NONE: case FX_ARG_BOOL: case FX_ARG_INT: case FX_ARG_FLOAT: case FX_ARG_STR:
    case FX_ARG_DTYPE: case FX_ARG_DEVICE: case FX_ARG_LAYOUT: case FX_ARG_MEMFMT: case FX_ARG_ELLIPSIS:
    case FX_ARG_SYM: case FX_ARG_GLOBAL: case FX_ARG_KIND_COUNT:
    default:
      break;
    }
}

typedef struct
{
  void (*fn) (fx_node *node, void *data);
  void *data;
} node_visit;

static void
visit_node (fx_node **ref, void *data)
{
  node_visit *v = data;
  v->fn (*ref, v->data);
}

void
fx_arg_foreach_node (const fx_arg *arg, void (*fn) (fx_node *node, void *data), void *data)
{
  node_visit v = { fn, data };
  /* the walk hands out addresses, but visit_node only reads through them */
  arg_walk_nodes ((fx_arg *) arg, visit_node, &v);
}

static void
replace_ref (fx_node **ref, void *data)
{
  fx_node *const *from_to = data;
  if (*ref == from_to[0])
    *ref = from_to[1];
}

void
fx_arg_replace_node (fx_arg *arg, fx_node *from, fx_node *to)
{
  fx_node *from_to[2] = { from, to };
  arg_walk_nodes (arg, replace_ref, from_to);
}

/* ---------------------------------------------------------------- targets */

fx_target fx_target_str (const char *name) { return (fx_target) { FX_TARGET_STR, name, NULL, -1 }; }
fx_target fx_target_op (const char *name) { return (fx_target) { FX_TARGET_OP, name, NULL, -1 }; }
fx_target fx_target_operator (const char *name) { return (fx_target) { FX_TARGET_OPERATOR, name, NULL, -1 }; }
fx_target fx_target_builtin (const char *name) { return (fx_target) { FX_TARGET_BUILTIN, name, NULL, -1 }; }
fx_target fx_target_function (const char *name) { return (fx_target) { FX_TARGET_FUNCTION, name, NULL, -1 }; }

bool
fx_target_equal (const fx_target *a, const fx_target *b)
{
  return a->kind == b->kind && str_eq (a->name, b->name);
}

/* torch/fx/graph.py _snake_case: "pascalCase" -> "pascal_case", then lower case. */
static char *
snake_case (fx_arena *arena, const char *s)
{
  size_t n = strlen (s);
  char *out = fx_arena_alloc (arena, 2 * n + 1);
  size_t j = 0;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char) s[i];
      if (i > 0 && isupper (c) && islower ((unsigned char) s[i - 1]))
        out[j++] = '_';
      out[j++] = (char) tolower (c);
    }
  out[j] = '\0';
  return out;
}

const char *
fx_target_base_name (const fx_target *target, fx_arena *arena)
{
  const char *name = target->name ? target->name : "";
  const char *base = name;

  switch (target->kind)
    {
    case FX_TARGET_OP:
      {
        /* "aten.add.Tensor" -> "add"; "higher_order.cond" -> "cond" */
        const char *dot = strchr (name, '.');
        if (dot != NULL)
          {
            const char *op = dot + 1;
            const char *end = strchr (op, '.');
            return end ? fx_arena_strndup (arena, op, (size_t) (end - op)) : fx_arena_strdup (arena, op);
          }
        break;
      }
    case FX_TARGET_FUNCTION:
    case FX_TARGET_OPERATOR:
    case FX_TARGET_BUILTIN:
      {
        const char *dot = strrchr (name, '.');
        base = dot ? dot + 1 : name;
        break;
      }
    case FX_TARGET_STR:
    case FX_TARGET_KIND_COUNT:
    default:
      {
        /* __add__ -> add (FX's _is_magic) */
        size_t n = strlen (name);
        if (n > 4 && strncmp (name, "__", 2) == 0 && strcmp (name + n - 2, "__") == 0)
          return snake_case (arena, fx_arena_strndup (arena, name + 2, n - 4));
        break;
      }
    }
  return snake_case (arena, base);
}

/* ---------------------------------------------------------------- tensor-value annotations */

static void
format_dim (const fx_dim *d, fx_buf *out)
{
  if (d->sym != NULL)
    fx_buf_puts (out, d->sym);
  else
    fx_buf_printf (out, "%lld", (long long) d->value);
}

bool
fx_val_annotation (const fx_val *val, bool include_stride, bool include_device, fx_buf *out)
{
  switch (val->kind)
    {
    case FX_VAL_TENSOR:
      {
        const fx_tensor_meta *t = &val->tensor;
        if (t->subclass != NULL)
          fx_buf_printf (out, "%s(", t->subclass);
        fx_buf_printf (out, "%s[", fx_dtype_abbr (t->dtype));
        for (int i = 0; i < t->ndim; i++)
          {
            if (i > 0)
              fx_buf_puts (out, ", ");
            format_dim (&t->sizes[i], out);
          }
        fx_buf_putc (out, ']');
        if (include_stride && t->strides != NULL)
          {
            fx_buf_putc (out, '[');
            for (int i = 0; i < t->ndim; i++)
              {
                if (i > 0)
                  fx_buf_puts (out, ", ");
                format_dim (&t->strides[i], out);
              }
            fx_buf_putc (out, ']');
          }
        if (include_device && t->has_device)
          fx_device_format (t->device, out);
        if (t->subclass != NULL)
          fx_buf_putc (out, ')');
        return true;
      }
    case FX_VAL_SYMINT:
    case FX_VAL_SYMFLOAT:
    case FX_VAL_SYMBOOL:
      if (val->sym == NULL)
        return false;
      fx_buf_printf (out, "Sym(%s)", val->sym);
      return true;
    case FX_VAL_NONE: case FX_VAL_INT: case FX_VAL_FLOAT: case FX_VAL_BOOL: case FX_VAL_TUPLE:
    case FX_VAL_OTHER: case FX_VAL_KIND_COUNT:
    default:
      return false;
    }
}

/* Parses "d0, d1" up to the closing ']' into dims; returns the position after ']' or NULL. */
static const char *
parse_dims (const char *p, fx_arena *arena, fx_dim **dims, int *ndim)
{
  int cap = 0, n = 0;
  fx_dim *out = NULL;

  if (*p != '[')
    return NULL;
  p++;
  while (*p == ' ')
    p++;
  while (*p != ']')
    {
      const char *start = p;
      int depth = 0;
      while (*p != '\0' && (depth > 0 || (*p != ',' && *p != ']')))
        {
          if (*p == '(')
            depth++;
          else if (*p == ')')
            depth--;
          p++;
        }
      if (*p == '\0' || p == start)
        return NULL;
      const char *end = p;
      while (end > start && end[-1] == ' ')
        end--;
      if (n == cap)
        {
          int ncap = cap ? cap * 2 : 8;
          fx_dim *grown = fx_arena_alloc (arena, (size_t) ncap * sizeof *grown);
          if (n > 0)
            memcpy (grown, out, (size_t) n * sizeof *grown);
          out = grown;
          cap = ncap;
        }
      char *text = fx_arena_strndup (arena, start, (size_t) (end - start));
      char *num_end;
      errno = 0;
      long long v = strtoll (text, &num_end, 10);
      if (*num_end == '\0' && errno == 0 && (isdigit ((unsigned char) text[0]) || text[0] == '-'))
        out[n] = (fx_dim) { v, NULL };
      else
        out[n] = (fx_dim) { -1, text };
      n++;
      if (*p == ',')
        {
          p++;
          while (*p == ' ')
            p++;
          if (*p == ']')
            return NULL;
        }
    }
  /* A 0-d tensor still has a (empty) stride list: keep the pointer non-NULL so "known, empty" differs from "unknown". */
  *dims = out != NULL ? out : fx_arena_alloc (arena, sizeof (fx_dim));
  *ndim = n;
  return p + 1;
}

static bool parse_annotation (const char *text, fx_arena *arena, fx_val *val);

/* On failure val is left as FX_VAL_NONE, never half filled. */
/* The printers write an annotation between double quotes as PyTorch does, unescaped (its text is a dtype, sympy
   expressions and a device): text with a quote, a backslash or a control character is no such annotation, and
   modelling it would print code that reads back as something else. */
static bool
annotation_text_ok (const char *text)
{
  for (const unsigned char *c = (const unsigned char *) text; *c != '\0'; c++)
    if (*c == '"' || *c == '\'' || *c == '\\' || *c < 0x20 || *c == 0x7f)
      return false;
  return true;
}

bool
fx_val_parse_annotation (const char *text, fx_arena *arena, fx_val *val)
{
  if (annotation_text_ok (text) && parse_annotation (text, arena, val))
    return true;
  memset (val, 0, sizeof *val);
  return false;
}

static bool
parse_annotation (const char *text, fx_arena *arena, fx_val *val)
{
  memset (val, 0, sizeof *val);
  if (strncmp (text, "Sym(", 4) == 0)
    {
      size_t n = strlen (text);
      if (n < 6 || text[n - 1] != ')')
        return false;
      val->kind = FX_VAL_SYMINT;
      val->sym = fx_arena_strndup (arena, text + 4, n - 5);
      val->i = -1;
      return true;
    }

  const char *p = text;
  const char *subclass_end = NULL;
  /* "Cls(f32[...])": a tensor subclass wraps the annotation */
  const char *paren = strchr (text, '(');
  const char *bracket = strchr (text, '[');
  if (paren != NULL && (bracket == NULL || paren < bracket))
    {
      size_t n = strlen (text);
      if (text[n - 1] != ')')
        return false;
      val->tensor.subclass = fx_arena_strndup (arena, text, (size_t) (paren - text));
      p = paren + 1;
      subclass_end = text + n - 1;
      bracket = strchr (p, '[');
    }
  if (bracket == NULL)
    return false;
  char *abbr = fx_arena_strndup (arena, p, (size_t) (bracket - p));
  fx_dtype dtype = fx_dtype_from_name (abbr);
  if (dtype == FX_DTYPE_UNKNOWN)
    return false;
  val->kind = FX_VAL_TENSOR;
  val->tensor.dtype = dtype;
  p = parse_dims (bracket, arena, &val->tensor.sizes, &val->tensor.ndim);
  if (p == NULL)
    return false;
  if (*p == '[')
    {
      int nstride = 0;
      p = parse_dims (p, arena, &val->tensor.strides, &nstride);
      if (p == NULL || nstride != val->tensor.ndim)
        return false;
    }
  const char *end = subclass_end ? subclass_end : p + strlen (p);
  if (end > p)
    {
      char *dev = fx_arena_strndup (arena, p, (size_t) (end - p));
      if (!fx_device_parse (dev, &val->tensor.device))
        return false;
      val->tensor.has_device = true;
    }
  return true;
}
