/* test_join_bounds.c - a regular join of two streams whose condition bounds
 * each side's event time by the other side's rows drops the rows of BOTH
 * sides once no later row can meet them (planner/stage_plan.c's add_bound
 * has the rule; exec/updating_stages.c the sweep), and EXPLAIN says when
 * each side's rows go, or that a side is kept for ever and why.
 *
 * The stream: NEXMark's generator, 100,000 events, whose proportions are
 * fixed by the event number (of every 50 events 1 person, 3 auctions): 2,000
 * persons and 6,000 auctions.  The join: an auction's seller with persons
 * who joined within 2 s after it.  Before issue 27 only the persons
 * expired (P.dateTime >= A.dateTime bounds them; A.dateTime + INTERVAL was
 * no bound), so the join held every auction to the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/common/strbuf.h"
#include "sluice/session/session.h"

/* What a statement produced: its text blocks, and its rows one per line
 * ("a|b"), sorted at the end for comparison. */
typedef struct result {
  sl_strbuf text;
  char **rows;
  int nrows, ncols, cap;
} result;

static int on_begin(void *ctx, int ncols, const char *const *names,
                    const sl_type *const *types) {
  (void)names, (void)types;
  ((result *)ctx)->ncols = ncols;
  return SL_OK;
}

static int on_row(void *ctx, const char *const *cells) {
  result *r = ctx;
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < r->ncols; i++)
    sl_strbuf_printf(&b, "%s%s", i ? "|" : "", cells[i] ? cells[i] : "NULL");
  if (r->nrows == r->cap) {
    /* doubling: one realloc per row was quadratic under the sanitizer,
     * whose large reallocs map and copy (over 5 minutes for this file) */
    r->cap = r->cap ? 2 * r->cap : 64;
    r->rows = realloc(r->rows, sizeof *r->rows * (size_t)r->cap);
    assert_non_null(r->rows);
  }
  r->rows[r->nrows++] = sl_strbuf_detach(&b);
  return SL_OK;
}

static int on_end(void *ctx) {
  (void)ctx;
  return SL_OK;
}

