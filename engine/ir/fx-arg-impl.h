/* fx-arg-impl.h: argument helpers shared inside engine/ir (fx-types.c, fx-graph.c). */
#pragma once

#include "fx/ir.h"

/* Replaces every reference to `from` in arg (recursively) by `to`; the users lists are the caller's to fix. */
void fx_arg_replace_node (fx_arg *arg, fx_node *from, fx_node *to);
