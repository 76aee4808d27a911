/* sink_filesystem.c - INSERT INTO a 'connector' = 'filesystem' table.
 *
 * Where the rows go depends on the table's 'path':
 *   - PARTITIONED BY: a directory of partitions (sink_partitions.c);
 *   - a directory (one that exists, a path ending in '/', or any path for
 *     an unbounded query, created if missing): part files, as Flink
 *     writes them (sink_part_file.c); an INSERT adds new parts, never
 *     touching the others;
 *   - else one file (bounded queries only): INSERT INTO adds its rows to
 *     the file's, INSERT OVERWRITE replaces them.
 *
 * Nothing half written is ever visible:
 *   - one file: the new content (the old rows copied, then the new ones)
 *     goes to ".<name>.inprogress-XXXXXX" next to it, renamed over 'path'
 *     when the query ends successfully; a failed or cancelled query
 *     removes it, so readers see the old file or the complete new one;
 *   - a bounded query's parts stay hidden until the query has succeeded,
 *     then all are renamed into view (on failure all are removed);
 *   - an unbounded query's parts roll, each renamed into view as it is
 *     finished: by 'sink.rolling-policy.file-size', by 'sink.rolling-
 *     policy.rollover-interval' (checked every 'sink.rolling-policy.check-
 *     interval'), and at every fired window (the commit).  Stopped
 *     (Ctrl-C, a signal, an error), it finishes its open part with the
 *     rows complete at the last round, so every row produced before the
 *     stop is kept; killed, it leaves that part hidden;
 *   - INSERT OVERWRITE of a directory writes the new parts into a hidden
 *     sibling directory and swaps the two atomically (renameat2
 *     RENAME_EXCHANGE) when the query succeeds, then removes the old one.
 *
 * Like Flink's CSV format there is no header line.  Fields are quoted
 * (RFC 4180) when they contain the delimiter, the quote character, CR or
 * LF; an empty string is written as "" and NULL as an empty field, so the
 * CSV source reads back exactly what was written.  The dialect options are
 * the source's ('csv.field-delimiter', 'csv.quote-character', ...).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/common/clock.h"
#include "sluice/connectors/io_connectors.h"
#include "sluice/connectors/path_policy.h"
#include "sluice/row/value_text.h"

typedef enum { FS_FILE, FS_DIR, FS_PARTITIONS } fs_mode;

struct sl_sink {
  const sl_row_layout *layout;
  const char *table;
  csv_format fmt;
  fs_mode mode;
  bool unbounded, overwrite;
  sl_strbuf line;
  uint64_t rows;
  /* FS_FILE: the final file and the one being written. */
  char *path;
  char *tmp;
  FILE *fp;
  /* FS_DIR: parts into dir (for OVERWRITE: into staging, swapped with
   * dir at the end); a bounded query's finished parts wait in pending. */
  char *dir;
  char *staging;
  char id[17];
  unsigned next_part;
  fs_part cur; /* cur.fp != NULL: open */
  fs_part *pending;
  int npending, cap_pending;
  fs_rolling roll;
  double next_check;
  double last_roll; /* sl_clock_seconds() of the last roll */
  bool roll_due;    /* a window was committed since */
  bool ticks;       /* watermark() is called (not by the stage runner) */
  bool units;       /* commit() was called: rows come in units (windows) */
  /* FS_PARTITIONS */
  fs_partitions *parts;
  char *root;
  char *where; /* 'path', inside a node's --data-dir */
};

static int fs_validate(const sl_table_def *t, sl_error *err) {
  csv_format f;
  fs_rolling r;
  int rc = sl_csv_read_format(t, &f, err);
  return rc == SL_OK ? fs_rolling_read(t, &r, err) : rc;
}

static void fs_free(sl_sink *s) {
  if (s->fp)
    fclose(s->fp);
  if (s->tmp)
    unlink(s->tmp);
  fs_part_discard(&s->cur);
  for (int i = 0; i < s->npending; i++)
    fs_part_discard(&s->pending[i]);
  if (s->staging)
    fs_remove_tree(s->staging);
  free(s->pending);
  free(s->staging);
  free(s->dir);
  free(s->path);
  free(s->tmp);
  free(s->root);
  free(s->where);
  sl_strbuf_free(&s->line);
  free(s);
}

