/* slt_runner.c - runs sqllogictest-style files through the session driver.
 *
 * The file format follows SQLite's sqllogictest as DuckDB adapted it:
 *
 *   # a comment
 *   statement ok
 *   CREATE TABLE t (...) WITH (...)
 *
 *   statement error
 *   SELECT nope FROM t
 *   ----
 *   unknown column 'nope'          <- must appear in the error message
 *
 *   query IT rowsort               <- column letters are documentation;
 *   SELECT a, b FROM t                rowsort sorts rows before comparing
 *   ----
 *   1	one                          <- one row per line, cells separated by
 *   2	NULL                            a tab, SQL NULL written NULL
 *
 *   query I
 *   SELECT 1 WHERE false
 *   ----
 *   (no rows)                      <- the one way to expect an empty result
 *
 * A record ends at a blank line.  EXPLAIN output (free text) compares as one
 * row per line.  `--set key=value` applies a setting before each file, so
 * CMake runs every file at several worker counts and with the JIT on and off.
 *
 * A record that cannot fail is an error, reported at its file:line: a query
 * with no "----" or nothing under it (an empty result is written
 * "(no rows)"), a `statement error` with no expected message, and a file
 * with no records at all.
 *
 * --run-examples FILE...: runs the files in one session as a user would;
 * every statement must succeed.  Results are not compared here.  Of the
 * examples, tests/differential compares with sqlite3 the published texts of
 * examples/ysb.sql and NEXMark q3, q4, q5, q7, q8, q9, q10, q13, q15-q20
 * and q23, and q11's SELECT written out in run_differential.sh; q0, q1, q2,
 * q12, q14, q21, q22, quickstart.sql and nexmark_windows.sql are only run
 * (they must succeed), their rows checked by nothing.
 * --explain-examples FILE...: the same, except that queries and INSERTs run
 * as EXPLAIN (parse + bind), for examples Sluice cannot run yet.
 *
 * Prints "N passed, N failed" at the end; exits non-zero on any failure.
 */
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sluice/common/strbuf.h"
#include "sluice/parser/parser.h"
#include "sluice/session/session.h"

/* ---- collecting results ------------------------------------------------ */

typedef struct collected {
  int ncols; /* of the current result set */
  int nrows, cap;
  char **rows; /* each row: cells joined with '\t' */
} collected;

static void add_row(collected *c, const char *row) {
  if (c->nrows == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 16;
    c->rows = realloc(c->rows, sizeof(char *) * (size_t)c->cap);
    if (!c->rows)
      abort();
  }
  c->rows[c->nrows++] = strdup(row);
}

static void clear_rows(collected *c) {
  for (int i = 0; i < c->nrows; i++)
    free(c->rows[i]);
  free(c->rows);
  memset(c, 0, sizeof *c);
}

static int on_begin(void *ctx, int ncols, const char *const *names,
                    const sl_type *const *types) {
  (void)names, (void)types;
  ((collected *)ctx)->ncols = ncols;
  return SL_OK;
}

static int on_row(void *ctx, const char *const *cells) {
  sl_strbuf b = SL_STRBUF_INIT;
  for (int i = 0; i < ((collected *)ctx)->ncols; i++) {
    if (i)
      sl_strbuf_appendc(&b, '\t');
    sl_strbuf_append(&b,
                     cells[i] ? (cells[i][0] ? cells[i] : "(empty)") : "NULL");
  }
  add_row(ctx, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return SL_OK;
}

static int on_end(void *ctx) {
  (void)ctx;
  return SL_OK;
}

static int on_text(void *ctx, const char *text) {
  const char *p = text;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    char *line = strndup(p, n);
    add_row(ctx, line);
    free(line);
    p += n;
    if (*p == '\n')
      p++;
  }
  return SL_OK;
}

static int on_notice(void *ctx, const char *text) {
  (void)ctx, (void)text;
  return SL_OK;
}

/* The expected block of a query whose result is empty (a blank line ends
 * the block, so an empty result needs a line that says so). */
#define NO_ROWS "(no rows)"

/* ---- reading records ----------------------------------------------------- */

