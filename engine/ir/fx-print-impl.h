/* fx-print-impl.h: helpers shared by the FX text printers (engine/ir/fx-print-*.c, fx-json.c, fx-dot.c). */
#pragma once

#include "fx/ir.h"

/* Python's str() of a value: strings unquoted, everything else as repr() (FX_REPR_PY). */
void fx_print_arg_str (const fx_arg *arg, fx_buf *out);
/* str(node.target) as print_tabular shows it: "aten.add.Tensor", "<built-in function add>", the plain string. */
void fx_print_target_str (const fx_target *target, fx_buf *out);
/* Python's str.isspace() for one byte of ASCII (includes \x1c-\x1f). */
bool fx_print_is_space (unsigned char c);
/* Number of code points in a UTF-8 string (what python-tabulate measures without wcwidth). */
size_t fx_print_width (const char *s, size_t len);
