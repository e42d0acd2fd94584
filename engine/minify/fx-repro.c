/* fx-repro.c: writes repro.py in PyTorch's minifier form (class Repro, `args` rebuilt with rand_strided, a __main__
   that compiles it with torch.compile where the installed torch has it), readable back by the FX code parser. */
#include "fx/minify.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool
safe_key (const char *k)
{
  if (k == NULL || *k == '\0')
    return false;
  for (const char *c = k; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '.'))
      return false;
  return k[0] != '.' && strstr (k, "..") == NULL;
}

/* (shape, stride, dtype, device) as the older repro's `args` list writes it. */
static fx_status
put_input (const fx_node *n, fx_buf *out, fx_diag *diag)
{
  const fx_val *v = &n->meta.val;
  if (v->kind != FX_VAL_TENSOR)
    {
      fx_diag_set (diag, FX_ERR_UNSUPPORTED, "repro: placeholder '%s' is not a tensor with known shape (%s)", n->name,
                   v->kind == FX_VAL_INT || v->kind == FX_VAL_SYMINT ? "an int input" : "no metadata");
      if (diag)
        snprintf (diag->node, sizeof diag->node, "%s", n->name);
      return FX_ERR_UNSUPPORTED;
    }
  const fx_tensor_meta *m = &v->tensor;
  fx_buf_puts (out, "    ((");
  for (int d = 0; d < m->ndim; d++)
    {
      if (m->sizes[d].sym)
        {
          fx_diag_set (diag, FX_ERR_UNSUPPORTED, "repro: placeholder '%s' has a symbolic size", n->name);
          return FX_ERR_UNSUPPORTED;
        }
      fx_buf_printf (out, "%s%" PRId64, d ? ", " : "", m->sizes[d].value);
    }
  fx_buf_puts (out, m->ndim == 1 ? ",), (" : "), (");
  int64_t s = 1;
  int64_t st[64];
  for (int d = m->ndim - 1; d >= 0 && d < 64; d--)
    {
      st[d] = m->strides && m->strides[d].sym == NULL ? m->strides[d].value : s;
      if (m->sizes[d].value > 1)
        s *= m->sizes[d].value;
    }
  for (int d = 0; d < m->ndim; d++)
    fx_buf_printf (out, "%s%" PRId64, d ? ", " : "", st[d]);
  fx_buf_printf (out, "%s), torch.%s, '", m->ndim == 1 ? "," : "", fx_dtype_name (m->dtype));
  fx_device dev = m->has_device ? m->device : fx_device_cpu ();
  fx_buf_puts (out, fx_device_type_name (dev.type));
  if (dev.index >= 0)
    fx_buf_printf (out, ":%d", dev.index);
  fx_buf_printf (out, "'),  # %s\n", n->name);
  return FX_OK;
}

static const char repro_helpers[] =
  "try:\n"
  "    from torch._dynamo.testing import rand_strided\n"
  "except ImportError:  # torch without Dynamo (1.x): the same function\n"
  "    def rand_strided(size, stride, dtype=torch.float32, device='cpu', extra_size=0):\n"
  "        needed = sum((s - 1) * st for s, st in zip(size, stride)) + 1 + extra_size\n"
  "        if any(s == 0 for s in size):\n"
  "            needed = 0\n"
  "        if dtype.is_floating_point:\n"
  "            buffer = torch.randn(needed, dtype=dtype, device=device)\n"
  "        else:\n"
  "            buffer = torch.zeros(size=[needed], dtype=dtype, device=device)\n"
  "        return torch.as_strided(buffer, size, stride)\n"
  "\n"
  "\n"
  "def _flat(x):\n"
  "    if isinstance(x, (list, tuple)):\n"
  "        return [z for y in x for z in _flat(y)]\n"
  "    return [x]\n"
  "\n"
  "\n"
  "def _same(ref, res, fp64_ref, tol=1e-3):\n"
  "    \"\"\"torch._dynamo.utils.same's rule: allclose, else RMSE against the fp64 reference within a multiplier.\"\"\"\n"
  "    try:\n"
  "        from torch._dynamo.utils import same\n"
  "        return same(ref, res, fp64_ref, tol=tol)\n"
  "    except ImportError:\n"
  "        pass\n"
  "    ref, res, fp64_ref = _flat(ref), _flat(res), _flat(fp64_ref)\n"
  "    if len(ref) != len(res):\n"
  "        return False\n"
  "    for a, b, c in zip(ref, res, fp64_ref):\n"
  "        if not isinstance(a, torch.Tensor):\n"
  "            if a != b:\n"
  "                return False\n"
  "            continue\n"
  "        if not a.is_floating_point():\n"
  "            if not torch.equal(a, b):\n"
  "                return False\n"
  "            continue\n"
  "        if torch.allclose(a.float(), b.float(), atol=tol, rtol=tol, equal_nan=True):\n"
  "            continue\n"
  "        c = c.double()\n"
  "        ref_error = torch.sqrt(torch.mean(torch.square(c - a.double()))).item()\n"
  "        res_error = torch.sqrt(torch.mean(torch.square(c - b.double()))).item()\n"
  "        multiplier = 3.0 if a.dtype in (torch.float16, torch.bfloat16) else 2.0\n"
  "        if not (res_error <= multiplier * ref_error + tol / 10.0):\n"
  "            print('RMSE (res-fp64): %.5f, (ref-fp64): %.5f and shape=%s' % (res_error, ref_error, tuple(a.shape)))\n"
  "            return False\n"
  "    return True\n"
  "\n"
  "\n";

