/* test_grammar.c - unit tests of the SQL grammar (parser/grammar.y) and the
 * parse driver: statement dumps of representative statements, operator
 * precedence, error messages and positions, node spans, the keyword
 * fallback policy, and the NEXMark example files.  Round trips, fuzzing
 * and deep nesting are in test_grammar_robust.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parser/parse_int.h"
#include "sluice/common/strbuf.h"
#include "sluice/parser/parser.h"

/* Parse sql and return the dumps of its statements, one per line, in a
 * heap string; on error return NULL and leave the error in *err. */
static char *dump_sql(const char *sql, int first_line, sl_error *err) {
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_list *stmts = NULL;
  char *out = NULL;
  if (sl_parse(&a, sql, strlen(sql), first_line, &stmts, err) == SL_OK) {
    sl_strbuf b = SL_STRBUF_INIT;
    for (int i = 0; i < stmts->n; i++) {
      if (i)
        sl_strbuf_appendc(&b, '\n');
      sl_stmt_dump(&b, SL_LIST_AT(stmts, i));
    }
    out = strdup(sl_strbuf_cstr(&b));
    sl_strbuf_free(&b);
  }
  sl_arena_free(&a);
  return out;
}

static void expect_dump(const char *sql, const char *want) {
  sl_error err = {0};
  char *got = dump_sql(sql, 1, &err);
  if (!got)
    fail_msg("parse failed: %s\n  sql: %s", err.message, sql);
  if (strcmp(got, want) != 0)
    fail_msg("dump mismatch\n  sql:  %s\n  got:  %s\n  want: %s", sql, got,
             want);
  free(got);
  sl_error_clear(&err);
}

