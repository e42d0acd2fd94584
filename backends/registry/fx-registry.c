/* fx-registry.c: the backend registry (register, look up with PyTorch's InvalidBackend message, list without the
   debug/experimental tags), compiled objects (kernels, artifacts, timed compile) and composed fallback backends. */
#include "registry/fx-registry.h"
#include "registry/fx-backend-kit.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { REGISTRY_MAX = 128 };

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static const fx_backend *registry[REGISTRY_MAX];
static size_t registry_n;

bool
fx_backend_has_tag (const fx_backend *backend, const char *tag)
{
  for (size_t i = 0; backend->tags && backend->tags[i]; i++)
    if (strcmp (backend->tags[i], tag) == 0)
      return true;
  return false;
}

static const fx_backend *
find_locked (const char *name)
{
  for (size_t i = 0; i < registry_n; i++)
    if (strcmp (registry[i]->name, name) == 0)
      return registry[i];
  return NULL;
}

/* A name becomes a kernel name, an option prefix and a table cell: keep it to identifier-ish characters. */
static bool
valid_name (const char *name)
{
  if (name == NULL || *name == '\0' || strlen (name) > 63)
    return false;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'
          || *p == '-' || *p == '.'))
      return false;
  return true;
}

fx_status
fx_backend_register (const fx_backend *backend, fx_diag *diag)
{
  if (backend == NULL || !valid_name (backend->name))
    return fx_diag_set (diag, FX_ERR_INVALID, "a backend name must be 1-63 letters, digits, '_', '-' or '.' (got '%s')",
                        backend && backend->name ? backend->name : "(null)");
  if (backend->compile == NULL || backend->run == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "backend '%s' has no compile or run function", backend->name);
  if (backend->size != 0 && backend->size < offsetof (fx_backend, size) + sizeof backend->size)
    return fx_diag_set (diag, FX_ERR_INVALID, "backend '%s' gives a size (%zu) smaller than the first layout",
                        backend->name, backend->size);
  pthread_mutex_lock (&registry_lock);
  fx_status st = FX_OK;
  if (find_locked (backend->name))
    st = fx_diag_set (diag, FX_ERR_INVALID, "duplicate name: %s", backend->name);
  else if (registry_n == REGISTRY_MAX)
    st = fx_diag_set (diag, FX_ERR_INVALID, "too many backends (%d)", REGISTRY_MAX);
  else
    registry[registry_n++] = backend;
  pthread_mutex_unlock (&registry_lock);
  return st;
}

size_t
fx_backend_registered_count (void)
{
  pthread_mutex_lock (&registry_lock);
  size_t n = registry_n;
  pthread_mutex_unlock (&registry_lock);
  return n;
}

void
fx_backend_unregister_from (size_t count)
{
  pthread_mutex_lock (&registry_lock);
  if (count < registry_n)
    registry_n = count;
  pthread_mutex_unlock (&registry_lock);
}

static int
cmp_backend_name (const void *a, const void *b)
{
  return strcmp ((*(const fx_backend *const *) a)->name, (*(const fx_backend *const *) b)->name);
}

static const char *const no_settings[] = { NULL };
const fx_mode_decl fx_plain_modes[4] = {
  { "default", no_settings },
  { "reduce-overhead", no_settings },
  { "max-autotune", no_settings },
  { "max-autotune-no-cudagraphs", no_settings },
};

size_t
fx_backend_list (bool include_hidden, const fx_backend **out, size_t max)
{
  const fx_backend *all[REGISTRY_MAX];
  size_t n = 0;
  pthread_mutex_lock (&registry_lock);
  for (size_t i = 0; i < registry_n; i++)
    if (include_hidden
        || (!fx_backend_has_tag (registry[i], "debug") && !fx_backend_has_tag (registry[i], "experimental")))
      all[n++] = registry[i];
  pthread_mutex_unlock (&registry_lock);
  qsort (all, n, sizeof all[0], cmp_backend_name);
  for (size_t i = 0; i < n && i < max; i++)
    out[i] = all[i];
  return n;
}

