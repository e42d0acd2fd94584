/* fxw-code-view.c: the Code view; a cursor line selects its node and a selected node moves the cursor. */
#define G_LOG_DOMAIN "fxw-code-view"

#include "fx-config.h"

#include <adwaita.h>
#include <gtksourceview/gtksource.h>

#include "fxw-code-view.h"
#include "fxw-viewers.h"

struct _FxwCodeView
{
  FxwView parent_instance;

  GPtrArray *line_nodes;     /* index: 0-based line -> FxwNode (transfer none) or NULL */
  GHashTable *node_lines;    /* FxwNode -> 1-based line of its statement */
  gboolean syncing;

  GtkScrolledWindow *scroller;
  GtkSourceView *source_view;
  GtkSourceBuffer *buffer;
  GtkTextTag *highlight_tag;
  guint n_highlighted_lines;
};

G_DEFINE_FINAL_TYPE (FxwCodeView, fxw_code_view, FXW_TYPE_VIEW)

/* A statement line of print_readable: "        name: "f32[8]" = ..." or "        name = ...".
   "# File:" comments and the "# No stacktrace" lines above a statement belong to it too. */
static const char *
statement_name (const char *line, gsize len, char *out, gsize out_size)
{
  gsize i = 0, start, n;

  while (i < len && line[i] == ' ')
    i++;
  if (i == 0 || i >= len || !(g_ascii_isalpha (line[i]) || line[i] == '_'))
    return NULL;
  start = i;
  while (i < len && (g_ascii_isalnum (line[i]) || line[i] == '_'))
    i++;
  n = i - start;
  if (n == 0 || n >= out_size)
    return NULL;
  if (!(i + 1 < len && (line[i] == ':' || (line[i] == ' ' && line[i + 1] == '='))))
    return NULL;
  memcpy (out, line + start, n);
  out[n] = '\0';
  return out;
}

static void
rebuild_line_map (FxwCodeView *self, FxwGraph *graph, const char *text)
{
  const char *p = text;
  guint line = 0;
  guint pending_start = G_MAXUINT;   /* first comment line waiting for its statement */
  gboolean in_top_class = FALSE, seen_class = FALSE;

  g_ptr_array_set_size (self->line_nodes, 0);
  g_hash_table_remove_all (self->node_lines);

  while (p != NULL && *p)
    {
      const char *nl = strchr (p, '\n');
      gsize len = nl ? (gsize) (nl - p) : strlen (p);
      char name[256];
      FxwNode *node = NULL;
      const char *stripped = p;

      g_ptr_array_add (self->line_nodes, NULL);
      while (stripped < p + len && *stripped == ' ')
        stripped++;

      /* Children (cond branches) are printed as nested classes; names there belong to other graphs. */
      if (g_str_has_prefix (stripped, "class "))
        {
          in_top_class = !seen_class;
          seen_class = TRUE;
        }
      else if (in_top_class || !seen_class)
        {
          if (g_str_has_prefix (stripped, "def forward("))
            {
              /* The signature line selects the first placeholder. */
              for (guint i = 0; i < fxw_graph_get_n_nodes (graph); i++)
                if (fxw_node_get_node (fxw_graph_get_node (graph, i))->op == FX_OP_PLACEHOLDER)
                  {
                    node = fxw_graph_get_node (graph, i);
                    break;
                  }
            }
          else if (*stripped == '#')
            {
              if (pending_start == G_MAXUINT)
                pending_start = line;
            }
          else if (statement_name (p, len, name, sizeof name) != NULL)
            node = fxw_graph_lookup (graph, name);
          else if (g_str_has_prefix (stripped, "return "))
            {
              for (guint i = fxw_graph_get_n_nodes (graph); i > 0; i--)
                if (fxw_node_get_node (fxw_graph_get_node (graph, i - 1))->op == FX_OP_OUTPUT)
                  {
                    node = fxw_graph_get_node (graph, i - 1);
                    break;
                  }
            }

          if (node != NULL)
            {
              if (!g_hash_table_contains (self->node_lines, node))
                g_hash_table_insert (self->node_lines, node, GUINT_TO_POINTER (line + 1));
              if (pending_start != G_MAXUINT)
                for (guint k = pending_start; k < line; k++)
                  g_ptr_array_index (self->line_nodes, k) = node;
              g_ptr_array_index (self->line_nodes, line) = node;
            }
          if (*stripped != '#')
            pending_start = G_MAXUINT;
        }
      line++;
      p = nl ? nl + 1 : NULL;
    }
}

