/* fx-torch-backend.c: the `torch` backend: options and modes, compile (check the graph against the allowlist, start a
   worker, hand it the graph as canonical JSON, torch.compile it), run, bench and the kernels it reports. */
#include "fx-torch-backend.h"
#include "fx-torch-impl.h"
#include "registry/fx-registry.h"
#include "fx/importers.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const fx_option_decl torch_options[] = {
  { "backend", FX_OPTION_STRING, "'eager'",
    "torch.compile backend ('inductor', 'aot_eager', 'cudagraphs', ...); 'eager' runs the graph without torch.compile" },
  { "python", FX_OPTION_STRING, "''",
    "Python interpreter with torch ('': $FXWB_PYTHON, else /usr/bin/python3 when it exists, else python3)" },
  { "options", FX_OPTION_STRING, "'{}'", "torch.compile(options=...) as a Python dict literal" },
  { "dynamic", FX_OPTION_BOOL, "None", "torch.compile(dynamic=...); unset: torch's automatic dynamic shapes" },
  { "fullgraph", FX_OPTION_BOOL, "False", "torch.compile(fullgraph=...)" },
  { "device", FX_OPTION_STRING, "''", "device torch runs on ('cuda', 'cuda:1'); '': where the inputs are" },
  { "timeout", FX_OPTION_FLOAT, "600.0", "seconds one worker request may take before the worker is killed" },
  { "trace", FX_OPTION_BOOL, "True",
    "backend='inductor': keep Inductor's debug files (output_code.py, IR dumps) as artifacts" },
  { "profile", FX_OPTION_BOOL, "True", "backend='eager': time each node in bench (extra untimed calls)" },
  { "_crash_for_test", FX_OPTION_STRING, "''",
    "tests: make the worker fail ('exit-load', 'segv-run', 'hang-load', 'raise-bench', ...)" },
};


/* ---------------------------------------------------------------- options (read directly: no registry needed) */

static const fx_option_value *
opt_find (const fx_options *o, const char *name, size_t *index)
{
  if (o == NULL)
    return NULL;
  for (size_t i = 0; i < o->n; i++)
    if (o->items[i].name != NULL && strcmp (o->items[i].name, name) == 0)
      {
        if (index)
          *index = i;
        return &o->items[i];
      }
  return NULL;
}

static const char *
opt_str (const fx_options *o, const char *name, const char *def)
{
  const fx_option_value *v = opt_find (o, name, NULL);
  return v && v->type == FX_OPTION_STRING && v->s ? v->s : def;
}

static bool
opt_bool (const fx_options *o, const char *name, bool def)
{
  const fx_option_value *v = opt_find (o, name, NULL);
  return v && v->type == FX_OPTION_BOOL ? v->b : def;
}

static double
opt_float (const fx_options *o, const char *name, double def)
{
  const fx_option_value *v = opt_find (o, name, NULL);
  if (v && v->type == FX_OPTION_FLOAT)
    return v->f;
  if (v && v->type == FX_OPTION_INT)
    return (double) v->i;
  return def;
}

/* A bool option that defaults to None: set only when the user (or a mode) gave it. */
static bool
opt_explicit (const fx_options *o, const char *name)
{
  size_t i;
  return opt_find (o, name, &i) && o->explicit_set != NULL && o->explicit_set[i];
}

/* ---------------------------------------------------------------- compiled state */

typedef struct torch_state
{
  fx_torch_worker *worker;
  char backend[64];
  bool profile;
} torch_state;

static void
torch_release (fx_compiled *c)
{
  torch_state *s = c->impl;
  fx_torch_worker_stop (s->worker);
  free (s);
}

static fx_status
inputs_to_json (fx_torch_worker *w, const fx_value *inputs, size_t n, json_object **out, fx_diag *diag)
{
  w->file_seq = 0;
  json_object *arr = json_object_new_array ();
  for (size_t i = 0; i < n; i++)
    {
      json_object *v = NULL;
      fx_status st = fx_torch_value_to_json (w, &inputs[i], &v, diag);
      if (st != FX_OK)
        {
          json_object_put (arr);
          return st;
        }
      json_object_array_add (arr, v);
    }
  *out = arr;
  return FX_OK;
}

static fx_status
outputs_from_json (json_object *reply, fx_arena *arena, fx_value **outputs, size_t *n_outputs, fx_diag *diag)
{
  json_object *arr = NULL;
  if (!json_object_object_get_ex (reply, "outputs", &arr) || !json_object_is_type (arr, json_type_array))
    return fx_diag_set (diag, FX_ERR_BACKEND, "torch worker: a reply without outputs");
  return fx_torch_values_from_json (arr, arena, outputs, n_outputs, diag);
}

