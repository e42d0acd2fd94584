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

static void
json_str (GString *s, const char *text)
{
  if (text == NULL)
    {
      g_string_append (s, "null");
      return;
    }
  g_autofree char *esc = g_strescape (text, NULL);
  g_string_append_printf (s, "\"%s\"", esc);
}

static void
backend_json (GString *s, const fx_backend *b)
{
  g_string_append (s, "{\"name\": ");
  json_str (s, b->name);
  g_string_append (s, ", \"description\": ");
  json_str (s, b->description);
  g_string_append (s, ", \"tags\": [");
  for (size_t t = 0; b->tags && b->tags[t]; t++)
    {
      if (t)
        g_string_append (s, ", ");
      json_str (s, b->tags[t]);
    }
  g_string_append (s, "], \"options\": [");
  for (size_t i = 0; i < b->n_options; i++)
    {
      const fx_option_decl *d = &b->options[i];
      g_string_append (s, i ? ", {\"name\": " : "{\"name\": ");
      json_str (s, d->name);
      g_string_append_printf (s, ", \"type\": \"%s\", \"default\": ", fx_option_type_name (d->type));
      json_str (s, d->default_text);
      g_string_append (s, ", \"doc\": ");
      json_str (s, d->doc);
      g_string_append (s, "}");
    }
  g_string_append (s, "], \"modes\": {");
  size_t n_modes = b->n_modes ? b->n_modes : 1;
  for (size_t m = 0; m < n_modes; m++)
    {
      const char *mode = b->n_modes ? b->modes[m].mode : "default";
      fx_buf out;
      fx_buf_init (&out);
      fx_backend_list_mode_options (b, mode, &out, NULL);
      if (m)
        g_string_append (s, ", ");
      json_str (s, mode);
      g_string_append (s, ": ");
      json_str (s, out.data ? out.data : "{}");
      fx_buf_free (&out);
    }
  g_string_append (s, "}}");
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
  g_set_prgname ("fxwb backends");
  g_autoptr (GOptionContext) context = g_option_context_new ("[NAME] - list backends, their options and modes");
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_summary (context,
                                "Backends are built in (eager, aot_eager, inductor, torch) or plugins: shared objects\n"
                                "exporting fx_backend_plugin_init, found in $FXWB_BACKEND_PATH (':'-separated\n"
                                "folders) and ~/.local/share/fx-workbench/backends. With NAME, that backend's\n"
                                "options and modes.");
  g_option_context_set_description (context, "Exit status:\n  0  listed\n  1  NAME is not a backend\n"
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
      GString *s = g_string_new ("{\"backends\": [");
      for (size_t i = 0; i < n; i++)
        {
          if (i)
            g_string_append (s, ",\n  ");
          backend_json (s, list[i]);
        }
      g_string_append (s, "], \"plugin_errors\": [");
      for (size_t i = 0; i < n_errors; i++)
        {
          g_string_append (s, i ? ", {\"path\": " : "{\"path\": ");
          json_str (s, errors[i].path);
          g_string_append (s, ", \"error\": ");
          json_str (s, errors[i].message);
          g_string_append (s, "}");
        }
      g_string_append (s, "]}");
      printf ("%s\n", s->str);
      g_string_free (s, TRUE);
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