static int on_text(void *ctx, const char *text) {
  sl_strbuf_append(&((result *)ctx)->text, text);
  return SL_OK;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run(sl_session *s, const char *sql, result *r) {
  memset(r, 0, sizeof *r);
  sl_result_sink sink = {r,       on_begin, on_row, NULL, on_end,
                         on_text, NULL,     NULL,   NULL};
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
  if (r->nrows > 1)
    qsort(r->rows, (size_t)r->nrows, sizeof *r->rows, cmp_str);
}

static void result_free(result *r) {
  for (int i = 0; i < r->nrows; i++)
    free(r->rows[i]);
  free(r->rows);
  sl_strbuf_free(&r->text);
}

/* The count EXPLAIN ANALYZE shows as "<what>=N". */
static unsigned long long actual(const result *r, const char *what) {
  const char *p = strstr(sl_strbuf_cstr(&r->text), what);
  if (!p)
    fail_msg("EXPLAIN ANALYZE lacks '%s':\n%s", what, sl_strbuf_cstr(&r->text));
  return strtoull(p + strlen(what), NULL, 10);
}

static void expect_text(const result *r, const char *want) {
  if (!strstr(sl_strbuf_cstr(&r->text), want))
    fail_msg("EXPLAIN lacks '%s':\n%s", want, sl_strbuf_cstr(&r->text));
}

/* Statements whose output does not matter (settings, tables, views). */
static void run_all(sl_session *s, const char *const *sql, size_t n) {
  for (size_t i = 0; i < n; i++) {
    result r;
    run(s, sql[i], &r);
    result_free(&r);
  }
}

/* The same rows (both sorted by run). */
static void expect_same_rows(const result *a, const result *b) {
  assert_int_equal(a->nrows, b->nrows);
  for (int i = 0; i < a->nrows; i++)
    assert_string_equal(a->rows[i], b->rows[i]);
}

static sl_session *nexmark(void) {
  static const char *const setup[] = {
      "SET 'parallelism.default' = '2'",
      "CREATE TABLE nx (event_type INT, person ROW<id BIGINT, dateTime "
      "TIMESTAMP(3)>, auction ROW<id BIGINT, dateTime TIMESTAMP(3), seller "
      "BIGINT>, dateTime AS CASE WHEN event_type = 0 THEN person.dateTime "
      "ELSE auction.dateTime END, WATERMARK FOR dateTime AS dateTime - "
      "INTERVAL '4' SECOND) WITH ('connector' = 'nexmark', "
      "'first-event.rate' = '1000', 'events.num' = '100000')",
      "CREATE VIEW P AS SELECT person.id AS id, dateTime FROM nx WHERE "
      "event_type = 0",
      "CREATE VIEW A AS SELECT auction.id AS id, auction.seller AS seller, "
      "dateTime FROM nx WHERE event_type = 1",
  };
  sl_session *s = sl_session_new();
  run_all(s, setup, sizeof setup / sizeof setup[0]);
  return s;
}

#define JOIN "SELECT A.id, P.id FROM A, P WHERE A.seller = P.id AND "
/* Persons who joined within 2 s after the auction: bounds both sides. */
#define BOUNDED                                                                \
  JOIN "P.dateTime BETWEEN A.dateTime AND A.dateTime + INTERVAL '2' SECOND"
/* The same condition, its upper bound hidden in a CAST: no bound on the
 * auctions, whose rows are then kept to the end. */
#define UNBOUNDED                                                              \
  JOIN "P.dateTime BETWEEN A.dateTime AND CAST(A.dateTime + INTERVAL '2' "     \
       "SECOND AS TIMESTAMP(3))"

/* Both sides expire: at the end the join holds nothing, every row of both
 * sides (6,000 auctions and 2,000 persons) was dropped by a bound; and the
 * join's rows are those of the join that keeps every auction. */
static void test_both_sides_expire(void **state) {
  (void)state;
  sl_session *s = nexmark();
  result bounded, unbounded, an, an_un;
  run(s, BOUNDED, &bounded);
  run(s, UNBOUNDED, &unbounded);
  run(s, "EXPLAIN ANALYZE " BOUNDED, &an);
  run(s, "EXPLAIN ANALYZE " UNBOUNDED, &an_un);
  assert_true(bounded.nrows > 0);
  expect_same_rows(&bounded, &unbounded);
  assert_int_equal(actual(&an, "join rows held at the end="), 0);
  assert_int_equal(actual(&an, "join rows dropped by time bounds="), 8000);
  /* Without the auctions' bound they all stay (the persons still go). */
  assert_int_equal(actual(&an_un, "join rows held at the end="), 6000);
  assert_int_equal(actual(&an_un, "join rows dropped by time bounds="), 2000);
  result_free(&bounded);
  result_free(&unbounded);
  result_free(&an);
  result_free(&an_un);
  sl_session_free(s);
}

/* EXPLAIN says for each side when its rows go, in each form a bound takes:
 * BETWEEN's halves, a column plus or minus an interval on either side of
 * <= or <, a bound turned around (>=); or that a side is kept for ever. */
static void test_explain_says_when_rows_go(void **state) {
  (void)state;
  sl_session *s = nexmark();
  result r;
  run(s, "EXPLAIN " BOUNDED, &r);
  expect_text(&r, "(state: a left row is dropped once the right side's "
                  "watermark passes its dateTime + 2 s (the right side's "
                  "late rows are dropped); a right row is dropped once the "
                  "left side's watermark passes its dateTime (the left "
                  "side's late rows are dropped))");
  result_free(&r);
  /* P.dateTime - 1.5 s < A.dateTime: P.dateTime < A.dateTime + 1.5 s. */
  run(s,
      "EXPLAIN " JOIN "P.dateTime - INTERVAL '1.5' SECOND < A.dateTime AND "
      "P.dateTime >= A.dateTime - INTERVAL '1' MINUTE",
      &r);
  expect_text(&r, "a left row is dropped once the right side's watermark "
                  "passes its dateTime + 1.5 s");
  expect_text(&r, "a right row is dropped once the left side's watermark "
                  "passes its dateTime + 60 s");
  result_free(&r);
  /* Only a lower bound on the persons: the auctions are kept. */
  run(s, "EXPLAIN " JOIN "P.dateTime >= A.dateTime", &r);
  expect_text(&r, "a left row is kept for as long as the query runs: no "
                  "condition bounds the right side's event time from above "
                  "by a TIMESTAMP column of the left row");
  expect_text(&r, "a right row is dropped once the left side's watermark "
                  "passes its dateTime");
  result_free(&r);
  /* No bound at all. */
  run(s, "EXPLAIN " JOIN "P.id > 0", &r);
  expect_text(&r, "(state for both sides for as long as the query runs: no "
                  "condition bounds either side's event time");
  result_free(&r);
  sl_session_free(s);
}

/* One side's stream ends long before the other's: its watermark is then the
 * end of time for good, while the other side's rows still come.  Each of
 * those is past its bound as it arrives and must go at the next sweep,
 * although the watermark that bounds it no longer moves (a sweep used to
 * be skipped at an unchanged watermark, so every auction that came after
 * the persons' stream ended was held to the end: 3,024 of them here). */
static void test_rows_after_other_side_ended_expire(void **state) {
  (void)state;
  static const char *const setup[] = {
      "SET 'parallelism.default' = '1'",
      "CREATE TABLE few (event_type INT, person ROW<id BIGINT, dateTime "
      "TIMESTAMP(3)>, auction ROW<id BIGINT, dateTime TIMESTAMP(3), seller "
      "BIGINT>, dateTime AS CASE WHEN event_type = 0 THEN person.dateTime "
      "ELSE auction.dateTime END, WATERMARK FOR dateTime AS dateTime - "
      "INTERVAL '4' SECOND) WITH ('connector' = 'nexmark', "
      "'first-event.rate' = '1000', 'events.num' = '1000')",
      "CREATE TABLE many (event_type INT, person ROW<id BIGINT, dateTime "
      "TIMESTAMP(3)>, auction ROW<id BIGINT, dateTime TIMESTAMP(3), seller "
      "BIGINT>, dateTime AS CASE WHEN event_type = 0 THEN person.dateTime "
      "ELSE auction.dateTime END, WATERMARK FOR dateTime AS dateTime - "
      "INTERVAL '4' SECOND) WITH ('connector' = 'nexmark', "
      "'first-event.rate' = '1000', 'events.num' = '2000000')",
      "CREATE VIEW P AS SELECT person.id AS id, dateTime FROM few WHERE "
      "event_type = 0",
      "CREATE VIEW A AS SELECT auction.id AS id, auction.seller AS seller, "
      "dateTime FROM many WHERE event_type = 1",
  };
  sl_session *s = sl_session_new();
  run_all(s, setup, sizeof setup / sizeof setup[0]);
  result an;
  run(s, "EXPLAIN ANALYZE " BOUNDED, &an);
  assert_true(actual(&an, "join rows dropped by time bounds=") > 0);
  assert_int_equal(actual(&an, "join rows held at the end="), 0);
  result_free(&an);
  sl_session_free(s);
}

/* ---- the interval join's forms (Flink's "Interval Joins") ----------- */

/* A session with persons, auctions and bids (1, 3 and 46 of every 50
 * events), as views, and two views over a join of orders and shipments
 * (the auctions and persons again) as Flink's documentation writes it. */
static sl_session *nexmark3(void) {
  static const char *const setup[] = {
      "SET 'parallelism.default' = '2'",
      "CREATE TABLE nx (event_type INT, person ROW<id BIGINT, dateTime "
      "TIMESTAMP(3)>, auction ROW<id BIGINT, dateTime TIMESTAMP(3), seller "
      "BIGINT>, bid ROW<auction BIGINT, dateTime TIMESTAMP(3)>, dateTime AS "
      "CASE WHEN event_type = 0 THEN person.dateTime WHEN event_type = 1 THEN "
      "auction.dateTime ELSE bid.dateTime END, WATERMARK FOR dateTime AS "
      "dateTime - INTERVAL '4' SECOND) WITH ('connector' = 'nexmark', "
      "'first-event.rate' = '1000', 'events.num' = '100000')",
      "CREATE VIEW P AS SELECT person.id AS id, dateTime FROM nx WHERE "
      "event_type = 0",
      "CREATE VIEW A AS SELECT auction.id AS id, auction.seller AS seller, "
      "dateTime FROM nx WHERE event_type = 1",
      "CREATE VIEW B AS SELECT bid.auction AS auction, dateTime FROM nx WHERE "
      "event_type = 2",
      /* renamed time columns, a filter inside the view */
      "CREATE VIEW orders AS SELECT id AS order_id, seller, dateTime AS "
      "order_time FROM A WHERE id > 0",
      "CREATE VIEW shipments AS SELECT id AS ship_id, dateTime AS ship_time "
      "FROM P",
      /* the join in a view, its time condition in the query over it */
      "CREATE VIEW paired AS SELECT A.id AS aid, A.dateTime AS at, P.id AS "
      "pid, P.dateTime AS pt FROM A JOIN P ON A.seller = P.id",
  };
  sl_session *s = sl_session_new();
  run_all(s, setup, sizeof setup / sizeof setup[0]);
  return s;
}

/* One form: the query, the same with its bounds hidden in CASTs (a
 * regular join keeping every row: the reference), and what EXPLAIN says of
 * each join's sides (every join: both sides dropped). */
typedef struct form {
  const char *bounded, *unbounded;
  int joins;
} form;

#define PA "SELECT A.id, P.id FROM A, P WHERE A.seller = P.id AND "
#define CAST3(e) "CAST(" e " AS TIMESTAMP(3))"
#define THREE                                                                  \
  "SELECT P.id, A.id, B.dateTime FROM P JOIN A ON A.seller = P.id JOIN B ON "  \
  "B.auction = A.id WHERE "
static const form forms[] = {
    /* Flink's o.order_time BETWEEN s.ship_time - INTERVAL '4' HOUR AND
     * s.ship_time */
    {PA "P.dateTime BETWEEN A.dateTime - INTERVAL '4' SECOND AND A.dateTime",
     PA "P.dateTime BETWEEN " CAST3(
         "A.dateTime - INTERVAL '4' SECOND") " AND " CAST3("A.dateTime"),
     1},
    /* ltime = rtime (an auction with the auctions of its seller that came
     * at the same instant: itself, at least) */
    {"SELECT A.id, A2.id FROM A, A AS A2 WHERE A.seller = A2.seller AND "
     "A.dateTime = A2.dateTime",
     "SELECT A.id, A2.id FROM A, A AS A2 WHERE A.seller = A2.seller AND "
     "A.dateTime = " CAST3("A2.dateTime"),
     1},
    /* ltime >= rtime AND ltime < rtime + INTERVAL '10' MINUTE */
    {PA "P.dateTime >= A.dateTime AND P.dateTime < A.dateTime + INTERVAL "
        "'10' MINUTE",
     PA "P.dateTime >= " CAST3("A.dateTime") " AND P.dateTime < " CAST3(
         "A.dateTime + INTERVAL '10' MINUTE"),
     1},
    /* ... written the other way round, > and <= */
    {PA "A.dateTime <= P.dateTime AND A.dateTime + INTERVAL '3' SECOND > "
        "P.dateTime",
     PA CAST3("A.dateTime") " <= P.dateTime AND " CAST3(
         "A.dateTime + INTERVAL '3' SECOND") " > P.dateTime",
     1},
    /* ltime BETWEEN rtime - INTERVAL '10' SECOND AND rtime + INTERVAL '5'
     * SECOND, the interval added on the left */
    {PA "P.dateTime BETWEEN A.dateTime - INTERVAL '10' SECOND AND "
        "INTERVAL '5' SECOND + A.dateTime",
     PA "P.dateTime BETWEEN " CAST3(
         "A.dateTime - INTERVAL '10' SECOND") " AND " CAST3("INTERVAL '5' "
                                                            "SECOND + "
                                                            "A.dateTime"),
     1},
    /* intervals on both columns */
    {PA "P.dateTime - INTERVAL '1' SECOND > A.dateTime - INTERVAL '3' SECOND "
        "AND P.dateTime + INTERVAL '1' SECOND <= A.dateTime + INTERVAL '4' "
        "SECOND",
     PA "P.dateTime - INTERVAL '1' SECOND > " CAST3(
         "A.dateTime - INTERVAL '3' SECOND") " AND P.dateTime + INTERVAL '1' "
                                             "SECOND <= " CAST3(
                                                 "A.dateTime + INTERVAL '4' "
                                                 "SECOND"),
     1},
    /* JOIN ... ON the key, the bound in WHERE */
    {"SELECT A.id, P.id FROM A JOIN P ON A.seller = P.id WHERE P.dateTime "
     "BETWEEN A.dateTime AND A.dateTime + INTERVAL '2' SECOND",
     "SELECT A.id, P.id FROM A JOIN P ON A.seller = P.id WHERE P.dateTime "
     "BETWEEN " CAST3("A.dateTime") " AND " CAST3(
         "A.dateTime + INTERVAL '2' SECOND"),
     1},
    /* through views that rename the time columns */
    {"SELECT o.order_id, s.ship_id FROM orders o JOIN shipments s ON "
     "o.seller = s.ship_id AND s.ship_time BETWEEN o.order_time AND "
     "o.order_time + INTERVAL '2' SECOND",
     "SELECT o.order_id, s.ship_id FROM orders o JOIN shipments s ON "
     "o.seller = s.ship_id AND s.ship_time BETWEEN " CAST3(
         "o.order_time") " AND " CAST3("o.order_time + INTERVAL '2' SECOND"),
     1},
    /* through a view of the join, the bound in the query over it */
    {"SELECT aid, pid FROM paired WHERE pt BETWEEN at AND at + INTERVAL '2' "
     "SECOND",
     "SELECT aid, pid FROM paired WHERE pt BETWEEN " CAST3("at") " AND " CAST3(
         "at + INTERVAL '2' SECOND"),
     1},
    /* three streams, the bounds in ON: the join above keeps the bids only
     * as long as the auctions' time in the join below allows */
    {"SELECT P.id, A.id, B.dateTime FROM P JOIN A ON A.seller = P.id AND "
     "A.dateTime BETWEEN P.dateTime AND P.dateTime + INTERVAL '20' SECOND "
     "JOIN B ON B.auction = A.id AND B.dateTime BETWEEN A.dateTime AND "
     "A.dateTime + INTERVAL '2' SECOND",
     "SELECT P.id, A.id, B.dateTime FROM P JOIN A ON A.seller = P.id AND "
     "A.dateTime BETWEEN " CAST3("P.dateTime") " AND " CAST3(
         "P.dateTime + INTERVAL '20' SECOND") " JOIN B ON B.auction = A.id "
                                              "AND B.dateTime "
                                              "BETWEEN " CAST3(
                                                  "A.dateTime") " AND"
                                                                " " CAST3("A"
                                                                          "."
                                                                          "d"
                                                                          "a"
                                                                          "t"
                                                                          "e"
                                                                          "T"
                                                                          "i"
                                                                          "m"
                                                                          "e"
                                                                          " "
                                                                          "+"
                                                                          " "
                                                                          "I"
                                                                          "N"
                                                                          "T"
                                                                          "E"
                                                                          "R"
                                                                          "V"
                                                                          "A"
                                                                          "L"
                                                                          " "
                                                                          "'"
                                                                          "2"
                                                                          "'"
                                                                          " "
                                                                          "S"
                                                                          "E"
                                                                          "C"
                                                                          "O"
                                                                          "N"
                                                                          "D"),
     2},
    /* ... and in WHERE, where the persons/auctions bound must reach the join
     * below */
    {THREE "A.dateTime BETWEEN P.dateTime AND P.dateTime + INTERVAL '20' "
           "SECOND AND B.dateTime BETWEEN A.dateTime AND A.dateTime + "
           "INTERVAL '2' SECOND",
     THREE "A.dateTime BETWEEN " CAST3("P.dateTime") " AND " CAST3(
         "P."
         "dateTime"
         " + "
         "INTERVAL"
         " '20' "
         "SECOND") " AND B.dateTime BETWEEN " CAST3("A.dateTime") " AND"
                                                                  " " CAST3(
                                                                      "A."
                                                                      "dateTime"
                                                                      " + "
                                                                      "INTERVAL"
                                                                      " '2' "
                                                                      "SECOND"),
     2},
};

static int count_of(const char *text, const char *what) {
  int n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
    n++;
  return n;
}

/* Every form bounds both sides of each of its joins: EXPLAIN says so
 * (no side "kept for as long as the query runs"), the joins hold nothing
 * at the end, and the rows are those of the same join keeping every row. */
static void test_flink_forms_bound_both_sides(void **state) {
  (void)state;
  sl_session *s = nexmark3();
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    const form *f = &forms[i];
    char sql[4096];
    result ex, an, bounded, unbounded;
    snprintf(sql, sizeof sql, "EXPLAIN %s", f->bounded);
    run(s, sql, &ex);
    const char *text = sl_strbuf_cstr(&ex.text);
    if (count_of(text, "a left row is dropped once") != f->joins ||
        count_of(text, "a right row is dropped once") != f->joins ||
        strstr(text, "for as long as the query runs"))
      fail_msg("form %zu does not bound both sides of its %d join(s):\n%s", i,
               f->joins, text);
    snprintf(sql, sizeof sql, "EXPLAIN ANALYZE %s", f->bounded);
    run(s, sql, &an);
    run(s, f->bounded, &bounded);
    run(s, f->unbounded, &unbounded);
    if (actual(&an, "join rows held at the end=") != 0)
      fail_msg("form %zu holds rows at the end:\n%s", i,
               sl_strbuf_cstr(&an.text));
    assert_true(actual(&an, "join rows dropped by time bounds=") > 0);
    if (bounded.nrows == 0 || bounded.nrows != unbounded.nrows)
      fail_msg("form %zu: %d rows, %d without its bounds", i, bounded.nrows,
               unbounded.nrows);
    expect_same_rows(&bounded, &unbounded);
    result_free(&ex);
    result_free(&an);
    result_free(&bounded);
    result_free(&unbounded);
  }
  sl_session_free(s);
}

