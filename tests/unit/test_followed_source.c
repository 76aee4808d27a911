/* test_followed_source.c - a CSV table with 'source.monitor-interval' is
 * followed as it grows, and SET 'table.exec.source.idle-timeout' moves an
 * idle source's watermark on with the clock.
 *
 * A query runs in a thread of its own while the test appends to its file.
 * Every step waits for something the query must produce (a window's row,
 * the end of the query), never for a length of time, so a slow machine
 * only makes the test slower:
 *   - a window fires although no later record comes (idle), and a record
 *     appended for it afterwards is late, counted and dropped;
 *   - records appended later are read, a line is read only once it is
 *     complete (half a line written first is not a malformed record);
 *   - without the idle timeout nothing can fire such a window: the same
 *     query is stopped by Ctrl-C with no row;
 *   - in a join of two followed files, the one gone quiet far behind in
 *     event time does not hold the other back: its watermark moves up to
 *     the busy one's;
 *   - a file that shrinks while followed stops the query saying so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sluice/common/cancel.h"
#include "sluice/common/strbuf.h"
#include "sluice/session/session.h"

/* A query running in its own thread, and what it has produced so far. */
typedef struct running {
  sl_session *session;
  const char *sql;
  pthread_t thread;
  pthread_mutex_t lock;
  sl_strbuf rows;    /* "cell|cell\n" per row */
  sl_strbuf summary; /* the last notice */
  int nrows;
  atomic_bool finished;
  int rc;
  sl_error err;
} running;

static int on_row(void *ctx, const char *const *cells) {
  running *r = ctx;
  pthread_mutex_lock(&r->lock);
  sl_strbuf_printf(&r->rows, "%s|%s\n", cells[0] ? cells[0] : "NULL",
                   cells[1] ? cells[1] : "NULL");
  r->nrows++;
  pthread_mutex_unlock(&r->lock);
  return SL_OK;
}

static int on_notice(void *ctx, const char *text) {
  running *r = ctx;
  pthread_mutex_lock(&r->lock);
  sl_strbuf_free(&r->summary);
  sl_strbuf_append(&r->summary, text);
  pthread_mutex_unlock(&r->lock);
  return SL_OK;
}

static void *query_main(void *arg) {
  running *r = arg;
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = r;
  sink.row = on_row;
  sink.notice = on_notice;
  r->rc =
      sl_session_execute(r->session, r->sql, strlen(r->sql), 1, &sink, &r->err);
  atomic_store(&r->finished, true);
  return NULL;
}

static void start(running *r, sl_session *s, const char *sql) {
  memset(r, 0, sizeof *r);
  r->session = s;
  r->sql = sql;
  pthread_mutex_init(&r->lock, NULL);
  assert_int_equal(pthread_create(&r->thread, NULL, query_main, r), 0);
}

static void finish(running *r) {
  pthread_join(r->thread, NULL);
  sl_strbuf_free(&r->rows);
  sl_strbuf_free(&r->summary);
  sl_error_clear(&r->err);
  pthread_mutex_destroy(&r->lock);
}

static void nap(void) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

/* Wait until the query has produced n rows (or ended: then it must have
 * them).  Bounded only by ctest's timeout: a query that never produces
 * them is the failure this catches. */
static void wait_rows(running *r, int n) {
  for (;;) {
    pthread_mutex_lock(&r->lock);
    int have = r->nrows;
    pthread_mutex_unlock(&r->lock);
    if (have >= n)
      return;
    if (atomic_load(&r->finished))
      fail_msg("the query ended with %d rows, not %d (%s)", have, n,
               r->err.message ? r->err.message : "no error");
    nap();
  }
}

static void wait_finished(running *r) {
  while (!atomic_load(&r->finished))
    nap();
}

static void append(const char *path, const char *text) {
  FILE *f = fopen(path, "ab");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
  assert_int_equal(fclose(f), 0);
}

static void exec_ok(sl_session *s, const char *sql) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
}

/* What the sessions' statements are stopped with, as the shell's Ctrl-C. */
static sl_cancel ctrl_c;

/* A session with table f following path (watermark: ts itself). */
static sl_session *session_on(const char *path, const char *settings) {
  sl_session *s = sl_session_new();
  sl_session_set_cancel(s, &ctrl_c);
  char sql[1024];
  snprintf(sql, sizeof sql,
           "CREATE TABLE f (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS "
           "ts) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = "
           "'csv', 'source.monitor-interval' = '20 ms')",
           path);
  exec_ok(s, sql);
  if (settings)
    exec_ok(s, settings);
  return s;
}

