/* fxwb-cmd-explain.c: `fxwb explain FILE.fxwb`: the summary torch._dynamo.explain() prints (ExplainOutput.__str__),
   rebuilt from an imported workspace: graph and break counts, op count, break reasons with user stacks, ops per graph,
   guards and compile times. */
#include "fxwb.h"

#include <string.h>

#include "fx/store.h"

/* str(node.target) of a call_function node, as explain() prints it. */
static void
target_str (const fx_target *t, GString *out)
{
  if (t->repr)
    {
      g_string_append (out, t->repr);
      return;
    }
  switch (t->kind)
    {
    case FX_TARGET_OPERATOR:
    case FX_TARGET_BUILTIN:
      g_string_append_printf (out, "<built-in function %s>", t->name);
      break;
    case FX_TARGET_FUNCTION:
      {
        /* The same str() print_tabular shows (fx_print_target_str); CPython's addresses are unknowable. */
        const char *dot = strrchr (t->name, '.');
        const char *leaf = dot ? dot + 1 : t->name;
        size_t mlen = dot ? (size_t) (dot - t->name) : 0;
        if (mlen == 12 && strncmp (t->name, "torch.Tensor", 12) == 0)
          g_string_append_printf (out, "<method '%s' of 'torch._C.TensorBase' objects>", leaf);
        else if (mlen == 5 && strncmp (t->name, "torch", 5) == 0)
          g_string_append_printf (out, "<built-in method %s of type object at 0x7f0000000000>", leaf);
        else if (mlen > 9 && strncmp (t->name, "torch._C.", 9) == 0)
          g_string_append_printf (out, "<built-in function %s>", leaf);
        else
          g_string_append_printf (out, "<function %s at 0x7f0000000000>", leaf);
        break;
      }
    case FX_TARGET_OP:
      g_string_append (out, g_str_has_prefix (t->name, "higher_order.") ? t->name + 13 : t->name);
      break;
    case FX_TARGET_STR:
    case FX_TARGET_KIND_COUNT:
    default:
      g_string_append (out, t->name);
      break;
    }
}

/* `  File "f", line N, in fn` lines -> `<FrameSummary file f, line N in fn>` */
static void
frame_summaries (const char *stack, GString *out)
{
  if (!stack)
    return;
  g_auto (GStrv) lines = g_strsplit (stack, "\n", -1);
  for (int i = 0; lines[i]; i++)
    {
      const char *l = lines[i];
      while (*l == ' ')
        l++;
      if (!g_str_has_prefix (l, "File \""))
        continue;
      const char *fstart = l + 6;
      const char *fend = strstr (fstart, "\", line ");
      if (!fend)
        continue;
      int line = atoi (fend + 8);
      const char *in = strstr (fend, ", in ");
      g_string_append_printf (out, "      <FrameSummary file %.*s, line %d in %s>\n", (int) (fend - fstart), fstart,
                              line, in ? in + 5 : "?");
    }
}

/* Python's repr() of a str, as the engine's printers write it (fx_py_str_repr). */
static void
py_repr (const char *s, GString *out)
{
  fx_buf b;
  fx_buf_init (&b);
  fx_py_str_repr (s, &b);
  g_string_append_len (out, b.data, (gssize) b.len);
  fx_buf_free (&b);
}

/* One entry of ExplainOutput.out_guards as str(Guard) prints it (torch/_guards.py Guard.__str__):
   "  Guard N:\n    Name: 'x'\n    Source: local\n    Create Function: ...\n    Guard Types: ...\n    Code List: ...\n
   Object Weakref: ...\n    Guarded Class Weakref: ...\n". code_list NULL prints None. Weakrefs are process
   addresses a trace does not keep: None. */
