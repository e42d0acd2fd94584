/* fxw-minify-window.c: the Minify window: a form (backend, options, failure kind, time limit), `fxwb minify --json`
   in a subprocess read line by line (the minifier forks per candidate; keeping it out of the GUI process keeps GTK's
   threads away from fork), a live chart of nodes left, Cancel/Resume, and the result beside the original. */
#define G_LOG_DOMAIN "fxw-minify"

#include "fx-config.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <signal.h>
#include <string.h>

#include "fx/pyparse.h"
#include "fxw-graph-view.h"
#include "fxw-minify-window.h"
#include "fxw-engine.h"
#include "fxw-selection.h"

typedef struct
{
  double candidates;
  double nodes;
} chart_point;

struct _FxwMinifyWindow
{
  FxwToolWindow parent_instance;

  fx_graph *graph;          /* the original (owned) */
  char *title;
  char *work_dir;           /* graph.py, repro.py, repro.py.checkpoint */
  char *graph_path;
  char *repro_path;

  FxwMinifyState state;
  GDataInputStream *lines;
  GArray *points;           /* chart_point */
  double start_nodes;
  char *status;
  GStrv kept;
  fx_graph *result;         /* owned by the result view's FxwGraph */
  int center_tries;

  GtkEntry *backend_entry;
  GtkEntry *options_entry;
  GtkDropDown *fail_on_drop;
  GtkSpinButton *timeout_spin;
  GtkButton *start_button;
  GtkButton *cancel_button;
  GtkButton *resume_button;
  GtkButton *save_button;
  GtkLabel *status_label;
  GtkDrawingArea *chart;
  GtkPaned *result_paned;
  FxwGraphView *original_view;
  FxwGraphView *result_view;
  FxwSelection *original_selection;
  FxwSelection *result_selection;
};

G_DEFINE_FINAL_TYPE (FxwMinifyWindow, fxw_minify_window, FXW_TYPE_TOOL_WINDOW)

static const char *const fail_on_names[] = { "any", "compile-error", "runtime-error", "crash", "hang", "accuracy",
                                             NULL };

/* ---------------------------------------------------------------- state and status */

static void
update_buttons (FxwMinifyWindow *self)
{
  gboolean running = self->state == FXW_MINIFY_RUNNING;
  gtk_widget_set_sensitive (GTK_WIDGET (self->start_button), !running);
  gtk_widget_set_sensitive (GTK_WIDGET (self->cancel_button), running);
  gboolean can_resume = !running && self->repro_path != NULL && (self->state == FXW_MINIFY_CANCELLED);
  gtk_widget_set_sensitive (GTK_WIDGET (self->resume_button), can_resume);
  gtk_widget_set_sensitive (GTK_WIDGET (self->save_button), self->state == FXW_MINIFY_DONE);
  /* focus leaves the form before it is locked (an insensitive focused entry misses its focus-out) */
  if (running)
    gtk_widget_grab_focus (GTK_WIDGET (self->cancel_button));
  gtk_widget_set_sensitive (GTK_WIDGET (self->backend_entry), !running);
  gtk_widget_set_sensitive (GTK_WIDGET (self->options_entry), !running);
  gtk_widget_set_sensitive (GTK_WIDGET (self->fail_on_drop), !running);
  gtk_widget_set_sensitive (GTK_WIDGET (self->timeout_spin), !running);
}

static void
set_status (FxwMinifyWindow *self, const char *text)
{
  g_free (self->status);
  self->status = g_strdup (text);
  gtk_label_set_label (self->status_label, text);
}

static void
set_state (FxwMinifyWindow *self, FxwMinifyState state)
{
  self->state = state;
  update_buttons (self);
}

/* ---------------------------------------------------------------- the chart */

