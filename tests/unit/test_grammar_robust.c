/* test_grammar_robust.c - the grammar under stress: sl_expr_format output
 * re-parses to the same tree (expressions and, through scalar subqueries,
 * whole queries), every prefix and many random mutations of real statements
 * parse or fail cleanly, and deep nesting is reported instead of blowing
 * the stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sluice/common/strbuf.h"
#include "sluice/parser/parser.h"

/* Statements the fuzz and round-trip tests start from, besides the NEXMark
 * files. */
static const char *const corpus[] = {
    "SELECT a, b + 1 AS c FROM t WHERE x > 1 AND y LIKE 'a%' GROUP BY a "
    "HAVING count(*) > 2 ORDER BY a DESC NULLS LAST LIMIT 10 OFFSET 2",
    "SELECT * FROM a LEFT JOIN b ON a.x = b.y RIGHT JOIN c USING (k) FULL "
    "OUTER JOIN d ON TRUE CROSS JOIN e NATURAL JOIN f",
    "SELECT * FROM (a JOIN b ON x) LEFT JOIN (c CROSS JOIN d) ON y, s.t AS z "
    "(p, q)",
    "SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.proctime AS r2 ON o.k = "
    "r2.k, LATERAL TABLE(split(s)) AS T(w)",
    "SELECT window_start, count(*) FROM TABLE(TUMBLE(TABLE Bid, "
    "DESCRIPTOR(dateTime), INTERVAL '10' MINUTES)) GROUP BY window_start",
    "SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY (bidder, item), "
    "DESCRIPTOR(ts), INTERVAL '10' SECOND)) AS w",
    "SELECT * FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(ts), "
    "SLIDE => INTERVAL '5' SECOND, SIZE => INTERVAL '10' SECOND))",
    "(SELECT 1) UNION ALL (SELECT 2 ORDER BY 1 LIMIT 1) INTERSECT SELECT 3 "
    "EXCEPT VALUES (1), (2)",
    "WITH a AS (SELECT 1), b (x) AS (SELECT 2) SELECT DISTINCT * FROM a, b",
    "SELECT CASE WHEN a THEN 1 ELSE 2 END, CASE x WHEN 1 THEN 'a' END, CAST(a "
    "AS DECIMAL(10, 2)), TRY_CAST(b AS ROW<a INT NOT NULL, b ROW(c "
    "VARCHAR(3))>)",
    "SELECT SUBSTRING(s FROM 1 FOR 2), EXTRACT(YEAR FROM ts), TRIM(LEADING "
    "'x' FROM s), POSITION('a' IN s), CURRENT_TIMESTAMP, LEFT(s, 1)",
    "SELECT count(DISTINCT x) FILTER (WHERE y > 1), row_number() OVER "
    "(PARTITION BY a ORDER BY b DESC), f(x).a, (a).b, x NOT IN (SELECT y "
    "FROM v), EXISTS (SELECT 1)",
    "CREATE TEMPORARY TABLE IF NOT EXISTS c.d.t (id BIGINT NOT NULL COMMENT "
    "'i', ts TIMESTAMP(3), x AS id + 1, WATERMARK FOR ts AS ts - INTERVAL "
    "'5' SECOND, PRIMARY KEY (id) NOT ENFORCED) COMMENT 't' PARTITIONED BY "
    "(id) WITH ('connector' = 'x')",
    "CREATE VIEW v (a) AS SELECT 1; CREATE TEMPORARY SYSTEM FUNCTION f AS "
    "'c.F' LANGUAGE PYTHON; DROP TABLE IF EXISTS t; SHOW CREATE VIEW v",
    "SET 'a' = 'b'; SET x.y-z = 1h; RESET; EXPLAIN ANALYZE (FORMAT JSON) "
    "INSERT OVERWRITE t (a) VALUES (1)",
};

/* ---- helpers ------------------------------------------------------------- */

static char *dump_stmt(const sl_stmt *s) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_stmt_dump(&b, s);
  char *out = strdup(sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return out;
}

/* Parse "SELECT <text>" and return the first select item. */
static sl_expr *parse_item(sl_arena *a, const char *text) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_strbuf_printf(&b, "SELECT %s", text);
  sl_stmt *s = NULL;
  sl_error err = {0};
  int rc = sl_parse_one(a, sl_strbuf_cstr(&b), b.len, 1, &s, &err);
  if (rc != SL_OK)
    fail_msg("cannot parse: %s\n  (%s)", sl_strbuf_cstr(&b), err.message);
  sl_strbuf_free(&b);
  sl_error_clear(&err);
  sl_select_item *it = SL_LIST_AT(s->u.query->body->select->items, 0);
  return it->expr;
}

