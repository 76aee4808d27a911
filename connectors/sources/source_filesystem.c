/* source_filesystem.c - 'connector' = 'filesystem', 'format' = 'csv'.
 *
 * The file is mapped read-only and parsed in place: one pass per record
 * finds the field spans (csv_scan.c; RFC 4180: quoted fields may hold the
 * delimiter, newlines and "" for a quote; CRLF or LF ends a record), then
 * only the fields the query reads are converted into the row.  Quoted
 * fields with "" escapes are unescaped into a per-instance scratch
 * buffer, so no row costs a malloc.
 *
 * Options (see csv_options below; unknown ones are an error, as in Flink):
 *   'path'                         the file, as given (a 'file://' prefix
 *                                  is dropped; no ~ or $VAR expansion)
 *   'format' = 'csv'               required
 *   'csv.field-delimiter'          one character, default ','; '\t' = tab
 *   'csv.quote-character'          default '"'
 *   'csv.disable-quote-character'  'true': quotes are ordinary characters
 *   'csv.allow-comments'           'true': lines starting with # are skipped
 *   'csv.ignore-parse-errors'      'true': malformed rows are skipped and
 *                                  counted (stats.skipped_rows)
 *   'csv.null-literal'             a field equal to it is NULL
 *   'csv.ignore-first-line'        'true': the first record is a header
 *                                  (Flink's legacy 'format.ignore-first-line';
 *                                  the default is no header, as in Flink)
 * NULLs: an empty unquoted field is NULL; a quoted empty field ("") is the
 * empty string for string columns and NULL for the others.  Empty lines
 * are skipped.  A record with fewer or more fields than the table has
 * columns is malformed.
 *
 * Workers.  A file smaller than 'csv.split-min-bytes' (default 1 MiB) is
 * read whole by worker 0.  Otherwise worker w of n owns the records whose first
 * byte lies in [size*w/n, size*(w+1)/n).  Its first record is found by walking
 * records with the same scanner the parser uses, from the start of the line
 * that holds the split point when no quote character occurs before it (the
 * common case: a memchr over the prefix), else from the start of the file,
 * so a quoted newline can never be mistaken for a record boundary.  Every
 * worker computes the boundaries the same way, so the ranges partition the
 * records exactly.  Rows come out in file order per worker.
 *
 * Following ('source.monitor-interval' = '1 s'): the source is unbounded.
 * It reads the file as above, and then the instance that owns its end
 * (worker 0 for a small file, else the last) checks every interval whether
 * the file has grown and reads the records appended since; it never ends
 * by itself (Ctrl-C, .timeout or a LIMIT ends the query).  A record is read
 * once its line is complete (the file holds a line break after it), so a
 * writer that appends whole lines is never read half-way.  A followed
 * file that shrinks, is removed, or whose path comes to name another file
 * is an error.  (Flink's option of this name watches a directory for new
 * files, which source_parts.c does when 'path' is a directory; a file is
 * followed as tail -f does.)
 *
 * A file that shrinks while it is read (followed or not) is an error
 * naming it, never a SIGBUS: the mapping is read inside a guard
 * (mapped_guard.h) that turns a fault in it into that error, and the file
 * is measured again at the end of the read and at a malformed record (a
 * shrink within the reader's page reads zeros, not a fault).  A file
 * removed while it is read once is read whole: the open descriptor keeps
 * its bytes.  A UTF-8 byte order mark at the start of the file is
 * skipped.
 *
 * Errors name file:line:column where line is the physical line and column
 * the 1-based byte column of the offending field's first byte (both
 * counted only when an error is reported), so an editor jumps to it; the
 * message also names the table column.  Malformed: a wrong number of
 * fields (too few points at the record's end, too many at the first extra
 * field), a value that does not parse as its column's type (value_text.c:
 * out of range numbers included), a quote inside an unquoted field or
 * after a closing quote, a quote never closed, invalid UTF-8 in a string
 * column, and a record whose strings do not fit in one buffer ('sluice.
 * buffer-size', the only length limit).  Only the fields a query reads
 * are converted, so only they are checked.  With 'csv.ignore-parse-errors'
 * every one of these skips its record and counts it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "csv_int.h"
#include "sluice/common/clock.h"
#include "sluice/connectors/io_connectors.h"
#include "sluice/connectors/mapped_guard.h"
#include "sluice/connectors/path_policy.h"
#include "sluice/row/value_text.h"

static const char *const csv_options[] = {
    "connector",
    "path",
    "format",
    "csv.field-delimiter",
    "csv.quote-character",
    "csv.disable-quote-character",
    "csv.allow-comments",
    "csv.ignore-parse-errors",
    "csv.null-literal",
    "csv.ignore-first-line",
    "csv.split-min-bytes",
    "source.monitor-interval",
    /* A sink table's (sink_partitions.c): */
    "sink.partition-commit.trigger",
    "sink.partition-commit.delay",
    "sink.partition-commit.policy.kind",
    "sink.partition-commit.success-file.name",
    "partition.time-extractor.timestamp-pattern",
    "sink.rolling-policy.file-size",
    "sink.rolling-policy.rollover-interval",
    "sink.rolling-policy.check-interval",
    NULL,
};

