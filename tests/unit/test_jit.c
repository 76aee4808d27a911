/* test_jit.c - the JIT against the interpreter, its reference.
 *
 * Every expression is compiled once by the interpreter and once by the JIT
 * (a kernel writing it into a one-field output row, and for BOOLEAN ones
 * also a filter kernel), then run over rows with NULLs, extreme integers,
 * decimals, doubles, short and long strings.  Per row, both must agree on
 * error / no error, NULL, and the value.  A randomized part generates many
 * well-typed expressions (fixed seed, printed on failure).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "interp_helpers.h"
#include "sluice/jit/jit.h"

/* ---- comparing one expression -------------------------------------------
 */

static sl_buffer g_rand; /* random rows of g_layout */
static uint64_t g_seed;

static uint64_t rnd(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return g_seed;
}

/* Do out rows a (row ra) and b (row rb), field 0, hold the same value? */
static bool same_value(const sl_buffer *a, uint32_t ra, const sl_buffer *b,
                       uint32_t rb) {
  const sl_field *f = &a->layout->fields[0];
  const uint8_t *x = sl_buffer_row(a, ra), *y = sl_buffer_row(b, rb);
  bool xn = sl_row_is_null(x, 0), yn = sl_row_is_null(y, 0);
  if (xn || yn)
    return xn == yn;
  x += f->offset, y += f->offset;
  switch (f->ptype) {
  case SL_P_STR:
    return sl_str_equal((const sl_str *)x, (const sl_str *)y);
  case SL_P_F64: {
    double u, v;
    memcpy(&u, x, 8), memcpy(&v, y, 8);
    return (isnan(u) && isnan(v)) || memcmp(&u, &v, 8) == 0;
  }
  case SL_P_F32: {
    float u, v;
    memcpy(&u, x, 4), memcpy(&v, y, 4);
    return (isnan(u) && isnan(v)) || memcmp(&u, &v, 4) == 0;
  }
  default:
    return memcmp(x, y, f->size) == 0;
  }
}

/* The compiled code's own expression context (the subtrees it hands to the
 * interpreter run in it), apart from the reference interpreter's g_ctx. */
static sl_expr_ctx *g_jctx;

typedef struct outcome {
  int compiled; /* expressions the JIT compiled */
  int partly;   /* expressions with subtrees the compiled code hands to
                 * the interpreter (compared all the same) */
  int errors;   /* rows where both reported an error */
} outcome;

/* Compare JIT and interpreter for `expr` over every row of `in`.  Returns
 * false (after printing why) on a difference. */
