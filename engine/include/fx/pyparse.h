/* fx/pyparse.h: parser for FX Python code (GraphModule.code, print_readable, Dynamo/AOT graphs, repro.py). Nothing is executed. */
#pragma once

#include "fx/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses any form PyTorch writes (the form is detected). filename is only used in diagnostics.
   On error returns a status with diag located at file:line:col and *out == NULL. */
fx_status fx_parse_fx_code (const char *text, size_t len, const char *filename,
                            fx_graph **out, fx_diag *diag);

fx_status fx_parse_fx_file (const char *path, fx_graph **out, fx_diag *diag);

#ifdef __cplusplus
}
#endif
