/* fx-print-tabular.c: Graph.print_tabular (python-tabulate "simple") and Graph.__str__ (Node.format_node). */
#include "fx-print-impl.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- print_tabular */

enum { N_COLS = 5 };

typedef struct
{
  size_t off;
  size_t len;
} cell_span;

/* Appends one cell to text and records it, stripped as tabulate strips string cells (PRESERVE_WHITESPACE off). */
static void
cell_finish (fx_buf *text, size_t start, cell_span *span, size_t *width)
{
  size_t a = start, b = text->len;
  while (a < b && fx_print_is_space ((unsigned char) text->data[a]))
    a++;
  while (b > a && fx_print_is_space ((unsigned char) text->data[b - 1]))
    b--;
  span->off = a;
  span->len = b - a;
  size_t w = fx_print_width (text->data + a, b - a);
  if (w > *width)
    *width = w;
}

static void
put_padded (fx_buf *out, const char *s, size_t len, size_t width)
{
  fx_buf_append (out, s, len);
  for (size_t w = fx_print_width (s, len); w < width; w++)
    fx_buf_putc (out, ' ');
}

/* tabulate's _build_simple_row: cells joined by two spaces, then rstrip(). */
static void
row_end (fx_buf *out, size_t row_start)
{
  while (out->len > row_start && out->data[out->len - 1] == ' ')
    out->len--;
  out->data[out->len] = '\0';
}

/* print(tabulate(node_specs, headers=["opcode", "name", "target", "args", "kwargs"])): every cell is str() of
   its object; all columns are text (left aligned); a column is as wide as its widest cell and at least its
   header plus MIN_PADDING (2); no line above or below when headers are given. */
void
fx_graph_print_tabular (const fx_graph *graph, fx_buf *out)
{
  static const char *headers[N_COLS] = { "opcode", "name", "target", "args", "kwargs" };
  size_t width[N_COLS];
  size_t n = 0;
  fx_buf text;
  cell_span *cells;

  for (int c = 0; c < N_COLS; c++)
    width[c] = strlen (headers[c]) + 2;
  fx_graph_foreach_node (graph, node)
    n++;
  cells = calloc (n ? n * N_COLS : 1, sizeof *cells);
  if (cells == NULL)
    abort ();
  fx_buf_init (&text);

  size_t r = 0;
  fx_graph_foreach_node (graph, node)
    {
      cell_span *row = cells + r * N_COLS;
      size_t start;

      start = text.len;
      fx_buf_puts (&text, fx_opcode_name (node->op));
      cell_finish (&text, start, &row[0], &width[0]);

      start = text.len;
      fx_buf_puts (&text, node->name);
      cell_finish (&text, start, &row[1], &width[1]);

      start = text.len;
      fx_print_target_str (&node->target, &text);
      cell_finish (&text, start, &row[2], &width[2]);

      /* str(n.args): a tuple */
      start = text.len;
      fx_arg args = fx_arg_tuple (node->args, node->n_args);
      fx_arg_repr (&args, FX_REPR_PY, &text);
      cell_finish (&text, start, &row[3], &width[3]);

      /* str(n.kwargs): a dict with quoted keys */
      start = text.len;
      fx_buf_putc (&text, '{');
      for (size_t i = 0; i < node->n_kwargs; i++)
        {
          if (i > 0)
            fx_buf_puts (&text, ", ");
          fx_py_str_repr (node->kwargs[i].name, &text);
          fx_buf_puts (&text, ": ");
          fx_arg_repr (&node->kwargs[i].value, FX_REPR_PY, &text);
        }
      fx_buf_putc (&text, '}');
      cell_finish (&text, start, &row[4], &width[4]);
      r++;
    }

  fx_buf_reserve (out, text.len + (n + 2) * (N_COLS * 2 + 1) + 64);
  size_t row_start = out->len;
  for (int c = 0; c < N_COLS; c++)
    {
      if (c > 0)
        fx_buf_puts (out, "  ");
      put_padded (out, headers[c], strlen (headers[c]), width[c]);
    }
  row_end (out, row_start);
  fx_buf_putc (out, '\n');
  for (int c = 0; c < N_COLS; c++)
    {
      if (c > 0)
        fx_buf_puts (out, "  ");
      for (size_t i = 0; i < width[c]; i++)
        fx_buf_putc (out, '-');
    }
  for (size_t i = 0; i < n; i++)
    {
      fx_buf_putc (out, '\n');
      row_start = out->len;
      for (int c = 0; c < N_COLS; c++)
        {
          cell_span *cell = &cells[i * N_COLS + c];
          if (c > 0)
            fx_buf_puts (out, "  ");
          put_padded (out, text.data + cell->off, cell->len, width[c]);
        }
      row_end (out, row_start);
    }
  /* print() ends the table with a newline */
  fx_buf_putc (out, '\n');
  fx_buf_free (&text);
  free (cells);
}

