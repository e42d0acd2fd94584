/* fuzz-fxcode.c: libFuzzer target for the FX Python code parser and the printers that read what it builds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx/passes.h"
#include "fx/pyparse.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
print_all (const fx_graph *g)
{
  fx_buf b;
  fx_readable_opts opts = { true, true, false };

  fx_buf_init (&b);
  fx_graph_print_readable (g, &opts, &b);
  fx_graph_print_tabular (g, &b);
  fx_graph_print_code (g, &b);
  fx_graph_print_str (g, &b);
  fx_buf_free (&b);
}

/* print_readable's text must parse back and print the same again. Skipped where the printers follow Python
   faithfully into text that is not code: non-ASCII names and strings (Python's unicode identifiers and
   surrogate escapes), outputs holding anything but nodes, in any child module too (generate_output uses
   repr()), and op objects as argument values (see holds_op_object). */
static bool
outputs_nodes (const fx_graph *g)
{
  fx_node *out = fx_graph_output_node (g);
  if (out == NULL || out->n_args != 1)
    return false;
  /* and every child module's graph (print_readable prints them below, with the same repr() of their outputs) */
  for (size_t i = 0; i < g->n_children; i++)
    if (g->children[i].graph != NULL && !outputs_nodes (g->children[i].graph))
      return false;
  const fx_arg *a = &out->args[0];
  if (a->kind == FX_ARG_TUPLE || a->kind == FX_ARG_LIST)
    {
      for (size_t i = 0; i < a->u.seq.n; i++)
        if (a->u.seq.items[i].kind != FX_ARG_NODE && a->u.seq.items[i].kind != FX_ARG_NONE)
          return false;
    }
  else if (a->kind != FX_ARG_NODE && a->kind != FX_ARG_NONE)
    return false;
  return true;
}

/* An op object as an argument value (torch.ops.higher_order.cond inside a dict): print_readable writes its str(),
   the bare "cond", as PyTorch's repr of the container does; that is not code either. */
static bool
holds_op_object (const fx_arg *a)
{
  switch (a->kind)
    {
    case FX_ARG_GLOBAL:
      return a->u.s != NULL && strncmp (a->u.s, "torch.ops.", 10) == 0;
    case FX_ARG_LIST:
    case FX_ARG_TUPLE:
    case FX_ARG_SLICE:
      for (size_t i = 0; i < a->u.seq.n; i++)
        if (holds_op_object (&a->u.seq.items[i]))
          return true;
      return false;
    case FX_ARG_DICT:
      for (size_t i = 0; i < a->u.dict.n; i++)
        if (holds_op_object (&a->u.dict.items[i].key) || holds_op_object (&a->u.dict.items[i].value))
          return true;
      return false;
    default:
      return false;
    }
}

static bool
args_are_code (const fx_graph *g)
{
  for (const fx_node *n = g->first; n; n = n->next)
    {
      for (size_t i = 0; i < n->n_args; i++)
        if (holds_op_object (&n->args[i]))
          return false;
      for (size_t i = 0; i < n->n_kwargs; i++)
        if (holds_op_object (&n->kwargs[i].value))
          return false;
    }
  for (size_t i = 0; i < g->n_children; i++)
    if (g->children[i].graph != NULL && !args_are_code (g->children[i].graph))
      return false;
  return true;
}

static bool
round_trips (const uint8_t *data, size_t size, const fx_graph *g)
{
  for (size_t i = 0; i < size; i++)
    if (data[i] >= 0x80)
      return false;
  return outputs_nodes (g) && args_are_code (g);
}

static void
check_round_trip (const fx_graph *g)
{
  fx_readable_opts opts;
  fx_buf first, second;
  fx_graph *again = NULL;
  fx_diag diag;

  fx_parse_readable_opts (g, &opts);
  fx_buf_init (&first);
  fx_buf_init (&second);
  fx_graph_print_readable (g, &opts, &first);
  if (fx_parse_fx_code (first.data, first.len, "printed.py", &again, &diag) != FX_OK)
    {
      char msg[4096];
      fx_diag_format (&diag, msg, sizeof msg);
      fprintf (stderr, "print_readable's output does not parse:\n%s\n%s\n", msg, first.data);
      abort ();
    }
  fx_graph_print_readable (again, &opts, &second);
  if (strcmp (first.data, second.data) != 0)
    {
      fprintf (stderr, "parse(print_readable(g)) prints differently:\n%s\n---\n%s\n", first.data, second.data);
      abort ();
    }
  fx_graph_free (again);
  fx_buf_free (&first);
  fx_buf_free (&second);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fx_graph *g = NULL;
  fx_diag diag;
  char text[4096];

  /* Anything goes in: a located error or a graph that verifies and prints, never a crash or a hang. */
  if (fx_parse_fx_code ((const char *) data, size, "fuzz.py", &g, &diag) == FX_OK)
    {
      if (g == NULL || fx_graph_verify (g, NULL) != FX_OK)
        abort ();
      print_all (g);
      if (round_trips (data, size, g))
        check_round_trip (g);
      /* shapes from the annotations through every op's meta function: hostile sizes are errors, not overflows */
      size_t changed = 0;
      fx_graph_resolve_ops (g);
      fx_pass_shape_prop (g, &changed, &diag);
      fx_graph_free (g);
    }
  else
    {
      if (g != NULL || diag.line < 0)
        abort ();
      fx_diag_format (&diag, text, sizeof text);
    }
  return 0;
}