typedef struct reader {
  const char *path;
  char *data;
  size_t len, pos;
  int line; /* line number of the next line */
} reader;

/* Next line without its newline into *out (malloc'd); false at EOF. */
static bool next_line(reader *r, char **out, int *lineno) {
  if (r->pos >= r->len)
    return false;
  const char *p = r->data + r->pos;
  const char *nl = memchr(p, '\n', r->len - r->pos);
  size_t n = nl ? (size_t)(nl - p) : r->len - r->pos;
  *out = strndup(p, n);
  if (n && (*out)[n - 1] == '\r')
    (*out)[n - 1] = '\0';
  *lineno = r->line++;
  r->pos += n + (nl ? 1 : 0);
  return true;
}

static bool blank(const char *s) {
  for (; *s; s++)
    if (*s != ' ' && *s != '\t')
      return false;
  return true;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct stats {
  int passed, failed;
} stats;

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  sl_strbuf b = SL_STRBUF_INIT;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    sl_strbuf_appendn(&b, buf, n);
  fclose(f);
  *len = b.len;
  return sl_strbuf_detach(&b);
}

static sl_result_sink make_sink(collected *c) {
  sl_result_sink s = {c,       on_begin,  on_row, NULL, on_end,
                      on_text, on_notice, NULL,   NULL};
  return s;
}

static void print_error(const char *path, int line, const sl_error *err) {
  fprintf(stderr, "%s:%d: ", path, line);
  if (err->line)
    fprintf(stderr, "(statement line %d, column %d) ", err->line, err->column);
  fprintf(stderr, "%s\n", err->message ? err->message : "(no message)");
}

/* The directory that __TMP__ stands for in test files (created per run, so
 * that the same file run at several settings in parallel does not share
 * output files). */
static char tmp_dir[256];

