/* nodes_sweep.c - late merge against repartitioning across local nodes.
 *
 * YSB (views per campaign per 10 s window after the lookup join) and RO
 * (COUNT(*) per key per 1 s window, zipf z = 0..2), pre-generated, on 1, 2
 * and 4 forked nodes (`sluice --nodes N`, one worker each), with the
 * strategy forced: late merge at partition leaders (the default), late
 * merge at the coordinator (sluice.late-merge = coordinator, the path
 * before leaders) and repartitioning between the nodes.  Median of `runs`
 * runs each, side by side, in records/s from the moment every node's input
 * is generated (EXPLAIN ANALYZE's Sink line).  Every run is a forked
 * child with a fresh session and its own node processes (bench_forked),
 * so the peak resident memory of the coordinator and of the largest node
 * is that run's alone; the tables show the largest over the runs, beside
 * each node's share of the pre-generated input.
 *
 *   build/bench/nodes_sweep [events] [runs] [ro key range] [nodes]
 *                            (default 10000000 5 65536, nodes 1, 2 and 4)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sluice/session/session.h"

static int keep_text(void *ctx, const char *text) {
  sl_strbuf_append(ctx, text);
  return SL_OK;
}

static const char *const MODES[3][2] = {
    {"late-merge", "leaders"},
    {"late-merge", "coordinator"},
    {"repartition", "leaders"},
};

/* One run: on `nodes` nodes of a fresh session, the tables (ro_ddl, or
 * YSB's), the strategy of `mode`, and the query as EXPLAIN ANALYZE. */
typedef struct one_run {
  int nodes, mode;
  long events;
  const char *ro_ddl, *query;
} one_run;

typedef struct run_result {
  double rate;         /* records/s: the Sink's events/s= */
  uint64_t input;      /* all nodes' pre-generated input: the Source bytes= */
  uint64_t coord_peak; /* this process's (the coordinator's) peak */
  uint64_t node_peak;  /* the largest node process's peak resident memory */
} run_result;

static sl_session *nodes_session(int nodes) {
  sl_session *s = sl_session_new();
  char set[96];
  snprintf(set, sizeof set, "SET 'sluice.nodes' = '%d'", nodes);
  if (bench_exec(s, set) || bench_exec(s, "SET 'parallelism.default' = '1'"))
    exit(1);
  return s;
}

/* In a forked child (bench_forked): the session's node processes are its
 * children, so once the session is freed (and they are reaped) the OS
 * has the largest one's peak. */
static int run_child(void *arg, void *out) {
  const one_run *a = arg;
  run_result *r = out;
  memset(r, 0, sizeof *r);
  sl_session *s = nodes_session(a->nodes);
  char sql[2048];
  int rc =
      a->ro_ddl ? bench_exec(s, a->ro_ddl) : bench_ysb_tables(s, a->events);
  snprintf(sql, sizeof sql, "SET 'sluice.strategy' = '%s'", MODES[a->mode][0]);
  rc = rc ? rc : bench_exec(s, sql);
  snprintf(sql, sizeof sql, "SET 'sluice.late-merge' = '%s'",
           MODES[a->mode][1]);
  rc = rc ? rc : bench_exec(s, sql);
  sl_strbuf text = SL_STRBUF_INIT;
  if (rc == SL_OK) {
    snprintf(sql, sizeof sql, "EXPLAIN ANALYZE %s", a->query);
    sl_result_sink sink = sl_result_sink_discard(NULL);
    sink.ctx = &text; /* EXPLAIN prints text, no rows */
    sink.text = keep_text;
    sl_error err = {0};
    rc = sl_session_execute(s, sql, strlen(sql), 1, &sink, &err);
    if (rc != SL_OK)
      fprintf(stderr, "nodes_sweep: %s\n", err.message);
    sl_error_clear(&err);
  }
  const char *t = sl_strbuf_cstr(&text);
  const char *sink_line = strstr(t, "\nSink ");
  const char *rate = sink_line ? strstr(sink_line, "events/s=") : NULL;
  const char *src = strstr(t, " Source ");
  const char *bytes = src ? strstr(src, "bytes=") : NULL;
  if (rc == SL_OK && (!rate || !bytes)) {
    fprintf(stderr, "nodes_sweep: no events/s= or bytes= in\n%s\n", t);
    rc = SL_EINTERNAL;
  }
  if (rc == SL_OK) {
    r->rate = strtod(rate + strlen("events/s="), NULL);
    r->input = strtoull(bytes + strlen("bytes="), NULL, 10);
  }
  sl_strbuf_free(&text);
  /* wait4 counts reaped children in the child's peak too: each is taken
   * here on its own. */
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    r->coord_peak = (uint64_t)ru.ru_maxrss * 1024;
  sl_session_free(s);
  if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
    r->node_peak = (uint64_t)ru.ru_maxrss * 1024;
  return rc;
}

