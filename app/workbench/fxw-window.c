/* fxw-window.c: the main window: sidebar, views, provenance pane, error banner; opening files off the main thread. */
#define G_LOG_DOMAIN "fxw-window"

#include "fx-config.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <gtksourceview/gtksource.h>

#include "fxw-minify-window.h"
#include "fxw-window.h"
#include "fxw-run-dialog.h"
#include "fxw-engine.h"

#include "fx/report.h"
#include "fx/store.h"
#include "fxw-graph-canvas.h"

#include <stdlib.h>
#include <string.h>

#include "fx/diff.h"
#include "fx/store.h"

/* What to select when the load under way is done (after Run & Compare reopens the workspace). */
typedef struct
{
  char *compile, *stage, *view;
  int rank;                        /* the rank of compile (-1: any) */
  int filter;                      /* the rank the sidebar listed (-1: all) */
} PendingSelection;

static void
pending_selection_clear (PendingSelection *pending)
{
  g_clear_pointer (&pending->compile, g_free);
  g_clear_pointer (&pending->stage, g_free);
  g_clear_pointer (&pending->view, g_free);
  pending->rank = pending->filter = -1;
}

/* The objects of fxw-window.ui the window keeps: each one a field of FxwWindow, bound to the object of that id. */
#define FXW_WINDOW_TEMPLATE_CHILDREN(X) \
  X (GtkSpinner, spinner)                  \
  X (AdwViewSwitcherTitle, switcher_title) \
  X (GtkRevealer, progress_revealer)       \
  X (GtkProgressBar, progress_bar)         \
  X (GtkRevealer, banner_revealer)         \
  X (GtkLabel, banner_label)               \
  X (GtkSearchEntry, sidebar_search)       \
  X (GtkListView, sidebar_list)            \
  X (AdwViewStack, view_stack)             \
  X (FxwTableView, table_view)             \
  X (FxwGraphView, graph_view)             \
  X (FxwCodeView, code_view)               \
  X (FxwProvenancePane, provenance_pane)   \
  X (GtkPaned, inner_paned)                \
  X (GtkStack, guards_stack)               \
  X (GtkTextView, guards_text)             \
  X (GMenu, recent_menu)                   \
  X (FxwKernelsView, kernels_view)         \
  X (FxwTrainingView, training_view)       \
  X (AdwViewStackPage, training_page)      \
  X (FxwCompareView, compare_view)         \
  X (FxwDiffView, diff_view)               \
  X (FxwSummaryView, summary_view)         \
  X (FxwRanksView, ranks_view)             \
  X (AdwViewStackPage, ranks_page)         \
  X (GtkDropDown, rank_dropdown)           \
  X (GtkStringList, rank_names)            \
  X (GtkButton, compare_previous_button)

struct _FxwWindow
{
  AdwApplicationWindow parent_instance;

#define FXW_WINDOW_FIELD(type, name) type *name;
  FXW_WINDOW_TEMPLATE_CHILDREN (FXW_WINDOW_FIELD)
#undef FXW_WINDOW_FIELD

  FxwDocument *document;
  FxwSelection *selection;
  GCancellable *load_cancellable;
  GtkTreeListModel *tree_model;
  GtkFilterListModel *sidebar_filter;
  GtkSingleSelection *sidebar_selection;
  GSettings *settings;
  char *search_folded;

  GArray *ranks;                   /* int: the ranks of the document, in the dropdown's order after "All ranks" */
  int rank_filter;                 /* the rank the sidebar lists (-1: all) */
  gboolean updating_ranks;         /* the dropdown is being refilled: its notify is no choice of the user's */
  FxwSidebarItem *current_stage;   /* the stage on show */
  FxwSidebarItem *current_item;    /* the sidebar row selected (a frame, compile or stage) */
  FxwProvenanceMap *provenance;    /* the Inductor provenance mappings of the compile last loaded (NULL: none) */
  gint64 provenance_row;           /* the compile they were looked up for (0: none) */
  GCancellable *provenance_cancellable;
  FxwSidebarItem *menu_source;     /* the row a "Diff with…" menu was opened on */
  GPtrArray *menu_targets;         /* FxwSidebarItem: the menu's "Diff with" entries */
  GCancellable *diff_cancellable;
  char *dismissed_notice;          /* the document notice the user dismissed: not shown again with later texts */
  PendingSelection pending;
  FxwRunDialog *run_dialog;
  /* Follow mode: `fxwb serve --follow` imports a growing trace folder into follow_workspace; a timer reopens the
     workspace when it changed, keeping the selection. */
  GSubprocess *follow_proc;
  char *follow_workspace, *follow_folder;
  guint follow_timer;
  char *follow_signature;       /* size and mtime of the workspace and its WAL at the last reload */
  FxwDocument *follow_next;     /* the reload under way: shown only once it is loaded, so the sidebar never empties */
  GCancellable *follow_cancellable;
};

G_DEFINE_FINAL_TYPE (FxwWindow, fxw_window, ADW_TYPE_APPLICATION_WINDOW)

static void
show_banner (FxwWindow *self, const char *text)
{
  /* The document's notice (read-only, import warnings) stays with whatever else is shown. */
  const char *notice = self->document != NULL ? fxw_document_get_notice (self->document) : NULL;
  g_autofree char *both = NULL;

  if (notice != NULL && g_strcmp0 (notice, self->dismissed_notice) == 0)
    notice = NULL;

  GtkWidget *banner = gtk_revealer_get_child (self->banner_revealer);

  /* A notice alone (read-only, import warnings) is a warning, not an error. */
  if (notice != NULL && *notice && !fxw_document_get_busy (self->document) && (text == NULL || !*text))
    gtk_widget_add_css_class (banner, "notice");
  else
    gtk_widget_remove_css_class (banner, "notice");
  if (notice != NULL && *notice && !fxw_document_get_busy (self->document))
    text = both = text != NULL && *text ? g_strconcat (notice, "\n", text, NULL) : g_strdup (notice);
  gtk_label_set_label (self->banner_label, text ? text : "");
  gtk_revealer_set_reveal_child (self->banner_revealer, text != NULL && *text);
}

/* ---------------------------------------------------------------- sidebar */

static GListModel *
create_child_model (gpointer item, gpointer user_data)
{
  GListModel *children = FXW_SIDEBAR_ITEM (item)->children;

  return children ? g_object_ref (children) : NULL;
}

static gboolean
sidebar_filter_func (gpointer item, gpointer user_data)
{
  FxwWindow *self = user_data;
  FxwSidebarItem *sitem = gtk_tree_list_row_get_item (item);
  gboolean match = (self->rank_filter < 0 || sitem->rank == self->rank_filter)
                   && fxw_sidebar_item_matches (sitem, self->search_folded);

  g_object_unref (sitem);
  return match;
}

static void
sidebar_search_changed_cb (FxwWindow *self)
{
  GtkFilter *filter = gtk_filter_list_model_get_filter (self->sidebar_filter);

  g_free (self->search_folded);
  self->search_folded = g_utf8_casefold (gtk_editable_get_text (GTK_EDITABLE (self->sidebar_search)), -1);
  gtk_filter_changed (filter, GTK_FILTER_CHANGE_DIFFERENT);
}

static const char *
status_icon (const char *status)
{
  if (g_str_equal (status, "failed"))
    return "dialog-error-symbolic";
  if (g_str_equal (status, "graph-break"))
    return "media-playback-pause-symbolic";
  if (g_str_equal (status, "recompiled"))
    return "view-refresh-symbolic";
  if (g_str_equal (status, "ok"))
    return "emblem-ok-symbolic";
  return NULL;
}

/* What a status token means, for the icon's tooltip. */
static const char *
status_description (const char *status)
{
  if (g_str_equal (status, "failed"))
    return _("The compile failed");
  if (g_str_equal (status, "graph-break"))
    return _("Stopped at a graph break: the rest of the frame runs in Python or in a resume function");
  if (g_str_equal (status, "recompiled"))
    return _("Recompiled: a guard of an earlier compile failed");
  if (g_str_equal (status, "ok"))
    return _("Compiled");
  return status;
}

static void sidebar_context_cb (GtkGestureClick *gesture, int n_press, double x, double y, gpointer user_data);

static void
sidebar_setup_cb (GtkSignalListItemFactory *factory, GtkListItem *list_item, gpointer user_data)
{
  GtkGesture *context = gtk_gesture_click_new ();
  GtkWidget *menu;
  GtkWidget *expander = gtk_tree_expander_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *labels = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *title = gtk_label_new (NULL);
  GtkWidget *subtitle = gtk_label_new (NULL);
  GtkWidget *icon = gtk_image_new ();

  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_label_set_ellipsize (GTK_LABEL (title), PANGO_ELLIPSIZE_MIDDLE);
  gtk_label_set_xalign (GTK_LABEL (subtitle), 0);
  gtk_label_set_ellipsize (GTK_LABEL (subtitle), PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class (subtitle, "caption");
  gtk_widget_add_css_class (subtitle, "dim-label");
  gtk_widget_set_hexpand (labels, TRUE);
  gtk_box_append (GTK_BOX (labels), title);
  gtk_box_append (GTK_BOX (labels), subtitle);
  gtk_box_append (GTK_BOX (box), labels);
  gtk_box_append (GTK_BOX (box), icon);
  gtk_tree_expander_set_child (GTK_TREE_EXPANDER (expander), box);
  gtk_list_item_set_child (list_item, expander);
  /* A right click opens the row's "Diff with…" menu. */
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (context), GDK_BUTTON_SECONDARY);
  g_object_set_data (G_OBJECT (context), "fxw-list-item", list_item);
  menu = gtk_popover_menu_new_from_model (NULL);
  gtk_popover_set_has_arrow (GTK_POPOVER (menu), FALSE);
  gtk_widget_set_parent (menu, box);
  g_object_set_data (G_OBJECT (context), "fxw-popover", menu);
  g_signal_connect (context, "pressed", G_CALLBACK (sidebar_context_cb), user_data);
  gtk_widget_add_controller (box, GTK_EVENT_CONTROLLER (context));
}

static void
sidebar_bind_cb (GtkSignalListItemFactory *factory, GtkListItem *list_item, gpointer user_data)
{
  GtkTreeListRow *row = gtk_list_item_get_item (list_item);
  GtkWidget *expander = gtk_list_item_get_child (list_item);
  GtkWidget *box = gtk_tree_expander_get_child (GTK_TREE_EXPANDER (expander));
  GtkWidget *labels = gtk_widget_get_first_child (box);
  GtkWidget *title = gtk_widget_get_first_child (labels);
  GtkWidget *subtitle = gtk_widget_get_next_sibling (title);
  GtkWidget *icon = gtk_widget_get_next_sibling (labels);
  g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);
  const char *status = item->status;
  const char *icon_name = status_icon (status);

  gtk_tree_expander_set_list_row (GTK_TREE_EXPANDER (expander), row);
  gtk_label_set_label (GTK_LABEL (title), item->title);
  gtk_label_set_label (GTK_LABEL (subtitle), item->subtitle);
  gtk_widget_set_visible (subtitle, *item->subtitle != '\0');
  gtk_image_set_from_icon_name (GTK_IMAGE (icon), icon_name);
  gtk_widget_set_visible (icon, icon_name != NULL);
  gtk_widget_set_tooltip_text (icon, status_description (status));
  if (item->kind == FXW_SIDEBAR_ITEM_FRAME)
    gtk_widget_add_css_class (title, "heading");
  else
    gtk_widget_remove_css_class (title, "heading");
}

/* ---------------------------------------------------------------- diff */

typedef struct
{
  char *path;                 /* the workspace; NULL for a graph diff */
  gint64 row_a, row_b;
  FxwGraph *graph_a, *graph_b;  /* a graph diff: the stages' graphs */
  char *label_a, *label_b;
} DiffJob;

