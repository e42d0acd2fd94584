/* fx-torch-impl.h: internals of the torch backend: the worker process (spawn, line protocol, timeouts, crash reports)
   and the tensor files that carry values to and from it. */
#pragma once

#include "fx/backend.h"

#include <json-c/json.h>
#include <sys/types.h>

/* One python worker running fxwb_torch_runner.py in its own temporary folder. */
typedef struct fx_torch_worker
{
  pid_t pid;                 /* 0 once reaped */
  int to_child;              /* the worker's stdin: requests */
  int from_child;            /* the worker's stdout: replies */
  char *workdir;             /* mkdtemp folder, removed by fx_torch_worker_stop */
  char *python;              /* the interpreter as started */
  double timeout_s;
  fx_buf rbuf;               /* reply bytes not consumed yet */
  int file_seq;              /* names input files of one request */
  /* From the worker's hello. */
  char torch_version[64];
  char python_version[32];
  char executable[256];
  bool has_compile;
  bool has_cuda;
  double start_ms;           /* spawn until hello: interpreter start and `import torch` */
} fx_torch_worker;

/* The interpreter the `python` option names, else $FXWB_PYTHON, else /usr/bin/python3 when it exists, else
   "python3" (looked up on PATH). */
const char *fx_torch_pick_python (const char *option_value);

/* Starts a worker and waits for its hello (importing torch: at least 120 s, or timeout_s when longer). Errors name
   the interpreter: not found, not executable, no torch, or what it printed on stderr before dying. */
fx_status fx_torch_worker_start (const char *python, double timeout_s, fx_torch_worker **out, fx_diag *diag);
/* Sends one request and waits (timeout_s) for its reply. A reply {"ok": false} becomes FX_ERR_BACKEND with the
   worker's error and traceback tail; a worker that dies or hangs (killed after timeout_s) becomes FX_ERR_BACKEND
   with its exit status or signal and the tail of its stderr. *reply (on FX_OK) is the caller's to put. `what`
   names the request in messages ("compile", "run"). */
fx_status fx_torch_worker_call (fx_torch_worker *w, json_object *request, const char *what, json_object **reply,
                                fx_diag *diag);
/* Asks the worker to quit, kills it when it does not within a second, removes its folder, frees w. */
void fx_torch_worker_stop (fx_torch_worker *w);
/* The last max bytes of the worker's stderr (malloc'd, NUL-terminated; "" when none). */
char *fx_torch_worker_stderr_tail (const fx_torch_worker *w, size_t max);
/* True while the worker process is alive (and has not been reaped). */
bool fx_torch_worker_alive (fx_torch_worker *w);

/* Values to the worker: tensors are written as files in its folder; returns a JSON VALUE (see the runner). */
fx_status fx_torch_value_to_json (fx_torch_worker *w, const fx_value *v, json_object **out, fx_diag *diag);
/* A JSON VALUE from the worker to a value allocated in arena (tensors read from their files). */
fx_status fx_torch_value_from_json (json_object *j, fx_arena *arena, fx_value *out, fx_diag *diag);
/* The values of a JSON array (fx_torch_value_from_json each) into arena; on failure none are left holding tensors. */
fx_status fx_torch_values_from_json (json_object *arr, fx_arena *arena, fx_value **out, size_t *n_out, fx_diag *diag);
/* The tensor file format of the runner (a JSON header line with dtype, shape, stride, storage; then the bytes of the
   elements from the first to the last reachable one). */
fx_status fx_torch_tensor_write (const fx_tensor *t, const char *path, fx_diag *diag);
fx_status fx_torch_tensor_read (const char *path, fx_tensor **out, fx_diag *diag);

/* The graph check (fx-torch-check.c): every node against the allowlist (fx-torch-allow.def, and the engine's op
   table for torch.ops), before any worker starts. FX_ERR_INVALID (a target, method, name or argument the backend
   refuses to run) or FX_ERR_UNSUPPORTED (module attributes, symbolic arguments), naming the node in diag->node. */
fx_status fx_torch_check_graph (const fx_graph *graph, fx_diag *diag);

typedef enum fx_torch_allow_kind
{
  FX_TORCH_ALLOW_KIND_FUNCTION,
  FX_TORCH_ALLOW_KIND_OPERATOR,
  FX_TORCH_ALLOW_KIND_METHOD,
  FX_TORCH_ALLOW_KIND_CONSTANT,
  FX_TORCH_ALLOW_KIND_NAMESPACE,
  FX_TORCH_ALLOW_KIND_COUNT
} fx_torch_allow_kind;

/* The entries of one kind of fx-torch-allow.def, in the file's order (for tests that compare them with the worker's
   copy): the first MAX into NAMES; returns how many there are. */
size_t fx_torch_allow_names (fx_torch_allow_kind kind, const char **names, size_t max);
bool fx_torch_op_allowed (const char *target);          /* "aten.add.Tensor", "torch.ops.aten.abs" */
bool fx_torch_function_allowed (const char *qualified); /* "torch.nn.functional.relu" */
bool fx_torch_operator_allowed (const char *name);      /* "add" (operator.add) */
bool fx_torch_method_allowed (const char *name);        /* "view" */

/* The embedded runner script (generated from fxwb_torch_runner.py). */
extern const unsigned char fx_torch_runner_script[];
extern const size_t fx_torch_runner_script_len;
