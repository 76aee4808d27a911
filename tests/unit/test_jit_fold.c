/* test_jit_fold.c - the compiled window state update (JIT phase 2, jit.h
 * sl_jit_add_fold) against the C fold (sluice.jit.state-update = off) and
 * the interpreter (sluice.jit = off): the same rows, the same late and
 * folded counts, the same error, over the `ro` generator with zipf keys
 * (many groups, so tables grow), NULL keys and arguments, FILTER, out of
 * order event times (late and, for hopping windows, partly late records),
 * and integer SUM overflow.  Each case also checks that EXPLAIN says the
 * state update is compiled, so that the comparison is not vacuous. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/binder/binder.h"
#include "sluice/common/strbuf.h"
#include "sluice/exec/executor.h"
#include "sluice/jit/jit.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/plan.h"
#include "sluice/session/session.h"
#include "sluice/state/aggregate.h"

/* ---- a sink that keeps the rows (sorted later) and any text ------------ */

typedef struct rows {
  char **line;
  size_t n, cap;
  sl_strbuf text;
} rows;

static int r_begin(void *ctx, int ncols, const char *const *names,
                   const sl_type *const *types) {
  (void)ctx, (void)ncols, (void)names, (void)types;
  return SL_OK;
}

static int g_ncols; /* of the query being run (the sink is not told twice) */

static int r_row(void *ctx, const char *const *cells) {
  rows *r = ctx;
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < g_ncols; i++)
    sl_strbuf_printf(&b, "%s%s", i ? "|" : "", cells[i] ? cells[i] : "NULL");
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 256;
    r->line = realloc(r->line, sizeof(char *) * r->cap);
    assert_non_null(r->line);
  }
  r->line[r->n++] = sl_strbuf_detach(&b);
  return SL_OK;
}

static int r_end(void *ctx) {
  (void)ctx;
  return SL_OK;
}

static int r_text(void *ctx, const char *text) {
  sl_strbuf_append(&((rows *)ctx)->text, text);
  return SL_OK;
}

static sl_result_sink rows_sink(rows *r) {
  sl_result_sink s = {r, r_begin, r_row, NULL, r_end, r_text, NULL, NULL, NULL};
  return s;
}

static void rows_free(rows *r) {
  for (size_t i = 0; i < r->n; i++)
    free(r->line[i]);
  free(r->line);
  sl_strbuf_free(&r->text);
  memset(r, 0, sizeof *r);
}

static int cmp_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void exec_ok(sl_session *s, const char *sql) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
}

/* Plan and run sql into r; the status, stats and (on error) err. */
static int run(sl_session *s, const char *sql, int ncols, rows *r,
               sl_query_stats *st, sl_error *err) {
  sl_arena a;
  sl_arena_init(&a, 0);
  char *text = sl_arena_strdup(&a, sql);
  sl_stmt *stmt;
  sl_bound_stmt *b = NULL;
  sl_plan *plan;
  g_ncols = ncols;
  sl_result_sink sink = rows_sink(r);
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
  if (r->n) /* qsort must not be given NULL */
    qsort(r->line, r->n, sizeof(char *), cmp_line);
  return rc;
}

/* The three ways to run a query. */
static const char *const MODES[3][2] = {
    {"off", "off"}, /* interpreter, C fold */
    {"on", "off"},  /* compiled loop, C fold (phase 1) */
    {"on", "on"},   /* compiled loop and state update (phase 2) */
};

static void set_mode(sl_session *s, int m) {
  char sql[128];
  snprintf(sql, sizeof sql, "SET 'sluice.jit' = '%s'", MODES[m][0]);
  exec_ok(s, sql);
  snprintf(sql, sizeof sql, "SET 'sluice.jit.state-update' = '%s'",
           MODES[m][1]);
  exec_ok(s, sql);
}

