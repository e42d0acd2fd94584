/* fx/guards.h: Dynamo-style guards (kinds, code texts, failure reasons) evaluated in plain C. */
#pragma once

#include "fx/common.h"
#include "fx/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fx_guard_kind
{
  FX_GUARD_TENSOR_MATCH,
  FX_GUARD_TYPE_MATCH,
  FX_GUARD_ID_MATCH,
  FX_GUARD_EQUALS_MATCH,
  FX_GUARD_GLOBAL_STATE,
  FX_GUARD_BACKEND_MATCH,
  FX_GUARD_SHAPE_ENV,         /* a ShapeEnv guard on symbolic sizes ("2 <= L['a'].size()[0]"), printed as LAMBDA_GUARD */
  FX_GUARD_LENGTH_CHECK,       /* len(L['xs']) == 2: a tuple or list input */
  FX_GUARD_DICT_KEYS_MATCH,    /* list(L['d'].keys()) == ['a', 'b']: a dict input */
  FX_GUARD_KIND_COUNT
} fx_guard_kind;

const char *fx_guard_kind_name (fx_guard_kind kind); /* "TENSOR_MATCH" */

#define FX_GUARD_MAX_DIMS 16

/* What TENSOR_MATCH compares (torch/csrc/dynamo/guards.cpp TensorCheck). A dynamic dim has size -1. */
typedef struct fx_tensor_check
{
  const char *type_name;      /* "Tensor" (the Python class name) */
  fx_dtype dtype;
  fx_device device;
  bool requires_grad;
  int ndim;
  int64_t sizes[FX_GUARD_MAX_DIMS];
  int64_t strides[FX_GUARD_MAX_DIMS];
} fx_tensor_check;

/* Compares actual against expected in TensorCheck's order (dtype, device index, requires_grad, rank, then
   size/stride per dim). Returns true when they match; otherwise writes Dynamo's reason
   ("tensor 'x' size mismatch at index 0. expected 10, actual 16") into reason (if non-NULL). */
bool fx_tensor_check_verbose (const fx_tensor_check *expected, const fx_tensor_check *actual,
                              const char *name, fx_buf *reason);

/* The guard's verbose code part: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect,
   ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=False, size=[4, 3], stride=[3, 1]) */
void fx_tensor_check_code (const fx_tensor_check *check, const char *source, fx_buf *out);

/* strip_local_scope: L['x'] -> x (the 2.11 recompile message form). */
void fx_guard_strip_local_scope (const char *text, fx_buf *out);

/* One guard: kind, the source it reads (L['x'], G['SCALE']), its code text and the user line that installed it. */
typedef struct fx_guard
{
  fx_guard_kind kind;
  char *source;
  char *code;                 /* "L['n'] == 3", "check_tensor(...)", "___check_obj_id(G['torch'], 1403...)" */
  char *user_comment;         /* "return x * n  # prog.py:4 in f", or NULL */
  /* The user frames that installed it, outermost first, as traceback.format_list writes them
     ("  File \"/abs/prog.py\", line 4, in f\n    return x * n"), or NULL: Dynamo 2.x adds them to a failing
     value guard's reason under "User stack trace:". */
  char *user_stack;
  fx_tensor_check tensor;     /* TENSOR_MATCH */
} fx_guard;

/* A compile's guards as a tree: a root with one manager per source, guards under it (TREE_GUARD_MANAGER). */
typedef struct fx_guard_set
{
  fx_guard *guards;
  size_t n_guards;
  size_t cap;
} fx_guard_set;

void fx_guard_set_init (fx_guard_set *set);
void fx_guard_set_clear (fx_guard_set *set);
fx_guard *fx_guard_set_add (fx_guard_set *set, fx_guard_kind kind, const char *source, const char *code,
                            const char *user_comment);
/* The TORCH_LOGS=guards dump: "TREE_GUARD_MANAGER:\n+- RootGuardManager\n| +- GuardManager: source=L['x'] ..." */
void fx_guard_set_print_tree (const fx_guard_set *set, fx_buf *out);

/* Sets (a copy of) G's user stack. */
void fx_guard_set_user_stack (fx_guard *g, const char *user_stack);

/* A failing non-tensor guard's reason: the code with locals stripped, padded and followed by its comment, then
   "\nUser stack trace:\n" and the user stack where the guard has one (several lines then). */
void fx_guard_fail_reason (const fx_guard *guard, fx_buf *out);

/* The recompile message (get_and_maybe_log_recompilation_reasons). reasons[i] is "0/1: reason", newest first. */
void fx_guard_recompile_message (const char *func, const char *file, int line,
                                 const char *const *reasons, size_t n_reasons, fx_buf *out);
/* The recompiles_verbose form (2.11): per cache entry, newest first, "guard i failures:" and its reason. */
void fx_guard_recompile_message_verbose (const char *func, const char *file, int line,
                                         const char *const *reasons, size_t n_reasons, fx_buf *out);
/* The recompile-limit warning (convert_frame.py). */
void fx_guard_recompile_limit_message (int limit, const char *func, const char *file, int line,
                                       const char *last_reason, fx_buf *out);

#ifdef __cplusplus
}
#endif
