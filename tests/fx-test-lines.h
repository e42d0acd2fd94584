/* fx-test-lines.h: splitting a whole file's text into lines for the tests.

   g_strsplit (text, "\n", -1) looks for each separator with strstr, and AddressSanitizer's strstr measures the
   rest of the text on every call: a 2 MB trace took a minute under build-asan. This walks the text once. */
#pragma once

#include <glib.h>
#include <string.h>

/* The lines of text without their '\n' (a last line without one is kept; text ending in '\n' gives a last
   empty string, as g_strsplit does). Free with g_strfreev. */
static inline char **
fx_test_split_lines (const char *text)
{
  GPtrArray *lines = g_ptr_array_new ();
  const char *p = text;
  for (;;)
    {
      const char *nl = strchr (p, '\n');
      if (nl == NULL)
        {
          g_ptr_array_add (lines, g_strdup (p));
          break;
        }
      g_ptr_array_add (lines, g_strndup (p, (gsize) (nl - p)));
      p = nl + 1;
    }
  g_ptr_array_add (lines, NULL);
  return (char **) g_ptr_array_free (lines, FALSE);
}
