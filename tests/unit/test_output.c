/* test_output.c - the shell's output modes, byte for byte.
 *
 * One small result (NULLs, numbers, a boolean, quotes, commas, a newline
 * and CJK text inside cells) is printed in every mode and compared with the
 * exact expected text; then the edge cases: headers off, no rows, groups
 * printed at flush, text blocks, CSV's empty string vs NULL, JSON numbers
 * that JSON cannot spell, and write errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io_helpers.h"
#include "sluice/shell/shell.h"

/* ---- Helpers ---- */

typedef struct capture {
  char *buf;
  size_t len;
  FILE *fp;
  sl_output out;
  sl_result_sink sink;
} capture;

static void capture_open(capture *c, sl_output_mode mode, bool headers) {
  memset(c, 0, sizeof *c);
  c->fp = open_memstream(&c->buf, &c->len);
  assert_non_null(c->fp);
  sl_output_init(&c->out, c->fp, mode, headers);
  c->sink = sl_output_sink(&c->out);
}

/* Close the stream and return what was printed (the caller frees). */
static char *capture_close(capture *c) {
  sl_output_free(&c->out);
  fclose(c->fp);
  return c->buf;
}

static const char *const names[] = {"id", "name", "price", "ok"};
static const char *const row1[] = {"1", "plain", "1.50", "TRUE"};
static const char *const row2[] = {"22", "with, comma \"q\"", NULL, "FALSE"};
static const char *const row3[] = {NULL, "line\nbreak", "-3.25", NULL};
static const char *const row4[] = {"4", "日本語 ok", "0.00", "TRUE"};

/* The sample result: BIGINT, STRING, DECIMAL(10, 2), BOOLEAN. */
static char *print_sample(sl_output_mode mode, bool headers) {
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *types[] = {sl_type_new(&a, SL_TYPE_BIGINT),
                            sl_type_varchar(&a, -1), sl_type_decimal(&a, 10, 2),
                            sl_type_new(&a, SL_TYPE_BOOLEAN)};
  capture c;
  capture_open(&c, mode, headers);
  assert_int_equal(c.sink.begin(c.sink.ctx, 4, names, types), SL_OK);
  assert_int_equal(c.sink.row(c.sink.ctx, row1), SL_OK);
  assert_int_equal(c.sink.row(c.sink.ctx, row2), SL_OK);
  assert_int_equal(c.sink.row(c.sink.ctx, row3), SL_OK);
  assert_int_equal(c.sink.row(c.sink.ctx, row4), SL_OK);
  assert_int_equal(c.sink.end(c.sink.ctx), SL_OK);
  sl_arena_free(&a);
  return capture_close(&c);
}

static void expect_sample(sl_output_mode mode, bool headers,
                          const char *expected) {
  char *got = print_sample(mode, headers);
  assert_string_equal(got, expected);
  free(got);
}

/* ---- NUL characters ----
 * A STRING may hold U+0000 (as a Java String, so Flink's STRING, may).  A
 * CSV file's NUL is kept by the source; the shell shows it whole: raw in
 * csv and line (a value's bytes as they are), \u0000 in json, \x00 in the
 * boxed modes (escaped as their other control characters).  Before issue
 * 27 every mode cut the value at the NUL. */

/* Run sql through a session into an output of the mode; the bytes printed
 * (their length in *len; the caller frees). */
static char *run_in_mode(sl_session *s, const char *sql, sl_output_mode mode,
                         size_t *len) {
  capture c;
  capture_open(&c, mode, false);
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &c.sink, &err) != SL_OK)
    fail_msg("%s: %s", sql, err.message);
  char *out = capture_close(&c);
  *len = c.len;
  return out;
}

static void expect_bytes(const char *got, size_t len, const char *want,
                         size_t want_len) {
  if (len != want_len || memcmp(got, want, len) != 0)
    fail_msg("got %zu bytes '%.*s', want %zu bytes '%.*s'", len, (int)len, got,
             want_len, (int)want_len, want);
}

