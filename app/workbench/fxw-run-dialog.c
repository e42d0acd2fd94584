/* fxw-run-dialog.c: Run & Compare: a matrix of backend × mode × options, run by `fxwb compare` in the background;
   with Training, each column runs training steps (forward, backward, optimizer update: `fxwb compare --train`). */
#include "fx-config.h"

#include "fxw-run-dialog.h"
#include "fxw-engine.h"

#include <glib/gi18n.h>
#include <string.h>

#include "fx/backend.h"
#include "registry/fx-registry.h"

/* Each column runs in its own fxwb process: a backend that crashes or hangs takes that process down, not the
   app, Cancel kills it, and the runs are stored by the same code as `fxwb compare -w`. */

typedef struct
{
  char *spec;                 /* "inductor", "torch:inductor" */
  const fx_backend *backend;
  GtkWidget *check;
  GtkWidget *mode;            /* GtkDropDown over modes */
  GtkStringList *modes;
  GtkWidget *options;         /* GtkEntry: "k=v, k=v" */
  GtkWidget *error;           /* GtkLabel, hidden when valid */
} Column;

struct _FxwRunDialog
{
  FxwToolWindow parent_instance;

  char *source, *stage, *workspace;
  char *upto;                  /* run the graph up to this node (fxwb compare --upto); NULL: the whole graph */
  GPtrArray *columns;         /* Column */
  GtkWidget *repeat;          /* GtkSpinButton */
  GtkWidget *train;           /* GtkCheckButton: fxwb compare --train */
  GtkWidget *steps;           /* GtkSpinButton: --steps */
  GtkWidget *optimizer;       /* GtkDropDown: --optimizer sgd | adam */
  GtkWidget *run_button, *cancel_button, *progress, *log_label, *status;
  GtkWidget *matrix;          /* the grid, insensitive while running */

  GPtrArray *columns_to_run;  /* char *: the "-b" argument of each checked column, which the log shows too */
  guint current;
  gboolean running, all_ok, cancelled;
  GString *log;
};

G_DEFINE_FINAL_TYPE (FxwRunDialog, fxw_run_dialog, FXW_TYPE_TOOL_WINDOW)

enum { FINISHED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
column_free (Column *col)
{
  g_free (col->spec);
  g_clear_object (&col->modes);
  g_free (col);
}

/* ---------------------------------------------------------------- validation */

static const char *
column_mode (Column *col)
{
  guint i = gtk_drop_down_get_selected (GTK_DROP_DOWN (col->mode));
  const char *mode = i != GTK_INVALID_LIST_POSITION ? gtk_string_list_get_string (col->modes, i) : NULL;

  return mode != NULL && !g_str_equal (mode, "default") ? mode : NULL;
}

/* A key or value the command line can carry inside one "-b SPEC,K=V" argument. */
static gboolean
plain_token (const char *s, gboolean key)
{
  if (*s == '\0')
    return FALSE;
  for (; *s; s++)
    if (g_ascii_isspace (*s) || *s == ',' || *s == '@' || (key && !(g_ascii_isalnum (*s) || *s == '_' || *s == '.')))
      return FALSE;
  return TRUE;
}

/* The "-b" argument of a column ("inductor@max-autotune", "inductor,cpp.threads=1"), checked against the backend's
   declared options and modes with the messages the CLI gives; NULL with *message set when it is not valid. */
static char *
column_argument (Column *col, char **message)
{
  const char *mode = column_mode (col);
  const char *text = gtk_editable_get_text (GTK_EDITABLE (col->options));
  g_auto(GStrv) parts = g_strsplit (text, ",", -1);
  g_autoptr(GArray) kv = g_array_new (FALSE, TRUE, sizeof (fx_option_kv));
  g_autoptr(GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);
  GString *arg = g_string_new (col->spec);
  fx_arena *arena = fx_arena_new ();
  const fx_backend *backend = NULL;
  const char *sub = NULL;
  fx_options opts;
  fx_diag diag;

  fx_diag_clear (&diag);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      char *item = g_strstrip (parts[i]);
      char *eq = strchr (item, '=');
      fx_option_kv one;

      if (*item == '\0')
        continue;
      if (eq == NULL)
        {
          *message = g_strdup_printf (_("“%s” is not KEY=VALUE"), item);
          goto fail;
        }
      *eq = '\0';
      g_strstrip (item);
      g_strstrip (eq + 1);
      if (!plain_token (item, TRUE) || !plain_token (eq + 1, FALSE))
        {
          *message = g_strdup_printf (_("“%s=%s”: keys and values are single words without “,” or “@”"), item,
                                      eq + 1);
          goto fail;
        }
      one.key = g_strdup (item);
      g_ptr_array_add (owned, (char *) one.key);
      one.value = g_strdup (eq + 1);
      g_ptr_array_add (owned, (char *) one.value);
      g_array_append_val (kv, one);
    }
  if (fx_backend_parse_spec (col->spec, arena, &backend, &sub, &diag) != FX_OK
      || fx_backend_resolve_options (backend, mode, (const fx_option_kv *) (void *) kv->data, kv->len, arena,
                                     &opts, &diag) != FX_OK)
    {
      *message = g_strdup (diag.message);
      goto fail;
    }
  if (mode != NULL)
    g_string_append_printf (arg, "@%s", mode);
  for (guint i = 0; i < kv->len; i++)
    g_string_append_printf (arg, ",%s=%s", g_array_index (kv, fx_option_kv, i).key,
                            g_array_index (kv, fx_option_kv, i).value);
  fx_arena_free (arena);
  return g_string_free (arg, FALSE);

fail:
  fx_arena_free (arena);
  g_string_free (arg, TRUE);
  return NULL;
}