static void
chart_draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  FxwMinifyWindow *self = user_data;
  GtkStyleContext *ctx = gtk_widget_get_style_context (GTK_WIDGET (area));
  GdkRGBA fg;
  gtk_style_context_get_color (ctx, &fg);
  const double left = 48, right = 12, top = 12, bottom = 28;
  double w = width - left - right, h = height - top - bottom;
  if (w <= 10 || h <= 10)
    return;
  double max_c = 1, max_n = self->start_nodes > 0 ? self->start_nodes : 1;
  for (guint i = 0; i < self->points->len; i++)
    {
      chart_point *p = &g_array_index (self->points, chart_point, i);
      max_c = MAX (max_c, p->candidates);
      max_n = MAX (max_n, p->nodes);
    }
  cairo_set_line_width (cr, 1);
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.5);
  cairo_move_to (cr, left, top);
  cairo_line_to (cr, left, top + h);
  cairo_line_to (cr, left + w, top + h);
  cairo_stroke (cr);
  cairo_set_font_size (cr, 11);
  char text[64];
  g_snprintf (text, sizeof text, "%.0f", max_n);
  cairo_move_to (cr, 4, top + 10);
  cairo_show_text (cr, text);
  cairo_move_to (cr, 4, top + h);
  cairo_show_text (cr, "0");
  g_snprintf (text, sizeof text, _("%.0f candidates"), max_c);
  cairo_text_extents_t ext;
  cairo_text_extents (cr, text, &ext);
  cairo_move_to (cr, left + w - ext.width, top + h + 18);
  cairo_show_text (cr, text);
  cairo_move_to (cr, left, top + h + 18);
  cairo_show_text (cr, _("nodes left"));
  if (self->points->len == 0)
    return;
  GdkRGBA accent = { 0.21, 0.52, 0.89, 1.0 };
  gdk_cairo_set_source_rgba (cr, &accent);
  cairo_set_line_width (cr, 2);
  for (guint i = 0; i < self->points->len; i++)
    {
      chart_point *p = &g_array_index (self->points, chart_point, i);
      double x = left + w * p->candidates / max_c, y = top + h - h * p->nodes / max_n;
      if (i == 0)
        cairo_move_to (cr, x, y);
      else
        {
          /* a step: the graph stays the same size until the next accepted candidate */
          chart_point *q = &g_array_index (self->points, chart_point, i - 1);
          cairo_line_to (cr, x, top + h - h * q->nodes / max_n);
          cairo_line_to (cr, x, y);
        }
    }
  cairo_stroke (cr);
  for (guint i = 0; i < self->points->len; i++)
    {
      chart_point *p = &g_array_index (self->points, chart_point, i);
      cairo_arc (cr, left + w * p->candidates / max_c, top + h - h * p->nodes / max_n, 3, 0, 2 * G_PI);
      cairo_fill (cr);
    }
}

/* ---------------------------------------------------------------- the subprocess */

static void read_next_line (FxwMinifyWindow *self);

static const char *
jstr (json_object *o, const char *key)
{
  json_object *v;
  return json_object_object_get_ex (o, key, &v) && json_object_is_type (v, json_type_string) ? json_object_get_string (v)
                                                                                               : NULL;
}

static double
jnum (json_object *o, const char *key)
{
  json_object *v;
  return json_object_object_get_ex (o, key, &v) ? json_object_get_double (v) : 0;
}

static gboolean
center_kept_cb (gpointer data)
{
  FxwMinifyWindow *self = data;
  FxwGraphCanvas *canvas = fxw_graph_view_get_canvas (self->original_view);
  double x, y;
  if (self->kept == NULL || self->kept[0] == NULL || ++self->center_tries > 50)
    return G_SOURCE_REMOVE;
  if (fxw_graph_canvas_get_busy (canvas) || !fxw_graph_canvas_get_node_center (canvas, self->kept[0], &x, &y))
    return G_SOURCE_CONTINUE;
  fxw_graph_canvas_pan (canvas, gtk_widget_get_width (GTK_WIDGET (canvas)) / 2.0 - x,
                        gtk_widget_get_height (GTK_WIDGET (canvas)) / 2.0 - y);
  return G_SOURCE_REMOVE;
}

