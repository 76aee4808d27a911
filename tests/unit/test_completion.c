/* test_completion.c - what Tab offers in the shell: dot-commands at the
 * start of input, tables after FROM, columns of the tables a statement
 * names, `table.column`, and keywords in the case the user types.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sluice/shell/shell.h"

static void add_table(sl_catalog *cat, const char *name, int ncols,
                      const char *const *cols) {
  sl_table_def *def = sl_table_def_new(SL_TABLE_CONNECTOR, name);
  def->ncolumns = ncols;
  def->columns = SL_ANEW_N(&def->arena, sl_column, ncols);
  for (int i = 0; i < ncols; i++) {
    def->columns[i].name = sl_arena_strdup(&def->arena, cols[i]);
    def->columns[i].type = sl_type_new(&def->arena, SL_TYPE_INT);
  }
  def->rowtime_column = -1;
  sl_error err = {0};
  assert_int_equal(sl_catalog_add(cat, def, false, &err), SL_OK);
}

static int setup(void **state) {
  sl_catalog *cat = sl_catalog_new();
  static const char *const bids[] = {"auction", "bidder", "price"};
  static const char *const persons[] = {"id", "name", "city"};
  add_table(cat, "bids", 3, bids);
  add_table(cat, "bidders", 0, NULL);
  add_table(cat, "persons", 3, persons);
  *state = cat;
  return 0;
}

static int teardown(void **state) {
  sl_catalog_free(*state);
  return 0;
}

/* The candidates joined with spaces, for one readable comparison. */
static char *complete(const sl_catalog *cat, const char *pending,
                      const char *line, size_t *word_start) {
  sl_completion c;
  sl_complete(cat, pending, line, strlen(line), &c);
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_append(&b, "");
  for (int i = 0; i < c.n; i++) {
    if (i > 0)
      sl_strbuf_appendc(&b, ' ');
    sl_strbuf_append(&b, c.items[i]);
  }
  if (word_start)
    *word_start = c.word_start;
  sl_completion_free(&c);
  return sl_strbuf_detach(&b);
}

static void expect(const sl_catalog *cat, const char *pending, const char *line,
                   const char *expected) {
  char *got = complete(cat, pending, line, NULL);
  assert_string_equal(got, expected);
  free(got);
}

static void test_dot_commands(void **state) {
  expect(*state, "", ".he", ".headers .help");
  expect(*state, "", "  .ti", ".timeout .timer");
  expect(*state, "", ".timer", ".timer");
  /* Not in the middle of a statement. */
  expect(*state, "SELECT 1", ".he", "");
}

static void test_tables_after_from(void **state) {
  size_t start = 0;
  char *got = complete(*state, "", "SELECT * FROM bi", &start);
  assert_string_equal(got, "bidders bids");
  assert_int_equal(start, strlen("SELECT * FROM "));
  free(got);
  expect(*state, "", "SELECT * FROM ", "bidders bids persons");
  /* The word before may be on an earlier line of the statement. */
  expect(*state, "SELECT *\nFROM", "pe", "persons");
}

static void test_columns_of_named_tables(void **state) {
  /* Only persons is named: its columns, not those of bids. */
  char *got = complete(*state, "SELECT * FROM persons WHERE", "pri", NULL);
  assert_null(strstr(got, "price"));
  free(got);
  got = complete(*state, "SELECT * FROM bids WHERE", "pri", NULL);
  assert_non_null(strstr(got, "price"));
  free(got);
  /* No table named yet: the columns of every table. */
  got = complete(*state, "", "SELECT pri", NULL);
  assert_non_null(strstr(got, "price"));
  free(got);
  expect(*state, "SELECT * FROM persons WHERE", "cit", "city");
}

static void test_qualified_columns(void **state) {
  expect(*state, "", "SELECT bids.", "bids.auction bids.bidder bids.price");
  expect(*state, "", "SELECT bids.pr", "bids.price");
  expect(*state, "", "SELECT nope.", "");
}

static void test_keywords_follow_case(void **state) {
  char *upper = complete(*state, "", "SELE", NULL);
  assert_non_null(strstr(upper, "SELECT"));
  free(upper);
  char *lower = complete(*state, "", "sele", NULL);
  assert_non_null(strstr(lower, "select"));
  assert_null(strstr(lower, "SELECT"));
  free(lower);
}

static void test_nothing_typed(void **state) {
  /* No word and no FROM before it: offering every keyword helps no one. */
  expect(*state, "", "SELECT ", "");
  expect(NULL, "", "SELECT * FROM ", "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_dot_commands, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tables_after_from, setup, teardown),
      cmocka_unit_test_setup_teardown(test_columns_of_named_tables, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_qualified_columns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_keywords_follow_case, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_nothing_typed, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
