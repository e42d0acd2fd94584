/* fxwb-cmd-compile.c: `fxwb compile`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_compile (int argc, char **argv)
{
  fprintf (stderr, "fxwb compile: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