/* EXPLAIN of sql with phase 2 on says the state update is compiled. */
static void assert_state_compiled(sl_session *s, const char *sql) {
  set_mode(s, 2);
  char ex[4096];
  snprintf(ex, sizeof ex, "EXPLAIN %s", sql);
  rows r = {0};
  sl_result_sink sink = rows_sink(&r);
  sl_error err = {0};
  if (sl_session_execute(s, ex, strlen(ex), 1, &sink, &err) != SL_OK)
    fail_msg("%s: %s", ex, err.message);
  if (!strstr(sl_strbuf_cstr(&r.text), "[compiled, state update compiled"))
    fail_msg("state update not compiled:\n%s", sl_strbuf_cstr(&r.text));
  rows_free(&r);
}

/* sql gives the same sorted rows, late and folded counts (or the same
 * error) in every mode; returns the rows of the last mode's run. */
static size_t same_in_every_mode(sl_session *s, const char *sql, int ncols) {
  assert_state_compiled(s, sql);
  rows r[3];
  sl_query_stats st[3];
  sl_error err[3];
  int rc[3];
  memset(r, 0, sizeof r);
  memset(err, 0, sizeof err);
  for (int m = 0; m < 3; m++) {
    set_mode(s, m);
    rc[m] = run(s, sql, ncols, &r[m], &st[m], &err[m]);
  }
  for (int m = 1; m < 3; m++) {
    if (rc[m] != rc[0])
      fail_msg("%s: status %d (%s) with jit=%s state=%s, %d (%s) without", sql,
               rc[m], err[m].message ? err[m].message : "", MODES[m][0],
               MODES[m][1], rc[0], err[0].message ? err[0].message : "");
    if (rc[0] != SL_OK) {
      assert_string_equal(err[m].message, err[0].message);
      continue;
    }
    if (r[m].n != r[0].n)
      fail_msg("%s: %zu rows with jit=%s state=%s, %zu without", sql, r[m].n,
               MODES[m][0], MODES[m][1], r[0].n);
    for (size_t i = 0; i < r[0].n; i++)
      if (strcmp(r[m].line[i], r[0].line[i]) != 0)
        fail_msg("%s: row %zu differs with jit=%s state=%s:\n  %s\n  %s", sql,
                 i, MODES[m][0], MODES[m][1], r[m].line[i], r[0].line[i]);
    assert_int_equal(st[m].late_dropped, st[0].late_dropped);
    assert_int_equal(st[m].rows_state, st[0].rows_state);
  }
  size_t n = r[2].n;
  for (int m = 0; m < 3; m++) {
    rows_free(&r[m]);
    sl_error_clear(&err[m]);
  }
  return n;
}

/* `ro` with zipf keys; event time t is ts, but 3 s earlier for one key in
 * ten (out of order: late for 1 s windows behind a 1 s bound). */
static sl_session *ro_session(long events, long keys, int workers) {
  char sql[1024];
  sl_session *s = sl_session_new();
  snprintf(sql, sizeof sql,
           "CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), t AS CASE WHEN "
           "MOD(key, 10) = 3 THEN ts - INTERVAL '3' SECOND ELSE ts END, "
           "WATERMARK FOR t AS t - INTERVAL '1' SECOND) WITH ('connector' = "
           "'ro', 'key.range' = '%ld', 'key.distribution' = 'zipf', "
           "'events.num' = '%ld', 'events.per-second' = '100000')",
           keys, events);
  exec_ok(s, sql);
  snprintf(sql, sizeof sql, "SET 'parallelism.default' = '%d'", workers);
  exec_ok(s, sql);
  return s;
}

/* Every supported aggregate, NULL keys (k2) and NULL arguments (v),
 * FILTER, over a tumbling and a hopping window. */
