/* session_helpers.h - what the unit tests that run queries share: a
 * statement run through a session that must succeed, a query planned and
 * run directly (its EXPLAIN ANALYZE counters in sl_query_stats), and the
 * clicks table over tests/sql/data/clicks.csv.  Include after cmocka.h. */
#ifndef SLUICE_TEST_SESSION_HELPERS_H
#define SLUICE_TEST_SESSION_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/binder/binder.h"
#include "sluice/common/arena.h"
#include "sluice/exec/executor.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/plan.h"
#include "sluice/session/session.h"

/* Run sql in s (results dropped); the test fails with the error if not. */
static inline void session_exec_ok(sl_session *s, const char *sql) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
}

/* Parse, bind, plan and run sql against s's catalog and settings; returns
 * the status, fills st and counts the rows into *rows (may be NULL). */
static inline int session_run_query(sl_session *s, const char *sql,
                                    sl_query_stats *st, uint64_t *rows,
                                    sl_error *err) {
  sl_arena a;
  sl_arena_init(&a, 0);
  char *text = sl_arena_strdup(&a, sql);
  sl_stmt *stmt;
  sl_bound_stmt *b = NULL;
  sl_plan *plan;
  if (rows)
    *rows = 0;
  memset(st, 0, sizeof *st);
  sl_result_sink sink = sl_result_sink_discard(rows);
  int rc = sl_parse_one(&a, text, strlen(text), 1, &stmt, err);
  if (rc == SL_OK)
    rc = sl_bind(&a, sl_session_catalog(s), stmt, text, 1, &b, err);
  if (rc == SL_OK)
    rc = sl_plan_build(&a, b, &plan, err);
  sl_run_config config;
  if (rc == SL_OK)
    rc = sl_run_config_resolve(&config, sl_session_settings(s), err);
  if (rc == SL_OK)
    rc = sl_execute(plan, &(sl_run){&config, NULL, NULL}, &sink, st, err);
  if (b)
    sl_bound_stmt_release(b);
  sl_arena_free(&a);
  return rc;
}

/* A new session with the clicks table (tests/sql/data/clicks.csv, 11 rows,
 * a 2 s watermark delay). */
static inline sl_session *session_with_clicks(void) {
  const char *dir = getenv("SLUICE_SOURCE_DIR");
  char sql[1024];
  snprintf(sql, sizeof sql,
           "CREATE TABLE clicks (user_name STRING, url STRING, price INT, ts "
           "TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH "
           "('connector' = 'filesystem', 'path' = "
           "'%s/tests/sql/data/clicks.csv', 'format' = 'csv')",
           dir ? dir : ".");
  sl_session *s = sl_session_new();
  session_exec_ok(s, sql);
  return s;
}

#endif
