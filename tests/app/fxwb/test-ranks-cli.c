/* test-ranks-cli.c: multi-rank workspaces as a user meets them: the 4-rank gloo fixture imports as one workspace
   listed rank by rank, `fxwb ls` names the ranks and compile ids that diverge, `--rank N` narrows, `fxwb diff
   --ranks` shows the compile diffs and exits 1; and a 4-rank folder built here from copies of one rank's log, with
   one rank cut short and one guard edited on another, is told apart exactly (torchrun's own log and other files
   beside the traces are noted, not fatal). argv[1] (after the test options) is the fxwb program. */
#include <glib.h>

#include "fxwb-test-run.h"
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <string.h>

static const char *fxwb_path;
static char *tmp_dir;

static char *
fixture_path (const char *rel)
{
  const char *dir = g_getenv ("FX_FIXTURES");
  return g_build_filename (dir ? dir : "tests/fixtures", rel, NULL);
}

static fxwb_run_result
run_fxwb (const char *const *args)
{
  return fxwb_test_run (fxwb_path, args);
}

static char *
import_folder (const char *folder, const char *name)
{
  char *ws = g_build_filename (tmp_dir, name, NULL);
  fxwb_run_result r = run_fxwb ((const char *[]) { "import", "-q", folder, "-o", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  fxwb_run_result_clear (&r);
  return ws;
}

static void
test_fixture (void)
{
  g_autofree char *folder = fixture_path ("traces/multirank_gloo-cpu/torch_trace");
  g_autofree char *ws = import_folder (folder, "gloo.fxwb");

  fxwb_run_result r = run_fxwb ((const char *[]) { "ls", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  for (int rank = 0; rank < 4; rank++)
    {
      g_autofree char *head = g_strdup_printf ("== rank %d, input %d: ", rank, rank + 1);
      g_assert_nonnull (strstr (r.out, head));
    }
  /* What program.py makes differ, and nothing else: rank 1's flag, rank 3's input size. */
  const char *div = strstr (r.out, "\nranks diverge: (4 ranks;");
  g_assert_nonnull (div);
  g_assert_nonnull (strstr (div, "[1/0]      graph        rank 1         dynamo and "));
  g_assert_nonnull (strstr (div, "[1/0]      guards       rank 1 "));
  g_assert_nonnull (strstr (div, "[1/1]      compiles     ranks 1, 3     made on ranks 1, 3, not on ranks 0, 2\n"));
  g_assert_nonnull (strstr (div, "[1/1]      graph        rank 3 "));
  g_assert_nonnull (strstr (div, "[1/1]      cache        rank 3         rank 3: aotautograd_cache_miss, "
                                 "fx_graph_cache_miss; rank 1: aotautograd_cache_hit, fx_graph_cache_hit\n"));
  /* Object ids in guards and the rank's own environment in runnable graphs are no divergence. */
  g_assert_null (strstr (div, "[0/0]"));
  fxwb_run_result_clear (&r);

  /* Rank 3's dynamic-shape recompile of local is there. */
  r = run_fxwb ((const char *[]) { "ls", "--rank", "3", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "== rank 3, input 4: "));
  g_assert_null (strstr (r.out, "== rank 0"));
  g_assert_nonnull (strstr (r.out, "\n[1/1]      local "));
  g_assert_null (strstr (r.out, "ranks diverge"));
  fxwb_run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "ls", "--rank", "7", ws, NULL });
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "no rank 7"));
  fxwb_run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "ls", "--json", "--rank", "1", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  json_object *list = json_tokener_parse (r.out);
  g_assert_nonnull (list);
  g_assert_cmpint (json_object_array_length (list), ==, 3);
  json_object *rank = NULL;
  g_assert_true (json_object_object_get_ex (json_object_array_get_idx (list, 2), "rank", &rank));
  g_assert_cmpint (json_object_get_int (rank), ==, 1);
  json_object_put (list);
  fxwb_run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "diff", ws, "--ranks", NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, "--- a: "));
  g_assert_nonnull (strstr (r.out, ":rank0:1/0\n+++ b: "));
  g_assert_nonnull (strstr (r.out, "- guard FALSE_MATCH L['flag']: L['flag'] == False\n"
                                   "+ guard TRUE_MATCH L['flag']: L['flag'] == True\n"));
  g_assert_nonnull (strstr (r.out, "+cos: \"f32[8][1]cpu\" = l_x_.cos()\n"));
  g_assert_nonnull (strstr (r.out, ":rank1:1/1\n+++ b: "));
  g_assert_nonnull (strstr (r.out, "~ node l_x_: meta.shape: [8] -> [s"));
  fxwb_run_result_clear (&r);

  /* The report's landing page: one section over all ranks, each divergence linked to both compiles' pages. */
  g_autofree char *report = g_build_filename (tmp_dir, "gloo-report", NULL);
  r = run_fxwb ((const char *[]) { "report", ws, "-o", report, NULL });
  g_assert_cmpint (r.status, ==, 0);
  fxwb_run_result_clear (&r);
  g_autofree char *index = g_build_filename (report, "index.html", NULL);
  g_autofree char *html = NULL;
  g_assert_true (g_file_get_contents (index, &html, NULL, NULL));
  /* The header says what made it: program, command line, inputs. */
  g_assert_nonnull (strstr (html, "<p class=\"made-from\">Made by fxwb "));
  g_assert_nonnull (strstr (html, "gloo-report</code> from 4 inputs ("));
  g_assert_nonnull (strstr (html, "<p>4 ranks (one TORCH_TRACE each): rank 0 = input 1, rank 1 = input 2, "));
  g_assert_nonnull (strstr (html, "<h3 id=\"ranks-diverge\">Ranks diverge</h3>"));
  g_assert_nonnull (strstr (html, "<td>compiles</td><td>ranks 1, 3</td>"));
  g_assert_nonnull (strstr (html, "\">rank 0 [1/0]</a> vs <a href=\"compile-"));

  r = run_fxwb ((const char *[]) { "diff", "--json", "--ranks", ws, NULL });
  g_assert_cmpint (r.status, ==, 1);
  list = json_tokener_parse (r.out);
  g_assert_nonnull (list);
  g_assert_cmpint (json_object_array_length (list), ==, 6);
  json_object_put (list);
  fxwb_run_result_clear (&r);
}

