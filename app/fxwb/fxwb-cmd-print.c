/* fxwb-cmd-print.c: `fxwb print`. This build does not have it yet; the owning change replaces this file. */
#include "fxwb.h"

int
fxwb_cmd_print (int argc, char **argv)
{
  fprintf (stderr, "fxwb print: this command is not in this build yet\n");
  return FXWB_EXIT_UNAVAILABLE;
}
