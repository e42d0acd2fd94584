/* fxwb-cmd-show.c: `fxwb show FILE [COMPILE_ID]`: one compile's graphs (tabular, code, readable), guards,
   recompile reasons, graph breaks, kernels and metrics from a workspace. */
#include "fxwb.h"

#include <math.h>
#include <string.h>

#include "fx/aot-graphs.h"
#include "fx/pyparse.h"
#include "fx/export.h"
#include "fx/provenance.h"
#include "fx/store.h"
#include "fxwb-report.h"

typedef enum
{
  SHOW_STAGES,
  SHOW_TABULAR,
  SHOW_CODE,
  SHOW_READABLE,
  SHOW_TEXT,
  SHOW_SVG,
  SHOW_GUARDS,
  SHOW_RECOMPILES,
  SHOW_BREAKS,
  SHOW_KERNELS,
  SHOW_METRICS,
  SHOW_FUSION,
  SHOW_SHAPES,
  SHOW_INPUTS,
  SHOW_ARTIFACTS,
  SHOW_ARTIFACT,
  SHOW_RUNS,
  SHOW_PROVENANCE,
  SHOW_SAVED,
} show_what;

static const char *artifact_name;
static const char *provenance_node;
static int provenance_compiles;   /* compiles with provenance mappings seen by --provenance */
static const char *svg_path;

/* One JSON line about compile c: {"compile_id": ..., then the keys and string values given}. */
static json_object *
row (const fx_store_compile *c)
{
  json_object *o = json_object_new_object ();
  fxwb_json_add_str (o, "compile_id", c->compile_id);
  return o;
}

static void
print_row (const fx_store_compile *c, const char *const *keys, const char *const *vals, int n)
{
  json_object *o = row (c);
  for (int k = 0; k < n; k++)
    fxwb_json_add_str (o, keys[k], vals[k]);
  fxwb_json_print (o);
}

/* Prints the compile's graph of the stage (the last one stored under that stage). */
static fx_status
show_graph (fx_store *store, const fx_store_compile *c, const char *stage, show_what what, fx_arena *arena,
            fx_diag *diag)
{
  fx_store_graph_info *gi = NULL;
  size_t n = 0;
  fx_status st = fx_store_list_graphs (store, c->id, arena, &gi, &n, diag);
  if (st != FX_OK)
    return st;
  const fx_store_graph_info *found = NULL;
  for (size_t i = 0; i < n; i++)
    if (strcmp (gi[i].stage, stage ? stage : "dynamo") == 0)
      found = &gi[i];
  /* No --stage and no Dynamo graph (a .pt2 or TORCH_COMPILE_DEBUG import): the compile's first graph. */
  if (!found && !stage && n)
    found = &gi[0];
  if (!stage)
    stage = "dynamo";
  if (!found)
    return fx_diag_set (diag, FX_ERR_NOT_FOUND, "compile %s has no '%s' graph (see fxwb show FILE %s)",
                        c->compile_id, stage, c->compile_id);
  fx_graph *graph = NULL;
  char *text = NULL;
  st = fx_store_get_graph (store, found->id, what == SHOW_TEXT ? NULL : &graph, &text, diag);
  if (st != FX_OK)
    return st;
  if (what == SHOW_TEXT || !graph)
    {
      if (what != SHOW_TEXT)
        fprintf (stderr, "fxwb show: the %s graph of %s did not parse; printing its original text\n", stage,
                 c->compile_id);
      fputs (text ? text : "", stdout);
    }
  else
    {
      fx_buf out;
      fx_buf_init (&out);
      if (what == SHOW_SVG)
        {
          /* Graphviz's own drawing of the graph's dot (module clusters from nn_module_stack); the app's
             Export Graph writes what its canvas draws. */
          char *svg;
          fx_graph_dump_dot (graph, &out);
          svg = fxwb_report_svg (out.data ? out.data : "", out.len, NULL);
          fx_buf_free (&out);
          fx_graph_free (graph);
          free (text);
          if (svg == NULL)
            return fx_diag_set (diag, FX_ERR_UNSUPPORTED, "the %s graph of %s cannot be drawn (Graphviz missing or "
                                "it failed)", stage, c->compile_id);
          g_autoptr (GError) error = NULL;
          gboolean ok = g_file_set_contents (svg_path, svg, -1, &error);
          free (svg);
          if (!ok)
            return fx_diag_set (diag, FX_ERR_IO, "%s", error->message);
          return FX_OK;
        }
      if (what == SHOW_TABULAR)
        fx_graph_print_tabular (graph, &out);
      else if (what == SHOW_CODE)
        fx_graph_print_code (graph, &out);
      else
        {
          fx_readable_opts opts;
          memset (&opts, 0, sizeof opts);
          fx_parse_readable_opts (graph, &opts);
          fx_graph_print_readable (graph, &opts, &out);
        }
      fputs (out.data ? out.data : "", stdout);
      fx_buf_free (&out);
    }
  fx_graph_free (graph);
  free (text);
  return FX_OK;
}

