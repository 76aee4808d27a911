/* test_late_records.c - SET 'sluice.late-records' = 'side-output' against
 * 'drop', side by side over a stream with many late records split among
 * workers (each judging lateness by its own watermark): the window results
 * are the same, the late table holds exactly as many records as 'drop'
 * counted, and they are exactly the records the windows left out (the
 * values of the late table plus the windows' sums are the input's).  At 1
 * and 4 workers, both strategies, the JIT on and off; TUMBLE and SESSION
 * windows (under repartitioning the worker owning a key decides whether a
 * session's record is late, and the record rides to it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice/common/strbuf.h"
#include "sluice/session/session.h"

enum { NROWS = 30000 };

typedef struct notices {
  sl_strbuf last; /* the last notice (the query's summary) */
} notices;

static int on_notice(void *ctx, const char *text) {
  notices *n = ctx;
  sl_strbuf_free(&n->last);
  sl_strbuf_append(&n->last, text);
  return SL_OK;
}

static void exec_ok(sl_session *s, notices *n, const char *sql) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.notice = on_notice;
  sink.ctx = n;
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
}

/* The number before `what` in the summary, e.g. "12 late records
 * dropped". */
static long long summary_count(const notices *n, const char *what) {
  const char *text = sl_strbuf_cstr(&n->last);
  const char *at = strstr(text, what);
  if (!at)
    fail_msg("no '%s' in '%s'", what, text);
  while (at > text && at[-1] == ' ')
    at--;
  while (at > text && at[-1] >= '0' && at[-1] <= '9')
    at--;
  return atoll(at);
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)len + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
  buf[len] = 0;
  fclose(f);
  return buf;
}

static int compare_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The file's lines, sorted, joined by newlines. */
static char *sorted_lines(const char *path, int *count) {
  char *text = read_file(path);
  int n = 0, cap = 1024;
  char **lines = malloc(sizeof(char *) * (size_t)cap);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (n == cap)
      lines = realloc(lines, sizeof(char *) * (size_t)(cap *= 2));
    lines[n++] = line;
  }
  qsort(lines, (size_t)n, sizeof(char *), compare_lines);
  sl_strbuf out = SL_STRBUF_INIT;
  for (int i = 0; i < n; i++)
    sl_strbuf_printf(&out, "%s\n", lines[i]);
  free(lines);
  free(text);
  *count = n;
  char *r = strdup(sl_strbuf_cstr(&out));
  sl_strbuf_free(&out);
  return r;
}

/* Every line of a late table: k,v,note,ts with note saying v. */
static void notes_match_values(const char *path) {
  char *text = read_file(path);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    int k, v, said;
    if (sscanf(line, "%d,%d,value %d in a string too long to be inline,", &k,
               &v, &said) != 3 ||
        said != v)
      fail_msg("late record '%s' lost its note", line);
  }
  free(text);
}

/* Sum of the integer in column col (0-based) of every CSV line. */
static long long column_sum(const char *path, int col) {
  char *text = read_file(path);
  long long sum = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    const char *p = line;
    for (int c = 0; c < col && p; c++) {
      p = strchr(p, ',');
      if (p)
        p++;
    }
    if (p)
      sum += atoll(p);
  }
  free(text);
  return sum;
}

/* A stream of NROWS (k, v, note, ts) rows, one per ms, one in nine of them
 * from up to 3 s earlier: with a watermark of ts - 1 s, many are late.
 * note repeats v in a string long enough to live outside the row, so that
 * a late record written whole shows that its strings came along. */
static long long write_stream(const char *path) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  uint64_t x = 88172645463325252ull;
  long long total = 0;
  for (int i = 0; i < NROWS; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    long long ms = 10000 + i;
    if (x % 9 == 0)
      ms -= (long long)(x >> 20) % 3000;
    int v = (int)(x % 1000);
    total += v;
    fprintf(f,
            "%d,%d,value %d in a string too long to be inline,"
            "2024-01-01 00:%02lld:%02lld.%03lld\n",
            (int)(x % 7), v, v, ms / 60000, ms / 1000 % 60, ms % 1000);
  }
  fclose(f);
  return total;
}

/* The two runs' results in dir: out_drop.csv and out_side.csv the same
 * rows (when same_as_drop), late.csv `written` records, each whole.  The
 * number of result rows into *nrows. */
