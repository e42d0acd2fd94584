/* fx-options.c: backend options and modes as torch.compile treats them: declared options with types and defaults,
   modes that expand to option settings, user options validated against the declarations with PyTorch's messages
   ("Unexpected optimization option ...", "Unexpected type of attr ...", "Either mode or options ..."). */
#include "registry/fx-registry.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
fx_option_type_name (fx_option_type type)
{
  switch ((int) type)
    {
    case FX_OPTION_BOOL:
      return "bool";
    case FX_OPTION_INT:
      return "int";
    case FX_OPTION_FLOAT:
      return "float";
    case FX_OPTION_STRING:
      return "str";
    default:
      return "?";
    }
}

const fx_option_value *
fx_options_get (const fx_options *opts, const char *name)
{
  if (opts == NULL)
    return NULL;
  for (size_t i = 0; i < opts->n; i++)
    if (strcmp (opts->items[i].name, name) == 0)
      return &opts->items[i];
  return NULL;
}

bool
fx_options_get_bool (const fx_options *opts, const char *name, bool fallback)
{
  const fx_option_value *v = fx_options_get (opts, name);
  return v && v->type == FX_OPTION_BOOL ? v->b : fallback;
}

int64_t
fx_options_get_int (const fx_options *opts, const char *name, int64_t fallback)
{
  const fx_option_value *v = fx_options_get (opts, name);
  return v && v->type == FX_OPTION_INT ? v->i : fallback;
}

double
fx_options_get_float (const fx_options *opts, const char *name, double fallback)
{
  const fx_option_value *v = fx_options_get (opts, name);
  if (v && v->type == FX_OPTION_FLOAT)
    return v->f;
  if (v && v->type == FX_OPTION_INT)
    return (double) v->i;
  return fallback;
}

const char *
fx_options_get_str (const fx_options *opts, const char *name, const char *fallback)
{
  const fx_option_value *v = fx_options_get (opts, name);
  return v && v->type == FX_OPTION_STRING && v->s ? v->s : fallback;
}

/* Python repr of a str: single quotes unless the text has one and no double quote (as repr does). */
static void
put_py_str (fx_buf *out, const char *s)
{
  char q = strchr (s, '\'') && !strchr (s, '"') ? '"' : '\'';
  fx_buf_putc (out, q);
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    {
      if (*p == '\\' || *p == (unsigned char) q)
        fx_buf_printf (out, "\\%c", *p);
      else if (*p == '\n')
        fx_buf_puts (out, "\\n");
      else if (*p == '\t')
        fx_buf_puts (out, "\\t");
      else if (*p < 0x20 || *p == 0x7f)
        fx_buf_printf (out, "\\x%02x", *p);
      else
        fx_buf_putc (out, (char) *p);
    }
  fx_buf_putc (out, q);
}

static void
put_value (fx_buf *out, const fx_option_value *v)
{
  switch ((int) v->type)
    {
    case FX_OPTION_BOOL:
      fx_buf_puts (out, v->b ? "True" : "False");
      break;
    case FX_OPTION_INT:
      fx_buf_printf (out, "%lld", (long long) v->i);
      break;
    case FX_OPTION_FLOAT:
      {
        char tmp[64];
        snprintf (tmp, sizeof tmp, "%.17g", v->f);
        /* Shortest text that reads back, with a '.' so it stays a Python float. */
        for (int prec = 1; prec <= 17; prec++)
          {
            snprintf (tmp, sizeof tmp, "%.*g", prec, v->f);
            if (strtod (tmp, NULL) == v->f)
              break;
          }
        fx_buf_puts (out, tmp);
        if (isfinite (v->f) && !strpbrk (tmp, ".eE"))
          fx_buf_puts (out, ".0");
        break;
      }
    default:
      if (v->s == NULL)
        fx_buf_puts (out, "None");
      else
        put_py_str (out, v->s);
      break;
    }
}

void
fx_options_format (const fx_options *opts, bool explicit_only, fx_buf *out)
{
  fx_buf_putc (out, '{');
  bool first = true;
  for (size_t i = 0; opts && i < opts->n; i++)
    {
      if (explicit_only && !(opts->explicit_set && opts->explicit_set[i]))
        continue;
      if (!first)
        fx_buf_puts (out, ", ");
      first = false;
      put_py_str (out, opts->items[i].name);
      fx_buf_puts (out, ": ");
      put_value (out, &opts->items[i]);
    }
  fx_buf_putc (out, '}');
}

/* What Python type a text would have, for "got X should be Y". */
static const char *
text_py_type (const char *text)
{
  char *end;
  if (strcmp (text, "True") == 0 || strcmp (text, "False") == 0)
    return "bool";
  if (strcmp (text, "None") == 0)
    return "NoneType";
  errno = 0;
  (void) strtoll (text, &end, 10);
  if (*text && *end == '\0' && errno == 0)
    return "int";
  (void) strtod (text, &end);
  if (*text && *end == '\0')
    return "float";
  return "str";
}

