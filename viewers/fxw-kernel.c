/* fxw-kernel.c: the Kernels and Compare views' items; matching a kernel's source node names to a graph's nodes. */
#define G_LOG_DOMAIN "fxw-kernel"

#include "fx-config.h"

#include <math.h>

#include "fxw-kernel.h"
#include "fxw-properties.h"

struct _FxwKernel
{
  GObject parent_instance;
  int ordinal;
  char *name, *kind, *device, *code, *aten;
  GStrv nodes;
  GHashTable *node_set;     /* the names of nodes, for lookups */
  double time_ms;
  gboolean marked;
};

enum { KERNEL_PROP_0, KERNEL_PROP_MARKED, KERNEL_N_PROPS };
static GParamSpec *kernel_properties[KERNEL_N_PROPS];
static const FxwPropertyAccess kernel_property_access[KERNEL_N_PROPS] = {
  [KERNEL_PROP_MARKED] = FXW_PROPERTY (fxw_kernel_get_marked, NULL),
};

G_DEFINE_FINAL_TYPE (FxwKernel, fxw_kernel, G_TYPE_OBJECT)

static void
fxw_kernel_finalize (GObject *object)
{
  FxwKernel *self = FXW_KERNEL (object);

  g_free (self->name);
  g_free (self->kind);
  g_free (self->device);
  g_free (self->code);
  g_free (self->aten);
  g_strfreev (self->nodes);
  g_hash_table_unref (self->node_set);
  G_OBJECT_CLASS (fxw_kernel_parent_class)->finalize (object);
}

static void
fxw_kernel_class_init (FxwKernelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = fxw_kernel_finalize;
  kernel_properties[KERNEL_PROP_MARKED] =
    g_param_spec_boolean ("marked", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  fxw_object_class_install_properties (object_class, KERNEL_N_PROPS, kernel_properties, kernel_property_access);
}

static void
fxw_kernel_init (FxwKernel *self)
{
  self->node_set = g_hash_table_new (g_str_hash, g_str_equal);
}

/* Splits a ", "-separated list, dropping empty entries. */
static GStrv
split_list (const char *text)
{
  g_auto(GStrv) parts = g_strsplit (text ? text : "", ",", -1);
  g_autoptr(GStrvBuilder) out = g_strv_builder_new ();

  for (guint i = 0; parts[i] != NULL; i++)
    {
      g_strstrip (parts[i]);
      if (*parts[i])
        g_strv_builder_add (out, parts[i]);
    }
  return g_strv_builder_end (out);
}

FxwKernel *
fxw_kernel_new (int ordinal, const char *name, const char *kind, const char *device, const char *code,
                const char *nodes, const char *aten, double time_ms)
{
  FxwKernel *self = g_object_new (FXW_TYPE_KERNEL, NULL);

  self->ordinal = ordinal;
  self->name = g_strdup (name ? name : "");
  self->kind = g_strdup (kind ? kind : "");
  self->device = g_strdup (device ? device : "");
  self->code = g_strdup (code ? code : "");
  self->aten = g_strdup (aten ? aten : "");
  self->time_ms = time_ms;
  /* Inductor writes an empty entry for a source node without a name (", gelu"): nothing to link. */
  self->nodes = split_list (nodes);
  for (guint i = 0; self->nodes[i] != NULL; i++)
    g_hash_table_add (self->node_set, self->nodes[i]);
  return self;
}

int
fxw_kernel_get_ordinal (FxwKernel *self)
{
  return self->ordinal;
}

const char *
fxw_kernel_get_name (FxwKernel *self)
{
  return self->name;
}

const char *
fxw_kernel_get_kind (FxwKernel *self)
{
  return self->kind;
}

const char *
fxw_kernel_get_device (FxwKernel *self)
{
  return self->device;
}

const char *
fxw_kernel_get_code (FxwKernel *self)
{
  return self->code;
}

const char *
fxw_kernel_get_aten (FxwKernel *self)
{
  return self->aten;
}

double
fxw_kernel_get_time_ms (FxwKernel *self)
{
  return self->time_ms;
}

const char * const *
fxw_kernel_get_nodes (FxwKernel *self)
{
  return (const char * const *) self->nodes;
}

guint
fxw_kernel_get_n_nodes (FxwKernel *self)
{
  return g_strv_length (self->nodes);
}

static gboolean
source_chain_matches (FxwKernel *self, const fx_node_source *sources, size_t n, int depth)
{
  /* The chain is data from a file: bounded, so a cyclic or very deep one cannot recurse without end. */
  if (depth > 32)
    return FALSE;
  for (size_t i = 0; i < n; i++)
    {
      if (sources[i].name != NULL && g_hash_table_contains (self->node_set, sources[i].name))
        return TRUE;
      if (source_chain_matches (self, sources[i].from_node, sources[i].n_from, depth + 1))
        return TRUE;
    }
  return FALSE;
}

gboolean
fxw_kernel_covers (FxwKernel *self, FxwNode *node, gboolean by_name)
{
  const fx_node *n;

  g_return_val_if_fail (FXW_IS_KERNEL (self), FALSE);
  g_return_val_if_fail (FXW_IS_NODE (node), FALSE);

  n = fxw_node_get_node (node);
  if (n->op == FX_OP_PLACEHOLDER || n->op == FX_OP_OUTPUT)
    return FALSE;
  if (by_name && g_hash_table_contains (self->node_set, fxw_node_get_name (node)))
    return TRUE;
  return source_chain_matches (self, n->meta.from_node, n->meta.n_from_node, 0);
}

GStrv
fxw_kernel_dup_covered (FxwKernel *self, FxwGraph *graph, gboolean by_name)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  for (guint i = 0; graph != NULL && i < fxw_graph_get_n_nodes (graph); i++)
    {
      FxwNode *node = fxw_graph_get_node (graph, i);

      if (fxw_kernel_covers (self, node, by_name))
        g_strv_builder_add (builder, fxw_node_get_name (node));
    }
  return g_strv_builder_end (builder);
}

