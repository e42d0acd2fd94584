/* fxw-document.h: an open document: a folder of FX graphs or one FX code file, as sidebar items with graphs. */
#pragma once

#include <gio/gio.h>

#include "fxw-sidebar-item.h"

G_BEGIN_DECLS

#define FXW_TYPE_DOCUMENT (fxw_document_get_type ())

G_DECLARE_FINAL_TYPE (FxwDocument, fxw_document, FXW, DOCUMENT, GObject)

FxwDocument  *fxw_document_new          (GFile               *file);
GFile        *fxw_document_get_file     (FxwDocument         *self);
const char   *fxw_document_get_title    (FxwDocument         *self);
gboolean      fxw_document_get_busy     (FxwDocument         *self);
double        fxw_document_get_progress (FxwDocument         *self);
/* The last load's error or warnings (a partial load), NULL when all went well. */
const GError *fxw_document_get_error    (FxwDocument         *self);
/* After a load: whether the workspace was opened read-only; the workspace file read (the file opened, or the
   workspace an import wrote; NULL for FX files); a notice to show next to errors (read-only, import warnings). */
gboolean      fxw_document_get_read_only      (FxwDocument *self);
const char   *fxw_document_get_workspace_path (FxwDocument *self);
const char   *fxw_document_get_notice         (FxwDocument *self);
/* FxwSidebarItem roots (frames). */
GListModel   *fxw_document_get_frames   (FxwDocument         *self);
void          fxw_document_load_async   (FxwDocument         *self,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data);
gboolean      fxw_document_load_finish  (FxwDocument         *self,
                                         GAsyncResult        *result,
                                         GError             **error);

G_END_DECLS
