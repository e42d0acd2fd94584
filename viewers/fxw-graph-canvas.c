/* fxw-graph-canvas.c: the Graph view's canvas. Layout runs in a GTask worker (Graphviz dot through
 * cgraph + gvc); the main thread only draws the finished layout and handles input. */
#define G_LOG_DOMAIN "fxw-graph-canvas"

#include "fx-config.h"

#include <math.h>
#include <glib/gi18n.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <cairo-svg.h>
#include <string.h>
#include <adwaita.h>

#include "fxw-autocleanups.h"
#include "fxw-graph-canvas.h"
#include "fxw-kernel.h"
#include "fxw-viewers.h"

#define BOX_HEIGHT       40.0
#define GLYPH_WIDTH        7.0
#define CLUSTER_LABEL_H  18.0
#define MIN_ZOOM          0.02
#define MAX_ZOOM          8.0
#define EDGE_LABEL_LIMIT   3000  /* edges; beyond this, labels cost more layout time than they help */
#define BIG_LAYOUT_BOXES    800  /* boxes; beyond this, dot's effort is bounded */
#define SPLIT_INPUTS_ABOVE   80  /* boxes; see the input stubs in layout_worker */
#define DOT_MAX_BOXES      2500  /* boxes; beyond this dot takes minutes: layered_layout() instead */

typedef struct
{
  int node_index;       /* index in the FxwGraph, or -1 for a collapsed module */
  char *module;         /* collapsed module path (node_index == -1) */
  char *title;
  char *subtitle;
  fx_opcode op;
  guint n_members;      /* nodes inside a collapsed module */
  gboolean is_stub;     /* a copy of an input drawn next to one of its users */
  int cluster;          /* innermost enclosing cluster, -1 for none */
  double x, y, w, h;    /* top-left corner, graph coordinates (y down) */
} CanvasBox;

typedef struct
{
  int from, to;         /* box indices */
  double *pts;          /* cubic bezier control points, x/y pairs */
  int n_pts;
  char *label;
  double lx, ly;
  gboolean label_centered;   /* dot placed it: (lx, ly) is its centre; else its left end beside the edge */
  gboolean has_label;
} CanvasEdge;

typedef struct
{
  char *module;         /* NULL for a fusion group */
  char *label;
  int fusion_group;     /* index of the FxwFusionGroup drawn, -1 for a module cluster */
  int depth;
  int parent;           /* enclosing cluster, -1 for none */
  double x, y, w, h;
} CanvasCluster;

typedef struct
{
  GArray *boxes;        /* CanvasBox */
  GArray *edges;        /* CanvasEdge */
  GArray *clusters;     /* CanvasCluster */
  GHashTable *node_box; /* node index -> box index + 1 */
  fx_arena *arena;      /* the layout itself, and its boxes', edges' and clusters' strings and points */
  double width, height;
  double seconds;
} CanvasLayout;

typedef struct
{
  FxwGraph *graph;           /* ref; the worker only reads the engine graph */
  GHashTable *collapsed;     /* module paths, a copy owned by the job */
  gboolean edge_labels;
  /* Fusion groups drawn as clusters (NULL: module clusters): node index -> group index or -1, and each group's
     cluster label. Module clusters and collapsing are left out then: Graphviz clusters nest, groups cross modules. */
  int *node_group;
  GStrv group_labels;
} LayoutJob;

struct _FxwGraphCanvas
{
  GtkWidget parent_instance;

  FxwGraph *graph;
  CanvasLayout *layout;
  GHashTable *collapsed;
  GCancellable *cancellable;
  guint collapse_threshold;
  gboolean edge_labels;
  gboolean busy;
  gboolean fit_pending;

  double zoom;
  double off_x, off_y;       /* widget = graph * zoom + off */
  /* The minimap (a big graph that does not fit): its picture of the layout, and where it was drawn last. */
  cairo_surface_t *minimap;
  const CanvasLayout *minimap_layout;
  gboolean minimap_shown;
  double mm_x, mm_y, mm_scale;
  double drag_off_x, drag_off_y;
  int hover_box;

  /* The fusion overlay: each node coloured by the first kernel that computes it. */
  GListModel *kernels;
  gboolean kernels_by_name;
  int *node_kernel;          /* node index -> kernel index or -1; NULL without kernels */
  gboolean show_fusion;
  /* The timing overlay: each node heated by the time of the kernel computing it (the latest stored run). */
  gboolean show_heat;
  double max_kernel_ms;      /* 0: no kernel has a time */

  /* Fusion groups of ir_post_fusion.txt, drawn as clusters while show_fusion is on and groups_here says their
     post-grad node names are this graph's. */
  GListModel *groups;
  gboolean groups_here;
  int *node_group;           /* node index -> group index or -1; NULL without groups for this graph */
  gboolean layout_has_groups;

  GtkPopoverMenu *menu;      /* the node's context menu, a child of the canvas */
  int last_width, last_height;
};

G_DEFINE_FINAL_TYPE (FxwGraphCanvas, fxw_graph_canvas, FXW_TYPE_VIEW)

/* The shared selection the canvas follows (FxwView's); NULL until it has one. */
static FxwSelection *
shared_selection (FxwGraphCanvas *self)
{
  return fxw_view_get_selection (FXW_VIEW (self));
}

/* ---------------------------------------------------------------- layout data */

static void
canvas_layout_free (CanvasLayout *layout)
{
  if (layout == NULL)
    return;
  g_array_unref (layout->boxes);
  g_array_unref (layout->edges);
  g_array_unref (layout->clusters);
  g_hash_table_unref (layout->node_box);
  fx_arena_free (layout->arena);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CanvasLayout, canvas_layout_free)

static CanvasLayout *
canvas_layout_new (void)
{
  fx_arena *arena = fx_arena_new ();
  CanvasLayout *layout = fx_arena_alloc (arena, sizeof *layout);

  layout->arena = arena;
  layout->boxes = g_array_new (FALSE, TRUE, sizeof (CanvasBox));
  layout->edges = g_array_new (FALSE, TRUE, sizeof (CanvasEdge));
  layout->clusters = g_array_new (FALSE, TRUE, sizeof (CanvasCluster));
  layout->node_box = g_hash_table_new (NULL, NULL);
  return layout;
}

static void
layout_job_free (LayoutJob *job)
{
  g_clear_object (&job->graph);
  g_clear_pointer (&job->collapsed, g_hash_table_unref);
  g_free (job->node_group);
  g_strfreev (job->group_labels);
  g_free (job);
}

/* ---------------------------------------------------------------- the worker */

/* Graphviz keeps global state (error handler, plugin registry): one layout at a time. */
static GMutex graphviz_lock;
/* One Graphviz context for the process, used under graphviz_lock. Graphviz's pango plugin caches a pointer
   to the last font name, which lives in the context's font dictionary: freeing a context leaves the cache
   dangling and the next layout reads freed memory (seen with ASan). */
static GVC_t *graphviz_context;

static const char *
short_target (const fx_node *node, fx_buf *buf)
{
  fx_buf_reset (buf);
  switch (node->op)
    {
    case FX_OP_PLACEHOLDER:
      fx_buf_puts (buf, "input");
      break;
    case FX_OP_OUTPUT:
      fx_buf_puts (buf, "output");
      break;
    case FX_OP_GET_ATTR:
    case FX_OP_CALL_METHOD:
    case FX_OP_CALL_MODULE:
      fx_buf_puts (buf, node->target.name ? node->target.name : "");
      break;
    case FX_OP_CALL_FUNCTION:
    case FX_OPCODE_COUNT:
    default:
      fx_buf_puts (buf, node->target.name ? node->target.name : "");
      break;
    }
  return buf->data ? buf->data : "";
}

typedef struct
{
  GHashTable *seen;     /* input node ptr, for dedup */
  GPtrArray *inputs;
} CollectInputs;

static void
collect_input (fx_node *node, void *data)
{
  CollectInputs *ci = data;

  if (g_hash_table_add (ci->seen, node))
    g_ptr_array_add (ci->inputs, node);
}

static void
set_size (Agnode_t *n, double w_px, double h_px)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  agsafeset (n, (char *) "width", g_ascii_dtostr (buf, sizeof buf, w_px / 72.0), (char *) "");
  agsafeset (n, (char *) "height", g_ascii_dtostr (buf, sizeof buf, h_px / 72.0), (char *) "");
}

/* The fallback for graphs too big for dot: rank = longest path from the inputs, boxes side by side within a
   rank, straight edges. Clusters become the bounding boxes of their members (they may overlap). */
static void
layered_layout (CanvasLayout *layout)
{
  guint n = layout->boxes->len;
  g_autofree int *rank = g_new0 (int, n);
  g_autofree double *cursor = NULL;
  int max_rank = 0;
  gboolean changed = TRUE;
  const double row_h = BOX_HEIGHT + 36, gap = 16;

  /* Node boxes come in graph order, so edges arrive mostly sorted: a few passes settle the ranks. */
  for (int pass = 0; pass < 8 && changed; pass++)
    {
      changed = FALSE;
      for (guint e = 0; e < layout->edges->len; e++)
        {
          CanvasEdge *edge = &g_array_index (layout->edges, CanvasEdge, e);

          if (g_array_index (layout->boxes, CanvasBox, edge->from).is_stub)
            continue;
          if (rank[edge->to] < rank[edge->from] + 1)
            {
              rank[edge->to] = rank[edge->from] + 1;
              changed = TRUE;
            }
        }
    }
  for (guint e = 0; e < layout->edges->len; e++)
    {
      CanvasEdge *edge = &g_array_index (layout->edges, CanvasEdge, e);

      if (g_array_index (layout->boxes, CanvasBox, edge->from).is_stub)
        rank[edge->from] = MAX (rank[edge->to] - 1, 0);
    }
  for (guint b = 0; b < n; b++)
    max_rank = MAX (max_rank, rank[b]);
  cursor = g_new0 (double, max_rank + 1);
  for (guint b = 0; b < n; b++)
    {
      CanvasBox *box = &g_array_index (layout->boxes, CanvasBox, b);

      box->w = MIN (MAX (strlen (box->title), strlen (box->subtitle)), 40) * GLYPH_WIDTH + 20;
      box->h = box->is_stub ? BOX_HEIGHT * 0.75 : BOX_HEIGHT;
      box->x = cursor[rank[b]];
      box->y = rank[b] * row_h;
      cursor[rank[b]] += box->w + gap;
      layout->width = MAX (layout->width, box->x + box->w);
      layout->height = MAX (layout->height, box->y + box->h);
    }
  for (guint e = 0; e < layout->edges->len; e++)
    {
      CanvasEdge *edge = &g_array_index (layout->edges, CanvasEdge, e);
      CanvasBox *a = &g_array_index (layout->boxes, CanvasBox, edge->from);
      CanvasBox *b = &g_array_index (layout->boxes, CanvasBox, edge->to);
      double x0 = a->x + a->w / 2, y0 = a->y + a->h, x1 = b->x + b->w / 2, y1 = b->y;

      edge->n_pts = 4;
      edge->pts = fx_arena_alloc (layout->arena, 8 * sizeof (double));
      for (int k = 0; k < 4; k++)
        {
          edge->pts[2 * k] = x0 + (x1 - x0) * k / 3.0;
          edge->pts[2 * k + 1] = y0 + (y1 - y0) * k / 3.0;
        }
      if (edge->label != NULL)
        {
          edge->has_label = TRUE;
          edge->lx = (x0 + x1) / 2 + 4;
          edge->ly = (y0 + y1) / 2;
        }
    }
  for (guint c = 0; c < layout->clusters->len; c++)
    {
      CanvasCluster *cl = &g_array_index (layout->clusters, CanvasCluster, c);

      cl->x = cl->y = G_MAXDOUBLE;
      cl->w = cl->h = -G_MAXDOUBLE;   /* right/bottom until the end */
    }
  for (guint b = 0; b < n; b++)
    {
      CanvasBox *box = &g_array_index (layout->boxes, CanvasBox, b);

      for (int c = box->cluster; c >= 0; c = g_array_index (layout->clusters, CanvasCluster, c).parent)
        {
          CanvasCluster *cl = &g_array_index (layout->clusters, CanvasCluster, c);
          double pad = 8.0 * (1 + cl->depth);

          cl->x = MIN (cl->x, box->x - pad);
          cl->y = MIN (cl->y, box->y - pad - CLUSTER_LABEL_H);
          cl->w = MAX (cl->w, box->x + box->w + pad);
          cl->h = MAX (cl->h, box->y + box->h + pad);
        }
    }
  for (guint c = 0; c < layout->clusters->len; c++)
    {
      CanvasCluster *cl = &g_array_index (layout->clusters, CanvasCluster, c);

      if (cl->w < cl->x)
        cl->x = cl->y = cl->w = cl->h = 0;
      else
        {
          cl->w -= cl->x;
          cl->h -= cl->y;
        }
    }
}

