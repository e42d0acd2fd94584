/* fx-diff-compile.c: compile diffs read from workspaces (guards and the failure that caused the recompile, graphs,
   kernels, fusion groups, generated code, metrics, stored runs) and workspace diffs pairing compiles by id. */
#include "fx/diff.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fx/guards.h"
#include "fx-diff-impl.h"

void
fx_diff_compile_opts_init (fx_diff_compile_opts *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->what = FX_DIFF_WHAT_ALL;
  fx_diff_graph_opts_init (&opts->graph);
}

static fx_status
compile_info (fx_store *store, int64_t row, fx_arena *arena, fx_store_compile *out, fx_diag *diag)
{
  fx_store_compile *cs = NULL;
  size_t n = 0;
  fx_status st = fx_store_list_compiles (store, arena, &cs, &n, diag);
  if (st != FX_OK)
    return st;
  for (size_t i = 0; i < n; i++)
    if (cs[i].id == row)
      {
        *out = cs[i];
        return FX_OK;
      }
  return fx_diag_set (diag, FX_ERR_NOT_FOUND, "no compile row %lld in the workspace", (long long) row);
}

/* Object ids and type ids change from process to process: long digit runs compare as one token. */
static char *
normalize_code (fx_arena *arena, const char *code)
{
  if (!code)
    return NULL;
  size_t n = strlen (code);
  char *out = fx_arena_alloc (arena, n + 1), *o = out;
  for (const char *p = code; *p;)
    {
      if (isdigit ((unsigned char) *p))
        fx_diff_mask_digits (&p, &o, 8);
      else
        *o++ = *p++;
    }
  *o = '\0';
  return out;
}

/* ------------------------------------------------------------------ guards */

static const char *
guard_name (fx_arena *arena, const fx_store_guard *g)
{
  if (g->source && *g->source && strcmp (g->source, "-") != 0)
    return fx_arena_printf (arena, "%s %s", g->kind, g->source);
  return fx_arena_strdup (arena, g->kind);
}

static bool
has_source (const fx_store_guard *g)
{
  return g->source && *g->source && strcmp (g->source, "-") != 0;
}

/* The guard of a whose failure the reason describes: "tensor 'x' ..." names a TENSOR_MATCH source; other reasons
   start with the guard's code, locals stripped ("n == 3  # ..."). */
static const fx_store_guard *
find_failed_guard (const fx_store_guard *g, size_t n, const char *reason)
{
  if (!reason)
    return NULL;
  fx_buf tmp;
  fx_buf_init (&tmp);
  const fx_store_guard *best = NULL;
  size_t best_len = 0;
  const char *q;
  if (strncmp (reason, "tensor '", 8) == 0 && (q = strchr (reason + 8, '\'')))
    {
      size_t len = (size_t) (q - (reason + 8));
      for (size_t i = 0; i < n && !best; i++)
        {
          if (!g[i].kind || strcmp (g[i].kind, "TENSOR_MATCH") != 0 || !has_source (&g[i]))
            continue;
          fx_buf_reset (&tmp);
          fx_guard_strip_local_scope (g[i].source, &tmp);
          if ((tmp.len == len && strncmp (tmp.data, reason + 8, len) == 0)
              || (strlen (g[i].source) == len && strncmp (g[i].source, reason + 8, len) == 0))
            best = &g[i];
        }
    }
  for (size_t i = 0; i < n && !best; i++)
    {
      if (!g[i].code)
        continue;
      fx_buf_reset (&tmp);
      fx_guard_strip_local_scope (g[i].code, &tmp);
      const char *codes[2] = { tmp.data, g[i].code };
      for (int c = 0; c < 2; c++)
        {
          size_t len = strlen (codes[c]);
          if (len > best_len && len >= 3 && strstr (reason, codes[c]))
            {
              best = &g[i];
              best_len = len;
            }
        }
    }
  fx_buf_free (&tmp);
  return best;
}

