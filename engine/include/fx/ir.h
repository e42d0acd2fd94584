/* fx/ir.h: the FX graph IR every layer shares: graphs, nodes, arguments, targets and node metadata. */
#pragma once

#include "fx/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- dtypes, devices, layouts */

/* X(ENUM, torch name, print_readable abbreviation, c10 ScalarType name, item size, torch.export ScalarType id,
     class: FLOAT, INT, BOOL or COMPLEX) */
#define FX_DTYPE_LIST(X)                                                           \
  X (F32, "float32", "f32", "Float", 4, 7, FLOAT)                                  \
  X (F64, "float64", "f64", "Double", 8, 8, FLOAT)                                 \
  X (F16, "float16", "f16", "Half", 2, 6, FLOAT)                                   \
  X (BF16, "bfloat16", "bf16", "BFloat16", 2, 13, FLOAT)                           \
  X (I64, "int64", "i64", "Long", 8, 5, INT)                                       \
  X (I32, "int32", "i32", "Int", 4, 4, INT)                                        \
  X (I16, "int16", "i16", "Short", 2, 3, INT)                                      \
  X (I8, "int8", "i8", "Char", 1, 2, INT)                                          \
  X (U8, "uint8", "u8", "Byte", 1, 1, INT)                                         \
  X (BOOL, "bool", "b8", "Bool", 1, 12, BOOL)                                      \
  X (U16, "uint16", "u16", "UInt16", 2, 28, INT)                                   \
  X (U32, "uint32", "u32", "UInt32", 4, 0, INT)                                    \
  X (U64, "uint64", "u64", "UInt64", 8, 0, INT)                                    \
  X (C32, "complex32", "c32", "ComplexHalf", 4, 9, COMPLEX)                        \
  X (C64, "complex64", "c64", "ComplexFloat", 8, 10, COMPLEX)                      \
  X (C128, "complex128", "c128", "ComplexDouble", 16, 11, COMPLEX)                 \
  X (F8E4M3FN, "float8_e4m3fn", "f8e4m3fn", "Float8_e4m3fn", 1, 29, FLOAT)         \
  X (F8E5M2, "float8_e5m2", "f8e5m2", "Float8_e5m2", 1, 30, FLOAT)                 \
  X (F8E4M3FNUZ, "float8_e4m3fnuz", "f8e4m3fnuz", "Float8_e4m3fnuz", 1, 31, FLOAT) \
  X (F8E5M2FNUZ, "float8_e5m2fnuz", "f8e5m2fnuz", "Float8_e5m2fnuz", 1, 32, FLOAT)

typedef enum fx_dtype
{
  FX_DTYPE_UNKNOWN = 0,
#define FX_X(e, n, a, c, s, id, k) FX_DTYPE_##e,
  FX_DTYPE_LIST (FX_X)
#undef FX_X
  FX_DTYPE_COUNT
} fx_dtype;

const char *fx_dtype_name (fx_dtype dtype);   /* "float32" (print as "torch.float32") */
const char *fx_dtype_abbr (fx_dtype dtype);   /* "f32" */
const char *fx_dtype_c10_name (fx_dtype dtype); /* "Float" */
size_t fx_dtype_size (fx_dtype dtype);
int fx_dtype_export_id (fx_dtype dtype);
fx_dtype fx_dtype_from_export_id (int id);
/* Accepts "float32", "torch.float32", aliases ("float", "torch.half", "long", ...), abbreviations ("f32") and c10 names. */
fx_dtype fx_dtype_from_name (const char *name);
bool fx_dtype_is_floating (fx_dtype dtype);
bool fx_dtype_is_complex (fx_dtype dtype);
bool fx_dtype_is_integral (fx_dtype dtype, bool include_bool);

typedef enum fx_device_type
{
  FX_DEVICE_CPU,
  FX_DEVICE_CUDA,
  FX_DEVICE_META,
  FX_DEVICE_MPS,
  FX_DEVICE_XPU,
  FX_DEVICE_HIP,
  FX_DEVICE_OTHER,
  FX_DEVICE_TYPE_COUNT
} fx_device_type;

