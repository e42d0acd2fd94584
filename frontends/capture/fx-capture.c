/* fx-capture.c: the PEP 523 frame hook, per-code caches behind guards, recompiles and the _fxcapture module. */
#include "fx-capture-private.h"

#include <opcode.h>

#include <string.h>
#include <time.h>

#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

fxc_state fxc;

#ifndef CO_FAST_CELL
#define CO_FAST_CELL 0x40
#define CO_FAST_FREE 0x80
#endif

static _Thread_local bool tls_interrupted;

void
fxc_err_note (void)
{
  if (!PyErr_Occurred ())
    return;
  if (PyErr_ExceptionMatches (PyExc_KeyboardInterrupt))
    {
      tls_interrupted = true;
      return;
    }
  /* an interrupt may hide behind what a later call raised over it (SystemError: a result with an error set) */
  PyObject *et, *ev, *tb;
  PyErr_Fetch (&et, &ev, &tb);
  PyErr_NormalizeException (&et, &ev, &tb);
  PyObject *c = ev;
  for (int depth = 0; c && PyExceptionInstance_Check (c) && depth < 32; depth++)
    {
      if (PyErr_GivenExceptionMatches (c, PyExc_KeyboardInterrupt))
        {
          tls_interrupted = true;
          break;
        }
      PyObject *next = PyException_GetContext (c);   /* new reference, or NULL */
      Py_XDECREF (next);                              /* c's chain keeps it alive */
      c = next;
    }
  PyErr_Restore (et, ev, tb);
}

void
fxc_err_clear (void)
{
  fxc_err_note ();
  PyErr_Clear ();
}

bool
fxc_interrupt_restore (void)
{
  if (!tls_interrupted)
    return false;
  tls_interrupted = false;
  /* whatever was raised over the interrupt gives way to it */
  if (!PyErr_Occurred () || !PyErr_ExceptionMatches (PyExc_KeyboardInterrupt))
    {
      PyErr_Clear ();
      PyErr_SetNone (PyExc_KeyboardInterrupt);
    }
  return true;
}

/* from here on, every error cleared may be the user's Ctrl-C */
#define PyErr_Clear() fxc_err_clear ()

/* Per code object: its frame id (Dynamo numbers frames in first-compile order) and compiled entries. */
typedef struct code_cache
{
  int frame_id;
  int n_compiles;
  bool skip;
  bool warned_limit;
  bool seen_eager;            /* eager_then_compile: the first call ran eagerly */
  char *skip_reason;
  fxc_entry *entries;         /* newest first */
  PyObject *frame_state;      /* automatic dynamic: source -> sizes seen (None where a dim changed) */
  bool static_only;           /* a symbolic trace failed: specialize every compile of this frame */
} code_cache;

static PyObject *caches;          /* dict: code -> capsule(code_cache) */
static PyObject *allowed_codes;   /* set: the forwards of compiled modules, captured even inside torch (nn.Sequential) */
static int next_frame_id;
static int recompile_limit = 8;
static _Thread_local PyObject *tls_ctx; /* the compile context of the running torch.compile call */
static _Thread_local int tls_busy;      /* compiling or running a backend: frames run as they are */
static char *skip_prefixes[8];
static int n_skip_prefixes;
static PyObject *grad_enabled_fn;
/* GlobalStateGuard's fields, in its reason() order: (name, probe) pairs from fxcapture._global_state_probes. */
#define GS_MAX 16
static PyObject *gs_probes;       /* tuple of callables */
static const char **gs_names;     /* reason words ("grad_mode", "autocast", ...) */
static Py_ssize_t gs_n;
/* The probes resolved to their C functions: torch._C's getters are METH_NOARGS builtins, called directly on every
   cache hit (no vectorcall dispatch); NULL where a probe is some other callable (called through Python). */
static PyCFunction gs_meth[GS_MAX];
static PyObject *gs_self[GS_MAX];

/* The probes' values of one call of the hook, read once however many entries are checked (new refs). */
typedef struct gs_values
{
  bool have;
  PyObject *v[GS_MAX];
} gs_values;

/* Tensor attributes read on a cache hit through their C getters (the descriptors of torch.Tensor), when the
   tensor's type resolves the name to the same descriptor; otherwise through getattr. */
static PyObject *td_dtype, *td_device, *td_requires_grad, *td_shape, *td_is_cpu, *td_stride;
static PyObject *dtype_cache;     /* dict: torch.dtype -> int (fx_dtype) */
static PyObject *s_size, *s_stride, *s_dtype, *s_device, *s_requires_grad, *s_type, *s_index, *s_shape, *s_is_cpu;
static char stance[32] = "default";

/* ------------------------------------------------------------------ sources */

void
fxc_source_clear (fxc_source *src)
{
  Py_CLEAR (src->global);
  Py_CLEAR (src->attrs);
  free (src->name);
  src->name = NULL;
}

void
fxc_source_copy (fxc_source *dst, const fxc_source *src)
{
  dst->local = src->local;
  dst->deref = src->deref;
  dst->global = src->global;
  Py_XINCREF (dst->global);
  dst->attrs = src->attrs;
  Py_XINCREF (dst->attrs);
  dst->name = src->name ? strdup (src->name) : NULL;
  dst->size_of = src->size_of;
}

/* New reference, or NULL with an error set. */
PyObject *
fxc_source_eval (const fxc_source *src, PyObject *const *locals, PyObject *globals, PyObject *builtins)
{
  PyObject *o;
  if (src->local >= 0)
    {
      o = locals[src->local];
      if (o && src->deref)
        o = PyCell_Check (o) ? PyCell_GET (o) : NULL;
      if (!o)
        {
          PyErr_SetString (PyExc_UnboundLocalError, src->name);
          return NULL;
        }
      Py_INCREF (o);
    }
  else
    {
      o = PyDict_GetItemWithError (globals, src->global);
      if (!o && !PyErr_Occurred ())
        o = PyDict_GetItemWithError (builtins, src->global);
      if (!o)
        {
          if (!PyErr_Occurred ())
            PyErr_SetString (PyExc_NameError, src->name);
          return NULL;
        }
      Py_INCREF (o);
    }
  if (src->attrs)
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE (src->attrs); i++)
      {
        PyObject *step = PyTuple_GET_ITEM (src->attrs, i);
        /* an int step is an item of a tuple or list (L['xs'][0]), a 1-tuple a dict key (L['d']['a']), a str an
           attribute */
        PyObject *n = PyLong_CheckExact (step)    ? PySequence_GetItem (o, PyLong_AsSsize_t (step))
                      : PyTuple_CheckExact (step) ? PyObject_GetItem (o, PyTuple_GET_ITEM (step, 0))
                                                  : PyObject_GetAttr (o, step);
        Py_DECREF (o);
        if (!n)
          return NULL;
        o = n;
      }
  if (src->size_of > 0)
    {
      /* a SymInt input: the tensor's size at that dim */
      PyObject *size = PyObject_CallMethodNoArgs (o, s_size);
      Py_DECREF (o);
      if (!size)
        return NULL;
      o = PySequence_GetItem (size, src->size_of - 1);
      Py_DECREF (size);
    }
  return o;
}

/* ------------------------------------------------------------------ tensor metadata */

int
fxc_tensor_check_from (PyObject *t, fx_tensor_check *out)
{
  memset (out, 0, sizeof *out);
  out->type_name = _PyType_Name (Py_TYPE (t));
  PyObject *dt = PyObject_GetAttr (t, s_dtype);
  if (!dt)
    return -1;
  PyObject *code = PyDict_GetItem (dtype_cache, dt);
  if (!code)
    {
      PyObject *s = PyObject_Str (dt);
      fx_dtype d = s ? fx_dtype_from_name (PyUnicode_AsUTF8 (s)) : FX_DTYPE_UNKNOWN;
      Py_XDECREF (s);
      code = PyLong_FromLong (d);
      PyDict_SetItem (dtype_cache, dt, code);
      Py_DECREF (code);
    }
  out->dtype = (fx_dtype) PyLong_AsLong (code);
  Py_DECREF (dt);
  PyObject *dev = PyObject_GetAttr (t, s_device);
  if (!dev)
    return -1;
  PyObject *ty = PyObject_GetAttr (dev, s_type);
  PyObject *ix = PyObject_GetAttr (dev, s_index);
  Py_DECREF (dev);
  if (!ty || !ix)
    {
      Py_XDECREF (ty);
      Py_XDECREF (ix);
      return -1;
    }
  fx_buf b;
  fx_buf_init (&b);
  fx_buf_puts (&b, PyUnicode_AsUTF8 (ty));
  fx_device_parse (b.data, &out->device);
  fx_buf_free (&b);
  out->device.index = ix == Py_None ? -1 : (int) PyLong_AsLong (ix);
  Py_DECREF (ty);
  Py_DECREF (ix);
  PyObject *rg = PyObject_GetAttr (t, s_requires_grad);
  if (!rg)
    return -1;
  out->requires_grad = rg == Py_True;
  Py_DECREF (rg);
  PyObject *size = PyObject_CallMethodNoArgs (t, s_size);
  PyObject *stride = size ? PyObject_CallMethodNoArgs (t, s_stride) : NULL;
  if (!size || !stride)
    {
      Py_XDECREF (size);
      return -1;
    }
  out->ndim = (int) PyTuple_GET_SIZE (size);
  if (out->ndim > FX_GUARD_MAX_DIMS)
    out->ndim = FX_GUARD_MAX_DIMS;
  for (int i = 0; i < out->ndim; i++)
    {
      out->sizes[i] = PyLong_AsLongLong (PyTuple_GET_ITEM (size, i));
      out->strides[i] = PyLong_AsLongLong (PyTuple_GET_ITEM (stride, i));
    }
  Py_DECREF (size);
  Py_DECREF (stride);
  return 0;
}

/* ------------------------------------------------------------------ entries */

static void
entry_free (fxc_entry *e)
{
  while (e)
    {
      fxc_entry *next = e->next;
      fx_guard_set_clear (&e->guards);
      for (size_t i = 0; i < e->n_checks; i++)
        {
          fxc_source_clear (&e->checks[i].src);
          Py_XDECREF (e->checks[i].expected);
        }
      free (e->checks);
      for (size_t i = 0; i < e->n_inputs; i++)
        fxc_source_clear (&e->inputs[i]);
      free (e->inputs);
      free (e->shape_guards);
      Py_XDECREF (e->compiled);
      Py_XDECREF (e->backend);
      Py_XDECREF (e->out_spec);
      Py_XDECREF (e->resume_stack);
      Py_XDECREF (e->resume_locals);
      Py_XDECREF (e->call_kwnames);
      Py_XDECREF (e->resume_fn[0]);
      Py_XDECREF (e->resume_fn[1]);
      Py_XDECREF (e->cell_writes);
      for (Py_ssize_t i = 0; e->global_state && i < gs_n; i++)
        Py_XDECREF (e->global_state[i]);
      free (e->global_state);
      free (e);
      e = next;
    }
}

static void
cache_capsule_free (PyObject *cap)
{
  code_cache *c = PyCapsule_GetPointer (cap, "fxc.cache");
  if (!c)
    return;
  entry_free (c->entries);
  Py_XDECREF (c->frame_state);
  free (c->skip_reason);
  free (c);
}

