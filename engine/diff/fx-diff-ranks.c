/* fx-diff-ranks.c: the ranks of a multi-rank workspace (from the TORCH_TRACE file names) and where they diverge,
   compile id by compile id: presence, graph texts, guards, cache results, collective order and runtime estimates. */
#include "fx/ranks.h"

#include <ctype.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/fx-md5.h"
#include "fx-diff-impl.h"

int
fx_rank_from_path (const char *path)
{
  if (!path)
    return -1;
  const char *base = strrchr (path, '/');
  base = base ? base + 1 : path;
  /* torch's dedicated_log_torch_trace_rank_{rank}_{random}.log; the last "_rank_" in case a prefix holds one. */
  const char *hit = NULL;
  for (const char *p = strstr (base, "_rank_"); p; p = strstr (p + 1, "_rank_"))
    hit = p;
  if (!hit || !isdigit ((unsigned char) hit[6]))
    return -1;
  long r = 0;
  const char *d = hit + 6;
  while (isdigit ((unsigned char) *d) && r < 1000000)
    r = r * 10 + (*d++ - '0');
  if (*d != '_' && *d != '.' && *d != '\0')
    return -1;
  return (int) r;
}

static int
cmp_rank_input (const void *a, const void *b)
{
  const fx_rank_input *x = a, *y = b;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return x->input_id < y->input_id ? -1 : x->input_id > y->input_id;
}

fx_status
fx_ranks_list (fx_store *store, fx_arena *arena, fx_rank_input **out, size_t *n, fx_diag *diag)
{
  *out = NULL;
  *n = 0;
  fx_store_input *inputs = NULL;
  size_t n_inputs = 0;
  fx_status st = fx_store_list_inputs (store, arena, &inputs, &n_inputs, diag);
  if (st != FX_OK)
    return st;
  fx_rank_input *r = fx_arena_alloc (arena, (n_inputs + 1) * sizeof *r);
  size_t k = 0;
  for (size_t i = 0; i < n_inputs; i++)
    {
      int rank = fx_rank_from_path (inputs[i].path);
      if (rank < 0)
        continue;
      r[k].rank = rank;
      r[k].input_id = inputs[i].id;
      r[k].path = inputs[i].path;
      k++;
    }
  qsort (r, k, sizeof *r, cmp_rank_input);
  *out = r;
  *n = k;
  return FX_OK;
}

const char *
fx_rank_div_kind_name (fx_rank_div_kind kind)
{
  static const char *const names[] = { "compiles", "graph", "guards", "cache", "collectives", "runtime" };
  _Static_assert (sizeof names / sizeof names[0] == FX_RANK_DIV_COUNT, "a name per divergence kind");
  return (unsigned) kind < FX_RANK_DIV_COUNT ? names[kind] : "?";
}

/* ------------------------------------------------------------------ what is compared per compile */

typedef struct
{
  int64_t row;
  char *graphs;        /* "stage md5\n" per graph */
  char *collectives;   /* "stage: op, op\n" per graph with collectives */
  char *guards;        /* guard code lines, sorted */
  char *cache;         /* cache artifacts, sorted */
  double runtime_ns;   /* the sum of inductor_runtime_and_tensor_meta's estimated_runtime_ns; < 0: none logged */
  int n_compute, n_collective;  /* its ops by type */
} sig;

static int
cmp_cstr (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Functional and c10d collectives named in a graph's text, in order: "torch.ops._c10d_functional.all_reduce.default",
   "torch.ops._c10d_functional.wait_tensor", "torch.ops.c10d.broadcast_". */
static void
collect_collectives (const char *text, fx_buf *out)
{
  static const char *const prefixes[] = { "_c10d_functional.", "_c10d_functional_autograd.", "ops.c10d." };
  bool any = false;
  for (const char *p = text; p && *p;)
    {
      const char *best = NULL;
      size_t best_len = 0;
      for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++)
        {
          const char *h = strstr (p, prefixes[k]);
          if (h && (!best || h < best))
            best = h, best_len = strlen (prefixes[k]);
        }
      if (!best)
        break;
      const char *name = best + best_len, *e = name;
      while (isalnum ((unsigned char) *e) || *e == '_')
        e++;
      if (e > name)
        {
          fx_buf_printf (out, "%s%.*s", any ? ", " : "", (int) (e - name), name);
          any = true;
        }
      p = e > name ? e : best + best_len;
    }
}

