/* test_common.c - arena, strbuf, error and type utilities (common/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"
#include "sluice/common/types.h"

static void test_arena(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 256);
  char *p[100];
  for (int i = 0; i < 100; i++) {
    p[i] = sl_arena_zalloc(&a, 24);
    assert_int_equal((uintptr_t)p[i] % 16, 0);
    memset(p[i], i, 24);
  }
  for (int i = 0; i < 100; i++)
    assert_int_equal((unsigned char)p[i][23], i);
  /* A request larger than the block size still works. */
  char *big = sl_arena_alloc(&a, 10000);
  memset(big, 'x', 10000);
  assert_string_equal(sl_arena_printf(&a, "%d-%s", 7, "x"), "7-x");
  assert_string_equal(sl_arena_strndup(&a, "abcdef", 3), "abc");
  assert_true(a.total >= 100 * 24 + 10000);
  sl_arena_free(&a);
}

static void test_strbuf(void **state) {
  (void)state;
  sl_strbuf b = SL_STRBUF_INIT;
  assert_string_equal(sl_strbuf_cstr(&b), "");
  for (int i = 0; i < 1000; i++)
    sl_strbuf_printf(&b, "%d,", i % 10);
  assert_int_equal(b.len, 2000);
  sl_strbuf_reset(&b);
  sl_strbuf_indent(&b, 3);
  sl_strbuf_appendc(&b, 'x');
  assert_string_equal(sl_strbuf_cstr(&b), "   x");
  char *s = sl_strbuf_detach(&b);
  assert_string_equal(s, "   x");
  assert_null(b.data);
  free(s);
}

static void test_error(void **state) {
  (void)state;
  sl_error err = {0};
  assert_int_equal(sl_error_set_at(&err, SL_ESYNTAX, 3, 17, 40, 6,
                                   "syntax error near \"%s\"", "GROUPP"),
                   SL_ESYNTAX);
  assert_string_equal(err.message, "syntax error near \"GROUPP\"");
  assert_int_equal(err.line, 3);
  assert_int_equal(err.column, 17);
  sl_error_set_cause(&err, "No such file");
  sl_error moved = {0};
  sl_error_move(&moved, &err);
  assert_null(err.message);
  assert_string_equal(moved.cause, "No such file");
  assert_string_equal(sl_error_kind(moved.code), "syntax error");
  sl_error_clear(&moved);
  assert_int_equal(moved.code, SL_OK);
}

static void test_types(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_type *row = sl_type_new(&a, SL_TYPE_ROW);
  row->nfields = 2;
  row->fields = SL_ANEW_N(&a, sl_type_field, 2);
  row->fields[0].name = "id";
  row->fields[0].type = sl_type_new(&a, SL_TYPE_BIGINT);
  row->fields[1].name = "dateTime";
  row->fields[1].type = sl_type_timestamp(&a, 3);
  assert_string_equal(sl_type_name(&a, row),
                      "ROW<`id` BIGINT, `dateTime` TIMESTAMP(3)>");
  sl_type *copy = sl_type_copy(&a, row);
  assert_true(sl_type_equal(row, copy));
  copy->fields[1].type->precision = 6;
  assert_false(sl_type_equal(row, copy));
  assert_int_equal(sl_type_find_field(row, "datetime"), 1);
  assert_int_equal(sl_type_find_field(row, "nope"), -1);
  assert_string_equal(sl_type_name(&a, sl_type_decimal(&a, 23, 3)),
                      "DECIMAL(23, 3)");
  assert_string_equal(sl_type_name(&a, sl_type_varchar(&a, -1)), "STRING");
  sl_type *ts = sl_type_timestamp(&a, 3);
  ts->time_attr = SL_TIME_ROWTIME;
  assert_string_equal(sl_type_name(&a, ts), "TIMESTAMP(3) *ROWTIME*");
  assert_true(sl_type_is_numeric(sl_type_decimal(&a, 10, 2)));
  assert_false(sl_type_is_numeric(ts));
  sl_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arena),
      cmocka_unit_test(test_strbuf),
      cmocka_unit_test(test_error),
      cmocka_unit_test(test_types),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
