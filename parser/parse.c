/* parse.c - the parse driver: feeds tokens from the tokenizer to the
 * lemon-generated parser and collects the statements it builds.
 *
 * Two things happen here rather than in the grammar:
 *  - after a statement-initial SET or RESET, an unquoted key and value are
 *    read as one "raw word" (so `SET table.exec.state.ttl = 1h` and
 *    `sluice.late-records` need no quotes even though TABLE is a keyword and
 *    '-' an operator);
 *  - a missing ';' after the last statement is supplied as a zero-length
 *    token, so the grammar only knows statements that end in ';'.
 * The first error (tokenizer, syntax or semantic) stops the parse.
 */
#include <string.h>

#include "grammar.h"
#include "parse_int.h"
#include "sluice/common/cancel.h"
#include "sluice/parser/parser.h"

enum raw_state { RAW_NONE, RAW_KEY, RAW_AFTER_KEY, RAW_VALUE };

typedef struct driver {
  sl_tokenizer tok;
  enum raw_state raw;
  bool at_stmt_start;
} driver;

static sl_token next_token(driver *d) {
  sl_token t;
  if (d->raw == RAW_KEY || d->raw == RAW_VALUE) {
    bool value = d->raw == RAW_VALUE;
    d->raw = value ? RAW_NONE : RAW_AFTER_KEY;
    sl_tokenizer_skip_trivia(&d->tok);
    t = sl_tokenizer_raw_word(&d->tok, value);
    if (t.kind != SL_TOK_EOF)
      return t;
    /* Quoted key or value, ';', or nothing: tokenize as usual. */
  }
  t = sl_tokenizer_next(&d->tok);
  if (d->raw == RAW_AFTER_KEY)
    d->raw = t.code == TK_EQ ? RAW_VALUE : RAW_NONE;
  if (d->at_stmt_start && (t.code == TK_SET || t.code == TK_RESET))
    d->raw = RAW_KEY;
  if (t.kind != SL_TOK_EOF)
    d->at_stmt_start = t.code == TK_SEMI;
  return t;
}

static void tokenizer_error(sl_parse_ctx *c, const sl_token *t) {
  char msg[128];
  int len = sl_tokenizer_error_message(t, msg, sizeof(msg));
  sl_error_set_at(c->err, SL_ESYNTAX, t->line, t->column, t->offset, len, "%s",
                  msg);
  c->failed = true;
}

static void feed(sl_parse_ctx *c, void *parser, const sl_token *t) {
  c->cur = *t;
  sl_lemon_parse(parser, t->code, *t, c);
}

int sl_parse(sl_arena *a, const char *text, size_t len, int first_line,
             sl_list **stmts, sl_error *err) {
  sl_parse_ctx ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.arena = a;
  ctx.text = text;
  ctx.err = err;
  if (!*stmts)
    *stmts = sl_list_new(a);
  ctx.stmts = *stmts;
  if (!text)
    len = 0;

  driver d;
  memset(&d, 0, sizeof(d));
  sl_tokenizer_init(&d.tok, text ? text : "", len, first_line);
  d.at_stmt_start = true;
  ctx.end_line = d.tok.line;
  ctx.end_column = d.tok.column;

  void *parser = sl_lemon_parse_new(a);
  int last_code = 0;
  bool cancelled = false;
  while (!ctx.failed) {
    /* Ctrl-C and .timeout: a megabyte statement takes seconds to parse */
    if (sl_cancel_current_pending()) {
      sl_error_set(err, SL_ECANCELLED, "query cancelled");
      cancelled = true;
      break;
    }
    sl_token t = next_token(&d);
    if (t.kind == SL_TOK_ERROR) {
      tokenizer_error(&ctx, &t);
      break;
    }
    if (t.kind == SL_TOK_EOF) {
      if (last_code == 0)
        break; /* only white space and comments: no statements */
      if (last_code != TK_SEMI) {
        t.code = TK_SEMI;
        feed(&ctx, parser, &t);
      }
      if (!ctx.failed) {
        t.code = 0;
        feed(&ctx, parser, &t);
      }
      break;
    }
    feed(&ctx, parser, &t);
    last_code = t.code;
    ctx.last_end = t.offset + t.length;
    ctx.end_line = d.tok.line;
    ctx.end_column = d.tok.column;
  }
  sl_lemon_parseFinalize(parser);
  /* stopped during the last token's reductions (sl_stmt_depth's walk) */
  if (!cancelled && sl_cancel_current_pending()) {
    sl_error_set(err, SL_ECANCELLED, "query cancelled");
    cancelled = true;
  }
  if (cancelled)
    return SL_ECANCELLED;
  return ctx.failed ? SL_ESYNTAX : SL_OK;
}

int sl_parse_one(sl_arena *a, const char *text, size_t len, int first_line,
                 sl_stmt **stmt, sl_error *err) {
  sl_list *stmts = NULL;
  *stmt = NULL;
  int rc = sl_parse(a, text, len, first_line, &stmts, err);
  if (rc != SL_OK)
    return rc;
  if (stmts->n == 0)
    return sl_error_set_at(err, SL_ESYNTAX, first_line > 0 ? first_line : 1, 1,
                           0, 0, "syntax error: empty statement");
  if (stmts->n > 1) {
    sl_stmt *second = SL_LIST_AT(stmts, 1);
    return sl_error_set_at(err, SL_ESYNTAX, second->span.line,
                           second->span.column, second->span.offset,
                           second->span.length,
                           "expected one statement, found %d", stmts->n);
  }
  *stmt = SL_LIST_AT(stmts, 0);
  return SL_OK;
}