static void
show_result (FxwMinifyWindow *self)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_file (self->repro_path, &g, &diag) != FX_OK)
    {
      set_status (self, diag.message);
      set_state (self, FXW_MINIFY_FAILED);
      return;
    }
  g_autofree char *title = g_strdup_printf (_("Minimized %s"), self->title);
  g_autoptr (FxwGraph) result = fxw_graph_new (g, title);
  self->result = g;
  fxw_selection_set_graph (self->result_selection, result);
  fxw_selection_set_highlight (self->original_selection, (const char *const *) self->kept);
  fxw_selection_set_highlight (self->result_selection, (const char *const *) self->kept);
  /* the original can be large: bring a kept node into view once it is laid out */
  if (self->kept && self->kept[0])
    {
      fxw_selection_select_name (self->original_selection, self->kept[0]);
      self->center_tries = 0;
      g_timeout_add_full (G_PRIORITY_DEFAULT, 100, center_kept_cb, g_object_ref (self), g_object_unref);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->result_paned), TRUE);
}

static void
handle_line (FxwMinifyWindow *self, const char *line)
{
  json_object *o = json_tokener_parse (line);
  if (o == NULL || !json_object_is_type (o, json_type_object))
    {
      if (o)
        json_object_put (o);
      return;
    }
  const char *event = jstr (o, "event");
  if (event == NULL)
    {
      json_object_put (o);
      return;
    }
  if (g_str_equal (event, "start") || g_str_equal (event, "shrunk") || g_str_equal (event, "candidate"))
    {
      double nodes = jnum (o, "nodes"), cand = jnum (o, "candidates");
      if (g_str_equal (event, "start"))
        {
          self->start_nodes = jnum (o, "start_nodes");
          g_array_set_size (self->points, 0);
        }
      if (!g_str_equal (event, "candidate"))
        {
          chart_point p = { cand, nodes };
          g_array_append_val (self->points, p);
          gtk_widget_queue_draw (GTK_WIDGET (self->chart));
        }
      const char *strategy = jstr (o, "strategy");
      g_autofree char *text = g_strdup_printf (_("%s (granularity %d): %.0f nodes left of %.0f, %.0f candidates tried, "
                                                 "%.1f s"),
                                               strategy ? strategy : _("Checking the original graph"),
                                               (int) jnum (o, "granularity"), nodes, self->start_nodes, cand,
                                               jnum (o, "elapsed_s"));
      set_status (self, text);
    }
  else if (g_str_equal (event, "result"))
    {
      json_object *v;
      gboolean reproduced = json_object_object_get_ex (o, "reproduced", &v) && json_object_get_boolean (v);
      gboolean cancelled = json_object_object_get_ex (o, "cancelled", &v) && json_object_get_boolean (v);
      const char *outcome = jstr (o, "outcome"), *message = jstr (o, "message");
      g_autofree char *first = g_strndup (message ? message : "", strcspn (message ? message : "", "\n"));
      if (!reproduced)
        {
          g_autofree char *text = g_strdup_printf (_("The graph does not fail that way (it gives: %s%s%s). Nothing to "
                                                     "minify."), outcome ? outcome : "?", *first ? ": " : "", first);
          set_status (self, text);
          set_state (self, FXW_MINIFY_NOT_FAILING);
        }
      else
        {
          g_strfreev (self->kept);
          GStrvBuilder *b = g_strv_builder_new ();
          if (json_object_object_get_ex (o, "kept", &v) && json_object_is_type (v, json_type_array))
            for (size_t i = 0; i < json_object_array_length (v); i++)
              g_strv_builder_add (b, json_object_get_string (json_object_array_get_idx (v, i)));
          self->kept = g_strv_builder_end (b);
          g_strv_builder_unref (b);
          g_autofree char *text = g_strdup_printf (_("%s: %s — %.0f → %.0f nodes in %.0f candidates, %.1f s%s"),
                                                   outcome ? outcome : "?", first, jnum (o, "start_nodes"),
                                                   jnum (o, "end_nodes"), jnum (o, "candidates"), jnum (o, "elapsed_s"),
                                                   cancelled ? _(" (cancelled: Resume continues)") : "");
          set_status (self, text);
          set_state (self, cancelled ? FXW_MINIFY_CANCELLED : FXW_MINIFY_DONE);
          if (!cancelled)
            show_result (self);
        }
    }
  json_object_put (o);
}

