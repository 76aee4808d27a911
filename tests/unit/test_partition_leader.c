/* test_partition_leader.c - late merge at partition leaders, the pure parts
 * (cluster/partition_leader.c): the partition of a key, splitting a
 * partial state by partition (every group goes to exactly one part, the
 * right one, with its state intact), and a leader's store: merging deltas
 * equals merging whole partials, and the vector-clock rule fires a window
 * only when every node's entry has passed its end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../cluster/partition_leader.h"

/* key BIGINT; COUNT(*), MIN(key), COUNT(DISTINCT v), v = row % 7 */
typedef struct fixture {
  sl_arena a;
  sl_row_layout *in;  /* key BIGINT, v BIGINT */
  sl_row_layout *key; /* key BIGINT */
  sl_row_layout *out; /* count, min, distinct */
  sl_agg_set set;
} fixture;

static void setup_fixture(fixture *fx) {
  sl_arena_init(&fx->a, 0);
  const sl_type *t[2] = {sl_type_new(&fx->a, SL_TYPE_BIGINT),
                         sl_type_new(&fx->a, SL_TYPE_BIGINT)};
  fx->in = sl_row_layout_new(&fx->a, 2, NULL, t);
  fx->key = sl_row_layout_new(&fx->a, 1, NULL, t);
  const sl_type *ot[3] = {t[0], t[0], t[0]};
  fx->out = sl_row_layout_new(&fx->a, 3, NULL, ot);
  sl_agg_desc d[3] = {
      {.op = SL_AGG_COUNT_STAR,
       .in_field = -1,
       .filter_field = -1,
       .out_type = ot[0]},
      {.op = SL_AGG_MIN, .in_field = 0, .filter_field = -1, .out_type = ot[1]},
      {.op = SL_AGG_COUNT,
       .distinct = true,
       .in_field = 1,
       .filter_field = -1,
       .out_type = ot[2]},
  };
  sl_error err = {0};
  assert_int_equal(sl_agg_set_init(&fx->a, &fx->set, 3, d, fx->in, &err),
                   SL_OK);
}

/* Rows [from, to): key = i % keys, v = i % 7. */
static void feed(fixture *fx, sl_group_table *t, int from, int to, int keys) {
  sl_buffer b;
  sl_buffer_init(&b, fx->in, 4096);
  sl_error err = {0};
  for (int i = from; i < to; i++) {
    sl_buffer_clear(&b);
    uint8_t *row = sl_buffer_append(&b);
    SL_FIELD(row, fx->in, 0, int64_t) = i % keys;
    SL_FIELD(row, fx->in, 1, int64_t) = i % 7;
    uint8_t key[32];
    memset(key, 0, sizeof key);
    SL_FIELD(key, fx->key, 0, int64_t) = i % keys;
    uint8_t *st = sl_group_table_upsert(t, sl_key_hash(fx->key, key), key);
    assert_int_equal(sl_agg_update(&fx->set, st, row, &t->arena, &err), SL_OK);
  }
  sl_buffer_free(&b);
}

/* The finalized value of aggregate g for key k in t, or -1 if absent. */
static int64_t value_of(fixture *fx, const sl_group_table *t, int64_t k,
                        int g) {
  uint8_t key[32];
  memset(key, 0, sizeof key);
  SL_FIELD(key, fx->key, 0, int64_t) = k;
  uint64_t h = sl_key_hash(fx->key, key);
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!sl_group_table_slot_used(t, i) ||
        sl_key_hash(fx->key, sl_group_table_key(t, i)) != h)
      continue;
    sl_buffer ob;
    sl_buffer_init(&ob, fx->out, 4096);
    uint8_t *row = sl_buffer_append(&ob);
    sl_error err = {0};
    assert_int_equal(sl_agg_finalize(&fx->set, g, sl_group_table_states(t, i),
                                     &ob, row, g, &err),
                     SL_OK);
    int64_t v = SL_FIELD(row, fx->out, g, int64_t);
    sl_buffer_free(&ob);
    return v;
  }
  return -1;
}

