/* test_generators.c - the event generator sources (nexmark, ysb, cm, ro,
 * datagen): determinism, the split over workers, distributions, event
 * time, bounded counts, pre-generation, NULL leaves and option errors.
 *
 * Tables are created with CREATE TABLE through a session; rows are read
 * through the connector interface exactly as the executor does, and each
 * row is reduced to a 64-bit digest of its values (NULLs included) so runs
 * can be compared event by event. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../../connectors/sources/gen_common.h"
#include "../../connectors/sources/generators.h"
#include "sluice/session/session.h"

#define BASE_US INT64_C(1436918400000000) /* 2015-07-15 00:00:00 UTC */

/* ---- helpers ---------------------------------------------------------- */

/* A session holding one table created from sql. */
static const sl_table_def *create(sl_session **s, const char *sql,
                                  const char *name) {
  *s = sl_session_new();
  sl_error err = {0};
  sl_result_sink quiet_sink = sl_result_sink_discard(NULL);
  int rc = sl_session_execute(*s, sql, strlen(sql), 1, &quiet_sink, &err);
  if (rc != SL_OK)
    fail_msg("CREATE failed: %s", err.message);
  const sl_table_def *t = sl_catalog_find(sl_session_catalog(*s), name);
  assert_non_null(t);
  return t;
}

/* A layout over the named leaves (NULL: all leaves of the table). */
typedef struct reader {
  sl_arena a;
  sl_leaf_columns leaves;
  sl_row_layout *layout;
  int *leaf_index;
  int n;
} reader;

static void reader_init(reader *r, const sl_table_def *t,
                        const char *const *names) {
  sl_arena_init(&r->a, 0);
  sl_table_leaf_columns(&r->a, t, &r->leaves);
  int n = 0;
  if (names)
    while (names[n])
      n++;
  else
    n = r->leaves.n;
  r->n = n;
  r->leaf_index = SL_ANEW_N(&r->a, int, n);
  const char **nm = SL_ANEW_N(&r->a, const char *, n);
  const sl_type **ty = SL_ANEW_N(&r->a, const sl_type *, n);
  for (int j = 0; j < n; j++) {
    int k = j;
    if (names) {
      k = -1;
      for (int i = 0; i < r->leaves.n; i++)
        if (strcmp(r->leaves.names[i], names[j]) == 0)
          k = i;
      if (k < 0)
        fail_msg("no leaf %s", names[j]);
    }
    r->leaf_index[j] = k;
    nm[j] = r->leaves.names[k];
    ty[j] = r->leaves.types[k];
  }
  r->layout = sl_row_layout_new(&r->a, n, nm, ty);
}

