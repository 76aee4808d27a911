/* io_connectors.h - the file and database connectors of runtime/ (CSV
 * source, the sinks), for the registry in connectors.c.  The generators
 * declare theirs in generators.h. */
#ifndef SLUICE_RUNTIME_IO_CONNECTORS_H
#define SLUICE_RUNTIME_IO_CONNECTORS_H

#include "sluice/connector.h"

extern const sl_source_connector sl_source_filesystem;

extern const sl_sink_connector sl_sink_shell;
extern const sl_sink_connector sl_sink_filesystem;
extern const sl_sink_connector sl_sink_sqlite;
extern const sl_sink_connector sl_sink_blackhole;
extern const sl_sink_connector sl_sink_print;

/* The CSV dialect of a filesystem table (source_filesystem.c reads it from
 * the options; the CSV sink writes the same dialect). */
typedef struct csv_format {
  char delim;
  int quote; /* -1: no quoting */
  bool allow_comments;
  bool ignore_errors;
  bool skip_first;
  const char *null_literal; /* or NULL */
} csv_format;

int sl_csv_read_format(const sl_table_def *t, csv_format *f, sl_error *err);

/* Check that every option of t is one of `allowed` (NULL-terminated);
 * SL_EINVAL naming the option and listing the allowed ones otherwise. */
int sl_check_options(const sl_table_def *t, const char *connector,
                     const char *const *allowed, sl_error *err);

#endif
