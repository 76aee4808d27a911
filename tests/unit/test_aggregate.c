/* test_aggregate.c - partial aggregate states and group tables
 * (state/aggregate.c, state/group_table.c): updates, NULLs, DISTINCT,
 * overflow, and the CRDT property the late-merge strategy relies on: the
 * merge of per-worker partials equals one state fed every row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "sluice/state/aggregate.h"
#include "sluice/state/memory_account.h"

/* DECIMAL(38) fields are 8-byte aligned in rows: read them by copy. */
static __int128 load_i128(const uint8_t *p) {
  __int128 v;
  memcpy(&v, p, sizeof v);
  return v;
}

enum { F_KEY, F_PRICE, F_NAME, F_DEC, F_X, NF };

typedef struct fixture {
  sl_arena a;
  sl_row_layout *
      in; /* key BIGINT, price BIGINT, name STRING, d DECIMAL(10,2), x DOUBLE */
  sl_row_layout *key; /* name STRING */
  sl_row_layout *out;
  sl_agg_set set;
} fixture;

enum {
  A_COUNT_STAR,
  A_SUM,
  A_AVG,
  A_MIN_NAME,
  A_MAX_DEC,
  A_COUNT_DISTINCT,
  A_SUM_DEC,
  A_AVG_X,
  A_COUNT_FILTERED,
  NA
};

static void setup_fixture(fixture *fx) {
  sl_arena_init(&fx->a, 0);
  const sl_type *types[NF] = {
      sl_type_new(&fx->a, SL_TYPE_BIGINT), sl_type_new(&fx->a, SL_TYPE_BIGINT),
      sl_type_varchar(&fx->a, -1), sl_type_decimal(&fx->a, 10, 2),
      sl_type_new(&fx->a, SL_TYPE_DOUBLE)};
  fx->in = sl_row_layout_new(&fx->a, NF, NULL, types);
  const sl_type *kt[1] = {types[F_NAME]};
  fx->key = sl_row_layout_new(&fx->a, 1, NULL, kt);
  sl_type *count = sl_type_new(&fx->a, SL_TYPE_BIGINT);
  const sl_type *ot[NA] = {count,
                           types[F_PRICE],
                           types[F_PRICE],
                           types[F_NAME],
                           types[F_DEC],
                           count,
                           sl_type_decimal(&fx->a, 38, 2),
                           types[F_X],
                           count};
  fx->out = sl_row_layout_new(&fx->a, NA, NULL, ot);
  /* A BOOLEAN filter column is not in this input: filtered COUNT uses the
   * key column's NULL-ness trick below instead; filter_field must be a
   * BOOLEAN, so give it its own layout in test_filter. */
  sl_agg_desc d[NA] = {
      {.op = SL_AGG_COUNT_STAR,
       .in_field = -1,
       .filter_field = -1,
       .out_type = ot[0]},
      {.op = SL_AGG_SUM,
       .in_field = F_PRICE,
       .filter_field = -1,
       .out_type = ot[1]},
      {.op = SL_AGG_AVG,
       .in_field = F_PRICE,
       .filter_field = -1,
       .out_type = ot[2]},
      {.op = SL_AGG_MIN,
       .in_field = F_NAME,
       .filter_field = -1,
       .out_type = ot[3]},
      {.op = SL_AGG_MAX,
       .in_field = F_DEC,
       .filter_field = -1,
       .out_type = ot[4]},
      {.op = SL_AGG_COUNT,
       .distinct = true,
       .in_field = F_PRICE,
       .filter_field = -1,
       .out_type = ot[5]},
      {.op = SL_AGG_SUM,
       .in_field = F_DEC,
       .filter_field = -1,
       .out_type = ot[6]},
      {.op = SL_AGG_AVG,
       .in_field = F_X,
       .filter_field = -1,
       .out_type = ot[7]},
      {.op = SL_AGG_COUNT,
       .in_field = F_KEY,
       .filter_field = -1,
       .out_type = ot[8]},
  };
  sl_error err = {0};
  assert_int_equal(sl_agg_set_init(&fx->a, &fx->set, NA, d, fx->in, &err),
                   SL_OK);
}

static const char *NAMES[] = {"alpha", "a-rather-long-group-name-one",
                              "a-rather-long-group-name-two", "z"};

/* Row i: key = i % 7 (NULL every 11th), price = i * 3 % 100, name from
 * NAMES, d = i cents, x = i / 4. */