static double
jdouble (json_object *o, const char *key)
{
  json_object *v;
  if (o && json_object_object_get_ex (o, key, &v))
    return json_object_get_double (v);
  return 0;
}

/* ---------------------------------------------------------------- kernels */

/* The line of GraphModule.code that computes a node ("    add = torch.ops.aten.add.Tensor(x, y);  x = None"). */
static char *
code_line_of (fx_arena *arena, const char *code, const char *name)
{
  size_t nlen = strlen (name);
  for (const char *p = code; p && *p;)
    {
      const char *eol = strchr (p, '\n');
      size_t len = eol ? (size_t) (eol - p) : strlen (p);
      const char *q = p;
      while (q < p + len && *q == ' ')
        q++;
      if ((size_t) (p + len - q) > nlen && strncmp (q, name, nlen) == 0 && (q[nlen] == ' ' || q[nlen] == ':'))
        {
          /* Drop the "; x = None" frees: they are not the node's work. */
          const char *semi = NULL;
          for (const char *s = q; s + 3 < p + len; s++)
            if (s[0] == ';' && s[1] == ' ' && s[2] == ' ')
              semi = s;
          return fx_arena_strndup (arena, q, (size_t) ((semi ? semi : p + len) - q));
        }
      p = eol ? eol + 1 : NULL;
    }
  return NULL;
}

static void
add_eager_kernels (fx_compiled *out, const fx_graph *graph, const char *code)
{
  fx_graph_foreach_node (graph, n)
  {
    if (n->erased || (n->op != FX_OP_CALL_FUNCTION && n->op != FX_OP_CALL_METHOD && n->op != FX_OP_CALL_MODULE))
      continue;
    char *kname = fx_arena_printf (out->arena, "eager:%s", n->name);
    fx_kernel_info *k = fx_compiled_add_kernel (out, kname, "python", "python", code_line_of (out->arena, code,
                                                                                              n->name));
    if (k == NULL)
      continue;
    k->device.type = FX_DEVICE_CPU;
    k->device.index = -1;
    k->time_ms = -1;
    fx_kernel_add_node (out, k, n->name);
  }
}

static const char *
inductor_kernel_kind (const fx_kernel_def *d)
{
  if (strstr (d->name, "_poi_") != NULL)
    return "pointwise";
  if (strstr (d->name, "_red_") != NULL || strstr (d->name, "_per_") != NULL)
    return "reduction";
  if (strstr (d->name, "_tem_") != NULL)
    return "template";
  return d->kind ? d->kind : "kernel";
}

/* Splits each output code into kernels (their source and source nodes) and keeps it as an artifact. */
static void
add_output_code (fx_compiled *out, const fx_graph *graph, const char *path, int index, fx_diag *diag)
{
  char *text = NULL;
  size_t len = 0;
  fx_diag d;
  fx_diag_clear (&d);
  if (fx_file_read (path, &text, &len, &d) != FX_OK)
    {
      fx_buf_printf (&out->notes, "torch: output code %s could not be read: %s\n", path, d.message);
      return;
    }
  char aname[64];
  if (index == 0)
    snprintf (aname, sizeof aname, "output_code.py");
  else
    snprintf (aname, sizeof aname, "output_code_%d.py", index);
  fx_compiled_add_artifact (out, aname, "code", text, len);
  fx_kernel_def *defs = NULL;
  size_t n = 0;
  fx_arena *tmp = fx_arena_new ();
  if (fx_split_output_code (text, len, tmp, &defs, &n, &d) == FX_OK)
    for (size_t i = 0; i < n; i++)
      {
        const fx_kernel_def *kd = &defs[i];
        bool triton = kd->kind && strcmp (kd->kind, "triton") == 0;
        bool cpp = kd->kind && strcmp (kd->kind, "cpp") == 0;
        fx_kernel_info *k = fx_compiled_add_kernel (out, kd->name, inductor_kernel_kind (kd),
                                                    triton ? "python" : cpp ? "c" : NULL, kd->code);
        if (k == NULL)
          continue;
        k->time_ms = -1;
        k->device.index = -1;
        k->device.type = FX_DEVICE_CPU;
        if (kd->device != NULL && !fx_device_parse (kd->device, &k->device))
          k->device.type = FX_DEVICE_OTHER;
        /* "add, mul_1": the nodes of the graph Dynamo traced; they carry our node names where they match. */
        for (const char *p = kd->nodes; p && *p;)
          {
            while (*p == ' ' || *p == ',')
              p++;
            const char *e = p;
            while (*e && *e != ',')
              e++;
            size_t l = (size_t) (e - p);
            while (l > 0 && p[l - 1] == ' ')
              l--;
            if (l > 0)
              {
                char *nm = fx_arena_strndup (tmp, p, l);
                if (fx_graph_find_node (graph, nm) != NULL)
                  fx_kernel_add_node (out, k, nm);
              }
            p = e;
          }
      }
  fx_buf_printf (&out->notes, "torch: %s: %zu kernels\n", aname, n);
  fx_arena_free (tmp);
  free (text);
  (void) diag;
}

