/* csv_int.h - the CSV scanner (csv_scan.c) as the filesystem source
 * (source_filesystem.c) calls it. */
#ifndef SLUICE_CSV_INT_H
#define SLUICE_CSV_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "sluice/connectors/io_connectors.h"

/* One field of the current record. */
typedef struct csv_span {
  const char *p; /* the bytes (into the file, or scratch when unescaped) */
  size_t len;
  size_t offset; /* of the field's first byte in the file */
  bool quoted;
  bool escaped; /* holds "" pairs: needs unescaping */
} csv_span;

typedef enum scan_result {
  SCAN_OK,
  SCAN_SKIP, /* an empty line or a comment: no row */
  SCAN_BAD,  /* malformed; the scan_error says where and what */
} scan_result;

/* The first problem of a malformed record. */
typedef struct scan_error {
  size_t offset; /* of the offending field's first byte */
  int col;       /* its CSV column, 0-based */
  const char *why;
} scan_error;

/* The record at *pos: its fields' spans (up to max; spans NULL only
 * skips), their count, *pos moved past its line break. */
scan_result sl_csv_scan_record(const csv_format *f, const char *data,
                               size_t size, size_t *pos, csv_span *spans,
                               int max, int *nfields, scan_error *bad);
/* The first record start at or after x. */
size_t sl_csv_record_start(const csv_format *f, const char *data, size_t size,
                           size_t x);
/* The index of the first byte of text that is not valid UTF-8, or len. */
size_t sl_csv_utf8_invalid_at(const char *text, size_t len);

#endif
