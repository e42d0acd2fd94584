/* bad-plugin-noentry.c: a shared object without fx_backend_plugin_init (the loader must say so and go on). */
int fxwb_test_not_an_entry_point (void);

int
fxwb_test_not_an_entry_point (void)
{
  return 42;
}
