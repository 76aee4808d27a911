/* test_source_carriers.c - a filter pushed into the nexmark source (issue
 * 29): the events kept, the time carriers of a rechecked filter (connector.h:
 * the last of every SL_SOURCE_CARRY_EVERY events skipped in a row), live and
 * pre-generated, and nexmark's event-time guarantee (time_ordered).
 *
 * Separate from test_generators.c (the generators' own values), which is
 * at its size limit.  Expected counts follow from the generator's
 * definition: of every 1 + 3 + b events (b = 'bid.proportion', 46 by
 * default) the first is a person, the next three auctions, the rest
 * bids; worker w of n generates the blocks w, w + n, ... of GEN_BLOCK = 16
 * events (gen_common.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../connectors/sources/generators.h"
#include "sluice/session/session.h"

#define TABLE_SQL                                                              \
  "CREATE TABLE nx (event_type INT, person ROW<id BIGINT, dateTime "           \
  "TIMESTAMP(3)>, auction ROW<id BIGINT, dateTime %s, expires "                \
  "TIMESTAMP(3)>, bid ROW<price BIGINT, dateTime TIMESTAMP(3)>) WITH "         \
  "('connector' = 'nexmark', 'events.num' = '100000', "                        \
  "'first-event.rate' = '1000'%s)"

static const sl_table_def *create(sl_session **s, const char *auction_time,
                                  const char *options) {
  char sql[1024];
  snprintf(sql, sizeof sql, TABLE_SQL, auction_time, options);
  *s = sl_session_new();
  sl_error err = {0};
  sl_result_sink quiet = sl_result_sink_discard(NULL);
  if (sl_session_execute(*s, sql, strlen(sql), 1, &quiet, &err) != SL_OK)
    fail_msg("CREATE failed: %s", err.message);
  const sl_table_def *t = sl_catalog_find(sl_session_catalog(*s), "nx");
  assert_non_null(t);
  return t;
}

/* What one instance produced: rows per kind, and whether the event time
 * (the non-NULL one of the three dateTime leaves) ever went down. */
typedef struct tally {
  uint64_t kinds[3];
  uint64_t rows;
  bool decreasing;
} tally;

/* Read worker `worker` of `workers` with the filter event_type = kind. */
static void read_filtered(const sl_table_def *t, int worker, int workers,
                          int kind, bool rechecked, tally *out) {
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_leaf_columns lc;
  sl_table_leaf_columns(&a, t, &lc);
  /* event_type and the three dateTime leaves, in leaf order */
  static const char *const want[] = {"event_type", "person.dateTime",
                                     "auction.dateTime", "bid.dateTime"};
  int idx[4], et_leaf = -1;
  const char *names[4];
  const sl_type *types[4];
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < lc.n; i++)
      if (strcmp(lc.names[i], want[j]) == 0) {
        idx[j] = i;
        names[j] = lc.names[i];
        types[j] = lc.types[i];
        if (j == 0)
          et_leaf = i;
      }
  sl_row_layout *l = sl_row_layout_new(&a, 4, names, types);
  sl_source_filter f = {et_leaf, 1, {kind}, rechecked};
  sl_source_spec spec = {t, l, idx, worker, workers, 1, &f, false, NULL};
  sl_source *s;
  sl_error err = {0};
  if (sl_source_nexmark.open(&spec, &s, &err) != SL_OK)
    fail_msg("open failed: %s", err.message);
  sl_buffer buf;
  sl_buffer_init(&buf, l, 64 * 1024);
  memset(out, 0, sizeof *out);
  int64_t last = INT64_MIN;
  bool done = false;
  while (!done) {
    sl_buffer_clear(&buf);
    assert_int_equal(sl_source_nexmark.next(s, &buf, &done, &err), SL_OK);
    for (uint32_t r = 0; r < buf.nrows; r++) {
      const uint8_t *row = sl_buffer_row(&buf, r);
      int k = SL_FIELD(row, l, 0, int32_t);
      assert_true(k >= 0 && k <= 2);
      assert_false(sl_row_is_null(row, 1 + k));
      int64_t ts = SL_FIELD(row, l, 1 + k, int64_t);
      out->decreasing |= ts < last;
      last = ts;
      out->kinds[k]++;
      out->rows++;
    }
  }
  sl_source_nexmark.close(s);
  sl_buffer_free(&buf);
  sl_arena_free(&a);
}

