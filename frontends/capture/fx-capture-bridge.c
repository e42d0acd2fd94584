/* fx-capture-bridge.c: the _fxcapture module's entry point, handing capture the engine's backends as its compilers.
   engine_compile() compiles a captured graph (canonical JSON) with a registered backend, engine_run() calls it on
   torch tensors exchanged through DLPack without copies, engine_kernels() lists what it generated. fxcapture's
   "eager", "aot_eager" and "inductor" backends call these. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <string.h>

#include "registry/fx-registry.h"
#include "fx-capture-private.h"

#define COMPILED_CAPSULE "fxwb.compiled"

static PyObject *to_dlpack_fn, *from_dlpack_fn;

static int
ensure_dlpack (void)
{
  if (to_dlpack_fn && from_dlpack_fn)
    return 0;
  PyObject *mod = PyImport_ImportModule ("torch.utils.dlpack");
  if (mod == NULL)
    return -1;
  to_dlpack_fn = PyObject_GetAttrString (mod, "to_dlpack");
  from_dlpack_fn = PyObject_GetAttrString (mod, "from_dlpack");
  Py_DECREF (mod);
  return to_dlpack_fn && from_dlpack_fn ? 0 : -1;
}

static PyObject *
raise_diag (const char *what, const fx_diag *diag)
{
  char text[2048];
  fx_diag_format (diag, text, sizeof text);
  PyErr_Format (PyExc_RuntimeError, "%s: %s", what, text);
  return NULL;
}

/* A Python value (tensor, int, float, bool, None, tuple/list of them) as an engine value. Tensors are shared
   through DLPack: no copy; the engine holds the torch tensor alive until it lets go. */
static int
value_from_py (PyObject *o, fx_arena *arena, fx_value *out)
{
  memset (out, 0, sizeof *out);
  if (o == Py_None)
    {
      *out = fx_value_none ();
      return 0;
    }
  if (PyBool_Check (o))
    {
      *out = fx_value_bool (o == Py_True);
      return 0;
    }
  if (PyLong_Check (o))
    {
      long long v = PyLong_AsLongLong (o);
      if (v == -1 && PyErr_Occurred ())
        return -1;
      *out = fx_value_int (v);
      return 0;
    }
  if (PyFloat_Check (o))
    {
      *out = fx_value_float (PyFloat_AsDouble (o));
      return 0;
    }
  if (PyTuple_Check (o) || PyList_Check (o))
    {
      Py_ssize_t n = PySequence_Size (o);
      fx_value *items = fx_arena_alloc (arena, sizeof (fx_value) * (size_t) (n + 1));
      for (Py_ssize_t i = 0; i < n; i++)
        {
          PyObject *it = PySequence_GetItem (o, i);
          int rc = it ? value_from_py (it, arena, &items[i]) : -1;
          Py_XDECREF (it);
          if (rc != 0)
            return -1;
        }
      out->kind = PyTuple_Check (o) ? FX_VALUE_TUPLE : FX_VALUE_LIST;
      out->u.seq.items = items;
      out->u.seq.n = (size_t) n;
      return 0;
    }
  if (ensure_dlpack () != 0)
    return -1;
  /* to_dlpack refuses tensors that require grad; the engine computes no gradients. */
  PyObject *detached = PyObject_CallMethod (o, "detach", NULL);
  if (detached == NULL)
    return -1;
  PyObject *cap = PyObject_CallFunctionObjArgs (to_dlpack_fn, detached, NULL);
  Py_DECREF (detached);
  if (cap == NULL)
    return -1;
  fx_dl_managed_tensor *m = PyCapsule_GetPointer (cap, "dltensor");
  if (m == NULL)
    {
      Py_DECREF (cap);
      return -1;
    }
  /* PyTorch before 2.1 sends bool tensors as uint8 (no kDLBool then): the bytes are the same, the type is not. */
  PyObject *dt = PyObject_GetAttrString (o, "dtype");
  PyObject *dts = dt ? PyObject_Str (dt) : NULL;
  bool is_bool = dts && strcmp (PyUnicode_AsUTF8 (dts), "torch.bool") == 0;
  Py_XDECREF (dts);
  Py_XDECREF (dt);
  if (PyErr_ExceptionMatches (PyExc_KeyboardInterrupt))
    {
      /* Ctrl-C while reading the dtype: it reaches the caller */
      Py_DECREF (cap);
      return -1;
    }
  PyErr_Clear ();
  if (is_bool && m->dl_tensor.dtype.code == FX_DL_UINT && m->dl_tensor.dtype.bits == 8)
    m->dl_tensor.dtype.code = FX_DL_BOOL;
  fx_tensor *t = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_tensor_from_dlpack (m, &t, &diag) != FX_OK)
    {
      Py_DECREF (cap);
      raise_diag ("cannot pass a tensor to the engine", &diag);
      return -1;
    }
  /* Consumed: the capsule must not call the deleter again. */
  PyCapsule_SetName (cap, "used_dltensor");
  Py_DECREF (cap);
  *out = fx_value_tensor (t);
  return 0;
}

