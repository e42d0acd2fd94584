/* fxw-sidebar-item.c: sidebar rows; the tree is GListStores of items, shown through a GtkTreeListModel. */
#define G_LOG_DOMAIN "fxw-sidebar-item"

#include "fx-config.h"

#include "fxw-sidebar-item.h"

struct _FxwSidebarItem
{
  GObject parent_instance;
  FxwSidebarItemKind kind;
  char *title;
  char *subtitle;
  char *status;
  char *guards;
  GListStore *children;
  FxwGraph *graph;
  GListModel *kernels;      /* FxwKernel of the compile; shared by its stages */
  GListModel *runs;         /* FxwRun of a stage's graph */
  gboolean kernels_by_name;
  GListModel *fusion_groups; /* FxwFusionGroup of the compile; shared by its stages */
  gint64 compile_row;       /* the compile's row in the workspace (0: none) */
  int rank;                 /* the rank of a multi-rank workspace (-1: none) */
};

G_DEFINE_FINAL_TYPE (FxwSidebarItem, fxw_sidebar_item, G_TYPE_OBJECT)

static void
fxw_sidebar_item_dispose (GObject *object)
{
  FxwSidebarItem *self = FXW_SIDEBAR_ITEM (object);

  g_clear_object (&self->children);
  g_clear_object (&self->graph);
  g_clear_object (&self->kernels);
  g_clear_object (&self->runs);
  g_clear_object (&self->fusion_groups);
  G_OBJECT_CLASS (fxw_sidebar_item_parent_class)->dispose (object);
}

static void
fxw_sidebar_item_finalize (GObject *object)
{
  FxwSidebarItem *self = FXW_SIDEBAR_ITEM (object);

  g_clear_pointer (&self->title, g_free);
  g_clear_pointer (&self->subtitle, g_free);
  g_clear_pointer (&self->status, g_free);
  g_clear_pointer (&self->guards, g_free);
  G_OBJECT_CLASS (fxw_sidebar_item_parent_class)->finalize (object);
}

static void
fxw_sidebar_item_class_init (FxwSidebarItemClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = fxw_sidebar_item_dispose;
  G_OBJECT_CLASS (klass)->finalize = fxw_sidebar_item_finalize;
}

static void
fxw_sidebar_item_init (FxwSidebarItem *self)
{
}

FxwSidebarItem *
fxw_sidebar_item_new (FxwSidebarItemKind kind, const char *title, const char *subtitle)
{
  FxwSidebarItem *self = g_object_new (FXW_TYPE_SIDEBAR_ITEM, NULL);

  self->kind = kind;
  self->title = g_strdup (title ? title : "");
  self->subtitle = g_strdup (subtitle ? subtitle : "");
  self->status = g_strdup ("");
  self->rank = -1;
  if (kind != FXW_SIDEBAR_ITEM_STAGE)
    self->children = g_list_store_new (FXW_TYPE_SIDEBAR_ITEM);
  return self;
}

FxwSidebarItemKind
fxw_sidebar_item_get_kind (FxwSidebarItem *self)
{
  return self->kind;
}

const char *
fxw_sidebar_item_get_title (FxwSidebarItem *self)
{
  return self->title;
}

const char *
fxw_sidebar_item_get_subtitle (FxwSidebarItem *self)
{
  return self->subtitle;
}

const char *
fxw_sidebar_item_get_status (FxwSidebarItem *self)
{
  return self->status;
}

void
fxw_sidebar_item_set_status (FxwSidebarItem *self, const char *status)
{
  g_free (self->status);
  self->status = g_strdup (status ? status : "");
}

const char *
fxw_sidebar_item_get_guards (FxwSidebarItem *self)
{
  return self->guards;
}

void
fxw_sidebar_item_set_guards (FxwSidebarItem *self, const char *text)
{
  g_free (self->guards);
  self->guards = g_strdup (text);
}

GListModel *
fxw_sidebar_item_get_children (FxwSidebarItem *self)
{
  return self->children ? G_LIST_MODEL (self->children) : NULL;
}

void
fxw_sidebar_item_append (FxwSidebarItem *self, FxwSidebarItem *child)
{
  g_return_if_fail (self->children != NULL);
  g_list_store_append (self->children, child);
}

FxwGraph *
fxw_sidebar_item_get_graph (FxwSidebarItem *self)
{
  return self->graph;
}

void
fxw_sidebar_item_set_graph (FxwSidebarItem *self, FxwGraph *graph)
{
  g_set_object (&self->graph, graph);
}

FxwSidebarItem *
fxw_sidebar_item_find_stage (FxwSidebarItem *self)
{
  if (self->kind == FXW_SIDEBAR_ITEM_STAGE)
    return self;
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->children)); i++)
    {
      g_autoptr(FxwSidebarItem) child = g_list_model_get_item (G_LIST_MODEL (self->children), i);
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
  for (guint i = 0; self->children && i < g_list_model_get_n_items (G_LIST_MODEL (self->children)); i++)
    {
      g_autoptr(FxwSidebarItem) child = g_list_model_get_item (G_LIST_MODEL (self->children), i);

      if (fxw_sidebar_item_matches (child, query_folded))
        return TRUE;
    }
  return FALSE;
}

GListModel *
fxw_sidebar_item_get_kernels (FxwSidebarItem *self)
{
  return self->kernels;
}

gboolean
fxw_sidebar_item_get_kernels_by_name (FxwSidebarItem *self)
{
  return self->kernels_by_name;
}

void
fxw_sidebar_item_set_kernels (FxwSidebarItem *self, GListModel *kernels, gboolean by_name)
{
  g_set_object (&self->kernels, kernels);
  self->kernels_by_name = by_name;
}

GListModel *
fxw_sidebar_item_get_runs (FxwSidebarItem *self)
{
  return self->runs;
}

void
fxw_sidebar_item_set_runs (FxwSidebarItem *self, GListModel *runs)
{
  g_set_object (&self->runs, runs);
}

/* Returns: (transfer none) (nullable) */
GListModel *
fxw_sidebar_item_get_fusion_groups (FxwSidebarItem *self)
{
  g_return_val_if_fail (FXW_IS_SIDEBAR_ITEM (self), NULL);
  return self->fusion_groups;
}

void
fxw_sidebar_item_set_fusion_groups (FxwSidebarItem *self, GListModel *groups)
{
  g_return_if_fail (FXW_IS_SIDEBAR_ITEM (self));
  g_set_object (&self->fusion_groups, groups);
}

gint64
fxw_sidebar_item_get_compile_row (FxwSidebarItem *self)
{
  g_return_val_if_fail (FXW_IS_SIDEBAR_ITEM (self), 0);
  return self->compile_row;
}

void
fxw_sidebar_item_set_compile_row (FxwSidebarItem *self, gint64 row)
{
  g_return_if_fail (FXW_IS_SIDEBAR_ITEM (self));
  self->compile_row = row;
}

int
fxw_sidebar_item_get_rank (FxwSidebarItem *self)
{
  g_return_val_if_fail (FXW_IS_SIDEBAR_ITEM (self), -1);
  return self->rank;
}

void
fxw_sidebar_item_set_rank (FxwSidebarItem *self, int rank)
{
  g_return_if_fail (FXW_IS_SIDEBAR_ITEM (self));
  self->rank = rank;
}
