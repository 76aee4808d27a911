/* test_statistics.c - the planner's source statistics: HyperLogLog accuracy
 * and merge, space-saving guarantees, heavy hitters on zipf and uniform
 * keys from the `ro` generator, the sampler over NEXMark's datagen table
 * (keys, filter, event-time rate, record width), the time limit on a paced
 * source, extrapolation, and the per-session cache.
 *
 * Tables are created with CREATE TABLE through a session; key expressions
 * are bound from `SELECT <keys> FROM <table>` and taken from the select
 * list, so they are over the table's row as the planner's are. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sluice/binder/binder.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/statistics.h"
#include "sluice/session/session.h"

/* ---- helpers ---------------------------------------------------------- */

static void exec_sql(sl_session *s, const char *sql) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_error err = {0};
  int rc = sl_session_execute(s, sql, strlen(sql), 1, &sink, &err);
  if (rc != SL_OK)
    fail_msg("%s\n-> %s", sql, err.message);
  sl_error_clear(&err);
}

/* Run every statement of a script file under SLUICE_SOURCE_DIR. */
static void exec_file(sl_session *s, const char *rel) {
  const char *dir = getenv("SLUICE_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", rel);
  FILE *f = fopen(path, "rb");
  if (!f)
    fail_msg("cannot open %s (set SLUICE_SOURCE_DIR)", path);
  char *text = calloc(1, 1 << 20);
  size_t len = fread(text, 1, (1 << 20) - 1, f);
  fclose(f);
  size_t pos = 0;
  for (;;) {
    size_t skip = 0;
    size_t n = sl_sql_next_statement(text + pos, len - pos, &skip);
    if (n == 0)
      break;
    char *stmt = strndup(text + pos + skip, n - skip);
    exec_sql(s, stmt);
    free(stmt);
    pos += n;
  }
  free(text);
}

/* A bound `SELECT ... FROM table [WHERE ...]` kept alive for its exprs. */
typedef struct bound {
  sl_arena arena;
  sl_bound_stmt *bs;
  char *text;
} bound;

static const sl_bselect *bind_select(bound *b, sl_session *s, const char *sql) {
  memset(b, 0, sizeof *b);
  sl_arena_init(&b->arena, 0);
  b->text = strdup(sql);
  sl_stmt *st = NULL;
  sl_error err = {0};
  int rc = sl_parse_one(&b->arena, b->text, strlen(b->text), 1, &st, &err);
  if (rc == SL_OK)
    rc =
        sl_bind(&b->arena, sl_session_catalog(s), st, b->text, 1, &b->bs, &err);
  if (rc != SL_OK)
    fail_msg("%s\n-> %s", sql, err.message);
  return b->bs->query->select;
}

static void bound_done(bound *b) {
  if (b->bs)
    sl_bound_stmt_release(b->bs);
  sl_arena_free(&b->arena);
  free(b->text);
}

static const sl_table_def *table(sl_session *s, const char *name) {
  const sl_table_def *t = sl_catalog_find(sl_session_catalog(s), name);
  assert_non_null(t);
  return t;
}

static void check_within(double est, double truth, double rel) {
  double err = fabs(est - truth) / truth;
  if (err > rel)
    fail_msg("estimate %.1f vs %.1f: relative error %.4f > %.4f", est, truth,
             err, rel);
}

/* ---- HyperLogLog -------------------------------------------------------- */

static void test_hll_accuracy(void **state) {
  (void)state;
  const uint64_t sizes[] = {1000, 100000, 10000000};
  const uint64_t seeds[] = {7, 1234567, 99};
  double bound = 4 * sl_hll_std_error(SL_HLL_DEFAULT_P);
  assert_true(bound < 0.07 && bound > 0.06); /* 1.6% per std error */
  for (int s = 0; s < 3; s++) {
    sl_arena a;
    sl_arena_init(&a, 0);
    sl_hll *h = sl_hll_new(&a, SL_HLL_DEFAULT_P);
    for (uint64_t i = 0; i < sizes[s]; i++)
      sl_hll_add_hash(h, sl_stats_hash_i64((int64_t)(seeds[s] * 1000003 + i)));
    check_within(sl_hll_estimate(h), (double)sizes[s], bound);
    /* Adding the same values again changes nothing. */
    double before = sl_hll_estimate(h);
    for (uint64_t i = 0; i < sizes[s] && i < 100000; i++)
      sl_hll_add_hash(h, sl_stats_hash_i64((int64_t)(seeds[s] * 1000003 + i)));
    assert_true(sl_hll_estimate(h) == before);
    sl_arena_free(&a);
  }
}

