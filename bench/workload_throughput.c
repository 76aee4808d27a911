/* workload_throughput.c - the three standard workloads through the whole
 * engine, interpreted and compiled, at 1 and 2 workers, against the
 * machine's memory bandwidth.
 *
 * Over input the generators pre-generate into memory before the clock
 * starts ('pregenerate'):
 *   - YSB: filter views, join ad -> campaign, COUNT(*) per campaign per
 *     10 s tumbling window (bench_util.h);
 *   - CM (Cluster Monitoring): AVG(cpu) per job per 2 s tumbling window;
 *   - RO (Read-Only): COUNT(*) per key per 1 s tumbling window, uniform
 *     keys in a range of 1,000;
 * each with SET 'sluice.jit' = 'off' and 'on', at 1 and 2 workers, runs
 * interleaved (every configuration once, then again), median of `runs`
 * with min and max.  "% of bound" is records/s x the bytes per record the
 * source hands the pipeline (row width of the leaves read plus long
 * string bytes) / the single-thread memcpy bandwidth measured first.
 * Each run is a forked child (bench_forked), so its peak resident memory
 * is its own: the table shows the largest of each configuration's runs,
 * the input the source pre-generated (EXPLAIN ANALYZE's Source bytes=),
 * and the compiled runs' memory beyond it.
 * Results go into blackhole tables, so result formatting is not measured.
 *
 *   build/bench/workload_throughput [events] [runs]  (default 10000000 5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sluice/common/clock.h"

typedef struct workload {
  const char *name, *sql;
  int bytes; /* per record handed to the pipeline (see above) */
} workload;

