/* test_sinks.c - the shell, CSV file, SQLite, blackhole and print sinks.
 *
 * Rows are built in a buffer with sl_value_parse, written through the
 * connector interface, and the output is read back: the CSV file byte for
 * byte (and its absence after a failed query), the SQLite table with the
 * sqlite3 API (and the absence of an uncommitted window after a failed
 * close), the cells handed to the shell's result sink.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <sqlite3.h>

#include "io_helpers.h"

typedef struct fixture {
  char *dir;
  sl_session *session;
  sl_arena a;
  sl_row_layout *l;
  const char *names[4];
} fixture;

static const char *cols = "id BIGINT, name STRING, price DECIMAL(10, 2), "
                          "ts TIMESTAMP(3)";

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = make_tmpdir();
  f->session = sl_session_new();
  sl_arena_init(&f->a, 0);
  /* The rows' layout: the leaves of a table with the sink's columns. */
  const sl_table_def *t =
      make_table(f->session, "shape", cols, "'connector' = 'blackhole'");
  int *idx;
  f->l = all_leaves(&f->a, t, &idx);
  for (int i = 0; i < 4; i++)
    f->names[i] = f->l->fields[i].name;
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

/* Append a row from texts (NULL = SQL NULL). */
static void add_row(sl_buffer *b, const char *id, const char *name,
                    const char *price, const char *ts) {
  const char *v[] = {id, name, price, ts};
  uint8_t *row = sl_buffer_append(b);
  assert_non_null(row);
  for (int i = 0; i < 4; i++) {
    if (!v[i]) {
      sl_row_set_null(row, i, true);
      continue;
    }
    sl_error err = {0};
    if (sl_value_parse(v[i], strlen(v[i]), b->layout, row, i, b, &err))
      fail_msg("%s", err.message);
  }
}

static void sample_rows(sl_buffer *b) {
  add_row(b, "1", "plain", "1.5", "2015-07-15 00:00:00");
  add_row(b, "2", "with, comma \"q\" and a long tail", "-0.05",
          "1969-12-31 23:59:59.999");
  add_row(b, NULL, "", NULL, "2024-02-29 12:00:00");
  add_row(b, "4", "line\nbreak", "0", NULL);
}

static sl_sink *open_sink(fixture *f, const char *connector,
                          const sl_table_def *t, sl_result_sink *shell) {
  sl_sink_spec spec = {t, f->l, f->names, shell, NULL, false, false, false};
  const sl_sink_connector *c =
      shell ? sl_shell_sink_connector() : sl_sink_connector_find(connector);
  assert_non_null(c);
  sl_sink *s;
  sl_error err = {0};
  if (c->open(&spec, &s, &err) != SL_OK)
    fail_msg("%s", err.message);
  return s;
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      n++;
  closedir(d);
  return n;
}

