/* fxwb-report-svg.c: draws a report's graphs with Graphviz in-process (agmemread of the dot text the engine wrote
   with every input string escaped, gvLayout, gvRenderData to SVG); no dot program is run. */
#include "fxwb-report.h"

#include <string.h>

#if FXWB_HAVE_GVC
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

/* Graphviz keeps global state: one context, one graph at a time. */
static GMutex gvc_lock;
static GVC_t *gvc_context;

char *
fxwb_report_svg (const char *dot, size_t len, void *user_data)
{
  char *copy = NULL;
  (void) len;
  (void) user_data;
  g_mutex_lock (&gvc_lock);
  if (!gvc_context)
    gvc_context = gvContext ();
  Agraph_t *g = agmemread (dot);
  if (g && gvLayout (gvc_context, g, "dot") == 0)
    {
      char *data = NULL;
      unsigned int length = 0;
      if (gvRenderData (gvc_context, g, "svg", &data, &length) == 0 && data)
        copy = strndup (data, length);
      gvFreeRenderData (data);
      gvFreeLayout (gvc_context, g);
    }
  if (g)
    agclose (g);
  g_mutex_unlock (&gvc_lock);
  return copy;
}
#else
char *
fxwb_report_svg (const char *dot, size_t len, void *user_data)
{
  (void) dot;
  (void) len;
  (void) user_data;
  return NULL;
}
#endif
