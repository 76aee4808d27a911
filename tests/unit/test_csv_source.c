/* test_csv_source.c - the filesystem (CSV) source and the registry.
 *
 * Files are written to a scratch directory, tables are made with CREATE
 * TABLE through a session, and rows are read back through the connector
 * interface with a small buffer (so that "buffer full, resume" is
 * exercised) and printed as text for exact comparison.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../runtime/io_connectors.h"
#include "io_helpers.h"

typedef struct fixture {
  char *dir;
  sl_session *session;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = make_tmpdir();
  f->session = sl_session_new();
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  sl_session_free(f->session);
  rm_tree(f->dir);
  free(f);
  return 0;
}

/* Write text to <dir>/name and return the WITH options for it. */
static const char *csv_file(fixture *f, const char *name, const char *text,
                            const char *extra) {
  static char opts[1024];
  char path[512];
  snprintf(path, sizeof path, "%s/%s", f->dir, name);
  write_file(path, text);
  snprintf(opts, sizeof opts,
           "'connector' = 'filesystem', 'path' = 'file://%s', "
           "'format' = 'csv'%s%s",
           path, extra ? ", " : "", extra ? extra : "");
  return opts;
}

/* Read every row of t with worker w of n into out; returns the status. */
static int read_worker(const sl_table_def *t, int w, int n, sl_strbuf *out,
                       sl_source_stats *st, sl_error *err) {
  sl_arena a;
  sl_arena_init(&a, 0);
  int *idx;
  sl_row_layout *l = all_leaves(&a, t, &idx);
  sl_source_spec spec = {t, l, idx, w, n, 0, NULL};
  const sl_source_connector *c = sl_source_connector_find("filesystem");
  sl_source *src;
  int rc = c->open(&spec, &src, err);
  if (rc == SL_OK) {
    sl_buffer buf;
    sl_buffer_init(&buf, l, 256);
    bool done = false;
    while (!done && rc == SL_OK) {
      sl_buffer_clear(&buf);
      rc = c->next(src, &buf, &done, err);
      rows_as_text(out, &buf);
    }
    if (st)
      c->stats(src, st);
    sl_buffer_free(&buf);
    c->close(src);
  }
  sl_arena_free(&a);
  return rc;
}

/* All rows of t with one worker; fails the test on error. */
static char *read_all(const sl_table_def *t, sl_source_stats *st) {
  sl_strbuf out = SL_STRBUF_INIT;
  sl_error err = {0};
  if (read_worker(t, 0, 1, &out, st, &err) != SL_OK)
    fail_msg("%s", err.message);
  sl_strbuf_append(&out, "");
  return sl_strbuf_detach(&out);
}

static const char *cols4 =
    "id BIGINT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3)";

static void test_quoting_crlf_nulls(void **state) {
  fixture *f = *state;
  const char *opts =
      csv_file(f, "q.csv",
               "1,plain,1.50,2015-07-15 00:00:00\r\n"
               "2,\"with, comma \"\"q\"\"\",-0.05,2015-07-15T00:00:01.5\r\n"
               "3,\"line\nbreak\",,1969-12-31 23:59:59.999\n"
               ",\"\",0,2024-02-29 00:00:00\n"
               "\n"
               "5,a string well over twelve bytes,7,2015-07-15 00:00:00",
               NULL);
  const sl_table_def *t = make_table(f->session, "q", cols4, opts);
  sl_source_stats st;
  char *got = read_all(t, &st);
  assert_string_equal(got, "1|plain|1.50|2015-07-15 00:00:00.000\n"
                           "2|with, comma \"q\"|-0.05|2015-07-15 "
                           "00:00:01.500\n"
                           "3|line\nbreak|\\N|1969-12-31 23:59:59.999\n"
                           "\\N||0.00|2024-02-29 00:00:00.000\n"
                           "5|a string well over twelve bytes|7.00|2015-07-15 "
                           "00:00:00.000\n");
  assert_int_equal(st.rows, 5);
  assert_int_equal(st.skipped_rows, 0);
  free(got);
}

static void test_dialect_options(void **state) {
  fixture *f = *state;
  const char *opts = csv_file(f, "d.csv",
                              "id;name\n"
                              "# a comment; with \"a quote\n"
                              "1;x\n"
                              "2;NA\n",
                              "'csv.field-delimiter' = ';', "
                              "'csv.allow-comments' = 'true', "
                              "'csv.ignore-first-line' = 'true', "
                              "'csv.null-literal' = 'NA'");
  const sl_table_def *t =
      make_table(f->session, "d", "id BIGINT, name STRING", opts);
  char *got = read_all(t, NULL);
  assert_string_equal(got, "1|x\n2|\\N\n");
  free(got);

  opts = csv_file(f, "tab.csv", "1\ta,b\n", "'csv.field-delimiter' = '\\t'");
  t = make_table(f->session, "tab", "id BIGINT, name STRING", opts);
  got = read_all(t, NULL);
  assert_string_equal(got, "1|a,b\n");
  free(got);
}

