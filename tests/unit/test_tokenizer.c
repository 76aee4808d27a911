/* test_tokenizer.c - unit tests of parser/tokenizer.c: token kinds and
 * codes, positions, quoting and escapes, comments, error tokens, the
 * keyword table, sl_sql_is_complete and sl_sql_next_statement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "grammar.h"
#include "parser/parse_int.h"
#include "sluice/parser/parser.h"

typedef struct expect {
  sl_token_kind kind;
  int code;
  const char *text;
  int line, column;
} expect;

static void check_tokens(const char *sql, const expect *want, int n,
                         bool comments) {
  sl_tokenizer t;
  sl_tokenizer_init(&t, sql, strlen(sql), 1);
  t.keep_comments = comments;
  for (int i = 0; i < n; i++) {
    sl_token tok = sl_tokenizer_next(&t);
    assert_int_equal(tok.kind, want[i].kind);
    if (want[i].code)
      assert_int_equal(tok.code, want[i].code);
    if (want[i].text) {
      assert_int_equal(tok.length, (int)strlen(want[i].text));
      assert_memory_equal(tok.start, want[i].text, (size_t)tok.length);
      assert_int_equal(tok.offset, (int)(tok.start - sql));
    }
    if (want[i].line) {
      assert_int_equal(tok.line, want[i].line);
      assert_int_equal(tok.column, want[i].column);
    }
  }
  assert_int_equal(sl_tokenizer_next(&t).kind, SL_TOK_EOF);
}

static void test_basic_kinds(void **state) {
  (void)state;
  const char *sql = "SELECT a1, `b``c`, \"d\" FROM t\n"
                    "  WHERE x >= 1.5 AND y <> 'it''s' -- note\n"
                    "\t/* block\n comment */ z != .5e-3;";
  expect want[] = {
      {SL_TOK_KEYWORD, TK_SELECT, "SELECT", 1, 1},
      {SL_TOK_IDENT, TK_ID, "a1", 1, 8},
      {SL_TOK_OPERATOR, TK_COMMA, ",", 1, 10},
      {SL_TOK_QIDENT, TK_ID, "`b``c`", 1, 12},
      {SL_TOK_OPERATOR, TK_COMMA, ",", 1, 18},
      {SL_TOK_QIDENT, TK_ID, "\"d\"", 1, 20},
      {SL_TOK_KEYWORD, TK_FROM, "FROM", 1, 24},
      {SL_TOK_IDENT, TK_ID, "t", 1, 29},
      {SL_TOK_KEYWORD, TK_WHERE, "WHERE", 2, 3},
      {SL_TOK_IDENT, TK_ID, "x", 2, 9},
      {SL_TOK_OPERATOR, TK_GE, ">=", 2, 11},
      {SL_TOK_DECIMAL, TK_DECLIT, "1.5", 2, 14},
      {SL_TOK_KEYWORD, TK_AND, "AND", 2, 18},
      {SL_TOK_IDENT, TK_ID, "y", 2, 22},
      {SL_TOK_OPERATOR, TK_NE, "<>", 2, 24},
      {SL_TOK_STRING, TK_STRLIT, "'it''s'", 2, 27},
      {SL_TOK_IDENT, TK_ID, "z", 4, 13},
      {SL_TOK_OPERATOR, TK_NE, "!=", 4, 15},
      {SL_TOK_FLOAT, TK_FLOATLIT, ".5e-3", 4, 18},
      {SL_TOK_OPERATOR, TK_SEMI, ";", 4, 23},
  };
  check_tokens(sql, want, (int)(sizeof(want) / sizeof(want[0])), false);
}

static void test_comments_kept(void **state) {
  (void)state;
  expect want[] = {
      {SL_TOK_IDENT, TK_ID, "a", 1, 1},
      {SL_TOK_COMMENT, 0, "-- x", 1, 3},
      {SL_TOK_COMMENT, 0, "/* y\n*/", 2, 1},
      {SL_TOK_IDENT, TK_ID, "b", 3, 4},
  };
  check_tokens("a -- x\n/* y\n*/ b", want, 4, true);
}

static void test_whitespace_kept(void **state) {
  (void)state;
  sl_tokenizer t;
  sl_tokenizer_init(&t, "a \n b", 5, 7);
  t.keep_whitespace = true;
  sl_token tok = sl_tokenizer_next(&t);
  assert_int_equal(tok.kind, SL_TOK_IDENT);
  assert_int_equal(tok.line, 7);
  tok = sl_tokenizer_next(&t);
  assert_int_equal(tok.kind, SL_TOK_WHITESPACE);
  assert_int_equal(tok.length, 3);
  tok = sl_tokenizer_next(&t);
  assert_int_equal(tok.kind, SL_TOK_IDENT);
  assert_int_equal(tok.line, 8);
  assert_int_equal(tok.column, 2);
}

