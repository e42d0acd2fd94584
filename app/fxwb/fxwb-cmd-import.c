/* fxwb-cmd-import.c: `fxwb import`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_import (int argc, char **argv)
{
  fprintf (stderr, "fxwb import: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