/* Adds cluster to the layout as a Graphviz subgraph of parent; key (a module path, or "#N" for fusion group N) finds
   both again in cluster_sub and cluster_index. Returns the subgraph. */
static Agraph_t *
add_cluster (CanvasLayout *layout, GPtrArray *agclusters, GHashTable *cluster_sub, GHashTable *cluster_index,
             Agraph_t *parent, const char *key, CanvasCluster *cluster)
{
  char name[32];
  Agraph_t *sub;

  g_snprintf (name, sizeof name, "cluster_%u", agclusters->len);
  sub = agsubg (parent, name, 1);
  g_hash_table_insert (cluster_index, g_strdup (key), GUINT_TO_POINTER (layout->clusters->len + 1));
  agsafeset (sub, (char *) "label", cluster->label, (char *) "");
  g_array_append_val (layout->clusters, *cluster);
  g_ptr_array_add (agclusters, sub);
  g_hash_table_insert (cluster_sub, g_strdup (key), sub);
  return sub;
}

static void
layout_worker (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  LayoutJob *job = task_data;
  const fx_graph *graph = fxw_graph_get_graph (job->graph);
  guint n_nodes = fxw_graph_get_n_nodes (job->graph);
  g_autoptr(CanvasLayout) layout = canvas_layout_new ();
  g_autoptr(GHashTable) cluster_sub = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) cluster_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) module_box = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) edge_seen = g_hash_table_new (NULL, NULL);  /* from << 32 | to */
  g_autoptr(GPtrArray) agnodes = g_ptr_array_new ();
  g_autoptr(GPtrArray) agedges = g_ptr_array_new ();
  g_autoptr(GPtrArray) agclusters = g_ptr_array_new ();
  g_auto(fx_buf) buf;
  g_autoptr(GTimer) timer = g_timer_new ();
  GVC_t *gvc;
  Agraph_t *g;
  boxf bb;
  guint n_edges_est = 0;
  gboolean labels;
  gboolean split_inputs;

  fx_buf_init (&buf);
  g_mutex_lock (&graphviz_lock);

  if (graphviz_context == NULL)
    graphviz_context = gvContext ();
  gvc = graphviz_context;
  g = agopen ((char *) "fx", Agdirected, NULL);
  agattr (g, AGRAPH, (char *) "rankdir", (char *) "TB");
  agattr (g, AGRAPH, (char *) "nodesep", (char *) "0.25");
  agattr (g, AGRAPH, (char *) "ranksep", (char *) "0.35");
  agattr (g, AGRAPH, (char *) "fontsize", (char *) "11");
  agattr (g, AGRAPH, (char *) "label", (char *) "");
  agattr (g, AGNODE, (char *) "shape", (char *) "box");
  agattr (g, AGNODE, (char *) "fixedsize", (char *) "true");
  agattr (g, AGNODE, (char *) "label", (char *) "");
  agattr (g, AGEDGE, (char *) "label", (char *) "");
  /* Dot reserves the label's room from these: the canvas draws it in an 8 pt monospace font at 96 dpi (10.7 px,
     0.6 em a character), so dot's Courier estimate at that size keeps labels clear of edges and boxes. */
  agattr (g, AGEDGE, (char *) "fontname", (char *) "Courier");
  agattr (g, AGEDGE, (char *) "fontsize", (char *) "10.7");

  /* Boxes: a node is drawn inside the clusters of its modules until the first collapsed one. */
  for (guint i = 0; i < n_nodes; i++)
    {
      const fx_node *node = fxw_node_get_node (fxw_graph_get_node (job->graph, i));
      const fx_meta *meta = &node->meta;
      Agraph_t *parent = g;
      const char *collapsed_at = NULL;
      int cur_cluster = -1;
      guint box_index;

      if (job->node_group != NULL && job->node_group[i] >= 0)
        {
          int grp = job->node_group[i];
          char key[32];
          Agraph_t *sub;

          /* Keyed by group index; the module loop below is skipped (module_depth 0). */
          g_snprintf (key, sizeof key, "#%d", grp);
          sub = g_hash_table_lookup (cluster_sub, key);
          if (sub == NULL)
            {
              CanvasCluster cluster = { .fusion_group = grp, .parent = -1,
                                        .label = fx_arena_strdup (layout->arena, job->group_labels[grp]) };

              sub = add_cluster (layout, agclusters, cluster_sub, cluster_index, g, key, &cluster);
            }
          parent = sub;
          cur_cluster = (int) GPOINTER_TO_UINT (g_hash_table_lookup (cluster_index, key)) - 1;
        }
      for (size_t k = 0; job->node_group == NULL && k < meta->n_nn_module_stack; k++)
        {
          const char *path = meta->nn_module_stack[k].path ? meta->nn_module_stack[k].path : "";
          Agraph_t *sub;

          if (g_hash_table_contains (job->collapsed, path))
            {
              collapsed_at = path;
              break;
            }
          sub = g_hash_table_lookup (cluster_sub, path);
          if (sub == NULL)
            {
              const char *type = meta->nn_module_stack[k].type ? meta->nn_module_stack[k].type : "";
              const char *cls = strrchr (type, '.');
              CanvasCluster cluster = { .module = fx_arena_strdup (layout->arena, path), .fusion_group = -1,
                                        .depth = (int) k, .parent = cur_cluster,
                                        .label = fx_arena_printf (layout->arena, "%s (%s)", path,
                                                                  cls ? cls + 1 : type) };

              sub = add_cluster (layout, agclusters, cluster_sub, cluster_index, parent, path, &cluster);
            }
          parent = sub;
          cur_cluster = (int) GPOINTER_TO_UINT (g_hash_table_lookup (cluster_index, path)) - 1;
        }

      if (collapsed_at != NULL)
        {
          gpointer found = g_hash_table_lookup (module_box, collapsed_at);

          if (found != NULL)
            {
              box_index = GPOINTER_TO_UINT (found) - 1;
              g_array_index (layout->boxes, CanvasBox, box_index).n_members++;
            }
          else
            {
              CanvasBox box = { .node_index = -1, .op = FX_OP_CALL_MODULE, .n_members = 1, .cluster = cur_cluster };
              char name[32];
              Agnode_t *an;
              const char *type = "";

              for (size_t k = 0; k < meta->n_nn_module_stack; k++)
                if (g_strcmp0 (meta->nn_module_stack[k].path, collapsed_at) == 0)
                  type = meta->nn_module_stack[k].type ? meta->nn_module_stack[k].type : "";
              box.module = fx_arena_strdup (layout->arena, collapsed_at);
              box.title = box.module;
              box.subtitle = fx_arena_strdup (layout->arena, strrchr (type, '.') ? strrchr (type, '.') + 1 : type);
              box_index = layout->boxes->len;
              g_snprintf (name, sizeof name, "b%u", box_index);
              an = agnode (parent, name, 1);
              set_size (an, MAX (strlen (box.title), strlen (box.subtitle) + 8) * GLYPH_WIDTH + 24, BOX_HEIGHT + 8);
              g_array_append_val (layout->boxes, box);
              g_ptr_array_add (agnodes, an);
              g_hash_table_insert (module_box, g_strdup (collapsed_at), GUINT_TO_POINTER (box_index + 1));
            }
        }
      else
        {
          CanvasBox box = { .node_index = (int) i, .op = node->op, .cluster = cur_cluster };
          char name[32];
          Agnode_t *an;

          box.title = fx_arena_strdup (layout->arena, node->name);
          box.subtitle = fx_arena_strdup (layout->arena, short_target (node, &buf));
          box_index = layout->boxes->len;
          g_snprintf (name, sizeof name, "b%u", box_index);
          an = agnode (parent, name, 1);
          set_size (an, MIN (MAX (strlen (box.title), strlen (box.subtitle)), 40) * GLYPH_WIDTH + 20, BOX_HEIGHT);
          g_array_append_val (layout->boxes, box);
          g_ptr_array_add (agnodes, an);
        }
      g_hash_table_insert (layout->node_box, GUINT_TO_POINTER (i), GUINT_TO_POINTER (box_index + 1));
      n_edges_est += node->n_args;

      if ((i & 1023) == 0 && g_cancellable_is_cancelled (cancellable))
        goto cancelled;
    }

  /* Edges between boxes, labelled with the shape of the value they carry. */
  labels = job->edge_labels && n_edges_est <= EDGE_LABEL_LIMIT;
  split_inputs = layout->boxes->len > SPLIT_INPUTS_ABOVE;
  for (guint i = 0; i < n_nodes; i++)
    {
      const fx_node *node = fxw_node_get_node (fxw_graph_get_node (job->graph, i));
      CollectInputs ci = { g_hash_table_new (NULL, NULL), g_ptr_array_new () };
      guint to = GPOINTER_TO_UINT (g_hash_table_lookup (layout->node_box, GUINT_TO_POINTER (i))) - 1;

      for (size_t a = 0; a < node->n_args; a++)
        fx_arg_foreach_node (&node->args[a], collect_input, &ci);
      for (size_t a = 0; a < node->n_kwargs; a++)
        fx_arg_foreach_node (&node->kwargs[a].value, collect_input, &ci);

      for (guint k = 0; k < ci.inputs->len; k++)
        {
          fx_node *input = g_ptr_array_index (ci.inputs, k);
          FxwNode *in_node = fxw_graph_lookup_node (job->graph, input);
          guint from;
          gpointer key;
          CanvasEdge edge = { 0 };
          Agedge_t *ae;

          if (in_node == NULL)
            continue;
          from = GPOINTER_TO_UINT (g_hash_table_lookup (layout->node_box,
                                                        GUINT_TO_POINTER (fxw_node_get_index (in_node)))) - 1;
          if (from == to)
            continue;
          G_STATIC_ASSERT (sizeof (gpointer) >= sizeof (guint64));
          key = GSIZE_TO_POINTER (((gsize) from << 32) | to);   /* never 0: from != to */
          if (!g_hash_table_add (edge_seen, key))
            continue;
          if (split_inputs && (input->op == FX_OP_PLACEHOLDER || input->op == FX_OP_GET_ATTR)
              && g_array_index (layout->boxes, CanvasBox, from).node_index >= 0)
            {
              /* Inputs of big graphs are drawn again next to each user: a weight used 40 layers down would
                 otherwise be a 40-rank edge, and long edges are what makes dot slow and the picture unreadable. */
              CanvasBox stub = g_array_index (layout->boxes, CanvasBox, from);
              char name[32];
              Agnode_t *an;

              stub.module = NULL;
              stub.is_stub = TRUE;   /* its title and subtitle are the box's, in the layout's arena */
              stub.cluster = g_array_index (layout->boxes, CanvasBox, to).cluster;
              g_snprintf (name, sizeof name, "b%u", layout->boxes->len);
              an = agnode (g, name, 1);
              set_size (an, MIN (strlen (stub.title), 40) * GLYPH_WIDTH + 20, BOX_HEIGHT * 0.75);
              from = layout->boxes->len;
              g_array_append_val (layout->boxes, stub);
              g_ptr_array_add (agnodes, an);
            }
          edge.from = (int) from;
          edge.to = (int) to;
          ae = agedge (g, g_ptr_array_index (agnodes, from), g_ptr_array_index (agnodes, to), NULL, 1);
          if (labels)
            {
              fx_buf_reset (&buf);
              if (fx_val_annotation (&input->meta.val, FALSE, FALSE, &buf) && buf.len > 0)
                {
                  edge.label = fx_arena_strdup (layout->arena, buf.data);
                  /* Graphviz 2.43 frees a label's virtual node twice in gvFreeLayout when labelled edges run
                     inside clusters laid out without module nesting (ASan, the fusion groups of the MLP's post-grad
                     graph): with fusion groups the label is placed on the drawn edge instead. */
                  if (job->node_group == NULL)
                    agsafeset (ae, (char *) "label", edge.label, (char *) "");
                }
            }
          g_array_append_val (layout->edges, edge);
          g_ptr_array_add (agedges, ae);
        }
      g_hash_table_unref (ci.seen);
      g_ptr_array_unref (ci.inputs);
    }

  if (g_cancellable_is_cancelled (cancellable))
    goto cancelled;

  if (layout->boxes->len > DOT_MAX_BOXES)
    {
      agclose (g);
          g_mutex_unlock (&graphviz_lock);
      layered_layout (layout);
      layout->seconds = g_timer_elapsed (timer, NULL);
      g_task_return_pointer (task, g_steal_pointer (&layout), (GDestroyNotify) canvas_layout_free);
      return;
    }
  if (layout->boxes->len > BIG_LAYOUT_BOXES)
    {
      /* dot's crossing minimisation and network simplex grow much faster than linearly: on big
         graphs bound their iterations and draw straight edges, trading some crossings for seconds. */
      agsafeset (g, (char *) "mclimit", (char *) "0.05", (char *) "");
      agsafeset (g, (char *) "nslimit", (char *) "2", (char *) "");
      agsafeset (g, (char *) "nslimit1", (char *) "2", (char *) "");
      agsafeset (g, (char *) "searchsize", (char *) "5", (char *) "");
      agsafeset (g, (char *) "remincross", (char *) "false", (char *) "");
      agsafeset (g, (char *) "splines", (char *) "line", (char *) "");
    }
  g_debug ("layout: graph built in %.3f s", g_timer_elapsed (timer, NULL));
  if (gvLayout (gvc, g, "dot") != 0)
    {
      agclose (g);
          g_mutex_unlock (&graphviz_lock);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", _("Graphviz could not lay out this graph"));
      return;
    }

  g_debug ("layout: dot ran until %.3f s", g_timer_elapsed (timer, NULL));
  bb = GD_bb (g);
  layout->width = bb.UR.x - bb.LL.x;
  layout->height = bb.UR.y - bb.LL.y;
