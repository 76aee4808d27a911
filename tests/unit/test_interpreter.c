/* test_interpreter.c - the expression interpreter: logic, arithmetic,
 * overflow, decimals, casts, filter selection vectors, eval_into and the
 * heap-full status.  Expressions are bound from real SQL over table t
 * (interp_helpers.h); function tests are in test_interp_functions.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "interp_helpers.h"

static void test_three_valued_logic(void **state) {
  (void)state;
  static const char *const v[] = {"TRUE", "FALSE", "CAST(NULL AS BOOLEAN)"};
  /* 0 = TRUE, 1 = FALSE, 2 = NULL */
  static const char *const and_tab[3][3] = {{"TRUE", "FALSE", "NULL"},
                                            {"FALSE", "FALSE", "FALSE"},
                                            {"NULL", "FALSE", "NULL"}};
  static const char *const or_tab[3][3] = {{"TRUE", "TRUE", "TRUE"},
                                           {"TRUE", "FALSE", "NULL"},
                                           {"TRUE", "NULL", "NULL"}};
  char e[256];
  for (int x = 0; x < 3; x++) {
    for (int y = 0; y < 3; y++) {
      snprintf(e, sizeof e, "%s AND %s", v[x], v[y]);
      EXPECT(e, 0, and_tab[x][y]);
      snprintf(e, sizeof e, "%s OR %s", v[x], v[y]);
      EXPECT(e, 0, or_tab[x][y]);
    }
  }
  EXPECT("NOT CAST(NULL AS BOOLEAN)", 0, "NULL");
  EXPECT("NOT flag", 0, "FALSE");
  EXPECT("NOT flag", 3, "NULL");
  /* columns: flag is TRUE, NULL, FALSE, NULL on rows 0..3 */
  EXPECT("flag AND i > 0", 0, "TRUE");
  EXPECT("flag AND i > 0", 2, "FALSE");
  EXPECT("flag OR i > 0", 3, "NULL"); /* NULL OR FALSE */
  EXPECT("flag IS NULL", 1, "TRUE");
  EXPECT("flag IS NOT NULL", 1, "FALSE");
  EXPECT("flag IS TRUE", 0, "TRUE");
  EXPECT("flag IS TRUE", 1, "FALSE");
  EXPECT("flag IS NOT TRUE", 1, "TRUE");
  EXPECT("flag IS FALSE", 2, "TRUE");
  EXPECT("flag IS UNKNOWN", 3, "TRUE");
  EXPECT("flag IS NOT UNKNOWN", 0, "TRUE");
  /* AND/OR do not evaluate the right side where the left decides */
  EXPECT("i = 0 AND b / i > 1", 1, "NULL");
  EXPECT("b = 10 OR b / 0 > 1", 0, "TRUE");
  EXPECT_ERR("b = 11 OR b / 0 > 1", 0, "division by zero");
}

static void test_comparisons(void **state) {
  (void)state;
  EXPECT("i < b", 0, "TRUE");       /* INT vs BIGINT */
  EXPECT("dc > 12", 0, "TRUE");     /* DECIMAL vs INT */
  EXPECT("dc = 12.340", 0, "TRUE"); /* different scales */
  EXPECT("d = 1.5", 0, "TRUE");     /* DOUBLE vs DECIMAL literal */
  EXPECT("i = b", 1, "NULL");
  EXPECT("s = 'hello'", 0, "TRUE");
  EXPECT("s < s2", 0, "TRUE");
  EXPECT("s2 = 'a long string over twelve bytes'", 2, "TRUE");
  EXPECT("s2 = 'a long string over twelve bytez'", 2, "FALSE");
  EXPECT("s = ''", 2, "TRUE");
  EXPECT("'a' < 'b'", 0, "TRUE");
  EXPECT("'ab' < 'a'", 0, "FALSE");
  EXPECT("'\xc3\xa9' > 'z'", 0, "TRUE"); /* bytes: é sorts after z */
  EXPECT("ts > TIMESTAMP '2020-01-01 00:00:00'", 0, "TRUE");
  EXPECT("dt < ts", 0, "FALSE"); /* DATE vs TIMESTAMP */
  EXPECT("price BETWEEN 50 AND 150", 0, "TRUE");
  EXPECT("price NOT BETWEEN 50 AND 150", 0, "FALSE");
  EXPECT("price BETWEEN 150 AND 50", 0, "FALSE");
  EXPECT("price BETWEEN 50 AND NULL", 0, "NULL");
  EXPECT("price BETWEEN 500 AND NULL", 0, "FALSE");
  EXPECT("i IN (1, 2, 3)", 0, "TRUE");
  EXPECT("i IN (2, 3)", 0, "FALSE");
  EXPECT("i IN (2, NULL)", 0, "NULL");
  EXPECT("i IN (1, NULL)", 0, "TRUE");
  EXPECT("i NOT IN (2, NULL)", 0, "NULL");
  EXPECT("i NOT IN (2, 3)", 0, "TRUE");
  EXPECT("s IN ('x', 'hello')", 0, "TRUE");
  EXPECT("i IN (1, 2)", 1, "NULL");
  EXPECT("dc IN (12.34, 1)", 0, "TRUE");
}

