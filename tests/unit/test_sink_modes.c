/* test_sink_modes.c - how the filesystem and SQLite sinks add to, replace
 * and keep a table's rows, through the connector interface: INSERT INTO
 * appends (to one file, or new part files in a directory), INSERT
 * OVERWRITE replaces only once the query has succeeded, a bounded query's
 * parts show all at once, an unbounded query's as they finish, and a
 * stopped one keeps exactly the rows complete at its last round (the
 * watermark call).  Also the filesystem source over a directory: hidden
 * files skipped, files in the order they were written, new parts read
 * when it follows the directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <utime.h>

#include <cmocka.h>
#include <dirent.h>
#include <sqlite3.h>

#include "io_helpers.h"

typedef struct fixture {
  char *dir;
  sl_session *session;
  sl_arena a;
  sl_row_layout *l;
  const char *names[2];
  int ntables;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = make_tmpdir();
  f->session = sl_session_new();
  sl_arena_init(&f->a, 0);
  const sl_table_def *t =
      make_table(f->session, "shape", "n BIGINT", "'connector' = 'blackhole'");
  int *idx;
  f->l = all_leaves(&f->a, t, &idx);
  f->names[0] = "n";
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  sl_session_free(f->session);
  sl_arena_free(&f->a);
  rm_tree(f->dir);
  free(f);
  return 0;
}

/* A table t<k> (n BIGINT) at dir/<where> with the connector's options. */
static const sl_table_def *table_at(fixture *f, const char *connector,
                                    const char *where, const char *extra) {
  char name[32], opts[1024];
  snprintf(name, sizeof name, "t%d", f->ntables++);
  snprintf(opts, sizeof opts, "'connector' = '%s', 'path' = '%s/%s'%s%s",
           connector, f->dir, where,
           strcmp(connector, "filesystem") ? "" : ", 'format' = 'csv'",
           extra ? extra : "");
  return make_table(f->session, name, "n BIGINT", opts);
}

static sl_sink *open_mode(fixture *f, const sl_table_def *t, bool unbounded,
                          bool overwrite) {
  sl_sink_spec spec = {t,    f->l,  f->names,  NULL,
                       NULL, false, overwrite, unbounded};
  const sl_sink_connector *c =
      sl_sink_connector_find(sl_table_def_option(t, "connector"));
  sl_sink *s;
  sl_error err = {0};
  if (c->open(&spec, &s, &err) != SL_OK)
    fail_msg("%s", err.message);
  return s;
}

/* Write rows from..to (n = from, ..., to). */
static void put(const sl_table_def *t, sl_sink *s, fixture *f, int from,
                int to) {
  const sl_sink_connector *c =
      sl_sink_connector_find(sl_table_def_option(t, "connector"));
  sl_buffer b;
  sl_buffer_init(&b, f->l, 4096);
  for (int n = from; n <= to; n++)
    *(int64_t *)(sl_buffer_append(&b) + f->l->fields[0].offset) = n;
  sl_error err = {0};
  if (c->write(s, &b, &err) != SL_OK)
    fail_msg("%s", err.message);
  sl_buffer_free(&b);
}

static void finish(const sl_table_def *t, sl_sink *s, bool ok) {
  const sl_sink_connector *c =
      sl_sink_connector_find(sl_table_def_option(t, "connector"));
  sl_error err = {0};
  if (c->close(s, ok, &err) != SL_OK)
    fail_msg("%s", err.message);
}

static void tick(const sl_table_def *t, sl_sink *s) {
  const sl_sink_connector *c =
      sl_sink_connector_find(sl_table_def_option(t, "connector"));
  sl_error err = {0};
  if (c->watermark(s, 0, &err) != SL_OK)
    fail_msg("%s", err.message);
}

/* The names in dir: visible ones counted in *visible, hidden in *hidden. */
static void count_names(const char *dir, int *visible, int *hidden) {
  *visible = *hidden = 0;
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    (*(e->d_name[0] == '.' ? hidden : visible))++;
  }
  closedir(d);
}