static void
add_debug_files (fx_compiled *out, json_object *reply)
{
  json_object *arr = NULL;
  if (!json_object_object_get_ex (reply, "debug_files", &arr) || !json_object_is_type (arr, json_type_array))
    return;
  for (size_t i = 0; i < json_object_array_length (arr); i++)
    {
      json_object *e = json_object_array_get_idx (arr, i), *jn = NULL, *jp = NULL;
      if (!json_object_object_get_ex (e, "name", &jn) || !json_object_object_get_ex (e, "path", &jp))
        continue;
      char *text = NULL;
      size_t len = 0;
      fx_diag d;
      if (fx_file_read (json_object_get_string (jp), &text, &len, &d) != FX_OK)
        continue;
      const char *name = json_object_get_string (jn);
      size_t nl = strlen (name);
      bool code = nl > 3 && strcmp (name + nl - 3, ".py") == 0;
      fx_compiled_add_artifact (out, name, code ? "code" : "text", text, len);
      free (text);
    }
}

/* ---------------------------------------------------------------- compile, run, bench */

static fx_status
torch_compile_impl (const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  const fx_options *o = req->options;
  const char *backend = opt_str (o, "backend", "eager");
  const char *mode = req->mode && req->mode[0] ? req->mode : "default";
  bool eager = strcmp (backend, "eager") == 0;
  if (backend[0] == '\0' || strlen (backend) >= sizeof ((torch_state *) 0)->backend)
    return fx_diag_set (diag, FX_ERR_INVALID, "option backend: '%s' is not a torch.compile backend name", backend);
  if (eager && strcmp (mode, "default") != 0)
    return fx_diag_set (diag, FX_ERR_INVALID,
                        "mode '%s' is a torch.compile mode, and backend='eager' runs the graph without "
                        "torch.compile; give option backend too (for example backend='inductor')", mode);

  /* Nothing of the graph reaches Python before it passed the allowlist; the worker checks it again. */
  fx_status st = fx_torch_check_graph (req->graph, diag);
  if (st != FX_OK)
    return st;
  json_object *request = json_object_new_object ();
  {
    fx_buf gj;
    fx_buf_init (&gj);
    fx_graph_to_json (req->graph, &gj);
    json_tokener *tok = json_tokener_new_ex (JSON_TOKENER_DEFAULT_DEPTH * 4);
    json_object *graph = tok ? json_tokener_parse_ex (tok, gj.data ? gj.data : "", (int) gj.len) : NULL;
    if (tok)
      json_tokener_free (tok);
    fx_buf_free (&gj);
    if (graph == NULL)
      {
        json_object_put (request);
        return fx_diag_set (diag, FX_ERR_INVALID, "torch: the graph's JSON form does not read back");
      }
    json_object_object_add (request, "graph", graph);
  }

  const char *python = fx_torch_pick_python (opt_str (o, "python", ""));
  fx_torch_worker *w = NULL;
  st = fx_torch_worker_start (python, opt_float (o, "timeout", 600.0), &w, diag);
  if (st != FX_OK)
    {
      json_object_put (request);
      return st;
    }
  torch_state *s = calloc (1, sizeof *s);
  s->worker = w;
  snprintf (s->backend, sizeof s->backend, "%s", backend);
  s->profile = opt_bool (o, "profile", true);
  out->impl = s;

  if (!eager && !w->has_compile)
    {
      json_object_put (request);
      return fx_diag_set (diag, FX_ERR_UNSUPPORTED,
                          "torch %s at %s has no torch.compile (needs PyTorch >= 2.0); use backend='eager'",
                          w->torch_version, python);
    }

  fx_buf code;
  fx_buf_init (&code);
  fx_graph_print_code (req->graph, &code);
  json_object *inputs = NULL;
  st = inputs_to_json (w, req->example_inputs, req->n_inputs, &inputs, diag);
  if (st != FX_OK)
    {
      fx_buf_free (&code);
      json_object_put (request);
      return st;
    }
  char device[64] = "";
  const char *dev_opt = opt_str (o, "device", "");
  if (dev_opt[0] != '\0')
    snprintf (device, sizeof device, "%s", dev_opt);
  else if (req->device.type == FX_DEVICE_CUDA)
    {
      fx_buf d;
      fx_buf_init (&d);
      fx_device_format (req->device, &d);
      snprintf (device, sizeof device, "%s", d.data ? d.data : "cuda");
      fx_buf_free (&d);
    }
  if (strncmp (device, "cuda", 4) == 0 && !w->has_cuda)
    {
      fx_buf_free (&code);
      json_object_put (inputs);
      json_object_put (request);
      return fx_diag_set (diag, FX_ERR_NO_DEVICE,
                          "torch %s at %s cannot use CUDA (torch.cuda.is_available() is False), so it cannot run "
                          "on device '%s'", w->torch_version, python, device);
    }
  json_object_object_add (request, "op", json_object_new_string ("load"));
  json_object_object_add (request, "inputs", inputs);
  json_object_object_add (request, "backend", json_object_new_string (backend));
  json_object_object_add (request, "mode", strcmp (mode, "default") ? json_object_new_string (mode) : NULL);
  json_object_object_add (request, "options", json_object_new_string (opt_str (o, "options", "{}")));
  json_object_object_add (request, "dynamic",
                          opt_explicit (o, "dynamic") ? json_object_new_boolean (opt_bool (o, "dynamic", false)) : NULL);
  json_object_object_add (request, "fullgraph", json_object_new_boolean (opt_bool (o, "fullgraph", false)));
  json_object_object_add (request, "device", json_object_new_string (device));
  json_object_object_add (request, "trace", json_object_new_boolean (opt_bool (o, "trace", true)));
  json_object_object_add (request, "crash", json_object_new_string (opt_str (o, "_crash_for_test", "")));

  json_object *reply = NULL;
  st = fx_torch_worker_call (w, request, "compile", &reply, diag);
  json_object_put (request);
  if (st != FX_OK)
    {
      fx_buf_free (&code);
      return st;
    }
  double compile_ms = jdouble (reply, "compile_ms");
  out->compile_ms = compile_ms;
  fx_buf_printf (&out->notes,
                 "torch: torch %s, Python %s (%s); backend '%s'%s%s; worker start (interpreter + import torch) "
                 "%.1f ms; build %.2f ms; compile %.1f ms (first call %.2f ms)\n",
                 w->torch_version, w->python_version, w->executable[0] ? w->executable : python, backend,
                 strcmp (mode, "default") ? ", mode " : "", strcmp (mode, "default") ? mode : "", w->start_ms,
                 jdouble (reply, "build_ms"), compile_ms, jdouble (reply, "first_call_ms"));
  fx_compiled_add_artifact (out, "fx_graph_code.py", "code", code.data ? code.data : "", code.len);
  if (eager)
    add_eager_kernels (out, req->graph, code.data ? code.data : "");
  else
    {
      json_object *oc = NULL;
      if (json_object_object_get_ex (reply, "output_code", &oc) && json_object_is_type (oc, json_type_array))
        for (size_t i = 0; i < json_object_array_length (oc); i++)
          add_output_code (out, req->graph, json_object_get_string (json_object_array_get_idx (oc, i)), (int) i,
                           diag);
      if (strcmp (backend, "inductor") == 0 && (oc == NULL || json_object_array_length (oc) == 0))
        fx_buf_puts (&out->notes, "torch: Inductor wrote no output code that fxwb could find\n");
      add_debug_files (out, reply);
    }
  fx_buf_free (&code);
  json_object_put (reply);
  return FX_OK;
}

