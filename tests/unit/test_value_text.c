/* test_value_text.c - values as text: what SQL cannot reach.
 *
 * How values print (Flink's spellings) and read back from CSV fields is
 * specified in tests/sql/io/value_text.test, under every configuration.
 * Here: the parser's error messages for each type (overflow by one, bad
 * syntax, impossible dates; through SQL each would need a CSV file of
 * its own, as the first bad field stops the query), intervals as text,
 * days <-> civil dates over four centuries, INT64_MIN microseconds, and
 * where a long string's bytes are kept.
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

static void test_decimal(void **state) {
  (void)state;
  /* 99.995 rounds HALF_UP to 100.00: too many digits */
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
  RT(SL_TYPE_DECIMAL, 38, 0, "100000000000000000000000000000000000000",
     "ERR expected a DECIMAL(38, 0) (too many digits before the point), got "
     "'100000000000000000000000000000000000000'");
}

static void test_integers(void **state) {
  (void)state;
  RT(SL_TYPE_BIGINT, 0, 0, "9223372036854775808",
     "ERR expected a BIGINT (out of range: -9223372036854775808 to "
     "9223372036854775807), got '9223372036854775808'");
  RT(SL_TYPE_BIGINT, 0, 0, "-9223372036854775809",
     "ERR expected a BIGINT (out of range: -9223372036854775808 to "
     "9223372036854775807), got '-9223372036854775809'");
  RT(SL_TYPE_BIGINT, 0, 0, "abc", "ERR expected a BIGINT, got 'abc'");
  RT(SL_TYPE_BIGINT, 0, 0, "", "ERR expected a BIGINT, got ''");
  RT(SL_TYPE_BIGINT, 0, 0, "-", "ERR expected a BIGINT, got '-'");
  RT(SL_TYPE_INT, 0, 0, "2147483648",
     "ERR expected an INT (out of range: -2147483648 to 2147483647), got "
     "'2147483648'");
  RT(SL_TYPE_TINYINT, 0, 0, "128",
     "ERR expected a TINYINT (out of range: -128 to 127), got '128'");
  RT(SL_TYPE_BOOLEAN, 0, 0, "yes",
     "ERR expected a BOOLEAN (true or false), got 'yes'");
  RT(SL_TYPE_DOUBLE, 0, 0, "1.5x", "ERR expected a DOUBLE, got '1.5x'");
  /* Too large is out of range, not an infinity. */
  RT(SL_TYPE_DOUBLE, 0, 0, "1e999",
     "ERR expected a DOUBLE (out of range: beyond +-1.8E308), got '1e999'");
  RT(SL_TYPE_DOUBLE, 0, 0, "-1e999",
     "ERR expected a DOUBLE (out of range: beyond +-1.8E308), got '-1e999'");
  RT(SL_TYPE_FLOAT, 0, 0, "1e39",
     "ERR expected a FLOAT (out of range: beyond +-3.4E38), got '1e39'");
}

