/* fx-inputs.c: graph inputs from inputs.json specs, repro load_args specs or placeholder metadata (seeded random),
   and from saved tensor files. */
#include "fx/runtime.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fx_status
fx_inputs_parse_json (const char *text, size_t len, const char *filename, fx_arena *arena, fx_input_spec **specs,
                      size_t *n_specs, fx_diag *diag)
{
  *specs = NULL;
  *n_specs = 0;
  json_tokener *tok = json_tokener_new ();
  json_object *root = json_tokener_parse_ex (tok, text, (int) len);
  enum json_tokener_error jerr = json_tokener_get_error (tok);
  size_t off = json_tokener_get_parse_end (tok);
  json_tokener_free (tok);
  if (root == NULL || jerr != json_tokener_success)
    {
      int line = 1, col = 1;
      const char *ls = text;
      for (size_t i = 0; i < off && i < len; i++)
        {
          if (text[i] == '\n')
            {
              line++;
              col = 1;
              ls = text + i + 1;
            }
          else
            col++;
        }
      const char *le = memchr (ls, '\n', (size_t) (text + len - ls));
      fx_diag_set (diag, FX_ERR_PARSE, "inputs JSON: %s", json_tokener_error_desc (jerr));
      fx_diag_locate (diag, filename, line, col, ls, (size_t) ((le ? le : text + len) - ls));
      json_object_put (root);
      return FX_ERR_PARSE;
    }
  if (!json_object_is_type (root, json_type_array))
    {
      json_object_put (root);
      fx_diag_set (diag, FX_ERR_PARSE, "inputs JSON: expected a list of input specs");
      fx_diag_locate (diag, filename, 1, 1, text, strcspn (text, "\n"));
      return FX_ERR_PARSE;
    }
  size_t n = json_object_array_length (root);
  fx_input_spec *out = fx_arena_alloc (arena, sizeof *out * (n ? n : 1));
  for (size_t i = 0; i < n; i++)
    {
      json_object *e = json_object_array_get_idx (root, i);
      json_object *js, *jst, *jd, *jdev;
      fx_input_spec *sp = &out[i];
      sp->name = fx_arena_printf (arena, "arg%zu", i);
      if (json_object_is_type (e, json_type_int))
        {
          sp->kind = FX_INPUT_SYMINT;
          sp->val.kind = FX_VAL_INT;
          sp->val.i = json_object_get_int64 (e);
          continue;
        }
      if (!json_object_is_type (e, json_type_object) || !json_object_object_get_ex (e, "shape", &js)
          || !json_object_is_type (js, json_type_array))
        {
          json_object_put (root);
          fx_diag_set (diag, FX_ERR_PARSE, "%s: input %zu: expected {\"shape\": [...], \"dtype\": ...}",
                       filename ? filename : "inputs", i);
          return FX_ERR_PARSE;
        }
      sp->kind = FX_INPUT_TENSOR;
      fx_tensor_meta *m = &sp->val.tensor;
      sp->val.kind = FX_VAL_TENSOR;
      m->ndim = (int) json_object_array_length (js);
      if (m->ndim > FX_TENSOR_MAX_DIMS)
        {
          json_object_put (root);
          return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "input %zu has %d dims (at most %d)", i, m->ndim,
                              FX_TENSOR_MAX_DIMS);
        }
      m->sizes = fx_arena_alloc (arena, sizeof (fx_dim) * (size_t) (m->ndim ? m->ndim : 1));
      for (int d = 0; d < m->ndim; d++)
        {
          json_object *v = json_object_array_get_idx (js, (size_t) d);
          if (!json_object_is_type (v, json_type_int) || json_object_get_int64 (v) < 0)
            {
              json_object_put (root);
              return fx_diag_set (diag, FX_ERR_PARSE, "input %zu: shape entries must be non-negative integers", i);
            }
          m->sizes[d].value = json_object_get_int64 (v);
        }
      if (json_object_object_get_ex (e, "stride", &jst) && json_object_is_type (jst, json_type_array)
          && (int) json_object_array_length (jst) == m->ndim)
        {
          m->strides = fx_arena_alloc (arena, sizeof (fx_dim) * (size_t) (m->ndim ? m->ndim : 1));
          for (int d = 0; d < m->ndim; d++)
            m->strides[d].value = json_object_get_int64 (json_object_array_get_idx (jst, (size_t) d));
        }
      m->dtype = FX_DTYPE_F32;
      if (json_object_object_get_ex (e, "dtype", &jd))
        {
          m->dtype = fx_dtype_from_name (json_object_get_string (jd));
          if (m->dtype == FX_DTYPE_UNKNOWN)
            {
              fx_diag_set (diag, FX_ERR_PARSE, "input %zu: unknown dtype '%s'", i, json_object_get_string (jd));
              json_object_put (root);
              return FX_ERR_PARSE;
            }
        }
      m->device = fx_device_cpu ();
      if (json_object_object_get_ex (e, "device", &jdev))
        {
          m->has_device = fx_device_parse (json_object_get_string (jdev), &m->device);
        }
    }
  json_object_put (root);
  *specs = out;
  *n_specs = n;
  return FX_OK;
}