/* What the filesystem source reads from t: the n's, in its order. */
static char *read_back(fixture *f, const sl_table_def *t) {
  int *idx;
  sl_row_layout *l = all_leaves(&f->a, t, &idx);
  sl_source_spec spec = {t, l, idx, 0, 1, 0, NULL, false, NULL};
  const sl_source_connector *src = sl_source_connector_find("filesystem");
  sl_source *so;
  sl_error err = {0};
  if (src->open(&spec, &so, &err) != SL_OK)
    fail_msg("%s", err.message);
  sl_buffer b;
  sl_buffer_init(&b, l, 4096);
  sl_strbuf out = SL_STRBUF_INIT;
  bool done = false;
  while (!done) {
    sl_buffer_clear(&b);
    if (src->next(so, &b, &done, &err) != SL_OK)
      fail_msg("%s", err.message);
    for (uint32_t r = 0; r < b.nrows; r++)
      sl_strbuf_printf(
          &out, "%lld ",
          (long long)*(int64_t *)(sl_buffer_row(&b, r) + l->fields[0].offset));
  }
  src->close(so);
  sl_buffer_free(&b);
  if (!out.data)
    sl_strbuf_append(&out, "");
  return sl_strbuf_detach(&out);
}

static void expect_rows(fixture *f, const sl_table_def *t, const char *want) {
  char *got = read_back(f, t);
  assert_string_equal(got, want);
  free(got);
}

/* One file: INSERT INTO keeps the old rows (one lacking its last line
 * break gets it), OVERWRITE replaces them, a failed run changes nothing. */
static void test_file_append_and_overwrite(void **state) {
  fixture *f = *state;
  const sl_table_def *t = table_at(f, "filesystem", "one.csv", NULL);
  char path[700];
  snprintf(path, sizeof path, "%s/one.csv", f->dir);
  write_file(path, "1\n2");
  sl_sink *s = open_mode(f, t, false, false);
  put(t, s, f, 3, 4);
  finish(t, s, true);
  expect_rows(f, t, "1 2 3 4 ");
  s = open_mode(f, t, false, false); /* failed: nothing changes */
  put(t, s, f, 5, 5);
  finish(t, s, false);
  expect_rows(f, t, "1 2 3 4 ");
  s = open_mode(f, t, false, true);
  put(t, s, f, 9, 9);
  expect_rows(f, t, "1 2 3 4 "); /* the old rows until it succeeds */
  finish(t, s, true);
  expect_rows(f, t, "9 ");
  int visible, hidden;
  count_names(f->dir, &visible, &hidden);
  assert_int_equal(visible, 1);
  assert_int_equal(hidden, 0);

  /* A streaming INSERT writes a directory: not into a file. */
  sl_sink_spec spec = {t, f->l, f->names, NULL, NULL, false, false, true};
  sl_error err = {0};
  assert_int_equal(sl_sink_connector_find("filesystem")->open(&spec, &s, &err),
                   SL_EUNSUPPORTED);
  assert_non_null(strstr(err.message, "is a file"));
  sl_error_clear(&err);
}

/* A directory: each bounded INSERT adds one part, hidden until it has
 * succeeded; OVERWRITE swaps in a whole new set only at the end. */