static void test_hll_small_and_strings(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_hll *h = sl_hll_new(&a, SL_HLL_DEFAULT_P);
  assert_true(sl_hll_estimate(h) == 0);
  /* Linear counting: tiny sets are nearly exact. */
  for (int i = 0; i < 10; i++)
    sl_hll_add_hash(h, sl_stats_hash_i64(i));
  assert_true(fabs(sl_hll_estimate(h) - 10) < 0.5);
  /* Strings hash by content: two copies of each of 50000 strings. */
  sl_hll *s = sl_hll_new(&a, SL_HLL_DEFAULT_P);
  char buf[64];
  for (int rep = 0; rep < 2; rep++)
    for (int i = 0; i < 50000; i++) {
      int n = snprintf(buf, sizeof buf, "customer-%d@example.com", i);
      sl_hll_add_hash(s, sl_stats_hash_bytes(buf, (size_t)n));
    }
  check_within(sl_hll_estimate(s), 50000, 4 * sl_hll_std_error(12));
  assert_true(sl_stats_hash_bytes("a", 1) != sl_stats_hash_bytes("a\0", 2));
  sl_arena_free(&a);
}

static void test_hll_merge(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_hll *x = sl_hll_new(&a, 12), *y = sl_hll_new(&a, 12);
  sl_hll *u = sl_hll_new(&a, 12);
  for (int i = 0; i < 60000; i++) {
    sl_hll_add_hash(x, sl_stats_hash_i64(i));
    sl_hll_add_hash(u, sl_stats_hash_i64(i));
  }
  for (int i = 40000; i < 100000; i++) {
    sl_hll_add_hash(y, sl_stats_hash_i64(i));
    sl_hll_add_hash(u, sl_stats_hash_i64(i));
  }
  sl_error err = {0};
  assert_int_equal(sl_hll_merge(x, y, &err), SL_OK);
  /* Register-wise max is exactly the sketch of the union. */
  assert_true(sl_hll_estimate(x) == sl_hll_estimate(u));
  check_within(sl_hll_estimate(x), 100000, 4 * sl_hll_std_error(12));
  sl_hll *other = sl_hll_new(&a, 10);
  assert_int_equal(sl_hll_merge(x, other, &err), SL_EINVAL);
  sl_error_clear(&err);
  sl_arena_free(&a);
}

/* ---- space-saving ----------------------------------------------------- */

static void test_hh_guarantees(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_hh *h = sl_hh_new(&a, 16);
  /* Key i (i < 4) is 10% of the stream each; the rest is noise of 6000
   * distinct keys. */
  uint64_t truth[4] = {0};
  uint64_t n = 0;
  for (int round = 0; round < 10000; round++) {
    for (int k = 0; k < 4; k++) {
      sl_hh_add(h, sl_stats_hash_i64(k), &k, sizeof k);
      truth[k]++;
      n++;
    }
    for (int j = 0; j < 6; j++) {
      int64_t v = 1000 + (round * 6 + j) % 6000;
      sl_hh_add(h, sl_stats_hash_i64(v), &v, sizeof v);
      n++;
    }
  }
  assert_true(sl_hh_total(h) == n);
  assert_true(sl_hh_error_bound(h) == n / 16);
  sl_hh_item top[16];
  int m = sl_hh_top(h, top, 16);
  assert_int_equal(m, 16);
  for (int k = 0; k < 4; k++) {
    bool found = false;
    for (int i = 0; i < 4; i++) /* the four heavy keys are the top four */
      if (top[i].key == sl_stats_hash_i64(k)) {
        found = true;
        assert_true(top[i].count >= truth[k]);
        assert_true(top[i].count - top[i].error <= truth[k]);
        assert_true(top[i].count - truth[k] <= n / 16);
        int label;
        memcpy(&label, top[i].label, sizeof label);
        assert_int_equal(label, k);
      }
    assert_true(found);
  }
  for (int i = 1; i < m; i++)
    assert_true(top[i - 1].count >= top[i].count);
  sl_arena_free(&a);
}

