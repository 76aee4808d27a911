/* worker.c - one worker thread: read its share of the stream and run the
 * whole pipeline on it, keeping its own partial window state.
 *
 * Per buffer: (late records, op_late_records.c), filter, (lookup join,
 * op_lookup_join.c), then either project into output batches
 * (op_project.c), or evaluate event time, watermark, group keys and
 * aggregate arguments into a "tmp" row per record and fold each record
 * into the window state (op_partial_aggregate.c, op_window_state.c).
 * After each buffer the worker hands over every window its own watermark
 * has passed (late merge: the coordinator merges the partials of all
 * workers).  This file is the driver: the source loop, the steps of a
 * buffer (interpreted, or the JIT's: worker_compiled.c), the watermark,
 * the exchange's timing and backpressure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sluice/common/clock.h"
#include "sluice/state/window_assign.h"
#include "worker_ops_int.h"

/* Whether dest should hear from this worker at the end of an input
 * buffer rather than when the slot for it is full: when the slot is half
 * full anyway, or when this worker's watermark has moved into another
 * slice since dest last heard from it (dest may be able to fire a window:
 * then even an empty slot goes, carrying the watermark, or an owner that
 * gets no rows from here would never fire), or when the watermark moved
 * at all for session windows (a session closes at any time).  Publishing
 * every buffer's few rows would send mostly empty slots. */
static bool exchange_due(worker_state *s, int dest) {
  bool active = s->out_active[dest];
  if (active) {
    const sl_buffer *b = &s->out_slots[dest];
    if ((uint64_t)b->nrows * b->layout->width + b->heap_used >= b->cap / 2)
      return true;
  }
  const sl_plan *plan = s->plan;
  if (!plan->windowed)
    return false; /* a global aggregate needs the rows only at the end */
  const sl_plan_window *pw = &plan->window;
  if (pw->proctime)
    return active;
  int64_t was = s->sent_wm[dest], now = s->local_wm;
  if (now == was || now == WM_MIN)
    return false;
  if (pw->kind == SL_WINDOW_SESSION || was == WM_MIN || now == WM_MAX)
    return true;
  return slice_of(pw, was + pw->unit_us) != slice_of(pw, now + pw->unit_us);
}

/* Whether the coordinator has news from this worker (see worker_state's
 * news): it is woken for that, or else finds the rest (progress, event
 * counts) on its own periodic wake-up. */
static bool worth_waking(worker_state *s) {
  bool news = s->news;
  s->news = false;
  int64_t was = s->signalled_wm, now = s->wm;
  if (now == was)
    return news;
  s->signalled_wm = now;
  const sl_plan_window *pw = &s->plan->window;
  if (s->plan->kind != SL_PLAN_AGGREGATE || !s->plan->windowed)
    return news; /* no window waits on the watermark */
  if (pw->kind == SL_WINDOW_SESSION || was == WM_MIN || now == WM_MAX)
    return true;
  return news ||
         slice_of(pw, was + pw->unit_us) != slice_of(pw, now + pw->unit_us);
}

/* Fold the first n rows of watermark values wm (their order aside: a
 * stateless step's) into the worker's watermark. */
void sl_worker_fold_watermark_rows(worker_state *s, const sl_buffer *wm,
                                   uint32_t n) {
  const sl_row_layout *l = wm->layout;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *row = wm->data + (size_t)i * l->width;
    if (!sl_row_is_null(row, 0) && SL_FIELD(row, l, 0, int64_t) > s->local_wm)
      s->local_wm = SL_FIELD(row, l, 0, int64_t);
  }
  if (!s->input_wm)
    s->wm = s->local_wm;
}

/* Fold the watermark of input rows [wm_next, upto) into the worker's. */
void sl_worker_advance_watermark(worker_state *s, uint32_t upto) {
  if (!s->wm_values.data)
    return;
  const sl_row_layout *l = s->wm_values.layout;
  for (uint32_t i = s->wm_next; i < upto && i < s->wm_values.nrows; i++) {
    const uint8_t *row = sl_buffer_row(&s->wm_values, i);
    if (!sl_row_is_null(row, 0) && SL_FIELD(row, l, 0, int64_t) > s->local_wm)
      s->local_wm = SL_FIELD(row, l, 0, int64_t);
  }
  if (upto > s->wm_next)
    s->wm_next = upto;
  if (!s->input_wm)
    s->wm = s->local_wm; /* late merge: the operator's is its own */
}

