/* fx-trace-import.c: the TORCH_TRACE importer (glog-prefixed JSON envelopes with tab-prefixed payload lines, as
   written by torch._logging's trace handler and read by tlparse) into a workspace store. */
#include "fx/importers.h"

#include <dirent.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fx-import-util.h"
#include "fx-md5.h"
#include "fx-trace-scan.h"
#include "fx/pyparse.h"

static const char *const warning_names[FX_IMPORT_WARN_COUNT] = {
  "bad line", "invalid JSON", "payload without record", "unknown string id", "md5 mismatch", "unknown record kind",
  "graph did not parse", "malformed record", "IR dump line skipped", "line too long", "file skipped",
};

const char *
fx_import_warning_name (fx_import_warning w)
{
  return w < FX_IMPORT_WARN_COUNT ? warning_names[w] : "?";
}

typedef struct
{
  fx_compile_id cid;
  int64_t row;
  /* A training compile (one that logged aot_backward_graph) is compiled twice by Inductor under its one compile
     id: the forward, then the backward. seen: the inductor records (PART_*) of the part being read; backward: an
     inductor record came again, so the rest of the compile is the backward's. */
  bool training, backward;
  unsigned seen;
  int n_kernels;      /* kernels stored so far: the backward's are numbered after the forward's */
} compile_entry;

enum { PART_RUNNABLE = 1, PART_POST_GRAD = 2, PART_OUTPUT_CODE = 4 };

typedef struct
{
  fx_store *store;
  const char *name;
  fx_import_stats *stats;
  fx_diag *diag;
  fx_arena *arena;
  int64_t input;
  /* The str table: index -> file name. */
  char **strings;
  size_t n_strings;
  compile_entry *compiles;
  size_t n_compiles, cap_compiles;
  /* Open-addressing index over compiles (slot = index + 1, 0 empty); cap_slots is a power of two. */
  uint32_t *slots;
  size_t cap_slots;
  int *frames;
  size_t n_frames, cap_frames;
  bool rejected;      /* the current record was skipped as malformed: not counted as read */
  /* has_payload checks (and the file's md5 while it is read) on a second thread; NULL: checked in place */
  fx_md5_worker *md5;
  bool md5_failed;    /* the worker ran out of memory */
  /* describe_tensor records waiting for their describe_source: (compile, describer, id) -> summary text */
  struct described
  {
    int64_t crow;
    int64_t describer, id;
    char *text;
  } *described;
  size_t n_described, cap_described;
} importer;

static void
warn (importer *imp, fx_import_warning w, int64_t line, const char *fmt, ...) FX_PRINTF (4, 5);

static void
warn (importer *imp, fx_import_warning w, int64_t line, const char *fmt, ...)
{
  if (w == FX_IMPORT_WARN_BAD_RECORD || w == FX_IMPORT_WARN_UNKNOWN_STRING)
    imp->rejected = true;
  int64_t k = imp->stats->warnings[w]++;
  if (k >= FX_IMPORT_EXAMPLES)
    return;
  fx_import_example *ex = &imp->stats->examples[w][k];
  ex->line = line;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (ex->text, sizeof ex->text, fmt, ap);
  va_end (ap);
}

static bool
same_cid (const fx_compile_id *a, const fx_compile_id *b)
{
  return a->compiled_autograd_id == b->compiled_autograd_id && a->frame_id == b->frame_id
         && a->frame_compile_id == b->frame_compile_id && a->attempt == b->attempt;
}

static size_t
cid_hash (const fx_compile_id *cid)
{
  uint64_t h = 1469598103934665603ull;
  int parts[4] = { cid->compiled_autograd_id, cid->frame_id, cid->frame_compile_id, cid->attempt };
  for (int i = 0; i < 4; i++)
    h = (h ^ (uint64_t) (uint32_t) parts[i]) * 1099511628211ull;
  return (size_t) (h ^ (h >> 29));
}

static void
index_compile (importer *imp, size_t index)
{
  size_t mask = imp->cap_slots - 1;
  for (size_t s = cid_hash (&imp->compiles[index].cid) & mask;; s = (s + 1) & mask)
    if (!imp->slots[s])
      {
        imp->slots[s] = (uint32_t) index + 1;
        return;
      }
}

/* The entry of cid; NULL before its first record. */
static compile_entry *
find_compile (importer *imp, const fx_compile_id *cid)
{
  if (!imp->cap_slots)
    return NULL;
  size_t mask = imp->cap_slots - 1;
  for (size_t s = cid_hash (cid) & mask; imp->slots[s]; s = (s + 1) & mask)
    if (same_cid (&imp->compiles[imp->slots[s] - 1].cid, cid))
      return &imp->compiles[imp->slots[s] - 1];
  return NULL;
}

/* The compile row of cid, created on first use. */
static fx_status
compile_for (importer *imp, const fx_compile_id *cid, int64_t *row)
{
  compile_entry *known = find_compile (imp, cid);
  if (known)
    {
      *row = known->row;
      return FX_OK;
    }
  fx_status st = fx_store_ensure_compile (imp->store, imp->input, cid, row, imp->diag);
  if (st != FX_OK)
    return st;
  if (imp->n_compiles == imp->cap_compiles)
    {
      imp->cap_compiles = imp->cap_compiles ? imp->cap_compiles * 2 : 16;
      imp->compiles = realloc (imp->compiles, imp->cap_compiles * sizeof *imp->compiles);
    }
  imp->compiles[imp->n_compiles++] = (compile_entry) { .cid = *cid, .row = *row };
  /* Keep the table at most half full. */
  if (imp->n_compiles * 2 > imp->cap_slots)
    {
      free (imp->slots);
      imp->cap_slots = imp->cap_slots ? imp->cap_slots * 2 : 64;
      imp->slots = calloc (imp->cap_slots, sizeof *imp->slots);
      for (size_t i = 0; i < imp->n_compiles; i++)
        index_compile (imp, i);
    }
  else
    index_compile (imp, imp->n_compiles - 1);
  imp->stats->compiles++;
  int fkey = cid->frame_id * 1024 + cid->compiled_autograd_id + 1;
  bool seen = false;
  for (size_t i = 0; i < imp->n_frames; i++)
    seen |= imp->frames[i] == fkey;
  if (!seen)
    {
      if (imp->n_frames == imp->cap_frames)
        {
          imp->cap_frames = imp->cap_frames ? imp->cap_frames * 2 : 16;
          imp->frames = realloc (imp->frames, imp->cap_frames * sizeof *imp->frames);
        }
      imp->frames[imp->n_frames++] = fkey;
      imp->stats->frames++;
    }
  return FX_OK;
}

static int
json_int (json_object *obj, const char *key, int dflt)
{
  json_object *v;
  if (!json_object_object_get_ex (obj, key, &v) || !v)
    return dflt;
  if (json_object_get_type (v) != json_type_int)
    return dflt;
  int64_t x = json_object_get_int64 (v);
  return x < 0 || x > 1000000000 ? dflt : (int) x;
}

static const char *
json_str (json_object *obj, const char *key)
{
  json_object *v;
  if (!obj || !json_object_object_get_ex (obj, key, &v) || !v || json_object_get_type (v) != json_type_string)
    return NULL;
  return json_object_get_string (v);
}

static double
json_num (json_object *obj, const char *key)
{
  json_object *v;
  if (!json_object_object_get_ex (obj, key, &v) || !v)
    return -1;
  json_type t = json_object_get_type (v);
  if (t != json_type_double && t != json_type_int)
    return -1;
  return json_object_get_double (v);
}

/* json-c's reading of a span the scanner took (from a terminated copy: json-c cannot tell a number's end from the
   end of its input). */
static json_object *
parse_span (fx_json_span span)
{
  char *copy = strndup (span.p, span.len);
  json_object *obj = copy ? json_tokener_parse (copy) : NULL;
  free (copy);
  return obj;
}

static const char *
skip_json_ws (const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  return p;
}

/* Reserved context keys of an envelope; the record kind is the remaining key. */
static bool
is_context_key (const char *key)
{
  return fx_trace_is_context_key (key, strlen (key));
}

/* "file:line in name" per frame, innermost last; false when a frame names an unknown string id. */
/* A frame as traceback.format_list writes it: '  File "f", line 3, in g' and its source line (loc) below. */
static void
put_frame (fx_buf *out, const char *file, int line, const char *name, const char *loc)
{
  fx_buf_puts (out, "  File \"");
  fx_buf_puts (out, file ? file : "?");
  fx_buf_puts (out, "\", line ");
  fx_buf_put_int (out, line);
  fx_buf_puts (out, ", in ");
  fx_buf_puts (out, name ? name : "?");
  fx_buf_putc (out, '\n');
  if (loc)
    {
      fx_buf_puts (out, "    ");
      fx_buf_puts (out, loc);
      fx_buf_putc (out, '\n');
    }
}

static bool
format_stack (importer *imp, json_object *stack, fx_buf *out, const char **fn, const char **file, int *line,
              int *bad_id)
{
  size_t n = json_object_array_length (stack);
  for (size_t i = 0; i < n; i++)
    {
      json_object *fr = json_object_array_get_idx (stack, i);
      if (!fr || json_object_get_type (fr) != json_type_object)
        continue;
      json_object *fv;
      const char *fname = NULL;
      if (json_object_object_get_ex (fr, "filename", &fv) && fv)
        {
          if (json_object_get_type (fv) == json_type_int)
            {
              int64_t id = json_object_get_int64 (fv);
              if (id < 0 || (size_t) id >= imp->n_strings || !imp->strings[id])
                {
                  *bad_id = (int) id;
                  return false;
                }
              fname = imp->strings[id];
            }
          else if (json_object_get_type (fv) == json_type_string)
            fname = json_object_get_string (fv);
        }
      int ln = json_int (fr, "line", 0);
      const char *name = json_str (fr, "name");
      const char *loc = json_str (fr, "loc");
      put_frame (out, fname, ln, name, loc);
      if (i == n - 1)
        {
          *fn = name;
          *file = fname;
          *line = ln;
        }
    }
  return true;
}

static void
strip_trailing (char *s)
{
  size_t n = strlen (s);
  while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
    s[--n] = 0;
}

static fx_status
add_graph (importer *imp, int64_t crow, const char *stage, const char *payload, size_t plen, int64_t line)
{
  fx_graph *graph = NULL;
  fx_diag pd;
  fx_diag_clear (&pd);
  if (!payload)
    payload = "", plen = 0;
  if (fx_parse_fx_code (payload, plen, stage, &graph, &pd) != FX_OK)
    warn (imp, FX_IMPORT_WARN_GRAPH_PARSE, line, "%s: %d:%d: %s", stage, pd.line, pd.col, pd.message);
  fx_status st = fx_store_add_graph (imp->store, crow, stage, graph, payload, NULL, imp->diag);
  fx_graph_free (graph);
  if (st == FX_OK)
    imp->stats->graphs++;
  return st;
}

/* One guard per `+- KIND: code  # user line` line of the C++ guard tree; source from the enclosing manager. */
static fx_status
add_cpp_guards (importer *imp, int64_t crow, const char *text)
{
  char *sources[64] = { 0 };
  fx_status st = FX_OK;
  const char *p = text;
  while (*p && st == FX_OK)
    {
      const char *eol = strchr (p, '\n');
      size_t len = eol ? (size_t) (eol - p) : strlen (p);
      char *line = strndup (p, len);
      p = eol ? eol + 1 : p + len;
      int depth = 0;
      char *q = line;
      while (q[0] == '|' && q[1] == ' ')
        q += 2, depth++;
      if (strncmp (q, "+- ", 3) != 0 || depth >= 63)
        {
          free (line);
          continue;
        }
      q += 3;
      char *colon = strchr (q, ':');
      size_t kind_len = colon ? (size_t) (colon - q) : strcspn (q, " ");
      /* Managers: GuardManager, RootGuardManager, DictGuardManager, and a dict's KeyValueManager / KeyManager /
         ValueManager ("KeyManager: GuardManager: source=..."); their first word ends in "Manager". */
      size_t word = strcspn (q, " :");
      if (word >= 7 && memcmp (q + word - 7, "Manager", 7) == 0)
        {
          /* A manager: remember its source for the guards below it. */
          free (sources[depth]);
          sources[depth] = NULL;
          char *src = strstr (q, "source=");
          if (src)
            {
              src += 7;
              char *e = strstr (src, ", accessed_by=");
              sources[depth] = strndup (src, e ? (size_t) (e - src) : strlen (src));
            }
          for (int d = depth + 1; d < 64; d++)
            free (sources[d]), sources[d] = NULL;
          free (line);
          continue;
        }
      char *kind = strndup (q, kind_len);
      char *code = strdup (colon ? colon + 1 : "");
      char *user = NULL;
      char *hash = strstr (code, "  # ");
      if (hash)
        {
          user = strdup (hash + 4);
          *hash = 0;
          strip_trailing (user);
        }
      strip_trailing (code);
      const char *c = code;
      while (*c == ' ')
        c++;
      st = fx_store_add_guard (imp->store, crow, kind, depth > 0 ? sources[depth - 1] : NULL, c, user,
                               imp->diag);
      if (st == FX_OK)
        imp->stats->guards++;
      free (kind);
      free (code);
      free (user);
      free (line);
    }
  for (int d = 0; d < 64; d++)
    free (sources[d]);
  return st;
}

