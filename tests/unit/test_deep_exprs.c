/* test_deep_exprs.c - deep and wide expressions end to end (issue 27):
 * 100,000-term AND / OR chains run (flat n-ary nodes, three-valued), in
 * the interpreter and the JIT; 100,000-term `+` and `||` chains, nested
 * parentheses and views that stack depths are refused with the depth
 * message, also under EXPLAIN and CREATE VIEW; 100,000-literal IN lists
 * give SQL's NULL semantics; a statement at the depth limit runs through
 * every phase on a thread with a quarter of the main thread's stack.
 * The SQL is built here: too long to write in a .test file.  Before the
 * fix each of the long chains was a SIGSEGV (stack overflow). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/common/strbuf.h"
#include "sluice/parser/ast.h"
#include "sluice/session/session.h"

#define N 100000

typedef struct capture {
  sl_strbuf cells; /* every cell, "|" after each, a newline per row */
  sl_strbuf text;  /* EXPLAIN and other text */
} capture;

static int on_row(void *c, const char *const *cells) {
  capture *k = c;
  /* the tests below select one column */
  sl_strbuf_append(&k->cells, cells[0] ? cells[0] : "NULL");
  sl_strbuf_append(&k->cells, "\n");
  return SL_OK;
}

static int on_text(void *c, const char *t) {
  sl_strbuf_append(&((capture *)c)->text, t);
  return SL_OK;
}

/* Run sql; the return code, *msg (malloc'd, or NULL) the error message,
 * k the rows and text. */
static int run(sl_session *s, const char *sql, capture *k, char **msg) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = k;
  sink.row = on_row;
  sink.text = on_text;
  sl_error err = {0};
  int rc = sl_session_execute(s, sql, strlen(sql), 1, &sink, &err);
  if (msg)
    *msg = err.message ? strdup(err.message) : NULL;
  sl_error_clear(&err);
  return rc;
}

static void ok(sl_session *s, const char *sql) {
  char *msg = NULL;
  capture k = {SL_STRBUF_INIT, SL_STRBUF_INIT};
  if (run(s, sql, &k, &msg) != SL_OK)
    fail_msg("%.200s: %s", sql, msg ? msg : "?");
  free(msg);
  sl_strbuf_free(&k.cells);
  sl_strbuf_free(&k.text);
}

/* The single column of the query's rows, "a\nb\n". */
static char *rows_of(sl_session *s, const char *sql) {
  capture k = {SL_STRBUF_INIT, SL_STRBUF_INIT};
  char *msg = NULL;
  if (run(s, sql, &k, &msg) != SL_OK)
    fail_msg("%.200s...: %s", sql, msg ? msg : "?");
  free(msg);
  char *r = strdup(sl_strbuf_cstr(&k.cells));
  sl_strbuf_free(&k.cells);
  sl_strbuf_free(&k.text);
  return r;
}

/* The statement fails with a message containing want. */
static void refused(sl_session *s, const char *sql, const char *want) {
  capture k = {SL_STRBUF_INIT, SL_STRBUF_INIT};
  char *msg = NULL;
  int rc = run(s, sql, &k, &msg);
  if (rc == SL_OK || !msg || !strstr(msg, want))
    fail_msg("%.120s...: want an error with \"%s\", got %d: %s", sql, want, rc,
             msg ? msg : "(none)");
  free(msg);
  sl_strbuf_free(&k.cells);
  sl_strbuf_free(&k.text);
}

/* The statement runs and its text (EXPLAIN's) contains want. */
static void explained(sl_session *s, const char *sql, const char *want) {
  capture k = {SL_STRBUF_INIT, SL_STRBUF_INIT};
  char *msg = NULL;
  int rc = run(s, sql, &k, &msg);
  if (rc != SL_OK || !strstr(sl_strbuf_cstr(&k.text), want))
    fail_msg("%.120s...: want \"%s\" in the output, got %d: %s\n%.2000s", sql,
             want, rc, msg ? msg : "", sl_strbuf_cstr(&k.text));
  free(msg);
  sl_strbuf_free(&k.cells);
  sl_strbuf_free(&k.text);
}

