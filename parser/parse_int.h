/* parse_int.h - private interface between the tokenizer, the lemon grammar
 * (grammar.y) and the parse driver (parse.c).
 *
 * Nothing outside parser/ should include this: the public API is in
 * sluice/parser/parser.h.  The grammar's semantic actions call the small builder
 * functions declared here (implemented in parse_build.c) so that the actions
 * themselves stay one-liners.
 */
#ifndef SLUICE_PARSE_INT_H
#define SLUICE_PARSE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"
#include "sluice/common/types.h"
#include "sluice/parser/ast.h"
#include "sluice/parser/parser.h"

/* Deepest the lemon parser stack may grow; deeper nesting is reported as
 * "statement too deeply nested" rather than overflowing anything. */
#define SL_PARSE_MAX_DEPTH 1000

/* State shared by parse.c and the grammar's actions (lemon's
 * %extra_argument). */
typedef struct sl_parse_ctx {
  sl_arena *arena;
  const char *text; /* the text given to sl_parse; spans are relative to it */
  sl_list *stmts;   /* statements parsed so far */
  sl_error *err;
  bool failed; /* an error was reported; stop feeding tokens */
  /* Byte offset just past the last token handed to the parser before the
   * current look-ahead.  When lemon reduces a rule, every terminal of the
   * rule has been shifted already, so this is where the rule's text ends. */
  int last_end;
  int end_line, end_column; /* line/column just past that token */
  sl_token cur;             /* the look-ahead being fed, for errors */
} sl_parse_ctx;

/* ---- tokenizer extras (tokenizer.c) ------------------------------------ */

/* The lemon code of a keyword (any case), or 0. */
int sl_keyword_code(const char *word, size_t len);
/* Skip white space and complete comments (an unterminated comment is left
 * for sl_tokenizer_next to report). */
void sl_tokenizer_skip_trivia(sl_tokenizer *t);
/* The "raw word" used for unquoted SET/RESET keys and values: a run of
 * letters, digits, '_', '.', '-' (keys), or of anything but white space,
 * quotes and ';' (values).  Returns a token of kind SL_TOK_IDENT with code
 * TK_RAWWORD, or of kind SL_TOK_EOF (length 0) when nothing matches. */
sl_token sl_tokenizer_raw_word(sl_tokenizer *t, bool value);
/* A message for a token of kind SL_TOK_ERROR, into buf; returns how many
 * bytes from the token's start an error caret should underline. */
int sl_tokenizer_error_message(const sl_token *tok, char *buf, size_t n);

/* ---- builders used by grammar actions (parse_build.c) ------------------ */

/* Small values the grammar passes between rules. */
typedef struct p_unit_spec { /* SECOND(3), MINUTE TO SECOND */
  sl_interval_unit unit, to_unit;
  int precision;
} p_unit_spec;

typedef struct p_interval_val { /* '10' or -'10' */
  sl_token tok;
  bool negative;
} p_interval_val;

typedef struct p_call_args { /* what is inside f(...) */
  sl_list *args;
  bool star, distinct;
} p_call_args;

typedef struct p_join_cond { /* ON expr or USING (names) */
  sl_expr *on;
  sl_list *using_;
} p_join_cond;

/* One element of CREATE TABLE's parenthesised list, before sorting. */
typedef struct p_table_elem {
  sl_column_def *column;
  sl_watermark_def *watermark;
  sl_list *primary_key; /* const char* */
  sl_span span;
} p_table_elem;

sl_span p_tok_span(const sl_token *t);
/* From the start of `start` to the end of the last shifted token. */
sl_span p_span_from(const sl_parse_ctx *c, sl_span start);

