/* fxw-workspace-page.h: a view whose page is read from a workspace in a thread (the Summary and Ranks views). */
#pragma once

#include "fx/common.h"
#include "fxw-view.h"

G_BEGIN_DECLS

#define FXW_TYPE_WORKSPACE_PAGE (fxw_workspace_page_get_type ())

G_DECLARE_DERIVABLE_TYPE (FxwWorkspacePage, fxw_workspace_page, FXW, WORKSPACE_PAGE, FxwView)

/* read() makes the data off the main thread, its strings in arena, which the page frees once it has shown the data
   (NULL and an error when it fails); show() fills the emptied column and text from it, FALSE when there is nothing to
   show; clear() drops what the view keeps of the page it showed besides its links (NULL: nothing); free() drops the
   data but for what is in the arena, without reading it (GTask may drop a cancelled read's data after the arena). The
   stack shows "empty" before a read, when it failed and when show() found nothing, else the page named what. A new
   read cancels the one before it; a result arriving after another start is dropped. */
struct _FxwWorkspacePageClass
{
  FxwViewClass parent_class;

  const char *what;                  /* the stack's page of the data, and the debug message of a failed read */
  gpointer (*read)  (const char *path, fx_arena *arena, GCancellable *cancellable, GError **error);
  gboolean (*show)  (FxwWorkspacePage *self, gpointer data);
  void     (*clear) (FxwWorkspacePage *self);
  GDestroyNotify free;
};

/* The view's template (as fxw_viewers_class_set_template()); its "stack" and "column" are the page's. */
void       fxw_workspace_page_class_set_template (GtkWidgetClass *widget_class, const char *ui_file);
/* Reads the workspace at path (NULL: none) and shows it. */
void       fxw_workspace_page_set_workspace (FxwWorkspacePage *self, const char *path);
/* The last read has finished (or there was none to make). */
gboolean   fxw_workspace_page_get_loaded    (FxwWorkspacePage *self);
/* The page as text once read, NULL before or when empty. */
char      *fxw_workspace_page_dup_text      (FxwWorkspacePage *self);

/* For show(): the page's column (its text is the view's, fxw_view_get_text()). */
GtkBox    *fxw_workspace_page_get_column    (FxwWorkspacePage *self);
/* Appends widget (NULL: none) to the column and the line printf'd from format (NULL: none) to the text. */
void       fxw_workspace_page_append        (FxwWorkspacePage *self, GtkWidget *widget, const char *format, ...)
                                             G_GNUC_PRINTF (3, 4);
/* A line of the page: a label in the column (as fxw_viewers_add_label()) and the line in the text. */
GtkWidget *fxw_workspace_page_add_line      (FxwWorkspacePage *self, const char *line, const char *css_class);
/* A section's heading: a line with space above it, in the text too. */
GtkWidget *fxw_workspace_page_add_heading   (FxwWorkspacePage *self, const char *heading);

G_END_DECLS