static void test_partition_range_and_spread(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  for (int n = 1; n <= 5; n++) {
    int hits[5] = {0};
    for (int64_t k = 0; k < 5000; k++) {
      uint8_t key[32];
      memset(key, 0, sizeof key);
      SL_FIELD(key, fx.key, 0, int64_t) = k;
      int p = sl_leader_partition(sl_key_hash(fx.key, key), n);
      assert_true(p >= 0 && p < n);
      hits[p]++;
    }
    /* Every leader gets a fair share of 5000 keys (none below half). */
    for (int p = 0; p < n; p++)
      assert_true(hits[p] > 5000 / n / 2);
  }
  assert_int_equal(sl_leader_partition(UINT64_MAX, 3), 2);
  assert_int_equal(sl_leader_partition(0, 3), 0);
  sl_arena_free(&fx.a);
}

static void test_split_is_a_partition(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  enum { N = 3, KEYS = 500 };
  sl_group_table t;
  sl_group_table_init(&t, fx.key, &fx.set, 4);
  feed(&fx, &t, 0, 4000, KEYS);
  sl_strbuf parts[N] = {SL_STRBUF_INIT, SL_STRBUF_INIT, SL_STRBUF_INIT};
  uint32_t groups[N];
  sl_leader_split(&t, N, 0, NULL, parts, groups);
  sl_group_table got[N];
  uint32_t total = 0;
  sl_error err = {0};
  for (int p = 0; p < N; p++) {
    sl_group_table_init(&got[p], fx.key, &fx.set, 4);
    assert_true(parts[p].len > 0);
    assert_int_equal(sl_group_table_decode_merge(&got[p],
                                                 (const uint8_t *)parts[p].data,
                                                 parts[p].len, &err),
                     SL_OK);
    assert_int_equal(got[p].count, groups[p]);
    total += groups[p];
  }
  assert_int_equal(total, KEYS);
  for (int64_t k = 0; k < KEYS; k++) {
    uint8_t key[32];
    memset(key, 0, sizeof key);
    SL_FIELD(key, fx.key, 0, int64_t) = k;
    int owner = sl_leader_partition(sl_key_hash(fx.key, key), N);
    for (int p = 0; p < N; p++) {
      /* In its leader's part with its state intact, and nowhere else. */
      for (int g = 0; g < 3; g++)
        assert_int_equal(value_of(&fx, &got[p], k, g),
                         p == owner ? value_of(&fx, &t, k, g) : -1);
    }
  }
  for (int p = 0; p < N; p++) {
    sl_group_table_free(&got[p]);
    sl_strbuf_free(&parts[p]);
  }
  sl_group_table_free(&t);
  sl_arena_free(&fx.a);
}

/* A join co-partitioned on part of the key: the split by key fields puts
 * each group where the hash of those fields says, and that hash of a row
 * of another layout with the same values (the other join side's rows,
 * which the coordinator routes) is the same. */
