/* fxw-provenance-map.h: FxwProvenanceMap, a compile's Inductor provenance mappings and stored code (fx/provenance.h)
   loaded once, for the provenance pane to follow a node to its post-grad nodes and kernels on every selection. */
#pragma once

#include <gio/gio.h>

#include "fx/provenance.h"

G_BEGIN_DECLS

#define FXW_TYPE_PROVENANCE_MAP (fxw_provenance_map_get_type ())

G_DECLARE_FINAL_TYPE (FxwProvenanceMap, fxw_provenance_map, FXW, PROVENANCE_MAP, GObject)

/* Loads the mappings of compile_row from the workspace at path (any thread). NULL with no error when the compile has
   none. */
FxwProvenanceMap        *fxw_provenance_map_load      (const char        *path,
                                                       gint64             compile_row,
                                                       GError           **error);
gint64                   fxw_provenance_map_get_compile_row (FxwProvenanceMap *self);
const fx_provenance_map *fxw_provenance_map_get_map   (FxwProvenanceMap  *self);
/* The chain of node ("pre_grad:NAME", "post_grad:NAME", a kernel); its strings live as long as self. FALSE when the
   mappings do not have it. */
gboolean                 fxw_provenance_map_chain     (FxwProvenanceMap  *self,
                                                       const char        *node,
                                                       fx_provenance     *out);
/* A stored code ("inductor_aot_wrapper_code", ...); NULL when none. */
const char              *fxw_provenance_map_get_code  (FxwProvenanceMap  *self,
                                                       const char        *code);

G_END_DECLS