/* The text of a line starting (after spaces) with prefix, up to the end of that line. */
static char *
line_after (const char *text, const char *prefix)
{
  const char *p = text;
  while (p && *p)
    {
      const char *s = p;
      while (*s == ' ')
        s++;
      const char *eol = strchr (s, '\n');
      if (strncmp (s, prefix, strlen (prefix)) == 0)
        {
          s += strlen (prefix);
          return strndup (s, eol ? (size_t) (eol - s) : strlen (s));
        }
      p = eol ? eol + 1 : NULL;
    }
  return NULL;
}

/* The GraphModule of a str(ExportedProgram) ("ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        def
   forward(...)...\n\nGraph signature: ..."): the lines from the class line up to "Graph signature:" (or the end),
   dedented by the class line's indent. NULL when there is no class line. */
static char *
exported_program_graph (const char *text, size_t len, size_t *out_len)
{
  static const char cls[] = "class GraphModule(";
  const char *end = text + len;
  const char *p = text;
  const char *start = NULL;
  size_t indent = 0;
  while (p < end)
    {
      const char *eol = memchr (p, '\n', (size_t) (end - p));
      if (!eol)
        eol = end;
      size_t sp = 0;
      while (p + sp < eol && p[sp] == ' ')
        sp++;
      if (!start && (size_t) (eol - p - sp) >= sizeof cls - 1 && memcmp (p + sp, cls, sizeof cls - 1) == 0)
        {
          start = p;
          indent = sp;
        }
      else if (start && (size_t) (eol - p) >= 16 && memcmp (p, "Graph signature:", 16) == 0)
        {
          end = p;
          break;
        }
      p = eol < end ? eol + 1 : end;
    }
  if (!start)
    return NULL;
  char *out = malloc ((size_t) (end - start) + 1);
  if (!out)
    return NULL;
  size_t n = 0;
  for (p = start; p < end;)
    {
      const char *eol = memchr (p, '\n', (size_t) (end - p));
      const char *next = eol ? eol + 1 : end;
      size_t sp = 0;
      while (sp < indent && p + sp < next && p[sp] == ' ')
        sp++;
      memcpy (out + n, p + sp, (size_t) (next - p - sp));
      n += (size_t) (next - p - sp);
      p = next;
    }
  /* the blank lines before "Graph signature:" are not the graph's */
  while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
    n--;
  out[n++] = '\n';
  out[n] = '\0';
  *out_len = n;
  return out;
}

static fx_status
add_graph_break (importer *imp, int64_t crow, const char *text)
{
  char *reason = line_after (text, "Graph Break Reason: ");
  char *expl = line_after (text, "Explanation: ");
  const char *tb = strstr (text, "User code traceback:\n");
  char *stack = NULL;
  if (tb)
    {
      stack = strdup (tb + strlen ("User code traceback:\n"));
      strip_trailing (stack);
    }
  if (!reason)
    {
      const char *eol = strchr (text, '\n');
      reason = strndup (text, eol ? (size_t) (eol - text) : strlen (text));
    }
  fx_status st = fx_store_add_graph_break (imp->store, crow, reason, expl, stack, text, imp->diag);
  free (reason);
  free (expl);
  free (stack);
  return st;
}

/* Marks a compile as recompiled (a guard failure made it) or as broken into graphs: what fxwb ls flags. */
static fx_status
flag_compile (importer *imp, int64_t crow, bool recompile)
{
  fx_store_compile_update u;
  fx_store_compile_update_init (&u);
  if (recompile)
    u.has_recompile = 1;
  else
    u.has_graph_break = 1;
  return fx_store_update_compile (imp->store, crow, &u, imp->diag);
}

static fx_status
add_recompile_reasons (importer *imp, int64_t crow, const char *payload, int64_t line)
{
  json_object *list = payload ? json_tokener_parse (payload) : NULL;
  if (!list || json_object_get_type (list) != json_type_array)
    {
      /* PyTorch writes a list one item per line, strings unquoted: each payload line is one reason. */
      json_object_put (list);
      if (!payload)
        {
          warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "recompile_reasons without a payload");
          return FX_OK;
        }
      list = json_object_new_array ();
      for (const char *p = payload; *p;)
        {
          const char *eol = strchr (p, '\n');
          size_t n = eol ? (size_t) (eol - p) : strlen (p);
          if (n)
            json_object_array_add (list, json_object_new_string_len (p, (int) n));
          p += n + (eol ? 1 : 0);
        }
    }
  fx_status st = FX_OK;
  for (size_t i = 0; i < json_object_array_length (list) && st == FX_OK; i++)
    {
      json_object *item = json_object_array_get_idx (list, i);
      if (!item || json_object_get_type (item) != json_type_string)
        continue;
      char *text = strdup (json_object_get_string (item));
      strip_trailing (text);
      /* "0/0: reason": the compile whose guards failed, then the reason. */
      char *sep = strstr (text, ": ");
      char *failed = NULL;
      const char *reason = text;
      if (sep)
        {
          fx_compile_id cid;
          char *prefix = strndup (text, (size_t) (sep - text));
          if (fx_compile_id_parse (prefix, &cid, NULL) == FX_OK)
            {
              failed = prefix;
              reason = sep + 2;
            }
          else
            free (prefix);
        }
      st = fx_store_add_guard_failure (imp->store, crow, failed, reason, NULL, imp->diag);
      free (failed);
      free (text);
    }
  json_object_put (list);
  return st == FX_OK ? flag_compile (imp, crow, true) : st;
}

static fx_status
add_metrics (importer *imp, int64_t crow, json_object *m)
{
  fx_store_compile_update u;
  fx_store_compile_update_init (&u);
  u.fail_type = json_str (m, "fail_type");
  u.fail_reason = json_str (m, "fail_reason");
  u.start_time = json_num (m, "start_time");
  u.entire_frame_compile_s = json_num (m, "entire_frame_compile_time_s");
  u.backend_compile_s = json_num (m, "backend_compile_time_s");
  u.inductor_compile_s = json_num (m, "inductor_compile_time_s");
  u.graph_op_count = json_int (m, "graph_op_count", -1);
  u.guard_count = json_int (m, "guard_count", -1);
  u.has_metrics = 1;
  json_object *rr;
  if (json_object_object_get_ex (m, "restart_reasons", &rr) && rr && json_object_get_type (rr) == json_type_array
      && json_object_array_length (rr) > 0)
    u.has_graph_break = 1;
  fx_status st = fx_store_update_compile (imp->store, crow, &u, imp->diag);
  json_object_object_foreach (m, key, val)
    {
      if (st != FX_OK)
        break;
      const char *text = !val ? "null"
                         : json_object_get_type (val) == json_type_string ? json_object_get_string (val)
                         : json_object_to_json_string_ext (val, JSON_C_TO_STRING_PLAIN);
      st = fx_store_add_metric (imp->store, crow, key, text, imp->diag);
    }
  return st;
}

/* A compilation_metrics record read by json-c (meta: its object). */
static fx_status
add_metrics_record (importer *imp, fx_compile_id *cid, int64_t crow, json_object *meta, int64_t line)
{
  /* torch.export + aoti_compile_and_package log their metrics with "compile_id": null: they belong to the
     compile of the graphs logged without an id, as those do. */
  json_object *mid = NULL;
  fx_status st;
  if (!crow && meta && json_object_get_type (meta) == json_type_object
      && json_object_object_get_ex (meta, "compile_id", &mid) && mid == NULL
      && (st = compile_for (imp, cid, &crow)) != FX_OK)
    return st;
  if (!crow || !meta || json_object_get_type (meta) != json_type_object)
    {
      warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "compilation_metrics without a compile id or object");
      return FX_OK;
    }
  return add_metrics (imp, crow, meta);
}

/* One metric's value as add_metrics stores it: a string's characters, other values as json-c writes them (plain). */
static const char *
scanned_metric_text (const fx_json_member *m, fx_buf *buf)
{
  fx_buf_reset (buf);
  switch (m->type)
    {
    case 's':
      if (m->escaped)
        fx_json_unescape (m->value, buf);
      else
        fx_buf_append (buf, m->value.p, m->value.len);
      return buf->data ? buf->data : "";
    case 'i':
      fx_buf_printf (buf, "%lld", strtoll (m->value.p, NULL, 10));
      return buf->data;
    case 'n':
      return "null";
    case 't':
      return "true";
    case 'f':
      return "false";
    default:
      {
        /* numbers with a fraction keep their text in json-c; arrays and objects are rewritten: json-c does both
           (from a terminated copy: json-c cannot tell a number's end from the end of its input) */
        fx_buf_append (buf, m->value.p, m->value.len);
        json_object *v = json_tokener_parse (buf->data);
        if (!v)
          return NULL;
        fx_buf_reset (buf);
        fx_buf_puts (buf, json_object_to_json_string_ext (v, JSON_C_TO_STRING_PLAIN));
        json_object_put (v);
        return buf->data;
      }
    }
}

/* json_num and json_int over a scanned member. */
static double
member_num (const fx_json_member *m)
{
  if (!m)
    return -1;
  if (m->type == 'i') /* an int64 made double, as json_object_get_double gives it (-0 is 0) */
    return (double) strtoll (m->value.p, NULL, 10);
  if (m->type == 'd')
    return strtod (m->value.p, NULL);
  if (m->type == 'I') /* json-c saturates */
    return m->value.p[0] == '-' ? (double) INT64_MIN : (double) INT64_MAX;
  return -1;
}

static int
member_int (const fx_json_member *m)
{
  if (!m)
    return -1;
  fx_json_field f = { .key = NULL, .type = m->type, .value = m->value };
  return fx_json_field_int (&f, -1);
}

static const fx_json_member *
find_member (const fx_json_member *m, size_t n, const char *key)
{
  size_t len = strlen (key);
  for (size_t i = 0; i < n; i++)
    if (m[i].key.len == len && memcmp (m[i].key.p, key, len) == 0)
      return &m[i];
  return NULL;
}

/* add_metrics over the scanner's reading of the object: the same compile fields and rows, without building the
   object in json-c (a compilation_metrics record is ~30 KB, most of it two config strings). *done false: unsure,
   nothing stored; the caller reads the object with json-c. */
static fx_status
add_metrics_scanned (importer *imp, fx_compile_id *cid, int64_t crow, fx_json_span text, int64_t line, bool *done)
{
  enum { MAX_METRICS = 512 };
  fx_json_member *m = malloc (MAX_METRICS * sizeof *m);
  size_t n = 0;
  const char *end = NULL;
  *done = false;
  if (!m || !fx_json_scan_members (text.p, text.p + text.len, m, MAX_METRICS, &n, &end))
    {
      free (m);
      return FX_OK;
    }
  fx_status st = FX_OK;
  const fx_json_member *id = find_member (m, n, "compile_id");
  /* torch.export + aoti_compile_and_package log "compile_id": null (see handle_decoded) */
  if (!crow && id && id->type == 'n' && (st = compile_for (imp, cid, &crow)) != FX_OK)
    {
      free (m);
      return st;
    }
  *done = true;
  if (!crow)
    {
      warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "compilation_metrics without a compile id or object");
      free (m);
      return FX_OK;
    }
  fx_buf fail_type, fail_reason, buf;
  fx_buf_init (&fail_type);
  fx_buf_init (&fail_reason);
  fx_buf_init (&buf);
  fx_store_compile_update u;
  fx_store_compile_update_init (&u);
  const fx_json_member *f;
  if ((f = find_member (m, n, "fail_type")) && f->type == 's')
    u.fail_type = scanned_metric_text (f, &fail_type);
  if ((f = find_member (m, n, "fail_reason")) && f->type == 's')
    u.fail_reason = scanned_metric_text (f, &fail_reason);
  u.start_time = member_num (find_member (m, n, "start_time"));
  u.entire_frame_compile_s = member_num (find_member (m, n, "entire_frame_compile_time_s"));
  u.backend_compile_s = member_num (find_member (m, n, "backend_compile_time_s"));
  u.inductor_compile_s = member_num (find_member (m, n, "inductor_compile_time_s"));
  u.graph_op_count = member_int (find_member (m, n, "graph_op_count"));
  u.guard_count = member_int (find_member (m, n, "guard_count"));
  u.has_metrics = 1;
  if ((f = find_member (m, n, "restart_reasons")) && f->type == '[' && *skip_json_ws (f->value.p + 1) != ']')
    u.has_graph_break = 1;
  st = fx_store_update_compile (imp->store, crow, &u, imp->diag);
  for (size_t i = 0; i < n && st == FX_OK; i++)
    {
      char key[256];
      const char *value = scanned_metric_text (&m[i], &buf);
      if (m[i].key.len >= sizeof key || !value)
        {
          /* a value json-c refuses after the scanner took it cannot happen; a long key is stored as json-c would */
          fx_buf k;
          fx_buf_init (&k);
          fx_buf_append (&k, m[i].key.p, m[i].key.len);
          st = fx_store_add_metric (imp->store, crow, k.data, value ? value : "null", imp->diag);
          fx_buf_free (&k);
          continue;
        }
      memcpy (key, m[i].key.p, m[i].key.len);
      key[m[i].key.len] = 0;
      st = fx_store_add_metric (imp->store, crow, key, value, imp->diag);
    }
  fx_buf_free (&fail_type);
  fx_buf_free (&fail_reason);
  fx_buf_free (&buf);
  free (m);
  return st;
}

