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

/* What the parser fills in, beyond nodes, args and targets:
   - graph->class_name from `class <lambda>(torch.nn.Module):` (print_readable) or `class Repro` (repro.py);
     "GraphModule" for a bare `def forward`.
   - node->meta.val from string annotations ("f32[8, 4][4, 1]cuda:0", "Sym(s0)"); an annotation the IR does not
     model is kept as FX_VAL_OTHER text. node->type_expr from expression annotations (`L_x_ : torch.Tensor`), the
     output node's from `-> T`. Placeholder defaults in node->default_value.
   - node->meta.stack_trace synthesized from `# File: {file}:{line} in {fn}, code: {code}` comments as
     '  File "{file}", line {line}, in {fn}\n    {code}\n'; none after `# No stacktrace found for following nodes`.
     ` Annotation: ...` and ` # recompute: ...` / ` # ac_graph_id: ...` parts go to meta extras "custom",
     "recompute" and "ac_graph_id".
   - graph->children from nested `class name(torch.nn.Module):` blocks (attr = class name).
   - graph->attrs from a Repro's __init__ (register_buffer, Parameters, submodules, constants; tensor meta when the
     constructor shows it), graph->inputs from load_args (reader.storage/tensor/symint/const; names from the
     trailing `# name` comments; symbolic sizes such as `1024*s77` kept as fx_dim.sym text).
   The rest of a repro.py (imports, config lines, `if __name__ == '__main__':`) is skipped unexecuted. */

/* The print_readable options a parsed text was printed with, read back from its tensor annotations:
   include_stride when any annotation had strides, include_device when any had a device, expanded_def when a
   parameter or the return carried an AOT descriptor comment (meta "desc"). */
void fx_parse_readable_opts (const fx_graph *graph, fx_readable_opts *opts);

#ifdef __cplusplus
}
#endif
