/* fxw-provenance-map.c: a compile's provenance mappings held with their arena; chains are computed into a second
   arena that grows with the selections made (a few hundred bytes each) and goes with the object. */
#define G_LOG_DOMAIN "fxw-provenance-map"

#include "fx-config.h"

#include "fxw-provenance-map.h"

struct _FxwProvenanceMap
{
  GObject parent_instance;
  fx_arena *arena;        /* the map */
  fx_arena *chains;       /* the chains answered */
  fx_provenance_map *map;
  gint64 compile_row;
};

G_DEFINE_FINAL_TYPE (FxwProvenanceMap, fxw_provenance_map, G_TYPE_OBJECT)

static void
fxw_provenance_map_finalize (GObject *object)
{
  FxwProvenanceMap *self = FXW_PROVENANCE_MAP (object);

  g_clear_pointer (&self->arena, fx_arena_free);
  g_clear_pointer (&self->chains, fx_arena_free);
  G_OBJECT_CLASS (fxw_provenance_map_parent_class)->finalize (object);
}

static void
fxw_provenance_map_class_init (FxwProvenanceMapClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fxw_provenance_map_finalize;
}

static void
fxw_provenance_map_init (FxwProvenanceMap *self)
{
}

FxwProvenanceMap *
fxw_provenance_map_load (const char *path, gint64 compile_row, GError **error)
{
  fx_store *store = NULL;
  fx_arena *arena = NULL;
  fx_provenance_map *map = NULL;
  FxwProvenanceMap *self;
  fx_diag diag;

  g_return_val_if_fail (path != NULL, NULL);
  fx_diag_clear (&diag);
  if (fx_store_open_readonly (path, &store, &diag) != FX_OK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", diag.message);
      return NULL;
    }
  arena = fx_arena_new ();
  if (fx_provenance_load (store, compile_row, arena, &map, &diag) != FX_OK || map == NULL)
    {
      /* No mappings is no error: most compiles have none. */
      if (map == NULL && diag.code == FX_OK)
        g_debug ("compile %" G_GINT64_FORMAT " has no provenance mappings", compile_row);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", diag.message);
      fx_arena_free (arena);
      fx_store_close (store);
      return NULL;
    }
  fx_store_close (store);
  self = g_object_new (FXW_TYPE_PROVENANCE_MAP, NULL);
  self->arena = arena;
  self->chains = fx_arena_new ();
  self->map = map;
  self->compile_row = compile_row;
  return self;
}

gint64
fxw_provenance_map_get_compile_row (FxwProvenanceMap *self)
{
  g_return_val_if_fail (FXW_IS_PROVENANCE_MAP (self), 0);
  return self->compile_row;
}

const fx_provenance_map *
fxw_provenance_map_get_map (FxwProvenanceMap *self)
{
  g_return_val_if_fail (FXW_IS_PROVENANCE_MAP (self), NULL);
  return self->map;
}

gboolean
fxw_provenance_map_chain (FxwProvenanceMap *self, const char *node, fx_provenance *out)
{
  fx_diag diag;

  g_return_val_if_fail (FXW_IS_PROVENANCE_MAP (self), FALSE);
  fx_diag_clear (&diag);
  return fx_provenance_map_chain (self->map, node, self->chains, out, &diag) == FX_OK;
}

const char *
fxw_provenance_map_get_code (FxwProvenanceMap *self, const char *code)
{
  g_return_val_if_fail (FXW_IS_PROVENANCE_MAP (self), NULL);
  return fx_provenance_map_code (self->map, code);
}
