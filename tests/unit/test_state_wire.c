/* test_state_wire.c - data that crosses into another process.
 *
 * Partial window state (late merge across nodes): a group table encoded
 * and decoded-and-merged gives the same results as merging the tables in
 * memory, for every kind of state (long strings in keys and MIN/MAX,
 * DISTINCT sets of numbers and strings, DECIMAL sums, NULL keys); input cut
 * short or corrupt is an error, never a crash (run under
 * tests/sanitize.sh too).
 *
 * Buffers (channels between processes): swizzled, copied to another
 * address and unswizzled, every string reads back the same; a string
 * outside the heap is refused on both sides. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/row/value_text.h"
#include "sluice/state/aggregate.h"

enum { F_K, F_NAME, F_DEC, F_X, NF };
enum {
  A_COUNT_STAR,
  A_SUM_K,
  A_MIN_NAME,
  A_MAX_NAME,
  A_COUNT_DISTINCT_NAME,
  A_SUM_DISTINCT_K,
  A_SUM_DEC,
  A_AVG_X,
  A_MAX_DEC,
  NA
};

typedef struct fixture {
  sl_arena a;
  sl_row_layout *in;  /* k BIGINT, name STRING, d DECIMAL(10,2), x DOUBLE */
  sl_row_layout *key; /* name STRING, k BIGINT */
  sl_row_layout *out; /* the finalized aggregates */
  sl_agg_set set;
} fixture;

static fixture fx;

static int setup(void **state) {
  (void)state;
  sl_arena_init(&fx.a, 0);
  const sl_type *t[NF] = {
      sl_type_new(&fx.a, SL_TYPE_BIGINT), sl_type_varchar(&fx.a, -1),
      sl_type_decimal(&fx.a, 10, 2), sl_type_new(&fx.a, SL_TYPE_DOUBLE)};
  fx.in = sl_row_layout_new(&fx.a, NF, NULL, t);
  const sl_type *kt[2] = {t[F_NAME], t[F_K]};
  fx.key = sl_row_layout_new(&fx.a, 2, NULL, kt);
  sl_type *count = sl_type_new(&fx.a, SL_TYPE_BIGINT);
  const sl_type *ot[NA] = {count,
                           t[F_K],
                           t[F_NAME],
                           t[F_NAME],
                           count,
                           t[F_K],
                           sl_type_decimal(&fx.a, 38, 2),
                           t[F_X],
                           t[F_DEC]};
  fx.out = sl_row_layout_new(&fx.a, NA, NULL, ot);
  sl_agg_desc d[NA] = {
      {.op = SL_AGG_COUNT_STAR, .in_field = -1, .filter_field = -1},
      {.op = SL_AGG_SUM, .in_field = F_K, .filter_field = -1},
      {.op = SL_AGG_MIN, .in_field = F_NAME, .filter_field = -1},
      {.op = SL_AGG_MAX, .in_field = F_NAME, .filter_field = -1},
      {.op = SL_AGG_COUNT,
       .distinct = true,
       .in_field = F_NAME,
       .filter_field = -1},
      {.op = SL_AGG_SUM, .distinct = true, .in_field = F_K, .filter_field = -1},
      {.op = SL_AGG_SUM, .in_field = F_DEC, .filter_field = -1},
      {.op = SL_AGG_AVG, .in_field = F_X, .filter_field = -1},
      {.op = SL_AGG_MAX, .in_field = F_DEC, .filter_field = -1},
  };
  for (int i = 0; i < NA; i++)
    d[i].out_type = ot[i];
  sl_error err = {0};
  assert_int_equal(sl_agg_set_init(&fx.a, &fx.set, NA, d, fx.in, &err), SL_OK);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  sl_arena_free(&fx.a);
  return 0;
}

static const char *NAMES[] = {"a", "bb", "a-rather-long-name-number-one",
                              "a-rather-long-name-number-two", "twelve-bytes"};