/* Whether sketch h holds exactly the model's counters (keys, counts and
 * errors). */
static void hh_equals_model(const sl_hh *h, const uint64_t *mkey,
                            const uint64_t *mcount, const uint64_t *merr,
                            int used) {
  sl_hh_item top[256];
  int m = sl_hh_top(h, top, 256);
  assert_int_equal(m, used);
  for (int i = 0; i < m; i++) {
    int j = 0;
    while (j < used && mkey[j] != top[i].key)
      j++;
    assert_true(j < used);
    assert_true(top[i].count == mcount[j]);
    assert_true(top[i].error == merr[j]);
    uint64_t label;
    memcpy(&label, top[i].label, sizeof label);
    assert_true(label == top[i].key);
  }
}

/* The sketch is the textbook one (a counted key increments; an uncounted
 * one takes the first counter of the smallest count), counter for counter:
 * checked against that model written plainly, on streams with many ties
 * (few distinct counts) and keys that collide in the sketch's index (keys
 * equal modulo 2^32), for k from 1 to 200.  Which of several smallest
 * counters is taken shows only until every one of them has been taken
 * (each ends up with count + 1 and the same error), so the sketches are
 * compared every few records, not only at the end. */
static void test_hh_model(void **state) {
  (void)state;
  enum { KMAX = 200 };
  uint64_t x = 0x2545F4914F6CDD1DULL;
  for (int k = 1; k <= KMAX; k += (k < 8 ? 1 : 37)) {
    sl_arena a;
    sl_arena_init(&a, 0);
    sl_hh *h = sl_hh_new(&a, k);
    uint64_t mkey[KMAX], mcount[KMAX], merr[KMAX];
    int used = 0;
    for (int n = 0; n < 6000; n++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      /* a skewed key space of 3k keys, half of them sharing low bits */
      uint64_t r = x % (3u * (unsigned)k + 1);
      uint64_t key = (x % 3 == 0 ? r * r : r) | (r % 2 ? (r << 32) : 0);
      sl_hh_add(h, key, &key, sizeof key);
      int i = 0;
      while (i < used && mkey[i] != key)
        i++;
      if (i < used) {
        mcount[i]++;
      } else if (used < k) {
        mkey[used] = key;
        mcount[used] = 1;
        merr[used++] = 0;
      } else {
        int min = 0;
        for (int j = 1; j < k; j++)
          if (mcount[j] < mcount[min])
            min = j;
        mkey[min] = key;
        merr[min] = mcount[min];
        mcount[min]++;
      }
      if (n % 13 == 0 || n == 5999)
        hh_equals_model(h, mkey, mcount, merr, used);
    }
    sl_arena_free(&a);
  }
}

/* ---- the sampler over `ro` ---------------------------------------------- */