/* The error for a bad file, and where it points. */
static char *error_of(fixture *f, const char *name, const char *text,
                      const char *cols) {
  const char *opts = csv_file(f, name, text, NULL);
  char tname[64];
  snprintf(tname, sizeof tname, "%.*s", (int)strcspn(name, "."), name);
  const sl_table_def *t = make_table(f->session, tname, cols, opts);
  sl_strbuf out = SL_STRBUF_INIT;
  sl_error err = {0};
  int rc = read_worker(t, 0, 1, &out, NULL, &err);
  sl_strbuf_free(&out);
  assert_int_not_equal(rc, SL_OK);
  char *m = strdup(err.message);
  sl_error_clear(&err);
  return m;
}

static void test_errors_name_file_line_column(void **state) {
  fixture *f = *state;
  char *m = error_of(f, "e1.csv",
                     "1,a,1,2015-07-15 00:00:00\n"
                     "2,\"b\nc\",1,2015-07-15 00:00:00\n"
                     "x1,d,1,2015-07-15 00:00:00\n",
                     cols4);
  /* Line 4: the quoted newline on line 2 counts as a line. */
  assert_non_null(strstr(m, "/e1.csv:4:1: expected a BIGINT, got 'x1' "
                            "(column 'id' of table 'e1'"));
  assert_non_null(strstr(m, "'csv.ignore-parse-errors' = 'true'"));
  free(m);
  m = error_of(f, "e2.csv", "1,a,1.5\n", cols4);
  assert_non_null(strstr(m, "e2.csv:1:3: too few fields (expected 4, got 3)"));
  free(m);
  m = error_of(f, "e3.csv", "1,a,1.5,2015-07-15 00:00:00,9\n", cols4);
  assert_non_null(strstr(m, "e3.csv:1:5: too many fields (expected 4, got "
                            "5)"));
  free(m);
  m = error_of(f, "e4.csv", "1,a,1.5,2015-07-15 00:00:00\n2,\"open,1,x\n",
               cols4);
  assert_non_null(strstr(m, "e4.csv:2:2: unterminated quoted field"));
  free(m);
  m = error_of(f, "e5.csv", "1,\"a\"b,1,2015-07-15 00:00:00\n", cols4);
  assert_non_null(strstr(m, "e5.csv:1:2: characters after the closing "
                            "quote"));
  free(m);
  m = error_of(f, "e6.csv", "1,a,1,2015-13-01 00:00:00\n", cols4);
  assert_non_null(strstr(m, "e6.csv:1:4: expected a TIMESTAMP(3)"));
  free(m);
  m = error_of(f, "e7.csv", ",a\n", "id BIGINT NOT NULL, name STRING");
  assert_non_null(strstr(m, "e7.csv:1:1: the column is NOT NULL"));
  free(m);
}

static void test_ignore_parse_errors(void **state) {
  fixture *f = *state;
  const char *opts = csv_file(f, "ign.csv",
                              "1,a\n"
                              "x,b\n"
                              "3,\"c\n"
                              "d\"\n"
                              "4\n"
                              "5,e\n",
                              "'csv.ignore-parse-errors' = 'true'");
  const sl_table_def *t =
      make_table(f->session, "ign", "id BIGINT, name STRING", opts);
  sl_source_stats st;
  char *got = read_all(t, &st);
  assert_string_equal(got, "1|a\n3|c\nd\n5|e\n");
  assert_int_equal(st.rows, 3);
  assert_int_equal(st.skipped_rows, 2);
  free(got);
}

static int cmp_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted rows of the text (records are separated by "\n" + digit). */
static char *sorted_records(const char *text) {
  char *copy = strdup(text);
  char **recs = calloc(strlen(text) + 1, sizeof *recs);
  int n = 0;
  char *p = copy;
  while (*p) {
    recs[n++] = p;
    /* A record ends at "\n" followed by a digit (its id) or the end. */
    char *e = p;
    while (*e &&
           !(e[0] == '\n' && (e[1] == '\0' || (e[1] >= '0' && e[1] <= '9'))))
      e++;
    if (*e)
      *e++ = '\0';
    p = e;
  }
  qsort(recs, (size_t)n, sizeof *recs, cmp_lines);
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < n; i++)
    sl_strbuf_printf(&b, "%s\n", recs[i]);
  free(recs);
  free(copy);
  sl_strbuf_append(&b, "");
  return sl_strbuf_detach(&b);
}

