/* fx-capture-embed.c: runs a Python program in an embedded CPython with the engine's torch.compile (fxwb capture). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "fx/capture.h"

#include <string.h>

static int
append_path (PyObject *sys_path, const char *dir)
{
  PyObject *p = PyUnicode_FromString (dir);
  int rc = p ? PyList_Insert (sys_path, 0, p) : -1;
  Py_XDECREF (p);
  return rc;
}

/* The Python side of a run: import fxcapture, install it, run the program as __main__, dump the record. */
static const char *const runner =
  "import sys, runpy, os\n"
  "import fxcapture\n"
  "fxcapture.install(replace=_fx_replace)\n"
  "if _fx_backend:\n"
  "    _orig = fxcapture.compile\n"
  "    def _compile_default(model=None, **kw):\n"
  "        kw.setdefault('backend', _fx_backend)\n"
  "        return _orig(model, **kw)\n"
  "    import torch; torch.compile = _compile_default\n"
  "sys.argv = _fx_argv\n"
  "sys.path.insert(0, os.path.dirname(os.path.abspath(_fx_argv[0])))\n"
  "try:\n"
  "    runpy.run_path(_fx_argv[0], run_name='__main__')\n"
  "finally:\n"
  "    if _fx_json:\n"
  "        fxcapture.dump_json(_fx_json)\n";

fx_status
fx_capture_run_program (const fx_capture_opts *opts, int *exit_code, fx_diag *diag)
{
  *exit_code = 0;
  PyConfig config;
  PyConfig_InitPythonConfig (&config);
  /* Debian's python3 (with torch) rather than whatever python3 is on PATH. */
  PyConfig_SetBytesString (&config, &config.program_name, "/usr/bin/python3");
  config.install_signal_handlers = 1;
  PyStatus st = Py_InitializeFromConfig (&config);
  PyConfig_Clear (&config);
  if (PyStatus_Exception (st))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "could not start Python: %s", st.err_msg ? st.err_msg : "?");
  fx_status status = FX_OK;
  PyObject *sys_path = PySys_GetObject ("path");
  append_path (sys_path, FX_CAPTURE_EXT_DIR);
  append_path (sys_path, FX_CAPTURE_PYTHON_DIR);
  PyObject *main = PyImport_AddModule ("__main__");
  PyObject *g = PyModule_GetDict (main);
  PyObject *argv = PyList_New (0);
  PyObject *a0 = PyUnicode_DecodeFSDefault (opts->program);
  PyList_Append (argv, a0);
  Py_XDECREF (a0);
  for (int i = 0; i < opts->argc; i++)
    {
      PyObject *a = PyUnicode_DecodeFSDefault (opts->argv[i]);
      PyList_Append (argv, a);
      Py_XDECREF (a);
    }
  PyDict_SetItemString (g, "_fx_argv", argv);
  Py_DECREF (argv);
  PyObject *js = opts->json_out ? PyUnicode_DecodeFSDefault (opts->json_out) : Py_NewRef (Py_None);
  PyDict_SetItemString (g, "_fx_json", js);
  Py_DECREF (js);
  PyObject *be = opts->backend ? PyUnicode_FromString (opts->backend) : Py_NewRef (Py_None);
  PyDict_SetItemString (g, "_fx_backend", be);
  Py_DECREF (be);
  PyDict_SetItemString (g, "_fx_replace", opts->replace_compile ? Py_True : Py_False);
  PyObject *r = PyRun_String (runner, Py_file_input, g, g);
  if (!r)
    {
      if (PyErr_ExceptionMatches (PyExc_SystemExit))
        {
          PyObject *et, *ev, *tb;
          PyErr_Fetch (&et, &ev, &tb);
          PyObject *code = ev ? PyObject_GetAttrString (ev, "code") : NULL;
          if (code && PyLong_Check (code))
            *exit_code = (int) PyLong_AsLong (code);
          else if (code && code != Py_None)
            *exit_code = 1;
          PyErr_Clear ();
          Py_XDECREF (code);
          Py_XDECREF (et);
          Py_XDECREF (ev);
          Py_XDECREF (tb);
          if (*exit_code != 0)
            status = fx_diag_set (diag, FX_ERR_INVALID, "%s exited with status %d", opts->program, *exit_code);
        }
      else
        {
          PyErr_Print ();
          *exit_code = 1;
          status = fx_diag_set (diag, FX_ERR_INVALID, "%s raised an exception (traceback above)", opts->program);
        }
    }
  Py_XDECREF (r);
  if (Py_FinalizeEx () < 0 && status == FX_OK)
    status = fx_diag_set (diag, FX_ERR_IO, "Python could not flush its output");
  return status;
}
