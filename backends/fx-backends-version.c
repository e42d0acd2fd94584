/* fx-backends-version.c: identifies the backends library build. */
#include "fx/common.h"

const char *fx_backends_version (void);

const char *
fx_backends_version (void)
{
  return FX_VERSION_STRING;
}
