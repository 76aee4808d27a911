/* sink_partitions.c - INSERT INTO a filesystem table with PARTITIONED BY
 * (NEXMark q10): rows go to <path>/<col>=<value>/.../part-<id>-<n>.csv, as
 * Flink's filesystem sink writes them.  The partition columns are not in
 * the files: their values are in the directory names (escaped as Flink
 * does: '%3A' for ':', '%2F' for '/', ...).
 *
 * A partition's rows go to one open part file at a time, written as
 * ".part-<id>-<n>.csv.inprogress" and renamed to its final name
 * (sink_part_file.c) when it rolls ('sink.rolling-policy.file-size',
 * default 128 MB, or 'sink.rolling-policy.rollover-interval' of processing
 * time since it was opened, default 30 min, checked every
 * 'sink.rolling-policy.check-interval', default 1 min), at every fired
 * window of an unbounded query, when its partition commits, and when the
 * query ends.  A failed bounded query removes its in-progress files; a
 * stopped unbounded one finishes them with the rows complete at its last
 * round; so a reader sees only whole files.
 *
 * A partition commits ('sink.partition-commit.trigger'):
 *   process-time   'sink.partition-commit.delay' (default 0) after it was
 *                  created, by the processing-time clock;
 *   partition-time once the watermark passes its time plus the delay, the
 *                  time extracted from its values by
 *                  'partition.time-extractor.timestamp-pattern' ('$dt
 *                  $hm:00'; default: the first partition column's value,
 *                  'yyyy-MM-dd[ HH:mm:ss]').
 * Committing closes its file and, under 'sink.partition-commit.policy.kind'
 * = 'success-file', writes an empty '_SUCCESS' file (or
 * 'sink.partition-commit.success-file.name') into its directory.  At the
 * end of the query every partition commits.  A row that comes for a
 * committed partition (a late one) opens a new file there, committed
 * again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/common/clock.h"
#include "sluice/connectors/io_connectors.h"
#include "sluice/row/value_text.h"

typedef struct partition {
  char *dir;      /* <path>/col=value/... */
  char **values;  /* the partition columns' values as text (NULL: null) */
  int64_t time;   /* partition time (us), or INT64_MIN when not known */
  double created; /* processing time (s) */
  bool committed;
  fs_part file; /* the open part (file.fp != NULL) */
} partition;

struct fs_partitions {
  const sl_table_def *table;
  const sl_row_layout *layout;
  const csv_format *fmt;
  const char *root;
  int first;  /* first result field of the table's columns (1 after op) */
  int npart;  /* partition columns */
  int *field; /* their result fields */
  bool *is_part;
  bool partition_time; /* the trigger */
  int64_t delay_us;
  bool success_file;
  const char *success_name;
  const char *pattern; /* '$dt $hm:00', or NULL */
  fs_rolling roll;
  double next_check; /* of the rollover interval */
  double last_roll;  /* of the parts at a commit */
  bool roll_due;     /* a window was committed since */
  bool ticks;        /* watermark() is called (not by the stage runner) */
  bool units;        /* commit() was called: rows come in units (windows) */
  bool unbounded;
  char id[17]; /* the files' names: part-<id>-<n>.csv */
  unsigned next_file;
  partition *parts;
  int nparts, cap;
  sl_strbuf line, key;
  char **values; /* a row's partition values (into key), one per column */
  size_t *at;    /* ... their offsets in key while it is built */
};

/* A directory name's value as Flink escapes it. */
static void escape_value(sl_strbuf *b, const char *v) {
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
    if (*p < 0x20 || *p == 0x7f || strchr("\"#%'*/:=?\\{[]^", *p))
      sl_strbuf_printf(b, "%%%02X", *p);
    else
      sl_strbuf_appendc(b, (char)*p);
  }
}

/* The partition's time from its values and the pattern. */
static int64_t partition_time(const fs_partitions *fp, char **values) {
  sl_strbuf b = SL_STRBUF_INIT;
  if (!fp->pattern) {
    sl_strbuf_append(&b, values[0] ? values[0] : "");
  } else {
    for (const char *p = fp->pattern; *p;) {
      int hit = -1;
      size_t n = 0;
      if (*p == '$')
        for (int i = 0; i < fp->npart; i++) {
          const char *name = fp->table->partitioned_by[i];
          size_t len = strlen(name);
          if (strncmp(p + 1, name, len) == 0 && len > n) {
            hit = i;
            n = len;
          }
        }
      if (hit >= 0) {
        sl_strbuf_append(&b, values[hit] ? values[hit] : "");
        p += 1 + n;
      } else {
        sl_strbuf_appendc(&b, *p++);
      }
    }
  }
  int64_t us;
  const char *t = sl_strbuf_cstr(&b);
  bool ok = sl_value_parse_timestamp(t, strlen(t), &us);
  sl_strbuf_free(&b);
  return ok ? us : INT64_MIN;
}

