/* fxwb-runs.c: the parts `fxwb run` and `fxwb compare` share: loading the graph (FX file or WORKSPACE:COMPILE),
   inputs and the interpreter's reference, backend column specs, per-kernel times and storing runs. */
#include "fxwb-runs.h"
#include "cuda/fx-cuda.h"

#include "fx/minify.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx/diff.h"
#include "fx/pyparse.h"
#include "fx/runtime.h"

void
fxwb_run_opts_init (fxwb_run_opts *o)
{
  memset (o, 0, sizeof *o);
  o->scale = 1;
  o->repeat = 10;
  o->warmup = 1;
  o->keep_outputs_mib = (int) (FX_RUN_OUTPUTS_CAP >> 20);
}

void
fxwb_run_opts_clear (fxwb_run_opts *o)
{
  g_free (o->stage);
  g_free (o->upto);
  g_free (o->inputs);
  g_free (o->workspace);
  g_free (o->mode);
  g_strfreev (o->options);
  memset (o, 0, sizeof *o);
}

static void
run_opts_add_entries (GOptionContext *context, fxwb_run_opts *o)
{
  GOptionEntry entries[] = {
    { "stage", 0, 0, G_OPTION_ARG_STRING, &o->stage,
      "The graph stage of a workspace compile (default: aot_inference, aot_forward, post_grad, dynamo, in that "
      "order of preference)", "STAGE" },
    { "upto", 0, 0, G_OPTION_ARG_STRING, &o->upto,
      "Run the graph up to NODE: its value is the only output, the nodes after it are left out (a workspace stores "
      "the cut graph as its own stage, 'upto NODE')", "NODE" },
    { "mode", 'm', 0, G_OPTION_ARG_STRING, &o->mode,
      "default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs", "MODE" },
    { "option", 'o', 0, G_OPTION_ARG_STRING_ARRAY, &o->options,
      "A backend option, e.g. cpp.threads=2 (repeatable; see `fxwb backends --options`)", "KEY=VALUE" },
    { "inputs", 'i', 0, G_OPTION_ARG_FILENAME, &o->inputs,
      "spec (random, from the graph's annotations; the default), repro (a repro.py's load_args), an inputs.json "
      "file, or a folder of saved tensors", "SOURCE" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &o->seed, "Seed of the random inputs (default 0)", "S" },
    { "scale", 0, 0, G_OPTION_ARG_INT, &o->scale, "Divide every input size >= 64 by N (machine-sized runs)", "N" },
    { "repeat", 'n', 0, G_OPTION_ARG_INT, &o->repeat, "Timed calls (default 10)", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &o->warmup, "Untimed calls before timing (default 1)", "N" },
    { "workspace", 'w', 0, G_OPTION_ARG_FILENAME, &o->workspace,
      "Store the runs (and generated kernels) in this workspace (created when missing)", "FILE.fxwb" },
    { "no-store", 0, 0, G_OPTION_ARG_NONE, &o->no_store,
      "Do not store runs of a workspace's compile back into the workspace", NULL },
    { "kernels", 'k', 0, G_OPTION_ARG_NONE, &o->kernels, "Time and list every generated kernel", NULL },
    { "keep-outputs", 0, 0, G_OPTION_ARG_INT, &o->keep_outputs_mib,
      "Keep up to MIB of each stored run's outputs for `fxwb diff` (default 64; beyond it, and with 0, only shapes "
      "and min/max/mean)", "MIB" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print the results as JSON", NULL },
    { NULL },
  };
  /* GOptionContext copies the entries. */
  g_option_context_add_main_entries (context, entries, NULL);
}

static const char *
run_opts_description (void)
{
  return "Graphs:\n"
         "  FILE              an FX graph (print_readable, GraphModule.code, repro.py, canonical JSON)\n"
         "  WORKSPACE:COMPILE a compile of a workspace, e.g. run.fxwb:0/1 (see `fxwb ls`)\n"
         "\n"
         "Backends:\n"
         "  NAME              a registered backend (see `fxwb backends`)\n"
         "  torch:NAME        PyTorch in a subprocess with torch.compile(backend=NAME); torch:eager runs it eagerly\n"
         "  A|B               A, falling back to B when A does not compile\n"
         "  SPEC@MODE         with a mode, e.g. inductor@max-autotune\n"
         "  SPEC,KEY=VALUE    with options, e.g. inductor,cpp.threads=1,epilogue_fusion=False\n"
         "\n"
         "Every run is checked against the engine's interpreter with PyTorch's same() (tolerance 1e-3).\n"
         "\n"
         "Exit status:\n"
         "  0  every run worked and matched the reference\n"
         "  1  a run failed or did not match, or the graph is malformed\n"
         "  2  wrong command line (unknown backend, option or mode)\n"
         "  3  a file could not be read or written\n";
}

GOptionContext *
fxwb_run_opts_context_new (const char *prgname, const char *parameter_string, const GOptionEntry *entries,
                           const char *summary, fxwb_run_opts *o)
{
  GOptionContext *context
    = fxwb_option_context_new (prgname, parameter_string, entries, summary, run_opts_description ());

  run_opts_add_entries (context, o);
  return context;
}

int
fxwb_run_opts_parse (GOptionContext *context, int *argc, char ***argv, const fxwb_run_opts *o, const char *too_many)
{
  if (!fxwb_parse_options (context, argc, argv))
    return FXWB_EXIT_USAGE;
  if (*argc != 2 || o->repeat < 1 || o->warmup < 0 || o->scale < 1)
    return fxwb_usage_error (context, *argc < 2   ? "missing FILE"
                                      : *argc > 2 ? too_many
                                                  : "--repeat and --scale must be >= 1, --warmup >= 0");
  return FXWB_EXIT_OK;
}

/* ---------------------------------------------------------------- graph source */

static const char *const stage_preference[] = {
  "aot_inference", "aot_forward", "post_grad", "inductor_transformed", "user", "dynamo", "minified", NULL,
};

static gboolean
is_regular_file (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISREG (st.st_mode);
}

static gboolean
is_workspace_path (const char *path)
{
  return g_str_has_suffix (path, ".fxwb");
}

int
fxwb_source_open_workspace (const char *cmd, const char *path, fxwb_open_mode mode, fxwb_source *src)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = mode == FXWB_OPEN_READONLY ? fx_store_open_readonly (path, &src->store, &diag)
                                            : fx_store_open (path, mode == FXWB_OPEN_CREATE, &src->store, &diag);
  if (st != FX_OK)
    {
      fprintf (stderr, "%s: cannot open workspace %s: %s\n", cmd, path, diag.message);
      return fxwb_exit_for_status (st);
    }
  src->store_path = g_strdup (path);
  return FXWB_EXIT_OK;
}