static void test_nul_in_strings(void **state) {
  (void)state;
  char *dir = make_tmpdir(), in[512], out[512], sql[1200];
  snprintf(in, sizeof in, "%s/in.csv", dir);
  snprintf(out, sizeof out, "%s/out.csv", dir);
  static const char data[] = "a\0b,1\n\"q\0,\",2\n";
  FILE *f = fopen(in, "wb");
  fwrite(data, 1, sizeof data - 1, f);
  fclose(f);
  sl_session *s = sl_session_new();
  snprintf(sql, sizeof sql,
           "CREATE TABLE n (s STRING, k INT) WITH ('connector' = "
           "'filesystem', 'path' = '%s', 'format' = 'csv')",
           in);
  run_sql(s, sql);
  snprintf(sql, sizeof sql,
           "CREATE TABLE o (s STRING, k INT) WITH ('connector' = "
           "'filesystem', 'path' = '%s', 'format' = 'csv')",
           out);
  run_sql(s, sql);
  const char *q = "SELECT s, CHAR_LENGTH(s) FROM n";
  size_t len;
  char *got = run_in_mode(s, q, SL_MODE_CSV, &len);
  static const char csv[] = "a\0b,3\n\"q\0,\",3\n";
  expect_bytes(got, len, csv, sizeof csv - 1);
  free(got);
  got = run_in_mode(s, q, SL_MODE_JSON, &len);
  static const char json[] = "[{\"s\":\"a\\u0000b\",\"EXPR$1\":3},\n"
                             "{\"s\":\"q\\u0000,\",\"EXPR$1\":3}]\n";
  expect_bytes(got, len, json, sizeof json - 1);
  free(got);
  got = run_in_mode(s, q, SL_MODE_LINE, &len);
  static const char line[] = "     s = a\0b\nEXPR$1 = 3\n\n"
                             "     s = q\0,\nEXPR$1 = 3\n";
  expect_bytes(got, len, line, sizeof line - 1);
  free(got);
  got = run_in_mode(s, q, SL_MODE_TABLE, &len);
  static const char table[] = "+--------+---+\n"
                              "| a\\x00b | 3 |\n"
                              "| q\\x00, | 3 |\n"
                              "+--------+---+\n";
  expect_bytes(got, len, table, sizeof table - 1);
  free(got);
  /* A CSV sink writes the values back whole. */
  got = run_in_mode(s, "INSERT INTO o SELECT s, k FROM n", SL_MODE_CSV, &len);
  free(got);
  f = fopen(out, "rb");
  assert_non_null(f);
  char back[64];
  size_t n = fread(back, 1, sizeof back, f);
  fclose(f);
  expect_bytes(back, n, data, sizeof data - 1);
  sl_session_free(s);
  rm_tree(dir);
}

/* ---- Every mode ---- */

static void test_table(void **state) {
  (void)state;
  expect_sample(SL_MODE_TABLE, true,
                "+------+-----------------+-------+-------+\n"
                "|  id  |      name       | price |  ok   |\n"
                "+------+-----------------+-------+-------+\n"
                "|    1 | plain           |  1.50 | TRUE  |\n"
                "|   22 | with, comma \"q\" |  NULL | FALSE |\n"
                "| NULL | line\\nbreak     | -3.25 | NULL  |\n"
                "|    4 | 日本語 ok       |  0.00 | TRUE  |\n"
                "+------+-----------------+-------+-------+\n");
}

static void test_table_no_headers(void **state) {
  (void)state;
  expect_sample(SL_MODE_TABLE, false,
                "+------+-----------------+-------+-------+\n"
                "|    1 | plain           |  1.50 | TRUE  |\n"
                "|   22 | with, comma \"q\" |  NULL | FALSE |\n"
                "| NULL | line\\nbreak     | -3.25 | NULL  |\n"
                "|    4 | 日本語 ok       |  0.00 | TRUE  |\n"
                "+------+-----------------+-------+-------+\n");
}

