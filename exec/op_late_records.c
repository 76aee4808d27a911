/* op_late_records.c - late records on a worker: found before the pipeline
 * (side-output to a table, or dropped ahead of a staged plan's stages) or
 * by the fold (session windows), and written to the late table
 * (late_output.h).  Separate: it is a path of its own beside the
 * pipeline's. */
#include "late_output.h"
#include "sluice/state/window_assign.h"
#include "worker_ops_int.h"

/* Side-output of session windows under repartitioning: the record read
 * (a row of stream_layout) rides in its tmp row to the key's owner. */
void sl_worker_copy_record_into_tmp(worker_state *s, const uint8_t *record,
                                    uint8_t *tmp) {
  const exec_query *q = s->q;
  const sl_row_layout *sl = q->source.stream_layout;
  for (int f = 0; f < sl->nfields; f++)
    sl_row_copy_field(sl, record, f, q->partial.tmp_layout, tmp,
                      q->partial.tmp_record + f);
}

/* Late records to a table: append row (of stream_layout) to s->late_rows,
 * writing them out first when it is full. */
static int keep_late_row(worker_state *s, const uint8_t *row) {
  if (sl_buffer_append_copy(&s->late_rows, row))
    return SL_OK;
  if (s->late_rows.nrows > 0) {
    int rc = late_output_write(s->q->late.output, &s->late_rows, &s->w->err);
    sl_buffer_clear(&s->late_rows);
    if (rc != SL_OK)
      return rc;
    if (sl_buffer_append_copy(&s->late_rows, row))
      return SL_OK;
  }
  return sl_error_set(&s->w->err, SL_EINVAL,
                      "a late record is larger than a buffer (%u bytes); "
                      "raise SET 'sluice.buffer-size'",
                      s->q->buffer_size);
}

/* Write out the late records kept so far (keep_late_row). */
int sl_worker_write_late_rows(worker_state *s) {
  if (!s->q->late.output || s->late_rows.nrows == 0)
    return SL_OK;
  int rc = late_output_write(s->q->late.output, &s->late_rows, &s->w->err);
  sl_buffer_clear(&s->late_rows);
  return rc;
}

/* Input row i of in, late, to the late table. */
int sl_worker_keep_late_record(worker_state *s, const sl_buffer *in,
                               uint32_t i) {
  return keep_late_row(s, sl_buffer_row(in, i));
}

/* The record a tmp row carries (q->partial.tmp_record), late, to the late
 * table. */
int sl_worker_keep_late_tmp_record(worker_state *s, const uint8_t *tmp) {
  const exec_query *q = s->q;
  const sl_row_layout *sl = q->source.stream_layout;
  for (int f = 0; f < sl->nfields; f++)
    sl_row_copy_field(q->partial.tmp_layout, tmp, q->partial.tmp_record + f, sl,
                      s->late_record, f);
  return keep_late_row(s, s->late_record);
}

/* The late candidates late_sel[0..*ncand) (input rows, ascending): those
 * the filter keeps (a record the query would not have read is not its late
 * record) go to the late table; *ncand becomes how many, late_sel them. */
static int write_late_candidates(worker_state *s, const sl_buffer *in,
                                 uint32_t *ncand) {
  exec_query *q = s->q;
  if (q->source.filter) {
    int rc = sl_expr_filter(q->source.filter, in, s->late_sel, ncand, s->ctx,
                            &s->w->err);
    if (rc != SL_OK)
      return rc;
  }
  for (uint32_t j = 0; j < *ncand; j++) {
    int rc = sl_worker_keep_late_record(s, in, s->late_sel[j]);
    if (rc != SL_OK)
      return rc;
  }
  return sl_worker_write_late_rows(s);
}

/* For the late-record scans below: the watermark (wm_values) and the
 * event time (*time_prog into rowtimes) of each of the first n rows. */
static int eval_times(worker_state *s, const sl_buffer *in, uint32_t n,
                      sl_expr_prog **time_prog) {
  sl_jit_kernel *kt = s->q->jit.k_times;
  if (kt && time_prog == &s->q->late.rowtime_prog) {
    /* Compiled: both in one loop (handed back: the interpreter below). */
    uint32_t nout, next;
    sl_buffer_clear(&s->rowtimes);
    if (sl_jit_run_pre(kt, in, s->sel, n, s->jsel, &nout, &s->rowtimes,
                       &s->wm_values, &next, s->ctx) == SL_OK &&
        next == n && nout == n)
      return SL_OK;
  }
  int rc = sl_worker_eval_watermark(s, in, n);
  sl_buffer_clear(&s->rowtimes);
  int k = rc == SL_OK ? sl_exec_eval_rows(time_prog, 1, in, s->sel, n,
                                          &s->rowtimes, s->ctx, &s->w->err)
                      : rc;
  return k < 0 ? k : SL_OK;
}

/* q->late.fast: might a row of the buffer be late?  The same rule as
 * below, on the time and watermark columns read directly; most buffers
 * have no late record and go on untouched. */
static bool has_late_candidate(const worker_state *s, const sl_buffer *in,
                               uint32_t n) {
  const exec_query *q = s->q;
  const sl_row_layout *l = in->layout;
  const sl_plan_window *pw = &s->plan->window;
  int tf = q->late.time_field, wf = q->late.wm_field;
  int64_t wm = s->local_wm;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *row = sl_buffer_row(in, i);
    if (!sl_row_is_null(row, tf)) {
      int64_t v = SL_FIELD(row, l, tf, int64_t);
      if (all_windows_fired(pw, v, wm))
        return true;
    }
    if (!sl_row_is_null(row, wf)) {
      int64_t w = SL_FIELD(row, l, wf, int64_t) - q->late.wm_shift_us;
      if (w > wm)
        wm = w;
    }
  }
  return false;
}