int
fxwb_source_find_compile (const char *cmd, const char *compile_id, fxwb_source *src)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_store_find_compile (src->store, compile_id, &src->compile_row, &diag) != FX_OK)
    {
      fprintf (stderr, "%s: %s: no compile %s: %s (see `fxwb ls %s`)\n", cmd, src->store_path, compile_id,
               diag.message, src->store_path);
      return FXWB_EXIT_FAILURE;
    }
  return FXWB_EXIT_OK;
}

static int
load_from_workspace (const char *cmd, const char *path, const char *compile_id, const fxwb_run_opts *o,
                     fxwb_source *src)
{
  int rc = fxwb_source_open_workspace (cmd, path, FXWB_OPEN_WRITE, src);
  if (rc == FXWB_EXIT_OK)
    rc = fxwb_source_find_compile (cmd, compile_id, src);
  if (rc != FXWB_EXIT_OK)
    return rc;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_arena *arena = fx_arena_new ();
  fx_store_graph_info *gi = NULL;
  size_t n = 0;
  fx_status st = fx_store_list_graphs (src->store, src->compile_row, arena, &gi, &n, &diag);
  const fx_store_graph_info *found = NULL;
  if (st == FX_OK && o->stage)
    {
      for (size_t i = 0; i < n; i++)
        if (strcmp (gi[i].stage, o->stage) == 0)
          found = &gi[i];
    }
  else if (st == FX_OK)
    for (const char *const *p = stage_preference; *p && !found; p++)
      for (size_t i = 0; i < n; i++)
        if (strcmp (gi[i].stage, *p) == 0 && gi[i].parsed)
          found = &gi[i];
  if (st == FX_OK && found == NULL)
    {
      GString *stages = g_string_new (NULL);
      for (size_t i = 0; i < n; i++)
        g_string_append_printf (stages, "%s%s", i ? ", " : "", gi[i].stage);
      fprintf (stderr, "%s: compile %s of %s has no %s graph (stages: %s)\n", cmd, compile_id, path,
               o->stage ? o->stage : "runnable", n ? stages->str : "none");
      g_string_free (stages, TRUE);
      fx_arena_free (arena);
      return FXWB_EXIT_FAILURE;
    }
  if (st == FX_OK)
    {
      src->graph_id = found->id;
      st = fx_store_get_graph (src->store, found->id, &src->graph, &src->text, &diag);
      if (st == FX_OK && src->graph == NULL)
        {
          fprintf (stderr, "%s: the %s graph of compile %s did not parse when it was imported\n", cmd, found->stage,
                   compile_id);
          fx_arena_free (arena);
          return FXWB_EXIT_FAILURE;
        }
      src->label = g_strdup_printf ("%s:[%s] %s", path, compile_id, found->stage);
    }
  fx_arena_free (arena);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return fxwb_exit_for_status (st);
    }
  if (o->no_store)
    {
      fx_store_close (src->store);
      src->store = NULL;
    }
  return FXWB_EXIT_OK;
}

