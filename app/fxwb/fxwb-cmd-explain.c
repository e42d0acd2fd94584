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
  g_set_prgname ("fxwb explain");
  g_autoptr (GOptionContext) context = g_option_context_new ("FILE.fxwb - the torch._dynamo.explain() summary");
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_summary (context,
                                "Rebuilds ExplainOutput's text from the workspace: Graph Count (Dynamo graphs), Graph\n"
                                "Break Count, Op Count (call_function nodes), Break Reasons with user stacks, Ops per\n"
                                "Graph, the guards of each compile (from the C++ guard tree) and compile times.");
  g_option_context_set_description (context,
                                    "Exit status:\n"
                                    "  0  printed\n"
                                    "  1  FILE is not a workspace this build can read\n"
                                    "  2  wrong command line\n"
                                    "  3  FILE cannot be read\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  if (argc != 2)
    {
      g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);
      fprintf (stderr, "fxwb explain: %s\n\n%s", argc < 2 ? "missing FILE.fxwb" : "more than one FILE", help);
      return FXWB_EXIT_USAGE;
    }
  fx_diag diag;
  fx_diag_clear (&diag);
  fx_store *store = NULL;
  fx_status st = fx_store_open (argv[1], false, &store, &diag);
  if (st != FX_OK)
    {
      fxwb_print_diag (&diag);
      return fxwb_exit_for_status (st);
    }
  fx_arena *arena = fx_arena_new ();
  fx_store_compile *cs = NULL;
  size_t n = 0;
  st = fx_store_list_compiles (store, arena, &cs, &n, &diag);
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
      if ((st = fx_store_list_graphs (store, cs[i].id, arena, &gi, &ng, &diag)) != FX_OK)
        break;
      for (size_t g = 0; g < ng && st == FX_OK; g++)
        {
          if (strcmp (gi[g].stage, "dynamo") != 0)
            continue;
          graph_count++;
          g_string_append_printf (ops, "  Ops %d:\n", graph_count);
          fx_graph *graph = NULL;
          if ((st = fx_store_get_graph (store, gi[g].id, &graph, NULL, &diag)) != FX_OK)
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
      if (st == FX_OK && (st = fx_store_list_graph_breaks (store, cs[i].id, arena, &b, &nb, &diag)) == FX_OK)
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
      if (st == FX_OK && (st = fx_store_list_guards (store, cs[i].id, arena, &gd, &nguards, &diag)) == FX_OK)
        for (size_t k = 0; k < nguards; k++)
          {
            guard_no++;
            g_string_append_printf (guards, "  Guard %d:\n    Compile: [%s]\n    Source: %s\n    Create Function: %s\n"
                                    "    Code List: [%s]\n", guard_no, cs[i].compile_id,
                                    gd[k].source ? gd[k].source : "-", gd[k].kind, gd[k].code);
          }
      if (cs[i].entire_frame_compile_s > 0)
        g_string_append_printf (times, "  [%s] %-44s %.4f\n", cs[i].compile_id, cs[i].function ? cs[i].function : "?",
                                cs[i].entire_frame_compile_s);
    }
  if (st == FX_OK)
    {
      printf ("Graph Count: %d\nGraph Break Count: %d\nOp Count: %d\n", graph_count, break_count, op_count);
      printf ("Break Reasons:\n%s", reasons->str);
      printf ("Ops per Graph:\n%s", ops->str);
      printf ("Out Guards:\n%s", guards->str);
      printf ("Compile Times: TorchDynamo compilation metrics (entire_frame_compile_time_s per compile):\n%s",
              times->str);
    }
  else
    fxwb_print_diag (&diag);
  fx_arena_free (arena);
  fx_store_close (store);
  return fxwb_exit_for_status (st);
}