static void test_csv_sink(void **state) {
  fixture *f = *state;
  char path[600], opts[800];
  snprintf(path, sizeof path, "%s/out.csv", f->dir);
  snprintf(opts, sizeof opts,
           "'connector' = 'filesystem', 'path' = '%s', 'format' = 'csv'", path);
  const sl_table_def *t = make_table(f->session, "out", cols, opts);
  const sl_sink_connector *c = sl_sink_connector_find("filesystem");
  sl_buffer b;
  sl_buffer_init(&b, f->l, 4096);
  sample_rows(&b);
  sl_error err = {0};

  /* A failed query leaves nothing: no file, no temporary. */
  sl_sink *s = open_sink(f, "filesystem", t, NULL);
  assert_int_equal(c->write(s, &b, &err), SL_OK);
  assert_int_equal(c->commit(s, &err), SL_OK);
  assert_int_equal(count_entries(f->dir), 1); /* the temporary */
  assert_null(read_file(path));               /* not yet in place */
  assert_int_equal(c->close(s, false, &err), SL_OK);
  assert_int_equal(count_entries(f->dir), 0);

  /* A successful one renames the complete file into place. */
  s = open_sink(f, "filesystem", t, NULL);
  assert_int_equal(c->write(s, &b, &err), SL_OK);
  assert_int_equal(c->rows_written(s), 4);
  assert_int_equal(c->close(s, true, &err), SL_OK);
  char *got = read_file(path);
  assert_non_null(got);
  assert_string_equal(got, "1,plain,1.50,2015-07-15 00:00:00.000\n"
                           "2,\"with, comma \"\"q\"\" and a long tail\","
                           "-0.05,1969-12-31 23:59:59.999\n"
                           ",\"\",,2024-02-29 12:00:00.000\n"
                           "4,\"line\nbreak\",0.00,\n");
  free(got);
  assert_int_equal(count_entries(f->dir), 1);

  /* What the sink wrote, the CSV source reads back unchanged. */
  const sl_table_def *in = make_table(f->session, "back", cols, opts);
  int *idx;
  sl_row_layout *l = all_leaves(&f->a, in, &idx);
  sl_source_spec spec = {in, l, idx, 0, 1, 0, NULL, false, NULL};
  const sl_source_connector *src = sl_source_connector_find("filesystem");
  sl_source *so;
  assert_int_equal(src->open(&spec, &so, &err), SL_OK);
  sl_buffer rb;
  sl_buffer_init(&rb, l, 4096);
  bool done;
  assert_int_equal(src->next(so, &rb, &done, &err), SL_OK);
  sl_strbuf want = SL_STRBUF_INIT, back = SL_STRBUF_INIT;
  rows_as_text(&want, &b);
  rows_as_text(&back, &rb);
  assert_string_equal(sl_strbuf_cstr(&back), sl_strbuf_cstr(&want));
  sl_strbuf_free(&want);
  sl_strbuf_free(&back);
  sl_buffer_free(&rb);
  src->close(so);
  sl_buffer_free(&b);

  /* A directory that does not exist: a clear error at open. */
  const sl_table_def *bad = make_table(
      f->session, "bad", cols,
      "'connector' = 'filesystem', 'path' = '/nonexistent/dir/x.csv', "
      "'format' = 'csv'");
  sl_sink_spec bspec = {bad, f->l, f->names, NULL, NULL, false, false, false};
  assert_int_equal(c->open(&bspec, &s, &err), SL_EIO);
  assert_non_null(strstr(err.message, "/nonexistent/dir/x.csv"));
  sl_error_clear(&err);
}

static void test_sqlite_sink(void **state) {
  fixture *f = *state;
  char path[600], opts[800];
  snprintf(path, sizeof path, "%s/out.db", f->dir);
  snprintf(opts, sizeof opts,
           "'connector' = 'sqlite', 'path' = '%s', 'table-name' = 'res\"ult'",
           path);
  const sl_table_def *t = make_table(f->session, "sq", cols, opts);
  const sl_sink_connector *c = sl_sink_connector_find("sqlite");
  sl_error err = {0};
  assert_int_equal(c->validate(t, &err), SL_OK);
  sl_buffer b;
  sl_buffer_init(&b, f->l, 4096);
  sample_rows(&b);

  /* One committed window, then one that a failed query never commits. */
  sl_sink *s = open_sink(f, "sqlite", t, NULL);
  assert_int_equal(c->write(s, &b, &err), SL_OK);
  assert_int_equal(c->commit(s, &err), SL_OK);
  sl_buffer_clear(&b);
  add_row(&b, "99", "uncommitted", "1", "2015-07-15 00:00:00");
  assert_int_equal(c->write(s, &b, &err), SL_OK);
  assert_int_equal(c->close(s, false, &err), SL_OK);
  sl_buffer_free(&b);

  sqlite3 *db;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(
      sqlite3_prepare_v2(db,
                         "SELECT id, name, price, ts, typeof(id), "
                         "typeof(price) FROM \"res\"\"ult\" ORDER BY rowid",
                         -1, &st, NULL),
      SQLITE_OK);
  sl_strbuf got = SL_STRBUF_INIT;
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < 6; i++) {
      const unsigned char *v = sqlite3_column_text(st, i);
      sl_strbuf_printf(&got, "%s%s", i ? "|" : "", v ? (const char *)v : "\\N");
    }
    sl_strbuf_appendc(&got, '\n');
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  assert_string_equal(sl_strbuf_cstr(&got),
                      "1|plain|1.5|2015-07-15 00:00:00.000|integer|real\n"
                      "2|with, comma \"q\" and a long tail|-0.05|1969-12-31 "
                      "23:59:59.999|integer|real\n"
                      "\\N||\\N|2024-02-29 12:00:00.000|null|null\n"
                      "4|line\nbreak|0|\\N|integer|integer\n");
  sl_strbuf_free(&got);
}

/* The shell's result sink, recording what it is given. */
typedef struct recorder {
  sl_strbuf log;
} recorder;