static int source_load_whole (const char *cmd, const char *arg, const fxwb_run_opts *o, fxwb_source *src);

/* --upto NODE: the loaded graph cut after NODE. Its text is its print_readable; a workspace keeps it as a stage of
   the same compile ("upto NODE"), so the runs attach to what ran, never to the whole graph. */
static int
source_cut (const char *cmd, const fxwb_run_opts *o, fxwb_source *src)
{
  fx_graph *cut = NULL;
  fx_diag diag;
  fx_buf text;
  fx_readable_opts ro = { true, true, false };
  char *label;

  fx_diag_clear (&diag);
  if (fx_graph_cut_after (src->graph, o->upto, &cut, &diag) != FX_OK)
    {
      fprintf (stderr, "%s: --upto: %s\n", cmd, diag.message);
      return FXWB_EXIT_USAGE;
    }
  fx_graph_free (src->graph);
  src->graph = cut;
  fx_buf_init (&text);
  fx_graph_print_readable (cut, &ro, &text);
  g_free (src->text);
  src->text = g_strndup (text.data ? text.data : "", text.len);
  fx_buf_free (&text);
  label = g_strdup_printf ("%s up to %s", src->label, o->upto);
  g_free (src->label);
  src->label = label;
  src->graph_id = 0;
  if (src->store != NULL && src->file == NULL)
    {
      g_autofree char *stage = g_strdup_printf ("upto %s", o->upto);
      if (fx_store_add_graph (src->store, src->compile_row, stage, src->graph, src->text, &src->graph_id, &diag)
          != FX_OK)
        {
          fxwb_print_diag (&diag);
          return fxwb_exit_for_status (diag.code);
        }
    }
  return FXWB_EXIT_OK;
}

int
fxwb_source_load (const char *cmd, const char *arg, const fxwb_run_opts *o, fxwb_source *src)
{
  int rc = source_load_whole (cmd, arg, o, src);

  if (rc == FXWB_EXIT_OK && o->upto != NULL)
    rc = source_cut (cmd, o, src);
  return rc;
}

static int
source_load_whole (const char *cmd, const char *arg, const fxwb_run_opts *o, fxwb_source *src)
{
  memset (src, 0, sizeof *src);
  if (!is_regular_file (arg))
    {
      /* WORKSPACE:COMPILE: the workspace part is the longest prefix before a ':' that is a file. */
      const char *colon = strrchr (arg, ':');
      if (colon)
        {
          g_autofree char *path = g_strndup (arg, (gsize) (colon - arg));
          if (is_regular_file (path))
            {
              if (o->workspace)
                {
                  fprintf (stderr, "%s: --workspace is for FX files; runs of %s are stored in %s itself\n", cmd,
                           arg, path);
                  return FXWB_EXIT_USAGE;
                }
              return load_from_workspace (cmd, path, colon + 1, o, src);
            }
        }
      fprintf (stderr, "%s: %s: %s\n", cmd, arg, access (arg, F_OK) == 0 ? "not a regular file"
                                                                          : "no such file (or WORKSPACE:COMPILE)");
      return FXWB_EXIT_IO;
    }
  if (is_workspace_path (arg))
    {
      fprintf (stderr, "%s: %s is a workspace: name a compile, e.g. %s:0/0 (see `fxwb ls %s`)\n", cmd, arg, arg, arg);
      return FXWB_EXIT_USAGE;
    }
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = fxwb_load_graph_file (arg, &src->graph, &src->text, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return fxwb_exit_for_status (st);
    }
  src->file = g_strdup (arg);
  src->label = g_strdup (arg);
  if (o->workspace && !o->no_store)
    return fxwb_source_open_workspace (cmd, o->workspace, FXWB_OPEN_CREATE, src);
  return FXWB_EXIT_OK;
}

void
fxwb_source_clear (fxwb_source *src)
{
  if (src->graph)
    fx_graph_free (src->graph);
  if (src->store)
    fx_store_close (src->store);
  g_free (src->label);
  free (src->text);
  g_free (src->file);
  g_free (src->store_path);
  memset (src, 0, sizeof *src);
}

/* ---------------------------------------------------------------- columns */

static gboolean
add_kv (const char *cmd, GArray *kv, const char *text)
{
  const char *eq = strchr (text, '=');
  if (eq == NULL || eq == text)
    {
      fprintf (stderr, "%s: an option is KEY=VALUE, got '%s'\n", cmd, text);
      return FALSE;
    }
  fx_option_kv item = { g_strndup (text, (gsize) (eq - text)), g_strdup (eq + 1) };
  g_array_append_val (kv, item);
  return TRUE;
}

