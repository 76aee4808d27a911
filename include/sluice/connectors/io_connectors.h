/* io_connectors.h - the file and database connectors of runtime/ (CSV
 * source, the sinks), for the registry in connectors.c.  The generators
 * declare theirs in generators.h. */
#ifndef SLUICE_RUNTIME_IO_CONNECTORS_H
#define SLUICE_RUNTIME_IO_CONNECTORS_H

#include <stdio.h>

#include "sluice/common/strbuf.h"
#include "sluice/connectors/connector.h"

/* 'filesystem': a file or a directory of parts (source_parts.c), read by
 * sl_source_filesystem, the reader of one CSV file (source_filesystem.c). */
extern const sl_source_connector sl_source_files;
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

/* ---- part files (sink_part_file.c) --------------------------------------
 *
 * A filesystem sink writes its rows, as Flink's does, into part files
 * named <dir>/part-<id>-<n>.csv, each written as the hidden
 * <dir>/.part-<id>-<n>.csv.inprogress and renamed to its final name once
 * complete (flushed and synced), so a reader that skips hidden files (the
 * filesystem source does) never sees a partial one, whatever happens to
 * the writer.  <id> is random per sink, so several queries can write one
 * directory. */
typedef struct fs_part {
  FILE *fp;    /* open while being written, else NULL */
  char *tmp;   /* the hidden name it is written (or kept pending) under */
  char *final; /* its name once finished */
  uint64_t bytes;
  uint64_t safe_bytes; /* whole rows, at the last fs_part_mark_safe */
  double opened;       /* sl_clock_seconds() when created */
  bool broken;         /* a write failed: its end is not a whole row */
} fs_part;

/* mkdir -p path (mode 0755): 0, or -1 with errno.  path is restored. */
int fs_make_dirs(char *path);
/* A new random part-name id (16 hex digits) into id[17]. */
void fs_part_new_id(char id[17]);
/* Create dir/.part-<id>-<n>.csv.inprogress (mode 0644, never an existing
 * file).  table names the table in messages. */
int fs_part_open(fs_part *p, const char *dir, const char *id, unsigned n,
                 const char *table, sl_error *err);
int fs_part_write(fs_part *p, const char *data, size_t len, const char *table,
                  sl_error *err);
static inline void fs_part_mark_safe(fs_part *p) {
  if (!p->broken)
    p->safe_bytes = p->bytes;
}
/* Flush, sync and close the file, keeping only its first safe_bytes bytes
 * when whole_only (an unbounded query that was stopped); then publish
 * (rename to the final name) unless publish is false (it stays pending
 * under its hidden name, for fs_part_publish later).  A file left empty
 * is removed.  p is reset (its names freed) unless it stays pending. */
int fs_part_finish(fs_part *p, bool whole_only, bool publish, const char *table,
                   sl_error *err);
/* Rename a finished, pending part to its final name; frees its names. */
int fs_part_publish(fs_part *p, const char *table, sl_error *err);
/* Close and remove it (a failed bounded query); frees its names. */
void fs_part_discard(fs_part *p);

/* The rolling policy of a filesystem sink table (Flink's options):
 * 'sink.rolling-policy.file-size' (default 128 MB), 'sink.rolling-policy.
 * rollover-interval' (30 min), 'sink.rolling-policy.check-interval'
 * (1 min: how often the time is checked). */
typedef struct fs_rolling {
  int64_t file_bytes;
  double rollover_seconds;
  double check_seconds;
} fs_rolling;
int fs_rolling_read(const sl_table_def *t, fs_rolling *r, sl_error *err);
/* An unbounded query's parts roll at each fired window (commit), but no
 * more often than this: windows that fire faster (a replay whose event
 * time runs ahead of the clock) share a part, rolled at the next round. */
#define FS_COMMIT_ROLL_GAP_SECONDS 0.1

/* Remove a directory tree we made or replaced (no symlink is followed). */
void fs_remove_tree(const char *dir);

/* A filesystem sink table with PARTITIONED BY (sink_partitions.c): rows
 * into <root>/<col>=<value>/... files, partitions committed by the
 * watermark or the clock.  first: the result field of the table's first
 * column (1 when a changelog's op comes first).  fmt and root must live
 * as long. */
typedef struct fs_partitions fs_partitions;
int fs_partitions_open(const sl_table_def *t, const sl_row_layout *layout,
                       int first, const csv_format *fmt, const char *root,
                       bool unbounded, fs_partitions **out, sl_error *err);
int fs_partitions_write(fs_partitions *fp, const sl_buffer *rows,
                        sl_error *err);
int fs_partitions_watermark(fs_partitions *fp, int64_t wm, sl_error *err);
/* A fired window is complete: an unbounded query's open files roll. */
int fs_partitions_commit(fs_partitions *fp, sl_error *err);
/* ok: commit every partition; else remove the files in progress (of an
 * unbounded query: keep their rows up to the last round, finished).
 * Frees fp (err may be NULL when !ok). */
int fs_partitions_close(fs_partitions *fp, bool ok, sl_error *err);

/* Check that every option of t is one of `allowed` (NULL-terminated);
 * SL_EINVAL naming the option and listing the allowed ones otherwise. */
int sl_check_options(const sl_table_def *t, const char *connector,
                     const char *const *allowed, sl_error *err);

#endif