static void
scroll_to_line (FxwCodeView *self, guint line)
{
  GtkTextIter iter;

  gtk_text_buffer_get_iter_at_line (GTK_TEXT_BUFFER (self->buffer), &iter, (int) line - 1);
  gtk_text_buffer_place_cursor (GTK_TEXT_BUFFER (self->buffer), &iter);
  gtk_text_view_scroll_to_iter (GTK_TEXT_VIEW (self->source_view), &iter, 0.1, TRUE, 0.0, 0.3);
}

static void
node_changed (FxwView *view)
{
  FxwCodeView *self = FXW_CODE_VIEW (view);
  FxwNode *node = fxw_selection_get_node (fxw_view_get_selection (view));
  guint line;

  if (self->syncing || node == NULL)
    return;
  line = GPOINTER_TO_UINT (g_hash_table_lookup (self->node_lines, node));
  if (line == 0)
    return;
  self->syncing = TRUE;
  scroll_to_line (self, line);
  self->syncing = FALSE;
}

static void
graph_changed (FxwView *view)
{
  FxwCodeView *self = FXW_CODE_VIEW (view);
  FxwGraph *graph = fxw_selection_get_graph (fxw_view_get_selection (view));
  const char *text = graph ? fxw_graph_get_readable (graph) : "";

  self->syncing = TRUE;
  gtk_text_buffer_set_text (GTK_TEXT_BUFFER (self->buffer), text, -1);
  self->syncing = FALSE;
  if (graph != NULL)
    rebuild_line_map (self, graph, text);
  else
    {
      g_ptr_array_set_size (self->line_nodes, 0);
      g_hash_table_remove_all (self->node_lines);
    }
}

/* Lines of highlighted nodes (a kernel's nodes) get a background, comments included. */
static void
highlight_changed (FxwView *view)
{
  FxwCodeView *self = FXW_CODE_VIEW (view);
  FxwSelection *selection = fxw_view_get_selection (view);
  GtkTextBuffer *buffer = GTK_TEXT_BUFFER (self->buffer);
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  gtk_text_buffer_remove_tag (buffer, self->highlight_tag, &start, &end);
  self->n_highlighted_lines = 0;
  for (guint line = 0; line < self->line_nodes->len; line++)
    {
      FxwNode *node = g_ptr_array_index (self->line_nodes, line);

      if (node == NULL || !fxw_selection_is_highlighted (selection, fxw_node_get_name (node)))
        continue;
      gtk_text_buffer_get_iter_at_line (buffer, &start, (int) line);
      end = start;
      gtk_text_iter_forward_line (&end);
      gtk_text_buffer_apply_tag (buffer, self->highlight_tag, &start, &end);
      self->n_highlighted_lines++;
    }
}

static void
cursor_moved_cb (FxwCodeView *self)
{
  FxwSelection *selection = fxw_view_get_selection (FXW_VIEW (self));
  guint line = fxw_code_view_get_cursor_line (self);
  FxwNode *node;

  if (self->syncing || selection == NULL)
    return;
  node = fxw_code_view_get_line_node (self, line);
  if (node != NULL)
    {
      self->syncing = TRUE;
      fxw_selection_set_node (selection, node);
      self->syncing = FALSE;
    }
}