static void
dlpack_capsule_destructor (PyObject *cap)
{
  if (PyCapsule_IsValid (cap, "dltensor"))
    {
      fx_dl_managed_tensor *m = PyCapsule_GetPointer (cap, "dltensor");
      if (m && m->deleter)
        m->deleter (m);
    }
}

static PyObject *
value_to_py (const fx_value *v)
{
  switch ((int) v->kind)
    {
    case FX_VALUE_NONE:
      Py_RETURN_NONE;
    case FX_VALUE_BOOL:
      return PyBool_FromLong (v->u.b);
    case FX_VALUE_INT:
      return PyLong_FromLongLong (v->u.i);
    case FX_VALUE_FLOAT:
      return PyFloat_FromDouble (v->u.f);
    case FX_VALUE_TUPLE:
    case FX_VALUE_LIST:
      {
        PyObject *t = PyTuple_New ((Py_ssize_t) v->u.seq.n);
        for (size_t i = 0; i < v->u.seq.n; i++)
          {
            PyObject *it = value_to_py (&v->u.seq.items[i]);
            if (it == NULL)
              {
                Py_DECREF (t);
                return NULL;
              }
            PyTuple_SET_ITEM (t, (Py_ssize_t) i, it);
          }
        return t;
      }
    case FX_VALUE_TENSOR:
      {
        if (ensure_dlpack () != 0)
          return NULL;
        fx_dl_managed_tensor *m = fx_tensor_to_dlpack (v->u.t);
        /* Older PyTorch knows no kDLBool: send uint8 and view the result as bool (no copy). */
        bool as_bool = m->dl_tensor.dtype.code == FX_DL_BOOL;
        if (as_bool)
          m->dl_tensor.dtype.code = FX_DL_UINT;
        PyObject *cap = PyCapsule_New (m, "dltensor", dlpack_capsule_destructor);
        if (cap == NULL)
          {
            m->deleter (m);
            return NULL;
          }
        PyObject *t = PyObject_CallFunctionObjArgs (from_dlpack_fn, cap, NULL);
        Py_DECREF (cap);
        if (t && as_bool)
          {
            PyObject *torch = PyImport_ImportModule ("torch");
            PyObject *bool_dtype = torch ? PyObject_GetAttrString (torch, "bool") : NULL;
            PyObject *viewed = bool_dtype ? PyObject_CallMethod (t, "view", "O", bool_dtype) : NULL;
            Py_XDECREF (bool_dtype);
            Py_XDECREF (torch);
            Py_DECREF (t);
            t = viewed;
          }
        return t;
      }
    default:
      PyErr_Format (PyExc_TypeError, "the engine returned a value of kind %d that has no Python form", (int) v->kind);
      return NULL;
    }
}

static void
compiled_capsule_destructor (PyObject *cap)
{
  fx_compiled_free (PyCapsule_GetPointer (cap, COMPILED_CAPSULE));
}