/* Report an error at a span; only the first error is kept. */
void p_error_at(sl_parse_ctx *c, sl_span at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void p_syntax_error(sl_parse_ctx *c, int major, const sl_token *tok);
void p_stack_overflow(sl_parse_ctx *c);

/* Token text helpers: identifiers keep their spelling (quoted ones are
 * unescaped), strings are unquoted and unescaped. */
const char *p_ident(sl_parse_ctx *c, const sl_token *t);
const char *p_string(sl_parse_ctx *c, const sl_token *t);
const char *p_text(sl_parse_ctx *c, const sl_token *t);
const char *p_upper(sl_parse_ctx *c, const sl_token *t);
/* A non-negative integer token, e.g. a type's precision; errors if it is
 * out of range. */
int p_int(sl_parse_ctx *c, const sl_token *t);

sl_list *p_list1(sl_parse_ctx *c, void *item);
sl_list *p_push(sl_parse_ctx *c, sl_list *l, void *item);
sl_list *p_names1(sl_parse_ctx *c, const sl_token *t);
sl_list *p_names_push(sl_parse_ctx *c, sl_list *l, const sl_token *t);

sl_qname *p_qname(sl_parse_ctx *c, const sl_token *t);
sl_qname *p_qname_push(sl_parse_ctx *c, sl_qname *q, const sl_token *t);
sl_qname *p_qname_word(sl_parse_ctx *c, const sl_token *t); /* keyword */

sl_expr *p_expr(sl_parse_ctx *c, sl_expr_kind kind, sl_span start);
sl_expr *p_literal(sl_parse_ctx *c, sl_literal_kind kind, const sl_token *t);
sl_expr *p_typed_literal(sl_parse_ctx *c, sl_literal_kind kind,
                         const sl_token *kw, const sl_token *str);
sl_expr *p_interval(sl_parse_ctx *c, const sl_token *kw, const sl_token *val,
                    bool negative, p_unit_spec q);
sl_expr *p_name(sl_parse_ctx *c, sl_qname *q);
sl_expr *p_unary(sl_parse_ctx *c, sl_op op, const sl_token *optok, sl_expr *e);
sl_expr *p_binary(sl_parse_ctx *c, sl_op op, sl_expr *l, sl_expr *r);
sl_expr *p_call(sl_parse_ctx *c, sl_qname *name, sl_list *args, sl_span start);
sl_expr *p_call_word(sl_parse_ctx *c, const sl_token *name, sl_list *args);
sl_expr *p_paren(sl_parse_ctx *c, const sl_token *lp, sl_expr *e);
sl_expr *p_subquery(sl_parse_ctx *c, sl_subquery_kind kind, sl_span start,
                    sl_query *q, sl_expr *operand, bool negated);
sl_expr *p_field(sl_parse_ctx *c, sl_expr *base, const sl_token *name);

/* A placeholder so actions that reported an error still return a valid
 * object (lemon keeps reducing until the driver stops feeding tokens). */
sl_type *p_type(sl_parse_ctx *c, sl_type_kind kind);
sl_type *p_row_type(sl_parse_ctx *c, sl_list *fields);
sl_type_field *p_type_field(sl_parse_ctx *c, const sl_token *name,
                            sl_type *type);

sl_query *p_query(sl_parse_ctx *c, sl_span start, sl_list *ctes,
                  sl_query_body *body, sl_list *order_by, sl_expr **limits);
sl_query_body *p_body_select(sl_parse_ctx *c, sl_select *s);
sl_query_body *p_body_setop(sl_parse_ctx *c, sl_setop_kind kind, bool all,
                            sl_query_body *l, sl_query_body *r);
sl_query_body *p_body_nested(sl_parse_ctx *c, const sl_token *lp, sl_query *q);
sl_order_item *p_order_item(sl_parse_ctx *c, sl_expr *e, int dir, int nulls);

sl_table_ref *p_tref(sl_parse_ctx *c, sl_table_ref_kind kind, sl_span start);
sl_table_ref *p_join(sl_parse_ctx *c, sl_join_kind kind, bool natural,
                     sl_table_ref *l, sl_table_ref *r);
void p_alias(sl_parse_ctx *c, sl_table_ref *t, sl_list *alias);

sl_stmt *p_stmt(sl_parse_ctx *c, sl_stmt_kind kind, const sl_token *first);
void p_add_stmt(sl_parse_ctx *c, sl_stmt *s);
/* Sort CREATE TABLE elements (columns, watermark, primary key) into the
 * statement, reporting duplicates. */
void p_table_elements(sl_parse_ctx *c, sl_stmt *s, sl_list *elems);

sl_explain_format p_explain_format(sl_parse_ctx *c, const sl_token *t);
const char *p_language(sl_parse_ctx *c, const sl_token *t);
/* LIMIT/OFFSET as a two-element array {limit, offset}. */
sl_expr **p_limits(sl_parse_ctx *c, sl_expr *limit, sl_expr *offset);
sl_list *p_alias_list(sl_parse_ctx *c, const sl_token *alias, sl_list *columns);
sl_list *p_tvf_push(sl_parse_ctx *c, sl_list *l, sl_tvf_arg *arg);

/* The lemon parser, allocated in the arena (grammar.y's %code). */
void *sl_lemon_parse_new(sl_arena *a);
void sl_lemon_parse(void *parser, int major, sl_token minor, sl_parse_ctx *ctx);
void sl_lemon_parseFinalize(void *parser);
int sl_lemon_parseFallback(int token);

#endif
