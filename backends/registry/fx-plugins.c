/* fx-plugins.c: backend plugins, the analogue of the torch_dynamo_backends entry-point group: shared objects in
   $FXWB_BACKEND_PATH and the per-user folder, each exporting fx_backend_plugin_init. A plugin that does not load,
   lacks the entry point or fails its init is recorded with the reason; the rest keeps working. */
#include "registry/fx-registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { PLUGIN_ERRORS_MAX = 64 };

static pthread_mutex_t plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static fx_plugin_error plugin_errors[PLUGIN_ERRORS_MAX];
static size_t plugin_n_errors;
static bool plugins_scanned;
/* Paths loaded successfully (not loaded twice on a rescan). */
static char *loaded_paths[PLUGIN_ERRORS_MAX];
static size_t loaded_n;

static void
graph_print_tabular_shim (const fx_graph *graph, fx_buf *out)
{
  fx_graph_print_tabular (graph, out);
}

static const fx_plugin_api plugin_api = {
  .abi_version = FX_PLUGIN_ABI_VERSION,
  .size = sizeof (fx_plugin_api),
  .register_backend = fx_backend_register,
  .lookup_backend = fx_backend_lookup,
  .graph_print_tabular = graph_print_tabular_shim,
  .buf_free = fx_buf_free,
  .compile = fx_backend_compile,
  .run = fx_compiled_run,
  .compiled_free = fx_compiled_free,
  .diag_set = fx_diag_set,
  .generate = fx_backend_generate,
  .profile = fx_compiled_profile,
  .write_artifacts = fx_compiled_write_artifacts,
  .compiled_copy_listing = fx_compiled_copy_listing,
  .buf_printf = fx_buf_printf,
};

static void
record_error (const char *path, const char *message)
{
  if (plugin_n_errors == PLUGIN_ERRORS_MAX)
    return;
  fx_plugin_error *e = &plugin_errors[plugin_n_errors++];
  snprintf (e->path, sizeof e->path, "%.*s", (int) sizeof e->path - 1, path);
  snprintf (e->message, sizeof e->message, "%.*s", (int) sizeof e->message - 1, message);
}

static bool
already_loaded (const char *path)
{
  for (size_t i = 0; i < loaded_n; i++)
    if (strcmp (loaded_paths[i], path) == 0)
      return true;
  return false;
}

/* Called with plugin_lock held. */
static fx_status
load_one (const char *path, fx_diag *diag)
{
  if (already_loaded (path))
    return FX_OK;
  dlerror ();
  void *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    {
      const char *why = dlerror ();
      return fx_diag_set (diag, FX_ERR_BACKEND, "cannot load backend plugin %s: %s", path, why ? why : "dlopen failed");
    }
  /* dlsym gives a void *; the entry point is a function (POSIX guarantees the conversion works). */
  void *sym = dlsym (handle, FX_BACKEND_PLUGIN_ENTRY);
  if (sym == NULL)
    {
      dlclose (handle);
      return fx_diag_set (diag, FX_ERR_BACKEND, "backend plugin %s has no entry point %s()", path,
                          FX_BACKEND_PLUGIN_ENTRY);
    }
  fx_backend_plugin_init_fn init;
  memcpy (&init, &sym, sizeof init);
  size_t before = fx_backend_registered_count ();
  int rc = init (&plugin_api);
  if (rc != 0)
    {
      /* Whatever it registered points into the library we are about to close. */
      fx_backend_unregister_from (before);
      dlclose (handle);
      return fx_diag_set (diag, FX_ERR_BACKEND, "backend plugin %s: %s() returned %d", path, FX_BACKEND_PLUGIN_ENTRY,
                          rc);
    }
  if (fx_backend_registered_count () == before)
    {
      dlclose (handle);
      return fx_diag_set (diag, FX_ERR_BACKEND, "backend plugin %s registered no backend", path);
    }
  /* Registered backends live in the library: it stays loaded for the life of the process. */
  if (loaded_n < PLUGIN_ERRORS_MAX)
    loaded_paths[loaded_n++] = strdup (path);
  return FX_OK;
}

fx_status
fx_backend_load_plugin (const char *path, fx_diag *diag)
{
  pthread_mutex_lock (&plugin_lock);
  fx_status st = load_one (path, diag);
  pthread_mutex_unlock (&plugin_lock);
  return st;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
scan_dir (const char *dir)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return;   /* a missing folder is normal (no plugins installed) */
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      size_t len = strlen (e->d_name);
      if (len < 4 || strcmp (e->d_name + len - 3, ".so") != 0 || e->d_name[0] == '.')
        continue;
      if (n == cap)
        {
          cap = cap ? cap * 2 : 16;
          names = realloc (names, cap * sizeof *names);
        }
      names[n++] = strdup (e->d_name);
    }
  closedir (d);
  /* Sorted: the load order (and so which of two duplicate names wins) does not depend on the file system. */
  qsort (names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n; i++)
    {
      char path[1024];
      snprintf (path, sizeof path, "%s/%s", dir, names[i]);
      struct stat stt;
      if (stat (path, &stt) == 0 && S_ISREG (stt.st_mode))
        {
          fx_diag diag;
          fx_diag_clear (&diag);
          if (load_one (path, &diag) != FX_OK)
            record_error (path, diag.message);
        }
      free (names[i]);
    }
  free (names);
}

size_t
fx_backend_load_plugins (bool rescan, const fx_plugin_error **errors)
{
  pthread_mutex_lock (&plugin_lock);
  if (!plugins_scanned || rescan)
    {
      plugins_scanned = true;
      plugin_n_errors = 0;
      const char *path = getenv ("FXWB_BACKEND_PATH");
      if (path && *path)
        {
          char *copy = strdup (path);
          char *save = NULL;
          for (char *dir = strtok_r (copy, ":", &save); dir; dir = strtok_r (NULL, ":", &save))
            scan_dir (dir);
          free (copy);
        }
      char user_dir[1024];
      const char *data_home = getenv ("XDG_DATA_HOME");
      const char *home = getenv ("HOME");
      if (data_home && *data_home)
        snprintf (user_dir, sizeof user_dir, "%s/fx-workbench/backends", data_home);
      else if (home && *home)
        snprintf (user_dir, sizeof user_dir, "%s/.local/share/fx-workbench/backends", home);
      else
        user_dir[0] = '\0';
      if (user_dir[0])
        scan_dir (user_dir);
    }
  size_t n = plugin_n_errors;
  pthread_mutex_unlock (&plugin_lock);
  if (errors)
    *errors = plugin_errors;
  return n;
}