static void
wait_done_cb (GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr (FxwMinifyWindow) self = user_data;
  g_autoptr (GError) error = NULL;
  g_subprocess_wait_finish (G_SUBPROCESS (source), res, &error);
  if (G_SUBPROCESS (source) != fxw_tool_window_get_process (FXW_TOOL_WINDOW (self)))
    return;   /* an earlier run's process */
  if (self->state == FXW_MINIFY_RUNNING)
    {
      /* no result line: fxwb failed (usage error, unreadable graph) or was killed */
      g_autofree char *err_path = g_build_filename (self->work_dir, "stderr.txt", NULL);
      g_autofree char *err = NULL;
      g_file_get_contents (err_path, &err, NULL, NULL);
      gboolean signalled = g_subprocess_get_if_signaled (G_SUBPROCESS (source));
      g_autofree char *text = g_strdup_printf (_("fxwb minify stopped%s: %s"), signalled ? _(" by a signal") : "",
                                               err && *err ? g_strstrip (err) : _("no message"));
      set_status (self, text);
      set_state (self, signalled ? FXW_MINIFY_CANCELLED : FXW_MINIFY_FAILED);
    }
  fxw_tool_window_process_done (FXW_TOOL_WINDOW (self));
}

static void
line_read_cb (GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr (FxwMinifyWindow) self = user_data;
  g_autoptr (GError) error = NULL;
  gsize len = 0;
  g_autofree char *line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (source), res, &len, &error);
  if (G_DATA_INPUT_STREAM (source) != self->lines)
    return;   /* an earlier run's output, after a new run started */
  if (line == NULL)
    {
      GSubprocess *proc = fxw_tool_window_get_process (FXW_TOOL_WINDOW (self));

      g_clear_object (&self->lines);
      if (proc)
        g_subprocess_wait_async (proc, NULL, wait_done_cb, g_object_ref (self));
      return;
    }
  handle_line (self, line);
  read_next_line (self);
}

static void
read_next_line (FxwMinifyWindow *self)
{
  g_data_input_stream_read_line_async (self->lines, G_PRIORITY_DEFAULT,
                                       fxw_tool_window_get_cancellable (FXW_TOOL_WINDOW (self)), line_read_cb,
                                       g_object_ref (self));
}

static gboolean
prepare_work_dir (FxwMinifyWindow *self, GError **error)
{
  if (self->work_dir)
    return TRUE;
  self->work_dir = g_dir_make_tmp ("fxw-minify-XXXXXX", error);
  if (self->work_dir == NULL)
    return FALSE;
  self->graph_path = g_build_filename (self->work_dir, "graph.py", NULL);
  self->repro_path = g_build_filename (self->work_dir, "repro.py", NULL);
  fx_buf text;
  fx_buf_init (&text);
  fx_readable_opts ro = { true, true, false };
  fx_graph_print_readable (self->graph, &ro, &text);
  gboolean ok = g_file_set_contents (self->graph_path, text.data ? text.data : "", (gssize) text.len, error);
  fx_buf_free (&text);
  return ok;
}