/* A failed compile leaves no worker behind, whether or not the caller calls release. */
static fx_status
torch_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  (void) self;
  fx_status st = torch_compile_impl (req, out, diag);
  if (st != FX_OK && out->impl)
    {
      torch_release (out);
      out->impl = NULL;
    }
  return st;
}

/* Sends REQUEST (consumed) to S's worker as OP: {"op": OP, "inputs": [...]} plus what the caller added; its reply. */
static fx_status
call_with_inputs (torch_state *s, const char *op, const fx_value *inputs, size_t n_inputs, json_object *request,
                  json_object **reply, fx_diag *diag)
{
  json_object *in = NULL;
  fx_status st = inputs_to_json (s->worker, inputs, n_inputs, &in, diag);
  if (st == FX_OK)
    {
      json_object_object_add (request, "op", json_object_new_string (op));
      json_object_object_add (request, "inputs", in);
      st = fx_torch_worker_call (s->worker, request, op, reply, diag);
    }
  json_object_put (request);
  return st;
}

static fx_status
torch_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
           size_t *n_outputs, fx_diag *diag)
{
  torch_state *s = c->impl;
  *outputs = NULL;
  *n_outputs = 0;
  if (s == NULL || s->worker == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "torch: not compiled");
  json_object *reply = NULL;
  fx_status st = call_with_inputs (s, "run", inputs, n_inputs, json_object_new_object (), &reply, diag);
  if (st != FX_OK)
    return st;
  st = outputs_from_json (reply, arena, outputs, n_outputs, diag);
  json_object_put (reply);
  return st;
}