const fx_backend *
fx_backend_lookup (const char *name, fx_diag *diag)
{
  if (name == NULL)
    name = "";
  pthread_mutex_lock (&registry_lock);
  const fx_backend *b = find_locked (name);
  pthread_mutex_unlock (&registry_lock);
  if (b)
    return b;
  const fx_backend *all[REGISTRY_MAX];
  size_t n = fx_backend_list (true, all, REGISTRY_MAX);
  fx_buf known;
  fx_buf_init (&known);
  for (size_t i = 0; i < n; i++)
    fx_buf_printf (&known, "%s%s", i ? ", " : "", all[i]->name);
  fx_diag_set (diag, FX_ERR_NOT_FOUND,
               "Invalid backend: '%s', see `fxwb backends` for available backends (known: %s).", name, known.data);
  fx_buf_free (&known);
  return NULL;
}

/* ---------------------------------------------------------------- compiled objects */

fx_kernel_info *
fx_compiled_add_kernel (fx_compiled *c, const char *name, const char *kind, const char *language,
                        const char *source)
{
  fx_kernel_info *k = fx_arena_alloc (c->arena, sizeof (fx_kernel_info) * (c->n_kernels + 1));
  if (c->n_kernels)
    memcpy (k, c->kernels, sizeof (fx_kernel_info) * c->n_kernels);
  c->kernels = k;
  fx_kernel_info *ki = &k[c->n_kernels++];
  memset (ki, 0, sizeof *ki);
  ki->name = fx_arena_strdup (c->arena, name ? name : "?");
  ki->kind = fx_arena_strdup (c->arena, kind ? kind : "?");
  ki->language = fx_arena_strdup (c->arena, language);
  ki->source = fx_arena_strdup (c->arena, source);
  ki->device.type = FX_DEVICE_CPU;
  ki->device.index = -1;
  ki->time_ms = -1;
  return ki;
}

void
fx_kernel_add_node (fx_compiled *c, fx_kernel_info *kernel, const char *node_name)
{
  kernel->nodes = fx_arena_strv_append (c->arena, kernel->nodes, &kernel->n_nodes, node_name);
}

void
fx_compiled_add_artifact (fx_compiled *c, const char *name, const char *kind, const char *text, size_t len)
{
  fx_artifact *a = fx_arena_alloc (c->arena, sizeof (fx_artifact) * (c->n_artifacts + 1));
  if (c->n_artifacts)
    memcpy (a, c->artifacts, sizeof (fx_artifact) * c->n_artifacts);
  c->artifacts = a;
  fx_artifact *ai = &a[c->n_artifacts++];
  ai->name = fx_arena_strdup (c->arena, name);
  ai->kind = fx_arena_strdup (c->arena, kind ? kind : "text");
  ai->text = fx_arena_strndup (c->arena, text ? text : "", text ? len : 0);
  ai->len = text ? len : 0;
}

void
fx_compiled_free (fx_compiled *c)
{
  if (c == NULL)
    return;
  if (c->backend && c->backend->release && c->impl)
    c->backend->release (c);
  c->impl = NULL;
  fx_buf_free (&c->notes);
  fx_arena_free (c->arena);
  free (c);
}

void
fx_compiled_release_runtime (fx_compiled *c)
{
  if (c == NULL || c->released)
    return;
  if (c->backend && c->backend->release && c->impl)
    c->backend->release (c);
  c->impl = NULL;
  c->released = true;
}

/* A refusal for a compiled object that cannot run (or NULL: it can). */
static fx_status
check_runnable (const fx_compiled *c, const char *what, fx_diag *diag)
{
  if (c == NULL || c->backend == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "%s of a graph that did not compile", what);
  if (c->source_only)
    return fx_diag_set (diag, FX_ERR_INVALID, "backend '%s' only generated this code: it was not built",
                        c->backend->name);
  if (c->released)
    return fx_diag_set (diag, FX_ERR_INVALID, "%s of a compiled graph of backend '%s' after its runtime was released",
                        what, c->backend->name);
  return FX_OK;
}

static fx_device
inputs_device (const fx_value *inputs, size_t n)
{
  fx_device d = { .type = FX_DEVICE_CPU, .index = -1 };
  for (size_t i = 0; i < n; i++)
    if (inputs[i].kind == FX_VALUE_TENSOR && inputs[i].u.t)
      return inputs[i].u.t->device;
  return d;
}

