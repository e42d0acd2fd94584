/* fxw-diff-canvas.c: the split view's drawing: graph a on the left, graph b on the right, one row per node pair in
 * the diff's merged order, so matched nodes sit side by side. Edges run as arcs on each graph's outer side. Only the
 * rows in view are drawn (GtkScrollable), so a 100,000-node diff scrolls as fast as a small one. */
#define G_LOG_DOMAIN "fxw-diff-canvas"

#include "fx-config.h"

#include <glib/gi18n.h>
#include <math.h>

#include "fxw-diff-canvas.h"
#include "fxw-viewers.h"

#define ROW_H 30.0
#define BOX_H 24.0
#define GUTTER 48.0
#define EDGE_MARGIN 56.0

struct _FxwDiffCanvas
{
  GtkWidget parent_instance;

  const fx_diff *diff;
  guint n_rows;
  guint selected;
  GHashTable *row_of_a;     /* const fx_node * -> row + 1 */
  GHashTable *row_of_b;
  GtkAdjustment *adjustment[2];             /* by GtkOrientation: GtkScrollable's hadjustment, vadjustment */
  GtkScrollablePolicy scroll_policy[2];
};

/* Horizontal, then vertical: prop_id - PROP_HADJUSTMENT (or PROP_HSCROLL_POLICY) is the GtkOrientation. */
enum
{
  PROP_0,
  PROP_HADJUSTMENT,
  PROP_VADJUSTMENT,
  PROP_HSCROLL_POLICY,
  PROP_VSCROLL_POLICY,
};

enum
{
  SIGNAL_ROW_SELECTED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE_WITH_CODE (FxwDiffCanvas, fxw_diff_canvas, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (GTK_TYPE_SCROLLABLE, NULL))

static double
scroll_y (FxwDiffCanvas *self)
{
  GtkAdjustment *v = self->adjustment[GTK_ORIENTATION_VERTICAL];

  return v ? gtk_adjustment_get_value (v) : 0;
}

static void
column_geometry (FxwDiffCanvas *self, int side, double *x, double *w)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self));
  double col = MAX ((width - GUTTER - 2 * EDGE_MARGIN) / 2, 80);

  *w = col;
  *x = side == 0 ? EDGE_MARGIN : EDGE_MARGIN + col + GUTTER;
}

/* ---------------------------------------------------------------- drawing */

static void
set_rgb (cairo_t *cr, guint32 rgb, double alpha)
{
  cairo_set_source_rgba (cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0, (rgb & 0xff) / 255.0,
                         alpha);
}

static char *
box_text (const fx_node *node)
{
  fx_buf target, shape;
  char *text;

  fx_buf_init (&target);
  fx_buf_init (&shape);
  if (node->op == FX_OP_CALL_FUNCTION || node->op == FX_OP_CALL_METHOD || node->op == FX_OP_CALL_MODULE)
    fx_target_format (&node->target, &target);
  else
    fx_buf_puts (&target, fx_opcode_name (node->op));
  fx_val_annotation (&node->meta.val, false, false, &shape);
  text = g_strdup_printf ("%s  %s  %s", node->name, target.data ? target.data : "", shape.data ? shape.data : "");
  fx_buf_free (&target);
  fx_buf_free (&shape);
  return text;
}

static void
draw_box (cairo_t *cr, PangoLayout *pl, const fx_node *node, double x, double y, double w, guint32 fill,
          gboolean selected)
{
  g_autofree char *text = box_text (node);

  fxw_viewers_rounded_rect (cr, x, y, w, BOX_H, 4);
  set_rgb (cr, fill, 1);
  cairo_fill_preserve (cr);
  if (selected)
    {
      set_rgb (cr, 0x1c71d8, 1);
      cairo_set_line_width (cr, 2.5);
    }
  else
    {
      set_rgb (cr, 0x77767b, 1);
      cairo_set_line_width (cr, 1);
    }
  cairo_stroke (cr);
  pango_layout_set_text (pl, text, -1);
  pango_layout_set_width (pl, (int) ((w - 12) * PANGO_SCALE));
  set_rgb (cr, 0x241f31, 1);
  cairo_move_to (cr, x + 6, y + 5);
  pango_cairo_show_layout (cr, pl);
}