/* Object ids and addresses (guards' ___check_obj_id(..., 140389661402528), "at 0x7fb11ce8d430", a graph's
   "# graph id") differ between processes that are the same: they are masked before comparing. A run of 7 or more
   digits, or 0x with 6 or more hex digits, becomes "#". So do the lines a runnable graph carries about its process
   (os.environ[...] = ..., setup_fake_process_groups({... 'rank': N})), which name the rank itself. */
static char *
mask_ids (const char *text)
{
  size_t len = strlen (text);
  char *out = malloc (len + 1), *o = out;
  for (const char *p = text; *p;)
    {
      if (p == text || p[-1] == '\n')
        {
          const char *q = p;
          while (*q == ' ')
            q++;
          if (strncmp (q, "os.environ[", 11) == 0 || strncmp (q, "setup_fake_process_groups(", 26) == 0)
            {
              const char *nl = strchr (q, '\n');
              p = nl ? nl + 1 : q + strlen (q);
              continue;
            }
        }
      bool word_start = p == text || !(isalnum ((unsigned char) p[-1]) || p[-1] == '_');
      if (word_start && p[0] == '0' && p[1] == 'x')
        {
          const char *e = p + 2;
          while (isxdigit ((unsigned char) *e))
            e++;
          if (e - p - 2 >= 6)
            {
              *o++ = '#';
              p = e;
              continue;
            }
        }
      if (word_start && isdigit ((unsigned char) *p))
        fx_diff_mask_digits (&p, &o, 7);
      else
        *o++ = *p++;
    }
  *o = 0;
  return out;
}