typedef struct fx_device
{
  fx_device_type type;
  int index; /* -1: no index ("cpu", "cuda") */
} fx_device;

/* "cpu" with no index: where a tensor or an input lives unless something says otherwise. */
static inline fx_device
fx_device_cpu (void)
{
  return (fx_device) { FX_DEVICE_CPU, -1 };
}

const char *fx_device_type_name (fx_device_type type);
/* "cpu", "cuda:0" (str(device)) */
void fx_device_format (fx_device device, fx_buf *out);
/* Parses "cpu", "cuda:0", "cuda". Returns false on anything else. */
bool fx_device_parse (const char *text, fx_device *out);

typedef enum fx_layout
{
  FX_LAYOUT_STRIDED,
  FX_LAYOUT_SPARSE_COO,
  FX_LAYOUT_SPARSE_CSR,
  FX_LAYOUT_SPARSE_CSC,
  FX_LAYOUT_SPARSE_BSR,
  FX_LAYOUT_SPARSE_BSC,
  FX_LAYOUT_MKLDNN,
  FX_LAYOUT_JAGGED,
  FX_LAYOUT_COUNT
} fx_layout;

const char *fx_layout_name (fx_layout layout); /* "strided" (print as "torch.strided") */
bool fx_layout_from_name (const char *name, fx_layout *out);

typedef enum fx_memfmt
{
  FX_MEMFMT_CONTIGUOUS,
  FX_MEMFMT_CHANNELS_LAST,
  FX_MEMFMT_CHANNELS_LAST_3D,
  FX_MEMFMT_PRESERVE,
  FX_MEMFMT_COUNT
} fx_memfmt;

const char *fx_memfmt_name (fx_memfmt fmt); /* "contiguous_format" (print as "torch.contiguous_format") */
bool fx_memfmt_from_name (const char *name, fx_memfmt *out);

/* ---------------------------------------------------------------- arguments */

typedef struct fx_node fx_node;
typedef struct fx_graph fx_graph;
typedef struct fx_arg fx_arg;
typedef struct fx_kwarg fx_kwarg;
typedef struct fx_dict_entry fx_dict_entry;

typedef enum fx_arg_kind
{
  FX_ARG_NONE,
  FX_ARG_NODE,
  FX_ARG_BOOL,
  FX_ARG_INT,
  FX_ARG_FLOAT,    /* includes inf, -inf, nan */
  FX_ARG_STR,
  FX_ARG_DTYPE,
  FX_ARG_DEVICE,
  FX_ARG_LAYOUT,
  FX_ARG_MEMFMT,
  FX_ARG_LIST,
  FX_ARG_TUPLE,
  FX_ARG_DICT,
  FX_ARG_SLICE,    /* seq of exactly 3 items: start, stop, step (NONE where absent) */
  FX_ARG_ELLIPSIS,
  FX_ARG_SYM,      /* a symbolic expression that is not a node: text, e.g. "s77" */
  FX_ARG_GLOBAL,   /* a Python object printed by name: text, e.g. "torch.ops.aten.add.Tensor" */
  FX_ARG_KIND_COUNT
} fx_arg_kind;

struct fx_arg
{
  fx_arg_kind kind;
  union
  {
    fx_node *node;
    bool b;
    int64_t i;
    double f;
    const char *s;          /* STR (decoded), SYM, GLOBAL */
    fx_dtype dtype;
    fx_device device;
    fx_layout layout;
    fx_memfmt memfmt;
    struct
    {
      fx_arg *items;
      size_t n;
    } seq;                  /* LIST, TUPLE, SLICE */
    struct
    {
      fx_dict_entry *items;
      size_t n;
    } dict;
  } u;
};

struct fx_dict_entry
{
  fx_arg key;
  fx_arg value;
};

struct fx_kwarg
{
  const char *name;
  fx_arg value;
};

