/* constant_rows.c - running a plan of constant rows (SELECT without FROM,
 * VALUES; plan.h SL_PLAN_CONSTANT): each row's expressions are evaluated
 * once by the interpreter and the rows go to the sink, kept by the WHERE,
 * sorted by ORDER BY, then OFFSET and LIMIT, as for any query. */
#include <stdlib.h>
#include <string.h>

#include "executor_int.h"
#include "sluice/common/clock.h"
#include "sluice/state/sorted_result.h"

/* The value of a BOOLEAN filter over no input: TRUE keeps the row. */
static int filter_true(const sl_bexpr *f, sl_arena *a, sl_expr_ctx *ctx,
                       bool *keep, sl_error *err) {
  *keep = true;
  if (!f)
    return SL_OK;
  sl_expr_prog *prog;
  int rc = sl_expr_compile(a, f, NULL, NULL, &prog, err);
  sl_expr_value v;
  if (rc == SL_OK)
    rc = sl_expr_eval_row(prog, NULL, 0, &v, ctx, err);
  if (rc == SL_OK)
    *keep = !v.null && v.i64 != 0;
  return rc;
}

int sl_execute_constant(const sl_plan *plan, sl_result_sink *shell,
                        sl_query_stats *stats, sl_error *err) {
  memset(stats, 0, sizeof *stats);
  double t0 = sl_clock_seconds();
  sl_arena a;
  sl_arena_init(&a, 0);
  sl_expr_ctx *ctx = sl_expr_ctx_new();
  const sl_row_layout *l =
      sl_row_layout_new(&a, plan->nout, plan->out_names, plan->out_types);
  /* Expressions without columns read nothing: one dummy input row. */
  const sl_type *bt[1] = {sl_type_new(&a, SL_TYPE_BOOLEAN)};
  sl_buffer none;
  sl_buffer_init(&none, sl_row_layout_new(&a, 1, NULL, bt), 64);
  sl_buffer_append(&none);
  uint32_t sel0 = 0;
  sorted_result rows;
  sorted_result_init(&rows, l, 65536);
  sl_buffer one;
  sl_buffer_init(&one, l, 65536);
  sl_expr_prog **progs = SL_ANEW_N(&a, sl_expr_prog *, plan->nout + 1);
  int rc = SL_OK;
  for (int r = 0; r < plan->nconst_rows && rc == SL_OK; r++) {
    bool keep;
    rc = filter_true(plan->const_filter, &a, ctx, &keep, err);
    if (rc != SL_OK || !keep)
      continue;
    for (int c = 0; c < plan->nout && rc == SL_OK; c++) {
      /* A VALUES row's value takes its column's common type. */
      const sl_bexpr *e = plan->const_rows[r][c];
      if (!sl_type_equal(e->type, plan->out_types[c])) {
        sl_bexpr *cast = SL_ANEW(&a, sl_bexpr);
        cast->kind = SL_BEXPR_CAST;
        cast->type = (sl_type *)plan->out_types[c];
        cast->span = e->span;
        cast->nargs = 1;
        cast->args = SL_ANEW_N(&a, sl_bexpr *, 1);
        cast->args[0] = (sl_bexpr *)e;
        e = cast;
      }
      rc = sl_expr_compile(&a, e, NULL, NULL, &progs[c], err);
    }
    sl_buffer_clear(&one);
    if (rc == SL_OK) {
      int k =
          sl_exec_eval_rows(progs, plan->nout, &none, &sel0, 1, &one, ctx, err);
      rc = k < 0 ? k
           : k == 0
               ? sl_error_set(err, SL_EINVAL, "a row is larger than a buffer")
               : SL_OK;
    }
    if (rc == SL_OK)
      rc = sorted_result_add(&rows, &one, err);
  }
  /* ORDER BY, OFFSET, LIMIT. */
  size_t n = (size_t)rows.rows, k = 0;
  const uint8_t **v = malloc(sizeof *v * (n > 0 ? n : 1));
  if (!v)
    abort();
  for (int i = 0; i < rows.nbufs; i++)
    for (uint32_t j = 0; j < rows.bufs[i].nrows; j++)
      v[k++] = sl_buffer_row(&rows.bufs[i], j);
  if (plan->norder > 0)
    sorted_result_sort(l, plan->order, plan->norder, v, n);
  size_t first = plan->offset > 0 ? (size_t)plan->offset : 0;
  size_t last = n;
  if (plan->limit >= 0 && first + (size_t)plan->limit < last)
    last = first + (size_t)plan->limit;
  sl_sink *sink = NULL;
  if (rc == SL_OK) {
    sl_sink_spec spec = {
        plan->sink_table,     l,    plan->out_names, shell, NULL, false,
        plan->sink_overwrite, false};
    rc = plan->sink->open(&spec, &sink, err);
  }
  sl_buffer out;
  sl_buffer_init(&out, l, 65536);
  out.borrow_strings = true; /* the store keeps the strings */
  for (size_t i = first; i < last && rc == SL_OK; i++) {
    uint8_t *row = sl_buffer_append(&out);
    if (!row) {
      rc = plan->sink->write(sink, &out, err);
      sl_buffer_clear(&out);
      row = sl_buffer_append(&out);
    }
    if (row)
      memcpy(row, v[i], l->width);
  }
  if (rc == SL_OK && out.nrows)
    rc = plan->sink->write(sink, &out, err);
  if (rc == SL_OK && plan->sink->commit)
    rc = plan->sink->commit(sink, err);
  if (sink)
    rc = sl_sink_close_after(plan->sink, sink, rc, err);
  stats->rows_out = last > first ? last - first : 0;
  stats->seconds = sl_clock_seconds() - t0;
  stats->workers = 1;
  free(v);
  sl_buffer_free(&out);
  sl_buffer_free(&one);
  sl_buffer_free(&none);
  sorted_result_free(&rows);
  sl_expr_ctx_free(ctx);
  sl_arena_free(&a);
  return rc;
}