static fx_status
sig_load (fx_store *store, fx_arena *arena, int64_t row, sig *s, fx_diag *diag)
{
  memset (s, 0, sizeof *s);
  s->row = row;
  fx_store_graph_info *gs = NULL;
  size_t ng = 0;
  fx_status st = fx_store_list_graphs (store, row, arena, &gs, &ng, diag);
  if (st != FX_OK)
    return st;
  fx_buf graphs, coll;
  fx_buf_init (&graphs);
  fx_buf_init (&coll);
  for (size_t i = 0; i < ng && st == FX_OK; i++)
    {
      char *text = NULL;
      st = fx_store_get_graph (store, gs[i].id, NULL, &text, diag);
      if (st != FX_OK)
        break;
      char hex[33];
      char *masked = mask_ids (text ? text : "");
      fx_md5_hex (masked, strlen (masked), hex);
      free (masked);
      fx_buf_printf (&graphs, "%s %s\n", gs[i].stage, hex);
      fx_buf one;
      fx_buf_init (&one);
      collect_collectives (text, &one);
      if (one.len)
        fx_buf_printf (&coll, "%s: %s\n", gs[i].stage, one.data);
      fx_buf_free (&one);
      free (text);
    }
  s->graphs = fx_arena_strdup (arena, graphs.data ? graphs.data : "");
  s->collectives = fx_arena_strdup (arena, coll.data ? coll.data : "");
  fx_buf_free (&graphs);
  fx_buf_free (&coll);
  if (st != FX_OK)
    return st;

  fx_store_guard *guards = NULL;
  size_t n_guards = 0;
  st = fx_store_list_guards (store, row, arena, &guards, &n_guards, diag);
  if (st != FX_OK)
    return st;
  const char **codes = fx_arena_alloc (arena, (n_guards + 1) * sizeof *codes);
  for (size_t i = 0; i < n_guards; i++)
    {
      char *masked = mask_ids (guards[i].code ? guards[i].code : "");
      codes[i] = fx_arena_strdup (arena, masked);
      free (masked);
    }
  qsort (codes, n_guards, sizeof *codes, cmp_cstr);
  fx_buf b;
  fx_buf_init (&b);
  for (size_t i = 0; i < n_guards; i++)
    fx_buf_printf (&b, "%s\n", codes[i]);
  s->guards = fx_arena_strdup (arena, b.data ? b.data : "");
  fx_buf_reset (&b);

  fx_store_kv *arts = NULL;
  size_t n_arts = 0;
  s->runtime_ns = -1;
  st = fx_store_list_artifacts (store, row, arena, &arts, &n_arts, diag);
  if (st == FX_OK)
    {
      /* Inductor's runtime estimates: {"ops": [{"name", "type": "compute"|"collective", "estimated_runtime_ns"}]}
         (the last one logged, as a recompile's graph replaces the one before) */
      for (size_t i = 0; i < n_arts; i++)
        if (arts[i].key && arts[i].value && strcmp (arts[i].key, "inductor_runtime_and_tensor_meta") == 0)
          {
            json_object *root = json_tokener_parse (arts[i].value), *ops = NULL;
            if (root && json_object_get_type (root) == json_type_object && json_object_object_get_ex (root, "ops", &ops)
                && ops && json_object_get_type (ops) == json_type_array)
              {
                s->runtime_ns = 0;
                s->n_compute = s->n_collective = 0;
                for (size_t k = 0; k < json_object_array_length (ops); k++)
                  {
                    json_object *op = json_object_array_get_idx (ops, k), *v = NULL;
                    if (!op || json_object_get_type (op) != json_type_object)
                      continue;
                    if (json_object_object_get_ex (op, "estimated_runtime_ns", &v) && v
                        && (json_object_get_type (v) == json_type_double || json_object_get_type (v) == json_type_int))
                      s->runtime_ns += json_object_get_double (v);
                    if (json_object_object_get_ex (op, "type", &v) && v && json_object_get_type (v) == json_type_string
                        && strcmp (json_object_get_string (v), "collective") == 0)
                      s->n_collective++;
                    else
                      s->n_compute++;
                  }
              }
            json_object_put (root);
          }
      const char **names = fx_arena_alloc (arena, (n_arts + 1) * sizeof *names);
      size_t k = 0;
      for (size_t i = 0; i < n_arts; i++)
        if (arts[i].key && (strstr (arts[i].key, "cache_hit") || strstr (arts[i].key, "cache_miss")
                            || strstr (arts[i].key, "cache_bypass")))
          names[k++] = arts[i].key;
      qsort (names, k, sizeof *names, cmp_cstr);
      for (size_t i = 0; i < k; i++)
        fx_buf_printf (&b, "%s%s", i ? ", " : "", names[i]);
      s->cache = fx_arena_strdup (arena, b.data ? b.data : "");
    }
  fx_buf_free (&b);
  return st;
}

/* Whether TEXT has a line that is the LEN bytes at LINE. */
static bool
has_line (const char *text, const char *line, size_t len)
{
  for (const char *q = text; *q;)
    {
      const char *qnl = strchr (q, '\n');
      size_t qlen = qnl ? (size_t) (qnl - q) : strlen (q);
      if (qlen == len && memcmp (q, line, len) == 0)
        return true;
      q += qlen + (qnl ? 1 : 0);
    }
  return false;
}

/* The stages whose lines differ between two "stage value\n" lists (stages of either side). */
static char *
differing_stages (fx_arena *arena, const char *a, const char *b, char sep)
{
  fx_buf out;
  fx_buf_init (&out);
  const char *lists[2] = { a, b };
  for (int side = 0; side < 2; side++)
    for (const char *p = lists[side]; *p;)
      {
        const char *nl = strchr (p, '\n');
        size_t len = nl ? (size_t) (nl - p) : strlen (p);
        const char *s = memchr (p, sep, len);
        size_t stage_len = s ? (size_t) (s - p) : len;
        /* The same line on the other side: this stage agrees. */
        if (!has_line (lists[1 - side], p, len))
          {
            char stage[128];
            snprintf (stage, sizeof stage, "%.*s", (int) (stage_len < 120 ? stage_len : 120), p);
            if (!out.data || !strstr (out.data, stage))
              fx_buf_printf (&out, "%s%s", out.len ? ", " : "", stage);
          }
        p += len + (nl ? 1 : 0);
      }
  char *r = fx_arena_strdup (arena, out.data ? out.data : "");
  fx_buf_free (&out);
  return r;
}