static fx_status
diff_guards (fx_diff *diff, fx_store *sa, const fx_store_compile *a, fx_store *sb, const fx_store_compile *b,
             const char *scope, fx_arena *arena, fx_diag *diag)
{
  fx_store_guard *ga = NULL, *gb = NULL;
  size_t na = 0, nb = 0;
  fx_status st = fx_store_list_guards (sa, a->id, arena, &ga, &na, diag);
  if (st == FX_OK)
    st = fx_store_list_guards (sb, b->id, arena, &gb, &nb, diag);
  if (st != FX_OK)
    return st;

  /* The failure first: it is why b exists. */
  fx_store_guard_failure *f = NULL;
  size_t nf = 0;
  if ((st = fx_store_list_guard_failures (sb, b->id, arena, &f, &nf, diag)) != FX_OK)
    return st;
  for (size_t i = 0; i < nf; i++)
    {
      /* b's failures name every cache entry that failed before it compiled; the one of a says why b exists. */
      if (!f[i].failed_compile || strcmp (f[i].failed_compile, a->compile_id) != 0)
        continue;
      const fx_store_guard *g = find_failed_guard (ga, na, f[i].reason);
      const char *reason = f[i].failed_compile
                             ? fx_arena_printf (arena, "%s: %s", f[i].failed_compile, f[i].reason ? f[i].reason : "")
                             : f[i].reason;
      fx_diff_add (diff, FX_DIFF_SECTION_GUARDS, FX_DIFF_FAILURE, scope, "guard", g ? guard_name (arena, g) : NULL,
                   NULL, "failure", g ? g->code : NULL, reason);
    }

  /* Paired by kind, source and code; then what is left by kind and source (a guard whose code changed). */
  fx_diff_pairing m = fx_diff_pairing_new (arena, na, nb);
  const char **la = fx_arena_alloc (arena, (na + 1) * sizeof *la), **lb = fx_arena_alloc (arena, (nb + 1) * sizeof *lb);
  for (size_t i = 0; i < na; i++)
    {
      m.ka[i] = fx_arena_printf (arena, "%s\x1f%s\x1f%s", ga[i].kind, ga[i].source ? ga[i].source : "",
                                 normalize_code (arena, ga[i].code));
      la[i] = has_source (&ga[i]) ? fx_arena_printf (arena, "%s\x1f%s", ga[i].kind, ga[i].source) : NULL;
    }
  for (size_t j = 0; j < nb; j++)
    {
      m.kb[j] = fx_arena_printf (arena, "%s\x1f%s\x1f%s", gb[j].kind, gb[j].source ? gb[j].source : "",
                                 normalize_code (arena, gb[j].code));
      lb[j] = has_source (&gb[j]) ? fx_arena_printf (arena, "%s\x1f%s", gb[j].kind, gb[j].source) : NULL;
    }
  fx_diff_pairing_match (&m);
  fx_diff_match_keys (la, na, lb, nb, m.pa, m.pb);
  /* In b's order, a's removed guards where they stood. */
  for (size_t i = 0; i < na; i++)
    if (m.pa[i] >= 0 && strcmp (m.ka[i], m.kb[m.pa[i]]) != 0)
      fx_diff_add (diff, FX_DIFF_SECTION_GUARDS, FX_DIFF_CHANGED, scope, "guard", guard_name (arena, &ga[i]),
                   guard_name (arena, &gb[m.pa[i]]), "code", ga[i].code, gb[m.pa[i]].code);
  for (size_t i = 0; i < na; i++)
    if (m.pa[i] < 0)
      fx_diff_add (diff, FX_DIFF_SECTION_GUARDS, FX_DIFF_REMOVED, scope, "guard", guard_name (arena, &ga[i]), NULL,
                   NULL, ga[i].code, NULL);
  for (size_t j = 0; j < nb; j++)
    if (m.pb[j] < 0)
      fx_diff_add (diff, FX_DIFF_SECTION_GUARDS, FX_DIFF_ADDED, scope, "guard", NULL, guard_name (arena, &gb[j]),
                   NULL, NULL, gb[j].code);
  return FX_OK;
}

/* ------------------------------------------------------------------ graphs */

static const fx_store_graph_info *
find_stage (const fx_store_graph_info *gi, size_t n, const char *stage)
{
  const fx_store_graph_info *found = NULL;
  for (size_t i = 0; i < n; i++)
    if (strcmp (gi[i].stage, stage) == 0)
      found = &gi[i]; /* the last one stored under the stage, as fxwb show does */
  return found;
}

