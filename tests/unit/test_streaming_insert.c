/* test_streaming_insert.c - an INSERT over an unbounded stream, watched
 * from outside while it runs: its rows must be readable before it ends
 * (finished CSV part files, SQLite rows from another connection), and
 * stopping it (Ctrl-C: sl_cancel_request) must leave only whole rows in
 * view and nothing in progress.
 *
 * The INSERT runs in a thread of its own session; the test polls the
 * table's files or database for up to WAIT_SECONDS (a generous bound: a
 * working sink shows rows within about a second, a broken one never), then
 * stops the query as Ctrl-C does.
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "io_helpers.h"
#include "sluice/common/cancel.h"

enum { WAIT_SECONDS = 30 };

/* What the writer's INSERT is stopped with, as the shell's Ctrl-C. */
static sl_cancel ctrl_c;

/* A paced sequence 1, 2, 3, ... with event time, that runs for hours. */
static const char *source_sql =
    "CREATE TABLE seq (n BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
    "WITH ('connector' = 'datagen', 'rows-per-second' = '400', "
    "'fields.n.kind' = 'sequence', 'fields.n.start' = '1', "
    "'fields.n.end' = '100000000')";

typedef struct running {
  sl_session *session;
  const char *sql;
  pthread_t thread;
  int rc;
  char message[512];
} running;

static void *run_insert(void *arg) {
  running *r = arg;
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_error err = {0};
  r->rc =
      sl_session_execute(r->session, r->sql, strlen(r->sql), 1, &sink, &err);
  snprintf(r->message, sizeof r->message, "%s", err.message ? err.message : "");
  sl_error_clear(&err);
  return NULL;
}

static void start(running *r, sl_session *s, const char *sql) {
  r->session = s;
  r->sql = sql;
  sl_cancel_clear(&ctrl_c);
  assert_int_equal(pthread_create(&r->thread, NULL, run_insert, r), 0);
}

/* Ctrl-C: the query stops (cancelled), its sinks closed. */
static void stop(running *r) {
  sl_cancel_request(&ctrl_c);
  pthread_join(r->thread, NULL);
  sl_cancel_clear(&ctrl_c);
  if (r->rc != SL_ECANCELLED)
    fail_msg("the INSERT ended with %d (%s), not as cancelled", r->rc,
             r->message);
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- part files ---------------------------------------------------------- */

typedef struct parts {
  int visible, hidden;
  long rows;          /* lines in the visible parts */
  long bytes_max;     /* the largest visible part */
  bool all_whole;     /* every visible part ends with a line break and
                       * holds only numbers (whole rows) */
  bool any_duplicate; /* a number twice in the visible parts */
} parts;

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Look at dir's files: the visible ones are read (first column: n). */
static parts look(const char *dir) {
  parts p = {0, 0, 0, 0, true, false};
  long *seen = NULL;
  size_t nseen = 0, cap = 0;
  DIR *d = opendir(dir);
  if (!d)
    return p;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    if (e->d_name[0] == '.') {
      p.hidden++;
      continue;
    }
    p.visible++;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    char *text = read_file(path);
    if (!text)
      continue; /* renamed away meanwhile (cannot happen here) */
    size_t len = strlen(text);
    if ((long)len > p.bytes_max)
      p.bytes_max = (long)len;
    if (len == 0 || text[len - 1] != '\n')
      p.all_whole = false;
    for (char *line = text; *line;) {
      char *end;
      long n = strtol(line, &end, 10);
      if (end == line || (*end != ',' && *end != '\n'))
        p.all_whole = false;
      if (nseen == cap) {
        cap = cap ? cap * 2 : 1024;
        seen = realloc(seen, cap * sizeof *seen);
      }
      seen[nseen++] = n;
      p.rows++;
      char *nl = strchr(line, '\n');
      line = nl ? nl + 1 : line + strlen(line);
    }
    free(text);
  }
  closedir(d);
  if (nseen > 1)
    qsort(seen, nseen, sizeof *seen, cmp_long);
  for (size_t i = 1; i < nseen; i++)
    if (seen[i] == seen[i - 1])
      p.any_duplicate = true;
  free(seen);
  return p;
}

typedef struct fixture {
  char *dir;
  sl_session *writer, *reader;
  char table_dir[600];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = make_tmpdir();
  f->writer = sl_session_new();
  sl_session_set_cancel(f->writer, &ctrl_c);
  f->reader = sl_session_new();
  run_sql(f->writer, source_sql);
  snprintf(f->table_dir, sizeof f->table_dir, "%s/out", f->dir);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  sl_session_free(f->writer);
  sl_session_free(f->reader);
  rm_tree(f->dir);
  free(f);
  return 0;
}

