/* jit_bench.c - compiled vs interpreted pipelines, side by side in one run.
 *
 * Over input the generators pre-generate into memory before the clock
 * starts, at 1 worker:
 *   - YSB (filter views, lookup join ad -> campaign, count per campaign per
 *     10 s tumbling window);
 *   - NEXMark q1 (currency conversion: 0.908 * price, a DECIMAL product,
 *     into output rows);
 *   - NEXMark q2 (a filter: MOD(auction, 123) = 0);
 * each with SET 'sluice.jit' = 'off' and 'on' (the default pass pipeline);
 * then YSB and q2 per pass pipeline (O0..O3, light, fast; runs
 * interleaved so that the shared machine's drift hits all alike) with
 * YSB's compile time and both records/s, and the total time of a
 * 10-second query at that rate.
 * Then the window state update (JIT phase 2): YSB and the Read-Only
 * COUNT(*) per key per 1 s tumbling window at 1K and 1M keys (uniform),
 * interpreted vs phase 1 (compiled loop, C fold: SET
 * 'sluice.jit.state-update' = 'off') vs phase 2 (state update compiled),
 * runs interleaved.
 * Medians of `runs` runs, min and max beside.  With "phase2" as the fourth
 * argument, only the phase 2 table.
 *
 *   build/bench/jit_bench [ysb events] [nexmark events] [runs] [phase2]
 *                                      (default 10000000 5000000 5)
 */
#include "bench_util.h"

/* Run `sql` once with the session's settings: records/s and JIT time. */
static int run_once(sl_session *s, const char *sql, double *rate,
                    double *jit_s) {
  sl_query_stats qs;
  int rc = bench_run(s, sql, -1, &qs);
  if (rc == SL_OK) {
    *rate = (double)qs.events / qs.seconds;
    *jit_s = qs.jit_seconds;
  }
  return rc;
}

typedef struct result {
  double med, min, max, jit_ms;
} result;

/* Median, min and max of runs rates, median compile time. */
static void summarize(double *rate, double *jit, int runs, result *r) {
  qsort(rate, (size_t)runs, sizeof(double), bench_cmp_double);
  qsort(jit, (size_t)runs, sizeof(double), bench_cmp_double);
  r->med = rate[runs / 2];
  r->min = rate[0];
  r->max = rate[runs - 1];
  r->jit_ms = jit[runs / 2] * 1000;
}

static int measure(sl_session *s, const char *sql, int runs, result *r) {
  double rate[99], jit[99];
  for (int i = 0; i < runs; i++)
    if (run_once(s, sql, &rate[i], &jit[i]))
      return 1;
  summarize(rate, jit, runs, r);
  return 0;
}

static const char *YSB = BENCH_YSB_QUERY;

/* Into blackhole tables (as the NEXMark scripts do), so that formatting
 * rows for the shell is not what is measured. */
static const char *Q1 = "INSERT INTO nexmark_q1 SELECT auction, bidder, "
                        "0.908 * price AS price, dateTime, extra FROM bid";

static const char *Q2 = "INSERT INTO nexmark_q2 SELECT auction, price FROM "
                        "bid WHERE MOD(auction, 123) = 0";

