/* tokenizer.c - the hand-written SQL tokenizer (in the spirit of SQLite's
 * tokenize.c).
 *
 * It splits text into keywords, identifiers (plain, `backquoted` and
 * "double quoted"), numbers, 'strings', operators and comments, tracking the
 * 1-based line and byte column of every token.  Keywords are found by binary
 * search in a sorted table and carry the lemon token code from the generated
 * grammar.h.  Errors (unterminated string, comment or quoted identifier,
 * stray characters, malformed numbers) come back as SL_TOK_ERROR tokens;
 * sl_tokenizer_error_message() words them.
 *
 * Also here: sl_sql_is_complete() and sl_sql_next_statement(), which the
 * shell uses to split input into statements without parsing it.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "grammar.h"
#include "parse_int.h"
#include "sluice/parser/parser.h"

typedef struct keyword {
  const char *name;
  int code;
} keyword;

/* Sorted by strcmp of the upper-case spelling (test_tokenizer checks). */
static const keyword keywords[] = {
    {"ALL", TK_ALL},
    {"ANALYZE", TK_ANALYZE},
    {"AND", TK_AND},
    {"ARRAY", TK_ARRAY},
    {"AS", TK_AS},
    {"ASC", TK_ASC},
    {"ASYMMETRIC", TK_ASYMMETRIC},
    {"BETWEEN", TK_BETWEEN},
    {"BIGINT", TK_BIGINT},
    {"BINARY", TK_BINARY},
    {"BOOLEAN", TK_BOOLEAN},
    {"BOTH", TK_BOTH},
    {"BY", TK_BY},
    {"BYTES", TK_BYTES},
    {"CASE", TK_CASE},
    {"CAST", TK_CAST},
    {"CHAR", TK_CHAR},
    {"COMMENT", TK_COMMENT},
    {"CONSTRAINT", TK_CONSTRAINT},
    {"CREATE", TK_CREATE},
    {"CROSS", TK_CROSS},
    {"CURRENT_DATE", TK_CURRENT_DATE},
    {"CURRENT_TIME", TK_CURRENT_TIME},
    {"CURRENT_TIMESTAMP", TK_CURRENT_TIMESTAMP},
    {"DATE", TK_DATE},
    {"DAY", TK_DAY},
    {"DAYS", TK_DAYS},
    {"DEC", TK_DEC},
    {"DECIMAL", TK_DECIMAL},
    {"DESC", TK_DESC},
    {"DESCRIBE", TK_DESCRIBE},
    {"DESCRIPTOR", TK_DESCRIPTOR},
    {"DISTINCT", TK_DISTINCT},
    {"DOUBLE", TK_DOUBLE},
    {"DROP", TK_DROP},
    {"ELSE", TK_ELSE},
    {"END", TK_END},
    {"ENFORCED", TK_ENFORCED},
    {"ESCAPE", TK_ESCAPE},
    {"EXCEPT", TK_EXCEPT},
    {"EXISTS", TK_EXISTS},
    {"EXPLAIN", TK_EXPLAIN},
    {"EXTRACT", TK_EXTRACT},
    {"FALSE", TK_FALSE},
    {"FETCH", TK_FETCH},
    {"FILTER", TK_FILTER},
    {"FIRST", TK_FIRST},
    {"FLOAT", TK_FLOAT},
    {"FOR", TK_FOR},
    {"FORMAT", TK_FORMAT},
    {"FROM", TK_FROM},
    {"FULL", TK_FULL},
    {"FUNCTION", TK_FUNCTION},
    {"FUNCTIONS", TK_FUNCTIONS},
    {"GROUP", TK_GROUP},
    {"HAVING", TK_HAVING},
    {"HOUR", TK_HOUR},
    {"HOURS", TK_HOURS},
    {"IF", TK_IF},
    {"IN", TK_IN},
    {"INNER", TK_INNER},
    {"INSERT", TK_INSERT},
    {"INT", TK_INT},
    {"INTEGER", TK_INTEGER},
    {"INTERSECT", TK_INTERSECT},
    {"INTERVAL", TK_INTERVAL},
    {"INTO", TK_INTO},
    {"IS", TK_IS},
    {"JOIN", TK_JOIN},
    {"KEY", TK_KEY},
    {"LANGUAGE", TK_LANGUAGE},
    {"LAST", TK_LAST},
    {"LATERAL", TK_LATERAL},
    {"LEADING", TK_LEADING},
    {"LEFT", TK_LEFT},
    {"LIKE", TK_LIKE},
    {"LIMIT", TK_LIMIT},
    {"LOCAL", TK_LOCAL},
    {"LOCALTIME", TK_LOCALTIME},
    {"LOCALTIMESTAMP", TK_LOCALTIMESTAMP},
    {"MAP", TK_MAP},
    {"MILLISECOND", TK_MILLISECOND},
    {"MINUTE", TK_MINUTE},
    {"MINUTES", TK_MINUTES},
    {"MONTH", TK_MONTH},
    {"MONTHS", TK_MONTHS},
    {"MULTISET", TK_MULTISET},
    {"NATURAL", TK_NATURAL},
    {"NEXT", TK_NEXT},
    {"NOT", TK_NOT},
    {"NULL", TK_NULL},
    {"NULLS", TK_NULLS},
    {"NUMERIC", TK_NUMERIC},
    {"OF", TK_OF},
    {"OFFSET", TK_OFFSET},
    {"ON", TK_ON},
    {"ONLY", TK_ONLY},
    {"OR", TK_OR},
    {"ORDER", TK_ORDER},
    {"OUTER", TK_OUTER},
    {"OVER", TK_OVER},
    {"OVERWRITE", TK_OVERWRITE},
    {"PARTITION", TK_PARTITION},
    {"PARTITIONED", TK_PARTITIONED},
    {"PLAN", TK_PLAN},
    {"POSITION", TK_POSITION},
    {"PRECISION", TK_PRECISION},
    {"PRIMARY", TK_PRIMARY},
    {"RAW", TK_RAW},
    {"REAL", TK_REAL},
    {"RESET", TK_RESET},
    {"RIGHT", TK_RIGHT},
    {"ROW", TK_ROW},
    {"ROWS", TK_ROWS},
    {"SECOND", TK_SECOND},
    {"SECONDS", TK_SECONDS},
    {"SELECT", TK_SELECT},
    {"SET", TK_SET},
    {"SHOW", TK_SHOW},
    {"SIMILAR", TK_SIMILAR},
    {"SMALLINT", TK_SMALLINT},
    {"STRING", TK_STRING},
    {"SUBSTRING", TK_SUBSTRING},
    {"SYMMETRIC", TK_SYMMETRIC},
    {"SYSTEM", TK_SYSTEM},
    {"SYSTEM_TIME", TK_SYSTEM_TIME},
    {"TABLE", TK_TABLE},
    {"TABLES", TK_TABLES},
    {"TEMPORARY", TK_TEMPORARY},
    {"THEN", TK_THEN},
    {"TIME", TK_TIME},
    {"TIMESTAMP", TK_TIMESTAMP},
    {"TIMESTAMP_LTZ", TK_TIMESTAMP_LTZ},
    {"TINYINT", TK_TINYINT},
    {"TO", TK_TO},
    {"TRAILING", TK_TRAILING},
    {"TRIM", TK_TRIM},
    {"TRUE", TK_TRUE},
    {"TRY_CAST", TK_TRY_CAST},
    {"UNION", TK_UNION},
    {"UNKNOWN", TK_UNKNOWN},
    {"USING", TK_USING},
    {"VALUES", TK_VALUES},
    {"VARBINARY", TK_VARBINARY},
    {"VARCHAR", TK_VARCHAR},
    {"VIEW", TK_VIEW},
    {"VIEWS", TK_VIEWS},
    {"WATERMARK", TK_WATERMARK},
    {"WHEN", TK_WHEN},
    {"WHERE", TK_WHERE},
    {"WITH", TK_WITH},
    {"WITHOUT", TK_WITHOUT},
    {"YEAR", TK_YEAR},
    {"YEARS", TK_YEARS},
    {"ZONE", TK_ZONE},
};

