/* fx-cuda-graph.c: CUDA graph capture of a stream's work, instantiation and replay, for reduce-overhead; memory
   allocated during a capture comes from a pool the graph keeps for as long as it lives. */
#include "fx-cuda-impl.h"

#include <stdlib.h>

#define CU (fx_cuda_libs_driver ()->cu)

struct fx_cuda_graph
{
  fx_cuda *cuda;
  fx_CUgraph graph;
  fx_CUgraphExec exec;
  fx_cuda_pool *pool;
  size_t n_nodes;
};

fx_status
fx_cuda_graph_capture_begin (fx_cuda_stream *stream, fx_diag *diag)
{
  fx_cuda *cuda = stream->cuda;
  fx_cuda_pool *pool;
  fx_CUresult res;
  fx_status st;

  if (stream->capture_pool)
    return fx_diag_set (diag, FX_ERR_INVALID, "a capture is already under way on this stream");
  if ((pool = fx_cuda_enter_alloc (cuda, sizeof *pool, &st, diag)) == NULL)
    return st;
  /* Relaxed: the allocator may still call cuMemAlloc while the capture runs (a graph's first allocations). */
  res = CU.cuStreamBeginCapture (stream->stream, FX_CU_STREAM_CAPTURE_MODE_RELAXED);
  if (res != FX_CUDA_SUCCESS)
    {
      free (pool);
      return fx_cuda_check (res, "cuStreamBeginCapture", diag);
    }
  pthread_mutex_lock (&cuda->alloc.lock);
  stream->capture_pool = pool;
  pthread_mutex_unlock (&cuda->alloc.lock);
  return FX_OK;
}

fx_status
fx_cuda_graph_capture_end (fx_cuda_stream *stream, fx_cuda_graph **out, fx_diag *diag)
{
  fx_cuda *cuda = stream->cuda;
  fx_cuda_graph *g;
  fx_cuda_pool *pool = stream->capture_pool;
  fx_CUresult res;
  fx_status st;

  *out = NULL;
  if (!pool)
    return fx_diag_set (diag, FX_ERR_INVALID, "no capture under way on this stream");
  if ((st = fx_cuda_enter (cuda, diag)) != FX_OK)
    return st;
  pthread_mutex_lock (&cuda->alloc.lock);
  stream->capture_pool = NULL;
  pthread_mutex_unlock (&cuda->alloc.lock);

  g = calloc (1, sizeof *g);
  if (!g)
    {
      fx_CUgraph discard = NULL;
      CU.cuStreamEndCapture (stream->stream, &discard);
      if (discard)
        CU.cuGraphDestroy (discard);
      fx_cuda_pool_release (cuda, pool);
      free (pool);
      return fx_diag_set (diag, FX_ERR_NOMEM, "out of host memory");
    }
  g->cuda = cuda;
  g->pool = pool;
  /* An operation that is illegal during capture invalidates it; the error shows here. */
  res = CU.cuStreamEndCapture (stream->stream, &g->graph);
  if (res != FX_CUDA_SUCCESS)
    {
      st = fx_cuda_check (res, "cuStreamEndCapture (the captured work used an operation a graph cannot hold)",
                          diag);
      fx_cuda_graph_free (g);
      return st;
    }
  res = CU.cuGraphGetNodes (g->graph, NULL, &g->n_nodes);
  if (res != FX_CUDA_SUCCESS)
    g->n_nodes = 0;
  res = CU.cuGraphInstantiateWithFlags (&g->exec, g->graph, 0);
  if (res != FX_CUDA_SUCCESS)
    {
      st = fx_cuda_check (res, "cuGraphInstantiateWithFlags", diag);
      fx_cuda_graph_free (g);
      return st;
    }
  *out = g;
  return FX_OK;
}

fx_status
fx_cuda_graph_replay (fx_cuda_graph *graph, fx_cuda_stream *stream, fx_diag *diag)
{
  fx_cuda_stream *s = fx_cuda_stream_or_default (graph->cuda, stream);

  FX_CU_ENTER_TRY (graph->cuda, CU.cuGraphLaunch (graph->exec, s->stream), "cuGraphLaunch", diag);
  return FX_OK;
}

size_t
fx_cuda_graph_node_count (const fx_cuda_graph *graph)
{
  return graph->n_nodes;
}

void
fx_cuda_graph_free (fx_cuda_graph *graph)
{
  if (!graph)
    return;
  if (fx_cuda_enter (graph->cuda, NULL) == FX_OK)
    {
      /* A replay may still be running: the pool's memory must outlive it. */
      CU.cuCtxSynchronize ();
      if (graph->exec)
        CU.cuGraphExecDestroy (graph->exec);
      if (graph->graph)
        CU.cuGraphDestroy (graph->graph);
    }
  if (graph->pool)
    {
      fx_cuda_pool_release (graph->cuda, graph->pool);
      free (graph->pool);
    }
  free (graph);
}