/* ---- a buffer's path (the compiled steps: worker_compiled.c) ------------- */

static int process_rows(worker_state *s, const sl_buffer *buf,
                        const uint32_t *sel, uint32_t n) {
  return s->plan->kind == SL_PLAN_STATELESS
             ? sl_worker_project(s, buf, sel, n)
             : sl_worker_aggregate(s, buf, sel, n);
}

static int process_filtered(worker_state *s, const sl_buffer *in, uint32_t n);
/* What the JIT's functions did with one buffer (process_filtered). */
typedef struct jit_use {
  bool ran;  /* a compiled function did (its share of) the step */
  bool back; /* a compiled step was handed back to, or left to, the
              * interpreter */
} jit_use;
static int process_steps(worker_state *s, const sl_buffer *in, uint32_t n,
                         jit_use *use);

/* The WATERMARK expression of input rows 0..n (s->sel is 0..n-1 here). */
int sl_worker_eval_watermark(worker_state *s, const sl_buffer *in, uint32_t n) {
  sl_buffer_clear(&s->wm_values);
  int k = sl_exec_eval_rows(&s->q->source.wm_prog, 1, in, s->sel, n,
                            &s->wm_values, s->ctx, &s->w->err);
  return k < 0 ? k : SL_OK;
}

static int process_buffer(worker_state *s, const sl_buffer *in) {
  exec_query *q = s->q;
  uint32_t n = in->nrows;
  for (uint32_t i = 0; i < n; i++)
    s->sel[i] = i;
  int rc;
  if (q->late.rowtime_prog) {
    rc = sl_worker_drop_late_rows(s, in, &n);
    if (rc != SL_OK)
      return rc;
    return process_filtered(s, in, n);
  }
  s->wm_ready = false;
  /* Session windows under late merge: late records found by the fold go
   * to the late table (see late_in). */
  bool sessions_late = q->late.output && s->plan->kind == SL_PLAN_AGGREGATE &&
                       s->plan->window.kind == SL_WINDOW_SESSION;
  s->late_in = sessions_late ? in : NULL;
  if (q->source.wm_prog) {
    s->wm_next = 0;
    if (q->late.time_prog) { /* late records to their table, first */
      rc = sl_worker_route_late_records(s, in, &n);
      if (rc != SL_OK)
        return rc;
    } else if (!q->jit.handle) {
      /* compiled: in the first kernel's loop (process_filtered) */
      rc = sl_worker_eval_watermark(s, in, n);
      if (rc != SL_OK)
        return rc;
    }
  }
  rc = process_filtered(s, in, n);
  /* Rows after the last one aggregated count for the watermark too. */
  sl_worker_advance_watermark(s, in->nrows);
  s->late_in = NULL;
  return rc == SL_OK ? sl_worker_write_late_rows(s) : rc;
}

/* The pipeline over a buffer's rows sel[0..n), counted for EXPLAIN ANALYZE
 * (worker.jit_*): with the JIT's functions, a buffer ran compiled when
 * compiled functions did every step of it; otherwise a step handed it back
 * to the interpreter (SL_JIT_RETRY: an error to report, rows that do not
 * fit) or left it there (window rows partly late). */
static int process_filtered(worker_state *s, const sl_buffer *in, uint32_t n) {
  jit_use use = {false, false};
  int rc = process_steps(s, in, n, &use);
  worker *w = s->w;
  if (s->q->jit.handle && use.ran && !use.back) {
    w->jit_buffers++;
    w->jit_rows += n;
  } else if (s->q->jit.handle) {
    w->jit_back_buffers++;
    w->jit_back_rows += n;
  }
  return rc;
}

