/* fxw-autocleanups.h: g_autoptr support for the GLib-free engine types, defined once for app/ and viewers/. */
#pragma once

#include <glib.h>

#include "fx/ir.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC (fx_graph, fx_graph_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (fx_arena, fx_arena_free)

static inline void
fxw_buf_clear (fx_buf *buf)
{
  fx_buf_free (buf);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (fx_buf, fxw_buf_clear)