static void test_split_across_workers(void **state) {
  fixture *f = *state;
  /* Rows of varying length; some with quoted newlines and delimiters, a
   * comment line that holds a quote, so a byte split point can fall
   * inside a quoted field. */
  sl_strbuf csv = SL_STRBUF_INIT;
  sl_strbuf_append(&csv, "id,name\n");
  for (int i = 0; i < 700; i++) {
    if (i % 97 == 0)
      sl_strbuf_append(&csv, "# comment \" with a quote\n");
    if (i % 5 == 0)
      sl_strbuf_printf(&csv, "%d,\"multi\nline %d, \"\"x\"\"\n%d\"\r\n", i, i,
                       i * 7);
    else
      sl_strbuf_printf(&csv, "%d,%.*s\n", i, i % 40,
                       "abcdefghijklmnopqrstu"
                       "vwxyzABCDEFGHIJKLMNOP");
  }
  /* csv.split-min-bytes 0: split even this small file. */
  char extra[] = "'csv.allow-comments' = 'true', "
                 "'csv.ignore-first-line' = 'true', "
                 "'csv.split-min-bytes' = '0'";
  const char *opts = csv_file(f, "split.csv", sl_strbuf_cstr(&csv), extra);
  sl_strbuf_free(&csv);
  const sl_table_def *t =
      make_table(f->session, "split", "id BIGINT, name STRING", opts);
  sl_source_stats st1;
  char *one = read_all(t, &st1);
  assert_int_equal(st1.rows, 700);
  char *want = sorted_records(one);
  for (int n = 2; n <= 7; n++) {
    sl_strbuf all = SL_STRBUF_INIT;
    uint64_t rows = 0, bytes = 0;
    for (int w = 0; w < n; w++) {
      sl_error err = {0};
      sl_source_stats st;
      if (read_worker(t, w, n, &all, &st, &err) != SL_OK)
        fail_msg("worker %d of %d: %s", w, n, err.message);
      rows += st.rows;
      bytes += st.bytes;
    }
    assert_int_equal(rows, 700);
    sl_strbuf_append(&all, "");
    char *got = sorted_records(all.data);
    assert_string_equal(got, want);
    free(got);
    sl_strbuf_free(&all);
  }
  free(want);
  free(one);

  /* Without any quote the split takes the fast path (the line break
   * before the split point); the same rows must come out. */
  sl_strbuf plain = SL_STRBUF_INIT;
  for (int i = 0; i < 500; i++)
    sl_strbuf_printf(&plain, "%d,%.*s\r\n", i, i % 30,
                     "abcdefghijklmnopqrstuvwxyz0123");
  char split_all[] = "'csv.split-min-bytes' = '0'";
  opts = csv_file(f, "plain.csv", sl_strbuf_cstr(&plain), split_all);
  sl_strbuf_free(&plain);
  t = make_table(f->session, "plain", "id BIGINT, name STRING", opts);
  one = read_all(t, NULL);
  want = sorted_records(one);
  for (int n = 2; n <= 5; n++) {
    sl_strbuf all = SL_STRBUF_INIT;
    for (int w = 0; w < n; w++) {
      sl_error err = {0};
      if (read_worker(t, w, n, &all, NULL, &err) != SL_OK)
        fail_msg("worker %d of %d: %s", w, n, err.message);
    }
    sl_strbuf_append(&all, "");
    char *got = sorted_records(all.data);
    assert_string_equal(got, want);
    free(got);
    sl_strbuf_free(&all);
  }
  free(want);
  free(one);
}

/* Below 'csv.split-min-bytes' one worker reads the whole file, so the
 * order of records (and with it event-time lateness) does not depend on
 * the number of workers. */
static void test_small_file_one_reader(void **state) {
  fixture *f = *state;
  const char *opts = csv_file(f, "small.csv", "1,a\n2,b\n3,c\n", NULL);
  const sl_table_def *t =
      make_table(f->session, "small", "id BIGINT, name STRING", opts);
  sl_strbuf w0 = SL_STRBUF_INIT, w1 = SL_STRBUF_INIT;
  sl_error err = {0};
  sl_source_stats st0, st1;
  assert_int_equal(read_worker(t, 0, 2, &w0, &st0, &err), SL_OK);
  assert_int_equal(read_worker(t, 1, 2, &w1, &st1, &err), SL_OK);
  assert_int_equal(st0.rows, 3);
  assert_int_equal(st1.rows, 0);
  sl_strbuf_free(&w0);
  sl_strbuf_free(&w1);
}