static int field_of(const reader *r, const char *name) {
  for (int j = 0; j < r->n; j++)
    if (strcmp(r->layout->fields[j].name, name) == 0)
      return j;
  fail_msg("no field %s", name);
  return -1;
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t row_digest(const sl_row_layout *l, const uint8_t *row) {
  uint64_t h = 1;
  for (int j = 0; j < l->nfields; j++) {
    const sl_field *f = &l->fields[j];
    if (sl_row_is_null(row, j)) {
      h = mix(h, 0xdead);
      continue;
    }
    if (f->ptype == SL_P_STR) {
      const sl_str *s = (const sl_str *)(row + f->offset);
      const char *p = sl_str_data(s);
      h = mix(h, s->len);
      for (uint32_t i = 0; i < s->len; i++)
        h = mix(h, (uint8_t)p[i]);
    } else {
      uint64_t v = 0;
      memcpy(&v, row + f->offset, f->size < 8 ? f->size : 8);
      h = mix(h, v);
    }
  }
  return h;
}

/* Rows produced by one instance, as digests, with a callback per row. */
typedef struct run {
  uint64_t *digest;
  size_t n, cap;
  sl_source_stats stats;
} run;

typedef void (*row_fn)(void *ctx, const reader *r, const uint8_t *row);

/* run_source opens its sources as the planner's sampler does */
static bool open_as_sample;

static void run_source(const sl_source_connector *c, const sl_table_def *t,
                       const reader *r, int worker, int nworkers,
                       uint32_t bufsize, size_t max_rows, run *out, row_fn fn,
                       void *ctx) {
  sl_source_spec spec = {t, r->layout, r->leaf_index,  worker, nworkers,
                         0, NULL,      open_as_sample, NULL};
  sl_source *s;
  sl_error err = {0};
  if (c->open(&spec, &s, &err) != SL_OK)
    fail_msg("open failed: %s", err.message);
  sl_buffer buf;
  sl_buffer_init(&buf, r->layout, bufsize);
  memset(out, 0, sizeof *out);
  bool done = false;
  while (!done && out->n < max_rows) {
    sl_buffer_clear(&buf);
    assert_int_equal(c->next(s, &buf, &done, &err), SL_OK);
    for (uint32_t i = 0; i < buf.nrows && out->n < max_rows; i++) {
      const uint8_t *row = sl_buffer_row(&buf, i);
      if (out->n == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 1024;
        out->digest = realloc(out->digest, out->cap * sizeof(uint64_t));
      }
      out->digest[out->n++] = row_digest(r->layout, row);
      /* long strings live in this buffer's heap (channels rely on it) */
      for (int j = 0; j < r->layout->nfields; j++) {
        const sl_field *f = &r->layout->fields[j];
        const sl_str *str = (const sl_str *)(row + f->offset);
        if (f->ptype == SL_P_STR && !sl_row_is_null(row, j) &&
            str->len > SL_STR_INLINE &&
            ((const uint8_t *)str->u.ptr <
                 buf.data + buf.nrows * r->layout->width ||
             (const uint8_t *)str->u.ptr + str->len > buf.data + buf.cap))
          fail_msg("string of %s outside the buffer's heap", f->name);
      }
      if (fn)
        fn(ctx, r, row);
    }
  }
  c->stats(s, &out->stats);
  c->close(s);
  sl_buffer_free(&buf);
}

static void run_free(run *r) {
  free(r->digest);
  memset(r, 0, sizeof *r);
}

/* Instance w of n generates blocks w, w + n, ... of GEN_BLOCK events
 * (gen_common.h): its k-th event's number, and how many of `total` it
 * generates. */
static size_t event_of(int w, int n, size_t k) {
  return (k / GEN_BLOCK * (size_t)n + (size_t)w) * GEN_BLOCK + k % GEN_BLOCK;
}

static size_t events_of(int w, int n, size_t total) {
  size_t k = 0;
  for (size_t b = (size_t)w * GEN_BLOCK; b < total; b += (size_t)n * GEN_BLOCK)
    k += total - b < GEN_BLOCK ? total - b : GEN_BLOCK;
  return k;
}

/* The union over nworkers instances equals the single-instance run event
 * by event: worker w's k-th row is event event_of(w, nworkers, k). */
static void check_split(const sl_source_connector *c, const sl_table_def *t,
                        const reader *r, const run *single, int nworkers) {
  size_t total = 0;
  for (int w = 0; w < nworkers; w++) {
    run part;
    run_source(c, t, r, w, nworkers, 64 * 1024, SIZE_MAX, &part, NULL, NULL);
    for (size_t k = 0; k < part.n; k++) {
      size_t i = event_of(w, nworkers, k);
      assert_true(i < single->n);
      if (part.digest[k] != single->digest[i])
        fail_msg("worker %d/%d: event %zu differs", w, nworkers, i);
    }
    total += part.n;
    run_free(&part);
  }
  assert_int_equal(total, single->n);
}

/* CREATE TABLE (through a session, as a user runs it) must be refused by
 * the connector's validate with a message holding needle. */
static int validate_error(const sl_source_connector *c, const char *sql,
                          const char *name, const char *needle) {
  assert_non_null(c->validate);
  sl_session *s = sl_session_new();
  sl_error err = {0};
  sl_result_sink quiet_sink = sl_result_sink_discard(NULL);
  int rc = sl_session_execute(s, sql, strlen(sql), 1, &quiet_sink, &err);
  if (rc == SL_OK)
    fail_msg("CREATE accepted: %s", sql);
  if (!err.message || !strstr(err.message, needle))
    fail_msg("message \"%s\" lacks \"%s\"", err.message, needle);
  assert_null(sl_catalog_find(sl_session_catalog(s), name));
  sl_error_clear(&err);
  sl_session_free(s);
  return rc;
}

static char *read_ddl(void) {
  const char *dir = getenv("SLUICE_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/nexmark/ddl.sql", dir ? dir : ".");
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char text[16384];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char *semi = strchr(text, ';'); /* the CREATE TABLE is the first one */
  assert_non_null(semi);
  semi[1] = 0;
  return text;
}

/* ---- nexmark ------------------------------------------------------------ */

typedef struct nx_counts {
  int ev, pid, aid, bprice, bts, pname;
  size_t kinds[3];
  size_t null_violations;
  int64_t last_ts, first_ts;
  bool decreasing;
  int64_t min_bid_auction;
} nx_counts;

static void nx_row(void *ctx, const reader *r, const uint8_t *row) {
  nx_counts *c = ctx;
  const sl_row_layout *l = r->layout;
  int kind = SL_FIELD(row, l, c->ev, int32_t);
  assert_true(kind >= 0 && kind <= 2);
  c->kinds[kind]++;
  /* exactly the leaves of the event's own ROW are set */
  for (int j = 0; j < l->nfields; j++) {
    const char *name = l->fields[j].name;
    int grp = strncmp(name, "person.", 7) == 0    ? 0
              : strncmp(name, "auction.", 8) == 0 ? 1
              : strncmp(name, "bid.", 4) == 0     ? 2
                                                  : -1;
    if (grp >= 0 && sl_row_is_null(row, j) != (grp != kind))
      c->null_violations++;
  }
  int64_t ts = kind == 2 ? SL_FIELD(row, l, c->bts, int64_t) : c->last_ts;
  if (kind == 2) {
    if (ts < c->last_ts)
      c->decreasing = true;
    if (c->first_ts == 0)
      c->first_ts = ts;
    c->last_ts = ts;
    int64_t price = SL_FIELD(row, l, c->bprice, int64_t);
    assert_true(price >= 100 && price <= 100000000);
  }
}

static void test_nexmark_ddl(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t = create(&s, read_ddl(), "datagen");
  sl_error err = {0};
  assert_int_equal(sl_source_nexmark.validate(t, &err), SL_OK);
  reader r;
  reader_init(&r, t, NULL);
  assert_int_equal(r.n, 26);
  nx_counts c = {0};
  c.ev = field_of(&r, "event_type");
  c.bprice = field_of(&r, "bid.price");
  c.bts = field_of(&r, "bid.dateTime");
  run one;
  run_source(&sl_source_nexmark, t, &r, 0, 1, 64 * 1024, SIZE_MAX, &one, nx_row,
             &c);
  /* events.num = 100000 in 1/3/46 per 50 */
  assert_int_equal(one.n, 100000);
  assert_int_equal(one.stats.rows, 100000);
  assert_true(one.stats.bytes > 100000u * r.layout->width);
  assert_int_equal(c.kinds[0], 2000);
  assert_int_equal(c.kinds[1], 6000);
  assert_int_equal(c.kinds[2], 92000);
  assert_int_equal(c.null_violations, 0);
  assert_false(c.decreasing);
  /* first-event.rate 10000/s: event i at i * 100 us; the last (99999, a
   * bid: 46 of every 50 are) at 9.9999 s, cut to TIMESTAMP(3) */
  assert_int_equal(c.first_ts, BASE_US);
  assert_int_equal(c.last_ts, BASE_US + 9999000);

  check_split(&sl_source_nexmark, t, &r, &one, 2);
  check_split(&sl_source_nexmark, t, &r, &one, 3);
  run_free(&one);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

/* Ids, the hot-item skew and the first events as NEXMark defines them. */
typedef struct nx_ids {
  int ev, pid, aid, seller, bauction, bidder, channel, url;
  int64_t max_person, max_auction;
  size_t bids, hot_bids, hot_channel, bad;
} nx_ids;

static void nx_id_row(void *ctx, const reader *r, const uint8_t *row) {
  nx_ids *c = ctx;
  const sl_row_layout *l = r->layout;
  int kind = SL_FIELD(row, l, c->ev, int32_t);
  if (kind == 0) {
    int64_t id = SL_FIELD(row, l, c->pid, int64_t);
    if (id != c->max_person + 1)
      c->bad++; /* persons count up by one from 1000 */
    c->max_person = id;
  } else if (kind == 1) {
    int64_t id = SL_FIELD(row, l, c->aid, int64_t);
    if (id != c->max_auction + 1)
      c->bad++;
    c->max_auction = id;
    int64_t seller = SL_FIELD(row, l, c->seller, int64_t);
    if (seller < 1000 || seller > c->max_person + 10)
      c->bad++;
  } else {
    c->bids++;
    int64_t a = SL_FIELD(row, l, c->bauction, int64_t);
    if (a < 1000 || a > c->max_auction + 10)
      c->bad++;
    if (a % 100 == 0)
      c->hot_bids++;
    const sl_str *ch = (const sl_str *)(row + l->fields[c->channel].offset);
    const sl_str *url = (const sl_str *)(row + l->fields[c->url].offset);
    if (strncmp(sl_str_data(url), "https://www.nexmark.com/", 24) != 0)
      c->bad++;
    if (strncmp(sl_str_data(ch), "channel-", 8) != 0) {
      c->hot_channel++;
      if (memmem(sl_str_data(url), url->len, "channel_id", 10))
        c->bad++;
    } else if (!memmem(sl_str_data(url), url->len, "channel_id", 10)) {
      c->bad++;
    }
  }
}

static void test_nexmark_ids_and_skew(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t = create(
      &s,
      "CREATE TABLE nx (event_type INT, person ROW<id BIGINT, name STRING>, "
      "auction ROW<id BIGINT, seller BIGINT>, bid ROW<auction BIGINT, "
      "bidder BIGINT, channel STRING, url STRING>) WITH ('connector' = "
      "'nexmark', 'events.num' = '200000', 'seed' = '7')",
      "nx");
  sl_error err = {0};
  assert_int_equal(sl_source_nexmark.validate(t, &err), SL_OK);
  reader r;
  reader_init(&r, t, NULL);
  nx_ids c = {0};
  c.ev = field_of(&r, "event_type");
  c.pid = field_of(&r, "person.id");
  c.aid = field_of(&r, "auction.id");
  c.seller = field_of(&r, "auction.seller");
  c.bauction = field_of(&r, "bid.auction");
  c.bidder = field_of(&r, "bid.bidder");
  c.channel = field_of(&r, "bid.channel");
  c.url = field_of(&r, "bid.url");
  c.max_person = 999;
  c.max_auction = 999;
  run one;
  run_source(&sl_source_nexmark, t, &r, 0, 1, 64 * 1024, SIZE_MAX, &one,
             nx_id_row, &c);
  assert_int_equal(c.bad, 0);
  assert_int_equal(c.max_person, 1000 + 4000 - 1);
  assert_int_equal(c.max_auction, 1000 + 12000 - 1);
  /* hot-ratio.auctions 2: half the bids go to a hot auction (plus ~1% of
   * the rest by chance) */
  double hot = (double)c.hot_bids / (double)c.bids;
  assert_true(hot > 0.48 && hot < 0.53);
  /* 99% of bids on one of the four hot channels */
  double hc = (double)c.hot_channel / (double)c.bids;
  assert_true(hc > 0.985 && hc < 0.995);
  run_free(&one);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

static void test_nexmark_determinism_and_projection(void **state) {
  (void)state;
  const char *sql = "CREATE TABLE nx (event_type INT, bid ROW<price BIGINT, "
                    "extra STRING>, person ROW<name STRING>) WITH "
                    "('connector' = 'nexmark', 'events.num' = '5000', "
                    "'seed' = '%s')";
  char text[512];
  run runs[3];
  const char *seeds[3] = {"1", "1", "2"};
  const char *cols[] = {"bid.price", "bid.extra", NULL};
  for (int k = 0; k < 3; k++) {
    sl_session *s;
    snprintf(text, sizeof text, sql, seeds[k]);
    const sl_table_def *t = create(&s, text, "nx");
    reader r;
    reader_init(&r, t, cols);
    run_source(&sl_source_nexmark, t, &r, 0, 1, 64 * 1024, SIZE_MAX, &runs[k],
               NULL, NULL);
    sl_arena_free(&r.a);
    sl_session_free(s);
  }
  assert_int_equal(runs[0].n, 5000);
  assert_int_equal(runs[2].n, 5000);
  assert_memory_equal(runs[0].digest, runs[1].digest, 5000 * sizeof(uint64_t));
  size_t same = 0;
  for (size_t i = 0; i < 5000; i++)
    same += runs[0].digest[i] == runs[2].digest[i];
  /* persons and auctions have all-NULL bid leaves in both seeds */
  assert_int_equal(same, 400);
  for (int k = 0; k < 3; k++)
    run_free(&runs[k]);
}

static void test_nexmark_extra_sizes(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t =
      create(&s,
             "CREATE TABLE nx (event_type INT, bid ROW<extra STRING>) WITH "
             "('connector' = 'nexmark', 'events.num' = '50000', "
             "'bid.avg-size' = '1000')",
             "nx");
  reader r;
  reader_init(&r, t, NULL);
  run one;
  run_source(&sl_source_nexmark, t, &r, 0, 1, 64 * 1024, SIZE_MAX, &one, NULL,
             NULL);
  /* 46000 bids with ~960 bytes of extra each went through the heap */
  double per_bid = (double)(one.stats.bytes - one.n * r.layout->width) / 46000;
  assert_true(per_bid > 900 && per_bid < 1020);
  run_free(&one);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

/* ---- pre-generation -------------------------------------------------------
 */

/* Table nx of sql (a format with one %s for more options), with
 * 'pregenerate' = 'true' when pregen, read as worker w of n into out. */
static void run_nx(const char *sql, bool pregen, int w, int n, uint32_t bufsize,
                   size_t max_rows, run *out) {
  char text[1024];
  snprintf(text, sizeof text, sql, pregen ? ", 'pregenerate' = 'true'" : "");
  sl_session *s;
  const sl_table_def *t = create(&s, text, "nx");
  reader r;
  reader_init(&r, t, NULL);
  run_source(&sl_source_nexmark, t, &r, w, n, bufsize, max_rows, out, NULL,
             NULL);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

static void test_pregenerate_same_rows(void **state) {
  (void)state;
  const char *sql =
      "CREATE TABLE nx (event_type INT, person ROW<name STRING, emailAddress "
      "STRING, creditCard STRING>, auction ROW<description STRING>, bid "
      "ROW<price BIGINT, url STRING, dateTime TIMESTAMP(3)>) WITH "
      "('connector' = 'nexmark', 'events.num' = '30000'%s)";
  run plain, pre, small;
  run_nx(sql, false, 1, 2, 64 * 1024, SIZE_MAX, &plain);
  /* a 64 KiB buffer takes whole chunks; 4 KiB ones take rows */
  run_nx(sql, true, 1, 2, 64 * 1024, SIZE_MAX, &pre);
  run_nx(sql, true, 1, 2, 4096, SIZE_MAX, &small);
  assert_int_equal(plain.n, events_of(1, 2, 30000));
  assert_int_equal(pre.n, plain.n);
  assert_int_equal(small.n, plain.n);
  assert_memory_equal(plain.digest, pre.digest, plain.n * sizeof(uint64_t));
  assert_memory_equal(plain.digest, small.digest, plain.n * sizeof(uint64_t));
  assert_int_equal(pre.stats.rows, plain.n);
  run_free(&plain);
  run_free(&pre);
  run_free(&small);
}

/* The planner's sample of a pre-generated table reads its first rows
 * without pre-generating the stream: 2^36 events could not be made (about
 * 7 TiB of rows), so an open that made them would fail or never end. */
static void test_sample_skips_pregenerate(void **state) {
  (void)state;
  const char *sql =
      "CREATE TABLE nx (event_type INT, bid ROW<price BIGINT, url STRING, "
      "dateTime TIMESTAMP(3)>) WITH ('connector' = 'nexmark', 'events.num' "
      "= '68719476736'%s)";
  run plain, sampled;
  run_nx(sql, false, 0, 1, 64 * 1024, 5000, &plain);
  open_as_sample = true;
  run_nx(sql, true, 0, 1, 64 * 1024, 5000, &sampled);
  open_as_sample = false;
  assert_int_equal(plain.n, 5000);
  assert_int_equal(sampled.n, plain.n);
  assert_memory_equal(plain.digest, sampled.digest, plain.n * sizeof(uint64_t));
  run_free(&plain);
  run_free(&sampled);
}

/* ---- ro --------------------------------------------------------------- */

typedef struct ro_counts {
  uint32_t *count;
  uint64_t range;
  int64_t min, max, last_ts;
  bool out_of_range, decreasing;
} ro_counts;

static void ro_row(void *ctx, const reader *r, const uint8_t *row) {
  ro_counts *c = ctx;
  int64_t key = SL_FIELD(row, r->layout, 0, int64_t);
  int64_t ts = SL_FIELD(row, r->layout, 1, int64_t);
  if (key < 0 || (uint64_t)key >= c->range)
    c->out_of_range = true;
  else if (c->count)
    c->count[key]++;
  if (key < c->min)
    c->min = key;
  if (key > c->max)
    c->max = key;
  if (ts < c->last_ts)
    c->decreasing = true;
  c->last_ts = ts;
}

static const sl_table_def *ro_table(sl_session **s, const char *opts) {
  char text[1024];
  snprintf(text, sizeof text,
           "CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3)) WITH ('connector' = "
           "'ro'%s)",
           opts);
  return create(s, text, "ro");
}

static void test_ro_zipf_skew(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t =
      ro_table(&s, ", 'events.num' = '300000', 'key.range' = '1000', "
                   "'key.distribution' = 'zipf', 'zipf.z' = '1.5'");
  sl_error err = {0};
  assert_int_equal(sl_source_ro.validate(t, &err), SL_OK);
  reader r;
  reader_init(&r, t, NULL);
  ro_counts c = {calloc(1000, sizeof(uint32_t)),
                 1000,
                 INT64_MAX,
                 INT64_MIN,
                 0,
                 false,
                 false};
  run one;
  run_source(&sl_source_ro, t, &r, 0, 1, 64 * 1024, SIZE_MAX, &one, ro_row, &c);
  assert_int_equal(one.n, 300000);
  assert_false(c.out_of_range);
  double h = 0;
  for (int k = 1; k <= 1000; k++)
    h += pow(k, -1.5);
  /* rank k has probability k^-1.5 / H; key k-1 */
  for (int k = 1; k <= 4; k++) {
    double expect = pow(k, -1.5) / h;
    double got = c.count[k - 1] / 300000.0;
    if (fabs(got - expect) > 0.02 * expect + 0.001)
      fail_msg("key %d: frequency %.4f, expected %.4f", k - 1, got, expect);
  }
  assert_true(c.count[0] > c.count[1] && c.count[1] > c.count[2]);
  free(c.count);
  run_free(&one);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

static void test_ro_uniform_and_split(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t =
      ro_table(&s, ", 'events.num' = '200000', 'key.range' = '1000', "
                   "'seed' = '3', 'events.per-second' = '1000'");
  reader r;
  reader_init(&r, t, NULL);
  ro_counts c = {calloc(1000, sizeof(uint32_t)),
                 1000,
                 INT64_MAX,
                 INT64_MIN,
                 0,
                 false,
                 false};
  run one;
  run_source(&sl_source_ro, t, &r, 0, 1, 64 * 1024, SIZE_MAX, &one, ro_row, &c);
  assert_int_equal(one.n, 200000);
  assert_false(c.out_of_range);
  assert_false(c.decreasing);
  assert_int_equal(c.min, 0);
  assert_int_equal(c.max, 999);
  uint32_t lo = UINT32_MAX, hi = 0;
  for (int k = 0; k < 1000; k++) {
    lo = c.count[k] < lo ? c.count[k] : lo;
    hi = c.count[k] > hi ? c.count[k] : hi;
  }
  /* 200 per key expected; +-100 is > 7 standard deviations */
  assert_true(lo > 100 && hi < 300);
  /* 1000 events per second of event time: the last is at 199.999 s */
  assert_int_equal(c.last_ts, BASE_US + 199999000);
  check_split(&sl_source_ro, t, &r, &one, 2);
  check_split(&sl_source_ro, t, &r, &one, 3);
  free(c.count);
  run_free(&one);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

static void test_ro_zipf_large_range_and_time(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t =
      ro_table(&s, ", 'events.num' = '100000', 'key.distribution' = "
                   "'zipf', 'zipf.z' = '0.99'");
  reader r;
  reader_init(&r, t, NULL);
  /* per instance of 3 workers, event time never goes back */
  for (int w = 0; w < 3; w++) {
    ro_counts c = {NULL, 100000000, INT64_MAX, INT64_MIN, 0, false, false};
    run part;
    run_source(&sl_source_ro, t, &r, w, 3, 64 * 1024, SIZE_MAX, &part, ro_row,
               &c);
    assert_false(c.out_of_range);
    assert_false(c.decreasing);
    assert_int_equal(c.min, 0);   /* the top key shows up */
    assert_true(c.max > 1000000); /* and the long tail too */
    assert_int_equal(part.n, events_of(w, 3, 100000));
    run_free(&part);
  }
  sl_arena_free(&r.a);
  sl_session_free(s);
}

static void test_rate_paces(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t =
      ro_table(&s, ", 'events.num' = '300', 'events.rate' = '2000'");
  reader r;
  reader_init(&r, t, NULL);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  run one;
  run_source(&sl_source_ro, t, &r, 0, 1, 64 * 1024, SIZE_MAX, &one, NULL, NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
  assert_int_equal(one.n, 300);
  assert_true(secs > 0.13); /* 300 events at 2000/s take 0.15 s */
  run_free(&one);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

/* ---- ysb ----------------------------------------------------------------- */

typedef struct ysb_seen {
  char ads[1000][40];
  int nads;
  size_t types[3];
  size_t unknown_ad;
} ysb_seen;

static void campaign_row(void *ctx, const reader *r, const uint8_t *row) {
  ysb_seen *y = ctx;
  const sl_str *ad = (const sl_str *)(row + r->layout->fields[0].offset);
  assert_int_equal(ad->len, 36);
  assert_true(y->nads < 1000);
  memcpy(y->ads[y->nads++], sl_str_data(ad), 36);
}

static int cmp_ad(const void *a, const void *b) {
  return memcmp(a, b, 36);
}

static void ysb_row(void *ctx, const reader *r, const uint8_t *row) {
  ysb_seen *y = ctx;
  const sl_str *ad = (const sl_str *)(row + r->layout->fields[0].offset);
  const sl_str *et = (const sl_str *)(row + r->layout->fields[1].offset);
  char key[40];
  memcpy(key, sl_str_data(ad), 36);
  if (!bsearch(key, y->ads, 1000, 40, cmp_ad))
    y->unknown_ad++;
  const char *e = sl_str_data(et);
  if (et->len == 4 && memcmp(e, "view", 4) == 0)
    y->types[0]++;
  else if (et->len == 5 && memcmp(e, "click", 5) == 0)
    y->types[1]++;
  else if (et->len == 8 && memcmp(e, "purchase", 8) == 0)
    y->types[2]++;
  else
    fail_msg("event_type %.*s", (int)et->len, e);
}

static void test_ysb_events_and_campaigns(void **state) {
  (void)state;
  ysb_seen *y = calloc(1, sizeof *y);
  sl_session *s1, *s2;
  const sl_table_def *camp =
      create(&s1,
             "CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) WITH "
             "('connector' = 'ysb', 'ysb.table' = 'campaigns')",
             "campaigns");
  sl_error err = {0};
  assert_int_equal(sl_source_ysb.validate(camp, &err), SL_OK);
  reader rc;
  reader_init(&rc, camp, NULL);
  /* the campaigns table split over 3 workers: 1000 distinct ads */
  size_t total = 0;
  for (int w = 0; w < 3; w++) {
    run part;
    run_source(&sl_source_ysb, camp, &rc, w, 3, 64 * 1024, SIZE_MAX, &part,
               campaign_row, y);
    total += part.n;
    run_free(&part);
  }
  assert_int_equal(total, 1000);
  qsort(y->ads, 1000, 40, cmp_ad);
  for (int k = 1; k < 1000; k++)
    assert_true(memcmp(y->ads[k - 1], y->ads[k], 36) != 0);
  /* 100 campaigns of 10 ads */
  run cids;
  const char *cc[] = {"campaign_id", NULL};
  reader rcid;
  reader_init(&rcid, camp, cc);
  run_source(&sl_source_ysb, camp, &rcid, 0, 1, 64 * 1024, SIZE_MAX, &cids,
             NULL, NULL);
  size_t distinct = 0;
  for (size_t i = 0; i < cids.n; i++) {
    bool dup = false;
    for (size_t k = 0; k < i && !dup; k++)
      dup = cids.digest[k] == cids.digest[i];
    distinct += !dup;
  }
  assert_int_equal(distinct, 100);
  run_free(&cids);

  const sl_table_def *ev =
      create(&s2,
             "CREATE TABLE ysb (user_id STRING, page_id STRING, ad_id STRING, "
             "ad_type STRING, event_type STRING, event_time TIMESTAMP(3), "
             "ip_address STRING, WATERMARK FOR event_time AS event_time) WITH "
             "('connector' = 'ysb', 'events.num' = '90000', 'seed' = '11')",
             "ysb");
  assert_int_equal(sl_source_ysb.validate(ev, &err), SL_OK);
  const char *cols[] = {"ad_id", "event_type", NULL};
  reader re;
  reader_init(&re, ev, cols);
  run one;
  run_source(&sl_source_ysb, ev, &re, 0, 1, 64 * 1024, SIZE_MAX, &one, ysb_row,
             y);
  assert_int_equal(one.n, 90000);
  assert_int_equal(y->unknown_ad, 0); /* every event's ad is in the table */
  for (int k = 0; k < 3; k++)
    assert_true(y->types[k] > 29000 && y->types[k] < 31000);
  reader all;
  reader_init(&all, ev, NULL);
  run full;
  run_source(&sl_source_ysb, ev, &all, 0, 1, 64 * 1024, SIZE_MAX, &full, NULL,
             NULL);
  check_split(&sl_source_ysb, ev, &all, &full, 2);
  run_free(&full);
  run_free(&one);
  sl_arena_free(&rc.a);
  sl_arena_free(&rcid.a);
  sl_arena_free(&re.a);
  sl_arena_free(&all.a);
  sl_session_free(s1);
  sl_session_free(s2);
  free(y);
}

/* ---- cm ----------------------------------------------------------------- */

typedef struct cm_seen {
  int cpu, type, job;
  double min_cpu, max_cpu;
  int bad_type;
  int64_t min_job, max_job;
} cm_seen;

static void cm_row(void *ctx, const reader *r, const uint8_t *row) {
  cm_seen *c = ctx;
  double cpu = SL_FIELD(row, r->layout, c->cpu, double);
  int32_t type = SL_FIELD(row, r->layout, c->type, int32_t);
  int64_t job = SL_FIELD(row, r->layout, c->job, int64_t);
  c->min_cpu = cpu < c->min_cpu ? cpu : c->min_cpu;
  c->max_cpu = cpu > c->max_cpu ? cpu : c->max_cpu;
  c->bad_type += type < 0 || type > 8;
  c->min_job = job < c->min_job ? job : c->min_job;
  c->max_job = job > c->max_job ? job : c->max_job;
}

static void test_cm(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t = create(
      &s,
      "CREATE TABLE cm (`timestamp` TIMESTAMP(3), job_id BIGINT, task_id "
      "BIGINT, machine_id BIGINT, event_type INT, user_id BIGINT, category "
      "INT, priority INT, cpu DOUBLE, ram DOUBLE, disk DOUBLE, constraints "
      "INT) WITH ('connector' = 'cm', 'events.num' = '50000', 'cm.jobs' = "
      "'100')",
      "cm");
  sl_error err = {0};
  if (sl_source_cm.validate(t, &err) != SL_OK)
    fail_msg("%s", err.message);
  reader r;
  reader_init(&r, t, NULL);
  cm_seen c = {field_of(&r, "cpu"),
               field_of(&r, "event_type"),
               field_of(&r, "job_id"),
               1e9,
               -1e9,
               0,
               INT64_MAX,
               INT64_MIN};
  run one;
  run_source(&sl_source_cm, t, &r, 0, 1, 64 * 1024, SIZE_MAX, &one, cm_row, &c);
  assert_int_equal(one.n, 50000);
  assert_true(c.min_cpu >= 0 && c.max_cpu <= 0.5 && c.max_cpu > 0.3);
  assert_int_equal(c.bad_type, 0);
  assert_int_equal(c.max_job - c.min_job, 99 * 1000); /* 100 jobs */
  check_split(&sl_source_cm, t, &r, &one, 2);
  run_free(&one);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

/* ---- datagen --------------------------------------------------------------
 */

typedef struct dg_seen {
  int seq, num, str, ts, d;
  uint8_t seen[501];
  size_t nulls, rows, bad;
  int64_t last_ts;
} dg_seen;

static void dg_row(void *ctx, const reader *r, const uint8_t *row) {
  dg_seen *c = ctx;
  const sl_row_layout *l = r->layout;
  c->rows++;
  int64_t seq = SL_FIELD(row, l, c->seq, int64_t);
  if (seq < 1 || seq > 500 || c->seen[seq]++)
    c->bad++;
  if (sl_row_is_null(row, c->num)) {
    c->nulls++;
  } else {
    int32_t v = SL_FIELD(row, l, c->num, int32_t);
    if (v < 5 || v > 10)
      c->bad++;
  }
  const sl_str *s = (const sl_str *)(row + l->fields[c->str].offset);
  if (s->len != 20)
    c->bad++;
  int64_t ts = SL_FIELD(row, l, c->ts, int64_t);
  if (ts < c->last_ts)
    c->bad++;
  c->last_ts = ts;
  double d = SL_FIELD(row, l, c->d, double);
  if (d < -2 || d > 2)
    c->bad++;
}

static void test_datagen(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t =
      create(&s,
             "CREATE TABLE g (id BIGINT, n INT, name STRING, ts TIMESTAMP(3), "
             "r ROW<d DOUBLE>) WITH ('connector' = 'datagen', "
             "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
             "'fields.id.end' = '500', 'fields.n.min' = '5', 'fields.n.max' = "
             "'10', 'fields.n.null-rate' = '0.5', 'fields.name.length' = '20', "
             "'fields.r.d.min' = '-2', 'fields.r.d.max' = '2')",
             "g");
  sl_error err = {0};
  if (sl_source_datagen.validate(t, &err) != SL_OK)
    fail_msg("%s", err.message);
  reader r;
  reader_init(&r, t, NULL);
  dg_seen *c = calloc(1, sizeof *c);
  c->seq = field_of(&r, "id");
  c->num = field_of(&r, "n");
  c->str = field_of(&r, "name");
  c->ts = field_of(&r, "ts");
  c->d = field_of(&r, "r.d");
  /* the sequence bounds the run: 500 rows, each id once, over 3 workers */
  size_t total = 0;
  for (int w = 0; w < 3; w++) {
    run part;
    c->last_ts = 0;
    run_source(&sl_source_datagen, t, &r, w, 3, 64 * 1024, SIZE_MAX, &part,
               dg_row, c);
    total += part.n;
    run_free(&part);
  }
  assert_int_equal(total, 500);
  assert_int_equal(c->bad, 0);
  assert_true(c->nulls > 180 && c->nulls < 320);
  run one;
  run_source(&sl_source_datagen, t, &r, 0, 1, 64 * 1024, SIZE_MAX, &one, NULL,
             NULL);
  check_split(&sl_source_datagen, t, &r, &one, 2);
  run_free(&one);
  free(c);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

static void test_datagen_unbounded_default(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t =
      create(&s,
             "CREATE TABLE g (a TINYINT, b DECIMAL(10, 2), c BOOLEAN) WITH "
             "('connector' = 'datagen')",
             "g");
  reader r;
  reader_init(&r, t, NULL);
  run some;
  /* unbounded: it keeps going; stop after 10000 rows */
  run_source(&sl_source_datagen, t, &r, 0, 1, 64 * 1024, 10000, &some, NULL,
             NULL);
  assert_int_equal(some.n, 10000);
  run_free(&some);
  sl_arena_free(&r.a);
  sl_session_free(s);
}

/* ---- errors ------------------------------------------------------------- */

static void test_option_errors(void **state) {
  (void)state;
  validate_error(&sl_source_nexmark,
                 "CREATE TABLE x (event_type INT) WITH ('connector' = "
                 "'nexmark', 'events.nmu' = '5')",
                 "x", "unsupported option 'events.nmu'");
  validate_error(&sl_source_nexmark,
                 "CREATE TABLE x (event_type INT) WITH ('connector' = "
                 "'nexmark', 'events.nmu' = '5')",
                 "x", "'events.num'");
  validate_error(&sl_source_nexmark,
                 "CREATE TABLE x (event_type INT) WITH ('connector' = "
                 "'nexmark', 'events.num' = '-5')",
                 "x", "'events.num' must be >= 0");
  validate_error(&sl_source_nexmark,
                 "CREATE TABLE x (event_type INT) WITH ('connector' = "
                 "'nexmark', 'events.num' = 'many')",
                 "x", "events.num");
  validate_error(&sl_source_nexmark,
                 "CREATE TABLE x (event_type INT, foo BIGINT) WITH "
                 "('connector' = 'nexmark')",
                 "x", "column 'foo' is not produced");
  validate_error(&sl_source_nexmark,
                 "CREATE TABLE x (event_type INT, foo BIGINT) WITH "
                 "('connector' = 'nexmark')",
                 "x", "bid.price BIGINT");
  validate_error(&sl_source_nexmark,
                 "CREATE TABLE x (bid ROW<price STRING>) WITH ('connector' "
                 "= 'nexmark')",
                 "x", "'bid.price' is declared STRING");
  validate_error(&sl_source_nexmark,
                 "CREATE TABLE x (event_type INT) WITH ('connector' = "
                 "'nexmark', 'pregenerate' = 'true')",
                 "x", "'pregenerate' needs a bounded run");
  validate_error(&sl_source_nexmark,
                 "CREATE TABLE x (event_type INT) WITH ('connector' = "
                 "'nexmark', 'auction.proportion' = '0')",
                 "x", "'auction.proportion' must be between 1");
  validate_error(&sl_source_ro,
                 "CREATE TABLE x (key BIGINT) WITH ('connector' = 'ro', "
                 "'key.distribution' = 'normal')",
                 "x", "'uniform' or 'zipf'");
  validate_error(&sl_source_ro,
                 "CREATE TABLE x (key BIGINT) WITH ('connector' = 'ro', "
                 "'key.range' = '0')",
                 "x", "'key.range' must be > 0");
  validate_error(&sl_source_ysb,
                 "CREATE TABLE x (ad_id STRING, campaign_id STRING) WITH "
                 "('connector' = 'ysb')",
                 "x", "column 'campaign_id' is not produced");
  validate_error(&sl_source_ysb,
                 "CREATE TABLE x (ad_id STRING) WITH ('connector' = 'ysb', "
                 "'ysb.table' = 'ads')",
                 "x", "'ysb.table' must be");
  validate_error(&sl_source_cm,
                 "CREATE TABLE x (cpu STRING) WITH ('connector' = 'cm')", "x",
                 "'cpu' is declared STRING");
  validate_error(&sl_source_datagen,
                 "CREATE TABLE x (a INT) WITH ('connector' = 'datagen', "
                 "'fields.b.min' = '1')",
                 "x", "'fields.b.min' names no column");
  validate_error(&sl_source_datagen,
                 "CREATE TABLE x (a INT) WITH ('connector' = 'datagen', "
                 "'fields.a.mni' = '1')",
                 "x", "unsupported option 'fields.a.mni'");
  validate_error(&sl_source_datagen,
                 "CREATE TABLE x (a INT) WITH ('connector' = 'datagen', "
                 "'fields.a.kind' = 'sequence')",
                 "x", "needs 'fields.a.start'");
  validate_error(&sl_source_datagen,
                 "CREATE TABLE x (a TINYINT) WITH ('connector' = 'datagen', "
                 "'fields.a.max' = '1000')",
                 "x", "min <= max <= 127");
}

static void test_open_errors(void **state) {
  (void)state;
  /* open checks the leaves it is asked for, even without validate (which
   * CREATE TABLE runs): build the table by hand. */
  sl_session *s = sl_session_new();
  sl_table_def *def = sl_table_def_new(SL_TABLE_CONNECTOR, "x");
  sl_arena *da = &def->arena;
  def->ncolumns = 2;
  def->columns = SL_ANEW_N(da, sl_column, 2);
  def->columns[0].name = "event_type";
  def->columns[0].type = sl_type_new(da, SL_TYPE_INT);
  sl_type *row = sl_type_new(da, SL_TYPE_ROW);
  row->nfields = 1;
  row->fields = SL_ANEW_N(da, sl_type_field, 1);
  row->fields[0].name = "age";
  row->fields[0].type = sl_type_new(da, SL_TYPE_INT);
  def->columns[1].name = "person";
  def->columns[1].type = row;
  def->rowtime_column = -1;
  def->noptions = 2;
  def->options = SL_ANEW_N(da, sl_table_option, 2);
  def->options[0].key = "connector";
  def->options[0].value = "nexmark";
  def->options[1].key = "events.num";
  def->options[1].value = "10";
  sl_error add_err = {0};
  assert_int_equal(sl_catalog_add(sl_session_catalog(s), def, false, &add_err),
                   SL_OK);
  const sl_table_def *t = sl_catalog_find(sl_session_catalog(s), "x");
  reader r;
  reader_init(&r, t, NULL);
  sl_source_spec spec = {t, r.layout, r.leaf_index, 0, 1, 0, NULL, false, NULL};
  sl_source *src = NULL;
  sl_error err = {0};
  assert_int_equal(sl_source_nexmark.open(&spec, &src, &err), SL_EINVAL);
  assert_null(src);
  assert_non_null(strstr(err.message, "'person.age'"));
  sl_error_clear(&err);
  /* a leaf that is known works when asked for alone */
  const char *cols[] = {"event_type", NULL};
  reader r2;
  reader_init(&r2, t, cols);
  run one;
  run_source(&sl_source_nexmark, t, &r2, 0, 1, 64 * 1024, SIZE_MAX, &one, NULL,
             NULL);
  assert_int_equal(one.n, 10);
  run_free(&one);
  sl_arena_free(&r.a);
  sl_arena_free(&r2.a);
  sl_session_free(s);
}

static void test_registered(void **state) {
  (void)state;
  assert_ptr_equal(sl_source_connector_find("nexmark"), &sl_source_nexmark);
  assert_ptr_equal(sl_source_connector_find("ysb"), &sl_source_ysb);
  assert_ptr_equal(sl_source_connector_find("cm"), &sl_source_cm);
  assert_ptr_equal(sl_source_connector_find("ro"), &sl_source_ro);
  assert_ptr_equal(sl_source_connector_find("datagen"), &sl_source_datagen);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nexmark_ddl),
      cmocka_unit_test(test_nexmark_ids_and_skew),
      cmocka_unit_test(test_nexmark_determinism_and_projection),
      cmocka_unit_test(test_nexmark_extra_sizes),
      cmocka_unit_test(test_pregenerate_same_rows),
      cmocka_unit_test(test_sample_skips_pregenerate),
      cmocka_unit_test(test_ro_zipf_skew),
      cmocka_unit_test(test_ro_uniform_and_split),
      cmocka_unit_test(test_ro_zipf_large_range_and_time),
      cmocka_unit_test(test_rate_paces),
      cmocka_unit_test(test_ysb_events_and_campaigns),
      cmocka_unit_test(test_cm),
      cmocka_unit_test(test_datagen),
      cmocka_unit_test(test_datagen_unbounded_default),
      cmocka_unit_test(test_option_errors),
      cmocka_unit_test(test_open_errors),
      cmocka_unit_test(test_registered),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
