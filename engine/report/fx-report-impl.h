/* fx-report-impl.h: what the report's files share inside the engine. */
#pragma once

#include "fx/report.h"

/* The index's "Ranks" section (nothing for fewer than two ranks); q: the link query ("" or "?token=..."). */
fx_status fx_report_ranks_html (fx_store *store, fx_arena *arena, const char *q, fx_buf *out, fx_diag *diag);
/* The index's "torch.export" section: the guards and unbacked symbols outside any compile (nothing when none). */
fx_status fx_report_export_html (fx_store *store, fx_arena *arena, fx_buf *out, fx_diag *diag);
