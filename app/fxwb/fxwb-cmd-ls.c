/* fxwb-cmd-ls.c: `fxwb ls`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_ls (int argc, char **argv)
{
  fprintf (stderr, "fxwb ls: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