/* Resolves a getset descriptor of torch.Tensor (NULL when absent or not a getset). */
static PyObject *
tensor_descr (const char *name, PyTypeObject *kind)
{
  PyObject *d = PyObject_GetAttrString (fxc.tensor_type, name);
  if (d && !PyObject_TypeCheck (d, kind))
    Py_CLEAR (d);
  PyErr_Clear ();
  return d;
}

/* Tensor types (Tensor, Parameter, ...) whose attributes resolved to torch.Tensor's descriptors, at their version
   tags: while a tag is unchanged (CPython changes it when the type or a base is modified), the lookups are not
   repeated. */
#define TD_CHECKED 4
static PyTypeObject *td_checked_type[TD_CHECKED];
static unsigned int td_checked_tag[TD_CHECKED];
static unsigned int td_checked_next;

static bool
tensor_type_plain (PyTypeObject *tp)
{
  bool valid = PyType_HasFeature (tp, Py_TPFLAGS_VALID_VERSION_TAG);
  for (int i = 0; valid && i < TD_CHECKED; i++)
    if (tp == td_checked_type[i] && td_checked_tag[i] != 0 && tp->tp_version_tag == td_checked_tag[i])
      return true;
  if (!td_dtype || !td_requires_grad || !td_shape || !td_stride
      || _PyType_Lookup (tp, s_dtype) != td_dtype || _PyType_Lookup (tp, s_requires_grad) != td_requires_grad
      || _PyType_Lookup (tp, s_shape) != td_shape || _PyType_Lookup (tp, s_stride) != td_stride
      || _PyType_Lookup (tp, s_device) != td_device || _PyType_Lookup (tp, s_is_cpu) != td_is_cpu)
    return false;
  if (PyType_HasFeature (tp, Py_TPFLAGS_VALID_VERSION_TAG))
    {
      /* a borrowed type: a freed type's slot could only match a new type at the same address with the same
         tag, which CPython never reuses */
      unsigned int k = td_checked_next++ % TD_CHECKED;
      td_checked_type[k] = tp;
      td_checked_tag[k] = tp->tp_version_tag;
    }
  return true;
}

/* t.<name> through the getter of torch.Tensor's descriptor when the type resolves name to it (plain: checked by
   tensor_type_plain; a subclass that overrides the attribute goes through getattr); a getset descriptor is a data
   descriptor, so the instance dict cannot shadow it. */
static inline PyObject *
tensor_get (PyObject *t, PyObject *name, PyObject *descr, bool plain)
{
  if (descr && (plain || _PyType_Lookup (Py_TYPE (t), name) == descr))
    {
      PyGetSetDef *gs = ((PyGetSetDescrObject *) descr)->d_getset;
      return gs->get (t, gs->closure);
    }
  return PyObject_GetAttr (t, name);
}

/* TENSOR_MATCH on a cache hit: requires_grad and dtype by identity, the rank and sizes, the strides, then the
   device (a CPU tensor by its is_cpu flag); the verbose path (fx_tensor_check_verbose) only runs to explain a
   failure. */
static int
tensor_fast_match (PyObject *t, const fx_tensor_check *e, PyObject *expected)
{
  bool plain = tensor_type_plain (Py_TYPE (t));
  PyObject *rg = tensor_get (t, s_requires_grad, td_requires_grad, plain);
  if (!rg)
    goto error;
  Py_DECREF (rg);
  if ((rg == Py_True) != e->requires_grad)
    return 0;
  PyObject *dt = tensor_get (t, s_dtype, td_dtype, plain);
  if (!dt)
    goto error;
  Py_DECREF (dt);
  if (dt != PyTuple_GET_ITEM (expected, 0))
    return 0;
  PyObject *size = tensor_get (t, s_shape, td_shape, plain);
  if (!size)
    goto error;
  int ok = PyTuple_Check (size) && PyTuple_GET_SIZE (size) == e->ndim;
  for (int i = 0; ok && i < e->ndim; i++)
    ok = e->sizes[i] < 0 || PyLong_AsLongLong (PyTuple_GET_ITEM (size, i)) == e->sizes[i];
  Py_DECREF (size);
  if (!ok)
    return 0;
  if (e->device.type == FX_DEVICE_CPU && td_is_cpu)
    {
      PyObject *cpu = tensor_get (t, s_is_cpu, td_is_cpu, plain);
      if (!cpu)
        goto error;
      Py_DECREF (cpu);
      if (cpu != Py_True)
        return 0;
    }
  else
    {
      PyObject *dev = tensor_get (t, s_device, td_device, plain);
      if (!dev)
        goto error;
      int same = PyObject_RichCompareBool (dev, PyTuple_GET_ITEM (expected, 1), Py_EQ);
      Py_DECREF (dev);
      if (same != 1)
        goto error_or_false;
    }
  PyObject *stride = td_stride && (plain || _PyType_Lookup (Py_TYPE (t), s_stride) == td_stride)
                     ? PyObject_Vectorcall (td_stride, &t, 1, NULL) : PyObject_CallMethodNoArgs (t, s_stride);
  if (!stride)
    goto error;
  for (int i = 0; ok && i < e->ndim; i++)
    ok = e->strides[i] < 0 || PyLong_AsLongLong (PyTuple_GET_ITEM (stride, i)) == e->strides[i];
  Py_DECREF (stride);
  return ok;
error_or_false:
error:
  PyErr_Clear ();
  return 0;
}

/* A dimension of an entry's input tensor, or -1 with no error set when it cannot be read. */
static int64_t
dimref_value (fxc_entry *e, const fxc_dimref *r, PyObject *const *locals, PyObject *globals, PyObject *builtins)
{
  if (r->input < 0 || (size_t) r->input >= e->n_inputs)
    return -1;
  PyObject *t = fxc_source_eval (&e->inputs[r->input], locals, globals, builtins);
  if (!t)
    {
      PyErr_Clear ();
      return -1;
    }
  PyObject *dims = PyObject_CallMethodNoArgs (t, r->stride ? s_stride : s_size);
  Py_DECREF (t);
  int64_t v = -1;
  if (dims && PyTuple_Check (dims) && r->dim < PyTuple_GET_SIZE (dims))
    v = PyLong_AsLongLong (PyTuple_GET_ITEM (dims, r->dim));
  Py_XDECREF (dims);
  PyErr_Clear ();
  return v;
}

/* The shape env's guards of a dynamic entry (run after TENSOR_MATCH has checked the ranks). */
static int
shape_guards_check (fxc_entry *e, PyObject *const *locals, PyObject *globals, PyObject *builtins, fx_buf *reason)
{
  for (size_t i = 0; i < e->n_shape_guards; i++)
    {
      fxc_shape_guard *sg = &e->shape_guards[i];
      int64_t lhs = dimref_value (e, &sg->lhs, locals, globals, builtins);
      bool ok;
      if (sg->eq)
        {
          int64_t rhs = sg->k;
          for (int j = 0; j < sg->n_rhs; j++)
            rhs *= dimref_value (e, &sg->rhs[j], locals, globals, builtins);
          ok = lhs >= 0 && lhs == rhs;
        }
      else
        ok = lhs >= sg->k;
      if (!ok)
        {
          if (reason)
            fx_guard_fail_reason (&e->guards.guards[sg->guard], reason);
          return 0;
        }
    }
  return 1;
}

/* One probe's value now (new reference; a probe that raises gives None). */
static PyObject *
gs_probe_call (Py_ssize_t i)
{
  PyObject *v;
  if (gs_meth[i])
    v = gs_meth[i] (gs_self[i], NULL);
  else
    {
      PyObject *probe = PyTuple_GET_ITEM (gs_probes, i);
      v = probe == Py_None ? NULL : PyObject_CallNoArgs (probe);
    }
  if (v == NULL)
    {
      PyErr_Clear ();
      v = Py_NewRef (Py_None);
    }
  return v;
}

static void
gs_values_fill (gs_values *g)
{
  if (g->have)
    return;
  for (Py_ssize_t i = 0; i < gs_n; i++)
    g->v[i] = PyTuple_GET_ITEM (gs_probes, i) == Py_None ? NULL : gs_probe_call (i);
  g->have = true;
}

static void
gs_values_clear (gs_values *g)
{
  if (!g->have)
    return;
  for (Py_ssize_t i = 0; i < gs_n; i++)
    Py_CLEAR (g->v[i]);
  g->have = false;
}

/* Probe values are bools, small ints and dtypes: identity decides almost always; others by value. */
static inline bool
gs_same (PyObject *now, PyObject *then)
{
  if (now == then)
    return true;
  if (!now || !then)
    return false;
  int eq = PyObject_RichCompareBool (now, then, Py_EQ);
  PyErr_Clear ();
  return eq == 1;
}

/* One non-tensor check: the value read from its source against the expected one. */
static inline int
check_value (const fxc_check *c, fx_guard_kind kind, PyObject *o)
{
  switch (kind)
    {
    case FX_GUARD_EQUALS_MATCH:
      {
        if (o == c->expected)
          return 1;
        int ok = Py_TYPE (o) == Py_TYPE (c->expected) && PyObject_RichCompareBool (o, c->expected, Py_EQ) == 1;
        PyErr_Clear ();
        return ok;
      }
    case FX_GUARD_TYPE_MATCH:
      return (PyObject *) Py_TYPE (o) == c->expected;
    case FX_GUARD_ID_MATCH:
      return o == c->expected;
    case FX_GUARD_DICT_KEYS_MATCH:
      {
        if (!PyDict_CheckExact (o) || PyDict_GET_SIZE (o) != PyTuple_GET_SIZE (c->expected))
          return 0;
        Py_ssize_t pos = 0, ki = 0;
        PyObject *k, *v;
        int ok = 1;
        while (ok && PyDict_Next (o, &pos, &k, &v))
          {
            PyObject *want = PyTuple_GET_ITEM (c->expected, ki++);
            ok = k == want || PyObject_RichCompareBool (k, want, Py_EQ) == 1;
          }
        PyErr_Clear ();
        return ok;
      }
    case FX_GUARD_LENGTH_CHECK:
      return (PyTuple_Check (o) || PyList_Check (o)) && PySequence_Fast_GET_SIZE (o) == PyLong_AsSsize_t (c->expected);
    default:
      return 1;
    }
}

/* The global state against the entry's (grad mode alone when the probes are missing). With reason, every field is
   compared and the reason lists each that changed, as GlobalStateGuard::reason() does; without, the first change
   ends the check. */
static int
global_state_check (fxc_entry *e, gs_values *gs, fx_buf *reason)
{
  if (e->global_state == NULL)
    {
      PyObject *ge = PyObject_CallNoArgs (grad_enabled_fn);
      bool grad = ge == Py_True;
      Py_XDECREF (ge);
      PyErr_Clear ();
      if (grad == e->grad_enabled)
        return 1;
      if (reason)
        fx_buf_puts (reason, "GLOBAL_STATE changed: grad_mode ");
      return 0;
    }
  gs_values_fill (gs);
  bool same = true;
  for (Py_ssize_t i = 0; i < gs_n && (same || reason); i++)
    if (gs->v[i] && !gs_same (gs->v[i], e->global_state[i]))
      {
        if (reason)
          fx_buf_printf (reason, "%s%s ", same ? "GLOBAL_STATE changed: " : "", gs_names[i]);
        same = false;
      }
  return same ? 1 : 0;
}