static int process_steps(worker_state *s, const sl_buffer *in, uint32_t n,
                         jit_use *use) {
  exec_query *q = s->q;
  int rc;
  /* The kernels compute the watermark unless it was (into scratch then:
   * a kernel that computes it needs somewhere to put it). */
  sl_buffer *wm_out = !q->source.wm_prog ? NULL
                      : s->wm_ready      ? &s->wm_scratch
                                         : &s->wm_values;
  /* A buffer with partly late window rows goes the interpreted way. */
  bool compiled = !s->partly_late;
  if (q->jit.k_lookup && compiled) {
    rc = sl_worker_jit_lookup(s, in, n, wm_out);
    use->ran = rc != SL_JIT_RETRY;
    if (use->ran)
      return rc;
  }
  if (q->jit.k_main && !q->lookup.join && compiled) {
    /* the whole pipeline up to the state (or the output) in one loop */
    s->origin = NULL;
    rc = sl_worker_jit_main(s, in, s->sel, n, wm_out, &s->w->rows_filtered);
    use->ran = rc != SL_JIT_RETRY;
    if (use->ran)
      return rc;
  }
  /* Without a join, the interpreter does the whole step from here; with
   * one, each compiled loop below says what it did. */
  if (!q->lookup.join && q->jit.handle)
    use->back = true;
  /* A join: the stream filter and the join keys in one compiled loop */
  const sl_buffer *pre = NULL;
  if (q->jit.k_join) {
    uint32_t nf, next;
    sl_buffer_clear(&s->keys);
    if (sl_jit_run_pre(q->jit.k_join, in, s->sel, n, s->jsel, &nf, &s->keys,
                       wm_out, &next, s->ctx) == SL_OK &&
        next == n) {
      if (q->source.filter)
        memcpy(s->sel, s->jsel, sizeof(uint32_t) * nf);
      n = nf;
      pre = &s->keys;
      use->ran = true;
    } else {
      sl_buffer_clear(&s->keys);
      use->back = true;
    }
  }
  /* Handed back (or not compiled): the interpreter, from the watermark on */
  if (!pre && q->jit.handle && q->source.wm_prog && !s->wm_ready) {
    rc = sl_worker_eval_watermark(s, in, n);
    if (rc != SL_OK)
      return rc;
  }
  if (!pre && q->source.filter) {
    rc = sl_expr_filter(q->source.filter, in, s->sel, &n, s->ctx, &s->w->err);
    if (rc != SL_OK)
      return rc;
  }
  s->w->rows_filtered += n;
  if (!q->lookup.join) {
    s->origin = NULL;
    return process_rows(s, in, s->sel, n);
  }
  s->origin = s->joined_origin;
  uint32_t done = 0;
  while (done < n) {
    uint32_t consumed, nj;
    rc = sl_worker_probe(s, in, s->sel + done, n - done, pre, done, &consumed,
                         &nj);
    if (rc != SL_OK)
      return rc;
    if (consumed == 0 && n - done > 0)
      return sl_error_set(&s->w->err, SL_EINVAL,
                          "a stream record matches more table rows than fit "
                          "in a buffer; raise SET 'sluice.buffer-size'");
    done += consumed;
    if (q->jit.k_main && compiled) {
      rc = sl_worker_jit_main(s, &s->joined, s->sel2, nj, NULL,
                              &s->w->rows_joined);
      if (rc != SL_JIT_RETRY) {
        use->ran = true;
        if (rc != SL_OK)
          return rc;
        continue;
      }
    }
    if (q->jit.handle)
      use->back = true; /* these joined rows: the interpreter */
    if (q->lookup.post_join_filter) {
      rc = sl_expr_filter(q->lookup.post_join_filter, &s->joined, s->sel2, &nj,
                          s->ctx, &s->w->err);
      if (rc != SL_OK)
        return rc;
    }
    s->w->rows_joined += nj;
    rc = process_rows(s, &s->joined, s->sel2, nj);
    if (rc != SL_OK)
      return rc;
  }
  return SL_OK;
}

/* Raise *max to v (the query's largest watermark, query_shared.wm_max). */
static void atomic_raise(_Atomic int64_t *max, int64_t v) {
  int64_t was = atomic_load_explicit(max, memory_order_relaxed);
  while (v > was &&
         !atomic_compare_exchange_weak_explicit(
             max, &was, v, memory_order_relaxed, memory_order_relaxed))
    ;
}

/* SET 'table.exec.source.idle-timeout': a worker whose source gave no row
 * for that long is idle.  An idle worker must not hold the others back
 * (Flink's meaning: it leaves the minimum), so its watermark moves up to
 * the largest that the query's other workers still reading have reached,
 * in this process (query_shared.wm_max: every leaf of a join) and, under
 * repartitioning, among the exchange's members on every node.  And when
 * every source is quiet (a followed file nobody appends to), it moves on
 * with the clock from where its last rows left it, as if event time kept
 * pace with the wall clock, so the windows after the last row fire.  A row
 * that comes later below it is late. */
