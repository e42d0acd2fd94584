/* fx-capture-py311.c: the symbolic interpreter over CPython 3.11 and 3.12 bytecode that records FX graphs and guards.
   Where the two versions' bytecode differs, the 3.12 forms are in step_py312 and behind FXC_PY312. */
#include "fx-capture-private.h"

#include <opcode.h>
#include <string.h>

#define NEED_OPCODE_TABLES 1
#define Py_BUILD_CORE 1
#include <internal/pycore_opcode.h>
#if FXC_PY312
#include <internal/pycore_intrinsics.h>
#endif
#undef Py_BUILD_CORE

/* 3.12 stores the comparison in COMPARE_OP's upper bits (the low four are a cache mask) */
#if FXC_PY312
#define CMP_INDEX(oparg) ((oparg) >> 4)
#define FOR_ITER_END_SKIP 1   /* exhausted: past the END_FOR that follows the loop */
#define IS_FAST_LOAD(op) ((op) == LOAD_FAST || (op) == LOAD_FAST_CHECK || (op) == LOAD_FAST_AND_CLEAR)
#else
#define IS_FAST_LOAD(op) ((op) == LOAD_FAST)
#define CMP_INDEX(oparg) (oparg)
#define FOR_ITER_END_SKIP 0
#endif

bool
fxc_cond_jump (int opcode, fxc_cjump *j)
{
  switch (opcode)
    {
#if FXC_PY312
    case POP_JUMP_IF_FALSE: *j = (fxc_cjump) { false, false, false }; return true;
    case POP_JUMP_IF_TRUE: *j = (fxc_cjump) { false, true, false }; return true;
    case POP_JUMP_IF_NONE: *j = (fxc_cjump) { true, true, false }; return true;
    case POP_JUMP_IF_NOT_NONE: *j = (fxc_cjump) { true, false, false }; return true;
#else
    case POP_JUMP_FORWARD_IF_FALSE: *j = (fxc_cjump) { false, false, false }; return true;
    case POP_JUMP_FORWARD_IF_TRUE: *j = (fxc_cjump) { false, true, false }; return true;
    case POP_JUMP_BACKWARD_IF_FALSE: *j = (fxc_cjump) { false, false, true }; return true;
    case POP_JUMP_BACKWARD_IF_TRUE: *j = (fxc_cjump) { false, true, true }; return true;
    case POP_JUMP_FORWARD_IF_NONE: *j = (fxc_cjump) { true, true, false }; return true;
    case POP_JUMP_FORWARD_IF_NOT_NONE: *j = (fxc_cjump) { true, false, false }; return true;
    case POP_JUMP_BACKWARD_IF_NONE: *j = (fxc_cjump) { true, true, true }; return true;
    case POP_JUMP_BACKWARD_IF_NOT_NONE: *j = (fxc_cjump) { true, false, true }; return true;
#endif
    default:
      return false;
    }
}

int
fxc_store_pops (int opcode)
{
  switch (opcode)
    {
    case STORE_SUBSCR: return 3;
    case STORE_ATTR: case DELETE_SUBSCR: return 2;
    case DELETE_ATTR: case STORE_GLOBAL: return 1;
    default: return -1;
    }
}

int
fxc_store_run (int opcode, int oparg, PyCodeObject *co, PyObject *globals, PyObject *const *top)
{
  switch (opcode)
    {
    case STORE_SUBSCR:   /* TOS1[TOS] = TOS2 */
      return PyObject_SetItem (top[1], top[2], top[0]);
    case STORE_ATTR:     /* TOS.name = TOS1 */
      return PyObject_SetAttr (top[1], PyTuple_GET_ITEM (co->co_names, oparg), top[0]);
    case DELETE_SUBSCR:  /* del TOS1[TOS] */
      return PyObject_DelItem (top[0], top[1]);
    case DELETE_ATTR:
      return PyObject_DelAttr (top[0], PyTuple_GET_ITEM (co->co_names, oparg));
    case STORE_GLOBAL:
      return PyDict_SetItem (globals, PyTuple_GET_ITEM (co->co_names, oparg), top[0]);
    default:
      PyErr_Format (PyExc_SystemError, "capture: opcode %d is not a store", opcode);
      return -1;
    }
}

/* Whether the instruction at ip (code units) is inside a try block: its exception table has an entry over it
   (entries of 6-bit varints: start, size, target, depth and lasti). */
static bool
in_try_block (PyCodeObject *co, int ip)
{
  const unsigned char *p = (const unsigned char *) PyBytes_AS_STRING (co->co_exceptiontable);
  const unsigned char *end = p + PyBytes_GET_SIZE (co->co_exceptiontable);
  while (p < end)
    {
      int v[4];
      for (int k = 0; k < 4; k++)
        {
          int b = p < end ? *p++ : 0;
          v[k] = b & 63;
          while ((b & 64) && p < end)
            {
              b = *p++;
              v[k] = (v[k] << 6) | (b & 63);
            }
        }
      if (ip >= v[0] && ip < v[0] + v[1])
        return true;
    }
  return false;
}

/* Does the instruction jump backward (a loop)? */
static bool
jumps_backward (int opcode)
{
  fxc_cjump cj;
  return opcode == JUMP_BACKWARD || opcode == JUMP_BACKWARD_NO_INTERRUPT || (fxc_cond_jump (opcode, &cj) && cj.backward);
}

/* every error cleared here may be the user's Ctrl-C: see fxc_err_clear */
#define PyErr_Clear() fxc_err_clear ()

/* isinstance for the tracer's decisions: an error (a user's __class__ or __instancecheck__ raising, Ctrl-C) reads as
   false, cleared through fxc_err_clear so that a KeyboardInterrupt is kept for the caller. */
static int
is_instance (PyObject *obj, PyObject *cls)
{
  int r = PyObject_IsInstance (obj, cls);
  if (r < 0)
    {
      PyErr_Clear ();
      return 0;
    }
  return r;
}

/* torch.utils._traceback.shorten_filename, which Dynamo's guard comments use: the path past its common path with
   torch's package folder, less one more character ("/work/x.py" beside "/opt/torch" prints "ork/x.py"). */
static const char *
shorten_filename (const char *fn)
{
  static char base[4096];
  if (!base[0])
    {
      PyObject *file = PyObject_GetAttrString (fxc.torch, "__file__");
      const char *b = file && PyUnicode_Check (file) ? PyUnicode_AsUTF8 (file) : NULL;
      const char *slash = b ? strrchr (b, '/') : NULL;
      if (slash && (size_t) (slash - b) < sizeof base)
        memcpy (base, b, (size_t) (slash - b));
      else
        base[0] = '?';
      Py_XDECREF (file);
      PyErr_Clear ();
    }
  if (fn[0] != '/' || base[0] != '/')
    return fn;   /* commonpath raises on a relative and an absolute path: the name as it is */
  size_t common = 1, i = 1;
  for (;;)
    {
      size_t j = i;
      while (fn[j] && fn[j] != '/' && fn[j] == base[j])
        j++;
      bool fn_end = fn[j] == 0 || fn[j] == '/', base_end = base[j] == 0 || base[j] == '/';
      if (j == i || !fn_end || !base_end)
        break;
      common = j;
      if (!fn[j] || !base[j])
        break;
      i = j + 1;
    }
  return strlen (fn) > common + 1 ? fn + common + 1 : fn;
}

#define MAX_STACK 256
#define MAX_DEPTH 16
#define GRAD_CTX_NULL_EXIT 100

#ifndef CO_FAST_CELL
#define CO_FAST_CELL 0x40
#endif
#ifndef CO_FAST_FREE
#define CO_FAST_FREE 0x80
#endif

typedef enum
{
  V_NULL,
  V_CONST,     /* a Python value known at trace time */
  V_TENSOR,    /* a graph value: node + example (meta) tensor */
  V_OBJ,       /* a Python object with a source (module, function, nn.Module) */
  V_ATTR,      /* receiver.attr not yet resolved (tensor methods) */
  V_SEQ,       /* tuple/list of vars */
  V_SYM,       /* a SymInt graph value (dynamic shapes): node + hint int in obj, real int in chk; lazy: recv.size(n)
                  whose node is made at first use */
  V_CELL,      /* a closure cell: recv holds its contents (NULL: empty); obj the real cell, if it is one */
  V_FUNC,      /* a function made by MAKE_FUNCTION while tracing: obj the function, items its closure cells */
  V_DICT,      /* a dict built while tracing that holds traced values (Dynamo's ConstDictVariable): obj the tuple of
                  its keys (constants, in insertion order), items the values */
} vkind;

typedef struct var var;
struct var
{
  vkind kind;
  PyObject *obj;          /* CONST/OBJ value; TENSOR example; ATTR: name */
  fx_node *node;
  var *recv;              /* ATTR */
  var **items;            /* SEQ */
  size_t n;
  bool is_list;
  fxc_source src;         /* has_src: guarded/input source */
  bool has_src;
  const char *module_path;/* nn.Module var: "L['self'].fc" for nn_module_stack */
  bool is_iter;           /* an iterator made while tracing: cannot live across a graph break */
  int grad_ctx;           /* V_CONST: 1 a torch.no_grad(), 2 a torch.enable_grad() object; the __exit__ of one
                             entered while tracing: 3 + the grad mode to restore; GRAD_CTX_NULL_EXIT the __exit__
                             of a contextlib.nullcontext() */
  bool lazy;              /* a frame-local tensor not yet a graph input (Dynamo's LazyVariableTracker) */
  PyObject *real;         /* lazy: the real tensor */
  PyObject *chk;          /* dynamic shapes: a meta example at the real sizes (obj has the symbols' hints), or NULL
                             when obj has the real sizes */
  bool cell_loaded;       /* V_CELL of a real cell: recv read from it (or written) */
  bool cell_dirty;        /* V_CELL of a real cell: written while tracing (a nonlocal store) */
  PyObject *nt_class;     /* V_SEQ: the namedtuple class it was built as (kept alive by tr->keep), or NULL */
  bool fresh_dict;        /* V_CONST: a dict display evaluated while tracing (no one outside the trace holds it) */
};

typedef struct frame
{
  struct frame *parent;
  PyCodeObject *code;
  PyObject *globals;
  PyObject *func;
  var **locals;
  int nlocals;
  int line;
  int depth;
  var *self_module;       /* the nn.Module whose forward this is, or NULL */
  var *yields;            /* an inlined generator: the list of the values it yields (run to its end, as
                             list(gen) would), or NULL */
} frame;

typedef struct tracer
{
  fxc_trace *t;
  PyObject *keep;         /* keeps Python objects referenced by vars alive */
  PyObject *builtins;
  PyObject *const *top_locals;
  PyObject *realized;     /* dict: source name -> var capsule index (list idx) */
  var **vars;
  size_t n_vars, cap_vars;
  fx_node *first_body;    /* placeholders go before it */
  fx_module_entry mod_stack[MAX_DEPTH];
  int n_mod_stack;
  PyObject *kw_names;
  char reason[1024];
  int break_gb;           /* 1: a graph break (resume), 0: fail */
  bool dyn_active;        /* the shape env has symbols: results are mapped back to expressions */
  bool has_sym;           /* a SymInt value exists: a failure gives up symbols (the static trace decides) */
  frame *cells_frame;     /* the top frame once traced: unchanged locals are rebuilt from it ("l" specs) */
  bool at_break;          /* its cells become real cells (a break): closures of the trace can be rebuilt over them */
  int grad_mode;          /* torch's grad mode while tracing (0/1); -1: not read yet */
  int grad_depth;         /* no_grad/enable_grad blocks entered and not left: a break inside cannot resume */
  int grad_entry;         /* the mode when tracing began, restored at the end */
  PyObject *spec_memo;    /* out_spec of lists and dicts made while tracing: var address -> its one spec */
  fx_device real_device;  /* the first graph input's device: examples live on meta, annotations say the real one */
  bool has_real_device;
} tracer;

/* ------------------------------------------------------------------ vars */

static var *
var_new (tracer *tr, vkind kind, PyObject *obj)
{
  var *v = calloc (1, sizeof *v);
  if (tr->n_vars == tr->cap_vars)
    {
      tr->cap_vars = tr->cap_vars ? tr->cap_vars * 2 : 64;
      tr->vars = realloc (tr->vars, tr->cap_vars * sizeof *tr->vars);
    }
  tr->vars[tr->n_vars++] = v;
  v->kind = kind;
  v->src.local = -1;
  if (obj)
    {
      PyList_Append (tr->keep, obj);
      v->obj = obj;
    }
  return v;
}

static void
tracer_free_vars (tracer *tr)
{
  for (size_t i = 0; i < tr->n_vars; i++)
    {
      fxc_source_clear (&tr->vars[i]->src);
      free (tr->vars[i]->items);
      free (tr->vars[i]);
    }
  free (tr->vars);
}

static int fail (tracer *tr, int is_break, const char *fmt, ...) FX_PRINTF (3, 4);

static int
fail (tracer *tr, int is_break, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (tr->reason, sizeof tr->reason, fmt, ap);
  va_end (ap);
  tr->break_gb = is_break;
  /* With SymInt values around, a failure may come from them (a branch on a size): trace again with static shapes,
     which reproduces any failure that does not. */
  if (tr->has_sym && !tr->t->dyn_retry && !tr->t->dyn_fail)
    {
      size_t l = strcspn (tr->reason, "\n");
      char msg[256];
      snprintf (msg, sizeof msg, "SymInt sizes stopped the trace (%.*s): the frame is specialized", (int) (l < 200 ? l : 200),
                tr->reason);
      tr->t->dyn_fail = strdup (msg);
    }
  return 1;
}

/* ------------------------------------------------------------------ sources */

static void
source_set_local (fxc_source *s, int idx, const char *name)
{
  s->local = idx;
  s->global = NULL;
  s->attrs = NULL;
  size_t len = strlen (name) + 8;
  s->name = malloc (len);
  snprintf (s->name, len, "L['%s']", name);
}

static void
source_set_global (fxc_source *s, PyObject *name)
{
  s->local = -1;
  Py_INCREF (name);
  s->global = name;
  s->attrs = NULL;
  const char *n = PyUnicode_AsUTF8 (name);
  size_t len = strlen (n) + 8;
  s->name = malloc (len);
  snprintf (s->name, len, "G['%s']", n);
}

/* base.attr, with the 2.11 spelling for module children: ._modules['fc'], ._parameters['w'], ._buffers['b']. */
static void
source_attr (fxc_source *dst, const fxc_source *base, PyObject *attr, const char *container)
{
  fxc_source_copy (dst, base);
  Py_ssize_t n = base->attrs ? PyTuple_GET_SIZE (base->attrs) : 0;
  /* module.fc named L['self']._modules['fc'] is read the same way: the container attribute, then the key (a
     getattr of "fc" would raise AttributeError in the instance lookup before nn.Module.__getattr__ finds it, an
     exception on every guard check) */
  PyObject *t = PyTuple_New (n + (container ? 2 : 1));
  for (Py_ssize_t i = 0; i < n; i++)
    {
      PyObject *a = PyTuple_GET_ITEM (base->attrs, i);
      Py_INCREF (a);
      PyTuple_SET_ITEM (t, i, a);
    }
  if (container)
    {
      PyTuple_SET_ITEM (t, n, PyUnicode_FromString (container));
      PyTuple_SET_ITEM (t, n + 1, PyTuple_Pack (1, attr));
    }
  else
    {
      Py_INCREF (attr);
      PyTuple_SET_ITEM (t, n, attr);
    }
  Py_XDECREF (dst->attrs);
  dst->attrs = t;
  const char *a = PyUnicode_AsUTF8 (attr);
  size_t len = strlen (base->name) + strlen (a) + 32;
  free (dst->name);
  dst->name = malloc (len);
  if (container)
    snprintf (dst->name, len, "%s.%s['%s']", base->name, container, a);
  else
    snprintf (dst->name, len, "%s.%s", base->name, a);
}

/* base[i]: an item of a tuple or list read from a source (the step is an int in the attrs tuple). */
static void
source_item (fxc_source *dst, const fxc_source *base, Py_ssize_t index)
{
  fxc_source_copy (dst, base);
  Py_ssize_t n = base->attrs ? PyTuple_GET_SIZE (base->attrs) : 0;
  PyObject *t = PyTuple_New (n + 1);
  for (Py_ssize_t i = 0; i < n; i++)
    PyTuple_SET_ITEM (t, i, Py_NewRef (PyTuple_GET_ITEM (base->attrs, i)));
  PyTuple_SET_ITEM (t, n, PyLong_FromSsize_t (index));
  Py_XDECREF (dst->attrs);
  dst->attrs = t;
  size_t len = strlen (base->name) + 32;
  free (dst->name);
  dst->name = malloc (len);
  snprintf (dst->name, len, "%s[%zd]", base->name, index);
}

/* base[key]: a dict item (the step is a 1-tuple (key,) in the attrs tuple). */
static void
source_key (fxc_source *dst, const fxc_source *base, PyObject *key)
{
  fxc_source_copy (dst, base);
  Py_ssize_t n = base->attrs ? PyTuple_GET_SIZE (base->attrs) : 0;
  PyObject *t = PyTuple_New (n + 1);
  for (Py_ssize_t i = 0; i < n; i++)
    PyTuple_SET_ITEM (t, i, Py_NewRef (PyTuple_GET_ITEM (base->attrs, i)));
  PyTuple_SET_ITEM (t, n, PyTuple_Pack (1, key));
  Py_XDECREF (dst->attrs);
  dst->attrs = t;
  PyObject *r = PyObject_Repr (key);
  const char *rs = r ? PyUnicode_AsUTF8 (r) : "?";
  size_t len = strlen (base->name) + strlen (rs) + 8;
  free (dst->name);
  dst->name = malloc (len);
  snprintf (dst->name, len, "%s[%s]", base->name, rs);
  Py_XDECREF (r);
  PyErr_Clear ();
}

/* re.sub(r"[^a-zA-Z0-9]+", "_", name) as builder.py names graph inputs. */
static char *
source_input_name (const char *name)
{
  size_t len = strlen (name);
  char *out = malloc (len + 1);
  size_t j = 0;
  bool in_run = false;
  for (size_t i = 0; i < len; i++)
    {
      char c = name[i];
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (ok)
        {
          out[j++] = c;
          in_run = false;
        }
      else if (!in_run)
        {
          out[j++] = '_';
          in_run = true;
        }
    }
  out[j] = 0;
  return out;
}

/* ------------------------------------------------------------------ stack traces and metadata */

static void
frame_stack_trace (tracer *tr, frame *f, fx_buf *out)
{
  if (f->parent)
    frame_stack_trace (tr, f->parent, out);
  PyObject *line = PyObject_CallFunction (fxc.linecache_getline, "Oi", f->code->co_filename, f->line);
  const char *code = "";
  PyObject *stripped = NULL;
  if (line)
    {
      stripped = PyObject_CallMethod (line, "strip", NULL);
      if (stripped)
        code = PyUnicode_AsUTF8 (stripped);
    }
  PyErr_Clear ();
  fx_buf_printf (out, "  File \"%s\", line %d, in %s\n    %s\n", PyUnicode_AsUTF8 (f->code->co_filename), f->line,
                 PyUnicode_AsUTF8 (f->code->co_name), code ? code : "");
  Py_XDECREF (line);
  Py_XDECREF (stripped);
}

static void
node_set_meta (tracer *tr, frame *f, fx_node *node, const char *source_fn_target)
{
  fx_graph *g = tr->t->graph;
  fx_buf st;
  fx_buf_init (&st);
  frame_stack_trace (tr, f, &st);
  node->meta.stack_trace = fx_arena_strdup (g->arena, st.data);
  fx_buf_free (&st);
  if (tr->n_mod_stack > 0)
    {
      node->meta.nn_module_stack = fx_arena_alloc (g->arena, tr->n_mod_stack * sizeof (fx_module_entry));
      for (int i = 0; i < tr->n_mod_stack; i++)
        {
          node->meta.nn_module_stack[i].key = fx_arena_strdup (g->arena, tr->mod_stack[i].key);
          node->meta.nn_module_stack[i].path = fx_arena_strdup (g->arena, tr->mod_stack[i].path);
          node->meta.nn_module_stack[i].type = fx_arena_strdup (g->arena, tr->mod_stack[i].type);
        }
      node->meta.n_nn_module_stack = tr->n_mod_stack;
    }
  node->meta.source_fn_stack = fx_arena_alloc (g->arena, sizeof (fx_source_fn));
  node->meta.source_fn_stack[0].name = node->name;
  node->meta.source_fn_stack[0].target = fx_arena_strdup (g->arena, source_fn_target);
  node->meta.n_source_fn_stack = 1;
}

static void
set_example_meta (tracer *tr, fx_node *node, PyObject *example)
{
  fx_tensor_check c;
  if (fxc_tensor_check_from (example, &c) < 0)
    {
      PyErr_Clear ();
      return;
    }
  fx_graph *g = tr->t->graph;
  fx_tensor_meta *m = &node->meta.val.tensor;
  node->meta.val.kind = FX_VAL_TENSOR;
  m->dtype = c.dtype;
  m->ndim = c.ndim;
  m->sizes = fx_arena_alloc (g->arena, (c.ndim + 1) * sizeof (fx_dim));
  m->strides = fx_arena_alloc (g->arena, (c.ndim + 1) * sizeof (fx_dim));
  for (int i = 0; i < c.ndim; i++)
    {
      m->sizes[i].value = c.sizes[i];
      m->strides[i].value = c.strides[i];
    }
  m->device = c.device.type == FX_DEVICE_META && tr->has_real_device ? tr->real_device : c.device;
  m->has_device = true;
  m->requires_grad = c.requires_grad;
}

/* ------------------------------------------------------------------ guards */

static void line_comment (frame *f, char *out, size_t size);
static void user_stack (frame *f, fx_buf *out);

static void
add_check (tracer *tr, fx_guard_kind kind, const fxc_source *src, const char *code, PyObject *expected, frame *f)
{
  fxc_trace *t = tr->t;
  char comment[512] = "";
  fx_buf stack;
  fx_buf_init (&stack);
  if (f && kind != FX_GUARD_TENSOR_MATCH && kind != FX_GUARD_TYPE_MATCH)
    {
      /* the user line that installed the guard: "return x * n  # prog.py:4 in f", and the frames to it */
      line_comment (f, comment, sizeof comment);
      user_stack (f, &stack);
    }
  fx_guard *g = fx_guard_set_add (&t->guards, kind, src->name, code, comment[0] ? comment : NULL);
  if (g && stack.len)
    fx_guard_set_user_stack (g, stack.data);
  fx_buf_free (&stack);
  if (t->n_checks == t->cap_checks)
    {
      t->cap_checks = t->cap_checks ? t->cap_checks * 2 : 16;
      t->checks = realloc (t->checks, t->cap_checks * sizeof *t->checks);
    }
  fxc_check *c = &t->checks[t->n_checks++];
  memset (c, 0, sizeof *c);
  c->guard = t->guards.n_guards - 1;
  fxc_source_copy (&c->src, src);
  Py_XINCREF (expected);
  c->expected = expected;
}

/* A tuple of plain constants (None, bool, int, float, str, and such tuples): guarded by value. */
static bool
tuple_of_consts (PyObject *t)
{
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE (t); i++)
    {
      PyObject *o = PyTuple_GET_ITEM (t, i);
      if (!(o == Py_None || PyBool_Check (o) || PyLong_CheckExact (o) || PyFloat_CheckExact (o)
            || PyUnicode_CheckExact (o) || (PyTuple_CheckExact (o) && tuple_of_consts (o))))
        return false;
    }
  return true;
}

/* Whether a tuple or list holds a tensor (nested tuples/lists included): then it is traced item by item. */
static bool
seq_has_tensor (PyObject *obj, int depth)
{
  if (depth > 8)
    return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE (obj); i++)
    {
      PyObject *o = PySequence_Fast_GET_ITEM (obj, i);
      if (PyObject_TypeCheck (o, (PyTypeObject *) fxc.tensor_type)
          || ((PyTuple_CheckExact (o) || PyList_CheckExact (o)) && seq_has_tensor (o, depth + 1)))
        return true;
    }
  return false;
}

static void
guard_value (tracer *tr, const fxc_source *src, PyObject *obj, frame *f)
{
  char code[512];
  if (obj == Py_None)
    {
      snprintf (code, sizeof code, "___check_obj_id(%s, %lu)", src->name, (unsigned long) (uintptr_t) obj);
      add_check (tr, FX_GUARD_ID_MATCH, src, code, obj, f);
    }
  else if (PyBool_Check (obj) || PyLong_CheckExact (obj) || PyFloat_CheckExact (obj) || PyUnicode_CheckExact (obj))
    {
      PyObject *r = PyObject_Repr (obj);
      snprintf (code, sizeof code, "%s == %s", src->name, r ? PyUnicode_AsUTF8 (r) : "?");
      Py_XDECREF (r);
      add_check (tr, FX_GUARD_EQUALS_MATCH, src, code, obj, f);
    }
  else if (PyTuple_Check (obj) && tuple_of_consts (obj))
    {
      /* torch.Size, int tuples (a shape argument) and other constant tuples: by value, or every new object would
         recompile */
      PyObject *r = PyObject_Repr (obj);
      snprintf (code, sizeof code, "%s == %s", src->name, r ? PyUnicode_AsUTF8 (r) : "?");
      Py_XDECREF (r);
      add_check (tr, FX_GUARD_EQUALS_MATCH, src, code, obj, f);
    }
  else if (PyFunction_Check (obj) && PyFunction_GET_CLOSURE (obj))
    {
      /* CLOSURE_MATCH: a closure by its __code__ (another closure of the same code passes; the cell contents the
         trace read have their own guards) */
      fxc_source cs = { .local = -1 };
      PyObject *attr = PyUnicode_FromString ("__code__");
      source_attr (&cs, src, attr, NULL);
      Py_DECREF (attr);
      PyObject *co = PyFunction_GET_CODE (obj);
      snprintf (code, sizeof code, "___check_obj_id(%s, %lu)", cs.name, (unsigned long) (uintptr_t) co);
      add_check (tr, FX_GUARD_ID_MATCH, &cs, code, co, f);
      fxc_source_clear (&cs);
    }
  else if (is_instance (obj, fxc.module_type) == 1)
    {
      snprintf (code, sizeof code, "___check_type_id(%s, %lu)", src->name, (unsigned long) (uintptr_t) Py_TYPE (obj));
      add_check (tr, FX_GUARD_TYPE_MATCH, src, code, (PyObject *) Py_TYPE (obj), f);
    }
  else
    {
      snprintf (code, sizeof code, "___check_obj_id(%s, %lu)", src->name, (unsigned long) (uintptr_t) obj);
      add_check (tr, FX_GUARD_ID_MATCH, src, code, obj, f);
    }
}