struct sl_source {
  const sl_source_spec *spec;
  char *path; /* for messages: as the user wrote it */
  const char *data;
  size_t size;     /* the bytes this instance may scan */
  size_t map_size; /* the bytes mapped at data */
  /* The file, open while it is read: its size now says whether it shrank
   * under the mapping, and a followed file grows through it (the path
   * may name another file by then). */
  int fd;
  dev_t dev;
  ino_t ino;
  sl_mapped_guard guard; /* a SIGBUS in data: the file shrank */
  /* Following the file ('source.monitor-interval'): check for growth
   * every monitor_ms, next at next_check (sl_clock_seconds); header_due:
   * the header line ('csv.ignore-first-line') has not come yet. */
  bool follow, header_due;
  int64_t monitor_ms;
  double next_check;
  size_t pos, end; /* the next record; the end of this worker's range */
  size_t begin;
  csv_format fmt;
  int ncols;       /* CSV columns = table leaves */
  csv_span *spans; /* ncols */
  char *scratch;   /* unescaped fields of the current record */
  size_t scratch_cap;
  sl_leaf_columns leaves;
  sl_arena arena;
  sl_source_stats stats;
};

/* ---- options ------------------------------------------------------------ */

/* 'file:///x' and 'file:/x' -> '/x'. */
static const char *strip_scheme(const char *path) {
  if (strncmp(path, "file://", 7) == 0)
    return path + 7;
  if (strncmp(path, "file:", 5) == 0)
    return path + 5;
  return path;
}

static int one_char(const sl_table_def *t, const char *key, char fallback,
                    int *out, sl_error *err) {
  const char *v = sl_table_def_option(t, key);
  if (!v) {
    *out = fallback;
    return SL_OK;
  }
  if (strcmp(v, "\\t") == 0) {
    *out = '\t';
    return SL_OK;
  }
  if (strlen(v) != 1 || v[0] == '\n' || v[0] == '\r')
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': option '%s' must be a single character "
                        "(not a line break; '\\t' for a tab), got '%s'",
                        t->name, key, v);
  *out = (unsigned char)v[0];
  return SL_OK;
}

/* 'source.monitor-interval' in milliseconds: 0 when absent (the file is
 * read once), more than 0 when given. */
static int monitor_interval(const sl_table_def *t, int64_t *ms, sl_error *err) {
  int rc = sl_option_duration_ms(t, "source.monitor-interval", 0, ms, err);
  if (rc == SL_OK && sl_table_def_option(t, "source.monitor-interval") &&
      *ms <= 0)
    rc = sl_error_set(err, SL_EINVAL,
                      "table '%s': 'source.monitor-interval' must be more "
                      "than 0 (leave it out to read the file once)",
                      t->name);
  return rc;
}

