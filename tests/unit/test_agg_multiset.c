/* test_agg_multiset.c - MIN, MAX and DISTINCT aggregates that take rows
 * back (state/agg_multiset.c): the value after its maximum is taken
 * back, duplicates counted, strings, FILTER and NULLs ignored, a group
 * emptied or removed (state TTL), and a retraction of a value never added
 * refused (or, lenient, ignored). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "sluice/state/agg_multiset.h"

enum { F_GROUP, F_PRICE, F_NAME, F_KEEP, NF };
enum { A_MIN, A_MAX, A_COUNT_DISTINCT, A_SUM_DISTINCT, A_MAX_NAME, A_SUM, NA };

typedef struct fixture {
  sl_arena a;
  sl_row_layout *in;  /* g BIGINT, price BIGINT, name STRING, keep BOOLEAN */
  sl_row_layout *key; /* g BIGINT */
  sl_row_layout *out; /* the aggregates' results */
  sl_agg_set set;
  agg_multisets *m;
  sl_buffer rows, results;
} fixture;

static void setup_fixture(fixture *fx) {
  sl_arena_init(&fx->a, 0);
  const sl_type *big = sl_type_new(&fx->a, SL_TYPE_BIGINT);
  const sl_type *str = sl_type_varchar(&fx->a, -1);
  const sl_type *types[NF] = {big, big, str,
                              sl_type_new(&fx->a, SL_TYPE_BOOLEAN)};
  fx->in = sl_row_layout_new(&fx->a, NF, NULL, types);
  fx->key = sl_row_layout_new(&fx->a, 1, NULL, &big);
  const sl_type *ot[NA] = {big, big, big, big, str, big};
  fx->out = sl_row_layout_new(&fx->a, NA, NULL, ot);
  sl_agg_desc d[NA] = {
      {.op = SL_AGG_MIN, .in_field = F_PRICE, .filter_field = -1},
      {.op = SL_AGG_MAX, .in_field = F_PRICE, .filter_field = F_KEEP},
      {.op = SL_AGG_COUNT,
       .distinct = true,
       .in_field = F_PRICE,
       .filter_field = -1},
      {.op = SL_AGG_SUM,
       .distinct = true,
       .in_field = F_PRICE,
       .filter_field = -1},
      {.op = SL_AGG_MAX, .in_field = F_NAME, .filter_field = -1},
      {.op = SL_AGG_SUM, .in_field = F_PRICE, .filter_field = -1},
  };
  for (int i = 0; i < NA; i++)
    d[i].out_type = ot[i];
  sl_error err = {0};
  assert_int_equal(sl_agg_set_init(&fx->a, &fx->set, NA, d, fx->in, &err),
                   SL_OK);
  fx->m = agg_multisets_new(&fx->a, &fx->set, fx->key);
  assert_non_null(fx->m);
  sl_buffer_init(&fx->rows, fx->in, 4096);
  sl_buffer_init(&fx->results, fx->out, 4096);
}

static void teardown_fixture(fixture *fx) {
  agg_multisets_free(fx->m);
  sl_buffer_free(&fx->rows);
  sl_buffer_free(&fx->results);
  sl_arena_free(&fx->a);
}

/* One input row; price < 0 is NULL. */
static const uint8_t *row(fixture *fx, int64_t g, int64_t price,
                          const char *name, bool keep) {
  sl_buffer_clear(&fx->rows);
  uint8_t *r = sl_buffer_append(&fx->rows);
  SL_FIELD(r, fx->in, F_GROUP, int64_t) = g;
  if (price < 0)
    sl_row_set_null(r, F_PRICE, true);
  else
    SL_FIELD(r, fx->in, F_PRICE, int64_t) = price;
  sl_buffer_put_str(&fx->rows, &SL_FIELD(r, fx->in, F_NAME, sl_str), name,
                    (uint32_t)strlen(name));
  SL_FIELD(r, fx->in, F_KEEP, bool) = keep;
  return r;
}