/* The cache-hit check: only whether every guard passes, cheapest and most likely to fail first: values read from
   locals, globals and closures (EQUALS/ID/TYPE), then the global state (read once per call through gs), then the
   tensors. */
static int
entry_check_fast (fxc_entry *e, PyObject *const *locals, PyObject *globals, PyObject *builtins, gs_values *gs)
{
  fx_guard *guards = e->guards.guards;
  for (size_t i = 0; i < e->n_checks; i++)
    {
      fxc_check *c = &e->checks[i];
      fx_guard_kind kind = guards[c->guard].kind;
      if (kind == FX_GUARD_TENSOR_MATCH)
        continue;
      PyObject *o = fxc_source_eval (&c->src, locals, globals, builtins);
      if (!o)
        {
          PyErr_Clear ();
          return 0;
        }
      int ok = check_value (c, kind, o);
      Py_DECREF (o);
      if (!ok)
        return 0;
    }
  if (!global_state_check (e, gs, NULL))
    return 0;
  for (size_t i = 0; i < e->n_checks; i++)
    {
      fxc_check *c = &e->checks[i];
      fx_guard *g = &guards[c->guard];
      if (g->kind != FX_GUARD_TENSOR_MATCH)
        continue;
      PyObject *o = fxc_source_eval (&c->src, locals, globals, builtins);
      if (!o)
        {
          PyErr_Clear ();
          return 0;
        }
      int ok;
      if (!PyObject_TypeCheck (o, (PyTypeObject *) fxc.tensor_type))
        ok = 0;
      else if (c->expected)
        ok = tensor_fast_match (o, &g->tensor, c->expected);
      else
        {
          fx_tensor_check actual;
          ok = fxc_tensor_check_from (o, &actual) == 0 && fx_tensor_check_verbose (&g->tensor, &actual, "", NULL);
          PyErr_Clear ();
        }
      Py_DECREF (o);
      if (!ok)
        return 0;
    }
  if (e->n_shape_guards && !shape_guards_check (e, locals, globals, builtins, NULL))
    return 0;
  return 1;
}

/* Evaluates an entry's guards. Without reason: the fast check of a cache hit. With reason: in the order the trace
   installed them, writing the first failing reason (Dynamo reports only the first) and every changed global-state
   field. */
static int
entry_check (fxc_entry *e, PyObject *const *locals, PyObject *globals, PyObject *builtins, gs_values *gs,
             fx_buf *reason)
{
  if (!reason)
    return entry_check_fast (e, locals, globals, builtins, gs);
  for (size_t i = 0; i < e->n_checks; i++)
    {
      fxc_check *c = &e->checks[i];
      fx_guard *g = &e->guards.guards[c->guard];
      PyObject *o = fxc_source_eval (&c->src, locals, globals, builtins);
      if (!o)
        {
          PyErr_Clear ();
          fx_guard_fail_reason (g, reason);
          return 0;
        }
      int ok = 1;
      if (g->kind == FX_GUARD_TENSOR_MATCH)
        {
          fx_buf nm;
          fx_buf_init (&nm);
          fx_guard_strip_local_scope (c->src.name, &nm);
          if (!PyObject_TypeCheck (o, (PyTypeObject *) fxc.tensor_type))
            {
              fx_buf_printf (reason, "expected type of '%s' to be <class 'torch.Tensor'>, but found <class '%s'>",
                             nm.data, Py_TYPE (o)->tp_name);
              ok = 0;
            }
          else
            {
              fx_tensor_check actual;
              if (fxc_tensor_check_from (o, &actual) < 0)
                {
                  PyErr_Clear ();
                  ok = 0;
                }
              else
                ok = fx_tensor_check_verbose (&g->tensor, &actual, nm.data, reason);
            }
          fx_buf_free (&nm);
        }
      else
        {
          ok = check_value (c, g->kind, o);
          if (!ok)
            fx_guard_fail_reason (g, reason);
        }
      Py_DECREF (o);
      if (!ok)
        return 0;
    }
  if (e->n_shape_guards && !shape_guards_check (e, locals, globals, builtins, reason))
    return 0;
  return global_state_check (e, gs, reason);
}

/* The probes' values now (new references; a probe that raises gives None). */
static PyObject **
global_state_snapshot (void)
{
  if (gs_n == 0)
    return NULL;
  PyObject **v = calloc ((size_t) gs_n, sizeof (PyObject *));
  for (Py_ssize_t i = 0; i < gs_n; i++)
    v[i] = PyTuple_GET_ITEM (gs_probes, i) == Py_None ? Py_NewRef (Py_None) : gs_probe_call (i);
  return v;
}

/* Reads fxcapture._global_state_probes: ((name, callable), ...). Missing: only grad mode is guarded. */
static void
global_state_init (PyObject *glue)
{
  PyObject *pairs = PyObject_GetAttrString (glue, "_global_state_probes");
  if (pairs == NULL || !PyTuple_Check (pairs))
    {
      PyErr_Clear ();
      Py_XDECREF (pairs);
      return;
    }
  Py_ssize_t n = PyTuple_GET_SIZE (pairs);
  if (n > GS_MAX)
    n = GS_MAX;
  gs_probes = PyTuple_New (n);
  gs_names = calloc ((size_t) n + 1, sizeof (char *));
  for (Py_ssize_t i = 0; i < n; i++)
    {
      PyObject *pair = PyTuple_GET_ITEM (pairs, i);
      const char *name = PyTuple_Check (pair) && PyTuple_GET_SIZE (pair) == 2
                         ? PyUnicode_AsUTF8 (PyTuple_GET_ITEM (pair, 0)) : NULL;
      if (name == NULL)
        {
          PyErr_Clear ();
          Py_DECREF (pairs);
          Py_CLEAR (gs_probes);
          free (gs_names);
          gs_names = NULL;
          return;
        }
      gs_names[i] = strdup (name);
      PyTuple_SET_ITEM (gs_probes, i, Py_NewRef (PyTuple_GET_ITEM (pair, 1)));
    }
  gs_n = n;
  Py_DECREF (pairs);
  for (Py_ssize_t i = 0; i < gs_n; i++)
    {
      PyObject *p = PyTuple_GET_ITEM (gs_probes, i);
      if (PyCFunction_Check (p)
          && (PyCFunction_GET_FLAGS (p) & (METH_VARARGS | METH_FASTCALL | METH_NOARGS | METH_O | METH_KEYWORDS
                                            | METH_METHOD)) == METH_NOARGS)
        {
          gs_meth[i] = PyCFunction_GET_FUNCTION (p);
          gs_self[i] = PyCFunction_GET_SELF (p);
        }
    }
}

static void
source_capsule_free (PyObject *cap)
{
  fxc_source *src = PyCapsule_GetPointer (cap, "fxc_source");
  if (src)
    {
      fxc_source_clear (src);
      free (src);
    }
}

PyObject *
fxc_tuple_fields (PyObject *cls)
{
  PyObject *f = PyObject_GetAttrString (cls, "_fields");
  if (!f || !PyTuple_Check (f))
    {
      Py_XDECREF (f);
      PyErr_Clear ();
      f = PyObject_GetAttrString (cls, "__match_args__");
    }
  if (!f || !PyTuple_Check (f))
    {
      Py_XDECREF (f);
      PyErr_Clear ();
      return NULL;
    }
  return f;
}

PyObject *
fxc_tuple_as (PyObject *cls, PyObject *t)
{
  PyObject *args = PyTuple_Pack (1, t);
  if (!args)
    return NULL;
  PyTypeObject *tp = (PyTypeObject *) cls;
  bool named = PyObject_HasAttrString (cls, "_fields");
  PyObject *r = named ? PyTuple_Type.tp_new (tp, args, NULL) : tp->tp_new (tp, args, NULL);
  Py_DECREF (args);
  return r;
}

PyObject *
fxc_source_capsule (const fxc_source *src)
{
  fxc_source *copy = calloc (1, sizeof *copy);
  fxc_source_copy (copy, src);
  PyObject *cap = PyCapsule_New (copy, "fxc_source", source_capsule_free);
  if (!cap)
    {
      fxc_source_clear (copy);
      free (copy);
    }
  return cap;
}

/* Where ('s', source) specs read from: the frame's locals as they were when the entry was entered. */
typedef struct spec_env
{
  PyObject *const *locals;
  PyObject *globals, *builtins;
} spec_env;

/* The env ('s', source) specs are read in: set by entry_run/entry_resume around spec_build. */
static _Thread_local const spec_env *spec_entry;

/* While a frame is continued in CPython: its locals, holding the cells that ("F", ...) closures are built over. */
static _Thread_local PyObject **spec_frame_locals;
/* While a graph break's stack and locals are rebuilt: spec -> the list or dict built for it, so that one traced
   list held twice (a local and the stack) is one object again. */
static _Thread_local PyObject *spec_memo;
static PyObject *spec_build_items (PyObject *spec, const char *kind, PyObject *arg, PyObject *outs);

/* ('s', source) specs read the locals as the call entered, cells in place: a snapshot of the first N, new references
   (the locals are replaced while specs are built). */
static PyObject **
spec_locals_snapshot (PyObject *const *locals, int n)
{
  PyObject **snap = calloc ((size_t) n + 1, sizeof (PyObject *));
  for (int i = 0; i < n; i++)
    snap[i] = Py_XNewRef (locals[i]);
  return snap;
}

/* The end of a rebuild that spec_locals_snapshot started: the specs' env and memo are gone, the snapshot freed. */
static void
spec_rebuild_end (PyObject **snap, int n)
{
  spec_frame_locals = NULL;
  spec_entry = NULL;
  Py_CLEAR (spec_memo);
  for (int i = 0; i < n; i++)
    Py_XDECREF (snap[i]);
  free (snap);
}