static int force (tracer *tr, frame *f, var *v);

/* ------------------------------------------------------------------ Python values <-> fx_arg */

static int
py_to_arg (tracer *tr, var *v, fx_arg *out, fx_arena *arena)
{
  if (v->kind == V_TENSOR || (v->kind == V_SYM && v->node))
    {
      *out = fx_arg_node (v->node);
      return 0;
    }
  if (v->kind == V_SEQ)
    {
      fx_arg *items = fx_arena_alloc (arena, (v->n + 1) * sizeof (fx_arg));
      for (size_t i = 0; i < v->n; i++)
        if (py_to_arg (tr, v->items[i], &items[i], arena))
          return 1;
      *out = v->is_list ? fx_arg_list (items, v->n) : fx_arg_tuple (items, v->n);
      return 0;
    }
  if (v->kind != V_CONST && v->kind != V_OBJ)
    return 1;
  PyObject *o = v->obj;
  if (o == Py_None)
    *out = fx_arg_none ();
  else if (PyBool_Check (o))
    *out = fx_arg_bool (o == Py_True);
  else if (PyLong_Check (o))
    *out = fx_arg_int (PyLong_AsLongLong (o));
  else if (PyFloat_Check (o))
    *out = fx_arg_float (PyFloat_AsDouble (o));
  else if (PyUnicode_Check (o))
    *out = fx_arg_str (fx_arena_strdup (arena, PyUnicode_AsUTF8 (o)));
  else if (o == Py_Ellipsis)
    out->kind = FX_ARG_ELLIPSIS;
  else if (PySlice_Check (o))
    {
      PySliceObject *sl = (PySliceObject *) o;
      PyObject *parts[3] = { sl->start, sl->stop, sl->step };
      fx_arg *items = fx_arena_alloc (arena, 3 * sizeof (fx_arg));
      for (int i = 0; i < 3; i++)
        {
          var tmp = { .kind = V_CONST, .obj = parts[i] };
          if (py_to_arg (tr, &tmp, &items[i], arena))
            return 1;
        }
      out->kind = FX_ARG_SLICE;
      out->u.seq.items = items;
      out->u.seq.n = 3;
    }
  else if (PyTuple_Check (o) || PyList_Check (o))
    {
      Py_ssize_t n = PySequence_Fast_GET_SIZE (o);
      fx_arg *items = fx_arena_alloc (arena, (n + 1) * sizeof (fx_arg));
      for (Py_ssize_t i = 0; i < n; i++)
        {
          var tmp = { .kind = V_CONST, .obj = PySequence_Fast_GET_ITEM (o, i) };
          if (py_to_arg (tr, &tmp, &items[i], arena))
            return 1;
        }
      *out = PyList_Check (o) ? fx_arg_list (items, n) : fx_arg_tuple (items, n);
    }
  else
    {
      PyObject *s = PyObject_Str (o);
      const char *text = s ? PyUnicode_AsUTF8 (s) : NULL;
      PyErr_Clear ();
      fx_device dev;
      if (text && strncmp (text, "torch.", 6) == 0 && fx_dtype_from_name (text) != FX_DTYPE_UNKNOWN)
        *out = fx_arg_dtype (fx_dtype_from_name (text));
      else if (text && strcmp (Py_TYPE (o)->tp_name, "torch.device") == 0 && fx_device_parse (text, &dev))
        *out = fx_arg_device (dev);   /* device=x.device: the graph keeps the constant, as Dynamo's does */
      else
        {
          Py_XDECREF (s);
          return 1;
        }
      Py_XDECREF (s);
    }
  return 0;
}

/* The example value of an argument for running the op on meta tensors; real: at the real sizes where a dynamic
   shapes example (chk) exists, for the check of each mapped result. */
static PyObject *
var_example_at (var *v, bool real)
{
  if (v->kind == V_SEQ)
    {
      PyObject *t = v->is_list ? PyList_New (v->n) : PyTuple_New (v->n);
      for (size_t i = 0; i < v->n; i++)
        {
          PyObject *e = var_example_at (v->items[i], real);
          if (!e)
            {
              Py_DECREF (t);
              return NULL;
            }
          if (v->is_list)
            PyList_SET_ITEM (t, i, e);
          else
            PyTuple_SET_ITEM (t, i, e);
        }
      return t;
    }
  if (v->kind == V_DICT)
    {
      PyObject *d = PyDict_New ();
      for (size_t i = 0; i < v->n; i++)
        {
          PyObject *e = var_example_at (v->items[i], real);
          if (!e || PyDict_SetItem (d, PyTuple_GET_ITEM (v->obj, i), e) < 0)
            {
              Py_XDECREF (e);
              Py_DECREF (d);
              return NULL;
            }
          Py_DECREF (e);
        }
      return d;
    }
  PyObject *o = real && v->chk ? v->chk : v->obj;
  return o ? Py_NewRef (o) : NULL;
}

static PyObject *
var_example (var *v)
{
  return var_example_at (v, false);
}

static PyObject *
var_example_real (var *v)
{
  return var_example_at (v, true);
}

static bool
var_has_tensor (var *v)
{
  if (v->kind == V_TENSOR)
    return true;
  /* A real tensor known only as a value (no source): never computed on at trace time, whose result would be baked
     into the entry; putting it into the graph fails, which breaks the graph. */
  if (v->kind == V_CONST && v->obj && PyObject_TypeCheck (v->obj, (PyTypeObject *) fxc.tensor_type))
    return true;
  if (v->kind == V_SEQ || v->kind == V_DICT)
    for (size_t i = 0; i < v->n; i++)
      if (var_has_tensor (v->items[i]))
        return true;
  return false;
}

/* ------------------------------------------------------------------ dicts and namedtuples built while tracing */

static var *const_var (tracer *tr, PyObject *obj);

/* The index of key in a V_DICT, or -1 (keys compare as dict keys do: identity, then equality). */
static Py_ssize_t
dict_find (const var *d, PyObject *key)
{
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE (d->obj); i++)
    {
      PyObject *k = PyTuple_GET_ITEM (d->obj, i);
      int eq = k == key ? 1 : PyObject_RichCompareBool (k, key, Py_EQ);
      if (eq < 0)
        PyErr_Clear ();
      if (eq == 1)
        return i;
    }
  return -1;
}

/* d[key] = value on a V_DICT: replaced in place, or appended (a new keys tuple). 0, or -1 with an unhashable key. */
static int
dict_store (tracer *tr, var *d, PyObject *key, var *value)
{
  Py_ssize_t i = dict_find (d, key);
  if (i >= 0)
    {
      d->items[i] = value;
      return 0;
    }
  if (PyObject_Hash (key) == -1)
    {
      PyErr_Clear ();
      return -1;
    }
  Py_ssize_t n = PyTuple_GET_SIZE (d->obj);
  PyObject *keys = PyTuple_New (n + 1);
  for (Py_ssize_t k = 0; k < n; k++)
    PyTuple_SET_ITEM (keys, k, Py_NewRef (PyTuple_GET_ITEM (d->obj, k)));
  PyTuple_SET_ITEM (keys, n, Py_NewRef (key));
  PyList_Append (tr->keep, keys);
  Py_DECREF (keys);
  d->obj = keys;
  d->items = realloc (d->items, (d->n + 2) * sizeof (var *));
  d->items[d->n++] = value;
  return 0;
}

/* A dict of n (key, value) pairs (keys: constant vars), later keys winning as in a dict display; NULL without a
   reason when a key is not a hashable constant. */
static var *
dict_new (tracer *tr, var *const *keys, var *const *values, size_t n)
{
  PyObject *none = PyTuple_New (0);
  var *d = var_new (tr, V_DICT, none);
  Py_DECREF (none);
  for (size_t i = 0; i < n; i++)
    if (keys[i]->kind != V_CONST || dict_store (tr, d, keys[i]->obj, values[i]) < 0)
      return NULL;
  return d;
}

/* A V_SEQ of const vars over the items of a Python tuple (a dict's keys). */
static var *
const_seq (tracer *tr, PyObject *tuple)
{
  var *v = var_new (tr, V_SEQ, NULL);
  v->items = malloc ((PyTuple_GET_SIZE (tuple) + 1) * sizeof (var *));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE (tuple); i++)
    v->items[v->n++] = const_var (tr, PyTuple_GET_ITEM (tuple, i));
  return v;
}

/* A constant tuple or list as a V_SEQ of const vars (unpacking and extending treat both alike); v otherwise, or NULL
   with an exception. */
static var *
seq_view (tracer *tr, var *v)
{
  if (v->kind != V_CONST || !v->obj || !(PyTuple_Check (v->obj) || PyList_Check (v->obj)))
    return v;
  PyObject *t = PySequence_Tuple (v->obj);
  if (!t)
    return NULL;
  var *s = const_seq (tr, t);
  Py_DECREF (t);
  return s;
}

/* keys(), values(), items(), get(k[, default]) of a V_DICT; NULL with no reason set: not handled. */
static var *
dict_method (tracer *tr, var *d, const char *meth, var **args, size_t nargs)
{
  if (strcmp (meth, "get") == 0 && (nargs == 1 || nargs == 2) && args[0]->kind == V_CONST)
    {
      Py_ssize_t i = dict_find (d, args[0]->obj);
      return i >= 0 ? d->items[i] : nargs == 2 ? args[1] : const_var (tr, Py_None);
    }
  if (nargs != 0)
    return NULL;
  if (strcmp (meth, "keys") == 0)
    return const_seq (tr, d->obj);
  bool items = strcmp (meth, "items") == 0;
  if (!items && strcmp (meth, "values") != 0)
    return NULL;
  var *v = var_new (tr, V_SEQ, NULL);
  v->items = malloc ((d->n + 1) * sizeof (var *));
  for (size_t i = 0; i < d->n; i++)
    {
      var *item = d->items[i];
      if (items)
        {
          item = var_new (tr, V_SEQ, NULL);
          item->items = malloc (3 * sizeof (var *));
          item->items[0] = const_var (tr, PyTuple_GET_ITEM (d->obj, i));
          item->items[1] = d->items[i];
          item->n = 2;
        }
      v->items[v->n++] = item;
    }
  return v;
}

/* A namedtuple class called while tracing: a tuple var of its fields (keywords by field name, defaults from
   _field_defaults), rebuilt as the class after the graph ran. NULL with a reason on bad arguments. */
static var *
namedtuple_new (tracer *tr, PyObject *cls, var **args, size_t nargs, PyObject *kwnames)
{
  PyObject *fields = PyObject_GetAttrString (cls, "_fields");
  PyObject *defaults = PyObject_GetAttrString (cls, "_field_defaults");
  PyErr_Clear ();
  size_t npos = nargs - (kwnames ? (size_t) PyTuple_GET_SIZE (kwnames) : 0);
  Py_ssize_t nf = fields && PyTuple_Check (fields) ? PyTuple_GET_SIZE (fields) : -1;
  var *v = NULL;
  if (nf >= 0 && npos <= (size_t) nf)
    {
      v = var_new (tr, V_SEQ, NULL);
      v->items = calloc ((size_t) nf + 1, sizeof (var *));
      v->n = (size_t) nf;
      v->nt_class = cls;
      PyList_Append (tr->keep, cls);
      for (size_t i = 0; i < npos; i++)
        v->items[i] = args[i];
      for (size_t i = npos; v && i < nargs; i++)
        {
          PyObject *name = PyTuple_GET_ITEM (kwnames, i - npos);
          Py_ssize_t at = -1;
          for (Py_ssize_t k = 0; k < nf && at < 0; k++)
            if (PyUnicode_Compare (PyTuple_GET_ITEM (fields, k), name) == 0)
              at = k;
          if (at < 0 || v->items[at])
            v = NULL;
          else
            v->items[at] = args[i];
        }
      for (Py_ssize_t k = 0; v && k < nf; k++)
        if (!v->items[k])
          {
            PyObject *dv = defaults && PyDict_Check (defaults) ? PyDict_GetItem (defaults, PyTuple_GET_ITEM (fields, k)) : NULL;
            if (dv)
              v->items[k] = const_var (tr, dv);
            else
              v = NULL;
          }
    }
  Py_XDECREF (fields);
  Py_XDECREF (defaults);
  if (!v)
    fail (tr, 0, "namedtuple %s called with arguments that do not match its fields", ((PyTypeObject *) cls)->tp_name);
  return v;
}

/* ------------------------------------------------------------------ dynamic shapes */

/* Gives up on symbols for this compile: the frame is traced again with static shapes, with this reason. */
static int dyn_give_up (tracer *tr, const char *fmt, ...) FX_PRINTF (2, 3);

static int
dyn_give_up (tracer *tr, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  if (!tr->t->dyn_fail)
    tr->t->dyn_fail = strdup (msg);
  return fail (tr, 0, "dynamic shapes: %s", msg);
}

/* The source line F is at, stripped (linecache, as traceback does), or NULL. */
static PyObject *
source_line (frame *f)
{
  PyObject *line = PyObject_CallFunction (fxc.linecache_getline, "Oi", f->code->co_filename, f->line);
  PyObject *stripped = line ? PyObject_CallMethod (line, "strip", NULL) : NULL;
  Py_XDECREF (line);
  return stripped;
}

/* The user line reading a value, as guards.py comments it: "x = a / b  # prog.py:6 in f". */
static void
line_comment (frame *f, char *out, size_t size)
{
  out[0] = 0;
  if (!f)
    return;
  PyObject *stripped = source_line (f);
  const char *file = PyUnicode_AsUTF8 (f->code->co_filename);
  if (stripped && file)
    snprintf (out, size, "%s  # %s:%d in %s", PyUnicode_AsUTF8 (stripped), shorten_filename (file), f->line,
              PyUnicode_AsUTF8 (f->code->co_name));
  Py_XDECREF (stripped);
  PyErr_Clear ();
}

/* The user frames down to F, outermost first, as traceback.format_list writes them (without the last newline):
   '  File "/abs/prog.py", line 4, in f\n    return x * n'. Dynamo 2.x puts them under a failing value guard. */
static void
user_stack (frame *f, fx_buf *out)
{
  frame *chain[64];
  int n = 0;
  for (frame *p = f; p && n < (int) (sizeof chain / sizeof *chain); p = p->parent)
    chain[n++] = p;
  for (int i = n - 1; i >= 0; i--)
    {
      frame *p = chain[i];
      const char *file = PyUnicode_AsUTF8 (p->code->co_filename);
      const char *name = PyUnicode_AsUTF8 (p->code->co_name);
      if (!file || !name)
        {
          PyErr_Clear ();
          continue;
        }
      fx_buf_printf (out, "%s  File \"%s\", line %d, in %s", out->len ? "\n" : "", file, p->line, name);
      PyObject *stripped = source_line (p);
      const char *text = stripped ? PyUnicode_AsUTF8 (stripped) : NULL;
      if (text && *text)
        fx_buf_printf (out, "\n    %s", text);
      Py_XDECREF (stripped);
      PyErr_Clear ();
    }
}

/* Whether a tensor var's sizes or strides hold symbols. */
static bool
var_is_symbolic (var *v)
{
  if (v->kind != V_TENSOR || !v->node || v->node->meta.val.kind != FX_VAL_TENSOR)
    return false;
  const fx_tensor_meta *m = &v->node->meta.val.tensor;
  for (int i = 0; i < m->ndim; i++)
    if (m->sizes[i].sym || (m->strides && m->strides[i].sym))
      return true;
  return false;
}

/* Whether a var (or a sequence's items) holds a tensor with symbolic sizes. */
static bool
var_any_symbolic (var *v)
{
  if (v->kind == V_SEQ)
    {
      for (size_t i = 0; i < v->n; i++)
        if (var_any_symbolic (v->items[i]))
          return true;
      return false;
    }
  return v->kind == V_SYM || var_is_symbolic (v);
}

/* Sets dims from lists of expressions (str or None) and their real values. */
static void
apply_dims (fx_graph *g, fx_dim *dims, int n, PyObject *exprs, PyObject *reals)
{
  for (int i = 0; i < n && i < PySequence_Size (exprs); i++)
    {
      PyObject *e = PySequence_GetItem (exprs, i);
      PyObject *r = reals ? PySequence_GetItem (reals, i) : NULL;
      if (e && e != Py_None)
        dims[i].sym = fx_arena_strdup (g->arena, PyUnicode_AsUTF8 (e));
      if (r)
        dims[i].value = PyLong_AsLongLong (r);
      Py_XDECREF (e);
      Py_XDECREF (r);
    }
  PyErr_Clear ();
}

/* An op's meta result on the hints -> the node's symbolic sizes and strides. Returns -1 after giving up. */
static int
map_result (tracer *tr, fx_node *node, PyObject *result, PyObject *pargs, PyObject *pkw)
{
  PyObject *size = PyObject_CallMethod (result, "size", NULL);
  PyObject *stride = size ? PyObject_CallMethod (result, "stride", NULL) : NULL;
  PyObject *m = stride ? PyObject_CallMethod (tr->t->shape_env, "map_tensor", "OOOO", size, stride, pargs,
                                              pkw ? pkw : Py_None)
                       : NULL;
  Py_XDECREF (size);
  Py_XDECREF (stride);
  if (!m)
    {
      PyObject *et, *ev, *tb;
      PyErr_Fetch (&et, &ev, &tb);
      PyObject *msg = ev ? PyObject_Str (ev) : NULL;
      PyErr_Clear ();
      dyn_give_up (tr, "%s", msg ? PyUnicode_AsUTF8 (msg) : "a result's shape has no expression");
      Py_XDECREF (msg);
      Py_XDECREF (et);
      Py_XDECREF (ev);
      Py_XDECREF (tb);
      PyErr_Clear ();
      return -1;
    }
  fx_tensor_meta *tm = &node->meta.val.tensor;
  for (int k = 0; k < 2; k++)
    {
      fx_dim *dims = k == 0 ? tm->sizes : tm->strides;
      PyObject *pairs = PyTuple_GET_ITEM (m, k);
      for (Py_ssize_t i = 0; dims && i < PyList_GET_SIZE (pairs) && i < tm->ndim; i++)
        {
          PyObject *p = PyList_GET_ITEM (pairs, i);
          PyObject *e = PyTuple_GET_ITEM (p, 0);
          dims[i].sym = e == Py_None ? NULL : fx_arena_strdup (tr->t->graph->arena, PyUnicode_AsUTF8 (e));
          dims[i].value = PyLong_AsLongLong (PyTuple_GET_ITEM (p, 1));
        }
    }
  Py_DECREF (m);
  return 0;
}

/* Indices in a tensor's _dynamo_dynamic_indices / _dynamo_static_indices (mark_dynamic / mark_static). */
static PyObject *
marked_indices (PyObject *tensor, const char *attr)
{
  PyObject *s = PyObject_GetAttrString (tensor, attr);
  if (!s)
    {
      PyErr_Clear ();
      return PyFrozenSet_New (NULL);
    }
  return s;
}

/* The op run on examples at the real sizes (new reference), or NULL. */
static PyObject *
run_real (PyObject *run_fn, var **args, size_t nargs, size_t npos, PyObject *kwnames)
{
  PyObject *pargs = PyTuple_New (npos);
  PyObject *pkw = nargs > npos ? PyDict_New () : NULL;
  PyObject *r = NULL;
  for (size_t i = 0; i < nargs; i++)
    {
      PyObject *e = var_example_real (args[i]);
      if (!e)
        goto out;
      if (i < npos)
        PyTuple_SET_ITEM (pargs, i, e);
      else
        {
          PyDict_SetItem (pkw, PyTuple_GET_ITEM (kwnames, i - npos), e);
          Py_DECREF (e);
        }
    }
  r = PyObject_Call (run_fn, pargs, pkw);
out:
  PyErr_Clear ();
  Py_DECREF (pargs);
  Py_XDECREF (pkw);
  return r;
}

/* Whether a real-size result has the sizes and strides the node's mapped expressions give. */
static bool
real_matches (const fx_node *node, PyObject *r)
{
  if (!r || !PyObject_TypeCheck (r, (PyTypeObject *) fxc.tensor_type))
    return false;
  fx_tensor_check c;
  const fx_tensor_meta *m = &node->meta.val.tensor;
  bool same = fxc_tensor_check_from (r, &c) == 0 && c.ndim == m->ndim;
  PyErr_Clear ();
  for (int i = 0; same && i < m->ndim && i < FX_GUARD_MAX_DIMS; i++)
    same = c.sizes[i] == m->sizes[i].value && (!m->strides || c.strides[i] == m->strides[i].value);
  return same;
}

/* Runs the op again on examples at the real sizes: the mapped expressions must give the real result's sizes and
   strides (an op whose shape depends on the values, e.g. x[:5] on a dim of 3, gives up symbols here). Returns the
   real-size example (new reference), or NULL after giving up. */
static PyObject *
check_result (tracer *tr, fx_node *node, PyObject *run_fn, var **args, size_t nargs, size_t npos, PyObject *kwnames)
{
  PyObject *r = run_real (run_fn, args, nargs, npos, kwnames);
  if (!real_matches (node, r))
    {
      Py_CLEAR (r);
      dyn_give_up (tr, "%s: its result on the symbols' hints does not match the real sizes",
                   fx_target_base_name (&node->target, tr->t->graph->arena));
    }
  return r;
}