gboolean
fxw_kernel_get_marked (FxwKernel *self)
{
  return self->marked;
}

void
fxw_kernel_set_marked (FxwKernel *self, gboolean marked)
{
  marked = !!marked;
  if (self->marked == marked)
    return;
  self->marked = marked;
  g_object_notify_by_pspec (G_OBJECT (self), kernel_properties[KERNEL_PROP_MARKED]);
}

int *
fxw_kernels_map_nodes (GListModel *kernels, FxwGraph *graph, gboolean by_name)
{
  guint n_nodes = graph ? fxw_graph_get_n_nodes (graph) : 0;
  guint n_kernels = kernels ? g_list_model_get_n_items (kernels) : 0;
  int *map = g_new (int, MAX (n_nodes, 1));

  for (guint i = 0; i < n_nodes; i++)
    {
      FxwNode *node = fxw_graph_get_node (graph, i);

      map[i] = -1;
      for (guint k = 0; k < n_kernels && map[i] < 0; k++)
        {
          g_autoptr(FxwKernel) kernel = g_list_model_get_item (kernels, k);

          if (fxw_kernel_covers (kernel, node, by_name))
            map[i] = (int) k;
        }
    }
  return map;
}

/* ---------------------------------------------------------------- FxwRun */

struct _FxwRun
{
  GObject parent_instance;
  char *backend, *mode, *options, *device, *error, *stage, *verdict, *autotune;
  int n_kernels;
  GListModel *kernels;
  double compile_ms, median_ms, min_ms, max_ms, accuracy;
  gint64 peak_bytes;
};

G_DEFINE_FINAL_TYPE (FxwRun, fxw_run, G_TYPE_OBJECT)

static void
fxw_run_finalize (GObject *object)
{
  FxwRun *self = FXW_RUN (object);

  g_free (self->backend);
  g_free (self->mode);
  g_free (self->options);
  g_free (self->device);
  g_free (self->error);
  g_free (self->stage);
  g_free (self->verdict);
  g_free (self->autotune);
  g_clear_object (&self->kernels);
  G_OBJECT_CLASS (fxw_run_parent_class)->finalize (object);
}

static void
fxw_run_class_init (FxwRunClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fxw_run_finalize;
}

static void
fxw_run_init (FxwRun *self)
{
  self->stage = g_strdup ("");
  self->n_kernels = -1;
}

/* The capture importer writes -1 for what it did not measure. */
static double
known (double v)
{
  return isfinite (v) && v >= 0 ? v : NAN;
}

FxwRun *
fxw_run_new (const char *backend, const char *mode, const char *options, const char *device, double compile_ms,
             double median_ms, double min_ms, double max_ms, double accuracy, gint64 peak_bytes, const char *error)
{
  FxwRun *self = g_object_new (FXW_TYPE_RUN, NULL);

  self->backend = g_strdup (backend ? backend : "");
  self->mode = g_strdup (mode ? mode : "");
  self->options = g_strdup (options ? options : "");
  self->device = g_strdup (device ? device : "");
  self->error = g_strdup (error ? error : "");
  self->compile_ms = known (compile_ms);
  self->median_ms = known (median_ms);
  self->min_ms = known (min_ms);
  self->max_ms = known (max_ms);
  self->accuracy = known (accuracy);
  self->peak_bytes = peak_bytes >= 0 ? peak_bytes : -1;
  return self;
}

const char *
fxw_run_get_backend (FxwRun *self)
{
  return self->backend;
}

const char *
fxw_run_get_mode (FxwRun *self)
{
  return self->mode;
}

const char *
fxw_run_get_options (FxwRun *self)
{
  return self->options;
}

