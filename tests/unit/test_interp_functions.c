/* test_interp_functions.c - the interpreter's scalar functions, LIKE and
 * SIMILAR TO, and date/time formatting, each with its edge cases (NULLs,
 * empty and long strings, UTF-8, out-of-range indexes, no match). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "interp_helpers.h"

static void test_like(void **state) {
  (void)state;
  EXPECT("s LIKE 'he%'", 0, "TRUE");
  EXPECT("s LIKE '%lo'", 0, "TRUE");
  EXPECT("s LIKE '%ell%'", 0, "TRUE");
  EXPECT("s LIKE 'hello'", 0, "TRUE");
  EXPECT("s LIKE 'hell'", 0, "FALSE");
  EXPECT("s LIKE 'h_llo'", 0, "TRUE");
  EXPECT("s LIKE 'h_llo%'", 3, "TRUE"); /* _ is one code point (é) */
  EXPECT("s LIKE 'h__llo%'", 3, "FALSE");
  EXPECT("s LIKE '%'", 2, "TRUE");
  EXPECT("s LIKE '_'", 2, "FALSE");
  EXPECT("s LIKE '%l%o%'", 0, "TRUE");
  EXPECT("s LIKE '%x%'", 0, "FALSE");
  EXPECT("s NOT LIKE 'he%'", 0, "FALSE");
  EXPECT("s LIKE 'he%'", 1, "NULL");
  EXPECT("s2 LIKE 'a!%b!_c' ESCAPE '!'", 3, "TRUE");
  EXPECT("s2 LIKE 'a!%b!_d' ESCAPE '!'", 3, "FALSE");
  EXPECT("'a%c' LIKE 'a!%%' ESCAPE '!'", 0, "TRUE");
  EXPECT("'abc' LIKE 'a!%%' ESCAPE '!'", 0, "FALSE");
  EXPECT_ERR("s LIKE 'a!x' ESCAPE '!'", 0, "invalid escape");
  EXPECT("s LIKE s", 0, "TRUE"); /* non-constant pattern */
  EXPECT("s2 LIKE '%twelve%'", 2, "TRUE");
  EXPECT("s SIMILAR TO 'h(e|a)llo'", 0, "TRUE");
  EXPECT("s SIMILAR TO 'h%'", 0, "TRUE");
  EXPECT("s SIMILAR TO 'ell'", 0, "FALSE"); /* whole string */
  EXPECT("'a.c' SIMILAR TO 'a.c'", 0, "TRUE");
  EXPECT("'abc' SIMILAR TO 'a.c'", 0, "FALSE"); /* '.' is literal */
}

