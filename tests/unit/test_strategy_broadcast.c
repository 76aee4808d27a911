/* test_strategy_broadcast.c - SET 'sluice.strategy' = 'broadcast' is a
 * join strategy (planner/choose_join.c): on several nodes a multi-stage
 * join broadcasts its smaller side, and EXPLAIN says why each leaf's
 * aggregate still has a strategy of its own (chosen as for 'auto', not
 * silently); on one node, or against another 'sluice.join-strategy',
 * where nothing honours it, the query is refused with a message saying
 * what to do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_helpers.h"
#include "sluice/common/strbuf.h"
#include "sluice/session/session.h"

static int on_text(void *ctx, const char *text) {
  sl_strbuf_append(ctx, text);
  return SL_OK;
}

static int on_begin(void *ctx, int ncols, const char *const *names,
                    const sl_type *const *types) {
  (void)ctx, (void)ncols, (void)names, (void)types;
  return SL_OK;
}

static int on_end(void *ctx) {
  (void)ctx;
  return SL_OK;
}

static int on_row(void *ctx, const char *const *cells) {
  (void)ctx, (void)cells;
  return SL_OK;
}

/* Runs sql; EXPLAIN's text goes into text, rows are dropped. */
static int execute(sl_session *s, const char *sql, sl_strbuf *text,
                   sl_error *err) {
  sl_result_sink sink = {0};
  sink.ctx = text;
  sink.begin = on_begin;
  sink.row = on_row;
  sink.end = on_end;
  sink.text = on_text;
  return sl_session_execute(s, sql, strlen(sql), 1, &sink, err);
}

static void exec_ok(sl_session *s, const char *sql) {
  sl_strbuf ignored = SL_STRBUF_INIT;
  sl_error err = {0};
  if (execute(s, sql, &ignored, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
  sl_strbuf_free(&ignored);
}

/* A window join of two windowed aggregates over clicks. */
static const char *join_sql =
    "SELECT c.user_name, c.n, x.m FROM (SELECT user_name, window_start, "
    "window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, "
    "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY user_name, window_start, "
    "window_end) c JOIN (SELECT window_start, window_end, MAX(price) AS m "
    "FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
    "GROUP BY window_start, window_end) x ON c.window_start = x.window_start "
    "AND c.window_end = x.window_end";

static sl_session *broadcast_session(int nodes) {
  char sql[64];
  sl_session *s = session_with_clicks();
  snprintf(sql, sizeof sql, "SET 'sluice.nodes' = '%d'", nodes);
  exec_ok(s, sql);
  exec_ok(s, "SET 'sluice.strategy' = 'broadcast'");
  return s;
}

static void expect_in(const char *text, const char *what) {
  if (!strstr(text, what))
    fail_msg("EXPLAIN lacks '%s':\n%s", what, text);
}

/* Two nodes: the join broadcasts, and each leaf's line says why its
 * aggregate's strategy was chosen as for 'auto'. */
static void test_broadcast_join_and_leaves_explained(void **state) {
  (void)state;
  sl_session *s = broadcast_session(2);
  sl_strbuf text = SL_STRBUF_INIT;
  sl_strbuf sql = SL_STRBUF_INIT;
  sl_strbuf_printf(&sql, "EXPLAIN %s", join_sql);
  sl_error err = {0};
  if (execute(s, sl_strbuf_cstr(&sql), &text, &err) != SL_OK)
    fail_msg("%s", err.message);
  const char *t = sl_strbuf_cstr(&text);
  expect_in(t, "WindowJoin [hash on c.window_start, c.window_end = "
               "x.window_start, x.window_end] { strategy: broadcast");
  expect_in(t, "leaf 1: late-merge: auto, since 'sluice.strategy' = "
               "'broadcast' applies to the stages' join, not to a leaf's "
               "aggregate");
  expect_in(t, "leaf 2: late-merge: auto, since 'sluice.strategy' = "
               "'broadcast' applies to the stages' join");
  sl_strbuf_free(&text);
  sl_strbuf_free(&sql);
  sl_session_free(s);
}

/* One node: refused, EXPLAIN and the query alike. */
static void test_broadcast_refused_on_one_node(void **state) {
  (void)state;
  sl_session *s = broadcast_session(1);
  sl_strbuf sql = SL_STRBUF_INIT;
  for (int explain = 0; explain < 2; explain++) {
    sl_strbuf_reset(&sql);
    sl_strbuf_printf(&sql, "%s%s", explain ? "EXPLAIN " : "", join_sql);
    sl_strbuf text = SL_STRBUF_INIT;
    sl_error err = {0};
    int rc = execute(s, sl_strbuf_cstr(&sql), &text, &err);
    if (rc != SL_EUNSUPPORTED)
      fail_msg("%s: status %d (%s), expected the refusal", sl_strbuf_cstr(&sql),
               rc, err.message ? err.message : "");
    assert_non_null(strstr(err.message,
                           "this query runs on one (sluice.nodes = 1): SET "
                           "'sluice.nodes' to 2 or more"));
    sl_error_clear(&err);
    sl_strbuf_free(&text);
  }
  sl_strbuf_free(&sql);
  sl_session_free(s);
}

/* Several nodes and another join strategy asked for explicitly: the two
 * settings conflict, and the query says so rather than dropping one. */
static void test_broadcast_conflicting_join_strategy_refused(void **state) {
  (void)state;
  sl_session *s = broadcast_session(2);
  exec_ok(s, "SET 'sluice.join-strategy' = 'repartition'");
  sl_strbuf text = SL_STRBUF_INIT;
  sl_error err = {0};
  int rc = execute(s, join_sql, &text, &err);
  if (rc != SL_EUNSUPPORTED)
    fail_msg("status %d (%s), expected the refusal", rc,
             err.message ? err.message : "");
  assert_non_null(strstr(err.message, "but SET 'sluice.join-strategy' = "
                                      "'repartition' asks for another"));
  sl_error_clear(&err);
  sl_strbuf_free(&text);
  sl_session_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast_join_and_leaves_explained),
      cmocka_unit_test(test_broadcast_refused_on_one_node),
      cmocka_unit_test(test_broadcast_conflicting_join_strategy_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