fx_input_spec
fx_input_spec_of_placeholder (const fx_node *placeholder)
{
  fx_input_spec sp;
  memset (&sp, 0, sizeof sp);
  sp.name = placeholder->name;
  sp.kind = FX_INPUT_TENSOR;
  sp.val = placeholder->meta.val;
  return sp;
}

fx_status
fx_input_from_spec (const fx_input_spec *spec, fx_generator *gen, fx_allocator *alloc, fx_value *out, fx_diag *diag)
{
  *out = fx_value_none ();
  if (spec->kind == FX_INPUT_SYMINT || spec->val.kind == FX_VAL_INT || spec->val.kind == FX_VAL_SYMINT)
    {
      *out = fx_value_int (spec->val.i);
      return FX_OK;
    }
  if (spec->val.kind != FX_VAL_TENSOR)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "input '%s': only tensor and int inputs can be generated",
                        spec->name ? spec->name : "?");
  const fx_tensor_meta *m = &spec->val.tensor;
  if (!fx_dtype_is_supported (m->dtype))
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "input '%s': dtype %s is not supported", spec->name ? spec->name : "?",
                        fx_dtype_name (m->dtype));
  if (m->ndim > FX_TENSOR_MAX_DIMS)
    return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "input '%s': too many dims", spec->name ? spec->name : "?");
  int64_t sizes[FX_TENSOR_MAX_DIMS], strides[FX_TENSOR_MAX_DIMS];
  for (int d = 0; d < m->ndim; d++)
    {
      if (m->sizes[d].sym != NULL && m->sizes[d].value < 0)
        return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "input '%s': symbolic size %s has no hint; give concrete inputs "
                            "(inputs.json, a repro's load_args or saved tensors)",
                            spec->name ? spec->name : "?", m->sizes[d].sym);
      sizes[d] = m->sizes[d].value;
      if (m->strides)
        strides[d] = m->strides[d].value;
    }
  fx_tensor *t = NULL;
  fx_diag why;
  fx_diag_clear (&why);
  if (fx_tensor_new_checked (alloc, m->dtype, m->ndim, sizes, m->strides ? strides : NULL, &t, &why) != FX_OK)
    {
      fx_diag_set (diag, why.code, "input '%s': %s", spec->name ? spec->name : "?", why.message);
      if (diag && spec->name)
        snprintf (diag->node, sizeof diag->node, "%s", spec->name);
      return why.code;
    }
  /* fill the whole storage so gaps of strided inputs are defined too */
  fx_tensor *flat;
  int64_t nelem = (int64_t) (t->storage->nbytes / fx_dtype_size (t->dtype));
  flat = fx_tensor_as_strided (t, 1, &nelem, (int64_t[]) { 1 }, 0);
  if (m->dtype == FX_DTYPE_BOOL)
    fx_tensor_fill_randint (flat, gen, 0, 2);
  else if (fx_dtype_is_integral (m->dtype, false))
    fx_tensor_fill_randint (flat, gen, 0, 16);
  else
    fx_tensor_fill_normal (flat, gen, 0.0, 1.0);
  fx_tensor_unref (flat);
  *out = fx_value_tensor (t);
  return FX_OK;
}