/* Value constructors. Sequences are shallow: items must outlive the arg until it is set on a node
   (fx_node_set_args deep-copies into the graph's arena). */
fx_arg fx_arg_none (void);
fx_arg fx_arg_node (fx_node *node);
fx_arg fx_arg_bool (bool b);
fx_arg fx_arg_int (int64_t i);
fx_arg fx_arg_float (double f);
fx_arg fx_arg_str (const char *s);
fx_arg fx_arg_dtype (fx_dtype dtype);
fx_arg fx_arg_device (fx_device device);
fx_arg fx_arg_layout (fx_layout layout);
fx_arg fx_arg_memfmt (fx_memfmt fmt);
fx_arg fx_arg_list (fx_arg *items, size_t n);
/* A list of n ints (sizes, dims, a permutation) with its items allocated from arena. */
fx_arg fx_arg_int_list (fx_arena *arena, const int64_t *v, int n);
fx_arg fx_arg_tuple (fx_arg *items, size_t n);
fx_arg fx_arg_dict (fx_dict_entry *items, size_t n);
fx_arg fx_arg_sym (const char *expr);
fx_arg fx_arg_global (const char *qualified_name);

/* Deep copy into arena (strings too). */
fx_arg fx_arg_copy (fx_arena *arena, const fx_arg *arg);
bool fx_arg_equal (const fx_arg *a, const fx_arg *b);
/* Calls fn on every node referenced (recursively) by arg. */
void fx_arg_foreach_node (const fx_arg *arg, void (*fn) (fx_node *node, void *data), void *data);
/* Calls fn on every node the args and then the kwargs of node reference, in order (one used twice, twice). */
void fx_node_foreach_input (const fx_node *node, void (*fn) (fx_node *input, void *data), void *data);

/* How an argument is rendered: each is one PyTorch printer. */
typedef enum fx_repr_style
{
  FX_REPR_CODE,     /* torch/fx/graph.py _get_repr: GraphModule.code and print_readable */
  FX_REPR_FORMAT,   /* torch/fx/node.py _format_arg: Graph.__str__ (nodes as %name, dict keys unquoted) */
  FX_REPR_PY,       /* Python str()/repr() of args/kwargs: print_tabular cells */
} fx_repr_style;

void fx_arg_repr (const fx_arg *arg, fx_repr_style style, fx_buf *out);
/* Python repr helpers, byte-exact with CPython. */
void fx_py_float_repr (double value, fx_buf *out);   /* 1.0, 1e-05, inf, nan, -0.0 */
void fx_py_str_repr (const char *s, fx_buf *out);    /* 'a', "it's", '\n' escapes */

/* ---------------------------------------------------------------- targets */

typedef enum fx_target_kind
{
  FX_TARGET_STR,      /* placeholder, get_attr, output, call_method, call_module: the plain string */
  FX_TARGET_OP,       /* torch.ops overload or packet, name without "torch.ops.": "aten.add.Tensor", "prims.iota.default", "higher_order.cond" */
  FX_TARGET_OPERATOR, /* a function of Python's operator module: name "add", "getitem", "iadd" */
  FX_TARGET_BUILTIN,  /* a Python builtin: name "getattr", "len" */
  FX_TARGET_FUNCTION, /* any other callable by qualified name: "torch.abs", "torch._C._nn.gelu", "torch.nn.functional.relu" */
  FX_TARGET_KIND_COUNT
} fx_target_kind;

typedef struct fx_target
{
  fx_target_kind kind;
  const char *name;
  /* str(target) as print_tabular shows it when known ("<built-in method abs of type object at 0x7f...>");
     NULL: the printer derives it. */
  const char *repr;
  int op_id;          /* index in the engine's op table, -1 when unknown; set by engine/ops */
} fx_target;

