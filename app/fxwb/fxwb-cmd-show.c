/* fxwb-cmd-show.c: `fxwb show`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_show (int argc, char **argv)
{
  fprintf (stderr, "fxwb show: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
