/* test_binder.c - the binder: NEXMark DDL, views and queries bind with
 * Flink's types; every error's code and position (the messages are in
 * tests/sql/errors/binder.test). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bind_helpers.h"

static sl_catalog *cat;

static int setup(void **state) {
  (void)state;
  cat = tnexmark_catalog();
  if (!cat)
    return -1;
  sl_error err = {0};
  int rc = trun_script(
      cat,
      "CREATE TABLE t (x TIMESTAMP(3), y BIGINT) WITH ('connector' = "
      "'datagen');\n"
      "CREATE TABLE sink (a BIGINT, b VARCHAR, c AS a + 1) WITH ('connector' "
      "= 'blackhole');\n"
      "CREATE TABLE side_input (key BIGINT, `value` VARCHAR) WITH "
      "('connector.type' = 'filesystem', 'connector.path' = '/tmp/x');\n"
      "CREATE TABLE pt (k BIGINT, pt AS PROCTIME()) WITH ('connector' = "
      "'datagen');\n",
      &err);
  if (rc)
    fprintf(stderr, "setup: %s\n", err.message);
  sl_error_clear(&err);
  return rc ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  sl_catalog_free(cat);
  return 0;
}

/* Bind sql, which must succeed; check output column names and types
 * ("name TYPE" joined by ", "). */
static void expect_schema(const char *sql, const char *schema) {
  tbound t;
  tbind(&t, cat, sql);
  if (t.rc != SL_OK)
    fail_msg("binding failed: %s\n  in: %s", t.err.message, sql);
  sl_strbuf b = SL_STRBUF_INIT;
  const sl_bquery *q = t.bs->query;
  for (int i = 0; i < q->ncols; i++) {
    if (i)
      sl_strbuf_append(&b, ", ");
    sl_strbuf_printf(&b, "%s ", q->cols[i].name);
    sl_type_format(&b, q->cols[i].type);
  }
  assert_string_equal(sl_strbuf_cstr(&b), schema);
  sl_strbuf_free(&b);
  tbound_done(&t);
}

/* Bind sql, which must fail with code at the position line:column. */
static void expect_error(const char *sql, int code, int line, int column) {
  tbound t;
  tbind(&t, cat, sql);
  if (t.rc == SL_OK)
    fail_msg("expected an error for: %s", sql);
  assert_int_equal(t.rc, code);
  assert_int_equal(t.err.code, code);
  assert_int_equal(t.err.line, line);
  assert_int_equal(t.err.column, column);
  tbound_done(&t);
}

static void test_nexmark_catalog(void **state) {
  (void)state;
  const sl_table_def *d = sl_catalog_find(cat, "datagen");
  assert_non_null(d);
  assert_int_equal(d->kind, SL_TABLE_CONNECTOR);
  assert_int_equal(d->ncolumns, 5);
  assert_int_equal(d->rowtime_column, 4);
  assert_string_equal(d->columns[4].name, "dateTime");
  assert_int_equal(d->columns[4].type->time_attr, SL_TIME_ROWTIME);
  assert_string_equal(d->watermark_sql, "dateTime - INTERVAL '4' SECOND");
  assert_non_null(d->columns[4].computed_sql);
  assert_true(strncmp(d->columns[4].computed_sql, "CASE", 4) == 0);
  assert_null(d->columns[0].computed_sql);
  assert_string_equal(sl_table_def_option(d, "connector"), "nexmark");
  assert_true(strncmp(d->create_sql, "CREATE TABLE datagen (", 22) == 0);

  const sl_table_def *bid = sl_catalog_find(cat, "bid");
  assert_non_null(bid);
  assert_int_equal(bid->kind, SL_TABLE_VIEW);
  assert_int_equal(bid->ncolumns, 7);
  assert_string_equal(bid->columns[0].name, "auction");
  assert_string_equal(bid->columns[5].name, "dateTime");
  sl_arena a;
  sl_arena_init(&a, 0);
  assert_string_equal(sl_type_name(&a, bid->columns[5].type),
                      "TIMESTAMP(3) *ROWTIME*");
  assert_string_equal(sl_type_name(&a, bid->columns[3].type), "STRING");
  sl_arena_free(&a);
  assert_true(strncmp(bid->view_sql, "SELECT bid.auction", 18) == 0);
  /* the line of the view body in the script it was created from */
  int line = 1;
  for (const char *p = NEXMARK_DDL; p < strstr(NEXMARK_DDL, "SELECT bid."); p++)
    line += *p == '\n';
  assert_int_equal(bid->view_first_line, line);
  assert_true(strncmp(bid->create_sql, "CREATE VIEW bid AS", 18) == 0);
}