/* Rebuilds a value from its spec and the graph's outputs. */
static PyObject *
spec_build (PyObject *spec, PyObject *outs)
{
  const char *kind = PyUnicode_AsUTF8 (PyTuple_GET_ITEM (spec, 0));
  PyObject *arg = PyTuple_GET_ITEM (spec, 1);
  if (kind[0] == 't')
    {
      Py_ssize_t i = PyLong_AsSsize_t (arg);
      PyObject *o = PySequence_GetItem (outs, i);
      return o;
    }
  if (kind[0] == 'c')
    {
      Py_INCREF (arg);
      return arg;
    }
  if (kind[0] == 's')
    {
      if (!spec_entry)
        {
          PyErr_SetString (PyExc_SystemError, "capture: a value read from its source outside its frame");
          return NULL;
        }
      return fxc_source_eval (PyCapsule_GetPointer (arg, "fxc_source"), spec_entry->locals, spec_entry->globals,
                              spec_entry->builtins);
    }
  if (kind[0] == 'n')
    return NULL;
  if (kind[0] == 'l')
    {
      /* a local of the frame as this call passed it */
      PyObject *v = spec_frame_locals ? spec_frame_locals[PyLong_AsSsize_t (arg)] : NULL;
      if (!v)
        PyErr_SetString (PyExc_SystemError, "capture: a local to rebuild a value from is missing");
      return Py_XNewRef (v);
    }
  if (kind[0] == 'F')
    {
      /* an inner function of the trace: a new function of the template's code, defaults and name over the frame's
         cells (the template's own closure holds placeholders) */
      PyObject *slots = PyTuple_GET_ITEM (spec, 2);
      if (!spec_frame_locals)
        {
          PyErr_SetString (PyExc_SystemError, "capture: a closure rebuilt outside its frame");
          return NULL;
        }
      PyObject *cl = PyTuple_New (PyTuple_GET_SIZE (slots));
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE (slots); i++)
        {
          PyObject *cell = spec_frame_locals[PyLong_AsLong (PyTuple_GET_ITEM (slots, i))];
          if (!cell || !PyCell_Check (cell))
            {
              Py_DECREF (cl);
              PyErr_SetString (PyExc_SystemError, "capture: a closure's cell is missing");
              return NULL;
            }
          PyTuple_SET_ITEM (cl, i, Py_NewRef (cell));
        }
      PyFunctionObject *tpl = (PyFunctionObject *) arg;
      PyObject *fn = PyFunction_NewWithQualName (tpl->func_code, tpl->func_globals, tpl->func_qualname);
      if (!fn || (tpl->func_defaults && PyFunction_SetDefaults (fn, tpl->func_defaults) < 0)
          || (tpl->func_kwdefaults && PyFunction_SetKwDefaults (fn, tpl->func_kwdefaults) < 0)
          || PyFunction_SetClosure (fn, cl) < 0)
        Py_CLEAR (fn);
      Py_DECREF (cl);
      return fn;
    }
  if (kind[0] == 'K')
    {
      /* a cell variable of a frame continued in CPython: a new cell with the contents (empty for a null spec) */
      PyObject *v = spec_build (arg, outs);
      if (!v && PyErr_Occurred ())
        return NULL;
      PyObject *cell = PyCell_New (v);
      Py_XDECREF (v);
      return cell;
    }
  if (kind[0] == 'a')
    {
      PyObject *recv = spec_build (arg, outs);
      if (!recv)
        return NULL;
      PyObject *r = PyObject_GetAttr (recv, PyTuple_GET_ITEM (spec, 2));
      Py_DECREF (recv);
      return r;
    }
  PyObject *memo_key = NULL;
  if (spec_memo && (kind[0] == 'L' || kind[0] == 'D'))
    {
      memo_key = PyLong_FromVoidPtr (spec);
      PyObject *seen = memo_key ? PyDict_GetItemWithError (spec_memo, memo_key) : NULL;
      if (seen || PyErr_Occurred ())
        {
          Py_XDECREF (memo_key);
          return Py_XNewRef (seen);
        }
    }
  PyObject *built = spec_build_items (spec, kind, arg, outs);
  if (memo_key && built)
    PyDict_SetItem (spec_memo, memo_key, built);
  Py_XDECREF (memo_key);
  return built;
}

/* ('L'|'T'|'D', item specs, ...) */
static PyObject *
spec_build_items (PyObject *spec, const char *kind, PyObject *arg, PyObject *outs)
{
  Py_ssize_t n = PyList_GET_SIZE (arg);
  PyObject *l = PyList_New (n);
  for (Py_ssize_t i = 0; i < n; i++)
    {
      PyObject *o = spec_build (PyList_GET_ITEM (arg, i), outs);
      if (!o)
        {
          Py_DECREF (l);
          return NULL;
        }
      PyList_SET_ITEM (l, i, o);
    }
  if (kind[0] == 'L')
    return l;
  if (kind[0] == 'D')
    {
      /* a dict built while tracing: its keys with the rebuilt values */
      PyObject *keys = PyTuple_GET_ITEM (spec, 2), *d = PyDict_New ();
      for (Py_ssize_t i = 0; d && i < n; i++)
        if (PyDict_SetItem (d, PyTuple_GET_ITEM (keys, i), PyList_GET_ITEM (l, i)) < 0)
          Py_CLEAR (d);
      Py_DECREF (l);
      return d;
    }
  PyObject *t = PyList_AsTuple (l);
  Py_DECREF (l);
  if (t && PyTuple_GET_SIZE (spec) > 2)
    {
      /* a namedtuple or structseq built while tracing: its class over the items */
      PyObject *nt = fxc_tuple_as (PyTuple_GET_ITEM (spec, 2), t);
      Py_DECREF (t);
      return nt;
    }
  return t;
}

/* An exception of what capture runs in place of the frame's code names the user's frame and line in its traceback,
   as the frame itself would. */
static void
traceback_here (PyCodeObject *co, int line)
{
  _PyTraceback_Add (PyUnicode_AsUTF8 (co->co_name), PyUnicode_AsUTF8 (co->co_filename), line);
}

/* After the graph: make the breaking branch or call in C, then call the resume function with the frame's
   locals and the live stack (Dynamo's resume functions), which capture sees as a new frame. */
static PyObject *
entry_resume (fxc_entry *e, _PyInterpreterFrame *frame, PyObject *outs)
{
  PyCodeObject *co = frame->f_code;
  int nl = co->co_nlocalsplus;
  Py_ssize_t ns = PyList_GET_SIZE (e->resume_stack);
  PyObject **vals = calloc (nl + ns + 2, sizeof (PyObject *));
  PyObject *res = NULL;
  for (int i = 0; i < nl; i++)
    vals[i] = Py_XNewRef (frame->localsplus[i]);
  /* the free variables' cells (COPY_FREE_VARS has not run): closures rebuilt below and the resume function's
     closure use them */
  PyObject *fclosure = ((PyFunctionObject *) FXC_FRAME_FUNC (frame))->func_closure;
  for (int i = 0; fclosure && i < co->co_nfreevars && i < PyTuple_GET_SIZE (fclosure); i++)
    Py_XSETREF (vals[nl - co->co_nfreevars + i], Py_NewRef (PyTuple_GET_ITEM (fclosure, i)));
  PyObject **entry_locals = spec_locals_snapshot (vals, nl);
  const spec_env env = { entry_locals, frame->f_globals, frame->f_builtins };
  spec_frame_locals = vals;
  spec_entry = &env;
  spec_memo = PyDict_New ();
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE (e->resume_locals); i++)
    {
      PyObject *p = PyList_GET_ITEM (e->resume_locals, i);
      int idx = (int) PyLong_AsLong (PyTuple_GET_ITEM (p, 0));
      PyObject *v = spec_build (PyTuple_GET_ITEM (p, 1), outs);
      if (!v && PyErr_Occurred ())
        goto out;
      Py_XSETREF (vals[idx], v);
    }
  PyObject **stack = vals + nl;
  for (Py_ssize_t i = 0; i < ns; i++)
    {
      stack[i] = spec_build (PyList_GET_ITEM (e->resume_stack, i), outs);
      if (!stack[i] && PyErr_Occurred ())
        goto out;
    }
  spec_entry = NULL;
  Py_CLEAR (spec_memo);   /* before the resume function, whose own break rebuilds with its own */
  int which = 0;
  Py_ssize_t depth = ns;
  if (e->break_kind == FXC_BREAK_JUMP)
    {
      PyObject *cond = stack[--depth];
      int truth = PyObject_IsTrue (cond);
      Py_CLEAR (stack[depth]);
      if (truth < 0)
        {
          traceback_here (co, PyCode_Addr2Line (co, e->resume_offset * 2));
          goto out;
        }
      fxc_cjump cj = { 0 };
      (void) fxc_cond_jump (e->break_opcode, &cj);
      which = (cj.when ? truth : !truth) ? 1 : 0;
    }
  else if (e->break_kind == FXC_BREAK_STORE)
    {
      int pops = fxc_store_pops (e->break_opcode);
      int rc = pops >= 0 && depth >= pops
                 ? fxc_store_run (e->break_opcode, e->break_oparg, co, frame->f_globals, &stack[depth - pops])
                 : -1;
      if (rc < 0 && !PyErr_Occurred ())
        PyErr_SetString (PyExc_SystemError, "capture: the stack of a resumed store is short");
      for (Py_ssize_t i = depth - pops; pops >= 0 && i < depth; i++)
        Py_CLEAR (stack[i]);
      if (rc < 0)
        {
          traceback_here (co, PyCode_Addr2Line (co, e->resume_offset * 2));
          goto out;
        }
      depth -= pops;
    }
  else
    {
      /* CALL: [X, Y, args...]: X NULL -> Y(*args), else X(Y, *args) */
      int argc = e->call_argc;
      Py_ssize_t base = depth - argc - 2;
      PyObject *x = stack[base], *y = stack[base + 1];
      PyObject *callable = x ? x : y;
      PyObject **args = x ? &stack[base + 1] : &stack[base + 2];
      size_t nargs = (x ? argc + 1 : argc) - (e->call_kwnames ? PyTuple_GET_SIZE (e->call_kwnames) : 0);
      PyObject *r = PyObject_Vectorcall (callable, args, nargs, e->call_kwnames);
      for (Py_ssize_t i = base; i < depth; i++)
        Py_CLEAR (stack[i]);
      if (!r)
        {
          traceback_here (co, PyCode_Addr2Line (co, e->resume_offset * 2));
          goto out;
        }
      stack[base] = r;
      depth = base + 1;
    }
  PyObject *fn = e->resume_fn[which];
  /* Unbound locals are passed as None. */
  for (int i = 0; i < nl; i++)
    if (!vals[i])
      vals[i] = Py_NewRef (Py_None);
  /* NULL stack slots are re-created by the resume function (PUSH_NULL): pass only the values */
  Py_ssize_t npass = 0;
  for (Py_ssize_t i = 0; i < depth; i++)
    if (stack[i])
      stack[npass++] = stack[i];
  for (Py_ssize_t i = npass; i < depth; i++)
    stack[i] = NULL;
  if (PyFunction_GET_CLOSURE (fn))
    {
      /* A frame with cells: the resume function takes the plain locals and the stack as arguments and the frame's
         cells (its cell variables, then its free variables) as its closure, so that inner functions made before
         the break share them (fxcapture._make_resume). A new function per call: the cells are this call's. */
      int nargs = co->co_nlocals;
      const char *kinds = PyBytes_AS_STRING (co->co_localspluskinds);
      PyObject *tpl_closure = PyFunction_GET_CLOSURE (fn);
      Py_ssize_t ncl = PyTuple_GET_SIZE (tpl_closure);
      PyObject *cl = PyTuple_New (ncl);
      Py_ssize_t k = 0;
      for (int i = 0; i < nl && k <= ncl; i++)
        if (kinds[i] & (CO_FAST_CELL | CO_FAST_FREE))
          {
            if (k == ncl || !vals[i] || !PyCell_Check (vals[i]))
              {
                k = ncl + 1;
                break;
              }
            PyTuple_SET_ITEM (cl, k++, Py_NewRef (vals[i]));
          }
      PyFunctionObject *tpl = (PyFunctionObject *) fn;
      PyObject *call = k == ncl ? PyFunction_NewWithQualName (tpl->func_code, tpl->func_globals, tpl->func_qualname)
                                : NULL;
      if (call && PyFunction_SetClosure (call, cl) < 0)
        Py_CLEAR (call);
      Py_DECREF (cl);
      if (!call)
        {
          if (!PyErr_Occurred ())
            PyErr_SetString (PyExc_SystemError, "capture: the cells of a resumed frame are missing");
          goto out;
        }
      PyObject **args = malloc ((nargs + npass + 1) * sizeof (PyObject *));
      for (int i = 0; i < nargs; i++)
        args[i] = (kinds[i] & CO_FAST_CELL) ? Py_None : vals[i];   /* a cell argument lives in the closure */
      memcpy (args + nargs, stack, npass * sizeof (PyObject *));
      res = PyObject_Vectorcall (call, args, nargs + npass, NULL);
      free (args);
      Py_DECREF (call);
    }
  else
    res = PyObject_Vectorcall (fn, vals, nl + npass, NULL);
