/* test_catalog.c - the catalog (names, order, replace, suggestions) and
 * the function registry (lookup, order, return-type rules, CRDT classes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bind_helpers.h"
#include "sluice/catalog/functions.h"

static sl_table_def *make(const char *name, int ncols) {
  sl_table_def *d = sl_table_def_new(SL_TABLE_CONNECTOR, name);
  d->ncolumns = ncols;
  d->columns = SL_ANEW_N(&d->arena, sl_column, ncols);
  for (int i = 0; i < ncols; i++) {
    d->columns[i].name = sl_arena_printf(&d->arena, "c%d", i);
    d->columns[i].type = sl_type_new(&d->arena, SL_TYPE_BIGINT);
  }
  return d;
}

static void test_catalog_basics(void **state) {
  (void)state;
  sl_catalog *c = sl_catalog_new();
  sl_error err = {0};
  assert_int_equal(sl_catalog_count(c), 0);
  assert_null(sl_catalog_suggest(c, "x"));
  assert_int_equal(sl_catalog_add(c, make("person", 1), false, &err), SL_OK);
  assert_int_equal(sl_catalog_add(c, make("bid", 2), false, &err), SL_OK);
  assert_int_equal(sl_catalog_add(c, make("auction", 3), false, &err), SL_OK);
  /* name order */
  assert_int_equal(sl_catalog_count(c), 3);
  assert_string_equal(sl_catalog_at(c, 0)->name, "auction");
  assert_string_equal(sl_catalog_at(c, 1)->name, "bid");
  assert_string_equal(sl_catalog_at(c, 2)->name, "person");
  assert_null(sl_catalog_at(c, 3));
  /* exact, then unique case-insensitive */
  assert_int_equal(sl_catalog_find(c, "BID")->ncolumns, 2);
  assert_null(sl_catalog_find(c, "bids"));
  /* a duplicate is refused (and freed) unless replacing */
  assert_int_equal(sl_catalog_add(c, make("bid", 5), false, &err), SL_ECATALOG);
  assert_string_equal(err.message, "table 'bid' already exists");
  assert_int_equal(sl_catalog_find(c, "bid")->ncolumns, 2);
  assert_int_equal(sl_catalog_add(c, make("bid", 5), true, &err), SL_OK);
  assert_int_equal(sl_catalog_find(c, "bid")->ncolumns, 5);
  assert_int_equal(sl_catalog_count(c), 3);
  /* two spellings: exact wins, a third spelling is ambiguous */
  assert_int_equal(sl_catalog_add(c, make("Bid", 7), false, &err), SL_OK);
  assert_int_equal(sl_catalog_find(c, "Bid")->ncolumns, 7);
  assert_int_equal(sl_catalog_find(c, "bid")->ncolumns, 5);
  assert_null(sl_catalog_find(c, "BID"));
  /* suggestions */
  assert_string_equal(sl_catalog_suggest(c, "persn"), "person");
  assert_string_equal(sl_catalog_suggest(c, "auctoin"), "auction");
  assert_null(sl_catalog_suggest(c, "zzzzzzzz"));
  /* drop */
  assert_true(sl_catalog_drop(c, "person"));
  assert_false(sl_catalog_drop(c, "person"));
  assert_null(sl_catalog_find(c, "person"));
  assert_int_equal(sl_catalog_count(c), 3);
  /* columns and options */
  const sl_table_def *a = sl_catalog_find(c, "auction");
  assert_int_equal(sl_table_def_find_column(a, "c2"), 2);
  assert_int_equal(sl_table_def_find_column(a, "C1"), 1);
  assert_int_equal(sl_table_def_find_column(a, "c9"), -1);
  assert_null(sl_table_def_option(a, "connector"));
  sl_error_clear(&err);
  sl_catalog_free(c);
}