static void fill_row(fixture *fx, sl_buffer *b, int i) {
  uint8_t *row = sl_buffer_append(b);
  assert_non_null(row);
  SL_FIELD(row, fx->in, F_KEY, int64_t) = i % 7;
  sl_row_set_null(row, F_KEY, i % 11 == 0);
  SL_FIELD(row, fx->in, F_PRICE, int64_t) = (i * 3) % 100;
  const char *n = NAMES[i % 4];
  assert_true(sl_buffer_put_str(b, &SL_FIELD(row, fx->in, F_NAME, sl_str), n,
                                (uint32_t)strlen(n)));
  SL_FIELD(row, fx->in, F_DEC, int64_t) = i;
  SL_FIELD(row, fx->in, F_X, double) = i / 4.0;
}

/* Feed rows [from, to) into table t, grouped by name. */
static void feed(fixture *fx, sl_group_table *t, int from, int to) {
  sl_buffer b;
  sl_buffer_init(&b, fx->in, 1 << 16);
  uint8_t key[64];
  sl_error err = {0};
  for (int i = from; i < to; i++) {
    sl_buffer_clear(&b);
    fill_row(fx, &b, i);
    const uint8_t *row = sl_buffer_row(&b, 0);
    memset(key, 0, sizeof key);
    memcpy(key + fx->key->fields[0].offset, row + fx->in->fields[F_NAME].offset,
           sizeof(sl_str));
    uint8_t *st = sl_group_table_upsert(t, sl_key_hash(fx->key, key), key);
    assert_int_equal(sl_agg_update(&fx->set, st, row, &t->arena, &err), SL_OK);
  }
  sl_buffer_free(&b); /* the table must not point into it any more */
}

/* Finalize every group of t into text lines "name|v1|v2|..." sorted. */
static void dump(fixture *fx, const sl_group_table *t, char *out, size_t cap) {
  char lines[16][512];
  int n = 0;
  sl_buffer ob;
  sl_buffer_init(&ob, fx->out, 1 << 16);
  sl_error err = {0};
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!sl_group_table_slot_used(t, i))
      continue;
    sl_buffer_clear(&ob);
    uint8_t *row = sl_buffer_append(&ob);
    for (int k = 0; k < NA; k++)
      assert_int_equal(sl_agg_finalize(&fx->set, k, sl_group_table_states(t, i),
                                       &ob, row, k, &err),
                       SL_OK);
    const sl_str *name =
        (const sl_str *)(sl_group_table_key(t, i) + fx->key->fields[0].offset);
    const sl_str *mn = &SL_FIELD(row, fx->out, A_MIN_NAME, sl_str);
    snprintf(lines[n++], sizeof lines[0],
             "%.*s|%lld|%lld|%lld|%.*s|%lld|%lld|%lld|%.3f|%lld",
             (int)name->len, sl_str_data(name),
             (long long)SL_FIELD(row, fx->out, A_COUNT_STAR, int64_t),
             (long long)SL_FIELD(row, fx->out, A_SUM, int64_t),
             (long long)SL_FIELD(row, fx->out, A_AVG, int64_t), (int)mn->len,
             sl_str_data(mn),
             (long long)SL_FIELD(row, fx->out, A_MAX_DEC, int64_t),
             (long long)SL_FIELD(row, fx->out, A_COUNT_DISTINCT, int64_t),
             (long long)load_i128(row + fx->out->fields[A_SUM_DEC].offset),
             SL_FIELD(row, fx->out, A_AVG_X, double),
             (long long)SL_FIELD(row, fx->out, A_COUNT_FILTERED, int64_t));
  }
  /* sort for a stable comparison */
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (strcmp(lines[i], lines[j]) > 0) {
        char tmp[sizeof lines[0]];
        memcpy(tmp, lines[i], sizeof tmp);
        memcpy(lines[i], lines[j], sizeof tmp);
        memcpy(lines[j], tmp, sizeof tmp);
      }
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    strncat(out, lines[i], cap - strlen(out) - 2);
    strcat(out, "\n");
  }
  sl_buffer_free(&ob);
}

static void test_single_table_values(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  sl_group_table t;
  sl_group_table_init(&t, fx.key, &fx.set, 4);
  feed(&fx, &t, 0, 8);
  assert_int_equal(t.count, 4);
  char out[4096];
  dump(&fx, &t, out, sizeof out);
  /* Rows 0..7: name i%4; price 0,3,6,9,12,15,18,21; dec = i; x = i/4;
   * key NULL for i = 0.  Group "alpha" = rows 0, 4: count 2, sum 12, avg 6,
   * min "alpha", max dec 4, distinct prices {0,12} = 2, sum dec 4, avg x
   * (0 + 1) / 2 = 0.5, count(key) = 1 (row 0's key is NULL). */
  assert_string_equal(out, "a-rather-long-group-name-one|2|18|9|a-rather-long-"
                           "group-name-one|5|2|6|0.750|2\n"
                           "a-rather-long-group-name-two|2|24|12|a-rather-long-"
                           "group-name-two|6|2|8|1.000|2\n"
                           "alpha|2|12|6|alpha|4|2|4|0.500|1\n"
                           "z|2|30|15|z|7|2|10|1.250|2\n");
  sl_group_table_free(&t);
  sl_arena_free(&fx.a);
}

