/* fxw-view.c: FxwView, what the views each did alike: the "selection" property and following it, disposing the
 * template, the page's text and links. */
#define G_LOG_DOMAIN "fxw-viewers"

#include "fx-config.h"

#include "fxw-properties.h"
#include "fxw-view.h"
#include "fxw-viewers.h"

typedef struct
{
  FxwSelection *selection;
  GString *text;
  GHashTable *links;   /* key -> GtkButton (not owned); NULL until the first */
} FxwViewPrivate;

enum { PROP_0, PROP_SELECTION, N_PROPS };
static GParamSpec *properties[N_PROPS];
static const FxwPropertyAccess property_access[N_PROPS] = {
  [PROP_SELECTION] = FXW_PROPERTY (fxw_view_get_selection, fxw_view_set_selection),
};

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (FxwView, fxw_view, GTK_TYPE_WIDGET)

/* The selection's signals, swapped onto the view, reach the class's handlers through these. */
static void
graph_changed_cb (FxwView *self)
{
  FXW_VIEW_GET_CLASS (self)->graph_changed (self);
}

static void
node_changed_cb (FxwView *self)
{
  FXW_VIEW_GET_CLASS (self)->node_changed (self);
}

static void
highlight_changed_cb (FxwView *self)
{
  FXW_VIEW_GET_CLASS (self)->highlight_changed (self);
}

static void
fxw_view_real_selection_changed (FxwView *self)
{
  FxwViewClass *klass = FXW_VIEW_GET_CLASS (self);

  if (fxw_view_get_selection (self) == NULL)
    return;
  if (klass->graph_changed != NULL)
    klass->graph_changed (self);
  else if (klass->node_changed != NULL)
    klass->node_changed (self);
}

static void
fxw_view_dispose (GObject *object)
{
  FxwView *self = FXW_VIEW (object);
  FxwViewPrivate *priv = fxw_view_get_instance_private (self);

  fxw_selection_follow (&priv->selection, NULL, self, NULL, NULL, NULL);
  /* Every view is a final type, with a template of its own but for the graph canvas. */
  fxw_viewers_dispose_template (GTK_WIDGET (self), G_OBJECT_TYPE (self));
  G_OBJECT_CLASS (fxw_view_parent_class)->dispose (object);
}

static void
fxw_view_finalize (GObject *object)
{
  FxwViewPrivate *priv = fxw_view_get_instance_private (FXW_VIEW (object));

  g_string_free (priv->text, TRUE);
  g_clear_pointer (&priv->links, g_hash_table_unref);
  G_OBJECT_CLASS (fxw_view_parent_class)->finalize (object);
}

static void
fxw_view_class_init (FxwViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  fxw_viewers_init ();
  object_class->dispose = fxw_view_dispose;
  object_class->finalize = fxw_view_finalize;
  klass->selection_changed = fxw_view_real_selection_changed;

  properties[PROP_SELECTION] =
    g_param_spec_object ("selection", NULL, NULL, FXW_TYPE_SELECTION,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  fxw_object_class_install_properties (object_class, N_PROPS, properties, property_access);
}

static void
fxw_view_init (FxwView *self)
{
  FxwViewPrivate *priv = fxw_view_get_instance_private (self);

  priv->text = g_string_new (NULL);
}

FxwSelection *
fxw_view_get_selection (FxwView *self)
{
  FxwViewPrivate *priv = fxw_view_get_instance_private (self);

  g_return_val_if_fail (FXW_IS_VIEW (self), NULL);
  return priv->selection;
}

void
fxw_view_set_selection (FxwView *self, FxwSelection *selection)
{
  FxwViewPrivate *priv = fxw_view_get_instance_private (self);
  FxwViewClass *klass;

  g_return_if_fail (FXW_IS_VIEW (self));
  g_return_if_fail (selection == NULL || FXW_IS_SELECTION (selection));

  if (priv->selection == selection)
    return;
  klass = FXW_VIEW_GET_CLASS (self);
  fxw_selection_follow (&priv->selection, selection, self,
                        klass->graph_changed != NULL ? G_CALLBACK (graph_changed_cb) : NULL,
                        klass->node_changed != NULL ? G_CALLBACK (node_changed_cb) : NULL,
                        klass->highlight_changed != NULL ? G_CALLBACK (highlight_changed_cb) : NULL);
  if (klass->selection_changed != NULL)
    klass->selection_changed (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTION]);
}

GString *
fxw_view_get_text (FxwView *self)
{
  FxwViewPrivate *priv = fxw_view_get_instance_private (self);

  g_return_val_if_fail (FXW_IS_VIEW (self), NULL);
  return priv->text;
}

void
fxw_view_add_link (FxwView *self, const char *key, GtkWidget *button)
{
  FxwViewPrivate *priv = fxw_view_get_instance_private (self);

  g_return_if_fail (FXW_IS_VIEW (self));

  if (priv->links == NULL)
    priv->links = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_replace (priv->links, g_strdup (key), button);
}

gboolean
fxw_view_activate_link (FxwView *self, const char *key)
{
  FxwViewPrivate *priv = fxw_view_get_instance_private (self);

  g_return_val_if_fail (FXW_IS_VIEW (self), FALSE);
  return priv->links != NULL && key != NULL && fxw_viewers_click (g_hash_table_lookup (priv->links, key));
}

void
fxw_view_clear_links (FxwView *self)
{
  FxwViewPrivate *priv = fxw_view_get_instance_private (self);

  g_return_if_fail (FXW_IS_VIEW (self));

  if (priv->links != NULL)
    g_hash_table_remove_all (priv->links);
}