static void
append_guard (GString *out, int no, const char *name, const char *source, const char *create_fn,
              const char *const *code_list, size_t n_code)
{
  g_string_append_printf (out, "  Guard %d:\n    Name: ", no);
  py_repr (name ? name : "", out);
  g_string_append_printf (out, "\n    Source: %s\n    Create Function: %s\n    Guard Types: ", source, create_fn);
  if (code_list)
    {
      g_string_append (out, "[");
      py_repr (create_fn, out);
      g_string_append (out, "]\n    Code List: [");
      for (size_t i = 0; i < n_code; i++)
        {
          if (i)
            g_string_append (out, ", ");
          py_repr (code_list[i], out);
        }
      g_string_append (out, "]\n");
    }
  else
    g_string_append (out, "None\n    Code List: None\n");
  g_string_append (out, "    Object Weakref: None\n    Guarded Class Weakref: None\n");
}

/* GuardSource.name.lower() for a source name: L[...] local, G[...] global; none: global (ambient guards). */
static const char *
guard_source (const char *source)
{
  if (source && g_str_has_prefix (source, "L["))
    return strstr (source, "._modules[") || strstr (source, ".training") ? "local_specialized_nn_module" : "local";
  if (source && g_str_has_prefix (source, "G") && strstr (source, "._modules["))
    return "global_specialized_nn_module";
  return "global";
}

/* The guards of one compile, from its C++ guard tree, as Python Guard objects: one per leaf guard with its source;
   the shape-environment lambda guards (they read sizes of L[...] inputs) become the compile's one SHAPE_ENV guard. */
static void
compile_guards (const fx_store_guard *g, size_t n, int *guard_no, GString *out)
{
  gboolean has_shape = FALSE;
  for (size_t k = 0; k < n; k++)
    {
      gboolean shape = strcmp (g[k].kind, "LAMBDA_GUARD") == 0 && !g[k].source && strstr (g[k].code, "L[");
      if (shape)
        {
          has_shape = TRUE;
          continue;
        }
      const char *code = g[k].code;
      append_guard (out, ++*guard_no, g[k].source, guard_source (g[k].source), g[k].kind, &code, 1);
    }
  /* In explain() output the SHAPE_ENV guard shows no types or code list (the spec's observed output). */
  if (has_shape)
    append_guard (out, ++*guard_no, "", "shape_env", "SHAPE_ENV", NULL, 0);
}

/* torch._dynamo.utils.compile_times(repr="str"): "TorchDynamo compilation metrics:\n" and a tabulate table
   (headers Function, Runtimes (s); "simple" format) of each dynamo_timed key with its durations ("%.4f", joined by
   ", "), in the order each key first finished. Rebuilt from the chromium B/E events (cat dynamo_timed), which
   dynamo_timed writes for the same keys and spans. */
typedef struct
{
  char *name;
  GArray *open;     /* start timestamps (us), innermost last */
  GString *values;  /* "0.1234, 0.0021" */
  GPtrArray *single; /* per value, for the all-numeric column */
} timed_key;

static void
timed_key_free (gpointer p)
{
  timed_key *k = p;
  g_free (k->name);
  g_array_unref (k->open);
  g_string_free (k->values, TRUE);
  g_ptr_array_unref (k->single);
  g_free (k);
}

/* tabulate's _afterpoint: digits after the decimal point, -1 without one. */
static int
after_point (const char *s)
{
  const char *dot = strchr (s, '.');
  if (!dot || strchr (s, 'e'))
    return -1;
  return (int) strlen (dot + 1);
}

