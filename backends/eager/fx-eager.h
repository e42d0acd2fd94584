/* fx-eager.h: the built-in debugging backends: eager (the interpreter on the graph as given) and aot_eager (lower
   to ATen, decompose, functionalize, then interpret), as torch._dynamo's eager and aot_eager. */
#pragma once

#include "fx/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const fx_backend fx_eager_backend;
extern const fx_backend fx_aot_eager_backend;

#ifdef __cplusplus
}
#endif
