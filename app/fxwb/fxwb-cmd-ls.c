/* fxwb-cmd-ls.c: `fxwb ls FILE.fxwb`: the frames and compiles of a workspace, like tlparse's index. */
#include "fxwb.h"

#include <math.h>
#include <string.h>

#include "fx/export.h"
#include "fx/ranks.h"
#include "fx/store.h"

/* --runs: every stored run with the id `fxwb diff WORKSPACE:run/ID` takes. */
static void
list_runs (const fx_store_run_row *r, size_t n, gboolean json)
{
  if (json)
    {
      json_object *list = json_object_new_array ();
      for (size_t i = 0; i < n; i++)
        {
          json_object *o = json_object_new_object ();
          g_autofree char *id = g_strdup_printf ("run/%" G_GINT64_FORMAT, r[i].id);
          fxwb_json_add_str (o, "run", id);
          fxwb_json_add_str (o, "compile_id", r[i].compile_id);
          fxwb_json_add_str (o, "stage", r[i].stage);
          fxwb_json_add_str (o, "backend", r[i].backend);
          fxwb_json_add_str (o, "mode", r[i].mode);
          fxwb_json_add_str (o, "options", r[i].options_json);
          fxwb_json_add_str (o, "status", r[i].incomplete ? "incomplete" : "done");
          fxwb_json_add_str (o, "verdict", r[i].verdict);
          fxwb_json_add_num (o, "median_ms", r[i].run_ms_median);
          if (r[i].n_outputs >= 0)
            fxwb_json_add_int (o, "outputs", r[i].n_outputs);
          else
            json_object_object_add (o, "outputs", NULL); /* not kept: stored before schema 6, or the run failed */
          fxwb_json_add_str (o, "inputs", r[i].inputs);
          json_object_array_add (list, o);
        }
      fxwb_json_print (list);
      return;
    }
  printf ("%-8s %-8s %-16s %-24s %-12s %-12s %11s %7s  %s\n", "RUN", "COMPILE", "STAGE", "BACKEND", "MODE", "VERDICT",
          "MEDIAN", "OUTPUTS", "INPUTS");
  for (size_t i = 0; i < n; i++)
    {
      g_autofree char *id = g_strdup_printf ("run/%" G_GINT64_FORMAT, r[i].id);
      g_autofree char *cid = g_strdup_printf ("[%s]", r[i].compile_id ? r[i].compile_id : "-");
      /* A column given as "inductor,k=v" is stored under that label; options set by -o show beside it. */
      g_autofree char *backend = r[i].options_json && strcmp (r[i].options_json, "{}") != 0 && r[i].backend
                                     && !strchr (r[i].backend, ',')
                                   ? g_strdup_printf ("%s %s", r[i].backend, r[i].options_json)
                                   : g_strdup (r[i].backend ? r[i].backend : "-");
      g_autofree char *ms = isnan (r[i].run_ms_median) ? g_strdup ("-") : g_strdup_printf ("%.4f ms", r[i].run_ms_median);
      g_autofree char *outs = r[i].n_outputs < 0 ? g_strdup ("-") : g_strdup_printf ("%d", r[i].n_outputs);
      printf ("%-8s %-8s %-16s %-24s %-12s %-12s %11s %7s  %s\n", id, cid, r[i].stage ? r[i].stage : "-", backend,
              r[i].mode ? r[i].mode : "-", r[i].incomplete ? "incomplete" : r[i].verdict ? r[i].verdict : "-", ms,
              outs, r[i].inputs ? r[i].inputs : "-");
    }
}

static const fx_store_input *
find_input (const fx_store_input *inputs, size_t n, int64_t id)
{
  for (size_t k = 0; k < n; k++)
    if (inputs[k].id == id)
      return &inputs[k];
  return NULL;
}

/* A section after the compiles reads the workspace on its own: when that fails, its error is printed and the
   listing stands. */
static gboolean
section_read (fx_status st, const fx_diag *diag)
{
  if (st != FX_OK)
    fxwb_print_diag (diag);
  return st == FX_OK;
}

/* The "ranks diverge:" section: one line per compile id and kind, naming the ranks that differ. */
static void
print_divergence (const fx_rank_divergence *ds, size_t nd, size_t n_ranks)
{
  if (nd == 0)
    {
      printf ("\n%zu ranks agree: the same compiles, graphs, guards, cache results, collectives and runtime estimates\n", n_ranks);
      return;
    }
  printf ("\nranks diverge: (%zu ranks; `fxwb diff WORKSPACE --ranks` shows each)\n", n_ranks);
  fxwb_print_rank_divergences (ds, nd);
}

/* A torch.export trace's records outside any compile: the guards export added and its unbacked symbols, each with
   the user line it came from. */