/* CREATE TABLE out (n BIGINT[, extra]) as a CSV directory with options,
 * in both sessions. */
static void make_csv_table(fixture *f, const char *cols, const char *options) {
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE out (%s) WITH ('connector' = 'filesystem', "
           "'path' = '%s', 'format' = 'csv'%s)",
           cols, f->table_dir, options);
  run_sql(f->writer, sql);
  run_sql(f->reader, sql);
}

/* Wait until dir shows at least min_parts visible parts. */
static parts wait_for_parts(const char *dir, int min_parts) {
  double until = (double)time(NULL) + WAIT_SECONDS;
  parts p;
  do {
    nap_ms(50);
    p = look(dir);
  } while (p.visible < min_parts && (double)time(NULL) < until);
  return p;
}

/* A stopped query: every row it wrote is in a finished part, whole, once;
 * nothing in progress is left; the filesystem source reads them all. */
static void check_after_stop(fixture *f) {
  parts p = look(f->table_dir);
  assert_int_equal(p.hidden, 0);
  assert_true(p.visible > 0);
  assert_true(p.all_whole);
  assert_false(p.any_duplicate);
  uint64_t rows = 0;
  sl_result_sink sink = sl_result_sink_discard(&rows);
  sl_error err = {0};
  const char *q = "SELECT n FROM out";
  if (sl_session_execute(f->reader, q, strlen(q), 1, &sink, &err) != SL_OK)
    fail_msg("%s", err.message);
  assert_int_equal((long)rows, p.rows);
}

/* Without windows: parts roll by time ('rollover-interval', checked every
 * 'check-interval'), each in view as it finishes, whole. */
static void test_parts_roll_by_interval(void **state) {
  fixture *f = *state;
  make_csv_table(f, "n BIGINT",
                 ", 'sink.rolling-policy.rollover-interval' = '200 ms', "
                 "'sink.rolling-policy.check-interval' = '50 ms'");
  running r;
  start(&r, f->writer, "INSERT INTO out SELECT n FROM seq");
  parts p = wait_for_parts(f->table_dir, 3);
  assert_true(p.visible >= 3);
  assert_true(p.all_whole);
  /* Another query reads the finished parts while the INSERT runs. */
  uint64_t rows = 0;
  sl_result_sink sink = sl_result_sink_discard(&rows);
  sl_error err = {0};
  const char *q = "SELECT n FROM out";
  if (sl_session_execute(f->reader, q, strlen(q), 1, &sink, &err) != SL_OK)
    fail_msg("%s", err.message);
  assert_true(rows >= (uint64_t)p.rows);
  stop(&r);
  check_after_stop(f);
}

static double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 'check-interval' is how often the rollover interval is checked (Flink's
 * filesystem connector): with parts due after 20 ms but checked once a
 * second, a part rolls at most once a second.  Checking at every batch
 * instead (the option ignored) rolls tens of parts a second; not reading it
 * (the default, 1 min) rolls none before the stop. */
static void test_check_interval_paces_rolls(void **state) {
  fixture *f = *state;
  make_csv_table(f, "n BIGINT",
                 ", 'sink.rolling-policy.rollover-interval' = '20 ms', "
                 "'sink.rolling-policy.check-interval' = '1 s'");
  running r;
  double t0 = monotonic_seconds();
  start(&r, f->writer, "INSERT INTO out SELECT n FROM seq");
  parts p = wait_for_parts(f->table_dir, 1);
  assert_true(p.visible >= 1); /* a check rolled the first part */
  nap_ms(2000);
  p = look(f->table_dir);
  double elapsed = monotonic_seconds() - t0;
  stop(&r);
  /* One roll per whole second at most, and the part the stop finishes. */
  if (p.visible > (int)elapsed + 1)
    fail_msg("%d parts rolled in %.1f s with a check-interval of 1 s",
             p.visible, elapsed);
  check_after_stop(f);
}

/* The same in a PARTITIONED BY table (q10's sink): each partition's part
 * is checked once a second.  One partition, committed only after an hour,
 * so that nothing but the rolling policy finishes its parts. */
static void test_check_interval_paces_partition_rolls(void **state) {
  fixture *f = *state;
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE out (n BIGINT, dt STRING) PARTITIONED BY (dt) WITH "
           "('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv', "
           "'sink.partition-commit.delay' = '1 h', "
           "'sink.rolling-policy.rollover-interval' = '20 ms', "
           "'sink.rolling-policy.check-interval' = '1 s')",
           f->table_dir);
  run_sql(f->writer, sql);
  run_sql(f->reader, sql);
  char part_dir[700];
  snprintf(part_dir, sizeof part_dir, "%s/dt=d", f->table_dir);
  running r;
  double t0 = monotonic_seconds();
  start(&r, f->writer, "INSERT INTO out SELECT n, 'd' FROM seq");
  parts p = wait_for_parts(part_dir, 1);
  assert_true(p.visible >= 1);
  nap_ms(2000);
  p = look(part_dir);
  double elapsed = monotonic_seconds() - t0;
  stop(&r);
  if (p.visible > (int)elapsed + 1)
    fail_msg("%d parts rolled in %.1f s with a check-interval of 1 s",
             p.visible, elapsed);
  assert_true(p.all_whole);
}

