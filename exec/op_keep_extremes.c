/* op_keep_extremes.c - a stream leaf's output rows that cannot equal their
 * windows' MAX or MIN, dropped by the worker that made them (plan.h,
 * keep_extremes; planner/stage_extremes.c says when that holds).
 *
 * NEXMark q7 joins each bid with its window's highest price: every bid
 * below the highest its worker has seen in its window cannot be it.
 * Dropping them here, on every worker, leaves the leaf's one coordinator
 * thread and its stage store a few hundred rows of 4.6 million; the store
 * checks again over all workers' rows (exec/stage_sink.c). */
#include <stddef.h>

#include "executor_int.h"
#include "worker_ops_int.h"

/* In the compiled loop, before the row is written: a bid below its
 * window's highest so far is never copied out (its strings least of all).
 * The check after the loop (below) still runs: a higher bid later in the
 * batch drops one that passed here. */
int32_t sl_worker_extremes_gate(void *worker, int64_t value, int32_t value_null,
                                int64_t time, int32_t time_null) {
  worker_state *s = worker;
  /* NULL: it equals nothing; no event time: it meets no window */
  if (!value_null && !time_null &&
      sl_extremes_keep_value(&s->extremes, value, time))
    return 1;
  s->w->rows_not_kept++;
  return 0;
}

/* Where the compiled loop finds the worker's quick answer (jit.h,
 * sl_jit_gate.bar_offset) from the gate's state, the worker. */
const ptrdiff_t sl_worker_extremes_bar =
    offsetof(worker_state, extremes) + offsetof(sl_running_extremes, bar);

void sl_worker_keep_extremes(worker_state *s, sl_buffer *b) {
  /* the rows the compiled loop dropped by the quick answer */
  s->w->rows_not_kept += s->extremes.bar.dropped;
  s->extremes.bar.dropped = 0;
  if (!s->extremes.x || b->nrows == 0)
    return;
  s->w->rows_not_kept += sl_extremes_filter(&s->extremes, b);
}