/* Emits a node; runs fn on the examples (meta tensors) to get the result's metadata. */
static var *
emit (tracer *tr, frame *f, fx_opcode op, fx_target target, PyObject *target_obj, PyObject *run_fn,
      var **args, size_t nargs, PyObject *kwnames, const char *source_fn)
{
  fx_graph *g = tr->t->graph;
  size_t nkw = kwnames ? PyTuple_GET_SIZE (kwnames) : 0;
  size_t npos = nargs - nkw;
  fx_arg *fargs = fx_arena_alloc (g->arena, (npos + 1) * sizeof (fx_arg));
  fx_kwarg *fkw = fx_arena_alloc (g->arena, (nkw + 1) * sizeof (fx_kwarg));
  PyObject *pargs = PyTuple_New (npos);
  PyObject *pkw = nkw ? PyDict_New () : NULL;
  var *res = NULL;
  for (size_t i = 0; i < nargs; i++)
    if (force (tr, f, args[i]) < 0)
      {
        PyErr_Clear ();
        fail (tr, 0, "could not make a graph input");
        goto out;
      }
  for (size_t i = 0; i < nargs; i++)
    {
      fx_arg a;
      if (py_to_arg (tr, args[i], &a, g->arena))
        {
          fail (tr, 1, "Unsupported function call\n  Explanation: an argument of %s cannot be put into the graph",
                fx_target_base_name (&target, g->arena));
          goto out;
        }
      PyObject *e = var_example (args[i]);
      if (e && a.kind == FX_ARG_DEVICE)
        {
          /* the examples live on meta: a device argument (device=x.device) makes its result there too */
          Py_DECREF (e);
          e = PyObject_CallMethod (fxc.torch, "device", "s", "meta");
        }
      if (!e)
        {
          PyErr_Clear ();
          fail (tr, 1, "Unsupported function call\n  Explanation: an argument has no value");
          goto out;
        }
      if (i < npos)
        {
          fargs[i] = a;
          PyTuple_SET_ITEM (pargs, i, e);
        }
      else
        {
          PyObject *k = PyTuple_GET_ITEM (kwnames, i - npos);
          fkw[i - npos].name = fx_arena_strdup (g->arena, PyUnicode_AsUTF8 (k));
          fkw[i - npos].value = a;
          PyDict_SetItem (pkw, k, e);
          Py_DECREF (e);
        }
    }
  PyObject *result = PyObject_Call (run_fn, pargs, pkw);
  if (!result && tr->dyn_active)
    {
      /* On the hints: dims of different symbols may have to be equal (broadcasting) -> unify and trace again;
         otherwise give up on symbols for this compile. */
      PyErr_Clear ();
      bool symbolic = false;
      for (size_t i = 0; i < nargs; i++)
        symbolic |= var_any_symbolic (args[i]);
      if (symbolic)
        {
          char comment[512];
          line_comment (f, comment, sizeof comment);
          PyObject *u = PyObject_CallMethod (tr->t->shape_env, "unify_args", "OOs", pargs, pkw ? pkw : Py_None,
                                             comment);
          bool unified = u == Py_True;
          Py_XDECREF (u);
          PyErr_Clear ();
          if (unified)
            {
              tr->t->dyn_retry = true;
              fail (tr, 0, "dynamic shapes: dims unified, tracing again");
            }
          else
            dyn_give_up (tr, "%s cannot run on symbolic sizes", fx_target_base_name (&target, g->arena));
          goto out;
        }
      result = PyObject_Call (run_fn, pargs, pkw);
    }
  if (!result)
    {
      fxc_err_note ();
      PyObject *et, *ev, *tb;
      PyErr_Fetch (&et, &ev, &tb);
      PyObject *s = ev ? PyObject_Str (ev) : NULL;
      PyErr_Clear ();
      fail (tr, 1, "Unsupported function call\n  Explanation: %s failed on meta tensors: %s",
            fx_target_base_name (&target, g->arena), s ? PyUnicode_AsUTF8 (s) : "?");
      Py_XDECREF (s);
      Py_XDECREF (et);
      Py_XDECREF (ev);
      Py_XDECREF (tb);
      PyErr_Clear ();
      goto out;
    }
  if ((PyTuple_Check (result) || PyList_Check (result)) && PySequence_Fast_GET_SIZE (result) > 0)
    {
      /* split, chunk, unbind, max(dim), sort, topk...: the node returns a sequence of tensors; each item is a
         getitem node on it (split = l_x_.split(...); getitem = split[0]), as Dynamo wraps a tuple result. */
      Py_ssize_t n = PySequence_Fast_GET_SIZE (result);
      bool all_tensors = true;
      for (Py_ssize_t i = 0; i < n; i++)
        all_tensors &= PyObject_TypeCheck (PySequence_Fast_GET_ITEM (result, i), (PyTypeObject *) fxc.tensor_type);
      if (all_tensors)
        {
          fx_node *node = fx_graph_create_node (g, op, target, fargs, npos, fkw, nkw, NULL);
          if (!tr->first_body)
            tr->first_body = node;
          node_set_meta (tr, f, node, source_fn);
          PyDict_SetItemString (tr->t->targets, node->name, target_obj);
          PyObject *getitem = PyObject_GetAttrString (fxc.operator_mod, "getitem");
          bool sym_args = false;
          for (size_t i = 0; tr->dyn_active && i < nargs; i++)
            sym_args |= var_any_symbolic (args[i]);
          /* dynamic shapes: each item's sizes mapped to expressions and checked on a run at the real sizes */
          PyObject *real = sym_args ? run_real (run_fn, args, nargs, npos, kwnames) : NULL;
          if (sym_args && (!real || !(PyTuple_Check (real) || PyList_Check (real))
                           || PySequence_Fast_GET_SIZE (real) != n))
            {
              Py_XDECREF (real);
              Py_XDECREF (getitem);
              Py_DECREF (result);
              dyn_give_up (tr, "%s: no result at the real sizes", fx_target_base_name (&target, g->arena));
              goto out;
            }
          res = var_new (tr, V_SEQ, NULL);
          res->is_list = PyList_Check (result);
          res->items = calloc ((size_t) n + 1, sizeof (var *));
          if (!PyTuple_CheckExact (result) && PyTuple_Check (result))
            {
              /* max(dim), topk, sort...: a torch.return_types structseq, its fields readable (.values) and
                 rebuilt as that type */
              res->nt_class = (PyObject *) Py_TYPE (result);
              PyList_Append (tr->keep, res->nt_class);
            }
          for (Py_ssize_t i = 0; i < n; i++)
            {
              fx_arg *ga = fx_arena_alloc (g->arena, 2 * sizeof (fx_arg));
              ga[0] = fx_arg_node (node);
              ga[1] = fx_arg_int (i);
              fx_node *gi = fx_graph_create_node (g, FX_OP_CALL_FUNCTION, fx_target_operator ("getitem"), ga, 2, NULL,
                                                  0, NULL);
              node_set_meta (tr, f, gi, "<built-in function getitem>");
              PyObject *item = PySequence_Fast_GET_ITEM (result, i);
              set_example_meta (tr, gi, item);
              PyDict_SetItemString (tr->t->targets, gi->name, getitem);
              var *iv = var_new (tr, V_TENSOR, item);
              iv->node = gi;
              res->items[res->n++] = iv;
              if (real)
                {
                  PyObject *ri = PySequence_Fast_GET_ITEM (real, i);
                  if (map_result (tr, gi, item, pargs, pkw) < 0)
                    {
                      res = NULL;
                      break;
                    }
                  if (!real_matches (gi, ri))
                    {
                      dyn_give_up (tr, "%s: its result on the symbols' hints does not match the real sizes",
                                   fx_target_base_name (&target, g->arena));
                      res = NULL;
                      break;
                    }
                  PyList_Append (tr->keep, ri);
                  iv->chk = ri;
                }
            }
          Py_XDECREF (real);
          Py_XDECREF (getitem);
          Py_DECREF (result);
          goto out;
        }
    }
  if (result == Py_None && target.kind == FX_TARGET_OPERATOR && strcmp (target.name, "setitem") == 0)
    {
      /* x[idx] = v: an in-place node with no value (Dynamo's setitem node); the examples ran it on meta */
      Py_DECREF (result);
      fx_node *node = fx_graph_create_node (g, op, target, fargs, npos, fkw, nkw, NULL);
      if (!tr->first_body)
        tr->first_body = node;
      node_set_meta (tr, f, node, source_fn);
      PyDict_SetItemString (tr->t->targets, node->name, target_obj);
      res = const_var (tr, Py_None);
      goto out;
    }
  if (!PyObject_TypeCheck (result, (PyTypeObject *) fxc.tensor_type))
    {
      Py_DECREF (result);
      fail (tr, 1, "Unsupported function call\n  Explanation: %s does not return a tensor",
            fx_target_base_name (&target, g->arena));
      goto out;
    }
  fx_node *node = fx_graph_create_node (g, op, target, fargs, npos, fkw, nkw, NULL);
  if (!tr->first_body)
    tr->first_body = node;
  node_set_meta (tr, f, node, source_fn);
  set_example_meta (tr, node, result);
  bool sym_args = false;
  for (size_t i = 0; tr->dyn_active && i < nargs; i++)
    sym_args |= var_any_symbolic (args[i]);
  PyObject *chk = NULL;
  if (sym_args && node->meta.val.kind == FX_VAL_TENSOR
      && (map_result (tr, node, result, pargs, pkw) < 0 || !(chk = check_result (tr, node, run_fn, args, nargs,
                                                                               npos, kwnames))))
    {
      Py_DECREF (result);
      goto out;
    }
  PyDict_SetItemString (tr->t->targets, node->name, target_obj);
  res = var_new (tr, V_TENSOR, result);
  Py_DECREF (result);
  if (chk)
    {
      PyList_Append (tr->keep, chk);
      res->chk = chk;
      Py_DECREF (chk);
    }
  res->node = node;
out:
  Py_DECREF (pargs);
  Py_XDECREF (pkw);
  return res;
}

/* A meta-device copy of a real tensor with the same sizes, strides, dtype and requires_grad. */
static PyObject *
meta_like (PyObject *t)
{
  PyObject *size = PyObject_CallMethod (t, "size", NULL);
  PyObject *stride = PyObject_CallMethod (t, "stride", NULL);
  PyObject *dtype = PyObject_GetAttrString (t, "dtype");
  PyObject *res = NULL;
  if (size && stride && dtype)
    {
      PyObject *fn = PyObject_GetAttrString (fxc.torch, "empty_strided");
      PyObject *args = PyTuple_Pack (2, size, stride);
      PyObject *kw = Py_BuildValue ("{s:O,s:O}", "dtype", dtype, "device", fxc.meta_device);
      res = PyObject_Call (fn, args, kw);
      Py_XDECREF (fn);
      Py_DECREF (args);
      Py_DECREF (kw);
      if (res)
        {
          PyObject *rg = PyObject_GetAttrString (t, "requires_grad");
          if (rg == Py_True)
            {
              PyObject *r2 = PyObject_CallMethod (res, "requires_grad_", NULL);
              Py_XDECREF (r2);
            }
          Py_XDECREF (rg);
        }
    }
  Py_XDECREF (size);
  Py_XDECREF (stride);
  Py_XDECREF (dtype);
  return res;
}

/* A real tensor read from a source becomes a placeholder (graph input) guarded by TENSOR_MATCH. */
static var *
realize_tensor (tracer *tr, frame *f, PyObject *tensor, const fxc_source *src)
{
  PyObject *known = PyDict_GetItemString (tr->realized, src->name);
  if (known)
    return tr->vars[PyLong_AsSsize_t (known)];
  fx_graph *g = tr->t->graph;
  /* Dynamic shapes: the shape env decides which dims are symbols; those get SymInt placeholders right before the
     tensor and prime hints in its meta example. */
  PyObject *dyn = NULL;
  if (tr->t->shape_env)
    {
      char comment[512];
      line_comment (f, comment, sizeof comment);
      PyObject *size = PyObject_CallMethod (tensor, "size", NULL);
      PyObject *stride = size ? PyObject_CallMethod (tensor, "stride", NULL) : NULL;
      PyObject *dyn_idx = marked_indices (tensor, "_dynamo_dynamic_indices");
      PyObject *static_idx = marked_indices (tensor, "_dynamo_static_indices");
      dyn = stride ? PyObject_CallMethod (tr->t->shape_env, "wrap_tensor", "sOOOOs", src->name, size, stride,
                                          dyn_idx, static_idx, comment)
                   : NULL;
      Py_XDECREF (size);
      Py_XDECREF (stride);
      Py_XDECREF (dyn_idx);
      Py_XDECREF (static_idx);
      if (!dyn)
        {
          PyErr_Clear ();
          dyn_give_up (tr, "the shape env could not wrap %s", src->name);
          return NULL;
        }
      if (dyn == Py_None)
        Py_CLEAR (dyn);
    }
  PyObject *example = NULL;
  if (dyn)
    {
      PyObject *fn = PyObject_GetAttrString (fxc.torch, "empty_strided");
      PyObject *dt = PyObject_GetAttrString (tensor, "dtype");
      PyObject *args = PyTuple_Pack (2, PyTuple_GET_ITEM (dyn, 0), PyTuple_GET_ITEM (dyn, 1));
      PyObject *kw = dt ? Py_BuildValue ("{s:O,s:O}", "dtype", dt, "device", fxc.meta_device) : NULL;
      example = fn && kw ? PyObject_Call (fn, args, kw) : NULL;
      Py_XDECREF (fn);
      Py_XDECREF (dt);
      Py_DECREF (args);
      Py_XDECREF (kw);
      PyObject *rg = example ? PyObject_GetAttrString (tensor, "requires_grad") : NULL;
      if (rg == Py_True)
        {
          PyObject *r2 = PyObject_CallMethod (example, "requires_grad_", NULL);
          Py_XDECREF (r2);
        }
      Py_XDECREF (rg);
      /* the SymInt inputs this tensor introduces */
      PyObject *news = PyTuple_GET_ITEM (dyn, 4);
      PyObject *exprs = PyTuple_GET_ITEM (dyn, 2);
      for (Py_ssize_t k = 0; example && k < PyList_GET_SIZE (news); k++)
        {
          PyObject *pair = PyList_GET_ITEM (news, k);
          const char *sname = PyUnicode_AsUTF8 (PyTuple_GET_ITEM (pair, 0));
          int dim = -1;
          for (Py_ssize_t i = 0; i < PyList_GET_SIZE (exprs); i++)
            if (PyList_GET_ITEM (exprs, i) != Py_None
                && strcmp (PyUnicode_AsUTF8 (PyList_GET_ITEM (exprs, i)), sname) == 0)
              dim = (int) i;
          fx_graph_set_insert_point (g, tr->first_body);
          fx_node *sp = fx_graph_placeholder (g, sname);
          fx_graph_set_insert_point (g, NULL);
          sp->type_expr = "torch.SymInt";
          sp->meta.val.kind = FX_VAL_SYMINT;
          sp->meta.val.sym = fx_arena_strdup (g->arena, sname);
          sp->meta.val.i = PyLong_AsLongLong (PyTuple_GET_ITEM (pair, 1));
          fxc_trace *t = tr->t;
          if (t->n_inputs == t->cap_inputs)
            {
              t->cap_inputs = t->cap_inputs ? t->cap_inputs * 2 : 8;
              t->inputs = realloc (t->inputs, t->cap_inputs * sizeof *t->inputs);
            }
          fxc_source *in = &t->inputs[t->n_inputs++];
          fxc_source_copy (in, src);
          in->size_of = dim + 1;
          PyList_Append (t->examples, PyTuple_GET_ITEM (pair, 1));
        }
      tr->dyn_active = true;
    }
  else
    example = meta_like (tensor);
  if (!example)
    {
      if (dyn)
        {
          /* e.g. the hints' product overflows: this compile goes static */
          PyErr_Clear ();
          dyn_give_up (tr, "no meta tensor for %s on the symbols' hints", src->name);
        }
      Py_XDECREF (dyn);
      return NULL;
    }
  char *pname = source_input_name (src->name);
  fx_graph_set_insert_point (g, tr->first_body);
  fx_node *ph = fx_graph_placeholder (g, pname);
  fx_graph_set_insert_point (g, NULL);
  free (pname);
  ph->type_expr = "torch.Tensor";
  fx_tensor_check real;
  if (fxc_tensor_check_from (tensor, &real) == 0)
    {
      if (!tr->has_real_device)
        {
          tr->real_device = real.device;
          tr->has_real_device = true;
        }
      set_example_meta (tr, ph, example);
      ph->meta.val.tensor.device = real.device;
    }
  else
    {
      PyErr_Clear ();
      set_example_meta (tr, ph, example);
    }
  if (dyn && ph->meta.val.kind == FX_VAL_TENSOR)
    {
      /* symbols in the annotation, real values as the hints */
      PyObject *rs = PyObject_CallMethod (tensor, "size", NULL);
      PyObject *rt = rs ? PyObject_CallMethod (tensor, "stride", NULL) : NULL;
      fx_tensor_meta *tm = &ph->meta.val.tensor;
      apply_dims (g, tm->sizes, tm->ndim, PyTuple_GET_ITEM (dyn, 2), rs);
      apply_dims (g, tm->strides, tm->ndim, PyTuple_GET_ITEM (dyn, 3), rt);
      Py_XDECREF (rs);
      Py_XDECREF (rt);
      PyErr_Clear ();
    }
  var *v = var_new (tr, V_TENSOR, example);
  Py_DECREF (example);
  v->node = ph;
  if (dyn)
    {
      PyObject *chk = meta_like (tensor);
      if (!chk)
        {
          PyErr_Clear ();
          dyn_give_up (tr, "no meta tensor for %s", src->name);
          Py_DECREF (dyn);
          return NULL;
        }
      PyList_Append (tr->keep, chk);
      v->chk = chk;
      Py_DECREF (chk);
    }
  fxc_source_copy (&v->src, src);
  v->has_src = true;
  /* graph input */
  fxc_trace *t = tr->t;
  if (t->n_inputs == t->cap_inputs)
    {
      t->cap_inputs = t->cap_inputs ? t->cap_inputs * 2 : 8;
      t->inputs = realloc (t->inputs, t->cap_inputs * sizeof *t->inputs);
    }
  fxc_source_copy (&t->inputs[t->n_inputs++], src);
  PyList_Append (t->examples, tensor);
  /* TENSOR_MATCH */
  fx_tensor_check chk;
  if (fxc_tensor_check_from (tensor, &chk) == 0)
    {
      /* TENSOR_MATCH leaves symbolic sizes and strides to the shape env's guards (size=[None]) */
      for (int i = 0; dyn && i < chk.ndim; i++)
        {
          if (PyList_GET_ITEM (PyTuple_GET_ITEM (dyn, 2), i) != Py_None)
            chk.sizes[i] = -1;
          if (PyList_GET_ITEM (PyTuple_GET_ITEM (dyn, 3), i) != Py_None)
            chk.strides[i] = -1;
        }
      fx_buf code;
      fx_buf_init (&code);
      fx_tensor_check_code (&chk, src->name, &code);
      /* dtype and device objects for the fast check on a cache hit */
      PyObject *dt = PyObject_GetAttrString (tensor, "dtype");
      PyObject *dev = PyObject_GetAttrString (tensor, "device");
      PyObject *exp = dt && dev ? PyTuple_Pack (2, dt, dev) : NULL;
      Py_XDECREF (dt);
      Py_XDECREF (dev);
      add_check (tr, FX_GUARD_TENSOR_MATCH, src, code.data, exp, f);
      Py_XDECREF (exp);
      t->guards.guards[t->guards.n_guards - 1].tensor = chk;
      fx_buf_free (&code);
    }
  PyErr_Clear ();
  PyObject *idx = PyLong_FromSsize_t (tr->n_vars - 1);
  PyDict_SetItemString (tr->realized, src->name, idx);
  Py_DECREF (idx);
  Py_XDECREF (dyn);
  return v;
}

/* ------------------------------------------------------------------ SymInt values (dynamic shapes) */

static var *const_var (tracer *tr, PyObject *obj);

/* A SymInt var: hint (prime-based) and real value; node set by the caller or made lazily (size reads). */
static var *
sym_var (tracer *tr, int64_t hint, int64_t real)
{
  PyObject *h = PyLong_FromLongLong (hint);
  var *v = var_new (tr, V_SYM, h);
  Py_DECREF (h);
  PyObject *r = PyLong_FromLongLong (real);
  PyList_Append (tr->keep, r);
  v->chk = r;
  Py_DECREF (r);
  tr->has_sym = true;
  return v;
}

static void
sym_node_meta (fx_graph *g, fx_node *n, const char *expr, int64_t real)
{
  n->meta.val.kind = FX_VAL_SYMINT;
  n->meta.val.sym = expr ? fx_arena_strdup (g->arena, expr) : NULL;
  n->meta.val.i = real;
}

/* t.size(dim) of a tensor var with symbolic sizes: a constant for a static dim, else a lazy SymInt whose node
   (size = l_x_.size(0)) is made where it is first used. */
static var *
sym_size_var (tracer *tr, var *t, int dim)
{
  const fx_tensor_meta *m = &t->node->meta.val.tensor;
  if (dim < 0)
    dim += m->ndim;
  if (dim < 0 || dim >= m->ndim)
    {
      fail (tr, 1, "Unsupported method call\n  Explanation: Tensor.size() dimension out of range");
      return NULL;
    }
  if (!m->sizes[dim].sym)
    {
      PyObject *c = PyLong_FromLongLong (m->sizes[dim].value);
      var *v = const_var (tr, c);
      Py_DECREF (c);
      return v;
    }
  PyObject *size = PyObject_CallMethod (t->obj, "size", "i", dim);
  int64_t hint = size ? PyLong_AsLongLong (size) : -1;
  Py_XDECREF (size);
  PyErr_Clear ();
  var *v = sym_var (tr, hint, m->sizes[dim].value);
  v->lazy = true;
  v->recv = t;
  v->n = (size_t) dim;
  return v;
}

/* t.size() / t.shape of a tensor var with symbolic sizes: a tuple of constants and lazy SymInts. */
static var *
sym_size_seq (tracer *tr, var *t)
{
  int nd = t->node->meta.val.tensor.ndim;
  var *v = var_new (tr, V_SEQ, NULL);
  v->items = malloc ((nd + 1) * sizeof (var *));
  for (int i = 0; i < nd; i++)
    {
      v->items[i] = sym_size_var (tr, t, i);
      if (!v->items[i])
        return NULL;
      v->n++;
    }
  return v;
}

/* Makes a lazy size read's node: size = l_x_.size(0), annotated Sym(s77). */
static int
sym_size_node (tracer *tr, frame *f, var *v)
{
  if (!f)
    {
      dyn_give_up (tr, "a SymInt size leaves the frame");
      return -1;
    }
  fx_graph *g = tr->t->graph;
  const char *sym = v->recv->node->meta.val.tensor.sizes[v->n].sym;
  for (fx_node *p = g->first; p && p->op == FX_OP_PLACEHOLDER; p = p->next)
    if (p->meta.val.kind == FX_VAL_SYMINT && p->meta.val.sym && sym && strcmp (p->meta.val.sym, sym) == 0)
      {
        /* the size is an input's symbol: its SymInt placeholder, as Dynamo 2.x reads x.size(0) as s0 */
        v->node = p;
        v->lazy = false;
        return 0;
      }
  fx_arg *a = fx_arena_alloc (g->arena, 3 * sizeof (fx_arg));
  a[0] = fx_arg_node (v->recv->node);
  a[1] = fx_arg_int ((int64_t) v->n);
  fx_node *n = fx_graph_create_node (g, FX_OP_CALL_METHOD, fx_target_str ("size"), a, 2, NULL, 0, NULL);
  if (!tr->first_body)
    tr->first_body = n;
  node_set_meta (tr, f, n, "size");
  sym_node_meta (g, n, v->recv->node->meta.val.tensor.sizes[v->n].sym, PyLong_AsLongLong (v->chk));
  PyObject *name = PyUnicode_FromString ("size");
  PyDict_SetItemString (tr->t->targets, n->name, name);
  Py_DECREF (name);
  v->node = n;
  v->lazy = false;
  return 0;
}

/* Integer arithmetic on SymInts (n * 2, b * t): an operator node annotated with the result's expression. */
static var *
emit_sym (tracer *tr, frame *f, const char *name, PyObject *fn, var **args, size_t n)
{
  fx_graph *g = tr->t->graph;
  static const char *const ok[] = { "add", "sub", "mul", "floordiv", "iadd", "isub", "imul", "ifloordiv", "neg" };
  bool known = false;
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    known |= strcmp (name, ok[i]) == 0;
  if (!known || n > 2)
    {
      dyn_give_up (tr, "operator %s on a SymInt (it would guard on the size)", name);
      return NULL;
    }
  PyObject *h[2], *r[2];
  fx_arg *fa = fx_arena_alloc (g->arena, 3 * sizeof (fx_arg));
  for (size_t i = 0; i < n; i++)
    {
      if (force (tr, f, args[i]) < 0)
        return NULL;
      if (args[i]->kind == V_SYM)
        {
          h[i] = args[i]->obj;
          r[i] = args[i]->chk;
        }
      else if (args[i]->kind == V_CONST && PyLong_Check (args[i]->obj) && !PyBool_Check (args[i]->obj))
        h[i] = r[i] = args[i]->obj;
      else
        {
          dyn_give_up (tr, "operator %s on a SymInt and a non-int", name);
          return NULL;
        }
      if (py_to_arg (tr, args[i], &fa[i], g->arena))
        {
          dyn_give_up (tr, "operator %s: argument", name);
          return NULL;
        }
    }
  PyObject *hv = PyObject_Vectorcall (fn, h, n, NULL);
  PyObject *rv = hv ? PyObject_Vectorcall (fn, r, n, NULL) : NULL;
  PyObject *m = rv ? PyObject_CallMethod (tr->t->shape_env, "to_expr", "O", hv) : NULL;
  var *res = NULL;
  if (m && PyLong_Check (rv) && PyLong_AsLongLong (PyTuple_GET_ITEM (m, 1)) == PyLong_AsLongLong (rv))
    {
      PyObject *e = PyTuple_GET_ITEM (m, 0);
      if (e == Py_None)
        res = const_var (tr, rv);   /* no symbol left in it */
      else
        {
          char repr[64];
          snprintf (repr, sizeof repr, "<built-in function %s>", name);
          fx_node *node = fx_graph_create_node (g, FX_OP_CALL_FUNCTION, fx_target_operator (name), fa, n, NULL, 0,
                                                NULL);
          if (!tr->first_body)
            tr->first_body = node;
          node_set_meta (tr, f, node, repr);
          sym_node_meta (g, node, PyUnicode_AsUTF8 (e), PyLong_AsLongLong (rv));
          PyDict_SetItemString (tr->t->targets, node->name, fn);
          res = sym_var (tr, PyLong_AsLongLong (hv), PyLong_AsLongLong (rv));
          res->node = node;
        }
    }
  else
    {
      PyErr_Clear ();
      dyn_give_up (tr, "operator %s on SymInts has no expression of the symbols", name);
    }
  Py_XDECREF (hv);
  Py_XDECREF (rv);
  Py_XDECREF (m);
  return res;
}

/* Turns a lazy tensor var into its graph input, in place: inputs appear in the order of first use. */
static int
force (tracer *tr, frame *f, var *v)
{
  if (v->kind == V_SEQ)
    {
      for (size_t i = 0; i < v->n; i++)
        if (force (tr, f, v->items[i]) < 0)
          return -1;
      return 0;
    }
  if (!v->lazy)
    return 0;
  if (v->kind == V_SYM)
    return sym_size_node (tr, f, v);
  var *r = realize_tensor (tr, f, v->real, &v->src);
  if (!r)
    return -1;
  v->lazy = false;
  v->obj = r->obj;
  v->chk = r->chk;
  v->node = r->node;
  return 0;
}