/* ---------------------------------------------------------------- Graph.__str__ */

static void
format_args_tuple (const fx_node *node, fx_buf *out)
{
  fx_arg args = fx_arg_tuple (node->args, node->n_args);
  fx_arg_repr (&args, FX_REPR_FORMAT, out);
}

static void
format_kwargs_dict (const fx_node *node, fx_buf *out)
{
  fx_buf_putc (out, '{');
  for (size_t i = 0; i < node->n_kwargs; i++)
    {
      if (i > 0)
        fx_buf_puts (out, ", ");
      fx_buf_printf (out, "%s: ", node->kwargs[i].name);
      fx_arg_repr (&node->kwargs[i].value, FX_REPR_FORMAT, out);
    }
  fx_buf_putc (out, '}');
}

/* Node.format_node. Graph.__str__ passes an empty placeholder list, so placeholders print as body lines. */
static void
format_node (const fx_node *node, fx_buf *out)
{
  const char *type = node->type_expr;

  switch (node->op)
    {
    case FX_OP_PLACEHOLDER:
      fx_buf_printf (out, "%%%s : ", node->name);
      if (type != NULL && type[0] != '\0')
        fx_buf_printf (out, "%s ", type);
      fx_buf_printf (out, "[num_users=%zu] = placeholder[target=%s]", node->n_users, node->target.name);
      if (node->default_value != NULL || node->n_args > 0)
        {
          fx_buf_puts (out, "(default=");
          fx_print_arg_str (node->default_value ? node->default_value : &node->args[0], out);
          fx_buf_putc (out, ')');
        }
      break;
    case FX_OP_OUTPUT:
      fx_buf_puts (out, "return ");
      if (node->n_args > 0)
        fx_print_arg_str (&node->args[0], out);
      else
        fx_buf_puts (out, "None");
      break;
    case FX_OP_GET_ATTR:
      fx_buf_printf (out, "%%%s : ", node->name);
      if (type != NULL)
        fx_buf_printf (out, "%s ", type);
      fx_buf_printf (out, "[num_users=%zu] = get_attr[target=", node->n_users);
      fx_target_format (&node->target, out);
      fx_buf_putc (out, ']');
      break;
    case FX_OP_CALL_FUNCTION:
    case FX_OP_CALL_METHOD:
    case FX_OP_CALL_MODULE:
    case FX_OPCODE_COUNT:
    default:
      fx_buf_printf (out, "%%%s : ", node->name);
      if (type != NULL)
        fx_buf_printf (out, "%s ", type);
      fx_buf_printf (out, "[num_users=%zu] = %s[target=", node->n_users, fx_opcode_name (node->op));
      fx_target_format (&node->target, out);
      fx_buf_puts (out, "](args = ");
      format_args_tuple (node, out);
      fx_buf_puts (out, ", kwargs = ");
      format_kwargs_dict (node, out);
      fx_buf_putc (out, ')');
      break;
    }
}

/* Graph.__str__: "graph():" then "\n    " + format_node(node) per node; no trailing newline. */
void
fx_graph_print_str (const fx_graph *graph, fx_buf *out)
{
  fx_buf_puts (out, "graph():");
  fx_graph_foreach_node (graph, node)
    {
      fx_buf_puts (out, "\n    ");
      format_node (node, out);
    }
}
