/* fx-fxcode-import.c: imports a file of FX Python code (a minifier's repro.py, print_readable, GraphModule.code) into
   a workspace: one input holding one compile with the parsed graph ("user" stage; "minified" for a repro.py). */
#include "fx/importers.h"
#include "fx/pyparse.h"
#include "fx-import-util.h"
#include "fx/store.h"
#include "fx-md5.h"

#include <stdlib.h>
#include <string.h>

fx_status
fx_import_fx_code (fx_store *store, const char *path, fx_import_stats *stats, fx_diag *diag)
{
  memset (stats, 0, sizeof *stats);
  char *text = NULL;
  size_t len = 0;
  fx_status st = fx_file_read (path, &text, &len, diag);
  if (st != FX_OK)
    return st;
  fx_graph *g = NULL;
  st = fx_parse_fx_code (text, len, path, &g, diag);
  if (st != FX_OK)
    {
      free (text);
      return st;
    }
  char hash[33];
  fx_md5_hex (text, len, hash);
  int64_t input = 0, crow = 0;
  bool repro = g->class_name && strcmp (g->class_name, "Repro") == 0;
  if (!fx_import_begin_input (store, hash, stats, &st, diag))
    goto out;
  fx_compile_id cid = { -1, 0, 0, 0 };
  st = fx_store_add_input (store, path, repro ? "repro" : "fx_graph", hash, (int64_t) len, &input, diag);
  if (st == FX_OK)
    st = fx_store_ensure_compile (store, input, &cid, &crow, diag);
  if (st == FX_OK)
    {
      fx_store_compile_update u;
      fx_store_compile_update_init (&u);
      u.function = "forward";
      u.file = path;
      u.graph_op_count = (int) g->n_nodes;
      st = fx_store_update_compile (store, crow, &u, diag);
    }
  if (st == FX_OK)
    st = fx_store_add_graph (store, crow, repro ? "minified" : "user", g, text, NULL, diag);
  if (st == FX_OK)
    st = fx_store_commit (store, diag);
  else
    fx_store_rollback (store);
  if (st == FX_OK)
    {
      stats->compiles = 1;
      stats->graphs = 1;
    }
out:
  fx_graph_free (g);
  free (text);
  return st;
}