/* EXPLAIN ANALYZE shows the join's peak state per side on its line.  The
 * stream is paced ('events.rate': 20,000 events in 1 s of wall time, 20 s
 * of event time), so the watermarks move while rows come: with the 2 s
 * bound each side holds a few seconds' rows at most, never all 400
 * persons and 1,200 auctions; without the auctions' bound, every auction. */
static void test_explain_analyze_shows_peak_state(void **state) {
  (void)state;
  sl_session *s = nexmark();
  static const char *const setup[] = {
      "CREATE TABLE paced (event_type INT, person ROW<id BIGINT, dateTime "
      "TIMESTAMP(3)>, auction ROW<id BIGINT, dateTime TIMESTAMP(3), seller "
      "BIGINT>, dateTime AS CASE WHEN event_type = 0 THEN person.dateTime "
      "ELSE auction.dateTime END, WATERMARK FOR dateTime AS dateTime - "
      "INTERVAL '4' SECOND) WITH ('connector' = 'nexmark', "
      "'first-event.rate' = '1000', 'events.rate' = '20000', 'events.num' = "
      "'20000')",
      "CREATE VIEW PP AS SELECT person.id AS id, dateTime FROM paced WHERE "
      "event_type = 0",
      "CREATE VIEW PA AS SELECT auction.id AS id, auction.seller AS seller, "
      "dateTime FROM paced WHERE event_type = 1",
  };
  run_all(s, setup, sizeof setup / sizeof setup[0]);
  result an, an_un;
#define PACED                                                                  \
  "EXPLAIN ANALYZE SELECT PA.id, PP.id FROM PA, PP WHERE PA.seller = PP.id "   \
  "AND PP.dateTime BETWEEN PA.dateTime AND "
  run(s, PACED "PA.dateTime + INTERVAL '2' SECOND", &an);
  run(s, PACED "CAST(PA.dateTime + INTERVAL '2' SECOND AS TIMESTAMP(3))",
      &an_un);
  unsigned long long lrows = actual(&an, "left peak rows held=");
  unsigned long long rrows = actual(&an, "right peak rows held=");
  assert_true(lrows > 0 && lrows < 1200);
  assert_true(rrows > 0 && rrows < 400);
  assert_true(actual(&an, "left peak bytes held=") > 0);
  assert_true(actual(&an, "right peak bytes held=") > 0);
  assert_int_equal(actual(&an_un, "left peak rows held="), 1200);
  result_free(&an);
  result_free(&an_un);
  sl_session_free(s);
}

/* 'table.exec.state.ttl' still drops a regular join's rows (no bound): at
 * the end only the rows younger than the TTL are left. */
static void test_state_ttl_expires_join_rows(void **state) {
  (void)state;
  sl_session *s = nexmark();
  static const char *const ttl[] = {"SET 'table.exec.state.ttl' = '1 ms'"};
  run_all(s, ttl, 1);
  result an;
  run(s, "EXPLAIN ANALYZE " JOIN "P.id > 0", &an);
  assert_true(actual(&an, "join rows held at the end=") < 8000);
  result_free(&an);
  sl_session_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_both_sides_expire),
      cmocka_unit_test(test_explain_says_when_rows_go),
      cmocka_unit_test(test_rows_after_other_side_ended_expire),
      cmocka_unit_test(test_flink_forms_bound_both_sides),
      cmocka_unit_test(test_explain_analyze_shows_peak_state),
      cmocka_unit_test(test_state_ttl_expires_join_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
