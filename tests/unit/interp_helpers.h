/* interp_helpers.h - shared by the interpreter tests: a table t bound
 * through the real binder, a buffer of fixture rows laid out like t, and
 * helpers that evaluate `SELECT <expr> FROM t` on one row and return the
 * result as text ("NULL", "TRUE", "90.800", "hello", "ERROR: ...").
 */
#ifndef SLUICE_TEST_INTERP_HELPERS_H
#define SLUICE_TEST_INTERP_HELPERS_H

#include <inttypes.h>
#include <stdio.h>

#include "bind_helpers.h"
#include "sluice/expr/interpreter.h"
#include "sluice/row/row.h"

static const char INTERP_DDL[] =
    "CREATE TABLE t (i INT, b BIGINT, d DOUBLE, price BIGINT, s STRING, "
    "s2 STRING, ts TIMESTAMP(3), dc DECIMAL(10, 2), flag BOOLEAN, "
    "ti TINYINT, dt DATE, event_type STRING, "
    "r ROW<x BIGINT, y STRING>) WITH ('connector' = 'datagen')";

enum {
  C_I,
  C_B,
  C_D,
  C_PRICE,
  C_S,
  C_S2,
  C_TS,
  C_DC,
  C_FLAG,
  C_TI,
  C_DT,
  C_ET,
  C_RX,
  C_RY,
  NCOLS
};
#define NROWS 4

static sl_catalog *g_cat;
static sl_arena g_arena;
static sl_row_layout *g_layout;
static sl_buffer g_buf;
static sl_expr_ctx *g_ctx;
/* bound column -> layout field; the ROW column r is flattened into r.x,
 * r.y (fields 12, 13) and itself has no field */
static int g_map[NCOLS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -1};
static char g_out[4096];

static void put_str(uint8_t *row, int f, const char *s) {
  sl_str *dst = (sl_str *)(row + g_layout->fields[f].offset);
  if (!sl_buffer_put_str(&g_buf, dst, s, (uint32_t)strlen(s)))
    abort();
}

static int64_t ts_us(int y, int mo, int d, int h, int mi, int s, int ms) {
  /* days from civil (UTC), independent of the code under test */
  int yy = y - (mo <= 2);
  int era = (yy >= 0 ? yy : yy - 399) / 400;
  int yoe = yy - era * 400;
  int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = (int64_t)era * 146097 + doe - 719468;
  return ((days * 86400 + h * 3600 + mi * 60 + s) * 1000 + ms) * 1000;
}

