/* fxwb-cmd-backends.c: `fxwb backends`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_backends (int argc, char **argv)
{
  fprintf (stderr, "fxwb backends: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
