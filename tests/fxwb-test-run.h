/* fxwb-test-run.h: the CLI tests' one way of running fxwb (or any program) and keeping what it printed. */
#pragma once

#include <glib.h>

typedef struct
{
  int status;   /* the exit code; 128 when a signal killed it (signal holds which) */
  int signal;
  char *out;
  char *err;
} fxwb_run_result;

/* Runs the NULL-terminated argv (argv[0]: a path, or a name looked up in PATH) in cwd (NULL: here) with envp
   (NULL: this environment). A program that cannot be started fails the test. */
fxwb_run_result fxwb_test_spawn (const char *cwd, const char *const *argv, char **envp);
/* fxwb_test_spawn of program followed by args (NULL-terminated): the common `fxwb ARGS...`. */
fxwb_run_result fxwb_test_run (const char *program, const char *const *args);
void fxwb_run_result_clear (fxwb_run_result *r);
/* Removes path and, for a folder (not followed when a symlink), everything below it. */
void fxwb_test_rm_rf (const char *path);