static void test_split_by_join_key(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  enum { N = 3, KEYS = 300 };
  sl_group_table t;
  sl_group_table_init(&t, fx.key, &fx.set, 4);
  feed(&fx, &t, 0, 2000, KEYS);
  sl_strbuf parts[N] = {SL_STRBUF_INIT, SL_STRBUF_INIT, SL_STRBUF_INIT};
  uint32_t groups[N];
  const int fields[1] = {0};
  sl_leader_split(&t, N, 1, fields, parts, groups);
  sl_group_table got[N];
  sl_error err = {0};
  for (int p = 0; p < N; p++) {
    sl_group_table_init(&got[p], fx.key, &fx.set, 4);
    assert_int_equal(sl_group_table_decode_merge(&got[p],
                                                 (const uint8_t *)parts[p].data,
                                                 parts[p].len, &err),
                     SL_OK);
  }
  /* The other side's rows: (name STRING, n INT, key BIGINT). */
  const sl_type *ot[3] = {sl_type_new(&fx.a, SL_TYPE_VARCHAR),
                          sl_type_new(&fx.a, SL_TYPE_INT),
                          sl_type_new(&fx.a, SL_TYPE_BIGINT)};
  sl_row_layout *other = sl_row_layout_new(&fx.a, 3, NULL, ot);
  const int other_fields[1] = {2};
  int moved = 0;
  for (int64_t k = 0; k < KEYS; k++) {
    uint8_t key[32], row[64];
    memset(key, 0, sizeof key);
    memset(row, 0, sizeof row);
    SL_FIELD(key, fx.key, 0, int64_t) = k;
    SL_FIELD(row, other, 2, int64_t) = k;
    SL_FIELD(row, other, 1, int32_t) = (int32_t)(k * 7);
    int owner = sl_leader_partition(sl_fields_hash(fx.key, key, 1, fields), N);
    assert_int_equal(
        owner,
        sl_leader_partition(sl_fields_hash(other, row, 1, other_fields), N));
    /* A NULL-free key hashes as the whole key does. */
    moved += owner != sl_leader_partition(sl_key_hash(fx.key, key), N);
    for (int p = 0; p < N; p++)
      assert_int_equal(value_of(&fx, &got[p], k, 0),
                       p == owner ? value_of(&fx, &t, k, 0) : -1);
  }
  assert_int_equal(moved, 0);
  /* Every leader gets some (the hash spreads). */
  for (int p = 0; p < N; p++)
    assert_true(groups[p] > KEYS / N / 2);
  for (int p = 0; p < N; p++) {
    sl_group_table_free(&got[p]);
    sl_strbuf_free(&parts[p]);
  }
  sl_group_table_free(&t);
  sl_arena_free(&fx.a);
}

/* Feed rows into a fresh table and merge its wire form into the store. */
static void ship(fixture *fx, sl_leader_store *s, int64_t start, int64_t end,
                 int from, int to, int keys) {
  sl_group_table t;
  sl_group_table_init(&t, fx->key, &fx->set, 4);
  feed(fx, &t, from, to, keys);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_group_table_encode(&t, &b);
  sl_error err = {0};
  assert_int_equal(sl_leader_store_merge(s, start, end, (const uint8_t *)b.data,
                                         b.len, &err),
                   SL_OK);
  sl_strbuf_free(&b);
  sl_group_table_free(&t);
}

static void test_deltas_merge_to_the_whole(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  sl_leader_store s;
  sl_leader_store_init(&s, 2, 1, fx.key, &fx.set, NULL);
  /* Node 0's rows 0..999 in three epochs, node 1's 1000..1999 in two. */
  ship(&fx, &s, 0, 10, 0, 300, 40);
  ship(&fx, &s, 0, 10, 1000, 1700, 40);
  ship(&fx, &s, 0, 10, 300, 301, 40);
  ship(&fx, &s, 0, 10, 301, 1000, 40);
  ship(&fx, &s, 0, 10, 1700, 2000, 40);
  sl_leader_store_advance(&s, 0, INT64_MAX);
  sl_leader_store_advance(&s, 1, INT64_MAX);
  sl_leader_window *w = sl_leader_store_take(&s);
  assert_non_null(w);
  sl_group_table whole;
  sl_group_table_init(&whole, fx.key, &fx.set, 4);
  feed(&fx, &whole, 0, 2000, 40);
  assert_int_equal(w->table->count, 40);
  for (int64_t k = 0; k < 40; k++)
    for (int g = 0; g < 3; g++)
      assert_int_equal(value_of(&fx, w->table, k, g),
                       value_of(&fx, &whole, k, g));
  assert_int_equal(value_of(&fx, w->table, 7, 0), 50);
  assert_int_equal(value_of(&fx, w->table, 7, 2), 7); /* 7 + 40j mod 7 */
  sl_leader_window_free(w);
  sl_group_table_free(&whole);
  assert_true(sl_leader_store_finished(&s));
  sl_leader_store_free(&s);
  sl_arena_free(&fx.a);
}