/* The side that has no node of a pair: a dashed outline where its box would be. */
static void
draw_empty_slot (cairo_t *cr, double x, double y, double w)
{
  set_rgb (cr, 0xc0bfbc, 1);
  cairo_set_dash (cr, (double[]) { 3, 3 }, 2, 0);
  fxw_viewers_rounded_rect (cr, x, y, w, BOX_H, 4);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);
}

typedef struct
{
  cairo_t *cr;
  FxwDiffCanvas *self;
  int side;
  double user_y;
  double first, last;  /* visible row range, with slack */
} edge_ctx;

static void
draw_edge_cb (fx_node *input, void *data)
{
  edge_ctx *e = data;
  GHashTable *rows = e->side == 0 ? e->self->row_of_a : e->self->row_of_b;
  guint row = GPOINTER_TO_UINT (g_hash_table_lookup (rows, input));
  double x, w, y0, y1, bulge;

  if (row == 0)
    return;
  column_geometry (e->self, e->side, &x, &w);
  y0 = (row - 1) * ROW_H + BOX_H / 2 + 3 - scroll_y (e->self);
  y1 = e->user_y;
  /* An arc on the column's outer side, deeper for longer edges. */
  bulge = MIN (EDGE_MARGIN - 6, 8 + fabs (y1 - y0) / ROW_H * 3);
  if (e->side == 0)
    {
      cairo_move_to (e->cr, x, y0);
      cairo_curve_to (e->cr, x - bulge, y0, x - bulge, y1, x, y1);
    }
  else
    {
      cairo_move_to (e->cr, x + w, y0);
      cairo_curve_to (e->cr, x + w + bulge, y0, x + w + bulge, y1, x + w, y1);
    }
  cairo_stroke (e->cr);
}

static void
fxw_diff_canvas_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  FxwDiffCanvas *self = FXW_DIFF_CANVAS (widget);
  double width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  double top = scroll_y (self);
  cairo_t *cr;
  PangoLayout *pl;
  PangoFontDescription *fd;
  guint first, last;
  GdkRGBA bg = { 1, 1, 1, 1 };

  gtk_snapshot_append_color (snapshot, &bg, &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (self->diff == NULL || self->n_rows == 0)
    return;
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  pl = pango_cairo_create_layout (cr);
  fd = pango_font_description_from_string ("Monospace 8");
  pango_layout_set_font_description (pl, fd);
  pango_font_description_free (fd);
  pango_layout_set_ellipsize (pl, PANGO_ELLIPSIZE_END);

  first = (guint) MAX (0, floor (top / ROW_H) - 1);
  last = MIN (self->n_rows, (guint) ceil ((top + height) / ROW_H) + 1);

  /* Edges first, under the boxes: each visible node's inputs. */
  cairo_set_line_width (cr, 1);
  for (int side = 0; side < 2; side++)
    {
      edge_ctx e = { cr, self, side, 0, first, last };

      set_rgb (cr, 0x9a9996, 0.8);
      for (guint r = first; r < last; r++)
        {
          const fx_diff_pair *p = &self->diff->pairs[r];
          const fx_node *n = side == 0 ? p->a : p->b;

          if (n == NULL)
            continue;
          e.user_y = r * ROW_H + BOX_H / 2 + 3 - top;
          for (size_t k = 0; k < n->n_args; k++)
            fx_arg_foreach_node (&n->args[k], draw_edge_cb, &e);
          for (size_t k = 0; k < n->n_kwargs; k++)
            fx_arg_foreach_node (&n->kwargs[k].value, draw_edge_cb, &e);
        }
    }

  for (guint r = first; r < last; r++)
    {
      const fx_diff_pair *p = &self->diff->pairs[r];
      double y = r * ROW_H + 3 - top, xa, xb, w;
      gboolean sel = r == self->selected;

      column_geometry (self, 0, &xa, &w);
      column_geometry (self, 1, &xb, &w);
      if (sel)
        {
          set_rgb (cr, 0x99c1f1, 0.35);
          cairo_rectangle (cr, 0, y - 3, width, ROW_H);
          cairo_fill (cr);
        }
      /* The pairing: a line across the gutter, dashed when the pair changed. */
      if (p->a && p->b)
        {
          set_rgb (cr, p->changed ? 0xe5a50a : 0xc0bfbc, 1);
          cairo_set_line_width (cr, 1.5);
          if (p->changed)
            cairo_set_dash (cr, (double[]) { 4, 3 }, 2, 0);
          cairo_move_to (cr, xa + w, y + BOX_H / 2);
          cairo_line_to (cr, xb, y + BOX_H / 2);
          cairo_stroke (cr);
          cairo_set_dash (cr, NULL, 0, 0);
        }
      if (p->a)
        draw_box (cr, pl, p->a, xa, y, w, !p->b ? 0xf6c7c7 : p->changed ? 0xf9f06b : 0xf6f5f4, sel);
      else
        draw_empty_slot (cr, xa, y, w);
      if (p->b)
        draw_box (cr, pl, p->b, xb, y, w, !p->a ? 0xc6f0c2 : p->changed ? 0xf9f06b : 0xf6f5f4, sel);
      else
        draw_empty_slot (cr, xb, y, w);
    }
  g_object_unref (pl);
  cairo_destroy (cr);
}

