/* fx-report-ranks.c: the index page's section over the ranks of a multi-rank workspace: each rank's input and
   compiles, and where the ranks diverge (fx/ranks.h), linked to the compiles' pages. */
#include "fx-report-impl.h"

#include "fx/ranks.h"

static void
rank_link (fx_buf *out, int64_t row, int rank, const char *cid, const char *q)
{
  if (!row)
    {
      fx_buf_printf (out, "rank %d: -", rank);
      return;
    }
  fx_buf_printf (out, "<a href=\"compile-%lld.html", (long long) row);
  fx_report_html_escape (out, q ? q : "");
  fx_buf_printf (out, "\">rank %d [", rank);
  fx_report_html_escape (out, cid);
  fx_buf_puts (out, "]</a>");
}

fx_status
fx_report_ranks_html (fx_store *store, fx_arena *arena, const char *q, fx_buf *out, fx_diag *diag)
{
  fx_rank_input *ranks = NULL;
  size_t nr = 0;
  fx_status st = fx_ranks_list (store, arena, &ranks, &nr, diag);
  if (st != FX_OK || nr < 2)
    return st;
  fx_rank_divergence *ds = NULL;
  size_t nd = 0;
  st = fx_ranks_diverge_from (store, arena, ranks, nr, &ds, &nd, diag);
  if (st != FX_OK)
    return st;
  fx_buf_printf (out, "<h2 id=\"ranks\">Ranks</h2>\n<p>%zu ranks (one TORCH_TRACE each): ", nr);
  for (size_t r = 0; r < nr; r++)
    fx_buf_printf (out, "%srank %d = input %lld", r ? ", " : "", ranks[r].rank, (long long) ranks[r].input_id);
  fx_buf_puts (out, ".</p>\n");
  if (nd == 0)
    {
      fx_buf_puts (out, "<p>The ranks agree: the same compiles, graphs, guards, cache results, collectives and runtime estimates.</p>\n");
      return FX_OK;
    }
  fx_buf_puts (out, "<h3 id=\"ranks-diverge\">Ranks diverge</h3>\n<table><tr><th>compile</th><th>what</th>"
                    "<th>ranks</th><th>detail</th><th>compare</th></tr>\n");
  for (size_t i = 0; i < nd; i++)
    {
      fx_buf_puts (out, "<tr class=\"warning\"><td><code>[");
      fx_report_html_escape (out, ds[i].compile_id);
      fx_buf_puts (out, "]</code></td><td>");
      fx_report_html_escape (out, fx_rank_div_kind_name (ds[i].kind));
      fx_buf_puts (out, "</td><td>");
      fx_report_html_escape (out, ds[i].ranks);
      fx_buf_puts (out, "</td><td><code>");
      fx_report_html_escape (out, ds[i].detail);
      fx_buf_puts (out, "</code></td><td>");
      rank_link (out, ds[i].ref_compile_row, ds[i].ref_rank, ds[i].compile_id, q);
      fx_buf_puts (out, " vs ");
      rank_link (out, ds[i].other_compile_row, ds[i].other_rank, ds[i].compile_id, q);
      fx_buf_puts (out, "</td></tr>\n");
    }
  fx_buf_puts (out, "</table>\n<p>Each pair in full: <code>fxwb diff WORKSPACE --ranks</code>.</p>\n");
  return FX_OK;
}
