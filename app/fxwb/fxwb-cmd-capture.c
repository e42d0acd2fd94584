/* fxwb-cmd-capture.c: `fxwb capture`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_capture (int argc, char **argv)
{
  fprintf (stderr, "fxwb capture: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