static void fill_rows(void) {
  sl_buffer_clear(&g_buf);
  for (int r = 0; r < NROWS; r++)
    sl_buffer_append(&g_buf);
  const sl_row_layout *L = g_layout;
  uint8_t *r0 = sl_buffer_row(&g_buf, 0);
  SL_FIELD(r0, L, C_I, int32_t) = 1;
  SL_FIELD(r0, L, C_B, int64_t) = 10;
  SL_FIELD(r0, L, C_D, double) = 1.5;
  SL_FIELD(r0, L, C_PRICE, int64_t) = 100;
  put_str(r0, C_S, "hello");
  put_str(r0, C_S2, "world");
  SL_FIELD(r0, L, C_TS, int64_t) = ts_us(2020, 1, 2, 3, 4, 5, 678);
  SL_FIELD(r0, L, C_DC, int64_t) = 1234; /* 12.34 */
  SL_FIELD(r0, L, C_FLAG, uint8_t) = 1;
  SL_FIELD(r0, L, C_TI, int8_t) = 5;
  SL_FIELD(r0, L, C_DT, int32_t) =
      (int32_t)(ts_us(2020, 2, 29, 0, 0, 0, 0) / 86400000000LL);
  put_str(r0, C_ET, "view");
  SL_FIELD(r0, L, C_RX, int64_t) = 42;
  put_str(r0, C_RY, "nested");

  uint8_t *r1 = sl_buffer_row(&g_buf, 1); /* every column NULL */
  for (int f = 0; f < L->nfields; f++)
    sl_row_set_null(r1, f, true);

  uint8_t *r2 = sl_buffer_row(&g_buf, 2);
  SL_FIELD(r2, L, C_I, int32_t) = INT32_MAX;
  SL_FIELD(r2, L, C_B, int64_t) = INT64_MAX;
  SL_FIELD(r2, L, C_D, double) = -0.5;
  SL_FIELD(r2, L, C_PRICE, int64_t) = INT64_MIN;
  put_str(r2, C_S, "");
  put_str(r2, C_S2, "a long string over twelve bytes");
  SL_FIELD(r2, L, C_TS, int64_t) = ts_us(1969, 12, 31, 23, 59, 59, 999);
  SL_FIELD(r2, L, C_DC, int64_t) = -5; /* -0.05 */
  SL_FIELD(r2, L, C_FLAG, uint8_t) = 0;
  SL_FIELD(r2, L, C_TI, int8_t) = 127;
  SL_FIELD(r2, L, C_DT, int32_t) = 0;
  put_str(r2, C_ET, "click");
  SL_FIELD(r2, L, C_RX, int64_t) = -1;
  put_str(r2, C_RY, "");

  uint8_t *r3 = sl_buffer_row(&g_buf, 3);
  SL_FIELD(r3, L, C_I, int32_t) = -7;
  SL_FIELD(r3, L, C_B, int64_t) = 3;
  SL_FIELD(r3, L, C_D, double) = 2.675;
  SL_FIELD(r3, L, C_PRICE, int64_t) = 7;
  put_str(r3, C_S, "h\xc3\xa9llo w\xc3\xb6rld"); /* héllo wörld */
  put_str(r3, C_S2, "a%b_c");
  SL_FIELD(r3, L, C_TS, int64_t) = ts_us(2021, 12, 31, 13, 0, 0, 5);
  SL_FIELD(r3, L, C_DC, int64_t) = 9999999999; /* 99999999.99 */
  sl_row_set_null(r3, C_FLAG, true);
  SL_FIELD(r3, L, C_TI, int8_t) = -128;
  SL_FIELD(r3, L, C_DT, int32_t) = -1;
  put_str(r3, C_ET, "view");
  SL_FIELD(r3, L, C_RX, int64_t) = 7;
  put_str(r3, C_RY, "seven");
}

static int interp_setup(void **state) {
  (void)state;
  g_cat = sl_catalog_new();
  sl_error err = {0};
  if (trun_script(g_cat, INTERP_DDL, &err) != SL_OK) {
    fprintf(stderr, "setup: %s\n", err.message);
    sl_error_clear(&err);
    return -1;
  }
  sl_arena_init(&g_arena, 0);
  tbound tb;
  if (tbind(&tb, g_cat, "SELECT * FROM t") != SL_OK) {
    fprintf(stderr, "setup: %s\n", tb.err.message);
    return -1;
  }
  /* flatten r into r.x, r.y */
  const char *names[NCOLS + 1];
  const sl_type *types[NCOLS + 1];
  const sl_bquery *q = tb.bs->query;
  for (int i = 0; i < 12; i++) {
    names[i] = sl_arena_strdup(&g_arena, q->cols[i].name);
    types[i] = sl_type_copy(&g_arena, q->cols[i].type);
  }
  const sl_type *rt = q->cols[12].type;
  names[12] = "r.x";
  types[12] = sl_type_copy(&g_arena, rt->fields[0].type);
  names[13] = "r.y";
  types[13] = sl_type_copy(&g_arena, rt->fields[1].type);
  tbound_done(&tb);
  g_layout = sl_row_layout_new(&g_arena, NCOLS, names, types);
  sl_buffer_init(&g_buf, g_layout, 65536);
  fill_rows();
  g_ctx = sl_expr_ctx_new();
  return 0;
}

static int interp_teardown(void **state) {
  (void)state;
  sl_expr_ctx_free(g_ctx);
  sl_buffer_free(&g_buf);
  sl_arena_free(&g_arena);
  sl_catalog_free(g_cat);
  return 0;
}