fx_target fx_target_str (const char *name);
fx_target fx_target_op (const char *name);
fx_target fx_target_operator (const char *name);
fx_target fx_target_builtin (const char *name);
fx_target fx_target_function (const char *qualified_name);
bool fx_target_equal (const fx_target *a, const fx_target *b);
/* _pretty_print_target (Graph.__str__): "torch.ops.aten.add.Tensor", "operator.add", "builtins.getattr", "torch.abs" */
void fx_target_format (const fx_target *target, fx_buf *out);
/* The base name FX derives a node name from: "aten.add.Tensor" -> "add", "operator.getitem" -> "getitem", "torch.abs" -> "abs" */
const char *fx_target_base_name (const fx_target *target, fx_arena *arena);

/* ---------------------------------------------------------------- metadata */

typedef struct fx_dim
{
  int64_t value;      /* concrete size, or the hint of a symbolic one (-1: no hint) */
  const char *sym;    /* NULL when concrete; else the expression ("s77", "2*s0") */
} fx_dim;

typedef struct fx_tensor_meta
{
  fx_dtype dtype;
  int ndim;
  fx_dim *sizes;      /* ndim entries */
  fx_dim *strides;    /* ndim entries, or NULL when unknown (non-NULL, empty, for a 0-d tensor with known strides) */
  fx_dim storage_offset;
  fx_device device;
  bool has_device;
  bool requires_grad;
  const char *subclass; /* tensor subclass name printed as "Cls(f32[...])", or NULL */
} fx_tensor_meta;

typedef enum fx_val_kind
{
  FX_VAL_NONE,        /* no value recorded */
  FX_VAL_TENSOR,
  FX_VAL_SYMINT,      /* "Sym(s77)"; concrete int when sym is NULL */
  FX_VAL_SYMFLOAT,
  FX_VAL_SYMBOOL,
  FX_VAL_INT,
  FX_VAL_FLOAT,
  FX_VAL_BOOL,
  FX_VAL_TUPLE,       /* e.g. aten.max.dim: no annotation is printed */
  FX_VAL_OTHER,       /* anything else, kept as text */
  FX_VAL_KIND_COUNT
} fx_val_kind;

typedef struct fx_val fx_val;
struct fx_val
{
  fx_val_kind kind;
  fx_tensor_meta tensor;  /* TENSOR */
  const char *sym;        /* SYM*: the expression */
  int64_t i;              /* INT, SYMINT hint */
  double f;               /* FLOAT */
  bool b;                 /* BOOL */
  fx_val *items;          /* TUPLE */
  size_t n_items;
  const char *text;       /* OTHER */
};

/* print_readable's annotation: "f32[8, 4]", "f32[8, 4][4, 1]cuda:0", "Sym(s77)"; returns false when the value gets none. */
bool fx_val_annotation (const fx_val *val, bool include_stride, bool include_device, fx_buf *out);
/* Parses an annotation ("f32[s77, 3][3, 1]cpu", "Sym(s0)") into val, allocating from arena. */
bool fx_val_parse_annotation (const char *text, fx_arena *arena, fx_val *val);

typedef struct fx_module_entry
{
  const char *key;    /* dynamo: str(id(module)) or "L['self'].fc"; export: "L__self__sub.fc" */
  const char *path;   /* "L['self'].sub" or "sub.fc" */
  const char *type;   /* class: "torch.nn.modules.linear.Linear" */
} fx_module_entry;

typedef struct fx_source_fn
{
  const char *name;   /* "linear", "sum_1" */
  const char *target; /* "torch.nn.modules.linear.Linear", "sum", "<built-in function mul>" */
} fx_source_fn;

typedef struct fx_node_source fx_node_source;
struct fx_node_source
{
  const char *name;
  const char *target;
  int64_t graph_id;
  const char *pass_name;
  const char *action;         /* "create", "replace", ... */
  fx_node_source *from_node;  /* provenance chain (earlier passes) */
  size_t n_from;
};

typedef struct fx_meta_extra
{
  const char *key;
  const char *text;   /* str() of the value */
} fx_meta_extra;