/* prefix, then n terms term(i) joined by sep, then suffix (malloc'd). */
static char *chain(const char *prefix, int n, const char *sep,
                   const char *(*term)(int i, char *buf), const char *suffix) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_append(&b, prefix);
  char buf[64];
  for (int i = 0; i < n; i++) {
    if (i)
      sl_strbuf_append(&b, sep);
    sl_strbuf_append(&b, term(i, buf));
  }
  sl_strbuf_append(&b, suffix);
  char *r = strdup(sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return r;
}

/* Ten rows, n = 1..10. */
static sl_session *session(const char *jit) {
  sl_session *s = sl_session_new();
  ok(s, "CREATE TABLE t (n BIGINT) WITH ('connector' = 'datagen', "
        "'number-of-rows' = '10', 'fields.n.kind' = 'sequence', "
        "'fields.n.start' = '1', 'fields.n.end' = '10')");
  char set[64];
  snprintf(set, sizeof set, "SET 'sluice.jit' = '%s'", jit);
  ok(s, set);
  ok(s, "SET 'parallelism.default' = '1'");
  return s;
}

static const char *gt_minus(int i, char *buf) { /* always true for n >= 1 */
  snprintf(buf, 64, "n > %d", -i);
  return buf;
}

static const char *eq_minus(int i, char *buf) { /* never true */
  snprintf(buf, 64, "n = %d", -i);
  return buf;
}

static const char *one(int i, char *buf) {
  (void)i;
  return strcpy(buf, "1");
}

static const char *literal(int i, char *buf) {
  snprintf(buf, 64, "%d", i * 7); /* 0, 7, 14, ...: n = 7 is in */
  return buf;
}

static void and_or_chains(const char *jit) {
  sl_session *s = session(jit);
  /* 100,000 conditions true for every row, then n < 5: rows 1..4 */
  char *and4 = chain("SELECT COUNT(*) FROM t WHERE ", N, " AND ", gt_minus,
                     " AND n < 5");
  char *r = rows_of(s, and4);
  assert_string_equal(r, "4\n");
  free(r);
  /* 100,000 conditions false for every row, then n = 3: one row */
  char *or1 =
      chain("SELECT COUNT(*) FROM t WHERE ", N, " OR ", eq_minus, " OR n = 3");
  r = rows_of(s, or1);
  assert_string_equal(r, "1\n");
  free(r);
  /* Three-valued: TRUE AND ... AND NULL is NULL; a FALSE anywhere makes it
   * FALSE; FALSE OR ... OR NULL is NULL; a TRUE anywhere makes it TRUE. */
  char *and_null = chain("SELECT ", N, " AND ", gt_minus,
                         " AND CAST(NULL AS BOOLEAN) FROM t WHERE n = 1");
  r = rows_of(s, and_null);
  assert_string_equal(r, "NULL\n");
  free(r);
  char *and_false = chain("SELECT CAST(NULL AS BOOLEAN) AND ", N, " AND ",
                          gt_minus, " AND n > 1 FROM t WHERE n = 1");
  r = rows_of(s, and_false);
  assert_string_equal(r, "FALSE\n");
  free(r);
  char *or_null = chain("SELECT ", N, " OR ", eq_minus,
                        " OR CAST(NULL AS BOOLEAN) FROM t WHERE n = 1");
  r = rows_of(s, or_null);
  assert_string_equal(r, "NULL\n");
  free(r);
  char *or_true = chain("SELECT CAST(NULL AS BOOLEAN) OR ", N, " OR ", eq_minus,
                        " OR n = 1 FROM t WHERE n = 1");
  r = rows_of(s, or_true);
  assert_string_equal(r, "TRUE\n");
  free(r);
  /* EXPLAIN and CREATE VIEW of the chain work too. */
  char *explain = malloc(strlen(and4) + 16);
  sprintf(explain, "EXPLAIN %s", and4);
  ok(s, explain);
  char *view = chain("CREATE VIEW v AS SELECT n FROM t WHERE ", N, " AND ",
                     gt_minus, " AND n < 5");
  ok(s, view);
  r = rows_of(s, "SELECT COUNT(*) FROM v");
  assert_string_equal(r, "4\n");
  free(r);
  free(view);
  free(explain);
  free(and4);
  free(or1);
  free(and_null);
  free(and_false);
  free(or_null);
  free(or_true);
  sl_session_free(s);
}