static fx_status
add_output_code (importer *imp, int64_t crow, compile_entry *ce, const char *payload, size_t plen)
{
  int64_t n = 0;
  fx_status st = fx_store_output_code_kernels (imp->store, imp->input, crow, payload, plen, ce ? ce->n_kernels : 0,
                                               ce && ce->backward ? "backward" : NULL, &n, imp->diag);
  imp->stats->kernels += n;
  if (ce)
    ce->n_kernels += (int) n;
  return st;
}

/* Which inductor record of a compile's forward/backward pair a record is (PART_*), 0 for any other. */
static unsigned
inductor_part (const char *kind, const char *art_name)
{
  if (strcmp (kind, "inductor_post_grad_graph") == 0
      || (art_name && strcmp (art_name, "inductor_post_grad_graph") == 0))
    return PART_POST_GRAD;
  if (strcmp (kind, "inductor_output_code") == 0)
    return PART_OUTPUT_CODE;
  if (art_name && strcmp (art_name, "fx_graph_runnable") == 0)
    return PART_RUNNABLE;
  return 0;
}

/* Follows a training compile into its backward part: see compile_entry. */
static void
note_part (compile_entry *ce, const char *kind, const char *art_name)
{
  if (strcmp (kind, "aot_backward_graph") == 0)
    ce->training = true;
  unsigned part = inductor_part (kind, art_name);
  if (!ce->training || ce->backward || !part)
    return;
  if (ce->seen & part)
    ce->backward = true;
  ce->seen |= part;
}

/* The name a stage or artifact of the backward part is stored under: NAME_backward (in buf); name itself
   otherwise. Only Inductor's records have two parts: the aot* ones name their part or are the whole compile's, as
   dynamo's are. */
static const char *
part_name (const compile_entry *ce, const char *name, char *buf, size_t size)
{
  if (!ce || !ce->backward || strncmp (name, "aot", 3) == 0 || strncmp (name, "dynamo", 6) == 0)
    return name;
  snprintf (buf, size, "%s" FX_BACKWARD_SUFFIX, name);
  return buf;
}

/* symbolic_shape_specialization {symbol, sources, value, reason, stack, user_stack}, guard_added and
   guard_added_fast {expr, stack, user_stack}; draft_export's failures: propagate_real_tensors_provenance {expr, result,
   stack, user_stack, ...} (stored as kind "data_dependent", the result as value), missing_fake_kernel {op} and
   mismatched_fake_kernel {op, reason}; expression_created {method, result, arguments, ...} (kind "expression"). */
static const fx_json_member *find_member (const fx_json_member *m, size_t n, const char *key);

/* A shape event with its two formatted stacks (user_stack, stack), or the warning (naming the record's kind) for
   what it lacks: the symbol of a specialization, the expression of the others. */
static fx_status
store_shape_event (importer *imp, int64_t crow, const char *kind, fx_store_shape_event *ev, const fx_buf stacks[2],
                   bool spec, int64_t line)
{
  ev->user_stack = stacks[0].len ? stacks[0].data : NULL;
  ev->stack = stacks[1].len ? stacks[1].data : NULL;
  if (spec && !ev->symbol)
    warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "%s without a symbol", kind);
  else if (!spec && !ev->expr)
    warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "%s without an expr", kind);
  else
    return fx_store_add_shape_event (imp->store, imp->input, crow, ev, imp->diag);
  return FX_OK;
}


/* A string member's characters (escapes decoded) into buf; NULL when m is absent or not a string. */
static const char *
member_str (const fx_json_member *m, fx_buf *buf)
{
  if (!m || m->type != 's')
    return NULL;
  fx_buf_reset (buf);
  if (m->escaped)
    fx_json_unescape (m->value, buf);
  else
    fx_buf_append (buf, m->value.p, m->value.len);
  return buf->data ? buf->data : "";
}

/* format_stack over the scanner's reading of a stack (an array of frame objects). *done false: unsure (the caller
   asks json-c), nothing written. */
static bool
format_stack_scanned (importer *imp, const fx_json_member *stack, fx_buf *out, int *bad_id, bool *done)
{
  enum { MAX_FRAMES = 1024, FRAME_MEMBERS = 16 };
  *done = false;
  fx_json_member *frames = malloc (MAX_FRAMES * sizeof *frames);
  size_t n = 0;
  if (!frames || !fx_json_scan_array (stack->value.p, stack->value.p + stack->value.len, frames, MAX_FRAMES, &n))
    {
      free (frames);
      return true;
    }
  fx_buf name, loc, file;
  fx_buf_init (&name);
  fx_buf_init (&loc);
  fx_buf_init (&file);
  size_t mark = out->len;
  bool ok = true, sure = true;
  for (size_t i = 0; i < n && ok && sure; i++)
    {
      fx_json_member fm[FRAME_MEMBERS];
      size_t nm = 0;
      const char *obj_end;
      if (frames[i].type != '{')
        continue;
      if (!fx_json_scan_members (frames[i].value.p, frames[i].value.p + frames[i].value.len, fm, FRAME_MEMBERS, &nm,
                                 &obj_end))
        {
          sure = false;
          break;
        }
      const fx_json_member *fv = find_member (fm, nm, "filename");
      const char *fname = NULL;
      if (fv && fv->type == 'i')
        {
          long long id = strtoll (fv->value.p, NULL, 10);
          if (id < 0 || (size_t) id >= imp->n_strings || !imp->strings[id])
            {
              *bad_id = (int) id;
              ok = false;
              break;
            }
          fname = imp->strings[id];
        }
      else if (fv && fv->type == 'I')
        {
          sure = false;
          break;
        }
      else if (fv && fv->type == 's')
        fname = member_str (fv, &file);
      const fx_json_member *lv = find_member (fm, nm, "line");
      int ln = 0;
      if (lv)
        {
          fx_json_field f = { .key = NULL, .type = lv->type, .value = lv->value };
          ln = fx_json_field_int (&f, 0);
        }
      const char *fn = member_str (find_member (fm, nm, "name"), &name);
      const char *lc = member_str (find_member (fm, nm, "loc"), &loc);
      put_frame (out, fname, ln, fn, lc);
    }
  if (!sure)
    {
      out->len = mark;
      if (out->data)
        out->data[mark] = 0;
    }
  fx_buf_free (&name);
  fx_buf_free (&loc);
  fx_buf_free (&file);
  free (frames);
  *done = sure;
  return ok;
}

/* add_shape_event for guard_added / guard_added_fast (their expr and stacks) read by the scanner: without json-c's
   objects for the stacks that are most of a guard record's bytes. *done false: unsure, nothing stored. */
static fx_status
add_guard_event_scanned (importer *imp, int64_t crow, const char *kind, fx_json_span meta, int64_t line, bool *done)
{
  enum { MAX_GUARD_MEMBERS = 64 };
  fx_json_member m[MAX_GUARD_MEMBERS];
  size_t n = 0;
  const char *end;
  *done = false;
  if (!fx_json_scan_members (meta.p, meta.p + meta.len, m, MAX_GUARD_MEMBERS, &n, &end))
    return FX_OK;
  fx_store_shape_event ev = { 0 };
  ev.kind = kind;
  fx_buf expr, stacks[2];
  fx_buf_init (&expr);
  fx_buf_init (&stacks[0]);
  fx_buf_init (&stacks[1]);
  ev.expr = member_str (find_member (m, n, "expr"), &expr);
  static const char *const keys[2] = { "user_stack", "stack" };
  bool ok = true, sure = true;
  for (int k = 0; k < 2 && ok && sure; k++)
    {
      const fx_json_member *stack = find_member (m, n, keys[k]);
      if (!stack || stack->type != '[')
        continue;
      int bad_id = -1;
      ok = format_stack_scanned (imp, stack, &stacks[k], &bad_id, &sure);
      if (!ok && sure)
        warn (imp, FX_IMPORT_WARN_UNKNOWN_STRING, line, "%s: string id %d was never defined", kind, bad_id);
    }
  fx_status st = FX_OK;
  if (sure)
    {
      *done = true;
      if (ok)
        st = store_shape_event (imp, crow, kind, &ev, stacks, false, line);
    }
  fx_buf_free (&expr);
  fx_buf_free (&stacks[0]);
  fx_buf_free (&stacks[1]);
  return st;
}

static fx_status
add_shape_event (importer *imp, int64_t crow, const char *kind, json_object *meta, int64_t line)
{
  if (!meta || json_object_get_type (meta) != json_type_object)
    {
      warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "%s: metadata is not an object", kind);
      return FX_OK;
    }
  fx_store_shape_event ev = { 0 };
  bool spec = strcmp (kind, "symbolic_shape_specialization") == 0;
  ev.kind = spec ? "specialization" : kind;
  fx_buf sources, stacks[2];
  fx_buf_init (&sources);
  fx_buf_init (&stacks[0]);
  fx_buf_init (&stacks[1]);
  if (spec)
    {
      ev.symbol = json_str (meta, "symbol");
      ev.value = json_str (meta, "value");
      ev.reason = json_str (meta, "reason");
      json_object *src;
      if (json_object_object_get_ex (meta, "sources", &src) && src && json_object_get_type (src) == json_type_array)
        for (size_t i = 0; i < json_object_array_length (src); i++)
          {
            json_object *it = json_object_array_get_idx (src, i);
            if (it && json_object_get_type (it) == json_type_string)
              {
                if (sources.len)
                  fx_buf_puts (&sources, ", ");
                fx_buf_puts (&sources, json_object_get_string (it));
              }
          }
      ev.sources = sources.len ? sources.data : NULL;
    }
  else if (strcmp (kind, "propagate_real_tensors_provenance") == 0)
    {
      /* draft_export's data-dependent error: an expression export could not decide, specialized to the value the
         real tensors gave (asserted in the graph) */
      ev.kind = "data_dependent";
      ev.expr = json_str (meta, "expr");
      ev.value = json_str (meta, "result");
    }
  else if (strcmp (kind, "expression_created") == 0)
    {
      /* a symbolic expression export built {method, result, arguments, ...}: "u0 + 1 = add(u0, 1)" */
      ev.kind = "expression";
      ev.expr = json_str (meta, "result");
      json_object *args = NULL;
      fx_buf_printf (&sources, "%s(", json_str (meta, "method") ? json_str (meta, "method") : "?");
      if (json_object_object_get_ex (meta, "arguments", &args) && args && json_object_get_type (args) == json_type_array)
        for (size_t i = 0; i < json_object_array_length (args); i++)
          fx_buf_printf (&sources, "%s%s", i ? ", " : "", json_object_get_string (json_object_array_get_idx (args, i)));
      fx_buf_putc (&sources, ')');
      ev.reason = sources.data;
    }
  else if (strcmp (kind, "missing_fake_kernel") == 0 || strcmp (kind, "mismatched_fake_kernel") == 0)
    {
      /* a custom op without (or with a wrong) fake kernel: the op is what the row names */
      ev.expr = json_str (meta, "op");
      ev.reason = json_str (meta, "reason");
    }
  else
    ev.expr = json_str (meta, "expr");
  static const char *const keys[2] = { "user_stack", "stack" };
  bool ok = true;
  for (int k = 0; k < 2 && ok; k++)
    {
      json_object *stack;
      if (!json_object_object_get_ex (meta, keys[k], &stack) || !stack
          || json_object_get_type (stack) != json_type_array)
        continue;
      const char *fn, *file;
      int ln, bad_id = -1;
      ok = format_stack (imp, stack, &stacks[k], &fn, &file, &ln, &bad_id);
      if (!ok)
        warn (imp, FX_IMPORT_WARN_UNKNOWN_STRING, line, "%s: string id %d was never defined", kind, bad_id);
    }
  fx_status st = ok ? store_shape_event (imp, crow, kind, &ev, stacks, spec, line) : FX_OK;
  fx_buf_free (&sources);
  fx_buf_free (&stacks[0]);
  fx_buf_free (&stacks[1]);
  return st;
}

