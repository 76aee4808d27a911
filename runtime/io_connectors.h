/* io_connectors.h - the file and database connectors of runtime/ (CSV
 * source, the sinks), for the registry in connectors.c.  The generators
 * declare theirs in generators.h. */
#ifndef SLUICE_RUNTIME_IO_CONNECTORS_H
#define SLUICE_RUNTIME_IO_CONNECTORS_H

#include "sluice/connector.h"
#include "sluice/strbuf.h"

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

/* One CSV line of row (layout l) appended to b, the fields with skip[i]
 * set left out (skip may be NULL), then '\n' (sink_filesystem.c). */
void sl_csv_format_row(sl_strbuf *b, const csv_format *f,
                       const sl_row_layout *l, const uint8_t *row,
                       const bool *skip);

/* A filesystem sink table with PARTITIONED BY (sink_partitions.c): rows
 * into <root>/<col>=<value>/... files, partitions committed by the
 * watermark or the clock.  first: the result field of the table's first
 * column (1 when a changelog's op comes first).  fmt and root must live
 * as long. */
typedef struct fs_partitions fs_partitions;
int fs_partitions_open(const sl_table_def *t, const sl_row_layout *layout,
                       int first, const csv_format *fmt, const char *root,
                       fs_partitions **out, sl_error *err);
int fs_partitions_write(fs_partitions *fp, const sl_buffer *rows,
                        sl_error *err);
int fs_partitions_watermark(fs_partitions *fp, int64_t wm, sl_error *err);
/* ok: commit every partition; else remove the files in progress.  Frees
 * fp (err may be NULL when !ok). */
int fs_partitions_close(fs_partitions *fp, bool ok, sl_error *err);

/* Check that every option of t is one of `allowed` (NULL-terminated);
 * SL_EINVAL naming the option and listing the allowed ones otherwise. */
int sl_check_options(const sl_table_def *t, const char *connector,
                     const char *const *allowed, sl_error *err);

#endif
