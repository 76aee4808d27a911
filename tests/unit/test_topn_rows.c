/* test_topn_rows.c - a Top-N partition's rows in sorted chunks
 * (state/topn_rows.c), against a plain sorted array: places and ranks
 * for new rows and for equal ones, rows by rank, removals that empty
 * chunks, splits of full chunks, and the bytes held. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sluice/state/topn_rows.h"

typedef struct fixture {
  sl_arena a;
  sl_row_layout *layout; /* v BIGINT */
  sl_border desc;
  topn_order order;
  topn_rows rows;
  uint64_t bytes;
} fixture;

static void setup_fixture(fixture *fx) {
  sl_arena_init(&fx->a, 0);
  const sl_type *t = sl_type_new(&fx->a, SL_TYPE_BIGINT);
  fx->layout = sl_row_layout_new(&fx->a, 1, NULL, &t);
  fx->desc = (sl_border){.column = 0, .desc = true};
  fx->order = (topn_order){fx->layout, &fx->desc, 1};
  memset(&fx->rows, 0, sizeof fx->rows);
  fx->bytes = 0;
}

static void teardown_fixture(fixture *fx) {
  topn_rows_free(&fx->rows, &fx->bytes);
  assert_int_equal(fx->bytes, 0); /* every byte counted went back */
  sl_arena_free(&fx->a);
}

static uint8_t *sort_row(fixture *fx, int64_t v) {
  uint8_t *r = calloc(1, fx->layout->width);
  assert_non_null(r);
  SL_FIELD(r, fx->layout, 0, int64_t) = v;
  return r;
}

static int64_t value(fixture *fx, const tentry *e) {
  return SL_FIELD(e->sort, fx->layout, 0, int64_t);
}

/* Insert v after its equals; returns its rank. */
static int insert(fixture *fx, int64_t v) {
  uint8_t *r = sort_row(fx, v);
  topn_pos at = topn_rows_place(&fx->rows, &fx->order, r, true);
  topn_rows_insert(&fx->rows, at, (tentry){r, r, (size_t)fx->layout->width},
                   &fx->bytes);
  return at.rank;
}

/* Remove one v; returns its rank, or -1. */
static int take(fixture *fx, int64_t v) {
  uint8_t *r = sort_row(fx, v);
  topn_pos at = topn_rows_place(&fx->rows, &fx->order, r, false);
  free(r);
  if (at.rank >= fx->rows.n || value(fx, topn_rows_get(&fx->rows, at)) != v)
    return -1;
  tentry e = topn_rows_remove(&fx->rows, at, &fx->bytes);
  free(e.sort);
  return at.rank;
}

static int desc_cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Every rank holds the reference's value; walking by next agrees. */
static void check(fixture *fx, const int64_t *ref, int n) {
  assert_int_equal(fx->rows.n, n);
  for (int i = 0; i < n; i += 1 + n / 50)
    assert_int_equal(value(fx, topn_rows_at(&fx->rows, i)), ref[i]);
  if (n == 0)
    return;
  topn_pos p = topn_rows_place(&fx->rows, &fx->order,
                               topn_rows_at(&fx->rows, 0)->sort, false);
  assert_int_equal(p.rank, 0);
  for (int i = 0; i < n; i++) {
    assert_int_equal(p.rank, i);
    assert_int_equal(value(fx, topn_rows_get(&fx->rows, p)), ref[i]);
    p = topn_rows_next(&fx->rows, p);
  }
  topn_pos last = topn_rows_last(&fx->rows);
  assert_int_equal(last.rank, n - 1);
}

static void test_against_sorted_array(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  enum { N = 3000 };
  int64_t *ref = malloc(sizeof *ref * N);
  int n = 0;
  srand(7);
  for (int i = 0; i < N; i++) {
    int64_t v = rand() % 500; /* many equal values */
    int rank = insert(&fx, v);
    /* Its rank: after every value greater than or equal to it. */
    int expect = 0;
    while (expect < n && ref[expect] >= v)
      expect++;
    assert_int_equal(rank, expect);
    memmove(&ref[expect + 1], &ref[expect], sizeof *ref * (size_t)(n - expect));
    ref[expect] = v;
    n++;
  }
  assert_true(fx.rows.nchunks > N / TOPN_CHUNK); /* it split */
  check(&fx, ref, n);
  /* Take back two thirds, in another order. */
  for (int i = 0; i < 2 * N / 3; i++) {
    int64_t v = ref[(i * 7919) % n];
    int rank = take(&fx, v);
    int first = 0;
    while (ref[first] != v)
      first++;
    assert_int_equal(rank, first); /* the first of its equals */
    memmove(&ref[first], &ref[first + 1],
            sizeof *ref * (size_t)(n - first - 1));
    n--;
  }
  check(&fx, ref, n);
  qsort(ref, (size_t)n, sizeof *ref, desc_cmp);
  check(&fx, ref, n);
  assert_int_equal(take(&fx, 100000), -1); /* never there */
  /* Empty it: chunks go as they empty. */
  while (n > 0) {
    int64_t v = ref[--n];
    int first = n;
    while (first > 0 && ref[first - 1] == v)
      first--;
    assert_int_equal(take(&fx, v), first); /* the first of its equals */
  }
  assert_int_equal(fx.rows.nchunks, 0);
  free(ref);
  teardown_fixture(&fx);
}

static void test_small_partition(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  assert_int_equal(insert(&fx, 5), 0);
  assert_int_equal(insert(&fx, 9), 0);
  assert_int_equal(insert(&fx, 5), 2); /* after its equal */
  assert_int_equal(insert(&fx, 1), 3);
  int64_t ref[] = {9, 5, 5, 1};
  check(&fx, ref, 4);
  assert_true(fx.bytes > 0);
  assert_int_equal(fx.rows.chunks[0].cap, 4); /* grown 1, 2, 4 */
  teardown_fixture(&fx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_sorted_array),
      cmocka_unit_test(test_small_partition),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