static void
compile_times (fx_store_event *ev, size_t n, GString *out)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new_with_free_func (timed_key_free);
  g_autoptr (GHashTable) by_name = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) order = g_ptr_array_new ();   /* keys in first-end order */
  for (size_t i = 0; i < n; i++)
    {
      if (!ev[i].name || !ev[i].phase || !ev[i].json || !strstr (ev[i].json, "\"cat\": \"dynamo_timed\""))
        continue;
      gboolean begin = strcmp (ev[i].phase, "B") == 0, end = strcmp (ev[i].phase, "E") == 0;
      if (!begin && !end)
        continue;
      timed_key *k = g_hash_table_lookup (by_name, ev[i].name);
      if (!k)
        {
          k = g_new0 (timed_key, 1);
          k->name = g_strdup (ev[i].name);
          k->open = g_array_new (FALSE, FALSE, sizeof (double));
          k->values = g_string_new ("");
          k->single = g_ptr_array_new_with_free_func (g_free);
          g_ptr_array_add (keys, k);
          g_hash_table_insert (by_name, k->name, k);
        }
      if (begin)
        {
          g_array_append_val (k->open, ev[i].ts_us);
          continue;
        }
      if (!k->open->len)
        continue;
      double start = g_array_index (k->open, double, k->open->len - 1);
      g_array_set_size (k->open, k->open->len - 1);
      if (!k->single->len)
        g_ptr_array_add (order, k);
      /* Python formats with '.' whatever the locale. */
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_autofree char *v = g_strdup (g_ascii_formatd (buf, sizeof buf, "%.4f", (ev[i].ts_us - start) / 1e6));
      g_string_append_printf (k->values, "%s%s", k->values->len ? ", " : "", v);
      g_ptr_array_add (k->single, g_steal_pointer (&v));
    }
  g_string_append (out, "TorchDynamo compilation metrics:\n");
  /* tabulate: a column is numeric when every cell parses as a number (then %g, decimal-aligned to the right),
     else left-aligned text; widths are max(header + 2, cells); cells are joined by two spaces, trailing blanks
     dropped. */
  gboolean numeric = order->len > 0;
  for (guint i = 0; i < order->len; i++)
    numeric &= ((timed_key *) order->pdata[i])->single->len == 1;
  g_autoptr (GPtrArray) cells = g_ptr_array_new_with_free_func (g_free);
  int maxdec = -1;
  for (guint i = 0; i < order->len; i++)
    {
      timed_key *k = order->pdata[i];
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      char *c = numeric ? g_strdup (g_ascii_formatd (buf, sizeof buf, "%g", g_ascii_strtod (k->single->pdata[0], NULL)))
                        : g_strdup (k->values->str);
      maxdec = MAX (maxdec, after_point (c));
      g_ptr_array_add (cells, c);
    }
  if (numeric)
    for (guint i = 0; i < cells->len; i++)
      {
        char *c = cells->pdata[i];
        int pad = maxdec - after_point (c);
        cells->pdata[i] = g_strdup_printf ("%s%*s", c, pad, "");
        g_free (c);
      }
  int w0 = (int) strlen ("Function") + 2, w1 = (int) strlen ("Runtimes (s)") + 2;
  for (guint i = 0; i < order->len; i++)
    {
      w0 = MAX (w0, (int) strlen (((timed_key *) order->pdata[i])->name));
      w1 = MAX (w1, (int) strlen (cells->pdata[i]));
    }
  g_autoptr (GString) line = g_string_new ("");
  for (guint i = 0; i <= order->len + 1; i++)
    {
      g_string_truncate (line, 0);
      if (i == 0)
        g_string_append_printf (line, "%-*s  %*s", w0, "Function", numeric ? w1 : -w1, "Runtimes (s)");
      else if (i == 1)
        {
          for (int c = 0; c < w0; c++)
            g_string_append_c (line, '-');
          g_string_append (line, "  ");
          for (int c = 0; c < w1; c++)
            g_string_append_c (line, '-');
        }
      else
        g_string_append_printf (line, "%-*s  %*s", w0, ((timed_key *) order->pdata[i - 2])->name,
                                numeric ? w1 : -w1, (char *) cells->pdata[i - 2]);
      while (line->len && line->str[line->len - 1] == ' ')
        g_string_truncate (line, line->len - 1);
      g_string_append_printf (out, "%s%s", line->str, i <= order->len ? "\n" : "");
    }
}