#define NKEYWORDS ((int)(sizeof(keywords) / sizeof(keywords[0])))
#define MAX_KEYWORD_LEN 17

static const char *const keyword_names[] = {"ALL",
                                            "ANALYZE",
                                            "AND",
                                            "ARRAY",
                                            "AS",
                                            "ASC",
                                            "ASYMMETRIC",
                                            "BETWEEN",
                                            "BIGINT",
                                            "BINARY",
                                            "BOOLEAN",
                                            "BOTH",
                                            "BY",
                                            "BYTES",
                                            "CASE",
                                            "CAST",
                                            "CHAR",
                                            "COMMENT",
                                            "CONSTRAINT",
                                            "CREATE",
                                            "CROSS",
                                            "CURRENT_DATE",
                                            "CURRENT_TIME",
                                            "CURRENT_TIMESTAMP",
                                            "DATE",
                                            "DAY",
                                            "DAYS",
                                            "DEC",
                                            "DECIMAL",
                                            "DESC",
                                            "DESCRIBE",
                                            "DESCRIPTOR",
                                            "DISTINCT",
                                            "DOUBLE",
                                            "DROP",
                                            "ELSE",
                                            "END",
                                            "ENFORCED",
                                            "ESCAPE",
                                            "EXCEPT",
                                            "EXISTS",
                                            "EXPLAIN",
                                            "EXTRACT",
                                            "FALSE",
                                            "FETCH",
                                            "FILTER",
                                            "FIRST",
                                            "FLOAT",
                                            "FOR",
                                            "FORMAT",
                                            "FROM",
                                            "FULL",
                                            "FUNCTION",
                                            "FUNCTIONS",
                                            "GROUP",
                                            "HAVING",
                                            "HOUR",
                                            "HOURS",
                                            "IF",
                                            "IN",
                                            "INNER",
                                            "INSERT",
                                            "INT",
                                            "INTEGER",
                                            "INTERSECT",
                                            "INTERVAL",
                                            "INTO",
                                            "IS",
                                            "JOIN",
                                            "KEY",
                                            "LANGUAGE",
                                            "LAST",
                                            "LATERAL",
                                            "LEADING",
                                            "LEFT",
                                            "LIKE",
                                            "LIMIT",
                                            "LOCAL",
                                            "LOCALTIME",
                                            "LOCALTIMESTAMP",
                                            "MAP",
                                            "MILLISECOND",
                                            "MINUTE",
                                            "MINUTES",
                                            "MONTH",
                                            "MONTHS",
                                            "MULTISET",
                                            "NATURAL",
                                            "NEXT",
                                            "NOT",
                                            "NULL",
                                            "NULLS",
                                            "NUMERIC",
                                            "OF",
                                            "OFFSET",
                                            "ON",
                                            "ONLY",
                                            "OR",
                                            "ORDER",
                                            "OUTER",
                                            "OVER",
                                            "OVERWRITE",
                                            "PARTITION",
                                            "PARTITIONED",
                                            "PLAN",
                                            "POSITION",
                                            "PRECISION",
                                            "PRIMARY",
                                            "RAW",
                                            "REAL",
                                            "RESET",
                                            "RIGHT",
                                            "ROW",
                                            "ROWS",
                                            "SECOND",
                                            "SECONDS",
                                            "SELECT",
                                            "SET",
                                            "SHOW",
                                            "SIMILAR",
                                            "SMALLINT",
                                            "STRING",
                                            "SUBSTRING",
                                            "SYMMETRIC",
                                            "SYSTEM",
                                            "SYSTEM_TIME",
                                            "TABLE",
                                            "TABLES",
                                            "TEMPORARY",
                                            "THEN",
                                            "TIME",
                                            "TIMESTAMP",
                                            "TIMESTAMP_LTZ",
                                            "TINYINT",
                                            "TO",
                                            "TRAILING",
                                            "TRIM",
                                            "TRUE",
                                            "TRY_CAST",
                                            "UNION",
                                            "UNKNOWN",
                                            "USING",
                                            "VALUES",
                                            "VARBINARY",
                                            "VARCHAR",
                                            "VIEW",
                                            "VIEWS",
                                            "WATERMARK",
                                            "WHEN",
                                            "WHERE",
                                            "WITH",
                                            "WITHOUT",
                                            "YEAR",
                                            "YEARS",
                                            "ZONE",
                                            NULL};

