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

#include "io_helpers.h"
#include "sluice/connectors/io_connectors.h"

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

/* Read every row of t with worker w of n, in buffers of cap bytes, into
 * out; returns the status. */
static int read_cap(const sl_table_def *t, int w, int n, uint32_t cap,
                    sl_strbuf *out, sl_source_stats *st, sl_error *err) {
  sl_arena a;
  sl_arena_init(&a, 0);
  int *idx;
  sl_row_layout *l = all_leaves(&a, t, &idx);
  sl_source_spec spec = {t, l, idx, w, n, 0, NULL, false, NULL};
  const sl_source_connector *c = sl_source_connector_find("filesystem");
  sl_source *src;
  int rc = c->open(&spec, &src, err);
  if (rc == SL_OK) {
    sl_buffer buf;
    sl_buffer_init(&buf, l, cap);
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

/* Buffers of 256 bytes: "buffer full, resume" happens often. */
static int read_worker(const sl_table_def *t, int w, int n, sl_strbuf *out,
                       sl_source_stats *st, sl_error *err) {
  return read_cap(t, w, n, 256, out, st, err);
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

/* Reading text as table cols fails with a message that starts with
 * <dir>/<name>:<prefix>. */
static void expect_error(fixture *f, const char *name, const char *text,
                         const char *cols, const char *prefix) {
  char *m = error_of(f, name, text, cols);
  char want[1024];
  snprintf(want, sizeof want, "%s/%s:%s", f->dir, name, prefix);
  if (strncmp(m, want, strlen(want)) != 0)
    fail_msg("%s: message\n  %s\ndoes not start with\n  %s", name, m, want);
  free(m);
}

#define TS "2015-07-15 00:00:00"

/* Every kind of malformed record the issue lists: the message names
 * file:line:column, the column being the byte column of the offending
 * field's first byte (of the record's end when a field is missing). */
static void test_errors_name_file_line_column(void **state) {
  fixture *f = *state;
  /* Line 4: the quoted newline on line 2 counts as a line. */
  expect_error(f, "e1.csv",
               "1,a,1," TS "\n2,\"b\nc\",1," TS "\nx1,d,1," TS "\n", cols4,
               "4:1: expected a BIGINT, got 'x1' (column 'id' of table 'e1'; "
               "'csv.ignore-parse-errors' = 'true' skips malformed rows)");
  const struct {
    const char *name, *cols, *text, *prefix;
  } cases[] = {
      /* Wrong column count. */
      {"e2.csv", cols4, "1,a,1.5\n",
       "1:8: too few fields (expected 4, got 3) (column 'ts' of table 'e2';"},
      {"e3.csv", cols4, "1,a,1.5," TS ",9\n",
       "1:29: too many fields (expected 4, got 5) (table 'e3';"},
      /* Quotes. */
      {"e4.csv", cols4, "1,a,1.5," TS "\n2,\"open,1,x\n",
       "2:3: unterminated quoted field (a quote opens it, none closes it) "
       "(column 'name' of table 'e4';"},
      {"e5.csv", cols4, "1,\"a\"b,1," TS "\n",
       "1:3: characters after the closing quote of a quoted field (column "
       "'name' of table 'e5';"},
      {"e6.csv", cols4, "1,a\"b,1," TS "\n",
       "1:3: a quote inside an unquoted field (quote the whole field and "
       "double the quote) (column 'name' of table 'e6';"},
      /* The column counts from the start of the physical line. */
      {"e7.csv", cols4, "1,\"a\nbc\",zz," TS "\n",
       "2:5: expected a DECIMAL(10, 2), got 'zz' (column 'price' of table "
       "'e7';"},
      {"e8.csv", "id BIGINT NOT NULL, name STRING", ",a\n",
       "1:1: the column is NOT NULL but the field is empty (column 'id' of "
       "table 'e8';"},
      /* CRLF ends lines; the '\r' is not part of the field. */
      {"e9.csv", cols4, "1,a,1," TS "\r\nx,b,1," TS "\r\n",
       "2:1: expected a BIGINT, got 'x' (column 'id' of table 'e9';"},
      {"e10.csv", cols4, "1,a,1," TS "\r\n2,b\r\n",
       "2:4: too few fields (expected 4, got 2) (column 'price' of table "
       "'e10';"},
      /* Bad and out-of-range numbers, dates, timestamps. */
      {"n1.csv", "a INT, b BIGINT", "1,2\n12x,3\n",
       "2:1: expected an INT, got '12x' (column 'a' of table 'n1';"},
      {"n2.csv", "a INT, b BIGINT", "99999999999,1\n",
       "1:1: expected an INT (out of range: -2147483648 to 2147483647), got "
       "'99999999999' (column 'a' of table 'n2';"},
      {"n3.csv", "a INT, b BIGINT", "2147483647,1\n2147483648,1\n",
       "2:1: expected an INT (out of range: -2147483648 to 2147483647), got "
       "'2147483648' (column 'a' of table 'n3';"},
      {"n4.csv", "a INT, b BIGINT", "1e999,1\n",
       "1:1: expected an INT, got '1e999' (column 'a' of table 'n4';"},
      {"n5.csv", "a INT, b BIGINT",
       "1,-9223372036854775808\n1,9223372036854775808\n",
       "2:3: expected a BIGINT (out of range: -9223372036854775808 to "
       "9223372036854775807), got '9223372036854775808' (column 'b' of "
       "table 'n5';"},
      {"n6.csv", "a INT, d DECIMAL(10, 2)", "1,12.3.4\n",
       "1:3: expected a DECIMAL(10, 2), got '12.3.4' (column 'd' of table "
       "'n6';"},
      {"n7.csv", "a INT, d DECIMAL(10, 2)", "1,123456789.5\n",
       "1:3: expected a DECIMAL(10, 2) (too many digits before the point), "
       "got '123456789.5' (column 'd' of table 'n7';"},
      {"n8.csv", "a INT, d DECIMAL(10, 2)", "1,1e999\n",
       "1:3: expected a DECIMAL(10, 2) (too many digits before the point), "
       "got '1e999' (column 'd' of table 'n8';"},
      {"n9.csv", "a INT, d DATE", "1,2024-02-30\n",
       "1:3: expected a DATE (yyyy-MM-dd), got '2024-02-30' (column 'd' of "
       "table 'n9';"},
      {"n10.csv", cols4, "1,a,1,2015-13-01 00:00:00\n",
       "1:7: expected a TIMESTAMP(3) (yyyy-MM-dd HH:mm:ss[.fff]), got "
       "'2015-13-01 00:00:00' (column 'ts' of table 'n10';"},
      /* Invalid UTF-8 in a string column: a stray byte, an overlong form
       * (after unescaping ""), a surrogate, a sequence cut short, a code
       * point above U+10FFFF. */
      {"u1.csv", "a INT, s STRING", "1,ab\xff\n",
       "1:3: invalid UTF-8 in a string (byte 0xFF at byte 3 of the value) "
       "(column 's' of table 'u1';"},
      {"u2.csv", "a INT, s STRING", "1,\"x\"\"\xc0\xaf\"\n",
       "1:3: invalid UTF-8 in a string (byte 0xC0 at byte 3 of the value)"},
      {"u3.csv", "a INT, s STRING", "1,\xed\xa0\x80\n",
       "1:3: invalid UTF-8 in a string (byte 0xED at byte 1 of the value)"},
      {"u4.csv", "a INT, s STRING", "1,abc\xe2\x82\n",
       "1:3: invalid UTF-8 in a string (byte 0xE2 at byte 4 of the value)"},
      {"u5.csv", "a INT, s STRING", "1,\xf4\x90\x80\x80\n",
       "1:3: invalid UTF-8 in a string (byte 0xF4 at byte 1 of the value)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_error(f, cases[i].name, cases[i].text, cases[i].cols,
                 cases[i].prefix);
}

/* A string of n bytes of c (the caller frees). */
static char *repeat(char c, size_t n) {
  char *p = malloc(n + 1);
  memset(p, c, n);
  p[n] = '\0';
  return p;
}

/* The one length limit is a buffer ('sluice.buffer-size'; 256 bytes in
 * these tests): a record whose strings do not fit in an empty one is an
 * error naming the longest field.  Below it, long fields are read whole:
 * a 1 MiB string with a buffer big enough. */
static void test_long_fields(void **state) {
  fixture *f = *state;
  char *x300 = repeat('x', 300);
  sl_strbuf text = SL_STRBUF_INIT;
  sl_strbuf_printf(&text, "1,x\n2,%s\n", x300);
  expect_error(f, "l1.csv", sl_strbuf_cstr(&text), "a INT, s STRING",
               "2:3: field too long: the record's strings take 300 bytes, "
               "more than a buffer of 256 bytes holds; raise SET "
               "'sluice.buffer-size' (column 's' of table 'l1';");
  sl_strbuf_free(&text);
  free(x300);

  /* 1 MiB plain, and 1 MiB quoted with "" pairs and multi-byte UTF-8. */
  size_t n = (size_t)1 << 18;
  sl_strbuf plain = SL_STRBUF_INIT, quoted = SL_STRBUF_INIT,
            unq = SL_STRBUF_INIT;
  for (size_t i = 0; i < n; i++) {
    sl_strbuf_append(&plain, "abcd");
    sl_strbuf_append(&quoted, "\"\"\xc3\xa9");
    sl_strbuf_append(&unq, "\"\xc3\xa9");
  }
  sl_strbuf csv = SL_STRBUF_INIT, want = SL_STRBUF_INIT;
  sl_strbuf_printf(&csv, "1,%s\n2,\"%s\"\n3,x\n", sl_strbuf_cstr(&plain),
                   sl_strbuf_cstr(&quoted));
  sl_strbuf_printf(&want, "1|%s\n2|%s\n3|x\n", sl_strbuf_cstr(&plain),
                   sl_strbuf_cstr(&unq));
  const char *opts = csv_file(f, "big.csv", sl_strbuf_cstr(&csv), NULL);
  const sl_table_def *t =
      make_table(f->session, "big", "a INT, s STRING", opts);
  sl_strbuf out = SL_STRBUF_INIT;
  sl_error err = {0};
  sl_source_stats st;
  if (read_cap(t, 0, 1, 8u << 20, &out, &st, &err) != SL_OK)
    fail_msg("%s", err.message);
  assert_int_equal(out.len, want.len);
  assert_true(memcmp(out.data, want.data, want.len) == 0);
  assert_int_equal(st.rows, 3);
  assert_int_equal(st.skipped_rows, 0);
  sl_strbuf_free(&out);
  sl_strbuf_free(&csv);
  sl_strbuf_free(&want);
  sl_strbuf_free(&plain);
  sl_strbuf_free(&quoted);
  sl_strbuf_free(&unq);
}

/* Valid UTF-8 passes byte for byte, the edges of every sequence length
 * included, inside and outside quotes, short (inline) and long. */
static void test_utf8_strings(void **state) {
  fixture *f = *state;
  const char *vals[] = {
      "\xc2\x80",                     /* U+0080 */
      "caf\xc3\xa9 \xe2\x82\xac",     /* é € */
      "\xed\x9f\xbf\xee\x80\x80",     /* U+D7FF U+E000: around the gap */
      "\xef\xbf\xbf\xf4\x8f\xbf\xbf", /* U+FFFF U+10FFFF */
      "\xf0\x9f\x98\x80 a long one past the 12 inline bytes \xe2\x82\xac",
  };
  sl_strbuf csv = SL_STRBUF_INIT, want = SL_STRBUF_INIT;
  for (int i = 0; i < 5; i++) {
    sl_strbuf_printf(&csv, i % 2 ? "%d,\"%s\"\n" : "%d,%s\n", i, vals[i]);
    sl_strbuf_printf(&want, "%d|%s\n", i, vals[i]);
  }
  const char *opts = csv_file(f, "u.csv", sl_strbuf_cstr(&csv), NULL);
  const sl_table_def *t = make_table(f->session, "u", "a INT, s STRING", opts);
  char *got = read_all(t, NULL);
  assert_string_equal(got, sl_strbuf_cstr(&want));
  free(got);
  sl_strbuf_free(&csv);
  sl_strbuf_free(&want);
}

/* A UTF-8 byte order mark starting the file is no part of the first field
 * (some programs write one before CSV); one anywhere else is data. */
static void test_byte_order_mark(void **state) {
  fixture *f = *state;
  const char *opts = csv_file(f, "bom.csv",
                              "\xEF\xBB\xBF"
                              "x,1\n"
                              "\xEF\xBB\xBFy,2\n",
                              NULL);
  const sl_table_def *t =
      make_table(f->session, "bom", "s STRING, n INT", opts);
  char *got = read_all(t, NULL);
  assert_string_equal(got, "x|1\n\xEF\xBB\xBFy|2\n");
  free(got);
  /* A number first, a quoted field first, a header first. */
  opts = csv_file(f, "bom2.csv",
                  "\xEF\xBB\xBF"
                  "7,a\n",
                  NULL);
  t = make_table(f->session, "bom2", "n INT, s STRING", opts);
  got = read_all(t, NULL);
  assert_string_equal(got, "7|a\n");
  free(got);
  opts = csv_file(f, "bom3.csv", "\xEF\xBB\xBF\"q,\",3\n", NULL);
  t = make_table(f->session, "bom3", "s STRING, n INT", opts);
  got = read_all(t, NULL);
  assert_string_equal(got, "q,|3\n");
  free(got);
  opts = csv_file(f, "bom4.csv",
                  "\xEF\xBB\xBF"
                  "n,s\n8,b\n",
                  "'csv.ignore-first-line' = 'true'");
  t = make_table(f->session, "bom4", "n INT, s STRING", opts);
  got = read_all(t, NULL);
  assert_string_equal(got, "8|b\n");
  free(got);
}

/* CRLF ends records (no '\r' in any value, also at the end of the file
 * without a final line break); "" inside a quoted field is one quote. */
static void test_crlf_and_doubled_quotes(void **state) {
  fixture *f = *state;
  const char *text = "1,plain\r\n"
                     "2,\"quoted\"\r\n"
                     "3,\r\n"
                     "\r\n"
                     "4,\"\"\r\n"
                     "5,\"a\"\"b\"\r\n"
                     "6,\"\"\"\"\r\n"
                     "7,\"\"\"x\"\"\"\r\n"
                     "8,\"a\"\"\"\"b, c\"\r\n"
                     "9,last\r";
  const char *want = "1|plain\n2|quoted\n3|\\N\n4|\n5|a\"b\n6|\"\n7|\"x\"\n"
                     "8|a\"\"b, c\n9|last\n";
  const char *extra[] = {NULL, "'csv.ignore-parse-errors' = 'true'"};
  for (int k = 0; k < 2; k++) {
    char name[16];
    snprintf(name, sizeof name, "crlf%d", k);
    const char *opts = csv_file(f, "crlf.csv", text, extra[k]);
    const sl_table_def *t =
        make_table(f->session, name, "id INT, name STRING", opts);
    sl_source_stats st;
    char *got = read_all(t, &st);
    assert_string_equal(got, want);
    assert_null(strchr(got, '\r'));
    assert_int_equal(st.rows, 9);
    assert_int_equal(st.skipped_rows, 0);
    free(got);
  }
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

/* With 'csv.ignore-parse-errors' every kind of malformed record is skipped
 * and counted, and only it: the good records around it, also those after
 * a quote never closed, come out, at every number of workers. */
static void test_ignore_parse_errors_each_kind(void **state) {
  fixture *f = *state;
  char *x300 = repeat('x', 300);
  sl_strbuf csv = SL_STRBUF_INIT;
  sl_strbuf_printf(&csv,
                   "1,a,1.5,2024-01-01," TS "\n"
                   "12x,b,1,2024-01-01," TS "\n"         /* bad INT */
                   "99999999999,b,1,2024-01-01," TS "\n" /* INT overflow */
                   "1e999,b,1,2024-01-01," TS "\n"       /* INT overflow */
                   "2,b,12.3.4,2024-01-01," TS "\n"      /* bad DECIMAL */
                   "2,b,123456789,2024-01-01," TS "\n"   /* DECIMAL overflow */
                   "3,b,1,2024-02-30," TS "\n"           /* bad DATE */
                   "4,b,1,2024-01-01,2015-13-01 00:00:00\n" /* bad TIMESTAMP */
                   "5,b,1\n"                                /* too few */
                   "6,b,1,2024-01-01," TS ",x\n"            /* too many */
                   "7,b\"q,1,2024-01-01," TS "\n"           /* stray quote */
                   "8,\"b\"q,1,2024-01-01," TS "\n" /* after the quote */
                   "9,\xff,1,2024-01-01," TS "\n"   /* invalid UTF-8 */
                   "10,%s,1,2024-01-01," TS "\n"    /* too long */
                   "11,\"it \"\"is\"\" ok\",2,2024-01-02," TS "\r\n"
                   "12,\"never closed,1,2024-01-01," TS "\n" /* unterminated */
                   "13,z,3,2024-01-03," TS "\n",
                   x300);
  free(x300);
  const char *want = "1|a|1.50|2024-01-01|2015-07-15 00:00:00.000\n"
                     "11|it \"is\" ok|2.00|2024-01-02|2015-07-15 "
                     "00:00:00.000\n"
                     "13|z|3.00|2024-01-03|2015-07-15 00:00:00.000\n";
  const char *opts = csv_file(f, "kinds.csv", sl_strbuf_cstr(&csv),
                              "'csv.ignore-parse-errors' = 'true', "
                              "'csv.split-min-bytes' = '0'");
  sl_strbuf_free(&csv);
  const sl_table_def *t = make_table(
      f->session, "kinds",
      "id INT, name STRING, price DECIMAL(10, 2), d DATE, ts TIMESTAMP(3)",
      opts);
  for (int n = 1; n <= 4; n++) {
    sl_strbuf all = SL_STRBUF_INIT;
    uint64_t rows = 0, skipped = 0;
    for (int w = 0; w < n; w++) {
      sl_error err = {0};
      sl_source_stats st;
      if (read_worker(t, w, n, &all, &st, &err) != SL_OK)
        fail_msg("worker %d of %d: %s", w, n, err.message);
      rows += st.rows;
      skipped += st.skipped_rows;
    }
    sl_strbuf_append(&all, "");
    char *got = sorted_records(all.data), *sorted = sorted_records(want);
    assert_string_equal(got, sorted);
    free(got);
    free(sorted);
    assert_int_equal(rows, 3);
    assert_int_equal(skipped, 14);
    sl_strbuf_free(&all);
  }
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
  sl_source_spec spec = {t, l, idx, 0, 1, 0, NULL, false, NULL};
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
  assert_ptr_equal(sl_source_connector_find("FileSystem"), &sl_source_files);
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

/* ---- a file that changes under the reader --------------------------------
 * The source maps the file; before issue 27 a file truncated while it was
 * read killed the process with SIGBUS.  Each test opens a source, reads
 * one small buffer, changes the file, then reads on: the process must
 * survive and the error must name the file and what happened. */

/* n rows "i,name-i\n" of 19 bytes each (i below 10^6): a file of many
 * pages. */
static const char *rows_file(fixture *f, const char *name, int n,
                             const char *extra, char *path, size_t cap) {
  sl_strbuf csv = SL_STRBUF_INIT;
  for (int i = 0; i < n; i++)
    sl_strbuf_printf(&csv, "%06d,name-%06d\n", i, i);
  const char *opts = csv_file(f, name, sl_strbuf_cstr(&csv), extra);
  sl_strbuf_free(&csv);
  snprintf(path, cap, "%s/%s", f->dir, name);
  return opts;
}

/* Open a source on t (one worker), read one buffer of 256 bytes, run
 * change(path), then read on until the end, an error, or (a followed
 * file) `idle` calls that give no row.  Returns the status; *rows: the
 * rows read. */
static int read_around(const sl_table_def *t, const char *path,
                       void (*change)(const char *), int idle, long *rows,
                       sl_error *err) {
  sl_arena a;
  sl_arena_init(&a, 0);
  int *idx;
  sl_row_layout *l = all_leaves(&a, t, &idx);
  sl_source_spec spec = {t, l, idx, 0, 1, 0, NULL, false, NULL};
  const sl_source_connector *c = sl_source_connector_find("filesystem");
  sl_source *src;
  *rows = 0;
  int rc = c->open(&spec, &src, err);
  if (rc == SL_OK) {
    sl_buffer buf;
    sl_buffer_init(&buf, l, 256);
    bool done = false;
    for (int calls = 0, empty = 0; !done && rc == SL_OK && empty <= idle;
         calls++) {
      if (calls == 1)
        change(path);
      sl_buffer_clear(&buf);
      rc = c->next(src, &buf, &done, err);
      *rows += buf.nrows;
      empty = buf.nrows == 0 ? empty + 1 : 0;
    }
    sl_buffer_free(&buf);
    c->close(src);
  }
  sl_arena_free(&a);
  return rc;
}

static void truncate_to_page(const char *path) {
  assert_int_equal(truncate(path, 8192), 0);
}
static void truncate_mid_page(const char *path) {
  assert_int_equal(truncate(path, 8200), 0);
}
static void remove_file(const char *path) {
  assert_int_equal(unlink(path), 0);
}

/* The error is SL_EIO and holds each of the texts. */
static void expect_eio(int rc, sl_error *err, const char *a, const char *b) {
  if (rc != SL_EIO)
    fail_msg("status %d, not SL_EIO (%s)", rc,
             err->message ? err->message : "no message");
  if (!strstr(err->message, a) || !strstr(err->message, b))
    fail_msg("'%s' lacks '%s' or '%s'", err->message, a, b);
  sl_error_clear(err);
}

static void test_truncated_while_read(void **state) {
  fixture *f = *state;
  char path[512], want[600];
  /* 10000 rows of 19 bytes: 190000 bytes; the reader is in the first
   * page when the file is cut to two pages: it reads on to the cut and
   * then faults (SIGBUS before), or, cut mid-page, reads zeros where the
   * file ends (a malformed record before; with malformed records
   * skipped, zeros and then the fault). */
  const char *opts = rows_file(f, "cut.csv", 10000, NULL, path, sizeof path);
  const sl_table_def *t =
      make_table(f->session, "cut", "id INT, name STRING", opts);
  snprintf(want, sizeof want,
           "the file '%s' shrank from 190000 to 8192 bytes "
           "while it was read",
           path);
  long rows;
  sl_error err = {0};
  expect_eio(read_around(t, path, truncate_to_page, 0, &rows, &err), &err, want,
             "table 'cut'");
  assert_true(rows < 8192 / 19); /* no row past the cut */

  opts = rows_file(f, "cut2.csv", 10000, NULL, path, sizeof path);
  t = make_table(f->session, "cut2", "id INT, name STRING", opts);
  snprintf(want, sizeof want, "the file '%s' shrank from 190000 to 8200 bytes",
           path);
  expect_eio(read_around(t, path, truncate_mid_page, 0, &rows, &err), &err,
             want, "while it was read");

  opts = rows_file(f, "cut3.csv", 10000, "'csv.ignore-parse-errors' = 'true'",
                   path, sizeof path);
  t = make_table(f->session, "cut3", "id INT, name STRING", opts);
  snprintf(want, sizeof want, "the file '%s' shrank from 190000 to 8200 bytes",
           path);
  expect_eio(read_around(t, path, truncate_mid_page, 0, &rows, &err), &err,
             want, "while it was read");
}

/* A followed file cut while its reader is still far from its end. */
static void test_followed_file_shrinks_behind(void **state) {
  fixture *f = *state;
  char path[512], want[600];
  const char *opts =
      rows_file(f, "follow.csv", 10000, "'source.monitor-interval' = '10 ms'",
                path, sizeof path);
  const sl_table_def *t =
      make_table(f->session, "follow", "id INT, name STRING", opts);
  snprintf(want, sizeof want,
           "the file '%s' shrank from 190000 to 8192 bytes while it was "
           "followed",
           path);
  long rows;
  sl_error err = {0};
  expect_eio(read_around(t, path, truncate_to_page, 0, &rows, &err), &err, want,
             "table 'follow'");
}

static void read_to_end(const char *path) {
  (void)path;
}

/* A followed file removed: no record can come any more.  A file read once
 * and removed while it is read is still read whole (its open descriptor
 * keeps its bytes, as for any Unix reader). */
static void test_removed_file(void **state) {
  fixture *f = *state;
  char path[512], want[600];
  const char *opts =
      rows_file(f, "gone.csv", 100, "'source.monitor-interval' = '10 ms'", path,
                sizeof path);
  const sl_table_def *t =
      make_table(f->session, "gone", "id INT, name STRING", opts);
  long rows;
  sl_error err = {0};
  /* Read it all (idle calls give no row), then remove it and read on. */
  assert_int_equal(read_around(t, path, read_to_end, 3, &rows, &err), SL_OK);
  assert_int_equal(rows, 100);
  snprintf(want, sizeof want, "the file '%s' was removed while it was followed",
           path);
  expect_eio(read_around(t, path, remove_file, 1000, &rows, &err), &err, want,
             "table 'gone'");

  opts = rows_file(f, "gone2.csv", 10000, NULL, path, sizeof path);
  t = make_table(f->session, "gone2", "id INT, name STRING", opts);
  assert_int_equal(read_around(t, path, remove_file, 0, &rows, &err), SL_OK);
  assert_int_equal(rows, 10000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_quoting_crlf_nulls, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dialect_options, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors_name_file_line_column, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_long_fields, setup, teardown),
      cmocka_unit_test_setup_teardown(test_utf8_strings, setup, teardown),
      cmocka_unit_test_setup_teardown(test_byte_order_mark, setup, teardown),
      cmocka_unit_test_setup_teardown(test_crlf_and_doubled_quotes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_ignore_parse_errors, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_ignore_parse_errors_each_kind, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_small_file_one_reader, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_split_across_workers, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_leaves_and_subsets, setup, teardown),
      cmocka_unit_test_setup_teardown(test_options_checked, setup, teardown),
      cmocka_unit_test(test_registry),
      cmocka_unit_test_setup_teardown(test_truncated_while_read, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_followed_file_shrinks_behind, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_removed_file, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
