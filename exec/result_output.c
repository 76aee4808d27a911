/* result_output.c - the coordinator's result rows on their way to the sink:
 * OFFSET and LIMIT, ORDER BY's sorting, HAVING and the select list over
 * finalized groups, and a stateless query's batches.  Separate from the
 * operators (op_*.c) because every one of them ends here. */
#include <string.h>

#include "coordinator_int.h"

/* Write result rows to the sink, after OFFSET and up to LIMIT (in the
 * order they come: sorted already under ORDER BY).  May change b. */
/* owned: b is a worker's batch the sink may keep (write_owned). */
static int write_result_owned(coordinator *c, sl_buffer *b, bool owned) {
  if (c->limit_reached)
    return SL_OK;
  const sl_plan *plan = c->q->plan;
  if (c->export.fd >= 0 && !c->rows_here) {
    /* A node: OFFSET, ORDER BY and the final LIMIT are the coordinator's;
     * without ORDER BY no more than LIMIT + OFFSET rows are needed. */
    int64_t need =
        plan->limit >= 0 && plan->norder == 0 ? plan->limit + plan->offset : -1;
    if (need >= 0 && c->rows_out + b->nrows >= (uint64_t)need) {
      b->nrows = (uint32_t)((uint64_t)need - c->rows_out);
      c->limit_reached = true;
    }
    c->rows_out += b->nrows;
    return b->nrows ? c->dist->send_rows(&c->export, b, c->err) : SL_OK;
  }
  if (c->skipped < (uint64_t)plan->offset && b->nrows) {
    uint64_t drop = (uint64_t)plan->offset - c->skipped;
    if (drop > b->nrows)
      drop = b->nrows;
    /* Rows move down; their long strings stay where they are. */
    memmove(b->data, b->data + drop * b->layout->width,
            (size_t)(b->nrows - drop) * b->layout->width);
    b->nrows -= (uint32_t)drop;
    c->skipped += drop;
  }
  int64_t limit = plan->limit;
  if (limit >= 0 && c->rows_out + b->nrows >= (uint64_t)limit) {
    b->nrows = (uint32_t)((uint64_t)limit - c->rows_out);
    c->limit_reached = true;
  }
  uint32_t n = b->nrows;
  int rc = !n ? SL_OK
           : owned && c->sc->write_owned && !b->borrow_strings
               ? c->sc->write_owned(c->sink, b, c->err)
               : c->sc->write(c->sink, b, c->err);
  c->rows_out += n;
  return rc;
}

static int write_result(coordinator *c, sl_buffer *b) {
  return write_result_owned(c, b, false);
}

int sl_coord_write_sorted(void *arg, sl_buffer *b) {
  return write_result(arg, b);
}

/* Result rows: kept for sorting under ORDER BY, else written now. */
int sl_coord_emit_result(coordinator *c, sl_buffer *b) {
  if (!c->sorted)
    return write_result(c, b);
  int rc = sorted_result_add(c->sorted, b, c->err);
  uint64_t held = sorted_result_bytes(c->sorted);
  uint64_t total;
  if (sl_memory_grew_over(c->q->memory, &c->sorted_charged, held, &total) &&
      rc == SL_OK)
    rc = sl_memory_over_error(
        c->err, c->q->memory, held, total, "add a LIMIT",
        "ORDER BY's rows (kept until the input ends, to be sorted) hold");
  return rc;
}

int sl_coord_emit_changes(void *arg, sl_buffer *b) {
  return sl_coord_emit_result(arg, b);
}

/* Hand out_rows on (see sl_coord_emit_result). */
int sl_coord_flush_out(coordinator *c) {
  if (c->out_rows.nrows == 0)
    return SL_OK;
  /* A sink that keeps whole buffers (a stage store) takes out_rows, and
   * the next rows go to a new one. */
  bool owned = !c->sorted && c->sc->write_owned && c->export.fd < 0;
  int rc = owned ? write_result_owned(c, &c->out_rows, true)
                 : sl_coord_emit_result(c, &c->out_rows);
  if (!c->out_rows.data)
    sl_buffer_init(&c->out_rows, c->q->out_layout, c->q->buffer_size);
  else
    sl_buffer_clear(&c->out_rows);
  return rc;
}

/* HAVING and the select list over the aggregate rows collected so far. */
int sl_coord_finish_agg_rows(coordinator *c) {
  exec_query *q = c->q;
  uint32_t n = c->agg_rows.nrows;
  for (uint32_t i = 0; i < n; i++)
    c->sel[i] = i;
  int rc;
  if (q->agg.having) {
    rc =
        sl_expr_filter(q->agg.having, &c->agg_rows, c->sel, &n, c->ctx, c->err);
    if (rc != SL_OK)
      return rc;
  }
  uint32_t done = 0;
  bool compiled = q->jit.k_final != NULL;
  while (done < n && !c->limit_reached) {
    int k = -1;
    if (compiled) {
      /* a runtime error hands the rest to the interpreter, which reports
       * it as it would have */
      uint32_t nout, next;
      int rc = sl_jit_run(q->jit.k_final, &c->agg_rows, c->sel + done, n - done,
                          NULL, &nout, &c->out_rows, &next, c->ctx);
      if (rc == SL_OK)
        k = (int)next;
      else
        compiled = false;
    }
    if (!compiled)
      k = sl_exec_eval_rows(q->agg.final_progs, q->nout, &c->agg_rows,
                            c->sel + done, n - done, &c->out_rows, c->ctx,
                            c->err);
    if (k < 0)
      return k;
    if (k == 0 && c->out_rows.nrows == 0)
      return sl_error_set(c->err, SL_EINVAL,
                          "a result row is larger than a buffer; raise SET "
                          "'sluice.buffer-size'");
    done += (uint32_t)k;
    if (done < n ||
        c->out_rows.nrows * q->out_layout->width * 2 > c->out_rows.cap) {
      rc = sl_coord_flush_out(c);
      if (rc != SL_OK)
        return rc;
    }
  }
  sl_buffer_clear(&c->agg_rows);
  return SL_OK;
}

/* Stateless: write every batch finished so far.  Each worker's list is
 * taken whole, so a round ends even while workers keep publishing (the
 * round's watermark must reach a sink feeding another stage). */
int sl_coord_drain_batches(coordinator *c, worker *ws, int n, bool *progress) {
  int rc = SL_OK;
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&ws[i].lock);
    out_batch *b = ws[i].batches;
    ws[i].batches = ws[i].batches_tail = NULL;
    uint64_t bytes = 0;
    int nb = 0;
    for (out_batch *o = b; o; o = o->next, nb++)
      bytes += o->queued_bytes;
    sl_exec_took_locked(&ws[i], nb, bytes);
    pthread_mutex_unlock(&ws[i].lock);
    if (ws[i].node_fd >= 0)
      c->dist->link_credit(&ws[i]);
    while (b) {
      out_batch *next = b->next;
      *progress = true;
      if (rc == SL_OK) /* the sink may keep the batch's buffer */
        rc = c->sorted ? sl_coord_emit_result(c, &b->buf)
                       : write_result_owned(c, &b->buf, true);
      pthread_mutex_lock(&ws[i].lock);
      b->next = ws[i].free_batches;
      ws[i].free_batches = b;
      pthread_mutex_unlock(&ws[i].lock);
      b = next;
    }
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}