/* ---------------------------------------------------------------- scrolling */

static void
configure_adjustments (FxwDiffCanvas *self)
{
  double height = gtk_widget_get_height (GTK_WIDGET (self));
  double width = gtk_widget_get_width (GTK_WIDGET (self));
  double content = self->n_rows * ROW_H + 8;
  GtkAdjustment *h = self->adjustment[GTK_ORIENTATION_HORIZONTAL], *v = self->adjustment[GTK_ORIENTATION_VERTICAL];

  if (v)
    gtk_adjustment_configure (v, CLAMP (gtk_adjustment_get_value (v), 0, MAX (0, content - height)), 0,
                              MAX (content, height), ROW_H, height * 0.9, height);
  if (h)
    gtk_adjustment_configure (h, 0, 0, width, 10, width, width);
}

static void
adjustment_changed_cb (FxwDiffCanvas *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
set_adjustment (FxwDiffCanvas *self, GtkAdjustment **slot, GtkAdjustment *adj)
{
  if (*slot == adj)
    return;
  if (*slot)
    {
      g_signal_handlers_disconnect_by_data (*slot, self);
      g_clear_object (slot);
    }
  if (adj)
    {
      *slot = g_object_ref_sink (adj);
      g_signal_connect_swapped (adj, "value-changed", G_CALLBACK (adjustment_changed_cb), self);
    }
  configure_adjustments (self);
}

static void
fxw_diff_canvas_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  configure_adjustments (FXW_DIFF_CANVAS (widget));
}

static void
fxw_diff_canvas_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                         int *minimum_baseline, int *natural_baseline)
{
  FxwDiffCanvas *self = FXW_DIFF_CANVAS (widget);

  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = 300;
      *natural = 900;
    }
  else
    {
      *minimum = 100;
      *natural = (int) CLAMP (self->n_rows * ROW_H + 8, 100, 4000);
    }
}

/* ---------------------------------------------------------------- selection */

static guint
row_at (FxwDiffCanvas *self, double y)
{
  double r = floor ((y + scroll_y (self)) / ROW_H);

  return r >= 0 && r < self->n_rows ? (guint) r : G_MAXUINT;
}

void
fxw_diff_canvas_select_row (FxwDiffCanvas *self, guint row)
{
  g_return_if_fail (FXW_IS_DIFF_CANVAS (self));

  if (row >= self->n_rows)
    row = G_MAXUINT;
  self->selected = row;
  if (row != G_MAXUINT && self->adjustment[GTK_ORIENTATION_VERTICAL])
    {
      GtkAdjustment *v = self->adjustment[GTK_ORIENTATION_VERTICAL];
      double y = row * ROW_H, top = gtk_adjustment_get_value (v);
      double page = gtk_adjustment_get_page_size (v);

      if (y < top || y + ROW_H > top + page)
        gtk_adjustment_set_value (v, MAX (0, y - page / 3));
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_ROW_SELECTED], 0, row);
}

