/* test-inductor-safety.c: inductor on hostile input: a fallback kernel's run-time error names its node after the
   compile freed its graph copy (a use after free before), overflowing and over-memory sizes are located compile
   errors, and the kernel cache loads nothing it did not build itself (shared directories, planted libraries).
   Runs clean under ASan+UBSan. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx-inductor.h"
#include "fx-inductor-impl.h"
#include "fx/pyparse.h"
#include "fx/runtime.h"

static fx_graph *
parse (const char *code)
{
  fx_graph *g = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_parse_fx_code (code, strlen (code), "safety.py", &g, &diag) != FX_OK)
    g_error ("parse: %s", diag.message);
  fx_graph_resolve_ops (g);
  return g;
}

static void
assert_names_node (const fx_diag *diag, const char *node)
{
  char *quoted = g_strdup_printf ("'%s'", node);
  g_test_message ("%s", diag->message);
  if (strstr (diag->message, quoted) == NULL)
    g_error ("the error does not name node %s: %s", quoted, diag->message);
  g_free (quoted);
}

/* ---------------------------------------------------------------- fallback errors */

static const char embedding_code[] =
  "class GraphModule(torch.nn.Module):\n"
  "    def forward(self, weight: \"f32[4, 8]\", indices: \"i64[3]\"):\n"
  "        embedding_lookup: \"f32[3, 8]\" = torch.ops.aten.embedding.default(weight, indices)\n"
  "        relu: \"f32[3, 8]\" = torch.ops.aten.relu.default(embedding_lookup)\n"
  "        return (relu,)\n";

static void
test_fallback_error_names_node (void)
{
  fx_graph *g = parse (embedding_code);
  int64_t wsz[2] = { 4, 8 }, isz[1] = { 3 };
  fx_tensor *w = fx_tensor_new (NULL, FX_DTYPE_F32, 2, wsz);
  fx_tensor *idx = fx_tensor_new (NULL, FX_DTYPE_I64, 1, isz);
  fx_generator gen;
  fx_generator_seed (&gen, 1);
  fx_tensor_fill_normal (w, &gen, 0, 1);
  for (int i = 0; i < 3; i++)
    fx_tensor_set_i64 (idx, i, i);
  fx_value in[2] = { fx_value_tensor (w), fx_value_tensor (idx) };
  fx_compiled *c = NULL;
  fx_diag diag;
  fx_diag_clear (&diag);
  if (fx_inductor_compile (g, in, 2, NULL, NULL, 0, &c, &diag) != FX_OK)
    g_error ("compile: %s", diag.message);
  /* the graph the caller passed goes away too: the compiled object must own everything it reports */
  fx_graph_free (g);
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  g_assert_cmpint (fx_inductor_run (c, in, 2, arena, &res, &n_res, &diag), ==, FX_OK);
  for (size_t i = 0; i < n_res; i++)
    fx_value_clear (&res[i]);
  /* row 9 of a 4-row table: the fallback kernel reports it, naming the node */
  fx_tensor_set_i64 (idx, 1, 9);
  fx_diag_clear (&diag);
  res = NULL;
  n_res = 0;
  g_assert_cmpint (fx_inductor_run (c, in, 2, arena, &res, &n_res, &diag), !=, FX_OK);
  assert_names_node (&diag, "embedding_lookup");
  g_assert_nonnull (strstr (diag.message, "out of range"));
  fx_arena_free (arena);
  fx_inductor_free (c);
  fx_value_clear (&in[0]);
  fx_value_clear (&in[1]);
}

/* ---------------------------------------------------------------- sizes */

static fx_status
compile_code (const char *code, fx_diag *diag)
{
  fx_graph *g = parse (code);
  fx_arena *arena = fx_arena_new ();
  fx_value *inputs = NULL;
  size_t n_inputs = 0;
  fx_diag_clear (diag);
  fx_status st = fx_inputs_make (g, FX_INPUTS_SPEC, NULL, 0, NULL, arena, &inputs, &n_inputs, diag);
  fx_compiled *c = NULL;
  if (st == FX_OK)
    st = fx_inductor_compile (g, inputs, n_inputs, NULL, NULL, 0, &c, diag);
  if (c)
    fx_inductor_free (c);
  for (size_t i = 0; i < n_inputs; i++)
    fx_value_clear (&inputs[i]);
  fx_arena_free (arena);
  fx_graph_free (g);
  return st;
}

