/* gen_throughput.c - how fast each event generator fills buffers.
 *
 * One thread, one source instance, 64 KiB buffers, generation only (no
 * query): rows/s and MB/s per generator and column set, the median of 5
 * runs.  The engine's throughput targets (15M YSB records/s with 2
 * workers) need the generator far above them, or 'pregenerate'.
 *
 *   build/bench/gen_throughput
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../connectors/sources/generators.h"
#include "sluice/common/clock.h"
#include "sluice/session/session.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct bench_case {
  const char *label;
  const sl_source_connector *conn;
  const char *sql;         /* CREATE TABLE t ... */
  const char *const *cols; /* leaves to produce; NULL = all */
} bench_case;

static const char *const ysb_query_cols[] = {"ad_id", "event_type",
                                             "event_time", NULL};
static const char *const nx_bid_cols[] = {"event_type", "bid.auction",
                                          "bid.price", "bid.dateTime", NULL};

static const bench_case cases[] = {
    {"ysb, YSB query's 3 columns", &sl_source_ysb,
     "CREATE TABLE t (user_id STRING, page_id STRING, ad_id STRING, ad_type "
     "STRING, event_type STRING, event_time TIMESTAMP(3), ip_address STRING) "
     "WITH ('connector' = 'ysb', 'events.num' = '10000000')",
     ysb_query_cols},
    {"ysb, all 7 columns", &sl_source_ysb,
     "CREATE TABLE t (user_id STRING, page_id STRING, ad_id STRING, ad_type "
     "STRING, event_type STRING, event_time TIMESTAMP(3), ip_address STRING) "
     "WITH ('connector' = 'ysb', 'events.num' = '5000000')",
     NULL},
    {"nexmark, q7-like 4 columns", &sl_source_nexmark,
     "CREATE TABLE t (event_type INT, person ROW<id BIGINT, name STRING>, "
     "auction ROW<id BIGINT, seller BIGINT>, bid ROW<auction BIGINT, price "
     "BIGINT, dateTime TIMESTAMP(3)>) WITH ('connector' = 'nexmark', "
     "'events.num' = '5000000')",
     nx_bid_cols},
    {"nexmark, all 26 columns", &sl_source_nexmark, NULL, NULL},
    {"cm, all 12 columns", &sl_source_cm,
     "CREATE TABLE t (`timestamp` TIMESTAMP(3), job_id BIGINT, task_id "
     "BIGINT, machine_id BIGINT, event_type INT, user_id BIGINT, category "
     "INT, priority INT, cpu DOUBLE, ram DOUBLE, disk DOUBLE, constraints "
     "INT) WITH ('connector' = 'cm', 'events.num' = '5000000')",
     NULL},
    {"ro, uniform keys", &sl_source_ro,
     "CREATE TABLE t (key BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'ro', "
     "'events.num' = '10000000')",
     NULL},
    {"ro, zipf z=1 over 100M", &sl_source_ro,
     "CREATE TABLE t (key BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'ro', "
     "'events.num' = '5000000', 'key.distribution' = 'zipf')",
     NULL},
    {"datagen, 4 columns", &sl_source_datagen,
     "CREATE TABLE t (id BIGINT, n INT, name STRING, ts TIMESTAMP(3)) WITH "
     "('connector' = 'datagen', 'events.num' = '5000000', "
     "'fields.name.length' = '16')",
     NULL},
};

static char *nexmark_ddl(const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/nexmark/ddl.sql", dir);
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  static char text[16384];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char *semi = strchr(text, ';');
  if (!semi)
    return NULL;
  *semi = 0;
  /* 2M events instead of the DDL's 100000 */
  static char out[16384 + 16];
  const char *old = "'events.num' = '100000'";
  char *num = strstr(text, old);
  if (!num)
    return text;
  snprintf(out, sizeof out, "%.*s'events.num' = '2000000'%s", (int)(num - text),
           text, num + strlen(old));
  return out;
}

static int run_case(const bench_case *bc, const char *dir) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_session *s = sl_session_new();
  sl_error err = {0};
  const char *sql = bc->sql ? bc->sql : nexmark_ddl(dir);
  if (!sql || sl_session_execute(s, sql, strlen(sql), 1, &sink, &err)) {
    fprintf(stderr, "%s: %s\n", bc->label, err.message ? err.message : "?");
    return 1;
  }
  const sl_table_def *t = sl_catalog_find(sl_session_catalog(s), "t");
  if (!t)
    t = sl_catalog_find(sl_session_catalog(s), "datagen");
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_leaf_columns leaves;
  sl_table_leaf_columns(&a, t, &leaves);
  int n = 0, *idx = SL_ANEW_N(&a, int, leaves.n);
  const char **names = SL_ANEW_N(&a, const char *, leaves.n);
  const sl_type **types = SL_ANEW_N(&a, const sl_type *, leaves.n);
  for (int i = 0; i < leaves.n; i++) {
    bool want = !bc->cols;
    for (int k = 0; bc->cols && bc->cols[k]; k++)
      want |= strcmp(bc->cols[k], leaves.names[i]) == 0;
    if (want) {
      idx[n] = i;
      names[n] = leaves.names[i];
      types[n++] = leaves.types[i];
    }
  }
  sl_row_layout *l = sl_row_layout_new(&a, n, names, types);
  double rate[5], mbs[5];
  for (int run = 0; run < 5; run++) {
    sl_source_spec spec = {t, l, idx, 0, 1, 0, NULL, false, NULL};
    sl_source *src;
    if (bc->conn->open(&spec, &src, &err)) {
      fprintf(stderr, "%s: %s\n", bc->label, err.message);
      return 1;
    }
    sl_buffer buf;
    sl_buffer_init(&buf, l, 64 * 1024);
    bool done = false;
    double t0 = sl_clock_seconds();
    while (!done) {
      sl_buffer_clear(&buf);
      if (bc->conn->next(src, &buf, &done, &err)) {
        fprintf(stderr, "%s: %s\n", bc->label, err.message);
        return 1;
      }
    }
    double secs = sl_clock_seconds() - t0;
    sl_source_stats st;
    bc->conn->stats(src, &st);
    rate[run] = st.rows / secs;
    mbs[run] = st.bytes / secs / 1e6;
    bc->conn->close(src);
    sl_buffer_free(&buf);
  }
  qsort(rate, 5, sizeof rate[0], cmp_double);
  qsort(mbs, 5, sizeof mbs[0], cmp_double);
  printf("| %-28s | %3d B | %8.1f M rows/s | %6.0f MB/s |\n", bc->label,
         (int)l->width, rate[2] / 1e6, mbs[2]);
  sl_arena_free(&a);
  sl_session_free(s);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  printf("| generator, columns | row width | rows/s (median of 5) | bytes/s "
         "|\n| --- | --- | --- | --- |\n");
  int rc = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    rc |= run_case(&cases[i], dir);
  return rc;
}
