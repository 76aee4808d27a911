/* test_topn_select.c - a window Top-N's heaps choose exactly what a stable
 * sort of every row does (exec/stage_topn.c): the same rows, in the
 * same order, the first `limit` of each partition.  Random rows with many
 * ties (10 partitions, 6 order values), each limit from 0 to more than a
 * partition has; the reference is sorted_result_sort, then a cut per
 * partition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "exec/stage_int.h"

#define ROWS 5000

static void test_same_as_a_stable_sort(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *types[3];
  for (int i = 0; i < 3; i++)
    types[i] = sl_type_new(&a, SL_TYPE_BIGINT);
  /* (partition, order value, input position) */
  const sl_row_layout *kl = sl_row_layout_new(&a, 3, NULL, types);
  sl_border order[2] = {{0, false, 0, {0}}, {1, true, 0, {0}}};
  uint8_t *data = calloc(ROWS, kl->width);
  const uint8_t **rows = malloc(sizeof *rows * ROWS);
  const uint8_t **ref = malloc(sizeof *ref * ROWS);
  assert_non_null(data);
  srand(29);
  for (int i = 0; i < ROWS; i++) {
    uint8_t *r = data + (size_t)i * kl->width;
    SL_FIELD(r, kl, 0, int64_t) = rand() % 10;
    SL_FIELD(r, kl, 1, int64_t) = rand() % 6;
    SL_FIELD(r, kl, 2, int64_t) = i;
  }
  const int64_t limits[] = {0, 1, 3, 100, 499, ROWS};
  for (size_t l = 0; l < sizeof limits / sizeof *limits; l++) {
    for (int i = 0; i < ROWS; i++)
      rows[i] = ref[i] = data + (size_t)i * kl->width;
    sorted_result_sort(kl, order, 2, ref, ROWS);
    size_t want = 0;
    int64_t part = -1, number = 0;
    for (int i = 0; i < ROWS; i++) {
      int64_t p = SL_FIELD(ref[i], kl, 0, int64_t);
      number = p == part ? number + 1 : 1;
      part = p;
      if (number <= limits[l])
        ref[want++] = ref[i];
    }
    const int pfields[1] = {0};
    size_t got =
        stage_topn_select(kl, order, pfields, 1, 2, rows, ROWS, limits[l]);
    assert_int_equal(got, want);
    for (size_t i = 0; i < got; i++)
      assert_ptr_equal(rows[i], ref[i]);
  }
  free(data);
  free(rows);
  free(ref);
  sl_arena_free(&a);
}

/* No partition columns: one partition. */
static void test_one_partition(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *types[2] = {sl_type_new(&a, SL_TYPE_BIGINT),
                             sl_type_new(&a, SL_TYPE_BIGINT)};
  const sl_row_layout *kl = sl_row_layout_new(&a, 2, NULL, types);
  sl_border order[1] = {{0, false, 0, {0}}};
  int64_t values[] = {5, 3, 9, 3, 1, 7};
  uint8_t *data = calloc(6, kl->width);
  const uint8_t *rows[6];
  for (int i = 0; i < 6; i++) {
    uint8_t *r = data + (size_t)i * kl->width;
    SL_FIELD(r, kl, 0, int64_t) = values[i];
    SL_FIELD(r, kl, 1, int64_t) = i;
    rows[i] = r;
  }
  /* the three lowest: 1 (row 4), 3 (row 1), 3 (row 3: after row 1) */
  assert_int_equal(stage_topn_select(kl, order, NULL, 0, 1, rows, 6, 3), 3);
  assert_ptr_equal(rows[0], data + 4 * kl->width);
  assert_ptr_equal(rows[1], data + 1 * kl->width);
  assert_ptr_equal(rows[2], data + 3 * kl->width);
  free(data);
  sl_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_as_a_stable_sort),
      cmocka_unit_test(test_one_partition),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
