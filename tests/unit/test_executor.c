/* test_executor.c - the executor's counters and limits (exec/executor.c):
 * late records are counted, events and rows are counted, LIMIT stops a
 * query, and a query over a source that fails reports the error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "session_helpers.h"
#include "sluice/binder/binder.h"
#include "sluice/common/strbuf.h"
#include "sluice/exec/executor.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/plan.h"
#include "sluice/session/session.h"

static sl_session *clicks_session(int workers) {
  char sql[64];
  sl_session *s = session_with_clicks();
  snprintf(sql, sizeof sql, "SET 'parallelism.default' = '%d'", workers);
  session_exec_ok(s, sql);
  return s;
}

static void test_late_records_counted(void **state) {
  (void)state;
  for (int w = 1; w <= 4; w *= 2) {
    sl_session *s = clicks_session(w);
    sl_query_stats st;
    uint64_t rows;
    sl_error err = {0};
    assert_int_equal(
        session_run_query(
            s,
            "SELECT user_name, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, "
            "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY user_name, "
            "window_start, window_end",
            &st, &rows, &err),
        SL_OK);
    assert_int_equal(st.events, 11);
    assert_int_equal(st.late_dropped, 1); /* carol at 3.5 s after 12 s */
    assert_int_equal(st.rows_out, 8);
    assert_int_equal(rows, 8);
    assert_int_equal(st.windows_fired, 4);
    assert_int_equal(st.workers, w);
    /* A stateless query has no windows: nothing is late. */
    assert_int_equal(
        session_run_query(s, "SELECT user_name FROM clicks", &st, &rows, &err),
        SL_OK);
    assert_int_equal(st.late_dropped, 0);
    assert_int_equal(rows, 11);
    sl_session_free(s);
  }
}

static void test_limit_stops(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  /* An unbounded source: only LIMIT ends the query. */
  session_exec_ok(s, "CREATE TABLE r (key BIGINT, ts TIMESTAMP(3)) WITH "
                     "('connector' = 'ro', 'key.range' = '100')");
  sl_query_stats st;
  uint64_t rows;
  sl_error err = {0};
  assert_int_equal(
      session_run_query(s, "SELECT key FROM r LIMIT 1000", &st, &rows, &err),
      SL_OK);
  assert_int_equal(rows, 1000);
  assert_int_equal(st.rows_out, 1000);
  assert_true(st.events >= 1000);
  sl_session_free(s);
}

static void test_errors_stop_the_query(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  session_exec_ok(s, "CREATE TABLE r (key BIGINT, ts TIMESTAMP(3)) WITH "
                     "('connector' = 'ro', 'key.range' = '100', 'events.num' = "
                     "'100000')");
  sl_query_stats st;
  uint64_t rows;
  sl_error err = {0};
  /* Integer overflow in SUM is an error, not a wrap. */
  assert_int_equal(
      session_run_query(s,
                        "SELECT SUM(key + 9223372036854775000) FROM r "
                        "GROUP BY key",
                        &st, &rows, &err),
      SL_EINVAL);
  assert_non_null(strstr(err.message, "overflow"));
  sl_error_clear(&err);
  sl_session_free(s);
}

/* EXPLAIN ANALYZE runs the query and shows measured figures per operator. */
static int keep_text(void *c, const char *t) {
  sl_strbuf_append(c, t);
  return SL_OK;
}

/* The size of tests/sql/data/clicks.csv, which clicks_session reads. */
static long long clicks_file_size(void) {
  const char *dir = getenv("SLUICE_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/sql/data/clicks.csv", dir ? dir : ".");
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  return (long long)sb.st_size;
}

