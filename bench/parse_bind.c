/* parse_bind.c - how long the front end takes per statement.
 *
 * Loads the NEXMark DDL into a session, then parses (and separately parses
 * and binds) every NEXMark query many times.  Reports the median of 5 runs
 * in microseconds per statement.  The front end runs once per query, so
 * this is about interactive latency, not throughput; the number to watch is
 * that it stays far below what a user can notice (~10 ms).
 *
 *   build/bench/parse_bind examples/nexmark
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sluice/binder/binder.h"
#include "sluice/common/clock.h"
#include "sluice/common/strbuf.h"
#include "sluice/parser/parser.h"
#include "sluice/session/session.h"

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  sl_strbuf b = SL_STRBUF_INIT;
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    sl_strbuf_appendn(&b, buf, n);
  fclose(f);
  *len = b.len;
  return sl_strbuf_detach(&b);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Every statement of a file, one after the other. */
typedef struct stmt_text {
  const char *text;
  size_t len;
} stmt_text;

static int split(const char *data, size_t len, stmt_text *out, int max) {
  int n = 0;
  size_t pos = 0;
  for (;;) {
    size_t skip = 0;
    size_t k = sl_sql_next_statement(data + pos, len - pos, &skip);
    if (k == 0 || n == max)
      break;
    out[n].text = data + pos + skip;
    out[n].len = k - skip;
    n++;
    pos += k;
  }
  return n;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "examples/nexmark";
  char path[4096];
  snprintf(path, sizeof path, "%s/ddl.sql", dir);
  size_t ddl_len;
  char *ddl = read_file(path, &ddl_len);
  if (!ddl) {
    fprintf(stderr, "parse_bind: cannot read %s\n", path);
    return 1;
  }
  sl_session *s = sl_session_new();
  sl_result_sink sink = sl_result_sink_discard(NULL);
  stmt_text stmts[64];
  int n = split(ddl, ddl_len, stmts, 64);
  for (int i = 0; i < n; i++) {
    sl_error err = {0};
    if (sl_session_execute(s, stmts[i].text, stmts[i].len, 1, &sink, &err)) {
      fprintf(stderr, "parse_bind: %s\n", err.message);
      return 1;
    }
  }

  /* The queries: the SELECT/INSERT statements of q*.sql (their sink DDL is
   * executed once so that INSERT targets exist). */
  stmt_text queries[256];
  char *files[64];
  int nq = 0, nfiles = 0;
  for (int q = 0; q <= 23; q++) {
    snprintf(path, sizeof path, "%s/q%d.sql", dir, q);
    size_t len;
    char *data = read_file(path, &len);
    if (!data)
      continue;
    files[nfiles++] = data;
    stmt_text part[32];
    int k = split(data, len, part, 32);
    int first_query = nq;
    bool ddl_failed = false;
    for (int i = 0; i < k; i++) {
      sl_arena a;
      sl_arena_init(&a, 0);
      sl_stmt *st;
      sl_error err = {0};
      if (sl_parse_one(&a, part[i].text, part[i].len, 1, &st, &err) == SL_OK) {
        if (st->kind == SL_STMT_QUERY || st->kind == SL_STMT_INSERT)
          queries[nq++] = part[i];
        else if (sl_session_execute(s, part[i].text, part[i].len, 1, &sink,
                                    &err) != SL_OK)
          ddl_failed = true;
      }
      sl_error_clear(&err);
      sl_arena_free(&a);
    }
    if (ddl_failed) { /* e.g. q10's sink, refused at CREATE TABLE */
      fprintf(stderr, "parse_bind: skipping q%d.sql (its DDL fails)\n", q);
      nq = first_query;
    }
  }

  const int iters = 2000;
  if (nq == 0) {
    fprintf(stderr, "parse_bind: no query to measure\n");
    return 1;
  }
  double parse_us[5], bind_us[5];
  for (int run = 0; run < 5; run++) {
    for (int phase = 0; phase < 2; phase++) {
      double t0 = sl_clock_seconds();
      for (int it = 0; it < iters; it++) {
        for (int i = 0; i < nq; i++) {
          sl_arena a;
          sl_arena_init(&a, 0);
          sl_stmt *st;
          sl_error err = {0};
          if (sl_parse_one(&a, queries[i].text, queries[i].len, 1, &st, &err) !=
              SL_OK) {
            fprintf(stderr, "parse_bind: %s\n", err.message);
            return 1;
          }
          if (phase == 1) {
            sl_bound_stmt *b;
            char *text = sl_arena_strndup(&a, queries[i].text, queries[i].len);
            if (sl_bind(&a, sl_session_catalog(s), st, text, 1, &b, &err) !=
                SL_OK) {
              fprintf(stderr, "parse_bind: %s\n", err.message);
              return 1;
            }
          }
          sl_arena_free(&a);
        }
      }
      double us = (sl_clock_seconds() - t0) * 1e6 / ((double)iters * nq);
      if (phase == 0)
        parse_us[run] = us;
      else
        bind_us[run] = us;
    }
  }
  qsort(parse_us, 5, sizeof(double), cmp_double);
  qsort(bind_us, 5, sizeof(double), cmp_double);
  printf("statements: %d NEXMark queries, %d iterations x 5 runs\n", nq, iters);
  printf("parse:        median %.1f us/statement (min %.1f, max %.1f)\n",
         parse_us[2], parse_us[0], parse_us[4]);
  printf("parse + bind: median %.1f us/statement (min %.1f, max %.1f)\n",
         bind_us[2], bind_us[0], bind_us[4]);
  for (int i = 0; i < nfiles; i++)
    free(files[i]);
  free(ddl);
  sl_session_free(s);
  return 0;
}