#define GX(px) ((px) - bb.LL.x)
#define GY(py) (bb.UR.y - (py))
  for (guint i = 0; i < layout->boxes->len; i++)
    {
      CanvasBox *box = &g_array_index (layout->boxes, CanvasBox, i);
      Agnode_t *an = g_ptr_array_index (agnodes, i);

      box->w = ND_width (an) * 72.0;
      box->h = ND_height (an) * 72.0;
      box->x = GX (ND_coord (an).x) - box->w / 2;
      box->y = GY (ND_coord (an).y) - box->h / 2;
    }
  for (guint i = 0; i < layout->edges->len; i++)
    {
      CanvasEdge *edge = &g_array_index (layout->edges, CanvasEdge, i);
      Agedge_t *ae = g_ptr_array_index (agedges, i);
      splines *spl = ED_spl (ae);

      if (spl != NULL && spl->size > 0)
        {
          bezier *bz = &spl->list[0];
          int n = (int) bz->size + (bz->eflag ? 1 : 0);
          int k = 0;

          edge->pts = fx_arena_alloc (layout->arena, 2 * n * sizeof (double));
          for (size_t p = 0; p < bz->size; p++, k++)
            {
              edge->pts[2 * k] = GX (bz->list[p].x);
              edge->pts[2 * k + 1] = GY (bz->list[p].y);
            }
          if (bz->eflag)
            {
              edge->pts[2 * k] = GX (bz->ep.x);
              edge->pts[2 * k + 1] = GY (bz->ep.y);
              k++;
            }
          edge->n_pts = k;
        }
      if (edge->label != NULL && ED_label (ae) != NULL)
        {
          edge->has_label = TRUE;
          edge->lx = GX (ED_label (ae)->pos.x);
          edge->ly = GY (ED_label (ae)->pos.y);
          edge->label_centered = TRUE;
        }
      else if (edge->label != NULL && edge->n_pts >= 2)
        {
          int mid = edge->n_pts / 2;

          edge->has_label = TRUE;
          edge->lx = edge->pts[2 * mid] + 4;
          edge->ly = edge->pts[2 * mid + 1];
        }
    }
  for (guint i = 0; i < layout->clusters->len; i++)
    {
      CanvasCluster *cluster = &g_array_index (layout->clusters, CanvasCluster, i);
      boxf cb = GD_bb ((Agraph_t *) g_ptr_array_index (agclusters, i));

      cluster->x = GX (cb.LL.x);
      cluster->y = GY (cb.UR.y);
      cluster->w = cb.UR.x - cb.LL.x;
      cluster->h = cb.UR.y - cb.LL.y;
    }
#undef GX
#undef GY

  gvFreeLayout (gvc, g);
  agclose (g);
  g_mutex_unlock (&graphviz_lock);

  layout->seconds = g_timer_elapsed (timer, NULL);
  (void) graph;
  g_task_return_pointer (task, g_steal_pointer (&layout), (GDestroyNotify) canvas_layout_free);
  return;

cancelled:
  agclose (g);
  g_mutex_unlock (&graphviz_lock);
  g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s", _("Layout cancelled"));
}

/* ---------------------------------------------------------------- main thread */

static void
fxw_graph_canvas_relayout (FxwGraphCanvas *self);

/* Fusion groups are laid out as clusters: the overlay is on and the groups name nodes of this graph. */
static gboolean
fusion_clusters_active (FxwGraphCanvas *self)
{
  return self->show_fusion && self->groups_here && self->node_group != NULL && self->graph != NULL;
}

/* node_group: each node of the graph to the first group whose origins name it. A post-grad node recomputed by two
   launches (a fused add read by two kernels) is drawn in the first group only; the tooltip names every group. */
static void
update_group_map (FxwGraphCanvas *self)
{
  guint n_groups;
  gboolean any = FALSE;

  g_clear_pointer (&self->node_group, g_free);
  if (self->graph == NULL || self->groups == NULL || !self->groups_here
      || (n_groups = g_list_model_get_n_items (self->groups)) == 0)
    return;
  self->node_group = g_new (int, MAX (fxw_graph_get_n_nodes (self->graph), 1));
  for (guint i = 0; i < fxw_graph_get_n_nodes (self->graph); i++)
    self->node_group[i] = -1;
  for (guint gi = 0; gi < n_groups; gi++)
    {
      g_autoptr(FxwFusionGroup) group = g_list_model_get_item (self->groups, gi);
      const char * const *names = fxw_fusion_group_get_post_nodes (group);

      for (guint k = 0; names[k] != NULL; k++)
        {
          FxwNode *node = fxw_graph_lookup (self->graph, names[k]);

          if (node != NULL && self->node_group[fxw_node_get_index (node)] < 0)
            {
              self->node_group[fxw_node_get_index (node)] = (int) gi;
              any = TRUE;
            }
        }
    }
  if (!any)
    g_clear_pointer (&self->node_group, g_free);
}

/* Room Fit leaves at the top and bottom for what floats over the canvas: the legend and the top-right toolbar
   (8 margin + 58 high), the bottom toolbar (8 margin + 56 high), plus a gap. */
#define FIT_TOP 74
#define FIT_BOTTOM 76

/* The first view of a graph: all of it when it fits legibly, else its top at a zoom where labels read. */
static void
fit_readable (FxwGraphCanvas *self)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));

  if (w <= 1 || h <= 1)
    {
      self->fit_pending = TRUE;
      return;
    }
  fxw_graph_canvas_fit (self);
  if (self->zoom < 0.75)
    {
      /* the graph's first rank, centred: the layout's top-left corner can be empty (a long chain laid out
         diagonally showed a blank view at first) */
      const CanvasBox *top = NULL;

      for (guint i = 0; i < self->layout->boxes->len; i++)
        {
          const CanvasBox *b = &g_array_index (self->layout->boxes, CanvasBox, i);

          if (top == NULL || b->y < top->y || (b->y == top->y && b->x < top->x))
            top = b;
        }
      self->zoom = 0.75;
      self->off_x = MAX (12, (w - self->layout->width * self->zoom) / 2);
      self->off_y = FIT_TOP;
      if (top != NULL && self->layout->width * self->zoom > w)
        {
          self->off_x = w / 2 - (top->x + top->w / 2) * self->zoom;
          self->off_y = FIT_TOP - top->y * self->zoom;
        }
    }
}

static void
layout_done_cb (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(FxwGraphCanvas) self = user_data;
  g_autoptr(GError) error = NULL;
  CanvasLayout *layout = g_task_propagate_pointer (G_TASK (result), &error);

  if (layout == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_warning ("%s", error->message);
          self->busy = FALSE;
          gtk_widget_queue_draw (GTK_WIDGET (self));
        }
      return;
    }
  g_clear_pointer (&self->minimap, cairo_surface_destroy);
  g_clear_pointer (&self->layout, canvas_layout_free);
  self->layout = layout;
  self->busy = FALSE;
  self->hover_box = -1;
  g_debug ("layout: %u boxes, %u edges in %.3f s", layout->boxes->len, layout->edges->len, layout->seconds);
  if (self->fit_pending)
    {
      self->fit_pending = FALSE;
      fit_readable (self);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit_by_name (self, "layout-done");
}

