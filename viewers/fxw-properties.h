/* fxw-properties.h: a class's GObject properties served by its public getters and setters, from a table. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* How one property is read and written: get is the type's getter, (self) -> value; set its setter,
   (self, value), NULL for a read-only property. The value's C type follows the pspec's: a pointer for objects,
   boxed types and strings, gboolean, guint, double; only object properties have setters so far. */
typedef struct
{
  GCallback get;
  GCallback set;
} FxwPropertyAccess;

#define FXW_PROPERTY(getter, setter) { G_CALLBACK (getter), G_CALLBACK (setter) }

/* g_object_class_install_properties(), and the class's get_property and set_property dispatch to access[prop_id]
   instead of a switch in each class. */
void fxw_object_class_install_properties (GObjectClass *object_class, guint n_pspecs, GParamSpec **pspecs,
                                          const FxwPropertyAccess *access);

G_END_DECLS