static void feed(fixture *fx, int64_t g, int64_t price, const char *name,
                 bool keep, bool adds) {
  uint8_t key[16] = {0};
  SL_FIELD(key, fx->key, 0, int64_t) = g;
  sl_error err = {0};
  int rc =
      agg_multisets_update(fx->m, sl_key_hash(fx->key, key), key,
                           row(fx, g, price, name, keep), adds, false, &err);
  assert_int_equal(rc, SL_OK);
}

/* The group's results into a fresh row of fx->results. */
static const uint8_t *results(fixture *fx, int64_t g) {
  uint8_t key[16] = {0};
  SL_FIELD(key, fx->key, 0, int64_t) = g;
  sl_buffer_clear(&fx->results);
  uint8_t *out = sl_buffer_append(&fx->results);
  sl_error err = {0};
  for (int i = 0; i < NA; i++) {
    if (!agg_multisets_has(fx->m, i))
      continue;
    assert_int_equal(agg_multisets_finalize(fx->m, i, sl_key_hash(fx->key, key),
                                            key, &fx->results, out, i, &err),
                     SL_OK);
  }
  return out;
}

static int64_t num(fixture *fx, const uint8_t *r, int i) {
  return sl_row_is_null(r, i) ? -1 : SL_FIELD(r, fx->out, i, int64_t);
}

static void test_which_aggregates(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  assert_true(agg_multisets_has(fx.m, A_MIN));
  assert_true(agg_multisets_has(fx.m, A_COUNT_DISTINCT));
  assert_true(agg_multisets_has(fx.m, A_MAX_NAME));
  assert_false(agg_multisets_has(fx.m, A_SUM)); /* its state takes back */
  /* The stage's states hold a COUNT(*) in their place. */
  sl_agg_set states;
  sl_error err = {0};
  assert_int_equal(agg_multisets_states(fx.m, &fx.a, &fx.set, &states, &err),
                   SL_OK);
  assert_int_equal(states.aggs[A_MIN].op, SL_AGG_COUNT_STAR);
  assert_int_equal(states.aggs[A_SUM].op, SL_AGG_SUM);
  assert_true(sl_agg_can_retract(&states));
  assert_false(sl_agg_can_retract(&fx.set));
  teardown_fixture(&fx);
}

static void test_max_taken_back_gives_way(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  feed(&fx, 1, 10, "ann", true, true);
  feed(&fx, 1, 30, "zoe-with-a-long-name", true, true);
  feed(&fx, 1, 30, "bob", true, true); /* 30 twice */
  feed(&fx, 1, 20, "cat", true, true);
  const uint8_t *r = results(&fx, 1);
  assert_int_equal(num(&fx, r, A_MIN), 10);
  assert_int_equal(num(&fx, r, A_MAX), 30);
  assert_int_equal(num(&fx, r, A_COUNT_DISTINCT), 3);
  assert_int_equal(num(&fx, r, A_SUM_DISTINCT), 60);
  const sl_str *name = &SL_FIELD(r, fx.out, A_MAX_NAME, sl_str);
  assert_int_equal(name->len, strlen("zoe-with-a-long-name"));
  assert_memory_equal(sl_str_data(name), "zoe-with-a-long-name", name->len);
  /* One 30 back: still 30; both back: 20. */
  feed(&fx, 1, 30, "zoe-with-a-long-name", true, false);
  r = results(&fx, 1);
  assert_int_equal(num(&fx, r, A_MAX), 30);
  assert_int_equal(num(&fx, r, A_COUNT_DISTINCT), 3);
  name = &SL_FIELD(r, fx.out, A_MAX_NAME, sl_str);
  assert_memory_equal(sl_str_data(name), "cat", 3);
  feed(&fx, 1, 30, "bob", true, false);
  r = results(&fx, 1);
  assert_int_equal(num(&fx, r, A_MAX), 20);
  assert_int_equal(num(&fx, r, A_COUNT_DISTINCT), 2);
  assert_int_equal(num(&fx, r, A_SUM_DISTINCT), 30);
  /* The minimum back: the next one up. */
  feed(&fx, 1, 10, "ann", true, false);
  r = results(&fx, 1);
  assert_int_equal(num(&fx, r, A_MIN), 20);
  teardown_fixture(&fx);
}