gboolean
fxwb_column_parse (const char *cmd, const char *text, const fxwb_run_opts *o, fxwb_column *col)
{
  memset (col, 0, sizeof *col);
  col->label = g_strdup (text);
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  GArray *kv = g_array_new (FALSE, TRUE, sizeof (fx_option_kv));
  gboolean ok = TRUE;
  char *at = strchr (parts[0], '@');
  if (at)
    {
      *at = '\0';
      col->mode = g_strdup (at + 1);
    }
  col->spec = g_strdup (parts[0]);
  if (*col->spec == '\0')
    {
      fprintf (stderr, "%s: empty backend in '%s'\n", cmd, text);
      ok = FALSE;
    }
  for (int i = 1; ok && parts[i]; i++)
    ok = add_kv (cmd, kv, parts[i]);
  for (int i = 0; ok && o->options && o->options[i]; i++)
    ok = add_kv (cmd, kv, o->options[i]);
  if (col->mode == NULL && o->mode)
    col->mode = g_strdup (o->mode);
  col->n_kv = kv->len;
  col->kv = (fx_option_kv *) g_array_free (kv, FALSE);
  if (!ok)
    fxwb_column_clear (col);
  return ok;
}

void
fxwb_column_clear (fxwb_column *col)
{
  for (size_t i = 0; i < col->n_kv; i++)
    {
      g_free ((char *) col->kv[i].key);
      g_free ((char *) col->kv[i].value);
    }
  g_free (col->kv);
  g_free (col->spec);
  g_free (col->mode);
  g_free (col->label);
  memset (col, 0, sizeof *col);
}

gboolean
fxwb_column_validate (const char *cmd, const fxwb_column *col)
{
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_arena *arena = fx_arena_new ();
  const fx_backend *b = NULL;
  const char *sub = NULL;
  fx_status st = fx_backend_parse_spec (col->spec, arena, &b, &sub, &diag);
  if (st == FX_OK)
    {
      fx_options opts;
      st = fx_backend_resolve_options (b, col->mode, col->kv, col->n_kv, arena, &opts, &diag);
    }
  fx_arena_free (arena);
  if (st != FX_OK)
    fprintf (stderr, "%s: %s: %s\n", cmd, col->label, diag.message);
  return st == FX_OK;
}

/* ---------------------------------------------------------------- inputs and reference */

int
fxwb_inputs_make (const char *cmd, const fxwb_source *src, const fxwb_run_opts *o, fxwb_inputs *in)
{
  int rc = fxwb_inputs_make_only (cmd, src, o, in);
  if (rc == FXWB_EXIT_OK)
    fxwb_inputs_add_reference (src, in);
  return rc;
}

int
fxwb_inputs_make_only (const char *cmd, const fxwb_source *src, const fxwb_run_opts *o, fxwb_inputs *in)
{
  memset (in, 0, sizeof *in);
  in->arena = fx_arena_new ();
  fx_inputs_source kind = FX_INPUTS_SPEC;
  const char *path = NULL;
  if (o->inputs && strcmp (o->inputs, "spec") != 0 && strcmp (o->inputs, "repro") != 0)
    {
      struct stat st;
      if (stat (o->inputs, &st) != 0)
        {
          fprintf (stderr, "%s: --inputs %s: %s\n", cmd, o->inputs, g_strerror (errno));
          return FXWB_EXIT_IO;
        }
      kind = S_ISDIR (st.st_mode) ? FX_INPUTS_SAVED : FX_INPUTS_JSON;
      path = o->inputs;
    }
  if (o->inputs && strcmp (o->inputs, "repro") == 0 && src->graph->n_inputs == 0)
    {
      fprintf (stderr, "%s: --inputs repro: %s has no load_args (not a repro.py)\n", cmd, src->label);
      return FXWB_EXIT_FAILURE;
    }
  fx_diag diag;
  fx_diag_clear (&diag);
  if (o->scale > 1)
    {
      /* --scale divides the sizes of an inputs JSON too: its specs become the graph's, then scale with it */
      if (kind == FX_INPUTS_JSON)
        {
          fx_status lst = fx_graph_load_input_specs (src->graph, path, &diag);
          if (lst != FX_OK)
            {
              fxwb_print_diag (&diag);
              return fxwb_exit_for_status (lst);
            }
          kind = FX_INPUTS_SPEC;
          path = NULL;
        }
      fx_graph_scale_inputs (src->graph, o->scale, 64);
    }
  fx_status st = fx_inputs_make (src->graph, kind, path, (uint64_t) o->seed, NULL, in->arena, &in->inputs,
                                 &in->n_inputs, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return fxwb_exit_for_status (st);
    }
  return FXWB_EXIT_OK;
}