static void
fxw_graph_canvas_relayout (FxwGraphCanvas *self)
{
  g_autoptr(GTask) task = NULL;
  LayoutJob *job;
  GHashTableIter iter;
  gpointer key;

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  if (self->graph == NULL)
    {
      g_clear_pointer (&self->minimap, cairo_surface_destroy);
  g_clear_pointer (&self->layout, canvas_layout_free);
      self->busy = FALSE;
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return;
    }

  job = g_new0 (LayoutJob, 1);
  job->graph = g_object_ref (self->graph);
  job->edge_labels = self->edge_labels;
  job->collapsed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_iter_init (&iter, self->collapsed);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_hash_table_add (job->collapsed, g_strdup (key));
  if (fusion_clusters_active (self))
    {
      guint n_groups = g_list_model_get_n_items (self->groups);
      g_autoptr(GStrvBuilder) labels = g_strv_builder_new ();

      job->node_group = g_memdup2 (self->node_group, sizeof (int) * fxw_graph_get_n_nodes (self->graph));
      for (guint i = 0; i < n_groups; i++)
        {
          g_autoptr(FxwFusionGroup) group = g_list_model_get_item (self->groups, i);
          const char *kernel = fxw_fusion_group_get_kernel (group);
          g_autofree char *label = *kernel ? g_strdup_printf ("%s  (%s)", kernel, fxw_fusion_group_get_name (group))
                                           : g_strdup (fxw_fusion_group_get_name (group));

          g_strv_builder_add (labels, label);
        }
      job->group_labels = g_strv_builder_end (labels);
    }
  self->layout_has_groups = job->node_group != NULL;

  self->cancellable = g_cancellable_new ();
  self->busy = TRUE;
  task = g_task_new (NULL, self->cancellable, layout_done_cb, g_object_ref (self));
  g_task_set_source_tag (task, fxw_graph_canvas_relayout);
  g_task_set_task_data (task, job, (GDestroyNotify) layout_job_free);
  g_task_run_in_thread (task, layout_worker);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
update_fusion_map (FxwGraphCanvas *self)
{
  g_clear_pointer (&self->node_kernel, g_free);
  if (self->graph != NULL && self->kernels != NULL && g_list_model_get_n_items (self->kernels) > 0)
    self->node_kernel = fxw_kernels_map_nodes (self->kernels, self->graph, self->kernels_by_name);
  self->max_kernel_ms = 0;
  for (guint i = 0; self->kernels != NULL && i < g_list_model_get_n_items (self->kernels); i++)
    {
      g_autoptr(FxwKernel) kernel = g_list_model_get_item (self->kernels, i);
      double ms = fxw_kernel_get_time_ms (kernel);

      if (!isnan (ms) && ms > self->max_kernel_ms)
        self->max_kernel_ms = ms;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
graph_changed (FxwView *view)
{
  FxwGraphCanvas *self = FXW_GRAPH_CANVAS (view);
  FxwGraph *graph = fxw_selection_get_graph (shared_selection (self));

  if (!g_set_object (&self->graph, graph))
    return;
  update_fusion_map (self);
  update_group_map (self);
  g_hash_table_remove_all (self->collapsed);
  g_clear_pointer (&self->minimap, cairo_surface_destroy);
  g_clear_pointer (&self->layout, canvas_layout_free);
  if (graph != NULL && fxw_graph_get_n_nodes (graph) > self->collapse_threshold)
    {
      /* Large graphs start collapsed at module level: one box per top-level module. */
      for (guint i = 0; i < fxw_graph_get_n_nodes (graph); i++)
        {
          const fx_meta *meta = &fxw_node_get_node (fxw_graph_get_node (graph, i))->meta;

          if (meta->n_nn_module_stack > 0 && meta->nn_module_stack[0].path != NULL)
            g_hash_table_add (self->collapsed, g_strdup (meta->nn_module_stack[0].path));
        }
    }
  self->fit_pending = TRUE;
  fxw_graph_canvas_relayout (self);
}

static int
box_for_node (FxwGraphCanvas *self, FxwNode *node)
{
  gpointer v;

  if (self->layout == NULL || node == NULL)
    return -1;
  v = g_hash_table_lookup (self->layout->node_box, GUINT_TO_POINTER (fxw_node_get_index (node)));
  return v ? (int) GPOINTER_TO_UINT (v) - 1 : -1;
}

static void
center_on_box (FxwGraphCanvas *self, int b)
{
  CanvasBox *box = &g_array_index (self->layout->boxes, CanvasBox, b);
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));
  double cx = (box->x + box->w / 2) * self->zoom + self->off_x;
  double cy = (box->y + box->h / 2) * self->zoom + self->off_y;

  /* Only scroll when the box is off screen: keeps the view still while clicking around. */
  if (cx < 0 || cy < 0 || cx > w || cy > h)
    {
      self->off_x += w / 2 - cx;
      self->off_y += h / 2 - cy;
    }
}

static void
node_changed (FxwView *view)
{
  FxwGraphCanvas *self = FXW_GRAPH_CANVAS (view);
  int b = box_for_node (self, fxw_selection_get_node (shared_selection (self)));

  if (b >= 0)
    center_on_box (self, b);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
highlight_changed (FxwView *view)
{
  gtk_widget_queue_draw (GTK_WIDGET (view));
}

static void
op_color (fx_opcode op, gboolean dark, GdkRGBA *rgba)
{
  const char *light_colors[] = { "#d1f0da", "#fcefc2", "#dbe8fb", "#e8ddf6", "#eadff8", "#e4e4e4" };
  const char *dark_colors[] = { "#26503a", "#5a4a14", "#233f63", "#42305a", "#42305a", "#3a3a3a" };

  gdk_rgba_parse (rgba, (dark ? dark_colors : light_colors)[MIN ((int) op, 5)]);
}

/* Distinct hues for the fusion overlay; kernel i takes colour i modulo the palette. */
static void
kernel_color (int kernel, gboolean dark, GdkRGBA *rgba)
{
  static const char *light_colors[] = { "#8fd19e", "#f7c873", "#8ab8f0", "#e39be0", "#f19a8e", "#7fd8d2",
                                        "#c8d67a", "#b9a3ef", "#f2b07b", "#9ec3a8", "#e7a3b7", "#a7c7e7" };
  static const char *dark_colors[] = { "#2f7a43", "#8a6417", "#2b5f9e", "#7e3a7b", "#8f3b30", "#1f7a74",
                                       "#6b7a1f", "#5a44a0", "#8f5524", "#3f6b4c", "#86435a", "#3b5f86" };

  gdk_rgba_parse (rgba, (dark ? dark_colors : light_colors)[kernel % G_N_ELEMENTS (light_colors)]);
}

static void draw_text (cairo_t *cr, PangoLayout *pl, const char *text, double x, double y, double max_w,
                       gboolean bold);

/* Heat for a share of the slowest kernel's time: pale yellow to red, readable under black text in both themes. */
static void
heat_color (double share, gboolean dark, GdkRGBA *rgba)
{
  GdkRGBA cold, hot;

  share = CLAMP (share, 0, 1);
  gdk_rgba_parse (&cold, dark ? "#5a4a1a" : "#fff3c4");
  gdk_rgba_parse (&hot, dark ? "#b3261e" : "#f0604d");
  rgba->red = cold.red + (hot.red - cold.red) * share;
  rgba->green = cold.green + (hot.green - cold.green) * share;
  rgba->blue = cold.blue + (hot.blue - cold.blue) * share;
  rgba->alpha = 1;
}

/* The fill of a node box under the overlays (fusion groups, kernel colours, kernel-time heat). */
static void
box_fill (FxwGraphCanvas *self, const CanvasBox *box, gboolean dark, GdkRGBA *fill)
{
  op_color (box->op, dark, fill);
  if (self->show_heat && self->node_kernel != NULL && box->node_index >= 0)
    {
      int k = self->node_kernel[box->node_index];
      g_autoptr(FxwKernel) kernel = k >= 0 ? g_list_model_get_item (self->kernels, k) : NULL;
      double ms = kernel ? fxw_kernel_get_time_ms (kernel) : NAN;

      if (!isnan (ms) && self->max_kernel_ms > 0)
        heat_color (ms / self->max_kernel_ms, dark, fill);
      else
        fill->alpha = 0.35;   /* no kernel, or one the run did not time */
    }
  else if (self->layout_has_groups && self->node_group != NULL && box->node_index >= 0)
    {
      int grp = self->node_group[box->node_index];

      if (grp >= 0)
        kernel_color (grp, dark, fill);
      else
        fill->alpha = 0.35;   /* computed by no launch of the dump: inputs, outputs, views */
    }
  else if (self->show_fusion && self->node_kernel != NULL && box->node_index >= 0)
    {
      int k = self->node_kernel[box->node_index];

      if (k >= 0)
        kernel_color (k, dark, fill);
      else
        fill->alpha = 0.35;   /* computed by no kernel: inputs, outputs, views folded away */
    }
}

/* The timing overlay's legend, top left: the scale from 0 to the slowest kernel. */
static void
draw_heat_legend (FxwGraphCanvas *self, cairo_t *cr, PangoLayout *pl, gboolean dark, const GdkRGBA *fg,
                  const GdkRGBA *bg)
{
  g_autofree char *title = NULL;
  const double x = 8, y = 8, w = 220, h = 46;

  fxw_viewers_rounded_rect (cr, x, y, w, h, 6);
  cairo_set_source_rgba (cr, bg->red, bg->green, bg->blue, 0.92);
  cairo_fill_preserve (cr);
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.4);
  cairo_set_line_width (cr, 1);
  cairo_stroke (cr);
  for (int i = 0; i < 20; i++)
    {
      GdkRGBA c;

      heat_color (i / 19.0, dark, &c);
      gdk_cairo_set_source_rgba (cr, &c);
      cairo_rectangle (cr, x + 8 + i * (w - 16) / 20.0, y + 24, (w - 16) / 20.0 + 0.5, 12);
      cairo_fill (cr);
    }
  gdk_cairo_set_source_rgba (cr, fg);
  if (self->max_kernel_ms > 0)
    /* translators: the timing overlay's legend: the scale of kernel times, up to the slowest kernel's */
    title = g_strdup_printf (_("Kernel time: 0 – %.3f ms"), self->max_kernel_ms);
  else
    title = g_strdup (_("No kernel times: run the graph (Run & Compare)"));
  draw_text (cr, pl, title, x + 8, y + 4, w - 16, TRUE);
}

static gboolean
is_dark (void)
{
  return adw_style_manager_get_dark (adw_style_manager_get_default ());
}

static void
draw_text (cairo_t *cr, PangoLayout *pl, const char *text, double x, double y, double max_w, gboolean bold)
{
  PangoFontDescription *fd = pango_font_description_from_string (bold ? "Sans Bold 9" : "Monospace 8");

  pango_layout_set_font_description (pl, fd);
  pango_font_description_free (fd);
  pango_layout_set_text (pl, text, -1);
  pango_layout_set_width (pl, (int) (max_w * PANGO_SCALE));
  pango_layout_set_ellipsize (pl, PANGO_ELLIPSIZE_END);
  cairo_move_to (cr, x, y);
  pango_cairo_show_layout (cr, pl);
}

/* An edge label centred on (x, y), where dot reserved its room. */
static void
draw_text_centered (cairo_t *cr, PangoLayout *pl, const char *text, double x, double y)
{
  PangoFontDescription *fd = pango_font_description_from_string ("Monospace 8");
  int tw, th;

  pango_layout_set_font_description (pl, fd);
  pango_font_description_free (fd);
  pango_layout_set_width (pl, -1);
  pango_layout_set_ellipsize (pl, PANGO_ELLIPSIZE_NONE);
  pango_layout_set_text (pl, text, -1);
  pango_layout_get_pixel_size (pl, &tw, &th);
  cairo_move_to (cr, x - tw / 2.0, y - th / 2.0);
  pango_cairo_show_layout (cr, pl);
}

static void
draw_arrow (cairo_t *cr, const CanvasEdge *edge)
{
  double x1 = edge->pts[2 * (edge->n_pts - 2)], y1 = edge->pts[2 * (edge->n_pts - 2) + 1];
  double x2 = edge->pts[2 * (edge->n_pts - 1)], y2 = edge->pts[2 * (edge->n_pts - 1) + 1];
  double a = atan2 (y2 - y1, x2 - x1);

  cairo_move_to (cr, x2, y2);
  cairo_line_to (cr, x2 - 8 * cos (a - 0.4), y2 - 8 * sin (a - 0.4));
  cairo_line_to (cr, x2 - 8 * cos (a + 0.4), y2 - 8 * sin (a + 0.4));
  cairo_close_path (cr);
  cairo_fill (cr);
}

#define LEGEND_MAX_ROWS 14

/* The overlay's legend, top left in widget coordinates: one swatch per kernel that covers a node of this graph. */
/* The kernels of the fusion legend: how many distinct ones colour a node of the graph. */
static guint
legend_kernels_used (FxwGraphCanvas *self)
{
  guint n_kernels = self->kernels ? g_list_model_get_n_items (self->kernels) : 0, n_used = 0;
  g_autofree gboolean *used = g_new0 (gboolean, n_kernels + 1);

  for (guint i = 0; self->graph && self->node_kernel && i < fxw_graph_get_n_nodes (self->graph); i++)
    if (self->node_kernel[i] >= 0 && (guint) self->node_kernel[i] < n_kernels && !used[self->node_kernel[i]])
      {
        used[self->node_kernel[i]] = TRUE;
        n_used++;
      }
  return n_used;
}

/* Where the fusion legend (top left) ends, 0 when none is drawn: Fit keeps the nodes below it. */
static double
legend_bottom (FxwGraphCanvas *self)
{
  guint n_used;

  if (!(self->show_fusion && !self->layout_has_groups && self->node_kernel != NULL) || self->show_heat)
    return 0;
  n_used = legend_kernels_used (self);
  return 8 + 10 + (MIN (n_used, LEGEND_MAX_ROWS) + 1 + (n_used > LEGEND_MAX_ROWS)) * 18;
}

static void
draw_legend (FxwGraphCanvas *self, cairo_t *cr, PangoLayout *pl, gboolean dark, const GdkRGBA *fg, const GdkRGBA *bg)
{
  guint n_kernels = g_list_model_get_n_items (self->kernels);
  g_autofree gboolean *used = g_new0 (gboolean, n_kernels);
  guint n_used = 0, rows, row = 0;
  double x = 8, y = 8, width = 300;

  for (guint i = 0; i < fxw_graph_get_n_nodes (self->graph); i++)
    if (self->node_kernel[i] >= 0 && !used[self->node_kernel[i]])
      {
        used[self->node_kernel[i]] = TRUE;
        n_used++;
      }
  rows = MIN (n_used, LEGEND_MAX_ROWS) + 1 + (n_used > LEGEND_MAX_ROWS);
  fxw_viewers_rounded_rect (cr, x, y, width, 10 + rows * 18, 6);
  cairo_set_source_rgba (cr, bg->red, bg->green, bg->blue, 0.9);
  cairo_fill_preserve (cr);
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.4);
  cairo_set_line_width (cr, 1);
  cairo_stroke (cr);
  gdk_cairo_set_source_rgba (cr, fg);
  {
    /* translators: the title of the fusion overlay's legend in the Graph view */
    g_autofree char *title = g_strdup_printf (ngettext ("%u kernel", "%u kernels", n_used), n_used);
    draw_text (cr, pl, n_used ? title : _("No kernel covers a node of this graph"), x + 8, y + 5, width - 16, TRUE);
  }
  for (guint k = 0; k < n_kernels && row < LEGEND_MAX_ROWS; k++)
    {
      g_autoptr(FxwKernel) kernel = NULL;
      GdkRGBA swatch;
      double ry = y + 5 + (row + 1) * 18;

      if (!used[k])
        continue;
      kernel = g_list_model_get_item (self->kernels, k);
      kernel_color ((int) k, dark, &swatch);
      fxw_viewers_rounded_rect (cr, x + 8, ry + 2, 14, 12, 2);
      gdk_cairo_set_source_rgba (cr, &swatch);
      cairo_fill (cr);
      gdk_cairo_set_source_rgba (cr, fg);
      draw_text (cr, pl, fxw_kernel_get_name (kernel), x + 28, ry + 1, width - 36, FALSE);
      row++;
    }
  if (n_used > LEGEND_MAX_ROWS)
    {
      /* translators: the legend lists this many kernels less than there are */
      g_autofree char *more = g_strdup_printf (_("… and %u more"), n_used - LEGEND_MAX_ROWS);
      draw_text (cr, pl, more, x + 28, y + 5 + (row + 1) * 18, width - 36, FALSE);
    }
}