static void
test_size_overflow (void)
{
  fx_diag diag;
  g_assert_cmpint (compile_code ("class GraphModule(torch.nn.Module):\n"
                                 "    def forward(self, x: \"f32[4]\"):\n"
                                 "        full: \"f32[4611686018427387904, 4]\" = torch.ops.aten.full.default("
                                 "[4611686018427387904, 4], 1.0, dtype = torch.float32, device = device(type='cpu'), "
                                 "pin_memory = False)\n"
                                 "        sum_1: \"f32[]\" = torch.ops.aten.sum.default(full)\n"
                                 "        add: \"f32[4]\" = torch.ops.aten.add.Tensor(x, sum_1)\n"
                                 "        return (add,)\n", &diag), ==, FX_ERR_INVALID);
  assert_names_node (&diag, "full");
  g_assert_cmpint (compile_code ("class GraphModule(torch.nn.Module):\n"
                                 "    def forward(self, x: \"f32[1]\"):\n"
                                 "        expand: \"f32[9223372036854775807]\" = torch.ops.aten.expand.default(x, "
                                 "[9223372036854775807])\n"
                                 "        relu: \"f32[9223372036854775807]\" = torch.ops.aten.relu.default(expand)\n"
                                 "        return (relu,)\n", &diag), ==, FX_ERR_INVALID);
  assert_names_node (&diag, "expand");
}

static void
test_over_memory_limit (void)
{
  /* the expand is a view (no memory), the relu after it materialises 64 MiB: over the test's 1 MiB limit */
  g_setenv ("FX_MAX_TENSOR_BYTES", "1M", TRUE);
  fx_diag diag;
  g_assert_cmpint (compile_code ("class GraphModule(torch.nn.Module):\n"
                                 "    def forward(self, x: \"f32[4]\"):\n"
                                 "        expand: \"f32[4194304, 4]\" = torch.ops.aten.expand.default(x, [4194304, 4])\n"
                                 "        big_relu: \"f32[4194304, 4]\" = torch.ops.aten.relu.default(expand)\n"
                                 "        return (big_relu,)\n", &diag), ==, FX_ERR_NOMEM);
  assert_names_node (&diag, "big_relu");
  g_assert_nonnull (strstr (diag.message, "FX_MAX_TENSOR_BYTES"));
  g_unsetenv ("FX_MAX_TENSOR_BYTES");
}

/* ---------------------------------------------------------------- the kernel cache */

static char *cache_root;
static char *fallback_dir;   /* the mkdtemp directory used instead of a refused one, removed at the end */

/* A small graph whose source differs per tag (the constant), so each test has its own cache key. */
static fx_compiled *
compile_small (double tag, fx_diag *diag)
{
  char *code = g_strdup_printf ("class GraphModule(torch.nn.Module):\n"
                                "    def forward(self, x: \"f32[5, 3]\"):\n"
                                "        mul: \"f32[5, 3]\" = torch.ops.aten.mul.Tensor(x, %.1f)\n"
                                "        relu: \"f32[5, 3]\" = torch.ops.aten.relu.default(mul)\n"
                                "        return (relu,)\n", tag);
  fx_graph *g = parse (code);
  g_free (code);
  int64_t sz[2] = { 5, 3 };
  fx_value in = fx_value_tensor (fx_tensor_new (NULL, FX_DTYPE_F32, 2, sz));
  fx_tensor_fill_f64 (in.u.t, 1.0);
  fx_compiled *c = NULL;
  fx_diag_clear (diag);
  if (fx_inductor_compile (g, &in, 1, NULL, NULL, 0, &c, diag) != FX_OK)
    g_error ("compile: %s", diag->message);
  fx_arena *arena = fx_arena_new ();
  fx_value *res = NULL;
  size_t n_res = 0;
  if (fx_inductor_run (c, &in, 1, arena, &res, &n_res, diag) != FX_OK)
    g_error ("run: %s", diag->message);
  g_assert_cmpfloat (fx_tensor_get_f64 (res[0].u.t, 0), ==, tag);
  for (size_t i = 0; i < n_res; i++)
    fx_value_clear (&res[i]);
  fx_arena_free (arena);
  fx_value_clear (&in);
  fx_graph_free (g);
  return c;
}

