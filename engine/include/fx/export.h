/* fx/export.h: what a torch.export trace adds outside any compile: the guards and unbacked symbols export made, each
   with the user line it came from. */
#pragma once

#include "fx/common.h"
#include "fx/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The innermost frame of a stored stack ('  File "f.py", line 3, in fn\n    code\n' per frame) that is user code:
   not in torch or another installed package (site-packages, dist-packages), not "<string>". Written as
   "f.py:3 in fn: code" (the file's base name) from arena; NULL when no frame is. */
const char *fx_stack_user_line (fx_arena *arena, const char *stack);
/* That frame itself (file as written, from arena); false when no frame is user code. */
bool fx_stack_user_frame (const char *stack, fx_arena *arena, fx_stack_frame *out);

typedef struct fx_export_entry
{
  const char *kind;       /* "guard_added", "guard_added_fast", "unbacked_symbol", "specialization", ... */
  const char *what;       /* the guard's expression, the symbol and its range ("u0 [-int_oo, int_oo]") */
  const char *user_line;  /* fx_stack_user_line of its user stack, else of its stack; NULL: unknown */
  const char *fix;        /* draft_export's failures: what to change, as its report says; NULL for the rest */
  const char *user_file;  /* that user line's file as the stack wrote it, and its line; NULL, 0: unknown */
  int user_lineno;
} fx_export_entry;

/* The shape events outside any compile (a torch.export trace's guards) and the create_unbacked_symbol records,
   in file order. */
fx_status fx_export_entries (fx_store *store, fx_arena *arena, fx_export_entry **out, size_t *n, fx_diag *diag);

#ifdef __cplusplus
}
#endif