static int io_failed(const fs_partitions *fp, const char *what,
                     const char *path, sl_error *err) {
  return sl_error_set(err, SL_EIO, "table '%s': %s '%s' failed: %s",
                      fp->table->name, what, path, strerror(errno));
}

/* Close p's open file and give it its final name. */
static int roll(fs_partitions *fp, partition *p, sl_error *err) {
  return fs_part_finish(&p->file, false, true, fp->table->name, err);
}

static int commit(fs_partitions *fp, partition *p, sl_error *err) {
  int rc = roll(fp, p, err);
  p->committed = true;
  if (rc != SL_OK || !fp->success_file)
    return rc;
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, "%s/%s", p->dir, fp->success_name);
  FILE *f = fopen(sl_strbuf_cstr(&b), "w");
  if (!f || fclose(f) != 0)
    rc = io_failed(fp, "writing", sl_strbuf_cstr(&b), err);
  sl_strbuf_free(&b);
  return rc;
}

/* The partition of these values (created, directory too, if new). */
static partition *find(fs_partitions *fp, char **values, sl_error *err,
                       int *rc) {
  /* From the newest: rows come in about time order. */
  for (int i = fp->nparts - 1; i >= 0; i--) {
    partition *p = &fp->parts[i];
    bool same = true;
    for (int k = 0; k < fp->npart && same; k++)
      same = (!p->values[k] && !values[k]) ||
             (p->values[k] && values[k] && !strcmp(p->values[k], values[k]));
    if (same)
      return p;
  }
  if (fp->nparts == fp->cap) {
    fp->cap = fp->cap ? fp->cap * 2 : 16;
    fp->parts = realloc(fp->parts, sizeof *fp->parts * (size_t)fp->cap);
    if (!fp->parts)
      abort();
  }
  partition *p = &fp->parts[fp->nparts];
  memset(p, 0, sizeof *p);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_append(&b, fp->root);
  p->values = calloc((size_t)fp->npart, sizeof *p->values);
  if (!p->values)
    abort();
  for (int k = 0; k < fp->npart; k++) {
    sl_strbuf_printf(&b, "/%s=", fp->table->partitioned_by[k]);
    /* Flink's name for a NULL partition value. */
    escape_value(&b, values[k] ? values[k] : "__DEFAULT_PARTITION__");
    p->values[k] = values[k] ? strdup(values[k]) : NULL;
  }
  p->dir = sl_strbuf_detach(&b);
  if (fs_make_dirs(p->dir) != 0) {
    *rc = io_failed(fp, "creating the directory", p->dir, err);
    free(p->dir);
    for (int k = 0; k < fp->npart; k++)
      free(p->values[k]);
    free(p->values);
    return NULL;
  }
  p->time = fp->partition_time ? partition_time(fp, p->values) : INT64_MIN;
  p->created = sl_clock_seconds();
  fp->nparts++;
  return p;
}

/* p's open part (a new one if none, or if it is as big as a part gets). */
static fs_part *file_of(fs_partitions *fp, partition *p, sl_error *err,
                        int *rc) {
  if (p->file.fp && (int64_t)p->file.bytes >= fp->roll.file_bytes) {
    *rc = roll(fp, p, err);
    if (*rc != SL_OK)
      return NULL;
  }
  if (p->file.fp)
    return &p->file;
  p->committed = false; /* a late row reopens a committed partition */
  *rc = fs_part_open(&p->file, p->dir, fp->id, fp->next_file++, fp->table->name,
                     err);
  return *rc == SL_OK ? &p->file : NULL;
}