/* dynamo_error: traceback.format_exc() of the exception that failed the compile. The last "Type: message" after
   the last traceback's frames names it; the type is shortened to its class name, as compilation_metrics'
   fail_type (type(e).__qualname__) writes it. */
static fx_status
add_dynamo_error (importer *imp, int64_t crow, const char *payload)
{
  const char *start = payload, *t;
  while ((t = strstr (start, "Traceback (most recent call last):")) && t != start)
    start = t + 1;
  if ((t = strstr (start, "Traceback (most recent call last):")))
    start = t;
  /* The first line at column 0 after the traceback header that is not a frame. */
  const char *p = start, *exc = NULL;
  bool first = strncmp (p, "Traceback", 9) == 0;
  while (p && *p && !exc)
    {
      const char *eol = strchr (p, '\n');
      if (!first && *p != ' ' && *p != '\n' && *p != '\t')
        exc = p;
      first = false;
      p = eol ? eol + 1 : NULL;
    }
  fx_store_compile_update u;
  fx_store_compile_update_init (&u);
  char *type = NULL, *reason = NULL;
  if (exc)
    {
      const char *colon = strstr (exc, ": ");
      const char *eol = strchr (exc, '\n');
      if (colon && (!eol || colon < eol))
        {
          type = strndup (exc, (size_t) (colon - exc));
          reason = strdup (colon + 2);
        }
      else
        {
          type = strndup (exc, eol ? (size_t) (eol - exc) : strlen (exc));
          reason = strdup (eol ? eol + 1 : "");
        }
      strip_trailing (type);
      strip_trailing (reason);
      char *dot = strrchr (type, '.');
      if (dot && dot[1])
        memmove (type, dot + 1, strlen (dot + 1) + 1);
    }
  u.fail_type = type && *type ? type : "Exception";
  u.fail_reason = reason && *reason ? reason : payload;
  fx_status st = fx_store_update_compile (imp->store, crow, &u, imp->diag);
  free (type);
  free (reason);
  return st;
}

/* A raw record as an artifact: its metadata JSON, then the payload. */
/* add_raw for metadata the scanner read: the same text, written as json-c writes it (fx_json_write_plain), without
   building its objects. *done false: unsure, nothing stored. */
static fx_status
add_raw_scanned (importer *imp, int64_t crow, const char *kind, fx_json_span meta, const char *payload, bool *done)
{
  fx_buf text;
  fx_buf_init (&text);
  *done = fx_json_write_plain (meta, &text);
  fx_status st = FX_OK;
  if (*done)
    {
      if (payload)
        {
          fx_buf_putc (&text, '\n');
          fx_buf_puts (&text, payload);
        }
      st = fx_store_add_artifact (imp->store, imp->input, crow, kind, "record", text.data, imp->diag);
      if (st == FX_OK)
        imp->stats->artifacts++;
    }
  fx_buf_free (&text);
  return st;
}

static fx_status
add_raw (importer *imp, int64_t crow, const char *kind, json_object *meta, const char *payload)
{
  fx_buf text;
  fx_buf_init (&text);
  fx_buf_puts (&text, meta ? json_object_to_json_string_ext (meta, JSON_C_TO_STRING_PLAIN) : "null");
  if (payload)
    {
      fx_buf_putc (&text, '\n');
      fx_buf_puts (&text, payload);
    }
  fx_status st = fx_store_add_artifact (imp->store, imp->input, crow, kind, "record", text.data, imp->diag);
  fx_buf_free (&text);
  if (st == FX_OK)
    imp->stats->artifacts++;
  return st;
}

static const char *
graph_stage (const char *kind)
{
  static const char *const map[][2] = {
    { "dynamo_output_graph", "dynamo" },      { "aot_forward_graph", "aot_forward" },
    { "aot_backward_graph", "aot_backward" }, { "aot_inference_graph", "aot_inference" },
    { "aot_joint_graph", "aot_joint" },       { "inductor_pre_grad_graph", "pre_grad" },
    { "inductor_post_grad_graph", "post_grad" }, { "compiled_autograd_graph", "compiled_autograd" },
    { "optimize_ddp_split_graph", "optimize_ddp_split" },
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp (kind, map[i][0]) == 0)
      return map[i][1];
  return NULL;
}

static bool
is_known_raw (const char *kind)
{
  static const char *const kinds[] = {
    "describe_storage", "describe_tensor", "describe_source", "create_symbol", "guard_added", "guard_added_fast",
    "symbolic_shape_specialization", "propagate_real_tensors_provenance", "create_unbacked_symbol",
    "expression_created", "missing_fake_kernel", "mismatched_fake_kernel", "link", "dump_file", "exported_program",
    "compilation_metrics_runtime", "bwd_compilation_metrics", "aot_autograd_backward_compilation_metrics",
    "dynamo_error", "optimize_ddp_split_child", "graph_dump", "dynamo_guards",
  };
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp (kind, kinds[i]) == 0)
      return true;
  return false;
}

/* What a record's envelope says, read by json-c (handle_record) or by the scanner (handle_scanned). meta is the
   kind's value as json-c reads it; the scanner's reading leaves it NULL for the kinds that never look at it. */
typedef struct
{
  const char *kind;
  json_object *meta;
  const char *want;       /* has_payload */
  fx_compile_id cid;
  const char *art_name, *art_enc;  /* an artifact's name and encoding */
  fx_json_span meta_text; /* compilation_metrics, guards, create_symbol read by the scanner: the object's text */
} record;

static fx_status handle_decoded (importer *imp, const record *r, const char *payload, size_t plen, int64_t line);

/* Handles one complete record (envelope + payload). */
static fx_status
handle_record (importer *imp, json_object *env, const char *payload, size_t plen, int64_t line)
{
  record r = { 0 };
  json_object_object_foreach (env, key, val)
    if (!is_context_key (key))
      {
        r.kind = key;
        r.meta = val;
        break;
      }
  if (!r.kind)
    {
      warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "record without a kind");
      return FX_OK;
    }
  r.want = json_str (env, "has_payload");
  r.cid = (fx_compile_id) { json_int (env, "compiled_autograd_id", -1), json_int (env, "frame_id", -1),
                            json_int (env, "frame_compile_id", -1), json_int (env, "attempt", 0) };
  r.art_name = strcmp (r.kind, "artifact") == 0 ? json_str (r.meta, "name") : NULL;
  r.art_enc = r.art_name ? json_str (r.meta, "encoding") : NULL;
  return handle_decoded (imp, &r, payload, plen, line);
}

