/* main.c: entry point of the fxwb command line. */
#include "fxwb.h"

int
main (int argc, char **argv)
{
  return fxwb_main (argc, argv);
}