static bool compare_expr(const char *expr, const sl_buffer *in, outcome *oc) {
  char sql[4096];
  snprintf(sql, sizeof sql, "SELECT %s FROM t", expr);
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb;
  sl_expr_prog *p = NULL;
  bool ok = true;
  if (compile_sql(&a, &tb, sql, 0, &p) != SL_OK ||
      sl_expr_type(p)->kind == SL_TYPE_NULL) {
    tbound_done(&tb);
    sl_arena_free(&a);
    return true; /* not an expression we can compare */
  }
  char why[160];
  if (!sl_jit_supports(p, why, sizeof why))
    oc->partly++;
  const sl_type *t = sl_expr_type(p);
  sl_row_layout *ol = sl_row_layout_new(&a, 1, NULL, &t);
  sl_jit *j = NULL;
  sl_error err = {0};
  sl_jit_kernel *k = NULL, *kf = NULL;
  assert_int_equal(sl_jit_new(&j, NULL, &err), SL_OK);
  assert_int_equal(
      sl_jit_add_kernel(j, NULL, &p, 1, in->layout, ol, false, &k, &err),
      SL_OK);
  bool boolean = t->kind == SL_TYPE_BOOLEAN;
  if (boolean)
    assert_int_equal(
        sl_jit_add_kernel(j, p, NULL, 0, in->layout, NULL, false, &kf, &err),
        SL_OK);
  if (sl_jit_compile(j, NULL, &err) != SL_OK) {
    fprintf(stderr, "%s: %s\n", expr, err.message);
    fail();
  }
  oc->compiled++;
  sl_buffer io, jo;
  sl_buffer_init(&io, ol, 1 << 16);
  sl_buffer_init(&jo, ol, 1 << 16);
  bool any_error = false;
  for (uint32_t r = 0; r < in->nrows && ok; r++) {
    /* interpreter, this row alone */
    sl_buffer_clear(&io);
    sl_buffer_append(&io);
    int irc = sl_expr_eval_into(p, in, &r, 1, &io, 0, 0, g_ctx, &err);
    sl_error_clear(&err);
    /* JIT, this row alone */
    sl_buffer_clear(&jo);
    uint32_t nout = 0, next = 0;
    int jrc = sl_jit_run(k, in, &r, 1, NULL, &nout, &jo, &next, g_jctx);
    if ((irc != SL_OK) != (jrc != SL_OK)) {
      fprintf(stderr, "%s, row %u: interpreter %s, JIT %s (seed %llu)\n", expr,
              r, irc ? "error" : "ok", jrc ? "error" : "ok",
              (unsigned long long)g_seed);
      ok = false;
      break;
    }
    if (irc != SL_OK) {
      oc->errors++;
      any_error = true;
      continue;
    }
    if (nout != 1 || next != 1 || jo.nrows != 1 ||
        !same_value(&io, 0, &jo, 0)) {
      fprintf(stderr, "%s, row %u: values differ (seed %llu)\n", expr, r,
              (unsigned long long)g_seed);
      ok = false;
    }
    if (ok && boolean) {
      uint32_t isel = r, in_n = 1, jsel = 0;
      int frc = sl_expr_filter(p, in, &isel, &in_n, g_ctx, &err);
      sl_error_clear(&err);
      int jfrc = sl_jit_run(kf, in, &r, 1, &jsel, &nout, NULL, &next, g_jctx);
      if (frc != SL_OK || jfrc != SL_OK || in_n != nout) {
        fprintf(stderr, "%s, row %u: filters differ (seed %llu)\n", expr, r,
                (unsigned long long)g_seed);
        ok = false;
      }
    }
  }
  /* the whole buffer in one call: an error anywhere means retry */
  if (ok) {
    uint32_t *sel = malloc(sizeof(uint32_t) * (in->nrows + 1));
    for (uint32_t r = 0; r < in->nrows; r++)
      sel[r] = r;
    sl_buffer_clear(&jo);
    uint32_t nout = 0, next = 0;
    int jrc =
        sl_jit_run(k, in, sel, in->nrows, NULL, &nout, &jo, &next, g_jctx);
    if ((jrc != SL_OK) != any_error) {
      fprintf(stderr, "%s: whole-buffer run %s (seed %llu)\n", expr,
              jrc ? "failed" : "succeeded", (unsigned long long)g_seed);
      ok = false;
    }
    if (jrc != SL_OK && (jo.nrows != 0 || jo.heap_used != 0)) {
      fprintf(stderr, "%s: a failed run left output behind\n", expr);
      ok = false;
    }
    free(sel);
  }
  sl_buffer_free(&io);
  sl_buffer_free(&jo);
  sl_jit_free(j);
  tbound_done(&tb);
  sl_arena_free(&a);
  return ok;
}

/* ---- fixed expressions --------------------------------------------------
 */

