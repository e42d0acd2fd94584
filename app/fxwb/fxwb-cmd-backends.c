/* fxwb-cmd-backends.c: `fxwb backends [NAME]`: the registered backends (list_backends), their options
   (list_options) and modes (list_mode_options), and plugins that failed to load. */
#include "fxwb.h"

#include <string.h>

#include "registry/fx-registry.h"

static void
print_backend (const fx_backend *b, gboolean options, gboolean modes)
{
  printf ("%-12s %s", b->name, b->description ? b->description : "");
  for (size_t t = 0; b->tags && b->tags[t]; t++)
    printf ("%s%s%s", t ? ", " : " [", b->tags[t], b->tags[t + 1] ? "" : "]");
  printf ("\n");
  if (options)
    {
      fx_buf out;
      fx_buf_init (&out);
      fx_backend_list_options (b, &out);
      if (out.len)
        {
          printf ("  options:\n");
          g_auto (GStrv) lines = g_strsplit (out.data, "\n", -1);
          for (int i = 0; lines[i] && lines[i][0]; i++)
            printf ("    %s\n", lines[i]);
        }
      else
        printf ("  options: none\n");
      fx_buf_free (&out);
    }
  if (modes)
    {
      fx_buf out;
      fx_buf_init (&out);
      fx_backend_list_mode_options (b, NULL, &out, NULL);
      printf ("  modes:\n");
      g_auto (GStrv) lines = g_strsplit (out.data ? out.data : "", "\n", -1);
      for (int i = 0; lines[i] && lines[i][0]; i++)
        printf ("    %s\n", lines[i]);
      fx_buf_free (&out);
    }
}

static json_object *
backend_json (const fx_backend *b)
{
  json_object *o = json_object_new_object ();
  fxwb_json_add_str (o, "name", b->name);
  fxwb_json_add_str (o, "description", b->description);
  json_object *tags = json_object_new_array ();
  for (size_t t = 0; b->tags && b->tags[t]; t++)
    json_object_array_add (tags, fxwb_json_str (b->tags[t]));
  json_object_object_add (o, "tags", tags);
  json_object *options = json_object_new_array ();
  for (size_t i = 0; i < b->n_options; i++)
    {
      const fx_option_decl *d = &b->options[i];
      json_object *opt = json_object_new_object ();
      fxwb_json_add_str (opt, "name", d->name);
      fxwb_json_add_str (opt, "type", fx_option_type_name (d->type));
      fxwb_json_add_str (opt, "default", d->default_text);
      fxwb_json_add_str (opt, "doc", d->doc);
      json_object_array_add (options, opt);
    }
  json_object_object_add (o, "options", options);
  json_object *modes = json_object_new_object ();
  size_t n_modes = b->n_modes ? b->n_modes : 1;
  for (size_t m = 0; m < n_modes; m++)
    {
      const char *mode = b->n_modes ? b->modes[m].mode : "default";
      fx_buf out;
      fx_buf_init (&out);
      fx_backend_list_mode_options (b, mode, &out, NULL);
      fxwb_json_add_str (modes, mode, out.data ? out.data : "{}");
      fx_buf_free (&out);
    }
  json_object_object_add (o, "modes", modes);
  return o;
}

int
fxwb_cmd_backends (int argc, char **argv)
{
  gboolean all = FALSE, options = FALSE, modes = FALSE, json = FALSE;
  GOptionEntry entries[] = {
    { "all", 'a', 0, G_OPTION_ARG_NONE, &all, "Also the backends tagged debug or experimental", NULL },
    { "options", 'o', 0, G_OPTION_ARG_NONE, &options, "List each backend's options (name, type, default, doc)",
      NULL },
    { "modes", 'm', 0, G_OPTION_ARG_NONE, &modes, "List each backend's modes and the options they set", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb backends", "[NAME] - list backends, their options and modes", entries,
                               "Backends are built in (eager, aot_eager, inductor, torch) or plugins: shared objects\n"
                               "exporting fx_backend_plugin_init, found in $FXWB_BACKEND_PATH (':'-separated\n"
                               "folders) and ~/.local/share/fx-workbench/backends. With NAME, that backend's\n"
                               "options and modes.",
                               "Exit status:\n  0  listed\n  1  NAME is not a backend\n"
                               "  2  wrong command line\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  if (argc > 2)
    {
      fprintf (stderr, "fxwb backends: one NAME at most\n");
      return FXWB_EXIT_USAGE;
    }
  const fx_backend *list[128];
  size_t n;
  if (argc == 2)
    {
      fx_diag diag;
      fx_diag_clear (&diag);
      list[0] = fx_backend_lookup (argv[1], &diag);
      if (list[0] == NULL)
        {
          fprintf (stderr, "fxwb backends: %s\n", diag.message);
          return FXWB_EXIT_FAILURE;
        }
      n = 1;
      options = modes = TRUE;
    }
  else
    {
      n = fx_backend_list (all, list, G_N_ELEMENTS (list));
      if (n > G_N_ELEMENTS (list))
        n = G_N_ELEMENTS (list);
    }
  const fx_plugin_error *errors = NULL;
  size_t n_errors = fx_backend_load_plugins (false, &errors);
  if (json)
    {
      json_object *root = json_object_new_object ();
      json_object *backends = json_object_new_array ();
      for (size_t i = 0; i < n; i++)
        json_object_array_add (backends, backend_json (list[i]));
      json_object_object_add (root, "backends", backends);
      json_object *errs = json_object_new_array ();
      for (size_t i = 0; i < n_errors; i++)
        {
          json_object *e = json_object_new_object ();
          fxwb_json_add_str (e, "path", errors[i].path);
          fxwb_json_add_str (e, "error", errors[i].message);
          json_object_array_add (errs, e);
        }
      json_object_object_add (root, "plugin_errors", errs);
      fxwb_json_print (root);
      return FXWB_EXIT_OK;
    }
  for (size_t i = 0; i < n; i++)
    print_backend (list[i], options, modes);
  if (!all && argc < 2)
    {
      const fx_backend *every[128];
      size_t n_all = fx_backend_list (true, every, G_N_ELEMENTS (every));
      if (n_all > n)
        printf ("(%zu more tagged debug or experimental: fxwb backends --all)\n", n_all - n);
    }
  for (size_t i = 0; i < n_errors; i++)
    fprintf (stderr, "fxwb backends: plugin not loaded: %s\n", errors[i].message);
  return FXWB_EXIT_OK;
}
