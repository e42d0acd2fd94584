/* fx-export-records.c: a torch.export trace's own records read back from the store: the guards export added
   (guard_added, guard_added_fast outside a compile) and its unbacked symbols, with the user line of each. */
#include "fx/export.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

static bool
is_library_file (const char *file, size_t len)
{
  static const char *const marks[] = { "site-packages/", "dist-packages/", "/torch/", "<string>", "<frozen" };
  for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++)
    {
      size_t ml = strlen (marks[k]);
      for (size_t i = 0; i + ml <= len; i++)
        if (memcmp (file + i, marks[k], ml) == 0)
          return true;
    }
  return false;
}

const char *
fx_stack_user_line (fx_arena *arena, const char *stack)
{
  const char *best = NULL;
  if (!stack)
    return NULL;
  /* Frames run outermost first: the last user frame is the innermost. */
  for (const char *p = strstr (stack, "File \""); p; p = strstr (p + 1, "File \""))
    {
      const char *f = p + 6, *q = strchr (f, '"');
      if (q && !is_library_file (f, (size_t) (q - f)))
        best = p;
    }
  if (!best)
    return NULL;
  const char *f = best + 6, *q = strchr (f, '"');
  const char *base = f;
  for (const char *s = f; s < q; s++)
    if (*s == '/')
      base = s + 1;
  int line = 0;
  char fn[128] = "";
  sscanf (q, "\", line %d, in %127[^\n]", &line, fn);
  /* The code is the next line, indented. */
  const char *nl = strchr (q, '\n');
  const char *code = nl ? nl + 1 : "";
  while (*code == ' ')
    code++;
  const char *code_end = strchr (code, '\n');
  if (strncmp (code, "File \"", 6) == 0)
    code_end = code;
  size_t code_len = code_end ? (size_t) (code_end - code) : strlen (code);
  return fx_arena_printf (arena, "%.*s:%d in %s%s%.*s", (int) (q - base), base, line, fn, code_len ? ": " : "",
                          (int) code_len, code);
}

fx_status
fx_export_entries (fx_store *store, fx_arena *arena, fx_export_entry **out, size_t *n, fx_diag *diag)
{
  *out = NULL;
  *n = 0;
  fx_store_shape_event *ev = NULL;
  size_t ne = 0;
  fx_status st = fx_store_list_shape_events (store, 0, arena, &ev, &ne, diag);
  if (st != FX_OK)
    return st;
  fx_store_kv *arts = NULL;
  size_t na = 0;
  st = fx_store_list_artifacts (store, 0, arena, &arts, &na, diag);
  if (st != FX_OK)
    return st;
  fx_export_entry *e = fx_arena_alloc (arena, (ne + na + 1) * sizeof *e);
  size_t k = 0;
  for (size_t i = 0; i < na; i++)
    {
      if (!arts[i].key || strcmp (arts[i].key, "create_unbacked_symbol") != 0 || !arts[i].value)
        continue;
      json_object *o = json_tokener_parse (arts[i].value), *sym = NULL, *vr = NULL;
      if (o && json_object_object_get_ex (o, "symbol", &sym))
        {
          json_object_object_get_ex (o, "vr", &vr);
          e[k].kind = "unbacked_symbol";
          e[k].what = fx_arena_printf (arena, "%s %s", json_object_get_string (sym),
                                       vr ? json_object_get_string (vr) : "");
          k++;
        }
      json_object_put (o);
    }
  for (size_t i = 0; i < ne; i++)
    {
      e[k].kind = ev[i].kind;
      e[k].what = ev[i].expr ? ev[i].expr
                  : fx_arena_printf (arena, "%s = %s", ev[i].symbol ? ev[i].symbol : "?", ev[i].value ? ev[i].value : "?");
      e[k].user_line = fx_stack_user_line (arena, ev[i].user_stack);
      if (!e[k].user_line)
        e[k].user_line = fx_stack_user_line (arena, ev[i].stack);
      k++;
    }
  *out = e;
  *n = k;
  return FX_OK;
}