static void test_zipf_heavy_hitter(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  exec_sql(s, "CREATE TABLE rz (key BIGINT, ts TIMESTAMP(3)) WITH ("
              "'connector' = 'ro', 'key.range' = '100000', "
              "'key.distribution' = 'zipf', 'zipf.z' = '1.5')");
  bound b;
  const sl_bselect *sel = bind_select(&b, s, "SELECT key, ts FROM rz");
  const sl_bexpr *keys[1] = {sel->exprs[0]};
  sl_stats_options opt = {0};
  opt.max_seconds = 10; /* count-bound here, on any machine */
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_table_stats *st;
  sl_error err = {0};
  int rc = sl_stats_sample(&a, table(s, "rz"), 1, keys, sel->exprs[1], &opt,
                           &st, &err);
  if (rc != SL_OK)
    fail_msg("%s", err.message);
  assert_true(st->records == 100000);
  assert_false(st->source_ended);
  assert_false(st->stopped_by_time);
  const sl_key_stats *k = &st->keys[0];
  /* Theory: P(rank 1) = 1 / H(100000, 1.5). */
  double h = 0;
  for (int i = 1; i <= 100000; i++)
    h += pow(i, -1.5);
  double theory = 1 / h;
  assert_true(k->nitems >= 10);
  assert_string_equal(k->items[0].value, "0"); /* rank 1 is key 0 */
  assert_true(fabs(k->items[0].share - theory) < 0.01);
  assert_true(fabs(k->top1_share - theory) < 0.01);
  assert_true(k->top10_share > k->top1_share);
  assert_true(k->declared);
  assert_string_equal(k->declared_distribution, "zipf");
  assert_true(k->declared_distinct == 100000);
  assert_true(fabs(k->declared_top_share - theory) < 0.001);
  assert_true(k->null_fraction == 0);
  /* Zipf: far fewer distinct keys than records, and sublinear growth. */
  assert_true(k->distinct < 0.5 * (double)st->records);
  assert_true(k->growth_exponent < 0.9);
  /* Event time: 1M events per second by default. */
  assert_true(st->has_event_rate);
  check_within(st->event_rate, 1e6, 0.05);
  assert_true(st->record_width >= 16);
  sl_strbuf text = SL_STRBUF_INIT;
  sl_table_stats_format(&text, st);
  assert_non_null(strstr(sl_strbuf_cstr(&text), "declared zipf over 100000"));
  sl_strbuf_free(&text);
  sl_arena_free(&a);
  bound_done(&b);
  sl_session_free(s);
}

static void test_uniform_no_heavy_hitter(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  exec_sql(s, "CREATE TABLE ru (key BIGINT, ts TIMESTAMP(3)) WITH ("
              "'connector' = 'ro', 'key.range' = '100000000')");
  bound b;
  const sl_bselect *sel = bind_select(&b, s, "SELECT key FROM ru");
  const sl_bexpr *keys[1] = {sel->exprs[0]};
  sl_stats_options opt = {0};
  opt.max_seconds = 10;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_table_stats *st;
  sl_error err = {0};
  assert_int_equal(
      sl_stats_sample(&a, table(s, "ru"), 1, keys, NULL, &opt, &st, &err),
      SL_OK);
  const sl_key_stats *k = &st->keys[0];
  assert_true(st->records == 100000);
  for (int i = 0; i < k->nitems; i++)
    assert_true(k->items[i].share < 0.03);
  assert_true(k->top1_share < 0.03);
  assert_true(k->top10_share < 0.05);
  /* 100k draws from 100M values: nearly all distinct. */
  check_within(k->distinct, 99950, 4 * k->distinct_stderr);
  assert_true(k->growth_exponent > 0.9);
  assert_true(k->declared && strcmp(k->declared_distribution, "uniform") == 0);
  /* Extrapolation: uniform over 100M, so 10M records have ~9.5M distinct
   * keys and no window has more than 100M. */
  double d10m = sl_key_stats_distinct_for(k, 1e7);
  check_within(d10m, -1e8 * expm1(1e7 * log1p(-1e-8)), 0.001);
  assert_true(sl_key_stats_distinct_for(k, 1e10) <= 1e8);
  /* On the measured curve: half the sample has about half the keys. */
  check_within(sl_key_stats_distinct_for(k, 50000), 50000, 0.08);
  sl_arena_free(&a);
  bound_done(&b);
  sl_session_free(s);
}

/* The time limit: a paced, unbounded source (1000 events/s) cannot fill
 * 100000 records in 0.2 s; the sampler must stop by time. */