fx_status
fx_repro_write (const fx_graph *graph, const fx_repro_opts *opts, fx_buf *out, fx_diag *diag)
{
  fx_buf args;
  fx_buf_init (&args);
  fx_status st = FX_OK;
  fx_graph_foreach_node (graph, n)
    if (n->op == FX_OP_PLACEHOLDER && (st = put_input (n, &args, diag)) != FX_OK)
      break;
  if (st != FX_OK)
    {
      fx_buf_free (&args);
      return st;
    }
  const char *backend = opts->backend ? opts->backend : "inductor";
  fx_buf_puts (out, "# repro.py written by the FX Workbench minifier (fxwb minify).\n");
  fx_buf_puts (out, "# Run: python3 repro.py   (torch.compile on PyTorch 2.x; eager only where torch has no compile)\n");
  fx_buf_puts (out, "# Or:  fxwb run repro.py --backend ");
  /* the backend name is shown in a comment only when it is a plain name */
  fx_buf_puts (out, safe_key (backend) ? backend : "NAME");
  for (size_t i = 0; i < opts->n_settings; i++)
    if (safe_key (opts->settings[i].key))
      {
        fx_buf_printf (out, " --option %s=", opts->settings[i].key);
        const fx_arg *v = &opts->settings[i].value;
        if (v->kind == FX_ARG_STR && safe_key (v->u.s))
          fx_buf_puts (out, v->u.s);
        else if (v->kind == FX_ARG_BOOL)
          fx_buf_puts (out, v->u.b ? "True" : "False");
        else if (v->kind == FX_ARG_INT)
          fx_buf_printf (out, "%" PRId64, v->u.i);
        else if (v->kind == FX_ARG_FLOAT)
          fx_py_float_repr (v->u.f, out);
        else
          fx_buf_puts (out, "...");
      }
  fx_buf_putc (out, '\n');
  if (opts->kind != FX_FAILURE_NONE)
    fx_buf_printf (out, "# Failure: %s\n", fx_failure_kind_name (opts->kind));
  if (opts->failure_text && *opts->failure_text)
    {
      /* one comment line: the first line of the message, control characters dropped */
      fx_buf_puts (out, "#   ");
      for (const char *c = opts->failure_text; *c && *c != '\n'; c++)
        if ((unsigned char) *c >= 0x20)
          fx_buf_putc (out, *c);
      fx_buf_putc (out, '\n');
    }
  fx_buf_puts (out, "import builtins\nimport math\nimport operator\nimport sys\n\nimport torch\n"
                    "from torch import tensor, device\nfrom math import inf, nan\n\n");
  /* backend settings: PyTorch's repro sets them on torch._inductor.config; a torch without it skips them */
  fx_buf_puts (out, "def _configure():\n");
  bool any = false;
  for (size_t i = 0; i < opts->n_settings; i++)
    {
      const fx_repro_setting *s = &opts->settings[i];
      if (!safe_key (s->key))
        continue;
      fx_arg v = s->value;
      if (v.kind != FX_ARG_BOOL && v.kind != FX_ARG_INT && v.kind != FX_ARG_FLOAT && v.kind != FX_ARG_STR
          && v.kind != FX_ARG_NONE)
        continue;
      const char *dot = strrchr (s->key, '.');
      fx_buf_puts (out, "    try:\n        import torch._inductor.config as _config\n");
      if (dot)
        fx_buf_printf (out, "        setattr(_config.%.*s, '%s', ", (int) (dot - s->key), s->key, dot + 1);
      else
        fx_buf_printf (out, "        setattr(_config, '%s', ", s->key);
      fx_arg_repr (&v, FX_REPR_CODE, out);
      fx_buf_puts (out, ")\n    except (ImportError, AttributeError) as e:\n"
                        "        print('repro: cannot set ");
      fx_buf_puts (out, s->key);
      fx_buf_puts (out, ": %s' % e)\n");
      any = true;
    }
  if (!any)
    fx_buf_puts (out, "    pass\n");
  fx_buf_puts (out, "\n\n");
  fx_buf_puts (out, repro_helpers);

  /* the graph */
  fx_buf_puts (out, "from torch.nn import *\nclass Repro(torch.nn.Module):\n    def __init__(self):\n"
                    "        super().__init__()\n\n");
  fx_buf code;
  fx_buf_init (&code);
  fx_graph_print_code (graph, &code);
  const char *c = code.data ? code.data : "";
  while (*c == '\n')
    c++;
  while (*c)
    {
      const char *eol = strchr (c, '\n');
      size_t len = eol ? (size_t) (eol - c) : strlen (c);
      bool blank = true;
      for (size_t i = 0; i < len; i++)
        blank &= c[i] == ' ';
      if (!blank)
        {
          fx_buf_puts (out, "    ");
          fx_buf_append (out, c, len);
        }
      fx_buf_putc (out, '\n');
      c += len + (eol ? 1 : 0);
    }
  fx_buf_free (&code);
  fx_buf_puts (out, "\n\nargs = [\n");
  fx_buf_append (out, args.data ? args.data : "", args.len);
  fx_buf_puts (out, "]\n");
  fx_buf_free (&args);

  fx_buf_printf (out,
                 "\n\nif __name__ == '__main__':\n"
                 "    torch.manual_seed(%" PRIu64 ")\n"
                 "    args = [rand_strided(sh, st, dt, dev) for (sh, st, dt, dev) in args]\n"
                 "    mod = Repro()\n"
                 "    accuracy = %s\n"
                 "    backend = ",
                 opts->seed, opts->kind == FX_FAILURE_ACCURACY ? "True" : "False");
  fx_py_str_repr (backend, out);
  fx_buf_puts (out, "\n    mode = ");
  if (opts->mode && strcmp (opts->mode, "default") != 0)
    fx_py_str_repr (opts->mode, out);
  else
    fx_buf_puts (out, "None");
  fx_buf_puts (out,
               "\n    with torch.no_grad():\n"
               "        ref = mod(*args)\n"
               "        if not hasattr(torch, 'compile'):\n"
               "            print('torch %s has no torch.compile: ran the graph eagerly only (it ran). '\n"
               "                  'Reproduce the failure with `fxwb run repro.py --backend %s` and the options above.'\n"
               "                  % (torch.__version__, backend))\n"
               "            sys.exit(0)\n"
               "        if backend not in ('inductor', 'eager', 'aot_eager', 'cudagraphs'):\n"
               "            print('repro: %s is an FX Workbench backend; torch.compile uses inductor' % backend)\n"
               "            backend = 'inductor'\n"
               "        _configure()\n"
               "        compiled = torch.compile(mod, backend=backend, mode=mode)\n"
               "        res = compiled(*args)\n"
               "        if hasattr(torch, 'cuda') and torch.cuda.is_available():\n"
               "            torch.cuda.synchronize()  # surfaces asynchronous CUDA errors here\n"
               "        if accuracy:\n"
               "            args64 = [a.double() if a.is_floating_point() else a for a in args]\n"
               "            fp64_ref = Repro()(*args64)\n"
               "            if not _same(ref, res, fp64_ref):\n"
               "                print('Accuracy failed: the compiled graph differs from eager beyond tolerance')\n"
               "                sys.exit(1)\n"
               "            print('Accuracy passed')\n"
               "        print('ran without failing')\n");
  return FX_OK;
}