static const char *const FIXED[] = {
    /* NULLs and three-valued logic */
    "i",
    "b",
    "d",
    "s",
    "s2",
    "dc",
    "flag",
    "ti",
    "ts",
    "dt",
    "r.x",
    "r.y",
    "i IS NULL",
    "s IS NOT NULL",
    "flag IS TRUE",
    "flag IS NOT FALSE",
    "flag AND i > 0",
    "flag OR i > 0",
    "NOT flag",
    "(i > 0) IS UNKNOWN",
    "flag AND NULL",
    "flag OR NULL",
    "i > 0 AND b > 0 AND d > 0",
    /* integers and overflow (an error in both) */
    "i + 1",
    "i * 2",
    "b + 1",
    "b - 1",
    "price - 1",
    "-price",
    "-i",
    "ti + ti",
    "ti * 100",
    "i * i",
    "b * b",
    "i / 2",
    "i % 3",
    "b / -1",
    "price / -1",
    "i / 0",
    "i % 0",
    "MOD(b, 7)",
    "ABS(i)",
    "ABS(price)",
    "CAST(b AS INT)",
    "CAST(i AS TINYINT)",
    "TRY_CAST(b AS SMALLINT)",
    "CAST(i AS DOUBLE)",
    "CAST(b AS FLOAT)",
    "CAST(i AS DECIMAL(5, 1))",
    "CAST(d AS INT)",
    "CAST(d AS BIGINT)",
    "CAST(flag AS INT)",
    "CAST(s AS INT)",
    "TRY_CAST(s AS INT)",
    "CAST(dc AS INT)",
    "CAST(ts AS DATE)",
    "CAST(dt AS TIMESTAMP(3))",
    /* doubles: IEEE, NaN order, FLOAT rounding */
    "d + 1",
    "d * d",
    "d / 0",
    "d / i",
    "d % 2",
    "-d",
    "ABS(d)",
    "FLOOR(d)",
    "CEIL(d)",
    "SQRT(d)",
    "LN(d)",
    "LOG10(d)",
    "EXP(d)",
    "POWER(d, 2)",
    "d = d",
    "d < 1",
    "CAST(d AS FLOAT) * 3",
    "CAST(0.1 AS FLOAT) + CAST(d AS FLOAT)",
    "d / 0 > 1",
    "d / 0 = d / 0",
    /* decimals */
    "dc + 1",
    "dc * dc",
    "dc * 1.5",
    "dc / 3",
    "dc / 0",
    "dc % 2",
    "dc - 0.005",
    "dc * 10000000000",
    "dc > 12",
    "dc = 12.34",
    "0.908 * price",
    "dc + d",
    "CAST(dc AS DOUBLE)",
    "CAST(dc AS DECIMAL(4, 1))",
    /* strings */
    "s = 'hello'",
    "s <> s2",
    "s < s2",
    "s2 >= 'a long'",
    "s = s",
    "event_type = 'view'",
    "s2 = 'a long string over twelve bytes'",
    "s LIKE 'h%'",
    "s2 LIKE '%twelve%'",
    "s NOT LIKE '%o'",
    "s LIKE '_'",
    "s2 LIKE 'a\\%b\\_c' ESCAPE '\\'",
    "CHAR_LENGTH(s)",
    "CHAR_LENGTH(s2)",
    "s IN ('hello', 'view')",
    "event_type IN ('view', NULL)",
    "s NOT IN ('x')",
    "COALESCE(s, s2)",
    "COALESCE(s2, 'dflt')",
    "NULLIF(s, '')",
    /* conditionals, guarded division */
    "CASE WHEN b <> 0 THEN i / b END",
    "CASE WHEN i > 0 THEN 1 ELSE 0 END",
    "CASE WHEN flag THEN s ELSE s2 END",
    "CASE i WHEN 1 THEN 'one' END",
    "IF(i > 0, d, -d)",
    "COALESCE(i, b, 0)",
    "NULLIF(i, 1)",
    "i BETWEEN 0 AND 10",
    "i NOT BETWEEN 0 AND 10",
    "i IN (1, 2, NULL)",
    "b IN (3, 10)",
    "dc IN (12.34, 1)",
    "d IN (1.5, 2)",
    "flag OR i / 0 > 1",
    "NOT flag AND i / 0 > 1",
    /* time */
    "ts + INTERVAL '1' SECOND",
    "ts - INTERVAL '2' DAY",
    "ts > ts",
    "HOUR(ts)",
    "EXTRACT(YEAR FROM ts)",
    "EXTRACT(DAY FROM dt)",
    "MONTH(dt)",
    "FLOOR(ts)",
    "CEIL(dt)",
    "CASE WHEN HOUR(ts) >= 8 AND HOUR(ts) <= 18 THEN 'day' ELSE 'night' END",
    /* not compiled: the interpreter runs them */
    "UPPER(s)",
    "s || s2",
    "REGEXP_REPLACE(s, 'l', 'L')",
    "CAST(i AS STRING)",
    "DATE_FORMAT(ts, 'yyyy-MM-dd')",
    /* interpreted operands of CASE / COALESCE / AND: the whole expression
     * goes to the interpreter, which evaluates them only where needed (no
     * division by zero for i = 0 here) */
    "CASE WHEN i <> 0 THEN CAST(100 / i AS STRING) ELSE UPPER(s) END",
    "COALESCE(s, CAST(i AS STRING), 'none')",
    "i > 0 AND CHAR_LENGTH(UPPER(s2)) > 3",
    "CHAR_LENGTH(s || s2) + i",
};

static void test_fixed_expressions(void **state) {
  (void)state;
  outcome oc = {0};
  bool ok = true;
  for (size_t i = 0; i < sizeof FIXED / sizeof FIXED[0]; i++)
    ok &= compare_expr(FIXED[i], &g_buf, &oc);
  assert_true(ok);
  fprintf(stderr,
          "test_jit: %d compiled (%d with interpreted subtrees), %d error "
          "rows\n",
          oc.compiled, oc.partly, oc.errors);
  /* all are compiled, some report errors; the last nine (UPPER, ||,
   * REGEXP_REPLACE, CAST to a string, DATE_FORMAT, within CASE, ...) have
   * subtrees the interpreter evaluates for the compiled loop, and give
   * the same values */
  assert_true(oc.compiled >= 140);
  assert_true(oc.errors > 10);
  assert_int_equal(oc.partly, 9);
}

/* ---- random rows and expressions ----------------------------------------
 */