int sl_csv_read_format(const sl_table_def *t, csv_format *f, sl_error *err) {
  int rc = sl_check_options(t, "filesystem", csv_options, err);
  if (rc)
    return rc;
  const char *path = sl_table_def_option(t, "path");
  if (!path || !*strip_scheme(path))
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': the filesystem connector needs a file: "
                        "add 'path' = '/some/file.csv' to the WITH clause",
                        t->name);
  const char *format = sl_table_def_option(t, "format");
  if (!format)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': the filesystem connector needs a "
                        "format: add 'format' = 'csv'",
                        t->name);
  if (strcasecmp(format, "csv") != 0)
    return sl_error_set(err, SL_EUNSUPPORTED,
                        "table '%s': format '%s' is not supported by the "
                        "filesystem connector; only 'csv' is",
                        t->name, format);
  int delim, quote;
  bool no_quote;
  if ((rc = one_char(t, "csv.field-delimiter", ',', &delim, err)) ||
      (rc = one_char(t, "csv.quote-character", '"', &quote, err)) ||
      (rc = sl_option_bool(t, "csv.disable-quote-character", false, &no_quote,
                           err)) ||
      (rc = sl_option_bool(t, "csv.allow-comments", false, &f->allow_comments,
                           err)) ||
      (rc = sl_option_bool(t, "csv.ignore-parse-errors", false,
                           &f->ignore_errors, err)) ||
      (rc = sl_option_bool(t, "csv.ignore-first-line", false, &f->skip_first,
                           err)))
    return rc;
  if (!no_quote && delim == quote)
    return sl_error_set(err, SL_EINVAL,
                        "table '%s': 'csv.field-delimiter' and "
                        "'csv.quote-character' are both '%c'; pick different "
                        "characters",
                        t->name, delim);
  f->delim = (char)delim;
  f->quote = no_quote ? -1 : quote;
  f->null_literal = sl_table_def_option(t, "csv.null-literal");
  int64_t ms;
  return monitor_interval(t, &ms, err);
}

static int csv_validate(const sl_table_def *t, sl_error *err) {
  csv_format f;
  return sl_csv_read_format(t, &f, err);
}

/* ---- open / next / close --------------------------------------------------
 */

/* The end of the last complete line in data[from, size): just past its
 * line break, or from when there is none. */
static size_t complete_lines_end(const char *data, size_t from, size_t size) {
  for (size_t i = size; i > from; i--)
    if (data[i - 1] == '\n')
      return i;
  return from;
}

/* What comes before the first record belongs to whoever owns byte 0, and
 * is skipped once it is there: a UTF-8 byte order mark (which some
 * programs write at the start of a CSV file; it is no part of the first
 * field, as in DuckDB and Python's utf-8-sig), then the header line
 * ('csv.ignore-first-line'). */
static void skip_preamble(sl_source *s) {
  if (s->pos == 0 && s->end >= 3 && memcmp(s->data, "\xEF\xBB\xBF", 3) == 0)
    s->pos = 3;
  if (!s->header_due || s->end == 0)
    return;
  int nf;
  scan_error bad;
  size_t p = s->pos;
  while (p < s->end && sl_csv_scan_record(&s->fmt, s->data, s->size, &p, NULL,
                                          0, &nf, &bad) == SCAN_SKIP)
    ;
  s->pos = p;
  s->header_due = false;
}