/* Compiles in the order the input first mentions them (row order), which is the order they ran. */
static int
by_row (const void *a, const void *b)
{
  const fx_store_compile *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

int
fxwb_cmd_explain (int argc, char **argv)
{
  GOptionEntry entries[] = { { NULL } };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb explain", "FILE.fxwb - the torch._dynamo.explain() summary", entries,
                               "Rebuilds ExplainOutput's text from the workspace: Graph Count (Dynamo graphs), Graph\n"
                               "Break Count, Op Count (call_function nodes), Break Reasons with user stacks, Ops per\n"
                               "Graph, Out Guards (one str(Guard) per guard of each compile's C++ guard tree; shape\n"
                               "guards as one SHAPE_ENV guard; weakrefs, which a trace does not keep, as None) and\n"
                               "Compile Times (compile_times(): each dynamo_timed key's durations from the trace's\n"
                               "chromium events).",
                               FXWB_WORKSPACE_EXIT_STATUS ("printed"));
  fxwb_session ws;
  int open_rc = fxwb_session_open_argument (context, &argc, &argv, &ws);
  if (open_rc != FXWB_EXIT_OK)
    return open_rc;
  fx_store_compile *cs = NULL;
  size_t n = 0;
  fx_status st = fx_store_list_compiles (ws.store, ws.arena, &cs, &n, &ws.diag);
  if (st == FX_OK && n > 1)
    qsort (cs, n, sizeof *cs, by_row);
  g_autoptr (GString) reasons = g_string_new ("");
  g_autoptr (GString) ops = g_string_new ("");
  g_autoptr (GString) guards = g_string_new ("");
  g_autoptr (GString) times = g_string_new ("");
  int graph_count = 0, break_count = 0, op_count = 0, guard_no = 0;
  for (size_t i = 0; i < n && st == FX_OK; i++)
    {
      fx_store_graph_info *gi;
      size_t ng = 0;
      if ((st = fx_store_list_graphs (ws.store, cs[i].id, ws.arena, &gi, &ng, &ws.diag)) != FX_OK)
        break;
      for (size_t g = 0; g < ng && st == FX_OK; g++)
        {
          if (strcmp (gi[g].stage, "dynamo") != 0)
            continue;
          graph_count++;
          g_string_append_printf (ops, "  Ops %d:\n", graph_count);
          fx_graph *graph = NULL;
          if ((st = fx_store_get_graph (ws.store, gi[g].id, &graph, NULL, &ws.diag)) != FX_OK)
            break;
          if (!graph)
            {
              g_string_append (ops, "    (graph text did not parse)\n");
              continue;
            }
          fx_graph_foreach_node (graph, node)
            if (node->op == FX_OP_CALL_FUNCTION)
              {
                op_count++;
                g_string_append (ops, "    ");
                target_str (&node->target, ops);
                g_string_append_c (ops, '\n');
              }
          fx_graph_free (graph);
        }
      fx_store_graph_break *b;
      size_t nb = 0;
      if (st == FX_OK
          && (st = fx_store_list_graph_breaks (ws.store, cs[i].id, ws.arena, &b, &nb, &ws.diag)) == FX_OK)
        for (size_t k = 0; k < nb; k++)
          {
            break_count++;
            g_string_append_printf (reasons, "  Break Reason %d:\n    Reason: %s\n", break_count, b[k].reason);
            if (b[k].explanation)
              g_string_append_printf (reasons, "  Explanation: %s\n", b[k].explanation);
            g_string_append (reasons, "    User Stack:\n");
            frame_summaries (b[k].user_stack, reasons);
          }
      fx_store_guard *gd;
      size_t nguards = 0;
      if (st == FX_OK
          && (st = fx_store_list_guards (ws.store, cs[i].id, ws.arena, &gd, &nguards, &ws.diag)) == FX_OK)
        compile_guards (gd, nguards, &guard_no, guards);
    }
  if (st == FX_OK)
    {
      fx_store_event *ev;
      size_t nev = 0;
      if ((st = fx_store_list_events (ws.store, 0, ws.arena, &ev, &nev, &ws.diag)) == FX_OK)
        compile_times (ev, nev, times);
    }
  if (st == FX_OK)
    {
      printf ("Graph Count: %d\nGraph Break Count: %d\nOp Count: %d\n", graph_count, break_count, op_count);
      printf ("Break Reasons:\n%s", reasons->str);
      printf ("Ops per Graph:\n%s", ops->str);
      printf ("Out Guards:\n%s", guards->str);
      printf ("Compile Times: %s\n", times->str);
    }
  return fxwb_session_close (&ws, st);
}
