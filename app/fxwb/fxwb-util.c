/* fxwb-util.c: diagnostics, option parsing and progress output shared by the fxwb commands. */
#include "fxwb.h"

#include <unistd.h>

void
fxwb_print_diag (const fx_diag *diag)
{
  char text[4096];

  fx_diag_format (diag, text, sizeof text);
  fputs (text, stderr);
}

gboolean
fxwb_parse_options (GOptionContext *context, int *argc, char ***argv)
{
  g_autoptr (GError) error = NULL;

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);
      fprintf (stderr, "fxwb: %s\n\n%s", error->message, help);
      return FALSE;
    }
  return TRUE;
}

int
fxwb_exit_for_status (fx_status status)
{
  switch (status)
    {
    case FX_OK:
      return FXWB_EXIT_OK;
    case FX_ERR_IO:
      return FXWB_EXIT_IO;
    case FX_ERR_NO_DEVICE:
      return FXWB_EXIT_UNAVAILABLE;
    case FX_ERR_PARSE:
    case FX_ERR_INVALID:
    case FX_ERR_UNSUPPORTED:
    case FX_ERR_NOT_FOUND:
    case FX_ERR_NOMEM:
    case FX_ERR_BACKEND:
    case FX_ERR_CANCELLED:
    case FX_STATUS_COUNT:
    default:
      return FXWB_EXIT_FAILURE;
    }
}

gboolean
fxwb_stderr_is_tty (void)
{
  return isatty (STDERR_FILENO);
}

void
fxwb_progress (const char *label, double fraction)
{
  enum { WIDTH = 30 };
  char bar[WIDTH + 1];
  int filled;

  if (!fxwb_stderr_is_tty ())
    return;
  fraction = CLAMP (fraction, 0.0, 1.0);
  filled = (int) (fraction * WIDTH);
  for (int i = 0; i < WIDTH; i++)
    bar[i] = i < filled ? '#' : '.';
  bar[WIDTH] = '\0';
  fprintf (stderr, "\r%s [%s] %3d%%", label, bar, (int) (fraction * 100));
  fflush (stderr);
}

void
fxwb_progress_done (void)
{
  if (fxwb_stderr_is_tty ())
    fputs ("\r\033[K", stderr);
}

void
fxwb_report_lock_wait (const char *path, double waited_s, void *user_data)
{
  (void) user_data;
  fprintf (stderr, "fxwb: waiting for the workspace lock held by another fxwb (%s, %.0f s)...\n", path, waited_s);
}