static void test_numbers(void **state) {
  (void)state;
  expect want[] = {
      {SL_TOK_INTEGER, TK_INTLIT, "42", 0, 0},
      {SL_TOK_DECIMAL, TK_DECLIT, "1.5", 0, 0},
      {SL_TOK_DECIMAL, TK_DECLIT, ".5", 0, 0},
      {SL_TOK_DECIMAL, TK_DECLIT, "5.", 0, 0},
      {SL_TOK_FLOAT, TK_FLOATLIT, "1e5", 0, 0},
      {SL_TOK_FLOAT, TK_FLOATLIT, "1.5E+3", 0, 0},
      {SL_TOK_INTEGER, TK_INTLIT, "7", 0, 0},
      {SL_TOK_OPERATOR, TK_MINUS, "-", 0, 0},
      {SL_TOK_INTEGER, TK_INTLIT, "2", 0, 0},
  };
  check_tokens("42 1.5 .5 5. 1e5 1.5E+3 7-2", want, 9, false);
}

static void test_operators(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int code;
  } ops[] = {{"+", TK_PLUS},     {"-", TK_MINUS},    {"*", TK_STAR},
             {"/", TK_SLASH},    {"%", TK_PERCENT},  {"||", TK_CONCAT},
             {"=", TK_EQ},       {"<>", TK_NE},      {"!=", TK_NE},
             {"<", TK_LT},       {"<=", TK_LE},      {">", TK_GT},
             {">=", TK_GE},      {"(", TK_LP},       {")", TK_RP},
             {",", TK_COMMA},    {".", TK_DOT},      {";", TK_SEMI},
             {"[", TK_LBRACKET}, {"]", TK_RBRACKET}, {"=>", TK_ARROW}};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
    expect want = {SL_TOK_OPERATOR, ops[i].code, ops[i].text, 1, 1};
    check_tokens(ops[i].text, &want, 1, false);
  }
  /* ROW<a ROW<b INT>> closes with two GT tokens. */
  expect gts[] = {{SL_TOK_OPERATOR, TK_GT, ">", 0, 0},
                  {SL_TOK_OPERATOR, TK_GT, ">", 0, 0}};
  check_tokens(">>", gts, 2, false);
}

static void test_keywords(void **state) {
  (void)state;
  assert_true(sl_is_keyword("select", 6));
  assert_true(sl_is_keyword("SeLeCt", 6));
  assert_true(sl_is_keyword("SYSTEM_TIME", 11));
  assert_true(sl_is_keyword("TIMESTAMP_LTZ", 13));
  assert_false(sl_is_keyword("selec", 5));
  assert_false(sl_is_keyword("selectx", 7));
  assert_false(sl_is_keyword("dateTime", 8));
  assert_false(sl_is_keyword("", 0));
  /* The list is sorted (binary search relies on it), upper case and
   * NULL-terminated, and every entry is recognised with a lemon code. */
  const char *const *kw = sl_keyword_list();
  int n = 0;
  for (; kw[n]; n++) {
    assert_true(sl_is_keyword(kw[n], strlen(kw[n])));
    assert_int_not_equal(sl_keyword_code(kw[n], strlen(kw[n])), 0);
    for (const char *p = kw[n]; *p; p++)
      assert_false(*p >= 'a' && *p <= 'z');
    if (n > 0)
      assert_true(strcmp(kw[n - 1], kw[n]) < 0);
  }
  assert_true(n > 100);
  sl_tokenizer t;
  sl_tokenizer_init(&t, "interval Interval", 17, 1);
  assert_int_equal(sl_tokenizer_next(&t).code, TK_INTERVAL);
  assert_int_equal(sl_tokenizer_next(&t).code, TK_INTERVAL);
}

static void check_error(const char *sql, int offset, const char *message) {
  sl_tokenizer t;
  sl_tokenizer_init(&t, sql, strlen(sql), 1);
  sl_token tok;
  do {
    tok = sl_tokenizer_next(&t);
  } while (tok.kind != SL_TOK_ERROR && tok.kind != SL_TOK_EOF);
  assert_int_equal(tok.kind, SL_TOK_ERROR);
  assert_int_equal(tok.offset, offset);
  char buf[128];
  sl_tokenizer_error_message(&tok, buf, sizeof(buf));
  assert_string_equal(buf, message);
  /* The tokenizer moves on after an error and terminates. */
  int guard = 0;
  while (sl_tokenizer_next(&t).kind != SL_TOK_EOF)
    assert_true(++guard < 100);
}

