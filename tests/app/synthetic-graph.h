/* synthetic-graph.h: builds large FX graphs with module stacks for the display tests and the canvas benchmark. */
#pragma once

#include "fx/ir.h"

/* n_modules blocks of per_module nodes each (a chain with skip connections), inside module "layers.<i>"
   of class "model.Block"; every value is an f32[64, 256] tensor. */
fx_graph *fxw_test_synthetic_graph (unsigned n_modules, unsigned per_module);
