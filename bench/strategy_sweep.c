/* strategy_sweep.c - late merge against repartitioning, side by side.
 *
 * The Read-Only workload (COUNT(*) per key per 1 s tumbling window over
 * (key, ts) pairs from the `ro` generator, pre-generated) for key ranges
 * from 1K to 64M and zipf exponents 0 (uniform) to 2.0, with both
 * strategies forced, 2 workers, median of 3 runs each; then YSB (views per
 * campaign after the lookup join, and views per ad) the same way.  Prints
 * markdown tables with the faster strategy per cell, the ratio and what
 * SET 'sluice.strategy' = 'auto' chose, and each strategy's peak resident
 * memory (the largest of its runs, each a forked child) beside the input
 * the source pre-generated.
 *
 *   build/bench/strategy_sweep [events] [runs]     (default 10000000 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sluice/binder/binder.h"
#include "sluice/exec/executor.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/plan.h"
#include "sluice/session/session.h"

static int keep_text(void *c, const char *t) {
  size_t n = strlen((char *)c);
  snprintf((char *)c + n, 65536 - n, "%s", t);
  return SL_OK;
}

/* What SET 'sluice.strategy' = 'auto' chooses (EXPLAIN's "== Why"). */
static const char *auto_choice(sl_session *s, const char *query) {
  static char text[65536];
  text[0] = '\0';
  char sql[1024];
  snprintf(sql, sizeof sql, "EXPLAIN %s", query);
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = text; /* EXPLAIN prints text, no rows */
  sink.text = keep_text;
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK) {
    fprintf(stderr, "strategy_sweep: %s\n", err.message);
    exit(1);
  }
  return strstr(text, "== Why repartition ==") ? "repartition" : "late merge";
}

/* The RO query: COUNT(*) per key per 1 s window. */
static const char *QUERY =
    "SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE ro, DESCRIPTOR(ts), "
    "INTERVAL '1' SECOND)) GROUP BY key, window_start, window_end";

/* Records/s of runs of the query: the median, and "M (min-max)" in cell;
 * the largest peak resident memory of the runs (each a forked child,
 * bench_forked) in *peak, the input the source pre-generated in *input. */
static double measure(sl_session *s, const char *query, sl_strategy strategy,
                      int runs, char cell[48], double *peak, double *input) {
  double rate[16];
  *peak = 0;
  for (int r = 0; r < runs; r++) {
    sl_query_stats qs;
    uint64_t bytes;
    if (bench_run_measured(s, query, (int)strategy, &qs, &bytes))
      exit(1);
    rate[r] = (double)qs.events / qs.seconds;
    if ((double)bytes > *peak)
      *peak = (double)bytes;
    *input = (double)qs.input_bytes;
  }
  qsort(rate, (size_t)runs, sizeof(double), bench_cmp_double);
  snprintf(cell, 48, "%.1f M (%.1f-%.1f)", rate[runs / 2] / 1e6, rate[0] / 1e6,
           rate[runs - 1] / 1e6);
  return rate[runs / 2];
}

/* One table row: both strategies measured side by side, and auto's
 * choice. */
static void row(sl_session *s, const char *cell, const char *query, int runs) {
  const char *choice = auto_choice(s, query);
  char lm_cell[48], rp_cell[48];
  double lm_peak, rp_peak, input = 0;
  double lm = measure(s, query, SL_STRATEGY_LATE_MERGE, runs, lm_cell, &lm_peak,
                      &input);
  double rp = measure(s, query, SL_STRATEGY_REPARTITION, runs, rp_cell,
                      &rp_peak, &input);
  const char *faster = lm >= rp ? "late merge" : "repartition";
  double ratio = lm >= rp ? lm / rp : rp / lm;
  const double mib = 1048576.0;
  printf("| %s | %s | %s | %s | %.2fx | %s | %s | %.0f / %.0f | %.0f |\n", cell,
         lm_cell, rp_cell, faster, ratio, choice,
         ratio <= 1.2                  ? "(within 20%)"
         : strcmp(choice, faster) == 0 ? "yes"
                                       : "NO",
         lm_peak / mib, rp_peak / mib, input / mib);
  fflush(stdout);
}