static void test_simple_queries(void **state) {
  (void)state;
  /* q0 */
  expect_schema("SELECT auction, bidder, price, dateTime, extra FROM bid",
                "auction BIGINT, bidder BIGINT, price BIGINT, dateTime "
                "TIMESTAMP(3) *ROWTIME*, extra STRING");
  /* q1: DECIMAL(4, 3) * BIGINT = DECIMAL(23, 3) */
  expect_schema("SELECT auction, bidder, 0.908 * price as price, dateTime, "
                "extra FROM bid",
                "auction BIGINT, bidder BIGINT, price DECIMAL(23, 3), dateTime "
                "TIMESTAMP(3) *ROWTIME*, extra STRING");
  /* q2 */
  expect_schema("SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0",
                "auction BIGINT, price BIGINT");
  /* q3 */
  expect_schema("SELECT P.name, P.city, P.state, A.id FROM auction AS A "
                "INNER JOIN person AS P on A.seller = P.id WHERE A.category "
                "= 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = "
                "'CA')",
                "name STRING, city STRING, state STRING, id BIGINT");
  /* q10-style formatting, derived names EXPR$n */
  expect_schema("SELECT auction, DATE_FORMAT(dateTime, 'yyyy-MM-dd'), "
                "DATE_FORMAT(dateTime, 'HH:mm') FROM bid",
                "auction BIGINT, EXPR$1 STRING, EXPR$2 STRING");
  /* field access into ROW columns, qualified and not */
  expect_schema("SELECT person.id, datagen.person.name, datagen.bid.price "
                "FROM datagen",
                "id BIGINT, name STRING, price BIGINT");
  expect_schema("SELECT D.bid.price, D.event_type FROM datagen D",
                "price BIGINT, event_type INT");
  /* literals: INT, BIGINT, DOUBLE, CHAR(n), DECIMAL, BOOLEAN are NOT NULL */
  expect_schema("SELECT 1, 2147483648, 1.5e3, 'abc', 0.908, TRUE, NULL",
                "EXPR$0 INT NOT NULL, EXPR$1 BIGINT NOT NULL, EXPR$2 DOUBLE "
                "NOT NULL, EXPR$3 CHAR(3) NOT NULL, EXPR$4 DECIMAL(4, 3) NOT "
                "NULL, EXPR$5 BOOLEAN NOT NULL, EXPR$6 NULL");
  /* timestamp - interval stays a timestamp, without the time attribute */
  expect_schema("SELECT dateTime - INTERVAL '1' MINUTE AS d FROM bid",
                "d TIMESTAMP(3)");
  /* duplicate output names are made unique as Calcite does */
  expect_schema("SELECT B.dateTime, A.dateTime, B.extra, A.extra FROM bid B "
                "JOIN auction A ON B.auction = A.id",
                "dateTime TIMESTAMP(3) *ROWTIME*, dateTime0 TIMESTAMP(3) "
                "*ROWTIME*, extra STRING, extra0 STRING");
  /* CASE common type, COALESCE, CAST keeps nullability */
  expect_schema("SELECT CASE WHEN price > 10 THEN 1 ELSE price END, "
                "COALESCE(channel, 'x'), CAST(price AS INT), CAST(1 AS "
                "DOUBLE) FROM bid",
                "EXPR$0 BIGINT, EXPR$1 STRING NOT NULL, EXPR$2 INT, EXPR$3 "
                "DOUBLE NOT NULL");
  /* VALUES and UNION */
  expect_schema("VALUES (1, 'a'), (2, 'bc')",
                "EXPR$0 INT NOT NULL, EXPR$1 VARCHAR(2) NOT NULL");
  expect_schema("SELECT auction FROM bid UNION ALL SELECT id FROM auction",
                "auction BIGINT");
  /* CTEs, ORDER BY, LIMIT */
  expect_schema("WITH x AS (SELECT auction, price FROM bid) SELECT auction, "
                "price FROM x WHERE price > 10 ORDER BY price DESC LIMIT 5",
                "auction BIGINT, price BIGINT");
  /* IN (subquery) and scalar subquery */
  expect_schema("SELECT auction, (SELECT MAX(price) FROM bid) AS m FROM bid "
                "WHERE auction IN (SELECT id FROM auction)",
                "auction BIGINT, m BIGINT");
}

