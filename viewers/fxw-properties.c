/* fxw-properties.c: get_property and set_property for the classes whose properties are their getters and setters. */
#define G_LOG_DOMAIN "fxw-viewers"

#include "fx-config.h"

#include "fxw-properties.h"

static G_DEFINE_QUARK (fxw-property-access, access)

static void
property_get (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  const FxwPropertyAccess *a = g_param_spec_get_qdata (pspec, access_quark ());

  if (a == NULL || a->get == NULL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  switch (G_TYPE_FUNDAMENTAL (G_PARAM_SPEC_VALUE_TYPE (pspec)))
    {
    case G_TYPE_OBJECT:
      g_value_set_object (value, ((gpointer (*) (gpointer)) a->get) (object));
      break;
    case G_TYPE_BOXED:
      g_value_set_boxed (value, ((gconstpointer (*) (gpointer)) a->get) (object));
      break;
    case G_TYPE_STRING:
      g_value_set_string (value, ((const char *(*) (gpointer)) a->get) (object));
      break;
    case G_TYPE_BOOLEAN:
      g_value_set_boolean (value, ((gboolean (*) (gpointer)) a->get) (object));
      break;
    case G_TYPE_UINT:
      g_value_set_uint (value, ((guint (*) (gpointer)) a->get) (object));
      break;
    case G_TYPE_DOUBLE:
      g_value_set_double (value, ((double (*) (gpointer)) a->get) (object));
      break;
    default:
      g_assert_not_reached ();
    }
}

static void
property_set (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  const FxwPropertyAccess *a = g_param_spec_get_qdata (pspec, access_quark ());

  if (a == NULL || a->set == NULL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  /* Only objects are written through a setter so far (a view's selection, the selection's graph and node). */
  g_return_if_fail (G_TYPE_FUNDAMENTAL (G_PARAM_SPEC_VALUE_TYPE (pspec)) == G_TYPE_OBJECT);
  ((void (*) (gpointer, gpointer)) a->set) (object, g_value_get_object (value));
}

void
fxw_object_class_install_properties (GObjectClass *object_class, guint n_pspecs, GParamSpec **pspecs,
                                     const FxwPropertyAccess *access)
{
  /* pspecs[0] is the unused PROP_0, as g_object_class_install_properties() wants it. */
  for (guint i = 1; i < n_pspecs; i++)
    g_param_spec_set_qdata (pspecs[i], access_quark (), (gpointer) &access[i]);
  object_class->get_property = property_get;
  object_class->set_property = property_set;
  g_object_class_install_properties (object_class, n_pspecs, pspecs);
}