out:
  spec_rebuild_end (entry_locals, nl);
  for (Py_ssize_t i = 0; i < nl + ns; i++)
    Py_XDECREF (vals[i]);
  free (vals);
  Py_DECREF (outs);
  return res;
}

/* Runs a compiled entry in place of the frame; a graph break continues the frame in CPython after the graph. */
static PyObject *
entry_run (fxc_entry *e, PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *const *locals)
{
  PyObject *stack_inputs[64];
  PyObject **inputs = e->n_inputs <= 64 ? stack_inputs : malloc (e->n_inputs * sizeof (PyObject *));
  size_t got = 0;
  PyObject *outs = NULL;
  for (; got < e->n_inputs; got++)
    {
      inputs[got] = fxc_source_eval (&e->inputs[got], locals, frame->f_globals, frame->f_builtins);
      if (!inputs[got])
        goto out;
    }
  tls_busy++;
  outs = PyObject_Vectorcall (e->compiled, inputs, e->n_inputs, NULL);
  tls_busy--;
out:
  for (size_t i = 0; i < got; i++)
    Py_DECREF (inputs[i]);
  if (inputs != stack_inputs)
    free (inputs);
  if (!outs)
    {
      traceback_here (frame->f_code, frame->f_code->co_firstlineno);
      return NULL;
    }
  /* nonlocal stores of the traced code, into the cells of this call's closure (the view holds them) */
  const spec_env env = { locals, frame->f_globals, frame->f_builtins };
  spec_entry = &env;
  spec_frame_locals = (PyObject **) locals;
  for (Py_ssize_t i = 0; e->cell_writes && i < PyList_GET_SIZE (e->cell_writes); i++)
    {
      PyObject *p = PyList_GET_ITEM (e->cell_writes, i);
      PyObject *cell = locals[PyLong_AsLong (PyTuple_GET_ITEM (p, 0))];
      PyObject *v = spec_build (PyTuple_GET_ITEM (p, 1), outs);
      if ((!v && PyErr_Occurred ()) || !cell || !PyCell_Check (cell) || PyCell_Set (cell, v) < 0)
        {
          Py_XDECREF (v);
          if (!PyErr_Occurred ())
            PyErr_SetString (PyExc_SystemError, "capture: a closure cell to write is missing");
          spec_frame_locals = NULL;
          spec_entry = NULL;
          Py_DECREF (outs);
          return NULL;
        }
      Py_XDECREF (v);
    }
  if (!e->resume_stack)
    {
      PyObject *r = spec_build (e->out_spec, outs);
      spec_frame_locals = NULL;
      spec_entry = NULL;
      Py_DECREF (outs);
      return r;
    }
  /* Graph break: restore the live locals and stack, then let CPython run from the breaking instruction. */
  PyCodeObject *co = frame->f_code;
  if (e->break_kind != FXC_BREAK_OTHER && e->resume_fn[0])
    return entry_resume (e, frame, outs);
  int base = co->co_nlocalsplus;
  PyObject **entry_locals = spec_locals_snapshot (locals, base);   /* the view: free variables' cells in place */
  const spec_env snap = { entry_locals, frame->f_globals, frame->f_builtins };
  spec_entry = &snap;
  /* what COPY_FREE_VARS would have done before the breaking instruction (first: closures rebuilt below use the
     cells) */
  if (co->co_nfreevars)
    {
      PyObject *closure = ((PyFunctionObject *) FXC_FRAME_FUNC (frame))->func_closure;
      int off = co->co_nlocalsplus - co->co_nfreevars;
      for (int i = 0; closure && i < co->co_nfreevars && i < PyTuple_GET_SIZE (closure); i++)
        Py_XSETREF (frame->localsplus[off + i], Py_NewRef (PyTuple_GET_ITEM (closure, i)));
    }
  /* locals (cells first, as the trace listed them), then the stack */
  spec_frame_locals = frame->localsplus;
  spec_memo = PyDict_New ();
  bool failed = false;
  for (Py_ssize_t i = 0; !failed && i < PyList_GET_SIZE (e->resume_locals); i++)
    {
      PyObject *p = PyList_GET_ITEM (e->resume_locals, i);
      int idx = (int) PyLong_AsLong (PyTuple_GET_ITEM (p, 0));
      PyObject *v = spec_build (PyTuple_GET_ITEM (p, 1), outs);
      if (!v && PyErr_Occurred ())
        failed = true;
      else
        Py_XSETREF (frame->localsplus[idx], v);
    }
  Py_ssize_t ns = PyList_GET_SIZE (e->resume_stack), done = 0;
  for (; !failed && done < ns; done++)
    {
      PyObject *v = spec_build (PyList_GET_ITEM (e->resume_stack, done), outs);
      if (!v && PyErr_Occurred ())
        failed = true;
      else
        frame->localsplus[base + done] = v;
    }
  spec_rebuild_end (entry_locals, base);
  if (failed)
    {
      for (Py_ssize_t j = 0; j < done; j++)
        Py_CLEAR (frame->localsplus[base + j]);
      Py_DECREF (outs);
      return NULL;
    }
  frame->stacktop = base + (int) ns;
  frame->prev_instr = _PyCode_CODE (co) + e->resume_offset - 1;
  Py_DECREF (outs);
  return _PyEval_EvalFrameDefault (ts, frame, 0);
}

/* ------------------------------------------------------------------ the hook */

static bool
code_is_skipped (PyCodeObject *co)
{
  if (PyUnicode_CompareWithASCIIString (co->co_name, "<module>") == 0)
    return true;
  const char *fn = PyUnicode_AsUTF8 (co->co_filename);
  if (!fn || fn[0] == '<')
    return strcmp (fn ? fn : "", "<string>") != 0 && strcmp (fn ? fn : "", "<stdin>") != 0;
  for (int i = 0; i < n_skip_prefixes; i++)
    if (strncmp (fn, skip_prefixes[i], strlen (skip_prefixes[i])) == 0)
      return true;
  return false;
}

static code_cache *
cache_get (PyCodeObject *co)
{
  PyObject *cap = PyDict_GetItem (caches, (PyObject *) co);
  if (cap)
    return PyCapsule_GetPointer (cap, "fxc.cache");
  code_cache *c = calloc (1, sizeof *c);
  c->frame_id = -1;
  c->skip = code_is_skipped (co) && !(allowed_codes && PySet_Contains (allowed_codes, (PyObject *) co) == 1);
  cap = PyCapsule_New (c, "fxc.cache", cache_capsule_free);
  PyDict_SetItem (caches, (PyObject *) co, cap);
  Py_DECREF (cap);
  return c;
}

static PyObject *
record (const char *kind, PyObject *data)
{
  if (!data)
    return NULL;
  PyObject *r = PyObject_CallMethod (fxc.glue, "_record", "sO", kind, data);
  Py_DECREF (data);
  return r;
}

static PyObject *
arg_to_py (const fx_arg *a, PyObject *noderef)
{
  switch (a->kind)
    {
    case FX_ARG_NONE:
      Py_RETURN_NONE;
    case FX_ARG_NODE:
      return PyObject_CallFunction (noderef, "s", a->u.node->name);
    case FX_ARG_BOOL:
      return PyBool_FromLong (a->u.b);
    case FX_ARG_INT:
      return PyLong_FromLongLong (a->u.i);
    case FX_ARG_FLOAT:
      return PyFloat_FromDouble (a->u.f);
    case FX_ARG_STR:
      return PyUnicode_FromString (a->u.s);
    case FX_ARG_DTYPE:
      return PyObject_GetAttrString (fxc.torch, fx_dtype_name (a->u.dtype));
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
      {
        PyObject *l = PyList_New (a->u.seq.n);
        for (size_t i = 0; i < a->u.seq.n; i++)
          {
            PyObject *o = arg_to_py (&a->u.seq.items[i], noderef);
            if (!o)
              {
                Py_DECREF (l);
                return NULL;
              }
            PyList_SET_ITEM (l, i, o);
          }
        if (a->kind == FX_ARG_LIST)
          return l;
        PyObject *t = PyList_AsTuple (l);
        Py_DECREF (l);
        return t;
      }
    case FX_ARG_ELLIPSIS:
      return Py_NewRef (Py_Ellipsis);
    case FX_ARG_SLICE:
      {
        PyObject *p[3];
        for (int i = 0; i < 3; i++)
          p[i] = arg_to_py (&a->u.seq.items[i], noderef);
        PyObject *sl = p[0] && p[1] && p[2] ? PySlice_New (p[0], p[1], p[2]) : NULL;
        for (int i = 0; i < 3; i++)
          Py_XDECREF (p[i]);
        return sl;
      }
    case FX_ARG_DEVICE:
    case FX_ARG_LAYOUT:
    case FX_ARG_MEMFMT:
    case FX_ARG_DICT:
    case FX_ARG_SYM:
    case FX_ARG_GLOBAL:
    case FX_ARG_KIND_COUNT:
      break;
    }
  PyErr_SetString (PyExc_TypeError, "argument kind not supported by capture");
  return NULL;
}

/* The graph as Python tuples (op, name, target, args, kwargs, meta) for building a torch.fx.GraphModule. */
static PyObject *
graph_to_py (const fx_graph *g, PyObject *targets)
{
  PyObject *noderef = PyObject_GetAttrString (fxc.glue, "NodeRef");
  if (!noderef)
    return NULL;
  PyObject *nodes = PyList_New (0);
  fx_graph_foreach_node (g, n)
  {
    PyObject *target;
    if (n->op == FX_OP_CALL_FUNCTION)
      {
        target = PyDict_GetItemString (targets, n->name);
        Py_XINCREF (target);
      }
    else
      target = PyUnicode_FromString (n->target.name);
    PyObject *args = PyList_New (n->n_args);
    for (size_t i = 0; i < n->n_args; i++)
      PyList_SET_ITEM (args, i, arg_to_py (&n->args[i], noderef));
    PyObject *kwargs = PyDict_New ();
    for (size_t i = 0; i < n->n_kwargs; i++)
      {
        PyObject *v = arg_to_py (&n->kwargs[i].value, noderef);
        if (v)
          {
            PyDict_SetItemString (kwargs, n->kwargs[i].name, v);
            Py_DECREF (v);
          }
      }
    PyObject *mstack = PyList_New (n->meta.n_nn_module_stack);
    for (size_t i = 0; i < n->meta.n_nn_module_stack; i++)
      PyList_SET_ITEM (mstack, i,
                       Py_BuildValue ("(sss)", n->meta.nn_module_stack[i].key, n->meta.nn_module_stack[i].path,
                                      n->meta.nn_module_stack[i].type));
    PyObject *sfs = PyList_New (n->meta.n_source_fn_stack);
    for (size_t i = 0; i < n->meta.n_source_fn_stack; i++)
      PyList_SET_ITEM (sfs, i,
                       Py_BuildValue ("(ss)", n->meta.source_fn_stack[i].name, n->meta.source_fn_stack[i].target));
    PyObject *meta = Py_BuildValue ("{s:z,s:N,s:N}", "stack_trace", n->meta.stack_trace, "nn_module_stack", mstack,
                                    "source_fn_stack", sfs);
    PyObject *tup = Py_BuildValue ("(ssONNN)", fx_opcode_name (n->op), n->name, target ? target : Py_None, args,
                                   kwargs, meta);
    Py_XDECREF (target);
    if (!tup || PyErr_Occurred ())
      {
        Py_XDECREF (tup);
        Py_DECREF (nodes);
        Py_DECREF (noderef);
        return NULL;
      }
    PyList_Append (nodes, tup);
    Py_DECREF (tup);
  }
  Py_DECREF (noderef);
  return nodes;
}