/* The lemon code of a keyword, or 0. */
int sl_keyword_code(const char *word, size_t len) {
  char up[MAX_KEYWORD_LEN + 1];
  if (len == 0 || len > MAX_KEYWORD_LEN)
    return 0;
  for (size_t i = 0; i < len; i++)
    up[i] = (char)toupper((unsigned char)word[i]);
  up[len] = '\0';
  int lo = 0, hi = NKEYWORDS - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    int cmp = strcmp(up, keywords[mid].name);
    if (cmp == 0)
      return keywords[mid].code;
    if (cmp < 0)
      hi = mid - 1;
    else
      lo = mid + 1;
  }
  return 0;
}

bool sl_is_keyword(const char *word, size_t len) {
  return sl_keyword_code(word, len) != 0;
}

const char *const *sl_keyword_list(void) {
  return keyword_names;
}

void sl_tokenizer_init(sl_tokenizer *t, const char *text, size_t len,
                       int first_line) {
  memset(t, 0, sizeof(*t));
  t->text = text;
  t->len = len;
  t->line = first_line > 0 ? first_line : 1;
  t->column = 1;
}

static bool is_ident_start(unsigned char c) {
  /* Bytes of multi-byte UTF-8 characters count as letters. */
  return isalpha(c) || c == '_' || c >= 0x80;
}

