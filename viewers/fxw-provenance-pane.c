/* fxw-provenance-pane.c: the provenance pane; activating a frame whose file exists emits open-location. With
   Inductor's provenance mappings of the compile on show, a node links to the nodes it became (or came from) and to
   the kernels computing them (open-node, open-code). */
#define G_LOG_DOMAIN "fxw-provenance-pane"

#include "fx-config.h"

#include <glib/gi18n.h>

#include "fxw-autocleanups.h"
#include "fxw-provenance-pane.h"
#include "fxw-viewers.h"

struct _FxwProvenancePane
{
  FxwView parent_instance;

  guint n_frames;

  GtkLabel *title_label;
  GtkLabel *summary_label;
  GtkListBox *stack_list;
  GtkLabel *module_label;
  GtkLabel *source_fn_label;
  GtkLabel *from_node_label;
  GtkBox *inductor_box;
  GtkBox *inductor_rows;

  FxwProvenanceMap *inductor;   /* the mappings of the compile on show; NULL: none */
  fx_prov_side inductor_side;   /* which side of them the graph on show is */
};

enum { OPEN_LOCATION, OPEN_NODE, OPEN_CODE, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (FxwProvenancePane, fxw_provenance_pane, FXW_TYPE_VIEW)

static void
append_from_node (GString *s, const fx_node_source *src, size_t n, int depth)
{
  for (size_t i = 0; i < n; i++)
    {
      g_autofree char *name = g_markup_escape_text (src[i].name ? src[i].name : "?", -1);
      g_autofree char *target = g_markup_escape_text (src[i].target ? src[i].target : "", -1);
      g_autofree char *pass = g_markup_escape_text (src[i].pass_name ? src[i].pass_name : "", -1);

      for (int d = 0; d < depth; d++)
        g_string_append (s, "  ");
      g_string_append_printf (s, "%s<b>%s</b> <tt>%s</tt> <i>%s</i>\n", depth ? "↳ " : "", name, target, pass);
      if (depth < 16)
        append_from_node (s, src[i].from_node, src[i].n_from, depth + 1);
    }
}

static void
frame_activated_cb (FxwProvenancePane *self, GtkListBoxRow *row)
{
  const char *file = g_object_get_data (G_OBJECT (row), "file");
  int line = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (row), "line"));

  if (file != NULL && g_file_test (file, G_FILE_TEST_IS_REGULAR))
    g_signal_emit (self, signals[OPEN_LOCATION], 0, file, line);
}

static void
clear_list (GtkListBox *list)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (list))) != NULL)
    gtk_list_box_remove (list, child);
}

/* ---------------------------------------------------------------- Inductor provenance */

static void
inductor_node_clicked_cb (GtkButton *button, FxwProvenancePane *self)
{
  g_signal_emit (self, signals[OPEN_NODE], 0, g_object_get_data (G_OBJECT (button), "side"),
                 g_object_get_data (G_OBJECT (button), "node"));
}

static void
inductor_code_clicked_cb (GtkButton *button, FxwProvenancePane *self)
{
  g_signal_emit (self, signals[OPEN_CODE], 0, g_object_get_data (G_OBJECT (button), "code"),
                 GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "line")),
                 g_object_get_data (G_OBJECT (button), "title"));
}

static GtkWidget *
link_button (FxwProvenancePane *self, const char *label, const char *key, const char *tooltip)
{
  GtkWidget *button = gtk_button_new_with_label (label);

  gtk_widget_add_css_class (button, "flat");
  gtk_widget_add_css_class (button, "monospace");
  gtk_widget_set_tooltip_text (button, tooltip);
  gtk_label_set_ellipsize (GTK_LABEL (gtk_button_get_child (GTK_BUTTON (button))), PANGO_ELLIPSIZE_MIDDLE);
  /* The view's links: what (node, "name:handle", "launch name:handle") -> button */
  fxw_view_add_link (FXW_VIEW (self), key, button);
  return button;
}