static void check_side_output(const char *dir, long long written,
                              bool same_as_drop, int *nrows) {
  char path[1024];
  int nd, ns, nl;
  snprintf(path, sizeof path, "%s/out_drop.csv", dir);
  char *a = sorted_lines(path, &nd);
  snprintf(path, sizeof path, "%s/out_side.csv", dir);
  char *b = sorted_lines(path, &ns);
  snprintf(path, sizeof path, "%s/late.csv", dir);
  char *late = sorted_lines(path, &nl);
  if (same_as_drop) {
    assert_int_equal(nd, ns);
    assert_string_equal(a, b);
  }
  assert_int_equal(nl, written);
  notes_match_values(path);
  *nrows = ns;
  free(a);
  free(b);
  free(late);
}

/* A new directory at dir (a mkdtemp template) with events.csv in it;
 * the sum of its values. */
static long long make_dir(char *dir) {
  assert_non_null(mkdtemp(dir));
  char path[1024];
  snprintf(path, sizeof path, "%s/events.csv", dir);
  return write_stream(path);
}

/* The files the tests write into dir, and dir. */
static void remove_dir(const char *dir) {
  const char *files[] = {"events", "out_drop", "out_side", "late"};
  char path[1024];
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/%s.csv", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
}

/* A session on `nodes` nodes of `workers` workers each, with table
 * events over dir/events.csv, the late table `late` (its columns), and the
 * result tables out_drop and out_side of columns out_columns. */
static sl_session *session_on(const char *dir, notices *n, int nodes,
                              int workers, const char *out_columns) {
  /* An INSERT adds to what a table holds: each run starts with none. */
  const char *written[] = {"out_drop", "out_side", "late"};
  for (int i = 0; i < 3; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.csv", dir, written[i]);
    unlink(path);
  }
  sl_session *s = sl_session_new();
  char sql[1024];
  snprintf(sql, sizeof sql, "SET 'sluice.nodes' = '%d'", nodes);
  exec_ok(s, n, sql);
  snprintf(sql, sizeof sql, "SET 'parallelism.default' = '%d'", workers);
  exec_ok(s, n, sql);
  snprintf(sql, sizeof sql,
           "CREATE TABLE events (k INT, v INT, note STRING, ts TIMESTAMP(3), "
           "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = "
           "'filesystem', 'path' = '%s/events.csv', 'format' = 'csv', "
           "'csv.split-min-bytes' = '1')",
           dir);
  exec_ok(s, n, sql);
  snprintf(sql, sizeof sql,
           "CREATE TABLE late (k INT, v INT, note STRING, ts TIMESTAMP(3)) "
           "WITH ('connector' = 'filesystem', 'path' = '%s/late.csv', "
           "'format' = 'csv')",
           dir);
  exec_ok(s, n, sql);
  const char *outs[] = {"out_drop", "out_side"};
  for (int i = 0; i < 2; i++) {
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (%s) WITH ('connector' = 'filesystem', 'path' = "
             "'%s/%s.csv', 'format' = 'csv')",
             outs[i], out_columns, dir, outs[i]);
    exec_ok(s, n, sql);
  }
  return s;
}

/* Run query into out_drop with late records dropped, then into out_side
 * with them written to late; how many were dropped and written. */
static void run_both_ways(sl_session *s, notices *n, const char *query,
                          long long *dropped, long long *written) {
  char sql[2048];
  snprintf(sql, sizeof sql, "INSERT INTO out_drop %s", query);
  exec_ok(s, n, sql);
  *dropped = summary_count(n, "late records dropped");
  exec_ok(s, n, "SET 'sluice.late-records' = 'side-output'");
  exec_ok(s, n, "SET 'sluice.late-records.table' = 'late'");
  snprintf(sql, sizeof sql, "INSERT INTO out_side %s", query);
  exec_ok(s, n, sql);
  *written = summary_count(n, "late records written");
}

static void run_config(const char *dir, long long total, int nodes, int workers,
                       const char *strategy, const char *jit,
                       const char *window) {
  notices n = {SL_STRBUF_INIT};
  sl_session *s = session_on(dir, &n, nodes, workers,
                             "k INT, ws TIMESTAMP(3), c BIGINT, sv INT");
  char sql[2048];
  snprintf(sql, sizeof sql, "SET 'sluice.strategy' = '%s'", strategy);
  exec_ok(s, &n, sql);
  snprintf(sql, sizeof sql, "SET 'sluice.jit' = '%s'", jit);
  exec_ok(s, &n, sql);
  char query[512];
  snprintf(query, sizeof query,
           "SELECT k, window_start, COUNT(*), CAST(SUM(v) AS INT) FROM "
           "TABLE(%s) GROUP BY k, window_start, window_end",
           window);
  long long dropped, written;
  run_both_ways(s, &n, query, &dropped, &written);

  /* Enough late records for the comparison to mean something. */
  if (dropped < 500)
    fail_msg("only %lld late records at %d workers", dropped, workers);
  /* Under repartitioning whether a session's record is late depends on
   * which of its key's records reached the owner before it, from the other
   * readers (arrival order, as in Flink): two runs may differ by a few,
   * so only the run's own late table and windows are compared. */
  bool same_as_drop =
      strcmp(strategy, "repartition") != 0 || strncmp(window, "SESSION", 7);
  if (same_as_drop && written != dropped)
    fail_msg("%lld late records written, %lld dropped (%d nodes, %d workers, "
             "%s, jit %s, %s)",
             written, dropped, nodes, workers, strategy, jit, window);
  int nrows;
  check_side_output(dir, written, same_as_drop, &nrows);
  /* The late records are exactly what the windows left out. */
  char path[1024];
  snprintf(path, sizeof path, "%s/out_side.csv", dir);
  long long in_windows = column_sum(path, 3);
  snprintf(path, sizeof path, "%s/late.csv", dir);
  long long in_late = column_sum(path, 1);
  assert_int_equal(in_windows + in_late, total);
  sl_strbuf_free(&n.last);
  sl_session_free(s);
}