static void test_merge_equals_single(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  /* One table fed everything vs. three "workers" fed interleaved shares
   * and merged into an empty table, in two different orders. */
  sl_group_table all, w[3], m1, m2;
  sl_group_table_init(&all, fx.key, &fx.set, 4);
  feed(&fx, &all, 0, 3000);
  for (int k = 0; k < 3; k++)
    sl_group_table_init(&w[k], fx.key, &fx.set, 4);
  for (int i = 0; i < 3000; i++)
    feed(&fx, &w[i % 3], i, i + 1);
  sl_group_table_init(&m1, fx.key, &fx.set, 4);
  sl_group_table_init(&m2, fx.key, &fx.set, 4);
  sl_error err = {0};
  for (int k = 0; k < 3; k++)
    assert_int_equal(sl_group_table_merge(&m1, &w[k], &err), SL_OK);
  for (int k = 2; k >= 0; k--)
    assert_int_equal(sl_group_table_merge(&m2, &w[k], &err), SL_OK);
  char a[4096], b[4096], c[4096];
  dump(&fx, &all, a, sizeof a);
  for (int k = 0; k < 3; k++)
    sl_group_table_free(&w[k]); /* merged states must not point into them */
  dump(&fx, &m1, b, sizeof b);
  dump(&fx, &m2, c, sizeof c);
  assert_string_equal(a, b);
  assert_string_equal(a, c);
  assert_true(strstr(a, "alpha|750|") != NULL); /* 3000 / 4 rows each */
  sl_group_table_free(&all);
  sl_group_table_free(&m1);
  sl_group_table_free(&m2);
  sl_arena_free(&fx.a);
}

static void test_sum_overflow_is_error(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *t[1] = {sl_type_new(&a, SL_TYPE_BIGINT)};
  sl_row_layout *in = sl_row_layout_new(&a, 1, NULL, t);
  sl_agg_desc d = {
      .op = SL_AGG_SUM, .in_field = 0, .filter_field = -1, .out_type = t[0]};
  sl_agg_set set;
  sl_error err = {0};
  assert_int_equal(sl_agg_set_init(&a, &set, 1, &d, in, &err), SL_OK);
  uint8_t st[64], row[16] = {0};
  sl_agg_state_init(&set, st);
  SL_FIELD(row, in, 0, int64_t) = INT64_MAX;
  assert_int_equal(sl_agg_update(&set, st, row, &a, &err), SL_OK);
  SL_FIELD(row, in, 0, int64_t) = 1;
  assert_int_equal(sl_agg_update(&set, st, row, &a, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, "integer overflow in SUM"));
  sl_error_clear(&err);
  sl_arena_free(&a);
}

static void test_filter_and_empty(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *t[2] = {sl_type_new(&a, SL_TYPE_BIGINT),
                         sl_type_new(&a, SL_TYPE_BOOLEAN)};
  sl_row_layout *in = sl_row_layout_new(&a, 2, NULL, t);
  const sl_type *ot[2] = {t[0], t[0]};
  sl_row_layout *out = sl_row_layout_new(&a, 2, NULL, ot);
  sl_agg_desc d[2] = {
      {.op = SL_AGG_COUNT_STAR,
       .in_field = -1,
       .filter_field = 1,
       .out_type = t[0]},
      {.op = SL_AGG_MAX, .in_field = 0, .filter_field = 1, .out_type = t[0]}};
  sl_agg_set set;
  sl_error err = {0};
  assert_int_equal(sl_agg_set_init(&a, &set, 2, d, in, &err), SL_OK);
  uint8_t st[64];
  sl_agg_state_init(&set, st);
  sl_buffer ob;
  sl_buffer_init(&ob, out, 4096);
  uint8_t *r = sl_buffer_append(&ob);
  /* No row passed the filter: COUNT 0, MAX NULL. */
  assert_int_equal(sl_agg_finalize(&set, 0, st, &ob, r, 0, &err), SL_OK);
  assert_int_equal(sl_agg_finalize(&set, 1, st, &ob, r, 1, &err), SL_OK);
  assert_int_equal(SL_FIELD(r, out, 0, int64_t), 0);
  assert_true(sl_row_is_null(r, 1));
  uint8_t row[24] = {0};
  for (int i = 0; i < 10; i++) {
    SL_FIELD(row, in, 0, int64_t) = i;
    SL_FIELD(row, in, 1, uint8_t) = (i % 2) == 0; /* FILTER (WHERE even) */
    sl_row_set_null(row, 1, i == 8);              /* NULL filter drops */
    assert_int_equal(sl_agg_update(&set, st, row, &a, &err), SL_OK);
  }
  r = sl_buffer_append(&ob);
  sl_agg_finalize(&set, 0, st, &ob, r, 0, &err);
  sl_agg_finalize(&set, 1, st, &ob, r, 1, &err);
  assert_int_equal(SL_FIELD(r, out, 0, int64_t), 4); /* 0, 2, 4, 6 */
  assert_int_equal(SL_FIELD(r, out, 1, int64_t), 6);
  assert_false(sl_row_is_null(r, 1));
  sl_buffer_free(&ob);
  sl_arena_free(&a);
}

