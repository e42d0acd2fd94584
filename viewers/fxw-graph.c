/* fxw-graph.c: wraps an engine fx_graph as a GListModel of FxwNode, with the per-node strings the views show. */
#define G_LOG_DOMAIN "fxw-graph"

#include "fx-config.h"

#include "fxw-autocleanups.h"
#include "fxw-graph.h"
#include "fxw-properties.h"

/* The strings the views show of a node, each made when a view first asks for it (format_text): a 10,000-node graph
   only pays for the visible rows. */
typedef enum
{
  NODE_TEXT_TARGET, NODE_TEXT_ARGS, NODE_TEXT_KWARGS, NODE_TEXT_SHAPE, NODE_TEXT_SOURCE, NODE_TEXT_SOURCE_CODE,
  NODE_N_TEXTS
} NodeText;

struct _FxwNode
{
  GObject parent_instance;
  FxwGraph *owner;        /* weak: the graph owns its nodes */
  const fx_node *node;
  guint index;
  char *text[NODE_N_TEXTS];
  gboolean highlighted;   /* mirrors the selection's highlight set, for list-item bindings */
};

struct _FxwGraph
{
  GObject parent_instance;
  fx_graph *graph;
  char *title;
  GPtrArray *nodes;         /* FxwNode, in graph order */
  GHashTable *by_name;      /* name -> FxwNode */
  GHashTable *by_ptr;       /* fx_node* -> FxwNode */
  char *readable;
};

enum { NODE_PROP_0, NODE_PROP_INDEX, NODE_PROP_NAME, NODE_PROP_OPCODE, NODE_PROP_TARGET,
       NODE_PROP_ARGS, NODE_PROP_KWARGS, NODE_PROP_SHAPE, NODE_PROP_MODULE, NODE_PROP_SOURCE,
       NODE_PROP_HIGHLIGHTED, NODE_N_PROPS };
static GParamSpec *node_properties[NODE_N_PROPS];
static const FxwPropertyAccess node_property_access[NODE_N_PROPS] = {
  [NODE_PROP_INDEX] = FXW_PROPERTY (fxw_node_get_index, NULL),
  [NODE_PROP_NAME] = FXW_PROPERTY (fxw_node_get_name, NULL),
  [NODE_PROP_OPCODE] = FXW_PROPERTY (fxw_node_get_opcode, NULL),
  [NODE_PROP_TARGET] = FXW_PROPERTY (fxw_node_get_target, NULL),
  [NODE_PROP_ARGS] = FXW_PROPERTY (fxw_node_get_args, NULL),
  [NODE_PROP_KWARGS] = FXW_PROPERTY (fxw_node_get_kwargs, NULL),
  [NODE_PROP_SHAPE] = FXW_PROPERTY (fxw_node_get_shape, NULL),
  [NODE_PROP_MODULE] = FXW_PROPERTY (fxw_node_get_module_path, NULL),
  [NODE_PROP_SOURCE] = FXW_PROPERTY (fxw_node_get_source, NULL),
  [NODE_PROP_HIGHLIGHTED] = FXW_PROPERTY (fxw_node_get_highlighted, NULL),
};

G_DEFINE_FINAL_TYPE (FxwNode, fxw_node, G_TYPE_OBJECT)

static void
fxw_node_finalize (GObject *object)
{
  FxwNode *self = FXW_NODE (object);

  for (guint i = 0; i < NODE_N_TEXTS; i++)
    g_free (self->text[i]);
  G_OBJECT_CLASS (fxw_node_parent_class)->finalize (object);
}

