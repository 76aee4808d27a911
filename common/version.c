/* version.c - the project's version (version.h); CMake passes it in. */
#include "sluice/common/version.h"

const char *sl_version(void) {
  return SLUICE_VERSION;
}