/* SET 'sluice.late-records' = 'side-output', a windowed aggregate: before
 * the pipeline, find the records all of whose windows have fired by this
 * worker's watermark just before them (as sl_worker_fold_row judges them,
 * and as the owner does under repartitioning, which judges by the reading
 * worker's watermark), and take those the filter keeps out of the buffer
 * into the late table: the pipeline never sees them.  The watermark of
 * every row is evaluated here, where s->sel is still 0..n-1 (wm_values is
 * indexed by input row). */
int sl_worker_route_late_records(worker_state *s, const sl_buffer *in,
                                 uint32_t *n) {
  exec_query *q = s->q;
  if (q->late.fast && !has_late_candidate(s, in, *n))
    return SL_OK; /* the pipeline computes the watermark as usual */
  int rc = eval_times(s, in, *n, &q->late.time_prog);
  if (rc != SL_OK)
    return rc;
  s->wm_ready = true;
  const sl_plan_window *pw = &s->plan->window;
  const sl_row_layout *wl = s->wm_values.layout, *tl = s->rowtimes.layout;
  int64_t wm = s->local_wm;
  uint32_t ncand = 0;
  for (uint32_t i = 0; i < *n; i++) {
    const uint8_t *t = sl_buffer_row(&s->rowtimes, i);
    if (!sl_row_is_null(t, 0)) {
      int64_t v = SL_FIELD(t, tl, 0, int64_t);
      if (all_windows_fired(pw, v, wm))
        s->late_sel[ncand++] = i;
    }
    const uint8_t *w = sl_buffer_row(&s->wm_values, i);
    if (!sl_row_is_null(w, 0) && SL_FIELD(w, wl, 0, int64_t) > wm)
      wm = SL_FIELD(w, wl, 0, int64_t);
  }
  if (ncand == 0)
    return SL_OK;
  rc = write_late_candidates(s, in, &ncand);
  if (rc != SL_OK)
    return rc;
  /* Out of s->sel (both ascending). */
  uint32_t kept = 0;
  for (uint32_t i = 0, j = 0; i < *n; i++) {
    if (j < ncand && s->late_sel[j] == s->sel[i])
      j++;
    else
      s->sel[kept++] = s->sel[i];
  }
  *n = kept;
  return SL_OK;
}

/* A stream feeding a staged plan's stages: drop the records whose event
 * time is at or before the watermark of the rows before them (late, decided
 * per record as for windows, so the stages never wait for them), and fold
 * every row into the watermark.  s->sel becomes the rows kept. */
int sl_worker_drop_late_rows(worker_state *s, const sl_buffer *in,
                             uint32_t *n) {
  int rc = eval_times(s, in, *n, &s->q->late.rowtime_prog);
  if (rc != SL_OK)
    return rc;
  const sl_row_layout *wl = s->wm_values.layout, *tl = s->rowtimes.layout;
  /* Window rows (window_rows) are late when their last window has
   * fired: its end - unit at or before the watermark.  Under HOP and
   * CUMULATE a row whose first windows have fired counts in the later
   * ones (as Flink's TVF assigns it): the stage store assigns the windows,
   * and only this worker knows the watermark that came before the row, so
   * it says where they begin (live_from). */
  const sl_plan_window *pw = s->plan->window_rows ? &s->plan->window : NULL;
  uint32_t kept = 0, ncand = 0;
  s->partly_late = false;
  for (uint32_t i = 0; i < *n; i++) {
    const uint8_t *t = sl_buffer_row(&s->rowtimes, i);
    int64_t v = sl_row_is_null(t, 0) ? 0 : SL_FIELD(t, tl, 0, int64_t);
    int64_t first = WM_MIN;
    if (pw && !sl_row_is_null(t, 0)) { /* the time its last window fires */
      first = first_end(pw, slice_of(pw, v));
      v = last_end(pw, slice_of(pw, v)) - pw->unit_us;
    }
    if (!sl_row_is_null(t, 0) && v <= s->local_wm) {
      if (s->q->late.output)
        s->late_sel[ncand++] = i; /* to the late table, if the filter
                                   * keeps it */
      else
        s->w->late++;
    } else {
      if (pw) {
        int64_t live = WM_MIN;
        if (first != WM_MIN && first - pw->unit_us <= s->local_wm) {
          int64_t step = window_step(pw);
          for (live = first; live - pw->unit_us <= s->local_wm; live += step)
            ;
          s->partly_late = true;
        }
        s->live_from[i] = live;
      }
      s->sel[kept++] = i;
    }
    const uint8_t *w = sl_buffer_row(&s->wm_values, i);
    if (!sl_row_is_null(w, 0) && SL_FIELD(w, wl, 0, int64_t) > s->local_wm)
      s->local_wm = SL_FIELD(w, wl, 0, int64_t);
  }
  s->wm = s->local_wm;
  /* Folded already: what the rest of the step evaluates again (over the
   * rows kept) cannot raise it. */
  sl_buffer_clear(&s->wm_values);
  s->wm_next = 0;
  if (ncand == 0) {
    *n = kept;
    return SL_OK;
  }
  /* Late records to the late table (s->sel lacks them already). */
  *n = kept;
  return write_late_candidates(s, in, &ncand);
}
