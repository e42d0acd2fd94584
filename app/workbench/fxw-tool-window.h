/* fxw-tool-window.h: the base of the windows that run fxwb in a child process (Run & Compare, Minify). */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define FXW_TYPE_TOOL_WINDOW (fxw_tool_window_get_type ())

G_DECLARE_DERIVABLE_TYPE (FxwToolWindow, fxw_tool_window, FXW, TOOL_WINDOW, AdwWindow)

struct _FxwToolWindowClass
{
  AdwWindowClass parent_class;
};

/* The window's content: a header bar over a column (children 12 px apart) that the subclass fills. */
GtkBox       *fxw_tool_window_get_body        (FxwToolWindow        *self);
void          fxw_tool_window_pack_header     (FxwToolWindow        *self,
                                               GtkWidget            *widget);
/* Starts `fxwb ARGS…` (args NULL-terminated, without the program) by launcher, with a new cancellable for its
   reads; the run before it, if any, is left to finish on its own and its cancellable cancelled. NULL with error
   set when fxwb is not found or does not start. The window force-exits the run under way when it goes. */
GSubprocess  *fxw_tool_window_spawn           (FxwToolWindow        *self,
                                               GSubprocessLauncher  *launcher,
                                               const char * const   *args,
                                               GError              **error);
/* The run under way (NULL: none), and the cancellable of its reads (cancelled when the window goes). */
GSubprocess  *fxw_tool_window_get_process     (FxwToolWindow        *self);
GCancellable *fxw_tool_window_get_cancellable (FxwToolWindow        *self);
/* The run is over: the window lets go of its process. */
void          fxw_tool_window_process_done    (FxwToolWindow        *self);

G_END_DECLS