/* ---------------------------------------------------------------- running */

static void run_next (FxwRunDialog *self);

static void
set_running (FxwRunDialog *self, gboolean running)
{
  self->running = running;
  gtk_widget_set_sensitive (self->matrix, !running);
  gtk_widget_set_sensitive (self->run_button, !running);
  gtk_widget_set_visible (self->cancel_button, running);
  gtk_widget_set_visible (self->progress, TRUE);
}

static void
show_log (FxwRunDialog *self)
{
  gtk_label_set_text (GTK_LABEL (self->log_label), self->log->str);
}

static void
finish (FxwRunDialog *self)
{
  g_autofree char *text = NULL;

  set_running (self, FALSE);
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), self->cancelled ? 0.0 : 1.0);
  if (fxw_run_dialog_get_training (self))
    text = g_strdup (self->cancelled ? _("Cancelled.")
                     : self->all_ok ? _("Done: every column's gradients match the reference (training runs are not stored)")
                                    : _("Done, with failures (see below)"));
  else if (self->cancelled)
    text = g_strdup (_("Cancelled. The columns that finished are stored."));
  else if (self->all_ok)
    text = g_strdup_printf (_("Done: %u columns stored in %s"), self->columns_to_run->len, self->workspace);
  else
    text = g_strdup_printf (_("Done, with failures (see below); the runs are stored in %s"), self->workspace);
  gtk_label_set_text (GTK_LABEL (self->status), text);
  g_signal_emit (self, signals[FINISHED], 0, self->all_ok && !self->cancelled);
}

/* The table rows of fxwb's output and its errors, without the header lines (a training table keeps its column
   header: which time is the forward's and which the backward's). */
static void
append_output (GString *log, const char *out, gboolean keep_header)
{
  g_auto(GStrv) lines = g_strsplit (out != NULL ? out : "", "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    if (*lines[i] && !g_str_has_prefix (lines[i], "graph: ") && (keep_header || !g_str_has_prefix (lines[i], "backend ")))
      g_string_append_printf (log, "    %s\n", lines[i]);
}

static void
column_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(FxwRunDialog) self = user_data;
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  const char *label = g_ptr_array_index (self->columns_to_run, self->current);

  if (!g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), result, &out, NULL, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_string_append_printf (self->log, "%s: %s\n", label, error->message);
      self->all_ok = FALSE;
    }
  else
    {
      int status = g_subprocess_get_if_exited (G_SUBPROCESS (source)) ? g_subprocess_get_exit_status (G_SUBPROCESS (source))
                                                                       : -1;

      if (status == 0)
        g_string_append_printf (self->log, _("%s: ran, matches the reference\n"), label);
      else if (status == 1)
        g_string_append_printf (self->log, _("%s: failed or does not match the reference\n"), label);
      else if (status < 0)
        g_string_append_printf (self->log, _("%s: fxwb was killed by signal %d\n"), label,
                                g_subprocess_get_term_sig (G_SUBPROCESS (source)));
      else
        g_string_append_printf (self->log, _("%s: fxwb exited with status %d\n"), label, status);
      append_output (self->log, out, fxw_run_dialog_get_training (self));
      self->all_ok &= status == 0;
    }
  fxw_tool_window_process_done (FXW_TOOL_WINDOW (self));
  show_log (self);
  self->current++;
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), (double) self->current / self->columns_to_run->len);
  if (self->cancelled || self->current >= self->columns_to_run->len)
    finish (self);
  else
    run_next (self);
}