static void
diff_job_free (DiffJob *job)
{
  g_free (job->path);
  g_clear_object (&job->graph_a);
  g_clear_object (&job->graph_b);
  g_free (job->label_a);
  g_free (job->label_b);
  g_free (job);
}

static void
diff_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  DiffJob *job = task_data;
  fx_diff *diff = fx_diff_new (job->label_a, job->label_b);
  fx_diag diag;
  fx_status st;

  fx_diag_clear (&diag);
  if (job->path == NULL)
    st = fx_diff_graphs (diff, fxw_graph_get_graph (job->graph_a), fxw_graph_get_graph (job->graph_b), NULL, NULL,
                         &diag);
  else
    {
      fx_store *store = NULL;

      st = fx_store_open_readonly (job->path, &store, &diag);
      if (st == FX_OK)
        st = fx_diff_compiles (diff, store, job->row_a, store, job->row_b, NULL, &diag);
      if (store != NULL)
        fx_store_close (store);
    }
  if (st != FX_OK)
    {
      fx_diff_free (diff);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", diag.message);
      return;
    }
  g_task_return_pointer (task, diff, (GDestroyNotify) fx_diff_free);
}

static void
diff_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FxwWindow *self = FXW_WINDOW (source);
  DiffJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  fx_diff *diff = g_task_propagate_pointer (G_TASK (result), &error);

  if (error != NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        fxw_diff_view_set_error (self->diff_view, error->message);
      return;
    }
  fxw_diff_view_set_diff (self->diff_view, diff, (GObject *) job->graph_a, (GObject *) job->graph_b);
  g_signal_emit_by_name (self, "diff-done");
}

static char *
item_label (FxwWindow *self, FxwSidebarItem *item)
{
  FxwGraph *graph = item->graph;

  if (item->kind == FXW_SIDEBAR_ITEM_STAGE && graph != NULL)
    return g_strdup (fxw_graph_get_title (graph));
  return g_strdup (item->title);
}

/* Computes job's diff off the main thread into the Diff view, which is shown. */
static void
start_diff (FxwWindow *self, DiffJob *job)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *busy = NULL;

  /* translators: shown while a diff is computed: "Comparing [0/0] with [0/1]…" */
  busy = g_strdup_printf (_("Comparing %s with %s…"), job->label_a, job->label_b);
  fxw_diff_view_set_busy (self->diff_view, busy);
  fxw_window_set_view (self, "diff");
  g_cancellable_cancel (self->diff_cancellable);
  g_clear_object (&self->diff_cancellable);
  self->diff_cancellable = g_cancellable_new ();
  task = g_task_new (self, self->diff_cancellable, diff_done_cb, NULL);
  g_task_set_source_tag (task, fxw_window_diff_items);
  g_task_set_task_data (task, job, (GDestroyNotify) diff_job_free);
  g_task_run_in_thread (task, diff_thread);
}

gboolean
fxw_window_diff_compile_rows (FxwWindow *self, gint64 row_a, gint64 row_b, const char *label_a, const char *label_b)
{
  const char *path = self->document != NULL ? fxw_document_get_workspace_path (self->document) : NULL;
  DiffJob *job;

  g_return_val_if_fail (FXW_IS_WINDOW (self), FALSE);
  if (path == NULL || row_a <= 0 || row_b <= 0)
    return FALSE;
  job = g_new0 (DiffJob, 1);
  job->path = g_strdup (path);
  job->row_a = row_a;
  job->row_b = row_b;
  job->label_a = g_strdup (label_a);
  job->label_b = g_strdup (label_b);
  start_diff (self, job);
  return TRUE;
}

/* Diffs two sidebar rows: two compiles of a workspace (the compile diff), else the graphs of two stages. */
gboolean
fxw_window_diff_items (FxwWindow *self, FxwSidebarItem *a, FxwSidebarItem *b)
{
  const char *path = self->document != NULL ? fxw_document_get_workspace_path (self->document) : NULL;
  DiffJob *job;

  g_return_val_if_fail (FXW_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (FXW_IS_SIDEBAR_ITEM (a) && FXW_IS_SIDEBAR_ITEM (b), FALSE);

  job = g_new0 (DiffJob, 1);
  job->label_a = item_label (self, a);
  job->label_b = item_label (self, b);
  if (a->kind == FXW_SIDEBAR_ITEM_COMPILE && b->kind == FXW_SIDEBAR_ITEM_COMPILE
      && path != NULL && a->compile_row > 0 && b->compile_row > 0)
    {
      job->path = g_strdup (path);
      job->row_a = a->compile_row;
      job->row_b = b->compile_row;
    }
  else
    {
      FxwSidebarItem *sa = fxw_sidebar_item_find_stage (a), *sb = fxw_sidebar_item_find_stage (b);

      if (sa == NULL || sb == NULL || sa->graph == NULL || sb->graph == NULL)
        {
          diff_job_free (job);
          return FALSE;
        }
      job->graph_a = g_object_ref (sa->graph);
      job->graph_b = g_object_ref (sb->graph);
    }
  start_diff (self, job);
  return TRUE;
}

/* The compile a row belongs to: itself, or the compile holding a stage. */
static FxwSidebarItem *find_compile_of (FxwWindow *self, FxwSidebarItem *stage);

static FxwSidebarItem *
compile_of_item (FxwWindow *self, FxwSidebarItem *item)
{
  if (item == NULL)
    return NULL;
  if (item->kind == FXW_SIDEBAR_ITEM_COMPILE)
    return item;
  if (item->kind == FXW_SIDEBAR_ITEM_STAGE)
    return find_compile_of (self, item);
  return NULL;
}

/* The compile this recompile replaced: "[f/n]" -> "[f/n-1]" among the compiles of the same frame. */
static FxwSidebarItem *
previous_compile (FxwWindow *self, FxwSidebarItem *compile)
{
  GListModel *frames = self->document != NULL ? fxw_document_get_frames (self->document) : NULL;
  const char *title = compile ? compile->title : NULL;
  const char *slash = title ? strrchr (title, '/') : NULL;
  g_autofree char *want = NULL;
  long n;

  if (slash == NULL || title[0] != '[')
    return NULL;
  n = strtol (slash + 1, NULL, 10);
  if (n <= 0)
    return NULL;
  want = g_strdup_printf ("%.*s/%ld]", (int) (slash - title), title, n - 1);
  for (guint f = 0; frames != NULL && f < g_list_model_get_n_items (frames); f++)
    {
      g_autoptr(FxwSidebarItem) frame = g_list_model_get_item (frames, f);
      GListModel *compiles = frame->children;
      FxwSidebarItem *found = NULL;
      gboolean holds = FALSE;

      for (guint c = 0; c < g_list_model_get_n_items (compiles); c++)
        {
          g_autoptr(FxwSidebarItem) item = g_list_model_get_item (compiles, c);

          if (item == compile)
            holds = TRUE;
          if (g_str_equal (item->title, want))
            found = item;
        }
      if (holds)
        return found;
    }
  return NULL;
}

static void
update_compare_previous (FxwWindow *self)
{
  FxwSidebarItem *compile = compile_of_item (self, self->current_item);

  gtk_widget_set_visible (GTK_WIDGET (self->compare_previous_button), previous_compile (self, compile) != NULL);
}

gboolean
fxw_window_compare_previous (FxwWindow *self)
{
  FxwSidebarItem *compile = compile_of_item (self, self->current_item);
  FxwSidebarItem *previous = previous_compile (self, compile);

  g_return_val_if_fail (FXW_IS_WINDOW (self), FALSE);
  return previous != NULL && fxw_window_diff_items (self, previous, compile);
}

static void
compare_previous_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_window_compare_previous (FXW_WINDOW (widget));
}

/* The "Diff with" entries of a row: the other compiles for a compile, the other graphs of the same stage (every
   other graph in a folder of FX files) for a stage. */
GMenuModel *
fxw_window_build_diff_menu (FxwWindow *self, FxwSidebarItem *source)
{
  GListModel *frames = self->document != NULL ? fxw_document_get_frames (self->document) : NULL;
  GMenu *menu = g_menu_new ();
  g_autoptr(GMenu) section = g_menu_new ();
  FxwSidebarItemKind kind = source->kind;
  gboolean workspace = self->document != NULL && fxw_document_get_workspace_path (self->document) != NULL;
  enum { MAX_ENTRIES = 40 };

  g_clear_pointer (&self->menu_targets, g_ptr_array_unref);
  self->menu_targets = g_ptr_array_new_with_free_func (g_object_unref);
  g_set_object (&self->menu_source, source);
  if (kind == FXW_SIDEBAR_ITEM_FRAME)
    return G_MENU_MODEL (menu);
  for (guint f = 0; frames != NULL && f < g_list_model_get_n_items (frames); f++)
    {
      g_autoptr(FxwSidebarItem) frame = g_list_model_get_item (frames, f);
      GListModel *compiles = frame->children;

      for (guint c = 0; c < g_list_model_get_n_items (compiles) && self->menu_targets->len < MAX_ENTRIES; c++)
        {
          g_autoptr(FxwSidebarItem) compile = g_list_model_get_item (compiles, c);
          GListModel *stages = compile->children;

          if (kind == FXW_SIDEBAR_ITEM_COMPILE)
            {
              g_autofree char *label = NULL;
              g_autoptr(GMenuItem) mi = NULL;

              if (compile == source)
                continue;
              /* translators: a menu entry: "Diff with [0/1]  forward" */
              label = g_strdup_printf (_("Diff with %s  %s"), compile->title, compile->subtitle);
              mi = g_menu_item_new (label, NULL);
              g_menu_item_set_action_and_target (mi, "win.diff-with", "u", self->menu_targets->len);
              g_menu_append_item (section, mi);
              g_ptr_array_add (self->menu_targets, g_object_ref (compile));
              continue;
            }
          for (guint s = 0; stages != NULL && s < g_list_model_get_n_items (stages)
                            && self->menu_targets->len < MAX_ENTRIES; s++)
            {
              g_autoptr(FxwSidebarItem) stage = g_list_model_get_item (stages, s);
              g_autofree char *label = NULL, *title = NULL;
              g_autoptr(GMenuItem) mi = NULL;

              if (stage == source || stage->graph == NULL
                  || (workspace && !g_str_equal (stage->title, source->title)))
                continue;
              title = item_label (self, stage);
              label = g_strdup_printf (_("Diff with %s"), title);
              mi = g_menu_item_new (label, NULL);
              g_menu_item_set_action_and_target (mi, "win.diff-with", "u", self->menu_targets->len);
              g_menu_append_item (section, mi);
              g_ptr_array_add (self->menu_targets, g_object_ref (stage));
            }
        }
    }
  g_menu_append_section (menu, _("Diff with…"), G_MENU_MODEL (section));
  return G_MENU_MODEL (menu);
}

gboolean
fxw_window_diff_with (FxwWindow *self, guint index)
{
  g_return_val_if_fail (FXW_IS_WINDOW (self), FALSE);
  if (self->menu_source == NULL || self->menu_targets == NULL || index >= self->menu_targets->len)
    return FALSE;
  return fxw_window_diff_items (self, self->menu_source, g_ptr_array_index (self->menu_targets, index));
}

static void
diff_with_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_window_diff_with (FXW_WINDOW (widget), g_variant_get_uint32 (param));
}