/* For each box, whether it shows a node of the selection's highlight set (a collapsed module does when one of its
   nodes is); *n_out: how many do. */
static gboolean *
highlighted_boxes (FxwGraphCanvas *self, guint *n_out)
{
  gboolean *out = g_new0 (gboolean, MAX (self->layout->boxes->len, 1));
  guint n = 0;

  for (guint i = 0; self->graph != NULL && i < fxw_graph_get_n_nodes (self->graph); i++)
    {
      FxwNode *node = fxw_graph_get_node (self->graph, i);
      gpointer v;

      if (!fxw_node_get_highlighted (node)
          || (v = g_hash_table_lookup (self->layout->node_box, GUINT_TO_POINTER (i))) == NULL)
        continue;
      if (!out[GPOINTER_TO_UINT (v) - 1])
        n++;
      out[GPOINTER_TO_UINT (v) - 1] = TRUE;
    }
  if (n_out != NULL)
    *n_out = n;
  return out;
}

/* Draws the canvas as it stands (zoom, offset, overlays) onto @cr, a surface of w × h: the widget's snapshot and
   the SVG/PNG export share it, so an export shows what the canvas does. */
/* The minimap: bottom right, above the bottom toolbar, when the graph does not fit the view. The layout is drawn
   once into an image (150k boxes take tens of ms), then each frame adds the visible rectangle. A click on it centres
   the view there (fxw_graph_canvas_click). */
#define MINIMAP_W 180.0
#define MINIMAP_H 140.0

static void
draw_minimap (FxwGraphCanvas *self, cairo_t *cr, double w, double h, gboolean dark, const GdkRGBA *fg,
              const GdkRGBA *bg)
{
  const CanvasLayout *L = self->layout;
  double lw, lh, scale, mw, mh, vx0, vy0;

  self->minimap_shown = FALSE;
  if (L == NULL || L->width <= 0 || L->height <= 0
      || (L->width * self->zoom <= w && L->height * self->zoom <= h - FIT_TOP - FIT_BOTTOM)
      || w < 3 * MINIMAP_W || h < FIT_BOTTOM + MINIMAP_H + 40)
    return;
  lw = L->width;
  lh = L->height;
  scale = MIN (MINIMAP_W / lw, MINIMAP_H / lh);
  mw = MAX (lw * scale, 24);
  mh = MAX (lh * scale, 24);
  if (self->minimap == NULL || self->minimap_layout != L)
    {
      cairo_t *mc;

      g_clear_pointer (&self->minimap, cairo_surface_destroy);
      self->minimap = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) ceil (mw), (int) ceil (mh));
      self->minimap_layout = L;
      mc = cairo_create (self->minimap);
      cairo_set_source_rgba (mc, fg->red, fg->green, fg->blue, dark ? 0.55 : 0.45);
      for (guint i = 0; i < L->boxes->len; i++)
        {
          const CanvasBox *box = &g_array_index (L->boxes, CanvasBox, i);

          cairo_rectangle (mc, box->x * scale, box->y * scale, MAX (box->w * scale, 1), MAX (box->h * scale, 1));
        }
      cairo_fill (mc);
      cairo_destroy (mc);
    }
  self->mm_scale = scale;
  self->mm_x = w - mw - 12;
  self->mm_y = h - FIT_BOTTOM - mh - 8;
  self->minimap_shown = TRUE;
  cairo_save (cr);
  cairo_identity_matrix (cr);
  fxw_viewers_rounded_rect (cr, self->mm_x - 4, self->mm_y - 4, mw + 8, mh + 8, 6);
  cairo_set_source_rgba (cr, bg->red, bg->green, bg->blue, 0.92);
  cairo_fill_preserve (cr);
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.35);
  cairo_set_line_width (cr, 1);
  cairo_stroke (cr);
  cairo_set_source_surface (cr, self->minimap, self->mm_x, self->mm_y);
  cairo_paint (cr);
  /* what the view shows, in graph coordinates, on the minimap */
  vx0 = -self->off_x / self->zoom;
  vy0 = -self->off_y / self->zoom;
  cairo_rectangle (cr, self->mm_x + MAX (vx0, 0) * scale, self->mm_y + MAX (vy0, 0) * scale,
                   MIN (w / self->zoom, lw - MAX (vx0, 0)) * scale, MIN (h / self->zoom, lh - MAX (vy0, 0)) * scale);
  cairo_set_source_rgba (cr, 0.21, 0.52, 0.89, 0.25);
  cairo_fill_preserve (cr);
  cairo_set_source_rgba (cr, 0.21, 0.52, 0.89, 0.9);
  cairo_set_line_width (cr, 1.5);
  cairo_stroke (cr);
  cairo_restore (cr);
}

/* A point of the minimap in widget coordinates: the graph point it shows (FALSE: not on the minimap). */
static gboolean
minimap_point (FxwGraphCanvas *self, double x, double y, double *gx, double *gy)
{
  if (!self->minimap_shown || self->layout == NULL || self->minimap == NULL || x < self->mm_x || y < self->mm_y
      || x > self->mm_x + cairo_image_surface_get_width (self->minimap)
      || y > self->mm_y + cairo_image_surface_get_height (self->minimap))
    return FALSE;
  /* the panel is at least 24 px each way: a point beside a thin graph is its nearest edge */
  *gx = CLAMP ((x - self->mm_x) / self->mm_scale, 0, self->layout->width);
  *gy = CLAMP ((y - self->mm_y) / self->mm_scale, 0, self->layout->height);
  return TRUE;
}

static void
draw_canvas (FxwGraphCanvas *self, cairo_t *cr, double w, double h)
{
  gboolean dark = is_dark ();
  GdkRGBA fg, bg;
  PangoLayout *pl;
  double vx0, vy0, vx1, vy1;   /* visible rectangle in graph coordinates */
  FxwNode *selected = shared_selection (self) ? fxw_selection_get_node (shared_selection (self)) : NULL;
  int selected_box = box_for_node (self, selected);
  gboolean any_highlight = shared_selection (self) && fxw_selection_get_n_highlighted (shared_selection (self)) > 0;
  g_autofree gboolean *box_highlighted = NULL;

  gdk_rgba_parse (&bg, dark ? "#1e1e1e" : "#fafafa");
  gdk_rgba_parse (&fg, dark ? "#e0e0e0" : "#2e3436");
  gdk_cairo_set_source_rgba (cr, &bg);
  cairo_paint (cr);
  pl = pango_cairo_create_layout (cr);

  if (self->layout == NULL)
    {
      const char *msg = self->busy ? _("Laying out the graph…")
                                   : self->graph ? "" : _("No graph selected");
      gdk_cairo_set_source_rgba (cr, &fg);
      draw_text (cr, pl, msg, w / 2 - 100, h / 2 - 10, 240, TRUE);
      goto out;
    }

  if (any_highlight)
    box_highlighted = highlighted_boxes (self, NULL);
  cairo_translate (cr, self->off_x, self->off_y);
  cairo_scale (cr, self->zoom, self->zoom);
  vx0 = -self->off_x / self->zoom;
  vy0 = -self->off_y / self->zoom;
  vx1 = vx0 + w / self->zoom;
  vy1 = vy0 + h / self->zoom;

  /* Module clusters, outermost first so inner ones paint over them. */
  for (guint i = 0; i < self->layout->clusters->len; i++)
    {
      CanvasCluster *c = &g_array_index (self->layout->clusters, CanvasCluster, i);
      double shade = dark ? 0.16 + 0.04 * (c->depth % 4) : 0.95 - 0.035 * (c->depth % 4);

      if (c->x > vx1 || c->y > vy1 || c->x + c->w < vx0 || c->y + c->h < vy0)
        continue;
      if (c->fusion_group >= 0)
        {
          /* A fusion group: a rounded box in its group's colour, labelled with the kernel that computes it. */
          GdkRGBA tint;

          kernel_color (c->fusion_group, dark, &tint);
          fxw_viewers_rounded_rect (cr, c->x, c->y, c->w, c->h, 10);
          cairo_set_source_rgba (cr, tint.red, tint.green, tint.blue, 0.22);
          cairo_fill_preserve (cr);
          gdk_cairo_set_source_rgba (cr, &tint);
          cairo_set_line_width (cr, 2.0 / MAX (self->zoom, 0.5));
          cairo_stroke (cr);
          if (self->zoom > 0.3)
            {
              gdk_cairo_set_source_rgba (cr, &fg);
              draw_text (cr, pl, c->label, c->x + 8, c->y + 3, c->w - 16, TRUE);
            }
          continue;
        }
      fxw_viewers_rounded_rect (cr, c->x, c->y, c->w, c->h, 6);
      cairo_set_source_rgb (cr, shade, shade, dark ? shade + 0.03 : shade + 0.02);
      cairo_fill_preserve (cr);
      cairo_set_source_rgba (cr, 0.5, 0.55, 0.65, 0.8);
      cairo_set_line_width (cr, 1.0 / MAX (self->zoom, 0.5));
      cairo_stroke (cr);
      if (self->zoom > 0.3)
        {
          gdk_cairo_set_source_rgba (cr, &fg);
          /* translators: the ▾ marks a module cluster that a click on its title collapses */
          {
            g_autofree char *title = g_strdup_printf ("▾ %s", c->label);
            draw_text (cr, pl, title, c->x + 6, c->y + 2, c->w - 12, TRUE);
          }
        }
    }

  /* Edges. */
  cairo_set_line_width (cr, 1.2 / MAX (self->zoom, 0.5));
  for (guint i = 0; i < self->layout->edges->len; i++)
    {
      CanvasEdge *e = &g_array_index (self->layout->edges, CanvasEdge, i);
      CanvasBox *a = &g_array_index (self->layout->boxes, CanvasBox, e->from);
      CanvasBox *b = &g_array_index (self->layout->boxes, CanvasBox, e->to);
      gboolean sel = e->from == selected_box || e->to == selected_box;

      if (e->n_pts < 2)
        continue;
      if (MAX (a->x + a->w, b->x + b->w) < vx0 || MIN (a->x, b->x) > vx1
          || MAX (a->y + a->h, b->y + b->h) < vy0 || MIN (a->y, b->y) > vy1)
        continue;
      if (sel)
        cairo_set_source_rgb (cr, 0.21, 0.52, 0.89);
      else
        cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.55);
      cairo_move_to (cr, e->pts[0], e->pts[1]);
      for (int p = 1; p + 2 < e->n_pts; p += 3)
        cairo_curve_to (cr, e->pts[2 * p], e->pts[2 * p + 1], e->pts[2 * p + 2], e->pts[2 * p + 3],
                        e->pts[2 * p + 4], e->pts[2 * p + 5]);
      cairo_stroke (cr);
      draw_arrow (cr, e);
      if (e->has_label && self->zoom > 0.6)
        {
          cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.8);
          if (e->label_centered)
            draw_text_centered (cr, pl, e->label, e->lx, e->ly);
          else
            draw_text (cr, pl, e->label, e->lx, e->ly - 7, 120, FALSE);
        }
    }

  /* Boxes. */
  for (guint i = 0; i < self->layout->boxes->len; i++)
    {
      CanvasBox *box = &g_array_index (self->layout->boxes, CanvasBox, i);
      GdkRGBA fill;
      gboolean highlighted = FALSE;

      if (box->x > vx1 || box->y > vy1 || box->x + box->w < vx0 || box->y + box->h < vy0)
        continue;
      if (box_highlighted != NULL)
        highlighted = box_highlighted[i];
      box_fill (self, box, dark, &fill);
      if (highlighted)
        gdk_rgba_parse (&fill, dark ? "#8a6a00" : "#ffd866");
      else if (any_highlight)
        fill.alpha = 0.45;
      fxw_viewers_rounded_rect (cr, box->x, box->y, box->w, box->h, box->node_index < 0 ? 8 : 4);
      if (box->is_stub)
        fill.alpha *= 0.6;
      gdk_cairo_set_source_rgba (cr, &fill);
      cairo_fill_preserve (cr);
      if ((int) i == selected_box
          || (box->is_stub && selected != NULL && box->node_index == (int) fxw_node_get_index (selected)))
        {
          cairo_set_source_rgb (cr, 0.21, 0.52, 0.89);
          cairo_set_line_width (cr, 3.0 / MAX (self->zoom, 0.5));
        }
      else if (highlighted)
        {
          /* The nodes of the selected kernel: a strong outline besides the fill, visible in any overlay. */
          cairo_set_source_rgb (cr, 0.85, 0.45, 0.0);
          cairo_set_line_width (cr, 2.5 / MAX (self->zoom, 0.5));
        }
      else
        {
          cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, (int) i == self->hover_box ? 0.9 : 0.45);
          cairo_set_line_width (cr, (box->node_index < 0 ? 2.0 : 1.0) / MAX (self->zoom, 0.5));
        }
      cairo_stroke (cr);
      if (self->zoom > 0.3)
        {
          g_autofree char *sub = NULL;

          gdk_cairo_set_source_rgba (cr, &fg);
          draw_text (cr, pl, box->title, box->x + 6, box->y + 4, box->w - 12, TRUE);
          if (box->node_index < 0)
            /* translators: a collapsed module box: its class and how many nodes it holds */
            sub = g_strdup_printf (ngettext ("▸ %s, %u node", "▸ %s, %u nodes", box->n_members),
                                   box->subtitle, box->n_members);
          if (!box->is_stub)
            draw_text (cr, pl, sub ? sub : box->subtitle, box->x + 6, box->y + 21, box->w - 12, FALSE);
        }
    }

  if (self->show_heat && self->node_kernel != NULL)
    {
      cairo_identity_matrix (cr);
      draw_heat_legend (self, cr, pl, dark, &fg, &bg);
    }
  else if (self->show_fusion && !self->layout_has_groups && self->node_kernel != NULL)
    {
      cairo_identity_matrix (cr);
      draw_legend (self, cr, pl, dark, &fg, &bg);
    }
  if (self->show_fusion && fxw_graph_canvas_get_fusion_note (self) != NULL)
    {
      /* Bottom left, above the view's toolbar, clear of the legend. */
      const char *note = fxw_graph_canvas_get_fusion_note (self);
      double nw = MIN (420, w - 16), ny;
      PangoFontDescription *fd = pango_font_description_from_string ("Sans 9");
      int text_w, text_h;

      cairo_identity_matrix (cr);
      pango_layout_set_font_description (pl, fd);
      pango_font_description_free (fd);
      pango_layout_set_ellipsize (pl, PANGO_ELLIPSIZE_NONE);
      pango_layout_set_wrap (pl, PANGO_WRAP_WORD);
      pango_layout_set_width (pl, (int) ((nw - 16) * PANGO_SCALE));
      pango_layout_set_text (pl, note, -1);
      pango_layout_get_pixel_size (pl, &text_w, &text_h);
      ny = MAX (8, h - 72 - (text_h + 10));
      fxw_viewers_rounded_rect (cr, 8, ny, nw, text_h + 10, 6);
      cairo_set_source_rgba (cr, bg.red, bg.green, bg.blue, 0.92);
      cairo_fill_preserve (cr);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.4);
      cairo_set_line_width (cr, 1);
      cairo_stroke (cr);
      gdk_cairo_set_source_rgba (cr, &fg);
      cairo_move_to (cr, 16, ny + 5);
      pango_cairo_show_layout (cr, pl);
    }

  draw_minimap (self, cr, w, h, dark, &fg, &bg);