static int rec_begin(void *c, int n, const char *const *names,
                     const sl_type *const *types) {
  recorder *r = c;
  sl_strbuf_printf(&r->log, "begin %d:", n);
  for (int i = 0; i < n; i++) {
    sl_strbuf_printf(&r->log, " %s ", names[i]);
    sl_type_format(&r->log, types[i]);
  }
  sl_strbuf_appendc(&r->log, '\n');
  return SL_OK;
}
static int rec_row(void *c, const char *const *cells) {
  recorder *r = c;
  sl_strbuf_append(&r->log, "row");
  for (int i = 0; i < 4; i++)
    sl_strbuf_printf(&r->log, " [%s]", cells[i] ? cells[i] : "NULL");
  sl_strbuf_appendc(&r->log, '\n');
  return SL_OK;
}
static int rec_flush(void *c) {
  sl_strbuf_append(&((recorder *)c)->log, "flush\n");
  return SL_OK;
}
static int rec_end(void *c) {
  sl_strbuf_append(&((recorder *)c)->log, "end\n");
  return SL_OK;
}

static void test_shell_sink(void **state) {
  fixture *f = *state;
  recorder r = {SL_STRBUF_INIT};
  sl_result_sink rs = {&r,   rec_begin, rec_row, rec_flush, rec_end,
                       NULL, NULL,      NULL,    NULL};
  const sl_sink_connector *c = sl_shell_sink_connector();
  sl_sink *s = open_sink(f, NULL, NULL, &rs);
  sl_buffer b;
  sl_buffer_init(&b, f->l, 4096);
  sample_rows(&b);
  sl_error err = {0};
  assert_int_equal(c->write(s, &b, &err), SL_OK);
  assert_int_equal(c->commit(s, &err), SL_OK);
  assert_int_equal(c->rows_written(s), 4);
  assert_int_equal(c->close(s, true, &err), SL_OK);
  sl_buffer_free(&b);
  assert_string_equal(
      sl_strbuf_cstr(&r.log),
      "begin 4: id BIGINT name STRING price DECIMAL(10, 2) ts TIMESTAMP(3)\n"
      "row [1] [plain] [1.50] [2015-07-15 00:00:00.000]\n"
      "row [2] [with, comma \"q\" and a long tail] [-0.05] [1969-12-31 "
      "23:59:59.999]\n"
      "row [NULL] [] [NULL] [2024-02-29 12:00:00.000]\n"
      "row [4] [line\nbreak] [0.00] [NULL]\n"
      "flush\n"
      "end\n");
  sl_strbuf_free(&r.log);
}

static void test_print_and_blackhole(void **state) {
  fixture *f = *state;
  /* print writes to stdout: point stdout at a file for the test. */
  char path[600];
  snprintf(path, sizeof path, "%s/stdout.txt", f->dir);
  fflush(stdout);
  int saved = dup(1);
  assert_non_null(freopen(path, "w", stdout));
  const sl_table_def *t =
      make_table(f->session, "pr", cols,
                 "'connector' = 'print', 'print-identifier' = 'sink'");
  const sl_sink_connector *c = sl_sink_connector_find("print");
  sl_sink *s = open_sink(f, "print", t, NULL);
  sl_buffer b;
  sl_buffer_init(&b, f->l, 4096);
  sample_rows(&b);
  sl_error err = {0};
  assert_int_equal(c->write(s, &b, &err), SL_OK);
  assert_int_equal(c->close(s, true, &err), SL_OK);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  char *got = read_file(path);
  assert_string_equal(got, "sink> +I[1, plain, 1.50, 2015-07-15T00:00]\n"
                           "sink> +I[2, with, comma \"q\" and a long tail, "
                           "-0.05, 1969-12-31T23:59:59.999]\n"
                           "sink> +I[null, , null, 2024-02-29T12:00]\n"
                           "sink> +I[4, line\nbreak, 0.00, null]\n");
  free(got);

  const sl_sink_connector *bh = sl_sink_connector_find("blackhole");
  s = open_sink(f, "blackhole", NULL, NULL);
  assert_int_equal(bh->write(s, &b, &err), SL_OK);
  assert_int_equal(bh->write(s, &b, &err), SL_OK);
  assert_int_equal(bh->rows_written(s), 8);
  assert_int_equal(bh->close(s, true, &err), SL_OK);
  sl_buffer_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_csv_sink, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sqlite_sink, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shell_sink, setup, teardown),
      cmocka_unit_test_setup_teardown(test_print_and_blackhole, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
