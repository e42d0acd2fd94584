/* fxw-sidebar-item.c: sidebar rows; the tree is GListStores of items, shown through a GtkTreeListModel. */
#define G_LOG_DOMAIN "fxw-sidebar-item"

#include "fx-config.h"

#include "fxw-sidebar-item.h"

G_DEFINE_FINAL_TYPE (FxwSidebarItem, fxw_sidebar_item, G_TYPE_OBJECT)

/* One finalize, no dispose: a row refers to nothing that refers back to it. */
static void
fxw_sidebar_item_finalize (GObject *object)
{
  FxwSidebarItem *self = FXW_SIDEBAR_ITEM (object);

  g_clear_pointer (&self->title, g_free);
  g_clear_pointer (&self->subtitle, g_free);
  g_clear_pointer (&self->status, g_free);
  g_clear_pointer (&self->guards, g_free);
  g_clear_object (&self->children);
  g_clear_object (&self->graph);
  g_clear_object (&self->kernels);
  g_clear_object (&self->runs);
  g_clear_object (&self->fusion_groups);
  G_OBJECT_CLASS (fxw_sidebar_item_parent_class)->finalize (object);
}

static void
fxw_sidebar_item_class_init (FxwSidebarItemClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fxw_sidebar_item_finalize;
}

static void
fxw_sidebar_item_init (FxwSidebarItem *self)
{
  self->rank = -1;
}

FxwSidebarItem *
fxw_sidebar_item_new (FxwSidebarItemKind kind, const char *title, const char *subtitle, const char *status)
{
  FxwSidebarItem *self = g_object_new (FXW_TYPE_SIDEBAR_ITEM, NULL);

  self->kind = kind;
  self->title = g_strdup (title ? title : "");
  self->subtitle = g_strdup (subtitle ? subtitle : "");
  self->status = g_strdup (status ? status : "");
  if (kind != FXW_SIDEBAR_ITEM_STAGE)
    self->children = G_LIST_MODEL (g_list_store_new (FXW_TYPE_SIDEBAR_ITEM));
  return self;
}

FxwSidebarItem *
fxw_sidebar_item_new_stage (FxwSidebarItem *compile, const char *title, const char *subtitle, FxwGraph *graph)
{
  FxwSidebarItem *self = fxw_sidebar_item_new (FXW_SIDEBAR_ITEM_STAGE, title, subtitle, NULL);

  g_return_val_if_fail (compile->kind == FXW_SIDEBAR_ITEM_COMPILE, self);
  g_set_object (&self->graph, graph);
  self->guards = g_strdup (compile->guards);
  g_set_object (&self->kernels, compile->kernels);
  g_set_object (&self->runs, compile->runs);
  g_set_object (&self->fusion_groups, compile->fusion_groups);
  self->compile_row = compile->compile_row;
  self->rank = compile->rank;
  return self;
}

void
fxw_sidebar_item_append (FxwSidebarItem *self, FxwSidebarItem *child)
{
  g_return_if_fail (self->children != NULL);
  g_list_store_append (G_LIST_STORE (self->children), child);
}

FxwSidebarItem *
fxw_sidebar_item_find_stage (FxwSidebarItem *self)
{
  if (self->kind == FXW_SIDEBAR_ITEM_STAGE)
    return self;
  for (guint i = 0; i < g_list_model_get_n_items (self->children); i++)
    {
      g_autoptr(FxwSidebarItem) child = g_list_model_get_item (self->children, i);
      FxwSidebarItem *found = fxw_sidebar_item_find_stage (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
text_matches (const char *text, const char *query_folded)
{
  g_autofree char *folded = g_utf8_casefold (text, -1);

  return strstr (folded, query_folded) != NULL;
}

gboolean
fxw_sidebar_item_matches (FxwSidebarItem *self, const char *query_folded)
{
  if (query_folded == NULL || *query_folded == '\0')
    return TRUE;
  if (text_matches (self->title, query_folded) || text_matches (self->subtitle, query_folded)
      || text_matches (self->status, query_folded))
    return TRUE;
  for (guint i = 0; self->children && i < g_list_model_get_n_items (self->children); i++)
    {
      g_autoptr(FxwSidebarItem) child = g_list_model_get_item (self->children, i);

      if (fxw_sidebar_item_matches (child, query_folded))
        return TRUE;
    }
  return FALSE;
}