static void test_box(void **state) {
  (void)state;
  expect_sample(SL_MODE_BOX, true,
                "┌──────┬─────────────────┬───────┬───────┐\n"
                "│  id  │      name       │ price │  ok   │\n"
                "├──────┼─────────────────┼───────┼───────┤\n"
                "│    1 │ plain           │  1.50 │ TRUE  │\n"
                "│   22 │ with, comma \"q\" │  NULL │ FALSE │\n"
                "│ NULL │ line\\nbreak     │ -3.25 │ NULL  │\n"
                "│    4 │ 日本語 ok       │  0.00 │ TRUE  │\n"
                "└──────┴─────────────────┴───────┴───────┘\n");
}

static void test_markdown(void **state) {
  (void)state;
  expect_sample(SL_MODE_MARKDOWN, true,
                "|  id  |      name       | price |  ok   |\n"
                "|-----:|-----------------|------:|-------|\n"
                "|    1 | plain           |  1.50 | TRUE  |\n"
                "|   22 | with, comma \"q\" |  NULL | FALSE |\n"
                "| NULL | line\\nbreak     | -3.25 | NULL  |\n"
                "|    4 | 日本語 ok       |  0.00 | TRUE  |\n");
}

static void test_csv(void **state) {
  (void)state;
  expect_sample(SL_MODE_CSV, true,
                "id,name,price,ok\n"
                "1,plain,1.50,TRUE\n"
                "22,\"with, comma \"\"q\"\"\",,FALSE\n"
                ",\"line\nbreak\",-3.25,\n"
                "4,日本語 ok,0.00,TRUE\n");
}

static void test_csv_no_headers(void **state) {
  (void)state;
  expect_sample(SL_MODE_CSV, false,
                "1,plain,1.50,TRUE\n"
                "22,\"with, comma \"\"q\"\"\",,FALSE\n"
                ",\"line\nbreak\",-3.25,\n"
                "4,日本語 ok,0.00,TRUE\n");
}

static void test_json(void **state) {
  (void)state;
  expect_sample(
      SL_MODE_JSON, true,
      "[{\"id\":1,\"name\":\"plain\",\"price\":1.50,\"ok\":true},\n"
      "{\"id\":22,\"name\":\"with, comma \\\"q\\\"\",\"price\":null,"
      "\"ok\":false},\n"
      "{\"id\":null,\"name\":\"line\\nbreak\",\"price\":-3.25,\"ok\":null},\n"
      "{\"id\":4,\"name\":\"日本語 ok\",\"price\":0.00,\"ok\":true}]\n");
}

static void test_line(void **state) {
  (void)state;
  expect_sample(SL_MODE_LINE, true,
                "   id = 1\n"
                " name = plain\n"
                "price = 1.50\n"
                "   ok = TRUE\n"
                "\n"
                "   id = 22\n"
                " name = with, comma \"q\"\n"
                "price = NULL\n"
                "   ok = FALSE\n"
                "\n"
                "   id = NULL\n"
                " name = line\nbreak\n"
                "price = -3.25\n"
                "   ok = NULL\n"
                "\n"
                "   id = 4\n"
                " name = 日本語 ok\n"
                "price = 0.00\n"
                "   ok = TRUE\n");
}

/* ---- Edge cases ---- */

static const char *const one_name[] = {"s"};

static char *print_one_column(sl_output_mode mode, sl_type_kind kind, int nrows,
                              const char *const *values) {
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *types[] = {sl_type_new(&a, kind)};
  capture c;
  capture_open(&c, mode, true);
  c.sink.begin(c.sink.ctx, 1, one_name, types);
  for (int i = 0; i < nrows; i++) {
    const char *cells[] = {values[i]};
    c.sink.row(c.sink.ctx, cells);
  }
  c.sink.end(c.sink.ctx);
  sl_arena_free(&a);
  return capture_close(&c);
}

