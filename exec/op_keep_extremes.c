/* op_keep_extremes.c - a stream leaf's output rows that cannot equal their
 * windows' MAX or MIN, dropped by the worker that made them (plan.h,
 * keep_extremes; planner/stage_extremes.c says when that holds).
 *
 * NEXMark q7 joins each bid with its window's highest price: every bid
 * below the highest its worker has seen in its window cannot be it.
 * Dropping them here, on every worker, leaves the leaf's one coordinator
 * thread and its stage store a few hundred rows of 4.6 million; the store
 * checks again over all workers' rows (exec/stage_sink.c). */
#include "worker_ops_int.h"

void sl_worker_keep_extremes(worker_state *s, sl_buffer *b) {
  if (!s->extremes.x || b->nrows == 0)
    return;
  s->w->rows_not_kept += sl_extremes_filter(&s->extremes, b);
}