static void test_arithmetic_and_overflow(void **state) {
  (void)state;
  EXPECT("i + b", 0, "11");
  EXPECT("b - i * 3", 0, "7");
  EXPECT("b / 3", 0, "3");
  EXPECT("-7 / 2", 0, "-3"); /* truncates toward zero */
  EXPECT("i / 2", 3, "-3");
  EXPECT("MOD(i, 3)", 3, "-1"); /* sign of the dividend */
  EXPECT("i % 3", 3, "-1");
  EXPECT("i + 1", 1, "NULL");
  EXPECT("ti + 1", 2, "128"); /* TINYINT + INT is INT */
  EXPECT("d * 2", 0, "3");
  EXPECT("d / 0", 0, "inf");
  EXPECT("price + 1", 2, "-9223372036854775807");
  EXPECT_ERR("b + 1", 2, "integer overflow");
  EXPECT_ERR("b + 1", 2, "b + 1");
  EXPECT_ERR("i + 1", 2, "integer overflow"); /* INT range */
  EXPECT_ERR("i * i", 2, "integer overflow");
  EXPECT_ERR("price - 1", 2, "integer overflow");
  EXPECT_ERR("-price", 2, "integer overflow");
  EXPECT_ERR("price / -1", 2, "integer overflow");
  EXPECT("MOD(price, -1)", 2, "0");
  EXPECT_ERR("ABS(price)", 2, "integer overflow");
  EXPECT_ERR("b / 0", 0, "division by zero");
  EXPECT_ERR("MOD(b, 0)", 0, "division by zero");
  EXPECT("b / 0", 1, "NULL"); /* NULL, not an error */
  /* a guarded division is safe */
  EXPECT("CASE WHEN i = 0 THEN 0 ELSE b / (i - 1) END", 3, "0");
  EXPECT("CASE WHEN i = 1 THEN -1 ELSE b / (i - 1) END", 0, "-1");
  EXPECT("ts + INTERVAL '1' DAY > ts", 0, "TRUE");
}

