/* test-deep-input.c: thousands of nested brackets, parentheses, unary signs, JSON lists and provenance chains are
   located parse errors in the FX code parser, the graph JSON reader and the TORCH_TRACE importer, never a stack
   overflow; nesting just under the limits still parses, prints and round-trips. */
#include <glib.h>
#include <string.h>

#include "fx/importers.h"
#include "fx/pyparse.h"

#define DEEP 5000

static char *
repeat (const char *unit, int n)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; i < n; i++)
    g_string_append (s, unit);
  return g_string_free (s, FALSE);
}

static char *
fx_code_with_arg (const char *open, const char *inner, const char *close, int n)
{
  char *o = repeat (open, n), *c = repeat (close, n);
  char *code = g_strdup_printf ("class GraphModule(torch.nn.Module):\n"
                                "    def forward(self, x: \"f32[4]\"):\n"
                                "        add: \"f32[4]\" = torch.ops.aten.add.Tensor(x, %s%s%s)\n"
                                "        return (add,)\n", o, inner, c);
  g_free (o);
  g_free (c);
  return code;
}

static void
assert_fx_code_error (char *code, const char *words)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_parse_fx_code (code, strlen (code), "deep.py", &g, &diag), ==, FX_ERR_PARSE);
  g_assert_null (g);
  g_test_message ("%d:%d: %s", diag.line, diag.col, diag.message);
  g_assert_cmpint (diag.line, ==, 3);
  g_assert_cmpint (diag.col, >, 40);
  g_assert_nonnull (strstr (diag.message, words));
  g_free (code);
}

static void
test_fx_code_deep (void)
{
  assert_fx_code_error (fx_code_with_arg ("[", "1", "]", DEEP), "nested too deeply");
  assert_fx_code_error (fx_code_with_arg ("(", "1", ")", DEEP), "nested too deeply");
  assert_fx_code_error (fx_code_with_arg ("{1: ", "1", "}", DEEP), "nested too deeply");
  assert_fx_code_error (fx_code_with_arg ("-", "1", "", 4 * DEEP), "nested too deeply");
}

static void
test_fx_code_deep_but_allowed (void)
{
  /* under the limit: a graph that prints and parses back */
  char *code = fx_code_with_arg ("[", "1", "]", 150);
  fx_graph *g = NULL;
  fx_diag diag;
  if (fx_parse_fx_code (code, strlen (code), "deep.py", &g, &diag) != FX_OK)
    g_error ("150 nested lists: %s", diag.message);
  fx_buf b;
  fx_buf_init (&b);
  fx_graph_to_json (g, &b);
  fx_graph *again = NULL;
  /* the JSON reader's own limit is lower than the parser's: either it reads back or it says why */
  fx_status st = fx_graph_from_json (b.data, b.len, &again, &diag);
  if (st != FX_OK)
    g_assert_nonnull (strstr (diag.message, "deep"));
  else
    fx_graph_free (again);
  fx_buf_free (&b);
  fx_graph_free (g);
  g_free (code);
}

static void
assert_json_error (char *text, const char *words)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_graph_from_json (text, strlen (text), &g, &diag), ==, FX_ERR_PARSE);
  g_assert_null (g);
  g_test_message ("%d:%d: %s", diag.line, diag.col, diag.message);
  g_assert_cmpint (diag.line, ==, 1);
  g_assert_cmpint (diag.col, >, 1);
  g_assert_nonnull (strstr (diag.message, words));
  g_free (text);
}

static void
test_json_deep (void)
{
  char *o = repeat ("[", 4 * DEEP), *c = repeat ("]", 4 * DEEP);
  assert_json_error (g_strdup_printf ("{\"format\": \"fxwb-graph\", \"version\": 1, \"nodes\": %s%s}", o, c),
                     "nesting too deep");
  g_free (o);
  g_free (c);
  o = repeat ("{\"a\": ", 4 * DEEP);
  c = repeat ("}", 4 * DEEP);
  assert_json_error (g_strdup_printf ("{\"format\": \"fxwb-graph\", \"version\": 1, \"x\": %s1%s}", o, c),
                     "nesting too deep");
  g_free (o);
  g_free (c);
  o = repeat ("{\"list\": [", DEEP);
  c = repeat ("]}", DEEP);
  assert_json_error (g_strdup_printf ("{\"format\": \"fxwb-graph\", \"version\": 1, \"nodes\": [{\"name\": \"x\", "
                                      "\"op\": \"placeholder\", \"target\": {\"kind\": \"str\", \"name\": \"x\"}}, "
                                      "{\"name\": \"o\", \"op\": \"output\", \"target\": {\"kind\": \"str\", "
                                      "\"name\": \"output\"}, \"args\": [%s{\"node\": \"x\"}%s]}]}", o, c),
                     "nesting too deep");
  g_free (o);
  g_free (c);
}

static void
test_trace_deep (void)
{
  fx_store *store = NULL;
  g_assert_cmpint (fx_store_open (":memory:", true, &store, NULL), ==, FX_OK);
  char *o = repeat ("{\"a\": ", 4 * DEEP), *c = repeat ("}", 4 * DEEP);
  char *lists = fx_code_with_arg ("[", "1", "]", DEEP);
  GString *log = g_string_new ("V1121 16:41:15.900000 1273 torch/_dynamo/convert_frame.py:1000] {\"dynamo_start\": "
                               "{\"stack\": []}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n");
  g_string_append_printf (log, "V1121 16:41:15.927000 1273 torch/_dynamo/output_graph.py:2423] {\"dynamo_output_graph\":"
                          " %s1%s, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n", o, c);
  g_string_append (log, "V1121 16:41:15.927000 1273 torch/_dynamo/output_graph.py:2423] {\"dynamo_output_graph\": "
                   "{\"sizes\": {}}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": "
                   "\"0\"}\n");
  for (char *line = strtok (lists, "\n"); line; line = strtok (NULL, "\n"))
    g_string_append_printf (log, "\t%s\n", line);
  fx_import_stats stats;
  fx_diag diag;
  fx_diag_clear (&diag);
  g_assert_cmpint (fx_import_torch_trace_data (store, "deep.log", log->str, log->len, NULL, NULL, &stats, &diag), ==,
                   FX_OK);
  /* both deep records are skipped with a warning; the frame itself is imported */
  int64_t warnings = 0;
  for (int i = 0; i < FX_IMPORT_WARN_COUNT; i++)
    warnings += stats.warnings[i];
  g_assert_cmpint (warnings, >=, 2);
  g_assert_cmpint (stats.frames, ==, 1);
  g_string_free (log, TRUE);
  g_free (lists);
  g_free (o);
  g_free (c);
  fx_store_close (store);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/deep-input/fx-code", test_fx_code_deep);
  g_test_add_func ("/deep-input/fx-code-under-limit", test_fx_code_deep_but_allowed);
  g_test_add_func ("/deep-input/json", test_json_deep);
  g_test_add_func ("/deep-input/trace", test_trace_deep);
  return g_test_run ();
}