/* Shape symbols bound to values: load_args passes a symbolic size as reader.symint(v) before the tensors that
   use it (AOT placeholders come in the order of first use), so unbound symbols take the symint values in order. */
typedef struct
{
  const char *names[64];
  int64_t values[64];
  size_t n;
  int64_t pending[64];   /* symint values not yet bound to a symbol */
  size_t n_pending, next_pending;
} sym_env;

static bool
sym_lookup (const sym_env *env, const char *name, size_t len, int64_t *out)
{
  for (size_t i = 0; i < env->n; i++)
    if (strlen (env->names[i]) == len && strncmp (env->names[i], name, len) == 0)
      {
        *out = env->values[i];
        return true;
      }
  return false;
}

static bool
is_ident (const char *s)
{
  if (!(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
    return false;
  for (const char *p = s; *p; p++)
    if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
      return false;
  return true;
}

static void
sym_bind (sym_env *env, const char *name, int64_t value)
{
  int64_t v;
  if (env->n < 64 && !sym_lookup (env, name, strlen (name), &v))
    {
      env->names[env->n] = name;
      env->values[env->n++] = value;
    }
}

/* A symbol first seen in a size: bind it to the next symint value. */
static void
sym_see (sym_env *env, const fx_dim *d)
{
  int64_t v;
  if (d->sym == NULL || !is_ident (d->sym) || sym_lookup (env, d->sym, strlen (d->sym), &v))
    return;
  if (d->value >= 0)
    sym_bind (env, d->sym, d->value);
  else if (env->next_pending < env->n_pending)
    sym_bind (env, d->sym, env->pending[env->next_pending++]);
}

/* Evaluates a size expression (ints, symbols, + - * // and parentheses); false when it cannot. */
typedef struct
{
  const char *p;
  const sym_env *env;
  bool ok;
  int depth;      /* nesting of parentheses and unary minus, bounded */
} sym_parser;

static int64_t sym_sum (sym_parser *sp);
static int64_t sym_atom_inner (sym_parser *sp, const char *p);

static void
sym_ws (sym_parser *sp)
{
  while (*sp->p == ' ')
    sp->p++;
}

static int64_t
sym_atom (sym_parser *sp)
{
  sym_ws (sp);
  const char *p = sp->p;
  if (++sp->depth > 64)
    {
      sp->ok = false;
      return 0;
    }
  int64_t r = sym_atom_inner (sp, p);
  sp->depth--;
  return r;
}

static int64_t
sym_atom_inner (sym_parser *sp, const char *p)
{
  if (*p == '(')
    {
      sp->p++;
      int64_t v = sym_sum (sp);
      sym_ws (sp);
      if (*sp->p != ')')
        sp->ok = false;
      else
        sp->p++;
      return v;
    }
  if (*p == '-')
    {
      sp->p++;
      int64_t v = sym_atom (sp);
      if (v == INT64_MIN)
        {
          sp->ok = false;
          return 0;
        }
      return -v;
    }
  if (*p >= '0' && *p <= '9')
    {
      int64_t v = 0;
      while (*sp->p >= '0' && *sp->p <= '9')
        {
          if (__builtin_mul_overflow (v, 10, &v) || __builtin_add_overflow (v, *sp->p - '0', &v))
            sp->ok = false;
          sp->p++;
        }
      return v;
    }
  const char *s = p;
  while (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
    p++;
  int64_t v = 0;
  if (p == s || !sym_lookup (sp->env, s, (size_t) (p - s), &v))
    sp->ok = false;
  sp->p = p;
  return v;
}

/* The binary operators, by level: sums are of products, products of atoms. */
static const struct
{
  const char *text;
  int level;
} sym_ops[] = { { "+", 0 }, { "-", 0 }, { "*", 1 }, { "//", 1 } };

/* Operands joined left to right by the operators of LEVEL; an operand is the next level, or an atom after the
   last. */
static int64_t
sym_binary (sym_parser *sp, int level)
{
  const size_t n_ops = sizeof sym_ops / sizeof sym_ops[0];
  int64_t v = level == 1 ? sym_atom (sp) : sym_binary (sp, level + 1);
  for (;;)
    {
      sym_ws (sp);
      size_t k = 0;
      while (k < n_ops
             && !(sym_ops[k].level == level && strncmp (sp->p, sym_ops[k].text, strlen (sym_ops[k].text)) == 0))
        k++;
      if (k == n_ops)
        return v;
      sp->p += strlen (sym_ops[k].text);
      int64_t r = level == 1 ? sym_atom (sp) : sym_binary (sp, level + 1);
      bool bad;
      switch (sym_ops[k].text[0])
        {
        case '+': bad = __builtin_add_overflow (v, r, &v); break;
        case '-': bad = __builtin_sub_overflow (v, r, &v); break;
        case '*': bad = __builtin_mul_overflow (v, r, &v); break;
        default:
          bad = r == 0 || (r == -1 && v == INT64_MIN);
          if (!bad)
            v /= r;
          break;
        }
      if (bad)
        sp->ok = false;
    }
}

static int64_t
sym_sum (sym_parser *sp)
{
  return sym_binary (sp, 0);
}

static bool
sym_eval (const sym_env *env, const fx_dim *d, int64_t *out)
{
  if (d->sym == NULL)
    {
      *out = d->value;
      return d->value >= 0;
    }
  sym_parser sp = { d->sym, env, true, 0 };
  int64_t v = sym_sum (&sp);
  sym_ws (&sp);
  if (!sp.ok || *sp.p != '\0')
    {
      /* a hint recorded with the symbol is good enough */
      *out = d->value;
      return d->value >= 0;
    }
  *out = v;
  return true;
}

/* A copy of spec with every symbolic size and stride replaced by its value. */
static fx_status
resolve_spec (const fx_input_spec *spec, const sym_env *env, fx_arena *arena, fx_input_spec *out, fx_diag *diag)
{
  *out = *spec;
  if (spec->val.kind != FX_VAL_TENSOR)
    return FX_OK;
  const fx_tensor_meta *m = &spec->val.tensor;
  fx_tensor_meta *r = &out->val.tensor;
  int nd = m->ndim > 0 ? m->ndim : 0;
  r->sizes = fx_arena_alloc (arena, sizeof (fx_dim) * (size_t) (nd ? nd : 1));
  r->strides = m->strides ? fx_arena_alloc (arena, sizeof (fx_dim) * (size_t) (nd ? nd : 1)) : NULL;
  for (int d = 0; d < nd; d++)
    {
      int64_t v;
      if (m->sizes[d].sym == NULL && m->sizes[d].value < 0)
        return fx_diag_set (diag, FX_ERR_INVALID, "input '%s': negative size %lld at dim %d",
                            spec->name ? spec->name : "?", (long long) m->sizes[d].value, d);
      if (!sym_eval (env, &m->sizes[d], &v))
        return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "input '%s': symbolic size %s has no hint; give concrete inputs "
                            "(inputs.json, a repro's load_args or saved tensors)",
                            spec->name ? spec->name : "?", m->sizes[d].sym ? m->sizes[d].sym : "?");
      if (v < 0)
        return fx_diag_set (diag, FX_ERR_INVALID, "input '%s': size %s is negative (%lld)",
                            spec->name ? spec->name : "?", m->sizes[d].sym ? m->sizes[d].sym : "?", (long long) v);
      r->sizes[d] = (fx_dim) { v, NULL };
      if (m->strides)
        {
          if (!sym_eval (env, &m->strides[d], &v))
            {
              /* an unknown symbolic stride: fall back to contiguous strides */
              r->strides = NULL;
              continue;
            }
          if (r->strides)
            r->strides[d] = (fx_dim) { v, NULL };
        }
    }
  return FX_OK;
}

fx_status
fx_inputs_make (const fx_graph *graph, fx_inputs_source source, const char *path, uint64_t seed, fx_allocator *alloc,
                fx_arena *arena, fx_value **inputs, size_t *n_inputs, fx_diag *diag)
{
  *inputs = NULL;
  *n_inputs = 0;
  size_t nph = fx_graph_count_op (graph, FX_OP_PLACEHOLDER);
  fx_value *vals = fx_arena_alloc (arena, sizeof (fx_value) * (nph ? nph : 1));
  fx_generator gen;
  fx_generator_seed (&gen, seed);
  fx_input_spec *specs = NULL;
  size_t n_specs = 0;
  if (source == FX_INPUTS_JSON)
    {
      char *text;
      size_t len;
      fx_status st = fx_file_read (path, &text, &len, diag);
      if (st != FX_OK)
        return st;
      st = fx_inputs_parse_json (text, len, path, arena, &specs, &n_specs, diag);
      free (text);
      if (st != FX_OK)
        return st;
      if (n_specs != nph)
        return fx_diag_set (diag, FX_ERR_INVALID, "%s describes %zu inputs but the graph has %zu placeholders", path,
                            n_specs, nph);
    }
  else if (source == FX_INPUTS_SPEC && graph->n_inputs == nph && nph > 0)
    {
      specs = graph->inputs;
      n_specs = graph->n_inputs;
    }
  /* bind shape symbols: from the specs (symint values in order), else from the placeholders' Sym hints */
  sym_env env;
  memset (&env, 0, sizeof env);
  if (specs != NULL)
    {
      for (size_t k = 0; k < n_specs; k++)
        if (specs[k].kind == FX_INPUT_SYMINT || specs[k].val.kind == FX_VAL_SYMINT || specs[k].val.kind == FX_VAL_INT)
          {
            if (specs[k].val.sym != NULL && is_ident (specs[k].val.sym))
              sym_bind (&env, specs[k].val.sym, specs[k].val.i);
            else if (env.n_pending < 64)
              env.pending[env.n_pending++] = specs[k].val.i;
          }
        else if (specs[k].val.kind == FX_VAL_TENSOR)
          for (int d = 0; d < specs[k].val.tensor.ndim; d++)
            sym_see (&env, &specs[k].val.tensor.sizes[d]);
    }
  else
    fx_graph_foreach_node (graph, n)
    {
      if (n->op == FX_OP_PLACEHOLDER && n->meta.val.kind == FX_VAL_SYMINT && n->meta.val.sym != NULL
          && is_ident (n->meta.val.sym) && n->meta.val.i >= 0)
        sym_bind (&env, n->meta.val.sym, n->meta.val.i);
    }
  size_t i = 0, total_bytes = 0, max_bytes = fx_tensor_max_bytes ();
  fx_status st = FX_OK;
  fx_graph_foreach_node (graph, n)
  {
    if (n->op != FX_OP_PLACEHOLDER)
      continue;
    fx_input_spec resolved;
    if (source == FX_INPUTS_SAVED)
      {
        char p1[4096];
        fx_tensor *t = NULL;
        snprintf (p1, sizeof p1, "%s/%s.fxt", path, n->name);
        FILE *f = fopen (p1, "rb");
        if (f == NULL)
          snprintf (p1, sizeof p1, "%s/%zu.fxt", path, i);
        else
          fclose (f);
        st = fx_tensor_load (p1, alloc, &t, diag);
        if (st == FX_OK)
          vals[i] = fx_value_tensor (t);
        else if (diag)
          {
            char msg[sizeof diag->message];
            snprintf (msg, sizeof msg, "%s", diag->message);
            fx_diag_set (diag, st, "placeholder '%s': no saved tensor %s/%s.fxt or %s/%zu.fxt (%.400s)", n->name,
                         path, n->name, path, i, msg);
          }
      }
    else if (specs != NULL)
      {
        st = resolve_spec (&specs[i], &env, arena, &resolved, diag);
        if (st == FX_OK)
          st = fx_input_from_spec (&resolved, &gen, alloc, &vals[i], diag);
      }
    else
      {
        fx_input_spec sp = fx_input_spec_of_placeholder (n);
        if (sp.val.kind == FX_VAL_NONE)
          {
            st = fx_diag_set (diag, FX_ERR_INVALID,
                              "placeholder '%s' has no shape annotation; give inputs with --inputs FILE", n->name);
            if (diag)
              snprintf (diag->node, sizeof diag->node, "%s", n->name);
          }
        else
          {
            st = resolve_spec (&sp, &env, arena, &resolved, diag);
            if (st == FX_OK)
              st = fx_input_from_spec (&resolved, &gen, alloc, &vals[i], diag);
          }
      }
    /* one input may fit while all of them together do not: the limit covers their sum */
    if (st == FX_OK && vals[i].kind == FX_VALUE_TENSOR && vals[i].u.t->storage != NULL)
      {
        total_bytes += vals[i].u.t->storage->nbytes;
        if (total_bytes > max_bytes)
          {
            fx_value_clear (&vals[i]);
            st = fx_diag_set (diag, FX_ERR_NOMEM, "placeholder '%s': the example inputs need %zu bytes in all, more "
                              "than the %zu bytes allowed (physical memory, or $FX_MAX_TENSOR_BYTES)", n->name,
                              total_bytes, max_bytes);
          }
      }
    if (st != FX_OK)
      {
        if (diag && diag->node[0] == '\0')
          snprintf (diag->node, sizeof diag->node, "%s", n->name);
        break;
      }
    i++;
  }
  if (st != FX_OK)
    {
      for (size_t k = 0; k < i; k++)
        fx_value_clear (&vals[k]);
      return st;
    }
  *inputs = vals;
  *n_inputs = nph;
  return FX_OK;
}

static void
scale_meta (fx_tensor_meta *m, int64_t divisor, int64_t min_size)
{
  for (int d = 0; d < m->ndim; d++)
    if (m->sizes[d].value >= min_size)
      m->sizes[d].value = m->sizes[d].value / divisor > 0 ? m->sizes[d].value / divisor : 1;
  if (m->strides)
    {
      int64_t acc = 1;
      /* keep the stride order, recompute dense strides */
      int order[FX_TENSOR_MAX_DIMS];
      for (int d = 0; d < m->ndim; d++)
        order[d] = d;
      for (int a = 1; a < m->ndim; a++)
        for (int b = a; b > 0 && m->strides[order[b - 1]].value < m->strides[order[b]].value; b--)
          {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
          }
      for (int k = m->ndim - 1; k >= 0; k--)
        {
          m->strides[order[k]].value = acc;
          if (!fx_size_mul (acc, m->sizes[order[k]].value, &acc))
            acc = INT64_MAX;   /* refused with the node's name when the input is made */
        }
    }
}

static void
scale_int_args (fx_arg *a, int64_t divisor, const int64_t *sizes, size_t n_sizes)
{
  if (a->kind == FX_ARG_INT)
    {
      for (size_t i = 0; i < n_sizes; i++)
        if (a->u.i == sizes[i] || a->u.i == -sizes[i])
          {
            int64_t v = sizes[i] / divisor > 0 ? sizes[i] / divisor : 1;
            a->u.i = a->u.i < 0 ? -v : v;
            return;
          }
    }
  else if (a->kind == FX_ARG_LIST || a->kind == FX_ARG_TUPLE)
    for (size_t i = 0; i < a->u.seq.n; i++)
      scale_int_args (&a->u.seq.items[i], divisor, sizes, n_sizes);
}

void
fx_graph_scale_inputs (fx_graph *graph, int64_t divisor, int64_t min_size)
{
  /* literal sizes in arguments (view shapes, normalized_shape) that equal a scaled input size scale with it */
  int64_t sizes[64];
  size_t n_sizes = 0;
  fx_graph_foreach_node (graph, n)
  {
    if (n->op != FX_OP_PLACEHOLDER || n->meta.val.kind != FX_VAL_TENSOR)
      continue;
    for (int d = 0; d < n->meta.val.tensor.ndim && n_sizes < 64; d++)
      if (n->meta.val.tensor.sizes[d].value >= min_size)
        sizes[n_sizes++] = n->meta.val.tensor.sizes[d].value;
  }
  fx_graph_foreach_node (graph, n)
  {
    if (n->op == FX_OP_CALL_FUNCTION)
      for (size_t i = 0; i < n->n_args; i++)
        scale_int_args (&n->args[i], divisor, sizes, n_sizes);
  }
  for (size_t i = 0; i < graph->n_inputs; i++)
    if (graph->inputs[i].val.kind == FX_VAL_TENSOR)
      scale_meta (&graph->inputs[i].val.tensor, divisor, min_size);
  fx_graph_foreach_node (graph, n)
  {
    if (n->op == FX_OP_PLACEHOLDER && n->meta.val.kind == FX_VAL_TENSOR)
      scale_meta (&n->meta.val.tensor, divisor, min_size);
  }
}

fx_status
fx_graph_load_input_specs (fx_graph *graph, const char *path, fx_diag *diag)
{
  char *text = NULL;
  size_t len = 0;
  fx_status st = fx_file_read (path, &text, &len, diag);
  if (st != FX_OK)
    return st;
  fx_input_spec *specs = NULL;
  size_t n = 0;
  st = fx_inputs_parse_json (text, len, path, graph->arena, &specs, &n, diag);
  free (text);
  for (size_t i = 0; st == FX_OK && i < n; i++)
    fx_graph_add_input_spec (graph, specs[i].name, specs[i].kind)->val = specs[i].val;
  return st;
}

fx_value *
fx_inputs_for_run (const fx_graph *graph, const fx_value *inputs, size_t n_inputs)
{
  bool *written = calloc (n_inputs + 1, sizeof *written);
  bool any = false;
  if (!written)
    return NULL;
  for (const fx_node *n = graph ? graph->first : NULL; n; n = n->next)
    {
      if (n->erased || n->op != FX_OP_CALL_FUNCTION || n->target.kind != FX_TARGET_OP || n->n_args < 1
          || n->args[0].kind != FX_ARG_NODE || !fx_op_name_is_inplace (n->target.name))
        continue;
      int pos = fx_graph_placeholder_position (graph, n->args[0].u.node);
      size_t index = (size_t) pos;
      if (pos >= 0 && index < n_inputs && inputs[index].kind == FX_VALUE_TENSOR && inputs[index].u.t
          && inputs[index].u.t->device.type == FX_DEVICE_CPU)
        any = written[index] = true;
    }
  fx_value *out = any ? calloc (n_inputs + 1, sizeof *out) : NULL;
  for (size_t i = 0; out && i < n_inputs; i++)
    {
      out[i] = inputs[i];
      if (inputs[i].kind != FX_VALUE_TENSOR || !inputs[i].u.t)
        continue;
      const fx_tensor *t = inputs[i].u.t;
      fx_tensor *copy = written[i] ? fx_tensor_new_strided (NULL, t->dtype, t->ndim, t->sizes, t->strides) : NULL;
      if (copy && fx_tensor_copy_into (copy, t, NULL) != FX_OK)
        {
          fx_tensor_unref (copy);
          copy = NULL;
        }
      /* no memory for a copy: that input is shared, as before */
      out[i].u.t = copy ? copy : fx_tensor_ref (inputs[i].u.t);
    }
  free (written);
  return out;
}

void
fx_inputs_for_run_free (fx_value *values, size_t n_inputs)
{
  for (size_t i = 0; values && i < n_inputs; i++)
    if (values[i].kind == FX_VALUE_TENSOR && values[i].u.t)
      fx_tensor_unref (values[i].u.t);
  free (values);
}
