/* parser.h - text to AST: the tokenizer and the lemon-generated parser.
 *
 * The tokenizer is hand-written (as SQLite's): it classifies keywords,
 * identifiers (plain and `backquoted`), numbers, 'strings' and punctuation,
 * and tracks line/column for every token.  The grammar (parser/grammar.y)
 * is compiled by lemon at build time.
 *
 * Ownership: everything produced lives in the caller's arena.
 */
#ifndef SLUICE_PARSER_H
#define SLUICE_PARSER_H

#include <stdbool.h>
#include <stddef.h>

#include "sluice/common/arena.h"
#include "sluice/common/error.h"
#include "sluice/parser/ast.h"

typedef enum sl_token_kind {
  SL_TOK_EOF = 0,
  SL_TOK_KEYWORD, /* a reserved or non-reserved keyword */
  SL_TOK_IDENT,   /* plain identifier */
  SL_TOK_QIDENT,  /* `backquoted` identifier (also "double quoted") */
  SL_TOK_INTEGER,
  SL_TOK_DECIMAL,    /* 1.5, .5 */
  SL_TOK_FLOAT,      /* 1e5, 1.5E-3 */
  SL_TOK_STRING,     /* 'text' (value unescaped) */
  SL_TOK_OPERATOR,   /* punctuation and operators */
  SL_TOK_COMMENT,    /* -- ... and / * ... * / (only with keep_comments) */
  SL_TOK_WHITESPACE, /* only with keep_whitespace */
  SL_TOK_ERROR,      /* unterminated string/comment, stray character */
} sl_token_kind;

typedef struct sl_token {
  sl_token_kind kind;
  int code;          /* the lemon token code (TK_*), or 0 */
  const char *start; /* points into the source text */
  int length;        /* bytes of source text */
  int line, column;  /* 1-based */
  int offset;        /* 0-based byte offset */
} sl_token;

/* Tokenizer state; init with sl_tokenizer_init, then call sl_tokenizer_next
 * until it returns a token of kind SL_TOK_EOF or SL_TOK_ERROR. */
typedef struct sl_tokenizer {
  const char *text;
  size_t len;
  size_t pos;
  int line, column;
  bool keep_comments;
  bool keep_whitespace;
} sl_tokenizer;

void sl_tokenizer_init(sl_tokenizer *t, const char *text, size_t len,
                       int first_line);
sl_token sl_tokenizer_next(sl_tokenizer *t);

/* Is word (case-insensitive) a keyword of the dialect?  (Used by the shell's
 * tab completion and by the formatter to decide when to backquote.) */
bool sl_is_keyword(const char *word, size_t len);
/* The list of all keywords, NULL-terminated, upper case. */
const char *const *sl_keyword_list(void);

/* Does text hold at least one complete statement (ends with ';' outside any
 * string, quoted identifier or comment)?  Like sqlite3_complete(); the shell
 * uses it to decide between running and showing the continuation prompt. */
bool sl_sql_is_complete(const char *text, size_t len);

/* Split off the next statement: skips leading white space and comments,
 * then returns the length in bytes (from text) up to and including the
 * ';' that ends the first statement, or up to len if there is none.  *skip
 * receives the number of leading bytes that are only white space/comments
 * (so the statement text is text + *skip).  Returns 0 at the end. */
size_t sl_sql_next_statement(const char *text, size_t len, size_t *skip);

/* Parse every statement in text (separated by ';'; the last ';' optional).
 * Appends sl_stmt* to *stmts (created if NULL).  first_line is the line
 * number of the text's first line in the user's file (1 for a string).
 * On a syntax error returns SL_ESYNTAX with err positioned at the offending
 * token:   syntax error near "GROUPP"   (or  unexpected end of input ...) */
int sl_parse(sl_arena *a, const char *text, size_t len, int first_line,
             sl_list **stmts, sl_error *err);

/* Parse exactly one statement. */
int sl_parse_one(sl_arena *a, const char *text, size_t len, int first_line,
                 sl_stmt **stmt, sl_error *err);

#endif