static char *temp_file(const char *initial) {
  char *path = strdup("/tmp/sluice-followed-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  append(path, initial);
  return path;
}

static const char *const COUNTS =
    "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE f, "
    "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, "
    "window_end LIMIT 2";

static void idle_then_growth(const char *workers) {
  char *path = temp_file("a,2024-01-01 00:00:01.000\n"
                         "b,2024-01-01 00:00:04.500\n");
  sl_session *s =
      session_on(path, "SET 'table.exec.source.idle-timeout' = '100 ms'");
  exec_ok(s, workers);
  running r;
  start(&r, s, COUNTS);
  /* No record after 4.500: only the idle timeout can fire [0, 5). */
  wait_rows(&r, 1);
  /* Late for the fired window; then a record far ahead (the clock cannot
   * carry the idle watermark there while the test runs, however slow the
   * machine), then half a line, which must wait. */
  append(path, "c,2024-01-01 00:00:03.000\n"
               "d,2024-01-01 00:16:40.000\n"
               "e,2024-01-01 00:33:2");
  for (int i = 0; i < 10; i++)
    nap(); /* give the source the chance to misread it */
  append(path, "0.000\n");
  wait_finished(&r);
  if (r.rc != SL_OK)
    fail_msg("%s", r.err.message);
  assert_string_equal(sl_strbuf_cstr(&r.rows), "2024-01-01 00:00:00.000|2\n"
                                               "2024-01-01 00:16:40.000|1\n");
  assert_non_null(strstr(sl_strbuf_cstr(&r.summary), "1 late records dropped"));
  finish(&r);
  sl_session_free(s);
  unlink(path);
  free(path);
}

static void test_idle_window_fires_and_growth_is_read(void **state) {
  (void)state;
  idle_then_growth("SET 'parallelism.default' = '1'");
  idle_then_growth("SET 'parallelism.default' = '3'");
}

/* Without the timeout the window after the last record cannot fire (its
 * watermark never passes 4.999 while nothing is appended): the query is
 * still running, with no row, when Ctrl-C stops it. */
static void test_without_idle_timeout_nothing_fires(void **state) {
  (void)state;
  char *path = temp_file("a,2024-01-01 00:00:01.000\n"
                         "b,2024-01-01 00:00:04.500\n");
  sl_session *s = session_on(path, NULL);
  running r;
  start(&r, s, COUNTS);
  for (int i = 0; i < 25; i++)
    nap();
  assert_false(atomic_load(&r.finished));
  sl_cancel_request(&ctrl_c);
  wait_finished(&r);
  sl_cancel_clear(&ctrl_c);
  assert_int_equal(r.nrows, 0);
  assert_int_not_equal(r.rc, SL_OK);
  finish(&r);
  sl_session_free(s);
  unlink(path);
  free(path);
}

/* A window join of two followed files, one of them quiet far behind in
 * event time (its watermark an hour behind its records): an idle source
 * must not hold the other back (Flink's meaning), so once the busy side
 * has moved on, the quiet side's watermark moves up to it and [0, 5)
 * fires.  Moved by the clock alone it would take an hour. */
static void idle_join(const char *workers) {
  char *busy = temp_file("a,2024-01-01 00:00:01.000\n");
  char *quiet = temp_file("a,2024-01-01 00:00:02.000\n");
  sl_session *s = sl_session_new();
  char sql[1024];
  snprintf(sql, sizeof sql,
           "CREATE TABLE busy (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS "
           "ts) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = "
           "'csv', 'source.monitor-interval' = '20 ms')",
           busy);
  exec_ok(s, sql);
  snprintf(sql, sizeof sql,
           "CREATE TABLE quiet (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts "
           "AS ts - INTERVAL '1' HOUR) WITH ('connector' = 'filesystem', "
           "'path' = '%s', 'format' = 'csv', 'source.monitor-interval' = "
           "'20 ms')",
           quiet);
  exec_ok(s, sql);
  exec_ok(s, "SET 'table.exec.source.idle-timeout' = '100 ms'");
  exec_ok(s, workers);
  running r;
  start(&r, s,
        "SELECT b.k, b.window_start FROM (SELECT k, window_start, "
        "window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE busy, "
        "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, "
        "window_end) b JOIN (SELECT k, window_start, window_end, COUNT(*) AS "
        "n FROM TABLE(TUMBLE(TABLE quiet, DESCRIPTOR(ts), INTERVAL '5' "
        "SECOND)) GROUP BY k, window_start, window_end) q ON b.k = q.k AND "
        "b.window_start = q.window_start AND b.window_end = q.window_end "
        "LIMIT 1");
  append(busy, "a,2024-01-01 00:16:40.000\n");
  wait_finished(&r);
  if (r.rc != SL_OK)
    fail_msg("%s", r.err.message);
  assert_string_equal(sl_strbuf_cstr(&r.rows), "a|2024-01-01 00:00:00.000\n");
  finish(&r);
  sl_session_free(s);
  unlink(busy);
  unlink(quiet);
  free(busy);
  free(quiet);
}

static void test_idle_source_does_not_hold_the_other_back(void **state) {
  (void)state;
  idle_join("SET 'parallelism.default' = '1'");
  idle_join("SET 'parallelism.default' = '2'");
}

static void test_shrinking_file_stops_the_query(void **state) {
  (void)state;
  char *path = temp_file("a,2024-01-01 00:00:01.000\n"
                         "b,2024-01-01 00:00:06.000\n");
  sl_session *s = session_on(path, NULL);
  running r;
  start(&r, s, COUNTS);
  wait_rows(&r, 1); /* [0, 5) fired: the file has been read */
  assert_int_equal(truncate(path, 10), 0);
  wait_finished(&r);
  assert_int_equal(r.rc, SL_EIO);
  assert_non_null(strstr(r.err.message, "shrank"));
  finish(&r);
  sl_session_free(s);
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_idle_window_fires_and_growth_is_read),
      cmocka_unit_test(test_without_idle_timeout_nothing_fires),
      cmocka_unit_test(test_idle_source_does_not_hold_the_other_back),
      cmocka_unit_test(test_shrinking_file_stops_the_query),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