void
fxw_diff_canvas_click (FxwDiffCanvas *self, double x, double y)
{
  guint row = row_at (self, y);
  double col_x, w;
  const fx_diff_pair *p;
  int side;

  if (row == G_MAXUINT)
    return;
  p = &self->diff->pairs[row];
  column_geometry (self, 1, &col_x, &w);
  side = x >= col_x - GUTTER / 2 ? 1 : 0;
  /* A click on a node selects it and its partner (the row); a click on an empty slot selects nothing. */
  if ((side == 0 && p->a == NULL) || (side == 1 && p->b == NULL))
    return;
  gtk_widget_grab_focus (GTK_WIDGET (self));
  fxw_diff_canvas_select_row (self, row);
}

static void
pressed_cb (GtkGestureClick *gesture, int n_press, double x, double y, FxwDiffCanvas *self)
{
  fxw_diff_canvas_click (self, x, y);
}

gboolean
fxw_diff_canvas_select_node (FxwDiffCanvas *self, int side, const char *name)
{
  g_return_val_if_fail (FXW_IS_DIFF_CANVAS (self), FALSE);

  for (guint r = 0; r < self->n_rows; r++)
    {
      const fx_node *n = side == 0 ? self->diff->pairs[r].a : self->diff->pairs[r].b;

      if (n != NULL && g_strcmp0 (n->name, name) == 0)
        {
          fxw_diff_canvas_select_row (self, r);
          return TRUE;
        }
    }
  return FALSE;
}

guint
fxw_diff_canvas_select_change (FxwDiffCanvas *self, int direction)
{
  guint start;

  g_return_val_if_fail (FXW_IS_DIFF_CANVAS (self), G_MAXUINT);
  if (self->n_rows == 0)
    return G_MAXUINT;
  start = self->selected != G_MAXUINT ? self->selected : (direction > 0 ? self->n_rows - 1 : 0);
  for (guint step = 1; step <= self->n_rows; step++)
    {
      guint r = direction > 0 ? (start + step) % self->n_rows : (start + self->n_rows - step % self->n_rows) % self->n_rows;

      if (self->diff->pairs[r].changed)
        {
          fxw_diff_canvas_select_row (self, r);
          return r;
        }
    }
  return G_MAXUINT;
}

static gboolean
key_pressed_cb (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state, FxwDiffCanvas *self)
{
  /* n / p: next and previous change, as in a pager over a diff. */
  if (keyval == GDK_KEY_n || keyval == GDK_KEY_N)
    return fxw_diff_canvas_select_change (self, keyval == GDK_KEY_n ? +1 : -1), TRUE;
  if (keyval == GDK_KEY_p)
    return fxw_diff_canvas_select_change (self, -1), TRUE;
  return FALSE;
}

gboolean
fxw_diff_canvas_get_box_center (FxwDiffCanvas *self, guint row, int side, double *x, double *y)
{
  double col_x, w;
  const fx_diff_pair *p;

  if (row >= self->n_rows)
    return FALSE;
  p = &self->diff->pairs[row];
  if ((side == 0 && !p->a) || (side == 1 && !p->b))
    return FALSE;
  column_geometry (self, side, &col_x, &w);
  *x = col_x + w / 2;
  *y = row * ROW_H + 3 + BOX_H / 2 - scroll_y (self);
  return TRUE;
}

/* ---------------------------------------------------------------- the diff */