static void
fxw_node_class_init (FxwNodeClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = fxw_node_finalize;

  node_properties[NODE_PROP_INDEX] = g_param_spec_uint ("index", NULL, NULL, 0, G_MAXUINT, 0, flags);
  node_properties[NODE_PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL, flags);
  node_properties[NODE_PROP_OPCODE] = g_param_spec_string ("opcode", NULL, NULL, NULL, flags);
  node_properties[NODE_PROP_TARGET] = g_param_spec_string ("target", NULL, NULL, NULL, flags);
  node_properties[NODE_PROP_ARGS] = g_param_spec_string ("args", NULL, NULL, NULL, flags);
  node_properties[NODE_PROP_KWARGS] = g_param_spec_string ("kwargs", NULL, NULL, NULL, flags);
  node_properties[NODE_PROP_SHAPE] = g_param_spec_string ("shape", NULL, NULL, NULL, flags);
  node_properties[NODE_PROP_MODULE] = g_param_spec_string ("module", NULL, NULL, NULL, flags);
  node_properties[NODE_PROP_SOURCE] = g_param_spec_string ("source", NULL, NULL, NULL, flags);
  node_properties[NODE_PROP_HIGHLIGHTED] = g_param_spec_boolean ("highlighted", NULL, NULL, FALSE,
                                                                 flags | G_PARAM_EXPLICIT_NOTIFY);
  fxw_object_class_install_properties (object_class, NODE_N_PROPS, node_properties, node_property_access);
}

static void
fxw_node_init (FxwNode *self)
{
}

FxwGraph *
fxw_node_get_owner (FxwNode *self)
{
  g_return_val_if_fail (FXW_IS_NODE (self), NULL);
  return self->owner;
}

const fx_node *
fxw_node_get_node (FxwNode *self)
{
  g_return_val_if_fail (FXW_IS_NODE (self), NULL);
  return self->node;
}

guint
fxw_node_get_index (FxwNode *self)
{
  return self->index;
}

const char *
fxw_node_get_name (FxwNode *self)
{
  return self->node->name;
}

const char *
fxw_node_get_opcode (FxwNode *self)
{
  return fx_opcode_name (self->node->op);
}

static char *
format_target (const fx_node *node, NodeText which)
{
  g_auto(fx_buf) buf;

  fx_buf_init (&buf);
  if (node->target.kind == FX_TARGET_STR)
    fx_buf_puts (&buf, node->target.name ? node->target.name : "");
  else
    fx_target_format (&node->target, &buf);
  return g_strdup (buf.data ? buf.data : "");
}

static char *
format_args (const fx_node *node, NodeText which)
{
  g_auto(fx_buf) buf;
  fx_arg tuple = fx_arg_tuple (node->args, node->n_args);

  fx_buf_init (&buf);
  fx_arg_repr (&tuple, FX_REPR_PY, &buf);
  return g_strdup (buf.data ? buf.data : "");
}

static char *
format_kwargs (const fx_node *node, NodeText which)
{
  g_auto(fx_buf) buf;

  fx_buf_init (&buf);
  fx_buf_putc (&buf, '{');
  for (size_t i = 0; i < node->n_kwargs; i++)
    {
      fx_buf_printf (&buf, "%s'%s': ", i ? ", " : "", node->kwargs[i].name);
      fx_arg_repr (&node->kwargs[i].value, FX_REPR_PY, &buf);
    }
  fx_buf_putc (&buf, '}');
  return g_strdup (buf.data);
}

static char *
format_shape (const fx_node *node, NodeText which)
{
  g_auto(fx_buf) buf;

  fx_buf_init (&buf);
  if (!fx_val_annotation (&node->meta.val, FALSE, TRUE, &buf))
    fx_buf_reset (&buf);
  return g_strdup (buf.data ? buf.data : "");
}

/* The innermost user frame: "file.py:12" (NODE_TEXT_SOURCE) or its line of code; "" when there is none. */
static char *
format_frame (const fx_node *node, NodeText which)
{
  g_autoptr(fx_arena) arena = fx_arena_new ();
  fx_stack_frame frame;
  g_autofree char *base = NULL;

  if (node->meta.stack_trace == NULL || !fx_stack_trace_innermost (node->meta.stack_trace, arena, &frame))
    return g_strdup ("");
  if (which == NODE_TEXT_SOURCE_CODE)
    return g_strdup (frame.code ? frame.code : "");
  base = g_path_get_basename (frame.file ? frame.file : "");
  return g_strdup_printf ("%s:%d", base, frame.line);
}

static char *(*const format_text[NODE_N_TEXTS]) (const fx_node *node, NodeText which) = {
  [NODE_TEXT_TARGET] = format_target, [NODE_TEXT_ARGS] = format_args, [NODE_TEXT_KWARGS] = format_kwargs,
  [NODE_TEXT_SHAPE] = format_shape, [NODE_TEXT_SOURCE] = format_frame, [NODE_TEXT_SOURCE_CODE] = format_frame,
};