static const struct {
  const char *sql;
  const char *dump;
} golden[] = {
    {"SELECT a, b + 1 AS c FROM t WHERE x > 1 AND y LIKE 'a%' GROUP BY a "
     "HAVING count(*) > 2 ORDER BY a DESC LIMIT 10",
     "(query (select (items a (as (+ b 1) c)) (from (table t)) (where (AND (> "
     "x 1) (like y 'a%'))) (group-by a) (having (> (call count *) 2))) "
     "(order-by (desc a)) (limit 10))"},
    {"SELECT DISTINCT key, hour, name, window_start, date, `time`, t.`select` "
     "FROM t",
     "(query (select distinct (items key hour name window_start date time "
     "t.select) (from (table t))))"},
    {"SELECT t.*, LEFT(s, 2), RIGHT(s, 1), HOUR(ts), YEAR(d), TIMESTAMP "
     "'2020-01-01 00:00:00', DATE '2020-01-01', TIME '12:00:00'",
     "(query (select (items t.* (call LEFT s 2) (call RIGHT s 1) (call HOUR "
     "ts) (call YEAR d) (timestamp '2020-01-01 00:00:00') (date '2020-01-01') "
     "(time '12:00:00'))))"},
    {"SELECT INTERVAL '10' SECOND, INTERVAL '1' MINUTE, INTERVAL '2' HOUR, "
     "INTERVAL '1' DAY, INTERVAL '5' SECOND(3), INTERVAL '1:30' MINUTE TO "
     "SECOND, INTERVAL '1' YEAR, INTERVAL '3' MONTH, INTERVAL -'5' SECOND",
     "(query (select (items (interval '10' SECOND) (interval '1' MINUTE) "
     "(interval '2' HOUR) (interval '1' DAY) (interval '5' SECOND(3)) "
     "(interval '1:30' MINUTE TO SECOND) (interval '1' YEAR) (interval '3' "
     "MONTH) (interval -'5' SECOND))))"},
    {"SELECT 1, 1.5, .5, 5., 1e3, 'it''s', TRUE, FALSE, NULL, -1",
     "(query (select (items 1 1.5 .5 5. 1e3 'it''s' true false null (- 1))))"},
    {"SELECT a OR b AND NOT c = d + e * -f || g",
     "(query (select (items (OR a (AND b (not (= c (|| (+ d (* e (- f))) "
     "g))))))))"},
    {"SELECT (a OR b) AND c, a * (b + c), a - b - c, a - (b - c), NOT NOT a",
     "(query (select (items (AND (OR a b) c) (* a (+ b c)) (- (- a b) c) (- a "
     "(- b c)) (not (not a)))))"},
    {"SELECT a BETWEEN 1 AND 2 AND c, x NOT BETWEEN SYMMETRIC y AND z, a NOT "
     "LIKE 'x' ESCAPE '!', a SIMILAR TO 'b', a NOT SIMILAR TO 'c'",
     "(query (select (items (AND (between a 1 2) c) (not-between-symmetric x y "
     "z) (not-like a 'x' (escape '!')) (similar a 'b') (not-similar a 'c'))))"},
    {"SELECT a IS NULL, a IS NOT NULL, a IS TRUE, a IS NOT FALSE, a IS "
     "UNKNOWN, a IN (1, 2), a NOT IN (3)",
     "(query (select (items (is-null a) (is-not-null a) (is-true a) "
     "(is-not-false a) (is-unknown a) (in a 1 2) (not-in a 3))))"},
    {"SELECT CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END, CASE x WHEN 1 THEN "
     "'a' END, CAST(a AS DECIMAL(10, 2)), TRY_CAST(b AS BIGINT)",
     "(query (select (items (case (when a 1) (when b 2) (else 3)) (case "
     "(operand x) (when 1 'a')) (cast a DECIMAL(10, 2)) (try-cast b "
     "BIGINT))))"},
    {"SELECT CAST(a AS ROW<a INT NOT NULL, b ROW(c VARCHAR(3))>), CAST(b AS "
     "TIMESTAMP(3)), CAST(c AS TIMESTAMP WITH LOCAL TIME ZONE), CAST(d AS "
     "DOUBLE PRECISION), CAST(e AS NUMERIC)",
     "(query (select (items (cast a ROW<`a` INT NOT NULL, `b` ROW<`c` "
     "VARCHAR(3)>>) (cast b TIMESTAMP(3)) (cast c TIMESTAMP_LTZ(6)) (cast d "
     "DOUBLE) (cast e DECIMAL(10, 0)))))"},
    {"SELECT SUBSTRING(s FROM 1 FOR 2), SUBSTRING(s, 1), EXTRACT(YEAR FROM "
     "ts), TRIM(LEADING 'x' FROM s), TRIM(BOTH FROM s), TRIM(s), POSITION('a' "
     "IN s)",
     "(query (select (items (call SUBSTRING s 1 2) (call SUBSTRING s 1) (call "
     "EXTRACT (unit YEAR) ts) (call TRIM (trim LEADING) s 'x') (call TRIM s) "
     "(call TRIM s) (call POSITION 'a' s))))"},
    {"SELECT CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_DATE, PROCTIME(), "
     "MOD(a, 2), TUMBLE_START(ts, INTERVAL '1' MINUTE)",
     "(query (select (items (call CURRENT_TIMESTAMP) (call LOCALTIMESTAMP) "
     "(call CURRENT_DATE) (call PROCTIME) (call MOD a 2) (call TUMBLE_START ts "
     "(interval '1' MINUTE)))))"},
    {"SELECT count(*), count(DISTINCT x) FILTER (WHERE y > 1), sum(a) OVER "
     "(PARTITION BY b, c ORDER BY d DESC NULLS LAST, e NULLS FIRST), f(x).a, "
     "(a).b, g()",
     "(query (select (items (call count *) (call count distinct x (filter (> y "
     "1))) (call sum a (over (partition-by b c) (order-by (desc d nulls-last) "
     "(asc e nulls-first)))) (field (call f x) a) (field a b) (call g))))"},
    {"SELECT (SELECT max(x) FROM u), EXISTS (SELECT 1), x IN (SELECT y FROM "
     "v), x NOT IN (SELECT y FROM v)",
     "(query (select (items (subquery (query (select (items (call max x)) "
     "(from (table u))))) (exists (query (select (items 1)))) (in-subquery x "
     "(query (select (items y) (from (table v))))) (not-in-subquery x (query "
     "(select (items y) (from (table v))))))))"},
    {"SELECT * FROM a LEFT JOIN b ON a.x = b.y RIGHT OUTER JOIN c USING (k, l) "
     "FULL JOIN d ON TRUE CROSS JOIN e NATURAL JOIN f INNER JOIN g ON 1 = 1",
     "(query (select (items *) (from (join-inner (natural-join-inner "
     "(join-cross (join-full (join-right (join-left (table a) (table b) (on (= "
     "a.x b.y))) (table c) (using k l)) (table d) (on true)) (table e)) (table "
     "f)) (table g) (on (= 1 1))))))"},
    {"SELECT * FROM (a JOIN b ON x) LEFT JOIN (c CROSS JOIN d) ON y, cat.db.t "
     "AS z (p, q)",
     "(query (select (items *) (from (comma (join-left (join-inner (table a) "
     "(table b) (on x)) (join-cross (table c) (table d)) (on y)) (table "
     "cat.db.t (as z p q))))))"},
    {"SELECT a FROM (SELECT 1 AS a) JOIN (SELECT 2) AS q ON TRUE",
     "(query (select (items a) (from (join-inner (subquery (query (select "
     "(items (as 1 a))))) (subquery (query (select (items 2))) (as q)) (on "
     "true)))))"},
    {"SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.proctime AS r2 ON o.k = "
     "r2.k, LATERAL TABLE(split(s)) AS T(w), LATERAL (SELECT 1) x",
     "(query (select (items *) (from (comma (comma (join-inner (table o) "
     "(table r (system-time o.proctime) (as r2)) (on (= o.k r2.k))) (tvf split "
     "s (as T w))) (lateral-subquery (query (select (items 1))) (as x))))))"},
    {"SELECT window_start, count(*) FROM TABLE(TUMBLE(TABLE Bid, "
     "DESCRIPTOR(dateTime), INTERVAL '10' MINUTES)) GROUP BY window_start, "
     "window_end",
     "(query (select (items window_start (call count *)) (from (tvf TUMBLE "
     "(table Bid) (descriptor dateTime) (interval '10' MINUTE))) (group-by "
     "window_start window_end)))"},
    {"SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY bidder, item, "
     "DESCRIPTOR(dateTime), INTERVAL '10' SECOND))",
     "(query (select (items *) (from (tvf SESSION (table Bid (partition-by "
     "bidder item)) (descriptor dateTime) (interval '10' SECOND)))))"},
    {"SELECT * FROM TABLE(CUMULATE(TABLE Bid PARTITION BY (a, b), "
     "DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '1' HOUR)) AS w",
     "(query (select (items *) (from (tvf CUMULATE (table Bid (partition-by a "
     "b)) (descriptor ts) (interval '1' MINUTE) (interval '1' HOUR) (as "
     "w)))))"},
    {"SELECT * FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => "
     "DESCRIPTOR(dateTime), SLIDE => INTERVAL '5' SECOND, SIZE => INTERVAL "
     "'10' SECOND))",
     "(query (select (items *) (from (tvf HOP (=> DATA (table Bid)) (=> "
     "TIMECOL (descriptor dateTime)) (=> SLIDE (interval '5' SECOND)) (=> SIZE "
     "(interval '10' SECOND))))))"},
    {"(SELECT 1) UNION ALL (SELECT 2 ORDER BY 1 LIMIT 1) INTERSECT SELECT 3 "
     "EXCEPT VALUES (1), (2)",
     "(query (except (union-all (select (items 1)) (intersect (query (select "
     "(items 2)) (order-by (asc 1)) (limit 1)) (select (items 3)))) (values "
     "(row 1) (row 2))))"},
    {"SELECT 1 UNION SELECT 2 INTERSECT SELECT 3",
     "(query (union (select (items 1)) (intersect (select (items 2)) (select "
     "(items 3)))))"},
    {"WITH a AS (SELECT 1), b (x) AS (SELECT 2) SELECT * FROM a, b LIMIT 1 "
     "OFFSET 2",
     "(query (with (cte a (query (select (items 1)))) (cte b (columns x) "
     "(query (select (items 2))))) (select (items *) (from (comma (table a) "
     "(table b)))) (limit 1) (offset 2))"},
    {"SELECT 1 FROM t OFFSET 2 ROWS FETCH FIRST 3 ROWS ONLY",
     "(query (select (items 1) (from (table t))) (limit 3) (offset 2))"},
    {"INSERT INTO cat.db.sink SELECT * FROM src",
     "(insert cat.db.sink (query (select (items *) (from (table src)))))"},
    {"INSERT OVERWRITE t (a, b) VALUES (1, 2)",
     "(insert t overwrite (columns a b) (query (values (row 1 2))))"},
    {"INSERT INTO t (SELECT 1)", "(insert t (query (select (items 1))))"},
    {"CREATE TEMPORARY TABLE IF NOT EXISTS c.d.t (id BIGINT NOT NULL COMMENT "
     "'the id', ts TIMESTAMP(3) WITH LOCAL TIME ZONE, t2 TIMESTAMP_LTZ(3), d "
     "DOUBLE PRECISION, c CHAR(5), v VARCHAR, v2 VARCHAR(10), s STRING, dt "
     "DATE, tm TIME(3) WITHOUT TIME ZONE, b BOOLEAN, ti TINYINT, si SMALLINT, "
     "i INTEGER, f FLOAT, r REAL, x AS id + 1 COMMENT 'c', WATERMARK FOR ts AS "
     "ts - INTERVAL '5' SECOND, CONSTRAINT pk PRIMARY KEY (id, c) NOT "
     "ENFORCED) COMMENT 'tbl' PARTITIONED BY (dt) WITH ('connector' = 'x', "
     "'a.b' = 'it''s')",
     "(create-table c.d.t temporary if-not-exists (columns (column id BIGINT "
     "NOT NULL (comment 'the id')) (column ts TIMESTAMP_LTZ(3)) (column t2 "
     "TIMESTAMP_LTZ(3)) (column d DOUBLE) (column c CHAR(5)) (column v STRING) "
     "(column v2 VARCHAR(10)) (column s STRING) (column dt DATE) (column tm "
     "TIME(3)) (column b BOOLEAN) (column ti TINYINT) (column si SMALLINT) "
     "(column i INT) (column f FLOAT) (column r FLOAT) (computed x (+ id 1) "
     "(comment 'c'))) (watermark ts (- ts (interval '5' SECOND))) (primary-key "
     "id c) (comment 'tbl') (partitioned-by dt) (with ('connector' 'x') ('a.b' "
     "'it''s')))"},
    {"CREATE TABLE t (id INT PRIMARY KEY NOT ENFORCED, r ROW<a INT, b ROW<c "
     "STRING>> NOT NULL)",
     "(create-table t (columns (column id INT primary-key) (column r ROW<`a` "
     "INT, `b` ROW<`c` STRING>> NOT NULL)) (primary-key id))"},
    {"CREATE VIEW v (a, b) AS SELECT 1, 2",
     "(create-view v (columns a b) (query (select (items 1 2))))"},
    {"CREATE TEMPORARY VIEW IF NOT EXISTS w AS (SELECT 1) ORDER BY 1",
     "(create-view w temporary if-not-exists (query (select (items 1)) "
     "(order-by (asc 1))))"},
    {"CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS f AS 'com.x.F' LANGUAGE "
     "java",
     "(create-function f temporary if-not-exists 'com.x.F' (language JAVA))"},
    {"CREATE FUNCTION g AS 'a.b'", "(create-function g 'a.b')"},
    {"DROP TEMPORARY TABLE IF EXISTS a.b",
     "(drop-table a.b temporary if-exists)"},
    {"DROP VIEW v", "(drop-view v)"},
    {"DROP TEMPORARY SYSTEM FUNCTION IF EXISTS f",
     "(drop-function f temporary if-exists)"},
    {"SHOW TABLES", "(show-tables)"},
    {"SHOW VIEWS", "(show-views)"},
    {"SHOW FUNCTIONS", "(show-functions)"},
    {"SHOW CREATE TABLE t", "(show-create-table t)"},
    {"SHOW CREATE VIEW v", "(show-create-view v)"},
    {"DESCRIBE t", "(describe t)"},
    {"DESC x.y", "(describe x.y)"},
    {"SET", "(set)"},
    {"SET 'a.b' = 'c'", "(set 'a.b' 'c')"},
    {"SET parallelism.default = 4", "(set 'parallelism.default' '4')"},
    {"SET table.exec.state.ttl = 1h", "(set 'table.exec.state.ttl' '1h')"},
    {"SET sluice.late-records = drop", "(set 'sluice.late-records' 'drop')"},
    {"RESET", "(reset)"},
    {"RESET 'x'", "(reset 'x')"},
    {"RESET sluice.jit", "(reset 'sluice.jit')"},
    {"EXPLAIN SELECT 1", "(explain (query (select (items 1))))"},
    {"EXPLAIN ANALYZE (FORMAT JSON) INSERT INTO t SELECT 1",
     "(explain analyze json (insert t (query (select (items 1)))))"},
    {"EXPLAIN PLAN FOR SELECT 1", "(explain (query (select (items 1))))"},
    {"EXPLAIN (FORMAT TEXT) (SELECT 1)",
     "(explain (query (select (items 1))))"},
};