void
fxw_diff_canvas_set_diff (FxwDiffCanvas *self, const fx_diff *diff)
{
  g_return_if_fail (FXW_IS_DIFF_CANVAS (self));

  self->diff = diff;
  self->n_rows = diff != NULL ? (guint) diff->n_pairs : 0;
  self->selected = G_MAXUINT;
  g_hash_table_remove_all (self->row_of_a);
  g_hash_table_remove_all (self->row_of_b);
  for (guint r = 0; r < self->n_rows; r++)
    {
      if (diff->pairs[r].a)
        g_hash_table_insert (self->row_of_a, (gpointer) diff->pairs[r].a, GUINT_TO_POINTER (r + 1));
      if (diff->pairs[r].b)
        g_hash_table_insert (self->row_of_b, (gpointer) diff->pairs[r].b, GUINT_TO_POINTER (r + 1));
    }
  if (self->adjustment[GTK_ORIENTATION_VERTICAL])
    gtk_adjustment_set_value (self->adjustment[GTK_ORIENTATION_VERTICAL], 0);
  configure_adjustments (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

guint
fxw_diff_canvas_get_n_rows (FxwDiffCanvas *self)
{
  g_return_val_if_fail (FXW_IS_DIFF_CANVAS (self), 0);
  return self->n_rows;
}

guint
fxw_diff_canvas_get_selected (FxwDiffCanvas *self)
{
  g_return_val_if_fail (FXW_IS_DIFF_CANVAS (self), G_MAXUINT);
  return self->selected;
}

const fx_diff_pair *
fxw_diff_canvas_get_pair (FxwDiffCanvas *self, guint row)
{
  g_return_val_if_fail (FXW_IS_DIFF_CANVAS (self), NULL);
  return row < self->n_rows ? &self->diff->pairs[row] : NULL;
}

/* ---------------------------------------------------------------- life cycle */

static void
fxw_diff_canvas_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  FxwDiffCanvas *self = FXW_DIFF_CANVAS (object);

  switch (prop_id)
    {
    case PROP_HADJUSTMENT:
    case PROP_VADJUSTMENT:
      g_value_set_object (value, self->adjustment[prop_id - PROP_HADJUSTMENT]);
      break;
    case PROP_HSCROLL_POLICY:
    case PROP_VSCROLL_POLICY:
      g_value_set_enum (value, self->scroll_policy[prop_id - PROP_HSCROLL_POLICY]);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fxw_diff_canvas_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  FxwDiffCanvas *self = FXW_DIFF_CANVAS (object);

  switch (prop_id)
    {
    case PROP_HADJUSTMENT:
    case PROP_VADJUSTMENT:
      set_adjustment (self, &self->adjustment[prop_id - PROP_HADJUSTMENT], g_value_get_object (value));
      break;
    case PROP_HSCROLL_POLICY:
    case PROP_VSCROLL_POLICY:
      self->scroll_policy[prop_id - PROP_HSCROLL_POLICY] = g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fxw_diff_canvas_dispose (GObject *object)
{
  FxwDiffCanvas *self = FXW_DIFF_CANVAS (object);

  for (guint o = 0; o < G_N_ELEMENTS (self->adjustment); o++)
    set_adjustment (self, &self->adjustment[o], NULL);
  g_clear_pointer (&self->row_of_a, g_hash_table_unref);
  g_clear_pointer (&self->row_of_b, g_hash_table_unref);
  self->diff = NULL;
  G_OBJECT_CLASS (fxw_diff_canvas_parent_class)->dispose (object);
}

static void
fxw_diff_canvas_class_init (FxwDiffCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fxw_diff_canvas_dispose;
  object_class->get_property = fxw_diff_canvas_get_property;
  object_class->set_property = fxw_diff_canvas_set_property;
  widget_class->snapshot = fxw_diff_canvas_snapshot;
  widget_class->measure = fxw_diff_canvas_measure;
  widget_class->size_allocate = fxw_diff_canvas_size_allocate;

  g_object_class_override_property (object_class, PROP_HADJUSTMENT, "hadjustment");
  g_object_class_override_property (object_class, PROP_VADJUSTMENT, "vadjustment");
  g_object_class_override_property (object_class, PROP_HSCROLL_POLICY, "hscroll-policy");
  g_object_class_override_property (object_class, PROP_VSCROLL_POLICY, "vscroll-policy");

  /**
   * FxwDiffCanvas::row-selected:
   * @row: the selected row, G_MAXUINT for none
   */
  signals[SIGNAL_ROW_SELECTED] = g_signal_new ("row-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  gtk_widget_class_set_css_name (widget_class, "fxw-diff-canvas");
}

static void
fxw_diff_canvas_init (FxwDiffCanvas *self)
{
  GtkGesture *click = gtk_gesture_click_new ();

  self->selected = G_MAXUINT;
  self->row_of_a = g_hash_table_new (NULL, NULL);
  self->row_of_b = g_hash_table_new (NULL, NULL);
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_PRIMARY);
  g_signal_connect (click, "pressed", G_CALLBACK (pressed_cb), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  {
    GtkEventController *key = gtk_event_controller_key_new ();

    g_signal_connect (key, "key-pressed", G_CALLBACK (key_pressed_cb), self);
    gtk_widget_add_controller (GTK_WIDGET (self), key);
  }
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);
}