static void test_vector_clock_rule(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  sl_leader_store s;
  /* Three nodes; windows [0,10) and [10,20); unit 1: [0,10) is done at
   * watermark 9. */
  sl_leader_store_init(&s, 3, 1, fx.key, &fx.set, NULL);
  ship(&fx, &s, 10, 20, 0, 10, 3);
  ship(&fx, &s, 0, 10, 0, 10, 3);
  assert_null(sl_leader_store_take(&s)); /* no entry yet */
  sl_leader_store_advance(&s, 0, 100);
  sl_leader_store_advance(&s, 1, 9);
  assert_null(sl_leader_store_take(&s)); /* node 2 has said nothing */
  sl_leader_store_advance(&s, 2, 8);
  assert_null(sl_leader_store_take(&s)); /* node 2 not past 9 yet */
  sl_leader_store_advance(&s, 2, 5);     /* an entry never goes down */
  sl_leader_store_advance(&s, 2, 9);
  sl_leader_window *w = sl_leader_store_take(&s);
  assert_non_null(w);
  assert_int_equal(w->end, 10);
  sl_leader_window_free(w);
  assert_null(sl_leader_store_take(&s)); /* [10,20) waits for 19 */
  /* A part of a window that has fired is refused. */
  sl_group_table t;
  sl_group_table_init(&t, fx.key, &fx.set, 4);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_group_table_encode(&t, &b);
  sl_error err = {0};
  assert_int_equal(
      sl_leader_store_merge(&s, 0, 10, (const uint8_t *)b.data, b.len, &err),
      SL_EINTERNAL);
  sl_error_clear(&err);
  sl_strbuf_free(&b);
  sl_group_table_free(&t);
  sl_leader_store_advance(&s, 0, INT64_MAX);
  sl_leader_store_advance(&s, 1, 19);
  sl_leader_store_advance(&s, 2, 30);
  assert_false(sl_leader_store_finished(&s));
  w = sl_leader_store_take(&s);
  assert_non_null(w);
  assert_int_equal(w->end, 20);
  sl_leader_window_free(w);
  assert_false(sl_leader_store_finished(&s)); /* entries not all +inf */
  sl_leader_store_advance(&s, 1, INT64_MAX);
  sl_leader_store_advance(&s, 2, INT64_MAX);
  assert_true(sl_leader_store_finished(&s));
  sl_leader_store_free(&s);
  sl_arena_free(&fx.a);
}

static void test_global_window_waits_for_everyone(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  sl_leader_store s;
  sl_leader_store_init(&s, 2, 0, fx.key, &fx.set, NULL);
  ship(&fx, &s, INT64_MIN, INT64_MAX, 0, 10, 3);
  sl_leader_store_advance(&s, 0, INT64_MAX);
  sl_leader_store_advance(&s, 1, INT64_MAX - 1);
  assert_null(sl_leader_store_take(&s));
  sl_leader_store_advance(&s, 1, INT64_MAX);
  sl_leader_window *w = sl_leader_store_take(&s);
  assert_non_null(w);
  assert_int_equal(w->table->count, 3);
  sl_leader_window_free(w);
  sl_leader_store_free(&s);
  sl_arena_free(&fx.a);
}

/* Merge a part (wire form) of window [20, 30) into a new store charged to
 * acct, then free the store (taking its state out of acct again). */
static int merge_into_new_store(fixture *fx, sl_memory_account *acct,
                                const sl_strbuf *part, sl_error *err) {
  sl_leader_store s;
  sl_leader_store_init(&s, 1, 1, fx->key, &fx->set, NULL);
  s.memory = acct;
  int rc = sl_leader_store_merge(&s, 20, 30, (const uint8_t *)part->data,
                                 part->len, err);
  sl_leader_store_free(&s);
  return rc;
}

/* The windows a leader holds count against the memory limit: within it
 * merges go on, past it the merge fails naming the state and its size;
 * what a fired window held no longer counts. */