/* The k<hash>.so the cache holds (not a probe's), or NULL. */
static char *
find_kernel_library (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  char *found = NULL;
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    if (name[0] == 'k' && g_str_has_suffix (name, ".so") && strstr (name, ".tmp") == NULL)
      {
        g_free (found);
        found = g_build_filename (dir, name, NULL);
      }
  if (d)
    g_dir_close (d);
  return found;
}

/* A library whose constructor creates `marker`: what another user would plant. */
static char *
build_planted_library (const char *marker)
{
  char *src = g_build_filename (cache_root, "planted.c", NULL);
  char *so = g_build_filename (cache_root, "planted.so", NULL);
  char *code = g_strdup_printf ("#include <stdio.h>\n"
                                "__attribute__ ((constructor)) static void planted (void)\n"
                                "{ FILE *f = fopen (\"%s\", \"w\"); if (f) fclose (f); }\n"
                                "int fx_inductor_call;\nint fx_inductor_call_timed;\n", marker);
  g_assert_true (g_file_set_contents (src, code, -1, NULL));
  char *argv[] = { (char *) "cc", (char *) "-shared", (char *) "-fPIC", (char *) "-o", so, src, NULL };
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, &status, NULL));
  g_assert_cmpint (status, ==, 0);
  g_free (code);
  g_free (src);
  return so;
}

static void
copy_file (const char *from, const char *to)
{
  char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (from, &data, &len, NULL));
  g_unlink (to);
  g_assert_true (g_file_set_contents (to, data, (gssize) len, NULL));
  g_free (data);
}