/* Rows [from, to) of a deterministic stream into table t, grouped by
 * (name of the group, k % 3 or NULL); the aggregated name is another. */
static void feed(sl_group_table *t, int from, int to) {
  sl_buffer b;
  sl_buffer_init(&b, fx.in, 1 << 16);
  uint8_t key[64];
  sl_error err = {0};
  for (int i = from; i < to; i++) {
    sl_buffer_clear(&b);
    uint8_t *row = sl_buffer_append(&b);
    SL_FIELD(row, fx.in, F_K, int64_t) = (i * 7) % 23;
    sl_row_set_null(row, F_K, i % 13 == 0);
    const char *n = NAMES[(i * 3) % 5];
    assert_true(sl_buffer_put_str(&b, &SL_FIELD(row, fx.in, F_NAME, sl_str), n,
                                  (uint32_t)strlen(n)));
    sl_row_set_null(row, F_NAME, i % 17 == 0);
    SL_FIELD(row, fx.in, F_DEC, int64_t) = i * 37 - 500;
    SL_FIELD(row, fx.in, F_X, double) = i / 8.0;
    memset(key, 0, sizeof key);
    const char *g = NAMES[i % 5];
    sl_str gs = sl_str_make(g, (uint32_t)strlen(g));
    memcpy(key + fx.key->fields[0].offset, &gs, sizeof gs);
    SL_FIELD(key, fx.key, 1, int64_t) = i % 3;
    sl_row_set_null(key, 1, i % 4 == 0);
    uint8_t *st = sl_group_table_upsert(t, sl_key_hash(fx.key, key), key);
    assert_int_equal(sl_agg_update(&fx.set, st, row, &t->arena, &err), SL_OK);
  }
  sl_buffer_free(&b);
}