int main(int argc, char **argv) {
  long events = argc > 1 ? atol(argv[1]) : 10000000;
  int runs = argc > 2 ? atoi(argv[2]) : 3;
  if (runs < 1 || runs > 16 || events < 1000) {
    fprintf(stderr, "usage: strategy_sweep [events >= 1000] [runs 1..16]\n");
    return 2;
  }
  static const long ranges[] = {1000, 65536, 1048576, 67108864};
  static const char *const zs[] = {"0", "1.0", "1.5", "2.0"};
  printf("RO, %ld events (1M per second of event time: 1 s windows of 1M "
         "events), 2 workers, median (min-max) of %d runs, records/s\n\n",
         events, runs);
  printf("| key range | zipf z | late merge | repartition | faster | ratio | "
         "auto chose | right? | peak RSS MiB, late merge / repartition | "
         "input MiB |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- "
         "| --- |\n");
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
    for (size_t j = 0; j < sizeof zs / sizeof zs[0]; j++) {
      sl_session *s = sl_session_new();
      char ddl[512];
      snprintf(ddl, sizeof ddl,
               "CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts "
               "AS ts) WITH ('connector' = 'ro', 'events.num' = '%ld', "
               "'key.range' = '%ld', 'key.distribution' = '%s', 'zipf.z' = "
               "'%s', 'pregenerate' = 'true', 'seed' = '3')",
               events, ranges[i], strcmp(zs[j], "0") ? "zipf" : "uniform",
               strcmp(zs[j], "0") ? zs[j] : "1.0");
      if (bench_exec(s, ddl) ||
          bench_exec(s, "SET 'parallelism.default' = '2'"))
        return 1;
      char cell[64];
      snprintf(cell, sizeof cell, "%ld | %s", ranges[i], zs[j]);
      row(s, cell, QUERY, runs);
      sl_session_free(s);
    }
  /* YSB (examples/ysb.sql): views per campaign (100 keys) per 10 s
   * window, after a lookup join with the campaigns table; and the same
   * per ad (1000 keys). */
  printf("\nYSB, %ld events (pre-generated, 100K per second of event time), "
         "2 workers, median (min-max) of %d runs, records/s\n\n",
         events, runs);
  printf("| key | groups | late merge | repartition | faster | ratio | auto "
         "chose | right? | peak RSS MiB, late merge / repartition | input MiB "
         "|\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  sl_session *s = sl_session_new();
  char ddl[1024];
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE ysb_events (user_id STRING, page_id STRING, ad_id "
           "STRING, ad_type STRING, event_type STRING, event_time "
           "TIMESTAMP(3), ip_address STRING, WATERMARK FOR event_time AS "
           "event_time - INTERVAL '1' SECOND) WITH ('connector' = 'ysb', "
           "'events.num' = '%ld', 'events.per-second' = '100000', 'seed' = "
           "'1', 'pregenerate' = 'true')",
           events);
  if (bench_exec(s, ddl) ||
      bench_exec(s, "CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) "
                    "WITH ('connector' = 'ysb', 'ysb.table' = 'campaigns')") ||
      bench_exec(s, "SET 'parallelism.default' = '2'"))
    return 1;
  row(s, "campaign_id | 100",
      "SELECT c.campaign_id, window_start, window_end, COUNT(*) AS views "
      "FROM TABLE(TUMBLE(TABLE ysb_events, DESCRIPTOR(event_time), "
      "INTERVAL '10' SECOND)) AS e JOIN campaigns AS c ON e.ad_id = c.ad_id "
      "WHERE e.event_type = 'view' GROUP BY c.campaign_id, window_start, "
      "window_end",
      runs);
  row(s, "ad_id | 1000",
      "SELECT ad_id, window_start, window_end, COUNT(*) AS views FROM "
      "TABLE(TUMBLE(TABLE ysb_events, DESCRIPTOR(event_time), INTERVAL "
      "'10' SECOND)) WHERE event_type = 'view' GROUP BY ad_id, "
      "window_start, window_end",
      runs);
  sl_session_free(s);
  return 0;
}
