/* fx-dot.c: Graphviz dot dump of a graph: clusters from nn_module_stack, nodes labelled with name, target and
   shape, edges labelled with the shape flowing along them. Every text from the graph is escaped. */
#include "fx-print-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A dot quoted string: '"' and '\' escaped (labels read '\\' as one backslash), a newline as the \n line break,
   other control bytes dropped, so no input text can end the string early. */
static void
put_dot_str (fx_buf *out, const char *s)
{
  fx_buf_putc (out, '"');
  for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
    {
      if (*p == '"' || *p == '\\')
        {
          fx_buf_putc (out, '\\');
          fx_buf_putc (out, (char) *p);
        }
      else if (*p == '\n')
        fx_buf_puts (out, "\\n");
      else if (*p >= 0x20 && *p != 0x7f)
        fx_buf_putc (out, (char) *p);
    }
  fx_buf_putc (out, '"');
}

typedef struct cluster cluster;
struct cluster
{
  const char *key;
  const char *label;
  char *owned_label;
  cluster **children;
  size_t n_children;
  size_t cap_children;
  const fx_node **nodes;
  size_t n_nodes;
  size_t cap_nodes;
};

static void *
grow (void *ptr, size_t *cap, size_t n, size_t size)
{
  if (n < *cap)
    return ptr;
  *cap = *cap ? *cap * 2 : 4;
  void *p = realloc (ptr, *cap * size);
  if (p == NULL)
    abort ();
  return p;
}

static cluster *
cluster_child (cluster *parent, const fx_module_entry *e)
{
  const char *key = e->key ? e->key : (e->path ? e->path : "");
  for (size_t i = 0; i < parent->n_children; i++)
    if (strcmp (parent->children[i]->key, key) == 0)
      return parent->children[i];
  cluster *c = calloc (1, sizeof *c);
  if (c == NULL)
    abort ();
  c->key = key;
  c->label = e->path && e->path[0] ? e->path : key;
  /* the class's short name after the path: "blocks.0: Block" */
  if (e->type != NULL && e->type[0] != '\0')
    {
      const char *dot = strrchr (e->type, '.');
      const char *cls = dot ? dot + 1 : e->type;
      size_t n = strlen (c->label) + strlen (cls) + 3;
      char *label = malloc (n);
      if (label == NULL)
        abort ();
      snprintf (label, n, "%s: %s", c->label, cls);
      c->label = c->owned_label = label;
    }
  parent->children = grow (parent->children, &parent->cap_children, parent->n_children, sizeof (cluster *));
  parent->children[parent->n_children++] = c;
  return c;
}

static void
cluster_free (cluster *c, bool is_root)
{
  for (size_t i = 0; i < c->n_children; i++)
    cluster_free (c->children[i], false);
  free (c->owned_label);
  free (c->children);
  free (c->nodes);
  if (!is_root)
    free (c);
}

/* Nodes are numbered by their position in the graph, so a copy or a JSON round trip dumps the same text. */
static void
put_node (fx_buf *out, const fx_node *n, const uint32_t *pos, const char *indent)
{
  fx_buf label;
  fx_buf_init (&label);
  fx_buf_puts (&label, n->name);
  if (n->op != FX_OP_PLACEHOLDER && n->op != FX_OP_OUTPUT)
    {
      fx_buf_putc (&label, '\n');
      fx_target_format (&n->target, &label);
    }
  fx_buf shape;
  fx_buf_init (&shape);
  if (fx_val_annotation (&n->meta.val, false, false, &shape))
    {
      fx_buf_putc (&label, '\n');
      fx_buf_append (&label, shape.data, shape.len);
    }
  fx_buf_printf (out, "%sn%u [label=", indent, pos[n->id]);
  put_dot_str (out, label.data);
  if (n->op == FX_OP_PLACEHOLDER)
    fx_buf_puts (out, ", shape=ellipse");
  else if (n->op == FX_OP_OUTPUT)
    fx_buf_puts (out, ", shape=octagon");
  else if (n->op == FX_OP_GET_ATTR)
    fx_buf_puts (out, ", shape=note");
  fx_buf_puts (out, "];\n");
  fx_buf_free (&label);
  fx_buf_free (&shape);
}