out:
  g_object_unref (pl);
}

static void
fxw_graph_canvas_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  FxwGraphCanvas *self = FXW_GRAPH_CANVAS (widget);
  double w = gtk_widget_get_width (widget);
  double h = gtk_widget_get_height (widget);
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  GdkRGBA bg;

  draw_canvas (self, cr, w, h);
  cairo_destroy (cr);

  gdk_rgba_parse (&bg, is_dark () ? "#1e1e1e" : "#fafafa");
  if (self->busy && self->layout != NULL)
    {
      GdkRGBA veil = { bg.red, bg.green, bg.blue, 0.6 };
      gtk_snapshot_append_color (snapshot, &veil, &GRAPHENE_RECT_INIT (0, 0, w, 24));
    }
}

/* Whether widget point (x, y) lies in the layout's rectangle (rx, ry, rw, rh). */
static gboolean
hit (FxwGraphCanvas *self, double x, double y, double rx, double ry, double rw, double rh)
{
  double gx = (x - self->off_x) / self->zoom;
  double gy = (y - self->off_y) / self->zoom;

  return gx >= rx && gx <= rx + rw && gy >= ry && gy <= ry + rh;
}

/* Returns the box under widget point (x, y), or -1. */
static int
box_at (FxwGraphCanvas *self, double x, double y)
{
  for (guint i = 0; self->layout != NULL && i < self->layout->boxes->len; i++)
    {
      CanvasBox *box = &g_array_index (self->layout->boxes, CanvasBox, i);

      if (hit (self, x, y, box->x, box->y, box->w, box->h))
        return (int) i;
    }
  return -1;
}

/* Returns the innermost cluster whose title strip is under (x, y), or -1. */
static int
cluster_title_at (FxwGraphCanvas *self, double x, double y)
{
  int found = -1;

  for (guint i = 0; self->layout != NULL && i < self->layout->clusters->len; i++)
    {
      CanvasCluster *c = &g_array_index (self->layout->clusters, CanvasCluster, i);

      if (c->module != NULL && hit (self, x, y, c->x, c->y, c->w, CLUSTER_LABEL_H))
        found = (int) i;
    }
  return found;
}

void
fxw_graph_canvas_click (FxwGraphCanvas *self, double x, double y, int n_press)
{
  int b;
  double gx, gy;

  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  /* On the minimap: the view moves there. */
  if (minimap_point (self, x, y, &gx, &gy))
    {
      self->off_x = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0 - gx * self->zoom;
      self->off_y = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0 - gy * self->zoom;
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return;
    }
  b = box_at (self, x, y);

  if (b >= 0)
    {
      CanvasBox *box = &g_array_index (self->layout->boxes, CanvasBox, b);

      if (box->node_index >= 0 && shared_selection (self) != NULL)
        fxw_selection_set_node (shared_selection (self), fxw_graph_get_node (self->graph, box->node_index));
      else if (box->node_index < 0)
        fxw_graph_canvas_set_collapsed (self, box->module, FALSE);
      return;
    }
  b = cluster_title_at (self, x, y);
  if (b >= 0)
    fxw_graph_canvas_set_collapsed (self, g_array_index (self->layout->clusters, CanvasCluster, b).module, TRUE);
}

static void
click_released_cb (GtkGestureClick *gesture, int n_press, double x, double y, FxwGraphCanvas *self)
{
  double ox, oy;

  /* A drag that moved the view is a pan, not a click. */
  if (gtk_gesture_drag_get_offset (g_object_get_data (G_OBJECT (self), "drag"), &ox, &oy)
      && (fabs (ox) > 3 || fabs (oy) > 3))
    return;
  gtk_widget_grab_focus (GTK_WIDGET (self));
  fxw_graph_canvas_click (self, x, y, n_press);
}

static void
drag_begin_cb (GtkGestureDrag *gesture, double x, double y, FxwGraphCanvas *self)
{
  self->drag_off_x = self->off_x;
  self->drag_off_y = self->off_y;
}

static void
drag_update_cb (GtkGestureDrag *gesture, double dx, double dy, FxwGraphCanvas *self)
{
  self->off_x = self->drag_off_x + dx;
  self->off_y = self->drag_off_y + dy;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
zoom_at (FxwGraphCanvas *self, double factor, double x, double y)
{
  double z = CLAMP (self->zoom * factor, MIN_ZOOM, MAX_ZOOM);

  self->off_x = x - (x - self->off_x) * z / self->zoom;
  self->off_y = y - (y - self->off_y) * z / self->zoom;
  self->zoom = z;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gboolean
scroll_cb (GtkEventControllerScroll *controller, double dx, double dy, FxwGraphCanvas *self)
{
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));

  if (mods & GDK_CONTROL_MASK)
    {
      double x = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
      double y = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;
      GdkEvent *event = gtk_event_controller_get_current_event (GTK_EVENT_CONTROLLER (controller));
      double ex, ey;

      if (event != NULL && gdk_event_get_position (event, &ex, &ey))
        {
          graphene_point_t p;
          GtkNative *native = gtk_widget_get_native (GTK_WIDGET (self));
          double nx, ny;

          gtk_native_get_surface_transform (native, &nx, &ny);
          if (gtk_widget_compute_point (GTK_WIDGET (native), GTK_WIDGET (self),
                                        &GRAPHENE_POINT_INIT (ex - nx, ey - ny), &p))
            {
              x = p.x;
              y = p.y;
            }
        }
      zoom_at (self, dy < 0 ? 1.15 : 1 / 1.15, x, y);
    }
  else
    fxw_graph_canvas_pan (self, -dx * 40, -dy * 40);
  return TRUE;
}

static void
motion_cb (GtkEventControllerMotion *controller, double x, double y, FxwGraphCanvas *self)
{
  int b = box_at (self, x, y);

  if (b != self->hover_box)
    {
      self->hover_box = b;
      gtk_widget_trigger_tooltip_query (GTK_WIDGET (self));
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

/* The tooltip of box b as Pango markup: a node's summary and the kernels computing it, or a collapsed module. */
static char *
box_tooltip_markup (FxwGraphCanvas *self, int b)
{
  CanvasBox *box = &g_array_index (self->layout->boxes, CanvasBox, b);

  if (box->node_index >= 0)
    {
      FxwNode *node = fxw_graph_get_node (self->graph, box->node_index);
      g_autofree char *summary = fxw_node_dup_summary (node);
      GString *markup = g_string_new (summary);

      /* Which kernel the node ended up in. */
      for (guint k = 0; self->kernels != NULL && k < g_list_model_get_n_items (self->kernels); k++)
        {
          g_autoptr(FxwKernel) kernel = g_list_model_get_item (self->kernels, k);

          if (fxw_kernel_covers (kernel, node, self->kernels_by_name))
            {
              g_autofree char *esc = g_markup_escape_text (fxw_kernel_get_name (kernel), -1);

              /* translators: tooltip line of a node in the Graph view; the kernel's name follows */
              g_string_append_printf (markup, "\n%s <b>%s</b>", _("Kernel:"), esc);
            }
        }
      /* Which fusion groups of ir_post_fusion.txt compute it (more than one when a launch recomputes it). */
      for (guint gi = 0; self->node_group != NULL && gi < g_list_model_get_n_items (self->groups); gi++)
        {
          g_autoptr(FxwFusionGroup) group = g_list_model_get_item (self->groups, gi);
          const char * const *names = fxw_fusion_group_get_post_nodes (group);

          if (g_strv_contains (names, fxw_node_get_name (node)))
            {
              g_autofree char *esc = g_markup_escape_text (fxw_fusion_group_get_name (group), -1);

              /* translators: tooltip line of a node in the Graph view; a scheduler node name ("op0_op1_op3") follows */
              g_string_append_printf (markup, "\n%s <b>%s</b>", _("Fusion group:"), esc);
            }
        }
      return g_string_free (markup, FALSE);
    }
  {
    /* translators: tooltip of a collapsed module in the Graph view */
    g_autofree char *text = g_strdup_printf (ngettext ("%s (%s): %u node. Click to expand.",
                                                       "%s (%s): %u nodes. Click to expand.", box->n_members),
                                             box->module, box->subtitle, box->n_members);
    return g_markup_escape_text (text, -1);
  }
}

static gboolean
fxw_graph_canvas_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip)
{
  FxwGraphCanvas *self = FXW_GRAPH_CANVAS (widget);
  int b = box_at (self, x, y);
  g_autofree char *markup = NULL;

  if (b < 0)
    return FALSE;
  markup = box_tooltip_markup (self, b);
  gtk_tooltip_set_markup (tooltip, markup);
  return TRUE;
}

static void
fxw_graph_canvas_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  FxwGraphCanvas *self = FXW_GRAPH_CANVAS (widget);

  if (self->fit_pending && self->layout != NULL)
    {
      self->fit_pending = FALSE;
      fit_readable (self);
    }
  else if (self->last_width > 0 && self->last_height > 0)
    {
      /* The side pane grows and shrinks with what it shows: keep the middle of the view where it was, so a node
         just centred (a search, a jump from another view) stays in the middle. */
      self->off_x += (width - self->last_width) / 2.0;
      self->off_y += (height - self->last_height) / 2.0;
    }
  self->last_width = width;
  self->last_height = height;
  if (self->menu != NULL)
    gtk_popover_present (GTK_POPOVER (self->menu));
}

/* ---------------------------------------------------------------- context menu */