static void test_aggregates(void **state) {
  (void)state;
  /* q4 */
  expect_schema("SELECT Q.category, AVG(Q.final) FROM (SELECT MAX(B.price) "
                "AS final, A.category FROM auction A, bid B WHERE A.id = "
                "B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires "
                "GROUP BY A.id, A.category) Q GROUP BY Q.category",
                "category BIGINT, EXPR$1 BIGINT");
  /* q15-style: COUNT is BIGINT NOT NULL, with FILTER and DISTINCT */
  expect_schema("SELECT DATE_FORMAT(dateTime, 'yyyy-MM-dd') as `day`, "
                "count(*) AS total_bids, count(*) filter (where price < "
                "10000) AS rank1_bids, count(distinct bidder) AS "
                "total_bidders FROM bid GROUP BY DATE_FORMAT(dateTime, "
                "'yyyy-MM-dd')",
                "day STRING, total_bids BIGINT NOT NULL, rank1_bids BIGINT "
                "NOT NULL, total_bidders BIGINT NOT NULL");
  /* q17: SUM/AVG of BIGINT are BIGINT; AVG of DECIMAL is DECIMAL(38, 6) */
  expect_schema("SELECT auction, min(price), max(price), avg(price), "
                "sum(price), avg(0.5 * price) FROM bid GROUP BY auction",
                "auction BIGINT, EXPR$1 BIGINT, EXPR$2 BIGINT, EXPR$3 BIGINT, "
                "EXPR$4 BIGINT, EXPR$5 DECIMAL(38, 6)");
  /* after a regular GROUP BY the rowtime attribute is lost */
  expect_schema("SELECT dateTime, COUNT(*) AS n FROM bid GROUP BY dateTime",
                "dateTime TIMESTAMP(3), n BIGINT NOT NULL");

  tbound t;
  assert_int_equal(tbind(&t, cat,
                         "SELECT COUNT(*), COUNT(*) FILTER (WHERE price > 1), "
                         "COUNT(DISTINCT bidder), SUM(price), MIN(price), "
                         "AVG(price), COUNT(*) FROM bid"),
                   SL_OK);
  const sl_bselect *s = t.bs->query->select;
  assert_true(s->aggregate);
  assert_int_equal(s->naggs, 6); /* the second COUNT(*) is shared */
  assert_int_equal(s->aggs[0].state, SL_AGG_STATE_COUNTER);
  assert_true(s->aggs[0].star);
  assert_non_null(s->aggs[1].filter);
  assert_true(s->aggs[2].distinct);
  assert_int_equal(s->aggs[2].state, SL_AGG_STATE_GSET);
  assert_int_equal(s->aggs[4].state, SL_AGG_STATE_SEMILATTICE);
  assert_int_equal(s->aggs[5].state, SL_AGG_STATE_SUM_COUNT);
  assert_int_equal(s->exprs[6]->kind, SL_BEXPR_AGG_REF);
  assert_int_equal(s->exprs[6]->index, 0);
  tbound_done(&t);
}

