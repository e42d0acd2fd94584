/* fxwb-cmd-serve-none.c: `fxwb serve` in a build without libsoup 3. */
#include "fxwb.h"

int
fxwb_cmd_serve (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  fprintf (stderr, "fxwb serve: this build has no libsoup 3 (install libsoup-3.0-dev and rebuild)\n");
  return FXWB_EXIT_UNAVAILABLE;
}
