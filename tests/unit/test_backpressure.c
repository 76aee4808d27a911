/* test_backpressure.c - a slow consumer holds the sources back: memory
 * stays bounded whatever its speed (executor_int.h, SL_OUT_QUEUED_MAX;
 * node_frames.h, sl_node_credit).
 *
 * Each test runs an unbounded datagen into a consumer far slower than the
 * generator and measures the peak RSS (VmHWM) the query adds to every
 * process of it: this one, and with SET 'sluice.nodes' = '2' the two node
 * processes (this process's children).  Before backpressure the queues
 * between the workers (or nodes) and the coordinator grew at hundreds of
 * MB a second; held back, a query adds a few MB.  The bound asserted,
 * 64 MiB, is far from both.
 *   - the shell's printer at 1 row/ms, one process and two nodes;
 *   - a CSV file sink, which formats far slower than datagen generates;
 *   - a windowed GROUP BY (late merge and repartition): the workers' window
 *     partials wait for a slow consumer too, and the query still makes
 *     progress (no deadlock between a held worker and the windows the
 *     coordinator must fire);
 *   - Ctrl-C stops a query held back on two nodes (within a generous
 *     bound; the precise figure is printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sluice/common/cancel.h"
#include "sluice/common/clock.h"
#include "sluice/session/session.h"

/* Under AddressSanitizer (tests/sanitize.sh) freed blocks wait in its
 * quarantine, 256 MB by default, before they are reused: the peak RSS then
 * counts what the query freed, not what it holds (a broadcast join's node
 * grew 190 MiB under ASan where it grows 30-50 MiB in the normal build).
 * A small quarantine keeps what is measured the query's own memory; the
 * forked nodes inherit it.  Unused without ASan. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "quarantine_size_mb=8";
}

#define MIB (1024L * 1024L)
/* What a held-back query may add to a process's peak RSS. */
#define GROWTH_BOUND (64 * MIB)

/* ---- processes and their memory ----------------------------------------- */

/* A field of /proc/<pid>/status in bytes (VmHWM, VmRSS); -1 if unknown. */
static long status_bytes(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  long kb = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':')
      kb = strtol(line + n + 1, NULL, 10);
  fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

/* Reset a process's peak RSS to its current RSS (Linux clear_refs 5). */
static void reset_peak(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/clear_refs", (int)pid);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("5", f);
  fclose(f);
}

/* This process, then its children (the forked nodes), at most max. */
static int query_processes(pid_t *out, int max) {
  int n = 0;
  out[n++] = getpid();
  DIR *d = opendir("/proc");
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0)
      continue;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = '\0';
    /* pid (comm) state ppid ...: comm may hold spaces, so from its ')' */
    const char *p = strrchr(buf, ')');
    char state;
    int ppid;
    if (p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 && ppid == getpid())
      out[n++] = (pid_t)pid;
  }
  closedir(d);
  return n;
}

typedef struct peaks {
  int n;
  pid_t pid[8];
  long base[8];
} peaks;

static void peaks_start(peaks *p) {
  p->n = query_processes(p->pid, 8);
  for (int i = 0; i < p->n; i++) {
    reset_peak(p->pid[i]);
    p->base[i] = status_bytes(p->pid[i], "VmRSS");
    assert_true(p->base[i] > 0);
  }
}

/* Every process's peak growth since peaks_start is under bound. */
static void peaks_check_under(const peaks *p, const char *what, long bound) {
  for (int i = 0; i < p->n; i++) {
    long grew = status_bytes(p->pid[i], "VmHWM") - p->base[i];
    print_message("%s: %s %d peak RSS grew %.1f MiB\n", what,
                  i == 0 ? "coordinator" : "node process", (int)p->pid[i],
                  (double)grew / MIB);
    assert_true(grew < bound);
  }
}

static void peaks_check(const peaks *p, const char *what) {
  peaks_check_under(p, what, GROWTH_BOUND);
}

/* ---- a slow consumer ---------------------------------------------------- */

typedef struct consumer {
  long delay_us; /* per row */
  long rows;
  long first_delay_us; /* before the first row only */
  /* Set once the first row's delay is over: the stopper of
   * slow_beyond_silence counts its time from here, so that how long the
   * query took to start (nodes, JIT; seconds under ASan on a loaded host)
   * is not taken from the time the rows after the stall have. */
  atomic_bool past_first;
} consumer;