static void test_decimal(void **state) {
  (void)state;
  EXPECT("0.908 * price", 0, "90.800");
  EXPECT("0.908 * price", 3, "6.356");
  EXPECT("0.908 * price", 1, "NULL");
  EXPECT("dc + 1", 0, "13.34");
  EXPECT("dc - 0.005", 0, "12.335");
  EXPECT("dc * dc", 0, "152.2756");
  EXPECT("dc * 2", 2, "-0.10");
  EXPECT("dc / 3", 0, "4.1133333333333"); /* scale max(6, 2 + 10 + 1) */
  EXPECT("dc / 4", 2, "-0.0125000000000");
  EXPECT("MOD(dc, 5)", 0, "2");     /* INT, the type of 5 */
  EXPECT("MOD(dc, 5.0)", 0, "2.3"); /* DECIMAL(2, 1): 2.34 rounds */
  EXPECT("dc + dc", 3, "199999999.98");
  EXPECT("-dc", 2, "0.05");
  EXPECT("ABS(dc)", 2, "0.05");
  EXPECT("CAST(2.675 AS DECIMAL(3, 2))", 0, "2.68"); /* HALF_UP */
  EXPECT("CAST(-2.675 AS DECIMAL(3, 2))", 0, "-2.68");
  EXPECT("CAST(2.674 AS DECIMAL(3, 2))", 0, "2.67");
  EXPECT("CAST(dc AS DECIMAL(4, 1))", 0, "12.3");
  EXPECT("CAST(dc AS DECIMAL(4, 1))", 2, "-0.1"); /* -0.05 HALF_UP */
  EXPECT_ERR("CAST(dc AS DECIMAL(4, 1))", 3, "out of range");
  EXPECT("TRY_CAST(dc AS DECIMAL(4, 1))", 3, "NULL");
  EXPECT("ROUND(dc, 1)", 0, "12.30");
  EXPECT("ROUND(dc)", 0, "12");
  EXPECT("ROUND(dc)", 2, "0");
  EXPECT("ROUND(-2.5)", 0, "-3");
  EXPECT("FLOOR(dc)", 2, "-1");
  EXPECT("CEIL(dc)", 0, "13");
  EXPECT("CAST(dc AS INT)", 0, "12");
  EXPECT("CAST(dc AS DOUBLE)", 0, "12.34");
  EXPECT("CAST(dc AS STRING)", 2, "-0.05");
  EXPECT("dc > 0.908 * price", 2, "TRUE");
  EXPECT("12345678901234567890.5 * 10", 0, "123456789012345678905.0");
  EXPECT_ERR("CAST('99999999999999999999999999999999999999' AS "
             "DECIMAL(38, 0)) + 1",
             0, "decimal overflow");
}

static void test_casts(void **state) {
  (void)state;
  EXPECT("CAST(i AS STRING)", 3, "-7");
  EXPECT("CAST(b AS STRING)", 2, "9223372036854775807");
  EXPECT("CAST(d AS STRING)", 0, "1.5");
  EXPECT("CAST(CAST(1 AS DOUBLE) AS STRING)", 0, "1.0");
  EXPECT("CAST(1e10 AS STRING)", 0, "1.0E10");
  EXPECT("CAST(0.001 AS DOUBLE) < 1", 0, "TRUE");
  EXPECT("CAST(CAST(0.0001 AS DOUBLE) AS STRING)", 0, "1.0E-4");
  EXPECT("CAST(flag AS STRING)", 0, "TRUE");
  EXPECT("CAST(ts AS STRING)", 0, "2020-01-02 03:04:05.678");
  EXPECT("CAST(ts AS STRING)", 2, "1969-12-31 23:59:59.999");
  EXPECT("CAST(dt AS STRING)", 0, "2020-02-29");
  EXPECT("CAST(dt AS STRING)", 3, "1969-12-31");
  EXPECT("CAST(ts AS DATE)", 2, "-1");
  EXPECT("CAST(CAST(ts AS TIME) AS STRING)", 0, "03:04:05");
  EXPECT("CAST(CAST(dt AS TIMESTAMP(3)) AS STRING)", 0,
         "2020-02-29 00:00:00.000");
  EXPECT("CAST('42' AS INT)", 0, "42");
  EXPECT("CAST(' -42 ' AS BIGINT)", 0, "-42");
  EXPECT("CAST('9223372036854775807' AS BIGINT)", 0, "9223372036854775807");
  EXPECT_ERR("CAST('9223372036854775808' AS BIGINT)", 0, "cannot cast");
  EXPECT_ERR("CAST('abc' AS INT)", 0, "cannot cast 'abc' to INT");
  EXPECT("TRY_CAST('abc' AS INT)", 0, "NULL");
  EXPECT_ERR("CAST('3000000000' AS INT)", 0, "cannot cast");
  EXPECT_ERR("CAST('1e999' AS DOUBLE)", 0, "cannot cast '1e999' to DOUBLE");
  EXPECT("TRY_CAST('1e999' AS DOUBLE)", 0, "NULL");
  EXPECT("CAST('Infinity' AS DOUBLE)", 0, "inf"); /* as C prints it */
  EXPECT_ERR("CAST(b AS INT)", 2, "out of range");
  EXPECT("TRY_CAST(b AS INT)", 2, "NULL");
  EXPECT("CAST(b AS SMALLINT)", 0, "10");
  EXPECT_ERR("CAST(300 AS TINYINT)", 0, "out of range");
  EXPECT("CAST(d AS INT)", 3, "2"); /* truncates */
  EXPECT("CAST(-2.9e0 AS INT)", 0, "-2");
  EXPECT_ERR("CAST(1e19 AS BIGINT)", 0, "out of range");
  EXPECT("CAST(d AS DECIMAL(5, 2))", 3, "2.68"); /* 2.675 HALF_UP as text */
  EXPECT("CAST('1.5' AS DOUBLE)", 0, "1.5");
  EXPECT("CAST('12.345' AS DECIMAL(5, 2))", 0, "12.35");
  EXPECT_ERR("CAST('12.3x' AS DECIMAL(5, 2))", 0, "cannot cast");
  EXPECT("CAST('true' AS BOOLEAN)", 0, "TRUE");
  EXPECT("CAST('FALSE' AS BOOLEAN)", 0, "FALSE");
  EXPECT("CAST(i AS BOOLEAN)", 0, "TRUE");
  EXPECT("CAST(flag AS INT)", 2, "0");
  EXPECT("CAST(CAST('2020-03-01 10:11:12.5' AS TIMESTAMP(3)) AS STRING)", 0,
         "2020-03-01 10:11:12.500");
  EXPECT("CAST(CAST('2020-03-01' AS TIMESTAMP(3)) AS STRING)", 0,
         "2020-03-01 00:00:00.000");
  EXPECT_ERR("CAST('2020-02-30 00:00:00' AS TIMESTAMP(3))", 0, "cannot cast");
  EXPECT("TRY_CAST('2020-13-01' AS DATE)", 0, "NULL");
  EXPECT("CAST('abcdef' AS VARCHAR(3))", 0, "abc");
  EXPECT("CAST('ab' AS CHAR(4)) || '|'", 0, "ab  |");
  EXPECT("CAST(NULL AS INT)", 0, "NULL");
  EXPECT("CAST(s AS INT)", 1, "NULL");
}