static int io_error(const sl_sink *s, const char *what, const char *path, int e,
                    sl_error *err) {
  return sl_error_set(err, SL_EIO, "table '%s': %s '%s' failed: %s", s->table,
                      what, path, strerror(e));
}

/* Append the bytes of file `from` (fd in) to fd out; make them end with a
 * line break, so the new rows start on a line of their own. */
static int copy_old_rows(int in, int out, off_t size) {
  off_t done = 0;
  while (done < size) {
    ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(size - done), 0);
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL)) {
      char buf[65536]; /* a file system that cannot: copy through here */
      n = read(in, buf, sizeof buf);
      if (n > 0 && write(out, buf, (size_t)n) != n)
        return -1;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? -1 : 0; /* shrank meanwhile: what is there */
    done += n;
  }
  char last;
  if (size > 0 && pread(in, &last, 1, size - 1) == 1 && last != '\n' &&
      write(out, "\n", 1) != 1)
    return -1;
  return 0;
}

/* One file: the rows go to a temporary file next to it, which starts with
 * the old rows unless the INSERT overwrites. */
static int open_file(sl_sink *s, const char *path, const struct stat *old,
                     sl_error *err) {
  s->path = strdup(path);
  sl_strbuf b = SL_STRBUF_INIT;
  const char *slash = strrchr(path, '/');
  sl_strbuf_printf(&b, "%.*s.%s.inprogress-XXXXXX",
                   slash ? (int)(slash - path + 1) : 0, path,
                   slash ? slash + 1 : path);
  s->tmp = sl_strbuf_detach(&b);
  int fd = mkstemp(s->tmp);
  if (fd < 0) {
    int e = errno;
    free(s->tmp);
    s->tmp = NULL;
    return sl_error_set(err, SL_EIO,
                        "table '%s': cannot create a file next to '%s': %s; "
                        "check that the directory exists and is writable",
                        s->table, path, strerror(e));
  }
  /* mkstemp makes it 0600; results are for sharing (or as the old was). */
  fchmod(fd, old ? old->st_mode & 07777 : 0644);
  if (old && !s->overwrite) {
    int in = open(path, O_RDONLY | O_CLOEXEC);
    int e = errno;
    if (in < 0 || copy_old_rows(in, fd, old->st_size) != 0) {
      e = in < 0 ? e : errno;
      if (in >= 0)
        close(in);
      close(fd);
      return io_error(s, "copying the rows already in", path, e, err);
    }
    close(in);
  }
  s->fp = fdopen(fd, "w");
  if (!s->fp) {
    close(fd);
    return sl_error_set(err, SL_ENOMEM, "out of memory opening a CSV sink");
  }
  return SL_OK;
}

/* A directory of parts; OVERWRITE: a hidden sibling to swap in later. */
static int open_dir(sl_sink *s, const char *path, bool exists, sl_error *err) {
  s->dir = strdup(path);
  size_t n = strlen(s->dir);
  while (n > 1 && s->dir[n - 1] == '/')
    s->dir[--n] = '\0';
  if (!exists && fs_make_dirs(s->dir) != 0)
    return io_error(s, "creating the directory", s->dir, errno, err);
  if (s->overwrite) {
    sl_strbuf b = SL_STRBUF_INIT;
    const char *slash = strrchr(s->dir, '/');
    sl_strbuf_printf(&b, "%.*s.%s.overwrite-XXXXXX",
                     slash ? (int)(slash - s->dir + 1) : 0, s->dir,
                     slash ? slash + 1 : s->dir);
    s->staging = sl_strbuf_detach(&b);
    if (!mkdtemp(s->staging)) {
      int e = errno;
      free(s->staging);
      s->staging = NULL;
      return io_error(s, "creating a directory next to", s->dir, e, err);
    }
    struct stat st;
    if (stat(s->dir, &st) == 0)
      chmod(s->staging, st.st_mode & 07777);
  }
  fs_part_new_id(s->id);
  s->next_check = sl_clock_seconds() + s->roll.check_seconds;
  return SL_OK;
}