static void
run_next (FxwRunDialog *self)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                       | G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_autoptr(GError) error = NULL;
  g_autofree char *status = NULL;
  int repeat = gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->repeat));
  GSubprocess *proc;

  g_ptr_array_add (argv, g_strdup ("compare"));
  g_ptr_array_add (argv, g_strdup (self->source));
  if (self->stage != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--stage"));
      g_ptr_array_add (argv, g_strdup (self->stage));
    }
  if (self->upto != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--upto"));
      g_ptr_array_add (argv, g_strdup (self->upto));
    }
  g_ptr_array_add (argv, g_strdup ("-b"));
  g_ptr_array_add (argv, g_strdup (g_ptr_array_index (self->columns_to_run, self->current)));
  g_ptr_array_add (argv, g_strdup ("--kernels"));
  g_ptr_array_add (argv, g_strdup_printf ("--repeat=%d", repeat));
  if (fxw_run_dialog_get_training (self))
    {
      g_ptr_array_add (argv, g_strdup ("--train"));
      g_ptr_array_add (argv, g_strdup_printf ("--steps=%d", gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->steps))));
      g_ptr_array_add (argv, g_strdup (gtk_drop_down_get_selected (GTK_DROP_DOWN (self->optimizer)) == 1
                                       ? "--optimizer=adam" : "--optimizer=sgd"));
    }
  /* A workspace compile stores its runs into its own workspace; a file's go to the one chosen for it. */
  if (self->stage == NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--workspace"));
      g_ptr_array_add (argv, g_strdup (self->workspace));
    }
  g_ptr_array_add (argv, NULL);

  /* translators: progress of Run & Compare: the column being run, and how many there are */
  status = g_strdup_printf (_("Running %s (%u of %u)…"), (char *) g_ptr_array_index (self->columns_to_run, self->current),
                            self->current + 1, self->columns_to_run->len);
  gtk_label_set_text (GTK_LABEL (self->status), status);
  proc = fxw_tool_window_spawn (FXW_TOOL_WINDOW (self), launcher, (const char * const *) argv->pdata, &error);
  if (proc == NULL)
    {
      g_string_append_printf (self->log, "%s\n", error->message);
      self->all_ok = FALSE;
      show_log (self);
      finish (self);
      return;
    }
  g_subprocess_communicate_utf8_async (proc, NULL, fxw_tool_window_get_cancellable (FXW_TOOL_WINDOW (self)),
                                       column_done_cb, g_object_ref (self));
}

gboolean
fxw_run_dialog_start (FxwRunDialog *self, GError **error)
{
  gboolean valid = TRUE;

  g_return_val_if_fail (FXW_IS_RUN_DIALOG (self), FALSE);
  if (self->running)
    return TRUE;
  g_ptr_array_set_size (self->columns_to_run, 0);
  for (guint i = 0; i < self->columns->len; i++)
    {
      Column *col = g_ptr_array_index (self->columns, i);
      g_autofree char *message = NULL;
      g_autofree char *arg = NULL;

      gtk_widget_set_visible (col->error, FALSE);
      if (!gtk_check_button_get_active (GTK_CHECK_BUTTON (col->check)))
        continue;
      arg = column_argument (col, &message);
      if (arg == NULL)
        {
          gtk_label_set_text (GTK_LABEL (col->error), message);
          gtk_widget_set_visible (col->error, TRUE);
          if (valid)
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s: %s", col->spec, message);
          valid = FALSE;
          continue;
        }
      g_ptr_array_add (self->columns_to_run, g_steal_pointer (&arg));
    }
  if (!valid)
    return FALSE;
  if (self->columns_to_run->len == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _("Choose at least one backend"));
      gtk_label_set_text (GTK_LABEL (self->status), _("Choose at least one backend"));
      return FALSE;
    }
  g_string_truncate (self->log, 0);
  show_log (self);
  self->current = 0;
  self->all_ok = TRUE;
  self->cancelled = FALSE;
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress), 0.0);
  set_running (self, TRUE);
  run_next (self);
  return TRUE;
}