int fs_partitions_open(const sl_table_def *t, const sl_row_layout *layout,
                       int first, const csv_format *fmt, const char *root,
                       bool unbounded, fs_partitions **out, sl_error *err) {
  *out = NULL;
  fs_partitions *fp = calloc(1, sizeof *fp);
  if (!fp)
    abort();
  fp->table = t;
  fp->layout = layout;
  fp->fmt = fmt;
  fp->root = root;
  fp->first = first;
  fp->unbounded = unbounded;
  fp->npart = t->npartitioned_by;
  fp->field = calloc((size_t)fp->npart, sizeof *fp->field);
  fp->is_part = calloc((size_t)layout->nfields + 1, sizeof *fp->is_part);
  fp->values = calloc((size_t)fp->npart + 1, sizeof *fp->values);
  fp->at = calloc((size_t)fp->npart + 1, sizeof *fp->at);
  if (!fp->field || !fp->is_part || !fp->values || !fp->at)
    abort();
  int rc = SL_OK;
  for (int k = 0; k < fp->npart && rc == SL_OK; k++) {
    fp->field[k] = -1;
    for (int c = 0; c < t->ncolumns; c++)
      if (!strcasecmp(t->columns[c].name, t->partitioned_by[k]))
        fp->field[k] = first + c;
    if (fp->field[k] < 0 || fp->field[k] >= layout->nfields)
      rc = sl_error_set(err, SL_EINVAL,
                        "table '%s': PARTITIONED BY names '%s', which is not "
                        "one of its columns",
                        t->name, t->partitioned_by[k]);
    else
      fp->is_part[fp->field[k]] = true;
  }
  const char *trigger = sl_table_def_option(t, "sink.partition-commit.trigger");
  const char *policy =
      sl_table_def_option(t, "sink.partition-commit.policy.kind");
  int64_t delay_ms = 0;
  if (rc == SL_OK && trigger && strcasecmp(trigger, "partition-time") &&
      strcasecmp(trigger, "process-time"))
    rc = sl_error_set(err, SL_EINVAL,
                      "table '%s': 'sink.partition-commit.trigger' must be "
                      "'process-time' or 'partition-time', got '%s'",
                      t->name, trigger);
  if (rc == SL_OK && policy && strcasecmp(policy, "success-file"))
    rc = sl_error_set(err, SL_EUNSUPPORTED,
                      "table '%s': 'sink.partition-commit.policy.kind' = "
                      "'%s' is not supported; 'success-file' is (there is "
                      "no metastore)",
                      t->name, policy);
  if (rc == SL_OK)
    rc = sl_option_duration_ms(t, "sink.partition-commit.delay", 0, &delay_ms,
                               err);
  if (rc == SL_OK)
    rc = fs_rolling_read(t, &fp->roll, err);
  if (rc != SL_OK) {
    fs_partitions_close(fp, false, NULL);
    return rc;
  }
  fp->partition_time = trigger && !strcasecmp(trigger, "partition-time");
  fp->delay_us = delay_ms * 1000;
  fp->next_check = sl_clock_seconds() + fp->roll.check_seconds;
  fp->success_file = policy != NULL;
  fp->success_name =
      sl_table_def_option(t, "sink.partition-commit.success-file.name");
  if (!fp->success_name)
    fp->success_name = "_SUCCESS";
  fp->pattern =
      sl_table_def_option(t, "partition.time-extractor.timestamp-pattern");
  fs_part_new_id(fp->id);
  *out = fp;
  return SL_OK;
}

static int check_rollover(fs_partitions *fp, sl_error *err);

int fs_partitions_write(fs_partitions *fp, const sl_buffer *rows,
                        sl_error *err) {
  const sl_row_layout *l = fp->layout;
  char **values = fp->values;
  size_t *at = fp->at;
  int rc = SL_OK;
  for (uint32_t r = 0; r < rows->nrows && rc == SL_OK; r++) {
    const uint8_t *row = sl_buffer_row(rows, r);
    sl_strbuf_reset(&fp->key);
    for (int k = 0; k < fp->npart; k++) {
      at[k] = fp->key.len;
      if (!sl_row_is_null(row, fp->field[k]))
        sl_value_append(&fp->key, l, row, fp->field[k]);
      sl_strbuf_appendc(&fp->key, '\0');
    }
    for (int k = 0; k < fp->npart; k++)
      values[k] =
          sl_row_is_null(row, fp->field[k]) ? NULL : fp->key.data + at[k];
    partition *p = find(fp, values, err, &rc);
    fs_part *f = p ? file_of(fp, p, err, &rc) : NULL;
    if (!f)
      break;
    sl_strbuf_reset(&fp->line);
    sl_csv_format_row(&fp->line, fp->fmt, l, row, fp->is_part);
    rc = fs_part_write(f, fp->line.data, fp->line.len, fp->table->name, err);
  }
  /* A query without windows never commits a unit, and its rows are each
   * whole: the rollover interval is checked after a batch too, for when
   * rounds are long (a sink slower than the source). */
  if (rc == SL_OK && fp->unbounded && !fp->units) {
    for (int i = 0; i < fp->nparts; i++)
      fs_part_mark_safe(&fp->parts[i].file);
    rc = check_rollover(fp, err);
  }
  return rc;
}