/* Parses a Python-literal-ish text into a value of the declared type. */
static fx_status
parse_value (const fx_option_decl *d, const char *text, fx_arena *arena, fx_option_value *v, fx_diag *diag)
{
  v->name = d->name;
  v->type = d->type;
  char *end;
  switch ((int) d->type)
    {
    case FX_OPTION_BOOL:
      if (strcmp (text, "True") == 0 || strcmp (text, "true") == 0 || strcmp (text, "1") == 0)
        v->b = true;
      else if (strcmp (text, "False") == 0 || strcmp (text, "false") == 0 || strcmp (text, "0") == 0
               || strcmp (text, "None") == 0)
        v->b = false;   /* None: "not given" (torch.compile's dynamic=None); explicit_set tells them apart */
      else
        goto wrong;
      return FX_OK;
    case FX_OPTION_INT:
      if (strcmp (text, "None") == 0)
        {
          v->i = -1;
          return FX_OK;
        }
      errno = 0;
      v->i = strtoll (text, &end, 10);
      if (errno || *end || end == text)
        goto wrong;
      return FX_OK;
    case FX_OPTION_FLOAT:
      if (strcmp (text, "None") == 0)
        {
          v->f = NAN;
          return FX_OK;
        }
      errno = 0;
      v->f = strtod (text, &end);
      if (errno || *end || end == text)
        goto wrong;
      return FX_OK;
    default:
      {
        size_t n = strlen (text);
        if (strcmp (text, "None") == 0)
          v->s = NULL;
        else if (n >= 2 && (text[0] == '\'' || text[0] == '"') && text[n - 1] == text[0])
          v->s = fx_arena_strndup (arena, text + 1, n - 2);
        else
          v->s = fx_arena_strdup (arena, text);
        return FX_OK;
      }
    }
wrong:
  return fx_diag_set (diag, FX_ERR_INVALID, "Unexpected type of attr %s, got %s should be %s", d->name,
                      text_py_type (text), fx_option_type_name (d->type));
}

/* Edit distance, for "did you mean". */
static size_t
edit_distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  if (la > 128 || lb > 128)
    return (size_t) -1;
  size_t row[129];
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++)
    {
      size_t prev = row[0];
      row[0] = i;
      for (size_t j = 1; j <= lb; j++)
        {
          size_t cur = row[j];
          size_t sub = prev + (tolower ((unsigned char) a[i - 1]) != tolower ((unsigned char) b[j - 1]));
          size_t del = row[j] + 1, ins = row[j - 1] + 1;
          row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
          prev = cur;
        }
    }
  return row[lb];
}

static const char *
closest_option (const fx_backend *b, const char *key)
{
  const char *best = NULL;
  size_t best_d = (size_t) -1;
  for (size_t i = 0; i < b->n_options; i++)
    {
      size_t d = edit_distance (key, b->options[i].name);
      /* A known name that contains the key's last part ("threads" for "cpp.threads") is also a good guess. */
      const char *dot = strrchr (b->options[i].name, '.');
      if (dot && strcmp (dot + 1, key) == 0)
        d = 1;
      if (d < best_d)
        {
          best_d = d;
          best = b->options[i].name;
        }
    }
  size_t limit = strlen (key) / 3 + 2;
  return best_d <= limit ? best : NULL;
}

static const fx_mode_decl *
find_mode (const fx_backend *b, const char *mode)
{
  for (size_t i = 0; i < b->n_modes; i++)
    if (strcmp (b->modes[i].mode, mode) == 0)
      return &b->modes[i];
  return NULL;
}

static fx_status
unknown_mode (const fx_backend *b, const char *mode, fx_diag *diag)
{
  fx_buf names;
  fx_buf_init (&names);
  if (b->n_modes == 0)
    fx_buf_puts (&names, "default");
  for (size_t i = 0; i < b->n_modes; i++)
    fx_buf_printf (&names, "%s%s", i ? ", " : "", b->modes[i].mode);
  fx_status st = fx_diag_set (diag, FX_ERR_INVALID, "Unrecognized mode=%s, should be one of: %s", mode, names.data);
  fx_buf_free (&names);
  return st;
}

fx_status
fx_backend_list_mode_options (const fx_backend *backend, const char *mode, fx_buf *out, fx_diag *diag)
{
  if (mode == NULL)
    {
      if (backend->n_modes == 0)
        fx_buf_puts (out, "default: {}\n");
      for (size_t i = 0; i < backend->n_modes; i++)
        {
          fx_buf_printf (out, "%s: ", backend->modes[i].mode);
          fx_backend_list_mode_options (backend, backend->modes[i].mode, out, diag);
          fx_buf_putc (out, '\n');
        }
      return FX_OK;
    }
  const fx_mode_decl *m = find_mode (backend, mode);
  if (m == NULL)
    {
      if (strcmp (mode, "default") == 0)
        {
          fx_buf_puts (out, "{}");
          return FX_OK;
        }
      return unknown_mode (backend, mode, diag);
    }
  fx_buf_putc (out, '{');
  for (size_t k = 0; m->settings && m->settings[k]; k++)
    {
      const char *eq = strchr (m->settings[k], '=');
      fx_buf_printf (out, "%s'%.*s': %s", k ? ", " : "", (int) (eq ? eq - m->settings[k] : 0), m->settings[k],
                     eq ? eq + 1 : "True");
    }
  fx_buf_putc (out, '}');
  return FX_OK;
}