/* Bind "SELECT <expr> FROM t [WHERE ...]" and compile its first select
 * expression (or the WHERE when where != 0) into prog (in arena a).
 * Returns the status; on failure g_out holds "ERROR: message". */
static int compile_sql(sl_arena *a, tbound *tb, const char *sql, int where,
                       sl_expr_prog **prog) {
  if (tbind(tb, g_cat, sql) != SL_OK) {
    snprintf(g_out, sizeof g_out, "BIND: %s", tb->err.message);
    return tb->rc;
  }
  const sl_bselect *sel = tb->bs->query->select;
  const sl_bexpr *e = where ? sel->where : sel->exprs[0];
  sl_error err = {0};
  int rc = sl_expr_compile(a, e, g_layout, g_map, prog, &err);
  if (rc)
    snprintf(g_out, sizeof g_out, "ERROR: %s", err.message);
  sl_error_clear(&err);
  return rc;
}

static const char *format_value(const sl_expr_value *v) {
  if (v->null)
    return "NULL";
  const sl_type *t = v->type;
  switch (t->kind) {
  case SL_TYPE_BOOLEAN:
    return v->i64 ? "TRUE" : "FALSE";
  case SL_TYPE_FLOAT:
  case SL_TYPE_DOUBLE:
    snprintf(g_out, sizeof g_out, "%.15g", v->f64);
    return g_out;
  case SL_TYPE_DECIMAL: {
    __int128 x = v->dec;
    bool neg = x < 0;
    unsigned __int128 u = neg ? (unsigned __int128)-x : (unsigned __int128)x;
    char digits[64];
    int n = 0;
    do {
      digits[n++] = (char)('0' + (int)(u % 10));
      u /= 10;
    } while (u);
    while (n <= t->scale)
      digits[n++] = '0';
    int len = 0;
    if (neg)
      g_out[len++] = '-';
    for (int k = n - 1; k >= 0; k--) {
      g_out[len++] = digits[k];
      if (k == t->scale && t->scale > 0)
        g_out[len++] = '.';
    }
    g_out[len] = 0;
    return g_out;
  }
  case SL_TYPE_CHAR:
  case SL_TYPE_VARCHAR:
    snprintf(g_out, sizeof g_out, "%.*s", (int)v->str.len,
             sl_str_data(&v->str));
    return g_out;
  default:
    snprintf(g_out, sizeof g_out, "%" PRId64, v->i64);
    return g_out;
  }
}

/* The value of expr on fixture row `row`, as text. */
static const char *ev(const char *expr, int row) {
  char sql[2048];
  snprintf(sql, sizeof sql, "SELECT %s FROM t", expr);
  sl_arena a;
  sl_arena_init(&a, 0);
  tbound tb;
  sl_expr_prog *p = NULL;
  if (compile_sql(&a, &tb, sql, 0, &p) == SL_OK) {
    sl_expr_value v;
    sl_error err = {0};
    int rc = sl_expr_eval_row(p, &g_buf, (uint32_t)row, &v, g_ctx, &err);
    if (rc)
      snprintf(g_out, sizeof g_out, "ERROR: %s", err.message);
    else {
      const char *s = format_value(&v);
      if (s != g_out)
        snprintf(g_out, sizeof g_out, "%s", s);
    }
    sl_error_clear(&err);
  }
  tbound_done(&tb);
  sl_arena_free(&a);
  return g_out;
}

#define EXPECT(expr, row, want)                                                \
  do {                                                                         \
    const char *got_ = ev(expr, row);                                          \
    if (strcmp(got_, want) != 0)                                               \
      fail_msg("%s (row %d): got '%s', want '%s'", expr, row, got_, want);     \
  } while (0)

/* An error whose message contains `part`. */
#define EXPECT_ERR(expr, row, part)                                            \
  do {                                                                         \
    const char *got_ = ev(expr, row);                                          \
    if (strncmp(got_, "ERROR: ", 7) != 0 || !strstr(got_, part))               \
      fail_msg("%s (row %d): got '%s', want an error with '%s'", expr, row,    \
               got_, part);                                                    \
  } while (0)

#endif