/* Wraps a Python value read from a source: tensors become inputs, plain values constants with guards. */
static var *
wrap_value (tracer *tr, frame *f, PyObject *obj, const fxc_source *src)
{
  if (PyObject_TypeCheck (obj, (PyTypeObject *) fxc.tensor_type))
    {
      if (!src)
        {
          fail (tr, 1, "Unsupported tensor access\n  Explanation: a tensor reached through a value capture cannot guard");
          return NULL;
        }
      return realize_tensor (tr, f, obj, src);
    }
  if (src && (PyTuple_CheckExact (obj) || PyList_CheckExact (obj)) && seq_has_tensor (obj, 0))
    {
      /* A tuple or list from a source is a sequence of values with item sources (L['xs'][0]), guarded by type and
         length, as Dynamo's TupleVariable/ListVariable: its tensors become graph inputs read afresh on every call. */
      PyObject *known = PyDict_GetItemString (tr->realized, src->name);
      if (known)
        return tr->vars[PyLong_AsSsize_t (known)];
      char code[512];
      snprintf (code, sizeof code, "___check_type_id(%s, %lu)", src->name, (unsigned long) (uintptr_t) Py_TYPE (obj));
      add_check (tr, FX_GUARD_TYPE_MATCH, src, code, (PyObject *) Py_TYPE (obj), f);
      Py_ssize_t n = PySequence_Fast_GET_SIZE (obj);
      PyObject *len = PyLong_FromSsize_t (n);
      snprintf (code, sizeof code, "len(%s) == %zd", src->name, n);
      add_check (tr, FX_GUARD_LENGTH_CHECK, src, code, len, f);
      Py_DECREF (len);
      var *seq = var_new (tr, V_SEQ, NULL);
      size_t seq_idx = tr->n_vars - 1;
      seq->is_list = PyList_CheckExact (obj);
      seq->items = calloc ((size_t) n + 1, sizeof (var *));
      fxc_source_copy (&seq->src, src);
      seq->has_src = true;
      PyObject *idx = PyLong_FromSize_t (seq_idx);
      PyDict_SetItemString (tr->realized, src->name, idx);
      Py_DECREF (idx);
      for (Py_ssize_t i = 0; i < n; i++)
        {
          fxc_source item_src;
          source_item (&item_src, src, i);
          PyObject *o = PySequence_Fast_GET_ITEM (obj, i);
          var *item;
          if (PyObject_TypeCheck (o, (PyTypeObject *) fxc.tensor_type))
            {
              /* lazy, as a frame local: a graph input (and its TENSOR_MATCH) only when the trace uses it */
              item = var_new (tr, V_TENSOR, NULL);
              PyList_Append (tr->keep, o);
              item->lazy = true;
              item->real = o;
              fxc_source_copy (&item->src, &item_src);
              item->has_src = true;
            }
          else
            item = wrap_value (tr, f, o, &item_src);
          fxc_source_clear (&item_src);
          if (!item)
            return NULL;
          seq->items[seq->n++] = item;
        }
      return seq;
    }
  if (src && PyDict_CheckExact (obj) && !PyDict_GetItemString (tr->realized, src->name))
    {
      /* A dict from a source (**kwargs, a dict argument): its items are read through item sources (L['d']['a']);
         the dict is guarded by type and by its keys in order, as Dynamo's DICT_KEYS_MATCH. */
      PyObject *keys = PyDict_Keys (obj);
      PyObject *kt = keys ? PyList_AsTuple (keys) : NULL;
      PyObject *kr = keys ? PyObject_Repr (keys) : NULL;
      Py_XDECREF (keys);
      if (kt && kr)
        {
          char code[1024];
          snprintf (code, sizeof code, "___check_type_id(%s, %lu)", src->name, (unsigned long) (uintptr_t) Py_TYPE (obj));
          add_check (tr, FX_GUARD_TYPE_MATCH, src, code, (PyObject *) Py_TYPE (obj), f);
          snprintf (code, sizeof code, "list(%s.keys()) == %s", src->name, PyUnicode_AsUTF8 (kr));
          add_check (tr, FX_GUARD_DICT_KEYS_MATCH, src, code, kt, f);
          var *d = var_new (tr, V_CONST, obj);
          fxc_source_copy (&d->src, src);
          d->has_src = true;
          PyObject *idx = PyLong_FromSize_t (tr->n_vars - 1);
          PyDict_SetItemString (tr->realized, src->name, idx);
          Py_DECREF (idx);
          Py_DECREF (kt);
          Py_DECREF (kr);
          return d;
        }
      Py_XDECREF (kt);
      Py_XDECREF (kr);
      PyErr_Clear ();
    }
  else if (src && PyDict_CheckExact (obj))
    return tr->vars[PyLong_AsSsize_t (PyDict_GetItemString (tr->realized, src->name))];
  var *v;
  if (PyModule_Check (obj) || PyFunction_Check (obj) || PyCFunction_Check (obj) || PyType_Check (obj)
      || is_instance (obj, fxc.module_type) == 1)
    v = var_new (tr, V_OBJ, obj);
  else
    v = var_new (tr, V_CONST, obj);
  if (src)
    {
      fxc_source_copy (&v->src, src);
      v->has_src = true;
      PyObject *known = PyDict_GetItemString (tr->realized, src->name);
      if (!known)
        {
          /* Modules (torch, F) are guarded by identity once; plain values by value. */
          guard_value (tr, src, obj, f);
          PyObject *idx = PyLong_FromSsize_t (tr->n_vars - 1);
          PyDict_SetItemString (tr->realized, src->name, idx);
          Py_DECREF (idx);
        }
    }
  return v;
}

static var *
const_var (tracer *tr, PyObject *obj)
{
  return var_new (tr, V_CONST, obj);
}

/* ------------------------------------------------------------------ calls */

static const char *const binop_names[] = {
  "add", "and_", "floordiv", "lshift", "matmul", "mul", "mod", "or_", "pow", "rshift", "sub", "truediv", "xor",
  "iadd", "iand", "ifloordiv", "ilshift", "imatmul", "imul", "imod", "ior", "ipow", "irshift", "isub", "itruediv", "ixor",
};
static const char *const cmp_names[] = { "lt", "le", "eq", "ne", "gt", "ge" };

static var *
call_operator (tracer *tr, frame *f, const char *name, var **args, size_t n)
{
  PyObject *fn = PyObject_GetAttrString (fxc.operator_mod, name);
  if (!fn)
    return NULL;
  bool has_tensor = false, has_sym = false;
  for (size_t i = 0; i < n; i++)
    {
      has_tensor |= var_has_tensor (args[i]);
      has_sym |= args[i]->kind == V_SYM;
    }
  var *res = NULL;
  if (!has_tensor && has_sym)
    {
      res = emit_sym (tr, f, name, fn, args, n);
      Py_DECREF (fn);
      return res;
    }
  if (!has_tensor)
    {
      PyObject *a[4];
      bool ok = true;
      for (size_t i = 0; i < n; i++)
        {
          if (args[i]->kind != V_CONST && args[i]->kind != V_OBJ)
            ok = false;
          a[i] = args[i]->obj;
        }
      if (ok)
        {
          PyObject *r = PyObject_Vectorcall (fn, a, n, NULL);
          if (r)
            {
              res = const_var (tr, r);
              Py_DECREF (r);
            }
          else
            {
              PyErr_Clear ();
              fail (tr, 0, "constant operator %s raised", name);
            }
        }
      else
        fail (tr, 1, "Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator `%s`", name);
      Py_DECREF (fn);
      return res;
    }
  char repr[64];
  snprintf (repr, sizeof repr, "<built-in function %s>", name);
  res = emit (tr, f, FX_OP_CALL_FUNCTION, fx_target_operator (name), fn, fn, args, n, NULL, repr);
  Py_DECREF (fn);
  return res;
}

static int interpret (tracer *tr, frame *f, var **result);
static int force (tracer *tr, frame *f, var *v);

static bool
is_torch_callable (PyObject *fn)
{
  PyObject *mod = PyObject_GetAttrString (fn, "__module__");
  PyErr_Clear ();
  bool yes = false;
  if (mod && PyUnicode_Check (mod))
    {
      const char *m = PyUnicode_AsUTF8 (mod);
      yes = strcmp (m, "torch") == 0 || strncmp (m, "torch.nn.functional", 19) == 0 || strcmp (m, "torch._C._nn") == 0
            || strcmp (m, "torch._C._special") == 0 || strcmp (m, "torch.functional") == 0
            || strcmp (m, "torch._C._linalg") == 0 || strcmp (m, "torch._C._fft") == 0;
    }
  Py_XDECREF (mod);
  if (!yes && PyCFunction_Check (fn))
    {
      /* torch.abs etc.: builtins bound to torch._C._VariableFunctions */
      PyObject *self = PyCFunction_GET_SELF (fn);
      if (self && PyType_Check (self))
        yes = strstr (((PyTypeObject *) self)->tp_name, "VariableFunctions") != NULL;
    }
  return yes;
}

static char *
qualified_name (PyObject *fn)
{
  PyObject *mod = PyObject_GetAttrString (fn, "__module__");
  PyObject *name = PyObject_GetAttrString (fn, "__name__");
  PyErr_Clear ();
  char buf[512];
  const char *m = mod && PyUnicode_Check (mod) ? PyUnicode_AsUTF8 (mod) : "torch";
  if (PyCFunction_Check (fn) && PyCFunction_GET_SELF (fn) && PyType_Check (PyCFunction_GET_SELF (fn))
      && strstr (((PyTypeObject *) PyCFunction_GET_SELF (fn))->tp_name, "VariableFunctions"))
    m = "torch";
  snprintf (buf, sizeof buf, "%s.%s", m ? m : "torch", name ? PyUnicode_AsUTF8 (name) : "?");
  Py_XDECREF (mod);
  Py_XDECREF (name);
  return strdup (buf);
}

/* The Python value of a var made only of constants (tuples/lists of them included); NULL otherwise. */
static PyObject *
var_materialize (var *v)
{
  if ((v->kind == V_CONST || v->kind == V_OBJ) && v->obj && !v->is_iter
      && !PyObject_TypeCheck (v->obj, (PyTypeObject *) fxc.tensor_type))
    return Py_NewRef (v->obj);
  if (v->kind != V_SEQ)
    return NULL;
  PyObject *l = PyList_New ((Py_ssize_t) v->n);
  for (size_t i = 0; i < v->n; i++)
    {
      PyObject *o = var_materialize (v->items[i]);
      if (!o)
        {
          Py_DECREF (l);
          return NULL;
        }
      PyList_SET_ITEM (l, (Py_ssize_t) i, o);
    }
  if (v->is_list)
    return l;
  PyObject *t = PyList_AsTuple (l);
  Py_DECREF (l);
  if (t && v->nt_class)
    {
      PyObject *nt = fxc_tuple_as (v->nt_class, t);
      Py_DECREF (t);
      PyErr_Clear ();
      t = nt;
    }
  return t;
}

static var *
seq_of (tracer *tr, bool is_list, size_t n)
{
  var *v = var_new (tr, V_SEQ, NULL);
  v->is_list = is_list;
  v->items = calloc (n + 1, sizeof (var *));
  return v;
}

/* Calls FN on ARGS (at most 8) when every one is a constant, on their materialized values. False when one is not
   (nothing called); else true with *out the result, NULL (the error cleared) when FN raised. */
static bool
call_on_constants (PyObject *fn, var **args, size_t nargs, PyObject **out)
{
  PyObject *a[8] = { NULL };
  size_t got = 0;
  for (; got < nargs; got++)
    if (!(a[got] = var_materialize (args[got])))
      break;
  *out = got == nargs ? PyObject_Vectorcall (fn, a, nargs, NULL) : NULL;
  for (size_t i = 0; i < got; i++)
    Py_DECREF (a[i]);
  if (got == nargs && !*out)
    PyErr_Clear ();
  return got == nargs;
}

/* What a call folded on constants gives: R as a constant; or, when it raised (R NULL), the failure "WHAT raised while
   tracing" with the Python error cleared. Takes R. */
static var *
folded_call (tracer *tr, PyObject *r, const char *what)
{
  if (!r)
    {
      PyErr_Clear ();
      fail (tr, 0, "%s raised while tracing", what);
      return NULL;
    }
  var *v = const_var (tr, r);
  Py_DECREF (r);
  return v;
}

/* Builtins over tuples/lists that hold graph values: len, isinstance, enumerate, zip, list, tuple, reversed, as
   Dynamo's BuiltinVariable does for ListVariable/TupleVariable. A sequence of constants is materialized and the
   builtin runs on it. *handled is false when the call is not one of these. */
static var *
seq_builtin (tracer *tr, frame *f, PyObject *fn, var **args, size_t nargs, bool *handled)
{
  bool any_seq = false;
  for (size_t i = 0; i < nargs; i++)
    any_seq |= args[i]->kind == V_SEQ || args[i]->kind == V_DICT;
  *handled = false;
  if (!any_seq || nargs > 8)
    return NULL;
  PyObject *bdict = PyModule_GetDict (fxc.builtins);
  const char *name = PyType_Check (fn) ? ((PyTypeObject *) fn)->tp_name
                     : PyCFunction_GET_SELF (fn) == fxc.builtins ? ((PyCFunctionObject *) fn)->m_ml->ml_name : NULL;
  if (!name || PyDict_GetItemString (bdict, name) != fn)
    return NULL;
  /* only constants inside: run the builtin on the materialized values */
  PyObject *folded;
  if (call_on_constants (fn, args, nargs, &folded))
    {
      if (!folded)
        return NULL;   /* not handled: the usual path reports it */
      *handled = true;
      /* iterators (enumerate, zip, reversed over constants) are made lists, which the loops unroll */
      if (PyIter_Check (folded))
        Py_SETREF (folded, PySequence_List (folded));
      var *v = folded ? const_var (tr, folded) : NULL;
      Py_XDECREF (folded);
      return v;
    }
  var *s0 = args[0];
  if (strcmp (name, "len") == 0 && nargs == 1 && (s0->kind == V_SEQ || s0->kind == V_DICT))
    {
      *handled = true;
      PyObject *n = PyLong_FromSize_t (s0->n);
      var *v = const_var (tr, n);
      Py_DECREF (n);
      return v;
    }
  if (strcmp (name, "isinstance") == 0 && nargs == 2 && (s0->kind == V_SEQ || s0->kind == V_DICT))
    {
      /* isinstance(traced container, cls or (cls, ...)): decided by the container's type */
      PyObject *info = var_materialize (args[1]);
      PyObject *cls = s0->kind == V_DICT ? (PyObject *) &PyDict_Type
                      : s0->nt_class       ? s0->nt_class
                      : s0->is_list        ? (PyObject *) &PyList_Type : (PyObject *) &PyTuple_Type;
      int r = info ? PyObject_IsSubclass (cls, info) : -1;
      Py_XDECREF (info);
      if (r >= 0)
        {
          *handled = true;
          return const_var (tr, r ? Py_True : Py_False);
        }
      PyErr_Clear ();
    }
  if ((strcmp (name, "list") == 0 || strcmp (name, "tuple") == 0 || strcmp (name, "reversed") == 0) && nargs == 1
      && s0->kind == V_SEQ)
    {
      *handled = true;
      var *v = seq_of (tr, name[0] != 't', s0->n);
      for (size_t i = 0; i < s0->n; i++)
        v->items[v->n++] = s0->items[name[0] == 'r' ? s0->n - 1 - i : i];
      return v;
    }
  if (strcmp (name, "sum") == 0 && (nargs == 1 || nargs == 2) && s0->kind == V_SEQ)
    {
      /* sum(seq, start=0): start + seq[0] + seq[1] ..., each an add as Python does it */
      *handled = true;
      PyObject *zero = PyLong_FromLong (0);
      var *acc = nargs == 2 ? args[1] : const_var (tr, zero);
      Py_DECREF (zero);
      for (size_t i = 0; acc && i < s0->n; i++)
        {
          var *pair[2] = { acc, s0->items[i] };
          acc = call_operator (tr, f, "add", pair, 2);
        }
      return acc;
    }
  if (strcmp (name, "enumerate") == 0 && (nargs == 1 || (nargs == 2 && args[1]->kind == V_CONST && PyLong_Check (args[1]->obj)))
      && s0->kind == V_SEQ)
    {
      *handled = true;
      long start = nargs == 2 ? PyLong_AsLong (args[1]->obj) : 0;
      var *v = seq_of (tr, true, s0->n);
      for (size_t i = 0; i < s0->n; i++)
        {
          var *pair = seq_of (tr, false, 2);
          PyObject *k = PyLong_FromLong (start + (long) i);
          pair->items[pair->n++] = const_var (tr, k);
          Py_DECREF (k);
          pair->items[pair->n++] = s0->items[i];
          v->items[v->n++] = pair;
        }
      return v;
    }
  if (strcmp (name, "zip") == 0 && nargs >= 1)
    {
      /* every argument a V_SEQ or a constant sequence */
      size_t n = SIZE_MAX;
      PyObject *consts[8] = { 0 };
      for (size_t i = 0; i < nargs; i++)
        {
          if (args[i]->kind == V_SEQ)
            n = args[i]->n < n ? args[i]->n : n;
          else if ((consts[i] = var_materialize (args[i])) && (PyList_Check (consts[i]) || PyTuple_Check (consts[i])))
            n = (size_t) PySequence_Fast_GET_SIZE (consts[i]) < n ? (size_t) PySequence_Fast_GET_SIZE (consts[i]) : n;
          else
            {
              for (size_t j = 0; j <= i; j++)
                Py_XDECREF (consts[j]);
              return NULL;
            }
        }
      *handled = true;
      var *v = seq_of (tr, true, n);
      for (size_t k = 0; k < n; k++)
        {
          var *t = seq_of (tr, false, nargs);
          for (size_t i = 0; i < nargs; i++)
            t->items[t->n++] = args[i]->kind == V_SEQ ? args[i]->items[k]
                                                      : const_var (tr, PySequence_Fast_GET_ITEM (consts[i], k));
          v->items[v->n++] = t;
        }
      for (size_t i = 0; i < nargs; i++)
        Py_XDECREF (consts[i]);
      return v;
    }
  return NULL;
}

/* A traced list's append/extend (it is not visible outside the trace: mutated in place) and a sourced dict's
   get/items/values/keys (items through item sources). NULL with no reason set: not handled. */
static var *
seq_method (tracer *tr, frame *f, var *recv, const char *meth, var **args, size_t nargs)
{
  if (recv->kind == V_SEQ)
    {
      var *add = nargs == 1 ? args[0] : NULL;
      if (!add || (strcmp (meth, "extend") == 0 && add->kind != V_SEQ))
        return NULL;
      size_t extra = strcmp (meth, "append") == 0 ? 1 : add->n;
      recv->items = realloc (recv->items, (recv->n + extra + 1) * sizeof (var *));
      if (strcmp (meth, "append") == 0)
        recv->items[recv->n++] = add;
      else
        for (size_t i = 0; i < add->n; i++)
          recv->items[recv->n++] = add->items[i];
      return const_var (tr, Py_None);
    }
  PyObject *d = recv->obj;
  if (strcmp (meth, "get") == 0 && (nargs == 1 || nargs == 2) && args[0]->kind == V_CONST)
    {
      PyObject *item = PyDict_GetItemWithError (d, args[0]->obj);
      if (!item)
        {
          PyErr_Clear ();
          return nargs == 2 ? args[1] : const_var (tr, Py_None);
        }
      fxc_source ks;
      source_key (&ks, &recv->src, args[0]->obj);
      var *v = wrap_value (tr, f, item, &ks);
      fxc_source_clear (&ks);
      return v;
    }
  if (nargs != 0 || (strcmp (meth, "items") && strcmp (meth, "values") && strcmp (meth, "keys")))
    return NULL;
  var *out = seq_of (tr, true, (size_t) PyDict_Size (d));
  PyObject *k, *item;
  Py_ssize_t pos = 0;
  while (PyDict_Next (d, &pos, &k, &item))
    {
      var *kv = const_var (tr, k);
      var *vv = NULL;
      if (strcmp (meth, "keys"))
        {
          fxc_source ks;
          source_key (&ks, &recv->src, k);
          vv = wrap_value (tr, f, item, &ks);
          fxc_source_clear (&ks);
          if (!vv)
            return NULL;
        }
      if (meth[0] == 'i')
        {
          var *pair = seq_of (tr, false, 2);
          pair->items[pair->n++] = kv;
          pair->items[pair->n++] = vv;
          out->items[out->n++] = pair;
        }
      else
        out->items[out->n++] = meth[0] == 'k' ? kv : vv;
    }
  return out;
}

/* The cell vars of a real closure: contents read lazily, through the function's source when it has one
   (L['fn'].__closure__[0].cell_contents, as Dynamo names them), so that what the trace read is guarded. */
static void
closure_cells (tracer *tr, frame *nf, PyObject *func, const fxc_source *fn_src)
{
  PyCodeObject *co = nf->code;
  PyObject *closure = PyFunction_GET_CLOSURE (func);
  int off = co->co_nlocalsplus - co->co_nfreevars;
  for (int k = 0; closure && k < co->co_nfreevars && k < PyTuple_GET_SIZE (closure); k++)
    {
      var *c = var_new (tr, V_CELL, PyTuple_GET_ITEM (closure, k));
      if (fn_src && fn_src->name)
        {
          fxc_source a = { .local = -1 }, b = { .local = -1 };
          PyObject *cl = PyUnicode_FromString ("__closure__");
          PyObject *idx = PyLong_FromLong (k);
          PyObject *cc = PyUnicode_FromString ("cell_contents");
          source_attr (&a, fn_src, cl, NULL);
          /* the index is an int among the attribute names: fxc_source_eval reads it with getitem */
          fxc_source_copy (&b, &a);
          Py_ssize_t na = PyTuple_GET_SIZE (a.attrs);
          PyObject *t = PyTuple_New (na + 1);
          for (Py_ssize_t i = 0; i < na; i++)
            PyTuple_SET_ITEM (t, i, Py_NewRef (PyTuple_GET_ITEM (a.attrs, i)));
          PyTuple_SET_ITEM (t, na, Py_NewRef (idx));
          Py_XSETREF (b.attrs, t);
          free (b.name);
          size_t len = strlen (a.name) + 32;
          b.name = malloc (len);
          snprintf (b.name, len, "%s[%d]", a.name, k);
          source_attr (&c->src, &b, cc, NULL);
          c->has_src = true;
          fxc_source_clear (&a);
          fxc_source_clear (&b);
          Py_DECREF (cl);
          Py_DECREF (idx);
          Py_DECREF (cc);
        }
      nf->locals[off + k] = c;
    }
}

static var *
inline_function_ex (tracer *tr, frame *f, PyObject *func, var **args, size_t nargs, PyObject *kwnames,
                    var *self_module, var **cells, const fxc_source *fn_src)
{
  PyCodeObject *co = (PyCodeObject *) PyFunction_GET_CODE (func);
  if (f->depth + 1 >= MAX_DEPTH)
    {
      fail (tr, 1, "Unsupported function call\n  Explanation: inlining too deep (recursion)");
      return NULL;
    }
  if (co->co_flags & (CO_COROUTINE | CO_ASYNC_GENERATOR | CO_VARKEYWORDS))
    {
      fail (tr, 1, "Unsupported function call\n  Explanation: cannot inline %s (generator, coroutine or *args)",
            PyUnicode_AsUTF8 (co->co_name));
      return NULL;
    }
  frame nf = { 0 };
  nf.parent = f;
  nf.code = co;
  nf.globals = PyFunction_GET_GLOBALS (func);
  nf.func = func;
  nf.nlocals = co->co_nlocalsplus;
  nf.locals = calloc (nf.nlocals + 1, sizeof (var *));
  nf.depth = f->depth + 1;
  nf.self_module = self_module;
  if (co->co_flags & CO_GENERATOR)
    {
      /* a generator called while tracing runs to its end at the call: its values, as Dynamo's inlined generator
         materializes them for sum(), list() or a for loop */
      nf.yields = var_new (tr, V_SEQ, NULL);
      nf.yields->is_list = true;
      nf.yields->items = malloc (sizeof (var *));
    }
  /* free variables: the cells of a function made while tracing, or the real closure's */
  if (cells)
    for (int k = 0; k < co->co_nfreevars; k++)
      nf.locals[co->co_nlocalsplus - co->co_nfreevars + k] = cells[k];
  else
    closure_cells (tr, &nf, func, fn_src);
  size_t nkw = kwnames ? PyTuple_GET_SIZE (kwnames) : 0;
  size_t npos = nargs - nkw;
  int argc = co->co_argcount + co->co_kwonlyargcount;
  var *res = NULL;
  if ((int) npos > co->co_argcount && !(co->co_flags & CO_VARARGS))
    {
      fail (tr, 1, "Unsupported function call\n  Explanation: too many arguments for %s", PyUnicode_AsUTF8 (co->co_name));
      goto out;
    }
  for (size_t i = 0; i < npos && (int) i < co->co_argcount; i++)
    nf.locals[i] = args[i];
  if (co->co_flags & CO_VARARGS)
    {
      /* *args: the extra positional arguments as a tuple, in the local after the keyword-only ones */
      var *rest = var_new (tr, V_SEQ, NULL);
      size_t extra = npos > (size_t) co->co_argcount ? npos - co->co_argcount : 0;
      rest->items = malloc ((extra + 1) * sizeof (var *));
      for (size_t i = 0; i < extra; i++)
        rest->items[i] = args[co->co_argcount + i];
      rest->n = extra;
      nf.locals[argc] = rest;
    }
  for (size_t k = 0; k < nkw; k++)
    {
      PyObject *kn = PyTuple_GET_ITEM (kwnames, k);
      int found = -1;
      for (int j = 0; j < argc; j++)
        if (PyUnicode_Compare (PyTuple_GET_ITEM (co->co_localsplusnames, j), kn) == 0)
          found = j;
      if (found < 0)
        {
          fail (tr, 1, "Unsupported function call\n  Explanation: unexpected keyword %s", PyUnicode_AsUTF8 (kn));
          goto out;
        }
      nf.locals[found] = args[npos + k];
    }
  /* defaults */
  PyObject *defaults = PyFunction_GET_DEFAULTS (func);
  PyObject *kwdefaults = PyFunction_GET_KW_DEFAULTS (func);
  Py_ssize_t nd = defaults ? PyTuple_GET_SIZE (defaults) : 0;
  for (int j = 0; j < argc; j++)
    if (!nf.locals[j])
      {
        PyObject *d = NULL;
        if (j < co->co_argcount && j >= co->co_argcount - nd)
          d = PyTuple_GET_ITEM (defaults, j - (co->co_argcount - nd));
        else if (kwdefaults)
          d = PyDict_GetItem (kwdefaults, PyTuple_GET_ITEM (co->co_localsplusnames, j));
        if (!d)
          {
            fail (tr, 1, "Unsupported function call\n  Explanation: missing argument for %s", PyUnicode_AsUTF8 (co->co_name));
            goto out;
          }
        nf.locals[j] = const_var (tr, d);
      }
  var *r = NULL;
  int rc = interpret (tr, &nf, &r);
  if (rc == 0)
    res = nf.yields ? nf.yields : r;
  else if (rc > 0 && tr->break_gb)
    /* A break inside an inlined call: Dynamo breaks at the call site in the outer frame. */
    tr->break_gb = 1;
out:
  free (nf.locals);
  return res;
}

