/* sink_filesystem.c - INSERT INTO a 'connector' = 'filesystem' table: one
 * CSV file (a table with PARTITIONED BY: a directory of partitions,
 * sink_partitions.c).
 *
 * Rows go to a temporary file next to the target (".<name>.inprogress-
 * XXXXXX", same directory so the rename cannot cross file systems), which
 * is renamed over 'path' when the query ends successfully.  A failed or
 * cancelled query removes it: readers see the old file or the complete
 * new one, never half a result.  If 'path' is an existing directory (as in
 * Flink, where 'path' is a directory of part files) the file is
 * <path>/part-0.csv.
 *
 * Like Flink's CSV format there is no header line.  Fields are quoted
 * (RFC 4180) when they contain the delimiter, the quote character, CR or
 * LF; an empty string is written as "" and NULL as an empty field, so the
 * CSV source reads back exactly what was written.  The dialect options are
 * the source's ('csv.field-delimiter', 'csv.quote-character', ...).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_connectors.h"
#include "sluice/path_policy.h"
#include "sluice/value_text.h"

struct sl_sink {
  const sl_row_layout *layout;
  const char *table;
  csv_format fmt;
  char *path; /* the final file */
  char *tmp;  /* the file being written */
  FILE *fp;
  sl_strbuf line;
  uint64_t rows;
  fs_partitions *parts; /* PARTITIONED BY: the partitions' files */
  char *root;           /* ... under this directory */
  char *where;          /* 'path', inside a node's --data-dir */
};

static int fs_validate(const sl_table_def *t, sl_error *err) {
  csv_format f;
  return sl_csv_read_format(t, &f, err);
}

static void fs_free(sl_sink *s) {
  if (s->fp)
    fclose(s->fp);
  if (s->tmp)
    unlink(s->tmp);
  free(s->path);
  free(s->tmp);
  free(s->root);
  free(s->where);
  sl_strbuf_free(&s->line);
  free(s);
}

static int fs_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  *out = NULL;
  const sl_table_def *t = spec->table;
  sl_sink *s = calloc(1, sizeof *s);
  if (!s)
    return sl_error_set(err, SL_ENOMEM, "out of memory opening a CSV sink");
  s->layout = spec->layout;
  s->table = t->name;
  int rc = sl_csv_read_format(t, &s->fmt, err);
  if (rc) {
    free(s);
    return rc;
  }
  const char *path = sl_table_def_option(t, "path");
  if (strncmp(path, "file://", 7) == 0)
    path += 7;
  else if (strncmp(path, "file:", 5) == 0)
    path += 5;
  /* On a node daemon: inside its --data-dir (path_policy.h). */
  if ((rc = sl_path_resolve(path, &s->where, err)) != SL_OK) {
    fs_free(s);
    return rc;
  }
  path = s->where;
  if (t->npartitioned_by > 0) { /* a directory of partitions */
    s->root = strdup(path);
    if (!s->root)
      abort();
    rc = fs_partitions_open(t, s->layout, spec->changelog ? 1 : 0, &s->fmt,
                            s->root, &s->parts, err);
    if (rc != SL_OK) {
      fs_free(s);
      return rc;
    }
    *out = s;
    return SL_OK;
  }
  struct stat st;
  bool is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, is_dir ? "%s/part-0.csv" : "%s", path);
  s->path = sl_strbuf_detach(&b);
  const char *slash = strrchr(s->path, '/');
  sl_strbuf_printf(&b, "%.*s.%s.inprogress-XXXXXX",
                   slash ? (int)(slash - s->path + 1) : 0, s->path,
                   slash ? slash + 1 : s->path);
  s->tmp = sl_strbuf_detach(&b);
  int fd = mkstemp(s->tmp);
  if (fd < 0) {
    int e = errno;
    free(s->tmp);
    s->tmp = NULL;
    rc = sl_error_set(err, SL_EIO,
                      "table '%s': cannot create a file next to '%s': %s; "
                      "check that the directory exists and is writable",
                      t->name, s->path, strerror(e));
    fs_free(s);
    return rc;
  }
  fchmod(fd, 0644); /* mkstemp makes it 0600; results are for sharing */
  s->fp = fdopen(fd, "w");
  if (!s->fp) {
    close(fd);
    fs_free(s);
    return sl_error_set(err, SL_ENOMEM, "out of memory opening a CSV sink");
  }
  *out = s;
  return SL_OK;
}