void
fxwb_inputs_add_reference (const fxwb_source *src, fxwb_inputs *in)
{
  fx_diag diag;
  size_t n_ref64 = 0;
  fx_diag_clear (&diag);
  /* A graph that cannot run on float64 inputs just has no fp64 reference (ref64 NULL). */
  if (fx_interp_run_reference (src->graph, in->inputs, in->n_inputs, in->arena, &in->ref, &in->n_ref, &in->ref64,
                               &n_ref64, &diag) != FX_OK)
    {
      if (diag.node[0])
        g_snprintf (in->ref_error, sizeof in->ref_error, "node '%s': %s", diag.node, diag.message);
      else
        g_snprintf (in->ref_error, sizeof in->ref_error, "%s", diag.message);
      in->ref = NULL;
      in->n_ref = 0;
    }
}

void
fxwb_inputs_clear (fxwb_inputs *in)
{
  for (size_t i = 0; i < in->n_inputs; i++)
    fx_value_clear (&in->inputs[i]);
  for (size_t i = 0; i < in->n_ref; i++)
    fx_value_clear (&in->ref[i]);
  for (size_t i = 0; in->ref64 && i < in->n_ref; i++)
    fx_value_clear (&in->ref64[i]);
  if (in->arena)
    fx_arena_free (in->arena);
  memset (in, 0, sizeof *in);
}

/* ---------------------------------------------------------------- running a column */

/* A graph whose placeholders say cuda (the "f32[..]cuda:0" of a captured GPU graph) runs on the GPU where one
   exists: the columns whose backend takes a device get device='cuda' unless they set one. Without a device it runs
   on the CPU as before. */
static gboolean
graph_on_cuda (const fx_graph *g)
{
  for (const fx_node *n = g->first; n; n = n->next)
    if (!n->erased && n->op == FX_OP_PLACEHOLDER && n->meta.val.kind == FX_VAL_TENSOR)
      return n->meta.val.tensor.has_device && n->meta.val.tensor.device.type == FX_DEVICE_CUDA;
  return FALSE;
}

gboolean
fxwb_cuda_present (void)
{
  static gsize once = 0;
  static gboolean present = FALSE;
  if (g_once_init_enter (&once))
    {
      fx_cuda_runtime_info info;
      present = fx_cuda_probe (&info, NULL) == FX_OK && info.device_count > 0;
      g_once_init_leave (&once, 1);
    }
  return present;
}

static gboolean
column_takes_device (const fxwb_column *col)
{
  for (size_t i = 0; i < col->n_kv; i++)
    if (strcmp (col->kv[i].key, "device") == 0)
      return FALSE;
  fx_arena *scratch = fx_arena_new ();
  const fx_backend *b = NULL;
  const char *sub = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  gboolean takes = FALSE;
  if (fx_backend_parse_spec (col->spec, scratch, &b, &sub, &diag) == FX_OK && b)
    for (size_t i = 0; i < b->n_options; i++)
      takes |= strcmp (b->options[i].name, "device") == 0;
  fx_arena_free (scratch);
  return takes;
}

void
fxwb_column_run_exec (const fxwb_source *src, const fxwb_inputs *in, const fxwb_column *col, const fxwb_run_opts *o,
                      fxwb_column_run *out)
{
  memset (out, 0, sizeof *out);
  fx_run_config cfg = {
    .backend = col->spec,
    .mode = col->mode,
    .options = col->kv,
    .n_options = col->n_kv,
    .warmup = o->warmup,
    .repeat = o->repeat,
  };
  g_autofree fx_option_kv *kv = NULL;
  if (graph_on_cuda (src->graph) && column_takes_device (col) && fxwb_cuda_present ())
    {
      kv = g_new0 (fx_option_kv, col->n_kv + 1);
      if (col->n_kv)
        memcpy (kv, col->kv, sizeof (fx_option_kv) * col->n_kv);
      kv[col->n_kv].key = "device";
      kv[col->n_kv].value = "'cuda'";
      cfg.options = kv;
      cfg.n_options = col->n_kv + 1;
    }
  /* Outputs are kept only for a run that is stored. */
  out->arena = fx_arena_new ();
  fx_run_backend (src->graph, in->inputs, in->n_inputs, &cfg, in->ref, in->ref64, in->n_ref, out->arena,
                  src->store ? &out->outputs : NULL, src->store ? &out->n_outputs : NULL, &out->compiled,
                  &out->result);
  g_strlcpy (out->result.backend, col->label, sizeof out->result.backend);
  if (out->compiled && o->kernels)
    {
      /* per-kernel times from any backend that takes them (inductor, plugins); the others list kernels untimed */
      fx_diag diag;
      fx_diag_clear (&diag);
      fx_status st = fx_compiled_profile (out->compiled, in->inputs, in->n_inputs, o->repeat, &diag);
      if (st != FX_OK && st != FX_ERR_UNSUPPORTED)
        fprintf (stderr, "per-kernel timing of %s failed: %s\n", col->label, diag.message);
    }
}