static fx_status
diff_one_stage (fx_diff *diff, fx_store *sa, const fx_store_graph_info *ia, fx_store *sb,
                const fx_store_graph_info *ib, const char *scope, const fx_diff_compile_opts *opts, fx_diag *diag)
{
  fx_graph *ga = NULL, *gb = NULL;
  char *ta = NULL, *tb = NULL;
  fx_status st = fx_store_get_graph (sa, ia->id, &ga, &ta, diag);
  if (st == FX_OK)
    st = fx_store_get_graph (sb, ib->id, &gb, &tb, diag);
  if (st == FX_OK && ga && gb)
    {
      diff->owned = realloc (diff->owned, (diff->n_owned + 2) * sizeof *diff->owned);
      diff->owned[diff->n_owned++] = ga;
      diff->owned[diff->n_owned++] = gb;
      st = fx_diff_graphs (diff, ga, gb, scope, &opts->graph, diag);
      ga = gb = NULL;
    }
  else if (st == FX_OK)
    /* A graph that did not parse: its text, line by line. */
    fx_diff_text (diff, FX_DIFF_SECTION_GRAPH, scope, ta, tb, opts->graph.context);
  fx_graph_free (ga);
  fx_graph_free (gb);
  free (ta);
  free (tb);
  return st;
}

static fx_status
diff_graphs (fx_diff *diff, fx_store *sa, const fx_store_compile *a, fx_store *sb, const fx_store_compile *b,
             const char *pair, const fx_diff_compile_opts *opts, bool strict, fx_arena *arena, fx_diag *diag)
{
  fx_store_graph_info *ia = NULL, *ib = NULL;
  size_t na = 0, nb = 0;
  fx_status st = fx_store_list_graphs (sa, a->id, arena, &ia, &na, diag);
  if (st == FX_OK)
    st = fx_store_list_graphs (sb, b->id, arena, &ib, &nb, diag);
  if (st != FX_OK)
    return st;
  bool all = opts->stage && strcmp (opts->stage, "all") == 0;
  for (size_t i = 0; i < na && st == FX_OK; i++)
    {
      const char *stage = ia[i].stage;
      if (find_stage (ia, na, stage) != &ia[i])
        continue; /* a stage stored twice: its last graph only */
      const fx_store_graph_info *jb = find_stage (ib, nb, stage);
      if (!jb)
        {
          if (all || (opts->stage && strcmp (opts->stage, stage) == 0))
            fx_diff_add (diff, FX_DIFF_SECTION_GRAPH, FX_DIFF_REMOVED, pair, "graph", stage, NULL, NULL, NULL, NULL);
          continue;
        }
      if (!all && strcmp (stage, opts->stage ? opts->stage : "dynamo") != 0)
        continue;
      const char *scope = fx_arena_printf (arena, "%s %s", pair, stage);
      st = diff_one_stage (diff, sa, &ia[i], sb, jb, scope, opts, diag);
      if (!all)
        return st;
    }
  if (st != FX_OK || all)
    {
      for (size_t j = 0; all && j < nb; j++)
        if (!find_stage (ia, na, ib[j].stage) && find_stage (ib, nb, ib[j].stage) == &ib[j])
          fx_diff_add (diff, FX_DIFF_SECTION_GRAPH, FX_DIFF_ADDED, pair, "graph", NULL, ib[j].stage, NULL, NULL,
                       NULL);
      return st;
    }
  if (opts->stage)
    {
      /* Naming a stage neither compile has is a mistake when diffing two compiles, not when pairing workspaces. */
      if (!find_stage (ib, nb, opts->stage) && !find_stage (ia, na, opts->stage) && !strict)
        return FX_OK;
      if (!find_stage (ib, nb, opts->stage) && !find_stage (ia, na, opts->stage))
        return fx_diag_set (diag, FX_ERR_NOT_FOUND, "neither %s nor %s has a '%s' graph", a->compile_id,
                            b->compile_id, opts->stage);
      if (!find_stage (ia, na, opts->stage))
        fx_diff_add (diff, FX_DIFF_SECTION_GRAPH, FX_DIFF_ADDED, pair, "graph", NULL, opts->stage, NULL, NULL, NULL);
      return FX_OK;
    }
  /* No dynamo graph on both sides (a .pt2 or TORCH_COMPILE_DEBUG import): the first stage both have. */
  for (size_t i = 0; i < na; i++)
    {
      const fx_store_graph_info *jb = find_stage (ib, nb, ia[i].stage);
      if (jb)
        return diff_one_stage (diff, sa, find_stage (ia, na, ia[i].stage), sb, jb,
                               fx_arena_printf (arena, "%s %s", pair, ia[i].stage), opts, diag);
    }
  return FX_OK;
}

