/* test_value_text.c - values as text (Flink's spellings) and back.
 *
 * Formatting is checked against what Flink's SQL client prints (Java's
 * Double.toString for doubles, exact scale for decimals, p fractional
 * digits for TIMESTAMP(p)); parsing against the edge cases of each type:
 * overflow by one, INT64_MIN, HALF_UP rounding of negative decimals,
 * dates before 1970 and on leap days.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sluice/row/value_text.h"

/* A one-field layout of type t in arena a, and a buffer for it. */
typedef struct one {
  sl_arena a;
  sl_row_layout *l;
  sl_buffer buf;
  uint8_t *row;
} one;

static void one_init(one *o, sl_type *t) {
  sl_arena_init(&o->a, 0);
  const sl_type *types[] = {t};
  o->l = sl_row_layout_new(&o->a, 1, NULL, types);
  sl_buffer_init(&o->buf, o->l, 4096);
  o->row = sl_buffer_append(&o->buf);
}

static void one_free(one *o) {
  sl_buffer_free(&o->buf);
  sl_arena_free(&o->a);
}

/* Parse text into a fresh field of type t and format it back. */
static char *roundtrip(sl_type_kind k, int p, int s, const char *text) {
  sl_arena ta;
  sl_arena_init(&ta, 0);
  sl_type *t = sl_type_new(&ta, k);
  t->precision = p;
  t->scale = s;
  one o;
  one_init(&o, t);
  sl_error err = {0};
  int rc = sl_value_parse(text, strlen(text), o.l, o.row, 0, &o.buf, &err);
  char *out;
  if (rc != SL_OK) {
    out = malloc(strlen(err.message) + 8);
    sprintf(out, "ERR %s", err.message);
    sl_error_clear(&err);
  } else {
    sl_strbuf b = SL_STRBUF_INIT;
    sl_value_append(&b, o.l, o.row, 0);
    out = strdup(sl_strbuf_cstr(&b));
    sl_strbuf_free(&b);
  }
  one_free(&o);
  sl_arena_free(&ta);
  return out;
}

#define RT(kind, p, s, text, expect)                                           \
  do {                                                                         \
    char *got_ = roundtrip(kind, p, s, text);                                  \
    assert_string_equal(got_, expect);                                         \
    free(got_);                                                                \
  } while (0)

static char *fmt_double(double v, bool is_float) {
  static char out[SL_VALUE_TEXT_MAX];
  sl_type t = {.kind = is_float ? SL_TYPE_FLOAT : SL_TYPE_DOUBLE};
  float f = (float)v;
  sl_value_format_scalar(out, &t, is_float ? SL_P_F32 : SL_P_F64,
                         is_float ? (const void *)&f : (const void *)&v);
  return out;
}

static void test_double_format(void **state) {
  (void)state;
  assert_string_equal(fmt_double(1.0, false), "1.0");
  assert_string_equal(fmt_double(0.5, false), "0.5");
  assert_string_equal(fmt_double(1e7, false), "1.0E7");
  assert_string_equal(fmt_double(9999999.0, false), "9999999.0");
  assert_string_equal(fmt_double(1.2345e-5, false), "1.2345E-5");
  assert_string_equal(fmt_double(0.001, false), "0.001");
  assert_string_equal(fmt_double(0.0001, false), "1.0E-4");
  assert_string_equal(fmt_double(0.1 + 0.2, false), "0.30000000000000004");
  assert_string_equal(fmt_double(-123.25, false), "-123.25");
  assert_string_equal(fmt_double(100.0, false), "100.0");
  assert_string_equal(fmt_double(1e21, false), "1.0E21");
  assert_string_equal(fmt_double(1.7976931348623157e308, false),
                      "1.7976931348623157E308");
  assert_string_equal(fmt_double(4.9e-324, false), "4.9E-324");
  assert_string_equal(fmt_double(-0.0, false), "-0.0");
  assert_string_equal(fmt_double(0.0, false), "0.0");
  assert_string_equal(fmt_double(1.0 / 0.0, false), "Infinity");
  assert_string_equal(fmt_double(-1.0 / 0.0, false), "-Infinity");
  assert_string_equal(fmt_double(0.0 / 0.0, false), "NaN");
  assert_string_equal(fmt_double(12345678.9, false), "1.23456789E7");
  /* Float.toString: shortest digits of the float, not of the double. */
  assert_string_equal(fmt_double(0.1, true), "0.1");
  assert_string_equal(fmt_double(3.4028235e38, true), "3.4028235E38");
  assert_string_equal(fmt_double(1.1, true), "1.1");
}

