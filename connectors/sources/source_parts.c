/* source_parts.c - 'connector' = 'filesystem' as a source: 'path' names a
 * CSV file (read by source_filesystem.c's reader), or a directory of part
 * files, as Flink's filesystem connector reads one and as the filesystem
 * sink writes one (sink_part_file.c).
 *
 * A directory's files are read one after the other, oldest first (by
 * modification time, then by name in natural order: part-x-2 before
 * part-x-10), so the rows of a streaming INSERT's parts come in about the
 * order they were written.  Hidden files are skipped, as Flink skips them:
 * names starting with '.' (a part in progress, ".part-...inprogress") or
 * '_' ('_SUCCESS'); so are subdirectories.  Each file is read by the CSV
 * reader with the table's options, split over the workers as one file is.
 *
 * With 'source.monitor-interval' the source follows the directory (Flink's
 * meaning of the option): after the files there, it looks for new ones
 * every interval and reads each new file once (a finished part never
 * changes), never ending by itself.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "sluice/common/clock.h"
#include "sluice/connectors/io_connectors.h"
#include "sluice/connectors/path_policy.h"

typedef struct part_name {
  char *name;
  struct timespec mtime;
} part_name;

struct sl_source {
  const sl_source_spec *spec;
  const sl_source_connector *reader; /* of one CSV file */
  sl_source *file;                   /* the file being read, or NULL */
  bool is_dir;
  char *dir;
  /* The table as the reader sees it for one part: 'path' is the part's,
   * no 'source.monitor-interval' (a part is read once). */
  sl_table_def part_table;
  sl_table_option *part_options;
  char *part_path;
  sl_source_spec part_spec;
  part_name *todo; /* files found and not read yet, in reading order */
  int ntodo, next_todo;
  char **seen; /* every file taken (sorted), when following */
  int nseen, cap_seen;
  int64_t monitor_ms;
  double next_scan;
  sl_source_stats done_stats; /* of the files closed */
};

static const char *strip_scheme(const char *path) {
  if (strncmp(path, "file://", 7) == 0)
    return path + 7;
  if (strncmp(path, "file:", 5) == 0)
    return path + 5;
  return path;
}

static int by_age_then_name(const void *a, const void *b) {
  const part_name *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec)
    return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec)
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strverscmp(x->name, y->name);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool was_seen(const sl_source *s, const char *name) {
  return s->nseen > 0 &&
         bsearch(&name, s->seen, (size_t)s->nseen, sizeof *s->seen, by_name);
}

static void mark_seen(sl_source *s, char *name) {
  if (s->nseen == s->cap_seen) {
    s->cap_seen = s->cap_seen ? s->cap_seen * 2 : 64;
    s->seen = realloc(s->seen, sizeof *s->seen * (size_t)s->cap_seen);
    if (!s->seen)
      abort();
  }
  int at = s->nseen;
  while (at > 0 && strcmp(s->seen[at - 1], name) > 0)
    at--;
  memmove(s->seen + at + 1, s->seen + at,
          sizeof *s->seen * (size_t)(s->nseen - at));
  s->seen[at] = name;
  s->nseen++;
}

static void free_todo(sl_source *s) {
  for (int i = s->next_todo; i < s->ntodo; i++)
    if (!s->monitor_ms) /* following: the names belong to seen */
      free(s->todo[i].name);
  free(s->todo);
  s->todo = NULL;
  s->ntodo = s->next_todo = 0;
}

/* List the directory's visible files not read yet into todo, oldest
 * first. */
static int scan(sl_source *s, sl_error *err) {
  free_todo(s);
  DIR *d = opendir(s->dir);
  if (!d)
    return sl_error_set(err, SL_EIO,
                        "table '%s': cannot list the directory '%s': %s",
                        s->spec->table->name, s->dir, strerror(errno));
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || e->d_name[0] == '_')
      continue; /* hidden: in progress, or a marker such as _SUCCESS */
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, 0) != 0 || !S_ISREG(st.st_mode))
      continue; /* gone meanwhile, or not a file */
    if (s->monitor_ms && was_seen(s, e->d_name))
      continue;
    if (s->ntodo == cap) {
      cap = cap ? cap * 2 : 16;
      s->todo = realloc(s->todo, sizeof *s->todo * (size_t)cap);
      if (!s->todo)
        abort();
    }
    s->todo[s->ntodo].name = strdup(e->d_name);
    s->todo[s->ntodo].mtime = st.st_mtim;
    if (!s->todo[s->ntodo].name)
      abort();
    s->ntodo++;
  }
  closedir(d);
  if (s->ntodo > 1)
    qsort(s->todo, (size_t)s->ntodo, sizeof *s->todo, by_age_then_name);
  for (int i = 0; i < s->ntodo && s->monitor_ms; i++)
    mark_seen(s, s->todo[i].name);
  return SL_OK;
}

static void close_file(sl_source *s) {
  if (!s->file)
    return;
  sl_source_stats st = {0};
  if (s->reader->stats)
    s->reader->stats(s->file, &st);
  s->done_stats.rows += st.rows;
  s->done_stats.bytes += st.bytes;
  s->done_stats.skipped_rows += st.skipped_rows;
  s->reader->close(s->file);
  s->file = NULL;
}

