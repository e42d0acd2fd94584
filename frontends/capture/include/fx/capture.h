/* fx/capture.h: running a Python program under capture (embedded CPython 3.11), a front end above the backends. */
#pragma once

#include "fx/common.h"
#include "fx/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fx_capture_opts
{
  const char *program;        /* path of the .py file */
  char **argv;                /* sys.argv[1:] for the program */
  int argc;
  const char *json_out;       /* write the capture record (frames, compiles, graphs, guards, breaks) as JSON, or NULL */
  const char *backend;        /* default backend for torch.compile calls that name none, or NULL */
  bool replace_compile;       /* replace torch.compile even when torch has one */
} fx_capture_opts;

/* Runs the program with the engine's torch.compile installed. Returns FX_OK when the program exited normally
   (exit status 0); FX_ERR_* with diag filled when it raised (the traceback is printed to stderr) or could not start.
   *exit_code receives the program's exit status. */
fx_status fx_capture_run_program (const fx_capture_opts *opts, int *exit_code, fx_diag *diag);

/* Writes a capture record (the JSON fx_capture_run_program writes) into the workspace: a source of kind "capture",
   then frames, compiles, dynamo graphs, guards, guard failures, graph breaks and one backend run per compile.
   A record already imported (same content) adds nothing. */
fx_status fx_capture_record_to_store (const char *json_text, size_t len, const char *program, fx_store *store,
                                      fx_diag *diag);

#ifdef __cplusplus
}
#endif
