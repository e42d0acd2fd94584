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

bool
fx_stack_user_frame (const char *stack, fx_arena *arena, fx_stack_frame *out)
{
  fx_stack_frame *frames = NULL;
  size_t n = stack ? fx_stack_trace_parse (stack, arena, &frames) : 0;

  /* Frames run outermost first: the last user frame is the innermost. */
  for (size_t k = n; k-- > 0;)
    if (frames[k].file != NULL && !is_library_file (frames[k].file, strlen (frames[k].file)))
      {
        *out = frames[k];
        return true;
      }
  return false;
}

const char *
fx_stack_user_line (fx_arena *arena, const char *stack)
{
  fx_stack_frame f;
  if (!fx_stack_user_frame (stack, arena, &f))
    return NULL;
  const char *slash = strrchr (f.file, '/');
  const char *code = f.code ? f.code : "";
  while (*code == ' ')
    code++;
  return fx_arena_printf (arena, "%s:%d in %s%s%s", slash ? slash + 1 : f.file, f.line, f.func ? f.func : "",
                          *code ? ": " : "", code);
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
          e[k].fix = NULL;
          e[k].user_line = NULL;
          e[k].user_file = NULL;
          e[k].user_lineno = 0;
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
      fx_stack_frame f;
      bool have = fx_stack_user_frame (ev[i].user_stack, arena, &f) || fx_stack_user_frame (ev[i].stack, arena, &f);
      e[k].user_file = have ? f.file : NULL;
      e[k].user_lineno = have ? f.line : 0;
      e[k].fix = NULL;
      if (strcmp (ev[i].kind, "data_dependent") == 0 && ev[i].expr)
        {
          /* draft_export's report: the expression was specialized to a constant and asserted in the graph */
          e[k].what = fx_arena_printf (arena, "%s -> %s", ev[i].expr, ev[i].value ? ev[i].value : "?");
          e[k].fix = fx_arena_printf (arena, "export could not decide %s and specialized it to %s (asserted in the "
                                             "graph): add torch._check(...) asserting it at that line",
                                      ev[i].expr, ev[i].value ? ev[i].value : "a constant");
        }
      else if (strcmp (ev[i].kind, "expression") == 0 && ev[i].expr && ev[i].reason)
        e[k].what = fx_arena_printf (arena, "%s = %s", ev[i].expr, ev[i].reason);
      else if (strcmp (ev[i].kind, "missing_fake_kernel") == 0 && ev[i].expr)
        e[k].fix = fx_arena_printf (arena, "torch.ops.%s has no fake kernel: register one "
                                           "(torch.library.register_fake)", ev[i].expr);
      else if (strcmp (ev[i].kind, "mismatched_fake_kernel") == 0 && ev[i].expr)
        e[k].fix = fx_arena_printf (arena, "torch.ops.%s's fake kernel disagrees with the real one (%s): fix it",
                                    ev[i].expr, ev[i].reason ? ev[i].reason : "no reason logged");
      k++;
    }
  *out = e;
  *n = k;
  return FX_OK;
}
