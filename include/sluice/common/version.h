/* version.h - the project's version, as `sluice --version` prints it and
 * as a coordinator and its nodes compare it when they connect. */
#ifndef SLUICE_VERSION_H
#define SLUICE_VERSION_H

const char *sl_version(void);

#endif