static void test_leaves_and_subsets(void **state) {
  fixture *f = *state;
  const char *opts = csv_file(f, "nest.csv", "1,2,x,3.5\n", NULL);
  const sl_table_def *t = make_table(
      f->session, "nest",
      "id BIGINT, r ROW<a INT, b STRING>, d DOUBLE, twice AS id * 2", opts);
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_leaf_columns lc;
  sl_table_leaf_columns(&a, t, &lc);
  assert_int_equal(lc.n, 4);
  assert_string_equal(lc.names[1], "r.a");
  assert_string_equal(lc.names[2], "r.b");
  assert_int_equal(lc.types[3]->kind, SL_TYPE_DOUBLE);
  /* Read only d and r.b, in that order. */
  const sl_type *types[] = {lc.types[3], lc.types[2]};
  sl_row_layout *l = sl_row_layout_new(&a, 2, NULL, types);
  int idx[] = {3, 2};
  sl_source_spec spec = {t, l, idx, 0, 1, 0, NULL};
  sl_source *src;
  sl_error err = {0};
  assert_int_equal(sl_source_filesystem.open(&spec, &src, &err), SL_OK);
  sl_buffer buf;
  sl_buffer_init(&buf, l, 4096);
  bool done;
  assert_int_equal(sl_source_filesystem.next(src, &buf, &done, &err), SL_OK);
  assert_true(done);
  sl_strbuf out = SL_STRBUF_INIT;
  rows_as_text(&out, &buf);
  assert_string_equal(sl_strbuf_cstr(&out), "3.5|x\n");
  sl_strbuf_free(&out);
  sl_buffer_free(&buf);
  sl_source_filesystem.close(src);
  sl_arena_free(&a);
}

static void test_options_checked(void **state) {
  fixture *f = *state;
  const struct {
    const char *opts, *expect;
  } cases[] = {
      {"'connector' = 'filesystem', 'path' = '/x', 'format' = 'json'",
       "format 'json' is not supported by the filesystem connector"},
      {"'connector' = 'filesystem', 'format' = 'csv'", "add 'path' ="},
      {"'connector' = 'filesystem', 'path' = '/x'", "add 'format' = 'csv'"},
      {"'connector' = 'filesystem', 'path' = '/x', 'format' = 'csv', "
       "'csv.field-delimiter' = ';;'",
       "'csv.field-delimiter' must be a single character"},
      {"'connector' = 'filesystem', 'path' = '/x', 'format' = 'csv', "
       "'csv.header' = 'true'",
       "option 'csv.header' is not supported"},
      {"'connector' = 'filesystem', 'path' = '/x', 'format' = 'csv', "
       "'csv.ignore-parse-errors' = 'yes'",
       "'csv.ignore-parse-errors' must be 'true' or 'false', got 'yes'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char name[16];
    snprintf(name, sizeof name, "o%zu", i);
    create_must_fail(f->session, name, "a INT", cases[i].opts, cases[i].expect);
  }
  /* A missing file: the error names it and the option. */
  const sl_table_def *t =
      make_table(f->session, "missing", "a INT",
                 "'connector' = 'filesystem', 'path' = '/nonexistent/x.csv', "
                 "'format' = 'csv'");
  sl_strbuf out = SL_STRBUF_INIT;
  sl_error err = {0};
  assert_int_equal(read_worker(t, 0, 1, &out, NULL, &err), SL_EIO);
  assert_non_null(strstr(err.message, "cannot open '/nonexistent/x.csv'"));
  sl_error_clear(&err);
  sl_strbuf_free(&out);
  /* An empty file is a bounded source with no rows. */
  const char *opts = csv_file(f, "empty.csv", "", NULL);
  t = make_table(f->session, "empty", "a INT", opts);
  char *got = read_all(t, NULL);
  assert_string_equal(got, "");
  free(got);
}

static void test_registry(void **state) {
  (void)state;
  assert_ptr_equal(sl_source_connector_find("FileSystem"),
                   &sl_source_filesystem);
  assert_null(sl_source_connector_find("kafka"));
  assert_null(sl_sink_connector_find(NULL));
  /* The names lists agree with the tables. */
  const char *lists[2] = {sl_source_connector_names(),
                          sl_sink_connector_names()};
  for (int k = 0; k < 2; k++) {
    char *copy = strdup(lists[k]);
    int n = 0;
    for (char *tok = strtok(copy, ", "); tok; tok = strtok(NULL, ", "), n++)
      if (k == 0 ? !sl_source_connector_find(tok)
                 : !sl_sink_connector_find(tok))
        fail_msg("'%s' is listed but not registered", tok);
    assert_true(n > 0);
    free(copy);
  }
  const char *sinks[] = {"filesystem", "SQLITE", "blackhole", "print"};
  for (int i = 0; i < 4; i++)
    assert_non_null(sl_sink_connector_find(sinks[i]));
  assert_non_null(sl_shell_sink_connector());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_quoting_crlf_nulls, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dialect_options, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors_name_file_line_column, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_ignore_parse_errors, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_small_file_one_reader, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_split_across_workers, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_leaves_and_subsets, setup, teardown),
      cmocka_unit_test_setup_teardown(test_options_checked, setup, teardown),
      cmocka_unit_test(test_registry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
