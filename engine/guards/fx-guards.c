/* fx-guards.c: guard kinds, TensorCheck comparison and Dynamo's guard/recompile texts, in plain C. */
#include "fx/guards.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[FX_GUARD_KIND_COUNT] = {
  "TENSOR_MATCH", "TYPE_MATCH", "ID_MATCH", "EQUALS_MATCH", "GLOBAL_STATE", "BACKEND_MATCH", "LAMBDA_GUARD",
  "LENGTH_CHECK", "DICT_KEYS_MATCH",
};

const char *
fx_guard_kind_name (fx_guard_kind kind)
{
  return kind < FX_GUARD_KIND_COUNT ? kind_names[kind] : "UNKNOWN";
}

/* TensorCheck::check_verbose (torch/csrc/dynamo/guards.cpp); the order of checks decides which reason wins. */
bool
fx_tensor_check_verbose (const fx_tensor_check *expected, const fx_tensor_check *actual,
                         const char *name, fx_buf *reason)
{
  if (expected->dtype != actual->dtype)
    {
      if (reason)
        fx_buf_printf (reason, "tensor '%s' dtype mismatch. expected %s, actual %s", name,
                       fx_dtype_c10_name (expected->dtype), fx_dtype_c10_name (actual->dtype));
      return false;
    }
  if (expected->device.type != actual->device.type)
    {
      /* A device type change shows up first as a dispatch key set change. */
      if (reason)
        {
          fx_buf exp, act;
          fx_buf_init (&exp);
          fx_buf_init (&act);
          fx_tensor_check_code (expected, "", &exp);
          fx_tensor_check_code (actual, "", &act);
          const char *e = strstr (exp.data, "DispatchKeySet(");
          const char *a = strstr (act.data, "DispatchKeySet(");
          int el = (int) (strchr (e, ')') - e + 1), al = (int) (strchr (a, ')') - a + 1);
          fx_buf_printf (reason, "tensor '%s' dispatch key set mismatch. expected %.*s, actual %.*s", name,
                         el, e, al, a);
          fx_buf_free (&exp);
          fx_buf_free (&act);
        }
      return false;
    }
  if (expected->device.index != actual->device.index)
    {
      if (reason)
        fx_buf_printf (reason, "tensor '%s' Tensor device index mismatch. Expected device index to be %d, actual %d",
                       name, expected->device.index, actual->device.index);
      return false;
    }
  if (expected->requires_grad != actual->requires_grad)
    {
      if (reason)
        fx_buf_printf (reason, "tensor '%s' requires_grad mismatch. expected requires_grad=%d", name,
                       expected->requires_grad ? 1 : 0);
      return false;
    }
  if (expected->ndim != actual->ndim)
    {
      if (reason)
        fx_buf_printf (reason, "tensor '%s' rank mismatch. expected %d, actual %d", name, expected->ndim,
                       actual->ndim);
      return false;
    }
  for (int i = 0; i < expected->ndim; i++)
    {
      if (expected->sizes[i] >= 0 && expected->sizes[i] != actual->sizes[i])
        {
          if (reason)
            fx_buf_printf (reason, "tensor '%s' size mismatch at index %d. expected %lld, actual %lld", name, i,
                           (long long) expected->sizes[i], (long long) actual->sizes[i]);
          return false;
        }
      if (expected->strides[i] >= 0 && expected->strides[i] != actual->strides[i])
        {
          if (reason)
            fx_buf_printf (reason, "tensor '%s' stride mismatch at index %d. expected %lld, actual %lld", name, i,
                           (long long) expected->strides[i], (long long) actual->strides[i]);
          return false;
        }
    }
  return true;
}

static void
put_dims (fx_buf *out, const int64_t *dims, int n)
{
  fx_buf_putc (out, '[');
  for (int i = 0; i < n; i++)
    {
      if (i)
        fx_buf_puts (out, ", ");
      if (dims[i] < 0)
        fx_buf_puts (out, "None");
      else
        fx_buf_printf (out, "%lld", (long long) dims[i]);
    }
  fx_buf_putc (out, ']');
}

