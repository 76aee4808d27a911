/* test_stage_state.c - EXPLAIN ANALYZE's state of a staged plan, stage by
 * stage (exec/stage_eval.c, stage_sink.c; sl_query_stats.stage_peak and
 * sl_leaf_stats.held_peak): what each leaf held for the stages at most,
 * and per stage above the leaves the most one window's evaluation held
 * (its rows, its hash table).
 *
 * A window join of a CSV file with itself, one row per key: a window of
 * 1,000 rows, then one of 4,000.  The join's window state is its hash
 * table over the build side (per row a bucket head of at least 8 bytes,
 * the next link, the hash, the row and key pointers: 40 bytes) and its
 * joined rows (both sides' key, time, window start and end: 64 bytes):
 * for 4,000 rows at least 416,000 bytes, which 1,000 rows alone do not
 * reach.  The leaves hold every row of a window until it
 * fires: 4,000 rows of at least 4 eight-byte fields (key, time, window
 * start and end).
 *
 * And a stream joined with its own windows' MAX keeps only the rows that
 * can still equal it (planner/stage_extremes.c), not when the maximum is
 * over other rows, nor when rows may be late (a file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session_helpers.h"
#include "sluice/common/strbuf.h"

static int keep_text(void *c, const char *t) {
  sl_strbuf_append(c, t);
  return SL_OK;
}

/* A CSV of n1 rows in [0 s, 10 s) and n2 in [10 s, 20 s), keys 0.. */
static void write_rows(const char *path, int n1, int n2) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  for (int i = 0; i < n1 + n2; i++) {
    int in2 = i >= n1;
    int ms = (in2 ? 10000 : 0) + (in2 ? i - n1 : i) * 9999 / (in2 ? n2 : n1);
    fprintf(f, "%d,2024-01-01 00:00:%02d.%03d\n", i, ms / 1000, ms % 1000);
  }
  fclose(f);
}

#define JOIN                                                                   \
  "SELECT L.k, R.k FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' "  \
  "SECOND)) L JOIN TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' "       \
  "SECOND)) R ON L.k = R.k AND L.window_start = R.window_start AND "           \
  "L.window_end = R.window_end"

/* The join run over a file of n1 + n2 rows: its stats. */
static void run_join(int n1, int n2, sl_query_stats *st, uint64_t *rows) {
  char path[] = "/tmp/sluice_stage_state_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  write_rows(path, n1, n2);
  sl_session *s = sl_session_new();
  session_exec_ok(s, "SET 'parallelism.default' = '1'");
  char sql[512];
  snprintf(sql, sizeof sql,
           "CREATE TABLE t (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
           "ts) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = "
           "'csv')",
           path);
  session_exec_ok(s, sql);
  sl_error err = {0};
  int rc = session_run_query(s, JOIN, st, rows, &err);
  if (rc != SL_OK)
    fail_msg("%s", err.message);
  sl_session_free(s);
  unlink(path);
}

static void test_each_stage_peak(void **state) {
  (void)state;
  sl_query_stats big, small;
  uint64_t rows;
  run_join(1000, 4000, &big, &rows);
  assert_int_equal(rows, 5000);
  run_join(1000, 0, &small, &rows);
  assert_int_equal(rows, 1000);
  /* Stage 0 is the SELECT on top (its 4,000 rows of two BIGINTs), 1 the
   * join: one window's state at most, the larger window's. */
  assert_true(big.stage_peak[1] >= 4000 * 104);
  assert_true(small.stage_peak[1] < 4000 * 104);
  assert_true(small.stage_peak[1] >= 1000 * 104);
  assert_true(big.stage_peak[0] >= 4000 * 16);
  assert_true(big.stage_peak[0] > small.stage_peak[0]);
  assert_int_equal(big.stage_peak[2], 0); /* no third stage */
  /* Each leaf held at least the 4,000 rows of the larger window. */
  assert_int_equal(big.nleaves, 2);
  for (int k = 0; k < 2; k++) {
    assert_true(big.leaf[k].held_peak >= 4000 * 32);
    assert_true(small.leaf[k].held_peak >= 1000 * 32);
    assert_true(small.leaf[k].held_peak < big.leaf[k].held_peak);
  }
}