static int slow_row(void *ctx, const char *const *cells) {
  (void)cells;
  consumer *c = ctx;
  if (c->rows++ == 0 && c->first_delay_us > 0) {
    struct timespec t = {c->first_delay_us / 1000000,
                         (c->first_delay_us % 1000000) * 1000};
    nanosleep(&t, NULL);
    atomic_store(&c->past_first, true);
  }
  if (c->delay_us > 0) {
    struct timespec t = {c->delay_us / 1000000, (c->delay_us % 1000000) * 1000};
    nanosleep(&t, NULL);
  }
  return SL_OK;
}

static int run(sl_session *s, const char *sql, consumer *c, sl_error *err) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sink.ctx = c;
  sink.row = slow_row;
  return sl_session_execute(s, sql, strlen(sql), 1, &sink, err);
}

static void run_ok(sl_session *s, const char *sql, consumer *c) {
  sl_error err = {0};
  int rc = run(s, sql, c, &err);
  if (rc != SL_OK)
    fail_msg("%s: %s", sql, err.message ? err.message : "failed");
  sl_error_clear(&err);
}

/* What the sessions' statements are stopped with, as the shell's Ctrl-C. */
static sl_cancel ctrl_c;

static sl_session *session_with_table(const char *nodes) {
  sl_session *s = sl_session_new();
  sl_session_set_cancel(s, &ctrl_c);
  consumer none = {.delay_us = 0, .rows = 0, .first_delay_us = 0};
  run_ok(s, "SET 'parallelism.default' = '2'", &none);
  if (nodes) {
    char set[64];
    snprintf(set, sizeof set, "SET 'sluice.nodes' = '%s'", nodes);
    run_ok(s, set, &none);
  }
  run_ok(s,
         "CREATE TABLE t (n BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
         "WITH ('connector' = 'datagen')",
         &none);
  /* The first query starts the nodes and the JIT's first use: not what is
   * measured. */
  run_ok(s, "SELECT n, ts FROM t LIMIT 100", &none);
  return s;
}

/* ---- the shell's printer ------------------------------------------------ */

typedef struct stopper {
  long ms;
  consumer *after; /* if set, ms count from its first row's delay's end */
  pthread_t thread;
  double at; /* when it asked */
  /* Ended early by stopper_end (not pthread_cancel: a cancelled thread's
   * unwound frames stay poisoned under ASan, which then reports its own
   * write at the thread's exit). */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool ended;
} stopper;

static void *stop_main(void *arg) {
  stopper *st = arg;
  pthread_mutex_lock(&st->lock);
  /* A query that never delivers its first row is stopped after a minute,
   * and fails by its row count. */
  for (int waited = 0; st->after && !atomic_load(&st->after->past_first) &&
                       !st->ended && waited < 60000;
       waited += 10) {
    struct timespec poll = sl_clock_deadline_ms(10);
    pthread_cond_timedwait(&st->cond, &st->lock, &poll);
  }
  struct timespec until = sl_clock_deadline_ms(st->ms);
  while (!st->ended &&
         pthread_cond_timedwait(&st->cond, &st->lock, &until) == 0) {
  }
  bool ended = st->ended;
  pthread_mutex_unlock(&st->lock);
  if (!ended) {
    st->at = sl_clock_seconds();
    sl_cancel_request(&ctrl_c); /* as Ctrl-C */
  }
  return NULL;
}

/* Start a stopper that presses "Ctrl-C" after ms milliseconds (counted
 * from after's first row when after is set). */
static void stopper_start(stopper *st, long ms, consumer *after) {
  st->ms = ms;
  st->after = after;
  st->at = 0;
  st->ended = false;
  pthread_mutex_init(&st->lock, NULL);
  pthread_cond_init(&st->cond, NULL);
  assert_int_equal(pthread_create(&st->thread, NULL, stop_main, st), 0);
}

/* End it, early if it has not pressed yet, and wait for it. */
static void stopper_end(stopper *st) {
  pthread_mutex_lock(&st->lock);
  st->ended = true;
  pthread_cond_signal(&st->cond);
  pthread_mutex_unlock(&st->lock);
  pthread_join(st->thread, NULL);
  pthread_cond_destroy(&st->cond);
  pthread_mutex_destroy(&st->lock);
}