static void
clear_values (fx_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fx_value_clear (&v[i]);
}

/* The items of the Python sequence OBJ as engine values in ARENA (WHAT names the argument in the TypeError when
   OBJ is no sequence). Returns 0, or -1 with the Python error set; *n counts the values made either way (to clear). */
static int
values_from_seq (PyObject *obj, const char *what, fx_arena *arena, fx_value **out, size_t *n)
{
  PyObject *seq = PySequence_Fast (obj, what);
  int rc = seq ? 0 : -1;
  size_t len = seq ? (size_t) PySequence_Fast_GET_SIZE (seq) : 0;
  *out = fx_arena_alloc (arena, sizeof (fx_value) * (len + 1));
  for (*n = 0; rc == 0 && *n < len; ++*n)
    if ((rc = value_from_py (PySequence_Fast_GET_ITEM (seq, (Py_ssize_t) *n), arena, &(*out)[*n])) != 0)
      break;
  Py_XDECREF (seq);
  return rc;
}

/* An "O&" converter: the compiled object in an engine_compile capsule. */
static int
compiled_from_py (PyObject *cap, void *out)
{
  *(fx_compiled **) out = PyCapsule_GetPointer (cap, COMPILED_CAPSULE);
  return *(fx_compiled **) out != NULL;
}

/* engine_compile(graph_json, backend, mode, options, examples) -> compiled */
static PyObject *
py_engine_compile (PyObject *self, PyObject *args)
{
  const char *json, *backend_name, *mode = NULL;
  Py_ssize_t json_len;
  PyObject *options, *examples;
  if (!PyArg_ParseTuple (args, "s#szOO", &json, &json_len, &backend_name, &mode, &options, &examples))
    return NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  const fx_backend *backend = fx_backend_lookup (backend_name, &diag);
  if (backend == NULL)
    return raise_diag ("engine backend", &diag);
  fx_graph *graph = NULL;
  if (fx_graph_from_json (json, (size_t) json_len, &graph, &diag) != FX_OK)
    return raise_diag ("captured graph", &diag);
  fx_graph_resolve_ops (graph);
  fx_arena *arena = fx_arena_new ();
  PyObject *result = NULL;
  fx_value *ex = NULL;
  size_t n_ex = 0;
  fx_option_kv *kv = NULL;
  size_t n_kv = 0;
  if (values_from_seq (examples, "examples must be a sequence", arena, &ex, &n_ex) != 0)
    goto out;
  if (options && options != Py_None)
    {
      if (!PyDict_Check (options))
        {
          PyErr_SetString (PyExc_TypeError, "options must be a dict");
          goto out;
        }
      kv = fx_arena_alloc (arena, sizeof (fx_option_kv) * ((size_t) PyDict_Size (options) + 1));
      PyObject *k, *v;
      Py_ssize_t pos = 0;
      while (PyDict_Next (options, &pos, &k, &v))
        {
          PyObject *ks = PyObject_Str (k), *vs = PyUnicode_Check (v) ? (Py_INCREF (v), v) : PyObject_Str (v);
          if (ks == NULL || vs == NULL)
            {
              Py_XDECREF (ks);
              Py_XDECREF (vs);
              goto out;
            }
          kv[n_kv].key = fx_arena_strdup (arena, PyUnicode_AsUTF8 (ks));
          kv[n_kv].value = fx_arena_strdup (arena, PyUnicode_AsUTF8 (vs));
          n_kv++;
          Py_DECREF (ks);
          Py_DECREF (vs);
        }
    }
  fx_compiled *c = NULL;
  fx_status st;
  Py_BEGIN_ALLOW_THREADS
  st = fx_backend_compile (backend, graph, ex, n_ex, mode, kv, n_kv, &c, &diag);
  Py_END_ALLOW_THREADS
  if (st != FX_OK)
    {
      raise_diag ("engine compile", &diag);
      goto out;
    }
  result = PyCapsule_New (c, COMPILED_CAPSULE, compiled_capsule_destructor);
  if (result == NULL)
    fx_compiled_free (c);
out:
  clear_values (ex, n_ex);
  fx_arena_free (arena);
  fx_graph_free (graph);
  return result;
}

