/* fx-capture-private.h: shared state of the capture hook, cache and the symbolic interpreter (libpython). */
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "fx/guards.h"
#include "fx/ir.h"

/* One code path per CPython version where the interpreter differs: 3.11 and 3.12 (the bytecode, the frame). */
#if PY_VERSION_HEX >= 0x030C0000
#define FXC_PY312 1
#define FXC_FRAME_FUNC(frame) ((frame)->f_funcobj)
#else
#define FXC_PY312 0
#define FXC_FRAME_FUNC(frame) ((frame)->f_func)
#endif

/* A conditional jump that pops its condition, as the version spells it (3.11: forward and backward forms; 3.12:
   forward only): a `None` test or a truth test, the value that makes it jump, and its direction. */
typedef struct fxc_cjump
{
  bool none_test;             /* POP_JUMP_*_IF_NONE / _IF_NOT_NONE */
  bool when;                  /* truth tests: jumps when the value is true; none tests: when it is None */
  bool backward;
} fxc_cjump;

/* Is opcode a popping conditional jump of this version? Fills *j. */
bool fxc_cond_jump (int opcode, fxc_cjump *j);
/* A store or delete capture does not trace but CPython can make between a graph and its resume function: the stack
   values it pops, or -1 for any other opcode. fxc_store_run makes it on those values (top: the deepest popped
   value first); -1 with an exception set. */
int fxc_store_pops (int opcode);
int fxc_store_run (int opcode, int oparg, PyCodeObject *co, PyObject *globals, PyObject *const *top);

/* Where a graph input or guarded value comes from: a frame local or a global, then attribute reads. */
typedef struct fxc_source
{
  int local;                  /* index in the frame's fast locals, or -1 */
  bool deref;                 /* the local is a free variable's cell: read its contents */
  PyObject *global;           /* global name (str) when local < 0 */
  PyObject *attrs;            /* tuple of attribute names (str) read in turn, or indices (int) read by getitem */
  char *name;                 /* L['self']._modules['fc']._parameters['weight'] */
  int size_of;                /* 0: the value; k > 0: its .size()[k - 1] (a SymInt graph input) */
} fxc_source;

/* A shape-env guard on a dynamic entry: lhs == k * product(rhs) (eq) or lhs >= k; refs index the entry's inputs. */
typedef struct fxc_dimref
{
  int input;
  bool stride;
  int dim;
} fxc_dimref;

typedef struct fxc_shape_guard
{
  size_t guard;               /* index in the entry's guard set (FX_GUARD_SHAPE_ENV) */
  bool eq;
  fxc_dimref lhs;
  int64_t k;
  fxc_dimref rhs[8];
  int n_rhs;
} fxc_shape_guard;

typedef struct fxc_check
{
  size_t guard;               /* index in the entry's guard set */
  fxc_source src;
  PyObject *expected;         /* EQUALS_MATCH: the value; TYPE_MATCH: the type; ID_MATCH: the object */
} fxc_check;

/* One compiled entry on a code object: guards, the compiled callable, how to fetch its inputs and rebuild the result. */
typedef struct fxc_entry
{
  struct fxc_entry *next;
  int frame_id;
  int compile_id;
  PyObject *backend;          /* the backend object (per-backend cache) */
  fx_guard_set guards;
  fxc_check *checks;
  size_t n_checks;
  bool grad_enabled;
  /* Dynamo's GlobalStateGuard: the values of the global-state probes when this entry was compiled (owned refs;
     NULL when the probe set is absent). */
  PyObject **global_state;
  fxc_shape_guard *shape_guards; /* dynamic entries only */
  size_t n_shape_guards;
  PyObject *compiled;         /* backend's callable */
  fxc_source *inputs;
  size_t n_inputs;
  PyObject *out_spec;         /* ('t', i) | ('c', obj) | ('n',) | ('attr', spec, name) | ('T'|'L', [...]) */
  /* A graph break: after the graph runs, the frame continues in CPython at resume_offset (code units) with
     these stack values and locals (specs like out_spec). */
  int resume_offset;
  PyObject *resume_stack;     /* list of specs, bottom first, or NULL when the entry returns */
  PyObject *resume_locals;    /* list of (index, spec) */
  int break_kind;             /* FXC_BREAK_* */
  int break_opcode;           /* JUMP: the POP_JUMP opcode; STORE: the store's opcode */
  int break_oparg;            /* STORE: its argument */
  int call_argc;              /* CALL: argument count */
  PyObject *call_kwnames;     /* CALL: KW_NAMES tuple or NULL */
  PyObject *resume_fn[2];     /* resume functions: [0] fallthrough/next instruction, [1] jump target */
  int resume_at[2];           /* their offsets in code units */
  PyObject *cell_writes;      /* nonlocal stores to the frame's free variables: list of (slot, spec), or NULL */
} fxc_entry;