/* Run sql for ms milliseconds (then as Ctrl-C): it must be stopped by
 * that, not end or fail by itself; returns when it was asked to stop. */
static double run_stopped_from(sl_session *s, const char *sql, consumer *c,
                               long ms, consumer *after, double *stopped) {
  sl_cancel_clear(&ctrl_c);
  stopper st;
  stopper_start(&st, ms, after);
  sl_error err = {0};
  int rc = run(s, sql, c, &err);
  *stopped = sl_clock_seconds();
  stopper_end(&st); /* at once if the query ended before it pressed */
  sl_cancel_clear(&ctrl_c);
  if (rc != SL_ECANCELLED)
    fail_msg("%s: %s", sql, err.message ? err.message : "ended by itself");
  sl_error_clear(&err);
  return st.at;
}

static double run_stopped(sl_session *s, const char *sql, consumer *c, long ms,
                          double *stopped) {
  return run_stopped_from(s, sql, c, ms, NULL, stopped);
}

/* Run sql to its end, failing the test if it takes a minute (a query
 * that stopped making progress: a deadlock between a held source and
 * what the consumer waits for). */
static void run_ok_within_a_minute(sl_session *s, const char *sql,
                                   consumer *c) {
  sl_cancel_clear(&ctrl_c);
  stopper st;
  stopper_start(&st, 60000, NULL);
  sl_error err = {0};
  int rc = run(s, sql, c, &err);
  stopper_end(&st);
  sl_cancel_clear(&ctrl_c);
  if (rc != SL_OK)
    fail_msg("%s: %s", sql,
             rc == SL_ECANCELLED ? "no progress for a minute"
             : err.message       ? err.message
                                 : "failed");
  sl_error_clear(&err);
}

/* 3 s at 1 row/ms, in which the generator could make GBs.  (Unbounded: a
 * LIMIT would let each node stop after LIMIT rows of its own.) */
static void slow_printer(const char *nodes, const char *what) {
  sl_session *s = session_with_table(nodes);
  peaks p;
  peaks_start(&p);
  if (nodes)
    assert_int_equal(p.n, 1 + atoi(nodes));
  consumer c = {.delay_us = 1000, .rows = 0, .first_delay_us = 0};
  double stopped;
  run_stopped(s, "SELECT n, ts FROM t", &c, 3000, &stopped);
  assert_true(c.rows > 0);
  peaks_check(&p, what);
  sl_session_free(s);
}

static void test_slow_printer_one_process(void **state) {
  (void)state;
  slow_printer(NULL, "printer, one process");
}

static void test_slow_printer_two_nodes(void **state) {
  (void)state;
  slow_printer("2", "printer, 2 nodes");
}

/* ---- a CSV file sink ---------------------------------------------------- */

/* The rows a stopped streaming INSERT kept: the visible part files in dir
 * (whole lines only: each ends with a line break), which are removed with
 * dir; fails if a part still in progress was left behind. */
static long kept_rows_removing(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  long lines = 0;
  struct dirent *e;
  char path[1024];
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (e->d_name[0] == '.')
      fail_msg("a part in progress was left behind: %s", e->d_name);
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int c, last = '\n';
    while ((c = fgetc(f)) != EOF) {
      lines += c == '\n';
      last = c;
    }
    fclose(f);
    assert_int_equal(last, '\n');
    assert_int_equal(unlink(path), 0);
  }
  closedir(d);
  assert_int_equal(rmdir(dir), 0);
  return lines;
}