typedef struct fx_stack_frame
{
  const char *file;
  int line;
  const char *func;
  const char *code;   /* NULL when the trace had no code line */
} fx_stack_frame;

typedef struct fx_meta
{
  fx_val val;                 /* meta['val'] / ['tensor_meta'] / ['example_value'] */
  const char *stack_trace;    /* raw: '  File "p", line N, in fn\n    code\n' frames, innermost last; NULL if none */
  fx_module_entry *nn_module_stack;
  size_t n_nn_module_stack;
  fx_source_fn *source_fn_stack;
  size_t n_source_fn_stack;
  const char *original_aten;  /* "aten.addmm.default" or NULL */
  fx_node_source *from_node;
  size_t n_from_node;
  int64_t seq_nr;             /* -1: none */
  fx_meta_extra *extra;       /* every other key, kept as text */
  size_t n_extra;
} fx_meta;

/* Parses stack_trace text into frames (outermost first) allocated from arena; returns the count. */
size_t fx_stack_trace_parse (const char *stack_trace, fx_arena *arena, fx_stack_frame **frames);
/* The innermost frame, as print_readable's "# File:" comment uses it; false when none matches. */
bool fx_stack_trace_innermost (const char *stack_trace, fx_arena *arena, fx_stack_frame *frame);
const char *fx_meta_get_extra (const fx_meta *meta, const char *key);
void fx_meta_set_extra (fx_graph *graph, fx_meta *meta, const char *key, const char *text);

/* ---------------------------------------------------------------- nodes and graphs */

typedef enum fx_opcode
{
  FX_OP_PLACEHOLDER,
  FX_OP_GET_ATTR,
  FX_OP_CALL_FUNCTION,
  FX_OP_CALL_METHOD,
  FX_OP_CALL_MODULE,
  FX_OP_OUTPUT,
  FX_OPCODE_COUNT
} fx_opcode;

const char *fx_opcode_name (fx_opcode op);          /* "call_function" */
bool fx_opcode_from_name (const char *name, fx_opcode *out);

struct fx_node
{
  fx_graph *graph;
  uint32_t id;                /* creation order, stable for the node's life */
  fx_opcode op;
  const char *name;           /* unique in the graph */
  fx_target target;
  fx_arg *args;
  size_t n_args;
  fx_kwarg *kwargs;
  size_t n_kwargs;
  fx_node **users;            /* in the order they started using this node (FX's users dict) */
  size_t n_users;
  size_t users_cap;
  fx_node *prev;
  fx_node *next;
  const char *type_expr;      /* placeholder type annotation in GraphModule.code ("torch.Tensor"), or NULL */
  fx_arg *default_value;      /* placeholder default, or NULL */
  fx_meta meta;
  bool erased;
};

/* A child GraphModule held as an attribute (torch.ops.higher_order.cond branches, submodules of a Repro). */
typedef struct fx_graph_child
{
  const char *attr;           /* "true_graph_0" */
  fx_graph *graph;
} fx_graph_child;

typedef enum fx_attr_kind
{
  FX_ATTR_PARAMETER,
  FX_ATTR_BUFFER,
  FX_ATTR_CONSTANT,
  FX_ATTR_MODULE,
  FX_ATTR_OTHER
} fx_attr_kind;

/* A module attribute the graph reads through get_attr (or a Repro's registered tensors). */
typedef struct fx_attr
{
  const char *name;           /* "_tensor_constant0", "fc.weight" */
  fx_attr_kind kind;
  fx_val val;                 /* tensor meta when known */
  const char *text;           /* the source expression when parsed from code, else NULL */
} fx_attr;

typedef enum fx_input_kind
{
  FX_INPUT_TENSOR,
  FX_INPUT_SYMINT,
  FX_INPUT_OTHER
} fx_input_kind;

/* An input description: from repro.py load_args, inputs.json or example inputs. */
typedef struct fx_input_spec
{
  const char *name;
  fx_input_kind kind;
  fx_val val;                 /* TENSOR: dtype/shape/stride/device; SYMINT: value */
  const char *storage;        /* storage hash from reader.storage, or NULL */
  bool is_leaf;
  bool requires_grad;
} fx_input_spec;

