/* fx-backends-builtin.c: the list of built-in backends, registered by one explicit call from each entry point (the
   CLI's main, the capture bridge, tests) rather than lazily from inside the registry. */
#include "registry/fx-registry.h"

#include <pthread.h>

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
  fx_backends_register_builtins ();
  fx_backend_load_plugins (false, NULL);
}
