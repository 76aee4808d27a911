/* sink_part_file.c - the part files of the filesystem sinks
 * (sink_filesystem.c, sink_partitions.c): created hidden, renamed to their
 * final name once complete, and the rolling policy that decides when.
 *
 * A part is first written as ".part-<id>-<n>.csv.inprogress": hidden, as
 * Flink's in-progress files are, so readers that skip dot-files (ours,
 * Flink's, Hive's) never read it.  Finishing it flushes, fsyncs and closes
 * it, then renames it to "part-<id>-<n>.csv"; a rename within a directory
 * is atomic, so a visible part is always complete, even if the process is
 * killed at any instruction (a kill -9 leaves at most the hidden file).
 *
 * A stopped unbounded query keeps the rows of its open part that were
 * complete at the last round (fs_part_mark_safe): the file is cut back to
 * that length before it is finished, so a row or window half written when
 * the query failed never becomes visible.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/common/clock.h"
#include "sluice/connectors/io_connectors.h"

void fs_part_new_id(char id[17]) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
    r = (uint64_t)getpid() * 0x9e3779b97f4a7c15u ^ (uint64_t)sl_clock_ns();
  snprintf(id, 17, "%016llx", (unsigned long long)r);
}

static int io_failed(const char *table, const char *what, const char *path,
                     sl_error *err) {
  return sl_error_set(err, SL_EIO, "table '%s': %s '%s' failed: %s", table,
                      what, path, strerror(errno));
}

static void forget(fs_part *p) {
  free(p->tmp);
  free(p->final);
  memset(p, 0, sizeof *p);
}

int fs_make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    int rc = mkdir(path, 0755);
    *p = '/';
    if (rc != 0 && errno != EEXIST)
      return -1;
  }
  return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int fs_part_open(fs_part *p, const char *dir, const char *id, unsigned n,
                 const char *table, sl_error *err) {
  memset(p, 0, sizeof *p);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, "%s/part-%s-%u.csv", dir, id, n);
  p->final = sl_strbuf_detach(&b);
  sl_strbuf_printf(&b, "%s/.part-%s-%u.csv.inprogress", dir, id, n);
  p->tmp = sl_strbuf_detach(&b);
  int fd = open(p->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd >= 0)
    p->fp = fdopen(fd, "w");
  if (!p->fp) {
    int rc = io_failed(table, "creating", p->tmp, err);
    if (fd >= 0) {
      close(fd);
      unlink(p->tmp);
    }
    forget(p);
    return rc;
  }
  p->opened = sl_clock_seconds();
  return SL_OK;
}

int fs_part_write(fs_part *p, const char *data, size_t len, const char *table,
                  sl_error *err) {
  if (fwrite(data, 1, len, p->fp) != len) {
    p->broken = true;
    return io_failed(table, "writing", p->tmp, err);
  }
  p->bytes += len;
  return SL_OK;
}

int fs_part_finish(fs_part *p, bool whole_only, bool publish, const char *table,
                   sl_error *err) {
  int rc = SL_OK;
  if (!p->tmp)
    return SL_OK; /* none open */
  if (p->fp) {
    int fd = fileno(p->fp);
    if (fflush(p->fp) != 0)
      p->broken = true;
    __fpurge(p->fp); /* what did not go out never will (no write after) */
    uint64_t keep = whole_only || p->broken ? p->safe_bytes : p->bytes;
    struct stat st;
    if (p->broken && !whole_only)
      rc = io_failed(table, "writing", p->tmp, err);
    else if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < keep)
      rc = io_failed(table, "writing", p->tmp, err); /* rows lost */
    else if (keep < (uint64_t)st.st_size && ftruncate(fd, (off_t)keep) != 0)
      rc = io_failed(table, "cutting back", p->tmp, err);
    else if (keep > 0 && fsync(fd) != 0)
      rc = io_failed(table, "syncing", p->tmp, err);
    if (fclose(p->fp) != 0 && rc == SL_OK)
      rc = io_failed(table, "closing", p->tmp, err);
    p->fp = NULL;
    p->bytes = keep;
  }
  if (rc != SL_OK || p->bytes == 0) { /* nothing (whole) to show */
    unlink(p->tmp);
    forget(p);
    return rc;
  }
  return publish ? fs_part_publish(p, table, err) : SL_OK;
}

int fs_part_publish(fs_part *p, const char *table, sl_error *err) {
  int rc = SL_OK;
  if (rename(p->tmp, p->final) != 0) {
    rc = io_failed(table, "renaming", p->tmp, err);
    unlink(p->tmp);
  }
  forget(p);
  return rc;
}

void fs_part_discard(fs_part *p) {
  if (p->fp)
    fclose(p->fp);
  if (p->tmp)
    unlink(p->tmp);
  forget(p);
}

int fs_rolling_read(const sl_table_def *t, fs_rolling *r, sl_error *err) {
  int64_t roll_ms = 0, check_ms = 0;
  int rc = sl_option_size(t, "sink.rolling-policy.file-size", 128 << 20,
                          &r->file_bytes, err);
  if (rc == SL_OK)
    rc = sl_option_duration_ms(t, "sink.rolling-policy.rollover-interval",
                               30 * 60 * 1000, &roll_ms, err);
  if (rc == SL_OK)
    rc = sl_option_duration_ms(t, "sink.rolling-policy.check-interval",
                               60 * 1000, &check_ms, err);
  if (rc == SL_OK && (roll_ms <= 0 || check_ms <= 0))
    rc = sl_error_set(err, SL_EINVAL,
                      "table '%s': 'sink.rolling-policy.rollover-interval' "
                      "and 'sink.rolling-policy.check-interval' must be "
                      "longer than 0 ms",
                      t->name);
  r->rollover_seconds = (double)roll_ms / 1000.0;
  r->check_seconds = (double)check_ms / 1000.0;
  return rc;
}

static int remove_one(const char *path, const struct stat *sb, int flag,
                      struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

void fs_remove_tree(const char *dir) {
  nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