static void
sidebar_context_cb (GtkGestureClick *gesture, int n_press, double x, double y, gpointer user_data)
{
  FxwWindow *self = user_data;
  GtkListItem *list_item = g_object_get_data (G_OBJECT (gesture), "fxw-list-item");
  GtkTreeListRow *row = list_item ? gtk_list_item_get_item (list_item) : NULL;
  g_autoptr(FxwSidebarItem) item = NULL;
  g_autoptr(GMenuModel) menu = NULL;
  GtkWidget *popover;

  if (row == NULL)
    return;
  item = gtk_tree_list_row_get_item (row);
  if (item->kind == FXW_SIDEBAR_ITEM_FRAME)
    return;
  menu = fxw_window_build_diff_menu (self, item);
  /* The row's own popover, made with the row (a row widget is recycled, and its popover with it). */
  popover = g_object_get_data (G_OBJECT (gesture), "fxw-popover");
  gtk_popover_menu_set_menu_model (GTK_POPOVER_MENU (popover), menu);
  gtk_popover_set_pointing_to (GTK_POPOVER (popover), &(GdkRectangle) { (int) x, (int) y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (popover));
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

/* The Guards view follows the selected compile (or the compile of the selected stage). */
static void open_location_cb (FxwWindow *self, const char *file, int line);

/* The Guards view's user lines (`File "F", line N` of a break's or recompile's stack) whose file is on this machine
   are links: a click opens the file at that line, as the provenance pane does. */
static void
link_user_lines (FxwWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->guards_text);
  GtkTextTag *tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), "user-line");
  g_autofree char *text = NULL;
  GtkTextIter start, end;
  const char *p;

  if (tag == NULL)
    tag = gtk_text_buffer_create_tag (buffer, "user-line", "underline", PANGO_UNDERLINE_SINGLE, "foreground", "#1c71d8",
                                      NULL);
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  text = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  for (p = text; (p = strstr (p, "File \"")) != NULL;)
    {
      const char *file = p + 6, *q = strstr (file, "\", line ");
      g_autofree char *path = NULL;
      char *num_end = NULL;

      p = file;
      if (q == NULL || memchr (file, '\n', q - file) != NULL)
        continue;
      path = g_strndup (file, q - file);
      strtol (q + 8, &num_end, 10);
      if (num_end == q + 8 || !g_file_test (path, G_FILE_TEST_IS_REGULAR))
        continue;
      gtk_text_buffer_get_iter_at_offset (buffer, &start, (int) g_utf8_pointer_to_offset (text, p - 6));
      gtk_text_buffer_get_iter_at_offset (buffer, &end, (int) g_utf8_pointer_to_offset (text, num_end));
      gtk_text_buffer_apply_tag (buffer, tag, &start, &end);
    }
}

/* A click on a linked user line opens it. */
static void
guards_click_cb (GtkGestureClick *gesture, int n_press, double x, double y, FxwWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->guards_text);
  GtkTextTag *tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), "user-line");
  GtkTextIter iter, start, end;
  g_autofree char *link = NULL;
  int bx, by;
  char *q, *num_end = NULL;
  long line;

  if (tag == NULL)
    return;
  gtk_text_view_window_to_buffer_coords (self->guards_text, GTK_TEXT_WINDOW_WIDGET, (int) x, (int) y, &bx, &by);
  if (!gtk_text_view_get_iter_at_location (self->guards_text, &iter, bx, by) || !gtk_text_iter_has_tag (&iter, tag))
    return;
  start = end = iter;
  gtk_text_iter_backward_to_tag_toggle (&start, tag);
  gtk_text_iter_forward_to_tag_toggle (&end, tag);
  link = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  /* File "PATH", line N */
  if (!g_str_has_prefix (link, "File \"") || (q = strstr (link + 6, "\", line ")) == NULL)
    return;
  *q = '\0';
  line = strtol (q + 8, &num_end, 10);
  if (num_end != q + 8 && line > 0)
    open_location_cb (self, link + 6, (int) line);
}

static void
show_guards (FxwWindow *self, FxwSidebarItem *item)
{
  const char *text = item != NULL ? item->guards : NULL;

  if (text == NULL && item != NULL && fxw_sidebar_item_find_stage (item) != NULL)
    text = fxw_sidebar_item_find_stage (item)->guards;
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (self->guards_text), text ? text : "", -1);
  link_user_lines (self);
  gtk_stack_set_visible_child_name (self->guards_stack, text != NULL ? "text" : "empty");
  g_set_object (&self->current_item, item);
  update_compare_previous (self);
}

static void clear_stage (FxwWindow *self);
static void update_provenance (FxwWindow *self);

/* The graph of the stage titled title among compile's stages (NULL: none). */
static FxwGraph *
compile_stage_graph (FxwSidebarItem *compile, const char *title)
{
  GListModel *stages = compile != NULL ? compile->children : NULL;

  for (guint s = 0; stages != NULL && s < g_list_model_get_n_items (stages); s++)
    {
      g_autoptr(FxwSidebarItem) stage = g_list_model_get_item (stages, s);

      if (g_strcmp0 (stage->title, title) == 0)
        return stage->graph;
    }
  return NULL;
}

/* The Forward/Backward view follows the compile of the selected row; its page shows for training compiles only. */
static void
show_training (FxwWindow *self, FxwSidebarItem *compile)
{
  FxwGraph *forward = compile_stage_graph (compile, "aot_forward");
  FxwGraph *backward = compile_stage_graph (compile, "aot_backward");

  fxw_training_view_set_graphs (self->training_view, forward, backward);
  adw_view_stack_page_set_visible (self->training_page, forward != NULL && backward != NULL);
}

/* The candidate table of the stage's latest run that autotuned (mode max-autotune), NULL when none did. */
static const char *
latest_autotune (GListModel *runs)
{
  for (guint i = runs != NULL ? g_list_model_get_n_items (runs) : 0; i-- > 0;)
    {
      g_autoptr(FxwRun) run = g_list_model_get_item (runs, i);

      if (fxw_run_get_autotune (run) != NULL)
        return fxw_run_get_autotune (run);
    }
  return NULL;
}

static void
sidebar_selected_cb (FxwWindow *self)
{
  GtkTreeListRow *row = gtk_single_selection_get_selected_item (self->sidebar_selection);
  g_autoptr(FxwSidebarItem) item = NULL;
  FxwSidebarItem *stage;

  if (row == NULL)
    return;
  item = gtk_tree_list_row_get_item (row);
  show_guards (self, item);
  stage = fxw_sidebar_item_find_stage (item);
  show_training (self, item->kind == FXW_SIDEBAR_ITEM_COMPILE ? item
                       : stage != NULL ? find_compile_of (self, stage) : NULL);
  if (stage != NULL && stage->graph != NULL)
    {
      FxwGraph *graph = stage->graph;
      GListModel *kernels = stage->kernels;
      gboolean by_name = stage->kernels_by_name;

      g_set_object (&self->current_stage, stage);
      fxw_selection_set_graph (self->selection, graph);
      fxw_kernels_view_set_kernels (self->kernels_view, kernels, by_name);
      fxw_kernels_view_set_autotune (self->kernels_view, latest_autotune (stage->runs));
      fxw_graph_view_set_kernels (self->graph_view, kernels, by_name);
      /* The groups' origins are post-grad node names (inductor_provenance_tracking_node_mappings): the trace's
         post_grad graph, a TORCH_COMPILE_DEBUG folder's fx_graph_transformed.py. */
      fxw_graph_view_set_fusion_groups (self->graph_view, stage->fusion_groups,
                                        g_str_equal (stage->title, "post_grad")
                                        || g_str_equal (stage->title, "inductor_transformed"));
      fxw_compare_view_set_runs (self->compare_view, stage->runs);
      adw_view_switcher_title_set_subtitle (self->switcher_title, fxw_graph_get_title (graph));
      update_provenance (self);
    }
  else if (stage == NULL && item->kind == FXW_SIDEBAR_ITEM_COMPILE)
    {
      /* A compile without a graph (it broke before any op, or failed): what there is to see is why. */
      clear_stage (self);
      fxw_compare_view_set_runs (self->compare_view, item->runs);
      adw_view_switcher_title_set_subtitle (self->switcher_title, item->title);
      fxw_window_set_view (self, "guards");
    }
}

static void
clear_stage (FxwWindow *self)
{
  g_clear_object (&self->current_stage);
  update_provenance (self);
  fxw_selection_set_graph (self->selection, NULL);
  fxw_kernels_view_set_kernels (self->kernels_view, NULL, FALSE);
  fxw_kernels_view_set_autotune (self->kernels_view, NULL);
  fxw_graph_view_set_kernels (self->graph_view, NULL, FALSE);
  fxw_graph_view_set_fusion_groups (self->graph_view, NULL, FALSE);
  fxw_compare_view_set_runs (self->compare_view, NULL);
}

/* The first compile of the document's tree that match accepts (NULL when none); the tree holds it. */
static FxwSidebarItem *
find_compile (FxwWindow *self, gboolean (*match) (FxwSidebarItem *compile, gconstpointer data), gconstpointer data)
{
  GListModel *frames = self->document != NULL ? fxw_document_get_frames (self->document) : NULL;

  for (guint f = 0; frames != NULL && f < g_list_model_get_n_items (frames); f++)
    {
      g_autoptr(FxwSidebarItem) frame = g_list_model_get_item (frames, f);
      GListModel *compiles = frame->children;

      for (guint c = 0; c < g_list_model_get_n_items (compiles); c++)
        {
          g_autoptr(FxwSidebarItem) compile = g_list_model_get_item (compiles, c);

          if (match (compile, data))
            return compile;
        }
    }
  return NULL;
}

static gboolean
compile_holds_stage (FxwSidebarItem *compile, gconstpointer stage)
{
  GListModel *stages = compile->children;

  for (guint s = 0; s < g_list_model_get_n_items (stages); s++)
    {
      g_autoptr(FxwSidebarItem) item = g_list_model_get_item (stages, s);

      if (item == stage)
        return TRUE;
    }
  return FALSE;
}

/* The compile holding stage, from the document's tree. */
static FxwSidebarItem *
find_compile_of (FxwWindow *self, FxwSidebarItem *stage)
{
  return find_compile (self, compile_holds_stage, stage);
}

static gboolean
compile_has_row (FxwSidebarItem *compile, gconstpointer row)
{
  return compile->compile_row == *(const gint64 *) row;
}

/* The compile of a workspace row among the sidebar's (NULL when none). */
static FxwSidebarItem *
find_compile_by_row (FxwWindow *self, gint64 compile_row)
{
  return find_compile (self, compile_has_row, &compile_row);
}

/* Selects stage (a row of compile in the sidebar; scrolled to when scroll), then node in its graph; a banner says so
   when the graph has no such node. */
static void
select_stage_node (FxwWindow *self, FxwSidebarItem *compile, FxwSidebarItem *stage, const char *node, gboolean scroll)
{
  GListModel *rows = G_LIST_MODEL (self->sidebar_filter);

  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      if (item == stage)
        {
          gtk_single_selection_set_selected (self->sidebar_selection, i);
          sidebar_selected_cb (self);
          if (scroll)
            gtk_widget_activate_action (GTK_WIDGET (self->sidebar_list), "list.scroll-to-item", "u", i);
          break;
        }
    }
  if (!fxw_selection_select_name (self->selection, node))
    {
      /* translators: a kernel or the provenance pane names a node its compile's graph does not have */
      g_autofree char *text = g_strdup_printf (_("No node %s in the graph of %s"), node,
                                               compile->title);
      show_banner (self, text);
    }
}

/* A covered node's link in the Kernels view while a later stage is on show: the compile's first stage (the graph
   whose names the kernel lists) is selected, then the node in it. */
static void
kernels_open_node_cb (FxwWindow *self, const char *name)
{
  FxwSidebarItem *compile = self->current_stage != NULL ? find_compile_of (self, self->current_stage) : NULL;
  g_autoptr(FxwSidebarItem) first = NULL;

  if (compile == NULL || g_list_model_get_n_items (compile->children) == 0)
    return;
  first = g_list_model_get_item (compile->children, 0);
  select_stage_node (self, compile, first, name, FALSE);
}

/* ---------------------------------------------------------------- opening */

static void
document_busy_cb (FxwWindow *self)
{
  gboolean busy = fxw_document_get_busy (self->document);

  gtk_revealer_set_reveal_child (self->progress_revealer, busy);
  gtk_spinner_set_spinning (self->spinner, busy);
}

static void
document_progress_cb (FxwWindow *self)
{
  gtk_progress_bar_set_fraction (self->progress_bar, fxw_document_get_progress (self->document));
}