struct fx_graph
{
  fx_arena *arena;            /* owns nodes, args, names and metadata */
  fx_node *first;
  fx_node *last;
  size_t n_nodes;
  uint32_t next_id;
  struct fx_name_table *names; /* internal */
  fx_node *insert_before;     /* NULL: append at the end */

  const char *class_name;     /* print_readable class name: "GraphModule", "<lambda>", "Repro" */
  fx_graph_child *children;
  size_t n_children;
  fx_attr *attrs;
  size_t n_attrs;
  fx_input_spec *inputs;
  size_t n_inputs;
  const char *source_file;    /* where it was parsed from, or NULL */
  /* _PyTreeCodeGen (AOT joint graphs): the forward's own parameters ("primals, tangents"), flattened into the
     placeholders by `fx_pytree.tree_flatten_spec`; pytree_out: the return goes through `pytree.tree_unflatten`.
     NULL / false: plain CodeGen. print_readable with expanded_def prints them as PyTorch does. */
  const char *pytree_args;
  bool pytree_out;
};

#define fx_graph_foreach_node(g, n) for (fx_node *n = (g)->first; n != NULL; n = n->next)
#define fx_graph_foreach_node_reverse(g, n) for (fx_node *n = (g)->last; n != NULL; n = n->prev)

fx_graph *fx_graph_new (void);
void fx_graph_free (fx_graph *graph);
/* Deep copy, names and metadata included. */
fx_graph *fx_graph_copy (const fx_graph *graph);
/* Copies node n (of another graph) to graph's insertion point: arguments remapped through map (indexed by the source
   node ids; every referenced node must be mapped), metadata deep-copied. name NULL: n's name (made unique); a
   placeholder given a name gets it as its target too. */
fx_node *fx_graph_copy_node (fx_graph *graph, const fx_node *n, fx_node **map, const char *name);

/* FX's _Namespace.create_name: illegal characters become '_', a leading digit gets '_', Python keywords and
   builtins are avoided, clashes count up ("sum" -> "sum_1", "add" -> "add", "add_1", ...). Registers the name. */
const char *fx_graph_unique_name (fx_graph *graph, const char *candidate);
bool fx_graph_name_taken (const fx_graph *graph, const char *name);
fx_node *fx_graph_find_node (const fx_graph *graph, const char *name);

/* Creates a node at the insertion point. name NULL: derived from the target as FX does. args/kwargs are deep-copied. */
fx_node *fx_graph_create_node (fx_graph *graph, fx_opcode op, fx_target target,
                               const fx_arg *args, size_t n_args,
                               const fx_kwarg *kwargs, size_t n_kwargs,
                               const char *name);
/* Graph.placeholder: the node name derives from the target as FX does ("L_x_" -> "l_x_"). */
fx_node *fx_graph_placeholder (fx_graph *graph, const char *target);
fx_node *fx_graph_call_function (fx_graph *graph, fx_target target,
                                 const fx_arg *args, size_t n_args,
                                 const fx_kwarg *kwargs, size_t n_kwargs);
fx_node *fx_graph_output (fx_graph *graph, fx_arg value);
fx_node *fx_graph_output_node (const fx_graph *graph);
/* The position of a placeholder among the graph's placeholders (its input index), -1 for another node. */
int fx_graph_placeholder_position (const fx_graph *graph, const fx_node *placeholder);

/* Insertion point: new nodes go before `before` (NULL: at the end). */
void fx_graph_set_insert_point (fx_graph *graph, fx_node *before);
void fx_graph_move_before (fx_graph *graph, fx_node *node, fx_node *before);

