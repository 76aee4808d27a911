/* nodes_sweep.c - late merge against repartitioning across local nodes.
 *
 * YSB (views per campaign per 10 s window after the lookup join) and RO
 * (COUNT(*) per key per 1 s window, zipf z = 0..2), pre-generated, on 1, 2
 * and 4 forked nodes (`sluice --nodes N`, one worker each), with the
 * strategy forced: late merge at partition leaders (the default), late
 * merge at the coordinator (sluice.late-merge = coordinator, the path
 * before leaders) and repartitioning between the nodes.  Median of `runs`
 * runs each, side by side, in records/s from the moment every node's input
 * is generated (the shell's summary line).
 *
 *   build/bench/nodes_sweep [events] [runs] [ro key range] [nodes]
 *                            (default 10000000 5 65536, nodes 1, 2 and 4)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sluice/session.h"

/* The session's summary notice: "N rows, E events in S s (R events/s,
 * ...)"; R is printed whole, S with two decimals only. */
static int keep_summary(void *ctx, const char *text) {
  double *rate = ctx;
  const char *p = strstr(text, " events in ");
  p = p ? strchr(p, '(') : NULL;
  double r;
  if (p && sscanf(p, "(%lf events/s", &r) == 1)
    *rate = r;
  return SL_OK;
}

static double run_once(sl_session *s, const char *query) {
  double rate = 0;
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = &rate;
  sink.notice = keep_summary;
  sl_error err = {0};
  if (sl_session_execute(s, query, strlen(query), 1, &sink, &err) != SL_OK) {
    fprintf(stderr, "nodes_sweep: %s\n", err.message);
    exit(1);
  }
  if (rate <= 0) {
    fprintf(stderr, "nodes_sweep: no summary line for %s\n", query);
    exit(1);
  }
  return rate;
}

static const char *const MODES[3][2] = {
    {"late-merge", "leaders"},
    {"late-merge", "coordinator"},
    {"repartition", "leaders"},
};

/* Records/s of the query in each mode: median, min and max of runs;
 * rounds interleave the modes so that noise from the other users of the
 * machine spreads. */
static void measure(sl_session *s, const char *query, int runs,
                    double out[3][3]) {
  double rate[3][16];
  for (int r = 0; r < runs; r++)
    for (int m = 0; m < 3; m++) {
      char set[128];
      snprintf(set, sizeof set, "SET 'sluice.strategy' = '%s'", MODES[m][0]);
      if (bench_exec(s, set))
        exit(1);
      snprintf(set, sizeof set, "SET 'sluice.late-merge' = '%s'", MODES[m][1]);
      if (bench_exec(s, set))
        exit(1);
      rate[m][r] = run_once(s, query);
    }
  for (int m = 0; m < 3; m++) {
    qsort(rate[m], (size_t)runs, sizeof(double), bench_cmp_double);
    out[m][0] = rate[m][runs / 2];
    out[m][1] = rate[m][0];
    out[m][2] = rate[m][runs - 1];
  }
}

/* A row: each mode's median (min-max) in M records/s, and the ratio of the
 * medians, leaders / repartition. */
static void row(const char *cell, double v[3][3]) {
  printf("| %s ", cell);
  for (int m = 0; m < 3; m++)
    printf("| %.2f M (%.2f-%.2f) ", v[m][0] / 1e6, v[m][1] / 1e6,
           v[m][2] / 1e6);
  printf("| %.2fx |\n", v[0][0] / v[2][0]);
  fflush(stdout);
}

static sl_session *nodes_session(int nodes) {
  sl_session *s = sl_session_new();
  char set[96];
  snprintf(set, sizeof set, "SET 'sluice.nodes' = '%d'", nodes);
  if (bench_exec(s, set) || bench_exec(s, "SET 'parallelism.default' = '1'"))
    exit(1);
  return s;
}

int main(int argc, char **argv) {
  long events = argc > 1 ? atol(argv[1]) : 10000000;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  long range = argc > 3 ? atol(argv[3]) : 65536;
  int only = argc > 4 ? atoi(argv[4]) : 0; /* one node count, or both */
  if (runs < 1 || runs > 16 || events < 1000 || range < 1) {
    fprintf(stderr, "usage: nodes_sweep [events >= 1000] [runs 1..16] "
                    "[ro key range]\n");
    return 2;
  }
  static const int node_counts[] = {1, 2, 4};
  static const char *const zs[] = {"0", "0.5", "1.0", "1.5", "2.0"};
  printf("%ld events per query (all nodes together), 1 worker per node, "
         "median (min-max) of %d runs, records/s; ratio = leaders / "
         "repartition\n",
         events, runs);
  for (size_t i = 0; i < sizeof node_counts / sizeof node_counts[0]; i++) {
    int n = node_counts[i];
    if (only > 0 && n != only)
      continue;
    printf("\n%d node%s\n\n| workload | late merge (leaders) | late merge "
           "(coordinator) | repartition | ratio |\n| --- | --- | --- | --- | "
           "--- |\n",
           n, n == 1 ? "" : "s");
    sl_session *s = nodes_session(n);
    if (bench_ysb_tables(s, events))
      return 1;
    double v[3][3];
    measure(s, BENCH_YSB_QUERY, runs, v);
    row("YSB (100 campaigns, 10 s windows)", v);
    sl_session_free(s);
    for (size_t j = 0; j < sizeof zs / sizeof zs[0]; j++) {
      s = nodes_session(n);
      char ddl[512];
      snprintf(ddl, sizeof ddl,
               "CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts "
               "AS ts) WITH ('connector' = 'ro', 'events.num' = '%ld', "
               "'key.range' = '%ld', 'key.distribution' = '%s', 'zipf.z' = "
               "'%s', 'pregenerate' = 'true', 'seed' = '3')",
               events, range, strcmp(zs[j], "0") ? "zipf" : "uniform",
               strcmp(zs[j], "0") ? zs[j] : "1.0");
      if (bench_exec(s, ddl))
        return 1;
      measure(s,
              "SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE ro, "
              "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, "
              "window_start, window_end",
              runs, v);
      char cell[96];
      snprintf(cell, sizeof cell, "RO %ld keys, zipf z = %s", range, zs[j]);
      row(cell, v);
      sl_session_free(s);
    }
  }
  return 0;
}