static void test_string_functions(void **state) {
  (void)state;
  EXPECT("UPPER(s)", 0, "HELLO");
  EXPECT("UPPER(s)", 3, "H\xc3\xa9LLO W\xc3\xb6RLD"); /* ASCII only */
  EXPECT("LOWER('AbC')", 0, "abc");
  EXPECT("UPPER(s)", 1, "NULL");
  EXPECT("CHAR_LENGTH(s)", 3, "11");
  EXPECT("CHARACTER_LENGTH(s)", 2, "0");
  EXPECT("CHAR_LENGTH(s2)", 2, "31");
  EXPECT("SUBSTRING(s, 2)", 0, "ello");
  EXPECT("SUBSTRING(s, 2, 3)", 0, "ell");
  EXPECT("SUBSTRING(s FROM 2 FOR 2)", 3, "\xc3\xa9l");
  EXPECT("SUBSTR(s, 0, 2)", 0, "he");
  EXPECT("SUBSTR(s, -3)", 0, "llo");
  EXPECT("SUBSTR(s, 10)", 0, "");
  EXPECT("SUBSTR(s, 2, -1)", 0, "NULL");
  EXPECT("TRIM('  ab  ')", 0, "ab");
  EXPECT("TRIM(LEADING FROM '  ab  ') || '|'", 0, "ab  |");
  EXPECT("TRIM(TRAILING FROM '  ab  ') || '|'", 0, "  ab|");
  EXPECT("TRIM(BOTH 'x' FROM 'xxabxx')", 0, "ab");
  EXPECT("TRIM(BOTH 'xy' FROM 'xyabyx')", 0, "ab");
  EXPECT("CONCAT(s, '-', s2)", 0, "hello-world");
  EXPECT("CONCAT(s, s2)", 1, "NULL");
  EXPECT("CONCAT_WS('-', s, s2, 'x')", 0, "hello-world-x");
  EXPECT("CONCAT_WS('-', s, s2, 'x')", 1, "x"); /* NULLs skipped */
  EXPECT("CONCAT_WS(s, 'a', 'b')", 1, "NULL");  /* NULL separator */
  EXPECT("s || s2", 2, "a long string over twelve bytes");
  EXPECT("s || s2", 1, "NULL");
  EXPECT("REPLACE(s2, 'long', 'short')", 2, "a short string over twelve bytes");
  EXPECT("REPLACE(s, 'l', '')", 0, "heo");
  EXPECT("REPLACE(s, '', 'x')", 0, "hello");
  EXPECT("POSITION('l' IN s)", 0, "3");
  EXPECT("POSITION('w' IN s)", 3, "7"); /* characters, not bytes */
  EXPECT("POSITION('z' IN s)", 0, "0");
  EXPECT("POSITION('' IN s)", 0, "1");
  EXPECT("LEFT(s, 2)", 0, "he");
  EXPECT("LEFT(s, 2)", 3, "h\xc3\xa9");
  EXPECT("LEFT(s, -1)", 0, "");
  EXPECT("RIGHT(s, 3)", 0, "llo");
  EXPECT("RIGHT(s, 10)", 0, "hello");
  EXPECT("LPAD(s, 8, 'xy')", 0, "xyxhello");
  EXPECT("RPAD(s, 8, 'xy')", 0, "helloxyx");
  EXPECT("LPAD(s, 2, 'x')", 0, "he");
  EXPECT("LPAD(s, -1, 'x')", 0, "NULL");
  EXPECT("RPAD(s, 7, '')", 0, "NULL");
  EXPECT("SPLIT_INDEX('a,b,,c', ',', 0)", 0, "a");
  EXPECT("SPLIT_INDEX('a,b,,c', ',', 2)", 0, "");
  EXPECT("SPLIT_INDEX('a,b,,c', ',', 3)", 0, "c");
  EXPECT("SPLIT_INDEX('a,b,,c', ',', 4)", 0, "NULL");
  EXPECT("SPLIT_INDEX('a,b,,c', ',', -1)", 0, "NULL");
  EXPECT("SPLIT_INDEX('a::b', '::', 1)", 0, "b");
  EXPECT("SPLIT_INDEX(s2, ' ', 3)", 2, "over");
  EXPECT("REGEXP_EXTRACT('foo123bar', '[0-9]+')", 0, "123");
  EXPECT("REGEXP_EXTRACT('foo123bar', '([a-z]+)([0-9]+)', 2)", 0, "123");
  EXPECT("REGEXP_EXTRACT('foo123bar', '([a-z]+)([0-9]+)', 0)", 0, "foo123");
  EXPECT("REGEXP_EXTRACT('foo123bar', '([a-z]+)([0-9]+)', 3)", 0, "NULL");
  EXPECT("REGEXP_EXTRACT('foobar', '[0-9]+')", 0, "NULL"); /* no match */
  EXPECT("REGEXP_EXTRACT(s, s2)", 1, "NULL");
  EXPECT("REGEXP_EXTRACT(s2, 'l(o+)ng', 1)", 2, "o");
  EXPECT("REGEXP_REPLACE('a1b22c', '[0-9]+', '#')", 0, "a#b#c");
  EXPECT("REGEXP_REPLACE('2020-01-02', '(\\d+)-(\\d+)-(\\d+)', '$3/$2/$1')", 0,
         "02/01/2020");
  EXPECT("REGEXP_REPLACE(s2, 'x', 'y')", 2, "a long string over twelve bytes");
  EXPECT("REGEXP(s, '^h.x')", 0, "FALSE");
  EXPECT("REGEXP(s, 'l+o$')", 0, "TRUE");
  EXPECT("REGEXP(s, '^h.llo')", 3, "TRUE"); /* . is one code point */
  EXPECT("REGEXP(s, s2)", 0, "FALSE");      /* non-constant pattern */
  EXPECT("REGEXP(s, '(')", 2,
         "ERROR: invalid regular expression: missing "
         "closing parenthesis at offset 1");
  EXPECT("REGEXP(s, CONCAT(s, '('))", 0, "NULL"); /* bad dynamic pattern */
}

static void test_numeric_functions(void **state) {
  (void)state;
  EXPECT("ABS(i)", 3, "7");
  EXPECT("ABS(d)", 2, "0.5");
  EXPECT("FLOOR(d)", 2, "-1");
  EXPECT("CEIL(d)", 0, "2");
  EXPECT("ROUND(d, 2)", 3, "2.68"); /* as Java's BigDecimal.valueOf */
  EXPECT("ROUND(d)", 0, "2");
  EXPECT("ROUND(b, -1)", 3, "0");
  EXPECT("ROUND(155, -1)", 0, "160");
  EXPECT("ROUND(-155, -1)", 0, "-160");
  EXPECT("POWER(2, 10)", 0, "1024");
  EXPECT("SQRT(16)", 0, "4");
  EXPECT("LN(EXP(1))", 0, "1");
  EXPECT("LOG10(1000)", 0, "3");
  EXPECT("SQRT(i)", 1, "NULL");
  EXPECT("HASH_CODE('hello')", 0, "99162322"); /* Java "hello".hashCode() */
  EXPECT("HASH_CODE(s)", 0, "99162322");
  EXPECT("HASH_CODE(i)", 3, "-7");
  EXPECT("HASH_CODE(b)", 2, "-2147483648");
  EXPECT("HASH_CODE(s)", 1, "NULL");
}

