/* test_interpreter.c - the expression interpreter's C interface: filter
 * selection vectors, eval_into and the heap-full status, strings across
 * vectors, and ROW fields.  Expressions are bound from real SQL over table
 * t (interp_helpers.h).  What an expression computes (logic, arithmetic,
 * overflow, decimals, casts, functions) is specified in tests/sql/
 * (expressions/, casts/, functions/), where it runs under every
 * configuration, compiled and interpreted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <time.h>

#include "interp_helpers.h"

/* The fields of a ROW column, flattened into r.x and r.y by the layout:
 * CSV has no ROW columns, so these stay here (the scalar checks are in
 * tests/sql/expressions, casts and functions). */
static void test_row_fields(void **state) {
  (void)state;
  EXPECT("r.x + 1", 0, "43");
  EXPECT("r.y", 2, "");
  EXPECT("r.y || '!'", 3, "seven!");
  EXPECT_ERR("r", 0, "not supported yet: ROW value");
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

/* NOW() evaluated in two calls: 3 ms apart they differ unless the clock is
 * pinned, and pinned they are one instant (what a select list and the
 * JIT's interpreted subtrees rely on: CURRENT_TIMESTAMP = NOW() was once
 * FALSE where the two straddled a millisecond). */
static int64_t now_ms(sl_expr_prog *p) {
  sl_expr_value v;
  sl_error err = {0};
  assert_int_equal(sl_expr_eval_row(p, &g_buf, 0, &v, g_ctx, &err), SL_OK);
  return v.i64;
}

static void pause_3ms(void) {
  struct timespec ts = {0, 3000000};
  nanosleep(&ts, NULL);
}

static void test_clock_pinned(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb;
  sl_expr_prog *p;
  assert_int_equal(compile_sql(&a, &tb, "SELECT NOW() FROM t", 0, &p), SL_OK);
  int64_t t0 = now_ms(p);
  pause_3ms();
  assert_true(now_ms(p) > t0); /* unpinned: read anew */
  sl_expr_ctx_pin_now(g_ctx);
  int64_t t1 = now_ms(p);
  pause_3ms();
  assert_true(now_ms(p) == t1);
  sl_expr_ctx_unpin_now(g_ctx);
  pause_3ms();
  assert_true(now_ms(p) > t1);
  tbound_done(&tb);
  sl_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_row_fields),   cmocka_unit_test(test_filter),
      cmocka_unit_test(test_eval_into),    cmocka_unit_test(test_clock_pinned),
      cmocka_unit_test(test_many_vectors),
  };
  return cmocka_run_group_tests(tests, interp_setup, interp_teardown);
}
