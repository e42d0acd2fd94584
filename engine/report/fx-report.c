/* fx-report.c: trace reports of a workspace: the index and per-compile HTML pages, the search index, and the JSON
   document and API pieces. Pages are built one compile at a time from the store, so a 200 MB trace gives pages of
   normal size and memory bounded by one compile's data. */
#include "fx/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../formats/fx-md5.h"
#include "fx-report-impl.h"
#include "fx/pyparse.h"

#define DEFAULT_MAX_DRAWN 400
#define DEFAULT_INLINE_LIMIT (64 * 1024)

/* ------------------------------------------------------------------ escaping */

void
fx_report_html_escape (fx_buf *out, const char *s)
{
  if (!s)
    return;
  /* Runs of plain text are copied whole (strcspn is vectorized); pages are mostly long code blocks. */
  for (;;)
    {
      size_t run = strcspn (s, "<>&\"'");
      fx_buf_append (out, s, run);
      s += run;
      switch (*s)
        {
        case '<': fx_buf_puts (out, "&lt;"); break;
        case '>': fx_buf_puts (out, "&gt;"); break;
        case '&': fx_buf_puts (out, "&amp;"); break;
        case '"': fx_buf_puts (out, "&quot;"); break;
        case '\'': fx_buf_puts (out, "&#39;"); break;
        default: return;
        }
      s++;
    }
}

/* Length of the valid UTF-8 sequence at p (1..4), 0 when p does not start one. */
static int
utf8_len (const unsigned char *p)
{
  if (p[0] < 0x80)
    return 1;
  int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
  if (n == 0)
    return 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  return n;
}

/* A JSON string; <, >, & and U+2028/9 as \u escapes so the text is safe inside a <script> file too; invalid
   UTF-8 bytes become U+FFFD (a trace is not guaranteed to be UTF-8). */