static void test_time_limit_paced(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  exec_sql(s, "CREATE TABLE rp (key BIGINT, ts TIMESTAMP(3)) WITH ("
              "'connector' = 'ro', 'events.rate' = '1000')");
  bound b;
  const sl_bselect *sel = bind_select(&b, s, "SELECT key FROM rp");
  const sl_bexpr *keys[1] = {sel->exprs[0]};
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_table_stats *st;
  sl_error err = {0};
  assert_int_equal(
      sl_stats_sample(&a, table(s, "rp"), 1, keys, NULL, NULL, &st, &err),
      SL_OK);
  assert_true(st->stopped_by_time);
  assert_false(st->source_ended);
  assert_true(st->records < 1000);
  assert_true(st->seconds >= 0.2 && st->seconds < 0.6);
  sl_arena_free(&a);
  bound_done(&b);
  sl_session_free(s);
}

/* ---- the sampler over NEXMark -------------------------------------------- */

static void test_nexmark_bid_keys(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  exec_file(s, "examples/nexmark/ddl.sql");
  bound b, w;
  const sl_bselect *sel =
      bind_select(&b, s,
                  "SELECT bid.auction, bid.bidder, dateTime FROM "
                  "datagen");
  const sl_bselect *wsel =
      bind_select(&w, s, "SELECT * FROM datagen WHERE event_type = 2");
  const sl_bexpr *keys[2] = {sel->exprs[0], sel->exprs[1]};
  sl_stats_options opt = {0};
  opt.max_seconds = 10;
  opt.filter = wsel->where;
  assert_int_equal(sel->from->kind, SL_BFROM_SCAN);
  opt.computed = sel->from->u.scan.computed; /* dateTime is computed */
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_table_stats *st;
  sl_error err = {0};
  int rc = sl_stats_sample(&a, table(s, "datagen"), 2, keys, sel->exprs[2],
                           &opt, &st, &err);
  if (rc != SL_OK)
    fail_msg("%s", err.message);
  /* ddl.sql generates 100000 events, 46 of 50 of them bids; the filter
   * `event_type = 2` is pushed into the generator, which makes only the
   * bids (the sample reads no other event). */
  assert_true(st->source_ended);
  check_within((double)st->records, 92000, 0.01);
  assert_true(st->records_read == st->records);
  /* Only the leaves read: bid.auction, bid.bidder, the dateTime leaves and
   * event_type, far narrower than the whole table. */
  assert_true(st->record_width > 0);
  assert_true(st->record_width < st->full_width);
  assert_string_equal(st->keys[0].expr, "bid.auction");
  assert_true(st->keys[0].null_fraction == 0);
  assert_true(st->keys[0].distinct > 100);
  assert_true(st->keys[0].distinct < (double)st->records);
  assert_non_null(st->combined);
  assert_true(st->combined->distinct >= st->keys[0].distinct * 0.9);
  assert_true(st->has_event_rate);
  /* 10000 events per second of event time, 92% of them bids */
  assert_true(st->event_rate > 8500 && st->event_rate < 10000);
  /* The whole stream was seen: no window has more distinct keys. */
  assert_true(sl_key_stats_distinct_for(&st->keys[0], 1e9) <=
              st->keys[0].distinct + 1e-9);

  /* Without the filter, non-bid events have NULL bid leaves. */
  sl_stats_options nf = {0};
  nf.max_seconds = 10;
  sl_table_stats *all;
  assert_int_equal(
      sl_stats_sample(&a, table(s, "datagen"), 1, keys, NULL, &nf, &all, &err),
      SL_OK);
  assert_true(all->records == 100000);
  check_within(all->keys[0].null_fraction, 0.08, 0.1);

  /* A computed column without its expression is refused. */
  const sl_bexpr *ts_key[1] = {sel->exprs[2]};
  assert_int_equal(sl_stats_sample(&a, table(s, "datagen"), 1, ts_key, NULL,
                                   &nf, &all, &err),
                   SL_EINVAL);
  sl_error_clear(&err);
  /* Bad options are refused, not asserted. */
  nf.hll_p = 30;
  assert_int_equal(
      sl_stats_sample(&a, table(s, "datagen"), 1, keys, NULL, &nf, &all, &err),
      SL_EINVAL);
  sl_error_clear(&err);
  sl_arena_free(&a);
  bound_done(&w);
  bound_done(&b);
  sl_session_free(s);
}