static char *dump_item(sl_arena *a, sl_expr *e) {
  sl_stmt s;
  memset(&s, 0, sizeof(s));
  sl_select sel;
  memset(&sel, 0, sizeof(sel));
  sl_select_item item = {e, NULL, {0, 0, 0, 0}};
  sel.items = sl_list_new(a);
  sl_list_push(a, sel.items, &item);
  sl_query_body body;
  memset(&body, 0, sizeof(body));
  body.select = &sel;
  sl_query q;
  memset(&q, 0, sizeof(q));
  q.body = &body;
  s.kind = SL_STMT_QUERY;
  s.u.query = &q;
  return dump_stmt(&s);
}

/* Format e, re-parse the text, and require the same tree. */
static void round_trip(sl_arena *a, sl_expr *e, const char *origin) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_expr_format(&b, e);
  sl_expr *back = parse_item(a, sl_strbuf_cstr(&b));
  char *d1 = dump_item(a, e), *d2 = dump_item(a, back);
  if (strcmp(d1, d2) != 0)
    fail_msg("round trip changed the tree\n  from:      %s\n  formatted: "
             "%s\n  before:    %s\n  after:     %s",
             origin, sl_strbuf_cstr(&b), d1, d2);
  free(d1);
  free(d2);
  sl_strbuf_free(&b);
}

static const char *format_of(sl_arena *a, const char *text) {
  sl_strbuf b = SL_STRBUF_INIT;
  sl_expr_format(&b, parse_item(a, text));
  const char *s = sl_arena_strdup(a, sl_strbuf_cstr(&b));
  sl_strbuf_free(&b);
  return s;
}

/* ---- round trips ----------------------------------------------------------
 */

static void test_format_golden(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"a-(b-c)", "a - (b - c)"},
      {"(a - b) - c", "a - b - c"},
      {"(a+b)*c", "(a + b) * c"},
      {"NOT (a AND b)", "NOT (a AND b)"},
      {"- (-a)", "-(-a)"},
      {"a - -1", "a - -1"},
      {"`my col` + `select`", "`my col` + `select`"},
      {"f(x).`a b`", "f(x).`a b`"},
      {"(a).b", "(a).b"},
      {"hour(ts)", "hour(ts)"},
      {"\"q\"\"x\"", "`q\"x`"},
      {"'it''s'", "'it''s'"},
      {"count(*) filter (where x>1)", "count(*) FILTER (WHERE x > 1)"},
      {"x not between 1 and 2", "x NOT BETWEEN 1 AND 2"},
      {"(a = b) IS NULL", "(a = b) IS NULL"},
      {"INTERVAL '1:30' MINUTE TO SECOND(3)",
       "INTERVAL '1:30' MINUTE TO SECOND(3)"},
      {"cast(a as varchar)", "CAST(a AS STRING)"},
      {"trim(both 'x' from s)", "trim(BOTH 'x' FROM s)"},
      {"extract(day from d)", "extract(DAY FROM d)"},
      {"position((a || b) in s)", "position((a || b) IN s)"},
      {"current_timestamp", "current_timestamp"},
      {"x in (select 1 from t where y union select 2)",
       "x IN (SELECT 1 FROM t WHERE y UNION SELECT 2)"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const char *got = format_of(&a, cases[i].in);
    if (strcmp(got, cases[i].out) != 0)
      fail_msg("format(%s) = %s, want %s", cases[i].in, got, cases[i].out);
  }
  sl_arena_free(&a);
}