static fx_status
handle_decoded (importer *imp, const record *r, const char *payload, size_t plen, int64_t line)
{
  const char *kind = r->kind, *want = r->want, *art_name = r->art_name, *art_enc = r->art_enc;
  json_object *meta = r->meta;
  if (want && payload && imp->md5)
    imp->md5_failed |= !fx_md5_worker_check (imp->md5, payload, plen, want, kind, line);
  else if (want && payload)
    {
      char hex[33];
      fx_md5_hex (payload, plen, hex);
      if (strcmp (hex, want) != 0)
        warn (imp, FX_IMPORT_WARN_MD5_MISMATCH, line, "%s: has_payload %.32s, payload md5 %s", kind, want, hex);
    }

  if (strcmp (kind, "str") == 0)
    {
      /* {"str": ["file name", id]} */
      if (!meta || json_object_get_type (meta) != json_type_array || json_object_array_length (meta) != 2
          || json_object_get_type (json_object_array_get_idx (meta, 0)) != json_type_string
          || json_object_get_type (json_object_array_get_idx (meta, 1)) != json_type_int)
        {
          warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "str: expected [\"text\", id]");
          return FX_OK;
        }
      int64_t id = json_object_get_int64 (json_object_array_get_idx (meta, 1));
      if (id < 0 || id > 10000000)
        {
          warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "str: id %lld out of range", (long long) id);
          return FX_OK;
        }
      if ((size_t) id >= imp->n_strings)
        {
          size_t n = (size_t) id + 1 > imp->n_strings * 2 ? (size_t) id + 1 : imp->n_strings * 2;
          imp->strings = realloc (imp->strings, n * sizeof *imp->strings);
          memset (imp->strings + imp->n_strings, 0, (n - imp->n_strings) * sizeof *imp->strings);
          imp->n_strings = n;
        }
      free (imp->strings[id]);
      imp->strings[id] = strdup (json_object_get_string (json_object_array_get_idx (meta, 0)));
      return FX_OK;
    }

  /* The compile this record belongs to; records outside a compile go to the input ("-/-"). */
  fx_compile_id cid = r->cid;
  bool has_cid = cid.frame_id >= 0 || cid.compiled_autograd_id >= 0;
  int64_t crow = 0;
  fx_status st = FX_OK;
  if (has_cid && (st = compile_for (imp, &cid, &crow)) != FX_OK)
    return st;
  compile_entry *ce = has_cid ? find_compile (imp, &cid) : NULL;
  char part_buf[300];
  if (ce)
    {
      note_part (ce, kind, art_name);
      if (art_name)
        art_name = part_name (ce, art_name, part_buf, sizeof part_buf);
    }

  if (strcmp (kind, "describe_tensor") == 0 && meta && json_object_get_type (meta) == json_type_object)
    {
      /* "torch.float32[10] stride=[1] device(type='cuda', index=0)", named once describe_source arrives. */
      fx_buf text;
      fx_buf_init (&text);
      json_object *size = NULL, *stride = NULL;
      json_object_object_get_ex (meta, "size", &size);
      json_object_object_get_ex (meta, "stride", &stride);
      const char *dtype = json_str (meta, "dtype"), *device = json_str (meta, "device");
      fx_buf_printf (&text, "%s%s stride=%s %s", dtype ? dtype : "?",
                     size ? json_object_to_json_string_ext (size, JSON_C_TO_STRING_PLAIN) : "[?]",
                     stride ? json_object_to_json_string_ext (stride, JSON_C_TO_STRING_PLAIN) : "[?]",
                     device ? device : "");
      if (imp->n_described == imp->cap_described)
        {
          imp->cap_described = imp->cap_described ? imp->cap_described * 2 : 16;
          imp->described = realloc (imp->described, imp->cap_described * sizeof *imp->described);
        }
      imp->described[imp->n_described++] = (struct described) { crow, json_int (meta, "describer_id", -1),
                                                                 json_int (meta, "id", -1), fx_buf_steal (&text) };
    }
  if (strcmp (kind, "describe_source") == 0 && meta && crow)
    {
      int64_t describer = json_int (meta, "describer_id", -1), id = json_int (meta, "id", -1);
      const char *source = json_str (meta, "source");
      for (size_t i = imp->n_described; i-- > 0 && source;)
        if (imp->described[i].crow == crow && imp->described[i].describer == describer && imp->described[i].id == id)
          {
            fx_buf text;
            fx_buf_init (&text);
            fx_buf_printf (&text, "%s: %s", source, imp->described[i].text);
            st = fx_store_add_artifact (imp->store, imp->input, crow, "input", "input", text.data, imp->diag);
            fx_buf_free (&text);
            if (st != FX_OK)
              return st;
            break;
          }
    }
  if (strcmp (kind, "chromium_event") == 0)
    {
      /* The event's name, phase and time: read by the scanner when it is sure, else by json-c. */
      fx_json_field f[3] = { { "name" }, { "ph" }, { "ts" } };
      const char *obj_end = NULL;
      if (payload && fx_json_scan_fields (payload, payload + plen, f, 3, &obj_end)
          && *skip_json_ws (obj_end) == 0 && f[2].type != 'I')
        {
          char *name = f[0].type == 's' ? strndup (f[0].value.p, f[0].value.len) : NULL;
          char *ph = f[1].type == 's' ? strndup (f[1].value.p, f[1].value.len) : NULL;
          /* an integer as json-c gives it (an int64 made double: -0 is 0) */
          double ts = f[2].type == 'i' ? (double) strtoll (f[2].value.p, NULL, 10)
                      : f[2].type == 'd' ? strtod (f[2].value.p, NULL) : -1;
          st = fx_store_add_event (imp->store, imp->input, crow, name, ph, ts, payload, imp->diag);
          free (name);
          free (ph);
          if (st == FX_OK)
            imp->stats->events++;
          return st;
        }
      json_object *ev = payload ? json_tokener_parse (payload) : NULL;
      if (!ev || json_object_get_type (ev) != json_type_object)
        {
          warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "chromium_event: payload is not a JSON object");
          json_object_put (ev);
          return FX_OK;
        }
      double ts = json_num (ev, "ts");
      st = fx_store_add_event (imp->store, imp->input, crow, json_str (ev, "name"), json_str (ev, "ph"),
                               ts, payload, imp->diag);
      json_object_put (ev);
      if (st == FX_OK)
        imp->stats->events++;
      return st;
    }

  /* Matched by the name PyTorch gives; stored under the part's name (art_name). */
  const char *logged = r->art_name;
  const char *stage = graph_stage (kind);
  if (logged && strcmp (logged, "inductor_post_grad_graph") == 0)
    stage = "post_grad";
  else if (logged && strcmp (logged, "inductor_pre_grad_graph") == 0)
    stage = "pre_grad";
  else if (logged && art_enc && strcmp (art_enc, "string") == 0 && strlen (logged) > 6
           && strcmp (logged + strlen (logged) - 6, "_graph") == 0)
    stage = logged;

  if (stage)
    {
      if (!crow && (st = compile_for (imp, &cid, &crow)) != FX_OK)
        return st;
      char stage_buf[300];
      return add_graph (imp, crow, part_name (ce, stage, stage_buf, sizeof stage_buf), payload, plen, line);
    }

  if (strcmp (kind, "dynamo_start") == 0)
    {
      json_object *stack;
      if (!crow || !meta || !json_object_object_get_ex (meta, "stack", &stack) || !stack
          || json_object_get_type (stack) != json_type_array)
        {
          warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "dynamo_start without a compile id or stack");
          return FX_OK;
        }
      fx_buf text;
      fx_buf_init (&text);
      fx_store_compile_update u;
      fx_store_compile_update_init (&u);
      int bad_id = -1;
      if (!format_stack (imp, stack, &text, &u.function, &u.file, &u.line, &bad_id))
        {
          warn (imp, FX_IMPORT_WARN_UNKNOWN_STRING, line, "dynamo_start: string id %d was never defined", bad_id);
          fx_buf_free (&text);
          return FX_OK;
        }
      u.user_stack = text.data;
      st = fx_store_update_compile (imp->store, crow, &u, imp->diag);
      fx_buf_free (&text);
      return st;
    }
  if (strcmp (kind, "compilation_metrics") == 0)
    {
      if (meta || !r->meta_text.p)
        return add_metrics_record (imp, &cid, crow, meta, line);
      /* read by the scanner (about a hundred members, one metrics row each); unsure: json-c reads the object */
      bool done = false;
      st = add_metrics_scanned (imp, &cid, crow, r->meta_text, line, &done);
      if (st != FX_OK || done)
        return st;
      json_object *obj = parse_span (r->meta_text);
      st = add_metrics_record (imp, &cid, crow, obj, line);
      json_object_put (obj);
      return st;
    }
  /* AOTInductor logs its generated code and provenance without a compile id too: they belong to the compile of the
     graphs logged without one, where provenance navigation (fx/provenance.h) finds them. */
  if (!crow && !has_cid
      && (strcmp (kind, "graph_dump") == 0
          || (art_name && strncmp (art_name, "inductor_provenance_tracking_", 29) == 0))
      && (st = compile_for (imp, &cid, &crow)) != FX_OK)
    return st;
  if (strcmp (kind, "dynamo_cpp_guards_str") == 0 && crow && payload)
    {
      st = add_cpp_guards (imp, crow, payload);
      if (st == FX_OK)
        st = fx_store_add_artifact (imp->store, imp->input, crow, kind, "string", payload, imp->diag);
      return st;
    }
  if (strcmp (kind, "inductor_output_code") == 0 && crow && payload)
    {
      st = add_output_code (imp, crow, ce, payload, plen);
      if (st == FX_OK)
        st = fx_store_add_artifact (imp->store, imp->input, crow,
                                    part_name (ce, "inductor_output_code", part_buf, sizeof part_buf), "string",
                                    payload, imp->diag);
      if (st == FX_OK)
        imp->stats->artifacts++;
      return st;
    }
  if (strcmp (kind, "symbolic_shape_specialization") == 0 || strcmp (kind, "guard_added") == 0
      || strcmp (kind, "guard_added_fast") == 0 || strcmp (kind, "propagate_real_tensors_provenance") == 0
      || strcmp (kind, "missing_fake_kernel") == 0 || strcmp (kind, "mismatched_fake_kernel") == 0
      || strcmp (kind, "expression_created") == 0)
    {
      if (meta || !r->meta_text.p)
        return add_shape_event (imp, crow, kind, meta, line);
      bool done = false;
      st = add_guard_event_scanned (imp, crow, kind, r->meta_text, line, &done);
      if (st != FX_OK || done)
        return st;
      json_object *obj = parse_span (r->meta_text);
      st = add_shape_event (imp, crow, kind, obj, line);
      json_object_put (obj);
      return st;
    }
  if (strcmp (kind, "exported_program") == 0 && payload)
    {
      /* torch.export's str(ExportedProgram): its GraphModule is the export's "export" graph (of [-/-] when the
         record has no compile id), as a .pt2's is; the whole text (signature, range constraints) stays beside. */
      if (!crow && (st = compile_for (imp, &cid, &crow)) != FX_OK)
        return st;
      size_t glen = 0;
      char *graph = exported_program_graph (payload, plen, &glen);
      if (graph)
        st = add_graph (imp, crow, "export", graph, glen, line);
      else
        warn (imp, FX_IMPORT_WARN_GRAPH_PARSE, line, "exported_program: no 'class GraphModule' in its text");
      free (graph);
      if (st == FX_OK)
        st = fx_store_add_artifact (imp->store, imp->input, crow, "exported_program", "string", payload, imp->diag);
      if (st == FX_OK)
        imp->stats->artifacts++;
      return st;
    }
  if (logged && strcmp (logged, "fx_graph_runnable") == 0)
    {
      /* A standalone repro of the post-grad graph: stored as the "runnable" stage through the FX parser. */
      if (!crow && (st = compile_for (imp, &cid, &crow)) != FX_OK)
        return st;
      char stage_buf[64];
      return add_graph (imp, crow, part_name (ce, "runnable", stage_buf, sizeof stage_buf), payload, plen, line);
    }
  if (logged && crow && payload && strcmp (logged, "dynamo_error") == 0)
    {
      st = add_dynamo_error (imp, crow, payload);
      if (st == FX_OK)
        st = fx_store_add_artifact (imp->store, imp->input, crow, art_name, "string", payload, imp->diag);
      if (st == FX_OK)
        imp->stats->artifacts++;
      return st;
    }
  if (logged && crow && payload && strcmp (logged, "inductor_provenance_tracking_node_mappings") == 0)
    {
      int64_t rows = 0;
      fx_diag pd;
      fx_diag_clear (&pd);
      /* The backward's kernels restart their names and debug handles: its mappings are checked and kept as the
         _backward artifact, the provenance rows (looked up by kernel name) are the forward's. */
      bool bw = ce && ce->backward;
      fx_status ps = fx_import_provenance (bw ? NULL : imp->store, crow, payload, plen, &rows, &pd);
      if (ps == FX_ERR_PARSE)
        warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "%s: %.120s", art_name, pd.message);
      else if (ps != FX_OK)
        return fx_diag_set (imp->diag, ps, "%s", pd.message);
      imp->stats->provenance += bw ? 0 : rows;
      /* The raw mapping is kept either way (a rejected one is not counted as read). */
      st = fx_store_add_artifact (imp->store, imp->input, crow, art_name, art_enc ? art_enc : "json", payload,
                                  imp->diag);
      if (st == FX_OK)
        imp->stats->artifacts++;
      return st;
    }
  if (logged && crow && strcmp (logged, "recompile_reasons") == 0)
    {
      st = add_recompile_reasons (imp, crow, payload, line);
      if (st == FX_OK)
        st = fx_store_add_artifact (imp->store, imp->input, crow, art_name, "json", payload, imp->diag);
      return st;
    }
  if (logged && crow && payload && strcmp (logged, "dynamo_graph_break_reason") == 0)
    {
      st = add_graph_break (imp, crow, payload);
      return st == FX_OK ? flag_compile (imp, crow, false) : st;
    }
  if (art_name)
    {
      st = fx_store_add_artifact (imp->store, imp->input, crow, art_name, art_enc ? art_enc : "string",
                                  payload ? payload : "", imp->diag);
      if (st == FX_OK)
        imp->stats->artifacts++;
      return st;
    }
  if (!is_known_raw (kind) && strcmp (kind, "dynamo_cpp_guards_str") != 0
      && strcmp (kind, "inductor_output_code") != 0)
    warn (imp, FX_IMPORT_WARN_UNKNOWN_KIND, line, "%.100s", kind);
  if (!meta && r->meta_text.p)
    {
      bool done = false;
      st = add_raw_scanned (imp, crow, kind, r->meta_text, payload, &done);
      if (st != FX_OK || done)
        return st;
      json_object *obj = parse_span (r->meta_text);
      st = add_raw (imp, crow, kind, obj, payload);
      json_object_put (obj);
      return st;
    }
  return add_raw (imp, crow, kind, meta, payload);
}

/* A glog prefix: optional [rankN]:, then L MMDD HH:MM:SS.uuuuuu THREAD PATH:LINE]. Returns its closing ], NULL when
   the line has none. */
static const char *
glog_prefix_close (const char *p, const char *eol)
{
  if (p < eol && *p == '[')
    {
      const char *c = memchr (p, ']', (size_t) (eol - p));
      if (!c || c + 1 >= eol || c[1] != ':')
        return NULL;
      p = c + 2;
    }
  if (eol - p < 24 || !strchr ("VIWEC", *p))
    return NULL;
  static const char shape[] = "dddd dd:dd:dd.dddddd ";
  for (size_t i = 0; i < sizeof shape - 1; i++)
    {
      char c = p[1 + i];
      if (shape[i] == 'd' ? (c < '0' || c > '9') : c != shape[i])
        return NULL;
    }
  const char *q = p + sizeof shape;
  if (q >= eol || *q < '0' || *q > '9')
    return NULL;
  while (q < eol && *q >= '0' && *q <= '9')
    q++;
  if (q >= eol || *q != ' ')
    return NULL;
  const char *close = memchr (q, ']', (size_t) (eol - q));
  if (!close)
    return NULL;
  /* PATH:LINE right before the ] */
  const char *d = close;
  while (d > q && d[-1] >= '0' && d[-1] <= '9')
    d--;
  if (d == close || d[-1] != ':')
    return NULL;
  return close;
}

/* The JSON start of a TORCH_TRACE line: the first { after the glog prefix. */
static const char *
glog_json_start (const char *p, const char *eol)
{
  const char *close = glog_prefix_close (p, eol);
  return close ? memchr (close, '{', (size_t) (eol - close)) : NULL;
}

static void
free_importer (importer *imp)
{
  for (size_t i = 0; i < imp->n_strings; i++)
    free (imp->strings[i]);
  free (imp->strings);
  for (size_t i = 0; i < imp->n_described; i++)
    free (imp->described[i].text);
  free (imp->described);
  free (imp->compiles);
  free (imp->slots);
  free (imp->frames);
  fx_md5_worker_free (imp->md5);
  imp->md5 = NULL;
}

/* A payload line (its leading tab dropped) of the record being collected. */
static void
append_payload_line (fx_buf *payload, bool *has_payload_lines, const char *p, size_t llen)
{
  if (*has_payload_lines)
    fx_buf_putc (payload, '\n');
  fx_buf_append (payload, p + 1, llen - 1);
  *has_payload_lines = true;
}

/* A payload line with no record to belong to: warned once per run of them, and not at all under a skipped record. */
static void
warn_orphan_payload (importer *imp, int64_t lineno, const char *p, size_t llen, bool skipping, bool *orphan_run)
{
  if (skipping || *orphan_run)
    return;
  warn (imp, FX_IMPORT_WARN_ORPHAN_PAYLOAD, lineno, "%.*s", (int) (llen - 1 < 120 ? llen - 1 : 120), p + 1);
  *orphan_run = true;
}

/* Where a record line's JSON starts; NULL, warned, for a line without the glog prefix and a '{' after it. */
static const char *
record_json_start (importer *imp, int64_t lineno, const char *p, size_t llen)
{
  const char *js = glog_json_start (p, p + llen);
  if (!js)
    warn (imp, FX_IMPORT_WARN_BAD_LINE, lineno, "%.*s", (int) (llen < 120 ? llen : 120), p);
  return js;
}

/* The envelope of a record line (its JSON from js to the line's end), read by json-c; NULL, warned, when it is not
   one JSON object. */