static int fs_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  *out = NULL;
  const sl_table_def *t = spec->table;
  sl_sink *s = calloc(1, sizeof *s);
  if (!s)
    return sl_error_set(err, SL_ENOMEM, "out of memory opening a CSV sink");
  s->layout = spec->layout;
  s->table = t->name;
  s->unbounded = spec->unbounded;
  s->overwrite = spec->overwrite;
  int rc = sl_csv_read_format(t, &s->fmt, err);
  if (rc == SL_OK)
    rc = fs_rolling_read(t, &s->roll, err);
  if (rc != SL_OK) {
    fs_free(s);
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
    s->mode = FS_PARTITIONS;
    if (s->overwrite)
      rc = sl_error_set(err, SL_EUNSUPPORTED,
                        "table '%s': INSERT OVERWRITE of a PARTITIONED BY "
                        "table is not supported yet; use INSERT INTO, or "
                        "remove the partitions' directories first",
                        t->name);
    s->root = strdup(path);
    if (rc == SL_OK)
      rc = fs_partitions_open(t, s->layout, spec->changelog ? 1 : 0, &s->fmt,
                              s->root, s->unbounded, &s->parts, err);
  } else {
    struct stat st;
    bool exists = stat(path, &st) == 0;
    size_t len = strlen(path);
    if (exists && S_ISDIR(st.st_mode)) {
      s->mode = FS_DIR;
      rc = open_dir(s, path, true, err);
    } else if (exists && !S_ISREG(st.st_mode)) {
      rc = sl_error_set(err, SL_EIO,
                        "table '%s': '%s' is neither a file nor a "
                        "directory; 'path' must name one of them",
                        t->name, path);
    } else if (!exists && (s->unbounded || (len && path[len - 1] == '/'))) {
      s->mode = FS_DIR; /* as in Flink, 'path' is a directory */
      rc = open_dir(s, path, false, err);
    } else if (s->unbounded) {
      rc = sl_error_set(err, SL_EUNSUPPORTED,
                        "table '%s': a query over an unbounded stream writes "
                        "part files into a directory, as Flink does, and "
                        "'%s' is a file; give the table a 'path' that is a "
                        "directory (it is created if missing)",
                        t->name, path);
    } else {
      s->mode = FS_FILE;
      rc = open_file(s, path, exists ? &st : NULL, err);
    }
  }
  if (rc != SL_OK) {
    fs_free(s);
    return rc;
  }
  *out = s;
  return SL_OK;
}

/* Whether any of the 8 bytes of w is c (the classic zero-byte test on
 * w ^ c repeated: exact, as the test is whole-word). */