void
fxw_run_dialog_cancel (FxwRunDialog *self)
{
  g_return_if_fail (FXW_IS_RUN_DIALOG (self));
  if (!self->running)
    return;
  self->cancelled = TRUE;
  if (fxw_tool_window_get_process (FXW_TOOL_WINDOW (self)) != NULL)
    g_subprocess_force_exit (fxw_tool_window_get_process (FXW_TOOL_WINDOW (self)));
}

/* ---------------------------------------------------------------- building */

static void
run_clicked_cb (FxwRunDialog *self)
{
  fxw_run_dialog_start (self, NULL);
}

static void
add_column (FxwRunDialog *self, GtkGrid *grid, const char *spec, const fx_backend *backend, gboolean active)
{
  Column *col = g_new0 (Column, 1);
  int row = (int) self->columns->len + 1;
  g_autoptr(GString) hint = g_string_new (NULL);

  col->spec = g_strdup (spec);
  col->backend = backend;
  col->check = gtk_check_button_new_with_label (spec);
  gtk_check_button_set_active (GTK_CHECK_BUTTON (col->check), active);
  gtk_widget_set_tooltip_text (col->check, backend->description);
  col->modes = gtk_string_list_new (NULL);
  gtk_string_list_append (col->modes, "default");
  for (size_t m = 0; m < backend->n_modes; m++)
    if (!g_str_equal (backend->modes[m].mode, "default"))
      gtk_string_list_append (col->modes, backend->modes[m].mode);
  col->mode = gtk_drop_down_new (G_LIST_MODEL (g_object_ref (col->modes)), NULL);
  col->options = gtk_entry_new ();
  gtk_widget_set_hexpand (col->options, TRUE);
  for (size_t o = 0; o < backend->n_options && o < 3; o++)
    g_string_append_printf (hint, "%s%s=%s", o ? ", " : "", backend->options[o].name,
                            backend->options[o].default_text);
  gtk_entry_set_placeholder_text (GTK_ENTRY (col->options), hint->len ? hint->str : _("no options"));
  gtk_widget_set_sensitive (col->options, backend->n_options > 0);
  col->error = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (col->error), 0);
  gtk_label_set_wrap (GTK_LABEL (col->error), TRUE);
  gtk_widget_add_css_class (col->error, "error");
  gtk_widget_set_visible (col->error, FALSE);

  gtk_grid_attach (grid, col->check, 0, row * 2, 1, 1);
  gtk_grid_attach (grid, col->mode, 1, row * 2, 1, 1);
  gtk_grid_attach (grid, col->options, 2, row * 2, 1, 1);
  gtk_grid_attach (grid, col->error, 0, row * 2 + 1, 3, 1);
  g_ptr_array_add (self->columns, col);
}

static void
fill_columns (FxwRunDialog *self, GtkGrid *grid)
{
  const fx_backend *list[64];
  size_t n;

  fx_backends_init ();   /* idempotent: the application registered them at startup, a test may not have */
  n = fx_backend_list (false, list, G_N_ELEMENTS (list));

  for (size_t i = 0; i < n && i < G_N_ELEMENTS (list); i++)
    {
      const char *name = list[i]->name;

      if (g_str_equal (name, "torch"))
        {
          /* PyTorch's own columns: its eager and its torch.compile(backend="inductor"). */
          add_column (self, grid, "torch:eager", list[i], FALSE);
          add_column (self, grid, "torch:inductor", list[i], FALSE);
          continue;
        }
      add_column (self, grid, name, list[i],
                  g_str_equal (name, "eager") || g_str_equal (name, "aot_eager") || g_str_equal (name, "inductor"));
    }
}

static void
fxw_run_dialog_finalize (GObject *object)
{
  FxwRunDialog *self = FXW_RUN_DIALOG (object);

  g_free (self->source);
  g_free (self->stage);
  g_free (self->workspace);
  g_free (self->upto);
  g_ptr_array_unref (self->columns);
  g_ptr_array_unref (self->columns_to_run);
  g_string_free (self->log, TRUE);
  G_OBJECT_CLASS (fxw_run_dialog_parent_class)->finalize (object);
}

static void
fxw_run_dialog_class_init (FxwRunDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = fxw_run_dialog_finalize;
  signals[FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                    G_TYPE_NONE, 1, G_TYPE_BOOLEAN);
}

static void
fxw_run_dialog_init (FxwRunDialog *self)
{
  self->columns = g_ptr_array_new_with_free_func ((GDestroyNotify) column_free);
  self->columns_to_run = g_ptr_array_new_with_free_func (g_free);
  self->log = g_string_new (NULL);
}