void fx_node_set_args (fx_node *node, const fx_arg *args, size_t n_args);
void fx_node_set_kwargs (fx_node *node, const fx_kwarg *kwargs, size_t n_kwargs);
const fx_arg *fx_node_get_kwarg (const fx_node *node, const char *name);
/* Records that a pass made `made` from `from`: one from_node entry (name and target copied into arena) with the pass
   and action; chain keeps from's own from_node history behind it. */
void fx_node_set_source (fx_node *made, fx_arena *arena, const fx_node *from, const char *pass_name,
                         const char *action, bool chain);
/* Gives made (a node of from's graph that a pass derived from it) from's user-level provenance: stack_trace,
   nn_module_stack, source_fn_stack and seq_nr (shared, not copied: both live in one graph's arena). */
void fx_node_share_user_provenance (fx_node *made, const fx_node *from);
/* Sets diag to "node 'NAME' (TARGET): message" with diag->node (and diag->pass when pass is not NULL) filled in;
   returns code. diag may be NULL. */
fx_status fx_node_error (fx_diag *diag, const fx_node *node, const char *pass, fx_status code, const char *fmt, ...)
  FX_PRINTF (5, 6);
/* Rewrites every use of node to replacement; returns the number of users changed. */
size_t fx_node_replace_all_uses_with (fx_node *node, fx_node *replacement);
/* Fails (FX_ERR_INVALID) while the node still has users. */
fx_status fx_graph_erase_node (fx_graph *graph, fx_node *node, fx_diag *diag);
/* Side-effecting nodes DCE keeps: placeholders, output, in-place ops, asserts, prints, setitem. */
bool fx_node_is_impure (const fx_node *node);
/* Graph.eliminate_dead_code: returns the number of nodes erased. */
size_t fx_graph_eliminate_dead_code (fx_graph *graph);

/* Every argument node appears before its user. */
bool fx_graph_is_topological (const fx_graph *graph, fx_diag *diag);
/* Graph.lint and more: unique names, topological order, users consistent with args, one output at the end. */
fx_status fx_graph_verify (const fx_graph *graph, fx_diag *diag);

fx_graph *fx_graph_add_child (fx_graph *graph, const char *attr, fx_graph *child); /* takes ownership of child */
fx_attr *fx_graph_add_attr (fx_graph *graph, const char *name, fx_attr_kind kind);
fx_input_spec *fx_graph_add_input_spec (fx_graph *graph, const char *name, fx_input_kind kind);
size_t fx_graph_count_op (const fx_graph *graph, fx_opcode op);

/* ---------------------------------------------------------------- text forms (byte-exact with PyTorch) */

/* Graph.print_tabular (tabulate "simple"). */
void fx_graph_print_tabular (const fx_graph *graph, fx_buf *out);
/* Graph.__str__ (format_node per node). */
void fx_graph_print_str (const fx_graph *graph, fx_buf *out);
/* GraphModule.code (starts with three newlines). */
void fx_graph_print_code (const fx_graph *graph, fx_buf *out);

typedef struct fx_readable_opts
{
  bool include_stride;
  bool include_device;
  bool print_output; /* unused by the printer; callers decide whether to print */
  /* print_readable(expanded_def=True), as AOT autograd logs its graphs since PyTorch 2.9: one parameter a line with
     its `# PlainAOTInput(idx=0)` descriptor (meta "desc"), and a returned tuple one value a line with its own */
  bool expanded_def;
} fx_readable_opts;

/* GraphModule.print_readable, children appended recursively. */
void fx_graph_print_readable (const fx_graph *graph, const fx_readable_opts *opts, fx_buf *out);

/* Canonical JSON form (versioned, round-trips through fx_graph_from_json). */
#define FX_GRAPH_JSON_VERSION 1
void fx_graph_to_json (const fx_graph *graph, fx_buf *out);
fx_status fx_graph_from_json (const char *text, size_t len, fx_graph **out, fx_diag *diag);

/* Graphviz dot, module clusters from nn_module_stack. */
void fx_graph_dump_dot (const fx_graph *graph, fx_buf *out);

#ifdef __cplusplus
}
#endif