static void test_decimal(void **state) {
  (void)state;
  RT(SL_TYPE_DECIMAL, 23, 3, "908", "908.000");
  RT(SL_TYPE_DECIMAL, 10, 2, "-0.05", "-0.05");
  RT(SL_TYPE_DECIMAL, 10, 2, "0.05", "0.05");
  RT(SL_TYPE_DECIMAL, 10, 0, "42", "42");
  /* HALF_UP rounds away from zero, for negatives too. */
  RT(SL_TYPE_DECIMAL, 5, 1, "-0.45", "-0.5");
  RT(SL_TYPE_DECIMAL, 5, 1, "-0.44", "-0.4");
  RT(SL_TYPE_DECIMAL, 5, 1, "0.25", "0.3");
  RT(SL_TYPE_DECIMAL, 5, 2, "0.0004", "0.00");
  RT(SL_TYPE_DECIMAL, 5, 2, "0.005", "0.01");
  RT(SL_TYPE_DECIMAL, 10, 2, "1.5E3", "1500.00");
  RT(SL_TYPE_DECIMAL, 10, 2, "  12.5 ", "12.50");
  RT(SL_TYPE_DECIMAL, 4, 2, "99.99", "99.99");
  RT(SL_TYPE_DECIMAL, 4, 2, "99.995",
     "ERR expected a DECIMAL(4, 2) (too many digits before the point), got "
     "'99.995'");
  RT(SL_TYPE_DECIMAL, 4, 2, "100",
     "ERR expected a DECIMAL(4, 2) (too many digits before the point), got "
     "'100'");
  RT(SL_TYPE_DECIMAL, 4, 2, "1.2.3",
     "ERR expected a DECIMAL(4, 2), got "
     "'1.2.3'");
  RT(SL_TYPE_DECIMAL, 4, 2, ".", "ERR expected a DECIMAL(4, 2), got '.'");
  /* 128-bit decimals. */
  RT(SL_TYPE_DECIMAL, 38, 2, "-123456789012345678901234567890123.45",
     "-123456789012345678901234567890123.45");
  RT(SL_TYPE_DECIMAL, 38, 0, "99999999999999999999999999999999999999",
     "99999999999999999999999999999999999999");
  RT(SL_TYPE_DECIMAL, 38, 0, "100000000000000000000000000000000000000",
     "ERR expected a DECIMAL(38, 0) (too many digits before the point), got "
     "'100000000000000000000000000000000000000'");
}

static void test_integers(void **state) {
  (void)state;
  RT(SL_TYPE_BIGINT, 0, 0, "-9223372036854775808", "-9223372036854775808");
  RT(SL_TYPE_BIGINT, 0, 0, "9223372036854775807", "9223372036854775807");
  RT(SL_TYPE_BIGINT, 0, 0, "9223372036854775808",
     "ERR expected a BIGINT (out of range: -9223372036854775808 to "
     "9223372036854775807), got '9223372036854775808'");
  RT(SL_TYPE_BIGINT, 0, 0, "-9223372036854775809",
     "ERR expected a BIGINT (out of range: -9223372036854775808 to "
     "9223372036854775807), got '-9223372036854775809'");
  RT(SL_TYPE_BIGINT, 0, 0, "abc", "ERR expected a BIGINT, got 'abc'");
  RT(SL_TYPE_BIGINT, 0, 0, "", "ERR expected a BIGINT, got ''");
  RT(SL_TYPE_BIGINT, 0, 0, "-", "ERR expected a BIGINT, got '-'");
  RT(SL_TYPE_BIGINT, 0, 0, " +17 ", "17");
  RT(SL_TYPE_INT, 0, 0, "2147483648",
     "ERR expected an INT (out of range: -2147483648 to 2147483647), got "
     "'2147483648'");
  RT(SL_TYPE_INT, 0, 0, "-2147483648", "-2147483648");
  RT(SL_TYPE_TINYINT, 0, 0, "127", "127");
  RT(SL_TYPE_TINYINT, 0, 0, "128",
     "ERR expected a TINYINT (out of range: -128 to 127), got '128'");
  RT(SL_TYPE_SMALLINT, 0, 0, "-32768", "-32768");
  RT(SL_TYPE_BOOLEAN, 0, 0, "TrUe", "TRUE");
  RT(SL_TYPE_BOOLEAN, 0, 0, "false", "FALSE");
  RT(SL_TYPE_BOOLEAN, 0, 0, "yes",
     "ERR expected a BOOLEAN (true or false), got 'yes'");
  RT(SL_TYPE_DOUBLE, 0, 0, "1e7", "1.0E7");
  RT(SL_TYPE_DOUBLE, 0, 0, "-2.5", "-2.5");
  RT(SL_TYPE_DOUBLE, 0, 0, "NaN", "NaN");
  RT(SL_TYPE_DOUBLE, 0, 0, "-Infinity", "-Infinity");
  RT(SL_TYPE_DOUBLE, 0, 0, "1.5x", "ERR expected a DOUBLE, got '1.5x'");
  /* Too large is out of range, not an infinity; too small is 0. */
  RT(SL_TYPE_DOUBLE, 0, 0, "1e999",
     "ERR expected a DOUBLE (out of range: beyond +-1.8E308), got '1e999'");
  RT(SL_TYPE_DOUBLE, 0, 0, "-1e999",
     "ERR expected a DOUBLE (out of range: beyond +-1.8E308), got '-1e999'");
  RT(SL_TYPE_DOUBLE, 0, 0, "1e-999", "0.0");
  RT(SL_TYPE_FLOAT, 0, 0, "1e39",
     "ERR expected a FLOAT (out of range: beyond +-3.4E38), got '1e39'");
  RT(SL_TYPE_FLOAT, 0, 0, "Infinity", "Infinity");
  RT(SL_TYPE_FLOAT, 0, 0, "0.1", "0.1");
}