/* How many times c occurs in s. */
static int
count_char (const char *s, char c)
{
  int n = 0;
  for (; *s; s++)
    n += *s == c;
  return n;
}

/* Lines of a that b lacks. */
static int
lines_missing (const char *a, const char *b)
{
  int n = 0;
  for (const char *p = a; *p;)
    {
      const char *nl = strchr (p, '\n');
      size_t len = nl ? (size_t) (nl - p) : strlen (p);
      n += !has_line (b, p, len);
      p += len + (nl ? 1 : 0);
    }
  return n;
}

/* Whether two ranks' runtime estimates of a compile diverge: one logged them and the other did not, or their totals
   differ by more than the tolerance. */
static bool
runtime_differs (const sig *x, const sig *y)
{
  if ((x->runtime_ns < 0) != (y->runtime_ns < 0))
    return true;
  if (x->runtime_ns < 0)
    return false;
  double big = x->runtime_ns > y->runtime_ns ? x->runtime_ns : y->runtime_ns;
  return big > 0 && fabs (x->runtime_ns - y->runtime_ns) / big > FX_RANK_RUNTIME_TOLERANCE;
}

/* "12.3 us estimated (3 compute, 1 collective ops)", or "no runtime estimates". */
static void
runtime_words (fx_buf *b, const sig *s)
{
  if (s->runtime_ns < 0)
    {
      fx_buf_puts (b, "no runtime estimates");
      return;
    }
  double v = s->runtime_ns;
  const char *unit = "ns";
  if (v >= 1e6)
    v /= 1e6, unit = "ms";
  else if (v >= 1e3)
    v /= 1e3, unit = "us";
  fx_buf_printf (b, "%.1f %s estimated (%d compute, %d collective op%s)", v, unit, s->n_compute, s->n_collective,
                 s->n_compute + s->n_collective == 1 ? "" : "s");
}

/* ------------------------------------------------------------------ the comparison */

typedef struct
{
  fx_rank_divergence *items;
  size_t n, cap;
} div_list;

static void
add_div (div_list *l, fx_arena *arena, fx_rank_div_kind kind, const char *cid, const char *ranks, int ref_rank,
         int64_t ref_row, int other_rank, int64_t other_row, const char *detail)
{
  if (l->n == l->cap)
    l->items = fx_arena_grow (arena, l->items, &l->cap, sizeof *l->items, 16);
  fx_rank_divergence *d = &l->items[l->n++];
  d->kind = kind;
  d->compile_id = fx_arena_strdup (arena, cid);
  d->ranks = fx_arena_strdup (arena, ranks);
  d->ref_rank = ref_rank;
  d->ref_compile_row = ref_row;
  d->other_rank = other_rank;
  d->other_compile_row = other_row;
  d->detail = fx_arena_strdup (arena, detail);
}

static void
rank_list (fx_buf *b, const fx_rank_input *ranks, const bool *pick, size_t n)
{
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    count += pick[i];
  fx_buf_printf (b, "%s ", count == 1 ? "rank" : "ranks");
  bool first = true;
  for (size_t i = 0; i < n; i++)
    if (pick[i])
      {
        fx_buf_printf (b, "%s%d", first ? "" : ", ", ranks[i].rank);
        first = false;
      }
}

fx_status
fx_ranks_diverge (fx_store *store, fx_arena *arena, fx_rank_divergence **out, size_t *n_out, fx_diag *diag)
{
  *out = NULL;
  *n_out = 0;
  fx_rank_input *ranks = NULL;
  size_t nr = 0;
  fx_status st = fx_ranks_list (store, arena, &ranks, &nr, diag);
  return st != FX_OK ? st : fx_ranks_diverge_from (store, arena, ranks, nr, out, n_out, diag);
}