/* Open path for reading and stat it: the descriptor, or -errno. */
static int open_stat(const char *path, struct stat *st) {
  int fd = sl_path_open(path, O_RDONLY | O_CLOEXEC, 0); /* path_policy.h */
  if (fd >= 0 && fstat(fd, st) != 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  return fd;
}

/* The file shrank from the mapped size to `size` bytes. */
static int shrank_error(const sl_source *s, size_t size, sl_error *err) {
  return sl_error_set(err, SL_EIO,
                      "table '%s': the file '%s' shrank from %zu to %zu bytes "
                      "while it was %s; %s",
                      s->spec->table->name, s->path, s->map_size, size,
                      s->follow ? "followed for new records" : "read",
                      s->follow ? "a followed file may only grow (append to "
                                  "it rather than rewrite it)"
                                : "rewrite a file only when no query reads it "
                                  "(write a new file and rename it over the "
                                  "old one)");
}

/* SL_OK when the file still holds every mapped byte, else the error
 * saying it shrank. */
static int check_not_shrunk(const sl_source *s, sl_error *err) {
  struct stat st;
  if (s->fd < 0 || fstat(s->fd, &st) != 0 || (size_t)st.st_size >= s->map_size)
    return SL_OK;
  return shrank_error(s, (size_t)st.st_size, err);
}

/* A SIGBUS in the mapping (the guard jumped here): the file shrank under
 * the reader, or the system could not read that part of it. */
static int mapping_fault(const sl_source *s, sl_error *err) {
  int rc = check_not_shrunk(s, err);
  if (rc != SL_OK)
    return rc;
  return sl_error_set(err, SL_EIO,
                      "table '%s': reading '%s' failed at byte %zu of %zu: "
                      "the system could not read that part of the file (an "
                      "I/O error, or the file changed while it was read)",
                      s->spec->table->name, s->path, s->guard.fault_offset,
                      s->map_size);
}

/* Following: when the file has grown, map it again and make the complete
 * lines appended since this instance's.  Nothing new is not an error; a
 * file that shrank, or that its path no longer names, is: no more records
 * can come. */
static int follow_growth(sl_source *s, sl_error *err) {
  struct stat st, at_path;
  if (stat(s->path, &at_path) != 0) {
    int e = errno;
    if (e == ENOENT)
      return sl_error_set(err, SL_EIO,
                          "table '%s': the file '%s' was removed while it was "
                          "followed for new records",
                          s->spec->table->name, s->path);
    return sl_error_set(err, SL_EIO,
                        "table '%s': the file '%s' (followed for new records) "
                        "cannot be read any more: %s",
                        s->spec->table->name, s->path, strerror(e));
  }
  if (at_path.st_dev != s->dev || at_path.st_ino != s->ino)
    return sl_error_set(err, SL_EIO,
                        "table '%s': the file '%s' was replaced by another "
                        "file while it was followed for new records; a "
                        "followed file may only grow (append to it rather "
                        "than rewrite it)",
                        s->spec->table->name, s->path);
  if (fstat(s->fd, &st) != 0)
    return sl_error_set(err, SL_EIO, "table '%s': cannot stat '%s': %s",
                        s->spec->table->name, s->path, strerror(errno));
  size_t size = (size_t)st.st_size;
  if (size < s->map_size)
    return shrank_error(s, size, err);
  if (size == s->map_size)
    return SL_OK;
  void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, s->fd, 0);
  int e = errno;
  if (m == MAP_FAILED)
    return sl_error_set(err, SL_EIO, "cannot map '%s' again: %s", s->path,
                        strerror(e));
  if (s->data)
    munmap((void *)s->data, s->map_size);
  s->data = m;
  s->size = s->map_size = size;
  s->end = complete_lines_end(s->data, s->end, size);
  skip_preamble(s);
  return SL_OK;
}

/* Worker w of n: the records it owns (see the comment at the top), past
 * what precedes the first record when they start the file.  This reads
 * the mapping: the file may have shrunk since it was measured. */
static int find_range(sl_source *s, int w, int n, sl_error *err) {
  if (sigsetjmp(s->guard.env, 0) != 0)
    return mapping_fault(s, err);
  sl_mapped_guard_enter(&s->guard, &s->data, &s->map_size);
  size_t x0 = (size_t)((unsigned __int128)s->size * (unsigned)w / (unsigned)n);
  size_t x1 =
      (size_t)((unsigned __int128)s->size * (unsigned)(w + 1) / (unsigned)n);
  s->begin = s->pos = sl_csv_record_start(&s->fmt, s->data, s->size, x0);
  s->end = sl_csv_record_start(&s->fmt, s->data, s->size, x1);
  if (s->follow)
    s->end = complete_lines_end(s->data, s->begin, s->size);
  s->header_due = s->fmt.skip_first && s->pos == 0;
  skip_preamble(s);
  sl_mapped_guard_leave(&s->guard);
  return SL_OK;
}