static void test_no_rows(void **state) {
  (void)state;
  char *got = print_one_column(SL_MODE_TABLE, SL_TYPE_INT, 0, NULL);
  assert_string_equal(got, "+---+\n"
                           "| s |\n"
                           "+---+\n");
  free(got);
  got = print_one_column(SL_MODE_JSON, SL_TYPE_INT, 0, NULL);
  assert_string_equal(got, "[]\n");
  free(got);
  got = print_one_column(SL_MODE_CSV, SL_TYPE_INT, 0, NULL);
  assert_string_equal(got, "s\n");
  free(got);
}

static void test_csv_empty_vs_null(void **state) {
  (void)state;
  const char *values[] = {"", NULL, " x ", "a\rb"};
  char *got = print_one_column(SL_MODE_CSV, SL_TYPE_VARCHAR, 4, values);
  assert_string_equal(got, "s\n\"\"\n\n x \n\"a\rb\"\n");
  free(got);
}

static void test_json_special_values(void **state) {
  (void)state;
  const char *numbers[] = {"NaN", "-Infinity", "1e5", "-0.5"};
  char *got = print_one_column(SL_MODE_JSON, SL_TYPE_DOUBLE, 4, numbers);
  assert_string_equal(got, "[{\"s\":\"NaN\"},\n{\"s\":\"-Infinity\"},\n"
                           "{\"s\":1e5},\n{\"s\":-0.5}]\n");
  free(got);
  const char *text[] = {"tab\there", "back\\slash", "\x01"};
  got = print_one_column(SL_MODE_JSON, SL_TYPE_VARCHAR, 3, text);
  assert_string_equal(got, "[{\"s\":\"tab\\there\"},\n"
                           "{\"s\":\"back\\\\slash\"},\n"
                           "{\"s\":\"\\u0001\"}]\n");
  free(got);
}

static void test_markdown_escapes_pipes(void **state) {
  (void)state;
  const char *values[] = {"a|b"};
  char *got = print_one_column(SL_MODE_MARKDOWN, SL_TYPE_VARCHAR, 1, values);
  assert_string_equal(got, "|  s   |\n"
                           "|------|\n"
                           "| a\\|b |\n");
  free(got);
}

/* A streaming result: each flushed group (a fired window) is printed at
 * once; rows that fit the open table continue it, a wider one closes it
 * and starts a new table. */
static void test_flush_groups(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *types[] = {sl_type_new(&a, SL_TYPE_INT)};
  capture c;
  capture_open(&c, SL_MODE_TABLE, true);
  const char *r1[] = {"7"}, *r2[] = {"8"}, *r3[] = {"12345"};
  c.sink.begin(c.sink.ctx, 1, one_name, types);
  c.sink.row(c.sink.ctx, r1);
  c.sink.flush(c.sink.ctx);
  fflush(c.fp);
  assert_string_equal(c.buf, "+---+\n| s |\n+---+\n| 7 |\n");
  c.sink.flush(c.sink.ctx); /* nothing new: prints nothing */
  c.sink.row(c.sink.ctx, r2);
  c.sink.flush(c.sink.ctx);
  fflush(c.fp);
  assert_string_equal(c.buf, "+---+\n| s |\n+---+\n| 7 |\n| 8 |\n");
  c.sink.row(c.sink.ctx, r3);
  c.sink.end(c.sink.ctx);
  char *got = capture_close(&c);
  assert_string_equal(got, "+---+\n| s |\n+---+\n| 7 |\n| 8 |\n+---+\n"
                           "+-------+\n|   s   |\n+-------+\n"
                           "| 12345 |\n+-------+\n");
  free(got);
  sl_arena_free(&a);
}

/* An unbounded result without windows never flushes: a boxed mode prints
 * its rows in groups as they come rather than keeping them all (the
 * shell's memory would grow with the stream), continuing one table while
 * the rows fit its widths. */