static void test_slow_csv_sink(void **state) {
  (void)state;
  sl_session *s = session_with_table(NULL);
  char dir[] = "/tmp/sluice-backpressure-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char sql[512];
  snprintf(sql, sizeof sql,
           "CREATE TABLE o (n BIGINT, ts TIMESTAMP(3)) WITH ('connector' = "
           "'filesystem', 'path' = '%s/o', 'format' = 'csv')",
           dir);
  consumer none = {.delay_us = 0, .rows = 0, .first_delay_us = 0};
  run_ok(s, sql, &none);
  peaks p;
  peaks_start(&p);
  /* Formatting CSV is far slower than generating: 3 s of it, into part
   * files in the directory o (an unbounded INSERT writes parts). */
  double stopped;
  run_stopped(s, "INSERT INTO o SELECT n, ts FROM t", &none, 3000, &stopped);
  peaks_check(&p, "CSV sink");
  sl_session_free(s);
  /* Ctrl-C finished the part in progress: its rows are kept. */
  char out[512];
  snprintf(out, sizeof out, "%s/o", dir);
  long rows = kept_rows_removing(out);
  print_message("CSV sink: %ld rows kept after the stop\n", rows);
  assert_true(rows > 0);
  assert_int_equal(rmdir(dir), 0);
}

/* ---- window partials ---------------------------------------------------- */

/* A window of 1000 events fires thousands of times a second; its 500
 * groups take the consumer half a second. */
static void slow_windows(const char *nodes, const char *set, const char *what) {
  sl_session *s = session_with_table(nodes);
  consumer none = {.delay_us = 0, .rows = 0, .first_delay_us = 0};
  run_ok(s, set, &none);
  peaks p;
  peaks_start(&p);
  consumer c = {.delay_us = 1000, .rows = 0, .first_delay_us = 0};
  run_ok_within_a_minute(
      s,
      "SELECT n % 500, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
      "INTERVAL '1' SECOND)) GROUP BY n % 500, window_start, window_end "
      "LIMIT 2500",
      &c);
  assert_int_equal(c.rows, 2500);
  peaks_check(&p, what);
  sl_session_free(s);
}

static void test_slow_windows_late_merge(void **state) {
  (void)state;
  slow_windows(NULL, "SET 'sluice.strategy' = 'late-merge'", "late merge");
}

static void test_slow_windows_repartition(void **state) {
  (void)state;
  slow_windows(NULL, "SET 'sluice.strategy' = 'repartition'", "repartition");
}

/* Nodes send their window partials to the coordinator, which fires a
 * window once every node's watermark has passed it: a node out of credits
 * says first how far its windows were sent (executor.c, before_partial),
 * or the coordinator could not fire the partials it holds. */
static void test_slow_windows_merged_at_coordinator(void **state) {
  (void)state;
  slow_windows("2", "SET 'sluice.late-merge' = 'coordinator'",
               "late merge at the coordinator, 2 nodes");
}

/* ---- a join's stages on the nodes -------------------------------------- */

/* A broadcast join: the side's nodes send every row to the stage nodes
 * over links, whose feeds were unbounded; the stage nodes' results come
 * to the coordinator on credits.  A stage node may hold 64 MiB of a
 * stream's rows ahead of the windows (stage_runner.c, by design) and its
 * feed 16 MiB: the bound here is 128 MiB, where the unbounded feed grew
 * by hundreds of MB in these 5 s. */
static void test_slow_broadcast_join_on_nodes(void **state) {
  (void)state;
  sl_session *s = session_with_table("2");
  consumer none = {.delay_us = 0, .rows = 0, .first_delay_us = 0};
  run_ok(s,
         "CREATE TABLE u (m BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
         "WITH ('connector' = 'datagen')",
         &none);
  run_ok(s, "SET 'sluice.join-strategy' = 'broadcast'", &none);
  const char *join =
      "SELECT L.n, R.m FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL "
      "'1' SECOND)) L JOIN TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts), INTERVAL '1' "
      "SECOND)) R ON L.n % 1000 = R.m % 1000 AND L.window_start = "
      "R.window_start AND L.window_end = R.window_end";
  /* The leaves' clusters start at the first join. */
  char warm[1024];
  snprintf(warm, sizeof warm, "%s LIMIT 10", join);
  run_ok(s, warm, &none);
  peaks p;
  peaks_start(&p);
  assert_int_equal(p.n, 1 + 4);
  consumer c = {.delay_us = 1000, .rows = 0, .first_delay_us = 0};
  double stopped;
  run_stopped(s, join, &c, 5000, &stopped);
  assert_true(c.rows > 0);
  peaks_check_under(&p, "broadcast join, 2 nodes", 128 * MIB);
  /* A fast consumer takes many windows' results (hundreds of the stage
   * nodes' frames, far more than their credits): they keep coming. */
  snprintf(warm, sizeof warm, "%s LIMIT 300000", join);
  consumer fast = {.delay_us = 0, .rows = 0, .first_delay_us = 0};
  run_ok_within_a_minute(s, warm, &fast);
  assert_int_equal(fast.rows, 300000);
  sl_session_free(s);
}