static void
test_cache_shared_dir_refused (void)
{
  char *dir = g_build_filename (cache_root, "shared", NULL);
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  g_assert_cmpint (chmod (dir, 0777), ==, 0);
  g_setenv ("FXWB_INDUCTOR_CACHE", dir, TRUE);
  fx_diag diag;
  fx_compiled *c = compile_small (2.0, &diag);
  /* compiled and ran, through a private temporary directory, and said why */
  g_assert_nonnull (strstr (c->notes.data, "writable by group or others"));
  g_assert_nonnull (strstr (ind_cache_refused (), dir));
  g_assert_true (strcmp (ind_cache_dir (), dir) != 0);
  fallback_dir = g_strdup (ind_cache_dir ());
  struct stat st;
  g_assert_cmpint (stat (ind_cache_dir (), &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0077, ==, 0);
  char *lib = find_kernel_library (dir);
  g_assert_null (lib);
  fx_inductor_free (c);
  g_unsetenv ("FXWB_INDUCTOR_CACHE");
  g_free (dir);
}

static void
test_cache_symlink_refused (void)
{
  char *real = g_build_filename (cache_root, "real", NULL);
  char *link = g_build_filename (cache_root, "link", NULL);
  g_assert_cmpint (g_mkdir (real, 0700), ==, 0);
  g_assert_cmpint (symlink (real, link), ==, 0);
  g_setenv ("FXWB_INDUCTOR_CACHE", link, TRUE);
  g_assert_true (strcmp (ind_cache_dir (), link) != 0);
  g_assert_nonnull (strstr (ind_cache_refused (), "symbolic link"));
  g_unsetenv ("FXWB_INDUCTOR_CACHE");
  g_free (real);
  g_free (link);
}

static void
test_cache_new_dir_private (void)
{
  /* no HOME, no XDG_CACHE_HOME: the cache is made 0700 */
  char *xdg = g_build_filename (cache_root, "xdg", NULL);
  g_setenv ("XDG_CACHE_HOME", xdg, TRUE);
  g_unsetenv ("FXWB_INDUCTOR_CACHE");
  char *want = g_build_filename (xdg, "fx-workbench", "inductor", NULL);
  g_assert_cmpstr (ind_cache_dir (), ==, want);
  g_assert_cmpstr (ind_cache_refused (), ==, "");
  struct stat st;
  g_assert_cmpint (stat (want, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);
  g_unsetenv ("XDG_CACHE_HOME");
  g_free (want);
  g_free (xdg);
}

/* Plants `planted` at the cache's k<hash>.so for the graph tagged `tag`, compiles it again and checks that the
   planted constructor did not run and the kernel was rebuilt. */
static void
check_planted (const char *label, double tag, bool keep_trailer, mode_t mode)
{
  char *dir = g_build_filename (cache_root, label, NULL);
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  g_setenv ("FXWB_INDUCTOR_CACHE", dir, TRUE);
  fx_diag diag;
  fx_compiled *c = compile_small (tag, &diag);
  fx_inductor_free (c);
  char *lib = find_kernel_library (dir);
  g_assert_nonnull (lib);
  char *marker = g_build_filename (cache_root, label, "marker", NULL);
  char *planted = build_planted_library (marker);
  if (keep_trailer)
    {
      /* the planted code followed by the genuine library's source trailer: only the permission check stops it */
      char *data = NULL, *real = NULL;
      gsize len = 0, real_len = 0;
      g_assert_true (g_file_get_contents (planted, &data, &len, NULL));
      g_assert_true (g_file_get_contents (lib, &real, &real_len, NULL));
      const char *src_text = NULL;
      for (gsize i = 0; i + 8 <= real_len; i++)
        if (memcmp (real + i, "FXWBSRC1", 8) == 0)
          src_text = real + i;
      g_assert_nonnull (src_text);
      guint64 n = 0;
      for (int i = 0; i < 8; i++)
        n |= (guint64) (unsigned char) src_text[-8 + i] << (8 * i);
      GByteArray *all = g_byte_array_new ();
      g_byte_array_append (all, (guint8 *) data, (guint) len);
      g_byte_array_append (all, (guint8 *) (src_text - 8 - n), (guint) (n + 16));
      g_unlink (lib);
      g_assert_true (g_file_set_contents (lib, (char *) all->data, all->len, NULL));
      g_byte_array_unref (all);
      g_free (data);
      g_free (real);
    }
  else
    copy_file (planted, lib);
  g_assert_cmpint (chmod (lib, mode), ==, 0);
  size_t before = fx_inductor_compiler_invocations ();
  c = compile_small (tag, &diag);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (fx_inductor_compiler_invocations (), ==, before + 1);
  g_assert_nonnull (strstr (c->notes.data, "compiled"));
  fx_inductor_free (c);
  /* the rebuilt library is a cache hit next time, and private */
  before = fx_inductor_compiler_invocations ();
  c = compile_small (tag, &diag);
  g_assert_cmpuint (fx_inductor_compiler_invocations (), ==, before);
  g_assert_nonnull (strstr (c->notes.data, "cache hit"));
  fx_inductor_free (c);
  struct stat st;
  g_assert_cmpint (stat (lib, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0022, ==, 0);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  g_unsetenv ("FXWB_INDUCTOR_CACHE");
  g_free (planted);
  g_free (marker);
  g_free (lib);
  g_free (dir);
}

static void
test_cache_planted_library (void)
{
  /* a library with no (or another) source: refused by the byte-for-byte comparison */
  check_planted ("planted-plain", 3.0, false, 0700);
}

static void
test_cache_planted_writable (void)
{
  /* the right source trailer, but writable by others: refused by the permission check */
  check_planted ("planted-writable", 4.0, true, 0766);
}

static void
remove_tree (const char *path)
{
  GDir *d = g_dir_open (path, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_tree (child);
      else
        g_unlink (child);
      g_free (child);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_unsetenv ("FX_MAX_TENSOR_BYTES");
  cache_root = g_dir_make_tmp ("fx-inductor-safety-XXXXXX", NULL);
  g_assert_nonnull (cache_root);
  char *own = g_build_filename (cache_root, "own", NULL);
  g_setenv ("FXWB_INDUCTOR_CACHE", own, TRUE);
  g_test_add_func ("/inductor-safety/fallback-error-names-node", test_fallback_error_names_node);
  g_test_add_func ("/inductor-safety/size-overflow", test_size_overflow);
  g_test_add_func ("/inductor-safety/over-memory-limit", test_over_memory_limit);
  g_test_add_func ("/inductor-safety/cache-new-dir-private", test_cache_new_dir_private);
  g_test_add_func ("/inductor-safety/cache-shared-dir-refused", test_cache_shared_dir_refused);
  g_test_add_func ("/inductor-safety/cache-symlink-refused", test_cache_symlink_refused);
  g_test_add_func ("/inductor-safety/cache-planted-library", test_cache_planted_library);
  g_test_add_func ("/inductor-safety/cache-planted-writable", test_cache_planted_writable);
  int rc = g_test_run ();
  remove_tree (cache_root);
  if (fallback_dir && strncmp (fallback_dir, "/tmp/", 5) == 0)
    remove_tree (fallback_dir);
  g_free (fallback_dir);
  g_free (own);
  g_free (cache_root);
  return rc;
}
