/* test_cancel.c - cancellation tokens (common/cancel.h) and the run
 * context that carries them (issue 28: "cancellation as a flag in the run
 * context, not a poll of the shell").
 *
 * A statement stops on the token of its own run: one requested before a
 * long query stops it with SL_ECANCELLED (through the session, and through
 * sl_execute's run context alone); a child token sees its parent's
 * request; and a request on one session's token leaves another session's
 * statement, running at the same time on another thread, to finish with
 * all its rows.  Under the old process-wide Ctrl-C flag the last test
 * fails (both statements stopped), and a run that ignored its token would
 * end with SL_OK after its source's 10 s instead of cancelled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <time.h>

#include "session_helpers.h"
#include "sluice/common/cancel.h"
#include "sluice/common/clock.h"

/* A paced sequence: `n` rows at `rate` a second, so the query over it
 * takes n / rate seconds unless it is stopped. */
static sl_session *session_with_seq(int rate, int n) {
  sl_session *s = sl_session_new();
  char sql[512];
  snprintf(sql, sizeof sql,
           "CREATE TABLE seq (n BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
           "ts) WITH ('connector' = 'datagen', 'rows-per-second' = '%d', "
           "'fields.n.kind' = 'sequence', 'fields.n.start' = '1', "
           "'fields.n.end' = '%d')",
           rate, n);
  session_exec_ok(s, sql);
  return s;
}

static const char *const long_query = "SELECT n FROM seq";

static void test_child_sees_parent_request(void **state) {
  (void)state;
  sl_cancel parent, child, other;
  sl_cancel_init(&parent, NULL);
  sl_cancel_init(&child, &parent);
  sl_cancel_init(&other, NULL);
  assert_false(sl_cancel_pending(NULL));
  assert_false(sl_cancel_pending(&child));

  sl_cancel_request(&parent);
  assert_true(sl_cancel_pending(&parent));
  assert_true(sl_cancel_pending(&child));
  assert_int_equal(sl_cancel_requests(&child), 0); /* its own: none */
  assert_false(sl_cancel_pending(&other));

  sl_cancel_clear(&parent);
  assert_false(sl_cancel_pending(&child));
  /* a child's request is its own: the parent goes on */
  sl_cancel_request(&child);
  assert_true(sl_cancel_pending(&child));
  assert_false(sl_cancel_pending(&parent));

  /* scopes nest, and the current token is what the deep layers poll */
  const sl_cancel *outer = sl_cancel_scope_enter(&other);
  assert_ptr_equal(sl_cancel_current(), &other);
  assert_false(sl_cancel_current_pending());
  const sl_cancel *middle = sl_cancel_scope_enter(&child);
  assert_ptr_equal(middle, &other);
  assert_true(sl_cancel_current_pending());
  sl_cancel_scope_leave(middle);
  assert_ptr_equal(sl_cancel_current(), &other);
  sl_cancel_scope_leave(outer);
  assert_ptr_equal(sl_cancel_current(), outer);
}

/* Through the session: a token requested before the statement stops it. */
static void test_requested_token_stops_statement(void **state) {
  (void)state;
  sl_session *s = session_with_seq(200, 2000); /* 10 s unless stopped */
  sl_cancel stop;
  sl_cancel_init(&stop, NULL);
  sl_session_set_cancel(s, &stop);
  sl_cancel_request(&stop);
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_error err = {0};
  double t0 = sl_clock_seconds();
  int rc =
      sl_session_execute(s, long_query, strlen(long_query), 1, &sink, &err);
  assert_int_equal(rc, SL_ECANCELLED);
  assert_true(sl_clock_seconds() - t0 < 5);
  sl_error_clear(&err);
  /* cleared, the same session runs again: the token was the only stop */
  sl_cancel_clear(&stop);
  session_exec_ok(s, "SELECT 1");
  sl_session_free(s);
}