/* Rank 0's log copied to ranks 0..3 (the records' "rank" edited to match): rank 1's all_reduce made a broadcast,
   rank 2's cut before its second frame (no [1/0]), rank 3's first tensor
   guard made to expect another size. */
static char *
make_edited_folder (const char *name, gboolean edit)
{
  g_autofree char *src_dir = fixture_path ("traces/multirank_gloo-cpu/torch_trace");
  g_autofree char *src = g_build_filename (src_dir, "dedicated_log_torch_trace_rank_0_31_yaj0j.log", NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (src, &text, &len, NULL));
  char *dir = g_build_filename (tmp_dir, name, NULL);
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  for (int rank = 0; rank < (edit ? 4 : 2); rank++)
    {
      g_autofree char *fname = g_strdup_printf ("dedicated_log_torch_trace_rank_%d_copy%d.log", rank, rank);
      g_autofree char *path = g_build_filename (dir, fname, NULL);
      /* Each record names its rank, as torchrun's would (and the copies are no longer the same content). */
      g_auto (GStrv) parts = g_strsplit (text, "\"rank\": 0,", -1);
      g_autofree char *with_rank = g_strdup_printf ("\"rank\": %d,", rank);
      g_autofree char *joined = g_strjoinv (with_rank, parts);
      GString *s = g_string_new (joined);
      if (edit && rank == 1)
        {
          /* Another collective in the same place: the graphs and the collective order differ. */
          g_auto (GStrv) ops = g_strsplit (s->str, "_c10d_functional.all_reduce", -1);
          g_autofree char *swapped = g_strjoinv ("_c10d_functional.broadcast", ops);
          g_string_assign (s, swapped);
        }
      if (edit && rank == 2)
        {
          const char *cut = strstr (s->str, "\"frame_id\": 1,");
          g_assert_nonnull (cut);
          while (cut > s->str && cut[-1] != '\n')
            cut--;
          g_string_truncate (s, (gsize) (cut - s->str));
        }
      if (edit && rank == 3)
        {
          char *at = strstr (s->str, "size=[8], stride=[1]");
          g_assert_nonnull (at);
          gsize pos = (gsize) (at - s->str);
          g_string_erase (s, (gssize) pos, 7);
          g_string_insert (s, (gssize) pos, "size=[16]");
        }
      g_assert_true (g_file_set_contents (path, s->str, (gssize) s->len, NULL));
      g_string_free (s, TRUE);
    }
  if (edit)
    {
      /* What a torchrun folder also holds. */
      g_autofree char *log = g_build_filename (dir, "torchrun_stderr.log", NULL);
      g_autofree char *txt = g_build_filename (dir, "notes.txt", NULL);
      g_assert_true (g_file_set_contents (log, "W1124 launching 4 workers\n", -1, NULL));
      g_assert_true (g_file_set_contents (txt, "hello\n", -1, NULL));
    }
  return dir;
}

