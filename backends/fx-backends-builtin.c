/* fx-backends-builtin.c: the list of built-in backends, registered by one explicit call from each entry point (the
   CLI's main, the capture bridge, tests) rather than lazily from inside the registry. */
#include "registry/fx-registry.h"

#include <pthread.h>
#include <stdlib.h>

#include "eager/fx-eager.h"
#include "inductor/fx-inductor.h"
#include "torch/fx-torch-backend.h"

static const fx_backend *const builtins[] = {
  &fx_eager_backend,
  &fx_aot_eager_backend,
  &fx_inductor_backend,
  &fx_torch_backend,
};

static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

static void
register_builtins_once (void)
{
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    {
      fx_diag diag;
      fx_diag_clear (&diag);
      /* A plugin loaded earlier may have taken a built-in's name: the plugin keeps it (the duplicate is refused). */
      fx_backend_register (builtins[i], &diag);
    }
}

void
fx_backends_register_builtins (void)
{
  pthread_once (&builtins_once, register_builtins_once);
}

void
fx_backends_init (void)
{
  /* The compiled kernels' OpenMP threads (libgomp, loaded with the first kernel library) spin after each parallel
     loop (GOMP_SPINCOUNT 300000 by default), so an extern call between kernels (OpenBLAS with its own threads) shares
     the cores with spinning threads: addmm ran 2x slower on 2 cores. A short spin keeps back-to-back kernels fast and
     leaves the cores to BLAS; a user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT wins. The entry points call this
     first, before they start threads (setenv is not thread-safe). */
  if (getenv ("OMP_WAIT_POLICY") == NULL && getenv ("GOMP_SPINCOUNT") == NULL)
    setenv ("GOMP_SPINCOUNT", "20000", 0);
  fx_backends_register_builtins ();
  fx_backend_load_plugins (false, NULL);
}