static bool is_ident_char(unsigned char c) {
  return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

static int peek(const sl_tokenizer *t, size_t ahead) {
  size_t p = t->pos + ahead;
  return p < t->len ? (unsigned char)t->text[p] : -1;
}

/* Consume n bytes, keeping line and column up to date. */
static void advance(sl_tokenizer *t, size_t n) {
  for (size_t i = 0; i < n && t->pos < t->len; i++) {
    if (t->text[t->pos] == '\n') {
      t->line++;
      t->column = 1;
    } else {
      t->column++;
    }
    t->pos++;
  }
}

/* Scan a quoted run starting at the opening quote q, where a doubled quote
 * stands for one.  Returns false if the closing quote is missing (the whole
 * rest of the text is then consumed). */
static bool scan_quoted(sl_tokenizer *t, char q) {
  advance(t, 1);
  while (t->pos < t->len) {
    if (t->text[t->pos] == q) {
      if (peek(t, 1) == q) {
        advance(t, 2);
        continue;
      }
      advance(t, 1);
      return true;
    }
    advance(t, 1);
  }
  return false;
}

/* Returns false for an unterminated block comment. */
static bool scan_comment(sl_tokenizer *t) {
  if (t->text[t->pos] == '-') {
    while (t->pos < t->len && t->text[t->pos] != '\n')
      advance(t, 1);
    return true;
  }
  advance(t, 2);
  while (t->pos < t->len) {
    if (t->text[t->pos] == '*' && peek(t, 1) == '/') {
      advance(t, 2);
      return true;
    }
    advance(t, 1);
  }
  return false;
}

static bool at_comment(const sl_tokenizer *t) {
  int c = peek(t, 0), d = peek(t, 1);
  return (c == '-' && d == '-') || (c == '/' && d == '*');
}

/* Returns the kind: INTEGER, DECIMAL, FLOAT, or ERROR for 12abc / 1e+. */
static sl_token_kind scan_number(sl_tokenizer *t) {
  sl_token_kind kind = SL_TOK_INTEGER;
  while (isdigit(peek(t, 0)))
    advance(t, 1);
  if (peek(t, 0) == '.') {
    kind = SL_TOK_DECIMAL;
    advance(t, 1);
    while (isdigit(peek(t, 0)))
      advance(t, 1);
  }
  int e = peek(t, 0);
  if (e == 'e' || e == 'E') {
    size_t n = 1;
    if (peek(t, 1) == '+' || peek(t, 1) == '-')
      n = 2;
    if (isdigit(peek(t, n))) {
      kind = SL_TOK_FLOAT;
      advance(t, n);
      while (isdigit(peek(t, 0)))
        advance(t, 1);
    }
  }
  if (peek(t, 0) >= 0 && is_ident_char((unsigned char)peek(t, 0))) {
    while (peek(t, 0) >= 0 &&
           (is_ident_char((unsigned char)peek(t, 0)) || peek(t, 0) == '.'))
      advance(t, 1);
    return SL_TOK_ERROR;
  }
  return kind;
}

/* The operator at the current position: its code and length, or 0. */
static int scan_operator(const sl_tokenizer *t, size_t *len) {
  int c = peek(t, 0), d = peek(t, 1);
  *len = 1;
  switch (c) {
  case '+':
    return TK_PLUS;
  case '-':
    return TK_MINUS;
  case '*':
    return TK_STAR;
  case '/':
    return TK_SLASH;
  case '%':
    return TK_PERCENT;
  case '(':
    return TK_LP;
  case ')':
    return TK_RP;
  case ',':
    return TK_COMMA;
  case '.':
    return TK_DOT;
  case ';':
    return TK_SEMI;
  case '[':
    return TK_LBRACKET;
  case ']':
    return TK_RBRACKET;
  case '|':
    if (d == '|') {
      *len = 2;
      return TK_CONCAT;
    }
    return 0;
  case '=':
    if (d == '>') {
      *len = 2;
      return TK_ARROW;
    }
    return TK_EQ;
  case '!':
    if (d == '=') {
      *len = 2;
      return TK_NE;
    }
    return 0;
  case '<':
    if (d == '>' || d == '=') {
      *len = 2;
      return d == '>' ? TK_NE : TK_LE;
    }
    return TK_LT;
  case '>':
    if (d == '=') {
      *len = 2;
      return TK_GE;
    }
    return TK_GT;
  default:
    return 0;
  }
}

sl_token sl_tokenizer_next(sl_tokenizer *t) {
  for (;;) {
    sl_token tok;
    memset(&tok, 0, sizeof(tok));
    tok.start = t->text + t->pos;
    tok.line = t->line;
    tok.column = t->column;
    tok.offset = (int)t->pos;
    size_t start = t->pos;
    if (t->pos >= t->len) {
      tok.kind = SL_TOK_EOF;
      return tok;
    }
    int c = peek(t, 0);
    if (isspace(c)) {
      while (isspace(peek(t, 0)))
        advance(t, 1);
      if (!t->keep_whitespace)
        continue;
      tok.kind = SL_TOK_WHITESPACE;
    } else if (at_comment(t)) {
      bool ok = scan_comment(t);
      if (ok && !t->keep_comments)
        continue;
      tok.kind = ok ? SL_TOK_COMMENT : SL_TOK_ERROR;
    } else if (is_ident_start((unsigned char)c)) {
      while (peek(t, 0) >= 0 && is_ident_char((unsigned char)peek(t, 0)))
        advance(t, 1);
      tok.code = sl_keyword_code(tok.start, t->pos - start);
      tok.kind = tok.code ? SL_TOK_KEYWORD : SL_TOK_IDENT;
      if (!tok.code)
        tok.code = TK_ID;
    } else if (isdigit(c) || (c == '.' && isdigit(peek(t, 1)))) {
      tok.kind = scan_number(t);
      tok.code = tok.kind == SL_TOK_INTEGER   ? TK_INTLIT
                 : tok.kind == SL_TOK_DECIMAL ? TK_DECLIT
                 : tok.kind == SL_TOK_FLOAT   ? TK_FLOATLIT
                                              : 0;
    } else if (c == '\'') {
      bool ok = scan_quoted(t, '\'');
      tok.kind = ok ? SL_TOK_STRING : SL_TOK_ERROR;
      tok.code = ok ? TK_STRLIT : 0;
    } else if (c == '`' || c == '"') {
      bool ok = scan_quoted(t, (char)c);
      tok.kind = ok ? SL_TOK_QIDENT : SL_TOK_ERROR;
      tok.code = ok ? TK_ID : 0;
    } else {
      size_t n;
      tok.code = scan_operator(t, &n);
      tok.kind = tok.code ? SL_TOK_OPERATOR : SL_TOK_ERROR;
      advance(t, n);
    }
    tok.length = (int)(t->pos - start);
    return tok;
  }
}

void sl_tokenizer_skip_trivia(sl_tokenizer *t) {
  for (;;) {
    if (isspace(peek(t, 0))) {
      advance(t, 1);
    } else if (at_comment(t)) {
      sl_tokenizer saved = *t;
      if (!scan_comment(t)) {
        *t = saved;
        return;
      }
    } else {
      return;
    }
  }
}

static bool raw_char(const sl_tokenizer *t, bool value) {
  int c = peek(t, 0);
  if (c < 0 || at_comment(t))
    return false;
  if (value)
    return !isspace(c) && c != ';' && c != '\'' && c != '"' && c != '`';
  return is_ident_char((unsigned char)c) || c == '.' || c == '-';
}

sl_token sl_tokenizer_raw_word(sl_tokenizer *t, bool value) {
  sl_token tok;
  memset(&tok, 0, sizeof(tok));
  tok.start = t->text + t->pos;
  tok.line = t->line;
  tok.column = t->column;
  tok.offset = (int)t->pos;
  size_t start = t->pos;
  while (raw_char(t, value))
    advance(t, 1);
  tok.length = (int)(t->pos - start);
  if (tok.length > 0) {
    tok.kind = SL_TOK_IDENT;
    tok.code = TK_RAWWORD;
  }
  return tok;
}

int sl_tokenizer_error_message(const sl_token *tok, char *buf, size_t n) {
  unsigned char c = tok->length > 0 ? (unsigned char)tok->start[0] : 0;
  if (c == '\'') {
    snprintf(buf, n, "unterminated string literal");
    return 1;
  }
  if (c == '`' || c == '"') {
    snprintf(buf, n, "unterminated quoted identifier");
    return 1;
  }
  if (c == '/' && tok->length >= 2 && tok->start[1] == '*') {
    snprintf(buf, n, "unterminated comment");
    return 2;
  }
  if (isdigit(c) || c == '.') {
    int len = tok->length > 40 ? 40 : tok->length;
    snprintf(buf, n, "malformed number \"%.*s\"", len, tok->start);
    return tok->length;
  }
  if (isprint(c))
    snprintf(buf, n, "unexpected character '%c'", c);
  else
    snprintf(buf, n, "unexpected character 0x%02X", c);
  return 1;
}

static bool is_unterminated(const sl_token *tok) {
  char c = tok->start[0];
  return c == '\'' || c == '`' || c == '"' || (c == '/' && tok->length >= 2);
}

bool sl_sql_is_complete(const char *text, size_t len) {
  sl_tokenizer t;
  sl_tokenizer_init(&t, text, len, 1);
  bool complete = false;
  for (;;) {
    sl_token tok = sl_tokenizer_next(&t);
    if (tok.kind == SL_TOK_EOF)
      return complete;
    /* An unterminated string, identifier or comment swallows the rest. */
    if (tok.kind == SL_TOK_ERROR && is_unterminated(&tok))
      return false;
    complete = tok.code == TK_SEMI;
  }
}

size_t sl_sql_next_statement(const char *text, size_t len, size_t *skip) {
  sl_tokenizer t;
  sl_tokenizer_init(&t, text, len, 1);
  sl_tokenizer_skip_trivia(&t);
  if (skip)
    *skip = t.pos;
  if (t.pos >= len)
    return 0;
  for (;;) {
    sl_token tok = sl_tokenizer_next(&t);
    if (tok.kind == SL_TOK_EOF)
      return len;
    if (tok.code == TK_SEMI)
      return t.pos;
  }
}