/* EXPLAIN ANALYZE prints them on the stages' and the leaves' lines. */
static void test_explain_analyze_shows_them(void **state) {
  (void)state;
  sl_session *s = session_with_clicks();
  session_exec_ok(s, "SET 'parallelism.default' = '1'");
  const char *sql =
      "EXPLAIN ANALYZE SELECT c.user_name, c.price FROM clicks c JOIN "
      "(SELECT MAX(price) AS mp, TUMBLE_ROWTIME(ts, INTERVAL '5' SECOND) AS "
      "t FROM clicks GROUP BY TUMBLE(ts, INTERVAL '5' SECOND)) m ON c.price "
      "= m.mp WHERE c.ts BETWEEN m.t - INTERVAL '5' SECOND AND m.t";
  sl_strbuf text = SL_STRBUF_INIT;
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = &text;
  sink.text = keep_text;
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK)
    fail_msg("%s", err.message);
  const char *out = sl_strbuf_cstr(&text);
  const char *p = strstr(out, "\n    Project [");
  const char *j = strstr(out, "\n      IntervalJoin [");
  assert_non_null(p);
  assert_non_null(j);
  assert_non_null(strstr(p, "(actual: peak bytes of one window="));
  assert_true(strstr(p, "(actual: peak bytes of one window=") < j);
  assert_non_null(strstr(j, "peak bytes of one window="));
  int leaves = 0;
  for (const char *at = out;
       (at = strstr(at, "peak bytes held for the stages=")); at++)
    leaves++;
  assert_int_equal(leaves, 2);
  sl_strbuf_free(&text);
  sl_session_free(s);
}

/* ---- a stream joined with its windows' MAX keeps only candidates ---- */

/* NEXMark's bids (the generator's event time never decreases), `events`
 * events at `rate` a second. */
#define NX_BIDS_AT(rate, events)                                               \
  "CREATE TABLE nx (event_type INT, bid ROW<auction BIGINT, price BIGINT, "    \
  "dateTime TIMESTAMP(3)>, person ROW<dateTime TIMESTAMP(3)>, auction "        \
  "ROW<dateTime TIMESTAMP(3)>, dateTime AS CASE WHEN event_type = 0 THEN "     \
  "person.dateTime WHEN event_type = 1 THEN auction.dateTime ELSE "            \
  "bid.dateTime END, WATERMARK FOR dateTime AS dateTime - INTERVAL '4' "       \
  "SECOND) WITH ('connector' = 'nexmark', 'first-event.rate' = '" rate         \
  "', 'next-event.rate' = '" rate "', 'events.num' = '" events "')"
/* 20,000 events at 1,000 a second: two 10 s windows. */
#define NX_BIDS NX_BIDS_AT("1000", "20000")

#define BIDS_VIEW                                                              \
  "CREATE VIEW bids AS SELECT bid.auction AS auction, bid.price AS price, "    \
  "dateTime FROM nx WHERE event_type = 2"

/* q7's join, the maximum over the bids that pass `where`. */
static const char *q7_over(char *buf, size_t n, const char *where) {
  snprintf(buf, n,
           "SELECT B.auction, B.price FROM bids B JOIN (SELECT MAX(price) AS "
           "mp, TUMBLE_ROWTIME(dateTime, INTERVAL '10' SECOND) AS t FROM bids "
           "%s GROUP BY TUMBLE(dateTime, INTERVAL '10' SECOND)) M ON B.price = "
           "M.mp WHERE B.dateTime BETWEEN M.t - INTERVAL '10' SECOND AND M.t",
           where);
  return buf;
}

static bool explain_says(sl_session *s, const char *sql, const char *what) {
  char text[2048];
  snprintf(text, sizeof text, "EXPLAIN %s", sql);
  sl_strbuf out = SL_STRBUF_INIT;
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = &out;
  sink.text = keep_text;
  sl_error err = {0};
  if (sl_session_execute(s, text, strlen(text), 1, &sink, &err) != SL_OK)
    fail_msg("%s", err.message);
  bool says = strstr(sl_strbuf_cstr(&out), what) != NULL;
  sl_strbuf_free(&out);
  return says;
}

/* The bids below their window's highest price so far are not kept, and
 * the rows are those of the same join where no bid may be left out (the
 * maximum over `price >= 0`, every bid, which the planner cannot know). */