FxwRunDialog *
fxw_run_dialog_new (GtkWindow *parent, const char *source, const char *stage, const char *workspace)
{
  FxwRunDialog *self = g_object_new (FXW_TYPE_RUN_DIALOG, "transient-for", parent, "modal", TRUE,
                                     "default-width", 760, "default-height", 560,
                                     "title", _("Run and Compare"), NULL);
  GtkBox *body = fxw_tool_window_get_body (FXW_TOOL_WINDOW (self));
  GtkWidget *grid = gtk_grid_new ();
  GtkWidget *what = gtk_label_new (NULL);
  GtkWidget *repeat_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *scroller = gtk_scrolled_window_new ();
  GtkWidget *log_scroller = gtk_scrolled_window_new ();
  g_autofree char *what_text = NULL;

  self->source = g_strdup (source);
  self->stage = g_strdup (stage);
  self->workspace = g_strdup (workspace);

  self->run_button = gtk_button_new_with_mnemonic (_("_Run"));
  gtk_widget_add_css_class (self->run_button, "suggested-action");
  g_signal_connect_swapped (self->run_button, "clicked", G_CALLBACK (run_clicked_cb), self);
  fxw_tool_window_pack_header (FXW_TOOL_WINDOW (self), self->run_button);
  self->cancel_button = gtk_button_new_with_mnemonic (_("_Cancel Run"));
  gtk_widget_set_visible (self->cancel_button, FALSE);
  g_signal_connect_swapped (self->cancel_button, "clicked", G_CALLBACK (fxw_run_dialog_cancel), self);
  fxw_tool_window_pack_header (FXW_TOOL_WINDOW (self), self->cancel_button);

  what_text = stage != NULL ? g_strdup_printf (_("Graph: %s, stage %s. Each checked backend runs on the same "
                                                  "inputs, checked against the interpreter with PyTorch's same(); "
                                                  "the times are medians of the timed calls, compile excluded."),
                                               source, stage)
                            : g_strdup_printf (_("Graph: %s. Each checked backend runs on the same inputs, checked "
                                                 "against the interpreter with PyTorch's same(); the times are "
                                                 "medians of the timed calls, compile excluded."), source);
  gtk_label_set_text (GTK_LABEL (what), what_text);
  gtk_label_set_wrap (GTK_LABEL (what), TRUE);
  gtk_label_set_xalign (GTK_LABEL (what), 0);
  gtk_box_append (body, what);

  gtk_grid_set_row_spacing (GTK_GRID (grid), 4);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 12);
  gtk_grid_attach (GTK_GRID (grid), gtk_label_new (_("Backend")), 0, 0, 1, 1);
  gtk_grid_attach (GTK_GRID (grid), gtk_label_new (_("Mode")), 1, 0, 1, 1);
  gtk_grid_attach (GTK_GRID (grid), gtk_label_new (_("Options (KEY=VALUE, …)")), 2, 0, 1, 1);
  fill_columns (self, GTK_GRID (grid));
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), grid);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scroller), TRUE);
  gtk_scrolled_window_set_max_content_height (GTK_SCROLLED_WINDOW (scroller), 260);
  self->matrix = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_box_append (GTK_BOX (self->matrix), scroller);

  self->repeat = gtk_spin_button_new_with_range (1, 1000, 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->repeat), 10);
  gtk_box_append (GTK_BOX (repeat_box), gtk_label_new (_("Timed calls")));
  gtk_box_append (GTK_BOX (repeat_box), self->repeat);
  /* Training: forward and backward timed apart, the gradients checked at every step */
  self->train = gtk_check_button_new_with_label (_("Training steps (forward, backward, optimizer)"));
  gtk_widget_set_margin_start (self->train, 24);
  self->steps = gtk_spin_button_new_with_range (1, 1000, 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->steps), 3);
  self->optimizer = gtk_drop_down_new_from_strings ((const char *[]) { "SGD", "Adam", NULL });
  gtk_box_append (GTK_BOX (repeat_box), self->train);
  gtk_box_append (GTK_BOX (repeat_box), self->steps);
  gtk_box_append (GTK_BOX (repeat_box), self->optimizer);
  g_object_bind_property (self->train, "active", self->steps, "sensitive", G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->train, "active", self->optimizer, "sensitive", G_BINDING_SYNC_CREATE);
  gtk_box_append (GTK_BOX (self->matrix), repeat_box);
  gtk_box_append (body, self->matrix);

  self->status = gtk_label_new (_("Choose backends, modes and options, then Run."));
  gtk_label_set_xalign (GTK_LABEL (self->status), 0);
  gtk_box_append (body, self->status);
  self->progress = gtk_progress_bar_new ();
  gtk_widget_set_visible (self->progress, FALSE);
  gtk_box_append (body, self->progress);
  self->log_label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->log_label), 0);
  gtk_label_set_yalign (GTK_LABEL (self->log_label), 0);
  gtk_label_set_selectable (GTK_LABEL (self->log_label), TRUE);
  gtk_widget_add_css_class (self->log_label, "monospace");
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (log_scroller), self->log_label);
  gtk_widget_set_vexpand (log_scroller, TRUE);
  gtk_box_append (body, log_scroller);
  return self;
}