static void test_golden_dumps(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++)
    expect_dump(golden[i].sql, golden[i].dump);
}

/* Each case is "expr" and the expected dump of `SELECT expr`'s item. */
static void test_precedence(void **state) {
  (void)state;
  static const struct {
    const char *expr, *dump;
  } cases[] = {
      {"1 + 2 * 3", "(+ 1 (* 2 3))"},
      {"(1 + 2) * 3", "(* (+ 1 2) 3)"},
      {"1 - 2 - 3", "(- (- 1 2) 3)"},
      {"a || b + c", "(+ (|| a b) c)"},
      {"a OR b AND c", "(OR a (AND b c))"},
      {"a AND b OR c", "(OR (AND a b) c)"},
      {"NOT a AND b", "(AND (not a) b)"},
      {"NOT a = b", "(not (= a b))"},
      {"a = b AND c <> d", "(AND (= a b) (<> c d))"},
      {"a + 1 > b * 2", "(> (+ a 1) (* b 2))"},
      {"-a * b", "(* (- a) b)"},
      {"- a - b", "(- (- a) b)"},
      {"a % b / c", "(/ (% a b) c)"},
      {"a BETWEEN b + 1 AND c AND d", "(AND (between a (+ b 1) c) d)"},
      {"a IS NULL OR b", "(OR (is-null a) b)"},
      {"a LIKE b AND c", "(AND (like a b) c)"},
      {"x AND a NOT LIKE b", "(AND x (not-like a b))"},
      {"NOT a IN (1)", "(not (in a 1))"},
      {"a + b IN (1, 2)", "(in (+ a b) 1 2)"},
      {"NOT NOT a", "(not (not a))"},
      {"p.id = a.seller", "(= p.id a.seller)"},
      {"dateTime - INTERVAL '4' SECOND", "(- dateTime (interval '4' SECOND))"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char sql[256], want[512];
    snprintf(sql, sizeof(sql), "SELECT %s", cases[i].expr);
    snprintf(want, sizeof(want), "(query (select (items %s)))", cases[i].dump);
    expect_dump(sql, want);
  }
}

static void expect_error_at(const char *sql, int first_line,
                            const char *message, int line, int column,
                            int offset, int length) {
  sl_error err = {0};
  char *got = dump_sql(sql, first_line, &err);
  if (got)
    fail_msg("expected an error for: %s\n  got: %s", sql, got);
  assert_int_equal(err.code, SL_ESYNTAX);
  if (strcmp(err.message, message) != 0)
    fail_msg("sql: %s\n  message: %s\n  want:    %s", sql, err.message,
             message);
  if (err.line != line || err.column != column || err.offset != offset ||
      err.length != length)
    fail_msg("sql: %s\n  at %d:%d +%d len %d, want %d:%d +%d len %d", sql,
             err.line, err.column, err.offset, err.length, line, column, offset,
             length);
  sl_error_clear(&err);
}

static void test_errors(void **state) {
  (void)state;
  static const struct {
    const char *sql, *message;
    int line, column, offset, length;
  } cases[] = {
      {"SELECT * FROM t AS x GROUPP BY a", "syntax error near \"GROUPP\"", 1,
       22, 21, 6},
      {"SELECT a FROM", "syntax error: unexpected end of input", 1, 14, 13, 0},
      {"SELECT 1;\nSELECT * FRM t", "syntax error near \"FRM\"", 2, 10, 19, 3},
      {"SELECT\n  a,\n  b FROMM t", "syntax error near \"t\"", 3, 11, 22, 1},
      {"SELECT 'abc", "unterminated string literal", 1, 8, 7, 1},
      {"SELECT a FROM t WHERE x = 'oops\nmore", "unterminated string literal",
       1, 27, 26, 1},
      {"SELECT 1 /* x", "unterminated comment", 1, 10, 9, 2},
      {"SELECT `a", "unterminated quoted identifier", 1, 8, 7, 1},
      {"SELECT # FROM t", "unexpected character '#'", 1, 8, 7, 1},
      {"SELECT 12abc", "malformed number \"12abc\"", 1, 8, 7, 5},
      {"SELECT 1 [", "syntax error near \"[\"", 1, 10, 9, 1},
      {"CREATE TABLE t (a ARRAY<INT>)", "type ARRAY is not supported", 1, 19,
       18, 5},
      {"CREATE TABLE t (a MAP<INT, INT>)", "type MAP is not supported", 1, 19,
       18, 3},
      {"CREATE TABLE t (a INT, WATERMARK FOR a AS a, WATERMARK FOR a AS a)",
       "a table can have only one WATERMARK", 1, 46, 45, 20},
      {"CREATE TABLE t (a INT PRIMARY KEY NOT ENFORCED, PRIMARY KEY (a) NOT "
       "ENFORCED)",
       "a table can have only one PRIMARY KEY", 1, 49, 48, 28},
      {"EXPLAIN (FORMAT XML) SELECT 1",
       "unknown EXPLAIN format \"XML\" (expected TEXT or JSON)", 1, 17, 16, 3},
      {"CREATE FUNCTION g AS 'a.b' LANGUAGE cobol",
       "unknown function language \"cobol\" (expected JAVA, SCALA, PYTHON or "
       "SQL)",
       1, 37, 36, 5},
      {"CREATE TABLE t (a VARCHAR(99999999999))",
       "number 99999999999 is too large", 1, 27, 26, 11},
      {"SELECT (1", "syntax error: unexpected end of input", 1, 10, 9, 0},
      {"SELECT * FROM t;;; SELECT )", "syntax error near \")\"", 1, 27, 26, 1},
      {"SELECT 1 2", "syntax error near \"2\"", 1, 10, 9, 1},
      {"DROP TABLE", "syntax error: unexpected end of input", 1, 11, 10, 0},
      {"SELECT f(a,)", "syntax error near \")\"", 1, 12, 11, 1},
      {"CREATE TABLE t (a INT) WITH ('k' = 'v'",
       "syntax error: unexpected end of input", 1, 39, 38, 0},
      {"SELECT CAST(a AS FOO)", "syntax error near \"FOO\"", 1, 18, 17, 3},
      {"SHOW TABLE", "syntax error near \"TABLE\"", 1, 6, 5, 5},
      {"SET a = ;", "syntax error near \";\"", 1, 9, 8, 1},
      {"SELECT a FROM t WHERE a =  = 2", "syntax error near \"=\"", 1, 28, 27,
       1},
      {"SELECT a FROM t -- trailing comment\n  \n",
       "syntax error: unexpected end of input", 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    if (cases[i].line == 0)
      continue; /* checked below: valid SQL */
    expect_error_at(cases[i].sql, 1, cases[i].message, cases[i].line,
                    cases[i].column, cases[i].offset, cases[i].length);
  }
  /* Positions count from first_line; the offset stays relative. */
  expect_error_at("SELECT 1;\n  SELECT )", 10, "syntax error near \")\"", 11,
                  10, 19, 1);
  /* A long offending token is shortened in the message. */
  expect_error_at("SELECT 1 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'",
                  1,
                  "syntax error near "
                  "\"'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\"",
                  1, 10, 9, 50);
  expect_dump("SELECT a FROM t -- trailing comment\n  \n",
              "(query (select (items a) (from (table t))))");
}

static void test_parse_one(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_stmt *s = NULL;
  sl_error err = {0};
  assert_int_equal(sl_parse_one(&a, "SHOW TABLES;", 12, 1, &s, &err), SL_OK);
  assert_non_null(s);
  assert_int_equal(s->kind, SL_STMT_SHOW);
  assert_int_equal(sl_parse_one(&a, " -- nothing\n", 12, 1, &s, &err),
                   SL_ESYNTAX);
  assert_null(s);
  assert_string_equal(err.message, "syntax error: empty statement");
  assert_int_equal(sl_parse_one(&a, "SELECT 1; SELECT 2", 18, 1, &s, &err),
                   SL_ESYNTAX);
  assert_string_equal(err.message, "expected one statement, found 2");
  assert_int_equal(err.offset, 10);
  sl_error_clear(&err);
  /* sl_parse accepts empty input and appends to an existing list. */
  sl_list *stmts = NULL;
  assert_int_equal(sl_parse(&a, "", 0, 1, &stmts, &err), SL_OK);
  assert_non_null(stmts);
  assert_int_equal(stmts->n, 0);
  assert_int_equal(sl_parse(&a, ";; /* */ ;", 10, 1, &stmts, &err), SL_OK);
  assert_int_equal(stmts->n, 0);
  assert_int_equal(sl_parse(&a, "SET; RESET", 10, 1, &stmts, &err), SL_OK);
  assert_int_equal(sl_parse(&a, "SHOW VIEWS", 10, 1, &stmts, &err), SL_OK);
  assert_int_equal(stmts->n, 3);
  sl_arena_free(&a);
}

/* ---- spans ----------------------------------------------------------------
 */

static const char *span_text(const char *sql, sl_span s, char *buf, size_t n) {
  size_t len = (size_t)s.length < n - 1 ? (size_t)s.length : n - 1;
  memcpy(buf, sql + s.offset, len);
  buf[len] = '\0';
  return buf;
}

/* Line and column of every expression agree with its offset, and children
 * lie inside their parent. */
static void check_expr_spans(const char *sql, const sl_expr *e,
                             sl_span parent) {
  if (!e)
    return;
  sl_span s = e->span;
  assert_true(s.length > 0);
  assert_true(s.offset >= parent.offset);
  assert_true(s.offset + s.length <= parent.offset + parent.length);
  int line = 1, col = 1;
  for (int i = 0; i < s.offset; i++) {
    if (sql[i] == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  assert_int_equal(s.line, line);
  assert_int_equal(s.column, col);
  switch (e->kind) {
  case SL_EXPR_UNARY:
    check_expr_spans(sql, e->u.unary.operand, s);
    break;
  case SL_EXPR_BINARY:
    check_expr_spans(sql, e->u.binary.left, s);
    check_expr_spans(sql, e->u.binary.right, s);
    break;
  case SL_EXPR_BETWEEN:
    check_expr_spans(sql, e->u.between.operand, s);
    check_expr_spans(sql, e->u.between.low, s);
    check_expr_spans(sql, e->u.between.high, s);
    break;
  case SL_EXPR_LIKE:
    check_expr_spans(sql, e->u.like.operand, s);
    check_expr_spans(sql, e->u.like.pattern, s);
    check_expr_spans(sql, e->u.like.escape, s);
    break;
  case SL_EXPR_IS:
    check_expr_spans(sql, e->u.is.operand, s);
    break;
  case SL_EXPR_CAST:
    check_expr_spans(sql, e->u.cast.operand, s);
    break;
  case SL_EXPR_FIELD:
    check_expr_spans(sql, e->u.field.base, s);
    break;
  case SL_EXPR_CALL:
    for (int i = 0; i < SL_LIST_LEN(e->u.call.args); i++)
      check_expr_spans(sql, SL_LIST_AT(e->u.call.args, i), s);
    check_expr_spans(sql, e->u.call.filter, s);
    break;
  case SL_EXPR_CASE:
    check_expr_spans(sql, e->u.case_.operand, s);
    for (int i = 0; i < SL_LIST_LEN(e->u.case_.whens); i++) {
      const sl_when *w = SL_LIST_AT(e->u.case_.whens, i);
      check_expr_spans(sql, w->when, s);
      check_expr_spans(sql, w->then, s);
    }
    check_expr_spans(sql, e->u.case_.else_expr, s);
    break;
  default:
    break;
  }
}

static void test_spans(void **state) {
  (void)state;
  const char *sql = "  SELECT a + b AS x, f(y, 2) FILTER (WHERE z),\n"
                    "    CASE WHEN (c) THEN -d ELSE CAST(e AS INT) END\n"
                    "  FROM t AS u WHERE g BETWEEN 1 AND h.k ;  \n"
                    "CREATE VIEW v AS SELECT x FROM y;\n"
                    "INSERT INTO s SELECT 1";
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_list *stmts = NULL;
  sl_error err = {0};
  assert_int_equal(sl_parse(&a, sql, strlen(sql), 1, &stmts, &err), SL_OK);
  assert_int_equal(stmts->n, 3);
  char buf[256];
  sl_stmt *s = SL_LIST_AT(stmts, 0);
  assert_int_equal(s->span.line, 1);
  assert_int_equal(s->span.column, 3);
  assert_string_equal(span_text(sql, s->span, buf, sizeof(buf)),
                      "SELECT a + b AS x, f(y, 2) FILTER (WHERE z),\n"
                      "    CASE WHEN (c) THEN -d ELSE CAST(e AS INT) END\n"
                      "  FROM t AS u WHERE g BETWEEN 1 AND h.k");
  sl_select *sel = s->u.query->body->select;
  static const char *const items[] = {
      "a + b", "f(y, 2) FILTER (WHERE z)",
      "CASE WHEN (c) THEN -d ELSE CAST(e AS INT) END"};
  for (int i = 0; i < 3; i++) {
    sl_select_item *it = SL_LIST_AT(sel->items, i);
    assert_string_equal(span_text(sql, it->expr->span, buf, sizeof(buf)),
                        items[i]);
    check_expr_spans(sql, it->expr, s->span);
  }
  assert_string_equal(
      span_text(sql, ((sl_select_item *)SL_LIST_AT(sel->items, 0))->span, buf,
                sizeof(buf)),
      "a + b AS x");
  assert_string_equal(span_text(sql, sel->from->span, buf, sizeof(buf)),
                      "t AS u");
  assert_string_equal(span_text(sql, sel->where->span, buf, sizeof(buf)),
                      "g BETWEEN 1 AND h.k");
  assert_int_equal(sel->where->span.line, 3);
  assert_int_equal(sel->where->span.column, 21);
  check_expr_spans(sql, sel->where, s->span);
  sl_expr *k = sel->where->u.between.high;
  assert_string_equal(span_text(sql, k->u.name.span, buf, sizeof(buf)), "h.k");

  s = SL_LIST_AT(stmts, 1);
  assert_int_equal(s->kind, SL_STMT_CREATE_VIEW);
  assert_int_equal(s->span.line, 4);
  assert_int_equal(s->span.column, 1);
  assert_string_equal(span_text(sql, s->span, buf, sizeof(buf)),
                      "CREATE VIEW v AS SELECT x FROM y");
  assert_string_equal(
      span_text(sql, s->u.create_view.query_span, buf, sizeof(buf)),
      "SELECT x FROM y");
  s = SL_LIST_AT(stmts, 2);
  assert_string_equal(span_text(sql, s->span, buf, sizeof(buf)),
                      "INSERT INTO s SELECT 1");
  sl_arena_free(&a);
}

/* ---- keywords --------------------------------------------------------------
 */

static bool parses(const char *fmt, const char *word) {
  char sql[256];
  snprintf(sql, sizeof(sql), fmt, word, word, word, word, word);
  sl_error err = {0};
  char *d = dump_sql(sql, 1, &err);
  sl_error_clear(&err);
  free(d);
  return d != NULL;
}

static void test_keyword_policy(void **state) {
  (void)state;
  /* Words that must stay usable as names (NEXMark columns, Flink's window
   * columns, common option words). */
  static const char *const names[] = {
      "key",         "name",      "city",      "state",        "extra",
      "channel",     "url",       "category",  "price",        "id",
      "hour",        "minute",    "second",    "year",         "month",
      "day",         "type",      "language",  "comment",      "format",
      "analyze",     "plan",      "tables",    "views",        "functions",
      "data",        "size",      "first",     "last",         "nulls",
      "system",      "temporary", "enforced",  "descriptor",   "overwrite",
      "partitioned", "watermark", "function",  "json",         "text",
      "date",        "time",      "timestamp", "window_start", "value1"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    if (!parses("SELECT %s, t.%s FROM t WHERE %s > 1 GROUP BY %s ORDER BY %s",
                names[i]))
      fail_msg("`%s` is not usable as a column name", names[i]);
    /* WATERMARK starts a table element, so only a quoted column can be
     * called that. */
    if (strcmp(names[i], "watermark") != 0 &&
        !parses("CREATE TABLE %s (%s INT, r ROW<%s INT>)", names[i]))
      fail_msg("`%s` is not usable in DDL", names[i]);
  }
  /* Reserved words really are reserved... */
  static const char *const reserved[] = {
      "SELECT", "FROM",  "WHERE", "GROUP",  "BY",    "ORDER", "HAVING",
      "JOIN",   "ON",    "AND",   "OR",     "NOT",   "AS",    "CASE",
      "WHEN",   "THEN",  "ELSE",  "END",    "TABLE", "ROW",   "INTERVAL",
      "NULL",   "TRUE",  "FALSE", "IN",     "IS",    "LIKE",  "BETWEEN",
      "UNION",  "LIMIT", "LEFT",  "OFFSET", "USING", "CROSS", "NATURAL"};
  for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
    int code = sl_keyword_code(reserved[i], strlen(reserved[i]));
    assert_int_not_equal(code, 0);
    assert_int_equal(sl_lemon_parseFallback(code), 0);
  }
  /* ...and the fallback list agrees with what the grammar accepts: every
   * non-reserved keyword works as a column name in DDL and as an alias,
   * every reserved one does not. */
  const char *const *kw = sl_keyword_list();
  for (int i = 0; kw[i]; i++) {
    int code = sl_keyword_code(kw[i], strlen(kw[i]));
    bool nonreserved = sl_lemon_parseFallback(code) != 0;
    bool starts_elem = strcmp(kw[i], "PRIMARY") == 0 ||
                       strcmp(kw[i], "CONSTRAINT") == 0 ||
                       strcmp(kw[i], "WATERMARK") == 0;
    if (!starts_elem && parses("CREATE TABLE t (%s INT)", kw[i]) != nonreserved)
      fail_msg("keyword %s: reserved=%d but DDL column parse says otherwise",
               kw[i], !nonreserved);
    if (parses("SELECT 1 AS %s", kw[i]) != nonreserved)
      fail_msg("keyword %s: alias parse disagrees with reservedness", kw[i]);
  }
}

/* ---- the NEXMark examples ---------------------------------------------------
 */

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  buf[got] = '\0';
  *len = got;
  return buf;
}

static void test_nexmark_files(void **state) {
  (void)state;
  const char *root = getenv("SLUICE_SOURCE_DIR");
  if (!root)
    root = ".";
  static const char *const files[] = {"ddl", "q0",  "q1",  "q2",  "q3",  "q4",
                                      "q5",  "q7",  "q8",  "q9",  "q10", "q11",
                                      "q12", "q13", "q14", "q15", "q16", "q17",
                                      "q18", "q19", "q20", "q21", "q22"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/examples/nexmark/%s.sql", root, files[i]);
    size_t len = 0;
    char *text = read_file(path, &len);
    if (!text)
      fail_msg("cannot read %s (is SLUICE_SOURCE_DIR set?)", path);
    assert_memory_equal(text, "-- ", 3);
    sl_arena a;
    sl_arena_init(&a, 0);
    sl_list *stmts = NULL;
    sl_error err = {0};
    if (sl_parse(&a, text, len, 1, &stmts, &err) != SL_OK)
      fail_msg("%s: %d:%d: %s", path, err.line, err.column, err.message);
    int want = i == 0 ? 4 : strcmp(files[i], "q13") == 0 ? 3 : 2;
    assert_int_equal(stmts->n, want);
    sl_stmt *first = SL_LIST_AT(stmts, 0), *last = SL_LIST_AT(stmts, want - 1);
    assert_int_equal(first->kind, SL_STMT_CREATE_TABLE);
    assert_int_equal(last->kind, i == 0 ? SL_STMT_CREATE_VIEW : SL_STMT_INSERT);
    assert_int_equal(first->span.line, 2);
    sl_arena_free(&a);
    free(text);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden_dumps),
      cmocka_unit_test(test_precedence),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_parse_one),
      cmocka_unit_test(test_spans),
      cmocka_unit_test(test_keyword_policy),
      cmocka_unit_test(test_nexmark_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