static var *
inline_function (tracer *tr, frame *f, PyObject *func, var **args, size_t nargs, PyObject *kwnames, var *self_module)
{
  return inline_function_ex (tr, f, func, args, nargs, kwnames, self_module, NULL, NULL);
}

/* torch.no_grad()/enable_grad() regions in the graph, as Dynamo's GradModeVariable: a change of mode is a
   torch._C._set_grad_enabled(mode) node, and torch's own mode follows while tracing so that the meta examples get
   the requires_grad the real run will have. */
static int
grad_mode_set (tracer *tr, frame *f, int mode)
{
  PyObject *c = PyObject_GetAttrString (fxc.torch, "_C");
  PyObject *fn = c ? PyObject_GetAttrString (c, "_set_grad_enabled") : NULL;
  Py_XDECREF (c);
  if (!fn)
    {
      PyErr_Clear ();
      return -1;
    }
  if (tr->grad_mode < 0)
    {
      PyObject *is = PyObject_GetAttrString (fxc.torch, "is_grad_enabled");
      PyObject *v = is ? PyObject_CallNoArgs (is) : NULL;
      tr->grad_mode = tr->grad_entry = v == Py_True;
      Py_XDECREF (v);
      Py_XDECREF (is);
      PyErr_Clear ();
    }
  if (mode != tr->grad_mode)
    {
      fx_graph *g = tr->t->graph;
      fx_arg *a = fx_arena_alloc (g->arena, sizeof (fx_arg));
      a[0] = fx_arg_bool (mode != 0);
      fx_node *n = fx_graph_create_node (g, FX_OP_CALL_FUNCTION,
                                         fx_target_function (fx_arena_strdup (g->arena, "torch._C._set_grad_enabled")),
                                         a, 1, NULL, 0, NULL);
      if (!tr->first_body)
        tr->first_body = n;
      node_set_meta (tr, f, n, "<built-in function _set_grad_enabled>");
      n->target.repr = "<built-in function _set_grad_enabled>";
      PyDict_SetItemString (tr->t->targets, n->name, fn);
      PyObject *r = PyObject_CallOneArg (fn, mode ? Py_True : Py_False);
      Py_XDECREF (r);
      PyErr_Clear ();
      tr->grad_mode = mode;
    }
  Py_DECREF (fn);
  return 0;
}

static var *call_var (tracer *tr, frame *f, var *fnv, var **args, size_t nargs, PyObject *kwnames);
static var *super_var (tracer *tr, frame *f, var *cls, var *self);
static var *load_local (tracer *tr, frame *f, int idx);

/* functools.partial(func, *pargs, **pkw)(*args, **kw) is func(*pargs, *args, **{**pkw, **kw}), traced through func
   (Dynamo's FunctoolsPartialVariable). The partial's arguments are constants of the partial object. */
static var *
call_partial (tracer *tr, frame *f, var *fnv, var **args, size_t nargs, PyObject *kwnames)
{
  PyObject *p = fnv->obj;
  PyObject *func = PyObject_GetAttrString (p, "func");
  PyObject *pargs = PyObject_GetAttrString (p, "args");
  PyObject *pkw = PyObject_GetAttrString (p, "keywords");
  var *res = NULL;
  if (!func || !pargs || !PyTuple_Check (pargs) || !pkw || !PyDict_Check (pkw))
    {
      PyErr_Clear ();
      fail (tr, 1, "Unsupported functools.partial object");
      goto out;
    }
  Py_ssize_t nkw_call = kwnames ? PyTuple_GET_SIZE (kwnames) : 0;
  Py_ssize_t np = PyTuple_GET_SIZE (pargs), nk = PyDict_Size (pkw);
  var **all = calloc ((size_t) (np + nargs + nk + 1), sizeof (var *));
  PyObject *names = PyList_New (0);
  size_t n = 0;
  for (Py_ssize_t i = 0; i < np; i++)
    all[n++] = const_var (tr, PyTuple_GET_ITEM (pargs, i));
  for (Py_ssize_t i = 0; i < (Py_ssize_t) nargs; i++)
    all[n++] = args[i];
  for (Py_ssize_t i = 0; i < nkw_call; i++)
    PyList_Append (names, PyTuple_GET_ITEM (kwnames, i));
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next (pkw, &pos, &k, &v))
    if (!kwnames || !PySequence_Contains (kwnames, k))
      {
        PyList_Append (names, k);
        all[n++] = const_var (tr, v);
      }
  PyObject *kwt = PyList_GET_SIZE (names) ? PyList_AsTuple (names) : NULL;
  if (kwt)
    PyList_Append (tr->keep, kwt);
  var *fv = const_var (tr, func);
  res = call_var (tr, f, fv, all, n, kwt);
  Py_XDECREF (kwt);
  Py_DECREF (names);
  free (all);
out:
  Py_XDECREF (func);
  Py_XDECREF (pargs);
  Py_XDECREF (pkw);
  return res;
}

/* Whether o is contextlib.nullcontext (the class). */
static bool
is_nullcontext_type (PyObject *o)
{
  if (o == NULL || !PyType_Check (o) || strcmp (((PyTypeObject *) o)->tp_name, "nullcontext") != 0)
    return false;
  PyObject *m = PyObject_GetAttrString (o, "__module__");
  bool yes = m && PyUnicode_Check (m) && strcmp (PyUnicode_AsUTF8 (m), "contextlib") == 0;
  Py_XDECREF (m);
  PyErr_Clear ();
  return yes;
}

static var *
call_var (tracer *tr, frame *f, var *fnv, var **args, size_t nargs, PyObject *kwnames)
{
  fx_graph *g = tr->t->graph;
  if ((fnv->kind == V_OBJ || fnv->kind == V_CONST) && fnv->obj && fxc.partial_type
      && PyObject_TypeCheck (fnv->obj, (PyTypeObject *) fxc.partial_type))
    return call_partial (tr, f, fnv, args, nargs, kwnames);
  if (fnv->kind == V_CONST && fnv->grad_ctx == GRAD_CTX_NULL_EXIT && nargs == 3 && !kwnames)
    {
      tr->grad_depth--;   /* leaving a nullcontext block: nothing to undo */
      return const_var (tr, Py_None);
    }
  if ((fnv->kind == V_OBJ || fnv->kind == V_CONST) && is_nullcontext_type (fnv->obj) && !kwnames && nargs <= 1
      && (nargs == 0 || args[0]->kind == V_CONST))
    {
      /* contextlib.nullcontext([constant]): the real object (entering it does nothing) */
      PyObject *ctx = nargs ? PyObject_CallOneArg (fnv->obj, args[0]->obj) : PyObject_CallNoArgs (fnv->obj);
      if (!ctx)
        {
          PyErr_Clear ();
          fail (tr, 0, "contextlib.nullcontext() raised while tracing");
          return NULL;
        }
      var *v = const_var (tr, ctx);
      Py_DECREF (ctx);
      return v;
    }
  if (fnv->kind == V_CONST && fnv->grad_ctx >= 3 && nargs == 3 && !kwnames)
    {
      /* leaving a no_grad/enable_grad block: __exit__(None, None, None) */
      if (grad_mode_set (tr, f, fnv->grad_ctx - 3) < 0)
        {
          fail (tr, 0, "torch._C._set_grad_enabled is missing");
          return NULL;
        }
      tr->grad_depth--;
      return const_var (tr, Py_None);
    }
  if ((fnv->kind == V_OBJ || fnv->kind == V_CONST) && nargs == 0 && !kwnames && PyType_Check (fnv->obj))
    {
      PyObject *no_grad = PyObject_GetAttrString (fxc.torch, "no_grad");
      PyObject *enable_grad = PyObject_GetAttrString (fxc.torch, "enable_grad");
      PyErr_Clear ();
      int kind = fnv->obj == no_grad ? 1 : fnv->obj == enable_grad ? 2 : 0;
      Py_XDECREF (no_grad);
      Py_XDECREF (enable_grad);
      if (kind)
        {
          /* making the context object changes nothing (entering it does) */
          PyObject *ctx = PyObject_CallNoArgs (fnv->obj);
          if (!ctx)
            {
              PyErr_Clear ();
              fail (tr, 0, "torch.no_grad() raised while tracing");
              return NULL;
            }
          var *v = const_var (tr, ctx);
          Py_DECREF (ctx);
          v->grad_ctx = kind;
          return v;
        }
    }
  if (fnv->kind == V_ATTR && fnv->recv->kind == V_TENSOR)
    {
      const char *meth = PyUnicode_AsUTF8 (fnv->obj);
      if (strcmp (meth, "item") == 0)
        {
          fail (tr, 1, "Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
                "  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.");
          return NULL;
        }
      if (strcmp (meth, "tolist") == 0 || strcmp (meth, "numpy") == 0 || strcmp (meth, "__bool__") == 0)
        {
          fail (tr, 1, "Unsupported Tensor.%s() call", meth);
          return NULL;
        }
      if (!kwnames && (strcmp (meth, "size") == 0 || strcmp (meth, "dim") == 0 || strcmp (meth, "stride") == 0
                       || strcmp (meth, "numel") == 0 || strcmp (meth, "ndimension") == 0))
        {
          /* Static shapes: these are constants guarded by TENSOR_MATCH. */
          if (strcmp (meth, "dim") != 0 && strcmp (meth, "ndimension") != 0 && var_is_symbolic (fnv->recv))
            {
              /* size() and size(i): SymInts; numel() and stride(): the frame is specialized */
              if (strcmp (meth, "size") == 0 && nargs == 0)
                return sym_size_seq (tr, fnv->recv);
              if (strcmp (meth, "size") == 0 && nargs == 1 && args[0]->kind == V_CONST && PyLong_Check (args[0]->obj))
                return sym_size_var (tr, fnv->recv, (int) PyLong_AsLong (args[0]->obj));
              dyn_give_up (tr, "Tensor.%s() of a tensor with symbolic sizes (SymInt values are not traced in this "
                           "version: the frame is specialized)", meth);
              return NULL;
            }
          PyObject *bound = PyObject_GetAttr (fnv->recv->obj, fnv->obj);
          PyObject *a[4];
          for (size_t i = 0; i < nargs && i < 4; i++)
            a[i] = args[i]->obj;
          PyObject *r = bound ? PyObject_Vectorcall (bound, a, nargs, NULL) : NULL;
          Py_XDECREF (bound);
          if (!r)
            {
              PyErr_Clear ();
              fail (tr, 1, "Unsupported method call\n  Explanation: Tensor.%s failed", meth);
              return NULL;
            }
          var *v = const_var (tr, r);
          Py_DECREF (r);
          return v;
        }
      var **all = malloc ((nargs + 1) * sizeof (var *));
      all[0] = fnv->recv;
      memcpy (all + 1, args, nargs * sizeof (var *));
      PyObject *method = PyObject_GetAttr (fxc.tensor_type, fnv->obj);
      var *res = NULL;
      if (!method)
        {
          PyErr_Clear ();
          fail (tr, 1, "Unsupported method call\n  Explanation: Tensor has no method %s", meth);
        }
      else
        {
          res = emit (tr, f, FX_OP_CALL_METHOD, fx_target_str (fx_arena_strdup (g->arena, meth)), fnv->obj, method,
                      all, nargs + 1, kwnames, meth);
          Py_DECREF (method);
        }
      free (all);
      return res;
    }
  if (fnv->kind == V_ATTR && fnv->recv && fnv->recv->kind == V_DICT && !kwnames)
    {
      var *r = dict_method (tr, fnv->recv, PyUnicode_AsUTF8 (fnv->obj), args, nargs);
      if (r)
        return r;
    }
  if (fnv->kind == V_ATTR && fnv->recv && (fnv->recv->kind == V_SEQ || fnv->recv->kind == V_CONST) && !kwnames)
    {
      var *r = seq_method (tr, f, fnv->recv, PyUnicode_AsUTF8 (fnv->obj), args, nargs);
      if (r || tr->reason[0])
        return r;
    }
  if (fnv->kind == V_ATTR)
    {
      fail (tr, 1, "Unsupported method call\n  Explanation: call to %s on an unsupported value", PyUnicode_AsUTF8 (fnv->obj));
      return NULL;
    }
  if (fnv->kind == V_FUNC)
    /* an inner function or lambda of the traced code: inlined with its cells */
    return inline_function_ex (tr, f, fnv->obj, args, nargs, kwnames, NULL, fnv->items, NULL);
  if (fnv->kind != V_OBJ && fnv->kind != V_CONST)
    {
      fail (tr, 1, "Unsupported function call\n  Explanation: the callee is not a known object");
      return NULL;
    }
  PyObject *fn = fnv->obj;
  if (fn == fxc.graph_break_fn)
    {
      fail (tr, 1, "Call to `torch._dynamo.graph_break()`\n  Explanation: User-inserted graph break. Message: None");
      return NULL;
    }
  PyObject *fid = PyLong_FromVoidPtr (fn);
  int disallowed = PySet_Contains (fxc.disallowed, fid);
  int allowed = PySet_Contains (fxc.allowed, fid);
  Py_DECREF (fid);
  if (disallowed == 1)
    {
      fail (tr, 1, "Attempted to call function marked as skipped\n  Explanation: the function was passed to disallow_in_graph");
      return NULL;
    }
  if (PyType_Check (fn) && PyType_IsSubtype ((PyTypeObject *) fn, &PyTuple_Type) && fn != (PyObject *) &PyTuple_Type
      && PyObject_HasAttrString (fn, "_make") && PyObject_HasAttrString (fn, "_fields"))
    return namedtuple_new (tr, fn, args, nargs, kwnames);   /* collections.namedtuple / typing.NamedTuple */
  if (!kwnames && (PyCFunction_Check (fn) || PyType_Check (fn)))
    {
      bool handled = false;
      var *r = seq_builtin (tr, f, fn, args, nargs, &handled);
      if (handled)
        return r;
    }
  if (PyCFunction_Check (fn) && PyCFunction_GET_SELF (fn) && PyModule_Check (PyCFunction_GET_SELF (fn)) && !kwnames
      && nargs <= 8)
    {
      /* math.sqrt(k.size(-1)), operator.mul(2, 3): pure functions of constants are folded, as Dynamo does */
      const char *mn = PyModule_GetName (PyCFunction_GET_SELF (fn));
      PyErr_Clear ();
      if (mn && (strcmp (mn, "math") == 0 || strcmp (mn, "_operator") == 0 || strcmp (mn, "cmath") == 0))
        {
          PyObject *r;
          if (call_on_constants (fn, args, nargs, &r))
            {
              char what[256];
              snprintf (what, sizeof what, "%s.%s", mn, ((PyCFunctionObject *) fn)->m_ml->ml_name);
              return folded_call (tr, r, what);
            }
        }
    }
  if (PyCFunction_Check (fn) && PyCFunction_GET_SELF (fn) == fxc.builtins)
    {
      /* A Python builtin. */
      const char *bn = ((PyCFunctionObject *) fn)->m_ml->ml_name;
      if (strcmp (bn, "isinstance") == 0 && nargs == 2 && !kwnames && args[0]->kind == V_TENSOR
          && (args[1]->kind == V_CONST || args[1]->kind == V_OBJ))
        {
          /* isinstance(tensor, cls): the traced tensor's class is its input's (guarded by the tensor's TYPE_MATCH) */
          PyObject *ex = args[0]->lazy ? Py_XNewRef (args[0]->real) : var_example (args[0]);
          int r = ex ? PyObject_IsInstance (ex, args[1]->obj) : -1;
          Py_XDECREF (ex);
          if (r >= 0)
            return const_var (tr, r ? Py_True : Py_False);
          PyErr_Clear ();
        }
      bool any_tensor = false;
      for (size_t i = 0; i < nargs; i++)
        any_tensor |= var_has_tensor (args[i]);
      if (strcmp (bn, "print") == 0 || any_tensor || kwnames)
        {
          fail (tr, 1, "Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator `%s` with argument types [...] (has_kwargs %s)",
                bn, kwnames ? "True" : "False");
          return NULL;
        }
      PyObject *a[8];
      if (nargs > 8)
        {
          fail (tr, 1, "Failed to trace builtin operator `%s`", bn);
          return NULL;
        }
      for (size_t i = 0; i < nargs; i++)
        {
          if (args[i]->kind != V_CONST && args[i]->kind != V_OBJ)
            {
              fail (tr, 1, "Failed to trace builtin operator `%s`", bn);
              return NULL;
            }
          a[i] = args[i]->obj;
        }
      char what[256];
      snprintf (what, sizeof what, "builtin %s", bn);
      return folded_call (tr, PyObject_Vectorcall (fn, a, nargs, NULL), what);
    }
  if (fn == (PyObject *) &PySuper_Type && !kwnames && (nargs == 0 || nargs == 2))
    return super_var (tr, f, nargs ? args[0] : NULL, nargs ? args[1] : NULL);
  if (PyType_Check (fn) && PyDict_GetItemString (PyModule_GetDict (fxc.builtins), ((PyTypeObject *) fn)->tp_name) == fn
      && !kwnames && nargs <= 8)
    {
      /* range, tuple, list, int, ... on constants */
      PyObject *a[8];
      for (size_t i = 0; i < nargs; i++)
        {
          if (args[i]->kind != V_CONST)
            {
              fail (tr, 1, "Unsupported function call\n  Explanation: builtin %s on a non-constant", ((PyTypeObject *) fn)->tp_name);
              return NULL;
            }
          a[i] = args[i]->obj;
        }
      char what[256];
      snprintf (what, sizeof what, "builtin %s", ((PyTypeObject *) fn)->tp_name);
      return folded_call (tr, PyObject_Vectorcall (fn, a, nargs, NULL), what);
    }
  if (allowed == 1 || is_torch_callable (fn))
    {
      char *qn = qualified_name (fn);
      PyObject *r = PyObject_Repr (fn);
      var *res = emit (tr, f, FX_OP_CALL_FUNCTION, fx_target_function (fx_arena_strdup (g->arena, qn)), fn, fn, args,
                       nargs, kwnames, r ? PyUnicode_AsUTF8 (r) : qn);
      /* the call node (a multi-output call's result is a sequence of getitems on it) */
      fx_node *call = res ? res->node : NULL;
      if (res && res->kind == V_SEQ && res->n > 0 && res->items[0]->node && res->items[0]->node->n_args > 0
          && res->items[0]->node->args[0].kind == FX_ARG_NODE)
        call = res->items[0]->node->args[0].u.node;
      if (call)
        call->target.repr = fx_arena_strdup (g->arena, r ? PyUnicode_AsUTF8 (r) : qn);
      Py_XDECREF (r);
      free (qn);
      return res;
    }
  if (PyFunction_Check (fn))
    return inline_function_ex (tr, f, fn, args, nargs, kwnames, NULL, NULL, fnv->has_src ? &fnv->src : NULL);
  if (PyMethod_Check (fn) && PyFunction_Check (PyMethod_GET_FUNCTION (fn)))
    {
      var **all = malloc ((nargs + 1) * sizeof (var *));
      /* a method found through super() is called on self's var (source, module path), others on their object */
      all[0] = fnv->recv && fnv->recv->obj == PyMethod_GET_SELF (fn) ? fnv->recv
                                                                      : wrap_value (tr, f, PyMethod_GET_SELF (fn), NULL);
      if (!all[0])
        {
          free (all);
          return NULL;
        }
      memcpy (all + 1, args, nargs * sizeof (var *));
      var *res = inline_function (tr, f, PyMethod_GET_FUNCTION (fn), all, nargs + 1, kwnames, NULL);
      free (all);
      return res;
    }
  if (is_instance (fn, fxc.module_type) == 1)
    {
      /* nn.Module.__call__ with no hooks: inline forward (inline_inbuilt_nn_modules). */
      PyObject *fwd = PyObject_GetAttrString ((PyObject *) Py_TYPE (fn), "forward");
      if (!fwd || !PyFunction_Check (fwd))
        {
          Py_XDECREF (fwd);
          PyErr_Clear ();
          fail (tr, 1, "Unsupported function call\n  Explanation: module without a Python forward");
          return NULL;
        }
      if (tr->n_mod_stack >= MAX_DEPTH)
        {
          Py_DECREF (fwd);
          fail (tr, 1, "Unsupported function call\n  Explanation: modules nested too deep");
          return NULL;
        }
      char key[64], type[512];
      snprintf (key, sizeof key, "%lu", (unsigned long) (uintptr_t) fn);
      PyObject *tmod = PyObject_GetAttrString ((PyObject *) Py_TYPE (fn), "__module__");
      snprintf (type, sizeof type, "%s.%s", tmod ? PyUnicode_AsUTF8 (tmod) : "?", _PyType_Name (Py_TYPE (fn)));
      Py_XDECREF (tmod);
      PyErr_Clear ();
      fx_module_entry *e = &tr->mod_stack[tr->n_mod_stack++];
      e->key = strdup (key);
      e->path = strdup (fnv->has_src ? fnv->src.name : "?");
      e->type = strdup (type);
      var **all = malloc ((nargs + 1) * sizeof (var *));
      all[0] = fnv;
      memcpy (all + 1, args, nargs * sizeof (var *));
      var *res = inline_function (tr, f, fwd, all, nargs + 1, kwnames, fnv);
      free (all);
      tr->n_mod_stack--;
      free ((char *) e->key);
      free ((char *) e->path);
      free ((char *) e->type);
      Py_DECREF (fwd);
      return res;
    }
  PyObject *r = PyObject_Repr (fn);
  fail (tr, 1, "Unsupported function call\n  Explanation: Dynamo does not know how to trace the function `%s`",
        r ? PyUnicode_AsUTF8 (r) : "?");
  Py_XDECREF (r);
  PyErr_Clear ();
  return NULL;
}

/* ------------------------------------------------------------------ attributes */

/* The value a frame's closure cell holds now (borrowed), or NULL when empty. */
static PyObject *
cell_contents (const var *c)
{
  if (c == NULL || c->kind != V_CELL)
    return NULL;
  if (c->cell_loaded)
    return c->recv && (c->recv->kind == V_CONST || c->recv->kind == V_OBJ) ? c->recv->obj : NULL;
  return c->obj ? PyCell_GET (c->obj) : NULL;
}

/* super() (the frame's __class__ cell and first argument) or super(cls, obj) while tracing, as Dynamo's
   SuperVariable: the real super object over self's real object; the var keeps self's var (recv), so that a method
   found through it is called on self's var, with its source and module path. */
static var *
super_var (tracer *tr, frame *f, var *cls, var *self)
{
  PyCodeObject *co = f->code;
  PyObject *cls_obj = cls && (cls->kind == V_CONST || cls->kind == V_OBJ) ? cls->obj : NULL;
  if (cls == NULL)
    {
      /* zero-argument form: __class__ is a free variable of the method, self its first argument */
      const char *kinds = PyBytes_AS_STRING (co->co_localspluskinds);
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE (co->co_localsplusnames) && i < f->nlocals; i++)
        if ((kinds[i] & CO_FAST_FREE)
            && strcmp (PyUnicode_AsUTF8 (PyTuple_GET_ITEM (co->co_localsplusnames, i)), "__class__") == 0)
          {
            cls_obj = cell_contents (f->locals[i]);
            /* the compiled frame's own cell, before COPY_FREE_VARS made a var of it */
            if (!cls_obj && !f->locals[i] && !f->parent && tr->top_locals[i] && PyCell_Check (tr->top_locals[i]))
              cls_obj = PyCell_GET (tr->top_locals[i]);
          }
      self = co->co_argcount > 0 ? (f->locals[0] || f->parent ? f->locals[0] : load_local (tr, f, 0)) : NULL;
      if (self && self->kind == V_CELL)
        self = self->cell_loaded ? self->recv : NULL;
    }
  if (cls_obj == NULL || !PyType_Check (cls_obj) || self == NULL || (self->kind != V_OBJ && self->kind != V_CONST))
    {
      fail (tr, 0, "Unsupported super() call\n  Explanation: super() outside a method, or over a traced value");
      return NULL;
    }
  PyObject *sup = PyObject_CallFunctionObjArgs ((PyObject *) &PySuper_Type, cls_obj, self->obj, NULL);
  if (!sup)
    {
      PyErr_Clear ();
      fail (tr, 0, "builtin super raised while tracing");
      return NULL;
    }
  var *v = var_new (tr, V_OBJ, sup);
  Py_DECREF (sup);
  v->recv = self;
  return v;
}