void
fx_report_json_string (fx_buf *out, const char *s)
{
  if (!s)
    {
      fx_buf_puts (out, "null");
      return;
    }
  fx_buf_putc (out, '"');
  const unsigned char *p = (const unsigned char *) s;
  while (*p)
    {
      unsigned char c = *p;
      if (c >= 0x80)
        {
          int n = utf8_len (p);
          if (n == 0)
            {
              fx_buf_puts (out, "\\ufffd");
              p++;
            }
          else if (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
            {
              fx_buf_puts (out, p[2] == 0xa8 ? "\\u2028" : "\\u2029");
              p += 3;
            }
          else
            {
              fx_buf_append (out, (const char *) p, (size_t) n);
              p += n;
            }
          continue;
        }
      switch (c)
        {
        case '"': fx_buf_puts (out, "\\\""); break;
        case '\\': fx_buf_puts (out, "\\\\"); break;
        case '\n': fx_buf_puts (out, "\\n"); break;
        case '\r': fx_buf_puts (out, "\\r"); break;
        case '\t': fx_buf_puts (out, "\\t"); break;
        case '<': fx_buf_puts (out, "\\u003c"); break;
        case '>': fx_buf_puts (out, "\\u003e"); break;
        case '&': fx_buf_puts (out, "\\u0026"); break;
        default:
          if (c < 0x20)
            fx_buf_printf (out, "\\u%04x", c);
          else
            fx_buf_putc (out, (char) c);
          break;
        }
      p++;
    }
  fx_buf_putc (out, '"');
}

static void
json_key (fx_buf *out, bool *first, const char *key)
{
  fx_buf_puts (out, *first ? "" : ", ");
  *first = false;
  fx_buf_printf (out, "\"%s\": ", key);
}

static void
json_kstr (fx_buf *out, bool *first, const char *key, const char *value)
{
  json_key (out, first, key);
  fx_report_json_string (out, value);
}

static void
json_kint (fx_buf *out, bool *first, const char *key, int64_t value)
{
  json_key (out, first, key);
  fx_buf_printf (out, "%lld", (long long) value);
}

/* Unknown numbers (negative or NaN) as null. */
static void
json_knum (fx_buf *out, bool *first, const char *key, double value)
{
  json_key (out, first, key);
  if (isnan (value) || isinf (value) || value < 0)
    fx_buf_puts (out, "null");
  else
    fx_buf_printf (out, "%.9g", value);
}

/* ------------------------------------------------------------------ context */

/* A guard failure of a later compile naming an earlier one ("0/0: tensor 'a' size mismatch ..."). */
typedef struct
{
  int64_t input_id;
  const char *failed;      /* the compile id that failed, "0/0" */
  const char *by;          /* the compile that recompiled, "0/1" */
  int64_t by_row;
  const char *reason;
} later_failure;

typedef struct
{
  fx_store *store;
  const fx_report_opts *opts;
  fx_arena *arena;         /* the compile list and the failure index */
  fx_store_compile *cs;
  size_t n;
  fx_store_input *inputs;
  size_t n_inputs;
  later_failure *failures;
  size_t n_failures;
  const char *q;           /* link query, "" when none */
  /* fx_report_write_dir: where files go */
  const char *dir;
  fx_report_stats *stats;
  fx_diag *diag;
} rctx;

static fx_status
ctx_init (rctx *ctx, fx_store *store, const fx_report_opts *opts, fx_diag *diag)
{
  memset (ctx, 0, sizeof *ctx);
  ctx->store = store;
  ctx->opts = opts;
  ctx->diag = diag;
  ctx->q = opts && opts->link_query ? opts->link_query : "";
  ctx->arena = fx_arena_new ();
  fx_status st = fx_store_list_compiles (store, ctx->arena, &ctx->cs, &ctx->n, diag);
  if (st == FX_OK)
    st = fx_store_list_inputs (store, ctx->arena, &ctx->inputs, &ctx->n_inputs, diag);
  if (st != FX_OK)
    return st;
  /* The failure index: one query per compile that recompiled (status "recompiled" or n_failures). */
  size_t cap = 0;
  for (size_t i = 0; i < ctx->n; i++)
    {
      if (ctx->cs[i].n_failures == 0)
        continue;
      fx_store_guard_failure *f = NULL;
      size_t nf = 0;
      if ((st = fx_store_list_guard_failures (store, ctx->cs[i].id, ctx->arena, &f, &nf, diag)) != FX_OK)
        return st;
      for (size_t k = 0; k < nf; k++)
        {
          if (!f[k].failed_compile)
            continue;
          if (ctx->n_failures == cap)
            ctx->failures = fx_arena_grow (ctx->arena, ctx->failures, &cap, sizeof *ctx->failures, 32);
          ctx->failures[ctx->n_failures++] = (later_failure) { ctx->cs[i].input_id, f[k].failed_compile,
                                                                 fx_arena_strdup (ctx->arena, ctx->cs[i].compile_id),
                                                                 ctx->cs[i].id, f[k].reason };
        }
    }
  return FX_OK;
}

static void
ctx_clear (rctx *ctx)
{
  fx_arena_free (ctx->arena);
  ctx->arena = NULL;
}

static const fx_store_input *
ctx_input (const rctx *ctx, int64_t id)
{
  for (size_t i = 0; i < ctx->n_inputs; i++)
    if (ctx->inputs[i].id == id)
      return &ctx->inputs[i];
  return NULL;
}

static const char *
title_of (const rctx *ctx)
{
  return ctx->opts && ctx->opts->title ? ctx->opts->title : "FX Workbench report";
}

/* ------------------------------------------------------------------ HTML pieces */

static void
page_head (rctx *ctx, fx_buf *out, const char *title)
{
  fx_buf_puts (out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; img-src 'self' data:; "
                    "style-src 'self'; script-src 'self'; connect-src 'self'\">\n<title>");
  fx_report_html_escape (out, title);
  fx_buf_puts (out, "</title>\n<link rel=\"stylesheet\" href=\"report.css");
  fx_report_html_escape (out, ctx->q);
  fx_buf_puts (out, "\">\n<script src=\"search-index.js");
  fx_report_html_escape (out, ctx->q);
  fx_buf_puts (out, "\"></script>\n<script src=\"report.js");
  fx_report_html_escape (out, ctx->q);
  fx_buf_puts (out, "\" data-query=\"");
  fx_report_html_escape (out, ctx->q);
  fx_buf_puts (out, "\"></script>\n</head>\n<body");
  if (ctx->opts && ctx->opts->live)
    {
      fx_buf_puts (out, " data-live=\"api/events");
      fx_report_html_escape (out, ctx->q);
      fx_buf_puts (out, "\"");
    }
  fx_buf_puts (out, ">\n");
}

static void
nav_bar (rctx *ctx, fx_buf *out, const fx_store_compile *prev, const fx_store_compile *next)
{
  fx_buf_puts (out, "<nav><a href=\"index.html");
  fx_report_html_escape (out, ctx->q);
  fx_buf_puts (out, "\">Index</a>");
  if (prev)
    {
      fx_buf_printf (out, " <a href=\"compile-%lld.html", (long long) prev->id);
      fx_report_html_escape (out, ctx->q);
      fx_buf_printf (out, "\">&larr; [%s]</a>", prev->compile_id);
    }
  if (next)
    {
      fx_buf_printf (out, " <a href=\"compile-%lld.html", (long long) next->id);
      fx_report_html_escape (out, ctx->q);
      fx_buf_printf (out, "\">[%s] &rarr;</a>", next->compile_id);
    }
  fx_buf_puts (out, "<span class=\"search\"><input id=\"fxwb-search\" type=\"search\" "
                    "placeholder=\"Search compiles, kernels, reasons, files\" aria-label=\"Search\">"
                    "<div id=\"fxwb-results\"></div></span></nav>\n");
}

static void
put_pre (fx_buf *out, const char *text)
{
  fx_buf_puts (out, "<pre>");
  fx_report_html_escape (out, text);
  fx_buf_puts (out, "</pre>\n");
}

static void
put_td (fx_buf *out, const char *text)
{
  fx_buf_puts (out, "<td>");
  fx_report_html_escape (out, text ? text : "");
  fx_buf_puts (out, "</td>");
}

static void
put_td_code (fx_buf *out, const char *text)
{
  fx_buf_puts (out, "<td><code>");
  fx_report_html_escape (out, text ? text : "");
  fx_buf_puts (out, "</code></td>");
}

/* A duration; 0 or less is "not measured" (no compile takes no time). */
static void
put_secs (fx_buf *out, double s)
{
  if (isnan (s) || s <= 0)
    fx_buf_puts (out, "<td class=\"num muted\">-</td>");
  else
    fx_buf_printf (out, "<td class=\"num\">%.3f s</td>", s);
}

/* A status as a CSS class: "graph break" -> "graph-break". */
static void
put_status (fx_buf *out, const char *status)
{
  fx_buf_puts (out, "<span class=\"");
  for (const char *p = status ? status : ""; *p; p++)
    fx_buf_putc (out, (*p >= 'a' && *p <= 'z') ? *p : '-');
  fx_buf_puts (out, "\">");
  fx_report_html_escape (out, status ? status : "");
  fx_buf_puts (out, "</span>");
}

static void
put_compile_link (rctx *ctx, fx_buf *out, int64_t row, const char *cid)
{
  fx_buf_printf (out, "<a class=\"cid\" href=\"compile-%lld.html", (long long) row);
  fx_report_html_escape (out, ctx->q);
  fx_buf_puts (out, "\">[");
  fx_report_html_escape (out, cid);
  fx_buf_puts (out, "]</a>");
}

/* The compile row of compile id text cid within an input; 0 when none. */
static int64_t
find_row (const rctx *ctx, int64_t input_id, const char *cid)
{
  for (size_t i = 0; i < ctx->n; i++)
    if (ctx->cs[i].input_id == input_id && strcmp (ctx->cs[i].compile_id, cid) == 0)
      return ctx->cs[i].id;
  return 0;
}

static void
put_location (fx_buf *out, const fx_store_compile *c)
{
  if (!c->file)
    {
      fx_buf_puts (out, "-");
      return;
    }
  fx_report_html_escape (out, c->file);
  if (c->line >= 0)
    fx_buf_printf (out, ":%d", c->line);
}

/* ------------------------------------------------------------------ the index */

static fx_status
index_html (rctx *ctx, fx_buf *out)
{
  fx_diag *diag = ctx->diag;
  page_head (ctx, out, title_of (ctx));
  nav_bar (ctx, out, NULL, NULL);
  fx_buf_puts (out, "<h1>");
  fx_report_html_escape (out, title_of (ctx));
  fx_buf_puts (out, "</h1>\n");

  int n_breaks = 0, n_recompiles = 0, n_failed = 0;
  double total_s = 0;
  for (size_t i = 0; i < ctx->n; i++)
    {
      n_breaks += ctx->cs[i].n_breaks;
      n_recompiles += ctx->cs[i].n_failures > 0;
      n_failed += ctx->cs[i].fail_type != NULL;
      if (ctx->cs[i].entire_frame_compile_s > 0)
        total_s += ctx->cs[i].entire_frame_compile_s;
    }
  fx_buf_printf (out, "<p>%zu compiles, %d recompiles, %d graph breaks, %d failures; %.3f s of compile time "
                      "(entire_frame_compile_time_s).</p>\n", ctx->n, n_recompiles, n_breaks, n_failed, total_s);
  if (ctx->opts && (ctx->opts->made_by || ctx->opts->command))
    {
      /* What the report was made from: the program, its command line, and (below) the inputs. */
      fx_buf_puts (out, "<p class=\"made-from\">Made by ");
      fx_report_html_escape (out, ctx->opts->made_by ? ctx->opts->made_by : "?");
      if (ctx->opts->command)
        {
          fx_buf_puts (out, " with <code>");
          fx_report_html_escape (out, ctx->opts->command);
          fx_buf_puts (out, "</code>");
        }
      fx_buf_printf (out, " from %zu input%s (<a href=\"#inputs\">below</a>).</p>\n", ctx->n_inputs,
                     ctx->n_inputs == 1 ? "" : "s");
    }

  fx_buf_puts (out, "<h2 id=\"inputs\">Inputs</h2>\n<table><tr><th>#</th><th>path</th><th>kind</th><th>size</th>"
                    "</tr>\n");
  for (size_t i = 0; i < ctx->n_inputs; i++)
    {
      fx_buf_printf (out, "<tr><td class=\"num\">%lld</td>", (long long) ctx->inputs[i].id);
      put_td (out, ctx->inputs[i].path);
      put_td (out, ctx->inputs[i].kind);
      if (ctx->inputs[i].size > 0)
        fx_buf_printf (out, "<td class=\"num\">%.1f MB</td></tr>\n", (double) ctx->inputs[i].size / 1e6);
      else
        fx_buf_puts (out, "<td class=\"num muted\">-</td></tr>\n");
    }
  fx_buf_puts (out, "</table>\n");
  /* A multi-rank workspace: its ranks and where they diverge (fx-report-ranks.c). */
  if (fx_report_ranks_html (ctx->store, ctx->arena, ctx->q, out, diag) != FX_OK)
    return diag->code;
  if (fx_report_export_html (ctx->store, ctx->arena, out, diag) != FX_OK)
    return diag->code;

  if (ctx->opts && ctx->opts->n_warnings)
    {
      fx_buf_puts (out, "<h2 id=\"warnings\">Warnings</h2>\n<p>Lines and records that were skipped or kept with "
                        "a problem (the first few of each kind, with their line numbers).</p>\n<table><tr><th>where"
                        "</th><th>kind</th><th>count</th><th>text</th></tr>\n");
      for (size_t i = 0; i < ctx->opts->n_warnings; i++)
        {
          const fx_report_warning *w = &ctx->opts->warnings[i];
          fx_buf_puts (out, "<tr class=\"warning\"><td><code>");
          fx_report_html_escape (out, w->input ? w->input : "?");
          if (w->line > 0)
            fx_buf_printf (out, ":%lld", (long long) w->line);
          fx_buf_puts (out, "</code></td>");
          put_td (out, w->kind);
          fx_buf_printf (out, "<td class=\"num\">%lld</td>", (long long) w->count);
          put_td_code (out, w->text);
          fx_buf_puts (out, "</tr>\n");
        }
      fx_buf_puts (out, "</table>\n");
    }

  /* Frames: the user functions Dynamo compiled, each with its compiles ([frame/0], [frame/1], ... in order). */
  if (ctx->n)
    {
      fx_buf_puts (out, "<h2 id=\"frames\">Frames</h2>\n<table><tr><th>frame</th><th>function</th><th>file:line</th>"
                        "<th>compiles</th><th>compile time</th></tr>\n");
      bool *done = fx_arena_alloc (ctx->arena, ctx->n * sizeof *done);
      for (size_t i = 0; i < ctx->n; i++)
        {
          if (done[i])
            continue;
          const fx_store_compile *c = &ctx->cs[i];
          double total = 0;
          fx_buf_puts (out, "<tr><td class=\"cid\">");
          if (c->cid.compiled_autograd_id >= 0)
            fx_buf_printf (out, "!%d/", c->cid.compiled_autograd_id);
          if (c->cid.frame_id >= 0)
            fx_buf_printf (out, "%d", c->cid.frame_id);
          else
            fx_buf_puts (out, "-");
          fx_buf_puts (out, "</td>");
          put_td (out, c->function);
          fx_buf_puts (out, "<td><code>");
          put_location (out, c);
          fx_buf_puts (out, "</code></td><td>");
          for (size_t k = i; k < ctx->n; k++)
            {
              const fx_store_compile *o = &ctx->cs[k];
              if (done[k] || o->input_id != c->input_id || o->cid.frame_id != c->cid.frame_id
                  || o->cid.compiled_autograd_id != c->cid.compiled_autograd_id
                  /* compiles without a frame id (debug folders, exports) each stand alone */
                  || (c->cid.frame_id < 0 && k != i))
                continue;
              done[k] = true;
              if (o->entire_frame_compile_s > 0)
                total += o->entire_frame_compile_s;
              put_compile_link (ctx, out, o->id, o->compile_id);
              fx_buf_puts (out, " ");
            }
          fx_buf_puts (out, "</td>");
          put_secs (out, total);
          fx_buf_puts (out, "</tr>\n");
        }
      fx_buf_puts (out, "</table>\n");
    }

  /* The compiles, frame by frame as tlparse lists them. */
  fx_buf_puts (out, "<h2 id=\"compiles-title\">Compiles</h2>\n<table id=\"compiles\"><thead><tr><th>compile</th>"
                    "<th>function</th><th>file:line</th><th>status</th><th>compile time</th><th>graphs</th>"
                    "<th>kernels</th><th>guards</th><th>breaks</th><th>recompile reason</th></tr></thead><tbody>\n");
  fx_arena *scratch = fx_arena_new ();
  fx_status st = FX_OK;
  for (size_t i = 0; i < ctx->n && st == FX_OK; i++)
    {
      const fx_store_compile *c = &ctx->cs[i];
      fx_buf_printf (out, "<tr data-row=\"%lld\"><td>", (long long) c->id);
      put_compile_link (ctx, out, c->id, c->compile_id);
      fx_buf_puts (out, "</td>");
      put_td (out, c->function);
      fx_buf_puts (out, "<td><code>");
      put_location (out, c);
      fx_buf_puts (out, "</code></td><td>");
      put_status (out, c->status);
      fx_buf_puts (out, "</td>");
      put_secs (out, c->entire_frame_compile_s);
      fx_buf_printf (out, "<td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%d</td>"
                          "<td class=\"num\">%d</td><td>", c->n_graphs, c->n_kernels, c->n_guards, c->n_breaks);
      if (c->n_failures)
        {
          fx_store_guard_failure *f = NULL;
          size_t nf = 0;
          st = fx_store_list_guard_failures (ctx->store, c->id, scratch, &f, &nf, diag);
          for (size_t k = 0; st == FX_OK && k < nf; k++)
            {
              fx_buf_puts (out, k ? "<br><code>" : "<code>");
              if (f[k].failed_compile)
                {
                  fx_report_html_escape (out, f[k].failed_compile);
                  fx_buf_puts (out, ": ");
                }
              fx_report_html_escape (out, f[k].reason);
              fx_buf_puts (out, "</code>");
            }
        }
      if (c->fail_type)
        {
          fx_buf_puts (out, "<span class=\"failed\">");
          fx_report_html_escape (out, c->fail_type);
          fx_buf_puts (out, "</span>");
        }
      fx_buf_puts (out, "</td></tr>\n");
    }
  fx_buf_puts (out, "</tbody></table>\n");

  /* Recompiles: tlparse's recompile_reasons, in Dynamo's wording. */
  if (st == FX_OK && n_recompiles)
    {
      fx_buf_puts (out, "<h2 id=\"recompiles\">Recompiles</h2>\n");
      for (size_t i = 0; i < ctx->n && st == FX_OK; i++)
        {
          const fx_store_compile *c = &ctx->cs[i];
          if (!c->n_failures)
            continue;
          fx_store_guard_failure *f = NULL;
          size_t nf = 0;
          st = fx_store_list_guard_failures (ctx->store, c->id, scratch, &f, &nf, diag);
          fx_buf_puts (out, "<p>");
          put_compile_link (ctx, out, c->id, c->compile_id);
          fx_buf_puts (out, " <code>Recompiling function ");
          fx_report_html_escape (out, c->function ? c->function : "?");
          fx_buf_puts (out, " in ");
          put_location (out, c);
          fx_buf_puts (out, "</code><br>triggered by the following guard failure(s):</p>\n<ul>\n");
          for (size_t k = 0; st == FX_OK && k < nf; k++)
            {
              fx_buf_puts (out, "<li><code>");
              if (f[k].failed_compile)
                {
                  int64_t row = find_row (ctx, c->input_id, f[k].failed_compile);
                  if (row)
                    put_compile_link (ctx, out, row, f[k].failed_compile);
                  else
                    fx_report_html_escape (out, f[k].failed_compile);
                  fx_buf_puts (out, ": ");
                }
              fx_report_html_escape (out, f[k].reason);
              fx_buf_puts (out, "</code></li>\n");
            }
          fx_buf_puts (out, "</ul>\n");
        }
    }

  /* Graph breaks with the user lines they came from. */
  if (st == FX_OK && n_breaks)
    {
      fx_buf_puts (out, "<h2 id=\"breaks\">Graph breaks</h2>\n<table><tr><th>compile</th><th>reason</th>"
                        "<th>user code</th></tr>\n");
      for (size_t i = 0; i < ctx->n && st == FX_OK; i++)
        {
          const fx_store_compile *c = &ctx->cs[i];
          if (!c->n_breaks)
            continue;
          fx_store_graph_break *b = NULL;
          size_t nb = 0;
          st = fx_store_list_graph_breaks (ctx->store, c->id, scratch, &b, &nb, diag);
          for (size_t k = 0; st == FX_OK && k < nb; k++)
            {
              fx_buf_puts (out, "<tr><td>");
              put_compile_link (ctx, out, c->id, c->compile_id);
              fx_buf_puts (out, "</td>");
              put_td (out, b[k].reason);
              fx_buf_puts (out, "<td><pre>");
              fx_report_html_escape (out, b[k].user_stack ? b[k].user_stack : "");
              fx_buf_puts (out, "</pre></td></tr>\n");
            }
        }
      fx_buf_puts (out, "</table>\n");
    }

  if (st == FX_OK && n_failed)
    {
      fx_buf_puts (out, "<h2 id=\"failures\">Failures</h2>\n<table><tr><th>compile</th><th>type</th><th>reason</th>"
                        "</tr>\n");
      for (size_t i = 0; i < ctx->n; i++)
        {
          const fx_store_compile *c = &ctx->cs[i];
          if (!c->fail_type)
            continue;
          fx_buf_puts (out, "<tr><td>");
          put_compile_link (ctx, out, c->id, c->compile_id);
          fx_buf_puts (out, "</td>");
          put_td (out, c->fail_type);
          fx_buf_puts (out, "<td><pre>");
          fx_report_html_escape (out, c->fail_reason ? c->fail_reason : "");
          fx_buf_puts (out, "</pre></td></tr>\n");
        }
      fx_buf_puts (out, "</table>\n");
    }
  fx_arena_free (scratch);
  fx_buf_puts (out, "<p class=\"muted\">Written by fxwb " FX_VERSION_STRING ".</p>\n</body>\n</html>\n");
  return st;
}

/* ------------------------------------------------------------------ a compile page */

/* True when the comma-separated list holds name. */
static bool
list_has (const char *list, const char *name)
{
  if (!list || !name)
    return false;
  size_t nl = strlen (name);
  for (const char *p = list; *p;)
    {
      while (*p == ' ' || *p == ',' || *p == '[' || *p == '\'')
        p++;
      const char *e = p;
      while (*e && *e != ',' && *e != ']' && *e != '\'')
        e++;
      const char *t = e;
      while (t > p && t[-1] == ' ')
        t--;
      if ((size_t) (t - p) == nl && memcmp (p, name, nl) == 0)
        return true;
      p = *e ? e + 1 : e;
    }
  return false;
}

/* Graph stages worth drawing (drawing every pass's graph would cost dot time for near-identical pictures). */
static bool
stage_drawn (const char *stage)
{
  return strcmp (stage, "dynamo") == 0 || strncmp (stage, "aot_", 4) == 0 || strcmp (stage, "post_grad") == 0
         || strcmp (stage, "export") == 0 || strcmp (stage, "inductor_transformed") == 0;
}

/* A long text goes to a file of its own: NAME under the folder (static report) or served by name (server). */
static fx_status
long_text (rctx *ctx, fx_buf *out, const char *fname, const char *label, const char *text)
{
  size_t limit = ctx->opts && ctx->opts->inline_limit ? ctx->opts->inline_limit : DEFAULT_INLINE_LIMIT;
  size_t len = text ? strlen (text) : 0;
  if (len <= limit)
    {
      put_pre (out, text ? text : "");
      return FX_OK;
    }
  if (ctx->dir)
    {
      char *path = fx_arena_printf (ctx->arena, "%s/%s", ctx->dir, fname);
      fx_status st = fx_file_write (path, text, len, ctx->diag);
      if (st != FX_OK)
        return st;
      if (ctx->stats)
        {
          ctx->stats->artifact_files++;
          ctx->stats->bytes_written += (int64_t) len;
        }
    }
  fx_buf_printf (out, "<p><a href=\"%s", fname);
  fx_report_html_escape (out, ctx->q);
  fx_buf_puts (out, "\">");
  fx_report_html_escape (out, label);
  fx_buf_printf (out, "</a> (%zu bytes, a file of its own)</p>\n", len);
  return FX_OK;
}

/* The provenance table: each node of the graph with its user line, module and the kernels computing it. */
static void
provenance_table (fx_buf *out, const fx_graph *g, const fx_store_kernel *k, size_t nk, fx_arena *arena)
{
  fx_buf_puts (out, "<table><tr><th>node</th><th>op</th><th>target</th><th>value</th><th>user line</th>"
                    "<th>module</th><th>kernels</th></tr>\n");
  fx_buf tmp;
  fx_buf_init (&tmp);
  fx_graph_foreach_node (g, n)
    {
      fx_buf_puts (out, "<tr>");
      put_td_code (out, n->name);
      put_td (out, fx_opcode_name (n->op));
      fx_buf_reset (&tmp);
      fx_target_format (&n->target, &tmp);
      put_td_code (out, tmp.data);
      fx_buf_reset (&tmp);
      fx_val_annotation (&n->meta.val, false, true, &tmp);
      put_td_code (out, tmp.data);
      fx_stack_frame fr;
      fx_buf_puts (out, "<td>");
      if (n->meta.stack_trace && fx_stack_trace_innermost (n->meta.stack_trace, arena, &fr))
        {
          fx_buf_puts (out, "<code>");
          fx_report_html_escape (out, fr.file);
          fx_buf_printf (out, ":%d</code> in ", fr.line);
          fx_report_html_escape (out, fr.func);
          if (fr.code)
            {
              fx_buf_puts (out, "<br><code>");
              fx_report_html_escape (out, fr.code);
              fx_buf_puts (out, "</code>");
            }
        }
      fx_buf_puts (out, "</td><td>");
      if (n->meta.n_nn_module_stack)
        {
          const fx_module_entry *m = &n->meta.nn_module_stack[n->meta.n_nn_module_stack - 1];
          fx_buf_puts (out, "<code>");
          fx_report_html_escape (out, m->path ? m->path : m->key);
          fx_buf_puts (out, "</code>");
          if (m->type)
            {
              fx_buf_puts (out, " <span class=\"muted\">");
              fx_report_html_escape (out, m->type);
              fx_buf_puts (out, "</span>");
            }
        }
      fx_buf_puts (out, "</td><td>");
      bool any = false;
      for (size_t i = 0; i < nk; i++)
        if (list_has (k[i].pre_nodes, n->name) || list_has (k[i].nodes, n->name))
          {
            fx_buf_printf (out, "%s<a href=\"#kernel-%zu\"><code>", any ? "<br>" : "", i);
            fx_report_html_escape (out, k[i].name);
            fx_buf_puts (out, "</code></a>");
            any = true;
          }
      fx_buf_puts (out, "</td></tr>\n");
    }
  fx_buf_free (&tmp);
  fx_buf_puts (out, "</table>\n");
}

/* Marks a guard as the one a later compile's failure names: a reason naming the guard's source ("tensor 'a' ...",
   "L['a']") or quoting its code. */
static bool
guard_failed (const fx_store_guard *g, const char *reason)
{
  if (!reason)
    return false;
  if (g->code && *g->code && strstr (reason, g->code))
    return true;
  if (!g->source || strcmp (g->kind ? g->kind : "", "TENSOR_MATCH") != 0)
    return false;
  /* L['a'] -> 'a' */
  const char *q = strchr (g->source, '\'');
  const char *qe = q ? strchr (q + 1, '\'') : NULL;
  if (!q || !qe)
    return false;
  char name[128];
  snprintf (name, sizeof name, "%.*s", (int) (qe - q + 1), q);
  return strstr (reason, name) != NULL && strchr (qe + 1, '[') == NULL && strchr (qe + 1, '.') == NULL;
}

static fx_status
compile_html (rctx *ctx, size_t ci, fx_buf *out)
{
  const fx_store_compile *c = &ctx->cs[ci];
  fx_diag *diag = ctx->diag;
  fx_arena *arena = fx_arena_new ();
  fx_status st = FX_OK;
  const fx_store_compile *prev = ci > 0 ? &ctx->cs[ci - 1] : NULL;
  const fx_store_compile *next = ci + 1 < ctx->n ? &ctx->cs[ci + 1] : NULL;
  char *title = fx_arena_printf (arena, "[%s] %s", c->compile_id, c->function ? c->function : "");
  page_head (ctx, out, title);
  nav_bar (ctx, out, prev, next);
  fx_buf_printf (out, "<h1><span class=\"cid\">[%s]</span> ", c->compile_id);
  fx_report_html_escape (out, c->function ? c->function : "");
  fx_buf_puts (out, " ");
  put_status (out, c->status);
  fx_buf_puts (out, "</h1>\n<table>\n<tr><th>file:line</th><td><code>");
  put_location (out, c);
  fx_buf_puts (out, "</code></td></tr>\n");
  const fx_store_input *in = ctx_input (ctx, c->input_id);
  fx_buf_puts (out, "<tr><th>input</th>");
  put_td (out, in ? in->path : "?");
  fx_buf_puts (out, "</tr>\n<tr><th>compile time</th>");
  put_secs (out, c->entire_frame_compile_s);
  fx_buf_puts (out, "</tr>\n<tr><th>backend compile</th>");
  put_secs (out, c->backend_compile_s);
  fx_buf_puts (out, "</tr>\n<tr><th>inductor compile</th>");
  put_secs (out, c->inductor_compile_s);
  fx_buf_printf (out, "</tr>\n<tr><th>graph ops / guards</th><td>%d / %d</td></tr>\n",
                 c->graph_op_count, c->guard_count);
  if (c->linked)
    {
      fx_buf_puts (out, "<tr><th>linked</th>");
      put_td (out, c->linked);
      fx_buf_puts (out, "</tr>\n");
    }
  fx_buf_puts (out, "</table>\n");

  /* Failure and the stack that triggered the compile. */
  if (c->fail_type)
    {
      fx_buf_puts (out, "<h2 id=\"failure\" class=\"failed\">Failure: ");
      fx_report_html_escape (out, c->fail_type);
      fx_buf_puts (out, "</h2>\n");
      put_pre (out, c->fail_reason ? c->fail_reason : "");
    }
  if (c->user_stack)
    {
      fx_buf_puts (out, "<h2 id=\"stack\">Stack that triggered the compile</h2>\n");
      put_pre (out, c->user_stack);
    }

  /* This compile's recompile reasons, and the failures of later compiles that name it. */
  fx_store_guard_failure *gf = NULL;
  size_t ngf = 0;
  if ((st = fx_store_list_guard_failures (ctx->store, c->id, arena, &gf, &ngf, diag)) != FX_OK)
    goto done;
  if (ngf)
    {
      fx_buf_puts (out, "<h2 id=\"recompile\">Recompile reasons</h2>\n<p><code>Recompiling function ");
      fx_report_html_escape (out, c->function ? c->function : "?");
      fx_buf_puts (out, " in ");
      put_location (out, c);
      fx_buf_puts (out, "</code><br>triggered by the following guard failure(s):</p>\n<ul>\n");
      for (size_t k = 0; k < ngf; k++)
        {
          fx_buf_puts (out, "<li><code>");
          if (gf[k].failed_compile)
            {
              int64_t row = find_row (ctx, c->input_id, gf[k].failed_compile);
              if (row)
                put_compile_link (ctx, out, row, gf[k].failed_compile);
              else
                fx_report_html_escape (out, gf[k].failed_compile);
              fx_buf_puts (out, ": ");
            }
          fx_report_html_escape (out, gf[k].reason);
          fx_buf_puts (out, "</code></li>\n");
        }
      fx_buf_puts (out, "</ul>\n");
    }
  const char *failed_reason = NULL;
  bool any_later = false;
  for (size_t k = 0; k < ctx->n_failures; k++)
    {
      const later_failure *lf = &ctx->failures[k];
      if (lf->input_id != c->input_id || strcmp (lf->failed, c->compile_id) != 0)
        continue;
      if (!any_later)
        fx_buf_puts (out, "<h2 id=\"failed-later\">Guards of this compile that failed later</h2>\n<ul>\n");
      any_later = true;
      if (!failed_reason)
        failed_reason = lf->reason;
      fx_buf_puts (out, "<li>");
      put_compile_link (ctx, out, lf->by_row, lf->by);
      fx_buf_puts (out, " recompiled: <code>");
      fx_report_html_escape (out, lf->reason);
      fx_buf_puts (out, "</code></li>\n");
    }
  if (any_later)
    fx_buf_puts (out, "</ul>\n");

  fx_store_graph_break *gb = NULL;
  size_t ngb = 0;
  if ((st = fx_store_list_graph_breaks (ctx->store, c->id, arena, &gb, &ngb, diag)) != FX_OK)
    goto done;
  if (ngb)
    {
      fx_buf_puts (out, "<h2 id=\"breaks\">Graph breaks</h2>\n");
      for (size_t k = 0; k < ngb; k++)
        {
          fx_buf_puts (out, "<p><b>");
          fx_report_html_escape (out, gb[k].reason);
          fx_buf_puts (out, "</b></p>\n");
          if (gb[k].user_stack)
            put_pre (out, gb[k].user_stack);
          if (gb[k].text)
            {
              fx_buf_puts (out, "<details><summary>As Dynamo logged it</summary>");
              put_pre (out, gb[k].text);
              fx_buf_puts (out, "</details>\n");
            }
        }
    }

  /* Kernels come before graphs in the query order: the provenance table links to them. */
  fx_store_kernel *kern = NULL;
  size_t nk = 0;
  if ((st = fx_store_list_kernels (ctx->store, c->id, arena, &kern, &nk, diag)) != FX_OK)
    goto done;

  fx_store_graph_info *gi = NULL;
  size_t ng = 0;
  if ((st = fx_store_list_graphs (ctx->store, c->id, arena, &gi, &ng, diag)) != FX_OK)
    goto done;
  if (ng)
    fx_buf_puts (out, "<h2 id=\"graphs\">Graphs</h2>\n");
  bool provenance_done = false;
  size_t max_drawn = ctx->opts && ctx->opts->max_drawn_nodes ? ctx->opts->max_drawn_nodes : DEFAULT_MAX_DRAWN;
  for (size_t k = 0; k < ng && st == FX_OK; k++)
    {
      fx_graph *g = NULL;
      char *text = NULL;
      if ((st = fx_store_get_graph (ctx->store, gi[k].id, &g, &text, diag)) != FX_OK)
        break;
      fx_buf_printf (out, "<details id=\"graph-%lld\"%s><summary><b>", (long long) gi[k].id,
                     k == 0 ? " open" : "");
      fx_report_html_escape (out, gi[k].stage);
      fx_buf_printf (out, "</b> (%d nodes%s)</summary>\n", gi[k].n_nodes, g ? "" : ", text only: did not parse");
      if (g && stage_drawn (gi[k].stage) && g->n_nodes <= max_drawn && ctx->opts && ctx->opts->graph_href)
        {
          char *href = ctx->opts->graph_href (gi[k].id, g, ctx->opts->graph_href_data);
          if (href)
            {
              fx_buf_puts (out, "<p><img class=\"graph\" loading=\"lazy\" alt=\"graph drawing\" src=\"");
              fx_report_html_escape (out, href);
              fx_report_html_escape (out, ctx->q);
              fx_buf_puts (out, "\"></p>\n");
              if (ctx->stats)
                ctx->stats->graphs_drawn++;
              free (href);
            }
        }
      else if (g && g->n_nodes > max_drawn)
        fx_buf_printf (out, "<p class=\"muted\">Not drawn: %zu nodes (more than %zu).</p>\n", g->n_nodes, max_drawn);
      if (g)
        {
          fx_buf tmp;
          fx_buf_init (&tmp);
          fx_graph_print_tabular (g, &tmp);
          fx_buf_puts (out, "<details><summary>print_tabular</summary>");
          put_pre (out, tmp.data ? tmp.data : "");
          fx_buf_puts (out, "</details>\n<details open><summary>readable code</summary>");
          fx_buf_reset (&tmp);
          fx_readable_opts ro;
          memset (&ro, 0, sizeof ro);
          fx_parse_readable_opts (g, &ro);
          fx_graph_print_readable (g, &ro, &tmp);
          put_pre (out, tmp.data ? tmp.data : "");
          fx_buf_puts (out, "</details>\n");
          fx_buf_free (&tmp);
          if (!provenance_done && g->n_nodes <= 5000)
            {
              fx_buf_puts (out, "<details open><summary>provenance: node &rarr; user line, module, kernels"
                                "</summary>\n");
              provenance_table (out, g, kern, nk, arena);
              fx_buf_puts (out, "</details>\n");
              provenance_done = true;
            }
        }
      fx_buf_puts (out, "<details><summary>as PyTorch logged it</summary>\n");
      char *fname = fx_arena_printf (arena, "graph-text-%lld.txt", (long long) gi[k].id);
      st = long_text (ctx, out, fname, fname, text);
      fx_buf_puts (out, "</details>\n</details>\n");
      fx_graph_free (g);
      free (text);
    }
  if (st != FX_OK)
    goto done;

  /* Guards, the failed ones marked. */
  fx_store_guard *gd = NULL;
  size_t ngd = 0;
  if ((st = fx_store_list_guards (ctx->store, c->id, arena, &gd, &ngd, diag)) != FX_OK)
    goto done;
  if (ngd)
    {
      fx_buf_printf (out, "<h2 id=\"guards\">Guards (%zu)</h2>\n<table><tr><th>kind</th><th>source</th><th>code"
                          "</th><th>user line</th></tr>\n", ngd);
      for (size_t k = 0; k < ngd; k++)
        {
          bool failed = guard_failed (&gd[k], failed_reason);
          fx_buf_puts (out, failed ? "<tr class=\"failed-guard\" title=\"failed later\">" : "<tr>");
          put_td (out, gd[k].kind);
          put_td_code (out, gd[k].source);
          put_td_code (out, gd[k].code);
          put_td (out, gd[k].user_line);
          fx_buf_puts (out, "</tr>\n");
        }
      fx_buf_puts (out, "</table>\n");
    }

  if (nk)
    {
      fx_buf_printf (out, "<h2 id=\"kernels\">Kernels (%zu)</h2>\n", nk);
      for (size_t k = 0; k < nk; k++)
        {
          fx_buf_printf (out, "<details id=\"kernel-%zu\"><summary><code>", k);
          fx_report_html_escape (out, kern[k].name);
          fx_buf_puts (out, "</code> ");
          fx_report_html_escape (out, kern[k].kind);
          if (kern[k].device)
            {
              fx_buf_puts (out, " on ");
              fx_report_html_escape (out, kern[k].device);
            }
          if (kern[k].call_order >= 0)
            fx_buf_printf (out, ", call #%d", kern[k].call_order);
          fx_buf_puts (out, "</summary>\n<table>");
          fx_buf_puts (out, "<tr><th>source nodes</th>");
          put_td_code (out, kern[k].nodes);
          fx_buf_puts (out, "</tr><tr><th>original ATen</th>");
          put_td_code (out, kern[k].aten);
          fx_buf_puts (out, "</tr><tr><th>post-grad nodes</th>");
          put_td_code (out, kern[k].post_nodes);
          fx_buf_puts (out, "</tr><tr><th>pre-grad nodes</th>");
          put_td_code (out, kern[k].pre_nodes);
          fx_buf_puts (out, "</tr></table>\n");
          put_pre (out, kern[k].code ? kern[k].code : "");
          fx_buf_puts (out, "</details>\n");
        }
    }

  fx_store_fusion_group *fg = NULL;
  size_t nfg = 0;
  if ((st = fx_store_list_fusion_groups (ctx->store, c->id, arena, &fg, &nfg, diag)) != FX_OK)
    goto done;
  if (nfg)
    {
      fx_buf_printf (out, "<h2 id=\"fusion\">Fusion groups (%zu)</h2>\n", nfg);
      for (size_t k = 0; k < nfg; k++)
        {
          fx_buf_puts (out, "<details><summary><code>");
          fx_report_html_escape (out, fg[k].name);
          fx_buf_puts (out, "</code> [");
          fx_report_html_escape (out, fg[k].nodes);
          fx_buf_puts (out, "]</summary>");
          put_pre (out, fg[k].text ? fg[k].text : "");
          fx_buf_puts (out, "</details>\n");
        }
    }

  fx_store_shape_event *se = NULL;
  size_t nse = 0;
  if ((st = fx_store_list_shape_events (ctx->store, c->id, arena, &se, &nse, diag)) != FX_OK)
    goto done;
  if (nse)
    {
      fx_buf_puts (out, "<h2 id=\"shapes\">Symbolic shapes</h2>\n<table><tr><th>kind</th><th>symbol / expr</th>"
                        "<th>sources</th><th>value</th><th>reason</th><th>user stack</th></tr>\n");
      for (size_t k = 0; k < nse; k++)
        {
          fx_buf_puts (out, "<tr>");
          put_td (out, se[k].kind);
          put_td_code (out, se[k].symbol ? se[k].symbol : se[k].expr);
          put_td_code (out, se[k].sources);
          put_td_code (out, se[k].value);
          put_td (out, se[k].reason);
          fx_buf_puts (out, "<td><pre>");
          fx_report_html_escape (out, se[k].user_stack ? se[k].user_stack : "");
          fx_buf_puts (out, "</pre></td></tr>\n");
        }
      fx_buf_puts (out, "</table>\n");
    }

  /* Runs and compares stored for this compile's graphs. */
  bool runs_head = false;
  double first_median = NAN;
  for (size_t k = 0; k < ng && st == FX_OK; k++)
    {
      fx_store_run_row *r = NULL;
      size_t nr = 0;
      if ((st = fx_store_list_runs (ctx->store, gi[k].id, arena, &r, &nr, diag)) != FX_OK)
        break;
      for (size_t j = 0; j < nr; j++)
        {
          if (!runs_head)
            fx_buf_puts (out, "<h2 id=\"runs\">Runs</h2>\n<table><tr><th>graph</th><th>backend</th><th>mode</th>"
                              "<th>device</th><th>compile</th><th>median</th><th>min</th><th>max</th>"
                              "<th>vs first</th><th>kernels</th><th>max error</th><th>verdict</th></tr>\n");
          runs_head = true;
          fx_buf_puts (out, "<tr>");
          put_td (out, gi[k].stage);
          put_td (out, r[j].backend);
          put_td (out, r[j].mode);
          put_td (out, r[j].device);
          double ms[4] = { r[j].compile_ms, r[j].run_ms_median, r[j].run_ms_min, r[j].run_ms_max };
          for (int m = 0; m < 4; m++)
            if (isnan (ms[m]))
              fx_buf_puts (out, "<td class=\"num muted\">-</td>");
            else
              fx_buf_printf (out, "<td class=\"num\">%.4f ms</td>", ms[m]);
          /* Speed against the first run stored for this compile (the baseline a compare lists first). */
          if (isnan (first_median))
            first_median = r[j].run_ms_median;
          if (isnan (r[j].run_ms_median) || isnan (first_median) || r[j].run_ms_median <= 0)
            fx_buf_puts (out, "<td class=\"num muted\">-</td>");
          else
            fx_buf_printf (out, "<td class=\"num\">%.2fx</td>", first_median / r[j].run_ms_median);
          if (r[j].n_kernels >= 0)
            fx_buf_printf (out, "<td class=\"num\">%d</td>", r[j].n_kernels);
          else
            fx_buf_puts (out, "<td class=\"num muted\">-</td>");
          if (isnan (r[j].accuracy))
            fx_buf_puts (out, "<td class=\"num muted\">-</td>");
          else
            fx_buf_printf (out, "<td class=\"num\">%.3g</td>", r[j].accuracy);
          put_td (out, r[j].error ? r[j].error : r[j].verdict);
          fx_buf_puts (out, "</tr>\n");
        }
    }
  if (runs_head)
    fx_buf_puts (out, "</table>\n");
  if (st != FX_OK)
    goto done;

  fx_store_kv *mt = NULL;
  size_t nmt = 0;
  if ((st = fx_store_list_metrics (ctx->store, c->id, arena, &mt, &nmt, diag)) != FX_OK)
    goto done;
  if (nmt)
    {
      fx_buf_puts (out, "<h2 id=\"metrics\">Compilation metrics</h2>\n<details><summary>");
      fx_buf_printf (out, "%zu keys</summary><table>\n", nmt);
      for (size_t k = 0; k < nmt; k++)
        {
          fx_buf_puts (out, "<tr>");
          put_td_code (out, mt[k].key);
          put_td_code (out, mt[k].value ? mt[k].value : "null");
          fx_buf_puts (out, "</tr>\n");
        }
      fx_buf_puts (out, "</table></details>\n");
    }

  /* Everything else PyTorch wrote for this compile. */
  fx_store_kv *af = NULL;
  size_t naf = 0;
  if ((st = fx_store_list_artifacts (ctx->store, c->id, arena, &af, &naf, diag)) != FX_OK)
    goto done;
  if (naf)
    {
      fx_buf_printf (out, "<h2 id=\"artifacts\">Artifacts (%zu)</h2>\n", naf);
      for (size_t k = 0; k < naf && st == FX_OK; k++)
        {
          fx_buf_puts (out, "<details><summary><code>");
          fx_report_html_escape (out, af[k].key);
          fx_buf_printf (out, "</code> <span class=\"muted\">%zu bytes</span></summary>\n",
                         af[k].value ? strlen (af[k].value) : 0);
          char *fname = fx_arena_printf (arena, "artifact-%lld-%zu.txt", (long long) c->id, k);
          st = long_text (ctx, out, fname, af[k].key, af[k].value);
          fx_buf_puts (out, "</details>\n");
        }
    }
  fx_buf_puts (out, "<p class=\"muted\">Written by fxwb " FX_VERSION_STRING ".</p>\n</body>\n</html>\n");
done:
  fx_arena_free (arena);
  return st;
}

/* ------------------------------------------------------------------ the search index */

static void
search_add (fx_buf *text, const char *s)
{
  if (!s || !*s || text->len > 4096)
    return;
  fx_buf_putc (text, ' ');
  fx_buf_append (text, s, strnlen (s, 512));
}

static fx_status
search_entry (rctx *ctx, const fx_store_compile *c, fx_buf *out, bool first)
{
  fx_arena *arena = fx_arena_new ();
  fx_buf text;
  fx_buf_init (&text);
  fx_status st = FX_OK;
  search_add (&text, c->file);
  search_add (&text, c->fail_type);
  search_add (&text, c->fail_reason);
  fx_store_kernel *k = NULL;
  fx_store_graph_break *b = NULL;
  fx_store_guard_failure *f = NULL;
  fx_store_graph_info *g = NULL;
  size_t nk = 0, nb = 0, nf = 0, ng = 0;
  if ((st = fx_store_list_kernels (ctx->store, c->id, arena, &k, &nk, ctx->diag)) == FX_OK
      && (st = fx_store_list_graph_breaks (ctx->store, c->id, arena, &b, &nb, ctx->diag)) == FX_OK
      && (st = fx_store_list_guard_failures (ctx->store, c->id, arena, &f, &nf, ctx->diag)) == FX_OK
      && (st = fx_store_list_graphs (ctx->store, c->id, arena, &g, &ng, ctx->diag)) == FX_OK)
    {
      for (size_t i = 0; i < nb; i++)
        {
          search_add (&text, b[i].reason);
          search_add (&text, b[i].user_stack);
        }
      for (size_t i = 0; i < nf; i++)
        search_add (&text, f[i].reason);
      for (size_t i = 0; i < nk; i++)
        {
          search_add (&text, k[i].name);
          search_add (&text, k[i].nodes);
          search_add (&text, k[i].aten);
        }
      for (size_t i = 0; i < ng; i++)
        search_add (&text, g[i].stage);
      fx_buf_puts (out, first ? "\n" : ",\n");
      fx_buf_printf (out, "{\"row\": %lld, \"id\": ", (long long) c->id);
      fx_report_json_string (out, c->compile_id);
      fx_buf_puts (out, ", \"title\": ");
      fx_report_json_string (out, c->function ? c->function : "");
      fx_buf_printf (out, ", \"href\": \"compile-%lld.html\", \"status\": ", (long long) c->id);
      fx_report_json_string (out, c->status);
      fx_buf_puts (out, ", \"text\": ");
      fx_report_json_string (out, text.data ? text.data : "");
      fx_buf_puts (out, "}");
    }
  fx_buf_free (&text);
  fx_arena_free (arena);
  return st;
}

static fx_status
search_js (rctx *ctx, fx_buf *out)
{
  fx_buf_puts (out, "// search-index.js: one entry per compile page, read by report.js.\nwindow.FXWB_SEARCH = [");
  fx_status st = FX_OK;
  for (size_t i = 0; i < ctx->n && st == FX_OK; i++)
    st = search_entry (ctx, &ctx->cs[i], out, i == 0);
  fx_buf_puts (out, "\n];\n");
  return st;
}

/* ------------------------------------------------------------------ JSON */

static void
compile_summary_json (const rctx *ctx, const fx_store_compile *c, fx_buf *out, bool *first)
{
  json_kint (out, first, "row", c->id);
  json_kstr (out, first, "compile_id", c->compile_id);
  json_kint (out, first, "input", c->input_id);
  const fx_store_input *in = ctx_input (ctx, c->input_id);
  json_kstr (out, first, "input_path", in ? in->path : NULL);
  json_kint (out, first, "frame_id", c->cid.frame_id);
  json_kint (out, first, "frame_compile_id", c->cid.frame_compile_id);
  json_kint (out, first, "attempt", c->cid.attempt);
  json_kint (out, first, "compiled_autograd_id", c->cid.compiled_autograd_id);
  json_kstr (out, first, "function", c->function);
  json_kstr (out, first, "file", c->file);
  json_kint (out, first, "line", c->line);
  json_kstr (out, first, "status", c->status);
  json_kstr (out, first, "fail_type", c->fail_type);
  json_kstr (out, first, "fail_reason", c->fail_reason);
  json_knum (out, first, "start_time", c->start_time);
  json_knum (out, first, "entire_frame_compile_s", c->entire_frame_compile_s);
  json_knum (out, first, "backend_compile_s", c->backend_compile_s);
  json_knum (out, first, "inductor_compile_s", c->inductor_compile_s);
  json_kint (out, first, "graph_op_count", c->graph_op_count);
  json_kint (out, first, "guard_count", c->guard_count);
  json_kint (out, first, "n_graphs", c->n_graphs);
  json_kint (out, first, "n_kernels", c->n_kernels);
  json_kint (out, first, "n_guards", c->n_guards);
  json_kint (out, first, "n_graph_breaks", c->n_breaks);
  json_kint (out, first, "n_guard_failures", c->n_failures);
  json_kstr (out, first, "linked", c->linked);
  json_key (out, first, "href");
  fx_buf_printf (out, "\"compile-%lld.html\"", (long long) c->id);
}

static fx_status
compile_json (rctx *ctx, const fx_store_compile *c, fx_buf *out)
{
  fx_arena *arena = fx_arena_new ();
  fx_diag *diag = ctx->diag;
  fx_status st;
  bool first = true;
  fx_buf_puts (out, "{");
  compile_summary_json (ctx, c, out, &first);
  json_kstr (out, &first, "user_stack", c->user_stack);

  fx_store_graph_info *gi = NULL;
  size_t ng = 0;
  if ((st = fx_store_list_graphs (ctx->store, c->id, arena, &gi, &ng, diag)) != FX_OK)
    goto done;
  json_key (out, &first, "graphs");
  fx_buf_puts (out, "[");
  for (size_t k = 0; k < ng && st == FX_OK; k++)
    {
      char *text = NULL;
      if ((st = fx_store_get_graph (ctx->store, gi[k].id, NULL, &text, diag)) != FX_OK)
        break;
      bool f = true;
      fx_buf_puts (out, k ? ", {" : "{");
      json_kint (out, &f, "id", gi[k].id);
      json_kstr (out, &f, "stage", gi[k].stage);
      json_kint (out, &f, "nodes", gi[k].n_nodes);
      json_key (out, &f, "parsed");
      fx_buf_puts (out, gi[k].parsed ? "true" : "false");
      json_kstr (out, &f, "text", text);
      fx_buf_puts (out, "}");
      free (text);
    }
  fx_buf_puts (out, "]");
  if (st != FX_OK)
    goto done;

  fx_store_guard *gd = NULL;
  size_t n = 0;
  if ((st = fx_store_list_guards (ctx->store, c->id, arena, &gd, &n, diag)) != FX_OK)
    goto done;
  json_key (out, &first, "guards");
  fx_buf_puts (out, "[");
  for (size_t k = 0; k < n; k++)
    {
      bool f = true;
      fx_buf_puts (out, k ? ", {" : "{");
      json_kstr (out, &f, "kind", gd[k].kind);
      json_kstr (out, &f, "source", gd[k].source);
      json_kstr (out, &f, "code", gd[k].code);
      json_kstr (out, &f, "user_line", gd[k].user_line);
      fx_buf_puts (out, "}");
    }
  fx_buf_puts (out, "]");

  fx_store_guard_failure *gf = NULL;
  if ((st = fx_store_list_guard_failures (ctx->store, c->id, arena, &gf, &n, diag)) != FX_OK)
    goto done;
  json_key (out, &first, "guard_failures");
  fx_buf_puts (out, "[");
  for (size_t k = 0; k < n; k++)
    {
      bool f = true;
      fx_buf_puts (out, k ? ", {" : "{");
      json_kstr (out, &f, "failed_compile", gf[k].failed_compile);
      json_kstr (out, &f, "reason", gf[k].reason);
      json_kstr (out, &f, "user_stack", gf[k].user_stack);
      fx_buf_puts (out, "}");
    }
  fx_buf_puts (out, "]");

  fx_store_graph_break *gb = NULL;
  if ((st = fx_store_list_graph_breaks (ctx->store, c->id, arena, &gb, &n, diag)) != FX_OK)
    goto done;
  json_key (out, &first, "graph_breaks");
  fx_buf_puts (out, "[");
  for (size_t k = 0; k < n; k++)
    {
      bool f = true;
      fx_buf_puts (out, k ? ", {" : "{");
      json_kstr (out, &f, "reason", gb[k].reason);
      json_kstr (out, &f, "explanation", gb[k].explanation);
      json_kstr (out, &f, "user_stack", gb[k].user_stack);
      json_kstr (out, &f, "text", gb[k].text);
      fx_buf_puts (out, "}");
    }
  fx_buf_puts (out, "]");

  fx_store_kernel *kn = NULL;
  if ((st = fx_store_list_kernels (ctx->store, c->id, arena, &kn, &n, diag)) != FX_OK)
    goto done;
  json_key (out, &first, "kernels");
  fx_buf_puts (out, "[");
  for (size_t k = 0; k < n; k++)
    {
      bool f = true;
      fx_buf_puts (out, k ? ", {" : "{");
      json_kint (out, &f, "ordinal", kn[k].ordinal);
      json_kint (out, &f, "call_order", kn[k].call_order);
      json_kstr (out, &f, "name", kn[k].name);
      json_kstr (out, &f, "kind", kn[k].kind);
      json_kstr (out, &f, "device", kn[k].device);
      json_kstr (out, &f, "nodes", kn[k].nodes);
      json_kstr (out, &f, "aten", kn[k].aten);
      json_kstr (out, &f, "post_grad_nodes", kn[k].post_nodes);
      json_kstr (out, &f, "pre_grad_nodes", kn[k].pre_nodes);
      json_kstr (out, &f, "code", kn[k].code);
      fx_buf_puts (out, "}");
    }
  fx_buf_puts (out, "]");

  fx_store_fusion_group *fg = NULL;
  if ((st = fx_store_list_fusion_groups (ctx->store, c->id, arena, &fg, &n, diag)) != FX_OK)
    goto done;
  json_key (out, &first, "fusion_groups");
  fx_buf_puts (out, "[");
  for (size_t k = 0; k < n; k++)
    {
      bool f = true;
      fx_buf_puts (out, k ? ", {" : "{");
      json_kstr (out, &f, "name", fg[k].name);
      json_kstr (out, &f, "nodes", fg[k].nodes);
      json_kstr (out, &f, "text", fg[k].text);
      fx_buf_puts (out, "}");
    }
  fx_buf_puts (out, "]");

  fx_store_shape_event *se = NULL;
  if ((st = fx_store_list_shape_events (ctx->store, c->id, arena, &se, &n, diag)) != FX_OK)
    goto done;
  json_key (out, &first, "shape_events");
  fx_buf_puts (out, "[");
  for (size_t k = 0; k < n; k++)
    {
      bool f = true;
      fx_buf_puts (out, k ? ", {" : "{");
      json_kstr (out, &f, "kind", se[k].kind);
      json_kstr (out, &f, "symbol", se[k].symbol);
      json_kstr (out, &f, "sources", se[k].sources);
      json_kstr (out, &f, "value", se[k].value);
      json_kstr (out, &f, "expr", se[k].expr);
      json_kstr (out, &f, "reason", se[k].reason);
      json_kstr (out, &f, "user_stack", se[k].user_stack);
      fx_buf_puts (out, "}");
    }
  fx_buf_puts (out, "]");

  json_key (out, &first, "runs");
  fx_buf_puts (out, "[");
  bool any_run = false;
  for (size_t g = 0; g < ng && st == FX_OK; g++)
    {
      fx_store_run_row *r = NULL;
      size_t nr = 0;
      if ((st = fx_store_list_runs (ctx->store, gi[g].id, arena, &r, &nr, diag)) != FX_OK)
        break;
      for (size_t k = 0; k < nr; k++)
        {
          bool f = true;
          fx_buf_puts (out, any_run ? ", {" : "{");
          any_run = true;
          json_kint (out, &f, "id", r[k].id);
          json_kint (out, &f, "graph", r[k].graph_id);
          json_kstr (out, &f, "backend", r[k].backend);
          json_kstr (out, &f, "mode", r[k].mode);
          json_kstr (out, &f, "options", r[k].options_json);
          json_kstr (out, &f, "device", r[k].device);
          json_kstr (out, &f, "error", r[k].error);
          json_kstr (out, &f, "verdict", r[k].verdict);
          json_knum (out, &f, "compile_ms", r[k].compile_ms);
          json_knum (out, &f, "run_ms_median", r[k].run_ms_median);
          json_knum (out, &f, "run_ms_min", r[k].run_ms_min);
          json_knum (out, &f, "run_ms_max", r[k].run_ms_max);
          json_knum (out, &f, "accuracy", r[k].accuracy);
          json_kint (out, &f, "peak_bytes", r[k].peak_bytes);
          json_kint (out, &f, "repeat", r[k].repeat);
          json_kint (out, &f, "n_kernels", r[k].n_kernels);
          fx_buf_puts (out, "}");
        }
    }
  fx_buf_puts (out, "]");
  if (st != FX_OK)
    goto done;

  fx_store_kv *kv = NULL;
  if ((st = fx_store_list_metrics (ctx->store, c->id, arena, &kv, &n, diag)) != FX_OK)
    goto done;
  json_key (out, &first, "metrics");
  fx_buf_puts (out, "{");
  for (size_t k = 0; k < n; k++)
    {
      fx_buf_puts (out, k ? ", " : "");
      fx_report_json_string (out, kv[k].key);
      fx_buf_puts (out, ": ");
      fx_report_json_string (out, kv[k].value);
    }
  fx_buf_puts (out, "}");

  if ((st = fx_store_list_artifacts (ctx->store, c->id, arena, &kv, &n, diag)) != FX_OK)
    goto done;
  json_key (out, &first, "artifacts");
  fx_buf_puts (out, "[");
  for (size_t k = 0; k < n; k++)
    {
      bool f = true;
      fx_buf_puts (out, k ? ", {" : "{");
      json_kstr (out, &f, "name", kv[k].key);
      json_kstr (out, &f, "text", kv[k].value);
      fx_buf_puts (out, "}");
    }
  fx_buf_puts (out, "]}");
done:
  fx_arena_free (arena);
  return st;
}

/* ------------------------------------------------------------------ public entry points */

void
fx_report_warnings_from_stats (const char *input, const fx_import_stats *stats, fx_arena *arena,
                               fx_report_warning **out, size_t *n)
{
  size_t add = 0;
  for (int w = 0; w < FX_IMPORT_WARN_COUNT; w++)
    add += stats->warnings[w] < FX_IMPORT_EXAMPLES ? (size_t) stats->warnings[w] : FX_IMPORT_EXAMPLES;
  if (!add)
    return;
  fx_report_warning *grown = fx_arena_alloc (arena, (*n + add) * sizeof *grown);
  if (*n)
    memcpy (grown, *out, *n * sizeof *grown);
  for (int w = 0; w < FX_IMPORT_WARN_COUNT; w++)
    for (int64_t k = 0; k < stats->warnings[w] && k < FX_IMPORT_EXAMPLES; k++)
      grown[(*n)++] = (fx_report_warning) { fx_arena_strdup (arena, input), stats->examples[w][k].line,
                                            fx_import_warning_name ((fx_import_warning) w),
                                            fx_arena_strdup (arena, stats->examples[w][k].text),
                                            stats->warnings[w] };
  *out = grown;
}

fx_status
fx_report_index_html (fx_store *store, const fx_report_opts *opts, fx_buf *out, fx_diag *diag)
{
  rctx ctx;
  fx_status st = ctx_init (&ctx, store, opts, diag);
  if (st == FX_OK)
    st = index_html (&ctx, out);
  ctx_clear (&ctx);
  return st;
}

fx_status
fx_report_compile_html (fx_store *store, int64_t compile_row, const fx_report_opts *opts, fx_buf *out,
                        fx_diag *diag)
{
  rctx ctx;
  fx_status st = ctx_init (&ctx, store, opts, diag);
  if (st == FX_OK)
    {
      size_t i = 0;
      while (i < ctx.n && ctx.cs[i].id != compile_row)
        i++;
      st = i < ctx.n ? compile_html (&ctx, i, out)
                     : fx_diag_set (diag, FX_ERR_NOT_FOUND, "no compile %lld in this workspace",
                                    (long long) compile_row);
    }
  ctx_clear (&ctx);
  return st;
}

fx_status
fx_report_search_js (fx_store *store, fx_buf *out, fx_diag *diag)
{
  rctx ctx;
  fx_status st = ctx_init (&ctx, store, NULL, diag);
  if (st == FX_OK)
    st = search_js (&ctx, out);
  ctx_clear (&ctx);
  return st;
}

fx_status
fx_report_compiles_json (fx_store *store, fx_buf *out, fx_diag *diag)
{
  rctx ctx;
  fx_status st = ctx_init (&ctx, store, NULL, diag);
  if (st == FX_OK)
    {
      fx_buf_puts (out, "[");
      for (size_t i = 0; i < ctx.n; i++)
        {
          bool first = true;
          fx_buf_puts (out, i ? ",\n {" : "\n {");
          compile_summary_json (&ctx, &ctx.cs[i], out, &first);
          fx_buf_puts (out, "}");
        }
      fx_buf_puts (out, ctx.n ? "\n]\n" : "]\n");
    }
  ctx_clear (&ctx);
  return st;
}

fx_status
fx_report_compile_json (fx_store *store, int64_t compile_row, fx_buf *out, fx_diag *diag)
{
  rctx ctx;
  fx_status st = ctx_init (&ctx, store, NULL, diag);
  if (st == FX_OK)
    {
      size_t i = 0;
      while (i < ctx.n && ctx.cs[i].id != compile_row)
        i++;
      st = i < ctx.n ? compile_json (&ctx, &ctx.cs[i], out)
                     : fx_diag_set (diag, FX_ERR_NOT_FOUND, "no compile %lld in this workspace",
                                    (long long) compile_row);
    }
  ctx_clear (&ctx);
  return st;
}

fx_status
fx_report_graph_json (fx_store *store, int64_t graph_id, fx_buf *out, fx_diag *diag)
{
  rctx ctx;
  fx_status st = ctx_init (&ctx, store, NULL, diag);
  const fx_store_graph_info *found = NULL;
  fx_store_graph_info *gi = NULL;
  size_t ng = 0;
  for (size_t i = 0; st == FX_OK && i < ctx.n && !found; i++)
    {
      if ((st = fx_store_list_graphs (store, ctx.cs[i].id, ctx.arena, &gi, &ng, diag)) != FX_OK)
        break;
      for (size_t k = 0; k < ng && !found; k++)
        if (gi[k].id == graph_id)
          found = &gi[k];
    }
  if (st == FX_OK && !found)
    st = fx_diag_set (diag, FX_ERR_NOT_FOUND, "no graph %lld in this workspace", (long long) graph_id);
  if (st == FX_OK)
    {
      fx_graph *g = NULL;
      char *text = NULL;
      st = fx_store_get_graph (store, graph_id, &g, &text, diag);
      if (st == FX_OK)
        {
          bool first = true;
          fx_buf_puts (out, "{");
          json_kint (out, &first, "id", found->id);
          json_kint (out, &first, "compile_row", found->compile_row);
          json_kstr (out, &first, "stage", found->stage);
          json_kint (out, &first, "nodes", found->n_nodes);
          json_kstr (out, &first, "text", text);
          fx_buf tmp;
          fx_buf_init (&tmp);
          if (g)
            {
              fx_graph_print_tabular (g, &tmp);
              json_kstr (out, &first, "tabular", tmp.data ? tmp.data : "");
              fx_buf_reset (&tmp);
              fx_readable_opts ro;
              memset (&ro, 0, sizeof ro);
              fx_parse_readable_opts (g, &ro);
              fx_graph_print_readable (g, &ro, &tmp);
              json_kstr (out, &first, "readable", tmp.data ? tmp.data : "");
              fx_buf_reset (&tmp);
              fx_graph_dump_dot (g, &tmp);
              json_kstr (out, &first, "dot", tmp.data ? tmp.data : "");
            }
          fx_buf_free (&tmp);
          fx_buf_puts (out, "}\n");
        }
      fx_graph_free (g);
      free (text);
    }
  ctx_clear (&ctx);
  return st;
}

/* Writes buf to dir/name and empties it. */
static fx_status
flush_file (rctx *ctx, const char *name, fx_buf *buf)
{
  char *path = fx_arena_printf (ctx->arena, "%s/%s", ctx->dir, name);
  fx_status st = fx_file_write (path, buf->data ? buf->data : "", buf->len, ctx->diag);
  if (st == FX_OK && ctx->stats)
    ctx->stats->bytes_written += (int64_t) buf->len;
  fx_buf_reset (buf);
  return st;
}

typedef struct
{
  rctx *ctx;
  fx_buf dot;
} draw_state;

/* fx_report_write_dir's graph_href: draws the graph once per distinct dot text into graph-MD5.svg. */
static char *
draw_graph (int64_t graph_id, const fx_graph *graph, void *user_data)
{
  draw_state *ds = user_data;
  rctx *ctx = ds->ctx;
  (void) graph_id;
  fx_buf_reset (&ds->dot);
  fx_graph_dump_dot (graph, &ds->dot);
  char hex[33];
  fx_md5_hex (ds->dot.data ? ds->dot.data : "", ds->dot.len, hex);
  char name[64];
  snprintf (name, sizeof name, "graph-%s.svg", hex);
  char *path = fx_arena_printf (ctx->arena, "%s/%s", ctx->dir, name);
  struct stat sb;
  if (stat (path, &sb) != 0)
    {
      char *svg = ctx->opts->svg (ds->dot.data ? ds->dot.data : "", ds->dot.len, ctx->opts->svg_data);
      if (!svg)
        return NULL;
      fx_status st = fx_file_write (path, svg, strlen (svg), NULL);
      if (ctx->stats && st == FX_OK)
        {
          ctx->stats->svg_files++;
          ctx->stats->bytes_written += (int64_t) strlen (svg);
        }
      free (svg);
      if (st != FX_OK)
        return NULL;
    }
  return strdup (name);
}

fx_status
fx_report_write_dir (fx_store *store, const char *dir, const fx_report_opts *opts, fx_report_stats *stats,
                     fx_diag *diag)
{
  fx_report_stats local;
  if (!stats)
    stats = &local;
  memset (stats, 0, sizeof *stats);
  if (mkdir (dir, 0777) != 0 && errno != EEXIST)
    return fx_diag_set (diag, FX_ERR_IO, "%s: cannot create the report folder: %s", dir, strerror (errno));
  /* The folder is written with its own graph_href; the caller's options are otherwise kept. */
  fx_report_opts o = opts ? *opts : (fx_report_opts) { 0 };
  o.link_query = NULL;
  o.live = false;
  draw_state ds;
  fx_buf_init (&ds.dot);
  o.graph_href = o.svg ? draw_graph : NULL;
  o.graph_href_data = &ds;
  rctx ctx;
  fx_status st = ctx_init (&ctx, store, &o, diag);
  ds.ctx = &ctx;
  ctx.dir = dir;
  ctx.stats = stats;
  fx_buf page;
  fx_buf_init (&page);
  if (st == FX_OK)
    {
      fx_buf_puts (&page, fx_report_css ());
      st = flush_file (&ctx, "report.css", &page);
    }
  if (st == FX_OK)
    {
      fx_buf_puts (&page, fx_report_js ());
      st = flush_file (&ctx, "report.js", &page);
    }
  if (st == FX_OK && (st = index_html (&ctx, &page)) == FX_OK)
    {
      st = flush_file (&ctx, "index.html", &page);
      stats->pages++;
    }
  for (size_t i = 0; i < ctx.n && st == FX_OK; i++)
    {
      char name[64];
      snprintf (name, sizeof name, "compile-%lld.html", (long long) ctx.cs[i].id);
      if ((st = compile_html (&ctx, i, &page)) == FX_OK)
        st = flush_file (&ctx, name, &page);
      stats->pages++;
      stats->compiles++;
    }
  if (st == FX_OK && (st = search_js (&ctx, &page)) == FX_OK)
    st = flush_file (&ctx, "search-index.js", &page);
  fx_buf_free (&page);
  fx_buf_free (&ds.dot);
  ctx_clear (&ctx);
  return st;
}

fx_status
fx_report_write_json (fx_store *store, FILE *out, const fx_report_opts *opts, fx_diag *diag)
{
  rctx ctx;
  fx_status st = ctx_init (&ctx, store, opts, diag);
  fx_buf buf;
  fx_buf_init (&buf);
  if (st == FX_OK)
    {
      bool first = true;
      fx_buf_puts (&buf, "{");
      json_kstr (&buf, &first, "schema", "fxwb-report");
      json_kint (&buf, &first, "version", FX_REPORT_SCHEMA_VERSION);
      json_kstr (&buf, &first, "generator", "fxwb " FX_VERSION_STRING);
      json_kstr (&buf, &first, "title", title_of (&ctx));
      json_key (&buf, &first, "inputs");
      fx_buf_puts (&buf, "[");
      for (size_t i = 0; i < ctx.n_inputs; i++)
        {
          bool f = true;
          fx_buf_puts (&buf, i ? ", {" : "{");
          json_kint (&buf, &f, "id", ctx.inputs[i].id);
          json_kstr (&buf, &f, "path", ctx.inputs[i].path);
          json_kstr (&buf, &f, "kind", ctx.inputs[i].kind);
          json_kint (&buf, &f, "size", ctx.inputs[i].size);
          fx_buf_puts (&buf, "}");
        }
      fx_buf_puts (&buf, "]");
      json_key (&buf, &first, "warnings");
      fx_buf_puts (&buf, "[");
      for (size_t i = 0; opts && i < opts->n_warnings; i++)
        {
          bool f = true;
          fx_buf_puts (&buf, i ? ", {" : "{");
          json_kstr (&buf, &f, "input", opts->warnings[i].input);
          json_kint (&buf, &f, "line", opts->warnings[i].line);
          json_kstr (&buf, &f, "kind", opts->warnings[i].kind);
          json_kint (&buf, &f, "count", opts->warnings[i].count);
          json_kstr (&buf, &f, "text", opts->warnings[i].text);
          fx_buf_puts (&buf, "}");
        }
      fx_buf_puts (&buf, "]");
      json_key (&buf, &first, "compiles");
      fx_buf_puts (&buf, "[\n");
      for (size_t i = 0; i < ctx.n && st == FX_OK; i++)
        {
          if (i)
            fx_buf_puts (&buf, ",\n");
          st = compile_json (&ctx, &ctx.cs[i], &buf);
          /* One compile at a time: the document is never whole in memory. */
          if (fwrite (buf.data, 1, buf.len, out) != buf.len)
            st = fx_diag_set (diag, FX_ERR_IO, "cannot write the JSON document: %s", strerror (errno));
          fx_buf_reset (&buf);
        }
      fx_buf_puts (&buf, "\n]}\n");
      if (st == FX_OK && fwrite (buf.data, 1, buf.len, out) != buf.len)
        st = fx_diag_set (diag, FX_ERR_IO, "cannot write the JSON document: %s", strerror (errno));
    }
  fx_buf_free (&buf);
  ctx_clear (&ctx);
  return st;
}