const char *
fxw_run_dialog_get_source (FxwRunDialog *self)
{
  g_return_val_if_fail (FXW_IS_RUN_DIALOG (self), NULL);
  return self->source;
}

const char *
fxw_run_dialog_get_workspace (FxwRunDialog *self)
{
  return self->workspace;
}

char **
fxw_run_dialog_dup_specs (FxwRunDialog *self)
{
  GStrvBuilder *b = g_strv_builder_new ();
  char **out;

  for (guint i = 0; i < self->columns->len; i++)
    g_strv_builder_add (b, ((Column *) g_ptr_array_index (self->columns, i))->spec);
  out = g_strv_builder_end (b);
  g_strv_builder_unref (b);
  return out;
}

gboolean
fxw_run_dialog_set_column (FxwRunDialog *self, const char *spec, gboolean active, const char *mode,
                           const char *options)
{
  for (guint i = 0; i < self->columns->len; i++)
    {
      Column *col = g_ptr_array_index (self->columns, i);

      if (!g_str_equal (col->spec, spec))
        continue;
      gtk_check_button_set_active (GTK_CHECK_BUTTON (col->check), active);
      gtk_drop_down_set_selected (GTK_DROP_DOWN (col->mode), 0);
      for (guint m = 0; mode != NULL && m < g_list_model_get_n_items (G_LIST_MODEL (col->modes)); m++)
        if (g_str_equal (gtk_string_list_get_string (col->modes, m), mode))
          gtk_drop_down_set_selected (GTK_DROP_DOWN (col->mode), m);
      gtk_editable_set_text (GTK_EDITABLE (col->options), options != NULL ? options : "");
      return TRUE;
    }
  return FALSE;
}

void
fxw_run_dialog_set_repeat (FxwRunDialog *self, int repeat)
{
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->repeat), repeat);
}

/* Training steps instead of inference calls: steps >= 1, optimizer "sgd" or "adam". */
void
fxw_run_dialog_set_training (FxwRunDialog *self, gboolean training, int steps, const char *optimizer)
{
  g_return_if_fail (FXW_IS_RUN_DIALOG (self));
  gtk_check_button_set_active (GTK_CHECK_BUTTON (self->train), training);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->steps), steps);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (self->optimizer), g_strcmp0 (optimizer, "adam") == 0 ? 1 : 0);
}

gboolean
fxw_run_dialog_get_training (FxwRunDialog *self)
{
  g_return_val_if_fail (FXW_IS_RUN_DIALOG (self), FALSE);
  return gtk_check_button_get_active (GTK_CHECK_BUTTON (self->train));
}

gboolean
fxw_run_dialog_get_running (FxwRunDialog *self)
{
  return self->running;
}

double
fxw_run_dialog_get_progress (FxwRunDialog *self)
{
  return gtk_progress_bar_get_fraction (GTK_PROGRESS_BAR (self->progress));
}

const char *
fxw_run_dialog_get_log (FxwRunDialog *self)
{
  return self->log->str;
}

void
fxw_run_dialog_set_upto (FxwRunDialog *self, const char *node)
{
  g_autofree char *title = NULL;

  g_return_if_fail (FXW_IS_RUN_DIALOG (self));
  g_free (self->upto);
  self->upto = g_strdup (node);
  /* translators: the Run & Compare window's title when it runs the graph up to a node */
  title = node != NULL ? g_strdup_printf (_("Run & Compare up to %s"), node) : g_strdup (_("Run & Compare"));
  gtk_window_set_title (GTK_WINDOW (self), title);
}

const char *
fxw_run_dialog_get_upto (FxwRunDialog *self)
{
  g_return_val_if_fail (FXW_IS_RUN_DIALOG (self), NULL);
  return self->upto;
}