static void
document_error_cb (FxwWindow *self)
{
  const GError *error = fxw_document_get_error (self->document);

  show_banner (self, error ? error->message : NULL);
}

static void
select_first_stage (FxwWindow *self)
{
  GListModel *model = G_LIST_MODEL (self->sidebar_filter);

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (model, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      if (item->kind == FXW_SIDEBAR_ITEM_STAGE)
        {
          gtk_single_selection_set_selected (self->sidebar_selection, i);
          sidebar_selected_cb (self);
          return;
        }
    }
}

/* Selects the row of a compile ("[0/1]") of rank (-1: the first listed) and one of its stages ("dynamo"; NULL: the
   compile itself). */
static gboolean
select_compile_stage (FxwWindow *self, const char *compile, const char *stage, int rank)
{
  GListModel *model = G_LIST_MODEL (self->sidebar_filter);
  gboolean in_compile = FALSE;

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (model, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);
      FxwSidebarItemKind kind = item->kind;

      if (kind == FXW_SIDEBAR_ITEM_COMPILE)
        in_compile = g_str_equal (item->title, compile)
                     && (rank < 0 || item->rank == rank);
      if (in_compile && ((stage == NULL && kind == FXW_SIDEBAR_ITEM_COMPILE)
                         || (stage != NULL && kind == FXW_SIDEBAR_ITEM_STAGE
                             && g_str_equal (item->title, stage))))
        {
          gtk_single_selection_set_selected (self->sidebar_selection, i);
          sidebar_selected_cb (self);
          gtk_widget_activate_action (GTK_WIDGET (self->sidebar_list), "list.scroll-to-item", "u", i);
          return TRUE;
        }
    }
  return FALSE;
}

/* ---------------------------------------------------------------- ranks */

/* The sidebar lists one rank's compiles (rank >= 0), or every rank's. */
static void
apply_rank_filter (FxwWindow *self, int rank)
{
  if (rank == self->rank_filter)
    return;
  self->rank_filter = rank;
  gtk_filter_changed (gtk_filter_list_model_get_filter (self->sidebar_filter), GTK_FILTER_CHANGE_DIFFERENT);
  /* The row on show went with the other ranks: this rank's first graph is shown instead. */
  if (gtk_single_selection_get_selected_item (self->sidebar_selection) == NULL)
    select_first_stage (self);
}

static void
rank_selected_cb (FxwWindow *self)
{
  guint pos = gtk_drop_down_get_selected (self->rank_dropdown);

  if (self->updating_ranks)
    return;
  apply_rank_filter (self, pos == 0 || pos == GTK_INVALID_LIST_POSITION || pos > self->ranks->len
                           ? -1 : g_array_index (self->ranks, int, pos - 1));
}

static int
compare_ints (gconstpointer a, gconstpointer b)
{
  return *(const int *) a - *(const int *) b;
}

/* The rank selector and the Ranks view follow the document: shown for two ranks or more, the rank chosen kept
   while the document still has it (a followed trace reloading). */
static void
update_ranks (FxwWindow *self)
{
  GListModel *frames = self->document != NULL ? fxw_document_get_frames (self->document) : NULL;
  int keep = self->rank_filter;
  guint selected = 0;
  gboolean several;

  g_array_set_size (self->ranks, 0);
  for (guint f = 0; frames != NULL && f < g_list_model_get_n_items (frames); f++)
    {
      g_autoptr(FxwSidebarItem) frame = g_list_model_get_item (frames, f);
      int rank = frame->rank;
      gboolean seen = rank < 0;

      for (guint r = 0; r < self->ranks->len && !seen; r++)
        seen = g_array_index (self->ranks, int, r) == rank;
      if (!seen)
        g_array_append_val (self->ranks, rank);
    }
  g_array_sort (self->ranks, compare_ints);
  several = self->ranks->len >= 2;
  self->updating_ranks = TRUE;
  gtk_string_list_splice (self->rank_names, 0, g_list_model_get_n_items (G_LIST_MODEL (self->rank_names)), NULL);
  if (several)
    {
      /* translators: the rank selector's first entry: the sidebar lists the compiles of every rank */
      gtk_string_list_append (self->rank_names, _("All Ranks"));
      for (guint r = 0; r < self->ranks->len; r++)
        {
          /* translators: an entry of the rank selector */
          g_autofree char *name = g_strdup_printf (_("Rank %d"), g_array_index (self->ranks, int, r));

          gtk_string_list_append (self->rank_names, name);
          if (g_array_index (self->ranks, int, r) == keep)
            selected = r + 1;
        }
    }
  gtk_drop_down_set_selected (self->rank_dropdown, several ? selected : GTK_INVALID_LIST_POSITION);
  self->updating_ranks = FALSE;
  gtk_widget_set_visible (GTK_WIDGET (self->rank_dropdown), several);
  if (!several && g_strcmp0 (adw_view_stack_get_visible_child_name (self->view_stack), "ranks") == 0)
    adw_view_stack_set_visible_child_name (self->view_stack, "table");
  adw_view_stack_page_set_visible (self->ranks_page, several);
  apply_rank_filter (self, selected > 0 ? keep : -1);
}

gboolean
fxw_window_set_rank (FxwWindow *self, int rank)
{
  g_return_val_if_fail (FXW_IS_WINDOW (self), FALSE);
  if (rank < 0)
    {
      if (self->ranks->len >= 2)
        gtk_drop_down_set_selected (self->rank_dropdown, 0);
      return TRUE;
    }
  for (guint r = 0; r < self->ranks->len && self->ranks->len >= 2; r++)
    if (g_array_index (self->ranks, int, r) == rank)
      {
        gtk_drop_down_set_selected (self->rank_dropdown, r + 1);
        return TRUE;
      }
  return FALSE;
}

int
fxw_window_get_rank (FxwWindow *self)
{
  g_return_val_if_fail (FXW_IS_WINDOW (self), -1);
  return self->rank_filter;
}

GtkWidget *
fxw_window_get_rank_selector (FxwWindow *self)
{
  g_return_val_if_fail (FXW_IS_WINDOW (self), NULL);
  return GTK_WIDGET (self->rank_dropdown);
}

/* A Compare button of the Ranks view: the two ranks' compiles in the Diff view. */
static void
ranks_compare_cb (FxwWindow *self, gint64 row_a, gint64 row_b, const char *label_a, const char *label_b)
{
  fxw_window_diff_compile_rows (self, row_a, row_b, label_a, label_b);
}

/* A Show button of the Ranks view: the compile in the sidebar (the selector turned to its rank when another is
   chosen) and the Guards view, which says why it was made. */
static void
ranks_compile_cb (FxwWindow *self, gint64 compile_row)
{
  GListModel *rows = G_LIST_MODEL (self->sidebar_filter);
  FxwSidebarItem *target = find_compile_by_row (self, compile_row);

  if (target == NULL)
    return;
  if (self->rank_filter >= 0 && self->rank_filter != target->rank)
    fxw_window_set_rank (self, target->rank);
  for (guint i = 0; i < g_list_model_get_n_items (rows); i++)
    {
      g_autoptr(GtkTreeListRow) row = g_list_model_get_item (rows, i);
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      if (item == target)
        {
          gtk_single_selection_set_selected (self->sidebar_selection, i);
          sidebar_selected_cb (self);
          gtk_widget_activate_action (GTK_WIDGET (self->sidebar_list), "list.scroll-to-item", "u", i);
          fxw_window_set_view (self, "guards");
          return;
        }
    }
  {
    g_autofree char *msg = g_strdup_printf (_("Compile %s is not in the sidebar (is a search filtering it?)"),
                                            target->title);

    show_banner (self, msg);
  }
}

static void
load_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(FxwWindow) self = user_data;
  FxwDocument *document = FXW_DOCUMENT (source);
  g_autoptr(GError) error = NULL;

  if (!fxw_document_load_finish (document, result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        show_banner (self, _("Opening was cancelled."));
      /* Other errors are on the document's error property, which the banner shows. */
      return;
    }
  if (document != self->document)
    return;
  fxw_summary_view_set_workspace (self->summary_view, fxw_document_get_workspace_path (document));
  fxw_ranks_view_set_workspace (self->ranks_view, fxw_document_get_workspace_path (document));
  update_ranks (self);
  /* Back on the rank the sidebar listed (a workspace reopened after Run & Compare). */
  if (self->pending.filter >= 0)
    fxw_window_set_rank (self, self->pending.filter);
  if (self->pending.compile == NULL
      || !select_compile_stage (self, self->pending.compile, self->pending.stage, self->pending.rank))
    select_first_stage (self);
  if (self->pending.view != NULL)
    fxw_window_set_view (self, self->pending.view);
  else if (g_list_model_get_n_items (fxw_document_get_frames (document)) == 0
           && fxw_document_get_workspace_path (document) != NULL)
    /* nothing to list (a torch.export trace): its guards and failures are on the Summary */
    fxw_window_set_view (self, "summary");
  pending_selection_clear (&self->pending);
  g_signal_emit_by_name (self, "document-loaded");
}

static void stop_follow (FxwWindow *self);
static void open_file (FxwWindow *self, GFile *file);

void
fxw_window_open (FxwWindow *self, GFile *file)
{
  g_return_if_fail (FXW_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  /* Opening something else ends a Follow; the follow mode's own reloads come through open_file. */
  if (self->follow_workspace != NULL)
    {
      g_autofree char *path = g_file_get_path (file);

      if (g_strcmp0 (path, self->follow_workspace) != 0)
        stop_follow (self);
    }
  open_file (self, file);
}

/* Shows a document (loaded or about to be): the sidebar, title and views switch to it. */
static void
attach_document (FxwWindow *self, FxwDocument *document)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));

  /* The views are about to drop their rows: a focused row that goes away while its page is hidden trips GTK 4.8's
     focus tracking (AdwViewStack remembers it), so the focus leaves the views first. */
  if (focus != NULL && gtk_widget_is_ancestor (focus, GTK_WIDGET (self->view_stack)))
    gtk_root_set_focus (GTK_ROOT (self), NULL);
  if (self->document != NULL)
    g_signal_handlers_disconnect_by_data (self->document, self);
  g_clear_object (&self->document);
  clear_stage (self);
  show_guards (self, NULL);
  fxw_summary_view_set_workspace (self->summary_view, NULL);
  fxw_ranks_view_set_workspace (self->ranks_view, NULL);

  self->document = g_object_ref (document);
  g_signal_connect_object (self->document, "notify::busy", G_CALLBACK (document_busy_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::progress", G_CALLBACK (document_progress_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::error", G_CALLBACK (document_error_cb), self, G_CONNECT_SWAPPED);

  g_clear_object (&self->tree_model);
  self->tree_model = gtk_tree_list_model_new (g_object_ref (fxw_document_get_frames (self->document)),
                                              FALSE, TRUE, create_child_model, NULL, NULL);
  gtk_filter_list_model_set_model (self->sidebar_filter, G_LIST_MODEL (self->tree_model));
  update_ranks (self);

  gtk_window_set_title (GTK_WINDOW (self), fxw_document_get_title (self->document));
  adw_view_switcher_title_set_title (self->switcher_title, fxw_document_get_title (self->document));
  adw_view_switcher_title_set_subtitle (self->switcher_title, "");
  g_clear_pointer (&self->dismissed_notice, g_free);
  show_banner (self, NULL);
}

static void
open_file (FxwWindow *self, GFile *file)
{
  g_autoptr(FxwDocument) document = fxw_document_new (file);
  g_autofree char *uri = NULL;

  g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  attach_document (self, document);

  uri = g_file_get_uri (file);
  if (g_file_query_file_type (file, G_FILE_QUERY_INFO_NONE, NULL) == G_FILE_TYPE_REGULAR)
    gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);

  self->load_cancellable = g_cancellable_new ();
  fxw_document_load_async (self->document, self->load_cancellable, load_done_cb, g_object_ref (self));
}