/* A compile of one rank: rankN/ID (rankN:ID as show's argument): 1/1 alone is rank 1's, the first holding it. */
static void
test_rank_ids (void)
{
  g_autofree char *folder = fixture_path ("traces/multirank_gloo-cpu/torch_trace");
  g_autofree char *ws = import_folder (folder, "gloo-ids.fxwb");
  fxwb_run_result r = run_fxwb ((const char *[]) { "show", ws, "rank3/1/1", "--guards", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "2 <= L['x'].size()[0]"));
  fxwb_run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "show", ws, "rank3:1/1", "--guards", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "2 <= L['x'].size()[0]"));
  fxwb_run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "show", ws, "1/1", "--guards", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_null (strstr (r.out, "size()[0]"));
  fxwb_run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "show", ws, "rank2/1/1", NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "no compile 1/1 of rank 2 in "));
  fxwb_run_result_clear (&r);
  /* WORKSPACE:rankN/ID wherever a compile is named: rank 1's [1/1] against rank 3's */
  g_autofree char *a = g_strconcat (ws, ":rank1/1/1", NULL), *b = g_strconcat (ws, ":rank3/1/1", NULL);
  r = run_fxwb ((const char *[]) { "diff", a, b, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, "+ guard LAMBDA_GUARD: 2 <= L['x'].size()[0]"));
  fxwb_run_result_clear (&r);
}

static void
test_edited (void)
{
  g_autofree char *dir = make_edited_folder ("edited", TRUE);
  g_autofree char *ws = g_build_filename (tmp_dir, "edited.fxwb", NULL);
  fxwb_run_result r = run_fxwb ((const char *[]) { "import", "-q", dir, "-o", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "notes.txt: not a *.log: ignored"));
  g_assert_nonnull (strstr (r.out, "torchrun_stderr.log: no TORCH_TRACE record: ignored"));
  fxwb_run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "ls", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  const char *div = strstr (r.out, "\nranks diverge: (4 ranks;");
  g_assert_nonnull (div);
  g_assert_nonnull (strstr (div, "[0/0]      guards       ranks 1, 3     rank 1: "));
  g_assert_nonnull (strstr (div, "[1/0]      compiles     rank 2         made on ranks 0, 1, 3, not on rank 2\n"));
  g_assert_nonnull (strstr (div, "[0/0]      collectives  rank 1         dynamo (and 7 more stages): rank 1 issues "
                                 "broadcast, broadcast, wait_tensor, wait_tensor; rank 0 all_reduce, all_reduce, "
                                 "wait_tensor, wait_tensor\n"));
  g_assert_nonnull (strstr (div, "[0/0]      graph        rank 1 "));
  /* Rank 2's [0/0] and rank 3's graphs are rank 0's. */
  g_assert_null (strstr (div, "graph        ranks"));
  g_assert_null (strstr (div, "rank 3         dynamo"));
  fxwb_run_result_clear (&r);

  r = run_fxwb ((const char *[]) { "diff", "--ranks", ws, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, ":rank0:0/0\n+++ b: "));
  g_assert_nonnull (strstr (r.out, "size=[16]"));
  fxwb_run_result_clear (&r);
}