/* The graph of a stage of compile c (NULL when it has none or it did not parse). */
static fx_graph *
stage_graph (fx_store *store, const fx_store_compile *c, const char *stage, fx_arena *arena, fx_diag *diag)
{
  fx_store_graph_info *gi = NULL;
  size_t n = 0;
  fx_graph *graph = NULL;
  if (fx_store_list_graphs (store, c->id, arena, &gi, &n, diag) != FX_OK)
    return NULL;
  for (size_t i = n; i-- > 0 && !graph;)
    if (strcmp (gi[i].stage, stage) == 0 && fx_store_get_graph (store, gi[i].id, &graph, NULL, diag) != FX_OK)
      return NULL;
  return graph;
}

/* The values a training compile's forward saves for its backward: name, type, and the forward node computing it
   (a forward input, or its code and user line). Not a training compile: nothing when listing all (quiet), else an
   error. */
static fx_status
show_saved (fx_store *store, const fx_store_compile *c, gboolean json, gboolean quiet, fx_arena *arena, fx_diag *diag)
{
  if (!c->training)
    return quiet ? FX_OK
                 : fx_diag_set (diag, FX_ERR_NOT_FOUND, "compile %s is not a training compile (no aot_backward graph)",
                                c->compile_id);
  fx_graph *fw = stage_graph (store, c, "aot_forward", arena, diag);
  fx_graph *bw = stage_graph (store, c, "aot_backward", arena, diag);
  fx_saved_value *v = NULL;
  size_t n = 0;
  fx_status st = !fw || !bw ? fx_diag_set (diag, FX_ERR_NOT_FOUND, "compile %s: its %s graph did not parse",
                                           c->compile_id, fw ? "aot_backward" : "aot_forward")
                            : fx_aot_saved_values (fw, bw, arena, &v, &n, diag);
  if (st == FX_OK && !json)
    printf ("saved for backward: %zu\n", n);
  fx_buf ann, code;
  fx_buf_init (&ann);
  fx_buf_init (&code);
  for (size_t i = 0; i < n && st == FX_OK; i++)
    {
      const fx_node *f = v[i].fw_node;
      fx_buf_reset (&ann);
      fx_buf_reset (&code);
      if (!fx_val_annotation (&f->meta.val, true, true, &ann))
        fx_buf_puts (&ann, "-");
      fx_stack_frame frame = { 0 };
      bool has_line = fx_stack_trace_innermost (f->meta.stack_trace, arena, &frame) && frame.file;
      if (f->op == FX_OP_PLACEHOLDER)
        {
          const char *desc = fx_meta_get_extra (&f->meta, "desc");
          fx_buf_printf (&code, "forward input%s%s", desc ? " " : "", desc ? desc : "");
        }
      else
        {
          fx_buf_printf (&code, "%s = ", f->name);
          fx_target_format (&f->target, &code);
          fx_buf_putc (&code, '(');
          for (size_t a = 0; a < f->n_args; a++)
            {
              if (a)
                fx_buf_puts (&code, ", ");
              fx_arg_repr (&f->args[a], FX_REPR_CODE, &code);
            }
          fx_buf_putc (&code, ')');
        }
      g_autofree char *line = has_line ? g_strdup_printf ("%s:%d", frame.file, frame.line) : NULL;
      if (json)
        {
          json_object *o = row (c);
          fxwb_json_add_str (o, "name", v[i].bw_placeholder->name);
          fxwb_json_add_str (o, "type", ann.data);
          fxwb_json_add_int (o, "forward_output", v[i].fw_output);
          fxwb_json_add_str (o, "producer", code.data);
          fxwb_json_add_str (o, "user_line", line);
          fxwb_json_print (o);
        }
      else
        printf ("  %-16s %-34s out %-3d %s%s%s\n", v[i].bw_placeholder->name, ann.data, v[i].fw_output, code.data,
                line ? "  # " : "", line ? line : "");
    }
  fx_buf_free (&ann);
  fx_buf_free (&code);
  fx_graph_free (fw);
  fx_graph_free (bw);
  return st;
}