static void test_filter_nulls_and_empty(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  feed(&fx, 2, 50, "x", false, true); /* MAX's FILTER says no */
  feed(&fx, 2, -1, "y", true, true);  /* NULL price: ignored */
  const uint8_t *r = results(&fx, 2);
  assert_int_equal(num(&fx, r, A_MIN), 50);
  assert_int_equal(num(&fx, r, A_MAX), -1); /* NULL */
  feed(&fx, 2, 50, "x", false, false);
  feed(&fx, 2, -1, "y", true, false);
  r = results(&fx, 2);
  assert_int_equal(num(&fx, r, A_MIN), -1);
  assert_int_equal(num(&fx, r, A_COUNT_DISTINCT), 0);
  assert_true(sl_row_is_null(r, A_MAX_NAME));
  /* A group never seen: NULL and 0 too. */
  r = results(&fx, 99);
  assert_int_equal(num(&fx, r, A_MAX), -1);
  assert_int_equal(num(&fx, r, A_COUNT_DISTINCT), 0);
  teardown_fixture(&fx);
}

static void test_retraction_never_added(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  feed(&fx, 3, 5, "a", true, true);
  uint8_t key[16] = {0};
  SL_FIELD(key, fx.key, 0, int64_t) = 3;
  sl_error err = {0};
  int rc = agg_multisets_update(fx.m, sl_key_hash(fx.key, key), key,
                                row(&fx, 3, 6, "a", true), false, false, &err);
  assert_int_equal(rc, SL_EINTERNAL);
  assert_non_null(strstr(err.message, "never added"));
  sl_error_clear(&err);
  SL_FIELD(key, fx.key, 0, int64_t) = 4;
  rc = agg_multisets_update(fx.m, sl_key_hash(fx.key, key), key,
                            row(&fx, 4, 6, "a", true), false, false, &err);
  assert_int_equal(rc, SL_EINTERNAL);
  sl_error_clear(&err);
  /* Lenient (under a state TTL): nothing happens. */
  rc = agg_multisets_update(fx.m, sl_key_hash(fx.key, key), key,
                            row(&fx, 4, 6, "a", true), false, true, &err);
  assert_int_equal(rc, SL_OK);
  assert_true(agg_multisets_bytes(fx.m) > 0);
  teardown_fixture(&fx);
}

static void test_group_removed(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  uint64_t empty = agg_multisets_bytes(fx.m);
  feed(&fx, 5, 7, "a-long-name-for-the-heap", true, true);
  feed(&fx, 6, 8, "b", true, true);
  uint64_t two = agg_multisets_bytes(fx.m);
  assert_true(two > empty);
  uint8_t key[16] = {0};
  SL_FIELD(key, fx.key, 0, int64_t) = 5;
  agg_multisets_remove(fx.m, sl_key_hash(fx.key, key), key);
  assert_true(agg_multisets_bytes(fx.m) < two);
  const uint8_t *r = results(&fx, 5);
  assert_int_equal(num(&fx, r, A_MAX), -1); /* gone */
  r = results(&fx, 6);
  assert_int_equal(num(&fx, r, A_MAX), 8); /* the other stays */
  agg_multisets_remove(fx.m, sl_key_hash(fx.key, key), key); /* twice: no-op */
  agg_multisets_remove(NULL, 0, key);
  teardown_fixture(&fx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_which_aggregates),
      cmocka_unit_test(test_max_taken_back_gives_way),
      cmocka_unit_test(test_filter_nulls_and_empty),
      cmocka_unit_test(test_retraction_never_added),
      cmocka_unit_test(test_group_removed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