/* ------------------------------------------------------------------ kernels and fusion groups */

static fx_status
diff_kernels (fx_diff *diff, fx_store *sa, const fx_store_compile *a, fx_store *sb, const fx_store_compile *b,
              const char *scope, fx_arena *arena, fx_diag *diag)
{
  fx_store_kernel *ka = NULL, *kb = NULL;
  size_t na = 0, nb = 0;
  fx_status st = fx_store_list_kernels (sa, a->id, arena, &ka, &na, diag);
  if (st == FX_OK)
    st = fx_store_list_kernels (sb, b->id, arena, &kb, &nb, diag);
  if (st != FX_OK)
    return st;
  fx_diff_pairing m = fx_diff_pairing_new (arena, na, nb);
  const char **ya = fx_arena_alloc (arena, (na + 1) * sizeof *ya), **yb = fx_arena_alloc (arena, (nb + 1) * sizeof *yb);
  for (size_t i = 0; i < na; i++)
    m.ka[i] = ka[i].name, ya[i] = ka[i].nodes;
  for (size_t j = 0; j < nb; j++)
    m.kb[j] = kb[j].name, yb[j] = kb[j].nodes;
  fx_diff_pairing_match (&m);
  /* A kernel renamed (another ordinal suffix) that covers the same nodes is the same kernel. */
  fx_diff_match_keys (ya, na, yb, nb, m.pa, m.pb);
  for (size_t i = 0; i < na; i++)
    {
      if (m.pa[i] < 0)
        {
          fx_diff_add (diff, FX_DIFF_SECTION_KERNELS, FX_DIFF_REMOVED, scope, "kernel", ka[i].name, NULL, NULL,
                       fx_arena_printf (arena, "%s [%s]", ka[i].kind ? ka[i].kind : "", ka[i].nodes ? ka[i].nodes : ""),
                       NULL);
          continue;
        }
      const fx_store_kernel *k = &kb[m.pa[i]];
      if (strcmp (ka[i].name, k->name) != 0)
        fx_diff_add (diff, FX_DIFF_SECTION_KERNELS, FX_DIFF_CHANGED, scope, "kernel", ka[i].name, k->name, "name",
                     ka[i].name, k->name);
      const char *fields[][3] = {
        { "nodes", ka[i].nodes, k->nodes },
        { "aten", ka[i].aten, k->aten },
        { "kind", ka[i].kind, k->kind },
        { "device", ka[i].device, k->device },
      };
      for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
        if (!((fields[f][1] == NULL && fields[f][2] == NULL)
              || (fields[f][1] && fields[f][2] && strcmp (fields[f][1], fields[f][2]) == 0)))
          fx_diff_add (diff, FX_DIFF_SECTION_KERNELS, FX_DIFF_CHANGED, scope, "kernel", ka[i].name, k->name,
                       fields[f][0], fields[f][1], fields[f][2]);
      if (!((ka[i].code == NULL && k->code == NULL) || (ka[i].code && k->code && strcmp (ka[i].code, k->code) == 0)))
        {
          /* The lines themselves are in the code section; here, how much changed. */
          fx_diff tmp_diff;
          memset (&tmp_diff, 0, sizeof tmp_diff);
          tmp_diff.arena = fx_arena_new ();
          fx_diff_text (&tmp_diff, FX_DIFF_SECTION_CODE, NULL, ka[i].code, k->code, 0);
          size_t minus = 0, plus = 0;
          for (size_t h = 0; h < tmp_diff.n_entries; h++)
            for (const char *p = tmp_diff.entries[h].new_text; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : "")
              minus += *p == '-', plus += *p == '+';
          fx_diff_add (diff, FX_DIFF_SECTION_KERNELS, FX_DIFF_CHANGED, scope, "kernel", ka[i].name, k->name, "code",
                       fx_arena_printf (arena, "-%zu lines", minus), fx_arena_printf (arena, "+%zu lines", plus));
          free (tmp_diff.entries);
          fx_arena_free (tmp_diff.arena);
        }
    }
  for (size_t j = 0; j < nb; j++)
    if (m.pb[j] < 0)
      fx_diff_add (diff, FX_DIFF_SECTION_KERNELS, FX_DIFF_ADDED, scope, "kernel", NULL, kb[j].name, NULL, NULL,
                   fx_arena_printf (arena, "%s [%s]", kb[j].kind ? kb[j].kind : "", kb[j].nodes ? kb[j].nodes : ""));

  fx_store_fusion_group *fa = NULL, *fb = NULL;
  if ((st = fx_store_list_fusion_groups (sa, a->id, arena, &fa, &na, diag)) != FX_OK
      || (st = fx_store_list_fusion_groups (sb, b->id, arena, &fb, &nb, diag)) != FX_OK)
    return st;
  m = fx_diff_pairing_new (arena, na, nb);
  /* A fusion group is what it fuses: keyed by its nodes. */
  for (size_t i = 0; i < na; i++)
    m.ka[i] = fa[i].nodes ? fa[i].nodes : fa[i].name;
  for (size_t j = 0; j < nb; j++)
    m.kb[j] = fb[j].nodes ? fb[j].nodes : fb[j].name;
  fx_diff_pairing_match (&m);
  for (size_t i = 0; i < na; i++)
    if (m.pa[i] < 0)
      fx_diff_add (diff, FX_DIFF_SECTION_KERNELS, FX_DIFF_REMOVED, scope, "fusion group", fa[i].name, NULL, NULL,
                   fx_arena_printf (arena, "[%s]", fa[i].nodes ? fa[i].nodes : ""), NULL);
  for (size_t j = 0; j < nb; j++)
    if (m.pb[j] < 0)
      fx_diff_add (diff, FX_DIFF_SECTION_KERNELS, FX_DIFF_ADDED, scope, "fusion group", NULL, fb[j].name, NULL, NULL,
                   fx_arena_printf (arena, "[%s]", fb[j].nodes ? fb[j].nodes : ""));
  return FX_OK;
}