static const char *const WORDS[] = {"",
                                    "a",
                                    "view",
                                    "click",
                                    "hello",
                                    "héllo wörld",
                                    "a%b_c",
                                    "exactly12byte",
                                    "exactly12bytf",
                                    "sixteen bytes!!!",
                                    "sixteen bytes!!?",
                                    "a long string over twelve bytes",
                                    "a long strXng over twelve bytes",
                                    "a long string over twelve bytez"};

static void random_rows(uint32_t n) {
  sl_buffer_clear(&g_rand);
  const sl_row_layout *L = g_layout;
  static const int64_t ints[] = {0,         1,         -1,        2,
                                 7,         100,       -7,        INT32_MAX,
                                 INT32_MIN, INT64_MAX, INT64_MIN, 1000000};
  static const double dbls[] = {0.0,     -0.5, 1.5,      2.675, 1e300,
                                -1e-300, NAN,  INFINITY, 3.0};
  for (uint32_t r = 0; r < n; r++) {
    uint8_t *row = sl_buffer_append(&g_rand);
    for (int f = 0; f < L->nfields; f++) {
      if (rnd() % 6 == 0) {
        sl_row_set_null(row, f, true);
        continue;
      }
      uint8_t *p = row + L->fields[f].offset;
      int64_t v = ints[rnd() % (sizeof ints / sizeof ints[0])];
      switch (L->fields[f].ptype) {
      case SL_P_STR: {
        const char *w = WORDS[rnd() % (sizeof WORDS / sizeof WORDS[0])];
        assert_true(
            sl_buffer_put_str(&g_rand, (sl_str *)p, w, (uint32_t)strlen(w)));
        break;
      }
      case SL_P_F64:
        *(double *)p = dbls[rnd() % (sizeof dbls / sizeof dbls[0])];
        break;
      case SL_P_BOOL:
        *p = rnd() & 1;
        break;
      case SL_P_DEC64:
        *(int64_t *)p = (int64_t)(rnd() % 20000000000ULL) - 10000000000LL;
        break;
      case SL_P_TS:
        *(int64_t *)p = (int64_t)(rnd() % 4000000000000000ULL);
        break;
      case SL_P_DATE:
        *(int32_t *)p = (int32_t)(rnd() % 40000) - 20000;
        break;
      default:
        sl_int_store(p, L->fields[f].ptype, v);
        break;
      }
    }
  }
}

/* Random well-typed SQL of a kind: 'i' integer, 'd' double, 'm' decimal,
 * 's' string, 'b' boolean. */
/* snprintf whose truncation is fine (generated text is short). */
static void put(char *out, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, len, fmt, ap);
  va_end(ap);
}