static PyObject *
buf_to_str (void (*print) (const fx_graph *, fx_buf *), const fx_graph *g)
{
  fx_buf b;
  fx_buf_init (&b);
  print (g, &b);
  PyObject *s = PyUnicode_FromString (b.data ? b.data : "");
  fx_buf_free (&b);
  return s;
}

static PyObject *
readable_str (const fx_graph *g)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_readable_opts o = { .include_stride = true, .include_device = true };
  fx_graph_print_readable (g, &o, &b);
  PyObject *s = PyUnicode_FromString (b.data ? b.data : "");
  fx_buf_free (&b);
  return s;
}

/* A (tensor source, 'size'|'stride', dim) ref of the shape env -> the input holding that tensor. */
static void
dimref_from (const fxc_trace *t, PyObject *ref, fxc_dimref *out)
{
  const char *src = PyUnicode_AsUTF8 (PyTuple_GET_ITEM (ref, 0));
  out->input = -1;
  out->stride = strcmp (PyUnicode_AsUTF8 (PyTuple_GET_ITEM (ref, 1)), "stride") == 0;
  out->dim = (int) PyLong_AsLong (PyTuple_GET_ITEM (ref, 2));
  for (size_t i = 0; src && i < t->n_inputs; i++)
    if (t->inputs[i].size_of == 0 && t->inputs[i].name && strcmp (t->inputs[i].name, src) == 0)
      out->input = (int) i;
}

/* The shape env's guards of a dynamic trace, as LAMBDA_GUARDs in the tree and checks in C. */
static int
shape_guards_collect (fxc_trace *t, PyObject *env, PyCodeObject *co)
{
  (void) co;
  PyObject *gs = PyObject_CallMethod (env, "guards", NULL);
  if (!gs || !PyList_Check (gs))
    {
      Py_XDECREF (gs);
      return -1;
    }
  Py_ssize_t n = PyList_GET_SIZE (gs);
  t->shape_guards = calloc ((size_t) n + 1, sizeof *t->shape_guards);
  for (Py_ssize_t i = 0; i < n; i++)
    {
      PyObject *g = PyList_GET_ITEM (gs, i);
      PyObject *comment = PyTuple_GET_ITEM (g, 1);
      const char *kind = PyUnicode_AsUTF8 (PyTuple_GET_ITEM (g, 2));
      PyObject *data = PyTuple_GET_ITEM (g, 3);
      fx_guard_set_add (&t->guards, FX_GUARD_SHAPE_ENV, NULL, PyUnicode_AsUTF8 (PyTuple_GET_ITEM (g, 0)),
                        comment == Py_None ? NULL : PyUnicode_AsUTF8 (comment));
      fxc_shape_guard *sg = &t->shape_guards[t->n_shape_guards++];
      sg->guard = t->guards.n_guards - 1;
      sg->eq = strcmp (kind, "eq") == 0;
      dimref_from (t, PyTuple_GET_ITEM (data, 0), &sg->lhs);
      if (sg->eq)
        {
          PyObject *rhs = PyTuple_GET_ITEM (data, 1);
          for (Py_ssize_t j = 0; j < PyList_GET_SIZE (rhs) && j < 8; j++)
            dimref_from (t, PyList_GET_ITEM (rhs, j), &sg->rhs[sg->n_rhs++]);
          sg->k = PyLong_AsLongLong (PyTuple_GET_ITEM (data, 2));
        }
      else
        sg->k = PyLong_AsLongLong (PyTuple_GET_ITEM (data, 1));
    }
  Py_DECREF (gs);
  return PyErr_Occurred () ? -1 : 0;
}

/* Traces the frame and asks the glue to build the GraphModule and run the backend. Returns a new entry, or NULL
   with *skip set (frame not capturable) or an error set. */
static fxc_entry *
compile_frame (PyObject *ctx, code_cache *cc, _PyInterpreterFrame *frame, PyObject *const *locals, PyObject *reasons)
{
  PyCodeObject *co = frame->f_code;
  if (cc->frame_id < 0)
    cc->frame_id = next_frame_id++;
  int compile_id = cc->n_compiles++;
  fxc_trace t;
  memset (&t, 0, sizeof t);
  PyObject *fg = PyObject_GetAttrString (ctx, "fullgraph");
  t.fullgraph = fg == Py_True;
  Py_XDECREF (fg);
  PyErr_Clear ();
  fxc_entry *e = NULL;
  PyObject *info = NULL;
  tls_busy++;
  /* Dynamic shapes: a ShapeEnv over the frame's remembered sizes unless torch.compile(dynamic=False). A trace
     that unified dims runs again with them aliased; one that gave up on symbols runs again with static shapes. */
  PyObject *dyn_mode = PyObject_GetAttrString (ctx, "dynamic");
  PyErr_Clear ();
  PyObject *env = NULL;
  char *dyn_specialized = NULL;
  if (dyn_mode != Py_False && !cc->static_only)
    {
      if (!cc->frame_state)
        cc->frame_state = PyDict_New ();
      env = PyObject_CallMethod (fxc.glue, "_shape_env", "OO", cc->frame_state, dyn_mode ? dyn_mode : Py_None);
      if (!env)
        PyErr_Clear ();
    }
  Py_XDECREF (dyn_mode);
  int rc;
  bool interrupted = false;
  for (int attempt = 0;; attempt++)
    {
      t.shape_env = env;
      if (env)
        {
          PyObject *r = PyObject_CallMethod (env, "restart", NULL);
          Py_XDECREF (r);
          PyErr_Clear ();
        }
      rc = fxc_interpret_py311 (co, (PyObject *) FXC_FRAME_FUNC (frame), locals, frame->f_globals, frame->f_builtins, &t);
      fxc_err_note ();
      if (fxc_interrupt_restore ())
        {
          interrupted = true;
          break;
        }
      bool again = rc == 0 && env && (t.dyn_retry || t.dyn_fail);
      if (!again)
        break;
      if (t.dyn_fail || attempt >= 8)
        {
          free (dyn_specialized);
          dyn_specialized = strdup (t.dyn_fail ? t.dyn_fail : "dims kept unifying");
          Py_CLEAR (env);
          /* later compiles of this frame go static at once */
          cc->static_only = true;
        }
      bool fg_keep = t.fullgraph;
      fxc_trace_clear (&t);
      t.fullgraph = fg_keep;
    }
  if (!interrupted && rc == 0 && env && !t.fail_reason && t.graph && shape_guards_collect (&t, env, co) < 0)
    PyErr_Clear ();
  t.shape_env = NULL;
  Py_XDECREF (env);
  if (interrupted)
    {
      /* Ctrl-C while tracing: it reaches the caller, nothing is compiled */
      goto out;
    }
  if (rc < 0)
    {
      /* an internal failure of the trace must not change what the program does: run the frame as it is */
      PyObject *et, *ev, *tb;
      PyErr_Fetch (&et, &ev, &tb);
      PyObject *msg = ev ? PyObject_Str (ev) : NULL;
      PyErr_Clear ();
      free (t.fail_reason);
      t.fail_reason = strdup (msg && PyUnicode_Check (msg) ? PyUnicode_AsUTF8 (msg) : "internal error while tracing");
      PyErr_Clear ();
      Py_XDECREF (msg);
      Py_XDECREF (et);
      Py_XDECREF (ev);
      Py_XDECREF (tb);
      free (t.break_reason);
      t.break_reason = NULL;
    }
  info = Py_BuildValue ("{s:i,s:i,s:O,s:O,s:i,s:O}", "frame_id", cc->frame_id, "compile_id", compile_id, "name",
                        co->co_name, "filename", co->co_filename, "firstlineno", co->co_firstlineno, "reasons",
                        reasons ? reasons : Py_None);
  if (t.fail_reason && !t.break_reason)
    {
      PyDict_SetItemString (info, "reason", PyUnicode_FromString (t.fail_reason));
      PyObject *r = PyObject_CallMethod (ctx, "_skip", "O", info);
      if (!r)
        goto out;
      Py_DECREF (r);
      cc->skip = true;
      free (cc->skip_reason);
      cc->skip_reason = strdup (t.fail_reason);
      goto out;
    }
  if (t.break_reason)
    {
      PyObject *b = Py_BuildValue ("{s:s,s:s,s:i,s:O}", "reason", t.break_reason, "user_stack",
                                   t.break_user_stack ? t.break_user_stack : "", "lineno", t.break_line, "fullgraph",
                                   t.fullgraph ? Py_True : Py_False);
      PyDict_SetItemString (info, "graph_break", b);
      Py_DECREF (b);
      if (t.fullgraph || t.fail_reason)
        {
          PyObject *r = PyObject_CallMethod (ctx, "_skip", "O", info);
          if (!r)
            goto out; /* fullgraph: the glue raised Unsupported */
          Py_DECREF (r);
          cc->skip = true;
          goto out;
        }
    }
  PyObject *nodes = graph_to_py (t.graph, t.targets);
  if (!nodes)
    goto out;
  PyDict_SetItemString (info, "nodes", nodes);
  Py_DECREF (nodes);
  PyDict_SetItemString (info, "examples", t.examples);
  PyObject *s;
  s = buf_to_str (fx_graph_print_tabular, t.graph);
  PyDict_SetItemString (info, "tabular", s);
  Py_XDECREF (s);
  s = buf_to_str (fx_graph_print_code, t.graph);
  PyDict_SetItemString (info, "code", s);
  Py_XDECREF (s);
  s = readable_str (t.graph);
  PyDict_SetItemString (info, "readable", s);
  Py_XDECREF (s);
  s = buf_to_str (fx_graph_to_json, t.graph);
  PyDict_SetItemString (info, "graph_json", s);
  Py_XDECREF (s);
  fx_buf gt;
  fx_buf_init (&gt);
  fx_guard_set_print_tree (&t.guards, &gt);
  s = PyUnicode_FromString (gt.data ? gt.data : "");
  fx_buf_free (&gt);
  PyDict_SetItemString (info, "guards", s);
  Py_XDECREF (s);
  PyObject *gl = PyList_New (0);
  for (size_t i = 0; i < t.guards.n_guards; i++)
    {
      PyObject *g = Py_BuildValue ("{s:s,s:z,s:z}", "kind", fx_guard_kind_name (t.guards.guards[i].kind), "source",
                                   t.guards.guards[i].source, "code", t.guards.guards[i].code);
      PyList_Append (gl, g);
      Py_DECREF (g);
    }
  PyDict_SetItemString (info, "guard_list", gl);
  Py_DECREF (gl);
  if (dyn_specialized)
    {
      s = PyUnicode_FromString (dyn_specialized);
      PyDict_SetItemString (info, "dynamic_specialized", s);
      Py_XDECREF (s);
    }
  PyObject *compiled = PyObject_CallMethod (ctx, "_compile", "O", info);
  if (!compiled)
    goto out;
  e = calloc (1, sizeof *e);
  e->frame_id = cc->frame_id;
  e->compile_id = compile_id;
  e->backend = PyObject_GetAttrString (ctx, "backend_key");
  PyErr_Clear ();
  e->compiled = compiled;
  e->guards = t.guards;
  fx_guard_set_init (&t.guards);
  e->checks = t.checks;
  e->n_checks = t.n_checks;
  t.checks = NULL;
  t.n_checks = 0;
  e->shape_guards = t.shape_guards;
  e->n_shape_guards = t.n_shape_guards;
  t.shape_guards = NULL;
  t.n_shape_guards = 0;
  e->inputs = t.inputs;
  e->n_inputs = t.n_inputs;
  t.inputs = NULL;
  t.n_inputs = 0;
  e->out_spec = t.out_spec;
  t.out_spec = NULL;
  e->resume_offset = t.resume_offset;
  e->resume_stack = t.resume_stack;
  e->resume_locals = t.resume_locals;
  t.resume_stack = t.resume_locals = NULL;
  e->cell_writes = t.cell_writes;
  t.cell_writes = NULL;
  if (e->resume_stack
      && (t.break_kind == FXC_BREAK_JUMP || t.break_kind == FXC_BREAK_CALL || t.break_kind == FXC_BREAK_STORE))
    {
      Py_ssize_t ns = PyList_GET_SIZE (e->resume_stack);
      int nstack = t.break_kind == FXC_BREAK_JUMP    ? (int) ns - 1
                   : t.break_kind == FXC_BREAK_STORE ? (int) ns - fxc_store_pops (t.break_opcode)
                                                     : (int) ns - (t.call_argc + 2) + 1;
      int line = PyCode_Addr2Line (co, e->resume_offset * 2);
      e->break_kind = t.break_kind;
      e->break_opcode = t.break_opcode;
      e->break_oparg = t.break_oparg;
      e->call_argc = t.call_argc;
      e->call_kwnames = t.call_kwnames;
      t.call_kwnames = NULL;
      /* NULL slots (below a callable) are pushed by the resume function's prologue, not passed */
      PyObject *nulls = PyTuple_New (nstack > 0 ? nstack : 0);
      for (int i = 0; i < nstack; i++)
        {
          bool is_null = false;
          if (i < ns && !(t.break_kind == FXC_BREAK_CALL && i == nstack - 1))
            {
              PyObject *spec = PyList_GET_ITEM (e->resume_stack, i);
              is_null = PyUnicode_AsUTF8 (PyTuple_GET_ITEM (spec, 0))[0] == 'n';
            }
          PyTuple_SET_ITEM (nulls, i, PyBool_FromLong (is_null));
        }
      for (int k = 0; k < (t.break_kind == FXC_BREAK_JUMP ? 2 : 1); k++)
        {
          e->resume_at[k] = t.resume_at[k];
          e->resume_fn[k] = PyObject_CallMethod (fxc.glue, "_make_resume", "OiOiO", co, t.resume_at[k], nulls, line,
                                                 frame->f_globals);
          if (!e->resume_fn[k])
            {
              /* no resume function: continue the frame in CPython instead */
              PyErr_Clear ();
              e->break_kind = FXC_BREAK_OTHER;
              break;
            }
        }
      Py_DECREF (nulls);
    }
  PyObject *ge = PyObject_CallNoArgs (grad_enabled_fn);
  e->grad_enabled = ge == Py_True;
  Py_XDECREF (ge);
  e->global_state = global_state_snapshot ();
out:
  tls_busy--;
  free (dyn_specialized);
  Py_XDECREF (info);
  fxc_trace_clear (&t);
  return e;
}

