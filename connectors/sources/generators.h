/* generators.h - the built-in event generator sources: NEXMark, YSB,
 * cluster monitoring (cm), read-only key/timestamp pairs (ro) and datagen.
 * Each is a const connector registered by name in connectors/registry.c. */
#ifndef SLUICE_GENERATORS_H
#define SLUICE_GENERATORS_H

#include "sluice/connectors/connector.h"

extern const sl_source_connector sl_source_nexmark;
extern const sl_source_connector sl_source_ysb;
extern const sl_source_connector sl_source_cm;
extern const sl_source_connector sl_source_ro;
extern const sl_source_connector sl_source_datagen;

#endif