/* What a file chooser does with the file or folder it accepts. */
typedef void (*ChosenFunc) (FxwWindow *self, GFile *file);

static void
chooser_response_cb (GtkNativeDialog *dialog, int response, FxwWindow *self)
{
  ChosenFunc chosen = (ChosenFunc) g_object_get_data (G_OBJECT (dialog), "fxw-chosen");

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));

      if (file != NULL)
        chosen (self, file);
    }
  gtk_native_dialog_destroy (dialog);
  g_object_unref (dialog);
}

/* Shows chooser modal (GtkFileDialog is GTK 4.10; Debian 12 has 4.8); chosen gets what it accepts. */
static void
chooser_show (FxwWindow *self, GtkFileChooserNative *chooser, ChosenFunc chosen)
{
  g_object_set_data (G_OBJECT (chooser), "fxw-chosen", (gpointer) chosen);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (chooser_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
run_chooser (FxwWindow *self, GtkFileChooserAction action, const char *title)
{
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new (title, GTK_WINDOW (self), action, NULL, NULL);

  if (action == GTK_FILE_CHOOSER_ACTION_OPEN)
    {
      g_autoptr(GtkFileFilter) fx = gtk_file_filter_new ();
      g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();

      gtk_file_filter_set_name (fx, _("FX graphs, workspaces and traces"));
      gtk_file_filter_add_pattern (fx, "*.py");
      gtk_file_filter_add_pattern (fx, "*.fxwb");
      gtk_file_filter_add_pattern (fx, "*.log");
      gtk_file_filter_add_pattern (fx, "*.pt2");
      gtk_file_filter_set_name (all, _("All files"));
      gtk_file_filter_add_pattern (all, "*");
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), fx);
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), all);
    }
  chooser_show (self, chooser, fxw_window_open);
}

static void
open_action (GtkWidget *widget, const char *name, GVariant *param)
{
  run_chooser (FXW_WINDOW (widget), GTK_FILE_CHOOSER_ACTION_OPEN, _("Open"));
}

static void
open_folder_action (GtkWidget *widget, const char *name, GVariant *param)
{
  run_chooser (FXW_WINDOW (widget), GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _("Open Folder"));
}

static void
open_recent_action (GtkWidget *widget, const char *name, GVariant *param)
{
  g_autoptr(GFile) file = g_file_new_for_uri (g_variant_get_string (param, NULL));

  fxw_window_open (FXW_WINDOW (widget), file);
}

/* ---------------------------------------------------------------- File → Export report… */

typedef struct
{
  char *workspace;
  char *folder;
  char *title;
} ExportJob;

static void
export_job_free (ExportJob *job)
{
  g_free (job->workspace);
  g_free (job->folder);
  g_free (job->title);
  g_free (job);
}

/* Worker thread: the workspace opened read-only by its own store handle, pages written one compile at a time. */
static void
export_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ExportJob *job = task_data;
  fx_store *store = NULL;
  fx_diag diag;
  fx_report_stats stats;
  fx_report_opts opts = { .title = job->title, .svg = fxw_graph_canvas_render_svg };

  fx_diag_clear (&diag);
  if (fx_store_open_readonly (job->workspace, &store, &diag) != FX_OK
      || fx_report_write_dir (store, job->folder, &opts, &stats, &diag) != FX_OK)
    {
      if (store != NULL)
        fx_store_close (store);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", diag.message);
      return;
    }
  fx_store_close (store);
  g_task_return_pointer (task, g_build_filename (job->folder, "index.html", NULL), g_free);
}

static void
export_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FxwWindow *self = FXW_WINDOW (source);
  g_autoptr(GError) error = NULL;
  g_autofree char *index = g_task_propagate_pointer (G_TASK (result), &error);
  g_autofree char *text = NULL;

  if (index == NULL)
    text = g_strdup_printf (_("The report could not be written: %s"), error->message);
  else
    text = g_strdup_printf (_("Report written: %s"), index);
  show_banner (self, text);
}

void
fxw_window_export_report (FxwWindow *self, GFile *folder)
{
  g_autofree char *path = g_file_get_path (folder);
  const char *workspace = self->document ? fxw_document_get_workspace_path (self->document) : NULL;
  ExportJob *job;
  g_autoptr(GTask) task = NULL;

  if (path == NULL || workspace == NULL)
    {
      show_banner (self, _("Export needs a workspace: open a .fxwb file, a trace or a debug folder first."));
      return;
    }
  job = g_new0 (ExportJob, 1);
  task = g_task_new (self, NULL, export_done_cb, NULL);
  job->workspace = g_strdup (workspace);
  job->folder = g_steal_pointer (&path);
  job->title = g_strdup (fxw_document_get_title (self->document));
  g_task_set_task_data (task, job, (GDestroyNotify) export_job_free);
  show_banner (self, _("Writing the report…"));
  g_task_run_in_thread (task, export_thread);
}

/* ---------------------------------------------------------------- Follow a trace folder */

/* What the window shows of a followed workspace: its compiles and graphs ("" when it cannot be read yet). A reload
   happens only when these change, not on every write of the importer. */
static char *
follow_signature (const char *workspace)
{
  fx_store *store = NULL;
  int64_t compiles = 0, graphs = 0;
  fx_diag diag;

  fx_diag_clear (&diag);
  if (fx_store_open_readonly (workspace, &store, &diag) != FX_OK)
    return g_strdup ("");
  fx_store_count (store, "compiles", &compiles, NULL);
  fx_store_count (store, "graphs", &graphs, NULL);
  fx_store_close (store);
  return compiles > 0 ? g_strdup_printf ("%lld/%lld", (long long) compiles, (long long) graphs) : g_strdup ("");
}

/* A follow reload is done: the new state replaces the old one in one step, on the row the user was on. */
static void
follow_loaded_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(FxwWindow) self = user_data;
  FxwDocument *document = FXW_DOCUMENT (source);
  g_autoptr(GError) error = NULL;
  g_autofree char *compile = NULL, *stage = NULL;
  FxwSidebarItem *compile_item;
  GtkTreeListRow *row;
  int rank = -1;

  if (!fxw_document_load_finish (document, result, &error) || document != self->follow_next)
    {
      if (document == self->follow_next)
        {
          /* A workspace being written can fail to read for a moment: the next change tries again. */
          g_debug ("follow: reload failed: %s", error != NULL ? error->message : "?");
          g_clear_pointer (&self->follow_signature, g_free);
          self->follow_signature = g_strdup ("");
          g_clear_object (&self->follow_next);
        }
      return;
    }
  /* The row the user is on now (a stage, or a compile: one without a graph has no stage on show). */
  row = gtk_single_selection_get_selected_item (self->sidebar_selection);
  if (row != NULL)
    {
      g_autoptr(FxwSidebarItem) item = gtk_tree_list_row_get_item (row);

      rank = item->rank;
      if (item->kind == FXW_SIDEBAR_ITEM_COMPILE)
        compile = g_strdup (item->title);
      else if (item->kind == FXW_SIDEBAR_ITEM_STAGE
               && (compile_item = find_compile_of (self, item)) != NULL)
        {
          compile = g_strdup (compile_item->title);
          stage = g_strdup (item->title);
        }
    }
  g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  attach_document (self, document);
  g_clear_object (&self->follow_next);
  fxw_summary_view_set_workspace (self->summary_view, fxw_document_get_workspace_path (document));
  fxw_ranks_view_set_workspace (self->ranks_view, fxw_document_get_workspace_path (document));
  if (compile == NULL || !select_compile_stage (self, compile, stage, rank))
    select_first_stage (self);
  g_signal_emit_by_name (self, "document-loaded");
}

static gboolean
follow_tick_cb (gpointer user_data)
{
  FxwWindow *self = user_data;
  g_autofree char *sig = NULL;
  g_autoptr(GFile) file = NULL;

  if (self->follow_workspace == NULL)
    return G_SOURCE_REMOVE;
  if (self->follow_next != NULL || (self->document != NULL && fxw_document_get_busy (self->document)))
    return G_SOURCE_CONTINUE;
  /* Reloaded only once a compile is there (an empty workspace has nothing to show), and only when it changed. */
  sig = follow_signature (self->follow_workspace);
  if (*sig == '\0' || g_strcmp0 (sig, self->follow_signature) == 0)
    return G_SOURCE_CONTINUE;
  g_free (self->follow_signature);
  self->follow_signature = g_steal_pointer (&sig);
  /* Loaded beside what is shown; the window switches when it is complete (follow_loaded_cb). */
  file = g_file_new_for_path (self->follow_workspace);
  self->follow_next = fxw_document_new (file);
  g_clear_object (&self->follow_cancellable);
  self->follow_cancellable = g_cancellable_new ();
  fxw_document_load_async (self->follow_next, self->follow_cancellable, follow_loaded_cb, g_object_ref (self));
  return G_SOURCE_CONTINUE;
}

static void
stop_follow (FxwWindow *self)
{
  if (self->follow_proc != NULL)
    g_subprocess_force_exit (self->follow_proc);
  g_clear_object (&self->follow_proc);
  g_clear_handle_id (&self->follow_timer, g_source_remove);
  g_clear_pointer (&self->follow_workspace, g_free);
  g_clear_pointer (&self->follow_folder, g_free);
  g_clear_pointer (&self->follow_signature, g_free);
  g_cancellable_cancel (self->follow_cancellable);
  g_clear_object (&self->follow_cancellable);
  g_clear_object (&self->follow_next);
}

gboolean
fxw_window_follow_trace (FxwWindow *self, GFile *folder, GError **error)
{
  g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "fx-workbench", "follow", NULL);
  g_autofree char *path = g_file_get_path (folder);
  g_autofree char *base = NULL;
  g_autofree char *fxwb = fxw_find_fxwb ();
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *workspace = NULL;
  g_autofree char *status = NULL;
  fx_store *store = NULL;
  fx_diag diag;

  g_return_val_if_fail (FXW_IS_WINDOW (self), FALSE);
  if (path == NULL || !g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY, _("Follow needs a folder (the TORCH_TRACE folder "
                                                                  "a program writes into)"));
      return FALSE;
    }
  if (fxwb == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   _("The fxwb program was not found (set FXWB_PROGRAM, or install fxwb beside fx-workbench)."));
      return FALSE;
    }
  stop_follow (self);
  base = g_path_get_basename (path);
  g_mkdir_with_parents (dir, 0700);
  workspace = g_strdup_printf ("%s/%s-%s.fxwb", dir, base, stamp);
  fx_diag_clear (&diag);
  if (fx_store_open (workspace, true, &store, &diag) != FX_OK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", diag.message);
      return FALSE;
    }
  fx_store_close (store);
  /* fxwb serve does the tailing (partial last lines wait for their newline) and the importing; the window only
     watches the workspace. Its port is a random one on 127.0.0.1, guarded by its token, and goes with it. */
  self->follow_proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, error,
                                        fxwb, "serve", workspace, "--follow", path, "--port", "0", NULL);
  if (self->follow_proc == NULL)
    return FALSE;
  self->follow_workspace = g_steal_pointer (&workspace);
  self->follow_folder = g_strdup (path);
  self->follow_signature = follow_signature (self->follow_workspace);
  self->follow_timer = g_timeout_add (500, follow_tick_cb, self);
  /* translators: the banner while a trace folder is followed and nothing has arrived yet */
  status = g_strdup_printf (_("Following %s: compiles appear here as the program writes them."), path);
  show_banner (self, status);
  return TRUE;
}

const char *
fxw_window_get_follow_workspace (FxwWindow *self)
{
  return self->follow_workspace;
}

static void
follow_chosen (FxwWindow *self, GFile *folder)
{
  g_autoptr(GError) error = NULL;

  if (!fxw_window_follow_trace (self, folder, &error))
    show_banner (self, error->message);
}

static void
follow_trace_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwWindow *self = FXW_WINDOW (widget);
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new (_("Follow a TORCH_TRACE Folder"), GTK_WINDOW (self),
                                                               GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _("_Follow"),
                                                               NULL);

  chooser_show (self, chooser, follow_chosen);
}

