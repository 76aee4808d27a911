/* ysb_throughput.c - YSB through the whole engine, over pre-generated input.
 *
 * The Yahoo Streaming Benchmark query (filter views, join ad -> campaign,
 * count per campaign per 10 s tumbling window) over events the ysb source
 * pre-generates into memory before the clock starts ('pregenerate'), at 1
 * and 2 workers, 5 runs each; prints the median records/s with the spread,
 * and the machine's memcpy bandwidth for scale (records/s x bytes per
 * record read / memcpy bytes/s = the fraction of the memory bound).
 *
 *   build/bench/ysb_throughput [events] [runs]     (default 20000000 5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "sluice/binder/binder.h"
#include "sluice/common/clock.h"
#include "sluice/exec/executor.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/plan.h"
#include "sluice/row/row.h"
#include "sluice/session/session.h"

int main(int argc, char **argv) {
  long events = argc > 1 ? atol(argv[1]) : 20000000;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  if (runs < 1 || runs > 99 || events < 1000) {
    fprintf(stderr, "usage: ysb_throughput [events >= 1000] [runs 1..99]\n");
    return 2;
  }
  double bw = bench_memcpy_bandwidth();
  printf("memcpy bandwidth (1 thread, 256 MiB): %.2f GB/s\n", bw / 1e9);

  sl_session *s = sl_session_new();
  if (bench_ysb_tables(s, events))
    return 1;

  printf("YSB, %ld events pre-generated, %d runs per row\n", events, runs);
  printf("| workers | median records/s | min | max | bytes/record read | "
         "%% of 1-thread memcpy bound |\n");
  printf("| --- | --- | --- | --- | --- | --- |\n");
  for (int workers = 1; workers <= 2; workers++) {
    char set[64];
    snprintf(set, sizeof set, "SET 'parallelism.default' = '%d'", workers);
    bench_exec(s, set);
    double rate[99];
    int width = 0;
    for (int r = 0; r < runs; r++) {
      sl_query_stats qs;
      if (bench_run(s, BENCH_YSB_QUERY, -1, &qs))
        return 1;
      rate[r] = (double)qs.events / qs.seconds;
      /* Bytes per record the source hands the pipeline: the width of the
       * row layout of the three leaves the query reads. */
      sl_arena a;
      sl_arena_init(&a, 0);
      const sl_type *types[3] = {sl_type_varchar(&a, -1),
                                 sl_type_varchar(&a, -1),
                                 sl_type_timestamp(&a, 3)};
      width = (int)sl_row_layout_new(&a, 3, NULL, types)->width;
      sl_arena_free(&a);
    }
    qsort(rate, (size_t)runs, sizeof(double), bench_cmp_double);
    double med = rate[runs / 2];
    printf("| %d | %.1f M | %.1f M | %.1f M | %d | %.0f%% |\n", workers,
           med / 1e6, rate[0] / 1e6, rate[runs - 1] / 1e6, width,
           100.0 * med * width / bw);
    fflush(stdout);
  }
  sl_session_free(s);
  return 0;
}
