/* fx/report.h: trace reports of a workspace: static HTML pages (an index like tlparse's and one page per compile),
   one versioned JSON document, and the same pieces one at a time for a server. Every string from a trace is
   HTML-escaped (pages) or JSON-escaped with <, >, & as \u escapes (documents and the search index). */
#pragma once

#include <stdio.h>

#include "fx/common.h"
#include "fx/importers.h"
#include "fx/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the JSON document changes shape; engine/report/report-schema.json describes it. */
#define FX_REPORT_SCHEMA_VERSION 1

/* A located problem of an input (a skipped line, a record that did not parse), shown on the index. */
typedef struct fx_report_warning
{
  const char *input;    /* the input's path */
  int64_t line;         /* 1-based; 0 when unknown */
  const char *kind;     /* fx_import_warning_name () */
  const char *text;
  int64_t count;        /* how many of this kind the input had (the first few are listed) */
} fx_report_warning;

/* Draws a graph: dot text in, SVG text out (malloc'd; NULL when it cannot). The engine has no Graphviz: the caller
   (fxwb, the app) supplies it. */
typedef char *(*fx_report_svg_fn) (const char *dot, size_t len, void *user_data);
/* Where a page finds the drawing of a graph: a URL (malloc'd) or NULL for none. fx_report_write_dir sets its own
   (files named by the dot text's md5, so equal graphs are drawn once); a server answers it on request. */
typedef char *(*fx_report_graph_href_fn) (int64_t graph_id, const fx_graph *graph, void *user_data);

typedef struct fx_report_opts
{
  const char *title;                  /* NULL: "FX Workbench report" */
  fx_report_svg_fn svg;               /* fx_report_write_dir: NULL draws no graph */
  void *svg_data;
  fx_report_graph_href_fn graph_href; /* pages built one at a time, e.g. by a server */
  void *graph_href_data;
  /* Appended to every link between pages and assets (a server's "?token=..."); NULL: nothing. */
  const char *link_query;
  /* A page of a server following a trace: it listens to /api/events and reloads when compiles arrive. */
  bool live;
  /* Graphs with more nodes are not drawn (dot time grows fast); 0: 400. */
  size_t max_drawn_nodes;
  /* Artifacts longer than this go to a file of their own, linked from the page; 0: 64 KiB. */
  size_t inline_limit;
  const fx_report_warning *warnings;
  size_t n_warnings;
  /* What made the report, shown under the index's title beside its inputs: "fxwb 0.1.0" and the command line
     ("fxwb report run.fxwb -o out"); NULL: not shown. */
  const char *made_by, *command;
} fx_report_opts;

typedef struct fx_report_stats
{
  int64_t pages, compiles, graphs_drawn, svg_files, artifact_files;
  int64_t bytes_written;
} fx_report_stats;

/* The warnings of an import as report warnings (at most FX_IMPORT_EXAMPLES per kind, with counts), allocated from
   arena; appended to the array at out (grown in arena), n counting them. */
void fx_report_warnings_from_stats (const char *input, const fx_import_stats *stats, fx_arena *arena,
                                    fx_report_warning **out, size_t *n);

/* Writes the report folder: index.html, compile-ROW.html per compile, report.css, report.js, search-index.js,
   graph-MD5.svg drawings and artifact-ROW-N.txt for long artifacts. Memory stays bounded by one compile's data. */
fx_status fx_report_write_dir (fx_store *store, const char *dir, const fx_report_opts *opts, fx_report_stats *stats,
                               fx_diag *diag);
/* The whole workspace as one JSON document (schema FX_REPORT_SCHEMA_VERSION), written compile by compile. */
fx_status fx_report_write_json (fx_store *store, FILE *out, const fx_report_opts *opts, fx_diag *diag);

/* Pieces for a server (each appended to out). */
fx_status fx_report_index_html (fx_store *store, const fx_report_opts *opts, fx_buf *out, fx_diag *diag);
/* compile_row: a row of fx_store_list_compiles; FX_ERR_NOT_FOUND when there is none. */
fx_status fx_report_compile_html (fx_store *store, int64_t compile_row, const fx_report_opts *opts, fx_buf *out,
                                  fx_diag *diag);
fx_status fx_report_search_js (fx_store *store, fx_buf *out, fx_diag *diag);
/* [{"row":..,"compile_id":"0/1",...}, ...]: the index rows. */
fx_status fx_report_compiles_json (fx_store *store, fx_buf *out, fx_diag *diag);
/* One compile with everything it holds, as in the document's "compiles" array. */
fx_status fx_report_compile_json (fx_store *store, int64_t compile_row, fx_buf *out, fx_diag *diag);
/* One graph: id, compile, stage, nodes, its original text, tabular and readable code when it parsed. */
fx_status fx_report_graph_json (fx_store *store, int64_t graph_id, fx_buf *out, fx_diag *diag);
/* The static assets. */
const char *fx_report_css (void);
const char *fx_report_js (void);

/* Escapers (exposed for the server and tests). */
void fx_report_html_escape (fx_buf *out, const char *s);
void fx_report_json_string (fx_buf *out, const char *s);

#ifdef __cplusplus
}
#endif