static void
export_report_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwWindow *self = FXW_WINDOW (widget);
  GtkFileChooserNative *chooser;

  if (self->document == NULL || fxw_document_get_workspace_path (self->document) == NULL)
    {
      show_banner (self, _("Export needs a workspace: open a .fxwb file, a trace or a debug folder first."));
      return;
    }
  chooser = gtk_file_chooser_native_new (_("Export Report To Folder"), GTK_WINDOW (self),
                                         GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _("_Export"), NULL);
  chooser_show (self, chooser, fxw_window_export_report);
}

static void
cancel_load_action (GtkWidget *widget, const char *name, GVariant *param)
{
  g_cancellable_cancel (FXW_WINDOW (widget)->load_cancellable);
}

/* ---------------------------------------------------------------- Run & Compare */

static void
run_dialog_finished_cb (FxwWindow *self, gboolean ok, FxwRunDialog *dialog)
{
  g_autoptr(GFile) file = g_file_new_for_path (fxw_run_dialog_get_workspace (dialog));
  FxwSidebarItem *compile = self->current_stage != NULL ? find_compile_of (self, self->current_stage) : NULL;

  /* training runs are not stored: the dialog's log is the result, the workspace did not change */
  if (fxw_run_dialog_get_training (dialog))
    return;

  /* Reopen the workspace the runs went to, on the same compile and stage, in the Compare view. */
  pending_selection_clear (&self->pending);
  self->pending.compile = compile != NULL ? g_strdup (compile->title) : NULL;
  self->pending.stage = self->current_stage != NULL && fxw_document_get_workspace_path (self->document) != NULL
                        ? g_strdup (self->current_stage->title) : NULL;
  self->pending.view = g_strdup ("compare");
  self->pending.rank = compile != NULL ? compile->rank : -1;
  self->pending.filter = self->rank_filter;
  fxw_window_open (self, file);
  /* All went well: the Compare view says everything; otherwise the dialog stays with its log of what failed. */
  if (ok)
    gtk_window_destroy (GTK_WINDOW (dialog));
}

/* The graph file of a stage of a document that is FX files (no workspace): the file or folder opened. */
static char *
stage_file (FxwWindow *self, FxwSidebarItem *compile)
{
  g_autofree char *root = g_file_get_path (fxw_document_get_file (self->document));
  g_autofree char *under = NULL;

  if (root == NULL)
    return NULL;
  if (g_file_test (root, G_FILE_TEST_IS_REGULAR))
    return g_steal_pointer (&root);
  under = g_build_filename (root, compile->title, self->current_stage->title, NULL);
  if (g_file_test (under, G_FILE_TEST_IS_REGULAR))
    return g_steal_pointer (&under);
  g_free (under);
  /* a folder of compile folders inside frame folders */
  {
    GListModel *frames = fxw_document_get_frames (self->document);

    for (guint f = 0; f < g_list_model_get_n_items (frames); f++)
      {
        g_autoptr(FxwSidebarItem) frame = g_list_model_get_item (frames, f);

        under = g_build_filename (root, frame->title, compile->title, self->current_stage->title, NULL);
        if (g_file_test (under, G_FILE_TEST_IS_REGULAR))
          return g_steal_pointer (&under);
        g_clear_pointer (&under, g_free);
      }
  }
  return NULL;
}

FxwRunDialog *
fxw_window_run_compare (FxwWindow *self)
{
  FxwSidebarItem *compile = self->current_stage != NULL ? find_compile_of (self, self->current_stage) : NULL;
  const char *ws = self->document != NULL ? fxw_document_get_workspace_path (self->document) : NULL;
  g_autofree char *source = NULL;
  g_autofree char *target = NULL;
  const char *stage = NULL;

  if (compile == NULL)
    {
      show_banner (self, _("Select a graph to run: Run & Compare runs the graph on show."));
      return NULL;
    }
  if (ws != NULL)
    {
      const char *title = compile->title;
      g_autofree char *id = g_strndup (title + (title[0] == '['), strlen (title) - (title[0] == '[') * 2);

      /* One rank's compile of a multi-rank workspace: "rank3/1/1" (the same id names a compile per rank). */
      if (compile->rank >= 0)
        source = g_strdup_printf ("%s:rank%d/%s", ws, compile->rank, id);
      else
        source = g_strdup_printf ("%s:%s", ws, id);
      stage = self->current_stage->title;
      target = g_strdup (ws);
    }
  else
    {
      g_autofree char *dir = g_build_filename (g_get_user_cache_dir (), "fx-workbench", "runs", NULL);
      g_autofree char *base = NULL;
      g_autoptr(GDateTime) now = g_date_time_new_now_local ();
      g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");

      source = stage_file (self, compile);
      if (source == NULL)
        {
          show_banner (self, _("The file of this graph was not found; open it again to run it."));
          return NULL;
        }
      base = g_path_get_basename (source);
      g_mkdir_with_parents (dir, 0700);
      target = g_strdup_printf ("%s/%s-%s.fxwb", dir, base, stamp);
    }
  if (self->run_dialog != NULL)
    gtk_window_destroy (GTK_WINDOW (self->run_dialog));
  self->run_dialog = fxw_run_dialog_new (GTK_WINDOW (self), source, stage, target);
  g_object_add_weak_pointer (G_OBJECT (self->run_dialog), (gpointer *) &self->run_dialog);
  g_signal_connect_object (self->run_dialog, "finished", G_CALLBACK (run_dialog_finished_cb), self,
                           G_CONNECT_SWAPPED);
  gtk_window_present (GTK_WINDOW (self->run_dialog));
  return self->run_dialog;
}

FxwRunDialog *
fxw_window_run_compare_upto (FxwWindow *self, const char *node)
{
  FxwRunDialog *dialog = fxw_window_run_compare (self);

  if (dialog != NULL)
    fxw_run_dialog_set_upto (dialog, node);
  return dialog;
}

static void
run_upto_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_window_run_compare_upto (FXW_WINDOW (widget), g_variant_get_string (param, NULL));
}

static void
run_compare_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_window_run_compare (FXW_WINDOW (widget));
}

static void
dismiss_error_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwWindow *self = FXW_WINDOW (widget);
  const char *notice = self->document != NULL ? fxw_document_get_notice (self->document) : NULL;

  /* Dismiss hides the notice too; show_banner would otherwise put it back. */
  g_free (self->dismissed_notice);
  self->dismissed_notice = g_strdup (notice);
  show_banner (self, NULL);
}

static gboolean
drop_cb (GtkDropTarget *target, const GValue *value, double x, double y, FxwWindow *self)
{
  GSList *files;

  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  files = g_value_get_boxed (value);
  if (files == NULL)
    return FALSE;
  fxw_window_open (self, files->data);
  return TRUE;
}

static void
rebuild_recent_menu (FxwWindow *self)
{
  GList *items = gtk_recent_manager_get_items (gtk_recent_manager_get_default ());
  guint n = 0;

  g_menu_remove_all (self->recent_menu);
  for (GList *l = items; l != NULL && n < 10; l = l->next)
    {
      GtkRecentInfo *info = l->data;

      if (gtk_recent_info_has_application (info, g_get_application_name ()) && gtk_recent_info_exists (info))
        {
          g_autoptr(GMenuItem) item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);

          g_menu_item_set_action_and_target (item, "win.open-recent", "s", gtk_recent_info_get_uri (info));
          g_menu_append_item (self->recent_menu, item);
          n++;
        }
    }
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

/* ---------------------------------------------------------------- navigation */

static void
step_compile (FxwWindow *self, int direction)
{
  GListModel *model = G_LIST_MODEL (self->sidebar_filter);
  guint n = g_list_model_get_n_items (model);
  guint pos = gtk_single_selection_get_selected (self->sidebar_selection);
  guint i = pos == GTK_INVALID_LIST_POSITION ? (direction > 0 ? 0 : n) : pos;

  for (guint step = 0; step < n; step++)
    {
      g_autoptr(GtkTreeListRow) row = NULL;
      g_autoptr(FxwSidebarItem) item = NULL;

      i = direction > 0 ? i + 1 : i - 1;
      if (i >= n)
        return;
      row = g_list_model_get_item (model, i);
      item = gtk_tree_list_row_get_item (row);
      if (item->kind == FXW_SIDEBAR_ITEM_COMPILE)
        {
          gtk_single_selection_set_selected (self->sidebar_selection, i);
          gtk_widget_activate_action (GTK_WIDGET (self->sidebar_list), "list.scroll-to-item", "u", i);
          return;
        }
    }
}

static void
next_compile_action (GtkWidget *widget, const char *name, GVariant *param)
{
  step_compile (FXW_WINDOW (widget), +1);
}

static void
previous_compile_action (GtkWidget *widget, const char *name, GVariant *param)
{
  step_compile (FXW_WINDOW (widget), -1);
}

static void
focus_search_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwWindow *self = FXW_WINDOW (widget);
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));

  /* Ctrl+F is the application's accelerator, which runs before the canvas's own binding: on the canvas it finds
     a node there. */
  if (focus != NULL && gtk_widget_is_ancestor (focus, GTK_WIDGET (self->graph_view)))
    gtk_widget_activate_action (GTK_WIDGET (self->graph_view), "graph.search", NULL);
  else
    gtk_widget_grab_focus (GTK_WIDGET (self->sidebar_search));
}

/* Minify the graph on show: a window of its own, which runs fxwb minify on a copy of the graph. */
static void
minify_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwWindow *self = FXW_WINDOW (widget);
  FxwGraph *graph = fxw_selection_get_graph (self->selection);

  if (graph == NULL)
    {
      show_banner (self, _("Open a graph to minify first."));
      return;
    }
  gtk_window_present (GTK_WINDOW (fxw_minify_window_new (GTK_WINDOW (self), fxw_graph_get_graph (graph),
                                                         fxw_graph_get_title (graph))));
}

/* A compile id clicked in the Summary view: its row in the sidebar (the Guards view shows its breaks and reasons). */
static void
summary_compile_cb (FxwWindow *self, const char *compile_id)
{
  g_autofree char *title = g_strdup_printf ("[%s]", compile_id);

  if (!select_compile_stage (self, title, NULL, -1))
    {
      g_autofree char *msg = g_strdup_printf (_("Compile %s is not in the sidebar (is a search filtering it?)"), title);

      show_banner (self, msg);
    }
}

static void
view_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_window_set_view (FXW_WINDOW (widget), g_variant_get_string (param, NULL));
}

/* A read-only source window over contents (language: a GtkSourceView language id), the cursor on line; header (may
   be NULL) goes above the text. */
static GtkWindow *
show_source (FxwWindow *self, const char *title, const char *contents, int line, const char *language,
             GtkWidget *header)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *scroller = gtk_scrolled_window_new ();
  GtkWidget *view = gtk_source_view_new ();
  GtkSourceBuffer *buffer = GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (GTK_TEXT_VIEW (view)));
  GtkTextIter iter;

  gtk_source_buffer_set_language (buffer, gtk_source_language_manager_get_language (
                                    gtk_source_language_manager_get_default (), language));
  gtk_text_buffer_set_text (GTK_TEXT_BUFFER (buffer), contents, -1);
  gtk_text_view_set_editable (GTK_TEXT_VIEW (view), FALSE);
  gtk_text_view_set_monospace (GTK_TEXT_VIEW (view), TRUE);
  gtk_source_view_set_show_line_numbers (GTK_SOURCE_VIEW (view), TRUE);
  gtk_source_view_set_highlight_current_line (GTK_SOURCE_VIEW (view), TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), view);
  if (header != NULL)
    {
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);

      gtk_widget_set_vexpand (scroller, TRUE);
      gtk_box_append (GTK_BOX (box), header);
      gtk_box_append (GTK_BOX (box), scroller);
      gtk_window_set_child (GTK_WINDOW (window), box);
    }
  else
    gtk_window_set_child (GTK_WINDOW (window), scroller);
  gtk_window_set_title (GTK_WINDOW (window), title);
  gtk_window_set_transient_for (GTK_WINDOW (window), GTK_WINDOW (self));
  gtk_window_set_default_size (GTK_WINDOW (window), 800, 600);
  gtk_text_buffer_get_iter_at_line (GTK_TEXT_BUFFER (buffer), &iter, MAX (line - 1, 0));
  gtk_text_buffer_place_cursor (GTK_TEXT_BUFFER (buffer), &iter);
  gtk_window_present (GTK_WINDOW (window));
  gtk_text_view_scroll_to_mark (GTK_TEXT_VIEW (view), gtk_text_buffer_get_insert (GTK_TEXT_BUFFER (buffer)),
                                0.1, TRUE, 0.0, 0.3);
  return GTK_WINDOW (window);
}