/* engine_run(compiled, args) -> tuple of outputs */
static PyObject *
py_engine_run (PyObject *self, PyObject *args)
{
  fx_compiled *c;
  PyObject *inputs;
  if (!PyArg_ParseTuple (args, "O&O", compiled_from_py, &c, &inputs))
    return NULL;
  fx_arena *arena = fx_arena_new ();
  fx_value *in = NULL;
  size_t n_in = 0;
  PyObject *result = NULL;
  fx_value *out = NULL;
  size_t n_out = 0;
  if (values_from_seq (inputs, "inputs must be a sequence", arena, &in, &n_in) != 0)
    goto out;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st;
  Py_BEGIN_ALLOW_THREADS
  st = fx_compiled_run (c, in, n_in, arena, &out, &n_out, &diag);
  Py_END_ALLOW_THREADS
  if (st != FX_OK)
    {
      raise_diag ("engine run", &diag);
      goto out;
    }
  fx_value outputs = { .kind = FX_VALUE_TUPLE, .u.seq = { out, n_out } };
  result = value_to_py (&outputs);
out:
  clear_values (out, n_out);
  clear_values (in, n_in);
  fx_arena_free (arena);
  return result;
}

/* engine_kernels(compiled) -> [(name, kind, [nodes...]), ...] */
static PyObject *
py_engine_kernels (PyObject *self, PyObject *args)
{
  fx_compiled *c;
  if (!PyArg_ParseTuple (args, "O&", compiled_from_py, &c))
    return NULL;
  PyObject *list = PyList_New (0);
  for (size_t k = 0; k < c->n_kernels; k++)
    {
      const fx_kernel_info *ki = &c->kernels[k];
      PyObject *nodes = PyList_New ((Py_ssize_t) ki->n_nodes);
      for (size_t i = 0; i < ki->n_nodes; i++)
        PyList_SET_ITEM (nodes, (Py_ssize_t) i, PyUnicode_FromString (ki->nodes[i]));
      PyObject *item = Py_BuildValue ("(ssNz)", ki->name, ki->kind, nodes, ki->source);
      PyList_Append (list, item);
      Py_DECREF (item);
    }
  return list;
}

/* engine_backends() -> names of every registered backend */
static PyObject *
py_engine_backends (PyObject *self, PyObject *args)
{
  const fx_backend *list[128];
  size_t n = fx_backend_list (true, list, 128);
  PyObject *out = PyList_New (0);
  for (size_t i = 0; i < n && i < 128; i++)
    {
      PyObject *s = PyUnicode_FromString (list[i]->name);
      PyList_Append (out, s);
      Py_DECREF (s);
    }
  return out;
}

static PyMethodDef bridge_methods[] = {
  { "engine_compile", py_engine_compile, METH_VARARGS,
    "engine_compile(graph_json, backend, mode, options, examples): compile a captured graph with an engine backend" },
  { "engine_run", py_engine_run, METH_VARARGS, "engine_run(compiled, args) -> tuple of outputs" },
  { "engine_kernels", py_engine_kernels, METH_VARARGS, "engine_kernels(compiled) -> [(name, kind, nodes, source)]" },
  { "engine_backends", py_engine_backends, METH_NOARGS, "engine_backends() -> every registered backend name" },
  { NULL, NULL, 0, NULL },
};

PyMODINIT_FUNC PyInit__fxcapture (void);

/* The module's entry point: capture (a front end) with the engine's backends as its compilers. */
PyMODINIT_FUNC
PyInit__fxcapture (void)
{
  /* The bridge is an entry point: it registers the built-ins and plugins once, when the module loads. */
  fx_backends_init ();
  return fxc_module_new (bridge_methods);
}