static void test_expr_round_trip(void **state) {
  (void)state;
  static const char *const exprs[] = {
      "1 + 2 * 3 - 4 / 5 % 6",
      "a || b || (c || d)",
      "NOT a AND NOT (b OR c) OR d",
      "-a * -(b + c) - - d",
      "a = b = c",
      "a = (b = c)",
      "(a BETWEEN 1 AND 2) BETWEEN (x AND y) AND z",
      "a NOT BETWEEN SYMMETRIC b + 1 AND c OR d",
      "a LIKE b || 'x' ESCAPE '!' AND c NOT SIMILAR TO 'y'",
      "a IS NOT NULL IS TRUE",
      "(a OR b) IS UNKNOWN",
      "a IN (1, 2 + 3, (SELECT 4)) AND b NOT IN (SELECT x FROM t)",
      "CASE WHEN a > 1 THEN 'x' WHEN b THEN NULL ELSE c || 'y' END",
      "CASE f(x) WHEN 1 THEN TRUE ELSE FALSE END",
      "CAST(a + 1 AS DECIMAL(10, 2)) + TRY_CAST(b AS ROW<x INT, y STRING>)",
      "SUBSTRING(s FROM 1 FOR 2) || SUBSTRING(s, 3)",
      "TRIM(TRAILING FROM s) || TRIM(LEADING 'x' FROM s) || TRIM(s)",
      "POSITION((a || b) IN s) + EXTRACT(MONTH FROM ts)",
      "LEFT(s, 1) || RIGHT(s, 2) || DATE(x) || TIMESTAMP(y)",
      "count(DISTINCT a) FILTER (WHERE b > 0) OVER (PARTITION BY c, d ORDER "
      "BY e DESC NULLS FIRST, f)",
      "f(x).a.b + (a + b).c + CAST(r AS ROW<q INT>).q",
      "INTERVAL '10' SECOND + INTERVAL -'1' DAY + INTERVAL '5' SECOND(3)",
      "TIMESTAMP '2020-01-01 00:00:00' > DATE '2020-01-01' OR TIME '12:00:00'",
      "`weird name` + t.`x``y` + `select`.`from`",
      "CURRENT_TIMESTAMP > LOCALTIMESTAMP AND CURRENT_DATE IS NOT NULL",
      "1.5e-3 + .5 + 5. + 0.908 * price",
      "EXISTS (WITH c AS (SELECT 1) SELECT * FROM c UNION ALL (SELECT 2 "
      "INTERSECT SELECT 3) ORDER BY 1 LIMIT 2 OFFSET 1)",
      "(SELECT a FROM t JOIN u ON t.x = u.y LEFT JOIN (v CROSS JOIN w) ON TRUE "
      "WHERE y GROUP BY z HAVING count(*) > 1)",
      "(SELECT * FROM TABLE(TUMBLE(TABLE Bid PARTITION BY (a, b), "
      "DESCRIPTOR(ts), INTERVAL '1' MINUTE)) AS w (p, q), LATERAL (SELECT 1) "
      "AS l)",
      "(SELECT 1 FROM (SELECT 2 UNION SELECT 3) INTERSECT (SELECT 4 EXCEPT "
      "SELECT 5))",
      "(VALUES (1, 'a'), (2, 'b'))",
  };
  sl_arena a;
  sl_arena_init(&a, 0);
  for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++)
    round_trip(&a, parse_item(&a, exprs[i]), exprs[i]);
  sl_arena_free(&a);
}

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

/* The corpus: the statements above plus every NEXMark file. */
typedef struct corpus_text {
  char *text[64];
  int n;
} corpus_text;

static void load_corpus(corpus_text *c) {
  c->n = 0;
  for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++)
    c->text[c->n++] = strdup(corpus[i]);
  const char *root = getenv("SLUICE_SOURCE_DIR");
  for (int q = -1; q <= 22 && root; q++) {
    char path[1024];
    if (q < 0)
      snprintf(path, sizeof(path), "%s/examples/nexmark/ddl.sql", root);
    else
      snprintf(path, sizeof(path), "%s/examples/nexmark/q%d.sql", root, q);
    size_t len;
    char *t = read_file(path, &len);
    if (t)
      c->text[c->n++] = t;
  }
  assert_true(c->n > 30 || !root);
}

static void free_corpus(corpus_text *c) {
  for (int i = 0; i < c->n; i++)
    free(c->text[i]);
}