void
fx_backend_list_options (const fx_backend *backend, fx_buf *out)
{
  size_t w = 4;
  for (size_t i = 0; i < backend->n_options; i++)
    if (strlen (backend->options[i].name) > w)
      w = strlen (backend->options[i].name);
  for (size_t i = 0; i < backend->n_options; i++)
    {
      const fx_option_decl *d = &backend->options[i];
      fx_buf_printf (out, "%-*s  %-5s  %-8s  %s\n", (int) w, d->name, fx_option_type_name (d->type),
                     d->default_text, d->doc ? d->doc : "");
    }
}

static fx_status
apply_one (const fx_backend *b, const char *key_in, const char *value, fx_arena *arena, fx_options *out,
           fx_diag *diag)
{
  /* torch.compile accepts "max-autotune"-style keys: key.replace("-", "_"). */
  char *key = fx_arena_strdup (arena, key_in);
  for (char *p = key; *p; p++)
    if (*p == '-')
      *p = '_';
  for (size_t i = 0; i < b->n_options; i++)
    if (strcmp (b->options[i].name, key) == 0)
      {
        fx_status st = parse_value (&b->options[i], value, arena, &out->items[i], diag);
        if (st == FX_OK)
          out->explicit_set[i] = true;
        return st;
      }
  fx_buf known;
  fx_buf_init (&known);
  for (size_t j = 0; j < b->n_options; j++)
    fx_buf_printf (&known, "%s'%s'", j ? ", " : "", b->options[j].name);
  const char *near = closest_option (b, key);
  fx_status st;
  if (near)
    st = fx_diag_set (diag, FX_ERR_INVALID,
                      "Unexpected optimization option %s for backend '%s', did you mean '%s'? known options are [%s]",
                      key_in, b->name, near, known.data);
  else
    st = fx_diag_set (diag, FX_ERR_INVALID, "Unexpected optimization option %s for backend '%s', known options are [%s]",
                      key_in, b->name, known.data);
  fx_buf_free (&known);
  return st;
}

fx_status
fx_backend_resolve_options (const fx_backend *backend, const char *mode, const fx_option_kv *given, size_t n_given,
                            fx_arena *arena, fx_options *out, fx_diag *diag)
{
  memset (out, 0, sizeof *out);
  size_t n = backend->n_options;
  out->n = n;
  out->items = fx_arena_alloc (arena, sizeof (fx_option_value) * (n + 1));
  out->explicit_set = fx_arena_alloc (arena, sizeof (bool) * (n + 1));
  for (size_t i = 0; i < n; i++)
    if (parse_value (&backend->options[i], backend->options[i].default_text, arena, &out->items[i], diag) != FX_OK)
      return fx_diag_set (diag, FX_ERR_INVALID, "backend '%s' declares option %s with a bad default '%s'",
                          backend->name, backend->options[i].name, backend->options[i].default_text);
  /* `backend` (the torch backend's torch.compile(backend=...)) is an argument of its own, not one of the options;
     so is `device`, where the graph and its inputs live (the model's device in PyTorch, not a compile option):
     compare adds it to every column of a CUDA graph, modes included. */
  size_t n_real = 0;
  for (size_t k = 0; k < n_given; k++)
    if (given[k].key == NULL || (strcmp (given[k].key, "backend") != 0 && strcmp (given[k].key, "device") != 0))
      n_real++;
  if (mode && strcmp (mode, "default") != 0 && n_real > 0)
    return fx_diag_set (diag, FX_ERR_INVALID,
                        "Either mode or options can be specified, but both can't be specified at the same time.");
  if (mode && strcmp (mode, "default") != 0)
    {
      const fx_mode_decl *m = find_mode (backend, mode);
      if (m == NULL)
        return unknown_mode (backend, mode, diag);
      for (size_t k = 0; m->settings && m->settings[k]; k++)
        {
          const char *eq = strchr (m->settings[k], '=');
          if (eq == NULL)
            continue;
          char *key = fx_arena_strndup (arena, m->settings[k], (size_t) (eq - m->settings[k]));
          fx_status st = apply_one (backend, key, eq + 1, arena, out, diag);
          if (st != FX_OK)
            return st;
        }
    }
  for (size_t k = 0; k < n_given; k++)
    {
      if (given[k].key == NULL || given[k].value == NULL)
        return fx_diag_set (diag, FX_ERR_INVALID, "option %zu has no key or no value", k);
      fx_status st = apply_one (backend, given[k].key, given[k].value, arena, out, diag);
      if (st != FX_OK)
        return st;
    }
  return FX_OK;
}