/* Starts fxwb minify (resume: from the checkpoint); nothing while a run is going. */
static void
launch (FxwMinifyWindow *self, gboolean resume)
{
  g_autoptr (GError) error = NULL;
  if (self->state == FXW_MINIFY_RUNNING)
    return;
  if (!prepare_work_dir (self, &error))
    {
      set_status (self, error->message);
      set_state (self, FXW_MINIFY_FAILED);
      return;
    }
  const char *backend = gtk_editable_get_text (GTK_EDITABLE (self->backend_entry));
  guint fo = gtk_drop_down_get_selected (self->fail_on_drop);
  g_autofree char *timeout = g_strdup_printf ("%g", gtk_spin_button_get_value (self->timeout_spin));
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) "minify");
  g_ptr_array_add (argv, self->graph_path);
  g_ptr_array_add (argv, (char *) "--backend");
  g_ptr_array_add (argv, (char *) (*backend ? backend : "inductor"));
  g_ptr_array_add (argv, (char *) "--fail-on");
  g_ptr_array_add (argv, (char *) fail_on_names[fo < G_N_ELEMENTS (fail_on_names) - 1 ? fo : 0]);
  g_ptr_array_add (argv, (char *) "--timeout");
  g_ptr_array_add (argv, timeout);
  g_ptr_array_add (argv, (char *) "--json");
  g_ptr_array_add (argv, (char *) "-o");
  g_ptr_array_add (argv, self->repro_path);
  if (resume)
    g_ptr_array_add (argv, (char *) "--resume");
  /* options: whitespace-separated K=V; each goes to fxwb as its own argument (no shell involved) */
  g_auto (GStrv) opts = g_strsplit_set (gtk_editable_get_text (GTK_EDITABLE (self->options_entry)), " \t,", -1);
  for (guint i = 0; opts[i]; i++)
    if (*opts[i])
      {
        g_ptr_array_add (argv, (char *) "--option");
        g_ptr_array_add (argv, opts[i]);
      }
  g_ptr_array_add (argv, NULL);
  /* an earlier run's reads are left to finish on their own */
  g_clear_object (&self->lines);
  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autofree char *err_path = g_build_filename (self->work_dir, "stderr.txt", NULL);
  g_subprocess_launcher_set_stderr_file_path (launcher, err_path);
  GSubprocess *proc = fxw_tool_window_spawn (FXW_TOOL_WINDOW (self), launcher, (const char *const *) argv->pdata,
                                             &error);
  g_ptr_array_free (argv, TRUE);
  if (proc == NULL)
    {
      set_status (self, error->message);
      set_state (self, FXW_MINIFY_FAILED);
      return;
    }
  self->lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (proc));
  gtk_widget_set_visible (GTK_WIDGET (self->result_paned), FALSE);
  set_status (self, resume ? _("Resuming from the checkpoint…") : _("Checking that the graph fails…"));
  set_state (self, FXW_MINIFY_RUNNING);
  read_next_line (self);
}

void
fxw_minify_window_start (FxwMinifyWindow *self)
{
  g_return_if_fail (FXW_IS_MINIFY_WINDOW (self));
  launch (self, FALSE);
}

void
fxw_minify_window_resume (FxwMinifyWindow *self)
{
  g_return_if_fail (FXW_IS_MINIFY_WINDOW (self));
  launch (self, TRUE);
}

void
fxw_minify_window_cancel (FxwMinifyWindow *self)
{
  g_return_if_fail (FXW_IS_MINIFY_WINDOW (self));
  /* SIGTERM: fxwb finishes the candidate in flight, keeps its checkpoint and reports; Resume goes on from there */
  GSubprocess *proc = fxw_tool_window_get_process (FXW_TOOL_WINDOW (self));
  if (proc)
    g_subprocess_send_signal (proc, SIGTERM);
  set_status (self, _("Cancelling after the current candidate…"));
}

/* ---------------------------------------------------------------- accessors */

void
fxw_minify_window_configure (FxwMinifyWindow *self, const char *backend, const char *const *options,
                             const char *fail_on, double timeout_s)
{
  g_return_if_fail (FXW_IS_MINIFY_WINDOW (self));
  if (backend)
    gtk_editable_set_text (GTK_EDITABLE (self->backend_entry), backend);
  g_autofree char *joined = options ? g_strjoinv (" ", (char **) options) : g_strdup ("");
  gtk_editable_set_text (GTK_EDITABLE (self->options_entry), joined);
  for (guint i = 0; fail_on && fail_on_names[i]; i++)
    if (g_str_equal (fail_on, fail_on_names[i]))
      gtk_drop_down_set_selected (self->fail_on_drop, i);
  if (timeout_s > 0)
    gtk_spin_button_set_value (self->timeout_spin, timeout_s);
}

FxwMinifyState
fxw_minify_window_get_state (FxwMinifyWindow *self)
{
  return self->state;
}

const char *
fxw_minify_window_get_status (FxwMinifyWindow *self)
{
  return self->status;
}

guint
fxw_minify_window_get_n_points (FxwMinifyWindow *self)
{
  return self->points->len;
}

guint
fxw_minify_window_get_n_kept (FxwMinifyWindow *self)
{
  return fxw_selection_get_n_highlighted (self->original_selection);
}

const fx_graph *
fxw_minify_window_get_result (FxwMinifyWindow *self)
{
  return self->state == FXW_MINIFY_DONE ? self->result : NULL;
}

gboolean
fxw_minify_window_save_repro (FxwMinifyWindow *self, const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents (self->repro_path, &text, &len, error))
    return FALSE;
  return g_file_set_contents (path, text, (gssize) len, error);
}