static void
copy_name_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwGraphCanvas *self = FXW_GRAPH_CANVAS (widget);
  FxwNode *node = shared_selection (self) ? fxw_selection_get_node (shared_selection (self)) : NULL;

  if (node != NULL)
    gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), fxw_node_get_name (node));
}

/* The menu's entries name the window's actions (win.view, win.run-compare) where the canvas has none of its own:
   they resolve up the widget tree, and the menu greys out what the window does not offer. */
static GMenuModel *
node_menu_model (FxwGraphCanvas *self, FxwNode *node)
{
  GMenu *menu = g_menu_new ();
  g_autoptr(GMenu) views = g_menu_new ();
  g_autoptr(GMenu) run = g_menu_new ();

  g_menu_append (menu, _("_Copy Name"), "canvas.copy-name");
  g_menu_append (views, _("Show _Source"), "win.view::code");
  if (self->node_kernel != NULL && self->node_kernel[fxw_node_get_index (node)] >= 0)
    g_menu_append (views, _("Show _Kernel"), "win.view::kernels");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (views));
  {
    g_autoptr(GMenuItem) upto = g_menu_item_new (_("Run _up to Here…"), NULL);

    /* the graph cut after this node, run like the whole graph (fxwb compare --upto) */
    g_menu_item_set_action_and_target_value (upto, "win.run-upto", g_variant_new_string (fxw_node_get_name (node)));
    g_menu_append_item (run, upto);
  }
  g_menu_append (run, _("_Run & Compare…"), "win.run-compare");
  g_menu_append_section (menu, NULL, G_MENU_MODEL (run));
  return G_MENU_MODEL (menu);
}

static gboolean
drop_menu_idle (gpointer data)
{
  g_autoptr(FxwGraphCanvas) self = data;

  if (self->menu != NULL && !gtk_widget_get_visible (GTK_WIDGET (self->menu)))
    g_clear_pointer ((GtkWidget **) &self->menu, gtk_widget_unparent);
  return G_SOURCE_REMOVE;
}

/* A closed menu leaves the canvas: GTK 4.8 trips over a hidden popover menu whose focus went to a widget since
   unrooted (a critical in gtk_widget_is_ancestor when the views change). After the item's action ran. */
static void
menu_closed_cb (FxwGraphCanvas *self)
{
  g_idle_add (drop_menu_idle, g_object_ref (self));
}

gboolean
fxw_graph_canvas_popup_menu (FxwGraphCanvas *self, double x, double y)
{
  g_autoptr(GMenuModel) model = NULL;
  int b;
  CanvasBox *box;
  FxwNode *node;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), FALSE);
  b = box_at (self, x, y);
  if (b < 0 || shared_selection (self) == NULL)
    return FALSE;
  box = &g_array_index (self->layout->boxes, CanvasBox, b);
  if (box->node_index < 0)
    return FALSE;
  node = fxw_graph_get_node (self->graph, box->node_index);
  /* The menu acts on the selected node, as the other views see it. */
  fxw_selection_set_node (shared_selection (self), node);
  model = node_menu_model (self, node);
  if (self->menu == NULL)
    {
      self->menu = GTK_POPOVER_MENU (gtk_popover_menu_new_from_model (NULL));
      gtk_widget_set_parent (GTK_WIDGET (self->menu), GTK_WIDGET (self));
      gtk_popover_set_has_arrow (GTK_POPOVER (self->menu), FALSE);
      gtk_widget_set_halign (GTK_WIDGET (self->menu), GTK_ALIGN_START);
      g_signal_connect_swapped (self->menu, "closed", G_CALLBACK (menu_closed_cb), self);
    }
  gtk_popover_menu_set_menu_model (self->menu, model);
  gtk_popover_set_pointing_to (GTK_POPOVER (self->menu), &(GdkRectangle) { (int) x, (int) y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->menu));
  return TRUE;
}

GtkPopover *
fxw_graph_canvas_get_menu (FxwGraphCanvas *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), NULL);
  return GTK_POPOVER (self->menu);
}

static void
secondary_pressed_cb (GtkGestureClick *gesture, int n_press, double x, double y, FxwGraphCanvas *self)
{
  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (fxw_graph_canvas_popup_menu (self, x, y))
    gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

/* Shift+F10 and the Menu key: the menu of the selected node, at its box. */
static void
menu_key_action (GtkWidget *widget, const char *name, GVariant *param)
{
  FxwGraphCanvas *self = FXW_GRAPH_CANVAS (widget);
  int b = shared_selection (self) ? box_for_node (self, fxw_selection_get_node (shared_selection (self))) : -1;
  CanvasBox *box;

  if (b < 0)
    return;
  center_on_box (self, b);
  box = &g_array_index (self->layout->boxes, CanvasBox, b);
  fxw_graph_canvas_popup_menu (self, (box->x + box->w / 2) * self->zoom + self->off_x,
                               (box->y + box->h / 2) * self->zoom + self->off_y);
}

static void
zoom_in_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_graph_canvas_zoom (FXW_GRAPH_CANVAS (widget), 1.25);
}

static void
zoom_out_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_graph_canvas_zoom (FXW_GRAPH_CANVAS (widget), 0.8);
}

static void
zoom_fit_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_graph_canvas_fit (FXW_GRAPH_CANVAS (widget));
}

static void
expand_all_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_graph_canvas_expand_all (FXW_GRAPH_CANVAS (widget));
}

static void
collapse_all_action (GtkWidget *widget, const char *name, GVariant *param)
{
  fxw_graph_canvas_collapse_all (FXW_GRAPH_CANVAS (widget));
}

static void
fxw_graph_canvas_dispose (GObject *object)
{
  FxwGraphCanvas *self = FXW_GRAPH_CANVAS (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->graph);
  g_clear_object (&self->kernels);
  g_clear_object (&self->groups);
  g_clear_pointer ((GtkWidget **) &self->menu, gtk_widget_unparent);
  g_clear_pointer (&self->minimap, cairo_surface_destroy);
  G_OBJECT_CLASS (fxw_graph_canvas_parent_class)->dispose (object);
}

static void
fxw_graph_canvas_finalize (GObject *object)
{
  FxwGraphCanvas *self = FXW_GRAPH_CANVAS (object);

  g_clear_pointer (&self->minimap, cairo_surface_destroy);
  g_clear_pointer (&self->layout, canvas_layout_free);
  g_clear_pointer (&self->collapsed, g_hash_table_unref);
  g_clear_pointer (&self->node_kernel, g_free);
  g_clear_pointer (&self->node_group, g_free);
  G_OBJECT_CLASS (fxw_graph_canvas_parent_class)->finalize (object);
}

static void
fxw_graph_canvas_class_init (FxwGraphCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  FxwViewClass *view_class = FXW_VIEW_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fxw_graph_canvas_dispose;
  object_class->finalize = fxw_graph_canvas_finalize;
  view_class->graph_changed = graph_changed;
  view_class->node_changed = node_changed;
  view_class->highlight_changed = highlight_changed;
  widget_class->snapshot = fxw_graph_canvas_snapshot;
  widget_class->query_tooltip = fxw_graph_canvas_query_tooltip;
  widget_class->size_allocate = fxw_graph_canvas_size_allocate;

  /**
   * FxwGraphCanvas::layout-done:
   *
   * A layout finished and is on screen with the next frame.
   */
  g_signal_new ("layout-done", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_install_action (widget_class, "canvas.zoom-in", NULL, zoom_in_action);
  gtk_widget_class_install_action (widget_class, "canvas.zoom-out", NULL, zoom_out_action);
  gtk_widget_class_install_action (widget_class, "canvas.fit", NULL, zoom_fit_action);
  gtk_widget_class_install_action (widget_class, "canvas.expand-all", NULL, expand_all_action);
  gtk_widget_class_install_action (widget_class, "canvas.collapse-all", NULL, collapse_all_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, GDK_CONTROL_MASK, "canvas.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, GDK_CONTROL_MASK, "canvas.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, GDK_CONTROL_MASK, "canvas.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, GDK_CONTROL_MASK, "canvas.fit", NULL);
  gtk_widget_class_install_action (widget_class, "canvas.copy-name", NULL, copy_name_action);
  gtk_widget_class_install_action (widget_class, "canvas.menu", NULL, menu_key_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F10, GDK_SHIFT_MASK, "canvas.menu", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Menu, 0, "canvas.menu", NULL);
  gtk_widget_class_set_css_name (widget_class, "fxwgraphcanvas");
}

static void
fxw_graph_canvas_init (FxwGraphCanvas *self)
{
  GtkGesture *click = gtk_gesture_click_new ();
  GtkGesture *secondary = gtk_gesture_click_new ();
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  GtkEventController *motion = gtk_event_controller_motion_new ();

  self->collapsed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->collapse_threshold = 300;
  self->edge_labels = TRUE;
  self->zoom = 1.0;
  self->hover_box = -1;

  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);

  g_signal_connect (click, "released", G_CALLBACK (click_released_cb), self);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  g_object_set_data (G_OBJECT (self), "drag", drag);
  g_signal_connect (scroll, "scroll", G_CALLBACK (scroll_cb), self);
  g_signal_connect (motion, "motion", G_CALLBACK (motion_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (secondary), GDK_BUTTON_SECONDARY);
  g_signal_connect (secondary, "pressed", G_CALLBACK (secondary_pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (secondary));
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
}

gboolean
fxw_graph_canvas_get_busy (FxwGraphCanvas *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), FALSE);
  return self->busy;
}

guint
fxw_graph_canvas_get_n_boxes (FxwGraphCanvas *self)
{
  return self->layout ? self->layout->boxes->len : 0;
}

guint
fxw_graph_canvas_get_n_edges (FxwGraphCanvas *self)
{
  return self->layout ? self->layout->edges->len : 0;
}

guint
fxw_graph_canvas_get_n_clusters (FxwGraphCanvas *self)
{
  return self->layout ? self->layout->clusters->len : 0;
}

double
fxw_graph_canvas_get_layout_seconds (FxwGraphCanvas *self)
{
  return self->layout ? self->layout->seconds : 0.0;
}

void
fxw_graph_canvas_set_collapse_threshold (FxwGraphCanvas *self, guint n_nodes)
{
  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  self->collapse_threshold = n_nodes;
}

void
fxw_graph_canvas_set_edge_labels (FxwGraphCanvas *self, gboolean edge_labels)
{
  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  if (self->edge_labels == !!edge_labels)
    return;
  self->edge_labels = !!edge_labels;
  fxw_graph_canvas_relayout (self);
}

void
fxw_graph_canvas_set_collapsed (FxwGraphCanvas *self, const char *module_path, gboolean collapsed)
{
  gboolean changed;

  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  g_return_if_fail (module_path != NULL);

  if (collapsed)
    changed = g_hash_table_add (self->collapsed, g_strdup (module_path));
  else
    changed = g_hash_table_remove (self->collapsed, module_path);
  if (changed)
    fxw_graph_canvas_relayout (self);
}

void
fxw_graph_canvas_collapse_all (FxwGraphCanvas *self)
{
  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  if (self->graph == NULL)
    return;
  g_hash_table_remove_all (self->collapsed);
  for (guint i = 0; i < fxw_graph_get_n_nodes (self->graph); i++)
    {
      const fx_meta *meta = &fxw_node_get_node (fxw_graph_get_node (self->graph, i))->meta;

      if (meta->n_nn_module_stack > 0 && meta->nn_module_stack[0].path != NULL)
        g_hash_table_add (self->collapsed, g_strdup (meta->nn_module_stack[0].path));
    }
  self->fit_pending = TRUE;
  fxw_graph_canvas_relayout (self);
}

void
fxw_graph_canvas_expand_all (FxwGraphCanvas *self)
{
  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  g_hash_table_remove_all (self->collapsed);
  self->fit_pending = TRUE;
  fxw_graph_canvas_relayout (self);
}

void
fxw_graph_canvas_zoom (FxwGraphCanvas *self, double factor)
{
  double w, h, x, y;
  int b;

  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  w = gtk_widget_get_width (GTK_WIDGET (self));
  h = gtk_widget_get_height (GTK_WIDGET (self));
  x = w / 2.0;
  y = h / 2.0;
  /* Around the selected node when it is on screen, so it stays where the user is looking. */
  b = box_for_node (self, shared_selection (self) ? fxw_selection_get_node (shared_selection (self)) : NULL);
  if (b >= 0)
    {
      CanvasBox *box = &g_array_index (self->layout->boxes, CanvasBox, b);
      double cx = (box->x + box->w / 2) * self->zoom + self->off_x;
      double cy = (box->y + box->h / 2) * self->zoom + self->off_y;

      if (cx >= 0 && cy >= 0 && cx <= w && cy <= h)
        {
          x = cx;
          y = cy;
        }
    }
  zoom_at (self, factor, x, y);
}

void
fxw_graph_canvas_fit (FxwGraphCanvas *self)
{
  double top;
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));

  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  if (self->layout == NULL || w <= 1 || h <= 1)
    {
      self->fit_pending = TRUE;
      return;
    }
  /* Fit, but never blow a small graph up beyond 1:1 where text looks best; the graph view's floating toolbars
     (top right, bottom) and the overlay legend (top left) float over the canvas: keep the nodes between them. */
  top = MAX (FIT_TOP, legend_bottom (self) + 8);
  self->zoom = CLAMP (MIN ((w - 24) / MAX (self->layout->width, 1),
                           (h - top - FIT_BOTTOM) / MAX (self->layout->height, 1)),
                      MIN_ZOOM, 1.0);
  self->off_x = (w - self->layout->width * self->zoom) / 2;
  self->off_y = top + MAX (0, (h - top - FIT_BOTTOM - self->layout->height * self->zoom) / 2);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