static void test_and_or_chains_jit(void **state) {
  (void)state;
  and_or_chains("on");
}

static void test_and_or_chains_interpreted(void **state) {
  (void)state;
  and_or_chains("off");
}

static void test_deep_chains_refused(void **state) {
  (void)state;
  sl_session *s = session("on");
  char *plus = chain("SELECT ", N, " + ", one, " FROM t");
  char *concat = chain("SELECT 'a' || ", N, " || ", one, "");
  const char *want = "expression nested too deeply: depth 100000 exceeds "
                     "the limit of 1000";
  refused(s, plus, want);
  refused(s, concat, "expression nested too deeply: depth 100001 exceeds");
  char *explain = malloc(strlen(plus) + 16);
  sprintf(explain, "EXPLAIN %s", plus);
  refused(s, explain, want);
  char *view = malloc(strlen(plus) + 32);
  sprintf(view, "CREATE VIEW v AS %s", plus);
  refused(s, view, want);
  /* nested parentheses stop at the parser's stack */
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_append(&b, "SELECT ");
  for (int i = 0; i < N; i++)
    sl_strbuf_appendc(&b, '(');
  sl_strbuf_append(&b, "1");
  for (int i = 0; i < N; i++)
    sl_strbuf_appendc(&b, ')');
  refused(s, sl_strbuf_cstr(&b), "the parser's limit of 1000 open levels");
  sl_strbuf_free(&b);
  /* At the limit a chain runs: 1000 terms of n over n = 1..10. */
  char *at = chain("SELECT ", SL_MAX_EXPR_DEPTH, " + ", one,
                   " + n FROM t WHERE n = 2");
  refused(s, at, "depth 1001 exceeds"); /* 1000 ones and n */
  free(at);
  at = chain("SELECT ", SL_MAX_EXPR_DEPTH - 1, " + ", one,
             " + n FROM t WHERE n = 2");
  char *r = rows_of(s, at);
  assert_string_equal(r, "1001\n");
  free(r);
  free(at);
  free(view);
  free(explain);
  free(plus);
  free(concat);
  sl_session_free(s);
}

/* Views each within the limit, stacked past it: refused when the planner
 * substitutes them, not a crash in a later walker. */
static void test_stacked_views_refused(void **state) {
  (void)state;
  sl_session *s = session("on");
  char *v1 = chain("CREATE VIEW v1 AS SELECT n, n + ", 900, " + ", one,
                   " AS x FROM t");
  char *v2 = chain("CREATE VIEW v2 AS SELECT n, x + ", 900, " + ", one,
                   " AS x FROM v1");
  char *v3 = chain("CREATE VIEW v3 AS SELECT n, x + ", 900, " + ", one,
                   " AS x FROM v2");
  ok(s, v1);
  ok(s, v2);
  char *r = rows_of(s, "SELECT x FROM v2 WHERE n = 1");
  assert_string_equal(r, "1801\n"); /* 1 + 900 + 900 */
  free(r);
  ok(s, v3);
  refused(s, "SELECT x FROM v3", "nested too deeply once views are expanded");
  /* EXPLAIN shows the bound tree, and why there is no plan */
  explained(s, "EXPLAIN SELECT x FROM v3",
            "nested too deeply once views are expanded");
  free(v1);
  free(v2);
  free(v3);
  sl_session_free(s);
}