static var *
load_attr (tracer *tr, frame *f, var *base, PyObject *name)
{
  if (base->kind == V_OBJ && base->recv && Py_IS_TYPE (base->obj, &PySuper_Type))
    {
      /* an attribute through super(): a method is bound to self's var when called; any other value as read */
      PyObject *r = PyObject_GetAttr (base->obj, name);
      if (!r)
        {
          PyErr_Clear ();
          fail (tr, 0, "attribute %s not found", PyUnicode_AsUTF8 (name));
          return NULL;
        }
      var *v = PyMethod_Check (r) ? var_new (tr, V_OBJ, r) : PyCallable_Check (r) ? var_new (tr, V_OBJ, r) : const_var (tr, r);
      if (PyMethod_Check (r) && PyMethod_GET_SELF (r) == base->recv->obj)
        v->recv = base->recv;
      Py_DECREF (r);
      return v;
    }
  if (base->kind == V_TENSOR)
    {
      if (force (tr, f, base) < 0)
        return NULL;
      const char *n = PyUnicode_AsUTF8 (name);
      if (strcmp (n, "shape") == 0 && var_is_symbolic (base))
        return sym_size_seq (tr, base);
      if (strcmp (n, "shape") == 0 || strcmp (n, "dtype") == 0 || strcmp (n, "device") == 0 || strcmp (n, "ndim") == 0
          || strcmp (n, "requires_grad") == 0 || strcmp (n, "is_cuda") == 0)
        {
          PyObject *r = PyObject_GetAttr (base->obj, name);
          if (!r)
            return NULL;
          if (strcmp (n, "device") == 0)
            {
              /* the example lives on meta; the real device is in the node's metadata */
              fx_device d = base->node->meta.val.tensor.device;
              fx_buf b;
              fx_buf_init (&b);
              fx_device_format (d, &b);
              Py_DECREF (r);
              PyObject *dev = PyObject_GetAttrString (fxc.torch, "device");
              r = PyObject_CallFunction (dev, "s", b.data);
              Py_XDECREF (dev);
              fx_buf_free (&b);
              if (!r)
                return NULL;
            }
          var *v = const_var (tr, r);
          Py_DECREF (r);
          return v;
        }
      var *v = var_new (tr, V_ATTR, name);
      v->recv = base;
      return v;
    }
  if (base->kind == V_DICT)
    {
      /* keys/values/items/get: handled when called (dict_method) */
      var *v = var_new (tr, V_ATTR, name);
      v->recv = base;
      return v;
    }
  if (base->kind == V_SEQ && base->nt_class)
    {
      /* a namedtuple's field (values/indices of a torch.return_types structseq) */
      PyObject *fields = fxc_tuple_fields (base->nt_class);
      Py_ssize_t at = -1;
      for (Py_ssize_t k = 0; fields && PyTuple_Check (fields) && k < PyTuple_GET_SIZE (fields) && at < 0; k++)
        if (PyUnicode_Compare (PyTuple_GET_ITEM (fields, k), name) == 0)
          at = k;
      Py_XDECREF (fields);
      PyErr_Clear ();
      if (at >= 0 && (size_t) at < base->n)
        return base->items[at];
      fail (tr, 1, "Unsupported attribute %s of a namedtuple", PyUnicode_AsUTF8 (name));
      return NULL;
    }
  if ((base->kind == V_CONST && base->has_src && PyDict_CheckExact (base->obj)
       && (strcmp (PyUnicode_AsUTF8 (name), "get") == 0 || strcmp (PyUnicode_AsUTF8 (name), "items") == 0
           || strcmp (PyUnicode_AsUTF8 (name), "values") == 0 || strcmp (PyUnicode_AsUTF8 (name), "keys") == 0))
      || (base->kind == V_SEQ && base->is_list && !base->has_src
          && (strcmp (PyUnicode_AsUTF8 (name), "append") == 0 || strcmp (PyUnicode_AsUTF8 (name), "extend") == 0)))
    {
      /* d.get/items/values/keys and a traced list's append/extend: handled when called (seq_method) */
      var *v = var_new (tr, V_ATTR, name);
      v->recv = base;
      return v;
    }
  if (base->kind == V_OBJ && is_instance (base->obj, fxc.module_type) == 1)
    {
      /* parameters, buffers and submodules get 2.11's source spelling */
      static const char *const containers[] = { "_parameters", "_buffers", "_modules" };
      for (int i = 0; i < 3; i++)
        {
          PyObject *d = PyObject_GetAttrString (base->obj, containers[i]);
          PyObject *item = d && PyDict_Check (d) ? PyDict_GetItem (d, name) : NULL;
          Py_XINCREF (item);
          Py_XDECREF (d);
          PyErr_Clear ();
          if (item && item != Py_None)
            {
              fxc_source src = { .local = -1 };
              var *v = NULL;
              if (base->has_src)
                {
                  source_attr (&src, &base->src, name, containers[i]);
                  v = wrap_value (tr, f, item, &src);
                  fxc_source_clear (&src);
                }
              else
                v = wrap_value (tr, f, item, NULL);
              Py_DECREF (item);
              return v;
            }
          Py_XDECREF (item);
        }
    }
  if (base->kind == V_OBJ || base->kind == V_CONST)
    {
      PyObject *r = PyObject_GetAttr (base->obj, name);
      if (!r)
        {
          PyErr_Clear ();
          fail (tr, 0, "attribute %s not found", PyUnicode_AsUTF8 (name));
          return NULL;
        }
      var *v;
      if (PyObject_TypeCheck (r, (PyTypeObject *) fxc.tensor_type) && base->has_src)
        {
          fxc_source src = { .local = -1 };
          source_attr (&src, &base->src, name, NULL);
          v = realize_tensor (tr, f, r, &src);
          fxc_source_clear (&src);
        }
      else if (PyModule_Check (base->obj) && base->has_src)
        {
          /* torch.abs: no guard per attribute of a module; the module itself is ID-matched */
          v = (PyModule_Check (r) || PyCallable_Check (r)) ? var_new (tr, V_OBJ, r) : const_var (tr, r);
        }
      else if (PyCallable_Check (r) && !PyType_Check (r))
        v = var_new (tr, V_OBJ, r);
      else if (base->has_src && is_instance (base->obj, fxc.module_type) == 1
               && (r == Py_None || PyBool_Check (r) || PyLong_CheckExact (r) || PyFloat_CheckExact (r)
                   || PyUnicode_CheckExact (r)))
        {
          /* module attributes the trace relied on (training, eps, inplace) are guarded by value */
          fxc_source src = { .local = -1 };
          source_attr (&src, &base->src, name, NULL);
          v = wrap_value (tr, f, r, &src);
          fxc_source_clear (&src);
        }
      else
        v = const_var (tr, r);
      Py_DECREF (r);
      return v;
    }
  fail (tr, 1, "Unsupported attribute access %s", PyUnicode_AsUTF8 (name));
  return NULL;
}

/* ------------------------------------------------------------------ the interpreter loop */

static var *
load_global (tracer *tr, frame *f, PyObject *name)
{
  PyObject *obj = PyDict_GetItem (f->globals, name);
  if (!obj)
    {
      obj = PyDict_GetItem (tr->builtins, name);
      if (!obj)
        {
          fail (tr, 0, "name '%s' is not defined", PyUnicode_AsUTF8 (name));
          return NULL;
        }
      return var_new (tr, V_OBJ, obj);
    }
  if (f->parent)
    {
      /* Globals of inlined functions: not sourced (Dynamo names them by module); treat as constants. */
      if (PyObject_TypeCheck (obj, (PyTypeObject *) fxc.tensor_type))
        {
          fail (tr, 1, "Unsupported global tensor in an inlined function");
          return NULL;
        }
      return (PyModule_Check (obj) || PyCallable_Check (obj)) ? var_new (tr, V_OBJ, obj) : const_var (tr, obj);
    }
  fxc_source src = { .local = -1 };
  source_set_global (&src, name);
  var *v = wrap_value (tr, f, obj, &src);
  fxc_source_clear (&src);
  return v;
}

static var *
load_local (tracer *tr, frame *f, int idx)
{
  var *v = f->locals[idx];
  if (v)
    return v;
  if (f->parent || !tr->top_locals[idx])
    {
      fail (tr, 0, "local variable '%s' referenced before assignment",
            PyUnicode_AsUTF8 (PyTuple_GET_ITEM (f->code->co_localsplusnames, idx)));
      return NULL;
    }
  fxc_source src = { .local = -1 };
  source_set_local (&src, idx, PyUnicode_AsUTF8 (PyTuple_GET_ITEM (f->code->co_localsplusnames, idx)));
  if (PyObject_TypeCheck (tr->top_locals[idx], (PyTypeObject *) fxc.tensor_type))
    {
      v = var_new (tr, V_TENSOR, NULL);
      v->lazy = true;
      v->real = tr->top_locals[idx];
      fxc_source_copy (&v->src, &src);
      v->has_src = true;
    }
  else
    v = wrap_value (tr, f, tr->top_locals[idx], &src);
  fxc_source_clear (&src);
  f->locals[idx] = v;
  return v;
}

/* Describes how to rebuild a value after the graph ran: tensors by graph output index. */
static PyObject *out_spec (tracer *tr, var *v, PyObject *outputs_nodes);

/* ('L'|'T'|'D', item specs[, keys or namedtuple class]) for a sequence or dict var */
static PyObject *
seq_spec (tracer *tr, var *v, PyObject *outputs_nodes)
{
  PyObject *items = PyList_New (v->n);
  for (size_t i = 0; i < v->n; i++)
    {
      PyObject *s = out_spec (tr, v->items[i], outputs_nodes);
      if (!s)
        {
          Py_DECREF (items);
          return NULL;
        }
      PyList_SET_ITEM (items, i, s);
    }
  if (v->kind == V_DICT)
    return Py_BuildValue ("(sNO)", "D", items, v->obj);   /* ("D", value specs, keys) */
  if (v->nt_class)
    return Py_BuildValue ("(sNO)", "T", items, v->nt_class);   /* rebuilt as the namedtuple class */
  return Py_BuildValue ("(sN)", v->is_list ? "L" : "T", items);
}

static PyObject *
out_spec (tracer *tr, var *v, PyObject *outputs_nodes)
{
  if (v->kind == V_TENSOR && v->lazy && force (tr, NULL, v) < 0)
    return NULL;
  if (v->kind == V_TENSOR)
    {
      Py_ssize_t n = PyList_GET_SIZE (outputs_nodes);
      Py_ssize_t idx = -1;
      for (Py_ssize_t i = 0; i < n; i++)
        if (PyLong_AsVoidPtr (PyList_GET_ITEM (outputs_nodes, i)) == v->node)
          idx = i;
      if (idx < 0)
        {
          PyObject *p = PyLong_FromVoidPtr (v->node);
          PyList_Append (outputs_nodes, p);
          Py_DECREF (p);
          idx = n;
        }
      return Py_BuildValue ("(sn)", "t", idx);
    }
  if (v->kind == V_SEQ && v->has_src)
    {
      /* a tuple or list read from a source (never mutated by the trace): the object itself, not a copy, since
         the code that runs on may mutate it (hits.append) */
      PyObject *cap = fxc_source_capsule (&v->src);
      return cap ? Py_BuildValue ("(sN)", "s", cap) : NULL;
    }
  if (v->kind == V_SEQ || v->kind == V_DICT)
    {
      /* a list or dict made while tracing is one object wherever it is held (a local and the stack at a break):
         one spec for it, which the rebuild makes once */
      bool mutable_ = v->kind == V_DICT || (v->is_list && !v->nt_class);
      PyObject *key = mutable_ ? PyLong_FromVoidPtr (v) : NULL;
      if (key && !tr->spec_memo)
        tr->spec_memo = PyDict_New ();
      PyObject *seen = key ? PyDict_GetItemWithError (tr->spec_memo, key) : NULL;
      if (seen)
        {
          Py_DECREF (key);
          return Py_NewRef (seen);
        }
      PyObject *spec = seq_spec (tr, v, outputs_nodes);
      if (key && spec)
        PyDict_SetItem (tr->spec_memo, key, spec);
      Py_XDECREF (key);
      return spec;
    }
  if (v->kind == V_NULL)
    return Py_BuildValue ("(sO)", "null", Py_None);
  if (v->kind == V_FUNC && v->n > 0 && tr->cells_frame && tr->at_break)
    {
      /* a closure over the top frame's cells, live when the frame continues in CPython: ("F", template, slots),
         rebuilt over the frame's real cells */
      frame *tf = tr->cells_frame;
      PyObject *slots = PyTuple_New (v->n);
      for (size_t k = 0; k < v->n; k++)
        {
          int slot = -1;
          for (int i = 0; i < tf->nlocals && slot < 0; i++)
            if (tf->locals[i] == v->items[k])
              slot = i;
          if (slot < 0)
            {
              Py_DECREF (slots);
              return NULL;   /* a cell of an inlined frame: it has no home in the continued frame */
            }
          PyTuple_SET_ITEM (slots, k, PyLong_FromLong (slot));
        }
      return Py_BuildValue ("(sON)", "F", v->obj, slots);
    }
  if (v->is_iter || v->kind == V_CELL || (v->kind == V_FUNC && v->n > 0))
    return NULL;   /* a cell, or a closure over the trace's cells, has no value outside the trace */
  if (v->kind == V_ATTR)
    {
      PyObject *r = out_spec (tr, v->recv, outputs_nodes);
      return r ? Py_BuildValue ("(sNO)", "attr", r, v->obj) : NULL;
    }
  if ((v->kind == V_OBJ || v->kind == V_CONST) && v->has_src && v->src.local >= 0 && !v->src.attrs && !v->src.deref
      && tr->cells_frame && tr->cells_frame->locals[v->src.local] == v)
    /* a local read and not reassigned: this call's value, not the traced one (guards such as CLOSURE_MATCH or
       TYPE_MATCH let another object through) */
    return Py_BuildValue ("(si)", "l", v->src.local);
  /* A value read from a source is read again on each run: another instance of the module (self), another
     global, must not be replaced by the one seen while tracing. */
  if ((v->kind == V_CONST || v->kind == V_OBJ) && v->has_src && !v->is_iter)
    {
      PyObject *cap = fxc_source_capsule (&v->src);
      return cap ? Py_BuildValue ("(sN)", "s", cap) : NULL;
    }
  if (v->obj)
    return Py_BuildValue ("(sO)", "c", v->obj);
  return NULL;
}

static void
finish_graph (tracer *tr, PyObject *outputs_nodes)
{
  fx_graph *g = tr->t->graph;
  Py_ssize_t n = PyList_GET_SIZE (outputs_nodes);
  fx_arg *items = fx_arena_alloc (g->arena, (n + 1) * sizeof (fx_arg));
  for (Py_ssize_t i = 0; i < n; i++)
    items[i] = fx_arg_node (PyLong_AsVoidPtr (PyList_GET_ITEM (outputs_nodes, i)));
  fx_arg tuple = fx_arg_tuple (items, n);
  fx_graph_output (g, tuple);
}


/* Nonlocal stores of the compiled frame to its own free variables: applied to the real cells after the graph ran
   ((slot, spec) pairs in t->cell_writes). Returns false when a stored value cannot be rebuilt. */
static bool
cells_writes (tracer *tr, frame *f, PyObject *outputs)
{
  PyCodeObject *co = f->code;
  for (int i = co->co_nlocalsplus - co->co_nfreevars; i < co->co_nlocalsplus; i++)
    {
      var *c = f->locals[i];
      if (!c || c->kind != V_CELL || !c->cell_dirty)
        continue;
      PyObject *s = c->recv ? out_spec (tr, c->recv, outputs) : Py_BuildValue ("(sO)", "null", Py_None);
      if (!s)
        return false;
      if (!tr->t->cell_writes)
        tr->t->cell_writes = PyList_New (0);
      PyObject *p = Py_BuildValue ("(iN)", i, s);
      PyList_Append (tr->t->cell_writes, p);
      Py_DECREF (p);
    }
  return true;
}

static void
record_break (tracer *tr, frame *f)
{
  fxc_trace *t = tr->t;
  fx_buf st;
  fx_buf_init (&st);
  frame_stack_trace (tr, f, &st);
  t->break_user_stack = fx_buf_steal (&st);
  t->break_line = f->line;
  t->break_reason = strdup (tr->reason);
}

/* One frame's interpretation: its value stack and the instruction being run. Each opcode family below is a
   step_* function that runs one instruction on it. */
typedef struct vm
{
  tracer *tr;
  frame *f;
  PyCodeObject *co;
  var *stack[MAX_STACK];
  int sp;
  int opcode;
  int oparg;
  int inst_sp;                /* the stack depth before the instruction (a graph break resumes there) */
  int inst_ip;                /* the instruction's index (code units) */
  int next;                   /* the instruction after this one; a jump changes it */
  PyObject *kwnames;          /* KW_NAMES of the coming CALL */
  var **result;               /* RETURN_VALUE's value */
} vm;

/* What a step returns besides the frame's final status (0 returned, 1 graph break or unsupported, -1 error). */
enum
{
  STEP_NEXT = 2,              /* go on with vs->next */
  STEP_UNHANDLED = 3,         /* not an opcode of this family */
};

#define PUSH(v) do { if (vs->sp >= MAX_STACK) return fail (vs->tr, 0, "stack overflow"); vs->stack[vs->sp++] = (v); } while (0)
#define POP() (vs->stack[--vs->sp])
#define PEEK(n) (vs->stack[vs->sp - (n)])
#define NEED(cond) do { if (!(cond)) { if (!PyErr_Occurred () && !vs->tr->reason[0]) fail (vs->tr, 0, "internal"); \
                                      return vs->tr->reason[0] ? 1 : -1; } } while (0)

/* Stack shuffles and the loads and stores of names: constants, fast locals, globals, attributes and methods. */
static int
step_names (vm *vs)
{
  tracer *tr = vs->tr;
  frame *f = vs->f;
  PyCodeObject *co = vs->co;
  const int oparg = vs->oparg;
  const int opcode = vs->opcode;
  switch (opcode)
    {
    case RESUME:
    case NOP:
#if !FXC_PY312
    case PRECALL:
#endif
    case CACHE:
      break;
    case POP_TOP:
      (void) POP ();
      break;
    case PUSH_NULL:
      PUSH (var_new (tr, V_NULL, NULL));
      break;
    case LOAD_CONST:
      PUSH (const_var (tr, PyTuple_GET_ITEM (co->co_consts, oparg)));
      break;
    case LOAD_FAST:
#if FXC_PY312
    case LOAD_FAST_CHECK:   /* LOAD_FAST that raises on an unbound local: load_local fails there too */
#endif
      {
        var *v = load_local (tr, f, oparg);
        NEED (v);
        PUSH (v);
      }
      break;
    case STORE_FAST:
      {
        /* 3.12: an inlined comprehension restores a local that was unbound (LOAD_FAST_AND_CLEAR pushed NULL) */
        var *v = POP ();
        f->locals[oparg] = v->kind == V_NULL ? NULL : v;
      }
      break;
    case DELETE_FAST:
      f->locals[oparg] = NULL;
      break;
    case LOAD_GLOBAL:
      {
        if (oparg & 1)
          PUSH (var_new (tr, V_NULL, NULL));
        var *v = load_global (tr, f, PyTuple_GET_ITEM (co->co_names, oparg >> 1));
        NEED (v);
        PUSH (v);
      }
      break;
    case LOAD_ATTR:
#if !FXC_PY312
    case LOAD_METHOD:
#endif
      {
        /* 3.12: LOAD_ATTR's low bit asks for the method form (3.11's LOAD_METHOD): NULL below the attribute */
        bool method = FXC_PY312 ? (oparg & 1) : opcode != LOAD_ATTR;
        var *b = POP ();
        var *v = load_attr (tr, f, b, PyTuple_GET_ITEM (co->co_names, FXC_PY312 ? oparg >> 1 : oparg));
        NEED (v);
        if (method)
          PUSH (var_new (tr, V_NULL, NULL));
        PUSH (v);
      }
      break;
    case COPY:
      {
        NEED (vs->sp >= oparg);
        var *v = PEEK (oparg);
        PUSH (v);
      }
      break;
    case SWAP:
      {
        NEED (vs->sp >= oparg);
        var *tmp = PEEK (1);
        PEEK (1) = PEEK (oparg);
        PEEK (oparg) = tmp;
      }
      break;
    default:
      return STEP_UNHANDLED;
    }
  return STEP_NEXT;
}

/* obj[idx]: a dict entry of a guarded dict, an item or a slice of a traced sequence, else operator.getitem. */
static int
subscr (vm *vs, var *obj, var *idx)
{
  tracer *tr = vs->tr;
  frame *f = vs->f;
  var *a[2] = { obj, idx };
  if (obj->kind == V_CONST && PyDict_CheckExact (obj->obj) && obj->has_src && idx->kind == V_CONST)
    {
      PyObject *item = PyDict_GetItemWithError (obj->obj, idx->obj);
      NEED (item);
      fxc_source ks;
      source_key (&ks, &obj->src, idx->obj);
      var *v = wrap_value (tr, f, item, &ks);
      fxc_source_clear (&ks);
      NEED (v);
      PUSH (v);
      return STEP_NEXT;
    }
  if (obj->kind == V_SEQ && idx->kind == V_CONST && PyLong_Check (idx->obj))
    {
      Py_ssize_t i = PyLong_AsSsize_t (idx->obj);
      if (i < 0)
        i += obj->n;
      NEED (i >= 0 && (size_t) i < obj->n);
      PUSH (obj->items[i]);
      return STEP_NEXT;
    }
  if (obj->kind == V_DICT)
    {
      Py_ssize_t i = idx->kind == V_CONST ? dict_find (obj, idx->obj) : -1;
      if (i < 0)
        {
          vs->sp += 2;
          return fail (tr, 1, "Unsupported dict subscript\n  Explanation: the key is not a constant the dict has");
        }
      PUSH (obj->items[i]);
      return STEP_NEXT;
    }
  if (obj->kind == V_SEQ && idx->kind == V_CONST && PySlice_Check (idx->obj))
    {
      Py_ssize_t start, stop, step, len;
      NEED (PySlice_GetIndicesEx (idx->obj, obj->n, &start, &stop, &step, &len) == 0);
      var *v = var_new (tr, V_SEQ, NULL);
      v->is_list = obj->is_list;
      v->items = malloc ((len + 1) * sizeof (var *));
      for (Py_ssize_t i = 0; i < len; i++)
        v->items[i] = obj->items[start + i * step];
      v->n = len;
      PUSH (v);
      return STEP_NEXT;
    }
  var *r = call_operator (tr, f, "getitem", a, 2);
  NEED (r);
  PUSH (r);
  return STEP_NEXT;
}

/* Whether a traced tensor is t or holds t's storage as a view of it (items of sequences and dicts too). */
static bool
aliases_base (var *v, PyObject *t, int depth)
{
  if (!v || depth > 4)
    return false;
  if (v->kind == V_SEQ || v->kind == V_DICT)
    {
      for (size_t i = 0; i < v->n; i++)
        if (aliases_base (v->items[i], t, depth + 1))
          return true;
      return false;
    }
  if (v->kind != V_TENSOR || v->lazy || !v->obj || v->obj == t)
    return false;
  PyObject *b = PyObject_GetAttrString (v->obj, "_base");
  bool r = b == t;
  Py_XDECREF (b);
  PyErr_Clear ();
  return r;
}

/* Why x[idx] = v cannot go into the graph, or NULL. The engine's functionalization writes the new value of x back
   to x alone: x a view of another tensor, or a view of x still held (a local, the value stack), would see the old
   values, so the trace breaks there instead (Dynamo's functionalization regenerates such views). */
static const char *
setitem_alias (vm *vs, var *obj, var *value, int n_operands)
{
  PyObject *b = PyObject_GetAttrString (obj->obj, "_base");
  bool is_view = b && b != Py_None;
  Py_XDECREF (b);
  PyErr_Clear ();
  if (is_view)
    return "the tensor written to is a view of another tensor";
  for (frame *fr = vs->f; fr; fr = fr->parent)
    for (int i = 0; i < fr->nlocals; i++)
      if (fr->locals[i] != value && aliases_base (fr->locals[i], obj->obj, 0))
        return "a view of the tensor written to is still in use";
  for (int i = 0; i < vs->sp - n_operands; i++)
    if (aliases_base (vs->stack[i], obj->obj, 0))
      return "a view of the tensor written to is still in use";
  return NULL;
}

/* obj[key] = value on a tensor (the top n_operands stack slots, popped when done): an operator.setitem node
   mutating obj in the graph, as Dynamo traces it. */
static int
tensor_setitem (vm *vs, var *obj, var *key, var *value, int n_operands)
{
  tracer *tr = vs->tr;
  frame *f = vs->f;
  NEED (force (tr, f, obj) == 0);
  const char *why = setitem_alias (vs, obj, value, n_operands);
  if (why)
    return fail (tr, 1, "Unsupported tensor setitem\n  Explanation: %s", why);
  PyObject *is_meta = PyObject_GetAttrString (obj->obj, "is_meta");
  NEED (is_meta);
  Py_DECREF (is_meta);
  if (is_meta != Py_True)
    {
      /* a factory's example is a real tensor: the write goes to a meta copy, which becomes the example (its
         values would be stale) */
      PyObject *m = meta_like (obj->obj);
      NEED (m);
      PyList_Append (tr->keep, m);
      Py_DECREF (m);
      obj->obj = m;
    }
  var *a[3] = { obj, key, value };
  NEED (call_operator (tr, f, "setitem", a, 3));
  vs->sp -= n_operands;
  return STEP_NEXT;
}