static void gen(char kind, int depth, char *out, size_t len) {
  static const char *const ICOLS[] = {
      "i", "b", "price", "ti", "r.x", "HOUR(ts)", "EXTRACT(YEAR FROM dt)"};
  static const char *const ILITS[] = {
      "0", "1", "-1", "2", "7", "2147483647", "9223372036854775807"};
  static const char *const SCOLS[] = {"s", "s2", "event_type", "r.y"};
  char x[1024], y[1024], z[1024];
  int leaf = depth <= 0 || rnd() % 3 == 0;
  switch (kind) {
  case 'i':
    if (leaf) {
      if (rnd() % 3)
        put(out, len, "%s", ICOLS[rnd() % 7]);
      else
        put(out, len, "%s", ILITS[rnd() % 7]);
      return;
    }
    gen('i', depth - 1, x, sizeof x);
    gen('i', depth - 1, y, sizeof y);
    switch (rnd() % 7) {
    case 0:
    case 1: {
      static const char ops[] = "+-*/%";
      put(out, len, "(%s %c %s)", x, ops[rnd() % 5], y);
      return;
    }
    case 2:
      put(out, len, "(-%s)", x);
      return;
    case 3:
      put(out, len, "ABS(%s)", x);
      return;
    case 4:
      gen('b', depth - 1, z, sizeof z);
      put(out, len, "CASE WHEN %s THEN %s ELSE %s END", z, x, y);
      return;
    case 5:
      put(out, len, "COALESCE(%s, %s)", x, y);
      return;
    default:
      put(out, len, "CAST(%s AS %s)", x, rnd() & 1 ? "INT" : "SMALLINT");
      return;
    }
  case 'd':
    if (leaf) {
      put(out, len, "%s", rnd() % 2 ? "d" : "1.5E0");
      return;
    }
    gen(rnd() % 3 ? 'd' : 'i', depth - 1, x, sizeof x);
    gen('d', depth - 1, y, sizeof y);
    switch (rnd() % 4) {
    case 0: {
      static const char ops[] = "+-*/%";
      put(out, len, "(%s %c %s)", x, ops[rnd() % 5], y);
      return;
    }
    case 1:
      put(out, len, "FLOOR(%s)", y);
      return;
    case 2:
      put(out, len, "CAST(%s AS FLOAT)", x);
      return;
    default:
      put(out, len, "SQRT(%s)", y);
      return;
    }
  case 'm':
    if (leaf) {
      put(out, len, "%s", rnd() % 2 ? "dc" : "0.25");
      return;
    }
    gen('m', depth - 1, x, sizeof x);
    gen(rnd() % 2 ? 'm' : 'i', depth - 1, y, sizeof y);
    {
      static const char ops[] = "+-*/%";
      put(out, len, "(%s %c %s)", x, ops[rnd() % 5], y);
    }
    return;
  case 's':
    if (leaf) {
      if (rnd() % 4)
        put(out, len, "%s", SCOLS[rnd() % 4]);
      else
        put(out, len, "'%s'", WORDS[1 + rnd() % 4]);
      return;
    }
    gen('s', depth - 1, x, sizeof x);
    gen('s', depth - 1, y, sizeof y);
    gen('b', depth - 1, z, sizeof z);
    /* the last three: string building, which the compiled code has the
     * interpreter evaluate (alone, or with a CASE or COALESCE around it) */
    switch (rnd() % 6) {
    case 0:
      put(out, len, "COALESCE(%s, %s)", x, y);
      return;
    case 1:
      put(out, len, "NULLIF(%s, %s)", x, y);
      return;
    case 2:
      put(out, len, "CASE WHEN %s THEN %s ELSE %s END", z, x, y);
      return;
    case 3:
      put(out, len, "UPPER(%s)", x);
      return;
    case 4:
      put(out, len, "(%s || %s)", x, y);
      return;
    default:
      gen('i', depth - 1, z, sizeof z);
      put(out, len, "CAST(%s AS STRING)", z);
      return;
    }
  default: /* boolean */
    if (leaf) {
      put(out, len, "%s", rnd() % 2 ? "flag" : "(i IS NULL)");
      return;
    }
    {
      static const char *const cmps[] = {"=", "<>", "<", "<=", ">", ">="};
      const char *op = cmps[rnd() % 6];
      char k = "idmsb"[rnd() % 5];
      switch (rnd() % 7) {
      case 0:
      case 1:
        if (k == 'b')
          k = 'i';
        gen(k, depth - 1, x, sizeof x);
        gen(k, depth - 1, y, sizeof y);
        put(out, len, "(%s %s %s)", x, op, y);
        return;
      case 2:
        gen('b', depth - 1, x, sizeof x);
        gen('b', depth - 1, y, sizeof y);
        put(out, len, "(%s %s %s)", x, rnd() & 1 ? "AND" : "OR", y);
        return;
      case 3:
        gen('b', depth - 1, x, sizeof x);
        put(out, len, "(NOT %s)", x);
        return;
      case 4:
        gen('s', depth - 1, x, sizeof x);
        put(out, len, "(%s LIKE '%s')", x,
            (const char *[]){"h%", "%o%", "_", "%", "a\\%%"}[rnd() % 5]);
        return;
      case 5:
        gen('i', depth - 1, x, sizeof x);
        put(out, len, "(%s IN (1, 7, %s))", x, rnd() & 1 ? "NULL" : "-1");
        return;
      default:
        gen(k, depth - 1, x, sizeof x);
        put(out, len, "(%s IS %sNULL)", x, rnd() & 1 ? "NOT " : "");
        return;
      }
    }
  }
}

static void test_random_expressions(void **state) {
  (void)state;
  const char *env = getenv("SLUICE_JIT_SEED");
  g_seed = env ? strtoull(env, NULL, 10) : 20261122;
  fprintf(stderr, "test_jit: random seed %llu (SLUICE_JIT_SEED)\n",
          (unsigned long long)g_seed);
  random_rows(300);
  outcome oc = {0};
  bool ok = true;
  for (int i = 0; i < 400 && ok; i++) {
    char expr[2048];
    gen("idmsb"[rnd() % 5], 4, expr, sizeof expr);
    uint64_t seed = g_seed;
    ok = compare_expr(expr, &g_rand, &oc);
    if (!ok)
      fprintf(stderr, "failed on expression %d: %s (state %llu)\n", i, expr,
              (unsigned long long)seed);
  }
  assert_true(ok);
  fprintf(stderr,
          "test_jit: %d compiled (%d with interpreted subtrees), %d error "
          "rows\n",
          oc.compiled, oc.partly, oc.errors);
  assert_true(oc.compiled > 200);
  assert_true(oc.partly > 20); /* interpreted subtrees among them */
  assert_true(oc.errors > 0);
}