/* Interpreted, phase 1 and phase 2 side by side (see the top). */
static int phase2(sl_session *s, long events, int runs) {
  char ddl[1024];
  for (int t = 0; t < 2; t++) {
    snprintf(ddl, sizeof ddl,
             "CREATE TABLE ro_%s (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR "
             "ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'ro', "
             "'key.range' = '%s', 'events.num' = '%ld', 'events.per-second' = "
             "'1000000', 'pregenerate' = 'true', 'seed' = '3')",
             t ? "1m" : "1k", t ? "1000000" : "1000", events);
    if (bench_exec(s, ddl))
      return 1;
  }
  if (bench_exec(s, "CREATE TABLE ro_out (key BIGINT, ws TIMESTAMP(3), c "
                    "BIGINT) WITH ('connector' = 'blackhole')"))
    return 1;
  /* sluice.jit, sluice.jit.state-update, sluice.jit.join-probe */
  static const char *const modes[4][3] = {{"off", "off", "off"},
                                          {"on", "off", "off"},
                                          {"on", "on", "off"},
                                          {"on", "on", "on"}};
  static const char *const keys[3] = {"sluice.jit", "sluice.jit.state-update",
                                      "sluice.jit.join-probe"};
  struct {
    const char *name, *sql;
    bool join;
  } qs[] = {
      {"YSB", YSB, true},
      /* into a blackhole table: with a million groups per window, the
       * discarding result sink would measure the rows' text formatting */
      {"RO COUNT(*) per key, 1 s tumble, 1K keys",
       "INSERT INTO ro_out SELECT key, window_start, COUNT(*) FROM "
       "TABLE(TUMBLE(TABLE ro_1k, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP "
       "BY key, window_start, window_end",
       false},
      {"RO COUNT(*) per key, 1 s tumble, 1M keys",
       "INSERT INTO ro_out SELECT key, window_start, COUNT(*) FROM "
       "TABLE(TUMBLE(TABLE ro_1m, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP "
       "BY key, window_start, window_end",
       false},
  };
  printf("Compiled steps, 1 worker, %ld events each, median of %d runs "
         "interleaved (interpreted; phase 1: compiled loops, the join probe "
         "and the state update in C; + the state update compiled (phase 2); "
         "+ the join probe compiled into the loop; then again)\n\n",
         events, runs);
  printf("| query | interpreted records/s | phase 1 records/s | + state "
         "update records/s | + join probe records/s | all / phase 1 | all / "
         "interpreted |\n| --- | --- | --- | --- | --- | --- | --- |\n");
  for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++) {
    static double rate[4][99], jit[4][99];
    int nm = qs[q].join ? 4 : 3; /* no join: nothing more to compile */
    for (int i = 0; i < runs; i++)
      for (int m = 0; m < nm; m++) {
        for (int k = 0; k < 3; k++) {
          char set[128];
          snprintf(set, sizeof set, "SET '%s' = '%s'", keys[k], modes[m][k]);
          bench_exec(s, set);
        }
        if (run_once(s, qs[q].sql, &rate[m][i], &jit[m][i]))
          return 1;
      }
    result r[4];
    for (int m = 0; m < nm; m++)
      summarize(rate[m], jit[m], runs, &r[m]);
    char probe[64] = "(no join)";
    if (qs[q].join)
      snprintf(probe, sizeof probe, "%.1f M (%.1f-%.1f)", r[3].med / 1e6,
               r[3].min / 1e6, r[3].max / 1e6);
    const result *all = &r[nm - 1];
    printf("| %s | %.1f M (%.1f-%.1f) | %.1f M (%.1f-%.1f) | %.1f M "
           "(%.1f-%.1f) | %s | %.2fx | %.2fx |\n",
           qs[q].name, r[0].med / 1e6, r[0].min / 1e6, r[0].max / 1e6,
           r[1].med / 1e6, r[1].min / 1e6, r[1].max / 1e6, r[2].med / 1e6,
           r[2].min / 1e6, r[2].max / 1e6, probe, all->med / r[1].med,
           all->med / r[0].med);
    fflush(stdout);
  }
  for (int k = 0; k < 3; k++) {
    char set[128];
    snprintf(set, sizeof set, "RESET '%s'", keys[k]);
    bench_exec(s, set);
  }
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  long ysb_events = argc > 1 ? atol(argv[1]) : 10000000;
  long nx_events = argc > 2 ? atol(argv[2]) : 5000000;
  int runs = argc > 3 ? atoi(argv[3]) : 5;
  if (runs < 1 || runs > 99 || ysb_events < 1000 || nx_events < 1000) {
    fprintf(stderr, "usage: jit_bench [ysb events] [nexmark events] "
                    "[runs 1..99]\n");
    return 2;
  }
  sl_session *s = sl_session_new();
  char ddl[4096];
  if (bench_ysb_tables(s, ysb_events))
    return 1;
  snprintf(
      ddl, sizeof ddl,
      "CREATE TABLE datagen (event_type INT, person ROW<id BIGINT, name "
      "VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, "
      "state VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>, auction "
      "ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid "
      "BIGINT, reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), "
      "seller BIGINT, category BIGINT, extra VARCHAR>, bid ROW<auction "
      "BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, "
      "dateTime TIMESTAMP(3), extra VARCHAR>, dateTime AS CASE WHEN "
      "event_type = 0 THEN person.dateTime WHEN event_type = 1 THEN "
      "auction.dateTime ELSE bid.dateTime END, WATERMARK FOR dateTime AS "
      "dateTime - INTERVAL '4' SECOND) WITH ('connector' = 'nexmark', "
      "'first-event.rate' = '10000000', 'next-event.rate' = '10000000', "
      "'events.num' = '%ld', 'pregenerate' = 'true')",
      nx_events);
  if (bench_exec(s, ddl) ||
      bench_exec(s, "CREATE VIEW bid AS SELECT bid.auction, bid.bidder, "
                    "bid.price, bid.channel, bid.url, dateTime, bid.extra FROM "
                    "datagen WHERE event_type = 2") ||
      bench_exec(s,
                 "CREATE TABLE nexmark_q1 (auction BIGINT, bidder BIGINT, "
                 "price DECIMAL(23, 3), dateTime TIMESTAMP(3), extra VARCHAR) "
                 "WITH ('connector' = 'blackhole')") ||
      bench_exec(s,
                 "CREATE TABLE nexmark_q2 (auction BIGINT, price BIGINT) WITH "
                 "('connector' = 'blackhole')") ||
      bench_exec(s, "SET 'parallelism.default' = '1'"))
    return 1;

  if (phase2(s, ysb_events, runs))
    return 1;
  if (argc > 4 && strcmp(argv[4], "phase2") == 0) {
    sl_session_free(s);
    return 0;
  }

  struct {
    const char *name, *sql;
  } qs[] = {{"YSB", YSB},
            {"NEXMark q1 (projection)", Q1},
            {"NEXMark q2 (filter)", Q2}};
  printf("1 worker, %ld YSB / %ld NEXMark events pre-generated, median of "
         "%d runs\n\n",
         ysb_events, nx_events, runs);
  printf("| query | interpreted records/s | compiled records/s | speed-up | "
         "compile time |\n| --- | --- | --- | --- | --- |\n");
  for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    result r[2];
    for (int jit = 0; jit < 2; jit++) {
      bench_exec(s,
                 jit ? "SET 'sluice.jit' = 'on'" : "SET 'sluice.jit' = 'off'");
      if (measure(s, qs[i].sql, runs, &r[jit]))
        return 1;
    }
    printf("| %s | %.1f M (%.1f-%.1f) | %.1f M (%.1f-%.1f) | %.2fx | %.1f ms "
           "|\n",
           qs[i].name, r[0].med / 1e6, r[0].min / 1e6, r[0].max / 1e6,
           r[1].med / 1e6, r[1].min / 1e6, r[1].max / 1e6, r[1].med / r[0].med,
           r[1].jit_ms);
    fflush(stdout);
  }

  static const char *const pipelines[] = {"O0", "O1",    "O2",
                                          "O3", "light", "fast"};
  enum { NP = sizeof pipelines / sizeof pipelines[0] };
  printf("\nPer pass pipeline (SET 'sluice.jit.passes'), runs interleaved "
         "(run 1 of every pipeline, then run 2, ...): YSB's compile time (2 "
         "kernels) and records/s, NEXMark q2's records/s (its time is nearly "
         "all in its kernel); total = compile + the records of a 10-second "
         "YSB run with O2 at that rate\n\n");
  printf("| passes | YSB compile time | YSB records/s | q2 records/s | 10 s "
         "YSB query total |\n| --- | --- | --- | --- | --- |\n");
  bench_exec(s, "SET 'sluice.jit' = 'on'");
  static double yr[NP][99], yj[NP][99], qr[NP][99], qj[NP][99];
  for (int i = 0; i < runs; i++)
    for (int p = 0; p < NP; p++) {
      char set[128];
      snprintf(set, sizeof set, "SET 'sluice.jit.passes' = '%s'", pipelines[p]);
      bench_exec(s, set);
      if (run_once(s, YSB, &yr[p][i], &yj[p][i]) ||
          run_once(s, Q2, &qr[p][i], &qj[p][i]))
        return 1;
    }
  result r[NP], r2[NP];
  for (int p = 0; p < NP; p++) {
    summarize(yr[p], yj[p], runs, &r[p]);
    summarize(qr[p], qj[p], runs, &r2[p]);
  }
  double records = r[2].med * 10; /* what O2 does in 10 s */
  for (int p = 0; p < NP; p++)
    printf("| %s | %.1f ms | %.1f M (%.1f-%.1f) | %.1f M (%.1f-%.1f) | %.3f "
           "s |\n",
           pipelines[p], r[p].jit_ms, r[p].med / 1e6, r[p].min / 1e6,
           r[p].max / 1e6, r2[p].med / 1e6, r2[p].min / 1e6, r2[p].max / 1e6,
           r[p].jit_ms / 1000 + records / r[p].med);
  sl_session_free(s);
  return 0;
}