void
fx_tensor_check_code (const fx_tensor_check *check, const char *source, fx_buf *out)
{
  const char *backend = check->device.type == FX_DEVICE_CUDA ? "CUDA" : "CPU";
  fx_buf_printf (out, "check_tensor(%s, %s, DispatchKeySet(%s, BackendSelect, ADInplaceOrView, Autograd%s), torch.%s, ",
                 source, check->type_name ? check->type_name : "Tensor", backend, backend,
                 fx_dtype_name (check->dtype));
  if (check->device.type == FX_DEVICE_CPU || check->device.index < 0)
    fx_buf_puts (out, "device=None, ");
  else
    fx_buf_printf (out, "device=%d, ", check->device.index);
  fx_buf_printf (out, "requires_grad=%s, size=", check->requires_grad ? "True" : "False");
  put_dims (out, check->sizes, check->ndim);
  fx_buf_puts (out, ", stride=");
  put_dims (out, check->strides, check->ndim);
  fx_buf_putc (out, ')');
}

/* re.sub(r"L\[\s*['\"](.*?)['\"]\s*\]", r"\1", text) */
void
fx_guard_strip_local_scope (const char *text, fx_buf *out)
{
  const char *p = text;
  while (*p)
    {
      if (p[0] == 'L' && p[1] == '[')
        {
          const char *q = p + 2;
          while (*q == ' ' || *q == '\t')
            q++;
          if (*q == '\'' || *q == '"')
            {
              const char *start = q + 1;
              const char *r = start;
              bool matched = false;
              /* lazy .*? : the first quote followed by optional spaces and ']' */
              while (*r)
                {
                  if (*r == '\'' || *r == '"')
                    {
                      const char *s = r + 1;
                      while (*s == ' ' || *s == '\t')
                        s++;
                      if (*s == ']')
                        {
                          fx_buf_append (out, start, (size_t) (r - start));
                          p = s + 1;
                          matched = true;
                          break;
                        }
                    }
                  r++;
                }
              if (matched)
                continue;
            }
        }
      fx_buf_putc (out, *p++);
    }
}

void
fx_guard_set_init (fx_guard_set *set)
{
  memset (set, 0, sizeof *set);
}

void
fx_guard_set_clear (fx_guard_set *set)
{
  for (size_t i = 0; i < set->n_guards; i++)
    {
      free (set->guards[i].source);
      free (set->guards[i].code);
      free (set->guards[i].user_comment);
      free (set->guards[i].user_stack);
    }
  free (set->guards);
  memset (set, 0, sizeof *set);
}

static char *
dup_or_null (const char *s)
{
  return s ? strdup (s) : NULL;
}

fx_guard *
fx_guard_set_add (fx_guard_set *set, fx_guard_kind kind, const char *source, const char *code,
                  const char *user_comment)
{
  if (set->n_guards == set->cap)
    {
      size_t cap = set->cap ? set->cap * 2 : 8;
      fx_guard *g = realloc (set->guards, cap * sizeof *g);
      if (!g)
        return NULL;
      set->guards = g;
      set->cap = cap;
    }
  fx_guard *g = &set->guards[set->n_guards++];
  memset (g, 0, sizeof *g);
  g->kind = kind;
  g->source = dup_or_null (source);
  g->code = dup_or_null (code);
  g->user_comment = dup_or_null (user_comment);
  return g;
}

void
fx_guard_set_user_stack (fx_guard *g, const char *user_stack)
{
  free (g->user_stack);
  g->user_stack = user_stack && *user_stack ? strdup (user_stack) : NULL;
}

static void
put_code_with_comment (fx_buf *out, const char *code, const char *comment)
{
  if (!comment)
    {
      fx_buf_puts (out, code);
      return;
    }
  /* guards.py pads the code to 60 columns before the user comment. */
  fx_buf_printf (out, "%-60s  # %s", code, comment);
}