static void test_side_output_equals_drop(void **state) {
  (void)state;
  char dir[] = "/tmp/sluice-late-XXXXXX";
  long long total = make_dir(dir);
  const char *strategies[] = {"late-merge", "repartition"};
  const char *jits[] = {"on", "off"};
  const char *tumble =
      "TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' SECOND)";
  /* Sessions of a key end after 20 ms without its records: a late record
   * touches none of its key's open sessions (the fold decides). */
  const char *session = "SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), "
                        "INTERVAL '0.02' SECOND)";
  for (int w = 1; w <= 4; w *= 4)
    for (int st = 0; st < 2; st++)
      for (int j = 0; j < 2; j++) {
        run_config(dir, total, 1, w, strategies[st], jits[j], tumble);
        run_config(dir, total, 1, w, strategies[st], jits[j], session);
      }
  /* Two nodes of two workers: each node sends its late records to the
   * coordinator, which writes them. */
  for (int st = 0; st < 2; st++)
    run_config(dir, total, 2, 2, strategies[st], "on", tumble);
  remove_dir(dir);
}

/* An interval join whose stream rows meet only windows ending 50 to 300
 * ms before them (the interval's lower end after the window end): a row
 * its leaf passes could still be too late for the stages if it overtook
 * its watermark.  Both readings of the stream drop their late records
 * (written twice, once per reading); 'drop' and 'side-output' must give
 * the same join rows, and as many records written as dropped, the stages'
 * drops included, at 4 workers and on 2 and 3 nodes. */
static void run_interval_join(const char *dir, int nodes, int workers,
                              const char *join_strategy) {
  notices n = {SL_STRBUF_INIT};
  sl_session *s = session_on(dir, &n, nodes, workers,
                             "k INT, v INT, ts TIMESTAMP(3), rt TIMESTAMP(3)");
  char sql[2048];
  snprintf(sql, sizeof sql, "SET 'sluice.join-strategy' = '%s'", join_strategy);
  exec_ok(s, &n, sql);
  const char *query =
      "SELECT B.k, B.v, B.ts, M.rt FROM events B JOIN (SELECT k, MAX(v) AS "
      "mv, TUMBLE_ROWTIME(ts, INTERVAL '0.1' SECOND) AS rt FROM events "
      "GROUP BY k, TUMBLE(ts, INTERVAL '0.1' SECOND)) M ON B.k = M.k WHERE "
      "B.ts BETWEEN M.rt + INTERVAL '0.05' SECOND AND M.rt + INTERVAL "
      "'0.3' SECOND";
  long long dropped, written;
  run_both_ways(s, &n, query, &dropped, &written);
  if (strstr(sl_strbuf_cstr(&n.last), "dropped by the stages"))
    fail_msg("%s", sl_strbuf_cstr(&n.last));
  if (dropped < 1000 || written != dropped)
    fail_msg("%lld late records written, %lld dropped (%d nodes, %d "
             "workers, %s)",
             written, dropped, nodes, workers, join_strategy);
  int nrows;
  check_side_output(dir, written, true, &nrows);
  assert_true(nrows > 10000);
  sl_strbuf_free(&n.last);
  sl_session_free(s);
}

static void test_interval_join_late_records(void **state) {
  (void)state;
  char dir[] = "/tmp/sluice-late-join-XXXXXX";
  make_dir(dir);
  run_interval_join(dir, 1, 4, "auto");
  run_interval_join(dir, 2, 2, "broadcast");
  run_interval_join(dir, 3, 1, "repartition");
  remove_dir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_side_output_equals_drop),
      cmocka_unit_test(test_interval_join_late_records),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
