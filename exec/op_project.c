/* op_project.c - the projection of a stateless query: the select list
 * over a buffer's rows into output batches the coordinator writes. */
#include "worker_ops_int.h"

static out_batch *new_batch(worker_state *s) {
  return sl_exec_take_batch(s->w, s->q->buffer_size);
}

static void publish_batch(worker_state *s, out_batch *b) {
  sl_worker_keep_extremes(s, &b->buf);
  s->news = true;
  sl_exec_publish_batch(s->w, b);
}

/* Window rows whose first windows had fired: where their windows begin,
 * in the leaf's hidden last column (NULL, as the plan writes it, for the
 * others). */
static void mark_live_windows(worker_state *s, sl_buffer *out,
                              uint32_t first_row, const uint32_t *sel,
                              uint32_t k) {
  const sl_row_layout *l = out->layout;
  int f = l->nfields - 1;
  for (uint32_t j = 0; j < k; j++) {
    uint32_t i = s->origin ? s->origin[sel[j]] : sel[j];
    if (s->live_from[i] == WM_MIN)
      continue;
    uint8_t *row = sl_buffer_row(out, first_row + j);
    sl_row_set_null(row, f, false);
    SL_FIELD(row, l, f, int64_t) = s->live_from[i];
  }
}

int sl_worker_project(worker_state *s, const sl_buffer *in, const uint32_t *sel,
                      uint32_t n) {
  exec_query *q = s->q;
  uint32_t done = 0;
  while (done < n) {
    out_batch *b = new_batch(s);
    uint32_t first_row = b->buf.nrows;
    int k = sl_worker_eval_rows(s, q->project.out_progs, q->plan->nout, in,
                                sel + done, n - done, &b->buf);
    if (k < 0) {
      publish_batch(s, b);
      return k;
    }
    if (s->partly_late)
      mark_live_windows(s, &b->buf, first_row, sel + done, (uint32_t)k);
    if (k == 0 && b->buf.nrows == 0)
      return sl_error_set(&s->w->err, SL_EINVAL,
                          "an output row is larger than a buffer (%u bytes); "
                          "raise SET 'sluice.buffer-size'",
                          q->buffer_size);
    done += (uint32_t)k;
    publish_batch(s, b);
  }
  return SL_OK;
}