/* A long string written to a non-borrowing output is copied into its heap;
 * when the heap is full, the kernel stops before that row. */
static void test_heap_full(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb;
  sl_expr_prog *p = NULL;
  assert_int_equal(compile_sql(&a, &tb, "SELECT s2 FROM t", 0, &p), SL_OK);
  const sl_type *t = sl_expr_type(p);
  sl_row_layout *ol = sl_row_layout_new(&a, 1, NULL, &t);
  sl_jit *j;
  sl_jit_kernel *k;
  sl_error err = {0};
  assert_int_equal(sl_jit_new(&j, "O2", &err), SL_OK);
  assert_int_equal(
      sl_jit_add_kernel(j, NULL, &p, 1, g_layout, ol, false, &k, &err), SL_OK);
  char *ir = NULL;
  assert_int_equal(sl_jit_compile(j, &ir, &err), SL_OK);
  assert_non_null(ir);
  assert_non_null(strstr(ir, "sl_kernel_0"));
  free(ir);
  sl_buffer out;
  sl_buffer_init(&out, ol, 64); /* room for 3 rows of 16 bytes, no heap */
  uint32_t sel[4] = {2, 2, 2, 2}, nout, next;
  assert_int_equal(
      sl_jit_run(k, &g_buf, sel, 4, NULL, &nout, &out, &next, g_jctx), SL_OK);
  /* row 2's s2 is 31 bytes: one row (24 with the null bitmap) + 31 fits */
  assert_true(nout < 4);
  assert_int_equal(next, nout);
  assert_int_equal(out.nrows, nout);
  assert_true(out.nrows * ol->width + out.heap_used <= out.cap);
  sl_buffer_free(&out);
  sl_jit_free(j);
  tbound_done(&tb);
  sl_arena_free(&a);
}

/* How many times `what` occurs in s. */
static int occurrences(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
    n++;
  return n;
}

/* A field the watermark (pre), the filter and an output all read is
 * loaded once per row, however many rows' stores come between
 * (jit_load_input), and the output row's null byte is stored without
 * being read back: the optimized IR of the default pipeline has one load
 * of d's value and one of its null byte. */
static void test_input_read_once(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb1, tb2, tb3;
  sl_expr_prog *pre = NULL, *filter = NULL, *out = NULL;
  assert_int_equal(compile_sql(&a, &tb1, "SELECT d * 2 FROM t", 0, &pre),
                   SL_OK);
  assert_int_equal(compile_sql(&a, &tb2, "SELECT d > 0 FROM t", 0, &filter),
                   SL_OK);
  assert_int_equal(compile_sql(&a, &tb3, "SELECT d FROM t", 0, &out), SL_OK);
  const sl_type *pt = sl_expr_type(pre), *ot = sl_expr_type(out);
  sl_row_layout *pl = sl_row_layout_new(&a, 1, NULL, &pt);
  sl_row_layout *ol = sl_row_layout_new(&a, 1, NULL, &ot);
  sl_jit *j;
  sl_jit_kernel *k;
  sl_error err = {0};
  assert_int_equal(sl_jit_new(&j, NULL, &err), SL_OK);
  assert_int_equal(sl_jit_add_kernel_pre(j, pre, pl, filter, &out, 1, g_layout,
                                         ol, false, &k, &err),
                   SL_OK);
  char *ir = NULL;
  assert_int_equal(sl_jit_compile(j, &ir, &err), SL_OK);
  const char *fn = strstr(ir, "define i32 @sl_kernel_0");
  assert_non_null(fn);
  assert_int_equal(occurrences(fn, "load double"), 1);
  assert_int_equal(occurrences(fn, "load i8,"), 1);
  free(ir);
  /* and the rows are right: d of every row that passes, doubled in pre */
  sl_buffer po, o;
  sl_buffer_init(&po, pl, 4096);
  sl_buffer_init(&o, ol, 4096);
  uint32_t sel[NROWS], sel_out[NROWS], nout, next;
  for (uint32_t r = 0; r < NROWS; r++)
    sel[r] = r;
  assert_int_equal(sl_jit_run_pre(k, &g_buf, sel, NROWS, sel_out, &nout, &o,
                                  &po, &next, g_jctx),
                   SL_OK);
  assert_int_equal(next, NROWS);
  assert_int_equal(nout, 2); /* rows 0 (1.5) and 3; -0.5 and NULL do not */
  for (uint32_t r = 0; r < nout; r++) {
    const uint8_t *in = sl_buffer_row(&g_buf, sel_out[r]);
    const uint8_t *row = sl_buffer_row(&o, r);
    assert_false(sl_row_is_null(row, 0));
    assert_true(SL_FIELD(row, ol, 0, double) ==
                SL_FIELD(in, g_layout, C_D, double));
    assert_true(SL_FIELD(in, g_layout, C_D, double) > 0);
  }
  sl_buffer_free(&po);
  sl_buffer_free(&o);
  sl_jit_free(j);
  tbound_done(&tb1);
  tbound_done(&tb2);
  tbound_done(&tb3);
  sl_arena_free(&a);
}

