/* test_cost_model.c - the planner's strategy choice (planner/cost_model.c)
 * through EXPLAIN with SET 'sluice.strategy' = 'auto': statistics are
 * sampled from the source, the machine is calibrated, and the choice and
 * its reasons are printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/common/strbuf.h"
#include "sluice/session/session.h"

static int keep_text(void *c, const char *t) {
  if (c)
    sl_strbuf_append(c, t);
  return SL_OK;
}

static void run(sl_session *s, const char *sql, sl_strbuf *out) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = out; /* statements here print text, no rows */
  sink.text = keep_text;
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
}

/* EXPLAIN a per-key count over table t; returns the chosen strategy's
 * "Why" header line found in the output ("late-merge" or "repartition"). */
static const char *chosen(sl_session *s, const char *table, sl_strbuf *out) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "EXPLAIN SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE %s, "
           "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY key, "
           "window_start, window_end",
           table);
  sl_strbuf_reset(out);
  run(s, sql, out);
  const char *w = strstr(sl_strbuf_cstr(out), "== Why ");
  assert_non_null(w);
  assert_non_null(strstr(w, "estimates per state slice"));
  return strstr(w, "== Why repartition ==") == w ? "repartition" : "late-merge";
}

static void test_few_groups_and_skew_choose_late_merge(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  sl_strbuf out = SL_STRBUF_INIT;
  run(s, "SET 'parallelism.default' = '2'", NULL);
  run(s,
      "CREATE TABLE few (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
      "ts) WITH ('connector' = 'ro', 'key.range' = '1000', 'events.num' = "
      "'5000000')",
      NULL);
  run(s,
      "CREATE TABLE skewed (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts "
      "AS ts) WITH ('connector' = 'ro', 'key.range' = '100000000', "
      "'key.distribution' = 'zipf', 'zipf.z' = '1.5', 'events.num' = "
      "'50000000')",
      NULL);
  /* Few groups, uniform keys: partial counts collapse locally. */
  assert_string_equal(chosen(s, "few", &out), "late-merge");
  assert_non_null(strstr(sl_strbuf_cstr(&out), "1000 groups"));
  /* each worker meets all 1000 keys: its first tables are sized so */
  assert_non_null(strstr(sl_strbuf_cstr(&out), "sized for 1000 groups"));
  /* Zipf-skewed keys: the heavy key would overload its owner. */
  assert_string_equal(chosen(s, "skewed", &out), "late-merge");
  assert_non_null(strstr(sl_strbuf_cstr(&out), "heaviest key 3"));
  /* One worker: nothing to choose. */
  run(s, "SET 'parallelism.default' = '1'", NULL);
  sl_strbuf_reset(&out);
  run(s,
      "EXPLAIN SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE few, "
      "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY key, window_start, "
      "window_end",
      &out);
  assert_non_null(strstr(sl_strbuf_cstr(&out), "one worker"));
  sl_strbuf_free(&out);
  sl_session_free(s);
}

/* Tens of millions of distinct keys, about one record per key per window:
 * nothing collapses locally, so late merge would fold every record and
 * then merge almost every group again, while the owners of repartitioned
 * keys hold disjoint tables that are emitted without merging.  The margin
 * in the model is large (routing a record costs a fraction of merging a
 * group out of cache), so calibration noise does not flip it. */
static void test_many_distinct_keys_choose_repartition(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  sl_strbuf out = SL_STRBUF_INIT;
  run(s, "SET 'parallelism.default' = '2'", NULL);
  run(s,
      "CREATE TABLE wide (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
      "ts) WITH ('connector' = 'ro', 'key.range' = '100000000', "
      "'events.num' = '100000000')",
      NULL);
  assert_string_equal(chosen(s, "wide", &out), "repartition");
  /* 10 s windows at 1M events/s: about 10M records and 9.5M groups. */
  const char *est = strstr(sl_strbuf_cstr(&out), "records, ");
  assert_non_null(est);
  long groups = strtol(est + strlen("records, "), NULL, 10);
  assert_true(groups > 9000000 && groups < 10500000);
  /* an owner's first tables hold its half of the keys */
  const char *sized = strstr(sl_strbuf_cstr(&out), "sized for ");
  assert_non_null(sized);
  long per = strtol(sized + strlen("sized for "), NULL, 10);
  assert_true(per > groups * 45 / 100 && per < groups * 55 / 100);
  sl_strbuf_free(&out);
  sl_session_free(s);
}

/* COUNT(DISTINCT) of a high-cardinality column over few groups: each
 * worker's grow-only sets hold almost every value, and merging them costs
 * as much as building them; repartitioning on the group key builds each
 * set once. */
static void
test_count_distinct_high_cardinality_chooses_repartition(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  sl_strbuf out = SL_STRBUF_INIT;
  run(s, "SET 'parallelism.default' = '2'", NULL);
  run(s,
      "CREATE TABLE wide (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
      "ts) WITH ('connector' = 'ro', 'key.range' = '67108864', "
      "'events.num' = '100000000')",
      NULL);
  run(s,
      "EXPLAIN SELECT MOD(key, 100), COUNT(DISTINCT key) FROM "
      "TABLE(TUMBLE(TABLE wide, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
      "GROUP BY MOD(key, 100), window_start, window_end",
      &out);
  const char *w = strstr(sl_strbuf_cstr(&out), "== Why ");
  assert_non_null(w);
  assert_ptr_equal(strstr(w, "== Why repartition =="), w);
  assert_non_null(strstr(w, "100 groups"));
  /* The same columns without DISTINCT collapse to 100 counters: late
   * merge. */
  sl_strbuf_reset(&out);
  run(s,
      "EXPLAIN SELECT MOD(key, 100), COUNT(key) FROM "
      "TABLE(TUMBLE(TABLE wide, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
      "GROUP BY MOD(key, 100), window_start, window_end",
      &out);
  w = strstr(sl_strbuf_cstr(&out), "== Why ");
  assert_non_null(w);
  assert_ptr_equal(strstr(w, "== Why late-merge =="), w);
  sl_strbuf_free(&out);
  sl_session_free(s);
}