void
fxc_trace_clear (fxc_trace *t)
{
  if (t->graph)
    fx_graph_free (t->graph);
  Py_XDECREF (t->targets);
  Py_XDECREF (t->examples);
  for (size_t i = 0; i < t->n_inputs; i++)
    fxc_source_clear (&t->inputs[i]);
  free (t->inputs);
  fx_guard_set_clear (&t->guards);
  for (size_t i = 0; i < t->n_checks; i++)
    {
      fxc_source_clear (&t->checks[i].src);
      Py_XDECREF (t->checks[i].expected);
    }
  free (t->checks);
  Py_XDECREF (t->out_spec);
  Py_XDECREF (t->resume_stack);
  Py_XDECREF (t->resume_locals);
  Py_XDECREF (t->call_kwnames);
  Py_XDECREF (t->cell_writes);
  free (t->break_reason);
  free (t->break_explanation);
  free (t->break_user_stack);
  free (t->fail_reason);
  free (t->dyn_fail);
  free (t->shape_guards);
  memset (t, 0, sizeof *t);
}

/* Records a frame that is never captured (ctx._skip) and marks its code skipped. */
static int
skip_frame (PyObject *ctx, code_cache *cc, PyCodeObject *co, const char *reason)
{
  if (cc->frame_id < 0)
    cc->frame_id = next_frame_id++;
  int compile_id = cc->n_compiles++;
  cc->skip = true;
  free (cc->skip_reason);
  cc->skip_reason = strdup (reason);
  tls_busy++;
  PyObject *info = Py_BuildValue ("{s:i,s:i,s:O,s:O,s:i,s:O,s:s}", "frame_id", cc->frame_id, "compile_id", compile_id,
                                  "name", co->co_name, "filename", co->co_filename, "firstlineno",
                                  co->co_firstlineno, "reasons", Py_None, "reason", reason);
  PyObject *r = info ? PyObject_CallMethod (ctx, "_skip", "O", info) : NULL;
  tls_busy--;
  Py_XDECREF (info);
  if (!r)
    return -1;
  Py_DECREF (r);
  return 0;
}

static PyObject *
fx_eval_frame (PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag)
{
  PyObject *ctx = tls_ctx;
  if (throwflag || !ctx || tls_busy || frame->owner != FRAME_OWNED_BY_THREAD || !FXC_FRAME_FUNC (frame)
      || strcmp (stance, "force_eager") == 0)
    return _PyEval_EvalFrameDefault (ts, frame, throwflag);
  PyCodeObject *co = frame->f_code;
  code_cache *cc = cache_get (co);
  if (cc && !cc->skip && (co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR))
      && skip_frame (ctx, cc, co, "generator, coroutine and async generator frames are not captured: the function "
                     "runs in CPython") < 0)
    return NULL;
  if (!cc || cc->skip || (co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR))
      || co->co_nlocalsplus > 256)
    return _PyEval_EvalFrameDefault (ts, frame, throwflag);
  /* Free variables are copied into the frame by COPY_FREE_VARS, which has not run yet: guards and inputs read
     them from a view of the locals with the closure's cells in place. */
  PyObject *view[257];
  PyObject **locals = frame->localsplus;
  if (co->co_nfreevars)
    {
      PyObject *closure = ((PyFunctionObject *) FXC_FRAME_FUNC (frame))->func_closure;
      int off = co->co_nlocalsplus - co->co_nfreevars;
      memcpy (view, frame->localsplus, co->co_nlocalsplus * sizeof (PyObject *));
      for (int i = 0; closure && i < co->co_nfreevars && i < PyTuple_GET_SIZE (closure); i++)
        view[off + i] = PyTuple_GET_ITEM (closure, i);
      locals = view;
    }
  if (!cc->seen_eager && !cc->entries
      && (strcmp (stance, "eager_then_compile") == 0 || strcmp (stance, "aot_eager_then_compile") == 0))
    {
      /* the first call of each frame runs eagerly (aot_eager is torch eager in this version), later calls compile */
      cc->seen_eager = true;
      return _PyEval_EvalFrameDefault (ts, frame, throwflag);
    }
  PyObject *backend = PyObject_GetAttrString (ctx, "backend_key");
  PyErr_Clear ();
  /* cache lookup: entries of this backend only (one cache per backend); the global state is read once */
  gs_values gs;
  gs.have = false;
  for (fxc_entry *e = cc->entries; e; e = e->next)
    if (e->backend == backend && entry_check (e, locals, frame->f_globals, frame->f_builtins, &gs, NULL))
      {
        Py_XDECREF (backend);
        gs_values_clear (&gs);
        if (fxc_interrupt_restore ())
          return NULL;
        return entry_run (e, ts, frame, locals);
      }
  /* miss: collect reasons newest first */
  PyObject *reasons = PyList_New (0);
  int n_same = 0;
  for (fxc_entry *e = cc->entries; e; e = e->next)
    if (e->backend == backend)
      {
        fx_buf r;
        fx_buf_init (&r);
        entry_check (e, locals, frame->f_globals, frame->f_builtins, &gs, &r);
        PyObject *s = PyUnicode_FromFormat ("%d/%d: %s", e->frame_id, e->compile_id, r.data ? r.data : "");
        PyList_Append (reasons, s);
        Py_DECREF (s);
        fx_buf_free (&r);
        n_same++;
      }
  Py_XDECREF (backend);
  gs_values_clear (&gs);
  if (fxc_interrupt_restore ())
    {
      Py_DECREF (reasons);
      return NULL;
    }
  if (n_same > 0)
    {
      if (strcmp (stance, "eager_on_recompile") == 0)
        {
          Py_DECREF (reasons);
          return _PyEval_EvalFrameDefault (ts, frame, throwflag);
        }
      if (strcmp (stance, "fail_on_recompile") == 0)
        {
          PyObject *r = PyObject_CallMethod (fxc.glue, "_fail_on_recompile", "OOiO", co->co_filename, co->co_name,
                                             PyCode_Addr2Line (co, 0) > 0 ? co->co_firstlineno : co->co_firstlineno,
                                             reasons);
          Py_XDECREF (r);
          Py_DECREF (reasons);
          return NULL;
        }
      if (n_same >= recompile_limit)
        {
          if (!cc->warned_limit)
            {
              cc->warned_limit = true;
              fx_buf m;
              fx_buf_init (&m);
              fx_guard_recompile_limit_message (recompile_limit, PyUnicode_AsUTF8 (co->co_name),
                                                PyUnicode_AsUTF8 (co->co_filename), co->co_firstlineno,
                                                PyUnicode_AsUTF8 (PyList_GET_ITEM (reasons, 0)), &m);
              PyObject *r = record ("recompile_limit", Py_BuildValue ("{s:i,s:s}", "frame_id", cc->frame_id,
                                                                      "message", m.data));
              Py_XDECREF (r);
              fx_buf_free (&m);
            }
          Py_DECREF (reasons);
          if (PyErr_Occurred ())
            return NULL;
          return _PyEval_EvalFrameDefault (ts, frame, throwflag);
        }
    }
  fxc_entry *e = compile_frame (ctx, cc, frame, locals, n_same ? reasons : NULL);
  Py_DECREF (reasons);
  if (!e)
    {
      if (PyErr_Occurred ())
        return NULL;
      return _PyEval_EvalFrameDefault (ts, frame, throwflag);
    }
  e->next = cc->entries;
  cc->entries = e;
  return entry_run (e, ts, frame, locals);
}