static void
print_export (const fx_export_entry *es, size_t ne, gboolean any_compile)
{
  if (ne == 0)
    return;
  printf ("%storch.export (outside any compile): %zu guards and symbols\n", any_compile ? "\n" : "", ne);
  int w = 18;   /* the kind column: wider for draft_export's mismatched_fake_kernel */
  for (size_t i = 0; i < ne; i++)
    if ((int) strlen (es[i].kind) + 1 > w)
      w = (int) strlen (es[i].kind) + 1;
  printf ("%-*s %-34s %s\n", w, "KIND", "GUARD / SYMBOL", "USER LINE");
  for (size_t i = 0; i < ne; i++)
    {
      printf ("%-*s %-34s %s\n", w, es[i].kind, es[i].what ? es[i].what : "-",
              es[i].user_line ? es[i].user_line : "-");
      if (es[i].fix)
        printf ("%-*s   fix: %s\n", w, "", es[i].fix);
    }
}

int
fxwb_cmd_ls (int argc, char **argv)
{
  gboolean json = FALSE, runs = FALSE;
  int only_rank = -1;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON array of compiles, for scripts", NULL },
    { "runs", 0, 0, G_OPTION_ARG_NONE, &runs, "List the stored runs instead (fxwb run/compare -w): their ids "
      "(run/ID, for fxwb diff), compile, stage, backend, verdict, kept outputs and inputs", NULL },
    { "rank", 'r', 0, G_OPTION_ARG_INT, &only_rank, "Only the compiles of this rank (a multi-rank workspace)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb ls", "FILE.fxwb - list the compiles of a workspace", entries,
                               "One line per compile, in frame order: compile id ([frame/frame_compile], _attempt when\n"
                               "not 0), function, file:line, status (ok, graph break, recompiled, failed; \", training\"\n"
                               "added for a compile with forward and backward graphs), graphs, kernels; a block per\n"
                               "input (path, kind, size), and LINKED: the TORCH_COMPILE_DEBUG folder of a trace compile,\n"
                               "or the trace compile of a folder, when both were imported.\n"
                               "A folder of per-rank traces (dedicated_log_torch_trace_rank_N_*.log) lists rank by rank\n"
                               "and ends with \"ranks diverge:\": compiles made on some ranks only, and graphs, guards,\n"
                               "cache results, collective order or runtime estimates (inductor_runtime_and_tensor_meta, totals\n"
                               "more than 5% apart) that differ between ranks for the same compile id.",
                               FXWB_WORKSPACE_EXIT_STATUS ("listed"));
  fxwb_session ws;
  int open_rc = fxwb_session_open_argument (context, &argc, &argv, &ws);
  if (open_rc != FXWB_EXIT_OK)
    return open_rc;
  fx_store_compile *cs = NULL;
  fx_store_input *inputs = NULL;
  size_t n = 0, n_inputs = 0;
  fx_rank_input *ranks = NULL;
  size_t n_ranks = 0;
  if (runs)
    {
      fx_store_run_row *rows = NULL;
      fx_status st = fx_store_list_all_runs (ws.store, ws.arena, &rows, &n, &ws.diag);
      if (st == FX_OK)
        list_runs (rows, n, json);
      return fxwb_session_close (&ws, st);
    }
  fx_status st = fx_store_list_inputs (ws.store, ws.arena, &inputs, &n_inputs, &ws.diag);
  if (st == FX_OK)
    st = fx_store_list_compiles (ws.store, ws.arena, &cs, &n, &ws.diag);
  if (st == FX_OK)
    st = fx_ranks_list (ws.store, ws.arena, &ranks, &n_ranks, &ws.diag);
  if (st == FX_OK && only_rank >= 0)
    {
      /* Keep the compiles of that rank's inputs only. */
      size_t k = 0;
      for (size_t i = 0; i < n; i++)
        {
          const fx_store_input *in = find_input (inputs, n_inputs, cs[i].input_id);
          if (fx_rank_from_path (in ? in->path : NULL) == only_rank)
            cs[k++] = cs[i];
        }
      gboolean known = FALSE;
      for (size_t r = 0; r < n_ranks; r++)
        known |= ranks[r].rank == only_rank;
      if (!known)
        {
          fprintf (stderr, "fxwb ls: %s has no rank %d (%zu ranked inputs)\n", argv[1], only_rank, n_ranks);
          fxwb_session_close (&ws, FX_OK);
          return FXWB_EXIT_USAGE;
        }
      n = k;
    }
  if (st == FX_OK && json)
    {
      json_object *list = json_object_new_array ();
      for (size_t i = 0; i < n; i++)
        {
          const fx_store_input *in = find_input (inputs, n_inputs, cs[i].input_id);
          json_object *o = json_object_new_object ();
          fxwb_json_add_str (o, "compile_id", cs[i].compile_id);
          fxwb_json_add_int (o, "frame_id", cs[i].cid.frame_id);
          fxwb_json_add_int (o, "frame_compile_id", cs[i].cid.frame_compile_id);
          fxwb_json_add_int (o, "attempt", cs[i].cid.attempt);
          fxwb_json_add_int (o, "input", cs[i].input_id);
          fxwb_json_add_str (o, "input_path", in ? in->path : NULL);
          fxwb_json_add_str (o, "input_kind", in ? in->kind : NULL);
          if (in && fx_rank_from_path (in->path) >= 0)
            fxwb_json_add_int (o, "rank", fx_rank_from_path (in->path));
          fxwb_json_add_str (o, "function", cs[i].function);
          fxwb_json_add_str (o, "file", cs[i].file);
          fxwb_json_add_int (o, "line", cs[i].line);
          fxwb_json_add_str (o, "status", cs[i].status);
          fxwb_json_add_bool (o, "training", cs[i].training);
          fxwb_json_add_int (o, "graphs", cs[i].n_graphs);
          fxwb_json_add_int (o, "kernels", cs[i].n_kernels);
          fxwb_json_add_int (o, "guards", cs[i].n_guards);
          fxwb_json_add_int (o, "graph_breaks", cs[i].n_breaks);
          fxwb_json_add_int (o, "guard_failures", cs[i].n_failures);
          fxwb_json_add_str (o, "fail_type", cs[i].fail_type);
          fxwb_json_add_str (o, "linked", cs[i].linked);
          fxwb_json_add_num (o, "compile_time_s", cs[i].entire_frame_compile_s);
          json_object_array_add (list, o);
        }
      fxwb_json_print (list);
    }
  else if (st == FX_OK)
    {
      /* One block per input (compiles are listed input by input), headed by its path and kind; a compile linked
         to one of another input (a TORCH_COMPILE_DEBUG folder and the trace compile with the same output code)
         names it in a LINKED column. */
      gboolean any_link = FALSE;
      for (size_t i = 0; i < n; i++)
        any_link |= cs[i].linked != NULL;
      int64_t shown_input = -1;
      for (size_t i = 0; i < n; i++)
        {
          if (cs[i].input_id != shown_input)
            {
              const fx_store_input *in = find_input (inputs, n_inputs, cs[i].input_id);
              if (shown_input >= 0)
                putchar ('\n');
              shown_input = cs[i].input_id;
              int rank = in ? fx_rank_from_path (in->path) : -1;
              if (rank >= 0)
                printf ("== rank %d, input %" G_GINT64_FORMAT ": %s (%s", rank, cs[i].input_id, in->path, in->kind);
              else
                printf ("== input %" G_GINT64_FORMAT ": %s (%s", cs[i].input_id, in ? in->path : "?",
                        in ? in->kind : "?");
              if (in && in->size > 0)
                printf (", %.1f MB", (double) in->size / 1e6);
              printf (")\n");
              printf ("%-10s %-42s %-44s %-12s %6s %7s%s\n", "COMPILE", "FUNCTION", "FILE:LINE", "STATUS", "GRAPHS",
                      "KERNELS", any_link ? "  LINKED" : "");
            }
          g_autofree char *id = g_strdup_printf ("[%s]", cs[i].compile_id);
          g_autofree char *loc = !cs[i].file ? g_strdup ("-") : cs[i].line < 0 ? g_strdup (cs[i].file)
                                : g_strdup_printf ("%s:%d", cs[i].file, cs[i].line);
          /* Graphs logged without a compile id in a trace: torch.export + AOTInductor (aoti_compile_and_package). */
          const char *fn = cs[i].function ? cs[i].function
                           : cs[i].cid.frame_id < 0 && strcmp (cs[i].compile_id, "-/-") == 0 ? "(export/AOTInductor: no compile id)"
                           : "-";
          /* a training compile: forward and backward graphs (fxwb show --forward / --backward) */
          g_autofree char *status = g_strdup_printf ("%s%s", cs[i].status, cs[i].training ? ", training" : "");
          printf ("%-10s %-42s %-44s %-12s %6d %7d", id, fn, loc, status, cs[i].n_graphs, cs[i].n_kernels);
          if (any_link)
            printf ("  %s", cs[i].linked ? cs[i].linked : "-");
          putchar ('\n');
        }
      fx_diag diag;
      fx_diag_clear (&diag);
      fx_export_entry *es = NULL;
      fx_rank_divergence *ds = NULL;
      size_t ne = 0, nd = 0;
      if (only_rank < 0 && section_read (fx_export_entries (ws.store, ws.arena, &es, &ne, &diag), &diag))
        print_export (es, ne, n > 0);
      if (n_ranks > 1 && only_rank < 0
          && section_read (fx_ranks_diverge (ws.store, ws.arena, &ds, &nd, &diag), &diag))
        print_divergence (ds, nd, n_ranks);
    }
  return fxwb_session_close (&ws, st);
}
