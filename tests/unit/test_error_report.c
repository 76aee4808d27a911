/* test_error_report.c - the shell's error messages with carets, byte for
 * byte: position prefix, the echoed source line (tabs expanded), carets
 * under the offending text (wide characters counted as two columns), file
 * names, the "Caused by" line, and errors without a position.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sluice/shell/shell.h"

static sl_error at(int line, int column, int offset, int length,
                   const char *message) {
  sl_error e = {0};
  e.code = SL_ESYNTAX;
  e.line = line;
  e.column = column;
  e.offset = offset;
  e.length = length;
  e.message = (char *)message; /* not freed: the tests own no heap here */
  return e;
}

static void expect(const char *source, int stmt_line, const sl_error *err,
                   const char *text, int first_line, const char *expected) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_error_render(&b, source, stmt_line, err, text, text ? strlen(text) : 0,
                  first_line);
  assert_string_equal(sl_strbuf_cstr(&b), expected);
  sl_strbuf_free(&b);
}

static void test_caret_mid_line(void **state) {
  (void)state;
  const char *sql = "SELECT a FROM t GROUPP BY a";
  sl_error e = at(3, 17, 16, 6, "syntax error near \"GROUPP\"");
  expect(NULL, 0, &e, sql, 3,
         "Error: line 3, column 17: syntax error near \"GROUPP\"\n"
         "  SELECT a FROM t GROUPP BY a\n"
         "                  ^^^^^^\n");
}

static void test_file_name_prefix(void **state) {
  (void)state;
  const char *sql = "SELECT a FROM t GROUPP BY a";
  sl_error e = at(3, 17, 16, 6, "syntax error near \"GROUPP\"");
  expect("examples/bad.sql", 3, &e, sql, 3,
         "Error: examples/bad.sql: line 3, column 17: syntax error near "
         "\"GROUPP\"\n"
         "  SELECT a FROM t GROUPP BY a\n"
         "                  ^^^^^^\n");
}

/* The error is on the second line of a statement that starts on line 7. */
static void test_second_line(void **state) {
  (void)state;
  const char *sql = "SELECT a\nFROM t WHERE;";
  sl_error e = at(8, 13, 21, 1, "syntax error near \";\"");
  expect(NULL, 0, &e, sql, 7,
         "Error: line 8, column 13: syntax error near \";\"\n"
         "  FROM t WHERE;\n"
         "              ^\n");
}

static void test_tabs_expanded(void **state) {
  (void)state;
  const char *sql = "SELECT\ta\tFROM\tt\tBAD";
  sl_error e = at(1, 17, 16, 3, "syntax error near \"BAD\"");
  expect(NULL, 0, &e, sql, 1,
         "Error: line 1, column 17: syntax error near \"BAD\"\n"
         "  SELECT  a       FROM    t       BAD\n"
         "                                  ^^^\n");
}

static void test_end_of_input(void **state) {
  (void)state;
  const char *sql = "SELECT a FROM";
  sl_error e = at(1, 14, 13, 0, "unexpected end of input");
  expect(NULL, 0, &e, sql, 1,
         "Error: line 1, column 14: unexpected end of input\n"
         "  SELECT a FROM\n"
         "               ^\n");
}

static void test_wide_characters(void **state) {
  (void)state;
  const char *sql = "SELECT '日本' GROUPP";
  /* '日本' is 8 bytes, 6 columns with its quotes. */
  sl_error e = at(1, 17, 16, 6, "syntax error near \"GROUPP\"");
  expect(NULL, 0, &e, sql, 1,
         "Error: line 1, column 17: syntax error near \"GROUPP\"\n"
         "  SELECT '日本' GROUPP\n"
         "                ^^^^^^\n");
}

/* The offending text runs past the end of its line: carets stop there. */
static void test_span_clipped_to_line(void **state) {
  (void)state;
  const char *sql = "SELECT 'abc\ndef";
  sl_error e = at(1, 8, 7, 8, "unterminated string");
  expect(NULL, 0, &e, sql, 1,
         "Error: line 1, column 8: unterminated string\n"
         "  SELECT 'abc\n"
         "         ^^^^\n");
}

/* Without an offset, line and column place the carets. */
static void test_position_from_line_column(void **state) {
  (void)state;
  const char *sql = "SELECT 1;\nSELECT nope";
  sl_error e = at(5, 8, -1, 4, "column 'nope' not found");
  expect(NULL, 0, &e, sql, 4,
         "Error: line 5, column 8: column 'nope' not found\n"
         "  SELECT nope\n"
         "         ^^^^\n");
}

static void test_no_position(void **state) {
  (void)state;
  sl_error e = at(0, 0, -1, 0, "table 'x' already exists");
  expect(NULL, 0, &e, "CREATE TABLE x (a INT)", 1,
         "Error: table 'x' already exists\n");
  /* In a file, the statement's line still says where. */
  expect("setup.sql", 12, &e, "CREATE TABLE x (a INT)", 12,
         "Error: setup.sql: line 12: table 'x' already exists\n");
}

static void test_cause(void **state) {
  (void)state;
  sl_error e = at(0, 0, -1, 0, "cannot open 'data.csv'");
  e.code = SL_EIO;
  e.cause = (char *)"No such file or directory";
  expect(NULL, 0, &e, NULL, 1,
         "Error: cannot open 'data.csv'\n"
         "Caused by: No such file or directory\n");
}

static void test_missing_message(void **state) {
  (void)state;
  sl_error e = at(0, 0, -1, 0, NULL);
  e.code = SL_EINTERNAL;
  sl_strbuf b = SL_STRBUF_INIT;
  sl_error_render(&b, NULL, 0, &e, NULL, 0, 1);
  /* Some text from sl_error_kind, never "(null)". */
  assert_non_null(strstr(sl_strbuf_cstr(&b), "Error: "));
  assert_null(strstr(sl_strbuf_cstr(&b), "(null)"));
  sl_strbuf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_caret_mid_line),
      cmocka_unit_test(test_file_name_prefix),
      cmocka_unit_test(test_second_line),
      cmocka_unit_test(test_tabs_expanded),
      cmocka_unit_test(test_end_of_input),
      cmocka_unit_test(test_wide_characters),
      cmocka_unit_test(test_span_clipped_to_line),
      cmocka_unit_test(test_position_from_line_column),
      cmocka_unit_test(test_no_position),
      cmocka_unit_test(test_cause),
      cmocka_unit_test(test_missing_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