static bool needs_quotes(const csv_format *f, const char *p, size_t n) {
  if (f->quote < 0)
    return false;
  if (n == 0)
    return true; /* "" is the empty string, an empty field is NULL */
  for (size_t i = 0; i < n; i++)
    if (p[i] == f->delim || p[i] == (char)f->quote || p[i] == '\n' ||
        p[i] == '\r')
      return true;
  return false;
}

static void put_field(sl_strbuf *b, const csv_format *f, const char *p,
                      size_t n) {
  if (!needs_quotes(f, p, n)) {
    sl_strbuf_appendn(b, p, n);
    return;
  }
  sl_strbuf_appendc(b, (char)f->quote);
  for (size_t i = 0; i < n; i++) {
    if (p[i] == (char)f->quote)
      sl_strbuf_appendc(b, (char)f->quote);
    sl_strbuf_appendc(b, p[i]);
  }
  sl_strbuf_appendc(b, (char)f->quote);
}

static int write_failed(sl_sink *s, sl_error *err) {
  return sl_error_set(err, SL_EIO, "table '%s': writing '%s' failed: %s",
                      s->table, s->tmp, strerror(errno));
}

void sl_csv_format_row(sl_strbuf *b, const csv_format *fmt,
                       const sl_row_layout *l, const uint8_t *row,
                       const bool *skip) {
  char tmp[SL_VALUE_TEXT_MAX];
  bool first = true;
  for (int i = 0; i < l->nfields; i++) {
    if (skip && skip[i])
      continue;
    if (!first)
      sl_strbuf_appendc(b, fmt->delim);
    first = false;
    if (sl_row_is_null(row, i))
      continue;
    const sl_field *f = &l->fields[i];
    if (f->ptype == SL_P_STR) {
      const sl_str *str = (const sl_str *)(row + f->offset);
      put_field(b, fmt, sl_str_data(str), str->len);
    } else {
      int n = sl_value_format_scalar(tmp, f->type, f->ptype, row + f->offset);
      put_field(b, fmt, tmp, (size_t)n);
    }
  }
  sl_strbuf_appendc(b, '\n');
}

static int fs_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  if (s->parts) {
    s->rows += rows->nrows;
    return fs_partitions_write(s->parts, rows, err);
  }
  for (uint32_t r = 0; r < rows->nrows; r++) {
    sl_strbuf_reset(&s->line);
    sl_csv_format_row(&s->line, &s->fmt, s->layout, sl_buffer_row(rows, r),
                      NULL);
    if (fwrite(s->line.data, 1, s->line.len, s->fp) != s->line.len)
      return write_failed(s, err);
    s->rows++;
  }
  return SL_OK;
}

static int fs_watermark(sl_sink *s, int64_t wm, sl_error *err) {
  return s->parts ? fs_partitions_watermark(s->parts, wm, err) : SL_OK;
}

static int fs_commit(sl_sink *s, sl_error *err) {
  if (s->parts)
    return SL_OK; /* partitions commit by their own rule */
  if (fflush(s->fp) != 0)
    return write_failed(s, err);
  return SL_OK;
}

static int fs_close(sl_sink *s, bool ok, sl_error *err) {
  int rc = SL_OK;
  if (s->parts) {
    rc = fs_partitions_close(s->parts, ok, err);
    s->parts = NULL;
    ok = false; /* no single file to move */
  }
  if (ok) {
    if (fflush(s->fp) != 0 || fsync(fileno(s->fp)) != 0) {
      rc = write_failed(s, err);
    } else {
      int c = fclose(s->fp);
      s->fp = NULL;
      if (c != 0)
        rc = write_failed(s, err);
      else if (rename(s->tmp, s->path) != 0)
        rc = sl_error_set(err, SL_EIO,
                          "table '%s': cannot move the result into place "
                          "('%s' -> '%s'): %s",
                          s->table, s->tmp, s->path, strerror(errno));
      else {
        free(s->tmp); /* renamed: nothing to remove */
        s->tmp = NULL;
      }
    }
  }
  fs_free(s); /* removes the temporary file unless it was renamed */
  return rc;
}

static uint64_t fs_rows(const sl_sink *s) {
  return s->rows;
}

const sl_sink_connector sl_sink_filesystem = {
    .name = "filesystem",
    .description = "writes a CSV file ('path', 'format' = 'csv')",
    .validate = fs_validate,
    .open = fs_open,
    .write = fs_write,
    .commit = fs_commit,
    .close = fs_close,
    .rows_written = fs_rows,
    .watermark = fs_watermark,
};