/* ------------------------------------------------------------------ code */

static const char *
artifact (const fx_store_kv *kv, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (kv[i].key, name) == 0)
      return kv[i].value;
  return NULL;
}

static fx_status
diff_code (fx_diff *diff, fx_store *sa, const fx_store_compile *a, fx_store *sb, const fx_store_compile *b,
           const char *pair, const fx_diff_compile_opts *opts, fx_arena *arena, fx_diag *diag)
{
  fx_store_kv *xa = NULL, *xb = NULL;
  size_t na = 0, nb = 0;
  fx_status st = fx_store_list_artifacts (sa, a->id, arena, &xa, &na, diag);
  if (st == FX_OK)
    st = fx_store_list_artifacts (sb, b->id, arena, &xb, &nb, diag);
  if (st != FX_OK)
    return st;
  /* The wrapper Inductor generated: the trace's artifact, else the debug folder's file. */
  static const char *const names[] = { "inductor_output_code", "output_code.py" };
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    {
      const char *ca = artifact (xa, na, names[k]), *cb = artifact (xb, nb, names[k]);
      if (!ca && !cb)
        continue;
      const char *scope = fx_arena_printf (arena, "%s %s", pair, names[k]);
      if (!ca || !cb)
        fx_diff_add (diff, FX_DIFF_SECTION_CODE, ca ? FX_DIFF_REMOVED : FX_DIFF_ADDED, scope, "code",
                     ca ? names[k] : NULL, cb ? names[k] : NULL, NULL, NULL, NULL);
      else
        fx_diff_text (diff, FX_DIFF_SECTION_CODE, scope, ca, cb, opts->graph.context);
      break;
    }
  return FX_OK;
}

/* ------------------------------------------------------------------ metrics */

static bool
parse_number (const char *s, double *v)
{
  if (!s || !*s)
    return false;
  char *end;
  *v = strtod (s, &end);
  return *end == '\0';
}