static void test_differential_ro(void **state) {
  (void)state;
  static const char *const windows[] = {
      "TUMBLE(TABLE ro, DESCRIPTOR(t), INTERVAL '1' SECOND)",
      "HOP(TABLE ro, DESCRIPTOR(t), INTERVAL '500' MILLISECOND, INTERVAL "
      "'2' SECOND)",
  };
  for (int workers = 1; workers <= 2; workers++) {
    sl_session *s = ro_session(150000, 50000, workers);
    for (int w = 0; w < 2; w++) {
      char sql[2048];
      snprintf(
          sql, sizeof sql,
          "SELECT k1, k2, window_start, window_end, COUNT(*), COUNT(v), "
          "SUM(v), AVG(v), MIN(v), MAX(v), SUM(d), AVG(d), MIN(d), "
          "MAX(d), MIN(i), MAX(i), SUM(i), COUNT(*) FILTER (WHERE v > "
          "100) FROM (SELECT key / 4 AS k1, CASE WHEN MOD(key, 7) = 0 THEN "
          "NULL ELSE CAST(MOD(key, 3) AS INT) END AS k2, CASE WHEN "
          "MOD(key, 5) = 1 THEN NULL ELSE key END AS v, CAST(key AS "
          "DOUBLE) / 3 AS d, CAST(MOD(key, 1000) AS INT) - 500 AS i, "
          "window_start, window_end FROM TABLE(%s)) GROUP BY k1, k2, "
          "window_start, window_end",
          windows[w]);
      size_t n = same_in_every_mode(s, sql, 18);
      assert_true(n > 5000); /* many groups: tables grew */
    }
    sl_session_free(s);
  }
}

/* Late and partly late records: the same drops and folds. */
static void test_late_counts(void **state) {
  (void)state;
  sl_session *s = ro_session(200000, 1000, 1);
  const char *tumble =
      "SELECT key, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ro, "
      "DESCRIPTOR(t), INTERVAL '1' SECOND)) GROUP BY key, window_start, "
      "window_end";
  const char *hop =
      "SELECT key, window_start, COUNT(*), SUM(key) FROM TABLE(HOP(TABLE ro, "
      "DESCRIPTOR(t), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY key, "
      "window_start, window_end";
  same_in_every_mode(s, tumble, 3);
  same_in_every_mode(s, hop, 4);
  /* and there are late records in the tumbling case */
  rows r = {0};
  sl_query_stats st;
  sl_error err = {0};
  set_mode(s, 2);
  assert_int_equal(run(s, tumble, 3, &r, &st, &err), SL_OK);
  assert_true(st.late_dropped > 0);
  assert_true(st.rows_state + st.late_dropped == st.events);
  rows_free(&r);
  sl_session_free(s);
}

/* An integer SUM that overflows: the same error, word for word. */
static void test_sum_overflow(void **state) {
  (void)state;
  sl_session *s = ro_session(50000, 10, 1);
  same_in_every_mode(
      s,
      "SELECT key, window_start, COUNT(*), SUM(key + 9223372036854775000) "
      "FROM TABLE(TUMBLE(TABLE ro, DESCRIPTOR(t), INTERVAL '1' SECOND)) GROUP "
      "BY key, window_start, window_end",
      4);
  rows r = {0};
  sl_query_stats st;
  sl_error err = {0};
  set_mode(s, 2);
  assert_int_not_equal(
      run(s,
          "SELECT key, SUM(key + 9223372036854775000) FROM TABLE(TUMBLE(TABLE "
          "ro, DESCRIPTOR(t), INTERVAL '1' SECOND)) GROUP BY key, "
          "window_start, window_end",
          2, &r, &st, &err),
      SL_OK);
  assert_non_null(strstr(err.message, "integer overflow in SUM"));
  sl_error_clear(&err);
  rows_free(&r);
  sl_session_free(s);
}

/* sql through the session (which chooses the strategy) into sorted rows. */
static void session_rows(sl_session *s, const char *sql, int ncols, rows *r) {
  g_ncols = ncols;
  sl_result_sink sink = rows_sink(r);
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
  if (r->n)
    qsort(r->line, r->n, sizeof(char *), cmp_line);
}

/* Repartitioned TUMBLE windows: the owners fold the rows they are sent
 * with the compiled fold, each late by its sender's watermark; rows,
 * late drops and all, as the C fold's and the interpreter's.  One key in
 * ten is 3 s early behind a 1 s bound, so records are late. */