/* EXPLAIN of a one-second-slide HOP count per key over table mid (10
 * windows per slice); returns the "Why" block. */
static const char *hop_why(sl_session *s, sl_strbuf *out) {
  sl_strbuf_reset(out);
  run(s,
      "EXPLAIN SELECT key, COUNT(*) FROM TABLE(HOP(TABLE mid, "
      "DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '10' SECOND)) GROUP BY "
      "key, window_start, window_end",
      out);
  const char *w = strstr(sl_strbuf_cstr(out), "== Why ");
  assert_non_null(w);
  assert_non_null(strstr(w, "estimates per state slice"));
  return w;
}

/* 20,000 keys met by every worker in every one-second slice of a HOP
 * window of ten: in one process the workers' partials merge once per
 * slice and late merge wins by half; on two nodes each node's partial
 * crosses to the partition leaders once per window of the slice (ten
 * times), which costs more than routing the records (measured on q5: 0.90
 * s under late merge at leaders against 0.60 s repartitioned). */
static void test_nodes_weigh_the_state_crossing_between_them(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  sl_strbuf out = SL_STRBUF_INIT;
  run(s,
      "CREATE TABLE mid (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
      "ts) WITH ('connector' = 'ro', 'key.range' = '20000', 'events.num' = "
      "'20000000')",
      NULL);
  run(s, "SET 'parallelism.default' = '2'", NULL);
  const char *w = hop_why(s, &out);
  assert_ptr_equal(strstr(w, "== Why late-merge =="), w);
  assert_null(strstr(w, "nodes"));
  /* Two nodes of one worker each: not "one worker", and the crossing is
   * in the reasons. */
  run(s, "SET 'parallelism.default' = '1'", NULL);
  run(s, "SET 'sluice.nodes' = '2'", NULL);
  w = hop_why(s, &out);
  assert_null(strstr(w, "one worker"));
  assert_ptr_equal(strstr(w, "== Why repartition =="), w);
  assert_non_null(strstr(w, "on 2 nodes: a node's partial crosses to other "
                            "processes 10 times per slice"));
  /* Merging at the coordinator takes every node's partials in one
   * process: dearer still. */
  run(s, "SET 'sluice.late-merge' = 'coordinator'", NULL);
  w = hop_why(s, &out);
  assert_ptr_equal(strstr(w, "== Why repartition =="), w);
  sl_strbuf_free(&out);
  sl_session_free(s);
}

/* YSB: the group key (campaign_id) comes from the lookup join's table.
 * The stream is sampled on its join key for the rate and the table for
 * the number of group keys: 100 campaigns, so partial counts collapse
 * and late merge wins. */
static void test_group_key_from_joined_table(void **state) {
  (void)state;
  sl_session *s = sl_session_new();
  sl_strbuf out = SL_STRBUF_INIT;
  run(s, "SET 'parallelism.default' = '2'", NULL);
  run(s,
      "CREATE TABLE ysb_events (user_id STRING, page_id STRING, ad_id "
      "STRING, ad_type STRING, event_type STRING, event_time TIMESTAMP(3), "
      "ip_address STRING, WATERMARK FOR event_time AS event_time - INTERVAL "
      "'1' SECOND) WITH ('connector' = 'ysb', 'events.num' = '3000000', "
      "'events.per-second' = '100000', 'seed' = '1')",
      NULL);
  run(s,
      "CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) WITH "
      "('connector' = 'ysb', 'ysb.table' = 'campaigns')",
      NULL);
  run(s,
      "EXPLAIN SELECT c.campaign_id, window_start, window_end, COUNT(*) "
      "FROM TABLE(TUMBLE(TABLE ysb_events, DESCRIPTOR(event_time), INTERVAL "
      "'10' SECOND)) AS e JOIN campaigns AS c ON e.ad_id = c.ad_id WHERE "
      "e.event_type = 'view' GROUP BY c.campaign_id, window_start, "
      "window_end",
      &out);
  const char *w = strstr(sl_strbuf_cstr(&out), "== Why ");
  assert_non_null(w);
  assert_ptr_equal(strstr(w, "== Why late-merge =="), w);
  assert_non_null(strstr(w, "(join key) and 1000 of campaigns"));
  const char *g = strstr(w, "records, ");
  assert_non_null(g);
  long groups = strtol(g + strlen("records, "), NULL, 10);
  assert_true(groups >= 95 && groups <= 105);
  sl_strbuf_free(&out);
  sl_session_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_few_groups_and_skew_choose_late_merge),
      cmocka_unit_test(test_many_distinct_keys_choose_repartition),
      cmocka_unit_test(test_group_key_from_joined_table),
      cmocka_unit_test(test_nodes_weigh_the_state_crossing_between_them),
      cmocka_unit_test(
          test_count_distinct_high_cardinality_chooses_repartition),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
