/* test_watermark_each_window.c - a sink that asks for it
 * (sl_sink_connector.watermark_each_window, as the stage sink does) hears
 * the watermark after every window the coordinator fires, not once per
 * round (exec/op_window_aggregate.c).  A stage above a leaf then starts
 * on a window while the leaf's coordinator merges the next ones; before,
 * a round that fired many windows held them all back until its end, and
 * NEXMark q8's join ran only after its leaves had finished.
 *
 * A CSV file of 200 one-second tumbling windows, 5 rows each, read by one
 * worker: the worker passes every window long before the coordinator's
 * next round, so a round fires many windows.  A recording sink checks
 * that after window k's rows are committed, and before window k+1's rows
 * come, it is told a watermark at or past window k's end less one time
 * unit (the hook's contract: every window ending at or before watermark +
 * one unit is written), and never one past a window whose rows have not
 * come.  Without the per-window call the check fails whenever a round
 * fires two windows or more: here the whole file is one buffer, so the
 * worker passes every window at once. */
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

#include "session_helpers.h"
#include "sluice/binder/binder.h"
#include "sluice/connectors/connector.h"
#include "sluice/exec/executor.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/plan.h"
#include "sluice/session/session.h"

#define WINDOWS 200
#define ROWS_PER_WINDOW 5
#define BASE_US INT64_C(1700000000000000) /* 2023-11-14 22:13:20 UTC */
#define UNIT_US 1000                      /* TIMESTAMP(3) */

/* ---- a sink that records what it is told, in order ----------------------- */

typedef struct event {
  char kind; /* 'r' rows, 'c' commit, 'w' watermark */
  int64_t value;
} event;

static event g_events[8 * WINDOWS + 64];
static int g_nevents;

struct sl_sink {
  int unused;
};

static void record(char kind, int64_t value) {
  if (g_nevents < (int)(sizeof g_events / sizeof g_events[0]))
    g_events[g_nevents++] = (event){kind, value};
}

static int rec_open(const sl_sink_spec *spec, sl_sink **out, sl_error *err) {
  (void)spec, (void)err;
  *out = calloc(1, sizeof **out);
  return *out ? SL_OK : SL_ENOMEM;
}
static int rec_write(sl_sink *s, const sl_buffer *rows, sl_error *err) {
  (void)s, (void)err;
  if (rows->nrows)
    record('r', rows->nrows);
  return SL_OK;
}
static int rec_commit(sl_sink *s, sl_error *err) {
  (void)s, (void)err;
  record('c', 0);
  return SL_OK;
}
static int rec_close(sl_sink *s, bool ok, sl_error *err) {
  (void)ok, (void)err;
  free(s);
  return SL_OK;
}
static uint64_t rec_rows(const sl_sink *s) {
  (void)s;
  return 0;
}
static int rec_watermark(sl_sink *s, int64_t wm, sl_error *err) {
  (void)s, (void)err;
  record('w', wm);
  return SL_OK;
}

static const sl_sink_connector each_window = {
    .name = "record",
    .open = rec_open,
    .write = rec_write,
    .commit = rec_commit,
    .close = rec_close,
    .rows_written = rec_rows,
    .watermark = rec_watermark,
    .watermark_each_window = true,
};

/* ---- the query -------------------------------------------------------------
 */

static char g_csv[256];

static void write_csv(void) {
  snprintf(g_csv, sizeof g_csv, "/tmp/sluice_wm_each_%d.csv", (int)getpid());
  FILE *f = fopen(g_csv, "w");
  assert_non_null(f);
  for (int w = 0; w < WINDOWS; w++)
    for (int r = 0; r < ROWS_PER_WINDOW; r++) /* 2023-11-14 22:13:20 on */
      fprintf(f, "%d,2023-11-14 22:%02d:%02d.%03d\n", r, 13 + (20 + w) / 60,
              (20 + w) % 60, 100 * r);
  fclose(f);
}