static fx_status
show_one (fx_store *store, const fx_store_compile *c, show_what what, const char *stage, gboolean json,
          gboolean many, fx_arena *arena, fx_diag *diag)
{
  size_t n = 0;
  fx_status st = FX_OK;
  if (many && !json)
    printf ("== [%s] %s\n", c->compile_id, c->function ? c->function : "");
  switch (what)
    {
    case SHOW_TABULAR:
    case SHOW_CODE:
    case SHOW_READABLE:
    case SHOW_TEXT:
    case SHOW_SVG:
      return show_graph (store, c, stage, what, arena, diag);
    case SHOW_STAGES:
      {
        fx_store_graph_info *gi;
        if ((st = fx_store_list_graphs (store, c->id, arena, &gi, &n, diag)) != FX_OK)
          return st;
        for (size_t i = 0; i < n; i++)
          if (json)
            {
              json_object *o = row (c);
              fxwb_json_add_str (o, "stage", gi[i].stage);
              fxwb_json_add_int (o, "nodes", gi[i].n_nodes);
              fxwb_json_add_bool (o, "parsed", gi[i].parsed);
              fxwb_json_print (o);
            }
          else
            printf ("%-28s %5d nodes%s\n", gi[i].stage, gi[i].n_nodes, gi[i].parsed ? "" : " (text only: did not parse)");
        /* a training compile: what its forward keeps for the backward (fxwb show --saved); graphs that are not
           one partition are said so here, the listing stands */
        if (!json && c->training && show_saved (store, c, FALSE, TRUE, arena, diag) != FX_OK)
          {
            printf ("saved for backward: ? (%s)\n", diag->message);
            fx_diag_clear (diag);
          }
        return FX_OK;
      }
    case SHOW_SAVED:
      return show_saved (store, c, json, many, arena, diag);
    case SHOW_GUARDS:
      {
        fx_store_guard *g;
        if ((st = fx_store_list_guards (store, c->id, arena, &g, &n, diag)) != FX_OK)
          return st;
        for (size_t i = 0; i < n; i++)
          if (json)
            {
              const char *keys[] = { "kind", "source", "code", "user_line" };
              const char *vals[] = { g[i].kind, g[i].source, g[i].code, g[i].user_line };
              print_row (c, keys, vals, 4);
            }
          else
            printf ("%-26s %-24s %s%s%s\n", g[i].kind, g[i].source ? g[i].source : "-", g[i].code,
                    g[i].user_line ? "  # " : "", g[i].user_line ? g[i].user_line : "");
        return FX_OK;
      }
    case SHOW_RECOMPILES:
      {
        fx_store_guard_failure *f;
        if ((st = fx_store_list_guard_failures (store, c->id, arena, &f, &n, diag)) != FX_OK)
          return st;
        if (n && !json)
          printf ("Recompiling function %s in %s:%d\n    triggered by the following guard failure(s):\n",
                  c->function ? c->function : "?", c->file ? c->file : "?", c->line);
        for (size_t i = 0; i < n; i++)
          if (json)
            {
              const char *keys[] = { "failed_compile", "reason" };
              const char *vals[] = { f[i].failed_compile, f[i].reason };
              print_row (c, keys, vals, 2);
            }
          else
            printf ("    - %s%s%s\n", f[i].failed_compile ? f[i].failed_compile : "",
                    f[i].failed_compile ? ": " : "", f[i].reason);
        return FX_OK;
      }
    case SHOW_BREAKS:
      {
        fx_store_graph_break *b;
        if ((st = fx_store_list_graph_breaks (store, c->id, arena, &b, &n, diag)) != FX_OK)
          return st;
        for (size_t i = 0; i < n; i++)
          if (json)
            {
              const char *keys[] = { "reason", "explanation", "user_stack" };
              const char *vals[] = { b[i].reason, b[i].explanation, b[i].user_stack };
              print_row (c, keys, vals, 3);
            }
          else
            printf ("%s\n", b[i].text ? b[i].text : b[i].reason);
        return FX_OK;
      }
    case SHOW_KERNELS:
      {
        fx_store_kernel *k;
        if ((st = fx_store_list_kernels (store, c->id, arena, &k, &n, diag)) != FX_OK)
          return st;
        for (size_t i = 0; i < n; i++)
          if (json)
            {
              json_object *o = row (c);
              fxwb_json_add_int (o, "ordinal", k[i].ordinal);
              fxwb_json_add_int (o, "call_order", k[i].call_order);
              fxwb_json_add_str (o, "name", k[i].name);
              fxwb_json_add_str (o, "kind", k[i].kind);
              fxwb_json_add_str (o, "device", k[i].device);
              fxwb_json_add_str (o, "nodes", k[i].nodes);
              fxwb_json_add_str (o, "aten", k[i].aten);
              fxwb_json_add_str (o, "post_grad_nodes", k[i].post_nodes);
              fxwb_json_add_str (o, "pre_grad_nodes", k[i].pre_nodes);
              fxwb_json_add_str (o, "part", k[i].part);
              fxwb_json_print (o);
            }
          else
            {
              printf ("%-40s %-7s %-5s call #%d  nodes: [%s]  aten: [%s]%s%s\n", k[i].name, k[i].kind,
                      k[i].device ? k[i].device : "-", k[i].call_order, k[i].nodes ? k[i].nodes : "",
                      k[i].aten ? k[i].aten : "", k[i].part ? "  part: " : "", k[i].part ? k[i].part : "");
              if (k[i].pre_nodes)
                printf ("    pre-grad nodes: [%s]  (post-grad: [%s])\n", k[i].pre_nodes,
                        k[i].post_nodes ? k[i].post_nodes : "");
            }
        return FX_OK;
      }
    case SHOW_METRICS:
      {
        fx_store_kv *m;
        if ((st = fx_store_list_metrics (store, c->id, arena, &m, &n, diag)) != FX_OK)
          return st;
        if (json)
          {
            json_object *o = row (c);
            for (size_t i = 0; i < n; i++)
              fxwb_json_add_str (o, m[i].key, m[i].value);
            fxwb_json_print (o);
          }
        else
          for (size_t i = 0; i < n; i++)
            printf ("%-40s %s\n", m[i].key, m[i].value ? m[i].value : "null");
        return FX_OK;
      }
    case SHOW_FUSION:
      {
        /* The fusion groups of ir_post_fusion.txt (the compile's own, or those of its linked TORCH_COMPILE_DEBUG
           folder), each with the scheduler nodes it fuses, what they write and read, and their output layouts. */
        fx_store_fusion_group *g;
        fx_store_ir_node *nodes;
        size_t nn = 0;
        if ((st = fx_store_list_fusion_groups (store, c->id, arena, &g, &n, diag)) != FX_OK
            || (st = fx_store_list_ir_nodes (store, c->id, "post_fusion", arena, &nodes, &nn, diag)) != FX_OK)
          return st;
        for (size_t i = 0; i < n; i++)
          {
            const fx_store_ir_node *top = NULL;
            for (size_t k = 0; k < nn && !top; k++)
              if (!nodes[k].fused_into && strcmp (nodes[k].name, g[i].name) == 0)
                top = &nodes[k];
            if (json)
              {
                json_object *o = row (c);
                fxwb_json_add_str (o, "name", g[i].name);
                fxwb_json_add_str (o, "nodes", g[i].nodes);
                fxwb_json_add_str (o, "kind", top ? top->kind : NULL);
                fxwb_json_add_str (o, "writes", top ? top->writes : NULL);
                fxwb_json_add_str (o, "reads", top ? top->reads : NULL);
                fxwb_json_add_str (o, "buffers", top ? top->buffers : NULL);
                fxwb_json_add_str (o, "extern_kernel", top ? top->extern_kernel : NULL);
                fxwb_json_add_str (o, "kernel", top ? top->kernel : NULL);
                fxwb_json_add_int (o, "handle", top ? top->handle : -1);
                fxwb_json_add_str (o, "origins", top ? top->post_nodes : NULL);
                fxwb_json_add_str (o, "pre_grad_nodes", top ? top->pre_nodes : NULL);
                fxwb_json_print (o);
                continue;
              }
            printf ("%-32s [%s]\n", g[i].name, g[i].nodes ? g[i].nodes : "");
            if (!top)
              continue;
            printf ("    %s(%s)%s%s\n", top->kind, top->ir_type ? top->ir_type : "",
                    top->extern_kernel ? "  kernel: " : "", top->extern_kernel ? top->extern_kernel : "");
            printf ("    writes: [%s]  reads: [%s]\n", top->writes ? top->writes : "", top->reads ? top->reads : "");
            if (top->kernel)
              {
                printf ("    kernel: %s", top->kernel);
                if (top->handle >= 0)
                  printf (":%d", top->handle);
                if (top->post_nodes)
                  printf ("  origins: [%s]", top->post_nodes);
                if (top->pre_nodes)
                  printf ("  pre-grad: [%s]", top->pre_nodes);
                putchar ('\n');
              }
            if (top->buffers)
              {
                g_auto (GStrv) bufs = g_strsplit (top->buffers, "\n", -1);
                for (int b = 0; bufs[b]; b++)
                  printf ("    %s\n", bufs[b]);
              }
            for (size_t k = 0; k < nn; k++)
              if (nodes[k].fused_into && strcmp (nodes[k].fused_into, g[i].name) == 0)
                printf ("    - %s: %s  iteration %s  writes [%s]  reads [%s]\n", nodes[k].name, nodes[k].kind,
                        nodes[k].iteration ? nodes[k].iteration : "-", nodes[k].writes ? nodes[k].writes : "",
                        nodes[k].reads ? nodes[k].reads : "");
          }
        return FX_OK;
      }
    case SHOW_SHAPES:
      {
        /* symbolic_shape_specialization: "s0 (L['x'].size()[0]) specialized to 4: reason", then the user stack;
           guard_added: the expression and the user stack that added it. */
        fx_store_shape_event *ev;
        if ((st = fx_store_list_shape_events (store, c->id, arena, &ev, &n, diag)) != FX_OK)
          return st;
        for (size_t i = 0; i < n; i++)
          if (json)
            {
              const char *keys[] = { "kind", "symbol", "sources", "value", "expr", "reason", "user_stack" };
              const char *vals[] = { ev[i].kind, ev[i].symbol, ev[i].sources, ev[i].value, ev[i].expr, ev[i].reason,
                                     ev[i].user_stack };
              print_row (c, keys, vals, 7);
            }
          else
            {
              if (strcmp (ev[i].kind, "specialization") == 0)
                printf ("specialization: %s (%s) = %s: %s\n", ev[i].symbol ? ev[i].symbol : "?",
                        ev[i].sources ? ev[i].sources : "", ev[i].value ? ev[i].value : "?",
                        ev[i].reason ? ev[i].reason : "");
              else
                printf ("%s: %s\n", ev[i].kind, ev[i].expr ? ev[i].expr : "");
              if (ev[i].user_stack)
                fputs (ev[i].user_stack, stdout);
            }
        return FX_OK;
      }
    case SHOW_INPUTS:
      {
        fx_store_kv *a;
        if ((st = fx_store_list_artifacts (store, c->id, arena, &a, &n, diag)) != FX_OK)
          return st;
        for (size_t i = 0; i < n; i++)
          {
            if (strcmp (a[i].key, "input") != 0)
              continue;
            if (json)
              {
                const char *keys[] = { "input" };
                const char *vals[] = { a[i].value };
                print_row (c, keys, vals, 1);
              }
            else
              printf ("%s\n", a[i].value);
          }
        return FX_OK;
      }
    case SHOW_ARTIFACTS:
    case SHOW_ARTIFACT:
      {
        fx_store_kv *a;
        if ((st = fx_store_list_artifacts (store, c->id, arena, &a, &n, diag)) != FX_OK)
          return st;
        size_t shown = 0;
        for (size_t i = 0; i < n; i++)
          {
            if (what == SHOW_ARTIFACT && strcmp (a[i].key, artifact_name) != 0)
              continue;
            shown++;
            if (json)
              {
                json_object *o = row (c);
                fxwb_json_add_str (o, "name", a[i].key);
                if (what == SHOW_ARTIFACT)
                  fxwb_json_add_str (o, "text", a[i].value);
                else
                  fxwb_json_add_int (o, "bytes", a[i].value ? (int64_t) strlen (a[i].value) : 0);
                fxwb_json_print (o);
              }
            else if (what == SHOW_ARTIFACTS)
              printf ("%-48s %8zu bytes\n", a[i].key, a[i].value ? strlen (a[i].value) : 0);
            else
              {
                fputs (a[i].value ? a[i].value : "", stdout);
                if (a[i].value && *a[i].value && a[i].value[strlen (a[i].value) - 1] != '\n')
                  putchar ('\n');
              }
          }
        /* A graph_dump (AOTInductor's wrapper and kernel code) by the name it was dumped under. */
        if (what == SHOW_ARTIFACT && !shown)
          {
            const char *code = NULL;
            fx_diag ignore;
            fx_diag_clear (&ignore);
            if (fx_provenance_code (store, c->id, artifact_name, arena, &code, &ignore) == FX_OK && code)
              {
                shown++;
                if (json)
                  {
                    json_object *o = row (c);
                    fxwb_json_add_str (o, "name", artifact_name);
                    fxwb_json_add_str (o, "text", code);
                    fxwb_json_print (o);
                  }
                else
                  {
                    fputs (code, stdout);
                    if (*code && code[strlen (code) - 1] != '\n')
                      putchar ('\n');
                  }
              }
          }
        if (what == SHOW_ARTIFACT && !shown && !many)
          return fx_diag_set (diag, FX_ERR_NOT_FOUND, "compile %s has no artifact '%s' (see --artifacts)",
                              c->compile_id, artifact_name);
        return FX_OK;
      }
    case SHOW_PROVENANCE:
      {
        /* Without a COMPILE_ID, every compile with mappings (those without are skipped). */
        bool has = false;
        if ((st = fx_provenance_has (store, c->id, &has, diag)) != FX_OK || (!has && many))
          return st;
        provenance_compiles++;
        fx_provenance p;
        if ((st = fx_provenance_chain (store, c->id, provenance_node, arena, &p, diag)) != FX_OK)
          {
            if (many && st == FX_ERR_NOT_FOUND)
              {
                /* Another compile may hold the node: say so here and go on (on stderr under --json, which prints
                   JSON lines only). */
                fprintf (json ? stderr : stdout, "%s\n", diag->message);
                fx_diag_clear (diag);
                return FX_OK;
              }
            return st;
          }
        if (json)
          {
            json_object *o = row (c);
            json_object *pre = json_object_new_array (), *post = json_object_new_array ();
            json_object *ks = json_object_new_array ();
            fxwb_json_add_str (o, "side", fx_prov_side_name (p.side));
            fxwb_json_add_str (o, "node", p.node);
            for (size_t i = 0; i < p.n_pre; i++)
              json_object_array_add (pre, json_object_new_string (p.pre[i]));
            for (size_t i = 0; i < p.n_post; i++)
              json_object_array_add (post, json_object_new_string (p.post[i]));
            for (size_t i = 0; i < p.n_kernels; i++)
              {
                json_object *k = json_object_new_object ();
                fxwb_json_add_str (k, "name", p.kernels[i].name);
                fxwb_json_add_int (k, "handle", p.kernels[i].handle);
                fxwb_json_add_str (k, "launch_code", p.kernels[i].launch_code);
                fxwb_json_add_int (k, "launch_line", p.kernels[i].launch_line);
                fxwb_json_add_str (k, "def_code", p.kernels[i].def_code);
                fxwb_json_add_int (k, "def_line", p.kernels[i].def_line);
                json_object_array_add (ks, k);
              }
            json_object_object_add (o, "pre_grad", pre);
            json_object_object_add (o, "post_grad", post);
            json_object_object_add (o, "kernels", ks);
            fxwb_json_print (o);
            return FX_OK;
          }
        printf ("provenance of %s %s\n", fx_prov_side_name (p.side), p.node);
        printf ("  %-10s", "pre_grad");
        for (size_t i = 0; i < p.n_pre; i++)
          printf ("%s%s", i ? ", " : " ", p.pre[i]);
        printf ("%s\n  %-10s", p.n_pre ? "" : " -", "post_grad");
        for (size_t i = 0; i < p.n_post; i++)
          printf ("%s%s", i ? ", " : " ", p.post[i]);
        printf ("%s\n", p.n_post ? "" : " -");
        if (p.n_kernels == 0)
          printf ("  %-10s -\n", "kernel");
        for (size_t i = 0; i < p.n_kernels; i++)
          {
            const fx_prov_kernel *k = &p.kernels[i];
            g_autofree char *name = k->handle >= 0 ? g_strdup_printf ("%s:%d", k->name, k->handle)
                                                   : g_strdup (k->name);
            printf ("  %-10s %s", "kernel", name);
            if (k->launch_line)
              printf ("  launched at %s:%d", k->launch_code, k->launch_line);
            if (k->def_line)
              printf ("  defined at %s:%d", k->def_code, k->def_line);
            putchar ('\n');
          }
        return FX_OK;
      }
    case SHOW_RUNS:
      {
        /* Runs stored by fxwb run / compare on the compile's graphs; one that never finished (killed, crashed)
           says so instead of showing empty columns. */
        fx_store_graph_info *gi;
        if ((st = fx_store_list_graphs (store, c->id, arena, &gi, &n, diag)) != FX_OK)
          return st;
        for (size_t i = 0; i < n; i++)
          {
            fx_store_run_row *r;
            size_t nr = 0;
            if ((st = fx_store_list_runs (store, gi[i].id, arena, &r, &nr, diag)) != FX_OK)
              return st;
            for (size_t k = 0; k < nr; k++)
              if (json)
                {
                  json_object *o = row (c);
                  fxwb_json_add_str (o, "stage", gi[i].stage);
                  fxwb_json_add_int (o, "run", r[k].id);
                  fxwb_json_add_str (o, "backend", r[k].backend);
                  fxwb_json_add_str (o, "mode", r[k].mode);
                  fxwb_json_add_str (o, "status", r[k].incomplete ? "incomplete" : "done");
                  fxwb_json_add_str (o, "verdict", r[k].verdict);
                  fxwb_json_add_num (o, "compile_ms", r[k].compile_ms);
                  fxwb_json_add_num (o, "median_ms", r[k].run_ms_median);
                  fxwb_json_add_str (o, "error", r[k].error);
                  fxwb_json_print (o);
                }
              else if (r[k].incomplete)
                printf ("run/%-4" G_GINT64_FORMAT " %-22s %-20s %-16s incomplete (started, never finished)\n", r[k].id,
                        gi[i].stage, r[k].backend ? r[k].backend : "-", r[k].mode ? r[k].mode : "-");
              else
                {
                  g_autofree char *ms = isnan (r[k].run_ms_median) ? g_strdup ("-")
                                        : g_strdup_printf ("%.4f ms", r[k].run_ms_median);
                  /* run/ID: what `fxwb diff WORKSPACE:run/ID` takes */
                  printf ("run/%-4" G_GINT64_FORMAT " %-22s %-20s %-16s %-12s %s%s%s\n", r[k].id, gi[i].stage,
                          r[k].backend ? r[k].backend : "-",
                          r[k].mode ? r[k].mode : "-", r[k].verdict ? r[k].verdict : "-", ms,
                          r[k].error ? "  " : "", r[k].error ? r[k].error : "");
                }
          }
        return FX_OK;
      }
    default:
      break;
    }
  return st;
}