/* ------------------------------------------------------------------ module functions */

static PyObject *
py_setup (PyObject *self, PyObject *args)
{
  PyObject *glue, *prefixes;
  if (!PyArg_ParseTuple (args, "OO", &glue, &prefixes))
    return NULL;
  Py_XSETREF (fxc.glue, Py_NewRef (glue));
  fxc.torch = PyImport_ImportModule ("torch");
  if (!fxc.torch)
    return NULL;
  fxc.tensor_type = PyObject_GetAttrString (fxc.torch, "Tensor");
  PyObject *nn = PyImport_ImportModule ("torch.nn");
  fxc.module_type = nn ? PyObject_GetAttrString (nn, "Module") : NULL;
  Py_XDECREF (nn);
  fxc.operator_mod = PyImport_ImportModule ("operator");
  PyObject *functools = PyImport_ImportModule ("functools");
  fxc.partial_type = functools ? PyObject_GetAttrString (functools, "partial") : NULL;
  Py_XDECREF (functools);
  PyErr_Clear ();
  fxc.builtins = PyImport_ImportModule ("builtins");
  PyObject *lc = PyImport_ImportModule ("linecache");
  fxc.linecache_getline = lc ? PyObject_GetAttrString (lc, "getline") : NULL;
  Py_XDECREF (lc);
  fxc.graph_break_fn = PyObject_GetAttrString (glue, "graph_break");
  fxc.disallowed = PyObject_GetAttrString (glue, "_disallowed_ids");
  fxc.allowed = PyObject_GetAttrString (glue, "_allowed_ids");
  fxc.meta_device = PyUnicode_FromString ("meta");
  grad_enabled_fn = PyObject_GetAttrString (fxc.torch, "is_grad_enabled");
  if (gs_n == 0)
    global_state_init (glue);
  dtype_cache = PyDict_New ();
  caches = PyDict_New ();
  allowed_codes = PySet_New (NULL);
  s_size = PyUnicode_InternFromString ("size");
  s_stride = PyUnicode_InternFromString ("stride");
  s_dtype = PyUnicode_InternFromString ("dtype");
  s_device = PyUnicode_InternFromString ("device");
  s_requires_grad = PyUnicode_InternFromString ("requires_grad");
  s_type = PyUnicode_InternFromString ("type");
  s_index = PyUnicode_InternFromString ("index");
  s_shape = PyUnicode_InternFromString ("shape");
  s_is_cpu = PyUnicode_InternFromString ("is_cpu");
  if (!td_dtype)
    {
      td_dtype = tensor_descr ("dtype", &PyGetSetDescr_Type);
      td_device = tensor_descr ("device", &PyGetSetDescr_Type);
      td_requires_grad = tensor_descr ("requires_grad", &PyGetSetDescr_Type);
      td_shape = tensor_descr ("shape", &PyGetSetDescr_Type);
      td_is_cpu = tensor_descr ("is_cpu", &PyGetSetDescr_Type);
      td_stride = tensor_descr ("stride", &PyMethodDescr_Type);
    }
  if (PyErr_Occurred ())
    return NULL;
  n_skip_prefixes = 0;
  for (Py_ssize_t i = 0; i < PySequence_Size (prefixes) && n_skip_prefixes < 8; i++)
    {
      PyObject *p = PySequence_GetItem (prefixes, i);
      skip_prefixes[n_skip_prefixes++] = strdup (PyUnicode_AsUTF8 (p));
      Py_DECREF (p);
    }
  _PyInterpreterState_SetEvalFrameFunc (PyInterpreterState_Get (), fx_eval_frame);
  Py_RETURN_NONE;
}

/* call(ctx, fn, args, kwargs): runs fn with capture on. */
static PyObject *
py_call (PyObject *self, PyObject *args)
{
  PyObject *ctx, *fn, *a, *kw;
  if (!PyArg_ParseTuple (args, "OOOO", &ctx, &fn, &a, &kw))
    return NULL;
  PyObject *prev = tls_ctx;
  int prev_busy = tls_busy;
  tls_ctx = ctx == Py_None ? NULL : ctx;
  tls_busy = 0;
  PyObject *r = PyObject_Call (fn, a, kw == Py_None ? NULL : kw);
  tls_ctx = prev;
  tls_busy = prev_busy;
  return r;
}

/* allow_code(code): a compiled module's forward is captured wherever its file is (Dynamo inlines torch.nn's own
   modules: nn.Sequential.forward lives in torch/) */
static PyObject *
py_allow_code (PyObject *self, PyObject *code)
{
  if (!PyCode_Check (code))
    {
      PyErr_SetString (PyExc_TypeError, "allow_code expects a code object");
      return NULL;
    }
  if (PySet_Add (allowed_codes, code) < 0)
    return NULL;
  PyObject *cap = PyDict_GetItem (caches, code);
  if (cap)
    ((code_cache *) PyCapsule_GetPointer (cap, "fxc.cache"))->skip = false;
  Py_RETURN_NONE;
}

static PyObject *
py_reset (PyObject *self, PyObject *noargs)
{
  if (caches)
    PyDict_Clear (caches);
  next_frame_id = 0;
  Py_RETURN_NONE;
}

static PyObject *
py_set_config (PyObject *self, PyObject *args)
{
  const char *st;
  int limit;
  if (!PyArg_ParseTuple (args, "si", &st, &limit))
    return NULL;
  snprintf (stance, sizeof stance, "%s", st);
  recompile_limit = limit;
  Py_RETURN_NONE;
}

static PyObject *
py_is_compiling (PyObject *self, PyObject *noargs)
{
  return PyBool_FromLong (tls_busy > 0 && tls_ctx != NULL);
}

/* print_tabular/code of a graph given as canonical JSON: the engine's printers for tests and tools. */
static PyObject *
py_format_graph (PyObject *self, PyObject *args)
{
  const char *json, *form;
  Py_ssize_t len;
  if (!PyArg_ParseTuple (args, "s#s", &json, &len, &form))
    return NULL;
  fx_graph *g = NULL;
  fx_diag d;
  fx_diag_clear (&d);
  if (fx_graph_from_json (json, (size_t) len, &g, &d) != FX_OK)
    {
      PyErr_SetString (PyExc_ValueError, d.message);
      return NULL;
    }
  PyObject *s = strcmp (form, "tabular") == 0 ? buf_to_str (fx_graph_print_tabular, g)
                : strcmp (form, "str") == 0   ? buf_to_str (fx_graph_print_str, g)
                                              : buf_to_str (fx_graph_print_code, g);
  fx_graph_free (g);
  return s;
}

static PyObject *
py_recompile_message (PyObject *self, PyObject *args)
{
  const char *func, *file;
  int line, verbose = 0;
  PyObject *reasons;
  if (!PyArg_ParseTuple (args, "ssiO!|p", &func, &file, &line, &PyList_Type, &reasons, &verbose))
    return NULL;
  Py_ssize_t n = PyList_GET_SIZE (reasons);
  const char **r = calloc (n + 1, sizeof (char *));
  for (Py_ssize_t i = 0; i < n; i++)
    r[i] = PyUnicode_AsUTF8 (PyList_GET_ITEM (reasons, i));
  fx_buf b;
  fx_buf_init (&b);
  if (verbose)
    fx_guard_recompile_message_verbose (func, file, line, r, n, &b);
  else
    fx_guard_recompile_message (func, file, line, r, n, &b);
  free (r);
  PyObject *s = PyUnicode_FromString (b.data ? b.data : "");
  fx_buf_free (&b);
  return s;
}

/* bench_guards(code, args, n): ns per guard evaluation of the newest cache entry of code, args as its locals. */
static PyObject *
py_bench_guards (PyObject *self, PyObject *args)
{
  PyObject *code, *locals;
  int n;
  if (!PyArg_ParseTuple (args, "O!O!i", &PyCode_Type, &code, &PyTuple_Type, &locals, &n))
    return NULL;
  PyObject *cap = PyDict_GetItem (caches, code);
  code_cache *cc = cap ? PyCapsule_GetPointer (cap, "fxc.cache") : NULL;
  if (!cc || !cc->entries)
    {
      PyErr_SetString (PyExc_ValueError, "no compiled entry for this code object");
      return NULL;
    }
  PyObject *globals = PyEval_GetGlobals ();
  PyObject *builtins = PyEval_GetBuiltins ();
  PyObject *const *l = &PyTuple_GET_ITEM (locals, 0);
  struct timespec t0, t1;
  int ok = 1;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; i++)
    {
      /* as on a call of the hook: the global state is read once per call */
      gs_values gs;
      gs.have = false;
      ok &= entry_check (cc->entries, l, globals, builtins, &gs, NULL);
      gs_values_clear (&gs);
    }
  clock_gettime (CLOCK_MONOTONIC, &t1);
  double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (n > 0 ? n : 1);
  return Py_BuildValue ("(dO)", ns, ok ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
  { "bench_guards", py_bench_guards, METH_VARARGS, "bench_guards(code, locals, n) -> (ns per check, passed)" },
  { "recompile_message", py_recompile_message, METH_VARARGS, "recompile_message(func, file, line, reasons)" },
  { "setup", py_setup, METH_VARARGS, "setup(glue, skip_prefixes): install the frame hook" },
  { "call", py_call, METH_VARARGS, "call(ctx, fn, args, kwargs): run fn with capture on" },
  { "reset", py_reset, METH_NOARGS, "clear every cache" },
  { "allow_code", py_allow_code, METH_O, "allow_code(code): capture this code object even inside torch" },
  { "set_config", py_set_config, METH_VARARGS, "set_config(stance, recompile_limit)" },
  { "is_compiling", py_is_compiling, METH_NOARGS, "True while capture traces or compiles" },
  { "format_graph", py_format_graph, METH_VARARGS, "format_graph(json, 'tabular'|'str'|'code')" },
  { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT, "_fxcapture", "FX Workbench capture: PEP 523 hook and symbolic interpreter", -1, methods,
  NULL, NULL, NULL, NULL,
};

/* The _fxcapture module: capture's own functions plus `compiler`, the functions that compile and run a captured
   graph (engine_compile, engine_run, engine_kernels, engine_backends). Capture knows no backend: the module's entry
   point (fx-capture-bridge.c) hands them over. */
PyObject *
fxc_module_new (PyMethodDef *compiler)
{
  if (compiler == NULL || compiler[0].ml_name == NULL)
    {
      PyErr_SetString (PyExc_ImportError, "_fxcapture: capture was given no compile functions");
      return NULL;
    }
  PyObject *m = PyModule_Create (&module_def);
  if (m && PyModule_AddFunctions (m, compiler) != 0)
    Py_CLEAR (m);
  return m;
}