/* Run the windowed COUNT into `sink` (in place of the blackhole). */
static void run_into(sl_session *s, const sl_sink_connector *sink) {
  const char *sql = "INSERT INTO out SELECT TUMBLE_END(ts, INTERVAL '1' "
                    "SECOND), COUNT(*) FROM events GROUP BY TUMBLE(ts, "
                    "INTERVAL '1' SECOND)";
  sl_arena a;
  sl_arena_init(&a, 0);
  char *text = sl_arena_strdup(&a, sql);
  sl_stmt *stmt;
  sl_bound_stmt *b = NULL;
  sl_plan *plan = NULL;
  sl_error err = {0};
  int rc = sl_parse_one(&a, text, strlen(text), 1, &stmt, &err);
  if (rc == SL_OK)
    rc = sl_bind(&a, sl_session_catalog(s), stmt, text, 1, &b, &err);
  if (rc == SL_OK)
    rc = sl_plan_build(&a, b, &plan, &err);
  if (rc == SL_OK)
    plan->sink = sink;
  sl_run_config config;
  if (rc == SL_OK)
    rc = sl_run_config_resolve(&config, sl_session_settings(s), &err);
  sl_query_stats st;
  memset(&st, 0, sizeof st);
  g_nevents = 0;
  if (rc == SL_OK)
    rc = sl_execute(plan, &(sl_run){&config, NULL, NULL}, NULL, &st, &err);
  if (b)
    sl_bound_stmt_release(b);
  sl_arena_free(&a);
  if (rc != SL_OK)
    fail_msg("%s: %s", sql, err.message ? err.message : "");
}

static int setup(void **state) {
  write_csv();
  sl_session *s = sl_session_new();
  char ddl[512];
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE events (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
           "ts) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = "
           "'csv')",
           g_csv);
  session_exec_ok(s, ddl);
  session_exec_ok(s, "CREATE TABLE out (e TIMESTAMP(3), n BIGINT) WITH "
                     "('connector' = 'blackhole')");
  session_exec_ok(s, "SET 'parallelism.default' = '1'");
  *state = s;
  return 0;
}

static int teardown(void **state) {
  sl_session_free(*state);
  unlink(g_csv);
  return 0;
}

/* The end of window k (0-based) of the file. */
static int64_t window_end(int k) {
  return BASE_US + (int64_t)(k + 1) * 1000000;
}

/* How many windows' commits were followed, before the next window's rows,
 * by a watermark covering them (every window has rows, so the k-th commit
 * after rows is window k's; the end of the query commits once more). */
static int windows_told(int *commits) {
  int told = 0, k = -1;
  bool rows = false, covered = true;
  for (int i = 0; i < g_nevents; i++) {
    const event *e = &g_events[i];
    if (e->kind == 'c' && rows) {
      k++;
      rows = covered = false;
    } else if (e->kind == 'w' && k >= 0 && !covered &&
               e->value >= window_end(k) - UNIT_US) {
      covered = true;
      told++;
    } else if (e->kind == 'r') {
      rows = covered = true; /* (a next window's rows first: not told) */
    }
  }
  *commits = k + 1;
  return told;
}

static void test_each_window(void **state) {
  run_into(*state, &each_window);
  int commits, told = windows_told(&commits);
  assert_int_equal(commits, WINDOWS);
  /* every window but perhaps the last (its watermark is the end's) */
  if (told < WINDOWS - 1)
    fail_msg("%d of %d windows were followed by their watermark", told,
             WINDOWS);
  /* and never a watermark past a window whose rows had not come: the
   * watermark after commit k is at most window k's end less one unit */
  int k = -1;
  bool rows = false;
  for (int i = 0; i < g_nevents; i++) {
    if (g_events[i].kind == 'r')
      rows = true;
    if (g_events[i].kind == 'c' && rows) {
      k++;
      rows = false;
    } else if (g_events[i].kind == 'w' && g_events[i].value != INT64_MAX &&
               k + 1 < WINDOWS)
      assert_true(g_events[i].value < window_end(k + 1) - UNIT_US);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_each_window),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