static void
open_location_cb (FxwWindow *self, const char *file, int line)
{
  g_autofree char *contents = NULL;
  g_autofree char *title = g_strdup_printf ("%s:%d", file, line);

  if (!g_file_get_contents (file, &contents, NULL, NULL) || !g_utf8_validate (contents, -1, NULL))
    {
      g_autofree char *msg = g_strdup_printf (_("Could not read %s"), file);

      show_banner (self, msg);
      return;
    }
  show_source (self, title, contents, line, "python3", NULL);
}

/* ---------------------------------------------------------------- Inductor provenance */

/* Which side of the provenance mappings a stage's node names are: Dynamo's and the pre-grad graphs name the
   pre-grad nodes, the post-grad graph the post-grad ones; -1: neither. */
static int
stage_side (const char *stage)
{
  static const char *const pre[] = { "after_pre_grad_graph", "pre_grad", "before_pre_grad_graph", "dynamo" };

  if (g_strcmp0 (stage, "post_grad") == 0)
    return FX_PROV_POST_GRAD;
  for (guint i = 0; i < G_N_ELEMENTS (pre); i++)
    if (g_strcmp0 (stage, pre[i]) == 0)
      return FX_PROV_PRE_GRAD;
  return -1;
}

static void
set_pane_provenance (FxwWindow *self)
{
  int side = self->current_stage != NULL ? stage_side (self->current_stage->title) : -1;
  gboolean ours = self->provenance != NULL && self->current_stage != NULL
                  && self->current_stage->compile_row == self->provenance_row;

  fxw_provenance_pane_set_inductor (self->provenance_pane, ours && side >= 0 ? self->provenance : NULL,
                                    side >= 0 ? (fx_prov_side) side : FX_PROV_PRE_GRAD);
}

static void
provenance_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const char *path = g_object_get_data (G_OBJECT (task), "path");
  gint64 row = *(gint64 *) task_data;
  GError *error = NULL;
  FxwProvenanceMap *map = fxw_provenance_map_load (path, row, &error);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, map, g_object_unref);
}

static void
provenance_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FxwWindow *self = FXW_WINDOW (source);
  g_autoptr(GError) error = NULL;
  g_autoptr(FxwProvenanceMap) map = g_task_propagate_pointer (G_TASK (result), &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (error != NULL)
    g_debug ("provenance: %s", error->message);
  g_clear_object (&self->provenance_cancellable);
  g_set_object (&self->provenance, map);
  set_pane_provenance (self);
  g_signal_emit_by_name (self, "provenance-loaded");
}

/* The provenance pane follows the stage on show: its compile's mappings are read off the main thread once, then
   every node selection is answered from them. */
static void
update_provenance (FxwWindow *self)
{
  const char *path = self->document != NULL ? fxw_document_get_workspace_path (self->document) : NULL;
  gint64 row = self->current_stage != NULL ? self->current_stage->compile_row : 0;
  g_autoptr(GTask) task = NULL;
  gint64 *data;

  if (row == self->provenance_row)
    {
      set_pane_provenance (self);
      return;
    }
  g_cancellable_cancel (self->provenance_cancellable);
  g_clear_object (&self->provenance_cancellable);
  g_clear_object (&self->provenance);
  self->provenance_row = row;
  set_pane_provenance (self);
  if (path == NULL || row <= 0)
    return;
  self->provenance_cancellable = g_cancellable_new ();
  task = g_task_new (self, self->provenance_cancellable, provenance_done_cb, NULL);
  data = g_new (gint64, 1);
  *data = row;
  g_task_set_task_data (task, data, g_free);
  g_object_set_data_full (G_OBJECT (task), "path", g_strdup (path), g_free);
  g_task_set_check_cancellable (task, TRUE);
  g_task_run_in_thread (task, provenance_thread);
}

gboolean
fxw_window_get_provenance_loaded (FxwWindow *self)
{
  g_return_val_if_fail (FXW_IS_WINDOW (self), FALSE);
  return self->provenance_cancellable == NULL;
}

/* The graph of compile on side ("pre_grad", "post_grad") shown, and node selected in it. */
static void
jump_to_node (FxwWindow *self, FxwSidebarItem *compile, const char *side, const char *node)
{
  static const char *const pre[] = { "after_pre_grad_graph", "pre_grad", "before_pre_grad_graph", "dynamo" };
  static const char *const post[] = { "post_grad" };
  gboolean to_post = g_strcmp0 (side, "post_grad") == 0;
  const char *const *want = to_post ? post : pre;
  guint n_want = to_post ? G_N_ELEMENTS (post) : G_N_ELEMENTS (pre);
  GListModel *stages = compile != NULL ? compile->children : NULL;
  g_autoptr(FxwSidebarItem) target = NULL;

  for (guint w = 0; w < n_want && target == NULL; w++)
    for (guint i = 0; stages != NULL && i < g_list_model_get_n_items (stages) && target == NULL; i++)
      {
        g_autoptr(FxwSidebarItem) stage = g_list_model_get_item (stages, i);

        if (g_str_equal (stage->title, want[w]) && stage->graph != NULL)
          target = g_steal_pointer (&stage);
      }
  if (target == NULL)
    {
      /* translators: the provenance pane named a node of a graph this compile did not log */
      g_autofree char *msg = g_strdup_printf (_("This compile has no %s graph to show %s in"), side, node);

      show_banner (self, msg);
      return;
    }
  select_stage_node (self, compile, target, node, TRUE);
}

/* A post-grad (or pre-grad) node of the provenance pane: the compile's graph of that side, and the node in it. */
static void
provenance_open_node_cb (FxwWindow *self, const char *side, const char *node)
{
  jump_to_node (self, self->current_stage != NULL ? find_compile_of (self, self->current_stage) : NULL, side, node);
}

/* A node link of a kernel's source window: back to the main window, on the node in its compile. */
static void
source_link_clicked_cb (GtkButton *button, FxwWindow *self)
{
  FxwSidebarItem *compile = find_compile_by_row (self, *(gint64 *) g_object_get_data (G_OBJECT (button), "row"));

  if (compile == NULL)
    {
      show_banner (self, _("The compile of this kernel is no longer open"));
      return;
    }
  jump_to_node (self, compile, g_object_get_data (G_OBJECT (button), "side"),
                g_object_get_data (G_OBJECT (button), "node"));
  gtk_window_present (GTK_WINDOW (self));
}

/* The header of a kernel's source window: the post-grad nodes it computes and their pre-grad nodes, each a link back
   to its graph (provenance the other way round). */
static GtkWidget *
kernel_links (FxwWindow *self, const char *kernel)
{
  g_autofree char *key = g_strconcat ("kernel:", kernel, NULL);
  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
  GHashTable *links = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  fx_provenance p;

  gtk_widget_set_margin_start (bar, 8);
  gtk_widget_set_margin_end (bar, 8);
  gtk_widget_set_margin_top (bar, 4);
  gtk_widget_set_margin_bottom (bar, 4);
  g_object_set_data_full (G_OBJECT (bar), "fxw-links", links, (GDestroyNotify) g_hash_table_unref);
  if (self->provenance == NULL || !fxw_provenance_map_chain (self->provenance, key, &p))
    return bar;
  for (int side = 0; side < 2; side++)
    {
      const char *const *names = side == 0 ? p.post : p.pre;
      size_t n = side == 0 ? p.n_post : p.n_pre;
      /* translators: the header of a kernel's source window, before the nodes it computes */
      GtkWidget *label = gtk_label_new (side == 0 ? _("Computes post-grad") : _("from pre-grad"));

      gtk_widget_add_css_class (label, "dim-label");
      gtk_box_append (GTK_BOX (bar), label);
      for (size_t i = 0; i < n; i++)
        {
          GtkWidget *button = gtk_button_new_with_label (names[i]);
          gint64 *row = g_new (gint64, 1);

          *row = self->provenance_row;
          gtk_widget_add_css_class (button, "flat");
          gtk_widget_add_css_class (button, "monospace");
          g_object_set_data_full (G_OBJECT (button), "row", row, g_free);
          g_object_set_data (G_OBJECT (button), "side", (gpointer) (side == 0 ? "post_grad" : "pre_grad"));
          g_object_set_data_full (G_OBJECT (button), "node", g_strdup (names[i]), g_free);
          g_signal_connect_object (button, "clicked", G_CALLBACK (source_link_clicked_cb), self, 0);
          gtk_box_append (GTK_BOX (bar), button);
          g_hash_table_replace (links, g_strdup_printf ("%s:%s", side == 0 ? "post_grad" : "pre_grad", names[i]),
                                button);
        }
    }
  return bar;
}

/* A kernel of the provenance pane: the stored code at its definition or launch, with the nodes it computes above. */
static void
provenance_open_code_cb (FxwWindow *self, const char *code, int line, const char *kernel)
{
  const char *text = self->provenance != NULL ? fxw_provenance_map_get_code (self->provenance, code) : NULL;
  g_autofree char *title = g_strdup_printf ("%s — %s:%d", kernel, code, line);
  GtkWindow *source;
  GtkWidget *header;

  if (text == NULL)
    {
      g_autofree char *msg = g_strdup_printf (_("Could not read %s"), code);

      show_banner (self, msg);
      return;
    }
  header = kernel_links (self, kernel);
  /* AOTInductor's wrapper and kernels are C++; inductor_output_code is Python. */
  source = show_source (self, title, text, line, strstr (code, "_aot_") != NULL ? "cpp" : "python3", header);
  g_object_set_data (G_OBJECT (source), "fxw-links", g_object_get_data (G_OBJECT (header), "fxw-links"));
}

gboolean
fxw_window_activate_source_link (GtkWindow *source, const char *what)
{
  GHashTable *links = g_object_get_data (G_OBJECT (source), "fxw-links");

  return links != NULL && fxw_viewers_click (g_hash_table_lookup (links, what));
}

/* ---------------------------------------------------------------- life cycle */

/* The installed schema, or the one compiled into the build tree when run uninstalled. */
static GSettings *
settings_new (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;
  g_autoptr(GSettingsSchemaSource) built = NULL;

  if (source != NULL && (schema = g_settings_schema_source_lookup (source, "org.fxworkbench.FxWorkbench", TRUE)))
    return g_settings_new_full (schema, NULL, NULL);
  built = g_settings_schema_source_new_from_directory (FX_BUILD_ROOT "/data", source, FALSE, NULL);
  if (built != NULL && (schema = g_settings_schema_source_lookup (built, "org.fxworkbench.FxWorkbench", FALSE)))
    return g_settings_new_full (schema, NULL, NULL);
  g_error ("The GSettings schema org.fxworkbench.FxWorkbench is neither installed nor built in %s/data",
           FX_BUILD_ROOT);
  return NULL;
}