/* ---- the cache ----------------------------------------------------------- */

static void test_cache(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  exec_sql(s, "CREATE TABLE rc (key BIGINT, ts TIMESTAMP(3)) WITH ("
              "'connector' = 'ro', 'key.range' = '1000')");
  bound b;
  const sl_bselect *sel = bind_select(&b, s, "SELECT key, ts FROM rc");
  const sl_bexpr *k1[1] = {sel->exprs[0]};
  const sl_bexpr *k2[1] = {sel->exprs[1]};
  sl_stats_options opt = {0};
  opt.max_records = 5000;
  sl_stats_cache *c = sl_stats_cache_new();
  sl_error err = {0};
  const sl_table_stats *x, *y, *z;
  bool hit = true;
  assert_int_equal(sl_stats_cache_sample(c, table(s, "rc"), 1, k1, NULL, &opt,
                                         &x, &hit, &err),
                   SL_OK);
  assert_false(hit);
  assert_int_equal(sl_stats_cache_sample(c, table(s, "rc"), 1, k1, NULL, &opt,
                                         &y, &hit, &err),
                   SL_OK);
  assert_true(hit);
  assert_ptr_equal(x, y);
  assert_int_equal(sl_stats_cache_sample(c, table(s, "rc"), 1, k2, NULL, &opt,
                                         &z, &hit, &err),
                   SL_OK);
  assert_false(hit);
  assert_int_equal(sl_stats_cache_count(c), 2);
  /* The cached stats outlive the bound tree they came from. */
  bound_done(&b);
  assert_string_equal(x->keys[0].expr, "key");
  check_within(x->keys[0].distinct, 993.3, 4 * sl_hll_std_error(12));

  /* Re-creating the table with other options changes the key: a miss. */
  exec_sql(s, "DROP TABLE rc");
  exec_sql(s, "CREATE TABLE rc (key BIGINT, ts TIMESTAMP(3)) WITH ("
              "'connector' = 'ro', 'key.range' = '10')");
  sel = bind_select(&b, s, "SELECT key FROM rc");
  k1[0] = sel->exprs[0];
  assert_int_equal(sl_stats_cache_sample(c, table(s, "rc"), 1, k1, NULL, &opt,
                                         &y, &hit, &err),
                   SL_OK);
  assert_false(hit);
  assert_true(y->keys[0].distinct < 11);

  /* Manual lookup / insert. */
  sl_arena tmp, own;
  sl_arena_init(&tmp, 0);
  sl_arena_init(&own, 0);
  const char *key = sl_stats_cache_key(&tmp, table(s, "rc"), 1, k1, NULL, NULL);
  assert_null(sl_stats_cache_lookup(c, key));
  sl_table_stats *fresh;
  assert_int_equal(
      sl_stats_sample(&own, table(s, "rc"), 1, k1, NULL, &opt, &fresh, &err),
      SL_OK);
  sl_stats_cache_insert(c, key, &own, fresh);
  assert_ptr_equal(sl_stats_cache_lookup(c, key), fresh);
  assert_int_equal(sl_stats_cache_count(c), 4);
  sl_arena_free(&own); /* empty now: the cache owns the blocks */
  sl_arena_free(&tmp);
  sl_stats_cache_free(c);
  bound_done(&b);
  sl_session_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hll_accuracy),
      cmocka_unit_test(test_hll_small_and_strings),
      cmocka_unit_test(test_hll_merge),
      cmocka_unit_test(test_hh_guarantees),
      cmocka_unit_test(test_hh_model),
      cmocka_unit_test(test_zipf_heavy_hitter),
      cmocka_unit_test(test_uniform_no_heavy_hitter),
      cmocka_unit_test(test_time_limit_paced),
      cmocka_unit_test(test_nexmark_bid_keys),
      cmocka_unit_test(test_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