static inline bool word_has(uint64_t w, unsigned char c) {
  uint64_t x = w ^ (0x0101010101010101ULL * c);
  return ((x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL) != 0;
}

static bool needs_quotes(const csv_format *f, const char *p, size_t n) {
  if (f->quote < 0)
    return false;
  if (n == 0)
    return true; /* "" is the empty string, an empty field is NULL */
  unsigned char d = (unsigned char)f->delim, q = (unsigned char)f->quote;
  size_t i = 0;
  /* 8 bytes at a time: long strings (NEXMark's extra) are most of a
   * row's bytes */
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    if (word_has(w, d) || word_has(w, q) || word_has(w, '\n') ||
        word_has(w, '\r'))
      return true;
  }
  for (; i < n; i++)
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

/* Finish the open part: into view now (unbounded), or pending until the
 * query has succeeded (bounded). */
static int roll_part(sl_sink *s, sl_error *err) {
  s->roll_due = false;
  if (!s->cur.fp)
    return SL_OK;
  s->last_roll = sl_clock_seconds();
  if (s->unbounded)
    return fs_part_finish(&s->cur, false, true, s->table, err);
  int rc = fs_part_finish(&s->cur, false, false, s->table, err);
  if (rc != SL_OK || !s->cur.tmp)
    return rc; /* failed, or empty and removed */
  if (s->npending == s->cap_pending) {
    s->cap_pending = s->cap_pending ? s->cap_pending * 2 : 8;
    s->pending =
        realloc(s->pending, sizeof *s->pending * (size_t)s->cap_pending);
    if (!s->pending)
      abort();
  }
  s->pending[s->npending++] = s->cur;
  memset(&s->cur, 0, sizeof s->cur);
  return SL_OK;
}

static int write_dir_row(sl_sink *s, sl_error *err) {
  int rc = SL_OK;
  if (s->cur.fp && (int64_t)s->cur.bytes >= s->roll.file_bytes)
    rc = roll_part(s, err);
  if (rc == SL_OK && !s->cur.fp)
    rc = fs_part_open(&s->cur, s->staging ? s->staging : s->dir, s->id,
                      s->next_part++, s->table, err);
  if (rc == SL_OK)
    rc = fs_part_write(&s->cur, s->line.data, s->line.len, s->table, err);
  return rc;
}

static int check_rollover(sl_sink *s, sl_error *err);

/* One file: the rows' lines formatted together and written with one call
 * per 256 KiB (a call per line was a tenth of a CSV sink's time). */
static int write_file_rows(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  sl_strbuf_reset(&s->line);
  for (uint32_t r = 0; r < rows->nrows; r++) {
    sl_csv_format_row(&s->line, &s->fmt, s->layout, sl_buffer_row(rows, r),
                      NULL);
    if (s->line.len >= 256 * 1024 || r + 1 == rows->nrows) {
      if (fwrite(s->line.data, 1, s->line.len, s->fp) != s->line.len)
        return io_error(s, "writing", s->tmp, errno, err);
      sl_strbuf_reset(&s->line);
    }
  }
  s->rows += rows->nrows;
  return SL_OK;
}

static int fs_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  if (s->mode == FS_PARTITIONS) {
    s->rows += rows->nrows;
    return fs_partitions_write(s->parts, rows, err);
  }
  if (s->mode != FS_DIR)
    return write_file_rows(s, rows, err);
  for (uint32_t r = 0; r < rows->nrows; r++) {
    sl_strbuf_reset(&s->line);
    sl_csv_format_row(&s->line, &s->fmt, s->layout, sl_buffer_row(rows, r),
                      NULL);
    int rc = write_dir_row(s, err);
    if (rc != SL_OK)
      return rc;
    s->rows++;
  }
  /* A query without windows never commits a unit, and its rows are each
   * whole: the rollover interval is checked after a batch too, for when
   * rounds are long (a sink slower than the source). */
  if (s->mode == FS_DIR && s->unbounded && !s->units && s->cur.fp) {
    fs_part_mark_safe(&s->cur);
    return check_rollover(s, err);
  }
  return SL_OK;
}

/* Every check-interval: the open part rolls if older than the rollover
 * interval. */
static int check_rollover(sl_sink *s, sl_error *err) {
  double now = sl_clock_seconds();
  if (now < s->next_check)
    return SL_OK;
  s->next_check = now + s->roll.check_seconds;
  if (s->cur.fp && now - s->cur.opened >= s->roll.rollover_seconds)
    return roll_part(s, err);
  return SL_OK;
}

/* The clock, between rounds: what is written is whole rows; an open part
 * older than the rollover interval rolls (checked every check-interval). */
static int fs_watermark(sl_sink *s, int64_t wm, sl_error *err) {
  if (s->mode == FS_PARTITIONS)
    return fs_partitions_watermark(s->parts, wm, err);
  if (s->mode != FS_DIR)
    return SL_OK;
  fs_part_mark_safe(&s->cur);
  s->ticks = true;
  if (s->roll_due &&
      sl_clock_seconds() - s->last_roll >= FS_COMMIT_ROLL_GAP_SECONDS)
    return roll_part(s, err);
  return check_rollover(s, err);
}

/* A fired window is complete: an unbounded query's part rolls into view
 * (now, or at the next round if it rolled less than
 * FS_COMMIT_ROLL_GAP_SECONDS ago and rounds call watermark()); a bounded
 * query's rows show when it ends, all at once. */
static int fs_commit(sl_sink *s, sl_error *err) {
  switch (s->mode) {
  case FS_PARTITIONS:
    return fs_partitions_commit(s->parts, err);
  case FS_DIR:
    fs_part_mark_safe(&s->cur);
    s->units = true;
    if (!s->unbounded)
      return SL_OK;
    if (!s->ticks || /* no round to roll it at later */
        sl_clock_seconds() - s->last_roll >= FS_COMMIT_ROLL_GAP_SECONDS)
      return roll_part(s, err);
    s->roll_due = true;
    return SL_OK;
  case FS_FILE:
    if (fflush(s->fp) != 0)
      return io_error(s, "writing", s->tmp, errno, err);
  }
  return SL_OK;
}

