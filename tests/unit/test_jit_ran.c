/* test_jit_ran.c - a query run with the JIT on really runs compiled, and
 * says so truthfully (runtime/query_setup.c, worker.c, explain_plan.c):
 * the buffers that ran compiled and those handed back to the interpreter
 * are counted; when LLVM fails (SET 'sluice.debug.jit-fail' makes it fail
 * in its optimizer), EXPLAIN ANALYZE says the pipeline ran interpreted and
 * why, and 'sluice.jit' = 'require' makes it an error.  Expected counts
 * come from tests/sql/data/clicks.csv (11 rows, 1 buffer at 1 worker) and
 * fanout.csv (alice matches 300 table rows). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_helpers.h"
#include "sluice/binder/binder.h"
#include "sluice/common/strbuf.h"
#include "sluice/exec/executor.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/plan.h"
#include "sluice/session/session.h"

static int keep_text(void *c, const char *t) {
  sl_strbuf_append(c, t);
  return SL_OK;
}

/* EXPLAIN ANALYZE sql's text into out (the status returned). */
static int explain(sl_session *s, const char *sql, sl_strbuf *out,
                   sl_error *err) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = out;
  sink.text = keep_text;
  return sl_session_execute(s, sql, strlen(sql), 1, &sink, err);
}

static sl_session *clicks_session(void) {
  const char *dir = getenv("SLUICE_SOURCE_DIR");
  char sql[1024];
  sl_session *s = session_with_clicks();
  snprintf(sql, sizeof sql,
           "CREATE TABLE fanout (user_name STRING, n INT) WITH ('connector' "
           "= 'filesystem', 'path' = '%s/tests/sql/data/fanout.csv', "
           "'format' = 'csv')",
           dir ? dir : ".");
  session_exec_ok(s, sql);
  session_exec_ok(s, "SET 'parallelism.default' = '1'");
  session_exec_ok(s, "SET 'sluice.jit' = 'require'");
  return s;
}

#define STATELESS "SELECT user_name, price * 3 - 1 FROM clicks WHERE price > 40"

/* The file's one buffer ran through the compiled function, whole. */
static void test_compiled_buffers_counted(void **state) {
  (void)state;
  sl_session *s = clicks_session();
  sl_query_stats st;
  sl_error err = {0};
  assert_int_equal(session_run_query(s, STATELESS, &st, NULL, &err), SL_OK);
  assert_string_equal(st.jit_status, "");
  assert_int_equal(st.jit_buffers, 1);
  assert_int_equal(st.jit_rows, 11);
  assert_int_equal(st.jit_back_buffers, 0);
  assert_int_equal(st.jit_back_rows, 0);
  /* A window aggregate too: 11 rows to the compiled fold. */
  assert_int_equal(
      session_run_query(
          s,
          "SELECT user_name, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, "
          "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY user_name, "
          "window_start, window_end",
          &st, NULL, &err),
      SL_OK);
  assert_int_equal(st.jit_buffers, 1);
  assert_int_equal(st.jit_rows, 11);
  assert_int_equal(st.jit_back_buffers, 0);

  /* A lookup join without state: the stream's filter and keys, then the
   * joined rows (900 of alice's), in two compiled loops. */
  assert_int_equal(
      session_run_query(s,
                        "SELECT c.user_name, f.n FROM clicks AS c JOIN fanout "
                        "AS f ON c.user_name = f.user_name WHERE f.n < 3",
                        &st, NULL, &err),
      SL_OK);
  assert_int_equal(st.jit_buffers, 1);
  assert_int_equal(st.jit_rows, 11);
  assert_int_equal(st.jit_back_buffers, 0);

  sl_strbuf text = SL_STRBUF_INIT;
  assert_int_equal(explain(s, "EXPLAIN ANALYZE " STATELESS, &text, &err),
                   SL_OK);
  const char *out = sl_strbuf_cstr(&text);
  assert_non_null(strstr(out, "Pipeline [compiled, 1 of 1 buffers; 0 handed "
                              "back, 1 worker,"));
  assert_non_null(strstr(out, "rows compiled=11,"));
  sl_strbuf_free(&text);
  sl_session_free(s);
}

/* A lookup join whose matches do not fit a 16 KB buffer (alice: 300 table
 * rows): the compiled probe hands the buffer back, and that is counted,
 * not claimed as compiled -- and it is no error under 'require'. */
static void test_hand_back_counted(void **state) {
  (void)state;
  sl_session *s = clicks_session();
  session_exec_ok(s, "SET 'sluice.buffer-size' = '16384'");
  const char *sql =
      "SELECT c.user_name, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE "
      "clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND)) AS c JOIN fanout AS f "
      "ON c.user_name = f.user_name GROUP BY c.user_name, window_start, "
      "window_end";
  sl_query_stats st;
  sl_error err = {0};
  assert_int_equal(session_run_query(s, sql, &st, NULL, &err), SL_OK);
  assert_string_equal(st.jit_status, "");
  assert_int_equal(st.jit_buffers, 0);
  assert_int_equal(st.jit_back_buffers, 1);
  assert_int_equal(st.jit_back_rows, 11);
  sl_session_free(s);
}

/* A staged plan (each click joined with its window's highest price, as
 * NEXMark q7): both leaves' pipelines run compiled, the stream leaf's too
 * (its kernel computes the watermark the stage sink needs: it once handed
 * every buffer back), and EXPLAIN ANALYZE says so on each leaf. */
