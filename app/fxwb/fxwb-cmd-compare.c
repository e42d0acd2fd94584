/* fxwb-cmd-compare.c: `fxwb compare`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_compare (int argc, char **argv)
{
  fprintf (stderr, "fxwb compare: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