static void
fxw_window_dispose (GObject *object)
{
  FxwWindow *self = FXW_WINDOW (object);

  g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  if (self->document != NULL)
    g_signal_handlers_disconnect_by_data (self->document, self);
  g_clear_object (&self->document);
  g_clear_object (&self->current_stage);
  g_clear_object (&self->current_item);
  g_cancellable_cancel (self->provenance_cancellable);
  g_clear_object (&self->provenance_cancellable);
  g_clear_object (&self->provenance);
  g_clear_object (&self->menu_source);
  g_clear_pointer (&self->menu_targets, g_ptr_array_unref);
  g_cancellable_cancel (self->diff_cancellable);
  g_clear_object (&self->diff_cancellable);
  g_clear_object (&self->tree_model);
  g_clear_object (&self->sidebar_filter);
  g_clear_object (&self->sidebar_selection);
  g_clear_object (&self->selection);
  g_clear_object (&self->settings);
  g_clear_pointer (&self->search_folded, g_free);
  g_clear_pointer (&self->ranks, g_array_unref);
  g_clear_pointer (&self->dismissed_notice, g_free);
  pending_selection_clear (&self->pending);
  stop_follow (self);
  if (self->run_dialog != NULL)
    gtk_window_destroy (GTK_WINDOW (self->run_dialog));
  gtk_widget_dispose_template (GTK_WIDGET (self), FXW_TYPE_WINDOW);
  G_OBJECT_CLASS (fxw_window_parent_class)->dispose (object);
}

static gboolean
fxw_window_close_request (GtkWindow *window)
{
  FxwWindow *self = FXW_WINDOW (window);
  int width, height;

  gtk_window_get_default_size (window, &width, &height);
  g_settings_set_int (self->settings, "window-width", width);
  g_settings_set_int (self->settings, "window-height", height);
  g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (window));
  return GTK_WINDOW_CLASS (fxw_window_parent_class)->close_request (window);
}

static void
fxw_window_class_init (FxwWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = fxw_window_dispose;
  window_class->close_request = fxw_window_close_request;

  /**
   * FxwWindow::document-loaded:
   *
   * A document finished loading and its first graph is selected.
   */
  g_signal_new ("document-loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * FxwWindow::diff-done:
   *
   * A diff asked for (Diff with…, Compare with Previous Compile) is shown in the Diff view.
   */
  g_signal_new ("diff-done", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * FxwWindow::provenance-loaded:
   *
   * The Inductor provenance mappings of the compile on show were read (or found missing).
   */
  g_signal_new ("provenance-loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  fxw_viewers_init ();
  gtk_widget_class_set_template_from_resource (widget_class, "/org/fxworkbench/FxWorkbench/fxw-window.ui");
#define FXW_WINDOW_BIND(type, name) gtk_widget_class_bind_template_child (widget_class, FxwWindow, name);
  FXW_WINDOW_TEMPLATE_CHILDREN (FXW_WINDOW_BIND)
#undef FXW_WINDOW_BIND
  gtk_widget_class_bind_template_callback (widget_class, kernels_open_node_cb);
  gtk_widget_class_bind_template_callback (widget_class, sidebar_search_changed_cb);
  gtk_widget_class_bind_template_callback (widget_class, open_location_cb);
  gtk_widget_class_bind_template_callback (widget_class, summary_compile_cb);
  gtk_widget_class_bind_template_callback (widget_class, rank_selected_cb);
  gtk_widget_class_bind_template_callback (widget_class, provenance_open_node_cb);
  gtk_widget_class_bind_template_callback (widget_class, provenance_open_code_cb);
  gtk_widget_class_bind_template_callback (widget_class, ranks_compare_cb);
  gtk_widget_class_bind_template_callback (widget_class, ranks_compile_cb);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.open-folder", NULL, open_folder_action);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "win.export-report", NULL, export_report_action);
  gtk_widget_class_install_action (widget_class, "win.cancel-load", NULL, cancel_load_action);
  gtk_widget_class_install_action (widget_class, "win.dismiss-error", NULL, dismiss_error_action);
  gtk_widget_class_install_action (widget_class, "win.run-compare", NULL, run_compare_action);
  gtk_widget_class_install_action (widget_class, "win.run-upto", "s", run_upto_action);
  gtk_widget_class_install_action (widget_class, "win.follow-trace", NULL, follow_trace_action);
  gtk_widget_class_install_action (widget_class, "win.next-compile", NULL, next_compile_action);
  gtk_widget_class_install_action (widget_class, "win.previous-compile", NULL, previous_compile_action);
  gtk_widget_class_install_action (widget_class, "win.focus-search", NULL, focus_search_action);
  gtk_widget_class_install_action (widget_class, "win.view", "s", view_action);
  gtk_widget_class_install_action (widget_class, "win.minify", NULL, minify_action);
  gtk_widget_class_install_action (widget_class, "win.compare-previous", NULL, compare_previous_action);
  gtk_widget_class_install_action (widget_class, "win.diff-with", "u", diff_with_action);
}

static void
fxw_window_init (FxwWindow *self)
{
  g_autoptr(GtkListItemFactory) factory = gtk_signal_list_item_factory_new ();
  GtkCustomFilter *filter;
  GtkDropTarget *drop;
  g_autoptr(GPropertyAction) provenance = NULL;
  g_autoptr(GSimpleActionGroup) group = NULL;

  self->ranks = g_array_new (FALSE, FALSE, sizeof (int));
  self->rank_filter = -1;
  pending_selection_clear (&self->pending);
  gtk_widget_init_template (GTK_WIDGET (self));

  /* Once per display, here rather than in the application so windows made by tests look the same. */
  if (g_object_get_data (G_OBJECT (gdk_display_get_default ()), "fxw-css") == NULL)
    {
      GtkCssProvider *css = gtk_css_provider_new ();

      gtk_css_provider_load_from_resource (css, "/org/fxworkbench/FxWorkbench/style.css");
      gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                                  GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
      g_object_set_data_full (G_OBJECT (gdk_display_get_default ()), "fxw-css", css, g_object_unref);
    }

  self->settings = settings_new ();
  gtk_window_set_default_size (GTK_WINDOW (self), g_settings_get_int (self->settings, "window-width"),
                               g_settings_get_int (self->settings, "window-height"));
  if (g_settings_get_boolean (self->settings, "window-maximized"))
    gtk_window_maximize (GTK_WINDOW (self));

  self->selection = fxw_selection_new ();
  fxw_table_view_set_selection (self->table_view, self->selection);
  fxw_graph_view_set_selection (self->graph_view, self->selection);
  fxw_code_view_set_selection (self->code_view, self->selection);
  fxw_provenance_pane_set_selection (self->provenance_pane, self->selection);
  fxw_kernels_view_set_selection (self->kernels_view, self->selection);
  fxw_graph_canvas_set_collapse_threshold (fxw_graph_view_get_canvas (self->graph_view),
                                           g_settings_get_uint (self->settings, "collapse-threshold"));
  fxw_graph_canvas_set_edge_labels (fxw_graph_view_get_canvas (self->graph_view),
                                    g_settings_get_boolean (self->settings, "edge-labels"));

  {
    GtkGesture *click = gtk_gesture_click_new ();

    g_signal_connect (click, "released", G_CALLBACK (guards_click_cb), self);
    gtk_widget_add_controller (GTK_WIDGET (self->guards_text), GTK_EVENT_CONTROLLER (click));
  }

  self->search_folded = g_strdup ("");
  filter = gtk_custom_filter_new (sidebar_filter_func, self, NULL);
  self->sidebar_filter = gtk_filter_list_model_new (NULL, GTK_FILTER (filter));
  self->sidebar_selection = gtk_single_selection_new (g_object_ref (G_LIST_MODEL (self->sidebar_filter)));
  gtk_single_selection_set_autoselect (self->sidebar_selection, FALSE);
  g_signal_connect_object (self->sidebar_selection, "notify::selected-item",
                           G_CALLBACK (sidebar_selected_cb), self, G_CONNECT_SWAPPED);
  g_signal_connect (factory, "setup", G_CALLBACK (sidebar_setup_cb), self);
  g_signal_connect (factory, "bind", G_CALLBACK (sidebar_bind_cb), NULL);
  gtk_list_view_set_factory (self->sidebar_list, factory);
  gtk_list_view_set_model (self->sidebar_list, GTK_SELECTION_MODEL (self->sidebar_selection));

  drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect_object (drop, "drop", G_CALLBACK (drop_cb), self, 0);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  /* The provenance pane's visibility is a setting, shown as a stateful action. */
  gtk_widget_set_visible (GTK_WIDGET (self->provenance_pane),
                          g_settings_get_boolean (self->settings, "show-provenance"));
  g_settings_bind (self->settings, "show-provenance", self->provenance_pane, "visible", G_SETTINGS_BIND_DEFAULT);
  provenance = g_property_action_new ("show-provenance", self->provenance_pane, "visible");
  group = g_simple_action_group_new ();
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (provenance));
  gtk_widget_insert_action_group (GTK_WIDGET (self), "pane", G_ACTION_GROUP (group));

  {
    g_autofree char *view = g_settings_get_string (self->settings, "last-view");
    adw_view_stack_set_visible_child_name (self->view_stack, view);
  }
  g_settings_bind (self->settings, "last-view", self->view_stack, "visible-child-name", G_SETTINGS_BIND_SET);

  rebuild_recent_menu (self);
}

FxwWindow *
fxw_window_new (GtkApplication *application)
{
  return g_object_new (FXW_TYPE_WINDOW, "application", application, NULL);
}

FxwDocument *
fxw_window_get_document (FxwWindow *self)
{
  return self->document;
}

FxwSelection *
fxw_window_get_selection (FxwWindow *self)
{
  return self->selection;
}

GListModel *
fxw_window_get_sidebar_model (FxwWindow *self)
{
  return G_LIST_MODEL (self->sidebar_filter);
}

gboolean
fxw_window_select_stage (FxwWindow *self, guint position)
{
  if (position >= g_list_model_get_n_items (G_LIST_MODEL (self->sidebar_filter)))
    return FALSE;
  gtk_single_selection_set_selected (self->sidebar_selection, position);
  sidebar_selected_cb (self);
  return TRUE;
}

void
fxw_window_set_view (FxwWindow *self, const char *name)
{
  if (adw_view_stack_get_child_by_name (self->view_stack, name) != NULL)
    adw_view_stack_set_visible_child_name (self->view_stack, name);
}

GtkWidget *
fxw_window_get_view (FxwWindow *self, const char *name)
{
  if (g_strcmp0 (name, "provenance") == 0)
    return GTK_WIDGET (self->provenance_pane);
  return adw_view_stack_get_child_by_name (self->view_stack, name);
}

char *
fxw_window_dup_guards_text (FxwWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->guards_text);
  GtkTextIter start, end;

  if (!g_str_equal (gtk_stack_get_visible_child_name (self->guards_stack), "text"))
    return NULL;
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

const char *
fxw_window_get_banner_text (FxwWindow *self)
{
  return gtk_label_get_label (self->banner_label);
}

gboolean
fxw_window_get_banner_visible (FxwWindow *self)
{
  return gtk_revealer_get_reveal_child (self->banner_revealer);
}

gboolean
fxw_window_activate_guards_link (FxwWindow *self, const char *file_suffix)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->guards_text);
  GtkTextTag *tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), "user-line");
  GtkTextIter iter;

  if (tag == NULL)
    return FALSE;
  gtk_text_buffer_get_start_iter (buffer, &iter);
  while (gtk_text_iter_forward_to_tag_toggle (&iter, tag))
    if (gtk_text_iter_starts_tag (&iter, tag))
      {
        GtkTextIter end = iter;
        g_autofree char *link = NULL;
        char *q, *num_end = NULL;
        long line;

        gtk_text_iter_forward_to_tag_toggle (&end, tag);
        link = gtk_text_buffer_get_text (buffer, &iter, &end, FALSE);
        if ((q = strstr (link, "\", line ")) == NULL)
          continue;
        *q = '\0';
        if (!g_str_has_suffix (link, file_suffix))
          continue;
        line = strtol (q + 8, &num_end, 10);
        open_location_cb (self, link + 6, (int) line);
        return TRUE;
      }
  return FALSE;
}