static void test_windows(void **state) {
  (void)state;
  /* window TVF output columns; the descriptor column loses its attribute */
  expect_schema("SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), "
                "INTERVAL '10' SECOND))",
                "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, "
                "url STRING, dateTime TIMESTAMP(3), extra STRING, "
                "window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) "
                "NOT NULL, window_time TIMESTAMP(3) NOT NULL *ROWTIME*");
  /* a PROCTIME() column makes a processing-time window */
  expect_schema("SELECT window_time FROM TABLE(TUMBLE(TABLE pt, "
                "DESCRIPTOR(pt), INTERVAL '10' SECOND))",
                "window_time TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*");
  /* q5 (inner block) and q7: window aggregates keep window_time */
  expect_schema("SELECT auction, count(*) AS num, window_start AS starttime, "
                "window_end AS endtime, window_time FROM TABLE(HOP(TABLE bid, "
                "DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' "
                "SECOND)) GROUP BY auction, window_start, window_end, "
                "window_time",
                "auction BIGINT, num BIGINT NOT NULL, starttime TIMESTAMP(3) "
                "NOT NULL, endtime TIMESTAMP(3) NOT NULL, window_time "
                "TIMESTAMP(3) NOT NULL *ROWTIME*");
  /* q11: legacy session group window */
  expect_schema("SELECT B.bidder, count(*) as bid_count, "
                "SESSION_START(B.dateTime, INTERVAL '10' SECOND) as "
                "starttime, SESSION_END(B.dateTime, INTERVAL '10' SECOND) as "
                "endtime FROM bid B GROUP BY B.bidder, SESSION(B.dateTime, "
                "INTERVAL '10' SECOND)",
                "bidder BIGINT, bid_count BIGINT NOT NULL, starttime "
                "TIMESTAMP(3) NOT NULL, endtime TIMESTAMP(3) NOT NULL");
  expect_schema("SELECT TUMBLE_ROWTIME(dateTime, INTERVAL '10' SECOND) AS rt, "
                "COUNT(*) AS n FROM bid GROUP BY TUMBLE(dateTime, INTERVAL "
                "'10' SECOND)",
                "rt TIMESTAMP(3) NOT NULL *ROWTIME*, n BIGINT NOT NULL");
  /* q19: ROW_NUMBER */
  expect_schema("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
                "auction ORDER BY price DESC) AS rank_number FROM bid) WHERE "
                "rank_number <= 10",
                "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, "
                "url STRING, dateTime TIMESTAMP(3) *ROWTIME*, extra STRING, "
                "rank_number BIGINT NOT NULL");
  /* q13: lookup join on a proctime attribute */
  expect_schema("SELECT B.auction, S.`value` FROM (SELECT *, PROCTIME() as "
                "p_time FROM bid) B JOIN side_input FOR SYSTEM_TIME AS OF "
                "B.p_time AS S ON mod(B.auction, 10000) = S.key",
                "auction BIGINT, value STRING");

  tbound t;
  assert_int_equal(tbind(&t, cat,
                         "SELECT window_start, COUNT(*) FROM TABLE(HOP(TABLE "
                         "bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, "
                         "INTERVAL '10' SECOND)) GROUP BY window_start, "
                         "window_end"),
                   SL_OK);
  const sl_bselect *s = t.bs->query->select;
  assert_true(s->window_aggregate);
  assert_int_equal(s->from->kind, SL_BFROM_WINDOW_TVF);
  assert_int_equal(s->from->u.tvf.window.kind, SL_WINDOW_HOP);
  assert_int_equal(s->from->u.tvf.window.size_ms, 10000);
  assert_int_equal(s->from->u.tvf.window.slide_ms, 2000);
  assert_int_equal(s->from->u.tvf.window.time_column, 5);
  assert_int_equal(s->from->u.tvf.window.time_attr, SL_TIME_ROWTIME);
  assert_int_equal(s->from->u.tvf.input->kind, SL_BFROM_VIEW);
  tbound_done(&t);

  assert_int_equal(tbind(&t, cat,
                         "SELECT bidder, SESSION_END(dateTime, INTERVAL '10' "
                         "SECOND) FROM bid GROUP BY bidder, SESSION(dateTime, "
                         "INTERVAL '10' SECOND)"),
                   SL_OK);
  s = t.bs->query->select;
  assert_non_null(s->group_window);
  assert_int_equal(s->group_window->kind, SL_WINDOW_SESSION);
  assert_int_equal(s->group_window->gap_ms, 10000);
  assert_int_equal(s->ngroups, 1);
  assert_int_equal(s->exprs[0]->kind, SL_BEXPR_GROUP_REF);
  assert_int_equal(s->exprs[1]->kind, SL_BEXPR_WINDOW_PROP);
  assert_int_equal(s->exprs[1]->prop, SL_WPROP_END);
  tbound_done(&t);
}