static void test_errors(void **state) {
  (void)state;
  check_error("SELECT 'abc", 7, "unterminated string literal");
  check_error("SELECT 'it''s", 7, "unterminated string literal");
  check_error("a /* b", 2, "unterminated comment");
  check_error("`abc", 0, "unterminated quoted identifier");
  check_error("x \"abc", 2, "unterminated quoted identifier");
  check_error("a # b", 2, "unexpected character '#'");
  check_error("a | b", 2, "unexpected character '|'");
  check_error("a ! b", 2, "unexpected character '!'");
  check_error("a \x01 b", 2, "unexpected character 0x01");
  check_error("SELECT 12abc", 7, "malformed number \"12abc\"");
  check_error("1e", 0, "malformed number \"1e\"");
}

static void test_is_complete(void **state) {
  (void)state;
  static const struct {
    const char *sql;
    bool complete;
  } cases[] = {
      {"", false},
      {"SELECT 1", false},
      {"SELECT 1;", true},
      {";", true},
      {"SELECT 1;  \n", true},
      {"SELECT 1; -- done", true},
      {"SELECT 1; /* done */", true},
      {"SELECT 1; /* not done", false},
      {"SELECT ';'", false},
      {"SELECT ';';", true},
      {"SELECT 'a", false},
      {"SELECT 1 -- ;", false},
      {"SELECT 1 /* ; */", false},
      {"SELECT `a;`", false},
      {"SELECT \"a;\";", true},
      {"SELECT 1; SELECT 2", false},
      {"SELECT #;", true},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    bool got = sl_sql_is_complete(cases[i].sql, strlen(cases[i].sql));
    if (got != cases[i].complete)
      fail_msg("sl_sql_is_complete(\"%s\") = %d", cases[i].sql, got);
  }
}

static void test_next_statement(void **state) {
  (void)state;
  const char *sql = "  -- lead\n SELECT ';' ; /* c */ SELECT 2;\n  SELECT 3 ";
  size_t len = strlen(sql), pos = 0, skip = 99;
  const char *want[] = {"SELECT ';' ;", "SELECT 2;", "SELECT 3 "};
  for (int i = 0; i < 3; i++) {
    size_t n = sl_sql_next_statement(sql + pos, len - pos, &skip);
    assert_true(n > skip);
    assert_int_equal(n - skip, strlen(want[i]));
    assert_memory_equal(sql + pos + skip, want[i], n - skip);
    pos += n;
  }
  assert_int_equal(sl_sql_next_statement(sql + pos, len - pos, &skip), 0);
  assert_int_equal(sl_sql_next_statement("  /* x */ \n", 11, &skip), 0);
  assert_int_equal(skip, 11);
  /* An unterminated string runs to the end. */
  assert_int_equal(sl_sql_next_statement("SELECT 'a; b", 12, &skip), 12);
  assert_int_equal(skip, 0);
}

static void test_raw_words(void **state) {
  (void)state;
  sl_tokenizer t;
  const char *sql = "  table.exec.state-ttl = 1h;";
  sl_tokenizer_init(&t, sql, strlen(sql), 1);
  sl_tokenizer_skip_trivia(&t);
  sl_token key = sl_tokenizer_raw_word(&t, false);
  assert_int_equal(key.code, TK_RAWWORD);
  assert_int_equal(key.length, 20);
  assert_int_equal(key.column, 3);
  assert_int_equal(sl_tokenizer_next(&t).code, TK_EQ);
  sl_tokenizer_skip_trivia(&t);
  sl_token val = sl_tokenizer_raw_word(&t, true);
  assert_int_equal(val.length, 2);
  assert_int_equal(sl_tokenizer_next(&t).code, TK_SEMI);
  /* A quote is not a raw word. */
  sl_tokenizer_init(&t, "'x'", 3, 1);
  assert_int_equal(sl_tokenizer_raw_word(&t, true).kind, SL_TOK_EOF);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_basic_kinds),
      cmocka_unit_test(test_comments_kept),
      cmocka_unit_test(test_whitespace_kept),
      cmocka_unit_test(test_numbers),
      cmocka_unit_test(test_operators),
      cmocka_unit_test(test_keywords),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_is_complete),
      cmocka_unit_test(test_next_statement),
      cmocka_unit_test(test_raw_words),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
