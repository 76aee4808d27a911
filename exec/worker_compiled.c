/* worker_compiled.c - a worker's steps run by the JIT's functions (jit.h):
 * the kernel over a buffer (filter + tmp or output fields), the lookup
 * kernel (the join's probe in the same loop) and the compiled fold of tmp
 * rows into window state.  Each returns SL_JIT_RETRY when its function
 * handed the step back: nothing it did is visible then (tmp rows and
 * unpublished batches are dropped), and worker.c runs the same step with
 * the interpreter, which reports errors exactly as it always does. */
#include <stdlib.h>
#include <string.h>

#include "worker_ops_int.h"

/* fold_tmp with the compiled fold (q->jit.k_fold, jit.h): it runs until a row
 * needs C (another slice than the last one, a NULL event time, an overflow
 * to report), which sl_worker_fold_row then folds exactly as without the
 * JIT; then the compiled fold goes on from the next row. */
int sl_worker_fold_tmp_compiled(worker_state *s, const uint32_t *sel) {
  exec_query *q = s->q;
  sl_jit_fold_call c;
  memset(&c, 0, sizeof c);
  c.tmp = s->tmp.data;
  c.sel = sel;
  c.origin = s->origin;
  c.wm_rows = s->wm_values.data;
  c.wm_nrows = s->wm_values.data ? s->wm_values.nrows : 0;
  c.n = s->tmp.nrows;
  c.local_wm = s->local_wm;
  c.next_end = s->next_end;
  c.wm_next = s->wm_next;
  for (;;) {
    if (s->last < s->nslices) {
      c.table = s->slices[s->last].table;
      c.slice_start = s->slices[s->last].start;
    } else {
      c.table = NULL;
    }
    c.late = c.rows_state = 0;
    int done = sl_jit_fold_run(q->jit.k_fold, &c);
    s->w->late += c.late;
    s->w->rows_state += c.rows_state;
    s->local_wm = c.local_wm;
    s->next_end = c.next_end;
    if (s->wm_values.data) {
      s->wm_next = c.wm_next;
      s->wm = s->local_wm; /* late merge: the operator's is its own */
    }
    if (done == SL_OK)
      return SL_OK;
    s->w->jit_fold_rows_c++;
    uint32_t r = c.pos;
    uint32_t input_row = s->origin ? s->origin[sel[r]] : sel[r];
    sl_worker_advance_watermark(s, input_row);
    int rc = sl_worker_fold_row(s, sl_buffer_row(&s->tmp, r), s->wm, 0);
    if (rc != SL_OK)
      return rc;
    sl_worker_advance_watermark(s, input_row + 1);
    c.pos = r + 1;
    c.local_wm = s->local_wm;
    c.next_end = s->next_end;
    c.wm_next = s->wm_next;
  }
}

/* The owner's side of repartitioning, compiled (TUMBLE windows only:
 * sl_jit_fold_status).  A received row is late by the watermark of the
 * worker that read it, carried in its tag (as sl_worker_fold_row takes
 * it); tags rise along a sender's rows, so the compiled fold runs over
 * each run of equal tags with that as its watermark.  The worker's own
 * watermark is not touched: the operator's is the inputs' minimum. */
int sl_worker_fold_received_compiled(worker_state *s, const sl_buffer *view,
                                     int64_t *sender_wm) {
  exec_query *q = s->q;
  const sl_row_layout *tl = view->layout;
  const int tag_field = q->partial.tmp_wm_tag;
  const uint32_t n = view->nrows;
  if (n > s->nident) {
    free(s->ident);
    s->ident = malloc(sizeof(uint32_t) * n);
    if (!s->ident)
      abort();
    for (uint32_t i = 0; i < n; i++)
      s->ident[i] = i;
    s->nident = n;
  }
  sl_jit_fold_call c;
  memset(&c, 0, sizeof c);
  c.tmp = view->data;
  c.sel = s->ident;
  for (uint32_t r = 0; r < n;) {
    int64_t tag = SL_FIELD(sl_buffer_row(view, r), tl, tag_field, int64_t);
    uint32_t end = r + 1;
    while (end < n &&
           SL_FIELD(sl_buffer_row(view, end), tl, tag_field, int64_t) == tag)
      end++;
    if (tag > *sender_wm)
      *sender_wm = tag;
    c.pos = r;
    c.n = end;
    while (c.pos < end) {
      bool sliced = s->last < s->nslices;
      c.table = sliced ? s->slices[s->last].table : NULL;
      c.slice_start = sliced ? s->slices[s->last].start : 0;
      c.local_wm = tag;
      c.next_end = s->next_end;
      c.late = c.rows_state = 0;
      int done = sl_jit_fold_run(q->jit.k_fold, &c);
      s->w->late += c.late;
      s->w->rows_state += c.rows_state;
      s->next_end = c.next_end;
      if (done == SL_OK)
        break;
      /* a row it hands back: another slice, a NULL, an overflow */
      s->w->jit_fold_rows_c++;
      int rc = sl_worker_fold_row(s, sl_buffer_row(view, c.pos), tag, 0);
      if (rc != SL_OK)
        return rc;
      c.pos++;
    }
    r = end;
  }
  return SL_OK;
}