/* Operators: binary, comparison, unary, subscript, `is` and `in`. */
static int
step_operators (vm *vs)
{
  tracer *tr = vs->tr;
  frame *f = vs->f;
  const int oparg = vs->oparg;
  const int opcode = vs->opcode;
  switch (opcode)
    {
    case BINARY_OP:
      {
        var *rhs = POP ();
        var *lhs = POP ();
        var *a[2] = { lhs, rhs };
        if (oparg < 0 || oparg >= (int) (sizeof binop_names / sizeof *binop_names))
          return fail (tr, 1, "unsupported binary op %d", oparg);
        var *r = call_operator (tr, f, binop_names[oparg], a, 2);
        NEED (r);
        PUSH (r);
      }
      break;
    case COMPARE_OP:
      {
        var *rhs = POP ();
        var *lhs = POP ();
        var *a[2] = { lhs, rhs };
        var *r = call_operator (tr, f, cmp_names[CMP_INDEX (oparg)], a, 2);
        NEED (r);
        PUSH (r);
      }
      break;
    case UNARY_NEGATIVE:
    case UNARY_INVERT:
    case UNARY_NOT:
      {
        var *a[1] = { POP () };
        const char *name = opcode == UNARY_NEGATIVE ? "neg" : opcode == UNARY_INVERT ? "invert" : "not_";
        if (opcode == UNARY_NOT && var_has_tensor (a[0]))
          {
            vs->sp++;
            return fail (tr, 1, "Data-dependent branching\n  Explanation: `not` on a tensor");
          }
        var *r = call_operator (tr, f, name, a, 1);
        NEED (r);
        PUSH (r);
      }
      break;
    case BINARY_SUBSCR:
      {
        var *idx = POP ();
        var *obj = POP ();
        return subscr (vs, obj, idx);
      }
    case STORE_SUBSCR:
      {
        /* TOS1[TOS] = TOS2 on a dict built while tracing (not visible outside the trace: mutated in place) */
        NEED (vs->sp >= 3);
        var *key = PEEK (1), *obj = PEEK (2), *value = PEEK (3);
        if (obj->kind == V_CONST && obj->fresh_dict && PyDict_CheckExact (obj->obj) && key->kind == V_CONST)
          {
            /* a dict of constants built while tracing ({} then d[k] = v): becomes a dict var, in place, so every
               holder of it sees the store */
            PyObject *d = obj->obj, *keys = PyTuple_New (PyDict_GET_SIZE (d));
            obj->items = malloc ((PyDict_GET_SIZE (d) + 1) * sizeof (var *));
            obj->n = 0;
            PyObject *k, *v;
            Py_ssize_t pos = 0;
            while (PyDict_Next (d, &pos, &k, &v))
              {
                PyTuple_SET_ITEM (keys, (Py_ssize_t) obj->n, Py_NewRef (k));
                obj->items[obj->n++] = const_var (tr, v);
              }
            PyList_Append (tr->keep, keys);
            Py_DECREF (keys);
            obj->kind = V_DICT;
            obj->obj = keys;
          }
        if (obj->kind == V_TENSOR)
          return tensor_setitem (vs, obj, key, value, 3);
        if (obj->kind != V_DICT || key->kind != V_CONST)
          return STEP_UNHANDLED;
        if (dict_store (tr, obj, key->obj, value) < 0)
          return fail (tr, 1, "Unsupported dict store\n  Explanation: the key is not hashable");
        vs->sp -= 3;
      }
      break;
    case IS_OP:
    case CONTAINS_OP:
      {
        var *rhs = POP ();
        var *lhs = POP ();
        if (opcode == IS_OP
            && (((lhs->kind == V_TENSOR || lhs->kind == V_SEQ) && rhs->kind == V_CONST && rhs->obj
                 && !PyObject_TypeCheck (rhs->obj, (PyTypeObject *) fxc.tensor_type)
                 && !PyTuple_Check (rhs->obj) && !PyList_Check (rhs->obj))
                || ((rhs->kind == V_TENSOR || rhs->kind == V_SEQ) && lhs->kind == V_CONST && lhs->obj
                    && !PyObject_TypeCheck (lhs->obj, (PyTypeObject *) fxc.tensor_type)
                    && !PyTuple_Check (lhs->obj) && !PyList_Check (lhs->obj))))
          {
            /* a tensor or a sequence is never the same object as None, a number or a string */
            PUSH (const_var (tr, oparg ? Py_True : Py_False));
            break;
          }
        if (opcode == CONTAINS_OP && rhs->kind == V_DICT && lhs->kind == V_CONST)
          {
            bool in = dict_find (rhs, lhs->obj) >= 0;
            PUSH (const_var (tr, in != (oparg != 0) ? Py_True : Py_False));
            break;
          }
        if ((lhs->kind != V_CONST && lhs->kind != V_OBJ) || (rhs->kind != V_CONST && rhs->kind != V_OBJ))
          {
            vs->sp += 2;
            return fail (tr, 1, "Unsupported %s on a traced value", opcode == IS_OP ? "`is`" : "`in`");
          }
        int r = opcode == IS_OP ? lhs->obj == rhs->obj : PySequence_Contains (rhs->obj, lhs->obj);
        NEED (r >= 0);
        if (oparg)
          r = !r;
        PUSH (const_var (tr, r ? Py_True : Py_False));
      }
      break;
    default:
      return STEP_UNHANDLED;
    }
  return STEP_NEXT;
}

/* tuple(list) on the top of the stack (3.11's LIST_TO_TUPLE, 3.12's intrinsic) */
static int
list_to_tuple (vm *vs)
{
  var *l = PEEK (1);
  if (l->kind != V_SEQ)
    return fail (vs->tr, 1, "Unsupported list to tuple conversion");
  var *t = var_new (vs->tr, V_SEQ, NULL);
  t->n = l->n;
  t->items = malloc ((l->n + 1) * sizeof (var *));
  memcpy (t->items, l->items, l->n * sizeof (var *));
  PEEK (1) = t;
  return STEP_NEXT;
}

/* Building and unpacking containers: tuples, lists, slices and dicts. */
static int
step_containers (vm *vs)
{
  tracer *tr = vs->tr;
  const int oparg = vs->oparg;
  const int opcode = vs->opcode;
  switch (opcode)
    {
    case BUILD_TUPLE:
    case BUILD_LIST:
      {
        var *v = var_new (tr, V_SEQ, NULL);
        v->n = oparg;
        v->is_list = opcode == BUILD_LIST;
        v->items = malloc ((oparg + 1) * sizeof (var *));
        for (int i = 0; i < oparg; i++)
          v->items[i] = vs->stack[vs->sp - oparg + i];
        vs->sp -= oparg;
        PUSH (v);
      }
      break;
    case LIST_APPEND:
      {
        /* a list comprehension's append (inlined in 3.12, a nested function in 3.11) */
        var *item = POP ();
        var *l = PEEK (oparg);
        if (l->kind != V_SEQ || !l->is_list)
          return fail (tr, 1, "Unsupported append to a list that tracing did not build");
        var **items = realloc (l->items, (l->n + 2) * sizeof (var *));
        NEED (items);
        l->items = items;
        l->items[l->n++] = item;
      }
      break;
    case UNPACK_SEQUENCE:
      {
        var *s = POP ();
        if (s->kind == V_CONST && (PyTuple_Check (s->obj) || PyList_Check (s->obj))
            && PySequence_Fast_GET_SIZE (s->obj) == oparg)
          {
            for (int i = oparg - 1; i >= 0; i--)
              PUSH (const_var (tr, PySequence_Fast_GET_ITEM (s->obj, i)));
            break;
          }
        NEED (s->kind == V_SEQ && (int) s->n == oparg);
        for (int i = oparg - 1; i >= 0; i--)
          PUSH (s->items[i]);
      }
      break;
    case IMPORT_NAME:
      {
        /* import m / from m import a inside the traced code: imported now, as Dynamo does */
        var *fromlist = POP ();
        var *level = POP ();
        if (fromlist->kind != V_CONST || level->kind != V_CONST || !PyLong_Check (level->obj))
          {
            vs->sp += 2;
            return fail (tr, 1, "Unsupported import with computed arguments");
          }
        PyObject *m = PyImport_ImportModuleLevelObject (PyTuple_GET_ITEM (vs->co->co_names, oparg), vs->f->globals, NULL,
                                                        fromlist->obj, (int) PyLong_AsLong (level->obj));
        if (!m)
          {
            PyErr_Clear ();
            vs->sp += 2;
            return fail (tr, 1, "import of %s failed while tracing",
                         PyUnicode_AsUTF8 (PyTuple_GET_ITEM (vs->co->co_names, oparg)));
          }
        PUSH (var_new (tr, V_OBJ, m));
        Py_DECREF (m);
      }
      break;
    case IMPORT_FROM:
      {
        var *m = PEEK (1);
        PyObject *a = (m->kind == V_OBJ || m->kind == V_CONST) && m->obj
                        ? PyObject_GetAttr (m->obj, PyTuple_GET_ITEM (vs->co->co_names, oparg)) : NULL;
        if (!a)
          {
            PyErr_Clear ();
            return fail (tr, 1, "Unsupported from-import of %s",
                         PyUnicode_AsUTF8 (PyTuple_GET_ITEM (vs->co->co_names, oparg)));
          }
        PUSH ((PyModule_Check (a) || PyCallable_Check (a)) ? var_new (tr, V_OBJ, a) : const_var (tr, a));
        Py_DECREF (a);
      }
      break;
    case UNPACK_EX:
      {
        /* a, *rest, z = seq: `before` items, a list of the middle, `after` items */
        int before = oparg & 0xff, after = oparg >> 8;
        var *s = seq_view (tr, POP ());
        NEED (s);
        if (s->kind != V_SEQ || (int) s->n < before + after)
          {
            vs->sp++;
            return fail (tr, 1, "Unsupported starred unpacking of a value tracing did not build as a sequence");
          }
        var *mid = var_new (tr, V_SEQ, NULL);
        mid->is_list = true;
        mid->items = malloc ((s->n + 1) * sizeof (var *));
        for (size_t i = (size_t) before; i < s->n - (size_t) after; i++)
          mid->items[mid->n++] = s->items[i];
        for (int i = after - 1; i >= 0; i--)
          PUSH (s->items[s->n - (size_t) after + (size_t) i]);
        PUSH (mid);
        for (int i = before - 1; i >= 0; i--)
          PUSH (s->items[i]);
      }
      break;
    case LIST_EXTEND:
      {
        /* [*xs, y] and list displays of constants: the list below gets the items of TOS */
        var *add = seq_view (tr, POP ());
        NEED (add);
        var *l = PEEK (oparg);
        if (l->kind != V_SEQ || !l->is_list || add->kind != V_SEQ)
          {
            vs->sp++;
            return fail (tr, 1, "Unsupported list extend with a value tracing did not build as a sequence");
          }
        var **items = realloc (l->items, (l->n + add->n + 1) * sizeof (var *));
        NEED (items);
        l->items = items;
        for (size_t i = 0; i < add->n; i++)
          l->items[l->n++] = add->items[i];
      }
      break;
    case FORMAT_VALUE:
      {
        /* f-strings of constants (a name built from a size): formatted now, as Dynamo folds them */
        var *spec = (oparg & 4) ? POP () : NULL;
        var *v = POP ();
        if (v->kind != V_CONST || !v->obj || (spec && (spec->kind != V_CONST || !PyUnicode_Check (spec->obj))))
          {
            vs->sp += spec ? 2 : 1;
            return fail (tr, 1, "Unsupported f-string of a traced value");
          }
        PyObject *conv = (oparg & 3) == 1 ? PyObject_Str (v->obj) : (oparg & 3) == 2 ? PyObject_Repr (v->obj)
                         : (oparg & 3) == 3 ? PyObject_ASCII (v->obj) : Py_NewRef (v->obj);
        PyObject *r = conv ? PyObject_Format (conv, spec ? spec->obj : NULL) : NULL;
        Py_XDECREF (conv);
        NEED (r);
        PUSH (const_var (tr, r));
        Py_DECREF (r);
      }
      break;
    case BUILD_STRING:
      {
        PyObject *parts = PyTuple_New (oparg);
        bool ok = true;
        for (int i = 0; i < oparg; i++)
          {
            var *p = vs->stack[vs->sp - oparg + i];
            ok = ok && p->kind == V_CONST && p->obj && PyUnicode_Check (p->obj);
            PyTuple_SET_ITEM (parts, i, Py_NewRef (ok ? p->obj : Py_None));
          }
        PyObject *empty = ok ? PyUnicode_New (0, 0) : NULL;
        PyObject *r = empty ? PyUnicode_Join (empty, parts) : NULL;
        Py_XDECREF (empty);
        Py_DECREF (parts);
        if (!r)
          {
            PyErr_Clear ();
            return fail (tr, 1, "Unsupported string building from traced values");
          }
        vs->sp -= oparg;
        PUSH (const_var (tr, r));
        Py_DECREF (r);
      }
      break;
#if !FXC_PY312
    case LIST_TO_TUPLE:
      return list_to_tuple (vs);
#endif
    case BUILD_SLICE:
      {
        int k = oparg == 3 ? 3 : 2;
        PyObject *parts[3] = { Py_None, Py_None, Py_None };
        for (int i = 0; i < k; i++)
          {
            var *p = vs->stack[vs->sp - k + i];
            if (p->kind != V_CONST)
              return fail (tr, 1, "Unsupported slice with a non-constant bound");
            parts[i] = p->obj;
          }
        vs->sp -= k;
        PyObject *slice = PySlice_New (parts[0], parts[1], parts[2]);
        NEED (slice);
        var *v = const_var (tr, slice);
        Py_DECREF (slice);
        PUSH (v);
      }
      break;
    case BUILD_MAP:
      {
        PyObject *d = PyDict_New ();
        bool ok = true;
        for (int i = 0; ok && i < oparg; i++)
          {
            var *k = vs->stack[vs->sp - 2 * oparg + 2 * i], *v = vs->stack[vs->sp - 2 * oparg + 2 * i + 1];
            ok = k->kind == V_CONST && (v->kind == V_CONST || v->kind == V_OBJ) && PyDict_SetItem (d, k->obj, v->obj) == 0;
          }
        if (!ok)
          {
            Py_DECREF (d);
            PyErr_Clear ();
            /* values that are traced: a dict var, with constant keys */
            var **kv = &vs->stack[vs->sp - 2 * oparg];
            var **keys = malloc ((oparg + 1) * sizeof (var *)), **vals = malloc ((oparg + 1) * sizeof (var *));
            for (int i = 0; i < oparg; i++)
              {
                keys[i] = kv[2 * i];
                vals[i] = kv[2 * i + 1];
              }
            var *dv = dict_new (tr, keys, vals, oparg);
            free (keys);
            free (vals);
            if (!dv)
              return fail (tr, 1, "Unsupported dict of traced values\n  Explanation: a key is not a hashable constant");
            vs->sp -= 2 * oparg;
            PUSH (dv);
            break;
          }
        vs->sp -= 2 * oparg;
        var *v = const_var (tr, d);
        v->fresh_dict = true;
        Py_DECREF (d);
        PUSH (v);
      }
      break;
    case DICT_MERGE:
    case DICT_UPDATE:
      {
        var *upd = POP ();
        NEED (vs->sp >= oparg);
        var *d = PEEK (oparg);
        if (d->kind != V_CONST || !PyDict_Check (d->obj) || upd->kind != V_CONST || !PyDict_Check (upd->obj))
          return fail (tr, 1, "Unsupported **kwargs of traced values");
        PyObject *m = PyDict_Copy (d->obj);
        NEED (m && PyDict_Update (m, upd->obj) == 0);
        var *v = const_var (tr, m);
        Py_DECREF (m);
        PEEK (oparg) = v;
      }
      break;
    case BUILD_CONST_KEY_MAP:
      {
        /* dict of constants only; a dict holding tensors is not supported in this version */
        var *keys = POP ();
        PyObject *d = PyDict_New ();
        bool ok = keys->kind == V_CONST && PyTuple_Check (keys->obj) && PyTuple_GET_SIZE (keys->obj) == oparg;
        for (int i = 0; ok && i < oparg; i++)
          {
            var *v = vs->stack[vs->sp - oparg + i];
            ok = v->kind == V_CONST || v->kind == V_OBJ;
            if (ok)
              PyDict_SetItem (d, PyTuple_GET_ITEM (keys->obj, i), v->obj);
          }
        if (!ok && keys->kind == V_CONST && PyTuple_Check (keys->obj) && PyTuple_GET_SIZE (keys->obj) == oparg)
          {
            /* values that are traced: a dict var */
            Py_DECREF (d);
            PyErr_Clear ();
            var **kv = malloc ((oparg + 1) * sizeof (var *));
            for (int i = 0; i < oparg; i++)
              kv[i] = const_var (tr, PyTuple_GET_ITEM (keys->obj, i));
            var *dv = dict_new (tr, kv, &vs->stack[vs->sp - oparg], oparg);
            free (kv);
            if (!dv)
              {
                vs->sp++;
                return fail (tr, 1, "Unsupported dict of traced values\n  Explanation: a key is not hashable");
              }
            vs->sp -= oparg;
            PUSH (dv);
            break;
          }
        if (!ok)
          {
            Py_DECREF (d);
            vs->sp++;
            return fail (tr, 1, "Unsupported dict of traced values");
          }
        vs->sp -= oparg;
        var *v = const_var (tr, d);
        v->fresh_dict = true;
        Py_DECREF (d);
        PUSH (v);
      }
      break;
    default:
      return STEP_UNHANDLED;
    }
  return STEP_NEXT;
}

/* Calls: CALL with its KW_NAMES, and CALL_FUNCTION_EX (star-args and double-star kwargs). */
static int
step_calls (vm *vs)
{
  tracer *tr = vs->tr;
  frame *f = vs->f;
  PyCodeObject *co = vs->co;
  const int oparg = vs->oparg;
  const int opcode = vs->opcode;
  switch (opcode)
    {
    case KW_NAMES:
      vs->kwnames = PyTuple_GET_ITEM (co->co_consts, oparg);
      break;
    case CALL:
      {
        NEED (vs->sp >= oparg + 2);
        var **args = &vs->stack[vs->sp - oparg];
        var *callee = PEEK (oparg + 1);
        var *first = PEEK (oparg + 2);
        var *r;
        if (first->kind != V_NULL)
          {
            /* (method, self, args): our LOAD_METHOD never does this, but bytecode from LOAD_ATTR may */
            var **all = malloc ((oparg + 1) * sizeof (var *));
            all[0] = callee;
            memcpy (all + 1, args, oparg * sizeof (var *));
            r = call_var (tr, f, first, all, oparg + 1, vs->kwnames);
            free (all);
          }
        else
          r = call_var (tr, f, callee, args, oparg, vs->kwnames);
        if (!r && !f->parent && !in_try_block (vs->co, vs->inst_ip))
          {
            /* (in a try block the call is made by CPython, whose handler must see what it raises) */
            tr->t->break_kind = FXC_BREAK_CALL;
            tr->t->call_argc = oparg;
            Py_XINCREF (vs->kwnames);
            tr->t->call_kwnames = vs->kwnames;
            tr->t->resume_at[0] = vs->next;
          }
        vs->kwnames = NULL;
        if (!r)
          return tr->reason[0] ? 1 : -1;
        vs->sp -= oparg + 2;
        PUSH (r);
      }
      break;
    case CALL_FUNCTION_EX:
      {
        var *kw = (oparg & 1) ? POP () : NULL;
        var *pa = POP ();
        var *callee = POP ();
        NEED (vs->sp >= 1);
        if (pa->kind == V_CONST && PyTuple_Check (pa->obj))
          {
            /* a constant tuple of positional arguments */
            var *seq = var_new (tr, V_SEQ, NULL);
            seq->n = PyTuple_GET_SIZE (pa->obj);
            seq->items = malloc ((seq->n + 1) * sizeof (var *));
            for (size_t i = 0; i < seq->n; i++)
              seq->items[i] = const_var (tr, PyTuple_GET_ITEM (pa->obj, i));
            pa = seq;
          }
        if (pa->kind != V_SEQ || (kw && !(kw->kind == V_CONST && PyDict_Check (kw->obj))))
          {
            vs->sp += kw ? 3 : 2;
            return fail (tr, 1, "Unsupported function call\n  Explanation: *args/**kwargs of traced values");
          }
        Py_ssize_t nkw = kw ? PyDict_Size (kw->obj) : 0;
        var **all = malloc ((pa->n + nkw + 1) * sizeof (var *));
        memcpy (all, pa->items, pa->n * sizeof (var *));
        PyObject *names = nkw ? PyTuple_New (nkw) : NULL;
        Py_ssize_t pos = 0, i = 0;
        PyObject *k, *val;
        while (kw && PyDict_Next (kw->obj, &pos, &k, &val))
          {
            Py_INCREF (k);
            PyTuple_SET_ITEM (names, i, k);
            all[pa->n + i] = const_var (tr, val);
            i++;
          }
        if (names)
          {
            PyList_Append (tr->keep, names);
            Py_DECREF (names);
          }
        var *r = call_var (tr, f, callee, all, pa->n + nkw, names);
        free (all);
        if (!r)
          return tr->reason[0] ? 1 : -1;
        (void) POP (); /* the NULL below the callable */
        PUSH (r);
      }
      break;
    default:
      return STEP_UNHANDLED;
    }
  return STEP_NEXT;
}

/* A popping conditional jump: on a tensor a graph break (data-dependent branching), on a constant taken or not. */
static int
cond_jump_step (vm *vs, const fxc_cjump *cj)
{
  tracer *tr = vs->tr;
  frame *f = vs->f;
  const int oparg = vs->oparg;
  int target = cj->backward ? vs->next - oparg : vs->next + oparg;
  var *c = PEEK (1);
  if (cj->none_test && (c->kind == V_TENSOR || c->kind == V_SEQ))
    {
      /* `if bias is not None`: a tensor or a sequence is never None */
      (void) POP ();
      if (!cj->when)
        vs->next = target;
      return STEP_NEXT;
    }
  if (c->kind == V_TENSOR)
    {
      if (!f->parent && !in_try_block (vs->co, vs->inst_ip))
        {
          tr->t->break_kind = FXC_BREAK_JUMP;
          tr->t->break_opcode = vs->opcode;
          tr->t->resume_at[0] = vs->next;
          tr->t->resume_at[1] = target;
        }
      return fail (tr, 1, "Data-dependent branching\n"
                 "  Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic control flow.\n"
                 "  Hint: This graph break is fundamental - it is unlikely that Dynamo will ever be able to trace through your code. Consider finding a workaround.\n"
                 "  Hint: Use `torch.cond` to express dynamic control flow.\n"
                 "\n"
                 "  Developer debug context: attempted to jump with TensorVariable()\n"
                 "\n"
                 " For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html");
    }
  if (c->kind != V_CONST && c->kind != V_OBJ)
    return fail (tr, 1, "Unsupported jump on a non-constant value");
  (void) POP ();
  bool jump;
  if (cj->none_test)
    jump = (c->obj == Py_None) == cj->when;
  else
    {
      int truth = PyObject_IsTrue (c->obj);
      NEED (truth >= 0);
      jump = cj->when ? truth : !truth;
    }
  if (jump)
    vs->next = target;
  return STEP_NEXT;
}

/* Control flow: jumps and branches (a branch on a tensor is a graph break), loops over iterators, `with` blocks of
   grad modes, return. */
