/* interp_throughput.c - throughput of the expression interpreter on a
 * YSB-like pipeline step: filter `event_type = 'view'` and project
 * (ad_id, event_time) over 64 KiB buffers of pre-built ad events, one
 * thread.  Prints rows/s of input, the median of 5 runs.
 *
 *   interp_throughput [rows-per-run (default 10000000)]
 *
 * The input is 1M distinct rows (~220 MB with their UUID strings), cycled
 * until rows-per-run rows have been processed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sluice/binder/binder.h"
#include "sluice/catalog/catalog.h"
#include "sluice/common/clock.h"
#include "sluice/expr/interpreter.h"
#include "sluice/parser/parser.h"
#include "sluice/row/row.h"

#define DISTINCT_ROWS 1000000u
#define BUF_SIZE 65536u

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int bind_one(sl_arena *a, sl_catalog *cat, const char *sql,
                    sl_bound_stmt **bs, sl_error *err) {
  sl_stmt *st;
  int rc = sl_parse_one(a, sql, strlen(sql), 1, &st, err);
  if (!rc)
    rc = sl_bind(a, cat, st, sql, 1, bs, err);
  return rc;
}

static void uuid(char *out, uint64_t *seed) {
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < 36; i++) {
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    out[i] = (i == 8 || i == 13 || i == 18 || i == 23) ? '-' : hex[*seed >> 60];
  }
}

int main(int argc, char **argv) {
  uint64_t per_run = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ULL;
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_error err = {0};
  sl_catalog *cat = sl_catalog_new();
  sl_bound_stmt *bs = NULL;
  const char *ddl = "CREATE TABLE ysb (user_id STRING, page_id STRING, ad_id "
                    "STRING, ad_type STRING, event_type STRING, event_time "
                    "TIMESTAMP(3), ip_address STRING) WITH ('connector' = "
                    "'datagen')";
  if (bind_one(&a, cat, ddl, &bs, &err) ||
      sl_catalog_add(cat, bs->new_table, false, &err)) {
    fprintf(stderr, "ddl: %s\n", err.message);
    return 1;
  }
  bs->new_table = NULL;
  const char *q = "SELECT ad_id, event_time FROM ysb WHERE event_type = "
                  "'view'";
  if (bind_one(&a, cat, q, &bs, &err)) {
    fprintf(stderr, "query: %s\n", err.message);
    return 1;
  }
  const sl_bquery *bq = bs->query;
  const sl_bfrom *from = bq->select->from;
  const char *names[7];
  const sl_type *types[7];
  for (int i = 0; i < 7; i++)
    names[i] = from->cols[i].name, types[i] = from->cols[i].type;
  sl_row_layout *in_l = sl_row_layout_new(&a, 7, names, types);
  int map[7] = {0, 1, 2, 3, 4, 5, 6};
  sl_expr_prog *filter, *proj[2];
  if (sl_expr_compile(&a, bq->select->where, in_l, map, &filter, &err) ||
      sl_expr_compile(&a, bq->select->exprs[0], in_l, map, &proj[0], &err) ||
      sl_expr_compile(&a, bq->select->exprs[1], in_l, map, &proj[1], &err)) {
    fprintf(stderr, "compile: %s\n", err.message);
    return 1;
  }
  const sl_type *otypes[2] = {sl_expr_type(proj[0]), sl_expr_type(proj[1])};
  sl_row_layout *out_l = sl_row_layout_new(&a, 2, NULL, otypes);

  /* pre-build the input buffers */
  static const char *const kinds[] = {"view", "click", "purchase"};
  static const char *const adtypes[] = {"banner", "modal", "sponsored-search",
                                        "mail", "mobile"};
  uint32_t nbufs_cap = 8192, nbufs = 0;
  sl_buffer *bufs = calloc(nbufs_cap, sizeof *bufs);
  uint64_t seed = 42;
  char id[3][36];
  for (uint32_t r = 0; r < DISTINCT_ROWS;) {
    if (nbufs == nbufs_cap)
      bufs = realloc(bufs, sizeof *bufs * (nbufs_cap *= 2));
    sl_buffer *b = &bufs[nbufs++];
    sl_buffer_init(b, in_l, BUF_SIZE);
    while (r < DISTINCT_ROWS && sl_buffer_has_room(b, 3 * 36 + 16)) {
      uint8_t *row = sl_buffer_append(b);
      for (int k = 0; k < 3; k++)
        uuid(id[k], &seed);
      for (int k = 0; k < 3; k++)
        sl_buffer_put_str(b, &SL_FIELD(row, in_l, k, sl_str), id[k], 36);
      const char *at = adtypes[r % 5], *et = kinds[(r / 5) % 3];
      sl_buffer_put_str(b, &SL_FIELD(row, in_l, 3, sl_str), at,
                        (uint32_t)strlen(at));
      sl_buffer_put_str(b, &SL_FIELD(row, in_l, 4, sl_str), et,
                        (uint32_t)strlen(et));
      SL_FIELD(row, in_l, 5, int64_t) = 1700000000000000LL + r * 1000LL;
      sl_buffer_put_str(b, &SL_FIELD(row, in_l, 6, sl_str), "10.0.0.1", 8);
      r++;
    }
  }

  sl_expr_ctx *ctx = sl_expr_ctx_new();
  sl_buffer out;
  sl_buffer_init(&out, out_l, BUF_SIZE);
  uint32_t sel[BUF_SIZE / 8];
  double rates[5];
  uint64_t kept_total = 0;
  for (int run = 0; run < 5; run++) {
    uint64_t done = 0, kept = 0;
    double t0 = sl_clock_seconds();
    for (uint32_t bi = 0; done < per_run; bi = (bi + 1) % nbufs) {
      const sl_buffer *b = &bufs[bi];
      uint32_t n = b->nrows;
      for (uint32_t k = 0; k < n; k++)
        sel[k] = k;
      if (sl_expr_filter(filter, b, sel, &n, ctx, &err))
        goto fail;
      uint32_t pos = 0;
      while (pos < n) {
        uint32_t room = (out.cap - out.heap_used) / out_l->width -
                        out.nrows; /* rows that fit, ignoring the heap */
        uint32_t take = n - pos < room ? n - pos : room;
        if (take == 0) {
          sl_buffer_clear(&out); /* "flush" */
          continue;
        }
        uint32_t first = out.nrows;
        out.nrows += take;
        int rc = 0;
        for (int f = 0; f < 2 && !rc; f++)
          rc = sl_expr_eval_into(proj[f], b, sel + pos, take, &out, first, f,
                                 ctx, &err);
        if (rc == SL_EXPR_HEAP_FULL) {
          out.nrows = first;
          sl_buffer_clear(&out);
          continue;
        }
        if (rc)
          goto fail;
        pos += take;
      }
      kept += n;
      done += b->nrows;
    }
    double dt = sl_clock_seconds() - t0;
    rates[run] = (double)done / dt;
    kept_total = kept;
    fprintf(stderr, "run %d: %.0f rows/s (%llu of %llu kept)\n", run + 1,
            rates[run], (unsigned long long)kept, (unsigned long long)done);
  }
  qsort(rates, 5, sizeof rates[0], cmp_double);
  printf("interp_throughput: filter event_type = 'view' + project (ad_id, "
         "event_time): %.1f M rows/s (median of 5, 1 thread, %llu rows/run, "
         "%llu kept)\n",
         rates[2] / 1e6, (unsigned long long)per_run,
         (unsigned long long)kept_total);
  sl_expr_ctx_free(ctx);
  sl_buffer_free(&out);
  for (uint32_t i = 0; i < nbufs; i++)
    sl_buffer_free(&bufs[i]);
  free(bufs);
  sl_bound_stmt_release(bs);
  sl_catalog_free(cat);
  sl_arena_free(&a);
  return 0;
fail:
  fprintf(stderr, "error: %s\n", err.message);
  return 1;
}