static void test_case_coalesce_if(void **state) {
  (void)state;
  EXPECT("CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' END", 0, "pos");
  EXPECT("CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' END", 3, "neg");
  EXPECT("CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' END", 1, "NULL");
  EXPECT("CASE WHEN i > 0 THEN 'pos' ELSE 'other' END", 1, "other");
  EXPECT("CASE i WHEN 1 THEN 'one' WHEN -7 THEN 'minus seven' END", 3,
         "minus seven");
  EXPECT("CASE WHEN flag THEN dc ELSE 0 END", 0, "12.34");
  EXPECT("CASE WHEN flag THEN dc ELSE 0 END", 2, "0.00");
  EXPECT("COALESCE(s, s2, 'none')", 0, "hello");
  EXPECT("COALESCE(s, s2, 'none')", 1, "none");
  EXPECT("COALESCE(i, b)", 1, "NULL");
  EXPECT("COALESCE(i, 5)", 1, "5");
  EXPECT("NULLIF(i, 1)", 0, "NULL");
  EXPECT("NULLIF(i, 1)", 3, "-7");
  EXPECT("NULLIF(i, 1)", 1, "NULL");
  EXPECT("IF(i > 0, 'y', 'n')", 0, "y");
  EXPECT("IF(i > 0, 'y', 'n')", 1, "n");
  EXPECT("IF(i = 0, b / i, 0)", 0, "0");
  EXPECT("r.x + 1", 0, "43");
  EXPECT("r.y", 2, "");
  EXPECT("r.y || '!'", 3, "seven!");
}

static void test_compile_errors(void **state) {
  (void)state;
  EXPECT_ERR("(SELECT 1)", 0, "not supported yet: subqueries");
  EXPECT_ERR("r", 0, "not supported yet: ROW value");
  EXPECT_ERR("REGEXP(s, '(')", 0, "invalid regular expression");
}