/* Resolves the options once (kept on the compiled object), then compiles or (GENERATE) generates; times it. */
static fx_status
compile_with (const fx_backend *backend, bool generate, const fx_graph *graph, const fx_value *example_inputs,
              size_t n_inputs, const char *mode, const fx_option_kv *options, size_t n_options, fx_compiled **out,
              fx_diag *diag)
{
  *out = NULL;
  if (backend == NULL)
    return fx_diag_set (diag, FX_ERR_INVALID, "no backend");
  if (generate && !FX_BACKEND_HAS (backend, generate))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "backend '%s' cannot generate code without compiling it",
                        backend->name);
  fx_compiled *c = calloc (1, sizeof *c);
  if (c == NULL)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  c->backend = backend;
  c->arena = fx_arena_new ();
  fx_buf_init (&c->notes);
  c->mode = fx_arena_strdup (c->arena, mode ? mode : "default");
  fx_options *opts = fx_arena_alloc (c->arena, sizeof *opts);
  fx_status st = fx_backend_resolve_options (backend, mode, options, n_options, c->arena, opts, diag);
  c->options = opts;
  if (st == FX_OK)
    {
      fx_compile_request req;
      memset (&req, 0, sizeof req);
      req.graph = graph;
      req.example_inputs = example_inputs;
      req.n_inputs = n_inputs;
      req.mode = c->mode;
      req.options = opts;
      req.device = inputs_device (example_inputs, n_inputs);
      double t0 = fx_now_ms ();
      c->compile_ms = -1;
      st = (generate ? backend->generate : backend->compile) (backend, &req, c, diag);
      /* A backend that measured its own compile (a subprocess: without its start-up) keeps its figure. */
      if (c->compile_ms < 0)
        c->compile_ms = fx_now_ms () - t0;
      if (st != FX_OK && diag && diag->message[0] && strncmp (diag->message, backend->name, strlen (backend->name)))
        {
          /* Say which backend failed: "backend 'inductor' failed: ..." as torch's BackendCompilerFailed does. */
          char msg[sizeof diag->message + 96];
          snprintf (msg, sizeof msg, "backend='%s' raised:\n%s", backend->name, diag->message);
          memcpy (diag->message, msg, sizeof diag->message - 1);
          diag->message[sizeof diag->message - 1] = '\0';
        }
    }
  if (st != FX_OK)
    {
      if (diag && diag->code == FX_OK)
        fx_diag_set (diag, st, "backend '%s' failed to compile", backend->name);
      fx_compiled_free (c);
      return st;
    }
  c->source_only = generate;
  *out = c;
  return FX_OK;
}

fx_status
fx_backend_compile (const fx_backend *backend, const fx_graph *graph, const fx_value *example_inputs,
                    size_t n_inputs, const char *mode, const fx_option_kv *options, size_t n_options,
                    fx_compiled **out, fx_diag *diag)
{
  return compile_with (backend, false, graph, example_inputs, n_inputs, mode, options, n_options, out, diag);
}

fx_status
fx_backend_generate (const fx_backend *backend, const fx_graph *graph, const fx_value *example_inputs,
                     size_t n_inputs, const char *mode, const fx_option_kv *options, size_t n_options,
                     fx_compiled **out, fx_diag *diag)
{
  return compile_with (backend, true, graph, example_inputs, n_inputs, mode, options, n_options, out, diag);
}

fx_status
fx_compiled_profile (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int repeat, fx_diag *diag)
{
  fx_status st = check_runnable (c, "profile", diag);
  if (st != FX_OK)
    return st;
  if (!FX_BACKEND_HAS (c->backend, profile))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "backend '%s' does not time its kernels", c->backend->name);
  return c->backend->profile (c, inputs, n_inputs, repeat < 1 ? 1 : repeat, diag);
}

fx_status
fx_compiled_write_artifacts (const fx_compiled *c, const char *dir, fx_diag *diag)
{
  if (c->released)
    return fx_diag_set (diag, FX_ERR_INVALID, "artifacts of a compiled graph of backend '%s' after its runtime was "
                        "released", c->backend ? c->backend->name : "?");
  if (c->backend && FX_BACKEND_HAS (c->backend, write_artifacts))
    return c->backend->write_artifacts (c, dir, diag);
  if (mkdir (dir, 0755) != 0 && errno != EEXIST)
    return fx_diag_set (diag, FX_ERR_IO, "cannot create %s: %s", dir, strerror (errno));
  for (size_t i = 0; i < c->n_artifacts; i++)
    {
      const fx_artifact *a = &c->artifacts[i];
      /* artifact names come from backends, plugins included: never a path out of dir */
      if (a->name[0] == '\0' || strchr (a->name, '/') || a->name[0] == '.')
        continue;
      char path[2048];
      snprintf (path, sizeof path, "%s/%s", dir, a->name);
      FILE *f = fopen (path, "w");
      if (f == NULL)
        return fx_diag_set (diag, FX_ERR_IO, "cannot write %s: %s", path, strerror (errno));
      bool ok = fwrite (a->text, 1, a->len, f) == a->len;
      ok &= fclose (f) == 0;
      if (!ok)
        return fx_diag_set (diag, FX_ERR_IO, "cannot write %s: %s", path, strerror (errno));
    }
  return FX_OK;
}

