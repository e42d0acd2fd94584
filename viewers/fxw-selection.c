/* fxw-selection.c: the shared selection; views bind to its properties instead of talking to each other. */
#define G_LOG_DOMAIN "fxw-selection"

#include "fx-config.h"

#include "fxw-properties.h"
#include "fxw-selection.h"

struct _FxwSelection
{
  GObject parent_instance;
  FxwGraph *graph;
  FxwNode *node;
  GHashTable *highlight;  /* owned names */
};

enum { PROP_0, PROP_GRAPH, PROP_NODE, N_PROPS };
enum { HIGHLIGHT_CHANGED, N_SIGNALS };
static GParamSpec *properties[N_PROPS];
static const FxwPropertyAccess property_access[N_PROPS] = {
  [PROP_GRAPH] = FXW_PROPERTY (fxw_selection_get_graph, fxw_selection_set_graph),
  [PROP_NODE] = FXW_PROPERTY (fxw_selection_get_node, fxw_selection_set_node),
};
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (FxwSelection, fxw_selection, G_TYPE_OBJECT)

static void mark_nodes (FxwSelection *self, gboolean on);

static void
fxw_selection_dispose (GObject *object)
{
  FxwSelection *self = FXW_SELECTION (object);

  g_clear_object (&self->node);
  if (self->highlight != NULL)
    mark_nodes (self, FALSE);
  g_clear_object (&self->graph);
  G_OBJECT_CLASS (fxw_selection_parent_class)->dispose (object);
}

static void
fxw_selection_finalize (GObject *object)
{
  FxwSelection *self = FXW_SELECTION (object);

  g_clear_pointer (&self->highlight, g_hash_table_unref);
  G_OBJECT_CLASS (fxw_selection_parent_class)->finalize (object);
}

static void
fxw_selection_class_init (FxwSelectionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = fxw_selection_dispose;
  object_class->finalize = fxw_selection_finalize;

  properties[PROP_GRAPH] =
    g_param_spec_object ("graph", NULL, NULL, FXW_TYPE_GRAPH,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_NODE] =
    g_param_spec_object ("node", NULL, NULL, FXW_TYPE_NODE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  fxw_object_class_install_properties (object_class, N_PROPS, properties, property_access);

  /**
   * FxwSelection::highlight-changed:
   *
   * The set of highlighted nodes changed (a kernel was picked or dropped).
   */
  signals[HIGHLIGHT_CHANGED] =
    g_signal_new ("highlight-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
fxw_selection_init (FxwSelection *self)
{
  self->highlight = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

FxwSelection *
fxw_selection_new (void)
{
  return g_object_new (FXW_TYPE_SELECTION, NULL);
}

/* Returns: (transfer none) (nullable) */
FxwGraph *
fxw_selection_get_graph (FxwSelection *self)
{
  g_return_val_if_fail (FXW_IS_SELECTION (self), NULL);
  return self->graph;
}

void
fxw_selection_set_graph (FxwSelection *self, FxwGraph *graph)
{
  g_return_if_fail (FXW_IS_SELECTION (self));
  g_return_if_fail (graph == NULL || FXW_IS_GRAPH (graph));

  if (self->graph == graph)
    return;
  /* Drop the node first so no view sees a node of another graph. */
  fxw_selection_set_node (self, NULL);
  fxw_selection_set_highlight (self, NULL);
  g_set_object (&self->graph, graph);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GRAPH]);
}

/* Returns: (transfer none) (nullable) */
FxwNode *
fxw_selection_get_node (FxwSelection *self)
{
  g_return_val_if_fail (FXW_IS_SELECTION (self), NULL);
  return self->node;
}

void
fxw_selection_set_node (FxwSelection *self, FxwNode *node)
{
  g_return_if_fail (FXW_IS_SELECTION (self));
  g_return_if_fail (node == NULL || FXW_IS_NODE (node));

  if (g_set_object (&self->node, node))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NODE]);
}

gboolean
fxw_selection_select_name (FxwSelection *self, const char *name)
{
  FxwNode *node;

  g_return_val_if_fail (FXW_IS_SELECTION (self), FALSE);

  if (self->graph == NULL || (node = fxw_graph_lookup (self->graph, name)) == NULL)
    return FALSE;
  fxw_selection_set_node (self, node);
  return TRUE;
}

/* The set is kept by name (a kernel names nodes); the nodes of the current graph mirror it in their "highlighted"
   property so list rows can bind to it. */
static void
mark_nodes (FxwSelection *self, gboolean on)
{
  GHashTableIter iter;
  gpointer key;
  FxwNode *node;

  if (self->graph == NULL)
    return;
  g_hash_table_iter_init (&iter, self->highlight);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if ((node = fxw_graph_lookup (self->graph, key)) != NULL)
      fxw_node_set_highlighted (node, on);
}

void
fxw_selection_set_highlight (FxwSelection *self, const char * const *names)
{
  g_return_if_fail (FXW_IS_SELECTION (self));

  if (g_hash_table_size (self->highlight) == 0 && (names == NULL || names[0] == NULL))
    return;
  mark_nodes (self, FALSE);
  g_hash_table_remove_all (self->highlight);
  for (guint i = 0; names != NULL && names[i] != NULL; i++)
    g_hash_table_add (self->highlight, g_strdup (names[i]));
  mark_nodes (self, TRUE);
  g_signal_emit (self, signals[HIGHLIGHT_CHANGED], 0);
}

gboolean
fxw_selection_is_highlighted (FxwSelection *self, const char *name)
{
  g_return_val_if_fail (FXW_IS_SELECTION (self), FALSE);
  return name != NULL && g_hash_table_contains (self->highlight, name);
}

guint
fxw_selection_get_n_highlighted (FxwSelection *self)
{
  g_return_val_if_fail (FXW_IS_SELECTION (self), 0);
  return g_hash_table_size (self->highlight);
}

void
fxw_selection_follow (FxwSelection **slot, FxwSelection *selection, gpointer view, GCallback graph_changed,
                      GCallback node_changed, GCallback highlight_changed)
{
  g_return_if_fail (slot != NULL);

  if (*slot != NULL)
    g_signal_handlers_disconnect_by_data (*slot, view);
  g_set_object (slot, selection);
  if (selection == NULL)
    return;
  if (graph_changed != NULL)
    g_signal_connect_object (selection, "notify::graph", graph_changed, view, G_CONNECT_SWAPPED);
  if (node_changed != NULL)
    g_signal_connect_object (selection, "notify::node", node_changed, view, G_CONNECT_SWAPPED);
  if (highlight_changed != NULL)
    g_signal_connect_object (selection, "highlight-changed", highlight_changed, view, G_CONNECT_SWAPPED);
}
