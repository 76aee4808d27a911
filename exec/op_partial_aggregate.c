/* op_partial_aggregate.c - the per-record step of a GROUP BY: evaluate
 * each record's time, keys and arguments into a tmp row, then fold it into
 * this worker's window state (op_window_state.c) or send it to the worker
 * owning its key (repartitioning, exchange.c). */
#include "worker_ops_int.h"

/* Fold the evaluated tmp rows of s->tmp into state (or send them to their
 * owners); tmp row r comes from row sel[r] of the buffer being processed. */
int sl_worker_fold_tmp(worker_state *s, const uint32_t *sel) {
  exec_query *q = s->q;
  if (q->jit.k_fold && !q->exchange.channels)
    return sl_worker_fold_tmp_compiled(s, sel);
  const sl_plan_window *pw = &q->plan->window;
  const sl_row_layout *tl = q->partial.tmp_layout;
  const sl_row_layout *kl = q->agg.key_layout;
  bool exchange = q->exchange.channels != NULL;
  int me = q->exchange.xbase + s->w->index; /* in the exchange */
  /* the owners of all rows in one compiled loop, else per row below */
  bool routed = exchange && q->jit.k_route;
  if (routed)
    sl_jit_route_run(q->jit.k_route, s->tmp.data, s->tmp.nrows, s->dest);
  {
    int64_t proc_now = pw->proctime ? sl_now_us() : 0;
    /* the keys of the rows folded here, hashed SL_FOLD_AHEAD rows early
     * (their slots prefetched) when the owners are known in advance */
    uint64_t ahead[SL_FOLD_AHEAD] = {0};
    const uint32_t n = s->tmp.nrows;
    bool look = routed && sl_worker_fold_ahead_pays(s);
    for (uint32_t r = 0; look && r < n && r < SL_FOLD_AHEAD; r++)
      if ((int)s->dest[r] == me)
        ahead[r] = sl_worker_fold_ahead(s, sl_buffer_row(&s->tmp, r));
    for (uint32_t r = 0; r < n; r++) {
      uint8_t *row = sl_buffer_row(&s->tmp, r);
      uint64_t hash = look ? ahead[r % SL_FOLD_AHEAD] : 0;
      if (look && r + SL_FOLD_AHEAD < n &&
          (int)s->dest[r + SL_FOLD_AHEAD] == me)
        ahead[r % SL_FOLD_AHEAD] =
            sl_worker_fold_ahead(s, sl_buffer_row(&s->tmp, r + SL_FOLD_AHEAD));
      uint32_t at = sel[r];
      uint32_t input_row = s->origin ? s->origin[at] : at;
      sl_worker_advance_watermark(s, input_row); /* the rows before this one */
      s->late_input_row = input_row;
      int rc;
      if (!exchange) {
        rc = sl_worker_fold_row(s, row, s->wm, proc_now);
      } else {
        /* The owner of the key folds it, judging lateness by its own
         * watermark; the record carries ours. */
        SL_FIELD(row, tl, q->partial.tmp_wm_tag, int64_t) = s->local_wm;
        if (q->partial.tmp_record >= 0)
          sl_worker_copy_record_into_tmp(
              s, sl_buffer_row(s->late_in, input_row), row);
        int dest;
        if (routed) {
          dest = (int)s->dest[r];
        } else {
          sl_worker_key_row_of(s, row);
          /* The owner from the hash's high bits: group tables index by the
           * low bits, and an owner's keys must not all share them (the
           * compiled route computes the same). */
          dest = (int)((sl_key_hash(kl, s->keyrow) >> 32) %
                       (uint64_t)q->exchange.xn);
        }
        if (dest == me && look) {
          rc = sl_worker_fold_row_hashed(s, row, s->local_wm, proc_now, hash);
        } else if (dest == me) {
          rc = sl_worker_fold_row(s, row, s->local_wm, proc_now);
        } else {
          rc = sl_exchange_send(s, dest, row);
        }
      }
      if (rc != SL_OK)
        return rc;
      sl_worker_advance_watermark(s, input_row + 1); /* and this one */
    }
  }
  return SL_OK;
}

/* After a buffer's rows are folded: processing-time windows close by the
 * clock. */
void sl_worker_aggregate_done(worker_state *s) {
  const sl_plan *plan = s->q->plan;
  if (plan->windowed && plan->window.proctime) {
    s->local_wm = sl_now_us();
    if (!s->q->exchange.channels)
      s->wm = s->local_wm;
  }
}

int sl_worker_aggregate(worker_state *s, const sl_buffer *in,
                        const uint32_t *sel, uint32_t n) {
  exec_query *q = s->q;
  uint32_t done = 0;
  while (done < n) {
    sl_buffer_clear(&s->tmp);
    int k = sl_worker_eval_rows(s, q->partial.tmp_progs,
                                q->partial.tmp_layout->nfields, in, sel + done,
                                n - done, &s->tmp);
    if (k < 0)
      return k;
    if (k == 0)
      return sl_error_set(&s->w->err, SL_EINVAL,
                          "a record's keys and arguments are larger than a "
                          "buffer; raise SET 'sluice.buffer-size'");
    int rc = sl_worker_fold_tmp(s, sel + done);
    if (rc != SL_OK)
      return rc;
    done += (uint32_t)k;
  }
  sl_worker_aggregate_done(s);
  return SL_OK;
}
