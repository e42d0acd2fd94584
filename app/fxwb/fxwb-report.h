/* fxwb-report.h: what `fxwb report` and `fxwb serve` share: Graphviz drawing, opening a workspace or importing
   traces into a temporary one, and a random access token. */
#pragma once

#include <glib.h>

#include "fx/report.h"

/* fx_report_svg_fn over libgvc; NULL when this build has no Graphviz. */
char *fxwb_report_svg (const char *dot, size_t len, void *user_data);

typedef struct
{
  fx_store *store;
  char *tmp_dir;          /* the temporary workspace's folder, removed by fxwb_report_source_clear */
  char *workspace;        /* the workspace file read */
  fx_arena *arena;        /* warnings */
  fx_report_warning *warnings;
  size_t n_warnings;
  gint64 input_bytes;     /* bytes imported (traces) */
  double import_s;
} fxwb_report_source;

/* paths: one workspace file (opened read-only, nothing in it is executed), or TORCH_TRACE logs, folders and the
   other inputs fxwb import takes (imported into a temporary workspace, warnings kept for the report). writable:
   open a workspace for writing (serve --follow adds to it). */
fx_status fxwb_report_source_open (fxwb_report_source *src, char **paths, int n_paths, gboolean writable,
                                   gboolean quiet, fx_diag *diag);
void fxwb_report_source_clear (fxwb_report_source *src);