static void test_kept_and_carriers(void **state) {
  (void)state;
  /* A person every 64 events: event 64j (1563 of 100,000). */
  const char *modes[2] = {", 'bid.proportion' = '60'",
                          ", 'bid.proportion' = '60', 'pregenerate' = 'true'"};
  for (int m = 0; m < 2; m++) {
    sl_session *s;
    const sl_table_def *t = create(&s, "TIMESTAMP(3)", modes[m]);
    tally c;
    /* Not rechecked: exactly the 1563 persons. */
    read_filtered(t, 0, 1, 0, false, &c);
    assert_int_equal(c.rows, 1563);
    assert_int_equal(c.kinds[0], 1563);
    /* Rechecked, one worker: persons come every 64 events, fewer than
     * SL_SOURCE_CARRY_EVERY, so no carrier. */
    read_filtered(t, 0, 1, 0, true, &c);
    assert_int_equal(c.rows, 1563);
    assert_int_equal(c.kinds[0], 1563);
    assert_false(c.decreasing);
    /* Worker 1 of 2 gets events 16..31 of every 32: never a person.  Not
     * rechecked: nothing; rechecked: the 1024th, 2048th, .. of its 50000
     * events, as time carriers, in order. */
    read_filtered(t, 1, 2, 0, false, &c);
    assert_int_equal(c.rows, 0);
    read_filtered(t, 1, 2, 0, true, &c);
    assert_int_equal(c.kinds[0], 0);
    assert_int_equal(c.rows, 50000 / SL_SOURCE_CARRY_EVERY);
    assert_false(c.decreasing);
    /* Bids, worker 0 of 2: events 0..15 and 32..47 of every 64, of which
     * 4..15 and 32..47 are bids (28), over 1562 whole cycles, then events
     * 99968..99983 (bids 99972..99983: 12). */
    read_filtered(t, 0, 2, 2, true, &c);
    assert_int_equal(c.kinds[2], 1562 * 28 + 12);
    assert_int_equal(c.rows, 1562 * 28 + 12);
    sl_session_free(s);
  }
}

static void test_time_ordered(void **state) {
  (void)state;
  sl_session *s;
  const sl_table_def *t = create(&s, "TIMESTAMP(3)", "");
  assert_true(sl_source_nexmark.time_ordered(t, "person.dateTime"));
  assert_true(sl_source_nexmark.time_ordered(t, "auction.dateTime"));
  assert_true(sl_source_nexmark.time_ordered(t, "bid.dateTime"));
  /* expires runs ahead of event time by a random span */
  assert_false(sl_source_nexmark.time_ordered(t, "auction.expires"));
  assert_false(sl_source_nexmark.time_ordered(t, "event_type"));
  sl_session_free(s);
  /* One dateTime cut to seconds, the others to milliseconds: an auction at
   * 5.000 s may follow a bid at 5.700 s. */
  t = create(&s, "TIMESTAMP(0)", "");
  assert_false(sl_source_nexmark.time_ordered(t, "bid.dateTime"));
  sl_session_free(s);
  /* Paced: kept rows would come rarer in wall-clock time than today's. */
  t = create(&s, "TIMESTAMP(3)", ", 'events.rate' = '1000'");
  assert_false(sl_source_nexmark.time_ordered(t, "bid.dateTime"));
  sl_session_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kept_and_carriers),
      cmocka_unit_test(test_time_ordered),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