/* A heading line of the section ("Post-grad nodes") and a flow of links under it. */
static GtkWidget *
inductor_group (FxwProvenancePane *self, const char *heading)
{
  GtkWidget *label = gtk_label_new (heading);
  GtkWidget *flow = gtk_flow_box_new ();

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "caption");
  gtk_widget_add_css_class (label, "dim-label");
  gtk_box_append (self->inductor_rows, label);
  gtk_flow_box_set_selection_mode (GTK_FLOW_BOX (flow), GTK_SELECTION_NONE);
  gtk_flow_box_set_max_children_per_line (GTK_FLOW_BOX (flow), 8);
  gtk_box_append (self->inductor_rows, flow);
  return flow;
}

static void
show_inductor (FxwProvenancePane *self, const fx_node *n)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));
  GtkWidget *child, *flow;
  fx_provenance p;
  g_autofree char *key = NULL;
  gboolean from_pre;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->inductor_rows))) != NULL)
    gtk_box_remove (self->inductor_rows, child);
  fxw_view_clear_links (FXW_VIEW (self));
  g_string_truncate (out, 0);
  from_pre = self->inductor_side == FX_PROV_PRE_GRAD;
  key = g_strdup_printf ("%s:%s", fx_prov_side_name (self->inductor_side), n != NULL ? n->name : "");
  if (self->inductor == NULL || n == NULL || !fxw_provenance_map_chain (self->inductor, key, &p))
    {
      gtk_widget_set_visible (GTK_WIDGET (self->inductor_box), FALSE);
      return;
    }
  /* The other graph's nodes: post-grad ones from a pre-grad node, pre-grad ones from a post-grad node. */
  flow = inductor_group (self, from_pre ? _("Post-grad nodes") : _("Pre-grad nodes"));
  g_string_append (out, from_pre ? "post_grad:" : "pre_grad:");
  for (size_t i = 0; i < (from_pre ? p.n_post : p.n_pre); i++)
    {
      const char *name = from_pre ? p.post[i] : p.pre[i];
      /* translators: the tooltip of a node in the provenance pane's Inductor section */
      g_autofree char *tip = g_strdup_printf (from_pre ? _("Show %s in the post-grad graph")
                                                       : _("Show %s in the pre-grad graph"), name);
      GtkWidget *button = link_button (self, name, name, tip);

      g_object_set_data (G_OBJECT (button), "side", (gpointer) (from_pre ? "post_grad" : "pre_grad"));
      g_object_set_data_full (G_OBJECT (button), "node", g_strdup (name), g_free);
      g_signal_connect (button, "clicked", G_CALLBACK (inductor_node_clicked_cb), self);
      gtk_flow_box_append (GTK_FLOW_BOX (flow), button);
      g_string_append_printf (out, "%s%s", i ? ", " : " ", name);
    }
  if ((from_pre ? p.n_post : p.n_pre) == 0)
    {
      /* A post-grad node of its own (a parameter a kernel reads) came from no pre-grad node. */
      GtkWidget *none = gtk_label_new (NULL);

      gtk_label_set_markup (GTK_LABEL (none), _("<i>none</i>"));
      gtk_flow_box_append (GTK_FLOW_BOX (flow), none);
      g_string_append (out, " -");
    }
  g_string_append_c (out, '\n');

  flow = inductor_group (self, _("Kernels"));
  for (size_t i = 0; i < p.n_kernels; i++)
    {
      const fx_prov_kernel *k = &p.kernels[i];
      g_autofree char *name = k->handle >= 0 ? g_strdup_printf ("%s:%d", k->name, k->handle) : g_strdup (k->name);
      g_autofree char *launch_key = g_strconcat ("launch ", name, NULL);
      const char *code = k->def_line > 0 ? k->def_code : k->launch_code;
      int line = k->def_line > 0 ? k->def_line : k->launch_line;
      g_autofree char *tip = NULL;
      GtkWidget *button;

      g_string_append_printf (out, "kernel: %s", name);
      if (line <= 0)
        {
          /* A kernel whose code is not stored: its name alone. */
          GtkWidget *label = gtk_label_new (name);

          gtk_widget_add_css_class (label, "monospace");
          gtk_flow_box_append (GTK_FLOW_BOX (flow), label);
          g_string_append_c (out, '\n');
          continue;
        }
      /* translators: the tooltip of a kernel in the provenance pane: "inductor_aot_kernel_code, line 4" */
      tip = g_strdup_printf (k->def_line > 0 ? _("Show its source: %s, line %d") : _("Show its launch: %s, line %d"),
                             code, line);
      button = link_button (self, name, name, tip);
      g_object_set_data_full (G_OBJECT (button), "code", g_strdup (code), g_free);
      g_object_set_data (G_OBJECT (button), "line", GINT_TO_POINTER (line));
      g_object_set_data_full (G_OBJECT (button), "title", g_strdup (name), g_free);
      g_signal_connect (button, "clicked", G_CALLBACK (inductor_code_clicked_cb), self);
      gtk_flow_box_append (GTK_FLOW_BOX (flow), button);
      g_string_append_printf (out, " %s %s:%d", k->def_line > 0 ? "defined at" : "launched at", code,
                              line);
      if (k->def_line > 0 && k->launch_line > 0)
        {
          g_autofree char *launch_tip = g_strdup_printf (_("Show its launch: %s, line %d"), k->launch_code,
                                                         k->launch_line);
          /* translators: a link beside a kernel in the provenance pane: where the wrapper calls it */
          GtkWidget *launch = link_button (self, _("launch"), launch_key, launch_tip);

          g_object_set_data_full (G_OBJECT (launch), "code", g_strdup (k->launch_code), g_free);
          g_object_set_data (G_OBJECT (launch), "line", GINT_TO_POINTER (k->launch_line));
          g_object_set_data_full (G_OBJECT (launch), "title", g_strdup (name), g_free);
          g_signal_connect (launch, "clicked", G_CALLBACK (inductor_code_clicked_cb), self);
          gtk_flow_box_append (GTK_FLOW_BOX (flow), launch);
          g_string_append_printf (out, ", launched at %s:%d", k->launch_code, k->launch_line);
        }
      g_string_append_c (out, '\n');
    }
  if (p.n_kernels == 0)
    {
      GtkWidget *none = gtk_label_new (NULL);

      gtk_label_set_markup (GTK_LABEL (none), _("<i>none</i>"));
      gtk_flow_box_append (GTK_FLOW_BOX (flow), none);
      g_string_append (out, "kernel: -\n");
    }
  gtk_widget_set_visible (GTK_WIDGET (self->inductor_box), TRUE);
}