enum
{
  FXC_BREAK_OTHER,            /* continue the frame in CPython from the breaking instruction */
  FXC_BREAK_JUMP,             /* branch on a tensor: evaluate it, then call the resume function of the branch */
  FXC_BREAK_CALL,             /* an untraceable call: make it, then call the resume function after it */
  FXC_BREAK_STORE,            /* an untraceable store (x.a = v, lst[i] = v, del d[k], global g = v): make it, then
                                 call the resume function after it */
};

/* Result of symbolic interpretation. */
typedef struct fxc_trace
{
  fx_graph *graph;
  PyObject *targets;          /* dict: node name -> Python target object */
  PyObject *examples;         /* list of real example inputs, in placeholder order */
  fxc_source *inputs;
  size_t n_inputs, cap_inputs;
  fx_guard_set guards;
  fxc_check *checks;
  size_t n_checks, cap_checks;
  PyObject *out_spec;
  int resume_offset;
  PyObject *resume_stack;
  PyObject *resume_locals;
  int break_kind, break_opcode, break_oparg, call_argc;
  PyObject *call_kwnames;
  int resume_at[2];
  char *break_reason;         /* graph break: Dynamo's reason text (first line is the gb type) */
  char *break_explanation;
  char *break_user_stack;     /* "  File ..., line N, in f\n    code\n" */
  int break_line;
  char *fail_reason;          /* the frame could not be captured at all: run it in CPython */
  bool fullgraph;
  /* Dynamic shapes: the compile's ShapeEnv (fxcapture._shapes), NULL for a static trace. dyn_fail: why the
     symbolic trace gave up (the frame is traced again with static shapes); dyn_retry: dims were unified, trace
     again with them aliased. */
  PyObject *shape_env;
  char *dyn_fail;
  bool dyn_retry;
  fxc_shape_guard *shape_guards;
  size_t n_shape_guards;
  PyObject *cell_writes;      /* nonlocal stores to the frame's free variables: list of (slot, spec), or NULL */
} fxc_trace;

/* Module-level objects the interpreter needs (set up once). */
typedef struct fxc_state
{
  PyObject *torch;
  PyObject *tensor_type;
  PyObject *module_type;      /* torch.nn.Module */
  PyObject *operator_mod;
  PyObject *partial_type;     /* functools.partial */
  PyObject *builtins;
  PyObject *linecache_getline;
  PyObject *graph_break_fn;   /* fxcapture.graph_break */
  PyObject *glue;             /* the fxcapture Python package */
  PyObject *disallowed;       /* set of ids */
  PyObject *allowed;          /* set of ids */
  PyObject *meta_device;
} fxc_state;

extern fxc_state fxc;

void fxc_source_clear (fxc_source *src);
void fxc_source_copy (fxc_source *dst, const fxc_source *src);
PyObject *fxc_source_eval (const fxc_source *src, PyObject *const *locals, PyObject *globals, PyObject *builtins);
/* A capsule owning a copy of src: the ('s', capsule) spec of a value rebuilt from its source after a graph. */
PyObject *fxc_source_capsule (const fxc_source *src);
/* A tuple t as an instance of the tuple subclass cls: a namedtuple through tuple.__new__ (as its _make does, never
   its Python __new__, a frame the hook would see), a structseq (torch.return_types.max) through its own tp_new.
   New reference, or NULL with an exception. */
PyObject *fxc_tuple_as (PyObject *cls, PyObject *t);
/* The field names of a namedtuple (_fields) or a structseq (__match_args__), new reference, or NULL. */
PyObject *fxc_tuple_fields (PyObject *cls);

void fxc_trace_clear (fxc_trace *trace);
/* Symbolically interprets the frame (CPython 3.11 bytecode). Returns 0 on success (graph, or graph + break);
   -1 with a Python error set on an internal error. trace->fail_reason set: not capturable. */
int fxc_interpret_py311 (PyCodeObject *code, PyObject *func, PyObject *const *locals, PyObject *globals,
                         PyObject *builtins, fxc_trace *trace);

/* Ctrl-C must reach the user whatever capture falls back on: fx-capture.c and fx-capture-py311.c clear errors with
   fxc_err_clear (their PyErr_Clear), which remembers a KeyboardInterrupt; fxc_err_note remembers it without
   clearing; fxc_interrupt_restore sets it again (true when there was one). */
void fxc_err_clear (void);
void fxc_err_note (void);
bool fxc_interrupt_restore (void);

/* Tensor metadata for TENSOR_MATCH (reads the tensor through its Python attributes). */
int fxc_tensor_check_from (PyObject *tensor, fx_tensor_check *out);

/* The _fxcapture module with capture's functions and `compiler` (the entry point's compile functions, required). */
PyObject *fxc_module_new (PyMethodDef *compiler);
