/* fxwb-cmd-bench.c: `fxwb bench`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_bench (int argc, char **argv)
{
  fprintf (stderr, "fxwb bench: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
