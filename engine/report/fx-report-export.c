/* fx-report-export.c: the index page's section for a torch.export trace: the guards export added and its unbacked
   symbols, each with the user line it came from (fx/export.h). */
#include "fx-report-impl.h"

#include "fx/export.h"

fx_status
fx_report_export_html (fx_store *store, fx_arena *arena, fx_buf *out, fx_diag *diag)
{
  fx_export_entry *es = NULL;
  size_t ne = 0;
  fx_status st = fx_export_entries (store, arena, &es, &ne, diag);
  if (st != FX_OK || ne == 0)
    return st;
  fx_buf_printf (out, "<h2 id=\"export\">torch.export</h2>\n<p>%zu guards and symbols outside any compile, as "
                      "export added them.</p>\n<table><tr><th>kind</th><th>guard / symbol</th><th>user line</th>"
                      "</tr>\n", ne);
  for (size_t i = 0; i < ne; i++)
    {
      fx_buf_puts (out, "<tr><td>");
      fx_report_html_escape (out, es[i].kind);
      fx_buf_puts (out, "</td><td><code>");
      fx_report_html_escape (out, es[i].what ? es[i].what : "-");
      fx_buf_puts (out, "</code></td><td><code>");
      fx_report_html_escape (out, es[i].user_line ? es[i].user_line : "-");
      fx_buf_puts (out, "</code></td></tr>\n");
      if (es[i].fix)
        {
          /* draft_export's failures say what to change, as its report does */
          fx_buf_puts (out, "<tr><td></td><td colspan=\"2\">fix: ");
          fx_report_html_escape (out, es[i].fix);
          fx_buf_puts (out, "</td></tr>\n");
        }
    }
  fx_buf_puts (out, "</table>\n");
  return FX_OK;
}