static void test_temporal(void **state) {
  (void)state;
  RT(SL_TYPE_TIMESTAMP, 3, 0, "2023-02-29 12:00:00",
     "ERR expected a TIMESTAMP(3) (yyyy-MM-dd HH:mm:ss[.fff]), got "
     "'2023-02-29 12:00:00'");
  RT(SL_TYPE_TIMESTAMP, 3, 0, "2015-07-15 24:00:00",
     "ERR expected a TIMESTAMP(3) (yyyy-MM-dd HH:mm:ss[.fff]), got "
     "'2015-07-15 24:00:00'");
  RT(SL_TYPE_DATE, 0, 0, "1900-02-29",
     "ERR expected a DATE (yyyy-MM-dd), got '1900-02-29'");
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

/* Numbers, dates and times are formatted digit by digit (no printf): the
 * integers against printf itself over extremes and a spread of values, the
 * rest against texts worked out by hand. */
static void test_format_digits(void **state) {
  (void)state;
  char out[SL_VALUE_TEXT_MAX], want[64];
  sl_type big = {.kind = SL_TYPE_BIGINT};
  int64_t vals[] = {0,
                    1,
                    -1,
                    9,
                    10,
                    -10,
                    99,
                    100,
                    123456789,
                    -987654321,
                    INT64_MAX,
                    INT64_MIN,
                    INT64_MIN + 1,
                    1000000000000000000};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    int n = sl_value_format_scalar(out, &big, SL_P_I64, &vals[i]);
    snprintf(want, sizeof want, "%lld", (long long)vals[i]);
    assert_string_equal(out, want);
    assert_int_equal(n, (int)strlen(want));
  }
  uint64_t x = 88172645463325252ULL; /* xorshift64: values of every length */
  for (int i = 0; i < 10000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int64_t v = (int64_t)(x >> (x % 64));
    if (i % 2)
      v = -v;
    sl_value_format_scalar(out, &big, SL_P_I64, &v);
    snprintf(want, sizeof want, "%lld", (long long)v);
    assert_string_equal(out, want);
    int32_t v32 = (int32_t)v;
    sl_type in = {.kind = SL_TYPE_INT};
    sl_value_format_scalar(out, &in, SL_P_I32, &v32);
    snprintf(want, sizeof want, "%d", v32);
    assert_string_equal(out, want);
  }
  int8_t t8 = -128;
  sl_type tiny = {.kind = SL_TYPE_TINYINT};
  sl_value_format_scalar(out, &tiny, SL_P_I8, &t8);
  assert_string_equal(out, "-128");

  /* DECIMAL(38, 2) on both sides of 2^64 (64- and 128-bit digit paths) */
  sl_type dec = {.kind = SL_TYPE_DECIMAL, .precision = 38, .scale = 2};
  __int128 d = (__int128)UINT64_MAX;
  sl_value_format_scalar(out, &dec, SL_P_DEC128, &d);
  assert_string_equal(out, "184467440737095516.15");
  d += 1;
  sl_value_format_scalar(out, &dec, SL_P_DEC128, &d);
  assert_string_equal(out, "184467440737095516.16");
  d = -(__int128)5;
  sl_value_format_scalar(out, &dec, SL_P_DEC128, &d);
  assert_string_equal(out, "-0.05");
  /* 10^20: the low 19 digits all zeros; 10^38 - 1: the largest DECIMAL(38) */
  d = (__int128)10000000000ULL * 10000000000ULL;
  sl_value_format_scalar(out, &dec, SL_P_DEC128, &d);
  assert_string_equal(out, "1000000000000000000.00");
  d = (__int128)10000000000000000000ULL * 10000000000000000000ULL - 1;
  sl_value_format_scalar(out, &dec, SL_P_DEC128, &d);
  assert_string_equal(out, "999999999999999999999999999999999999.99");
  d = -d;
  sl_value_format_scalar(out, &dec, SL_P_DEC128, &d);
  assert_string_equal(out, "-999999999999999999999999999999999999.99");
  int64_t d64 = -1234567;
  sl_type dec3 = {.kind = SL_TYPE_DECIMAL, .precision = 10, .scale = 3};
  sl_value_format_scalar(out, &dec3, SL_P_DEC64, &d64);
  assert_string_equal(out, "-1234.567");

  /* dates at the ends of four digits and past them */
  assert_int_equal(sl_format_date(out, 0), 10);
  assert_string_equal(out, "1970-01-01");
  sl_format_date(out, sl_days_from_civil(0, 1, 1));
  assert_string_equal(out, "0000-01-01");
  sl_format_date(out, sl_days_from_civil(9999, 12, 31));
  assert_string_equal(out, "9999-12-31");
  sl_format_date(out, sl_days_from_civil(10000, 1, 1));
  assert_string_equal(out, "+10000-01-01");
  sl_format_date(out, sl_days_from_civil(-1, 2, 3));
  assert_string_equal(out, "-0001-02-03");
  /* 2015-07-15 09:05:03.000042 at precisions 0, 3, 6 and 9 */
  sl_type ts = {.kind = SL_TYPE_TIMESTAMP, .precision = 0};
  int64_t us =
      (sl_days_from_civil(2015, 7, 15) * 86400 + 9 * 3600 + 5 * 60 + 3) *
          1000000 +
      42;
  const char *at[] = {"2015-07-15 09:05:03", "2015-07-15 09:05:03.000",
                      "2015-07-15 09:05:03.000042",
                      "2015-07-15 09:05:03.000042000"};
  for (int p = 0; p < 4; p++) {
    ts.precision = 3 * p;
    int n = sl_value_format_scalar(out, &ts, SL_P_TS, &us);
    assert_string_equal(out, at[p]);
    assert_int_equal(n, (int)strlen(at[p]));
  }
  /* a second before the epoch */
  us = -1000000;
  ts.precision = 3;
  sl_value_format_scalar(out, &ts, SL_P_TS, &us);
  assert_string_equal(out, "1969-12-31 23:59:59.000");
}

static void test_strings(void **state) {
  (void)state;
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
      cmocka_unit_test(test_decimal),  cmocka_unit_test(test_integers),
      cmocka_unit_test(test_temporal), cmocka_unit_test(test_format_digits),
      cmocka_unit_test(test_strings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