bool
fx_compiled_format_source (const fx_compiled *c, fx_buf *out)
{
  /* C for the CPU, CUDA for a GPU compile, PyTorch's output code for the torch backend; then the launch wrapper
     of a GPU compile */
  static const char *const names[] = { "output_code.c", "output_code.cu", "output_code.py", "cuda_wrapper.txt" };
  size_t shown = 0;
  for (size_t j = 0; j < sizeof names / sizeof names[0]; j++)
    for (size_t i = 0; i < c->n_artifacts; i++)
      if (strcmp (c->artifacts[i].name, names[j]) == 0)
        {
          if (shown++)
            fx_buf_printf (out, "\n# ---- %s\n", names[j]);
          fx_buf_append (out, c->artifacts[i].text, c->artifacts[i].len);
        }
  return shown > 0;
}

void
fx_compiled_copy_listing (fx_compiled *dst, const fx_compiled *src)
{
  for (size_t k = 0; k < src->n_kernels; k++)
    {
      const fx_kernel_info *from = &src->kernels[k];
      fx_kernel_info *ki = fx_compiled_add_kernel (dst, from->name, from->kind, from->language, from->source);
      ki->device = from->device;
      ki->time_ms = from->time_ms;
      for (size_t j = 0; j < from->n_nodes; j++)
        fx_kernel_add_node (dst, ki, from->nodes[j]);
    }
  for (size_t a = 0; a < src->n_artifacts; a++)
    fx_compiled_add_artifact (dst, src->artifacts[a].name, src->artifacts[a].kind, src->artifacts[a].text,
                              src->artifacts[a].len);
  fx_buf_append (&dst->notes, src->notes.data, src->notes.len);
}

fx_status
fx_compiled_run (fx_compiled *compiled, const fx_value *inputs, size_t n_inputs, fx_arena *arena,
                 fx_value **outputs, size_t *n_outputs, fx_diag *diag)
{
  *outputs = NULL;
  *n_outputs = 0;
  fx_status st = check_runnable (compiled, "run", diag);
  if (st != FX_OK)
    return st;
  return compiled->backend->run (compiled, inputs, n_inputs, arena, outputs, n_outputs, diag);
}

/* ---------------------------------------------------------------- composition */

typedef struct fallback_data
{
  char **chain;
  size_t n_chain;
  bool verify;
} fallback_data;

typedef struct fallback_impl
{
  fx_compiled *inner;
} fallback_impl;

static const char *const fallback_tags[] = { "experimental", NULL };

static fx_status
outputs_match_interpreter (fx_compiled *inner, const fx_compile_request *req, fx_diag *diag)
{
  fx_arena *arena = fx_arena_new ();
  fx_value *ref = NULL, *res = NULL;
  size_t n_ref = 0, n_res = 0;
  fx_interp_opts io;
  memset (&io, 0, sizeof io);
  io.gen = req->gen;
  fx_status st = fx_interp_run (req->graph, req->example_inputs, req->n_inputs, &io, arena, &ref, &n_ref, diag);
  if (st == FX_OK)
    st = fx_compiled_run (inner, req->example_inputs, req->n_inputs, arena, &res, &n_res, diag);
  if (st == FX_OK)
    {
      fx_same_opts so;
      fx_same_opts_init (&so);
      fx_same_report rep;
      if (n_ref != n_res)
        st = fx_diag_set (diag, FX_ERR_BACKEND, "returned %zu outputs, the interpreter %zu", n_res, n_ref);
      else if (!fx_same_values (ref, res, NULL, n_ref, &so, &rep))
        st = fx_diag_set (diag, FX_ERR_BACKEND, "outputs differ from the interpreter: %s", rep.message);
    }
  for (size_t i = 0; i < n_ref; i++)
    fx_value_clear (&ref[i]);
  for (size_t i = 0; i < n_res; i++)
    fx_value_clear (&res[i]);
  fx_arena_free (arena);
  return st;
}