/* A pre expression (the watermark's place) is evaluated for every row,
 * before the filter, into row k of its own buffer. */
static void test_pre_expression(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb1, tb2;
  sl_expr_prog *pre = NULL, *filter = NULL;
  assert_int_equal(compile_sql(&a, &tb1, "SELECT d * 2 FROM t", 0, &pre),
                   SL_OK);
  assert_int_equal(compile_sql(&a, &tb2, "SELECT i > 0 FROM t", 0, &filter),
                   SL_OK);
  const sl_type *t = sl_expr_type(pre);
  sl_row_layout *pl = sl_row_layout_new(&a, 1, NULL, &t);
  sl_jit *j;
  sl_jit_kernel *k;
  sl_error err = {0};
  assert_int_equal(sl_jit_new(&j, NULL, &err), SL_OK);
  assert_int_equal(sl_jit_add_kernel_pre(j, pre, pl, filter, NULL, 0, g_layout,
                                         NULL, false, &k, &err),
                   SL_OK);
  assert_int_equal(sl_jit_compile(j, NULL, &err), SL_OK);
  sl_buffer po, io;
  sl_buffer_init(&po, pl, 4096);
  sl_buffer_init(&io, pl, 4096);
  uint32_t sel[NROWS], sel_out[NROWS], nout, next;
  for (uint32_t r = 0; r < NROWS; r++)
    sel[r] = r;
  assert_int_equal(sl_jit_run_pre(k, &g_buf, sel, NROWS, sel_out, &nout, NULL,
                                  &po, &next, g_jctx),
                   SL_OK);
  assert_int_equal(next, NROWS);
  assert_int_equal(po.nrows, NROWS);
  for (uint32_t r = 0; r < NROWS; r++) {
    sl_buffer_clear(&io);
    sl_buffer_append(&io);
    assert_int_equal(
        sl_expr_eval_into(pre, &g_buf, &r, 1, &io, 0, 0, g_ctx, &err), SL_OK);
    assert_true(same_value(&io, 0, &po, r));
  }
  /* rows 0 (i = 1) and 2 (i = INT32_MAX) pass; NULL and -7 do not */
  assert_int_equal(nout, 2);
  assert_int_equal(sel_out[0], 0);
  assert_int_equal(sel_out[1], 2);
  /* no room for the pre rows: handed back */
  uint8_t mem[32];
  sl_buffer small;
  sl_buffer_wrap(&small, pl, mem, sizeof mem); /* 2 rows of 16 bytes */
  assert_int_equal(sl_jit_run_pre(k, &g_buf, sel, NROWS, sel_out, &nout, NULL,
                                  &small, &next, g_jctx),
                   SL_JIT_RETRY);
  sl_buffer_free(&po);
  sl_buffer_free(&io);
  sl_jit_free(j);
  tbound_done(&tb1);
  tbound_done(&tb2);
  sl_arena_free(&a);
}

/* What a gate saw, and which values it lets through (positive ones). */
typedef struct gate_log {
  int calls;
  int64_t values[NROWS], times[NROWS];
  int32_t value_nulls[NROWS], time_nulls[NROWS];
} gate_log;

static int32_t positive_gate(void *state, int64_t value, int32_t value_null,
                             int64_t time, int32_t time_null) {
  gate_log *g = state;
  if (g->calls < NROWS) {
    g->values[g->calls] = value;
    g->times[g->calls] = time;
    g->value_nulls[g->calls] = value_null;
    g->time_nulls[g->calls] = time_null;
  }
  g->calls++;
  return !value_null && value > 0;
}

/* A gated kernel calls its gate for each row that passed the filter, with
 * two of its output values, and writes only the rows the gate lets
 * through; it needs the gate's state to run. */