const char *
fxw_run_get_device (FxwRun *self)
{
  return self->device;
}

double
fxw_run_get_compile_ms (FxwRun *self)
{
  return self->compile_ms;
}

double
fxw_run_get_median_ms (FxwRun *self)
{
  return self->median_ms;
}

double
fxw_run_get_min_ms (FxwRun *self)
{
  return self->min_ms;
}

double
fxw_run_get_max_ms (FxwRun *self)
{
  return self->max_ms;
}

double
fxw_run_get_accuracy (FxwRun *self)
{
  return self->accuracy;
}

gint64
fxw_run_get_peak_bytes (FxwRun *self)
{
  return self->peak_bytes;
}

const char *
fxw_run_get_error (FxwRun *self)
{
  return self->error;
}

void
fxw_run_set_details (FxwRun *self, const char *stage, const char *verdict, int n_kernels)
{
  g_free (self->stage);
  self->stage = g_strdup (stage ? stage : "");
  g_free (self->verdict);
  self->verdict = g_strdup (verdict);
  self->n_kernels = n_kernels >= 0 ? n_kernels : -1;
}

const char *
fxw_run_get_stage (FxwRun *self)
{
  return self->stage;
}

const char *
fxw_run_get_verdict (FxwRun *self)
{
  return self->verdict;
}

GListModel *
fxw_run_get_kernels (FxwRun *self)
{
  return self->kernels;
}

void
fxw_run_set_kernels (FxwRun *self, GListModel *kernels)
{
  g_set_object (&self->kernels, kernels);
}

const char *
fxw_run_get_autotune (FxwRun *self)
{
  return self->autotune;
}

void
fxw_run_set_autotune (FxwRun *self, const char *table)
{
  g_free (self->autotune);
  self->autotune = table != NULL && *table ? g_strdup (table) : NULL;
}

int
fxw_run_get_n_kernels (FxwRun *self)
{
  return self->n_kernels;
}

/* ---------------------------------------------------------------- FxwFusionGroup */

struct _FxwFusionGroup
{
  GObject parent_instance;
  char *name, *kind, *kernel;
  GStrv members, post_nodes, pre_nodes;
};

G_DEFINE_FINAL_TYPE (FxwFusionGroup, fxw_fusion_group, G_TYPE_OBJECT)

static void
fxw_fusion_group_finalize (GObject *object)
{
  FxwFusionGroup *self = FXW_FUSION_GROUP (object);

  g_free (self->name);
  g_free (self->kind);
  g_free (self->kernel);
  g_strfreev (self->members);
  g_strfreev (self->post_nodes);
  g_strfreev (self->pre_nodes);
  G_OBJECT_CLASS (fxw_fusion_group_parent_class)->finalize (object);
}

static void
fxw_fusion_group_class_init (FxwFusionGroupClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fxw_fusion_group_finalize;
}

static void
fxw_fusion_group_init (FxwFusionGroup *self)
{
}

FxwFusionGroup *
fxw_fusion_group_new (const char *name, const char *kind, const char *members, const char *kernel,
                      const char *post_nodes, const char *pre_nodes)
{
  FxwFusionGroup *self = g_object_new (FXW_TYPE_FUSION_GROUP, NULL);

  self->name = g_strdup (name ? name : "");
  self->kind = g_strdup (kind ? kind : "");
  self->kernel = g_strdup (kernel ? kernel : "");
  self->members = split_list (members != NULL && *members ? members : name);
  self->post_nodes = split_list (post_nodes);
  self->pre_nodes = split_list (pre_nodes);
  return self;
}

const char *
fxw_fusion_group_get_name (FxwFusionGroup *self)
{
  g_return_val_if_fail (FXW_IS_FUSION_GROUP (self), NULL);
  return self->name;
}

const char *
fxw_fusion_group_get_kind (FxwFusionGroup *self)
{
  g_return_val_if_fail (FXW_IS_FUSION_GROUP (self), NULL);
  return self->kind;
}

const char *
fxw_fusion_group_get_kernel (FxwFusionGroup *self)
{
  g_return_val_if_fail (FXW_IS_FUSION_GROUP (self), NULL);
  return self->kernel;
}

const char * const *
fxw_fusion_group_get_members (FxwFusionGroup *self)
{
  g_return_val_if_fail (FXW_IS_FUSION_GROUP (self), NULL);
  return (const char * const *) self->members;
}

const char * const *
fxw_fusion_group_get_post_nodes (FxwFusionGroup *self)
{
  g_return_val_if_fail (FXW_IS_FUSION_GROUP (self), NULL);
  return (const char * const *) self->post_nodes;
}

const char * const *
fxw_fusion_group_get_pre_nodes (FxwFusionGroup *self)
{
  g_return_val_if_fail (FXW_IS_FUSION_GROUP (self), NULL);
  return (const char * const *) self->pre_nodes;
}