static void
node_changed (FxwView *view)
{
  FxwProvenancePane *self = FXW_PROVENANCE_PANE (view);
  FxwSelection *selection = fxw_view_get_selection (view);
  FxwNode *node = selection ? fxw_selection_get_node (selection) : NULL;
  const fx_node *n;
  const fx_meta *meta;
  g_autoptr(fx_arena) arena = NULL;
  fx_stack_frame *frames = NULL;
  size_t n_frames = 0;
  g_autoptr(GString) s = NULL;
  g_autofree char *summary = NULL;

  clear_list (self->stack_list);
  self->n_frames = 0;
  show_inductor (self, node != NULL ? fxw_node_get_node (node) : NULL);
  if (node == NULL)
    {
      gtk_label_set_label (self->title_label, _("Select a node to see where it came from."));
      gtk_label_set_label (self->summary_label, "");
      gtk_label_set_label (self->module_label, "");
      gtk_label_set_label (self->source_fn_label, "");
      gtk_label_set_label (self->from_node_label, "");
      gtk_widget_set_visible (GTK_WIDGET (self->stack_list), FALSE);
      return;
    }
  n = fxw_node_get_node (node);
  meta = &n->meta;
  gtk_label_set_label (self->title_label, n->name);
  summary = fxw_node_dup_summary (node);
  gtk_label_set_markup (self->summary_label, summary);

  arena = fx_arena_new ();
  if (meta->stack_trace != NULL)
    n_frames = fx_stack_trace_parse (meta->stack_trace, arena, &frames);
  /* Innermost first: the line that made the node is what users look for. */
  for (size_t k = n_frames; k > 0; k--)
    {
      const fx_stack_frame *f = &frames[k - 1];
      GtkWidget *row = gtk_list_box_row_new ();
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
      g_autofree char *where = g_strdup_printf ("%s:%d, in %s", f->file ? f->file : "?", f->line,
                                                f->func ? f->func : "?");
      GtkWidget *where_label = gtk_label_new (where);
      gboolean exists = f->file != NULL && g_file_test (f->file, G_FILE_TEST_IS_REGULAR);

      gtk_label_set_xalign (GTK_LABEL (where_label), 0);
      gtk_label_set_wrap (GTK_LABEL (where_label), TRUE);
      gtk_label_set_wrap_mode (GTK_LABEL (where_label), PANGO_WRAP_WORD_CHAR);
      gtk_widget_add_css_class (where_label, "caption");
      gtk_box_append (GTK_BOX (box), where_label);
      if (f->code != NULL)
        {
          GtkWidget *code_label = gtk_label_new (f->code);

          gtk_label_set_xalign (GTK_LABEL (code_label), 0);
          gtk_label_set_wrap (GTK_LABEL (code_label), TRUE);
          gtk_widget_add_css_class (code_label, "monospace");
          gtk_box_append (GTK_BOX (box), code_label);
        }
      gtk_widget_set_margin_start (box, 8);
      gtk_widget_set_margin_end (box, 8);
      gtk_widget_set_margin_top (box, 4);
      gtk_widget_set_margin_bottom (box, 4);
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), exists);
      if (exists)
        gtk_widget_set_tooltip_text (row, _("Open this file at this line"));
      else
        gtk_widget_add_css_class (where_label, "dim-label");
      g_object_set_data_full (G_OBJECT (row), "file", g_strdup (f->file), g_free);
      g_object_set_data (G_OBJECT (row), "line", GINT_TO_POINTER (f->line));
      gtk_list_box_append (self->stack_list, row);
      self->n_frames++;
    }
  gtk_widget_set_visible (GTK_WIDGET (self->stack_list), n_frames > 0);

  s = g_string_new (NULL);
  for (size_t k = 0; k < meta->n_nn_module_stack; k++)
    {
      g_autofree char *path = g_markup_escape_text (meta->nn_module_stack[k].path ? meta->nn_module_stack[k].path : "", -1);
      g_autofree char *type = g_markup_escape_text (meta->nn_module_stack[k].type ? meta->nn_module_stack[k].type : "", -1);

      g_string_append_printf (s, "%*s<b>%s</b>  <tt>%s</tt>\n", (int) k * 2, "", path, type);
    }
  gtk_label_set_markup (self->module_label, s->len ? s->str : _("<i>none</i>"));

  g_string_truncate (s, 0);
  for (size_t k = 0; k < meta->n_source_fn_stack; k++)
    {
      g_autofree char *name = g_markup_escape_text (meta->source_fn_stack[k].name ? meta->source_fn_stack[k].name : "", -1);
      g_autofree char *target = g_markup_escape_text (meta->source_fn_stack[k].target ? meta->source_fn_stack[k].target : "", -1);

      g_string_append_printf (s, "<b>%s</b>  <tt>%s</tt>\n", name, target);
    }
  if (meta->original_aten != NULL)
    {
      g_autofree char *aten = g_markup_escape_text (meta->original_aten, -1);
      g_string_append_printf (s, "original_aten: <tt>%s</tt>\n", aten);
    }
  if (meta->seq_nr >= 0)
    g_string_append_printf (s, "seq_nr: %" G_GINT64_FORMAT "\n", meta->seq_nr);
  gtk_label_set_markup (self->source_fn_label, s->len ? s->str : _("<i>none</i>"));

  g_string_truncate (s, 0);
  append_from_node (s, meta->from_node, meta->n_from_node, 0);
  gtk_label_set_markup (self->from_node_label, s->len ? s->str : _("<i>none</i>"));
}