/* Per mode: records/s median, min and max of runs; the largest peak
 * resident memory of the coordinator and of a node over the runs; the
 * input per node.  Rounds interleave the modes so that noise from the
 * other users of the machine spreads. */
typedef struct mode_figures {
  double med, lo, hi, coord_peak, node_peak, input_per_node;
} mode_figures;

static void measure(one_run a, int runs, mode_figures out[3]) {
  double rate[3][16];
  memset(out, 0, 3 * sizeof *out);
  for (int r = 0; r < runs; r++)
    for (int m = 0; m < 3; m++) {
      a.mode = m;
      run_result res;
      uint64_t both; /* the coordinator's or a node's, the larger */
      if (bench_forked(run_child, &a, &res, sizeof res, &both) != SL_OK) {
        fprintf(stderr, "nodes_sweep: a run on %d nodes failed\n", a.nodes);
        exit(1);
      }
      rate[m][r] = res.rate;
      if ((double)res.coord_peak > out[m].coord_peak)
        out[m].coord_peak = (double)res.coord_peak;
      if ((double)res.node_peak > out[m].node_peak)
        out[m].node_peak = (double)res.node_peak;
      out[m].input_per_node = (double)res.input / a.nodes;
    }
  for (int m = 0; m < 3; m++) {
    qsort(rate[m], (size_t)runs, sizeof(double), bench_cmp_double);
    out[m].med = rate[m][runs / 2];
    out[m].lo = rate[m][0];
    out[m].hi = rate[m][runs - 1];
  }
}

/* A row: each mode's median (min-max) in M records/s, the ratio of the
 * medians, leaders / repartition, then memory in MiB per mode (leaders /
 * coordinator / repartition): the coordinator's peak, the largest node's
 * (none on 1 node: the coordinator runs the workers), and the input per
 * node. */
static void row(const char *cell, const mode_figures v[3]) {
  const double mib = 1048576.0;
  printf("| %s ", cell);
  for (int m = 0; m < 3; m++)
    printf("| %.2f M (%.2f-%.2f) ", v[m].med / 1e6, v[m].lo / 1e6,
           v[m].hi / 1e6);
  printf("| %.2fx ", v[0].med / v[2].med);
  printf("| %.0f / %.0f / %.0f ", v[0].coord_peak / mib, v[1].coord_peak / mib,
         v[2].coord_peak / mib);
  if (v[0].node_peak > 0)
    printf("| %.0f / %.0f / %.0f ", v[0].node_peak / mib, v[1].node_peak / mib,
           v[2].node_peak / mib);
  else
    printf("| - ");
  printf("| %.0f |\n", v[0].input_per_node / mib);
  fflush(stdout);
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
           "(coordinator) | repartition | ratio | coordinator peak RSS MiB "
           "(leaders / coordinator / repartition) | largest node peak RSS MiB "
           "(same) | input MiB per node |\n| --- | --- | --- | --- | --- | "
           "--- | --- | --- |\n",
           n, n == 1 ? "" : "s");
    mode_figures v[3];
    one_run ysb = {n, 0, events, NULL, BENCH_YSB_QUERY};
    measure(ysb, runs, v);
    row("YSB (100 campaigns, 10 s windows)", v);
    for (size_t j = 0; j < sizeof zs / sizeof zs[0]; j++) {
      char ddl[512];
      snprintf(ddl, sizeof ddl,
               "CREATE TABLE ro (key BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts "
               "AS ts) WITH ('connector' = 'ro', 'events.num' = '%ld', "
               "'key.range' = '%ld', 'key.distribution' = '%s', 'zipf.z' = "
               "'%s', 'pregenerate' = 'true', 'seed' = '3')",
               events, range, strcmp(zs[j], "0") ? "zipf" : "uniform",
               strcmp(zs[j], "0") ? zs[j] : "1.0");
      one_run ro = {n, 0, events, ddl,
                    "SELECT key, COUNT(*) FROM TABLE(TUMBLE(TABLE ro, "
                    "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY key, "
                    "window_start, window_end"};
      measure(ro, runs, v);
      char cell[96];
      snprintf(cell, sizeof cell, "RO %ld keys, zipf z = %s", range, zs[j]);
      row(cell, v);
    }
  }
  return 0;
}