static void
put_cluster (fx_buf *out, const cluster *c, const uint32_t *pos, int depth, unsigned *counter)
{
  char indent[80];
  int ni = depth * 2 + 2 < 78 ? depth * 2 + 2 : 78;
  memset (indent, ' ', (size_t) ni);
  indent[ni] = '\0';

  for (size_t i = 0; i < c->n_nodes; i++)
    put_node (out, c->nodes[i], pos, indent);
  for (size_t i = 0; i < c->n_children; i++)
    {
      const cluster *k = c->children[i];
      fx_buf_printf (out, "%ssubgraph cluster_%u {\n%s  label=", indent, (*counter)++, indent);
      put_dot_str (out, k->label);
      fx_buf_printf (out, ";\n%s  style=rounded;\n", indent);
      put_cluster (out, k, pos, depth + 1, counter);
      fx_buf_printf (out, "%s}\n", indent);
    }
}

typedef struct
{
  fx_buf *out;
  const fx_node *user;
  uint8_t *seen;
  const uint32_t *pos;
  uint32_t n_ids;
} edge_ctx;

static void
edge_cb (fx_node *input, void *data)
{
  edge_ctx *e = data;
  if (input == NULL || input->graph != e->user->graph || input->id >= e->n_ids || e->seen[input->id])
    return;
  e->seen[input->id] = 1;
  fx_buf_printf (e->out, "  n%u -> n%u", e->pos[input->id], e->pos[e->user->id]);
  fx_buf shape;
  fx_buf_init (&shape);
  if (fx_val_annotation (&input->meta.val, false, false, &shape))
    {
      fx_buf_puts (e->out, " [label=");
      put_dot_str (e->out, shape.data);
      fx_buf_putc (e->out, ']');
    }
  fx_buf_free (&shape);
  fx_buf_puts (e->out, ";\n");
}

static void
unmark_cb (fx_node *input, void *data)
{
  edge_ctx *e = data;
  if (input != NULL && input->graph == e->user->graph && input->id < e->n_ids)
    e->seen[input->id] = 0;
}

void
fx_graph_dump_dot (const fx_graph *graph, fx_buf *out)
{
  cluster root = { 0 };
  unsigned counter = 0;
  uint32_t *pos = calloc (graph->next_id + 1, sizeof *pos);
  uint32_t i_pos = 0;

  if (pos == NULL)
    abort ();
  fx_graph_foreach_node (graph, n)
    if (n->id < graph->next_id)
      pos[n->id] = i_pos++;

  fx_graph_foreach_node (graph, n)
    {
      cluster *c = &root;
      for (size_t i = 0; i < n->meta.n_nn_module_stack; i++)
        c = cluster_child (c, &n->meta.nn_module_stack[i]);
      c->nodes = grow ((void *) c->nodes, &c->cap_nodes, c->n_nodes, sizeof (fx_node *));
      c->nodes[c->n_nodes++] = n;
    }

  fx_buf_puts (out, "digraph ");
  put_dot_str (out, graph->class_name ? graph->class_name : "GraphModule");
  fx_buf_puts (out, " {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
                    "  edge [fontname=\"monospace\", fontsize=9];\n");
  put_cluster (out, &root, pos, 0, &counter);

  edge_ctx e = { out, NULL, calloc (graph->next_id + 1, 1), pos, graph->next_id };
  if (e.seen == NULL)
    abort ();
  fx_graph_foreach_node (graph, n)
    {
      e.user = n;
      fx_node_foreach_input (n, edge_cb, &e);
      fx_node_foreach_input (n, unmark_cb, &e);
    }
  free (e.seen);
  free (pos);
  fx_buf_puts (out, "}\n");
  cluster_free (&root, true);
}