/* Whole queries round-trip by formatting them as a scalar subquery. */
static void test_query_round_trip(void **state) {
  (void)state;
  corpus_text c;
  load_corpus(&c);
  int checked = 0;
  for (int i = 0; i < c.n; i++) {
    sl_arena a;
    sl_arena_init(&a, 0);
    sl_list *stmts = NULL;
    sl_error err = {0};
    assert_int_equal(
        sl_parse(&a, c.text[i], strlen(c.text[i]), 1, &stmts, &err), SL_OK);
    for (int j = 0; j < stmts->n; j++) {
      sl_stmt *s = SL_LIST_AT(stmts, j);
      sl_query *q = s->kind == SL_STMT_QUERY         ? s->u.query
                    : s->kind == SL_STMT_INSERT      ? s->u.insert.query
                    : s->kind == SL_STMT_CREATE_VIEW ? s->u.create_view.query
                                                     : NULL;
      if (!q)
        continue;
      sl_expr *e = sl_expr_new(&a, SL_EXPR_SUBQUERY, s->span);
      e->u.subquery.kind = SL_SUBQ_SCALAR;
      e->u.subquery.query = q;
      round_trip(&a, e, c.text[i]);
      checked++;
    }
    sl_arena_free(&a);
  }
  assert_true(checked >= 20);
  free_corpus(&c);
}

/* ---- fuzzing ----------------------------------------------------------------
 */

/* Parse text; it must succeed or fail with a positioned syntax error. */
static void parse_clean(const char *text, size_t len) {
  sl_arena a;
  sl_arena_init(&a, 4096);
  sl_list *stmts = NULL;
  sl_error err = {0};
  int rc = sl_parse(&a, text, len, 1, &stmts, &err);
  if (rc == SL_OK) {
    for (int i = 0; i < stmts->n; i++) {
      sl_stmt *s = SL_LIST_AT(stmts, i);
      assert_non_null(s);
      assert_true(s->span.offset >= 0 &&
                  (size_t)(s->span.offset + s->span.length) <= len);
      /* Dumping must not crash either. */
      free(dump_stmt(s));
    }
  } else {
    assert_int_equal(rc, SL_ESYNTAX);
    assert_non_null(err.message);
    assert_true(err.line >= 1 && err.column >= 1);
    assert_true(err.offset >= 0 && (size_t)err.offset <= len);
    assert_true(err.length >= 0 && (size_t)(err.offset + err.length) <= len);
  }
  sl_error_clear(&err);
  sl_arena_free(&a);
}

static void test_prefixes(void **state) {
  (void)state;
  corpus_text c;
  load_corpus(&c);
  for (int i = 0; i < c.n; i++) {
    size_t len = strlen(c.text[i]);
    for (size_t n = 0; n <= len; n++)
      parse_clean(c.text[i], n);
  }
  free_corpus(&c);
}

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void test_mutations(void **state) {
  (void)state;
  static const char interesting[] = "()'\"`;,.*-/<>=|!#[]\n 0aZ_";
  corpus_text c;
  load_corpus(&c);
  uint64_t seed = 0x5eed5eed1234ULL;
  char *buf = malloc(1 << 16);
  for (int round = 0; round < 4000; round++) {
    const char *src = c.text[next_rand(&seed) % (uint64_t)c.n];
    size_t len = strlen(src);
    if (len > (1 << 15))
      len = 1 << 15;
    memcpy(buf, src, len);
    int edits = 1 + (int)(next_rand(&seed) % 4);
    for (int e = 0; e < edits && len > 0; e++) {
      size_t at = next_rand(&seed) % len;
      switch (next_rand(&seed) % 4) {
      case 0: /* replace with an interesting byte */
        buf[at] = interesting[next_rand(&seed) % (sizeof(interesting) - 1)];
        break;
      case 1: /* replace with any byte, NUL included */
        buf[at] = (char)(next_rand(&seed) & 0xff);
        break;
      case 2: /* delete a run */
      {
        size_t n = 1 + next_rand(&seed) % 8;
        if (at + n > len)
          n = len - at;
        memmove(buf + at, buf + at + n, len - at - n);
        len -= n;
        break;
      }
      default: /* duplicate a run */
      {
        size_t n = 1 + next_rand(&seed) % 16;
        if (at + n > len)
          n = len - at;
        memmove(buf + at + n, buf + at, len - at);
        len += n;
        break;
      }
      }
    }
    parse_clean(buf, len);
  }
  free(buf);
  free_corpus(&c);
}

/* ---- nesting
 * ----------------------------------------------------------------- */