static void
save_response_cb (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  FxwMinifyWindow *self = user_data;
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      g_autoptr (GError) error = NULL;
      if (path && !fxw_minify_window_save_repro (self, path, &error))
        set_status (self, error->message);
      else if (path)
        {
          g_autofree char *text = g_strdup_printf (_("Saved %s"), path);
          set_status (self, text);
        }
    }
  g_object_unref (dialog);
}

static void
save_clicked_cb (FxwMinifyWindow *self)
{
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new (_("Save repro.py"), GTK_WINDOW (self),
                                                               GTK_FILE_CHOOSER_ACTION_SAVE, NULL, NULL);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), "repro.py");
  g_signal_connect (chooser, "response", G_CALLBACK (save_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* ---------------------------------------------------------------- construction */

static void
remove_work_dir (const char *dir)
{
  if (dir == NULL)
    return;
  static const char *const files[] = { "graph.py", "repro.py", "repro.py.checkpoint", "repro.py.checkpoint.tmp",
                                       "stderr.txt" };
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *p = g_build_filename (dir, files[i], NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}

static void
fxw_minify_window_finalize (GObject *object)
{
  FxwMinifyWindow *self = FXW_MINIFY_WINDOW (object);
  g_clear_object (&self->lines);
  g_clear_object (&self->original_selection);
  g_clear_object (&self->result_selection);
  remove_work_dir (self->work_dir);
  g_free (self->work_dir);
  g_free (self->graph_path);
  g_free (self->repro_path);
  g_free (self->title);
  g_free (self->status);
  g_strfreev (self->kept);
  g_array_unref (self->points);
  if (self->graph)
    fx_graph_free (self->graph);
  G_OBJECT_CLASS (fxw_minify_window_parent_class)->finalize (object);
}

static void
fxw_minify_window_class_init (FxwMinifyWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = fxw_minify_window_finalize;
}

static GtkWidget *
labelled (const char *text, GtkWidget *child)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *label = gtk_label_new_with_mnemonic (text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_mnemonic_widget (GTK_LABEL (label), child);
  gtk_widget_add_css_class (label, "caption-heading");
  gtk_box_append (GTK_BOX (box), label);
  gtk_box_append (GTK_BOX (box), child);
  return box;
}

static void
fxw_minify_window_init (FxwMinifyWindow *self)
{
  self->points = g_array_new (FALSE, TRUE, sizeof (chart_point));
  self->original_selection = fxw_selection_new ();
  self->result_selection = fxw_selection_new ();

  GtkBox *body = fxw_tool_window_get_body (FXW_TOOL_WINDOW (self));

  /* the form */
  GtkWidget *form = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  self->backend_entry = GTK_ENTRY (gtk_entry_new ());
  gtk_editable_set_text (GTK_EDITABLE (self->backend_entry), "inductor");
  gtk_editable_set_width_chars (GTK_EDITABLE (self->backend_entry), 14);
  gtk_box_append (GTK_BOX (form), labelled (_("_Backend"), GTK_WIDGET (self->backend_entry)));
  self->options_entry = GTK_ENTRY (gtk_entry_new ());
  gtk_entry_set_placeholder_text (self->options_entry, "cpp.inject_relu_bug_TESTING_ONLY=accuracy");
  gtk_widget_set_hexpand (GTK_WIDGET (self->options_entry), TRUE);
  GtkWidget *opt_box = labelled (_("_Options (KEY=VALUE …)"), GTK_WIDGET (self->options_entry));
  gtk_widget_set_hexpand (opt_box, TRUE);
  gtk_box_append (GTK_BOX (form), opt_box);
  self->fail_on_drop = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (fail_on_names));
  gtk_box_append (GTK_BOX (form), labelled (_("_Failure"), GTK_WIDGET (self->fail_on_drop)));
  self->timeout_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (1, 3600, 1));
  gtk_spin_button_set_value (self->timeout_spin, 120);
  gtk_box_append (GTK_BOX (form), labelled (_("_Time limit (s)"), GTK_WIDGET (self->timeout_spin)));
  gtk_box_append (body, form);

  /* the buttons */
  GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->start_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Minify")));
  gtk_widget_add_css_class (GTK_WIDGET (self->start_button), "suggested-action");
  self->cancel_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Cancel")));
  self->resume_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Resume")));
  self->save_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Save repro.py…")));
  g_signal_connect_swapped (self->start_button, "clicked", G_CALLBACK (fxw_minify_window_start), self);
  g_signal_connect_swapped (self->cancel_button, "clicked", G_CALLBACK (fxw_minify_window_cancel), self);
  g_signal_connect_swapped (self->resume_button, "clicked", G_CALLBACK (fxw_minify_window_resume), self);
  g_signal_connect_swapped (self->save_button, "clicked", G_CALLBACK (save_clicked_cb), self);
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (self->start_button));
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (self->cancel_button));
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (self->resume_button));
  GtkWidget *spacer = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_set_hexpand (spacer, TRUE);
  gtk_box_append (GTK_BOX (buttons), spacer);
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (self->save_button));
  gtk_box_append (body, buttons);

  /* progress: the status line and nodes left over candidates */
  self->status_label = GTK_LABEL (gtk_label_new (_("Choose the backend, its options and the failure to keep, then "
                                                   "Minify.")));
  gtk_label_set_xalign (self->status_label, 0);
  gtk_label_set_wrap (self->status_label, TRUE);
  gtk_label_set_selectable (self->status_label, TRUE);
  gtk_box_append (body, GTK_WIDGET (self->status_label));
  self->chart = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_drawing_area_set_content_height (self->chart, 140);
  gtk_drawing_area_set_draw_func (self->chart, chart_draw, self, NULL);
  gtk_box_append (body, GTK_WIDGET (self->chart));

  /* the result: the original with the kept nodes highlighted, the minimized graph beside it */
  self->result_paned = GTK_PANED (gtk_paned_new (GTK_ORIENTATION_HORIZONTAL));
  gtk_widget_set_vexpand (GTK_WIDGET (self->result_paned), TRUE);
  self->original_view = FXW_GRAPH_VIEW (fxw_graph_view_new ());
  self->result_view = FXW_GRAPH_VIEW (fxw_graph_view_new ());
  fxw_graph_view_set_selection (self->original_view, self->original_selection);
  fxw_graph_view_set_selection (self->result_view, self->result_selection);
  GtkWidget *left = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *right = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *ll = gtk_label_new (_("Original (kept nodes highlighted)"));
  GtkWidget *rl = gtk_label_new (_("Minimized"));
  gtk_widget_add_css_class (ll, "heading");
  gtk_widget_add_css_class (rl, "heading");
  gtk_box_append (GTK_BOX (left), ll);
  gtk_box_append (GTK_BOX (right), rl);
  gtk_widget_set_vexpand (GTK_WIDGET (self->original_view), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self->result_view), TRUE);
  gtk_box_append (GTK_BOX (left), GTK_WIDGET (self->original_view));
  gtk_box_append (GTK_BOX (right), GTK_WIDGET (self->result_view));
  gtk_paned_set_start_child (self->result_paned, left);
  gtk_paned_set_end_child (self->result_paned, right);
  gtk_paned_set_position (self->result_paned, 560);
  gtk_widget_set_visible (GTK_WIDGET (self->result_paned), FALSE);
  gtk_box_append (body, GTK_WIDGET (self->result_paned));

  gtk_window_set_default_size (GTK_WINDOW (self), 1100, 800);
  update_buttons (self);
}

FxwMinifyWindow *
fxw_minify_window_new (GtkWindow *parent, const fx_graph *graph, const char *title)
{
  g_return_val_if_fail (graph != NULL, NULL);
  FxwMinifyWindow *self = g_object_new (FXW_TYPE_MINIFY_WINDOW, "transient-for", parent, NULL);
  self->graph = fx_graph_copy (graph);
  self->title = g_strdup (title ? title : _("graph"));
  g_autofree char *wt = g_strdup_printf (_("Minify %s"), self->title);
  gtk_window_set_title (GTK_WINDOW (self), wt);
  g_autoptr (FxwGraph) original = fxw_graph_new (fx_graph_copy (graph), self->title);
  fxw_selection_set_graph (self->original_selection, original);
  return self;
}