int main(int argc, char **argv) {
  long events = argc > 1 ? atol(argv[1]) : 10000000;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  if (runs < 1 || runs > 99 || events < 1000) {
    fprintf(stderr,
            "usage: workload_throughput [events >= 1000] [runs 1..99]\n");
    return 2;
  }
  double bw = bench_memcpy_bandwidth();
  sl_session *s = sl_session_new();
  char ddl[1024];
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE cm (`timestamp` TIMESTAMP(3), job_id BIGINT, task_id "
           "BIGINT, machine_id BIGINT, event_type INT, user_id BIGINT, "
           "category INT, priority INT, cpu DOUBLE, ram DOUBLE, disk DOUBLE, "
           "constraints INT, WATERMARK FOR `timestamp` AS `timestamp` - "
           "INTERVAL '1' SECOND) WITH ('connector' = 'cm', 'events.num' = "
           "'%ld', 'pregenerate' = 'true')",
           events);
  if (bench_ysb_tables(s, events) || bench_exec(s, ddl))
    return 1;
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
           "ts - INTERVAL '1' SECOND) WITH ('connector' = 'ro', 'key.range' = "
           "'1000', 'events.num' = '%ld', 'events.per-second' = '1000000', "
           "'pregenerate' = 'true', 'seed' = '3')",
           events);
  if (bench_exec(s, ddl) ||
      bench_exec(s, "CREATE TABLE ysb_out (campaign_id STRING, ws "
                    "TIMESTAMP(3), we TIMESTAMP(3), views BIGINT) WITH "
                    "('connector' = 'blackhole')") ||
      bench_exec(s, "CREATE TABLE cm_out (job_id BIGINT, ws TIMESTAMP(3), "
                    "cpu DOUBLE) WITH ('connector' = 'blackhole')") ||
      bench_exec(s, "CREATE TABLE ro_out (key BIGINT, ws TIMESTAMP(3), c "
                    "BIGINT) WITH ('connector' = 'blackhole')"))
    return 1;
  static char ysb[1024];
  snprintf(ysb, sizeof ysb, "INSERT INTO ysb_out %s", BENCH_YSB_QUERY);
  /* bytes: YSB reads ad_id and event_type (16-byte strings, ad_id's 36
   * bytes in the heap) and event_time, with a null byte word: 48 + 36;
   * CM reads timestamp, job_id, cpu: 8 + 3 x 8; RO key, ts: 8 + 2 x 8 */
  const workload ws[] = {
      {"YSB", ysb, 84},
      {"CM AVG(cpu) per job, 2 s tumble",
       "INSERT INTO cm_out SELECT job_id, window_start, AVG(cpu) FROM "
       "TABLE(TUMBLE(TABLE cm, DESCRIPTOR(`timestamp`), INTERVAL '2' "
       "SECOND)) GROUP BY job_id, window_start, window_end",
       32},
      {"RO COUNT(*) per key (1K keys), 1 s tumble",
       "INSERT INTO ro_out SELECT key, window_start, COUNT(*) FROM "
       "TABLE(TUMBLE(TABLE ro, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP "
       "BY key, window_start, window_end",
       24},
  };
  enum { NW = sizeof ws / sizeof ws[0] };
  /* [workload][workers - 1][jit] */
  static double rate[NW][2][2][99];
  /* each run's peak resident memory (bench_forked), the largest kept */
  static uint64_t peak[NW][2][2], input[NW];
  for (int r = 0; r < runs; r++)
    for (int w = 0; w < NW; w++)
      for (int workers = 1; workers <= 2; workers++)
        for (int jit = 0; jit < 2; jit++) {
          char set[80];
          snprintf(set, sizeof set, "SET 'parallelism.default' = '%d'",
                   workers);
          bench_exec(s, set);
          bench_exec(s, jit ? "SET 'sluice.jit' = 'on'"
                            : "SET 'sluice.jit' = 'off'");
          sl_query_stats qs;
          uint64_t bytes;
          if (bench_run_measured(s, ws[w].sql, -1, &qs, &bytes))
            return 1;
          rate[w][workers - 1][jit][r] = (double)qs.events / qs.seconds;
          if (bytes > peak[w][workers - 1][jit])
            peak[w][workers - 1][jit] = bytes;
          input[w] = qs.input_bytes;
        }
  printf("memcpy bandwidth (1 thread, 256 MiB copies, median of 7): %.2f "
         "GB/s\n\n",
         bw / 1e9);
  printf("%ld events per workload, pre-generated; median of %d runs "
         "interleaved (min-max)\n\n",
         events, runs);
  printf("| workload | workers | interpreted records/s | compiled records/s "
         "| compiled / interpreted | bytes/record | compiled %% of 1-thread "
         "memcpy bound | peak RSS MiB, interpreted / compiled | input MiB | "
         "compiled beyond input MiB |\n| --- | --- | --- | --- | --- | --- | "
         "--- | --- | --- | --- |\n");
  for (int w = 0; w < NW; w++)
    for (int k = 0; k < 2; k++) {
      double med[2], lo[2], hi[2];
      for (int jit = 0; jit < 2; jit++) {
        double *x = rate[w][k][jit];
        qsort(x, (size_t)runs, sizeof(double), bench_cmp_double);
        med[jit] = x[runs / 2];
        lo[jit] = x[0];
        hi[jit] = x[runs - 1];
      }
      const double mib = 1048576.0;
      printf("| %s | %d | %.1f M (%.1f-%.1f) | %.1f M (%.1f-%.1f) | %.2fx | "
             "%d | %.0f%% | %.0f / %.0f | %.0f | %.0f |\n",
             ws[w].name, k + 1, med[0] / 1e6, lo[0] / 1e6, hi[0] / 1e6,
             med[1] / 1e6, lo[1] / 1e6, hi[1] / 1e6, med[1] / med[0],
             ws[w].bytes, 100.0 * med[1] * ws[w].bytes / bw,
             (double)peak[w][k][0] / mib, (double)peak[w][k][1] / mib,
             (double)input[w] / mib,
             ((double)peak[w][k][1] - (double)input[w]) / mib);
    }
  sl_session_free(s);
  return 0;
}