static const char *
node_text (FxwNode *self, NodeText which)
{
  if (self->text[which] == NULL)
    self->text[which] = format_text[which] (self->node, which);
  return self->text[which];
}

const char *
fxw_node_get_target (FxwNode *self)
{
  return node_text (self, NODE_TEXT_TARGET);
}

const char *
fxw_node_get_args (FxwNode *self)
{
  return node_text (self, NODE_TEXT_ARGS);
}

const char *
fxw_node_get_kwargs (FxwNode *self)
{
  return node_text (self, NODE_TEXT_KWARGS);
}

const char *
fxw_node_get_shape (FxwNode *self)
{
  return node_text (self, NODE_TEXT_SHAPE);
}

const char *
fxw_node_get_module_path (FxwNode *self)
{
  const fx_meta *meta = &self->node->meta;

  if (meta->n_nn_module_stack == 0)
    return "";
  return meta->nn_module_stack[meta->n_nn_module_stack - 1].path;
}

const char *
fxw_node_get_module_class (FxwNode *self)
{
  const fx_meta *meta = &self->node->meta;

  if (meta->n_nn_module_stack == 0)
    return "";
  return meta->nn_module_stack[meta->n_nn_module_stack - 1].type;
}

const char *
fxw_node_get_source (FxwNode *self)
{
  return node_text (self, NODE_TEXT_SOURCE);
}

const char *
fxw_node_get_source_code (FxwNode *self)
{
  return node_text (self, NODE_TEXT_SOURCE_CODE);
}

/* The hover summary of the Graph view and the tooltip of other views. */
char *
fxw_node_dup_summary (FxwNode *self)
{
  GString *s = g_string_new (NULL);
  const char *shape = fxw_node_get_shape (self);
  const char *module = fxw_node_get_module_path (self);
  const char *source = fxw_node_get_source (self);
  g_autofree char *esc_target = g_markup_escape_text (fxw_node_get_target (self), -1);
  g_autofree char *esc_args = g_markup_escape_text (fxw_node_get_args (self), -1);

  g_string_append_printf (s, "<b>%s</b>  <i>%s</i>\n%s%s", self->node->name,
                          fxw_node_get_opcode (self), esc_target,
                          self->node->op == FX_OP_PLACEHOLDER ? "" : esc_args);
  if (*shape)
    {
      g_autofree char *esc = g_markup_escape_text (shape, -1);
      g_string_append_printf (s, "\n<tt>%s</tt>", esc);
    }
  if (*module)
    {
      g_autofree char *esc = g_markup_escape_text (module, -1);
      g_autofree char *cls = g_markup_escape_text (fxw_node_get_module_class (self), -1);
      g_string_append_printf (s, "\n%s (%s)", esc, cls);
    }
  if (*source)
    {
      g_autofree char *esc = g_markup_escape_text (source, -1);
      g_autofree char *code = g_markup_escape_text (fxw_node_get_source_code (self), -1);
      g_string_append_printf (s, "\n%s  <tt>%s</tt>", esc, code);
    }
  return g_string_free (s, FALSE);
}

/* ---------------------------------------------------------------- FxwGraph */

static GType
fxw_graph_get_item_type (GListModel *model)
{
  return FXW_TYPE_NODE;
}

static guint
fxw_graph_get_n_items (GListModel *model)
{
  return FXW_GRAPH (model)->nodes->len;
}