static json_object *
parse_envelope (importer *imp, json_tokener *tok, const char *js, const char *line_end, int64_t lineno)
{
  json_tokener_reset (tok);
  json_object *obj = json_tokener_parse_ex (tok, js, (int) (line_end - js));
  enum json_tokener_error jerr = json_tokener_get_error (tok);
  size_t used = json_tokener_get_parse_end (tok);
  bool trailing = false;
  for (const char *t = js + used; t < line_end; t++)
    trailing |= *t != ' ';
  if (!obj || jerr != json_tokener_success || trailing || json_object_get_type (obj) != json_type_object)
    {
      /* The line is not NUL-terminated in memory: print at most the rest of it. */
      int shown = (int) (line_end - js < 100 ? line_end - js : 100);
      warn (imp, FX_IMPORT_WARN_BAD_JSON, lineno, "%s: %.*s",
            jerr != json_tokener_success ? json_tokener_error_desc (jerr) : "not a JSON object", shown, js);
      json_object_put (obj);
      return NULL;
    }
  return obj;
}

/* The end of an import: what it stored is committed when st is FX_OK, else rolled back; the importer is freed. */
static fx_status
end_import (importer *imp, fx_status st)
{
  if (st == FX_OK)
    st = fx_store_commit (imp->store, imp->diag);
  if (st != FX_OK)
    fx_store_rollback (imp->store);
  free_importer (imp);
  return st;
}

/* An input without one record (what: the kind of record wanted) is an error located at its first line that was not
   one, else at the first one that was not JSON or was too long to read. */
static fx_status
no_record_error (const fx_import_stats *stats, const char *name, const char *what, fx_diag *diag)
{
  fx_status st = fx_diag_set (diag, FX_ERR_PARSE, "no %s in %s", what, name);
  const fx_import_example *ex = &stats->examples[FX_IMPORT_WARN_BAD_LINE][0];
  if (stats->warnings[FX_IMPORT_WARN_BAD_LINE])
    fx_diag_locate (diag, name, (int) ex->line, 1, ex->text, strlen (ex->text));
  else if (stats->warnings[FX_IMPORT_WARN_BAD_JSON])
    {
      ex = &stats->examples[FX_IMPORT_WARN_BAD_JSON][0];
      fx_diag_locate (diag, name, (int) ex->line, 1, ex->text, strlen (ex->text));
    }
  else if (stats->warnings[FX_IMPORT_WARN_LONG_LINE])
    {
      ex = &stats->examples[FX_IMPORT_WARN_LONG_LINE][0];
      fx_diag_locate (diag, name, (int) ex->line, 1, NULL, 0);
    }
  return st;
}

static void
hash_block (const char *data, size_t len, void *user_data)
{
  importer *imp = user_data;
  imp->md5_failed |= !fx_md5_worker_file (imp->md5, data, len);
}

static fx_status md5_file (FILE *f, const char *path, char hash[33], fx_diag *diag);

/* Copies a span into buf (size bytes) as a C string; false when it does not fit. */
static bool
span_str (fx_json_span s, char *buf, size_t size)
{
  if (s.len >= size)
    return false;
  memcpy (buf, s.p, s.len);
  buf[s.len] = 0;
  return true;
}

/* A record whose envelope the scanner read, when its kind is one whose handling needs nothing of the metadata but
   an artifact's name and encoding: chromium events, artifacts, graphs, output code and C++ guards (nearly every
   record of a large trace). *done false for any other kind: the caller reads the envelope with json-c. */
static fx_status
handle_scanned (importer *imp, const fx_trace_envelope *e, const char *payload, size_t plen, int64_t line,
                bool *done)
{
  char kind[64], want[64], name[256], enc[64];
  *done = false;
  if (!span_str (e->kind, kind, sizeof kind) || (e->has_want && !span_str (e->want, want, sizeof want)))
    return FX_OK;
  record r = { .kind = kind, .want = e->has_want ? want : NULL,
               .cid = { e->compiled_autograd_id, e->frame_id, e->frame_compile_id, e->attempt } };
  bool has_cid = r.cid.frame_id >= 0 || r.cid.compiled_autograd_id >= 0;
  if (strcmp (kind, "chromium_event") == 0 || graph_stage (kind))
    ;
  else if ((strcmp (kind, "compilation_metrics") == 0 || strcmp (kind, "guard_added_fast") == 0
            || strcmp (kind, "guard_added") == 0 || strcmp (kind, "create_symbol") == 0)
           && e->meta_type == '{')
    r.meta_text = e->meta; /* read from its text where it is handled */
  else if ((strcmp (kind, "inductor_output_code") == 0 || strcmp (kind, "dynamo_cpp_guards_str") == 0) && has_cid
           && payload)
    ;
  else if (strcmp (kind, "artifact") == 0 && e->meta_type == '{')
    {
      fx_json_field f[2] = { { "name" }, { "encoding" } };
      const char *meta_end;
      if (!fx_json_scan_fields (e->meta.p, e->meta.p + e->meta.len, f, 2, &meta_end) || f[0].type != 's'
          || !span_str (f[0].value, name, sizeof name) || (f[1].type == 's' && !span_str (f[1].value, enc, sizeof enc)))
        return FX_OK;
      r.art_name = name;
      r.art_enc = f[1].type == 's' ? enc : NULL;
    }
  else
    return FX_OK;
  *done = true;
  return handle_decoded (imp, &r, payload, plen, line);
}

/* Handles the record being collected: its envelope read by json-c (env), or by the scanner (senv, over the text
   env_text) and then by json-c only when handle_scanned leaves it. */
static fx_status
flush_record (importer *imp, json_object *env, const fx_trace_envelope *senv, const fx_buf *env_text,
              const char *payload, size_t plen, int64_t line)
{
  fx_status st = FX_OK;
  bool done = false;
  imp->rejected = false;
  if (env)
    st = handle_record (imp, env, payload, plen, line);
  else if ((st = handle_scanned (imp, senv, payload, plen, line, &done)) == FX_OK && !done)
    {
      /* The scanner only takes strict JSON, which json-c reads too. */
      json_object *obj = json_tokener_parse (env_text->data);
      if (obj && json_object_get_type (obj) == json_type_object)
        st = handle_record (imp, obj, payload, plen, line);
      else
        {
          warn (imp, FX_IMPORT_WARN_BAD_JSON, line, "not a JSON object: %.100s", env_text->data);
          imp->rejected = true;
        }
      json_object_put (obj);
    }
  if (!imp->rejected)
    imp->stats->records++;
  return st;
}

/* The importer over a stream of lines: one record is its envelope line plus the tab-prefixed payload lines after
   it, so only the record being read is held in memory, whatever the size of the log. */
static fx_status
import_trace_lines (fx_store *store, const char *name, fx_line_reader *lines, uint64_t size, const char *hash,
                    fx_import_progress_fn progress, void *user_data, fx_import_stats *stats, fx_diag *diag)
{
  importer imp = { .store = store, .name = name, .stats = stats, .diag = diag };
  char file_hash[33];
  fx_status st = fx_store_begin_bulk (store, diag);
  if (st != FX_OK)
    return st;
  int64_t existing = 0;
  /* The input's identity is the md5 of the whole file. Hashing it before the import costs a second read and a
     third of the md5 time: when no input of the same size is stored the file cannot be one of them, and it is
     hashed as it is read (its row holds a placeholder until then). Otherwise it is hashed first, so importing the
     same file again stops at once. */
  if (!hash && lines->f && (st = fx_store_find_input_size (store, (int64_t) size, &existing, diag)) != FX_OK)
    goto out;
  if (!hash && lines->f && existing)
    {
      if ((st = md5_file (lines->f, name, file_hash, diag)) != FX_OK)
        goto out;
      hash = file_hash;
    }
  if (hash && (st = fx_store_find_input (store, hash, &existing, diag)) != FX_OK)
    goto out;
  if (hash && existing)
    {
      stats->already_imported = true;
      fx_store_rollback (store);
      return FX_OK;
    }
  if ((st = fx_store_add_input (store, name, "torch_trace", hash ? hash : "(being imported)", (int64_t) size,
                                &imp.input, diag)) != FX_OK)
    goto out;
  imp.md5 = fx_md5_worker_new (true);
  if (!imp.md5)
    {
      st = fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
      goto out;
    }
  if (!hash)
    {
      lines->on_block = hash_block;
      lines->on_block_data = &imp;
    }

  json_tokener *tok = json_tokener_new ();
  fx_buf payload, env_text;
  fx_buf_init (&payload);
  fx_buf_init (&env_text);
  json_object *env = NULL;   /* the record whose payload lines are being collected */
  bool scanned = false;      /* or: its envelope, read by the scanner into senv (spans in env_text) */
  fx_trace_envelope senv;
  int64_t env_line = 0;
  bool skipping = false;     /* payload lines of a rejected record */
  bool orphan_run = false;
  bool has_payload_lines = false;
  int64_t lineno = 0;
  uint64_t next_progress = 0;
  while (st == FX_OK)
    {
      const char *p = NULL;
      size_t llen = 0, full_len = 0;
      bool at_end = !fx_line_reader_next (lines, &p, &llen, &full_len);
      bool too_long = !at_end && full_len > llen;
      bool payload_line = !at_end && !too_long && llen > 0 && *p == '\t';
      if (!at_end)
        lineno++;
      if (too_long)
        {
          /* A payload line too long to keep spoils its record: that record is dropped with the rest of its lines.
             An envelope too long ends the record before it (stored as usual) and is skipped with its payload. */
          bool in_payload = lines->first == '\t' && (env || scanned);
          if ((env || scanned) && !in_payload)
            st = flush_record (&imp, env, &senv, &env_text, has_payload_lines ? payload.data : NULL, payload.len,
                               env_line);
          warn (&imp, FX_IMPORT_WARN_LONG_LINE, lineno, "a line of %zu bytes, over the limit of %zu: skipped%s",
                full_len, fx_import_max_line (), in_payload ? " with its record" : "");
          json_object_put (env);
          env = NULL;
          scanned = false;
          skipping = true;
          orphan_run = false;
          continue;
        }
      if (!payload_line && (env || scanned))
        {
          st = flush_record (&imp, env, &senv, &env_text, has_payload_lines ? payload.data : NULL, payload.len,
                             env_line);
          json_object_put (env);
          env = NULL;
          scanned = false;
        }
      if (at_end || st != FX_OK)
        break;
      if (llen && p[llen - 1] == '\r')
        llen--;
      if (payload_line)
        {
          if (env || scanned)
            append_payload_line (&payload, &has_payload_lines, p, llen);
          else
            warn_orphan_payload (&imp, lineno, p, llen, skipping, &orphan_run);
        }
      else if (llen > 0)
        {
          orphan_run = false;
          const char *js = record_json_start (&imp, lineno, p, llen);
          skipping = js == NULL;
          if (js && (fx_buf_reset (&env_text), fx_buf_append (&env_text, js, (size_t) (p + llen - js)),
                     fx_trace_scan_envelope (env_text.data, env_text.data + env_text.len, &senv)))
            {
              /* The common case, read without json-c (fx-trace-scan.h). */
              scanned = true;
              env_line = lineno;
              fx_buf_reset (&payload);
              has_payload_lines = false;
            }
          else if (js)
            {
              env = parse_envelope (&imp, tok, js, p + llen, lineno);
              skipping = env == NULL;
              if (env)
                {
                  env_line = lineno;
                  fx_buf_reset (&payload);
                  has_payload_lines = false;
                }
            }
        }
      if (progress && lines->offset >= next_progress)
        {
          progress ((double) lines->offset / (double) (size ? size : 1), user_data);
          next_progress = lines->offset + size / 100 + 1;
        }
    }
  json_object_put (env);
  json_tokener_free (tok);
  fx_buf_free (&payload);
  fx_buf_free (&env_text);
  stats->lines = lineno;
  lines->on_block = NULL;
  int64_t mismatches = 0;
  fx_import_example examples[FX_IMPORT_EXAMPLES];
  /* (file_hash may already hold the hash computed first, which hash points to: not overwritten) */
  imp.md5_failed |= !fx_md5_worker_finish (imp.md5, hash ? NULL : file_hash, &mismatches, examples);
  if (st != FX_OK)
    goto out;
  if (imp.md5_failed)
    {
      st = fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
      goto out;
    }
  /* The worker's mismatches, as warn() would have counted them. */
  for (int64_t i = 0; i < mismatches && stats->warnings[FX_IMPORT_WARN_MD5_MISMATCH] + i < FX_IMPORT_EXAMPLES; i++)
    stats->examples[FX_IMPORT_WARN_MD5_MISMATCH][stats->warnings[FX_IMPORT_WARN_MD5_MISMATCH] + i] = examples[i];
  stats->warnings[FX_IMPORT_WARN_MD5_MISMATCH] += mismatches;
  if (lines->error)
    {
      st = fx_diag_set (diag, FX_ERR_IO, "%s: read failed after line %lld", name, (long long) lineno);
      goto out;
    }
  if (stats->records == 0)
    {
      st = no_record_error (stats, name, "TORCH_TRACE record", diag);
      goto out;
    }
  if (!hash)
    {
      /* Hashed while read: the same content may be stored under another size (an input whose file grew while
         it was imported): then it was imported before, as if it had been known at the start. */
      if ((st = fx_store_find_input (store, file_hash, &existing, diag)) != FX_OK)
        goto out;
      if (existing)
        {
          fx_store_rollback (store);
          free_importer (&imp);
          memset (stats, 0, sizeof *stats);
          stats->already_imported = true;
          return FX_OK;
        }
      if ((st = fx_store_set_input_hash (store, imp.input, file_hash, diag)) != FX_OK)
        goto out;
    }
  st = fx_store_link_debug_compiles (store, &stats->links, diag);

out:
  st = end_import (&imp, st);
  if (st == FX_OK && progress)
    progress (1.0, user_data);
  return st;
}