void
fx_guard_set_print_tree (const fx_guard_set *set, fx_buf *out)
{
  fx_buf_puts (out, "TREE_GUARD_MANAGER:\n+- RootGuardManager\n");
  /* Source-less guards (global state, backend) hang off the root; the rest are grouped by source in order. */
  for (size_t i = 0; i < set->n_guards; i++)
    if (!set->guards[i].source && set->guards[i].kind != FX_GUARD_SHAPE_ENV)
      {
        fx_buf_printf (out, "| +- %s: ", fx_guard_kind_name (set->guards[i].kind));
        put_code_with_comment (out, set->guards[i].code ? set->guards[i].code : "", set->guards[i].user_comment);
        fx_buf_putc (out, '\n');
      }
  for (size_t i = 0; i < set->n_guards; i++)
    {
      const char *src = set->guards[i].source;
      if (!src)
        continue;
      bool seen = false;
      for (size_t j = 0; j < i; j++)
        if (set->guards[j].source && strcmp (set->guards[j].source, src) == 0)
          seen = true;
      if (seen)
        continue;
      fx_buf_printf (out, "| +- GuardManager: source=%s\n", src);
      for (size_t j = i; j < set->n_guards; j++)
        if (set->guards[j].source && strcmp (set->guards[j].source, src) == 0)
          {
            fx_buf_printf (out, "| | +- %s: ", fx_guard_kind_name (set->guards[j].kind));
            put_code_with_comment (out, set->guards[j].code ? set->guards[j].code : "",
                                   set->guards[j].user_comment);
            fx_buf_putc (out, '\n');
          }
    }
  /* The shape env's guards hang off the tree itself, after the root's managers (guards.py). */
  for (size_t i = 0; i < set->n_guards; i++)
    if (set->guards[i].kind == FX_GUARD_SHAPE_ENV)
      {
        /* not padded: the shape env's verbose code parts carry their comment directly */
        fx_buf_printf (out, "+- %s: %s", fx_guard_kind_name (set->guards[i].kind),
                       set->guards[i].code ? set->guards[i].code : "");
        if (set->guards[i].user_comment)
          fx_buf_printf (out, "  # %s", set->guards[i].user_comment);
        fx_buf_putc (out, '\n');
      }
}

void
fx_guard_fail_reason (const fx_guard *guard, fx_buf *out)
{
  /* guards.py pads the verbose code part first, then strip_local_scope rewrites the whole line */
  fx_buf line;
  fx_buf_init (&line);
  put_code_with_comment (&line, guard->code ? guard->code : "", guard->user_comment);
  fx_guard_strip_local_scope (line.data ? line.data : "", out);
  fx_buf_free (&line);
  if (guard->user_stack)
    fx_buf_printf (out, "\nUser stack trace:\n%s", guard->user_stack);
}

/* Dynamo's first line of a recompile message, and the second up to the failures. */
static void
recompile_header (const char *func, const char *file, int line, fx_buf *out)
{
  fx_buf_printf (out, "Recompiling function %s in %s:%d\n    triggered by the following guard failure(s):", func,
                 file, line);
}

/* One reason under "    - ": textwrap.indent(reason, "- ") under four spaces, so every line of a many-line reason
   (one with its user stack) gets its dash. */
static void
put_reason_lines (const char *reason, fx_buf *out)
{
  for (const char *p = reason;;)
    {
      const char *nl = strchr (p, '\n');
      int len = nl ? (int) (nl - p) : (int) strlen (p);
      if (len > 0)
        fx_buf_printf (out, "\n    - %.*s", len, p);
      if (!nl)
        break;
      p = nl + 1;
    }
}

void
fx_guard_recompile_message (const char *func, const char *file, int line,
                            const char *const *reasons, size_t n_reasons, fx_buf *out)
{
  recompile_header (func, file, line, out);
  for (size_t i = 0; i < n_reasons; i++)
    put_reason_lines (reasons[i], out);
}

void
fx_guard_recompile_message_verbose (const char *func, const char *file, int line,
                                    const char *const *reasons, size_t n_reasons, fx_buf *out)
{
  recompile_header (func, file, line, out);
  for (size_t i = 0; i < n_reasons; i++)
    {
      fx_buf_printf (out, "%s\n    guard %zu failures:", i ? "\n" : "", i);
      put_reason_lines (reasons[i], out);
    }
}

void
fx_guard_recompile_limit_message (int limit, const char *func, const char *file, int line,
                                  const char *last_reason, fx_buf *out)
{
  fx_buf_printf (out,
                 "torch._dynamo hit config.recompile_limit (%d)\n"
                 "   function: '%s' (%s:%d)\n"
                 "   last reason: %s\n"
                 "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
                 "To diagnose recompilation issues, see "
                 "https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html",
                 limit, func, file, line, last_reason ? last_reason : "");
}
