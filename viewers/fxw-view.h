/* fxw-view.h: the viewers' base widget: a page that follows the shared selection, with its text and links for tests. */
#pragma once

#include <gtk/gtk.h>

#include "fxw-selection.h"

G_BEGIN_DECLS

#define FXW_TYPE_VIEW (fxw_view_get_type ())

G_DECLARE_DERIVABLE_TYPE (FxwView, fxw_view, FXW, VIEW, GtkWidget)

/* A view reacts to the selection it follows through these; NULL: not wanted. selection_changed runs when the view
   takes another selection; by default it brings the view up to date as a graph change does (graph_changed, else
   node_changed). The base's dispose lets the selection go and clears the template set by
   fxw_viewers_class_set_template(). */
struct _FxwViewClass
{
  GtkWidgetClass parent_class;

  void (*selection_changed) (FxwView *self);
  void (*graph_changed)     (FxwView *self);
  void (*node_changed)      (FxwView *self);
  void (*highlight_changed) (FxwView *self);
};

/* Returns: (transfer none) (nullable) */
FxwSelection *fxw_view_get_selection (FxwView      *self);
void          fxw_view_set_selection (FxwView      *self,
                                      FxwSelection *selection);

/* The page (or the part of it that tests read) as text: the view writes it as it builds the page. */
GString      *fxw_view_get_text      (FxwView      *self);
/* The page's links: buttons (not owned) that the app or a test clicks by key, as the user does; a key's later button
   replaces the one before. activate_link() is FALSE when key has none. */
void          fxw_view_add_link      (FxwView      *self,
                                      const char   *key,
                                      GtkWidget    *button);
gboolean      fxw_view_activate_link (FxwView      *self,
                                      const char   *key);
void          fxw_view_clear_links   (FxwView      *self);

G_END_DECLS