static void test_rows_below_the_max_not_kept(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  session_exec_ok(s, "SET 'parallelism.default' = '2'");
  session_exec_ok(s, NX_BIDS);
  session_exec_ok(s, BIDS_VIEW);
  char q[1024], other[1024];
  q7_over(q, sizeof q, "");
  q7_over(other, sizeof other, "WHERE price >= 0");
  assert_true(explain_says(s, q, "leaf 1 keeps only rows whose"));
  assert_false(explain_says(s, other, "keeps only rows whose"));
  /* the generator's time never decreases: the stream leaf skips the
   * lateness check */
  assert_true(explain_says(s, q, "leaf 1: no lateness check"));
  sl_query_stats st, st_other;
  uint64_t rows, rows_other;
  sl_error err = {0};
  assert_int_equal(session_run_query(s, q, &st, &rows, &err), SL_OK);
  assert_int_equal(session_run_query(s, other, &st_other, &rows_other, &err),
                   SL_OK);
  assert_true(rows >= 2); /* a highest bid per window at least */
  assert_int_equal(rows, rows_other);
  /* 92% of 20,000 events are bids: nearly all below some earlier bid */
  assert_true(st.leaf[0].not_kept > 15000);
  assert_int_equal(st_other.leaf[0].not_kept, 0);
  assert_true(st.leaf[0].held_peak < st_other.leaf[0].held_peak);
  /* interpreted (the check after the loop alone) the same rows, the same
   * rows not kept as compiled (the gate in the loop, then the check) */
  session_exec_ok(s, "SET 'sluice.jit' = 'off'");
  sl_query_stats st_interp;
  uint64_t rows_interp;
  assert_int_equal(session_run_query(s, q, &st_interp, &rows_interp, &err),
                   SL_OK);
  assert_int_equal(rows_interp, rows);
  assert_true(st_interp.leaf[0].not_kept > 15000);
  sl_session_free(s);
}

/* Ten bids a millisecond: most rows share their time with the last row
 * kept, so the compiled loop drops them by the bar (sl_extremes_bar)
 * without a call, counting them in a register that its exits add to the
 * leaf's count.  The interpreter's check drops them one by one.  About
 * as many either way: not exactly, as which rows a window's maximum so
 * far drops depends on how the two workers' rows interleave (a few in
 * 10,000); without the register's count the compiled figure is a small
 * fraction. */
static void test_rows_dropped_by_the_bar_counted(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  session_exec_ok(s, "SET 'parallelism.default' = '2'");
  session_exec_ok(s, NX_BIDS_AT("10000", "200000")); /* two 10 s windows */
  session_exec_ok(s, BIDS_VIEW);
  char q[1024];
  q7_over(q, sizeof q, "");
  sl_query_stats compiled, interpreted;
  uint64_t rows, rows_interp;
  sl_error err = {0};
  assert_int_equal(session_run_query(s, q, &compiled, &rows, &err), SL_OK);
  session_exec_ok(s, "SET 'sluice.jit' = 'off'");
  assert_int_equal(session_run_query(s, q, &interpreted, &rows_interp, &err),
                   SL_OK);
  assert_int_equal(rows_interp, rows);
  uint64_t a = interpreted.leaf[0].not_kept, b = compiled.leaf[0].not_kept;
  print_message("rows not kept: %llu interpreted, %llu compiled\n",
                (unsigned long long)a, (unsigned long long)b);
  assert_true(a > 150000); /* 92% of the events are bids */
  assert_true((a > b ? a - b : b - a) * 50 < a);
  sl_session_free(s);
}

/* A file (no order of event time guaranteed: a row may be late for the
 * aggregate and still kept by the stream) keeps every row. */
static void test_file_keeps_every_row(void **state) {
  (void)state;
  sl_session *s = session_with_clicks();
  const char *q =
      "SELECT c.user_name, c.price FROM clicks c JOIN (SELECT MAX(price) AS "
      "mp, TUMBLE_ROWTIME(ts, INTERVAL '5' SECOND) AS t FROM clicks GROUP BY "
      "TUMBLE(ts, INTERVAL '5' SECOND)) m ON c.price = m.mp WHERE c.ts "
      "BETWEEN m.t - INTERVAL '5' SECOND AND m.t";
  assert_false(explain_says(s, q, "keeps only rows whose"));
  assert_false(explain_says(s, q, "no lateness check"));
  sl_session_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_each_stage_peak),
      cmocka_unit_test(test_explain_analyze_shows_them),
      cmocka_unit_test(test_rows_below_the_max_not_kept),
      cmocka_unit_test(test_rows_dropped_by_the_bar_counted),
      cmocka_unit_test(test_file_keeps_every_row),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