/* sl_expr_filter over a subset of rows, and over many vectors. */
static void test_filter(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb;
  sl_expr_prog *p;
  assert_int_equal(
      compile_sql(&a, &tb, "SELECT i FROM t WHERE event_type = 'view'", 1, &p),
      SL_OK);
  sl_error err = {0};
  uint32_t sel[4] = {0, 1, 2, 3}, n = 4;
  assert_int_equal(sl_expr_filter(p, &g_buf, sel, &n, g_ctx, &err), SL_OK);
  assert_int_equal(n, 2);
  assert_int_equal(sel[0], 0);
  assert_int_equal(sel[1], 3);
  uint32_t sub[2] = {3, 2};
  n = 2;
  assert_int_equal(sl_expr_filter(p, &g_buf, sub, &n, g_ctx, &err), SL_OK);
  assert_int_equal(n, 1);
  assert_int_equal(sub[0], 3);
  tbound_done(&tb);

  /* 3000 candidates (three vectors): row indexes repeat 0..3 */
  assert_int_equal(compile_sql(&a, &tb,
                               "SELECT i FROM t WHERE i > 0 OR flag IS NULL", 1,
                               &p),
                   SL_OK);
  static uint32_t many[3000];
  for (uint32_t k = 0; k < 3000; k++)
    many[k] = k % 4;
  n = 3000;
  assert_int_equal(sl_expr_filter(p, &g_buf, many, &n, g_ctx, &err), SL_OK);
  /* rows 0 (i = 1), 1 (flag NULL), 2 (i = INT_MAX), 3 (flag NULL) */
  assert_int_equal(n, 3000);
  tbound_done(&tb);
  assert_int_equal(
      compile_sql(&a, &tb, "SELECT i FROM t WHERE i > 0 AND flag", 1, &p),
      SL_OK);
  for (uint32_t k = 0; k < 3000; k++)
    many[k] = k % 4;
  n = 3000;
  assert_int_equal(sl_expr_filter(p, &g_buf, many, &n, g_ctx, &err), SL_OK);
  assert_int_equal(n, 750);
  for (uint32_t k = 0; k < n; k++)
    assert_int_equal(many[k], 0);
  tbound_done(&tb);
  /* a runtime error aborts the call with the expression's position */
  assert_int_equal(
      compile_sql(&a, &tb, "SELECT i FROM t WHERE b + 1 > 0", 1, &p), SL_OK);
  uint32_t all[4] = {0, 1, 2, 3};
  n = 4;
  assert_int_equal(sl_expr_filter(p, &g_buf, all, &n, g_ctx, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, "integer overflow"));
  assert_int_equal(err.column, 23);
  sl_error_clear(&err);
  tbound_done(&tb);
  sl_arena_free(&a);
}

/* sl_expr_eval_into: values and null bits land in the output rows; long
 * strings are copied into the output heap; a full heap is reported and
 * leaves the heap as it was. */