static void in_lists(const char *jit) {
  sl_session *s = session(jit);
  /* 0, 7, 14, ...: of 1..10 only 7 is in */
  char *in =
      chain("SELECT COUNT(*) FROM t WHERE n IN (", N, ", ", literal, ")");
  char *r = rows_of(s, in);
  assert_string_equal(r, "1\n");
  free(r);
  char *not_in =
      chain("SELECT COUNT(*) FROM t WHERE n NOT IN (", N, ", ", literal, ")");
  r = rows_of(s, not_in);
  assert_string_equal(r, "9\n");
  free(r);
  /* With a NULL in the list: TRUE where n is in, else NULL (so NOT IN is
   * never TRUE, and no row passes a NOT IN filter). */
  char *in_null = chain("SELECT n IN (NULL, ", N, ", ", literal,
                        ") FROM t WHERE n IN (3, 7)");
  r = rows_of(s, in_null);
  assert_true(strcmp(r, "NULL\nTRUE\n") == 0 || strcmp(r, "TRUE\nNULL\n") == 0);
  free(r);
  char *not_in_null = chain("SELECT COUNT(*) FROM t WHERE n NOT IN (", N, ", ",
                            literal, ", NULL)");
  r = rows_of(s, not_in_null);
  assert_string_equal(r, "0\n");
  free(r);
  /* The common type: BIGINT n against DECIMAL literals, 7.0 = 7. */
  r = rows_of(s, "SELECT COUNT(*) FROM t WHERE n IN (7.0, 2.5, 9.00)");
  assert_string_equal(r, "2\n");
  free(r);
  free(in);
  free(not_in);
  free(in_null);
  free(not_in_null);
  sl_session_free(s);
}

static void test_in_lists_jit(void **state) {
  (void)state;
  in_lists("on");
}

static void test_in_lists_interpreted(void **state) {
  (void)state;
  in_lists("off");
}

/* A statement at the depth limit, through parse, bind, plan, EXPLAIN,
 * interpreter and JIT, on a thread whose stack is 2 MiB (glibc's default
 * for threads when the stack limit is unlimited; a quarter of the main
 * thread's 8 MiB). */
typedef struct deep_run {
  int rc;
  char *rows, *views;
} deep_run;

static void *deep_main(void *arg) {
  deep_run *d = arg;
  sl_session *s = session("on");
  /* a + chain of 999 ones and n: depth 1000 */
  char *q = chain("SELECT ", SL_MAX_EXPR_DEPTH - 1, " + ", one,
                  " + n FROM t WHERE n = 3");
  d->rows = rows_of(s, q);
  char *e = malloc(strlen(q) + 16);
  sprintf(e, "EXPLAIN %s", q);
  capture k = {SL_STRBUF_INIT, SL_STRBUF_INIT};
  d->rc = run(s, e, &k, NULL);
  sl_strbuf_free(&k.cells);
  sl_strbuf_free(&k.text);
  ok(s, "SET 'sluice.jit' = 'off'");
  char *again = rows_of(s, q);
  if (strcmp(again, d->rows) != 0)
    d->rc = -100;
  free(again);
  /* two views, each just within the parser's limit, stacked to near the
   * planner's (1993 levels once substituted); JIT on */
  ok(s, "SET 'sluice.jit' = 'on'");
  char *v1 = chain("CREATE VIEW v1 AS SELECT n, n + ", 995, " + ", one,
                   " AS x FROM t");
  char *v2 = chain("CREATE VIEW v2 AS SELECT n, x + ", 996, " + ", one,
                   " AS x FROM v1");
  ok(s, v1);
  ok(s, v2);
  d->views = rows_of(s, "SELECT x FROM v2 WHERE n = 3");
  free(v1);
  free(v2);
  free(e);
  free(q);
  sl_session_free(s);
  return NULL;
}

static void test_limit_fits_small_stack(void **state) {
  (void)state;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 2u << 20);
  pthread_t t;
  deep_run d = {0, NULL, NULL};
  assert_int_equal(pthread_create(&t, &attr, deep_main, &d), 0);
  pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
  assert_int_equal(d.rc, SL_OK);
  assert_string_equal(d.rows, "1002\n");  /* 999 + 3 */
  assert_string_equal(d.views, "1994\n"); /* 3 + 995 + 996 */
  free(d.rows);
  free(d.views);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_and_or_chains_jit),
      cmocka_unit_test(test_and_or_chains_interpreted),
      cmocka_unit_test(test_deep_chains_refused),
      cmocka_unit_test(test_stacked_views_refused),
      cmocka_unit_test(test_in_lists_jit),
      cmocka_unit_test(test_in_lists_interpreted),
      cmocka_unit_test(test_limit_fits_small_stack),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