static void test_repartition_owner(void **state) {
  (void)state;
  sl_session *s = ro_session(200000, 20000, 2);
  exec_ok(s, "SET 'sluice.strategy' = 'repartition'");
  const char *sql =
      "SELECT key, window_start, COUNT(*), SUM(key), MAX(key) FROM "
      "TABLE(TUMBLE(TABLE ro, DESCRIPTOR(t), INTERVAL '1' SECOND)) GROUP BY "
      "key, window_start, window_end";
  assert_state_compiled(s, sql);
  rows r[3];
  memset(r, 0, sizeof r);
  for (int m = 0; m < 3; m++) {
    set_mode(s, m);
    session_rows(s, sql, 5, &r[m]);
  }
  assert_true(r[0].n > 5000);
  for (int m = 1; m < 3; m++) {
    assert_int_equal(r[m].n, r[0].n);
    for (size_t i = 0; i < r[0].n; i++)
      if (strcmp(r[m].line[i], r[0].line[i]) != 0)
        fail_msg("row %zu differs with jit=%s state=%s:\n  %s\n  %s", i,
                 MODES[m][0], MODES[m][1], r[m].line[i], r[0].line[i]);
  }
  /* the counts add up to the records not dropped as late: some, not most */
  long kept = 0;
  for (size_t i = 0; i < r[2].n; i++) {
    const char *c = strchr(strchr(r[2].line[i], '|') + 1, '|') + 1;
    kept += atol(c);
  }
  assert_true(kept < 200000 && kept > 150000);
  for (int m = 0; m < 3; m++)
    rows_free(&r[m]);
  sl_session_free(s);
}

/* What the state update is not compiled for keeps the C fold. */
static void test_not_compiled(void **state) {
  (void)state;
  sl_session *s = ro_session(1000, 10, 1);
  static const char *const sql[] = {
      "EXPLAIN SELECT COUNT(DISTINCT key) FROM TABLE(TUMBLE(TABLE ro, "
      "DESCRIPTOR(t), INTERVAL '1' SECOND)) GROUP BY window_start, window_end",
      "EXPLAIN SELECT k, COUNT(*) FROM (SELECT CAST(key AS DECIMAL(30, 0)) "
      "AS k, window_start, window_end FROM TABLE(TUMBLE(TABLE ro, "
      "DESCRIPTOR(t), INTERVAL '1' SECOND))) GROUP BY k, window_start, "
      "window_end",
      "EXPLAIN SELECT key, SUM(CAST(key AS DECIMAL(10, 2))) FROM "
      "TABLE(TUMBLE(TABLE ro, DESCRIPTOR(t), INTERVAL '1' SECOND)) GROUP BY "
      "key, window_start, window_end",
      "EXPLAIN SELECT key, COUNT(*) FROM TABLE(SESSION(TABLE ro PARTITION BY "
      "key, DESCRIPTOR(t), INTERVAL '1' SECOND)) GROUP BY key, window_start, "
      "window_end",
  };
  for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
    rows r = {0};
    sl_result_sink sink = rows_sink(&r);
    sl_error err = {0};
    if (sl_session_execute(s, sql[i], strlen(sql[i]), 1, &sink, &err) != SL_OK)
      fail_msg("%s: %s", sql[i], err.message);
    if (strstr(sl_strbuf_cstr(&r.text), "state update compiled"))
      fail_msg("%s:\n%s", sql[i], sl_strbuf_cstr(&r.text));
    rows_free(&r);
  }
  sl_session_free(s);
}

/* String keys, short and long (NEXMark's bid channel and url): hashed and
 * compared by content, field by field. */
static void test_string_keys(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  exec_ok(s, "CREATE TABLE datagen (event_type INT, bid ROW<auction BIGINT, "
             "bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, "
             "dateTime TIMESTAMP(3), extra VARCHAR>, dateTime AS bid.dateTime, "
             "WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND) WITH "
             "('connector' = 'nexmark', 'events.num' = '200000')");
  exec_ok(s, "SET 'parallelism.default' = '1'");
  size_t n = same_in_every_mode(
      s,
      "SELECT bid.channel, bid.url, MOD(bid.auction, 3), window_start, "
      "COUNT(*), SUM(bid.price), MAX(bid.price) FROM TABLE(TUMBLE(TABLE "
      "datagen, DESCRIPTOR(dateTime), INTERVAL '1' SECOND)) WHERE event_type "
      "= 2 GROUP BY bid.channel, bid.url, MOD(bid.auction, 3), window_start, "
      "window_end",
      7);
  assert_true(n > 100);
  sl_session_free(s);
}