static char *repeat_around(const char *pre, const char *open, int n,
                           const char *mid, const char *close,
                           const char *post) {
  size_t len = strlen(pre) + (strlen(open) + strlen(close)) * (size_t)n +
               strlen(mid) + strlen(post) + 1;
  char *s = malloc(len), *p = s;
  p += sprintf(p, "%s", pre);
  for (int i = 0; i < n; i++)
    p += sprintf(p, "%s", open);
  p += sprintf(p, "%s", mid);
  for (int i = 0; i < n; i++)
    p += sprintf(p, "%s", close);
  sprintf(p, "%s", post);
  return s;
}

static int parse_status(const char *sql, char *msg, size_t n) {
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_list *stmts = NULL;
  sl_error err = {0};
  int rc = sl_parse(&a, sql, strlen(sql), 1, &stmts, &err);
  snprintf(msg, n, "%s", err.message ? err.message : "");
  sl_error_clear(&err);
  sl_arena_free(&a);
  return rc;
}

static void test_nesting(void **state) {
  (void)state;
  static const struct {
    const char *pre, *open, *mid, *close, *post;
  } shapes[] = {
      {"SELECT ", "(", "1", ")", ""},
      {"SELECT ", "NOT ", "a", "", ""},
      {"SELECT ", "- ", "a", "", ""},
      {"SELECT ", "f(", "1", ")", ""},
      {"SELECT * FROM ", "(SELECT * FROM ", "t", ")", ""},
      {"SELECT ", "CASE WHEN a THEN ", "1", " END", ""},
      {"SELECT CAST(a AS ", "ROW<a ", "INT", ">", ")"},
      {"SELECT * FROM t ", "JOIN (u ", "JOIN v ON a", ") ON b", ""},
  };
  char msg[256];
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    char *ok = repeat_around(shapes[i].pre, shapes[i].open, 50, shapes[i].mid,
                             shapes[i].close, shapes[i].post);
    if (parse_status(ok, msg, sizeof(msg)) != SL_OK)
      fail_msg("50 levels failed: %s\n  %s", msg, ok);
    free(ok);
    char *deep = repeat_around(shapes[i].pre, shapes[i].open, 20000,
                               shapes[i].mid, shapes[i].close, shapes[i].post);
    assert_int_equal(parse_status(deep, msg, sizeof(msg)), SL_ESYNTAX);
    assert_true(strncmp(msg, "expression nested too deeply", 28) == 0);
    free(deep);
  }
}

/* "SELECT 0" then n - 1 times " <op> d". */
static char *chain_of(const char *op, int n) {
  size_t cap = 64 + (size_t)n * (strlen(op) + 4);
  char *s = malloc(cap);
  size_t len = (size_t)snprintf(s, cap, "SELECT 0");
  for (int i = 1; i < n; i++)
    len += (size_t)snprintf(s + len, cap - len, " %s %d", op, i % 10);
  return s;
}

/* A left-associative chain nests one level per operator (every walker of
 * the tree recurses that deep): up to SL_MAX_EXPR_DEPTH terms parse, more
 * are refused with the depth; AND / OR chains are flat at any length. */
static void test_chains(void **state) {
  (void)state;
  char msg[512];
  char *ok = chain_of("+", SL_MAX_EXPR_DEPTH);
  assert_int_equal(parse_status(ok, msg, sizeof(msg)), SL_OK);
  free(ok);
  char *over = chain_of("+", SL_MAX_EXPR_DEPTH + 1);
  assert_int_equal(parse_status(over, msg, sizeof(msg)), SL_ESYNTAX);
  assert_non_null(strstr(msg, "expression nested too deeply: depth 1001 "
                              "exceeds the limit of 1000"));
  free(over);
  char *big = chain_of("||", 100000);
  assert_int_equal(parse_status(big, msg, sizeof(msg)), SL_ESYNTAX);
  assert_non_null(strstr(msg, "depth 100000 exceeds the limit of 1000"));
  free(big);
  char *ands = chain_of("= 1 AND 1 =", 100000);
  assert_int_equal(parse_status(ands, msg, sizeof(msg)), SL_OK);
  free(ands);
  char *ors = chain_of("> 0 OR 2 <", 100000);
  assert_int_equal(parse_status(ors, msg, sizeof(msg)), SL_OK);
  free(ors);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format_golden),
      cmocka_unit_test(test_expr_round_trip),
      cmocka_unit_test(test_query_round_trip),
      cmocka_unit_test(test_prefixes),
      cmocka_unit_test(test_mutations),
      cmocka_unit_test(test_nesting),
      cmocka_unit_test(test_chains),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