#define STAGED                                                                 \
  "SELECT c.user_name, c.price FROM clicks c JOIN (SELECT MAX(price) AS "      \
  "mp, TUMBLE_ROWTIME(ts, INTERVAL '5' SECOND) AS t FROM clicks GROUP BY "     \
  "TUMBLE(ts, INTERVAL '5' SECOND)) m ON c.price = m.mp WHERE c.ts BETWEEN "   \
  "m.t - INTERVAL '5' SECOND AND m.t"
static void test_staged_leaves_run_compiled(void **state) {
  (void)state;
  sl_session *s = clicks_session();
  sl_query_stats st;
  sl_error err = {0};
  uint64_t rows;
  assert_int_equal(session_run_query(s, STAGED, &st, &rows, &err), SL_OK);
  /* Per 5 s window its highest price's click: carol 40, dave 70, bob 80,
   * alice 110 (carol's 90 at 3.5 s comes when the watermark is at 10 s:
   * late for both leaves). */
  assert_int_equal(rows, 4);
  assert_int_equal(st.nleaves, 2);
  for (int k = 0; k < 2; k++) {
    assert_string_equal(st.leaf[k].jit_status, "");
    assert_int_equal(st.leaf[k].jit_buffers, 1);
    /* the stream leaf drops the late row before its pipeline; the window
     * aggregate's fold counts it late */
    assert_int_equal(st.leaf[k].jit_rows, k == 0 ? 10 : 11);
    assert_int_equal(st.leaf[k].jit_back_buffers, 0);
  }
  assert_int_equal(st.jit_back_buffers, 0);
  /* The stages' expressions too (exec/stage_jit.c): the join's residual
   * over its 4 joined rows, then the SELECT over the 4 that pass. */
  assert_int_equal(st.stage_rows_compiled, 8);
  assert_int_equal(st.stage_rows_interpreted, 0);
  sl_strbuf text = SL_STRBUF_INIT;
  assert_int_equal(explain(s, "EXPLAIN ANALYZE " STAGED, &text, &err), SL_OK);
  const char *out = sl_strbuf_cstr(&text), *at = out;
  int leaves = 0;
  while ((at = strstr(at, "buffers handed back=0, rows handed back=0"))) {
    leaves++;
    at++;
  }
  assert_int_equal(leaves, 2);
  assert_non_null(strstr(out, "stage rows compiled=8, stage rows "
                              "interpreted=0"));
  sl_strbuf_free(&text);
  /* Without the JIT the interpreter does the same rows. */
  session_exec_ok(s, "SET 'sluice.jit' = 'off'");
  assert_int_equal(session_run_query(s, STAGED, &st, &rows, &err), SL_OK);
  assert_int_equal(rows, 4);
  assert_int_equal(st.stage_rows_compiled, 0);
  assert_int_equal(st.stage_rows_interpreted, 8);
  sl_session_free(s);
}

/* LLVM fails: EXPLAIN ANALYZE says interpreted and LLVM's reason; under
 * 'require' the query is an error naming the pipeline; under 'on' it runs
 * interpreted (the rows are still right). */
static void test_llvm_failure_is_shown_and_required(void **state) {
  (void)state;
  sl_session *s = clicks_session();
  session_exec_ok(s, "SET 'sluice.debug.jit-fail' = 'on'");
  sl_query_stats st;
  sl_error err = {0};
  assert_int_equal(session_run_query(s, STATELESS, &st, NULL, &err),
                   SL_EINTERNAL);
  assert_non_null(strstr(err.message, "the pipeline reading 'clicks' should "
                                      "run compiled but did not"));
  assert_non_null(strstr(err.message, "unknown pass name"));
  sl_error_clear(&err);

  session_exec_ok(s, "SET 'sluice.jit' = 'on'");
  assert_int_equal(session_run_query(s, STATELESS, &st, NULL, &err), SL_OK);
  assert_non_null(strstr(st.jit_status, "LLVM set-up failed: "));
  assert_int_equal(st.jit_buffers + st.jit_back_buffers, 0);
  assert_int_equal(st.rows_out, 5); /* price > 40: 50 70 80 90 110 */
  sl_strbuf text = SL_STRBUF_INIT;
  assert_int_equal(explain(s, "EXPLAIN ANALYZE " STATELESS, &text, &err),
                   SL_OK);
  assert_non_null(strstr(sl_strbuf_cstr(&text),
                         "Pipeline [interpreted: LLVM set-up failed: JIT: "
                         "optimizing: unknown pass name"));
  sl_strbuf_free(&text);
  /* A pipeline the planner leaves to the interpreter (too large to
   * compile) is no error under 'require': LLVM is never asked. */
  session_exec_ok(s, "SET 'sluice.jit' = 'require'");
  sl_strbuf big = SL_STRBUF_INIT;
  sl_strbuf_append(&big, "SELECT price");
  for (int i = 0; i < 1500; i++)
    sl_strbuf_printf(&big, ", price * %d + 1", i);
  sl_strbuf_append(&big, " FROM clicks");
  assert_int_equal(session_run_query(s, sl_strbuf_cstr(&big), &st, NULL, &err),
                   SL_OK);
  assert_non_null(strstr(st.jit_status, "too large to compile"));
  sl_strbuf_free(&big);
  sl_session_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compiled_buffers_counted),
      cmocka_unit_test(test_hand_back_counted),
      cmocka_unit_test(test_staged_leaves_run_compiled),
      cmocka_unit_test(test_llvm_failure_is_shown_and_required),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