static void
fxw_provenance_pane_dispose (GObject *object)
{
  FxwProvenancePane *self = FXW_PROVENANCE_PANE (object);

  g_clear_object (&self->inductor);
  G_OBJECT_CLASS (fxw_provenance_pane_parent_class)->dispose (object);
}

static void
fxw_provenance_pane_class_init (FxwProvenancePaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = fxw_provenance_pane_dispose;
  FXW_VIEW_CLASS (klass)->node_changed = node_changed;

  /**
   * FxwProvenancePane::open-location:
   * @file: a path that exists on this machine
   * @line: 1-based line
   */
  signals[OPEN_LOCATION] =
    g_signal_new ("open-location", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_INT);
  /**
   * FxwProvenancePane::open-node:
   * @side: "pre_grad" or "post_grad": the graph the node is in
   * @node: its name
   */
  signals[OPEN_NODE] =
    g_signal_new ("open-node", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
  /**
   * FxwProvenancePane::open-code:
   * @code: a code the provenance map holds ("inductor_aot_wrapper_code")
   * @line: 1-based line
   * @title: the kernel ("cpp_fused_relu_0:2")
   */
  signals[OPEN_CODE] =
    g_signal_new ("open-code", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_STRING, G_TYPE_INT, G_TYPE_STRING);

  fxw_viewers_class_set_template (widget_class, "fxw-provenance-pane.ui");
  gtk_widget_class_set_css_name (widget_class, "fxwprovenancepane");
  gtk_widget_class_bind_template_child (widget_class, FxwProvenancePane, title_label);
  gtk_widget_class_bind_template_child (widget_class, FxwProvenancePane, summary_label);
  gtk_widget_class_bind_template_child (widget_class, FxwProvenancePane, stack_list);
  gtk_widget_class_bind_template_child (widget_class, FxwProvenancePane, module_label);
  gtk_widget_class_bind_template_child (widget_class, FxwProvenancePane, source_fn_label);
  gtk_widget_class_bind_template_child (widget_class, FxwProvenancePane, from_node_label);
  gtk_widget_class_bind_template_child (widget_class, FxwProvenancePane, inductor_box);
  gtk_widget_class_bind_template_child (widget_class, FxwProvenancePane, inductor_rows);
  gtk_widget_class_bind_template_callback (widget_class, frame_activated_cb);
}

static void
fxw_provenance_pane_init (FxwProvenancePane *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_widget_set_visible (GTK_WIDGET (self->stack_list), FALSE);
}

/* Activates the index-th frame row (innermost first), as a click does; FALSE when its file does not exist. */
gboolean
fxw_provenance_pane_activate_frame (FxwProvenancePane *self, guint index)
{
  GtkListBoxRow *row;

  g_return_val_if_fail (FXW_IS_PROVENANCE_PANE (self), FALSE);
  row = gtk_list_box_get_row_at_index (self->stack_list, (int) index);
  if (row == NULL || !gtk_list_box_row_get_activatable (row))
    return FALSE;
  frame_activated_cb (self, row);
  return TRUE;
}

guint
fxw_provenance_pane_get_n_frames (FxwProvenancePane *self)
{
  return self->n_frames;
}

const char *
fxw_provenance_pane_get_title (FxwProvenancePane *self)
{
  return gtk_label_get_label (self->title_label);
}

void
fxw_provenance_pane_set_inductor (FxwProvenancePane *self, FxwProvenanceMap *map, fx_prov_side side)
{
  g_return_if_fail (FXW_IS_PROVENANCE_PANE (self));
  g_return_if_fail (map == NULL || FXW_IS_PROVENANCE_MAP (map));

  g_set_object (&self->inductor, map);
  self->inductor_side = side;
  node_changed (FXW_VIEW (self));
}

FxwProvenanceMap *
fxw_provenance_pane_get_inductor (FxwProvenancePane *self)
{
  g_return_val_if_fail (FXW_IS_PROVENANCE_PANE (self), NULL);
  return self->inductor;
}

const char *
fxw_provenance_pane_get_inductor_text (FxwProvenancePane *self)
{
  GString *out = fxw_view_get_text (FXW_VIEW (self));

  g_return_val_if_fail (FXW_IS_PROVENANCE_PANE (self), NULL);
  return gtk_widget_get_visible (GTK_WIDGET (self->inductor_box)) ? out->str : NULL;
}

gboolean
fxw_provenance_pane_activate_inductor (FxwProvenancePane *self, const char *what)
{
  g_return_val_if_fail (FXW_IS_PROVENANCE_PANE (self), FALSE);
  return fxw_view_activate_link (FXW_VIEW (self), what);
}