/* INSERT OVERWRITE of a directory: the staging directory (the new parts)
 * takes the old one's place in one step, then the old one goes. */
static int swap_in_staging(sl_sink *s, sl_error *err) {
  if (renameat2(AT_FDCWD, s->staging, AT_FDCWD, s->dir, RENAME_EXCHANGE) != 0) {
    if (errno != EINVAL && errno != ENOSYS)
      return io_error(s, "replacing the directory", s->dir, errno, err);
    /* No atomic exchange here (some file systems): move the old one
     * aside, then the new one in; a reader may find no directory in
     * between, never a mixture. */
    sl_strbuf b = SL_STRBUF_INIT;
    sl_strbuf_printf(&b, "%s.old", s->staging);
    char *old = sl_strbuf_detach(&b);
    int rc = SL_OK;
    if (rename(s->dir, old) != 0)
      rc = io_error(s, "moving aside", s->dir, errno, err);
    else if (rename(s->staging, s->dir) != 0) {
      rc = io_error(s, "replacing the directory", s->dir, errno, err);
      rename(old, s->dir);
    } else {
      fs_remove_tree(old);
      free(s->staging); /* in place: nothing left to remove */
      s->staging = NULL;
    }
    free(old);
    return rc;
  }
  return SL_OK; /* staging now holds the old parts: fs_free removes them */
}

static int close_dir(sl_sink *s, bool ok, sl_error *err) {
  int rc = SL_OK;
  if (s->unbounded) { /* stopped: keep its whole rows (a bounded run's
                       * fate is all or nothing) */
    rc = fs_part_finish(&s->cur, !ok, true, s->table, ok ? err : NULL);
    return ok ? rc : SL_OK;
  }
  if (!ok)
    return SL_OK; /* fs_free removes what is pending */
  rc = roll_part(s, err);
  for (int i = 0; i < s->npending && rc == SL_OK; i++)
    rc = fs_part_publish(&s->pending[i], s->table, err);
  if (rc == SL_OK && s->staging)
    rc = swap_in_staging(s, err);
  return rc;
}

static int close_file(sl_sink *s, bool ok, sl_error *err) {
  if (!ok)
    return SL_OK; /* fs_free removes the temporary file */
  int rc = SL_OK;
  if (fflush(s->fp) != 0 || fsync(fileno(s->fp)) != 0)
    rc = io_error(s, "writing", s->tmp, errno, err);
  int c = fclose(s->fp);
  s->fp = NULL;
  if (rc == SL_OK && c != 0)
    rc = io_error(s, "writing", s->tmp, errno, err);
  if (rc == SL_OK && rename(s->tmp, s->path) != 0)
    rc = sl_error_set(err, SL_EIO,
                      "table '%s': cannot move the result into place "
                      "('%s' -> '%s'): %s",
                      s->table, s->tmp, s->path, strerror(errno));
  if (rc == SL_OK) {
    free(s->tmp); /* renamed: nothing to remove */
    s->tmp = NULL;
  }
  return rc;
}

static int fs_close(sl_sink *s, bool ok, sl_error *err) {
  int rc = SL_OK;
  switch (s->mode) {
  case FS_PARTITIONS:
    rc = fs_partitions_close(s->parts, ok, err);
    s->parts = NULL;
    break;
  case FS_DIR:
    rc = close_dir(s, ok, err);
    break;
  case FS_FILE:
    rc = close_file(s, ok, err);
    break;
  }
  fs_free(s); /* removes whatever was not put in place */
  return rc;
}

static uint64_t fs_rows(const sl_sink *s) {
  return s->rows;
}

const sl_sink_connector sl_sink_filesystem = {
    .name = "filesystem",
    .description = "writes CSV: part files in a directory, or one file "
                   "('path', 'format' = 'csv')",
    .validate = fs_validate,
    .open = fs_open,
    .write = fs_write,
    .commit = fs_commit,
    .close = fs_close,
    .rows_written = fs_rows,
    .watermark = fs_watermark,
    .can_overwrite = true,
};