/* Parts roll by size: none grows past 'file-size' by more than a row. */
static void test_parts_roll_by_size(void **state) {
  fixture *f = *state;
  make_csv_table(f, "n BIGINT", ", 'sink.rolling-policy.file-size' = '1kb'");
  running r;
  start(&r, f->writer, "INSERT INTO out SELECT n FROM seq");
  parts p = wait_for_parts(f->table_dir, 3);
  stop(&r);
  assert_true(p.visible >= 3);
  assert_true(p.bytes_max <= 1024 + 20);
  check_after_stop(f);
}

/* A windowed INSERT: each fired window rolls the part into view (the
 * default rollover interval, 30 min, never comes). */
static void test_parts_per_window(void **state) {
  fixture *f = *state;
  make_csv_table(f, "n BIGINT, c BIGINT", "");
  running r;
  start(&r, f->writer,
        "INSERT INTO out SELECT MAX(n), COUNT(*) FROM TABLE(TUMBLE(TABLE seq, "
        "DESCRIPTOR(ts), INTERVAL '100' MILLISECOND)) "
        "GROUP BY window_start, window_end");
  parts p = wait_for_parts(f->table_dir, 2);
  stop(&r);
  assert_true(p.visible >= 2);
  assert_true(p.all_whole);
  check_after_stop(f);
}

/* Stopped without any roll: the open part is finished with its rows (the
 * default policy would keep it open for 30 min). */
static void test_stop_keeps_open_part(void **state) {
  fixture *f = *state;
  make_csv_table(f, "n BIGINT", "");
  running r;
  start(&r, f->writer, "INSERT INTO out SELECT n FROM seq");
  /* Until the part in progress holds rows. */
  double until = (double)time(NULL) + WAIT_SECONDS;
  parts p;
  do {
    nap_ms(50);
    p = look(f->table_dir);
  } while (p.hidden == 0 && (double)time(NULL) < until);
  assert_int_equal(p.visible, 0); /* nothing finished yet */
  nap_ms(300);
  stop(&r);
  check_after_stop(f);
}

/* ---- SQLite -------------------------------------------------------------- */

static long count_rows(const char *db_path, int *busy) {
  sqlite3 *db = NULL;
  long n = -1;
  /* No busy timeout: a reader that finds the database locked says so. */
  if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM out", -1, &st, NULL);
    if (rc == SQLITE_OK)
      rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    else if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
      (*busy)++;
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

/* Rows show in another connection while the INSERT runs (committed at
 * least once a second), and that reader is never locked out (WAL, for a
 * database the sink creates). */
static void test_sqlite_rows_visible_while_running(void **state) {
  fixture *f = *state;
  char db[700], sql[1024];
  snprintf(db, sizeof db, "%s/out.db", f->dir);
  snprintf(sql, sizeof sql,
           "CREATE TABLE out (n BIGINT) WITH ('connector' = 'sqlite', "
           "'path' = '%s')",
           db);
  run_sql(f->writer, sql);
  running r;
  start(&r, f->writer, "INSERT INTO out SELECT n FROM seq");
  double until = (double)time(NULL) + WAIT_SECONDS;
  long first = -1, later = -1;
  int busy = 0, reads = 0;
  while ((double)time(NULL) < until && later <= first) {
    nap_ms(100);
    /* (While the sink creates the database and its table, a reader
     * without a busy timeout may find it locked for an instant.) */
    int *locked = first > 0 ? &busy : &(int){0};
    long n = count_rows(db, locked);
    reads++;
    if (n > 0 && first < 0)
      first = n;
    else if (first > 0)
      later = n;
  }
  stop(&r);
  assert_true(first > 0);     /* rows committed while it ran */
  assert_true(later > first); /* ... and again */
  assert_int_equal(busy, 0);  /* never "database is locked" meanwhile */
  assert_true(reads > 1);
  /* Stopped: what it had produced is committed, the rest gone. */
  long after = count_rows(db, &busy);
  assert_true(after >= later);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_parts_roll_by_interval, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_check_interval_paces_rolls, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_check_interval_paces_partition_rolls,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_parts_roll_by_size, setup, teardown),
      cmocka_unit_test_setup_teardown(test_parts_per_window, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stop_keeps_open_part, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_sqlite_rows_visible_while_running,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