fx_status
fx_import_torch_trace_data (fx_store *store, const char *name, const char *data, size_t len,
                            fx_import_progress_fn progress, void *user_data, fx_import_stats *stats, fx_diag *diag)
{
  memset (stats, 0, sizeof *stats);
  char hash[33];
  fx_md5_hex (data, len, hash);
  fx_line_reader lines;
  fx_line_reader_init_mem (&lines, data, len);
  fx_status st = import_trace_lines (store, name, &lines, len, hash, progress, user_data, stats, diag);
  fx_line_reader_free (&lines);
  return st;
}

/* The md5 of an open file, read in blocks (the input's identity is known before anything is stored). */
static fx_status
md5_file (FILE *f, const char *path, char hash[33], fx_diag *diag)
{
  fx_md5 md5;
  fx_md5_init (&md5);
  char *block = malloc (1 << 20);
  if (!block)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  size_t n;
  while ((n = fread (block, 1, 1 << 20, f)) > 0)
    fx_md5_update (&md5, block, n);
  bool failed = ferror (f) != 0;
  free (block);
  if (failed)
    return fx_diag_set (diag, FX_ERR_IO, "%s: read failed", path);
  fx_md5_final_hex (&md5, hash);
  rewind (f);
  return FX_OK;
}

fx_status
fx_import_torch_trace (fx_store *store, const char *path, fx_import_progress_fn progress, void *user_data,
                       fx_import_stats *stats, fx_diag *diag)
{
  memset (stats, 0, sizeof *stats);
  fx_line_reader lines;
  int64_t size = 0;
  fx_status st = fx_line_reader_open (&lines, path, &size, diag);
  if (st == FX_OK)
    st = import_trace_lines (store, path, &lines, (uint64_t) size, NULL, progress, user_data, stats, diag);
  fx_line_reader_free (&lines);
  return st;
}

/* ------------------------------------------------------------------ following a trace that is being written
   (fxwb serve --follow). Additive: the whole-file importer above is untouched; this keeps one importer (string
   table, compile rows, line numbers) alive across calls and imports the complete records appended since the last
   call, each call in its own transaction. */

struct fx_trace_follow
{
  importer imp;
  fx_import_stats stats;
  json_tokener *tok;
  int64_t lineno;
};

fx_status
fx_trace_follow_new (fx_store *store, const char *name, int64_t size, fx_trace_follow **out, fx_diag *diag)
{
  *out = NULL;
  fx_trace_follow *f = calloc (1, sizeof *f);
  if (!f)
    return fx_diag_set (diag, FX_ERR_NOMEM, "out of memory");
  f->imp.store = store;
  f->imp.name = name;
  f->imp.stats = &f->stats;
  /* A followed log changes while it is read: its row is keyed by name and the time it was opened, not content. */
  char key[512], hash[33];
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  snprintf (key, sizeof key, "follow:%s:%lld.%09ld", name, (long long) ts.tv_sec, ts.tv_nsec);
  fx_md5_hex (key, strlen (key), hash);
  fx_status st = fx_store_begin (store, diag);
  if (st == FX_OK)
    st = fx_store_add_input (store, name, "torch_trace", hash, size, &f->imp.input, diag);
  if (st == FX_OK)
    st = fx_store_commit (store, diag);
  else
    fx_store_rollback (store);
  if (st != FX_OK)
    {
      free (f);
      return st;
    }
  f->tok = json_tokener_new ();
  *out = f;
  return FX_OK;
}

const fx_import_stats *
fx_trace_follow_stats (const fx_trace_follow *f)
{
  return &f->stats;
}

int64_t
fx_trace_follow_input (const fx_trace_follow *f)
{
  return f->imp.input;
}

void
fx_trace_follow_free (fx_trace_follow *f)
{
  if (!f)
    return;
  free_importer (&f->imp);
  json_tokener_free (f->tok);
  free (f);
}

/* The records of data[0, len): whole lines, the last record complete (the same line loop as
   fx_import_torch_trace_data, with the line number carried over from earlier calls). */
static fx_status
follow_records (fx_trace_follow *f, const char *data, size_t len)
{
  importer *imp = &f->imp;
  fx_import_stats *stats = &f->stats;
  fx_status st = FX_OK;
  fx_buf payload;
  fx_buf_init (&payload);
  json_object *env = NULL;
  int64_t env_line = 0;
  bool skipping = false, orphan_run = false, has_payload_lines = false;
  const char *p = data, *end = data + len;
  while (st == FX_OK)
    {
      const char *eol = p < end ? memchr (p, '\n', (size_t) (end - p)) : NULL;
      if (p < end && !eol)
        eol = end;
      bool at_end = p >= end;
      bool payload_line = !at_end && *p == '\t';
      if (!at_end)
        f->lineno++;
      if (!payload_line && env)
        {
          imp->rejected = false;
          st = handle_record (imp, env, has_payload_lines ? payload.data : NULL, payload.len, env_line);
          if (!imp->rejected)
            stats->records++;
          json_object_put (env);
          env = NULL;
        }
      if (at_end || st != FX_OK)
        break;
      size_t llen = (size_t) (eol - p);
      if (llen && p[llen - 1] == '\r')
        llen--;
      if (payload_line)
        {
          if (env)
            append_payload_line (&payload, &has_payload_lines, p, llen);
          else
            warn_orphan_payload (imp, f->lineno, p, llen, skipping, &orphan_run);
        }
      else if (llen > 0)
        {
          orphan_run = false;
          const char *js = record_json_start (imp, f->lineno, p, llen);
          skipping = js == NULL;
          if (js)
            {
              env = parse_envelope (imp, f->tok, js, p + llen, f->lineno);
              skipping = env == NULL;
              if (env)
                {
                  env_line = f->lineno;
                  fx_buf_reset (&payload);
                  has_payload_lines = false;
                }
            }
        }
      p = eol < end ? eol + 1 : end;
    }
  json_object_put (env);
  fx_buf_free (&payload);
  stats->lines = f->lineno;
  return st;
}

fx_status
fx_trace_follow_feed (fx_trace_follow *f, const char *data, size_t len, bool final, size_t *consumed,
                      fx_diag *diag)
{
  *consumed = 0;
  /* Only whole lines: a partial last line waits for its newline. */
  const char *last_nl = len ? memrchr (data, '\n', len) : NULL;
  if (!last_nl)
    return FX_OK;
  size_t usable = (size_t) (last_nl - data) + 1;
  size_t cut = usable;
  if (!final)
    {
      /* The last record may still get payload lines: keep it until a record line follows it. */
      const char *p = data, *last_record = NULL;
      while (p < data + usable)
        {
          const char *eol = memchr (p, '\n', (size_t) (data + usable - p));
          if (*p != '\t' && *p != '\n' && *p != '\r')
            last_record = p;
          p = eol + 1;
        }
      cut = last_record ? (size_t) (last_record - data) : usable;
    }
  if (cut == 0)
    return FX_OK;
  f->imp.diag = diag;
  fx_status st = fx_store_begin (f->imp.store, diag);
  if (st != FX_OK)
    return st;
  int64_t lineno = f->lineno;
  fx_import_stats saved = f->stats;
  st = follow_records (f, data, cut);
  if (st == FX_OK)
    st = fx_store_commit (f->imp.store, diag);
  if (st != FX_OK)
    {
      /* Nothing of this chunk was kept: it is read again next time. The importer's compile table may name rows
         that were rolled back, so it is dropped (rows are found again by fx_store_ensure_compile). */
      fx_store_rollback (f->imp.store);
      f->lineno = lineno;
      f->stats = saved;
      f->imp.n_compiles = 0;
      if (f->imp.cap_slots)
        memset (f->imp.slots, 0, f->imp.cap_slots * sizeof *f->imp.slots);
      return st;
    }
  *consumed = cut;
  return FX_OK;
}

/* ------------------------------------------------------------------ TORCH_LOGS text */

/* Graph text inside a TORCH_LOGS record: from the "class " of the first class line (print_readable prefixes it with
   the module file path), else from the first "def forward". */
static const char *
graph_start (const char *text)
{
  const char *c = strstr (text, "class ");
  const char *d = strstr (text, "def forward");
  return c && (!d || c < d) ? c : d;
}

/* One TORCH_LOGS record: consecutive lines with the same "path:line] [cid] [__artifact]" prefix. */
static fx_status
handle_log_record (importer *imp, const char *cid_text, const char *artifact, const char *text, int64_t line)
{
  fx_compile_id cid;
  if (fx_compile_id_parse (cid_text, &cid, NULL) != FX_OK)
    {
      warn (imp, FX_IMPORT_WARN_BAD_RECORD, line, "compile id [%.40s]", cid_text);
      return FX_OK;
    }
  int64_t crow = 0;
  fx_status st = compile_for (imp, &cid, &crow);
  if (st != FX_OK)
    return st;
  imp->stats->records++;
  size_t len = strlen (text);
  if (strcmp (artifact, "guards") == 0 && strstr (text, "+- "))
    return add_cpp_guards (imp, crow, text);
  if (strcmp (artifact, "recompiles") == 0 || strcmp (artifact, "recompiles_verbose") == 0)
    {
      fx_store_compile_update u;
      fx_store_compile_update_init (&u);
      u.has_recompile = 1;
      for (const char *p = text; *p && st == FX_OK;)
        {
          const char *eol = strchr (p, '\n');
          size_t n = eol ? (size_t) (eol - p) : strlen (p);
          char *l = strndup (p, n);
          const char *s = l;
          while (*s == ' ')
            s++;
          if (strncmp (s, "Recompiling function ", 21) == 0)
            {
              /* "Recompiling function F in FILE:LINE" */
              const char *in = strstr (s + 21, " in ");
              const char *colon = in ? strrchr (in + 4, ':') : NULL;
              if (in && colon)
                {
                  char *fn = strndup (s + 21, (size_t) (in - s - 21));
                  char *file = strndup (in + 4, (size_t) (colon - in - 4));
                  fx_store_compile_update fu;
                  fx_store_compile_update_init (&fu);
                  fu.function = fn;
                  fu.file = file;
                  fu.line = atoi (colon + 1);
                  st = fx_store_update_compile (imp->store, crow, &fu, imp->diag);
                  free (fn);
                  free (file);
                }
            }
          else if (strncmp (s, "- ", 2) == 0)
            {
              char *sep = strstr (s + 2, ": ");
              fx_compile_id failed;
              if (sep)
                *sep = 0;
              if (sep && fx_compile_id_parse (s + 2, &failed, NULL) == FX_OK)
                st = fx_store_add_guard_failure (imp->store, crow, s + 2, sep + 2, NULL, imp->diag);
              else
                {
                  if (sep)
                    *sep = ':';
                  st = fx_store_add_guard_failure (imp->store, crow, NULL, s + 2, NULL, imp->diag);
                }
            }
          free (l);
          p += n + (eol ? 1 : 0);
        }
      return st == FX_OK ? fx_store_update_compile (imp->store, crow, &u, imp->diag) : st;
    }
  if (strcmp (artifact, "graph_breaks") == 0)
    {
      /* Several breaks can follow each other under one prefix: each starts with "Graph break". */
      const char *p = text;
      while (p && *p && st == FX_OK)
        {
          const char *next = strstr (p + 1, "\nGraph break");
          char *one = strndup (p, next ? (size_t) (next - p) : strlen (p));
          st = add_graph_break (imp, crow, one);
          free (one);
          p = next ? next + 1 : NULL;
        }
      return st == FX_OK ? flag_compile (imp, crow, false) : st;
    }
  if ((strcmp (artifact, "graph_code") == 0 || strcmp (artifact, "aot_graphs") == 0
       || strcmp (artifact, "post_grad_graphs") == 0) && strstr (text, "TRACED GRAPH") && graph_start (text))
    {
      const char *stage = strcmp (artifact, "graph_code") == 0 ? "dynamo"
                          : strcmp (artifact, "post_grad_graphs") == 0 ? "post_grad"
                          : strstr (text, "Joint graph") ? "aot_joint"
                          : strstr (text, "Backward graph") ? "aot_backward"
                          : strstr (text, "Forward graph") ? "aot_forward" : "aot_inference";
      const char *g = graph_start (text);
      return add_graph (imp, crow, stage, g, strlen (g), line);
    }
  if (strcmp (artifact, "output_code") == 0 && strncmp (text, "Output code:", 12) == 0)
    {
      const char *code = strchr (text, '\n');
      code = code ? code + 1 : text + len;
      st = add_output_code (imp, crow, NULL, code, strlen (code));
      if (st == FX_OK)
        st = fx_store_add_artifact (imp->store, imp->input, crow, "inductor_output_code", "string", code, imp->diag);
      return st;
    }
  st = fx_store_add_artifact (imp->store, imp->input, crow, artifact, "log", text, imp->diag);
  if (st == FX_OK)
    imp->stats->artifacts++;
  return st;
}