fx_status
fx_ranks_diverge_from (fx_store *store, fx_arena *arena, const fx_rank_input *ranks, size_t nr,
                       fx_rank_divergence **out, size_t *n_out, fx_diag *diag)
{
  *out = NULL;
  *n_out = 0;
  if (nr < 2)
    return FX_OK;
  fx_store_compile *cs = NULL;
  size_t nc = 0;
  fx_status st = fx_store_list_compiles (store, arena, &cs, &nc, diag);
  if (st != FX_OK)
    return st;

  /* The compile ids in order of first appearance, the lowest rank first. */
  const char **ids = fx_arena_alloc (arena, (nc + 1) * sizeof *ids);
  size_t n_ids = 0;
  for (size_t r = 0; r < nr; r++)
    for (size_t i = 0; i < nc; i++)
      {
        if (cs[i].input_id != ranks[r].input_id)
          continue;
        bool seen = false;
        for (size_t k = 0; k < n_ids && !seen; k++)
          seen = strcmp (ids[k], cs[i].compile_id) == 0;
        if (!seen)
          ids[n_ids++] = cs[i].compile_id;
      }

  div_list l = { 0 };
  int64_t *rows = fx_arena_alloc (arena, nr * sizeof *rows);
  bool *pick = fx_arena_alloc (arena, nr * sizeof *pick);
  sig *sigs = fx_arena_alloc (arena, nr * sizeof *sigs);
  fx_buf b, d;
  fx_buf_init (&b);
  fx_buf_init (&d);
  for (size_t k = 0; k < n_ids && st == FX_OK; k++)
    {
      size_t have = 0;
      for (size_t r = 0; r < nr; r++)
        {
          rows[r] = 0;
          for (size_t i = 0; i < nc && !rows[r]; i++)
            if (cs[i].input_id == ranks[r].input_id && strcmp (cs[i].compile_id, ids[k]) == 0)
              rows[r] = cs[i].id;
          have += rows[r] != 0;
        }
      size_t ref = 0;
      while (!rows[ref])
        ref++;
      if (have < nr)
        {
          /* Name the smaller side: "only on rank 1" reads better than "not on ranks 0, 2, 3". */
          bool name_having = have <= nr - have;
          int other = -1;
          int64_t other_row = 0;
          for (size_t r = 0; r < nr; r++)
            {
              pick[r] = (rows[r] != 0) == name_having;
              if (pick[r] && other < 0)
                other = ranks[r].rank, other_row = rows[r];
            }
          fx_buf_reset (&b);
          rank_list (&b, ranks, pick, nr);
          fx_buf_reset (&d);
          for (size_t r = 0; r < nr; r++)
            pick[r] = rows[r] != 0;
          fx_buf_printf (&d, "made on ");
          rank_list (&d, ranks, pick, nr);
          for (size_t r = 0; r < nr; r++)
            pick[r] = !pick[r];
          fx_buf_printf (&d, ", not on ");
          rank_list (&d, ranks, pick, nr);
          /* The reference is a rank with the compile when the named ranks lack it, and one without otherwise. */
          int ref_rank = ranks[ref].rank;
          int64_t ref_row = rows[ref];
          if (name_having)
            for (size_t r = 0; r < nr; r++)
              if (!rows[r])
                {
                  ref_rank = ranks[r].rank, ref_row = 0;
                  break;
                }
          add_div (&l, arena, FX_RANK_DIV_COMPILES, ids[k], b.data, ref_rank, ref_row, other, other_row, d.data);
        }
      for (size_t r = 0; r < nr && st == FX_OK; r++)
        if (rows[r])
          st = sig_load (store, arena, rows[r], &sigs[r], diag);
      if (st != FX_OK)
        break;
      for (int kind = FX_RANK_DIV_GRAPH; kind < FX_RANK_DIV_COUNT; kind++)
        {
          size_t first = nr;
          for (size_t r = 0; r < nr; r++)
            {
              pick[r] = false;
              if (!rows[r] || r == ref)
                continue;
              const sig *x = &sigs[ref], *y = &sigs[r];
              if (kind == FX_RANK_DIV_RUNTIME)
                pick[r] = runtime_differs (x, y);
              else
                {
                  const char *a = kind == FX_RANK_DIV_GRAPH ? x->graphs : kind == FX_RANK_DIV_GUARDS ? x->guards
                                  : kind == FX_RANK_DIV_CACHE ? x->cache : x->collectives;
                  const char *bb = kind == FX_RANK_DIV_GRAPH ? y->graphs : kind == FX_RANK_DIV_GUARDS ? y->guards
                                   : kind == FX_RANK_DIV_CACHE ? y->cache : y->collectives;
                  pick[r] = strcmp (a, bb) != 0;
                }
              if (pick[r] && first == nr)
                first = r;
            }
          if (first == nr)
            continue;
          const sig *x = &sigs[ref], *y = &sigs[first];
          fx_buf_reset (&b);
          rank_list (&b, ranks, pick, nr);
          fx_buf_reset (&d);
          switch ((fx_rank_div_kind) kind)
            {
            case FX_RANK_DIV_GRAPH:
              {
                char *stages = differing_stages (arena, x->graphs, y->graphs, ' ');
                int n_stages = 1 + count_char (stages, ',');
                char *comma = strchr (stages, ',');
                if (comma && n_stages > 2)
                  *comma = 0;
                fx_buf_printf (&d, "%s%s differ%s from rank %d's (%d graphs vs %d)", stages,
                               n_stages > 2 ? fx_arena_printf (arena, " and %d more stages", n_stages - 1) : "",
                               n_stages > 1 ? "" : "s", ranks[ref].rank, count_char (y->graphs, '\n'),
                               count_char (x->graphs, '\n'));
                break;
              }
            case FX_RANK_DIV_GUARDS:
              fx_buf_printf (&d, "rank %d: %d guards, %d not on rank %d; rank %d has %d it lacks", ranks[first].rank,
                             count_char (y->guards, '\n'), lines_missing (y->guards, x->guards), ranks[ref].rank,
                             ranks[ref].rank, lines_missing (x->guards, y->guards));
              break;
            case FX_RANK_DIV_CACHE:
              fx_buf_printf (&d, "rank %d: %s; rank %d: %s", ranks[first].rank, *y->cache ? y->cache : "none",
                             ranks[ref].rank, *x->cache ? x->cache : "none");
              break;
            case FX_RANK_DIV_COLLECTIVES:
              {
                /* The first stage that differs, its sequence on each side. */
                char *stages = differing_stages (arena, x->collectives, y->collectives, ':');
                int n_stages = 1 + count_char (stages, ',');
                char *comma = strchr (stages, ',');
                if (comma)
                  *comma = 0;
                fx_buf_printf (&d, "%s%s: rank %d issues ", stages,
                               n_stages > 1 ? fx_arena_printf (arena, " (and %d more stages)", n_stages - 1) : "",
                               ranks[first].rank);
                const char *lists[2] = { y->collectives, x->collectives };
                size_t sl = strlen (stages);
                for (int side = 0; side < 2; side++)
                  {
                    const char *p = lists[side], *hit = NULL;
                    for (; *p && !hit; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : p + strlen (p))
                      if (strncmp (p, stages, sl) == 0 && p[sl] == ':')
                        hit = p;
                    if (hit)
                      {
                        const char *nl = strchr (hit, '\n');
                        fx_buf_printf (&d, "%.*s", (int) ((nl ? nl : hit + strlen (hit)) - hit - sl - 2), hit + sl + 2);
                      }
                    else
                      fx_buf_printf (&d, "none");
                    if (side == 0)
                      fx_buf_printf (&d, "; rank %d ", ranks[ref].rank);
                  }
                break;
              }
            case FX_RANK_DIV_RUNTIME:
              fx_buf_printf (&d, "rank %d: ", ranks[first].rank);
              runtime_words (&d, y);
              fx_buf_printf (&d, "; rank %d: ", ranks[ref].rank);
              runtime_words (&d, x);
              if (x->runtime_ns > 0 && y->runtime_ns >= 0)
                fx_buf_printf (&d, " (%+.0f%%)", (y->runtime_ns - x->runtime_ns) / x->runtime_ns * 100.0);
              break;
            case FX_RANK_DIV_COMPILES:
            case FX_RANK_DIV_COUNT:
            default:
              break;
            }
          add_div (&l, arena, (fx_rank_div_kind) kind, ids[k], b.data, ranks[ref].rank, rows[ref],
                   ranks[first].rank, rows[first], d.data);
        }
    }
  fx_buf_free (&b);
  fx_buf_free (&d);
  *out = l.items;
  *n_out = l.n;
  return st;
}