static fx_status
torch_bench (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int warmup, int repeat, fx_arena *arena,
             double *times_ms, fx_value **outputs, size_t *n_outputs, size_t *peak_bytes, fx_diag *diag)
{
  torch_state *s = c->impl;
  *outputs = NULL;
  *n_outputs = 0;
  if (peak_bytes)
    *peak_bytes = 0;
  if (s == NULL || s->worker == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "torch: not compiled");
  if (repeat < 1)
    return fx_diag_set (diag, FX_ERR_INVALID, "bench: repeat must be at least 1 (got %d)", repeat);
  bool profile = s->profile && strcmp (s->backend, "eager") == 0;
  json_object *request = json_object_new_object ();
  json_object_object_add (request, "warmup", json_object_new_int (warmup < 0 ? 0 : warmup));
  json_object_object_add (request, "repeat", json_object_new_int (repeat));
  json_object_object_add (request, "profile", json_object_new_boolean (profile));
  json_object *reply = NULL;
  fx_status st = call_with_inputs (s, "bench", inputs, n_inputs, request, &reply, diag);
  if (st != FX_OK)
    return st;
  json_object *times = NULL;
  if (!json_object_object_get_ex (reply, "times_ms", &times) || !json_object_is_type (times, json_type_array)
      || json_object_array_length (times) != (size_t) repeat)
    {
      json_object_put (reply);
      return fx_diag_set (diag, FX_ERR_BACKEND, "torch worker: bench returned no %d timings", repeat);
    }
  for (int i = 0; i < repeat; i++)
    times_ms[i] = json_object_get_double (json_object_array_get_idx (times, (size_t) i));
  if (peak_bytes)
    *peak_bytes = (size_t) jdouble (reply, "peak_bytes");
  json_object *jt = NULL;
  bool events = json_object_object_get_ex (reply, "cuda_events", &jt) && json_object_get_boolean (jt);
  c->timing = events ? "CUDA events around each call in torch, inputs resident on the device"
                     : "wall clock of each call in torch (inputs in the worker)";
  json_object *node_ms = NULL;
  if (json_object_object_get_ex (reply, "node_ms", &node_ms) && json_object_is_type (node_ms, json_type_object))
    for (size_t i = 0; i < c->n_kernels; i++)
      {
        fx_kernel_info *k = &c->kernels[i];
        json_object *t = NULL;
        if (k->n_nodes == 1 && strncmp (k->name, "eager:", 6) == 0
            && json_object_object_get_ex (node_ms, k->nodes[0], &t))
          k->time_ms = json_object_get_double (t);
      }
  st = outputs_from_json (reply, arena, outputs, n_outputs, diag);
  json_object_put (reply);
  return st;
}

const fx_backend fx_torch_backend = {
  .name = "torch",
  .description = "runs the graph through an installed PyTorch in a worker process (eager, or torch.compile with "
                 "a backend, mode and options where the torch has it); only graphs whose every call is on its "
                 "allowlist (ATen ops of the engine's op table, listed torch functions, operator and Tensor "
                 "methods)",
  .tags = NULL,
  .options = torch_options,
  .n_options = sizeof torch_options / sizeof torch_options[0],
  .modes = fx_plain_modes,   /* the mode text itself goes to torch.compile(mode=...) */
  .n_modes = sizeof fx_plain_modes / sizeof fx_plain_modes[0],
  .compile = torch_compile,
  .run = torch_run,
  .release = torch_release,
  .bench = torch_bench,
};