static void test_memory_limit(void **state) {
  (void)state;
  fixture fx;
  setup_fixture(&fx);
  sl_leader_store s;
  sl_leader_store_init(&s, 1, 1, fx.key, &fx.set, NULL);
  ship(&fx, &s, 0, 10, 0, 100, 10);
  uint64_t one = s.held;
  assert_true(one > 0);
  sl_leader_window *w = NULL;
  sl_leader_store_advance(&s, 0, 9);
  w = sl_leader_store_take(&s);
  assert_non_null(w);
  sl_leader_window_free(w);
  assert_int_equal(s.held, 0);
  /* Room for one such window, not for a second one beside it. */
  sl_memory_account acct;
  sl_memory_account_init(&acct, one + one / 2);
  s.memory = &acct;
  ship(&fx, &s, 10, 20, 0, 100, 10);
  assert_int_equal(atomic_load(&acct.held), one);
  sl_group_table t;
  sl_group_table_init(&t, fx.key, &fx.set, 4);
  feed(&fx, &t, 0, 100, 10);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_group_table_encode(&t, &b);
  sl_error err = {0};
  assert_int_equal(
      sl_leader_store_merge(&s, 20, 30, (const uint8_t *)b.data, b.len, &err),
      SL_ENOMEM);
  assert_non_null(strstr(err.message, "the partition leader's merged "
                                      "windows (2 open windows, 20 groups)"));
  assert_non_null(strstr(err.message, ", over the memory limit"));
  sl_error_clear(&err);
  /* Freeing the store takes what it held out of the account. */
  sl_leader_store_free(&s);
  assert_int_equal(atomic_load(&acct.held), 0);

  /* The limit bounds the sum: with other state of the query holding one
   * window's worth, a leader's first window is already too much. */
  uint64_t other = 0;
  sl_memory_charge(&acct, &other, one);
  assert_int_equal(merge_into_new_store(&fx, &acct, &b, &err), SL_ENOMEM);
  assert_non_null(strstr(err.message, "with the query's other state in this "
                                      "process), over the memory limit"));
  sl_error_clear(&err);
  assert_int_equal(atomic_load(&acct.held), one);
  /* Once the other state is gone, the same window fits. */
  sl_memory_charge(&acct, &other, 0);
  assert_int_equal(merge_into_new_store(&fx, &acct, &b, &err), SL_OK);
  assert_int_equal(atomic_load(&acct.held), 0);
  sl_strbuf_free(&b);
  sl_group_table_free(&t);
  sl_arena_free(&fx.a);
}

/* The account blames the holder that grew over the limit, never one that
 * shrank or stayed while another's state is over it. */
static void test_memory_account_blames_growth(void **state) {
  (void)state;
  sl_memory_account acct;
  sl_memory_account_init(&acct, 100);
  uint64_t a = 0, b = 0, total;
  assert_false(sl_memory_grew_over(&acct, &a, 60, &total));
  assert_int_equal(total, 60);
  assert_false(sl_memory_grew_over(&acct, &b, 30, &total));
  assert_true(sl_memory_grew_over(&acct, &b, 50, &total)); /* b tips it */
  assert_int_equal(total, 110);
  assert_false(sl_memory_grew_over(&acct, &a, 60, &total)); /* stayed */
  assert_false(sl_memory_grew_over(&acct, &a, 55, &total)); /* shrank */
  assert_int_equal(total, 105);
  assert_false(sl_memory_grew_over(&acct, &b, 0, &total));
  assert_false(sl_memory_grew_over(&acct, &a, 0, &total));
  assert_int_equal(atomic_load(&acct.held), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_partition_range_and_spread),
      cmocka_unit_test(test_split_is_a_partition),
      cmocka_unit_test(test_split_by_join_key),
      cmocka_unit_test(test_deltas_merge_to_the_whole),
      cmocka_unit_test(test_vector_clock_rule),
      cmocka_unit_test(test_global_window_waits_for_everyone),
      cmocka_unit_test(test_memory_limit),
      cmocka_unit_test(test_memory_account_blames_growth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