/* Dark style follows the system through libadwaita's style manager. */
static void
style_changed_cb (FxwCodeView *self)
{
  GtkSourceStyleSchemeManager *schemes = gtk_source_style_scheme_manager_get_default ();
  gboolean dark = adw_style_manager_get_dark (adw_style_manager_get_default ());

  gtk_source_buffer_set_style_scheme (self->buffer,
                                      gtk_source_style_scheme_manager_get_scheme (schemes, dark ? "Adwaita-dark" : "Adwaita"));
}

static void
fxw_code_view_finalize (GObject *object)
{
  FxwCodeView *self = FXW_CODE_VIEW (object);

  g_clear_pointer (&self->line_nodes, g_ptr_array_unref);
  g_clear_pointer (&self->node_lines, g_hash_table_unref);
  G_OBJECT_CLASS (fxw_code_view_parent_class)->finalize (object);
}

static void
fxw_code_view_class_init (FxwCodeViewClass *klass)
{
  FxwViewClass *view_class = FXW_VIEW_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = fxw_code_view_finalize;
  view_class->graph_changed = graph_changed;
  view_class->node_changed = node_changed;
  view_class->highlight_changed = highlight_changed;

  fxw_viewers_class_set_template (widget_class, "fxw-code-view.ui");
  gtk_widget_class_set_css_name (widget_class, "fxwcodeview");
  gtk_widget_class_bind_template_child (widget_class, FxwCodeView, scroller);
  gtk_widget_class_bind_template_child (widget_class, FxwCodeView, source_view);
}

static void
fxw_code_view_init (FxwCodeView *self)
{
  GtkSourceLanguageManager *langs = gtk_source_language_manager_get_default ();
  gtk_widget_init_template (GTK_WIDGET (self));
  self->line_nodes = g_ptr_array_new ();
  self->node_lines = g_hash_table_new (NULL, NULL);
  self->buffer = GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->source_view)));
  gtk_source_buffer_set_language (self->buffer, gtk_source_language_manager_get_language (langs, "python3"));
  gtk_source_buffer_set_highlight_syntax (self->buffer, TRUE);
  self->highlight_tag = gtk_text_buffer_create_tag (GTK_TEXT_BUFFER (self->buffer), "fxw-highlight",
                                                    "paragraph-background", "rgba(246,211,45,0.35)", NULL);
  g_signal_connect_object (self->buffer, "notify::cursor-position", G_CALLBACK (cursor_moved_cb),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (style_changed_cb), self, G_CONNECT_SWAPPED);
  style_changed_cb (self);
}

guint
fxw_code_view_get_node_line (FxwCodeView *self, FxwNode *node)
{
  g_return_val_if_fail (FXW_IS_CODE_VIEW (self), 0);
  return GPOINTER_TO_UINT (g_hash_table_lookup (self->node_lines, node));
}

FxwNode *
fxw_code_view_get_line_node (FxwCodeView *self, guint line)
{
  g_return_val_if_fail (FXW_IS_CODE_VIEW (self), NULL);
  if (line == 0 || line > self->line_nodes->len)
    return NULL;
  return g_ptr_array_index (self->line_nodes, line - 1);
}

void
fxw_code_view_place_cursor (FxwCodeView *self, guint line)
{
  GtkTextIter iter;

  g_return_if_fail (FXW_IS_CODE_VIEW (self));
  gtk_text_buffer_get_iter_at_line (GTK_TEXT_BUFFER (self->buffer), &iter, (int) line - 1);
  gtk_text_buffer_place_cursor (GTK_TEXT_BUFFER (self->buffer), &iter);
}

guint
fxw_code_view_get_n_highlighted_lines (FxwCodeView *self)
{
  g_return_val_if_fail (FXW_IS_CODE_VIEW (self), 0);
  return self->n_highlighted_lines;
}

guint
fxw_code_view_get_cursor_line (FxwCodeView *self)
{
  GtkTextIter iter;
  GtkTextMark *mark = gtk_text_buffer_get_insert (GTK_TEXT_BUFFER (self->buffer));

  gtk_text_buffer_get_iter_at_mark (GTK_TEXT_BUFFER (self->buffer), &iter, mark);
  return (guint) gtk_text_iter_get_line (&iter) + 1;
}