/* ---- a slow consumer is not a hung node ------------------------------- */

/* A consumer that takes 3 s over its first row, longer than the silence
 * rule's 2 s (node_frames.h, SL_SILENCE_MS), then 1 ms per row: the nodes wait
 * for credits meanwhile while their heartbeats keep coming, and the
 * coordinator does not count the time it spends writing as their silence.
 * Stopped 3 s after the stall, by us, not by a "hangs" error; rows kept
 * coming after it; the nodes then run the next query. */
static void slow_beyond_silence(sl_session *s, const char *sql,
                                const char *what) {
  consumer c = {.delay_us = 1000, .rows = 0, .first_delay_us = 3000000};
  double stopped;
  run_stopped_from(s, sql, &c, 3000, &c, &stopped);
  assert_true(c.rows > 1);
  print_message("%s: %ld rows, the first after 3 s, no node taken for hung\n",
                what, c.rows);
  consumer none = {.delay_us = 0, .rows = 0, .first_delay_us = 0};
  run_ok(s, "SELECT n FROM t LIMIT 10", &none);
  assert_int_equal(none.rows, 10);
}

static void test_slow_consumer_is_not_silence(void **state) {
  (void)state;
  sl_session *s = session_with_table("2");
  slow_beyond_silence(s, "SELECT n, ts FROM t", "rows from 2 nodes");
  sl_session_free(s);
}

static void test_slow_consumer_is_not_silence_of_stage_nodes(void **state) {
  (void)state;
  sl_session *s = session_with_table("2");
  consumer none = {.delay_us = 0, .rows = 0, .first_delay_us = 0};
  run_ok(s,
         "CREATE TABLE u (m BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
         "WITH ('connector' = 'datagen')",
         &none);
  run_ok(s, "SET 'sluice.join-strategy' = 'broadcast'", &none);
  slow_beyond_silence(
      s,
      "SELECT L.n, R.m FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL "
      "'1' SECOND)) L JOIN TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts), INTERVAL '1' "
      "SECOND)) R ON L.n % 1000 = R.m % 1000 AND L.window_start = "
      "R.window_start AND L.window_end = R.window_end",
      "a broadcast join's stage nodes");
  sl_session_free(s);
}

/* ---- stopping a held query ---------------------------------------------- */

static void test_ctrl_c_stops_held_nodes(void **state) {
  (void)state;
  sl_session *s = session_with_table("2");
  consumer c = {.delay_us = 1000, .rows = 0, .first_delay_us = 0};
  double stopped;
  double asked = run_stopped(s, "SELECT n, ts FROM t", &c, 1500, &stopped);
  assert_true(c.rows > 0);
  /* Within 200 ms is the aim; the bound only separates stopping from
   * waiting for the held rows (seconds at 1 row/ms). */
  print_message("Ctrl-C stopped the held query on 2 nodes in %.0f ms\n",
                (stopped - asked) * 1000);
  assert_true(stopped - asked < 2.0);
  /* The nodes stopped too: the next query runs on them. */
  consumer none = {.delay_us = 0, .rows = 0, .first_delay_us = 0};
  run_ok(s, "SELECT n FROM t LIMIT 10", &none);
  assert_int_equal(none.rows, 10);
  sl_session_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slow_printer_one_process),
      cmocka_unit_test(test_slow_printer_two_nodes),
      cmocka_unit_test(test_slow_csv_sink),
      cmocka_unit_test(test_slow_windows_late_merge),
      cmocka_unit_test(test_slow_windows_repartition),
      cmocka_unit_test(test_slow_windows_merged_at_coordinator),
      cmocka_unit_test(test_slow_broadcast_join_on_nodes),
      cmocka_unit_test(test_slow_consumer_is_not_silence),
      cmocka_unit_test(test_slow_consumer_is_not_silence_of_stage_nodes),
      cmocka_unit_test(test_ctrl_c_stops_held_nodes),
  };
  if (getenv("BP_FILTER"))
    cmocka_set_test_filter(getenv("BP_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