/* Every check-interval: the open parts older than the rollover interval
 * roll. */
static int check_rollover(fs_partitions *fp, sl_error *err) {
  double now = sl_clock_seconds();
  if (now < fp->next_check)
    return SL_OK;
  fp->next_check = now + fp->roll.check_seconds;
  int rc = SL_OK;
  for (int i = 0; i < fp->nparts && rc == SL_OK; i++) {
    partition *p = &fp->parts[i];
    if (p->file.fp && now - p->file.opened >= fp->roll.rollover_seconds)
      rc = roll(fp, p, err);
  }
  return rc;
}

/* The clock, between rounds: the open files hold whole rows; those older
 * than the rollover interval roll (checked every check-interval); the
 * partitions due commit. */
static int roll_all(fs_partitions *fp, sl_error *err);

int fs_partitions_watermark(fs_partitions *fp, int64_t wm, sl_error *err) {
  double now = sl_clock_seconds();
  int rc = SL_OK;
  fp->ticks = true;
  for (int i = 0; i < fp->nparts; i++)
    fs_part_mark_safe(&fp->parts[i].file);
  if (fp->roll_due && now - fp->last_roll >= FS_COMMIT_ROLL_GAP_SECONDS)
    rc = roll_all(fp, err);
  if (rc == SL_OK)
    rc = check_rollover(fp, err);
  for (int i = 0; i < fp->nparts && rc == SL_OK; i++) {
    partition *p = &fp->parts[i];
    if (p->committed) /* (a rolled part: still due) */
      continue;
    bool due = fp->partition_time
                   ? p->time != INT64_MIN && wm != INT64_MIN &&
                         wm >= p->time + fp->delay_us
                   : (now - p->created) * 1e6 >= (double)fp->delay_us;
    if (due)
      rc = commit(fp, p, err);
  }
  return rc;
}

/* Every open part rolls (an unbounded query's, at a fired window). */
static int roll_all(fs_partitions *fp, sl_error *err) {
  int rc = SL_OK;
  fp->roll_due = false;
  fp->last_roll = sl_clock_seconds();
  for (int i = 0; i < fp->nparts && rc == SL_OK; i++) {
    fs_part_mark_safe(&fp->parts[i].file);
    rc = roll(fp, &fp->parts[i], err);
  }
  return rc;
}

int fs_partitions_commit(fs_partitions *fp, sl_error *err) {
  fp->units = true;
  if (!fp->unbounded)
    return SL_OK;
  if (!fp->ticks ||
      sl_clock_seconds() - fp->last_roll >= FS_COMMIT_ROLL_GAP_SECONDS)
    return roll_all(fp, err);
  for (int i = 0; i < fp->nparts; i++)
    fs_part_mark_safe(&fp->parts[i].file);
  fp->roll_due = true;
  return SL_OK;
}

int fs_partitions_close(fs_partitions *fp, bool ok, sl_error *err) {
  int rc = SL_OK;
  for (int i = 0; i < fp->nparts; i++) {
    partition *p = &fp->parts[i];
    if (ok && rc == SL_OK && (p->file.fp || !p->committed))
      rc = commit(fp, p, err);
    if (!ok && fp->unbounded) /* stopped: its whole rows stay */
      fs_part_finish(&p->file, true, true, fp->table->name, NULL);
    fs_part_discard(&p->file); /* failed: what is in progress goes */
    free(p->dir);
    for (int k = 0; k < fp->npart; k++)
      free(p->values[k]);
    free(p->values);
  }
  free(fp->parts);
  free(fp->field);
  free(fp->is_part);
  free(fp->values);
  free(fp->at);
  sl_strbuf_free(&fp->line);
  sl_strbuf_free(&fp->key);
  free(fp);
  return rc;
}
