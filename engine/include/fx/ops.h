/* fx/ops.h: the engine's op table (fx/ops.def), parsed schemas, argument binding and the reference kernels' calling convention. */
#pragma once

#include "fx/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fx_op_kind
{
  FX_OP_KIND_POINTWISE,   /* elementwise over broadcast operands */
  FX_OP_KIND_REDUCTION,   /* reduces one or more dims */
  FX_OP_KIND_SCAN,        /* cumulative along a dim */
  FX_OP_KIND_VIEW,        /* aliases its input: no data is computed */
  FX_OP_KIND_EXTERN,      /* GEMM / convolution: calls a library */
  FX_OP_KIND_INDEXING,    /* gather-like reads through index tensors */
  FX_OP_KIND_FACTORY,     /* creates a tensor from scalars */
  FX_OP_KIND_RANDOM,      /* draws from the generator */
  FX_OP_KIND_COMPOSITE,   /* has a decomposition into simpler table ops (softmax, layer norm, ...) */
  FX_OP_KIND_OTHER,       /* data movement (cat, pad), pooling, sym_size */
  FX_OP_KIND_COUNT
} fx_op_kind;

const char *fx_op_kind_name (fx_op_kind kind);   /* "pointwise" */

typedef enum fx_op_id
{
#define FX_OP(id, target, kind, schema, meta, kernel, decomp) FX_OP_##id,
#include "fx/ops.def"
#undef FX_OP
  FX_OP_COUNT
} fx_op_id;

/* ---------------------------------------------------------------- schemas */

typedef enum fx_schema_type
{
  FX_SCHEMA_TENSOR,
  FX_SCHEMA_TENSOR_LIST,      /* Tensor[] */
  FX_SCHEMA_OPT_TENSOR_LIST,  /* Tensor?[] */
  FX_SCHEMA_SCALAR,
  FX_SCHEMA_INT,              /* int, SymInt */
  FX_SCHEMA_INT_LIST,         /* int[], int[N], SymInt[] */
  FX_SCHEMA_FLOAT,
  FX_SCHEMA_BOOL,
  FX_SCHEMA_STR,
  FX_SCHEMA_DTYPE,            /* ScalarType */
  FX_SCHEMA_LAYOUT,
  FX_SCHEMA_DEVICE,
  FX_SCHEMA_MEMFMT,
  FX_SCHEMA_GENERATOR,
  FX_SCHEMA_TYPE_COUNT
} fx_schema_type;

#define FX_OP_MAX_ARGS 12
#define FX_OP_MAX_OUTS 4

typedef struct fx_schema_arg
{
  const char *name;
  fx_schema_type type;
  bool optional;        /* "T?" */
  bool kwarg_only;      /* after "*" */
  int list_len;         /* int[2]: 2 (a single int broadcasts); 0 otherwise */
  bool has_default;
  const char *default_text; /* "1", "None", "[]", "'none'", "False" */
} fx_schema_arg;

typedef struct fx_op_schema
{
  const char *text;
  const char *name;         /* "add" */
  const char *overload;     /* "Tensor", "" for default */
  fx_schema_arg args[FX_OP_MAX_ARGS];
  int n_args;
  fx_schema_type returns[FX_OP_MAX_OUTS];
  int n_returns;
  bool returns_list;        /* "-> Tensor[]" */
} fx_op_schema;

/* Parses a schema string (the table's, or a plugin's). */
fx_status fx_op_schema_parse (const char *text, fx_arena *arena, fx_op_schema *out, fx_diag *diag);

/* ---------------------------------------------------------------- calls */

typedef struct fx_op_info fx_op_info;

/* One invocation of an op: arguments bound to schema positions (defaults filled), and its outputs. */
typedef struct fx_op_call
{
  const fx_op_info *op;
  const char *node_name;      /* for diagnostics; may be NULL */
  fx_value args[FX_OP_MAX_ARGS];
  int n_args;
  fx_value outs[FX_OP_MAX_OUTS]; /* list-returning ops put one FX_VALUE_LIST in outs[0] */
  int n_outs;
  fx_arena *arena;            /* scratch and list storage, lives as long as the call's values */
  fx_allocator *alloc;        /* where output storages come from */
  fx_generator *gen;          /* random ops */
  fx_diag *diag;
} fx_op_call;