static void
metric_change (fx_diff *diff, const char *scope, const char *key, const char *va, const char *vb, fx_arena *arena)
{
  if ((va == NULL && vb == NULL) || (va && vb && strcmp (va, vb) == 0))
    return;
  double x, y;
  const char *nb = vb;
  if (parse_number (va, &x) && parse_number (vb, &y) && x != 0)
    nb = fx_arena_printf (arena, "%s (x%.2f)", vb, y / x);
  fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_METRICS, FX_DIFF_CHANGED, scope, "metric", key, key, "value",
                                  va ? va : "null", nb ? nb : "null");
  /* Times and counters follow from the guards, graphs and code above; they do not make compiles differ. */
  e->informational = true;
}

static fx_status
diff_metrics (fx_diff *diff, fx_store *sa, const fx_store_compile *a, fx_store *sb, const fx_store_compile *b,
              const char *scope, fx_arena *arena, fx_diag *diag)
{
  struct
  {
    const char *key;
    double va, vb;
  } times[] = {
    { "entire_frame_compile_time_s", a->entire_frame_compile_s, b->entire_frame_compile_s },
    { "backend_compile_time_s", a->backend_compile_s, b->backend_compile_s },
    { "inductor_compile_time_s", a->inductor_compile_s, b->inductor_compile_s },
    { "graph_op_count", a->graph_op_count, b->graph_op_count },
    { "guard_count", a->guard_count, b->guard_count },
  };
  for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
    {
      if (times[i].va < 0 && times[i].vb < 0)
        continue;
      metric_change (diff, scope, times[i].key, times[i].va < 0 ? NULL : fx_arena_printf (arena, "%g", times[i].va),
                     times[i].vb < 0 ? NULL : fx_arena_printf (arena, "%g", times[i].vb), arena);
    }
  fx_store_kv *ma = NULL, *mb = NULL;
  size_t na = 0, nb = 0;
  fx_status st = fx_store_list_metrics (sa, a->id, arena, &ma, &na, diag);
  if (st == FX_OK)
    st = fx_store_list_metrics (sb, b->id, arena, &mb, &nb, diag);
  if (st != FX_OK)
    return st;
  static const char *const skip[] = { "compile_id", "frame_key", "start_time", "frame_compile_id", "attempt",
                                      "entire_frame_compile_time_s", "backend_compile_time_s",
                                      "inductor_compile_time_s", "graph_op_count", "guard_count", "start_time_us",
                                      "end_time_us", NULL };
  fx_diff_pairing m = fx_diff_pairing_new (arena, na, nb);
  for (size_t i = 0; i < na; i++)
    m.ka[i] = ma[i].key;
  for (size_t j = 0; j < nb; j++)
    m.kb[j] = mb[j].key;
  fx_diff_pairing_match (&m);
  for (size_t i = 0; i < na; i++)
    {
      bool skipped = false;
      for (const char *const *s = skip; *s && !skipped; s++)
        skipped = strcmp (*s, ma[i].key) == 0;
      if (!skipped)
        metric_change (diff, scope, ma[i].key, ma[i].value, m.pa[i] >= 0 ? mb[m.pa[i]].value : NULL, arena);
    }
  for (size_t j = 0; j < nb; j++)
    if (m.pb[j] < 0)
      metric_change (diff, scope, mb[j].key, NULL, mb[j].value, arena);
  return FX_OK;
}

/* ------------------------------------------------------------------ runs */

typedef struct
{
  const char *stage;
  fx_store_run_row run;
} stage_run;

static fx_status
collect_runs (fx_store *s, int64_t row, fx_arena *arena, stage_run **out, size_t *n, fx_diag *diag)
{
  fx_store_graph_info *gi = NULL;
  size_t ng = 0;
  fx_status st = fx_store_list_graphs (s, row, arena, &gi, &ng, diag);
  size_t total = 0, cap = 0;
  stage_run *runs = NULL;
  for (size_t g = 0; g < ng && st == FX_OK; g++)
    {
      fx_store_run_row *r = NULL;
      size_t nr = 0;
      if ((st = fx_store_list_runs (s, gi[g].id, arena, &r, &nr, diag)) != FX_OK)
        break;
      if (total + nr > cap)
        {
          size_t nc = (total + nr) * 2;
          stage_run *bigger = fx_arena_alloc (arena, nc * sizeof *bigger);
          if (total)
            memcpy (bigger, runs, total * sizeof *runs);
          runs = bigger;
          cap = nc;
        }
      for (size_t k = 0; k < nr; k++)
        runs[total++] = (stage_run) { gi[g].stage, r[k] };
    }
  *out = runs;
  *n = total;
  return st;
}