/* The compiled routing of repartitioned records: the same owner as C's
 * (sl_key_hash >> 32) % owners for every row (NULL keys, integers, short
 * and long strings), else workers with and without the JIT would split a
 * key's records between two owners. */
static void test_route(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *tt[3] = {sl_type_timestamp(&a, 3),
                          sl_type_new(&a, SL_TYPE_BIGINT),
                          sl_type_varchar(&a, -1)};
  const sl_row_layout *tl = sl_row_layout_new(&a, 3, NULL, tt);
  const sl_row_layout *kl = sl_row_layout_new(&a, 2, NULL, tt + 1);
  sl_buffer tmp;
  sl_buffer_init(&tmp, tl, 1 << 20);
  static const char *const words[] = {"", "a", "exactly12byte",
                                      "a string longer than twelve bytes"};
  uint64_t x = 42;
  for (int r = 0; r < 5000; r++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    uint8_t *row = sl_buffer_append(&tmp);
    assert_non_null(row);
    SL_FIELD(row, tl, 1, int64_t) = (int64_t)(x >> 20) - (1 << 30);
    if ((x >> 8) % 9 == 0)
      sl_row_set_null(row, 1, true);
    if ((x >> 12) % 7 == 0) {
      sl_row_set_null(row, 2, true);
    } else {
      const char *w = words[(x >> 16) % 4];
      char buf[64];
      snprintf(buf, sizeof buf, "%s%d", w, (int)((x >> 24) % 50));
      sl_str *s = (sl_str *)(row + tl->fields[2].offset);
      assert_true(sl_buffer_put_str(&tmp, s, buf, (uint32_t)strlen(buf)));
    }
  }
  sl_plan_window pw = {0};
  sl_jit_fold_spec spec = {&pw, tl, 0, 1, kl, NULL, NULL};
  sl_jit *j = NULL;
  sl_jit_kernel *k = NULL;
  sl_error err = {0};
  assert_int_equal(sl_jit_new(&j, NULL, &err), SL_OK);
  assert_int_equal(sl_jit_add_route(j, &spec, 7, &k, &err), SL_OK);
  assert_int_equal(sl_jit_compile(j, NULL, &err), SL_OK);
  uint32_t *dest = malloc(sizeof(uint32_t) * tmp.nrows);
  sl_jit_route_run(k, tmp.data, tmp.nrows, dest);
  int used[7] = {0};
  uint8_t key[64];
  for (uint32_t r = 0; r < tmp.nrows; r++) {
    const uint8_t *row = sl_buffer_row(&tmp, r);
    memset(key, 0, sizeof key);
    for (int i = 0; i < 2; i++) {
      if (sl_row_is_null(row, 1 + i))
        sl_row_set_null(key, i, true);
      else
        memcpy(key + kl->fields[i].offset, row + tl->fields[1 + i].offset,
               kl->fields[i].size);
    }
    uint32_t want = (uint32_t)((sl_key_hash(kl, key) >> 32) % 7);
    assert_int_equal(dest[r], want);
    used[want]++;
  }
  for (int d = 0; d < 7; d++)
    assert_true(used[d] > 0); /* and every owner gets some */
  free(dest);
  sl_jit_free(j);
  sl_buffer_free(&tmp);
  sl_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_route),
      cmocka_unit_test(test_differential_ro),
      cmocka_unit_test(test_late_counts),
      cmocka_unit_test(test_sum_overflow),
      cmocka_unit_test(test_not_compiled),
      cmocka_unit_test(test_repartition_owner),
      cmocka_unit_test(test_string_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
