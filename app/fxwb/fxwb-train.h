/* fxwb-train.h: training graphs in the CLI: the joint graph and its partition of a graph (`fxwb compile --train`)
   and training steps per backend (`fxwb compare --train`). */
#pragma once

#include "fxwb-runs.h"

#include "fx/autograd.h"

typedef struct
{
  fx_graph *joint;
  fx_partition part;
} fxwb_train;

/* Joint graph and partition of a graph (lowered to ATen first when it is torch-level; a joint graph, primals_N and
   tangents_N in, is partitioned as it is). */
int fxwb_train_prepare (const char *cmd, const fx_graph *graph, fx_partition_kind kind, fxwb_train *t);
void fxwb_train_clear (fxwb_train *t);
/* The forward and backward graphs as aot_forward_graph / aot_backward_graph print (the joint graph first when
   joint), then the saved values. */
void fxwb_train_print (const fxwb_train *t, gboolean joint);

typedef enum
{
  FXWB_OPTIM_SGD,
  FXWB_OPTIM_ADAM,
} fxwb_optim;

typedef struct
{
  int steps;
  fxwb_optim optim;
  double lr;
  gboolean json;       /* one JSON document instead of the table */
} fxwb_train_opts;

/* Runs steps of forward + backward + optimizer update per column, times forward and backward separately and
   checks every step's gradients against the interpreter running the joint graph. Prints the table (or JSON). */
int fxwb_train_compare (const char *cmd, const fxwb_train *t, const fxwb_inputs *in, const fxwb_column *cols,
                        size_t n_cols, const fxwb_train_opts *opts);
