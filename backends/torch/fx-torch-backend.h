/* fx-torch-backend.h: the `torch` backend: runs a graph through an installed PyTorch in a worker process (plain
   eager on any version, torch.compile with a backend, mode and options where the torch has it). */
#pragma once

#include "fx/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fx_backend fx_torch_backend;

#ifdef __cplusplus
}
#endif
