/* main.c: entry point of the fxwb command line. */
#include "fxwb.h"

int
main (int argc, char **argv)
{
  fx_malloc_tune ();
  return fxwb_main (argc, argv);
}