static void test_statements(void **state) {
  (void)state;
  tbound t;
  /* INSERT: target columns, computed columns excluded */
  assert_int_equal(tbind(&t, cat,
                         "INSERT INTO sink SELECT price, channel "
                         "FROM bid"),
                   SL_OK);
  assert_string_equal(t.bs->table->name, "sink");
  assert_int_equal(t.bs->insert_columns[0], 0);
  assert_int_equal(t.bs->insert_columns[1], 1);
  tbound_done(&t);
  assert_int_equal(tbind(&t, cat,
                         "INSERT INTO sink (b, a) SELECT channel, "
                         "price FROM bid"),
                   SL_OK);
  assert_int_equal(t.bs->insert_columns[0], 1);
  assert_int_equal(t.bs->insert_columns[1], 0);
  tbound_done(&t);
  /* CREATE ... IF NOT EXISTS of an existing name: nothing to add */
  assert_int_equal(tbind(&t, cat,
                         "CREATE TABLE IF NOT EXISTS t (a INT) WITH "
                         "('connector' = 'datagen')"),
                   SL_OK);
  assert_null(t.bs->new_table);
  tbound_done(&t);
  /* a view inherits the rowtime attribute through its column types */
  assert_int_equal(tbind(&t, cat,
                         "CREATE VIEW v2 (a, ts) AS SELECT auction, "
                         "dateTime FROM bid"),
                   SL_OK);
  assert_non_null(t.bs->new_table);
  assert_int_equal(t.bs->new_table->kind, SL_TABLE_VIEW);
  assert_string_equal(t.bs->new_table->columns[1].name, "ts");
  assert_int_equal(t.bs->new_table->columns[1].type->time_attr,
                   SL_TIME_ROWTIME);
  assert_string_equal(t.bs->new_table->view_sql,
                      "SELECT auction, dateTime FROM bid");
  tbound_done(&t); /* frees the unused new_table */
  /* DESCRIBE resolves case-insensitively */
  assert_int_equal(tbind(&t, cat, "DESCRIBE BID"), SL_OK);
  assert_string_equal(t.bs->table->name, "bid");
  tbound_done(&t);
  /* EXPLAIN binds its statement */
  assert_int_equal(tbind(&t, cat, "EXPLAIN SELECT auction FROM bid"), SL_OK);
  assert_non_null(t.bs->inner);
  assert_int_equal(t.bs->inner->kind, SL_STMT_QUERY);
  tbound_done(&t);
}

/* Each error's code and the position it points at (line, column); the
 * messages are checked in tests/sql/errors/binder.test, under every
 * configuration. */
static void test_error_positions(void **state) {
  (void)state;
  expect_error("SELECT * FROM bidd", SL_EBIND, 1, 15);
  expect_error("SELECT pricee FROM bid", SL_EBIND, 1, 8);
  expect_error("SELECT B.pricee FROM bid B", SL_EBIND, 1, 10);
  expect_error("SELECT x.pricee FROM (SELECT price FROM bid) x", SL_EBIND, 1,
               10);
  expect_error("SELECT dateTime FROM bid B JOIN auction A ON B.auction = A.id",
               SL_EBIND, 1, 8);
  expect_error("SELECT * FROM bid B WHERE B.channel = 5", SL_EBIND, 1, 27);
  expect_error("SELECT * FROM bid WHERE price", SL_EBIND, 1, 25);
  expect_error("SELECT bidder, COUNT(*) FROM bid GROUP BY auction", SL_EBIND, 1,
               8);
  expect_error("SELECT * FROM bid WHERE COUNT(*) > 1", SL_EBIND, 1, 25);
  expect_error("SELECT SUM(MAX(price)) FROM bid", SL_EBIND, 1, 12);
  expect_error("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(x), INTERVAL "
               "'10' SECOND))",
               SL_EBIND, 1, 48);
  expect_error("SELECT COUNT(*) FROM t GROUP BY TUMBLE(x, INTERVAL '1' "
               "MINUTE)",
               SL_EBIND, 1, 40);
  expect_error("SELECT MODD(price, 2) FROM bid", SL_EBIND, 1, 8);
  expect_error("SELECT MOD(price) FROM bid", SL_EBIND, 1, 8);
  expect_error("INSERT INTO sink SELECT auction, bidder, price FROM bid",
               SL_EBIND, 1, 18);
  expect_error("INSERT INTO sink SELECT channel, price FROM bid", SL_EBIND, 1,
               25);
  expect_error("CREATE TABLE d (a INT, a BIGINT) WITH ('connector' = "
               "'datagen')",
               SL_EBIND, 1, 24);
  expect_error("CREATE TABLE w (a INT, WATERMARK FOR b AS b) WITH "
               "('connector' = 'datagen')",
               SL_EBIND, 1, 38);
  expect_error("CREATE TABLE w (a INT, WATERMARK FOR a AS a) WITH "
               "('connector' = 'datagen')",
               SL_EBIND, 1, 38);
  expect_error("CREATE TABLE nc (a INT)", SL_EBIND, 1, 14);
  expect_error("CREATE TABLE t (a INT) WITH ('connector' = 'datagen')",
               SL_ECATALOG, 1, 14);
  expect_error("CREATE VIEW v (a, b) AS SELECT auction FROM bid", SL_EBIND, 1,
               13);
  expect_error("DESCRIBE bidd", SL_ECATALOG, 1, 10);
  expect_error("DROP TABLE bid", SL_ECATALOG, 1, 12);
  expect_error("CREATE FUNCTION count_char AS "
               "'com.github.nexmark.flink.udf.CountChar'",
               SL_EUNSUPPORTED, 1, 1);
  expect_error("SELECT 99999999999999999999", SL_EBIND, 1, 8);
  expect_error("SELECT CAST(price AS TIMESTAMP(3)) FROM bid", SL_EBIND, 1, 8);
  expect_error("SELECT TUMBLE_START(dateTime, INTERVAL '5' SECOND), COUNT(*) "
               "FROM bid GROUP BY TUMBLE(dateTime, INTERVAL '10' SECOND)",
               SL_EBIND, 1, 8);
  expect_error("SELECT TUMBLE_START(dateTime, INTERVAL '5' SECOND) FROM bid",
               SL_EBIND, 1, 8);
  expect_error("SELECT ROW_NUMBER() FROM bid", SL_EBIND, 1, 8);
  expect_error("SELECT * FROM bid WHERE ROW_NUMBER() OVER (ORDER BY price) = "
               "1",
               SL_EBIND, 1, 25);
  expect_error("SELECT CASE WHEN price > 1 THEN 1 ELSE 'x' END FROM bid",
               SL_EBIND, 1, 8);
  expect_error("SELECT * FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), "
               "INTERVAL '3' SECOND, INTERVAL '10' SECOND))",
               SL_EBIND, 1, 15);
  expect_error("SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(price), "
               "INTERVAL '10' SECOND))",
               SL_EBIND, 1, 50);
  expect_error("SELECT bid.pricee FROM datagen", SL_EBIND, 1, 12);
  expect_error("SELECT Bx.price FROM bid B", SL_EBIND, 1, 8);
  expect_error("SELECT upper(price) FROM bid", SL_EBIND, 1, 14);
  expect_error("SELECT * FROM bid WHERE channel LIKE 5", SL_EBIND, 1, 38);
  /* errors inside a view's stored text point at the view reference */
  sl_catalog *saved = cat;
  cat = sl_catalog_new();
  sl_error err = {0};
  assert_int_equal(trun_script(cat,
                               "CREATE TABLE base (y BIGINT) WITH "
                               "('connector' = 'datagen');\n"
                               "CREATE VIEW v1 AS SELECT y FROM base;\n",
                               &err),
                   SL_OK);
  assert_true(sl_catalog_drop(cat, "base"));
  expect_error("SELECT *\nFROM   v1", SL_EBIND, 2, 8);
  sl_error_clear(&err);
  sl_catalog_free(cat);
  cat = saved;
}