/* Fills call->outs with meta tensors describing the results (dtype, shape, strides), or with views of the inputs
   (VIEW ops), or with non-tensor values. Must not read tensor data. */
typedef fx_status (*fx_op_meta_fn) (fx_op_call *call);
/* Computes the outputs; their storages were allocated from the meta description. */
typedef fx_status (*fx_op_kernel_fn) (fx_op_call *call);
/* Replaces node (a call of this op) by simpler table ops inserted before it, keeping provenance. */
typedef fx_status (*fx_op_decomp_fn) (fx_graph *graph, fx_node *node, fx_diag *diag);

struct fx_op_info
{
  fx_op_id id;
  const char *target;         /* "aten.add.Tensor" */
  fx_op_kind kind;
  const char *schema_text;
  fx_op_meta_fn meta;
  fx_op_kernel_fn kernel;     /* NULL for views */
  fx_op_decomp_fn decomp;     /* NULL when primitive */
};

const fx_op_info *fx_op_get (fx_op_id id);
/* The parsed schema (parsed once, on first use; thread-safe). */
const fx_op_schema *fx_op_get_schema (fx_op_id id);

/* Looks up "aten.add.Tensor", "torch.ops.aten.add.Tensor", or a packet "aten.abs" (its .default overload).
   Returns the id or -1. */
int fx_op_lookup (const char *target);
/* In-place variants ("aten.add_.Tensor", "aten.relu_.default"): the functional op's id, or -1. */
int fx_op_lookup_inplace (const char *target);
/* "aten.add_.Tensor", "aten.copy_.default": an in-place op's name (one trailing underscore), which writes its first
   argument; whether or not the functional op is in the table. */
bool fx_op_name_is_inplace (const char *target);
/* Sets target.op_id on every call_function node of graph (and its children); returns how many are unknown. */
size_t fx_graph_resolve_ops (fx_graph *graph);

/* Binds positional and keyword values to the op's schema, filling defaults. Errors name the op and the argument. */
fx_status fx_op_bind (fx_op_call *call, const fx_op_info *op,
                      const fx_value *args, size_t n_args,
                      const char *const *kw_names, const fx_value *kw_values, size_t n_kwargs,
                      fx_diag *diag);
/* meta only: outs hold meta tensors / views. */
fx_status fx_op_infer (fx_op_call *call);
/* meta, allocate, kernel. On success outs hold real tensors (views share the input's storage). */
fx_status fx_op_execute (fx_op_call *call);
/* Drops the references held by the call's args and outs. */
void fx_op_call_clear (fx_op_call *call);

/* Helpers for kernels and meta functions: a bound argument as a C value (with the schema's defaults resolved). */
bool fx_value_is_none (const fx_value *v);
double fx_value_as_f64 (const fx_value *v);
int64_t fx_value_as_i64 (const fx_value *v);
/* Int list (an int broadcast to list_len when the schema says int[N]); returns count, -1 when not a list. */
int fx_value_as_int_list (const fx_value *v, int64_t *out, int max);

/* The BLAS the GEMM kernels call, in words for benchmark headers: OpenBLAS's build configuration, the core type it
   chose for this processor and its thread count ("OpenBLAS 0.3.21 DYNAMIC_ARCH ..., core Haswell, 16 threads"),
   or "a cblas other than OpenBLAS". */
void fx_blas_describe (char *out, size_t size);
/* Where OpenBLAS fell back to its generic core on a CPU it does not know, pick the AVX-512 or AVX2 kernels (run at
   load; returns the core picked or NULL) */
const char *fx_blas_select_core (void);
/* Where OpenBLAS's pthread workers would busy-wait 0.1 s after each call (beside our OpenMP kernels), make them sleep
   after 2^16 cycles unless OPENBLAS_THREAD_TIMEOUT is set (run at load; returns the exponent set, or 0) */
int fx_blas_tune_threads (void);

#ifdef __cplusplus
}
#endif