static void csv_close(sl_source *s) {
  if (!s)
    return;
  if (s->data)
    munmap((void *)s->data, s->map_size);
  if (s->fd >= 0)
    close(s->fd);
  free(s->scratch);
  free(s->path);
  sl_arena_free(&s->arena);
  free(s);
}

static int csv_open(const sl_source_spec *spec, sl_source **out,
                    sl_error *err) {
  *out = NULL;
  const sl_table_def *t = spec->table;
  sl_source *s = calloc(1, sizeof *s);
  if (!s)
    return sl_error_set(err, SL_ENOMEM, "out of memory opening a CSV source");
  s->spec = spec;
  s->fd = -1;
  sl_arena_init(&s->arena, 0);
  int rc = sl_csv_read_format(t, &s->fmt, err);
  if (rc == SL_OK)
    rc = sl_mapped_guard_install(err);
  if (rc) {
    csv_close(s);
    return rc;
  }
  sl_table_leaf_columns(&s->arena, t, &s->leaves);
  s->ncols = s->leaves.n;
  s->spans = SL_ANEW_N(&s->arena, csv_span, s->ncols + 1);
  for (int i = 0; i < spec->layout->nfields; i++)
    if (spec->leaf_index[i] < 0 || spec->leaf_index[i] >= s->ncols) {
      csv_close(s);
      return sl_error_set(err, SL_EINTERNAL,
                          "CSV source of table '%s': field %d asks for "
                          "column %d of %d",
                          t->name, i, spec->leaf_index[i], s->ncols);
    }

  /* On a node daemon: inside its --data-dir (path_policy.h). */
  rc = sl_path_resolve(strip_scheme(sl_table_def_option(t, "path")), &s->path,
                       err);
  if (rc != SL_OK) {
    csv_close(s);
    return rc;
  }
  struct stat st;
  int fd = open_stat(s->path, &st);
  if (fd < 0) {
    rc = sl_error_set(err, SL_EIO,
                      "table '%s': cannot open '%s' for reading: %s; check "
                      "the table's 'path' option",
                      t->name, s->path, strerror(-fd));
    csv_close(s);
    return rc;
  }
  s->fd = fd;
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  if (!S_ISREG(st.st_mode)) {
    rc = sl_error_set(err, SL_EIO,
                      "table '%s': '%s' is not a regular file; 'path' must "
                      "name a CSV file",
                      t->name, s->path);
    csv_close(s);
    return rc;
  }
  s->size = (size_t)st.st_size;
  if (s->size > 0) {
    void *m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int e = errno;
      rc = sl_error_set(err, SL_EIO, "table '%s': cannot map '%s': %s", t->name,
                        s->path, strerror(e));
      csv_close(s);
      return rc;
    }
    madvise(m, s->size, MADV_SEQUENTIAL);
    s->data = m;
    s->map_size = s->size;
  }

  int w = spec->worker, n = spec->nworkers > 0 ? spec->nworkers : 1;
  /* A small file is read whole by worker 0: splitting it buys nothing,
   * and one reader keeps event-time lateness (which depends on the order
   * each worker sees) the same at every worker count. */
  int64_t min_split;
  rc = sl_option_int(t, "csv.split-min-bytes", 1 << 20, &min_split, err);
  if (rc != SL_OK) {
    csv_close(s);
    return rc;
  }
  if ((int64_t)s->size < min_split) {
    n = 1;
    if (w > 0)
      s->size = 0; /* the other workers read nothing */
  }
  rc = monitor_interval(t, &s->monitor_ms, err);
  if (rc != SL_OK) {
    csv_close(s);
    return rc;
  }
  /* The owner of the file's end follows it: only whole lines are its. */
  s->follow = s->monitor_ms > 0 && w == n - 1;
  rc = find_range(s, w, n, err);
  if (rc != SL_OK) {
    csv_close(s);
    return rc;
  }
  *out = s;
  return SL_OK;
}