static void test_directory_parts(void **state) {
  fixture *f = *state;
  const sl_table_def *t = table_at(f, "filesystem", "dir/", NULL);
  char dir[700];
  snprintf(dir, sizeof dir, "%s/dir", f->dir);
  int visible, hidden;
  sl_sink *s = open_mode(f, t, false, false);
  put(t, s, f, 1, 2);
  count_names(dir, &visible, &hidden);
  assert_int_equal(visible, 0); /* in progress, hidden */
  assert_int_equal(hidden, 1);
  finish(t, s, true);
  s = open_mode(f, t, false, false);
  put(t, s, f, 3, 3);
  finish(t, s, true);
  s = open_mode(f, t, false, false);
  put(t, s, f, 4, 4);
  finish(t, s, false); /* failed: its part goes */
  count_names(dir, &visible, &hidden);
  assert_int_equal(visible, 2);
  assert_int_equal(hidden, 0);
  char *got = read_back(f, t);
  assert_true(!strcmp(got, "1 2 3 ") || !strcmp(got, "3 1 2 "));
  free(got);

  s = open_mode(f, t, false, true);
  put(t, s, f, 7, 8);
  finish(t, s, false); /* a failed OVERWRITE leaves the old parts */
  got = read_back(f, t);
  assert_true(!strcmp(got, "1 2 3 ") || !strcmp(got, "3 1 2 "));
  free(got);
  s = open_mode(f, t, false, true);
  put(t, s, f, 7, 8);
  got = read_back(f, t); /* the old parts until it succeeds */
  assert_true(!strcmp(got, "1 2 3 ") || !strcmp(got, "3 1 2 "));
  free(got);
  finish(t, s, true);
  expect_rows(f, t, "7 8 ");
  count_names(f->dir, &visible, &hidden); /* no staging left beside it */
  assert_int_equal(visible, 1);
  assert_int_equal(hidden, 0);
}

/* An unbounded query: a commit (fired window) shows the part at once; a
 * stop keeps the rows written up to the last round and drops the rest. */
static void test_unbounded_stop_keeps_whole_rows(void **state) {
  fixture *f = *state;
  const sl_table_def *t = table_at(f, "filesystem", "stream", NULL);
  char dir[700];
  snprintf(dir, sizeof dir, "%s/stream", f->dir);
  sl_sink *s = open_mode(f, t, true, false);
  put(t, s, f, 1, 3);
  sl_error err = {0};
  assert_int_equal(sl_sink_connector_find("filesystem")->commit(s, &err),
                   SL_OK);
  int visible, hidden;
  count_names(dir, &visible, &hidden);
  assert_int_equal(visible, 1);
  assert_int_equal(hidden, 0);
  put(t, s, f, 4, 5);
  tick(t, s); /* the round ends: 4 and 5 are whole */
  put(t, s, f, 6, 6);
  finish(t, s, false); /* stopped mid-round: 6 is not kept */
  count_names(dir, &visible, &hidden);
  assert_int_equal(visible, 2);
  assert_int_equal(hidden, 0);
  char *got = read_back(f, t);
  assert_true(!strcmp(got, "1 2 3 4 5 ") || !strcmp(got, "4 5 1 2 3 "));
  free(got);
}

/* The source over a directory: visible files only, oldest first, part-x-2
 * before part-x-10 when equally old. */
static void test_directory_source_order(void **state) {
  fixture *f = *state;
  char dir[700], p[800];
  snprintf(dir, sizeof dir, "%s/src", f->dir);
  assert_int_equal(mkdir(dir, 0755), 0);
  const char *files[][2] = {
      {"part-a-10.csv", "10\n"},
      {"part-a-2.csv", "2\n"},
      {".part-a-11.csv.inprogress", "99\n"},
      {"_SUCCESS", ""},
      {"old.csv", "1\n"},
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, files[i][0]);
    write_file(p, files[i][1]);
    struct utimbuf when = {1000, 1000}; /* old.csv oldest */
    if (!strcmp(files[i][0], "old.csv"))
      when.modtime = when.actime = 500;
    assert_int_equal(utime(p, &when), 0);
  }
  snprintf(p, sizeof p, "%s/sub", dir);
  assert_int_equal(mkdir(p, 0755), 0);
  const sl_table_def *t = table_at(f, "filesystem", "src", NULL);
  expect_rows(f, t, "1 2 10 ");
}

/* 'source.monitor-interval' on a directory follows it: a part that shows
 * up later (renamed into view, as the sink does) is read once. */