void
fxwb_column_run_drop_outputs (fxwb_column_run *run)
{
  for (size_t i = 0; i < run->n_outputs; i++)
    fx_value_clear (&run->outputs[i]);
  if (run->arena)
    fx_arena_free (run->arena);
  run->arena = NULL;
  run->outputs = NULL;
  run->n_outputs = 0;
}

void
fxwb_column_run_clear (fxwb_column_run *run)
{
  fxwb_column_run_drop_outputs (run);
  fx_compiled_free (run->compiled);
  memset (run, 0, sizeof *run);
}

/* ---------------------------------------------------------------- storing */

static gboolean
has_generated_kernels (const fx_compiled *c)
{
  for (size_t k = 0; c && k < c->n_kernels; k++)
    if (strcmp (c->kernels[k].kind, "interpreter") != 0)
      return TRUE;
  return FALSE;
}

static char *
join_nodes (const fx_kernel_info *k)
{
  GString *s = g_string_new (NULL);
  for (size_t i = 0; i < k->n_nodes; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", k->nodes[i]);
  return g_string_free (s, FALSE);
}

/* A file's graph becomes a workspace input with one compile holding it, once per content. */
static fx_status
ensure_file_graph (fxwb_source *src, fx_diag *diag)
{
  if (src->graph_id)
    return FX_OK;
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, src->text ? src->text : "", -1);
  int64_t input = 0;
  fx_status st = fx_store_find_input (src->store, hash, &input, diag);
  if (st == FX_OK && input == 0)
    st = fx_store_add_input (src->store, src->file, "fx_graph", hash, (int64_t) (src->text ? strlen (src->text) : 0),
                             &input, diag);
  fx_compile_id cid = { -1, 0, 0, 0 };
  if (st == FX_OK)
    st = fx_store_ensure_compile (src->store, input, &cid, &src->compile_row, diag);
  if (st != FX_OK)
    return st;
  fx_arena *arena = fx_arena_new ();
  fx_store_graph_info *gi = NULL;
  size_t n = 0;
  st = fx_store_list_graphs (src->store, src->compile_row, arena, &gi, &n, diag);
  for (size_t i = 0; st == FX_OK && i < n; i++)
    if (strcmp (gi[i].stage, "user") == 0)
      src->graph_id = gi[i].id;
  fx_arena_free (arena);
  if (st == FX_OK && src->graph_id == 0)
    {
      fx_store_compile_update u;
      fx_store_compile_update_init (&u);
      u.file = src->file;
      u.function = "forward";
      u.graph_op_count = (int) src->graph->n_nodes;
      st = fx_store_update_compile (src->store, src->compile_row, &u, diag);
      if (st == FX_OK)
        st = fx_store_add_graph (src->store, src->compile_row, "user", src->graph, src->text, &src->graph_id, diag);
    }
  return st;
}

/* The kernels a backend generated become a compile of their own ("engine" input): the app's Kernels view and
   fusion overlay show it like an imported Inductor compile. */
static fx_status
store_engine_compile (fxwb_source *src, const fxwb_column_run *run, int64_t *compile_row, fx_diag *diag)
{
  const fx_compiled *c = run->compiled;
  g_autofree char *path = g_strdup_printf ("%s of %s", run->result.backend, src->label);
  g_autofree char *unique = g_strdup_printf ("engine:%s:%" G_GINT64_FORMAT ":%d", path, g_get_real_time (),
                                             (int) getpid ());
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, unique, -1);
  int64_t input = 0;
  fx_status st = fx_store_add_input (src->store, path, "engine_compile", hash, 0, &input, diag);
  fx_compile_id cid = { -1, 0, 0, 0 };
  if (st == FX_OK)
    st = fx_store_ensure_compile (src->store, input, &cid, compile_row, diag);
  if (st == FX_OK)
    {
      fx_store_compile_update u;
      fx_store_compile_update_init (&u);
      u.function = run->result.backend;
      u.file = src->file;
      u.backend_compile_s = run->result.compile_ms / 1e3;
      u.graph_op_count = (int) src->graph->n_nodes;
      st = fx_store_update_compile (src->store, *compile_row, &u, diag);
    }
  if (st == FX_OK)
    st = fx_store_add_graph (src->store, *compile_row, "user", src->graph, src->text, NULL, diag);
  for (size_t k = 0; st == FX_OK && k < c->n_kernels; k++)
    {
      const fx_kernel_info *ki = &c->kernels[k];
      g_autofree char *nodes = join_nodes (ki);
      fx_buf dev;
      fx_buf_init (&dev);
      fx_device_format (ki->device, &dev);
      st = fx_store_add_kernel (src->store, *compile_row, (int) k, (int) k, ki->name, ki->kind,
                                dev.data ? dev.data : "cpu", ki->source, nodes, NULL, diag);
      fx_buf_free (&dev);
      if (st == FX_OK && ki->n_nodes > 0 && strcmp (ki->kind, "extern") != 0)
        st = fx_store_add_fusion_group (src->store, *compile_row, ki->name, nodes, NULL, diag);
      if (st == FX_OK && ki->time_ms >= 0)
        {
          /* Keyed by ordinal as well as name: two kernels of one name (two extern_addmm) have their own times. */
          g_autofree char *key = g_strdup_printf ("kernel_ms.%zu.%s", k, ki->name);
          g_autofree char *val = g_strdup_printf ("%.6f", ki->time_ms);
          st = fx_store_add_metric (src->store, *compile_row, key, val, diag);
        }
    }
  for (size_t a = 0; st == FX_OK && a < c->n_artifacts; a++)
    st = fx_store_add_artifact (src->store, input, *compile_row, c->artifacts[a].name, c->artifacts[a].kind,
                                c->artifacts[a].text, diag);
  return st;
}