static void advance_if_idle(worker_state *s, bool got_rows, double now) {
  exec_query *q = s->q;
  if (got_rows || s->rows_at == 0) {
    s->rows_at = now;
    s->wm_at_rows = s->local_wm;
  }
  if (s->local_wm != WM_MIN && s->local_wm != WM_MAX)
    atomic_raise(&q->shared->wm_max, s->local_wm);
  double quiet = now - s->rows_at;
  if (got_rows || quiet < q->source.idle_timeout)
    return;
  int64_t wm = atomic_load_explicit(&q->shared->wm_max, memory_order_relaxed);
  if (s->input_wm) /* the exchange's members, on every node */
    for (int p = 0; p < q->exchange.xn; p++)
      if (!s->input_done[p] && s->input_wm[p] > wm && s->input_wm[p] != WM_MAX)
        wm = s->input_wm[p];
  if (s->wm_at_rows != WM_MIN) {
    double moved = (double)s->wm_at_rows + quiet * 1e6;
    int64_t by_clock = moved >= 9.2e18 ? WM_MAX - 1 : (int64_t)moved;
    if (by_clock > wm)
      wm = by_clock;
  }
  if (wm != WM_MIN && wm > s->local_wm) {
    s->local_wm = wm;
    if (!s->input_wm)
      s->wm = s->local_wm;
  }
}

/* Backpressure: while this worker's output queue is over its bound (the
 * coordinator, writing to a slow consumer, has not taken it), read no more
 * input.  What other workers send here is still drained and its windows
 * handed over, as a worker waiting for a channel's credit does: they may
 * be waiting for this one, and the coordinator for their watermarks. */
static int wait_for_room(worker_state *s) {
  worker *w = s->w;
  int rc = SL_OK;
  while (rc == SL_OK && !atomic_load(w->cancel) &&
         sl_exec_wait_drained(w, s->q->exchange.channels ? 5 : 20)) {
    if (!s->q->exchange.channels)
      continue;
    bool got = false;
    rc = sl_exchange_drain(s, &got);
    if (rc == SL_OK)
      rc = sl_worker_write_late_rows(s);
    if (rc == SL_OK && got)
      rc = sl_worker_hand_over_windows(s);
    if (got)
      sl_exec_signal(w);
  }
  return rc;
}

/* The worker's state and buffers for a query: sized for the input
 * buffers' rows (*max_rows, in holds the source's copied rows). */