static int cmp_lines(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every group's key and finalized aggregates as text, sorted. */
static char *dump(const sl_group_table *t) {
  sl_buffer out;
  sl_buffer_init(&out, fx.out, 1 << 16);
  char **lines = calloc(t->count + 1, sizeof *lines);
  int n = 0;
  sl_error err = {0};
  for (uint32_t i = 0; i < t->cap; i++) {
    if (!sl_group_table_slot_used(t, i))
      continue;
    sl_buffer_clear(&out);
    uint8_t *row = sl_buffer_append(&out);
    sl_strbuf line = SL_STRBUF_INIT;
    const uint8_t *key = sl_group_table_key(t, i);
    for (int f = 0; f < 2; f++) {
      if (sl_row_is_null(key, f))
        sl_strbuf_append(&line, "NULL");
      else
        sl_value_append(&line, fx.key, key, f);
      sl_strbuf_append(&line, "|");
    }
    for (int g = 0; g < NA; g++) {
      assert_int_equal(sl_agg_finalize(&fx.set, g, sl_group_table_states(t, i),
                                       &out, row, g, &err),
                       SL_OK);
      if (sl_row_is_null(row, g))
        sl_strbuf_append(&line, "NULL");
      else
        sl_value_append(&line, fx.out, row, g);
      sl_strbuf_append(&line, "|");
    }
    lines[n++] = sl_strbuf_detach(&line);
  }
  qsort(lines, (size_t)n, sizeof *lines, cmp_lines);
  sl_strbuf all = SL_STRBUF_INIT;
  for (int i = 0; i < n; i++) {
    sl_strbuf_append(&all, lines[i]);
    sl_strbuf_append(&all, "\n");
    free(lines[i]);
  }
  free(lines);
  sl_buffer_free(&out);
  return sl_strbuf_detach(&all);
}

static void test_roundtrip_equals_merge_in_memory(void **state) {
  (void)state;
  sl_group_table a, b, expected, got;
  sl_group_table_init(&a, fx.key, &fx.set, 16);
  sl_group_table_init(&b, fx.key, &fx.set, 16);
  feed(&a, 0, 400);
  feed(&b, 250, 900); /* overlapping keys and values */
  /* In memory: expected = a + b. */
  sl_group_table_init(&expected, fx.key, &fx.set, 16);
  sl_error err = {0};
  assert_int_equal(sl_group_table_merge(&expected, &a, &err), SL_OK);
  assert_int_equal(sl_group_table_merge(&expected, &b, &err), SL_OK);
  /* On the wire: both encoded, the senders' tables freed, then decoded. */
  sl_strbuf wa = SL_STRBUF_INIT, wb = SL_STRBUF_INIT;
  sl_group_table_encode(&a, &wa);
  sl_group_table_encode(&b, &wb);
  sl_group_table_free(&a);
  sl_group_table_free(&b);
  sl_group_table_init(&got, fx.key, &fx.set, 16);
  assert_int_equal(
      sl_group_table_decode_merge(&got, (const uint8_t *)wa.data, wa.len, &err),
      SL_OK);
  assert_int_equal(
      sl_group_table_decode_merge(&got, (const uint8_t *)wb.data, wb.len, &err),
      SL_OK);
  /* The wire bytes are gone too: got must own everything it keeps. */
  sl_strbuf_free(&wa);
  sl_strbuf_free(&wb);
  assert_int_equal(got.count, expected.count);
  assert_true(got.count >= 20);
  char *e = dump(&expected), *g = dump(&got);
  assert_string_equal(g, e);
  /* It really holds long strings, DISTINCT counts and NULL keys. */
  assert_non_null(strstr(e, "a-rather-long-name-number-two|NULL|"));
  free(e);
  free(g);
  sl_group_table_free(&expected);
  sl_group_table_free(&got);
}

static void test_empty_table(void **state) {
  (void)state;
  sl_group_table a, got;
  sl_group_table_init(&a, fx.key, &fx.set, 16);
  sl_group_table_init(&got, fx.key, &fx.set, 16);
  sl_strbuf w = SL_STRBUF_INIT;
  sl_group_table_encode(&a, &w);
  sl_error err = {0};
  assert_int_equal(
      sl_group_table_decode_merge(&got, (const uint8_t *)w.data, w.len, &err),
      SL_OK);
  assert_int_equal(got.count, 0);
  sl_strbuf_free(&w);
  sl_group_table_free(&a);
  sl_group_table_free(&got);
}

/* Every prefix of a valid encoding is refused with a message; random byte
 * flips give an error or some result, never a crash or a hang. */
static void test_cut_short_or_corrupt(void **state) {
  (void)state;
  sl_group_table a;
  sl_group_table_init(&a, fx.key, &fx.set, 16);
  feed(&a, 0, 60);
  sl_strbuf w = SL_STRBUF_INIT;
  sl_group_table_encode(&a, &w);
  for (size_t cut = 0; cut < w.len; cut++) {
    sl_group_table t;
    sl_group_table_init(&t, fx.key, &fx.set, 16);
    sl_error err = {0};
    int rc =
        sl_group_table_decode_merge(&t, (const uint8_t *)w.data, cut, &err);
    if (rc != SL_EINVAL)
      fail_msg("a prefix of %zu of %zu bytes gave %d", cut, w.len, rc);
    assert_non_null(strstr(err.message, "another node"));
    sl_error_clear(&err);
    sl_group_table_free(&t);
  }
  uint64_t seed = 12345;
  uint8_t *copy = malloc(w.len);
  for (int round = 0; round < 300; round++) {
    memcpy(copy, w.data, w.len);
    for (int k = 0; k < 3; k++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      /* Past the header, so that the shape check does not stop it all. */
      size_t at = 20 + (size_t)(seed >> 33) % (w.len - 20);
      copy[at] ^= (uint8_t)(1u << ((seed >> 20) & 7));
    }
    sl_group_table t;
    sl_group_table_init(&t, fx.key, &fx.set, 16);
    sl_error err = {0};
    (void)sl_group_table_decode_merge(&t, copy, w.len, &err);
    sl_error_clear(&err);
    sl_group_table_free(&t);
  }
  free(copy);
  /* Another shape: a table keyed differently refuses it. */
  const sl_type *kt[1] = {sl_type_new(&fx.a, SL_TYPE_BIGINT)};
  sl_row_layout *other = sl_row_layout_new(&fx.a, 1, NULL, kt);
  sl_group_table t;
  sl_group_table_init(&t, other, &fx.set, 16);
  sl_error err = {0};
  assert_int_equal(
      sl_group_table_decode_merge(&t, (const uint8_t *)w.data, w.len, &err),
      SL_EINVAL);
  assert_non_null(strstr(err.message, "another shape"));
  sl_error_clear(&err);
  sl_group_table_free(&t);
  sl_strbuf_free(&w);
  sl_group_table_free(&a);
}

static void test_buffer_swizzle_roundtrip(void **state) {
  (void)state;
  sl_buffer b, c;
  sl_buffer_init(&b, fx.in, 4096);
  for (int i = 0; i < 30; i++) {
    uint8_t *row = sl_buffer_append(&b);
    const char *n = NAMES[i % 5];
    assert_true(sl_buffer_put_str(&b, &SL_FIELD(row, fx.in, F_NAME, sl_str), n,
                                  (uint32_t)strlen(n)));
    sl_row_set_null(row, F_NAME, i % 7 == 0);
    SL_FIELD(row, fx.in, F_K, int64_t) = i;
  }
  sl_error err = {0};
  assert_int_equal(sl_buffer_swizzle(&b, &err), SL_OK);
  /* The bytes land elsewhere (another process's slot). */
  sl_buffer_init(&c, fx.in, 4096);
  memcpy(c.data, b.data, b.cap);
  c.nrows = b.nrows;
  c.heap_used = b.heap_used;
  memset(b.data, 0xAB, b.cap); /* the sender reuses its slot */
  assert_int_equal(sl_buffer_unswizzle(&c, &err), SL_OK);
  for (int i = 0; i < 30; i++) {
    const uint8_t *row = sl_buffer_row(&c, (uint32_t)i);
    assert_int_equal(SL_FIELD(row, fx.in, F_K, int64_t), i);
    if (i % 7 == 0) {
      assert_true(sl_row_is_null(row, F_NAME));
      continue;
    }
    const sl_str *s = &SL_FIELD(row, fx.in, F_NAME, sl_str);
    const char *n = NAMES[i % 5];
    assert_int_equal(s->len, strlen(n));
    assert_memory_equal(sl_str_data(s), n, s->len);
  }
  /* A corrupt offset is refused, not followed. */
  uint8_t *row = sl_buffer_row(&c, 2); /* a long name */
  assert_true(SL_FIELD(row, fx.in, F_NAME, sl_str).len > SL_STR_INLINE);
  assert_int_equal(sl_buffer_swizzle(&c, &err), SL_OK);
  SL_FIELD(row, fx.in, F_NAME, sl_str).u.ptr = (const char *)(uintptr_t)8;
  assert_int_equal(sl_buffer_unswizzle(&c, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, "outside its buffer"));
  sl_error_clear(&err);
  /* A borrowed string (outside the heap) cannot be sent. */
  sl_buffer_clear(&c);
  row = sl_buffer_append(&c);
  static const char borrowed[] = "a string that lives in the caller's memory";
  SL_FIELD(row, fx.in, F_NAME, sl_str) =
      sl_str_make(borrowed, (uint32_t)strlen(borrowed));
  assert_int_equal(sl_buffer_swizzle(&c, &err), SL_EINVAL);
  sl_error_clear(&err);
  sl_buffer_free(&b);
  sl_buffer_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_equals_merge_in_memory),
      cmocka_unit_test(test_empty_table),
      cmocka_unit_test(test_cut_short_or_corrupt),
      cmocka_unit_test(test_buffer_swizzle_roundtrip),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