/* COUNT(*) per BIGINT key: the key layout and aggregate set of the growth
 * tests, in arena a (the caller frees it). */
static void count_by_bigint(sl_arena *a, sl_row_layout **key, sl_agg_set *set) {
  sl_arena_init(a, 0);
  const sl_type *t[1] = {sl_type_new(a, SL_TYPE_BIGINT)};
  *key = sl_row_layout_new(a, 1, NULL, t);
  sl_agg_desc d = {.op = SL_AGG_COUNT_STAR,
                   .in_field = -1,
                   .filter_field = -1,
                   .out_type = t[0]};
  sl_error err = {0};
  assert_int_equal(sl_agg_set_init(a, set, 1, &d, *key, &err), SL_OK);
}

static void test_table_growth(void **state) {
  (void)state;
  sl_arena a;
  sl_row_layout *key;
  sl_agg_set set;
  sl_error err = {0};
  count_by_bigint(&a, &key, &set);
  sl_group_table g;
  sl_group_table_init(&g, key, &set, 1);
  uint8_t k[16] = {0};
  for (int round = 0; round < 3; round++)
    for (int64_t i = 0; i < 100000; i++) {
      SL_FIELD(k, key, 0, int64_t) = i * 7919;
      uint8_t *st = sl_group_table_upsert(&g, sl_key_hash(key, k), k);
      sl_agg_update(&set, st, k, &g.arena, &err);
    }
  assert_int_equal(g.count, 100000);
  int64_t total = 0;
  for (uint32_t i = 0; i < g.cap; i++)
    if (sl_group_table_slot_used(&g, i))
      total += *(int64_t *)sl_group_table_states(&g, i);
  assert_int_equal(total, 300000);
  assert_true(sl_group_table_bytes(&g) >= 100000u * 16);
  sl_group_table_free(&g);
  sl_arena_free(&a);
}

/* A table whose memory account has no room to double holds its growth
 * past 3/4 full, says at 15/16 that the next new group would double it
 * regardless (sl_group_table_growth_over_budget: its holder stops there),
 * and never allocates the doubled slots while the account is full. */
static void test_growth_over_budget(void **state) {
  (void)state;
  sl_arena a;
  sl_row_layout *key;
  sl_agg_set set;
  count_by_bigint(&a, &key, &set);
  sl_group_table g;
  sl_group_table_init(&g, key, &set, 1024);
  sl_memory_account acct;
  /* Room for the slots it has, not for twice as many more. */
  sl_memory_account_init(&acct, (uint64_t)g.cap * g.entry_width * 2);
  uint64_t charged = 0;
  sl_memory_charge(&acct, &charged, (uint64_t)g.cap * g.entry_width);
  g.budget = &acct;
  uint32_t cap = g.cap;
  uint8_t k[16] = {0};
  int64_t i = 0;
  while (!sl_group_table_growth_over_budget(&g)) {
    assert_true(i < (int64_t)cap); /* it says so before the table is full */
    SL_FIELD(k, key, 0, int64_t) = i++ * 7919;
    sl_group_table_upsert(&g, sl_key_hash(key, k), k);
  }
  assert_int_equal(g.cap, cap); /* held: never doubled */
  assert_true(g.growth_held);
  assert_true((uint64_t)g.count * 16 >= (uint64_t)cap * 15 - 16);
  /* With room again it no longer asks its holder to stop. */
  sl_memory_charge(&acct, &charged, 0);
  assert_false(sl_group_table_growth_over_budget(&g));
  sl_group_table_free(&g);
  sl_memory_account_close(&acct);
  sl_arena_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_single_table_values),
      cmocka_unit_test(test_merge_equals_single),
      cmocka_unit_test(test_sum_overflow_is_error),
      cmocka_unit_test(test_filter_and_empty),
      cmocka_unit_test(test_table_growth),
      cmocka_unit_test(test_growth_over_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