static void set_up_state(worker_state *s, worker *w, sl_buffer *in,
                         uint32_t *max_rows_out) {
  exec_query *q = w->q;
  const sl_plan *plan = q->plan;
  memset(s, 0, sizeof *s);
  s->w = w;
  s->q = q;
  s->plan = plan;
  s->ctx = sl_expr_ctx_new();
  s->extremes.x = plan->keep_extremes;
  s->wm = WM_MIN;
  s->local_wm = WM_MIN;
  s->next_end = WM_MAX;
  s->signalled_wm = WM_MIN;
  int n = q->exchange.xn;
  if (q->exchange.channels) {
    s->input_wm = malloc(sizeof(int64_t) * (size_t)n);
    s->input_done = calloc((size_t)n, sizeof(bool));
    s->out_slots = calloc((size_t)n, sizeof(sl_buffer));
    s->out_active = calloc((size_t)n, sizeof(bool));
    s->sent_wm = malloc(sizeof(int64_t) * (size_t)n);
    if (!s->input_wm || !s->input_done || !s->out_slots || !s->out_active ||
        !s->sent_wm)
      abort();
    for (int p = 0; p < n; p++)
      s->input_wm[p] = s->sent_wm[p] = WM_MIN;
  }
  sl_buffer_init(in, q->source.stream_layout, q->buffer_size);
  /* Rows as the buffers really hold them (their capacity is rounded up). */
  uint32_t max_rows = in->cap / q->source.stream_layout->width + 1;
  *max_rows_out = max_rows;
  s->sel = malloc(sizeof(uint32_t) * max_rows);
  if (plan->window_rows) {
    s->live_from = malloc(sizeof(int64_t) * max_rows);
    if (!s->live_from)
      abort();
  }
  const sl_row_layout *jl =
      q->lookup.join ? q->lookup.joined_layout : q->source.stream_layout;
  uint32_t max_joined = q->buffer_size / jl->width + 1;
  if (q->lookup.join) {
    sl_buffer_init(&s->joined, q->lookup.joined_layout,
                   max_rows * q->lookup.joined_layout->width);
    if (s->joined.cap / jl->width + 1 > max_joined)
      max_joined = s->joined.cap / jl->width + 1;
    /* One per joined row. */
    s->joined_origin = malloc(sizeof(uint32_t) * (max_joined + 1));
    if (!s->joined_origin)
      abort();
  }
  s->sel2 = malloc(sizeof(uint32_t) *
                   (max_joined > max_rows ? max_joined : max_rows));
  if (q->jit.k_join) {
    /* every stream row's key (strings borrowed from the input) */
    sl_buffer_init(&s->keys, q->lookup.join_key_layout,
                   max_rows * q->lookup.join_key_layout->width +
                       q->buffer_size);
    s->keys.borrow_strings = true;
  }
  if (q->source.wm_prog)
    sl_buffer_init(&s->wm_values, q->source.wm_layout,
                   max_rows * q->source.wm_layout->width + 64);
  if (q->late.rowtime_prog || q->late.time_prog)
    sl_buffer_init(&s->rowtimes, q->late.rowtime_layout,
                   max_rows * q->late.rowtime_layout->width + 64);
  if (q->late.output) {
    sl_buffer_init(&s->late_rows, q->source.stream_layout, q->buffer_size);
    s->late_sel = malloc(sizeof(uint32_t) * max_rows);
    if (!s->late_sel)
      abort();
    if (q->partial.tmp_record >= 0) {
      s->late_record = calloc(1, q->source.stream_layout->width);
      if (!s->late_record)
        abort();
    }
    if (q->source.wm_prog)
      sl_buffer_init(&s->wm_scratch, q->source.wm_layout,
                     max_rows * q->source.wm_layout->width + 64);
  }
  /* tmp holds one row per input row plus room for long strings. */
  const sl_row_layout *tl =
      q->partial.tmp_layout ? q->partial.tmp_layout : q->source.stream_layout;
  uint32_t tmp_rows = max_joined > max_rows ? max_joined : max_rows;
  uint32_t kw =
      q->lookup.join_key_layout ? q->lookup.join_key_layout->width : 0;
  uint32_t tw = tl->width > kw ? tl->width : kw;
  sl_buffer_init(&s->tmp, tl, tmp_rows * tw + q->buffer_size);
  /* jsel: the rows a kernel kept, one per row it wrote into tmp (a lookup
   * kernel writes one per match, as many as tmp holds) */
  s->jsel = malloc(sizeof(uint32_t) * (s->tmp.cap / tl->width + 1 > tmp_rows
                                           ? s->tmp.cap / tl->width + 1
                                           : tmp_rows));
  if (q->jit.k_route) /* the owner of every tmp row */
    s->dest = malloc(sizeof(uint32_t) * (s->tmp.cap / tl->width + 1));
  /* tmp rows (keys, arguments, join keys) live only while the input buffer
   * they come from does. */
  s->tmp.borrow_strings = true;
  if (q->agg.key_layout)
    s->keyrow = calloc(1, q->agg.key_layout->width + 8);
  if (!s->sel || !s->sel2 || !s->jsel || (q->agg.key_layout && !s->keyrow) ||
      (q->jit.k_route && !s->dest))
    abort();
}

/* After a buffer (done: the source's last): send what it produced for
 * other workers and fold what they sent here, end an epoch if one is due,
 * hand over what the watermark closed, and wake the coordinator if it has
 * news. */