static void test_explain_analyze(void **state) {
  (void)state;
  sl_session *s = clicks_session(2);
  sl_strbuf text = SL_STRBUF_INIT;
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = &text; /* EXPLAIN prints text, no rows */
  sink.text = keep_text;
  const char *sql =
      "EXPLAIN ANALYZE SELECT user_name, COUNT(*) FROM clicks GROUP BY "
      "user_name, SESSION(ts, INTERVAL '3' SECOND)";
  sl_error err = {0};
  assert_int_equal(sl_session_execute(s, sql, strlen(sql), 1, &sink, &err),
                   SL_OK);
  const char *out = sl_strbuf_cstr(&text);
  assert_non_null(strstr(out, "== Physical plan =="));
  assert_non_null(strstr(out, "Sink shell (actual: rows=8,"));
  assert_non_null(strstr(out, "late records dropped=1,"));
  assert_non_null(strstr(out, "windows fired=8,"));
  assert_non_null(strstr(out, "rows in=10,")); /* 11 events - 1 late */
  /* The source's bytes: the whole file, read by the two workers' shares. */
  char want[128];
  snprintf(want, sizeof want,
           "reads=[user_name, ts] of 4 leaves] (actual: rows=11, bytes=%lld)",
           clicks_file_size());
  assert_non_null(strstr(out, want));
  sl_strbuf_free(&text);
  sl_session_free(s);
}

/* A staged plan's leaves each read their own copy of the stream: the
 * Stages line shows the bytes of all of them (two leaves over clicks: the
 * file twice). */
static void test_explain_analyze_stages_input(void **state) {
  (void)state;
  sl_session *s = clicks_session(2);
  sl_strbuf text = SL_STRBUF_INIT;
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = &text;
  sink.text = keep_text;
  const char *sql =
      "EXPLAIN ANALYZE SELECT a.user_name, a.n, b.n FROM (SELECT user_name, "
      "window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, "
      "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY user_name, "
      "window_start, window_end) a JOIN (SELECT url, window_start, COUNT(*) "
      "AS n FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' "
      "SECOND)) GROUP BY url, window_start, window_end) b ON a.window_start "
      "= b.window_start AND a.n = b.n";
  sl_error err = {0};
  assert_int_equal(sl_session_execute(s, sql, strlen(sql), 1, &sink, &err),
                   SL_OK);
  const char *out = sl_strbuf_cstr(&text);
  assert_non_null(strstr(out, "Stages { 2 leaves"));
  char want[64];
  snprintf(want, sizeof want, "leaf input bytes=%lld)", 2 * clicks_file_size());
  assert_non_null(strstr(out, want));
  sl_strbuf_free(&text);
  sl_session_free(s);
}

/* Under repartitioning the exchange edge shows what crossed it.  The
 * small clicks file is read by worker 0 alone, so the rows whose keys
 * worker 1 owns cross, and nothing else does. */
static void test_explain_analyze_exchange(void **state) {
  (void)state;
  sl_session *s = clicks_session(2);
  sl_strbuf text = SL_STRBUF_INIT;
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = &text;
  sink.text = keep_text;
  sl_error err = {0};
  const char *set = "SET 'sluice.strategy' = 'repartition'";
  assert_int_equal(sl_session_execute(s, set, strlen(set), 1, &sink, &err),
                   SL_OK);
  const char *sql = "EXPLAIN ANALYZE SELECT user_name, COUNT(*) FROM clicks "
                    "GROUP BY user_name, TUMBLE(ts, INTERVAL '10' SECOND)";
  assert_int_equal(sl_session_execute(s, sql, strlen(sql), 1, &sink, &err),
                   SL_OK);
  const char *ex = strstr(sl_strbuf_cstr(&text), "Exchange {");
  assert_non_null(ex);
  const char *sent = strstr(ex, "rows sent to other workers=");
  assert_non_null(sent);
  long rows = strtol(sent + strlen("rows sent to other workers="), NULL, 10);
  assert_true(rows >= 1 && rows <= 11);
  const char *slots = strstr(ex, "slots=");
  assert_non_null(slots);
  assert_true(strtol(slots + strlen("slots="), NULL, 10) >= 1);
  sl_strbuf_free(&text);
  sl_session_free(s);
}

/* An owner that gets no rows from another worker must still learn that
 * worker's watermark, or it never fires a window of an unbounded stream.
 * One key: every record goes to the same owner, so the other worker gets
 * nothing but watermarks.  Before empty watermark slots this query never
 * ended (the LIMIT needs windows to fire). */
static void test_repartition_idle_owner_fires(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_error err = {0};
  const char *setup[] = {
      "SET 'parallelism.default' = '2'",
      "SET 'sluice.strategy' = 'repartition'",
      "CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
      "ts) WITH ('connector' = 'ro', 'key.range' = '1')",
      "SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE ro, DESCRIPTOR(ts), "
      "INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end LIMIT 2",
  };
  for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++)
    if (sl_session_execute(s, setup[i], strlen(setup[i]), 1, &sink, &err) !=
        SL_OK)
      fail_msg("%s: %s", setup[i], err.message);
  sl_session_free(s);
}