static void test_gate(void **state) {
  (void)state;
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb1, tb2;
  sl_expr_prog *filter = NULL, *progs[3] = {NULL, NULL, NULL};
  assert_int_equal(
      compile_sql(&a, &tb1, "SELECT i > 0 OR i IS NULL FROM t", 0, &filter),
      SL_OK);
  assert_int_equal(compile_sql(&a, &tb2, "SELECT price FROM t", 0, &progs[0]),
                   SL_OK);
  tbound tb3, tb4;
  assert_int_equal(compile_sql(&a, &tb3, "SELECT ts FROM t", 0, &progs[1]),
                   SL_OK);
  assert_int_equal(compile_sql(&a, &tb4, "SELECT s2 FROM t", 0, &progs[2]),
                   SL_OK);
  const sl_type *ts[3] = {sl_expr_type(progs[0]), sl_expr_type(progs[1]),
                          sl_expr_type(progs[2])};
  sl_row_layout *ol = sl_row_layout_new(&a, 3, NULL, ts);
  sl_jit *j;
  sl_jit_kernel *k, *bad;
  sl_error err = {0};
  assert_int_equal(sl_jit_new(&j, NULL, &err), SL_OK);
  sl_jit_gate gate = {positive_gate, 0, 1, -1, false};
  /* a string is no gate value */
  sl_jit_gate on_string = {positive_gate, 2, 1, -1, false};
  assert_int_equal(sl_jit_add_kernel_gated(j, NULL, NULL, filter, &on_string,
                                           progs, 3, g_layout, ol, false, &bad,
                                           &err),
                   SL_EUNSUPPORTED);
  sl_error_clear(&err);
  assert_int_equal(sl_jit_add_kernel_gated(j, NULL, NULL, filter, &gate, progs,
                                           3, g_layout, ol, false, &k, &err),
                   SL_OK);
  assert_int_equal(sl_jit_compile(j, NULL, &err), SL_OK);
  sl_buffer out;
  sl_buffer_init(&out, ol, 4096);
  uint32_t sel[NROWS], sel_out[NROWS], nout, next;
  for (uint32_t r = 0; r < NROWS; r++)
    sel[r] = r;
  /* without the gate's state: handed back, nothing written */
  assert_int_equal(sl_jit_run_pre(k, &g_buf, sel, NROWS, sel_out, &nout, &out,
                                  NULL, &next, g_jctx),
                   SL_JIT_RETRY);
  assert_int_equal(out.nrows, 0);
  gate_log log = {0};
  assert_int_equal(sl_jit_run_gated(k, &g_buf, sel, NROWS, sel_out, &nout, &out,
                                    NULL, &next, &log, g_jctx),
                   SL_OK);
  assert_int_equal(next, NROWS);
  /* rows 0 (i = 1), 1 (NULL) and 2 (INT32_MAX) pass the filter; row 3
   * (i = -7) does not */
  assert_int_equal(log.calls, 3);
  assert_int_equal(log.values[0], 100);
  assert_int_equal(log.value_nulls[0], 0);
  assert_int_equal(log.times[0], ts_us(2020, 1, 2, 3, 4, 5, 678));
  assert_int_equal(log.time_nulls[0], 0);
  assert_int_equal(log.value_nulls[1], 1);
  assert_int_equal(log.time_nulls[1], 1);
  assert_int_equal(log.values[2], INT64_MIN);
  /* only row 0 (price 100) is let through and written */
  assert_int_equal(nout, 1);
  assert_int_equal(out.nrows, 1);
  assert_int_equal(sel_out[0], 0);
  const uint8_t *row = sl_buffer_row(&out, 0);
  assert_int_equal(SL_FIELD(row, ol, 0, int64_t), 100);
  assert_true(sl_str_equal(
      &SL_FIELD(row, ol, 2, sl_str),
      &SL_FIELD(sl_buffer_row(&g_buf, 0), g_layout, C_S2, sl_str)));
  sl_buffer_free(&out);
  sl_jit_free(j);
  tbound_done(&tb1);
  tbound_done(&tb2);
  tbound_done(&tb3);
  tbound_done(&tb4);
  sl_arena_free(&a);
}

static void test_unknown_pipeline(void **state) {
  (void)state;
  sl_jit *j = NULL;
  sl_error err = {0};
  assert_int_equal(sl_jit_new(&j, "O7", &err), SL_EINVAL);
  assert_null(j);
  sl_error_clear(&err);
  assert_true(sl_jit_pipeline_known("light"));
}

static int setup(void **state) {
  (void)ev; /* interp_helpers.h's single-row evaluator: not used here */
  if (interp_setup(state))
    return -1;
  sl_buffer_init(&g_rand, g_layout, 1 << 16);
  g_jctx = sl_expr_ctx_new();
  return 0;
}

static int teardown(void **state) {
  sl_expr_ctx_free(g_jctx);
  sl_buffer_free(&g_rand);
  return interp_teardown(state);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixed_expressions),
      cmocka_unit_test(test_random_expressions),
      cmocka_unit_test(test_heap_full),
      cmocka_unit_test(test_pre_expression),
      cmocka_unit_test(test_input_read_once),
      cmocka_unit_test(test_gate),
      cmocka_unit_test(test_unknown_pipeline),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