static gpointer
fxw_graph_get_item (GListModel *model, guint position)
{
  FxwGraph *self = FXW_GRAPH (model);

  if (position >= self->nodes->len)
    return NULL;
  return g_object_ref (g_ptr_array_index (self->nodes, position));
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = fxw_graph_get_item_type;
  iface->get_n_items = fxw_graph_get_n_items;
  iface->get_item = fxw_graph_get_item;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (FxwGraph, fxw_graph, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static void
fxw_graph_finalize (GObject *object)
{
  FxwGraph *self = FXW_GRAPH (object);

  g_clear_pointer (&self->by_name, g_hash_table_unref);
  g_clear_pointer (&self->by_ptr, g_hash_table_unref);
  g_clear_pointer (&self->nodes, g_ptr_array_unref);
  g_clear_pointer (&self->graph, fx_graph_free);
  g_clear_pointer (&self->title, g_free);
  g_clear_pointer (&self->readable, g_free);
  G_OBJECT_CLASS (fxw_graph_parent_class)->finalize (object);
}

static void
fxw_graph_class_init (FxwGraphClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fxw_graph_finalize;
}

static void
fxw_graph_init (FxwGraph *self)
{
  self->nodes = g_ptr_array_new_with_free_func (g_object_unref);
  self->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  self->by_ptr = g_hash_table_new (NULL, NULL);
}

/**
 * fxw_graph_new:
 * @graph: (transfer full): the engine graph; the FxwGraph frees it
 *
 * Returns: (transfer full): a list model with one FxwNode per node of @graph
 */
FxwGraph *
fxw_graph_new (fx_graph *graph, const char *title)
{
  FxwGraph *self;
  guint i = 0;

  g_return_val_if_fail (graph != NULL, NULL);

  self = g_object_new (FXW_TYPE_GRAPH, NULL);
  self->graph = graph;
  self->title = g_strdup (title ? title : "");
  fx_graph_foreach_node (graph, n)
    {
      FxwNode *node;

      if (n->erased)
        continue;
      node = g_object_new (FXW_TYPE_NODE, NULL);
      node->owner = self;
      node->node = n;
      node->index = i++;
      g_ptr_array_add (self->nodes, node);
      g_hash_table_insert (self->by_name, (gpointer) n->name, node);
      g_hash_table_insert (self->by_ptr, (gpointer) n, node);
    }
  return self;
}

const fx_graph *
fxw_graph_get_graph (FxwGraph *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH (self), NULL);
  return self->graph;
}

const char *
fxw_graph_get_title (FxwGraph *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH (self), NULL);
  return self->title;
}

guint
fxw_graph_get_n_nodes (FxwGraph *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH (self), 0);
  return self->nodes->len;
}

/* Returns: (transfer none) (nullable) */
FxwNode *
fxw_graph_get_node (FxwGraph *self, guint index)
{
  g_return_val_if_fail (FXW_IS_GRAPH (self), NULL);
  if (index >= self->nodes->len)
    return NULL;
  return g_ptr_array_index (self->nodes, index);
}

/* Returns: (transfer none) (nullable) */
FxwNode *
fxw_graph_lookup (FxwGraph *self, const char *name)
{
  g_return_val_if_fail (FXW_IS_GRAPH (self), NULL);
  if (name == NULL)
    return NULL;
  return g_hash_table_lookup (self->by_name, name);
}

/* Returns: (transfer none) (nullable) */
FxwNode *
fxw_graph_lookup_node (FxwGraph *self, const fx_node *node)
{
  g_return_val_if_fail (FXW_IS_GRAPH (self), NULL);
  return g_hash_table_lookup (self->by_ptr, node);
}

const char *
fxw_graph_get_readable (FxwGraph *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH (self), NULL);

  if (self->readable == NULL)
    {
      g_auto(fx_buf) buf;
      fx_readable_opts opts = { .include_stride = TRUE, .include_device = TRUE };

      fx_buf_init (&buf);
      fx_graph_print_readable (self->graph, &opts, &buf);
      self->readable = g_strdup (buf.data ? buf.data : "");
    }
  return self->readable;
}

GStrv
fxw_graph_dup_module_paths (FxwGraph *self)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < self->nodes->len; i++)
    {
      const fx_meta *meta = &((FxwNode *) g_ptr_array_index (self->nodes, i))->node->meta;

      for (size_t k = 0; k < meta->n_nn_module_stack; k++)
        {
          const char *path = meta->nn_module_stack[k].path;

          if (path != NULL && g_hash_table_add (seen, (gpointer) path))
            g_strv_builder_add (builder, path);
        }
    }
  return g_strv_builder_end (builder);
}

gboolean
fxw_node_get_highlighted (FxwNode *self)
{
  g_return_val_if_fail (FXW_IS_NODE (self), FALSE);
  return self->highlighted;
}

void
fxw_node_set_highlighted (FxwNode *self, gboolean highlighted)
{
  g_return_if_fail (FXW_IS_NODE (self));

  if (self->highlighted == !!highlighted)
    return;
  self->highlighted = !!highlighted;
  g_object_notify_by_pspec (G_OBJECT (self), node_properties[NODE_PROP_HIGHLIGHTED]);
}