/* The summary's events are every source's: a join of clicks (11 records)
 * and buys (10) read 21, on one process and on two nodes under each join
 * strategy (before issue 27 it said 11: the larger leaf's count).  A
 * self-join reads one table's stream twice: 11. */
static int ignore_begin(void *ctx, int ncols, const char *const *names,
                        const sl_type *const *types) {
  (void)ctx, (void)ncols, (void)names, (void)types;
  return SL_OK;
}
static int ignore_row(void *ctx, const char *const *cells) {
  (void)ctx, (void)cells;
  return SL_OK;
}
static int ignore_end(void *ctx) {
  (void)ctx;
  return SL_OK;
}
static int keep_notice(void *ctx, const char *text) {
  sl_strbuf *b = ctx;
  sl_strbuf_reset(b);
  sl_strbuf_append(b, text);
  return SL_OK;
}

/* Run sql; its summary (the last notice) must hold `events`. */
static void expect_events(sl_session *s, const char *sql, const char *events) {
  sl_strbuf notice = SL_STRBUF_INIT;
  sl_result_sink sink = {&notice,     ignore_begin, ignore_row,
                         NULL,        ignore_end,   keep_notice,
                         keep_notice, NULL,         NULL};
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
  if (!strstr(sl_strbuf_cstr(&notice), events))
    fail_msg("%s: the summary '%s' lacks '%s'", sql, sl_strbuf_cstr(&notice),
             events);
  sl_strbuf_free(&notice);
}

static void test_join_counts_every_source(void **state) {
  (void)state;
  const char *dir = getenv("SLUICE_SOURCE_DIR");
  char buys[1024];
  snprintf(buys, sizeof buys,
           "CREATE TABLE buys (user_name STRING, amount INT, ts TIMESTAMP(3), "
           "WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' "
           "= '%s/tests/sql/data/buys.csv', 'format' = 'csv')",
           dir ? dir : ".");
  static const char *const strategies[] = {"auto", "single", "broadcast",
                                           "repartition", "late-merge"};
  for (int nodes = 1; nodes <= 2; nodes++) {
    for (int k = 0; k < (nodes == 1 ? 1 : 5); k++) {
      sl_session *s = clicks_session(2);
      session_exec_ok(s, buys);
      char set[128];
      snprintf(set, sizeof set, "SET 'sluice.nodes' = '%d'", nodes);
      session_exec_ok(s, set);
      snprintf(set, sizeof set, "SET 'sluice.join-strategy' = '%s'",
               strategies[k]);
      session_exec_ok(s, set);
      /* A regular join of two streams (updating stages), a window join. */
      expect_events(s,
                    "SELECT c.url, b.amount FROM clicks c JOIN buys b ON "
                    "c.user_name = b.user_name",
                    " 21 events in ");
      expect_events(
          s,
          "SELECT c.user_name, c.n, b.m FROM (SELECT user_name, "
          "window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE "
          "clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY user_name, "
          "window_start, window_end) c JOIN (SELECT user_name, window_start, "
          "window_end, SUM(amount) AS m FROM TABLE(TUMBLE(TABLE buys, "
          "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY user_name, "
          "window_start, window_end) b ON c.user_name = b.user_name AND "
          "c.window_start = b.window_start AND c.window_end = b.window_end",
          " 21 events in ");
      expect_events(s,
                    "SELECT a.url, b.url FROM clicks a JOIN clicks b ON "
                    "a.user_name = b.user_name",
                    " 11 events in ");
      sl_session_free(s);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_late_records_counted),
      cmocka_unit_test(test_limit_stops),
      cmocka_unit_test(test_errors_stop_the_query),
      cmocka_unit_test(test_explain_analyze),
      cmocka_unit_test(test_explain_analyze_stages_input),
      cmocka_unit_test(test_explain_analyze_exchange),
      cmocka_unit_test(test_repartition_idle_owner_fires),
      cmocka_unit_test(test_join_counts_every_source),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