/* Through the run context alone: the query is planned with no scope
 * entered (nothing stops the planning), and sl_execute stops it on
 * run.cancel. */
static void test_run_context_token_stops_execute(void **state) {
  (void)state;
  sl_session *s = session_with_seq(200, 2000);
  sl_arena a;
  sl_arena_init(&a, 0);
  char *text = sl_arena_strdup(&a, long_query);
  sl_stmt *stmt = NULL;
  sl_bound_stmt *b = NULL;
  sl_plan *plan = NULL;
  sl_error err = {0};
  assert_int_equal(sl_parse_one(&a, text, strlen(text), 1, &stmt, &err), SL_OK);
  assert_int_equal(sl_bind(&a, sl_session_catalog(s), stmt, text, 1, &b, &err),
                   SL_OK);
  assert_int_equal(sl_plan_build(&a, b, &plan, &err), SL_OK);
  sl_cancel stop;
  sl_cancel_init(&stop, NULL);
  sl_cancel_request(&stop);
  sl_run_config config;
  assert_int_equal(sl_run_config_resolve(&config, sl_session_settings(s), &err),
                   SL_OK);
  sl_run run = {&config, &stop, NULL};
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_query_stats st;
  double t0 = sl_clock_seconds();
  int rc = sl_execute(plan, &run, &sink, &st, &err);
  assert_int_equal(rc, SL_ECANCELLED);
  assert_true(sl_clock_seconds() - t0 < 5);
  /* the caller's scope is as it was */
  assert_null(sl_cancel_current());
  sl_error_clear(&err);
  sl_bound_stmt_release(b);
  sl_arena_free(&a);
  sl_session_free(s);
}

typedef struct running {
  sl_session *session;
  pthread_t thread;
  int rc;
  uint64_t rows;
  double ended; /* sl_clock_seconds() */
} running;

static void *run_long_query(void *arg) {
  running *r = arg;
  sl_result_sink sink = sl_result_sink_discard(&r->rows);
  sl_error err = {0};
  r->rc = sl_session_execute(r->session, long_query, strlen(long_query), 1,
                             &sink, &err);
  r->ended = sl_clock_seconds();
  sl_error_clear(&err);
  return NULL;
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Two sessions run at once, each with its own token on its own thread:
 * cancelling one stops it alone; the other completes with its rows. */
static void test_cancel_one_session_other_completes(void **state) {
  (void)state;
  running stopped = {session_with_seq(200, 2000), 0, 0, 0, 0}; /* 10 s */
  running kept = {session_with_seq(500, 1000), 0, 0, 0, 0};    /* 2 s */
  sl_cancel stop_one, stop_other;
  sl_cancel_init(&stop_one, NULL);
  sl_cancel_init(&stop_other, NULL);
  sl_session_set_cancel(stopped.session, &stop_one);
  sl_session_set_cancel(kept.session, &stop_other);
  assert_int_equal(
      pthread_create(&stopped.thread, NULL, run_long_query, &stopped), 0);
  assert_int_equal(pthread_create(&kept.thread, NULL, run_long_query, &kept),
                   0);
  nap_ms(500);
  double requested = sl_clock_seconds();
  sl_cancel_request(&stop_one);
  pthread_join(stopped.thread, NULL);
  pthread_join(kept.thread, NULL);

  assert_int_equal(stopped.rc, SL_ECANCELLED);
  assert_true(stopped.ended - requested < 5);
  assert_int_equal(kept.rc, SL_OK);
  assert_int_equal(kept.rows, 1000);
  /* it was still running when the other was stopped */
  assert_true(kept.ended > requested);
  assert_false(sl_cancel_pending(&stop_other));
  sl_session_free(stopped.session);
  sl_session_free(kept.session);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_child_sees_parent_request),
      cmocka_unit_test(test_requested_token_stops_statement),
      cmocka_unit_test(test_run_context_token_stops_execute),
      cmocka_unit_test(test_cancel_one_session_other_completes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
