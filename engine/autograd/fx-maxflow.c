/* fx-maxflow.c: Dinic's max-flow over double capacities (INFINITY allowed), for the min-cut partitioner. */
#include "fx-autograd-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct fx_flow
{
  int n;
  int *head;            /* first edge of each vertex, -1: none */
  int *next, *to;       /* per edge */
  double *cap;          /* residual capacity per edge; edge e ^ 1 is its reverse */
  int n_edges, edges_cap;
  int *level, *iter, *queue;
};

fx_flow *
fx_flow_new (int n_vertices)
{
  fx_flow *f = calloc (1, sizeof *f);
  if (f == NULL)
    return NULL;
  f->n = n_vertices;
  f->head = malloc (sizeof (int) * (size_t) n_vertices);
  f->level = malloc (sizeof (int) * (size_t) n_vertices);
  f->iter = malloc (sizeof (int) * (size_t) n_vertices);
  f->queue = malloc (sizeof (int) * (size_t) n_vertices);
  if (!f->head || !f->level || !f->iter || !f->queue)
    {
      fx_flow_free (f);
      return NULL;
    }
  memset (f->head, -1, sizeof (int) * (size_t) n_vertices);
  return f;
}

void
fx_flow_free (fx_flow *f)
{
  if (f == NULL)
    return;
  free (f->head);
  free (f->next);
  free (f->to);
  free (f->cap);
  free (f->level);
  free (f->iter);
  free (f->queue);
  free (f);
}

static bool
grow (fx_flow *f)
{
  int nc = f->edges_cap ? f->edges_cap * 2 : 64;
  int *nx = realloc (f->next, sizeof (int) * (size_t) nc);
  if (nx)
    f->next = nx;
  int *to = realloc (f->to, sizeof (int) * (size_t) nc);
  if (to)
    f->to = to;
  double *cp = realloc (f->cap, sizeof (double) * (size_t) nc);
  if (cp)
    f->cap = cp;
  if (!nx || !to || !cp)
    return false;
  f->edges_cap = nc;
  return true;
}

bool
fx_flow_add_edge (fx_flow *f, int u, int v, double cap)
{
  if (f->n_edges + 2 > f->edges_cap && !grow (f))
    return false;
  int e = f->n_edges;
  f->to[e] = v, f->cap[e] = cap, f->next[e] = f->head[u], f->head[u] = e;
  f->to[e + 1] = u, f->cap[e + 1] = 0, f->next[e + 1] = f->head[v], f->head[v] = e + 1;
  f->n_edges += 2;
  return true;
}

static bool
bfs (fx_flow *f, int s, int t)
{
  for (int i = 0; i < f->n; i++)
    f->level[i] = -1;
  int qh = 0, qt = 0;
  f->level[s] = 0;
  f->queue[qt++] = s;
  while (qh < qt)
    {
      int u = f->queue[qh++];
      for (int e = f->head[u]; e >= 0; e = f->next[e])
        if (f->cap[e] > 0 && f->level[f->to[e]] < 0)
          {
            f->level[f->to[e]] = f->level[u] + 1;
            f->queue[qt++] = f->to[e];
          }
    }
  return f->level[t] >= 0;
}

static double
dfs (fx_flow *f, int u, int t, double pushed)
{
  if (u == t)
    return pushed;
  for (; f->iter[u] >= 0; f->iter[u] = f->next[f->iter[u]])
    {
      int e = f->iter[u], v = f->to[e];
      if (f->cap[e] <= 0 || f->level[v] != f->level[u] + 1)
        continue;
      double d = dfs (f, v, t, fmin (pushed, f->cap[e]));
      if (d > 0)
        {
          f->cap[e] -= d;
          f->cap[e ^ 1] += d;
          return d;
        }
    }
  return 0;
}

double
fx_flow_max (fx_flow *f, int s, int t)
{
  double total = 0;
  while (bfs (f, s, t))
    {
      memcpy (f->iter, f->head, sizeof (int) * (size_t) f->n);
      double d;
      while ((d = dfs (f, s, t, INFINITY)) > 0)
        {
          total += d;
          if (isinf (d))
            return INFINITY;
        }
    }
  return total;
}

bool
fx_flow_source_side (const fx_flow *f, int v)
{
  /* after fx_flow_max the last BFS leaves level >= 0 exactly on the vertices the source still reaches */
  return f->level[v] >= 0;
}