/* "[0/1] [__guards] text": returns the text start and fills cid / artifact; NULL when the line has no such tags. */
static const char *
log_tags (const char *p, const char *eol, char *cid, size_t cid_size, char *artifact, size_t art_size)
{
  if (p >= eol || *p != '[')
    return NULL;
  const char *c = memchr (p, ']', (size_t) (eol - p));
  if (!c || (size_t) (c - p - 1) >= cid_size || c + 4 >= eol || memcmp (c, "] [__", 5) != 0)
    return NULL;
  snprintf (cid, cid_size, "%.*s", (int) (c - p - 1), p + 1);
  const char *a = c + 5;
  const char *ae = memchr (a, ']', (size_t) (eol - a));
  if (!ae || (size_t) (ae - a) >= art_size)
    return NULL;
  snprintf (artifact, art_size, "%.*s", (int) (ae - a), a);
  ae++;
  return ae < eol && *ae == ' ' ? ae + 1 : ae;
}

fx_status
fx_import_torch_logs_data (fx_store *store, const char *name, const char *data, size_t len, fx_import_stats *stats,
                           fx_diag *diag)
{
  memset (stats, 0, sizeof *stats);
  importer imp = { .store = store, .name = name, .stats = stats, .diag = diag };
  char hash[33];
  fx_md5_hex (data, len, hash);
  fx_status st = fx_store_begin (store, diag);
  if (st != FX_OK)
    return st;
  int64_t existing = 0;
  if ((st = fx_store_find_input (store, hash, &existing, diag)) != FX_OK)
    goto out;
  if (existing)
    {
      stats->already_imported = true;
      fx_store_rollback (store);
      free_importer (&imp);
      return FX_OK;
    }
  if ((st = fx_store_add_input (store, name, "torch_logs", hash, (int64_t) len, &imp.input, diag)) != FX_OK)
    goto out;
  fx_buf text, key;
  fx_buf_init (&text);
  fx_buf_init (&key);
  char cur_cid[48] = "", cur_art[64] = "";
  int64_t rec_line = 0, lineno = 0;
  const char *p = data, *end = data + len;
  while (st == FX_OK)
    {
      const char *eol = p < end ? memchr (p, '\n', (size_t) (end - p)) : NULL;
      if (p < end && !eol)
        eol = end;
      char cid[48] = "", art[64] = "";
      const char *body = NULL, *js = NULL;
      size_t klen = 0;
      if (p < end)
        {
          lineno++;
          /* The glog prefix up to "] " (reusing the TORCH_TRACE check, which wants a '{' after it: not here). */
          const char *close = memchr (p, ']', (size_t) (eol - p));
          js = close && close + 2 < eol && close[1] == ' ' ? close + 2 : NULL;
          body = js ? log_tags (js, eol, cid, sizeof cid, art, sizeof art) : NULL;
          /* path:line] [cid] [__art]: the key of a record (timestamps differ within one). */
          const char *path = body ? memchr (p, ' ', (size_t) (close - p)) : NULL;
          path = path ? memchr (path + 1, ' ', (size_t) (close - path - 1)) : NULL;
          path = path ? memchr (path + 1, ' ', (size_t) (close - path - 1)) : NULL;
          if (path)
            {
              klen = (size_t) (body - path);
              (void) klen;
            }
          if (!body || !path)
            body = NULL;
          if (body && (key.len != (size_t) (body - path) || memcmp (key.data, path, key.len) != 0))
            {
              if (key.len && text.len)
                st = handle_log_record (&imp, cur_cid, cur_art, text.data, rec_line);
              fx_buf_reset (&text);
              fx_buf_reset (&key);
              fx_buf_append (&key, path, (size_t) (body - path));
              snprintf (cur_cid, sizeof cur_cid, "%s", cid);
              snprintf (cur_art, sizeof cur_art, "%s", art);
              rec_line = lineno;
            }
          else if (body && text.len)
            fx_buf_putc (&text, '\n');
          if (body)
            fx_buf_append (&text, body, (size_t) (eol - body));
          else if (eol > p && !js)
            /* Lines with a glog prefix but no [__artifact] tag are ordinary log lines: skipped quietly. */
            warn (&imp, FX_IMPORT_WARN_BAD_LINE, lineno, "%.*s", (int) (eol - p < 120 ? eol - p : 120), p);
          p = eol < end ? eol + 1 : end;
          continue;
        }
      if (key.len && text.len)
        st = handle_log_record (&imp, cur_cid, cur_art, text.data, rec_line);
      break;
    }
  fx_buf_free (&text);
  fx_buf_free (&key);
  stats->lines = lineno;
  /* Located at the first line that was not one, as for a TORCH_TRACE (whose other cases do not arise here). */
  if (st == FX_OK && stats->records == 0)
    st = no_record_error (stats, name, "TORCH_LOGS record ([frame/compile] [__artifact] lines)", diag);

out:
  return end_import (&imp, st);
}

fx_status
fx_import_torch_logs (fx_store *store, const char *path, fx_import_stats *stats, fx_diag *diag)
{
  char *data = NULL;
  size_t len = 0;
  memset (stats, 0, sizeof *stats);
  fx_status st = fx_import_read_regular (path, 0, &data, &len, diag);
  if (st != FX_OK)
    return st;
  st = fx_import_torch_logs_data (store, path, data, len, stats, diag);
  free (data);
  return st;
}

static void
merge_stats (fx_import_stats *into, const fx_import_stats *s)
{
  into->lines += s->lines;
  into->records += s->records;
  into->frames += s->frames;
  into->compiles += s->compiles;
  into->graphs += s->graphs;
  into->kernels += s->kernels;
  into->guards += s->guards;
  into->artifacts += s->artifacts;
  into->events += s->events;
  into->ir_nodes += s->ir_nodes;
  into->provenance += s->provenance;
  into->links += s->links;
  for (int w = 0; w < FX_IMPORT_WARN_COUNT; w++)
    {
      for (int64_t k = 0; k < s->warnings[w] && k < FX_IMPORT_EXAMPLES; k++)
        if (into->warnings[w] + k < FX_IMPORT_EXAMPLES)
          into->examples[w][into->warnings[w] + k] = s->examples[w][k];
      into->warnings[w] += s->warnings[w];
    }
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* A folder entry not imported, counted and named among the first examples. */
static void
note_skipped (fx_import_stats *skipped, const char *name, const char *why)
{
  int64_t k = skipped->warnings[FX_IMPORT_WARN_SKIPPED_FILE]++;
  if (k < FX_IMPORT_EXAMPLES)
    snprintf (skipped->examples[FX_IMPORT_WARN_SKIPPED_FILE][k].text, sizeof skipped->examples[0][0].text,
              "%.100s: %s", name, why);
}

fx_status
fx_import_path (fx_store *store, const char *path, fx_import_progress_fn progress, void *user_data,
                fx_import_stats *stats, fx_diag *diag)
{
  struct stat sb;
  memset (stats, 0, sizeof *stats);
  if (stat (path, &sb) != 0)
    return fx_diag_set (diag, FX_ERR_IO, "%s: no such file or folder", path);
  if (!S_ISDIR (sb.st_mode))
    {
      /* A FIFO or a device (/dev/zero) would be read forever: only regular files are inputs. */
      fx_status st = fx_import_check_regular (path, diag);
      if (st != FX_OK)
        return st;
    }
  if (S_ISDIR (sb.st_mode) && fx_is_debug_dir (path))
    return fx_import_debug_dir (store, path, progress, user_data, stats, diag);
  if (!S_ISDIR (sb.st_mode))
    {
      /* A zip archive starts with "PK\3\4". */
      FILE *f = fopen (path, "rb");
      char magic[4] = { 0 };
      bool zip = f && fread (magic, 1, 4, f) == 4 && memcmp (magic, "PK\3\4", 4) == 0;
      if (f)
        fclose (f);
      if (zip)
        return fx_import_pt2 (store, path, stats, diag);
    }
  if (!S_ISDIR (sb.st_mode))
    {
      /* TORCH_LOGS text: "...] [0/0] [__guards] ..." in the first kilobyte, and no JSON envelope. */
      FILE *f = fopen (path, "rb");
      char head[1024] = "";
      size_t got = f ? fread (head, 1, sizeof head - 1, f) : 0;
      if (f)
        fclose (f);
      head[got] = 0;
      char *tag = strstr (head, "] [__");
      char *nl = strchr (head, '\n');
      if (tag && (!nl || tag < nl) && !strstr (head, "] {\""))
        return fx_import_torch_logs (store, path, stats, diag);
    }
  if (!S_ISDIR (sb.st_mode))
    {
      /* FX Python code (a minifier's repro.py, print_readable): a .py file whose forward() parses */
      size_t pl = strlen (path);
      if (pl > 3 && strcmp (path + pl - 3, ".py") == 0)
        return fx_import_fx_code (store, path, stats, diag);
      return fx_import_torch_trace (store, path, progress, user_data, stats, diag);
    }
  /* A TORCH_TRACE folder: every *.log in it, in name order. */
  DIR *dir = opendir (path);
  if (!dir)
    return fx_diag_set (diag, FX_ERR_IO, "%s: cannot open folder", path);
  char **names = NULL;
  size_t n = 0;
  struct dirent *de;
  fx_import_stats skipped;
  memset (&skipped, 0, sizeof skipped);
  while ((de = readdir (dir)))
    {
      size_t l = strlen (de->d_name);
      if (l > 4 && strcmp (de->d_name + l - 4, ".log") == 0)
        {
          names = realloc (names, (n + 1) * sizeof *names);
          names[n++] = strdup (de->d_name);
        }
      else if (de->d_name[0] != '.')
        note_skipped (&skipped, de->d_name, "not a *.log: ignored");   /* a rank folder's program, stdout, ... */
    }
  closedir (dir);
  fx_status st = FX_OK;
  if (n == 0)
    st = fx_diag_set (diag, FX_ERR_NOT_FOUND, "%s: no TORCH_TRACE *.log file in this folder", path);
  else
    qsort (names, n, sizeof *names, cmp_str);
  bool all_seen = n > 0;
  size_t n_read = 0;
  for (size_t i = 0; i < n && st == FX_OK; i++)
    {
      size_t plen = strlen (path) + strlen (names[i]) + 2;
      char *full = malloc (plen);
      snprintf (full, plen, "%s/%s", path, names[i]);
      /* A *.log that is a symlink out of the folder, or to a device or a FIFO, is not read: noted instead. */
      char *real = fx_import_resolve_inside (path, full);
      if (!real)
        {
          int64_t k = skipped.warnings[FX_IMPORT_WARN_SKIPPED_FILE]++;
          if (k < FX_IMPORT_EXAMPLES)
            snprintf (skipped.examples[FX_IMPORT_WARN_SKIPPED_FILE][k].text,
                      sizeof skipped.examples[0][0].text, "%.100s: not a regular file inside the folder", names[i]);
          free (full);
          continue;
        }
      free (real);
      fx_import_stats one;
      st = fx_import_torch_trace (store, full, progress, user_data, &one, diag);
      if (st == FX_ERR_PARSE)
        {
          /* A *.log with no record (torchrun's own log beside the rank traces): noted, the others still read. */
          note_skipped (&skipped, names[i], "no TORCH_TRACE record: ignored");
          fx_diag_clear (diag);
          st = FX_OK;
          free (full);
          continue;
        }
      if (st == FX_OK)
        {
          all_seen &= one.already_imported;
          merge_stats (stats, &one);
          n_read++;
        }
      free (full);
    }
  merge_stats (stats, &skipped);
  if (st == FX_OK && n > 0 && n_read == 0)
    st = fx_diag_set (diag, FX_ERR_NOT_FOUND, "%s: no readable TORCH_TRACE *.log file in this folder (%zu skipped: "
                      "not regular files inside it, or no record in them)", path, n);
  stats->already_imported = all_seen && n_read > 0 && st == FX_OK;
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
  return st;
}