static int remove_entry(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* Run one record's SQL; returns the session status. */
static int run_sql(sl_session *s, const char *sql, int first_line,
                   collected *out, sl_error *err) {
  sl_result_sink sink = make_sink(out);
  sl_strbuf text = SL_STRBUF_INIT;
  for (const char *p = sql; *p;) {
    const char *hit = strstr(p, "__TMP__");
    if (!hit) {
      sl_strbuf_append(&text, p);
      break;
    }
    sl_strbuf_appendn(&text, p, (size_t)(hit - p));
    sl_strbuf_append(&text, tmp_dir);
    p = hit + 7;
  }
  int rc = sl_session_execute(s, sl_strbuf_cstr(&text), text.len, first_line,
                              &sink, err);
  sl_strbuf_free(&text);
  return rc;
}

/* What makes a record unable to fail, or NULL when it can.  A query's
 * sole expected line "(no rows)" becomes the empty result it stands for. */
static const char *record_problem(bool is_query, bool expect_error,
                                  bool has_expected, int sql_line,
                                  collected *expected) {
  if (!sql_line)
    return "the record has no SQL";
  if (expect_error && expected->nrows == 0)
    return "'statement error' without the expected message: add '----' and "
           "a line the error message must contain";
  if (!is_query)
    return NULL;
  if (!has_expected || expected->nrows == 0)
    return "query without expected results: add '----' and the rows, or "
           "'(no rows)' for an empty result";
  bool marker = false;
  for (int i = 0; i < expected->nrows; i++)
    marker |= strcmp(expected->rows[i], NO_ROWS) == 0;
  if (marker && expected->nrows > 1)
    return "'" NO_ROWS "' must be the only line of an expected result";
  if (marker)
    clear_rows(expected);
  return NULL;
}

static void run_file(const char *path, int nsets, char **sets, stats *st) {
  size_t len;
  char *data = read_file(path, &len);
  if (!data) {
    fprintf(stderr, "%s: cannot read file\n", path);
    st->failed++;
    return;
  }
  reader r = {path, data, len, 0, 1};
  sl_session *s = sl_session_new();
  for (int i = 0; i < nsets; i++) {
    char *kv = strdup(sets[i]);
    char *eq = strchr(kv, '=');
    sl_error err = {0};
    if (!eq) {
      fprintf(stderr, "--set %s: expected key=value\n", sets[i]);
      st->failed++;
    } else {
      *eq = '\0';
      if (sl_settings_set(sl_session_settings(s), kv, eq + 1, NULL, &err)) {
        fprintf(stderr, "--set %s: %s\n", sets[i], err.message);
        st->failed++;
      }
    }
    sl_error_clear(&err);
    free(kv);
  }

  char *line;
  int lineno;
  int nrecords = 0;
  while (next_line(&r, &line, &lineno)) {
    if (blank(line) || line[0] == '#') {
      free(line);
      continue;
    }
    int record_line = lineno;
    bool is_query = strncmp(line, "query", 5) == 0;
    bool is_stmt = strncmp(line, "statement", 9) == 0;
    if (!is_query && !is_stmt) {
      fprintf(stderr, "%s:%d: expected 'statement' or 'query', got: %s\n", path,
              lineno, line);
      st->failed++;
      free(line);
      break;
    }
    bool expect_error = is_stmt && strstr(line, "error") != NULL;
    bool rowsort = is_query && strstr(line, "rowsort") != NULL;
    free(line);

    /* SQL until "----" or a blank line. */
    sl_strbuf sql = SL_STRBUF_INIT;
    int sql_line = 0;
    bool has_expected = false;
    while (next_line(&r, &line, &lineno)) {
      if (blank(line)) {
        free(line);
        break;
      }
      if (strcmp(line, "----") == 0) {
        has_expected = true;
        free(line);
        break;
      }
      if (!sql_line)
        sql_line = lineno;
      sl_strbuf_append(&sql, line);
      sl_strbuf_appendc(&sql, '\n');
      free(line);
    }
    collected expected = {0};
    if (has_expected) {
      while (next_line(&r, &line, &lineno)) {
        if (blank(line)) {
          free(line);
          break;
        }
        add_row(&expected, line);
        free(line);
      }
    }

    nrecords++;
    const char *malformed = record_problem(is_query, expect_error, has_expected,
                                           sql_line, &expected);

    collected got = {0};
    sl_error err = {0};
    int rc = run_sql(s, sl_strbuf_cstr(&sql), sql_line, &got, &err);
    bool ok = true;
    if (malformed) {
      /* Run anyway, so the records after it see the same session. */
      fprintf(stderr, "%s:%d: %s\n", path, record_line, malformed);
      ok = false;
    } else if (expect_error) {
      if (rc == SL_OK) {
        fprintf(stderr, "%s:%d: statement should have failed but succeeded\n",
                path, record_line);
        ok = false;
      } else if (expected.nrows > 0 &&
                 (!err.message || !strstr(err.message, expected.rows[0]))) {
        fprintf(stderr,
                "%s:%d: wrong error message\n  expected to contain: %s\n  got: "
                "%s\n",
                path, record_line, expected.rows[0],
                err.message ? err.message : "(none)");
        ok = false;
      }
    } else if (rc != SL_OK) {
      print_error(path, record_line, &err);
      ok = false;
    } else if (is_query) {
      if (rowsort && got.nrows > 1) /* (no rows: rows may be NULL) */
        qsort(got.rows, (size_t)got.nrows, sizeof(char *), cmp_str);
      if (rowsort && expected.nrows > 1)
        qsort(expected.rows, (size_t)expected.nrows, sizeof(char *), cmp_str);
      bool same = got.nrows == expected.nrows;
      for (int i = 0; same && i < got.nrows; i++)
        same = strcmp(got.rows[i], expected.rows[i]) == 0;
      if (!same) {
        fprintf(stderr, "%s:%d: wrong result\n%s-- expected (%d rows):\n", path,
                record_line, sl_strbuf_cstr(&sql), expected.nrows);
        for (int i = 0; i < expected.nrows; i++)
          fprintf(stderr, "%s\n", expected.rows[i]);
        fprintf(stderr, "-- got (%d rows):\n", got.nrows);
        for (int i = 0; i < got.nrows; i++)
          fprintf(stderr, "%s\n", got.rows[i]);
        ok = false;
      }
    }
    if (ok)
      st->passed++;
    else
      st->failed++;
    sl_error_clear(&err);
    clear_rows(&got);
    clear_rows(&expected);
    sl_strbuf_free(&sql);
  }
  if (nrecords == 0) {
    fprintf(stderr, "%s:%d: the file has no records (nothing was tested)\n",
            path, r.line);
    st->failed++;
  }
  sl_session_free(s);
  free(data);
}

/* --explain-examples / --run-examples: every statement of every file, in
 * one session; with run false, queries and INSERTs run as EXPLAIN. */
static void explain_examples(int nfiles, char **files, bool run, stats *st) {
  sl_session *s = sl_session_new();
  for (int f = 0; f < nfiles; f++) {
    size_t len;
    char *data = read_file(files[f], &len);
    if (!data) {
      fprintf(stderr, "%s: cannot read file\n", files[f]);
      st->failed++;
      continue;
    }
    size_t pos = 0;
    int line = 1;
    int nstatements = 0;
    for (;;) {
      size_t skip = 0;
      size_t n = sl_sql_next_statement(data + pos, len - pos, &skip);
      if (n == 0)
        break;
      nstatements++;
      for (size_t i = 0; i < skip; i++)
        if (data[pos + i] == '\n')
          line++;
      const char *stmt = data + pos + skip;
      size_t stmt_len = n - skip;
      int stmt_line = line;
      for (size_t i = 0; i < stmt_len; i++)
        if (stmt[i] == '\n')
          line++;
      pos += n;

      /* Queries and INSERTs run as EXPLAIN; everything else as written. */
      sl_arena a;
      sl_arena_init(&a, 0);
      sl_stmt *parsed = NULL;
      sl_error err = {0};
      int rc = sl_parse_one(&a, stmt, stmt_len, stmt_line, &parsed, &err);
      sl_strbuf sql = SL_STRBUF_INIT;
      if (rc == SL_OK && !run &&
          (parsed->kind == SL_STMT_QUERY || parsed->kind == SL_STMT_INSERT))
        sl_strbuf_append(&sql, "EXPLAIN ");
      sl_strbuf_appendn(&sql, stmt, stmt_len);
      sl_arena_free(&a);
      collected got = {0};
      if (rc == SL_OK) {
        sl_error_clear(&err);
        rc = run_sql(s, sl_strbuf_cstr(&sql), stmt_line, &got, &err);
      }
      if (rc == SL_OK) {
        st->passed++;
      } else {
        print_error(files[f], stmt_line, &err);
        st->failed++;
      }
      sl_error_clear(&err);
      clear_rows(&got);
      sl_strbuf_free(&sql);
    }
    if (nstatements == 0) {
      fprintf(stderr, "%s:%d: the file has no statements (nothing was run)\n",
              files[f], line);
      st->failed++;
    }
    free(data);
  }
  sl_session_free(s);
}

int main(int argc, char **argv) {
  char **sets = calloc((size_t)argc, sizeof(char *));
  char **files = calloc((size_t)argc, sizeof(char *));
  int nsets = 0, nfiles = 0;
  bool examples = false, run = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--set") == 0 && i + 1 < argc)
      sets[nsets++] = argv[++i];
    else if (strcmp(argv[i], "--explain-examples") == 0)
      examples = true;
    else if (strcmp(argv[i], "--run-examples") == 0)
      examples = run = true;
    else
      files[nfiles++] = argv[i];
  }
  if (nfiles == 0) {
    fprintf(
        stderr,
        "usage: slt_runner [--set key=value]... FILE.test...\n"
        "       slt_runner --explain-examples|--run-examples FILE.sql...\n");
    return 2;
  }
  snprintf(tmp_dir, sizeof tmp_dir, "%s/slt-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmp_dir)) {
    perror("slt_runner: mkdtemp");
    return 2;
  }
  stats st = {0, 0};
  if (examples)
    explain_examples(nfiles, files, run, &st);
  else
    for (int i = 0; i < nfiles; i++)
      run_file(files[i], nsets, sets, &st);
  /* Remove what the statements wrote there. */
  if (nftw(tmp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
    fprintf(stderr, "slt_runner: could not remove %s\n", tmp_dir);
  printf("%d passed, %d failed\n", st.passed, st.failed);
  free(sets);
  free(files);
  return st.failed ? 1 : 0;
}