static int
step_control (vm *vs)
{
  tracer *tr = vs->tr;
  frame *f = vs->f;
  const int oparg = vs->oparg;
  const int opcode = vs->opcode;
  fxc_cjump cj;
  if (fxc_cond_jump (opcode, &cj))
    return cond_jump_step (vs, &cj);
  switch (opcode)
    {
    case JUMP_FORWARD:
      vs->next = vs->next + oparg;
      break;
    case JUMP_BACKWARD:
    case JUMP_BACKWARD_NO_INTERRUPT:
      vs->next = vs->next - oparg;
      break;
#if !FXC_PY312
    case JUMP_IF_FALSE_OR_POP:
    case JUMP_IF_TRUE_OR_POP:
      {
        /* `a and b` / `a or b` on constants; on anything else the frame continues in CPython here */
        var *c = PEEK (1);
        if (c->kind != V_CONST && c->kind != V_OBJ)
          {
            return fail (tr, 1, "Unsupported `and`/`or` on a traced value\n  Explanation: the truth of a %s is "
                       "not known while tracing", c->kind == V_TENSOR ? "tensor" : "traced value");
          }
        int truth = PyObject_IsTrue (c->obj);
        NEED (truth >= 0);
        if ((opcode == JUMP_IF_TRUE_OR_POP) == (truth != 0))
          vs->next = vs->next + oparg;
        else
          (void) POP ();
      }
      break;
#endif
    case GET_ITER:
      {
        var *s = POP ();
        if (s->kind == V_DICT)
          s = const_seq (tr, s->obj);   /* iterating a dict: its keys */
        if (s->kind == V_OBJ && is_instance (s->obj, fxc.module_type) == 1)
          {
            /* nn.Sequential / nn.ModuleList: iterate the children with their _modules sources */
            PyObject *mods = PyObject_GetAttrString (s->obj, "_modules");
            NEED (mods && PyDict_Check (mods));
            var *seq = var_new (tr, V_SEQ, NULL);
            seq->items = malloc ((PyDict_Size (mods) + 1) * sizeof (var *));
            PyObject *k, *m;
            Py_ssize_t pos = 0;
            while (PyDict_Next (mods, &pos, &k, &m))
              {
                if (m == Py_None)
                  continue;
                fxc_source src = { .local = -1 };
                var *c;
                if (s->has_src)
                  {
                    source_attr (&src, &s->src, k, "_modules");
                    c = wrap_value (tr, f, m, &src);
                    fxc_source_clear (&src);
                  }
                else
                  c = wrap_value (tr, f, m, NULL);
                if (!c)
                  break;
                seq->items[seq->n++] = c;
              }
            Py_DECREF (mods);
            s = seq;
          }
        if ((s->kind == V_CONST || s->kind == V_OBJ) && !s->is_iter && PyIter_Check (s->obj))
          {
            /* an iterator from outside the traced code (e.g. a resume function's enumerate): tracing must not
               consume it, since CPython runs the frame on the same object if capture gives up */
            return fail (tr, 1, "Unsupported iteration over an iterator\n  Explanation: iterating %s would consume it",
                       Py_TYPE (s->obj)->tp_name);
          }
        if (s->kind == V_CONST || (s->kind == V_OBJ && !PyCallable_Check (s->obj)))
          {
            /* range/tuple/list constants: iterate the materialized list (loops are unrolled) */
            PyObject *lst = PySequence_List (s->obj);
            NEED (lst);
            PyObject *it = PyObject_GetIter (lst);
            Py_DECREF (lst);
            NEED (it);
            var *v = var_new (tr, V_CONST, it);
            Py_DECREF (it);
            v->is_iter = true;
            PUSH (v);
          }
        else if (s->kind == V_SEQ)
          {
            PyObject *idx = PyList_New (0);
            for (size_t i = 0; i < s->n; i++)
              {
                PyObject *p = PyLong_FromSize_t (i);
                PyList_Append (idx, p);
                Py_DECREF (p);
              }
            PyObject *it = PyObject_GetIter (idx);
            Py_DECREF (idx);
            var *v = var_new (tr, V_CONST, it);
            Py_DECREF (it);
            v->recv = s;
            v->is_iter = true;
            PUSH (v);
          }
        else
          return fail (tr, 1, "Unsupported iteration over a non-constant value");
      }
      break;
    case FOR_ITER:
      {
        var *it = PEEK (1);
        if (!it->is_iter || !it->obj)
          {
            return fail (tr, 1, "Unsupported iteration over an iterator\n  Explanation: FOR_ITER on a value that "
                       "tracing did not create would consume it");
          }
        PyObject *item = PyIter_Next (it->obj);
        if (!item)
          {
            NEED (!PyErr_Occurred ());
            (void) POP ();
            vs->next = vs->next + oparg + FOR_ITER_END_SKIP;
            break;
          }
        if (it->recv)
          {
            PUSH (it->recv->items[PyLong_AsSsize_t (item)]);
            Py_DECREF (item);
          }
        else
          {
            var *v = const_var (tr, item);
            Py_DECREF (item);
            PUSH (v);
          }
      }
      break;
    case BEFORE_WITH:
      {
        var *mgr = PEEK (1);
        if (mgr->kind == V_CONST && mgr->obj && is_nullcontext_type ((PyObject *) Py_TYPE (mgr->obj)))
          {
            /* with nullcontext(x) as y: y is x; a block like a grad-mode one (a break inside cannot resume) */
            PyObject *er = PyObject_GetAttrString (mgr->obj, "enter_result");
            PyErr_Clear ();
            (void) POP ();
            tr->grad_depth++;
            var *exit = const_var (tr, Py_None);
            exit->grad_ctx = GRAD_CTX_NULL_EXIT;
            PUSH (exit);
            PUSH (const_var (tr, er ? er : Py_None));
            Py_XDECREF (er);
            break;
          }
        if (mgr->kind != V_CONST || (mgr->grad_ctx != 1 && mgr->grad_ctx != 2))
          {
            return fail (tr, 1, "Unsupported context manager\n  Explanation: only torch.no_grad(), "
                       "torch.enable_grad() and contextlib.nullcontext() blocks are traced; the frame continues in CPython");
          }
        (void) POP ();
        int before = tr->grad_mode;
        if (grad_mode_set (tr, f, mgr->grad_ctx == 2) < 0)
          return fail (tr, 0, "torch._C._set_grad_enabled is missing");
        if (before < 0)
          before = tr->grad_entry;
        tr->grad_depth++;
        var *exit = const_var (tr, Py_None);
        exit->grad_ctx = 3 + before;
        PUSH (exit);
        PUSH (const_var (tr, Py_None));
      }
      break;
    case RETURN_GENERATOR:
      /* the generator object the caller gets: an inlined generator's yields stand for it (POP_TOP follows) */
      if (!f->yields)
        return fail (tr, 0, "generator frames are not captured");
      PUSH (const_var (tr, Py_None));
      break;
    case YIELD_VALUE:
      {
        if (!f->yields)
          return fail (tr, 1, "Unsupported yield outside an inlined generator");
        var *v = POP ();
        var **items = realloc (f->yields->items, (f->yields->n + 2) * sizeof (var *));
        NEED (items);
        f->yields->items = items;
        f->yields->items[f->yields->n++] = v;
        PUSH (const_var (tr, Py_None));   /* what send() gives back: next() sends None */
      }
      break;
    case RETURN_VALUE:
      *vs->result = POP ();
      return 0;
    default:
      return STEP_UNHANDLED;
    }
  return STEP_NEXT;
}

/* Cells and closures: free variables, nonlocal reads and writes, and the functions MAKE_FUNCTION builds. */
static int
step_closures (vm *vs)
{
  tracer *tr = vs->tr;
  frame *f = vs->f;
  PyCodeObject *co = vs->co;
  const int oparg = vs->oparg;
  const int opcode = vs->opcode;
  switch (opcode)
    {
    case COPY_FREE_VARS:
      if (!f->parent)
        {
          /* the compiled function is itself a closure: its free variables read as L['name'] (Dynamo's
             LocalSource of a derefed cell) */
          PyObject *closure = f->func ? PyFunction_GET_CLOSURE (f->func) : NULL;
          int off = co->co_nlocalsplus - co->co_nfreevars;
          for (int k = 0; closure && k < co->co_nfreevars && k < PyTuple_GET_SIZE (closure); k++)
            if (!f->locals[off + k])
              {
                var *c = var_new (tr, V_CELL, PyTuple_GET_ITEM (closure, k));
                source_set_local (&c->src, off + k,
                                  PyUnicode_AsUTF8 (PyTuple_GET_ITEM (co->co_localsplusnames, off + k)));
                c->src.deref = true;
                c->has_src = true;
                f->locals[off + k] = c;
              }
        }
      break;
    case MAKE_CELL:
      {
        /* an argument that is a cell starts with the argument's value */
        var *init = f->locals[oparg];
        if (!init && !f->parent && tr->top_locals[oparg])
          {
            init = load_local (tr, f, oparg);
            NEED (init);
          }
        var *c = var_new (tr, V_CELL, NULL);
        c->recv = init;
        c->cell_loaded = true;
        f->locals[oparg] = c;
      }
      break;
    case LOAD_CLOSURE:
      {
        var *c = f->locals[oparg];
        NEED (c && c->kind == V_CELL);
        PUSH (c);
      }
      break;
    case LOAD_DEREF:
    case STORE_DEREF:
    case DELETE_DEREF:
      {
        var *c = f->locals[oparg];
        const char *nm = PyUnicode_AsUTF8 (PyTuple_GET_ITEM (co->co_localsplusnames, oparg));
        NEED (c && c->kind == V_CELL);
        if (opcode != LOAD_DEREF)
          {
            if (c->obj && f->parent)
              {
                /* the cell belongs to a function from outside the trace: its write is a side effect */
                return fail (tr, 1, "Unsupported nonlocal write\n  Explanation: a store to the free variable '%s' of "
                           "an inlined function defined outside the compiled frame", nm);
              }
            c->recv = opcode == STORE_DEREF ? POP () : NULL;
            c->cell_loaded = true;
            c->cell_dirty = c->obj != NULL;
            break;
          }
        if (!c->cell_loaded && c->obj)
          {
            PyObject *val = PyCell_GET (c->obj);
            if (val)
              {
                c->recv = wrap_value (tr, f, val, c->has_src ? &c->src : NULL);
                NEED (c->recv);
              }
            c->cell_loaded = true;
          }
        if (!c->recv)
          {
            /* CPython raises NameError here: let it */
            return fail (tr, f->parent ? 1 : 0, "free variable '%s' referenced before assignment in enclosing scope",
                       nm);
          }
        PUSH (c->recv);
      }
      break;
#if !FXC_PY312
    case LOAD_CLASSDEREF:
#else
    case LOAD_FROM_DICT_OR_DEREF:
#endif
      return fail (tr, f->parent ? 1 : 0, "class bodies are not captured (LOAD_CLASSDEREF)");
    case MAKE_FUNCTION:
      {
        var *code_v = POP ();
        var *closure = (oparg & 0x08) ? POP () : NULL;
        var *annotations = (oparg & 0x04) ? POP () : NULL;
        var *kwdefaults = (oparg & 0x02) ? POP () : NULL;
        var *defaults = (oparg & 0x01) ? POP () : NULL;
        (void) annotations;
        NEED (code_v->kind == V_CONST && PyCode_Check (code_v->obj));
        PyCodeObject *fco = (PyCodeObject *) code_v->obj;
        bool ok = !closure || (closure->kind == V_SEQ && (int) closure->n == fco->co_nfreevars);
        for (size_t i = 0; ok && closure && i < closure->n; i++)
          ok = closure->items[i]->kind == V_CELL;
        PyObject *defs = NULL;
        if (ok && defaults)
          {
            /* defaults are values of the trace: only constants can be a real function's defaults */
            if (defaults->kind == V_CONST && PyTuple_Check (defaults->obj))
              defs = Py_NewRef (defaults->obj);
            else if (defaults->kind == V_SEQ)
              {
                defs = PyTuple_New (defaults->n);
                for (size_t i = 0; ok && i < defaults->n; i++)
                  {
                    var *d = defaults->items[i];
                    ok = (d->kind == V_CONST || d->kind == V_OBJ) && d->obj;
                    if (ok)
                      PyTuple_SET_ITEM (defs, i, Py_NewRef (d->obj));
                  }
              }
            else
              ok = false;
          }
        if (ok && kwdefaults)
          ok = kwdefaults->kind == V_CONST && PyDict_Check (kwdefaults->obj);
        if (!ok)
          {
            Py_XDECREF (defs);
            vs->sp = vs->inst_sp;
            return fail (tr, 1, "Unsupported function definition\n  Explanation: MAKE_FUNCTION with defaults or a "
                       "closure that are not constants or cells of the trace");
          }
        /* A real function object (for its code, name, globals and defaults); its closure holds placeholder
           cells: calls are inlined with the trace's cells, and a closure never leaves the trace. */
        PyObject *fn = PyFunction_New ((PyObject *) fco, f->globals);
        NEED (fn);
        int err = 0;
        if (defs)
          err |= PyFunction_SetDefaults (fn, defs);
        if (kwdefaults)
          err |= PyFunction_SetKwDefaults (fn, kwdefaults->obj);
        if (closure && closure->n)
          {
            PyObject *cl = PyTuple_New (closure->n);
            for (size_t i = 0; i < closure->n; i++)
              PyTuple_SET_ITEM (cl, i, PyCell_New (NULL));
            err |= PyFunction_SetClosure (fn, cl);
            Py_DECREF (cl);
          }
        Py_XDECREF (defs);
        if (err)
          {
            Py_DECREF (fn);
            NEED (0);
          }
        var *v = var_new (tr, V_FUNC, fn);
        Py_DECREF (fn);
        if (closure && closure->n)
          {
            v->n = closure->n;
            v->items = malloc (closure->n * sizeof (var *));
            memcpy (v->items, closure->items, closure->n * sizeof (var *));
          }
        PUSH (v);
      }
      break;
    default:
      return STEP_UNHANDLED;
    }
  return STEP_NEXT;
}

/* A graph break in the top frame: the graph ends here and the frame continues in CPython at the breaking
   instruction (cur_ip), with the stack as it was before it (inst_sp) and the live locals, rebuilt from the graph's
   outputs. */
static void
break_to_resume (tracer *tr, frame *f, var *const *stack, int inst_sp, const _Py_CODEUNIT *code, int n, int cur_ip)
{
  PyCodeObject *co = f->code;
  /* The breaking instruction runs in CPython: it needs the stack as it was before it (popping does not clear
     the slots, and nothing is pushed before a failure). */
  int sp = inst_sp;
  tr->cells_frame = f;
  tr->at_break = true;
  /* Top frame: remember where to resume and what the stack and locals hold. */
  if (!tr->t->break_reason)
    record_break (tr, f);
  tr->t->resume_offset = cur_ip;
  tr->t->resume_stack = PyList_New (0);
  tr->t->resume_locals = PyList_New (0);
  PyObject *outputs = PyList_New (0);
  Py_CLEAR (tr->spec_memo);   /* its specs index another outputs list */
  bool ok = true;
  for (int i = 0; i < sp && ok; i++)
    {
      PyObject *s = out_spec (tr, stack[i], outputs);
      if (!s)
        ok = false;
      else
        {
          PyList_Append (tr->t->resume_stack, s);
          Py_DECREF (s);
        }
    }
  /* Liveness (conservative): a local is live when some LOAD_FAST of it follows the break, or anywhere when a
     backward jump follows. Unchanged inputs stay in the frame. */
  bool *live = calloc (f->nlocals + 1, sizeof (bool));
  bool any_back = false;
  for (int j = cur_ip; j < n; j++)
    {
      if (jumps_backward (_Py_OPCODE (code[j])))
        any_back = true;
    }
  for (int j = any_back ? 0 : cur_ip; j < n; j++)
    {
      int op = _Py_OPCODE (code[j]);
      int arg = _Py_OPARG (code[j]);
      if (j > 0 && _Py_OPCODE (code[j - 1]) == EXTENDED_ARG)
        arg |= _Py_OPARG (code[j - 1]) << 8;
      if (IS_FAST_LOAD (op) && arg < f->nlocals)
        live[arg] = true;
      j += _PyOpcode_Caches[op];
    }
  /* The frame continues after its MAKE_CELLs: every cell variable gets a real cell with the traced contents
     (("K", spec) in resume_locals), live or not, since CPython's LOAD_DEREF expects a cell there. */
  const char *kinds_ = PyBytes_AS_STRING (co->co_localspluskinds);
  for (int i = 0; i < co->co_nlocalsplus - co->co_nfreevars && ok; i++)
    if (kinds_[i] & CO_FAST_CELL)
      {
        var *c = f->locals[i];
        PyObject *s = NULL;
        if (c && c->kind == V_CELL)
          s = c->recv ? out_spec (tr, c->recv, outputs) : Py_BuildValue ("(sO)", "null", Py_None);
        if (!s)
          ok = false;
        else
          {
            PyObject *p = Py_BuildValue ("(i(sN))", i, "K", s);
            PyList_Append (tr->t->resume_locals, p);
            Py_DECREF (p);
          }
      }
  ok = ok && cells_writes (tr, f, outputs);
  for (int i = 0; i < f->nlocals && ok; i++)
    if (f->locals[i] && live[i] && f->locals[i]->kind != V_CELL
        && !((f->locals[i]->kind == V_TENSOR || f->locals[i]->kind == V_OBJ || f->locals[i]->kind == V_CONST
              || f->locals[i]->kind == V_SEQ)
             && f->locals[i]->has_src && f->locals[i]->src.local == i && !f->locals[i]->src.attrs
             && !f->locals[i]->src.deref))
      {
        PyObject *s = out_spec (tr, f->locals[i], outputs);
        if (!s)
          ok = false;
        else
          {
            PyObject *p = Py_BuildValue ("(iN)", i, s);
            PyList_Append (tr->t->resume_locals, p);
            Py_DECREF (p);
          }
      }
  free (live);
  if (ok)
    finish_graph (tr, outputs);
  else
    {
      PyErr_Clear ();
      free (tr->t->fail_reason);
      tr->t->fail_reason = strdup ("a value live at the graph break cannot be rebuilt");
    }
  Py_DECREF (outputs);
}

#if FXC_PY312
/* 3.12's own forms: RETURN_CONST, the clearing fast load (inlined comprehensions), END_FOR, slices as
   one instruction, intrinsics and super(). LOAD_ATTR's method bit and COMPARE_OP's shifted argument are read where
   the 3.11 forms are. */
static int
step_py312 (vm *vs)
{
  tracer *tr = vs->tr;
  frame *f = vs->f;
  const int oparg = vs->oparg;
  switch (vs->opcode)
    {
    case RETURN_CONST:
      *vs->result = const_var (tr, PyTuple_GET_ITEM (vs->co->co_consts, oparg));
      return 0;
    case LOAD_FAST_AND_CLEAR:
      {
        /* the comprehension's variable as it was outside (NULL when unbound); STORE_FAST puts it back after */
        bool bound = f->locals[oparg] || (!f->parent && tr->top_locals[oparg]);
        var *v = bound ? load_local (tr, f, oparg) : var_new (tr, V_NULL, NULL);
        NEED (v);
        f->locals[oparg] = NULL;
        PUSH (v);
      }
      break;
    case END_FOR:
      NEED (vs->sp >= 2);
      vs->sp -= 2;
      break;
    case BINARY_SLICE:
      {
        var *stop = POP ();
        var *start = POP ();
        var *obj = POP ();
        if (start->kind != V_CONST || stop->kind != V_CONST)
          return fail (tr, 1, "Unsupported slice with a non-constant bound");
        PyObject *slice = PySlice_New (start->obj, stop->obj, NULL);
        NEED (slice);
        var *idx = const_var (tr, slice);
        Py_DECREF (slice);
        return subscr (vs, obj, idx);
      }
    case STORE_SLICE:
      {
        /* TOS2[TOS1:TOS] = TOS3 (3.12): a slice store into a tensor is a setitem */
        NEED (vs->sp >= 4);
        var *stop = PEEK (1), *start = PEEK (2), *obj = PEEK (3), *value = PEEK (4);
        if (obj->kind != V_TENSOR || start->kind != V_CONST || stop->kind != V_CONST)
          return fail (tr, 1, "Unsupported slice assignment while tracing");
        PyObject *slice = PySlice_New (start->obj, stop->obj, NULL);
        NEED (slice);
        var *idx = const_var (tr, slice);
        Py_DECREF (slice);
        return tensor_setitem (vs, obj, idx, value, 4);
      }
    case CALL_INTRINSIC_1:
      if (oparg == INTRINSIC_LIST_TO_TUPLE)
        return list_to_tuple (vs);
      if (oparg == INTRINSIC_UNARY_POSITIVE)
        {
          var *a[1] = { POP () };
          var *r = call_operator (tr, f, "pos", a, 1);
          NEED (r);
          PUSH (r);
          break;
        }
      return fail (tr, 1, "Unsupported intrinsic %d (CALL_INTRINSIC_1)", oparg);
    case LOAD_SUPER_ATTR:
      {
        /* global super, class, self -> (NULL if the method form) attribute: super(class, self).name */
        var *self = POP ();
        var *cls = POP ();
        var *sup = POP ();
        if (!(sup->kind == V_OBJ || sup->kind == V_CONST) || sup->obj != (PyObject *) &PySuper_Type)
          return fail (tr, 1, "Unsupported super() attribute\n  Explanation: `super` is not the builtin here");
        var *sv = super_var (tr, f, cls, self);
        NEED (sv);
        var *v = load_attr (tr, f, sv, PyTuple_GET_ITEM (vs->co->co_names, oparg >> 2));
        NEED (v);
        if (oparg & 1)
          PUSH (var_new (tr, V_NULL, NULL));
        PUSH (v);
        break;
      }
    default:
      return STEP_UNHANDLED;
    }
  return STEP_NEXT;
}
#endif

/* The opcode families, tried in turn for each instruction. */
static int (*const steps[]) (vm *) = {
#if FXC_PY312
  step_py312,
#endif
  step_names, step_operators, step_containers, step_calls, step_control, step_closures,
};

static int
interpret (tracer *tr, frame *f, var **result)
{
  PyCodeObject *co = f->code;
  PyObject *bytes = PyCode_GetCode (co);
  if (!bytes)
    return -1;
  const _Py_CODEUNIT *code = (const _Py_CODEUNIT *) PyBytes_AS_STRING (bytes);
  int n = (int) (PyBytes_GET_SIZE (bytes) / 2);
  vm *vs = calloc (1, sizeof *vs);   /* on the heap: inlined calls nest interpret() deeply */
  if (!vs)
    {
      Py_DECREF (bytes);
      PyErr_NoMemory ();
      return -1;
    }
  vs->tr = tr;
  vs->f = f;
  vs->co = co;
  vs->result = result;
  int rc = 0;
  int ip = 0;
  int cur_ip = 0;
  int inst_sp = 0;
  int steps_run = 0;
  while (ip < n)
    {
      int inst_ip = ip;
      cur_ip = ip;
      inst_sp = vs->inst_sp = vs->sp;
      int opcode = _Py_OPCODE (code[ip]);
      int oparg = _Py_OPARG (code[ip]);
      while (opcode == EXTENDED_ARG)
        {
          ip++;
          opcode = _Py_OPCODE (code[ip]);
          oparg = (oparg << 8) | _Py_OPARG (code[ip]);
        }
      vs->opcode = opcode;
      vs->oparg = oparg;
      vs->next = ip + 1 + _PyOpcode_Caches[opcode];
      f->line = PyCode_Addr2Line (co, inst_ip * 2);
      vs->inst_ip = inst_ip;
      if (++steps_run > 100000)
        {
          rc = fail (tr, 0, "trace too long");
          goto done;
        }
      int st = STEP_UNHANDLED;
      for (size_t k = 0; st == STEP_UNHANDLED && k < sizeof steps / sizeof *steps; k++)
        st = steps[k] (vs);
      if (st == STEP_UNHANDLED)
        {
          /* a graph break at the instruction, as Dynamo breaks on what it cannot trace */
          rc = fail (tr, 1, "unsupported bytecode %s (%d) at offset %d", "opcode", opcode, inst_ip * 2);
          goto done;
        }
      if (st != STEP_NEXT)
        {
          rc = st;
          goto done;
        }
      ip = vs->next;
    }
  rc = fail (tr, 0, "fell off the end of the bytecode");
done:
  if (rc > 0 && tr->break_gb && !f->parent && tr->grad_depth > 0)
    {
      /* inside a no_grad/enable_grad block: the frame runs in CPython (its resume would lose the mode) */
      char why[sizeof tr->reason + 64];
      snprintf (why, sizeof why, "a graph break inside a torch.no_grad()/enable_grad() block: %s", tr->reason);
      rc = fail (tr, 0, "%s", why);
    }
  if (rc > 0 && tr->break_gb && !f->parent)
    {
      if (tr->t->break_kind == FXC_BREAK_OTHER && fxc_store_pops (vs->opcode) >= 0
          && !in_try_block (co, vs->inst_ip))
        {
          /* a store of the frame's own capture does not trace (x.a = v, lst[i] = v, a setitem into a view): made
             after the graph, then a resume function goes on after it (captured again); any other instruction, or
             one in a try block (its handler must see what it raises), and the rest of the frame run in CPython */
          tr->t->break_kind = FXC_BREAK_STORE;
          tr->t->break_opcode = vs->opcode;
          tr->t->break_oparg = vs->oparg;
          tr->t->resume_at[0] = vs->next;
        }
      break_to_resume (tr, f, vs->stack, inst_sp, code, n, cur_ip);
      rc = 0;
    }
  else if (rc > 0 && tr->break_gb && f->parent && !tr->t->break_reason)
    record_break (tr, f);
  Py_DECREF (bytes);
  free (vs);
  return rc;
}

int
fxc_interpret_py311 (PyCodeObject *code, PyObject *func, PyObject *const *locals, PyObject *globals,
                     PyObject *builtins, fxc_trace *t)
{
  tracer tr;
  memset (&tr, 0, sizeof tr);
  tr.t = t;
  tr.grad_mode = -1;
  tr.keep = PyList_New (0);
  tr.realized = PyDict_New ();
  tr.builtins = builtins;
  tr.top_locals = locals;
  t->graph = fx_graph_new ();
  t->targets = PyDict_New ();
  t->examples = PyList_New (0);
  t->resume_offset = -1;
  fx_guard_set_init (&t->guards);
  frame f = { 0 };
  f.code = code;
  f.globals = globals;
  f.func = func;
  f.nlocals = code->co_nlocalsplus;
  f.locals = calloc (f.nlocals + 1, sizeof (var *));
  int rc;
  if (!(code->co_flags & CO_OPTIMIZED))
    rc = fail (&tr, 0, "class bodies and module-level code are not captured");
  else if (code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR))
    rc = fail (&tr, 0, "generator or coroutine frames are skipped");
  else
    {
      var *res = NULL;
      rc = interpret (&tr, &f, &res);
      if (rc == 0 && res)
        {
          tr.cells_frame = &f;
          PyObject *outputs = PyList_New (0);
          Py_CLEAR (tr.spec_memo);   /* its specs index another outputs list */
          t->out_spec = out_spec (&tr, res, outputs);
          if (t->out_spec && cells_writes (&tr, &f, outputs))
            finish_graph (&tr, outputs);
          else
            {
              PyErr_Clear ();
              rc = fail (&tr, 0, "the return value cannot be rebuilt");
            }
          Py_DECREF (outputs);
        }
    }
  if (rc > 0)
    {
      if (tr.break_gb && t->fullgraph)
        t->fail_reason = strdup (tr.reason);
      else
        t->fail_reason = strdup (tr.reason);
      rc = 0;
    }
  else if (rc == 0 && t->break_reason && t->fullgraph)
    {
      free (t->fail_reason);
      t->fail_reason = strdup (t->break_reason);
    }
  if (tr.grad_mode >= 0 && tr.grad_mode != tr.grad_entry)
    {
      /* tracing stopped inside a no_grad/enable_grad block: torch's mode back to the caller's */
      PyObject *et, *ev, *tb;
      PyErr_Fetch (&et, &ev, &tb);
      PyObject *c = PyObject_GetAttrString (fxc.torch, "_C");
      PyObject *r = c ? PyObject_CallMethod (c, "_set_grad_enabled", "O", tr.grad_entry ? Py_True : Py_False) : NULL;
      Py_XDECREF (r);
      Py_XDECREF (c);
      PyErr_Clear ();
      PyErr_Restore (et, ev, tb);
    }
  free (f.locals);
  tracer_free_vars (&tr);
  Py_DECREF (tr.keep);
  Py_XDECREF (tr.spec_memo);
  Py_DECREF (tr.realized);
  return rc < 0 ? -1 : 0;
}