/* Open the next file of todo (none left: s->file stays NULL). */
static int open_next(sl_source *s, sl_error *err) {
  close_file(s);
  if (s->next_todo >= s->ntodo)
    return SL_OK;
  part_name *p = &s->todo[s->next_todo++];
  free(s->part_path);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, "%s/%s", s->dir, p->name);
  s->part_path = sl_strbuf_detach(&b);
  if (!s->monitor_ms)
    free(p->name);
  p->name = NULL;
  for (int i = 0; i < s->part_table.noptions; i++)
    if (strcmp(s->part_options[i].key, "path") == 0)
      s->part_options[i].value = s->part_path;
  return s->reader->open(&s->part_spec, &s->file, err);
}

static void parts_close(sl_source *s) {
  if (!s)
    return;
  close_file(s);
  free_todo(s);
  for (int i = 0; i < s->nseen; i++)
    free(s->seen[i]);
  free(s->seen);
  free(s->part_options);
  free(s->part_path);
  free(s->dir);
  free(s);
}

/* The table for one part: the same, without following. */
static void make_part_table(sl_source *s) {
  const sl_table_def *t = s->spec->table;
  s->part_table = *t;
  s->part_options = calloc((size_t)t->noptions + 1, sizeof *s->part_options);
  if (!s->part_options)
    abort();
  int n = 0;
  for (int i = 0; i < t->noptions; i++)
    if (strcmp(t->options[i].key, "source.monitor-interval") != 0)
      s->part_options[n++] = t->options[i];
  s->part_table.options = s->part_options;
  s->part_table.noptions = n;
  s->part_spec = *s->spec;
  s->part_spec.table = &s->part_table;
}

static int parts_open(const sl_source_spec *spec, sl_source **out,
                      sl_error *err) {
  *out = NULL;
  const sl_table_def *t = spec->table;
  sl_source *s = calloc(1, sizeof *s);
  if (!s)
    return sl_error_set(err, SL_ENOMEM, "out of memory opening a CSV source");
  s->spec = spec;
  s->reader = &sl_source_filesystem;
  const char *path = sl_table_def_option(t, "path");
  /* On a node daemon: inside its --data-dir (path_policy.h); each part is
   * resolved again when the reader opens it, so a link out is refused. */
  char *dir = NULL;
  if (path && sl_path_resolve(strip_scheme(path), &dir, NULL) != SL_OK)
    dir = NULL; /* the reader gives the error */
  struct stat st;
  s->is_dir = dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
  if (!s->is_dir) { /* one file: the reader does it all */
    free(dir);
    int rc = s->reader->open(spec, &s->file, err);
    if (rc != SL_OK)
      parts_close(s);
    else
      *out = s;
    return rc;
  }
  int rc = SL_OK;
  if (t->npartitioned_by > 0)
    rc = sl_error_set(err, SL_EUNSUPPORTED,
                      "table '%s': reading a PARTITIONED BY table (a "
                      "directory of partitions) is not supported yet",
                      t->name);
  if (rc == SL_OK)
    rc = sl_option_duration_ms(t, "source.monitor-interval", 0, &s->monitor_ms,
                               err);
  s->dir = dir;
  make_part_table(s);
  if (rc == SL_OK)
    rc = scan(s, err);
  if (rc == SL_OK)
    rc = open_next(s, err);
  if (rc != SL_OK) {
    parts_close(s);
    return rc;
  }
  s->next_scan = sl_clock_seconds() + (double)s->monitor_ms / 1000.0;
  *out = s;
  return SL_OK;
}

/* Following, with every file read: wait for the next look at the
 * directory (at most 100 ms at a time, so that the worker sees its cancel
 * flag), then take what is new. */
static int wait_for_parts(sl_source *s, sl_error *err) {
  if (!sl_clock_nap_until(s->next_scan, 0.1))
    return SL_OK;
  s->next_scan = sl_clock_seconds() + (double)s->monitor_ms / 1000.0;
  int rc = scan(s, err);
  return rc == SL_OK ? open_next(s, err) : rc;
}

static int parts_next(sl_source *s, sl_buffer *buf, bool *done, sl_error *err) {
  *done = false;
  for (;;) {
    if (s->file) {
      bool file_done = false;
      int rc = s->reader->next(s->file, buf, &file_done, err);
      if (rc != SL_OK || !file_done || !s->is_dir) {
        *done = file_done;
        return rc;
      }
      rc = open_next(s, err); /* this file is read: the next one */
      if (rc != SL_OK)
        return rc;
      continue;
    }
    if (!s->monitor_ms) {
      *done = true;
      return SL_OK;
    }
    if (buf->nrows > 0)
      return SL_OK; /* hand these on before waiting */
    int rc = wait_for_parts(s, err);
    if (rc != SL_OK || !s->file)
      return rc;
  }
}

static void parts_stats(const sl_source *s, sl_source_stats *out) {
  *out = s->done_stats;
  if (s->file && s->reader->stats) {
    sl_source_stats st = {0};
    s->reader->stats(s->file, &st);
    out->rows += st.rows;
    out->bytes += st.bytes;
    out->skipped_rows += st.skipped_rows;
  }
}

static int parts_validate(const sl_table_def *t, sl_error *err) {
  return sl_source_filesystem.validate(t, err);
}

const sl_source_connector sl_source_files = {
    .name = "filesystem",
    .description = "reads CSV: one file, or the part files of a directory "
                   "('path', 'format' = 'csv')",
    .validate = parts_validate,
    .open = parts_open,
    .next = parts_next,
    .stats = parts_stats,
    .close = parts_close,
};