static void test_unflushed_rows_printed_in_groups(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *types[] = {sl_type_new(&a, SL_TYPE_INT)};
  capture c;
  capture_open(&c, SL_MODE_TABLE, true);
  const char *r[] = {"1"};
  c.sink.begin(c.sink.ctx, 1, one_name, types);
  size_t most = 0;
  for (int i = 0; i < 100000; i++) {
    c.sink.row(c.sink.ctx, r);
    if (c.out.nrows > most)
      most = c.out.nrows;
  }
  assert_true(most <= 4096);
  fflush(c.fp);
  /* Printed before the end: every row but those of the last group. */
  size_t lines = 0;
  for (size_t i = 0; i < c.len; i++)
    lines += c.buf[i] == '\n';
  assert_true(lines >= 3 + 100000 - 4096);
  c.sink.end(c.sink.ctx);
  char *got = capture_close(&c);
  /* One table: a header once, every row, the bottom rule. */
  const char *head = "+---+\n| s |\n+---+\n";
  assert_memory_equal(got, head, strlen(head));
  assert_null(strstr(got + strlen(head), "| s |"));
  size_t len = strlen(got);
  assert_int_equal(len, strlen(head) + 100000 * strlen("| 1 |\n") +
                            strlen("+---+\n"));
  free(got);
  sl_arena_free(&a);
}

static void test_text_block(void **state) {
  (void)state;
  capture c;
  capture_open(&c, SL_MODE_TABLE, true);
  c.sink.text(c.sink.ctx, "== Plan ==\nScan(t)");
  c.sink.text(c.sink.ctx, "done\n");
  char *got = capture_close(&c);
  assert_string_equal(got, "== Plan ==\nScan(t)\ndone\n");
  free(got);
}

static void test_mode_names(void **state) {
  (void)state;
  sl_output_mode m;
  assert_true(sl_output_mode_parse("markdown", &m));
  assert_int_equal(m, SL_MODE_MARKDOWN);
  assert_true(sl_output_mode_parse("BOX", &m));
  assert_int_equal(m, SL_MODE_BOX);
  assert_false(sl_output_mode_parse("list", &m));
  assert_string_equal(sl_output_mode_name(SL_MODE_JSON), "json");
}

static void test_text_width(void **state) {
  (void)state;
  assert_int_equal(sl_text_width("abc", 3), 3);
  assert_int_equal(sl_text_width("日本", strlen("日本")), 4);
  assert_int_equal(sl_text_width("e\xcc\x81", 3), 1); /* e + combining */
  assert_int_equal(sl_text_width("\xff", 1), 1);      /* invalid byte */
  assert_int_equal(sl_text_width("🙂", strlen("🙂")), 2);
}

/* Writing to a full device is an error the sink reports, not a crash. */
static void test_write_error(void **state) {
  (void)state;
  FILE *fp = fopen("/dev/full", "w");
  if (!fp)
    skip();
  sl_output o;
  sl_output_init(&o, fp, SL_MODE_CSV, true);
  sl_result_sink sink = sl_output_sink(&o);
  sl_arena a;
  sl_arena_init(&a, 0);
  const sl_type *types[] = {sl_type_new(&a, SL_TYPE_INT)};
  const char *r[] = {"1"};
  sink.begin(sink.ctx, 1, one_name, types);
  sink.row(sink.ctx, r);
  assert_int_equal(sink.end(sink.ctx), SL_EIO);
  assert_int_not_equal(o.write_errno, 0);
  sl_output_free(&o);
  sl_arena_free(&a);
  fclose(fp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_table_no_headers),
      cmocka_unit_test(test_box),
      cmocka_unit_test(test_markdown),
      cmocka_unit_test(test_csv),
      cmocka_unit_test(test_csv_no_headers),
      cmocka_unit_test(test_json),
      cmocka_unit_test(test_line),
      cmocka_unit_test(test_no_rows),
      cmocka_unit_test(test_csv_empty_vs_null),
      cmocka_unit_test(test_json_special_values),
      cmocka_unit_test(test_markdown_escapes_pipes),
      cmocka_unit_test(test_flush_groups),
      cmocka_unit_test(test_unflushed_rows_printed_in_groups),
      cmocka_unit_test(test_text_block),
      cmocka_unit_test(test_mode_names),
      cmocka_unit_test(test_text_width),
      cmocka_unit_test(test_write_error),
      cmocka_unit_test(test_nul_in_strings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