static void test_catalog_from_ddl(void **state) {
  (void)state;
  sl_catalog *c = tnexmark_catalog();
  assert_non_null(c);
  assert_int_equal(sl_catalog_count(c), 4);
  const sl_table_def *p = sl_catalog_find(c, "person");
  assert_int_equal(p->kind, SL_TABLE_VIEW);
  assert_int_equal(p->rowtime_column, -1);
  assert_string_equal(p->columns[2].name, "emailAddress");
  /* the entry owns its strings: they outlive the statement's arena */
  assert_non_null(strstr(p->view_sql, "WHERE event_type = 0"));
  sl_catalog_free(c);
}

static sl_type *rt(const char *fn, int n, ...) {
  static sl_arena a;
  static int init;
  if (!init) {
    sl_arena_init(&a, 0);
    init = 1;
  }
  const sl_type *args[8];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++)
    args[i] = va_arg(ap, const sl_type *);
  va_end(ap);
  sl_fn_check chk = {-1, NULL};
  return sl_function_find(fn)->return_type(&a, n, args, &chk);
}

static void test_functions(void **state) {
  (void)state;
  /* sorted as lookup expects, names upper case, every rule present */
  for (int i = 0; i < sl_function_count(); i++) {
    const sl_function *f = sl_function_at(i);
    if (i > 0)
      assert_true(strcasecmp(sl_function_at(i - 1)->name, f->name) < 0);
    assert_ptr_equal(sl_function_find(f->name), f);
    assert_true(f->description && *f->description);
    assert_true(f->signature && *f->signature);
    if (f->kind != SL_FN_WINDOW_TVF)
      assert_non_null(f->return_type);
  }
  assert_null(sl_function_at(sl_function_count()));
  const char *required[] = {"MOD",
                            "ABS",
                            "FLOOR",
                            "CEIL",
                            "ROUND",
                            "POWER",
                            "SQRT",
                            "LN",
                            "LOG10",
                            "EXP",
                            "LOWER",
                            "UPPER",
                            "CHAR_LENGTH",
                            "CHARACTER_LENGTH",
                            "SUBSTRING",
                            "SUBSTR",
                            "TRIM",
                            "CONCAT",
                            "CONCAT_WS",
                            "REPLACE",
                            "POSITION",
                            "LEFT",
                            "RIGHT",
                            "LPAD",
                            "RPAD",
                            "REGEXP_EXTRACT",
                            "REGEXP_REPLACE",
                            "REGEXP",
                            "SPLIT_INDEX",
                            "DATE_FORMAT",
                            "HOUR",
                            "MINUTE",
                            "SECOND",
                            "YEAR",
                            "MONTH",
                            "DAYOFMONTH",
                            "EXTRACT",
                            "TO_TIMESTAMP",
                            "UNIX_TIMESTAMP",
                            "FROM_UNIXTIME",
                            "PROCTIME",
                            "CURRENT_TIMESTAMP",
                            "LOCALTIMESTAMP",
                            "NOW",
                            "COALESCE",
                            "NULLIF",
                            "IF",
                            "HASH_CODE",
                            "TUMBLE_START",
                            "TUMBLE_END",
                            "TUMBLE_ROWTIME",
                            "HOP_START",
                            "HOP_END",
                            "HOP_ROWTIME",
                            "SESSION_START",
                            "SESSION_END",
                            "SESSION_ROWTIME",
                            "COUNT",
                            "SUM",
                            "AVG",
                            "MIN",
                            "MAX",
                            "ROW_NUMBER",
                            "RANK",
                            "DENSE_RANK",
                            "TUMBLE",
                            "HOP",
                            "CUMULATE",
                            "SESSION"};
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
    if (!sl_function_find(required[i]))
      fail_msg("function %s is not registered", required[i]);
  assert_ptr_equal(sl_function_find("date_format"),
                   sl_function_find("DATE_FORMAT"));
  assert_null(sl_function_find("count_char"));
  assert_string_equal(sl_function_suggest("DATE_FORMT"), "DATE_FORMAT");
  assert_string_equal(sl_function_suggest("cout"), "COUNT");
  assert_null(sl_function_suggest("xyzzyplugh"));

  assert_int_equal(sl_function_find("COUNT")->kind, SL_FN_AGGREGATE);
  assert_int_equal(sl_function_find("ROW_NUMBER")->kind, SL_FN_WINDOW);
  assert_int_equal(sl_function_find("HOP")->kind, SL_FN_WINDOW_TVF);
  assert_int_equal(sl_function_find("HOP_END")->kind, SL_FN_GROUP_AUX);
  assert_int_equal(sl_function_find("HOP_END")->prop, SL_WPROP_END);
  assert_int_equal(sl_function_find("SESSION_START")->window,
                   SL_WINDOW_SESSION);

  /* mergeable state classes */
  assert_int_equal(sl_function_agg_state(sl_function_find("SUM"), false),
                   SL_AGG_STATE_COUNTER);
  assert_int_equal(sl_function_agg_state(sl_function_find("MAX"), false),
                   SL_AGG_STATE_SEMILATTICE);
  assert_int_equal(sl_function_agg_state(sl_function_find("AVG"), false),
                   SL_AGG_STATE_SUM_COUNT);
  assert_int_equal(sl_function_agg_state(sl_function_find("COUNT"), true),
                   SL_AGG_STATE_GSET);
  assert_int_equal(sl_function_agg_state(sl_function_find("UPPER"), false),
                   SL_AGG_STATE_NONE);
  assert_string_equal(sl_agg_state_name(SL_AGG_STATE_GSET), "grow-only set");

  /* return types */
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_type *big = sl_type_new(&a, SL_TYPE_BIGINT);
  sl_type *i32 = sl_type_new(&a, SL_TYPE_INT);
  sl_type *str = sl_type_varchar(&a, -1);
  sl_type *dec = sl_type_decimal(&a, 10, 2);
  sl_type *ts = sl_type_timestamp(&a, 3);
  assert_int_equal(rt("MOD", 2, big, i32)->kind, SL_TYPE_INT); /* Calcite */
  assert_null(rt("MOD", 2, str, i32));
  assert_string_equal(sl_type_name(&a, rt("COUNT", 0)), "BIGINT NOT NULL");
  assert_string_equal(sl_type_name(&a, rt("SUM", 1, dec)), "DECIMAL(38, 2)");
  assert_string_equal(sl_type_name(&a, rt("AVG", 1, dec)), "DECIMAL(38, 6)");
  assert_string_equal(sl_type_name(&a, rt("AVG", 1, big)), "BIGINT");
  assert_string_equal(sl_type_name(&a, rt("PROCTIME", 0)),
                      "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*");
  assert_string_equal(sl_type_name(&a, rt("DATE_FORMAT", 2, ts, str)),
                      "STRING");
  assert_string_equal(sl_type_name(&a, rt("HOUR", 1, ts)), "BIGINT");
  assert_string_equal(sl_type_name(&a, rt("TO_TIMESTAMP", 1, str)),
                      "TIMESTAMP(3)");
  assert_string_equal(sl_type_name(&a, rt("CHAR_LENGTH", 1, str)), "INT");
  assert_string_equal(sl_type_name(&a, rt("FLOOR", 1, dec)), "DECIMAL(10, 0)");
  assert_string_equal(sl_type_name(&a, rt("SQRT", 1, big)), "DOUBLE");
  assert_string_equal(sl_type_name(&a, rt("ROW_NUMBER", 0)), "BIGINT NOT NULL");
  sl_arena_free(&a);
}

static void test_edit_distance(void **state) {
  (void)state;
  assert_int_equal(sl_edit_distance("bid", "bid"), 0);
  assert_int_equal(sl_edit_distance("bidd", "bid"), 1);
  assert_int_equal(sl_edit_distance("BID", "bid"), 0);
  assert_int_equal(sl_edit_distance("kitten", "sitting"), 3);
  const char *names[] = {"price", "auction", "bidder"};
  assert_string_equal(sl_closest_name("pricee", names, 3), "price");
  assert_string_equal(sl_closest_name("bider", names, 3), "bidder");
  assert_null(sl_closest_name("dateTime", names, 3));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_catalog_basics),
      cmocka_unit_test(test_catalog_from_ddl),
      cmocka_unit_test(test_functions),
      cmocka_unit_test(test_edit_distance),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