/* Every .sql file under examples/nexmark binds (CREATE FUNCTION aside). */
static void test_example_files(void **state) {
  (void)state;
  const char *root = getenv("SLUICE_SOURCE_DIR");
  if (!root)
    skip();
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/examples/nexmark", root);
  DIR *d = opendir(dir);
  if (!d)
    skip(); /* not written yet */
  char *ddl = NULL;
  char path[8192];
  snprintf(path, sizeof path, "%s/ddl.sql", dir);
  ddl = tread_file(path);
  struct dirent *de;
  int files = 0;
  while ((de = readdir(d)) != NULL) {
    size_t n = strlen(de->d_name);
    if (n < 5 || strcmp(de->d_name + n - 4, ".sql") != 0 ||
        strcmp(de->d_name, "ddl.sql") == 0)
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    char *sql = tread_file(path);
    assert_non_null(sql);
    sl_catalog *c = sl_catalog_new();
    sl_error err = {0};
    int rc = ddl ? trun_script(c, ddl, &err) : SL_OK;
    if (rc == SL_OK && !strstr(sql, "CREATE FUNCTION"))
      rc = trun_script(c, sql, &err);
    if (rc)
      fail_msg("%s: line %d: %s", de->d_name, err.line, err.message);
    sl_error_clear(&err);
    sl_catalog_free(c);
    free(sql);
    files++;
  }
  closedir(d);
  free(ddl);
  assert_true(files > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nexmark_catalog),
      cmocka_unit_test(test_simple_queries),
      cmocka_unit_test(test_aggregates),
      cmocka_unit_test(test_windows),
      cmocka_unit_test(test_statements),
      cmocka_unit_test(test_error_positions),
      cmocka_unit_test(test_example_files),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