static const char *
run_name (fx_arena *arena, const stage_run *r)
{
  return fx_arena_printf (arena, "%s %s%s%s%s%s", r->stage, r->run.backend, r->run.mode ? "@" : "",
                          r->run.mode ? r->run.mode : "", r->run.options_json ? " " : "",
                          r->run.options_json ? r->run.options_json : "");
}

static fx_status
diff_runs (fx_diff *diff, fx_store *sa, const fx_store_compile *a, fx_store *sb, const fx_store_compile *b,
           const char *scope, fx_arena *arena, fx_diag *diag)
{
  stage_run *ra = NULL, *rb = NULL;
  size_t na = 0, nb = 0;
  fx_status st = collect_runs (sa, a->id, arena, &ra, &na, diag);
  if (st == FX_OK)
    st = collect_runs (sb, b->id, arena, &rb, &nb, diag);
  if (st != FX_OK)
    return st;
  fx_diff_pairing m = fx_diff_pairing_new (arena, na, nb);
  for (size_t i = 0; i < na; i++)
    m.ka[i] = run_name (arena, &ra[i]);
  for (size_t j = 0; j < nb; j++)
    m.kb[j] = run_name (arena, &rb[j]);
  /* The latest run of a configuration on each side: match from the end. */
  fx_diff_pairing rev = fx_diff_pairing_new (arena, na, nb);
  for (size_t i = 0; i < na; i++)
    rev.ka[i] = m.ka[na - 1 - i];
  for (size_t j = 0; j < nb; j++)
    rev.kb[j] = m.kb[nb - 1 - j];
  fx_diff_pairing_match (&rev);
  for (size_t i = 0; i < na; i++)
    if (rev.pa[i] >= 0)
      m.pa[na - 1 - i] = (long) (nb - 1 - (size_t) rev.pa[i]);
  for (size_t j = 0; j < nb; j++)
    if (rev.pb[j] >= 0)
      m.pb[nb - 1 - j] = (long) (na - 1 - (size_t) rev.pb[j]);
  for (size_t i = 0; i < na; i++)
    {
      /* only the latest run of each configuration takes part */
      bool later = false;
      for (size_t k = i + 1; k < na && !later; k++)
        later = strcmp (m.ka[k], m.ka[i]) == 0;
      if (later)
        continue;
      if (m.pa[i] < 0)
        {
          fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_REMOVED, scope, "run", m.ka[i], NULL,
                                          NULL, ra[i].run.verdict, NULL);
          e->informational = true;
          continue;
        }
      /* Outputs and kernel times of a pair go under their own scope: several configurations share the compile's. */
      st = fx_diff_run_pair (diff, sa, &ra[i].run, sb, &rb[m.pa[i]].run, scope, m.ka[i],
                             fx_arena_printf (arena, "%s %s", scope, m.ka[i]), arena, diag);
      if (st != FX_OK)
        return st;
    }
  for (size_t j = 0; j < nb; j++)
    {
      bool later = false;
      for (size_t k = j + 1; k < nb && !later; k++)
        later = strcmp (m.kb[k], m.kb[j]) == 0;
      if (!later && m.pb[j] < 0)
        {
          fx_diff_entry *e = fx_diff_add (diff, FX_DIFF_SECTION_RUNS, FX_DIFF_ADDED, scope, "run", NULL, m.kb[j], NULL,
                                          NULL, rb[j].run.verdict);
          e->informational = true;
        }
    }
  return FX_OK;
}

/* ------------------------------------------------------------------ compiles */