static void
test_agree (void)
{
  g_autofree char *dir = make_edited_folder ("same", FALSE);
  g_autofree char *ws = import_folder (dir, "same.fxwb");
  fxwb_run_result r = run_fxwb ((const char *[]) { "ls", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\n2 ranks agree: "));
  fxwb_run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", "--ranks", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  fxwb_run_result_clear (&r);
}

/* Runtime estimates (inductor_runtime_and_tensor_meta) appended to copies of rank 0's log for its [0/0]: rank 1's
   within the tolerance of rank 0's, rank 2's collective estimated slower, rank 3's none logged. */
static void
test_runtime (void)
{
  g_autofree char *src_dir = fixture_path ("traces/multirank_gloo-cpu/torch_trace");
  g_autofree char *src = g_build_filename (src_dir, "dedicated_log_torch_trace_rank_0_31_yaj0j.log", NULL);
  g_autofree char *text = NULL;
  g_autofree char *dir = g_build_filename (tmp_dir, "runtime", NULL);
  const double collective_ns[] = { 5000.0, 5100.0, 9000.0 };
  gsize len = 0;

  g_assert_true (g_file_get_contents (src, &text, &len, NULL));
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  for (int rank = 0; rank < 4; rank++)
    {
      g_autofree char *fname = g_strdup_printf ("dedicated_log_torch_trace_rank_%d_rt%d.log", rank, rank);
      g_autofree char *path = g_build_filename (dir, fname, NULL);
      GString *s = g_string_new (text);

      if (rank < 3)
        g_string_append_printf (s, "V1124 15:51:18.600000 852 torch/_inductor/debug.py:1] {\"artifact\": {\"name\": "
                                "\"inductor_runtime_and_tensor_meta\", \"encoding\": \"json\"}, \"rank\": %d, "
                                "\"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": "
                                "\"00000000000000000000000000000000\"}\n"
                                "\t{\"ops\": [{\"name\": \"op0\", \"type\": \"compute\", \"estimated_runtime_ns\": 1000.0, "
                                "\"outputs\": []}, {\"name\": \"op1\", \"type\": \"collective\", "
                                "\"estimated_runtime_ns\": %.1f, \"outputs\": []}]}\n", rank, collective_ns[rank]);
      g_assert_true (g_file_set_contents (path, s->str, (gssize) s->len, NULL));
      g_string_free (s, TRUE);
    }
  g_autofree char *ws = import_folder (dir, "runtime.fxwb");
  fxwb_run_result r = run_fxwb ((const char *[]) { "ls", ws, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_test_message ("%s", r.out);
  g_assert_nonnull (strstr (r.out, "[0/0]      runtime      ranks 2, 3     rank 2: 10.0 us estimated (1 compute, 1 "
                                   "collective ops); rank 0: 6.0 us estimated (1 compute, 1 collective ops) (+67%)\n"));
  /* rank 1's 6.1 us is rank 0's within 5% */
  g_assert_null (strstr (r.out, "runtime      rank 1"));
  g_assert_null (strstr (r.out, "runtime      ranks 1"));
  fxwb_run_result_clear (&r);
  r = run_fxwb ((const char *[]) { "diff", "--ranks", "--json", ws, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.out, "\"kind\": \"runtime\", \"ranks\": \"ranks 2, 3\""));
  fxwb_run_result_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (argc < 2)
    {
      g_printerr ("usage: %s FXWB\n", argv[0]);
      return 2;
    }
  fxwb_path = argv[1];
  tmp_dir = g_dir_make_tmp ("fxwb-ranks-XXXXXX", NULL);
  g_test_add_func ("/ranks/fixture", test_fixture);
  g_test_add_func ("/ranks/rank-ids", test_rank_ids);
  g_test_add_func ("/ranks/edited", test_edited);
  g_test_add_func ("/ranks/agree", test_agree);
  g_test_add_func ("/ranks/runtime", test_runtime);
  int rc = g_test_run ();
  fxwb_test_rm_rf (tmp_dir);
  return rc;
}