static int after_buffer(worker_state *s, const sl_buffer *buf, bool done) {
  worker *w = s->w;
  exec_query *q = s->q;
  const sl_plan *plan = q->plan;
  int n = q->exchange.xn, me = q->exchange.xbase + w->index;
  int rc = SL_OK;
  if (q->exchange.channels) {
    /* Send what this buffer produced for other workers, then fold what
     * they sent here. */
    s->input_wm[me] = s->local_wm;
    for (int d = 0; d < n && rc == SL_OK; d++)
      if (d != me && exchange_due(s, d))
        rc = sl_exchange_flush(s, d, true);
    bool got = false;
    if (rc == SL_OK)
      rc = sl_exchange_drain(s, &got);
    if (rc == SL_OK) /* late records the owner found among them */
      rc = sl_worker_write_late_rows(s);
    if (rc != SL_OK)
      return rc;
  }
  if (q->epoch.bytes && plan->kind == SL_PLAN_AGGREGATE && rc == SL_OK) {
    s->epoch_in += (uint64_t)buf->nrows * buf->layout->width;
    s->epoch_rows_in += buf->nrows;
    double now = q->epoch.seconds > 0 ? sl_clock_seconds() : 0;
    if (s->epoch_in >= q->epoch.bytes ||
        (q->epoch.rows && s->epoch_rows_in >= q->epoch.rows) ||
        (q->epoch.seconds > 0 && now - s->epoch_began >= q->epoch.seconds)) {
      s->epoch_in = 0;
      s->epoch_rows_in = 0;
      s->epoch_began = now;
      rc = sl_worker_hand_over_epoch(s);
    }
  }
  if (rc == SL_OK && plan->kind == SL_PLAN_AGGREGATE)
    rc = sl_worker_hand_over_windows(s);
  else {
    pthread_mutex_lock(&w->lock);
    w->published_wm = s->wm;
    pthread_mutex_unlock(&w->lock);
  }
  if (rc != SL_OK || done || worth_waking(s))
    sl_exec_signal(w);
  return rc;
}

/* Read the source to its end (or a cancel or an error), running the
 * pipeline over every buffer. */
static int read_source(worker_state *s, sl_source *src, sl_buffer *in,
                       uint32_t max_rows) {
  worker *w = s->w;
  exec_query *q = s->q;
  const sl_plan *plan = q->plan;
  int rc = SL_OK;
  bool done = false;
  while (rc == SL_OK && !done) {
    if (atomic_load(w->cancel))
      break;
    sl_buffer_clear(in);
    double t0 = sl_clock_seconds();
    /* rows the source lends (no copy), else rows it copies into in */
    const sl_source_connector *sc = plan->inputs[0].connector;
    const sl_buffer *lent = NULL;
    if (sc->lend)
      rc = sc->lend(src, max_rows - 1, &lent, &done, &w->err);
    if (rc == SL_OK && !lent)
      rc = sc->next(src, in, &done, &w->err);
    double t1 = sl_clock_seconds();
    w->source_seconds += t1 - t0;
    if (rc != SL_OK)
      break;
    const sl_buffer *buf = lent ? lent : in;
    atomic_fetch_add_explicit(&w->events, buf->nrows, memory_order_relaxed);
    if (buf->nrows > 0)
      rc = process_buffer(s, buf);
    w->pipeline_seconds += sl_clock_seconds() - t1;
    if (rc != SL_OK)
      break;
    if (q->source.idle_timeout > 0 && !done)
      advance_if_idle(s, buf->nrows > 0, t1);
    if (done) { /* the end of a bounded source fires every window */
      s->local_wm = WM_MAX;
      if (!q->exchange.channels)
        s->wm = WM_MAX;
    }
    rc = after_buffer(s, buf, done);
    /* Backpressure (executor_int.h): the source waits while the output
     * queue is full. */
    if (rc == SL_OK && !done)
      rc = wait_for_room(s);
  }
  return rc;
}

/* Repartition: this worker's input is done.  Tell the others, then keep
 * folding what they send until every one of them has finished too. */
static int finish_exchange(worker_state *s, int rc) {
  worker *w = s->w;
  exec_query *q = s->q;
  int n = q->exchange.xn, me = q->exchange.xbase + w->index;
  s->input_done[me] = true;
  for (int d = 0; d < n; d++)
    if (d != me) {
      if (rc == SL_OK)
        rc = sl_exchange_flush(s, d, false);
      sl_channel_close(q->exchange.channels[me * n + d]);
    }
  while (rc == SL_OK && !atomic_load(w->cancel)) {
    bool got = false;
    rc = sl_exchange_drain(s, &got);
    if (rc == SL_OK)
      rc = sl_worker_write_late_rows(s);
    if (rc != SL_OK)
      break;
    rc = sl_worker_hand_over_windows(s);
    sl_exec_signal(w);
    int waiting = -1;
    for (int p = 0; p < n; p++)
      if (!s->input_done[p])
        waiting = p;
    if (waiting < 0)
      break;
    if (!got)
      sl_channel_wait_slot(q->exchange.channels[waiting * n + me], 1000000);
  }
  /* The others must not wait for this one; what they then meet is a
   * consequence (SL_ECANCELLED), and this one's error the cause. */
  if (rc != SL_OK)
    for (int d = 0; d < n; d++)
      if (d != me) {
        sl_channel_abort(q->exchange.channels[me * n + d], SL_ECANCELLED);
        sl_channel_abort(q->exchange.channels[d * n + me], SL_ECANCELLED);
      }
  return rc;
}