static void test_directory_followed(void **state) {
  fixture *f = *state;
  char dir[700], p[800], q[800];
  snprintf(dir, sizeof dir, "%s/follow", f->dir);
  assert_int_equal(mkdir(dir, 0755), 0);
  snprintf(p, sizeof p, "%s/part-a-0.csv", dir);
  write_file(p, "1\n2\n");
  const sl_table_def *t = table_at(f, "filesystem", "follow",
                                   ", 'source.monitor-interval' = '20 ms'");
  int *idx;
  sl_row_layout *l = all_leaves(&f->a, t, &idx);
  sl_source_spec spec = {t, l, idx, 0, 1, 0, NULL, false, NULL};
  const sl_source_connector *src = sl_source_connector_find("filesystem");
  sl_source *so;
  sl_error err = {0};
  if (src->open(&spec, &so, &err) != SL_OK)
    fail_msg("%s", err.message);
  sl_buffer b;
  sl_buffer_init(&b, l, 4096);
  long sum = 0, rows = 0;
  bool wrote = false, done = false;
  /* Each call waits at most 100 ms: 600 calls are a minute at most. */
  for (int call = 0; call < 600 && rows < 4 && !done; call++) {
    sl_buffer_clear(&b);
    if (src->next(so, &b, &done, &err) != SL_OK)
      fail_msg("%s", err.message);
    for (uint32_t r = 0; r < b.nrows; r++, rows++)
      sum += (long)*(int64_t *)(sl_buffer_row(&b, r) + l->fields[0].offset);
    if (rows == 2 && !wrote) { /* the first part read: a new one comes */
      snprintf(q, sizeof q, "%s/.part-a-1.csv.inprogress", dir);
      write_file(q, "3\n4\n");
      snprintf(p, sizeof p, "%s/part-a-1.csv", dir);
      assert_int_equal(rename(q, p), 0);
      wrote = true;
    }
  }
  assert_false(done); /* following never ends by itself */
  assert_int_equal(rows, 4);
  assert_int_equal(sum, 1 + 2 + 3 + 4);
  src->close(so);
  sl_buffer_free(&b);
}

static long sqlite_count(const char *path, const char *where) {
  sqlite3 *db;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  char sql[200];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM t%s", where);
  sqlite3_stmt *st;
  long n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

/* SQLite: OVERWRITE replaces the rows in one transaction (the old ones
 * stay on failure); a stopped unbounded query keeps its rows up to the
 * last round; a database it creates is in WAL mode. */
static void test_sqlite_modes(void **state) {
  fixture *f = *state;
  char path[700];
  snprintf(path, sizeof path, "%s/db.sqlite", f->dir);
  const sl_table_def *t =
      table_at(f, "sqlite", "db.sqlite", ", 'table-name' = 't'");
  sl_sink *s = open_mode(f, t, true, false);
  put(t, s, f, 1, 3);
  tick(t, s);
  put(t, s, f, 4, 4);
  finish(t, s, false); /* stopped: 1..3 kept, 4 not */
  assert_int_equal(sqlite_count(path, ""), 3);
  assert_int_equal(sqlite_count(path, " WHERE n = 4"), 0);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);

  s = open_mode(f, t, false, true);
  put(t, s, f, 7, 7);
  finish(t, s, false); /* a failed OVERWRITE */
  assert_int_equal(sqlite_count(path, ""), 3);
  s = open_mode(f, t, false, true);
  put(t, s, f, 7, 8);
  sl_error err = {0};
  assert_int_equal(sl_sink_connector_find("sqlite")->commit(s, &err), SL_OK);
  assert_int_equal(sqlite_count(path, ""), 3); /* not before the end */
  finish(t, s, true);
  assert_int_equal(sqlite_count(path, ""), 2);
  assert_int_equal(sqlite_count(path, " WHERE n IN (7, 8)"), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_file_append_and_overwrite, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_directory_parts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unbounded_stop_keeps_whole_rows,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_directory_source_order, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_directory_followed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sqlite_modes, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
