/* fxwb.h: the fxwb command table and helpers shared by the commands. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdio.h>

#include "fx/common.h"
#include "fx/ir.h"
#include "fx/ranks.h"
#include "fx/store.h"

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
int fxwb_cmd_report (int argc, char **argv);
int fxwb_cmd_serve (int argc, char **argv);
int fxwb_cmd_minify (int argc, char **argv);

/* A canonical JSON graph file: named *.json, or its first non-blank character opens an object. */
gboolean fxwb_looks_like_json (const char *path, const char *text, size_t len);
/* TRUE when path is an sqlite file (a workspace) rather than an artifact to import. */
gboolean fxwb_is_workspace_file (const char *path);
/* Loads the graph of a file in any form fxwb takes: FX Python code (print_readable, GraphModule.code, repro.py),
   the canonical JSON that `fxwb print -j` writes, or a torch.export .pt2 archive (its first model). text (may be
   NULL): the file's text (for a .pt2, the graph's stored text); free() it. */
fx_status fxwb_load_graph_file (const char *path, fx_graph **graph, char **text, fx_diag *diag);

/* Prints an engine diagnostic to stderr: "file:line:col: error: message", the line and a caret. */
void fxwb_print_diag (const fx_diag *diag);
/* A command's option context. prgname ("fxwb ls"; NULL keeps the current one) names the command in --help and in
   fxwb_usage_error's message; description (NULL: none) is the text after the options, the exit statuses. */
GOptionContext *fxwb_option_context_new (const char *prgname, const char *parameter_string,
                                         const GOptionEntry *entries, const char *summary, const char *description);
/* Parses options for a command; on failure prints the error and usage, returns FALSE. */
gboolean fxwb_parse_options (GOptionContext *context, int *argc, char ***argv);
/* Prints "PRGNAME: message", a blank line and the command's help to stderr; returns FXWB_EXIT_USAGE. */
int fxwb_usage_error (GOptionContext *context, const char *message);
/* Maps an engine status to an exit code. */
int fxwb_exit_for_status (fx_status status);
/* Opens the workspace at path (create: make it when missing) into *store; on failure prints the diagnostic and
   returns the exit code for it, else FXWB_EXIT_OK. */
int fxwb_open_workspace (const char *path, gboolean create, fx_store **store);
/* What a command that reads one workspace holds: the store, an arena for what it lists (freed in one call) and
   the diagnostic of the first failure. */
typedef struct
{
  fx_store *store;
  fx_arena *arena;
  fx_diag diag;
} fxwb_session;
/* Opens the workspace at path read-only into s, with a new arena and a clear diag. Returns FXWB_EXIT_OK, else the
   exit code, the error printed and nothing to close. */
int fxwb_session_open (fxwb_session *s, const char *path);
/* The start of "fxwb CMD FILE.fxwb": parses the options, wants FILE alone (else a usage error) and opens it as
   fxwb_session_open does. */
int fxwb_session_open_argument (GOptionContext *context, int *argc, char ***argv, fxwb_session *s);
/* The end of such a command: prints s->diag when st is a failure, frees the arena, closes the store; returns the
   exit code for st. */
int fxwb_session_close (fxwb_session *s, fx_status st);
/* Such a command's exit statuses, for its option context's description; done says what 0 means ("listed"). */
#define FXWB_WORKSPACE_EXIT_STATUS(done)                          \
  "Exit status:\n"                                                \
  "  0  " done "\n"                                               \
  "  1  FILE is not a workspace this build can read\n"           \
  "  2  wrong command line\n"                                     \
  "  3  FILE cannot be read\n"
/* TRUE when stdout/stderr is a terminal (for progress bars). */
gboolean fxwb_stderr_is_tty (void);
/* A one-line progress bar on stderr: "label [#####.....] 42%"; done=total clears it. */
void fxwb_progress (const char *label, double fraction);
void fxwb_progress_done (void);
/* Removes a temporary folder and everything below it (no shell, links not followed). */
void fxwb_remove_tree (const char *dir);
/* `fxwb bench inductor-cpu` (fxwb-bench-inductor.c). */
int fxwb_bench_inductor_cpu (int argc, char **argv);
int fxwb_bench_inductor_cuda (int argc, char **argv);
/* The rows of a "ranks diverge:" table (fxwb ls, fxwb diff --ranks), one per divergence:
   "  [1/1]      compiles     ranks 1, 3     made on ranks 1, 3, not on ranks 0, 2". */
void fxwb_print_rank_divergences (const fx_rank_divergence *ds, size_t n);
/* fx_store_set_lock_wait's report: "fxwb: waiting for the workspace lock held by another fxwb (PATH, 3 s)..." */
void fxwb_report_lock_wait (const char *path, double waited_s, void *user_data);

/* From here on stdout and stderr escape terminal controls (C0 but newline and tab, DEL, C1, invalid UTF-8) as
   "\x1b" / "\u009b": text from input files cannot drive the terminal. fxwb_main calls it; unguard flushes and
   restores. */
void fxwb_guard_stdout (void);
void fxwb_unguard_stdout (void);
/* The stream under the filter (what fxwb_guard_stdout replaced), for output in a format of its own. */
FILE *fxwb_real_stdout (void);
/* The same escaping into a new string (g_free). */
char *fxwb_escape_controls (const char *text);

/* --json output, built with json-c so that every string is valid JSON (UTF-8; invalid bytes become U+FFFD). NULL
   strings and non-finite numbers are JSON null. */
json_object *fxwb_json_str (const char *s);
json_object *fxwb_json_num (double v);
void fxwb_json_add_str (json_object *obj, const char *key, const char *s);
void fxwb_json_add_int (json_object *obj, const char *key, int64_t v);
void fxwb_json_add_num (json_object *obj, const char *key, double v);
void fxwb_json_add_bool (json_object *obj, const char *key, gboolean v);
/* Prints value on one line to the real stdout (unfiltered) and releases it. */
void fxwb_json_print (json_object *value);