fxw_graph_canvas_pan (FxwGraphCanvas *self, double dx, double dy)
{
  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  self->off_x += dx;
  self->off_y += dy;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
fxw_graph_canvas_get_zoom (FxwGraphCanvas *self)
{
  return self->zoom;
}

gboolean
fxw_graph_canvas_get_node_center (FxwGraphCanvas *self, const char *node_name, double *x, double *y)
{
  FxwNode *node;
  int b;
  CanvasBox *box;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), FALSE);
  if (self->graph == NULL || (node = fxw_graph_lookup (self->graph, node_name)) == NULL
      || (b = box_for_node (self, node)) < 0)
    return FALSE;
  box = &g_array_index (self->layout->boxes, CanvasBox, b);
  *x = (box->x + box->w / 2) * self->zoom + self->off_x;
  *y = (box->y + box->h / 2) * self->zoom + self->off_y;
  return TRUE;
}

void
fxw_graph_canvas_set_kernels (FxwGraphCanvas *self, GListModel *kernels, gboolean by_name)
{
  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));

  g_set_object (&self->kernels, kernels);
  self->kernels_by_name = by_name;
  update_fusion_map (self);
}

void
fxw_graph_canvas_set_show_fusion (FxwGraphCanvas *self, gboolean show)
{
  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));

  if (self->show_fusion == !!show)
    return;
  self->show_fusion = !!show;
  /* Groups are clusters of the layout: turning them on or off lays the graph out again. */
  if (self->node_group != NULL && self->groups_here)
    {
      self->fit_pending = TRUE;
      fxw_graph_canvas_relayout (self);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
fxw_graph_canvas_get_show_fusion (FxwGraphCanvas *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), FALSE);
  return self->show_fusion;
}

int
fxw_graph_canvas_get_node_kernel (FxwGraphCanvas *self, const char *node_name)
{
  FxwNode *node;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), -1);
  if (self->graph == NULL || self->node_kernel == NULL || (node = fxw_graph_lookup (self->graph, node_name)) == NULL)
    return -1;
  return self->node_kernel[fxw_node_get_index (node)];
}

guint
fxw_graph_canvas_get_n_fusion_groups (FxwGraphCanvas *self)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), 0);
  for (guint i = 0; self->node_kernel != NULL && i < fxw_graph_get_n_nodes (self->graph); i++)
    if (self->node_kernel[i] >= 0)
      g_hash_table_add (seen, GINT_TO_POINTER (self->node_kernel[i] + 1));
  return g_hash_table_size (seen);
}

char *
fxw_graph_canvas_dup_tooltip (FxwGraphCanvas *self, const char *node_name)
{
  double x, y;
  int b;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), NULL);
  if (!fxw_graph_canvas_get_node_center (self, node_name, &x, &y) || (b = box_at (self, x, y)) < 0)
    return NULL;
  return box_tooltip_markup (self, b);
}

void
fxw_graph_canvas_set_fusion_groups (FxwGraphCanvas *self, GListModel *groups, gboolean on_this_graph)
{
  gboolean was_active;

  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));

  was_active = fusion_clusters_active (self) || self->layout_has_groups;
  g_set_object (&self->groups, groups);
  self->groups_here = !!on_this_graph;
  update_group_map (self);
  if (was_active || fusion_clusters_active (self))
    {
      self->fit_pending = TRUE;
      fxw_graph_canvas_relayout (self);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

guint
fxw_graph_canvas_get_n_fusion_clusters (FxwGraphCanvas *self)
{
  guint n = 0;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), 0);
  for (guint i = 0; self->layout != NULL && i < self->layout->clusters->len; i++)
    n += g_array_index (self->layout->clusters, CanvasCluster, i).fusion_group >= 0;
  return n;
}

int
fxw_graph_canvas_get_fusion_cluster_members (FxwGraphCanvas *self, const char *group_name)
{
  int cluster = -1, n = 0;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), -1);
  for (guint i = 0; self->layout != NULL && i < self->layout->clusters->len && cluster < 0; i++)
    {
      CanvasCluster *c = &g_array_index (self->layout->clusters, CanvasCluster, i);
      g_autoptr(FxwFusionGroup) group = NULL;

      if (c->fusion_group < 0 || self->groups == NULL
          || (guint) c->fusion_group >= g_list_model_get_n_items (self->groups))
        continue;
      group = g_list_model_get_item (self->groups, (guint) c->fusion_group);
      if (g_strcmp0 (fxw_fusion_group_get_name (group), group_name) == 0)
        cluster = (int) i;
    }
  if (cluster < 0)
    return -1;
  for (guint b = 0; b < self->layout->boxes->len; b++)
    {
      CanvasBox *box = &g_array_index (self->layout->boxes, CanvasBox, b);

      n += box->cluster == cluster && !box->is_stub;
    }
  return n;
}

const char *
fxw_graph_canvas_get_fusion_note (FxwGraphCanvas *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), NULL);
  if (self->groups == NULL || g_list_model_get_n_items (self->groups) == 0 || self->graph == NULL)
    return NULL;
  if (!self->groups_here)
    return _("The fusion groups of ir_post_fusion.txt are drawn on the post-grad graph: select its stage "
             "(post_grad, or inductor_transformed of a debug folder) to see them as clusters.");
  if (self->node_group == NULL)
    return _("No node of this graph is named by the fusion groups of ir_post_fusion.txt.");
  return NULL;
}

guint
fxw_graph_canvas_get_n_highlighted_boxes (FxwGraphCanvas *self)
{
  g_autofree gboolean *marks = NULL;
  guint n = 0;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), 0);
  if (self->layout == NULL || shared_selection (self) == NULL || fxw_selection_get_n_highlighted (shared_selection (self)) == 0)
    return 0;
  marks = highlighted_boxes (self, &n);
  return n;
}

char *
fxw_graph_canvas_render_svg (const char *dot, size_t len, void *user_data)
{
  char *copy = NULL;
  Agraph_t *g;

  g_mutex_lock (&graphviz_lock);
  if (graphviz_context == NULL)
    graphviz_context = gvContext ();
  /* The dot text is the engine's fx_graph_dump_dot, every input string escaped; nothing runs a dot program. */
  g = agmemread (dot);
  if (g != NULL && gvLayout (graphviz_context, g, "dot") == 0)
    {
      char *data = NULL;
      unsigned int length = 0;

      if (gvRenderData (graphviz_context, g, "svg", &data, &length) == 0 && data != NULL)
        copy = g_strndup (data, length);
      gvFreeRenderData (data);
      gvFreeLayout (graphviz_context, g);
    }
  if (g != NULL)
    agclose (g);
  g_mutex_unlock (&graphviz_lock);
  return copy;
}

gboolean
fxw_graph_canvas_search (FxwGraphCanvas *self, const char *text, gboolean next)
{
  g_autofree char *needle = NULL;
  FxwNode *current;
  guint n, start;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), FALSE);
  g_return_val_if_fail (text != NULL, FALSE);

  if (self->graph == NULL || self->layout == NULL || shared_selection (self) == NULL || *text == '\0')
    return FALSE;
  needle = g_utf8_casefold (text, -1);
  n = fxw_graph_get_n_nodes (self->graph);
  current = fxw_selection_get_node (shared_selection (self));
  /* Typing keeps the current match while it still matches; Enter moves on to the next one. */
  start = current && fxw_selection_get_graph (shared_selection (self)) == self->graph
            ? fxw_node_get_index (current) + (next ? 1 : 0) : 0;
  for (guint k = 0; k < n; k++)
    {
      guint i = (start + k) % n;
      FxwNode *node = fxw_graph_get_node (self->graph, i);
      g_autofree char *name = g_utf8_casefold (fxw_node_get_name (node), -1);
      int b;

      if (strstr (name, needle) == NULL)
        continue;
      fxw_selection_set_node (shared_selection (self), node);
      b = box_for_node (self, node);
      if (b >= 0)
        {
          /* A search jumps: centre the match even when it was on screen, at a zoom where its name reads. */
          CanvasBox *box = &g_array_index (self->layout->boxes, CanvasBox, b);
          double w = gtk_widget_get_width (GTK_WIDGET (self));
          double h = gtk_widget_get_height (GTK_WIDGET (self));

          if (self->zoom < 0.6)
            self->zoom = 1.0;
          self->off_x = w / 2 - (box->x + box->w / 2) * self->zoom;
          self->off_y = h / 2 - (box->y + box->h / 2) * self->zoom;
          gtk_widget_queue_draw (GTK_WIDGET (self));
        }
      return TRUE;
    }
  return FALSE;
}

gboolean
fxw_graph_canvas_export (FxwGraphCanvas *self, const char *path, GError **error)
{
  const double margin = 16;
  double zoom = self->zoom, off_x = self->off_x, off_y = self->off_y;
  gboolean svg;
  cairo_surface_t *surface;
  cairo_t *cr;
  cairo_status_t status;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  if (self->layout == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED, _("The graph is not laid out yet"));
      return FALSE;
    }
  svg = g_str_has_suffix (path, ".svg") || g_str_has_suffix (path, ".SVG");
  /* The whole graph at 100 %, with the overlays the canvas shows; PNG stays within cairo's image size limit. */
  self->zoom = svg ? 1.0 : MIN (1.0, 32000.0 / (MAX (self->layout->width, self->layout->height) + 2 * margin));
  self->off_x = self->off_y = margin;
  {
    double w = ceil (self->layout->width * self->zoom + 2 * margin);
    double h = ceil (self->layout->height * self->zoom + 2 * margin);

    surface = svg ? cairo_svg_surface_create (path, w, h)
                  : cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) w, (int) h);
    cr = cairo_create (surface);
    draw_canvas (self, cr, w, h);
    cairo_destroy (cr);
  }
  self->zoom = zoom;
  self->off_x = off_x;
  self->off_y = off_y;
  if (svg)
    cairo_surface_finish (surface);
  status = svg ? cairo_surface_status (surface) : cairo_surface_write_to_png (surface, path);
  cairo_surface_destroy (surface);
  if (status != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not write %s: %s"), path,
                   cairo_status_to_string (status));
      return FALSE;
    }
  return TRUE;
}

void
fxw_graph_canvas_set_show_heat (FxwGraphCanvas *self, gboolean show)
{
  g_return_if_fail (FXW_IS_GRAPH_CANVAS (self));
  self->show_heat = show;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
fxw_graph_canvas_get_node_fill (FxwGraphCanvas *self, const char *node_name, GdkRGBA *fill)
{
  FxwNode *node;
  int b;

  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), FALSE);
  if (self->graph == NULL || (node = fxw_graph_lookup (self->graph, node_name)) == NULL
      || (b = box_for_node (self, node)) < 0)
    return FALSE;
  box_fill (self, &g_array_index (self->layout->boxes, CanvasBox, b), is_dark (), fill);
  return TRUE;
}

gboolean
fxw_graph_canvas_get_minimap (FxwGraphCanvas *self, double *x, double *y, double *w, double *h)
{
  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), FALSE);
  if (!self->minimap_shown || self->minimap == NULL)
    return FALSE;
  *x = self->mm_x;
  *y = self->mm_y;
  *w = cairo_image_surface_get_width (self->minimap);
  *h = cairo_image_surface_get_height (self->minimap);
  return TRUE;
}

double
fxw_graph_canvas_get_legend_bottom (FxwGraphCanvas *self)
{
  g_return_val_if_fail (FXW_IS_GRAPH_CANVAS (self), 0);
  return legend_bottom (self);
}
