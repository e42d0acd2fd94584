/* fxwb-cmd-run.c: `fxwb run`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_run (int argc, char **argv)
{
  fprintf (stderr, "fxwb run: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