static void test_temporal(void **state) {
  (void)state;
  RT(SL_TYPE_TIMESTAMP, 3, 0, "2015-07-15 00:00:00", "2015-07-15 00:00:00.000");
  RT(SL_TYPE_TIMESTAMP, 3, 0, "2015-07-15T08:05:01.5",
     "2015-07-15 08:05:01.500");
  RT(SL_TYPE_TIMESTAMP, 0, 0, "2015-07-15 08:05:01.999", "2015-07-15 08:05:01");
  RT(SL_TYPE_TIMESTAMP, 6, 0, "2015-07-15 08:05:01.123456789Z",
     "2015-07-15 08:05:01.123456");
  RT(SL_TYPE_TIMESTAMP, 9, 0, "2015-07-15 08:05:01.123456789",
     "2015-07-15 08:05:01.123456000");
  /* Before 1970: floor division, not truncation. */
  RT(SL_TYPE_TIMESTAMP, 3, 0, "1969-12-31 23:59:59.999",
     "1969-12-31 23:59:59.999");
  RT(SL_TYPE_TIMESTAMP, 3, 0, "1900-01-01 00:00:00.001",
     "1900-01-01 00:00:00.001");
  RT(SL_TYPE_TIMESTAMP, 3, 0, "2024-02-29 12:00:00", "2024-02-29 12:00:00.000");
  RT(SL_TYPE_TIMESTAMP, 3, 0, "2023-02-29 12:00:00",
     "ERR expected a TIMESTAMP(3) (yyyy-MM-dd HH:mm:ss[.fff]), got "
     "'2023-02-29 12:00:00'");
  RT(SL_TYPE_TIMESTAMP, 3, 0, "2015-07-15 24:00:00",
     "ERR expected a TIMESTAMP(3) (yyyy-MM-dd HH:mm:ss[.fff]), got "
     "'2015-07-15 24:00:00'");
  RT(SL_TYPE_TIMESTAMP, 3, 0, "2015-07-15", "2015-07-15 00:00:00.000");
  RT(SL_TYPE_DATE, 0, 0, "2000-02-29", "2000-02-29");
  RT(SL_TYPE_DATE, 0, 0, "1900-02-29",
     "ERR expected a DATE (yyyy-MM-dd), got '1900-02-29'");
  RT(SL_TYPE_DATE, 0, 0, "1969-12-31", "1969-12-31");
  RT(SL_TYPE_TIME, 0, 0, "23:59:59.999", "23:59:59");
  RT(SL_TYPE_TIME, 3, 0, "23:59:59.5", "23:59:59.500");
  RT(SL_TYPE_INTERVAL_DAY_TIME, 0, 0, "10000", "+0 00:00:10.000");
  RT(SL_TYPE_INTERVAL_DAY_TIME, 0, 0, "-1 02:03:04.005", "-1 02:03:04.005");
  RT(SL_TYPE_INTERVAL_YEAR_MONTH, 0, 0, "18", "+1-06");
  RT(SL_TYPE_INTERVAL_YEAR_MONTH, 0, 0, "-2-03", "-2-03");

  /* Every day across four centuries survives days -> civil -> days. */
  for (int64_t d = -146097 * 2; d < 146097 * 2; d += 7) {
    int64_t y;
    int m, dd;
    sl_civil_from_days(d, &y, &m, &dd);
    assert_int_equal(sl_days_from_civil(y, m, dd), d);
  }
  /* INT64_MIN microseconds formats without overflow. */
  sl_type t = {.kind = SL_TYPE_TIMESTAMP, .precision = 6};
  int64_t v = INT64_MIN;
  char out[SL_VALUE_TEXT_MAX];
  sl_value_format_scalar(out, &t, SL_P_TS, &v);
  assert_string_equal(out, "-290308-12-21 19:59:05.224192");
}

static void test_strings(void **state) {
  (void)state;
  RT(SL_TYPE_VARCHAR, -1, 0, "  spaces kept ", "  spaces kept ");
  RT(SL_TYPE_VARCHAR, -1, 0, "a string longer than twelve bytes",
     "a string longer than twelve bytes");
  /* Long strings live in the buffer's heap, short ones inline. */
  sl_arena a;
  sl_arena_init(&a, 0);
  one o;
  one_init(&o, sl_type_varchar(&a, -1));
  const char *text = "0123456789abcdefghij";
  assert_int_equal(sl_value_parse(text, 20, o.l, o.row, 0, &o.buf, NULL),
                   SL_OK);
  assert_int_equal(o.buf.heap_used, 20);
  assert_false(sl_row_is_null(o.row, 0));
  one_free(&o);
  sl_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_double_format), cmocka_unit_test(test_decimal),
      cmocka_unit_test(test_integers),      cmocka_unit_test(test_temporal),
      cmocka_unit_test(test_strings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