static void test_eval_into(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb;
  sl_expr_prog *ps, *pi;
  assert_int_equal(compile_sql(&a, &tb, "SELECT s2 || '...' FROM t", 0, &ps),
                   SL_OK);
  tbound tb2;
  assert_int_equal(compile_sql(&a, &tb2, "SELECT 0.908 * price FROM t", 0, &pi),
                   SL_OK);
  const sl_type *types[2] = {sl_expr_type(ps), sl_expr_type(pi)};
  sl_row_layout *ol = sl_row_layout_new(&a, 2, NULL, types);
  assert_int_equal(ol->fields[1].ptype, SL_P_DEC128); /* DECIMAL(23, 3) */
  sl_buffer out;
  sl_buffer_init(&out, ol, 4096);
  for (int k = 0; k < 4; k++)
    sl_buffer_append(&out);
  uint32_t sel[4] = {2, 1, 0, 3};
  sl_error err = {0};
  assert_int_equal(
      sl_expr_eval_into(ps, &g_buf, sel, 4, &out, 0, 0, g_ctx, &err), SL_OK);
  assert_int_equal(
      sl_expr_eval_into(pi, &g_buf, sel, 4, &out, 0, 1, g_ctx, &err), SL_OK);
  const sl_str *s0 = &SL_FIELD(sl_buffer_row(&out, 0), ol, 0, sl_str);
  assert_int_equal(s0->len, 34);
  assert_memory_equal(sl_str_data(s0), "a long string over twelve bytes...",
                      34);
  /* the bytes are in out's heap, not in the scratch */
  assert_true((const uint8_t *)s0->u.ptr >= out.data &&
              (const uint8_t *)s0->u.ptr < out.data + out.cap);
  assert_true(sl_row_is_null(sl_buffer_row(&out, 1), 0));
  assert_true(sl_row_is_null(sl_buffer_row(&out, 1), 1));
  assert_false(sl_row_is_null(sl_buffer_row(&out, 2), 0));
  /* DEC128 fields are 8-byte aligned: read them with memcpy */
  __int128 d2, d3;
  memcpy(&d2, sl_buffer_row(&out, 2) + ol->fields[1].offset, sizeof d2);
  memcpy(&d3, sl_buffer_row(&out, 3) + ol->fields[1].offset, sizeof d3);
  assert_true(d2 == 90800);
  assert_true(d3 == 6356);
  const sl_str *s3 = &SL_FIELD(sl_buffer_row(&out, 3), ol, 0, sl_str);
  assert_int_equal(s3->len, 8);
  assert_memory_equal(sl_str_data(s3), "a%b_c...", 8);

  /* heap full: a buffer with room for the rows but not the strings */
  sl_buffer small;
  sl_buffer_init(&small, ol, ol->width * 4 + 64); /* ~2 strings fit */
  for (int k = 0; k < 4; k++)
    sl_buffer_append(&small);
  uint32_t many[4] = {2, 2, 2, 2};
  uint32_t before = small.heap_used;
  assert_int_equal(
      sl_expr_eval_into(ps, &g_buf, many, 4, &small, 0, 0, g_ctx, &err),
      SL_EXPR_HEAP_FULL);
  assert_int_equal(small.heap_used, before);
  /* fewer rows fit */
  small.nrows = 1;
  assert_int_equal(
      sl_expr_eval_into(ps, &g_buf, many, 1, &small, 0, 0, g_ctx, &err), SL_OK);
  assert_int_equal(small.heap_used, 34);
  sl_buffer_free(&small);
  sl_buffer_free(&out);
  tbound_done(&tb);
  tbound_done(&tb2);
  sl_arena_free(&a);
}

/* Strings computed in one vector stay valid until stored: a projection over
 * 2500 rows (three vectors) of computed long strings. */
static void test_many_vectors(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb;
  sl_expr_prog *p;
  assert_int_equal(compile_sql(&a, &tb,
                               "SELECT UPPER(s2) || CAST(i AS STRING) FROM t",
                               0, &p),
                   SL_OK);
  const sl_type *types[1] = {sl_expr_type(p)};
  sl_row_layout *ol = sl_row_layout_new(&a, 1, NULL, types);
  sl_buffer out;
  sl_buffer_init(&out, ol, 1 << 20);
  static uint32_t sel[2500];
  for (uint32_t k = 0; k < 2500; k++) {
    sel[k] = k % 2 ? 2 : 0;
    sl_buffer_append(&out);
  }
  sl_error err = {0};
  assert_int_equal(
      sl_expr_eval_into(p, &g_buf, sel, 2500, &out, 0, 0, g_ctx, &err), SL_OK);
  for (uint32_t k = 0; k < 2500; k++) {
    const sl_str *s = &SL_FIELD(sl_buffer_row(&out, k), ol, 0, sl_str);
    if (k % 2) {
      assert_int_equal(s->len, 41);
      assert_memory_equal(sl_str_data(s),
                          "A LONG STRING OVER TWELVE BYTES2147483647", 41);
    } else {
      assert_int_equal(s->len, 6);
      assert_memory_equal(sl_str_data(s), "WORLD1", 6);
    }
  }
  sl_buffer_free(&out);
  tbound_done(&tb);
  sl_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_three_valued_logic),
      cmocka_unit_test(test_comparisons),
      cmocka_unit_test(test_arithmetic_and_overflow),
      cmocka_unit_test(test_decimal),
      cmocka_unit_test(test_casts),
      cmocka_unit_test(test_case_coalesce_if),
      cmocka_unit_test(test_compile_errors),
      cmocka_unit_test(test_filter),
      cmocka_unit_test(test_eval_into),
      cmocka_unit_test(test_many_vectors),
  };
  return cmocka_run_group_tests(tests, interp_setup, interp_teardown);
}