static fx_status
fallback_compile (const fx_backend *self, const fx_compile_request *req, fx_compiled *out, fx_diag *diag)
{
  const fallback_data *fd = self->user_data;
  fx_buf why;
  fx_buf_init (&why);
  for (size_t i = 0; i < fd->n_chain; i++)
    {
      fx_diag d;
      fx_diag_clear (&d);
      const fx_backend *b = fx_backend_lookup (fd->chain[i], &d);
      fx_compiled *inner = NULL;
      fx_status st = b ? fx_backend_compile (b, req->graph, req->example_inputs, req->n_inputs, req->mode, NULL, 0,
                                             &inner, &d)
                       : d.code;
      if (st == FX_OK && fd->verify)
        {
          st = outputs_match_interpreter (inner, req, &d);
          if (st != FX_OK)
            {
              fx_compiled_free (inner);
              inner = NULL;
            }
        }
      if (st == FX_OK)
        {
          fallback_impl *impl = calloc (1, sizeof *impl);
          impl->inner = inner;
          out->impl = impl;
          fx_buf_append (&out->notes, why.data, why.len);
          fx_buf_printf (&out->notes, "%s: using '%s'\n", self->name, fd->chain[i]);
          /* The chosen backend's kernels and artifacts are the composed one's. */
          fx_compiled_copy_listing (out, inner);
          fx_buf_free (&why);
          return FX_OK;
        }
      fx_buf_printf (&why, "%s: '%s' failed: %s\n", self->name, fd->chain[i], d.message);
    }
  fx_status st = fx_diag_set (diag, FX_ERR_BACKEND, "every backend of '%s' failed:\n%s", self->name,
                              why.data ? why.data : "");
  fx_buf_free (&why);
  return st;
}

static fx_status
fallback_run (fx_compiled *c, const fx_value *inputs, size_t n_inputs, fx_arena *arena, fx_value **outputs,
              size_t *n_outputs, fx_diag *diag)
{
  fallback_impl *impl = c->impl;
  return fx_compiled_run (impl->inner, inputs, n_inputs, arena, outputs, n_outputs, diag);
}

static fx_status
fallback_bench (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int warmup, int repeat, fx_arena *arena,
                double *times_ms, fx_value **outputs, size_t *n_outputs, size_t *peak_bytes, fx_diag *diag)
{
  fallback_impl *impl = c->impl;
  const fx_backend *b = impl->inner->backend;
  if (b->bench)
    return b->bench (impl->inner, inputs, n_inputs, warmup, repeat, arena, times_ms, outputs, n_outputs, peak_bytes,
                     diag);
  /* fx_run_backend times run() itself on this answer. */
  return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "no bench hook");
}

/* Per-kernel times of the chosen backend, copied onto the composed object's kernels (the same list). */
static fx_status
fallback_profile (fx_compiled *c, const fx_value *inputs, size_t n_inputs, int repeat, fx_diag *diag)
{
  fallback_impl *impl = c->impl;
  return fx_wrap_profile (c, impl->inner, fx_compiled_profile, inputs, n_inputs, repeat, diag);
}

static void
fallback_release (fx_compiled *c)
{
  fallback_impl *impl = c->impl;
  fx_compiled_free (impl->inner);
  free (impl);
}


/* Every fallback backend but its name and chain (user_data). */
static const fx_backend fallback_backend = {
  .description = "tries each backend in turn and keeps the first that compiles",
  .tags = fallback_tags,
  .modes = fx_plain_modes,
  .n_modes = sizeof fx_plain_modes / sizeof fx_plain_modes[0],
  .compile = fallback_compile,
  .run = fallback_run,
  .release = fallback_release,
  .bench = fallback_bench,
  .profile = fallback_profile,
  .size = sizeof (fx_backend),
};

fx_backend *
fx_backend_new_fallback (const char *name, const char *const *chain, size_t n_chain, bool verify)
{
  fx_backend *b = malloc (sizeof *b);
  fallback_data *fd = calloc (1, sizeof *fd);
  fd->chain = calloc (n_chain + 1, sizeof (char *));
  for (size_t i = 0; i < n_chain; i++)
    fd->chain[i] = strdup (chain[i]);
  fd->n_chain = n_chain;
  fd->verify = verify;
  *b = fallback_backend;
  b->name = strdup (name);
  b->user_data = fd;
  return b;
}


void
fx_backend_free_fallback (fx_backend *b)
{
  if (b == NULL)
    return;
  fallback_data *fd = b->user_data;
  for (size_t i = 0; i < fd->n_chain; i++)
    free (fd->chain[i]);
  free (fd->chain);
  free (fd);
  free ((char *) b->name);
  free (b);
}
