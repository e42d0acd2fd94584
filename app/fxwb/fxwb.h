/* fxwb.h: the fxwb command table and helpers shared by the commands. */
#pragma once

#include <glib.h>
#include <stdio.h>

#include "fx/common.h"

/* Exit codes, documented in `fxwb --help`. */
enum
{
  FXWB_EXIT_OK = 0,
  FXWB_EXIT_FAILURE = 1,   /* the work failed (bad input, failed run, accuracy failure) */
  FXWB_EXIT_USAGE = 2,     /* wrong command line */
  FXWB_EXIT_IO = 3,        /* a file could not be read or written */
  FXWB_EXIT_UNAVAILABLE = 4, /* a feature or device this machine lacks (no CUDA, no Python) */
};

typedef int (*fxwb_command_fn) (int argc, char **argv);

typedef struct
{
  const char *name;
  const char *summary;
  fxwb_command_fn run;
} fxwb_command;

int fxwb_main (int argc, char **argv);

/* The commands; argv[0] is the command name. */
int fxwb_cmd_print (int argc, char **argv);
int fxwb_cmd_import (int argc, char **argv);
int fxwb_cmd_ls (int argc, char **argv);
int fxwb_cmd_show (int argc, char **argv);
int fxwb_cmd_explain (int argc, char **argv);
int fxwb_cmd_run (int argc, char **argv);
int fxwb_cmd_compile (int argc, char **argv);
int fxwb_cmd_compare (int argc, char **argv);
int fxwb_cmd_bench (int argc, char **argv);
int fxwb_cmd_backends (int argc, char **argv);
int fxwb_cmd_capture (int argc, char **argv);
int fxwb_cmd_diff (int argc, char **argv);

/* Prints an engine diagnostic to stderr: "file:line:col: error: message", the line and a caret. */
void fxwb_print_diag (const fx_diag *diag);
/* Parses options for a command; on failure prints the error and usage, returns FALSE. */
gboolean fxwb_parse_options (GOptionContext *context, int *argc, char ***argv);
/* Maps an engine status to an exit code. */
int fxwb_exit_for_status (fx_status status);
/* TRUE when stdout/stderr is a terminal (for progress bars). */
gboolean fxwb_stderr_is_tty (void);
/* A one-line progress bar on stderr: "label [#####.....] 42%"; done=total clears it. */
void fxwb_progress (const char *label, double fraction);
void fxwb_progress_done (void);