static void test_time_functions(void **state) {
  (void)state;
  /* row 0: ts = 2020-01-02 03:04:05.678, dt = 2020-02-29 */
  EXPECT("DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss')", 0, "2020-01-02 03:04:05");
  EXPECT("DATE_FORMAT(ts, 'yy/M/d')", 0, "20/1/2");
  EXPECT("DATE_FORMAT(ts, 'HH:mm:ss.SSS')", 0, "03:04:05.678");
  EXPECT("DATE_FORMAT(ts, 'hh a')", 3, "01 PM");
  EXPECT("DATE_FORMAT(ts, 'hh a')", 0, "03 AM");
  EXPECT("DATE_FORMAT(ts, 'EEE, MMM d')", 0, "Thu, Jan 2");
  EXPECT("DATE_FORMAT(ts, 'EEEE MMMM')", 3, "Friday December");
  EXPECT("DATE_FORMAT(ts, 'yyyy''T''HH')", 0, "2020T03");
  EXPECT("DATE_FORMAT(ts, '''at'' HH')", 0, "at 03");
  EXPECT("DATE_FORMAT(ts, 'yyyy-MM-dd')", 2, "1969-12-31");
  EXPECT("DATE_FORMAT(ts, 'yyyy')", 1, "NULL");
  EXPECT("DATE_FORMAT('2021-03-04 05:06:07', 'dd.MM.yyyy')", 0, "04.03.2021");
  EXPECT("DATE_FORMAT(ts, s)", 1, "NULL");
  EXPECT("YEAR(ts)", 0, "2020");
  EXPECT("MONTH(ts)", 3, "12");
  EXPECT("DAYOFMONTH(dt)", 0, "29");
  EXPECT("HOUR(ts)", 3, "13");
  EXPECT("MINUTE(ts)", 0, "4");
  EXPECT("SECOND(ts)", 2, "59");
  EXPECT("HOUR(ts)", 2, "23"); /* before 1970: floor, not truncation */
  EXPECT("EXTRACT(YEAR FROM dt)", 3, "1969");
  EXPECT("EXTRACT(DAY FROM ts)", 0, "2");
  EXPECT("EXTRACT(HOUR FROM INTERVAL '5' HOUR)", 0, "5");
  EXPECT("CAST(TO_TIMESTAMP('2020-05-06 07:08:09') AS STRING)", 0,
         "2020-05-06 07:08:09.000");
  EXPECT("CAST(TO_TIMESTAMP('06/05/2020 7h', 'dd/MM/yyyy H''h''') AS STRING)",
         0, "2020-05-06 07:00:00.000");
  EXPECT("TO_TIMESTAMP('garbage')", 0, "NULL");
  EXPECT("TO_TIMESTAMP('2020-02-30 00:00:00')", 0, "NULL");
  EXPECT("UNIX_TIMESTAMP('1970-01-02 00:00:00')", 0, "86400");
  EXPECT("UNIX_TIMESTAMP('1970/01/02', 'yyyy/MM/dd')", 0, "86400");
  EXPECT("UNIX_TIMESTAMP('x')", 0, "NULL");
  EXPECT("FROM_UNIXTIME(86400)", 0, "1970-01-02 00:00:00");
  EXPECT("FROM_UNIXTIME(0, 'yyyy')", 0, "1970");
  EXPECT("CAST(ts + INTERVAL '1' DAY AS STRING)", 0, "2020-01-03 03:04:05.678");
  EXPECT("CAST(ts - INTERVAL '4' SECOND AS STRING)", 0,
         "2020-01-02 03:04:01.678");
  EXPECT("CAST(ts + INTERVAL '1' MONTH AS STRING)", 3,
         "2022-01-31 13:00:00.005");
  EXPECT("CAST(dt + INTERVAL '1' YEAR AS STRING)", 0, "2021-02-28");
  EXPECT("CAST(dt + INTERVAL '2' DAY AS STRING)", 0, "2020-03-02");
  EXPECT("CAST(INTERVAL '1' HOUR * 2 AS STRING)", 0, "+0 02:00:00.000");
  EXPECT("ts + INTERVAL '1' DAY", 1, "NULL");
  /* the clock: read once per call, TIMESTAMP(3) */
  EXPECT("YEAR(PROCTIME()) >= 2024", 0, "TRUE");
  EXPECT("MOD(UNIX_TIMESTAMP(), 1) = 0", 0, "TRUE");
  EXPECT("CURRENT_TIMESTAMP = NOW()", 0, "TRUE");
  EXPECT("CAST(LOCALTIMESTAMP AS STRING) LIKE '20__-__-__ __:__:__.___'", 0,
         "TRUE");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_like),
      cmocka_unit_test(test_string_functions),
      cmocka_unit_test(test_numeric_functions),
      cmocka_unit_test(test_time_functions),
  };
  return cmocka_run_group_tests(tests, interp_setup, interp_teardown);
}