/* q->jit.k_main over rows sel[0..n) of buf: the filter (or post-join filter)
 * and every tmp / output field in one loop, then the fold (aggregate) or
 * the batches handed to the coordinator (stateless).  *kept: rows that
 * passed the filter. */
int sl_worker_jit_main(worker_state *s, const sl_buffer *buf,
                       const uint32_t *sel, uint32_t n, sl_buffer *wm_out,
                       uint64_t *kept) {
  exec_query *q = s->q;
  uint32_t nout, next;
  if (q->plan->kind == SL_PLAN_AGGREGATE) {
    /* tmp holds a row for every input row: one call does the buffer */
    sl_buffer_clear(&s->tmp);
    int rc = sl_jit_run_gated(q->jit.k_main, buf, sel, n, s->jsel, &nout,
                              &s->tmp, wm_out, &next, s, s->ctx);
    if (rc != SL_OK || next < n) {
      sl_buffer_clear(&s->tmp);
      return SL_JIT_RETRY;
    }
    *kept += nout;
    /* without a filter the kernel keeps every row and leaves jsel alone */
    bool filtered = q->lookup.join ? q->lookup.post_join_filter != NULL
                                   : q->source.filter != NULL;
    rc = sl_worker_fold_tmp(s, filtered ? s->jsel : sel);
    sl_worker_aggregate_done(s);
    return rc;
  }
  /* stateless: batches are published only when the whole step worked.
   * The kernel computes the watermark of the rows it consumes into wm_out
   * (row k for sel position pos + k); a stateless plan needs only their
   * maximum, folded here chunk by chunk (a step handed back later is
   * redone by the interpreter, whose watermark is the same maximum). */
  bool fold_wm = wm_out && wm_out == &s->wm_values;
  out_batch *head = NULL, *tail = NULL;
  uint32_t pos = 0;
  uint64_t total = 0;
  int rc = SL_OK;
  while (pos < n) {
    out_batch *b = sl_exec_take_batch(s->w, s->q->buffer_size);
    rc = sl_jit_run_gated(q->jit.k_main, buf, sel + pos, n - pos, s->jsel,
                          &nout, &b->buf, wm_out, &next, s, s->ctx);
    if (tail)
      tail->next = b;
    else
      head = b;
    tail = b;
    if (rc != SL_OK)
      break;
    if (next == 0) { /* not even one row fits a new batch */
      rc = SL_JIT_RETRY;
      break;
    }
    if (fold_wm)
      sl_worker_fold_watermark_rows(s, wm_out, next);
    total += nout;
    pos += next;
  }
  worker *w = s->w;
  if (rc != SL_OK) { /* back to the free list, unpublished */
    pthread_mutex_lock(&w->lock);
    tail->next = w->free_batches;
    w->free_batches = head;
    pthread_mutex_unlock(&w->lock);
    return rc;
  }
  *kept += total;
  for (out_batch *b = head; b; b = b->next) /* before the lock */
    sl_worker_keep_extremes(s, &b->buf);
  pthread_mutex_lock(&w->lock);
  for (out_batch *b = head; b;) {
    out_batch *next_b = b->next;
    b->next = NULL;
    if (b->buf.nrows == 0) {
      b->next = w->free_batches;
      w->free_batches = b;
    } else {
      sl_exec_queue_batch_locked(w, b);
    }
    b = next_b;
  }
  pthread_mutex_unlock(&w->lock);
  return SL_OK;
}

/* q->jit.k_lookup over input rows 0..n: the whole step from the source's rows
 * to the state, the join's probe included; SL_JIT_RETRY (nothing done)
 * when the kernel hands the buffer back. */
int sl_worker_jit_lookup(worker_state *s, const sl_buffer *in, uint32_t n,
                         sl_buffer *wm_out) {
  exec_query *q = s->q;
  uint32_t nout, next, passed;
  sl_buffer_clear(&s->tmp);
  int rc = sl_jit_run_lookup(q->jit.k_lookup, &q->jit.lookup_table, in, s->sel,
                             n, s->jsel, &nout, &s->tmp, wm_out, &next, &passed,
                             s->ctx);
  if (rc != SL_OK || next < n) {
    sl_buffer_clear(&s->tmp);
    return SL_JIT_RETRY;
  }
  s->w->rows_filtered += passed;
  s->w->rows_joined += nout;
  /* jsel holds the input row of every tmp row */
  s->origin = NULL;
  rc = sl_worker_fold_tmp(s, s->jsel);
  sl_worker_aggregate_done(s);
  return rc;
}