static fx_status
diff_compile_info (fx_diff *diff, fx_store *sa, const fx_store_compile *a, fx_store *sb, const fx_store_compile *b,
                   const fx_diff_compile_opts *opts, bool strict, fx_arena *arena, fx_diag *diag)
{
  const char *pair = strcmp (a->compile_id, b->compile_id) == 0
                       ? fx_arena_printf (arena, "[%s]", a->compile_id)
                       : fx_arena_printf (arena, "[%s] -> [%s]", a->compile_id, b->compile_id);
  fx_status st = FX_OK;
  if (opts->what & FX_DIFF_WHAT_GUARDS)
    st = diff_guards (diff, sa, a, sb, b, pair, arena, diag);
  if (st == FX_OK && (opts->what & FX_DIFF_WHAT_GRAPH))
    st = diff_graphs (diff, sa, a, sb, b, pair, opts, strict, arena, diag);
  if (st == FX_OK && (opts->what & FX_DIFF_WHAT_KERNELS))
    st = diff_kernels (diff, sa, a, sb, b, pair, arena, diag);
  if (st == FX_OK && (opts->what & FX_DIFF_WHAT_CODE))
    st = diff_code (diff, sa, a, sb, b, pair, opts, arena, diag);
  if (st == FX_OK && (opts->what & FX_DIFF_WHAT_METRICS))
    st = diff_metrics (diff, sa, a, sb, b, pair, arena, diag);
  if (st == FX_OK && (opts->what & FX_DIFF_WHAT_RUNS))
    st = diff_runs (diff, sa, a, sb, b, pair, arena, diag);
  return st;
}

fx_status
fx_diff_compiles (fx_diff *diff, fx_store *sa, int64_t ca, fx_store *sb, int64_t cb,
                  const fx_diff_compile_opts *opts, fx_diag *diag)
{
  fx_diff_compile_opts defaults;
  if (!opts)
    {
      fx_diff_compile_opts_init (&defaults);
      opts = &defaults;
    }
  fx_arena *arena = fx_arena_new ();
  fx_store_compile a, b;
  fx_status st = compile_info (sa, ca, arena, &a, diag);
  if (st == FX_OK)
    st = compile_info (sb, cb, arena, &b, diag);
  if (st == FX_OK)
    st = diff_compile_info (diff, sa, &a, sb, &b, opts, true, arena, diag);
  fx_arena_free (arena);
  return st;
}

static const char *
compile_key (fx_arena *arena, const fx_store_compile *c)
{
  /* The compile id text carries the compiled-autograd id, frame, frame compile and attempt. */
  return fx_arena_printf (arena, "%s", c->compile_id);
}

fx_status
fx_diff_workspaces (fx_diff *diff, fx_store *sa, fx_store *sb, const fx_diff_compile_opts *opts, fx_diag *diag)
{
  fx_diff_compile_opts defaults;
  if (!opts)
    {
      fx_diff_compile_opts_init (&defaults);
      opts = &defaults;
    }
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *xa = NULL, *xb = NULL;
  size_t na = 0, nb = 0;
  fx_status st = fx_store_list_compiles (sa, arena, &xa, &na, diag);
  if (st == FX_OK)
    st = fx_store_list_compiles (sb, arena, &xb, &nb, diag);
  if (st != FX_OK)
    {
      fx_arena_free (arena);
      return st;
    }
  fx_diff_pairing m = fx_diff_pairing_new (arena, na, nb);
  for (size_t i = 0; i < na; i++)
    m.ka[i] = compile_key (arena, &xa[i]);
  for (size_t j = 0; j < nb; j++)
    m.kb[j] = compile_key (arena, &xb[j]);
  fx_diff_pairing_match (&m);
  for (size_t i = 0; i < na && st == FX_OK; i++)
    {
      if (m.pa[i] < 0)
        {
          fx_diff_add (diff, FX_DIFF_SECTION_COMPILES, FX_DIFF_REMOVED, NULL, "compile", xa[i].compile_id, NULL,
                       NULL, xa[i].function, NULL);
          continue;
        }
      st = diff_compile_info (diff, sa, &xa[i], sb, &xb[m.pa[i]], opts, false, arena, diag);
    }
  for (size_t j = 0; j < nb && st == FX_OK; j++)
    if (m.pb[j] < 0)
      fx_diff_add (diff, FX_DIFF_SECTION_COMPILES, FX_DIFF_ADDED, NULL, "compile", NULL, xb[j].compile_id, NULL,
                   NULL, xb[j].function);
  fx_arena_free (arena);
  return st;
}
