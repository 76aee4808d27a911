/* fuzz_sql.c - libFuzzer target: arbitrary text through the tokenizer,
 * the parser, the binder, the planner and EXPLAIN, and through the
 * interpreter for constant queries (SELECT without FROM, VALUES).
 *
 * The input is a script: it is split into statements as the shell splits
 * them.  DDL and SET run against a fresh session per input, so that the
 * seeds' CREATE TABLEs give the queries after them something to bind to;
 * queries are bound, planned and explained but never run against a source
 * (a fuzzer must not open files or start nodes), except constant ones.
 *
 * What must hold, for every input (abort() otherwise, which libFuzzer
 * reports as a crash): nothing crashes, leaks or reads out of bounds
 * (ASan/UBSan); every failing statement has a message; a syntax or binder
 * error points inside the statement (line and column within its text).
 *
 * Built as a libFuzzer target by tests/fuzz.sh (clang); in the normal
 * build it is linked with replay_main.c and replays the committed
 * regressions (ctest fuzz.sql_regressions). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sluice/binder/binder.h"
#include "sluice/explain/explain.h"
#include "sluice/parser/parser.h"
#include "sluice/planner/plan.h"
#include "sluice/session/session.h"

static void fail(const char *what, const sl_error *err, const char *text,
                 size_t len) {
  fprintf(stderr, "fuzz_sql: %s\n  code %d, message %s, at %d:%d\n  in: %.*s\n",
          what, err->code, err->message ? err->message : "(none)", err->line,
          err->column, (int)(len > 400 ? 400 : len), text);
  abort();
}

/* An error must say something, and a positioned one must point into the
 * statement's text (first_line is the statement's first line). */
static void check_error(const sl_error *err, const char *text, size_t len,
                        int first_line) {
  if (!err->message || !err->message[0])
    fail("an error without a message", err, text, len);
  if (err->code == SL_ESYNTAX && err->line == 0)
    fail("a syntax error without a position", err, text, len);
  if (err->line == 0)
    return;
  int lines = first_line;
  for (size_t i = 0; i < len; i++)
    lines += text[i] == '\n';
  if (err->line < first_line || err->line > lines || err->column < 1)
    fail("an error positioned outside the statement", err, text, len);
  if (err->offset >= 0 && (size_t)err->offset > len)
    fail("an error offset past the statement", err, text, len);
}

/* Results of constant queries are formatted (that is part of what is
 * tested) and dropped. */
static int sink_begin(void *ctx, int n, const char *const *names,
                      const sl_type *const *types) {
  (void)ctx, (void)types;
  for (int i = 0; i < n; i++)
    if (!names[i])
      abort();
  return SL_OK;
}
static int sink_row(void *ctx, const char *const *cells) {
  (void)ctx, (void)cells;
  return SL_OK;
}
static int sink_end(void *ctx) {
  (void)ctx;
  return SL_OK;
}
static int sink_text(void *ctx, const char *text) {
  (void)ctx;
  return text ? SL_OK : SL_EINTERNAL;
}

static bool runs_here(sl_stmt_kind k) {
  switch (k) {
  case SL_STMT_CREATE_TABLE:
  case SL_STMT_CREATE_VIEW:
  case SL_STMT_CREATE_FUNCTION:
  case SL_STMT_DROP:
  case SL_STMT_SHOW:
  case SL_STMT_DESCRIBE:
  case SL_STMT_SET:
  case SL_STMT_RESET:
    return true;
  default:
    return false;
  }
}

/* Bind, plan and explain a query, INSERT or EXPLAIN; run it when it is
 * constant rows that go nowhere but here. */
static void plan_statement(sl_session *s, const sl_stmt *stmt, const char *text,
                           size_t len, int line) {
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_error err = {0};
  char *copy = sl_arena_strndup(&a, text, len);
  sl_bound_stmt *b = NULL;
  if (sl_bind(&a, sl_session_catalog(s), stmt, copy, line, &b, &err) != SL_OK) {
    check_error(&err, text, len, line);
    goto done;
  }
  const sl_bound_stmt *q = b->kind == SL_STMT_EXPLAIN ? b->inner : b;
  sl_strbuf out = SL_STRBUF_INIT;
  if (q && (q->kind == SL_STMT_QUERY || q->kind == SL_STMT_INSERT)) {
    sl_plan *plan = NULL;
    sl_error perr = {0};
    if (sl_plan_build(&a, q, &plan, &perr) != SL_OK) {
      check_error(&perr, text, len, line);
      plan = NULL;
    }
    sl_explain_statement(&out, b, plan, perr.message, 2, "late-merge", NULL,
                         NULL, SL_EXPLAIN_TEXT);
    sl_explain_statement(&out, b, plan, perr.message, 2, "repartition", NULL,
                         NULL, SL_EXPLAIN_JSON);
    sl_error_clear(&perr);
    if (plan && plan->kind == SL_PLAN_CONSTANT && !plan->sink_table &&
        b->kind == SL_STMT_QUERY) {
      sl_result_sink sink = {NULL,      sink_begin, sink_row, NULL, sink_end,
                             sink_text, NULL,       NULL,     NULL};
      if (sl_session_execute(s, text, len, line, &sink, &err) != SL_OK)
        check_error(&err, text, len, line);
    }
  } else {
    sl_explain_bound(&out, b, SL_EXPLAIN_TEXT);
  }
  sl_strbuf_free(&out);
  sl_bound_stmt_release(b);
done:
  sl_error_clear(&err);
  sl_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy: a read past the end is an ASan report. */
  char *text = malloc(size ? size : 1);
  if (!text)
    abort();
  memcpy(text, data, size);
  sl_session *s = sl_session_new();
  /* The interpreter only (compiling every input with LLVM would make each
   * run take milliseconds), one process (no nodes are started). */
  sl_settings *set = sl_session_settings(s);
  size_t pos = 0, skip = 0, n;
  int line = 1;
  while ((n = sl_sql_next_statement(text + pos, size - pos, &skip)) > 0) {
    for (size_t i = pos; i < pos + skip; i++)
      line += text[i] == '\n';
    const char *st = text + pos + skip;
    size_t len = n - skip;
    sl_error err = {0};
    sl_arena a;
    sl_arena_init(&a, 0);
    sl_stmt *stmt = NULL;
    sl_settings_set(set, "sluice.jit", "off", NULL, NULL);
    sl_settings_set(set, "sluice.nodes", "1", NULL, NULL);
    if (sl_parse_one(&a, st, len, line, &stmt, &err) != SL_OK)
      check_error(&err, st, len, line);
    else if (runs_here(stmt->kind)) {
      sl_result_sink sink = {NULL,      sink_begin, sink_row, NULL, sink_end,
                             sink_text, NULL,       NULL,     NULL};
      if (sl_session_execute(s, st, len, line, &sink, &err) != SL_OK)
        check_error(&err, st, len, line);
    } else
      plan_statement(s, stmt, st, len, line);
    sl_error_clear(&err);
    sl_arena_free(&a);
    for (size_t i = pos + skip; i < pos + n; i++)
      line += text[i] == '\n';
    pos += n;
  }
  sl_session_free(s);
  free(text);
  return 0;
}