/* A stored run is written in one transaction, after the graph of an FX file it ran. */
static fx_status
store_run_begin (fxwb_source *src, fx_diag *diag)
{
  fx_status st = fx_store_begin (src->store, diag);
  if (st == FX_OK && src->file)
    st = ensure_file_graph (src, diag);
  return st;
}

/* Commits the transaction when st is FX_OK, else rolls it back and prints why; returns the exit code. */
static int
store_run_end (const char *cmd, fxwb_source *src, fx_status st, fx_diag *diag)
{
  if (st == FX_OK)
    st = fx_store_commit (src->store, diag);
  if (st == FX_OK)
    return FXWB_EXIT_OK;
  fx_store_rollback (src->store);
  fprintf (stderr, "%s: cannot store the run in %s: %s\n", cmd, src->store_path, diag->message);
  return fxwb_exit_for_status (st);
}

int
fxwb_store_run_start (const char *cmd, fxwb_source *src, const fxwb_column *col, int64_t *run_id)
{
  *run_id = 0;
  if (src->store == NULL)
    return FXWB_EXIT_OK;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = store_run_begin (src, &diag);
  fx_store_run sr = { .backend = col->spec, .mode = col->mode ? col->mode : "default" };
  if (st == FX_OK)
    st = fx_store_start_run (src->store, src->graph_id, &sr, run_id, &diag);
  int rc = store_run_end (cmd, src, st, &diag);
  if (rc != FXWB_EXIT_OK)
    *run_id = 0;
  return rc;
}

/* What the inputs were, for a reader of the stored run: "spec, seed 0", "inputs.json, seed 0, scale 4". */
static char *
inputs_description (const fxwb_run_opts *o)
{
  GString *s = g_string_new (o->inputs ? o->inputs : "spec");
  if (!o->inputs || strcmp (o->inputs, "spec") == 0 || strcmp (o->inputs, "repro") == 0)
    g_string_append_printf (s, ", seed %" G_GINT64_FORMAT, o->seed);
  if (o->scale > 1)
    g_string_append_printf (s, ", scale %d", o->scale);
  return g_string_free (s, FALSE);
}

/* SHA-256 over the inputs' kinds, dtypes, shapes and values: equal for runs that saw the same inputs. */
static char *
inputs_hash (const fxwb_inputs *in)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  for (size_t i = 0; i < in->n_inputs; i++)
    {
      const fx_value *v = &in->inputs[i];
      g_autofree char *head = NULL;
      if (v->kind == FX_VALUE_TENSOR && v->u.t)
        {
          const fx_tensor *t = v->u.t;
          fx_buf shape;
          fx_buf_init (&shape);
          for (int d = 0; d < t->ndim; d++)
            fx_buf_printf (&shape, "%lld,", (long long) t->sizes[d]);
          head = g_strdup_printf ("%zu tensor %s [%s]", i, fx_dtype_name (t->dtype), shape.data ? shape.data : "");
          fx_buf_free (&shape);
          g_checksum_update (sum, (const guchar *) head, -1);
          if (t->storage && t->device.type == FX_DEVICE_CPU)
            {
              fx_tensor *c = fx_tensor_contiguous_copy (NULL, t);
              if (c)
                {
                  g_checksum_update (sum, fx_tensor_data (c), (gssize) fx_tensor_nbytes (c));
                  fx_tensor_unref (c);
                }
            }
          continue;
        }
      if (v->kind == FX_VALUE_INT)
        head = g_strdup_printf ("%zu int %" G_GINT64_FORMAT, i, v->u.i);
      else if (v->kind == FX_VALUE_FLOAT)
        head = g_strdup_printf ("%zu float %.17g", i, v->u.f);
      else if (v->kind == FX_VALUE_BOOL)
        head = g_strdup_printf ("%zu bool %d", i, v->u.b);
      else
        head = g_strdup_printf ("%zu kind %d", i, (int) v->kind);
      g_checksum_update (sum, (const guchar *) head, -1);
    }
  return g_strdup (g_checksum_get_string (sum));
}

