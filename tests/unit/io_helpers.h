/* io_helpers.h - shared by the connector tests: a scratch directory,
 * tables made by running CREATE TABLE through a session, files. */
#ifndef SLUICE_TEST_IO_HELPERS_H
#define SLUICE_TEST_IO_HELPERS_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice/connectors/connector.h"
#include "sluice/row/value_text.h"
#include "sluice/session/session.h"

/* Run one statement; fail the test with its message if it fails. */
static inline void run_sql(sl_session *s, const char *sql) {
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_error err = {0};
  int rc = sl_session_execute(s, sql, strlen(sql), 1, &sink, &err);
  if (rc != SL_OK)
    fail_msg("%s: %s", sql, err.message);
}

/* CREATE TABLE name (cols) WITH (opts) and return the catalog entry. */
static inline const sl_table_def *make_table(sl_session *s, const char *name,
                                             const char *cols,
                                             const char *opts) {
  char sql[4096];
  snprintf(sql, sizeof sql, "CREATE TABLE %s (%s) WITH (%s)", name, cols, opts);
  run_sql(s, sql);
  const sl_table_def *t = sl_catalog_find(sl_session_catalog(s), name);
  assert_non_null(t);
  return t;
}

/* CREATE TABLE name (cols) WITH (opts) must fail with a message holding
 * `expect`: options are checked when the table is created. */
static inline void create_must_fail(sl_session *s, const char *name,
                                    const char *cols, const char *opts,
                                    const char *expect) {
  char sql[4096];
  snprintf(sql, sizeof sql, "CREATE TABLE %s (%s) WITH (%s)", name, cols, opts);
  sl_result_sink sink = sl_result_sink_discard(NULL);
  sl_error err = {0};
  if (sl_session_execute(s, sql, strlen(sql), 1, &sink, &err) == SL_OK)
    fail_msg("accepted: %s", sql);
  if (!err.message || !strstr(err.message, expect))
    fail_msg("'%s': message '%s' lacks '%s'", sql,
             err.message ? err.message : "", expect);
  assert_null(sl_catalog_find(sl_session_catalog(s), name));
  sl_error_clear(&err);
}

static inline int rm_one(const char *p, const struct stat *sb, int flag,
                         struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(p);
}

/* A fresh directory under /tmp; rm_tree removes it and everything in it. */
static inline char *make_tmpdir(void) {
  char *d = strdup("/tmp/sluice-io-test-XXXXXX");
  assert_non_null(mkdtemp(d));
  return d;
}
static inline void rm_tree(char *dir) {
  nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  free(dir);
}

static inline void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(text, 1, strlen(text), f);
  fclose(f);
}

/* The whole file (the caller frees), or NULL if it does not exist. */
static inline char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  char tmp[4096];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
    fwrite(tmp, 1, n, m);
  fclose(f);
  fclose(m);
  return buf;
}

/* A layout of every leaf of t, and the identity leaf_index. */
static inline sl_row_layout *all_leaves(sl_arena *a, const sl_table_def *t,
                                        int **leaf_index) {
  sl_leaf_columns lc;
  sl_table_leaf_columns(a, t, &lc);
  *leaf_index = SL_ANEW_N(a, int, lc.n);
  for (int i = 0; i < lc.n; i++)
    (*leaf_index)[i] = i;
  return sl_row_layout_new(a, lc.n, lc.names, lc.types);
}

/* Rows of buf as "v1|v2|\N\n" lines appended to out. */
static inline void rows_as_text(sl_strbuf *out, const sl_buffer *buf) {
  for (uint32_t r = 0; r < buf->nrows; r++) {
    const uint8_t *row = sl_buffer_row(buf, r);
    for (int i = 0; i < buf->layout->nfields; i++) {
      if (i)
        sl_strbuf_appendc(out, '|');
      if (sl_row_is_null(row, i))
        sl_strbuf_append(out, "\\N");
      else
        sl_value_append(out, buf->layout, row, i);
    }
    sl_strbuf_appendc(out, '\n');
  }
}

#endif
