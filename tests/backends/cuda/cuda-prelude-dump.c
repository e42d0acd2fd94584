/* cuda-prelude-dump.c: prints the CUDA prelude of generated kernels, so that the nvcc test compiles what NVRTC gets. */
#include <stdio.h>

#include "cuda/fx-cuda.h"

int
main (void)
{
  fputs (fx_cuda_prelude_source (), stdout);
  return ferror (stdout) ? 1 : 0;
}