int
fxwb_store_run (const char *cmd, fxwb_source *src, const fxwb_inputs *in, const fxwb_run_opts *o,
                const fxwb_column_run *run, int64_t run_id)
{
  if (src->store == NULL)
    return FXWB_EXIT_OK;
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_status st = store_run_begin (src, &diag);
  int64_t engine_compile = 0;
  if (st == FX_OK && has_generated_kernels (run->compiled))
    st = store_engine_compile (src, run, &engine_compile, &diag);
  const fx_run_result *r = &run->result;
  fx_store_run sr = {
    .backend = r->backend,
    .mode = r->mode,
    .options_json = r->options,
    .device = r->device,
    .error = r->status == FX_OK ? (r->verdict == FX_VERDICT_FAIL ? r->accuracy_report : NULL) : r->error,
    .compile_ms = r->compile_ms,
    .run_ms_median = r->median_ms,
    .run_ms_min = r->min_ms,
    .run_ms_max = r->max_ms,
    .accuracy = r->max_abs_err,
    .peak_bytes = (int64_t) r->peak_bytes,
    .verdict = fx_verdict_name (r->verdict),
    .repeat = r->status == FX_OK ? r->repeat : 0,
    .n_kernels = r->status == FX_OK ? (int) r->n_kernels : -1,
    .engine_compile = engine_compile,
  };
  if (st == FX_OK)
    {
      if (run_id)
        st = fx_store_finish_run (src->store, run_id, &sr, &diag);
      else
        st = fx_store_add_run (src->store, src->graph_id, &sr, &run_id, &diag);
    }
  /* A failed run has no outputs; its inputs are still recorded. */
  if (st == FX_OK)
    {
      g_autofree char *desc = inputs_description (o);
      g_autofree char *hash = inputs_hash (in);
      size_t cap = o->keep_outputs_mib > 0 ? (size_t) o->keep_outputs_mib << 20 : 0;
      if (r->status == FX_OK)
        st = fx_run_outputs_store (src->store, run_id, run->outputs, run->n_outputs, cap, desc, hash, &diag);
      else
        st = fx_store_set_run_inputs (src->store, run_id, desc, hash, -1, &diag);
    }
  return store_run_end (cmd, src, st, &diag);
}

/* ---------------------------------------------------------------- printing */

json_object *
fxwb_run_result_json (const fx_run_result *r)
{
  json_object *o = json_object_new_object ();
  fxwb_json_add_str (o, "backend", r->backend);
  fxwb_json_add_str (o, "mode", r->mode);
  fxwb_json_add_str (o, "options", r->options);
  fxwb_json_add_str (o, "device", r->device);
  fxwb_json_add_str (o, "status", r->status == FX_OK ? "ok" : fx_status_name (r->status));
  fxwb_json_add_str (o, "error", r->status == FX_OK ? NULL : r->error);
  fxwb_json_add_num (o, "compile_ms", r->compile_ms);
  fxwb_json_add_num (o, "median_ms", r->median_ms);
  fxwb_json_add_num (o, "min_ms", r->min_ms);
  fxwb_json_add_num (o, "max_ms", r->max_ms);
  fxwb_json_add_int (o, "repeat", r->repeat);
  fxwb_json_add_int (o, "warmup", r->warmup);
  fxwb_json_add_int (o, "peak_bytes", (int64_t) r->peak_bytes);
  fxwb_json_add_str (o, "accuracy", fx_verdict_name (r->verdict));
  fxwb_json_add_num (o, "max_abs_err", r->max_abs_err);
  fxwb_json_add_num (o, "max_rel_err", r->max_rel_err);
  fxwb_json_add_str (o, "accuracy_report", r->accuracy_report);
  fxwb_json_add_int (o, "kernels", (int64_t) r->n_kernels);
  fxwb_json_add_str (o, "timing", r->timing);
  return o;
}

void
fxwb_print_kernels (const fx_compiled *c)
{
  for (size_t k = 0; k < c->n_kernels; k++)
    {
      const fx_kernel_info *ki = &c->kernels[k];
      if (ki->time_ms >= 0)
        printf ("  %-44s %-10s %9.4f ms  [", ki->name, ki->kind, ki->time_ms);
      else
        printf ("  %-44s %-10s %12s  [", ki->name, ki->kind, "");
      for (size_t i = 0; i < ki->n_nodes; i++)
        printf ("%s%s", i ? ", " : "", ki->nodes[i]);
      printf ("]\n");
    }
}