/* The source's statistics, then close it. */
static void close_source(worker *w, sl_source *src) {
  const sl_plan *plan = w->q->plan;
  sl_source_stats st;
  memset(&st, 0, sizeof st);
  if (plan->inputs[0].connector->stats)
    plan->inputs[0].connector->stats(src, &st);
  w->skipped = st.skipped_rows;
  w->input_bytes = st.bytes;
  plan->inputs[0].connector->close(src);
}

/* Free the worker's state; its session store goes to the coordinator,
 * which may still merge its states. */
static void free_state(worker_state *s, sl_buffer *in) {
  worker *w = s->w;
  exec_query *q = s->q;
  sl_extremes_free(&s->extremes);
  for (int i = 0; i < s->nslices; i++) {
    sl_group_table_free(s->slices[i].table);
    free(s->slices[i].table);
  }
  free(s->slices);
  sl_memory_charge(q->memory, &s->memory_charged, 0);
  w->sessions = s->sessions; /* its states may still be merged */
  /* ... so it stays on the account until the coordinator frees it. */
  if (s->sessions)
    sl_memory_charge(q->memory, &w->sessions_charged,
                     session_store_bytes(s->sessions));
  free(s->sel);
  free(s->sel2);
  free(s->live_from);
  free(s->jsel);
  free(s->dest);
  free(s->ident);
  free(s->keyrow);
  free(s->input_wm);
  free(s->input_done);
  free(s->out_slots);
  free(s->out_active);
  free(s->sent_wm);
  sl_buffer_free(in);
  sl_buffer_free(&s->tmp);
  if (q->lookup.join)
    sl_buffer_free(&s->joined);
  if (q->jit.k_join)
    sl_buffer_free(&s->keys);
  free(s->joined_origin);
  if (q->source.wm_prog)
    sl_buffer_free(&s->wm_values);
  if (q->late.rowtime_prog || q->late.time_prog)
    sl_buffer_free(&s->rowtimes);
  if (q->late.output) {
    sl_buffer_free(&s->late_rows);
    free(s->late_sel);
    free(s->late_record);
    if (q->source.wm_prog)
      sl_buffer_free(&s->wm_scratch);
  }
  sl_expr_ctx_free(s->ctx);
}

void *sl_worker_main(void *arg) {
  worker *w = arg;
  exec_query *q = w->q;
  const sl_plan *plan = q->plan;
  worker_state s;
  sl_buffer in;
  uint32_t max_rows;
  set_up_state(&s, w, &in, &max_rows);
  sl_source *src = NULL;
  sl_source_spec spec = {plan->inputs[0].table,   q->source.stream_layout,
                         q->source.stream_leaf,   q->source.base + w->index,
                         q->source.total,         plan->inputs[0].nfilters,
                         plan->inputs[0].filters, false,
                         q->source.stream_as_code};
  double opening = sl_clock_seconds();
  int rc = plan->inputs[0].connector->open(&spec, &src, &w->err);
  w->open_seconds = sl_clock_seconds() - opening;
  sl_exec_wait_ready(w->shared, q->shared);
  s.epoch_began = sl_clock_seconds();
  if (rc == SL_OK)
    rc = read_source(&s, src, &in, max_rows);
  if (q->exchange.channels)
    rc = finish_exchange(&s, rc);
  if (src)
    close_source(w, src);
  free_state(&s, &in);
  pthread_mutex_lock(&w->lock);
  w->rc = rc;
  w->done = true;
  pthread_mutex_unlock(&w->lock);
  sl_exec_signal(w);
  return NULL;
}