/* The guards a torch.export trace added outside any compile, as --guards prints a compile's. */
static fx_status
show_export_guards (fx_store *store, gboolean json, fx_arena *arena, fx_diag *diag)
{
  fx_export_entry *es = NULL;
  size_t ne = 0;
  fx_status st = fx_export_entries (store, arena, &es, &ne, diag);
  for (size_t i = 0; i < ne && st == FX_OK; i++)
    if (json)
      {
        json_object *o = json_object_new_object ();
        fxwb_json_add_str (o, "compile_id", "export");
        fxwb_json_add_str (o, "kind", es[i].kind);
        fxwb_json_add_str (o, "code", es[i].what);
        fxwb_json_add_str (o, "user_line", es[i].user_line);
        fxwb_json_add_str (o, "fix", es[i].fix);
        fxwb_json_print (o);
      }
    else
      {
        printf ("[export] %-26s %-24s %s%s%s\n", es[i].kind, "-", es[i].what ? es[i].what : "-",
                es[i].user_line ? "  # " : "", es[i].user_line ? es[i].user_line : "");
        if (es[i].fix)
          printf ("         fix: %s\n", es[i].fix);
      }
  return st;
}

int
fxwb_cmd_show (int argc, char **argv)
{
  gboolean tabular = FALSE, code = FALSE, readable = FALSE, text = FALSE, guards = FALSE, recompiles = FALSE;
  gboolean breaks = FALSE, kernels = FALSE, metrics = FALSE, fusion = FALSE, inputs = FALSE, shapes = FALSE;
  gboolean json = FALSE, artifacts = FALSE, runs = FALSE, forward = FALSE, backward = FALSE, joint = FALSE;
  gboolean saved = FALSE;
  g_autofree char *stage = NULL, *artifact = NULL, *graph_svg = NULL, *provenance = NULL;
  GOptionEntry entries[] = {
    { "stage", 's', 0, G_OPTION_ARG_STRING, &stage,
      "Graph stage (default: dynamo, else the compile's first graph): dynamo, aot_forward, aot_backward, aot_inference, aot_joint, pre_grad, post_grad, "
      "or an artifact name such as before_post_grad_graph", "S" },
    { "forward", 0, 0, G_OPTION_ARG_NONE, &forward,
      "A training compile's AOT forward graph (--stage aot_forward), tabular unless --code, --readable or --text",
      NULL },
    { "backward", 0, 0, G_OPTION_ARG_NONE, &backward,
      "A training compile's AOT backward graph (--stage aot_backward), tabular unless --code, --readable or --text",
      NULL },
    { "joint", 0, 0, G_OPTION_ARG_NONE, &joint,
      "A training compile's AOT joint graph (--stage aot_joint), tabular unless --code, --readable or --text", NULL },
    { "saved", 0, 0, G_OPTION_ARG_NONE, &saved,
      "Values saved for backward: name, type, forward output index, the forward node computing it, its user line",
      NULL },
    { "tabular", 't', 0, G_OPTION_ARG_NONE, &tabular, "The graph as Graph.print_tabular()", NULL },
    { "code", 'c', 0, G_OPTION_ARG_NONE, &code, "The graph as GraphModule.code", NULL },
    { "readable", 'r', 0, G_OPTION_ARG_NONE, &readable, "The graph as print_readable()", NULL },
    { "text", 0, 0, G_OPTION_ARG_NONE, &text, "The graph's original text as PyTorch logged it", NULL },
    { "graph-svg", 0, 0, G_OPTION_ARG_FILENAME, &graph_svg, "Draw the graph with Graphviz into an SVG file", "FILE" },
    { "guards", 'g', 0, G_OPTION_ARG_NONE, &guards, "Guards: kind, source, code, the user line", NULL },
    { "recompiles", 0, 0, G_OPTION_ARG_NONE, &recompiles, "Recompile reasons (guard failures)", NULL },
    { "breaks", 'b', 0, G_OPTION_ARG_NONE, &breaks, "Graph breaks with their user stacks", NULL },
    { "kernels", 'k', 0, G_OPTION_ARG_NONE, &kernels,
      "Generated kernels with the nodes they cover (and their pre-grad nodes from the provenance mappings)", NULL },
    { "metrics", 'm', 0, G_OPTION_ARG_NONE, &metrics, "compilation_metrics", NULL },
    { "fusion", 'f', 0, G_OPTION_ARG_NONE, &fusion,
      "Fusion groups of ir_post_fusion.txt with their nodes, writes, reads and layouts (a TORCH_COMPILE_DEBUG import,"
      " or its folder linked to a trace compile)", NULL },
    { "shapes", 0, 0, G_OPTION_ARG_NONE, &shapes,
      "Symbolic-shape specializations (symbol, sources, value, reason) and guards added, with user stacks", NULL },
    { "inputs", 'i', 0, G_OPTION_ARG_NONE, &inputs, "Input tensors by source (describe_tensor/describe_source)", NULL },
    { "artifacts", 'a', 0, G_OPTION_ARG_NONE, &artifacts, "Raw artifacts kept for the compile (names and sizes)", NULL },
    { "artifact", 0, 0, G_OPTION_ARG_STRING, &artifact,
      "Print one artifact's text (inductor_output_code, fx_graph_runnable, dynamo_cpp_guards_str, ...)", "NAME" },
    { "runs", 0, 0, G_OPTION_ARG_NONE, &runs,
      "Runs stored by fxwb run/compare: backend, mode, verdict, median time; \"incomplete\" for one that never finished",
      NULL },
    { "provenance", 'p', 0, G_OPTION_ARG_STRING, &provenance,
      "Inductor's provenance chain of NODE: its pre-grad nodes, post-grad nodes and kernels, with the lines of the "
      "stored code launching and defining each kernel (--artifact NAME prints that code). NODE is a pre-grad node, "
      "a post-grad node or a kernel (name or name:handle), or pre_grad:NAME, post_grad:NAME, kernel:NAME to say which",
      "NODE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "JSON lines instead of text (listings)", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context
    = fxwb_option_context_new ("fxwb show", "FILE.fxwb [COMPILE_ID] - show what a compile holds", entries,
                               "COMPILE_ID is written as fxwb ls shows it (0/1, [0/1], 0/1_1; rank3/0/1 for rank 3's in a\n"
                               "multi-rank workspace, where 0/1 alone is the first input's), or export: the guards a\n"
                               "torch.export trace added outside any compile (with --guards). Without a view option,\n"
                               "lists the compile's graph stages. Without COMPILE_ID, listings cover every compile;\n"
                               "graph views need one.",
                               "Exit status:\n"
                               "  0  shown\n"
                               "  1  no such compile or stage, or FILE is not a workspace\n"
                               "  2  wrong command line\n"
                               "  3  FILE cannot be read\n");
  if (!fxwb_parse_options (context, &argc, &argv))
    return FXWB_EXIT_USAGE;
  int n_views = tabular + code + readable + text + guards + recompiles + breaks + kernels + metrics + fusion + shapes
                + inputs + artifacts + runs + saved
                + (artifact != NULL) + (graph_svg != NULL) + (provenance != NULL);
  if (n_views > 1)
    {
      fprintf (stderr, "fxwb show: choose one of --tabular, --code, --readable, --text, --guards, --recompiles, "
                       "--breaks, --kernels, --metrics, --fusion, --shapes, --inputs, --artifacts, --artifact, --runs, "
                       "--graph-svg, --provenance, --saved\n");
      return FXWB_EXIT_USAGE;
    }
  if (forward + backward + joint + (stage != NULL) > 1)
    {
      fprintf (stderr, "fxwb show: choose one of --forward, --backward, --joint, --stage\n");
      return FXWB_EXIT_USAGE;
    }
  if (forward || backward || joint)
    stage = g_strdup (forward ? "aot_forward" : backward ? "aot_backward" : "aot_joint");
  if (argc < 2 || argc > 3)
    return fxwb_usage_error (context, argc < 2 ? "missing FILE.fxwb" : "too many arguments");
  show_what what = tabular ? SHOW_TABULAR : code ? SHOW_CODE : readable ? SHOW_READABLE : text ? SHOW_TEXT
                   : graph_svg ? SHOW_SVG
                   : guards ? SHOW_GUARDS : recompiles ? SHOW_RECOMPILES : breaks ? SHOW_BREAKS
                   : kernels ? SHOW_KERNELS : metrics ? SHOW_METRICS : fusion ? SHOW_FUSION
                   : shapes ? SHOW_SHAPES : inputs ? SHOW_INPUTS : artifacts ? SHOW_ARTIFACTS
                   : artifact ? SHOW_ARTIFACT : runs ? SHOW_RUNS : provenance ? SHOW_PROVENANCE
                   : saved ? SHOW_SAVED : SHOW_STAGES;
  /* --forward/--backward/--joint alone: the graph as print_tabular, like --stage S --tabular */
  if (what == SHOW_STAGES && (forward || backward || joint))
    what = SHOW_TABULAR;
  artifact_name = artifact;
  provenance_node = provenance;
  svg_path = graph_svg;
  gboolean graph_view = what == SHOW_TABULAR || what == SHOW_CODE || what == SHOW_READABLE || what == SHOW_TEXT
                        || what == SHOW_SVG;
  if (graph_view && argc != 3)
    {
      fprintf (stderr, "fxwb show: a graph view needs a COMPILE_ID (see fxwb ls)\n");
      return FXWB_EXIT_USAGE;
    }
  if (stage && !graph_view)
    {
      fprintf (stderr, "fxwb show: --stage, --forward, --backward and --joint apply to --tabular, --code, --readable, "
                       "--text and --graph-svg only\n");
      return FXWB_EXIT_USAGE;
    }
  fxwb_session ws;
  int open_rc = fxwb_session_open (&ws, argv[1]);
  if (open_rc != FXWB_EXIT_OK)
    return open_rc;
  fx_store_compile *cs = NULL;
  size_t n = 0;
  int64_t want = 0;
  /* "export": a torch.export trace's records outside any compile (its guards, with their user lines). */
  gboolean export_only = argc == 3 && strcmp (argv[2], "export") == 0;
  fx_status st = fx_store_list_compiles (ws.store, ws.arena, &cs, &n, &ws.diag);
  if (st == FX_OK && argc == 3 && !export_only)
    st = fx_store_find_compile (ws.store, argv[2], &want, &ws.diag);
  for (size_t i = 0; i < n && st == FX_OK && !export_only; i++)
    {
      if (want && cs[i].id != want)
        continue;
      st = show_one (ws.store, &cs[i], what, stage, json, !want, ws.arena, &ws.diag);
    }
  if (st == FX_OK && !want && (what == SHOW_GUARDS || what == SHOW_SHAPES))
    st = show_export_guards (ws.store, json, ws.arena, &ws.diag);
  if (st == FX_OK && !want && what == SHOW_PROVENANCE && provenance_compiles == 0)
    st = fx_diag_set (&ws.diag, FX_ERR_NOT_FOUND, "no compile of %s has provenance mappings "
                      "(inductor_provenance_tracking_node_mappings: trace with "
                      "torch._inductor.config.trace.provenance_tracking_level = 1)", argv[1]);
  return fxwb_session_close (&ws, st);
}