/* The 1-based line and byte column of offset.  Lines are counted only
 * here, when an error is reported, never per record. */
static void position_of(const sl_source *s, size_t offset, long *line,
                        size_t *column) {
  const char *p = s->data, *e = s->data + offset, *line_start = s->data;
  *line = 1;
  while (p < e && (p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
    (*line)++;
    line_start = ++p;
  }
  *column = (size_t)(e - line_start) + 1;
}

/* A malformed record: skipped and counted, or an error naming
 * file:line:column of offset (the offending field's first byte) and the
 * table column col (-1 or >= ncols: none). */
static int bad_record(sl_source *s, size_t offset, int col, const char *what,
                      sl_error *err) {
  if (s->fmt.ignore_errors) {
    s->stats.skipped_rows++;
    return SL_OK;
  }
  /* Zeros where a shrunk file's last page ends are no malformed record. */
  int rc = check_not_shrunk(s, err);
  if (rc != SL_OK)
    return rc;
  const char *colname =
      col >= 0 && col < s->ncols ? s->leaves.names[col] : NULL;
  char where[160] = "";
  if (colname)
    snprintf(where, sizeof where, "column '%s' of table '%s'", colname,
             s->spec->table->name);
  else
    snprintf(where, sizeof where, "table '%s'", s->spec->table->name);
  long line;
  size_t column;
  position_of(s, offset, &line, &column);
  return sl_error_set(err, SL_EINVAL,
                      "%s:%ld:%zu: %s (%s; 'csv.ignore-parse-errors' = 'true' "
                      "skips malformed rows)",
                      s->path, line, column, what, where);
}

/* Unescape the "" pairs of escaped spans into scratch. */
static int unescape(sl_source *s, int nspans, sl_error *err) {
  size_t need = 0;
  for (int c = 0; c < nspans; c++)
    if (s->spans[c].escaped)
      need += s->spans[c].len;
  if (need > s->scratch_cap) {
    size_t cap = s->scratch_cap ? s->scratch_cap : 4096;
    while (cap < need)
      cap *= 2;
    char *p = realloc(s->scratch, cap);
    if (!p)
      return sl_error_set(err, SL_ENOMEM,
                          "out of memory reading '%s' (a record of %zu "
                          "bytes)",
                          s->path, need);
    s->scratch = p;
    s->scratch_cap = cap;
  }
  char *o = s->scratch;
  for (int c = 0; c < nspans; c++) {
    csv_span *sp = &s->spans[c];
    if (!sp->escaped)
      continue;
    char *start = o;
    for (size_t k = 0; k < sp->len; k++) {
      *o++ = sp->p[k];
      if (sp->p[k] == (char)s->fmt.quote)
        k++; /* the second quote of a pair */
    }
    sp->p = start;
    sp->len = (size_t)(o - start);
  }
  return SL_OK;
}

/* Field i of row from sp, or SL_EINVAL saying why in perr (left empty
 * when malformed rows are skipped: no message is formatted for them). */
static int parse_field(sl_source *s, const csv_span *sp, int i, uint8_t *row,
                       sl_buffer *buf, sl_error *perr) {
  const sl_row_layout *layout = s->spec->layout;
  const sl_field *f = &layout->fields[i];
  sl_error *e = s->fmt.ignore_errors ? NULL : perr;
  bool null = sp->len == 0 && (!sp->quoted || f->ptype != SL_P_STR);
  if (!null && s->fmt.null_literal && !sp->quoted &&
      strlen(s->fmt.null_literal) == sp->len &&
      memcmp(sp->p, s->fmt.null_literal, sp->len) == 0)
    null = true;
  if (null) {
    if (f->type->not_null)
      return sl_error_set(e, SL_EINVAL,
                          "the column is NOT NULL but the field is empty");
    sl_row_set_null(row, i, true);
    return SL_OK;
  }
  if (f->ptype == SL_P_STR) {
    /* Strings are compared, hashed and printed as UTF-8: refuse bytes
     * that are not, as PostgreSQL and DuckDB do, rather than pass them
     * on to every sink. */
    size_t at = sl_csv_utf8_invalid_at(sp->p, sp->len);
    if (at < sp->len)
      return sl_error_set(e, SL_EINVAL,
                          "invalid UTF-8 in a string (byte 0x%02X at byte "
                          "%zu of the value)",
                          (unsigned char)sp->p[at], at + 1);
  }
  return sl_value_parse(sp->p, sp->len, layout, row, i, buf, e);
}

/* Convert the current record's spans into a new row of buf.  Returns
 * SL_OK (row added or record skipped) or an error. */
static int emit_row(sl_source *s, sl_buffer *buf, sl_error *err) {
  const sl_row_layout *layout = s->spec->layout;
  uint32_t heap_before = buf->heap_used;
  uint8_t *row = sl_buffer_append(buf);
  for (int i = 0; i < layout->nfields; i++) {
    int col = s->spec->leaf_index[i];
    const csv_span *sp = &s->spans[col];
    sl_error perr = {0};
    int rc = parse_field(s, sp, i, row, buf, &perr);
    if (rc != SL_OK) {
      buf->nrows--;
      buf->heap_used = heap_before;
      if (rc != SL_EINVAL) {
        sl_error_move(err, &perr);
        return rc;
      }
      rc = bad_record(s, sp->offset, col,
                      perr.message ? perr.message : "malformed field", err);
      sl_error_clear(&perr);
      return rc;
    }
  }
  s->stats.rows++;
  return SL_OK;
}

/* Too few or too many fields: too few points just past the record's last
 * byte (where the first missing field would start) and names that column;
 * too many points at the first extra field (spans[ncols]). */
static void field_count_error(const sl_source *s, size_t begin, size_t next,
                              int nf, scan_error *bad, char *what, size_t cap) {
  if (nf < s->ncols) {
    size_t e = next;
    if (e > begin && s->data[e - 1] == '\n')
      e--;
    if (e > begin && s->data[e - 1] == '\r')
      e--;
    bad->offset = e;
    bad->col = nf;
  } else {
    bad->offset = s->spans[s->ncols].offset;
    bad->col = s->ncols;
  }
  snprintf(what, cap, "%s (expected %d, got %d)",
           nf < s->ncols ? "too few fields" : "too many fields", s->ncols, nf);
  bad->why = what;
}

/* The bytes the current record's long strings take in a buffer's heap,
 * and in *longest the CSV column of the longest (-1: none). */
static size_t string_bytes(const sl_source *s, int *longest) {
  size_t heap = 0, most = 0;
  *longest = -1;
  for (int i = 0; i < s->spec->layout->nfields; i++) {
    int col = s->spec->leaf_index[i];
    const csv_span *sp = &s->spans[col];
    if (s->spec->layout->fields[i].ptype != SL_P_STR ||
        sp->len <= SL_STR_INLINE)
      continue;
    heap += sp->len;
    if (sp->len > most) {
      most = sp->len;
      *longest = col;
    }
  }
  return heap;
}

static int read_records(sl_source *s, sl_buffer *buf, bool *done,
                        sl_error *err);

/* Following, at the end of what is there: with rows in buf, hand them on;
 * else wait for the next check of the file (at most 100 ms, so that the
 * worker looks at its cancel flag and its idle time) and read what came. */
static int follow_wait(sl_source *s, sl_buffer *buf, sl_error *err) {
  if (buf->nrows > 0)
    return SL_OK;
  if (!sl_clock_nap_until(s->next_check, 0.1))
    return SL_OK;
  s->next_check = sl_clock_seconds() + (double)s->monitor_ms / 1000.0;
  int rc = follow_growth(s, err);
  if (rc != SL_OK || s->pos >= s->end)
    return rc;
  bool done;
  return read_records(s, buf, &done, err);
}

/* Records into buf, reading the mapping: csv_next guards it. */
static int read_records(sl_source *s, sl_buffer *buf, bool *done,
                        sl_error *err) {
  *done = false;
  while (s->pos < s->end) {
    size_t next = s->pos;
    int nf = 0;
    scan_error bad = {s->pos, -1, NULL};
    char what[256];
    /* ncols + 1 spans: the first extra field is where "too many" points. */
    scan_result r = sl_csv_scan_record(&s->fmt, s->data, s->size, &next,
                                       s->spans, s->ncols + 1, &nf, &bad);
    if (r == SCAN_SKIP) {
      s->pos = next;
      continue;
    }
    if (r == SCAN_OK && nf != s->ncols) {
      r = SCAN_BAD;
      field_count_error(s, s->pos, next, nf, &bad, what, sizeof what);
    }
    if (r == SCAN_OK) {
      int rc = unescape(s, nf, err);
      if (rc)
        return rc;
      /* Room for the row and its long strings? */
      int longest;
      size_t heap = string_bytes(s, &longest);
      if (heap > UINT32_MAX || !sl_buffer_has_room(buf, (uint32_t)heap)) {
        if (buf->nrows > 0)
          return SL_OK; /* full: this record starts the next buffer */
        /* Not even an empty buffer holds it: the one length limit. */
        snprintf(what, sizeof what,
                 "field too long: the record's strings take %zu bytes, more "
                 "than a buffer of %u bytes holds; raise SET "
                 "'sluice.buffer-size'",
                 heap, buf->cap);
        r = SCAN_BAD;
        bad.offset = longest >= 0 ? s->spans[longest].offset : s->pos;
        bad.col = longest;
        bad.why = what;
      }
    }
    int rc = r == SCAN_BAD ? bad_record(s, bad.offset, bad.col, bad.why, err)
                           : emit_row(s, buf, err);
    if (rc)
      return rc;
    s->pos = next;
    s->stats.bytes = s->pos - s->begin;
  }
  s->stats.bytes = s->pos - s->begin;
  if (s->follow)
    return follow_wait(s, buf, err);
  *done = true;
  return SL_OK;
}

/* The next records into buf.  A file that shrinks under the mapping is an
 * error naming it, never a SIGBUS: the guard brings a fault in the
 * mapping back here, and the rows of this call are dropped (the last may
 * be half made; the query stops with the error anyway).  A shrink that
 * leaves the reader in the file's last page reads zeros instead of
 * faulting: the check at the end (and at a malformed record) catches it. */
static int csv_next(sl_source *s, sl_buffer *buf, bool *done, sl_error *err) {
  *done = false;
  const uint32_t nrows = buf->nrows, heap_used = buf->heap_used;
  if (sigsetjmp(s->guard.env, 0) != 0) {
    buf->nrows = nrows;
    buf->heap_used = heap_used;
    return mapping_fault(s, err);
  }
  sl_mapped_guard_enter(&s->guard, &s->data, &s->map_size);
  int rc = read_records(s, buf, done, err);
  sl_mapped_guard_leave(&s->guard);
  if (rc == SL_OK && *done)
    rc = check_not_shrunk(s, err);
  return rc;
}

static void csv_stats(const sl_source *s, sl_source_stats *out) {
  *out = s->stats;
}

const sl_source_connector sl_source_filesystem = {
    .name = "filesystem",
    .description = "reads a CSV file ('path', 'format' = 'csv')",
    .validate = csv_validate,
    .open = csv_open,
    .next = csv_next,
    .stats = csv_stats,
    .close = csv_close,
};
