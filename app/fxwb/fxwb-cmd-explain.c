/* fxwb-cmd-explain.c: `fxwb explain`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_explain (int argc, char **argv)
{
  fprintf (stderr, "fxwb explain: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
